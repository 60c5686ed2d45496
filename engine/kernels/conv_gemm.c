/* kernels/conv_gemm.c — convolution as an implicit GEMM on our tile
 * kernels: output pixels are the rows, filter taps the segments of the
 * reduction (each tap's input channels one contiguous run of the input,
 * a zero row over the padding), output channels the columns.  No im2col
 * copy: the tiles read the input through a pointer per pixel and tap, and
 * the filter in place as each tap's [C, O] matrix. */
#include "kernels.h"

#include <glib.h>
#include <string.h>

/* Output pixels per piece of work shared between threads, in tiles. */
#define TILES_PER_PART 8

/* Inputs of fewer channels than this run a filter row as one segment. */
#define MERGE_BELOW_C 64

typedef struct conv_job {
  const ts_conv *cv;
  const ts_tile_kernel *kern;
  const float *zeros; /* seg_k zeros: a segment's row over the padding */
  int64_t rows;       /* output pixels */
  bool merged;        /* a segment per filter row, not per tap */
  int64_t n_seg, seg_k;
} conv_job;

/* An output pixel: image, row, column. */
typedef struct pixel {
  int64_t n, oy, ox;
} pixel;

static void next_pixel(const ts_conv *cv, pixel *p)
{
  if (++p->ox < cv->ow)
    return;
  p->ox = 0;
  if (++p->oy < cv->oh)
    return;
  p->oy = 0;
  p->n++;
}

/* The segments of output pixel px at tile row i.  Per tap, each a pixel's
 * c channels in place.  Merged (few channels, where a segment per tap is
 * mostly loop overhead), each the kw taps of a filter row: a window row,
 * kw * c values in place in NHWC; one hanging over the left or right
 * padding is copied, zeros and all, into scratch. */
static void pixel_segments(const conv_job *job, pixel px, int i, const float **rows, float *scratch)
{
  const ts_conv *cv = job->cv;
  const float *x = cv->x;
  int64_t ox = px.ox, oy = px.oy, n = px.n;
  int64_t y0 = oy * cv->sh - cv->top, x0 = ox * cv->sw - cv->left;
  for (int64_t ky = 0; ky < cv->kh; ky++) {
    int64_t iy = y0 + ky;
    bool row_inside = iy >= 0 && iy < cv->h;
    const float *line = x + (n * cv->h + iy) * cv->w * cv->c;
    if (!job->merged) {
      for (int64_t kx = 0; kx < cv->kw; kx++) {
        int64_t ix = x0 + kx;
        bool inside = row_inside && ix >= 0 && ix < cv->w;
        rows[(ky * cv->kw + kx) * TS_TILE_MAX_ROWS + i] = inside ? line + ix * cv->c : job->zeros;
      }
      continue;
    }
    const float **slot = &rows[ky * TS_TILE_MAX_ROWS + i];
    if (!row_inside) {
      *slot = job->zeros;
    } else if (x0 >= 0 && x0 + cv->kw <= cv->w) {
      *slot = line + x0 * cv->c;
    } else {
      float *s = scratch + (ky * TS_TILE_MAX_ROWS + i) * job->seg_k;
      for (int64_t kx = 0; kx < cv->kw; kx++) {
        int64_t ix = x0 + kx;
        if (ix >= 0 && ix < cv->w)
          memcpy(s + kx * cv->c, line + ix * cv->c, sizeof(float) * (size_t)cv->c);
        else
          memset(s + kx * cv->c, 0, sizeof(float) * (size_t)cv->c);
      }
      *slot = s;
    }
  }
}

/* The segments of a tile's n pixels from px when they lie on one output
 * row: those whose windows are inside the input's width a step of sw
 * pixels apart in each segment (the per-pixel arithmetic cost more than
 * the products for a few channels), the others by pixel_segments.  false:
 * the pixels span rows. */
