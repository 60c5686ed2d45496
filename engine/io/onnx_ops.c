/* onnx_ops.c — one row per ONNX op the importer maps, each composing the
 * engine's public ops into exactly what the ONNX operator computes, with
 * the semantics of the model's opset where they changed between 7 and 17.
 * An attribute value a row cannot compute exactly is an error naming it. */
#include "onnx-private.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <string.h>

/* Every op a node becomes has the node's location: the model file, the
 * node's name as the function, its index + 1 as the line (onnx_op_build
 * sets it for the row's call). */
static _Thread_local ts_loc node_loc;
#define HERE node_loc
#define IN(i) ((i) < c->n_in ? c->in[i].t : NULL)

/* ---- attributes ----------------------------------------------------------------- */

static const Onnx__AttributeProto *attr(const onnx_node_ctx *c, const char *name)
{
  for (size_t i = 0; i < c->node->n_attribute; i++)
    if (strcmp(c->node->attribute[i]->name, name) == 0)
      return c->node->attribute[i];
  return NULL;
}

static int64_t attr_int(const onnx_node_ctx *c, const char *name, int64_t def)
{
  const Onnx__AttributeProto *a = attr(c, name);
  return a ? a->i : def;
}

static double attr_float(const onnx_node_ctx *c, const char *name, double def)
{
  const Onnx__AttributeProto *a = attr(c, name);
  return a ? a->f : def;
}

/* A string attribute (bytes in the file, cut to fit) into buf, or def
 * when absent; returns buf. */
static const char *attr_string(const onnx_node_ctx *c, const char *name, const char *def, char *buf,
                               size_t size)
{
  const Onnx__AttributeProto *a = attr(c, name);
  const char *src = a && a->s.data ? (const char *)a->s.data : def;
  size_t len = a && a->s.data ? a->s.len : strlen(def);
  size_t n = len < size - 1 ? len : size - 1;
  memcpy(buf, src, n);
  buf[n] = '\0';
  return buf;
}

/* Up to TS_MAX_RANK ints; false (no error) when absent, false + error when too many. */
static bool attr_ints(const onnx_node_ctx *c, const char *name, ts_ints *out)
{
  const Onnx__AttributeProto *a = attr(c, name);
  if (!a)
    return false;
  if (a->n_ints > TS_MAX_RANK) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "attribute '%s' has %zu values (at most %d)", name, a->n_ints,
                   TS_MAX_RANK);
    return false;
  }
  out->n = (int)a->n_ints;
  for (size_t i = 0; i < a->n_ints; i++)
    out->v[i] = a->ints[i];
  return true;
}

/* Input i's values, known on the host, as up to TS_MAX_RANK ints. */
static bool host_ints(const onnx_node_ctx *c, int i, ts_ints *out)
{
  ts_tensor *h = i < c->n_in ? c->in[i].host : NULL;
  if (!h) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "input %d must be known when the graph is built "
                   "(a constant or computed from constants)", i);
    return false;
  }
  int64_t n = ts_tensor_size(h);
  if (ts_tensor_rank(h) > 1 || n > TS_MAX_RANK || !ts_dtype_is_integer(ts_tensor_dtype(h))) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "input %d must be at most %d integers", i, TS_MAX_RANK);
    return false;
  }
  out->n = (int)n;
  for (int64_t k = 0; k < n; k++)
    out->v[k] = ts_tensor_get_i64(h, k);
  return true;
}

static bool host_double(const onnx_node_ctx *c, int i, double *out)
{
  ts_tensor *h = i < c->n_in ? c->in[i].host : NULL;
  if (!h || ts_tensor_size(h) != 1) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "input %d must be a scalar known when the graph is built", i);
    return false;
  }
  *out = ts_tensor_get_f64(h, 0);
  return true;
}

static bool norm_axis(const onnx_node_ctx *c, int64_t *axis, int rank)
{
  if (*axis < -rank || *axis >= (rank ? rank : 1)) {
    onnx_node_fail(c, TS_ERR_OUT_OF_RANGE, "axis %" PRId64 " is out of range for rank %d", *axis, rank);
    return false;
  }
  if (*axis < 0)
    *axis += rank;
  return true;
}

/* Sizes a model computes (ConstantOfShape's shape, Range's count, Tile's
 * repeats) are capped: a small file must not ask for any amount of memory. */
#define MAX_MADE_ELEMENTS ((int64_t)1 << 31)

static bool check_made(const onnx_node_ctx *c, double elements)
{
  if (elements >= 0 && elements <= (double)MAX_MADE_ELEMENTS)
    return true;
  onnx_node_fail(c, TS_ERR_OUT_OF_RANGE, "it would make %.0f elements (the importer's limit is %" PRId64 ")",
                 elements, MAX_MADE_ELEMENTS);
  return false;
}

static ts_tensor *scalar(ts_tensor *like, double v)
{
  return ts_cast_at(HERE, ts_scalar_f64(v), ts_tensor_dtype(like));
}

static bool out1(onnx_node_ctx *c, ts_tensor *t)
{
  c->out[0] = t;
  return t != NULL;
}

/* ---- elementwise ------------------------------------------------------------------ */

#define UNARY(name, expr)                                                 \
  static bool name(onnx_node_ctx *c)                                     \
  {                                                                       \
    ts_tensor *x = IN(0);                                                 \
    return out1(c, (expr));                                               \
  }
UNARY(op_neg, ts_neg_at(HERE, x))
UNARY(op_abs, ts_abs_at(HERE, x))
UNARY(op_exp, ts_exp_at(HERE, x))
UNARY(op_log, ts_log_at(HERE, x))
UNARY(op_sqrt, ts_sqrt_at(HERE, x))
UNARY(op_tanh, ts_tanh_at(HERE, x))
UNARY(op_sigmoid, ts_sigmoid_at(HERE, x))
UNARY(op_relu, ts_relu_at(HERE, x))
UNARY(op_not, ts_logical_not_at(HERE, x))
UNARY(op_identity, ts_identity_at(HERE, x))
UNARY(op_reciprocal, ts_reciprocal_at(HERE, x))
UNARY(op_floor, ts_floor_at(HERE, x))
UNARY(op_ceil, ts_ceil_at(HERE, x))
UNARY(op_isnan, ts_is_nan_at(HERE, x))
UNARY(op_sign, ts_sign_at(HERE, x))
UNARY(op_round, ts_round_at(HERE, x)) /* half to even */
UNARY(op_softsign, ts_softsign_at(HERE, x))
UNARY(op_softplus, ts_softplus_at(HERE, x)) /* log(1 + exp(x)) without overflow */
UNARY(op_sin, ts_sin_at(HERE, x))
UNARY(op_cos, ts_cos_at(HERE, x))
UNARY(op_tan, ts_tan_at(HERE, x))
UNARY(op_asin, ts_asin_at(HERE, x))
UNARY(op_acos, ts_acos_at(HERE, x))
UNARY(op_atan, ts_atan_at(HERE, x))
UNARY(op_sinh, ts_sinh_at(HERE, x))
UNARY(op_cosh, ts_cosh_at(HERE, x))
UNARY(op_asinh, ts_asinh_at(HERE, x))
UNARY(op_acosh, ts_acosh_at(HERE, x))
UNARY(op_atanh, ts_atanh_at(HERE, x))
UNARY(op_erf, ts_erf_at(HERE, x))

/* BitShift on the unsigned integers: x * 2^s or x / 2^s (wrapping as C's
 * shifts do), 0 for a shift past the width as in NumPy. */
static bool op_bit_shift(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *s = IN(1);
  if (!x || !s)
    return false;
  ts_dtype dt = ts_tensor_dtype(x);
  bool is_unsigned = dt == TS_U8 || dt == TS_U16 || dt == TS_U32 || dt == TS_U64;
  if (!is_unsigned || ts_tensor_dtype(s) != dt) {
    onnx_node_fail(c, TS_ERR_DTYPE, "BitShift takes unsigned integers, got %s and %s",
                   ts_dtype_name(ts_tensor_dtype(x)), ts_dtype_name(ts_tensor_dtype(s)));
    return false;
  }
  char buf[8];
  const char *direction = attr_string(c, "direction", "", buf, sizeof buf);
  bool left = strcmp(direction, "LEFT") == 0;
  if (!left && strcmp(direction, "RIGHT") != 0) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "direction must be LEFT or RIGHT, not '%s'", direction);
    return false;
  }
  double top = (double)(ts_dtype_size(dt) * 8 - 1); /* the widest shift that keeps a bit */
  ts_tensor *p = ts_pow_at(HERE, scalar(x, 2), ts_minimum_at(HERE, s, scalar(s, top)));
  ts_tensor *y = left ? ts_mul_at(HERE, x, p) : ts_floordiv_at(HERE, x, p);
  ts_tensor *past = ts_greater_at(HERE, s, scalar(s, top));
  return out1(c, ts_where_at(HERE, past, ts_zeros_like_at(HERE, x), y));
}

static bool op_leaky_relu(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  double alpha = attr_float(c, "alpha", 0.01);
  return out1(c, ts_where_at(HERE, ts_less_at(HERE, x, scalar(x, 0)), ts_mul_at(HERE, x, scalar(x, alpha)), x));
}

/* alpha 1 is the Elu row; another scales its negative side */
static bool op_elu(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  double alpha = attr_float(c, "alpha", 1.0);
  if (alpha == 1)
    return out1(c, ts_elu_at(HERE, x));
  ts_tensor *neg = ts_mul_at(HERE, scalar(x, alpha), ts_sub_at(HERE, ts_exp_at(HERE, x), scalar(x, 1)));
  return out1(c, ts_where_at(HERE, ts_less_at(HERE, x, scalar(x, 0)), neg, x));
}

static bool op_selu(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  double alpha = attr_float(c, "alpha", 1.67326319217681884765625);
  double gamma = attr_float(c, "gamma", 1.05070102214813232421875);
  /* the defaults are the Selu row's constants (as float attributes) */
  if (alpha == 1.67326319217681884765625 && gamma == 1.05070102214813232421875)
    return out1(c, ts_selu_at(HERE, x));
  ts_tensor *neg = ts_sub_at(HERE, ts_mul_at(HERE, scalar(x, alpha), ts_exp_at(HERE, x)), scalar(x, alpha));
  return out1(c, ts_mul_at(HERE, scalar(x, gamma),
                           ts_where_at(HERE, ts_greater_at(HERE, x, scalar(x, 0)), x, neg)));
}

static bool op_hard_sigmoid(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  double alpha = attr_float(c, "alpha", 0.2), beta = attr_float(c, "beta", 0.5);
  ts_tensor *y = ts_add_at(HERE, ts_mul_at(HERE, x, scalar(x, alpha)), scalar(x, beta));
  return out1(c, ts_maximum_at(HERE, scalar(x, 0), ts_minimum_at(HERE, scalar(x, 1), y)));
}

static bool op_hard_swish(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  ts_tensor *y = ts_add_at(HERE, ts_mul_at(HERE, x, scalar(x, 1.0 / 6)), scalar(x, 0.5));
  return out1(c, ts_mul_at(HERE, x, ts_maximum_at(HERE, scalar(x, 0), ts_minimum_at(HERE, scalar(x, 1), y))));
}

static bool op_thresholded_relu(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  double alpha = attr_float(c, "alpha", 1.0);
  return out1(c, ts_where_at(HERE, ts_greater_at(HERE, x, scalar(x, alpha)), x, scalar(x, 0)));
}

/* Before opset 7, broadcast=1 aligns B's dims with A's from `axis` on
 * (default: the trailing dims); without it the shapes are equal. */
static ts_tensor *legacy_b(onnx_node_ctx *c)
{
  ts_tensor *a = IN(0), *b = IN(1);
  if (!a || !b || !attr_int(c, "broadcast", 0))
    return b;
  int ra = ts_tensor_rank(a), rb = ts_tensor_rank(b);
  int64_t axis = attr_int(c, "axis", ra - rb);
  if (axis < 0 || axis + rb > ra) {
    onnx_node_fail(c, TS_ERR_SHAPE, "broadcast axis %" PRId64 " does not fit rank %d into %d", axis, rb, ra);
    return NULL;
  }
  ts_shape s = { .rank = ra };
  for (int d = 0; d < ra; d++)
    s.dim[d] = d >= axis && d < axis + rb ? ts_tensor_dim(b, d - (int)axis) : 1;
  return ts_reshape_at(HERE, b, s);
}

#define BINARY(name, fn) \
  static bool name(onnx_node_ctx *c) { return out1(c, fn(HERE, IN(0), legacy_b(c))); }
BINARY(op_add, ts_add_at)
BINARY(op_sub, ts_sub_at)
BINARY(op_mul, ts_mul_at)
BINARY(op_equal, ts_equal_at)
BINARY(op_greater, ts_greater_at)
BINARY(op_less, ts_less_at)
BINARY(op_greater_equal, ts_greater_equal_at)
BINARY(op_less_equal, ts_less_equal_at)
BINARY(op_and, ts_logical_and_at)
BINARY(op_or, ts_logical_or_at)
BINARY(op_xor, ts_not_equal_at)

/* Integer Div truncates toward zero (ts_div is true division). */
static bool op_div(onnx_node_ctx *c)
{
  ts_tensor *a = IN(0), *b = legacy_b(c);
  if (!a || !b || ts_dtype_is_float(ts_tensor_dtype(a)))
    return out1(c, ts_div_at(HERE, a, b));
  return out1(c, ts_truncatediv_at(HERE, a, b)); /* integers truncate */
}

/* fmod = 0: the sign of the divisor (ts_mod); fmod = 1: of the dividend (C fmod). */
static bool op_mod(onnx_node_ctx *c)
{
  ts_tensor *a = IN(0), *b = IN(1);
  return out1(c, attr_int(c, "fmod", 0) ? ts_truncatemod_at(HERE, a, b) : ts_mod_at(HERE, a, b));
}

static bool op_pow(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  return out1(c, x ? ts_cast_at(HERE, ts_pow_at(HERE, x, legacy_b(c)), ts_tensor_dtype(x)) : NULL);
}

static ts_tensor *channel(ts_tensor *v, int rank);
static ts_tensor *unsqueeze(ts_tensor *x, int axis);

static bool op_prelu(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *slope = IN(1);
  if (!x || !slope)
    return false;
  /* before 7 a vector slope is per channel (dim 1); after, it broadcasts */
  if (c->opset < 7 && ts_tensor_rank(slope) == 1 && ts_tensor_rank(x) >= 2 && ts_tensor_size(slope) > 1)
    slope = channel(slope, ts_tensor_rank(x));
  return out1(c, ts_where_at(HERE, ts_less_at(HERE, x, scalar(x, 0)), ts_mul_at(HERE, x, slope), x));
}

static bool variadic(onnx_node_ctx *c, ts_tensor *(*fn)(ts_loc, ts_tensor *, ts_tensor *))
{
  ts_tensor *acc = IN(0);
  for (int i = 1; i < c->n_in; i++)
    acc = fn(HERE, acc, IN(i));
  /* one input: a node of its own all the same */
  return out1(c, c->n_in == 1 ? ts_identity_at(HERE, acc) : acc);
}

static bool op_sum(onnx_node_ctx *c) { return variadic(c, ts_add_at); }
static bool op_max(onnx_node_ctx *c) { return variadic(c, ts_maximum_at); }
static bool op_min(onnx_node_ctx *c) { return variadic(c, ts_minimum_at); }

static bool op_mean(onnx_node_ctx *c)
{
  if (!variadic(c, ts_add_at))
    return false;
  return out1(c, ts_div_at(HERE, c->out[0], scalar(c->out[0], c->n_in)));
}

static bool op_where(onnx_node_ctx *c) { return out1(c, ts_where_at(HERE, IN(0), IN(1), IN(2))); }

static bool op_clip(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *lo = NULL, *hi = NULL;
  if (c->opset < 11) {
    lo = attr(c, "min") ? scalar(x, attr_float(c, "min", 0)) : NULL;
    hi = attr(c, "max") ? scalar(x, attr_float(c, "max", 0)) : NULL;
  } else {
    lo = IN(1);
    hi = IN(2);
  }
  ts_tensor *y = x;
  if (lo)
    y = ts_maximum_at(HERE, y, lo);
  if (hi)
    y = ts_minimum_at(HERE, y, hi);
  return out1(c, y == x ? ts_identity_at(HERE, x) : y);
}

/* ---- casts and constants ------------------------------------------------------------ */

static bool dtype_of(const onnx_node_ctx *c, int64_t onnx, ts_dtype *out)
{
  if (onnx_dtype((int32_t)onnx, out))
    return true;
  onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "dtype %s is not one the engine has", onnx_dtype_name((int32_t)onnx));
  return false;
}

static bool op_cast(onnx_node_ctx *c)
{
  ts_dtype to;
  return dtype_of(c, attr_int(c, "to", 0), &to) && out1(c, onnx_cast(HERE, IN(0), to));
}

static bool op_cast_like(onnx_node_ctx *c)
{
  return IN(1) && out1(c, onnx_cast(HERE, IN(0), ts_tensor_dtype(IN(1))));
}

static bool op_constant(onnx_node_ctx *c)
{
  const Onnx__AttributeProto *a = c->node->n_attribute == 1 ? c->node->attribute[0] : NULL;
  if (!a) {
    onnx_node_fail(c, TS_ERR_FORMAT, "a Constant needs exactly one attribute");
    return false;
  }
  if (strcmp(a->name, "value") == 0 && a->t) {
    char *what = g_strdup_printf("Constant '%s'", c->name);
    ts_tensor *t = onnx_tensor_decode(c->file, a->t, what);
    g_free(what);
    return out1(c, t ? ts_identity_at(HERE, t) : NULL);
  }
  if (strcmp(a->name, "value_float") == 0)
    return out1(c, ts_scalar_f32(a->f));
  if (strcmp(a->name, "value_int") == 0)
    return out1(c, ts_scalar_i64(a->i));
  if (strcmp(a->name, "value_floats") == 0)
    return out1(c, a->n_floats <= INT32_MAX ? ts_constant(TS_F32, TS_SHAPE((int64_t)a->n_floats), a->floats) : NULL);
  if (strcmp(a->name, "value_ints") == 0)
    return out1(c, a->n_ints <= INT32_MAX ? ts_constant(TS_I64, TS_SHAPE((int64_t)a->n_ints), a->ints) : NULL);
  onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "attribute '%s' is not supported", a->name);
  return false;
}

static bool shape_from_host(onnx_node_ctx *c, int i, ts_shape *shape)
{
  ts_ints v;
  if (!host_ints(c, i, &v))
    return false;
  shape->rank = v.n;
  for (int k = 0; k < v.n; k++) {
    if (v.v[k] < 0) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "dim %d of the shape is negative", k);
      return false;
    }
    shape->dim[k] = v.v[k];
  }
  double n = 1;
  for (int k = 0; k < v.n; k++)
    n *= (double)shape->dim[k];
  return check_made(c, n);
}

static bool op_constant_of_shape(onnx_node_ctx *c)
{
  ts_shape shape;
  if (!shape_from_host(c, 0, &shape))
    return false;
  const Onnx__AttributeProto *a = attr(c, "value");
  ts_tensor *value = ts_scalar_f32(0);
  if (a && a->t) {
    char *what = g_strdup_printf("ConstantOfShape '%s' value", c->name);
    value = onnx_tensor_decode(c->file, a->t, what);
    g_free(what);
    if (value && ts_tensor_size(value) != 1) {
      onnx_node_fail(c, TS_ERR_FORMAT, "value must have one element");
      return false;
    }
    value = ts_reshape_at(HERE, value, TS_SCALAR_SHAPE);
  }
  return out1(c, ts_fill_at(HERE, shape, value));
}

static bool op_range(onnx_node_ctx *c)
{
  double start, limit, delta;
  if (!IN(0) || !host_double(c, 0, &start) || !host_double(c, 1, &limit) || !host_double(c, 2, &delta))
    return false;
  if (delta == 0 || isnan(start) || isnan(limit) || isnan(delta)) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "delta is 0, or a bound is NaN");
    return false;
  }
  if (!check_made(c, ceil((limit - start) / delta) > 0 ? ceil((limit - start) / delta) : 0))
    return false;
  return out1(c, ts_range_at(HERE, ts_tensor_dtype(IN(0)), start, limit, delta));
}

/* HannWindow, HammingWindow and BlackmanWindow: a0 - a1 cos(2 pi n / N)
 * + a2 cos(4 pi n / N) for n = 0 .. size - 1, N the size (periodic) or
 * one less (symmetric); computed in float64, then cast. */
static bool window_function(onnx_node_ctx *c, double a0, double a1, double a2)
{
  double size;
  ts_dtype dtype = TS_F32;
  if (!IN(0) || !host_double(c, 0, &size) || !dtype_of(c, attr_int(c, "output_datatype", 1), &dtype))
    return false;
  if (!(size >= 0) || size != floor(size)) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "size %g is not a non-negative integer", size);
    return false;
  }
  if (!check_made(c, size))
    return false;
  double period = attr_int(c, "periodic", 1) ? size : size - 1;
  ts_tensor *phase = ts_mul_at(HERE, ts_range_at(HERE, TS_F64, 0, size, 1), ts_scalar_f64(2 * M_PI / period));
  ts_tensor *y = ts_sub_at(HERE, ts_scalar_f64(a0), ts_mul_at(HERE, ts_scalar_f64(a1), ts_cos_at(HERE, phase)));
  if (a2 != 0)
    y = ts_add_at(HERE, y, ts_mul_at(HERE, ts_scalar_f64(a2),
                                     ts_cos_at(HERE, ts_mul_at(HERE, phase, ts_scalar_f64(2)))));
  return out1(c, ts_cast_at(HERE, y, dtype));
}

static bool op_hann_window(onnx_node_ctx *c)
{
  return window_function(c, 0.5, 0.5, 0);
}

static bool op_hamming_window(onnx_node_ctx *c)
{
  return window_function(c, 25.0 / 46, 1 - 25.0 / 46, 0);
}

static bool op_blackman_window(onnx_node_ctx *c)
{
  return window_function(c, 0.42, 0.5, 0.08);
}

/* ---- shapes ---------------------------------------------------------------------------- */

static bool op_shape(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  ts_tensor *s = ts_cast_at(HERE, ts_shape_at(HERE, x), TS_I64);
  if (!s)
    return false;
  int rank = ts_tensor_rank(x);
  int64_t start = attr_int(c, "start", 0), end = attr_int(c, "end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = start < 0 ? 0 : start > rank ? rank : start;
  end = end < start ? start : end > rank ? rank : end;
  if (start != 0 || end != rank)
    s = ts_slice_at(HERE, s, TS_INTS(start), TS_INTS(end - start));
  return out1(c, s);
}

/* Shape and Size read only their input's shape: where it is known when
 * the graph is built, their value on the host (NULL where it is not), so
 * that the shapes later nodes compute from it (an LSTM's zero state
 * expanded to the batch, a reshape's target) are known too, as PyTorch's
 * exports need. */
ts_tensor *onnx_shape_host(const onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x || c->n_out < 1)
    return NULL;
  ts_shape s = ts_tensor_shape(x);
  for (int d = 0; d < s.rank; d++)
    if (s.dim[d] < 0)
      return NULL;
  if (strcmp(c->node->op_type, "Size") == 0) {
    int64_t n = ts_shape_size(s);
    return n < 0 ? NULL : ts_constant(TS_I64, TS_SHAPE(), &n);
  }
  if (strcmp(c->node->op_type, "Shape") != 0)
    return NULL;
  int rank = s.rank;
  int64_t start = attr_int(c, "start", 0), end = attr_int(c, "end", rank);
  start += start < 0 ? rank : 0;
  end += end < 0 ? rank : 0;
  start = start < 0 ? 0 : start > rank ? rank : start;
  end = end < start ? start : end > rank ? rank : end;
  return ts_constant(TS_I64, TS_SHAPE(end - start), s.dim + start);
}

static bool op_size(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  return out1(c, ts_reduce_prod_at(HERE, ts_cast_at(HERE, ts_shape_at(HERE, x), TS_I64), TS_ALL_AXES, false));
}

/* x reshaped to dims (at most one of them -1). */
static ts_tensor *reshape(ts_tensor *x, ts_shape dims)
{
  return ts_reshape_at(HERE, x, dims);
}

static bool op_reshape(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  ts_ints v;
  if (!x || !host_ints(c, 1, &v))
    return false;
  bool allowzero = attr_int(c, "allowzero", 0) != 0;
  ts_shape in = ts_tensor_shape(x), out = { .rank = v.n };
  for (int k = 0; k < v.n; k++) {
    int64_t d = v.v[k];
    if (d == 0 && !allowzero) {
      if (k >= in.rank) {
        onnx_node_fail(c, TS_ERR_SHAPE, "dim %d is 0 (copy) but the input has rank %d", k, in.rank);
        return false;
      }
      d = in.dim[k];
    }
    if (d < -1) {
      onnx_node_fail(c, TS_ERR_SHAPE, "dim %d is %" PRId64, k, d);
      return false;
    }
    out.dim[k] = d;
  }
  if (allowzero && ts__reshape_reads_dims(out)) { /* the spec's rule; ours would pick one */
    onnx_node_fail(c, TS_ERR_SHAPE, "shape holds both 0 and -1, which allowzero=1 leaves undetermined");
    return false;
  }
  return out1(c, reshape(x, out));
}

static bool op_flatten(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  ts_shape s = ts_tensor_shape(x);
  int64_t axis = attr_int(c, "axis", 1);
  if (axis != s.rank && !norm_axis(c, &axis, s.rank))
    return false;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < s.rank; d++) {
    int64_t *p = d < axis ? &outer : &inner;
    *p = (*p < 0 || s.dim[d] < 0) ? -1 : *p * s.dim[d];
  }
  if (outer < 0 && inner < 0) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "unknown dims on both sides of the axis");
    return false;
  }
  return out1(c, reshape(x, TS_SHAPE(outer, inner)));
}

static bool op_transpose(onnx_node_ctx *c)
{
  ts_ints perm;
  if (!attr_ints(c, "perm", &perm)) {
    if (ts_failed())
      return false;
    perm = TS_ALL_AXES;
  }
  return out1(c, ts_transpose_at(HERE, IN(0), perm));
}

static bool op_concat(onnx_node_ctx *c)
{
  ts_tensor **xs = g_new(ts_tensor *, c->n_in + 1);
  int n = 0;
  for (int i = 0; i < c->n_in; i++)
    if (IN(i))
      xs[n++] = IN(i);
  int64_t axis = attr_int(c, "axis", 0);
  bool ok = n > 0 && norm_axis(c, &axis, ts_tensor_rank(xs[0])) &&
            out1(c, n == 1 ? ts_identity_at(HERE, xs[0]) : ts_concat_at(HERE, xs, n, (int)axis));
  g_free(xs);
  return ok;
}

static bool op_split(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  int64_t axis = attr_int(c, "axis", 0);
  if (!norm_axis(c, &axis, ts_tensor_rank(x)))
    return false;
  ts_ints sizes = { .n = 0 };
  bool given = c->opset >= 13 ? (IN(1) && host_ints(c, 1, &sizes)) : attr_ints(c, "split", &sizes);
  if (ts_failed())
    return false;
  int64_t parts = attr_int(c, "num_outputs", c->n_out), dim = ts_tensor_dim(x, (int)axis);
  if (parts != c->n_out) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "num_outputs %" PRId64 " for %d outputs", parts, c->n_out);
    return false;
  }
  if (given && attr(c, "num_outputs")) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "both split sizes and num_outputs");
    return false;
  }
  /* num_outputs (opset 18): parts of ceil(dim / n), the last smaller */
  if (!given && attr(c, "num_outputs") && dim >= 0 && dim % parts != 0) {
    int64_t chunk = (dim + parts - 1) / parts;
    if (parts > TS_MAX_RANK) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "an uneven split into %" PRId64 " parts (at most %d)",
                     parts, TS_MAX_RANK);
      return false;
    }
    if (chunk * (parts - 1) >= dim) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "a dim of %" PRId64 " cannot make %" PRId64 " parts",
                     dim, parts);
      return false;
    }
    sizes.n = (int)parts;
    for (int i = 0; i < sizes.n; i++)
      sizes.v[i] = i + 1 < sizes.n ? chunk : dim - chunk * (parts - 1);
    given = true;
  }
  if (!given)
    return ts_split_at(HERE, x, c->n_out, (int)axis, c->out) == c->n_out;
  if (sizes.n != c->n_out) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "%d split sizes for %d outputs", sizes.n, c->n_out);
    return false;
  }
  int64_t at = 0;
  for (int i = 0; i < sizes.n; i++) {
    ts_ints begin = { .n = ts_tensor_rank(x) }, size = { .n = ts_tensor_rank(x) };
    for (int d = 0; d < begin.n; d++) {
      begin.v[d] = d == axis ? at : 0;
      size.v[d] = d == axis ? sizes.v[i] : -1;
    }
    c->out[i] = ts_slice_at(HERE, x, begin, size);
    at += sizes.v[i];
  }
  return !ts_failed();
}

