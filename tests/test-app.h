/* test-app.h — what the GUI tests of the app share (tests/test-app-*.c,
 * one program per panel): the application and its window, opened once per
 * program, and the helpers that drive them.  Each program includes this once;
 * its helpers are static inline, so a program uses the ones it needs. */
#pragma once

#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <string.h>

#include "test-sshd.h"
#include "test-wait.h"
#include "tracescope-onnx.h"
#include "ts-application.h"
#include "ts-arg-row.h"
#include "ts-preferences-window.h"
#include "ts-graph-view.h"
#include "ts-profile-values.h"
#include "ts-screenshot.h"
#include "ts-source-snippet.h"
#include "ts-tensor-view-private.h"
#include "ts-window.h"

#define SIDE_EFFECT "a_function_with_python_side_effect"

static TsApplication *app;
static TsWindow *window;
static char *tmp_dir;

/* ---- helpers ---------------------------------------------------------------- */


static inline gboolean window_idle(gpointer data)
{
  return !ts_window_get_busy(window);
}

static inline void wait_idle(void)
{
  /* a run posts its events before it completes: once idle, everything is in */
  test_wait_for(window_idle, NULL, "the window to finish");
  while (g_main_context_iteration(NULL, FALSE))
    ;
}

static inline void activate(const char *action, const char *format, ...)
{
  GVariant *param = NULL;
  if (format) {
    va_list ap;
    va_start(ap, format);
    param = g_variant_new_va(format, NULL, &ap);
    va_end(ap);
  }
  g_assert_true(gtk_widget_activate_action_variant(GTK_WIDGET(window), action, param));
}

/* Sets the run panel's arguments and runs once, waiting for the result. */
static inline void run_with(const char *const *args)
{
  ts_run_panel_set_args(ts_window_get_run_panel(window), args);
  activate("win.run", NULL);
  wait_idle();
}

static inline char *result_text(void)
{
  return ts_run_panel_dup_result_text(ts_window_get_run_panel(window));
}

static inline guint n_items(GListModel *model)
{
  return g_list_model_get_n_items(model);
}

static inline TsTraceEntry *trace_row(guint i) /* borrowed */
{
  GListModel *rows = ts_trace_log_get_entries(ts_window_get_trace_log(window));
  g_autoptr(TsTraceEntry) entry = g_list_model_get_item(rows, i);
  g_assert_nonnull(entry);
  return entry;
}

static inline TsConsoleLine *console_line(guint i) /* borrowed */
{
  g_autoptr(TsConsoleLine) line = g_list_model_get_item(ts_console_get_lines(ts_window_get_console(window)), i);
  g_assert_nonnull(line);
  return line;
}

static inline guint n_traces(void)
{
  return n_items(ts_trace_log_get_entries(ts_window_get_trace_log(window)));
}

static inline guint n_lines(void)
{
  return n_items(ts_console_get_lines(ts_window_get_console(window)));
}

static inline void assert_line(guint i, const char *text, TsConsoleSource source, const char *call)
{
  TsConsoleLine *line = console_line(i);
  g_assert_cmpstr(ts_console_line_get_text(line), ==, text);
  g_assert_cmpint(ts_console_line_get_source(line), ==, source);
  if (call)
    g_assert_cmpstr(ts_console_line_get_call_label(line), ==, call);
}

static inline void clear_logs(void)
{
  activate("win.clear-log", NULL);
  g_assert_cmpuint(n_traces(), ==, 0);
  g_assert_cmpuint(n_lines(), ==, 0);
}

static inline void select_function(const char *name)
{
  activate("win.select-function", "s", name);
  TsSidebarItem *item = ts_function_list_get_selected(ts_window_get_function_list(window));
  g_assert_nonnull(item);
  g_assert_cmpstr(ts_sidebar_item_get_function_name(item), ==, name);
}

static inline const char *seeds_path(void)
{
  const char *path = g_getenv("TRACESCOPE_SEEDS");
  g_assert_nonnull(path);
  return path;
}

/* Opens a module that must be refused; returns the error shown (borrowed). */
static inline const char *open_refused(const char *path)
{
  TsLoadedModule *before = ts_window_get_module(window);
  activate("win.open-module", "s", path);
  wait_idle();
  g_assert_true(ts_window_get_module(window) == before); /* the old one stays */
  GtkWindow *dialog = ts_window_get_error_dialog(window);
  g_assert_nonnull(dialog);
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(dialog)));
  g_assert_cmpstr(adw_message_dialog_get_body(ADW_MESSAGE_DIALOG(dialog)), ==, ts_window_get_error(window));
  gtk_window_destroy(dialog);
  wait_idle();
  g_assert_null(ts_window_get_error_dialog(window));
  return ts_window_get_error(window);
}

static inline gboolean compare_laid_out(gpointer data)
{
  TsComparePane *pane = ts_window_get_compare_pane(window);
  for (int side = 0; side < 2; side++)
    if (!ts_graph_view_get_layout(TS_GRAPH_VIEW(ts_compare_pane_get_view(pane, side))))
      return FALSE;
  return TRUE;
}

/* Bad inputs and failing calls are messages, not crashes. */
static inline gboolean graph_drawn(gpointer data);

static inline TsGraphView *graph_view(void)
{
  return TS_GRAPH_VIEW(ts_graph_pane_get_view(ts_window_get_graph_pane(window)));
}

static inline gboolean view_still(gpointer view)
{
  return !ts_graph_view_get_animating(view);
}

static inline GtkWidget *find_widget(GtkWidget *widget, GType type);

static inline GtkWidget *find_search_entry(GtkWidget *widget)
{
  return find_widget(widget, GTK_TYPE_SEARCH_ENTRY);
}

static inline void send_key(GtkWidget *target, guint keyval)
{
  /* through the widget's key controllers, as a key press would go */
  for (guint i = 0; i < g_list_model_get_n_items(gtk_widget_observe_controllers(target)); i++) {
    g_autoptr(GtkEventController) c = g_list_model_get_item(gtk_widget_observe_controllers(target), i);
    if (GTK_IS_EVENT_CONTROLLER_KEY(c)) {
      gboolean handled = FALSE;
      g_signal_emit_by_name(c, "key-pressed", keyval, 0, 0, &handled);
      if (handled)
        return;
    }
  }
}

static inline gboolean counting_calls(gpointer panel)
{
  const char *text = ts_run_panel_get_progress_text(panel);
  return text && g_str_has_prefix(text, "call ") && strstr(text, " of 1000000 · ");
}

