/* test-nested.c — a ts_function called while another is traced, as
 * tf.function does it: the callee is traced once per signature, its C code
 * (a print, a counter) runs in that trace only, and the caller's graph
 * holds a copy of the callee's concrete graph under a name scope per call
 * ("inner", "inner_1"), with its captures, its If and While nodes, the op
 * identities an eager run gives the same ops, and its gradients. */
#include <glib.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "test-serial-check.h"
#include "test-values.h"

/* The node of g named `name`, or NULL. */
static const ts_node *find_node(const ts_graph *g, const char *name)
{
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    if (strcmp(ts_node_name(ts_graph_node(g, i)), name) == 0)
      return ts_graph_node(g, i);
  return NULL;
}

/* Nodes of g (subgraphs too) of op `op` whose name starts with prefix. */
static int count_nodes(const ts_graph *g, ts_op op, const char *prefix)
{
  int n = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *node = ts_graph_node(g, i);
    n += ts_node_op(node) == op && g_str_has_prefix(ts_node_name(node), prefix);
    for (int s = 0; s < ts_node_n_subgraphs(node); s++)
      n += count_nodes(ts_node_subgraph(node, s), op, prefix);
  }
  return n;
}

static const ts_graph *traced_graph(const ts_function *f, int i)
{
  return ts_concrete_graph(ts_function_concrete(f, i));
}

/* ---- traced once, inlined per call ------------------------------------------------------ */

static ts_function *inner_fn; /* inner(x) = x * x + 1 */
static int inner_runs;        /* runs of inner's C code: its traces, or eager calls */

static ts_tensor *inner(ts_call *c)
{
  inner_runs++;
  ts_tensor *x = ts_arg(c, 0);
  return ts_add(ts_mul(x, x), ts_scalar_f32(1));
}

static ts_tensor *call_inner(ts_tensor *x)
{
  ts_value v = tv(x);
  return ts_function_call(inner_fn, &v, 1);
}

/* inner(inner(x)): one signature, two calls */
static ts_tensor *outer_twice(ts_call *c)
{
  return call_inner(call_inner(ts_arg(c, 0)));
}

static void test_traced_once(void)
{
  ts_scope *s = ts_scope_begin();
  inner_fn = ts_function_new("inner", inner, "x");
  ts_function *outer = ts_function_new("outer", outer_twice, "x");
  inner_runs = 0;
  ts_value x = tv(f32s(2, (float[]){ 1, 2 }));
  /* inner([1, 2]) = [2, 5], inner([2, 5]) = [5, 26] */
  assert_values(ts_function_call(outer, &x, 1), (double[]){ 5, 26 }, 2);
  g_assert_cmpint(inner_runs, ==, 1); /* not once more per call in outer's graph */
  g_assert_cmpint(ts_function_trace_count(inner_fn), ==, 1);
  g_assert_cmpint(ts_function_trace_count(outer), ==, 1);
  ts_value x2 = tv(f32s(2, (float[]){ 0, -1 }));
  assert_values(ts_function_call(outer, &x2, 1), (double[]){ 2, 5 }, 2);
  assert_values(ts_function_call(inner_fn, &x2, 1), (double[]){ 1, 2 }, 2);
  g_assert_cmpint(inner_runs, ==, 1);
  g_assert_cmpint(ts_function_trace_count(inner_fn), ==, 1);

  /* Two copies of inner's graph, each under a scope of its own; its
   * placeholders became outer's tensors. */
  const ts_graph *g = traced_graph(outer, 0);
  const ts_node *mul = find_node(g, "inner/Mul"), *mul_1 = find_node(g, "inner_1/Mul");
  g_assert_nonnull(mul);
  g_assert_nonnull(mul_1);
  g_assert_cmpstr(ts_node_scope(mul_1), ==, "inner_1");
  g_assert_cmpstr(ts_node_loc(mul).func, ==, "inner");
  g_assert_true(ts_node_has_eager_twin(mul));
  g_assert_cmpint(count_nodes(g, TS_OP_PLACEHOLDER, ""), ==, 1);
  g_assert_cmpint(count_nodes(g, TS_OP_MUL, ""), ==, 2);
  const ts_node *add = find_node(g, "inner/Add");
  g_assert_nonnull(add);
  ts_port from = ts_node_input(mul_1, 0); /* the second call reads the first's result */
  g_assert_true(ts_graph_node(g, from.node) == add);
  ts_port out = ts_graph_output(g, 0);
  g_assert_cmpstr(ts_node_name(ts_graph_node(g, out.node)), ==, "inner_1/Add");

  /* outer run eagerly calls inner's graph (a tf.function called eagerly) */
  assert_values(ts_function_call_eager(outer, &x, 1), (double[]){ 5, 26 }, 2);
  g_assert_cmpint(inner_runs, ==, 1);
  /* With every function run eagerly, inner's C code runs on each call. */
  ts_run_functions_eagerly(true);
  for (int i = 1; i <= 2; i++) {
    assert_values(ts_function_call(outer, &x, 1), (double[]){ 5, 26 }, 2);
    g_assert_cmpint(inner_runs, ==, 1 + 2 * i);
  }
  ts_run_functions_eagerly(false);
  g_assert_cmpint(ts_function_trace_count(inner_fn), ==, 1);
  ts_function_free(outer);
  ts_function_free(inner_fn);
  ts_scope_end(s);
}

