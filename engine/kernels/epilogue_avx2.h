/* kernels/epilogue_avx2.h — what the AVX2+FMA f32 kernels (gemm_avx2.c,
 * conv_direct_avx2.c) do around their accumulators: the mask of a
 * vector's columns within a tile's edge, its bias loaded under that mask
 * (vmaskmovps touches no memory under a clear mask bit), and the store of
 * one accumulator with the bias and Relu applied in the register (Sigmoid
 * and Tanh run over the stored rows).  Included by those files only, each
 * built for avx2,fma whatever the compiler's target. */
#ifndef TS_EPILOGUE_AVX2_H
#define TS_EPILOGUE_AVX2_H

#include "kernels.h"

#include <immintrin.h>

#define TS_AVX2_W 8
#define TS_AVX2_TARGET __attribute__((target("avx2,fma")))

/* The first `cols` of a vector's 8 lanes (none when cols <= 0). */
static TS_AVX2_TARGET inline __m256i ts__avx2_cols_mask(int cols)
{
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* The bias at its vector's columns; zeros without one. */
static TS_AVX2_TARGET inline __attribute__((always_inline)) __m256 ts__avx2_bias(const float *bias, __m256i mask)
{
  return bias ? _mm256_maskload_ps(bias, mask) : _mm256_setzero_ps();
}

/* acc + bias, through Relu when act is Relu, stored to the masked columns of dst. */
static TS_AVX2_TARGET inline __attribute__((always_inline)) void
ts__avx2_store(float *dst, __m256i mask, __m256 acc, __m256 bias, ts_act act)
{
  __m256 v = _mm256_add_ps(acc, bias);
  if (act == TS_ACT_RELU)
    v = _mm256_max_ps(_mm256_setzero_ps(), v); /* 0 > v ? 0 : v: NaN and -0.0 pass, as ts__act_f32 */
  _mm256_maskstore_ps(dst, mask, v);
}

#endif