/* ONNX Slice: clamped starts and ends per axis, any step; steps other than 1 gather. */
static bool op_slice(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  ts_ints starts, ends, axes = { .n = -1 }, steps = { .n = -1 };
  if (c->opset < 10) {
    if (!attr_ints(c, "starts", &starts) || !attr_ints(c, "ends", &ends))
      return ts_failed() ? false : (onnx_node_fail(c, TS_ERR_FORMAT, "starts and ends are required"), false);
    if (!attr_ints(c, "axes", &axes) && ts_failed())
      return false;
  } else {
    if (!host_ints(c, 1, &starts) || !host_ints(c, 2, &ends))
      return false;
    if (IN(3) && !host_ints(c, 3, &axes))
      return false;
    if (IN(4) && !host_ints(c, 4, &steps))
      return false;
  }
  int rank = ts_tensor_rank(x);
  ts_shape s = ts_tensor_shape(x);
  if (axes.n < 0) {
    axes.n = starts.n;
    for (int i = 0; i < axes.n; i++)
      axes.v[i] = i;
  }
  if (starts.n != ends.n || axes.n != starts.n || (steps.n >= 0 && steps.n != starts.n)) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "starts, ends, axes and steps differ in length");
    return false;
  }
  ts_ints begin = { .n = rank }, size = { .n = rank };
  for (int d = 0; d < rank; d++) {
    begin.v[d] = 0;
    size.v[d] = -1;
  }
  ts_tensor *y = x;
  ts_ints flip = { .n = 0 }; /* the axes of step -1: reversed, then sliced */
  for (int i = 0; i < starts.n; i++) {
    int64_t axis = axes.v[i], step = steps.n >= 0 ? steps.v[i] : 1;
    if (!norm_axis(c, &axis, rank))
      return false;
    int64_t dim = s.dim[axis];
    if (dim < 0) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "slicing an unknown dim (axis %" PRId64 ")", axis);
      return false;
    }
    if (step == 0) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "step 0");
      return false;
    }
    int64_t st = starts.v[i], en = ends.v[i];
    st = st < 0 ? st + dim : st;
    en = en < 0 ? en + dim : en;
    if (step > 0) {
      st = st < 0 ? 0 : st > dim ? dim : st;
      en = en < 0 ? 0 : en > dim ? dim : en;
    } else {
      st = st < 0 ? -1 : st > dim - 1 ? dim - 1 : st;
      en = en < -1 ? -1 : en > dim - 1 ? dim - 1 : en;
    }
    if (step == 1) {
      begin.v[axis] = st;
      size.v[axis] = en > st ? en - st : 0;
      continue;
    }
    if (step == -1) { /* st down to past en: [dim - 1 - st, dim - 1 - en) of x reversed */
      flip.v[flip.n++] = axis;
      begin.v[axis] = st < 0 ? 0 : dim - 1 - st;
      size.v[axis] = st > en ? st - en : 0;
      continue;
    }
    int64_t count = step > 0 ? (en > st ? (en - st + step - 1) / step : 0)
                             : (st > en ? (st - en + (-step) - 1) / (-step) : 0);
    ts_tensor *idx = ts_range_at(HERE, TS_I64, (double)st, (double)st + (double)count * (double)step, (double)step);
    y = ts_gather_at(HERE, y, idx, (int)axis);
  }
  if (flip.n > 0)
    y = ts_reverse_at(HERE, y, flip);
  return out1(c, ts_slice_at(HERE, y, begin, size));
}

static bool op_gather(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *idx = IN(1);
  if (!x || !idx)
    return false;
  int64_t axis = attr_int(c, "axis", 0);
  if (!norm_axis(c, &axis, ts_tensor_rank(x)))
    return false;
  int64_t dim = ts_tensor_dim(x, (int)axis);
  if (dim >= 0) /* negative indices count from the end */
    idx = ts_where_at(HERE, ts_less_at(HERE, idx, scalar(idx, 0)), ts_add_at(HERE, idx, scalar(idx, (double)dim)), idx);
  return out1(c, ts_gather_at(HERE, x, idx, (int)axis));
}

static bool axes_of(onnx_node_ctx *c, int since_input, ts_ints *axes)
{
  if (c->opset >= since_input)
    return IN(1) ? host_ints(c, 1, axes) : (axes->n = -1, true);
  if (c->n_in > 1) {
    onnx_node_fail(c, TS_ERR_FORMAT, "axes as an input came with opset %d; the model's is %" PRId64,
                   since_input, c->opset);
    return false;
  }
  if (!attr_ints(c, "axes", axes)) {
    if (ts_failed())
      return false;
    axes->n = -1;
  }
  return true;
}

static bool op_squeeze(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  ts_ints axes;
  if (!x || !axes_of(c, 13, &axes))
    return false;
  ts_shape s = ts_tensor_shape(x), out = { .rank = 0 };
  bool drop[TS_MAX_RANK] = { false };
  for (int i = 0; i < axes.n; i++) {
    int64_t a = axes.v[i];
    if (!norm_axis(c, &a, s.rank))
      return false;
    if (s.dim[a] != 1 && s.dim[a] >= 0) {
      onnx_node_fail(c, TS_ERR_SHAPE, "axis %" PRId64 " has size %" PRId64 ", not 1", a, s.dim[a]);
      return false;
    }
    drop[a] = true;
  }
  for (int d = 0; d < s.rank; d++)
    if (!(axes.n < 0 ? s.dim[d] == 1 : drop[d]))
      out.dim[out.rank++] = s.dim[d];
  return out1(c, reshape(x, out));
}

static bool op_unsqueeze(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  ts_ints axes;
  if (!x || !axes_of(c, 13, &axes))
    return false;
  if (axes.n < 0) {
    onnx_node_fail(c, TS_ERR_FORMAT, "axes are required");
    return false;
  }
  ts_shape s = ts_tensor_shape(x);
  int rank = s.rank + axes.n;
  if (rank > TS_MAX_RANK) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "rank %d is over the engine's %d", rank, TS_MAX_RANK);
    return false;
  }
  bool one[TS_MAX_RANK] = { false };
  for (int i = 0; i < axes.n; i++) {
    int64_t a = axes.v[i];
    if (!norm_axis(c, &a, rank) || one[a]) {
      if (!ts_failed())
        onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "axis %" PRId64 " given twice", a);
      return false;
    }
    one[a] = true;
  }
  ts_shape out = { .rank = rank };
  for (int d = 0, k = 0; d < rank; d++)
    out.dim[d] = one[d] ? 1 : s.dim[k++];
  return out1(c, reshape(x, out));
}

/* x broadcast against shape: where(true of that shape, x, x) keeps x's dtype. */
static bool op_expand(onnx_node_ctx *c)
{
  ts_shape shape;
  if (!IN(0) || !shape_from_host(c, 1, &shape))
    return false;
  return out1(c, ts_where_at(HERE, ts_ones_at(HERE, TS_BOOL, shape), IN(0), IN(0)));
}

/* Tile: our Tile row, the repeats known when the graph is built. */
static bool op_tile(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  ts_ints reps;
  if (!x || !host_ints(c, 1, &reps))
    return false;
  double made = (double)(ts_tensor_size(x) > 0 ? ts_tensor_size(x) : 1);
  for (int d = 0; d < reps.n; d++)
    made *= (double)(reps.v[d] > 0 ? reps.v[d] : 0);
  if (!check_made(c, made))
    return false;
  return out1(c, ts_tile_at(HERE, x, reps));
}

/* ---- reductions ------------------------------------------------------------------------- */

typedef ts_tensor *(*reduce_fn)(ts_loc, ts_tensor *, ts_ints, bool);

static bool reduce(onnx_node_ctx *c, reduce_fn fn, int since_input, ts_tensor *x, bool *noop)
{
  ts_ints axes;
  if (!IN(0) || !axes_of(c, since_input, &axes))
    return false;
  bool keep = attr_int(c, "keepdims", 1) != 0;
  *noop = (axes.n <= 0) && attr_int(c, "noop_with_empty_axes", 0);
  if (*noop)
    return out1(c, ts_identity_at(HERE, x));
  if (axes.n == 0)
    axes.n = -1;
  return out1(c, fn(HERE, x, axes, keep));
}

#define REDUCE(name, fn, since)                                                \
  static bool name(onnx_node_ctx *c)                                          \
  {                                                                            \
    bool noop;                                                                 \
    return reduce(c, fn, since, IN(0), &noop);                                 \
  }
REDUCE(op_reduce_sum, ts_reduce_sum_at, 13)
REDUCE(op_reduce_mean, ts_reduce_mean_at, 18)
/* bools (opset 20): the max is any, the min all */
static ts_tensor *reduce_max_at(ts_loc loc, ts_tensor *x, ts_ints axes, bool keep)
{
  return (x && ts_tensor_dtype(x) == TS_BOOL ? ts_reduce_any_at : ts_reduce_max_at)(loc, x, axes, keep);
}

static ts_tensor *reduce_min_at(ts_loc loc, ts_tensor *x, ts_ints axes, bool keep)
{
  return (x && ts_tensor_dtype(x) == TS_BOOL ? ts_reduce_all_at : ts_reduce_min_at)(loc, x, axes, keep);
}

REDUCE(op_reduce_max, reduce_max_at, 18)
REDUCE(op_reduce_min, reduce_min_at, 18)
REDUCE(op_reduce_prod, ts_reduce_prod_at, 18)

static bool op_reduce_sum_square(onnx_node_ctx *c)
{
  bool noop;
  ts_tensor *x = IN(0);
  return reduce(c, ts_reduce_sum_at, 18, ts_mul_at(HERE, x, x), &noop);
}

static bool op_reduce_l1(onnx_node_ctx *c)
{
  bool noop;
  return reduce(c, ts_reduce_sum_at, 18, ts_abs_at(HERE, IN(0)), &noop);
}

static bool op_reduce_l2(onnx_node_ctx *c)
{
  bool noop;
  ts_tensor *x = IN(0);
  if (!reduce(c, ts_reduce_sum_at, 18, ts_mul_at(HERE, x, x), &noop))
    return false;
  return noop || out1(c, ts_cast_at(HERE, ts_sqrt_at(HERE, c->out[0]), ts_tensor_dtype(x)));
}

static bool op_reduce_log_sum(onnx_node_ctx *c)
{
  bool noop;
  if (!reduce(c, ts_reduce_sum_at, 18, IN(0), &noop))
    return false;
  return noop || out1(c, ts_log_at(HERE, c->out[0]));
}

static bool op_reduce_log_sum_exp(onnx_node_ctx *c)
{
  bool noop;
  if (!reduce(c, ts_reduce_sum_at, 18, ts_exp_at(HERE, IN(0)), &noop))
    return false;
  return noop || out1(c, ts_log_at(HERE, c->out[0]));
}

static bool arg_reduce(onnx_node_ctx *c, bool min)
{
  ts_tensor *v = IN(0);
  if (!v)
    return false;
  int64_t axis = attr_int(c, "axis", 0);
  if (!norm_axis(c, &axis, ts_tensor_rank(v)))
    return false;
  int64_t dim = ts_tensor_dim(v, (int)axis);
  bool last = attr_int(c, "select_last_index", 0) != 0;
  if (last && dim < 0) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "select_last_index on an unknown dim");
    return false;
  }
  /* the last best: the first of the reversed axis, counted back */
  if (last)
    v = ts_gather_at(HERE, v, ts_range_at(HERE, TS_I64, (double)dim - 1, -1, -1), (int)axis);
  ts_tensor *y = (min ? ts_argmin_at : ts_argmax_at)(HERE, v, (int)axis);
  if (last)
    y = ts_sub_at(HERE, ts_scalar_i64(dim - 1), y);
  if (y && attr_int(c, "keepdims", 1))
    y = unsqueeze(y, (int)axis);
  return out1(c, y);
}

static bool op_argmax(onnx_node_ctx *c) { return arg_reduce(c, false); }
static bool op_argmin(onnx_node_ctx *c) { return arg_reduce(c, true); }

/* ---- softmax ------------------------------------------------------------------------------ */

static bool softmax(onnx_node_ctx *c, ts_tensor *(*fn)(ts_loc, ts_tensor *))
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  int rank = ts_tensor_rank(x);
  if (c->opset < 13) {
    /* the input seen as 2-D [outer, inner] at axis (default 1) */
    int64_t axis = attr_int(c, "axis", 1);
    if (axis != rank && !norm_axis(c, &axis, rank))
      return false;
    ts_shape s = ts_tensor_shape(x);
    int64_t inner = 1;
    for (int d = (int)axis; d < rank; d++)
      inner = (inner < 0 || s.dim[d] < 0) ? -1 : inner * s.dim[d];
    if (inner < 0) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "unknown dims after the axis");
      return false;
    }
    return out1(c, reshape(fn(HERE, reshape(x, TS_SHAPE(-1, inner))), s));
  }
  int64_t axis = attr_int(c, "axis", -1);
  if (!norm_axis(c, &axis, rank))
    return false;
  if (axis == rank - 1)
    return out1(c, fn(HERE, x));
  ts_ints perm = { .n = rank };
  for (int d = 0; d < rank; d++)
    perm.v[d] = d;
  perm.v[axis] = rank - 1;
  perm.v[rank - 1] = axis;
  return out1(c, ts_transpose_at(HERE, fn(HERE, ts_transpose_at(HERE, x, perm)), perm));
}

static bool op_softmax(onnx_node_ctx *c) { return softmax(c, ts_softmax_at); }
static bool op_log_softmax(onnx_node_ctx *c) { return softmax(c, ts_log_softmax_at); }

/* ---- matrix products ----------------------------------------------------------------------- */

static bool op_matmul(onnx_node_ctx *c)
{
  ts_tensor *a = IN(0), *b = IN(1);
  if (!a || !b)
    return false;
  int ra = ts_tensor_rank(a), rb = ts_tensor_rank(b);
  if (ra == 0 || rb == 0) {
    onnx_node_fail(c, TS_ERR_SHAPE, "MatMul of a scalar");
    return false;
  }
  /* NumPy: a vector is a row on the left, a column on the right, then dropped */
  if (ra == 1)
    a = reshape(a, TS_SHAPE(1, ts_tensor_dim(a, 0)));
  if (rb == 1)
    b = reshape(b, TS_SHAPE(ts_tensor_dim(b, 0), 1));
  ts_tensor *y = ts_matmul_at(HERE, a, b, false, false);
  if (y && (ra == 1 || rb == 1)) {
    ts_shape s = ts_tensor_shape(y), out = { .rank = 0 };
    for (int d = 0; d < s.rank; d++)
      if (!((ra == 1 && d == s.rank - 2) || (rb == 1 && d == s.rank - 1)))
        out.dim[out.rank++] = s.dim[d];
    y = reshape(y, out);
  }
  return out1(c, y);
}

static bool op_gemm(onnx_node_ctx *c)
{
  ts_tensor *a = IN(0), *b = IN(1), *cc = IN(2);
  if (!a || !b)
    return false;
  double alpha = attr_float(c, "alpha", 1), beta = attr_float(c, "beta", 1);
  ts_tensor *y = ts_matmul_at(HERE, a, b, attr_int(c, "transA", 0) != 0, attr_int(c, "transB", 0) != 0);
  if (y && alpha != 1)
    y = ts_mul_at(HERE, y, scalar(y, alpha));
  if (y && cc && beta != 0)
    y = ts_add_at(HERE, y, beta == 1 ? cc : ts_mul_at(HERE, cc, scalar(cc, beta)));
  return out1(c, y);
}

/* ---- convolution and pooling (2-D, NCHW) ------------------------------------------------------ */

/* x with `before` and `after` elements of value added on axis. */
static ts_tensor *pad_axis(ts_tensor *x, int axis, int64_t before, int64_t after, double value)
{
  if (!x || (before == 0 && after == 0))
    return x;
  ts_tensor *parts[3];
  int n = 0;
  ts_shape s = ts_tensor_shape(x);
  ts_tensor *v = scalar(x, value);
  if (before > 0) {
    s.dim[axis] = before;
    parts[n++] = ts_fill_at(HERE, s, v);
  }
  parts[n++] = x;
  if (after > 0) {
    s.dim[axis] = after;
    parts[n++] = ts_fill_at(HERE, s, v);
  }
  return ts_concat_at(HERE, parts, n, axis);
}

typedef struct window {
  int64_t k[2], stride[2], dilation[2], pad_begin[2], pad_end[2];
} window;

/* An attribute of one value per spatial dim (n of them: 1 or 2) as 2 (a
 * 1-D op runs as 2-D with a leading dim of 1, where it is `unit`); ints
 * of twice that for pads. */
static bool spatial_attr(onnx_node_ctx *c, const char *name, int n, int per_dim, int64_t unit, int64_t *out)
{
  ts_ints v;
  if (!attr_ints(c, name, &v))
    return !ts_failed();
  if (v.n != n * per_dim) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "%d values in '%s' for %d spatial dims", v.n, name, n);
    return false;
  }
  for (int p = 0; p < per_dim; p++)
    for (int i = 0; i < 2; i++)
      out[p * 2 + i] = n == 2 ? v.v[p * 2 + i] : i == 0 ? unit : v.v[p];
  return true;
}

/* Spatial dim i (0, 1) of x as a 2-D window sees it (a 1-D input: 1, W). */
static int64_t window_dim(ts_tensor *x, int i)
{
  int n = ts_tensor_rank(x) - 2;
  return n == 1 && i == 0 ? 1 : ts_tensor_dim(x, 2 + i - (2 - n));
}

/* The total of TensorFlow's SAME pads (ONNX's SAME_UPPER) on spatial dim i
 * of x for w's kernel, stride and dilation; -1 when the dim is unknown. */
static int64_t same_total(ts_tensor *x, const window *w, int i)
{
  int64_t in = window_dim(x, i);
  if (in < 0)
    return -1;
  int64_t outd = (in + w->stride[i] - 1) / w->stride[i];
  int64_t total = (outd - 1) * w->stride[i] + (w->k[i] - 1) * w->dilation[i] + 1 - in;
  return total < 0 ? 0 : total;
}

/* Kernel, strides, dilations and pads of a window op on input x (N, C and
 * one or two spatial dims), as 2-D.  false + error. */
static bool window_of(onnx_node_ctx *c, ts_tensor *x, const int64_t kernel[2], window *w)
{
  int n = ts_tensor_rank(x) - 2;
  if (n != 1 && n != 2) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "only 1-D and 2-D windows are supported, not %d-D", n);
    return false;
  }
  for (int i = 0; i < 2; i++) {
    w->k[i] = kernel[i];
    w->stride[i] = w->dilation[i] = 1;
    w->pad_begin[i] = w->pad_end[i] = 0;
  }
  int64_t pads[4] = { 0, 0, 0, 0 };
  if (!spatial_attr(c, "strides", n, 1, 1, w->stride) || !spatial_attr(c, "dilations", n, 1, 1, w->dilation) ||
      !spatial_attr(c, "pads", n, 2, 0, pads))
    return false;
  char buf[32];
  const char *auto_pad = attr_string(c, "auto_pad", "NOTSET", buf, sizeof buf);
  if (strcmp(auto_pad, "NOTSET") == 0) {
    for (int i = 0; i < 2; i++) {
      w->pad_begin[i] = pads[i];
      w->pad_end[i] = pads[i + 2];
    }
  } else if (strcmp(auto_pad, "SAME_UPPER") == 0 || strcmp(auto_pad, "SAME_LOWER") == 0) {
    for (int i = 2 - n; i < 2; i++) {
      int64_t total = same_total(x, w, i);
      if (total < 0) {
        onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "auto_pad on an unknown spatial dim");
        return false;
      }
      bool upper = auto_pad[5] == 'U';
      w->pad_begin[i] = upper ? total / 2 : total - total / 2;
      w->pad_end[i] = total - w->pad_begin[i];
    }
  } else if (strcmp(auto_pad, "VALID") != 0) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "auto_pad '%s'", auto_pad);
    return false;
  }
  for (int i = 0; i < 2; i++)
    if (w->k[i] <= 0 || w->stride[i] <= 0 || w->dilation[i] <= 0 || w->pad_begin[i] < 0 || w->pad_end[i] < 0 ||
        w->k[i] > 1 << 16 || w->stride[i] > INT32_MAX || (w->k[i] - 1) * w->dilation[i] >= 1 << 16 ||
        w->pad_begin[i] > 1 << 20 || w->pad_end[i] > 1 << 20) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "kernel, strides, dilations or pads out of range");
      return false;
    }
  return true;
}

/* N, C, spatial... -> NHWC (a 1-D input gets H = 1) with the window's pads (value). */
static ts_tensor *to_nhwc_padded(ts_tensor *x, const window *w, double value)
{
  if (x && ts_tensor_rank(x) == 3)
    x = unsqueeze(x, 2);
  ts_tensor *y = ts_transpose_at(HERE, x, TS_INTS(0, 2, 3, 1));
  for (int i = 0; i < 2; i++)
    y = pad_axis(y, 1 + i, w->pad_begin[i], w->pad_end[i], value);
  return y;
}

/* x in NHWC for Conv2D or MaxPool over w: when w's pads are TensorFlow's
 * SAME pads, unpadded with *padding SAME (the kernels pad as they read: a
 * zero row, a tap left out of the max), else padded with value and VALID. */
static ts_tensor *to_nhwc_for(ts_tensor *x, const window *w, double value, int *padding)
{
  bool same = x != NULL, padded = false;
  for (int i = 0; i < 2 && same; i++) {
    int64_t total = same_total(x, w, i);
    same = total >= 0 && w->pad_begin[i] == total / 2 && w->pad_end[i] == total - total / 2;
    padded |= total > 0;
  }
  same &= padded;
  window unpadded = *w;
  for (int i = 0; i < 2 && same; i++)
    unpadded.pad_begin[i] = unpadded.pad_end[i] = 0;
  *padding = same ? TS_PADDING_SAME : TS_PADDING_VALID;
  return to_nhwc_padded(x, same ? &unpadded : w, value);
}

/* NHWC back to N, C, spatial... (rank 3 for a 1-D op). */
static ts_tensor *from_nhwc(ts_tensor *y, int rank)
{
  y = ts_transpose_at(HERE, y, TS_INTS(0, 3, 1, 2));
  if (y && rank == 3) {
    ts_shape s = ts_tensor_shape(y);
    y = reshape(y, TS_SHAPE(s.dim[0], s.dim[1], s.dim[3]));
  }
  return y;
}

/* An HWIO filter with dilation - 1 zeros between its taps on axis (0 or 1). */
static ts_tensor *dilate(ts_tensor *f, int axis, int64_t dilation)
{
  if (!f || dilation == 1)
    return f;
  ts_shape s = ts_tensor_shape(f);
  int64_t k = s.dim[axis];
  ts_tensor **parts = g_new(ts_tensor *, 2 * k);
  ts_shape gap = s;
  gap.dim[axis] = dilation - 1;
  int n = 0;
  for (int64_t i = 0; i < k; i++) {
    ts_ints begin = { .n = 4, .v = { 0, 0, 0, 0 } }, size = { .n = 4, .v = { -1, -1, -1, -1 } };
    begin.v[axis] = i;
    size.v[axis] = 1;
    if (i > 0)
      parts[n++] = ts_zeros_at(HERE, ts_tensor_dtype(f), gap);
    parts[n++] = ts_slice_at(HERE, f, begin, size);
  }
  ts_tensor *out = ts_concat_at(HERE, parts, n, axis);
  g_free(parts);
  return out;
}

static ts_tensor *axis_tap(ts_tensor *x, int axis, int64_t t, int64_t stride, int64_t dilation, int64_t out);
static bool conv3d_core(onnx_node_ctx *c, ts_tensor *x, ts_tensor *wt, ts_tensor *b, ts_ints strides, ts_ints dil,
                        ts_ints pads, int64_t groups);

/* A 3-D Conv as a sum over the kernel's depth taps of 2-D convolutions:
 * tap t's input planes (at o stride + t dilation for each output depth o)
 * as a batch of NHWC images, with the filter's plane t (explicit pads or
 * VALID; groups as splits of the channels). */
static bool conv3d(onnx_node_ctx *c, ts_tensor *x, ts_tensor *wt, ts_tensor *b)
{
  enum { N = 3 };
  ts_ints strides = TS_INTS(1, 1, 1), dil = TS_INTS(1, 1, 1), pads = TS_INTS(0, 0, 0, 0, 0, 0), ks = { 0 };
  char pad_mode[16];
  attr_string(c, "auto_pad", "NOTSET", pad_mode, sizeof pad_mode);
  bool valid = strcmp(pad_mode, "VALID") == 0;
  int64_t groups = attr_int(c, "group", 1);
  ts_shape ws = ts_tensor_shape(wt);
  bool ok = (!attr(c, "strides") || attr_ints(c, "strides", &strides)) && strides.n == N &&
            (!attr(c, "dilations") || attr_ints(c, "dilations", &dil)) && dil.n == N &&
            (valid || !attr(c, "pads") || attr_ints(c, "pads", &pads)) && pads.n == 2 * N &&
            (valid || strcmp(pad_mode, "NOTSET") == 0) &&
            (!attr(c, "kernel_shape") || (attr_ints(c, "kernel_shape", &ks) && ks.n == N && ks.v[0] == ws.dim[2] &&
                                          ks.v[1] == ws.dim[3] && ks.v[2] == ws.dim[4]));
  if (!ok) {
    if (!ts_failed())
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "a 3-D Conv takes kernel_shape, strides, dilations and pads of 3 (6) "
                     "values, explicit pads or VALID");
    return false;
  }
  return conv3d_core(c, x, wt, b, strides, dil, pads, groups);
}

/* conv3d for the given strides, dilations, pads (begins, then ends) and groups. */
static bool conv3d_core(onnx_node_ctx *c, ts_tensor *x, ts_tensor *wt, ts_tensor *b, ts_ints strides, ts_ints dil,
                        ts_ints pads, int64_t groups)
{
  enum { N = 3 };
  ts_shape xs = ts_tensor_shape(x), ws = ts_tensor_shape(wt);
  bool ok = true;
  for (int d = 0; ok && d < 5; d++)
    ok = xs.dim[d] > 0 && ws.dim[d] > 0;
  ok = ok && groups >= 1 && groups <= 4096 && xs.dim[1] % groups == 0 && ws.dim[0] % groups == 0 &&
       ws.dim[1] * groups == xs.dim[1];
  for (int i = 0; ok && i < N; i++)
    ok = strides.v[i] >= 1 && strides.v[i] <= 1 << 20 && dil.v[i] >= 1 && dil.v[i] <= 1 << 16 && pads.v[i] >= 0 &&
         pads.v[i + N] >= 0 && pads.v[i] <= 1 << 20 && pads.v[i + N] <= 1 << 20 && ws.dim[2 + i] <= 1 << 16;
  if (!ok) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "a 3-D Conv takes known dims, strides, dilations and pads in range, "
                   "and a group dividing the channels");
    return false;
  }
  int64_t out[N];
  ts_tensor *xp = x;
  for (int i = 0; i < N; i++) {
    int64_t span = xs.dim[2 + i] + pads.v[i] + pads.v[i + N] - (ws.dim[2 + i] - 1) * dil.v[i] - 1;
    if (span < 0) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "the kernel is larger than the padded input");
      return false;
    }
    out[i] = span / strides.v[i] + 1;
    xp = pad_axis(xp, 2 + i, pads.v[i], pads.v[i + N] + (i == 0 ? strides.v[0] - 1 : 0), 0);
  }
  ts_shape ps = ts_tensor_shape(xp);
  ts_tensor *y = NULL;
  for (int64_t t = 0; t < ws.dim[2] && !ts_failed(); t++) {
    ts_tensor *planes = axis_tap(xp, 2, t, strides.v[0], dil.v[0], out[0]); /* [N, C, oD, Hp, Wp] */
    planes = reshape(ts_transpose_at(HERE, planes, TS_INTS(0, 2, 3, 4, 1)),
                     TS_SHAPE(xs.dim[0] * out[0], ps.dim[3], ps.dim[4], xs.dim[1]));
    ts_tensor *f = ts_slice_at(HERE, wt, TS_INTS(0, 0, t, 0, 0), TS_INTS(-1, -1, 1, -1, -1));
    f = ts_transpose_at(HERE, reshape(f, TS_SHAPE(ws.dim[0], ws.dim[1], ws.dim[3], ws.dim[4])), TS_INTS(2, 3, 1, 0));
    f = dilate(dilate(f, 0, dil.v[1]), 1, dil.v[2]);
    ts_tensor **xg = g_new0(ts_tensor *, groups), **fg = g_new0(ts_tensor *, groups), **yg = g_new0(ts_tensor *, groups);
    ts_tensor *part = NULL;
    if (groups == 1 || (ts_split_at(HERE, planes, (int)groups, 3, xg) == groups &&
                        ts_split_at(HERE, f, (int)groups, 3, fg) == groups)) {
      if (groups == 1) {
        xg[0] = planes;
        fg[0] = f;
      }
      for (int64_t g = 0; g < groups; g++)
        yg[g] = ts_conv2d_at(HERE, xg[g], fg[g], (int)strides.v[1], (int)strides.v[2], TS_PADDING_VALID);
      part = groups == 1 ? yg[0] : ts_concat_at(HERE, yg, (int)groups, 3);
    }
    g_free(xg);
    g_free(fg);
    g_free(yg);
    y = y ? ts_add_at(HERE, y, part) : part;
  }
  if (!y || ts_failed())
    return false;
  ts_shape ys = ts_tensor_shape(y); /* [N oD, oH, oW, O] */
  y = reshape(y, TS_SHAPE(xs.dim[0], out[0], ys.dim[1], ys.dim[2], ws.dim[0]));
  y = ts_transpose_at(HERE, y, TS_INTS(0, 4, 1, 2, 3));
  if (b)
    y = ts_add_at(HERE, y, reshape(b, TS_SHAPE(1, -1, 1, 1, 1)));
  return out1(c, y);
}

