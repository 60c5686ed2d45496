/* ts-window-files.c — the window's files: sessions saved and opened, Chrome
 * traces read (as the recording or the Diff page's baseline), and the graph
 * exported; each with its file chooser and its win.* actions. */
#include "ts-window-private.h"

#include "ts-graph-view.h"
#include "ts-trace-import.h"

/* ---- file choosers ------------------------------------------------------------------- */

typedef struct {
  TsWindow *window;
  TsPathChosen chosen;
} Chooser;

static void on_chooser_response(GtkNativeDialog *dialog, int response, gpointer user_data)
{
  Chooser *c = user_data;
  if (response == GTK_RESPONSE_ACCEPT) {
    g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
    g_autofree char *path = file ? g_file_get_path(file) : NULL;
    if (path)
      c->chosen(c->window, path);
  }
  g_free(c);
  g_object_unref(dialog);
}

void _ts_window_choose_file(TsWindow *self, const char *title, const char *accept, const char *suggested,
                            const TsFileKind *kinds, guint n_kinds, TsPathChosen chosen)
{
  GtkFileChooserAction action = suggested ? GTK_FILE_CHOOSER_ACTION_SAVE : GTK_FILE_CHOOSER_ACTION_OPEN;
  GtkFileChooserNative *chooser = gtk_file_chooser_native_new(title, GTK_WINDOW(self), action, accept, "_Cancel");
  if (suggested)
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(chooser), suggested);
  for (guint i = 0; i < n_kinds; i++) {
    g_autoptr(GtkFileFilter) filter = gtk_file_filter_new();
    gtk_file_filter_set_name(filter, kinds[i].name);
    for (guint p = 0; p < G_N_ELEMENTS(kinds[i].patterns) && kinds[i].patterns[p]; p++)
      gtk_file_filter_add_pattern(filter, kinds[i].patterns[p]);
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), filter);
  }
  Chooser *c = g_new(Chooser, 1);
  *c = (Chooser){ self, chosen };
  g_signal_connect(chooser, "response", G_CALLBACK(on_chooser_response), c);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

/* ---- sessions ------------------------------------------------------------------------ */

static void remember_into(const char *function, const char *const *specs, guint repeat, gpointer session)
{
  ts_session_add_args(session, function, specs, repeat);
}

