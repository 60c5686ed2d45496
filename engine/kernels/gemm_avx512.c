/* kernels/gemm_avx512.c — the AVX-512 f32 tile: up to 8 rows x 32 columns
 * (16 zmm accumulators), A broadcast a value at a time, B read as rows of
 * two vectors; columns past the tile's edge are masked off on load and
 * store, so nothing outside the operands is touched.  Built for
 * avx512f whatever the compiler's target; run only where cpuid says so. */
#include "kernels.h"

#include <immintrin.h>

#define W 16

#define TARGET __attribute__((target("avx512f,fma")))

static TARGET inline __mmask16 cols_mask(int cols)
{
  return cols <= 0 ? 0 : cols >= W ? (__mmask16)0xffff : (__mmask16)((1u << cols) - 1);
}

/* ROWS and NV are constants at each call site below: the loops unroll and
 * the accumulators stay in registers. */
static TARGET inline __attribute__((always_inline)) void tile(const ts_tile *t, const int ROWS,
                                                                  const int NV)
{
  __m512 acc[TS_TILE_MAX_ROWS][2];
  for (int i = 0; i < ROWS; i++)
    for (int v = 0; v < NV; v++)
      acc[i][v] = _mm512_setzero_ps();
  __mmask16 mask[2] = { cols_mask(t->cols), cols_mask(t->cols - W) };
  for (int s = 0; s < t->n_seg; s++) {
    const float *ap[TS_TILE_MAX_ROWS];
    for (int i = 0; i < ROWS; i++)
      ap[i] = t->a[s * TS_TILE_MAX_ROWS + i];
    const float *b = t->b + s * t->b_seg;
    for (int64_t p = 0; p < t->k; p++, b += t->ldb) {
      __m512 bv[2];
      for (int v = 0; v < NV; v++)
        bv[v] = _mm512_maskz_loadu_ps(mask[v], b + v * W);
      for (int i = 0; i < ROWS; i++) {
        __m512 av = _mm512_set1_ps(*ap[i]);
        ap[i] += t->a_step;
        for (int v = 0; v < NV; v++)
          acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
      }
    }
  }
  __m512 bias[2] = { _mm512_setzero_ps(), _mm512_setzero_ps() };
  for (int v = 0; v < NV && t->bias; v++)
    bias[v] = _mm512_maskz_loadu_ps(mask[v], t->bias + v * W);
  __m512 zero = _mm512_setzero_ps();
  for (int i = 0; i < ROWS; i++)
    for (int v = 0; v < NV; v++) {
      __m512 x = _mm512_add_ps(acc[i][v], bias[v]);
      if (t->act == TS_ACT_RELU)
        x = _mm512_max_ps(x, zero);
      _mm512_mask_storeu_ps(t->c + i * t->ldc + v * W, mask[v], x);
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
    ROWS_CASE(1) ROWS_CASE(2) ROWS_CASE(3) ROWS_CASE(4)
    ROWS_CASE(5) ROWS_CASE(6) ROWS_CASE(7) ROWS_CASE(8)
  }
  if (t->act == TS_ACT_SIGMOID || t->act == TS_ACT_TANH)
    for (int i = 0; i < t->rows; i++)
      ts__act_f32(t->act, t->c + i * t->ldc, t->cols);
}

static bool usable(const ts_cpu_features *f)
{
  return f->avx512f && f->fma;
}

const ts_tile_kernel ts__tile_avx512 = { "avx512", TS_TILE_MAX_ROWS, 2 * W, run, usable };
