/* kernels/kernels.h — the engine's compute kernels below the ops: what the
 * CPU really has (cpuid), OpenBLAS loaded with the core matching it, our own
 * f32 GEMM tile kernels per ISA, and the per-shape choice between
 * them made by timing both the first time a shape is seen; f32 exp, tanh
 * and sigmoid over arrays per ISA.  Not installed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../tracescope-backend.h" /* ts_parallel_for: the engine's pool */

/* ---- the CPU (cpu_features.c) ------------------------------------------- */

typedef struct ts_cpu_features {
  char vendor[13];      /* "GenuineIntel", "AuthenticAMD" */
  char model_name[49];  /* the brand string, trimmed */
  int family, model;    /* display family and model (extended fields folded in) */
  bool sse4_2, avx, avx2, fma;
  bool avx512f, avx512bw, avx512vl, avx512dq, avx512_vnni, avx512_bf16;
} ts_cpu_features;

/* The CPU this process runs on; AVX and AVX-512 count only when the OS
 * saves their registers (XCR0 read by xgetbv).  Read once. */
const ts_cpu_features *ts__cpu(void);

/* The OpenBLAS core (an OPENBLAS_CORETYPE value) matching f, or NULL to let
 * OpenBLAS pick. */
const char *ts__blas_core_for(const ts_cpu_features *f);

/* ---- OpenBLAS, loaded at run time (blas.c) ------------------------------ */

/* Whether OpenBLAS could be loaded (it is, on first use). */
bool ts__blas_available(void);
/* Row-major C = A x B with op(A) [m,k], op(B) [k,n]; ta/tb: A stored [k,m],
 * B stored [n,k].  beta 0 or 1.  Only when ts__blas_available(). */
void ts__blas_sgemm(bool ta, bool tb, int m, int n, int k, const float *a, int lda, const float *b,
                    int ldb, float beta, float *c, int ldc);
void ts__blas_dgemm(bool ta, bool tb, int m, int n, int k, const double *a, int lda, const double *b,
                    int ldb, double beta, double *c, int ldc);
/* OpenBLAS's thread count (1 when it is not loaded), and setting it. */
int ts__blas_threads(void);
void ts__blas_set_threads(int n);

/* ---- epilogues ------------------------------------------------------------ */

/* What a fused op applies to each result after adding its bias. */
typedef enum ts_act { TS_ACT_NONE, TS_ACT_RELU, TS_ACT_SIGMOID, TS_ACT_TANH } ts_act;

/* The activation an op names, or -1 for an op that is none of them. */
int ts__act_of_op(int op);
/* The activation a fused op's attribute names ("" or NULL: none; "Relu",
 * "Sigmoid", "Tanh"), or -1: a few short compares, every call. */
int ts__act_from_name(const char *name);
void ts__act_f32(ts_act act, float *x, int64_t n);
void ts__act_f64(ts_act act, double *x, int64_t n);

/* ---- Adam's update (adam.c) ---------------------------------------------- */

/* ResourceApplyAdam's f32 loop over elements [begin, end) (ops/apply.c
 * gives the formula): m, v and var updated in place from grad. */
typedef struct ts_adam_f32 {
  float *var, *m, *v;
  const float *grad;
  float lr_t, one_minus_beta1, one_minus_beta2, epsilon;
} ts_adam_f32;
void ts__adam_f32(const ts_adam_f32 *a, int64_t begin, int64_t end);

/* ---- f32 exp, tanh and sigmoid over arrays (vmath*.c) ------------------- */

/* y[i] = f(x[i]) for i < n, x == y allowed: computed in float with exactly
 * rounded operations only, exp and tanh within 1 ulp of the correctly
 * rounded result, sigmoid within 2; NaN, infinities, overflow and underflow
 * as libm.  Every path gives the same bits (vmath_body.h). */
typedef void (*ts_vmath_fn)(const float *x, float *y, int64_t n);

