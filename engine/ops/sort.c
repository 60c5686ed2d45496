/* ops/sort.c — TopKV2, Sort and ArgSort: each row along an axis ordered
 * stably.
 *
 * Semantics follow TensorFlow: TopKV2 (tf.math.top_k) takes the k largest
 * along the last axis, sorted, with int32 indices; tf.sort and tf.argsort
 * order along any axis, ascending or descending, and argsort is stable.
 * Equal values keep their order (the lower index first), as TensorFlow's
 * CPU kernel puts them; -0.0 equals 0.0.  NaN: TensorFlow's kernel
 * compares with `<`, which orders no NaN (its place is left to std::sort);
 * here a NaN counts as larger than every number and equal to every NaN
 * (as ArgMax, and np.sort, take it): first in TopKV2 and a descending
 * sort, last in an ascending one. */
#include "engine-private.h"

#include <glib.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Each element's key: an unsigned number in the order wanted, so that one
 * sort of (key, index) pairs serves every dtype and direction. */
typedef struct sort_pair {
  uint64_t key;
  int64_t at;
} sort_pair;

#define SIGN_BIT ((uint64_t)1 << 63)

static uint64_t float_key(double v)
{
  if (isnan(v))
    return UINT64_MAX; /* above every number, one NaN like another */
  if (v == 0)
    v = 0; /* -0.0 equals 0.0 */
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b & SIGN_BIT ? ~b : b | SIGN_BIT;
}

/* keys[j] for the n elements of x from `at` on, `stride` apart */
typedef void (*keys_fn)(const void *x, int64_t at, int64_t n, int64_t stride, sort_pair *keys);
#define DEF_KEYS(name, T, KEY)                                                            \
  static void name(const void *xv, int64_t at, int64_t n, int64_t stride, sort_pair *keys) \
  {                                                                                       \
    const T *x = xv;                                                                      \
    for (int64_t j = 0; j < n; j++)                                                       \
      keys[j] = (sort_pair){ KEY(x[at + j * stride]), j };                                \
  }
#define KEY_U(v) ((uint64_t)(v))
#define KEY_I(v) ((uint64_t)(int64_t)(v) ^ SIGN_BIT)
#define KEY_F(v) float_key((double)(v))
#define KEY_F16(v) float_key(ts__f16_to_f32(v))
#define KEY_BF16(v) float_key(ts__bf16_to_f32(v))
DEF_KEYS(keys_f32, float, KEY_F)
DEF_KEYS(keys_f64, double, KEY_F)
DEF_KEYS(keys_i32, int32_t, KEY_I)
DEF_KEYS(keys_i64, int64_t, KEY_I)
DEF_KEYS(keys_u8, uint8_t, KEY_U)
DEF_KEYS(keys_i8, int8_t, KEY_I)
DEF_KEYS(keys_i16, int16_t, KEY_I)
DEF_KEYS(keys_u16, uint16_t, KEY_U)
DEF_KEYS(keys_u32, uint32_t, KEY_U)
DEF_KEYS(keys_u64, uint64_t, KEY_U)
DEF_KEYS(keys_f16, ts_f16, KEY_F16)
DEF_KEYS(keys_bf16, ts_bf16, KEY_BF16)
/* the dtypes TensorFlow sorts (its real number types): not bool */
static const keys_fn KEYS_FNS[TS_DTYPE_COUNT] = {
  [TS_F32] = keys_f32, [TS_F64] = keys_f64, [TS_I32] = keys_i32,
  [TS_I64] = keys_i64, [TS_U8] = keys_u8,   [TS_I8] = keys_i8,
  [TS_I16] = keys_i16, [TS_U16] = keys_u16, [TS_U32] = keys_u32,
  [TS_U64] = keys_u64, [TS_F16] = keys_f16, [TS_BF16] = keys_bf16,
};

/* by key, then by index: a stable order whatever the sort */
static int pair_cmp(const void *a, const void *b)
{
  const sort_pair *p = a, *q = b;
  if (p->key != q->key)
    return p->key < q->key ? -1 : 1;
  return (p->at > q->at) - (p->at < q->at);
}

/* x [outer, n, inner] ordered along n: the first k of each row into
 * values (may be NULL) and indices (int32, may be NULL), [outer, k, inner].
 * Descending flips the keys, not the pairs: equal keys keep index order. */
