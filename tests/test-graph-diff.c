/* test-graph-diff.c — the compare view's diff of two concrete functions
 * and what the passes made of a graph's nodes (app/ts-graph-diff.c, which
 * needs no GTK). */
#include <glib.h>
#include <stdlib.h>
#include <tracescope.h>

#include "../app/ts-graph-diff.h"

/* x * x + 1, then negated when the host int n is 2 */
static ts_tensor *square_plus_one(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *y = ts_add(ts_mul(x, x), ts_scalar_f32(1));
  return ts_arg_int(c, 1) == 2 ? ts_neg(y) : y;
}

static const ts_graph *trace(ts_function *f, ts_tensor *x, int n)
{
  ts_concrete *cf = ts_function_get_concrete(f, (ts_value[]){ TS_TENSOR_VALUE(x), TS_INT_VALUE(n) }, 2);
  g_assert_nonnull(cf);
  return ts_concrete_graph(cf);
}

static void test_shapes_and_nodes(void)
{
  ts_function *f = ts_function_new("square_plus_one", square_plus_one, "x, n");
  const ts_graph *scalar = trace(f, ts_scalar_f32(3), 1);
  const ts_graph *pair = trace(f, ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 }), 1);
  const ts_graph *negated = trace(f, ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 }), 2);
  if (g_test_verbose()) {
    char *text = ts_graph_to_text(negated);
    g_test_message("%s", text);
    free(text);
  }

  /* f32[] vs f32[2]: x, Mul and Add change shape; the constant 1 does not */
  g_autoptr(ts_graph_diff) d = ts_graph_diff_new(scalar, pair);
  g_assert_cmpint(ts_graph_diff_count(d, TS_GRAPH_DIFF_CHANGED), ==, 3);
  g_assert_cmpint(ts_graph_diff_count(d, TS_GRAPH_DIFF_ONLY_LEFT), ==, 0);
  g_assert_cmpint(ts_graph_diff_count(d, TS_GRAPH_DIFF_ONLY_RIGHT), ==, 0);
  g_assert_cmpint(ts_graph_diff_count(d, TS_GRAPH_DIFF_SAME), ==, ts_graph_n_nodes(scalar) - 3);
  g_autofree char *summary = ts_graph_diff_summary(d, "(x: f32[])", "(x: f32[2])");
  g_assert_cmpstr(summary, ==, "(x: f32[]) vs (x: f32[2]): 3 nodes differ in shape, 0 only left, 0 only right");

  /* the same shapes, one more op: only the Neg and what it feeds differ */
  g_autoptr(ts_graph_diff) e = ts_graph_diff_new(negated, pair);
  g_assert_cmpint(ts_graph_diff_count(e, TS_GRAPH_DIFF_CHANGED), ==, 0);
  g_assert_cmpint(ts_graph_diff_count(e, TS_GRAPH_DIFF_ONLY_LEFT), ==, 1);
  g_assert_cmpint(ts_graph_diff_count(e, TS_GRAPH_DIFF_ONLY_RIGHT), ==, 0);
  for (int i = 0; i < ts_graph_n_nodes(negated); i++) {
    const ts_node *node = ts_graph_node(negated, i);
    ts_graph_diff_kind want = ts_node_op(node) == TS_OP_NEG ? TS_GRAPH_DIFF_ONLY_LEFT : TS_GRAPH_DIFF_SAME;
    g_assert_cmpint(ts_graph_diff_kind_of(e, node), ==, want);
  }
  g_autofree char *other = ts_graph_diff_summary(e, "a", "b");
  g_assert_cmpstr(other, ==, "a vs b: 0 nodes differ in shape, 1 only left, 0 only right");

  /* a node of neither graph, and no graphs at all */
  g_assert_cmpint(ts_graph_diff_kind_of(d, ts_graph_node(negated, 0)), ==, TS_GRAPH_DIFF_SAME);
  g_autoptr(ts_graph_diff) empty = ts_graph_diff_new(NULL, pair);
  g_assert_cmpint(ts_graph_diff_count(empty, TS_GRAPH_DIFF_ONLY_RIGHT), ==, ts_graph_n_nodes(pair));
  ts_function_free(f);
}

