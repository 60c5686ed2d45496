/* bench-kernels.c — the kernels the engine chose on this CPU: the CPU as
 * cpuid reports it, the OpenBLAS core loaded, and for the seed workloads'
 * GEMM shapes and 3x3 convolutions (the seed's and a few around it) the
 * kernel picked, the times of each candidate that picked it
 * (kernels/tune.c: implicit GEMM, im2col + OpenBLAS, Winograd), and the
 * op's time per call through the engine (median of several batches after
 * warm-up); and the f32 exp, tanh and sigmoid kernels (kernels/vmath*.c)
 * per path against libm's scalar float functions, in ns per element. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>

#include "kernels/kernels.h"

#define REPEATS 7

typedef ts_tensor *(*op_fn)(ts_tensor *const *in);

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median µs per call of op over REPEATS batches of iters calls; -1 on error. */
static double median_us(op_fn op, ts_tensor *const *in, int iters)
{
  double t[REPEATS];
  for (int r = -1; r < REPEATS; r++) { /* r = -1: warm-up (and the kernel choice) */
    uint64_t t0 = ts_now_ns();
    for (int i = 0; i < iters; i++) {
      ts_scope *s = ts_scope_begin();
      ts_tensor *out = op(in);
      ts_scope_end(s);
      if (!out)
        return -1;
    }
    if (r >= 0)
      t[r] = (double)(ts_now_ns() - t0) / iters / 1e3;
  }
  qsort(t, REPEATS, sizeof t[0], cmp_double);
  return t[REPEATS / 2];
}

static ts_tensor *matmul_op(ts_tensor *const *in)
{
  return ts_matmul(in[0], in[1]);
}

static ts_padding conv_padding = TS_PADDING_VALID;

static ts_tensor *conv_op(ts_tensor *const *in)
{
  return ts_conv2d(in[0], in[1], 1, 1, conv_padding);
}

static ts_tensor *conv_bias_relu(ts_call *c)
{
  return ts_relu(ts_add(ts_conv2d(ts_arg(c, 0), ts_arg(c, 1), 1, 1, TS_PADDING_VALID), ts_arg(c, 2)));
}

static ts_function *fused_fn;

static ts_tensor *fused_conv_op(ts_tensor *const *in)
{
  ts_value args[] = { TS_TENSOR_VALUE(in[0]), TS_TENSOR_VALUE(in[1]), TS_TENSOR_VALUE(in[2]) };
  return ts_function_call(fused_fn, args, 3);
}

static void row(const char *label, double us, const char *note)
{
  if (us < 0) {
    ts_error *e = ts_error_take();
    printf("  %-44s %12s      %s\n", label, "failed", e ? e->message : "");
    ts_error_free(e);
    return;
  }
  printf("  %-44s %12.2f µs   %s\n", label, us, note);
}

/* The seed workloads' products (M x K x N): Dense layers of
 * sequential_model, the LSTM cell's gates, power's 10x10 chain, and a few
 * mid sizes around them. */
static const struct {
  int64_t m, k, n;
  const char *note;
} GEMMS[] = {
  { 20, 784, 64, "sequential_model: first Dense(64)" },
  { 20, 64, 64, "sequential_model: the other 99 Dense(64)" },
  { 20, 64, 10, "a Dense(10) head" },
  { 10, 10, 40, "LSTM cell: input and state x the 4 gates" },
  { 10, 10, 10, "power: 10x10 chain" },
  { 60, 128, 128, "mid" },
  { 40, 256, 32, "mid" },
  { 64, 512, 100, "mid" },
};

/* 3x3 stride-1 convolutions, f32[n, hw, hw, c] -> o channels: the seed's
 * SAME twin and channel counts around it (Winograd's shapes). */
static const struct {
  int64_t n, hw, c, o;
  ts_padding padding;
  const char *note;
} CONVS[] = {
  { 1, 64, 100, 100, TS_PADDING_SAME, "the seed conv, SAME" },
  { 1, 32, 64, 64, TS_PADDING_SAME, "mid" },
  { 4, 16, 128, 128, TS_PADDING_SAME, "batch 4" },
  { 1, 15, 256, 256, TS_PADDING_VALID, "odd size, many channels" },
  { 1, 56, 16, 24, TS_PADDING_SAME, "few channels" },
};

/* ---- f32 exp, tanh, sigmoid ------------------------------------------------ */

#define VMATH_N 4096

/* What the ops computed before the kernels: libm's float functions. */
static void libm_exp(const float *x, float *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = expf(x[i]);
}

static void libm_tanh(const float *x, float *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = tanhf(x[i]);
}

static void libm_sigmoid(const float *x, float *y, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = 1 / (1 + expf(-x[i]));
}

static const ts_vmath_kernel libm_path = { "libm (scalar expf, tanhf)", libm_exp, libm_tanh, libm_sigmoid, NULL };

/* Median ns per element of f over VMATH_N values, REPEATS batches. */
static double vmath_ns(ts_vmath_fn f, const float *x, float *y)
{
  const int iters = 500;
  double t[REPEATS];
  for (int r = -1; r < REPEATS; r++) { /* r = -1: warm-up */
    uint64_t t0 = ts_now_ns();
    for (int i = 0; i < iters; i++)
      f(x, y, VMATH_N);
    if (r >= 0)
      t[r] = (double)(ts_now_ns() - t0) / iters / VMATH_N;
  }
  qsort(t, REPEATS, sizeof t[0], cmp_double);
  return t[REPEATS / 2];
}

