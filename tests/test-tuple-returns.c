/* test-tuple-returns.c — a function returning several tensors, as
 * tf.function's `return step, loss, accuracy`: ts_tuple in the C function,
 * ts_function_call_n / ts_concrete_call_n for the caller; one graph output
 * per tensor, eager and graph mode agreeing, nested calls, the pretty
 * signature TensorFlow prints, and the errors of bad tuples. */
#include <glib.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "test-values.h"

/* stats(x) = (x + 1, sum(x), count of x as int32): three dtypes and shapes */
static int stats_runs;
static ts_tensor *stats(ts_call *c)
{
  stats_runs++;
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *count = ts_cast(ts_reduce_sum(ts_ones_like(x), TS_ALL_AXES, false), TS_I32);
  return ts_tuple(ts_add(x, ts_scalar_f32(1)), ts_reduce_sum(x, TS_ALL_AXES, false), count);
}

static void assert_stats(ts_tensor *const *out)
{
  assert_values(out[0], (const double[]){ 2, 3, 4 }, 3);
  assert_values(out[1], (const double[]){ 6 }, 1);
  g_assert_cmpint(ts_tensor_dtype(out[2]), ==, TS_I32);
  g_assert_cmpint(ts_tensor_rank(out[2]), ==, 0);
  assert_values(out[2], (const double[]){ 3 }, 1);
}

static void test_eager_and_graph(void)
{
  ts_scope *s = ts_scope_begin();
  stats_runs = 0;
  ts_function *f = ts_function_new("stats", stats, "x");
  ts_value x = tv(f32s(3, (const float[]){ 1, 2, 3 }));
  ts_tensor *out[4] = { NULL };

  /* graph mode: traced once, the second call runs the graph */
  for (int call = 0; call < 2; call++) {
    memset(out, 0, sizeof out);
    g_assert_cmpint(ts_function_call_n(f, &x, 1, out, 4, NULL), ==, 3);
    assert_no_error();
    assert_stats(out);
    g_assert_null(out[3]);
  }
  g_assert_cmpint(stats_runs, ==, 1);
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_concrete *cf = ts_function_concrete(f, 0);
  g_assert_cmpint(ts_concrete_n_results(cf), ==, 3);
  g_assert_true(ts_concrete_returns_tuple(cf));
  const ts_graph *g = ts_concrete_graph(cf);
  g_assert_cmpint(ts_graph_n_outputs(g), ==, 3);
  const ts_dtype want[] = { TS_F32, TS_F32, TS_I32 };
  for (int i = 0; i < 3; i++) {
    ts_port p = ts_graph_output(g, i);
    g_assert_cmpint(ts_node_output_dtype(ts_graph_node(g, p.node), p.index), ==, want[i]);
  }
  /* the optimized graph keeps them, and a serialized copy too */
  g_assert_cmpint(ts_graph_n_outputs(ts_concrete_optimized_graph(cf)), ==, 3);
  size_t size;
  void *bytes = ts_graph_serialize(g, &size);
  g_assert_nonnull(bytes);
  ts_graph *copy = ts_graph_deserialize(bytes, size);
  g_assert_nonnull(copy);
  g_assert_cmpint(ts_graph_n_outputs(copy), ==, 3);
  ts_graph_free(copy);
  free(bytes);

  /* eagerly: the C code runs each call, the same values */
  memset(out, 0, sizeof out);
  g_assert_cmpint(ts_function_call_eager_n(f, &x, 1, out, 3, NULL), ==, 3);
  assert_stats(out);
  ts_function_set_run_eagerly(f, 1);
  memset(out, 0, sizeof out);
  g_assert_cmpint(ts_function_call_n(f, &x, 1, out, 3, NULL), ==, 3);
  assert_stats(out);
  g_assert_cmpint(stats_runs, ==, 3);

  /* a concrete function called directly */
  ts_function_set_run_eagerly(f, -1);
  memset(out, 0, sizeof out);
  g_assert_cmpint(ts_concrete_call_n(cf, &x, 1, out, 3, NULL), ==, 3);
  assert_stats(out);
  ts_function_free(f);
  ts_scope_end(s);
}

/* ts_function_call gives one tensor: an error for more, naming the _n call */
static ts_tensor *pair(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  return ts_tuple(x, ts_neg(x));
}

