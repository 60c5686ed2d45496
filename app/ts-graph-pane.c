/* ts-graph-pane.c — the concrete function's header (title, zoom, graph
 * menu) over the viewer's TsGraphView. */
#include "ts-graph-pane.h"

#include <adwaita.h>
#include <string.h>

#include "ts-graph-view.h"
#include "ts-profile-values.h"
#include "ts-profiler-panel.h"
#include "ts-sidebar-item.h"
#include "ts-title-row.h"
#include "ts-workspace.h"

struct _TsGraphPane {
  GtkWidget parent_instance;
  GtkStack *stack;
  AdwStatusPage *status_page;
  GtkLabel *title_label;
  GtkLabel *subtitle_label;
  AdwBin *graph_bin;
  GtkMenuButton *compare_button;
  GtkButton *zoom_button;
  guint zoom_idle;
  GMenu *compare_menu;
  GtkWidget *graph_view;
  TsLoadedModule *module;
  TsConcreteInfo *concrete;
  char *colour_mode;            /* the GSettings nick */
  ts_render_values *compute_times;
  TsWorkspace *workspace;       /* its selection is shown; its mode says what an untraced function's page asks for */
  TsProfilerPanel *profiler;    /* its sessions' times colour the nodes */
  char *untraced;               /* the function whose untraced page shows, or NULL */
  char *untraced_failure;       /* and why its last trace failed, or NULL */
};

G_DEFINE_FINAL_TYPE(TsGraphPane, ts_graph_pane, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_WORKSPACE, PROP_PROFILER, PROP_COLOUR_MODE, PROP_SHOW_MINIMAP, N_PROPS };
static GParamSpec *properties[N_PROPS];

static GtkWidget *graph_view_new(void)
{
  return ts_graph_view_new();
}

static void graph_view_set(GtkWidget *view, const ts_graph *graph)
{
  ts_graph_view_set_graph(TS_GRAPH_VIEW(view), graph);
}

static void graph_view_set_colour_mode(GtkWidget *view, const char *mode, ts_render_values *compute_times)
{
  static const struct {
    const char *nick;
    ts_render_colouring colouring;
  } MODES[] = {
    { "op-type", TS_RENDER_COLOUR_OP_TYPE },
    { "device", TS_RENDER_COLOUR_DEVICE },
    { "compute-time", TS_RENDER_COLOUR_COMPUTE_TIME },
  };
  for (guint i = 0; i < G_N_ELEMENTS(MODES); i++)
    if (g_strcmp0(MODES[i].nick, mode) == 0)
      ts_graph_view_set_colouring(TS_GRAPH_VIEW(view), MODES[i].colouring,
                                  MODES[i].colouring == TS_RENDER_COLOUR_OP_TYPE ? NULL : compute_times);
}

/* The zoom level between the zoom buttons: "100%". */
static gboolean show_zoom(gpointer data)
{
  TsGraphPane *self = data;
  self->zoom_idle = 0;
  TsViewport *viewport = ts_graph_view_get_viewport(TS_GRAPH_VIEW(self->graph_view));
  g_autofree char *text = g_strdup_printf("%.0f%%", 100 * ts_viewport_get_zoom(viewport));
  gtk_button_set_label(self->zoom_button, text);
  return G_SOURCE_REMOVE;
}

/* The view zooms while it is allocated (a fit): a new label then would
 * resize the header in the middle of the layout, so it waits for an idle. */
static void on_zoom_changed(TsGraphPane *self)
{
  if (!self->zoom_idle)
    self->zoom_idle = g_idle_add(show_zoom, self);
}

/* graph.NAME runs the view's view.NAME: the header is outside the view,
 * where its actions do not reach. */
static void forward_action(GtkWidget *widget, const char *name, GVariant *parameter)
{
  TsGraphPane *self = TS_GRAPH_PANE(widget);
  g_autofree char *action = g_strconcat("view.", name + strlen("graph."), NULL);
  gtk_widget_activate_action_variant(self->graph_view, action, parameter);
}

/* "Compare with Optimized Graph": the window shows the two graphs. */
static void compare_passes(GtkWidget *widget, const char *name, GVariant *parameter)
{
  gtk_widget_activate_action(widget, "win.compare-passes", NULL);
}

static const char *const FORWARDED[] = {
  "graph.zoom-in", "graph.zoom-out", "graph.zoom-fit", "graph.zoom-width", "graph.zoom-reset",
  "graph.expand-all", "graph.collapse-all",
};

