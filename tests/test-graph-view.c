/* test-graph-view.c — TsGraphView in a window (under Xvfb; skipped with no
 * display): a graph shows once its asynchronous layout arrives, opening
 * and closing groups changes what is visible, the 100 Dense layers fold
 * into one series, a search reveals a nested node, keys move the view,
 * exports write valid files, and the widget is freed whole. */
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>
#include <tracescope.h>
#include <unistd.h>

#include "ts-graph-view.h"

static bool have_display;

/* ---- the programs ------------------------------------------------------------------ */

static ts_tensor *nested_if(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_NAME_SCOPE("encoder")
  {
    TS_NAME_SCOPE("layer_a") { x = ts_relu(ts_add(x, x)); }
    TS_NAME_SCOPE("layer_b") { x = ts_tanh(ts_mul(x, ts_sigmoid(x))); }
  }
  TS_NAME_SCOPE("gate")
  {
    TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0)), &x) {
      x = ts_mul(x, x);
    } TS_ELSE {
      x = ts_neg(x);
    } TS_END_IF;
  }
  return ts_exp(x);
}

/* ---- fixture: a window holding a view of a traced graph ------------------------------ */

typedef struct fixture {
  ts_function *fn;
  ts_module *module;
  GtkWindow *window;
  TsGraphView *view;
  int n_selected, n_activated;
  int last_selected, last_activated;
  const ts_node *last_node;
} fixture;

static void on_node_selected(TsGraphView *view, int item, gpointer node, fixture *f)
{
  f->n_selected++;
  f->last_selected = item;
  f->last_node = node;
}

static void on_node_activated(TsGraphView *view, int item, gpointer node, fixture *f)
{
  f->n_activated++;
  f->last_activated = item;
}

static const ts_graph *trace_nested(fixture *f)
{
  f->fn = ts_function_new("nested_if", nested_if, "x");
  ts_value args[1] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(4, 8)) };
  ts_concrete *cf = ts_function_get_concrete(f->fn, args, 1);
  g_assert_nonnull(cf);
  return ts_concrete_graph(cf);
}

/* The guide's power(x, 3): an identity and three MatMuls, each edge labelled f32[10,10]. */
static ts_tensor *power3(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *result = ts_eye(TS_F32, 10, 10);
  for (int i = 0; i < 3; i++)
    result = ts_matmul(x, result);
  return result;
}

static const ts_graph *trace_power(fixture *f)
{
  f->fn = ts_function_new("power", power3, "x");
  ts_value args[1] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(10, 10)) };
  ts_concrete *cf = ts_function_get_concrete(f->fn, args, 1);
  g_assert_nonnull(cf);
  return ts_concrete_graph(cf);
}

static const ts_graph *trace_sequential(fixture *f)
{
  f->module = ts_module_open("seeds");
  g_assert_nonnull(f->module);
  ts_function *fn = ts_module_lookup(f->module, "sequential_model");
  ts_value args[1] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(20, 28, 28)) };
  ts_concrete *cf = ts_function_get_concrete(fn, args, 1);
  g_assert_nonnull(cf);
  return ts_concrete_graph(cf);
}

/* Runs the main loop until done(view) or fails after 30 s. */
static void wait_for(gboolean (*done)(TsGraphView *view), TsGraphView *view)
{
  gint64 give_up = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
  while (!done(view)) {
    if (g_get_monotonic_time() > give_up)
      g_error("timed out waiting: busy %d, drawn %d, layout %p, %d x %d, zoom %g", ts_graph_view_get_busy(view),
              ts_graph_view_get_drawn(view), (void *)ts_graph_view_get_layout(view), gtk_widget_get_width(GTK_WIDGET(view)),
              gtk_widget_get_height(GTK_WIDGET(view)), ts_viewport_get_zoom(ts_graph_view_get_viewport(view)));
    if (!g_main_context_iteration(NULL, FALSE))
      g_usleep(1000);
  }
}

/* The newest layout is in and has been drawn (so a snapshot of the widget
 * has something to show: allocated is not enough). */
static gboolean laid_out(TsGraphView *view)
{
  return !ts_graph_view_get_busy(view) && ts_graph_view_get_layout(view) != NULL &&
         gtk_widget_get_width(GTK_WIDGET(view)) > 0 && ts_graph_view_get_drawn(view);
}

static void fixture_show_sized(fixture *f, const ts_graph *g, int width, int height)
{
  f->last_selected = f->last_activated = -2;
  f->window = GTK_WINDOW(gtk_window_new());
  gtk_window_set_default_size(f->window, width, height);
  f->view = TS_GRAPH_VIEW(ts_graph_view_new());
  g_object_ref(f->view); /* to check it is finalized at the end */
  g_signal_connect(f->view, "node-selected", G_CALLBACK(on_node_selected), f);
  g_signal_connect(f->view, "node-activated", G_CALLBACK(on_node_activated), f);
  gtk_window_set_child(f->window, GTK_WIDGET(f->view));
  ts_graph_view_set_graph(f->view, g);
  gtk_window_present(f->window);
  wait_for(laid_out, f->view);
}

static void fixture_show(fixture *f, const ts_graph *g)
{
  fixture_show_sized(f, g, 900, 640);
}

static void fixture_clear(fixture *f)
{
  gtk_window_destroy(f->window);
  g_assert_finalize_object(f->view);
  ts_function_free(f->fn);
  ts_module_free(f->module);
  while (g_main_context_iteration(NULL, FALSE))
    ;
}

static int item_named(TsGraphView *view, const char *name)
{
  ts_view_model *m = ts_graph_view_get_model(view);
  for (int i = 0; i < ts_view_model_n_items(m); i++)
    if (strcmp(ts_view_item_name(m, i), name) == 0)
      return i;
  g_error("no item named '%s'", name);
}

