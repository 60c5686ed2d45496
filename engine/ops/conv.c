/* ops/conv.c — Conv2D, _FusedConv2D and MaxPool over NHWC inputs with
 * TensorFlow's VALID and SAME padding.  A 1x1 stride-1 convolution is a
 * GEMM as is (kernels/gemm.c picks its kernel); any other runs either as
 * an implicit GEMM on our tile kernels (kernels/conv_gemm.c, f32), as
 * im2col plus one OpenBLAS gemm per chunk of output pixels, or for 3x3
 * stride-1 f32 by Winograd F(2x2,3x3) (kernels/conv_winograd.c), or
 * for few output channels f32 by strips of pixels (kernels/conv_direct.c),
 * whichever was faster when the shape was first met (kernels/tune.c).
 * float16 and bfloat16 run as that f32 convolution of widened copies.
 * _FusedConv2D, made by the fusion pass (exec/fuse.c), adds a bias and
 * applies an activation as the tiles are stored. */
#include "engine-private.h"
#include "kernels/kernels.h"

#ifdef TS_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/kernels.h"
#endif

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The im2col scratch stays under this; bigger problems run in row chunks. */
#define SCRATCH_BYTES ((int64_t)32 << 20)

enum { CONV_STRIDES, CONV_PADDING };
enum { POOL_KSIZE, POOL_STRIDES, POOL_PADDING };

static const ts_attr_def conv_attrs[] = {
  [CONV_STRIDES] = { "strides", TS_ATTR_INTS },
  [CONV_PADDING] = { "padding", TS_ATTR_INT },
};

static const ts_attr_def pool_attrs[] = {
  [POOL_KSIZE] = { "ksize", TS_ATTR_INTS },
  [POOL_STRIDES] = { "strides", TS_ATTR_INTS },
  [POOL_PADDING] = { "padding", TS_ATTR_INT },
};

/* A 2-D window sliding over an NHWC input; -1 for dims unknown while tracing. */
typedef struct window {
  int64_t n, h, w, c;  /* input */
  int64_t kh, kw;      /* window */
  int64_t sh, sw;      /* strides */
  int64_t oh, ow;      /* output */
  int64_t top, left;   /* padding before the first row and column */
} window;

/* One spatial dim as TensorFlow sizes it: SAME gives ceil(in / s) outputs
 * with the padding split evenly (the odd cell after), VALID (in - k) / s + 1. */
static void window_dim(int64_t in, int64_t k, int64_t s, int64_t padding, int64_t *out,
                       int64_t *before)
{
  *before = 0;
  if (in < 0 || (padding == TS_PADDING_VALID && k < 0)) {
    *out = -1;
  } else if (padding == TS_PADDING_VALID) {
    *out = (in - k) / s + 1;
  } else {
    *out = (in + s - 1) / s;
    int64_t total = (*out - 1) * s + k - in;
    if (k >= 0 && total > 0)
      *before = total / 2;
  }
}

static window window_init(ts_shape x, int64_t kh, int64_t kw, ts_ints strides, int64_t padding)
{
  window g = { .n = x.dim[0], .h = x.dim[1], .w = x.dim[2], .c = x.dim[3],
               .kh = kh, .kw = kw, .sh = strides.v[0], .sw = strides.v[1] };
  window_dim(g.h, g.kh, g.sh, padding, &g.oh, &g.top);
  window_dim(g.w, g.kw, g.sw, padding, &g.ow, &g.left);
  return g;
}

/* VALID windows must fit inside the input (SAME ones always overlap it). */
static bool window_fits(const window *g, int64_t padding)
{
  return padding == TS_PADDING_SAME ||
         ((g->h < 0 || g->kh < 0 || g->h >= g->kh) && (g->w < 0 || g->kw < 0 || g->w >= g->kw));
}

/* A {h, w} pair of positive sizes (strides, ksize); false after an error. */
static bool check_pair(ts_infer_ctx *c, const char *what, ts_ints v)
{
  if (v.n != 2)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "%s must hold 2 values {h, w}, got %d",
                          what, v.n);
  if (v.v[0] < 1 || v.v[1] < 1 || v.v[0] > INT_MAX || v.v[1] > INT_MAX)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "%s must be positive, got {%" PRId64 ", %" PRId64 "}", what, v.v[0], v.v[1]);
  return true;
}

static bool check_padding(ts_infer_ctx *c, int64_t padding)
{
  if (padding == TS_PADDING_VALID || padding == TS_PADDING_SAME)
    return true;
  return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "padding must be VALID (%d) or SAME (%d), got %" PRId64,
                        TS_PADDING_VALID, TS_PADDING_SAME, padding);
}

static bool fits_blas(int64_t v)
{
  return v <= INT_MAX;
}

/* "what: input f32[..], filter f32[..]tail" (no filter for pooling); the
 * shapes are formatted only on failure. */
static bool window_fail(ts_infer_ctx *c, ts_error_code code, const char *what, const char *tail)
{
  char sx[TS_INFO_STR], sf[TS_INFO_STR];
  ts__info_str(sx, c->in[0].dtype, c->in[0].shape);
  if (c->n_in < 2)
    return ts__infer_fail(c, code, "%s: input %s%s", what, sx, tail);
  ts__info_str(sf, c->in[1].dtype, c->in[1].shape);
  return ts__infer_fail(c, code, "%s: input %s, filter %s%s", what, sx, sf, tail);
}

/* ---- Conv2D ----------------------------------------------------------------- */

