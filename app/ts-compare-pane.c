/* ts-compare-pane.c — two graphs side by side, coloured by their diff or
 * by what the optimizer's passes made of them. */
#include "ts-compare-pane.h"

#include <adwaita.h>

#include "ts-graph-diff.h"
#include "ts-graph-view.h"

struct _TsComparePane {
  GtkWidget parent_instance;
  GtkLabel *title_label;
  GtkLabel *summary_label;
  GtkLabel *passes_label;
  GtkLabel *left_label;
  GtkLabel *right_label;
  AdwBin *left_bin;
  AdwBin *right_bin;
  GtkWidget *views[2];
  TsLoadedModule *module;
  TsConcreteInfo *passes;       /* shown before and after the passes, else NULL */
  ts_render_values *colours[2];
};

G_DEFINE_FINAL_TYPE(TsComparePane, ts_compare_pane, GTK_TYPE_WIDGET)

static char *concrete_title(const TsConcreteInfo *cf)
{
  return g_strdup_printf("%s%s", cf->function, cf->signature);
}

/* One table for both views, its categories made kind by kind so that the
 * legend lists them in that order; equal nodes get none (the neutral
 * "no data" colour). */
static ts_render_values *diff_values(const ts_graph_diff *diff, const ts_graph *const graphs[2])
{
  ts_render_values *values = ts_render_values_new(NULL);
  for (int kind = TS_GRAPH_DIFF_CHANGED; kind < TS_GRAPH_DIFF_N_KINDS; kind++)
    for (int side = 0; side < 2; side++)
      for (int i = 0; graphs[side] && i < ts_graph_n_nodes(graphs[side]); i++) {
        const ts_node *node = ts_graph_node(graphs[side], i);
        if ((int)ts_graph_diff_kind_of(diff, node) == kind)
          ts_render_values_set_category(values, node, ts_graph_diff_kind_name(kind));
      }
  return values;
}

static void set_colours(TsComparePane *self, int side, ts_render_values *values)
{
  if (values)
    ts_render_values_ref(values);
  g_clear_pointer(&self->colours[side], ts_render_values_unref);
  self->colours[side] = values;
  ts_graph_view_set_colouring(TS_GRAPH_VIEW(self->views[side]), TS_RENDER_COLOUR_FUNCTION, values);
}

/* No passes shown any more: their lines go. */
static void hide_pass_lines(TsComparePane *self)
{
  gtk_widget_set_visible(GTK_WIDGET(self->passes_label), FALSE);
  gtk_label_set_label(self->passes_label, "");
}

void ts_compare_pane_show(TsComparePane *self, TsLoadedModule *module, const TsConcreteInfo *left,
                          const TsConcreteInfo *right)
{
  g_return_if_fail(TS_IS_COMPARE_PANE(self) && TS_IS_LOADED_MODULE(module));
  g_return_if_fail(left != NULL && right != NULL);
  g_set_object(&self->module, module);
  TsConcreteInfo *passes = g_steal_pointer(&self->passes); /* its graphs go once the views let go */
  hide_pass_lines(self);
  const ts_graph *graphs[2] = { left->graph, right->graph };
  g_autoptr(ts_graph_diff) diff = ts_graph_diff_new(graphs[0], graphs[1]);
  g_autoptr(ts_render_values) values = diff_values(diff, graphs);
  for (int side = 0; side < 2; side++) {
    ts_graph_view_set_graph(TS_GRAPH_VIEW(self->views[side]), graphs[side]);
    set_colours(self, side, values);
  }
  g_clear_pointer(&passes, ts_concrete_info_unref);
  g_autofree char *title = g_strdup_printf("Comparing %s", left->function);
  gtk_label_set_label(self->title_label, title);
  g_autofree char *summary = ts_graph_diff_summary(diff, left->signature, right->signature);
  gtk_label_set_label(self->summary_label, summary);
  g_autofree char *left_title = concrete_title(left);
  g_autofree char *right_title = concrete_title(right);
  gtk_label_set_label(self->left_label, left_title);
  gtk_label_set_label(self->right_label, right_title);
}

/* ---- before and after the passes ------------------------------------------------ */

/* Every node of g and its subgraphs (the views show both). */
static void walk(const ts_graph *g, GPtrArray *nodes)
{
  for (int id = 0; id < ts_graph_n_nodes(g); id++) {
    const ts_node *n = ts_graph_node(g, id);
    g_ptr_array_add(nodes, (gpointer)n);
    for (int s = 0; s < ts_node_n_subgraphs(n); s++)
      walk(ts_node_subgraph(n, s), nodes);
  }
}

/* What the passes made of a node of either graph: an optimized node by
 * what it stands for, a traced one by the first node standing for it. */
