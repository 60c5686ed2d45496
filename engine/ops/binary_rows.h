/* ops/binary_rows.h — the binary elementwise rows and their formulas, one
 * source for every kind of device: ops/binary.c makes the CPU loops, the
 * definitions and the wrappers from them, backend/cuda/elementwise.cu the
 * CUDA kernels (TS_EW_FN makes the formulas device functions there). */
#pragma once

#include "ew_fn.h"

/* ---- the rows ---------------------------------------------------------------
 * X(ID, id, Name, dtypes, grain, check, flags, grad):
 *   dtypes  FLOAT (f16 and bf16 through the f32 formula, rounded back),
 *           NUMERIC (arithmetic: the output has the inputs' dtype),
 *           ALL (comparisons) or BOOL (logic): an op taking bool gives bool;
 *   grain   TS_EW_GRAIN, or TS_EW_GRAIN_COSTLY for a costly element;
 *   check   NULL, or what rejects operands the formula cannot take;
 *   flags   TS_OPF_PROMOTE (operands cast to their promoted dtype),
 *           TS_EW_FUSE as for unary rows (EW_ARITH: both), EW_NO_GRAD where
 *           no gradient flows;
 *   grad    its gradient (grad_<id> in ops/binary.c; other devices
 *           ignore it), or NULL.
 * Bool arithmetic is rejected (TS_ERR_DTYPE) rather than read as logic;
 * logical ops take bool only, so they skip promotion: the error then names
 * the dtype the caller gave. */
#define EW_ARITH (TS_OPF_PROMOTE | TS_EW_FUSE)
#define EW_NO_GRAD TS_OPF_NOT_DIFFERENTIABLE
#define BINARY_ROWS(X)                                                                         \
  X(ADD, add, "Add", NUMERIC, TS_EW_GRAIN, NULL, EW_ARITH, grad_add)                          \
  X(SUB, sub, "Sub", NUMERIC, TS_EW_GRAIN, NULL, EW_ARITH, grad_sub)                          \
  X(MUL, mul, "Mul", NUMERIC, TS_EW_GRAIN, NULL, EW_ARITH, grad_mul)                          \
  X(DIV, div, "RealDiv", FLOAT, TS_EW_GRAIN, NULL, EW_ARITH, grad_div)                        \
  X(FLOORDIV, floordiv, "FloorDiv", NUMERIC, TS_EW_GRAIN_COSTLY, check_divisor,               \
    TS_OPF_PROMOTE | EW_NO_GRAD, NULL)                                                        \
  X(MOD, mod, "FloorMod", NUMERIC, TS_EW_GRAIN_COSTLY, check_divisor, TS_OPF_PROMOTE, grad_mod) \
  X(POW, pow, "Pow", NUMERIC, TS_EW_GRAIN_COSTLY, check_exponent, EW_ARITH, grad_pow)         \
  X(MAXIMUM, maximum, "Maximum", NUMERIC, TS_EW_GRAIN, NULL, EW_ARITH, grad_maximum)          \
  X(MINIMUM, minimum, "Minimum", NUMERIC, TS_EW_GRAIN, NULL, EW_ARITH, grad_minimum)          \
  X(GREATER, greater, "Greater", ALL, TS_EW_GRAIN, NULL, TS_OPF_PROMOTE | EW_NO_GRAD, NULL)   \
  X(GREATER_EQUAL, greater_equal, "GreaterEqual", ALL, TS_EW_GRAIN, NULL,                     \
    TS_OPF_PROMOTE | EW_NO_GRAD, NULL)                                                        \
  X(LESS, less, "Less", ALL, TS_EW_GRAIN, NULL, TS_OPF_PROMOTE | EW_NO_GRAD, NULL)            \
  X(LESS_EQUAL, less_equal, "LessEqual", ALL, TS_EW_GRAIN, NULL, TS_OPF_PROMOTE | EW_NO_GRAD, \
    NULL)                                                                                     \
  X(EQUAL, equal, "Equal", ALL, TS_EW_GRAIN, NULL, TS_OPF_PROMOTE | EW_NO_GRAD, NULL)         \
  X(NOT_EQUAL, not_equal, "NotEqual", ALL, TS_EW_GRAIN, NULL, TS_OPF_PROMOTE | EW_NO_GRAD, NULL) \
  X(LOGICAL_AND, logical_and, "LogicalAnd", BOOL, TS_EW_GRAIN, NULL, EW_NO_GRAD, NULL)        \
  X(LOGICAL_OR, logical_or, "LogicalOr", BOOL, TS_EW_GRAIN, NULL, EW_NO_GRAD, NULL)          \
  X(SQUARED_DIFFERENCE, squared_difference, "SquaredDifference", NUMERIC, TS_EW_GRAIN, NULL,    \
    EW_ARITH, grad_squared_difference)                                                        \
  X(ATAN2, atan2, "Atan2", FLOAT, TS_EW_GRAIN_COSTLY, NULL, EW_ARITH, grad_atan2)             \
  X(TRUNCATEDIV, truncatediv, "TruncateDiv", NUMERIC, TS_EW_GRAIN_COSTLY, check_divisor,      \
    TS_OPF_PROMOTE | EW_NO_GRAD, NULL)                                                        \
  X(TRUNCATEMOD, truncatemod, "TruncateMod", NUMERIC, TS_EW_GRAIN_COSTLY, check_divisor,      \
    TS_OPF_PROMOTE, grad_truncatemod)                                                         \
  X(DIV_NO_NAN, div_no_nan, "DivNoNan", FLOAT, TS_EW_GRAIN, NULL, EW_ARITH, grad_div_no_nan)  \
  X(XLOGY, xlogy, "Xlogy", FLOAT, TS_EW_GRAIN_COSTLY, NULL, EW_ARITH, grad_xlogy)

