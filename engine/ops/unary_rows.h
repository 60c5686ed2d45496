/* ops/unary_rows.h — the unary elementwise rows and their formulas, one
 * source for every kind of device: ops/unary.c makes the CPU loops, the
 * definitions and the wrappers from them, backend/cuda/elementwise.cu the
 * CUDA kernels (TS_EW_FN makes the formulas device functions there). */
#pragma once

#include "ew_fn.h"

/* ---- the rows ---------------------------------------------------------------
 * X(ID, id, Name, dtypes, grain, flags, f32, grad):
 *   dtypes  the input dtypes it takes: FLOAT (f32, f64, and f16 and bf16
 *           through the f32 formula), NUMERIC (and the integers) or BOOL;
 *           the formulas below exist for those;
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
  X(ROUND, round, "Round", NUMERIC, TS_EW_GRAIN, TS_EW_FUSE, SCALAR, grad_zero)

/* ---- the formulas: <id>_<dtype>(x) --------------------------------------------- */

/* Floats: one expression for f32 and f64 (tgmath picks the function). */
#define FLOAT_FORMULA(id, expr)                                  \
  TS_EW_FN float id##_f32(float x) { return (expr); }       \
  TS_EW_FN double id##_f64(double x) { return (expr); }
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
/* Signed integers negate in U, so -MIN wraps to MIN as in NumPy. */
SIGNED_FORMULA(neg, (T)-(U)x)
SIGNED_FORMULA(abs, x < 0 ? (T)-(U)x : x)
SIGNED_FORMULA(relu, x < 0 ? 0 : x)
SIGNED_FORMULA(sign, (T)((x > 0) - (x < 0)))
SIGNED_FORMULA(round, x)
/* Unsigned integers negate modulo 2^bits, as NumPy. */
UNSIGNED_FORMULA(neg, (T)(0 - (uint64_t)x))
UNSIGNED_FORMULA(abs, x)
UNSIGNED_FORMULA(relu, x)
UNSIGNED_FORMULA(sign, (T)(x > 0))
UNSIGNED_FORMULA(round, x)
TS_EW_FN bool logical_not_b(bool x) { return !x; }