void ts_graph_pane_set_colour_mode(TsGraphPane *self, const char *mode)
{
  g_return_if_fail(TS_IS_GRAPH_PANE(self) && mode != NULL);
  g_free(self->colour_mode);
  self->colour_mode = g_strdup(mode);
  graph_view_set_colour_mode(self->graph_view, mode, self->compute_times);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_COLOUR_MODE]);
}

void ts_graph_pane_set_compute_times(TsGraphPane *self, ts_render_values *values)
{
  g_return_if_fail(TS_IS_GRAPH_PANE(self));
  if (values)
    ts_render_values_ref(values);
  g_clear_pointer(&self->compute_times, ts_render_values_unref);
  self->compute_times = values;
  if (self->colour_mode)
    graph_view_set_colour_mode(self->graph_view, self->colour_mode, values);
}

/* "Compare With…" lists cf's function's other concrete functions, each
 * item win.compare-concrete (function, cf's index, its index). */
static void update_compare_menu(TsGraphPane *self, TsConcreteInfo *cf)
{
  g_menu_remove_all(self->compare_menu);
  TsModuleFunction *fn = ts_loaded_module_lookup(self->module, cf->function);
  gboolean listed = fn && ts_module_function_concrete(fn, cf->index) == cf;
  for (guint i = 0; listed && i < fn->concrete->len; i++) {
    if ((int)i == cf->index)
      continue;
    TsConcreteInfo *other = g_ptr_array_index(fn->concrete, i);
    g_autoptr(GMenuItem) item = g_menu_item_new(other->signature, NULL);
    g_menu_item_set_action_and_target_value(item, "win.compare-concrete",
                                            g_variant_new("(sii)", fn->name, cf->index, (int)i));
    g_menu_append_item(self->compare_menu, item);
  }
  gtk_widget_set_visible(GTK_WIDGET(self->compare_button),
                         g_menu_model_get_n_items(G_MENU_MODEL(self->compare_menu)) > 0);
}

void ts_graph_pane_show_concrete(TsGraphPane *self, TsLoadedModule *module, TsConcreteInfo *cf)
{
  g_return_if_fail(TS_IS_GRAPH_PANE(self) && TS_IS_LOADED_MODULE(module) && cf != NULL);
  g_set_object(&self->module, module);
  /* the old graph goes only once the view has let go of it (and told its
   * listeners that nothing of it is selected) */
  TsConcreteInfo *old = g_steal_pointer(&self->concrete);
  self->concrete = ts_concrete_info_ref(cf);
  g_autofree char *title = g_strdup_printf("%s%s", cf->function, cf->signature);
  gtk_label_set_label(self->title_label, title);
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->title_label), title); /* ellipsized when the pane is narrowest */
  g_autofree char *subtitle = cf->graph ? g_strdup_printf("%d nodes · graph %s", ts_graph_n_nodes(cf->graph),
                                                          ts_graph_name(cf->graph))
                                        : g_strdup("the worker could not send this graph");
  gtk_label_set_label(self->subtitle_label, subtitle);
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->subtitle_label), subtitle);
  graph_view_set(self->graph_view, cf->graph);
  g_clear_pointer(&old, ts_concrete_info_unref);
  update_compare_menu(self, cf);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "graph.compare-passes", cf->graph != NULL);
  gtk_stack_set_visible_child_name(self->stack, "graph");
}

static void set_status(TsGraphPane *self, const char *icon_name, const char *title, const char *description)
{
  graph_view_set(self->graph_view, NULL);
  g_clear_pointer(&self->concrete, ts_concrete_info_unref);
  g_clear_object(&self->module);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "graph.compare-passes", FALSE);
  adw_status_page_set_icon_name(self->status_page,
                                icon_name ? icon_name : "io.github.tracescope.Tracescope-symbolic");
  adw_status_page_set_title(self->status_page, title ? title : "No Function Selected");
  /* the page reads its description as markup; ours is plain text (an
   * engine message holds "&x" and "<") */
  g_autofree char *escaped = description ? g_markup_escape_text(description, -1) : NULL;
  adw_status_page_set_description(self->status_page, escaped);
  gtk_stack_set_visible_child_name(self->stack, "status");
}

static void forget_untraced(TsGraphPane *self)
{
  g_clear_pointer(&self->untraced, g_free);
  g_clear_pointer(&self->untraced_failure, g_free);
}

void ts_graph_pane_show_status(TsGraphPane *self, const char *icon_name, const char *title,
                               const char *description)
{
  g_return_if_fail(TS_IS_GRAPH_PANE(self));
  forget_untraced(self);
  set_status(self, icon_name, title, description);
}

/* The untraced function's page for the workspace's mode: its failed trace
 * where a graph is wanted, else what to do to get a graph. */
