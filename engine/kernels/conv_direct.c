/* kernels/conv_direct.c — a direct convolution for few output channels:
 * strips of output pixels along an output row, every output channel of a
 * pixel in the strip kernel's registers (conv_direct_*.c), the filter read
 * in place as HWIO.  With 16 output channels a GEMM tile of 32 or 64
 * columns runs half empty; a strip of 24 pixels x 16 channels fills the
 * registers.  Where the convolution pads, the input is read through a
 * zero-padded copy of the rows a part of the work reads (made by the part),
 * so a strip's windows are kw * c values in place per line, with no bounds
 * to check. */
#include "kernels.h"

#include <glib.h>
#include <string.h>

/* Output channels at most: more fill the GEMM tiles. */
#define MAX_O 64
/* The padded copies, together at most the whole input's, stay under this. */
#define MAX_COPY_BYTES ((int64_t)64 << 20)
/* Multiply-adds per piece of work shared between threads, at least. */
#define MACS_PER_PART 65536
/* Pieces of work per thread, at most: enough to even out a thread that
 * falls behind on a shared machine. */
#define PARTS_PER_THREAD 4

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
  bool pad;              /* windows reach past the input: read a padded copy */
  int64_t wp;            /* the copy's columns */
  int64_t rows_per_part; /* output rows, flat over n and oh */
} direct_job;

/* Rows [py, py + count) of image n as the windows see them (row 0 at -top,
 * column 0 at -left, wp columns), zeros outside the input, into dst. */
static void pad_rows(const ts_conv *cv, int64_t n, int64_t py, int64_t count, int64_t wp, float *dst)
{
  int64_t c = cv->c;
  /* columns [x0, x1) of the copy come from x, the rest are zeros */
  int64_t x0 = MIN(cv->left, wp), x1 = MAX(MIN(wp, cv->w + cv->left), x0);
  for (int64_t i = 0; i < count; i++) {
    float *row = dst + i * wp * c;
    int64_t iy = py + i - cv->top;
    if (iy < 0 || iy >= cv->h) {
      memset(row, 0, sizeof(float) * (size_t)(wp * c));
      continue;
    }
    memset(row, 0, sizeof(float) * (size_t)(x0 * c));
    memcpy(row + x0 * c, (const float *)cv->x + ((n * cv->h + iy) * cv->w + x0 - cv->left) * c,
           sizeof(float) * (size_t)((x1 - x0) * c));
    memset(row + x1 * c, 0, sizeof(float) * (size_t)((wp - x1) * c));
  }
}

/* Output rows [oy0, oy1) of image n, their windows' first row at x, in
 * rows of wx columns. */
static void direct_rows(const direct_job *job, int64_t n, int64_t oy0, int64_t oy1, const float *x, int64_t wx)
{
  const ts_conv *cv = job->cv;
  const ts_conv_strip_kernel *kern = job->kern;
  int nv = cv->o > kern->vec ? 2 : 1, most = kern->accs / nv;
  int64_t strips = (cv->ow + most - 1) / most, per = (cv->ow + strips - 1) / strips;
  ts_conv_strip s = { .lines = cv->kh, .k = cv->kw * cv->c, .x_step = cv->sw * cv->c, .x_line = wx * cv->c,
                      .ldf = cv->o, .ldy = cv->o, .act = cv->act };
  for (int64_t oy = oy0; oy < oy1; oy++) {
    const float *line = x + (oy - oy0) * cv->sh * wx * cv->c;
    float *y = (float *)cv->y + (n * cv->oh + oy) * cv->ow * cv->o;
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

/* Output rows, flat over n and oh, image by image; where the convolution
 * pads, each image's share first copies the input rows its windows read
 * (on the thread that reads them, while they are in its cache). */
static void direct_part(void *ctx, int64_t part)
{
  const direct_job *job = ctx;
  const ts_conv *cv = job->cv;
  int64_t r0 = part * job->rows_per_part, r1 = MIN(r0 + job->rows_per_part, cv->n * cv->oh);
  float *copy = NULL;
  if (job->pad) /* for the most rows of one image a part runs */
    copy = g_new(float, (size_t)(((MIN(job->rows_per_part, cv->oh) - 1) * cv->sh + cv->kh) * job->wp * cv->c));
  for (int64_t r = r0; r < r1;) {
    int64_t n = r / cv->oh, oy0 = r % cv->oh, oy1 = MIN(cv->oh, oy0 + r1 - r);
    if (job->pad) {
      pad_rows(cv, n, oy0 * cv->sh, (oy1 - oy0 - 1) * cv->sh + cv->kh, job->wp, copy);
      direct_rows(job, n, oy0, oy1, copy, job->wp);
    } else {
      direct_rows(job, n, oy0, oy1, (const float *)cv->x + (n * cv->h + oy0 * cv->sh) * cv->w * cv->c, cv->w);
    }
    r += oy1 - oy0;
  }
  g_free(copy);
}

/* Parts of at least MACS_PER_PART, at most PARTS_PER_THREAD per thread
 * (each claim of a part is an atomic the threads share). */
void ts__conv_f32_direct(const ts_conv_strip_kernel *kern, const ts_conv *cv)
{
  if (cv->n * cv->oh * cv->ow * cv->o == 0)
    return;
  int64_t rows = cv->n * cv->oh, macs_per_row = MAX(cv->ow * cv->o * cv->kh * cv->kw * cv->c, 1);
  int64_t want_parts = (int64_t)MAX(ts_get_threads(), 1) * PARTS_PER_THREAD;
  int64_t per = MAX(MAX(MACS_PER_PART / macs_per_row, (rows + want_parts - 1) / want_parts), 1);
  direct_job job = { cv, kern, pads(cv), span_w(cv), per };
  ts_parallel_for((rows + per - 1) / per, direct_part, &job);
}
