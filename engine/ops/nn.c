/* ops/nn.c — Softmax, LogSoftmax and SparseSoftmaxCrossEntropyWithLogits,
 * all over the last axis, in float32, float64, float16 and bfloat16.  Each
 * row subtracts its maximum before exp so large logits do not overflow;
 * exps are summed in f64. */
#include "elementwise.h"
#include "engine-private.h"
#include "kernels/kernels.h"

#include <inttypes.h>
#include <math.h>

/* Softmax (or LogSoftmax) of x [rows, c] into y. */
typedef void (*softmax_fn)(const void *x, void *y, int64_t rows, int64_t c, bool log_out);

/* Loss of each row of x [rows, c] at its label into y [rows]; returns the
 * first row whose label is outside [0, c), or -1. */
typedef int64_t (*xent_fn)(const void *x, const ts_tensor *labels, void *y, int64_t rows,
                           int64_t c);

/* Softmax's block: rows of SOFTMAX_BLOCK elements together, at most
 * SOFTMAX_BLOCK_ROWS (a row longer than the block is a block alone). */
#define SOFTMAX_BLOCK 4096
#define SOFTMAX_BLOCK_ROWS 256

/* exp over rows: f32 on the vector path (kernels/vmath.c: within an ulp,
 * the same bits on every ISA), f64 by libm. */
static void row_exp_f32(float *y, int64_t c)
{
  ts__vexp_f32(y, y, c);
}

static void row_exp_f64(double *y, int64_t c)
{
  for (int64_t j = 0; j < c; j++)
    y[j] = exp(y[j]);
}

#define DEF_NN(sfx, T, EXP)                                                               \
  static T row_max_##sfx(const T *x, int64_t c)                                           \
  {                                                                                       \
    T m = x[0];                                                                           \
    for (int64_t j = 1; j < c; j++)                                                       \
      m = x[j] > m ? x[j] : m;                                                            \
    return m;                                                                             \
  }                                                                                       \
  /* four running sums in f64, not one: a chain of dependent adds was most \
   * of a short row's time */                                                           \
  static double row_sum_##sfx(const T *y, int64_t c)                                      \
  {                                                                                       \
    double s[4] = { 0, 0, 0, 0 };                                                         \
    int64_t j = 0;                                                                        \
    for (; j + 4 <= c; j += 4)                                                            \
      for (int k = 0; k < 4; k++)                                                         \
        s[k] += y[j + k];                                                                 \
    for (; j < c; j++)                                                                    \
      s[0] += y[j];                                                                       \
    return (s[0] + s[1]) + (s[2] + s[3]);                                                 \
  }                                                                                       \
  /* rows a block at a time: each row less its max, then one exp over the  \
   * block (a call per short row cost more than its exps), then each row's \
   * sum */                                                                             \
  static void softmax_##sfx(const void *xv, void *yv, int64_t rows, int64_t c,          \
                            bool log_out)                                                 \
  {                                                                                       \
    const T *restrict x = xv;                                                             \
    T *restrict y = yv;                                                                   \
    T m[SOFTMAX_BLOCK_ROWS];                                                              \
    int64_t block = MAX(1, MIN(SOFTMAX_BLOCK_ROWS, SOFTMAX_BLOCK / c));                   \
    for (int64_t r0 = 0; r0 < rows; r0 += block) {                                        \
      int64_t n = MIN(block, rows - r0);                                                  \
      for (int64_t r = 0; r < n; r++) {                                                   \
        const T *xr = x + (r0 + r) * c;                                                   \
        T *yr = y + (r0 + r) * c;                                                         \
        m[r] = row_max_##sfx(xr, c);                                                      \
        for (int64_t j = 0; j < c; j++)                                                   \
          yr[j] = xr[j] - m[r];                                                           \
      }                                                                                   \
      row_exp_##sfx(y + r0 * c, n * c);                                                   \
      for (int64_t r = 0; r < n; r++) {                                                   \
        const T *xr = x + (r0 + r) * c;                                                   \
        T *yr = y + (r0 + r) * c;                                                         \
        double s = row_sum_##sfx(yr, c);                                                  \
        if (!log_out) {                                                                   \
          for (int64_t j = 0; j < c; j++)                                                 \
            yr[j] = (T)(yr[j] / s);                                                       \
          continue;                                                                       \
        }                                                                                 \
        T ls = (T)log(s);                                                                 \
        for (int64_t j = 0; j < c; j++)                                                   \
          yr[j] = xr[j] - m[r] - ls;                                                      \
      }                                                                                   \
    }                                                                                     \
  }                                                                                       \
  static int64_t xent_##sfx(const void *xv, const ts_tensor *labels, void *yv,           \
                            int64_t rows, int64_t c)                                      \
  {                                                                                       \
    const T *restrict x = xv;                                                             \
    T *restrict y = yv;                                                                   \
    for (int64_t r = 0; r < rows; r++, x += c) {                                          \
      int64_t label = ts__load_i64(labels->dtype, labels->data, r);                       \
      if (label < 0 || label >= c)                                                        \
        return r;                                                                         \
      T m = row_max_##sfx(x, c);                                                          \
      double s = 0;                                                                       \
      for (int64_t j = 0; j < c; j++)                                                     \
        s += EXP(x[j] - m);                                                               \
      y[r] = (T)(log(s) - (double)(x[label] - m));                                        \
    }                                                                                     \
    return -1;                                                                            \
  }
