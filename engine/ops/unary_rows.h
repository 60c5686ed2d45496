/* ops/unary_rows.h — the unary elementwise rows and their formulas, one
 * source for every kind of device: ops/unary.c makes the CPU loops, the
 * definitions and the wrappers from them, backend/cuda/elementwise.cu the
 * CUDA kernels (TS_EW_FN makes the formulas device functions there). */
#pragma once

#include "ew_fn.h"

/* ---- the rows ---------------------------------------------------------------
 * X(ID, id, Name, dtypes, grain, flags, f32, grad):
 *   dtypes  the input dtypes it takes: FLOAT (f32, f64, and f16 and bf16
 *           through the f32 formula), NUMERIC (and the integers) or BOOL,
 *           each giving its input's dtype; or PREDICATE: a test of a
 *           float (the FLOAT dtypes) giving bool; the formulas below
 *           exist for those;
 *   grain   TS_EW_GRAIN, or TS_EW_GRAIN_COSTLY for a costly element;
 *   flags   TS_EW_FUSE (TS_OPF_FUSIBLE | TS_OPF_INPLACE) for an op
 *           FusedElementwise programs hold and the planner runs in place;
 *   f32     SCALAR (the formula) or ARRAY: kernels/vmath.c's vectorised
 *           ts__v<id>_f32, for the unfused op and fused programs alike;
 *   grad    its gradient (grad_<id> in ops/unary.c; other devices ignore
 *           it), or NULL with
 *           TS_OPF_NOT_DIFFERENTIABLE in its flags. */
#define UNARY_ROWS(X)                                                                \
  X(NEG, neg, "Neg", NUMERIC, TS_EW_GRAIN, TS_EW_FUSE, SCALAR, grad_neg)                      \
  X(ABS, abs, "Abs", NUMERIC, TS_EW_GRAIN, TS_EW_FUSE, SCALAR, grad_abs)                      \
  X(EXP, exp, "Exp", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, ARRAY, grad_exp)                  \
  X(LOG, log, "Log", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_log)                 \
  X(SQRT, sqrt, "Sqrt", FLOAT, TS_EW_GRAIN, TS_EW_FUSE, SCALAR, grad_sqrt)                     \
  X(TANH, tanh, "Tanh", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, ARRAY, grad_tanh)               \
  X(SIGMOID, sigmoid, "Sigmoid", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, ARRAY, grad_sigmoid)      \
  X(RELU, relu, "Relu", NUMERIC, TS_EW_GRAIN, TS_EW_FUSE, SCALAR, grad_relu)                   \
  X(LOGICAL_NOT, logical_not, "LogicalNot", BOOL, TS_EW_GRAIN, TS_OPF_NOT_DIFFERENTIABLE, SCALAR, NULL)           \
  X(SOFTPLUS, softplus, "Softplus", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_softplus) \
  X(SIN, sin, "Sin", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_sin)                     \
  X(COS, cos, "Cos", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_cos)                     \
  X(TAN, tan, "Tan", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_tan)                     \
  X(ASIN, asin, "Asin", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_asin)                 \
  X(ACOS, acos, "Acos", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_acos)                 \
  X(ATAN, atan, "Atan", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_atan)                 \
  X(SINH, sinh, "Sinh", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_sinh)                 \
  X(COSH, cosh, "Cosh", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_cosh)                 \
  X(ASINH, asinh, "Asinh", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_asinh)             \
  X(ACOSH, acosh, "Acosh", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_acosh)             \
  X(ATANH, atanh, "Atanh", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_atanh)             \
  X(ERF, erf, "Erf", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_erf)                     \
  X(SIGN, sign, "Sign", NUMERIC, TS_EW_GRAIN, TS_EW_FUSE, SCALAR, grad_zero)                    \
  X(ROUND, round, "Round", NUMERIC, TS_EW_GRAIN, TS_EW_FUSE, SCALAR, grad_zero)                  \
  X(FLOOR, floor, "Floor", FLOAT, TS_EW_GRAIN, TS_EW_FUSE | TS_OPF_NOT_DIFFERENTIABLE, SCALAR, NULL) \
  X(CEIL, ceil, "Ceil", FLOAT, TS_EW_GRAIN, TS_EW_FUSE | TS_OPF_NOT_DIFFERENTIABLE, SCALAR, NULL)    \
  X(SQUARE, square, "Square", NUMERIC, TS_EW_GRAIN, TS_EW_FUSE, SCALAR, grad_square)              \
  X(RSQRT, rsqrt, "Rsqrt", FLOAT, TS_EW_GRAIN, TS_EW_FUSE, SCALAR, grad_rsqrt)                    \
  X(RECIPROCAL, reciprocal, "Reciprocal", FLOAT, TS_EW_GRAIN, TS_EW_FUSE, SCALAR, grad_reciprocal) \
  X(LOG1P, log1p, "Log1p", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_log1p)             \
  X(EXPM1, expm1, "Expm1", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_expm1)             \
  X(ELU, elu, "Elu", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_elu)                     \
  X(SELU, selu, "Selu", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_selu)                 \
  X(RELU6, relu6, "Relu6", NUMERIC, TS_EW_GRAIN, TS_EW_FUSE, SCALAR, grad_relu6)                  \
  X(SOFTSIGN, softsign, "Softsign", FLOAT, TS_EW_GRAIN, TS_EW_FUSE, SCALAR, grad_softsign)        \
  X(IS_NAN, is_nan, "IsNan", PREDICATE, TS_EW_GRAIN, TS_OPF_NOT_DIFFERENTIABLE, SCALAR, NULL)      \
  X(IS_INF, is_inf, "IsInf", PREDICATE, TS_EW_GRAIN, TS_OPF_NOT_DIFFERENTIABLE, SCALAR, NULL)      \
  X(IS_FINITE, is_finite, "IsFinite", PREDICATE, TS_EW_GRAIN, TS_OPF_NOT_DIFFERENTIABLE, SCALAR, NULL) \
  X(GELU, gelu, "Gelu", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR, grad_gelu)

