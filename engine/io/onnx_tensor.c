/* onnx_tensor.c — ONNX TensorProtos as engine tensors: the dtype mapped,
 * every dim and the element count checked for overflow, the data (raw
 * bytes, a typed field, or an external file in the model's folder) checked
 * against that count before anything is allocated. */
#include "onnx-private.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ONNX raw data is little-endian: the importer reads it in place"
#endif

static const struct {
  int32_t onnx;
  ts_dtype dtype;
  const char *name;
} DTYPES[] = {
  { 1, TS_F32, "float" },    { 2, TS_U8, "uint8" },    { 3, TS_I8, "int8" },
  { 4, TS_U16, "uint16" },   { 5, TS_I16, "int16" },   { 6, TS_I32, "int32" },
  { 7, TS_I64, "int64" },    { 8, TS_STRING, "string" }, { 9, TS_BOOL, "bool" },
  { 10, TS_F16, "float16" }, { 11, TS_F64, "double" }, { 12, TS_U32, "uint32" },
  { 13, TS_U64, "uint64" },  { 14, -1, "complex64" },  { 15, -1, "complex128" },
  { 16, TS_BF16, "bfloat16" },
};

bool onnx_dtype(int32_t data_type, ts_dtype *out)
{
  for (size_t i = 0; i < G_N_ELEMENTS(DTYPES); i++)
    if (DTYPES[i].onnx == data_type && (int)DTYPES[i].dtype >= 0) {
      *out = DTYPES[i].dtype;
      return true;
    }
  return false;
}

int32_t onnx_data_type(ts_dtype dtype)
{
  if (dtype == TS_STRING)
    return 0; /* the exporter writes raw bytes: strings have none */
  for (size_t i = 0; i < G_N_ELEMENTS(DTYPES); i++)
    if ((int)DTYPES[i].dtype == (int)dtype)
      return DTYPES[i].onnx;
  return 0;
}

const char *onnx_dtype_name(int32_t data_type)
{
  for (size_t i = 0; i < G_N_ELEMENTS(DTYPES); i++)
    if (DTYPES[i].onnx == data_type)
      return DTYPES[i].name;
  return "undefined";
}

/* Every message starts "PATH: WHAT: ". */
#define tensor_fail(code, ...) ts_error_set((code), (ts_loc){ 0 }, NULL, __VA_ARGS__)

/* The external file's bytes [offset, offset + n): location must name a
 * file inside the model's folder (no absolute path, no "..", no link out). */
static void *read_external(const onnx_file *f, const Onnx__TensorProto *t, const char *what,
                           size_t n)
{
  const char *location = NULL;
  int64_t offset = 0, length = -1;
  for (size_t i = 0; i < t->n_external_data; i++) {
    const Onnx__StringStringEntryProto *e = t->external_data[i];
    if (!e || !e->key || !e->value)
      continue;
    char *end;
    if (strcmp(e->key, "location") == 0)
      location = e->value;
    else if (strcmp(e->key, "offset") == 0 || strcmp(e->key, "length") == 0) {
      errno = 0;
      long long v = strtoll(e->value, &end, 10);
      if (errno || *end || end == e->value || v < 0) {
        tensor_fail(TS_ERR_FORMAT, "%s: %s: external data %s '%s' is not a byte count", f->path,
                    what, e->key, e->value);
        return NULL;
      }
      *(strcmp(e->key, "offset") == 0 ? &offset : &length) = v;
    }
  }
  if (!location || !*location) {
    tensor_fail(TS_ERR_FORMAT, "%s: %s: external data without a location", f->path, what);
    return NULL;
  }
  char **parts = g_strsplit_set(location, "/\\", -1);
  bool escapes = g_path_is_absolute(location);
  for (int i = 0; parts[i] && !escapes; i++)
    escapes = strcmp(parts[i], "..") == 0;
  g_strfreev(parts);
  char *full = g_build_filename(f->dir, location, NULL);
  char *real_dir = realpath(f->dir, NULL), *real = escapes ? NULL : realpath(full, NULL);
  if (!escapes && real && real_dir) {
    size_t nd = strlen(real_dir);
    escapes = strncmp(real, real_dir, nd) != 0 || (real[nd] != '/' && strcmp(real_dir, "/") != 0);
  }
  void *data = NULL;
  if (escapes) {
    tensor_fail(TS_ERR_FORMAT, "%s: %s: external data location '%s' leaves the model's folder",
                f->path, what, location);
    goto out;
  }
  if (length >= 0 && (uint64_t)length != n) {
    tensor_fail(TS_ERR_FORMAT, "%s: %s: external data length %" PRId64 " but its shape needs %zu bytes",
                f->path, what, length, n);
    goto out;
  }
  FILE *fp = real ? fopen(real, "rb") : NULL;
  struct stat st;
  if (!fp || fstat(fileno(fp), &st) != 0) {
    tensor_fail(TS_ERR_IO, "%s: %s: cannot open external data '%s': %s", f->path, what, location,
                g_strerror(errno));
    if (fp)
      fclose(fp);
    goto out;
  }
  if (offset > st.st_size || (uint64_t)(st.st_size - offset) < n) {
    tensor_fail(TS_ERR_FORMAT, "%s: %s: external data '%s' has %lld bytes, %zu wanted at offset %" PRId64,
                f->path, what, location, (long long)st.st_size, n, offset);
    fclose(fp);
    goto out;
  }
  data = g_try_malloc(n ? n : 1);
  if (!data || fseeko(fp, offset, SEEK_SET) != 0 || fread(data, 1, n, fp) != n) {
    tensor_fail(data ? TS_ERR_IO : TS_ERR_NO_MEMORY, "%s: %s: cannot read external data '%s'",
                f->path, what, location);
    g_free(data);
    data = NULL;
  }
  fclose(fp);
out:
  free(real);
  free(real_dir);
  g_free(full);
  return data;
}

