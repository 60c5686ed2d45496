/* onnx_quant.c — ONNX's linear quantization ops as the engine's ops, the
 * way the ONNX reference computes them: integers widened to int32 and
 * their zero points subtracted there (exact), products in int32 (MatMul)
 * or float64 (Conv: exact while a sum stays under 2^53), scales applied in
 * float32, rounding half to even, saturating to the zero point's dtype.
 * Scales and zero points are per tensor (scalars) or per axis (1-D);
 * blocked quantization (opset 21) is refused naming the node. */
#include "onnx-private.h"

#include <inttypes.h>
#include <string.h>

#define HERE c->loc

static ts_tensor *in(const onnx_node_ctx *c, int i)
{
  return i < c->n_in ? c->in[i].t : NULL;
}

static int64_t attr_int(const onnx_node_ctx *c, const char *name, int64_t fallback)
{
  for (size_t i = 0; i < c->node->n_attribute; i++)
    if (strcmp(c->node->attribute[i]->name, name) == 0)
      return c->node->attribute[i]->i;
  return fallback;
}

/* Another row's build (Round, MatMul, Conv) on these inputs, with this
 * node's attributes: its one output. */
static ts_tensor *build(const onnx_node_ctx *c, const char *op, ts_tensor *const *ins, int n)
{
  onnx_value values[2] = { { ins[0], NULL, NULL }, { n > 1 ? ins[1] : NULL, NULL, NULL } };
  ts_tensor *out = NULL;
  onnx_node_ctx sub = *c;
  sub.in = values;
  sub.n_in = n;
  sub.out = &out;
  sub.n_out = 1;
  for (int i = 0; i < n; i++)
    if (!ins[i])
      return NULL;
  return onnx_op_build(onnx_op_lookup(NULL, op), &sub) ? out : NULL;
}

static ts_tensor *scalar(const onnx_node_ctx *c, ts_dtype dtype, double v)
{
  return ts_cast_at(HERE, ts_scalar_f64(v), dtype);
}

static ts_tensor *as(const onnx_node_ctx *c, ts_tensor *x, ts_dtype dtype)
{
  return x && ts_tensor_dtype(x) != dtype ? ts_cast_at(HERE, x, dtype) : x;
}

/* A scale or zero point p for x: a scalar as it is, a 1-D one shaped to
 * broadcast along axis of a rank-`rank` value; NULL + error otherwise. */
static ts_tensor *along(const onnx_node_ctx *c, ts_tensor *p, int rank, int64_t axis, const char *what)
{
  if (!p || ts_tensor_rank(p) == 0 || (ts_tensor_rank(p) == 1 && ts_tensor_dim(p, 0) == 1))
    return p && ts_tensor_rank(p) == 1 ? ts_reshape_at(HERE, p, TS_SCALAR_SHAPE) : p;
  if (ts_tensor_rank(p) != 1 || axis < -rank || axis >= rank) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "%s of rank %d along axis %" PRId64 " of a rank-%d input "
                   "(only per-tensor and per-axis quantization)", what, ts_tensor_rank(p), axis, rank);
    return NULL;
  }
  ts_shape s = { .rank = rank };
  for (int d = 0; d < rank; d++)
    s.dim[d] = d == (axis < 0 ? axis + rank : axis) ? ts_tensor_dim(p, 0) : 1;
  return ts_reshape_at(HERE, p, s);
}

/* The range of a quantized dtype; false + error for one ONNX does not quantize to. */
static bool quant_range(const onnx_node_ctx *c, ts_dtype dt, double *lo, double *hi)
{
  static const struct { ts_dtype dt; double lo, hi; } RANGES[] = {
    { TS_U8, 0, 255 }, { TS_I8, -128, 127 }, { TS_U16, 0, 65535 }, { TS_I16, -32768, 32767 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(RANGES); i++)
    if (RANGES[i].dt == dt) {
      *lo = RANGES[i].lo;
      *hi = RANGES[i].hi;
      return true;
    }
  onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "quantizing to %s (uint8, int8, uint16 or int16)", ts_dtype_name(dt));
  return false;
}

