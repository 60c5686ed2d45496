/* test-graph-model.c — the viewer's display model on traced graphs: name
 * scopes as groups, series folding, extracted constants, If subgraphs,
 * bundled edges, search and reveal. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <tracescope.h>

#include "ts-graph-model.h"

/* ---- the programs ------------------------------------------------------------------ */

static int tanh_line;

/* Two levels of scopes: encoder/{layer_a,layer_b}, then head, then Exp. */
static ts_tensor *nested(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_NAME_SCOPE("encoder")
  {
    TS_NAME_SCOPE("layer_a") { x = ts_relu(ts_add(x, x)); }
    TS_NAME_SCOPE("layer_b") { x = ts_tanh(ts_mul(x, x)); tanh_line = __LINE__; }
  }
  TS_NAME_SCOPE("head") { x = ts_neg(x); }
  return ts_exp(x);
}

/* Arg 1 Dense layers in scopes dense_1 ... dense_N (weights made per layer). */
static ts_tensor *dense_stack(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  int64_t n = ts_arg_int(c, 1);
  for (int64_t i = 1; i <= n; i++) {
    char name[32];
    g_snprintf(name, sizeof name, "dense_%d", (int)i);
    TS_NAME_SCOPE(name)
    {
      ts_tensor *w = ts_ones(TS_F32, TS_SHAPE(8, 8));
      ts_tensor *b = ts_constant(TS_F32, TS_SHAPE(8), (float[8]){ 0 });
      x = ts_relu(ts_add(ts_matmul(x, w), b));
    }
  }
  return x;
}

/* x + x six times: Add, Add_1 ... Add_5 at the top. */
static ts_tensor *adds(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  for (int i = 0; i < 6; i++)
    x = ts_add(x, x);
  return ts_neg(x);
}

/* matmul(x, W) + b with constant W and b. */
static ts_tensor *affine(ts_call *c)
{
  ts_tensor *w = ts_constant(TS_F32, TS_SHAPE(8, 2), (float[16]){ 1 });
  ts_tensor *b = ts_constant(TS_F32, TS_SHAPE(2), (float[2]){ 1, 2 });
  return ts_add(ts_matmul(ts_arg(c, 0), w), b);
}

/* The guide's square_if_positive on the sum of x. */
static ts_tensor *square_if_positive(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0)), &x) {
    x = ts_mul(x, x);
  } TS_ELSE {
    x = ts_zeros_like(x);
  } TS_END_IF;
  return x;
}

/* One input feeding twelve consumers: extracted by degree. */
static ts_tensor *fan_out(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *acc = ts_neg(ts_arg(c, 1));
  for (int i = 0; i < 12; i++)
    acc = ts_sub(ts_mul(acc, x), x);
  return acc;
}

static ts_tensor *counter_var;

/* A variable: assignments and reads ordered by control dependencies. */
static ts_tensor *counter(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_assign_add(counter_var, x);
  ts_print("value", ts_read(counter_var));
  ts_assign_sub(counter_var, ts_scalar_f32(1));
  return ts_mul(ts_read(counter_var), x);
}

/* ---- helpers --------------------------------------------------------------------------- */

typedef struct traced {
  ts_function *fn;
  const ts_graph *graph;
  ts_view_model *model;
} traced;

static traced trace(const char *name, ts_fn fn, const char *params, const ts_value *args, int n)
{
  traced t = { .fn = ts_function_new(name, fn, params) };
  ts_concrete *cf = ts_function_get_concrete(t.fn, args, n);
  if (!cf)
    g_error("tracing %s failed: %s", name, ts_error_peek() ? ts_error_peek()->message : "?");
  t.graph = ts_concrete_graph(cf);
  t.model = ts_view_model_new(t.graph, NULL);
  return t;
}

static traced trace_x(const char *name, ts_fn fn)
{
  ts_value x = TS_SPEC_VALUE(TS_F32, TS_SHAPE(4, 8));
  return trace(name, fn, "x", &x, 1);
}