/* inner(x) + sum(inner(y)) + inner(x): two signatures */
static ts_tensor *outer_two_signatures(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *y = ts_arg(c, 1);
  ts_tensor *a = call_inner(x);
  ts_tensor *b = ts_reduce_sum(call_inner(y), TS_ALL_AXES, false);
  return ts_add(ts_add(a, b), call_inner(x));
}

static void test_signatures(void)
{
  ts_scope *s = ts_scope_begin();
  inner_fn = ts_function_new("inner", inner, "x");
  ts_function *outer = ts_function_new("outer", outer_two_signatures, "x, y");
  inner_runs = 0;
  ts_value args[] = { tv(f32s(2, (float[]){ 1, 2 })), tv(f32s(3, (float[]){ 0, 1, 2 })) };
  /* 2 * [2, 5] + (1 + 2 + 5) */
  assert_values(ts_function_call(outer, args, 2), (double[]){ 12, 18 }, 2);
  g_assert_cmpint(inner_runs, ==, 2);
  g_assert_cmpint(ts_function_trace_count(inner_fn), ==, 2);
  g_assert_cmpstr(ts_concrete_signature(ts_function_concrete(inner_fn, 0)), ==, "(x: f32[2])");
  g_assert_cmpstr(ts_concrete_signature(ts_function_concrete(inner_fn, 1)), ==, "(x: f32[3])");
  const ts_graph *g = traced_graph(outer, 0);
  g_assert_nonnull(find_node(g, "inner/Mul"));
  g_assert_nonnull(find_node(g, "inner_1/Mul"));
  g_assert_nonnull(find_node(g, "inner_2/Mul"));
  assert_values(ts_function_call(outer, args, 2), (double[]){ 12, 18 }, 2);
  g_assert_cmpint(inner_runs, ==, 2);
  ts_function_free(outer);
  ts_function_free(inner_fn);
  ts_scope_end(s);
}

/* y = inner(y) while sum(y) < 100: the call in a loop body */
static ts_tensor *outer_loop(ts_call *c)
{
  ts_tensor *y = ts_arg(c, 0);
  TS_WHILE (ts_less(ts_reduce_sum(y, TS_ALL_AXES, false), ts_scalar_f32(100)), &y) {
    y = call_inner(y);
  }
  return y;
}

static void test_in_loop(void)
{
  ts_scope *s = ts_scope_begin();
  inner_fn = ts_function_new("inner", inner, "x");
  ts_function *outer = ts_function_new("outer_loop", outer_loop, "x");
  inner_runs = 0;
  ts_value x = tv(f32s(2, (float[]){ 1, 2 }));
  /* [1, 2] -> [2, 5] -> [5, 26] -> [26, 677] */
  assert_values(ts_function_call(outer, &x, 1), (double[]){ 26, 677 }, 2);
  g_assert_cmpint(inner_runs, ==, 1); /* the body is traced (and probed), inner is not run again */
  g_assert_cmpint(count_nodes(traced_graph(outer, 0), TS_OP_MUL, "inner/"), ==, 1);
  ts_run_functions_eagerly(true);
  assert_values(ts_function_call(outer, &x, 1), (double[]){ 26, 677 }, 2);
  ts_run_functions_eagerly(false);
  g_assert_cmpint(inner_runs, ==, 1 + 3);
  ts_function_free(outer);
  ts_function_free(inner_fn);
  ts_scope_end(s);
}

/* ---- captures: a variable and a constant -------------------------------------------- */

static ts_tensor *counter_var; /* f32[], bumped by bump */
static ts_tensor *weights;     /* f32[2], an eager constant bump captures */
static ts_function *bump_fn;
static int bump_runs;