static void show_untraced_page(TsGraphPane *self)
{
  gboolean eager = self->workspace && ts_workspace_is_eager(self->workspace);
  if (self->untraced_failure && !eager) {
    g_autofree char *failed = g_strdup_printf("Tracing %s Failed", self->untraced);
    set_status(self, "dialog-error-symbolic", failed, self->untraced_failure);
    return;
  }
  g_autofree char *title = g_strdup_printf("%s Is Not Traced Yet", self->untraced);
  set_status(self, "system-run-symbolic", title,
             eager ? "Eager mode runs the C code op by op: no graph is made. Switch to Graph and run it."
                   : "Run it in graph mode: the first call traces its graph.");
}

void ts_graph_pane_show_untraced(TsGraphPane *self, const char *function, const char *failure)
{
  g_return_if_fail(TS_IS_GRAPH_PANE(self) && function != NULL);
  g_autofree char *name = g_strdup(function), *why = g_strdup(failure); /* they may be ours */
  forget_untraced(self);
  self->untraced = g_steal_pointer(&name);
  self->untraced_failure = g_steal_pointer(&why);
  show_untraced_page(self);
}

static void on_workspace_mode(TsGraphPane *self)
{
  if (self->untraced)
    show_untraced_page(self);
}

/* The workspace's selected row: a concrete function's graph, a function's
 * last concrete function's, or its untraced page. */
static void show_selected(TsGraphPane *self)
{
  TsSidebarItem *item = self->workspace ? ts_workspace_get_selected(self->workspace) : NULL;
  TsLoadedModule *module = self->workspace ? ts_workspace_get_module(self->workspace) : NULL;
  if (!item && module && ts_loaded_module_get_n_functions(module) == 0) { /* the sidebar is empty */
    g_autofree char *why = g_strdup_printf("%s exports no functions: name them in its TS_MODULE(...) with "
                                           "TS_EXPORT(fn, x, ...).",
                                           ts_loaded_module_get_display_name(module));
    ts_graph_pane_show_status(self, NULL, "No Functions", why);
    return;
  }
  if (!item) {
    ts_graph_pane_show_status(self, NULL, NULL, "Pick a function in the sidebar, then run it to see its graph.");
    return;
  }
  const char *name = ts_sidebar_item_get_function_name(item);
  TsConcreteInfo *cf = ts_sidebar_item_get_concrete(item);
  if (!cf) {
    GListModel *children = ts_sidebar_item_get_children(item);
    guint n = g_list_model_get_n_items(children);
    if (n > 0) {
      g_autoptr(TsSidebarItem) last = g_list_model_get_item(children, n - 1);
      cf = ts_sidebar_item_get_concrete(last);
    }
  }
  if (cf)
    ts_graph_pane_show_concrete(self, ts_sidebar_item_get_module(item), cf);
  else
    ts_graph_pane_show_untraced(self, name, ts_workspace_get_trace_error(self->workspace, name));
}

/* A module opened with nothing selected: its page (a module without
 * functions says so); a selection's page follows the selection. */
static void on_workspace_module(TsGraphPane *self)
{
  if (!ts_workspace_get_selected(self->workspace))
    show_selected(self);
}

static void set_workspace(TsGraphPane *self, TsWorkspace *workspace)
{
  if (self->workspace == workspace)
    return;
  if (self->workspace) {
    g_signal_handlers_disconnect_by_func(self->workspace, on_workspace_mode, self);
    g_signal_handlers_disconnect_by_func(self->workspace, show_selected, self);
    g_signal_handlers_disconnect_by_func(self->workspace, on_workspace_module, self);
  }
  g_set_object(&self->workspace, workspace);
  if (workspace) {
    g_signal_connect_swapped(workspace, "notify::mode", G_CALLBACK(on_workspace_mode), self);
    g_signal_connect_swapped(workspace, "notify::selected", G_CALLBACK(show_selected), self);
    g_signal_connect_swapped(workspace, "notify::module", G_CALLBACK(on_workspace_module), self);
    show_selected(self);
  }
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_WORKSPACE]);
}

/* The compute-time colouring from the profiler's new session, its nodes
 * found in the workspace's module. */
static void on_session_ready(TsGraphPane *self)
{
  const tsp_session *session = ts_profiler_panel_get_session(self->profiler);
  const tsp_stats *by_node = ts_profiler_panel_get_node_stats(self->profiler);
  TsLoadedModule *module = self->workspace ? ts_workspace_get_module(self->workspace) : NULL;
  g_autoptr(ts_render_values) values =
    session && by_node && module ? ts_profile_compute_times(session, by_node, module) : NULL;
  ts_graph_pane_set_compute_times(self, values);
}

