/* test-kernels.c — the compute kernels below the ops: every f32 tile
 * kernel this CPU runs (AVX-512 8x32 and 5x64, AVX2+FMA, portable C)
 * against a naive double-precision product on edge shapes, transposes and
 * epilogues, and each computing a row as the whole product would; the
 * chosen kernel and OpenBLAS alike; the implicit-GEMM convolution against
 * a naive one; cpuid's features and the OpenBLAS core they map to; and
 * _FusedConv2D against the unfused ops it replaces. */
#include <dlfcn.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "kernels/kernels.h"

/* ---- helpers ---------------------------------------------------------------- */

/* Every tile kernel built in (each test skips those this CPU lacks). */
static const ts_tile_kernel *const ALL_TILES[] = { &ts__tile_avx512, &ts__tile_avx512_wide,
                                                   &ts__tile_avx2, &ts__tile_c };

/* Deterministic values in [-1, 1), different per buffer. */
static float *filled(int64_t n, uint32_t seed)
{
  float *v = g_new(float, (size_t)MAX(n, 1));
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    v[i] = (float)((s >> 8) / (double)(1 << 24) * 2 - 1);
  }
  return v;
}

static double act_ref(ts_act act, double x)
{
  switch (act) {
  case TS_ACT_RELU: return x < 0 ? 0 : x;
  case TS_ACT_SIGMOID: return 1 / (1 + exp(-x));
  case TS_ACT_TANH: return tanh(x);
  default: return x;
  }
}

/* got against a double-precision reference within the float error of a
 * k-term dot product of values in [-1, 1). */
static void assert_close(const float *got, const double *want, int64_t n, int64_t k, const char *what)
{
  double tol = 1e-6 * (double)(k + 4);
  for (int64_t i = 0; i < n; i++)
    if (!(fabs(got[i] - want[i]) <= tol))
      g_error("%s: element %" G_GINT64_FORMAT ": got %.9g, want %.9g", what, i, got[i], want[i]);
}

/* C = act(op(A) op(B) + bias) in double. */
static double *gemm_ref(const ts_gemm *g)
{
  const float *a = g->a, *b = g->b, *bias = g->bias;
  double *c = g_new(double, (size_t)MAX(g->m * g->n, 1));
  for (int64_t i = 0; i < g->m; i++)
    for (int64_t j = 0; j < g->n; j++) {
      double s = bias ? bias[j] : 0;
      for (int64_t p = 0; p < g->k; p++)
        s += (double)a[g->ta ? p * g->m + i : i * g->k + p] * b[g->tb ? j * g->k + p : p * g->n + j];
      c[i * g->n + j] = act_ref(g->act, s);
    }
  return c;
}

typedef void (*gemm_under_test)(const ts_tile_kernel *kern, const ts_gemm *g);

static void with_kernel(const ts_tile_kernel *kern, const ts_gemm *g)
{
  ts__gemm_f32_with(kern, g);
}

static void with_choice(const ts_tile_kernel *kern, const ts_gemm *g)
{
  ts__gemm_f32(g);
}

static void with_blas(const ts_tile_kernel *kern, const ts_gemm *g)
{
  ts__gemm_f32_blas(g);
}

/* Edge shapes: 1, odd, one under/over the vector widths (8, 16) and the
 * tiles (4, 6, 8 rows; 16, 32 columns), the dense workloads' sizes, and
 * two products large enough for threads (the second with B in several
 * column chunks). */
static const int64_t SHAPES[][3] = { /* m, k, n */
  { 1, 1, 1 },    { 1, 7, 1 },    { 3, 5, 7 },    { 2, 1, 9 },     { 5, 3, 8 },     { 6, 16, 15 },
  { 7, 9, 16 },   { 8, 17, 17 },  { 9, 4, 31 },   { 4, 33, 32 },   { 13, 8, 33 },   { 17, 2, 47 },
  { 10, 10, 10 }, { 20, 64, 64 }, { 20, 100, 10 }, { 25, 31, 100 }, { 33, 65, 129 }, { 1, 64, 300 },
  { 130, 300, 70 }, { 70, 1100, 100 },
};

static void check_gemms(const ts_tile_kernel *kern, gemm_under_test run, const char *name)
{
  int round = 0;
  for (size_t s = 0; s < G_N_ELEMENTS(SHAPES); s++)
    for (int t = 0; t < 4; t++, round++) {
      int64_t m = SHAPES[s][0], k = SHAPES[s][1], n = SHAPES[s][2];
      float *a = filled(m * k, (uint32_t)round), *b = filled(k * n, (uint32_t)round + 100);
      float *bias = filled(n, (uint32_t)round + 200), *c = g_new(float, (size_t)(m * n));
      /* every epilogue on every shape over the rounds, with and without the bias */
      ts_gemm g = { m, n, k, t & 1, t & 2, a, b, round % 2 ? bias : NULL, c, (ts_act)(round / 2 % 4) };
      run(kern, &g);
      double *want = gemm_ref(&g);
      char *what = g_strdup_printf("%s %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                                   "%s%s act %d%s", name, m, k, n, g.ta ? " ta" : "", g.tb ? " tb" : "",
                                   g.act, g.bias ? " bias" : "");
      assert_close(c, want, m * n, k, what);
      g_free(what);
      g_free(want);
      g_free(a);
      g_free(b);
      g_free(bias);
      g_free(c);
    }
}

/* ---- GEMM ------------------------------------------------------------------- */

/* A part of a batch's rows gives the bits those rows have in the whole
 * product, on every tile (what lets exec/rows.c split a batch across
 * threads); and the two AVX-512 tiles, which the choice picks between,
 * give the same bits (each element's sum runs over k in order). */
