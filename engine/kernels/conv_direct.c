/* kernels/conv_direct.c — a direct convolution for few output channels:
 * strips of output pixels along an output row, every output channel of a
 * pixel in the strip kernel's registers (conv_direct_*.c), the filter read
 * in place as HWIO.  With 16 output channels a GEMM tile of 32 or 64
 * columns runs half empty; a strip of 24 pixels x 16 channels fills the
 * registers.  The input is read through a zero-padded copy (made per call
 * where the convolution pads), so a strip's windows are kw * c values in
 * place per line, with no bounds to check. */
#include "kernels.h"

#include <glib.h>
#include <string.h>

/* Output channels at most: more fill the GEMM tiles. */
#define MAX_O 64
/* The padded copy stays under this. */
#define MAX_COPY_BYTES ((int64_t)64 << 20)
/* Multiply-adds per piece of work shared between threads, at least. */
#define MACS_PER_PART 65536

static const ts_conv_strip_kernel *const strip_kernels[] = { &ts__strip_avx512, &ts__strip_avx2, &ts__strip_c };

const ts_conv_strip_kernel *ts__strip_best(void)
{
  for (size_t i = 0; i < G_N_ELEMENTS(strip_kernels); i++)
    if (strip_kernels[i]->usable(ts__cpu()))
      return strip_kernels[i];
  return &ts__strip_c;
}

void ts__strip_act_rows(const ts_conv_strip *s)
{
  if (s->act == TS_ACT_SIGMOID || s->act == TS_ACT_TANH)
    for (int i = 0; i < s->rows; i++)
      ts__act_f32(s->act, s->y + i * s->ldy, s->cols);
}

/* The input rows and columns the windows span, padding included. */
static int64_t span_h(const ts_conv *cv)
{
  return (cv->oh - 1) * cv->sh + cv->kh;
}

static int64_t span_w(const ts_conv *cv)
{
  return (cv->ow - 1) * cv->sw + cv->kw;
}

static bool pads(const ts_conv *cv)
{
  return cv->top > 0 || cv->left > 0 || span_h(cv) > cv->h || span_w(cv) > cv->w;
}

bool ts__conv_direct_fits(const ts_conv *cv)
{
  if (cv->o < 1 || cv->o > MAX_O || cv->oh < 1 || cv->ow < 1)
    return false;
  return !pads(cv) || (double)cv->n * (double)span_h(cv) * (double)span_w(cv) * (double)cv->c * sizeof(float) <=
                        (double)MAX_COPY_BYTES;
}

typedef struct direct_job {
  const ts_conv *cv;
  const ts_conv_strip_kernel *kern;
  const float *x;          /* the input, or its padded copy */
  int64_t hx, wx;          /* its rows and columns */
  int64_t rows_per_part;   /* output rows (over n and oh) */
} direct_job;

static void direct_part(void *ctx, int64_t part)
{
  const direct_job *job = ctx;
  const ts_conv *cv = job->cv;
  const ts_conv_strip_kernel *kern = job->kern;
  int nv = cv->o > kern->vec ? 2 : 1, most = kern->accs / nv;
  int64_t strips = (cv->ow + most - 1) / most, per = (cv->ow + strips - 1) / strips;
  int64_t r0 = part * job->rows_per_part, r1 = MIN(r0 + job->rows_per_part, cv->n * cv->oh);
  ts_conv_strip s = { .lines = cv->kh, .k = cv->kw * cv->c, .x_step = cv->sw * cv->c, .x_line = job->wx * cv->c,
                      .ldf = cv->o, .ldy = cv->o, .act = cv->act };
  for (int64_t r = r0; r < r1; r++) {
    int64_t n = r / cv->oh, oy = r % cv->oh;
    const float *line = job->x + ((n * job->hx + oy * cv->sh) * job->wx) * cv->c;
    float *y = (float *)cv->y + r * cv->ow * cv->o;
    for (int64_t j0 = 0; j0 < cv->o; j0 += nv * kern->vec) {
      s.cols = (int)MIN(nv * kern->vec, cv->o - j0);
      s.f = (const float *)cv->f + j0;
      s.bias = cv->bias ? (const float *)cv->bias + j0 : NULL;
      for (int64_t ox = 0; ox < cv->ow; ox += per) {
        s.rows = (int)MIN(per, cv->ow - ox);
        s.x = line + ox * s.x_step;
        s.y = y + ox * cv->o + j0;
        kern->run(&s);
      }
    }
  }
}

void ts__conv_f32_direct(const ts_conv_strip_kernel *kern, const ts_conv *cv)
{
  if (cv->n * cv->oh * cv->ow * cv->o == 0)
    return;
  direct_job job = { cv, kern, cv->x, cv->h, cv->w, 1 }; /* windows start at (0, 0) */
  float *copy = NULL;
  if (pads(cv)) {
    /* rows and columns from (-top, -left) for as far as the windows reach */
    int64_t hp = span_h(cv), wp = span_w(cv), c = cv->c;
    copy = g_new(float, (size_t)MAX(cv->n * hp * wp * c, 1));
    /* columns [x0, x1) of the copy come from x, the rest are zeros */
    int64_t x0 = MIN(cv->left, wp), x1 = MAX(MIN(wp, cv->w + cv->left), x0);
    for (int64_t n = 0; n < cv->n; n++)
      for (int64_t py = 0; py < hp; py++) {
        float *row = copy + (n * hp + py) * wp * c;
        int64_t iy = py - cv->top;
        if (iy < 0 || iy >= cv->h) {
          memset(row, 0, sizeof(float) * (size_t)(wp * c));
          continue;
        }
        memset(row, 0, sizeof(float) * (size_t)(x0 * c));
        memcpy(row + x0 * c, (const float *)cv->x + ((n * cv->h + iy) * cv->w + x0 - cv->left) * c,
               sizeof(float) * (size_t)((x1 - x0) * c));
        memset(row + x1 * c, 0, sizeof(float) * (size_t)((wp - x1) * c));
      }
    job = (direct_job){ cv, kern, copy, hp, wp, 1 };
  }
  int64_t macs_per_row = MAX(cv->ow * cv->o * cv->kh * cv->kw * cv->c, 1);
  job.rows_per_part = MAX(MACS_PER_PART / macs_per_row, 1);
  int64_t rows = cv->n * cv->oh;
  ts_parallel_for((rows + job.rows_per_part - 1) / job.rows_per_part, direct_part, &job);
  g_free(copy);
}
