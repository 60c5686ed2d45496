/* test-graph-layout.c — the viewer's Graphviz layout: boxes that never
 * overlap, sizes from labels, dots beside consumers, edge paths between the
 * right boxes, bottom-up re-layout with the cache, and asynchronous
 * requests delivered on the main context. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <tracescope.h>

#include "ts-graph-layout.h"

/* ---- the programs ------------------------------------------------------------------ */

static ts_tensor *nested(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_NAME_SCOPE("encoder")
  {
    TS_NAME_SCOPE("layer_a") { x = ts_relu(ts_add(x, x)); }
    TS_NAME_SCOPE("layer_b") { x = ts_tanh(ts_mul(x, ts_sigmoid(x))); }
  }
  TS_NAME_SCOPE("head") { x = ts_neg(ts_sub(x, ts_abs(x))); }
  return ts_exp(x);
}

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

/* Constants beside MatMul and Add, and a second output path. */
static ts_tensor *affine(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *w = ts_constant(TS_F32, TS_SHAPE(8, 2), (float[16]){ 1 });
  ts_tensor *b = ts_constant(TS_F32, TS_SHAPE(2), (float[2]){ 1, 2 });
  ts_tensor *y = ts_add(ts_matmul(x, w), b);
  return ts_add(ts_reduce_sum(x, TS_ALL_AXES, false), ts_reduce_sum(y, TS_ALL_AXES, false));
}

/* tanh(x + x) six times: the series Add_[0-5] and Tanh_[0-5] feed each other. */
static ts_tensor *cycle(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  for (int i = 0; i < 6; i++)
    x = ts_tanh(ts_add(x, x));
  return x;
}

/* acc = x; while (sum(acc) < 100) acc = acc * 2 + 1 */
static ts_tensor *doubling(ts_call *c)
{
  ts_tensor *acc = ts_arg(c, 0);
  TS_WHILE (ts_less(ts_reduce_sum(acc, TS_ALL_AXES, false), ts_scalar_f32(100)), &acc) {
    acc = ts_add(ts_mul(acc, ts_scalar_f32(2)), ts_scalar_f32(1));
  }
  return acc;
}

/* No op at all: the input is the output. */
static ts_tensor *passthrough(ts_call *c)
{
  return ts_arg(c, 0);
}

static ts_tensor *counter_var;

static ts_tensor *counter(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_assign_add(counter_var, x);
  ts_print("value", ts_read(counter_var));
  static const float ones[32] = { 1 };
  ts_assign_sub(counter_var, ts_constant(TS_F32, TS_SHAPE(4, 8), ones));
  return ts_mul(ts_read(counter_var), x);
}

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

/* Prints before it returns x: a Print node in the graph. */
static ts_tensor *printing(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_print("the input is", x, "and a rather long tail after it");
  return x;
}

/* ---- helpers ---------------------------------------------------------------------------- */

typedef struct traced {
  ts_function *fn;
  ts_view_model *model;
} traced;

static traced trace(const char *name, ts_fn fn, int64_t n)
{
  traced t = { .fn = ts_function_new(name, fn, "x, n") };
  ts_value args[2] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(4, 8)), TS_INT_VALUE(n) };
  ts_concrete *cf = ts_function_get_concrete(t.fn, args, n ? 2 : 1);
  if (!cf)
    g_error("tracing %s failed: %s", name, ts_error_peek() ? ts_error_peek()->message : "?");
  t.model = ts_view_model_new(ts_concrete_graph(cf), NULL);
  return t;
}

static void untrace(traced *t)
{
  ts_view_model_unref(t->model);
  ts_function_free(t->fn);
}

static int item_named(const ts_view_model *m, const char *name)
{
  for (int i = 0; i < ts_view_model_n_items(m); i++)
    if (strcmp(ts_view_item_name(m, i), name) == 0)
      return i;
  g_error("no item named '%s'", name);
}

static ts_view_layout *run(ts_view_layouter *l)
{
  GError *error = NULL;
  ts_view_layout *layout = ts_view_layouter_run(l, NULL, &error);
  g_assert_no_error(error);
  g_assert_nonnull(layout);
  return layout;
}

