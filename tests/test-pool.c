/* test-pool.c — the engine's thread pool and the ops split across it:
 * every item runs once (nested, from several threads at once, while the
 * thread count changes), the thread-count setting, and ops giving the same
 * bits at 1, 2 and 4 threads on sizes that split unevenly (elementwise,
 * reductions, transposes, FusedElementwise). */
#include <tracescope.h>
#include <tracescope-backend.h>

#include <glib.h>
#include <stdlib.h>
#include <string.h>

static const int COUNTS[] = { 1, 2, 4 };
static int initial_threads; /* ts_get_threads() when the program started */

/* ---- the pool --------------------------------------------------------------------- */

typedef struct coverage {
  int *hits; /* atomic, one per item */
  int64_t n;
} coverage;

static void hit(void *ctx, int64_t i)
{
  coverage *c = ctx;
  g_assert_cmpint(i, >=, 0);
  g_assert_cmpint(i, <, c->n);
  __atomic_fetch_add(&c->hits[i], 1, __ATOMIC_RELAXED);
}

/* Runs n items through ts_parallel_for and checks each ran once. */
static void check_cover(int64_t n)
{
  coverage c = { g_new0(int, n ? n : 1), n };
  ts_parallel_for(n, hit, &c);
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpint(c.hits[i], ==, 1);
  g_free(c.hits);
}

static void test_every_item_once(void)
{
  static const int64_t SIZES[] = { 0, 1, 2, 3, 7, 64, 1001 };
  for (size_t t = 0; t < G_N_ELEMENTS(COUNTS); t++) {
    g_assert_true(ts_set_threads(COUNTS[t]));
    for (int round = 0; round < 50; round++)
      for (size_t s = 0; s < G_N_ELEMENTS(SIZES); s++)
        check_cover(SIZES[s]);
  }
  g_assert_true(ts_set_threads(0));
}

static void nested_item(void *ctx, int64_t i)
{
  coverage *outer = ctx;
  coverage inner = { outer->hits + i * 10, 10 };
  ts_parallel_for(10, hit, &inner); /* runs inline: never waits for the pool it is in */
}

static void test_nested(void)
{
  g_assert_true(ts_set_threads(4));
  for (int round = 0; round < 20; round++) {
    coverage c = { g_new0(int, 37 * 10), 37 };
    ts_parallel_for(37, nested_item, &c);
    for (int i = 0; i < 37 * 10; i++)
      g_assert_cmpint(c.hits[i], ==, 1);
    g_free(c.hits);
  }
  g_assert_true(ts_set_threads(0));
}

static gpointer caller_thread(gpointer data)
{
  for (int round = 0; round < 200; round++)
    check_cover(97 + round % 5);
  return NULL;
}

static void test_concurrent_callers(void)
{
  g_assert_true(ts_set_threads(3));
  GThread *threads[4];
  for (int i = 0; i < 4; i++)
    threads[i] = g_thread_new("caller", caller_thread, NULL);
  caller_thread(NULL);
  for (int i = 0; i < 4; i++)
    g_thread_join(threads[i]);
  g_assert_true(ts_set_threads(0));
}

/* ---- the setting ------------------------------------------------------------------ */

static void set_from_item(void *ctx, int64_t i)
{
  int *refused = ctx;
  if (!ts_set_threads(1)) {
    ts_error *e = ts_error_take();
    g_assert_nonnull(strstr(e->message, "ts_set_threads"));
    ts_error_free(e);
    __atomic_fetch_add(refused, 1, __ATOMIC_RELAXED);
  }
}