static ts_tensor *single(ts_call *c)
{
  return ts_tuple(ts_mul(ts_arg(c, 0), ts_scalar_f32(2)));
}

static ts_tensor *plain(ts_call *c)
{
  return ts_mul(ts_arg(c, 0), ts_scalar_f32(2));
}

static void test_one_result_calls(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("pair", pair, "x");
  ts_value x = tv(ts_scalar_f32(5));
  for (int eager = 0; eager < 2; eager++) {
    g_assert_null(eager ? ts_function_call_eager(f, &x, 1) : ts_function_call(f, &x, 1));
    expect_error_containing(eager ? "pair: returns a tuple of 2 tensors; ts_function_call_eager "
                                    "gives one (read them all with ts_function_call_eager_n)"
                                  : "pair: returns a tuple of 2 tensors; ts_function_call gives "
                                    "one (read them all with ts_function_call_n)");
  }
  g_assert_null(ts_concrete_call(ts_function_concrete(f, 0), &x, 1));
  expect_error_containing("ts_concrete_call_n");
  ts_tensor *out[1];
  g_assert_cmpint(ts_function_call_n(f, &x, 1, out, 1, NULL), ==, -1);
  expect_error_containing("pair: returns 2 tensors, room for 1");
  g_assert_cmpint(ts_function_call_n(f, &x, 1, out, 0, NULL), ==, -1);
  expect_error_containing("max_out >= 1");
  ts_function_free(f);

  /* a tuple of one is a tuple (its own signature text) whose tensor
   * ts_function_call gives; a plain result is one tensor for _n */
  ts_function *one = ts_function_new("single", single, "x");
  ts_tensor *y = ts_function_call(one, &x, 1);
  assert_no_error();
  assert_values(y, (const double[]){ 10 }, 1);
  g_assert_true(ts_concrete_returns_tuple(ts_function_concrete(one, 0)));
  ts_function *p = ts_function_new("plain", plain, "x");
  g_assert_cmpint(ts_function_call_n(p, &x, 1, out, 1, NULL), ==, 1);
  assert_values(out[0], (const double[]){ 10 }, 1);
  g_assert_false(ts_concrete_returns_tuple(ts_function_concrete(p, 0)));
  g_assert_cmpint(ts_concrete_n_results(ts_function_concrete(p, 0)), ==, 1);

  /* the _n calls say which, and the results print as Python does: a
   * tuple of one as (x,), a plain result as itself */
  ts_function *pr = ts_function_new("pair", pair, "x");
  struct { ts_function *f; bool tuple; int n; const char *text, *type; } cases[] = {
    { one, true, 1, "(Tensor(10.0, shape=(), dtype=float32),)", "(f32[],)" },
    { p, false, 1, "Tensor(10.0, shape=(), dtype=float32)", "f32[]" },
    { pr, true, 2, "(Tensor(5.0, shape=(), dtype=float32), Tensor(-5.0, shape=(), dtype=float32))",
      "(f32[], f32[])" },
  };
  for (guint k = 0; k < G_N_ELEMENTS(cases); k++)
    for (int how = 0; how < 3; how++) {
      ts_tensor *got[2];
      bool tuple = !cases[k].tuple;
      int n = how == 0 ? ts_function_call_n(cases[k].f, &x, 1, got, 2, &tuple)
            : how == 1 ? ts_function_call_eager_n(cases[k].f, &x, 1, got, 2, &tuple)
                       : ts_concrete_call_n(ts_function_concrete(cases[k].f, 0), &x, 1, got, 2,
                                            &tuple);
      assert_no_error();
      g_assert_cmpint(n, ==, cases[k].n);
      g_assert_true(tuple == cases[k].tuple);
      char *text = ts_results_to_string(got, n, tuple), *type = ts_results_type_string(got, n, tuple);
      g_assert_cmpstr(text, ==, cases[k].text);
      g_assert_cmpstr(type, ==, cases[k].type);
      free(text);
      free(type);
    }
  ts_function_free(pr);
  ts_function_free(one);
  ts_function_free(p);
  ts_scope_end(s);
}

/* ---- pretty signatures --------------------------------------------------------------- */