static int n_visible(TsGraphView *view)
{
  GArray *items = ts_view_model_visible_items(ts_graph_view_get_model(view), NULL);
  int n = (int)items->len;
  g_array_free(items, TRUE);
  return n;
}

/* Boxes other than dots: one per visible item. */
static int n_shapes(TsGraphView *view)
{
  const ts_view_layout *layout = ts_graph_view_get_layout(view);
  int n = 0;
  for (int i = 0; i < ts_view_layout_n_boxes(layout); i++)
    n += ts_view_layout_box(layout, i)->shape != TS_VIEW_SHAPE_DOT;
  return n;
}

static const ts_view_box *box_of(TsGraphView *view, int item)
{
  const ts_view_layout *layout = ts_graph_view_get_layout(view);
  int b = ts_view_layout_box_for_item(layout, item);
  g_assert_cmpint(b, >=, 0);
  return ts_view_layout_box(layout, b);
}

/* True if the box lies within the widget's area on screen. */
static bool on_screen(TsGraphView *view, const ts_view_box *b)
{
  TsViewport *vp = ts_graph_view_get_viewport(view);
  double x0, y0, x1, y1;
  ts_viewport_canvas_to_widget(vp, b->x, b->y, &x0, &y0);
  ts_viewport_canvas_to_widget(vp, b->x + b->width, b->y + b->height, &x1, &y1);
  return x0 >= -1 && y0 >= -1 && x1 <= gtk_widget_get_width(GTK_WIDGET(view)) + 1 &&
         y1 <= gtk_widget_get_height(GTK_WIDGET(view)) + 1;
}

/* The widget drawn by GSK's Cairo renderer into a texture. */
static GdkTexture *render_widget(GtkWidget *widget)
{
  int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
  GdkPaintable *paintable = gtk_widget_paintable_new(widget);
  GtkSnapshot *snapshot = gtk_snapshot_new();
  gdk_paintable_snapshot(paintable, snapshot, w, h);
  GskRenderNode *node = gtk_snapshot_free_to_node(snapshot);
  g_assert_nonnull(node);
  GskRenderer *renderer = gsk_cairo_renderer_new();
  GError *error = NULL;
  g_assert_true(gsk_renderer_realize(renderer, NULL, &error));
  g_assert_no_error(error);
  GdkTexture *texture = gsk_renderer_render_texture(renderer, node, &GRAPHENE_RECT_INIT(0, 0, w, h));
  gsk_renderer_unrealize(renderer);
  g_object_unref(renderer);
  gsk_render_node_unref(node);
  g_object_unref(paintable);
  return texture;
}

static guint32 texel(GdkTexture *texture, const guint8 *data, double x, double y)
{
  int ix = (int)x, iy = (int)y;
  g_assert_true(ix >= 0 && iy >= 0 && ix < gdk_texture_get_width(texture) && iy < gdk_texture_get_height(texture));
  return ((const guint32 *)(data + (gsize)iy * 4 * (gsize)gdk_texture_get_width(texture)))[ix] & 0xffffff;
}

static char *temp_path(const char *name)
{
  static int serial;
  return g_strdup_printf("%s/ts-view-%d-%d-%s", g_get_tmp_dir(), (int)getpid(), serial++, name);
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_shows_graph(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f = { 0 };
  const ts_graph *g = trace_nested(&f);
  f.last_selected = -2;
  f.window = GTK_WINDOW(gtk_window_new());
  gtk_window_set_default_size(f.window, 900, 640);
  f.view = TS_GRAPH_VIEW(ts_graph_view_new());
  g_object_ref(f.view);
  gtk_window_set_child(f.window, GTK_WIDGET(f.view));
  ts_graph_view_set_graph(f.view, g);
  /* the layout runs off the main loop: nothing yet, a spinner instead */
  g_assert_true(ts_graph_view_get_busy(f.view));
  g_assert_null(ts_graph_view_get_layout(f.view));
  g_assert_true(ts_graph_view_get_graph(f.view) == g);
  gtk_window_present(f.window);
  wait_for(laid_out, f.view);

  const ts_view_layout *layout = ts_graph_view_get_layout(f.view);
  g_assert_cmpint(n_shapes(f.view), ==, n_visible(f.view));
  /* x, encoder, gate, Exp at the top level; fitted whole in the window */
  g_assert_cmpint(n_visible(f.view), ==, 4);
  for (int i = 0; i < ts_view_layout_n_boxes(layout); i++)
    g_assert_true(on_screen(f.view, ts_view_layout_box(layout, i)));

  /* what the window shows: each shape's fill where the layout put it */
  GdkTexture *texture = render_widget(GTK_WIDGET(f.view));
  int w = gdk_texture_get_width(texture), h = gdk_texture_get_height(texture);
  guint8 *data = g_malloc((gsize)w * (gsize)h * 4);
  gdk_texture_download(texture, data, (gsize)w * 4);
  const char *names[] = { "encoder", "gate", "Exp" };
  TsViewport *vp = ts_graph_view_get_viewport(f.view);
  guint32 background = texel(texture, data, w - 2, 2);
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    const ts_view_box *b = box_of(f.view, item_named(f.view, names[i]));
    double x, y;
    ts_viewport_canvas_to_widget(vp, b->x + MAX(0.07 * b->width, 4), b->y + b->height / 2, &x, &y);
    g_assert_cmphex(texel(texture, data, x, y), !=, background);
  }
  if (g_getenv("TS_VIEW_SCREENSHOT"))
    gdk_texture_save_to_png(texture, g_getenv("TS_VIEW_SCREENSHOT"));
  g_free(data);
  g_object_unref(texture);

  /* a second graph replaces the first */
  fixture other = { 0 };
  ts_graph_view_set_graph(f.view, trace_sequential(&other));
  wait_for(laid_out, f.view);
  g_assert_cmpint(item_named(f.view, "dense_[1-100]"), >=, 0);
  ts_graph_view_set_graph(f.view, NULL);
  g_assert_null(ts_graph_view_get_model(f.view));
  g_assert_false(ts_graph_view_get_busy(f.view));
  fixture_clear(&f);
  ts_module_free(other.module);
}