static void test_setting(void)
{
  const char *env = g_getenv("TRACESCOPE_THREADS");
  int cores = g_get_num_processors();
  g_assert_cmpint(initial_threads, ==, env && atoi(env) > 0 ? atoi(env) : cores);

  g_assert_true(ts_set_threads(3));
  g_assert_cmpint(ts_get_threads(), ==, 3);
  g_assert_true(ts_set_threads(0));
  g_assert_cmpint(ts_get_threads(), ==, MIN(cores, TS_MAX_THREADS));

  int bad[] = { -1, TS_MAX_THREADS + 1 };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_false(ts_set_threads(bad[i]));
    ts_error *e = ts_error_take();
    g_assert_nonnull(e);
    g_assert_nonnull(strstr(e->message, "ts_set_threads: invalid argument"));
    ts_error_free(e);
    g_assert_cmpint(ts_get_threads(), ==, MIN(cores, TS_MAX_THREADS));
  }

  /* growing and shrinking between jobs keeps every item covered */
  static const int STEPS[] = { 4, 2, 1, 3, 8, 1, 2 };
  for (size_t i = 0; i < G_N_ELEMENTS(STEPS); i++) {
    g_assert_true(ts_set_threads(STEPS[i]));
    check_cover(513);
  }

  /* inside a job the pool is held: changing it there is refused, not a deadlock */
  g_assert_true(ts_set_threads(2));
  int refused = 0;
  ts_parallel_for(2, set_from_item, &refused);
  g_assert_cmpint(refused, ==, 2);
  g_assert_cmpint(ts_get_threads(), ==, 2);
  g_assert_true(ts_set_threads(0));
}

/* ---- ops at every thread count ----------------------------------------------------- */

typedef ts_tensor *(*op_case)(ts_tensor *const *in);

/* Runs op at each of COUNTS and checks the outputs are equal bit for bit. */
static void assert_same_bits(const char *what, op_case op, ts_tensor *const *in)
{
  ts_tensor *first = NULL;
  for (size_t t = 0; t < G_N_ELEMENTS(COUNTS); t++) {
    g_assert_true(ts_set_threads(COUNTS[t]));
    ts_tensor *out = op(in);
    if (!out)
      g_error("%s: %s", what, ts_error_peek()->message);
    if (!first) {
      first = out;
      continue;
    }
    g_assert_true(ts_shape_equal(ts_tensor_shape(out), ts_tensor_shape(first)));
    size_t bytes = (size_t)ts_tensor_size(out) * ts_dtype_size(ts_tensor_dtype(out));
    if (memcmp(ts_tensor_data(out), ts_tensor_data(first), bytes) != 0)
      g_error("%s: %d threads differ from 1", what, COUNTS[t]);
  }
  g_assert_true(ts_set_threads(0));
}

static ts_tensor *sum_all(ts_tensor *const *in) { return ts_reduce_sum(in[0], TS_ALL_AXES, false); }
static ts_tensor *mean_all(ts_tensor *const *in) { return ts_reduce_mean(in[0], TS_ALL_AXES, false); }
static ts_tensor *max_all(ts_tensor *const *in) { return ts_reduce_max(in[0], TS_ALL_AXES, false); }
static ts_tensor *prod_all(ts_tensor *const *in) { return ts_reduce_prod(in[0], TS_ALL_AXES, false); }
static ts_tensor *sum_0(ts_tensor *const *in) { return ts_reduce_sum(in[0], TS_AXES(0), false); }
static ts_tensor *sum_1(ts_tensor *const *in) { return ts_reduce_sum(in[0], TS_AXES(1), true); }
static ts_tensor *mean_02(ts_tensor *const *in) { return ts_reduce_mean(in[0], TS_AXES(0, 2), false); }
static ts_tensor *min_last(ts_tensor *const *in) { return ts_reduce_min(in[0], TS_AXES(-1), false); }