static const ts_view_box *box_of(const ts_view_layout *layout, const ts_view_model *m, const char *name)
{
  int b = ts_view_layout_box_for_item(layout, item_named(m, name));
  g_assert_cmpint(b, >=, 0);
  return ts_view_layout_box(layout, b);
}

static bool is_inside(const ts_view_box *in, const ts_view_box *out)
{
  const double eps = 1e-6;
  return in->x >= out->x - eps && in->y >= out->y - eps && in->x + in->width <= out->x + out->width + eps &&
         in->y + in->height <= out->y + out->height + eps;
}

/* True if box a is a container holding box b (directly or further in). */
static bool holds(const ts_view_layout *layout, int a, int b)
{
  for (int p = ts_view_layout_box(layout, b)->parent; p >= 0; p = ts_view_layout_box(layout, p)->parent)
    if (p == a)
      return true;
  return false;
}

static double distance_to_box(const ts_view_box *b, ts_view_point p)
{
  double dx = MAX(MAX(b->x - p.x, 0), p.x - (b->x + b->width));
  double dy = MAX(MAX(b->y - p.y, 0), p.y - (b->y + b->height));
  return sqrt(dx * dx + dy * dy);
}

/* Everything a drawing relies on: each visible item has a box inside the
 * canvas and inside its container, no two boxes overlap unless one holds
 * the other, dots sit beside their owner, and every visible edge has a
 * path of cubic segments from its source's box to its destination's. */
static void check_layout(const ts_view_layout *layout, const ts_view_model *m)
{
  int n = ts_view_layout_n_boxes(layout);
  double w = ts_view_layout_width(layout), h = ts_view_layout_height(layout);
  const ts_view_box canvas = { .x = 0, .y = 0, .width = w, .height = h };
  GArray *visible = ts_view_model_visible_items(m, ts_view_layout_state(layout));
  for (guint k = 0; k < visible->len; k++) {
    int item = g_array_index(visible, int, k);
    int b = ts_view_layout_box_for_item(layout, item);
    g_assert_cmpint(b, >=, 0);
    g_assert_cmpint(ts_view_layout_box(layout, b)->item, ==, item);
  }
  int n_dots = 0;
  for (int i = 0; i < n; i++) {
    const ts_view_box *a = ts_view_layout_box(layout, i);
    g_assert_true(is_inside(a, &canvas));
    g_assert_cmpfloat(a->width, >, 0);
    g_assert_cmpfloat(a->height, >, 0);
    g_assert_nonnull(a->line1);
    if (a->parent >= 0) {
      g_assert_cmpint(a->parent, <, i);
      const ts_view_box *p = ts_view_layout_box(layout, a->parent);
      g_assert_cmpint(p->shape, ==, TS_VIEW_SHAPE_CONTAINER);
      g_assert_true(is_inside(a, p));
    }
    if (a->shape == TS_VIEW_SHAPE_DOT) {
      n_dots++;
      const ts_view_box *owner = ts_view_layout_box(layout, a->owner);
      g_assert_true(ts_view_item_is_extracted(m, a->item));
      g_assert_cmpfloat(a->x + a->width, <=, owner->x);
      g_assert_cmpfloat(fabs(a->y + a->height / 2 - (owner->y + owner->height / 2)), <, owner->height);
    } else {
      g_assert_cmpint(a->owner, ==, -1);
    }
    if (a->shape == TS_VIEW_SHAPE_ELLIPSE)
      g_assert_cmpfloat(a->width, >=, 7.0 * (double)strlen(a->line1));
    for (int j = i + 1; j < n; j++) {
      const ts_view_box *b = ts_view_layout_box(layout, j);
      if (holds(layout, i, j) || holds(layout, j, i))
        continue;
      double ox = MIN(a->x + a->width, b->x + b->width) - MAX(a->x, b->x);
      double oy = MIN(a->y + a->height, b->y + b->height) - MAX(a->y, b->y);
      if (ox > 1e-6 && oy > 1e-6)
        g_error("boxes overlap: %s (%g,%g %gx%g) and %s (%g,%g %gx%g)", ts_view_item_name(m, a->item), a->x,
                a->y, a->width, a->height, ts_view_item_name(m, b->item), b->x, b->y, b->width, b->height);
    }
  }
  int want_dots = 0;
  for (guint k = 0; k < visible->len; k++) {
    int item = g_array_index(visible, int, k);
    if (!ts_view_state_is_expanded(ts_view_layout_state(layout), item) || !ts_view_item_is_expandable(m, item))
      want_dots += ts_view_item_n_dots(m, item);
  }
  g_assert_cmpint(n_dots, ==, want_dots);
  g_array_free(visible, TRUE);

  /* one path per edge, in order; edges into or out of open If/While boxes
   * have one per inner end instead (is_inside: the end lies in the box) */
  GArray *edges = ts_view_model_visible_edges(m, ts_view_layout_state(layout));
  g_assert_cmpint(ts_view_layout_n_paths(layout), >=, edges->len);
  guint k = 0;
  for (int i = 0; i < ts_view_layout_n_paths(layout); i++) {
    const ts_view_path *p = ts_view_layout_path(layout, i);
    while (k < edges->len && (g_array_index(edges, ts_view_edge, k).src != p->edge.src ||
                              g_array_index(edges, ts_view_edge, k).dst != p->edge.dst))
      k++;
    g_assert_cmpuint(k, <, edges->len);
    const ts_view_edge *e = &g_array_index(edges, ts_view_edge, k);
    const ts_view_box *from = ts_view_layout_box(layout, ts_view_layout_box_for_item(layout, e->src));
    const ts_view_box *to = ts_view_layout_box(layout, ts_view_layout_box_for_item(layout, e->dst));
    g_assert_true(ts_view_layout_box(layout, p->src_box) == from || is_inside(ts_view_layout_box(layout, p->src_box), from));
    g_assert_true(ts_view_layout_box(layout, p->dst_box) == to || is_inside(ts_view_layout_box(layout, p->dst_box), to));
    g_assert_cmpint(p->n_points, >=, 4);
    g_assert_cmpint((p->n_points - 1) % 3, ==, 0);
    g_assert_cmpfloat(distance_to_box(ts_view_layout_box(layout, p->src_box), p->points[0]), <, 1.0);
    g_assert_cmpfloat(distance_to_box(ts_view_layout_box(layout, p->dst_box), p->points[p->n_points - 1]), <, 1.0);
    g_assert_true(is_inside(&(ts_view_box){ .x = p->label_at.x, .y = p->label_at.y }, &canvas));
    g_assert_cmpfloat(p->width, >=, 0.75);
    g_assert_cmpfloat(p->width, <=, 12);
    g_assert_nonnull(p->label);
  }
  g_array_free(edges, TRUE);
}

