/* test-retrace-audit.c — tf.function's polymorphism beyond the guides:
 * which calls share a concrete function and which trace again, what the
 * trace log says each time, and what a concrete function or an input
 * signature refuses, each call run eagerly and traced against what
 * TensorFlow gives (its trace types: a host number is a Literal compared
 * with Python's ==, a tensor a TensorSpec, a list a List of its items). */
#include <glib.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "test-serial-check.h"

static ts_value tv(ts_tensor *t)
{
  return TS_TENSOR_VALUE(t);
}

static ts_value bool_value(bool b)
{
  return (ts_value){ .kind = TS_VALUE_BOOL, .b = b };
}

static ts_value list_value(const ts_value *items, int n)
{
  return (ts_value){ .kind = TS_VALUE_LIST, .list = { items, n } };
}

/* The trace events of a test, in order: "SIGNATURE <- REASON" each. */
typedef struct traces {
  GString *log;
  ts_trace_reason last_reason;
  int id;
} traces;

static void on_trace(const ts_event *ev, void *user_data)
{
  traces *t = user_data;
  if (ev->kind != TS_EVENT_TRACE)
    return;
  if (t->log->len)
    g_string_append_c(t->log, '\n');
  g_string_append_printf(t->log, "%s <- %s", ev->trace.signature, ev->trace.reason_text);
  t->last_reason = ev->trace.reason;
}

static void traces_begin(traces *t)
{
  *t = (traces){ .log = g_string_new(NULL) };
  t->id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_TRACE), on_trace, t);
}

static void traces_end(traces *t)
{
  ts_listener_remove(t->id);
  g_string_free(t->log, TRUE);
}

/* A host number as C reads it, whatever its kind (0 for a string). */
static double host_number(const ts_value *v)
{
  switch (v->kind) {
  case TS_VALUE_INT: return (double)v->i;
  case TS_VALUE_FLOAT: return v->f;
  case TS_VALUE_BOOL: return v->b;
  default: return 0;
  }
}

/* x * n (n a host number, or a list of them summed) */
static ts_tensor *times_n(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  const ts_value *n = ts_call_arg_value(c, 1);
  double v = 0;
  if (n && n->kind == TS_VALUE_LIST)
    for (int i = 0; i < n->list.n; i++)
      v += host_number(&n->list.items[i]);
  else if (n)
    v = host_number(n);
  return ts_mul(x, ts_scalar_f32((float)v));
}

/* f(x, n) eagerly and traced: both give x * n. */
static void expect_times(ts_function *f, ts_value n, double want)
{
  ts_value args[] = { tv(ts_ones(TS_F32, TS_SHAPE(2))), n };
  ts_tensor *eager = ts_function_call_eager(f, args, 2);
  assert_no_error();
  ts_tensor *traced = ts_function_call(f, args, 2);
  assert_no_error();
  g_assert_cmpfloat(ts_tensor_get_f64(eager, 1), ==, want);
  g_assert_cmpfloat(ts_tensor_get_f64(traced, 1), ==, want);
}

/* A host number's trace type is a Literal compared with Python's ==:
 * f(x, 1), f(x, 1.0) and f(x, True) share one concrete function, as do
 * 0, -0.0 and False, and [1, 2] with [1.0, 2.0]; 2.5 is another value
 * (a HOST_VALUE retrace, not a change of structure) and the string '1'
 * another kind. */
static void test_host_numbers_by_value(void)
{
  ts_scope *s = ts_scope_begin();
  traces t;
  traces_begin(&t);
  ts_function *f = ts_function_new("times_n", times_n, "x, n");
  expect_times(f, TS_INT_VALUE(1), 1);
  expect_times(f, TS_FLOAT_VALUE(1.0), 1);
  expect_times(f, bool_value(true), 1);
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  expect_times(f, TS_FLOAT_VALUE(2.5), 2.5);
  g_assert_cmpint(t.last_reason, ==, TS_TRACE_HOST_VALUE);
  expect_times(f, TS_INT_VALUE(0), 0);
  expect_times(f, TS_FLOAT_VALUE(-0.0), 0);
  expect_times(f, bool_value(false), 0);
  g_assert_cmpint(ts_function_trace_count(f), ==, 3);
  g_assert_cmpstr(t.log->str, ==,
                  "(x: f32[2], n: 1) <- first call\n"
                  "(x: f32[2], n: 2.5) <- arg 1 (n): host value 2.5 differs from 1\n"
                  "(x: f32[2], n: 0) <- arg 1 (n): host value 0 differs from 2.5");

  ts_value ints[] = { TS_INT_VALUE(1), TS_INT_VALUE(2) };
  ts_value floats[] = { TS_FLOAT_VALUE(1.0), TS_FLOAT_VALUE(2.0) };
  ts_value mixed[] = { bool_value(true), TS_FLOAT_VALUE(2.0) };
  expect_times(f, list_value(ints, 2), 3);
  expect_times(f, list_value(floats, 2), 3);
  expect_times(f, list_value(mixed, 2), 3);
  g_assert_cmpint(ts_function_trace_count(f), ==, 4);

  expect_times(f, TS_FLOAT_VALUE(1.5), 1.5);
  g_assert_cmpint(ts_function_trace_count(f), ==, 5);
  g_assert_cmpint(ts_function_n_concrete(f), ==, 5);

  /* the string '1' is not the number 1 */
  ts_value args[] = { tv(ts_ones(TS_F32, TS_SHAPE(2))), TS_STRING_VALUE("1") };
  ts_concrete *cf = ts_function_get_concrete(f, args, 2);
  assert_no_error();
  g_assert_nonnull(cf);
  g_assert_cmpint(ts_function_trace_count(f), ==, 6);
  g_assert_cmpint(t.last_reason, ==, TS_TRACE_STRUCTURE);
  ts_function_free(f);
  traces_end(&t);
  ts_scope_end(s);
}

