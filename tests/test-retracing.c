/* test-retracing.c — which concrete function a call gets, and what it
 * gives it, on calls the guides (../shared/seeds/) do not show:
 * reduce_retracing's generalisation with other dtypes and host values
 * traced in between, the dispatch among several concrete functions that
 * take a call, a variable given for a tensor parameter. */
#include <glib.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "test-serial-check.h"

static ts_value tv(ts_tensor *t)
{
  return TS_TENSOR_VALUE(t);
}

/* Collects the signatures traced, in order, joined by " ". */
static void on_trace(const ts_event *ev, void *user_data)
{
  GString *traced = user_data;
  if (ev->kind != TS_EVENT_TRACE)
    return;
  if (traced->len)
    g_string_append_c(traced, ' ');
  g_string_append(traced, ev->trace.signature);
}

/* x * n, n a host int (1 when not given): the size of x shows that each
 * call ran on its own tensor, the values that n is the call's. */
static ts_tensor *scale(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  int64_t n = ts_call_n_args(c) > 1 ? ts_arg_int(c, 1) : 1;
  return ts_mul(x, ts_cast(ts_scalar_i64(n), x ? ts_tensor_dtype(x) : TS_F32));
}

static void expect_scaled(ts_function *f, ts_value *args, int n_args, int64_t size, double value)
{
  ts_tensor *y = ts_function_call(f, args, n_args);
  assert_no_error();
  g_assert_cmpint(ts_tensor_size(y), ==, size);
  g_assert_cmpfloat(ts_tensor_get_f64(y, size - 1), ==, value);
}

/* tf.function(reduce_retracing=True) generalises a new call's type against
 * every type its dispatch table holds, in order, skipping those with no
 * common supertype (another dtype): f32[1], then i32[1], then f32[2]
 * traces f32[None], though the int32 trace came last, and later float32
 * lengths reuse it; int32 gets its own relaxed function the same way.
 * Four traces for six calls, not one per call after the int32 one. */
static void test_reduce_retracing_across_dtypes(void)
{
  ts_scope *s = ts_scope_begin();
  GString *traced = g_string_new(NULL);
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_TRACE), on_trace, traced);
  ts_function *f = ts_function_new("scale", scale, "x");
  ts_function_set_reduce_retracing(f, true);
  static const struct { ts_dtype dtype; int64_t n; } calls[] = {
    { TS_F32, 1 }, { TS_I32, 1 }, { TS_F32, 2 }, { TS_F32, 3 }, { TS_I32, 4 }, { TS_I32, 5 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(calls); i++) {
    ts_value x = tv(ts_ones(calls[i].dtype, TS_SHAPE(calls[i].n)));
    expect_scaled(f, &x, 1, calls[i].n, 1);
  }
  g_assert_cmpstr(traced->str, ==, "(x: f32[1]) (x: i32[1]) (x: f32[?]) (x: i32[?])");
  g_assert_cmpint(ts_function_trace_count(f), ==, 4);
  ts_function_free(f);
  ts_listener_remove(id);
  g_string_free(traced, TRUE);
  ts_scope_end(s);
}

/* The same with a host argument: a host value has a common supertype only
 * with itself, so a call relaxes against the traces of its own n however
 * the calls interleave: (x: f32[3], n: 2) after (f32[2], 1) relaxes with
 * (f32[1], 2), not with the trace that came last. */
static void test_reduce_retracing_across_host_values(void)
{
  ts_scope *s = ts_scope_begin();
  GString *traced = g_string_new(NULL);
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_TRACE), on_trace, traced);
  ts_function *f = ts_function_new("scale", scale, "x, n");
  ts_function_set_reduce_retracing(f, true);
  static const struct { int64_t size, n; } calls[] = {
    { 1, 1 }, { 1, 2 }, { 2, 1 }, { 3, 2 }, { 5, 1 }, { 6, 2 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(calls); i++) {
    ts_value args[] = { tv(ts_ones(TS_F32, TS_SHAPE(calls[i].size))), TS_INT_VALUE(calls[i].n) };
    expect_scaled(f, args, 2, calls[i].size, (double)calls[i].n);
  }
  g_assert_cmpstr(traced->str, ==,
                  "(x: f32[1], n: 1) (x: f32[1], n: 2) (x: f32[?], n: 1) (x: f32[?], n: 2)");
  ts_function_free(f);
  ts_listener_remove(id);
  g_string_free(traced, TRUE);
  ts_scope_end(s);
}

