/* ts-window.c — the main window: a thin shell around its panels.  What it
 * works on is its TsWorkspace (module, selection, mode, device, profile),
 * its calls go through its TsRunController, its files through
 * ts-window-files.c; here are the module loading, the graph for the
 * selection, the node details and the actions that tie the panels together. */
#include "ts-window-private.h"

#include "ts-application.h"
#include "ts-connect-dialog.h"
#include "ts-device-menu.h"
#include "ts-engine-worker.h"
#include "ts-graph-view.h"
#include "ts-input-signature.h"
#include "ts-module-watch.h"
#include "ts-profile-values.h"
#include "ts-profiler-panel.h"
#include "ts-spec-text.h"
#include "ts-tensor-view.h"
#include "ts-worker-optimized.h"

#define MAX_RECENT 8

enum { PROP_0, PROP_MODULE, PROP_BUSY, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE(TsWindow, ts_window, ADW_TYPE_APPLICATION_WINDOW)

void _ts_window_toast(TsWindow *self, const char *text)
{
  AdwToast *t = adw_toast_new(text);
  adw_toast_set_timeout(t, 4);
  adw_toast_overlay_add_toast(self->toast_overlay, t);
}

static void update_actions(TsWindow *self)
{
  TsSidebarItem *item = ts_function_list_get_selected(self->function_list);
  gboolean running = ts_run_controller_get_running(self->runs);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.run", item != NULL && !running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.cancel", running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.profile-compare", item != NULL && !running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.profile-devices", item != NULL && !running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.reload", ts_workspace_get_module(self->workspace) != NULL && !self->loading);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.apply-signature",
                                ts_workspace_get_module(self->workspace) != NULL && !ts_engine_worker_get_busy(self->worker));
}

/* A stateful action's state following the workspace's property. */
static void set_action_state(TsWindow *self, const char *name, GVariant *state)
{
  g_simple_action_set_state(G_SIMPLE_ACTION(g_action_map_lookup_action(G_ACTION_MAP(self), name)), state);
}

void _ts_window_notify_busy(TsWindow *self)
{
  update_actions(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
}

/* ---- the graph for the selection ------------------------------------------------ */

static void show_details_of_selection(TsWindow *self);

static void close_compare(TsWindow *self)
{
  gboolean was = ts_window_get_comparing(self);
  gtk_stack_set_visible_child_name(self->graph_stack, "single");
  ts_compare_pane_clear(self->compare_pane);
  if (was) /* the details show the single graph's selection again */
    show_details_of_selection(self);
}

void _ts_window_show_selection(TsWindow *self)
{
  TsSidebarItem *item = ts_function_list_get_selected(self->function_list);
  update_actions(self);
  close_compare(self);
  if (!item) {
    ts_graph_pane_show_status(self->graph_pane, NULL, NULL,
                              "Pick a function in the sidebar, then run it to see its graph.");
    return;
  }
  const char *name = ts_sidebar_item_get_function_name(item);
  ts_workspace_set_function(self->workspace, name); /* the run and debug panels follow it */
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
    ts_graph_pane_show_concrete(self->graph_pane, ts_sidebar_item_get_module(item), cf);
  else /* its page follows the mode */
    ts_graph_pane_show_untraced(self->graph_pane, name, ts_run_controller_get_trace_error(self->runs, name));
}

static void on_selected_changed(TsFunctionList *list, GParamSpec *pspec, TsWindow *self)
{
  _ts_window_show_selection(self);
}

/* ---- node details ------------------------------------------------------------------ */

static TsGraphView *graph_view(TsWindow *self)
{
  return TS_GRAPH_VIEW(ts_graph_pane_get_view(self->graph_pane));
}

/* The details pane shows while something is selected in the graph, unless
 * the user hid it (win.show-node-details). */
static void update_node_details(TsWindow *self)
{
  g_autoptr(GVariant) state = g_action_group_get_action_state(G_ACTION_GROUP(self), "show-node-details");
  gboolean wanted = state && g_variant_get_boolean(state);
  gtk_widget_set_visible(GTK_WIDGET(self->node_details),
                         wanted && ts_node_details_get_node(self->node_details) != NULL);
}

static void on_show_node_details_changed(GSimpleAction *action, GVariant *value, gpointer user_data)
{
  g_simple_action_set_state(action, value);
  update_node_details(user_data);
}

/* What the profiler and the debugger know of the node shown in the
 * details: its time per run in the last profile, its last output. */
static void update_details_extras(TsWindow *self)
{
  const ts_node *node = ts_node_details_get_node(self->node_details);
  const tsp_stats *stats = node ? ts_profiler_panel_get_node_stats(self->profiler_panel) : NULL;
  for (int i = 0; stats && i < stats->n; i++)
    if (g_strcmp0(stats->rows[i].key, ts_node_name(node)) == 0)
      ts_node_details_set_timing(self->node_details, stats->rows[i].device, (gint64)stats->rows[i].mean_ns);
  ts_tensor *output = node ? ts_debug_panel_get_last_output(self->debug_panel, ts_node_name(node)) : NULL;
  if (output) {
    GtkWidget *view = ts_tensor_view_new();
    ts_tensor_view_set_compact(TS_TENSOR_VIEW(view), TRUE);
    ts_tensor_view_set_tensor(TS_TENSOR_VIEW(view), output, ts_node_name(node));
    ts_node_details_set_value_view(self->node_details, view);
  }
}

static void on_node_selected(TsGraphView *view, int item, gpointer node, TsWindow *self)
{
  ts_node_details_set_node(self->node_details, node);
  update_details_extras(self);
  update_node_details(self);
}

/* The graph pane's selection in the details (after a comparison). */
static void show_details_of_selection(TsWindow *self)
{
  TsGraphView *view = graph_view(self);
  int item = ts_graph_view_get_selected_item(view);
  ts_view_model *model = ts_graph_view_get_model(view);
  on_node_selected(view, item, item >= 0 && model ? (gpointer)ts_view_item_node(model, item) : NULL, self);
}

/* A node selected in the compare pane: an optimized node shown before and
 * after the passes stands for the traced nodes the pane matches it with
 * (its graph, read back from the worker, does not say). */
static void on_compare_node_selected(TsGraphView *view, int item, gpointer node, TsWindow *self)
{
  if (!ts_window_get_comparing(self))
    return;
  on_node_selected(view, item, node, self);
  if (node && ts_compare_pane_get_passes_concrete(self->compare_pane) &&
      GTK_WIDGET(view) == ts_compare_pane_get_view(self->compare_pane, TRUE)) {
    int n = 0;
    const ts_node *const *origins = ts_compare_pane_get_matches(self->compare_pane, node, &n);
    ts_node_details_set_origins(self->node_details, origins, n);
  }
}

/* A row's node: in the graph it belongs to, a compared one included. */
static gboolean reveal_anywhere(TsWindow *self, const ts_node *node)
{
  if (!ts_window_get_comparing(self))
    return ts_graph_view_reveal(graph_view(self), node);
  for (int side = 0; side < 2; side++)
    if (ts_graph_view_reveal(TS_GRAPH_VIEW(ts_compare_pane_get_view(self->compare_pane, side)), node))
      return TRUE;
  return FALSE;
}

static void on_details_activate_node(TsNodeDetails *details, gpointer node, TsWindow *self)
{
  if (!reveal_anywhere(self, node)) {
    g_autofree char *text = g_strdup_printf("%s is not in the graph shown", ts_node_name(node));
    _ts_window_toast(self, text);
  }
}

/* Opens subgraph `index` of an If/While op: the op item's child of that name. */
static void on_details_activate_subgraph(TsNodeDetails *details, gpointer node, int index, TsWindow *self)
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
  _ts_window_toast(self, text);
}

