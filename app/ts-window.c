/* ts-window.c — the main window: a shell around its panels, as Sysprof's
 * window around its session.  It builds its template and the objects that
 * do the work: what it works on is its TsWorkspace (module, selection,
 * mode, device, profile, and whether the loader, the run controller or the
 * profiler is busy; the panels bind to it in ts-window.ui, and
 * ts-window-workspace.c's actions set it), its calls go through its
 * TsRunController, its module through its TsModuleLoader (shown by
 * ts-window-modules.c), the node looked at is its TsNodeFocus's, its
 * compare page is ts-window-compare.c's and its files ts-window-files.c's.
 * Here are the window's other actions and what it says (toasts, the error
 * dialog, busy: its workspace's, or a trace file or optimized graph being
 * read). */
#include "ts-window-private.h"

#include "ts-application.h"
#include "ts-recent-menu.h"

enum { PROP_0, PROP_MODULE, PROP_BUSY, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE(TsWindow, ts_window, ADW_TYPE_APPLICATION_WINDOW)

void _ts_window_toast(TsWindow *self, const char *text)
{
  /* a toast's title is Pango markup: what is said may hold '<' or '&' (a
   * name typed, a file's, an error) */
  g_autofree char *escaped = g_markup_escape_text(text, -1);
  AdwToast *t = adw_toast_new(escaped);
  adw_toast_set_timeout(t, 4);
  adw_toast_overlay_add_toast(self->toast_overlay, t);
}

void _ts_window_show_error_dialog(TsWindow *self, const char *heading, const char *message)
{
  g_free(self->error);
  self->error = g_strdup(message);
  if (self->error_dialog)
    gtk_window_destroy(self->error_dialog);
  GtkWidget *dialog = adw_message_dialog_new(GTK_WINDOW(self), heading, message);
  adw_message_dialog_add_response(ADW_MESSAGE_DIALOG(dialog), "close", "_Close");
  self->error_dialog = GTK_WINDOW(dialog);
  g_object_add_weak_pointer(G_OBJECT(dialog), (gpointer *)&self->error_dialog);
  gtk_window_present(GTK_WINDOW(dialog));
}

static gboolean loading(TsWindow *self)
{
  return self->loader && ts_module_loader_get_loading(self->loader);
}

static void update_actions(TsWindow *self)
{
  gboolean selected = ts_workspace_get_selected(self->workspace) != NULL;
  gboolean running = ts_run_controller_get_running(self->runs);
  gboolean module = ts_workspace_get_module(self->workspace) != NULL;
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.run", selected && !running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.cancel", running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.profile-compare", selected && !running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.profile-devices", selected && !running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.reload", module && !loading(self));
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.apply-signature",
                                module && !ts_engine_worker_get_busy(self->worker));
}