/* The static size of x's dim 1 as the trace saw it (-1: unknown), read by
 * host code, as Python code reads x.shape[1] while tracing. */
static ts_tensor *traced_dim1(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  return ts_scalar_i64(x ? ts_tensor_dim(x, 1) : 0);
}

/* A call that several concrete functions take runs the most specific of
 * them, as tf.function's dispatch table chooses: after an f32[None, 3]
 * trace and then an f32[None, None] one, a [2, 3] tensor runs the first
 * (not the one traced last), a [2, 4] tensor the second.  The other way
 * round there is one trace: a spec the general function takes gets it. */
static void test_dispatch_most_specific(void)
{
  ts_scope *s = ts_scope_begin();
  ts_value by_three = TS_SPEC_VALUE(TS_F32, TS_SHAPE(-1, 3));
  ts_value any = TS_SPEC_VALUE(TS_F32, TS_SHAPE(-1, -1));
  ts_function *f = ts_function_new("traced_dim1", traced_dim1, "x");
  ts_concrete *specific = ts_function_get_concrete(f, &by_three, 1);
  ts_concrete *general = ts_function_get_concrete(f, &any, 1);
  g_assert_true(specific && general && specific != general);
  ts_value x23 = tv(ts_ones(TS_F32, TS_SHAPE(2, 3))), x24 = tv(ts_ones(TS_F32, TS_SHAPE(2, 4)));
  for (int again = 0; again < 2; again++) { /* the choice is cached: the same the second time */
    g_assert_cmpint(ts_tensor_get_i64(ts_function_call(f, &x23, 1), 0), ==, 3);
    g_assert_cmpint(ts_tensor_get_i64(ts_function_call(f, &x24, 1), 0), ==, -1);
  }
  g_assert_true(ts_function_get_concrete(f, &x23, 1) == specific);
  g_assert_cmpint(ts_function_trace_count(f), ==, 2);
  assert_no_error();
  ts_function_free(f);

  f = ts_function_new("traced_dim1", traced_dim1, "x");
  general = ts_function_get_concrete(f, &any, 1);
  g_assert_true(ts_function_get_concrete(f, &by_three, 1) == general);
  g_assert_cmpint(ts_tensor_get_i64(ts_function_call(f, &x23, 1), 0), ==, -1);
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  assert_no_error();
  ts_function_free(f);
  ts_scope_end(s);
}

/* x * 2 */
static ts_tensor *twice(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  return ts_mul(x, ts_cast(ts_scalar_i32(2), x ? ts_tensor_dtype(x) : TS_F32));
}

static ts_function *twice_fn; /* called by twice_the_global */
static ts_tensor *global_v;   /* the variable it gives it */

static ts_tensor *twice_the_global(ts_call *c)
{
  (void)c;
  return ts_function_call(twice_fn, &TS_TENSOR_VALUE(global_v), 1);
}

/* A tf.Variable passed where an input signature has a TensorSpec (or to a
 * concrete function traced with a tensor) is converted to a tensor: the
 * call computes on the variable's value at that call, with no retrace when
 * the value changes; a caller being traced reads it in its own graph.  The
 * call failed ("graph 'twice' takes 1 inputs, got 0"). */