/* ---- modules ---------------------------------------------------------------------- */

static void remember_recent(TsWindow *self, const char *source)
{
  g_auto(GStrv) old = g_settings_get_strv(self->settings, "recent-modules");
  g_autoptr(GStrvBuilder) b = g_strv_builder_new();
  g_strv_builder_add(b, source);
  guint n = 1;
  for (char **s = old; *s && n < MAX_RECENT; s++)
    if (g_strcmp0(*s, source) != 0) {
      g_strv_builder_add(b, *s);
      n++;
    }
  g_auto(GStrv) recent = g_strv_builder_end(b);
  g_settings_set_strv(self->settings, "recent-modules", (const char *const *)recent);
}

/* Menu labels take "_" as a mnemonic mark ("my_module.so" showed as
 * "mymodule.so"): a file name keeps its underscores doubled. */
static char *menu_label_for(const char *text)
{
  g_auto(GStrv) parts = g_strsplit(text, "_", -1);
  return g_strjoinv("__", parts);
}

static void update_recent_menu(TsWindow *self)
{
  g_menu_remove_all(self->recent_menu);
  g_auto(GStrv) recent = g_settings_get_strv(self->settings, "recent-modules");
  for (char **s = recent; *s; s++) {
    if (g_strcmp0(*s, "seeds") == 0)
      continue;
    g_autofree char *base = g_path_get_basename(*s);
    g_autofree char *label = menu_label_for(base);
    g_autoptr(GMenuItem) item = g_menu_item_new(label, NULL);
    g_menu_item_set_action_and_target_value(item, "win.open-module", g_variant_new_string(*s));
    g_menu_append_item(self->recent_menu, item);
  }
}

static void on_recent_changed(GSettings *settings, const char *key, TsWindow *self)
{
  update_recent_menu(self);
}

/* The next worker started gets the limit (0 in the setting: the default). */
static void on_memory_limit_changed(GSettings *settings, const char *key, TsWindow *self)
{
  guint mib = g_settings_get_uint(settings, "worker-memory-limit");
  ts_engine_worker_set_memory_limit(self->worker, mib ? (guint64)mib << 20 : ts_engine_worker_default_memory_limit());
}

static void on_colour_mode_changed(GSettings *settings, const char *key, TsWindow *self)
{
  g_autofree char *mode = g_settings_get_string(settings, "colour-mode");
  ts_graph_pane_set_colour_mode(self->graph_pane, mode);
}

/* A trace file with no module has no functions, graph or arguments to
 * show: the profiler (its timeline first) takes the whole window. */