static void test_expand_collapse(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f = { 0 };
  fixture_show(&f, trace_sequential(&f));
  ts_view_model *m = ts_graph_view_get_model(f.view);
  /* x, flatten, dense_[1-100], dropout, dense_101 */
  int top = n_visible(f.view);
  g_assert_cmpint(top, ==, 5);
  g_assert_cmpint(n_shapes(f.view), ==, top);

  /* open the series: its 100 layers show, closed */
  int series = item_named(f.view, "dense_[1-100]");
  g_assert_true(ts_graph_view_set_expanded_by_name(f.view, "dense_[1-100]", TRUE));
  g_assert_true(ts_graph_view_get_busy(f.view));
  wait_for(laid_out, f.view);
  g_assert_cmpint(n_visible(f.view), ==, top + 100);
  g_assert_cmpint(n_shapes(f.view), ==, top + 100);
  g_assert_cmpint(box_of(f.view, series)->shape, ==, TS_VIEW_SHAPE_CONTAINER);
  g_assert_false(ts_graph_view_set_expanded(f.view, series, TRUE)); /* no change */

  /* Enter on the selected dense_101 opens it, in place */
  int d101 = item_named(f.view, "dense_101");
  int n_inside = 0;
  for (int c = 0; c < ts_view_item_n_children(m, d101); c++)
    n_inside += !ts_view_item_is_dot_only(m, ts_view_item_child(m, d101, c));
  g_assert_cmpint(n_inside, >=, 2);
  ts_graph_view_select_item(f.view, d101);
  g_assert_cmpint(f.last_selected, ==, d101);
  g_assert_null(f.last_node);
  TsViewport *vp = ts_graph_view_get_viewport(f.view);
  const ts_view_box *b = box_of(f.view, d101);
  double x0, y0, x1, y1;
  ts_viewport_canvas_to_widget(vp, b->x + b->width / 2, b->y + b->height / 2, &x0, &y0);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(f.view), "view.activate", NULL));
  g_assert_cmpint(f.n_activated, ==, 1);
  g_assert_cmpint(f.last_activated, ==, d101);
  wait_for(laid_out, f.view);
  g_assert_cmpint(n_visible(f.view), ==, top + 100 + n_inside);
  b = box_of(f.view, d101);
  ts_viewport_canvas_to_widget(vp, b->x + b->width / 2, b->y + b->height / 2, &x1, &y1);
  g_assert_cmpfloat(fabs(x1 - x0), <, 1);
  g_assert_cmpfloat(fabs(y1 - y0), <, 1);

  /* closing the series hides its layers again; dense_101 stays open */
  g_assert_true(ts_graph_view_set_expanded(f.view, series, FALSE));
  wait_for(laid_out, f.view);
  g_assert_cmpint(n_visible(f.view), ==, top + n_inside);
  ts_graph_view_collapse_all(f.view);
  wait_for(laid_out, f.view);
  g_assert_cmpint(n_visible(f.view), ==, top);
  g_assert_cmpint(n_shapes(f.view), ==, top);
  fixture_clear(&f);
}

static void test_series_folding(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f = { 0 };
  fixture_show(&f, trace_sequential(&f));
  ts_view_model *m = ts_graph_view_get_model(f.view);
  int series = item_named(f.view, "dense_[1-100]");
  g_assert_cmpint(ts_view_item_kind_of(m, series), ==, TS_VIEW_ITEM_SERIES);
  g_assert_cmpint(ts_view_item_n_children(m, series), ==, 100);
  for (int c = 0; c < 100; c++) {
    char name[16];
    g_snprintf(name, sizeof name, "dense_%d", c + 1);
    g_assert_cmpstr(ts_view_item_name(m, ts_view_item_child(m, series, c)), ==, name);
  }
  /* one stacked node on the canvas, labelled with the range and the count */
  const ts_view_box *b = box_of(f.view, series);
  g_assert_cmpint(b->shape, ==, TS_VIEW_SHAPE_SERIES);
  g_assert_cmpstr(b->line1, ==, "dense_[1-100]");
  g_assert_true(g_str_has_prefix(b->line2, "100 \u00d7 "));
  g_assert_cmpint(ts_view_layout_box_for_item(ts_graph_view_get_layout(f.view), item_named(f.view, "dense_1")), ==, -1);
  fixture_clear(&f);
}

static gboolean tanh_in_view(TsGraphView *view)
{
  if (!laid_out(view))
    return FALSE;
  int item = item_named(view, "encoder/layer_b/Tanh");
  int b = ts_view_layout_box_for_item(ts_graph_view_get_layout(view), item);
  return b >= 0 && on_screen(view, ts_view_layout_box(ts_graph_view_get_layout(view), b));
}

static gboolean then_mul_in_view(TsGraphView *view)
{
  if (!laid_out(view))
    return FALSE;
  int b = ts_view_layout_box_for_item(ts_graph_view_get_layout(view), item_named(view, "gate/If/then/Mul"));
  return b >= 0 && on_screen(view, ts_view_layout_box(ts_graph_view_get_layout(view), b));
}

/* Typing found the one match, Sigmoid, and selected it. */
static gboolean search_found_one(TsGraphView *view)
{
  GtkWidget *status = g_object_get_data(G_OBJECT(view), "test-status");
  return g_strcmp0(gtk_label_get_text(GTK_LABEL(status)), "1 of 1") == 0 &&
         ts_graph_view_get_selected_item(view) == item_named(view, "encoder/layer_b/Sigmoid");
}

/* The selection has been flown to: centred in what the search bar leaves in
 * sight, under the bar, not behind it. */