static void test_variable_for_tensor_parameter(void)
{
  ts_scope *s = ts_scope_begin();
  twice_fn = ts_function_new("twice", twice, "x");
  ts_spec spec = { TS_F32, TS_SHAPE(-1) };
  g_assert_true(ts_function_set_input_signature(twice_fn, &spec, 1));
  global_v = ts_variable_new(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 }), "v");
  ts_value v = tv(global_v);
  ts_concrete *cf = ts_function_get_concrete(twice_fn, NULL, 0);
  ts_function *outer = ts_function_new("twice_the_global", twice_the_global, NULL);
  for (int k = 1; k <= 2; k++) {
    ts_tensor *y[3] = { ts_function_call(twice_fn, &v, 1), ts_concrete_call(cf, &v, 1),
                        ts_function_call(outer, NULL, 0) };
    assert_no_error();
    for (int i = 0; i < 3; i++) {
      g_assert_cmpint(ts_tensor_size(y[i]), ==, 2);
      g_assert_cmpfloat(ts_tensor_get_f64(y[i], 1), ==, 4 * k);
    }
    ts_assign(global_v, ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 2, 4 }));
  }
  g_assert_cmpint(ts_function_trace_count(twice_fn), ==, 1);
  g_assert_cmpint(ts_function_trace_count(outer), ==, 1);
  /* one that does not fit the signature is refused as a tensor is */
  ts_tensor *ints = ts_variable_new(ts_ones(TS_I32, TS_SHAPE(2)), "ints");
  g_assert_null(ts_function_call(twice_fn, &TS_TENSOR_VALUE(ints), 1));
  expect_error_containing("twice: arg 0 (x) does not match the input signature: expected f32[?], "
                          "got i32[2]");
  ts_tensor_unref(ints);
  ts_function_free(outer);
  ts_function_free(twice_fn);
  ts_tensor_unref(global_v);
  ts_scope_end(s);
}

/* A concrete function's host arguments are bound to the values it was
 * traced with (the function guide's square = pow.get_concrete_function(
 * a=tf.TensorSpec(None, tf.float32), b=2); square(tf.constant(10.0))):
 * a call may leave them out, or give the same value; another value is a
 * TypeError.  A tensor argument cannot be left out. */
static void test_concrete_host_arguments_bound(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("scale", scale, "x, n");
  ts_value traced[] = { TS_SPEC_VALUE(TS_F32, (ts_shape){ .rank = TS_RANK_UNKNOWN }), TS_INT_VALUE(2) };
  ts_concrete *square = ts_function_get_concrete(f, traced, 2);
  g_assert_nonnull(square);
  ts_value args[] = { tv(ts_ones(TS_F32, TS_SHAPE(3))), TS_INT_VALUE(2) };
  for (int n = 1; n <= 2; n++) {
    ts_tensor *y = ts_concrete_call(square, args, n);
    assert_no_error();
    g_assert_cmpint(ts_tensor_size(y), ==, 3);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 2), ==, 2);
  }
  args[1] = TS_INT_VALUE(3);
  g_assert_null(ts_concrete_call(square, args, 2));
  expect_error_containing("scale: arg 1 (n) was traced with the host value 2, got 3");
  g_assert_null(ts_concrete_call(square, NULL, 0));
  expect_error_containing("scale: this concrete function takes 2 arguments, got 0");
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_function_free(f);
  ts_scope_end(s);
}

static int square_runs; /* runs of square's C code: its traces */

static ts_tensor *square(ts_call *c)
{
  square_runs++;
  ts_tensor *x = ts_arg(c, 0);
  return ts_mul(x, x);
}

static ts_concrete *square_cf; /* called by plus_one_after */

static ts_tensor *plus_one_after(ts_call *c)
{
  ts_tensor *y = ts_concrete_call(square_cf, &TS_TENSOR_VALUE(ts_arg(c, 0)), 1);
  return ts_add(y, ts_scalar_f32(1));
}

static ts_function *square_fn; /* its concrete function got by plus_one_got_inside */

static ts_tensor *plus_one_got_inside(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_concrete *cf = ts_function_get_concrete(square_fn, &TS_TENSOR_VALUE(x), 1);
  return cf ? ts_add(ts_concrete_call(cf, &TS_TENSOR_VALUE(x), 1), ts_scalar_f32(1)) : NULL;
}

/* A concrete function called from another function's trace becomes part
 * of that graph, as TensorFlow calls a ConcreteFunction inside a
 * tf.function: its C code does not run again, the caller's graph runs it
 * on each call's values.  It failed, the trace's symbolic tensor taken
 * for one leaked out of a graph; and get_concrete_function inside a trace
 * was refused. */