void _ts_window_notify_busy(TsWindow *self)
{
  update_actions(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
}

/* A selection shown (again: the graph pane follows the workspace's): one graph, not a comparison. */
static void on_selected(TsWindow *self)
{
  update_actions(self);
  _ts_window_close_compare(self);
}

/* A trace log row: its function and concrete function selected, or, for a
 * module since reloaded, its graph shown as it was. */
static void on_entry_activated(TsTraceLog *log, TsTraceEntry *entry, TsWindow *self)
{
  /* a failed trace made no concrete function: its function's row says why */
  int index = ts_trace_entry_get_failed(entry) ? -1 : ts_trace_entry_get_concrete_index(entry);
  if (ts_trace_entry_get_module(entry) == ts_workspace_get_module(self->workspace) &&
      ts_function_list_select(self->function_list, ts_trace_entry_get_function(entry), index))
    return;
  TsConcreteInfo *cf = (TsConcreteInfo *)ts_trace_entry_get_concrete(entry);
  if (cf)
    ts_graph_pane_show_concrete(self->graph_pane, ts_trace_entry_get_module(entry), cf);
}

/* ---- actions ---------------------------------------------------------------------- */

static void action_run(GtkWidget *widget, const char *name, GVariant *param)
{
  ts_run_controller_run(TS_WINDOW(widget)->runs);
}

static void action_cancel(GtkWidget *widget, const char *name, GVariant *param)
{
  ts_run_controller_cancel(TS_WINDOW(widget)->runs);
}

static void action_profile_compare(GtkWidget *widget, const char *name, GVariant *param)
{
  ts_run_controller_compare(TS_WINDOW(widget)->runs);
}

static void action_profile_devices(GtkWidget *widget, const char *name, GVariant *param)
{
  ts_run_controller_compare_devices(TS_WINDOW(widget)->runs);
}

static void action_debug(GtkWidget *widget, const char *name, GVariant *param)
{
  ts_run_controller_debug(TS_WINDOW(widget)->runs, g_variant_get_string(param, NULL));
}

static void action_apply_signature(GtkWidget *widget, const char *name, GVariant *param)
{
  ts_run_controller_apply_signature(TS_WINDOW(widget)->runs, g_variant_get_string(param, NULL));
}

static void action_add_breakpoint(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  g_autoptr(GError) error = NULL;
  const char *spec = g_variant_get_string(param, NULL);
  g_autofree char *text = ts_debug_panel_add_breakpoint(self->debug_panel, spec, &error)
                            ? g_strdup_printf("Breakpoint at %s: Debug mode (Ctrl+3) stops there", spec)
                            : g_strdup(error->message);
  _ts_window_toast(self, text);
}

static void action_clear_log(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  ts_trace_log_clear(self->trace_log);
  ts_console_clear(self->console);
}

static void action_show_panel(GtkWidget *widget, const char *name, GVariant *param)
{
  gtk_stack_set_visible_child_name(TS_WINDOW(widget)->bottom_stack, g_variant_get_string(param, NULL));
}

/* win.select-function (name) or win.select-concrete (name, index). */
static void action_select_function(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  const char *function;
  int concrete = -1;
  if (g_variant_is_of_type(param, G_VARIANT_TYPE_STRING))
    function = g_variant_get_string(param, NULL);
  else
    g_variant_get(param, "(&si)", &function, &concrete);
  if (!ts_function_list_select(self->function_list, function, concrete)) {
    TsLoadedModule *module = ts_window_get_module(self);
    g_autofree char *text = module ? ts_loaded_module_missing_function(module, function)
                                   : g_strdup_printf("No function %s here", function);
    _ts_window_toast(self, text);
  }
}

/* ---- getters ------------------------------------------------------------------------ */

TsLoadedModule *ts_window_get_module(TsWindow *self)
{
  g_return_val_if_fail(TS_IS_WINDOW(self), NULL);
  return ts_workspace_get_module(self->workspace);
}

gboolean ts_window_get_busy(TsWindow *self)
{
  g_return_val_if_fail(TS_IS_WINDOW(self), FALSE);
  return (self->workspace && ts_workspace_get_busy(self->workspace)) || self->importing > 0 || self->fetching > 0;
}

const char *ts_window_get_error(TsWindow *self)
{
  g_return_val_if_fail(TS_IS_WINDOW(self), NULL);
  return self->error;
}

GtkWindow *ts_window_get_error_dialog(TsWindow *self)
{
  g_return_val_if_fail(TS_IS_WINDOW(self), NULL);
  return self->error_dialog;
}

TsFunctionList *ts_window_get_function_list(TsWindow *self) { return self->function_list; }
TsGraphPane *ts_window_get_graph_pane(TsWindow *self) { return self->graph_pane; }
GMenuModel *ts_window_get_recent_menu(TsWindow *self) { return G_MENU_MODEL(self->recent_menu); }
TsComparePane *ts_window_get_compare_pane(TsWindow *self) { return self->compare_pane; }
TsRunPanel *ts_window_get_run_panel(TsWindow *self) { return self->run_panel; }
TsEngineWorker *ts_window_get_engine(TsWindow *self) { return self->worker; }
TsTraceLog *ts_window_get_trace_log(TsWindow *self) { return self->trace_log; }
TsConsole *ts_window_get_console(TsWindow *self) { return self->console; }
TsNodeDetails *ts_window_get_node_details(TsWindow *self) { return self->node_details; }
TsProfilerPanel *ts_window_get_profiler_panel(TsWindow *self) { return self->profiler_panel; }
TsDebugPanel *ts_window_get_debug_panel(TsWindow *self) { return self->debug_panel; }

/* ---- life cycle ---------------------------------------------------------------------- */

static void ts_window_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TsWindow *self = TS_WINDOW(object);
  switch (prop_id) {
  case PROP_MODULE: g_value_set_object(value, ts_workspace_get_module(self->workspace)); break;
  case PROP_BUSY: g_value_set_boolean(value, ts_window_get_busy(self)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static gboolean ts_window_close_request(GtkWindow *window)
{
  TsWindow *self = TS_WINDOW(window);
  int width, height;
  gtk_window_get_default_size(window, &width, &height);
  g_settings_set_int(self->settings, "window-width", width);
  g_settings_set_int(self->settings, "window-height", height);
  g_settings_set_boolean(self->settings, "window-maximized", gtk_window_is_maximized(window));
  ts_run_controller_cancel(self->runs);
  return GTK_WINDOW_CLASS(ts_window_parent_class)->close_request(window);
}

/* The height ts-window.ui's divider position (400 px) is for: the schema's
 * default window-height. */
#define DESIGN_HEIGHT 800

/* A window opened shorter than that gets the divider a resize to its height
 * gives (GtkPaned scales its position when the window is resized, not when
 * it opens): opened at 1024x640 the panels below had 190 px (the debugger
 * its breakpoints out of sight), resized to it 260. */
static void ts_window_map(GtkWidget *widget)
{
  TsWindow *self = TS_WINDOW(widget);
  int width, height;
  gtk_window_get_default_size(GTK_WINDOW(widget), &width, &height);
  if (!self->divider_placed && height > 0 && height < DESIGN_HEIGHT && !gtk_window_is_maximized(GTK_WINDOW(widget)))
    gtk_paned_set_position(self->bottom_paned, gtk_paned_get_position(self->bottom_paned) * height / DESIGN_HEIGHT);
  self->divider_placed = TRUE;
  GTK_WIDGET_CLASS(ts_window_parent_class)->map(widget);
}

static void ts_window_constructed(GObject *object)
{
  TsWindow *self = TS_WINDOW(object);
  G_OBJECT_CLASS(ts_window_parent_class)->constructed(object);
  GtkApplication *app = gtk_window_get_application(GTK_WINDOW(self));
  self->settings = TS_IS_APPLICATION(app) ? g_object_ref(ts_application_get_settings(TS_APPLICATION(app)))
                                          : ts_application_settings_new();
  gtk_window_set_default_size(GTK_WINDOW(self), g_settings_get_int(self->settings, "window-width"),
                              g_settings_get_int(self->settings, "window-height"));
  if (g_settings_get_boolean(self->settings, "window-maximized"))
    gtk_window_maximize(GTK_WINDOW(self));
  g_action_group_change_action_state(G_ACTION_GROUP(self), "profile",
                                     g_variant_new_boolean(g_settings_get_boolean(self->settings, "profile")));
  g_autofree char *mode = g_settings_get_string(self->settings, "default-mode");
  g_action_group_change_action_state(G_ACTION_GROUP(self), "mode", g_variant_new_string(mode));
  g_settings_bind(self->settings, "colour-mode", self->graph_pane, "colour-mode",
                  G_SETTINGS_BIND_GET | G_SETTINGS_BIND_NO_SENSITIVITY);
  ts_recent_menu_follow(self->recent_menu, self->settings);
  ts_run_panel_set_settings(self->run_panel, self->settings);

  self->loader = ts_module_loader_new(self->worker, self->workspace, self->settings);
  _ts_window_follow_loader(self);
}

static void ts_window_dispose(GObject *object)
{
  TsWindow *self = TS_WINDOW(object);
  if (self->loader)
    ts_module_loader_shut_down(self->loader);
  if (self->runs)
    ts_run_controller_shut_down(self->runs);
  if (self->focus)
    ts_node_focus_shut_down(self->focus);
  if (self->import_cancellable)
    g_cancellable_cancel(self->import_cancellable);
  g_clear_handle_id(&self->import_toast_id, g_source_remove);
  if (self->load_failure)
    g_signal_handlers_disconnect_by_data(self->load_failure, self);
  g_clear_object(&self->load_failure);
  if (self->error_dialog)
    gtk_window_destroy(self->error_dialog);
  /* property actions hold their objects */
  g_action_map_remove_action(G_ACTION_MAP(self), "show-node-details");
  g_action_map_remove_action(G_ACTION_MAP(self), "check-eagerly");
  if (self->workspace) /* the loader and run controller hold it past the template */
    g_signal_handlers_disconnect_by_data(self->workspace, self);
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_WINDOW);
  if (self->worker)
    g_signal_handlers_disconnect_by_data(self->worker, self);
  g_clear_object(&self->loader);
  g_clear_object(&self->focus);
  g_clear_object(&self->runs);
  g_clear_object(&self->worker);
  g_clear_object(&self->settings);
  G_OBJECT_CLASS(ts_window_parent_class)->dispose(object);
}

static void ts_window_finalize(GObject *object)
{
  TsWindow *self = TS_WINDOW(object);
  g_free(self->error);
  g_clear_pointer(&self->session, ts_session_free);
  G_OBJECT_CLASS(ts_window_parent_class)->finalize(object);
}

static void ts_window_class_init(TsWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->constructed = ts_window_constructed;
  object_class->dispose = ts_window_dispose;
  object_class->finalize = ts_window_finalize;
  object_class->get_property = ts_window_get_property;
  GTK_WINDOW_CLASS(klass)->close_request = ts_window_close_request;
  widget_class->map = ts_window_map;

  GParamFlags flags = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
  properties[PROP_MODULE] = g_param_spec_object("module", NULL, NULL, TS_TYPE_LOADED_MODULE, flags);
  properties[PROP_BUSY] = g_param_spec_boolean("busy", NULL, NULL, FALSE, flags);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  g_type_ensure(TS_TYPE_WORKSPACE);
  g_type_ensure(TS_TYPE_FUNCTION_LIST);
  g_type_ensure(TS_TYPE_GRAPH_PANE);
  g_type_ensure(TS_TYPE_COMPARE_PANE);
  g_type_ensure(TS_TYPE_RUN_PANEL);
  g_type_ensure(TS_TYPE_TRACE_LOG);
  g_type_ensure(TS_TYPE_CONSOLE);
  g_type_ensure(TS_TYPE_NODE_DETAILS);
  g_type_ensure(TS_TYPE_PROFILER_PANEL);
  g_type_ensure(TS_TYPE_DEBUG_PANEL);
  gtk_widget_class_set_template_from_resource(widget_class, "/io/github/tracescope/Tracescope/ts-window.ui");
  gtk_widget_class_bind_template_child(widget_class, TsWindow, toast_overlay);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, workspace);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, device_box);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, window_title);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, main_stack);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, sidebar_split);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, run_paned);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, run_modes);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, run_actions);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, bottom_stack);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, bottom_paned);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, debug_panel);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, function_list);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, graph_stack);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, graph_pane);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, compare_pane);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, run_panel);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, trace_log);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, console);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, node_details);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, profiler_panel);
  gtk_widget_class_bind_template_child(widget_class, TsWindow, recent_menu);

  gtk_widget_class_install_action(widget_class, "win.run", NULL, action_run);
  gtk_widget_class_install_action(widget_class, "win.debug", "s", action_debug);
  gtk_widget_class_install_action(widget_class, "win.add-breakpoint", "s", action_add_breakpoint);
  gtk_widget_class_install_action(widget_class, "win.cancel", NULL, action_cancel);
  gtk_widget_class_install_action(widget_class, "win.apply-signature", "s", action_apply_signature);
  gtk_widget_class_install_action(widget_class, "win.clear-log", NULL, action_clear_log);
  gtk_widget_class_install_action(widget_class, "win.show-panel", "s", action_show_panel);
  gtk_widget_class_install_action(widget_class, "win.select-function", "s", action_select_function);
  gtk_widget_class_install_action(widget_class, "win.select-concrete", "(si)", action_select_function);
  gtk_widget_class_install_action(widget_class, "win.profile-compare", NULL, action_profile_compare);
  gtk_widget_class_install_action(widget_class, "win.profile-devices", NULL, action_profile_devices);
  _ts_window_class_add_module_actions(widget_class);
  _ts_window_class_add_compare_actions(widget_class);
  _ts_window_class_add_file_actions(widget_class);

  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_o, GDK_CONTROL_MASK, "win.open", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_r, GDK_CONTROL_MASK, "win.run", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_F5, 0, "win.run", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_e, GDK_CONTROL_MASK, "win.export-graph", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_e, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                      "win.export-trace", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_Escape, 0, "win.cancel", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_r, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                      "win.reload", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_1, GDK_CONTROL_MASK, "win.mode", "s", "graph");
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_2, GDK_CONTROL_MASK, "win.mode", "s", "eager");
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_3, GDK_CONTROL_MASK, "win.mode", "s", "debug");
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_F10, 0, "win.debug", "s", "over");
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_F11, 0, "win.debug", "s", "into");
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_F11, GDK_SHIFT_MASK, "win.debug", "s", "out");
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_F5, GDK_SHIFT_MASK, "win.debug", "s", "stop");
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_bracketleft, GDK_ALT_MASK, "win.debug", "s", "back");
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_bracketright, GDK_ALT_MASK, "win.debug", "s", "forward");
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_l, GDK_CONTROL_MASK, "win.show-panel", "s", "trace-log");
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_k, GDK_CONTROL_MASK, "win.show-panel", "s", "console");
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_l, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                      "win.clear-log", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_i, GDK_CONTROL_MASK, "win.show-node-details", NULL);
}