static inline guint n_step_lines(void)
{
  guint n = 0;
  for (guint i = 0; i < n_lines(); i++)
    n += g_str_has_prefix(ts_console_line_get_text(console_line(i)), "Step ");
  return n;
}

static inline gboolean step_line_shown(gpointer data)
{
  return n_step_lines() > 0;
}

static inline gboolean module_changed(gpointer data)
{
  return ts_window_get_module(window) != data && !ts_window_get_busy(window);
}

/* The toplevel of type `type` other than the main window, or NULL (borrowed). */
static inline GtkWindow *find_toplevel(GType type)
{
  GListModel *toplevels = gtk_window_get_toplevels(); /* borrowed */
  for (guint i = 0; i < n_items(toplevels); i++) {
    g_autoptr(GtkWindow) w = g_list_model_get_item(toplevels, i);
    if (G_TYPE_CHECK_INSTANCE_TYPE(w, type) && gtk_widget_get_visible(GTK_WIDGET(w)))
      return w;
  }
  return NULL;
}

static inline void close_toplevel(GType type)
{
  GtkWindow *w = find_toplevel(type);
  g_assert_nonnull(w);
  gtk_window_destroy(w);
  wait_idle();
}

static inline gboolean count_frame(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  return ++*(int *)data < 2 ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static inline gboolean two_frames(gpointer data)
{
  return *(int *)data >= 2;
}

static inline gboolean transition_running(GtkWidget *widget)
{
  if (GTK_IS_STACK(widget) && gtk_stack_get_transition_running(GTK_STACK(widget)))
    return TRUE;
  for (GtkWidget *c = gtk_widget_get_first_child(widget); c; c = gtk_widget_get_next_sibling(c))
    if (transition_running(c))
      return TRUE;
  return FALSE;
}

static inline gboolean no_transition(gpointer data)
{
  return !transition_running(data);
}

/* Every key TsGraphView binds is in the shortcuts window. */
static inline void collect_accels(GtkWidget *widget, GHashTable *accels)
{
  if (GTK_IS_SHORTCUTS_SHORTCUT(widget)) {
    g_autofree char *accel = NULL;
    g_object_get(widget, "accelerator", &accel, NULL);
    g_auto(GStrv) each = g_strsplit(accel ? accel : "", " ", -1);
    for (int i = 0; each[i]; i++)
      g_hash_table_add(accels, g_strdup(each[i]));
  }
  for (GtkWidget *c = gtk_widget_get_first_child(widget); c; c = gtk_widget_get_next_sibling(c))
    collect_accels(c, accels);
}

static inline void assert_shortcuts_list_graph_keys(GtkWindow *shortcuts)
{
  GHashTable *accels = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  collect_accels(GTK_WIDGET(shortcuts), accels);
  static const char *const graph_keys[] = {
    "<Control>f", "F3", "<Shift>F3", "<Control>g", "plus", "minus", "0", "<Control>0", "w", "f",
    "Left", "Right", "Up", "Down", "Return", "Escape", "e", "c", "l", "<Shift>l", "<Control>i",
    "<Alt>bracketleft", "<Alt>bracketright", "<Alt>Up", "<Alt>Down",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(graph_keys); i++)
    if (!g_hash_table_contains(accels, graph_keys[i]))
      g_error("the shortcuts window does not list %s", graph_keys[i]);
  g_hash_table_destroy(accels);
}

/* Every key the Timeline binds (its class's shortcuts, read from the
 * widget) is in the shortcuts window. */
static inline void assert_shortcuts_list_timeline_keys(GtkWindow *shortcuts)
{
  g_autoptr(GHashTable) accels = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  collect_accels(GTK_WIDGET(shortcuts), accels);
  GtkWidget *timeline = g_object_ref_sink(ts_timeline_new());
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers(timeline);
  int n_keys = 0;
  for (guint i = 0; i < g_list_model_get_n_items(controllers); i++) {
    g_autoptr(GObject) controller = g_list_model_get_item(controllers, i);
    if (!GTK_IS_SHORTCUT_CONTROLLER(controller))
      continue;
    for (guint k = 0; k < g_list_model_get_n_items(G_LIST_MODEL(controller)); k++) {
      g_autoptr(GtkShortcut) shortcut = g_list_model_get_item(G_LIST_MODEL(controller), k);
      g_autofree char *key = gtk_shortcut_trigger_to_string(gtk_shortcut_get_trigger(shortcut));
      if (!g_hash_table_contains(accels, key))
        g_error("the shortcuts window does not list the Timeline's %s", key);
      n_keys++;
    }
  }
  g_assert_cmpint(n_keys, >=, 10); /* zoom, fit, pan, search steps, unselect */
  g_object_unref(timeline);
  /* and the Profiler's keys around it: Ctrl+F opens its Find bar */
  GtkWidget *panel = g_object_ref_sink(g_object_new(TS_TYPE_PROFILER_PANEL, NULL));
  GtkWidget *page = gtk_widget_get_parent(GTK_WIDGET(ts_profiler_panel_get_timeline(TS_PROFILER_PANEL(panel))));
  g_autoptr(GListModel) page_controllers = gtk_widget_observe_controllers(page);
  gboolean find_key = FALSE;
  for (guint i = 0; i < g_list_model_get_n_items(page_controllers); i++) {
    g_autoptr(GObject) controller = g_list_model_get_item(page_controllers, i);
    for (guint k = 0; GTK_IS_SHORTCUT_CONTROLLER(controller) && k < g_list_model_get_n_items(G_LIST_MODEL(controller)); k++) {
      g_autoptr(GtkShortcut) shortcut = g_list_model_get_item(G_LIST_MODEL(controller), k);
      g_autofree char *key = gtk_shortcut_trigger_to_string(gtk_shortcut_get_trigger(shortcut));
      if (!g_hash_table_contains(accels, key))
        g_error("the shortcuts window does not list the Timeline page's %s", key);
      find_key |= g_str_equal(key, "<Control>f");
    }
  }
  g_assert_true(find_key);
  g_object_unref(panel);
}


/* ---- profiling ------------------------------------------------------------------- */

static inline void save_test_screenshot(GtkWidget *widget, const char *name);
static inline void wait_drawn(GtkWidget *widget);

static inline gboolean selected_node_is(gpointer data)
{
  TsGraphView *view = TS_GRAPH_VIEW(ts_graph_pane_get_view(ts_window_get_graph_pane(window)));
  int item = ts_graph_view_get_selected_item(view);
  ts_view_model *model = ts_graph_view_get_model(view);
  return item >= 0 && model && ts_view_item_node(model, item) == data;
}

/* The widget under widget named name (gtk_widget_set_name), or NULL. */
static inline GtkWidget *find_named(GtkWidget *widget, const char *name)
{
  if (g_strcmp0(gtk_widget_get_name(widget), name) == 0)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child)) {
    GtkWidget *found = find_named(child, name);
    if (found)
      return found;
  }
  return NULL;
}