static bool op_conv(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *wt = IN(1), *b = IN(2);
  if (!x || !wt)
    return false;
  int rank = ts_tensor_rank(wt);
  if (rank == 5 && ts_tensor_rank(x) == 5)
    return conv3d(c, x, wt, IN(2));
  if (rank != ts_tensor_rank(x) || (rank != 3 && rank != 4)) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "only 1-D, 2-D and 3-D convolutions are supported");
    return false;
  }
  if (rank == 3)
    wt = unsqueeze(wt, 2);
  int64_t kernel[2] = { ts_tensor_dim(wt, 2), ts_tensor_dim(wt, 3) };
  int64_t ks[2] = { kernel[0], kernel[1] };
  if (!spatial_attr(c, "kernel_shape", rank - 2, 1, 1, ks))
    return false;
  if (ks[0] != kernel[0] || ks[1] != kernel[1]) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "kernel_shape differs from the weights' shape");
    return false;
  }
  window w;
  int64_t groups = attr_int(c, "group", 1);
  if (!window_of(c, x, kernel, &w))
    return false;
  if (groups < 1 || groups > 4096 || ts_tensor_dim(x, 1) < 0 || ts_tensor_dim(x, 1) % groups ||
      ts_tensor_dim(wt, 0) % groups) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "group=%" PRId64 " does not divide the channels", groups);
    return false;
  }
  ts_tensor *filter = ts_transpose_at(HERE, wt, TS_INTS(2, 3, 1, 0)); /* OIHW -> HWIO */
  filter = dilate(dilate(filter, 0, w.dilation[0]), 1, w.dilation[1]);
  int padding;
  ts_tensor *in = to_nhwc_for(x, &w, 0, &padding);
  /* groups: each slice of channels by its slice of filters */
  ts_tensor **xs = g_new0(ts_tensor *, groups), **fs = g_new0(ts_tensor *, groups), **ys = g_new0(ts_tensor *, groups);
  ts_tensor *y = NULL;
  if (groups == 1 || (ts_split_at(HERE, in, (int)groups, 3, xs) == groups &&
                      ts_split_at(HERE, filter, (int)groups, 3, fs) == groups)) {
    if (groups == 1) {
      xs[0] = in;
      fs[0] = filter;
    }
    for (int64_t g = 0; g < groups; g++)
      ys[g] = ts_conv2d_at(HERE, xs[g], fs[g], (int)w.stride[0], (int)w.stride[1], padding);
    y = groups == 1 ? ys[0] : ts_concat_at(HERE, ys, (int)groups, 3);
  }
  g_free(xs);
  g_free(fs);
  g_free(ys);
  y = from_nhwc(y, ts_tensor_rank(x));
  if (y && b) {
    ts_shape bs = { .rank = ts_tensor_rank(x) };
    for (int d = 0; d < bs.rank; d++)
      bs.dim[d] = d == 1 ? -1 : 1;
    y = ts_add_at(HERE, y, reshape(b, bs));
  }
  return out1(c, y);
}

/* ceil_mode: a last partial window, its missing part added to pad_end
 * (filled as the op fills pads), unless it would start past the input
 * and its begin pad. */
static void ceil_pads(ts_tensor *x, window *w)
{
  for (int i = 0; i < 2; i++) {
    int64_t in = window_dim(x, i), span_k = (w->k[i] - 1) * w->dilation[i] + 1;
    int64_t span = in + w->pad_begin[i] + w->pad_end[i] - span_k;
    if (in < 0 || span < 0)
      continue;
    int64_t out = (span + w->stride[i] - 1) / w->stride[i] + 1;
    if ((out - 1) * w->stride[i] >= in + w->pad_begin[i])
      out--;
    int64_t extra = (out - 1) * w->stride[i] + span_k - (in + w->pad_begin[i] + w->pad_end[i]);
    w->pad_end[i] += extra > 0 ? extra : 0;
  }
}

/* The smallest value of dtype: what pads a max (-inf for floats). */
static double lowest(ts_dtype dtype)
{
  if (ts_dtype_is_float(dtype))
    return -INFINITY;
  bool is_unsigned = dtype == TS_U8 || dtype == TS_U16 || dtype == TS_U32 || dtype == TS_U64 || dtype == TS_BOOL;
  return is_unsigned ? 0 : -ldexp(1, (int)ts_dtype_size(dtype) * 8 - 1);
}

static ts_tensor *iota_along(int64_t n, int axis, int rank);

/* Tap t of every window along axis (of x, padded so that the slice
 * fits): the elements at o stride + t dilation for o < out. */
static ts_tensor *axis_tap(ts_tensor *x, int axis, int64_t t, int64_t stride, int64_t dilation, int64_t out)
{
  ts_shape s = ts_tensor_shape(x);
  int rank = s.rank;
  ts_ints begin = { .n = rank }, size = { .n = rank }, first = { .n = rank + 1 }, one = { .n = rank + 1 };
  for (int d = 0; d <= rank; d++) {
    if (d < rank) {
      begin.v[d] = 0;
      size.v[d] = -1;
    }
    first.v[d] = 0;
    one.v[d] = -1;
  }
  begin.v[axis] = t * dilation;
  size.v[axis] = out * stride;
  ts_shape split = { .rank = rank + 1 };
  for (int d = 0, k = 0; d < rank; d++) {
    split.dim[k++] = d == axis ? out : s.dim[d];
    if (d == axis) {
      one.v[k] = 1;
      split.dim[k++] = stride;
    }
  }
  s.dim[axis] = out;
  ts_tensor *y = reshape(ts_slice_at(HERE, x, begin, size), split);
  return reshape(ts_slice_at(HERE, y, first, one), s);
}

/* The sum over each window along one axis of v. */
static ts_tensor *sum_along(ts_tensor *v, int axis, int64_t k, int64_t stride, int64_t dilation, int64_t out)
{
  ts_tensor *sum = NULL;
  for (int64_t t = 0; t < k; t++) {
    ts_tensor *tv = axis_tap(v, axis, t, stride, dilation, out);
    sum = sum ? ts_add_at(HERE, sum, tv) : tv;
  }
  return sum;
}

/* The max over each window along one axis of *v, and beside it (when
 * *index) the index of the first max, replacing both. */
static void max_along(ts_tensor **v, ts_tensor **index, int axis, int64_t k, int64_t stride, int64_t dilation,
                      int64_t out)
{
  ts_tensor *best = NULL, *best_index = NULL;
  for (int64_t t = 0; t < k; t++) {
    ts_tensor *tv = axis_tap(*v, axis, t, stride, dilation, out);
    ts_tensor *ti = *index ? axis_tap(*index, axis, t, stride, dilation, out) : NULL;
    if (!best) {
      best = tv;
      best_index = ti;
    } else if (ti) {
      ts_tensor *better = ts_greater_at(HERE, tv, best);
      best_index = ts_where_at(HERE, better, ti, best_index);
      best = ts_where_at(HERE, better, tv, best);
    } else
      best = ts_maximum_at(HERE, best, tv);
  }
  *v = best;
  *index = best_index;
}

/* MaxPool as maxes over the window's taps, along W and then H, for what
 * the engine's 2-D pool does not do: dilations, padded integers and the
 * Indices output (the flat index into x of each max, the first of equals
 * in row-major window order; storage_order 1 counts H fastest). */
static bool max_pool_taps(onnx_node_ctx *c, ts_tensor *x, const window *w)
{
  int rank = ts_tensor_rank(x);
  ts_tensor *x4 = rank == 3 ? unsqueeze(x, 2) : x;
  ts_shape s = ts_tensor_shape(x4);
  for (int d = 0; d < 4; d++)
    if (s.dim[d] < 0) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "unknown dims with dilations, Indices or integers");
      return false;
    }
  int64_t out[2];
  for (int i = 0; i < 2; i++)
    out[i] = (s.dim[2 + i] + w->pad_begin[i] + w->pad_end[i] - (w->k[i] - 1) * w->dilation[i] - 1) / w->stride[i] + 1;
  if (out[0] < 1 || out[1] < 1) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "the window is larger than the padded input");
    return false;
  }
  bool column_major = attr_int(c, "storage_order", 0) != 0;
  ts_tensor *index = NULL;
  if (c->n_out > 1) {
    /* ((n C + c) H + h) W + w, or ((n C + c) W + w) H + h */
    ts_tensor *h = iota_along(s.dim[2], 2, 4), *wd = iota_along(s.dim[3], 3, 4);
    ts_tensor *nc = ts_mul_at(HERE, iota_along(s.dim[0] * s.dim[1], 0, 4), ts_scalar_i64(s.dim[2] * s.dim[3]));
    nc = reshape(nc, TS_SHAPE(s.dim[0], s.dim[1], 1, 1));
    ts_tensor *within = column_major ? ts_add_at(HERE, ts_mul_at(HERE, wd, ts_scalar_i64(s.dim[2])), h)
                                     : ts_add_at(HERE, ts_mul_at(HERE, h, ts_scalar_i64(s.dim[3])), wd);
    index = ts_add_at(HERE, nc, within);
  }
  /* pads, and stride - 1 more at the end so that each tap's slice fits */
  double fill = lowest(ts_tensor_dtype(x));
  ts_tensor *y = x4;
  for (int i = 0; i < 2; i++) {
    y = pad_axis(y, 2 + i, w->pad_begin[i], w->pad_end[i] + w->stride[i] - 1, fill);
    index = pad_axis(index, 2 + i, w->pad_begin[i], w->pad_end[i] + w->stride[i] - 1, -1);
  }
  for (int i = 1; i >= 0; i--)
    max_along(&y, &index, 2 + i, w->k[i], w->stride[i], w->dilation[i], out[i]);
  ts_shape ys = { .rank = rank };
  for (int d = 0; d < rank; d++)
    ys.dim[d] = d < 2 ? s.dim[d] : out[d - 2 + (rank == 3)];
  c->out[0] = reshape(y, ys);
  if (c->n_out > 1)
    c->out[1] = reshape(index, ys);
  return !ts_failed();
}

/* MaxPool and AveragePool over 3 spatial dims, as maxes or sums over the
 * window's taps along D, H and W (explicit pads or VALID; ceil_mode as in
 * 2-D; no Indices).  AveragePool divides by the taps over the input (and
 * the explicit pads with count_include_pad), never past them. */
static bool pool3d(onnx_node_ctx *c, ts_tensor *x, bool is_max)
{
  enum { N = 3 };
  ts_ints k = { 0 }, strides = TS_INTS(1, 1, 1), dil = TS_INTS(1, 1, 1), pads = TS_INTS(0, 0, 0, 0, 0, 0);
  char pad_mode[16];
  attr_string(c, "auto_pad", "NOTSET", pad_mode, sizeof pad_mode);
  bool valid = strcmp(pad_mode, "VALID") == 0;
  if (!attr_ints(c, "kernel_shape", &k) || k.n != N || (attr(c, "strides") && !attr_ints(c, "strides", &strides)) ||
      strides.n != N || (attr(c, "dilations") && !attr_ints(c, "dilations", &dil)) || dil.n != N ||
      (attr(c, "pads") && !valid && !attr_ints(c, "pads", &pads)) || pads.n != 2 * N ||
      (!valid && strcmp(pad_mode, "NOTSET") != 0) || c->n_out > 1 || attr_int(c, "storage_order", 0) ||
      (!is_max && !ts_dtype_is_float(ts_tensor_dtype(x)))) {
    if (!ts_failed())
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "3-D windows take kernel_shape, strides, dilations and pads of 3 "
                     "(6) values, explicit pads or VALID, no Indices output, and AveragePool floats");
    return false;
  }
  ts_shape s = ts_tensor_shape(x);
  int64_t out[N], extra[N];
  for (int i = 0; i < N; i++) {
    int64_t in = s.dim[2 + i], span_k = (k.v[i] - 1) * dil.v[i] + 1;
    if (in < 0 || k.v[i] < 1 || strides.v[i] < 1 || dil.v[i] < 1 || pads.v[i] < 0 || pads.v[i + N] < 0 ||
        k.v[i] > 1 << 16 || strides.v[i] > 1 << 20 || dil.v[i] > 1 << 16 || pads.v[i] > 1 << 20 ||
        pads.v[i + N] > 1 << 20) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "kernel, strides, dilations or pads out of range, or unknown dims");
      return false;
    }
    int64_t span = in + pads.v[i] + pads.v[i + N] - span_k;
    if (span < 0) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "the window is larger than the padded input");
      return false;
    }
    out[i] = span / strides.v[i] + 1;
    if (attr_int(c, "ceil_mode", 0)) {
      int64_t up = (span + strides.v[i] - 1) / strides.v[i] + 1;
      out[i] = (up - 1) * strides.v[i] >= in + pads.v[i] ? up - 1 : up;
    }
    extra[i] = MAX(0, (out[i] - 1) * strides.v[i] + span_k - (in + pads.v[i] + pads.v[i + N]));
  }
  double fill = is_max ? lowest(ts_tensor_dtype(x)) : 0;
  bool include_pad = attr_int(c, "count_include_pad", 0) != 0;
  ts_tensor *y = x, *count = NULL;
  if (!is_max) {
    ts_shape one = s;
    one.dim[0] = one.dim[1] = 1;
    count = ts_ones_at(HERE, ts_tensor_dtype(x), one);
  }
  for (int i = 0; i < N; i++) {
    /* pads, ceil_mode's extra, and stride - 1 so that each tap's slice fits */
    y = pad_axis(y, 2 + i, pads.v[i], pads.v[i + N] + extra[i] + strides.v[i] - 1, fill);
    if (count) {
      count = pad_axis(count, 2 + i, pads.v[i], pads.v[i + N], include_pad);
      count = pad_axis(count, 2 + i, 0, extra[i] + strides.v[i] - 1, 0);
    }
  }
  ts_tensor *none = NULL;
  for (int i = 0; i < N; i++) {
    if (is_max)
      max_along(&y, &none, 2 + i, k.v[i], strides.v[i], dil.v[i], out[i]);
    else {
      y = sum_along(y, 2 + i, k.v[i], strides.v[i], dil.v[i], out[i]);
      count = sum_along(count, 2 + i, k.v[i], strides.v[i], dil.v[i], out[i]);
    }
  }
  return out1(c, is_max ? y : ts_div_at(HERE, y, count));
}

static bool op_max_pool(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  int64_t kernel[2] = { 1, 1 };
  if (!attr(c, "kernel_shape")) {
    onnx_node_fail(c, TS_ERR_FORMAT, "kernel_shape is required");
    return false;
  }
  if (ts_tensor_rank(x) == 5)
    return pool3d(c, x, true);
  window w;
  if (!spatial_attr(c, "kernel_shape", ts_tensor_rank(x) - 2, 1, 1, kernel) || !window_of(c, x, kernel, &w))
    return false;
  if (attr_int(c, "ceil_mode", 0))
    ceil_pads(x, &w);
  bool padded = w.pad_begin[0] || w.pad_begin[1] || w.pad_end[0] || w.pad_end[1];
  if (w.dilation[0] != 1 || w.dilation[1] != 1 || c->n_out > 1 || (!ts_dtype_is_float(ts_tensor_dtype(x)) && padded))
    return max_pool_taps(c, x, &w);
  int padding;
  ts_tensor *in = to_nhwc_for(x, &w, -INFINITY, &padding);
  ts_tensor *y = ts_max_pool2d_at(HERE, in, (int)w.k[0], (int)w.k[1], (int)w.stride[0], (int)w.stride[1], padding);
  return out1(c, from_nhwc(y, ts_tensor_rank(x)));
}

static bool global_pool(onnx_node_ctx *c, reduce_fn fn)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  int rank = ts_tensor_rank(x);
  if (rank < 3) {
    onnx_node_fail(c, TS_ERR_SHAPE, "input of rank %d (at least 3: N, C, spatial dims)", rank);
    return false;
  }
  ts_ints axes = { .n = rank - 2 };
  for (int d = 2; d < rank; d++)
    axes.v[d - 2] = d;
  return out1(c, fn(HERE, x, axes, true));
}

static bool op_global_average_pool(onnx_node_ctx *c) { return global_pool(c, ts_reduce_mean_at); }
static bool op_global_max_pool(onnx_node_ctx *c) { return global_pool(c, ts_reduce_max_at); }

/* ---- normalization and dropout ------------------------------------------------------------ */

/* A per-channel vector [C] shaped to broadcast over NC... of rank `rank`. */
static ts_tensor *channel(ts_tensor *v, int rank)
{
  ts_shape s = { .rank = rank };
  for (int d = 0; d < rank; d++)
    s.dim[d] = d == 1 ? -1 : 1;
  return reshape(v, s);
}

/* BatchNormalization: with the running statistics, or (training_mode=1,
 * opset 14 on) with the batch's mean and population variance over every
 * axis but the channels', the running ones then updated by momentum as the
 * second and third outputs. */
static bool op_batch_norm(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  bool training = attr_int(c, "training_mode", 0) != 0;
  if (c->opset < 7 && !attr_int(c, "is_test", 0)) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "training (is_test=0 before opset 7) is not supported");
    return false;
  }
  if (!training && c->n_out > 1) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "the mean and variance outputs are computed in training_mode only");
    return false;
  }
  if (!attr_int(c, "spatial", 1)) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "spatial=0 is not supported");
    return false;
  }
  int rank = ts_tensor_rank(x);
  double eps = attr_float(c, "epsilon", 1e-5);
  ts_tensor *mean = IN(3), *var = IN(4);
  if (training) {
    ts_ints axes = { .n = rank - 1 };
    for (int d = 0, k = 0; d < rank; d++)
      if (d != 1)
        axes.v[k++] = d;
    mean = ts_reduce_mean_at(HERE, x, axes, false);
    ts_tensor *dev = ts_sub_at(HERE, x, channel(mean, rank));
    var = ts_reduce_mean_at(HERE, ts_mul_at(HERE, dev, dev), axes, false);
    double momentum = attr_float(c, "momentum", 0.9);
    ts_tensor *outs[2] = { IN(3), IN(4) }, *batch[2] = { mean, var };
    for (int k = 0; k < 2 && k + 1 < c->n_out; k++)
      c->out[k + 1] = ts_add_at(HERE, ts_mul_at(HERE, outs[k], scalar(x, momentum)),
                                ts_mul_at(HERE, batch[k], scalar(x, 1 - momentum)));
  }
  ts_tensor *inv = ts_div_at(HERE, channel(IN(1), rank),
                             ts_sqrt_at(HERE, ts_add_at(HERE, channel(var, rank), scalar(x, eps))));
  ts_tensor *y = ts_mul_at(HERE, ts_sub_at(HERE, x, channel(mean, rank)), inv);
  for (int k = 1; k < c->n_out; k++)
    if (!c->out[k])
      return false;
  return out1(c, ts_add_at(HERE, y, channel(IN(2), rank)));
}

static bool op_instance_norm(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  int rank = ts_tensor_rank(x);
  ts_ints axes = { .n = rank - 2 };
  for (int d = 2; d < rank; d++)
    axes.v[d - 2] = d;
  double eps = attr_float(c, "epsilon", 1e-5);
  ts_tensor *d = ts_sub_at(HERE, x, ts_reduce_mean_at(HERE, x, axes, true));
  ts_tensor *var = ts_reduce_mean_at(HERE, ts_mul_at(HERE, d, d), axes, true);
  ts_tensor *y = ts_div_at(HERE, d, ts_sqrt_at(HERE, ts_add_at(HERE, var, scalar(x, eps))));
  return out1(c, ts_add_at(HERE, ts_mul_at(HERE, y, channel(IN(1), rank)), channel(IN(2), rank)));
}

static bool op_layer_norm(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  int rank = ts_tensor_rank(x);
  int64_t axis = attr_int(c, "axis", -1);
  if (!norm_axis(c, &axis, rank))
    return false;
  ts_ints axes = { .n = rank - (int)axis };
  for (int d = (int)axis; d < rank; d++)
    axes.v[d - axis] = d;
  double eps = attr_float(c, "epsilon", 1e-5);
  ts_tensor *d = ts_sub_at(HERE, x, ts_reduce_mean_at(HERE, x, axes, true));
  ts_tensor *var = ts_reduce_mean_at(HERE, ts_mul_at(HERE, d, d), axes, true);
  ts_tensor *inv = ts_div_at(HERE, scalar(x, 1), ts_sqrt_at(HERE, ts_add_at(HERE, var, scalar(x, eps))));
  ts_tensor *y = ts_mul_at(HERE, ts_mul_at(HERE, d, inv), IN(1));
  ts_dtype stash;
  if (c->n_out > 1 && !dtype_of(c, attr_int(c, "stash_type", 1), &stash))
    return false;
  if (c->n_out > 1)
    c->out[1] = ts_cast_at(HERE, ts_reduce_mean_at(HERE, x, axes, true), stash);
  if (c->n_out > 2)
    c->out[2] = ts_cast_at(HERE, inv, stash);
  return out1(c, IN(2) ? ts_add_at(HERE, y, IN(2)) : y);
}

/* GroupNormalization: x [N, C, ...] normalized over each group of C / G
 * channels (and the rest), in stash_type's precision from opset 21 (in
 * x's before), then scaled and shifted per group (opset 18: scale and
 * bias of G) or per channel (21: of C).  The dims after N must be known
 * (the groups are a reshape). */
static bool op_group_norm(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *scale = IN(1), *bias = IN(2);
  if (!x || !scale || !bias)
    return false;
  ts_shape s = ts_tensor_shape(x);
  int64_t groups = attr_int(c, "num_groups", 0), per = 1;
  for (int d = 2; d < s.rank && per >= 0; d++)
    if (s.dim[d] < 0 || __builtin_mul_overflow(per, s.dim[d], &per))
      per = -1;
  int64_t inner; /* the elements of one group */
  if (s.rank < 2 || s.dim[1] < 0 || per < 0 || groups < 1 || s.dim[1] % groups ||
      __builtin_mul_overflow(s.dim[1] / groups, per, &inner)) {
    onnx_node_fail(c, TS_ERR_SHAPE, "x must be [N, C, ...] with the dims after N known and C a multiple of "
                   "num_groups (%" PRId64 ")", groups);
    return false;
  }
  int64_t ch = s.dim[1], affine = c->opset >= 21 ? ch : groups;
  if (ts_tensor_rank(scale) != 1 || ts_tensor_dim(scale, 0) != affine || ts_tensor_rank(bias) != 1 ||
      ts_tensor_dim(bias, 0) != affine) {
    onnx_node_fail(c, TS_ERR_SHAPE, "scale and bias must be [%s] (%" PRId64 ") at opset %" PRId64,
                   c->opset >= 21 ? "C" : "num_groups", affine, c->opset);
    return false;
  }
  ts_dtype stash = ts_tensor_dtype(x);
  if (c->opset >= 21 && !dtype_of(c, attr_int(c, "stash_type", 1), &stash))
    return false;
  ts_tensor *g = reshape(ts_cast_at(HERE, x, stash), TS_SHAPE(s.dim[0], groups, inner));
  ts_ints last = { .n = 1, .v = { 2 } };
  ts_tensor *d = ts_sub_at(HERE, g, ts_reduce_mean_at(HERE, g, last, true));
  ts_tensor *var = ts_reduce_mean_at(HERE, ts_mul_at(HERE, d, d), last, true);
  ts_tensor *norm = ts_div_at(HERE, d, ts_sqrt_at(HERE, ts_add_at(HERE, var, scalar(d, attr_float(c, "epsilon", 1e-5)))));
  norm = ts_cast_at(HERE, reshape(norm, s), ts_tensor_dtype(x));
  ts_shape along = { .rank = s.rank, .dim = { 1, ch } }; /* [1, C, 1, ...] */
  for (int d2 = 2; d2 < s.rank; d2++)
    along.dim[d2] = 1;
  ts_tensor *sc = scale, *b = bias;
  if (c->opset < 21) { /* each group's value for each of its channels */
    ts_tensor *ones = ts_ones_at(HERE, ts_tensor_dtype(scale), TS_SHAPE(1, ch / groups));
    sc = ts_mul_at(HERE, reshape(scale, TS_SHAPE(groups, 1)), ones);
    b = ts_mul_at(HERE, reshape(bias, TS_SHAPE(groups, 1)), ones);
  }
  return out1(c, ts_add_at(HERE, ts_mul_at(HERE, norm, reshape(sc, along)), reshape(b, along)));
}

/* Gelu (opset 20): x Φ(x) by erf, or by tanh's approximation
 * 0.5 x (1 + tanh(sqrt(2 / π) (x + 0.044715 x³))). */
static bool op_gelu(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  char buf[8];
  const char *approximate = attr_string(c, "approximate", "none", buf, sizeof buf);
  if (!x)
    return false;
  if (strcmp(approximate, "none") == 0)
    return out1(c, ts_gelu_at(HERE, x));
  if (strcmp(approximate, "tanh") != 0) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "approximate '%s' is neither none nor tanh", approximate);
    return false;
  }
  ts_tensor *cube = ts_mul_at(HERE, ts_mul_at(HERE, x, x), x);
  ts_tensor *inner = ts_mul_at(HERE, ts_add_at(HERE, x, ts_mul_at(HERE, cube, scalar(x, 0.044715))),
                               scalar(x, sqrt(2 / G_PI)));
  ts_tensor *half = ts_mul_at(HERE, x, scalar(x, 0.5));
  return out1(c, ts_mul_at(HERE, half, ts_add_at(HERE, ts_tanh_at(HERE, inner), scalar(x, 1))));
}

static bool op_dropout(onnx_node_ctx *c)
{
  bool training = c->opset < 7 ? attr_int(c, "is_test", 0) == 0 : false;
  if (c->opset >= 12 && IN(2)) {
    if (!c->in[2].host) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "training_mode must be known when the graph is built");
      return false;
    }
    training = ts_tensor_get_i64(c->in[2].host, 0) != 0;
  }
  /* training with a ratio of 0 drops nothing: the mask is all true, as
   * ONNX's reference has it, and no random number is drawn */
  bool drops = training;
  if (training && c->opset >= 12 && IN(1) && c->in[1].host)
    drops = ts_tensor_get_f64(c->in[1].host, 0) != 0;
  else if (training && c->opset < 12)
    drops = attr_float(c, "ratio", 0.5f) != 0;
  if (drops) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "training (random masks) is not supported");
    return false;
  }
  c->out[0] = ts_identity_at(HERE, IN(0));
  if (c->n_out > 1 && c->out[0])
    c->out[1] = ts_ones_at(HERE, TS_BOOL, ts_tensor_shape(IN(0)));
  return c->out[0] != NULL;
}

/* MeanVarianceNormalization: ONNX's function body, op for op:
 * (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9) over axes (default 0, 2, 3). */
static bool op_mean_variance_normalization(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  ts_ints axes = TS_INTS(0, 2, 3);
  if (!x || (attr(c, "axes") && !attr_ints(c, "axes", &axes)))
    return false;
  ts_tensor *mean = ts_reduce_mean_at(HERE, x, axes, true);
  ts_tensor *two = scalar(x, 2);
  ts_tensor *variance = ts_sub_at(HERE, ts_reduce_mean_at(HERE, ts_pow_at(HERE, x, two), axes, true),
                                  ts_pow_at(HERE, mean, two));
  ts_tensor *std = ts_add_at(HERE, ts_sqrt_at(HERE, variance), scalar(x, 1e-9));
  return out1(c, ts_div_at(HERE, ts_sub_at(HERE, x, mean), std));
}

/* LRN: x / (bias + alpha / size * the sum of squares over the channels
 * c - floor((size-1)/2) .. c + ceil((size-1)/2))^beta; the window's sum
 * is `size` slices of the squares padded with zeros along the channels. */
static bool op_lrn(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  int64_t size = attr_int(c, "size", 0);
  if (!x)
    return false;
  int64_t channels = ts_tensor_rank(x) >= 2 ? ts_tensor_dim(x, 1) : -1;
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  if (size < 1 || channels < 0 || before > channels || after > channels) {
    onnx_node_fail(c, channels < 0 ? TS_ERR_UNIMPLEMENTED : TS_ERR_INVALID_ARGUMENT,
                   "size %" PRId64 " over %" PRId64 " channels", size, channels);
    return false;
  }
  int rank = ts_tensor_rank(x);
  ts_tensor *sq = ts_mul_at(HERE, x, x), *parts[3];
  int n = 0;
  ts_ints begin = { .n = rank }, len = { .n = rank };
  for (int d = 0; d < rank; d++)
    begin.v[d] = 0, len.v[d] = -1;
  if (before > 0) {
    len.v[1] = before;
    parts[n++] = ts_zeros_like_at(HERE, ts_slice_at(HERE, sq, begin, len));
  }
  parts[n++] = sq;
  if (after > 0) {
    len.v[1] = after;
    parts[n++] = ts_zeros_like_at(HERE, ts_slice_at(HERE, sq, begin, len));
  }
  ts_tensor *padded = ts_concat_at(HERE, parts, n, 1), *sum = NULL;
  len.v[1] = channels;
  for (int64_t k = 0; k < size; k++) {
    begin.v[1] = k;
    ts_tensor *shifted = ts_slice_at(HERE, padded, begin, len);
    sum = sum ? ts_add_at(HERE, sum, shifted) : shifted;
  }
  ts_tensor *scale = ts_add_at(HERE, scalar(x, attr_float(c, "bias", 1.0)),
                               ts_mul_at(HERE, scalar(x, attr_float(c, "alpha", 1e-4) / (double)size), sum));
  return out1(c, ts_div_at(HERE, x, ts_pow_at(HERE, scale, scalar(x, attr_float(c, "beta", 0.75)))));
}

/* An equation's ellipses spelled out: each "..." becomes its operand's
 * leading dims, named by letters the equation does not use (aligned from
 * the right, as they broadcast), and the output made explicit (an implicit
 * one is the ellipsis's letters, then the letters met once, sorted).
 * spec (blanks removed) is rewritten in place; false when it does not fit. */
