/* kernels/conv_gemm.c — convolution as an implicit GEMM on our tile
 * kernels: output pixels are the rows, filter taps the segments of the
 * reduction (each tap's input channels one contiguous run of the input,
 * a zero row over the padding), output channels the columns.  No im2col
 * copy: the tiles read the input through a pointer per pixel and tap, and
 * the filter in place as each tap's [C, O] matrix. */
#include "kernels.h"

#include <glib.h>

/* Output pixels per piece of work shared between threads, in tiles. */
#define TILES_PER_PART 8

typedef struct conv_job {
  const ts_conv *cv;
  const ts_tile_kernel *kern;
  const float *zeros; /* c zeros: a tap's row over the padding */
  int64_t rows;       /* output pixels */
} conv_job;

static void conv_part(void *ctx, int64_t part)
{
  const conv_job *job = ctx;
  const ts_conv *cv = job->cv;
  const ts_tile_kernel *kern = job->kern;
  int64_t taps = cv->kh * cv->kw, span = (int64_t)kern->rows * TILES_PER_PART;
  int64_t r0 = part * span, r1 = MIN(job->rows, r0 + span);
  const float *x = cv->x, *bias = cv->bias;
  float *y = cv->y;
  const float **rows = g_new(const float *, (size_t)(taps * TS_TILE_MAX_ROWS));
  ts_tile t = { .n_seg = (int)taps, .k = cv->c, .a = rows, .a_step = 1, .ldb = cv->o, .b_seg = cv->c * cv->o,
                .ldc = cv->o, .act = cv->act };
  for (int64_t i0 = r0; i0 < r1; i0 += kern->rows) {
    t.rows = (int)MIN(kern->rows, r1 - i0);
    for (int i = 0; i < t.rows; i++) {
      int64_t r = i0 + i, ox = r % cv->ow, oy = r / cv->ow % cv->oh, n = r / cv->ow / cv->oh;
      int64_t y0 = oy * cv->sh - cv->top, x0 = ox * cv->sw - cv->left;
      for (int64_t ky = 0; ky < cv->kh; ky++)
        for (int64_t kx = 0; kx < cv->kw; kx++) {
          int64_t iy = y0 + ky, ix = x0 + kx;
          bool inside = iy >= 0 && iy < cv->h && ix >= 0 && ix < cv->w;
          rows[(ky * cv->kw + kx) * TS_TILE_MAX_ROWS + i] =
            inside ? x + ((n * cv->h + iy) * cv->w + ix) * cv->c : job->zeros;
        }
    }
    for (int64_t j0 = 0; j0 < cv->o; j0 += kern->cols) {
      t.cols = (int)MIN(kern->cols, cv->o - j0);
      t.b = (const float *)cv->f + j0;
      t.bias = bias ? bias + j0 : NULL;
      t.c = y + i0 * cv->o + j0;
      kern->run(&t);
    }
  }
  g_free(rows);
}

void ts__conv_f32_with(const ts_tile_kernel *kern, const ts_conv *cv)
{
  float *zeros = g_new0(float, (size_t)MAX(cv->c, 1));
  conv_job job = { cv, kern, zeros, cv->n * cv->oh * cv->ow };
  int64_t span = (int64_t)kern->rows * TILES_PER_PART;
  ts_parallel_for((job.rows + span - 1) / span, conv_part, &job);
  g_free(zeros);
}