static inline char *device_state(void)
{
  g_autoptr(GVariant) state = g_action_group_get_action_state(G_ACTION_GROUP(window), "device");
  return g_variant_dup_string(state, NULL);
}

static inline int cmp_strings(const void *a, const void *b)
{
  return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

/* The devices of the last profile's op rows, joined; the device of op's
 * row in *op_device (borrowed); and whether the session has a stream track. */
static inline char *profiled_devices(const char *op, const char **op_device, gboolean *stream)
{
  TsProfilerPanel *panel = ts_window_get_profiler_panel(window);
  const tsp_session *s = ts_profiler_panel_get_session(panel);
  g_assert_nonnull(s);
  ts_profiler_panel_set_group_by(panel, TSP_BY_OP);
  wait_idle();
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
  *op_device = NULL;
  for (guint i = 0; i < ts_profiler_panel_get_n_rows(panel); i++) {
    const tsp_stat *row = ts_profiler_panel_get_row(panel, i);
    g_hash_table_add(seen, (gpointer)row->device);
    if (g_str_equal(row->key, op))
      *op_device = row->device;
  }
  g_autofree const char **keys = (const char **)g_hash_table_get_keys_as_array(seen, NULL);
  qsort(keys, g_hash_table_size(seen), sizeof *keys, cmp_strings);
  char *joined = g_strjoinv(",", (char **)keys);
  *stream = FALSE;
  for (int t = 0; t < tsp_session_n_threads(s); t++)
    *stream |= g_str_has_suffix(tsp_session_thread(s, t)->name, " stream");
  return joined;
}

/* Profile on, a Run of sequential_model: the Profiler panel's table counts
 * what ran, groups four ways, selects graph nodes both ways; the graph's
 * compute-time colouring has the times; Compare fills the compare view. */
static inline char *details_text(void);

static inline gboolean import_reported(gpointer data)
{
  return ts_window_get_import_progress(window) >= 0.5;
}

/* Writes an executable script to stand in for tracescope-import. */
static inline char *fake_importer(const char *name, const char *body)
{
  char *path = g_build_filename(tmp_dir, name, NULL);
  g_autofree char *text = g_strdup_printf("#!/bin/sh\n%s\n", body);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  g_assert_cmpint(g_chmod(path, 0755), ==, 0);
  return path;
}

static inline gboolean file_exists(gpointer data)
{
  return g_file_test(data, G_FILE_TEST_EXISTS);
}

/* Pixels of a colour (not grey) inside rect of the ARGB32 texture: the op
 * colours of a drawn graph; the "Not Traced Yet" page has none. */
static inline int coloured_pixels(GdkTexture *texture, const graphene_rect_t *rect)
{
  int width = gdk_texture_get_width(texture), height = gdk_texture_get_height(texture);
  gsize stride = (gsize)width * 4;
  g_autofree guchar *pixels = g_malloc(stride * (gsize)height);
  gdk_texture_download(texture, pixels, stride);
  int n = 0;
  for (int y = MAX((int)rect->origin.y, 0); y < MIN((int)(rect->origin.y + rect->size.height), height); y++)
    for (int x = MAX((int)rect->origin.x, 0); x < MIN((int)(rect->origin.x + rect->size.width), width); x++) {
      const guchar *p = pixels + (gsize)y * stride + (gsize)x * 4;
      int hi = MAX(p[0], MAX(p[1], p[2])), lo = MIN(p[0], MIN(p[1], p[2]));
      n += hi - lo > 60;
    }
  return n;
}

static inline gboolean graph_drawn(gpointer data)
{
  return ts_window_get_graph_drawn(data);
}

static inline gboolean find_label(GtkWidget *widget, const char *text);

static inline gboolean diff_shown(gpointer data)
{
  return ts_diff_table_get_diff(data) != NULL;
}

static inline void remove_tree(const char *path)
{
  GDir *dir = g_dir_open(path, 0, NULL);
  for (const char *name; dir && (name = g_dir_read_name(dir));) {
    g_autofree char *child = g_build_filename(path, name, NULL);
    remove_tree(child);
  }
  if (dir)
    g_dir_close(dir);
  g_remove(path);
}

static inline gboolean find_label(GtkWidget *widget, const char *text)
{
  if (GTK_IS_LABEL(widget) && g_strcmp0(gtk_label_get_text(GTK_LABEL(widget)), text) == 0)
    return TRUE;
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child))
    if (find_label(child, text))
      return TRUE;
  return FALSE;
}

static inline gboolean popover_drawn(gpointer data)
{
  return gtk_widget_get_mapped(data) && *(int *)g_object_get_data(data, "frames") >= 2;
}

/* The text as read: no-break spaces as spaces, no word joiners.  Owned. */
static inline char *plain_text(const char *text)
{
  g_auto(GStrv) parts = g_strsplit(text, "\u2060", -1);
  g_autofree char *joined = g_strjoinv("", parts);
  g_auto(GStrv) words = g_strsplit(joined, "\u00a0", -1);
  return g_strjoinv(" ", words);
}

/* Labels that do not show all their text on screen: clipped (narrower
 * than their text and not ellipsizing), or ellipsized without a tooltip
 * holding the whole text.  Appends a line per label to problems. */
