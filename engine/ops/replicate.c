/* ops/replicate.c — rows whose every output element is a copy of one input
 * element (or a constant), found through an index map: Tile (tf.tile),
 * Pad (tf.pad) and ReverseV2 (tf.reverse).  They move bytes, so every
 * numeric dtype and bool runs the same code. */
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

/* ---- Pad ----------------------------------------------------------------------------- */

/* The modes, as TensorFlow names them (the mode attribute); their index
 * is ts_pad_mode's.  A mirror mode's padding is at most dim - offset. */
static const struct {
  const char *name;
  int offset;
} PAD_MODES[] = { [TS_PAD_CONSTANT] = { "CONSTANT", 0 }, [TS_PAD_REFLECT] = { "REFLECT", 1 },
                  [TS_PAD_SYMMETRIC] = { "SYMMETRIC", 0 } };

static int pad_mode(const char *s)
{
  for (int m = 0; m < (int)G_N_ELEMENTS(PAD_MODES); m++)
    if (s && strcmp(s, PAD_MODES[m].name) == 0)
      return m;
  return -1;
}

static bool pad_infer(ts_infer_ctx *c)
{
  ts_info x = c->in[0];
  ts_ints before = c->attrs[0].ints, after = c->attrs[1].ints;
  int mode = pad_mode(c->attrs[2].s);
  char xs[TS_INFO_STR], vs[TS_INFO_STR];
  if (mode < 0)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "mode '%s' is not one of CONSTANT, REFLECT, SYMMETRIC", c->attrs[2].s ? c->attrs[2].s : "");
  if (c->n_in > 2 || (c->n_in == 2 && (c->in[1].shape.rank != 0 || c->in[1].dtype != x.dtype)))
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "constant_values must be one scalar of %s's dtype, got %s",
                          ts__info_str(xs, x.dtype, x.shape),
                          c->n_in == 2 ? ts__info_str(vs, c->in[1].dtype, c->in[1].shape) : "more");
  if (c->n_in == 2 && mode != TS_PAD_CONSTANT)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "constant_values only pad in CONSTANT mode, not %s",
                          PAD_MODES[mode].name);
  if (before.n != x.shape.rank || after.n != x.shape.rank)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "The first dimension of paddings must be the rank of inputs: %d and %d "
                          "paddings for %s", before.n, after.n, ts__info_str(xs, x.dtype, x.shape));
  ts_shape out = x.shape;
  int offset = PAD_MODES[mode].offset;
  for (int d = 0; d < out.rank; d++) {
    int64_t b = before.v[d], a = after.v[d], dim = x.shape.dim[d];
    if (b < 0 || a < 0)
      return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                            "Paddings must be non-negative: %" PRId64 " %" PRId64 " (dim %d of %s)", b, a, d,
                            ts__info_str(xs, x.dtype, x.shape));
    if (mode != TS_PAD_CONSTANT && dim >= 0 && (b > dim - offset || a > dim - offset))
      return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                            "%s paddings must be no greater than the dimension size: %" PRId64 ", %" PRId64
                            " greater than %" PRId64 " (%s pads each side by at most the dim%s; dim %d of %s)",
                            PAD_MODES[mode].name, b, a, dim - offset, PAD_MODES[mode].name,
                            offset ? " - 1, an empty dim not at all" : "", d, ts__info_str(xs, x.dtype, x.shape));
    if (dim >= 0 && (__builtin_add_overflow(dim, b, &out.dim[d]) || __builtin_add_overflow(out.dim[d], a, &out.dim[d])))
      return ts__infer_fail(c, TS_ERR_SHAPE, "paddings %" PRId64 ", %" PRId64 " make dim %d of %s overflow int64",
                            b, a, d, ts__info_str(xs, x.dtype, x.shape));
  }
  c->out[0] = (ts_info){ x.dtype, out };
  return size_fits(c, out, "paddings before", before);
}

/* Where output index at of a dim of len (after `before` padding) reads x;
 * -1 for the constant. */
static int64_t pad_source(int mode, int64_t at, int64_t before, int64_t len)
{
  at -= before;
  if (at >= 0 && at < len)
    return at;
  if (mode == TS_PAD_CONSTANT)
    return -1;
  if (mode == TS_PAD_REFLECT)
    return at < 0 ? -at : 2 * (len - 1) - at;
  return at < 0 ? -at - 1 : 2 * len - 1 - at;
}

