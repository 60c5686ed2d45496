/* kernels/gemm_avx2.c — the AVX2+FMA f32 tile: up to 6 rows x 16 columns
 * (12 ymm accumulators of the 16), A broadcast a value at a time from
 * each row, B read in place as rows of two vectors.  Columns past the tile's edge are masked
 * (vmaskmovps touches no memory under a clear mask bit).  Built for
 * avx2,fma whatever the compiler's target; run only where cpuid says so. */
#include "epilogue_avx2.h"

#define W TS_AVX2_W
#define ROWS_MAX 6

#define TARGET TS_AVX2_TARGET

/* The accumulators are named variables, not an array: GCC keeps an array
 * in memory across the unrolled loop, named ones live in registers.  ROWS
 * and NV are constants at each call site below, so the rows past ROWS and
 * the second vector past NV fold away. */
#define EACH_ROW(X) X(0) X(1) X(2) X(3) X(4) X(5)

static TARGET inline __attribute__((always_inline)) void tile(const ts_tile *t, const int ROWS,
                                                                  const int NV)
{
#define DECLARE(I) __m256 c##I##_0 = _mm256_setzero_ps(), c##I##_1 = _mm256_setzero_ps();
  EACH_ROW(DECLARE)
  __m256i mask[2] = { ts__avx2_cols_mask(t->cols), ts__avx2_cols_mask(t->cols - W) };
  for (int s = 0; s < t->n_seg; s++) {
    const float *b = t->b + s * t->b_seg;
#define ROW_PTR(I) const float *a##I = t->a[s * TS_TILE_MAX_ROWS + (I < ROWS ? I : 0)];
    EACH_ROW(ROW_PTR)
    for (int64_t p = 0, pa = 0; p < t->k; p++, pa += t->a_step, b += t->ldb) {
      __m256 b0 = NV > 1 ? _mm256_loadu_ps(b) : _mm256_maskload_ps(b, mask[0]); /* full if NV 2 */
      __m256 b1 = NV > 1 ? _mm256_maskload_ps(b + W, mask[1]) : b0;
#define STEP(I)                                                               \
      if (I < ROWS) {                                                         \
        __m256 av = _mm256_broadcast_ss(a##I + pa);                           \
        c##I##_0 = _mm256_fmadd_ps(av, b0, c##I##_0);                         \
        if (NV > 1)                                                           \
          c##I##_1 = _mm256_fmadd_ps(av, b1, c##I##_1);                       \
      }
      EACH_ROW(STEP)
    }
  }
  __m256 bias0 = ts__avx2_bias(t->bias, mask[0]);
  __m256 bias1 = ts__avx2_bias(t->bias && NV > 1 ? t->bias + W : NULL, mask[1]);
#define STORE_ONE(I, VEC, acc, bias) ts__avx2_store(t->c + I * t->ldc + VEC * W, mask[VEC], acc, bias, t->act)
#define STORE(I)                                                              \
  if (I < ROWS) {                                                             \
    STORE_ONE(I, 0, c##I##_0, bias0);                                         \
    if (NV > 1)                                                               \
      STORE_ONE(I, 1, c##I##_1, bias1);                                       \
  }
  EACH_ROW(STORE)
#undef DECLARE
#undef ROW_PTR
#undef STEP
#undef STORE_ONE
#undef STORE
}

#define ROWS_CASE(R)         \
  case R:                                                                     \
    if (t->cols > W)                                                          \
      tile(t, R, 2);                                                          \
    else                                                                      \
      tile(t, R, 1);                                                          \
    break;

static TARGET void run(const ts_tile *t)
{
  switch (t->rows) {
    ROWS_CASE(1) ROWS_CASE(2) ROWS_CASE(3) ROWS_CASE(4) ROWS_CASE(5) ROWS_CASE(6)
  }
  ts__tile_act_rows(t);
}

static bool usable(const ts_cpu_features *f)
{
  return f->avx2 && f->fma;
}

const ts_tile_kernel ts__tile_avx2 = { "avx2", ROWS_MAX, 2 * W, run, usable };