static inline void find_cut_labels_one(GtkWidget *widget, GString *problems)
{
  GtkLabel *label = GTK_LABEL(widget);
  const char *text = gtk_label_get_text(label);
  PangoLayout *layout = gtk_label_get_layout(label);
  int natural = 0;
  gtk_widget_measure(widget, GTK_ORIENTATION_HORIZONTAL, -1, NULL, &natural, NULL, NULL);
  if (gtk_label_get_ellipsize(label) != PANGO_ELLIPSIZE_NONE) {
    /* hovering shows the nearest tooltip up the tree */
    const char *tooltip = NULL;
    for (GtkWidget *w = widget; w && !tooltip; w = gtk_widget_get_parent(w))
      tooltip = gtk_widget_get_tooltip_text(w);
    g_autofree char *plain = plain_text(text);
    if (pango_layout_is_ellipsized(layout) && g_strcmp0(tooltip, plain) != 0)
      g_string_append_printf(problems, "ellipsized without its text as tooltip: '%s' (tooltip '%s')\n", text,
                             tooltip ? tooltip : "");
  } else if (!gtk_label_get_wrap(label) && *text && gtk_widget_get_width(widget) < natural) {
    g_string_append_printf(problems, "clipped: '%s' (%d px of %d)\n", text, gtk_widget_get_width(widget), natural);
  }
}

static inline void find_cut_labels(GtkWidget *widget, GString *problems)
{
  if (!gtk_widget_get_mapped(widget) || !gtk_widget_get_child_visible(widget))
    return;
  if (GTK_IS_LABEL(widget))
    find_cut_labels_one(widget, problems);
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child))
    find_cut_labels(child, problems);
}

/* Labels wrapped anywhere but between arguments (after ", " outside a
 * shape, or after " · "): each line that does not start a paragraph must
 * follow a breakable space.  Returns how many labels hold `needle`. */
static inline int find_badly_wrapped_labels(GtkWidget *widget, const char *needle, GString *problems)
{
  if (!gtk_widget_get_mapped(widget))
    return 0;
  int found = 0;
  if (GTK_IS_LABEL(widget)) {
    const char *text = gtk_label_get_text(GTK_LABEL(widget));
    PangoLayout *layout = gtk_label_get_layout(GTK_LABEL(widget));
    const char *layout_text = pango_layout_get_text(layout);
    for (GSList *l = pango_layout_get_lines_readonly(layout); l; l = l->next) {
      int start = ((PangoLayoutLine *)l->data)->start_index;
      if (start == 0 || layout_text[start - 1] == '\n')
        continue;
      gboolean ok = start >= 2 && layout_text[start - 1] == ' ' &&
                    (layout_text[start - 2] == ',' || (start >= 3 && g_str_has_prefix(layout_text + start - 3, "·")));
      if (!ok) {
        g_autofree char *plain = plain_text(text);
        g_string_append_printf(problems, "wrapped inside an argument: '%s' at byte %d\n", plain, start);
      }
    }
    g_autofree char *plain = plain_text(text);
    found += strstr(plain, needle) != NULL;
  }
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child))
    found += find_badly_wrapped_labels(child, needle, problems);
  return found;
}

static inline GtkWidget *find_widget(GtkWidget *widget, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE(widget, type))
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child)) {
    GtkWidget *found = find_widget(child, type);
    if (found)
      return found;
  }
  return NULL;
}

static inline void save_test_screenshot(GtkWidget *widget, const char *name)
{
  const char *dir = g_getenv("TS_TEST_SCREENSHOTS");
  if (!dir)
    return;
  g_autofree char *path = g_build_filename(dir, name, NULL);
  g_assert_true(ts_screenshot_save(widget, path, NULL));
}

static inline void wait_drawn(GtkWidget *widget)
{
  int frames = 0;
  gtk_widget_add_tick_callback(widget, count_frame, &frames, NULL);
  gtk_widget_queue_draw(widget);
  test_wait_for(two_frames, &frames, "a window to draw");
}


/* The first console line holding text (borrowed), or NULL. */
static inline TsConsoleLine *console_find(const char *text)
{
  for (guint i = 0; i < n_lines(); i++)
    if (strstr(ts_console_line_get_text(console_line(i)), text))
      return console_line(i);
  return NULL;
}

static inline gboolean console_has(const char *text)
{
  return console_find(text) != NULL;
}

static inline gboolean console_holds(gpointer text)
{
  return console_has(text);
}

static inline gboolean tick_on(gpointer data)
{
  return G_SOURCE_CONTINUE;
}

/* The worker has started the call (not merely received it). */
static inline gboolean call_running(gpointer data)
{
  return ts_engine_worker_get_running(ts_window_get_engine(window)) != 0;
}

typedef struct {
  const char *function;
  const char *error;     /* what the run panel says */
  gboolean cancel;       /* Cancel the run once it is under way */
  gboolean eager;
} Misbehaviour;

static inline void open_hostile(void)
{
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, "hostile.so", NULL);
  activate("win.open-module", "s", path);
  wait_idle();
  g_assert_cmpstr(ts_loaded_module_get_title(ts_window_get_module(window)), ==, "hostile test module");
}

static inline gboolean count_frames(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  (*(guint *)data)++;
  return G_SOURCE_CONTINUE;
}

static inline void add_console_lines(guint from, guint to)
{
  for (guint i = from; i < to; i++) {
    g_autofree char *text = g_strdup_printf("line %u", i);
    ts_console_add_output(ts_window_get_console(window), 0, "", g_get_real_time(), TS_CONSOLE_SOURCE_HOST, text);
  }
}

/* The worker dies between calls (killed here with SIGSEGV): the fresh
 * worker takes over, and the last result and its graph stay on screen. */
static inline gboolean connect_dialog_shown(gpointer data)
{
  GListModel *toplevels = gtk_window_get_toplevels(); /* GTK's */
  for (guint i = 0; i < g_list_model_get_n_items(toplevels); i++) {
    g_autoptr(GObject) w = g_list_model_get_item(toplevels, i);
    if (ADW_IS_MESSAGE_DIALOG(w) &&
        g_strcmp0(adw_message_dialog_get_heading(ADW_MESSAGE_DIALOG(w)), "Connect to Remote") == 0 &&
        gtk_widget_get_mapped(GTK_WIDGET(w))) {
      *(AdwMessageDialog **)data = ADW_MESSAGE_DIALOG(w);
      return TRUE;
    }
  }
  return FALSE;
}

static inline gboolean window_gone(gpointer data)
{
  return window == NULL;
}

/* GTK warns when there is no session bus (as under a bare Xvfb); that one is not ours. */
static inline gboolean fatal_filter(const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
  return !(message && strstr(message, "session bus"));
}

static inline GtkWidget *button_for(GtkWidget *widget, const char *action)
{
  if (GTK_IS_ACTIONABLE(widget) && g_strcmp0(gtk_actionable_get_action_name(GTK_ACTIONABLE(widget)), action) == 0)
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child(widget); c; c = gtk_widget_get_next_sibling(c)) {
    GtkWidget *found = button_for(c, action);
    if (found)
      return found;
  }
  return NULL;
}

