/* kernels/gemm.c — f32 and f64 GEMM with a bias + activation epilogue: our
 * tile kernels walked over C (blocks of rows on the engine's pool for
 * large products), OpenBLAS, and the per-shape choice between them.
 * Shapes past OWN_MAX_MACS go to OpenBLAS untimed: without blocking K our
 * tiles fall behind there, and timing so large a product costs too much. */
#include "kernels.h"

#include <glib.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../tracescope.h"

#define OWN_MAX_MACS ((int64_t)1 << 30)

int ts__act_of_op(int op)
{
  switch (op) {
  case TS_OP_RELU: return TS_ACT_RELU;
  case TS_OP_SIGMOID: return TS_ACT_SIGMOID;
  case TS_OP_TANH: return TS_ACT_TANH;
  default: return -1;
  }
}

void ts__tile_act_rows(const ts_tile *t)
{
  if (t->act == TS_ACT_SIGMOID || t->act == TS_ACT_TANH)
    for (int i = 0; i < t->rows; i++)
      ts__act_f32(t->act, t->c + i * t->ldc, t->cols);
}

int ts__act_from_name(const char *name)
{
  static const struct {
    const char *name;
    ts_act act;
  } acts[] = { { "", TS_ACT_NONE }, { "Relu", TS_ACT_RELU }, { "Sigmoid", TS_ACT_SIGMOID },
               { "Tanh", TS_ACT_TANH } };
  for (size_t i = 0; i < G_N_ELEMENTS(acts); i++)
    if (strcmp(name ? name : "", acts[i].name) == 0)
      return (int)acts[i].act;
  return -1;
}

/* The computations of the unfused ops (ops/unary.c), so fusing changes no
 * bit: f32 sigmoid and tanh on the array kernels (vmath.c), f64 on libm. */
#define SIGMOID_f32(x, n) ts__vsigmoid_f32(x, x, n)
#define TANH_f32(x, n) ts__vtanh_f32(x, x, n)
#define SIGMOID_f64(x, n)                                                    \
  for (int64_t i = 0; i < n; i++)                                            \
    x[i] = 1 / (1 + exp(-x[i]))
#define TANH_f64(x, n)                                                       \
  for (int64_t i = 0; i < n; i++)                                            \
    x[i] = tanh(x[i])

#define ACT(T, sfx)                                                          \
  void ts__act_##sfx(ts_act act, T *x, int64_t n)                            \
  {                                                                          \
    switch (act) {                                                           \
    case TS_ACT_NONE: break;                                                 \
    case TS_ACT_RELU:                                                        \
      for (int64_t i = 0; i < n; i++)                                        \
        x[i] = x[i] < 0 ? 0 : x[i];                                          \
      break;                                                                 \
    case TS_ACT_SIGMOID: SIGMOID_##sfx(x, n); break;                         \
    case TS_ACT_TANH: TANH_##sfx(x, n); break;                               \
    }                                                                        \
  }
ACT(float, f32)
ACT(double, f64)

static const ts_tile_kernel *const tile_kernels[] = { &ts__tile_avx512, &ts__tile_avx2, &ts__tile_c };

const ts_tile_kernel *ts__tile_best(void)
{
  for (size_t i = 0; i < G_N_ELEMENTS(tile_kernels); i++)
    if (tile_kernels[i]->usable(ts__cpu()))
      return tile_kernels[i];
  return &ts__tile_c;
}

/* C rows all the bias (or zero) before the product adds into them. */
#define FILL_BIAS(T, sfx)                                                     \
  static void fill_bias_##sfx(T *c, const T *bias, int64_t m, int64_t n)     \
  {                                                                          \
    for (int64_t i = 0; i < m; i++)                                          \
      if (bias)                                                              \
        memcpy(c + i * n, bias, sizeof(T) * (size_t)n);                      \
      else                                                                   \
        memset(c + i * n, 0, sizeof(T) * (size_t)n);                         \
  }
FILL_BIAS(float, f32)
FILL_BIAS(double, f64)

