/* ops/one_hot.c — OneHot (tf.one_hot): a new dim of depth at axis that
 * holds on_value where the index picks the place and off_value elsewhere.
 *
 * Semantics follow TensorFlow's OneHot op: indices uint8, int8, int32 or
 * int64; an index outside [0, depth), a negative one included, gives a
 * row of off_value (ONNX's OneHot counts negative ones from the end; its
 * import and export map between the two); depth 0 gives an empty dim;
 * axis -1 (last) or 0 .. rank of indices; on_value and off_value scalars
 * of the output's dtype, any numeric one or bool.  No gradient, as
 * TensorFlow's (None to every input). */
#include "engine-private.h"

#include <inttypes.h>
#include <string.h>

#define ATTRS(a) .n_attrs = (int)(sizeof(a) / sizeof((a)[0])), .attrs = (a)

static bool index_dtype(ts_dtype dt)
{
  return dt == TS_U8 || dt == TS_I8 || dt == TS_I32 || dt == TS_I64;
}

/* The new dim's place: axis -1 is after the last of rank dims. */
static int one_hot_axis(int64_t axis, int rank)
{
  return axis == -1 ? rank : (int)axis;
}

static bool one_hot_infer(ts_infer_ctx *c)
{
  ts_info ix = c->in[0], on = c->in[1], off = c->in[2];
  int64_t depth = c->attrs[0].i, axis = c->attrs[1].i;
  char is[TS_INFO_STR], vs[TS_INFO_STR];
  if (!index_dtype(ix.dtype))
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "indices must be uint8, int8, int32 or int64, got %s",
                          ts__info_str(is, ix.dtype, ix.shape));
  if (on.shape.rank != 0)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "on_value must be a scalar, but got: %s",
                          ts__info_str(vs, on.dtype, on.shape));
  if (off.shape.rank != 0)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "off_value must be a scalar, but got: %s",
                          ts__info_str(vs, off.dtype, off.shape));
  if (on.dtype != off.dtype)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "dtype %s of on_value does not match dtype %s of off_value",
                          ts_dtype_name(on.dtype), ts_dtype_name(off.dtype));
  if (depth < 0)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "depth must be non-negative, got: %" PRId64 " (indices %s)",
                          depth, ts__info_str(is, ix.dtype, ix.shape));
  if (ix.shape.rank >= TS_MAX_RANK)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "indices %s would give rank %d (at most %d)",
                          ts__info_str(is, ix.dtype, ix.shape), ix.shape.rank + 1, TS_MAX_RANK);
  if (axis != -1 && (axis < 0 || axis > ix.shape.rank))
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "Expected axis to be -1 or between [0, %d).  But received: %" PRId64 " (indices %s)",
                          ix.shape.rank + 1, axis, ts__info_str(is, ix.dtype, ix.shape));
  int at = one_hot_axis(axis, ix.shape.rank);
  ts_shape out = { .rank = ix.shape.rank + 1 };
  for (int d = 0; d < out.rank; d++)
    out.dim[d] = d < at ? ix.shape.dim[d] : d == at ? depth : ix.shape.dim[d - 1];
  if (ts_shape_size(out) == TS_SHAPE_SIZE_INVALID)
    return ts__infer_fail(c, TS_ERR_SHAPE,
                          "OneHot result would have shape %s + [%" PRId64 "], which exceeds 2**63 - 1 elements",
                          ts__info_str(is, ix.dtype, ix.shape), depth);
  c->out[0] = (ts_info){ on.dtype, out };
  return true;
}

/* off_value everywhere (one element, then copies doubling), then
 * on_value where each index in [0, depth) points. */
static bool one_hot_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *ix = k->in[0];
  ts_tensor *y = k->out[0];
  int64_t depth = k->attrs[0].i;
  int rank = ix->shape.rank, at = one_hot_axis(k->attrs[1].i, rank);
  size_t es = ts_dtype_size(y->dtype), total = (size_t)y->size * es;
  char *dst = y->data;
  if (y->size == 0)
    return true;
  memcpy(dst, k->in[2]->data, es);
  for (size_t done = es; done < total; done *= 2)
    memcpy(dst + done, dst, done < total - done ? done : total - done);
  int64_t outer = ts__dims_prod(ix->shape, 0, at), inner = ts__dims_prod(ix->shape, at, rank);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t s = 0; s < inner; s++) {
      int64_t i = ts__load_i64(ix->dtype, ix->data, o * inner + s);
      if (i >= 0 && i < depth)
        memcpy(dst + (size_t)((o * depth + i) * inner + s) * es, k->in[1]->data, es);
    }
  return true;
}

static const ts_attr_def one_hot_attrs[] = { { "depth", TS_ATTR_INT }, { "axis", TS_ATTR_INT } };

const ts_op_def ts__op_one_hot = {
  .op = TS_OP_ONE_HOT, .name = "OneHot", .api_name = "one_hot", .n_inputs = 3, .n_outputs = 1,
  .flags = TS_OPF_NOT_DIFFERENTIABLE, ATTRS(one_hot_attrs), .infer = one_hot_infer,
  .kernel[TS_DEVICE_CPU] = one_hot_cpu, .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_one_hot),
};

/* value (1 or 0) as a scalar of dtype. */
static ts_tensor *scalar_of(ts_dtype dtype, double value)
{
  uint64_t bits = 0;
  ts__store_f64(dtype, &bits, 0, value);
  return ts_constant(dtype, TS_SCALAR_SHAPE, &bits);
}

/* tf.one_hot's own checks: the values are of dtype. */
static bool value_fits(ts_loc loc, const char *what, ts_tensor *v, ts_dtype dtype)
{
  if (!v || ts_tensor_dtype(v) == dtype)
    return true;
  ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, ts__op_one_hot.name, "dtype %s of %s does not match dtype parameter %s",
               ts_dtype_name(ts_tensor_dtype(v)), what, ts_dtype_name(dtype));
  return false;
}

ts_tensor *ts_one_hot_at(ts_loc loc, ts_tensor *indices, int64_t depth, ts_tensor *on_value,
                         ts_tensor *off_value, int axis, ts_dtype dtype)
{
  if ((unsigned)dtype >= TS_NUMERIC_DTYPE_COUNT) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, ts__op_one_hot.name,
                 "dtype %d: a one-hot tensor is numeric or bool", (int)dtype);
    return NULL;
  }
  if (!value_fits(loc, "on_value", on_value, dtype) || !value_fits(loc, "off_value", off_value, dtype))
    return NULL;
  ts_tensor *in[] = { indices, on_value ? on_value : scalar_of(dtype, 1),
                      off_value ? off_value : scalar_of(dtype, 0) };
  ts_attr attrs[] = { TS_ATTR_I(depth), TS_ATTR_I(axis) };
  return ts__dispatch1(loc, TS_OP_ONE_HOT, in, 3, attrs);
}
