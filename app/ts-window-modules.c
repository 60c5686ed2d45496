/* ts-window-modules.c — the window's module: opened from the Open chooser,
 * the bundled, recent and remote items (win.open, win.open-module,
 * win.connect-remote, win.reload), loaded by its TsModuleLoader, and shown
 * once loaded: the sidebar's functions, the title, the selection kept
 * across a reload. */
#include "ts-window-private.h"

#include "ts-connect-dialog.h"

/* A trace file with no module has no functions, graph or arguments to
 * show, nor anything to run: the profiler (its timeline first) takes the
 * whole window, and the header keeps Open (a module) and the menu, as on
 * the first page (ts-window.ui: the run controls start hidden). */
void _ts_window_show_module_panes(TsWindow *self, gboolean shown)
{
  gtk_widget_set_visible(self->sidebar_split, shown);
  gtk_widget_set_visible(self->run_paned, shown);
  gtk_widget_set_visible(self->run_modes, shown);
  gtk_widget_set_visible(self->run_actions, shown);
}

/* keep: the function selected stays selected; restart: the same module in
 * a fresh worker after a death, and the result and graph shown stay too. */
static void set_module(TsWindow *self, TsLoadedModule *module, gboolean keep, gboolean restart)
{
  g_autofree char *function = NULL;
  TsSidebarItem *item = ts_function_list_get_selected(self->function_list);
  if (keep && item)
    function = g_strdup(ts_sidebar_item_get_function_name(item));
  TsConcreteInfo *shown = restart ? ts_graph_pane_get_concrete(self->graph_pane) : NULL;
  g_autoptr(TsConcreteInfo) shown_ref = shown ? ts_concrete_info_ref(shown) : NULL;
  TsLoadedModule *before = ts_workspace_get_module(self->workspace);
  g_autoptr(TsLoadedModule) shown_module = shown && before ? g_object_ref(before) : NULL;
  ts_workspace_set_module(self->workspace, module);
  if (!restart) /* the same code in a fresh worker: why its traces failed still holds */
    ts_workspace_forget_trace_errors(self->workspace);
  if (!keep) { /* another module: the last one's debug call and timings are no use here */
    ts_debug_panel_clear(self->debug_panel);
    ts_profiler_panel_set_session(self->profiler_panel, NULL, NULL);
    ts_profiler_panel_set_compare(self->profiler_panel, NULL, NULL);
  }
  if (!restart)
    ts_workspace_set_function(self->workspace, NULL);
  ts_function_list_set_module(self->function_list, module);
  adw_window_title_set_title(self->window_title, ts_loaded_module_get_title(module));
  const char *remote = ts_engine_worker_get_remote(self->worker);
  g_autofree char *where = remote ? g_strdup_printf("%s on %s", ts_loaded_module_get_file(module), remote) : NULL;
  const char *subtitle = where ? where : ts_loaded_module_get_file(module);
  adw_window_title_set_subtitle(self->window_title, subtitle);
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->window_title), subtitle);
  gtk_stack_set_visible_child_name(self->main_stack, "main");
  _ts_window_show_module_panes(self, TRUE);
  ts_node_details_set_source(self->node_details, self->worker, ts_loaded_module_get_file(module));
  /* a reloaded module starts untraced: the function stays selected, not its old graphs;
   * a module of one function (an ONNX model of one output) has it selected, ready to run */
  if (!function && ts_loaded_module_get_n_functions(module) == 1)
    function = g_strdup(ts_loaded_module_get_function(module, 0)->name);
  if (!function || !ts_function_list_select(self->function_list, function, -1))
    ts_workspace_selection_changed(self->workspace);
  if (shown_module) /* the graph of the worker before, as a trace log row shows it */
    ts_graph_pane_show_concrete(self->graph_pane, shown_module, shown);
  g_object_notify(G_OBJECT(self), "module");
}

static void forget_load_failure(TsWindow *self)
{
  if (!self->load_failure)
    return;
  g_signal_handlers_disconnect_by_data(self->load_failure, self);
  adw_toast_dismiss(self->load_failure);
  g_clear_object(&self->load_failure);
}

static void on_loaded(TsModuleLoader *loader, TsLoadedModule *module, TsLoadKind kind, TsWindow *self)
{
  forget_load_failure(self);
  static const char *const DONE[] = { NULL, "Module reloaded: it changed on disk",
                                      "A fresh worker has the module open again" };
  set_module(self, module, kind != TS_LOAD_OPEN, kind == TS_LOAD_RESTART);
  if (kind == TS_LOAD_OPEN && self->session)
    _ts_window_apply_session(self);
  /* the run panel starts afresh with the module: what ended the last run stays said */
  g_autofree char *death = ts_run_controller_take_death(self->runs);
  if (kind == TS_LOAD_RESTART && death)
    ts_run_panel_show_error(self->run_panel, death);
  if (kind != TS_LOAD_OPEN)
    _ts_window_toast(self, DONE[kind]);
}

