/* ts-window.c — the main window and its actions. */
#include "ts-window.h"

#include "ts-application.h"
#include "ts-connect-dialog.h"
#include "ts-device-menu.h"
#include "ts-engine-worker.h"
#include "ts-graph-view.h"
#include "ts-input-signature.h"
#include "ts-module-watch.h"
#include "ts-profile-values.h"
#include "ts-profiler-panel.h"
#include "ts-session.h"
#include "ts-spec-text.h"
#include "ts-tensor-view.h"
#include "ts-source-snippet.h"
#include "ts-trace-import.h"
#include "ts-worker-optimized.h"

#define MAX_RECENT 8

struct _TsWindow {
  AdwApplicationWindow parent_instance;

  AdwToastOverlay *toast_overlay;
  AdwWindowTitle *window_title;
  GtkStack *main_stack;
  GtkWidget *sidebar_split, *run_paned; /* hidden while a trace is shown with no module */
  GtkStack *bottom_stack;
  TsDebugPanel *debug_panel;
  guint importing;        /* trace files being read */
  GCancellable *import_cancellable; /* theirs */
  AdwToast *import_toast; /* their progress, with Cancel */
  double import_progress;
  guint fetching;         /* optimized graphs being asked of the worker */
  GStrv debug_args;       /* a debug call waiting for its graph to be traced */
  TsFunctionList *function_list;
  GtkStack *graph_stack;
  TsGraphPane *graph_pane;
  TsComparePane *compare_pane;
  TsRunPanel *run_panel;
  TsTraceLog *trace_log;
  TsConsole *console;
  TsNodeDetails *node_details;
  TsProfilerPanel *profiler_panel;
  GMenu *recent_menu;
  GtkMenuButton *device_button;
  GtkBox *device_box;

  GSettings *settings;
  TsModuleWatch *watch;
  TsEngineWorker *worker;
  TsLoadedModule *module;
  GCancellable *load_cancellable;
  GCancellable *run_cancellable;
  guint run_id;          /* the call the run panel waits for */
  guint run_repeat;
  gboolean run_eager;
  char *against;          /* Compare with the CPU: the device of its second run, while the CPU's runs */
  GStrv against_args;     /* and the arguments both take */
  gboolean against_profiling; /* Profile as it was before */
  gboolean loading;
  char *error;
  GtkWindow *error_dialog;
  char *current_function; /* the run panel's */
  char *death;            /* how the last run ended its worker, shown again after the restart */
  TsSession *session;     /* a session being opened: applied once its module is */
  GHashTable *trace_errors; /* function -> why its last trace failed (none once one worked) */
  gboolean revealing;     /* a profiler row's node is being revealed: not a filter for the table */
  gboolean profile_once;  /* Profile is being set for this window only: not saved */
};

enum { PROP_0, PROP_MODULE, PROP_BUSY, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE(TsWindow, ts_window, ADW_TYPE_APPLICATION_WINDOW)

static void toast(TsWindow *self, const char *text)
{
  AdwToast *t = adw_toast_new(text);
  adw_toast_set_timeout(t, 4);
  adw_toast_overlay_add_toast(self->toast_overlay, t);
}

static gboolean is_debug(TsWindow *self)
{
  g_autoptr(GVariant) state = g_action_group_get_action_state(G_ACTION_GROUP(self), "mode");
  return state && g_strcmp0(g_variant_get_string(state, NULL), "debug") == 0;
}

static gboolean is_eager(TsWindow *self)
{
  g_autoptr(GVariant) state = g_action_group_get_action_state(G_ACTION_GROUP(self), "mode");
  return state && g_strcmp0(g_variant_get_string(state, NULL), "eager") == 0;
}

static void update_actions(TsWindow *self)
{
  TsSidebarItem *item = ts_function_list_get_selected(self->function_list);
  gboolean running = self->run_cancellable != NULL;
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.run", item != NULL && !running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.cancel", running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.profile-compare", item != NULL && !running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.profile-devices", item != NULL && !running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.reload", self->module != NULL && !self->loading);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.apply-signature",
                                self->module != NULL && !ts_engine_worker_get_busy(self->worker));
}

static void notify_busy(TsWindow *self)
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

static void show_selection(TsWindow *self)
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
  if (g_strcmp0(name, self->current_function) != 0) {
    g_free(self->current_function);
    self->current_function = g_strdup(name);
    ts_run_panel_set_function(self->run_panel, self->module, name);
  }
  /* what the debugger showed was another function's */
  if (ts_debug_panel_get_function(self->debug_panel) && g_strcmp0(ts_debug_panel_get_function(self->debug_panel), name) != 0)
    ts_debug_panel_clear(self->debug_panel);
  TsConcreteInfo *cf = ts_sidebar_item_get_concrete(item);
  if (!cf) {
    GListModel *children = ts_sidebar_item_get_children(item);
    guint n = g_list_model_get_n_items(children);
    if (n > 0) {
      g_autoptr(TsSidebarItem) last = g_list_model_get_item(children, n - 1);
      cf = ts_sidebar_item_get_concrete(last);
    }
  }
  if (cf) {
    ts_graph_pane_show_concrete(self->graph_pane, ts_sidebar_item_get_module(item), cf);
    return;
  }
  const char *failure = g_hash_table_lookup(self->trace_errors, name);
  if (failure && !is_eager(self)) {
    g_autofree char *failed = g_strdup_printf("Tracing %s Failed", name);
    ts_graph_pane_show_status(self->graph_pane, "dialog-error-symbolic", failed, failure);
    return;
  }
  g_autofree char *title = g_strdup_printf("%s Is Not Traced Yet", name);
  ts_graph_pane_show_status(self->graph_pane, "system-run-symbolic", title,
                            is_eager(self)
                              ? "Eager mode runs the C code op by op: no graph is made. Switch to Graph and run it."
                              : "Run it in graph mode: the first call traces its graph.");
}