/* Rows per piece of work, columns of B kept in L2 together, and the size
 * from which the pieces go to the pool (ts_parallel_for: each C element is
 * one tile's, summed in one order, so the bits never depend on threads).
 * 1M multiply-adds take ~8 µs on one core, the pool's hand-off about one:
 * a transformer layer's 128x64x192 projection takes 13 µs on one thread,
 * 8.5 on two. */
#define ROW_BLOCK 64
#define B_CHUNK_BYTES ((int64_t)256 << 10)
#define PARALLEL_MACS ((int64_t)1 << 20)

typedef struct gemm_job {
  const ts_tile_kernel *kern;
  const ts_gemm *g;
  const float *a, *b;   /* A, and op(B) [k,n] rows contiguous */
  int64_t a_row, a_step; /* op(A)(i, p) at a[i * a_row + p * a_step] */
  int64_t chunk;        /* columns per chunk */
  int64_t n_chunks, n_blocks;
} gemm_job;

/* One row block against one column chunk; parts go chunk by chunk, so
 * threads share the chunk of B they read. */
static void gemm_part(void *ctx, int64_t part)
{
  const gemm_job *job = ctx;
  const ts_tile_kernel *kern = job->kern;
  const ts_gemm *g = job->g;
  int64_t n = g->n, k = g->k;
  int64_t j_start = part / job->n_blocks * job->chunk, j_end = MIN(n, j_start + job->chunk);
  int64_t i_start = part % job->n_blocks * ROW_BLOCK, i_end = MIN(g->m, i_start + ROW_BLOCK);
  const float *bias = g->bias;
  const float *rows[TS_TILE_MAX_ROWS];
  ts_tile t = { .n_seg = 1, .k = k, .a = rows, .a_step = job->a_step, .ldb = n, .ldc = n,
                .act = g->act };
  for (int64_t i0 = i_start; i0 < i_end; i0 += kern->rows) {
    t.rows = (int)MIN(kern->rows, i_end - i0);
    for (int i = 0; i < t.rows; i++)
      rows[i] = job->a + (i0 + i) * job->a_row;
    for (int64_t j0 = j_start; j0 < j_end; j0 += kern->cols) {
      t.cols = (int)MIN(kern->cols, j_end - j0);
      t.b = job->b + j0;
      t.bias = bias ? bias + j0 : NULL;
      t.c = (float *)g->c + i0 * n + j0;
      kern->run(&t);
    }
  }
}

/* dst [cols, rows] = src [rows, cols] transposed, in square blocks whose
 * source and destination lines both stay in L1: element by element down
 * whole columns, every store of a wide matrix went to a line of its own
 * (dX = dY W^T's W^T in a training step's backward pass). */
#define TRANSPOSE_BLOCK 16
static void transpose_f32(const float *restrict src, float *restrict dst, int64_t rows, int64_t cols)
{
  for (int64_t r0 = 0; r0 < rows; r0 += TRANSPOSE_BLOCK)
    for (int64_t c0 = 0; c0 < cols; c0 += TRANSPOSE_BLOCK) {
      int64_t r1 = MIN(rows, r0 + TRANSPOSE_BLOCK), c1 = MIN(cols, c0 + TRANSPOSE_BLOCK);
      for (int64_t c = c0; c < c1; c++)
        for (int64_t r = r0; r < r1; r++)
          dst[c * rows + r] = src[r * cols + c];
    }
}