void _ts_window_show_module_panes(TsWindow *self, gboolean shown)
{
  gtk_widget_set_visible(self->sidebar_split, shown);
  gtk_widget_set_visible(self->run_paned, shown);
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
  g_autoptr(TsLoadedModule) shown_module = shown && ts_workspace_get_module(self->workspace) ? g_object_ref(ts_workspace_get_module(self->workspace)) : NULL;
  ts_workspace_set_module(self->workspace, module);
  ts_run_controller_forget_trace_errors(self->runs);
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
  /* a remote module's file is not here to watch: its worker watches it there (::module-changed) */
  ts_module_watch_set_path(self->watch, ts_engine_worker_get_remote(self->worker) ? NULL
                                                                                 : ts_loaded_module_get_file(module));
  ts_node_details_set_source(self->node_details, self->worker, ts_loaded_module_get_file(module));
  /* a reloaded module starts untraced: the function stays selected, not its old graphs */
  if (!function || !ts_function_list_select(self->function_list, function, -1))
    _ts_window_show_selection(self);
  if (shown_module) /* the graph of the worker before, as a trace log row shows it */
    ts_graph_pane_show_concrete(self->graph_pane, shown_module, shown);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_MODULE]);
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

typedef struct {
  TsWindow *self;
  char *source;
  LoadKind kind;
} LoadRequest;

static void on_loaded(GObject *source, GAsyncResult *result, gpointer user_data)
{
  LoadRequest *req = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(TsLoadedModule) module = ts_engine_worker_load_finish(TS_ENGINE_WORKER(source), result, &error);
  if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    goto out;
  TsWindow *self = req->self;
  self->loading = FALSE;
  g_clear_object(&self->load_cancellable);
  static const char *const FAILED[] = { NULL, "Reload failed", "The worker could not be restarted" };
  static const char *const DONE[] = { NULL, "Module reloaded: it changed on disk",
                                      "A fresh worker has the module open again" };
  if (!module) {
    if (req->kind == LOAD_OPEN)
      g_clear_pointer(&self->session, ts_session_free); /* its module did not open */
    if (req->kind != LOAD_OPEN) {
      g_autofree char *text = g_strdup_printf("%s: %s", FAILED[req->kind], error->message);
      _ts_window_toast(self, text);
    } else {
      _ts_window_show_error_dialog(self, "Cannot Open Module", error->message);
    }
  } else {
    set_module(self, module, req->kind != LOAD_OPEN, req->kind == LOAD_RESTART);
    if (req->kind == LOAD_OPEN && self->session)
      _ts_window_apply_session(self);
    /* the run panel starts afresh with the module: what ended the last run stays said */
    g_autofree char *death = ts_run_controller_take_death(self->runs);
    if (req->kind == LOAD_RESTART && death)
      ts_run_panel_show_error(self->run_panel, death);
    if (req->kind != LOAD_OPEN)
      _ts_window_toast(self, DONE[req->kind]);
    else
      if (!ts_engine_worker_get_remote(self->worker)) /* a path there is not one here */
        remember_recent(self, req->source);
  }
  _ts_window_notify_busy(self);
out:
  g_object_unref(req->self);
  g_free(req->source);
  g_free(req);
}

void _ts_window_load(TsWindow *self, const char *source, LoadKind kind)
{
  if (self->load_cancellable)
    g_cancellable_cancel(self->load_cancellable);
  g_clear_object(&self->load_cancellable);
  self->load_cancellable = g_cancellable_new();
  self->loading = TRUE;
  LoadRequest *req = g_new0(LoadRequest, 1);
  req->self = g_object_ref(self);
  req->source = g_strdup(source);
  req->kind = kind;
  ts_engine_worker_load_async(self->worker, source, self->load_cancellable, on_loaded, req);
  _ts_window_notify_busy(self);
}

void ts_window_open_module(TsWindow *self, const char *source)
{
  g_return_if_fail(TS_IS_WINDOW(self) && source != NULL);
  g_clear_pointer(&self->session, ts_session_free); /* a module asked for is not a session's */
  _ts_window_load(self, source, LOAD_OPEN);
}

static void reload(TsWindow *self)
{
  if (ts_workspace_get_module(self->workspace))
    _ts_window_load(self, ts_loaded_module_get_source(ts_workspace_get_module(self->workspace)), LOAD_RELOAD);
}

static void on_file_changed(TsModuleWatch *watch, TsWindow *self)
{
  reload(self);
}

/* a remote module rebuilt there */
static void on_remote_module_changed(TsEngineWorker *worker, TsWindow *self)
{
  reload(self);
}

static void on_chooser_response(GtkNativeDialog *dialog, int response, gpointer user_data)
{
  TsWindow *self = user_data;
  if (response == GTK_RESPONSE_ACCEPT) {
    g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
    g_autofree char *path = file ? g_file_get_path(file) : NULL;
    if (path)
      ts_window_open_module(self, path);
  }
  g_object_unref(dialog);
}