static bool conv2d_infer(ts_infer_ctx *c)
{
  const ts_info *x = &c->in[0], *f = &c->in[1];
  ts_ints strides = c->attrs[CONV_STRIDES].ints;
  int64_t padding = c->attrs[CONV_PADDING].i;

  if (!ts_dtype_is_float(x->dtype) || f->dtype != x->dtype)
    return window_fail(c, TS_ERR_DTYPE, "input and filter must be of one float dtype (f32, f64, f16 or bf16)", "");
  if (x->shape.rank != 4 || f->shape.rank != 4)
    return window_fail(c, TS_ERR_SHAPE,
                       "expected input NHWC [N,H,W,C] and filter HWIO [KH,KW,C,O], both rank 4", "");
  if (!check_pair(c, "strides", strides) || !check_padding(c, padding))
    return false;
  if (f->shape.dim[0] == 0 || f->shape.dim[1] == 0)
    return window_fail(c, TS_ERR_SHAPE, "filter height and width must be positive", "");
  int64_t cx = x->shape.dim[3], cf = f->shape.dim[2];
  if (cx >= 0 && cf >= 0 && cx != cf) {
    char tail[64];
    snprintf(tail, sizeof tail, " (%" PRId64 " vs %" PRId64 ")", cx, cf);
    return window_fail(c, TS_ERR_SHAPE, "input channels differ from filter in-channels", tail);
  }
  window g = window_init(x->shape, f->shape.dim[0], f->shape.dim[1], strides, padding);
  if (!window_fits(&g, padding))
    return window_fail(c, TS_ERR_SHAPE, "filter is larger than the input with VALID padding", "");
  c->out[0] = (ts_info){ x->dtype, TS_SHAPE(g.n, g.oh, g.ow, f->shape.dim[3]) };
  return true;
}

/* Row r (flat over N, OH, OW) of the im2col matrix: the KH x KW x C patch
 * under that output pixel, zero where the window hangs over the padding.
 * Each filter row's in-bounds part is one contiguous run of the input. */
static void im2col_row(const window *g, const char *x, size_t esize, int64_t r, char *dst)
{
  int64_t ox = r % g->ow, oy = r / g->ow % g->oh, n = r / g->ow / g->oh;
  int64_t x0 = ox * g->sw - g->left, y0 = oy * g->sh - g->top;
  int64_t kx0 = x0 < 0 ? -x0 : 0, kx1 = g->kw < g->w - x0 ? g->kw : g->w - x0;
  size_t cell = (size_t)g->c * esize, line = (size_t)g->kw * cell;
  for (int64_t ky = 0; ky < g->kh; ky++, dst += line) {
    int64_t iy = y0 + ky;
    if (iy < 0 || iy >= g->h) {
      memset(dst, 0, line);
      continue;
    }
    memset(dst, 0, (size_t)kx0 * cell);
    memcpy(dst + (size_t)kx0 * cell, x + (size_t)((n * g->h + iy) * g->w + x0 + kx0) * cell,
           (size_t)(kx1 - kx0) * cell);
    memset(dst + (size_t)kx1 * cell, 0, (size_t)(g->kw - kx1) * cell);
  }
}

/* One convolution as the candidates see it. */
typedef struct conv_op {
  window g;
  ts_conv cv;
  ts_dtype dtype;
  char *col;     /* im2col scratch of `chunk` rows */
  int64_t chunk;
} conv_op;

static void gemm_rows(ts_dtype dt, int64_t m, int64_t n, int64_t k, const void *a, const void *b,
                      const void *bias, void *c, ts_act act)
{
  ts_gemm gm = { m, n, k, false, false, a, b, bias, c, act };
  if (dt == TS_F32 && ts__blas_available())
    ts__gemm_f32_blas(&gm);
  else if (dt == TS_F32)
    ts__gemm_f32_with(ts__tile_best(), &gm);
  else
    ts__gemm_f64(&gm);
}

static void conv_im2col(const void *op_)
{
  const conv_op *op = op_;
  const window *g = &op->g;
  size_t esize = ts_dtype_size(op->dtype);
  int64_t n_out = op->cv.o, patch = g->kh * g->kw * g->c, rows = g->n * g->oh * g->ow;
  int64_t line = patch * (int64_t)esize;
  for (int64_t r0 = 0; r0 < rows; r0 += op->chunk) {
    int64_t m = MIN(rows - r0, op->chunk);
    for (int64_t r = 0; r < m; r++)
      im2col_row(g, op->cv.x, esize, r0 + r, op->col + r * line);
    gemm_rows(op->dtype, m, n_out, patch, op->col, op->cv.f, op->cv.bias,
              (char *)op->cv.y + (size_t)(r0 * n_out) * esize, op->cv.act);
  }
}

static const char *im2col_label(void)
{
  return "im2col + OpenBLAS";
}

static const char *winograd_label(void)
{
  return "winograd F(2x2,3x3)";
}

static const char *direct_label(void)
{
  return ts__strip_best()->label;
}

static void conv_implicit(const void *op_)
{
  ts__conv_f32_with(ts__tile_best(), &((const conv_op *)op_)->cv);
}

static void conv_winograd(const void *op_)
{
  ts__conv_f32_winograd(NULL, &((const conv_op *)op_)->cv);
}

static void conv_direct(const void *op_)
{
  ts__conv_f32_direct(ts__strip_best(), &((const conv_op *)op_)->cv);
}

/* The f32 candidates, those that fit a convolution timed against each
 * other (kernels/tune.c): the choice is an index into the ones that fit,
 * the same for every convolution of a shape. */
static const struct conv_cand {
  ts_tune_fn run;
  const char *(*label)(void);
  bool (*fits)(const ts_conv *cv); /* NULL: any */
} conv_cands[] = {
  { conv_implicit, ts__own_label, NULL },
  { conv_im2col, im2col_label, NULL },
  { conv_winograd, winograd_label, ts__conv_winograd_fits }, /* 3x3 stride 1 */
  { conv_direct, direct_label, ts__conv_direct_fits },       /* few output channels */
};
_Static_assert(G_N_ELEMENTS(conv_cands) <= TS_TUNE_MAX, "more conv candidates than the choice takes");