static bool pad_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  ts_tensor *y = k->out[0];
  const int64_t *before = k->attrs[0].ints.v;
  int mode = pad_mode(k->attrs[2].s), rank = x->shape.rank;
  size_t es = ts_dtype_size(x->dtype);
  static const uint64_t zero = 0;
  const char *value = k->n_in == 2 ? k->in[1]->data : (const char *)&zero, *src = x->data;
  char *dst = y->data;
  if (y->size == 0)
    return true;
  if (rank == 0) {
    memcpy(dst, src, es);
    return true;
  }
  int64_t stride[TS_MAX_RANK], idx[TS_MAX_RANK] = { 0 }, n = y->shape.dim[rank - 1];
  stride[rank - 1] = 1;
  for (int d = rank - 2; d >= 0; d--)
    stride[d] = stride[d + 1] * x->shape.dim[d + 1];
  for (int64_t row = 0; row < y->size / n; row++) {
    int64_t off = 0;
    for (int d = 0; d < rank - 1 && off >= 0; d++) {
      int64_t at = pad_source(mode, idx[d], before[d], x->shape.dim[d]);
      off = at < 0 ? -1 : off + at * stride[d];
    }
    for (int64_t j = 0; j < n; j++, dst += es) {
      int64_t at = off < 0 ? -1 : pad_source(mode, j, before[rank - 1], x->shape.dim[rank - 1]);
      memcpy(dst, at < 0 ? value : src + (size_t)(off + at) * es, es);
    }
    for (int d = rank - 2; d >= 0 && ++idx[d] == y->shape.dim[d]; d--)
      idx[d] = 0;
  }
  return true;
}

/* g's [begin, begin + size) along axis a. */
static ts_tensor *slice_axis(ts_loc loc, ts_tensor *g, int a, int64_t begin, int64_t size)
{
  if (!g)
    return NULL;
  ts_ints b = { .n = g->shape.rank }, s = { .n = g->shape.rank };
  for (int d = 0; d < b.n; d++) {
    b.v[d] = d == a ? begin : 0;
    s.v[d] = d == a ? size : -1;
  }
  return ts_slice_at(loc, g, b, s);
}

/* t reversed along axis a (a gather of n, n - 1, ..., 0). */
static ts_tensor *flip_axis(ts_loc loc, ts_tensor *t, int a, int64_t n)
{
  if (!t || n <= 1)
    return t;
  ts_tensor *idx = ts_range_at(loc, TS_I64, (double)(n - 1), -1, -1);
  return ts_gather_at(loc, t, idx, a);
}

/* t padded with zeros along axis a. */
static ts_tensor *zero_pad_axis(ts_loc loc, ts_tensor *t, int a, int64_t before, int64_t after)
{
  if (!t)
    return NULL;
  ts_ints b = { .n = t->shape.rank }, f = { .n = t->shape.rank };
  for (int d = 0; d < b.n; d++) {
    b.v[d] = d == a ? before : 0;
    f.v[d] = d == a ? after : 0;
  }
  return ts_pad_at(loc, t, b, f, TS_PAD_CONSTANT, NULL);
}

/* CONSTANT: the slice of g over x (TensorFlow's PadGrad; none to
 * constant_values).  The mirror modes (MirrorPadGrad): per axis, each
 * padding's gradient reversed and added onto the elements it copied. */
static bool pad_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                     ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *x = c->in[0], *r = g[0];
  ts_ints before = c->attrs[0].ints, after = c->attrs[1].ints;
  int mode = pad_mode(c->attrs[2].s);
  for (int a = 0; r && a < x->shape.rank; a++) {
    int64_t b = before.v[a], f = after.v[a], d = x->shape.dim[a];
    if (b == 0 && f == 0)
      continue;
    if (d < 0) {
      ts_error_set(TS_ERR_UNIMPLEMENTED, l, "Pad", "its gradient needs the input's dim %d known", a);
      return false;
    }
    ts_tensor *centre = slice_axis(l, r, a, b, d);
    if (mode != TS_PAD_CONSTANT) {
      int o = PAD_MODES[mode].offset;
      if (b > 0)
        centre = ts_add_at(l, centre, zero_pad_axis(l, flip_axis(l, slice_axis(l, r, a, 0, b), a, b), a, o,
                                                    d - o - b));
      if (f > 0)
        centre = ts_add_at(l, centre, zero_pad_axis(l, flip_axis(l, slice_axis(l, r, a, b + d, f), a, f), a,
                                                    d - o - f, o));
    }
    r = centre;
  }
  return (gi[0] = r) != NULL;
}

static const ts_attr_def pad_attrs[] = {
  { "before", TS_ATTR_INTS }, { "after", TS_ATTR_INTS }, { "mode", TS_ATTR_STRING }
};

const ts_op_def ts__op_pad = {
  .op = TS_OP_PAD, .name = "Pad", .api_name = "pad", .n_inputs = -1, .min_inputs = 1, .n_outputs = 1,
  ATTRS(pad_attrs), .infer = pad_infer, .kernel[TS_DEVICE_CPU] = pad_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_pad),
  .grad = pad_grad,
};

ts_tensor *ts_pad_at(ts_loc loc, ts_tensor *x, ts_ints before, ts_ints after, ts_pad_mode mode,
                     ts_tensor *constant_value)
{
  if ((unsigned)mode >= G_N_ELEMENTS(PAD_MODES)) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, ts__op_pad.name, "mode %d is not a ts_pad_mode", (int)mode);
    return NULL;
  }
  ts_tensor *in[] = { x, constant_value };
  ts_attr attrs[] = { TS_ATTR_INTS_(before), TS_ATTR_INTS_(after),
                      { .type = TS_ATTR_STRING, .s = PAD_MODES[mode].name } };
  return ts__dispatch1(loc, TS_OP_PAD, in, constant_value ? 2 : 1, attrs);
}