static void test_rows_exact(void)
{
  static const int64_t shapes[][3] = { { 20, 64, 64 }, { 9, 784, 64 }, { 60, 128, 10 }, { 13, 33, 100 } };
  for (size_t s = 0; s < G_N_ELEMENTS(shapes); s++) {
    int64_t m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
    float *a = filled(m * k, 7), *b = filled(k * n, 8), *bias = filled(n, 9);
    float *whole[G_N_ELEMENTS(ALL_TILES)] = { NULL };
    for (size_t t = 0; t < G_N_ELEMENTS(ALL_TILES); t++) {
      if (!ALL_TILES[t]->usable(ts__cpu()))
        continue;
      float *parts = g_new(float, (size_t)(m * n));
      whole[t] = g_new(float, (size_t)(m * n));
      ts_gemm g = { m, n, k, false, false, a, b, bias, whole[t], TS_ACT_RELU };
      ts__gemm_f32_with(ALL_TILES[t], &g);
      for (int n_parts = 2; n_parts <= 3; n_parts++) {
        for (int part = 0; part < n_parts; part++) {
          int64_t r0 = m * part / n_parts, r1 = m * (part + 1) / n_parts;
          ts_gemm p = { r1 - r0, n, k, false, false, a + r0 * k, b, bias, parts + r0 * n, TS_ACT_RELU };
          ts__gemm_f32_with(ALL_TILES[t], &p);
        }
        g_assert_cmpmem(parts, m * n * 4, whole[t], m * n * 4);
      }
      g_free(parts);
    }
    if (whole[0] && whole[1]) /* ts__tile_avx512 and ts__tile_avx512_wide */
      g_assert_cmpmem(whole[1], m * n * 4, whole[0], m * n * 4);
    for (size_t t = 0; t < G_N_ELEMENTS(ALL_TILES); t++)
      g_free(whole[t]);
    g_free(a);
    g_free(b);
    g_free(bias);
  }
}

/* Our tiles' products split between threads (from 1M multiply-adds: the
 * encoder's 128x64x192, 128x64x256 and a product in several column
 * chunks): the same bits as on 1 thread, each element one tile's sum. */
static void test_gemm_threads(void)
{
  static const int64_t shapes[][3] = { { 128, 64, 192 }, { 129, 64, 130 }, { 128, 64, 256 }, { 70, 1100, 100 } };
  int before = ts_get_threads();
  for (size_t s = 0; s < G_N_ELEMENTS(shapes); s++) {
    int64_t m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
    float *a = filled(m * k, 41), *b = filled(k * n, 42), *bias = filled(n, 43);
    size_t bytes = sizeof(float) * (size_t)(m * n);
    float *one = g_malloc(bytes), *two = g_malloc(bytes);
    for (size_t t = 0; t < G_N_ELEMENTS(ALL_TILES); t++) {
      if (!ALL_TILES[t]->usable(ts__cpu()))
        continue;
      g_assert_true(ts_set_threads(1));
      ts_gemm g = { m, n, k, false, false, a, b, bias, one, TS_ACT_RELU };
      ts__gemm_f32_with(ALL_TILES[t], &g);
      g_assert_true(ts_set_threads(2));
      g.c = two;
      ts__gemm_f32_with(ALL_TILES[t], &g);
      g_assert_cmpmem(one, bytes, two, bytes);
    }
    g_free(one);
    g_free(two);
    g_free(a);
    g_free(b);
    g_free(bias);
  }
  g_assert_true(ts_set_threads(before));
}

static void test_act_from_name(void)
{
  g_assert_cmpint(ts__act_from_name(NULL), ==, TS_ACT_NONE);
  g_assert_cmpint(ts__act_from_name(""), ==, TS_ACT_NONE);
  g_assert_cmpint(ts__act_from_name("Relu"), ==, TS_ACT_RELU);
  g_assert_cmpint(ts__act_from_name("Sigmoid"), ==, TS_ACT_SIGMOID);
  g_assert_cmpint(ts__act_from_name("Tanh"), ==, TS_ACT_TANH);
  g_assert_cmpint(ts__act_from_name("relu"), ==, -1);
  g_assert_cmpint(ts__act_from_name("Gelu"), ==, -1);
}

static void test_tile_kernels(void)
{
  const ts_tile_kernel *const *all = ALL_TILES;
  int ran = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(ALL_TILES); i++) {
    if (!all[i]->usable(ts__cpu())) {
      g_test_message("%s: not on this CPU", all[i]->name);
      continue;
    }
    g_assert_cmpint(all[i]->rows, <=, TS_TILE_MAX_ROWS);
    check_gemms(all[i], with_kernel, all[i]->name);
    ran++;
  }
  g_assert_cmpint(ran, >=, 1); /* the portable one at least */
  g_assert_true(ts__tile_best()->usable(ts__cpu()));
}

static void test_chosen_and_blas(void)
{
  check_gemms(NULL, with_choice, "chosen");
  if (!ts__blas_available()) {
    g_test_message("OpenBLAS not loaded: %s", ts_blas_description());
    return;
  }
  check_gemms(NULL, with_blas, "OpenBLAS");
  /* each shape was timed once and its choice names both candidates */
  char *choices = ts_kernel_choices();
  g_assert_nonnull(strstr(choices, "matmul 20x64x64: "));
  g_assert_nonnull(strstr(choices, "matmul 33x65x129 transpose_a transpose_b: "));
  g_assert_nonnull(strstr(choices, "OpenBLAS "));
  g_assert_nonnull(strstr(choices, ts__own_label()));
  free(choices);
}