static void action_open(GtkWidget *widget, const char *name, GVariant *param)
{
  GtkFileChooserNative *chooser =
    gtk_file_chooser_native_new("Open Module", GTK_WINDOW(widget), GTK_FILE_CHOOSER_ACTION_OPEN,
                                "_Open", "_Cancel");
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new();
  gtk_file_filter_set_name(filter, "Tracescope modules and ONNX models (.so, .onnx)");
  gtk_file_filter_add_pattern(filter, "*.so");
  gtk_file_filter_add_pattern(filter, "*.onnx");
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), filter);
  g_signal_connect(chooser, "response", G_CALLBACK(on_chooser_response), widget);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
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
  ts_connect_dialog_present(GTK_WINDOW(self), ts_engine_worker_get_remote(self->worker),
                            ts_workspace_get_module(self->workspace) ? ts_loaded_module_get_source(ts_workspace_get_module(self->workspace)) : NULL, connect_remote, self);
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
  on_file_changed(NULL, TS_WINDOW(widget));
}

/* ---- profiling ------------------------------------------------------------------- */

/* The graph's compute-time colouring from the Profiler panel's session. */
static void update_compute_times(TsWindow *self)
{
  const tsp_session *session = ts_profiler_panel_get_session(self->profiler_panel);
  const tsp_stats *by_node = ts_profiler_panel_get_node_stats(self->profiler_panel);
  g_autoptr(ts_render_values) values = session && by_node && ts_workspace_get_module(self->workspace)
                                         ? ts_profile_compute_times(session, by_node, ts_workspace_get_module(self->workspace))
                                         : NULL;
  ts_graph_pane_set_compute_times(self->graph_pane, values);
}

static void on_profile_changed(GSimpleAction *action, GVariant *value, gpointer user_data)
{
  TsWindow *self = user_data;
  ts_workspace_set_profile(self->workspace, g_variant_get_boolean(value));
}

static void on_workspace_profile(TsWindow *self)
{
  gboolean profile = ts_workspace_get_profile(self->workspace);
  set_action_state(self, "profile", g_variant_new_boolean(profile)); /* the run controller binds the worker to it */
  if (self->settings && !self->profile_once)
    g_settings_set_boolean(self->settings, "profile", profile);
}

void ts_window_set_profiling_once(TsWindow *self, gboolean profile)
{
  g_return_if_fail(TS_IS_WINDOW(self));
  self->profile_once = TRUE;
  g_action_group_change_action_state(G_ACTION_GROUP(self), "profile", g_variant_new_boolean(profile));
  self->profile_once = FALSE;
}

/* Check mode: graph-mode Runs run each call eagerly too; where the two
 * differ, a warning in the trace log names the first op that did. */
static void on_check_eagerly_changed(GSimpleAction *action, GVariant *value, gpointer user_data)
{
  TsWindow *self = user_data;
  g_simple_action_set_state(action, value);
  ts_engine_worker_set_check_eagerly(self->worker, g_variant_get_boolean(value));
}

/* A row of one node: that node selected and shown in the graph. */
static void on_profile_node_selected(TsProfilerPanel *panel, const char *name, TsWindow *self)
{
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(self->graph_pane);
  const ts_node *node = cf && cf->graph ? ts_profile_find_node(cf->graph, name) : NULL;
  if (!node)
    return;
  self->revealing = TRUE;
  ts_graph_view_reveal(TS_GRAPH_VIEW(ts_graph_pane_get_view(self->graph_pane)), node);
  self->revealing = FALSE;
}

/* A node selected in the graph: the table keeps its row. */
static void on_graph_node_selected(TsGraphView *view, int item, gpointer node, TsWindow *self)
{
  if (!self->revealing)
    ts_profiler_panel_set_node_filter(self->profiler_panel, node);
}

/* ---- running ---------------------------------------------------------------------- */

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

/* The worker ended on its own (the console says how): a fresh worker
 * opens the module again so that the next Run can start. */
static void on_worker_died(TsWindow *self)
{
  TsLoadedModule *module = ts_workspace_get_module(self->workspace);
  if (module && !self->loading)
    _ts_window_load(self, ts_loaded_module_get_source(module), LOAD_RESTART);
}

/* ---- the trace log ---------------------------------------------------------------- */

static void on_entry_activated(TsTraceLog *log, TsTraceEntry *entry, TsWindow *self)
{
  /* a failed trace made no concrete function: its function's row says why */
  int index = ts_trace_entry_get_failed(entry) ? -1 : ts_trace_entry_get_concrete_index(entry);
  if (ts_trace_entry_get_module(entry) == ts_workspace_get_module(self->workspace) &&
      ts_function_list_select(self->function_list, ts_trace_entry_get_function(entry), index))
    return;
  /* a module since reloaded: its graph is still there to look at */
  TsConcreteInfo *cf = (TsConcreteInfo *)ts_trace_entry_get_concrete(entry);
  if (cf)
    ts_graph_pane_show_concrete(self->graph_pane, ts_trace_entry_get_module(entry), cf);
}

typedef struct {
  TsWindow *self;
  char *text; /* "f now has the input signature (x: f32[?])" */
} SignatureRequest;

