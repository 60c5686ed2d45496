/* onnx-op-cases.h — small functions that between them use every op the
 * ONNX exporter maps (engine/io/onnx_export.c), each with example
 * arguments: test-onnx-export round-trips them through our importer,
 * test-onnx-interop runs them in ONNX Runtime.  The values reach the
 * corners a mapping gets wrong first: negative operands of FloorDiv and
 * FloorMod, SAME padding with an odd remainder, transposed products. */
#pragma once

#include <tracescope.h>

#define A(i) ts_arg(c, (i))

static ts_tensor *case_floor_div_mod(ts_call *c)
{
  ts_tensor *parts[2] = { ts_floordiv(A(0), A(1)), ts_mod(A(0), A(1)) };
  return ts_concat(parts, 2, 0);
}

static ts_tensor *case_compare_select(ts_call *c)
{
  ts_tensor *a = A(0), *b = A(1);
  ts_tensor *pick = ts_logical_or(ts_logical_and(ts_not_equal(a, b), ts_greater(a, b)),
                                  ts_logical_not(ts_less_equal(a, ts_minimum(a, b))));
  ts_tensor *other = ts_where(ts_greater_equal(a, b), ts_maximum(a, b), ts_neg(ts_abs(b)));
  return ts_where(ts_logical_or(pick, ts_equal(a, b)), a, other);
}

static ts_tensor *case_math(ts_call *c)
{
  ts_tensor *x = A(0), *p = ts_abs(x);
  ts_tensor *y = ts_add(ts_sqrt(p), ts_log(ts_add(p, ts_ones_like(x))));
  y = ts_add(y, ts_mul(ts_exp(ts_neg(p)), ts_tanh(x)));
  y = ts_sub(y, ts_div(ts_sigmoid(x), ts_softplus(x)));
  return ts_add(ts_pow(y, ts_fill(ts_tensor_shape(y), ts_scalar_f32(2))), ts_relu(x));
}

/* Trigonometry, hyperbolic functions, their inverses and erf, each on
 * its own part of the result; acosh on 1 + |x|, inside its domain. */
static ts_tensor *case_trig(ts_call *c)
{
  ts_tensor *x = A(0); /* inside (-1, 1) */
  ts_tensor *parts[12] = {
    ts_sin(x),   ts_cos(x),   ts_tan(x),   ts_asin(x),  ts_acos(x),  ts_atan(x),
    ts_sinh(x),  ts_cosh(x),  ts_asinh(x), ts_acosh(ts_add(ts_abs(x), ts_ones_like(x))),
    ts_atanh(x), ts_erf(x),
  };
  return ts_concat(parts, 12, 0);
}

/* Sign and rounding at the half-way values, each on its part of the result. */
static ts_tensor *case_rounding(ts_call *c)
{
  ts_tensor *x = A(0);
  ts_tensor *i = ts_cast(x, TS_I32);
  ts_tensor *parts[4] = { ts_sign(x), ts_cast(ts_sign(i), TS_F32), ts_round(x), ts_cast(ts_round(i), TS_F32) };
  return ts_concat(parts, 4, 0);
}

/* Cumsum along each axis, with and without exclusive and reverse. */
static ts_tensor *case_cumsum(ts_call *c)
{
  ts_tensor *x = A(0); /* [2,3] */
  ts_tensor *parts[4] = { ts_cumsum(x, 0, false, false), ts_cumsum(x, 1, true, false),
                          ts_cumsum(x, -1, false, true), ts_cumsum(x, 0, true, true) };
  return ts_concat(parts, 4, 0);
}

/* The unary rows ONNX has an op for or a few ops make exactly: each on its
 * part of the result (Rsqrt of |x| + 1, within its domain). */
static ts_tensor *case_unary_rows(ts_call *c)
{
  ts_tensor *x = A(0), *p = ts_add(ts_abs(x), ts_ones_like(x));
  ts_tensor *parts[11] = { ts_floor(x), ts_ceil(x), ts_square(x), ts_rsqrt(p), ts_reciprocal(x),
                           ts_elu(x), ts_selu(x), ts_relu6(ts_mul(x, x)), ts_softsign(x), ts_gelu(x),
                           ts_cast(ts_relu6(ts_cast(ts_mul(x, x), TS_I32)), TS_F32) };
  return ts_concat(parts, 11, 0);
}