static inline gboolean pane_drawn(gpointer data)
{
  return ts_graph_pane_get_drawn(ts_window_get_graph_pane(window));
}

G_GNUC_UNUSED static TsViewport *shown_viewport;
G_GNUC_UNUSED static GtkWidget *shown_zoom_button;

static inline gboolean zoom_shown(gpointer data)
{
  g_autofree char *want = g_strdup_printf("%.0f%%", 100 * ts_viewport_get_zoom(shown_viewport));
  return g_strcmp0(gtk_button_get_label(GTK_BUTTON(shown_zoom_button)), want) == 0;
}

/* The label follows the zoom (after an idle: see ts-graph-pane.c). */
static inline void assert_zoom_shown(GtkWidget *zoom_button, TsViewport *vp)
{
  shown_viewport = vp;
  shown_zoom_button = zoom_button;
  test_wait_for(zoom_shown, NULL, "the zoom level to show");
}

/* ---- the node details panel ---------------------------------------------------- */

static inline const ts_node *node_named(const ts_graph *g, const char *name)
{
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    if (strcmp(ts_node_name(ts_graph_node(g, i)), name) == 0)
      return ts_graph_node(g, i);
  g_error("no node %s in graph %s", name, ts_graph_name(g));
}

static inline TsGraphView *shown_view(void)
{
  return TS_GRAPH_VIEW(ts_graph_pane_get_view(ts_window_get_graph_pane(window)));
}

/* The text of every label shown under widget, one per line. */
static inline void collect_text(GtkWidget *widget, GString *text)
{
  if (!gtk_widget_get_visible(widget))
    return;
  if (GTK_IS_LABEL(widget))
    g_string_append_printf(text, "%s\n", gtk_label_get_text(GTK_LABEL(widget)));
  if (GTK_IS_STACK(widget)) {
    collect_text(gtk_stack_get_visible_child(GTK_STACK(widget)), text);
    return;
  }
  for (GtkWidget *c = gtk_widget_get_first_child(widget); c; c = gtk_widget_get_next_sibling(c))
    collect_text(c, text);
}

static inline char *details_text(void)
{
  GString *text = g_string_new(NULL);
  collect_text(GTK_WIDGET(ts_window_get_node_details(window)), text);
  return g_string_free(text, FALSE);
}

static inline void assert_shows(const char *text, const char *const *wanted)
{
  for (; *wanted; wanted++)
    if (!strstr(text, *wanted))
      g_error("the node details do not show '%s':\n%s", *wanted, text);
}

/* The activatable row titled title under widget (a producer, consumer, origin or subgraph). */
static inline GtkWidget *row_titled(GtkWidget *widget, const char *title)
{
  if (ADW_IS_ACTION_ROW(widget) && gtk_widget_get_visible(widget) &&
      g_strcmp0(adw_preferences_row_get_title(ADW_PREFERENCES_ROW(widget)), title) == 0)
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child(widget); c; c = gtk_widget_get_next_sibling(c)) {
    GtkWidget *found = row_titled(c, title);
    if (found)
      return found;
  }
  return NULL;
}

static inline gboolean details_read(gpointer data)
{
  return !ts_node_details_get_busy(ts_window_get_node_details(window));
}

/* Selects node in the graph and waits for its source to be read. */
static inline void select_node(const ts_node *node)
{
  g_assert_true(ts_graph_view_reveal(shown_view(), node));
  TsNodeDetails *details = ts_window_get_node_details(window);
  g_assert_true(ts_node_details_get_node(details) == node);
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(details)));
  test_wait_for(details_read, NULL, "the node's source to be read");
}

/* The highlighted line of the source snippet, the index of that line
 * among those shown and the number of lines shown. */
static inline char *highlighted_line(int *index, int *n_lines)
{
  GtkWidget *view = find_widget(GTK_WIDGET(ts_window_get_node_details(window)), GTK_TYPE_TEXT_VIEW);
  g_assert_nonnull(view);
  g_assert_true(gtk_widget_get_visible(gtk_widget_get_parent(view)));
  GtkTextBuffer *buffer = gtk_text_view_get_buffer(GTK_TEXT_VIEW(view));
  GtkTextTag *tag = gtk_text_tag_table_lookup(gtk_text_buffer_get_tag_table(buffer), "current");
  GtkTextIter start, end;
  gtk_text_buffer_get_start_iter(buffer, &start);
  g_assert_true(gtk_text_iter_starts_tag(&start, tag) || gtk_text_iter_forward_to_tag_toggle(&start, tag));
  end = start;
  g_assert_true(gtk_text_iter_forward_to_tag_toggle(&end, tag));
  *index = gtk_text_iter_get_line(&start);
  *n_lines = gtk_text_buffer_get_line_count(buffer);
  return g_strchomp(gtk_text_iter_get_text(&start, &end));
}

/* Line `number` of the seeds' source, as the test reads it. */
static inline char *seeds_line(int number)
{
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "..", "data", "examples", "seeds_models.c", NULL);
  g_autofree char *contents = NULL;
  g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(contents, "\n", -1);
  g_assert_cmpint(number, <=, (int)g_strv_length(lines));
  return g_strdup(lines[number - 1]);
}

static inline gboolean not_animating(gpointer data)
{
  return !ts_graph_view_get_animating(shown_view());
}

static inline gboolean item_visible(gpointer data)
{
  ts_view_model *model = ts_graph_view_get_model(shown_view());
  return ts_view_model_is_visible(model, NULL, GPOINTER_TO_INT(data));
}

static inline void on_transfer_shown(TsEngineWorker *engine, guint call_id, guint64 received, guint64 total,
                              GPtrArray *texts)
{
  g_ptr_array_add(texts, g_strdup(ts_run_panel_get_progress_text(ts_window_get_run_panel(window))));
  const char *shot = g_getenv("TS_TEST_TRANSFER_SCREENSHOT"); /* to look at it, halfway */
  if (shot && received * 2 == total) {
    wait_drawn(GTK_WIDGET(window));
    g_autoptr(GError) error = NULL;
    ts_screenshot_save(GTK_WIDGET(window), shot, &error);
    g_assert_no_error(error);
  }
}

/* g as it would read back if node `id` stood for the nodes `origins` (an
 * optimized node): its serialized form with that node's origins rewritten. */