static void on_load_failed(TsModuleLoader *loader, TsLoadKind kind, const char *message, TsWindow *self)
{
  static const char *const FAILED[] = { NULL, "Reload failed", "The worker could not be restarted" };
  if (kind == TS_LOAD_OPEN) {
    g_clear_pointer(&self->session, ts_session_free); /* its module did not open */
    _ts_window_show_error_dialog(self, "Cannot Open Module", message);
  } else {
    /* the window goes on with the module as it was: that stays said (a
     * toast that went after a few seconds left the old functions looking
     * like the new code's) until dismissed or a load works */
    forget_load_failure(self);
    g_autofree char *text = g_strdup_printf("%s: %s", FAILED[kind], message);
    g_autofree char *escaped = g_markup_escape_text(text, -1); /* a toast's title is markup */
    self->load_failure = adw_toast_new(escaped);
    adw_toast_set_timeout(self->load_failure, 0);
    g_signal_connect_swapped(self->load_failure, "dismissed", G_CALLBACK(forget_load_failure), self);
    adw_toast_overlay_add_toast(self->toast_overlay, g_object_ref(self->load_failure));
  }
}

AdwToast *ts_window_get_load_failure(TsWindow *self)
{
  g_return_val_if_fail(TS_IS_WINDOW(self), NULL);
  return self->load_failure;
}

void _ts_window_follow_loader(TsWindow *self)
{
  g_signal_connect_object(self->loader, "loaded", G_CALLBACK(on_loaded), self, 0);
  g_signal_connect_object(self->loader, "failed", G_CALLBACK(on_load_failed), self, 0);
}

void ts_window_open_module(TsWindow *self, const char *source)
{
  g_return_if_fail(TS_IS_WINDOW(self) && source != NULL);
  g_clear_pointer(&self->session, ts_session_free); /* a module asked for is not a session's */
  ts_module_loader_load(self->loader, source, TS_LOAD_OPEN);
}

void ts_window_set_remote(TsWindow *self, const char *target)
{
  g_return_if_fail(TS_IS_WINDOW(self));
  ts_engine_worker_set_remote(self->worker, target);
}

static void action_open(GtkWidget *widget, const char *name, GVariant *param)
{
  static const TsFileKind MODULES[] = {
    { "Tracescope modules and ONNX models (.so, .onnx)", { "*.so", "*.onnx" } },
  };
  _ts_window_choose_file(TS_WINDOW(widget), "Open Module", "_Open", NULL, MODULES, G_N_ELEMENTS(MODULES),
                         ts_window_open_module);
}

static void action_open_module(GtkWidget *widget, const char *name, GVariant *param)
{
  ts_window_open_module(TS_WINDOW(widget), g_variant_get_string(param, NULL));
}

/* Connect to Remote: modules from now on run on host (empty: here), module opened there. */
static void connect_remote(const char *host, const char *module, gpointer data)
{
  TsWindow *self = data;
  ts_window_set_remote(self, *host ? host : NULL);
  ts_window_open_module(self, module);
}

static void action_connect_remote(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  TsLoadedModule *module = ts_workspace_get_module(self->workspace);
  ts_connect_dialog_present(GTK_WINDOW(self), ts_engine_worker_get_remote(self->worker),
                            module ? ts_loaded_module_get_source(module) : NULL, connect_remote, self);
}

/* win.connect-remote-to (host, module): what the dialog's Connect does. */
static void action_connect_remote_to(GtkWidget *widget, const char *name, GVariant *param)
{
  const char *host, *module;
  g_variant_get(param, "(&s&s)", &host, &module);
  connect_remote(host, module, widget);
}

static void action_reload(GtkWidget *widget, const char *name, GVariant *param)
{
  ts_module_loader_reload(TS_WINDOW(widget)->loader);
}

void _ts_window_class_add_module_actions(GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action(widget_class, "win.open", NULL, action_open);
  gtk_widget_class_install_action(widget_class, "win.open-module", "s", action_open_module);
  gtk_widget_class_install_action(widget_class, "win.connect-remote", NULL, action_connect_remote);
  gtk_widget_class_install_action(widget_class, "win.connect-remote-to", "(ss)", action_connect_remote_to);
  gtk_widget_class_install_action(widget_class, "win.reload", NULL, action_reload);
}
