/* kernels/gemm_c.c — the portable f32 tile, for CPUs without AVX2+FMA:
 * up to 4 rows x 16 columns in plain C the compiler vectorises for the
 * baseline ISA. */
#include "kernels.h"

#define ROWS_MAX 4
#define COLS_MAX 16

static void run(const ts_tile *t)
{
  float acc[ROWS_MAX][COLS_MAX] = { { 0 } };
  for (int s = 0; s < t->n_seg; s++) {
    const float *b = t->b + s * t->b_seg;
    for (int i = 0; i < t->rows; i++) {
      const float *a = t->a[s * TS_TILE_MAX_ROWS + i];
      for (int64_t p = 0; p < t->k; p++)
        for (int j = 0; j < t->cols; j++)
          acc[i][j] += a[p * t->a_step] * b[p * t->ldb + j];
    }
  }
  for (int i = 0; i < t->rows; i++) {
    float *c = t->c + i * t->ldc;
    for (int j = 0; j < t->cols; j++)
      c[j] = acc[i][j] + (t->bias ? t->bias[j] : 0);
    ts__act_f32(t->act, c, t->cols);
  }
}

static bool usable(const ts_cpu_features *f)
{
  return true;
}

const ts_tile_kernel ts__tile_c = { "c", ROWS_MAX, COLS_MAX, run, usable };