static void untrace(traced *t)
{
  ts_view_model_unref(t->model);
  ts_function_free(t->fn);
}

/* The item of the given hierarchy name; fails the test if there is none. */
static int item_named(const ts_view_model *m, const char *name)
{
  for (int i = 0; i < ts_view_model_n_items(m); i++)
    if (strcmp(ts_view_item_name(m, i), name) == 0)
      return i;
  g_error("no item named '%s'", name);
}

/* Visible item names joined by spaces. */
static char *visible_names(const ts_view_model *m)
{
  GArray *v = ts_view_model_visible_items(m, NULL);
  GString *s = g_string_new(NULL);
  for (guint k = 0; k < v->len; k++)
    g_string_append_printf(s, "%s%s", k ? " " : "", ts_view_item_name(m, g_array_index(v, int, k)));
  g_array_free(v, TRUE);
  return g_string_free(s, FALSE);
}

static void assert_visible(const ts_view_model *m, const char *want)
{
  char *got = visible_names(m);
  g_assert_cmpstr(got, ==, want);
  g_free(got);
}

/* Visible edges as "src->dst[label]" joined by spaces. */
static char *edge_list(const ts_view_model *m)
{
  GArray *edges = ts_view_model_visible_edges(m, NULL);
  GString *s = g_string_new(NULL);
  for (guint k = 0; k < edges->len; k++) {
    const ts_view_edge *e = &g_array_index(edges, ts_view_edge, k);
    char *label = ts_view_edge_label(e);
    g_string_append_printf(s, "%s%s->%s[%s]", k ? " " : "", ts_view_item_name(m, e->src),
                           ts_view_item_name(m, e->dst), label);
    g_free(label);
  }
  g_array_free(edges, TRUE);
  return g_string_free(s, FALSE);
}

static void assert_edges(const ts_view_model *m, const char *want)
{
  char *got = edge_list(m);
  g_assert_cmpstr(got, ==, want);
  g_free(got);
}

/* ---- tests --------------------------------------------------------------------------------- */