static gboolean selected_under_bar(TsGraphView *view)
{
  if (ts_graph_view_get_animating(view))
    return FALSE;
  GtkWidget *revealer = g_object_get_data(G_OBJECT(view), "test-revealer");
  int b = ts_view_layout_box_for_item(ts_graph_view_get_layout(view), ts_graph_view_get_selected_item(view));
  if (b < 0 || !gtk_revealer_get_child_revealed(GTK_REVEALER(revealer)))
    return FALSE;
  const ts_view_box *box = ts_view_layout_box(ts_graph_view_get_layout(view), b);
  graphene_rect_t bar;
  g_assert_true(gtk_widget_compute_bounds(revealer, GTK_WIDGET(view), &bar));
  TsViewport *vp = ts_graph_view_get_viewport(view);
  double x0, y0, x1, y1;
  ts_viewport_canvas_to_widget(vp, box->x, box->y, &x0, &y0);
  ts_viewport_canvas_to_widget(vp, box->x + box->width, box->y + box->height, &x1, &y1);
  double below = bar.origin.y + bar.size.height, h = gtk_widget_get_height(GTK_WIDGET(view));
  return on_screen(view, box) && y0 >= below - 1 && fabs((y0 + y1) / 2 - (below + h) / 2) < 2;
}

static GtkWidget *find_child(GtkWidget *widget, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE(widget, type))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child(widget); c; c = gtk_widget_get_next_sibling(c)) {
    GtkWidget *found = find_child(c, type);
    if (found)
      return found;
  }
  return NULL;
}

static void test_search_reveals(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f = { 0 };
  fixture_show(&f, trace_nested(&f));
  ts_view_model *m = ts_graph_view_get_model(f.view);
  int encoder = item_named(f.view, "encoder"), layer_b = item_named(f.view, "encoder/layer_b");
  int tanh = item_named(f.view, "encoder/layer_b/Tanh");
  g_assert_false(ts_view_model_is_visible(m, NULL, tanh));

  /* by op type: Tanh, two levels down; reveal opens both and flies there */
  GError *error = NULL;
  g_assert_cmpint(ts_graph_view_search(f.view, TS_VIEW_FIND_OP, "tanh", &error), ==, 1);
  g_assert_no_error(error);
  ts_graph_view_search_next(f.view, TRUE);
  g_assert_cmpint(ts_graph_view_get_selected_item(f.view), ==, tanh);
  g_assert_cmpint(f.last_selected, ==, tanh);
  g_assert_true(f.last_node == ts_view_item_node(m, tanh));
  g_assert_cmpstr(ts_node_name(f.last_node), ==, "encoder/layer_b/Tanh");
  wait_for(tanh_in_view, f.view);
  g_assert_true(ts_view_model_is_expanded(m, encoder));
  g_assert_true(ts_view_model_is_expanded(m, layer_b));
  g_assert_true(ts_view_model_is_visible(m, NULL, tanh));
  g_assert_cmpfloat(ts_viewport_get_zoom(ts_graph_view_get_viewport(f.view)), >=, 0.8);

  /* by name, a regular expression; a bad one is an error */
  g_assert_cmpint(ts_graph_view_search(f.view, TS_VIEW_FIND_NAME, "layer_.*/Mul$", &error), ==, 1);
  g_assert_cmpint(ts_graph_view_search(f.view, TS_VIEW_FIND_NAME, "(", &error), ==, -1);
  g_assert_error(error, TS_VIEW_ERROR, TS_VIEW_ERROR_INVALID_QUERY);
  g_clear_error(&error);

  /* a node inside the If's then branch, by its ts_node */
  const ts_node *mul = ts_view_item_node(m, item_named(f.view, "gate/If/then/Mul"));
  g_assert_true(ts_graph_view_reveal(f.view, mul));
  wait_for(then_mul_in_view, f.view);
  g_assert_true(ts_view_model_is_expanded(m, item_named(f.view, "gate/If")));

  /* the search bar: Ctrl+F's action, typing, Enter */
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(f.view), "view.search", NULL));
  GtkWidget *revealer = find_child(GTK_WIDGET(f.view), GTK_TYPE_REVEALER);
  g_assert_true(gtk_revealer_get_reveal_child(GTK_REVEALER(revealer)));
  GtkWidget *box = gtk_revealer_get_child(GTK_REVEALER(revealer));
  GtkWidget *entry = NULL, *status = NULL;
  for (GtkWidget *c = gtk_widget_get_first_child(box); c; c = gtk_widget_get_next_sibling(c)) {
    if (GTK_IS_SEARCH_ENTRY(c))
      entry = c;
    if (GTK_IS_LABEL(c))
      status = c;
  }
  g_assert_nonnull(entry);
  g_assert_nonnull(status);
  GtkWidget *focus = gtk_window_get_focus(f.window);
  g_assert_true(focus == entry || gtk_widget_is_ancestor(focus, entry));
  g_object_set_data(G_OBJECT(f.view), "test-status", status);
  g_object_set_data(G_OBJECT(f.view), "test-revealer", revealer);
  gtk_editable_set_text(GTK_EDITABLE(entry), "Sigmoid");
  wait_for(search_found_one, f.view); /* search-changed comes after a short delay */
  g_assert_cmpint(ts_graph_view_get_selected_item(f.view), ==, item_named(f.view, "encoder/layer_b/Sigmoid"));
  wait_for(selected_under_bar, f.view);
  /* the legend, in a top corner, is under the bar, not behind it */
  ts_graph_view_set_legend_corner(f.view, TS_LEGEND_CORNER_TOP_RIGHT);
  graphene_rect_t legend, bar;
  g_assert_true(ts_graph_view_get_legend_area(f.view, &legend));
  g_assert_true(gtk_widget_compute_bounds(revealer, GTK_WIDGET(f.view), &bar));
  g_assert_cmpfloat(legend.origin.y, >=, bar.origin.y + bar.size.height);
  g_signal_emit_by_name(entry, "activate");
  g_assert_cmpint(ts_graph_view_get_selected_item(f.view), ==, item_named(f.view, "encoder/layer_b/Sigmoid"));
  g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(status)), ==, "1 of 1");
  fixture_clear(&f);
}