static void on_selected_changed(TsFunctionList *list, GParamSpec *pspec, TsWindow *self)
{
  show_selection(self);
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
    toast(self, text);
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
  toast(self, text);
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
static void show_module_panes(TsWindow *self, gboolean shown)
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
  g_autoptr(TsLoadedModule) shown_module = shown && self->module ? g_object_ref(self->module) : NULL;
  g_set_object(&self->module, module);
  g_hash_table_remove_all(self->trace_errors);
  if (!keep) { /* another module: the last one's debug call and timings are no use here */
    ts_debug_panel_clear(self->debug_panel);
    ts_profiler_panel_set_session(self->profiler_panel, NULL, NULL);
    ts_profiler_panel_set_compare(self->profiler_panel, NULL, NULL);
  }
  if (!restart) {
    g_clear_pointer(&self->current_function, g_free);
    ts_run_panel_set_function(self->run_panel, NULL, NULL);
  }
  ts_function_list_set_module(self->function_list, module);
  adw_window_title_set_title(self->window_title, ts_loaded_module_get_title(module));
  const char *remote = ts_engine_worker_get_remote(self->worker);
  g_autofree char *where = remote ? g_strdup_printf("%s on %s", ts_loaded_module_get_file(module), remote) : NULL;
  const char *subtitle = where ? where : ts_loaded_module_get_file(module);
  adw_window_title_set_subtitle(self->window_title, subtitle);
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->window_title), subtitle);
  gtk_stack_set_visible_child_name(self->main_stack, "main");
  show_module_panes(self, TRUE);
  /* a remote module's file is not here to watch: its worker watches it there (::module-changed) */
  ts_module_watch_set_path(self->watch, ts_engine_worker_get_remote(self->worker) ? NULL
                                                                                 : ts_loaded_module_get_file(module));
  ts_node_details_set_source(self->node_details, self->worker, ts_loaded_module_get_file(module));
  /* a reloaded module starts untraced: the function stays selected, not its old graphs */
  if (!function || !ts_function_list_select(self->function_list, function, -1))
    show_selection(self);
  if (shown_module) /* the graph of the worker before, as a trace log row shows it */
    ts_graph_pane_show_concrete(self->graph_pane, shown_module, shown);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_MODULE]);
}

static void apply_session(TsWindow *self);

static void show_error_dialog(TsWindow *self, const char *heading, const char *message)
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

typedef enum { LOAD_OPEN, LOAD_RELOAD, LOAD_RESTART } LoadKind;

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
      toast(self, text);
    } else {
      show_error_dialog(self, "Cannot Open Module", error->message);
    }
  } else {
    set_module(self, module, req->kind != LOAD_OPEN, req->kind == LOAD_RESTART);
    if (req->kind == LOAD_OPEN && self->session)
      apply_session(self);
    /* the run panel starts afresh with the module: what ended the last run stays said */
    if (req->kind == LOAD_RESTART && self->death)
      ts_run_panel_show_error(self->run_panel, self->death);
    g_clear_pointer(&self->death, g_free);
    if (req->kind != LOAD_OPEN)
      toast(self, DONE[req->kind]);
    else
      if (!ts_engine_worker_get_remote(self->worker)) /* a path there is not one here */
        remember_recent(self, req->source);
  }
  notify_busy(self);
out:
  g_object_unref(req->self);
  g_free(req->source);
  g_free(req);
}

static void load(TsWindow *self, const char *source, LoadKind kind)
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
  notify_busy(self);
}

void ts_window_open_module(TsWindow *self, const char *source)
{
  g_return_if_fail(TS_IS_WINDOW(self) && source != NULL);
  g_clear_pointer(&self->session, ts_session_free); /* a module asked for is not a session's */
  load(self, source, LOAD_OPEN);
}

static void reload(TsWindow *self)
{
  if (self->module)
    load(self, ts_loaded_module_get_source(self->module), LOAD_RELOAD);
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
                            self->module ? ts_loaded_module_get_source(self->module) : NULL, connect_remote, self);
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
  g_autoptr(ts_render_values) values = session && by_node && self->module
                                         ? ts_profile_compute_times(session, by_node, self->module)
                                         : NULL;
  ts_graph_pane_set_compute_times(self->graph_pane, values);
}

static void on_profile_changed(GSimpleAction *action, GVariant *value, gpointer user_data)
{
  TsWindow *self = user_data;
  g_simple_action_set_state(action, value);
  ts_engine_worker_set_profiling(self->worker, g_variant_get_boolean(value));
  if (self->settings && !self->profile_once)
    g_settings_set_boolean(self->settings, "profile", g_variant_get_boolean(value));
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

static void on_compare_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(TsWindow) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(TsRunResult) r = ts_engine_worker_run_finish(TS_ENGINE_WORKER(source), result, &error);
  g_clear_object(&self->run_cancellable);
  ts_run_panel_set_running(self->run_panel, FALSE);
  if (r && r->compare) {
    ts_profiler_panel_set_compare(self->profiler_panel, g_steal_pointer(&r->profile), g_steal_pointer(&r->compare));
    gtk_stack_set_visible_child_name(self->bottom_stack, "profiler");
  } else if (r) { /* traced only: the worker made no calls to compare */
    toast(self, "Nothing to compare: an argument is a bare spec, so the function was traced, not run");
  } else if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
    g_autofree char *text = g_strdup_printf("Cannot compare: %s", error->message);
    toast(self, text);
  }
  notify_busy(self);
}

/* The run panel's arguments for a run of the selected function; NULL when
 * there is nothing to run now, or they do not read (the panel says why). */
static GStrv run_args(TsWindow *self)
{
  if (!self->module || !self->current_function || self->run_cancellable)
    return NULL;
  g_autoptr(GError) error = NULL;
  GStrv args = ts_run_panel_dup_args(self->run_panel, &error);
  if (!args)
    ts_run_panel_show_error(self->run_panel, error->message);
  return args;
}

/* The selected function with the run panel's arguments, eagerly and as a
 * graph, compared op by op in the Profiler panel. */
static void action_profile_compare(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  g_auto(GStrv) args = run_args(self);
  if (!args)
    return;
  self->run_cancellable = g_cancellable_new();
  self->run_repeat = 1;
  ts_run_panel_set_running(self->run_panel, TRUE);
  self->run_id = ts_engine_worker_compare_async(self->worker, self->module, self->current_function,
                                                (const char *const *)args,
                                                ts_profiler_panel_get_compare_calls(self->profiler_panel),
                                                self->run_cancellable, on_compare_done, g_object_ref(self));
  notify_busy(self);
}