/* ---- one element ------------------------------------------------------------ */

/* Floats: SquaredDifference, Atan2 (y, x), TruncateDiv (the quotient
 * truncated: 1 / 0 is inf), TruncateMod (C's fmod: the dividend's sign,
 * nan for y 0), DivNoNan (0 where y is 0, whatever x: as TensorFlow's) and
 * Xlogy (0 where x is 0, even for a y of nan or 0) as TensorFlow's functors. */

/* Python's divmod on floats (NumPy's npy_divmod): the quotient floors, the
 * remainder takes the divisor's sign, and x / 0 gives inf or nan. */
#define FLOAT_DIVMOD(sfx, T)                                  \
  TS_EW_FN T divmod_##sfx(T x, T y, T *mod)              \
  {                                                           \
    T m = fmod(x, y);                                         \
    if (y == 0) {                                             \
      *mod = m;                                               \
      return x / y;                                           \
    }                                                         \
    T d = (x - m) / y;                                        \
    if (m != 0) {                                             \
      if ((y < 0) != (m < 0)) {                               \
        m += y;                                               \
        d -= 1;                                               \
      }                                                       \
    } else {                                                  \
      m = copysign((T)0, y);                                  \
    }                                                         \
    *mod = m;                                                 \
    if (d == 0)                                               \
      return copysign((T)0, x / y);                           \
    T q = floor(d);                                           \
    return d - q > (T)0.5 ? q + 1 : q;                        \
  }

#define FLOAT_ELEMS(sfx, T)                                                              \
  FLOAT_DIVMOD(sfx, T)                                                                   \
  TS_EW_FN T add_##sfx(T x, T y) { return x + y; }                                  \
  TS_EW_FN T sub_##sfx(T x, T y) { return x - y; }                                  \
  TS_EW_FN T mul_##sfx(T x, T y) { return x * y; }                                  \
  TS_EW_FN T div_##sfx(T x, T y) { return x / y; }                                  \
  TS_EW_FN T floordiv_##sfx(T x, T y) { T m; return divmod_##sfx(x, y, &m); }       \
  TS_EW_FN T mod_##sfx(T x, T y) { T m; divmod_##sfx(x, y, &m); return m; }         \
  TS_EW_FN T pow_##sfx(T x, T y) { return pow(x, y); }                              \
  TS_EW_FN T maximum_##sfx(T x, T y) { return isnan(x) || x > y ? x : y; }          \
  TS_EW_FN T minimum_##sfx(T x, T y) { return isnan(x) || x < y ? x : y; }          \
  TS_EW_FN T squared_difference_##sfx(T x, T y) { return (x - y) * (x - y); }       \
  TS_EW_FN T atan2_##sfx(T x, T y) { return atan2(x, y); }                          \
  TS_EW_FN T truncatediv_##sfx(T x, T y) { return trunc(x / y); }                   \
  TS_EW_FN T truncatemod_##sfx(T x, T y) { return fmod(x, y); }                     \
  TS_EW_FN T div_no_nan_##sfx(T x, T y) { return y == 0 ? 0 : x / y; }              \
  TS_EW_FN T xlogy_##sfx(T x, T y) { return x == 0 ? 0 : x * log(y); }

/* Signed integers wrap (the arithmetic runs in U) and floor like Python;
 * TruncateDiv and TruncateMod truncate as C (MIN / -1 wraps to MIN, and
 * MIN % -1 is 0, where C's is undefined).  The kernel has ruled out
 * y == 0 for // and % (both kinds), and y < 0 for pow. */
