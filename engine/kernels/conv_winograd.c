/* kernels/conv_winograd.c — 3x3 stride-1 f32 convolution by Winograd's
 * F(2x2,3x3).  Each 2x2 block of outputs (a tile) is A^T [U ⊙ V] A, with
 * U = G g G^T the 4x4 transform of a 3x3 filter slice and V = B^T d B that
 * of the tile's 4x4 input patch: 16 multiplies per channel pair where the
 * direct method takes 36.  Summed over the input channels, the 16
 * elementwise products are 16 GEMMs [tiles x C] x [C x O]: OpenBLAS's
 * (single-threaded inside the pool's items), or our tile kernels where it
 * is not loaded.  Tiles go in blocks small enough that a block's V and
 * products stay in L2 (input transform, 16 GEMMs, output transform + bias
 * + activation), and blocks go to the engine's pool.  A tile's arithmetic
 * does not depend on its block or thread, so neither do the bits.
 *
 * The transforms run on 16-float GCC vectors over the channels (contiguous
 * in NHWC and HWIO), compiled for each tile kernel's ISA. */
#include "kernels.h"

#include <glib.h>
#include <string.h>

#define UNITS 16                           /* the 4x4 transformed positions */
#define BLOCK_BYTES ((int64_t)512 << 10)    /* a block's V + products: half of L2 */
#define BLOCK_MAX 32                       /* tiles in a block, at most */
#define FILTER_MAX_BYTES ((int64_t)256 << 20) /* U, transformed per call */

typedef float vf __attribute__((vector_size(64)));

/* The three transforms over one group of channels, T float or vf (the tail
 * and the body compute alike).  Loads and stores by memcpy: unaligned. */

/* V = B^T d B, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]; src: the
 * patch's 16 cells row by row, dst + i * stride: unit i. */
#define INPUT_STEP(T)                                                            \
  do {                                                                           \
    T d[UNITS], t[UNITS], v[UNITS];                                              \
    _Pragma("GCC unroll 16") for (int i = 0; i < UNITS; i++)                     \
      memcpy(&d[i], src[i] + ch, sizeof d[i]);                                   \
    _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++) {                        \
      t[q] = d[q] - d[8 + q];                                                    \
      t[4 + q] = d[4 + q] + d[8 + q];                                            \
      t[8 + q] = d[8 + q] - d[4 + q];                                            \
      t[12 + q] = d[4 + q] - d[12 + q];                                          \
    }                                                                            \
    _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) {                        \
      v[4 * r] = t[4 * r] - t[4 * r + 2];                                        \
      v[4 * r + 1] = t[4 * r + 1] + t[4 * r + 2];                                \
      v[4 * r + 2] = t[4 * r + 2] - t[4 * r + 1];                                \
      v[4 * r + 3] = t[4 * r + 1] - t[4 * r + 3];                                \
    }                                                                            \
    _Pragma("GCC unroll 16") for (int i = 0; i < UNITS; i++)                     \
      memcpy(dst + i * stride + ch, &v[i], sizeof v[i]);                         \
  } while (0)

/* Y = A^T m A + bias, A^T = [1 1 1 0; 0 1 -1 -1]; m + i * stride: unit i's
 * products, dst[k]: output pixel k of the 2x2 (NULL past the edge). */
#define OUTPUT_STEP(T)                                                           \
  do {                                                                           \
    T m[UNITS], s[8], b, y[4];                                                   \
    _Pragma("GCC unroll 16") for (int i = 0; i < UNITS; i++)                     \
      memcpy(&m[i], prod + i * stride + ch, sizeof m[i]);                        \
    _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++) {                        \
      s[q] = m[q] + m[4 + q] + m[8 + q];                                         \
      s[4 + q] = m[4 + q] - m[8 + q] - m[12 + q];                                \
    }                                                                            \
    memcpy(&b, bias + ch, sizeof b);                                             \
    _Pragma("GCC unroll 2") for (int r = 0; r < 2; r++) {                        \
      y[2 * r] = s[4 * r] + s[4 * r + 1] + s[4 * r + 2] + b;                     \
      y[2 * r + 1] = s[4 * r + 1] - s[4 * r + 2] - s[4 * r + 3] + b;             \
    }                                                                            \
    _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++) if (dst[k])              \
      memcpy(dst[k] + ch, &y[k], sizeof y[k]);                                   \
  } while (0)

/* U = G g G^T, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]; g + k * tap:
 * filter tap k (row by row) at this input channel, u + i * stride: unit i. */