/* ---- the CPU against the device ----------------------------------------------------
 * The selected function with the run panel's arguments profiled on the
 * CPU, then on the chosen device: the CPU's run is the Diff page's
 * baseline, the device's the run shown, so the Diff page compares them op
 * by op (on the device its kernels' time, the host's launch beside it). */

static void on_run_done(GObject *source, GAsyncResult *result, gpointer user_data);

static void against_end(TsWindow *self)
{
  ts_engine_worker_set_profiling(self->worker, self->against_profiling);
  g_clear_pointer(&self->against, g_free);
  g_clear_pointer(&self->against_args, g_strfreev);
}

static void on_device_run_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(TsWindow) self = g_object_ref(user_data); /* on_run_done drops user_data's */
  against_end(self);
  on_run_done(source, result, user_data); /* shows it; the Diff page compares it with the CPU's */
  if (self->profiler_panel && ts_profiler_panel_get_session(self->profiler_panel))
    ts_profiler_panel_show_page(self->profiler_panel, "diff");
}

static void on_cpu_run_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(TsWindow) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(TsRunResult) r = ts_engine_worker_run_finish(TS_ENGINE_WORKER(source), result, &error);
  if (!r || !r->profile) {
    g_clear_object(&self->run_cancellable);
    ts_run_panel_set_running(self->run_panel, FALSE);
    if (r)
      toast(self, "Nothing to compare: an argument is a bare spec, so the function was traced, not run");
    else if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
      ts_run_panel_show_error(self->run_panel, error->message);
    against_end(self);
    notify_busy(self);
    return;
  }
  g_autofree char *label = g_strdup_printf("the CPU, %s", r->label ? r->label : "");
  ts_profiler_panel_set_baseline(self->profiler_panel, g_steal_pointer(&r->profile), label);
  ts_engine_worker_set_device(self->worker, self->against);
  self->run_id = ts_engine_worker_run_async(self->worker, self->module, self->current_function,
                                            (const char *const *)self->against_args, self->run_repeat,
                                            self->run_eager, self->run_cancellable, on_device_run_done,
                                            g_object_ref(self));
}

static void action_profile_devices(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  const char *device = ts_engine_worker_get_device(self->worker);
  if (g_str_equal(device, "CPU")) {
    toast(self, "Choose a device to compare with the CPU first (the device menu)");
    return;
  }
  g_auto(GStrv) args = run_args(self);
  if (!args || is_debug(self))
    return;
  self->against = g_strdup(device);
  self->against_args = g_steal_pointer(&args);
  self->against_profiling = ts_engine_worker_get_profiling(self->worker);
  ts_engine_worker_set_profiling(self->worker, TRUE);
  self->run_cancellable = g_cancellable_new();
  self->run_repeat = ts_run_panel_get_repeat(self->run_panel);
  self->run_eager = is_eager(self);
  ts_run_panel_set_running(self->run_panel, TRUE);
  ts_engine_worker_set_device(self->worker, "CPU"); /* for this run: each takes the device it starts with */
  self->run_id = ts_engine_worker_run_async(self->worker, self->module, self->current_function,
                                            (const char *const *)self->against_args, self->run_repeat,
                                            self->run_eager, self->run_cancellable, on_cpu_run_done,
                                            g_object_ref(self));
  ts_engine_worker_set_device(self->worker, self->against);
  notify_busy(self);
}

/* ---- running ---------------------------------------------------------------------- */

static void on_run_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(TsWindow) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(TsRunResult) r = ts_engine_worker_run_finish(TS_ENGINE_WORKER(source), result, &error);
  g_clear_object(&self->run_cancellable);
  ts_run_panel_set_running(self->run_panel, FALSE);
  if (r)
    ts_run_panel_show_result(self->run_panel, r, self->run_eager);
  else if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    ts_run_panel_show_error(self->run_panel, "Cancelled: the calls left were not made and the result of the one running is dropped.");
  else
    ts_run_panel_show_error(self->run_panel, error->message);
  if (g_error_matches(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED)) {
    g_free(self->death);
    self->death = g_strdup(error->message);
  }
  if (r && r->profile) /* the colouring follows once its tables are in (session-ready) */
    ts_profiler_panel_set_session(self->profiler_panel, g_steal_pointer(&r->profile), r->label);
  notify_busy(self);
}

/* Debug mode: Run starts a debug call, or continues the one stopped. */
static void on_debug_op_shown(TsDebugPanel *panel, const char *node, const char *function, TsWindow *self);

/* The graph of a debug call's signature came: shown, with the op the
 * debugger is at selected in it. */
/* The debug call starts once its graph is traced: its ops are matched to
 * the graph's nodes when the call begins (a graph traced meanwhile would
 * find them unmatched), and the worker may run the two at once. */
static void on_debug_traced(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(TsWindow) self = user_data;
  g_autoptr(TsRunResult) r = ts_engine_worker_run_finish(TS_ENGINE_WORKER(source), res, NULL);
  g_auto(GStrv) args = g_steal_pointer(&self->debug_args);
  if (!gtk_widget_get_realized(GTK_WIDGET(self)) || !args)
    return;
  if (r)
    show_selection(self);
  ts_debug_panel_start(self->debug_panel, self->worker, self->module, self->current_function,
                       (const char *const *)args);
}

/* A debug call's arguments as a trace-only call takes them: a tensor's
 * values become its bare spec ("f32[10,10]:ones" -> "f32[10,10]"), so the
 * worker traces the same signature without running anything. */
static GStrv trace_args(const char *const *args)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new();
  for (const char *const *a = args; *a; a++) {
    g_autofree char *head = g_strndup(*a, strcspn(*a, ":="));
    ts_spec spec;
    g_strv_builder_add(b, ts_spec_parse(head, &spec) ? head : *a);
  }
  return g_strv_builder_end(b);
}