/* Log(1 + x) and Exp(x) - 1 in ONNX: the last bit may differ */
static ts_tensor *case_log1p_expm1(ts_call *c)
{
  ts_tensor *x = A(0);
  ts_tensor *parts[2] = { ts_log1p(ts_abs(x)), ts_expm1(x) };
  return ts_concat(parts, 2, 0);
}

/* IsNan, IsInf and IsFinite of x / y (y holding zeros), as 0 or 1 */
static ts_tensor *case_float_tests(ts_call *c)
{
  ts_tensor *q = ts_div(A(0), A(1));
  ts_tensor *parts[3] = { ts_cast(ts_is_nan(q), TS_F32), ts_cast(ts_is_inf(q), TS_F32),
                          ts_cast(ts_is_finite(q), TS_F32) };
  return ts_concat(parts, 3, 0);
}

/* The binary rows ONNX makes of a few ops: a / b near and at zero divisors */
static ts_tensor *case_binary_rows(ts_call *c)
{
  ts_tensor *a = A(0), *b = A(1);
  ts_tensor *parts[5] = { ts_squared_difference(a, b), ts_truncatediv(a, b), ts_truncatemod(a, b),
                          ts_div_no_nan(a, b), ts_xlogy(b, ts_abs(a)) };
  return ts_concat(parts, 5, 0);
}

/* A -1 beside a 0 (TensorFlow's rule: [0,3] into [-1,0] is [3,0]), which
 * ONNX's Reshape refuses with allowzero: exported as the traced shape. */
static ts_tensor *case_reshape_beside_zero(ts_call *c)
{
  return ts_reshape(A(0), TS_SHAPE(-1, 0));
}

/* TruncateDiv and TruncateMod of integers: ONNX's Div and Mod (fmod 1) */
static ts_tensor *case_truncate_int(ts_call *c)
{
  ts_tensor *parts[2] = { ts_truncatediv(A(0), A(1)), ts_truncatemod(A(0), A(1)) };
  return ts_concat(parts, 2, 0);
}

/* TopKV2, Sort and ArgSort (ties, both directions, both axes): ONNX's TopK. */
static ts_tensor *case_sorting(ts_call *c)
{
  ts_tensor *x = A(0); /* [2,4] */
  ts_tensor *values, *indices;
  if (!ts_top_k(x, 3, &values, &indices))
    return NULL;
  ts_tensor *parts[6] = { values, ts_cast(indices, TS_F32), ts_sort(x, 1, false), ts_sort(x, 0, true),
                          ts_cast(ts_argsort(x, -1, true), TS_F32), ts_cast(ts_argsort(x, 0, false), TS_F32) };
  for (int i = 0; i < 6; i++)
    parts[i] = ts_reshape(parts[i], TS_SHAPE(-1));
  return ts_concat(parts, 6, 0);
}

/* Any and All (ONNX reduces no bool): by axis, all, keepdims, over nothing. */
static ts_tensor *case_any_all(ts_call *c)
{
  ts_tensor *b = ts_greater(A(0), ts_scalar_f32(0)); /* [2,3] */
  ts_tensor *none = ts_slice(b, TS_INTS(0, 0), TS_INTS(2, 0));
  ts_tensor *parts[6] = { ts_reduce_any(b, TS_AXES(1), false), ts_reduce_all(b, TS_AXES(0), false),
                          ts_reduce_any(b, TS_ALL_AXES, true), ts_reduce_all(ts_logical_not(b), TS_AXES(-1), true),
                          ts_reduce_any(none, TS_AXES(1), false), ts_reduce_all(none, TS_AXES(1), false) };
  for (int i = 0; i < 6; i++)
    parts[i] = ts_reshape(ts_cast(parts[i], TS_F32), TS_SHAPE(-1));
  return ts_concat(parts, 6, 0);
}

static ts_tensor *case_shapes(ts_call *c)
{
  ts_tensor *x = A(0); /* [2,6] */
  ts_tensor *halves[2];
  ts_split(x, 2, 1, halves);
  ts_tensor *swapped[2] = { halves[1], halves[0] };
  ts_tensor *y = ts_concat(swapped, 2, 1);
  y = ts_slice(y, TS_INTS(0, 1), TS_INTS(2, -1)); /* [2,5] */
  y = ts_transpose(y, TS_INTS(1, 0));             /* [5,2] */
  y = ts_reshape(ts_transpose(y, TS_ALL_AXES), TS_SHAPE(-1, 5, 1));
  y = ts_flatten(y);
  int32_t idx[] = { 4, 0, 2 };
  return ts_gather(y, ts_constant(TS_I32, TS_SHAPE(3), idx), 1);
}

