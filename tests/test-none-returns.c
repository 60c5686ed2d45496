/* test-none-returns.c — a function that returns nothing, as a tf.function
 * whose Python returns None (the guides' find_next_odd, side_effect):
 * `return ts_none();` in C, None back to the caller in both modes, a
 * concrete function with no outputs whose stateful ops still run, the
 * pretty signature's "None", TS_RETURN(ts_none()) from traced blocks,
 * and the errors of mixing it with tensors. */
#include <glib.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "test-quiet.h"
#include "test-values.h"

static ts_tensor *v;     /* the variable the functions assign (the test's own) */
static GString *printed; /* ts_print lines */
static int runs;

static void on_print(const ts_event *ev, void *user_data)
{
  (void)user_data;
  g_string_append_printf(printed, "%s\n", ev->print.text);
}

/* v.assign(v + 1); if v % 2 == 0: v.assign(v + 1) — returns None */
static ts_tensor *find_next_odd(ts_call *c)
{
  (void)c;
  runs++;
  ts_assign(v, ts_add(ts_read(v), ts_scalar_i32(1)));
  TS_IF (ts_equal(ts_mod(ts_read(v), ts_scalar_i32(2)), ts_scalar_i32(0))) {
    ts_assign(v, ts_add(ts_read(v), ts_scalar_i32(1)));
  } TS_END_IF;
  return ts_none();
}

static void test_find_next_odd(gconstpointer data)
{
  bool eager = GPOINTER_TO_INT(data);
  ts_scope *s = ts_scope_begin();
  v = ts_variable_new(ts_scalar_i32(5), "v");
  runs = 0;
  ts_function *f = ts_function_new("find_next_odd", find_next_odd, NULL);
  const int want[] = { 7, 9, 11 };
  for (int call = 0; call < 3; call++) {
    ts_tensor *r = call_in_mode(f, eager, NULL, 0);
    assert_no_error();
    g_assert_nonnull(r);
    g_assert_true(ts_is_none(r));
    g_assert_cmpint(scalar_of(ts_read(v)), ==, want[call]);
  }
  g_assert_cmpint(runs, ==, eager ? 3 : 1);
  if (!eager) {
    ts_concrete *cf = ts_function_concrete(f, 0);
    g_assert_cmpint(ts_concrete_n_results(cf), ==, 0);
    g_assert_false(ts_concrete_returns_tuple(cf));
    g_assert_cmpint(ts_graph_n_outputs(ts_concrete_graph(cf)), ==, 0);
    /* the optimizer keeps the assigns no output reaches */
    g_assert_cmpint(ts_graph_n_outputs(ts_concrete_optimized_graph(cf)), ==, 0);
    char *text = ts_concrete_pretty_signature(cf);
    g_assert_cmpstr(text, ==, "find_next_odd()\n  Returns:\n    None");
    free(text);
  }
  /* the _n calls count no results, and they print as Python prints None */
  ts_tensor *out[2] = { NULL, NULL };
  bool tuple = true;
  g_assert_cmpint(ts_function_call_n(f, NULL, 0, out, 2, &tuple), ==, 0);
  assert_no_error();
  g_assert_false(tuple);
  g_assert_null(out[0]);
  char *text = ts_results_to_string(out, 0, false);
  g_assert_cmpstr(text, ==, "None");
  free(text);
  text = ts_results_type_string(NULL, 0, false);
  g_assert_cmpstr(text, ==, "None");
  free(text);
  text = ts_tensor_to_string(ts_none());
  g_assert_cmpstr(text, ==, "None");
  free(text);
  g_assert_cmpint(scalar_of(ts_read(v)), ==, 13);
  ts_function_free(f);
  ts_tensor_unref(v);
  ts_scope_end(s);
}

/* tf.print in a function returning None prints on every call */
static ts_tensor *log_value(ts_call *c)
{
  ts_print("Executed with", ts_arg(c, 0));
  return ts_none();
}