static void run_debug(TsWindow *self, const char *const *args)
{
  gtk_stack_set_visible_child_name(self->bottom_stack, "debugger");
  if (ts_debug_panel_get_stopped(self->debug_panel)) {
    ts_debug_panel_command(self->debug_panel, TS_DEBUG_COMMAND_CONTINUE);
    return;
  }
  if (ts_debug_panel_get_active(self->debug_panel) || self->debug_args)
    return;
  /* The graph of the debug call's own signature, which the debugger shows
   * its ops in and matches them to (their node names and scopes: what
   * breakpoints on a scope test), is traced first; where it is
   * traced already this finds it.  The graph shown may be another
   * signature's (train(200) shown, train(1) debugged). */
  g_auto(GStrv) specs = trace_args(args);
  self->debug_args = g_strdupv((char **)args);
  ts_engine_worker_run_async(self->worker, self->module, self->current_function, (const char *const *)specs, 1,
                             FALSE, NULL, on_debug_traced, g_object_ref(self));
}

static void action_run(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  g_auto(GStrv) args = run_args(self);
  if (!args)
    return;
  if (is_debug(self)) {
    run_debug(self, (const char *const *)args);
    return;
  }
  self->run_cancellable = g_cancellable_new();
  self->run_repeat = ts_run_panel_get_repeat(self->run_panel);
  self->run_eager = is_eager(self);
  ts_run_panel_set_running(self->run_panel, TRUE);
  self->run_id = ts_engine_worker_run_async(self->worker, self->module, self->current_function,
                                            (const char *const *)args, self->run_repeat,
                                            self->run_eager, self->run_cancellable, on_run_done,
                                            g_object_ref(self));
  notify_busy(self);
}

static void action_cancel(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  if (self->run_cancellable)
    g_cancellable_cancel(self->run_cancellable);
}

static void on_progress(TsEngineWorker *worker, guint call_id, double fraction, TsWindow *self)
{
  if (call_id == self->run_id && self->run_cancellable && self->run_repeat > 1)
    ts_run_panel_set_progress(self->run_panel, fraction);
}

static void on_transfer(TsEngineWorker *worker, guint call_id, guint64 received, guint64 total, TsWindow *self)
{
  if (call_id == self->run_id && self->run_cancellable)
    ts_run_panel_set_transfer(self->run_panel, received, total);
}

static void on_trace(TsEngineWorker *worker, TsTraceEntry *entry, TsWindow *self)
{
  ts_trace_log_add(self->trace_log, entry);
  const char *function = ts_trace_entry_get_function(entry);
  if (ts_trace_entry_get_failed(entry)) {
    g_hash_table_replace(self->trace_errors, g_strdup(function), g_strdup(ts_trace_entry_get_reason(entry)));
    TsSidebarItem *selected = ts_function_list_get_selected(self->function_list);
    if (selected && g_strcmp0(ts_sidebar_item_get_function_name(selected), function) == 0)
      show_selection(self);
    return;
  }
  g_hash_table_remove(self->trace_errors, function);
  ts_function_list_add_trace(self->function_list, entry);
  TsSidebarItem *item = ts_function_list_get_selected(self->function_list);
  if (ts_trace_entry_get_module(entry) == self->module && item &&
      g_strcmp0(ts_sidebar_item_get_function_name(item), ts_trace_entry_get_function(entry)) == 0)
    ts_function_list_select(self->function_list, ts_trace_entry_get_function(entry),
                            ts_trace_entry_get_concrete_index(entry));
}

static void on_warning(TsEngineWorker *worker, guint kind, const char *function,
                       const char *message, const char *arguments, TsWindow *self)
{
  /* retracing warnings have a fix to apply (the suggested input signature); a divergence has none */
  ts_trace_log_show_warning(self->trace_log, function, message, kind != TS_WARNING_DIVERGENCE);
}

static void on_output(TsEngineWorker *worker, guint call_id, const char *label, gint64 time_us, int source,
                      const char *text, TsWindow *self)
{
  ts_console_add_output(self->console, call_id, label, time_us, source, text);
}

static void on_print(TsEngineWorker *worker, guint call_id, const char *text, TsWindow *self)
{
  ts_console_note_print(self->console, call_id, text);
}

static void console_note(TsWindow *self, guint call_id, const char *label, const char *text)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    if (!**l && !l[1])
      break;
    ts_console_add_output(self->console, call_id, label, g_get_real_time(), TS_CONSOLE_SOURCE_WORKER, *l);
  }
}

/* The worker ended on its own: what happened goes to the console (the run
 * that was running fails with the summary), and a fresh worker opens the
 * module again so that the next Run can start. */
static void on_worker_died(TsEngineWorker *worker, TsWorkerDeath *death, const char *label,
                           TsWindow *self)
{
  g_autofree char *what = g_strdup_printf("%s%s%s", label ? label : "the worker", label ? " " : " ",
                                          death->summary);
  console_note(self, death->call_id, label, what);
  if (death->last_op) {
    g_autofree char *op = g_strdup_printf("last op started: %s", death->last_op);
    console_note(self, death->call_id, label, op);
  }
  if (death->backtrace) {
    console_note(self, death->call_id, label, "backtrace of the worker:");
    console_note(self, death->call_id, label, death->backtrace);
  }
  if (self->module && !self->loading)
    load(self, ts_loaded_module_get_source(self->module), LOAD_RESTART);
}

static void on_worker_busy(TsEngineWorker *worker, GParamSpec *pspec, TsWindow *self)
{
  notify_busy(self);
}

/* ---- the trace log ---------------------------------------------------------------- */

static void on_entry_activated(TsTraceLog *log, TsTraceEntry *entry, TsWindow *self)
{
  /* a failed trace made no concrete function: its function's row says why */
  int index = ts_trace_entry_get_failed(entry) ? -1 : ts_trace_entry_get_concrete_index(entry);
  if (ts_trace_entry_get_module(entry) == self->module &&
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
    toast(req->self, req->text);
    ts_trace_log_hide_warning(req->self->trace_log);
  } else {
    g_autofree char *text = g_strdup_printf("Cannot apply the input signature: %s", error->message);
    toast(req->self, text);
  }
  g_object_unref(req->self);
  g_free(req->text);
  g_free(req);
}

static void action_apply_signature(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  const char *function = g_variant_get_string(param, NULL);
  TsModuleFunction *fn = self->module ? ts_loaded_module_lookup(self->module, function) : NULL;
  if (!fn || ts_engine_worker_get_busy(self->worker))
    return;
  g_autoptr(GError) error = NULL;
  g_autofree ts_spec *specs = NULL;
  int n = 0;
  if (!ts_input_signature_relaxed(fn, &specs, &n, &error)) {
    g_autofree char *text = g_strdup_printf("Cannot apply an input signature: %s", error->message);
    toast(self, text);
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
    toast(self, text);
  }
}