static void test_hierarchy(void)
{
  ts_scope *s = ts_scope_begin();
  traced t = trace_x("nested", nested);
  ts_view_model *m = t.model;
  g_assert_cmpint(ts_view_model_n_items(m), ==, 12); /* root, 7 ops, 4 groups */
  g_assert_cmpint(ts_view_model_n_ops(m), ==, 7);
  int enc = item_named(m, "encoder"), la = item_named(m, "encoder/layer_a");
  g_assert_cmpint(ts_view_item_kind_of(m, enc), ==, TS_VIEW_ITEM_GROUP);
  g_assert_cmpint(ts_view_item_n_ops(m, enc), ==, 4);
  g_assert_cmpint(ts_view_item_n_ops(m, TS_VIEW_ROOT), ==, 7);
  g_assert_cmpint(ts_view_item_n_children(m, enc), ==, 2);
  g_assert_cmpint(ts_view_item_parent(m, la), ==, enc);
  g_assert_cmpint(ts_view_item_depth(m, la), ==, 2);
  g_assert_cmpstr(ts_view_item_label(m, la), ==, "layer_a");
  int tanh_item = item_named(m, "encoder/layer_b/Tanh");
  g_assert_cmpstr(ts_view_item_op_name(m, tanh_item), ==, "Tanh");
  g_assert_true(ts_view_item_node(m, tanh_item) == ts_graph_node(t.graph, 4));
  g_assert_cmpint(ts_view_model_item_for_node(m, t.graph, 4), ==, tanh_item);
  /* both groups have two ops of other types: one template for neither */
  g_assert_cmpint(ts_view_item_template(m, la), !=, ts_view_item_template(m, item_named(m, "encoder/layer_b")));

  /* collapsed at first: the top level only */
  assert_visible(m, "x encoder head Exp");
  assert_edges(m, "x->encoder[f32[4,8]] encoder->head[f32[4,8]] head->Exp[f32[4,8]]");
  g_assert_false(ts_view_model_is_visible(m, NULL, la));
  g_assert_cmpint(ts_view_model_representative(m, NULL, tanh_item), ==, enc);

  g_assert_true(ts_view_model_set_expanded(m, enc, true));
  g_assert_false(ts_view_model_set_expanded(m, enc, true));
  assert_visible(m, "x encoder encoder/layer_a encoder/layer_b head Exp");
  assert_edges(m, "x->encoder/layer_a[f32[4,8]] encoder/layer_a->encoder/layer_b[f32[4,8]] "
                  "encoder/layer_b->head[f32[4,8]] head->Exp[f32[4,8]]");
  GArray *edges = ts_view_model_visible_edges(m, NULL);
  const ts_view_edge *e0 = &g_array_index(edges, ts_view_edge, 0);
  g_assert_cmpint(e0->group, ==, TS_VIEW_ROOT);
  g_assert_cmpint(e0->dst_child, ==, enc);
  g_assert_cmpint(e0->bytes, ==, 4 * 8 * 4);
  g_array_free(edges, TRUE);

  ts_view_model_expand_all(m);
  assert_visible(m, "x encoder encoder/layer_a encoder/layer_a/Add encoder/layer_a/Relu encoder/layer_b "
                    "encoder/layer_b/Mul encoder/layer_b/Tanh head head/Neg Exp");
  /* Mul reads Relu twice: one tensor */
  assert_edges(m, "x->encoder/layer_a/Add[f32[4,8]] encoder/layer_a/Add->encoder/layer_a/Relu[f32[4,8]] "
                  "encoder/layer_a/Relu->encoder/layer_b/Mul[f32[4,8]] "
                  "encoder/layer_b/Mul->encoder/layer_b/Tanh[f32[4,8]] "
                  "encoder/layer_b/Tanh->head/Neg[f32[4,8]] head/Neg->Exp[f32[4,8]]");

  /* a snapshot restores the state it was taken in */
  ts_view_state *all = ts_view_state_copy(ts_view_model_state(m));
  ts_view_model_collapse_all(m);
  assert_visible(m, "x encoder head Exp");
  g_assert_false(ts_view_state_equal(all, ts_view_model_state(m)));
  g_assert_true(ts_view_model_set_state(m, all));
  g_assert_true(ts_view_state_equal(all, ts_view_model_state(m)));
  g_assert_cmpint(ts_view_model_representative(m, NULL, tanh_item), ==, tanh_item);
  ts_view_state_free(all);

  /* ops and the root do not toggle */
  g_assert_false(ts_view_model_toggle(m, tanh_item));
  g_assert_false(ts_view_model_set_expanded(m, TS_VIEW_ROOT, false));
  g_assert_true(ts_view_model_is_expanded(m, TS_VIEW_ROOT));
  untrace(&t);
  ts_scope_end(s);
}