static bool einsum_expand_ellipses(const onnx_node_ctx *c, char *spec, size_t size)
{
  if (!strstr(spec, "..."))
    return true;
  char *arrow = strstr(spec, "->");
  char *lhs = g_strndup(spec, arrow ? (size_t)(arrow - spec) : strlen(spec));
  char **terms = g_strsplit(lhs, ",", -1);
  int n_terms = (int)g_strv_length(terms), most = 0;
  for (int t = 0; t < n_terms && t < c->n_in; t++) {
    int named = (int)strlen(terms[t]) - (strstr(terms[t], "...") ? 3 : 0);
    if (strstr(terms[t], "...") && IN(t))
      most = MAX(most, ts_tensor_rank(IN(t)) - named);
  }
  char free_letters[TS_MAX_RANK + 1] = "";
  int n_free = 0;
  for (int ch = 'A'; ch <= 'z' && n_free < most && n_free < TS_MAX_RANK; ch++)
    if (g_ascii_isalpha(ch) && !strchr(spec, ch))
      free_letters[n_free++] = (char)ch;
  GString *out = g_string_new(NULL);
  bool ok = n_free == most;
  int count[128] = { 0 };
  for (int t = 0; ok && t < n_terms; t++) {
    char *dots = strstr(terms[t], "...");
    int named = (int)strlen(terms[t]) - (dots ? 3 : 0);
    int e = dots && t < c->n_in && IN(t) ? ts_tensor_rank(IN(t)) - named : 0;
    ok = e >= 0 && e <= most;
    if (t)
      g_string_append_c(out, ',');
    for (const char *p = terms[t]; ok && *p; p++) {
      if (p == dots) {
        g_string_append_len(out, free_letters + most - e, e);
        p += 2;
      } else {
        g_string_append_c(out, *p);
        count[(int)(unsigned char)*p & 127]++;
      }
    }
  }
  g_string_append(out, "->");
  if (arrow) {
    char *dots = strstr(arrow + 2, "...");
    for (const char *p = arrow + 2; *p; p++) {
      if (p == dots) {
        g_string_append(out, free_letters);
        p += 2;
      } else
        g_string_append_c(out, *p);
    }
  } else {
    g_string_append(out, free_letters);
    for (int ch = 'A'; ch <= 'z'; ch++)
      if (count[ch] == 1)
        g_string_append_c(out, (char)ch);
  }
  ok = ok && out->len < size;
  if (ok)
    g_strlcpy(spec, out->str, size);
  g_string_free(out, TRUE);
  g_strfreev(terms);
  g_free(lhs);
  return ok;
}

/* Each operand's letters repeated within it taken as its diagonal: x
 * times the identity over the two axes, the second summed away (the
 * letter dropped from its term).  Terms are the operands' in order. */
static bool einsum_diagonals(const onnx_node_ctx *c, char **terms, int n_terms, ts_tensor **ops)
{
  for (int t = 0; t < n_terms; t++) {
    char *term = terms[t];
    for (int a = 0; ops[t] && term[a]; a++) {
      char *again;
      while ((again = strchr(term + a + 1, term[a]))) {
        int b = (int)(again - term), rank = ts_tensor_rank(ops[t]);
        int64_t n = ts_tensor_dim(ops[t], a);
        if ((int)strlen(term) != rank || n < 0 || ts_tensor_dim(ops[t], b) != n)
          return false;
        ts_tensor *eye = ts_cast_at(HERE, ts_equal_at(HERE, iota_along(n, a, rank), iota_along(n, b, rank)),
                                    ts_tensor_dtype(ops[t]));
        ops[t] = ts_reduce_sum_at(HERE, ts_mul_at(HERE, ops[t], eye), TS_INTS(b), false);
        memmove(again, again + 1, strlen(again));
      }
    }
  }
  return !ts_failed();
}

/* Einsum: ellipses spelled out and repeated letters taken as diagonals,
 * then every operand moved onto all the equation's letters (missing ones
 * as dims of 1), multiplied with broadcasting, the letters not in the
 * output summed away, the rest transposed into the output's order.  The
 * output of an implicit equation ("ij,jk") is its letters met once, sorted. */
static bool op_einsum(onnx_node_ctx *c)
{
  char buf[256];
  const char *eq = attr_string(c, "equation", "", buf, sizeof buf);
  char spec[256];
  size_t len = 0;
  for (const char *p = eq; *p && len + 1 < sizeof spec; p++)
    if (*p != ' ')
      spec[len++] = *p;
  spec[len] = '\0';
  bool expanded = einsum_expand_ellipses(c, spec, sizeof spec);
  char *arrow = strstr(spec, "->");
  if (arrow)
    *arrow = '\0';
  char **terms = g_strsplit(spec, ",", -1);
  int n_terms = (int)g_strv_length(terms);
  char letters[TS_MAX_RANK + 1] = "", out[TS_MAX_RANK + 1] = "";
  int n_letters = 0, count[128] = { 0 };
  ts_tensor **ops = g_new0(ts_tensor *, n_terms + 1);
  for (int t = 0; t < n_terms && t < c->n_in; t++)
    ops[t] = IN(t);
  bool ok = expanded && n_terms == c->n_in && !strstr(spec, "...") && einsum_diagonals(c, terms, n_terms, ops);
  for (int t = 0; ok && t < n_terms; t++) {
    ok = ops[t] && (int)strlen(terms[t]) == ts_tensor_rank(ops[t]);
    for (const char *p = terms[t]; ok && *p; p++) {
      ok = g_ascii_isalpha(*p) && !strchr(p + 1, *p);
      if (ok && !strchr(letters, *p)) {
        ok = n_letters < TS_MAX_RANK;
        if (ok)
          letters[n_letters++] = *p, letters[n_letters] = '\0';
      }
      if (ok)
        count[(int)*p]++;
    }
  }
  if (ok && arrow) {
    ok = strlen(arrow + 2) <= TS_MAX_RANK;
    for (const char *p = arrow + 2; ok && *p; p++)
      ok = strchr(letters, *p) && !strchr(p + 1, *p);
    if (ok)
      g_strlcpy(out, arrow + 2, sizeof out);
  } else if (ok) {
    for (int ch = 'A'; ch <= 'z'; ch++)
      if (count[ch] == 1)
        out[strlen(out)] = (char)ch;
  }
  if (!ok) {
    g_strfreev(terms);
    g_free(ops);
    if (!ts_failed())
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "equation '%s': letters and ellipses (at most %d letters in "
                     "all, a repeated one over equal known dims) and one term per input", eq, TS_MAX_RANK);
    return false;
  }
  /* the broadcast product holds every letter's size: capped as sizes a model computes */
  int64_t sizes[TS_MAX_RANK], elements = 1;
  for (int l = 0; l < n_letters; l++) {
    sizes[l] = 1;
    for (int t = 0; t < n_terms; t++) {
      const char *at = strchr(terms[t], letters[l]);
      if (at)
        sizes[l] = MAX(sizes[l], ts_tensor_dim(ops[t], (int)(at - terms[t])));
    }
    elements = sizes[l] > 0 && elements > MAX_MADE_ELEMENTS / sizes[l] ? MAX_MADE_ELEMENTS + 1 : elements * MAX(sizes[l], 0);
  }
  if (elements > MAX_MADE_ELEMENTS) {
    g_strfreev(terms);
    g_free(ops);
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "equation '%s': the product of all its letters' sizes is over "
                   "%" PRId64 " elements (einsum is computed by broadcasting)", eq, MAX_MADE_ELEMENTS);
    return false;
  }
  ts_tensor *product = NULL;
  for (int t = 0; t < n_terms; t++) {
    ts_tensor *x = ops[t];
    ts_shape xs = ts_tensor_shape(x), full = { .rank = n_letters };
    ts_ints perm = { .n = 0 };
    for (int l = 0; l < n_letters; l++) {
      const char *at = strchr(terms[t], letters[l]);
      full.dim[l] = at ? xs.dim[at - terms[t]] : 1;
      if (at)
        perm.v[perm.n++] = at - terms[t];
    }
    x = reshape(ts_transpose_at(HERE, x, perm), full);
    product = product ? ts_mul_at(HERE, product, x) : x;
  }
  g_strfreev(terms);
  g_free(ops);
  ts_ints summed = { .n = 0 };
  char kept[TS_MAX_RANK + 1] = "";
  for (int l = 0; l < n_letters; l++) {
    if (strchr(out, letters[l]))
      kept[strlen(kept)] = letters[l];
    else
      summed.v[summed.n++] = l;
  }
  if (summed.n)
    product = ts_reduce_sum_at(HERE, product, summed, false);
  ts_ints perm = { .n = (int)strlen(out) };
  for (int i = 0; i < perm.n; i++)
    perm.v[i] = strchr(kept, out[i]) - kept;
  return out1(c, perm.n > 1 ? ts_transpose_at(HERE, product, perm) : product);
}

/* ---- outputs whose shape depends on values ---------------------------------------------- */

/* Input i on the host; NULL + error when it is known only when the graph
 * runs (such ops run eagerly, and in graphs on constants). */
static ts_tensor *values_of(const onnx_node_ctx *c, int i)
{
  ts_tensor *h = i < c->n_in ? c->in[i].host : NULL;
  if (!h)
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "input %d must be known when the graph is built "
                   "(the output's shape depends on its values)", i);
  return h;
}

/* Unique: the distinct elements (no axis: of the flattened input) or
 * slices along axis, sorted (slices lexicographically, as NumPy) or in
 * the order they first occur, with the index of each one's first
 * occurrence, every element's or slice's place among them and the
 * counts.  Y is a Gather of X; the rest come from X's values on the host. */
typedef struct unique_view {
  ts_tensor *x;
  int64_t outer, n, inner; /* x as [outer, n, inner]: n slices */
  bool is_float;
} unique_view;

static int unique_compare(gconstpointer pa, gconstpointer pb, gpointer data)
{
  const unique_view *v = data;
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  for (int64_t o = 0; o < v->outer; o++)
    for (int64_t i = 0; i < v->inner; i++) {
      int64_t ka = (o * v->n + a) * v->inner + i, kb = (o * v->n + b) * v->inner + i;
      if (v->is_float) {
        double p = ts_tensor_get_f64(v->x, ka), q = ts_tensor_get_f64(v->x, kb);
        if (p != q)
          return p < q ? -1 : 1;
      } else {
        int64_t p = ts_tensor_get_i64(v->x, ka), q = ts_tensor_get_i64(v->x, kb);
        if (p != q)
          return p < q ? -1 : 1;
      }
    }
  return 0;
}

static bool op_unique(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *h = values_of(c, 0);
  if (!x || !h)
    return false;
  ts_shape s = ts_tensor_shape(h);
  bool has_axis = attr(c, "axis") != NULL;
  int64_t axis = attr_int(c, "axis", 0);
  unique_view v = { h, 1, ts_tensor_size(h), 1, ts_dtype_is_float(ts_tensor_dtype(h)) };
  if (has_axis) {
    if (!norm_axis(c, &axis, s.rank))
      return false;
    v.n = s.dim[axis];
    for (int d = 0; d < s.rank; d++)
      if (d < axis)
        v.outer *= s.dim[d];
      else if (d > axis)
        v.inner *= s.dim[d];
  }
  if (v.n > G_MAXINT) {
    onnx_node_fail(c, TS_ERR_OUT_OF_RANGE, "%" PRId64 " values or slices to sort (at most %d)", v.n, G_MAXINT);
    return false;
  }
  /* stable: each run of equal slices starts with the first to occur */
  int64_t *order = g_new(int64_t, v.n + 1), *inverse = g_new(int64_t, v.n + 1);
  int64_t *first = g_new(int64_t, v.n + 1), *counts = g_new(int64_t, v.n + 1), n_unique = 0;
  for (int64_t k = 0; k < v.n; k++)
    order[k] = k;
  g_qsort_with_data(order, (gint)v.n, sizeof *order, unique_compare, &v);
  for (int64_t k = 0; k < v.n; k++) {
    if (k == 0 || unique_compare(&order[k - 1], &order[k], &v) != 0) {
      first[n_unique] = order[k];
      counts[n_unique++] = 0;
    }
    counts[n_unique - 1]++;
    inverse[order[k]] = n_unique - 1;
  }
  if (!attr_int(c, "sorted", 1)) { /* renumbered in the order they first occur */
    int64_t *renumber = g_new(int64_t, n_unique + 1), *sorted_first = g_memdup2(first, (n_unique + 1) * sizeof *first);
    int64_t *sorted_counts = g_memdup2(counts, (n_unique + 1) * sizeof *counts), next = 0;
    for (int64_t g = 0; g < n_unique; g++)
      renumber[g] = -1;
    for (int64_t k = 0; k < v.n; k++) {
      int64_t g = inverse[k];
      if (renumber[g] < 0) {
        renumber[g] = next++;
        first[renumber[g]] = sorted_first[g];
        counts[renumber[g]] = sorted_counts[g];
      }
      inverse[k] = renumber[g];
    }
    g_free(renumber);
    g_free(sorted_first);
    g_free(sorted_counts);
  }
  ts_tensor *indices = ts_constant(TS_I64, TS_SHAPE(n_unique), first);
  ts_tensor *outs[4] = {
    has_axis ? ts_gather_at(HERE, x, indices, (int)axis)
             : ts_gather_at(HERE, ts_reshape_at(HERE, x, TS_SHAPE(-1)), indices, 0),
    indices, ts_constant(TS_I64, TS_SHAPE(v.n), inverse), ts_constant(TS_I64, TS_SHAPE(n_unique), counts),
  };
  g_free(order);
  g_free(inverse);
  g_free(first);
  g_free(counts);
  for (int k = 0; k < c->n_out; k++)
    if (!(c->out[k] = outs[k]))
      return false;
  return true;
}

/* NonMaxSuppression, on the host from the boxes' and scores' values: per
 * batch and class, the boxes scoring above score_threshold from the best
 * down (ties by index), each kept unless it overlaps one kept before by
 * an IoU above iou_threshold, at most max_output_boxes_per_class (default
 * 0: none).  Output [selected, 3]: batch, class, box. */
typedef struct nms_scored {
  int64_t box;
  double score;
} nms_scored;

static int nms_by_score(gconstpointer pa, gconstpointer pb, gpointer unused)
{
  const nms_scored *a = pa, *b = pb;
  return a->score != b->score ? (a->score > b->score ? -1 : 1) : (a->box > b->box) - (a->box < b->box);
}

/* Box k of batch b as y1 <= y2, x1 <= x2. */
static void nms_corners(ts_tensor *boxes, int64_t at, bool centre, double out[4])
{
  double v[4];
  for (int i = 0; i < 4; i++)
    v[i] = ts_tensor_get_f64(boxes, at + i);
  if (centre) { /* x centre, y centre, width, height */
    out[0] = v[1] - v[3] / 2, out[1] = v[0] - v[2] / 2, out[2] = v[1] + v[3] / 2, out[3] = v[0] + v[2] / 2;
  } else {
    out[0] = MIN(v[0], v[2]), out[1] = MIN(v[1], v[3]), out[2] = MAX(v[0], v[2]), out[3] = MAX(v[1], v[3]);
  }
}

static double nms_iou(const double a[4], const double b[4])
{
  double area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
  double h = MIN(a[2], b[2]) - MAX(a[0], b[0]), w = MIN(a[3], b[3]) - MAX(a[1], b[1]);
  if (area_a <= 0 || area_b <= 0 || h <= 0 || w <= 0)
    return 0;
  return h * w / (area_a + area_b - h * w);
}

static bool op_non_max_suppression(onnx_node_ctx *c)
{
  ts_tensor *boxes = values_of(c, 0), *scores = boxes ? values_of(c, 1) : NULL;
  if (!boxes || !scores)
    return false;
  double max_out = 0, iou_threshold = 0, score_threshold = -INFINITY;
  if ((IN(2) && !host_double(c, 2, &max_out)) || (IN(3) && !host_double(c, 3, &iou_threshold)) ||
      (IN(4) && !host_double(c, 4, &score_threshold)))
    return false;
  ts_shape bs = ts_tensor_shape(boxes), ss = ts_tensor_shape(scores);
  if (bs.rank != 3 || bs.dim[2] != 4 || ss.rank != 3 || ss.dim[0] != bs.dim[0] || ss.dim[2] != bs.dim[1]) {
    onnx_node_fail(c, TS_ERR_SHAPE, "boxes must be [batch, boxes, 4] and scores [batch, classes, boxes]");
    return false;
  }
  int64_t batches = bs.dim[0], classes = ss.dim[1], n = bs.dim[1];
  bool centre = attr_int(c, "center_point_box", 0) != 0;
  if (n > G_MAXINT || !check_made(c, (double)batches * (double)classes * (double)n * 3))
    return false;
  GArray *picked = g_array_new(FALSE, FALSE, sizeof(int64_t));
  nms_scored *cand = g_new(nms_scored, n + 1);
  double *kept = g_new(double, 4 * (n + 1)); /* the boxes kept of this batch and class */
  for (int64_t b = 0; b < batches; b++)
    for (int64_t k = 0; k < classes; k++) {
      int64_t m = 0, n_kept = 0;
      for (int64_t i = 0; i < n; i++) {
        double sc = ts_tensor_get_f64(scores, (b * classes + k) * n + i);
        if (sc > score_threshold)
          cand[m++] = (nms_scored){ i, sc };
      }
      g_qsort_with_data(cand, (gint)m, sizeof *cand, nms_by_score, NULL);
      for (int64_t i = 0; i < m && (double)n_kept < max_out; i++) {
        double box[4];
        nms_corners(boxes, (b * n + cand[i].box) * 4, centre, box);
        bool suppressed = false;
        for (int64_t j = 0; j < n_kept && !suppressed; j++)
          suppressed = nms_iou(box, kept + 4 * j) > iou_threshold;
        if (suppressed)
          continue;
        memcpy(kept + 4 * n_kept++, box, sizeof box);
        int64_t row[3] = { b, k, cand[i].box };
        g_array_append_vals(picked, row, 3);
      }
    }
  ts_tensor *y = ts_constant(TS_I64, TS_SHAPE(picked->len / 3, 3), picked->data);
  g_array_free(picked, TRUE);
  g_free(cand);
  g_free(kept);
  return out1(c, y);
}

/* Compress: the slices along axis (of the flattened input without one)
 * whose condition is true; those past the condition's end are dropped. */
static bool op_compress(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *cond = values_of(c, 1);
  if (!x || !cond)
    return false;
  int64_t axis = attr_int(c, "axis", 0);
  if (!attr(c, "axis"))
    x = ts_reshape_at(HERE, x, TS_SHAPE(-1));
  if (!x || !norm_axis(c, &axis, ts_tensor_rank(x)))
    return false;
  int64_t dim = ts_tensor_dim(x, (int)axis);
  if (dim < 0) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "the size of axis %" PRId64 " is unknown", axis);
    return false;
  }
  int64_t n = MIN(ts_tensor_size(cond), dim), k = 0;
  int64_t *picked = g_try_new(int64_t, n + 1);
  if (!picked) {
    onnx_node_fail(c, TS_ERR_NO_MEMORY, "no memory for %" PRId64 " indices", n);
    return false;
  }
  for (int64_t i = 0; i < n; i++)
    if (ts_tensor_get_f64(cond, i) != 0)
      picked[k++] = i;
  ts_tensor *indices = ts_constant(TS_I64, TS_SHAPE(k), picked);
  g_free(picked);
  return out1(c, ts_gather_at(HERE, x, indices, (int)axis));
}

/* NonZero: the indices of the non-zero elements (NaN counts), [rank, n]
 * in row-major order, as NumPy's nonzero. */
static bool op_non_zero(onnx_node_ctx *c)
{
  ts_tensor *x = values_of(c, 0);
  if (!x)
    return false;
  int rank = ts_tensor_rank(x);
  if (rank == 0) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "a scalar input (NumPy's nonzero of a 0-d array is deprecated)");
    return false;
  }
  ts_shape shape = ts_tensor_shape(x);
  int64_t size = ts_tensor_size(x), n = 0;
  for (int64_t i = 0; i < size; i++)
    n += ts_tensor_get_f64(x, i) != 0;
  int64_t *where = g_try_new(int64_t, (size_t)rank * (size_t)n + 1);
  if (!where) {
    onnx_node_fail(c, TS_ERR_NO_MEMORY, "no memory for the indices of %" PRId64 " elements", n);
    return false;
  }
  for (int64_t i = 0, k = 0; i < size; i++) {
    if (ts_tensor_get_f64(x, i) == 0)
      continue;
    for (int64_t d = rank - 1, rest = i; d >= 0; d--) {
      where[d * n + k] = rest % shape.dim[d];
      rest /= shape.dim[d];
    }
    k++;
  }
  ts_tensor *y = ts_constant(TS_I64, TS_SHAPE(rank, n), where);
  g_free(where);
  return out1(c, y);
}

/* ---- ops composed from others (losses, element gathers, masks) ------------------------ */

/* x with a dim of 1 inserted at axis. */
static ts_tensor *unsqueeze(ts_tensor *x, int axis)
{
  if (!x)
    return NULL;
  ts_shape s = ts_tensor_shape(x), out = { .rank = s.rank + 1 };
  for (int d = 0, k = 0; d < out.rank; d++)
    out.dim[d] = d == axis ? 1 : s.dim[k++];
  return reshape(x, out);
}

/* 0, 1, ..., n-1 (i64) shaped to lie along axis of a tensor of rank `rank`. */
static ts_tensor *iota_along(int64_t n, int axis, int rank)
{
  ts_shape s = { .rank = rank };
  for (int d = 0; d < rank; d++)
    s.dim[d] = d == axis ? n : 1;
  return reshape(ts_range_at(HERE, TS_I64, 0, (double)n, 1), s);
}

/* The reduction attribute of the losses: 0 none, 1 sum, 2 mean; -1 + error. */
static int loss_reduction(const onnx_node_ctx *c)
{
  char buf[16];
  const char *r = attr_string(c, "reduction", "mean", buf, sizeof buf);
  int v = strcmp(r, "none") == 0 ? 0 : strcmp(r, "sum") == 0 ? 1 : strcmp(r, "mean") == 0 ? 2 : -1;
  if (v < 0)
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "reduction '%s'", r);
  return v;
}

/* NegativeLogLikelihoodLoss on input [N, C, d...] and target [N, d...]:
 * the picked class's value by a one-hot mask (a sum of it and zeros),
 * weighted, ignore_index masked out, then reduced. */
static ts_tensor *nll(const onnx_node_ctx *c, ts_tensor *input, ts_tensor *target, ts_tensor *weight)
{
  int reduction = loss_reduction(c);
  if (!input || !target || reduction < 0)
    return NULL;
  int rank = ts_tensor_rank(input);
  int64_t classes = ts_tensor_dim(input, 1);
  if (rank < 2 || classes < 0) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "input must be [N, C, ...] with C known");
    return NULL;
  }
  target = ts_cast_at(HERE, target, TS_I64);
  ts_tensor *onehot = ts_equal_at(HERE, unsqueeze(target, 1), iota_along(classes, 1, rank));
  ts_tensor *picked = ts_reduce_sum_at(HERE, ts_where_at(HERE, onehot, input, scalar(input, 0)), TS_INTS(1), false);
  ts_tensor *loss = ts_neg_at(HERE, picked), *w = NULL;
  bool ignore = attr(c, "ignore_index") != NULL;
  ts_tensor *keep = ignore ? ts_not_equal_at(HERE, target, ts_scalar_i64(attr_int(c, "ignore_index", 0))) : NULL;
  if (weight) {
    ts_tensor *safe = keep ? ts_where_at(HERE, keep, target, ts_scalar_i64(0)) : target;
    w = ts_gather_at(HERE, weight, safe, 0);
    if (keep)
      w = ts_where_at(HERE, keep, w, scalar(w, 0));
  } else if (keep)
    w = ts_cast_at(HERE, keep, ts_tensor_dtype(input));
  if (w)
    loss = ts_mul_at(HERE, loss, w);
  if (reduction == 0)
    return loss;
  ts_tensor *sum = ts_reduce_sum_at(HERE, loss, TS_ALL_AXES, false);
  if (reduction == 1)
    return sum;
  return w ? ts_div_at(HERE, sum, ts_reduce_sum_at(HERE, w, TS_ALL_AXES, false))
           : ts_reduce_mean_at(HERE, loss, TS_ALL_AXES, false);
}

static bool op_nll_loss(onnx_node_ctx *c)
{
  return out1(c, nll(c, IN(0), IN(1), IN(2)));
}

static bool op_softmax_cross_entropy(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  int rank = ts_tensor_rank(x);
  const Onnx__AttributeProto *reduction = attr(c, "reduction");
  if (rank == 2 && c->n_out == 1 && !IN(2) && !attr(c, "ignore_index") && reduction && reduction->has_s &&
      reduction->s.len == 4 && memcmp(reduction->s.data, "none", 4) == 0)
    return out1(c, ts_sparse_softmax_cross_entropy_at(HERE, IN(1), x)); /* the engine's own op */
  ts_ints perm = { .n = rank };
  for (int d = 0; d < rank; d++)
    perm.v[d] = d;
  perm.v[1] = rank - 1;
  perm.v[rank - 1] = 1;
  ts_tensor *logp = rank == 2 ? ts_log_softmax_at(HERE, x)
                              : ts_transpose_at(HERE, ts_log_softmax_at(HERE, ts_transpose_at(HERE, x, perm)), perm);
  c->out[0] = nll(c, logp, IN(1), IN(2));
  if (c->n_out > 1)
    c->out[1] = logp;
  return c->out[0] != NULL;
}

/* GatherElements: out[..i..] = data[..index[..i..] on axis..], by a one-hot
 * over the axis (indices' shape + [D]) picking from data moved to match. */
static bool op_gather_elements(onnx_node_ctx *c)
{
  ts_tensor *data = IN(0), *idx = IN(1);
  if (!data || !idx)
    return false;
  int rank = ts_tensor_rank(data);
  int64_t axis = attr_int(c, "axis", 0);
  if (!norm_axis(c, &axis, rank))
    return false;
  if (ts_tensor_rank(idx) != rank || rank + 1 > TS_MAX_RANK) {
    onnx_node_fail(c, TS_ERR_SHAPE, "indices must have the data's rank (%d)", rank);
    return false;
  }
  ts_shape ds = ts_tensor_shape(data), is = ts_tensor_shape(idx);
  int64_t dim = ds.dim[axis];
  ts_ints begin = { .n = rank }, size = { .n = rank };
  for (int d = 0; d < rank; d++) {
    if (ds.dim[d] < 0 || is.dim[d] < 0) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "unknown dims");
      return false;
    }
    begin.v[d] = 0;
    size.v[d] = d == axis ? -1 : is.dim[d];
  }
  idx = ts_cast_at(HERE, idx, TS_I64);
  idx = ts_where_at(HERE, ts_less_at(HERE, idx, ts_scalar_i64(0)), ts_add_at(HERE, idx, ts_scalar_i64(dim)), idx);
  ts_tensor *onehot = ts_equal_at(HERE, unsqueeze(idx, rank), iota_along(dim, rank, rank + 1));
  ts_ints perm = { .n = rank };
  for (int d = 0, k = 0; d < rank; d++)
    if (d != axis)
      perm.v[k++] = d;
  perm.v[rank - 1] = axis;
  ts_tensor *moved = ts_transpose_at(HERE, ts_slice_at(HERE, data, begin, size), perm); /* axis last */
  moved = unsqueeze(moved, (int)axis);                                                /* 1 at axis */
  ts_tensor *picked = ts_where_at(HERE, onehot, moved, scalar(data, 0));
  return out1(c, ts_reduce_sum_at(HERE, picked, TS_INTS(rank), false));
}

/* Trilu: x where the diagonal offset j - i is on the kept side of k, else 0. */
static bool op_trilu(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  int rank = ts_tensor_rank(x);
  double k = 0;
  if (IN(1) && !host_double(c, 1, &k))
    return false;
  if (rank < 2 || ts_tensor_dim(x, -1) < 0 || ts_tensor_dim(x, -2) < 0) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "the last two dims must be known");
    return false;
  }
  ts_tensor *offset = ts_sub_at(HERE, iota_along(ts_tensor_dim(x, -1), 1, 2), iota_along(ts_tensor_dim(x, -2), 0, 2));
  ts_tensor *kt = ts_scalar_i64((int64_t)k);
  ts_tensor *keep = attr_int(c, "upper", 1) ? ts_greater_equal_at(HERE, offset, kt) : ts_less_equal_at(HERE, offset, kt);
  return out1(c, ts_where_at(HERE, keep, x, scalar(x, 0)));
}

static bool op_hardmax(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  int rank = ts_tensor_rank(x);
  int64_t axis = attr_int(c, "axis", c->opset < 13 ? 1 : -1);
  if (c->opset < 13) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "Hardmax before opset 13 (2-D coercion)");
    return false;
  }
  if (!norm_axis(c, &axis, rank) || ts_tensor_dim(x, (int)axis) < 0)
    return ts_failed() ? false : (onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "unknown axis dim"), false);
  ts_tensor *arg = unsqueeze(ts_argmax_at(HERE, x, (int)axis), (int)axis);
  ts_tensor *hot = ts_equal_at(HERE, arg, iota_along(ts_tensor_dim(x, (int)axis), (int)axis, rank));
  return out1(c, ts_cast_at(HERE, hot, ts_tensor_dtype(x)));
}

/* OneHot: the OneHot row, with ONNX's negative indices (from the end)
 * moved into [0, depth) first and indices of other dtypes as int64 (a
 * float truncated, as ONNX casts it). */
static bool op_one_hot(onnx_node_ctx *c)
{
  ts_tensor *idx = IN(0), *values = IN(2);
  double depth;
  if (!idx || !values || !host_double(c, 1, &depth))
    return false;
  int rank = ts_tensor_rank(idx) + 1;
  int64_t axis = attr_int(c, "axis", -1);
  if (!norm_axis(c, &axis, rank) || depth < 1 || depth > (1 << 24))
    return ts_failed() ? false : (onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "depth %g", depth), false);
  int64_t n = (int64_t)depth;
  if (!check_made(c, (double)ts_tensor_size(IN(0)) * (double)n))
    return false;
  if (ts_tensor_dtype(idx) != TS_U8) {
    idx = ts_cast_at(HERE, idx, TS_I64);
    idx = ts_where_at(HERE, ts_less_at(HERE, idx, ts_scalar_i64(0)), ts_add_at(HERE, idx, ts_scalar_i64(n)), idx);
  }
  ts_tensor *off = ts_gather_at(HERE, values, ts_scalar_i64(0), 0), *on = ts_gather_at(HERE, values, ts_scalar_i64(1), 0);
  return out1(c, ts_one_hot_at(HERE, idx, n, on, off, (int)axis, ts_tensor_dtype(values)));
}