/* round_half_even(v) + zp, saturated to dt's range, as dt (v and zp float32). */
static ts_tensor *saturate(const onnx_node_ctx *c, ts_tensor *v, ts_tensor *zp, ts_dtype dt)
{
  double lo, hi;
  if (!quant_range(c, dt, &lo, &hi))
    return NULL;
  ts_tensor *r = build(c, "Round", &v, 1);
  if (zp)
    r = ts_add_at(HERE, r, zp);
  r = ts_minimum_at(HERE, ts_maximum_at(HERE, r, scalar(c, TS_F32, lo)), scalar(c, TS_F32, hi));
  return as(c, r, dt);
}

/* x - zero point, widened to int32 (exact). */
static ts_tensor *centered(const onnx_node_ctx *c, ts_tensor *x, ts_tensor *zp)
{
  ts_tensor *w = as(c, x, TS_I32);
  return zp ? ts_sub_at(HERE, w, as(c, zp, TS_I32)) : w;
}

/* Opset 21's blocked quantization (a scale per block of block_size
 * elements along the axis) is refused; 0 is the per-tensor or per-axis
 * kind the rows do. */
static bool not_blocked(onnx_node_ctx *c)
{
  int64_t block = attr_int(c, "block_size", 0);
  if (block != 0)
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "blocked quantization (block_size %" PRId64 ")", block);
  return block == 0;
}

bool onnx_op_quantize_linear(onnx_node_ctx *c)
{
  ts_tensor *x = in(c, 0), *scale = in(c, 1), *zp = in(c, 2);
  if (!x || !scale || !not_blocked(c))
    return false;
  int rank = ts_tensor_rank(x);
  int64_t axis = attr_int(c, "axis", 1), named = attr_int(c, "output_dtype", 0);
  ts_dtype dt = zp ? ts_tensor_dtype(zp) : TS_U8;
  /* opset 21: output_dtype names y's dtype, the zero point's if both are given */
  if (named && (!onnx_dtype((int32_t)named, &dt) || (zp && dt != ts_tensor_dtype(zp)))) {
    onnx_node_fail(c, TS_ERR_DTYPE, "output_dtype %" PRId64 " (%s)%s", named, onnx_dtype_name((int32_t)named),
                   zp ? " differs from the zero point's dtype or is none of ours" : " is none of ours");
    return false;
  }
  if (attr_int(c, "saturate", 1) != 1) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "saturate=0 (float8 outputs)");
    return false;
  }
  scale = along(c, as(c, scale, TS_F32), rank, axis, "the scale");
  ts_tensor *z = zp ? along(c, as(c, zp, TS_F32), rank, axis, "the zero point") : NULL;
  if (!scale || (zp && !z))
    return false;
  c->out[0] = saturate(c, ts_div_at(HERE, as(c, x, TS_F32), scale), z, dt);
  return c->out[0] != NULL;
}

bool onnx_op_dequantize_linear(onnx_node_ctx *c)
{
  ts_tensor *x = in(c, 0), *scale = in(c, 1), *zp = in(c, 2);
  if (!x || !scale || !not_blocked(c))
    return false;
  int rank = ts_tensor_rank(x);
  int64_t axis = attr_int(c, "axis", 1);
  ts_dtype out = ts_tensor_dtype(scale);
  scale = along(c, scale, rank, axis, "the scale");
  ts_tensor *z = zp ? along(c, zp, rank, axis, "the zero point") : NULL;
  if (!scale || (zp && !z))
    return false;
  c->out[0] = ts_mul_at(HERE, as(c, centered(c, x, z), out), scale);
  return c->out[0] != NULL;
}

/* y, its scale and zero point for x in uint8: the range [min(x, 0), max(x, 0)] onto [0, 255]. */
bool onnx_op_dynamic_quantize_linear(onnx_node_ctx *c)
{
  ts_tensor *x = as(c, in(c, 0), TS_F32);
  if (!x)
    return false;
  ts_ints all = { .n = -1 };
  ts_tensor *zero = scalar(c, TS_F32, 0);
  ts_tensor *lo = ts_minimum_at(HERE, ts_reduce_min_at(HERE, x, all, false), zero);
  ts_tensor *hi = ts_maximum_at(HERE, ts_reduce_max_at(HERE, x, all, false), zero);
  ts_tensor *scale = ts_div_at(HERE, ts_sub_at(HERE, hi, lo), scalar(c, TS_F32, 255));
  ts_tensor *zp = saturate(c, ts_neg_at(HERE, ts_div_at(HERE, lo, scale)), NULL, TS_U8);
  c->out[0] = saturate(c, ts_div_at(HERE, x, scale), as(c, zp, TS_F32), TS_U8);
  if (c->n_out > 1)
    c->out[1] = scale;
  if (c->n_out > 2)
    c->out[2] = zp;
  return c->out[0] && scale && zp;
}

