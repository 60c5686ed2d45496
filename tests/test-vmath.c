/* test-vmath.c — the f32 exp, tanh and sigmoid kernels (engine/kernels/
 * vmath*.c): within their ulp bound (exp and tanh 1, sigmoid 2) of the
 * correctly rounded value (libm's double, rounded) on a dense sweep of all
 * floats plus every float of the ranges where they are delicate (`-m slow`:
 * all 2^32 floats), libm's special values, the same bits on every path this
 * CPU runs whatever the split of the array (`-m slow`: for every float), and
 * the ops, fused chains and GEMM epilogues computing with them. */
#include <glib.h>
#include <math.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "kernels/kernels.h"

/* ---- the functions and their references ------------------------------------- */

static double exp_ref(double x)
{
  return exp(x);
}

static double sigmoid_ref(double x)
{
  return 1 / (1 + exp(-x));
}

typedef struct vm_fn {
  const char *name;
  size_t at; /* of its ts_vmath_fn in ts_vmath_kernel */
  double (*ref)(double x);
  int64_t max_ulp; /* from the correctly rounded value (vmath_body.h) */
} vm_fn;

static const vm_fn FNS[] = {
  { "exp", offsetof(ts_vmath_kernel, vexp), exp_ref, 1 },
  { "tanh", offsetof(ts_vmath_kernel, vtanh), tanh, 1 },
  { "sigmoid", offsetof(ts_vmath_kernel, vsigmoid), sigmoid_ref, 2 },
};

static ts_vmath_fn fn_of(const ts_vmath_kernel *k, const vm_fn *f)
{
  return *(const ts_vmath_fn *)((const char *)k + f->at);
}

