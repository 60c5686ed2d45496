/* half.h — the 16-bit floats as stored: IEEE half (f16: 5 exponent bits,
 * 10 mantissa bits) and bfloat16 (bf16: float32's 8 exponent bits, 7
 * mantissa bits).  Each is a struct around its bits so that no C arithmetic
 * applies to it by mistake: kernels widen to float, compute, and round
 * back.  Narrowing rounds to nearest, ties to even, from the exact value
 * (a double), so a double is rounded once; Inf stays Inf, NaN stays NaN
 * (bfloat16 keeps the payload's top bits from float32), overflow gives
 * Inf and underflow gives subnormals, then zero, with the sign kept. */
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct ts_f16 {
  uint16_t bits;
} ts_f16;
typedef struct ts_bf16 {
  uint16_t bits;
} ts_bf16;

_Static_assert(sizeof(ts_f16) == 2 && sizeof(ts_bf16) == 2, "16-bit floats are two bytes");

/* A 16-bit float with 1 sign bit, 15 - mbits exponent bits (bias) and
 * mbits mantissa bits, to its exact value. */
static inline double ts__small_float_value(uint16_t h, int mbits, int bias)
{
  int emax = (1 << (15 - mbits)) - 1;
  int e = (h >> mbits) & emax;
  unsigned m = h & ((1u << mbits) - 1);
  double v = e == emax ? (m ? NAN : INFINITY)
             : e == 0  ? ldexp(m, 1 - bias - mbits)
                       : ldexp(m | 1u << mbits, e - bias - mbits);
  return h & 0x8000 ? -v : v;
}

/* v rounded to nearest even in that format. */
static inline uint16_t ts__small_float_bits(double v, int mbits, int bias)
{
  unsigned emax = (1u << (15 - mbits)) - 1;
  uint16_t sign = signbit(v) ? 0x8000 : 0;
  double a = fabs(v);
  if (isnan(v))
    return (uint16_t)(sign | emax << mbits | 1u << (mbits - 1)); /* a quiet NaN */
  if (a == 0)
    return sign;
  if (isinf(a))
    return (uint16_t)(sign | emax << mbits);
  int e;
  frexp(a, &e);
  e -= 1; /* a = 1.m * 2^e */
  if (e < 1 - bias) /* subnormal: multiples of 2^(1 - bias - mbits); 2^mbits is the least normal */
    return (uint16_t)(sign | (unsigned)rint(ldexp(a, bias - 1 + mbits)));
  double q = rint(ldexp(a, mbits - e)); /* in [2^mbits, 2^(mbits + 1)] */
  if (q >= ldexp(1, mbits + 1)) {
    q /= 2;
    e++;
  }
  if (e + bias >= (int)emax)
    return (uint16_t)(sign | emax << mbits);
  return (uint16_t)(sign | (unsigned)(e + bias) << mbits | ((unsigned)q - (1u << mbits)));
}

static inline float ts__f16_to_f32(ts_f16 h)
{
  return (float)ts__small_float_value(h.bits, 10, 15);
}

static inline ts_f16 ts__f64_to_f16(double v)
{
  return (ts_f16){ ts__small_float_bits(v, 10, 15) };
}

/* bfloat16 is float32 cut short: widening shifts the bits (a NaN keeps its payload). */
static inline float ts__bf16_to_f32(ts_bf16 h)
{
  uint32_t u = (uint32_t)h.bits << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline ts_bf16 ts__f64_to_bf16(double v)
{
  if (isnan(v)) { /* float32's NaN, cut short: its sign and top payload bits, kept quiet */
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (ts_bf16){ (uint16_t)(u >> 16 | 0x0040) };
  }
  return (ts_bf16){ ts__small_float_bits(v, 7, 127) };
}