static void set_profiler(TsGraphPane *self, TsProfilerPanel *profiler)
{
  if (self->profiler == profiler)
    return;
  if (self->profiler)
    g_signal_handlers_disconnect_by_func(self->profiler, on_session_ready, self);
  g_set_object(&self->profiler, profiler);
  if (profiler)
    g_signal_connect_swapped(profiler, "session-ready", G_CALLBACK(on_session_ready), self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_PROFILER]);
}

ts_render_values *ts_graph_pane_get_compute_times(TsGraphPane *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_PANE(self), NULL);
  return self->compute_times;
}

TsConcreteInfo *ts_graph_pane_get_concrete(TsGraphPane *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_PANE(self), NULL);
  return self->concrete;
}

gboolean ts_graph_pane_get_drawn(TsGraphPane *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_PANE(self), FALSE);
  if (gtk_stack_get_transition_running(self->stack)) /* both pages show */
    return FALSE;
  if (g_strcmp0(gtk_stack_get_visible_child_name(self->stack), "graph") != 0)
    return TRUE;
  return ts_graph_view_get_drawn(TS_GRAPH_VIEW(self->graph_view));
}

static void ts_graph_pane_dispose(GObject *object)
{
  TsGraphPane *self = TS_GRAPH_PANE(object);
  /* the view must let go of the graph before the module goes */
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_GRAPH_PANE);
  /* the template's unnamed root is not among the children it clears */
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  self->graph_view = NULL;
  g_clear_handle_id(&self->zoom_idle, g_source_remove);
  g_clear_object(&self->module);
  g_clear_pointer(&self->colour_mode, g_free);
  g_clear_pointer(&self->compute_times, ts_render_values_unref);
  set_workspace(self, NULL);
  set_profiler(self, NULL);
  forget_untraced(self);
  G_OBJECT_CLASS(ts_graph_pane_parent_class)->dispose(object);
}

