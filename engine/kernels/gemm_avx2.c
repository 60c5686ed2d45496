/* kernels/gemm_avx2.c — the AVX2+FMA f32 tile: up to 6 rows x 16 columns
 * (12 ymm accumulators of the 16), A broadcast a value at a time, B read
 * as rows of two vectors.  Columns past the tile's edge are masked
 * (vmaskmovps touches no memory under a clear mask bit).  Built for
 * avx2,fma whatever the compiler's target; run only where cpuid says so. */
#include "kernels.h"

#include <immintrin.h>

#define W 8
#define ROWS_MAX 6

#define TARGET __attribute__((target("avx2,fma")))

static TARGET inline __m256i cols_mask(int cols)
{
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(cols), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static TARGET inline __attribute__((always_inline)) void tile(const ts_tile *t, const int ROWS,
                                                                  const int NV)
{
  __m256 acc[ROWS_MAX][2];
  for (int i = 0; i < ROWS; i++)
    for (int v = 0; v < NV; v++)
      acc[i][v] = _mm256_setzero_ps();
  __m256i mask[2] = { cols_mask(t->cols), cols_mask(t->cols - W) };
  for (int s = 0; s < t->n_seg; s++) {
    const float *ap[ROWS_MAX];
    for (int i = 0; i < ROWS; i++)
      ap[i] = t->a[s * TS_TILE_MAX_ROWS + i];
    const float *b = t->b + s * t->b_seg;
    for (int64_t p = 0; p < t->k; p++, b += t->ldb) {
      __m256 bv[2];
      for (int v = 0; v < NV; v++)
        bv[v] = _mm256_maskload_ps(b + v * W, mask[v]);
      for (int i = 0; i < ROWS; i++) {
        __m256 av = _mm256_broadcast_ss(ap[i]);
        ap[i] += t->a_step;
        for (int v = 0; v < NV; v++)
          acc[i][v] = _mm256_fmadd_ps(av, bv[v], acc[i][v]);
      }
    }
  }
  __m256 bias[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() };
  for (int v = 0; v < NV && t->bias; v++)
    bias[v] = _mm256_maskload_ps(t->bias + v * W, mask[v]);
  __m256 zero = _mm256_setzero_ps();
  for (int i = 0; i < ROWS; i++)
    for (int v = 0; v < NV; v++) {
      __m256 x = _mm256_add_ps(acc[i][v], bias[v]);
      if (t->act == TS_ACT_RELU)
        x = _mm256_max_ps(x, zero);
      _mm256_maskstore_ps(t->c + i * t->ldc + v * W, mask[v], x);
    }
}

#define ROWS_CASE(R)         \
  case R:                    \
    if (t->cols > W)         \
      tile(t, R, 2);         \
    else                     \
      tile(t, R, 1);         \
    break;

static TARGET void run(const ts_tile *t)
{
  switch (t->rows) {
    ROWS_CASE(1) ROWS_CASE(2) ROWS_CASE(3) ROWS_CASE(4) ROWS_CASE(5) ROWS_CASE(6)
  }
  if (t->act == TS_ACT_SIGMOID || t->act == TS_ACT_TANH)
    for (int i = 0; i < t->rows; i++)
      ts__act_f32(t->act, t->c + i * t->ldc, t->cols);
}

static bool usable(const ts_cpu_features *f)
{
  return f->avx2 && f->fma;
}

const ts_tile_kernel ts__tile_avx2 = { "avx2", ROWS_MAX, 2 * W, run, usable };