static void test_series(void)
{
  ts_scope *s = ts_scope_begin();
  ts_value args[2] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(4, 8)), TS_INT_VALUE(100) };
  traced t = trace("dense_stack", dense_stack, "x, n", args, 2);
  ts_view_model *m = t.model;
  assert_visible(m, "x dense_[1-100]");
  int series = item_named(m, "dense_[1-100]");
  g_assert_cmpint(ts_view_item_kind_of(m, series), ==, TS_VIEW_ITEM_SERIES);
  g_assert_cmpint(ts_view_item_n_children(m, series), ==, 100);
  g_assert_cmpint(ts_view_item_n_ops(m, series), ==, 500);
  int first, last;
  ts_view_item_series_range(m, series, &first, &last);
  g_assert_cmpint(first, ==, 1);
  g_assert_cmpint(last, ==, 100);
  g_assert_true(ts_view_item_is_expandable(m, series));
  int d7 = item_named(m, "dense_7");
  g_assert_cmpint(ts_view_item_parent(m, d7), ==, series);
  g_assert_cmpint(ts_view_item_child(m, series, 6), ==, d7);
  g_assert_cmpint(ts_view_item_template(m, d7), ==, ts_view_item_template(m, item_named(m, "dense_99")));
  assert_edges(m, "x->dense_[1-100][f32[4,8]]");

  ts_view_model_set_expanded(m, series, true);
  GArray *v = ts_view_model_visible_items(m, NULL);
  g_assert_cmpint(v->len, ==, 102);
  g_array_free(v, TRUE);
  GArray *edges = ts_view_model_visible_edges(m, NULL);
  g_assert_cmpint(edges->len, ==, 100); /* x -> dense_1 -> ... -> dense_100 */
  g_array_free(edges, TRUE);
  untrace(&t);

  /* four layers are not enough for a series */
  args[1] = TS_INT_VALUE(4);
  t = trace("dense_stack", dense_stack, "x, n", args, 2);
  assert_visible(t.model, "x dense_1 dense_2 dense_3 dense_4");
  untrace(&t);

  /* numbered ops fold too, the unnumbered one as number 0 */
  t = trace_x("adds", adds);
  assert_visible(t.model, "x Add_[0-5] Neg");
  int adds_item = item_named(t.model, "Add_[0-5]");
  g_assert_cmpint(ts_view_item_n_children(t.model, adds_item), ==, 6);
  g_assert_cmpint(ts_view_item_n_ops(t.model, adds_item), ==, 6);
  untrace(&t);

  /* series_min 0 turns folding off */
  args[1] = TS_INT_VALUE(6);
  ts_function *fn = ts_function_new("dense_stack", dense_stack, "x, n");
  const ts_graph *g = ts_concrete_graph(ts_function_get_concrete(fn, args, 2));
  ts_view_model_options opts = TS_VIEW_MODEL_OPTIONS_DEFAULT;
  opts.series_min = 0;
  ts_view_model *flat = ts_view_model_new(g, &opts);
  assert_visible(flat, "x dense_1 dense_2 dense_3 dense_4 dense_5 dense_6");
  ts_view_model_unref(flat);
  ts_function_free(fn);
  ts_scope_end(s);
}

static void test_parts(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *fn = ts_function_new("adds", adds, "x");
  ts_value x = TS_SPEC_VALUE(TS_F32, TS_SHAPE(4, 8));
  const ts_graph *g = ts_concrete_graph(ts_function_get_concrete(fn, &x, 1));
  ts_view_model_options opts = { .series_min = 0, .extract_out_degree = 8, .max_children = 3 };
  /* 8 ops at the top: parts of 3, 3 and 2, in order */
  ts_view_model *m = ts_view_model_new(g, &opts);
  assert_visible(m, "x\u2026Add_1 Add_2\u2026Add_4 Add_5\u2026Neg");
  assert_edges(m, "x\u2026Add_1->Add_2\u2026Add_4[f32[4,8]] Add_2\u2026Add_4->Add_5\u2026Neg[f32[4,8]]");
  int part = item_named(m, "Add_2\u2026Add_4");
  g_assert_cmpint(ts_view_item_kind_of(m, part), ==, TS_VIEW_ITEM_PART);
  g_assert_cmpint(ts_view_item_n_ops(m, part), ==, 3);
  g_assert_cmpint(ts_view_item_template(m, part), ==, -1);
  /* members keep their names */
  g_assert_cmpint(ts_view_item_parent(m, item_named(m, "Add_3")), ==, part);
  GArray *path = ts_view_model_reveal_path(m, ts_view_model_item_for_node(m, g, 3)); /* Add_2 */
  g_assert_cmpint(path->len, ==, 1);
  g_assert_cmpint(g_array_index(path, int, 0), ==, part);
  g_array_free(path, TRUE);
  ts_view_model_unref(m);

  /* parts of 2: four parts, too many again, so two parts of two parts */
  opts.max_children = 2;
  m = ts_view_model_new(g, &opts);
  assert_visible(m, "x\u2026Add_2 Add_3\u2026Neg");
  int outer = item_named(m, "Add_3\u2026Neg");
  g_assert_cmpint(ts_view_item_n_children(m, outer), ==, 2);
  g_assert_cmpstr(ts_view_item_label(m, ts_view_item_child(m, outer, 1)), ==, "Add_5\u2026Neg");
  g_assert_cmpint(ts_view_item_n_ops(m, outer), ==, 4);
  ts_view_model_unref(m);
  ts_function_free(fn);
  ts_scope_end(s);
}