/* counter += 1; x * weights * counter */
static ts_tensor *bump(ts_call *c)
{
  bump_runs++;
  ts_assign_add(counter_var, ts_scalar_f32(1));
  return ts_mul(ts_mul(ts_arg(c, 0), weights), ts_read(counter_var));
}

static ts_tensor *bump_twice(ts_call *c)
{
  ts_value x = tv(ts_arg(c, 0));
  ts_tensor *a = ts_function_call(bump_fn, &x, 1);
  return ts_add(a, ts_function_call(bump_fn, &x, 1));
}

static void test_captures(void)
{
  ts_scope *s = ts_scope_begin();
  counter_var = ts_variable_new(ts_scalar_f32(0), "counter");
  weights = f32s(2, (float[]){ 10, 20 });
  bump_fn = ts_function_new("bump", bump, "x");
  ts_function *outer = ts_function_new("bump_twice", bump_twice, "x");
  bump_runs = 0;
  ts_value x = tv(f32s(2, (float[]){ 1, 2 }));
  for (int mode = 0; mode < 2; mode++) {
    ts_run_functions_eagerly(mode == 1);
    g_assert_nonnull(ts_assign(counter_var, ts_scalar_f32(0)));
    /* the second bump reads the counter after its own assign, in order:
     * [10, 40] * 1 + [10, 40] * 2 */
    for (int k = 0; k < 2; k++) {
      ts_tensor *y = ts_function_call(outer, &x, 1);
      double base = 2 * k; /* the counter the call starts from */
      assert_values(y, (double[]){ 10 * (2 * base + 3), 40 * (2 * base + 3) }, 2);
    }
    assert_values(ts_read(counter_var), (double[]){ 4 }, 1);
  }
  ts_run_functions_eagerly(false);
  g_assert_cmpint(bump_runs, ==, 1 + 4); /* one trace, then 4 eager calls */
  g_assert_cmpint(ts_function_trace_count(bump_fn), ==, 1);
  const ts_graph *g = traced_graph(outer, 0);
  /* one handle of the variable, one constant of weights, for both copies */
  g_assert_cmpint(count_nodes(g, TS_OP_VAR_HANDLE, ""), ==, 1);
  g_assert_cmpint(count_nodes(g, TS_OP_CONST, ""), ==, 2); /* weights, 1 */
  const ts_node *assign_1 = find_node(g, "bump_1/AssignAddVariableOp");
  g_assert_nonnull(assign_1);
  g_assert_cmpint(ts_node_n_control_inputs(assign_1), ==, 1);
  g_assert_cmpstr(ts_node_name(ts_graph_node(g, ts_node_control_input(assign_1, 0))), ==,
                  "bump/ReadVariableOp");
  ts_function_free(outer);
  ts_function_free(bump_fn);
  ts_scope_end(s);
}

/* ---- control flow in the callee ----------------------------------------------------- */

static ts_function *collatz_fn;
static int collatz_runs;

/* Collatz steps to reach 1: a TS_IF in a TS_WHILE. */
static ts_tensor *collatz(ts_call *c)
{
  collatz_runs++;
  ts_tensor *n = ts_arg(c, 0), *steps = ts_scalar_i32(0);
  ts_tensor *one = ts_scalar_i32(1), *two = ts_scalar_i32(2);
  TS_WHILE (ts_greater(n, one), &n, &steps) {
    TS_IF (ts_equal(ts_mod(n, two), ts_scalar_i32(0)), &n) {
      n = ts_floordiv(n, two);
    } TS_ELSE {
      n = ts_add(ts_mul(n, ts_scalar_i32(3)), one);
    } TS_END_IF;
    steps = ts_add(steps, one);
  }
  return steps;
}

/* collatz(n) * 100 + collatz(n + 1) */
static ts_tensor *collatz_pair(ts_call *c)
{
  ts_tensor *n = ts_arg(c, 0);
  ts_value a = tv(n), b = tv(ts_add(n, ts_scalar_i32(1)));
  return ts_add(ts_mul(ts_function_call(collatz_fn, &a, 1), ts_scalar_i32(100)),
                ts_function_call(collatz_fn, &b, 1));
}