/* Pack and Unpack: rows unstacked, stacked again along a new last and a
 * new middle axis; Tile; Pad, CONSTANT and REFLECT. */
static ts_tensor *case_stack(ts_call *c)
{
  ts_tensor *x = A(0); /* [2,3] */
  ts_tensor *rows[2], *cols[3];
  ts_unpack(x, 2, 0, rows);
  ts_unpack(x, -1, -1, cols);
  ts_tensor *parts[7] = { ts_reshape(ts_pack(((ts_tensor *[]){ rows[1], rows[0], rows[1] }), 3, -1), TS_SHAPE(-1)),
                          ts_reshape(ts_pack(((ts_tensor *[]){ x, x }), 2, 1), TS_SHAPE(-1)), cols[2],
                          ts_reshape(ts_tile(x, TS_INTS(2, 3)), TS_SHAPE(-1)),
                          ts_reshape(ts_pad(x, TS_INTS(1, 2), TS_INTS(0, 1), TS_PAD_REFLECT, NULL), TS_SHAPE(-1)),
                          ts_reshape(ts_pad(x, TS_INTS(0, 1), TS_INTS(2, 0), TS_PAD_CONSTANT, ts_scalar_f32(-0.5f)),
                                     TS_SHAPE(-1)),
                          ts_reshape(ts_pad(x, TS_INTS(1, 0), TS_INTS(0, 3), TS_PAD_CONSTANT, NULL), TS_SHAPE(-1)) };
  return ts_concat(parts, 7, 0);
}

/* ReverseV2 on one axis, on two (one negative) and on none. */
static ts_tensor *case_reverse(ts_call *c)
{
  ts_tensor *x = A(0); /* [2,3,4] */
  ts_tensor *parts[3] = { ts_reshape(ts_reverse(x, TS_INTS(1)), TS_SHAPE(-1)),
                          ts_reshape(ts_reverse(x, TS_INTS(-1, 0)), TS_SHAPE(-1)),
                          ts_reshape(ts_reverse(x, (ts_ints){ .n = 0 }), TS_SHAPE(-1)) };
  return ts_concat(parts, 3, 0);
}

/* OneHot of indices with negative ones and ones past the depth: the last
 * axis, axis 0 with on and off values, int64 out. */
static ts_tensor *case_one_hot(ts_call *c)
{
  ts_tensor *idx = A(0); /* i32[6] */
  ts_tensor *parts[3] = {
    ts_reshape(ts_one_hot(idx, 4, NULL, NULL, -1, TS_F32), TS_SHAPE(-1)),
    ts_reshape(ts_one_hot(idx, 3, ts_scalar_f32(2.5f), ts_scalar_f32(-1), 0, TS_F32), TS_SHAPE(-1)),
    ts_cast(ts_reshape(ts_one_hot(ts_cast(idx, TS_I64), 3, ts_scalar_i64(7), NULL, -1, TS_I64), TS_SHAPE(-1)),
            TS_F32)
  };
  return ts_concat(parts, 3, 0);
}

static ts_tensor *case_reductions(ts_call *c)
{
  ts_tensor *x = A(0); /* [3,4] */
  ts_tensor *parts[7] = {
    ts_reduce_sum(x, TS_INTS(1), false), ts_reduce_mean(x, TS_INTS(1), false),
    ts_reduce_max(x, TS_INTS(1), false), ts_reduce_min(x, TS_INTS(-1), false),
    ts_reduce_prod(x, TS_INTS(1), false),
    ts_cast(ts_argmax(x, 1), TS_F32), ts_cast(ts_argmin(x, -1), TS_F32),
  };
  ts_tensor *y = ts_concat(parts, 7, 0);
  return ts_add(y, ts_reduce_sum(ts_reduce_mean(x, TS_ALL_AXES, true), (ts_ints){ .n = 0 }, false));
}

static ts_tensor *case_nn(ts_call *c)
{
  ts_tensor *logits = A(0); /* [4,5] */
  int32_t labels[] = { 0, 4, 2, 1 };
  ts_tensor *loss = ts_sparse_softmax_cross_entropy(ts_constant(TS_I32, TS_SHAPE(4), labels), logits);
  ts_tensor *p = ts_reduce_sum(ts_mul(ts_softmax(logits), ts_log_softmax(logits)), TS_INTS(1), false);
  return ts_sub(loss, p);
}