/* ---- tests --------------------------------------------------------------------------------- */

/* A Print node shows what it prints: its template, quoted, cut to fit. */
static void test_print_says_what(void)
{
  ts_scope *s = ts_scope_begin();
  traced t = trace("printing", printing, 0);
  ts_view_layouter *l = ts_view_layouter_new(t.model, NULL);
  ts_view_layout *layout = run(l);
  const ts_view_box *print = box_of(layout, t.model, "PrintV2");
  g_assert_cmpstr(print->line1, ==, "PrintV2");
  g_assert_cmpstr(print->line2, ==, "\"the input is {} and a r\u2026");
  ts_view_layout_free(layout);
  ts_view_layouter_free(l);
  untrace(&t);
  ts_scope_end(s);
}

static void test_sizes(void)
{
  ts_scope *s = ts_scope_begin();
  traced t = trace("nested", nested, 0);
  ts_view_layouter *l = ts_view_layouter_new(t.model, NULL);
  ts_view_layout *layout = run(l);
  check_layout(layout, t.model);
  g_assert_cmpint(ts_view_layout_n_boxes(layout), ==, 4); /* x, encoder, head, Exp */
  /* Exp: one line; 3 glyphs * 7 * 1.25 + 2 * 6 is under the minimum of 3 lines' height */
  const ts_view_box *exp_box = box_of(layout, t.model, "Exp");
  g_assert_cmpint(exp_box->shape, ==, TS_VIEW_SHAPE_ELLIPSE);
  g_assert_cmpfloat(exp_box->width, ==, 42);
  g_assert_cmpfloat(exp_box->height, ==, 26);
  g_assert_cmpstr(exp_box->line1, ==, "Exp");
  g_assert_null(exp_box->line2);
  /* x: a Placeholder named x */
  const ts_view_box *x_box = box_of(layout, t.model, "x");
  g_assert_cmpstr(x_box->line1, ==, "Placeholder");
  g_assert_cmpstr(x_box->line2, ==, "x");
  g_assert_cmpfloat(x_box->width, ==, 11 * 7 * 1.25 + 12);
  g_assert_cmpfloat(x_box->height, ==, 40);
  /* encoder: "encoder" over "5 ops" */
  const ts_view_box *enc = box_of(layout, t.model, "encoder");
  g_assert_cmpint(enc->shape, ==, TS_VIEW_SHAPE_BOX);
  g_assert_cmpstr(enc->line1, ==, "encoder");
  g_assert_cmpstr(enc->line2, ==, "5 ops");
  g_assert_cmpfloat(enc->width, ==, 7 * 7 + 18);
  g_assert_cmpfloat(enc->height, ==, 40);
  /* inputs low, outputs high: x under encoder under head under Exp */
  const ts_view_box *head = box_of(layout, t.model, "head");
  g_assert_cmpfloat(x_box->y, >, enc->y);
  g_assert_cmpfloat(enc->y, >, head->y);
  g_assert_cmpfloat(head->y, >, exp_box->y);
  /* hit testing */
  g_assert_cmpint(ts_view_layout_box_at(layout, exp_box->x + exp_box->width / 2, exp_box->y + 1),
                  ==, ts_view_layout_box_for_item(layout, item_named(t.model, "Exp")));
  g_assert_cmpint(ts_view_layout_box_at(layout, -5, -5), ==, -1);
  /* edges: one tensor each, labelled with its type */
  g_assert_cmpint(ts_view_layout_n_paths(layout), ==, 3);
  g_assert_cmpstr(ts_view_layout_path(layout, 0)->label, ==, "f32[4,8]");
  ts_view_layout_free(layout);

  /* everything open */
  ts_view_model_expand_all(t.model);
  layout = run(l);
  check_layout(layout, t.model);
  g_assert_cmpint(ts_view_layout_n_boxes(layout), ==, 14); /* 10 ops, 4 groups */
  enc = box_of(layout, t.model, "encoder");
  g_assert_cmpint(enc->shape, ==, TS_VIEW_SHAPE_CONTAINER);
  g_assert_true(is_inside(box_of(layout, t.model, "encoder/layer_b/Tanh"), box_of(layout, t.model, "encoder/layer_b")));
  g_assert_true(is_inside(box_of(layout, t.model, "encoder/layer_b"), enc));
  /* a click inside a container but outside its children finds the container */
  g_assert_cmpint(ts_view_layout_box_at(layout, enc->x + 2, enc->y + 2), ==,
                  ts_view_layout_box_for_item(layout, item_named(t.model, "encoder")));
  ts_view_layout_free(layout);
  ts_view_layouter_free(l);
  untrace(&t);
  ts_scope_end(s);
}