/* Copies n elements of a typed field into data (converting to dtype).
 * As onnx.proto says: int32_data holds the integers up to 32 bits signed,
 * bool, and float16 and bfloat16 as their bits; uint64_data uint32 and
 * uint64. */
static bool typed_field(const Onnx__TensorProto *t, ts_dtype dtype, void *data, int64_t n,
                        const onnx_file *f, const char *what)
{
  size_t have = 0;
  switch (dtype) {
  case TS_F32: have = t->n_float_data; break;
  case TS_F64: have = t->n_double_data; break;
  case TS_I64: have = t->n_int64_data; break;
  case TS_U32:
  case TS_U64: have = t->n_uint64_data; break;
  default: have = t->n_int32_data; break;
  }
  if ((uint64_t)n != have) {
    tensor_fail(TS_ERR_FORMAT, "%s: %s: its shape has %" PRId64 " elements but its data %zu",
                f->path, what, n, have);
    return false;
  }
  for (int64_t i = 0; i < n; i++) {
    switch (dtype) {
    case TS_F32: ((float *)data)[i] = t->float_data[i]; break;
    case TS_F64: ((double *)data)[i] = t->double_data[i]; break;
    case TS_I64: ((int64_t *)data)[i] = t->int64_data[i]; break;
    case TS_I32: ((int32_t *)data)[i] = t->int32_data[i]; break;
    case TS_U8: ((uint8_t *)data)[i] = (uint8_t)t->int32_data[i]; break;
    case TS_BOOL: ((bool *)data)[i] = t->int32_data[i] != 0; break;
    case TS_I8: ((int8_t *)data)[i] = (int8_t)t->int32_data[i]; break;
    case TS_I16: ((int16_t *)data)[i] = (int16_t)t->int32_data[i]; break;
    case TS_U16: ((uint16_t *)data)[i] = (uint16_t)t->int32_data[i]; break;
    case TS_F16: ((ts_f16 *)data)[i] = (ts_f16){ (uint16_t)t->int32_data[i] }; break;
    case TS_BF16: ((ts_bf16 *)data)[i] = (ts_bf16){ (uint16_t)t->int32_data[i] }; break;
    case TS_U32: ((uint32_t *)data)[i] = (uint32_t)t->uint64_data[i]; break;
    case TS_U64: ((uint64_t *)data)[i] = t->uint64_data[i]; break;
    default: return false;
    }
  }
  return true;
}

/* Strings come only in string_data (never raw or external): one entry per
 * element, each a C string (a NUL byte inside one is refused). */
static ts_tensor *string_field(const Onnx__TensorProto *t, ts_shape shape, int64_t n, const onnx_file *f,
                               const char *what)
{
  if (t->has_raw_data || (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)) {
    tensor_fail(TS_ERR_FORMAT, "%s: %s: strings must be in string_data, not raw or external data", f->path, what);
    return NULL;
  }
  if ((uint64_t)n != t->n_string_data) {
    tensor_fail(TS_ERR_FORMAT, "%s: %s: its shape has %" PRId64 " elements but its data %zu", f->path, what, n,
                t->n_string_data);
    return NULL;
  }
  char **strs = g_try_new0(char *, n + 1);
  bool ok = strs != NULL;
  if (!ok)
    tensor_fail(TS_ERR_NO_MEMORY, "%s: %s: cannot allocate %" PRId64 " strings", f->path, what, n);
  for (int64_t i = 0; i < n && ok; i++) {
    const ProtobufCBinaryData *b = &t->string_data[i];
    if ((ok = !b->len || !memchr(b->data, 0, b->len)))
      strs[i] = g_strndup((const char *)b->data, b->len);
    else
      tensor_fail(TS_ERR_FORMAT, "%s: %s: string element %" PRId64 " holds a NUL byte", f->path, what, i);
  }
  ts_tensor *out = ok ? ts_constant(TS_STRING, shape, (const void *)strs) : NULL;
  g_strfreev(strs);
  return out;
}