static void test_k_zero(void)
{
  float bias[3] = { -1, 2, -3 }, c[6];
  memset(c, 0x7f, sizeof c);
  ts__gemm_f32_with(ts__tile_best(), &(ts_gemm){ 2, 3, 0, false, false, NULL, NULL, bias, c, TS_ACT_RELU });
  const float want[6] = { 0, 2, 0, 0, 2, 0 };
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat(c[i], ==, want[i]);
}

/* ---- the CPU and OpenBLAS ---------------------------------------------------- */

static void test_cpu_features(void)
{
  const ts_cpu_features *f = ts__cpu();
  g_assert_cmpuint(strlen(f->vendor), ==, 12);
  /* each level implies the ones below it */
  g_assert_true(!f->avx2 || f->avx);
  g_assert_true(!f->fma || f->avx);
  g_assert_true(!f->avx512bw || f->avx512f);
  g_assert_true(!f->avx512_bf16 || f->avx512f);
  const char *d = ts_cpu_description();
  g_assert_nonnull(strstr(d, f->vendor));
  g_assert_nonnull(strstr(d, f->avx512f ? "AVX-512" : f->avx2 ? "AVX2" : ""));
  /* Linux's own reading of cpuid agrees */
  char *info = NULL;
  if (g_file_get_contents("/proc/cpuinfo", &info, NULL, NULL)) {
    const char *flags = strstr(info, "\nflags");
    g_assert_nonnull(flags);
    char *line = g_strndup(flags, strcspn(flags + 1, "\n") + 1);
    g_assert_cmpint(f->avx512f, ==, strstr(line, " avx512f") != NULL);
    g_assert_cmpint(f->avx2, ==, strstr(line, " avx2") != NULL);
    g_assert_cmpint(f->fma, ==, strstr(line, " fma") != NULL);
    g_free(line);
    g_free(info);
  }
}

static void test_blas_core_for(void)
{
  static const struct {
    const char *vendor;
    bool avx2, fma, avx512, bf16;
    const char *core;
  } cases[] = {
    /* Emerald Rapids (family 6 model 207, which 0.3.21 does not know), Zen 4:
     * AVX-512 with BF16, and 0.3.21 does not take "Cooperlake" */
    { "GenuineIntel", true, true, true, true, "SkylakeX" },
    { "AuthenticAMD", true, true, true, true, "SkylakeX" },
    { "GenuineIntel", true, true, true, false, "SkylakeX" },
    { "GenuineIntel", true, true, false, false, "Haswell" },
    { "AuthenticAMD", true, true, false, false, "Zen" },
    { "GenuineIntel", false, false, false, false, NULL }, /* OpenBLAS decides */
    { "GenuineIntel", true, false, false, false, NULL },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    ts_cpu_features f = { .avx = cases[i].avx2, .avx2 = cases[i].avx2, .fma = cases[i].fma,
                          .avx512f = cases[i].avx512, .avx512bw = cases[i].avx512,
                          .avx512vl = cases[i].avx512, .avx512dq = cases[i].avx512,
                          .avx512_bf16 = cases[i].bf16 };
    strcpy(f.vendor, cases[i].vendor);
    g_assert_cmpstr(ts__blas_core_for(&f), ==, cases[i].core);
  }
}

/* The engine loads OpenBLAS as it starts (its pool asks for the thread
 * count): the core running is the one our cpuid maps to, unless the user
 * chose.  Asked of OpenBLAS itself, not of this binary's own copy of the
 * loader (which finds it loaded already). */
static void test_blas_loaded(void)
{
  const char *d = ts_blas_description();
  g_test_message("%s", d);
  void *h = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
  if (!h) {
    g_assert_nonnull(strstr(d, "not loaded"));
    g_test_skip("no OpenBLAS on this machine");
    return;
  }
  char *(*corename)(void) = (char *(*)(void))dlsym(h, "openblas_get_corename");
  g_assert_nonnull(corename);
  const char *want = ts__blas_core_for(ts__cpu());
  g_test_message("OpenBLAS runs %s; cpuid says %s", corename(), want ? want : "(its own choice)");
  if (want && !g_getenv("OPENBLAS_CORETYPE"))
    g_assert_cmpint(g_ascii_strcasecmp(corename(), want), ==, 0);
  g_assert_nonnull(strstr(d, corename()));
  g_assert_cmpint(ts__blas_threads(), >=, 1);
  dlclose(h);
}

/* ---- convolution ------------------------------------------------------------- */

static double *conv_ref(const ts_conv *cv)
{
  const float *x = cv->x, *f = cv->f, *bias = cv->bias;
  double *y = g_new(double, (size_t)(cv->n * cv->oh * cv->ow * cv->o));
  for (int64_t n = 0; n < cv->n; n++)
    for (int64_t oy = 0; oy < cv->oh; oy++)
      for (int64_t ox = 0; ox < cv->ow; ox++)
        for (int64_t o = 0; o < cv->o; o++) {
          double s = bias ? bias[o] : 0;
          for (int64_t ky = 0; ky < cv->kh; ky++)
            for (int64_t kx = 0; kx < cv->kw; kx++) {
              int64_t iy = oy * cv->sh - cv->top + ky, ix = ox * cv->sw - cv->left + kx;
              if (iy < 0 || iy >= cv->h || ix < 0 || ix >= cv->w)
                continue;
              for (int64_t c = 0; c < cv->c; c++)
                s += (double)x[((n * cv->h + iy) * cv->w + ix) * cv->c + c] *
                     f[((ky * cv->kw + kx) * cv->c + c) * cv->o + o];
            }
          y[((n * cv->oh + oy) * cv->ow + ox) * cv->o + o] = act_ref(cv->act, s);
        }
  return y;
}