static void on_signature_applied(GObject *source, GAsyncResult *result, gpointer user_data)
{
  SignatureRequest *req = user_data;
  g_autoptr(GError) error = NULL;
  if (ts_engine_worker_set_input_signature_finish(TS_ENGINE_WORKER(source), result, &error)) {
    _ts_window_toast(req->self, req->text);
    ts_trace_log_hide_warning(req->self->trace_log);
  } else {
    g_autofree char *text = g_strdup_printf("Cannot apply the input signature: %s", error->message);
    _ts_window_toast(req->self, text);
  }
  g_object_unref(req->self);
  g_free(req->text);
  g_free(req);
}

static void action_apply_signature(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  const char *function = g_variant_get_string(param, NULL);
  TsModuleFunction *fn = ts_workspace_get_module(self->workspace) ? ts_loaded_module_lookup(ts_workspace_get_module(self->workspace), function) : NULL;
  if (!fn || ts_engine_worker_get_busy(self->worker))
    return;
  g_autoptr(GError) error = NULL;
  g_autofree ts_spec *specs = NULL;
  int n = 0;
  if (!ts_input_signature_relaxed(fn, &specs, &n, &error)) {
    g_autofree char *text = g_strdup_printf("Cannot apply an input signature: %s", error->message);
    _ts_window_toast(self, text);
    return;
  }
  g_autoptr(GStrvBuilder) b = g_strv_builder_new();
  for (int i = 0; i < n; i++) {
    g_autofree char *text = ts_spec_to_string(&specs[i]);
    g_strv_builder_add(b, text);
  }
  g_auto(GStrv) texts = g_strv_builder_end(b);
  g_autofree char *sig = ts_input_signature_to_string(fn, specs, n);
  SignatureRequest *req = g_new0(SignatureRequest, 1);
  req->self = g_object_ref(self);
  req->text = g_strdup_printf("%s now has the input signature %s", function, sig);
  ts_engine_worker_set_input_signature_async(self->worker, function, (const char *const *)texts,
                                             on_signature_applied, req);
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

static void action_select_function(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  const char *function;
  int concrete;
  if (g_variant_is_of_type(param, G_VARIANT_TYPE_STRING)) {
    function = g_variant_get_string(param, NULL);
    concrete = -1;
  } else {
    g_variant_get(param, "(&si)", &function, &concrete);
  }
  if (!ts_function_list_select(self->function_list, function, concrete)) {
    g_autofree char *text = g_strdup_printf("No function %s here", function);
    _ts_window_toast(self, text);
  }
}

/* Shows two concrete functions of a function side by side. */
static void action_compare_concrete(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  const char *function;
  int left, right;
  g_variant_get(param, "(&sii)", &function, &left, &right);
  TsModuleFunction *fn = ts_workspace_get_module(self->workspace) ? ts_loaded_module_lookup(ts_workspace_get_module(self->workspace), function) : NULL;
  int n = fn ? (int)fn->concrete->len : 0;
  if (left < 0 || left >= n || right < 0 || right >= n) {
    g_autofree char *text = g_strdup_printf("%s has no concrete functions %d and %d to compare",
                                            function, left, right);
    _ts_window_toast(self, text);
    return;
  }
  /* shown first, so that the views have their size when the layouts are fitted */
  gtk_stack_set_visible_child_name(self->graph_stack, "compare");
  ts_compare_pane_show(self->compare_pane, ts_workspace_get_module(self->workspace), ts_module_function_concrete(fn, left),
                       ts_module_function_concrete(fn, right));
}

static void show_passes(TsWindow *self, TsConcreteInfo *cf)
{
  /* shown first, so that the views have their size when the layouts are fitted */
  gtk_stack_set_visible_child_name(self->graph_stack, "compare");
  ts_compare_pane_show_passes(self->compare_pane, cf);
}

typedef struct {
  TsWindow *self;
  TsConcreteInfo *cf;
} PassesRequest;

static void on_optimized(GObject *source, GAsyncResult *result, gpointer user_data)
{
  PassesRequest *req = user_data;
  TsWindow *self = req->self;
  g_autoptr(GError) error = NULL;
  g_autoptr(TsWorkerOptimized) o = ts_worker_get_optimized_finish(TS_WORKER(source), result, &error);
  self->fetching--;
  if (o && !req->cf->optimized) /* kept with the concrete function: asked for once */
    ts_concrete_info_set_optimized(req->cf, g_steal_pointer(&o->graph), g_steal_pointer(&o->origins),
                                   o->pass_summary);
  if (!o) {
    g_autofree char *text = g_strdup_printf("Cannot show the optimized graph: %s", error->message);
    _ts_window_toast(self, text);
  } else if (ts_graph_pane_get_concrete(self->graph_pane) == req->cf) {
    show_passes(self, req->cf);
  }
  _ts_window_notify_busy(self);
  ts_concrete_info_unref(req->cf);
  g_object_unref(self);
  g_free(req);
}

/* Shows the graph pane's concrete function before and after the
 * optimizer's passes, its optimized graph asked of the worker that traced
 * it the first time. */
static void action_compare_passes(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(self->graph_pane);
  if (!cf || !cf->graph) {
    _ts_window_toast(self, "Select a traced concrete function first");
    return;
  }
  if (cf->optimized) {
    show_passes(self, cf);
    return;
  }
  TsModuleFunction *fn = ts_workspace_get_module(self->workspace) ? ts_loaded_module_lookup(ts_workspace_get_module(self->workspace), cf->function) : NULL;
  TsWorker *worker = ts_engine_worker_get_worker(self->worker);
  if (!fn || ts_module_function_concrete(fn, cf->index) != cf || !worker) {
    _ts_window_toast(self, "The worker that traced this graph has ended: run the function again to see its optimized graph");
    return;
  }
  PassesRequest *req = g_new0(PassesRequest, 1);
  req->self = g_object_ref(self);
  req->cf = ts_concrete_info_ref(cf);
  self->fetching++;
  ts_worker_get_optimized_async(worker, cf->function, cf->signature, cf->graph, NULL, on_optimized, req);
  _ts_window_notify_busy(self);
}

static void action_close_compare(GtkWidget *widget, const char *name, GVariant *param)
{
  close_compare(TS_WINDOW(widget));
}

/* ---- mode and device -------------------------------------------------------------- */

static void on_workspace_mode(TsWindow *self)
{
  const char *mode = ts_workspace_get_mode(self->workspace);
  set_action_state(self, "mode", g_variant_new_string(mode)); /* the debug panel shows itself in Debug mode */
  _ts_window_show_selection(self);
}

static void on_mode_changed(GSimpleAction *action, GVariant *value, gpointer user_data)
{
  TsWindow *self = user_data;
  const char *mode = g_variant_get_string(value, NULL);
  gboolean same = g_strcmp0(mode, ts_workspace_get_mode(self->workspace)) == 0;
  if (ts_workspace_set_mode(self->workspace, mode) && same) /* asked for again: what follows it shows it again */
    g_object_notify(G_OBJECT(self->workspace), "mode");
}

/* ---- the debugger ---------------------------------------------------------------- */

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

/* The node of that name in g or its subgraphs. */
static const ts_node *find_node(const ts_graph *g, const char *name)
{
  for (int i = 0; g && i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (g_strcmp0(ts_node_name(n), name) == 0)
      return n;
    for (int k = 0; k < ts_node_n_subgraphs(n); k++) {
      const ts_node *inner = find_node(ts_node_subgraph(n, k), name);
      if (inner)
        return inner;
    }
  }
  return NULL;
}

/* The op the debugger shows, selected in the graph of its function when
 * that graph is shown. */
static void on_debug_op_shown(TsDebugPanel *panel, const char *node, const char *function, TsWindow *self)
{
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(self->graph_pane);
  if (!node || !cf || g_strcmp0(cf->function, function) != 0)
    return;
  const ts_node *n = find_node(cf->graph, node);
  if (n)
    ts_graph_view_reveal(graph_view(self), n);
}

/* Whether the worker has a device of that name (the CPU it always has). */
static gboolean has_device(TsWindow *self, const char *name)
{
  GPtrArray *devices = ts_engine_worker_get_devices(self->worker, NULL);
  for (guint i = 0; devices && i < devices->len; i++)
    if (g_str_equal(((TsWorkerDevice *)g_ptr_array_index(devices, i))->name, name))
      return TRUE;
  return g_str_equal(name, "CPU");
}

static void on_device_changed(GSimpleAction *action, GVariant *value, gpointer user_data)
{
  TsWindow *self = user_data;
  const char *name = g_variant_get_string(value, NULL);
  if (has_device(self, name))
    ts_workspace_set_device(self->workspace, name);
}

/* The device button's label is bound to the workspace's device (ts-window.ui). */
static void on_workspace_device(TsWindow *self)
{
  const char *name = ts_workspace_get_device(self->workspace);
  set_action_state(self, "device", g_variant_new_string(name));
  ts_engine_worker_set_device(self->worker, name);
  ts_profiler_panel_set_device(self->profiler_panel, name);
}

/* A new worker's devices: the menu lists them; a device it lacks is
 * left for the CPU. */
static void on_devices_changed(TsWindow *self)
{
  const char *note = NULL;
  GPtrArray *devices = ts_engine_worker_get_devices(self->worker, &note);
  ts_device_menu_fill(self->device_box, devices, note);
  g_autofree char *current = g_strdup(ts_engine_worker_get_device(self->worker));
  gboolean kept = has_device(self, current);
  g_action_group_change_action_state(G_ACTION_GROUP(self), "device", g_variant_new_string(kept ? current : "CPU"));
  if (!kept) {
    g_autofree char *text = g_strdup_printf("This worker has no %s: runs go to the CPU", current);
    _ts_window_toast(self, text);
  }
}

gboolean ts_window_set_device(TsWindow *self, const char *device, GError **error)
{
  g_return_val_if_fail(TS_IS_WINDOW(self) && device != NULL, FALSE);
  if (has_device(self, device)) {
    g_action_group_change_action_state(G_ACTION_GROUP(self), "device", g_variant_new_string(device));
    return TRUE;
  }
  const char *note = NULL;
  GPtrArray *devices = ts_engine_worker_get_devices(self->worker, &note);
  g_autoptr(GString) names = g_string_new("CPU");
  for (guint i = 1; devices && i < devices->len; i++)
    g_string_append_printf(names, ", %s", ((TsWorkerDevice *)g_ptr_array_index(devices, i))->name);
  g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no device '%s' (there are %s%s%s%s)", device, names->str,
              note ? "; " : "", note ? note : "", devices ? "" : "; no module is open");
  return FALSE;
}

