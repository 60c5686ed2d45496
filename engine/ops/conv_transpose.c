/* ops/conv_transpose.c — ConvTranspose as ONNX defines it, over NCHW
 * inputs of 1 to 3 spatial dims: each input pixel i and filter tap k add
 * x * w into the output at i * stride + k * dilation - pad.  Computed the
 * standard way, per image and group: the columns W^T X (one GEMM of the
 * filter's [C/g, M/g * taps] block, transposed, by the input's [C/g,
 * pixels]), then col2im scatter-adds each column's taps into the output.
 * The work is the op's own (taps x input pixels), whatever the strides,
 * dilations and pads.  float16 and bfloat16 run in float32 (copies). */
#include "engine-private.h"
#include "kernels/kernels.h"

#ifdef TS_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/kernels.h"
#endif

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The columns stay under this; bigger problems run in chunks of pixels. */
#define SCRATCH_BYTES ((int64_t)32 << 20)
/* Spatial dims: 1 to SPATIAL_MAX. */
#define SPATIAL_MAX 3

enum { CT_STRIDES, CT_DILATIONS, CT_PADS, CT_OUTPUT_SHAPE, CT_GROUP };

static const ts_attr_def conv_transpose_attrs[] = {
  [CT_STRIDES] = { "strides", TS_ATTR_INTS },
  [CT_DILATIONS] = { "dilations", TS_ATTR_INTS },
  [CT_PADS] = { "pads", TS_ATTR_INTS },               /* before each spatial dim; may be negative */
  [CT_OUTPUT_SHAPE] = { "output_shape", TS_ATTR_INTS }, /* the output's spatial dims */
  [CT_GROUP] = { "group", TS_ATTR_INT },
};

/* A step or a pad past this is refused (the output's extent is the
 * output_shape attribute's, so they only place the taps). */
#define ATTR_LIMIT ((int64_t)1 << 32)

static bool conv_transpose_infer(ts_infer_ctx *c)
{
  const ts_info *x = &c->in[0], *w = &c->in[1];
  char sx[TS_INFO_STR], sw[TS_INFO_STR];
  ts__info_str(sx, x->dtype, x->shape);
  ts__info_str(sw, w->dtype, w->shape);
  if (c->n_in > 3)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "takes input, filter and a bias, got %d inputs", c->n_in);
  if (!ts_dtype_is_float(x->dtype) || w->dtype != x->dtype)
    return ts__infer_fail(c, TS_ERR_DTYPE,
                          "input and filter must be of one float dtype (f32, f64, f16 or bf16): input %s, filter %s",
                          sx, sw);
  int n = x->shape.rank - 2;
  if (n < 1 || n > SPATIAL_MAX || w->shape.rank != x->shape.rank)
    return ts__infer_fail(c, TS_ERR_SHAPE, "expected input [N, C, 1 to 3 spatial dims] and filter [C, M/group, "
                          "taps] of the same rank: input %s, filter %s", sx, sw);
  const ts_attr *a = c->attrs;
  int64_t group = a[CT_GROUP].i;
  if (a[CT_STRIDES].ints.n != n || a[CT_DILATIONS].ints.n != n || a[CT_PADS].ints.n != n ||
      a[CT_OUTPUT_SHAPE].ints.n != n)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "strides, dilations, pads and output_shape must hold %d "
                          "values each, one per spatial dim of input %s", n, sx);
  for (int i = 0; i < n; i++) {
    int64_t s = a[CT_STRIDES].ints.v[i], d = a[CT_DILATIONS].ints.v[i], p = a[CT_PADS].ints.v[i];
    int64_t o = a[CT_OUTPUT_SHAPE].ints.v[i];
    if (s < 1 || s > ATTR_LIMIT || d < 1 || d > ATTR_LIMIT || p < -ATTR_LIMIT || p > ATTR_LIMIT || o < 0)
      return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "spatial dim %d: stride %" PRId64 ", dilation %" PRId64
                            " (1 to 2^32), pad %" PRId64 " (at most 2^32 either way), output %" PRId64
                            " (not negative)", i, s, d, p, o);
  }
  int64_t ch = x->shape.dim[1], wc = w->shape.dim[0], mg = w->shape.dim[1];
  if (group < 1 || (ch >= 0 && ch % group) || (wc >= 0 && ch >= 0 && wc != ch))
    return ts__infer_fail(c, TS_ERR_SHAPE, "the filter's first dim must be the input's channels, a multiple of "
                          "group %" PRId64 ": input %s, filter %s", group, sx, sw);
  int64_t m = -1;
  if (mg >= 0 && __builtin_mul_overflow(mg, group, &m))
    return ts__infer_fail(c, TS_ERR_SHAPE, "%" PRId64 " x %" PRId64 " output channels overflow", mg, group);
  if (c->n_in == 3) {
    const ts_info *b = &c->in[2];
    if (b->dtype != x->dtype || b->shape.rank != 1 || (b->shape.dim[0] >= 0 && m >= 0 && b->shape.dim[0] != m))
      return ts__infer_fail(c, TS_ERR_SHAPE, "the bias must be a vector of the %" PRId64 " output channels "
                            "(filter %s x group %" PRId64 ")", m, sw, group);
  }
  ts_shape out = { .rank = x->shape.rank };
  out.dim[0] = x->shape.dim[0];
  out.dim[1] = m;
  for (int i = 0; i < n; i++)
    out.dim[2 + i] = a[CT_OUTPUT_SHAPE].ints.v[i];
  int64_t size;
  if (!ts__shape_product(out.dim + 1, out.rank - 1, &size) && m >= 0)
    return ts__infer_fail(c, TS_ERR_SHAPE, "an output image of %" PRId64 " channels and the output_shape "
                          "overflows", m);
  c->out[0] = (ts_info){ x->dtype, out };
  return true;
}