/* A concrete function traced with n = 1 takes 1.0 and True for it (equal
 * values), and refuses 2, naming the value it was traced with. */
static void test_concrete_host_number_equal_values(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("times_n", times_n, "x, n");
  ts_value args[] = { tv(ts_ones(TS_F32, TS_SHAPE(2))), TS_INT_VALUE(1) };
  ts_concrete *cf = ts_function_get_concrete(f, args, 2);
  assert_no_error();
  args[1] = TS_FLOAT_VALUE(1.0);
  ts_tensor *y = ts_concrete_call(cf, args, 2);
  assert_no_error();
  g_assert_cmpfloat(ts_tensor_get_f64(y, 0), ==, 1);
  args[1] = bool_value(true);
  g_assert_nonnull(ts_concrete_call(cf, args, 2));
  assert_no_error();
  args[1] = TS_INT_VALUE(2);
  g_assert_null(ts_concrete_call(cf, args, 2));
  expect_error_containing("arg 1 (n) was traced with the host value 1, got 2");
  ts_function_free(f);
  ts_scope_end(s);
}

/* Host floats are written as Python's repr writes them, in signatures,
 * reasons and pretty-printed signatures alike: 0.1, not the 17 digits
 * of its double; 2.0 stays a float; tiny and huge ones in scientific form. */
static void test_host_float_text(void)
{
  ts_scope *s = ts_scope_begin();
  traces t;
  traces_begin(&t);
  ts_function *f = ts_function_new("times_n", times_n, "x, n");
  static const double values[] = { 0.1, 2.0, 1e-5, 1e16, 0.30000000000000004 };
  for (size_t i = 0; i < G_N_ELEMENTS(values); i++)
    expect_times(f, TS_FLOAT_VALUE(values[i]), (double)(float)values[i]);
  g_assert_cmpstr(t.log->str, ==,
                  "(x: f32[2], n: 0.1) <- first call\n"
                  "(x: f32[2], n: 2.0) <- arg 1 (n): host value 2.0 differs from 0.1\n"
                  "(x: f32[2], n: 1e-05) <- arg 1 (n): host value 1e-05 differs from 2.0\n"
                  "(x: f32[2], n: 1e+16) <- arg 1 (n): host value 1e+16 differs from 1e-05\n"
                  "(x: f32[2], n: 0.30000000000000004) <- arg 1 (n): host value "
                  "0.30000000000000004 differs from 1e+16");
  char *pretty = ts_concrete_pretty_signature(ts_function_concrete(f, 0));
  g_assert_true(g_str_has_prefix(pretty, "times_n(x, n=0.1)\n"));
  g_free(pretty);
  ts_function_free(f);
  traces_end(&t);
  ts_scope_end(s);
}

/* Host strings are written as Python's repr writes them: double quotes
 * around one holding a single quote, escapes for newlines and tabs. */