DEF_NN(f32, float, expf)
DEF_NN(f64, double, exp)

/* 16-bit floats, as TensorFlow's Softmax takes them: each row widened to
 * float (max and exps in float, their sum in f64, as the f32 rows), each
 * output rounded once from the exact quotient or difference.  The exps are
 * taken twice (for the sum, then the output) rather than kept in a buffer. */
#define DEF_NN_HALF(sfx, H, WIDEN, NARROW)                                                \
  static float row_max_##sfx(const H *x, int64_t c)                                       \
  {                                                                                       \
    float m = WIDEN(x[0]);                                                                \
    for (int64_t j = 1; j < c; j++)                                                       \
      m = WIDEN(x[j]) > m ? WIDEN(x[j]) : m;                                              \
    return m;                                                                             \
  }                                                                                       \
  static double row_sum_exp_##sfx(const H *x, int64_t c, float m)                         \
  {                                                                                       \
    double s = 0;                                                                         \
    for (int64_t j = 0; j < c; j++)                                                       \
      s += expf(WIDEN(x[j]) - m);                                                         \
    return s;                                                                             \
  }                                                                                       \
  static void softmax_##sfx(const void *xv, void *yv, int64_t rows, int64_t c,          \
                            bool log_out)                                                 \
  {                                                                                       \
    const H *restrict x = xv;                                                             \
    H *restrict y = yv;                                                                   \
    for (int64_t r = 0; r < rows; r++, x += c, y += c) {                                  \
      float m = row_max_##sfx(x, c);                                                      \
      double s = row_sum_exp_##sfx(x, c, m);                                              \
      double ls = log(s);                                                                 \
      for (int64_t j = 0; j < c; j++)                                                     \
        y[j] = NARROW(log_out ? (double)(WIDEN(x[j]) - m) - ls                            \
                              : (double)expf(WIDEN(x[j]) - m) / s);                       \
    }                                                                                     \
  }                                                                                       \
  static int64_t xent_##sfx(const void *xv, const ts_tensor *labels, void *yv,           \
                            int64_t rows, int64_t c)                                      \
  {                                                                                       \
    const H *restrict x = xv;                                                             \
    H *restrict y = yv;                                                                   \
    for (int64_t r = 0; r < rows; r++, x += c) {                                          \
      int64_t label = ts__load_i64(labels->dtype, labels->data, r);                       \
      if (label < 0 || label >= c)                                                        \
        return r;                                                                         \
      float m = row_max_##sfx(x, c);                                                      \
      y[r] = NARROW(log(row_sum_exp_##sfx(x, c, m)) - (double)(WIDEN(x[label]) - m));     \
    }                                                                                     \
    return -1;                                                                            \
  }
DEF_NN_HALF(f16, ts_f16, ts__f16_to_f32, ts__f64_to_f16)
DEF_NN_HALF(bf16, ts_bf16, ts__bf16_to_f32, ts__f64_to_bf16)

static const softmax_fn SOFTMAX_FNS[TS_DTYPE_COUNT] = {
  [TS_F32] = softmax_f32,
  [TS_F64] = softmax_f64,
  [TS_F16] = softmax_f16,
  [TS_BF16] = softmax_bf16,
};
static const xent_fn XENT_FNS[TS_DTYPE_COUNT] = {
  [TS_F32] = xent_f32, [TS_F64] = xent_f64, [TS_F16] = xent_f16, [TS_BF16] = xent_bf16,
};

/* Logits must be float with at least one dimension. */
static bool check_logits(ts_infer_ctx *c, ts_info x)
{
  char buf[TS_INFO_STR];
  if (!SOFTMAX_FNS[x.dtype])
    return ts__infer_fail(c, TS_ERR_DTYPE,
                          "logits must be float32, float64, float16 or bfloat16, got %s",
                          ts__info_str(buf, x.dtype, x.shape));
  if (x.shape.rank < 1)
    return ts__infer_fail(c, TS_ERR_SHAPE, "logits must have at least one dimension, got %s",
                          ts__info_str(buf, x.dtype, x.shape));
  return true;
}

static bool softmax_infer(ts_infer_ctx *c)
{
  if (!check_logits(c, c->in[0]))
    return false;
  c->out[0] = c->in[0];
  return true;
}

typedef struct softmax_job {
  softmax_fn fn;
  const char *x;
  char *y;
  int64_t cols;
  size_t row_bytes;
  bool log_out;
} softmax_job;

static void softmax_range(void *ctx, int64_t begin, int64_t end)
{
  const softmax_job *j = ctx;
  j->fn(j->x + (size_t)begin * j->row_bytes, j->y + (size_t)begin * j->row_bytes, end - begin,
        j->cols, j->log_out);
}

/* Rows are independent and each row's exps the same wherever a block
 * starts (vmath's are per lane), so ranges of rows run on the pool as an
 * exp-costly elementwise op's would, with the same bits at every width. */
static bool softmax_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  int64_t cols = x->shape.dim[x->shape.rank - 1];
  if (x->size == 0)
    return true;
  softmax_job j = { SOFTMAX_FNS[x->dtype], x->data, k->out[0]->data, cols,
                    (size_t)cols * ts_dtype_size(x->dtype), k->def->op == TS_OP_LOG_SOFTMAX };
  ts__parallel_range(x->size / cols, MAX(1, TS_EW_GRAIN_COSTLY / cols), softmax_range, &j);
  return true;
}

/* dx = (g - sum(g y)) y over the last axis */
static bool softmax_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                         ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *y = out[0];
  ts_tensor *dot = ts_reduce_sum_at(l, ts_mul_at(l, g[0], y), TS_AXES(-1), true);
  return (gi[0] = ts_mul_at(l, ts_sub_at(l, g[0], dot), y)) != NULL;
}