typedef struct ts_vmath_kernel {
  const char *name; /* "avx512", "avx2", "c" */
  ts_vmath_fn vexp, vtanh, vsigmoid;
  bool (*usable)(const ts_cpu_features *f);
} ts_vmath_kernel;

/* Every path built in, best first. */
extern const ts_vmath_kernel ts__vmath_avx512, ts__vmath_avx2, ts__vmath_c;
/* The best path this CPU runs (the portable one at worst). */
const ts_vmath_kernel *ts__vmath_best(void);

/* On the best path. */
void ts__vexp_f32(const float *x, float *y, int64_t n);
void ts__vtanh_f32(const float *x, float *y, int64_t n);
/* 1 / (1 + e^-x) */
void ts__vsigmoid_f32(const float *x, float *y, int64_t n);

/* ---- an LSTM cell's elementwise part (lstm.c) ------------------------------ */

/* One step of `rows` batch rows: gates [rows, 4H] holds h_prev R^T (gate
 * blocks i, o, f, c) and is overwritten; x [rows, 4H] the input's
 * projection with its biases; c [rows, H] the cell state, updated in
 * place; h [rows, H] receives the new hidden state; peep NULL or the
 * peepholes i, o, f [3H].  The dtype's pointers (float or double). */
typedef struct ts_lstm_cell {
  int64_t rows, hidden;
  void *gates;
  const void *x;
  void *c, *h;
  const void *peep;
} ts_lstm_cell;
void ts__lstm_cell_f32(const ts_lstm_cell *s);
void ts__lstm_cell_f64(const ts_lstm_cell *s);

/* ---- micro-kernels (gemm_*.c) -------------------------------------------- */

#define TS_TILE_MAX_ROWS 8

/* One tile of C, at most the kernel's rows x cols:
 *   C(i, j) = act(bias(j) + sum over segments s, p < k of A_s(i, p) B_s(p, j))
 * with A_s(i, p) = a[s * TS_TILE_MAX_ROWS + i][p * a_step] (a row pointer
 * per row and segment; a_step 1 for rows in place, M to read a transposed
 * A [K, M] down its columns) and B_s(p, j) = b[s * b_seg + p * ldb + j],
 * both read in place: a plain GEMM has one segment, a convolution one per
 * filter tap (its rows point into the input, or at zeros over the
 * padding). */
typedef struct ts_tile {
  int rows, cols;
  int n_seg;
  int64_t k;
  const float *const *a;
  int64_t a_step;
  const float *b;
  int64_t ldb, b_seg;
  float *c;
  int64_t ldc;
  const float *bias; /* at the tile's first column; NULL for none */
  ts_act act;
} ts_tile;

typedef void (*ts_tile_fn)(const ts_tile *t);

/* Sigmoid or tanh over a tile's stored rows (the SIMD tiles apply relu in
 * their registers, these after the store). */
void ts__tile_act_rows(const ts_tile *t);

typedef struct ts_tile_kernel {
  const char *name;   /* "avx512", "avx2", "c" */
  int rows, cols;     /* the largest tile */
  ts_tile_fn run;
  bool (*usable)(const ts_cpu_features *f);
} ts_tile_kernel;

/* Every kernel built in, best first; the usable ones on this CPU are
 * ts__tile_kernels_usable's. */
extern const ts_tile_kernel ts__tile_avx512, ts__tile_avx2, ts__tile_c;
/* The AVX-512 tile of 5 rows x 64 columns (gemm_avx512.c): GEMMs of few
 * rows and many columns (a batch through Dense layers). */
extern const ts_tile_kernel ts__tile_avx512_wide;
/* The best kernel this CPU runs (the portable one at worst). */
const ts_tile_kernel *ts__tile_best(void);


/* ---- GEMM and convolution drivers (gemm.c, conv_kernel.c) ----------------- */

/* C[m,n] = act(op(A) op(B) + bias) with op(A) [m,k], op(B) [k,n] in row
 * major; ta/tb: A is stored [k,m], B [n,k]; bias NULL or n values. */