static ts_pass_change change_of(const TsWorkerOrigins *origins, const ts_node *node, gboolean optimized)
{
  int n = 0;
  if (optimized) {
    const ts_node *const *of = ts_worker_origins_traced(origins, node, &n);
    return ts_pass_change_of(node, of, n);
  }
  const ts_node *const *by = ts_worker_origins_optimized(origins, node, &n);
  if (n == 0)
    return TS_PASS_REMOVED;
  int k = 0;
  const ts_node *const *of = ts_worker_origins_traced(origins, by[0], &k);
  return ts_pass_change_of(by[0], of, k);
}

#define MATCHES "matches the selection"

/* One side's colours: its nodes by change, kind by kind so that the
 * legend lists them in that order (kept nodes get none), and `matches`
 * over them. */
static ts_render_values *passes_colours(const TsConcreteInfo *cf, int side, const ts_node *const *matches,
                                        int n_matches)
{
  g_autoptr(GPtrArray) nodes = g_ptr_array_new();
  walk(side ? cf->optimized : cf->graph, nodes);
  g_autofree guint8 *changes = g_new(guint8, nodes->len + 1);
  for (guint i = 0; i < nodes->len; i++)
    changes[i] = (guint8)change_of(cf->origins, nodes->pdata[i], side);
  ts_render_values *values = ts_render_values_new(NULL);
  for (int change = TS_PASS_FUSED; change < TS_PASS_N_CHANGES; change++)
    for (guint i = 0; i < nodes->len; i++)
      if (changes[i] == change)
        ts_render_values_set_category(values, nodes->pdata[i], ts_pass_change_name(change));
  for (int i = 0; i < n_matches; i++)
    ts_render_values_set_category(values, matches[i], MATCHES);
  return values;
}

/* "302 traced nodes, 120 after the passes: 101 fused, 3 removed". */
static char *passes_summary(const TsConcreteInfo *cf)
{
  int counts[TS_PASS_N_CHANGES] = { 0 };
  g_autoptr(GPtrArray) traced = g_ptr_array_new();
  g_autoptr(GPtrArray) optimized = g_ptr_array_new();
  walk(cf->graph, traced);
  walk(cf->optimized, optimized);
  for (guint i = 0; i < optimized->len; i++)
    counts[change_of(cf->origins, optimized->pdata[i], TRUE)]++;
  for (guint i = 0; i < traced->len; i++)
    counts[TS_PASS_REMOVED] += change_of(cf->origins, traced->pdata[i], FALSE) == TS_PASS_REMOVED;
  return ts_pass_changes_summary((int)traced->len, (int)optimized->len, counts);
}

/* The groups around nodes opened, so that their colour shows. */
static void open_groups(GtkWidget *view, const ts_node *const *nodes, int n)
{
  ts_view_model *model = ts_graph_view_get_model(TS_GRAPH_VIEW(view));
  for (int i = 0; model && i < n; i++) {
    int item = ts_view_model_item_for_node(model, ts_node_graph(nodes[i]), ts_node_id(nodes[i]));
    int parent = item >= 0 ? ts_view_item_parent(model, item) : -1;
    if (parent >= 0 && ts_view_item_parent(model, parent) >= 0)
      ts_graph_view_set_expanded(TS_GRAPH_VIEW(view), parent, TRUE);
  }
}

/* A node selected on one side: what it matches coloured on the other. */
static void on_node_selected(TsGraphView *view, int item, gpointer node, TsComparePane *self)
{
  if (!self->passes)
    return;
  int side = GTK_WIDGET(view) == self->views[1];
  int n = 0;
  const ts_node *const *matches = node ? ts_compare_pane_get_matches(self, node, &n) : NULL;
  g_autoptr(ts_render_values) plain = passes_colours(self->passes, side, NULL, 0);
  g_autoptr(ts_render_values) lit = passes_colours(self->passes, !side, matches, n);
  set_colours(self, side, plain);
  set_colours(self, !side, lit);
  open_groups(self->views[!side], matches, n);
}

void ts_compare_pane_show_passes(TsComparePane *self, TsConcreteInfo *cf)
{
  g_return_if_fail(TS_IS_COMPARE_PANE(self));
  g_return_if_fail(cf != NULL && cf->graph != NULL && cf->optimized != NULL && cf->origins != NULL);
  g_clear_object(&self->module);
  TsConcreteInfo *old = g_steal_pointer(&self->passes); /* its graphs go once the views let go */
  self->passes = ts_concrete_info_ref(cf);
  const ts_graph *graphs[2] = { cf->graph, cf->optimized };
  for (int side = 0; side < 2; side++) {
    ts_graph_view_set_graph(TS_GRAPH_VIEW(self->views[side]), graphs[side]);
    g_autoptr(ts_render_values) values = passes_colours(cf, side, NULL, 0);
    set_colours(self, side, values);
  }
  g_clear_pointer(&old, ts_concrete_info_unref);
  g_autofree char *title = g_strdup_printf("%s before and after the optimizer's passes", cf->function);
  gtk_label_set_label(self->title_label, title);
  g_autofree char *summary = passes_summary(cf);
  gtk_label_set_label(self->summary_label, summary);
  g_autofree char *lines = g_strchomp(g_strdup(*cf->pass_summary ? cf->pass_summary : "no pass ran"));
  gtk_label_set_label(self->passes_label, lines);
  gtk_widget_set_visible(GTK_WIDGET(self->passes_label), TRUE);
  g_autofree char *left = g_strdup_printf("%s%s as traced · %d nodes", cf->function, cf->signature,
                                          ts_graph_n_nodes(cf->graph));
  g_autofree char *right = g_strdup_printf("after the passes · %d nodes", ts_graph_n_nodes(cf->optimized));
  gtk_label_set_label(self->left_label, left);
  gtk_label_set_label(self->right_label, right);
}