/* The candidates that fit cv, in conv_cands' order; how many. */
static int conv_fitting(const ts_conv *cv, ts_tune_fn *fns, const char **names)
{
  int n = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(conv_cands); i++)
    if (!conv_cands[i].fits || conv_cands[i].fits(cv)) {
      fns[n] = conv_cands[i].run;
      names[n++] = conv_cands[i].label();
    }
  return n;
}

/* "conv 1x64x64x100 * 3x3->100 stride 1,1 pad 0,0" */
static void conv_label(const ts_tune_key *key, char *buf, size_t size)
{
  const int64_t *d = key->dim;
  snprintf(buf, size, "conv %" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64 " * %" PRId64 "x%" PRId64
           "->%" PRId64 " stride %" PRId64 ",%" PRId64 " pad %" PRId64 ",%" PRId64,
           d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10]);
}

/* y = act(conv(x, f) + bias) in dtype dt (f32 or f64), the shapes and
 * attributes k's; bias NULL or one value per output channel. */
static bool conv_compute(ts_kernel_ctx *k, ts_dtype dt, const void *xd, const void *fd,
                         const void *bias, void *yd, ts_act act)
{
  const ts_tensor *x = k->in[0], *f = k->in[1];
  conv_op op = { .g = window_init(x->shape, f->shape.dim[0], f->shape.dim[1],
                                  k->attrs[CONV_STRIDES].ints, k->attrs[CONV_PADDING].i),
                 .dtype = dt };
  const window *g = &op.g;
  op.cv = (ts_conv){ g->n, g->h, g->w, g->c, g->kh, g->kw, f->shape.dim[3], g->sh, g->sw,
                     g->oh, g->ow, g->top, g->left, xd, fd, bias, yd, act };
  int64_t n_out = op.cv.o, patch = g->kh * g->kw * g->c, rows = g->n * g->oh * g->ow;
  size_t esize = ts_dtype_size(dt);
  if (!fits_blas(patch) || !fits_blas(n_out))
    return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT,
                           "filter exceeds the BLAS limit of %d rows or columns: [%" PRId64 ", %" PRId64 "]",
                           INT_MAX, patch, n_out);
  int64_t chunk = fits_blas(rows) ? rows : INT_MAX;

  if (patch == 0 || (g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1)) {
    for (int64_t r = 0; r < rows; r += chunk) {
      ts_gemm gm = { MIN(rows - r, chunk), n_out, patch, false, false,
                     (const char *)xd + (size_t)(r * patch) * esize, fd, bias,
                     (char *)yd + (size_t)(r * n_out) * esize, act };
      if (dt == TS_F32)
        ts__gemm_f32(&gm);
      else
        ts__gemm_f64(&gm);
    }
    return true;
  }
  bool own = dt == TS_F32, blas = dt == TS_F64 || ts__blas_available();
  if (own && !blas) {
    conv_implicit(&op);
    return true;
  }

  ts_tune_key key = { "conv", { g->n, g->h, g->w, g->c, g->kh, g->kw, n_out, g->sh, g->sw,
                                g->top, g->left } };
  ts_tune_fn cands[TS_TUNE_MAX];
  const char *names[TS_TUNE_MAX];
  int n_cands = conv_fitting(&op.cv, cands, names);
  int known = own ? ts__tune_known(&key) : -1;
  if (known >= 0 && cands[known] != conv_im2col) { /* no im2col scratch to make */
    if (!ts__tune_only) /* a plan choosing kernels: known already */
      cands[known](&op);
    return true;
  }
  int64_t line = patch * (int64_t)esize, budget = SCRATCH_BYTES / line;
  op.chunk = chunk > budget ? MAX(budget, 1) : chunk;
  op.col = malloc((size_t)(op.chunk * line));
  if (!op.col)
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "cannot allocate %" PRId64 " bytes of im2col scratch",
                           op.chunk * line);
  if (!own) {
    conv_im2col(&op);
  } else {
    bool ran;
    int pick = ts__tune(&key, conv_label, cands, names, n_cands, &op, &ran);
    if (!ran)
      cands[pick](&op);
  }
  free(op.col);
  return true;
}

/* As TensorFlow's Conv2D takes half and bfloat16: widened to float32 (input,
 * filter and bias), convolved there as an f32 convolution of that shape
 * would be (float accumulation, its epilogue), each output rounded back
 * once, as MatMul does (ops/matmul.c). */
static bool conv_half(ts_kernel_ctx *k, const void *bias, ts_act act)
{
  const ts_tensor *x = k->in[0], *f = k->in[1];
  ts_tensor *y = k->out[0];
  ts_widened w;
  if (!ts__widen_f32(x->dtype, 3, (const void *[]){ x->data, f->data, bias },
                     (int64_t[]){ x->size, f->size, f->shape.dim[3] }, y->size, &w))
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "cannot allocate the float32 copies of a %s convolution",
                           ts_dtype_name(x->dtype));
  bool ok = conv_compute(k, TS_F32, w.in[0], w.in[1], w.in[2], w.out, act);
  if (ok)
    ts__narrow_f32(x->dtype, y->data, w.out, y->size);
  g_free(w.buf);
  return ok;
}

static bool conv_run(ts_kernel_ctx *k, const void *bias, ts_act act)
{
  const ts_tensor *x = k->in[0];
  ts_tensor *y = k->out[0];
  if (y->size == 0)
    return true;
  if (x->dtype == TS_F16 || x->dtype == TS_BF16)
    return conv_half(k, bias, act);
  return conv_compute(k, x->dtype, x->data, k->in[1]->data, bias, y->data, act);
}

static bool conv2d_cpu(ts_kernel_ctx *k)
{
  return conv_run(k, NULL, TS_ACT_NONE);
}


/* ---- _FusedConv2D ------------------------------------------------------------- */

enum { FUSED_STRIDES, FUSED_PADDING, FUSED_ACTIVATION };