/* ---- ReverseV2 ------------------------------------------------------------------------ */

/* The dims axis names (bit d: dim d reversed), for a kernel or gradient
 * of a call inference accepted. */
static unsigned reverse_dims(ts_ints axis, int rank)
{
  unsigned flip = 0;
  for (int i = 0; i < axis.n; i++) {
    int d;
    if (ts__axis(axis.v[i], rank, &d))
      flip |= 1u << d;
  }
  return flip;
}

/* TensorFlow's checks (ReverseV2's shape function, which graphs and
 * tf.function run): each axis in [-rank, rank), none twice; a scalar
 * takes only []. */
static bool reverse_infer(ts_infer_ctx *c)
{
  ts_info x = c->in[0];
  ts_ints axis = c->attrs[0].ints;
  char xs[TS_INFO_STR], as[INTS_STR];
  if (axis.n < 0 || axis.n > TS_MAX_RANK)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "axis must list at most %d dims, got %d (for %s)",
                          TS_MAX_RANK, axis.n, ts__info_str(xs, x.dtype, x.shape));
  unsigned seen = 0;
  for (int i = 0; i < axis.n; i++) {
    int d;
    if (!ts__axis(axis.v[i], x.shape.rank, &d))
      return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                            "'axis'[%d] = %" PRId64 " is out of valid range [%d, %d) (axis %s for %s)", i,
                            axis.v[i], -x.shape.rank, x.shape.rank, ints_str(as, axis),
                            ts__info_str(xs, x.dtype, x.shape));
    if (seen & 1u << d)
      return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "axis %d specified more than once (axis %s for %s)", d,
                            ints_str(as, axis), ts__info_str(xs, x.dtype, x.shape));
    seen |= 1u << d;
  }
  c->out[0] = x;
  return true;
}

/* Block by block: the dims after the last reversed one stay in order, so
 * each run of their elements is one copy from where its index, mirrored
 * in the reversed dims, reads x. */
static bool reverse_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  ts_tensor *y = k->out[0];
  int rank = x->shape.rank, last = -1;
  unsigned flip = reverse_dims(k->attrs[0].ints, rank);
  size_t es = ts_dtype_size(x->dtype);
  if (y->size == 0)
    return true;
  for (int d = 0; d < rank; d++)
    if (flip & 1u << d)
      last = d;
  if (last < 0) {
    memcpy(y->data, x->data, (size_t)x->size * es);
    return true;
  }
  int64_t inner = ts__dims_prod(x->shape, last + 1, rank), stride[TS_MAX_RANK], idx[TS_MAX_RANK] = { 0 };
  for (int d = last; d >= 0; d--)
    stride[d] = d == last ? inner : stride[d + 1] * x->shape.dim[d + 1];
  size_t block = (size_t)inner * es;
  const char *src = x->data;
  char *dst = y->data;
  for (int64_t b = 0; b < y->size / inner; b++, dst += block) {
    int64_t off = 0;
    for (int d = 0; d <= last; d++)
      off += (flip & 1u << d ? x->shape.dim[d] - 1 - idx[d] : idx[d]) * stride[d];
    memcpy(dst, src + (size_t)off * es, block);
    for (int d = last; d >= 0 && ++idx[d] == x->shape.dim[d]; d--)
      idx[d] = 0;
  }
  return true;
}

/* The upstream gradient reversed on the same axes (TensorFlow's). */
static bool reverse_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                         ts_tensor **gi)
{
  return (gi[0] = ts_reverse_at(c->loc, g[0], c->attrs[0].ints)) != NULL;
}

static const ts_attr_def reverse_attrs[] = { { "axis", TS_ATTR_INTS } };

const ts_op_def ts__op_reverse = {
  .op = TS_OP_REVERSE, .name = "ReverseV2", .api_name = "reverse", .n_inputs = 1, .n_outputs = 1,
  ATTRS(reverse_attrs), .infer = reverse_infer, .kernel[TS_DEVICE_CPU] = reverse_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_reverse),
  .grad = reverse_grad,
};

ts_tensor *ts_reverse_at(ts_loc loc, ts_tensor *x, ts_ints axis)
{
  ts_attr attrs[] = { TS_ATTR_INTS_(axis) };
  return ts__dispatch1(loc, TS_OP_REVERSE, &x, 1, attrs);
}

ts_tensor *ts_tile_at(ts_loc loc, ts_tensor *x, ts_ints multiples)
{
  ts_attr attrs[] = { TS_ATTR_INTS_(multiples) };
  return ts__dispatch1(loc, TS_OP_TILE, &x, 1, attrs);
}