static void test_host_string_text(void)
{
  ts_scope *s = ts_scope_begin();
  traces t;
  traces_begin(&t);
  ts_function *f = ts_function_new("times_n", times_n, "x, n");
  static const char *const texts[] = { "it's", "say \"hi\"", "it's \"x\"", "a\nb\tc\\" };
  for (size_t i = 0; i < G_N_ELEMENTS(texts); i++)
    expect_times(f, TS_STRING_VALUE(texts[i]), 0);
  g_assert_cmpint(ts_function_trace_count(f), ==, 4);
  g_assert_cmpstr(t.log->str, ==,
                  "(x: f32[2], n: \"it's\") <- first call\n"
                  "(x: f32[2], n: 'say \"hi\"') <- arg 1 (n): host value 'say \"hi\"' differs from "
                  "\"it's\"\n"
                  "(x: f32[2], n: 'it\\'s \"x\"') <- arg 1 (n): host value 'it\\'s \"x\"' differs from "
                  "'say \"hi\"'\n"
                  "(x: f32[2], n: 'a\\nb\\tc\\\\') <- arg 1 (n): host value 'a\\nb\\tc\\\\' differs from "
                  "'it\\'s \"x\"'");
  ts_function_free(f);
  traces_end(&t);
  ts_scope_end(s);
}

/* range(n) in C: a host int read with ts_arg_int */
static ts_tensor *repeat_add(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *acc = ts_zeros_like(x);
  for (int64_t i = 0; i < ts_arg_int(c, 1); i++)
    acc = ts_add(acc, x);
  return acc;
}

/* x * k, k read with ts_arg_float */
static ts_tensor *scale_float(ts_call *c)
{
  return ts_mul(ts_arg(c, 0), ts_scalar_f32((float)ts_arg_float(c, 1)));
}

/* A bool is an int in Python (`range(True)` runs once) and True == 1
 * shares a concrete function with 1: ts_arg_int reads True as 1 and
 * ts_arg_float as 1.0, so which of the two came first does not matter. */
static void test_bool_reads_as_number(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("repeat_add", repeat_add, "x, n");
  ts_value args[] = { tv(ts_ones(TS_F32, TS_SHAPE(2))), bool_value(true) };
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call_eager(f, args, 2), 0), ==, 1);
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(f, args, 2), 0), ==, 1);
  assert_no_error();
  args[1] = TS_INT_VALUE(1);
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(f, args, 2), 0), ==, 1);
  args[1] = bool_value(false);
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(f, args, 2), 0), ==, 0);
  assert_no_error();
  g_assert_cmpint(ts_function_trace_count(f), ==, 2);
  ts_function_free(f);
  f = ts_function_new("scale_float", scale_float, "x, k");
  args[1] = bool_value(true);
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(f, args, 2), 0), ==, 1);
  assert_no_error();
  ts_function_free(f);
  ts_scope_end(s);
}

static ts_tensor *identity(ts_call *c)
{
  return ts_identity(ts_arg(c, 0));
}

/* reduce_retracing: the trace event says what the call's type was widened
 * to, besides what changed: after [1], a [2] call traces f32[?]. */
static void test_reduce_retracing_reason(void)
{
  ts_scope *s = ts_scope_begin();
  traces t;
  traces_begin(&t);
  ts_function *f = ts_function_new("identity", identity, "x");
  ts_function_set_reduce_retracing(f, true);
  static const int64_t sizes[] = { 1, 2, 3 };
  for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
    ts_value x = tv(ts_ones(TS_F32, TS_SHAPE(sizes[i])));
    g_assert_cmpint(ts_tensor_size(ts_function_call(f, &x, 1)), ==, sizes[i]);
    assert_no_error();
  }
  ts_value x = tv(ts_ones(TS_F32, TS_SHAPE(2, 2)));
  g_assert_cmpint(ts_tensor_size(ts_function_call(f, &x, 1)), ==, 4);
  assert_no_error();
  g_assert_cmpstr(t.log->str, ==,
                  "(x: f32[1]) <- first call\n"
                  "(x: f32[?]) <- arg 0 (x): shape (2,) differs from traced (1,) "
                  "(reduce_retracing: generalised to (x: f32[?]))\n"
                  "(x: f32[...]) <- arg 0 (x): shape (2, 2) differs from traced (?,) "
                  "(reduce_retracing: generalised to (x: f32[...]))");
  g_assert_cmpint(ts_function_trace_count(f), ==, 3);
  ts_function_free(f);
  traces_end(&t);
  ts_scope_end(s);
}

static ts_tensor *add(ts_call *c)
{
  return ts_add(ts_arg(c, 0), ts_arg(c, 1));
}

/* The same tensor given twice is no other signature than two tensors of
 * its dtype and shape (a tensor's trace type is its TensorSpec). */
static void test_same_tensor_twice(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("add", add, "a, b");
  ts_tensor *x = ts_ones(TS_F32, TS_SHAPE(3));
  ts_value twice[] = { tv(x), tv(x) };
  ts_value two[] = { tv(x), tv(ts_fill(TS_SHAPE(3), ts_scalar_f32(2))) };
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(f, twice, 2), 0), ==, 2);
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(f, two, 2), 0), ==, 3);
  assert_no_error();
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_function_free(f);
  ts_scope_end(s);
}