/* dx = g - exp(y) sum(g) over the last axis */
static bool log_softmax_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                             ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *sum = ts_reduce_sum_at(l, g[0], TS_AXES(-1), true);
  return (gi[0] = ts_sub_at(l, g[0], ts_mul_at(l, ts_exp_at(l, out[0]), sum))) != NULL;
}

const ts_op_def ts__op_softmax = {
  .op = TS_OP_SOFTMAX, .name = "Softmax", .api_name = "softmax", .n_inputs = 1,
  .n_outputs = 1, .infer = softmax_infer, .kernel[TS_DEVICE_CPU] = softmax_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_softmax),
  .grad = softmax_grad,
};

const ts_op_def ts__op_log_softmax = {
  .op = TS_OP_LOG_SOFTMAX, .name = "LogSoftmax", .api_name = "log_softmax", .n_inputs = 1,
  .n_outputs = 1, .infer = softmax_infer, .kernel[TS_DEVICE_CPU] = softmax_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_softmax),
  .grad = log_softmax_grad,
};

ts_tensor *ts_softmax_at(ts_loc loc, ts_tensor *logits)
{
  return ts__dispatch1(loc, TS_OP_SOFTMAX, &logits, 1, NULL);
}

ts_tensor *ts_log_softmax_at(ts_loc loc, ts_tensor *logits)
{
  return ts__dispatch1(loc, TS_OP_LOG_SOFTMAX, &logits, 1, NULL);
}

/* labels [...] (i32/i64) and logits [..., C] (float) -> loss [...] of the logits' dtype. */
static bool xent_infer(ts_infer_ctx *c)
{
  char lb[TS_INFO_STR], gb[TS_INFO_STR];
  ts_info labels = c->in[0], logits = c->in[1];
  if (labels.dtype != TS_I32 && labels.dtype != TS_I64)
    return ts__infer_fail(c, TS_ERR_DTYPE, "labels must be int32 or int64, got %s",
                          ts__info_str(lb, labels.dtype, labels.shape));
  if (!check_logits(c, logits))
    return false;

  ts_shape out = labels.shape;
  bool ok = labels.shape.rank == logits.shape.rank - 1;
  for (int d = 0; ok && d < out.rank; d++) {
    int64_t a = labels.shape.dim[d], b = logits.shape.dim[d];
    ok = a < 0 || b < 0 || a == b;
    out.dim[d] = a >= 0 ? a : b;
  }
  if (!ok)
    return ts__infer_fail(c, TS_ERR_SHAPE,
                          "labels shape must equal logits shape without its last dimension: "
                          "labels %s, logits %s",
                          ts__info_str(lb, labels.dtype, labels.shape),
                          ts__info_str(gb, logits.dtype, logits.shape));
  c->out[0] = (ts_info){ .dtype = logits.dtype, .shape = out };
  return true;
}