static void test_extracted(void)
{
  ts_scope *s = ts_scope_begin();
  traced t = trace_x("affine", affine);
  ts_view_model *m = t.model;
  int w = item_named(m, "Const"), b = item_named(m, "Const_1");
  int mm = item_named(m, "MatMul"), add = item_named(m, "Add");
  g_assert_true(ts_view_item_is_extracted(m, w));
  g_assert_true(ts_view_item_is_dot_only(m, w));
  g_assert_false(ts_view_item_is_extracted(m, mm));
  /* constants take no place: they hang beside their consumers */
  assert_visible(m, "x MatMul Add");
  assert_edges(m, "x->MatMul[f32[4,8]] MatMul->Add[f32[4,2]]");
  g_assert_cmpint(ts_view_item_n_dots(m, mm), ==, 1);
  g_assert_cmpint(ts_view_item_dot(m, mm, 0), ==, w);
  g_assert_cmpint(ts_view_item_n_dots(m, add), ==, 1);
  g_assert_cmpint(ts_view_item_dot(m, add, 0), ==, b);
  g_assert_cmpint(ts_view_item_n_dots(m, item_named(m, "x")), ==, 0);
  /* a dot-only node reveals through its consumer, shown already */
  GArray *path = ts_view_model_reveal_path(m, b);
  g_assert_cmpint(path->len, ==, 0);
  g_array_free(path, TRUE);
  untrace(&t);

  /* constants inside a collapsed layer hang beside their op when opened;
   * the collapsed layer shows no dot (its constants are inside it) */
  ts_value args[2] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(4, 8)), TS_INT_VALUE(3) };
  t = trace("dense_stack", dense_stack, "x, n", args, 2);
  m = t.model;
  int d2 = item_named(m, "dense_2");
  g_assert_cmpint(ts_view_item_n_dots(m, d2), ==, 0);
  g_assert_cmpint(ts_view_item_n_dots(m, item_named(m, "dense_2/Add")), ==, 1);
  path = ts_view_model_reveal_path(m, item_named(m, "dense_2/Const"));
  g_assert_cmpint(path->len, ==, 1);
  g_assert_cmpint(g_array_index(path, int, 0), ==, d2);
  g_array_free(path, TRUE);
  ts_view_model_set_expanded(m, d2, true);
  assert_visible(m, "x dense_1 dense_2 dense_2/Ones dense_2/MatMul dense_2/Add dense_2/Relu dense_3");
  untrace(&t);

  /* a node feeding more than eight consumers is drawn as dots too */
  ts_value xy[2] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(3)), TS_SPEC_VALUE(TS_F32, TS_SHAPE(3)) };
  t = trace("fan_out", fan_out, "x, y", xy, 2);
  m = t.model;
  int x = ts_view_model_item_for_node(m, t.graph, ts_graph_input(t.graph, 0));
  g_assert_true(ts_view_item_is_extracted(m, x));
  g_assert_true(ts_view_item_is_dot_only(m, x));
  g_assert_cmpint(ts_view_item_n_dots(m, item_named(m, "Sub_11")), ==, 1);
  g_assert_cmpint(ts_view_item_n_dots(m, item_named(m, "Mul_11")), ==, 1);
  untrace(&t);
  ts_scope_end(s);
}