/* The output size and padding before, as TensorFlow's SAME (ceil(in / s)
 * outputs, the padding split, the odd cell after) or VALID sets them. */
static void conv_pad(ts_conv *cv, bool same)
{
  cv->oh = same ? (cv->h + cv->sh - 1) / cv->sh : (cv->h - cv->kh) / cv->sh + 1;
  cv->ow = same ? (cv->w + cv->sw - 1) / cv->sw : (cv->w - cv->kw) / cv->sw + 1;
  int64_t ph = MAX((cv->oh - 1) * cv->sh + cv->kh - cv->h, 0);
  int64_t pw = MAX((cv->ow - 1) * cv->sw + cv->kw - cv->w, 0);
  cv->top = same ? ph / 2 : 0;
  cv->left = same ? pw / 2 : 0;
}

static const struct conv_case {
  int64_t n, h, w, c, kh, kw, o, sh, sw;
  bool same;
} CONV_CASES[] = {
  { 1, 5, 5, 1, 3, 3, 1, 1, 1, false }, { 2, 7, 6, 3, 3, 3, 5, 1, 1, true },
  { 1, 9, 8, 4, 3, 2, 17, 2, 2, true }, { 1, 6, 7, 16, 5, 5, 33, 1, 2, true },
  { 3, 4, 4, 2, 1, 1, 9, 1, 1, false }, { 1, 12, 10, 10, 3, 3, 40, 2, 1, false },
  /* 64 channels and more: a segment per tap, not per filter row */
  { 1, 6, 5, 70, 3, 3, 20, 1, 1, true }, { 2, 9, 9, 66, 3, 2, 12, 2, 2, true },
  /* tiles of one output row: wide rows, strides, pads on both sides */
  { 1, 3, 21, 3, 3, 3, 16, 1, 1, true }, { 2, 4, 40, 5, 3, 5, 7, 1, 3, true },
  /* few output channels (the direct strips): a CNN's first layer, rows
   * longer than a strip, 32 and 64 channels (two vectors, two blocks),
   * VALID windows that leave the input's last rows and columns unread */
  { 2, 11, 50, 3, 3, 3, 16, 1, 1, true }, { 1, 7, 29, 2, 3, 3, 32, 2, 2, true },
  { 1, 5, 30, 1, 2, 4, 64, 1, 1, false }, { 2, 10, 13, 3, 4, 3, 24, 3, 2, false },
};

typedef void (*conv_fn)(const void *kern, const ts_conv *cv);

static void conv_on_tile(const void *kern, const ts_conv *cv)
{
  ts__conv_f32_with(kern, cv);
}

static void conv_on_strip(const void *kern, const ts_conv *cv)
{
  g_assert_true(ts__conv_direct_fits(cv));
  ts__conv_f32_direct(kern, cv);
}

/* Case i of CONV_CASES by run on kern against the reference; the bias and
 * activation vary with i. */
static void check_conv_case(size_t i, conv_fn run, const void *kern, const char *name)
{
  const struct conv_case *cc = &CONV_CASES[i];
  ts_conv cv = { .n = cc->n, .h = cc->h, .w = cc->w, .c = cc->c, .kh = cc->kh, .kw = cc->kw, .o = cc->o,
                 .sh = cc->sh, .sw = cc->sw };
  conv_pad(&cv, cc->same);
  float *x = filled(cv.n * cv.h * cv.w * cv.c, (uint32_t)i), *f = filled(cv.kh * cv.kw * cv.c * cv.o, 7);
  float *bias = filled(cv.o, 9);
  int64_t size = cv.n * cv.oh * cv.ow * cv.o;
  float *y = g_new(float, (size_t)size);
  cv.x = x;
  cv.f = f;
  cv.bias = i % 2 ? bias : NULL;
  cv.y = y;
  cv.act = (ts_act)(i % 4);
  run(kern, &cv);
  double *want = conv_ref(&cv);
  char *what = g_strdup_printf("%s conv case %zu", name, i);
  assert_close(y, want, size, cv.kh * cv.kw * cv.c, what);
  g_free(what);
  g_free(want);
  g_free(x);
  g_free(f);
  g_free(bias);
  g_free(y);
}

static void test_conv_kernels(void)
{
  const ts_tile_kernel *const *all = ALL_TILES;
  for (size_t k = 0; k < G_N_ELEMENTS(ALL_TILES); k++)
    for (size_t i = 0; all[k]->usable(ts__cpu()) && i < G_N_ELEMENTS(CONV_CASES); i++)
      check_conv_case(i, conv_on_tile, all[k], all[k]->name);
}

/* Relu in the epilogue keeps NaN, as ts__act_f32 and the Relu op do
 * (np.maximum(nan, 0) and tf.nn.relu(nan) are nan): every tile and strip
 * kernel this CPU runs, a NaN in A's first row (all of that output row) and
 * in the bias's column 5 (all of that column); the rest as the reference. */
static void assert_same_nans(const float *got, const double *want, int64_t n, int64_t k, const char *what)
{
  for (int64_t i = 0; i < n; i++) {
    if (isnan(want[i]) != isnan(got[i]))
      g_error("%s: element %" G_GINT64_FORMAT ": got %.9g, want %.9g", what, i, got[i], want[i]);
    if (!isnan(want[i]))
      assert_close(&got[i], &want[i], 1, k, what);
  }
}