/* Shows two concrete functions of a function side by side. */
static void action_compare_concrete(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  const char *function;
  int left, right;
  g_variant_get(param, "(&sii)", &function, &left, &right);
  TsModuleFunction *fn = self->module ? ts_loaded_module_lookup(self->module, function) : NULL;
  int n = fn ? (int)fn->concrete->len : 0;
  if (left < 0 || left >= n || right < 0 || right >= n) {
    g_autofree char *text = g_strdup_printf("%s has no concrete functions %d and %d to compare",
                                            function, left, right);
    toast(self, text);
    return;
  }
  /* shown first, so that the views have their size when the layouts are fitted */
  gtk_stack_set_visible_child_name(self->graph_stack, "compare");
  ts_compare_pane_show(self->compare_pane, self->module, ts_module_function_concrete(fn, left),
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
    toast(self, text);
  } else if (ts_graph_pane_get_concrete(self->graph_pane) == req->cf) {
    show_passes(self, req->cf);
  }
  notify_busy(self);
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
    toast(self, "Select a traced concrete function first");
    return;
  }
  if (cf->optimized) {
    show_passes(self, cf);
    return;
  }
  TsModuleFunction *fn = self->module ? ts_loaded_module_lookup(self->module, cf->function) : NULL;
  TsWorker *worker = ts_engine_worker_get_worker(self->worker);
  if (!fn || ts_module_function_concrete(fn, cf->index) != cf || !worker) {
    toast(self, "The worker that traced this graph has ended: run the function again to see its optimized graph");
    return;
  }
  PassesRequest *req = g_new0(PassesRequest, 1);
  req->self = g_object_ref(self);
  req->cf = ts_concrete_info_ref(cf);
  self->fetching++;
  ts_worker_get_optimized_async(worker, cf->function, cf->signature, cf->graph, NULL, on_optimized, req);
  notify_busy(self);
}

/* ---- sessions ------------------------------------------------------------------------ */

static void remember_into(const char *function, const char *const *specs, guint repeat, gpointer session)
{
  ts_session_add_args(session, function, specs, repeat);
}

static void save_session(TsWindow *self, const char *path)
{
  if (!self->module) {
    toast(self, "Open a module first: a session is what you did with one");
    return;
  }
  /* what the run panel shows now counts as typed */
  g_auto(GStrv) current = ts_run_panel_dup_args(self->run_panel, NULL);
  TsSidebarItem *item = ts_function_list_get_selected(self->function_list);
  g_autoptr(TsSession) session =
    ts_session_new(ts_loaded_module_get_source(self->module),
                   item ? ts_sidebar_item_get_function_name(item) : NULL, is_debug(self) ? "debug" : is_eager(self) ? "eager" : "graph");
  ts_run_panel_foreach_remembered(self->run_panel, ts_loaded_module_get_source(self->module), remember_into,
                                  session);
  GListModel *log = ts_trace_log_get_entries(self->trace_log);
  for (guint i = 0; i < g_list_model_get_n_items(log); i++) {
    g_autoptr(TsTraceEntry) entry = g_list_model_get_item(log, i);
    ts_session_add_entry(session, entry);
  }
  TsGraphView *view = TS_GRAPH_VIEW(ts_graph_pane_get_view(self->graph_pane));
  TsConcreteInfo *shown = ts_graph_pane_get_concrete(self->graph_pane);
  if (shown && ts_graph_view_get_graph(view)) {
    g_auto(GStrv) expanded = ts_graph_view_dup_expanded(view);
    double zoom, x, y;
    ts_graph_view_get_centre(view, &zoom, &x, &y);
    ts_session_set_view(session, shown->function, shown->signature, (const char *const *)expanded, zoom, x, y);
  }
  g_autoptr(GError) error = NULL;
  g_autofree char *base = g_path_get_basename(path);
  g_autofree char *text = ts_session_save(session, path, &error)
                            ? g_strdup_printf("Session saved to %s", base)
                            : g_strdup(error->message);
  toast(self, text);
}

static gboolean is_view_graph(const TsConcreteInfo *cf, const TsSession *session)
{
  return cf && cf->graph && g_str_equal(cf->function, session->view_function) &&
         g_str_equal(cf->signature, session->view_signature);
}

/* The graph the session's view showed (the module's own, or the trace
 * log's copy, newest first, when this module has not traced it), as it
 * was shown. */
static void restore_view(TsWindow *self, const TsSession *session)
{
  GListModel *log = ts_trace_log_get_entries(self->trace_log);
  for (guint i = g_list_model_get_n_items(log);
       i > 0 && !is_view_graph(ts_graph_pane_get_concrete(self->graph_pane), session); i--) {
    g_autoptr(TsTraceEntry) entry = g_list_model_get_item(log, i - 1);
    TsConcreteInfo *cf = (TsConcreteInfo *)ts_trace_entry_get_concrete(entry);
    if (is_view_graph(cf, session))
      ts_graph_pane_show_concrete(self->graph_pane, ts_trace_entry_get_module(entry), cf);
  }
  if (is_view_graph(ts_graph_pane_get_concrete(self->graph_pane), session))
    ts_graph_view_restore(TS_GRAPH_VIEW(ts_graph_pane_get_view(self->graph_pane)),
                          (const char *const *)session->expanded, session->zoom, session->centre_x,
                          session->centre_y);
}

/* Once the session's module is open: its arguments, mode, selection and log. */
static void apply_session(TsWindow *self)
{
  g_autoptr(TsSession) session = g_steal_pointer(&self->session);
  const char *source = ts_loaded_module_get_source(self->module);
  for (guint i = 0; i < session->args->len; i++) {
    const TsSessionArgs *a = g_ptr_array_index(session->args, i);
    ts_run_panel_remember(self->run_panel, source, a->function, (const char *const *)a->specs, a->repeat);
  }
  g_action_group_change_action_state(G_ACTION_GROUP(self), "mode", g_variant_new_string(session->mode));
  g_autoptr(GPtrArray) entries = ts_session_make_entries(session, self->module);
  for (guint i = 0; i < entries->len; i++)
    ts_trace_log_add(self->trace_log, g_ptr_array_index(entries, i));
  if (session->function)
    ts_function_list_select(self->function_list, session->function, -1);
  /* the run panel shows the remembered arguments of the selection */
  g_clear_pointer(&self->current_function, g_free);
  show_selection(self);
  if (session->expanded)
    restore_view(self, session);
}

