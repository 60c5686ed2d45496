/* onnx_read.c — an ONNX model file into its protobuf-c message, as
 * untrusted input: the file's size is capped, the nesting of the messages
 * that can nest (graphs in attributes, types in types) is measured on the
 * wire before unpacking (protobuf-c recurses without a limit), every
 * length is checked against the bytes left, and unpacking allocates from a
 * budget proportional to the file. */
#include "onnx-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- nesting, measured on the wire ------------------------------------------- */

/* The messages that hold messages which can lead back to themselves. */
typedef enum kind {
  K_NONE, K_MODEL, K_GRAPH, K_NODE, K_ATTR, K_VALUE_INFO, K_TYPE, K_TYPE_ELEM,
  K_TRAINING, K_FUNCTION,
} kind;

/* Which field of a message of kind k holds a message of which kind. */
static const struct {
  kind parent;
  uint32_t field;
  kind child;
} NESTING[] = {
  { K_MODEL, 7, K_GRAPH },       { K_MODEL, 20, K_TRAINING },   { K_MODEL, 25, K_FUNCTION },
  { K_TRAINING, 1, K_GRAPH },    { K_TRAINING, 2, K_GRAPH },
  { K_GRAPH, 1, K_NODE },        { K_GRAPH, 11, K_VALUE_INFO }, { K_GRAPH, 12, K_VALUE_INFO },
  { K_GRAPH, 13, K_VALUE_INFO },
  { K_NODE, 5, K_ATTR },
  { K_ATTR, 6, K_GRAPH },        { K_ATTR, 11, K_GRAPH },       { K_ATTR, 14, K_TYPE },
  { K_ATTR, 15, K_TYPE },
  { K_VALUE_INFO, 2, K_TYPE },
  { K_TYPE, 4, K_TYPE_ELEM },    { K_TYPE, 5, K_TYPE_ELEM },    { K_TYPE, 9, K_TYPE_ELEM },
  { K_TYPE_ELEM, 1, K_TYPE },    { K_TYPE_ELEM, 2, K_TYPE },   /* sequence/optional elem, map value */
  { K_FUNCTION, 7, K_NODE },     { K_FUNCTION, 11, K_ATTR },
};

/* Messages within messages: a graph in a node's attribute is three levels
 * below its parent graph. */
#define MAX_MESSAGE_DEPTH (3 * TS_ONNX_MAX_DEPTH + 8)

typedef struct wire {
  const uint8_t *p, *end;
  const char *path;
  const uint8_t *start;
} wire;

static bool wire_fail(const wire *w, const char *what)
{
  ts_error_set(TS_ERR_FORMAT, (ts_loc){ 0 }, NULL, "%s: not an ONNX model: %s at byte %td", w->path,
               what, w->p - w->start);
  return false;
}

static bool read_varint(wire *w, uint64_t *v)
{
  *v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (w->p >= w->end)
      return wire_fail(w, "truncated varint");
    uint8_t b = *w->p++;
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return true;
  }
  return wire_fail(w, "varint longer than 10 bytes");
}

static kind child_kind(kind parent, uint32_t field)
{
  for (size_t i = 0; i < G_N_ELEMENTS(NESTING); i++)
    if (NESTING[i].parent == parent && NESTING[i].field == field)
      return NESTING[i].child;
  return K_NONE;
}

/* Walks one message of kind k in [w->p, end) (the caller steps past it):
 * every field's length checked, nested messages of the kinds above walked
 * at depth + 1. */
static bool walk(wire *w, const uint8_t *end, kind k, int depth)
{
  if (depth > MAX_MESSAGE_DEPTH)
    return wire_fail(w, "messages nested deeper than the importer's limit "
                        "(subgraphs or types nest at most " G_STRINGIFY(TS_ONNX_MAX_DEPTH) " deep)");
  wire in = *w;
  in.end = end;
  while (in.p < end) {
    uint64_t key;
    if (!read_varint(&in, &key))
      return false;
    uint32_t field = (uint32_t)(key >> 3);
    switch (key & 7) {
    case 0: {
      uint64_t v;
      if (!read_varint(&in, &v))
        return false;
      break;
    }
    case 1:
      if (end - in.p < 8)
        return wire_fail(&in, "truncated 64-bit field");
      in.p += 8;
      break;
    case 5:
      if (end - in.p < 4)
        return wire_fail(&in, "truncated 32-bit field");
      in.p += 4;
      break;
    case 2: {
      uint64_t len;
      if (!read_varint(&in, &len))
        return false;
      if (len > (uint64_t)(end - in.p))
        return wire_fail(&in, "a field's length runs past the end of its message (truncated file?)");
      kind child = child_kind(k, field);
      if (child != K_NONE && !walk(&in, in.p + len, child, depth + 1))
        return false;
      in.p += len;
      break;
    }
    default:
      return wire_fail(&in, "unknown wire type");
    }
  }
  return true;
}

