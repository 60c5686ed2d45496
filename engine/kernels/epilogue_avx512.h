/* kernels/epilogue_avx512.h — what the AVX-512 f32 kernels (gemm_avx512.c,
 * conv_direct_avx512.c) do around their accumulators: the mask of a
 * vector's columns within a tile's edge, its bias loaded under that mask,
 * and the store of one accumulator with the bias and Relu applied in the
 * register (Sigmoid and Tanh run over the stored rows).  Included by those
 * files only, each built for avx512f whatever the compiler's target. */
#ifndef TS_EPILOGUE_AVX512_H
#define TS_EPILOGUE_AVX512_H

#include "kernels.h"

#include <immintrin.h>

#define TS_AVX512_W 16
#define TS_AVX512_TARGET __attribute__((target("avx512f,fma")))

/* The first `cols` of a vector's 16 lanes (none when cols <= 0). */
static TS_AVX512_TARGET inline __mmask16 ts__avx512_cols_mask(int cols)
{
  return cols <= 0 ? 0 : cols >= TS_AVX512_W ? (__mmask16)0xffff : (__mmask16)((1u << cols) - 1);
}

/* The bias at its vector's columns; zeros without one. */
static TS_AVX512_TARGET inline __attribute__((always_inline)) __m512 ts__avx512_bias(const float *bias,
                                                                                       __mmask16 mask)
{
  return bias ? _mm512_maskz_loadu_ps(mask, bias) : _mm512_setzero_ps();
}

/* acc + bias, through Relu when act is Relu, stored to the masked columns of dst. */
static TS_AVX512_TARGET inline __attribute__((always_inline)) void
ts__avx512_store(float *dst, __mmask16 mask, __m512 acc, __m512 bias, ts_act act)
{
  __m512 v = _mm512_add_ps(acc, bias);
  if (act == TS_ACT_RELU)
    v = _mm512_max_ps(_mm512_setzero_ps(), v); /* 0 > v ? 0 : v: NaN and -0.0 pass, as ts__act_f32 */
  _mm512_mask_storeu_ps(dst, mask, v);
}

#endif