static void test_relu_nan(void)
{
  const int64_t m = 3, k = 4, n = 19; /* a whole vector and a masked tail */
  float *a = filled(m * k, 41), *b = filled(k * n, 42), *bias = filled(n, 43), *c = g_new(float, m * n);
  a[1] = NAN;
  bias[5] = NAN;
  ts_gemm g = { m, n, k, false, false, a, b, bias, c, TS_ACT_RELU };
  double *want = gemm_ref(&g);
  for (size_t t = 0; t < G_N_ELEMENTS(ALL_TILES); t++) {
    if (!ALL_TILES[t]->usable(ts__cpu()))
      continue;
    memset(c, 0, sizeof(float) * (size_t)(m * n));
    ts__gemm_f32_with(ALL_TILES[t], &g);
    assert_same_nans(c, want, m * n, k, ALL_TILES[t]->name);
  }
  g_free(want);

  ts_conv cv = { .n = 1, .h = 3, .w = 5, .c = 2, .kh = 1, .kw = 1, .o = n, .sh = 1, .sw = 1, .act = TS_ACT_RELU };
  conv_pad(&cv, false);
  float *x = filled(cv.h * cv.w * cv.c, 44);
  x[2 * cv.c] = NAN; /* pixel 2 */
  cv.x = x;
  cv.f = b;
  cv.bias = bias;
  cv.y = g_new(float, cv.oh * cv.ow * n);
  want = conv_ref(&cv);
  static const ts_conv_strip_kernel *const strips[] = { &ts__strip_avx512, &ts__strip_avx2, &ts__strip_c };
  for (size_t t = 0; t < G_N_ELEMENTS(strips); t++) {
    if (!strips[t]->usable(ts__cpu()))
      continue;
    memset(cv.y, 0, sizeof(float) * (size_t)(cv.oh * cv.ow * n));
    ts__conv_f32_direct(strips[t], &cv);
    assert_same_nans(cv.y, want, cv.oh * cv.ow * n, cv.c, strips[t]->label);
  }
  g_free(want);
  g_free(cv.y);
  g_free(x);
  g_free(a);
  g_free(b);
  g_free(bias);
  g_free(c);
}

/* The direct strips, each this CPU runs, on every case of few output
 * channels. */
static void test_conv_direct(void)
{
  static const ts_conv_strip_kernel *const strips[] = { &ts__strip_avx512, &ts__strip_avx2, &ts__strip_c };
  int ran = 0;
  for (size_t k = 0; k < G_N_ELEMENTS(strips); k++)
    for (size_t i = 0; strips[k]->usable(ts__cpu()) && i < G_N_ELEMENTS(CONV_CASES); i++)
      if (CONV_CASES[i].o <= 64) {
        check_conv_case(i, conv_on_strip, strips[k], strips[k]->label);
        ran++;
      }
  g_assert_cmpint(ran, >=, 12);
  g_assert_true(ts__strip_best()->usable(ts__cpu()));
  /* more output channels fill the GEMM tiles: not a candidate */
  ts_conv many = { .n = 1, .h = 8, .w = 8, .c = 4, .kh = 3, .kw = 3, .o = 65, .sh = 1, .sw = 1, .oh = 6, .ow = 6 };
  g_assert_false(ts__conv_direct_fits(&many));
  many.o = 64;
  g_assert_true(ts__conv_direct_fits(&many));
}

/* The direct strips split between 2 threads: parts of rows inside one
 * image (37 rows in parts of 5, the last of 2, each padding its own rows),
 * parts of 4 rows across images of 10 (stride 2), VALID windows; against
 * the reference, and the same bits as on 1 thread. */
static void test_conv_direct_threads(void)
{
  static const struct {
    int64_t n, h, w, c, kh, kw, o, sh, sw;
    bool same;
  } cases[] = {
    { 1, 37, 29, 3, 3, 3, 16, 1, 1, true },
    { 3, 20, 18, 16, 3, 3, 32, 2, 2, true },
    { 2, 15, 40, 5, 4, 3, 24, 3, 2, false },
  };
  static const ts_conv_strip_kernel *const strips[] = { &ts__strip_avx512, &ts__strip_avx2, &ts__strip_c };
  int before = ts_get_threads();
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    ts_conv cv = { .n = cases[i].n, .h = cases[i].h, .w = cases[i].w, .c = cases[i].c, .kh = cases[i].kh,
                   .kw = cases[i].kw, .o = cases[i].o, .sh = cases[i].sh, .sw = cases[i].sw, .act = TS_ACT_RELU };
    conv_pad(&cv, cases[i].same);
    cv.x = filled(cv.n * cv.h * cv.w * cv.c, 31 + (uint32_t)i);
    cv.f = filled(cv.kh * cv.kw * cv.c * cv.o, 32 + (uint32_t)i);
    cv.bias = filled(cv.o, 33 + (uint32_t)i);
    int64_t size = cv.n * cv.oh * cv.ow * cv.o;
    size_t bytes = sizeof(float) * (size_t)size;
    cv.y = g_malloc(bytes);
    float *one = g_malloc(bytes);
    double *want = conv_ref(&cv);
    g_assert_true(ts__conv_direct_fits(&cv));
    for (size_t k = 0; k < G_N_ELEMENTS(strips); k++) {
      if (!strips[k]->usable(ts__cpu()))
        continue;
      g_assert_true(ts_set_threads(1));
      ts__conv_f32_direct(strips[k], &cv);
      memcpy(one, cv.y, bytes);
      assert_close(one, want, size, cv.kh * cv.kw * cv.c, strips[k]->label);
      g_assert_true(ts_set_threads(2));
      memset(cv.y, 0, bytes);
      ts__conv_f32_direct(strips[k], &cv);
      g_assert_cmpmem(one, bytes, cv.y, bytes);
    }
    g_free(want);
    g_free(one);
    g_free((void *)cv.x);
    g_free((void *)cv.f);
    g_free((void *)cv.bias);
    g_free(cv.y);
  }
  g_assert_true(ts_set_threads(before));
}

