/* ts-compare-pane.c — two graphs side by side, coloured by their diff. */
#include "ts-compare-pane.h"

#include <adwaita.h>

#include "ts-graph-diff.h"
#include "ts-graph-view.h"

struct _TsComparePane {
  GtkWidget parent_instance;
  GtkLabel *title_label;
  GtkLabel *summary_label;
  GtkLabel *left_label;
  GtkLabel *right_label;
  AdwBin *left_bin;
  AdwBin *right_bin;
  GtkWidget *views[2];
  TsLoadedModule *module;
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

void ts_compare_pane_show(TsComparePane *self, TsLoadedModule *module, const TsConcreteInfo *left,
                          const TsConcreteInfo *right)
{
  g_return_if_fail(TS_IS_COMPARE_PANE(self) && TS_IS_LOADED_MODULE(module));
  g_return_if_fail(left != NULL && right != NULL);
  g_set_object(&self->module, module);
  const ts_graph *graphs[2] = { left->graph, right->graph };
  g_autoptr(ts_graph_diff) diff = ts_graph_diff_new(graphs[0], graphs[1]);
  g_autoptr(ts_render_values) values = diff_values(diff, graphs);
  for (int side = 0; side < 2; side++) {
    ts_graph_view_set_graph(TS_GRAPH_VIEW(self->views[side]), graphs[side]);
    ts_graph_view_set_colouring(TS_GRAPH_VIEW(self->views[side]), TS_RENDER_COLOUR_FUNCTION, values);
  }
  g_autofree char *title = g_strdup_printf("Comparing %s", left->function);
  gtk_label_set_label(self->title_label, title);
  g_autofree char *summary = ts_graph_diff_summary(diff, left->signature, right->signature);
  gtk_label_set_label(self->summary_label, summary);
  g_autofree char *left_title = concrete_title(left);
  g_autofree char *right_title = concrete_title(right);
  gtk_label_set_label(self->left_label, left_title);
  gtk_label_set_label(self->right_label, right_title);
}

void ts_compare_pane_clear(TsComparePane *self)
{
  g_return_if_fail(TS_IS_COMPARE_PANE(self));
  for (int side = 0; side < 2; side++) {
    ts_graph_view_set_graph(TS_GRAPH_VIEW(self->views[side]), NULL);
    ts_graph_view_set_colouring(TS_GRAPH_VIEW(self->views[side]), TS_RENDER_COLOUR_FUNCTION, NULL);
  }
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
  /* the views must let go of the graphs before the module goes */
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_COMPARE_PANE);
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  self->views[0] = self->views[1] = NULL;
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
}