static void test_pretty_signature(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("stats", stats, "x");
  ts_value x = tv(f32s(3, (const float[]){ 1, 2, 3 }));
  ts_tensor *out[3];
  g_assert_cmpint(ts_function_call_n(f, &x, 1, out, 3, NULL), ==, 3);
  char *text = ts_concrete_pretty_signature(ts_function_concrete(f, 0));
  g_assert_cmpstr(text, ==,
                  "stats(x)\n"
                  "  Args:\n"
                  "    x: float32 Tensor, shape=(3,)\n"
                  "  Returns:\n"
                  "    (<1>, <2>, <3>)\n"
                  "      <1>: float32 Tensor, shape=(3,)\n"
                  "      <2>: float32 Tensor, shape=()\n"
                  "      <3>: int32 Tensor, shape=()");
  g_free(text);
  ts_function *one = ts_function_new("single", single, "x");
  ts_value v = tv(ts_scalar_f32(1));
  g_assert_nonnull(ts_function_call(one, &v, 1));
  text = ts_function_pretty_printed_concrete_signatures(one);
  g_assert_cmpstr(text, ==,
                  "single(x)\n"
                  "  Args:\n"
                  "    x: float32 Tensor, shape=()\n"
                  "  Returns:\n"
                  "    (<1>,)\n"
                  "      <1>: float32 Tensor, shape=()");
  g_free(text);
  /* one tensor prints as it always has */
  ts_function *p = ts_function_new("plain", plain, "x");
  g_assert_nonnull(ts_function_call(p, &v, 1));
  text = ts_concrete_pretty_signature(ts_function_concrete(p, 0));
  g_assert_cmpstr(text, ==,
                  "plain(x)\n  Args:\n    x: float32 Tensor, shape=()\n  Returns:\n"
                  "    float32 Tensor, shape=()");
  g_free(text);
  ts_function_free(f);
  ts_function_free(one);
  ts_function_free(p);
  ts_scope_end(s);
}

/* ---- nested calls ----------------------------------------------------------------------- */

static ts_function *inner_fn;
static int inner_runs;

static ts_tensor *inner(ts_call *c)
{
  inner_runs++;
  ts_tensor *x = ts_arg(c, 0);
  return ts_tuple(ts_add(x, ts_scalar_f32(1)), ts_mul(x, ts_scalar_f32(3)));
}

/* (a + b, a * b) of inner's results, twice: one trace of inner */
static ts_tensor *outer(ts_call *c)
{
  ts_value x = tv(ts_arg(c, 0));
  ts_tensor *r[2] = { NULL }, *q[2] = { NULL };
  if (ts_function_call_n(inner_fn, &x, 1, r, 2, NULL) != 2)
    return NULL;
  x = tv(r[1]);
  if (ts_function_call_n(inner_fn, &x, 1, q, 2, NULL) != 2)
    return NULL;
  return ts_tuple(ts_add(r[0], q[0]), ts_mul(r[1], q[1]));
}

static void test_nested(void)
{
  ts_scope *s = ts_scope_begin();
  inner_runs = 0;
  inner_fn = ts_function_new("inner", inner, "x");
  ts_function *f = ts_function_new("outer", outer, "x");
  ts_value x = tv(f32s(2, (const float[]){ 1, 2 }));
  /* x = [1, 2]: r = ([2, 3], [3, 6]); q = inner(r[1]) = ([4, 7], [9, 18]) */
  const double sum[] = { 6, 10 }, prod[] = { 27, 108 };
  ts_tensor *out[2] = { NULL };
  g_assert_cmpint(ts_function_call_n(f, &x, 1, out, 2, NULL), ==, 2);
  assert_no_error();
  assert_values(out[0], sum, 2);
  assert_values(out[1], prod, 2);
  g_assert_cmpint(inner_runs, ==, 1); /* one signature: traced once, inlined twice */
  g_assert_cmpint(ts_function_trace_count(inner_fn), ==, 1);
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(f, 0));
  g_assert_cmpint(ts_graph_n_outputs(g), ==, 2);
  int in_scope = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    in_scope += g_str_has_prefix(ts_node_name(ts_graph_node(g, i)), "inner_1/");
  g_assert_cmpint(in_scope, >, 0);

  /* eagerly, functions it calls too: the same values */
  ts_run_functions_eagerly(true);
  memset(out, 0, sizeof out);
  g_assert_cmpint(ts_function_call_n(f, &x, 1, out, 2, NULL), ==, 2);
  ts_run_functions_eagerly(false);
  assert_values(out[0], sum, 2);
  assert_values(out[1], prod, 2);
  g_assert_cmpint(inner_runs, ==, 3);

  /* and when the inner function runs its C code in the outer trace */
  ts_function *g2 = ts_function_new("outer2", outer, "x");
  ts_function_set_run_eagerly(inner_fn, 1);
  memset(out, 0, sizeof out);
  g_assert_cmpint(ts_function_call_n(g2, &x, 1, out, 2, NULL), ==, 2);
  assert_values(out[0], sum, 2);
  assert_values(out[1], prod, 2);
  ts_function_free(g2);
  ts_function_free(f);
  ts_function_free(inner_fn);
  ts_scope_end(s);
}