/* ---- a bounded allocator for protobuf-c ---------------------------------------- */

static void *budget_alloc(void *data, size_t size)
{
  onnx_budget *b = data;
  if (size > b->left) {
    b->exceeded = true;
    return NULL;
  }
  void *p = malloc(size);
  if (p)
    b->left -= size;
  return p;
}

static void budget_free(void *data, void *p)
{
  free(p);
}

/* ---- the file ------------------------------------------------------------------ */

bool onnx_is_default_domain(const char *domain)
{
  return !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
}

static int64_t opset_of(const Onnx__ModelProto *m, const char *domain)
{
  bool want_default = onnx_is_default_domain(domain);
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    if (o && (want_default ? onnx_is_default_domain(o->domain) : o->domain && strcmp(o->domain, domain) == 0))
      return o->has_version ? o->version : 0;
  }
  return 0;
}

int64_t onnx_domain_opset(const onnx_file *f, const char *domain)
{
  return onnx_is_default_domain(domain) ? f->opset : opset_of(f->model, domain);
}

uint8_t *onnx_read_bytes(const char *path, size_t *size_out)
{
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    ts_error_set(TS_ERR_IO, (ts_loc){ 0 }, NULL, "%s: cannot open: %s", path, g_strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(fp);
    ts_error_set(TS_ERR_IO, (ts_loc){ 0 }, NULL, "%s: not a regular file", path);
    return NULL;
  }
  if (st.st_size > TS_ONNX_MAX_FILE_BYTES) {
    fclose(fp);
    ts_error_set(TS_ERR_FORMAT, (ts_loc){ 0 }, NULL,
                 "%s: %lld bytes is over the importer's limit of %lld (large weights belong in "
                 "external data files)", path, (long long)st.st_size, (long long)TS_ONNX_MAX_FILE_BYTES);
    return NULL;
  }
  size_t size = (size_t)st.st_size;
  uint8_t *bytes = g_try_malloc(size ? size : 1);
  if (!bytes || fread(bytes, 1, size, fp) != size) {
    ts_error_set(bytes ? TS_ERR_IO : TS_ERR_NO_MEMORY, (ts_loc){ 0 }, NULL,
                 "%s: cannot read %zu bytes", path, size);
    g_free(bytes);
    fclose(fp);
    return NULL;
  }
  fclose(fp);
  *size_out = size;
  return bytes;
}

ProtobufCAllocator onnx_allocator(onnx_budget *b, size_t file_size)
{
  /* protobuf-c's structs are larger than their encodings (an empty node is
   * two bytes in the file, a hundred in memory): a budget of a multiple of
   * the file's size leaves room for real models and none for a bomb. */
  b->left = 64u << 20;
  b->exceeded = false;
  if (file_size < (SIZE_MAX - b->left) / 32)
    b->left += 32 * file_size;
  return (ProtobufCAllocator){ budget_alloc, budget_free, b };
}

bool onnx_file_read(const char *path, onnx_file *out)
{
  memset(out, 0, sizeof *out);
  size_t size;
  uint8_t *bytes = onnx_read_bytes(path, &size);
  if (!bytes)
    return false;

  wire w = { bytes, bytes + size, path, bytes };
  if (!walk(&w, w.end, K_MODEL, 0)) {
    g_free(bytes);
    return false;
  }
  onnx_budget b;
  ProtobufCAllocator alloc = onnx_allocator(&b, size);
  Onnx__ModelProto *m = onnx__model_proto__unpack(&alloc, size, bytes);
  g_free(bytes);
  if (!m) {
    ts_error_set(b.exceeded ? TS_ERR_NO_MEMORY : TS_ERR_FORMAT, (ts_loc){ 0 }, NULL,
                 b.exceeded ? "%s: unpacking needs more memory than a model of its size may"
                            : "%s: not an ONNX model (protobuf-c cannot parse it)",
                 path);
    return false;
  }
  out->model = m;
  out->path = g_strdup(path);
  out->dir = g_path_get_dirname(path);
  out->opset = opset_of(m, "");
  if (!m->graph) {
    ts_error_set(TS_ERR_FORMAT, (ts_loc){ 0 }, NULL, "%s: the model has no graph", path);
    onnx_file_clear(out);
    return false;
  }
  return true;
}

void onnx_file_clear(onnx_file *f)
{
  if (f->model) {
    onnx__model_proto__free_unpacked(f->model, NULL); /* what budget_alloc gave is malloc's */
  }
  g_free(f->path);
  g_free(f->dir);
  memset(f, 0, sizeof *f);
}
