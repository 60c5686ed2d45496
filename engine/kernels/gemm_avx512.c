/* kernels/gemm_avx512.c — the AVX-512 f32 tiles: up to 8 rows x 32
 * columns (16 zmm accumulators), and a wide one of up to 5 rows x 64
 * columns (20: four vectors of B per broadcast of A, twice the
 * multiply-adds per load, and batches of 5, 10, 20 or 60 rows fill its
 * tiles where 8 x 32 leaves a mostly empty last one).  A is broadcast a
 * value at a time from each row, B read in place as rows of vectors;
 * columns past the tile's edge are masked off on load and store, so
 * nothing outside the operands is touched.  Built for avx512f whatever the
 * compiler's target; run only where cpuid says so. */
#include "epilogue_avx512.h"

#define W TS_AVX512_W
#define ROWS_MAX 8
#define WIDE_ROWS 5

#define TARGET TS_AVX512_TARGET

/* The accumulators are named variables, not an array: GCC keeps an array
 * in memory across the unrolled loop, named ones live in registers.  ROWS
 * and NV (vectors of 16 columns) are constants at each call site below,
 * so the rows past ROWS and the vectors past NV fold away: one template
 * for both tiles. */
#define EACH_ROW(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

static TARGET inline __attribute__((always_inline)) void tile(const ts_tile *t, const int ROWS,
                                                                  const int NV)
{
#define DECLARE(I)                                                            \
  __m512 c##I##_0 = _mm512_setzero_ps(), c##I##_1 = _mm512_setzero_ps(),      \
         c##I##_2 = _mm512_setzero_ps(), c##I##_3 = _mm512_setzero_ps();
  EACH_ROW(DECLARE)
  __mmask16 mask[4] = { ts__avx512_cols_mask(t->cols), ts__avx512_cols_mask(t->cols - W),
                        ts__avx512_cols_mask(t->cols - 2 * W), ts__avx512_cols_mask(t->cols - 3 * W) };
  for (int s = 0; s < t->n_seg; s++) {
    const float *b = t->b + s * t->b_seg;
#define ROW_PTR(I) const float *a##I = t->a[s * TS_TILE_MAX_ROWS + (I < ROWS ? I : 0)];
    EACH_ROW(ROW_PTR)
    for (int64_t p = 0, pa = 0; p < t->k; p++, pa += t->a_step, b += t->ldb) {
      /* vectors before the last are full (NV says how many there are) */
      __m512 b0 = NV > 1 ? _mm512_loadu_ps(b) : _mm512_maskz_loadu_ps(mask[0], b);
      __m512 b1 = NV > 2 ? _mm512_loadu_ps(b + W) : NV > 1 ? _mm512_maskz_loadu_ps(mask[1], b + W) : b0;
      __m512 b2 = NV > 3 ? _mm512_loadu_ps(b + 2 * W)
                         : NV > 2 ? _mm512_maskz_loadu_ps(mask[2], b + 2 * W) : b0;
      __m512 b3 = NV > 3 ? _mm512_maskz_loadu_ps(mask[3], b + 3 * W) : b0;
#define STEP(I)                                                               \
      if (I < ROWS) {                                                         \
        __m512 av = _mm512_set1_ps(a##I[pa]);                                 \
        c##I##_0 = _mm512_fmadd_ps(av, b0, c##I##_0);                         \
        if (NV > 1)                                                           \
          c##I##_1 = _mm512_fmadd_ps(av, b1, c##I##_1);                       \
        if (NV > 2)                                                           \
          c##I##_2 = _mm512_fmadd_ps(av, b2, c##I##_2);                       \
        if (NV > 3)                                                           \
          c##I##_3 = _mm512_fmadd_ps(av, b3, c##I##_3);                       \
      }
      EACH_ROW(STEP)
    }
  }
  __m512 bias[4];
  for (int v = 0; v < NV; v++)
    bias[v] = ts__avx512_bias(t->bias ? t->bias + v * W : NULL, mask[v]);
#define STORE_ONE(I, VEC, acc) ts__avx512_store(t->c + I * t->ldc + VEC * W, mask[VEC], acc, bias[VEC], t->act)
#define STORE(I)                                                              \
  if (I < ROWS) {                                                             \
    STORE_ONE(I, 0, c##I##_0);                                                \
    if (NV > 1)                                                               \
      STORE_ONE(I, 1, c##I##_1);                                              \
    if (NV > 2)                                                               \
      STORE_ONE(I, 2, c##I##_2);                                              \
    if (NV > 3)                                                               \
      STORE_ONE(I, 3, c##I##_3);                                              \
  }
  EACH_ROW(STORE)
#undef DECLARE
#undef ROW_PTR
#undef STEP
#undef STORE_ONE
#undef STORE
}

#define ROWS_CASE(R)                                                          \
  case R:                                                                     \
    if (t->cols > W)                                                          \
      tile(t, R, 2);                                                          \
    else                                                                      \
      tile(t, R, 1);                                                          \
    break;

static TARGET void run(const ts_tile *t)
{
  switch (t->rows) {
    ROWS_CASE(1) ROWS_CASE(2) ROWS_CASE(3) ROWS_CASE(4)
    ROWS_CASE(5) ROWS_CASE(6) ROWS_CASE(7) ROWS_CASE(8)
  }
  ts__tile_act_rows(t);
}

#define WIDE_CASE(R)                                                          \
  case R:                                                                     \
    if (t->cols > 3 * W)                                                      \
      tile(t, R, 4);                                                          \
    else if (t->cols > 2 * W)                                                 \
      tile(t, R, 3);                                                          \
    else if (t->cols > W)                                                     \
      tile(t, R, 2);                                                          \
    else                                                                      \
      tile(t, R, 1);                                                          \
    break;

static TARGET void run_wide(const ts_tile *t)
{
  switch (t->rows) {
    WIDE_CASE(1) WIDE_CASE(2) WIDE_CASE(3) WIDE_CASE(4) WIDE_CASE(5)
  }
  ts__tile_act_rows(t);
}

static bool usable(const ts_cpu_features *f)
{
  return f->avx512f && f->fma;
}

const ts_tile_kernel ts__tile_avx512 = { "avx512", ROWS_MAX, 2 * W, run, usable };
const ts_tile_kernel ts__tile_avx512_wide = { "avx512", WIDE_ROWS, 4 * W, run_wide, usable };