static void bench_vmath(void)
{
  const ts_vmath_kernel *paths[] = { &ts__vmath_avx512, &ts__vmath_avx2, &ts__vmath_c, &libm_path };
  float *x = g_new(float, VMATH_N), *y = g_new(float, VMATH_N);
  GRand *r = g_rand_new_with_seed(8);
  for (int i = 0; i < VMATH_N; i++)
    x[i] = (float)g_rand_double_range(r, -8, 8); /* where LSTM gates live, and then some */
  g_rand_free(r);
  printf("\nf32 exp, tanh, sigmoid over %d values in [-8, 8], ns per element (best path: %s)\n",
         VMATH_N, ts__vmath_best()->name);
  printf("  %-28s %10s %10s %10s\n", "path", "exp", "tanh", "sigmoid");
  for (size_t p = 0; p < G_N_ELEMENTS(paths); p++) {
    if (paths[p]->usable && !paths[p]->usable(ts__cpu())) {
      printf("  %-28s %32s\n", paths[p]->name, "not on this CPU");
      continue;
    }
    printf("  %-28s %10.3f %10.3f %10.3f\n", paths[p]->name, vmath_ns(paths[p]->vexp, x, y),
           vmath_ns(paths[p]->vtanh, x, y), vmath_ns(paths[p]->vsigmoid, x, y));
  }
  g_free(x);
  g_free(y);
}

int main(void)
{
  printf("Kernels on this machine\n  CPU:  %s\n", ts_cpu_description());
  printf("  BLAS: %s\n", ts_blas_description());

  printf("\nf32 matmul through the engine (eager, per call)\n");
  ts_scope *scope = ts_scope_begin();
  for (size_t i = 0; i < G_N_ELEMENTS(GEMMS); i++) {
    ts_tensor *in[] = { ts_random_uniform(TS_F32, TS_SHAPE(GEMMS[i].m, GEMMS[i].k), -1, 1, 1),
                        ts_random_uniform(TS_F32, TS_SHAPE(GEMMS[i].k, GEMMS[i].n), -1, 1, 2) };
    char label[64];
    snprintf(label, sizeof label, "matmul %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT,
             GEMMS[i].m, GEMMS[i].k, GEMMS[i].n);
    row(label, median_us(matmul_op, in, 2000), GEMMS[i].note);
  }

  printf("\nconv 3x3, 100 -> 100 channels, f32[1,64,64,100] (VALID), per call\n");
  ts_tensor *cin[] = { ts_random_uniform(TS_F32, TS_SHAPE(1, 64, 64, 100), -1, 1, 3),
                       ts_random_uniform(TS_F32, TS_SHAPE(3, 3, 100, 100), -0.1, 0.1, 4),
                       ts_random_uniform(TS_F32, TS_SHAPE(100), -1, 1, 5) };
  row("Conv2D (eager)", median_us(conv_op, cin, 5), "the kernel chosen below");
  fused_fn = ts_function_new("conv_bias_relu", conv_bias_relu, "x, f, b");
  row("Conv2D + bias + Relu (graph: _FusedConv2D)", median_us(fused_conv_op, cin, 5),
      "epilogue in the tile store");
  ts_tensor *gin[] = { ts_random_uniform(TS_F32, TS_SHAPE(62 * 62, 900), -1, 1, 6),
                       ts_random_uniform(TS_F32, TS_SHAPE(900, 100), -1, 1, 7) };
  row("its GEMM alone: matmul 3844x900x100", median_us(matmul_op, gin, 5),
      "the product any lowering computes (kernel chosen below)");
  ts_function_free(fused_fn);

  printf("\nconv 3x3 stride 1 (eager, per call)\n");
  for (size_t i = 0; i < G_N_ELEMENTS(CONVS); i++) {
    ts_tensor *in[] = {
      ts_random_uniform(TS_F32, TS_SHAPE(CONVS[i].n, CONVS[i].hw, CONVS[i].hw, CONVS[i].c), -1, 1, 8),
      ts_random_uniform(TS_F32, TS_SHAPE(3, 3, CONVS[i].c, CONVS[i].o), -0.1, 0.1, 9) };
    char label[64];
    snprintf(label, sizeof label, "conv %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
             "x%" G_GINT64_FORMAT " -> %" G_GINT64_FORMAT " %s", CONVS[i].n, CONVS[i].hw, CONVS[i].hw,
             CONVS[i].c, CONVS[i].o, CONVS[i].padding == TS_PADDING_SAME ? "SAME" : "VALID");
    conv_padding = CONVS[i].padding;
    row(label, median_us(conv_op, in, 5), CONVS[i].note);
  }
  ts_scope_end(scope);

  char *choices = ts_kernel_choices();
  printf("\nKernel chosen per shape (timed on first sight: the fastest of each candidate's runs)\n");
  for (char *line = strtok(choices, "\n"); line; line = strtok(NULL, "\n"))
    printf("  %s\n", line);
  free(choices);

  bench_vmath();
  return 0;
}