/* ---- trace files ----------------------------------------------------------------- */

typedef struct {
  TsWindow *self; /* held until the file is read */
  char *path;
  gboolean baseline; /* what the Diff page compares the recording with */
} TraceImport;

static void on_import_progress(double fraction, gpointer user_data)
{
  TsWindow *self = user_data;
  self->import_progress = fraction;
  if (!self->import_toast)
    return;
  g_autofree char *title = g_strdup_printf("Reading the trace… %d%%", (int)(fraction * 100));
  adw_toast_set_title(self->import_toast, title);
}

/* A trace read: the panel's recording, or (baseline) what the Diff page
 * compares the recording with. */
static void on_trace_imported(GObject *source, GAsyncResult *res, gpointer user_data)
{
  TraceImport *ti = user_data;
  TsWindow *self = ti->self;
  g_autoptr(GError) error = NULL;
  tsp_session *s = ts_trace_import_finish(res, &error);
  if (--self->importing == 0) {
    if (self->import_toast)
      adw_toast_dismiss(self->import_toast);
    g_clear_object(&self->import_toast);
    g_clear_object(&self->import_cancellable);
  }
  if (!self->profiler_panel) { /* the window went while the file was read */
    g_clear_pointer(&s, tsp_session_free);
  } else if (!s && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
    toast(self, "Reading the trace was cancelled");
  } else if (!s) {
    show_error_dialog(self, "Cannot Open Trace", error->message);
  } else if (ti->baseline) {
    g_autofree char *base = g_path_get_basename(ti->path);
    gtk_stack_set_visible_child_name(self->main_stack, "main");
    ts_profiler_panel_set_baseline(self->profiler_panel, s, base);
    gtk_stack_set_visible_child_name(self->bottom_stack, "profiler");
  } else {
    g_autofree char *base = g_path_get_basename(ti->path);
    gtk_stack_set_visible_child_name(self->main_stack, "main");
    show_module_panes(self, self->module != NULL);
    if (!self->module) { /* the window is the trace's */
      adw_window_title_set_title(self->window_title, base);
      adw_window_title_set_subtitle(self->window_title, ti->path);
    }
    ts_profiler_panel_set_session(self->profiler_panel, s, base);
    ts_profiler_panel_show_page(self->profiler_panel, "timeline");
    gtk_stack_set_visible_child_name(self->bottom_stack, "profiler");
  }
  notify_busy(self);
  g_object_unref(self);
  g_free(ti->path);
  g_free(ti);
}

static void read_trace(TsWindow *self, const char *path, gboolean baseline)
{
  g_return_if_fail(TS_IS_WINDOW(self) && path != NULL);
  if (self->importing++ == 0) {
    self->import_cancellable = g_cancellable_new();
    self->import_progress = 0;
    self->import_toast = g_object_ref(adw_toast_new("Reading the trace…"));
    adw_toast_set_timeout(self->import_toast, 0);
    adw_toast_set_button_label(self->import_toast, "_Cancel");
    adw_toast_set_action_name(self->import_toast, "win.cancel-import");
    adw_toast_overlay_add_toast(self->toast_overlay, self->import_toast);
  }
  notify_busy(self);
  TraceImport *ti = g_new0(TraceImport, 1);
  ti->self = g_object_ref(self);
  ti->path = g_strdup(path);
  ti->baseline = baseline;
  /* in a process of its own, under the default limits: a file that passes
   * them, or breaks the importer, costs the app nothing */
  tsp_read_limits limits = tsp_read_limits_default();
  ts_trace_import_async(path, &limits, self->import_cancellable, on_import_progress, self, on_trace_imported, ti);
}

double ts_window_get_import_progress(TsWindow *self)
{
  g_return_val_if_fail(TS_IS_WINDOW(self), -1);
  return self->importing > 0 ? self->import_progress : -1;
}

static void action_cancel_import(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  if (self->import_cancellable)
    g_cancellable_cancel(self->import_cancellable);
}

void ts_window_open_trace(TsWindow *self, const char *path)
{
  g_return_if_fail(TS_IS_WINDOW(self) && path != NULL);
  read_trace(self, path, FALSE);
}

void ts_window_compare_trace(TsWindow *self, const char *path)
{
  g_return_if_fail(TS_IS_WINDOW(self) && path != NULL);
  read_trace(self, path, TRUE);
}

static void action_open_trace_from(GtkWidget *widget, const char *name, GVariant *param)
{
  ts_window_open_trace(TS_WINDOW(widget), g_variant_get_string(param, NULL));
}

static void action_compare_trace_from(GtkWidget *widget, const char *name, GVariant *param)
{
  ts_window_compare_trace(TS_WINDOW(widget), g_variant_get_string(param, NULL));
}

static void on_trace_response(GtkNativeDialog *dialog, int response, gpointer user_data)
{
  if (response == GTK_RESPONSE_ACCEPT) {
    g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
    g_autofree char *path = file ? g_file_get_path(file) : NULL;
    if (path)
      read_trace(TS_WINDOW(user_data), path, GPOINTER_TO_INT(g_object_get_data(G_OBJECT(dialog), "baseline")));
  }
  g_object_unref(dialog);
}

static void choose_trace(GtkWidget *widget, const char *title, gboolean baseline)
{
  GtkFileChooserNative *chooser = gtk_file_chooser_native_new(title, GTK_WINDOW(widget),
                                                              GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel");
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new();
  gtk_file_filter_set_name(filter, "Chrome traces (.json, .json.gz)");
  gtk_file_filter_add_pattern(filter, "*.json");
  gtk_file_filter_add_pattern(filter, "*.json.gz");
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), filter);
  g_object_set_data(G_OBJECT(chooser), "baseline", GINT_TO_POINTER(baseline));
  g_signal_connect(chooser, "response", G_CALLBACK(on_trace_response), widget);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static void action_open_trace(GtkWidget *widget, const char *name, GVariant *param)
{
  choose_trace(widget, "Open Trace", FALSE);
}