static inline ts_graph *with_origins(const ts_graph *g, int id, const int *origins, int n_origins)
{
  size_t size = 0;
  void *bytes = ts_graph_serialize(g, &size);
  g_assert_nonnull(bytes);
  g_autoptr(GVariant) whole = g_variant_ref_sink(g_variant_new_from_data(G_VARIANT_TYPE("(suv)"), bytes, size,
                                                                          FALSE, free, bytes));
  const char *magic;
  guint32 version;
  g_autoptr(GVariant) body = NULL;
  g_variant_get(whole, "(&suv)", &magic, &version, &body);
  GVariantBuilder graphs;
  g_variant_builder_init(&graphs, g_variant_get_type(body));
  for (gsize gi = 0; gi < g_variant_n_children(body); gi++) {
    g_autoptr(GVariant) graph = g_variant_get_child_value(body, gi);
    if (gi > 0) {
      g_variant_builder_add_value(&graphs, graph);
      continue;
    }
    g_autoptr(GVariant) nodes = g_variant_get_child_value(graph, 3);
    GVariantBuilder new_nodes;
    g_variant_builder_init(&new_nodes, g_variant_get_type(nodes));
    for (gsize ni = 0; ni < g_variant_n_children(nodes); ni++) {
      g_autoptr(GVariant) node = g_variant_get_child_value(nodes, ni);
      if ((int)ni != id) {
        g_variant_builder_add_value(&new_nodes, node);
        continue;
      }
      enum { ORIGINS = 13 }; /* the node's field (docs/graph-format.md) */
      GVariant *fields[16];
      gsize n_fields = g_variant_n_children(node);
      g_assert_cmpuint(n_fields, <=, G_N_ELEMENTS(fields));
      for (gsize f = 0; f < n_fields; f++)
        fields[f] = f == ORIGINS ? NULL : g_variant_get_child_value(node, f);
      GVariantBuilder list;
      g_variant_builder_init(&list, G_VARIANT_TYPE("a(is)"));
      for (int o = 0; o < n_origins; o++)
        g_variant_builder_add(&list, "(is)", origins[o], "");
      fields[ORIGINS] = g_variant_builder_end(&list);
      g_variant_builder_add_value(&new_nodes, g_variant_new_tuple(fields, n_fields));
      for (gsize f = 0; f < n_fields; f++)
        if (f != ORIGINS)
          g_variant_unref(fields[f]);
    }
    GVariant *parts[4];
    for (gsize f = 0; f < 3; f++)
      parts[f] = g_variant_get_child_value(graph, f);
    parts[3] = g_variant_builder_end(&new_nodes);
    g_variant_builder_add_value(&graphs, g_variant_new_tuple(parts, 4));
    for (gsize f = 0; f < 3; f++)
      g_variant_unref(parts[f]);
  }
  g_autoptr(GVariant) rewritten =
    g_variant_ref_sink(g_variant_new("(suv)", magic, version, g_variant_builder_end(&graphs)));
  g_autoptr(GVariant) normal = g_variant_get_normal_form(rewritten);
  ts_graph *out = ts_graph_deserialize(g_variant_get_data(normal), g_variant_get_size(normal));
  g_assert_nonnull(out);
  return out;
}

static inline void on_activate_node(TsNodeDetails *details, gpointer node, gpointer data)
{
  *(const ts_node **)data = node;
}

/* A node standing for other nodes (as an optimized one does) lists them,
 * and their rows ask for them; timing and value rows take what they are
 * given and go back when the node changes. */
/* x^T-free square: y = x x under "dense_3"; returns dsum(y)/dx from a tape. */
static inline ts_tensor *gradient_model(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *y = NULL, *g = NULL;
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, x);
  TS_NAME_SCOPE("dense_3") { y = ts_matmul(x, x); }
  ts_tape_gradient(tape, ts_reduce_sum(y, TS_ALL_AXES, false), &x, 1, &g, TS_UNCONNECTED_NONE);
  ts_tape_free(tape);
  return g;
}

/* ---- the debugger ---------------------------------------------------------------- */

static inline gboolean graph_selects(gpointer name)
{
  TsGraphView *view = TS_GRAPH_VIEW(ts_graph_pane_get_view(ts_window_get_graph_pane(window)));
  int item = ts_graph_view_get_selected_item(view);
  return item >= 0 && g_strcmp0(ts_node_name(ts_view_item_node(ts_graph_view_get_model(view), item)), name) == 0;
}

static inline gboolean has_last_output(gpointer panel)
{
  return ts_debug_panel_get_last_output(panel, "MatMul") != NULL;
}

static inline gboolean debug_stopped(gpointer data)
{
  return ts_debug_panel_get_stopped(ts_window_get_debug_panel(window));
}

static inline gboolean debug_ended(gpointer data)
{
  return !ts_debug_panel_get_active(ts_window_get_debug_panel(window));
}

static inline gboolean shows_op_seq(gpointer data)
{
  const char *op, *node, *file;
  int line;
  return ts_debug_panel_get_shown_op(ts_window_get_debug_panel(window), &op, &node, &file, &line) &&
         strstr(ts_debug_panel_get_status(ts_window_get_debug_panel(window)), data) == NULL;
}

/* The op of a graph's node, by name. */
static inline const char *op_of(const ts_node *n)
{
  return ts_op_name(ts_node_op(n));
}

static inline gboolean compare_selected_is(gpointer data)
{
  TsGraphView *view = TS_GRAPH_VIEW(ts_compare_pane_get_view(ts_window_get_compare_pane(window), FALSE));
  int item = ts_graph_view_get_selected_item(view);
  ts_view_model *model = ts_graph_view_get_model(view);
  return item >= 0 && model && ts_view_item_node(model, item) == data;
}

static inline gboolean not_animating_right(gpointer data)
{
  return !ts_graph_view_get_animating(TS_GRAPH_VIEW(ts_compare_pane_get_view(ts_window_get_compare_pane(window), TRUE)));
}

static inline const ts_node *view_selected_node(TsGraphView *view)
{
  int item = ts_graph_view_get_selected_item(view);
  return item >= 0 ? ts_view_item_node(ts_graph_view_get_model(view), item) : NULL;
}

static inline gboolean reads(const ts_node *consumer, const ts_node *producer)
{
  for (int i = 0; i < ts_node_n_inputs(consumer); i++)
    if (ts_node_input(consumer, i).node == ts_node_id(producer))
      return TRUE;
  return FALSE;
}

/* ---- layout ------------------------------------------------------------------------ */