static ts_tensor *case_products(ts_call *c)
{
  ts_tensor *a = A(0), *b = A(1); /* [2,3,4] and [2,5,3] */
  return ts_matmul_t(a, b, true, true); /* [2,4,5] */
}

static ts_tensor *case_windows(ts_call *c)
{
  ts_tensor *x = A(0); /* [1,7,7,2] */
  ts_tensor *w = ts_random_normal(TS_F32, TS_SHAPE(3, 3, 2, 4), 0, 1, 11);
  ts_tensor *y = ts_conv2d(x, w, 2, 2, TS_PADDING_SAME);          /* [1,4,4,4] */
  ts_tensor *v = ts_conv2d(x, w, 2, 1, TS_PADDING_VALID);         /* [1,3,5,4] */
  ts_tensor *p = ts_max_pool2d(y, 3, 3, 2, 2, TS_PADDING_SAME);   /* [1,2,2,4] */
  ts_tensor *q = ts_max_pool2d(v, 2, 2, 1, 2, TS_PADDING_VALID);  /* [1,2,2,4] */
  return ts_add(p, q);
}

/* ConvTranspose of 2 groups with strides, dilations and a bias: one
 * output cropped by pads at both ends, one grown past the taps' extent
 * (ONNX's output_padding). */
static ts_tensor *case_conv_transpose(ts_call *c)
{
  ts_tensor *x = A(0); /* [2,4,3,5] */
  ts_tensor *w = ts_random_normal(TS_F32, TS_SHAPE(4, 3, 3, 2), 0, 1, 13);
  ts_tensor *b = ts_random_normal(TS_F32, TS_SHAPE(6), 0, 1, 17);
  ts_tensor *y = ts_conv_transpose(x, w, b, TS_INTS(2, 3), TS_INTS(1, 2), TS_INTS(1, 0), TS_INTS(7, 16), 2);
  ts_tensor *v = ts_conv_transpose(x, w, NULL, TS_INTS(2, 3), TS_INTS(1, 2), TS_INTS(1, 2), TS_INTS(5, 12), 2);
  return ts_add(ts_reduce_sum(y, TS_INTS(2, 3), false), ts_reduce_sum(v, TS_INTS(2, 3), false)); /* [2,6] */
}

/* LSTMSequence forward with peepholes and reverse without, every output:
 * ONNX's LSTM with W and R transposed, the bias beside zeros. */
static ts_tensor *case_lstm_sequence(ts_call *c)
{
  ts_tensor *x = A(0), *h0 = A(1); /* [3,2,3], [2,2]: hidden 2 */
  ts_tensor *w = ts_random_normal(TS_F32, TS_SHAPE(3, 8), 0, 1, 17);
  ts_tensor *r = ts_random_normal(TS_F32, TS_SHAPE(2, 8), 0, 1, 19);
  ts_tensor *b = ts_random_normal(TS_F32, TS_SHAPE(8), 0, 1, 21);
  ts_tensor *c0 = ts_random_normal(TS_F32, TS_SHAPE(2, 2), 0, 1, 23);
  ts_tensor *peep = ts_random_normal(TS_F32, TS_SHAPE(3, 2), 0, 1, 29);
  ts_tensor *y[2], *h[2], *cs[2];
  if (!ts_lstm_sequence(x, w, r, b, h0, c0, peep, false, &y[0], &h[0], &cs[0]) ||
      !ts_lstm_sequence(x, w, r, b, h0, c0, NULL, true, &y[1], &h[1], &cs[1]))
    return NULL;
  ts_tensor *parts[6];
  for (int i = 0; i < 2; i++) {
    parts[3 * i] = ts_reshape(y[i], TS_SHAPE(-1));
    parts[3 * i + 1] = ts_reshape(h[i], TS_SHAPE(-1));
    parts[3 * i + 2] = ts_reshape(cs[i], TS_SHAPE(-1));
  }
  return ts_concat(parts, 6, 0);
}