void ts__gemm_f32_with(const ts_tile_kernel *kern, const ts_gemm *g)
{
  int64_t m = g->m, n = g->n, k = g->k;
  float *c = g->c;
  const float *a = g->a, *b = g->b, *bias = g->bias;
  if (k == 0) {
    fill_bias_f32(c, bias, m, n);
    ts__act_f32(g->act, c, m * n);
    return;
  }
  /* the tiles read a transposed A down its columns, and rows of op(B): a
   * transposed B is copied */
  float *bt = NULL;
  if (g->tb) {
    b = bt = g_new(float, (size_t)(k * n));
    transpose_f32(g->b, bt, n, k);
  }
  gemm_job job = { kern, g, a, b, g->ta ? 1 : k, g->ta ? m : 1, 0, 0, 0 };
  /* columns in chunks whose K x chunk of B stays in L2 while every row block passes */
  int64_t fit = B_CHUNK_BYTES / (k * (int64_t)sizeof(float)) / kern->cols * kern->cols;
  job.chunk = MAX(fit, kern->cols);
  job.n_chunks = (n + job.chunk - 1) / job.chunk;
  job.n_blocks = (m + ROW_BLOCK - 1) / ROW_BLOCK;
  int64_t parts = job.n_chunks * job.n_blocks;
  if (m * n * k >= PARALLEL_MACS)
    ts_parallel_for(parts, gemm_part, &job);
  else
    for (int64_t part = 0; part < parts; part++)
      gemm_part(&job, part);
  g_free(bt);
}

void ts__gemm_f32_blas(const ts_gemm *g)
{
  float *c = g->c;
  if (!g->bias && g->act == TS_ACT_NONE && g->k > 0) { /* a plain MatMul: nothing around the call */
    ts__blas_sgemm(g->ta, g->tb, (int)g->m, (int)g->n, (int)g->k, g->a, (int)(g->ta ? g->m : g->k),
                   g->b, (int)(g->tb ? g->k : g->n), 0.0f, c, (int)g->n);
    return;
  }
  if (g->bias || g->k == 0)
    fill_bias_f32(c, g->bias, g->m, g->n);
  if (g->k > 0)
    ts__blas_sgemm(g->ta, g->tb, (int)g->m, (int)g->n, (int)g->k, g->a, (int)(g->ta ? g->m : g->k),
                   g->b, (int)(g->tb ? g->k : g->n), g->bias ? 1.0f : 0.0f, c, (int)g->n);
  ts__act_f32(g->act, c, g->m * g->n);
}

static void own_f32(const void *g)
{
  ts__gemm_f32_with(ts__tile_best(), g);
}

static void blas_f32(const void *g)
{
  ts__gemm_f32_blas(g);
}

/* "own avx512 8x32": the candidate's name in ts_kernel_choices(). */
static char own_text[48];
static pthread_once_t own_once = PTHREAD_ONCE_INIT;

static void make_own_label(void)
{
  const ts_tile_kernel *k = ts__tile_best();
  snprintf(own_text, sizeof own_text, "own %s %dx%d", k->name, k->rows, k->cols);
}

const char *ts__own_label(void)
{
  pthread_once(&own_once, make_own_label);
  return own_text;
}

/* The thread's last product shape and its kernel: a chain of one shape
 * (power's 100 matmuls, a model's layers) skips the choice's lookup.
 * initial-exec TLS: a plain %fs load, where a shared library's default
 * model calls __tls_get_addr on every access. */
static _Thread_local __attribute__((tls_model("initial-exec"))) struct {
  int64_t m, n, k;
  bool ta, tb;
  int pick;
} last_mm = { .pick = -1 };

static void wide_f32(const void *g)
{
  ts__gemm_f32_with(&ts__tile_avx512_wide, g);
}

/* A GEMM's candidates on this CPU, in the tuner's order: our best tile,
 * our wide one where it runs, OpenBLAS where it loaded. */
/* OpenBLAS is chosen only when it beats our tiles by more than this: ours
 * add the bias and activation in their registers (OpenBLAS's are passes
 * of their own over C, which a GEMM timed alone in a hot cache hardly
 * shows: the 100 Dense layers of the seeds run 5% faster on our tile than
 * on OpenBLAS, which alone times 5% faster), and compute a row as the
 * whole product would, which lets a batch split across threads. */
#define BLAS_MARGIN 1.10

static struct {
  int n;
  ts_tune_fn fn[TS_TUNE_MAX];
  const char *name[TS_TUNE_MAX];
  double weight[TS_TUNE_MAX];
  bool own[TS_TUNE_MAX];
  char wide_name[48];
} cands;
static pthread_once_t cands_once = PTHREAD_ONCE_INIT;