/* relu(x @ w + b) with x * 1 and 2 + 3 on the side */
static ts_tensor *dense_and_more(ts_call *c)
{
  ts_tensor *y = ts_relu(ts_add(ts_matmul(ts_arg(c, 0), ts_arg(c, 1)), ts_arg(c, 2)));
  ts_tensor *five = ts_add(ts_scalar_f32(2), ts_scalar_f32(3));
  return ts_mul(ts_mul(y, ts_scalar_f32(1)), five);
}

/* The optimizer's nodes classified by what they stand for (the real
 * passes, in process): one kernel fused from MatMul, Add, Relu, 2 + 3
 * folded, x * 1 gone; the inputs kept. */
static void test_pass_changes(void)
{
  ts_function *f = ts_function_new("dense_and_more", dense_and_more, "x, w, b");
  ts_value args[] = { TS_TENSOR_VALUE(ts_zeros(TS_F32, TS_SHAPE(2, 3))),
                      TS_TENSOR_VALUE(ts_zeros(TS_F32, TS_SHAPE(3, 4))),
                      TS_TENSOR_VALUE(ts_zeros(TS_F32, TS_SHAPE(4))) };
  ts_concrete *cf = ts_function_get_concrete(f, args, 3);
  g_assert_nonnull(cf);
  const ts_graph *traced = ts_concrete_graph(cf);
  char *summary = NULL;
  ts_graph *optimized = ts_graph_optimize(traced, "all", &summary);
  g_assert_nonnull(optimized);
  g_test_message("%s", summary);
  int counts[TS_PASS_N_CHANGES] = { 0 };
  for (int i = 0; i < ts_graph_n_nodes(optimized); i++) {
    const ts_node *n = ts_graph_node(optimized, i);
    int k = ts_node_n_origins(n);
    const ts_node *origins[16];
    g_assert_cmpint(k, <=, 16);
    for (int j = 0; j < k; j++)
      origins[j] = ts_node_origin(n, j);
    ts_pass_change change = ts_pass_change_of(n, origins, k);
    counts[change]++;
    if (change == TS_PASS_FUSED) {
      g_assert_cmpint(k, ==, 3);
      g_assert_cmpint(ts_node_op(origins[0]), ==, TS_OP_MATMUL);
      g_assert_cmpint(ts_node_op(origins[2]), ==, TS_OP_RELU);
    }
    if (ts_op_traits(ts_node_op(n)) & TS_OP_TRAIT_INPUT)
      g_assert_cmpint(change, ==, TS_PASS_KEPT);
  }
  g_assert_cmpint(counts[TS_PASS_FUSED], >=, 1);
  g_assert_cmpint(counts[TS_PASS_FOLDED], ==, 1);
  g_assert_cmpstr(ts_pass_change_name(TS_PASS_FOLDED), ==, "folded");
  /* a node of its own op standing for several is a merge; one of another op a rewrite */
  const ts_node *placeholder = ts_graph_node(traced, ts_graph_input(traced, 0));
  const ts_node *twice[] = { placeholder, placeholder };
  g_assert_cmpint(ts_pass_change_of(placeholder, twice, 2), ==, TS_PASS_MERGED);
  const ts_node *relu = NULL;
  for (int i = 0; i < ts_graph_n_nodes(traced); i++)
    if (ts_node_op(ts_graph_node(traced, i)) == TS_OP_RELU)
      relu = ts_graph_node(traced, i);
  g_assert_cmpint(ts_pass_change_of(placeholder, &relu, 1), ==, TS_PASS_REWRITTEN);

  int some[TS_PASS_N_CHANGES] = { [TS_PASS_FUSED] = 1, [TS_PASS_REMOVED] = 3 };
  g_autofree char *text = ts_pass_changes_summary(10, 5, some);
  g_assert_cmpstr(text, ==, "10 traced nodes, 5 after the passes: 1 fused, 3 removed");
  int none[TS_PASS_N_CHANGES] = { 0 };
  g_autofree char *unchanged = ts_pass_changes_summary(1, 1, none);
  g_assert_cmpstr(unchanged, ==, "1 traced node, 1 after the passes");
  free(summary);
  ts_graph_free(optimized);
  for (int i = 0; i < 3; i++)
    ts_value_clear(&args[i]);
  ts_function_free(f);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/graph-diff/shapes-and-nodes", test_shapes_and_nodes);
  g_test_add_func("/graph-diff/pass-changes", test_pass_changes);
  return g_test_run();
}
