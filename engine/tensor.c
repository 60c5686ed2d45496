/* tensor.c — tensor storage, reference counting and host constructors. */
#include "engine-private.h"

#include <malloc.h>
#include <stdlib.h>

#define TS_DATA_ALIGN 64
/* Refuse single tensors above 64 GiB before asking malloc. */
#define TS_MAX_TENSOR_BYTES ((int64_t)1 << 36)

/* Tensors of a few MB come and go on every call.  By default glibc maps and
 * unmaps each one, and every first touch of a fresh page faults (about 10 µs
 * a page on our VMs: milliseconds per large op).  Keeping freed memory in the
 * heap up to glibc's largest threshold makes repeated runs steady. */
__attribute__((constructor)) static void tune_malloc(void)
{
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

static ts_tensor *header_new(ts_dtype dtype, ts_shape shape, int64_t size, size_t extra)
{
  ts_tensor *t = malloc(sizeof *t + extra);
  if (!t)
    return NULL;
  *t = (ts_tensor){ .refcount = 1, .dtype = dtype, .shape = shape, .size = size };
  return t;
}

static bool shape_check(ts_loc loc, ts_dtype dtype, ts_shape shape, int64_t *size)
{
  char buf[TS_INFO_STR];
  if ((unsigned)dtype >= TS_DTYPE_COUNT) {
    ts_error_set(TS_ERR_DTYPE, loc, NULL, "invalid dtype %d", (int)dtype);
    return false;
  }
  if (shape.rank < 0 || shape.rank > TS_MAX_RANK) {
    ts_error_set(TS_ERR_SHAPE, loc, NULL, "rank %d is outside [0, %d]", shape.rank, TS_MAX_RANK);
    return false;
  }
  for (int i = 0; i < shape.rank; i++) {
    if (shape.dim[i] < 0) {
      ts_error_set(TS_ERR_SHAPE, loc, NULL, "negative or unknown dimension in %s",
                   ts__info_str(buf, dtype, shape));
      return false;
    }
  }
  int64_t n = ts_shape_size(shape);
  int64_t bytes;
  if (n < 0 || __builtin_mul_overflow(n, (int64_t)ts_dtype_size(dtype), &bytes) ||
      bytes > TS_MAX_TENSOR_BYTES) {
    ts_error_set(TS_ERR_NO_MEMORY, loc, NULL, "%s is too large to allocate",
                 ts__info_str(buf, dtype, shape));
    return false;
  }
  *size = n;
  return true;
}

ts_tensor *ts__tensor_alloc(ts_loc loc, ts_dtype dtype, ts_shape shape)
{
  int64_t size;
  if (!shape_check(loc, dtype, shape, &size))
    return NULL;
  size_t bytes = (size_t)size * ts_dtype_size(dtype);
  ts_tensor *t = header_new(dtype, shape, size, TS_DATA_ALIGN + bytes);
  if (!t) {
    char buf[TS_INFO_STR];
    ts_error_set(TS_ERR_NO_MEMORY, loc, NULL, "out of memory allocating %s",
                 ts__info_str(buf, dtype, shape));
    return NULL;
  }
  uintptr_t p = (uintptr_t)(t + 1);
  t->data = (void *)((p + TS_DATA_ALIGN - 1) & ~(uintptr_t)(TS_DATA_ALIGN - 1));
  if (dtype == TS_STRING || dtype == TS_VARIANT)
    memset(t->data, 0, bytes); /* owned pointers: NULL until a kernel sets them */
  ts__scope_adopt(t);
  return t;
}

ts_tensor *ts__tensor_view(ts_tensor *x, ts_shape shape)
{
  if (ts_shape_size(shape) != x->size) {
    char xs[TS_INFO_STR], ys[TS_INFO_STR];
    ts_error_set(TS_ERR_SHAPE, (ts_loc){ 0 }, NULL, "cannot view %s as %s: sizes differ",
                 ts__info_str(xs, x->dtype, x->shape), ts__info_str(ys, x->dtype, shape));
    return NULL;
  }
  ts_tensor *t = header_new(x->dtype, shape, x->size, 0);
  if (!t) {
    ts_error_set(TS_ERR_NO_MEMORY, (ts_loc){ 0 }, NULL, "out of memory");
    return NULL;
  }
  ts_tensor *base = x->base ? x->base : x;
  t->data = x->data;
  t->base = ts_tensor_ref(base);
  ts__scope_adopt(t);
  return t;
}

ts_tensor *ts_tensor_ref(ts_tensor *t)
{
  if (t)
    __atomic_add_fetch(&t->refcount, 1, __ATOMIC_RELAXED);
  return t;
}

ts_variant *ts__variant_ref(ts_variant *v)
{
  if (v)
    __atomic_add_fetch(&v->refcount, 1, __ATOMIC_RELAXED);
  return v;
}

void ts__variant_unref(ts_variant *v)
{
  if (v && __atomic_sub_fetch(&v->refcount, 1, __ATOMIC_ACQ_REL) == 0)
    v->destroy(v);
}

/* Strings and variants own what their elements point to. */
static void release_elements(ts_tensor *t)
{
  if (t->base || !t->data)
    return;
  if (t->dtype == TS_STRING)
    for (int64_t i = 0; i < t->size; i++)
      free(((char **)t->data)[i]);
  else if (t->dtype == TS_VARIANT)
    for (int64_t i = 0; i < t->size; i++)
      ts__variant_unref(((ts_variant **)t->data)[i]);
}

void ts_tensor_unref(ts_tensor *t)
{
  if (!t || __atomic_sub_fetch(&t->refcount, 1, __ATOMIC_ACQ_REL) != 0)
    return;
  release_elements(t);
  ts_tensor_unref(t->base);
  free(t->name);
  free(t);
}

ts_dtype ts_tensor_dtype(const ts_tensor *t)
{
  TS_CHECK_ARG(t != NULL, TS_DTYPE_COUNT);
  return t->dtype;
}

int ts_tensor_rank(const ts_tensor *t)
{
  TS_CHECK_ARG(t != NULL, -1);
  return t->shape.rank;
}

ts_shape ts_tensor_shape(const ts_tensor *t)
{
  TS_CHECK_ARG(t != NULL, (ts_shape){ .rank = -1 });
  return t->shape;
}

int64_t ts_tensor_dim(const ts_tensor *t, int axis)
{
  int a;
  TS_CHECK_ARG(t != NULL, -1);
  return ts__axis(axis, t->shape.rank, &a) ? t->shape.dim[a] : -1;
}

int64_t ts_tensor_size(const ts_tensor *t)
{
  TS_CHECK_ARG(t != NULL, -1);
  return t->size;
}

void *ts_tensor_data(const ts_tensor *t)
{
  TS_CHECK_ARG(t != NULL, NULL);
  return t->data;
}

double ts_tensor_get_f64(const ts_tensor *t, int64_t i)
{
  TS_CHECK_ARG(t && t->data && i >= 0 && i < t->size, 0);
  return ts__load_f64(t->dtype, t->data, i);
}

int64_t ts_tensor_get_i64(const ts_tensor *t, int64_t i)
{
  TS_CHECK_ARG(t && t->data && i >= 0 && i < t->size, 0);
  return ts__load_i64(t->dtype, t->data, i);
}

ts_tensor *ts_tensor_new(ts_dtype dtype, ts_shape shape)
{
  ts_tensor *t = ts__tensor_alloc((ts_loc){ 0 }, dtype, shape);
  if (t)
    memset(t->data, 0, (size_t)t->size * ts_dtype_size(dtype));
  if (t && dtype == TS_STRING)
    for (int64_t i = 0; i < t->size; i++)
      ((char **)t->data)[i] = strdup("");
  return t;
}

ts_tensor *ts_constant(ts_dtype dtype, ts_shape shape, const void *data)
{
  if (dtype == TS_VARIANT) {
    ts_error_set(TS_ERR_DTYPE, (ts_loc){ 0 }, NULL, "variant tensors are made by ops only");
    return NULL;
  }
  TS_CHECK_ARG(data || ts_shape_size(shape) <= 0, NULL);
  ts_tensor *t = ts__tensor_alloc((ts_loc){ 0 }, dtype, shape);
  if (!t || !t->size)
    return t;
  if (dtype == TS_STRING) {
    for (int64_t i = 0; i < t->size; i++) {
      const char *s = ((const char *const *)data)[i];
      ((char **)t->data)[i] = strdup(s ? s : "");
    }
  } else {
    memcpy(t->data, data, (size_t)t->size * ts_dtype_size(dtype));
  }
  return t;
}

ts_tensor *ts_scalar_string(const char *s)
{
  return ts_constant(TS_STRING, TS_SCALAR_SHAPE, &s);
}

ts_tensor *ts_variable_new(ts_tensor *initial, const char *name)
{
  if (!initial) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL, "variable '%s': no initial value",
                 name ? name : "Variable");
    return NULL;
  }
  if (!initial->data || initial->dtype == TS_STRING || initial->dtype == TS_VARIANT) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "variable '%s': the initial value must be a concrete numeric tensor",
                 name ? name : "Variable");
    return NULL;
  }
  ts_tensor *v = ts_constant(initial->dtype, initial->shape, initial->data);
  if (!v)
    return NULL;
  /* Out of the scope that ts_constant put it in: the caller owns it. */
  ts_tensor_ref(v);
  v->is_variable = true;
  v->name = strdup(name ? name : "Variable");
  return v;
}

#define SCALAR_CTOR(name, ctype, dtype)                                  \
  ts_tensor *ts_scalar_##name(ctype v)                                   \
  {                                                                      \
    return ts_constant(dtype, TS_SCALAR_SHAPE, &v);                      \
  }
SCALAR_CTOR(f32, float, TS_F32)
SCALAR_CTOR(f64, double, TS_F64)
SCALAR_CTOR(i32, int32_t, TS_I32)
SCALAR_CTOR(i64, int64_t, TS_I64)
SCALAR_CTOR(bool, bool, TS_BOOL)
