/* ts-node-focus.c — the node in focus across the graph, the details, the
 * profiler and the debugger. */
#include "ts-node-focus.h"

#include "ts-graph-view.h"
#include "ts-profile-values.h"
#include "ts-tensor-view.h"

struct _TsNodeFocus {
  GObject parent_instance;
  TsNodePanels panels;
  gboolean details_wanted;
  gboolean revealing; /* a profiler row's node is being revealed: not a filter for the table */
};

enum { PROP_0, PROP_DETAILS_WANTED, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_MESSAGE, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TsNodeFocus, ts_node_focus, G_TYPE_OBJECT)

static TsGraphView *graph_view(TsNodeFocus *self)
{
  return TS_GRAPH_VIEW(ts_graph_pane_get_view(self->panels.graph_pane));
}

static gboolean comparing(TsNodeFocus *self)
{
  return g_strcmp0(gtk_stack_get_visible_child_name(self->panels.graph_stack), "compare") == 0;
}

static void message(TsNodeFocus *self, const char *text)
{
  g_signal_emit(self, signals[SIGNAL_MESSAGE], 0, text);
}

static void update_details_visible(TsNodeFocus *self)
{
  TsNodeDetails *details = self->panels.node_details;
  gtk_widget_set_visible(GTK_WIDGET(details), self->details_wanted && ts_node_details_get_node(details) != NULL);
}

/* What the profiler and the debugger know of the node shown in the
 * details: its time per run in the last profile, its last output. */
static void update_details_extras(TsNodeFocus *self)
{
  TsNodeDetails *details = self->panels.node_details;
  const ts_node *node = ts_node_details_get_node(details);
  const tsp_stats *stats = node ? ts_profiler_panel_get_node_stats(self->panels.profiler_panel) : NULL;
  g_autofree char *path = node ? ts_node_path(node) : NULL; /* the profile's and debugger's name for it */
  for (int i = 0; stats && i < stats->n; i++)
    if (g_strcmp0(stats->rows[i].key, path) == 0)
      ts_node_details_set_timing(details, stats->rows[i].device, (gint64)stats->rows[i].mean_ns);
  const char *device = NULL;
  ts_tensor *output = path ? ts_debug_panel_get_last_output(self->panels.debug_panel, path, &device) : NULL;
  if (output) {
    GtkWidget *view = ts_tensor_view_new();
    ts_tensor_view_set_compact(TS_TENSOR_VIEW(view), TRUE);
    ts_tensor_view_set_copy(TS_TENSOR_VIEW(view), output, ts_node_name(node), device);
    ts_node_details_set_value_view(details, view);
  }
}

static void show_in_details(TsNodeFocus *self, const ts_node *node)
{
  ts_node_details_set_node(self->panels.node_details, node);
  update_details_extras(self);
  update_details_visible(self);
}

/* A node selected in the graph: in the details, and the profiler's table
 * keeps its row. */
static void on_graph_node_selected(TsGraphView *view, int item, gpointer node, TsNodeFocus *self)
{
  show_in_details(self, node);
  if (!self->revealing)
    ts_profiler_panel_set_node_filter(self->panels.profiler_panel, node);
}

void ts_node_focus_show_graph_selection(TsNodeFocus *self)
{
  g_return_if_fail(TS_IS_NODE_FOCUS(self));
  TsGraphView *view = graph_view(self);
  int item = ts_graph_view_get_selected_item(view);
  ts_view_model *model = ts_graph_view_get_model(view);
  show_in_details(self, item >= 0 && model ? ts_view_item_node(model, item) : NULL);
}

/* A node selected in the compare pane: an optimized node shown before and
 * after the passes stands for the traced nodes the pane matches it with
 * (its graph, read back from the worker, does not say). */
static void on_compare_node_selected(TsGraphView *view, int item, gpointer node, TsNodeFocus *self)
{
  TsComparePane *pane = self->panels.compare_pane;
  if (!comparing(self))
    return;
  show_in_details(self, node);
  if (node && ts_compare_pane_get_passes_concrete(pane) && GTK_WIDGET(view) == ts_compare_pane_get_view(pane, TRUE)) {
    int n = 0;
    const ts_node *const *origins = ts_compare_pane_get_matches(pane, node, &n);
    ts_node_details_set_origins(self->panels.node_details, origins, n);
  }
}

/* A row's node: in the graph it belongs to, a compared one included. */
static gboolean reveal_anywhere(TsNodeFocus *self, const ts_node *node)
{
  if (!comparing(self))
    return ts_graph_view_reveal(graph_view(self), node);
  for (int side = 0; side < 2; side++)
    if (ts_graph_view_reveal(TS_GRAPH_VIEW(ts_compare_pane_get_view(self->panels.compare_pane, side)), node))
      return TRUE;
  return FALSE;
}

static void on_details_activate_node(TsNodeDetails *details, gpointer node, TsNodeFocus *self)
{
  if (!reveal_anywhere(self, node)) {
    g_autofree char *text = g_strdup_printf("%s is not in the graph shown", ts_node_name(node));
    message(self, text);
  }
}