static void save_session(TsWindow *self, const char *path)
{
  if (!ts_workspace_get_module(self->workspace)) {
    _ts_window_toast(self, "Open a module first: a session is what you did with one");
    return;
  }
  /* what the run panel shows now counts as typed */
  g_auto(GStrv) current = ts_run_panel_dup_args(self->run_panel, NULL);
  TsSidebarItem *item = ts_function_list_get_selected(self->function_list);
  g_autoptr(TsSession) session =
    ts_session_new(ts_loaded_module_get_source(ts_workspace_get_module(self->workspace)),
                   item ? ts_sidebar_item_get_function_name(item) : NULL, ts_workspace_get_mode(self->workspace));
  session->device = g_strdup(ts_workspace_get_device(self->workspace));
  ts_run_panel_foreach_remembered(self->run_panel, ts_loaded_module_get_source(ts_workspace_get_module(self->workspace)), remember_into,
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
  _ts_window_toast(self, text);
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

/* Once the session's module is open: its arguments, mode, device, selection and log. */
void _ts_window_apply_session(TsWindow *self)
{
  g_autoptr(TsSession) session = g_steal_pointer(&self->session);
  const char *source = ts_loaded_module_get_source(ts_workspace_get_module(self->workspace));
  g_autoptr(GError) device_error = NULL;
  if (session->device && !ts_window_set_device(self, session->device, &device_error)) {
    g_autofree char *text = g_strdup_printf("The session's device: %s; the calls run on %s", device_error->message,
                                            ts_workspace_get_device(self->workspace));
    _ts_window_toast(self, text);
  }
  for (guint i = 0; i < session->args->len; i++) {
    const TsSessionArgs *a = g_ptr_array_index(session->args, i);
    ts_run_panel_remember(self->run_panel, source, a->function, (const char *const *)a->specs, a->repeat);
  }
  g_action_group_change_action_state(G_ACTION_GROUP(self), "mode", g_variant_new_string(session->mode));
  g_autoptr(GPtrArray) entries = ts_session_make_entries(session, ts_workspace_get_module(self->workspace));
  for (guint i = 0; i < entries->len; i++)
    ts_trace_log_add(self->trace_log, g_ptr_array_index(entries, i));
  if (session->function)
    ts_function_list_select(self->function_list, session->function, -1);
  /* the run panel shows the remembered arguments of the selection */
  ts_workspace_set_function(self->workspace, NULL);
  ts_workspace_selection_changed(self->workspace);
  if (session->expanded)
    restore_view(self, session);
}

void ts_window_open_session(TsWindow *self, const char *path)
{
  g_return_if_fail(TS_IS_WINDOW(self) && path != NULL);
  g_autoptr(GError) error = NULL;
  TsSession *session = ts_session_load(path, &error);
  if (!session) {
    _ts_window_show_error_dialog(self, "Cannot Open Session", error->message);
    return;
  }
  g_clear_pointer(&self->session, ts_session_free);
  self->session = session;
  ts_module_loader_load(self->loader, session->module, TS_LOAD_OPEN);
}

static void action_save_session_to(GtkWidget *widget, const char *name, GVariant *param)
{
  save_session(TS_WINDOW(widget), g_variant_get_string(param, NULL));
}

static void action_open_session_from(GtkWidget *widget, const char *name, GVariant *param)
{
  ts_window_open_session(TS_WINDOW(widget), g_variant_get_string(param, NULL));
}

static const TsFileKind SESSION_FILES[] = { { "Tracescope sessions (.json)", { "*.json" } } };

static void action_save_session(GtkWidget *widget, const char *name, GVariant *param)
{
  _ts_window_choose_file(TS_WINDOW(widget), "Save Session", "_Save", "session.json", SESSION_FILES,
                         G_N_ELEMENTS(SESSION_FILES), save_session);
}

static void action_open_session(GtkWidget *widget, const char *name, GVariant *param)
{
  _ts_window_choose_file(TS_WINDOW(widget), "Open Session", "_Open", NULL, SESSION_FILES, G_N_ELEMENTS(SESSION_FILES),
                         ts_window_open_session);
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
    if (self->import_toast_id) /* read before its toast was due: none shown */
      g_clear_handle_id(&self->import_toast_id, g_source_remove);
    else if (self->import_toast)
      adw_toast_dismiss(self->import_toast);
    g_clear_object(&self->import_toast);
    g_clear_object(&self->import_cancellable);
  }
  if (!self->profiler_panel) { /* the window went while the file was read */
    g_clear_pointer(&s, tsp_session_free);
  } else if (!s && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
    _ts_window_toast(self, "Reading the trace was cancelled");
  } else if (!s) {
    _ts_window_show_error_dialog(self, "Cannot Open Trace", error->message);
  } else if (ti->baseline) {
    g_autofree char *base = g_path_get_basename(ti->path);
    gtk_stack_set_visible_child_name(self->main_stack, "main");
    ts_profiler_panel_set_baseline(self->profiler_panel, s, base);
    gtk_stack_set_visible_child_name(self->bottom_stack, "profiler");
  } else {
    g_autofree char *base = g_path_get_basename(ti->path);
    gtk_stack_set_visible_child_name(self->main_stack, "main");
    _ts_window_show_module_panes(self, ts_workspace_get_module(self->workspace) != NULL);
    if (!ts_workspace_get_module(self->workspace)) { /* the window is the trace's */
      adw_window_title_set_title(self->window_title, base);
      adw_window_title_set_subtitle(self->window_title, ti->path);
    }
    ts_profiler_panel_set_session(self->profiler_panel, s, base);
    ts_profiler_panel_show_page(self->profiler_panel, "timeline");
    gtk_stack_set_visible_child_name(self->bottom_stack, "profiler");
  }
  _ts_window_notify_busy(self);
  g_object_unref(self);
  g_free(ti->path);
  g_free(ti);
}

/* A trace that reads quickly shows no toast: one added and dismissed
 * within a frame or two flashes, and libadwaita 1.2's toast overlay can
 * crash finishing the two animations (tracescope --screenshot TRACE did,
 * in g_object_unref under adw_animation_skip). */
#define IMPORT_TOAST_DELAY_MS 500

static gboolean show_import_toast(gpointer user_data)
{
  TsWindow *self = user_data;
  self->import_toast_id = 0;
  adw_toast_overlay_add_toast(self->toast_overlay, g_object_ref(self->import_toast));
  return G_SOURCE_REMOVE;
}

static void read_trace(TsWindow *self, const char *path, gboolean baseline)
{
  g_return_if_fail(TS_IS_WINDOW(self) && path != NULL);
  if (self->importing++ == 0) {
    self->import_cancellable = g_cancellable_new();
    self->import_progress = 0;
    self->import_toast = adw_toast_new("Reading the trace…");
    adw_toast_set_timeout(self->import_toast, 0);
    adw_toast_set_button_label(self->import_toast, "_Cancel");
    adw_toast_set_action_name(self->import_toast, "win.cancel-import");
    self->import_toast_id = g_timeout_add(IMPORT_TOAST_DELAY_MS, show_import_toast, self);
  }
  _ts_window_notify_busy(self);
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

static const TsFileKind TRACE_FILES[] = { { "Chrome traces (.json, .json.gz)", { "*.json", "*.json.gz" } } };

static void action_open_trace(GtkWidget *widget, const char *name, GVariant *param)
{
  _ts_window_choose_file(TS_WINDOW(widget), "Open Trace", "_Open", NULL, TRACE_FILES, G_N_ELEMENTS(TRACE_FILES),
                         ts_window_open_trace);
}

static void action_compare_trace(GtkWidget *widget, const char *name, GVariant *param)
{
  _ts_window_choose_file(TS_WINDOW(widget), "Compare with Trace", "_Open", NULL, TRACE_FILES, G_N_ELEMENTS(TRACE_FILES),
                         ts_window_compare_trace);
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
  _ts_window_toast(self, text);
}

static void action_export_graph_to(GtkWidget *widget, const char *name, GVariant *param)
{
  export_graph(TS_WINDOW(widget), g_variant_get_string(param, NULL));
}

static void action_export_graph(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(self->graph_pane);
  g_autofree char *suggested = g_strdup_printf("%s.svg", cf ? cf->function : "graph");
  static const TsFileKind KINDS[] = {
    { "SVG image", { "*.svg" } }, { "PNG image", { "*.png" } }, { "PDF document", { "*.pdf" } },
    { "Graphviz DOT", { "*.dot" } },
  };
  _ts_window_choose_file(self, "Export Graph", "_Export", suggested, KINDS, G_N_ELEMENTS(KINDS), export_graph);
}

#define NO_PROFILE "There is no profile to export: turn Profile on and run a function first"

/* The profile the Profiler panel shows, as a Chrome trace (Perfetto,
 * chrome://tracing, Open Trace read it back; gzipped for .gz). */
static void export_trace(TsWindow *self, const char *path)
{
  const tsp_session *session = ts_profiler_panel_get_session(self->profiler_panel);
  g_autoptr(GError) error = NULL;
  g_autofree char *base = g_path_get_basename(path);
  g_autofree char *text = NULL;
  if (!session)
    text = g_strdup(NO_PROFILE);
  else if (!tsp_chrome_export(session, path, &error))
    text = g_strdup_printf("Cannot export the profile: %s", error->message);
  else
    text = g_strdup_printf("Profile exported to %s", base);
  _ts_window_toast(self, text);
}

static void action_export_trace_to(GtkWidget *widget, const char *name, GVariant *param)
{
  export_trace(TS_WINDOW(widget), g_variant_get_string(param, NULL));
}

static void action_export_trace(GtkWidget *widget, const char *name, GVariant *param)
{
  TsWindow *self = TS_WINDOW(widget);
  if (!ts_profiler_panel_get_session(self->profiler_panel)) {
    _ts_window_toast(self, NO_PROFILE);
    return;
  }
  const char *function = ts_workspace_get_function(self->workspace);
  g_autofree char *suggested = g_strdup_printf("%s.trace.json.gz", function ? function : "profile");
  _ts_window_choose_file(self, "Export Profile as Trace", "_Export", suggested, TRACE_FILES, G_N_ELEMENTS(TRACE_FILES),
                         export_trace);
}

void _ts_window_class_add_file_actions(GtkWidgetClass *widget_class)
{
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
  gtk_widget_class_install_action(widget_class, "win.export-trace", NULL, action_export_trace);
  gtk_widget_class_install_action(widget_class, "win.export-trace-to", "s", action_export_trace_to);
}