static bool op_isinf(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  bool pos = attr_int(c, "detect_positive", 1), neg = attr_int(c, "detect_negative", 1);
  if (pos && neg)
    return out1(c, ts_is_inf_at(HERE, x));
  ts_tensor *p = ts_equal_at(HERE, x, scalar(x, INFINITY)), *n = ts_equal_at(HERE, x, scalar(x, -INFINITY));
  return out1(c, pos ? p : neg ? n : ts_logical_and_at(HERE, p, n));
}

static bool op_shrink(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  double bias = attr_float(c, "bias", 0), lambd = attr_float(c, "lambd", 0.5);
  ts_tensor *y = ts_where_at(HERE, ts_less_at(HERE, x, scalar(x, -lambd)), ts_add_at(HERE, x, scalar(x, bias)), scalar(x, 0));
  return out1(c, ts_where_at(HERE, ts_greater_at(HERE, x, scalar(x, lambd)), ts_sub_at(HERE, x, scalar(x, bias)), y));
}

static bool op_celu(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  double alpha = attr_float(c, "alpha", 1.0);
  if (!x)
    return false;
  ts_tensor *neg = ts_mul_at(HERE, scalar(x, alpha),
                             ts_sub_at(HERE, ts_exp_at(HERE, ts_div_at(HERE, x, scalar(x, alpha))), scalar(x, 1)));
  return out1(c, ts_add_at(HERE, ts_maximum_at(HERE, scalar(x, 0), x), ts_minimum_at(HERE, scalar(x, 0), neg)));
}

static bool op_eye_like(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x || ts_tensor_rank(x) != 2 || ts_tensor_dim(x, 0) < 0 || ts_tensor_dim(x, 1) < 0) {
    if (!ts_failed())
      onnx_node_fail(c, TS_ERR_SHAPE, "input must be 2-D with known dims");
    return false;
  }
  ts_dtype dtype = ts_tensor_dtype(x);
  if (attr(c, "dtype") && !dtype_of(c, attr_int(c, "dtype", 1), &dtype))
    return false;
  ts_tensor *offset = ts_sub_at(HERE, iota_along(ts_tensor_dim(x, 1), 1, 2), iota_along(ts_tensor_dim(x, 0), 0, 2));
  return out1(c, ts_cast_at(HERE, ts_equal_at(HERE, offset, ts_scalar_i64(attr_int(c, "k", 0))), dtype));
}

/* A filter [span, span, 1, 1] of ones at w's taps (opset 19's dilations:
 * d - 1 zeros between them), zeros elsewhere, no wider than x padded;
 * NULL + error. */
static ts_tensor *window_ones(onnx_node_ctx *c, ts_tensor *x, const window *w, ts_dtype dtype)
{
  int64_t span[2];
  for (int i = 0; i < 2; i++) {
    span[i] = (w->k[i] - 1) * w->dilation[i] + 1;
    if (span[i] > window_dim(x, i) + w->pad_begin[i] + w->pad_end[i]) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "the window (%" PRId64 " wide, dilated) is wider than the "
                     "padded input", span[i]);
      return NULL;
    }
  }
  double *taps = g_new0(double, span[0] * span[1]);
  for (int64_t i = 0; i < w->k[0]; i++)
    for (int64_t j = 0; j < w->k[1]; j++)
      taps[i * w->dilation[0] * span[1] + j * w->dilation[1]] = 1;
  ts_tensor *f = ts_cast_at(HERE, ts_constant(TS_F64, TS_SHAPE(span[0], span[1], 1, 1), taps), dtype);
  g_free(taps);
  return f;
}

/* AveragePool: each channel's window sums by a convolution with ones (the
 * channels as batch), divided by the window's size, or with
 * count_include_pad=0 by how many input elements each window covers.
 * ceil_mode's last partial windows count the input and the pads, not
 * what lies past them. */
static bool op_average_pool(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  int rank = ts_tensor_rank(x);
  int64_t kernel[2] = { 1, 1 };
  if (!attr(c, "kernel_shape")) {
    onnx_node_fail(c, TS_ERR_FORMAT, "kernel_shape is required");
    return false;
  }
  if (rank == 5)
    return pool3d(c, x, false);
  window w;
  if (!spatial_attr(c, "kernel_shape", rank - 2, 1, 1, kernel) || !window_of(c, x, kernel, &w))
    return false;
  window explicit_pads = w;
  if (attr_int(c, "ceil_mode", 0))
    ceil_pads(x, &w);
  bool past_pads = w.pad_end[0] != explicit_pads.pad_end[0] || w.pad_end[1] != explicit_pads.pad_end[1];
  if (!ts_dtype_is_float(ts_tensor_dtype(x))) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "integer input");
    return false;
  }
  ts_shape s = ts_tensor_shape(x);
  for (int d = 0; d < rank; d++)
    if (s.dim[d] < 0) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "unknown dims");
      return false;
    }
  ts_shape flat = s;
  flat.dim[0] = s.dim[0] * s.dim[1];
  flat.dim[1] = 1;
  ts_tensor *ones = window_ones(c, x, &w, ts_tensor_dtype(x));
  if (!ones)
    return false;
  ts_tensor *sum = ts_conv2d_at(HERE, to_nhwc_padded(reshape(x, flat), &w, 0), ones, (int)w.stride[0],
                                (int)w.stride[1], TS_PADDING_VALID);
  sum = from_nhwc(sum, rank); /* [N*C, 1, spatial...] */
  ts_tensor *count;
  bool include_pad = attr_int(c, "count_include_pad", 0) != 0;
  if (include_pad && !past_pads)
    count = scalar(x, (double)(w.k[0] * w.k[1]));
  else {
    /* ones where a window's element counts: the input, and the explicit
     * pads when they are included */
    ts_shape one = flat;
    one.dim[0] = 1;
    ts_tensor *counted = to_nhwc_padded(ts_ones_at(HERE, ts_tensor_dtype(x), one), &explicit_pads, include_pad);
    for (int i = 0; i < 2; i++)
      counted = pad_axis(counted, 1 + i, 0, w.pad_end[i] - explicit_pads.pad_end[i], 0);
    count = ts_conv2d_at(HERE, counted, ones, (int)w.stride[0], (int)w.stride[1], TS_PADDING_VALID);
    count = from_nhwc(count, rank);
  }
  ts_tensor *y = ts_div_at(HERE, sum, count);
  if (!y)
    return false;
  ts_shape out = ts_tensor_shape(y);
  out.dim[0] = s.dim[0];
  out.dim[1] = s.dim[1];
  return out1(c, reshape(y, out));
}

/* Pad: our Pad row where it takes the pads (constant, reflect once over);
 * else constant (fills), edge and reflect (gathers of computed indices),
 * negative pads cropping first. */
/* Pad's axes (opset 18): the pads are for those axes only, 0 on the others. */
static bool pads_on_axes(onnx_node_ctx *c, int rank, ts_ints *pads)
{
  ts_ints axes;
  if (!host_ints(c, 3, &axes))
    return false;
  if (pads->n != 2 * axes.n) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "%d pads for %d axes", pads->n, axes.n);
    return false;
  }
  if (2 * rank > TS_MAX_RANK) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "rank %d (ranks over %d are not supported)", rank,
                   TS_MAX_RANK / 2);
    return false;
  }
  ts_ints full = { .n = 2 * rank };
  bool seen[TS_MAX_RANK] = { false };
  for (int i = 0; i < axes.n; i++) {
    int64_t a = axes.v[i];
    if (!norm_axis(c, &a, rank))
      return false;
    if (seen[a]) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "axis %" PRId64 " given twice", a);
      return false;
    }
    seen[a] = true;
    full.v[a] = pads->v[i];
    full.v[a + rank] = pads->v[i + axes.n];
  }
  *pads = full;
  return true;
}

static bool op_pad(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  int rank = ts_tensor_rank(x);
  ts_ints pads;
  double value = 0;
  if (c->opset < 11) {
    if (!attr_ints(c, "pads", &pads))
      return ts_failed() ? false : (onnx_node_fail(c, TS_ERR_FORMAT, "pads are required"), false);
    value = attr_float(c, "value", 0);
  } else {
    ts_tensor *h = c->in[1].host;
    if (!h) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "input 1 must be known when the graph is built");
      return false;
    }
    if (ts_tensor_size(h) > TS_MAX_RANK) { /* begins and ends: ranks up to 4 */
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "%" PRId64 " pads (ranks over %d are not supported)",
                     ts_tensor_size(h), TS_MAX_RANK / 2);
      return false;
    }
    pads.n = (int)ts_tensor_size(h);
    for (int i = 0; i < pads.n; i++)
      pads.v[i] = ts_tensor_get_i64(h, i);
    if (IN(2) && !host_double(c, 2, &value))
      return false;
    if (c->opset >= 18 && IN(3) && !pads_on_axes(c, rank, &pads))
      return false;
  }
  if (pads.n != 2 * rank) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "%d pads for rank %d", pads.n, rank);
    return false;
  }
  char buf[16];
  const char *mode = attr_string(c, "mode", "constant", buf, sizeof buf);
  bool constant = strcmp(mode, "constant") == 0, edge = strcmp(mode, "edge") == 0;
  bool wrap = c->opset >= 19 && strcmp(mode, "wrap") == 0; /* circular */
  if (!constant && !edge && !wrap && strcmp(mode, "reflect") != 0) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "mode '%s'", mode);
    return false;
  }
  /* pads our Pad row takes (reflect: once over, as TensorFlow's) run as it */
  ts_ints befores = { .n = rank }, afters = { .n = rank };
  bool as_row = !edge && !wrap;
  for (int d = 0; d < rank; d++) {
    befores.v[d] = pads.v[d];
    afters.v[d] = pads.v[d + rank];
    int64_t dim = ts_tensor_dim(x, d);
    as_row &= befores.v[d] >= 0 && afters.v[d] >= 0 &&
              (constant || (dim >= 0 && befores.v[d] < dim && afters.v[d] < dim));
  }
  if (as_row)
    return out1(c, ts_pad_at(HERE, x, befores, afters, constant ? TS_PAD_CONSTANT : TS_PAD_REFLECT,
                             constant ? scalar(x, value) : NULL));
  ts_tensor *y = x;
  for (int d = 0; d < rank && y; d++) {
    int64_t before = pads.v[d], after = pads.v[d + rank], dim = ts_tensor_dim(y, d);
    if (dim < 0 || before < -dim || after < -dim || before > 1 << 20 || after > 1 << 20) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "pads %" PRId64 ", %" PRId64 " for axis %d", before, after, d);
      return false;
    }
    if (before < 0 || after < 0) { /* crop first */
      ts_ints begin = { .n = rank }, size = { .n = rank };
      for (int e = 0; e < rank; e++) {
        begin.v[e] = e == d && before < 0 ? -before : 0;
        size.v[e] = e == d ? dim + (before < 0 ? before : 0) + (after < 0 ? after : 0) : -1;
      }
      y = ts_slice_at(HERE, y, begin, size);
      dim = size.v[d];
      before = before < 0 ? 0 : before;
      after = after < 0 ? 0 : after;
    }
    if (before == 0 && after == 0)
      continue;
    if (constant) {
      y = pad_axis(y, d, before, after, value);
      continue;
    }
    if (dim == 0 || (!edge && dim == 1 && (before || after))) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "%s padding of a dim of %" PRId64, mode, dim);
      return false;
    }
    int64_t n = dim + before + after;
    int64_t *idx = g_new(int64_t, n);
    for (int64_t i = 0; i < n; i++) {
      int64_t j = i - before;
      if (edge)
        j = j < 0 ? 0 : j >= dim ? dim - 1 : j;
      else if (wrap)
        j = (j % dim + dim) % dim;
      else
        while (j < 0 || j >= dim)
          j = j < 0 ? -j : 2 * (dim - 1) - j;
      idx[i] = j;
    }
    y = ts_gather_at(HERE, y, ts_constant(TS_I64, TS_SHAPE(n), idx), d);
    g_free(idx);
  }
  return out1(c, y == x ? ts_identity_at(HERE, x) : y);
}

/* DepthToSpace and SpaceToDepth: a reshape, a transpose, a reshape. */
static bool op_depth_to_space(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  int64_t b = attr_int(c, "blocksize", 0);
  if (!x)
    return false;
  ts_shape s = ts_tensor_shape(x);
  if (s.rank != 4 || b <= 0 || s.dim[1] < 0 || s.dim[1] % (b * b)) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "blocksize %" PRId64 " for a rank-%d input", b, s.rank);
    return false;
  }
  char buf[8];
  bool crd = strcmp(attr_string(c, "mode", "DCR", buf, sizeof buf), "CRD") == 0;
  int64_t n = s.dim[0], ch = s.dim[1] / (b * b), h = s.dim[2], w = s.dim[3];
  ts_tensor *y = crd ? ts_transpose_at(HERE, reshape(x, TS_SHAPE(n, ch, b, b, h, w)), TS_INTS(0, 1, 4, 2, 5, 3))
                     : ts_transpose_at(HERE, reshape(x, TS_SHAPE(n, b, b, ch, h, w)), TS_INTS(0, 3, 4, 1, 5, 2));
  return out1(c, reshape(y, TS_SHAPE(n, ch, h < 0 ? -1 : h * b, w < 0 ? -1 : w * b)));
}

static bool op_space_to_depth(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  int64_t b = attr_int(c, "blocksize", 0);
  if (!x)
    return false;
  ts_shape s = ts_tensor_shape(x);
  if (s.rank != 4 || b <= 0 || s.dim[2] < 0 || s.dim[3] < 0 || s.dim[2] % b || s.dim[3] % b) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "blocksize %" PRId64 " for this input", b);
    return false;
  }
  int64_t n = s.dim[0], ch = s.dim[1], h = s.dim[2] / b, w = s.dim[3] / b;
  ts_tensor *y = ts_transpose_at(HERE, reshape(x, TS_SHAPE(n, ch, h, b, w, b)), TS_INTS(0, 3, 5, 1, 2, 4));
  return out1(c, reshape(y, TS_SHAPE(n, ch < 0 ? -1 : ch * b * b, h, w)));
}

/* CumSum: our Cumsum row, in order (as the reference adds); the axis a
 * tensor known when the graph is built. */
static bool op_cumsum(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  double axis_d;
  if (!x || !host_double(c, 1, &axis_d))
    return false;
  int64_t axis = (int64_t)axis_d;
  if (!norm_axis(c, &axis, ts_tensor_rank(x)))
    return false;
  return out1(c, ts_cumsum_at(HERE, x, (int)axis, attr_int(c, "exclusive", 0), attr_int(c, "reverse", 0)));
}

/* attribute name's count values (each unit where it is absent); false
 * after an error. */
static bool nd_attr(onnx_node_ctx *c, const char *name, int count, int64_t unit, ts_ints *out)
{
  out->n = count;
  for (int i = 0; i < count; i++)
    out->v[i] = unit;
  ts_ints v;
  if (!attr_ints(c, name, &v))
    return !ts_failed();
  if (v.n != count) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "%d values in '%s' (%d expected)", v.n, name, count);
    return false;
  }
  *out = v;
  return true;
}

/* ConvTranspose: our ConvTranspose row (ops/conv_transpose.c: a GEMM and
 * col2im per group, the op's own work whatever the strides and
 * dilations), its pads before each dim and the output's dims as ONNX
 * sizes them from pads, output_padding, auto_pad or output_shape.  Where
 * output_shape or SAME_* fixes the output, the total padding is split as
 * ONNX Runtime splits it (the odd one at the end, SAME_LOWER at the
 * start; none where the output outgrows the taps, which output_padding
 * then fills at the end). */
static bool op_conv_transpose(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *wt = IN(1), *b = IN(2);
  if (!x || !wt)
    return false;
  int rank = ts_tensor_rank(x), n = rank - 2;
  if (ts_tensor_rank(wt) != rank || n < 1 || n > 3) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "only 1-D, 2-D and 3-D transposed convolutions are supported");
    return false;
  }
  int64_t group = attr_int(c, "group", 1);
  if (group < 1 || group > INT_MAX) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "group %" PRId64, group);
    return false;
  }
  ts_ints strides, dil, outpad, pads, ks, oshape = { 0 };
  if (!nd_attr(c, "strides", n, 1, &strides) || !nd_attr(c, "dilations", n, 1, &dil) ||
      !nd_attr(c, "output_padding", n, 0, &outpad) || !nd_attr(c, "pads", 2 * n, 0, &pads) ||
      !nd_attr(c, "kernel_shape", n, -1, &ks))
    return false;
  bool given = attr(c, "output_shape") != NULL;
  if (given) {
    ts_ints v;
    if (!attr_ints(c, "output_shape", &v))
      return false;
    if (v.n != n && v.n != n + 2) { /* the spatial dims, or all of them */
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "%d values in 'output_shape' for %d spatial dims", v.n, n);
      return false;
    }
    oshape.n = n;
    for (int i = 0; i < n; i++)
      oshape.v[i] = v.v[v.n - n + i];
  }
  char buf[32];
  const char *auto_pad = attr_string(c, "auto_pad", "NOTSET", buf, sizeof buf);
  bool same = strncmp(auto_pad, "SAME_", 5) == 0, lower = strcmp(auto_pad, "SAME_LOWER") == 0;
  bool valid = strcmp(auto_pad, "VALID") == 0;
  if (!same && !valid && strcmp(auto_pad, "NOTSET") != 0) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "auto_pad '%s'", auto_pad);
    return false;
  }
  ts_ints begin = { .n = n }, out = { .n = n };
  for (int i = 0; i < n; i++) {
    int64_t in = ts_tensor_dim(x, 2 + i), k = ts_tensor_dim(wt, 2 + i);
    int64_t s = strides.v[i], d = dil.v[i], op = outpad.v[i], pb = valid ? 0 : pads.v[i];
    int64_t pe = valid ? 0 : pads.v[i + n];
    if (in < 0 || k < 0 || (ks.v[i] != -1 && ks.v[i] != k)) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "spatial dim %d: input %" PRId64 " (known), kernel %" PRId64
                     " (kernel_shape %" PRId64 ")", i, in, k, ks.v[i]);
      return false;
    }
    if (s < 1 || s > 1 << 20 || d < 1 || d > 1 << 20 || op < 0 || op > 1 << 20 || pb < 0 || pb > 1 << 30 ||
        pe < 0 || pe > 1 << 30 || in > (int64_t)1 << 40 || k > (int64_t)1 << 20) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "spatial dim %d: stride %" PRId64 ", dilation %" PRId64
                     ", output_padding %" PRId64 " or pads %" PRId64 ", %" PRId64 " out of range", i, s, d, op, pb,
                     pe);
      return false;
    }
    /* the taps' extent: the input spread by the strides, the dilated kernel */
    int64_t extent = s * (MAX(in, 1) - 1) + (MAX(k, 1) - 1) * d + 1 + op;
    if (given || same) {
      int64_t want = given ? oshape.v[i] : in * s;
      int64_t total = MAX(extent - want, 0);
      pb = lower ? total - total / 2 : total / 2;
      out.v[i] = want;
    } else {
      out.v[i] = extent - pb - pe;
    }
    begin.v[i] = pb;
    if (out.v[i] < 0) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "spatial dim %d: an output of %" PRId64 " (pads larger than "
                     "the taps' extent)", i, out.v[i]);
      return false;
    }
  }
  double made = (double)MAX(ts_tensor_dim(x, 0), 1) * (double)MAX(ts_tensor_dim(wt, 1), 1) * (double)group;
  for (int i = 0; i < n; i++)
    made *= (double)out.v[i];
  if (!check_made(c, made)) /* output_shape asks for any size */
    return false;
  return out1(c, ts_conv_transpose_at(HERE, x, wt, b, strides, dil, begin, out, (int)group));
}

/* GatherND (batch_dims 0): the index tuples flattened to offsets into the
 * data's leading dims, then one gather. */
static bool op_gather_nd(onnx_node_ctx *c)
{
  ts_tensor *data = IN(0), *idx = IN(1);
  if (!data || !idx)
    return false;
  ts_shape ds = ts_tensor_shape(data), is = ts_tensor_shape(idx);
  int64_t batch_dims = attr_int(c, "batch_dims", 0);
  bool batches_match = batch_dims == 0 || (batch_dims > 0 && batch_dims < is.rank && batch_dims < ds.rank);
  for (int d = 0; batches_match && d < batch_dims; d++)
    batches_match = is.dim[d] >= 0 && is.dim[d] == ds.dim[d];
  if (!batches_match) {
    onnx_node_fail(c, TS_ERR_SHAPE, "batch_dims %" PRId64 " must be leading dims known and equal in data and "
                   "indices", batch_dims);
    return false;
  }
  idx = ts_cast_at(HERE, idx, TS_I64);
  if (batch_dims > 0) {
    /* each tuple gets its batch coordinates in front: then batch_dims is 0 */
    ts_tensor **parts = g_new0(ts_tensor *, batch_dims + 2);
    ts_shape one = is;
    one.dim[is.rank - 1] = 1;
    for (int d = 0; d < batch_dims; d++)
      parts[d] = ts_add_at(HERE, iota_along(is.dim[d], d, is.rank), ts_zeros_at(HERE, TS_I64, one));
    parts[batch_dims] = idx;
    idx = ts_concat_at(HERE, parts, (int)batch_dims + 1, is.rank - 1);
    g_free(parts);
    is = ts_tensor_shape(idx);
  }
  int64_t q = is.rank > 0 ? is.dim[is.rank - 1] : -1;
  if (q < 1 || q > ds.rank || is.rank - 1 + ds.rank - q > TS_MAX_RANK) {
    onnx_node_fail(c, TS_ERR_SHAPE, "index tuples of %" PRId64 " for data of rank %d", q, ds.rank);
    return false;
  }
  int64_t lead = 1;
  for (int d = 0; d < ds.rank; d++)
    if (ds.dim[d] < 0) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "unknown dims");
      return false;
    }
  ts_tensor *flat = NULL;
  for (int64_t j = q - 1; j >= 0; j--) {
    ts_ints begin = { .n = is.rank }, size = { .n = is.rank };
    for (int d = 0; d < is.rank; d++) {
      begin.v[d] = d == is.rank - 1 ? j : 0;
      size.v[d] = d == is.rank - 1 ? 1 : -1;
    }
    ts_tensor *part = ts_slice_at(HERE, idx, begin, size);
    part = ts_where_at(HERE, ts_less_at(HERE, part, ts_scalar_i64(0)), ts_add_at(HERE, part, ts_scalar_i64(ds.dim[j])), part);
    part = ts_mul_at(HERE, part, ts_scalar_i64(lead));
    flat = flat ? ts_add_at(HERE, flat, part) : part;
    lead *= ds.dim[j];
  }
  ts_shape rows = { .rank = 1 + ds.rank - (int)q }, fs = { .rank = is.rank - 1 }, out = { .rank = 0 };
  rows.dim[0] = lead;
  for (int d = (int)q; d < ds.rank; d++)
    rows.dim[1 + d - q] = ds.dim[d];
  for (int d = 0; d < is.rank - 1; d++)
    fs.dim[d] = is.dim[d];
  ts_tensor *y = ts_gather_at(HERE, reshape(data, rows), reshape(flat, fs), 0);
  for (int d = 0; d < is.rank - 1; d++)
    out.dim[out.rank++] = is.dim[d];
  for (int d = (int)q; d < ds.rank; d++)
    out.dim[out.rank++] = ds.dim[d];
  return out1(c, reshape(y, out));
}

/* The permutation moving axis to the end, and its inverse. */
static void axis_last(int rank, int axis, ts_ints *to, ts_ints *back)
{
  to->n = back->n = rank;
  for (int d = 0, k = 0; d < rank; d++)
    if (d != axis)
      to->v[k++] = d;
  to->v[rank - 1] = axis;
  for (int d = 0; d < rank; d++)
    back->v[to->v[d]] = d;
}

/* ScatterElements: with the axis moved last, a one-hot [..., K, D] of the
 * indices picks where each update lands; reduction none, add or mul. */
static bool op_scatter_elements(onnx_node_ctx *c)
{
  ts_tensor *data = IN(0), *idx = IN(1), *upd = IN(2);
  if (!data || !idx || !upd)
    return false;
  int rank = ts_tensor_rank(data);
  int64_t axis = attr_int(c, "axis", 0);
  if (!norm_axis(c, &axis, rank))
    return false;
  ts_shape ds = ts_tensor_shape(data), is = ts_tensor_shape(idx);
  bool fits = is.rank == rank && ts_shape_equal(is, ts_tensor_shape(upd)) && rank + 1 <= TS_MAX_RANK;
  for (int d = 0; d < rank && fits; d++)
    fits = ds.dim[d] >= 0 && (d == axis || is.dim[d] == ds.dim[d]);
  if (!fits) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "indices and updates must match the data off the axis, with known dims");
    return false;
  }
  char buf[8];
  const char *reduction = attr_string(c, "reduction", "none", buf, sizeof buf);
  bool add = strcmp(reduction, "add") == 0, mul = strcmp(reduction, "mul") == 0;
  if (!add && !mul && strcmp(reduction, "none") != 0) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "reduction '%s'", reduction);
    return false;
  }
  int64_t dim = ds.dim[axis];
  ts_ints to, back;
  axis_last(rank, (int)axis, &to, &back);
  ts_tensor *i = ts_cast_at(HERE, ts_transpose_at(HERE, idx, to), TS_I64);
  i = ts_where_at(HERE, ts_less_at(HERE, i, ts_scalar_i64(0)), ts_add_at(HERE, i, ts_scalar_i64(dim)), i);
  ts_tensor *u = unsqueeze(ts_transpose_at(HERE, upd, to), rank);                      /* [..., K, 1] */
  ts_tensor *hot = ts_equal_at(HERE, unsqueeze(i, rank), iota_along(dim, rank, rank + 1)); /* [..., K, D] */
  ts_tensor *d = ts_transpose_at(HERE, data, to);
  ts_tensor *y;
  if (mul)
    y = ts_mul_at(HERE, d, ts_reduce_prod_at(HERE, ts_where_at(HERE, hot, u, scalar(data, 1)), TS_INTS(rank - 1), false));
  else {
    ts_tensor *sum = ts_reduce_sum_at(HERE, ts_where_at(HERE, hot, u, scalar(data, 0)), TS_INTS(rank - 1), false);
    ts_tensor *any = ts_reduce_max_at(HERE, ts_cast_at(HERE, hot, TS_I32), TS_INTS(rank - 1), false);
    y = add ? ts_add_at(HERE, d, sum) : ts_where_at(HERE, ts_cast_at(HERE, any, TS_BOOL), sum, d);
  }
  return out1(c, ts_transpose_at(HERE, y, back));
}

/* ScatterND as ScatterElements does it, on rows: data as [P, S] (P the
 * cells the index tuples address, S each one's slice), each update's tuple
 * as a row number, a one-hot [M, P] of the M updates picking which rows
 * each [M, S] update reaches, summed (add, and none, whose duplicates ONNX
 * leaves undefined) or multiplied (mul) over the updates. */
static bool op_scatter_nd(onnx_node_ctx *c)
{
  ts_tensor *data = IN(0), *idx = IN(1), *upd = IN(2);
  if (!data || !idx || !upd)
    return false;
  ts_shape ds = ts_tensor_shape(data), is = ts_tensor_shape(idx);
  int rank = ds.rank;
  int64_t k = is.rank > 0 ? is.dim[is.rank - 1] : -1, m = 1, p = 1, slice = 1;
  bool known = k >= 1 && k <= rank;
  for (int d = 0; known && d < is.rank - 1; d++)
    known = is.dim[d] >= 0 && !__builtin_mul_overflow(m, is.dim[d], &m) && m <= MAX_MADE_ELEMENTS;
  for (int d = 0; known && d < rank; d++) {
    int64_t *into = d < k ? &p : &slice;
    known = ds.dim[d] >= 0 && !__builtin_mul_overflow(*into, ds.dim[d], into) && *into <= MAX_MADE_ELEMENTS;
  }
  if (!known || (double)m * (double)p * (double)slice > (double)MAX_MADE_ELEMENTS) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "indices [..., k] with k in 1..%d and known dims, and at most "
                   "%" PRId64 " elements of updates x rows", rank, MAX_MADE_ELEMENTS);
    return false;
  }
  char buf[8];
  const char *reduction = attr_string(c, "reduction", "none", buf, sizeof buf);
  bool add = strcmp(reduction, "add") == 0, mul = strcmp(reduction, "mul") == 0;
  if (!add && !mul && strcmp(reduction, "none") != 0) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "reduction '%s'", reduction);
    return false;
  }
  /* each tuple as a row: negative indices from the end, then by strides */
  int64_t strides[TS_MAX_RANK], dims[TS_MAX_RANK];
  for (int64_t d = k - 1, stride = 1; d >= 0; d--) {
    strides[d] = stride;
    dims[d] = ds.dim[d];
    stride *= ds.dim[d];
  }
  ts_tensor *i = reshape(ts_cast_at(HERE, idx, TS_I64), TS_SHAPE(m, k));
  ts_tensor *dim_row = ts_constant(TS_I64, TS_SHAPE(1, k), dims);
  i = ts_where_at(HERE, ts_less_at(HERE, i, ts_scalar_i64(0)), ts_add_at(HERE, i, dim_row), i);
  ts_tensor *row = ts_reduce_sum_at(HERE, ts_mul_at(HERE, i, ts_constant(TS_I64, TS_SHAPE(1, k), strides)),
                                    TS_INTS(1), true);                                   /* [M, 1] */
  ts_tensor *hot = unsqueeze(ts_equal_at(HERE, row, iota_along(p, 1, 2)), 2);           /* [M, P, 1] */
  ts_tensor *u = unsqueeze(reshape(upd, TS_SHAPE(m, slice)), 1);                        /* [M, 1, S] */
  ts_tensor *d = reshape(data, TS_SHAPE(p, slice));
  ts_tensor *y;
  if (mul)
    y = ts_mul_at(HERE, d, ts_reduce_prod_at(HERE, ts_where_at(HERE, hot, u, scalar(data, 1)), TS_INTS(0), false));
  else {
    ts_tensor *sum = ts_reduce_sum_at(HERE, ts_where_at(HERE, hot, u, scalar(data, 0)), TS_INTS(0), false);
    ts_tensor *any = ts_reduce_max_at(HERE, ts_cast_at(HERE, hot, TS_I32), TS_INTS(0), false);
    y = add ? ts_add_at(HERE, d, sum) : ts_where_at(HERE, ts_cast_at(HERE, any, TS_BOOL), sum, d);
  }
  return out1(c, reshape(y, ds));
}