static void test_dots(void)
{
  ts_scope *s = ts_scope_begin();
  traced t = trace("affine", affine, 0);
  ts_view_layouter *l = ts_view_layouter_new(t.model, NULL);
  ts_view_layout *layout = run(l);
  check_layout(layout, t.model);
  int w = item_named(t.model, "Const");
  int wb = ts_view_layout_box_for_item(layout, w);
  g_assert_cmpint(wb, >=, 0);
  const ts_view_box *dot = ts_view_layout_box(layout, wb);
  const ts_view_box *mm = box_of(layout, t.model, "MatMul");
  g_assert_cmpint(dot->shape, ==, TS_VIEW_SHAPE_DOT);
  g_assert_true(ts_view_layout_box(layout, dot->owner) == mm);
  g_assert_cmpstr(dot->line1, ==, "Const");
  g_assert_cmpfloat(dot->width, ==, 8);
  /* centred on the op's middle, just left of it */
  g_assert_cmpfloat(dot->y + 4, ==, mm->y + mm->height / 2);
  g_assert_cmpfloat(mm->x - (dot->x + dot->width), ==, 4);
  ts_view_layout_free(layout);
  ts_view_layouter_free(l);
  untrace(&t);

  /* two dots beside one op, and control edges for dashed paths */
  counter_var = ts_variable_new(ts_zeros(TS_F32, TS_SHAPE(4, 8)), "v");
  t = trace("counter", counter, 0);
  l = ts_view_layouter_new(t.model, NULL);
  layout = run(l);
  check_layout(layout, t.model);
  const ts_view_box *sub = box_of(layout, t.model, "AssignSubVariableOp");
  int n_beside = 0, n_control = 0;
  for (int i = 0; i < ts_view_layout_n_boxes(layout); i++)
    n_beside += ts_view_layout_box(layout, i)->owner >= 0 && ts_view_layout_box(layout, ts_view_layout_box(layout, i)->owner) == sub;
  for (int i = 0; i < ts_view_layout_n_paths(layout); i++)
    n_control += ts_view_layout_path(layout, i)->edge.control;
  g_assert_cmpint(n_beside, ==, 2);
  g_assert_cmpint(n_control, ==, 3);
  ts_view_layout_free(layout);
  ts_view_layouter_free(l);
  untrace(&t);
  ts_tensor_unref(counter_var);
  ts_scope_end(s);
}