static void test_control_flow(void)
{
  ts_scope *s = ts_scope_begin();
  collatz_fn = ts_function_new("collatz", collatz, "n");
  ts_function *outer = ts_function_new("collatz_pair", collatz_pair, "n");
  collatz_runs = 0;
  ts_value six = tv(ts_scalar_i32(6)), three = tv(ts_scalar_i32(3));
  /* 6: 8 steps, 7: 16; 3: 7 steps, 4: 2 */
  for (int mode = 0; mode < 2; mode++) {
    ts_run_functions_eagerly(mode == 1);
    g_assert_cmpint(ts_tensor_get_i64(ts_function_call(outer, &six, 1), 0), ==, 816);
    g_assert_cmpint(ts_tensor_get_i64(ts_function_call(outer, &three, 1), 0), ==, 702);
    if (mode == 0)
      g_assert_cmpint(collatz_runs, ==, 1);
  }
  ts_run_functions_eagerly(false);
  const ts_graph *g = traced_graph(outer, 0);
  g_assert_cmpint(count_nodes(g, TS_OP_WHILE, "collatz/"), ==, 1);
  g_assert_cmpint(count_nodes(g, TS_OP_WHILE, "collatz_1/"), ==, 1);
  g_assert_cmpint(count_nodes(g, TS_OP_IF, "collatz_1/"), ==, 1);
  g_assert_cmpint(count_nodes(g, TS_OP_FLOORDIV, "collatz_1/"), ==, 1);
  /* a subgraph's parent is the copy's graph */
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    for (int k = 0; k < ts_node_n_subgraphs(n); k++)
      g_assert_true(ts_graph_parent(ts_node_subgraph(n, k)) == g);
  }
  ts_function_free(outer);
  ts_function_free(collatz_fn);
  ts_scope_end(s);
}

/* ---- errors and depth ------------------------------------------------------------------- */

static ts_function *level_fn[3];
static int level_runs[3];

/* level 2: x * x; level 1: level2(x) * 2; level 0: level1(x) + 1 */
static ts_tensor *level2(ts_call *c)
{
  level_runs[2]++;
  return ts_matmul(ts_arg(c, 0), ts_arg(c, 0));
}

static ts_tensor *level1(ts_call *c)
{
  level_runs[1]++;
  ts_value x = tv(ts_arg(c, 0));
  return ts_mul(ts_function_call(level_fn[2], &x, 1), ts_scalar_f32(2));
}

static ts_tensor *level0(ts_call *c)
{
  level_runs[0]++;
  ts_value x = tv(ts_arg(c, 0));
  return ts_add(ts_function_call(level_fn[1], &x, 1), ts_scalar_f32(1));
}

static void test_three_levels(void)
{
  ts_scope *s = ts_scope_begin();
  level_fn[0] = ts_function_new("level0", level0, "x");
  level_fn[1] = ts_function_new("level1", level1, "x");
  level_fn[2] = ts_function_new("level2", level2, "x");
  memset(level_runs, 0, sizeof level_runs);
  ts_value x = tv(ts_constant(TS_F32, TS_SHAPE(2, 2), (float[]){ 1, 2, 3, 4 }));
  /* x @ x = [[7, 10], [15, 22]] */
  const double want[] = { 15, 21, 31, 45 };
  for (int k = 0; k < 2; k++)
    assert_values(ts_function_call(level_fn[0], &x, 1), want, 4);
  for (int i = 0; i < 3; i++) {
    g_assert_cmpint(level_runs[i], ==, 1);
    g_assert_cmpint(ts_function_trace_count(level_fn[i]), ==, 1);
  }
  const ts_graph *g = traced_graph(level_fn[0], 0);
  g_assert_nonnull(find_node(g, "level1/level2/MatMul"));
  g_assert_nonnull(find_node(g, "level1/Mul"));
  g_assert_nonnull(find_node(g, "Add"));
  ts_run_functions_eagerly(true);
  assert_values(ts_function_call(level_fn[0], &x, 1), want, 4);
  ts_run_functions_eagerly(false);

  /* A trace that fails deep down names the functions being traced, once. */
  ts_value bad = tv(ts_ones(TS_F32, TS_SHAPE(2, 3)));
  g_assert_null(ts_function_call(level_fn[0], &bad, 1));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_nonnull(strstr(e->message, "MatMul"));
  g_assert_nonnull(strstr(e->message, " (calling level2 while tracing level0 -> level1)"));
  g_assert_null(strstr(strstr(e->message, "(calling") + 1, "(calling"));
  ts_error_free(e);
  g_assert_cmpint(ts_function_n_concrete(level_fn[0]), ==, 1);
  g_assert_cmpint(ts_function_n_concrete(level_fn[1]), ==, 1);
  /* called from level1's trace only */
  g_assert_null(ts_function_call(level_fn[1], &bad, 1));
  expect_error_containing("(calling level2 while tracing level1)");
  for (int i = 0; i < 3; i++)
    ts_function_free(level_fn[i]);
  ts_scope_end(s);
}