/* ---- Winograd F(2x2,3x3) -------------------------------------------------------- */

/* A 3x3 stride-1 convolution of values in [-1, 1) (the bias too). */
static ts_conv wino_conv(int64_t n, int64_t h, int64_t w, int64_t c, int64_t o, bool same, uint32_t seed)
{
  ts_conv cv = { .n = n, .h = h, .w = w, .c = c, .kh = 3, .kw = 3, .o = o, .sh = 1, .sw = 1 };
  conv_pad(&cv, same);
  cv.x = filled(n * h * w * c, seed);
  cv.f = filled(9 * c * o, seed + 1);
  cv.bias = filled(o, seed + 2);
  cv.y = g_new(float, (size_t)MAX(n * cv.oh * cv.ow * o, 1));
  return cv;
}

static void wino_free(ts_conv *cv)
{
  g_free((void *)cv->x);
  g_free((void *)cv->f);
  g_free((void *)cv->bias);
  g_free(cv->y);
}

/* Against the double-precision reference, and the implicit GEMM's error
 * reported beside.  Each output is a sum over 9 of the 16 units and the C
 * channels of +-U V, where with inputs and weights in [-1, 1) |V| <= 4
 * (B^T's rows: at most two +-1 entries, on each side) and |U| <= 2.25
 * (G's rows: at most 1.5 in magnitude): 9C terms up to 9 times an input
 * times a weight.  So the tolerance is the direct one (assert_close:
 * 1e-6 per term) for 9 x 9C terms.  Seen: the same order as the implicit
 * GEMM's error, often below it (16 sums of C terms rather than one of 9C). */
static void check_winograd(const ts_tile_kernel *kern, const ts_conv *cv, const char *what)
{
  ts__conv_f32_winograd(kern, cv);
  double *want = conv_ref(cv);
  int64_t size = cv->n * cv->oh * cv->ow * cv->o;
  assert_close(cv->y, want, size, 9 * 9 * cv->c, what);
  ts_conv direct = *cv;
  direct.y = g_new(float, (size_t)MAX(size, 1));
  ts__conv_f32_with(ts__tile_best(), &direct);
  double err = 0, err_direct = 0;
  for (int64_t i = 0; i < size; i++) {
    err = MAX(err, fabs(((const float *)cv->y)[i] - want[i]));
    err_direct = MAX(err_direct, fabs(((const float *)direct.y)[i] - want[i]));
  }
  g_test_message("%s: max error %.3g (implicit GEMM %.3g)", what, err, err_direct);
  g_free(direct.y);
  g_free(want);
}

/* The 16 GEMMs' engines: OpenBLAS (NULL), then each tile kernel. */
static const ts_tile_kernel *const WINO_GEMMS[] = { NULL, &ts__tile_avx512, &ts__tile_avx512_wide,
                                                    &ts__tile_avx2, &ts__tile_c };

static bool wino_gemm_runs(const ts_tile_kernel *kern)
{
  return kern ? kern->usable(ts__cpu()) : ts__blas_available();
}

static void test_winograd(void)
{
  static const struct {
    int64_t n, h, w, c, o;
  } cases[] = { /* odd and even sizes, channels off the vector widths and tiles */
    { 1, 4, 4, 1, 1 },   { 1, 5, 7, 3, 5 },    { 2, 9, 6, 17, 33 },  { 1, 12, 11, 16, 32 },
    { 3, 7, 8, 15, 31 }, { 1, 20, 19, 40, 7 }, { 2, 17, 23, 33, 65 }, { 1, 3, 3, 2, 100 },
  };
  int round = 0;
  for (size_t e = 0; e < G_N_ELEMENTS(WINO_GEMMS); e++) {
    if (!wino_gemm_runs(WINO_GEMMS[e]))
      continue;
    char gemms[32] = "OpenBLAS";
    if (WINO_GEMMS[e])
      g_snprintf(gemms, sizeof gemms, "%s %dx%d", WINO_GEMMS[e]->name, WINO_GEMMS[e]->rows, WINO_GEMMS[e]->cols);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
      for (int same = 0; same < 2; same++)
        for (int with_bias = 0; with_bias < 2; with_bias++, round++) {
          ts_conv cv = wino_conv(cases[i].n, cases[i].h, cases[i].w, cases[i].c, cases[i].o, same,
                                 (uint32_t)round);
          g_assert_true(ts__conv_winograd_fits(&cv));
          float *bias = (float *)cv.bias;
          cv.bias = with_bias ? bias : NULL;
          cv.act = (ts_act)(round / 2 % 4); /* each with and without the bias */
          char *what = g_strdup_printf("winograd on %s %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                                       "x%" G_GINT64_FORMAT "->%" G_GINT64_FORMAT " %s act %d%s",
                                       gemms, cv.n, cv.h, cv.w, cv.c, cv.o, same ? "SAME" : "VALID",
                                       cv.act, with_bias ? " bias" : "");
          check_winograd(WINO_GEMMS[e], &cv, what);
          g_free(what);
          cv.bias = bias;
          wino_free(&cv);
        }
  }
}

/* Blocks of tiles go to the pool; each output is one block's arithmetic,
 * whichever engine runs the GEMMs. */