static void add_candidate(ts_tune_fn fn, const char *name, bool own)
{
  cands.fn[cands.n] = fn;
  cands.name[cands.n] = name;
  cands.weight[cands.n] = own ? 1.0 : BLAS_MARGIN;
  cands.own[cands.n++] = own;
}

static void make_candidates(void)
{
  add_candidate(own_f32, ts__own_label(), true);
  const ts_tile_kernel *w = &ts__tile_avx512_wide;
  if (w->usable(ts__cpu()) && w != ts__tile_best()) {
    snprintf(cands.wide_name, sizeof cands.wide_name, "own %s %dx%d", w->name, w->rows, w->cols);
    add_candidate(wide_f32, cands.wide_name, true);
  }
  if (ts__blas_available())
    add_candidate(blas_f32, "OpenBLAS", false);
}

/* "matmul 20x784x64 transpose_b": M x K x N */
static void matmul_label(const ts_tune_key *key, char *buf, size_t size)
{
  snprintf(buf, size, "matmul %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "%s%s",
           key->dim[0], key->dim[1], key->dim[2], key->dim[3] ? " transpose_a" : "",
           key->dim[4] ? " transpose_b" : "");
}

void ts__gemm_f32(const ts_gemm *g)
{
  int64_t m = MAX(g->m, ts__tune_rows); /* the choice of the whole batch */
  if (last_mm.pick >= 0 && last_mm.m == m && last_mm.n == g->n && last_mm.k == g->k &&
      last_mm.ta == g->ta && last_mm.tb == g->tb) {
    if (!ts__tune_only)
      cands.fn[last_mm.pick](g);
    return;
  }
  pthread_once(&cands_once, make_candidates);
  bool too_big = m * g->n * g->k > OWN_MAX_MACS;
  if (cands.n == 1 || too_big) { /* no choice to make */
    if (!ts__tune_only)
      (too_big && ts__blas_available() ? blas_f32 : own_f32)(g);
    return;
  }
  ts_tune_key key = { "matmul", { m, g->k, g->n, g->ta, g->tb } };
  bool ran;
  int pick = ts__tune_weighted(&key, matmul_label, cands.fn, cands.name, cands.weight, cands.n, g, &ran);
  if (!ran)
    cands.fn[pick](g);
  last_mm.m = m;
  last_mm.n = g->n;
  last_mm.k = g->k;
  last_mm.ta = g->ta;
  last_mm.tb = g->tb;
  last_mm.pick = pick;
}

bool ts__gemm_f32_rows_exact(const ts_gemm *g)
{
  pthread_once(&cands_once, make_candidates);
  if (g->m * g->n * g->k > OWN_MAX_MACS)
    return !ts__blas_available();
  if (cands.n == 1)
    return true; /* our best tile, always */
  ts_tune_key key = { "matmul", { g->m, g->k, g->n, g->ta, g->tb } };
  int pick = ts__tune_known(&key);
  return pick >= 0 && cands.own[pick];
}

/* f64 has no tile of ours: OpenBLAS, or plain loops where it is missing. */
void ts__gemm_f64(const ts_gemm *g)
{
  int64_t m = g->m, n = g->n, k = g->k;
  double *c = g->c;
  const double *a = g->a, *b = g->b;
  if (g->bias || k == 0 || !ts__blas_available())
    fill_bias_f64(c, g->bias, m, n);
  if (k > 0 && ts__blas_available()) {
    ts__blas_dgemm(g->ta, g->tb, (int)m, (int)n, (int)k, a, (int)(g->ta ? m : k), b,
                   (int)(g->tb ? k : n), g->bias ? 1.0 : 0.0, c, (int)n);
  } else {
    int64_t a_row = g->ta ? 1 : k, a_col = g->ta ? m : 1, b_row = g->tb ? 1 : n, b_col = g->tb ? k : 1;
    for (int64_t i = 0; i < m; i++)
      for (int64_t p = 0; p < k; p++) {
        double av = a[i * a_row + p * a_col];
        for (int64_t j = 0; j < n; j++)
          c[i * n + j] += av * b[p * b_row + j * b_col];
      }
  }
  ts__act_f64(g->act, c, m * n);
}