#define FILTER_STEP(T)                                                           \
  do {                                                                           \
    T g[9], a[12], u[UNITS];                                                     \
    _Pragma("GCC unroll 9") for (int k = 0; k < 9; k++)                          \
      memcpy(&g[k], f + k * tap + ch, sizeof g[k]);                              \
    _Pragma("GCC unroll 3") for (int q = 0; q < 3; q++) {                        \
      a[q] = g[q];                                                               \
      a[3 + q] = (g[q] + g[3 + q] + g[6 + q]) * 0.5f;                            \
      a[6 + q] = (g[q] - g[3 + q] + g[6 + q]) * 0.5f;                            \
      a[9 + q] = g[6 + q];                                                       \
    }                                                                            \
    _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++) {                        \
      u[4 * r] = a[3 * r];                                                       \
      u[4 * r + 1] = (a[3 * r] + a[3 * r + 1] + a[3 * r + 2]) * 0.5f;            \
      u[4 * r + 2] = (a[3 * r] - a[3 * r + 1] + a[3 * r + 2]) * 0.5f;            \
      u[4 * r + 3] = a[3 * r + 2];                                               \
    }                                                                            \
    _Pragma("GCC unroll 16") for (int i = 0; i < UNITS; i++)                     \
      memcpy(u_out + i * stride + ch, &u[i], sizeof u[i]);                       \
  } while (0)

/* Each transform over n channels: vectors of 16, then one at a time. */
#define OVER_CHANNELS(STEP, n)            \
  int64_t ch = 0;                         \
  for (; ch + 16 <= (n); ch += 16)        \
    STEP(vf);                             \
  for (; ch < (n); ch++)                  \
    STEP(float)

/* The transforms compiled for one ISA, named as the tile kernels name it. */
typedef struct wino_isa {
  const char *name;
  void (*input)(const float *const *src, float *dst, int64_t stride, int64_t c);
  void (*output)(const float *prod, int64_t stride, const float *bias, float *const *dst, int64_t o);
  void (*filter)(const float *f, int64_t tap, float *u_out, int64_t stride, int64_t o);
} wino_isa;

#define TRANSFORMS(sfx, ATTR)                                                                    \
  static ATTR void input_##sfx(const float *const *src, float *dst, int64_t stride, int64_t c)   \
  {                                                                                              \
    OVER_CHANNELS(INPUT_STEP, c);                                                                \
  }                                                                                              \
  static ATTR void output_##sfx(const float *prod, int64_t stride, const float *bias,            \
                                float *const *dst, int64_t o)                                    \
  {                                                                                              \
    OVER_CHANNELS(OUTPUT_STEP, o);                                                               \
  }                                                                                              \
  static ATTR void filter_##sfx(const float *f, int64_t tap, float *u_out, int64_t stride,       \
                                int64_t o)                                                       \
  {                                                                                              \
    OVER_CHANNELS(FILTER_STEP, o);                                                               \
  }

TRANSFORMS(avx512, __attribute__((target("avx512f"))))
TRANSFORMS(avx2, __attribute__((target("avx2"))))
TRANSFORMS(c, )

static const wino_isa isas[] = {
  { "avx512", input_avx512, output_avx512, filter_avx512 },
  { "avx2", input_avx2, output_avx2, filter_avx2 },
  { "c", input_c, output_c, filter_c },
};

/* The transforms for the ISA of kern (any of its tiles), which cpuid has
 * vouched for; the portable ones for an ISA they do not know. */
static const wino_isa *isa_of(const ts_tile_kernel *kern)
{
  for (size_t i = 0; i < G_N_ELEMENTS(isas); i++)
    if (strcmp(isas[i].name, kern->name) == 0)
      return &isas[i];
  return &isas[G_N_ELEMENTS(isas) - 1];
}

bool ts__conv_winograd_fits(const ts_conv *cv)
{
  return cv->kh == 3 && cv->kw == 3 && cv->sh == 1 && cv->sw == 1 &&
         cv->c <= FILTER_MAX_BYTES / UNITS / (int64_t)sizeof(float) / MAX(cv->o, 1);
}

typedef struct wino_job {
  const ts_conv *cv;
  const ts_tile_kernel *kern; /* for the GEMMs where OpenBLAS is not loaded */
  bool blas;
  const wino_isa *isa;
  float *u;            /* [16][C][O] */
  const float *zeros;  /* MAX(C, O) zeros: the padding's cells, no bias */
  int64_t th, tw;      /* tiles down and across an image */
  int64_t tiles, block;
} wino_job;

/* U for input channel c: unit i at u[(i * C + c) * O]. */
static void filter_part(void *ctx, int64_t c)
{
  const wino_job *job = ctx;
  const ts_conv *cv = job->cv;
  job->isa->filter((const float *)cv->f + c * cv->o, cv->c * cv->o, job->u + c * cv->o,
                   cv->c * cv->o, cv->o);
}

/* out[rows, O] = a[rows, C] b[C, O], all rows contiguous.  On OpenBLAS the
 * seed's conv (products of 32 x 100 x 100) runs some 20% faster than on
 * our 8x32 tiles, whose column strips are masked past O; ours take no
 * channels (K = 0) too.
 * Our tiles go columns outer, so each column strip of b stays in L1. */