/* Opens subgraph `index` of an If/While op: the op item's child of that name. */
static void on_details_activate_subgraph(TsNodeDetails *details, gpointer node, int index, TsNodeFocus *self)
{
  ts_view_model *model = ts_graph_view_get_model(graph_view(self));
  int op = model ? ts_view_model_item_for_node(model, ts_node_graph(node), ts_node_id(node)) : -1;
  const char *name = ts_op_subgraph_name(ts_node_op(node), index);
  for (int i = 0; op >= 0 && name && i < ts_view_item_n_children(model, op); i++) {
    int child = ts_view_item_child(model, op, i);
    if (g_strcmp0(ts_view_item_label(model, child), name) == 0) {
      ts_graph_view_set_expanded(graph_view(self), child, TRUE);
      return;
    }
  }
  g_autofree char *text = g_strdup_printf("%s's %s is not in the graph shown", ts_node_name(node), name ? name : "subgraph");
  message(self, text);
}

/* The node of that path (ts_node_path) in the graph pane's graph of
 * function (any, when function is NULL), or NULL. */
static const ts_node *shown_node(TsNodeFocus *self, const char *path, const char *function)
{
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(self->panels.graph_pane);
  if (!path || !cf || !cf->graph || (function && g_strcmp0(cf->function, function) != 0))
    return NULL;
  return ts_profile_find_node(cf->graph, path);
}

/* A profiler row of one node: that node selected and shown in the graph. */
static void on_profile_node_selected(TsProfilerPanel *panel, const char *name, TsNodeFocus *self)
{
  const ts_node *node = shown_node(self, name, NULL);
  if (!node)
    return;
  self->revealing = TRUE;
  ts_graph_view_reveal(graph_view(self), node);
  self->revealing = FALSE;
}

/* The op the debugger shows, selected in the graph of its function when
 * that graph is shown. */
static void on_debug_op_shown(TsDebugPanel *panel, const char *path, const char *function, TsNodeFocus *self)
{
  const ts_node *node = shown_node(self, path, function);
  if (node)
    ts_graph_view_reveal(graph_view(self), node);
}

TsNodeFocus *ts_node_focus_new(const TsNodePanels *panels)
{
  g_return_val_if_fail(panels != NULL, NULL);
  TsNodeFocus *self = g_object_new(TS_TYPE_NODE_FOCUS, NULL);
  self->panels = *panels;
  g_signal_connect(graph_view(self), "node-selected", G_CALLBACK(on_graph_node_selected), self);
  for (int side = 0; side < 2; side++)
    g_signal_connect(ts_compare_pane_get_view(panels->compare_pane, side), "node-selected",
                     G_CALLBACK(on_compare_node_selected), self);
  g_signal_connect(panels->node_details, "activate-node", G_CALLBACK(on_details_activate_node), self);
  g_signal_connect(panels->node_details, "activate-subgraph", G_CALLBACK(on_details_activate_subgraph), self);
  g_signal_connect(panels->profiler_panel, "node-selected", G_CALLBACK(on_profile_node_selected), self);
  g_signal_connect_swapped(panels->profiler_panel, "session-ready", G_CALLBACK(update_details_extras), self);
  g_signal_connect(panels->debug_panel, "op-shown", G_CALLBACK(on_debug_op_shown), self);
  return self;
}

void ts_node_focus_shut_down(TsNodeFocus *self)
{
  g_return_if_fail(TS_IS_NODE_FOCUS(self));
  if (!self->panels.graph_pane)
    return;
  /* the views clear their selection as they go: no details to show then */
  g_signal_handlers_disconnect_by_data(graph_view(self), self);
  for (int side = 0; side < 2; side++)
    g_signal_handlers_disconnect_by_data(ts_compare_pane_get_view(self->panels.compare_pane, side), self);
  g_signal_handlers_disconnect_by_data(self->panels.node_details, self);
  g_signal_handlers_disconnect_by_data(self->panels.profiler_panel, self);
  g_signal_handlers_disconnect_by_data(self->panels.debug_panel, self);
  self->panels = (TsNodePanels){ 0 };
}

static void ts_node_focus_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  switch (prop_id) {
  case PROP_DETAILS_WANTED: g_value_set_boolean(value, TS_NODE_FOCUS(object)->details_wanted); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_node_focus_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  TsNodeFocus *self = TS_NODE_FOCUS(object);
  switch (prop_id) {
  case PROP_DETAILS_WANTED:
    if (self->details_wanted == g_value_get_boolean(value))
      break;
    self->details_wanted = g_value_get_boolean(value);
    if (self->panels.node_details)
      update_details_visible(self);
    g_object_notify_by_pspec(object, pspec);
    break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_node_focus_dispose(GObject *object)
{
  ts_node_focus_shut_down(TS_NODE_FOCUS(object));
  G_OBJECT_CLASS(ts_node_focus_parent_class)->dispose(object);
}

static void ts_node_focus_class_init(TsNodeFocusClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->get_property = ts_node_focus_get_property;
  object_class->set_property = ts_node_focus_set_property;
  object_class->dispose = ts_node_focus_dispose;
  properties[PROP_DETAILS_WANTED] = g_param_spec_boolean("details-wanted", NULL, NULL, TRUE,
                                                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                                           G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
  signals[SIGNAL_MESSAGE] = g_signal_new("message", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                         NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void ts_node_focus_init(TsNodeFocus *self)
{
  self->details_wanted = TRUE;
}