/* ---- the formulas: <id>_<dtype>(x) --------------------------------------------- */

/* Floats: one expression for f32 and f64 (tgmath picks the function), T
 * the type (a constant written (T)c is rounded to it once, as TensorFlow's
 * static_cast<T>(c)). */
#define FLOAT_FORMULA(id, expr) FLOAT_ONE(id, f32, float, float, expr) FLOAT_ONE(id, f64, double, double, expr)
/* Tests of a float: bool. */
#define PREDICATE_FORMULA(id, expr) FLOAT_ONE(id, f32, float, bool, expr) FLOAT_ONE(id, f64, double, bool, expr)
#define FLOAT_ONE(id, sfx, TT, OO, expr)                                   \
  TS_EW_FN OO id##_##sfx(TT x)                                             \
  {                                                                        \
    typedef TT T __attribute__((unused));                                  \
    return (expr);                                                         \
  }
/* Signed integers: T the type, U its unsigned twin (arithmetic that wraps). */
#define SIGNED_FORMULA(id, expr)                                                          \
  SIGNED_ONE(id, i32, int32_t, uint32_t, expr) SIGNED_ONE(id, i64, int64_t, uint64_t, expr) \
  SIGNED_ONE(id, i8, int8_t, uint8_t, expr) SIGNED_ONE(id, i16, int16_t, uint16_t, expr)
#define SIGNED_ONE(id, sfx, TT, UU, expr)                                  \
  TS_EW_FN TT id##_##sfx(TT x)                                        \
  {                                                                        \
    typedef TT T __attribute__((unused));                                  \
    typedef UU U __attribute__((unused));                                  \
    return (expr);                                                         \
  }
/* Unsigned integers: T the type. */
#define UNSIGNED_FORMULA(id, expr)                                                          \
  UNSIGNED_ONE(id, u8, uint8_t, expr) UNSIGNED_ONE(id, u16, uint16_t, expr)                 \
  UNSIGNED_ONE(id, u32, uint32_t, expr) UNSIGNED_ONE(id, u64, uint64_t, expr)
#define UNSIGNED_ONE(id, sfx, TT, expr)                                    \
  TS_EW_FN TT id##_##sfx(TT x)                                             \
  {                                                                        \
    typedef TT T __attribute__((unused));                                  \
    return (expr);                                                         \
  }