static bool sort_rows(ts_kernel_ctx *k, const ts_tensor *x, int axis, int64_t n_out, bool descending,
                      ts_tensor *values, ts_tensor *indices)
{
  int64_t outer = ts__dims_prod(x->shape, 0, axis), inner = ts__dims_prod(x->shape, axis + 1, x->shape.rank);
  int64_t n = x->shape.dim[axis];
  if (outer * inner * n_out == 0)
    return true;
  sort_pair *pairs = g_try_malloc_n((gsize)n, sizeof *pairs);
  if (!pairs)
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "out of memory sorting rows of %" PRId64, n);
  size_t es = ts_dtype_size(x->dtype);
  const char *src = x->data;
  char *dst = values ? values->data : NULL;
  int32_t *idx = indices ? indices->data : NULL;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      KEYS_FNS[x->dtype](src, o * n * inner + i, n, inner, pairs);
      if (descending)
        for (int64_t j = 0; j < n; j++)
          pairs[j].key = ~pairs[j].key;
      qsort(pairs, (size_t)n, sizeof *pairs, pair_cmp);
      for (int64_t j = 0; j < n_out; j++) {
        int64_t to = (o * n_out + j) * inner + i;
        if (dst)
          memcpy(dst + to * es, src + ((o * n + pairs[j].at) * inner + i) * es, es);
        if (idx)
          idx[to] = (int32_t)pairs[j].at;
      }
    }
  g_free(pairs);
  return true;
}

/* The axis in [0, rank), or -1 after an error: a dtype that does not
 * sort, a bad axis, a row too long for int32 indices. */
static int sort_axis(ts_loc loc, const ts_op_def *def, ts_dtype dtype, ts_shape shape, int64_t axis)
{
  char buf[TS_INFO_STR];
  int ax;
  if (!KEYS_FNS[dtype])
    return ts__op_fail(loc, def, TS_ERR_DTYPE, "%s input %s is not supported; cast it to a number first",
                       ts_dtype_name(dtype), ts__info_str(buf, dtype, shape)), -1;
  if (shape.rank == 0)
    return ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT, "input %s must be at least 1-D",
                       ts__info_str(buf, dtype, shape)), -1;
  if (!ts__axis(axis, shape.rank, &ax))
    return ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT,
                       "axis %" PRId64 " is out of range for input %s (rank %d)", axis,
                       ts__info_str(buf, dtype, shape), shape.rank), -1;
  if (shape.dim[ax] > INT32_MAX)
    return ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT,
                       "axis %" PRId64 " of input %s is longer than int32 indices reach",
                       axis, ts__info_str(buf, dtype, shape)), -1;
  return ax;
}

/* g [.., m, ..] added back at idx [.., m, ..] (int32, along axis, each in
 * [0, n)) into x's shape [.., n, ..]: the gradient of a gather along an
 * axis (TensorFlow's TopKGrad scatters so).  As the engine scatters
 * elsewhere (Gather's gradient): a one-hot [.., m, n, ..] of idx picks g,
 * summed over m; `where`, not a product, so that an infinite g stays at
 * its own place. */
static ts_tensor *scatter_along(ts_loc l, const char *op, ts_tensor *g, ts_tensor *idx, ts_tensor *x, int axis)
{
  int64_t n = x->shape.dim[axis];
  if (n < 0) {
    ts_error_set(TS_ERR_UNIMPLEMENTED, l, op, "its gradient needs the input's dim along axis %d known", axis);
    return NULL;
  }
  ts_shape wide = { .rank = g->shape.rank + 1 }, hot = { .rank = g->shape.rank - axis };
  for (int d = 0, at = 0; d < g->shape.rank; d++) {
    wide.dim[at++] = g->shape.dim[d];
    if (d == axis)
      wide.dim[at++] = 1;
  }
  hot.dim[0] = n;
  for (int d = 1; d < hot.rank; d++)
    hot.dim[d] = 1;
  ts_tensor *iota = ts_reshape_at(l, ts_range_at(l, TS_I32, 0, (double)n, 1), hot);
  ts_tensor *picks = ts_equal_at(l, ts__grad_reshape(l, idx, wide), iota);
  ts_tensor *spread = ts_where_at(l, picks, ts__grad_reshape(l, g, wide), ts__grad_scalar(g->dtype, 0));
  return ts_reduce_sum_at(l, spread, TS_INTS(axis), false);
}

/* ---- TopKV2 ---------------------------------------------------------------------------- */

/* The k largest along the last axis: the axis, or -1 after an error
 * (k < 0, or more than the axis holds when that is known). */
static int top_k_axis(ts_loc loc, const ts_op_def *def, ts_dtype dtype, ts_shape shape, int64_t k)
{
  char buf[TS_INFO_STR];
  int ax = sort_axis(loc, def, dtype, shape, -1);
  if (ax < 0)
    return -1;
  if (k < 0)
    return ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT, "k must be at least 0, got %" PRId64, k), -1;
  if (shape.dim[ax] >= 0 && k > shape.dim[ax])
    return ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT,
                       "k %" PRId64 " is more than the last dim %" PRId64 " of input %s", k,
                       shape.dim[ax], ts__info_str(buf, dtype, shape)), -1;
  return ax;
}

static bool top_k_infer(ts_infer_ctx *c)
{
  ts_info x = c->in[0];
  int ax = top_k_axis(c->loc, c->def, x.dtype, x.shape, c->attrs[0].i);
  if (ax < 0)
    return false;
  x.shape.dim[ax] = c->attrs[0].i;
  c->out[0] = x;
  c->out[1] = (ts_info){ .dtype = TS_I32, .shape = x.shape };
  return true;
}

