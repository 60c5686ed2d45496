/* kernels/conv_direct_avx512.c — the AVX-512 strip of a direct convolution
 * (conv_direct.c): up to 24 output pixels x 16 channels, or 12 x 32, one
 * zmm accumulator per pixel and vector of channels (24 of the 32), each
 * filter value row loaded once per strip step and each input value
 * broadcast into the multiply-add.  Channels past the strip's edge are
 * masked on load and store.  Built for avx512f whatever the compiler's
 * target; run only where cpuid says so. */
#include "epilogue_avx512.h"

#define W TS_AVX512_W
#define ACCS 24

#define TARGET TS_AVX512_TARGET

/* Named accumulators (GCC keeps an array in memory); ROWS and NV are
 * constants at each call site, so the rows past ROWS fold away. */
#define EACH_ROW(X)                                                                                           \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) X(18)     \
  X(19) X(20) X(21) X(22) X(23)

static TARGET inline __attribute__((always_inline)) void strip(const ts_conv_strip *s, const int ROWS,
                                                                   const int NV)
{
#define DECLARE(I) __m512 c##I##_0 = _mm512_setzero_ps(), c##I##_1 = _mm512_setzero_ps();
  EACH_ROW(DECLARE)
  __mmask16 mask[2] = { ts__avx512_cols_mask(s->cols), ts__avx512_cols_mask(s->cols - W) };
  for (int64_t l = 0; l < s->lines; l++) {
    const float *x = s->x + l * s->x_line, *f = s->f + l * s->k * s->ldf;
    for (int64_t p = 0; p < s->k; p++, x++, f += s->ldf) {
      __m512 f0 = NV > 1 ? _mm512_loadu_ps(f) : _mm512_maskz_loadu_ps(mask[0], f);
      __m512 f1 = NV > 1 ? _mm512_maskz_loadu_ps(mask[1], f + W) : f0;
#define STEP(I)                                                               \
      if (I < ROWS) {                                                         \
        __m512 xv = _mm512_set1_ps(x[I * s->x_step]);                         \
        c##I##_0 = _mm512_fmadd_ps(xv, f0, c##I##_0);                         \
        if (NV > 1)                                                           \
          c##I##_1 = _mm512_fmadd_ps(xv, f1, c##I##_1);                       \
      }
      EACH_ROW(STEP)
    }
  }
  __m512 bias0 = ts__avx512_bias(s->bias, mask[0]);
  __m512 bias1 = ts__avx512_bias(s->bias && NV > 1 ? s->bias + W : NULL, mask[1]);
#define STORE_ONE(I, VEC, acc, bias) ts__avx512_store(s->y + I * s->ldy + VEC * W, mask[VEC], acc, bias, s->act)
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
      CASE2(1) CASE2(2) CASE2(3) CASE2(4) CASE2(5) CASE2(6) CASE2(7) CASE2(8) CASE2(9) CASE2(10) CASE2(11)
      CASE2(12)
    }
  } else {
    switch (s->rows) {
      CASE1(1) CASE1(2) CASE1(3) CASE1(4) CASE1(5) CASE1(6) CASE1(7) CASE1(8) CASE1(9) CASE1(10) CASE1(11)
      CASE1(12) CASE1(13) CASE1(14) CASE1(15) CASE1(16) CASE1(17) CASE1(18) CASE1(19) CASE1(20) CASE1(21)
      CASE1(22) CASE1(23) CASE1(24)
    }
  }
  ts__strip_act_rows(s);
}

static bool usable(const ts_cpu_features *f)
{
  return f->avx512f && f->fma;
}

const ts_conv_strip_kernel ts__strip_avx512 = { "avx512", "direct avx512", W, ACCS, run, usable };