static const ts_attr_def fused_conv_attrs[] = {
  [FUSED_STRIDES] = { "strides", TS_ATTR_INTS },
  [FUSED_PADDING] = { "padding", TS_ATTR_INT },
  [FUSED_ACTIVATION] = { "activation", TS_ATTR_STRING }, /* "", "Relu", "Sigmoid", "Tanh" */
};


static bool fused_conv2d_infer(ts_infer_ctx *c)
{
  if (c->n_in > 3)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "takes input, filter and a bias, got %d inputs",
                          c->n_in);
  if (ts__act_from_name(c->attrs[FUSED_ACTIVATION].s) < 0)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "unknown activation \"%s\"",
                          c->attrs[FUSED_ACTIVATION].s);
  if (!conv2d_infer(c))
    return false;
  if (c->n_in == 3) {
    const ts_info *bias = &c->in[2];
    int64_t o = c->in[1].shape.dim[3];
    if (bias->dtype != c->in[0].dtype || bias->shape.rank != 1 ||
        (bias->shape.dim[0] >= 0 && o >= 0 && bias->shape.dim[0] != o))
      return window_fail(c, TS_ERR_SHAPE, "the bias must be a vector of the filter's output channels", "");
  }
  return true;
}

static bool fused_conv2d_cpu(ts_kernel_ctx *k)
{
  if (k->n_in == 3 && k->in[2]->size != k->in[1]->shape.dim[3])
    return ts__kernel_fail(k, TS_ERR_SHAPE, "the bias has %" PRId64 " elements for %" PRId64
                           " output channels", k->in[2]->size, k->in[1]->shape.dim[3]);
  return conv_run(k, k->n_in == 3 ? k->in[2]->data : NULL, ts__act_from_name(k->attrs[FUSED_ACTIVATION].s));
}

/* ---- MaxPool ------------------------------------------------------------------ */

#define NEVER_NAN(v) false
#define FLOAT_NAN(v) ((v) != (v))

/* Cloned for AVX-512 and AVX2 where the CPU has them (the build targets
 * plain x86-64, where a channel loop of 16 floats is four SSE vectors);
 * not under sanitizers, whose set-up runs after the clones' ifunc resolvers. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
  !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define POOL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define POOL_CLONES
#endif

/* Output rows (over N and OH) per part shared between threads: parts of
 * at least this many input values read (a part's set-up and a thread's
 * wake-up cost about as much as a few thousand maxes). */
#define POOL_VALUES_PER_PART 32768

/* One output pixel's channels, the max over KH x KW cells from p (its
 * window's first in-bounds cell; line: values per input row).  KH and KW
 * are constants where they are 2 or 3 (MAX_POOL's calls), so the taps
 * unroll inside the channel loop, which vectorises with the running max
 * in a register. */
#define POOL_PIXEL(T, VALUE, IS_NAN)                                                     \
  static inline __attribute__((always_inline)) void pool_pixel_##T(                    \
    const T *restrict p, int64_t line, int64_t c, int64_t KH, int64_t KW, T *restrict y) \
  {                                                                                      \
    for (int64_t ch = 0; ch < c; ch++) {                                                 \
      T m = p[ch];                                                                       \
      for (int64_t i = 0; i < KH; i++)                                                   \
        for (int64_t j = 0; j < KW; j++) {                                               \
          T v = p[i * line + j * c + ch];                                                \
          m = VALUE(v) > VALUE(m) || IS_NAN(VALUE(v)) ? v : m;                           \
        }                                                                                \
      y[ch] = m;                                                                         \
    }                                                                                    \
  }

/* Each output pixel is the max over its window's in-bounds cells, from
 * the first, in row-major order, channels innermost; NaN wins, as in
 * NumPy.  The select has no branch, so the channel loop vectorises (a
 * branch on random data mispredicted half the time).  The first cell is
 * taken twice (the same max). */
#define MAX_POOL(name, T, VALUE, IS_NAN)                                                 \
  POOL_PIXEL(T, VALUE, IS_NAN)                                                           \
  POOL_CLONES static void name(const window *g, const void *x_, void *y_, int64_t r0,    \
                               int64_t r1)                                               \
  {                                                                                      \
    const T *restrict x = x_;                                                            \
    const window w = *g; /* a local: stores to y might otherwise change *g */            \
    int64_t line = w.w * w.c;                                                            \
    for (int64_t r = r0; r < r1; r++) {                                                  \
      int64_t n = r / w.oh, oy = r % w.oh;                                               \
      T *restrict y = (T *)y_ + r * w.ow * w.c;                                          \
      int64_t y0 = oy * w.sh - w.top;                                                    \
      int64_t ya = y0 > 0 ? y0 : 0, yb = y0 + w.kh < w.h ? y0 + w.kh : w.h;              \
      for (int64_t ox = 0; ox < w.ow; ox++, y += w.c) {                                  \
        int64_t x0 = ox * w.sw - w.left;                                                 \
        int64_t xa = x0 > 0 ? x0 : 0, xb = x0 + w.kw < w.w ? x0 + w.kw : w.w;            \
        const T *restrict first = x + ((n * w.h + ya) * w.w + xa) * w.c;                 \
        int64_t kh = yb - ya, kw = xb - xa;                                              \
        if (kh == 2 && kw == 2)                                                          \
          pool_pixel_##T(first, line, w.c, 2, 2, y);                                     \
        else if (kh == 3 && kw == 3)                                                     \
          pool_pixel_##T(first, line, w.c, 3, 3, y);                                     \
        else                                                                             \
          pool_pixel_##T(first, line, w.c, kh, kw, y);                                   \
      }                                                                                  \
    }                                                                                    \
  }

/* Values compare as they are; 16-bit floats widened to float (exactly),
 * the max kept as stored. */
#define AS_IS(v) (v)