static bool top_k_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  int ax = top_k_axis(k->loc, k->def, x->dtype, x->shape, k->attrs[0].i);
  return ax >= 0 && sort_rows(k, x, ax, k->attrs[0].i, true, k->out[0], k->out[1]);
}

#ifdef TS_HAVE_CUDA
/* The CPU kernel's checks (k against a dim unknown until now), then
 * backend/cuda/sort.cu, in the same order. */
static bool top_k_cuda(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  return top_k_axis(k->loc, k->def, x->dtype, x->shape, k->attrs[0].i) >= 0 && ts__cuda_sort(k);
}
#endif

/* the values' gradient back where they came from; none to the indices */
static bool top_k_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  int axis = c->in[0]->shape.rank - 1;
  return (gi[0] = scatter_along(c->loc, c->def->name, g[0], out[1], c->in[0], axis)) != NULL;
}

static const ts_attr_def TOP_K_ATTRS[] = { { "k", TS_ATTR_INT } };

const ts_op_def ts__op_top_k = {
  .op = TS_OP_TOP_K, .name = "TopKV2", .api_name = "top_k", .n_inputs = 1, .n_outputs = 2,
  .n_attrs = 1, .attrs = TOP_K_ATTRS, .infer = top_k_infer, .kernel[TS_DEVICE_CPU] = top_k_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(top_k_cuda), .grad = top_k_grad,
};

bool ts_top_k_at(ts_loc loc, ts_tensor *x, int k, ts_tensor **values, ts_tensor **indices)
{
  ts_attr attrs[] = { TS_ATTR_I(k) };
  ts_tensor *out[2] = { NULL, NULL };
  bool ok = ts__dispatch(loc, TS_OP_TOP_K, &x, 1, attrs, out) == 2;
  if (values)
    *values = out[0];
  if (indices)
    *indices = out[1];
  return ok;
}

/* ---- Sort, ArgSort ------------------------------------------------------------------------
 * TensorFlow builds tf.sort and tf.argsort in Python from TopKV2 over the
 * whole axis (moved last by a Transpose, negated or inverted for an
 * ascending order); here each is one node that says what it does. */

static bool sort_infer(ts_infer_ctx *c)
{
  if (sort_axis(c->loc, c->def, c->in[0].dtype, c->in[0].shape, c->attrs[0].i) < 0)
    return false;
  c->out[0] = c->in[0];
  if (c->def->op == TS_OP_ARGSORT)
    c->out[0].dtype = TS_I32;
  return true;
}

static bool sort_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  int ax = sort_axis(k->loc, k->def, x->dtype, x->shape, k->attrs[0].i);
  bool arg = k->def->op == TS_OP_ARGSORT;
  return ax >= 0 && sort_rows(k, x, ax, x->shape.dim[ax], k->attrs[1].b, arg ? NULL : k->out[0],
                              arg ? k->out[0] : NULL);
}

#ifdef TS_HAVE_CUDA
static bool sort_cuda(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  return sort_axis(k->loc, k->def, x->dtype, x->shape, k->attrs[0].i) >= 0 && ts__cuda_sort(k);
}
#endif

/* through the permutation: each value's gradient back at its index */
static bool sort_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_tensor *x = c->in[0];
  int axis;
  if (!ts__axis(c->attrs[0].i, x->shape.rank, &axis))
    return false;
  ts_tensor *order = ts_argsort_at(c->loc, x, axis, c->attrs[1].b);
  return (gi[0] = scatter_along(c->loc, c->def->name, g[0], order, x, axis)) != NULL;
}

static const ts_attr_def SORT_ATTRS[] = { { "axis", TS_ATTR_INT }, { "descending", TS_ATTR_BOOL } };

const ts_op_def ts__op_sort = {
  .op = TS_OP_SORT, .name = "Sort", .api_name = "sort", .n_inputs = 1, .n_outputs = 1,
  .n_attrs = 2, .attrs = SORT_ATTRS, .infer = sort_infer, .kernel[TS_DEVICE_CPU] = sort_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(sort_cuda), .grad = sort_grad,
};

const ts_op_def ts__op_argsort = {
  .op = TS_OP_ARGSORT, .name = "ArgSort", .api_name = "argsort", .n_inputs = 1, .n_outputs = 1,
  .flags = TS_OPF_NOT_DIFFERENTIABLE,
  .n_attrs = 2, .attrs = SORT_ATTRS, .infer = sort_infer, .kernel[TS_DEVICE_CPU] = sort_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(sort_cuda),
};

ts_tensor *ts_sort_at(ts_loc loc, ts_tensor *x, int axis, bool descending)
{
  ts_attr attrs[] = { TS_ATTR_I(axis), TS_ATTR_B(descending) };
  return ts__dispatch1(loc, TS_OP_SORT, &x, 1, attrs);
}

ts_tensor *ts_argsort_at(ts_loc loc, ts_tensor *x, int axis, bool descending)
{
  ts_attr attrs[] = { TS_ATTR_I(axis), TS_ATTR_B(descending) };
  return ts__dispatch1(loc, TS_OP_ARGSORT, &x, 1, attrs);
}