static void action_compare_trace(GtkWidget *widget, const char *name, GVariant *param)
{
  choose_trace(widget, "Compare with Trace", TRUE);
}

void ts_window_open_session(TsWindow *self, const char *path)
{
  g_return_if_fail(TS_IS_WINDOW(self) && path != NULL);
  g_autoptr(GError) error = NULL;
  TsSession *session = ts_session_load(path, &error);
  if (!session) {
    show_error_dialog(self, "Cannot Open Session", error->message);
    return;
  }
  g_clear_pointer(&self->session, ts_session_free);
  self->session = session;
  load(self, session->module, LOAD_OPEN);
}

static void action_save_session_to(GtkWidget *widget, const char *name, GVariant *param)
{
  save_session(TS_WINDOW(widget), g_variant_get_string(param, NULL));
}

static void action_open_session_from(GtkWidget *widget, const char *name, GVariant *param)
{
  ts_window_open_session(TS_WINDOW(widget), g_variant_get_string(param, NULL));
}

static void on_session_response(GtkNativeDialog *dialog, int response, gpointer user_data)
{
  if (response == GTK_RESPONSE_ACCEPT) {
    g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
    g_autofree char *path = file ? g_file_get_path(file) : NULL;
    gboolean saving = gtk_file_chooser_get_action(GTK_FILE_CHOOSER(dialog)) == GTK_FILE_CHOOSER_ACTION_SAVE;
    if (path && saving)
      save_session(TS_WINDOW(user_data), path);
    else if (path)
      ts_window_open_session(TS_WINDOW(user_data), path);
  }
  g_object_unref(dialog);
}

static void choose_session(TsWindow *self, gboolean save)
{
  GtkFileChooserNative *chooser = gtk_file_chooser_native_new(
    save ? "Save Session" : "Open Session", GTK_WINDOW(self),
    save ? GTK_FILE_CHOOSER_ACTION_SAVE : GTK_FILE_CHOOSER_ACTION_OPEN, save ? "_Save" : "_Open", "_Cancel");
  if (save)
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(chooser), "session.json");
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new();
  gtk_file_filter_set_name(filter, "Tracescope sessions (.json)");
  gtk_file_filter_add_pattern(filter, "*.json");
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), filter);
  g_signal_connect(chooser, "response", G_CALLBACK(on_session_response), self);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static void action_save_session(GtkWidget *widget, const char *name, GVariant *param)
{
  choose_session(TS_WINDOW(widget), TRUE);
}

static void action_open_session(GtkWidget *widget, const char *name, GVariant *param)
{
  choose_session(TS_WINDOW(widget), FALSE);
}

/* ---- export -------------------------------------------------------------------------- */

/* Writes the graph shown (the whole of it, as laid out and coloured) to path:
 * .png, .svg, .pdf or .dot. */
static void export_graph(TsWindow *self, const char *path)
{
  TsGraphView *view = TS_GRAPH_VIEW(ts_graph_pane_get_view(self->graph_pane));
  g_autoptr(GError) error = NULL;
  g_autofree char *base = g_path_get_basename(path);
  g_autofree char *text = NULL;
  if (!ts_graph_pane_get_concrete(self->graph_pane))
    text = g_strdup("There is no graph to export: run a function in graph mode first");
  else if (!ts_graph_view_export(view, path, TRUE, &error))
    text = g_strdup_printf("Cannot export the graph: %s", error->message);
  else
    text = g_strdup_printf("Graph exported to %s", base);
  toast(self, text);
}

static void action_export_graph_to(GtkWidget *widget, const char *name, GVariant *param)
{
  export_graph(TS_WINDOW(widget), g_variant_get_string(param, NULL));
}

static void on_export_response(GtkNativeDialog *dialog, int response, gpointer user_data)
{
  if (response == GTK_RESPONSE_ACCEPT) {
    g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
    g_autofree char *path = file ? g_file_get_path(file) : NULL;
    if (path)
      export_graph(TS_WINDOW(user_data), path);
  }
  g_object_unref(dialog);
}

static void action_export_graph(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(self->graph_pane);
  GtkFileChooserNative *chooser =
    gtk_file_chooser_native_new("Export Graph", GTK_WINDOW(widget), GTK_FILE_CHOOSER_ACTION_SAVE,
                                "_Export", "_Cancel");
  g_autofree char *suggested = g_strdup_printf("%s.svg", cf ? cf->function : "graph");
  gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(chooser), suggested);
  static const char *const KINDS[][2] = {
    { "SVG image", "*.svg" }, { "PNG image", "*.png" }, { "PDF document", "*.pdf" }, { "Graphviz DOT", "*.dot" },
  };
  for (guint i = 0; i < G_N_ELEMENTS(KINDS); i++) {
    g_autoptr(GtkFileFilter) filter = gtk_file_filter_new();
    gtk_file_filter_set_name(filter, KINDS[i][0]);
    gtk_file_filter_add_pattern(filter, KINDS[i][1]);
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), filter);
  }
  g_signal_connect(chooser, "response", G_CALLBACK(on_export_response), widget);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static void action_close_compare(GtkWidget *widget, const char *name, GVariant *param)
{
  close_compare(TS_WINDOW(widget));
}

/* ---- mode and device -------------------------------------------------------------- */

static void on_mode_changed(GSimpleAction *action, GVariant *value, gpointer user_data)
{
  TsWindow *self = user_data;
  const char *mode = g_variant_get_string(value, NULL);
  if (g_strcmp0(mode, "graph") != 0 && g_strcmp0(mode, "eager") != 0 && g_strcmp0(mode, "debug") != 0)
    return;
  g_simple_action_set_state(action, value);
  if (g_str_equal(mode, "debug"))
    gtk_stack_set_visible_child_name(self->bottom_stack, "debugger");
  show_selection(self);
}

/* ---- the debugger ---------------------------------------------------------------- */