static void test_variables(void)
{
  ts_scope *s = ts_scope_begin();
  counter_var = ts_variable_new(ts_scalar_f32(0), "v");
  ts_value x = TS_SPEC_VALUE(TS_F32, TS_SCALAR_SHAPE);
  traced t = trace("counter", counter, "x", &x, 1);
  ts_view_model *m = t.model;
  /* the handle, the reads and the constant are dots */
  assert_visible(m, "x AssignAddVariableOp PrintV2 AssignSubVariableOp Mul");
  g_assert_true(ts_view_item_is_dot_only(m, item_named(m, "VarHandleOp")));
  g_assert_true(ts_view_item_is_dot_only(m, item_named(m, "ReadVariableOp")));
  /* control dependencies stay, dashed; the ones into a read reach its
   * consumer (the assignment runs before the print of the value read) */
  assert_edges(m, "x->AssignAddVariableOp[f32[]] x->Mul[f32[]] AssignAddVariableOp->PrintV2[control] "
                  "PrintV2->AssignSubVariableOp[control] AssignSubVariableOp->Mul[control]");
  GArray *edges = ts_view_model_visible_edges(m, NULL);
  g_assert_true(g_array_index(edges, ts_view_edge, 2).control);
  g_assert_false(g_array_index(edges, ts_view_edge, 1).control);
  g_array_free(edges, TRUE);
  int assign_sub = item_named(m, "AssignSubVariableOp");
  g_assert_cmpint(ts_view_item_n_dots(m, assign_sub), ==, 2);
  g_assert_cmpint(ts_view_item_dot(m, assign_sub, 0), ==, item_named(m, "VarHandleOp"));
  g_assert_cmpint(ts_view_item_dot(m, assign_sub, 1), ==, item_named(m, "Const"));
  g_assert_cmpint(ts_view_item_n_dots(m, item_named(m, "PrintV2")), ==, 1);
  g_assert_cmpint(ts_view_item_dot(m, item_named(m, "Mul"), 0), ==, item_named(m, "ReadVariableOp_1"));
  untrace(&t);
  ts_tensor_unref(counter_var);
  ts_scope_end(s);
}

static void test_if_subgraphs(void)
{
  ts_scope *s = ts_scope_begin();
  traced t = trace_x("square_if_positive", square_if_positive);
  ts_view_model *m = t.model;
  int if_item = item_named(m, "If");
  g_assert_cmpint(ts_view_item_kind_of(m, if_item), ==, TS_VIEW_ITEM_OP);
  g_assert_true(ts_view_item_is_expandable(m, if_item));
  g_assert_cmpint(ts_view_item_n_children(m, if_item), ==, 2);
  int then_item = ts_view_item_child(m, if_item, 0), else_item = ts_view_item_child(m, if_item, 1);
  g_assert_cmpint(ts_view_item_kind_of(m, then_item), ==, TS_VIEW_ITEM_SUBGRAPH);
  g_assert_cmpstr(ts_view_item_name(m, then_item), ==, "If/then");
  g_assert_cmpstr(ts_view_item_name(m, else_item), ==, "If/else");
  g_assert_cmpint(ts_view_item_n_ops(m, if_item), ==, 5); /* If, two Placeholders, Mul, ZerosLike */
  assert_visible(m, "x Sum Greater If");
  g_assert_cmpint(ts_view_item_n_dots(m, item_named(m, "Greater")), ==, 1); /* the 0 */

  /* opening the If shows both branches open */
  g_assert_true(ts_view_model_toggle(m, if_item));
  assert_visible(m, "x Sum Greater If If/then If/then/x If/then/Mul If/else If/else/x "
                    "If/else/ZerosLike");
  assert_edges(m, "x->Sum[f32[4,8]] x->If[f32[4,8]] Sum->Greater[f32[]] Greater->If[bool[]] "
                  "If/then/x->If/then/Mul[f32[4,8]] If/else/x->If/else/ZerosLike[f32[4,8]]");
  const ts_graph *then_graph = ts_node_subgraph(ts_view_item_node(m, if_item), 0);
  g_assert_cmpint(ts_view_model_item_for_node(m, then_graph, 1), ==, item_named(m, "If/then/Mul"));

  /* a branch folds on its own */
  ts_view_model_set_expanded(m, else_item, false);
  assert_visible(m, "x Sum Greater If If/then If/then/x If/then/Mul If/else");
  untrace(&t);
  ts_scope_end(s);
}