#define SIGNED_ELEMS(sfx, T, U)                                                          \
  TS_EW_FN T add_##sfx(T x, T y) { return (T)((U)x + (U)y); }                       \
  TS_EW_FN T sub_##sfx(T x, T y) { return (T)((U)x - (U)y); }                       \
  TS_EW_FN T mul_##sfx(T x, T y) { return (T)((U)x * (U)y); }                       \
  TS_EW_FN T floordiv_##sfx(T x, T y)                                               \
  {                                                                                      \
    if (y == -1)                                                                         \
      return (T)-(U)x; /* MIN // -1 wraps */                                             \
    T q = x / y;                                                                         \
    return x % y != 0 && (x < 0) != (y < 0) ? q - 1 : q;                                 \
  }                                                                                      \
  TS_EW_FN T mod_##sfx(T x, T y)                                                    \
  {                                                                                      \
    if (y == -1)                                                                         \
      return 0;                                                                          \
    T r = x % y;                                                                         \
    return r != 0 && (r < 0) != (y < 0) ? r + y : r;                                     \
  }                                                                                      \
  TS_EW_FN T pow_##sfx(T x, T y)                                                    \
  {                                                                                      \
    U r = 1, b = (U)x;                                                                   \
    for (; y > 0; y >>= 1, b *= b)                                                       \
      if (y & 1)                                                                         \
        r *= b;                                                                          \
    return (T)r;                                                                         \
  }                                                                                      \
  TS_EW_FN T maximum_##sfx(T x, T y) { return x > y ? x : y; }                      \
  TS_EW_FN T minimum_##sfx(T x, T y) { return x < y ? x : y; }                      \
  TS_EW_FN T squared_difference_##sfx(T x, T y)                                     \
  {                                                                                      \
    U d = (U)x - (U)y;                                                                   \
    return (T)(d * d);                                                                   \
  }                                                                                      \
  TS_EW_FN T truncatediv_##sfx(T x, T y) { return y == -1 ? (T)-(U)x : x / y; }     \
  TS_EW_FN T truncatemod_##sfx(T x, T y) { return y == -1 ? 0 : x % y; }

/* Unsigned integers: the arithmetic runs in W (unsigned, never promoted
 * to int) and wraps on the store. */
#define UNSIGNED_ELEMS(sfx, T, W)                                                   \
  TS_EW_FN T add_##sfx(T x, T y) { return (T)((W)x + (W)y); }                       \
  TS_EW_FN T sub_##sfx(T x, T y) { return (T)((W)x - (W)y); }                       \
  TS_EW_FN T mul_##sfx(T x, T y) { return (T)((W)x * (W)y); }                       \
  TS_EW_FN T floordiv_##sfx(T x, T y) { return (T)(x / y); }                        \
  TS_EW_FN T mod_##sfx(T x, T y) { return (T)(x % y); }                             \
  TS_EW_FN T truncatediv_##sfx(T x, T y) { return (T)(x / y); }                     \
  TS_EW_FN T truncatemod_##sfx(T x, T y) { return (T)(x % y); }                     \
  TS_EW_FN T maximum_##sfx(T x, T y) { return x > y ? x : y; }                      \
  TS_EW_FN T minimum_##sfx(T x, T y) { return x < y ? x : y; }                      \
  TS_EW_FN T squared_difference_##sfx(T x, T y)                                     \
  {                                                                                 \
    W d = (W)x - (W)y;                                                              \
    return (T)(d * d);                                                              \
  }                                                                                 \
  TS_EW_FN T pow_##sfx(T x, T y)                                                    \
  {                                                                                 \
    W r = 1, b = x;                                                                 \
    for (; y > 0; y >>= 1, b *= b)                                                  \
      if (y & 1)                                                                    \
        r *= b;                                                                     \
    return (T)r;                                                                    \
  }

#define COMPARE_ELEMS(sfx, T)                                            \
  TS_EW_FN bool greater_##sfx(T x, T y) { return x > y; }           \
  TS_EW_FN bool greater_equal_##sfx(T x, T y) { return x >= y; }    \
  TS_EW_FN bool less_##sfx(T x, T y) { return x < y; }              \
  TS_EW_FN bool less_equal_##sfx(T x, T y) { return x <= y; }       \
  TS_EW_FN bool equal_##sfx(T x, T y) { return x == y; }            \
  TS_EW_FN bool not_equal_##sfx(T x, T y) { return x != y; }

TS_EW_FN bool logical_and_b(bool x, bool y) { return x && y; }
TS_EW_FN bool logical_or_b(bool x, bool y) { return x || y; }

FLOAT_ELEMS(f32, float)
FLOAT_ELEMS(f64, double)
SIGNED_ELEMS(i32, int32_t, uint32_t)
SIGNED_ELEMS(i64, int64_t, uint64_t)
SIGNED_ELEMS(i8, int8_t, uint32_t) /* U wider than T: never promoted to int */
SIGNED_ELEMS(i16, int16_t, uint32_t)
UNSIGNED_ELEMS(u8, uint8_t, uint32_t)
UNSIGNED_ELEMS(u16, uint16_t, uint32_t)
UNSIGNED_ELEMS(u32, uint32_t, uint32_t)
UNSIGNED_ELEMS(u64, uint64_t, uint64_t)
COMPARE_ELEMS(f32, float)
COMPARE_ELEMS(f64, double)
COMPARE_ELEMS(i32, int32_t)
COMPARE_ELEMS(i64, int64_t)
COMPARE_ELEMS(u8, uint8_t)
COMPARE_ELEMS(b, bool)
COMPARE_ELEMS(i8, int8_t)
COMPARE_ELEMS(i16, int16_t)
COMPARE_ELEMS(u16, uint16_t)
COMPARE_ELEMS(u32, uint32_t)
COMPARE_ELEMS(u64, uint64_t)