MAX_POOL(max_pool_f32, float, AS_IS, FLOAT_NAN)
MAX_POOL(max_pool_f64, double, AS_IS, FLOAT_NAN)
MAX_POOL(max_pool_i32, int32_t, AS_IS, NEVER_NAN)
MAX_POOL(max_pool_i64, int64_t, AS_IS, NEVER_NAN)
MAX_POOL(max_pool_u8, uint8_t, AS_IS, NEVER_NAN)
MAX_POOL(max_pool_i8, int8_t, AS_IS, NEVER_NAN)
MAX_POOL(max_pool_i16, int16_t, AS_IS, NEVER_NAN)
MAX_POOL(max_pool_u16, uint16_t, AS_IS, NEVER_NAN)
MAX_POOL(max_pool_f16, ts_f16, ts__f16_to_f32, FLOAT_NAN)
MAX_POOL(max_pool_bf16, ts_bf16, ts__bf16_to_f32, FLOAT_NAN)

/* Output rows [r0, r1) (flat over N and OH). */
typedef void (*pool_fn)(const window *g, const void *x, void *y, int64_t r0, int64_t r1);

/* TensorFlow's MaxPool dtypes (its qint8 aside). */
static const pool_fn max_pool_table[TS_DTYPE_COUNT] = {
  [TS_F32] = max_pool_f32, [TS_F64] = max_pool_f64, [TS_I32] = max_pool_i32,
  [TS_I64] = max_pool_i64, [TS_U8] = max_pool_u8,   [TS_I8] = max_pool_i8,
  [TS_I16] = max_pool_i16, [TS_U16] = max_pool_u16, [TS_F16] = max_pool_f16,
  [TS_BF16] = max_pool_bf16,
};

static bool max_pool2d_infer(ts_infer_ctx *c)
{
  const ts_info *x = &c->in[0];
  ts_ints ksize = c->attrs[POOL_KSIZE].ints, strides = c->attrs[POOL_STRIDES].ints;
  int64_t padding = c->attrs[POOL_PADDING].i;

  if (!max_pool_table[x->dtype]) {
    char what[TS_TAKES_STR];
    unsigned mask = 0;
    for (int d = 0; d < TS_DTYPE_COUNT; d++)
      mask |= max_pool_table[d] ? 1u << d : 0;
    return window_fail(c, TS_ERR_DTYPE, ts__takes_str(what, mask, x->dtype), "");
  }
  if (x->shape.rank != 4)
    return window_fail(c, TS_ERR_SHAPE, "expected input NHWC [N,H,W,C] of rank 4", "");
  if (!check_pair(c, "ksize", ksize) || !check_pair(c, "strides", strides) || !check_padding(c, padding))
    return false;
  window g = window_init(x->shape, ksize.v[0], ksize.v[1], strides, padding);
  if (!window_fits(&g, padding)) {
    char tail[64];
    snprintf(tail, sizeof tail, ", ksize {%" PRId64 ", %" PRId64 "}", g.kh, g.kw);
    return window_fail(c, TS_ERR_SHAPE, "window is larger than the input with VALID padding", tail);
  }
  c->out[0] = (ts_info){ x->dtype, TS_SHAPE(g.n, g.oh, g.ow, g.c) };
  return true;
}

typedef struct pool_job {
  const window *g;
  pool_fn fn;
  const void *x;
  void *y;
} pool_job;

static void pool_part(void *ctx, int64_t r0, int64_t r1)
{
  const pool_job *job = ctx;
  job->fn(job->g, job->x, job->y, r0, r1);
}

/* Output rows split between the pool's threads; each pixel's max is the
 * same wherever its row runs. */
static bool max_pool2d_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  ts_tensor *y = k->out[0];
  if (y->size == 0)
    return true;
  ts_ints ksize = k->attrs[POOL_KSIZE].ints;
  window g = window_init(x->shape, ksize.v[0], ksize.v[1], k->attrs[POOL_STRIDES].ints,
                         k->attrs[POOL_PADDING].i);
  pool_job job = { &g, max_pool_table[x->dtype], x->data, y->data };
  /* the values a row of outputs reads: windows clipped to the input (a
   * SAME ksize may pass it, up to INT_MAX a side) */
  int64_t per_row, reads[] = { g.ow, MIN(g.kh, g.h), MIN(g.kw, g.w), g.c };
  if (!ts__shape_product(reads, 4, &per_row))
    per_row = INT64_MAX;
  per_row = MAX(per_row, 1);
  ts__parallel_range(g.n * g.oh, MAX(POOL_VALUES_PER_PART / per_row, 1), pool_part, &job);
  return true;
}

#ifdef TS_HAVE_CUDA
static ts_cu_window cu_window(const window *g)
{
  return (ts_cu_window){ g->n, g->h, g->w, g->c, g->kh, g->kw, g->sh, g->sw, g->oh, g->ow,
                         g->top, g->left };
}

/* On CUDA: im2col into a scratch buffer of the device, then one product
 * with the HWIO filter ([kh*kw*c, o]) through cuBLASLt, bias and
 * activation in its epilogue; a 1x1 stride-1 filter multiplies the input
 * itself. */
