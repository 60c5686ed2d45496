/* ops/grad.c — what the op rows' gradients (ts_grad_fn) share: undoing
 * broadcasting (with SumTo, the op that does it when a dim is known only
 * at run time) and reductions, masks and scalars.  Written with the
 * engine's own ops, so that they run eagerly and record nodes while
 * tracing, like the gradients themselves. */
#include "../engine-private.h"

ts_tensor *ts__grad_scalar(ts_dtype dtype, double v)
{
  uint64_t data = 0;
  ts__store_f64(dtype, &data, 0, v);
  return ts_constant(dtype, TS_SCALAR_SHAPE, &data);
}

/* ---- SumTo: g summed down to x's shape, decided when it runs ---------------------- */

static bool sum_to_infer(ts_infer_ctx *c)
{
  const ts_info *g = &c->in[0], *x = &c->in[1];
  char a[TS_INFO_STR], b[TS_INFO_STR];
  if (!ts_dtype_is_float(g->dtype))
    return ts__infer_fail(c, TS_ERR_DTYPE, "g must be float32 or float64, got %s",
                          ts__info_str(a, g->dtype, g->shape));
  int lead = g->shape.rank - x->shape.rank;
  bool ok = lead >= 0;
  for (int d = 0; ok && d < x->shape.rank; d++) {
    int64_t gd = g->shape.dim[lead + d], xd = x->shape.dim[d];
    ok = gd < 0 || xd < 0 || xd == gd || xd == 1;
  }
  if (!ok)
    return ts__infer_fail(c, TS_ERR_SHAPE, "%s does not broadcast from %s",
                          ts__info_str(a, g->dtype, g->shape), ts__info_str(b, x->dtype, x->shape));
  c->out[0] = (ts_info){ g->dtype, x->shape };
  return true;
}

static bool sum_to_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *g = k->in[0], *x = k->in[1];
  ts_tensor *y = k->out[0];
  int rank = g->shape.rank, lead = rank - x->shape.rank;
  for (int d = 0; d < x->shape.rank; d++)
    if (x->shape.dim[d] != g->shape.dim[lead + d] && x->shape.dim[d] != 1)
      return ts__kernel_fail(k, TS_ERR_SHAPE, "dim %d: %lld does not broadcast to %lld", d,
                             (long long)x->shape.dim[d], (long long)g->shape.dim[lead + d]);
  /* y's stride for each of g's dims: 0 where g's is summed */
  int64_t ystride[TS_MAX_RANK] = { 0 }, step = 1;
  for (int d = rank - 1; d >= lead; d--) {
    int64_t xd = x->shape.dim[d - lead];
    ystride[d] = xd == 1 ? 0 : step;
    step *= xd;
  }
  double *acc = g_try_new0(double, MAX(y->size, 1));
  if (!acc)
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "no memory for %lld sums", (long long)y->size);
  int64_t idx[TS_MAX_RANK] = { 0 }, at = 0;
  for (int64_t i = 0; i < g->size; i++) {
    acc[at] += ts__load_f64(g->dtype, g->data, i);
    for (int d = rank - 1; d >= 0; d--) { /* the next index, row-major */
      at += ystride[d];
      if (++idx[d] < g->shape.dim[d])
        break;
      at -= ystride[d] * idx[d];
      idx[d] = 0;
    }
  }
  for (int64_t i = 0; i < y->size; i++)
    ts__store_f64(y->dtype, y->data, i, acc[i]);
  g_free(acc);
  return true;
}

/* d(sum_to(g, x))/dg: the output's gradient broadcast back over g. */
static bool sum_to_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                        ts_tensor **gi)
{
  gi[1] = NULL; /* x gives only its shape */
  return (gi[0] = ts_mul_at(c->loc, g[0], ts_ones_like_at(c->loc, c->in[0]))) != NULL;
}

const ts_op_def ts__op_sum_to = {
  .op = TS_OP_SUM_TO, .name = "SumTo", .api_name = "sum_to", .n_inputs = 2, .n_outputs = 1,
  .flags = TS_OPF_ANY_DTYPE, .infer = sum_to_infer, .kernel[TS_DEVICE_CPU] = sum_to_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_sum_to), .grad = sum_to_grad,
};

ts_tensor *ts_sum_to_at(ts_loc loc, ts_tensor *g, ts_tensor *x)
{
  ts_tensor *in[] = { g, x };
  return ts__dispatch1(loc, TS_OP_SUM_TO, in, 2, NULL);
}

ts_tensor *ts__grad_unbroadcast(ts_loc loc, ts_tensor *g, ts_tensor *x, int n_core)
{
  if (!g || !x)
    return g;
  ts_shape gs = g->shape, to = x->shape;
  int lead = gs.rank - to.rank;
  if (lead < 0) {
    char a[TS_INFO_STR], b[TS_INFO_STR];
    ts_error_set(TS_ERR_INTERNAL, loc, NULL, "gradient %s has a lower rank than its input %s",
                 ts__info_str(a, g->dtype, gs), ts__info_str(b, g->dtype, to));
    return NULL;
  }
  ts_ints kept = { 0 }; /* axes `to` has as 1 where g has more */
  for (int d = 0; d < to.rank - n_core; d++) {
    if (to.dim[d] < 0 && gs.dim[lead + d] != 1)
      return ts_sum_to_at(loc, g, x); /* broadcast or not: known when it runs */
    if (to.dim[d] == 1 && gs.dim[lead + d] != 1)
      kept.v[kept.n++] = lead + d;
  }
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