static void ts_window_init(TsWindow *self)
{
  gtk_widget_init_template(GTK_WIDGET(self));
  self->worker = ts_engine_worker_new();
  const TsRunPanels run_panels = {
    .run_panel = self->run_panel, .trace_log = self->trace_log, .console = self->console,
    .function_list = self->function_list, .debug_panel = self->debug_panel,
    .profiler_panel = self->profiler_panel, .panels = self->bottom_stack,
  };
  self->runs = ts_run_controller_new(self->worker, self->workspace, &run_panels);
  const TsNodePanels node_panels = {
    .graph_pane = self->graph_pane, .compare_pane = self->compare_pane, .graph_stack = self->graph_stack,
    .node_details = self->node_details, .profiler_panel = self->profiler_panel, .debug_panel = self->debug_panel,
  };
  self->focus = ts_node_focus_new(&node_panels);

  _ts_window_add_workspace_actions(self);
  g_autoptr(GPropertyAction) details = g_property_action_new("show-node-details", self->focus, "details-wanted");
  g_action_map_add_action(G_ACTION_MAP(self), G_ACTION(details));
  /* Check mode: graph-mode Runs run each call eagerly too; a divergence shows in the trace log */
  g_autoptr(GPropertyAction) check = g_property_action_new("check-eagerly", self->worker, "check-eagerly");
  g_action_map_add_action(G_ACTION_MAP(self), G_ACTION(check));

  g_signal_connect_object(self->runs, "message", G_CALLBACK(_ts_window_toast), self, G_CONNECT_SWAPPED);
  g_signal_connect_object(self->focus, "message", G_CALLBACK(_ts_window_toast), self, G_CONNECT_SWAPPED);
  g_signal_connect_swapped(self->workspace, "notify::selected", G_CALLBACK(on_selected), self);
  ts_function_list_capture_keys(self->function_list, GTK_WIDGET(self)); /* type anywhere to filter */
  g_signal_connect(self->trace_log, "entry-activated", G_CALLBACK(on_entry_activated), self);
  /* the loader and the run controller say when they are busy to the workspace themselves */
  ts_workspace_add_busy_source(self->workspace, G_OBJECT(self->profiler_panel), "busy");
  ts_workspace_add_busy_source(self->workspace, G_OBJECT(self->profiler_panel), "fitting");
  g_signal_connect_swapped(self->workspace, "notify::busy", G_CALLBACK(_ts_window_notify_busy), self);
  on_selected(self);
}

TsWindow *ts_window_new(GtkApplication *application)
{
  return g_object_new(TS_TYPE_WINDOW, "application", application, NULL);
}