static void test_series_and_if(void)
{
  ts_scope *s = ts_scope_begin();
  traced t = trace("dense_stack", dense_stack, 100);
  ts_view_layouter *l = ts_view_layouter_new(t.model, NULL);
  ts_view_layout *layout = run(l);
  check_layout(layout, t.model);
  g_assert_cmpint(ts_view_layout_n_boxes(layout), ==, 2);
  const ts_view_box *series = box_of(layout, t.model, "dense_[1-100]");
  g_assert_cmpint(series->shape, ==, TS_VIEW_SHAPE_SERIES);
  g_assert_cmpstr(series->line2, ==, "100 \u00d7 5 ops");
  ts_view_layout_free(layout);
  ts_view_model_set_expanded(t.model, item_named(t.model, "dense_[1-100]"), true);
  ts_view_model_set_expanded(t.model, item_named(t.model, "dense_50"), true);
  layout = run(l);
  check_layout(layout, t.model);
  g_assert_cmpint(ts_view_layout_n_boxes(layout), ==, 2 + 100 + 4 + 1); /* dense_50: 4 ops and a dot */
  ts_view_layout_free(layout);
  ts_view_layouter_free(l);
  untrace(&t);

  /* folded series feeding each other: dot reverses an edge, the path
   * still runs from its source to its destination */
  t = trace("cycle", cycle, 0);
  l = ts_view_layouter_new(t.model, NULL);
  layout = run(l);
  check_layout(layout, t.model);
  g_assert_cmpint(ts_view_layout_n_boxes(layout), ==, 3);
  g_assert_cmpint(ts_view_layout_n_paths(layout), ==, 3); /* x->Add, Add->Tanh, Tanh->Add */
  ts_view_layout_free(layout);
  ts_view_layouter_free(l);
  untrace(&t);

  /* a lone placeholder */
  t = trace("passthrough", passthrough, 0);
  l = ts_view_layouter_new(t.model, NULL);
  layout = run(l);
  check_layout(layout, t.model);
  g_assert_cmpint(ts_view_layout_n_boxes(layout), ==, 1);
  ts_view_layout_free(layout);
  ts_view_layouter_free(l);
  untrace(&t);

  t = trace("square_if_positive", square_if_positive, 0);
  l = ts_view_layouter_new(t.model, NULL);
  ts_view_model_toggle(t.model, item_named(t.model, "If"));
  layout = run(l);
  check_layout(layout, t.model);
  const ts_view_box *if_box = box_of(layout, t.model, "If");
  g_assert_cmpint(if_box->shape, ==, TS_VIEW_SHAPE_CONTAINER);
  const ts_view_box *then_box = box_of(layout, t.model, "If/then");
  const ts_view_box *else_box = box_of(layout, t.model, "If/else");
  g_assert_true(is_inside(box_of(layout, t.model, "If/then/Mul"), then_box));
  g_assert_true(is_inside(box_of(layout, t.model, "If/else/ZerosLike"), else_box));
  g_assert_true(is_inside(then_box, if_box));
  ts_view_layout_free(layout);
  ts_view_layouter_free(l);
  untrace(&t);

  /* a While opens into cond and body */
  t = trace("doubling", doubling, 0);
  l = ts_view_layouter_new(t.model, NULL);
  ts_view_model_toggle(t.model, item_named(t.model, "While"));
  layout = run(l);
  check_layout(layout, t.model);
  const ts_view_box *while_box = box_of(layout, t.model, "While");
  g_assert_true(is_inside(box_of(layout, t.model, "While/cond/Less"), box_of(layout, t.model, "While/cond")));
  g_assert_true(is_inside(box_of(layout, t.model, "While/body/Mul"), box_of(layout, t.model, "While/body")));
  g_assert_true(is_inside(box_of(layout, t.model, "While/body"), while_box));
  ts_view_layout_free(layout);
  ts_view_layouter_free(l);
  untrace(&t);
  ts_scope_end(s);
}