static bool conv_cuda(ts_kernel_ctx *k, const void *bias, int act)
{
  const ts_tensor *x = k->in[0], *f = k->in[1];
  ts_tensor *y = k->out[0];
  if (y->size == 0)
    return true;
  /* Conv2D's strides and padding are _FusedConv2D's first two attributes too */
  window g = window_init(x->shape, f->shape.dim[0], f->shape.dim[1], k->attrs[CONV_STRIDES].ints,
                         k->attrs[CONV_PADDING].i);
  int64_t patch = g.kh * g.kw * g.c, rows = g.n * g.oh * g.ow;
  void *stream = ts__cuda_stream(k->backend);
  bool direct = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1;
  size_t col_bytes = direct ? 0 : (size_t)(rows * patch) * ts_dtype_size(x->dtype);
  ts_buffer *scratch = direct ? NULL
                              : ts_buffer_alloc(ts_backend_buffer_type(k->backend), col_bytes,
                                                TS_BUFFER_USAGE_SCRATCH);
  if (!direct && !scratch) {
    ts_error *why = ts_error_take(); /* the op's error says it */
    bool ok = ts__kernel_fail(k, TS_ERR_NO_MEMORY, "im2col scratch: %s",
                              why && why->detail ? why->detail : "out of memory");
    ts_error_free(why);
    return ok;
  }
  void *col = scratch ? ts_buffer_base(scratch) : NULL;
  ts_cu_window w = cu_window(&g);
  ts_cu_gemm gm = { .dtype = x->dtype, .m = rows, .n = f->shape.dim[3], .k = patch, .batch = 1,
                    .act = act, .a = direct ? x->data : col, .b = f->data, .bias = bias,
                    .c = y->data };
  bool ok = (direct || ts__cu_im2col(x->dtype, &w, x->data, col, stream)) &&
            ts__cuda_gemm(&gm, stream);
  ts_buffer_free(scratch); /* stream-ordered: after the product */
  return ok;
}

static bool conv2d_cuda(ts_kernel_ctx *k)
{
  return conv_cuda(k, NULL, TS_ACT_NONE);
}

static bool fused_conv2d_cuda(ts_kernel_ctx *k)
{
  if (k->n_in == 3 && k->in[2]->size != k->in[1]->shape.dim[3])
    return ts__kernel_fail(k, TS_ERR_SHAPE, "the bias has %" PRId64 " elements for %" PRId64
                           " output channels", k->in[2]->size, k->in[1]->shape.dim[3]);
  return conv_cuda(k, k->n_in == 3 ? k->in[2]->data : NULL,
                   ts__act_from_name(k->attrs[FUSED_ACTIVATION].s));
}

static bool max_pool2d_cuda(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  ts_ints ksize = k->attrs[POOL_KSIZE].ints;
  window g = window_init(x->shape, ksize.v[0], ksize.v[1], k->attrs[POOL_STRIDES].ints,
                         k->attrs[POOL_PADDING].i);
  ts_cu_window w = cu_window(&g);
  return ts__cu_max_pool(x->dtype, &w, x->data, k->out[0]->data, ts__cuda_stream(k->backend));
}
#endif
/* ---- gradients: Conv2DBackpropInput, Conv2DBackpropFilter, MaxPoolGrad ----------
 * As TensorFlow's, each a row of its own (the gradients' nodes while
 * tracing).  Inputs: the forward op's input and filter (for their shapes
 * and values) and dy, the gradient of its output; attrs: the forward's.
 * Direct loops over the windows, in double for f32 and f64. */

/* dx[n, iy, ix, c] = sum over windows covering it of f[ky, kx, c, o] dy[n, oy, ox, o];
 * df[ky, kx, c, o] = sum of x[n, iy, ix, c] dy[n, oy, ox, o]. */
static void conv_backprop(const window *g, int64_t o, ts_dtype dt, const void *x, const void *f,
                          const void *dy, double *dx, double *df)
{
  for (int64_t n = 0; n < g->n; n++)
    for (int64_t oy = 0; oy < g->oh; oy++)
      for (int64_t ox = 0; ox < g->ow; ox++) {
        int64_t at_y = ((n * g->oh + oy) * g->ow + ox) * o;
        for (int64_t ky = 0; ky < g->kh; ky++) {
          int64_t iy = oy * g->sh - g->top + ky;
          if (iy < 0 || iy >= g->h)
            continue;
          for (int64_t kx = 0; kx < g->kw; kx++) {
            int64_t ix = ox * g->sw - g->left + kx;
            if (ix < 0 || ix >= g->w)
              continue;
            int64_t at_x = ((n * g->h + iy) * g->w + ix) * g->c;
            int64_t at_f = (ky * g->kw + kx) * g->c * o;
            for (int64_t c = 0; c < g->c; c++)
              for (int64_t k = 0; k < o; k++) {
                double d = ts__load_f64(dt, dy, at_y + k);
                if (dx)
                  dx[at_x + c] += ts__load_f64(dt, f, at_f + c * o + k) * d;
                else
                  df[at_f + c * o + k] += ts__load_f64(dt, x, at_x + c) * d;
              }
          }
        }
      }
}

/* Both: out 0 has the shape of input 0 (BackpropInput) or 1 (BackpropFilter). */
static bool conv_backprop_infer(ts_infer_ctx *c)
{
  ts_infer_ctx fwd = *c;
  ts_info y;
  fwd.n_in = 2;
  fwd.out = &y;
  if (!conv2d_infer(&fwd))
    return false;
  const ts_info *dy = &c->in[2];
  bool ok = dy->dtype == y.dtype && dy->shape.rank == 4;
  for (int d = 0; ok && d < 4; d++)
    ok = dy->shape.dim[d] < 0 || y.shape.dim[d] < 0 || dy->shape.dim[d] == y.shape.dim[d];
  if (!ok) {
    char sy[TS_INFO_STR], tail[TS_INFO_STR + 16];
    snprintf(tail, sizeof tail, ", output gradient %s", ts__info_str(sy, dy->dtype, dy->shape));
    return window_fail(c, TS_ERR_SHAPE, "the output gradient must have the convolution's output shape",
                       tail);
  }
  c->out[0] = c->in[c->def->op == TS_OP_CONV2D_BACKPROP_INPUT ? 0 : 1];
  return true;
}