static void test_reductions(void)
{
  static const struct {
    const char *what;
    op_case op;
    ts_shape shape;
  } CASES[] = {
    { "sum of 100003", sum_all, TS_SHAPE(100003) },
    { "mean of 100003", mean_all, TS_SHAPE(100003) },
    { "max of 3x33335", max_all, TS_SHAPE(3, 33335) },
    { "prod of 70001", prod_all, TS_SHAPE(70001) },
    { "sum over axis 0 of 70001x3", sum_0, TS_SHAPE(70001, 3) },
    { "sum over axis 0 of 5x40001", sum_0, TS_SHAPE(5, 40001) },
    { "sum over axis 1 of 3x70001", sum_1, TS_SHAPE(3, 70001) },
    { "sum over axis 1 of 129x1001", sum_1, TS_SHAPE(129, 1001) },
    { "mean over axes 0, 2 of 7x9001x5", mean_02, TS_SHAPE(7, 9001, 5) },
    { "min over the last axis of 3x5x7919", min_last, TS_SHAPE(3, 5, 7919) },
  };
  static const ts_dtype DTYPES[] = { TS_F32, TS_F64, TS_I32, TS_I64 };
  for (size_t c = 0; c < G_N_ELEMENTS(CASES); c++)
    for (size_t d = 0; d < G_N_ELEMENTS(DTYPES); d++) {
      ts_scope *scope = ts_scope_begin();
      bool prod = CASES[c].op == prod_all;
      ts_tensor *x = ts_cast(ts_random_uniform(TS_F64, CASES[c].shape, prod ? 0.99 : -1000,
                                               prod ? 1.01 : 1000, 7),
                             DTYPES[d]);
      char *what = g_strdup_printf("%s %s", CASES[c].what, ts_dtype_name(DTYPES[d]));
      assert_same_bits(what, CASES[c].op, &x);
      g_free(what);
      ts_scope_end(scope);
    }
}

/* The sum of a large ramp is exact in f64 whichever way it is split. */
static void test_reduction_values(void)
{
  g_assert_true(ts_set_threads(4));
  int64_t n = 7 * 42858;
  ts_tensor *x = ts_range(TS_F64, 0, (double)n, 1);
  ts_tensor *s = ts_reduce_sum(x, TS_ALL_AXES, false);
  g_assert_cmpfloat(ts_tensor_get_f64(s, 0), ==, (double)n * (double)(n - 1) / 2);
  ts_tensor *m = ts_reduce_max(ts_reshape(x, TS_SHAPE(7, 42858, 1)), TS_AXES(1), false);
  for (int i = 0; i < 7; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(m, i), ==, (double)(i + 1) * 42858 - 1);
  g_assert_true(ts_set_threads(0));
}

static ts_tensor *add_rows(ts_tensor *const *in) { return ts_add(in[0], in[1]); }
static ts_tensor *mul_outer(ts_tensor *const *in) { return ts_mul(in[2], in[3]); }
static ts_tensor *exp_flat(ts_tensor *const *in) { return ts_exp(in[0]); }
static ts_tensor *greater_scalar(ts_tensor *const *in) { return ts_greater(in[0], in[4]); }
static ts_tensor *cast_i32(ts_tensor *const *in) { return ts_cast(in[0], TS_I32); }
static ts_tensor *where_bcast(ts_tensor *const *in)
{
  return ts_where(ts_greater(in[2], ts_scalar_f32(0)), in[0], in[1]);
}

static void test_elementwise(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *in[] = {
    ts_random_uniform(TS_F32, TS_SHAPE(301, 1001), -3, 3, 1),
    ts_random_uniform(TS_F32, TS_SHAPE(1001), -3, 3, 2),
    ts_random_uniform(TS_F32, TS_SHAPE(301, 1), -3, 3, 3),
    ts_random_uniform(TS_F32, TS_SHAPE(1, 1001), -3, 3, 4),
    ts_scalar_f32(0.5f),
  };
  assert_same_bits("add [301,1001] + [1001]", add_rows, in);
  assert_same_bits("mul [301,1] * [1,1001]", mul_outer, in);
  assert_same_bits("exp [301,1001]", exp_flat, in);
  assert_same_bits("greater [301,1001] > scalar", greater_scalar, in);
  assert_same_bits("cast [301,1001] to int32", cast_i32, in);
  assert_same_bits("where [301,1] ? [301,1001] : [1001]", where_bcast, in);

  /* split results against the elements themselves */
  g_assert_true(ts_set_threads(4));
  ts_tensor *sum = ts_add(in[0], in[1]), *outer = ts_mul(in[2], in[3]);
  const float *a = ts_tensor_data(in[0]), *b = ts_tensor_data(in[1]);
  const float *c = ts_tensor_data(in[2]), *d = ts_tensor_data(in[3]);
  const float *s = ts_tensor_data(sum), *o = ts_tensor_data(outer);
  for (int64_t i = 0; i < 301; i++)
    for (int64_t j = 0; j < 1001; j++) {
      g_assert_cmpfloat(s[i * 1001 + j], ==, a[i * 1001 + j] + b[j]);
      g_assert_cmpfloat(o[i * 1001 + j], ==, c[i] * d[j]);
    }
  g_assert_true(ts_set_threads(0));
  ts_scope_end(scope);
}