/* The op's geometry, every dim as 3 (leading spatial dims of 1 when fewer). */
typedef struct geometry {
  int64_t n, c, m;         /* images, input and output channels */
  int64_t group, cg, mg;   /* groups, channels per group in and out */
  int64_t in[3], k[3], out[3], s[3], d[3], p[3];
  int64_t pixels, taps, out_pixels;
} geometry;

static geometry geometry_of(const ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0], *w = k->in[1];
  const ts_attr *a = k->attrs;
  int sp = x->shape.rank - 2, lead = SPATIAL_MAX - sp;
  geometry g = { .n = x->shape.dim[0], .c = x->shape.dim[1], .group = a[CT_GROUP].i, .mg = w->shape.dim[1],
                 .pixels = 1, .taps = 1, .out_pixels = 1 };
  g.cg = g.c / g.group;
  g.m = g.mg * g.group;
  for (int i = 0; i < SPATIAL_MAX; i++) {
    int j = i - lead; /* the op's spatial dim, or < 0 for a leading 1 */
    g.in[i] = j < 0 ? 1 : x->shape.dim[2 + j];
    g.k[i] = j < 0 ? 1 : w->shape.dim[2 + j];
    g.out[i] = j < 0 ? 1 : a[CT_OUTPUT_SHAPE].ints.v[j];
    g.s[i] = j < 0 ? 1 : a[CT_STRIDES].ints.v[j];
    g.d[i] = j < 0 ? 1 : a[CT_DILATIONS].ints.v[j];
    g.p[i] = j < 0 ? 0 : a[CT_PADS].ints.v[j];
    g.pixels *= g.in[i];
    g.taps *= g.k[i];
    g.out_pixels *= g.out[i];
  }
  return g;
}

/* The inputs i in [0, in) that tap k places inside [0, out): i * s + k * d
 * - p in range.  Empty: *lo >= *hi. */
static void tap_range(int64_t in, int64_t out, int64_t s, int64_t kd, int64_t p, int64_t *lo, int64_t *hi)
{
  int64_t first = p - kd; /* i * s >= first */
  int64_t last = out - 1 + p - kd; /* i * s <= last */
  *lo = first <= 0 ? 0 : (first + s - 1) / s;
  *hi = last < 0 ? 0 : MIN(last / s + 1, in);
}

/* col2im: columns [mg * taps, cols] of the pixels [p0, p0 + cols) added
 * into y (one image's mg output channels). */
