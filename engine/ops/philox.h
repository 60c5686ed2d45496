/* ops/philox.h — StatelessRandomUniform's generator, one source for the
 * CPU loop (ops/create.c) and the CUDA kernel (backend/cuda/random.cu), so
 * that a stream gives the same bits on both: Philox4x32-10 (Salmon et al.,
 * "Parallel random numbers: as easy as 1, 2, 3", SC 2011; TensorFlow's
 * stateless ops and cuRAND use it), keyed by the seed, its counter the
 * element index and the stream's counter.  Element i is a function of
 * (seed, counter, i) alone, so any number of threads draw it in any order.
 *
 * Element i takes the 128 bits of block i: floats the top 53 bits of its
 * first 64 (24 for f32) as a fraction of [lo, hi), kept below hi;
 * integers the whole 128 bits as a fraction of the span (bias below
 * span / 2^128, none measurable).  Products and sums are separately
 * rounded on both (no FMA joins them on the device). */
#pragma once

#include "ew_fn.h"

#ifdef __CUDACC__
typedef unsigned __int128 ts_philox_u128;
#define PHILOX_MUL(a, b) __dmul_rn((a), (b))
#define PHILOX_ADD(a, b) __dadd_rn((a), (b))
#else
__extension__ typedef unsigned __int128 ts_philox_u128;
#define PHILOX_MUL(a, b) ((a) * (b))
#define PHILOX_ADD(a, b) ((a) + (b))
#endif

/* What a stream draws with (ts_philox_params_of). */
typedef struct ts_philox_params {
  uint64_t seed;
  uint64_t ilo, span; /* integers: the lowest value and the span (0: all 2^64) */
  double lo, hi;      /* floats: [lo, hi) */
  float lo32;         /* f32: the least float32 >= lo */
} ts_philox_params;

#ifndef __CUDACC__
/* The least float32 >= v (RandomUniform's lowest f32 too). */
static inline float ts_f32_ceil(double v)
{
  float f = (float)v;
  return f < v ? nextafterf(f, INFINITY) : f;
}

/* An integer uniform over [lo, hi) (whole numbers, inference checked):
 * its lowest value and span, modulo 2^64 (0: all 2^64 values). */
static inline void ts_uniform_int_span(double lo, double hi, uint64_t *ilo, uint64_t *span)
{
  uint64_t hi_excl = hi >= 0x1p63 ? (uint64_t)INT64_MAX + 1 : (uint64_t)(int64_t)hi;
  *ilo = (uint64_t)(int64_t)lo;
  *span = hi_excl - *ilo;
}

/* A stream's parameters, for the CPU loop and the CUDA launcher alike. */
static inline ts_philox_params ts_philox_params_of(uint64_t seed, double lo, double hi,
                                                   bool integer)
{
  ts_philox_params p = { .seed = seed, .lo = lo, .hi = hi, .lo32 = ts_f32_ceil(lo) };
  if (integer)
    ts_uniform_int_span(lo, hi, &p.ilo, &p.span);
  return p;
}
#endif

/* The block of element i in stream (seed, counter): w[0..3]. */
TS_EW_FN void ts_philox_block(uint64_t seed, uint64_t counter, uint64_t i, uint32_t w[4])
{
  uint32_t c0 = (uint32_t)i, c1 = (uint32_t)(i >> 32), c2 = (uint32_t)counter,
           c3 = (uint32_t)(counter >> 32);
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int r = 0; r < 10; r++) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1;
    c3 = (uint32_t)p0;
    c0 = n0;
    c2 = n2;
  }
  w[0] = c0;
  w[1] = c1;
  w[2] = c2;
  w[3] = c3;
}

/* A double in [lo, hi) (f64, and the 16-bit floats before rounding). */
TS_EW_FN double ts_philox_f64(const uint32_t w[4], double lo, double hi)
{
  uint64_t bits = ((uint64_t)w[1] << 32 | w[0]) >> 11;
  double v = PHILOX_ADD(lo, PHILOX_MUL(PHILOX_MUL((double)bits, 0x1p-53), hi - lo));
  while (v >= hi) /* rounding can reach hi */
    v = nextafter(v, -(double)INFINITY);
  return v;
}

/* A float32 in [lo32, hi), lo32 the least float32 >= lo. */
TS_EW_FN float ts_philox_f32(const uint32_t w[4], double lo, double hi, float lo32)
{
  double frac = PHILOX_MUL((double)(w[0] >> 8), 0x1p-24);
  float v = (float)PHILOX_ADD(lo, PHILOX_MUL(frac, hi - lo));
  v = v < lo32 ? lo32 : v;
  while (v >= hi)
    v = nextafterf(v, -(float)INFINITY);
  return v;
}

/* lo + an integer in [0, span) (span 0: all 2^64), modulo 2^64. */
TS_EW_FN uint64_t ts_philox_int(const uint32_t w[4], uint64_t lo, uint64_t span)
{
  uint64_t x = (uint64_t)w[1] << 32 | w[0], y = (uint64_t)w[3] << 32 | w[2];
  if (span == 0)
    return lo + x;
  /* floor((x 2^64 + y) span / 2^128) */
  ts_philox_u128 low = (ts_philox_u128)y * span;
  ts_philox_u128 high = (ts_philox_u128)x * span + (low >> 64);
  return lo + (uint64_t)(high >> 64);
}