static float from_bits(uint32_t b)
{
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

static uint32_t bits_of(float f)
{
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* Floats in order as integers: the ulps between two is their difference. */
static int64_t ordered(float f)
{
  uint32_t b = bits_of(f);
  return b >> 31 ? -(int64_t)(b & 0x7fffffffu) : (int64_t)b;
}

/* ---- accuracy ------------------------------------------------------------------ */

#define CHUNK 65536

typedef struct sweep {
  const vm_fn *fn;
  ts_vmath_fn run;
  float x[CHUNK], y[CHUNK];
  int n;
  int64_t checked, inexact; /* inexact: not the correctly rounded value */
  int64_t worst;            /* ulps from it */
} sweep;

static void flush(sweep *s)
{
  s->run(s->x, s->y, s->n);
  for (int i = 0; i < s->n; i++) {
    float x = s->x[i], want = (float)s->fn->ref(x), got = s->y[i];
    if (isnan(want) || isnan(got)) {
      if (!(isnan(want) && isnan(got)))
        g_error("%s(%a): got %a, want %a", s->fn->name, x, got, want);
      continue;
    }
    int64_t d = ordered(got) - ordered(want);
    d = d < 0 ? -d : d;
    if (d > s->fn->max_ulp || (d != 0 && isinf(want)))
      g_error("%s(%a = %.9g): got %a, want %a (%" G_GINT64_FORMAT " ulp)", s->fn->name, x, x,
              got, want, d);
    s->inexact += d != 0;
    s->worst = MAX(s->worst, d);
  }
  s->checked += s->n;
  s->n = 0;
}

static void add(sweep *s, float x)
{
  s->x[s->n++] = x;
  if (s->n == CHUNK)
    flush(s);
}

/* Every float from lo to hi (both finite, lo <= hi), both signs. */
static void add_range(sweep *s, float lo, float hi)
{
  for (uint32_t b = bits_of(lo); b <= bits_of(hi); b++) {
    add(s, from_bits(b));
    add(s, -from_bits(b));
  }
}

/* Where each is delicate: exp's underflow to denormals and 0, its overflow,
 * and 1 + x near 0; tanh near 0 (|x| < 1e-3: x - x^3/3), where it turns
 * from its polynomial to e^2x (0.625), and where it reaches 1; sigmoid's
 * denormals, where it reaches 1, and around -1.1 (its largest error). */
static void add_delicate(sweep *s)
{
  if (strcmp(s->fn->name, "exp") == 0) {
    add_range(s, 87.0f, 104.0f);
    add_range(s, 0x1p-25f, 0x1p-23f);
  } else if (strcmp(s->fn->name, "tanh") == 0) {
    add_range(s, 0x1p-13f, 1e-3f);
    for (uint32_t b = 0; b < bits_of(0x1p-13f); b += 61)
      add(s, from_bits(b));
    add_range(s, 0.5f, 0.75f);
    add_range(s, 8.0f, 10.5f);
  } else {
    add_range(s, 85.0f, 104.0f);
    add_range(s, 15.0f, 18.0f);
    add_range(s, 1.0f, 1.25f);
  }
}

static void test_accuracy(void)
{
  bool all = g_test_slow();
  uint32_t step = all ? 1 : 1u << 8;
  sweep *s = g_new0(sweep, 1);
  for (size_t f = 0; f < G_N_ELEMENTS(FNS); f++) {
    *s = (sweep){ .fn = &FNS[f], .run = fn_of(ts__vmath_best(), &FNS[f]) };
    /* every step-th pattern, the low bits varying too */
    for (uint64_t b = 0; b < (uint64_t)1 << 32; b += step)
      add(s, from_bits((uint32_t)b + (all ? 0 : (uint32_t)(b >> 8) * 37 % step)));
    if (!all)
      add_delicate(s);
    flush(s);
    g_test_message("%s on %s: %" G_GINT64_FORMAT " floats, %" G_GINT64_FORMAT
                   " not the correctly rounded value, at most %" G_GINT64_FORMAT " ulp from it",
                   FNS[f].name, ts__vmath_best()->name, s->checked, s->inexact, s->worst);
  }
  g_free(s);
}

/* ---- special values --------------------------------------------------------------- */

static float one(ts_vmath_fn run, float x)
{
  float y;
  run(&x, &y, 1);
  return y;
}

static void assert_bits(const char *what, float x, float got, float want)
{
  if (bits_of(got) != bits_of(want) && !(isnan(got) && isnan(want)))
    g_error("%s(%a): got %a, want %a", what, x, got, want);
}

static void test_special(void)
{
  const ts_vmath_kernel *k = ts__vmath_best();
  static const struct {
    int fn;
    float x, want;
  } cases[] = {
    { 0, -INFINITY, 0 },     { 0, INFINITY, INFINITY }, { 0, NAN, NAN },        { 0, -NAN, NAN },
    { 0, 0, 1 },             { 0, -0.0f, 1 },           { 0, 89, INFINITY },    { 0, 0x1p127f, INFINITY },
    { 0, -104, 0 },          { 0, -0x1p127f, 0 },
    { 0, 88.72283172607421875f, 0x1.ffff08p127f }, /* the largest finite result */
    { 0, 88.7228393554687500f, INFINITY },
    { 0, -103.27892303466797f, 0x1p-149f },       /* rounds up to the smallest denormal */
    { 1, 0, 0 },             { 1, -0.0f, -0.0f },       { 1, INFINITY, 1 },     { 1, -INFINITY, -1 },
    { 1, NAN, NAN },         { 1, 0x1p-149f, 0x1p-149f }, { 1, -0x1p-149f, -0x1p-149f },
    { 1, 0x1.fffffep127f, 1 }, { 1, -0x1.fffffep127f, -1 }, { 1, 0x1p-20f, 0x1p-20f },
    { 2, -INFINITY, 0 },     { 2, INFINITY, 1 },        { 2, NAN, NAN },        { 2, 0, 0.5f },
    { 2, -0.0f, 0.5f },      { 2, -0x1.fffffep127f, 0 }, { 2, 0x1.fffffep127f, 1 }, { 2, -105, 0 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const vm_fn *f = &FNS[cases[i].fn];
    assert_bits(f->name, cases[i].x, one(fn_of(k, f), cases[i].x), cases[i].want);
  }
  /* and libm's answer for the edges of exp and sigmoid's ranges */
  static const float edges[] = { -103.97208f, -103.9721f, -87.33655f, -87.3365f, 88.72283f,
                                 88.722839f, -88.72284f, 16.635532f, 17.328680f, -16.635532f };
  for (size_t i = 0; i < G_N_ELEMENTS(edges); i++)
    for (size_t f = 0; f < G_N_ELEMENTS(FNS); f++) {
      float want = (float)FNS[f].ref(edges[i]), got = one(fn_of(k, &FNS[f]), edges[i]);
      int64_t d = ordered(got) - ordered(want);
      if (d > FNS[f].max_ulp || d < -FNS[f].max_ulp || (d && (isinf(want) || want == 0)))
        g_error("%s(%a): got %a, want %a", FNS[f].name, edges[i], got, want);
    }
}

/* ---- every path, every split --------------------------------------------------------- */

/* Random bit patterns (every class of float), values where the functions
 * vary, and the special values. */
static float *mixed(int64_t n)
{
  static const float special[] = { 0, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 0x1p-149f,
                                   -0x1p-149f, 0x1.fffffep127f, -0x1.fffffep127f, 89, -104 };
  float *v = g_new(float, (size_t)n);
  GRand *r = g_rand_new_with_seed(14);
  for (int64_t i = 0; i < n; i++) {
    switch (i % 4) {
    case 0: v[i] = from_bits(g_rand_int(r)); break;
    case 1: v[i] = (float)g_rand_double_range(r, -20, 20); break;
    case 2: v[i] = (float)g_rand_double_range(r, -110, 110); break;
    default: v[i] = special[g_rand_int_range(r, 0, G_N_ELEMENTS(special))];
    }
  }
  g_rand_free(r);
  return v;
}

static const ts_vmath_kernel *const PATHS[] = { &ts__vmath_avx512, &ts__vmath_avx2, &ts__vmath_c };

/* With -m slow: every float on every path against the portable one. */
static void all_floats_agree(void)
{
  float *x = g_new(float, CHUNK), *want = g_new(float, CHUNK), *got = g_new(float, CHUNK);
  for (uint64_t b = 0; b < (uint64_t)1 << 32; b += CHUNK) {
    for (int i = 0; i < CHUNK; i++)
      x[i] = from_bits((uint32_t)(b + (uint64_t)i));
    for (size_t f = 0; f < G_N_ELEMENTS(FNS); f++) {
      fn_of(&ts__vmath_c, &FNS[f])(x, want, CHUNK);
      for (size_t p = 0; p < G_N_ELEMENTS(PATHS) - 1; p++) {
        if (!PATHS[p]->usable(ts__cpu()))
          continue;
        fn_of(PATHS[p], &FNS[f])(x, got, CHUNK);
        for (int i = 0; i < CHUNK; i++)
          if (bits_of(got[i]) != bits_of(want[i]))
            g_error("%s(%a) on %s: %a, portable: %a", FNS[f].name, x[i], PATHS[p]->name, got[i],
                    want[i]);
      }
    }
  }
  g_test_message("every float: the same bits on every path this CPU runs");
  g_free(x);
  g_free(want);
  g_free(got);
}

static void test_paths_agree(void)
{
  const int64_t n = 100003;
  static const int64_t lengths[] = { 0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 1001 };
  float *x = mixed(n), *want = g_new(float, n), *got = g_new(float, n + 16);
  int ran = 0;
  for (size_t p = 0; p < G_N_ELEMENTS(PATHS); p++) {
    if (!PATHS[p]->usable(ts__cpu())) {
      g_test_message("path %s: not on this CPU", PATHS[p]->name);
      continue;
    }
    ran++;
    for (size_t f = 0; f < G_N_ELEMENTS(FNS); f++) {
      fn_of(&ts__vmath_c, &FNS[f])(x, want, n);
      ts_vmath_fn run = fn_of(PATHS[p], &FNS[f]);
      /* the whole array, then pieces of odd lengths at every offset */
      run(x, got, n);
      g_assert_cmpmem(got, n * sizeof *got, want, n * sizeof *want);
      for (int64_t off = 0; off < 8; off++)
        for (size_t l = 0; l < G_N_ELEMENTS(lengths); l++) {
          int64_t len = lengths[l], at = off + 97 * (int64_t)l;
          memset(got, 0xff, (size_t)(len + 16) * sizeof *got);
          run(x + at, got + off, len);
          g_assert_cmpmem(got + off, len * sizeof *got, want + at, len * sizeof *want);
          g_assert_cmpuint(bits_of(got[off + len]), ==, 0xffffffffu); /* nothing past the end */
        }
      /* in place */
      memcpy(got, x, n * sizeof *x);
      run(got + 3, got + 3, n - 3);
      g_assert_cmpmem(got + 3, (n - 3) * sizeof *got, want + 3, (n - 3) * sizeof *want);
    }
  }
  g_test_message("%d paths agree bit for bit (the best: %s)", ran, ts__vmath_best()->name);
  g_free(x);
  g_free(want);
  g_free(got);
  if (g_test_slow())
    all_floats_agree();
}

/* ---- where the engine uses them ----------------------------------------------------- */

static ts_tensor *tanh_of_sigmoid_times(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  return ts_exp(ts_tanh(ts_mul(ts_sigmoid(x), x)));
}

static void assert_tensor_bits(ts_tensor *t, const float *want, int64_t n)
{
  assert_no_error();
  g_assert_nonnull(t);
  g_assert_cmpint(ts_tensor_size(t), ==, n);
  g_assert_cmpmem(ts_tensor_data(t), n * sizeof *want, want, n * sizeof *want);
}

/* The f32 ops eagerly, and a chain the fusion pass makes one
 * FusedElementwise of (several blocks, a tail), give the kernels' bits. */
static void test_ops(void)
{
  const int64_t n = 1000;
  ts_scope *scope = ts_scope_begin();
  float *x = mixed(n), *want = g_new(float, n);
  ts_tensor *t = ts_constant(TS_F32, TS_SHAPE(n), x);
  ts__vexp_f32(x, want, n);
  assert_tensor_bits(ts_exp(t), want, n);
  ts__vtanh_f32(x, want, n);
  assert_tensor_bits(ts_tanh(t), want, n);
  ts__vsigmoid_f32(x, want, n);
  assert_tensor_bits(ts_sigmoid(t), want, n);

  for (int64_t i = 0; i < n; i++)
    want[i] *= x[i];
  ts__vtanh_f32(want, want, n);
  ts__vexp_f32(want, want, n);
  g_assert_true(ts_set_passes("all"));
  ts_function *fn = ts_function_new("tanh_of_sigmoid_times", tanh_of_sigmoid_times, "x");
  ts_value arg = TS_TENSOR_VALUE(t);
  assert_tensor_bits(ts_function_call(fn, &arg, 1), want, n);
  const ts_graph *g = ts_concrete_optimized_graph(ts_function_concrete(fn, 0));
  int fused = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    fused += ts_node_op(ts_graph_node(g, i)) == TS_OP_FUSED_ELEMENTWISE;
  g_assert_cmpint(fused, ==, 1);
  ts_function_free(fn);
  g_free(x);
  g_free(want);
  ts_scope_end(scope);
}

/* The GEMM epilogues (every tile kernel this CPU runs, and ts__act_f32 as
 * OpenBLAS's products take it) apply the kernels' sigmoid and tanh. */
static void test_epilogues(void)
{
  const ts_tile_kernel *tiles[] = { &ts__tile_avx512, &ts__tile_avx2, &ts__tile_c };
  const int64_t m = 13, k = 9, n = 37;
  float *a = mixed(m * k), *b = mixed(k * n), *bias = mixed(n);
  for (int64_t i = 0; i < m * k; i++)
    a[i] = isfinite(a[i]) ? fmodf(a[i], 4) : 1;
  for (int64_t i = 0; i < k * n; i++)
    b[i] = isfinite(b[i]) ? fmodf(b[i], 4) : -1;
  for (int64_t i = 0; i < n; i++)
    bias[i] = isfinite(bias[i]) ? fmodf(bias[i], 4) : 0.5f;
  float *plain = g_new(float, m * n), *want = g_new(float, m * n), *got = g_new(float, m * n);
  static const ts_act acts[] = { TS_ACT_SIGMOID, TS_ACT_TANH };
  for (size_t t = 0; t < G_N_ELEMENTS(tiles); t++) {
    if (!tiles[t]->usable(ts__cpu()))
      continue;
    ts_gemm g = { .m = m, .n = n, .k = k, .a = a, .b = b, .bias = bias, .c = plain, .act = TS_ACT_NONE };
    ts__gemm_f32_with(tiles[t], &g);
    for (size_t i = 0; i < G_N_ELEMENTS(acts); i++) {
      (acts[i] == TS_ACT_SIGMOID ? ts__vsigmoid_f32 : ts__vtanh_f32)(plain, want, m * n);
      g.act = acts[i];
      g.c = got;
      ts__gemm_f32_with(tiles[t], &g);
      g_assert_cmpmem(got, m * n * sizeof *got, want, m * n * sizeof *want);
      memcpy(got, plain, m * n * sizeof *got);
      ts__act_f32(acts[i], got, m * n);
      g_assert_cmpmem(got, m * n * sizeof *got, want, m * n * sizeof *want);
      g.c = plain;
      g.act = TS_ACT_NONE;
    }
  }
  g_free(a);
  g_free(b);
  g_free(bias);
  g_free(plain);
  g_free(want);
  g_free(got);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/vmath/accuracy", test_accuracy);
  g_test_add_func("/vmath/special", test_special);
  g_test_add_func("/vmath/paths-agree", test_paths_agree);
  g_test_add_func("/vmath/ops", test_ops);
  g_test_add_func("/vmath/epilogues", test_epilogues);
  return g_test_run();
}