/* TopK: our TopKV2 row for the largest along the last axis; else the
 * first k of a Sort and an ArgSort along the axis (stable: equal values
 * lower index first both ways, as ONNX's TopK).  sorted=0 leaves the
 * order to us: sorted it is. */
static bool op_topk(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  double kd;
  if (!x || !host_double(c, 1, &kd))
    return false;
  int rank = ts_tensor_rank(x);
  int64_t axis = attr_int(c, "axis", -1);
  if (!norm_axis(c, &axis, rank))
    return false;
  int64_t dim = ts_tensor_dim(x, (int)axis), k = (int64_t)kd;
  if (k < 0 || k > INT32_MAX || (dim >= 0 && k > dim)) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "k=%" PRId64 " for an axis of %" PRId64, k, dim);
    return false;
  }
  bool largest = attr_int(c, "largest", 1) != 0;
  ts_tensor *values, *indices;
  if (largest && axis == rank - 1) {
    if (!ts_top_k_at(HERE, x, (int)k, &values, &indices))
      return false;
  } else {
    ts_ints begin = { .n = rank }, size = { .n = rank };
    for (int d = 0; d < rank; d++) {
      begin.v[d] = 0;
      size.v[d] = d == axis ? k : -1;
    }
    values = ts_slice_at(HERE, ts_sort_at(HERE, x, (int)axis, largest), begin, size);
    indices = ts_slice_at(HERE, ts_argsort_at(HERE, x, (int)axis, largest), begin, size);
  }
  c->out[0] = values;
  if (c->n_out > 1)
    c->out[1] = ts_cast_at(HERE, indices, TS_I64);
  return !ts_failed() && c->out[0] != NULL;
}

/* ---- Resize ---------------------------------------------------------------------------- */

/* Resize as ONNX's reference computes it, one axis at a time: each output
 * position x maps to x_ori in the input (the coordinate transformation),
 * takes the n input elements nearest to it (the input padded by its edge
 * values) and weights them (nearest: one of two; linear: 2; cubic: 4).
 * The indices and weights are computed here; the graph gathers and sums. */
typedef enum { RESIZE_NEAREST, RESIZE_LINEAR, RESIZE_CUBIC } resize_mode;

typedef struct resize_spec {
  resize_mode mode;
  char transform[32], nearest[32];
  double cubic_a;
  bool exclude_outside;
  /* tf_crop_and_resize: the region per axis (fractions of in - 1), and
   * the value of outputs that fall outside the input */
  double roi_start[TS_MAX_RANK], roi_end[TS_MAX_RANK], extrapolation;
} resize_spec;

static double resize_x_ori(const resize_spec *r, int axis, double x, double scale, int64_t in, int64_t out)
{
  double out_width = scale * (double)in;
  if (strcmp(r->transform, "tf_crop_and_resize") == 0) {
    double start = r->roi_start[axis], end = r->roi_end[axis];
    return out_width > 1 ? start * (double)(in - 1) + x * (end - start) * (double)(in - 1) / (out_width - 1)
                         : 0.5 * (start + end) * (double)(in - 1);
  }
  if (strcmp(r->transform, "align_corners") == 0)
    return out_width == 1 ? 0 : x * (double)(in - 1) / (out_width - 1);
  if (strcmp(r->transform, "asymmetric") == 0)
    return x / scale;
  if (strcmp(r->transform, "pytorch_half_pixel") == 0)
    return out_width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (strcmp(r->transform, "tf_half_pixel_for_nn") == 0)
    return (x + 0.5) / scale;
  if (strcmp(r->transform, "half_pixel_symmetric") == 0) { /* half_pixel about the input's centre */
    double adjustment = (double)out / out_width, centre = (double)in / 2;
    return centre * (1 - adjustment) + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5; /* half_pixel */
}

static int resize_coeffs(const resize_spec *r, double ratio, double *c)
{
  if (r->mode == RESIZE_LINEAR) {
    c[0] = 1 - ratio;
    c[1] = ratio;
    return 2;
  }
  if (r->mode == RESIZE_CUBIC) {
    double a = r->cubic_a, p = ratio + 1, q = 1 - ratio, q1 = q + 1;
    c[0] = ((a * p - 5 * a) * p + 8 * a) * p - 4 * a;
    c[1] = ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1;
    c[2] = ((a + 2) * q - (a + 3)) * q * q + 1;
    c[3] = ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a;
    return 4;
  }
  bool second;
  if (ratio == floor(ratio))
    second = true;
  else if (strcmp(r->nearest, "round_prefer_ceil") == 0)
    second = ratio >= 0.5;
  else if (strcmp(r->nearest, "floor") == 0)
    second = false;
  else if (strcmp(r->nearest, "ceil") == 0)
    second = true;
  else /* round_prefer_floor */
    second = ratio > 0.5;
  c[0] = !second;
  c[1] = second;
  return 2;
}

/* x resized along axis to out elements at scale. */
static ts_tensor *resize_axis(const resize_spec *r, ts_tensor *x, int axis, int64_t out, double scale)
{
  int64_t in = ts_tensor_dim(x, axis);
  int rank = ts_tensor_rank(x);
  enum { MAX_TAPS = 4 };
  int n = r->mode == RESIZE_CUBIC ? 4 : 2, pad = (n + 1) / 2;
  int64_t *idx = g_new(int64_t, MAX_TAPS * out);
  double *w = g_new(double, MAX_TAPS * out);
  uint8_t *outside = g_new0(uint8_t, out);
  bool any_outside = false;
  for (int64_t o = 0; o < out; o++) {
    double x_ori = resize_x_ori(r, axis, (double)o, scale, in, out);
    if (strcmp(r->transform, "tf_crop_and_resize") == 0 && (x_ori < 0 || x_ori > (double)(in - 1))) {
      outside[o] = 1;
      any_outside = true;
    }
    double ratio = x_ori == floor(x_ori) ? 1 : x_ori - floor(x_ori);
    double c[MAX_TAPS];
    resize_coeffs(r, ratio, c);
    /* the n indices of the padded input nearest to x_ori + pad (ties: the lower), in order */
    double xp = x_ori + pad;
    int64_t limit = in + 2 * pad, first = (int64_t)floor(xp) - n, best[MAX_TAPS];
    int found = 0;
    for (int k = 0; k < n; k++) {
      int64_t pick = -1;
      for (int64_t cand = first; cand <= first + 2 * n + 1; cand++) {
        bool taken = cand < 0 || cand >= limit;
        for (int j = 0; j < found && !taken; j++)
          taken = best[j] == cand;
        if (!taken && (pick < 0 || fabs(xp - (double)cand) < fabs(xp - (double)pick)))
          pick = cand;
      }
      best[found++] = pick;
    }
    for (int i = 1; i < n; i++) /* sorted */
      for (int j = i; j > 0 && best[j - 1] > best[j]; j--) {
        int64_t t = best[j];
        best[j] = best[j - 1];
        best[j - 1] = t;
      }
    double total = 0;
    for (int k = 0; k < n; k++) {
      int64_t orig = best[k] - pad;
      if (r->exclude_outside && (orig < 0 || orig >= in))
        c[k] = 0;
      total += c[k];
      idx[k * out + o] = orig < 0 ? 0 : orig >= in ? in - 1 : orig;
    }
    for (int k = 0; k < n; k++)
      w[k * out + o] = r->exclude_outside && total != 0 ? c[k] / total : c[k];
  }
  ts_shape along = { .rank = rank };
  for (int d = 0; d < rank; d++)
    along.dim[d] = d == axis ? out : 1;
  ts_tensor *y = NULL;
  for (int k = 0; k < n; k++) {
    if (r->mode == RESIZE_NEAREST)
      break; /* below */
    ts_tensor *taken = ts_gather_at(HERE, x, ts_constant(TS_I64, TS_SHAPE(out), idx + k * out), axis);
    ts_tensor *weight = ts_cast_at(HERE, ts_constant(TS_F64, along, w + k * out), ts_tensor_dtype(x));
    ts_tensor *term = ts_mul_at(HERE, taken, weight);
    y = y ? ts_add_at(HERE, y, term) : term;
  }
  if (r->mode == RESIZE_NEAREST) { /* the picked index per output, no arithmetic */
    int64_t *pick = g_new(int64_t, out);
    for (int64_t o = 0; o < out; o++)
      pick[o] = w[o] != 0 ? idx[o] : idx[out + o];
    y = ts_gather_at(HERE, x, ts_constant(TS_I64, TS_SHAPE(out), pick), axis);
    g_free(pick);
  }
  if (any_outside)
    y = ts_where_at(HERE, ts_cast_at(HERE, ts_constant(TS_U8, along, outside), TS_BOOL), scalar(x, r->extrapolation), y);
  g_free(outside);
  g_free(idx);
  g_free(w);
  return y;
}

static bool resize_by(onnx_node_ctx *c, const resize_spec *r, ts_tensor *x, ts_tensor *hs, ts_tensor *hz,
                      bool by_sizes);

static bool op_resize(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  if (c->opset < 11) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "Resize before opset 11 is not supported");
    return false;
  }
  char policy[24];
  attr_string(c, "keep_aspect_ratio_policy", "stretch", policy, sizeof policy);
  const char *refused = attr_int(c, "antialias", 0) ? "antialias" : attr(c, "axes") ? "axes"
                        : strcmp(policy, "stretch") != 0 ? "keep_aspect_ratio_policy other than stretch"
                                                         : NULL;
  if (refused) { /* opset 18's */
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "%s is not supported", refused);
    return false;
  }
  resize_spec r = { .cubic_a = attr_float(c, "cubic_coeff_a", -0.75),
                    .exclude_outside = attr_int(c, "exclude_outside", 0) != 0 };
  char mode[16];
  attr_string(c, "mode", "nearest", mode, sizeof mode);
  attr_string(c, "coordinate_transformation_mode", "half_pixel", r.transform, sizeof r.transform);
  attr_string(c, "nearest_mode", "round_prefer_floor", r.nearest, sizeof r.nearest);
  r.mode = strcmp(mode, "linear") == 0 ? RESIZE_LINEAR : strcmp(mode, "cubic") == 0 ? RESIZE_CUBIC : RESIZE_NEAREST;
  if (strcmp(mode, "nearest") != 0 && r.mode == RESIZE_NEAREST) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "mode '%s'", mode);
    return false;
  }
  static const char *const transforms[] = { "half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                                            "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                            "half_pixel_symmetric" /* opset 19 */ };
  bool known = false;
  for (size_t i = 0; i < G_N_ELEMENTS(transforms) - (c->opset < 19); i++)
    known |= strcmp(r.transform, transforms[i]) == 0;
  if (!known) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "coordinate_transformation_mode '%s' is not supported", r.transform);
    return false;
  }
  if (strcmp(r.transform, "tf_crop_and_resize") == 0) {
    ts_tensor *roi = c->n_in > 1 ? c->in[1].host : NULL;
    int rank = ts_tensor_rank(x);
    if (!roi || ts_tensor_size(roi) != 2 * rank) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "tf_crop_and_resize needs roi (%d values) known when the graph "
                     "is built", 2 * rank);
      return false;
    }
    for (int d = 0; d < rank; d++) {
      r.roi_start[d] = ts_tensor_get_f64(roi, d);
      r.roi_end[d] = ts_tensor_get_f64(roi, rank + d);
    }
    r.extrapolation = attr_float(c, "extrapolation_value", 0);
  }
  ts_tensor *hs = c->n_in > 2 ? c->in[2].host : NULL, *hz = c->n_in > 3 ? c->in[3].host : NULL;
  return resize_by(c, &r, x, hs, hz, IN(3) != NULL);
}

/* Upsample (opsets 7 to 9): Resize with asymmetric coordinates, nearest
 * rounding down; its scales an attribute before opset 9, an input after. */
static bool op_upsample(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  resize_spec r = { .transform = "asymmetric", .nearest = "floor" };
  char mode[16];
  attr_string(c, "mode", "nearest", mode, sizeof mode);
  r.mode = strcmp(mode, "linear") == 0 ? RESIZE_LINEAR : RESIZE_NEAREST;
  if (r.mode == RESIZE_NEAREST && strcmp(mode, "nearest") != 0) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "mode '%s'", mode);
    return false;
  }
  const Onnx__AttributeProto *a = attr(c, "scales");
  ts_tensor *hs = c->n_in > 1 ? c->in[1].host : NULL;
  if (c->opset < 9) {
    if (!a || a->n_floats > TS_MAX_RANK) {
      onnx_node_fail(c, TS_ERR_FORMAT, "the scales attribute is required (at most %d values)", TS_MAX_RANK);
      return false;
    }
    hs = ts_constant(TS_F32, TS_SHAPE((int64_t)a->n_floats), a->floats);
  } else if (!IN(1)) {
    onnx_node_fail(c, TS_ERR_FORMAT, "the scales input is required");
    return false;
  }
  return resize_by(c, &r, x, hs, NULL, false);
}

/* Resizes x as r says to the scales hs (host values) or, by_sizes, to the
 * sizes hz; NULL values are what the graph does not know while built. */
static bool resize_by(onnx_node_ctx *c, const resize_spec *r, ts_tensor *x, ts_tensor *hs, ts_tensor *hz, bool by_sizes)
{
  int rank = ts_tensor_rank(x);
  ts_shape s = ts_tensor_shape(x);
  double scales[TS_MAX_RANK];
  int64_t sizes[TS_MAX_RANK];
  if ((by_sizes && !hz) || (!by_sizes && !hs)) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "scales or sizes must be known when the graph is built");
    return false;
  }
  if (ts_tensor_size(by_sizes ? hz : hs) != rank) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "%" PRId64 " %s for rank %d", ts_tensor_size(by_sizes ? hz : hs),
                   by_sizes ? "sizes" : "scales", rank);
    return false;
  }
  double made = 1;
  for (int d = 0; d < rank; d++) {
    if (s.dim[d] < 0) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "unknown dims");
      return false;
    }
    if (by_sizes) {
      sizes[d] = ts_tensor_get_i64(hz, d);
      scales[d] = s.dim[d] ? (double)sizes[d] / (double)s.dim[d] : 1;
    } else {
      scales[d] = ts_tensor_get_f64(hs, d);
      sizes[d] = (int64_t)floor((double)s.dim[d] * scales[d]);
    }
    if (!(scales[d] > 0) || sizes[d] < 0 || (s.dim[d] == 0 && sizes[d] > 0)) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "scale %g, size %" PRId64 " on axis %d", scales[d], sizes[d], d);
      return false;
    }
    made *= (double)sizes[d];
  }
  if (!check_made(c, made))
    return false;
  ts_tensor *y = x;
  for (int d = 0; d < rank && y; d++)
    if (sizes[d] != s.dim[d] || scales[d] != 1)
      y = resize_axis(r, y, d, sizes[d], scales[d]);
  return out1(c, y == x ? ts_identity_at(HERE, x) : y);
}

/* The permutation that swaps axes 0 and 1 of a rank-n tensor. */
static ts_ints swap01(int rank)
{
  ts_ints perm = { .n = rank };
  for (int d = 0; d < rank; d++)
    perm.v[d] = d < 2 ? 1 - d : d;
  return perm;
}

/* ReverseSequence: the first sequence_lens[b] steps of each batch entry
 * reversed, the rest kept: one Gather of the rows of x seen as [B*T, ...]
 * (batch and time axes moved first), its indices made on the host. */
static bool op_reverse_sequence(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *lens = c->n_in > 1 ? c->in[1].host : NULL;
  if (!x || !IN(1))
    return false;
  if (!lens) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "sequence_lens must be known when the graph is built");
    return false;
  }
  int rank = ts_tensor_rank(x);
  int64_t batch_axis = attr_int(c, "batch_axis", 1), time_axis = attr_int(c, "time_axis", 0);
  ts_shape s = ts_tensor_shape(x);
  if (rank < 2 || (batch_axis != 0 && batch_axis != 1) || time_axis != 1 - batch_axis) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "batch_axis %" PRId64 " and time_axis %" PRId64
                   " must be 0 and 1 of an input of rank 2 or more (rank %d)", batch_axis, time_axis, rank);
    return false;
  }
  int64_t batch = s.dim[batch_axis], steps = s.dim[time_axis];
  if (batch < 0 || steps < 0 || ts_tensor_size(lens) != batch) {
    onnx_node_fail(c, TS_ERR_SHAPE, "sequence_lens has %" PRId64 " values for a batch of %" PRId64,
                   ts_tensor_size(lens), batch);
    return false;
  }
  if (!check_made(c, (double)batch * (double)steps))
    return false;
  int64_t *idx = g_new(int64_t, batch * steps + 1);
  for (int64_t b = 0; b < batch; b++) {
    int64_t len = ts_tensor_get_i64(lens, b);
    if (len < 0 || len > steps) {
      g_free(idx);
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "sequence_lens[%" PRId64 "] = %" PRId64 " is outside 0..%" PRId64,
                     b, len, steps);
      return false;
    }
    for (int64_t t = 0; t < steps; t++)
      idx[b * steps + t] = b * steps + (t < len ? len - 1 - t : t);
  }
  ts_tensor *rows = ts_constant(TS_I64, TS_SHAPE(batch * steps), idx);
  g_free(idx);
  ts_tensor *xt = batch_axis == 0 ? x : ts_transpose_at(HERE, x, swap01(rank));
  ts_shape flat = { .rank = rank - 1 };
  flat.dim[0] = batch * steps;
  for (int d = 2; d < rank; d++)
    flat.dim[d - 1] = s.dim[d];
  ts_tensor *y = ts_gather_at(HERE, ts_reshape_at(HERE, xt, flat), rows, 0);
  y = ts_reshape_at(HERE, y, ts_tensor_shape(xt));
  return out1(c, batch_axis == 0 ? y : ts_transpose_at(HERE, y, swap01(rank)));
}

/* Det of [..., n, n] by Leibniz's formula: the signed sum over the n!
 * permutations p of prod_i x[..., i, p(i)], exact in its operations and
 * so capped at n = 6 (720 products). */
#define DET_MAX_N 6

static bool op_det(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  ts_shape s = ts_tensor_shape(x);
  int64_t n = s.rank >= 2 ? s.dim[s.rank - 1] : -1;
  if (s.rank < 2 || n < 0 || s.dim[s.rank - 2] != n || n > DET_MAX_N) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "the input must be [..., n, n] with n known and at most %d", DET_MAX_N);
    return false;
  }
  ts_shape batch = { .rank = s.rank - 2 };
  for (int d = 0; d < batch.rank; d++)
    batch.dim[d] = s.dim[d];
  ts_tensor *entry[DET_MAX_N][DET_MAX_N];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      ts_ints begin = { .n = s.rank }, size = { .n = s.rank };
      for (int d = 0; d < s.rank; d++)
        size.v[d] = d < batch.rank ? -1 : 1;
      begin.v[s.rank - 2] = i;
      begin.v[s.rank - 1] = j;
      entry[i][j] = ts_reshape_at(HERE, ts_slice_at(HERE, x, begin, size), batch);
    }
  /* the permutations in lexicographic order, each one's sign by its inversions */
  int p[DET_MAX_N];
  for (int i = 0; i < n; i++)
    p[i] = i;
  ts_tensor *det = n == 0 ? ts_cast_at(HERE, ts_ones_at(HERE, TS_F64, batch), ts_tensor_dtype(x)) : NULL;
  for (bool more = n > 0; more;) {
    int inversions = 0;
    for (int i = 0; i < n; i++)
      for (int j = i + 1; j < n; j++)
        inversions += p[i] > p[j];
    ts_tensor *term = entry[0][p[0]];
    for (int i = 1; i < n; i++)
      term = ts_mul_at(HERE, term, entry[i][p[i]]);
    det = !det ? (inversions % 2 ? ts_neg_at(HERE, term) : term)
               : (inversions % 2 ? ts_sub_at(HERE, det, term) : ts_add_at(HERE, det, term));
    int k = n - 2; /* next permutation */
    while (k >= 0 && p[k] > p[k + 1])
      k--;
    if ((more = k >= 0)) {
      int l = n - 1;
      while (p[l] < p[k])
        l--;
      int t = p[k];
      p[k] = p[l];
      p[l] = t;
      for (int a = k + 1, b = n - 1; a < b; a++, b--)
        t = p[a], p[a] = p[b], p[b] = t;
    }
  }
  return out1(c, det);
}

/* The DFT of the signal sig[0] + i sig[1] (sig[1] NULL: real), [..., rows],
 * of length len (rows <= len: the rest zeros) at freqs frequencies, by
 * products with cosine and sine tables made on the host. */
static void dft_products(ts_tensor *const *sig, int64_t rows, int64_t len, int64_t freqs, bool inverse,
                         ts_tensor **re, ts_tensor **im)
{
  double *cs = g_new(double, rows * freqs + 1), *sn = g_new(double, rows * freqs + 1);
  for (int64_t i = 0; i < rows; i++)
    for (int64_t f = 0; f < freqs; f++) {
      double t = 2 * G_PI * (double)((i * f) % len) / (double)len;
      cs[i * freqs + f] = cos(t) / (inverse ? (double)len : 1);
      sn[i * freqs + f] = (inverse ? 1 : -1) * sin(t) / (inverse ? (double)len : 1);
    }
  ts_dtype dt = ts_tensor_dtype(sig[0]);
  ts_tensor *ct = ts_cast_at(HERE, ts_constant(TS_F64, TS_SHAPE(rows, freqs), cs), dt);
  ts_tensor *st = ts_cast_at(HERE, ts_constant(TS_F64, TS_SHAPE(rows, freqs), sn), dt);
  g_free(cs);
  g_free(sn);
  /* (a + ib)(cos + i sin') = a cos - b sin' + i (a sin' + b cos) */
  *re = ts_matmul_at(HERE, sig[0], ct, false, false);
  *im = ts_matmul_at(HERE, sig[0], st, false, false);
  if (sig[1]) {
    *re = ts_sub_at(HERE, *re, ts_matmul_at(HERE, sig[1], st, false, false));
    *im = ts_add_at(HERE, *im, ts_matmul_at(HERE, sig[1], ct, false, false));
  }
}

/* DFT (opset 17) as two products with cosine and sine tables made on the
 * host: the signal along axis (its real part, and imaginary part when the
 * last dim is 2) cut or zero-padded to dft_length, times the tables;
 * inverse conjugates and divides by the length, onesided keeps the first
 * length/2 + 1 frequencies.  Output [..., frequencies, ..., 2]. */
static bool op_dft(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  ts_shape s = ts_tensor_shape(x);
  int64_t axis = attr_int(c, "axis", 1), parts = s.rank ? s.dim[s.rank - 1] : -1;
  if (s.rank < 2 || (parts != 1 && parts != 2)) {
    onnx_node_fail(c, TS_ERR_SHAPE, "the input must end in a dim of 1 (real) or 2 (complex)");
    return false;
  }
  /* opset 20: the axis is input 2, -2 (the last signal axis) when omitted,
   * a negative one counted over every dim, the parts' too */
  double given_axis = -2;
  if (c->opset >= 20 && IN(2) && !host_double(c, 2, &given_axis))
    return false;
  if (c->opset >= 20)
    axis = given_axis < 0 ? (int64_t)given_axis + s.rank : (int64_t)given_axis;
  if (!norm_axis(c, &axis, s.rank - 1))
    return false;
  int64_t n = s.dim[axis], len = n;
  double given;
  if (IN(1) && !host_double(c, 1, &given))
    return false;
  if (IN(1))
    len = (int64_t)given;
  bool inverse = attr_int(c, "inverse", 0) != 0, onesided = attr_int(c, "onesided", 0) != 0;
  int64_t freqs = onesided ? len / 2 + 1 : len;
  if (n < 0 || len < 1 || !check_made(c, (double)len * (double)freqs)) {
    if (!ts_failed())
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "the signal's length must be known and dft_length at least 1");
    return false;
  }
  /* the signal's parts, the axis last: [..., n] */
  int r = s.rank - 1;
  ts_ints perm = { .n = r };
  for (int d = 0, k = 0; d < r; d++)
    if (d != axis)
      perm.v[k++] = d;
  perm.v[r - 1] = (int)axis;
  ts_tensor *part[2], *sig[2] = { NULL, NULL };
  if (parts == 2) {
    if (ts_split_at(HERE, x, 2, s.rank - 1, part) != 2)
      return false;
  } else {
    part[0] = x;
  }
  ts_shape squeezed = { .rank = r };
  for (int d = 0; d < r; d++)
    squeezed.dim[d] = s.dim[d];
  for (int k = 0; k < (int)parts; k++) {
    sig[k] = ts_transpose_at(HERE, ts_reshape_at(HERE, part[k], squeezed), perm);
    if (len < n) {
      ts_ints begin = { .n = r }, size = { .n = r };
      for (int d = 0; d < r; d++)
        size.v[d] = d == r - 1 ? len : -1;
      sig[k] = ts_slice_at(HERE, sig[k], begin, size);
    }
  }
  /* tables [min(n, len), freqs]: zero padding adds nothing to the sums */
  ts_tensor *re, *im;
  dft_products(sig, MIN(n, len), len, freqs, inverse, &re, &im);
  ts_ints back = { .n = r };
  for (int d = 0; d < r; d++)
    back.v[perm.v[d]] = d;
  ts_shape one = ts_tensor_shape(x);
  one.dim[axis] = freqs;
  one.dim[s.rank - 1] = 1;
  ts_tensor *out[2] = { ts_reshape_at(HERE, ts_transpose_at(HERE, re, back), one),
                        ts_reshape_at(HERE, ts_transpose_at(HERE, im, back), one) };
  return out1(c, ts_concat_at(HERE, out, 2, s.rank - 1));
}

/* STFT (opset 17): frames of frame_length every frame_step samples
 * (a Gather of indices made on the host), times the window, each a DFT
 * (onesided by default).  Output [batch, frames, frequencies, 2]. */
static bool op_stft(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *taper = IN(2);
  double step_d, length_d = -1;
  if (!x || !host_double(c, 1, &step_d) || (IN(3) && !host_double(c, 3, &length_d)))
    return false;
  ts_shape s = ts_tensor_shape(x);
  if (s.rank != 3 || (s.dim[2] != 1 && s.dim[2] != 2) || s.dim[0] < 0 || s.dim[1] < 0) {
    onnx_node_fail(c, TS_ERR_SHAPE, "the signal must be [batch, length, 1 or 2] with known dims");
    return false;
  }
  int64_t batch = s.dim[0], n = s.dim[1], step = (int64_t)step_d;
  int64_t len = length_d >= 0 ? (int64_t)length_d : taper ? ts_tensor_dim(taper, 0) : -1;
  if (step < 1 || len < 1 || len > n || (taper && (ts_tensor_rank(taper) != 1 || ts_tensor_dim(taper, 0) != len))) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "frame_step %" PRId64 ", frame_length %" PRId64
                   " and the taper do not fit a signal of %" PRId64, step, len, n);
    return false;
  }
  int64_t frames = (n - len) / step + 1, freqs = attr_int(c, "onesided", 1) ? len / 2 + 1 : len;
  if (!check_made(c, (double)frames * (double)len) || !check_made(c, (double)len * (double)freqs))
    return false;
  int64_t *idx = g_new(int64_t, frames * len);
  for (int64_t f = 0; f < frames; f++)
    for (int64_t i = 0; i < len; i++)
      idx[f * len + i] = f * step + i;
  ts_tensor *at = ts_constant(TS_I64, TS_SHAPE(frames, len), idx);
  g_free(idx);
  ts_tensor *part[2], *sig[2] = { NULL, NULL };
  if (s.dim[2] == 2) {
    if (ts_split_at(HERE, x, 2, 2, part) != 2)
      return false;
  } else {
    part[0] = x;
  }
  for (int k = 0; k < s.dim[2]; k++) {
    sig[k] = ts_gather_at(HERE, ts_reshape_at(HERE, part[k], TS_SHAPE(batch, n)), at, 1); /* [B, frames, len] */
    if (taper)
      sig[k] = ts_mul_at(HERE, sig[k], taper);
  }
  ts_tensor *re, *im;
  dft_products(sig, len, len, freqs, false, &re, &im);
  ts_tensor *out[2] = { ts_reshape_at(HERE, re, TS_SHAPE(batch, frames, freqs, 1)),
                        ts_reshape_at(HERE, im, TS_SHAPE(batch, frames, freqs, 1)) };
  return out1(c, ts_concat_at(HERE, out, 2, 3));
}

/* MelWeightMatrix (opset 17), made on the host as ONNX's reference makes
 * it: num_mel_bins + 2 points evenly spaced in mel between the edges,
 * moved to spectrogram bins (floored), and a triangle per mel bin rising
 * from its left point to its centre and falling to its right one.
 * Output [dft_length / 2 + 1, num_mel_bins]. */