static void test_navigation(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f = { 0 };
  fixture_show(&f, trace_sequential(&f));
  TsViewport *vp = ts_graph_view_get_viewport(f.view);
  GtkWidget *w = GTK_WIDGET(f.view);
  double zoom = ts_viewport_get_zoom(vp), x = ts_viewport_get_x(vp);

  g_assert_true(gtk_widget_activate_action(w, "view.zoom-in", NULL));
  g_assert_cmpfloat(fabs(ts_viewport_get_zoom(vp) - zoom * 1.25), <, 1e-9);
  g_assert_true(gtk_widget_activate_action(w, "view.zoom-out", NULL));
  g_assert_cmpfloat(fabs(ts_viewport_get_zoom(vp) - zoom), <, 1e-9);
  g_assert_true(gtk_widget_activate_action(w, "view.pan", "(dd)", 1.0, 0.0));
  g_assert_cmpfloat(fabs(ts_viewport_get_x(vp) - (x + 0.15 * gtk_widget_get_width(w) / zoom)), <, 1e-6);
  g_assert_true(gtk_widget_activate_action(w, "view.zoom-fit", NULL));
  g_assert_cmpfloat(fabs(ts_viewport_get_x(vp) - x), <, 1e-6);

  /* zoom keeps the point under the pointer; limits hold */
  double cx, cy, cx2, cy2;
  ts_viewport_widget_to_canvas(vp, 120, 80, &cx, &cy);
  ts_viewport_zoom_at(vp, 2.5, 120, 80);
  ts_viewport_widget_to_canvas(vp, 120, 80, &cx2, &cy2);
  g_assert_cmpfloat(fabs(cx - cx2), <, 1e-9);
  g_assert_cmpfloat(fabs(cy - cy2), <, 1e-9);
  ts_viewport_zoom_at(vp, 1000, 0, 0);
  g_assert_cmpfloat(ts_viewport_get_zoom(vp), ==, ts_viewport_get_max_zoom(vp));
  ts_viewport_zoom_at(vp, 1e-9, 0, 0);
  g_assert_cmpfloat(ts_viewport_get_zoom(vp), ==, ts_viewport_get_min_zoom(vp));

  /* F fits the selection; Escape clears it */
  int series = item_named(f.view, "dense_[1-100]");
  ts_graph_view_select_item(f.view, series);
  g_assert_true(gtk_widget_activate_action(w, "view.zoom-selection", NULL));
  g_assert_true(on_screen(f.view, box_of(f.view, series)));
  g_assert_cmpfloat(ts_viewport_get_zoom(vp), >, 1);
  g_assert_true(gtk_widget_activate_action(w, "view.unselect", NULL));
  g_assert_cmpint(ts_graph_view_get_selected_item(f.view), ==, -1);
  g_assert_cmpint(f.last_selected, ==, -1);
  g_assert_cmpint(f.n_selected, ==, 2);

  /* a tall, thin graph: fit shows all of it; fit width (W) its inputs */
  ts_graph_view_set_expanded(f.view, series, TRUE);
  wait_for(laid_out, f.view);
  g_assert_true(gtk_widget_activate_action(w, "view.zoom-fit", NULL));
  const ts_view_layout *layout = ts_graph_view_get_layout(f.view);
  for (int i = 0; i < ts_view_layout_n_boxes(layout); i++)
    g_assert_true(on_screen(f.view, ts_view_layout_box(layout, i)));
  double lh = ts_view_layout_height(layout);
  g_assert_true(gtk_widget_activate_action(w, "view.zoom-width", NULL));
  g_assert_cmpfloat(lh * ts_viewport_get_zoom(vp), >, gtk_widget_get_height(w));
  g_assert_cmpfloat(ts_viewport_get_zoom(vp), >=, 0.5);
  g_assert_true(on_screen(f.view, box_of(f.view, item_named(f.view, "flatten"))));

  /* the minimap of a tall graph is no sliver: 72 px wide at least, its
   * height up to 45 % of the view's, clear of the legend */
  graphene_rect_t map, legend;
  g_assert_true(ts_graph_view_get_minimap_area(f.view, &map));
  g_assert_cmpfloat(map.size.width, >=, 72);
  g_assert_cmpfloat(map.size.height, >=, 150);
  g_assert_cmpfloat(map.size.height, <=, 0.45 * gtk_widget_get_height(w) + 1);
  g_assert_true(ts_graph_view_get_legend_area(f.view, &legend));
  g_assert_false(graphene_rect_intersection(&map, &legend, NULL));
  /* it never covers the selected node (what a reveal or F flew to): it
   * hides while it would, and comes back once the selection is cleared */
  int flatten = item_named(f.view, "flatten");
  const ts_view_box *fb = box_of(f.view, flatten);
  double z = ts_viewport_get_zoom(vp);
  ts_viewport_set(vp, z, fb->x + fb->width / 2 - (map.origin.x + map.size.width / 2) / z,
                  fb->y + fb->height / 2 - (map.origin.y + map.size.height / 2) / z);
  g_assert_true(ts_graph_view_get_minimap_area(f.view, &map)); /* over flatten, nothing selected */
  ts_graph_view_select_item(f.view, flatten);
  g_assert_false(ts_graph_view_get_minimap_area(f.view, &map));
  ts_graph_view_select_item(f.view, -1);
  g_assert_true(ts_graph_view_get_minimap_area(f.view, &map));
  g_assert_true(gtk_widget_activate_action(w, "view.zoom-reset", NULL));
  g_assert_cmpfloat(ts_viewport_get_zoom(vp), ==, 1);

  /* colouring redraws, never lays out again */
  ts_render_values *times = ts_render_values_new("ms");
  ts_graph_view_set_colouring(f.view, TS_RENDER_COLOUR_COMPUTE_TIME, times);
  g_assert_true(ts_graph_view_get_layout(f.view) == layout);
  g_assert_false(ts_graph_view_get_busy(f.view));
  g_assert_cmpint(ts_graph_view_get_colouring(f.view), ==, TS_RENDER_COLOUR_COMPUTE_TIME);
  ts_render_values_unref(times);
  ts_graph_view_set_dark(f.view, TRUE);
  g_assert_true(ts_graph_view_get_dark(f.view));
  gboolean dark = FALSE;
  g_object_get(f.view, "dark", &dark, NULL);
  g_assert_true(dark);
  fixture_clear(&f);
}