#define COL2IM(T, sfx)                                                                                 \
  static void col2im_##sfx(const geometry *g, const T *col, int64_t p0, int64_t cols, T *y)          \
  {                                                                                                    \
    for (int64_t r = 0; r < g->mg * g->taps; r++) {                                                    \
      int64_t ch = r / g->taps, t = r % g->taps;                                                       \
      int64_t k2 = t % g->k[2], k1 = t / g->k[2] % g->k[1], k0 = t / g->k[2] / g->k[1];                 \
      int64_t lo[3], hi[3], kk[3] = { k0, k1, k2 };                                                    \
      for (int i = 0; i < 3; i++)                                                                      \
        tap_range(g->in[i], g->out[i], g->s[i], kk[i] * g->d[i], g->p[i], &lo[i], &hi[i]);             \
      const T *src = col + r * cols;                                                                   \
      T *dst = y + ch * g->out_pixels;                                                                 \
      for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)                                                       \
        for (int64_t i1 = lo[1]; i1 < hi[1]; i1++) {                                                   \
          /* this line's pixels in the chunk: [a, b) of the line's [0, in[2]) */                       \
          int64_t line = (i0 * g->in[1] + i1) * g->in[2];                                              \
          int64_t a = MAX(lo[2], p0 - line), b = MIN(hi[2], p0 + cols - line);                         \
          if (a >= b)                                                                                  \
            continue;                                                                                  \
          int64_t o0 = i0 * g->s[0] + k0 * g->d[0] - g->p[0], o1 = i1 * g->s[1] + k1 * g->d[1] - g->p[1]; \
          int64_t at = (o0 * g->out[1] + o1) * g->out[2] + k2 * g->d[2] - g->p[2];                     \
          for (int64_t i2 = a; i2 < b; i2++)                                                           \
            dst[at + i2 * g->s[2]] += src[line - p0 + i2];                                                          \
        }                                                                                              \
    }                                                                                                  \
  }
COL2IM(float, f32)
COL2IM(double, f64)

/* columns [mg * taps, cols] = W_g^T [mg * taps, cg] x X [cg, cols] */
static void columns(ts_dtype dt, const geometry *g, const void *wg, const void *xg, int64_t cols, void *col)
{
  ts_gemm gm = { g->mg * g->taps, cols, g->cg, true, false, wg, xg, NULL, col, TS_ACT_NONE };
  if (dt == TS_F32)
    ts__gemm_f32(&gm);
  else
    ts__gemm_f64(&gm);
}

/* k's geometry; false (+ error) where its bias does not fit it. */
static bool geometry_checked(ts_kernel_ctx *k, geometry *g)
{
  *g = geometry_of(k);
  const ts_tensor *bias = k->n_in == 3 ? k->in[2] : NULL;
  if (bias && bias->size != g->m)
    return ts__kernel_fail(k, TS_ERR_SHAPE, "the bias has %" PRId64 " elements for %" PRId64 " output channels",
                           bias->size, g->m);
  return true;
}

/* k's ConvTranspose in dt (f32 or f64) on these buffers; g checked. */
static bool conv_transpose_compute(ts_kernel_ctx *k, const geometry *gp, ts_dtype dt, const void *xd,
                                   const void *wd, const void *bd, void *yd)
{
  const geometry g = *gp;
  size_t es = ts_dtype_size(dt);
  /* the output starts as the bias (or zero); the taps add into it */
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t ch = 0; ch < g.m; ch++) {
      char *dst = (char *)yd + (size_t)((n * g.m + ch) * g.out_pixels) * es;
      if (!bd)
        memset(dst, 0, (size_t)g.out_pixels * es);
      else
        for (int64_t i = 0; i < g.out_pixels; i++)
          memcpy(dst + (size_t)i * es, (const char *)bd + (size_t)ch * es, es);
    }
  int64_t rows = g.mg * g.taps;
  if (rows == 0 || g.pixels == 0 || g.cg == 0)
    return true;
  /* chunks of pixels: their columns under SCRATCH_BYTES, their input
   * channels copied together where the chunk is not the whole image */
  int64_t chunk = MIN(g.pixels, MAX(SCRATCH_BYTES / (int64_t)es / rows, 1));
  void *col = malloc((size_t)(rows * chunk) * es);
  void *part = chunk < g.pixels ? malloc((size_t)(g.cg * chunk) * es) : NULL;
  if (!col || (chunk < g.pixels && !part)) {
    free(col);
    free(part);
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "cannot allocate %" PRId64 " bytes of columns",
                           (rows + g.cg) * chunk * (int64_t)es);
  }
  for (int64_t n = 0; n < g.n; n++)
    for (int64_t gi = 0; gi < g.group; gi++) {
      const char *xg = (const char *)xd + (size_t)((n * g.c + gi * g.cg) * g.pixels) * es;
      const char *wg = (const char *)wd + (size_t)(gi * g.cg * rows) * es;
      char *yg = (char *)yd + (size_t)((n * g.m + gi * g.mg) * g.out_pixels) * es;
      for (int64_t p0 = 0; p0 < g.pixels; p0 += chunk) {
        int64_t cols = MIN(chunk, g.pixels - p0);
        const void *xs = xg;
        if (part) {
          for (int64_t c = 0; c < g.cg; c++)
            memcpy((char *)part + (size_t)(c * cols) * es, xg + (size_t)(c * g.pixels + p0) * es,
                   (size_t)cols * es);
          xs = part;
        }
        columns(dt, &g, wg, xs, cols, col);
        if (dt == TS_F32)
          col2im_f32(&g, col, p0, cols, (float *)yg);
        else
          col2im_f64(&g, col, p0, cols, (double *)yg);
      }
    }
  free(col);
  free(part);
  return true;
}