static void test_find_and_reveal(void)
{
  ts_scope *s = ts_scope_begin();
  traced t = trace_x("nested", nested);
  ts_view_model *m = t.model;
  int tanh_item = item_named(m, "encoder/layer_b/Tanh");
  GError *error = NULL;

  GArray *hits = ts_view_model_find(m, TS_VIEW_FIND_NAME, "LAYER_B/t", &error);
  g_assert_no_error(error);
  g_assert_cmpint(hits->len, ==, 1);
  g_assert_cmpint(g_array_index(hits, int, 0), ==, tanh_item);
  g_array_free(hits, TRUE);
  hits = ts_view_model_find(m, TS_VIEW_FIND_NAME, "^encoder/.*/(Add|Mul)$", &error);
  g_assert_cmpint(hits->len, ==, 2);
  g_array_free(hits, TRUE);

  hits = ts_view_model_find(m, TS_VIEW_FIND_OP, "tanh", &error);
  g_assert_cmpint(hits->len, ==, 1);
  g_assert_cmpint(g_array_index(hits, int, 0), ==, tanh_item);
  g_array_free(hits, TRUE);

  char *where = g_strdup_printf("tests/test-graph-model.c:%d", tanh_line);
  hits = ts_view_model_find(m, TS_VIEW_FIND_LOCATION, where, &error);
  g_assert_no_error(error);
  g_assert_cmpint(hits->len, ==, 2); /* Mul and Tanh share the line */
  g_assert_cmpint(g_array_index(hits, int, 1), ==, tanh_item);
  g_array_free(hits, TRUE);
  g_free(where);
  where = g_strdup_printf("graph-model.c:%d", tanh_line); /* not a whole path component */
  hits = ts_view_model_find(m, TS_VIEW_FIND_LOCATION, where, &error);
  g_assert_cmpint(hits->len, ==, 0);
  g_array_free(hits, TRUE);
  g_free(where);

  g_assert_null(ts_view_model_find(m, TS_VIEW_FIND_NAME, "dense(", &error));
  g_assert_error(error, TS_VIEW_ERROR, TS_VIEW_ERROR_INVALID_QUERY);
  g_assert_nonnull(strstr(error->message, "invalid regular expression 'dense('"));
  g_clear_error(&error);
  g_assert_null(ts_view_model_find(m, TS_VIEW_FIND_OP, "Tanhh", &error));
  g_assert_error(error, TS_VIEW_ERROR, TS_VIEW_ERROR_INVALID_QUERY);
  g_assert_cmpstr(error->message, ==, "unknown op type 'Tanhh'");
  g_clear_error(&error);
  g_assert_null(ts_view_model_find(m, TS_VIEW_FIND_LOCATION, "model.c", &error));
  g_assert_error(error, TS_VIEW_ERROR, TS_VIEW_ERROR_INVALID_QUERY);
  g_clear_error(&error);

  GArray *path = ts_view_model_reveal_path(m, tanh_item);
  g_assert_cmpint(path->len, ==, 2);
  g_assert_cmpint(g_array_index(path, int, 0), ==, item_named(m, "encoder"));
  g_assert_cmpint(g_array_index(path, int, 1), ==, item_named(m, "encoder/layer_b"));
  g_array_free(path, TRUE);
  g_assert_cmpint(ts_view_model_reveal(m, tanh_item), ==, 2);
  g_assert_true(ts_view_model_is_visible(m, NULL, tanh_item));
  assert_visible(m, "x encoder encoder/layer_a encoder/layer_b encoder/layer_b/Mul encoder/layer_b/Tanh "
                    "head Exp");
  g_assert_cmpint(ts_view_model_reveal(m, tanh_item), ==, 0);
  untrace(&t);
  ts_scope_end(s);
}