static bool xent_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *labels = k->in[0], *logits = k->in[1];
  int64_t cols = logits->shape.dim[logits->shape.rank - 1];
  int64_t bad = XENT_FNS[logits->dtype](logits->data, labels, k->out[0]->data, labels->size, cols);
  if (bad < 0)
    return true;
  char buf[TS_INFO_STR];
  return ts__kernel_fail(k, TS_ERR_OUT_OF_RANGE,
                         "Received a label value of %" PRId64
                         " which is outside the valid range of [0, %" PRId64 ") "
                         "(element %" PRId64 " of labels %s)",
                         ts__load_i64(labels->dtype, labels->data, bad), cols, bad,
                         ts__info_str(buf, labels->dtype, labels->shape));
}

/* d loss / d logits = (softmax(logits) - onehot(labels)) g; none to the labels. */
static bool xent_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                      ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *labels = c->in[0], *logits = c->in[1];
  int64_t classes = logits->shape.dim[logits->shape.rank - 1];
  if (classes < 0) {
    ts_error_set(TS_ERR_UNIMPLEMENTED, l, "SparseSoftmaxCrossEntropyWithLogits",
                 "its gradient needs the number of classes (the logits' last dim) known");
    return false;
  }
  ts_shape column = labels->shape;
  column.dim[column.rank++] = 1;
  ts_tensor *classes_range = ts_range_at(l, labels->dtype, 0, (double)classes, 1);
  ts_tensor *onehot = ts__grad_mask(l, ts_equal_at(l, ts__grad_reshape(l, labels, column),
                                                   classes_range), logits->dtype);
  ts_tensor *d = ts_sub_at(l, ts_softmax_at(l, logits), onehot);
  return (gi[1] = ts_mul_at(l, d, ts__grad_reshape(l, g[0], column))) != NULL;
}

const ts_op_def ts__op_sparse_softmax_cross_entropy = {
  .op = TS_OP_SPARSE_SOFTMAX_CROSS_ENTROPY, .name = "SparseSoftmaxCrossEntropyWithLogits",
  .api_name = "sparse_softmax_cross_entropy", .n_inputs = 2, .n_outputs = 1,
  .infer = xent_infer, .kernel[TS_DEVICE_CPU] = xent_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_xent), .grad = xent_grad,
};

ts_tensor *ts_sparse_softmax_cross_entropy_at(ts_loc loc, ts_tensor *labels, ts_tensor *logits)
{
  ts_tensor *in[] = { labels, logits };
  return ts__dispatch1(loc, TS_OP_SPARSE_SOFTMAX_CROSS_ENTROPY, in, 2, NULL);
}

/* ---- Dropout: composed of ops, as tf.nn.dropout is ------------------------------- */

/* A scalar of dtype (float32 or float64) holding v. */
static ts_tensor *float_scalar(ts_dtype dtype, double v)
{
  return dtype == TS_F32 ? ts_scalar_f32((float)v) : ts_scalar_f64(v);
}

ts_tensor *ts_dropout_at(ts_loc loc, ts_tensor *x, double rate, bool training, uint64_t seed)
{
  return ts_dropout_stream_at(loc, x, rate, training, seed, NULL);
}

ts_tensor *ts_dropout_stream_at(ts_loc loc, ts_tensor *x, double rate, bool training,
                                uint64_t seed, ts_tensor *counter)
{
  if (!x)
    return ts_identity_at(loc, x); /* reports the missing input as every op does */
  char buf[TS_INFO_STR];
  ts_dtype dt = ts_tensor_dtype(x);
  ts_shape shape = ts_tensor_shape(x);
  if (!(rate >= 0 && rate < 1)) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, "Dropout", "rate must be in [0, 1), got %g", rate);
    return NULL;
  }
  if (!ts_dtype_is_float(dt)) {
    ts_error_set(TS_ERR_DTYPE, loc, "Dropout", "x must be float32 or float64, got %s",
                 ts__info_str(buf, dt, shape));
    return NULL;
  }
  if (!training || rate == 0)
    return ts_identity_at(loc, x);
  for (int d = 0; d < shape.rank; d++)
    if (shape.dim[d] < 0) {
      ts_error_set(TS_ERR_SHAPE, loc, "Dropout", "training needs a fully known shape, got %s",
                   ts__info_str(buf, dt, shape));
      return NULL;
    }
  /* keep where uniform [0, 1) >= rate, as tf.nn.dropout does */
  ts_tensor *noise = counter ? ts_stateless_random_uniform_at(loc, dt, shape, 0, 1, seed, counter)
                            : ts_random_uniform_at(loc, dt, shape, 0, 1, seed);
  ts_tensor *keep = ts_cast_at(loc, ts_greater_equal_at(loc, noise, float_scalar(dt, rate)), dt);
  return ts_mul_at(loc, ts_mul_at(loc, x, float_scalar(dt, 1 / (1 - rate))), keep);
}