static bool conv_backprop_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0], *f = k->in[1], *dy = k->in[2];
  ts_tensor *out = k->out[0];
  window g = window_init(x->shape, f->shape.dim[0], f->shape.dim[1], k->attrs[CONV_STRIDES].ints,
                         k->attrs[CONV_PADDING].i);
  double *acc = calloc((size_t)(out->size ? out->size : 1), sizeof *acc);
  if (!acc)
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "out of memory");
  bool input = k->def->op == TS_OP_CONV2D_BACKPROP_INPUT;
  conv_backprop(&g, f->shape.dim[3], x->dtype, x->data, f->data, dy->data, input ? acc : NULL,
                input ? NULL : acc);
  for (int64_t i = 0; i < out->size; i++)
    ts__store_f64(out->dtype, out->data, i, acc[i]);
  free(acc);
  return true;
}

#ifdef TS_HAVE_CUDA
static bool conv_backprop_cuda(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0], *f = k->in[1], *dy = k->in[2];
  window g = window_init(x->shape, f->shape.dim[0], f->shape.dim[1], k->attrs[CONV_STRIDES].ints,
                         k->attrs[CONV_PADDING].i);
  ts_cu_window w = cu_window(&g);
  void *stream = ts__cuda_stream(k->backend);
  int64_t o = f->shape.dim[3];
  return k->def->op == TS_OP_CONV2D_BACKPROP_INPUT
           ? ts__cu_conv_backprop_input(x->dtype, &w, o, f->data, dy->data, k->out[0]->data, stream)
           : ts__cu_conv_backprop_filter(x->dtype, &w, o, x->data, dy->data, k->out[0]->data,
                                         stream);
}
#endif

static bool conv2d_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                        ts_tensor **gi)
{
  ts_tensor *in[] = { c->in[0], c->in[1], g[0] };
  gi[0] = ts__dispatch1(c->loc, TS_OP_CONV2D_BACKPROP_INPUT, in, 3, c->attrs);
  gi[1] = ts__dispatch1(c->loc, TS_OP_CONV2D_BACKPROP_FILTER, in, 3, c->attrs);
  return gi[0] && gi[1];
}

/* Gradients of gradients: both backprops are bilinear in their last two
 * inputs (the first of Conv2DBackpropInput and the second of
 * Conv2DBackpropFilter give only their shapes):
 *   <BackpropInput(f, dy), G> = <conv(G, f), dy>, d/df = BackpropFilter(G, f, dy)
 *   <BackpropFilter(x, dy), G> = <conv(x, G), dy>, d/dx = BackpropInput(x, G, dy) */
static bool conv2d_backprop_input_grad(const ts_op_call *c, ts_tensor *const *out,
                                       ts_tensor *const *g, ts_tensor **gi)
{
  ts_tensor *filter_in[] = { g[0], c->in[1], c->in[2] }, *conv_in[] = { g[0], c->in[1] };
  gi[1] = ts__dispatch1(c->loc, TS_OP_CONV2D_BACKPROP_FILTER, filter_in, 3, c->attrs);
  gi[2] = ts__dispatch1(c->loc, TS_OP_CONV2D, conv_in, 2, c->attrs);
  return gi[1] && gi[2];
}

static bool conv2d_backprop_filter_grad(const ts_op_call *c, ts_tensor *const *out,
                                        ts_tensor *const *g, ts_tensor **gi)
{
  ts_tensor *input_in[] = { c->in[0], g[0], c->in[2] }, *conv_in[] = { c->in[0], g[0] };
  gi[0] = ts__dispatch1(c->loc, TS_OP_CONV2D_BACKPROP_INPUT, input_in, 3, c->attrs);
  gi[2] = ts__dispatch1(c->loc, TS_OP_CONV2D, conv_in, 2, c->attrs);
  return gi[0] && gi[2];
}

/* MaxPoolGrad(x, y, dy): each output pixel's gradient to the cell its max
 * came from (the first of equal ones, as the forward op picks). */
static bool max_pool2d_grad_infer(ts_infer_ctx *c)
{
  ts_infer_ctx fwd = *c;
  ts_info y;
  fwd.n_in = 1;
  fwd.out = &y;
  if (!max_pool2d_infer(&fwd))
    return false;
  for (int i = 1; i < 3; i++) {
    const ts_info *t = &c->in[i];
    bool ok = t->dtype == y.dtype && t->shape.rank == 4;
    for (int d = 0; ok && d < 4; d++)
      ok = t->shape.dim[d] < 0 || y.shape.dim[d] < 0 || t->shape.dim[d] == y.shape.dim[d];
    if (!ok)
      return window_fail(c, TS_ERR_SHAPE, i == 1 ? "the pooled output must have the pool's output shape"
                                                 : "the output gradient must have the pool's output shape",
                         "");
  }
  c->out[0] = c->in[0];
  return true;
}

static bool max_pool2d_grad_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0], *y = k->in[1], *dy = k->in[2];
  ts_tensor *dx = k->out[0];
  ts_ints ksize = k->attrs[POOL_KSIZE].ints;
  window g = window_init(x->shape, ksize.v[0], ksize.v[1], k->attrs[POOL_STRIDES].ints,
                         k->attrs[POOL_PADDING].i);
  double *acc = calloc((size_t)(dx->size ? dx->size : 1), sizeof *acc);
  if (!acc)
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "out of memory");
  ts_dtype dt = x->dtype;
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t oy = 0; oy < g.oh; oy++)
      for (int64_t ox = 0; ox < g.ow; ox++)
        for (int64_t ch = 0; ch < g.c; ch++) {
          int64_t at = ((n * g.oh + oy) * g.ow + ox) * g.c + ch, from = -1;
          double best = ts__load_f64(dt, y->data, at);
          int64_t y0 = oy * g.sh - g.top, x0 = ox * g.sw - g.left;
          for (int64_t iy = y0 < 0 ? 0 : y0; from < 0 && iy < y0 + g.kh && iy < g.h; iy++)
            for (int64_t ix = x0 < 0 ? 0 : x0; from < 0 && ix < x0 + g.kw && ix < g.w; ix++) {
              int64_t cell = ((n * g.h + iy) * g.w + ix) * g.c + ch;
              double v = ts__load_f64(dt, x->data, cell);
              if (v == best || (isnan(v) && isnan(best)))
                from = cell;
            }
          if (from >= 0)
            acc[from] += ts__load_f64(dt, dy->data, at);
        }
  for (int64_t i = 0; i < dx->size; i++)
    ts__store_f64(dt, dx->data, i, acc[i]);
  free(acc);
  return true;
}

