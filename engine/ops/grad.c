/* ops/grad.c — what the op rows' gradients (ts_grad_fn) share: undoing
 * broadcasting and reductions, masks and scalars.  Written with the
 * engine's own ops, so that they run eagerly and record nodes while
 * tracing, like the gradients themselves. */
#include "../engine-private.h"

ts_tensor *ts__grad_scalar(ts_dtype dtype, double v)
{
  uint64_t data = 0;
  ts__store_f64(dtype, &data, 0, v);
  return ts_constant(dtype, TS_SCALAR_SHAPE, &data);
}

ts_tensor *ts__grad_unbroadcast(ts_loc loc, ts_tensor *g, ts_shape to)
{
  if (!g)
    return NULL;
  ts_shape gs = g->shape;
  int lead = gs.rank - to.rank;
  if (lead < 0) {
    char a[TS_INFO_STR], b[TS_INFO_STR];
    ts_error_set(TS_ERR_INTERNAL, loc, NULL, "gradient %s has a lower rank than its input %s",
                 ts__info_str(a, g->dtype, gs), ts__info_str(b, g->dtype, to));
    return NULL;
  }
  ts_ints kept = { 0 }; /* axes `to` has as 1 where g has more */
  for (int d = 0; d < to.rank; d++)
    if (to.dim[d] == 1 && gs.dim[lead + d] != 1)
      kept.v[kept.n++] = lead + d;
  if (kept.n)
    g = ts_reduce_sum_at(loc, g, kept, true);
  if (lead > 0) {
    ts_ints leading = { .n = lead };
    for (int d = 0; d < lead; d++)
      leading.v[d] = d;
    g = ts_reduce_sum_at(loc, g, leading, false);
  }
  return g;
}

ts_tensor *ts__grad_mask(ts_loc loc, ts_tensor *cond, ts_dtype dtype)
{
  return ts_cast_at(loc, cond, dtype);
}

ts_tensor *ts__grad_reshape(ts_loc loc, ts_tensor *g, ts_shape shape)
{
  if (!g)
    return NULL;
  int unknown = 0;
  for (int d = 0; d < shape.rank; d++)
    unknown += shape.dim[d] < 0;
  if (unknown > 1) {
    char b[TS_INFO_STR];
    ts_error_set(TS_ERR_UNIMPLEMENTED, loc, NULL,
                 "a gradient must be reshaped to %s, which has more than one unknown dim "
                 "(give the traced function an input signature with fewer)",
                 ts__info_str(b, g->dtype, shape));
    return NULL;
  }
  return ts_reshape_at(loc, g, shape); /* the one unknown dim, if any, is -1 */
}

ts_tensor *ts__grad_unreduce(ts_loc loc, ts_tensor *g, ts_tensor *x, ts_ints axes, bool keepdims)
{
  if (!g)
    return NULL;
  ts_shape kd = x->shape;
  if (axes.n < 0) {
    for (int d = 0; d < kd.rank; d++)
      kd.dim[d] = 1;
  } else {
    for (int k = 0; k < axes.n; k++) {
      int d;
      if (!ts__axis(axes.v[k], kd.rank, &d)) {
        ts_error_set(TS_ERR_INTERNAL, loc, NULL, "reduction axis %" G_GINT64_FORMAT " out of range",
                     axes.v[k]);
        return NULL;
      }
      kd.dim[d] = 1;
    }
  }
  if (!keepdims)
    g = ts__grad_reshape(loc, g, kd);
  return ts_mul_at(loc, g, ts_ones_like_at(loc, x));
}