static void test_export(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f = { 0 };
  fixture_show(&f, trace_nested(&f));
  ts_graph_view_expand_all(f.view);
  wait_for(laid_out, f.view);
  const ts_view_layout *layout = ts_graph_view_get_layout(f.view);
  GError *error = NULL;

  g_autofree char *png = temp_path("whole.png");
  g_assert_true(ts_graph_view_export(f.view, png, TRUE, &error));
  g_assert_no_error(error);
  cairo_surface_t *s = cairo_image_surface_create_from_png(png);
  g_assert_cmpint(cairo_surface_status(s), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint(cairo_image_surface_get_width(s), >, (int)ts_view_layout_width(layout));
  g_assert_cmpint(cairo_image_surface_get_height(s), >, (int)ts_view_layout_height(layout));
  cairo_surface_destroy(s);

  /* what the view shows: the window's size, plus the legend beside it */
  g_assert_true(ts_graph_view_export(f.view, png, FALSE, &error));
  s = cairo_image_surface_create_from_png(png);
  g_assert_cmpint(cairo_surface_status(s), ==, CAIRO_STATUS_SUCCESS);
  double zoom = ts_viewport_get_zoom(ts_graph_view_get_viewport(f.view));
  g_assert_cmpint(cairo_image_surface_get_height(s), >=, gtk_widget_get_height(GTK_WIDGET(f.view)));
  g_assert_cmpint(cairo_image_surface_get_width(s), >=, gtk_widget_get_width(GTK_WIDGET(f.view)));
  g_assert_cmpfloat(zoom, >, 0);
  cairo_surface_destroy(s);
  g_unlink(png);

  g_autofree char *svg = temp_path("whole.svg");
  g_assert_true(ts_graph_view_export(f.view, svg, TRUE, &error));
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(svg, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, ">Tanh</text>"));
  g_assert_nonnull(strstr(text, ">then</text>"));
  g_unlink(svg);

  g_autofree char *dot = temp_path("graph.dot");
  g_assert_true(ts_graph_view_export(f.view, dot, TRUE, &error));
  g_autofree char *dot_text = NULL;
  g_assert_true(g_file_get_contents(dot, &dot_text, NULL, NULL));
  g_assert_true(g_str_has_prefix(dot_text, "digraph "));
  g_unlink(dot);

  g_autofree char *bad = temp_path("graph.jpeg");
  g_assert_false(ts_graph_view_export(f.view, bad, TRUE, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error(&error);
  fixture_clear(&f);
}

static void count_notify(guint *count)
{
  (*count)++;
}

/* The flight started and ended, on the newest layout. */
static gboolean flight_over(TsGraphView *view)
{
  const guint *changes = g_object_get_data(G_OBJECT(view), "animating-changes");
  return laid_out(view) && *changes >= 2 && !ts_graph_view_get_animating(view);
}

/* The fly-to animation ends on its target. */
static void test_fly_to(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  g_object_set(gtk_settings_get_default(), "gtk-enable-animations", TRUE, NULL);
  fixture f = { 0 };
  fixture_show(&f, trace_sequential(&f));
  ts_graph_view_expand_all(f.view);
  wait_for(laid_out, f.view);
  ts_graph_view_zoom_to_fit(f.view);
  /* the first layer, far from the fitted bottom */
  int item = item_named(f.view, "dense_101/MatMul");
  guint animating_changes = 0;
  g_signal_connect_swapped(f.view, "notify::animating", G_CALLBACK(count_notify), &animating_changes);
  ts_graph_view_reveal_item(f.view, item);
  /* it animates (started, then ended): wait for "animating" to go false */
  g_object_set_data(G_OBJECT(f.view), "animating-changes", &animating_changes);
  wait_for(flight_over, f.view);
  g_assert_cmpuint(animating_changes, ==, 2);
  g_assert_true(on_screen(f.view, box_of(f.view, item)));
  g_assert_cmpfloat(ts_viewport_get_zoom(ts_graph_view_get_viewport(f.view)), >=, 0.8);
  g_object_set(gtk_settings_get_default(), "gtk-enable-animations", FALSE, NULL);
  fixture_clear(&f);
}

/* The share of a canvas rectangle on screen under the legend, px^2. */
static double covered_part(TsViewport *vp, const graphene_rect_t *legend, double x, double y, double w, double h)
{
  double x0, y0, x1, y1;
  ts_viewport_canvas_to_widget(vp, x, y, &x0, &y0);
  ts_viewport_canvas_to_widget(vp, x + w, y + h, &x1, &y1);
  graphene_rect_t box = GRAPHENE_RECT_INIT(x0, y0, x1 - x0, y1 - y0), both;
  return graphene_rect_intersection(&box, legend, &both) ? both.size.width * both.size.height : 0;
}

/* The legend's share of the graph's top-level boxes on screen and, at a
 * zoom that draws them, of its edge labels (placed by a renderer of the
 * same layout), px^2. */
static double legend_cover(TsGraphView *view)
{
  graphene_rect_t legend;
  if (!ts_graph_view_get_legend_area(view, &legend))
    return 0;
  const ts_view_layout *layout = ts_graph_view_get_layout(view);
  TsViewport *vp = ts_graph_view_get_viewport(view);
  double covered = 0;
  for (int i = 0; i < ts_view_layout_n_boxes(layout); i++) {
    const ts_view_box *b = ts_view_layout_box(layout, i);
    if (b->parent < 0)
      covered += covered_part(vp, &legend, b->x, b->y, b->width, b->height);
  }
  if (ts_viewport_get_zoom(vp) >= TS_RENDER_DETAIL_ZOOM) {
    g_autoptr(ts_render) render = ts_render_new();
    ts_render_set_layout(render, ts_graph_view_get_model(view), layout);
    for (int i = 0; i < ts_view_layout_n_paths(layout); i++) {
      ts_render_rect r;
      if (ts_render_path_label_rect(render, i, &r))
        covered += covered_part(vp, &legend, r.x, r.y, r.width, r.height);
    }
  }
  return covered;
}

/* The legend touches those two sides (12 px in). */
static gboolean legend_in_corner(TsGraphView *view, gboolean left, gboolean top)
{
  graphene_rect_t r;
  g_assert_true(ts_graph_view_get_legend_area(view, &r));
  double w = gtk_widget_get_width(GTK_WIDGET(view)), h = gtk_widget_get_height(GTK_WIDGET(view));
  return fabs(left ? r.origin.x - 12 : w - 12 - (r.origin.x + r.size.width)) < 1 &&
         fabs(top ? r.origin.y - 12 : h - 12 - (r.origin.y + r.size.height)) < 1;
}

/* The legend: in a corner clear of the graph after a fit, wherever the
 * user puts it; collapsed to its header by L; bounded in height. */
static void test_legend(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f = { 0 };
  fixture_show(&f, trace_sequential(&f));
  GtkWidget *w = GTK_WIDGET(f.view);
  graphene_rect_t open, closed;
  /* fitted on arrival, in every expansion state */
  g_assert_cmpint(ts_graph_view_get_legend_corner(f.view), ==, TS_LEGEND_CORNER_AUTO);
  g_assert_cmpfloat(legend_cover(f.view), ==, 0);
  g_assert_true(gtk_widget_activate_action(w, "view.expand-all", NULL));
  wait_for(laid_out, f.view);
  g_assert_cmpfloat(legend_cover(f.view), ==, 0);
  g_assert_true(ts_graph_view_get_legend_area(f.view, &open));
  g_assert_cmpfloat(open.size.height, <=, 0.6 * gtk_widget_get_height(w) + 1);
  gboolean left = open.origin.x < gtk_widget_get_width(w) / 2, top = open.origin.y < gtk_widget_get_height(w) / 2;
  g_assert_true(legend_in_corner(f.view, left, top));

  /* L collapses it to its header, in the same corner */
  g_assert_true(gtk_widget_activate_action(w, "view.toggle-legend", NULL));
  g_assert_true(ts_graph_view_get_legend_collapsed(f.view));
  g_assert_true(ts_graph_view_get_legend_area(f.view, &closed));
  g_assert_cmpfloat(closed.size.height, <, 40);
  g_assert_cmpfloat(closed.size.height, <, open.size.height);
  g_assert_true(legend_in_corner(f.view, left, top));
  g_assert_true(gtk_widget_activate_action(w, "view.toggle-legend", NULL));
  g_assert_false(ts_graph_view_get_legend_collapsed(f.view));

  /* put in a corner: it stays there, and a fit keeps the graph clear of it */
  ts_graph_view_set_legend_corner(f.view, TS_LEGEND_CORNER_BOTTOM_RIGHT);
  g_assert_true(legend_in_corner(f.view, FALSE, FALSE));
  ts_graph_view_zoom_to_fit(f.view);
  g_assert_true(legend_in_corner(f.view, FALSE, FALSE));
  g_assert_cmpfloat(legend_cover(f.view), ==, 0);
  /* Shift+L: clockwise to the next */
  g_assert_true(gtk_widget_activate_action(w, "view.move-legend", NULL));
  g_assert_cmpint(ts_graph_view_get_legend_corner(f.view), ==, TS_LEGEND_CORNER_BOTTOM_LEFT);
  g_assert_true(legend_in_corner(f.view, TRUE, FALSE));
  g_object_set(f.view, "legend-corner", TS_LEGEND_CORNER_AUTO, NULL);

  /* collapse all (C) and back */
  g_assert_true(gtk_widget_activate_action(w, "view.collapse-all", NULL));
  wait_for(laid_out, f.view);
  g_assert_cmpint(n_visible(f.view), ==, 5); /* x, flatten, dense_[1-100], dropout, dense_101 */
  g_assert_cmpfloat(legend_cover(f.view), ==, 0);
  ts_graph_view_set_show_legend(f.view, FALSE);
  g_assert_false(ts_graph_view_get_legend_area(f.view, &open));
  fixture_clear(&f);

  /* a graph with control flow, closed and open (twelve op types) */
  fixture g = { 0 };
  fixture_show(&g, trace_nested(&g));
  g_assert_cmpfloat(legend_cover(g.view), ==, 0);
  ts_graph_view_expand_all(g.view);
  wait_for(laid_out, g.view);
  g_assert_cmpfloat(legend_cover(g.view), ==, 0);
  g_assert_false(ts_graph_view_get_legend_collapsed(g.view));
  fixture_clear(&g);

  /* a small view has no room for it: a fit collapses it to its header,
   * until the user opens it (then it stays open) */
  fixture small = { 0 };
  fixture_show_sized(&small, trace_nested(&small), 360, 300);
  ts_graph_view_expand_all(small.view);
  wait_for(laid_out, small.view);
  g_assert_true(ts_graph_view_get_legend_collapsed(small.view));
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(small.view), "view.toggle-legend", NULL));
  ts_graph_view_zoom_to_fit(small.view);
  g_assert_false(ts_graph_view_get_legend_collapsed(small.view));
  fixture_clear(&small);

  /* nor over an edge's label: power(x, 3) in the pane of a 1024x640
   * window, its first MatMul revealed (the debugger stopped there), where
   * every corner would hide an "f32[10,10]" */
  fixture labels = { 0 };
  fixture_show_sized(&labels, trace_power(&labels), 396, 350);
  ts_graph_view_reveal_item(labels.view, item_named(labels.view, "MatMul"));
  wait_for(laid_out, labels.view);
  g_assert_cmpfloat(legend_cover(labels.view), ==, 0);
  fixture_clear(&labels);
}

