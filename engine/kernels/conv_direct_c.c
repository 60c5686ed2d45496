/* kernels/conv_direct_c.c — the portable strip of a direct convolution
 * (conv_direct.c), for CPUs without AVX2+FMA: up to 8 output pixels x 8
 * channels, or 4 x 16, in plain C the compiler vectorises for the
 * baseline ISA. */
#include "kernels.h"

#define W 8
#define ACCS 8
#define COLS_MAX (2 * W)

static void run(const ts_conv_strip *s)
{
  float acc[ACCS][COLS_MAX] = { { 0 } };
  for (int64_t l = 0; l < s->lines; l++) {
    const float *x = s->x + l * s->x_line, *f = s->f + l * s->k * s->ldf;
    for (int64_t p = 0; p < s->k; p++, x++, f += s->ldf)
      for (int i = 0; i < s->rows; i++)
        for (int j = 0; j < s->cols; j++)
          acc[i][j] += x[i * s->x_step] * f[j];
  }
  for (int i = 0; i < s->rows; i++) {
    float *y = s->y + i * s->ldy;
    for (int j = 0; j < s->cols; j++)
      y[j] = acc[i][j] + (s->bias ? s->bias[j] : 0);
    ts__act_f32(s->act, y, s->cols);
  }
}

static bool usable(const ts_cpu_features *f)
{
  return true;
}

const ts_conv_strip_kernel ts__strip_c = { "c", "direct c", W, ACCS, run, usable };