static void ts_graph_pane_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  switch (id) {
  case PROP_WORKSPACE: g_value_set_object(value, TS_GRAPH_PANE(object)->workspace); break;
  case PROP_PROFILER: g_value_set_object(value, TS_GRAPH_PANE(object)->profiler); break;
  case PROP_COLOUR_MODE: g_value_set_string(value, TS_GRAPH_PANE(object)->colour_mode); break;
  case PROP_SHOW_MINIMAP: /* asked for by graph.show-minimap before the view is made */
    g_value_set_boolean(value, !TS_GRAPH_PANE(object)->graph_view ||
                               ts_graph_view_get_show_minimap(TS_GRAPH_VIEW(TS_GRAPH_PANE(object)->graph_view)));
    break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void ts_graph_pane_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
  switch (id) {
  case PROP_WORKSPACE: set_workspace(TS_GRAPH_PANE(object), g_value_get_object(value)); break;
  case PROP_PROFILER: set_profiler(TS_GRAPH_PANE(object), g_value_get_object(value)); break;
  case PROP_COLOUR_MODE: ts_graph_pane_set_colour_mode(TS_GRAPH_PANE(object), g_value_get_string(value)); break;
  case PROP_SHOW_MINIMAP:
    ts_graph_view_set_show_minimap(TS_GRAPH_VIEW(TS_GRAPH_PANE(object)->graph_view), g_value_get_boolean(value));
    g_object_notify_by_pspec(object, pspec);
    break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void ts_graph_pane_class_init(TsGraphPaneClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->dispose = ts_graph_pane_dispose;
  object_class->get_property = ts_graph_pane_get_property;
  object_class->set_property = ts_graph_pane_set_property;
  /* the window's template binds it */
  properties[PROP_WORKSPACE] = g_param_spec_object("workspace", NULL, NULL, TS_TYPE_WORKSPACE,
                                                   G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_PROFILER] = g_param_spec_object("profiler", NULL, NULL, TS_TYPE_PROFILER_PANEL,
                                                  G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* the window binds it to the colour-mode setting */
  properties[PROP_COLOUR_MODE] = g_param_spec_string("colour-mode", NULL, NULL, NULL,
                                                     G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* the view's, for graph.show-minimap (the graph menu's Show Minimap) */
  properties[PROP_SHOW_MINIMAP] = g_param_spec_boolean("show-minimap", NULL, NULL, TRUE,
                                                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
  gtk_widget_class_install_property_action(widget_class, "graph.show-minimap", "show-minimap");
  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/io/github/tracescope/Tracescope/ts-graph-pane.ui");
  gtk_widget_class_bind_template_child(widget_class, TsGraphPane, stack);
  gtk_widget_class_bind_template_child(widget_class, TsGraphPane, status_page);
  gtk_widget_class_bind_template_child(widget_class, TsGraphPane, title_label);
  gtk_widget_class_bind_template_child(widget_class, TsGraphPane, subtitle_label);
  gtk_widget_class_bind_template_child(widget_class, TsGraphPane, graph_bin);
  gtk_widget_class_bind_template_child(widget_class, TsGraphPane, compare_button);
  gtk_widget_class_bind_template_child(widget_class, TsGraphPane, compare_menu);
  gtk_widget_class_bind_template_child(widget_class, TsGraphPane, zoom_button);
  for (guint i = 0; i < G_N_ELEMENTS(FORWARDED); i++)
    gtk_widget_class_install_action(widget_class, FORWARDED[i], NULL, forward_action);
  gtk_widget_class_install_action(widget_class, "graph.compare-passes", NULL, compare_passes);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "tsgraphpane");
  g_type_ensure(TS_TYPE_TITLE_ROW);
}

/* A node's menu (secondary click): breakpoints at its source line or at
 * every op of its type, for the debugger (win.add-breakpoint). */
static void on_secondary_click(GtkGestureClick *gesture, int n_press, double x, double y, TsGraphPane *self)
{
  TsGraphView *view = TS_GRAPH_VIEW(self->graph_view);
  int item = ts_graph_view_item_at(view, x, y);
  const ts_node *node = item >= 0 ? ts_view_item_node(ts_graph_view_get_model(view), item) : NULL;
  if (!node)
    return;
  ts_graph_view_select_item(view, item);
  g_autoptr(GMenu) menu = g_menu_new();
  ts_loc loc = ts_node_loc(node);
  if (loc.file) {
    g_autofree char *base = g_path_get_basename(loc.file);
    g_autofree char *spec = g_strdup_printf("%s:%d", base, loc.line);
    g_autofree char *label = g_strdup_printf("Break at %s", spec);
    g_autoptr(GMenuItem) at_line = g_menu_item_new(label, NULL);
    g_menu_item_set_action_and_target_value(at_line, "win.add-breakpoint", g_variant_new_string(spec));
    g_menu_append_item(menu, at_line);
  }
  const char *op = ts_op_name(ts_node_op(node));
  g_autofree char *label = g_strdup_printf("Break at Every %s", op);
  g_autoptr(GMenuItem) every = g_menu_item_new(label, NULL);
  g_menu_item_set_action_and_target_value(every, "win.add-breakpoint", g_variant_new_string(op));
  g_menu_append_item(menu, every);
  GtkWidget *popover = gtk_popover_menu_new_from_model(G_MENU_MODEL(menu));
  gtk_widget_set_parent(popover, self->graph_view);
  gtk_popover_set_pointing_to(GTK_POPOVER(popover), &(GdkRectangle){ (int)x, (int)y, 1, 1 });
  gtk_popover_set_has_arrow(GTK_POPOVER(popover), FALSE);
  g_signal_connect(popover, "closed", G_CALLBACK(gtk_widget_unparent), NULL);
  gtk_popover_popup(GTK_POPOVER(popover));
  gtk_gesture_set_state(GTK_GESTURE(gesture), GTK_EVENT_SEQUENCE_CLAIMED);
}

static void ts_graph_pane_init(TsGraphPane *self)
{
  gtk_widget_init_template(GTK_WIDGET(self));
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "graph.compare-passes", FALSE);
  self->graph_view = graph_view_new();
  adw_bin_set_child(self->graph_bin, self->graph_view);
  GtkGesture *secondary = gtk_gesture_click_new();
  gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(secondary), GDK_BUTTON_SECONDARY);
  g_signal_connect(secondary, "pressed", G_CALLBACK(on_secondary_click), self);
  gtk_widget_add_controller(self->graph_view, GTK_EVENT_CONTROLLER(secondary));
  g_signal_connect_object(ts_graph_view_get_viewport(TS_GRAPH_VIEW(self->graph_view)), "notify::zoom",
                          G_CALLBACK(on_zoom_changed), self, G_CONNECT_SWAPPED);
}

GtkWidget *ts_graph_pane_get_view(TsGraphPane *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_PANE(self), NULL);
  return self->graph_view;
}

const char *ts_graph_pane_get_status_title(TsGraphPane *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_PANE(self), NULL);
  if (g_strcmp0(gtk_stack_get_visible_child_name(self->stack), "status") != 0)
    return NULL;
  return adw_status_page_get_title(self->status_page);
}