#ifdef TS_HAVE_CUDA
static bool max_pool2d_grad_cuda(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  ts_ints ksize = k->attrs[POOL_KSIZE].ints;
  window g = window_init(x->shape, ksize.v[0], ksize.v[1], k->attrs[POOL_STRIDES].ints,
                         k->attrs[POOL_PADDING].i);
  ts_cu_window w = cu_window(&g);
  return ts__cu_max_pool_grad(x->dtype, &w, x->data, k->in[1]->data, k->in[2]->data,
                              k->out[0]->data, ts__cuda_stream(k->backend));
}
#endif

static bool max_pool2d_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                            ts_tensor **gi)
{
  ts_tensor *in[] = { c->in[0], out[0], g[0] };
  return (gi[0] = ts__dispatch1(c->loc, TS_OP_MAX_POOL2D_GRAD, in, 3, c->attrs)) != NULL;
}

const ts_op_def ts__op_conv2d_backprop_input = {
  .op = TS_OP_CONV2D_BACKPROP_INPUT,
  .name = "Conv2DBackpropInput",
  .api_name = "conv2d_backprop_input",
  .n_inputs = 3,
  .n_outputs = 1,
  .n_attrs = (int)(sizeof conv_attrs / sizeof conv_attrs[0]),
  .attrs = conv_attrs,
  .infer = conv_backprop_infer,
  .kernel[TS_DEVICE_CPU] = conv_backprop_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(conv_backprop_cuda),
  .grad = conv2d_backprop_input_grad,
};

const ts_op_def ts__op_conv2d_backprop_filter = {
  .op = TS_OP_CONV2D_BACKPROP_FILTER,
  .name = "Conv2DBackpropFilter",
  .api_name = "conv2d_backprop_filter",
  .n_inputs = 3,
  .n_outputs = 1,
  .n_attrs = (int)(sizeof conv_attrs / sizeof conv_attrs[0]),
  .attrs = conv_attrs,
  .infer = conv_backprop_infer,
  .kernel[TS_DEVICE_CPU] = conv_backprop_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(conv_backprop_cuda),
  .grad = conv2d_backprop_filter_grad,
};

const ts_op_def ts__op_max_pool2d_grad = {
  .op = TS_OP_MAX_POOL2D_GRAD,
  .name = "MaxPoolGrad",
  .api_name = "max_pool2d_grad",
  .n_inputs = 3,
  .n_outputs = 1,
  .n_attrs = (int)(sizeof pool_attrs / sizeof pool_attrs[0]),
  .attrs = pool_attrs,
  .infer = max_pool2d_grad_infer,
  .kernel[TS_DEVICE_CPU] = max_pool2d_grad_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(max_pool2d_grad_cuda),
};

const ts_op_def ts__op_conv2d = {
  .op = TS_OP_CONV2D,
  .name = "Conv2D",
  .api_name = "conv2d",
  .n_inputs = 2,
  .n_outputs = 1,
  .n_attrs = (int)(sizeof conv_attrs / sizeof conv_attrs[0]),
  .attrs = conv_attrs,
  .infer = conv2d_infer,
  .kernel[TS_DEVICE_CPU] = conv2d_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(conv2d_cuda),
  .grad = conv2d_grad,
};

const ts_op_def ts__op_fused_conv2d = {
  .op = TS_OP_FUSED_CONV2D,
  .name = "_FusedConv2D",
  .api_name = "fused_conv2d",
  .n_inputs = -1,
  .min_inputs = 2,
  .n_outputs = 1,
  .n_attrs = (int)(sizeof fused_conv_attrs / sizeof fused_conv_attrs[0]),
  .attrs = fused_conv_attrs,
  .infer = fused_conv2d_infer,
  .kernel[TS_DEVICE_CPU] = fused_conv2d_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(fused_conv2d_cuda),
};

const ts_op_def ts__op_max_pool2d = {
  .op = TS_OP_MAX_POOL2D,
  .name = "MaxPool",
  .api_name = "max_pool2d",
  .n_inputs = 1,
  .n_outputs = 1,
  .n_attrs = (int)(sizeof pool_attrs / sizeof pool_attrs[0]),
  .attrs = pool_attrs,
  .infer = max_pool2d_infer,
  .kernel[TS_DEVICE_CPU] = max_pool2d_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(max_pool2d_cuda),
  .grad = max_pool2d_grad,
};

ts_tensor *ts_conv2d_at(ts_loc loc, ts_tensor *input, ts_tensor *filter, int stride_h, int stride_w,
                        ts_padding padding)
{
  ts_tensor *in[] = { input, filter };
  ts_attr attrs[] = { TS_ATTR_INTS_(TS_INTS(stride_h, stride_w)), TS_ATTR_I(padding) };
  return ts__dispatch1(loc, TS_OP_CONV2D, in, 2, attrs);
}

ts_tensor *ts_max_pool2d_at(ts_loc loc, ts_tensor *input, int ksize_h, int ksize_w, int stride_h,
                            int stride_w, ts_padding padding)
{
  ts_tensor *in[] = { input };
  ts_attr attrs[] = { TS_ATTR_INTS_(TS_INTS(ksize_h, ksize_w)), TS_ATTR_INTS_(TS_INTS(stride_h, stride_w)),
                      TS_ATTR_I(padding) };
  return ts__dispatch1(loc, TS_OP_MAX_POOL2D, in, 1, attrs);
}
