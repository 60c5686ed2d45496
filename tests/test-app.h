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
#include "ts-console-lines.h"
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


/* A copy of the test module tiny.so in tmp_dir under name (owned), its
 * bytes in *contents (owned) to "rebuild" it with. */
static inline char *copy_of_tiny(const char *name, char **contents, gsize *length)
{
  char *path = g_build_filename(tmp_dir, name, NULL);
  g_autofree char *src = g_build_filename(TS_TEST_MODULES_DIR, "tiny.so", NULL);
  g_assert_true(g_file_get_contents(src, contents, length, NULL));
  g_assert_true(g_file_set_contents(path, *contents, (gssize)*length, NULL));
  return path;
}

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

/* A new reference: the console makes its items when asked, and lets them go. */
static inline TsConsoleLine *console_line(guint i)
{
  TsConsoleLine *line = g_list_model_get_item(ts_console_get_lines(ts_window_get_console(window)), i);
  g_assert_nonnull(line);
  return line;
}

static inline gboolean console_line_has_prefix(guint i, const char *prefix)
{
  g_autoptr(TsConsoleLine) line = console_line(i);
  return g_str_has_prefix(ts_console_line_get_text(line), prefix);
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
  g_autoptr(TsConsoleLine) line = console_line(i);
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

static inline gboolean view_still(gpointer view)
{
  return !ts_graph_view_get_animating(view);
}

static inline GtkWidget *find_widget(GtkWidget *widget, GType type);

static inline gboolean module_changed(gpointer data)
{
  return ts_window_get_module(window) != data && !ts_window_get_busy(window);
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


/* ---- profiling ------------------------------------------------------------------- */

static inline void save_test_screenshot(GtkWidget *widget, const char *name);
static inline void wait_drawn(GtkWidget *widget);

/* The Diff page has its table (data: its TsDiffTable). */
static inline gboolean diff_shown(gpointer data)
{
  return ts_diff_table_get_diff(data) != NULL;
}

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

static inline int cmp_strings(const void *a, const void *b)
{
  return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

/* Profile on, a Run of sequential_model: the Profiler panel's table counts
 * what ran, groups four ways, selects graph nodes both ways; the graph's
 * compute-time colouring has the times; Compare fills the compare view. */
static inline char *details_text(void);

static inline gboolean graph_drawn(gpointer data)
{
  return ts_window_get_graph_drawn(data);
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
 * holding the whole text (and maybe more).  Appends a line per label to problems. */
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
    /* the tooltip may say more (the profiler's summary names the Run the
     * menu beside it shows) */
    if (pango_layout_is_ellipsized(layout) && !(tooltip && strstr(tooltip, plain)))
      g_string_append_printf(problems, "ellipsized without its text as tooltip: '%s' (tooltip '%s')\n", text,
                             tooltip ? tooltip : "");
  } else if (!gtk_label_get_wrap(label) && *text && gtk_widget_get_width(widget) < natural) {
    g_string_append_printf(problems, "clipped: '%s' (%d px of %d)\n", text, gtk_widget_get_width(widget), natural);
  }
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

/* Whether a label under widget shows text (as read, markup aside). */
static inline gboolean find_label(GtkWidget *widget, const char *text)
{
  if (GTK_IS_LABEL(widget) && g_strcmp0(gtk_label_get_text(GTK_LABEL(widget)), text) == 0)
    return TRUE;
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child))
    if (find_label(child, text))
      return TRUE;
  return FALSE;
}

/* The first widget under widget whose action is action ("win.run"), or NULL. */
static inline GtkWidget *find_actionable(GtkWidget *widget, const char *action)
{
  if (GTK_IS_ACTIONABLE(widget) && g_strcmp0(gtk_actionable_get_action_name(GTK_ACTIONABLE(widget)), action) == 0)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child)) {
    GtkWidget *found = find_actionable(child, action);
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

typedef struct {
  const char *function;
  const char *error;     /* what the run panel says */
  gboolean cancel;       /* Cancel the run once it is under way */
  gboolean eager;
} Misbehaviour;

static inline gboolean window_gone(gpointer data)
{
  return window == NULL;
}

/* GTK warns when there is no session bus (as under a bare Xvfb); that one is not ours. */
static inline gboolean fatal_filter(const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
  return !(message && strstr(message, "session bus"));
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
  /* a stack's page that needs more width at the stack's height than the
   * stack has: GtkStack allocates its page that wide, centred, past its
   * edges (measured here as GtkStack measures it) */
  GtkWidget *page = GTK_IS_STACK(widget) ? gtk_stack_get_visible_child(GTK_STACK(widget)) : NULL;
  if (page) {
    int need = 0;
    gtk_widget_measure(page, GTK_ORIENTATION_HORIZONTAL, gtk_widget_get_height(widget), &need, NULL, NULL, NULL);
    if (need > gtk_widget_get_width(widget) + 2)
      g_string_append_printf(problems, "%s in a GtkStack: %d px wide at the stack's height of %d px, in %d px\n",
                             G_OBJECT_TYPE_NAME(page), need, gtk_widget_get_height(widget), gtk_widget_get_width(widget));
  }
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

/* The run result's statistics (a tensor's min, max, mean ...) not whole in
 * sight: cut by the scrolled window around the result (a scroll away is not
 * in sight).  Nothing when the result is no tensor. */
static inline void find_hidden_result_stats(GString *problems)
{
  GtkWidget *view = GTK_WIDGET(ts_run_panel_get_tensor_view(ts_window_get_run_panel(window)));
  GtkWidget *stats = find_named(view, "tensor-stats");
  g_assert_nonnull(stats);
  if (!gtk_widget_get_mapped(stats) || !*gtk_label_get_text(GTK_LABEL(stats)))
    return;
  GtkWidget *scroll = gtk_widget_get_ancestor(view, GTK_TYPE_SCROLLED_WINDOW);
  graphene_rect_t b;
  g_assert_true(gtk_widget_compute_bounds(stats, scroll, &b));
  if (b.origin.y < 0 || b.origin.y + b.size.height > gtk_widget_get_height(scroll) + 0.5)
    g_string_append_printf(problems, "the result's statistics out of sight: %.0f to %.0f px of a %d px result\n",
                           b.origin.y, b.origin.y + b.size.height, gtk_widget_get_height(scroll));
}

G_GNUC_UNUSED static const int LAYOUT_SIZES[][2] = { { 1280, 800 }, { 1024, 640 } };
G_GNUC_UNUSED static const char *const LAYOUT_THEMES[] = { "light", "dark" };

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