/* A reveal moves the view on its own, so it keeps the legend off the
 * graph: lstm_fn open in a pane of the app's size, at 125 %, its
 * lstm_cell/MatMul_1 revealed (what the node details' screenshot shows):
 * the legend, open after the fit, moves to a clear corner or collapses to
 * its header, and covers nothing, the minimap's corner left to it. */
static void test_legend_clear_after_reveal(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f = { 0 };
  f.module = ts_module_open("seeds");
  g_assert_nonnull(f.module);
  ts_function *fn = ts_module_lookup(f.module, "lstm_fn");
  ts_value args[3] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(10, 10)), TS_SPEC_VALUE(TS_F32, TS_SHAPE(10, 10)),
                       TS_SPEC_VALUE(TS_F32, TS_SHAPE(10, 10)) };
  ts_concrete *cf = ts_function_get_concrete(fn, args, 3);
  g_assert_nonnull(cf);
  fixture_show_sized(&f, ts_concrete_graph(cf), 556, 400);
  ts_graph_view_expand_all(f.view);
  wait_for(laid_out, f.view);
  ts_graph_view_zoom_to_fit(f.view);
  g_assert_false(ts_graph_view_get_legend_collapsed(f.view));
  TsViewport *vp = ts_graph_view_get_viewport(f.view);
  ts_viewport_set(vp, 1.25, ts_viewport_get_x(vp), ts_viewport_get_y(vp));
  ts_graph_view_reveal_item(f.view, item_named(f.view, "lstm_cell/MatMul_1"));
  wait_for(laid_out, f.view);
  g_assert_cmpfloat(ts_viewport_get_zoom(vp), ==, 1.25);
  g_assert_cmpfloat(legend_cover(f.view), ==, 0);
  /* nor did it push the minimap out of its corner (bottom right) onto the graph */
  graphene_rect_t map;
  g_assert_true(ts_graph_view_get_minimap_area(f.view, &map));
  g_assert_cmpfloat(map.origin.x, >, gtk_widget_get_width(GTK_WIDGET(f.view)) / 2);
  fixture_clear(&f);
}