ts_tensor *onnx_tensor_decode(const onnx_file *f, const Onnx__TensorProto *t, const char *what)
{
  ts_dtype dtype;
  if (!t->has_data_type || !onnx_dtype(t->data_type, &dtype)) {
    tensor_fail(TS_ERR_UNIMPLEMENTED, "%s: %s: dtype %s is not one the engine has", f->path, what,
                onnx_dtype_name(t->has_data_type ? t->data_type : 0));
    return NULL;
  }
  if (t->n_dims > TS_MAX_RANK) {
    tensor_fail(TS_ERR_UNIMPLEMENTED, "%s: %s: rank %zu is over the engine's %d", f->path, what,
                t->n_dims, TS_MAX_RANK);
    return NULL;
  }
  ts_shape shape = { .rank = (int)t->n_dims };
  for (size_t i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0) {
      tensor_fail(TS_ERR_FORMAT, "%s: %s: dim %zu is negative (%" PRId64 ")", f->path, what, i,
                  t->dims[i]);
      return NULL;
    }
    shape.dim[i] = t->dims[i];
  }
  int64_t n = ts_shape_size(shape);
  size_t esize = ts_dtype_size(dtype);
  if (n < 0 || (uint64_t)n > (uint64_t)TS_ONNX_MAX_FILE_BYTES / esize) {
    tensor_fail(TS_ERR_FORMAT, "%s: %s: its shape's element count overflows or exceeds the limit",
                f->path, what);
    return NULL;
  }
  size_t bytes = (size_t)n * esize;
  if (dtype == TS_STRING)
    return string_field(t, shape, n, f, what);
  if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    void *data = read_external(f, t, what, bytes);
    if (!data)
      return NULL;
    ts_tensor *out = ts_constant(dtype, shape, data);
    g_free(data);
    return out;
  }
  if (t->has_raw_data) {
    if (t->raw_data.len != bytes) {
      tensor_fail(TS_ERR_FORMAT, "%s: %s: its shape needs %zu bytes of raw data, it has %zu",
                  f->path, what, bytes, t->raw_data.len);
      return NULL;
    }
    if (dtype == TS_BOOL)
      for (size_t i = 0; i < bytes; i++)
        if (t->raw_data.data[i] > 1) {
          tensor_fail(TS_ERR_FORMAT, "%s: %s: bool element %zu is %u, not 0 or 1", f->path, what,
                      i, t->raw_data.data[i]);
          return NULL;
        }
    return ts_constant(dtype, shape, t->raw_data.data);
  }
  void *data = g_try_malloc(bytes ? bytes : 1);
  if (!data) {
    tensor_fail(TS_ERR_NO_MEMORY, "%s: %s: cannot allocate %zu bytes", f->path, what, bytes);
    return NULL;
  }
  ts_tensor *out = typed_field(t, dtype, data, n, f, what) ? ts_constant(dtype, shape, data) : NULL;
  g_free(data);
  return out;
}

ts_tensor *ts_onnx_tensor_load(const char *path)
{
  size_t size;
  uint8_t *bytes = onnx_read_bytes(path, &size);
  if (!bytes)
    return NULL;
  onnx_budget b;
  ProtobufCAllocator alloc = onnx_allocator(&b, size);
  Onnx__TensorProto *t = onnx__tensor_proto__unpack(&alloc, size, bytes);
  g_free(bytes);
  if (!t) {
    ts_error_set(b.exceeded ? TS_ERR_NO_MEMORY : TS_ERR_FORMAT, (ts_loc){ 0 }, NULL,
                 "%s: not an ONNX TensorProto", path);
    return NULL;
  }
  onnx_file f = { .path = (char *)path };
  f.dir = g_path_get_dirname(path);
  ts_tensor *out = onnx_tensor_decode(&f, t, t->name && *t->name ? t->name : "tensor");
  g_free(f.dir);
  onnx__tensor_proto__free_unpacked(t, NULL);
  return out;
}