/* The window's width while its layout is judged.  The op statistics'
 * twelve columns need about 850 px: they fit from the default 1280 px
 * window on, and scroll sideways in the smallest. */

/* Widgets that do not get the room they need: allocated less than their
 * minimum size (cut, or drawn over by a neighbour), labels and buttons
 * narrower than their text (not ellipsizing by design), labels ellipsized
 * without their text in a tooltip, tables with columns out of sight.  A
 * line per widget. */
static inline void find_cramped(GtkWidget *widget, GString *problems)
{
  if (!gtk_widget_get_mapped(widget) || !gtk_widget_get_child_visible(widget))
    return;
  /* the margin box, what measure() speaks of */
  int width = gtk_widget_get_allocated_width(widget) + gtk_widget_get_margin_start(widget) +
              gtk_widget_get_margin_end(widget);
  int height = gtk_widget_get_allocated_height(widget) + gtk_widget_get_margin_top(widget) +
               gtk_widget_get_margin_bottom(widget);
  int min_w = 0, min_h = 0;
  gtk_widget_measure(widget, GTK_ORIENTATION_HORIZONTAL, -1, &min_w, NULL, NULL, NULL);
  gtk_widget_measure(widget, GTK_ORIENTATION_VERTICAL, MAX(width, min_w), &min_h, NULL, NULL, NULL);
  /* a scrolled window's child is as big as it asks: only what shows counts */
  GtkWidget *parent = gtk_widget_get_parent(widget);
  gboolean scrolled = parent && (GTK_IS_SCROLLABLE(parent) || GTK_IS_SCROLLED_WINDOW(parent));
  if (!scrolled && (width < min_w || height < min_h))
    g_string_append_printf(problems, "%s%s%s: %dx%d px of at least %dx%d\n", G_OBJECT_TYPE_NAME(widget),
                           GTK_IS_LABEL(widget) ? " " : "",
                           GTK_IS_LABEL(widget) ? gtk_label_get_text(GTK_LABEL(widget)) : "", width, height, min_w,
                           min_h);
  /* laid out past its parent's edge: cut where the parent clips it */
  /* (GTK's own parts, a scrollbar's or a scale's slider, reach past their
   * trough by design, as a toast sliding in does; a hidden revealer's child
   * has no height to cut; 2 px of slack for the header bar's and the menu
   * buttons' outlines) */
  graphene_rect_t box;
  GtkBorder pad = { 0 };
  if (parent)
    gtk_style_context_get_padding(gtk_widget_get_style_context(parent), &pad); /* room to draw in, not cut */
  gboolean own_part = g_str_equal(G_OBJECT_TYPE_NAME(widget), "GtkGizmo") || GTK_IS_SCROLLBAR(parent) ||
                      ADW_IS_TOAST_OVERLAY(parent); /* a toast slides in from the edge */
  if (parent && !scrolled && !own_part && gtk_widget_get_height(widget) > 0 &&
      gtk_widget_compute_bounds(widget, parent, &box) &&
      (box.origin.x < -2 - pad.left || box.origin.y < -2 - pad.top ||
       box.origin.x + box.size.width > gtk_widget_get_width(parent) + 2 + pad.right ||
       box.origin.y + box.size.height > gtk_widget_get_height(parent) + 2 + pad.bottom))
    g_string_append_printf(problems, "%s%s%s: past its parent %s's edge (%.0f,%.0f %.0fx%.0f in %dx%d)\n",
                           G_OBJECT_TYPE_NAME(widget), GTK_IS_LABEL(widget) ? " " : "",
                           GTK_IS_LABEL(widget) ? gtk_label_get_text(GTK_LABEL(widget)) : "",
                           G_OBJECT_TYPE_NAME(parent), box.origin.x, box.origin.y, box.size.width, box.size.height,
                           gtk_widget_get_width(parent), gtk_widget_get_height(parent));
  /* a table needing more than its width: columns out of sight */
  if (GTK_IS_COLUMN_VIEW(widget) && !gtk_widget_get_ancestor(widget, TS_TYPE_TENSOR_VIEW)) {
    GtkWidget *scroll = gtk_widget_get_ancestor(widget, GTK_TYPE_SCROLLED_WINDOW);
    int need = 0;
    gtk_widget_measure(widget, GTK_ORIENTATION_HORIZONTAL, -1, &need, NULL, NULL, NULL);
    if (scroll && need > gtk_widget_get_width(scroll))
      g_string_append_printf(problems, "a table needs %d px, has %d (columns out of sight)\n", need,
                             gtk_widget_get_width(scroll));
  }
  if (GTK_IS_BUTTON(widget) || GTK_IS_MENU_BUTTON(widget)) {
    int natural = 0;
    gtk_widget_measure(widget, GTK_ORIENTATION_HORIZONTAL, -1, NULL, &natural, NULL, NULL);
    if (width < natural)
      g_string_append_printf(problems, "button %s cut: %d px of %d\n", gtk_widget_get_tooltip_text(widget), width,
                             natural);
  }
  /* a button's label is judged with its button */
  if (GTK_IS_LABEL(widget) && !gtk_widget_get_ancestor(widget, GTK_TYPE_BUTTON))
    find_cut_labels_one(widget, problems);
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child))
    find_cramped(child, problems);
}

/* Arguments of the run panel not in sight (scrolled away or cut). */
static inline void find_hidden_arguments(GString *problems)
{
  GtkWidget *row = find_widget(GTK_WIDGET(ts_window_get_run_panel(window)), TS_TYPE_ARG_ROW);
  GtkWidget *scroll = row ? gtk_widget_get_ancestor(row, GTK_TYPE_SCROLLED_WINDOW) : NULL;
  for (; row; row = gtk_widget_get_next_sibling(row)) {
    graphene_rect_t b;
    g_assert_true(gtk_widget_compute_bounds(row, scroll, &b));
    if (b.origin.y < 0 || b.origin.y + b.size.height > gtk_widget_get_height(scroll) + 0.5)
      g_string_append_printf(problems, "an argument out of sight: rows %.0f to %.0f px of a %d px list\n", b.origin.y,
                             b.origin.y + b.size.height, gtk_widget_get_height(scroll));
  }
}