/* float16 and bfloat16 (PyTorch's conv_transpose and ONNX take them):
 * widened to float32, computed there, each output rounded once, as
 * Conv2D's (ops/conv.c). */
static bool conv_transpose_half(ts_kernel_ctx *k, const geometry *g)
{
  const ts_tensor *x = k->in[0], *f = k->in[1], *bias = k->n_in == 3 ? k->in[2] : NULL;
  ts_tensor *y = k->out[0];
  ts_widened w;
  if (!ts__widen_f32(x->dtype, 3, (const void *[]){ x->data, f->data, bias ? bias->data : NULL },
                     (int64_t[]){ x->size, f->size, bias ? bias->size : 0 }, y->size, &w))
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "cannot allocate the float32 copies of a %s ConvTranspose",
                           ts_dtype_name(x->dtype));
  bool ok = conv_transpose_compute(k, g, TS_F32, w.in[0], w.in[1], w.in[2], w.out);
  if (ok)
    ts__narrow_f32(x->dtype, y->data, w.out, y->size);
  g_free(w.buf);
  return ok;
}

static bool conv_transpose_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0], *bias = k->n_in == 3 ? k->in[2] : NULL;
  ts_tensor *y = k->out[0];
  geometry g;
  if (y->size == 0)
    return true;
  if (!geometry_checked(k, &g))
    return false;
  if (x->dtype == TS_F16 || x->dtype == TS_BF16)
    return conv_transpose_half(k, &g);
  return conv_transpose_compute(k, &g, x->dtype, x->data, k->in[1]->data, bias ? bias->data : NULL, y->data);
}

#ifdef TS_HAVE_CUDA
/* On CUDA the same two steps: the columns W_g^T X of a chunk of images
 * by cuBLASLt (cuda/gemm.c) into a scratch buffer of the device, as
 * strided batches (with one group, one product per chunk: its images
 * against the same filter; with several, one per image: its groups
 * against theirs), then col2im gathering them into the output
 * (cuda/conv.cu).  Chunks of images keep the columns under
 * CUDA_SCRATCH_BYTES, one image at least (an image's columns past the
 * device's memory: an error saying so). */
#define CUDA_SCRATCH_BYTES ((int64_t)256 << 20)