static bool op_mel_weight_matrix(onnx_node_ctx *c)
{
  double mels_d, dft_d, rate, lo, hi;
  ts_dtype dtype = TS_F32;
  if (!host_double(c, 0, &mels_d) || !host_double(c, 1, &dft_d) || !host_double(c, 2, &rate) ||
      !host_double(c, 3, &lo) || !host_double(c, 4, &hi) ||
      !dtype_of(c, attr_int(c, "output_datatype", 1), &dtype))
    return false;
  int64_t mels = (int64_t)mels_d, dft = (int64_t)dft_d, bins = dft / 2 + 1;
  if (mels < 1 || dft < 1 || !(rate > 0) || !(lo >= 0) || !(hi > lo) || !check_made(c, (double)bins * (double)mels)) {
    if (!ts_failed())
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "num_mel_bins %" PRId64 ", dft_length %" PRId64
                     ", sample_rate %g and edges %g..%g make no matrix", mels, dft, rate, lo, hi);
    return false;
  }
  int64_t *point = g_new(int64_t, mels + 2);
  double lo_mel = 2595 * log10(1 + lo / 700), hi_mel = 2595 * log10(1 + hi / 700);
  double step = (hi_mel - lo_mel) / (double)(mels + 2);
  for (int64_t k = 0; k < mels + 2; k++) {
    double hz = 700 * (pow(10, ((double)k * step + lo_mel) / 2595) - 1);
    point[k] = (int64_t)floor((double)(dft + 1) * hz / rate);
  }
  for (int64_t k = 0; k < mels + 2; k++)
    if (point[k] < 0 || point[k] >= bins) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "upper_edge_hertz %g is past the spectrogram's %" PRId64 " bins",
                     hi, bins);
      g_free(point);
      return false;
    }
  double *w = g_new0(double, bins * mels);
  for (int64_t m = 0; m < mels; m++) {
    int64_t left = point[m], centre = point[m + 1], right = point[m + 2];
    if (centre == left)
      w[centre * mels + m] = 1;
    for (int64_t j = left; centre > left && j <= centre; j++)
      w[j * mels + m] = (double)(j - left) / (double)(centre - left);
    for (int64_t j = centre; right > centre && j < right; j++)
      w[j * mels + m] = (double)(right - j) / (double)(right - centre);
  }
  ts_tensor *y = ts_cast_at(HERE, ts_constant(TS_F64, TS_SHAPE(bins, mels), w), dtype);
  g_free(w);
  g_free(point);
  return out1(c, y);
}

/* GridSample (opset 16, 4-D): each output point samples X at the grid's
 * (x, y), from [-1, 1] to pixels (align_corners: the corner pixels'
 * centres), by its nearest pixel (rounded half to even), 2 x 2 (bilinear)
 * or 4 x 4 taps (bicubic, A = -0.75); taps outside read zeros, the border
 * or the image reflected.  The taps are Gathers of X's rows (NHWC) at
 * indices computed from the grid. */
typedef struct grid_sampler {
  ts_tensor *rows, *batch_base; /* X as [N*H*W, C]; n*H*W as [N, 1, 1] */
  int64_t h, w;
  int padding;                  /* 0 zeros, 1 border, 2 reflection */
  double lo[2], hi[2];          /* reflection bounds, x and y */
} grid_sampler;

static ts_tensor *gs_floor(ts_tensor *x)
{
  return ts_floordiv_at(HERE, x, scalar(x, 1));
}

/* x reflected into [lo, hi], as ONNX's reference reflects it */
static ts_tensor *gs_reflect(ts_tensor *x, double lo, double hi)
{
  ts_tensor *below = ts_less_at(HERE, x, scalar(x, lo)), *above = ts_greater_at(HERE, x, scalar(x, hi));
  ts_tensor *dx = ts_where_at(HERE, below, ts_sub_at(HERE, scalar(x, lo), x), ts_sub_at(HERE, x, scalar(x, hi)));
  ts_tensor *k = gs_floor(ts_div_at(HERE, dx, scalar(x, hi - lo)));
  ts_tensor *r = ts_sub_at(HERE, dx, ts_mul_at(HERE, k, scalar(x, hi - lo)));
  ts_tensor *even = ts_equal_at(HERE, ts_mod_at(HERE, k, scalar(x, 2)), scalar(x, 0));
  ts_tensor *y = ts_where_at(HERE, ts_equal_at(HERE, below, even), ts_add_at(HERE, scalar(x, lo), r),
                             ts_sub_at(HERE, scalar(x, hi), r));
  return ts_where_at(HERE, ts_logical_or_at(HERE, below, above), y, x);
}

static ts_tensor *gs_clamp(ts_tensor *x, int64_t size)
{
  return ts_minimum_at(HERE, ts_maximum_at(HERE, x, scalar(x, 0)), scalar(x, (double)(size - 1)));
}

/* weight * X at the integer pixel (px, py) (float tensors [N, Ho, Wo]), padded */
static ts_tensor *gs_tap(const grid_sampler *g, ts_tensor *px, ts_tensor *py, ts_tensor *weight)
{
  if (g->padding == 0) {
    ts_tensor *inside = ts_logical_and_at(
      HERE, ts_logical_and_at(HERE, ts_greater_equal_at(HERE, px, scalar(px, 0)), ts_less_at(HERE, px, scalar(px, (double)g->w))),
      ts_logical_and_at(HERE, ts_greater_equal_at(HERE, py, scalar(py, 0)), ts_less_at(HERE, py, scalar(py, (double)g->h))));
    weight = ts_mul_at(HERE, weight, ts_cast_at(HERE, inside, ts_tensor_dtype(weight)));
  } else if (g->padding == 2) {
    px = ts_cast_at(HERE, ts_cast_at(HERE, gs_reflect(px, g->lo[0], g->hi[0]), TS_I64), ts_tensor_dtype(px));
    py = ts_cast_at(HERE, ts_cast_at(HERE, gs_reflect(py, g->lo[1], g->hi[1]), TS_I64), ts_tensor_dtype(py));
  }
  ts_tensor *at = ts_add_at(HERE, ts_mul_at(HERE, gs_clamp(py, g->h), scalar(py, (double)g->w)), gs_clamp(px, g->w));
  at = ts_add_at(HERE, ts_cast_at(HERE, at, TS_I64), g->batch_base);
  ts_tensor *v = ts_gather_at(HERE, g->rows, at, 0); /* [N, Ho, Wo, C] */
  return ts_mul_at(HERE, v, ts_reshape_at(HERE, weight, TS_SHAPE(ts_tensor_dim(weight, 0), ts_tensor_dim(weight, 1),
                                                                 ts_tensor_dim(weight, 2), 1)));
}

/* The taps of one axis at coordinate x: positions and weights. */
static int gs_taps(ts_tensor *x, int mode, ts_tensor **pos, ts_tensor **weight)
{
  if (mode == 0) { /* nearest, half to even */
    ts_tensor *f = gs_floor(x), *rest = ts_sub_at(HERE, x, f);
    ts_tensor *odd = ts_not_equal_at(HERE, ts_mod_at(HERE, f, scalar(x, 2)), scalar(x, 0));
    ts_tensor *up = ts_logical_or_at(HERE, ts_greater_at(HERE, rest, scalar(x, 0.5)),
                                     ts_logical_and_at(HERE, ts_equal_at(HERE, rest, scalar(x, 0.5)), odd));
    pos[0] = ts_where_at(HERE, up, ts_add_at(HERE, f, scalar(x, 1)), f);
    weight[0] = ts_ones_like_at(HERE, x);
    return 1;
  }
  ts_tensor *f = gs_floor(x), *t = ts_sub_at(HERE, x, f);
  if (mode == 1) { /* bilinear */
    pos[0] = f;
    pos[1] = ts_add_at(HERE, f, scalar(x, 1));
    weight[0] = ts_sub_at(HERE, scalar(x, 1), t);
    weight[1] = t;
    return 2;
  }
  /* bicubic: taps f-1 .. f+2 at distances t+1, t, 1-t, 2-t */
  const double a = -0.75;
  for (int k = 0; k < 4; k++) {
    pos[k] = ts_add_at(HERE, f, scalar(x, k - 1));
    ts_tensor *d = ts_abs_at(HERE, ts_sub_at(HERE, t, scalar(x, k - 1)));
    ts_tensor *d2 = ts_mul_at(HERE, d, d), *d3 = ts_mul_at(HERE, d2, d);
    if (k == 1 || k == 2) /* (a+2)|d|^3 - (a+3)|d|^2 + 1 */
      weight[k] = ts_add_at(HERE, ts_sub_at(HERE, ts_mul_at(HERE, scalar(x, a + 2), d3), ts_mul_at(HERE, scalar(x, a + 3), d2)),
                            scalar(x, 1));
    else /* a|d|^3 - 5a|d|^2 + 8a|d| - 4a */
      weight[k] = ts_add_at(HERE, ts_add_at(HERE, ts_mul_at(HERE, scalar(x, a), d3), ts_mul_at(HERE, scalar(x, -5 * a), d2)),
                            ts_add_at(HERE, ts_mul_at(HERE, scalar(x, 8 * a), d), scalar(x, -4 * a)));
  }
  return 4;
}

static bool op_grid_sample(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *grid = IN(1);
  if (!x || !grid)
    return false;
  ts_shape xs = ts_tensor_shape(x), gs = ts_tensor_shape(grid);
  if (xs.rank != 4 || gs.rank != 4 || gs.dim[3] != 2 || gs.dim[0] != xs.dim[0] || xs.dim[0] < 0 || xs.dim[1] < 0 ||
      xs.dim[2] < 1 || xs.dim[3] < 1 || gs.dim[1] < 0 || gs.dim[2] < 0) {
    onnx_node_fail(c, TS_ERR_SHAPE, "X must be [N, C, H, W] and the grid [N, H_out, W_out, 2], with known dims");
    return false;
  }
  char buf[16], pbuf[16];
  /* opset 20 renamed bilinear and bicubic linear and cubic (and allowed
   * N-D inputs: only 2-D ones are taken) */
  bool renamed = c->opset >= 20;
  const char *mode_s = attr_string(c, "mode", renamed ? "linear" : "bilinear", buf, sizeof buf);
  const char *pad_s = attr_string(c, "padding_mode", "zeros", pbuf, sizeof pbuf);
  int mode = strcmp(mode_s, "nearest") == 0                             ? 0
             : strcmp(mode_s, renamed ? "linear" : "bilinear") == 0 ? 1
             : strcmp(mode_s, renamed ? "cubic" : "bicubic") == 0   ? 2
                                                                     : -1;
  int padding = strcmp(pad_s, "zeros") == 0 ? 0 : strcmp(pad_s, "border") == 0 ? 1 : strcmp(pad_s, "reflection") == 0 ? 2 : -1;
  if (mode < 0 || padding < 0) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "mode '%s' or padding_mode '%s' is not one of opset %" PRId64 "'s",
                   mode_s, pad_s, c->opset);
    return false;
  }
  bool align = attr_int(c, "align_corners", 0) != 0;
  int64_t n = xs.dim[0], ch = xs.dim[1], h = xs.dim[2], w = xs.dim[3];
  grid_sampler g = { .h = h, .w = w, .padding = padding };
  g.rows = ts_reshape_at(HERE, ts_transpose_at(HERE, x, TS_INTS(0, 2, 3, 1)), TS_SHAPE(n * h * w, ch));
  g.batch_base = ts_reshape_at(HERE, ts_range_at(HERE, TS_I64, 0, (double)(n * h * w), (double)(h * w)),
                               TS_SHAPE(n, 1, 1));
  ts_tensor *coord[2];
  if (ts_split_at(HERE, grid, 2, 3, coord) != 2)
    return false;
  int64_t size[2] = { w, h };
  ts_tensor *pos[2][4], *weight[2][4];
  int taps = 0;
  for (int a = 0; a < 2; a++) {
    ts_tensor *u = ts_reshape_at(HERE, coord[a], TS_SHAPE(n, gs.dim[1], gs.dim[2]));
    double len = (double)size[a];
    u = align ? ts_mul_at(HERE, ts_add_at(HERE, u, scalar(u, 1)), scalar(u, (len - 1) / 2))
              : ts_div_at(HERE, ts_sub_at(HERE, ts_mul_at(HERE, ts_add_at(HERE, u, scalar(u, 1)), scalar(u, len)), scalar(u, 1)),
                          scalar(u, 2));
    g.lo[a] = align ? 0 : -0.5;
    g.hi[a] = align ? len - 1 : len - 0.5;
    if (padding == 1 && mode != 2)
      u = ts_minimum_at(HERE, ts_maximum_at(HERE, u, scalar(u, 0)), scalar(u, len - 1));
    else if (padding == 2 && mode != 2)
      u = gs_reflect(u, g.lo[a], g.hi[a]);
    taps = gs_taps(u, mode, pos[a], weight[a]);
  }
  ts_tensor *y = NULL;
  for (int i = 0; i < taps; i++)
    for (int j = 0; j < taps; j++) {
      ts_tensor *v = gs_tap(&g, pos[0][j], pos[1][i], ts_mul_at(HERE, weight[0][j], weight[1][i]));
      y = y ? ts_add_at(HERE, y, v) : v;
    }
  return out1(c, ts_transpose_at(HERE, y, TS_INTS(0, 3, 1, 2)));
}

/* MaxUnpool as ONNX's reference has it: X's values put at the flat
 * indices I (the last of equal indices wins) into zeros of the inferred
 * shape (each spatial dim (in - 1) stride + kernel - pads), which then
 * sits at the start of output_shape's zeros when that is given.  The puts
 * are a one-hot of I against every position, so the product of their
 * counts is capped. */
static bool op_max_unpool(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *ind = IN(1);
  if (!x || !ind)
    return false;
  int rank = ts_tensor_rank(x), n = rank - 2;
  ts_ints k = { 0 }, strides = { .n = n }, pads = { .n = 2 * n };
  for (int i = 0; i < 2 * n; i++) {
    pads.v[i] = 0;
    strides.v[i % n] = 1;
  }
  if (n < 1 || !attr_ints(c, "kernel_shape", &k) || k.n != n || (attr(c, "strides") && !attr_ints(c, "strides", &strides)) ||
      strides.n != n || (attr(c, "pads") && !attr_ints(c, "pads", &pads)) || pads.n != 2 * n) {
    if (!ts_failed())
      onnx_node_fail(c, TS_ERR_FORMAT, "kernel_shape, strides and pads must have one value per spatial dim "
                     "(two for pads) of an input of rank 3 or more");
    return false;
  }
  ts_shape xs = ts_tensor_shape(x), inferred = xs;
  ts_ints given = { 0 };
  if (IN(2) && (!host_ints(c, 2, &given) || given.n != rank)) {
    if (!ts_failed())
      onnx_node_fail(c, TS_ERR_SHAPE, "output_shape has %d values for rank %d", given.n, rank);
    return false;
  }
  double m = 1, p = 1;
  for (int d = 0; d < rank; d++) {
    if (xs.dim[d] < 0) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "unknown dims");
      return false;
    }
    if (d >= 2)
      inferred.dim[d] = (xs.dim[d] - 1) * strides.v[d - 2] + k.v[d - 2] - pads.v[d - 2] - pads.v[d - 2 + n];
    if (inferred.dim[d] < 0 || (given.n && given.v[d] < inferred.dim[d])) {
      onnx_node_fail(c, TS_ERR_SHAPE, "output dim %d would be %" PRId64 " (output_shape: %" PRId64 ")", d,
                     inferred.dim[d], given.n ? given.v[d] : inferred.dim[d]);
      return false;
    }
    m *= (double)xs.dim[d];
    p *= (double)inferred.dim[d];
  }
  if (!check_made(c, m * p) || ts_tensor_size(ind) != (int64_t)m) {
    if (!ts_failed())
      onnx_node_fail(c, TS_ERR_SHAPE, "I has %" PRId64 " indices for %.0f values", ts_tensor_size(ind), m);
    return false;
  }
  ts_tensor *rows = reshape(ts_cast_at(HERE, ind, TS_I64), TS_SHAPE((int64_t)m, 1));
  ts_tensor *hot = ts_equal_at(HERE, rows, iota_along((int64_t)p, 1, 2)); /* [M, P] */
  ts_tensor *which = ts_where_at(HERE, hot, iota_along((int64_t)m, 0, 2), ts_scalar_i64(-1));
  ts_tensor *last = ts_reduce_max_at(HERE, which, TS_INTS(0), false); /* [P]: the last put, or -1 */
  ts_tensor *taken = ts_gather_at(HERE, reshape(x, TS_SHAPE((int64_t)m)), ts_maximum_at(HERE, last, ts_scalar_i64(0)), 0);
  ts_tensor *y = reshape(ts_where_at(HERE, ts_less_at(HERE, last, ts_scalar_i64(0)), scalar(x, 0), taken), inferred);
  for (int d = 0; given.n && d < rank; d++)
    y = pad_axis(y, d, 0, given.v[d] - inferred.dim[d], 0);
  return out1(c, y);
}

/* One axis of RoiAlign's bilinear taps: coordinates t on an axis of size
 * n become the low and high indices, their weights, and where t counts
 * (ONNX's reference: outside [-1, n] a sample is 0; below 0 it is 0; at or
 * past n - 1 both taps are the last). */
typedef struct roi_taps {
  ts_tensor *low, *high, *w_low, *w_high, *valid;
} roi_taps;

static roi_taps roi_axis(ts_tensor *t, int64_t n)
{
  roi_taps a;
  a.valid = ts_logical_and_at(HERE, ts_greater_equal_at(HERE, t, scalar(t, -1)),
                              ts_less_equal_at(HERE, t, scalar(t, (double)n)));
  t = ts_maximum_at(HERE, t, scalar(t, 0));
  ts_tensor *low = ts_floordiv_at(HERE, t, scalar(t, 1));
  ts_tensor *at_end = ts_greater_equal_at(HERE, low, scalar(t, (double)(n - 1)));
  low = ts_where_at(HERE, at_end, scalar(t, (double)(n - 1)), low);
  t = ts_where_at(HERE, at_end, low, t);
  ts_tensor *frac = ts_sub_at(HERE, t, low);
  a.w_high = frac;
  a.w_low = ts_sub_at(HERE, scalar(t, 1), frac);
  a.low = ts_cast_at(HERE, low, TS_I64);
  a.high = ts_cast_at(HERE, ts_where_at(HERE, at_end, low, ts_add_at(HERE, low, scalar(t, 1))), TS_I64);
  return a;
}

/* RoiAlign: for each ROI, bin and sample point of a sampling_ratio x
 * sampling_ratio grid per bin, the bilinear value of X gathered from its
 * NHWC rows; avg averages the samples, max takes the largest weighted tap
 * (as ONNX's reference).  An adaptive grid (sampling_ratio 0) needs the
 * ROIs when the graph is built, and one grid for all of them. */
static bool op_roi_align(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *rois = IN(1), *batch = IN(2);
  if (!x || !rois || !batch)
    return false;
  ts_shape xs = ts_tensor_shape(x);
  int64_t r = ts_tensor_dim(rois, 0);
  bool known = xs.rank == 4 && ts_tensor_rank(rois) == 2 && ts_tensor_dim(rois, 1) == 4 && r >= 0 &&
               ts_tensor_size(batch) == r && ts_dtype_is_float(ts_tensor_dtype(x));
  for (int d = 0; known && d < 4; d++)
    known = xs.dim[d] > 0;
  if (!known) {
    onnx_node_fail(c, TS_ERR_SHAPE, "X must be float [N, C, H, W] of known dims, rois [R, 4], batch_indices [R]");
    return false;
  }
  int64_t h = xs.dim[2], w = xs.dim[3], oh = attr_int(c, "output_height", 1), ow = attr_int(c, "output_width", 1);
  int64_t ratio = attr_int(c, "sampling_ratio", 0);
  double spatial = attr_float(c, "spatial_scale", 1.0);
  char mode[8], transform[24];
  attr_string(c, "mode", "avg", mode, sizeof mode);
  attr_string(c, "coordinate_transformation_mode", c->opset >= 16 ? "half_pixel" : "output_half_pixel", transform,
              sizeof transform);
  bool max_mode = strcmp(mode, "max") == 0, half = strcmp(transform, "half_pixel") == 0;
  if ((!max_mode && strcmp(mode, "avg") != 0) || (!half && strcmp(transform, "output_half_pixel") != 0) ||
      oh < 1 || ow < 1 || oh > 4096 || ow > 4096 || ratio < 0 || ratio > 64) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "mode '%s', coordinate_transformation_mode '%s', output %" PRId64
                   "x%" PRId64 ", sampling_ratio %" PRId64, mode, transform, oh, ow, ratio);
    return false;
  }
  double off = half ? 0.5 : 0;
  int64_t gh = ratio, gw = ratio;
  if (ratio == 0) {
    /* adaptive: ceil(roi size / output size), the same for every ROI */
    ts_tensor *hr = c->in[1].host;
    if (!hr) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "sampling_ratio 0 needs the rois when the graph is built");
      return false;
    }
    for (int64_t i = 0; i < r; i++) {
      double rw = (ts_tensor_get_f64(hr, 4 * i + 2) - ts_tensor_get_f64(hr, 4 * i)) * spatial;
      double rh = (ts_tensor_get_f64(hr, 4 * i + 3) - ts_tensor_get_f64(hr, 4 * i + 1)) * spatial;
      if (!half) {
        rw = MAX(rw, 1);
        rh = MAX(rh, 1);
      }
      int64_t gy = (int64_t)ceil(rh / (double)oh), gx = (int64_t)ceil(rw / (double)ow);
      if ((i && (gy != gh || gx != gw)) || gy < 1 || gx < 1 || gy > 64 || gx > 64) {
        onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "sampling_ratio 0 gives the ROIs different grids (or none)");
        return false;
      }
      gh = gy;
      gw = gx;
    }
  }
  if (!check_made(c, (double)r * (double)oh * (double)ow * (double)gh * (double)gw * (double)xs.dim[1] * 4))
    return false;
  /* coordinates [R, oh, 1, gh, 1] and [R, 1, ow, 1, gw] */
  ts_dtype dt = ts_tensor_dtype(x);
  ts_tensor *col[4];
  for (int k = 0; k < 4; k++) {
    ts_tensor *v = ts_slice_at(HERE, ts_cast_at(HERE, rois, dt), TS_INTS(0, k), TS_INTS(-1, 1));
    col[k] = ts_sub_at(HERE, ts_mul_at(HERE, reshape(v, TS_SHAPE(r, 1, 1, 1, 1)), scalar(x, spatial)), scalar(x, off));
  }
  ts_tensor *rw = ts_sub_at(HERE, col[2], col[0]), *rh = ts_sub_at(HERE, col[3], col[1]);
  if (!half) {
    rw = ts_maximum_at(HERE, rw, scalar(x, 1));
    rh = ts_maximum_at(HERE, rh, scalar(x, 1));
  }
  ts_tensor *step_y = ts_add_at(HERE, ts_cast_at(HERE, iota_along(oh, 1, 5), dt),
                                ts_div_at(HERE, ts_add_at(HERE, ts_cast_at(HERE, iota_along(gh, 3, 5), dt), scalar(x, 0.5)),
                                          scalar(x, (double)gh)));
  ts_tensor *step_x = ts_add_at(HERE, ts_cast_at(HERE, iota_along(ow, 2, 5), dt),
                                ts_div_at(HERE, ts_add_at(HERE, ts_cast_at(HERE, iota_along(gw, 4, 5), dt), scalar(x, 0.5)),
                                          scalar(x, (double)gw)));
  ts_tensor *ys = ts_add_at(HERE, col[1], ts_mul_at(HERE, ts_div_at(HERE, rh, scalar(x, (double)oh)), step_y));
  ts_tensor *xs_ = ts_add_at(HERE, col[0], ts_mul_at(HERE, ts_div_at(HERE, rw, scalar(x, (double)ow)), step_x));
  roi_taps ty = roi_axis(ys, h), tx = roi_axis(xs_, w);
  ts_tensor *valid = ts_cast_at(HERE, ts_logical_and_at(HERE, ty.valid, tx.valid), dt);
  /* rows of X as NHWC: (n H + y) W + x */
  ts_tensor *rows = reshape(ts_transpose_at(HERE, x, TS_INTS(0, 2, 3, 1)), TS_SHAPE(xs.dim[0] * h * w, xs.dim[1]));
  ts_tensor *base = ts_mul_at(HERE, reshape(ts_cast_at(HERE, batch, TS_I64), TS_SHAPE(r, 1, 1, 1, 1)),
                              ts_scalar_i64(h * w));
  ts_tensor *iy[2] = { ty.low, ty.high }, *wy[2] = { ty.w_low, ty.w_high };
  ts_tensor *ix[2] = { tx.low, tx.high }, *wx[2] = { tx.w_low, tx.w_high };
  ts_tensor *y = NULL;
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 2; b++) {
      ts_tensor *at = ts_add_at(HERE, base, ts_add_at(HERE, ts_mul_at(HERE, iy[a], ts_scalar_i64(w)), ix[b]));
      ts_tensor *weight = ts_mul_at(HERE, valid, ts_mul_at(HERE, wy[a], wx[b])); /* [R, oh, ow, gh, gw] */
      ts_tensor *tap = ts_mul_at(HERE, ts_gather_at(HERE, rows, at, 0), unsqueeze(weight, 5));
      y = !y ? tap : max_mode ? ts_maximum_at(HERE, y, tap) : ts_add_at(HERE, y, tap);
    }
  y = max_mode ? ts_reduce_max_at(HERE, y, TS_INTS(3, 4), false)
               : ts_div_at(HERE, ts_reduce_sum_at(HERE, y, TS_INTS(3, 4), false), scalar(x, (double)(gh * gw)));
  return out1(c, ts_transpose_at(HERE, y, TS_INTS(0, 3, 1, 2)));
}

/* TfIdfVectorizer over integers: each pool n-gram (of min_gram_length to
 * max_gram_length items) counted in every row of X at every start and
 * skip distance 1 .. max_skip_count + 1 (unigrams at distance 1 only), as
 * ONNX's reference counts them, into its ngram_indexes column; then TF
 * (counts), IDF (weight, or 1, where counted) or TFIDF (weight times
 * count).  Each (n-gram, distance) is a few ops, so the pool is capped. */
static bool op_tfidf_vectorizer(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  const Onnx__AttributeProto *pool = attr(c, "pool_int64s"), *counts = attr(c, "ngram_counts");
  const Onnx__AttributeProto *indexes = attr(c, "ngram_indexes"), *weights = attr(c, "weights");
  int64_t min_n = attr_int(c, "min_gram_length", 0), max_n = attr_int(c, "max_gram_length", 0);
  int64_t skips = attr_int(c, "max_skip_count", 0);
  char mode[8];
  attr_string(c, "mode", "", mode, sizeof mode);
  int rank = ts_tensor_rank(x);
  int64_t cols = rank ? ts_tensor_dim(x, rank - 1) : 1;
  if (attr(c, "pool_strings") || !ts_dtype_is_integer(ts_tensor_dtype(x))) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "only integer input and pool_int64s are supported");
    return false;
  }
  bool tf = strcmp(mode, "TF") == 0, idf = strcmp(mode, "IDF") == 0, tfidf = strcmp(mode, "TFIDF") == 0;
  if (!pool || !counts || !indexes || (!tf && !idf && !tfidf) || rank > 2 || cols < 0 || min_n < 1 ||
      max_n < min_n || skips < 0 || skips > 64 || pool->n_ints > 4096 || counts->n_ints > 64) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "TfIdfVectorizer needs pool_int64s (at most 4096), ngram_counts, "
                   "ngram_indexes, mode TF, IDF or TFIDF, 1 <= min_gram_length <= max_gram_length, "
                   "max_skip_count 0..64, and X [C] or [B, C]");
    return false;
  }
  int64_t out_size = 0;
  for (size_t i = 0; i < indexes->n_ints; i++) {
    if (indexes->ints[i] < 0 || indexes->ints[i] >= 1 << 20) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "ngram_indexes value %" PRId64 " is out of range", indexes->ints[i]);
      return false;
    }
    out_size = MAX(out_size, indexes->ints[i] + 1);
  }
  if (weights && (int64_t)weights->n_floats < out_size) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "%zu weights for %" PRId64 " outputs", weights->n_floats, out_size);
    return false;
  }
  ts_tensor *rows = rank == 2 ? x : reshape(x, TS_SHAPE(1, cols));
  int64_t batch = ts_tensor_dim(rows, 0);
  ts_tensor **column = g_new0(ts_tensor *, out_size + 1);
  size_t gram = 0; /* the pool n-gram's number, what ngram_indexes counts */
  bool ok = true;
  for (size_t g = 0; g < counts->n_ints && ok; g++) {
    int64_t n = (int64_t)g + 1, start = counts->ints[g];
    int64_t end = g + 1 < counts->n_ints ? counts->ints[g + 1] : (int64_t)pool->n_ints;
    ok = start >= 0 && end >= start && end <= (int64_t)pool->n_ints && (end - start) % n == 0;
    for (int64_t at = start; ok && at < end; at += n, gram++) {
      ok = gram < indexes->n_ints;
      if (!ok || n < min_n || n > max_n)
        continue;
      ts_tensor *count = NULL;
      for (int64_t d = 1; d <= (n == 1 ? 1 : skips + 1); d++) {
        int64_t windows = cols - (n - 1) * d;
        if (windows <= 0)
          break;
        ts_tensor *match = NULL;
        for (int64_t t = 0; t < n; t++) {
          ts_tensor *v = ts_slice_at(HERE, rows, TS_INTS(0, t * d), TS_INTS(-1, windows));
          ts_tensor *eq = ts_equal_at(HERE, v, ts_cast_at(HERE, ts_scalar_i64(pool->ints[at + t]), ts_tensor_dtype(x)));
          match = match ? ts_logical_and_at(HERE, match, eq) : eq;
        }
        ts_tensor *hits = ts_reduce_sum_at(HERE, ts_cast_at(HERE, match, TS_F32), TS_INTS(1), true); /* [B, 1] */
        count = count ? ts_add_at(HERE, count, hits) : hits;
      }
      int64_t k = indexes->ints[gram];
      if (count)
        column[k] = column[k] ? ts_add_at(HERE, column[k], count) : count;
    }
  }
  if (!ok) {
    g_free(column);
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "ngram_counts, pool_int64s and ngram_indexes do not agree");
    return false;
  }
  for (int64_t k = 0; k < out_size; k++) {
    if (!column[k])
      column[k] = ts_zeros_at(HERE, TS_F32, TS_SHAPE(batch, 1));
    float wk = weights ? weights->floats[k] : 1;
    if (idf)
      column[k] = ts_where_at(HERE, ts_greater_at(HERE, column[k], ts_cast_at(HERE, ts_scalar_f64(0), TS_F32)),
                              ts_cast_at(HERE, ts_scalar_f64(wk), TS_F32), ts_zeros_at(HERE, TS_F32, TS_SHAPE(batch, 1)));
    else if (tfidf)
      column[k] = ts_mul_at(HERE, column[k], ts_cast_at(HERE, ts_scalar_f64(wk), TS_F32));
  }
  ts_tensor *y = out_size ? ts_concat_at(HERE, column, (int)out_size, 1) : ts_zeros_at(HERE, TS_F32, TS_SHAPE(batch, 0));
  g_free(column);
  return out1(c, rank == 2 ? y : reshape(y, TS_SHAPE(out_size)));
}