/* The titles of the table's columns shown, in order, space-separated (owned). */
static inline char *stats_columns_shown(GtkColumnView *view)
{
  GListModel *columns = gtk_column_view_get_columns(view);
  g_autoptr(GString) shown = g_string_new(NULL);
  for (guint i = 0; i < g_list_model_get_n_items(columns); i++) {
    g_autoptr(GtkColumnViewColumn) col = g_list_model_get_item(columns, i);
    if (gtk_column_view_column_get_visible(col))
      g_string_append_printf(shown, "%s%s", shown->len ? " " : "", gtk_column_view_column_get_title(col));
  }
  return g_string_free(g_steal_pointer(&shown), FALSE);
}

static inline void resize_and_draw(int width, int height)
{
  gtk_window_set_default_size(GTK_WINDOW(window), width, height);
  wait_drawn(GTK_WIDGET(window));
  wait_idle();
  wait_drawn(GTK_WIDGET(window));
}

G_GNUC_UNUSED static const int LAYOUT_SIZES[][2] = { { 1280, 800 }, { 1024, 700 } };
G_GNUC_UNUSED static const char *const LAYOUT_THEMES[] = { "light", "dark" };

/* The window as it is now, at each size and in each theme: every panel fits. */
static inline void check_layout(const char *state, GString *problems)
{
  GSettings *settings = ts_application_get_settings(app);
  for (guint t = 0; t < G_N_ELEMENTS(LAYOUT_THEMES); t++) {
    g_settings_set_string(settings, "theme", LAYOUT_THEMES[t]);
    for (guint i = 0; i < G_N_ELEMENTS(LAYOUT_SIZES); i++) {
      gtk_window_set_default_size(GTK_WINDOW(window), LAYOUT_SIZES[i][0], LAYOUT_SIZES[i][1]);
      wait_drawn(GTK_WIDGET(window));
      wait_idle();
      wait_drawn(GTK_WIDGET(window));
      GString *found = g_string_new(NULL);
      if (i == 0) /* at the default size all of a function's arguments show; at the smallest they scroll */
        find_hidden_arguments(found);
      /* a window bigger than asked for: its panels need more */
      if (gtk_widget_get_width(GTK_WIDGET(window)) > LAYOUT_SIZES[i][0] ||
          gtk_widget_get_height(GTK_WIDGET(window)) > LAYOUT_SIZES[i][1]) {
        int min_w = 0, min_h = 0;
        gtk_widget_measure(GTK_WIDGET(window), GTK_ORIENTATION_HORIZONTAL, -1, &min_w, NULL, NULL, NULL);
        gtk_widget_measure(GTK_WIDGET(window), GTK_ORIENTATION_VERTICAL, -1, &min_h, NULL, NULL, NULL);
        g_string_append_printf(found, "the window is %dx%d (its content needs at least %dx%d)\n",
                               gtk_widget_get_width(GTK_WIDGET(window)), gtk_widget_get_height(GTK_WIDGET(window)),
                               min_w, min_h);
      }
      find_cramped(GTK_WIDGET(window), found);
      if (found->len)
        g_string_append_printf(problems, "-- %s at %dx%d, %s:\n%s", state, LAYOUT_SIZES[i][0], LAYOUT_SIZES[i][1],
                               LAYOUT_THEMES[t], found->str);
      g_string_free(found, TRUE);
      g_autofree char *name = g_strdup_printf("layout-%s-%dx%d-%s.png", state, LAYOUT_SIZES[i][0],
                                              LAYOUT_SIZES[i][1], LAYOUT_THEMES[t]);
      save_test_screenshot(GTK_WIDGET(window), name);
    }
  }
  g_settings_reset(settings, "theme");
}

static inline gboolean search_status_set(gpointer label)
{
  return *gtk_label_get_text(label) != '\0';
}

/* The mean brightness (0-255) of rect in the ARGB32 texture. */
static inline double mean_brightness(GdkTexture *texture, const graphene_rect_t *rect)
{
  int width = gdk_texture_get_width(texture), height = gdk_texture_get_height(texture);
  gsize stride = (gsize)width * 4;
  g_autofree guchar *pixels = g_malloc(stride * (gsize)height);
  gdk_texture_download(texture, pixels, stride);
  double sum = 0;
  int n = 0;
  for (int y = MAX((int)rect->origin.y, 0); y < MIN((int)(rect->origin.y + rect->size.height), height); y++)
    for (int x = MAX((int)rect->origin.x, 0); x < MIN((int)(rect->origin.x + rect->size.width), width); x++) {
      const guchar *p = pixels + (gsize)y * stride + (gsize)x * 4;
      sum += (p[0] + p[1] + p[2]) / 3.0;
      n++;
    }
  return n ? sum / n : 0;
}

/* The stack switcher of stack under widget, or NULL. */
static inline GtkWidget *switcher_of(GtkWidget *widget, GtkStack *stack)
{
  if (GTK_IS_STACK_SWITCHER(widget) && gtk_stack_switcher_get_stack(GTK_STACK_SWITCHER(widget)) == stack)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child)) {
    GtkWidget *found = switcher_of(child, stack);
    if (found)
      return found;
  }
  return NULL;
}

typedef struct {
  const char *path;
  GTestFunc test;
} TestAppCase;

/* The program of a file of tests: the application and its window (with
 * seeds open where open_seeds), the cases in order, then the window gone. */
static inline int test_app_run(int *argc, char ***argv, gboolean open_seeds, const TestAppCase *cases)
{
  g_setenv("GSETTINGS_BACKEND", "memory", TRUE);
  test_sshd_start(TS_TEST_WORKER); /* it sets variables: before any thread */
  gtk_test_init(argc, argv, NULL);
  g_test_log_set_fatal_handler(fatal_filter, NULL);
  tmp_dir = g_dir_make_tmp("test-app-XXXXXX", NULL);

  app = ts_application_new(NULL);
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_NON_UNIQUE);
  g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));
  g_application_activate(G_APPLICATION(app));
  GList *windows = gtk_application_get_windows(GTK_APPLICATION(app));
  g_assert_nonnull(windows);
  window = TS_WINDOW(windows->data);
  if (open_seeds) {
    activate("win.open-module", "s", seeds_path());
    wait_idle();
  }

  for (const TestAppCase *c = cases; c->path; c++)
    g_test_add_func(c->path, c->test);
  int status = g_test_run();

  g_object_add_weak_pointer(G_OBJECT(window), (gpointer *)&window);
  gtk_window_destroy(GTK_WINDOW(window));
  test_wait_for(window_gone, NULL, "the window to go");
  g_object_unref(app);
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  test_sshd_stop();
  return status;
}
