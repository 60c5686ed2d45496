/* kernels/conv_direct.c — a direct convolution for few output channels:
 * strips of output pixels along an output row, every output channel of a
 * pixel in the strip kernel's registers (conv_direct_*.c), the filter read
 * in place as HWIO.  With 16 output channels a GEMM tile of 32 or 64
 * columns runs half empty; a strip of 24 pixels x 16 channels fills the
 * registers.  Where the convolution pads, each piece of work reads a
 * zero-padded copy of the input rows it spans (made by its thread, in its
 * cache), so a strip's windows are kw * c values in place per line, with
 * no bounds to check. */
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

/* Output rows per piece of work shared between threads (all of one image). */
static int64_t rows_per_part(const ts_conv *cv)
{
  int64_t macs_per_row = MAX(cv->ow * cv->o * cv->kh * cv->kw * cv->c, 1);
  return MIN(MAX(MACS_PER_PART / macs_per_row, 1), cv->oh);
}

/* The padded input rows a part's windows span, at most. */
static int64_t part_lines(const ts_conv *cv)
{
  return (rows_per_part(cv) - 1) * cv->sh + cv->kh;
}

bool ts__conv_direct_fits(const ts_conv *cv)
{
  if (cv->o < 1 || cv->o > MAX_O || cv->oh < 1 || cv->ow < 1)
    return false;
  return !pads(cv) || (double)part_lines(cv) * (double)span_w(cv) * (double)cv->c * sizeof(float) <=
                        (double)MAX_COPY_BYTES;
}

typedef struct direct_job {
  const ts_conv *cv;
  const ts_conv_strip_kernel *kern;
  int64_t rows_per_part, parts_per_image;
  bool padded;
} direct_job;

/* The rows [oy0, oy1) of one image's output: from the input in place, or
 * where the convolution pads from a zero-padded copy of the input rows
 * they span (made here, so that it is in this thread's cache). */
static void direct_part(void *ctx, int64_t part)
{
  const direct_job *job = ctx;
  const ts_conv *cv = job->cv;
  const ts_conv_strip_kernel *kern = job->kern;
  int64_t n = part / job->parts_per_image, oy0 = part % job->parts_per_image * job->rows_per_part;
  int64_t oy1 = MIN(oy0 + job->rows_per_part, cv->oh), c = cv->c;
  const float *x = (const float *)cv->x + n * cv->h * cv->w * c; /* the image's first row */
  int64_t wx = cv->w, row0 = 0; /* x's width, and the window row of its first */
  float *copy = NULL;
  if (job->padded) {
    int64_t wp = span_w(cv), lines = (oy1 - oy0 - 1) * cv->sh + cv->kh;
    int64_t x0 = MIN(cv->left, wp), x1 = MAX(MIN(wp, cv->w + cv->left), x0); /* columns of the copy from x */
    copy = g_new0(float, (size_t)MAX(lines * wp * c, 1));
    for (int64_t l = 0; l < lines && x1 > x0; l++) {
      int64_t iy = oy0 * cv->sh + l - cv->top;
      if (iy >= 0 && iy < cv->h)
        memcpy(copy + (l * wp + x0) * c, x + (iy * cv->w + x0 - cv->left) * c, sizeof(float) * (size_t)((x1 - x0) * c));
    }
    x = copy;
    wx = wp;
    row0 = oy0 * cv->sh;
  }
  int nv = cv->o > kern->vec ? 2 : 1, most = kern->accs / nv;
  int64_t strips = (cv->ow + most - 1) / most, per = (cv->ow + strips - 1) / strips;
  ts_conv_strip s = { .lines = cv->kh, .k = cv->kw * c, .x_step = cv->sw * c, .x_line = wx * c, .ldf = cv->o,
                      .ldy = cv->o, .act = cv->act };
  for (int64_t oy = oy0; oy < oy1; oy++) {
    const float *line = x + (oy * cv->sh - row0) * wx * c;
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
  g_free(copy);
}

void ts__conv_f32_direct(const ts_conv_strip_kernel *kern, const ts_conv *cv)
{
  if (cv->n * cv->oh * cv->ow * cv->o == 0)
    return;
  int64_t rpp = rows_per_part(cv);
  direct_job job = { cv, kern, rpp, (cv->oh + rpp - 1) / rpp, pads(cv) };
  ts_parallel_for(cv->n * job.parts_per_image, direct_part, &job);
}
