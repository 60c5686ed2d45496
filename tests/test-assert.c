/* test-assert.c — ts_assert (tf.debugging.Assert) and ts_assert_equal,
 * ts_assert_less, ts_assert_greater: eagerly a false condition fails at
 * once with InvalidArgument and the data summarized as TensorFlow's
 * AssertOp shows it; in a graph the Assert node is kept though nothing
 * reads it, runs in program order with the other side effects, and fails
 * the call naming the node (test-onnx-export: the ONNX export refuses it). */
#include <glib.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "test-serial-check.h"
#include "test-values.h"

/* Takes the pending error: InvalidArgument with exactly this detail (the
 * message after "file:line: Assert: "). */
static void expect_assert_error(const char *detail)
{
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_cmpint(e->code, ==, TS_ERR_INVALID_ARGUMENT);
  g_assert_cmpstr(e->op, ==, "Assert");
  g_assert_cmpstr(e->detail, ==, detail);
  ts_error_free(e);
}

static void test_eager(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = f32s(5, (float[]){ -1, 2, 3.5f, 4, 5 });
  g_assert_true(ts_assert(ts_scalar_bool(true), "never shown", x));
  assert_no_error();
  /* three elements of each tensor, as TensorFlow's summarize=3 */
  g_assert_false(ts_assert(ts_scalar_bool(false), "x is not positive:", x));
  expect_assert_error("assertion failed: [x is not positive:] [-1 2 3.5...]");
  ts_value all[] = { TS_TENSOR_VALUE(x) };
  g_assert_false(ts_assert_at(TS_HERE, ts_scalar_bool(false), all, 1, -1));
  expect_assert_error("assertion failed: [-1 2 3.5 4 5]");
  /* rows in brackets, cut after three elements; scalars; bools as 1/0;
   * string tensors unquoted; a condition of shape [1] */
  ts_tensor *m = ts_constant(TS_I32, TS_SHAPE(2, 2), (int32_t[]){ 1, 2, 3, 4 });
  ts_tensor *flags = ts_constant(TS_BOOL, TS_SHAPE(2), (bool[]){ true, false });
  ts_tensor *no = ts_constant(TS_BOOL, TS_SHAPE(1), (bool[]){ false });
  g_assert_false(ts_assert(no, m, ts_scalar_f64(0.25), flags, ts_scalar_string("a\"b")));
  expect_assert_error("assertion failed: [[1 2][3...]...] [0.25] [1 0] [a\\\"b]");

  /* The condition must be a bool scalar. */
  g_assert_false(ts_assert(ts_scalar_f32(1), "x"));
  expect_error_containing("the condition must be a bool scalar, got f32[]");
  g_assert_false(ts_assert(flags, "x"));
  expect_error_containing("the condition must be a bool scalar, got bool[2]");
  g_assert_false(ts_assert(NULL, "x"));
  expect_error_containing("the condition is NULL");
  ts_scope_end(s);
}

static void test_binary(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 1, 2, 3 });
  ts_tensor *y = ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 1, 2, 4 });
  g_assert_true(ts_assert_equal(x, x, NULL));
  g_assert_true(ts_assert_less(x, ts_scalar_i32(4), "below 4")); /* broadcast */
  g_assert_true(ts_assert_greater(y, ts_scalar_i32(0), NULL));
  assert_no_error();
  g_assert_false(ts_assert_equal(x, y, "x and y differ"));
  expect_assert_error("assertion failed: [x and y differ] [Condition x == y did not hold "
                      "element-wise:] [x = ] [1 2 3] [y = ] [1 2 4]");
  g_assert_false(ts_assert_less(y, ts_scalar_i32(4), NULL));
  expect_assert_error("assertion failed: [Condition x < y did not hold element-wise:] [x = ] "
                      "[1 2 4] [y = ] [4]");
  g_assert_false(ts_assert_greater(x, ts_scalar_i32(1), NULL));
  expect_assert_error("assertion failed: [Condition x > y did not hold element-wise:] [x = ] "
                      "[1 2 3] [y = ] [1]");
  /* shapes that do not broadcast: the comparison's error */
  g_assert_false(ts_assert_equal(x, ts_ones(TS_I32, TS_SHAPE(2)), NULL));
  expect_error_containing("Equal");
  ts_scope_end(s);
}

/* ---- in a graph ------------------------------------------------------------------------- */

static ts_tensor *counter;

/* Asserts x > 0, then bumps the counter; returns x * 2 (nothing reads the
 * Assert).  Eagerly the assertion fails at once, and C returns there (as a
 * Python exception would leave the function); while tracing it records a
 * node and succeeds. */
static ts_tensor *checked(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  if (!ts_assert(ts_reduce_min(ts_greater(x, ts_scalar_f32(0)), TS_ALL_AXES, false),
                 "x must be positive:", x))
    return NULL;
  ts_assign_add(counter, ts_scalar_f32(1));
  return ts_mul(x, ts_scalar_f32(2));
}

static int count_op(const ts_graph *g, ts_op op)
{
  int n = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    n += ts_node_op(ts_graph_node(g, i)) == op;
  return n;
}

static void test_graph(void)
{
  ts_scope *s = ts_scope_begin();
  counter = ts_variable_new(ts_scalar_f32(0), "counter");
  ts_function *f = ts_function_new("checked", checked, "x");
  ts_value good = TS_TENSOR_VALUE(f32s(3, (float[]){ 1, 2, 3 }));
  ts_value bad = TS_TENSOR_VALUE(f32s(3, (float[]){ 1, -2, 3 }));
  for (int eager = 0; eager < 2; eager++) {
    ts_function_set_run_eagerly(f, eager);
    g_assert_nonnull(ts_assign(counter, ts_scalar_f32(0)));
    ts_tensor *y = ts_function_call(f, &good, 1);
    g_assert_nonnull(y);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 2), ==, 6);
    g_assert_null(ts_function_call(f, &bad, 1));
    /* in the graph the node says it is the one that failed the call */
    expect_assert_error(eager ? "assertion failed: [x must be positive:] [1 -2 3]"
                              : "assertion failed: [x must be positive:] [1 -2 3] (node Assert)");
    /* the assign after it did not run: it waits on the Assert */
    g_assert_cmpfloat(ts_tensor_get_f64(ts_read(counter), 0), ==, 1);
  }
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  const ts_concrete *cf = ts_function_concrete(f, 0);
  const ts_graph *g = ts_concrete_graph(cf);
  g_assert_cmpint(count_op(g, TS_OP_ASSERT), ==, 1);
  g_assert_cmpint(count_op(ts_concrete_optimized_graph(cf), TS_OP_ASSERT), ==, 1); /* kept */
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (ts_node_op(n) != TS_OP_ASSIGN_ADD_VARIABLE)
      continue;
    g_assert_cmpint(ts_node_n_control_inputs(n), ==, 1);
    g_assert_cmpint(ts_node_op(ts_graph_node(g, ts_node_control_input(n, 0))), ==, TS_OP_ASSERT);
  }
  ts_function_free(f);
  g_clear_pointer(&counter, ts_tensor_unref);
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  serial_check_install();
  g_test_add_func("/assert/eager", test_eager);
  g_test_add_func("/assert/binary", test_binary);
  g_test_add_func("/assert/graph", test_graph);
  return g_test_run();
}