static ts_tensor *transpose_lines(ts_tensor *const *in)
{
  return ts_transpose(in[0], TS_INTS(2, 0, 3, 1, 4));
}
static ts_tensor *transpose_nhwc(ts_tensor *const *in)
{
  return ts_transpose(in[1], TS_INTS(0, 2, 3, 1));
}
static ts_tensor *transpose_2d(ts_tensor *const *in) { return ts_transpose(in[2], TS_INTS(1, 0)); }
static ts_tensor *transpose_f64(ts_tensor *const *in)
{
  return ts_transpose(ts_cast(in[0], TS_F64), TS_INTS(4, 3, 2, 1, 0));
}

/* Transposes split by lines of the output and by bands of columns. */
static void test_transpose(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *in[] = {
    ts_random_uniform(TS_F32, TS_SHAPE(7, 33, 3, 5, 17), -3, 3, 15),
    ts_random_uniform(TS_F32, TS_SHAPE(9, 3, 37, 29), -3, 3, 16),
    ts_random_uniform(TS_F32, TS_SHAPE(301, 1001), -3, 3, 17),
  };
  assert_same_bits("transpose [7,33,3,5,17] by [2,0,3,1,4]", transpose_lines, in);
  assert_same_bits("transpose [9,3,37,29] NCHW to NHWC", transpose_nhwc, in);
  assert_same_bits("transpose [301,1001]", transpose_2d, in);
  assert_same_bits("transpose f64 [7,33,3,5,17] reversed", transpose_f64, in);

  /* split results against the elements themselves */
  g_assert_true(ts_set_threads(4));
  const float *a = ts_tensor_data(in[0]), *b = ts_tensor_data(in[1]);
  const float *ta = ts_tensor_data(transpose_lines(in)), *tb = ts_tensor_data(transpose_nhwc(in));
  int64_t at = 0;
  for (int64_t i2 = 0; i2 < 3; i2++)
    for (int64_t i0 = 0; i0 < 7; i0++)
      for (int64_t i3 = 0; i3 < 5; i3++)
        for (int64_t i1 = 0; i1 < 33; i1++)
          for (int64_t i4 = 0; i4 < 17; i4++)
            g_assert_cmpfloat(ta[at++], ==, a[(((i0 * 33 + i1) * 3 + i2) * 5 + i3) * 17 + i4]);
  at = 0;
  for (int64_t n = 0; n < 9; n++)
    for (int64_t h = 0; h < 37; h++)
      for (int64_t w = 0; w < 29; w++)
        for (int64_t c = 0; c < 3; c++)
          g_assert_cmpfloat(tb[at++], ==, b[((n * 3 + c) * 37 + h) * 29 + w]);
  g_assert_true(ts_set_threads(0));
  ts_scope_end(scope);
}

/* relu(x * y + z) with y and z broadcast: one FusedElementwise node. */
static ts_tensor *fused_fn(ts_call *call)
{
  return ts_relu(ts_add(ts_mul(ts_arg(call, 0), ts_arg(call, 1)), ts_arg(call, 2)));
}

/* A layer norm's shape of program: (x - m) / sqrt(v + eps) + exp(v) * x with
 * m and v one value per row, eps a scalar; the instructions on v alone run
 * once per row (ops/fused.c), the others on every element. */
static ts_tensor *row_invariant_fn(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *m = ts_arg(call, 1), *v = ts_arg(call, 2);
  ts_tensor *eps = ts_arg(call, 3);
  return ts_add(ts_div(ts_sub(x, m), ts_sqrt(ts_add(v, eps))), ts_mul(ts_exp(v), x));
}

