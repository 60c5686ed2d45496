/* kernels/conv_direct_avx2.c — the AVX2+FMA strip of a direct convolution
 * (conv_direct.c): up to 12 output pixels x 8 channels, or 6 x 16, one
 * ymm accumulator per pixel and vector of channels (12 of the 16).
 * Channels past the strip's edge are masked (vmaskmovps touches no memory
 * under a clear mask bit).  Built for avx2,fma whatever the compiler's
 * target; run only where cpuid says so. */
#include "epilogue_avx2.h"

#define W TS_AVX2_W
#define ACCS 12

#define TARGET TS_AVX2_TARGET

#define EACH_ROW(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

static TARGET inline __attribute__((always_inline)) void strip(const ts_conv_strip *s, const int ROWS,
                                                                   const int NV)
{
#define DECLARE(I) __m256 c##I##_0 = _mm256_setzero_ps(), c##I##_1 = _mm256_setzero_ps();
  EACH_ROW(DECLARE)
  __m256i mask[2] = { ts__avx2_cols_mask(s->cols), ts__avx2_cols_mask(s->cols - W) };
  for (int64_t l = 0; l < s->lines; l++) {
    const float *x = s->x + l * s->x_line, *f = s->f + l * s->k * s->ldf;
    for (int64_t p = 0; p < s->k; p++, x++, f += s->ldf) {
      __m256 f0 = NV > 1 ? _mm256_loadu_ps(f) : _mm256_maskload_ps(f, mask[0]);
      __m256 f1 = NV > 1 ? _mm256_maskload_ps(f + W, mask[1]) : f0;
#define STEP(I)                                                               \
      if (I < ROWS) {                                                         \
        __m256 xv = _mm256_broadcast_ss(x + I * s->x_step);                   \
        c##I##_0 = _mm256_fmadd_ps(xv, f0, c##I##_0);                         \
        if (NV > 1)                                                           \
          c##I##_1 = _mm256_fmadd_ps(xv, f1, c##I##_1);                       \
      }
      EACH_ROW(STEP)
    }
  }
  __m256 bias0 = ts__avx2_bias(s->bias, mask[0]);
  __m256 bias1 = ts__avx2_bias(s->bias && NV > 1 ? s->bias + W : NULL, mask[1]);
#define STORE_ONE(I, VEC, acc, bias) ts__avx2_store(s->y + I * s->ldy + VEC * W, mask[VEC], acc, bias, s->act)
#define STORE(I)                                                              \
  if (I < ROWS) {                                                             \
    STORE_ONE(I, 0, c##I##_0, bias0);                                         \
    if (NV > 1)                                                               \
      STORE_ONE(I, 1, c##I##_1, bias1);                                       \
  }
  EACH_ROW(STORE)
#undef DECLARE
#undef STEP
#undef STORE_ONE
#undef STORE
}

#define CASE1(R) case R: strip(s, R, 1); break;
#define CASE2(R) case R: strip(s, R, 2); break;

static TARGET void run(const ts_conv_strip *s)
{
  if (s->cols > W) {
    switch (s->rows) {
      CASE2(1) CASE2(2) CASE2(3) CASE2(4) CASE2(5) CASE2(6)
    }
  } else {
    switch (s->rows) {
      CASE1(1) CASE1(2) CASE1(3) CASE1(4) CASE1(5) CASE1(6) CASE1(7) CASE1(8) CASE1(9) CASE1(10) CASE1(11)
      CASE1(12)
    }
  }
  ts__strip_act_rows(s);
}

static bool usable(const ts_cpu_features *f)
{
  return f->avx2 && f->fma;
}

const ts_conv_strip_kernel ts__strip_avx2 = { "avx2", "direct avx2", W, ACCS, run, usable };