static bool row_segments(const conv_job *job, pixel px, int n, const float **rows, float *scratch)
{
  const ts_conv *cv = job->cv;
  if (px.ox + n > cv->ow)
    return false;
  int ia = 0, ib = n; /* the pixels whose windows are inside, [ia, ib) */
  while (ia < n && (px.ox + ia) * cv->sw - cv->left < 0)
    ia++;
  while (ib > ia && (px.ox + ib - 1) * cv->sw - cv->left + cv->kw > cv->w)
    ib--;
  int64_t y0 = px.oy * cv->sh - cv->top, step = cv->sw * cv->c;
  int64_t taps = job->merged ? 1 : cv->kw; /* segments per filter row */
  for (int64_t ky = 0; ky < cv->kh && ia < ib; ky++) {
    int64_t iy = y0 + ky;
    bool inside = iy >= 0 && iy < cv->h;
    const float *at = inside ? (const float *)cv->x +
                                 ((px.n * cv->h + iy) * cv->w + (px.ox + ia) * cv->sw - cv->left) * cv->c
                             : NULL;
    for (int64_t kx = 0; kx < taps; kx++) {
      const float **seg = rows + (ky * taps + kx) * TS_TILE_MAX_ROWS;
      for (int i = ia; i < ib; i++)
        seg[i] = inside ? at + kx * cv->c + (i - ia) * step : job->zeros;
    }
  }
  for (int i = 0; i < n; i++)
    if (i < ia || i >= ib)
      pixel_segments(job, (pixel){ px.n, px.oy, px.ox + i }, i, rows, scratch);
  return true;
}

static void conv_part(void *ctx, int64_t part)
{
  const conv_job *job = ctx;
  const ts_conv *cv = job->cv;
  const ts_tile_kernel *kern = job->kern;
  int64_t span = (int64_t)kern->rows * TILES_PER_PART;
  int64_t r0 = part * span, r1 = MIN(job->rows, r0 + span);
  const float *bias = cv->bias;
  float *y = cv->y;
  const float **rows = g_new(const float *, (size_t)(job->n_seg * TS_TILE_MAX_ROWS));
  float *scratch = job->merged ? g_new(float, (size_t)(job->n_seg * TS_TILE_MAX_ROWS * job->seg_k)) : NULL;
  ts_tile t = { .n_seg = (int)job->n_seg, .k = job->seg_k, .a = rows, .a_step = 1, .ldb = cv->o,
                .b_seg = job->seg_k * cv->o, .ldc = cv->o, .act = cv->act };
  /* the pixel of each row by counting (a division per row cost as much as
   * the tile's products for a few input channels) */
  pixel px = { r0 / cv->ow / cv->oh, r0 / cv->ow % cv->oh, r0 % cv->ow };
  for (int64_t i0 = r0; i0 < r1; i0 += kern->rows) {
    t.rows = (int)MIN(kern->rows, r1 - i0);
    if (row_segments(job, px, t.rows, rows, scratch)) {
      px.ox += t.rows;
      if (px.ox == cv->ow) {
        px.ox--;
        next_pixel(cv, &px);
      }
    } else {
      for (int i = 0; i < t.rows; i++, next_pixel(cv, &px))
        pixel_segments(job, px, i, rows, scratch);
    }
    for (int64_t j0 = 0; j0 < cv->o; j0 += kern->cols) {
      t.cols = (int)MIN(kern->cols, cv->o - j0);
      t.b = (const float *)cv->f + j0;
      t.bias = bias ? bias + j0 : NULL;
      t.c = y + i0 * cv->o + j0;
      kern->run(&t);
    }
  }
  g_free(scratch);
  g_free(rows);
}

void ts__conv_f32_with(const ts_tile_kernel *kern, const ts_conv *cv)
{
  bool merged = cv->kw > 1 && cv->c < MERGE_BELOW_C;
  int64_t seg_k = merged ? cv->kw * cv->c : cv->c;
  float *zeros = g_new0(float, (size_t)MAX(seg_k, 1));
  conv_job job = { cv, kern, zeros, cv->n * cv->oh * cv->ow, merged, merged ? cv->kh : cv->kh * cv->kw, seg_k };
  int64_t span = (int64_t)kern->rows * TILES_PER_PART;
  ts_parallel_for((job.rows + span - 1) / span, conv_part, &job);
  g_free(zeros);
}