static void test_print_only(void)
{
  ts_scope *s = ts_scope_begin();
  printed = g_string_new(NULL);
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_PRINT), on_print, NULL);
  ts_function *f = ts_function_new("log_value", log_value, "x");
  int quiet = test_quiet_begin(); /* the prints' stdout is not TAP's */
  for (int i = 1; i <= 3; i++) {
    ts_value x = tv(ts_scalar_i32(i));
    g_assert_true(ts_is_none(ts_function_call(f, &x, 1)));
    assert_no_error();
  }
  test_quiet_end(quiet);
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  g_assert_cmpstr(printed->str, ==, "Executed with 1\nExecuted with 2\nExecuted with 3\n");
  ts_listener_remove(id);
  g_string_free(printed, TRUE);
  ts_function_free(f);
  ts_scope_end(s);
}

/* if x > 0: v.assign_add(x); return — else v.assign(0) after the if;
 * every path returns None */
static ts_tensor *early_return(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(x, ts_scalar_i32(0))) {
    ts_assign_add(v, x);
    TS_RETURN(ts_none());
  } TS_END_IF;
  ts_assign(v, ts_scalar_i32(0));
  return ts_none();
}

static void test_traced_return(gconstpointer data)
{
  bool eager = GPOINTER_TO_INT(data);
  ts_scope *s = ts_scope_begin();
  v = ts_variable_new(ts_scalar_i32(10), "v");
  ts_function *f = ts_function_new("early_return", early_return, "x");
  const int args[] = { 5, -1, 3, 4 }, want[] = { 15, 0, 3, 7 };
  for (int i = 0; i < 4; i++) {
    ts_value x = tv(ts_scalar_i32(args[i]));
    ts_tensor *r = call_in_mode(f, eager, &x, 1);
    assert_no_error();
    g_assert_true(ts_is_none(r));
    g_assert_cmpint(scalar_of(ts_read(v)), ==, want[i]);
  }
  if (!eager)
    g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_function_free(f);
  ts_tensor_unref(v);
  ts_scope_end(s);
}

/* while i < n: v.assign_add(i); if v > limit: return; i += 1 */
static ts_tensor *loop_return(ts_call *c)
{
  ts_tensor *n = ts_arg(c, 0), *i = ts_scalar_i32(0);
  TS_WHILE (ts_less(i, n), &i) {
    ts_assign_add(v, i);
    TS_IF (ts_greater(ts_read(v), ts_scalar_i32(5))) {
      TS_RETURN(ts_none());
    } TS_END_IF;
    i = ts_add(i, ts_scalar_i32(1));
  }
  ts_assign(v, ts_scalar_i32(-1)); /* only where the loop ran out */
  return ts_none();
}

static void test_loop_return(gconstpointer data)
{
  bool eager = GPOINTER_TO_INT(data);
  ts_scope *s = ts_scope_begin();
  v = ts_variable_new(ts_scalar_i32(0), "v");
  ts_function *f = ts_function_new("loop_return", loop_return, "n");
  /* n = 10: v = 0+1+2+3 = 6 > 5 returns; n = 2 after v = 0: 0+1 = 1, runs out -> -1 */
  ts_value ten = tv(ts_scalar_i32(10)), two = tv(ts_scalar_i32(2));
  g_assert_true(ts_is_none(call_in_mode(f, eager, &ten, 1)));
  assert_no_error();
  g_assert_cmpint(scalar_of(ts_read(v)), ==, 6);
  ts_assign(v, ts_scalar_i32(0));
  g_assert_true(ts_is_none(call_in_mode(f, eager, &two, 1)));
  assert_no_error();
  g_assert_cmpint(scalar_of(ts_read(v)), ==, -1);
  ts_function_free(f);
  ts_tensor_unref(v);
  ts_scope_end(s);
}

/* A traced caller inlines the None-returning call's assigns */
static ts_tensor *bump_twice(ts_call *c)
{
  (void)c;
  ts_function *inner = ts_function_new("find_next_odd", find_next_odd, NULL);
  ts_tensor *a = ts_function_call(inner, NULL, 0);
  ts_tensor *b = ts_function_call(inner, NULL, 0);
  ts_function_free(inner);
  if (!ts_is_none(a) || !ts_is_none(b))
    return NULL;
  return ts_read(v);
}

