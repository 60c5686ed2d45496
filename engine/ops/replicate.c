/* ops/replicate.c — rows whose every output element is a copy of one input
 * element, found through an index map: Tile (tf.tile).  They move bytes,
 * so every numeric dtype and bool runs the same code. */
#include "engine-private.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define ATTRS(a) .n_attrs = (int)(sizeof(a) / sizeof((a)[0])), .attrs = (a)

/* "[2,0,3]": a list as given, into buf[INTS_STR]. */
#define INTS_STR (TS_MAX_RANK * 22 + 3)
static char *ints_str(char *buf, ts_ints v)
{
  int at = snprintf(buf, INTS_STR, "[");
  for (int i = 0; i < v.n && i < TS_MAX_RANK; i++)
    at += snprintf(buf + at, INTS_STR - (size_t)at, i ? ",%" PRId64 : "%" PRId64, v.v[i]);
  snprintf(buf + at, INTS_STR - (size_t)at, "]");
  return buf;
}

/* The output's size must fit int64 (each dim was checked on its own). */
static bool size_fits(ts_infer_ctx *c, ts_shape out, const char *what, ts_ints arg)
{
  if (ts_shape_size(out) != TS_SHAPE_SIZE_INVALID)
    return true;
  char xs[TS_INFO_STR], as[INTS_STR];
  return ts__infer_fail(c, TS_ERR_SHAPE, "%s %s make the size of the output from %s overflow int64", what,
                        ints_str(as, arg), ts__info_str(xs, c->in[0].dtype, c->in[0].shape));
}

/* ---- Tile --------------------------------------------------------------------------- */

static bool tile_infer(ts_infer_ctx *c)
{
  ts_info x = c->in[0];
  ts_ints m = c->attrs[0].ints;
  char xs[TS_INFO_STR], ms[INTS_STR];
  if (m.n != x.shape.rank)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "Expected multiples argument to be a vector of length %d but got length %d "
                          "(multiples %s for %s)", x.shape.rank, m.n, ints_str(ms, m),
                          ts__info_str(xs, x.dtype, x.shape));
  ts_shape out = x.shape;
  for (int d = 0; d < m.n; d++) {
    if (m.v[d] < 0)
      return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                            "Expected multiples[%d] >= 0, but got %" PRId64 " (multiples %s for %s)", d,
                            m.v[d], ints_str(ms, m), ts__info_str(xs, x.dtype, x.shape));
    if (m.v[d] == 0)
      out.dim[d] = 0;
    else if (x.shape.dim[d] >= 0 && __builtin_mul_overflow(x.shape.dim[d], m.v[d], &out.dim[d]))
      return ts__infer_fail(c, TS_ERR_SHAPE, "multiples[%d] = %" PRId64 " makes dim %d of %s overflow int64",
                            d, m.v[d], d, ts__info_str(xs, x.dtype, x.shape));
  }
  c->out[0] = (ts_info){ x.dtype, out };
  return size_fits(c, out, "multiples", m);
}

typedef struct tile_job {
  int rank;
  const int64_t *dim, *mult;
  size_t x_stride[TS_MAX_RANK], y_stride[TS_MAX_RANK]; /* bytes */
} tile_job;

/* The block of y at axis a and after from x's: x's rows placed, then the
 * block they make copied mult[a] - 1 times after itself. */
static void tile_axis(const tile_job *j, int a, const char *src, char *dst)
{
  size_t block = (size_t)j->dim[a] * j->y_stride[a];
  if (a == j->rank - 1)
    memcpy(dst, src, block);
  else
    for (int64_t i = 0; i < j->dim[a]; i++)
      tile_axis(j, a + 1, src + (size_t)i * j->x_stride[a], dst + (size_t)i * j->y_stride[a]);
  for (int64_t k = 1; k < j->mult[a]; k++)
    memcpy(dst + (size_t)k * block, dst, block);
}

static bool tile_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  ts_tensor *y = k->out[0];
  size_t es = ts_dtype_size(x->dtype);
  if (y->size == 0)
    return true;
  if (x->shape.rank == 0) {
    memcpy(y->data, x->data, es);
    return true;
  }
  tile_job j = { .rank = x->shape.rank, .dim = x->shape.dim, .mult = k->attrs[0].ints.v };
  size_t xs = es, ys = es;
  for (int a = j.rank - 1; a >= 0; a--) {
    j.x_stride[a] = xs;
    j.y_stride[a] = ys;
    xs *= (size_t)x->shape.dim[a];
    ys *= (size_t)y->shape.dim[a];
  }
  tile_axis(&j, 0, x->data, y->data);
  return true;
}

/* The sum over the tiles (TensorFlow's TileGrad): g seen with each tiled
 * axis a as [multiples[a], x's dim], summed over the first. */
static bool tile_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                      ts_tensor **gi)
{
  ts_tensor *x = c->in[0], *r = g[0];
  ts_ints m = c->attrs[0].ints;
  for (int a = 0; r && a < m.n; a++) {
    if (m.v[a] == 1)
      continue;
    if (x->shape.dim[a] < 0) {
      ts_error_set(TS_ERR_UNIMPLEMENTED, c->loc, "Tile",
                   "its gradient needs the input's dim %d known", a);
      return false;
    }
    ts_shape s = { .rank = x->shape.rank + 1 };
    for (int d = 0; d < s.rank; d++)
      s.dim[d] = d < a ? r->shape.dim[d] : d == a ? m.v[a] : d == a + 1 ? x->shape.dim[a] : r->shape.dim[d - 1];
    r = ts_reduce_sum_at(c->loc, ts__grad_reshape(c->loc, r, s), TS_AXES(a), false);
  }
  return (gi[0] = r) != NULL;
}

static const ts_attr_def tile_attrs[] = { { "multiples", TS_ATTR_INTS } };

const ts_op_def ts__op_tile = {
  .op = TS_OP_TILE, .name = "Tile", .api_name = "tile", .n_inputs = 1, .n_outputs = 1,
  ATTRS(tile_attrs), .infer = tile_infer, .kernel[TS_DEVICE_CPU] = tile_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_tile),
  .grad = tile_grad,
};

ts_tensor *ts_tile_at(ts_loc loc, ts_tensor *x, ts_ints multiples)
{
  ts_attr attrs[] = { TS_ATTR_INTS_(multiples) };
  return ts__dispatch1(loc, TS_OP_TILE, &x, 1, attrs);
}