FLOAT_FORMULA(neg, -x)
FLOAT_FORMULA(abs, fabs(x))
FLOAT_FORMULA(exp, exp(x)) /* f64; f32 is the array kernel */
FLOAT_FORMULA(log, log(x))
FLOAT_FORMULA(sqrt, sqrt(x))
FLOAT_FORMULA(tanh, tanh(x))
FLOAT_FORMULA(sigmoid, 1 / (1 + exp(-x)))
FLOAT_FORMULA(relu, x < 0 ? 0 : x) /* keeps nan */
/* log(1 + exp(x)) = log1p(exp(-|x|)) + max(x, 0): exp never overflows */
FLOAT_FORMULA(softplus, log1p(exp(-fabs(x))) + (x > 0 ? x : 0))
/* trigonometry, hyperbolic functions and their inverses; erf: the C library's */
FLOAT_FORMULA(sin, sin(x))
FLOAT_FORMULA(cos, cos(x))
FLOAT_FORMULA(tan, tan(x))
FLOAT_FORMULA(asin, asin(x))
FLOAT_FORMULA(acos, acos(x))
FLOAT_FORMULA(atan, atan(x))
FLOAT_FORMULA(sinh, sinh(x))
FLOAT_FORMULA(cosh, cosh(x))
FLOAT_FORMULA(asinh, asinh(x))
FLOAT_FORMULA(acosh, acosh(x))
FLOAT_FORMULA(atanh, atanh(x))
FLOAT_FORMULA(erf, erf(x))
/* as np.sign: nan stays nan, -0.0 gives 0.0 */
FLOAT_FORMULA(sign, isnan(x) ? x : (x > 0) - (x < 0))
/* half to even (the default rounding mode's rint), as np.round: -0.5 gives -0.0 */
FLOAT_FORMULA(round, rint(x))
/* floor and ceil keep -0.0, nan and inf, and round -0.5 to -0.0 (ceil) */
FLOAT_FORMULA(floor, floor(x))
FLOAT_FORMULA(ceil, ceil(x))
FLOAT_FORMULA(square, x * x)
/* as TensorFlow's: rsqrt(0) is inf, rsqrt(-0.0) -inf, 1 / -0.0 -inf */
FLOAT_FORMULA(rsqrt, 1 / sqrt(x))
FLOAT_FORMULA(reciprocal, 1 / x)
FLOAT_FORMULA(log1p, log1p(x))
FLOAT_FORMULA(expm1, expm1(x))
/* Elu and Selu as TensorFlow's functors: exp(x) - 1 (not expm1) where x < 0,
 * so -0.0 and nan pass through the other side; Selu's scale and
 * scale * alpha in T */
FLOAT_FORMULA(elu, x < 0 ? exp(x) - 1 : x)
FLOAT_FORMULA(selu, x < 0 ? (T)1.7580993408473768599402175208123 * (exp(x) - 1)
                          : (T)1.0507009873554804934193349852946 * x)
/* min(max(x, 0), 6) keeping nan, and -0.0 as Relu does */
FLOAT_FORMULA(relu6, x < 0 ? 0 : x > 6 ? 6 : x)
/* as TensorFlow's functor: x / (|x| + 1), so +-inf gives nan */
FLOAT_FORMULA(softsign, x / (fabs(x) + 1))
/* tf.nn.gelu(approximate=False): 0.5 * x * (1 + erf(x / sqrt(2))), its order */
FLOAT_FORMULA(gelu, (T)0.5 * x * (1 + erf(x / (T)1.4142135623730951)))
PREDICATE_FORMULA(is_nan, isnan(x))
PREDICATE_FORMULA(is_inf, isinf(x))
PREDICATE_FORMULA(is_finite, isfinite(x))
/* Signed integers negate in U, so -MIN wraps to MIN as in NumPy. */
SIGNED_FORMULA(neg, (T)-(U)x)
SIGNED_FORMULA(abs, x < 0 ? (T)-(U)x : x)
SIGNED_FORMULA(relu, x < 0 ? 0 : x)
SIGNED_FORMULA(sign, (T)((x > 0) - (x < 0)))
SIGNED_FORMULA(round, x)
SIGNED_FORMULA(square, (T)((uint64_t)x * (uint64_t)x)) /* wraps, as NumPy (U may promote to int) */
SIGNED_FORMULA(relu6, x < 0 ? 0 : x > 6 ? 6 : x)
/* Unsigned integers negate modulo 2^bits, as NumPy. */
UNSIGNED_FORMULA(neg, (T)(0 - (uint64_t)x))
UNSIGNED_FORMULA(abs, x)
UNSIGNED_FORMULA(relu, x)
UNSIGNED_FORMULA(sign, (T)(x > 0))
UNSIGNED_FORMULA(round, x)
UNSIGNED_FORMULA(square, (T)((uint64_t)x * x))
UNSIGNED_FORMULA(relu6, x > 6 ? 6 : x)
TS_EW_FN bool logical_not_b(bool x) { return !x; }