static const GActionEntry stateful_actions[] = {
  { .name = "mode", .parameter_type = "s", .state = "'graph'", .change_state = on_mode_changed },
  { .name = "device", .parameter_type = "s", .state = "'CPU'", .change_state = on_device_changed },
  { .name = "show-node-details", .state = "true", .change_state = on_show_node_details_changed },
  { .name = "profile", .state = "false", .change_state = on_profile_changed },
  { .name = "check-eagerly", .state = "false", .change_state = on_check_eagerly_changed },
};

/* ---- getters ------------------------------------------------------------------------ */

TsLoadedModule *ts_window_get_module(TsWindow *self)
{
  g_return_val_if_fail(TS_IS_WINDOW(self), NULL);
  return ts_workspace_get_module(self->workspace);
}

gboolean ts_window_get_busy(TsWindow *self)
{
  g_return_val_if_fail(TS_IS_WINDOW(self), FALSE);
  return self->loading || self->importing > 0 || self->fetching > 0 || ts_run_controller_get_busy(self->runs) ||
         ts_profiler_panel_get_busy(self->profiler_panel) || ts_profiler_panel_get_fitting(self->profiler_panel);
}

void ts_window_set_remote(TsWindow *self, const char *target)
{
  g_return_if_fail(TS_IS_WINDOW(self));
  ts_engine_worker_set_remote(self->worker, target);
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

gboolean ts_window_get_graph_drawn(TsWindow *self)
{
  g_return_val_if_fail(TS_IS_WINDOW(self), FALSE);
  if (gtk_stack_get_transition_running(self->graph_stack))
    return FALSE;
  if (!ts_window_get_comparing(self))
    return ts_graph_pane_get_drawn(self->graph_pane);
  return ts_graph_view_get_drawn(TS_GRAPH_VIEW(ts_compare_pane_get_view(self->compare_pane, FALSE))) &&
         ts_graph_view_get_drawn(TS_GRAPH_VIEW(ts_compare_pane_get_view(self->compare_pane, TRUE)));
}
TsComparePane *ts_window_get_compare_pane(TsWindow *self) { return self->compare_pane; }

gboolean ts_window_get_comparing(TsWindow *self)
{
  g_return_val_if_fail(TS_IS_WINDOW(self), FALSE);
  return g_strcmp0(gtk_stack_get_visible_child_name(self->graph_stack), "compare") == 0;
}
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
  g_signal_connect_object(self->settings, "changed::recent-modules", G_CALLBACK(on_recent_changed),
                          self, 0);
  update_recent_menu(self);
  g_signal_connect_object(self->settings, "changed::colour-mode", G_CALLBACK(on_colour_mode_changed),
                          self, 0);
  on_colour_mode_changed(self->settings, "colour-mode", self);
  ts_run_panel_set_settings(self->run_panel, self->settings);
  g_signal_connect_object(self->settings, "changed::worker-memory-limit",
                          G_CALLBACK(on_memory_limit_changed), self, 0);
  on_memory_limit_changed(self->settings, "worker-memory-limit", self);
}