/* ---- retracing: length and dtypes per concrete function ----------------------------------- */

static ts_tensor *first_n(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  int64_t n = ts_arg_int(c, 1);
  ts_tensor *items[4];
  for (int64_t i = 0; i < n && i < 4; i++)
    items[i] = ts_add(x, ts_cast(ts_scalar_i32((int32_t)i), ts_tensor_dtype(x)));
  return ts_tuple_v((int)n, items);
}

static void test_retrace(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("first_n", first_n, "x, n");
  ts_tensor *out[4];
  ts_value a[] = { tv(ts_scalar_f32(10)), TS_INT_VALUE(2) };
  g_assert_cmpint(ts_function_call_n(f, a, 2, out, 4, NULL), ==, 2);
  assert_values(out[1], (const double[]){ 11 }, 1);
  a[1] = TS_INT_VALUE(3);
  g_assert_cmpint(ts_function_call_n(f, a, 2, out, 4, NULL), ==, 3);
  assert_values(out[2], (const double[]){ 12 }, 1);
  a[0] = tv(ts_scalar_i32(10));
  g_assert_cmpint(ts_function_call_n(f, a, 2, out, 4, NULL), ==, 3);
  g_assert_cmpint(ts_tensor_dtype(out[0]), ==, TS_I32);
  g_assert_cmpint(ts_function_trace_count(f), ==, 3);
  const int want[] = { 2, 3, 3 };
  for (int i = 0; i < 3; i++)
    g_assert_cmpint(ts_concrete_n_results(ts_function_concrete(f, i)), ==, want[i]);
  /* the same signature again: a cache hit with the same results */
  a[1] = TS_INT_VALUE(2);
  a[0] = tv(ts_scalar_f32(10));
  g_assert_cmpint(ts_function_call_n(f, a, 2, out, 4, NULL), ==, 2);
  g_assert_cmpint(ts_function_trace_count(f), ==, 3);
  ts_function_free(f);
  ts_scope_end(s);
}

/* ---- bad tuples -------------------------------------------------------------------------- */

static ts_tensor *returns_bad(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  return ts_tuple(x, NULL);
}

static void test_bad_tuples(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = ts_scalar_f32(1);
  g_assert_null(ts_tuple(x, NULL));
  expect_error_containing("tensor 1 of 2 is NULL");
  g_assert_null(ts_tuple_v(0, &x));
  expect_error_containing("a tuple holds 1 to 64 tensors, got 0");
  g_assert_null(ts_tuple_v(-3, &x));
  expect_error_containing("got -3");
  ts_tensor *many[TS_MAX_RETURNS + 1];
  for (int i = 0; i <= TS_MAX_RETURNS; i++)
    many[i] = x;
  g_assert_null(ts_tuple_v(TS_MAX_RETURNS + 1, many));
  expect_error_containing("a tuple holds 1 to 64 tensors, got 65");
  ts_tensor *t = ts_tuple(x, x);
  g_assert_nonnull(t);
  g_assert_null(ts_tuple(x, t));
  expect_error_containing("tensor 1 of 2 is itself a tuple; tuples do not nest");
  /* an op given a tuple says what it is */
  g_assert_null(ts_add(t, x));
  expect_error_containing("input 0 is a tuple of 2 tensors (ts_tuple)");
  /* an earlier failure's NULL keeps its error */
  ts_tensor *bad = ts_reshape(x, TS_SHAPE(7));
  g_assert_null(ts_tuple(x, bad));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_null(strstr(e->message, "is NULL"));
  ts_error_free(e);

  /* a function returning a bad tuple fails in either mode, traced or not */
  ts_function *f = ts_function_new("returns_bad", returns_bad, "x");
  ts_value v = tv(x);
  ts_tensor *out[2];
  for (int eager = 0; eager < 2; eager++) {
    ts_function_set_run_eagerly(f, eager);
    g_assert_cmpint(ts_function_call_n(f, &v, 1, out, 2, NULL), ==, -1);
    expect_error_containing("tensor 1 of 2 is NULL");
  }
  g_assert_cmpint(ts_function_n_concrete(f), ==, 0);
  ts_function_free(f);
  ts_scope_end(s);
}