static void test_concrete_function_called_while_tracing(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("square", square, "x");
  square_runs = 0;
  square_cf = ts_function_get_concrete(f, &TS_SPEC_VALUE(TS_F32, TS_SHAPE(-1)), 1);
  g_assert_nonnull(square_cf);
  ts_function *outer = ts_function_new("plus_one_after", plus_one_after, "x");
  for (int n = 2; n <= 4; n++) {
    ts_value x = tv(ts_fill(TS_SHAPE(3), ts_scalar_f32((float)n)));
    ts_tensor *y = ts_function_call(outer, &x, 1);
    assert_no_error();
    g_assert_cmpint(ts_tensor_size(y), ==, 3);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 2), ==, n * n + 1);
  }
  g_assert_cmpint(square_runs, ==, 1);
  g_assert_cmpint(ts_function_trace_count(outer), ==, 1);
  /* the concrete function's signature still holds inside the trace */
  ts_value ints = tv(ts_ones(TS_I32, TS_SHAPE(2)));
  g_assert_null(ts_function_call(outer, &ints, 1));
  expect_error_containing("square: expected float32 tensor for arg 0 (x), got int32");
  ts_function_free(outer);

  /* get_concrete_function inside the trace: the function traced on its
   * own (once, for the placeholder's f32[2]), or the trace that serves it */
  for (int fresh = 1; fresh >= 0; fresh--) {
    square_fn = fresh ? ts_function_new("square", square, "x") : f;
    square_runs = 0;
    outer = ts_function_new("plus_one_got_inside", plus_one_got_inside, "x");
    for (int n = 2; n <= 3; n++) {
      ts_value x = tv(ts_fill(TS_SHAPE(2), ts_scalar_f32((float)n)));
      ts_tensor *y = ts_function_call(outer, &x, 1);
      assert_no_error();
      g_assert_cmpfloat(ts_tensor_get_f64(y, 1), ==, n * n + 1);
    }
    g_assert_cmpint(square_runs, ==, fresh);
    g_assert_cmpint(ts_function_trace_count(square_fn), ==, 1);
    g_assert_cmpint(ts_function_trace_count(outer), ==, 1);
    ts_function_free(outer);
    if (fresh)
      ts_function_free(square_fn);
  }
  ts_function_free(f);
  ts_scope_end(s);
}

static void count_warnings(const ts_event *ev, void *user_data)
{
  if (ev->kind == TS_EVENT_WARNING && ev->warning.kind == TS_WARNING_FREQUENT_RETRACING)
    (*(int *)user_data)++;
}

/* tf.function's frequent-retracing warning comes at most twice per
 * function (FREQUENT_TRACING_WARNING_MAX_WARNING_PER_DETECTOR): at the
 * fifth trace in a row and at the sixth, then no more however often it
 * retraces. */
static void test_frequent_retracing_warns_twice(void)
{
  ts_scope *s = ts_scope_begin();
  int warnings = 0;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), count_warnings, &warnings);
  ts_function *f = ts_function_new("scale", scale, "x, n");
  static const int after[] = { 0, 0, 0, 0, 1, 2, 2, 2, 2, 2, 2, 2 };
  for (int n = 0; n < (int)G_N_ELEMENTS(after); n++) {
    ts_value args[] = { tv(ts_ones(TS_F32, TS_SHAPE(2))), TS_INT_VALUE(n) };
    expect_scaled(f, args, 2, 2, n);
    g_assert_cmpint(warnings, ==, after[n]);
  }
  g_assert_cmpint(ts_function_trace_count(f), ==, (int)G_N_ELEMENTS(after));
  ts_function_free(f);
  ts_listener_remove(id);
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  serial_check_install();
  g_test_add_func("/retracing/reduce-retracing-across-dtypes", test_reduce_retracing_across_dtypes);
  g_test_add_func("/retracing/reduce-retracing-across-host-values",
                  test_reduce_retracing_across_host_values);
  g_test_add_func("/retracing/dispatch-most-specific", test_dispatch_most_specific);
  g_test_add_func("/retracing/variable-for-tensor-parameter", test_variable_for_tensor_parameter);
  g_test_add_func("/retracing/concrete-host-arguments-bound", test_concrete_host_arguments_bound);
  g_test_add_func("/retracing/frequent-retracing-warns-twice", test_frequent_retracing_warns_twice);
  g_test_add_func("/retracing/concrete-function-called-while-tracing",
                  test_concrete_function_called_while_tracing);
  return g_test_run();
}