static void test_winograd_threads(void)
{
  int before = ts_get_threads();
  ts_conv cv = wino_conv(2, 33, 30, 21, 37, true, 11);
  cv.act = TS_ACT_TANH;
  size_t bytes = sizeof(float) * (size_t)(cv.n * cv.oh * cv.ow * cv.o);
  float *one = g_malloc(bytes);
  for (size_t e = 0; e < G_N_ELEMENTS(WINO_GEMMS); e++) {
    if (!wino_gemm_runs(WINO_GEMMS[e]))
      continue;
    g_assert_true(ts_set_threads(1));
    ts__conv_f32_winograd(WINO_GEMMS[e], &cv);
    memcpy(one, cv.y, bytes);
    g_assert_true(ts_set_threads(2));
    memset(cv.y, 0, bytes);
    ts__conv_f32_winograd(WINO_GEMMS[e], &cv);
    g_assert_cmpmem(one, bytes, cv.y, bytes);
  }
  g_assert_true(ts_set_threads(before));
  g_free(one);
  wino_free(&cv);
}

static void test_winograd_degenerate(void)
{
  for (size_t e = 0; e < G_N_ELEMENTS(WINO_GEMMS); e++) {
    const ts_tile_kernel *kern = WINO_GEMMS[e];
    if (!wino_gemm_runs(kern))
      continue;
    /* no input channels: the bias, activated */
    ts_conv cv = wino_conv(1, 2, 3, 0, 5, true, 21);
    cv.act = TS_ACT_RELU;
    ts__conv_f32_winograd(kern, &cv);
    for (int64_t i = 0; i < cv.oh * cv.ow * cv.o; i++)
      g_assert_cmpfloat(((float *)cv.y)[i], ==, MAX(((const float *)cv.bias)[i % cv.o], 0));
    wino_free(&cv);
    /* a 1x1 input with SAME: one tap of nine inside, the rest padding */
    cv = wino_conv(2, 1, 1, 5, 3, true, 22);
    g_assert_cmpint(cv.oh, ==, 1);
    g_assert_cmpint(cv.top, ==, 1);
    check_winograd(kern, &cv, "winograd 1x1 SAME");
    wino_free(&cv);
    /* no output channels, no images: nothing written */
    for (int k = 0; k < 2; k++) {
      cv = wino_conv(k ? 0 : 1, 4, 4, 3, k ? 2 : 0, false, 23);
      ((float *)cv.y)[0] = 42;
      ts__conv_f32_winograd(kern, &cv);
      g_assert_cmpfloat(((float *)cv.y)[0], ==, 42);
      wino_free(&cv);
    }
  }
  /* not 3x3 stride 1, or a transformed filter too large to make per call */
  ts_conv other = { .n = 1, .h = 8, .w = 8, .c = 4, .kh = 3, .kw = 3, .o = 4, .sh = 2, .sw = 1 };
  g_assert_false(ts__conv_winograd_fits(&other));
  other.sh = 1;
  other.kw = 5;
  g_assert_false(ts__conv_winograd_fits(&other));
  other.kw = 3;
  g_assert_true(ts__conv_winograd_fits(&other));
  other.c = other.o = (int64_t)1 << 20;
  g_assert_false(ts__conv_winograd_fits(&other));
}

/* ---- _FusedConv2D against the unfused ops ------------------------------------------- */

static ts_tensor *conv_bias_relu(ts_call *c)
{
  return ts_relu(ts_add(ts_conv2d(ts_arg(c, 0), ts_arg(c, 1), 1, 1, TS_PADDING_SAME), ts_arg(c, 2)));
}

static ts_tensor *conv_tanh_strided(ts_call *c)
{
  return ts_tanh(ts_conv2d(ts_arg(c, 0), ts_arg(c, 1), 2, 1, TS_PADDING_VALID));
}

static ts_tensor *bias_first_sigmoid(ts_call *c)
{
  return ts_sigmoid(ts_add(ts_arg(c, 2), ts_conv2d(ts_arg(c, 0), ts_arg(c, 1), 1, 2, TS_PADDING_SAME)));
}

static ts_tensor *conv_used_twice(ts_call *c)
{
  ts_tensor *y = ts_conv2d(ts_arg(c, 0), ts_arg(c, 1), 1, 1, TS_PADDING_VALID);
  return ts_add(ts_relu(y), y);
}

static ts_tensor *tensor_of(ts_dtype dt, ts_shape s, uint32_t seed)
{
  float *v = filled(ts_shape_size(s), seed);
  ts_tensor *t = ts_constant(TS_F32, s, v);
  g_free(v);
  return dt == TS_F32 ? t : ts_cast(t, dt);
}

/* fn's result with every pass off and on, compared; fused_nodes: how
 * many _FusedConv2D the optimized graph holds. */
static void check_fused(const char *name, ts_fn fn, ts_dtype dt, int fused_nodes, double tol)
{
  ts_scope *scope = ts_scope_begin();
  ts_value args[] = { TS_TENSOR_VALUE(tensor_of(dt, TS_SHAPE(2, 9, 7, 6), 1)),
                      TS_TENSOR_VALUE(tensor_of(dt, TS_SHAPE(3, 3, 6, 19), 2)),
                      TS_TENSOR_VALUE(tensor_of(dt, TS_SHAPE(19), 3)) };
  ts_tensor *res[2];
  ts_function *f[2];
  for (int on = 0; on < 2; on++) {
    g_assert_true(ts_set_passes(on ? "all" : "none"));
    f[on] = ts_function_new(name, fn, "x, f, b");
    ts_concrete *cf = ts_function_get_concrete(f[on], args, 3);
    assert_no_error();
    ts_graph *g = ts_graph_optimize(ts_concrete_graph(cf), on ? "all" : "none", NULL);
    assert_no_error();
    int n = 0;
    for (int id = 0; id < ts_graph_n_nodes(g); id++)
      n += ts_node_op(ts_graph_node(g, id)) == TS_OP_FUSED_CONV2D;
    g_assert_cmpint(n, ==, on ? fused_nodes : 0);
    ts_graph_free(g);
    res[on] = ts_function_call(f[on], args, 3);
    assert_no_error();
    g_assert_nonnull(res[on]);
  }
  g_assert_true(ts_set_passes("all"));
  g_assert_true(ts_shape_equal(ts_tensor_shape(res[0]), ts_tensor_shape(res[1])));
  for (int64_t i = 0; i < ts_tensor_size(res[0]); i++) {
    double a = ts_tensor_get_f64(res[0], i), b = ts_tensor_get_f64(res[1], i);
    if (!(fabs(a - b) <= tol))
      g_error("%s: element %" G_GINT64_FORMAT ": unfused %.9g, fused %.9g", name, i, a, b);
  }
  ts_function_free(f[0]);
  ts_function_free(f[1]);
  ts_scope_end(scope);
}