static gboolean narrow_drawn(TsGraphView *view)
{
  return gtk_widget_get_width(GTK_WIDGET(view)) < 600 && ts_graph_view_get_drawn(view);
}

static gboolean wide_drawn(TsGraphView *view)
{
  return gtk_widget_get_width(GTK_WIDGET(view)) >= 600 && ts_graph_view_get_drawn(view);
}

/* A fitted view that shrinks (a smaller window, a panel dragged) fits
 * again: the whole graph stays in sight and the minimap stays off it; a
 * view the user moved keeps where it is. */
static void test_refit_on_resize(void)
{
  fixture f = { 0 };
  fixture_show_sized(&f, trace_sequential(&f), 900, 640);
  wait_for(laid_out, f.view);
  int series = item_named(f.view, "dense_[1-100]");
  ts_graph_view_set_expanded(f.view, series, TRUE); /* tall: it needs a small zoom to fit */
  wait_for(laid_out, f.view);
  ts_graph_view_zoom_to_fit(f.view);
  gtk_window_set_default_size(f.window, 500, 300);
  wait_for(narrow_drawn, f.view);
  const ts_view_layout *layout = ts_graph_view_get_layout(f.view);
  for (int i = 0; i < ts_view_layout_n_boxes(layout); i++)
    g_assert_true(on_screen(f.view, ts_view_layout_box(layout, i)));
  graphene_rect_t map;
  g_assert_false(ts_graph_view_get_minimap_area(f.view, &map));
  /* moved by the user: a resize leaves it */
  TsViewport *vp = ts_graph_view_get_viewport(f.view);
  ts_viewport_set(vp, 1, 0, 0);
  gtk_window_set_default_size(f.window, 900, 640);
  wait_for(wide_drawn, f.view);
  g_assert_cmpfloat(ts_viewport_get_zoom(vp), ==, 1);
  g_assert_cmpfloat(ts_viewport_get_x(vp), ==, 0);
  fixture_clear(&f);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  have_display = gtk_init_check();
  if (have_display)
    g_object_set(gtk_settings_get_default(), "gtk-enable-animations", FALSE, NULL);
  g_test_add_func("/view/shows-graph", test_shows_graph);
  g_test_add_func("/view/expand-collapse", test_expand_collapse);
  g_test_add_func("/view/series-folding", test_series_folding);
  g_test_add_func("/view/search-reveals", test_search_reveals);
  g_test_add_func("/view/navigation", test_navigation);
  g_test_add_func("/view/export", test_export);
  g_test_add_func("/view/fly-to", test_fly_to);
  g_test_add_func("/view/legend", test_legend);
  g_test_add_func("/view/legend-clear-after-reveal", test_legend_clear_after_reveal);
  g_test_add_func("/view/refit-on-resize", test_refit_on_resize);
  int ret = g_test_run();
  ts_release_all();
  return ret;
}