static void gemm(const wino_job *job, int64_t rows, int64_t c, int64_t o, const float *a,
                 const float *b, float *out)
{
  if (job->blas && c > 0) {
    ts__blas_sgemm(false, false, (int)rows, (int)o, (int)c, a, (int)c, b, (int)o, 0.0f, out, (int)o);
    return;
  }
  const ts_tile_kernel *kern = job->kern;
  const float *row[TS_TILE_MAX_ROWS];
  ts_tile t = { .n_seg = 1, .k = c, .a = row, .a_step = 1, .ldb = o, .ldc = o, .act = TS_ACT_NONE };
  for (int64_t j0 = 0; j0 < o; j0 += kern->cols) {
    t.cols = (int)MIN(kern->cols, o - j0);
    t.b = b + j0;
    for (int64_t i0 = 0; i0 < rows; i0 += kern->rows) {
      t.rows = (int)MIN(kern->rows, rows - i0);
      for (int i = 0; i < t.rows; i++)
        row[i] = a + (i0 + i) * c;
      t.c = out + i0 * o + j0;
      kern->run(&t);
    }
  }
}

/* One block of tiles: transform its inputs, multiply, transform back. */
static void block_part(void *ctx, int64_t blk)
{
  const wino_job *job = ctx;
  const ts_conv *cv = job->cv;
  int64_t c = cv->c, o = cv->o, t0 = blk * job->block, nb = MIN(job->tiles - t0, job->block);
  int64_t v_unit = job->block * c, m_unit = job->block * o; /* strides between units */
  float *v = g_new(float, (size_t)MAX(UNITS * v_unit, 1)), *m = g_new(float, (size_t)MAX(UNITS * m_unit, 1));
  const float *x = cv->x, *bias = cv->bias ? cv->bias : job->zeros;
  float *y = cv->y;

  for (int64_t b = 0; b < nb; b++) {
    int64_t t = t0 + b, tx = t % job->tw, ty = t / job->tw % job->th, n = t / job->tw / job->th;
    const float *src[UNITS];
    for (int r = 0; r < 4; r++)
      for (int q = 0; q < 4; q++) {
        int64_t iy = 2 * ty - cv->top + r, ix = 2 * tx - cv->left + q;
        bool inside = iy >= 0 && iy < cv->h && ix >= 0 && ix < cv->w;
        src[4 * r + q] = inside ? x + ((n * cv->h + iy) * cv->w + ix) * c : job->zeros;
      }
    job->isa->input(src, v + b * c, v_unit, c);
  }
  for (int i = 0; i < UNITS; i++)
    gemm(job, nb, c, o, v + i * v_unit, job->u + i * c * o, m + i * m_unit);
  for (int64_t b = 0; b < nb; b++) {
    int64_t t = t0 + b, tx = t % job->tw, ty = t / job->tw % job->th, n = t / job->tw / job->th;
    float *dst[4];
    for (int r = 0; r < 2; r++)
      for (int q = 0; q < 2; q++) {
        int64_t oy = 2 * ty + r, ox = 2 * tx + q;
        dst[2 * r + q] = oy < cv->oh && ox < cv->ow ? y + ((n * cv->oh + oy) * cv->ow + ox) * o : NULL;
      }
    job->isa->output(m + b * o, m_unit, bias, dst, o);
    for (int k = 0; k < 4; k++)
      if (dst[k])
        ts__act_f32(cv->act, dst[k], o);
  }
  g_free(v);
  g_free(m);
}

void ts__conv_f32_winograd(const ts_tile_kernel *kern, const ts_conv *cv)
{
  g_assert(ts__conv_winograd_fits(cv));
  wino_job job = { .cv = cv, .kern = kern ? kern : ts__tile_best(), .blas = !kern && ts__blas_available(),
                   .th = (cv->oh + 1) / 2, .tw = (cv->ow + 1) / 2 };
  job.isa = isa_of(job.kern);
  job.tiles = cv->n * job.th * job.tw;
  if (job.tiles == 0 || cv->o == 0)
    return;
  /* as many tiles as keep V and the products under BLOCK_BYTES, in whole row tiles */
  int64_t per_tile = UNITS * (cv->c + cv->o) * (int64_t)sizeof(float);
  int64_t rows = job.kern->rows;
  job.block = MAX(rows, MIN(BLOCK_MAX, BLOCK_BYTES / per_tile) / rows * rows);
  job.u = g_new(float, (size_t)MAX(UNITS * cv->c * cv->o, 1));
  float *zeros = g_new0(float, (size_t)MAX(MAX(cv->c, cv->o), 1));
  job.zeros = zeros;
  ts_parallel_for(cv->c, filter_part, &job);
  ts_parallel_for((job.tiles + job.block - 1) / job.block, block_part, &job);
  g_free(zeros);
  g_free(job.u);
}