static void test_fused_conv(void)
{
  for (int d = 0; d < 2; d++) {
    ts_dtype dt = d ? TS_F64 : TS_F32;
    double tol = d ? 1e-12 : 1e-5;
    check_fused("conv_bias_relu", conv_bias_relu, dt, 1, tol);
    check_fused("conv_tanh_strided", conv_tanh_strided, dt, 1, tol);
    check_fused("bias_first_sigmoid", bias_first_sigmoid, dt, 1, tol);
    check_fused("conv_used_twice", conv_used_twice, dt, 0, tol);
  }
}

static ts_tensor *conv_same(ts_call *c)
{
  return ts_conv2d(ts_arg(c, 0), ts_arg(c, 1), 1, 1, TS_PADDING_SAME);
}

/* Conv2D offers it to the choice for 3x3 stride-1 f32 shapes, by name,
 * and the direct strips for at most 64 output channels (not for 65).
 * The choices asked of the engine's library: this binary links its own
 * copy of the kernels, whose ts_kernel_choices() would shadow it. */
static void test_winograd_candidate(void)
{
  if (!ts__blas_available()) {
    g_test_skip("OpenBLAS not loaded: the choice is not timed");
    return;
  }
  void *lib = dlopen("libtracescope.so.0", RTLD_LAZY | RTLD_NOLOAD);
  g_assert_nonnull(lib);
  char *(*engine_choices)(void) = (char *(*)(void))dlsym(lib, "ts_kernel_choices");
  g_assert_nonnull(engine_choices);
  ts_scope *scope = ts_scope_begin();
  ts_value args[] = { TS_TENSOR_VALUE(tensor_of(TS_F32, TS_SHAPE(1, 10, 13, 24), 31)),
                      TS_TENSOR_VALUE(tensor_of(TS_F32, TS_SHAPE(3, 3, 24, 20), 32)) };
  ts_function *f = ts_function_new("conv_same", conv_same, "x, f");
  ts_tensor *y = ts_function_call(f, args, 2);
  assert_no_error();
  g_assert_nonnull(y);
  ts_value wide[] = { args[0], TS_TENSOR_VALUE(tensor_of(TS_F32, TS_SHAPE(3, 3, 24, 65), 33)) };
  g_assert_nonnull(ts_function_call(f, wide, 2));
  assert_no_error();
  char *choices = engine_choices();
  g_auto(GStrv) lines = g_strsplit(choices, "\n", -1);
  char *direct = g_strdup_printf("%s ", ts__strip_best()->label);
  int seen = 0;
  for (char **l = lines; *l; l++) {
    if (g_str_has_prefix(*l, "conv 1x10x13x24 * 3x3->20 stride 1,1 pad 1,1: ")) {
      g_assert_nonnull(strstr(*l, "winograd F(2x2,3x3) "));
      g_assert_nonnull(strstr(*l, direct));
      seen++;
    } else if (g_str_has_prefix(*l, "conv 1x10x13x24 * 3x3->65 stride 1,1 pad 1,1: ")) {
      g_assert_nonnull(strstr(*l, "winograd F(2x2,3x3) "));
      g_assert_null(strstr(*l, direct));
      seen++;
    }
  }
  g_assert_cmpint(seen, ==, 2);
  g_free(direct);
  free(choices);
  ts_function_free(f);
  ts_scope_end(scope);
  dlclose(lib);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/kernels/tiles", test_tile_kernels);
  g_test_add_func("/kernels/rows-exact", test_rows_exact);
  g_test_add_func("/kernels/gemm-threads", test_gemm_threads);
  g_test_add_func("/kernels/act-from-name", test_act_from_name);
  g_test_add_func("/kernels/chosen-and-blas", test_chosen_and_blas);
  g_test_add_func("/kernels/k-zero", test_k_zero);
  g_test_add_func("/kernels/relu-nan", test_relu_nan);
  g_test_add_func("/kernels/cpu-features", test_cpu_features);
  g_test_add_func("/kernels/blas-core-for", test_blas_core_for);
  g_test_add_func("/kernels/blas-loaded", test_blas_loaded);
  g_test_add_func("/kernels/conv", test_conv_kernels);
  g_test_add_func("/kernels/conv-direct", test_conv_direct);
  g_test_add_func("/kernels/conv-direct-threads", test_conv_direct_threads);
  g_test_add_func("/kernels/fused-conv", test_fused_conv);
  g_test_add_func("/kernels/winograd", test_winograd);
  g_test_add_func("/kernels/winograd-threads", test_winograd_threads);
  g_test_add_func("/kernels/winograd-degenerate", test_winograd_degenerate);
  g_test_add_func("/kernels/winograd-candidate", test_winograd_candidate);
  return g_test_run();
}