/* A's zero point or scale per row ([M]) as a column [M, 1]; B's per
 * column ([N]) broadcasts as it is. */
static ts_tensor *row_param(const onnx_node_ctx *c, ts_tensor *p)
{
  if (p && ts_tensor_rank(p) == 1 && ts_tensor_dim(p, 0) != 1)
    return ts_reshape_at(HERE, p, TS_SHAPE(ts_tensor_dim(p, 0), 1));
  return p;
}

static ts_tensor *integer_matmul(const onnx_node_ctx *c, ts_tensor *a, ts_tensor *a_zp, ts_tensor *b,
                                 ts_tensor *b_zp)
{
  if (!a || !b)
    return NULL;
  ts_tensor *ab[2] = { centered(c, a, row_param(c, a_zp)), centered(c, b, b_zp) };
  return build(c, "MatMul", ab, 2);
}

bool onnx_op_matmul_integer(onnx_node_ctx *c)
{
  c->out[0] = integer_matmul(c, in(c, 0), in(c, 2), in(c, 1), in(c, 3));
  return c->out[0] != NULL;
}

/* The weights' zero point or scale per output channel ([M]) for [N, M, ...]. */
static ts_tensor *channel_param(const onnx_node_ctx *c, ts_tensor *p, int rank, int axis)
{
  return along(c, p, rank, axis, "a per-channel parameter");
}

/* sum (x - x_zp)(w - w_zp) as int32, summed in float64 (exact). */
static ts_tensor *integer_conv(const onnx_node_ctx *c, ts_tensor *x, ts_tensor *x_zp, ts_tensor *w, ts_tensor *w_zp)
{
  if (!x || !w)
    return NULL;
  int rank = ts_tensor_rank(w);
  ts_tensor *wz = w_zp ? channel_param(c, w_zp, rank, 0) : NULL;
  if (w_zp && !wz)
    return NULL;
  ts_tensor *xw[2] = { as(c, centered(c, x, x_zp), TS_F64), as(c, centered(c, w, wz), TS_F64) };
  return as(c, build(c, "Conv", xw, 2), TS_I32);
}

bool onnx_op_conv_integer(onnx_node_ctx *c)
{
  c->out[0] = integer_conv(c, in(c, 0), in(c, 2), in(c, 1), in(c, 3));
  return c->out[0] != NULL;
}

/* The int32 accumulator acc * (a_scale * b_scale / y_scale), requantized. */
static ts_tensor *requantize(const onnx_node_ctx *c, ts_tensor *acc, ts_tensor *a_scale, ts_tensor *b_scale,
                             ts_tensor *y_scale, ts_tensor *y_zp)
{
  if (!acc || !a_scale || !b_scale || !y_scale || !y_zp)
    return NULL;
  ts_tensor *m = ts_div_at(HERE, ts_mul_at(HERE, as(c, a_scale, TS_F32), as(c, b_scale, TS_F32)),
                           as(c, y_scale, TS_F32));
  return saturate(c, ts_mul_at(HERE, as(c, acc, TS_F32), m), as(c, y_zp, TS_F32), ts_tensor_dtype(y_zp));
}

bool onnx_op_qlinear_matmul(onnx_node_ctx *c)
{
  ts_tensor *acc = integer_matmul(c, in(c, 0), in(c, 2), in(c, 3), in(c, 5));
  c->out[0] = requantize(c, acc, row_param(c, in(c, 1)), in(c, 4), in(c, 6), in(c, 7));
  return c->out[0] != NULL;
}

bool onnx_op_qlinear_conv(onnx_node_ctx *c)
{
  ts_tensor *x = in(c, 0), *w = in(c, 3), *bias = in(c, 8);
  ts_tensor *acc = integer_conv(c, x, in(c, 2), w, in(c, 5));
  if (!acc)
    return false;
  int rank = ts_tensor_rank(acc);
  if (bias)
    acc = ts_add_at(HERE, acc, channel_param(c, as(c, bias, TS_I32), rank, 1));
  ts_tensor *w_scale = in(c, 4) ? channel_param(c, in(c, 4), rank, 1) : NULL;
  c->out[0] = requantize(c, acc, in(c, 1), w_scale, in(c, 6), in(c, 7));
  return c->out[0] != NULL;
}