static bool conv_transpose_cuda(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0], *w = k->in[1], *bias = k->n_in == 3 ? k->in[2] : NULL;
  ts_tensor *y = k->out[0];
  geometry g;
  if (y->size == 0)
    return true;
  if (!geometry_checked(k, &g))
    return false;
  ts_dtype dt = x->dtype;
  size_t es = ts_dtype_size(dt);
  void *stream = ts__cuda_stream(k->backend);
  ts_cu_col2im c = { .group = g.group, .mg = g.mg };
  for (int i = 0; i < SPATIAL_MAX; i++) {
    c.in[i] = g.in[i];
    c.k[i] = g.k[i];
    c.out[i] = g.out[i];
    c.s[i] = g.s[i];
    c.d[i] = g.d[i];
    c.p[i] = g.p[i];
  }
  const void *b = bias ? bias->data : NULL;
  int64_t rows = g.mg * g.taps;
  if (rows == 0 || g.pixels == 0 || g.cg == 0) { /* no taps: the bias (or zeros) */
    c.n = g.n;
    return ts__cu_col2im(dt, &c, NULL, b, y->data, stream) ||
           ts__kernel_fail(k, TS_ERR_UNIMPLEMENTED, "no CUDA kernel for %s", ts_dtype_name(dt));
  }
  int64_t image_bytes;
  if (__builtin_mul_overflow(g.group * rows, g.pixels * (int64_t)es, &image_bytes))
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "the columns of one image (%" PRId64 " x %" PRId64
                           " x %" PRId64 ") overflow", g.group, rows, g.pixels);
  int64_t chunk = MIN(g.n, MAX(CUDA_SCRATCH_BYTES / image_bytes, 1));
  ts_buffer *scratch = ts_buffer_alloc(ts_backend_buffer_type(k->backend), (size_t)(chunk * image_bytes),
                                       TS_BUFFER_USAGE_SCRATCH);
  if (!scratch) {
    ts_error *why = ts_error_take(); /* the op's error says it */
    bool ok = ts__kernel_fail(k, TS_ERR_NO_MEMORY, "%" PRId64 " bytes of columns: %s", chunk * image_bytes,
                              why && why->detail ? why->detail : "out of memory");
    ts_error_free(why);
    return ok;
  }
  char *col = ts_buffer_base(scratch);
  bool ok = true;
  for (int64_t n0 = 0; ok && n0 < g.n; n0 += chunk) {
    int64_t nc = MIN(chunk, g.n - n0);
    const char *xs = (const char *)x->data + (size_t)(n0 * g.c * g.pixels) * es;
    /* image j, group gi: a = W's rows [gi * cg, +cg) [cg, rows] transposed,
     * b = its channels [cg, pixels], c = its columns [rows, pixels] */
    ts_cu_gemm gm = { .dtype = dt, .m = rows, .n = g.pixels, .k = g.cg, .ta = true, .a = w->data,
                      .stride_b = g.cg * g.pixels };
    if (g.group == 1) {
      gm.batch = nc;
      gm.stride_a = 0;
      gm.b = xs;
      gm.c = col;
      ok = ts__cuda_gemm(&gm, stream);
    } else {
      gm.batch = g.group;
      gm.stride_a = g.cg * rows;
      for (int64_t j = 0; ok && j < nc; j++) {
        gm.b = xs + (size_t)(j * g.c * g.pixels) * es;
        gm.c = col + (size_t)(j * image_bytes);
        ok = ts__cuda_gemm(&gm, stream);
      }
    }
    c.n = nc;
    ok = ok && ts__cu_col2im(dt, &c, col, b, (char *)y->data + (size_t)(n0 * g.m * g.out_pixels) * es, stream);
  }
  ts_buffer_free(scratch); /* stream-ordered: after the kernels */
  return ok;
}
#endif

const ts_op_def ts__op_conv_transpose = {
  .op = TS_OP_CONV_TRANSPOSE,
  .name = "ConvTranspose",
  .api_name = "conv_transpose",
  .n_inputs = -1,
  .min_inputs = 2,
  .n_outputs = 1,
  .n_attrs = (int)(sizeof conv_transpose_attrs / sizeof conv_transpose_attrs[0]),
  .attrs = conv_transpose_attrs,
  .infer = conv_transpose_infer,
  .kernel[TS_DEVICE_CPU] = conv_transpose_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(conv_transpose_cuda),
};

ts_tensor *ts_conv_transpose_at(ts_loc loc, ts_tensor *input, ts_tensor *filter, ts_tensor *bias, ts_ints strides,
                                ts_ints dilations, ts_ints pads, ts_ints output_shape, int group)
{
  ts_tensor *in[] = { input, filter, bias };
  ts_attr attrs[] = { TS_ATTR_INTS_(strides), TS_ATTR_INTS_(dilations), TS_ATTR_INTS_(pads),
                      TS_ATTR_INTS_(output_shape), TS_ATTR_I(group) };
  return ts__dispatch1(loc, TS_OP_CONV_TRANSPOSE, in, bias ? 3 : 2, attrs);
}