static void test_bottom_up(void)
{
  ts_scope *s = ts_scope_begin();
  traced t = trace("nested", nested, 0);
  ts_view_model *m = t.model;
  ts_view_layouter *l = ts_view_layouter_new(m, NULL);
  ts_view_layout *l0 = run(l);
  g_assert_cmpint(ts_view_layout_n_groups(l0), ==, 1);
  g_assert_cmpint(ts_view_layout_n_computed(l0), ==, 1);
  ts_view_box enc0 = *box_of(l0, m, "encoder");

  /* opening encoder lays out encoder and the root, nothing else */
  ts_view_model_set_expanded(m, item_named(m, "encoder"), true);
  ts_view_layout *l1 = run(l);
  check_layout(l1, m);
  g_assert_cmpint(ts_view_layout_n_groups(l1), ==, 2);
  g_assert_cmpint(ts_view_layout_n_computed(l1), ==, 2);
  const ts_view_box *enc1 = box_of(l1, m, "encoder");
  g_assert_cmpint(enc1->shape, ==, TS_VIEW_SHAPE_CONTAINER);
  g_assert_cmpfloat(enc1->height, >, enc0.height);
  g_assert_cmpfloat(ts_view_layout_height(l1), >, ts_view_layout_height(l0));
  /* its size is its children's layout plus padding and header */
  const ts_view_box *la = box_of(l1, m, "encoder/layer_a"), *lb = box_of(l1, m, "encoder/layer_b");
  g_assert_cmpfloat(enc1->height, >=, la->height + lb->height + 24 + 2 * 10 + 20);

  /* opening layer_b lays out layer_b, encoder and the root */
  ts_view_model_set_expanded(m, item_named(m, "encoder/layer_b"), true);
  ts_view_layout *l2 = run(l);
  check_layout(l2, m);
  g_assert_cmpint(ts_view_layout_n_groups(l2), ==, 3);
  g_assert_cmpint(ts_view_layout_n_computed(l2), ==, 3);
  g_assert_cmpfloat(box_of(l2, m, "encoder")->height, >, enc1->height);

  /* opening head next: head and the root; encoder's layout is cached */
  ts_view_model_set_expanded(m, item_named(m, "head"), true);
  ts_view_layout *l3 = run(l);
  check_layout(l3, m);
  g_assert_cmpint(ts_view_layout_n_groups(l3), ==, 4);
  g_assert_cmpint(ts_view_layout_n_computed(l3), ==, 2);

  /* closing both again needs no layout at all, and gives l1 back */
  ts_view_model_set_expanded(m, item_named(m, "head"), false);
  ts_view_model_set_expanded(m, item_named(m, "encoder/layer_b"), false);
  ts_view_layout *l4 = run(l);
  g_assert_cmpint(ts_view_layout_n_computed(l4), ==, 0);
  g_assert_cmpint(ts_view_layout_n_boxes(l4), ==, ts_view_layout_n_boxes(l1));
  for (int i = 0; i < ts_view_layout_n_boxes(l1); i++) {
    const ts_view_box *a = ts_view_layout_box(l1, i), *b = ts_view_layout_box(l4, i);
    g_assert_cmpint(a->item, ==, b->item);
    g_assert_cmpfloat(a->x, ==, b->x);
    g_assert_cmpfloat(a->y, ==, b->y);
  }
  /* a layout of an older state, on request */
  ts_view_layout *again = ts_view_layouter_run(l, ts_view_layout_state(l2), NULL);
  g_assert_nonnull(again);
  g_assert_cmpint(ts_view_layout_n_computed(again), ==, 0);
  g_assert_cmpint(ts_view_layout_n_boxes(again), ==, ts_view_layout_n_boxes(l2));
  ts_view_layout_free(again);
  ts_view_layout_free(l0);
  ts_view_layout_free(l1);
  ts_view_layout_free(l2);
  ts_view_layout_free(l3);
  ts_view_layout_free(l4);
  ts_view_layouter_free(l);
  untrace(&t);
  ts_scope_end(s);
}