static const struct {
  const char *name;
  TsDebugCommand command;
} DEBUG_COMMANDS[] = {
  { "continue", TS_DEBUG_COMMAND_CONTINUE }, { "over", TS_DEBUG_COMMAND_STEP_OVER },
  { "into", TS_DEBUG_COMMAND_STEP_INTO },    { "out", TS_DEBUG_COMMAND_STEP_OUT },
  { "pause", TS_DEBUG_COMMAND_PAUSE },       { "stop", TS_DEBUG_COMMAND_STOP },
};

static void action_add_breakpoint(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  g_autoptr(GError) error = NULL;
  const char *spec = g_variant_get_string(param, NULL);
  g_autofree char *text = ts_debug_panel_add_breakpoint(self->debug_panel, spec, &error)
                            ? g_strdup_printf("Breakpoint at %s: Debug mode (Ctrl+3) stops there", spec)
                            : g_strdup(error->message);
  toast(self, text);
}

/* Steps through the history of the ops that ran (the stop stays where it is). */
static const struct {
  const char *name;
  int delta;
} HISTORY_STEPS[] = { { "back", -1 }, { "forward", 1 } };

static void action_debug(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  const char *which = g_variant_get_string(param, NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(DEBUG_COMMANDS); i++)
    if (g_str_equal(which, DEBUG_COMMANDS[i].name))
      ts_debug_panel_command(self->debug_panel, DEBUG_COMMANDS[i].command);
  for (size_t i = 0; i < G_N_ELEMENTS(HISTORY_STEPS); i++)
    if (g_str_equal(which, HISTORY_STEPS[i].name))
      ts_debug_panel_step_history(self->debug_panel, HISTORY_STEPS[i].delta);
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
  if (!has_device(self, name))
    return;
  g_simple_action_set_state(action, value);
  ts_engine_worker_set_device(self->worker, name);
  gtk_menu_button_set_label(self->device_button, name);
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
    toast(self, text);
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
  return self->module;
}

gboolean ts_window_get_busy(TsWindow *self)
{
  g_return_val_if_fail(TS_IS_WINDOW(self), FALSE);
  return self->loading || self->importing > 0 || self->fetching > 0 || self->run_cancellable != NULL ||
         ts_engine_worker_get_busy(self->worker) || ts_profiler_panel_get_busy(self->profiler_panel);
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
  case PROP_MODULE: g_value_set_object(value, self->module); break;
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
  if (self->run_cancellable)
    g_cancellable_cancel(self->run_cancellable);
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
  if (self->run_cancellable)
    g_cancellable_cancel(self->run_cancellable);
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
  g_clear_object(&self->module);
  g_clear_object(&self->load_cancellable);
  g_clear_object(&self->run_cancellable);
  g_clear_object(&self->settings);
  G_OBJECT_CLASS(ts_window_parent_class)->dispose(object);
}

static void ts_window_finalize(GObject *object)
{
  TsWindow *self = TS_WINDOW(object);
  g_free(self->error);
  g_free(self->current_function);
  g_free(self->death);
  g_strfreev(self->debug_args);
  g_free(self->against);
  g_strfreev(self->against_args);
  g_clear_pointer(&self->session, ts_session_free);
  g_hash_table_unref(self->trace_errors);
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
  gtk_widget_class_bind_template_child(widget_class, TsWindow, device_button);
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
  gtk_widget_class_install_action(widget_class, "win.export-graph", NULL, action_export_graph);
  gtk_widget_class_install_action(widget_class, "win.save-session", NULL, action_save_session);
  gtk_widget_class_install_action(widget_class, "win.save-session-to", "s", action_save_session_to);
  gtk_widget_class_install_action(widget_class, "win.open-session", NULL, action_open_session);
  gtk_widget_class_install_action(widget_class, "win.open-session-from", "s", action_open_session_from);
  gtk_widget_class_install_action(widget_class, "win.open-trace", NULL, action_open_trace);
  gtk_widget_class_install_action(widget_class, "win.open-trace-from", "s", action_open_trace_from);
  gtk_widget_class_install_action(widget_class, "win.compare-trace", NULL, action_compare_trace);
  gtk_widget_class_install_action(widget_class, "win.compare-trace-from", "s", action_compare_trace_from);
  gtk_widget_class_install_action(widget_class, "win.cancel-import", NULL, action_cancel_import);
  gtk_widget_class_install_action(widget_class, "win.export-graph-to", "s", action_export_graph_to);
  gtk_widget_class_install_action(widget_class, "win.profile-compare", NULL, action_profile_compare);
  gtk_widget_class_install_action(widget_class, "win.profile-devices", NULL, action_profile_devices);

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
  self->watch = ts_module_watch_new();
  self->trace_errors = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  self->worker = ts_engine_worker_new();
  g_signal_connect(self->watch, "file-changed", G_CALLBACK(on_file_changed), self);
  g_signal_connect(self->worker, "trace", G_CALLBACK(on_trace), self);
  g_signal_connect(self->worker, "warning", G_CALLBACK(on_warning), self);
  g_signal_connect(self->worker, "output", G_CALLBACK(on_output), self);
  g_signal_connect(self->worker, "print", G_CALLBACK(on_print), self);
  g_signal_connect(self->worker, "progress", G_CALLBACK(on_progress), self);
  g_signal_connect(self->worker, "transfer", G_CALLBACK(on_transfer), self);
  g_signal_connect(self->worker, "module-changed", G_CALLBACK(on_remote_module_changed), self);
  g_signal_connect(self->worker, "notify::busy", G_CALLBACK(on_worker_busy), self);
  g_signal_connect(self->worker, "died", G_CALLBACK(on_worker_died), self);
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
  g_signal_connect_swapped(self->profiler_panel, "notify::busy", G_CALLBACK(notify_busy), self);
  g_signal_connect(ts_graph_pane_get_view(self->graph_pane), "node-selected", G_CALLBACK(on_graph_node_selected),
                   self);
  for (int side = 0; side < 2; side++)
    g_signal_connect(ts_compare_pane_get_view(self->compare_pane, side), "node-selected",
                     G_CALLBACK(on_compare_node_selected), self);
  show_selection(self);
}

TsWindow *ts_window_new(GtkApplication *application)
{
  return g_object_new(TS_TYPE_WINDOW, "application", application, NULL);
}