static ts_function *countdown_fn;

/* countdown(x - 1) + 1 while x > 0: recursion under a tensor condition */
static ts_tensor *countdown(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(x, ts_scalar_i32(0)), &x) {
    ts_value next = tv(ts_sub(x, ts_scalar_i32(1)));
    x = ts_add(ts_function_call(countdown_fn, &next, 1), ts_scalar_i32(1));
  } TS_END_IF;
  return x;
}

/* Recursion that cannot be traced names the chain by its ends, once. */
static void test_recursion_note(void)
{
  ts_scope *s = ts_scope_begin();
  countdown_fn = ts_function_new("countdown", countdown, "x");
  ts_value three = tv(ts_scalar_i32(3));
  g_assert_null(ts_function_call(countdown_fn, &three, 1));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  const char *note = strstr(e->message, " (calling countdown while tracing countdown -> "
                                        "countdown -> countdown -> ... -> countdown -> "
                                        "countdown -> countdown)");
  g_assert_nonnull(note);
  g_assert_null(strstr(note + 2, "(calling"));
  ts_error_free(e);
  ts_function_free(countdown_fn);
  ts_scope_end(s);
}

/* ---- op identity across modes ---------------------------------------------------------- */

typedef struct names {
  GPtrArray *graph, *eager; /* names of the traced nodes inner's ops ran for, or are twins of */
} names;

static void on_op(const ts_event *ev, void *data)
{
  names *n = data;
  if (ev->kind != TS_EVENT_OP_END || !ev->op.loc.func || strcmp(ev->op.loc.func, "inner") != 0)
    return;
  if (ev->op.node) /* the traced nodes it stands for (a fused node: several) */
    for (int i = 0; i < ts_node_n_origins(ev->op.node); i++)
      g_ptr_array_add(n->graph, g_strdup(ts_node_name(ts_node_origin(ev->op.node, i))));
  else
    g_ptr_array_add(n->eager, g_strdup(ev->op.traced ? ts_node_name(ev->op.traced) : "(none)"));
}

/* sum(inner(x)) */
static ts_tensor *outer_once(ts_call *c)
{
  return ts_reduce_sum(call_inner(ts_arg(c, 0)), TS_ALL_AXES, false);
}

/* A graph-mode run of the caller names inner's ops by their nodes; an
 * eager run finds the same nodes as their twins. */
static void test_op_identity(void)
{
  ts_scope *s = ts_scope_begin();
  inner_fn = ts_function_new("inner", inner, "x");
  ts_function *outer = ts_function_new("outer", outer_once, "x");
  names n = { g_ptr_array_new_with_free_func(g_free), g_ptr_array_new_with_free_func(g_free) };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_op, &n);
  ts_value x = tv(f32s(2, (float[]){ 1, 2 }));
  g_assert_nonnull(ts_function_call(outer, &x, 1)); /* traces */
  g_ptr_array_set_size(n.graph, 0);
  g_ptr_array_set_size(n.eager, 0);
  g_assert_nonnull(ts_function_call(outer, &x, 1));
  ts_run_functions_eagerly(true);
  g_assert_nonnull(ts_function_call(outer, &x, 1));
  ts_run_functions_eagerly(false);
  ts_listener_remove(id);
  g_assert_cmpint(n.graph->len, ==, 2);
  g_assert_cmpint(n.eager->len, ==, 2);
  for (guint i = 0; i < n.graph->len; i++)
    g_assert_cmpstr(n.eager->pdata[i], ==, n.graph->pdata[i]);
  g_assert_cmpstr(n.graph->pdata[0], ==, "inner/Mul");
  g_assert_cmpstr(n.graph->pdata[1], ==, "inner/Add");
  g_ptr_array_unref(n.graph);
  g_ptr_array_unref(n.eager);
  ts_function_free(outer);
  ts_function_free(inner_fn);
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  serial_check_install();
  g_test_add_func("/nested/traced-once", test_traced_once);
  g_test_add_func("/nested/signatures", test_signatures);
  g_test_add_func("/nested/in-loop", test_in_loop);
  g_test_add_func("/nested/captures", test_captures);
  g_test_add_func("/nested/control-flow", test_control_flow);
  g_test_add_func("/nested/three-levels", test_three_levels);
  g_test_add_func("/nested/recursion-note", test_recursion_note);
  g_test_add_func("/nested/op-identity", test_op_identity);
  return g_test_run();
}