static void ts_window_dispose(GObject *object)
{
  TsWindow *self = TS_WINDOW(object);
  if (self->load_cancellable)
    g_cancellable_cancel(self->load_cancellable);
  if (self->runs)
    ts_run_controller_shut_down(self->runs);
  if (self->import_cancellable)
    g_cancellable_cancel(self->import_cancellable);
  if (self->error_dialog)
    gtk_window_destroy(self->error_dialog);
  if (self->graph_pane) /* the view clears its selection as it goes: no details to show then */
    g_signal_handlers_disconnect_by_data(graph_view(self), self);
  for (int side = 0; self->compare_pane && side < 2; side++)
    g_signal_handlers_disconnect_by_data(ts_compare_pane_get_view(self->compare_pane, side), self);
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_WINDOW);
  if (self->watch) {
    g_signal_handlers_disconnect_by_data(self->watch, self);
    ts_module_watch_set_path(self->watch, NULL);
  }
  if (self->worker)
    g_signal_handlers_disconnect_by_data(self->worker, self);
  g_clear_object(&self->watch);
  g_clear_object(&self->worker);
  g_clear_object(&self->load_cancellable);
  g_clear_object(&self->runs);
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
  gtk_widget_class_bind_template_child(widget_class, TsWindow, bottom_stack);
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

  gtk_widget_class_install_action(widget_class, "win.open", NULL, action_open);
  gtk_widget_class_install_action(widget_class, "win.open-module", "s", action_open_module);
  gtk_widget_class_install_action(widget_class, "win.connect-remote", NULL, action_connect_remote);
  gtk_widget_class_install_action(widget_class, "win.connect-remote-to", "(ss)", action_connect_remote_to);
  gtk_widget_class_install_action(widget_class, "win.reload", NULL, action_reload);
  gtk_widget_class_install_action(widget_class, "win.run", NULL, action_run);
  gtk_widget_class_install_action(widget_class, "win.debug", "s", action_debug);
  gtk_widget_class_install_action(widget_class, "win.add-breakpoint", "s", action_add_breakpoint);
  gtk_widget_class_install_action(widget_class, "win.cancel", NULL, action_cancel);
  gtk_widget_class_install_action(widget_class, "win.apply-signature", "s", action_apply_signature);
  gtk_widget_class_install_action(widget_class, "win.clear-log", NULL, action_clear_log);
  gtk_widget_class_install_action(widget_class, "win.show-panel", "s", action_show_panel);
  gtk_widget_class_install_action(widget_class, "win.select-function", "s", action_select_function);
  gtk_widget_class_install_action(widget_class, "win.select-concrete", "(si)", action_select_function);
  gtk_widget_class_install_action(widget_class, "win.compare-concrete", "(sii)", action_compare_concrete);
  gtk_widget_class_install_action(widget_class, "win.close-compare", NULL, action_close_compare);
  gtk_widget_class_install_action(widget_class, "win.compare-passes", NULL, action_compare_passes);
  gtk_widget_class_install_action(widget_class, "win.profile-compare", NULL, action_profile_compare);
  gtk_widget_class_install_action(widget_class, "win.profile-devices", NULL, action_profile_devices);
  _ts_window_class_add_file_actions(widget_class);

  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_o, GDK_CONTROL_MASK, "win.open", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_r, GDK_CONTROL_MASK, "win.run", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_F5, 0, "win.run", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_e, GDK_CONTROL_MASK, "win.export-graph", NULL);
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
  g_action_map_add_action_entries(G_ACTION_MAP(self), stateful_actions,
                                  G_N_ELEMENTS(stateful_actions), self);
  g_signal_connect_swapped(self->workspace, "notify::mode", G_CALLBACK(on_workspace_mode), self);
  g_signal_connect_swapped(self->workspace, "notify::device", G_CALLBACK(on_workspace_device), self);
  g_signal_connect_swapped(self->workspace, "notify::profile", G_CALLBACK(on_workspace_profile), self);
  self->watch = ts_module_watch_new();
  self->worker = ts_engine_worker_new();
  g_signal_connect(self->watch, "file-changed", G_CALLBACK(on_file_changed), self);
  const TsRunPanels panels = {
    .run_panel = self->run_panel, .trace_log = self->trace_log, .console = self->console,
    .function_list = self->function_list, .debug_panel = self->debug_panel,
    .profiler_panel = self->profiler_panel, .panels = self->bottom_stack,
  };
  self->runs = ts_run_controller_new(self->worker, self->workspace, &panels);
  g_signal_connect_swapped(self->runs, "notify::busy", G_CALLBACK(_ts_window_notify_busy), self);
  g_signal_connect_swapped(self->runs, "selection-outdated", G_CALLBACK(_ts_window_show_selection), self);
  g_signal_connect_swapped(self->runs, "worker-died", G_CALLBACK(on_worker_died), self);
  g_signal_connect_swapped(self->runs, "message", G_CALLBACK(_ts_window_toast), self);
  g_signal_connect(self->worker, "module-changed", G_CALLBACK(on_remote_module_changed), self);
  g_signal_connect_swapped(self->worker, "notify::devices", G_CALLBACK(on_devices_changed), self);
  ts_device_menu_fill(self->device_box, NULL, NULL);
  g_signal_connect(self->function_list, "notify::selected", G_CALLBACK(on_selected_changed), self);
  ts_function_list_capture_keys(self->function_list, GTK_WIDGET(self)); /* type anywhere to filter */
  g_signal_connect(self->trace_log, "entry-activated", G_CALLBACK(on_entry_activated), self);
  g_signal_connect(graph_view(self), "node-selected", G_CALLBACK(on_node_selected), self);
  g_signal_connect(self->debug_panel, "op-shown", G_CALLBACK(on_debug_op_shown), self);
  g_signal_connect(self->node_details, "activate-node", G_CALLBACK(on_details_activate_node), self);
  g_signal_connect(self->node_details, "activate-subgraph", G_CALLBACK(on_details_activate_subgraph), self);
  g_signal_connect(self->profiler_panel, "node-selected", G_CALLBACK(on_profile_node_selected), self);
  g_signal_connect_swapped(self->profiler_panel, "session-ready", G_CALLBACK(update_compute_times), self);
  g_signal_connect_swapped(self->profiler_panel, "session-ready", G_CALLBACK(update_details_extras), self);
  g_signal_connect_swapped(self->profiler_panel, "notify::busy", G_CALLBACK(_ts_window_notify_busy), self);
  g_signal_connect_swapped(self->profiler_panel, "notify::fitting", G_CALLBACK(_ts_window_notify_busy), self);
  g_signal_connect(ts_graph_pane_get_view(self->graph_pane), "node-selected", G_CALLBACK(on_graph_node_selected),
                   self);
  for (int side = 0; side < 2; side++)
    g_signal_connect(ts_compare_pane_get_view(self->compare_pane, side), "node-selected",
                     G_CALLBACK(on_compare_node_selected), self);
  _ts_window_show_selection(self);
}

TsWindow *ts_window_new(GtkApplication *application)
{
  return g_object_new(TS_TYPE_WINDOW, "application", application, NULL);
}
