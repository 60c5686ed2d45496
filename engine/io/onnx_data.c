/* onnx_data.c — the values of ONNX's backend test data (input_N.pb,
 * output_N.pb) as the model declares them: a TensorProto for a tensor, a
 * SequenceProto for a sequence (a TensorList), an OptionalProto for an
 * optional.  The last two come from onnx-data.proto, which Debian does not
 * install: their few fields are read from the wire here, every length
 * checked against the bytes left, the tensors in them unpacked by
 * protobuf-c on a budget as ts_onnx_tensor_load does. */
#include "onnx-private.h"

#include <inttypes.h>
#include <string.h>

/* SequenceProto and OptionalProto fields (onnx-data.proto) and elem_type values. */
enum { F_ELEM_TYPE = 2, F_TENSOR = 3, F_SEQUENCE = 5 };
enum { ELEM_UNDEFINED = 0, ELEM_TENSOR = 1, ELEM_SEQUENCE = 3 };

typedef struct reader {
  const uint8_t *p, *end, *start;
  const char *path;
} reader;

static bool read_fail(const reader *r, const char *what)
{
  ts_error_set(TS_ERR_FORMAT, (ts_loc){ 0 }, NULL, "%s: %s at byte %td", r->path, what, r->p - r->start);
  return false;
}

static bool read_varint(reader *r, uint64_t *v)
{
  *v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (r->p >= r->end)
      return read_fail(r, "truncated varint");
    uint8_t b = *r->p++;
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return true;
  }
  return read_fail(r, "varint longer than 10 bytes");
}

/* The next field: its number, and its value (a varint in *v, or the
 * bytes [*data, *data + *len) of a length-delimited one). */
static bool next_field(reader *r, uint32_t *field, uint64_t *v, const uint8_t **data, size_t *len)
{
  uint64_t key;
  if (!read_varint(r, &key))
    return false;
  *field = (uint32_t)(key >> 3);
  *data = NULL;
  *len = 0;
  switch (key & 7) {
  case 0: return read_varint(r, v);
  case 1:
  case 5: {
    size_t n = (key & 7) == 1 ? 8 : 4;
    if ((size_t)(r->end - r->p) < n)
      return read_fail(r, "truncated fixed-size field");
    r->p += n;
    return true;
  }
  case 2:
    if (!read_varint(r, v))
      return false;
    if (*v > (uint64_t)(r->end - r->p))
      return read_fail(r, "a field's length runs past the end of its message (truncated file?)");
    *data = r->p;
    *len = (size_t)*v;
    r->p += *len;
    return true;
  default: return read_fail(r, "unknown wire type");
  }
}

static ts_tensor *tensor_from(const char *path, const uint8_t *data, size_t len, const char *what)
{
  onnx_budget b;
  ProtobufCAllocator alloc = onnx_allocator(&b, len);
  Onnx__TensorProto *t = onnx__tensor_proto__unpack(&alloc, len, data);
  if (!t) {
    ts_error_set(b.exceeded ? TS_ERR_NO_MEMORY : TS_ERR_FORMAT, (ts_loc){ 0 }, NULL,
                 "%s: %s is not an ONNX TensorProto", path, what);
    return NULL;
  }
  onnx_file f = { .path = (char *)path };
  f.dir = g_path_get_dirname(path);
  ts_tensor *out = onnx_tensor_decode(&f, t, what);
  g_free(f.dir);
  onnx__tensor_proto__free_unpacked(t, NULL);
  return out;
}

/* A SequenceProto of tensors as a TensorList; `type` (the sequence's) gives
 * the dtype of an empty one.  NULL + error. */