const ts_node *const *ts_compare_pane_get_matches(TsComparePane *self, const ts_node *node, int *n)
{
  g_return_val_if_fail(TS_IS_COMPARE_PANE(self) && n != NULL, NULL);
  *n = 0;
  if (!self->passes || !node)
    return NULL;
  const ts_node *const *matches = ts_worker_origins_traced(self->passes->origins, node, n);
  return matches ? matches : ts_worker_origins_optimized(self->passes->origins, node, n);
}

TsConcreteInfo *ts_compare_pane_get_passes_concrete(TsComparePane *self)
{
  g_return_val_if_fail(TS_IS_COMPARE_PANE(self), NULL);
  return self->passes;
}

ts_render_values *ts_compare_pane_get_colours(TsComparePane *self, gboolean right)
{
  g_return_val_if_fail(TS_IS_COMPARE_PANE(self), NULL);
  return self->colours[right ? 1 : 0];
}

const char *ts_compare_pane_get_passes(TsComparePane *self)
{
  g_return_val_if_fail(TS_IS_COMPARE_PANE(self), NULL);
  return gtk_label_get_label(self->passes_label);
}

void ts_compare_pane_clear(TsComparePane *self)
{
  g_return_if_fail(TS_IS_COMPARE_PANE(self));
  TsConcreteInfo *passes = g_steal_pointer(&self->passes); /* its graphs go once the views let go */
  hide_pass_lines(self);
  for (int side = 0; side < 2; side++) {
    ts_graph_view_set_graph(TS_GRAPH_VIEW(self->views[side]), NULL);
    set_colours(self, side, NULL);
  }
  g_clear_pointer(&passes, ts_concrete_info_unref);
  gtk_label_set_label(self->summary_label, "");
  g_clear_object(&self->module);
}

const char *ts_compare_pane_get_summary(TsComparePane *self)
{
  g_return_val_if_fail(TS_IS_COMPARE_PANE(self), NULL);
  return gtk_label_get_label(self->summary_label);
}

GtkWidget *ts_compare_pane_get_view(TsComparePane *self, gboolean right)
{
  g_return_val_if_fail(TS_IS_COMPARE_PANE(self), NULL);
  return self->views[right ? 1 : 0];
}

static void ts_compare_pane_dispose(GObject *object)
{
  TsComparePane *self = TS_COMPARE_PANE(object);
  for (int side = 0; side < 2; side++)
    if (self->views[side])
      g_signal_handlers_disconnect_by_data(self->views[side], self);
  /* the views must let go of the graphs before the module goes */
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_COMPARE_PANE);
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  self->views[0] = self->views[1] = NULL;
  for (int side = 0; side < 2; side++)
    g_clear_pointer(&self->colours[side], ts_render_values_unref);
  g_clear_pointer(&self->passes, ts_concrete_info_unref);
  g_clear_object(&self->module);
  G_OBJECT_CLASS(ts_compare_pane_parent_class)->dispose(object);
}

static void ts_compare_pane_class_init(TsComparePaneClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  G_OBJECT_CLASS(klass)->dispose = ts_compare_pane_dispose;
  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/io/github/tracescope/Tracescope/ts-compare-pane.ui");
  gtk_widget_class_bind_template_child(widget_class, TsComparePane, title_label);
  gtk_widget_class_bind_template_child(widget_class, TsComparePane, summary_label);
  gtk_widget_class_bind_template_child(widget_class, TsComparePane, passes_label);
  gtk_widget_class_bind_template_child(widget_class, TsComparePane, left_label);
  gtk_widget_class_bind_template_child(widget_class, TsComparePane, right_label);
  gtk_widget_class_bind_template_child(widget_class, TsComparePane, left_bin);
  gtk_widget_class_bind_template_child(widget_class, TsComparePane, right_bin);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "tscomparepane");
}

static void ts_compare_pane_init(TsComparePane *self)
{
  gtk_widget_init_template(GTK_WIDGET(self));
  self->views[0] = ts_graph_view_new();
  self->views[1] = ts_graph_view_new();
  adw_bin_set_child(self->left_bin, self->views[0]);
  adw_bin_set_child(self->right_bin, self->views[1]);
  for (int side = 0; side < 2; side++)
    g_signal_connect(self->views[side], "node-selected", G_CALLBACK(on_node_selected), self);
}