/* A variable in a tuple gives its value at the return, as a single result does. */
static ts_tensor *var_holder;
static ts_tensor *returns_variable(ts_call *c)
{
  ts_tensor *before = ts_read(var_holder);
  ts_assign_add(var_holder, ts_arg(c, 0));
  return ts_tuple(before, var_holder);
}

static void test_variable(void)
{
  ts_scope *s = ts_scope_begin();
  var_holder = ts_variable_new(ts_scalar_f32(1), "v");
  ts_function *f = ts_function_new("returns_variable", returns_variable, "x");
  ts_value v = tv(ts_scalar_f32(2));
  for (int call = 0; call < 2; call++) {
    ts_tensor *out[2];
    g_assert_cmpint(ts_function_call_n(f, &v, 1, out, 2, NULL), ==, 2);
    assert_values(out[0], (const double[]){ 1 + 2 * call }, 1);
    assert_values(out[1], (const double[]){ 3 + 2 * call }, 1);
  }
  ts_function_free(f);
  ts_tensor_unref(var_holder);
  ts_scope_end(s);
}

/* TS_RETURN takes a tuple eagerly and from a traced block (more in
 * test-tuple-control-flow.c). */
static ts_tensor *early_tuple(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0))) {
    TS_RETURN(ts_tuple(x, x));
  } TS_END_IF;
  return ts_tuple(ts_neg(x), x);
}

/* a tensor returned early, a tuple at the end: one structure per function */
static ts_tensor *early_tensor(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0))) {
    TS_RETURN(x);
  } TS_END_IF;
  return ts_tuple(ts_neg(x), x);
}

static void test_traced_return(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("early_tuple", early_tuple, "x");
  ts_value v = tv(ts_scalar_f32(2));
  ts_tensor *out[2];
  g_assert_cmpint(ts_function_call_eager_n(f, &v, 1, out, 2, NULL), ==, 2);
  assert_values(out[0], (const double[]){ 2 }, 1);
  g_assert_cmpint(ts_function_call_n(f, &v, 1, out, 2, NULL), ==, 2);
  assert_no_error();
  assert_values(out[0], (const double[]){ 2 }, 1);
  assert_values(out[1], (const double[]){ 2 }, 1);
  ts_function_free(f);
  f = ts_function_new("early_tensor", early_tensor, "x");
  g_assert_cmpint(ts_function_call_n(f, &v, 1, out, 2, NULL), ==, -1);
  expect_error_containing("early_tensor: returns one tensor at line ");
  ts_function_free(f);
  ts_scope_end(s);
}

/* The divergence finder compares each result; its report names the one that differs. */
static void test_diverge(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("stats", stats, "x");
  ts_value x = tv(f32s(3, (const float[]){ 1, 2, 3 }));
  ts_diverge_report *rep = NULL;
  g_assert_true(ts_diverge(f, &x, 1, NULL, &rep));
  g_assert_nonnull(rep);
  g_assert_false(rep->diverged);
  g_assert_cmpint(rep->n_results, ==, 3);
  g_assert_cmpint(rep->result.kind, ==, TS_DIVERGE_NONE);
  char *text = ts_diverge_report_format(rep);
  g_assert_nonnull(strstr(text, "result (output 0 of 3): "));
  free(text);
  ts_diverge_report_free(rep);
  ts_function_free(f);
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/tuple/eager-and-graph", test_eager_and_graph);
  g_test_add_func("/tuple/one-result-calls", test_one_result_calls);
  g_test_add_func("/tuple/pretty-signature", test_pretty_signature);
  g_test_add_func("/tuple/nested", test_nested);
  g_test_add_func("/tuple/retrace", test_retrace);
  g_test_add_func("/tuple/bad", test_bad_tuples);
  g_test_add_func("/tuple/variable", test_variable);
  g_test_add_func("/tuple/traced-return", test_traced_return);
  g_test_add_func("/tuple/diverge", test_diverge);
  return g_test_run();
}