static ts_tensor *sequence_from(reader r, const Onnx__TypeProto *type)
{
  ts_list_elem elem = { 0 };
  onnx_elem_hint(type, &elem);
  GPtrArray *items = g_ptr_array_new();
  bool ok = true;
  while (ok && r.p < r.end) {
    uint32_t field;
    uint64_t v;
    const uint8_t *data;
    size_t len;
    if (!(ok = next_field(&r, &field, &v, &data, &len)))
      break;
    if (field == F_ELEM_TYPE && !data && v != ELEM_TENSOR && v != ELEM_UNDEFINED) {
      ts_error_set(TS_ERR_UNIMPLEMENTED, (ts_loc){ 0 }, NULL,
                   "%s: a sequence of elem_type %" PRIu64 " (only sequences of tensors are supported)", r.path, v);
      ok = false;
    } else if (field == F_TENSOR && data) {
      char *what = g_strdup_printf("element %u", items->len);
      ts_tensor *t = tensor_from(r.path, data, len, what);
      g_free(what);
      if ((ok = t != NULL))
        g_ptr_array_add(items, t);
    } else if (field > F_TENSOR && field <= 7 && data) {
      ts_error_set(TS_ERR_UNIMPLEMENTED, (ts_loc){ 0 }, NULL,
                   "%s: a sequence of sparse tensors, sequences, maps or optionals is not supported", r.path);
      ok = false;
    }
  }
  ts_dtype dtype = items->len ? ts_tensor_dtype(items->pdata[0]) : elem.dtype;
  if (ok && !items->len && !elem.has_dtype) {
    ts_error_set(TS_ERR_FORMAT, (ts_loc){ 0 }, NULL, "%s: an empty sequence of no known dtype", r.path);
    ok = false;
  }
  ts_tensor *seq = ok ? ts_tensor_array_at((ts_loc){ r.path, NULL, 0 }, dtype, ts_scalar_i64(items->len)) : NULL;
  for (guint i = 0; i < items->len && seq; i++)
    seq = ts_tensor_array_write_at((ts_loc){ r.path, NULL, 0 }, seq, ts_scalar_i64(i), items->pdata[i]);
  g_ptr_array_free(items, TRUE);
  return seq;
}

/* An OptionalProto of a tensor or a sequence (of `type`, the optional's). */
static ts_tensor *optional_from(reader r, const Onnx__TypeProto *type)
{
  const Onnx__TypeProto *elem = type->optional_type ? type->optional_type->elem_type : NULL;
  ts_tensor *value = NULL;
  while (r.p < r.end) {
    uint32_t field;
    uint64_t v;
    const uint8_t *data;
    size_t len;
    if (!next_field(&r, &field, &v, &data, &len))
      return NULL;
    if (field == F_TENSOR && data)
      value = tensor_from(r.path, data, len, "the optional's value");
    else if (field == F_SEQUENCE && data)
      value = sequence_from((reader){ data, data + len, r.start, r.path }, elem);
    else if (field > F_TENSOR && field <= 7 && data) {
      ts_error_set(TS_ERR_UNIMPLEMENTED, (ts_loc){ 0 }, NULL,
                   "%s: an optional of a sparse tensor, a map or an optional is not supported", r.path);
      return NULL;
    } else
      continue;
    if (!value)
      return NULL;
  }
  ts_loc loc = { r.path, NULL, 0 };
  return value ? ts_optional_from_value_at(loc, value) : ts_optional_none_at(loc);
}

ts_tensor *ts_onnx_model_value_load(const ts_onnx_model *m, bool output, int i, const char *path)
{
  int n = output ? ts_onnx_model_n_outputs(m) : ts_onnx_model_n_inputs(m);
  if (i < 0 || i >= n) {
    ts_error_set(TS_ERR_OUT_OF_RANGE, (ts_loc){ 0 }, NULL, "%s: the model has %d %s, not %d", path, n,
                 output ? "outputs" : "inputs", i + 1);
    return NULL;
  }
  const Onnx__TypeProto *type = onnx_model_value_type(m, output, i);
  int kind = type ? (int)type->value_case : 0;
  if (kind != ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && kind != ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE)
    return ts_onnx_tensor_load(path);
  size_t size;
  uint8_t *bytes = onnx_read_bytes(path, &size);
  if (!bytes)
    return NULL;
  reader r = { bytes, bytes + size, bytes, path };
  ts_tensor *value = kind == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? sequence_from(r, type) : optional_from(r, type);
  g_free(bytes);
  return value;
}