static ts_tensor *case_creation(ts_call *c)
{
  ts_tensor *x = A(0); /* i32[3] */
  ts_tensor *shape = ts_shape(x);
  ts_tensor *r = ts_range(TS_I32, 2, 11, 3);
  ts_tensor *z = ts_add(ts_zeros(TS_I32, TS_SHAPE(3)), ts_ones(TS_I32, TS_SHAPE(3)));
  ts_tensor *e = ts_cast(ts_reduce_sum(ts_eye(TS_F32, 3, 3), TS_INTS(0), false), TS_I32);
  ts_tensor *u = ts_cast(ts_mul(ts_random_uniform(TS_F32, TS_SHAPE(3), 0, 10, 5), ts_cast(z, TS_F32)), TS_I32);
  return ts_add(ts_add(ts_add(ts_mul(x, shape), r), ts_add(z, ts_zeros_like(x))), ts_add(e, u));
}

#undef A

typedef struct onnx_op_case {
  const char *name;
  ts_fn fn;
  const char *params;
  const char *args[3];
} onnx_op_case;

static const onnx_op_case ONNX_OP_CASES[] = {
  { "floor_div_mod_f32", case_floor_div_mod, "x, y", { "f32[6]=7,-7,7,-7,6.5,0", "f32[6]=2,2,-2,-2,-3,5" } },
  { "floor_div_mod_i32", case_floor_div_mod, "x, y", { "i32[6]=7,-7,7,-7,6,0", "i32[6]=2,2,-2,-2,-3,5" } },
  { "compare_select", case_compare_select, "a, b", { "f32[5]=1,-2,3,4,-5", "f32[5]=1,2,-3,5,-6" } },
  { "math", case_math, "x", { "f32[2,3]=0.5,-1,2,-3,0.25,4" } },
  { "trig", case_trig, "x", { "f32[5]=0.5,-0.9,0,0.25,-0.125" } },
  { "rounding", case_rounding, "x", { "f32[8]=-2.5,-1.5,-0.5,0,0.5,1.5,2.5,3.75" } },
  { "cumsum", case_cumsum, "x", { "f32[2,3]=1,-2,3.5,4,0.25,-8" } },
  { "unary_rows", case_unary_rows, "x", { "f32[8]=-2.5,-1.5,-0.5,0,0.5,1.5,2.5,3.75" } },
  { "log1p_expm1", case_log1p_expm1, "x", { "f32[8]=-2.5,-1.5,-0.5,0,0.5,1.5,2.5,3.75" } },
  { "binary_rows", case_binary_rows, "a, b", { "f32[8]=7,-7,7.5,-7.5,-0.5,3,0,2", "f32[8]=2,2,-2,2,1,0,0,0.5" } },
  { "truncate_int", case_truncate_int, "a, b", { "i32[6]=7,-7,7,-7,6,0", "i32[6]=2,2,-2,-2,-3,5" } },
  { "float_tests", case_float_tests, "a, b", { "f32[6]=1,0,-1,2,0,-3", "f32[6]=0,0,0,1,1,-2" } },
  { "sorting", case_sorting, "x", { "f32[2,4]=3,1,3,-2,0.5,0.5,-1,4" } },
  { "any_all", case_any_all, "x", { "f32[2,3]=1,-2,3,-4,-5,-6" } },
  { "shapes", case_shapes, "x", { "f32[2,6]:range" } },
  { "reshape_beside_zero", case_reshape_beside_zero, "x", { "f32[0,3]:zeros" } },
  { "stack", case_stack, "x", { "f32[2,3]=1,-2,3.5,4,0.25,-8" } },
  { "reverse", case_reverse, "x", { "f32[2,3,4]:range" } },
  { "one_hot", case_one_hot, "indices", { "i32[6]=0,2,-1,5,1,-3" } },
  { "reductions", case_reductions, "x", { "f32[3,4]=1,-2,3,0.5,4,4,-1,2,0.25,-8,6,1" } },
  { "nn", case_nn, "logits", { "f32[4,5]:uniform" } },
  { "products", case_products, "a, b", { "f32[2,3,4]:uniform", "f32[2,5,3]:uniform@3" } },
  { "windows", case_windows, "x", { "f32[1,7,7,2]:uniform" } },
  { "conv_transpose", case_conv_transpose, "x", { "f32[2,4,3,5]:uniform" } },
  { "creation", case_creation, "x", { "i32[3]=4,-1,7" } },
  { "lstm_sequence", case_lstm_sequence, "x, h0", { "f32[3,2,3]:uniform", "f32[2,2]:uniform@5" } },
};