static void test_nested(void)
{
  ts_scope *s = ts_scope_begin();
  v = ts_variable_new(ts_scalar_i32(4), "v");
  ts_function *f = ts_function_new("bump_twice", bump_twice, NULL);
  g_assert_cmpint(scalar_of(ts_function_call(f, NULL, 0)), ==, 7);
  g_assert_cmpint(scalar_of(ts_function_call(f, NULL, 0)), ==, 11);
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_function_free(f);
  ts_tensor_unref(v);
  ts_scope_end(s);
}

/* The divergence finder compares the assigns op by op; no result to compare */
static void test_diverge(void)
{
  ts_scope *s = ts_scope_begin();
  v = ts_variable_new(ts_scalar_i32(5), "v");
  ts_function *f = ts_function_new("find_next_odd", find_next_odd, NULL);
  ts_diverge_report *rep = NULL;
  g_assert_true(ts_diverge(f, NULL, 0, NULL, &rep));
  g_assert_nonnull(rep);
  g_assert_false(rep->diverged);
  g_assert_cmpint(rep->n_results, ==, 0);
  g_assert_cmpint(rep->n_compared, >, 0);
  char *text = ts_diverge_report_format(rep);
  g_assert_nonnull(strstr(text, "result: None in both runs\n"));
  free(text);
  ts_diverge_report_free(rep);
  /* the eager run's assigns were put back before the graph's: 5 -> 7 once */
  g_assert_cmpint(scalar_of(ts_read(v)), ==, 7);
  ts_function_free(f);
  ts_tensor_unref(v);
  ts_scope_end(s);
}

/* returns None where x > 0, x itself at the end */
static ts_tensor *mixed(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(x, ts_scalar_i32(0))) {
    TS_RETURN(ts_none());
  } TS_END_IF;
  return x;
}

static ts_tensor *returns_null(ts_call *c)
{
  (void)c;
  return NULL;
}

static ts_tensor *none_in_tuple(ts_call *c)
{
  return ts_tuple(ts_arg(c, 0), ts_none());
}

static ts_tensor *none_as_input(ts_call *c)
{
  return ts_add(ts_arg(c, 0), ts_none());
}

static void test_errors(void)
{
  ts_scope *s = ts_scope_begin();
  ts_value x = tv(ts_scalar_i32(1));

  ts_function *f = ts_function_new("mixed", mixed, "x");
  g_assert_null(ts_function_call(f, &x, 1));
  expect_error_containing("mixed: returns None at line");
  ts_function_free(f);

  f = ts_function_new("returns_null", returns_null, NULL);
  g_assert_null(ts_function_call(f, NULL, 0));
  expect_error_containing("returned NULL without an error");
  g_assert_null(ts_function_call_eager(f, NULL, 0));
  expect_error_containing("`return ts_none();`");
  ts_function_free(f);

  f = ts_function_new("none_in_tuple", none_in_tuple, "x");
  ts_tensor *out[2];
  g_assert_cmpint(ts_function_call_n(f, &x, 1, out, 2, NULL), ==, -1);
  expect_error_containing("tensor 1 of 2 is None (ts_none)");
  ts_function_free(f);

  f = ts_function_new("none_as_input", none_as_input, "x");
  for (int eager = 0; eager < 2; eager++) {
    g_assert_null(call_in_mode(f, eager, &x, 1));
    expect_error_containing("input 1 is None (ts_none)");
  }
  ts_function_free(f);
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_data_func("/none/find-next-odd/graph", GINT_TO_POINTER(0), test_find_next_odd);
  g_test_add_data_func("/none/find-next-odd/eager", GINT_TO_POINTER(1), test_find_next_odd);
  g_test_add_func("/none/print-only", test_print_only);
  g_test_add_data_func("/none/traced-return/graph", GINT_TO_POINTER(0), test_traced_return);
  g_test_add_data_func("/none/traced-return/eager", GINT_TO_POINTER(1), test_traced_return);
  g_test_add_data_func("/none/loop-return/graph", GINT_TO_POINTER(0), test_loop_return);
  g_test_add_data_func("/none/loop-return/eager", GINT_TO_POINTER(1), test_loop_return);
  g_test_add_func("/none/nested", test_nested);
  g_test_add_func("/none/diverge", test_diverge);
  g_test_add_func("/none/errors", test_errors);
  return g_test_run();
}