/* exp(s) * x, s a scalar: one flat row with a scalar operand. */
static ts_tensor *scalar_invariant_fn(ts_call *call)
{
  return ts_mul(ts_exp(ts_arg(call, 1)), ts_arg(call, 0));
}

/* Calls fn at each of COUNTS: one FusedElementwise node, the same bits at
 * every count, and the same bits as the ops run one by one (eager). */
static void assert_fused_same_bits(const char *what, ts_tensor *(*fn)(ts_call *), ts_value *args,
                                   int n_args, const char *names)
{
  ts_function *f = ts_function_new(what, fn, names);
  ts_concrete *cf = ts_function_get_concrete(f, args, n_args);
  g_assert_nonnull(cf);
  const ts_graph *g = ts_concrete_optimized_graph(cf);
  int fused = 0;
  for (int id = 0; id < ts_graph_n_nodes(g); id++)
    fused += ts_node_op(ts_graph_node(g, id)) == TS_OP_FUSED_ELEMENTWISE;
  g_assert_cmpint(fused, ==, 1);

  ts_run_functions_eagerly(true);
  ts_tensor *eager = ts_function_call(f, args, n_args);
  ts_run_functions_eagerly(false);
  g_assert_nonnull(eager);
  size_t bytes = (size_t)ts_tensor_size(eager) * 4;
  for (size_t t = 0; t < G_N_ELEMENTS(COUNTS); t++) {
    g_assert_true(ts_set_threads(COUNTS[t]));
    ts_tensor *out = ts_function_call(f, args, n_args);
    g_assert_nonnull(out);
    if (memcmp(ts_tensor_data(out), ts_tensor_data(eager), bytes) != 0)
      g_error("%s: %d threads differ from the ops one by one", what, COUNTS[t]);
  }
  g_assert_true(ts_set_threads(0));
  ts_function_free(f);
}

static void test_fused(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_value args[] = {
    TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(257, 1001), -1, 1, 5)),
    TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(1001), -1, 1, 6)),
    TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(257, 1), -1, 1, 7)),
  };
  assert_fused_same_bits("fused", fused_fn, args, 3, "x, y, z");
  ts_scope_end(scope);
}

static void test_fused_row_invariant(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_value rows[] = {
    TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(257, 1001), -1, 1, 8)),
    TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(257, 1), -1, 1, 9)),
    TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(257, 1), 0.5, 2, 10)),
    TS_TENSOR_VALUE(ts_scalar_f32(1e-5f)),
  };
  assert_fused_same_bits("row_invariant", row_invariant_fn, rows, 4, "x, m, v, eps");
  /* rows shorter than a block, fewer elements than the elementwise grain */
  ts_value short_rows[] = {
    TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(4, 32, 64), -1, 1, 11)),
    TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(4, 32, 1), -1, 1, 12)),
    TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(4, 32, 1), 0.5, 2, 13)),
    TS_TENSOR_VALUE(ts_scalar_f32(1e-5f)),
  };
  assert_fused_same_bits("row_invariant_short", row_invariant_fn, short_rows, 4, "x, m, v, eps");
  ts_value flat[] = {
    TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(100003), -1, 1, 14)),
    TS_TENSOR_VALUE(ts_scalar_f32(0.75f)),
  };
  assert_fused_same_bits("scalar_invariant", scalar_invariant_fn, flat, 2, "x, s");
  ts_scope_end(scope);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  initial_threads = ts_get_threads();
  g_test_add_func("/pool/every-item-once", test_every_item_once);
  g_test_add_func("/pool/nested", test_nested);
  g_test_add_func("/pool/concurrent-callers", test_concurrent_callers);
  g_test_add_func("/pool/setting", test_setting);
  g_test_add_func("/pool/reductions-same-bits", test_reductions);
  g_test_add_func("/pool/reduction-values", test_reduction_values);
  g_test_add_func("/pool/elementwise-same-bits", test_elementwise);
  g_test_add_func("/pool/transpose-same-bits", test_transpose);
  g_test_add_func("/pool/fused-same-bits", test_fused);
  g_test_add_func("/pool/fused-row-invariant-same-bits", test_fused_row_invariant);
  int rc = g_test_run();
  ts_release_all();
  return rc;
}