/* ---- ai.onnx.preview.training: one optimizer step ------------------------------------ */

/* The optimizers' inputs: R (the learning rate), T (the update count),
 * then per_x groups of n tensors (X1..Xn, G1..Gn, ...); their outputs are
 * (per_x - 1) groups of n (X1_new..Xn_new, then the new states).  n, or
 * -1 + error when the counts do not fit. */
static int optimizer_groups(onnx_node_ctx *c, int per_x)
{
  int n = (c->n_in - 2) / per_x;
  if (n < 1 || 2 + n * per_x != c->n_in || c->n_out != n * (per_x - 1)) {
    onnx_node_fail(c, TS_ERR_FORMAT, "%d inputs and %d outputs: it takes R, T and %d groups of n tensors, "
                   "and gives %d groups of n", c->n_in, c->n_out, per_x, per_x - 1);
    return -1;
  }
  for (int i = 0; i < c->n_in; i++)
    if (!IN(i)) {
      onnx_node_fail(c, TS_ERR_FORMAT, "input %d is omitted", i);
      return -1;
    }
  if (!ts_dtype_is_float(ts_tensor_dtype(IN(2)))) {
    onnx_node_fail(c, TS_ERR_DTYPE, "it optimizes floating-point tensors, not %s",
                   ts_dtype_name(ts_tensor_dtype(IN(2))));
    return -1;
  }
  return n;
}

static bool need_attrs(const onnx_node_ctx *c, const char *const *names)
{
  for (int i = 0; names[i]; i++)
    if (!attr(c, names[i])) {
      onnx_node_fail(c, TS_ERR_FORMAT, "attribute '%s' is required", names[i]);
      return false;
    }
  return true;
}

/* ONNX's ADAGRAD: r = R / (1 + T decay_factor), g = norm_coefficient X + G,
 * H_new = H + g^2, X_new = X - r g / (sqrt(H_new) + epsilon). */
static bool op_adagrad(onnx_node_ctx *c)
{
  int n = optimizer_groups(c, 3);
  if (n < 0)
    return false;
  double decay = attr_float(c, "decay_factor", 0), eps = attr_float(c, "epsilon", 1e-6);
  double norm = attr_float(c, "norm_coefficient", 0);
  for (int i = 0; i < n; i++) {
    ts_tensor *x = IN(2 + i), *g = IN(2 + n + i), *h = IN(2 + 2 * n + i);
    ts_dtype dt = ts_tensor_dtype(x);
    ts_tensor *t = ts_cast_at(HERE, IN(1), dt);
    ts_tensor *r = ts_div_at(HERE, ts_cast_at(HERE, IN(0), dt),
                             ts_add_at(HERE, scalar(x, 1), ts_mul_at(HERE, t, scalar(x, decay))));
    g = ts_add_at(HERE, ts_mul_at(HERE, scalar(x, norm), x), g);
    ts_tensor *h_new = ts_add_at(HERE, h, ts_mul_at(HERE, g, g));
    ts_tensor *h_sqrt = ts_add_at(HERE, ts_sqrt_at(HERE, h_new), scalar(x, eps));
    c->out[i] = ts_sub_at(HERE, x, ts_div_at(HERE, ts_mul_at(HERE, r, g), h_sqrt));
    c->out[n + i] = h_new;
  }
  return !ts_failed();
}

/* ONNX's Momentum: g = norm_coefficient X + G, V_new = alpha V + beta' g
 * (beta' = 1 at the first update, T = 0), X_new = X - R V_new, or with
 * mode "nesterov" X - R (g + alpha V_new). */
static bool op_momentum(onnx_node_ctx *c)
{
  static const char *const required[] = { "alpha", "beta", "mode", "norm_coefficient", NULL };
  int n = optimizer_groups(c, 3);
  if (n < 0 || !need_attrs(c, required))
    return false;
  char buf[16];
  const char *mode = attr_string(c, "mode", "", buf, sizeof buf);
  bool nesterov = strcmp(mode, "nesterov") == 0;
  if (!nesterov && strcmp(mode, "standard") != 0) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "mode must be standard or nesterov, not '%s'", mode);
    return false;
  }
  double alpha = attr_float(c, "alpha", 0), beta = attr_float(c, "beta", 0);
  double norm = attr_float(c, "norm_coefficient", 0);
  for (int i = 0; i < n; i++) {
    ts_tensor *x = IN(2 + i), *g = IN(2 + n + i), *v = IN(2 + 2 * n + i);
    ts_dtype dt = ts_tensor_dtype(x);
    ts_tensor *r = ts_cast_at(HERE, IN(0), dt);
    ts_tensor *first = ts_less_equal_at(HERE, IN(1), ts_zeros_like_at(HERE, IN(1)));
    ts_tensor *beta_now = ts_where_at(HERE, first, scalar(x, 1), scalar(x, beta));
    g = ts_add_at(HERE, ts_mul_at(HERE, scalar(x, norm), x), g);
    ts_tensor *v_new = ts_add_at(HERE, ts_mul_at(HERE, scalar(x, alpha), v), ts_mul_at(HERE, beta_now, g));
    ts_tensor *step = nesterov ? ts_add_at(HERE, g, ts_mul_at(HERE, scalar(x, alpha), v_new)) : v_new;
    c->out[i] = ts_sub_at(HERE, x, ts_mul_at(HERE, r, step));
    c->out[n + i] = v_new;
  }
  return !ts_failed();
}

/* ONNX's Adam: g = norm_coefficient X + G, V_new = alpha V + (1 - alpha) g,
 * H_new = beta H + (1 - beta) g^2, R' = R sqrt(1 - beta^T) / (1 - alpha^T)
 * (R at T = 0), X_new = (1 - norm_coefficient_post) (X - R' V_new / (sqrt(H_new) + epsilon)). */
static bool op_adam(onnx_node_ctx *c)
{
  int n = optimizer_groups(c, 4);
  if (n < 0)
    return false;
  double alpha = attr_float(c, "alpha", 0.9), beta = attr_float(c, "beta", 0.999);
  double eps = attr_float(c, "epsilon", 1e-6), norm = attr_float(c, "norm_coefficient", 0);
  double post = attr_float(c, "norm_coefficient_post", 0);
  for (int i = 0; i < n; i++) {
    ts_tensor *x = IN(2 + i), *g = IN(2 + n + i), *v = IN(2 + 2 * n + i), *h = IN(2 + 3 * n + i);
    ts_dtype dt = ts_tensor_dtype(x);
    ts_tensor *r = ts_cast_at(HERE, IN(0), dt), *t = ts_cast_at(HERE, IN(1), dt);
    g = ts_add_at(HERE, ts_mul_at(HERE, scalar(x, norm), x), g);
    ts_tensor *v_new = ts_add_at(HERE, ts_mul_at(HERE, scalar(x, alpha), v), ts_mul_at(HERE, scalar(x, 1 - alpha), g));
    ts_tensor *h_new = ts_add_at(HERE, ts_mul_at(HERE, scalar(x, beta), h),
                                 ts_mul_at(HERE, scalar(x, 1 - beta), ts_mul_at(HERE, g, g)));
    ts_tensor *h_sqrt = ts_add_at(HERE, ts_sqrt_at(HERE, h_new), scalar(x, eps));
    ts_tensor *corrected = ts_div_at(HERE, ts_mul_at(HERE, r, ts_sqrt_at(HERE, ts_sub_at(HERE, scalar(x, 1), ts_pow_at(HERE, scalar(x, beta), t)))),
                                     ts_sub_at(HERE, scalar(x, 1), ts_pow_at(HERE, scalar(x, alpha), t)));
    ts_tensor *first = ts_less_equal_at(HERE, t, scalar(x, 0));
    ts_tensor *r_adj = ts_where_at(HERE, first, r, corrected);
    ts_tensor *x_new = ts_sub_at(HERE, x, ts_mul_at(HERE, r_adj, ts_div_at(HERE, v_new, h_sqrt)));
    c->out[i] = ts_mul_at(HERE, scalar(x, 1 - post), x_new);
    c->out[n + i] = v_new;
    c->out[2 * n + i] = h_new;
  }
  return !ts_failed();
}

/* ---- the table ------------------------------------------------------------------------------ */

#define ANY (-1)
static const onnx_op_row ROWS[] = {
  { "Abs", 1, 1, 1, 1, ",", op_abs, 0, true },
  { "AveragePool", 1, 1, 1, 1, ",auto_pad,ceil_mode,count_include_pad,dilations,kernel_shape,pads,strides,", op_average_pool, 0, false },
  { "ConvTranspose", 2, 3, 1, 1, ",auto_pad,dilations,group,kernel_shape,output_padding,output_shape,pads,strides,",
    op_conv_transpose, 0, false },
  { "CumSum", 2, 2, 1, 1, ",exclusive,reverse,", op_cumsum, 0, false },
  { "DepthToSpace", 1, 1, 1, 1, ",blocksize,mode,", op_depth_to_space, 0, true },
  { "Pad", 1, 4, 1, 1, ",mode,pads,value,", op_pad, 0, true },
  { "SpaceToDepth", 1, 1, 1, 1, ",blocksize,", op_space_to_depth, 0, true },
  { "Celu", 1, 1, 1, 1, ",alpha,", op_celu, 0, true },
  { "EyeLike", 1, 1, 1, 1, ",dtype,k,", op_eye_like, 0, true },
  { "GatherElements", 2, 2, 1, 1, ",axis,", op_gather_elements, 0, true },
  { "GatherND", 2, 2, 1, 1, ",batch_dims,", op_gather_nd, 0, true },
  { "Hardmax", 1, 1, 1, 1, ",axis,", op_hardmax, 0, false },
  { "IsInf", 1, 1, 1, 1, ",detect_negative,detect_positive,", op_isinf, 0, true },
  { "NegativeLogLikelihoodLoss", 2, 3, 1, 1, ",ignore_index,reduction,", op_nll_loss, 0, false },
  { "OneHot", 3, 3, 1, 1, ",axis,", op_one_hot, 0, true },
  { "Resize", 1, 4, 1, 1,
    ",antialias,axes,coordinate_transformation_mode,cubic_coeff_a,exclude_outside,extrapolation_value,"
    "keep_aspect_ratio_policy,mode,nearest_mode,",
    op_resize, 0, false },
  { "Round", 1, 1, 1, 1, ",", op_round, 0, true },
  { "Shrink", 1, 1, 1, 1, ",bias,lambd,", op_shrink, 0, true },
  { "SoftmaxCrossEntropyLoss", 2, 3, 1, 2, ",ignore_index,reduction,", op_softmax_cross_entropy, 0, false },
  { "Trilu", 1, 2, 1, 1, ",upper,", op_trilu, 0, true },

  { "Add", 2, 2, 1, 1, ",axis,broadcast,", op_add, 0, true },
  { "And", 2, 2, 1, 1, ",axis,broadcast,", op_and, 0, true },
  { "ArgMax", 1, 1, 1, 1, ",axis,keepdims,select_last_index,", op_argmax, 0, true },
  { "ArgMin", 1, 1, 1, 1, ",axis,keepdims,select_last_index,", op_argmin, 0, true },
  { "BatchNormalization", 5, 5, 1, 3, ",epsilon,is_test,momentum,spatial,training_mode,", op_batch_norm, 0, false },
  { "Cast", 1, 1, 1, 1, ",to,saturate,", op_cast, 0, true },
  { "CastLike", 2, 2, 1, 1, ",saturate,", op_cast_like, 0, true },
  { "Ceil", 1, 1, 1, 1, ",", op_ceil, 0, true },
  { "Clip", 1, 3, 1, 1, ",min,max,", op_clip, 0, true },
  { "Concat", 1, ANY, 1, 1, ",axis,", op_concat, 0, true },
  { "Constant", 0, 0, 1, 1, ",value,value_float,value_floats,value_int,value_ints,value_string,value_strings,sparse_value,",
    op_constant, 0, true },
  { "ConstantOfShape", 1, 1, 1, 1, ",value,", op_constant_of_shape, 0, true },
  { "Conv", 2, 3, 1, 1, ",auto_pad,dilations,group,kernel_shape,pads,strides,", op_conv, 0, false },
  { "Div", 2, 2, 1, 1, ",axis,broadcast,", op_div, 0, true },
  { "Dropout", 1, 3, 1, 2, ",ratio,is_test,seed,", op_dropout, 0, false },
  { "MeanVarianceNormalization", 1, 1, 1, 1, ",axes,", op_mean_variance_normalization, 9, true },
  { "LRN", 1, 1, 1, 1, ",alpha,beta,bias,size,", op_lrn, 0, true },
  { "Einsum", 1, -1, 1, 1, ",equation,", op_einsum, 12, true },
  { "Compress", 2, 2, 1, 1, ",axis,", op_compress, 9, true },
  { "NonZero", 1, 1, 1, 1, ",", op_non_zero, 9, true },
  { "Unique", 1, 1, 1, 4, ",axis,sorted,", op_unique, 11, true },
  { "NonMaxSuppression", 2, 5, 1, 1, ",center_point_box,", op_non_max_suppression, 11, true },
  { "Det", 1, 1, 1, 1, ",", op_det, 11, true },
  { "DFT", 1, 3, 1, 1, ",axis,inverse,onesided,", op_dft, 17, true },
  { "STFT", 2, 4, 1, 1, ",onesided,", op_stft, 17, true },
  { "MelWeightMatrix", 5, 5, 1, 1, ",output_datatype,", op_mel_weight_matrix, 17, true },
  { "GridSample", 2, 2, 1, 1, ",align_corners,mode,padding_mode,", op_grid_sample, 16, false },
  { "Elu", 1, 1, 1, 1, ",alpha,", op_elu, 0, true },
  { "Equal", 2, 2, 1, 1, ",axis,broadcast,", op_equal, 0, true },
  { "Exp", 1, 1, 1, 1, ",", op_exp, 0, true },
  { "Expand", 2, 2, 1, 1, ",", op_expand, 0, true },
  { "Flatten", 1, 1, 1, 1, ",axis,", op_flatten, 0, true },
  { "Floor", 1, 1, 1, 1, ",", op_floor, 0, true },
  { "Gather", 2, 2, 1, 1, ",axis,", op_gather, 0, true },
  { "Gemm", 2, 3, 1, 1, ",alpha,beta,broadcast,transA,transB,", op_gemm, 0, false },
  { "GlobalAveragePool", 1, 1, 1, 1, ",", op_global_average_pool, 1, false },
  { "GlobalMaxPool", 1, 1, 1, 1, ",", op_global_max_pool, 1, false },
  { "Greater", 2, 2, 1, 1, ",axis,broadcast,", op_greater, 0, true },
  { "GreaterOrEqual", 2, 2, 1, 1, ",", op_greater_equal, 0, true },
  { "HardSigmoid", 1, 1, 1, 1, ",alpha,beta,", op_hard_sigmoid, 0, true },
  { "HardSwish", 1, 1, 1, 1, ",", op_hard_swish, 0, true },
  { "Identity", 1, 1, 1, 1, ",", op_identity, 0, true },
  { "If", 1, 1, 1, TS_MAX_OUTPUTS, ",then_branch,else_branch,", onnx_op_if, 0, false },
  { "Loop", 2, -1, 1, TS_MAX_OUTPUTS, ",body,", onnx_op_loop, 0, false },
  { "RNN", 3, 6, 1, 2, ",activation_alpha,activation_beta,activations,clip,direction,hidden_size,layout,",
    onnx_op_rnn, 7, false },
  { "GRU", 3, 6, 1, 2, ",activation_alpha,activation_beta,activations,clip,direction,hidden_size,layout,linear_before_reset,",
    onnx_op_gru, 7, false },
  { "LSTM", 3, 8, 1, 3, ",activation_alpha,activation_beta,activations,clip,direction,hidden_size,layout,input_forget,",
    onnx_op_lstm, 7, false },
  { "InstanceNormalization", 3, 3, 1, 1, ",epsilon,", op_instance_norm, 0, false },
  { "IsNaN", 1, 1, 1, 1, ",", op_isnan, 0, true },
  { "LayerNormalization", 2, 3, 1, 3, ",axis,epsilon,stash_type,", op_layer_norm, 0, false },
  { "GroupNormalization", 3, 3, 1, 1, ",epsilon,num_groups,stash_type,", op_group_norm, 18, false },
  { "Gelu", 1, 1, 1, 1, ",approximate,", op_gelu, 20, true },
  { "LeakyRelu", 1, 1, 1, 1, ",alpha,", op_leaky_relu, 0, true },
  { "Less", 2, 2, 1, 1, ",axis,broadcast,", op_less, 0, true },
  { "LessOrEqual", 2, 2, 1, 1, ",", op_less_equal, 0, true },
  { "Log", 1, 1, 1, 1, ",", op_log, 0, true },
  { "LogSoftmax", 1, 1, 1, 1, ",axis,", op_log_softmax, 0, false },
  { "MatMul", 2, 2, 1, 1, ",", op_matmul, 0, false },
  { "Max", 1, ANY, 1, 1, ",", op_max, 0, true },
  { "MaxPool", 1, 1, 1, 2, ",auto_pad,ceil_mode,dilations,kernel_shape,pads,storage_order,strides,", op_max_pool, 0, false },
  { "Mean", 1, ANY, 1, 1, ",", op_mean, 0, true },
  { "Min", 1, ANY, 1, 1, ",", op_min, 0, true },
  { "Mod", 2, 2, 1, 1, ",fmod,", op_mod, 0, true },
  { "Mul", 2, 2, 1, 1, ",axis,broadcast,", op_mul, 0, true },
  { "Neg", 1, 1, 1, 1, ",", op_neg, 0, true },
  { "Not", 1, 1, 1, 1, ",", op_not, 1, true },
  { "Or", 2, 2, 1, 1, ",axis,broadcast,", op_or, 0, true },
  { "PRelu", 2, 2, 1, 1, ",", op_prelu, 0, true },
  { "Pow", 2, 2, 1, 1, ",axis,broadcast,", op_pow, 0, true },
  { "Range", 3, 3, 1, 1, ",", op_range, 0, true },
  { "Reciprocal", 1, 1, 1, 1, ",", op_reciprocal, 0, true },
  { "ReduceL1", 1, 2, 1, 1, ",axes,keepdims,noop_with_empty_axes,", op_reduce_l1, 0, true },
  { "ReduceL2", 1, 2, 1, 1, ",axes,keepdims,noop_with_empty_axes,", op_reduce_l2, 0, true },
  { "ReduceLogSum", 1, 2, 1, 1, ",axes,keepdims,noop_with_empty_axes,", op_reduce_log_sum, 0, true },
  { "ReduceLogSumExp", 1, 2, 1, 1, ",axes,keepdims,noop_with_empty_axes,", op_reduce_log_sum_exp, 0, true },
  { "ReduceMax", 1, 2, 1, 1, ",axes,keepdims,noop_with_empty_axes,", op_reduce_max, 0, true },
  { "ReduceMean", 1, 2, 1, 1, ",axes,keepdims,noop_with_empty_axes,", op_reduce_mean, 0, true },
  { "ReduceMin", 1, 2, 1, 1, ",axes,keepdims,noop_with_empty_axes,", op_reduce_min, 0, true },
  { "ReduceProd", 1, 2, 1, 1, ",axes,keepdims,noop_with_empty_axes,", op_reduce_prod, 0, true },
  { "ReduceSum", 1, 2, 1, 1, ",axes,keepdims,noop_with_empty_axes,", op_reduce_sum, 0, true },
  { "ReduceSumSquare", 1, 2, 1, 1, ",axes,keepdims,noop_with_empty_axes,", op_reduce_sum_square, 0, true },
  { "Relu", 1, 1, 1, 1, ",", op_relu, 0, true },
  { "Reshape", 2, 2, 1, 1, ",allowzero,", op_reshape, 5, true },
  { "ScatterElements", 3, 3, 1, 1, ",axis,reduction,", op_scatter_elements, 0, true },
  { "Scatter", 3, 3, 1, 1, ",axis,", op_scatter_elements, 9, true }, /* ScatterElements before opset 11 */
  { "ScatterND", 3, 3, 1, 1, ",reduction,", op_scatter_nd, 11, true },
  { "Selu", 1, 1, 1, 1, ",alpha,gamma,", op_selu, 0, true },
  { "Shape", 1, 1, 1, 1, ",start,end,", op_shape, 0, true },
  { "Sigmoid", 1, 1, 1, 1, ",", op_sigmoid, 0, true },
  { "Sign", 1, 1, 1, 1, ",", op_sign, 0, true },
  { "Size", 1, 1, 1, 1, ",", op_size, 0, true },
  { "Slice", 1, 5, 1, 1, ",starts,ends,axes,", op_slice, 0, true },
  { "Softmax", 1, 1, 1, 1, ",axis,", op_softmax, 0, false },
  { "Softplus", 1, 1, 1, 1, ",", op_softplus, 1, true },
  { "Softsign", 1, 1, 1, 1, ",", op_softsign, 1, true },
  { "Split", 1, 2, 1, TS_MAX_RANK * 64, ",axis,split,num_outputs,", op_split, 0, true },
  { "Sqrt", 1, 1, 1, 1, ",", op_sqrt, 0, true },
  { "Squeeze", 1, 2, 1, 1, ",axes,", op_squeeze, 0, true },
  { "Sub", 2, 2, 1, 1, ",axis,broadcast,", op_sub, 0, true },
  { "Sum", 1, ANY, 1, 1, ",", op_sum, 0, true },
  { "Tanh", 1, 1, 1, 1, ",", op_tanh, 0, true },
  { "ThresholdedRelu", 1, 1, 1, 1, ",alpha,", op_thresholded_relu, 0, true },
  { "Tile", 2, 2, 1, 1, ",", op_tile, 0, true },
  { "TopK", 2, 2, 1, 2, ",axis,largest,sorted,", op_topk, 10, false },
  { "Transpose", 1, 1, 1, 1, ",perm,", op_transpose, 0, true },
  { "Unsqueeze", 1, 2, 1, 1, ",axes,", op_unsqueeze, 0, true },
  { "Where", 3, 3, 1, 1, ",", op_where, 0, true },
  { "Xor", 2, 2, 1, 1, ",axis,broadcast,", op_xor, 0, true },
  { "Sin", 1, 1, 1, 1, ",", op_sin, 0, true },
  { "Cos", 1, 1, 1, 1, ",", op_cos, 0, true },
  { "Tan", 1, 1, 1, 1, ",", op_tan, 0, true },
  { "Asin", 1, 1, 1, 1, ",", op_asin, 0, true },
  { "Acos", 1, 1, 1, 1, ",", op_acos, 0, true },
  { "Atan", 1, 1, 1, 1, ",", op_atan, 0, true },
  { "Sinh", 1, 1, 1, 1, ",", op_sinh, 0, true },
  { "Cosh", 1, 1, 1, 1, ",", op_cosh, 0, true },
  { "Asinh", 1, 1, 1, 1, ",", op_asinh, 0, true },
  { "Acosh", 1, 1, 1, 1, ",", op_acosh, 0, true },
  { "Atanh", 1, 1, 1, 1, ",", op_atanh, 0, true },
  { "Erf", 1, 1, 1, 1, ",", op_erf, 0, true },
  { "HannWindow", 1, 1, 1, 1, ",output_datatype,periodic,", op_hann_window, 17, true },
  { "HammingWindow", 1, 1, 1, 1, ",output_datatype,periodic,", op_hamming_window, 17, true },
  { "BlackmanWindow", 1, 1, 1, 1, ",output_datatype,periodic,", op_blackman_window, 17, true },
  { "BitShift", 2, 2, 1, 1, ",direction,", op_bit_shift, 11, true },
  { "ReverseSequence", 2, 2, 1, 1, ",batch_axis,time_axis,", op_reverse_sequence, 10, true },
  { "Upsample", 1, 2, 1, 1, ",mode,scales,", op_upsample, 7, true },
  { "Scan", 2, ANY, 1, TS_MAX_OUTPUTS, ",body,num_scan_inputs,directions,scan_input_axes,scan_input_directions,"
    "scan_output_axes,scan_output_directions,", onnx_op_scan, 8, false },
  { "MaxUnpool", 2, 3, 1, 1, ",kernel_shape,pads,strides,", op_max_unpool, 9, false },
  { "RoiAlign", 3, 3, 1, 1, ",coordinate_transformation_mode,mode,output_height,output_width,sampling_ratio,"
    "spatial_scale,", op_roi_align, 10, false },
  { "TfIdfVectorizer", 1, 1, 1, 1, ",max_gram_length,max_skip_count,min_gram_length,mode,ngram_counts,ngram_indexes,"
    "pool_int64s,pool_strings,weights,", op_tfidf_vectorizer, 9, false },
  { "QuantizeLinear", 2, 3, 1, 1, ",axis,block_size,output_dtype,saturate,", onnx_op_quantize_linear, 10, true },
  { "DequantizeLinear", 2, 3, 1, 1, ",axis,block_size,", onnx_op_dequantize_linear, 10, true },
  { "DynamicQuantizeLinear", 1, 1, 1, 3, ",", onnx_op_dynamic_quantize_linear, 11, true },
  { "MatMulInteger", 2, 4, 1, 1, ",", onnx_op_matmul_integer, 10, true },
  { "ConvInteger", 2, 4, 1, 1, ",auto_pad,dilations,group,kernel_shape,pads,strides,", onnx_op_conv_integer, 10, false },
  { "QLinearMatMul", 8, 8, 1, 1, ",", onnx_op_qlinear_matmul, 10, true },
  { "QLinearConv", 8, 9, 1, 1, ",auto_pad,dilations,group,kernel_shape,pads,strides,", onnx_op_qlinear_conv, 10, false },
  { "SequenceEmpty", 0, 0, 1, 1, ",dtype,", onnx_op_sequence_empty, 11, false },
  { "SequenceConstruct", 1, ANY, 1, 1, ",", onnx_op_sequence_construct, 11, false },
  { "SequenceInsert", 2, 3, 1, 1, ",", onnx_op_sequence_insert, 11, false },
  { "SequenceErase", 1, 2, 1, 1, ",", onnx_op_sequence_erase, 11, false },
  { "SequenceAt", 2, 2, 1, 1, ",", onnx_op_sequence_at, 11, false },
  { "SequenceLength", 1, 1, 1, 1, ",", onnx_op_sequence_length, 11, false },
  { "SplitToSequence", 1, 2, 1, 1, ",axis,keepdims,", onnx_op_split_to_sequence, 11, false },
  { "ConcatFromSequence", 1, 1, 1, 1, ",axis,new_axis,", onnx_op_concat_from_sequence, 11, false },
  { "SequenceMap", 1, ANY, 1, ANY, ",body,", onnx_op_sequence_map, 17, false },
  { "Optional", 0, 1, 1, 1, ",type,", onnx_op_optional, 15, false },
  { "OptionalHasElement", 0, 1, 1, 1, ",", onnx_op_optional_has_element, 15, false },
  { "OptionalGetElement", 1, 1, 1, 1, ",", onnx_op_optional_get_element, 15, false },
  { "StringNormalizer", 1, 1, 1, 1, ",case_change_action,is_case_sensitive,locale,stopwords,",
    onnx_op_string_normalizer, 10, false },
};

bool onnx_op_build(const onnx_op_row *row, onnx_node_ctx *c)
{
  ts_loc saved = node_loc;
  node_loc = c->loc;
  bool ok = row->build(c);
  node_loc = saved;
  return ok;
}

/* The ops of the domain ai.onnx.preview.training (its opset 1). */
static const onnx_op_row TRAINING_ROWS[] = {
  { "Adagrad", 5, ANY, 2, ANY, ",decay_factor,epsilon,norm_coefficient,", op_adagrad, 1, false },
  { "Momentum", 5, ANY, 2, ANY, ",alpha,beta,mode,norm_coefficient,", op_momentum, 1, false },
  { "Adam", 6, ANY, 3, ANY, ",alpha,beta,epsilon,norm_coefficient,norm_coefficient_post,", op_adam, 1, false },
};

const onnx_op_row *onnx_op_lookup(const char *domain, const char *op)
{
  bool training = domain && strcmp(domain, "ai.onnx.preview.training") == 0;
  if (!training && !onnx_is_default_domain(domain))
    return NULL;
  const onnx_op_row *rows = training ? TRAINING_ROWS : ROWS;
  size_t n = training ? G_N_ELEMENTS(TRAINING_ROWS) : G_N_ELEMENTS(ROWS);
  for (size_t i = 0; i < n; i++)
    if (strcmp(rows[i].name, op) == 0)
      return &rows[i];
  return NULL;
}