typedef struct ts_gemm {
  int64_t m, n, k;
  bool ta, tb;
  const void *a, *b, *bias;
  void *c;
  ts_act act;
} ts_gemm;

/* The product with one given tile kernel (the tests run each kernel this
 * way); large ones on the engine's pool (ts_parallel_for). */
void ts__gemm_f32_with(const ts_tile_kernel *kern, const ts_gemm *g);
/* The product as OpenBLAS computes it, epilogue after. */
void ts__gemm_f32_blas(const ts_gemm *g);
/* The product with the kernel chosen for the shape (timed on first sight). */
void ts__gemm_f32(const ts_gemm *g);
/* Does the kernel chosen for g's shape compute each row of C as it would
 * in a product of fewer rows (a part of the batch, exec/rows.c)?  Our
 * tiles do (each element's sum runs over k in order, whatever the tile's
 * rows); OpenBLAS does not (its method depends on the sizes, and its
 * sums' order with it).  false for a shape not chosen yet. */
bool ts__gemm_f32_rows_exact(const ts_gemm *g);
void ts__gemm_f64(const ts_gemm *g);

/* ---- the choice per shape (tune.c) ---------------------------------------- */

/* A candidate computes the op on the real operands, idempotently. */
typedef void (*ts_tune_fn)(const void *op);

/* A shape as the choice knows it: what (a static string: "matmul",
 * "conv") and up to TS_TUNE_DIMS numbers, the unused ones 0. */
#define TS_TUNE_DIMS 12
typedef struct ts_tune_key {
  const char *what;
  int64_t dim[TS_TUNE_DIMS];
} ts_tune_key;

/* Names a key in ts_kernel_choices(): "matmul 20x784x64". */
typedef void (*ts_tune_label_fn)(const ts_tune_key *key, char *buf, size_t size);

/* Which of n_cands (at most TS_TUNE_MAX) candidates runs the op of key:
 * the first time a key is seen each runs a few times on op, alternating,
 * and the fastest is remembered, its result left in the op's output (*ran
 * true).  names label the candidates (static strings).  A known key
 * costs a locked hash lookup. */
#define TS_TUNE_MAX 4
int ts__tune(const ts_tune_key *key, ts_tune_label_fn label, const ts_tune_fn *cands,
             const char *const *names, int n_cands, const void *op, bool *ran);
/* The same, a candidate's time multiplied by weights[c] in the choice
 * (its times are shown as measured, "counted more" beside one above 1). */
int ts__tune_weighted(const ts_tune_key *key, ts_tune_label_fn label, const ts_tune_fn *cands,
                      const char *const *names, const double *weights, int n_cands,
                      const void *op, bool *ran);

/* True on a thread while a plan makes its kernel choices (exec/executable.c
 * runs each GEMM and convolution of static shapes once, on zeros): then
 * ts__tune runs nothing for a key it knows (*ran true), and the drivers
 * skip the work of a shape that has no choice to make. */
extern _Thread_local bool ts__tune_only;
/* > 0 on a thread running part of a batch of this many rows (exec/rows.c):
 * a GEMM of fewer rows takes the whole batch's kernel choice, so each row
 * is computed as it would be in one product of the whole batch. */
extern _Thread_local int64_t ts__tune_rows;

/* The choice made for key (its candidate's index), or -1 while none is. */
int ts__tune_known(const ts_tune_key *key);

/* "own avx512 8x32": our best tile kernel as the choices name it. */
const char *ts__own_label(void);

/* ---- convolution as an implicit GEMM (conv_gemm.c) ------------------------ */

/* A 2-D convolution over NHWC x with an HWIO filter f into y [n,oh,ow,o],
 * then bias (NULL or o values) and act. */