/* Edge sizes: a zero dim makes a tensor empty whatever the others are, an
 * unknown dim counts as 1, and a size past int64 saturates. */
static void test_edge_bytes(void)
{
  static const struct {
    ts_shape shape;
    int64_t bytes;
  } cases[] = {
    { TS_SHAPE(3, 0), 0 },
    { TS_SHAPE(0, INT64_C(1) << 62), 0 },
    { TS_SHAPE(-1, 8), 8 * 4 },
    { TS_SHAPE(-1, INT64_C(1) << 62), INT64_MAX },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    ts_scope *s = ts_scope_begin();
    ts_value x = TS_SPEC_VALUE(TS_F32, cases[i].shape);
    traced t = trace("adds", adds, "x", &x, 1);
    ts_view_model_expand_all(t.model);
    GArray *edges = ts_view_model_visible_edges(t.model, NULL);
    g_assert_cmpuint(edges->len, >, 0);
    for (guint k = 0; k < edges->len; k++) {
      const ts_view_edge *e = &g_array_index(edges, ts_view_edge, k);
      /* x + x reads one tensor twice: bundled edges count it once each */
      g_assert_cmpint(e->bytes, ==, cases[i].bytes);
    }
    g_array_free(edges, TRUE);
    untrace(&t);
    ts_scope_end(s);
  }
}

static void test_edge_width(void)
{
  ts_scope *s = ts_scope_begin();
  traced t = trace_x("affine", affine);
  /* the largest tensor here is f32[4,8] (128 bytes): the scale tops at 1 MiB */
  g_assert_cmpfloat(ts_view_model_edge_width(t.model, 0), ==, 0.75);
  g_assert_cmpfloat(ts_view_model_edge_width(t.model, 1), ==, 0.75);
  g_assert_cmpfloat_with_epsilon(ts_view_model_edge_width(t.model, 1 << 20), 12.0, 1e-9);
  double w128 = 0.75 + 11.25 * (pow(128, 0.3) - 1) / (pow(1 << 20, 0.3) - 1);
  g_assert_cmpfloat_with_epsilon(ts_view_model_edge_width(t.model, 128), w128, 1e-9);
  untrace(&t);
  /* a graph with bigger tensors tops at its largest: f32[512,1024] is 2 MiB */
  ts_value big = TS_SPEC_VALUE(TS_F32, TS_SHAPE(512, 1024));
  t = trace("nested", nested, "x", &big, 1);
  g_assert_cmpfloat_with_epsilon(ts_view_model_edge_width(t.model, 2 << 20), 12.0, 1e-9);
  double w1m = 0.75 + 11.25 * (pow(1 << 20, 0.3) - 1) / (pow(2 << 20, 0.3) - 1);
  g_assert_cmpfloat_with_epsilon(ts_view_model_edge_width(t.model, 1 << 20), w1m, 1e-9);
  ts_view_edge control = { .count = 3, .control = true };
  char *label = ts_view_edge_label(&control);
  g_assert_cmpstr(label, ==, "3 control deps");
  g_free(label);
  untrace(&t);
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/graph-model/hierarchy", test_hierarchy);
  g_test_add_func("/graph-model/series", test_series);
  g_test_add_func("/graph-model/parts", test_parts);
  g_test_add_func("/graph-model/extracted", test_extracted);
  g_test_add_func("/graph-model/variables", test_variables);
  g_test_add_func("/graph-model/if-subgraphs", test_if_subgraphs);
  g_test_add_func("/graph-model/find-and-reveal", test_find_and_reveal);
  g_test_add_func("/graph-model/edge-width", test_edge_width);
  g_test_add_func("/graph-model/edge-bytes", test_edge_bytes);
  int rc = g_test_run();
  ts_release_all();
  return rc;
}