/* An input signature takes calls that fit it, whatever their sizes, in
 * one trace; a call that does not fit is refused naming the argument, the
 * spec and what it got, and one that leaves an argument out names it
 * (Python's "missing a required argument: 'y'"). */
static void test_input_signature_refusals(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("add", add, "x, y");
  ts_spec specs[] = { { TS_F32, TS_SHAPE(-1) }, { TS_F32, TS_SHAPE(-1) } };
  g_assert_true(ts_function_set_input_signature(f, specs, 2));
  for (int64_t n = 1; n <= 3; n++) {
    ts_value args[] = { tv(ts_ones(TS_F32, TS_SHAPE(n))), tv(ts_ones(TS_F32, TS_SHAPE(n))) };
    g_assert_cmpint(ts_tensor_size(ts_function_call(f, args, 2)), ==, n);
    assert_no_error();
  }
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_value args[] = { tv(ts_ones(TS_F32, TS_SHAPE(2))), tv(ts_ones(TS_I32, TS_SHAPE(2))) };
  g_assert_null(ts_function_call(f, args, 2));
  expect_error_containing("add: arg 1 (y) does not match the input signature: expected f32[?], "
                          "got i32[2]");
  args[1] = tv(ts_ones(TS_F32, TS_SHAPE(2, 2)));
  g_assert_null(ts_function_call(f, args, 2));
  expect_error_containing("expected f32[?], got f32[2,2]");
  g_assert_null(ts_function_call(f, args, 1));
  expect_error_containing("add: missing arg 1 (y): its input signature takes 2 arguments, the "
                          "call gave 1");
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_function_free(f);

  /* a function of no named parameters: the count against the signature */
  f = ts_function_new("first", identity, NULL);
  g_assert_true(ts_function_set_input_signature(f, specs, 0));
  g_assert_null(ts_function_call(f, args, 1));
  expect_error_containing("first: called with 1 argument, its input signature has 0");
  g_assert_true(ts_function_set_input_signature(f, specs, 1));
  g_assert_null(ts_function_call(f, args, 2));
  expect_error_containing("first: called with 2 arguments, its input signature has 1");
  ts_function_free(f);
  ts_scope_end(s);
}

static ts_function *forever_fn;

/* calls itself on every trace: Python's RecursionError in TensorFlow */
static ts_tensor *forever(ts_call *c)
{
  ts_value x = tv(ts_arg(c, 0));
  return ts_function_call(forever_fn, &x, 1);
}

static void count_failed_traces(const ts_event *ev, void *user_data)
{
  if (ev->kind == TS_EVENT_TRACE && ev->trace.error)
    ++*(int *)user_data;
}

/* A function that calls itself with no end fails at the trace depth
 * limit with one error naming the chain, and the trace log shows one
 * failed trace, not one for each of the 64 levels. */
static void test_endless_recursion_one_failed_trace(void)
{
  ts_scope *s = ts_scope_begin();
  int failed = 0;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_TRACE), count_failed_traces, &failed);
  forever_fn = ts_function_new("forever", forever, "x");
  ts_value x = tv(ts_ones(TS_F32, TS_SHAPE(2)));
  g_assert_null(ts_function_call(forever_fn, &x, 1));
  expect_error_containing("(trace depth limit 64)");
  g_assert_cmpint(failed, ==, 1);
  g_assert_cmpint(ts_function_n_concrete(forever_fn), ==, 0);
  /* and again: the function is not broken by it */
  g_assert_null(ts_function_call(forever_fn, &x, 1));
  expect_error_containing("(trace depth limit 64)");
  g_assert_cmpint(failed, ==, 2);
  ts_function_free(forever_fn);
  forever_fn = NULL;
  ts_listener_remove(id);
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  serial_check_install();
  g_test_add_func("/retrace-audit/host-numbers-by-value", test_host_numbers_by_value);
  g_test_add_func("/retrace-audit/concrete-host-number-equal-values",
                  test_concrete_host_number_equal_values);
  g_test_add_func("/retrace-audit/host-float-text", test_host_float_text);
  g_test_add_func("/retrace-audit/host-string-text", test_host_string_text);
  g_test_add_func("/retrace-audit/bool-reads-as-number", test_bool_reads_as_number);
  g_test_add_func("/retrace-audit/reduce-retracing-reason", test_reduce_retracing_reason);
  g_test_add_func("/retrace-audit/same-tensor-twice", test_same_tensor_twice);
  g_test_add_func("/retrace-audit/input-signature-refusals", test_input_signature_refusals);
  g_test_add_func("/retrace-audit/endless-recursion-one-failed-trace",
                  test_endless_recursion_one_failed_trace);
  return g_test_run();
}