typedef struct ts_conv {
  int64_t n, h, w, c;   /* input */
  int64_t kh, kw, o;    /* filter */
  int64_t sh, sw;       /* strides */
  int64_t oh, ow;       /* output */
  int64_t top, left;    /* padding before the first row and column */
  const void *x, *f, *bias;
  void *y;
  ts_act act;
} ts_conv;

/* f32 with one tile kernel: each output pixel's row of the im2col matrix is
 * read in place, a pointer per filter tap (a zero row over the padding),
 * so nothing is copied; blocks of pixels go to the engine's pool. */
void ts__conv_f32_with(const ts_tile_kernel *kern, const ts_conv *cv);

/* ---- 3x3 convolution by Winograd F(2x2,3x3) (conv_winograd.c) ------------- */

/* Whether ts__conv_f32_winograd takes cv: a 3x3 filter at stride 1 whose
 * transformed copy (16 x C x O floats, made per call) stays under 256 MiB. */
bool ts__conv_winograd_fits(const ts_conv *cv);
/* f32 by F(2x2,3x3): 16 GEMMs [tiles x C] x [C x O] between the input and
 * output transforms, on kern, or with kern NULL on OpenBLAS (our best tile
 * kernel where it is not loaded); blocks of tiles on the engine's pool; any
 * padding (cv->top, left; taps outside read as zero), bias and act applied
 * on the output transform.  Only where ts__conv_winograd_fits(cv). */
void ts__conv_f32_winograd(const ts_tile_kernel *kern, const ts_conv *cv);

/* ---- direct convolution for few channels (conv_direct*.c) ----------------- */

/* A strip of output pixels along one output row, at most rows x cols:
 *   y(i, j) = act(bias(j) + sum over l < lines, p < k of
 *                 x[i * x_step + l * x_line + p] f[(l * k + p) * ldf + j])
 * x: the first pixel's window in a padded copy of the input, where each of
 * the kh window lines is kw * c values in place (k), the next pixel's
 * window sw * c values on (x_step) and the next line a padded input row on
 * (x_line); f the HWIO filter at the strip's first column. */
typedef struct ts_conv_strip {
  int rows, cols;
  int64_t lines, k;
  const float *x;
  int64_t x_step, x_line;
  const float *f;
  int64_t ldf;
  float *y;
  int64_t ldy;
  const float *bias; /* at the strip's first column; NULL for none */
  ts_act act;
} ts_conv_strip;

typedef void (*ts_conv_strip_fn)(const ts_conv_strip *s);

/* Sigmoid or tanh over a strip's stored rows (the SIMD strips apply relu
 * in their registers, these after the store). */
void ts__strip_act_rows(const ts_conv_strip *s);

/* A strip kernel holds accs accumulators of vec channels: strips of accs
 * pixels x vec channels, or accs / 2 pixels x 2 vec channels. */
typedef struct ts_conv_strip_kernel {
  const char *name;  /* "avx512", "avx2", "c" */
  const char *label; /* as the choices name it: "direct avx512" */
  int vec, accs;
  ts_conv_strip_fn run;
  bool (*usable)(const ts_cpu_features *f);
} ts_conv_strip_kernel;

extern const ts_conv_strip_kernel ts__strip_avx512, ts__strip_avx2, ts__strip_c;
/* The best strip kernel this CPU runs (the portable one at worst). */
const ts_conv_strip_kernel *ts__strip_best(void);

/* Whether ts__conv_f32_direct takes cv: few output channels (its strips
 * fill their registers where a GEMM tile of 32 or 64 columns runs half
 * empty) and a padded input copy under 64 MiB. */
bool ts__conv_direct_fits(const ts_conv *cv);
/* f32 by strips of output pixels, all output channels in registers, over
 * a zero-padded copy of the input (made per call where cv pads), so the
 * strips have no bounds to check; output rows on the engine's pool.  Only
 * where ts__conv_direct_fits(cv). */
void ts__conv_f32_direct(const ts_conv_strip_kernel *kern, const ts_conv *cv);