/* ---- asynchronous requests ----------------------------------------------------------------- */

static GMutex gate; /* held by the test to keep the layout thread busy */

static void gated_measure(const char *text, double *width, double *height, void *user_data)
{
  g_mutex_lock(&gate);
  g_mutex_unlock(&gate);
  *width = 7.0 * (double)strlen(text);
  *height = 14;
}

typedef struct reply {
  ts_view_layouter *layouter;
  ts_view_layout *layout;
  GError *error;
  GThread *thread;
  int *pending;
} reply;

static void on_layout(GObject *source, GAsyncResult *result, gpointer user_data)
{
  reply *r = user_data;
  r->layout = ts_view_layouter_run_finish(r->layouter, result, &r->error);
  r->thread = g_thread_self();
  (*r->pending)--;
}

static void test_async(void)
{
  ts_scope *s = ts_scope_begin();
  traced t = trace("nested", nested, 0);
  ts_view_layout_options gated = TS_VIEW_LAYOUT_OPTIONS_DEFAULT;
  gated.measure = gated_measure;
  ts_view_layouter *a = ts_view_layouter_new(t.model, &gated);
  ts_view_layouter *b = ts_view_layouter_new(t.model, NULL);
  ts_view_layouter *c = ts_view_layouter_new(t.model, NULL);
  int pending = 5;
  reply ra = { a, .pending = &pending }, rb1 = { b, .pending = &pending }, rb2 = { b, .pending = &pending };
  reply rc = { c, .pending = &pending }, rx = { b, .pending = &pending };

  GCancellable *cancel = g_cancellable_new();
  g_cancellable_cancel(cancel);
  g_mutex_lock(&gate);
  ts_view_layouter_run_async(a, NULL, NULL, on_layout, &ra); /* blocks the layout thread */
  ts_view_layouter_run_async(b, NULL, cancel, on_layout, &rx); /* cancelled before it runs */
  ts_view_layouter_run_async(b, NULL, NULL, on_layout, &rb1);
  ts_view_model_expand_all(t.model);
  ts_view_layouter_run_async(b, NULL, NULL, on_layout, &rb2); /* supersedes rb1 */
  ts_view_layouter_run_async(c, NULL, NULL, on_layout, &rc);
  ts_view_layouter_free(c); /* before its request ran */
  g_mutex_unlock(&gate);
  while (pending > 0)
    g_main_context_iteration(NULL, TRUE);

  g_assert_no_error(ra.error);
  g_assert_nonnull(ra.layout);
  g_assert_cmpint(ts_view_layout_n_boxes(ra.layout), ==, 4); /* the state when asked */
  g_assert_error(rb1.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpstr(rb1.error->message, ==, "superseded by a newer layout request");
  g_assert_error(rc.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_error(rx.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null(rx.layout);
  g_assert_no_error(rb2.error);
  g_assert_cmpint(ts_view_layout_n_boxes(rb2.layout), ==, 14);
  check_layout(rb2.layout, t.model);
  /* every reply came on this thread, through its main context */
  GThread *self = g_thread_self();
  g_assert_true(ra.thread == self && rb1.thread == self && rb2.thread == self && rc.thread == self);

  ts_view_layout_free(ra.layout);
  ts_view_layout_free(rb2.layout);
  g_clear_error(&rb1.error);
  g_clear_error(&rc.error);
  g_clear_error(&rx.error);
  g_object_unref(cancel);
  ts_view_layouter_free(a);
  ts_view_layouter_free(b);
  untrace(&t);
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/graph-layout/sizes", test_sizes);
  g_test_add_func("/graph-layout/print-says-what", test_print_says_what);
  g_test_add_func("/graph-layout/dots", test_dots);
  g_test_add_func("/graph-layout/series-and-if", test_series_and_if);
  g_test_add_func("/graph-layout/bottom-up", test_bottom_up);
  g_test_add_func("/graph-layout/async", test_async);
  int rc = g_test_run();
  ts_release_all();
  return rc;
}
