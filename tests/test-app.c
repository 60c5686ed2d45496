/* test-app.c — the desktop app under Xvfb: a real window driven through its
 * actions, checked through its widgets' models.  Runs in order: later
 * tests build on the module and the traces of the earlier ones. */
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


static gboolean window_idle(gpointer data)
{
  return !ts_window_get_busy(window);
}

static void wait_idle(void)
{
  /* a run posts its events before it completes: once idle, everything is in */
  test_wait_for(window_idle, NULL, "the window to finish");
  while (g_main_context_iteration(NULL, FALSE))
    ;
}

static void activate(const char *action, const char *format, ...)
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
static void run_with(const char *const *args)
{
  ts_run_panel_set_args(ts_window_get_run_panel(window), args);
  activate("win.run", NULL);
  wait_idle();
}

static char *result_text(void)
{
  return ts_run_panel_dup_result_text(ts_window_get_run_panel(window));
}

static guint n_items(GListModel *model)
{
  return g_list_model_get_n_items(model);
}

static TsTraceEntry *trace_row(guint i) /* borrowed */
{
  GListModel *rows = ts_trace_log_get_entries(ts_window_get_trace_log(window));
  g_autoptr(TsTraceEntry) entry = g_list_model_get_item(rows, i);
  g_assert_nonnull(entry);
  return entry;
}

/* A new reference: the console makes its items when asked, and lets them go. */
static TsConsoleLine *console_line(guint i)
{
  TsConsoleLine *line = g_list_model_get_item(ts_console_get_lines(ts_window_get_console(window)), i);
  g_assert_nonnull(line);
  return line;
}

static gboolean console_line_has_prefix(guint i, const char *prefix)
{
  g_autoptr(TsConsoleLine) line = console_line(i);
  return g_str_has_prefix(ts_console_line_get_text(line), prefix);
}

static guint n_traces(void)
{
  return n_items(ts_trace_log_get_entries(ts_window_get_trace_log(window)));
}

static guint n_lines(void)
{
  return n_items(ts_console_get_lines(ts_window_get_console(window)));
}

static void assert_line(guint i, const char *text, TsConsoleSource source, const char *call)
{
  g_autoptr(TsConsoleLine) line = console_line(i);
  g_assert_cmpstr(ts_console_line_get_text(line), ==, text);
  g_assert_cmpint(ts_console_line_get_source(line), ==, source);
  if (call)
    g_assert_cmpstr(ts_console_line_get_call_label(line), ==, call);
}

static void clear_logs(void)
{
  activate("win.clear-log", NULL);
  g_assert_cmpuint(n_traces(), ==, 0);
  g_assert_cmpuint(n_lines(), ==, 0);
}

static void select_function(const char *name)
{
  activate("win.select-function", "s", name);
  TsSidebarItem *item = ts_function_list_get_selected(ts_window_get_function_list(window));
  g_assert_nonnull(item);
  g_assert_cmpstr(ts_sidebar_item_get_function_name(item), ==, name);
}

static const char *seeds_path(void)
{
  const char *path = g_getenv("TRACESCOPE_SEEDS");
  g_assert_nonnull(path);
  return path;
}

/* Opens a module that must be refused; returns the error shown (borrowed). */
static const char *open_refused(const char *path)
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

/* ---- tests ------------------------------------------------------------------- */

static void test_open_seeds(void)
{
  g_assert_null(ts_window_get_module(window));
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  TsLoadedModule *module = ts_window_get_module(window);
  g_assert_nonnull(module);
  int n = ts_loaded_module_get_n_functions(module);
  g_assert_cmpint(n, >, 20);
  GListModel *functions = ts_function_list_get_functions(ts_window_get_function_list(window));
  g_assert_cmpuint(n_items(functions), ==, (guint)n);
  g_assert_nonnull(ts_loaded_module_lookup(module, SIDE_EFFECT));
  g_assert_null(ts_function_list_get_selected(ts_window_get_function_list(window)));
}

/* The guide: host 2 then host 3 trace twice and print "Tracing!" twice. */
static void test_host_values_retrace(void)
{
  clear_logs();
  select_function(SIDE_EFFECT);
  g_assert_null(ts_graph_pane_get_concrete(ts_window_get_graph_pane(window)));

  run_with((const char *const[]){ "2", NULL });
  g_autofree char *six = result_text();
  g_assert_cmpstr(six, ==, "Tensor(6, shape=(), dtype=int32)");
  run_with((const char *const[]){ "3", NULL });
  g_autofree char *eleven = result_text();
  g_assert_cmpstr(eleven, ==, "Tensor(11, shape=(), dtype=int32)");

  g_assert_cmpuint(n_traces(), ==, 2);
  TsTraceEntry *first = trace_row(0), *second = trace_row(1);
  g_assert_cmpstr(ts_trace_entry_get_function(first), ==, SIDE_EFFECT);
  g_assert_cmpstr(ts_trace_entry_get_signature(first), ==, "(x: 2)");
  g_assert_cmpstr(ts_trace_entry_get_reason(first), ==, "first call");
  g_assert_cmpstr(ts_trace_entry_get_kind(first), ==, "traced");
  g_assert_cmpint(ts_trace_entry_get_n_concrete(first), ==, 1);
  g_assert_cmpstr(ts_trace_entry_get_signature(second), ==, "(x: 3)");
  g_assert_cmpstr(ts_trace_entry_get_reason(second), ==, "arg 0 (x): host value 3 differs from 2");
  g_assert_cmpstr(ts_trace_entry_get_kind(second), ==, "retraced (host value)");
  g_assert_cmpint(ts_trace_entry_get_n_concrete(second), ==, 2);
  g_assert_cmpstr(ts_trace_entry_get_call_label(second), ==, "#2 " SIDE_EFFECT "(3)");

  g_assert_cmpuint(n_lines(), ==, 2);
  assert_line(0, "Tracing!", TS_CONSOLE_SOURCE_HOST, "#1 " SIDE_EFFECT "(2)");
  assert_line(1, "Tracing!", TS_CONSOLE_SOURCE_HOST, "#2 " SIDE_EFFECT "(3)");

  /* the sidebar holds both concrete functions; the newest is selected and shown */
  TsSidebarItem *item = ts_function_list_get_selected(ts_window_get_function_list(window));
  g_assert_cmpint(ts_sidebar_item_get_concrete_index(item), ==, 1);
  g_assert_true(ts_graph_pane_get_concrete(ts_window_get_graph_pane(window)) ==
                ts_trace_entry_get_concrete(second));
  GListModel *functions = ts_function_list_get_functions(ts_window_get_function_list(window));
  for (guint i = 0; i < n_items(functions); i++) {
    g_autoptr(TsSidebarItem) f = g_list_model_get_item(functions, i);
    if (g_strcmp0(ts_sidebar_item_get_function_name(f), SIDE_EFFECT) == 0)
      g_assert_cmpuint(n_items(ts_sidebar_item_get_children(f)), ==, 2);
  }
}

/* Tensors of one signature share a graph: one trace, one "Tracing!". */
static void test_tensors_share_a_graph(void)
{
  clear_logs();
  run_with((const char *const[]){ "i32[]=2", NULL });
  run_with((const char *const[]){ "i32[]=3", NULL });
  g_autofree char *eleven = result_text();
  g_assert_cmpstr(eleven, ==, "Tensor(11, shape=(), dtype=int32)");
  g_assert_cmpuint(n_traces(), ==, 1);
  g_assert_cmpstr(ts_trace_entry_get_signature(trace_row(0)), ==, "(x: i32[])");
  g_assert_cmpstr(ts_trace_entry_get_reason(trace_row(0)), ==, "arg 0 (x): a tensor, traced with a host int");
  g_assert_cmpuint(n_lines(), ==, 1);
  assert_line(0, "Tracing!", TS_CONSOLE_SOURCE_HOST, NULL);
}

/* Eagerly the C code runs every call: no traces, "Tracing!" each time. */
static void test_eager_mode(void)
{
  clear_logs();
  activate("win.mode", "s", "eager");
  run_with((const char *const[]){ "2", NULL });
  run_with((const char *const[]){ "2", NULL });
  g_autofree char *six = result_text();
  g_assert_cmpstr(six, ==, "Tensor(6, shape=(), dtype=int32)");
  g_assert_cmpuint(n_traces(), ==, 0);
  g_assert_cmpuint(n_lines(), ==, 2);
  assert_line(0, "Tracing!", TS_CONSOLE_SOURCE_HOST, NULL);
  assert_line(1, "Tracing!", TS_CONSOLE_SOURCE_HOST, NULL);
  activate("win.mode", "s", "graph");
}

/* Host printf runs while tracing only; ts_print on every call. */
static void test_console_print_op(void)
{
  clear_logs();
  select_function("shape_retrace");
  run_with((const char *const[]){ "f32[2]:ones", NULL });
  run_with((const char *const[]){ "f32[2]:ones", NULL });
  g_assert_cmpuint(n_traces(), ==, 1);
  g_assert_cmpuint(n_lines(), ==, 3);
  assert_line(0, "(2,) Tracing!", TS_CONSOLE_SOURCE_HOST, NULL);
  assert_line(1, "[1 1] Executing", TS_CONSOLE_SOURCE_PRINT, NULL);
  assert_line(2, "[1 1] Executing", TS_CONSOLE_SOURCE_PRINT, NULL);
}

/* Five shapes: the warning, and its button relaxes the changing dim. */
static void test_retrace_warning_applies_signature(void)
{
  TsTraceLog *log = ts_window_get_trace_log(window);
  g_assert_null(ts_trace_log_get_warning(log));
  const char *const shapes[] = { "f32[3]:ones", "f32[4]:ones", "f32[5]:ones", "f32[6]:ones" };
  for (guint i = 0; i < G_N_ELEMENTS(shapes); i++)
    run_with((const char *const[]){ shapes[i], NULL });
  g_assert_cmpuint(n_traces(), ==, 5);
  g_assert_cmpstr(ts_trace_entry_get_reason(trace_row(4)), ==,
                  "arg 0 (x): shape (6,) differs from traced (5,)");
  const char *warning = ts_trace_log_get_warning(log);
  g_assert_nonnull(warning);
  g_assert_nonnull(strstr(warning, "because x keeps changing"));
  g_assert_nonnull(strstr(warning, "(x: f32[?])"));

  activate("win.apply-signature", "s", "shape_retrace");
  wait_idle();
  g_assert_null(ts_trace_log_get_warning(log));
  run_with((const char *const[]){ "f32[7]:ones", NULL });
  run_with((const char *const[]){ "f32[8]:ones", NULL });
  g_autofree char *eight = result_text();
  g_assert_cmpstr(eight, ==, "Tensor([1. 1. 1. 1. 1. 1. 1. 1.], shape=(8,), dtype=float32)");
  g_assert_cmpuint(n_traces(), ==, 6); /* one generalised trace serves both */
  g_assert_cmpstr(ts_trace_entry_get_signature(trace_row(5)), ==, "(x: f32[?])");
}

/* Activating a row shows that concrete function's graph. */
static void test_row_opens_graph(void)
{
  TsTraceEntry *entry = trace_row(1); /* shape_retrace(x: f32[3]) */
  g_signal_emit_by_name(ts_window_get_trace_log(window), "entry-activated", entry);
  TsSidebarItem *item = ts_function_list_get_selected(ts_window_get_function_list(window));
  g_assert_cmpstr(ts_sidebar_item_get_function_name(item), ==, "shape_retrace");
  g_assert_cmpint(ts_sidebar_item_get_concrete_index(item), ==, ts_trace_entry_get_concrete_index(entry));
  g_assert_true(ts_graph_pane_get_concrete(ts_window_get_graph_pane(window)) ==
                ts_trace_entry_get_concrete(entry));
}

/* After the module is opened again, the log's rows still show their own
 * graphs (the module's new functions start untraced). */
static void test_rows_survive_reopen(void)
{
  guint traces = n_traces();
  g_assert_cmpuint(traces, >, 1);
  TsLoadedModule *before = ts_window_get_module(window);
  activate("win.open-module", "s", "seeds");
  wait_idle();
  g_assert_true(ts_window_get_module(window) != before);
  g_assert_cmpuint(n_traces(), ==, traces);
  for (guint i = 0; i < traces; i++) {
    TsTraceEntry *entry = trace_row(i);
    if (ts_trace_entry_get_failed(entry))
      continue;
    g_signal_emit_by_name(ts_window_get_trace_log(window), "entry-activated", entry);
    g_assert_true(ts_graph_pane_get_concrete(ts_window_get_graph_pane(window)) ==
                  ts_trace_entry_get_concrete(entry));
    g_assert_cmpstr(ts_graph_pane_get_concrete(ts_window_get_graph_pane(window))->function, ==,
                    ts_trace_entry_get_function(entry));
  }
}

static gboolean compare_laid_out(gpointer data)
{
  TsComparePane *pane = ts_window_get_compare_pane(window);
  for (int side = 0; side < 2; side++)
    if (!ts_graph_view_get_layout(TS_GRAPH_VIEW(ts_compare_pane_get_view(pane, side))))
      return FALSE;
  return TRUE;
}

/* Two concrete functions side by side, coloured by what differs. */
static void test_compare_concrete(void)
{
  TsComparePane *pane = ts_window_get_compare_pane(window);
  TsModuleFunction *fn = ts_loaded_module_lookup(ts_window_get_module(window), "shape_retrace");
  TsConcreteInfo *shown = ts_graph_pane_get_concrete(ts_window_get_graph_pane(window));
  g_assert_false(ts_window_get_comparing(window));

  activate("win.compare-concrete", "(sii)", "shape_retrace", 0, 1);
  g_assert_true(ts_window_get_comparing(window));
  for (int side = 0; side < 2; side++) {
    TsGraphView *view = TS_GRAPH_VIEW(ts_compare_pane_get_view(pane, side));
    g_assert_true(ts_graph_view_get_graph(view) == ts_module_function_concrete(fn, side)->graph);
    g_assert_cmpint(ts_graph_view_get_colouring(view), ==, TS_RENDER_COLOUR_FUNCTION);
  }
  /* x is f32[2] vs f32[3]; PrintV2 has no outputs and matches */
  g_assert_cmpstr(ts_compare_pane_get_summary(pane), ==,
                  "(x: f32[2]) vs (x: f32[3]): 1 node differs in shape, 0 only left, 0 only right");
  test_wait_for(compare_laid_out, NULL, "both graphs to be laid out");

  /* indices out of range: a toast, the comparison stays */
  activate("win.compare-concrete", "(sii)", "shape_retrace", 0, 99);
  g_assert_true(ts_window_get_comparing(window));

  activate("win.close-compare", NULL);
  g_assert_false(ts_window_get_comparing(window));
  g_assert_null(ts_graph_view_get_graph(TS_GRAPH_VIEW(ts_compare_pane_get_view(pane, FALSE))));
  g_assert_true(ts_graph_pane_get_concrete(ts_window_get_graph_pane(window)) == shown);
}

/* A spec with an unknown dim traces without running. */
static void test_trace_only(void)
{
  select_function("simple_relu");
  guint before = n_traces();
  run_with((const char *const[]){ "f32[?,3]", NULL });
  g_assert_cmpuint(n_traces(), ==, before + 1);
  g_assert_cmpstr(ts_trace_entry_get_signature(trace_row(before)), ==, "(x: f32[?,3])");
  g_assert_cmpstr(ts_trace_entry_get_kind(trace_row(before)), ==, "traced (get_concrete_function)");
  g_autofree char *text = result_text();
  g_assert_nonnull(strstr(text, "x: float32 Tensor, shape=(None, 3)"));
}

/* Inputs are remembered per function. */
static void test_inputs_remembered(void)
{
  TsRunPanel *panel = ts_window_get_run_panel(window);
  select_function("power");
  ts_run_panel_set_args(panel, (const char *const[]){ "f32[2,2]:range(3)", "3", NULL });
  ts_run_panel_set_repeat(panel, 4);
  g_auto(GStrv) specs = ts_run_panel_dup_args(panel, NULL);
  select_function(SIDE_EFFECT);
  select_function("power");
  g_auto(GStrv) again = ts_run_panel_dup_args(panel, NULL);
  g_assert_cmpstrv(again, ((const char *const[]){ "f32[2,2]:range(3)", "3", NULL }));
  g_assert_cmpuint(ts_run_panel_get_repeat(panel), ==, 4);
  /* kept in the settings too, for the next start of the app */
  g_autoptr(GVariant) saved = g_settings_get_value(ts_application_get_settings(app), "remembered-arguments");
  g_autofree char *key =
    g_strdup_printf("%s\npower", ts_loaded_module_get_source(ts_window_get_module(window)));
  g_autoptr(GVariant) power = g_variant_lookup_value(saved, key, G_VARIANT_TYPE("(asu)"));
  g_assert_nonnull(power);
  g_autofree const char **kept = NULL;
  guint32 repeat;
  g_variant_get(power, "(^a&su)", &kept, &repeat);
  g_assert_cmpstrv(kept, ((const char *const[]){ "f32[2,2]:range(3)", "3", NULL }));
  g_assert_cmpuint(repeat, ==, 4);
  ts_run_panel_set_repeat(panel, 1);
}

/* Bad inputs and failing calls are messages, not crashes. */
static gboolean graph_drawn(gpointer data);

/* Save Session, then Open Session in a cleared window: the module, the
 * selection, the arguments typed and the trace log with its graphs come back. */
static void test_session_round_trip(void)
{
  select_function("deep_net");
  run_with((const char *const[]){ "i32[3]=4,5,6", NULL });
  guint traces = n_traces();
  g_assert_cmpuint(traces, >, 0);
  g_autofree char *path = g_build_filename(tmp_dir, "session.json", NULL);
  activate("win.save-session-to", "s", path);
  g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));

  clear_logs();
  select_function("square_if_positive");
  activate("win.open-session-from", "s", path);
  wait_idle();
  g_assert_null(ts_window_get_error_dialog(window));
  g_assert_cmpuint(n_traces(), ==, traces);
  TsSidebarItem *item = ts_function_list_get_selected(ts_window_get_function_list(window));
  g_assert_nonnull(item);
  g_assert_cmpstr(ts_sidebar_item_get_function_name(item), ==, "deep_net");
  g_auto(GStrv) args = ts_run_panel_dup_args(ts_window_get_run_panel(window), NULL);
  g_assert_cmpstrv(args, ((const char *const[]){ "i32[3]=4,5,6", NULL }));
  /* every trace came back with its graph */
  for (guint i = 0; i < traces; i++)
    g_assert_nonnull(ts_trace_entry_get_concrete(trace_row(i))->graph);

  /* a file that is not a session is refused with the reason */
  g_autofree char *bad = g_build_filename(tmp_dir, "bad.json", NULL);
  g_assert_true(g_file_set_contents(bad, "{\"format\": \"tracescope-session\", \"version\": 7}", -1, NULL));
  activate("win.open-session-from", "s", bad);
  GtkWindow *dialog = ts_window_get_error_dialog(window);
  g_assert_nonnull(dialog);
  g_assert_nonnull(strstr(ts_window_get_error(window), "it is version 7; this Tracescope reads version 1"));
  gtk_window_destroy(dialog);
  wait_idle();
  /* and a view that does not read names what is wrong in it */
  g_assert_true(g_file_set_contents(bad,
                                    "{\"format\": \"tracescope-session\", \"version\": 1, \"module\": \"seeds\", "
                                    "\"view\": {\"function\": \"f\", \"signature\": \"()\", \"expanded\": [], "
                                    "\"zoom\": -2, \"centre\": [0, 0]}}",
                                    -1, NULL));
  activate("win.open-session-from", "s", bad);
  dialog = ts_window_get_error_dialog(window);
  g_assert_nonnull(dialog);
  g_assert_nonnull(strstr(ts_window_get_error(window), "view: zoom -2 is not positive"));
  gtk_window_destroy(dialog);
  wait_idle();
  /* nesting json-glib would recurse through (200,000 arrays, in a member
   * the reader does not know) is refused before it parses: this crashed */
  GString *deep = g_string_new("{\"format\": \"tracescope-session\", \"version\": 1, \"unknown\": ");
  for (int i = 0; i < 200000; i++)
    g_string_append_c(deep, '[');
  for (int i = 0; i < 200000; i++)
    g_string_append_c(deep, ']');
  g_string_append_c(deep, '}');
  g_assert_true(g_file_set_contents(bad, deep->str, (gssize)deep->len, NULL));
  g_string_free(deep, TRUE);
  activate("win.open-session-from", "s", bad);
  dialog = ts_window_get_error_dialog(window);
  g_assert_nonnull(dialog);
  g_assert_nonnull(strstr(ts_window_get_error(window), "bad.json"));
  g_assert_nonnull(strstr(ts_window_get_error(window), "max_depth"));
  gtk_window_destroy(dialog);
  wait_idle();
  g_unlink(bad);
  g_unlink(path);
}

static TsGraphView *graph_view(void)
{
  return TS_GRAPH_VIEW(ts_graph_pane_get_view(ts_window_get_graph_pane(window)));
}

static gboolean view_still(gpointer view)
{
  return !ts_graph_view_get_animating(view);
}

/* A session keeps the graph view as it was: the groups open and where it
 * looked, even for a graph only the trace log still holds. */
static void test_session_keeps_view(void)
{
  select_function("fizzbuzz");
  run_with((const char *const[]){ "i32[]=15", NULL });
  test_wait_for(graph_drawn, window, "the graph to be drawn");
  TsGraphView *view = graph_view();
  ts_view_model *model = ts_graph_view_get_model(view);
  int group = -1;
  for (int i = 0; i < ts_view_model_n_items(model) && group < 0; i++)
    if (ts_view_item_is_expandable(model, i) && !ts_view_model_is_expanded(model, i))
      group = i;
  g_assert_cmpint(group, >=, 0);
  g_assert_true(ts_graph_view_set_expanded(view, group, TRUE));
  test_wait_for(graph_drawn, window, "the expanded graph to be drawn");
  ts_graph_view_select_item(view, group);
  ts_graph_view_zoom_to_selection(view);
  test_wait_for(graph_drawn, window, "the zoom to settle");
  test_wait_for(view_still, view, "the view to stop moving");
  g_auto(GStrv) expanded = ts_graph_view_dup_expanded(view);
  g_assert_true(g_strv_contains((const char *const *)expanded, ts_view_item_name(model, group)));
  double zoom, x, y;
  ts_graph_view_get_centre(view, &zoom, &x, &y);
  g_autofree char *path = g_build_filename(tmp_dir, "view.json", NULL);
  activate("win.save-session-to", "s", path);

  /* reopened into a fresh module: the graph comes from the trace log */
  clear_logs();
  select_function("deep_net");
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.open-session-from", "s", path);
  wait_idle();
  test_wait_for(graph_drawn, window, "the session's graph to be drawn");
  view = graph_view();
  g_auto(GStrv) again = ts_graph_view_dup_expanded(view);
  g_assert_cmpstrv(again, expanded);
  double zoom2, x2, y2;
  ts_graph_view_get_centre(view, &zoom2, &x2, &y2);
  g_assert_cmpfloat_with_epsilon(zoom2, zoom, 1e-6);
  g_assert_cmpfloat_with_epsilon(x2, x, 0.5);
  g_assert_cmpfloat_with_epsilon(y2, y, 0.5);
  g_unlink(path);
}

/* The graph shown exports to SVG (and PNG, PDF, DOT) from the window. */
static void test_export_graph(void)
{
  select_function("deep_net");
  run_with((const char *const[]){ "i32[3]=1,2,3", NULL });
  test_wait_for(graph_drawn, window, "the graph");
  g_autofree char *svg = g_build_filename(tmp_dir, "deep_net.svg", NULL);
  activate("win.export-graph-to", "s", svg);
  g_assert_true(g_file_test(svg, G_FILE_TEST_EXISTS));
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(svg, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "<svg"));
  g_assert_nonnull(strstr(text, "Relu"));
  g_unlink(svg);
}

/* The sidebar filters functions by name; asking for a hidden one shows it. */
static void test_function_filter(void)
{
  TsFunctionList *list = ts_window_get_function_list(window);
  ts_function_list_set_filter(list, "RELU");
  g_assert_cmpuint(ts_function_list_get_n_shown(list), ==, 2); /* simple_relu, my_relu */
  ts_function_list_set_filter(list, "no such function");
  g_assert_cmpuint(ts_function_list_get_n_shown(list), ==, 0);
  g_assert_true(ts_function_list_get_no_match_shown(list)); /* the empty list says why */
  select_function("deep_net"); /* clears the filter */
  g_assert_cmpuint(ts_function_list_get_n_shown(list), ==,
                   n_items(ts_function_list_get_functions(list)));
  g_assert_false(ts_function_list_get_no_match_shown(list));
}

static GtkWidget *find_widget(GtkWidget *widget, GType type);

static GtkWidget *find_search_entry(GtkWidget *widget)
{
  return find_widget(widget, GTK_TYPE_SEARCH_ENTRY);
}

static void send_key(GtkWidget *target, guint keyval)
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

/* Issue 23: Enter or Down in the filter picks the first function it shows;
 * the filter starts empty with another module. */
static void test_filter_picks_and_resets(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  TsFunctionList *list = ts_window_get_function_list(window);
  GtkWidget *entry = find_search_entry(GTK_WIDGET(list));
  /* what is typed in the window and not taken by the focus goes to the filter */
  g_assert_true(gtk_search_entry_get_key_capture_widget(GTK_SEARCH_ENTRY(entry)) == GTK_WIDGET(window));
  ts_function_list_set_filter(list, "deep_n");
  g_assert_cmpuint(ts_function_list_get_n_shown(list), ==, 1);
  g_signal_emit_by_name(entry, "activate");
  TsSidebarItem *item = ts_function_list_get_selected(list);
  g_assert_nonnull(item);
  g_assert_cmpstr(ts_sidebar_item_get_function_name(item), ==, "deep_net");
  ts_function_list_set_filter(list, "simple_re");
  send_key(entry, GDK_KEY_Down);
  item = ts_function_list_get_selected(list);
  g_assert_cmpstr(ts_sidebar_item_get_function_name(item), ==, "simple_relu");
  /* another module: all its functions shown, none of the last one's timings */
  TsProfilerPanel *profiler = ts_window_get_profiler_panel(window);
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(TRUE));
  run_with((const char *const[]){ "f32[]=2", NULL });
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(FALSE));
  g_assert_nonnull(ts_profiler_panel_get_session(profiler));
  ts_function_list_set_filter(list, "no such function");
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, "misbehave.so", NULL);
  activate("win.open-module", "s", path);
  wait_idle();
  g_assert_cmpstr(ts_function_list_get_filter(list), ==, "");
  g_assert_null(ts_profiler_panel_get_session(profiler));
  g_assert_null(ts_profiler_panel_get_compare(profiler));
  g_assert_cmpuint(ts_function_list_get_n_shown(list), ==, n_items(ts_function_list_get_functions(list)));
  g_assert_false(ts_function_list_get_no_match_shown(list));
  activate("win.open-module", "s", seeds_path());
  wait_idle();
}

/* A module's example arguments fill the run panel: the first Run works. */
static void test_example_arguments(void)
{
  select_function("simple_nn_layer");
  g_auto(GStrv) args = ts_run_panel_dup_args(ts_window_get_run_panel(window), NULL);
  g_assert_cmpstrv(args, ((const char *const[]){ "f32[3,3]:uniform", "f32[3,3]:uniform@2", NULL }));
  activate("win.run", NULL);
  wait_idle();
  g_assert_null(ts_run_panel_get_error(ts_window_get_run_panel(window)));
  g_autofree char *text = result_text();
  g_assert_true(g_str_has_suffix(text, "shape=(3, 3), dtype=float32)"));
  /* a matrix goes to the inspector: the worker's values, relu'd */
  ts_tensor *shown = ts_tensor_view_get_tensor(ts_run_panel_get_tensor_view(ts_window_get_run_panel(window)));
  g_assert_nonnull(shown);
  g_assert_cmpint(ts_tensor_dtype(shown), ==, TS_F32);
  g_assert_true(ts_shape_equal(ts_tensor_shape(shown), TS_SHAPE(3, 3)));
  for (int i = 0; i < 9; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(shown, i), >=, 0);
  select_function("dense_chain"); /* a tensor and a host count */
  g_auto(GStrv) chain = ts_run_panel_dup_args(ts_window_get_run_panel(window), NULL);
  g_assert_cmpstrv(chain, ((const char *const[]){ "f32[20,28,28]:uniform", "10", NULL }));
}

static void test_run_errors(void)
{
  TsRunPanel *panel = ts_window_get_run_panel(window);
  select_function("get_MSE"); /* not traced yet */
  guint traces = n_traces();
  ts_run_panel_set_args(panel, (const char *const[]){ "f32[2,3]:ones", "f32[3,2]:ones", NULL });
  activate("win.run", NULL);
  wait_idle();
  g_autofree char *text = result_text();
  g_assert_cmpstr(text, ==, ""); /* the error shows instead */
  /* the failed trace is in the log, and the canvas says why there is no graph */
  g_assert_cmpuint(n_traces(), ==, traces + 1);
  TsTraceEntry *failed = trace_row(traces);
  g_assert_true(ts_trace_entry_get_failed(failed));
  g_assert_cmpstr(ts_trace_entry_get_kind(failed), ==, "tracing failed");
  g_assert_cmpstr(ts_trace_entry_get_reason(failed), ==, ts_run_panel_get_error(panel));
  g_assert_cmpstr(ts_graph_pane_get_status_title(ts_window_get_graph_pane(window)), ==,
                  "Tracing get_MSE Failed");
  g_autoptr(GError) error = NULL;
  ts_run_panel_set_args(panel, (const char *const[]){ "f32[2,x]:ones", "1", NULL });
  g_assert_null(ts_run_panel_dup_args(panel, &error));
  g_assert_nonnull(strstr(error->message, "'x' is not a dimension"));
}

static gboolean counting_calls(gpointer panel)
{
  const char *text = ts_run_panel_get_progress_text(panel);
  return text && g_str_has_prefix(text, "call ") && strstr(text, " of 1000000 · ");
}

/* Many calls on the worker: the window stays responsive and Cancel stops them. */
static void test_cancel(void)
{
  TsRunPanel *panel = ts_window_get_run_panel(window);
  select_function(SIDE_EFFECT);
  ts_run_panel_set_args(panel, (const char *const[]){ "i32[]=1", NULL });
  ts_run_panel_set_repeat(panel, 1000000);
  activate("win.run", NULL);
  g_assert_true(ts_window_get_busy(window));
  /* the main loop turns while it runs, and the panel counts the calls */
  test_wait_for(counting_calls, panel, "the progress to count calls");
  activate("win.cancel", NULL);
  wait_idle();
  g_assert_null(ts_run_panel_get_progress_text(panel));
  g_assert_cmpstr(ts_run_panel_get_meta(panel), ==, ""); /* no header of an earlier run */
  g_assert_true(g_str_has_prefix(ts_run_panel_get_error(panel), "Cancelled"));
  ts_run_panel_set_repeat(panel, 1);
  run_with((const char *const[]){ "i32[]=4", NULL });
  g_autofree char *text = result_text();
  g_assert_cmpstr(text, ==, "Tensor(18, shape=(), dtype=int32)");
  /* a scalar stays text */
  g_assert_null(ts_tensor_view_get_tensor(ts_run_panel_get_tensor_view(panel)));
}

static guint n_step_lines(void)
{
  guint n = 0;
  for (guint i = 0; i < n_lines(); i++)
    n += console_line_has_prefix(i, "Step ");
  return n;
}

static gboolean step_line_shown(gpointer data)
{
  return n_step_lines() > 0;
}

/* The guide's training loop (seeds train, 200 steps, graph mode): its step
 * lines reach the console while it runs, not at the end, and Cancel stops
 * it inside the loop: no final line, fewer than its 20 step lines. */
static void test_train_streams_and_cancels(void)
{
  if (!g_file_test("/usr/share/datasets/fashion-mnist", G_FILE_TEST_IS_DIR)) {
    g_test_skip("dataset-fashion-mnist is not installed");
    return;
  }
  TsRunPanel *panel = ts_window_get_run_panel(window);
  clear_logs();
  select_function("train");
  ts_run_panel_set_args(panel, (const char *const[]){ "200", NULL });
  activate("win.run", NULL);
  test_wait_for(step_line_shown, NULL, "the first step line");
  g_assert_true(ts_window_get_busy(window)); /* shown while the loop runs on */
  activate("win.cancel", NULL);
  wait_idle();
  g_assert_true(g_str_has_prefix(ts_run_panel_get_error(panel), "Cancelled"));
  guint steps = n_step_lines();
  g_test_message("%u step lines when cancelled", steps);
  g_assert_cmpuint(steps, >=, 1);
  g_assert_cmpuint(steps, <, 20);
  for (guint i = 0; i < n_lines(); i++)
    g_assert_false(console_line_has_prefix(i, "Final step"));
  g_assert_true(console_line_has_prefix(0, "Step 10 : loss "));
  clear_logs();
}

static void test_corrupt_module_refused(void)
{
  g_autofree char *path = g_build_filename(tmp_dir, "corrupt.so", NULL);
  g_assert_true(g_file_set_contents(path, "this is not an ELF file\n", -1, NULL));
  const char *error = open_refused(path);
  g_assert_nonnull(strstr(error, "cannot open module '"));
  g_assert_nonnull(strstr(error, path));
  g_unlink(path);
}

static void test_wrong_abi_refused(void)
{
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, "wrong-abi.so", NULL);
  const char *error = open_refused(path);
  g_autofree char *wrong = g_strdup_printf("was built for Tracescope ABI %d, this is ABI %d",
                                            TS_ABI_VERSION + 1, TS_ABI_VERSION);
  g_assert_nonnull(strstr(error, wrong));
}

static void test_missing_symbol_refused(void)
{
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, "no-symbol.so", NULL);
  const char *error = open_refused(path);
  g_assert_nonnull(strstr(error, "is not a Tracescope module: symbol tracescope_module not found"));
  g_autofree char *missing = g_build_filename(tmp_dir, "missing.so", NULL);
  g_assert_nonnull(strstr(open_refused(missing), "no such file"));
}

static gboolean module_changed(gpointer data)
{
  return ts_window_get_module(window) != data && !ts_window_get_busy(window);
}

/* A module rebuilt on disk reloads; the selection and the inputs stay. */
static void test_reload_on_change(void)
{
  g_autofree char *path = g_build_filename(tmp_dir, "tiny.so", NULL);
  g_autofree char *src = g_build_filename(TS_TEST_MODULES_DIR, "tiny.so", NULL);
  g_autofree char *contents = NULL;
  gsize length;
  g_assert_true(g_file_get_contents(src, &contents, &length, NULL));
  g_assert_true(g_file_set_contents(path, contents, (gssize)length, NULL));
  activate("win.open-module", "s", path);
  wait_idle();
  TsLoadedModule *old = ts_window_get_module(window);
  g_assert_cmpstr(ts_loaded_module_get_source(old), ==, path);
  select_function("scale");
  run_with((const char *const[]){ "f32[2]=1,2", "2.5", NULL });
  g_autofree char *scaled = result_text();
  g_assert_cmpstr(scaled, ==, "Tensor([2.5 5. ], shape=(2,), dtype=float32)");

  g_assert_true(g_file_set_contents(path, contents, (gssize)length, NULL)); /* "rebuilt" */
  test_wait_for(module_changed, old, "the module to reload");
  TsSidebarItem *item = ts_function_list_get_selected(ts_window_get_function_list(window));
  g_assert_nonnull(item);
  g_assert_cmpstr(ts_sidebar_item_get_function_name(item), ==, "scale");
  g_auto(GStrv) args = ts_run_panel_dup_args(ts_window_get_run_panel(window), NULL);
  g_assert_cmpstrv(args, ((const char *const[]){ "f32[2]=1,2", "2.5", NULL }));
  g_assert_cmpuint(n_items(ts_sidebar_item_get_children(item)), ==, 0); /* new code, untraced */
  g_unlink(path);
}

/* The toplevel of type `type` other than the main window, or NULL (borrowed). */
static GtkWindow *find_toplevel(GType type)
{
  GListModel *toplevels = gtk_window_get_toplevels(); /* borrowed */
  for (guint i = 0; i < n_items(toplevels); i++) {
    g_autoptr(GtkWindow) w = g_list_model_get_item(toplevels, i);
    if (G_TYPE_CHECK_INSTANCE_TYPE(w, type) && gtk_widget_get_visible(GTK_WIDGET(w)))
      return w;
  }
  return NULL;
}

static void close_toplevel(GType type)
{
  GtkWindow *w = find_toplevel(type);
  g_assert_nonnull(w);
  gtk_window_destroy(w);
  wait_idle();
}

static gboolean count_frame(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  return ++*(int *)data < 2 ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static gboolean two_frames(gpointer data)
{
  return *(int *)data >= 2;
}

static gboolean transition_running(GtkWidget *widget)
{
  if (GTK_IS_STACK(widget) && gtk_stack_get_transition_running(GTK_STACK(widget)))
    return TRUE;
  for (GtkWidget *c = gtk_widget_get_first_child(widget); c; c = gtk_widget_get_next_sibling(c))
    if (transition_running(c))
      return TRUE;
  return FALSE;
}

static gboolean no_transition(gpointer data)
{
  return !transition_running(data);
}

/* Every key TsGraphView binds is in the shortcuts window. */
static void collect_accels(GtkWidget *widget, GHashTable *accels)
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

static void assert_shortcuts_list_graph_keys(GtkWindow *shortcuts)
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
static void assert_shortcuts_list_timeline_keys(GtkWindow *shortcuts)
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
}

/* Preferences, About and the shortcuts window (with the graph's and the
 * Timeline's keys) open; the style follows the setting. */
static void test_dialogs_and_style(void)
{
  g_action_group_activate_action(G_ACTION_GROUP(app), "preferences", NULL);
  close_toplevel(ADW_TYPE_PREFERENCES_WINDOW);
  g_action_group_activate_action(G_ACTION_GROUP(app), "about", NULL);
  close_toplevel(ADW_TYPE_ABOUT_WINDOW);
  activate("win.show-help-overlay", NULL);
  GtkWindow *shortcuts = find_toplevel(GTK_TYPE_SHORTCUTS_WINDOW);
  assert_shortcuts_list_graph_keys(shortcuts);
  assert_shortcuts_list_timeline_keys(shortcuts);
  if (g_getenv("TS_SHORTCUTS_SCREENSHOT")) { /* the graph's page (or TS_SHORTCUTS_SECTION's), for the README */
    g_object_set(shortcuts, "section-name", g_getenv("TS_SHORTCUTS_SECTION") ? g_getenv("TS_SHORTCUTS_SECTION") : "graph", NULL);
    test_wait_for(no_transition, shortcuts, "the shortcuts window to switch pages");
    int frames = 0;
    gtk_widget_add_tick_callback(GTK_WIDGET(shortcuts), count_frame, &frames, NULL);
    test_wait_for(two_frames, &frames, "the shortcuts window to draw");
    g_assert_true(ts_screenshot_save(GTK_WIDGET(shortcuts), g_getenv("TS_SHORTCUTS_SCREENSHOT"), NULL));
  }
  close_toplevel(GTK_TYPE_SHORTCUTS_WINDOW);

  GSettings *settings = ts_application_get_settings(app);
  AdwStyleManager *style = adw_style_manager_get_default();
  g_settings_set_string(settings, "theme", "dark");
  g_assert_cmpint(adw_style_manager_get_color_scheme(style), ==, ADW_COLOR_SCHEME_FORCE_DARK);
  g_settings_set_string(settings, "theme", "system");
  g_assert_cmpint(adw_style_manager_get_color_scheme(style), ==, ADW_COLOR_SCHEME_DEFAULT);
}

static void test_screenshot(void)
{
  int frames = 0;
  gtk_widget_add_tick_callback(GTK_WIDGET(window), count_frame, &frames, NULL);
  gtk_widget_queue_draw(GTK_WIDGET(window));
  test_wait_for(two_frames, &frames, "the window to draw");
  g_assert_true(gtk_widget_get_mapped(GTK_WIDGET(window)));
  g_autofree char *path = g_build_filename(tmp_dir, "window.png", NULL);
  g_autoptr(GError) error = NULL;
  gboolean saved = ts_screenshot_save(GTK_WIDGET(window), path, &error);
  g_assert_no_error(error);
  g_assert_true(saved);
  g_autoptr(GdkTexture) texture = gdk_texture_new_from_filename(path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(gdk_texture_get_width(texture), ==, gtk_widget_get_width(GTK_WIDGET(window)));
  g_unlink(path);
}


/* ---- profiling ------------------------------------------------------------------- */

static void save_test_screenshot(GtkWidget *widget, const char *name);
static void wait_drawn(GtkWidget *widget);

static gboolean selected_node_is(gpointer data)
{
  TsGraphView *view = TS_GRAPH_VIEW(ts_graph_pane_get_view(ts_window_get_graph_pane(window)));
  int item = ts_graph_view_get_selected_item(view);
  ts_view_model *model = ts_graph_view_get_model(view);
  return item >= 0 && model && ts_view_item_node(model, item) == data;
}

/* The widget under widget named name (gtk_widget_set_name), or NULL. */
static GtkWidget *find_named(GtkWidget *widget, const char *name)
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

static char *device_state(void)
{
  g_autoptr(GVariant) state = g_action_group_get_action_state(G_ACTION_GROUP(window), "device");
  return g_variant_dup_string(state, NULL);
}

static int cmp_strings(const void *a, const void *b)
{
  return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

/* The devices of the last profile's op rows, joined; the device of op's
 * row in *op_device (borrowed); and whether the session has a stream track. */
static char *profiled_devices(const char *op, const char **op_device, gboolean *stream)
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

/* TRACESCOPE_DEVICES=sim (the tests' environment): the device menu lists
 * the worker's devices, SIM:0 among them, says why there is no CUDA
 * device, and choosing SIM:0 runs the calls there: the products say SIM:0
 * in the profile (the variables' reads stay on the CPU, where the
 * variables live), its kernels have a stream track, the graph's device
 * colouring has SIM:0.  Back on the CPU, every op says CPU. */
static void test_device_selector(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  const char *note = NULL;
  GPtrArray *devices = ts_engine_worker_get_devices(ts_window_get_engine(window), &note);
  g_assert_nonnull(devices);
  g_assert_cmpuint(devices->len, >=, 2);
  g_assert_cmpstr(((TsWorkerDevice *)g_ptr_array_index(devices, 0))->name, ==, "CPU");
  GtkWidget *sim = find_named(GTK_WIDGET(window), "SIM:0");
  g_assert_true(GTK_IS_CHECK_BUTTON(sim));
  g_assert_nonnull(find_named(GTK_WIDGET(window), "CPU"));
  /* the menu lists memory: "SIM:0 · 8.0 GiB" */
  GtkWidget *title = find_widget(sim, GTK_TYPE_LABEL);
  g_assert_true(g_str_has_prefix(gtk_label_get_label(GTK_LABEL(title)), "SIM:0 · "));
  g_assert_nonnull(strstr(gtk_label_get_label(GTK_LABEL(title)), "iB"));
  gboolean cuda = FALSE;
  for (guint i = 0; i < devices->len; i++)
    cuda |= g_str_has_prefix(((TsWorkerDevice *)g_ptr_array_index(devices, i))->name, "CUDA:");
  GtkWidget *missing = find_named(GTK_WIDGET(window), "missing-devices");
  if (cuda) {
    g_assert_null(missing);
  } else { /* "No CUDA device: no device (...)" or "...: not built (...)" */
    g_assert_nonnull(missing);
    g_assert_true(g_str_has_prefix(gtk_label_get_label(GTK_LABEL(missing)), "No CUDA device: "));
    g_assert_cmpstr(gtk_widget_get_tooltip_text(missing), ==, note);
  }

  if (g_getenv("TS_TEST_SCREENSHOTS")) {
    GtkWidget *menu = gtk_widget_get_ancestor(sim, GTK_TYPE_POPOVER);
    gtk_popover_popup(GTK_POPOVER(menu));
    wait_drawn(menu);
    save_test_screenshot(menu, "device-menu.png");
    gtk_popover_popdown(GTK_POPOVER(menu));
  }
  g_assert_true(gtk_widget_activate(sim));
  g_autofree char *chosen = device_state();
  g_assert_cmpstr(chosen, ==, "SIM:0");
  g_assert_cmpstr(ts_engine_worker_get_device(ts_window_get_engine(window)), ==, "SIM:0");
  /* a device the worker lacks is refused */
  activate("win.device", "s", "CUDA:7");
  g_autofree char *still = device_state();
  g_assert_cmpstr(still, ==, "SIM:0");

  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(TRUE));
  select_function("sequential_model");
  activate("win.mode", "s", "graph");
  run_with((const char *const[]){ "f32[4,28,28]:uniform", NULL });
  g_autofree char *result = result_text();
  g_assert_null(strstr(result, "rror"));
  gboolean stream;
  const char *matmul;
  g_autofree char *on_sim = profiled_devices("_FusedMatMul", &matmul, &stream);
  g_assert_cmpstr(matmul, ==, "SIM:0");
  g_assert_true(g_str_equal(on_sim, "CPU,SIM:0") || g_str_equal(on_sim, "SIM:0"));
  g_assert_true(stream);
  /* the graph's device colouring knows where its nodes ran */
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(ts_window_get_graph_pane(window));
  ts_render_values *values = ts_graph_pane_get_compute_times(ts_window_get_graph_pane(window));
  g_assert_nonnull(cf);
  g_assert_nonnull(values);
  int on_device = 0;
  for (int i = 0; i < ts_graph_n_nodes(cf->graph); i++) {
    const ts_node *n = ts_graph_node(cf->graph, i);
    const char *category = ts_render_values_category(values, n);
    if (ts_node_op(n) == TS_OP_MATMUL)
      g_assert_cmpstr(category, ==, "SIM:0");
    on_device += g_strcmp0(category, "SIM:0") == 0;
  }
  g_assert_cmpint(on_device, >, 0);
  if (g_getenv("TS_TEST_SCREENSHOTS")) { /* the Run's Timeline: its trace and plan, SIM:0's stream */
    TsProfilerPanel *panel = ts_window_get_profiler_panel(window);
    activate("win.show-panel", "s", "profiler");
    ts_profiler_panel_show_page(panel, "timeline");
    wait_drawn(GTK_WIDGET(window));
    save_test_screenshot(GTK_WIDGET(window), "device-timeline.png");
    ts_profiler_panel_show_page(panel, "stats");
  }

  activate("win.device", "s", "CPU");
  run_with((const char *const[]){ "f32[4,28,28]:uniform", NULL });
  g_autofree char *on_cpu = profiled_devices("_FusedMatMul", &matmul, &stream);
  g_assert_cmpstr(on_cpu, ==, "CPU");
  g_assert_false(stream);
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(FALSE));
}

/* Profile on, a Run of sequential_model: the Profiler panel's table counts
 * what ran, groups four ways, selects graph nodes both ways; the graph's
 * compute-time colouring has the times; Compare fills the compare view. */
static char *details_text(void);

static void test_profiler_panel(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(TRUE));
  g_assert_true(g_settings_get_boolean(ts_application_get_settings(app), "profile"));
  TsProfilerPanel *panel = ts_window_get_profiler_panel(window);
  select_function("sequential_model");
  activate("win.mode", "s", "graph");
  run_with((const char *const[]){ "f32[4,28,28]:uniform", NULL });
  const tsp_session *s = ts_profiler_panel_get_session(panel);
  g_assert_nonnull(s);

  /* by op: each row's count is the number of ops of that type that ran */
  ts_profiler_panel_set_group_by(panel, TSP_BY_OP);
  wait_idle(); /* the table is made on a thread */
  guint n = ts_profiler_panel_get_n_rows(panel);
  g_assert_cmpuint(n, >, 1);
  g_autoptr(GHashTable) ran = g_hash_table_new(g_str_hash, g_str_equal);
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));)
      if (e->kind == TSP_EVENT_OP) {
        const char *op = tsp_event_op_name(s, e);
        g_hash_table_insert(ran, (gpointer)op, GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(ran, op)) + 1));
      }
  }
  gboolean matmul = FALSE;
  for (guint i = 0; i < n; i++) {
    const tsp_stat *row = ts_profiler_panel_get_row(panel, i);
    g_assert_cmpuint(row->count, ==, GPOINTER_TO_UINT(g_hash_table_lookup(ran, row->key)));
    matmul = matmul || strstr(row->key, "MatMul") != NULL; /* MatMul, or _FusedMatMul after the passes */
    if (i > 0) /* largest total first */
      g_assert_cmpfloat(ts_profiler_panel_get_row(panel, i - 1)->total_ns, >=, row->total_ns);
  }
  g_assert_true(matmul);
  g_assert_cmpuint(n, ==, g_hash_table_size(ran));
  ts_profiler_panel_set_filter_text(panel, "matmul");
  g_assert_cmpuint(ts_profiler_panel_get_n_rows(panel), >=, 1);
  for (guint i = 0; i < ts_profiler_panel_get_n_rows(panel); i++)
    g_assert_nonnull(strstr(ts_profiler_panel_get_row(panel, i)->key, "MatMul"));
  ts_profiler_panel_set_filter_text(panel, NULL);

  /* the other groupings */
  ts_profiler_panel_set_group_by(panel, TSP_BY_SCOPE);
  wait_idle();
  g_assert_cmpint(ts_profiler_panel_get_group_by(panel), ==, TSP_BY_SCOPE);
  g_assert_cmpuint(ts_profiler_panel_get_n_rows(panel), >, 1);
  ts_profiler_panel_set_group_by(panel, TSP_BY_LINE);
  wait_idle();
  g_assert_cmpuint(ts_profiler_panel_get_n_rows(panel), >, 0);
  ts_profiler_panel_set_group_by(panel, TSP_BY_NODE);
  wait_idle();
  n = ts_profiler_panel_get_n_rows(panel);
  g_assert_cmpuint(n, >, 2);

  /* a node's row selects the node in the graph */
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(ts_window_get_graph_pane(window));
  g_assert_nonnull(cf);
  guint row = n;
  const ts_node *node = NULL;
  for (guint i = 0; i < n && !node; i++)
    if ((node = ts_profile_find_node(cf->graph, ts_profiler_panel_get_row(panel, i)->key)))
      row = i;
  g_assert_nonnull(node);
  ts_profiler_panel_select_row(panel, row);
  test_wait_for(selected_node_is, (gpointer)node, "the row's node to be selected in the graph");

  /* a node selected in the graph: the table keeps its row */
  TsGraphView *view = TS_GRAPH_VIEW(ts_graph_pane_get_view(ts_window_get_graph_pane(window)));
  ts_graph_view_select_item(view, -1);
  g_assert_cmpuint(ts_profiler_panel_get_n_rows(panel), ==, n);
  ts_graph_view_reveal(view, node);
  test_wait_for(selected_node_is, (gpointer)node, "the node to be selected");
  g_assert_cmpuint(ts_profiler_panel_get_n_rows(panel), ==, 1);
  g_autofree char *details = details_text(); /* the node details have its time per run */
  g_assert_null(strstr(details, "not profiled yet"));
  g_assert_cmpstr(ts_profiler_panel_get_row(panel, 0)->key, ==, ts_node_name(node));
  ts_graph_view_select_item(view, -1);
  g_assert_cmpuint(ts_profiler_panel_get_n_rows(panel), ==, n);

  /* the timeline shows the Run's session; a span selects its node in the
   * graph, a range makes the table of that range */
  TsTimeline *timeline = ts_profiler_panel_get_timeline(panel);
  g_assert_true(ts_timeline_get_session(timeline) == s);
  /* the Run traced the function: its trace, passes and plan have a track */
  int phases = -1;
  for (int t = 0; t < tsp_session_n_threads(s); t++)
    if (g_str_equal(tsp_session_thread(s, t)->name, TSP_PHASE_TRACK))
      phases = t;
  g_assert_cmpint(phases, >=, 0);
  g_assert_cmpint(tsp_lod_n_depths(ts_timeline_get_lod(timeline), phases), >=, 3);
  /* every track has its thread's name (the worker's "calls", the pool's
   * "ts-pool-N"), none a bare "thread 4711" */
  gboolean calls_track = FALSE;
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    const char *track = tsp_session_thread(s, t)->name;
    g_assert_false(g_str_has_prefix(track, "thread "));
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));)
      calls_track |= e->kind == TSP_EVENT_CALL && g_str_equal(track, "calls");
  }
  g_assert_true(calls_track);
  GArray *traced = tsp_lod_search(ts_timeline_get_lod(timeline), "sequential_model");
  gboolean trace_span = FALSE;
  for (guint i = 0; i < traced->len; i++) {
    const tsp_event *e = g_array_index(traced, tsp_lod_hit, i).event;
    trace_span |= e->kind == TSP_EVENT_PHASE && e->op == TS_PHASE_TRACE;
  }
  g_array_unref(traced);
  g_assert_true(trace_span);
  const ts_node *span_node = NULL;
  for (int t = 0; t < tsp_session_n_threads(s) && !span_node; t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; !span_node && (e = tsp_iter_next(&it));) {
      const tsp_node_info *info = e->kind == TSP_EVENT_OP ? tsp_session_node(s, e->node) : NULL;
      if (info && (span_node = ts_profile_find_node(cf->graph, info->name)))
        g_signal_emit_by_name(timeline, "span-selected", (gpointer)e, (guint)e->node);
    }
  }
  g_assert_nonnull(span_node);
  test_wait_for(selected_node_is, (gpointer)span_node, "the span's node to be selected in the graph");
  ts_graph_view_select_item(view, -1);
  uint64_t first, last;
  tsp_lod_range(ts_timeline_get_lod(timeline), &first, &last);
  uint64_t middle = first + (last - first) / 2;
  ts_profiler_panel_set_group_by(panel, TSP_BY_OP);
  g_signal_emit_by_name(timeline, "range-selected", (guint64)first, (guint64)middle);
  wait_idle();
  tsp_stats *in_range = tsp_stats_compute(s, TSP_BY_OP, &(tsp_filter){ TSP_MODE_ALL, first, middle });
  g_assert_cmpuint(ts_profiler_panel_get_n_rows(panel), ==, (guint)in_range->n);
  guint64 counted = 0;
  for (guint i = 0; i < ts_profiler_panel_get_n_rows(panel); i++)
    counted += ts_profiler_panel_get_row(panel, i)->count;
  g_assert_cmpuint(counted, ==, in_range->count);
  tsp_stats *all = tsp_stats_compute(s, TSP_BY_OP, &TSP_FILTER_ALL);
  g_assert_cmpuint(in_range->count, <, all->count);
  tsp_stats_free(all);
  tsp_stats_free(in_range);
  g_signal_emit_by_name(timeline, "range-selected", (guint64)0, (guint64)0);
  wait_idle();

  /* compute-time colouring: the node's time and its tooltip note */
  g_settings_set_string(ts_application_get_settings(app), "colour-mode", "compute-time");
  g_assert_cmpint(ts_graph_view_get_colouring(view), ==, TS_RENDER_COLOUR_COMPUTE_TIME);
  ts_render_values *times = ts_graph_pane_get_compute_times(ts_window_get_graph_pane(window));
  g_assert_nonnull(times);
  double ms;
  g_assert_true(ts_render_values_lookup(times, node, &ms));
  g_assert_cmpfloat(ms, >, 0);
  g_assert_nonnull(strstr(ts_render_values_note(times, node), "total"));
  g_settings_set_string(ts_application_get_settings(app), "colour-mode", "op-type");

  /* eager against graph */
  activate("win.profile-compare", NULL);
  wait_idle();
  const tsp_compare *c = ts_profiler_panel_get_compare(panel);
  g_assert_nonnull(c);
  g_assert_cmpint(c->n_calls, ==, (int)ts_profiler_panel_get_compare_calls(panel));
  g_assert_cmpstr(c->function, ==, "sequential_model");
  g_assert_cmpfloat(c->eager_call_ns, >, 0);
  g_assert_cmpfloat(c->graph_call_ns, >, 0);
  g_assert_cmpuint(ts_profiler_panel_get_n_compare_rows(panel), ==, (guint)c->n_rows);
  gboolean both = FALSE;
  for (int i = 0; i < c->n_rows; i++)
    both = both || (!c->rows[i].only && c->rows[i].eager_ns > 0 && c->rows[i].graph_ns > 0);
  g_assert_true(both);
  activate("win.show-panel", "s", "profiler");
  wait_drawn(GTK_WIDGET(window));
  save_test_screenshot(GTK_WIDGET(window), "profiler-compare.png");

  activate("win.profile", NULL); /* what the toggle button does: off again */
  g_assert_false(g_settings_get_boolean(ts_application_get_settings(app), "profile"));
  g_assert_false(ts_engine_worker_get_profiling(ts_window_get_engine(window)));

  /* a recording saved as a Chrome trace (as tracescope-cli profile --out
   * writes it) opens in the timeline; a file that is not one says why */
  const tsp_session *run = ts_profiler_panel_get_session(panel);
  g_assert_nonnull(run);
  uint64_t n_events = tsp_session_n_events(run);
  g_autofree char *trace = g_build_filename(tmp_dir, "run.json.gz", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(tsp_chrome_export(run, trace, &error));
  g_assert_no_error(error);
  activate("win.open-trace-from", "s", trace);
  wait_idle();
  g_assert_null(ts_window_get_error_dialog(window));
  const tsp_session *opened = ts_profiler_panel_get_session(panel);
  g_assert_true(opened != run);
  g_assert_cmpuint(tsp_session_n_events(opened), ==, n_events);
  g_assert_true(ts_timeline_get_session(ts_profiler_panel_get_timeline(panel)) == opened);
  /* every recording is kept: the Run before the file can be shown again, and
   * the Diff page compares the file with it (the same ops: no change) */
  guint n_runs = ts_profiler_panel_get_n_runs(panel);
  g_assert_cmpuint(n_runs, >=, 2);
  g_assert_cmpuint(ts_profiler_panel_get_run(panel), ==, n_runs - 1);
  const tsp_diff *diff = ts_diff_table_get_diff(ts_profiler_panel_get_diff_table(panel));
  g_assert_nonnull(diff);
  g_assert_cmpint(diff->n, >, 0);
  for (int i = 0; i < diff->n; i++) {
    g_assert_null(diff->rows[i].only);
    g_assert_cmpfloat(diff->rows[i].ratio, ==, 1);
  }
  ts_profiler_panel_select_run(panel, n_runs - 2);
  wait_idle();
  g_assert_true(ts_profiler_panel_get_session(panel) == run);
  g_assert_true(ts_timeline_get_session(ts_profiler_panel_get_timeline(panel)) == run);
  ts_profiler_panel_select_run(panel, n_runs - 1);
  wait_idle();
  g_assert_true(ts_profiler_panel_get_session(panel) == opened);
  g_autofree char *bad = g_build_filename(tmp_dir, "bad.json", NULL);
  g_assert_true(g_file_set_contents(bad, "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": \"soon\"}]}", -1, NULL));
  activate("win.open-trace-from", "s", bad);
  wait_idle();
  GtkWindow *dialog = ts_window_get_error_dialog(window);
  g_assert_nonnull(dialog);
  g_assert_nonnull(strstr(ts_window_get_error(window), "bad.json"));
  gtk_window_destroy(dialog);
  wait_idle();
  g_unlink(bad);
  g_unlink(trace);
}

static gboolean import_reported(gpointer data)
{
  return ts_window_get_import_progress(window) >= 0.5;
}

/* Writes an executable script to stand in for tracescope-import. */
static char *fake_importer(const char *name, const char *body)
{
  char *path = g_build_filename(tmp_dir, name, NULL);
  g_autofree char *text = g_strdup_printf("#!/bin/sh\n%s\n", body);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  g_assert_cmpint(g_chmod(path, 0755), ==, 0);
  return path;
}

/* A trace is read in a process of its own: what the file does to it (a
 * crash, a limit) is an error dialog, never the app's end; its progress
 * shows, and Cancel ends it. */
static void test_trace_import_process(void)
{
  TsProfilerPanel *panel = ts_window_get_profiler_panel(window);
  const tsp_session *before = ts_profiler_panel_get_session(panel);
  g_autofree char *trace = g_build_filename(tmp_dir, "small.json", NULL);
  g_assert_true(g_file_set_contents(trace, "[{\"ph\":\"X\",\"name\":\"Add\",\"tid\":1,\"ts\":1,\"dur\":1}]", -1,
                                    NULL));
  /* the importer crashes */
  g_autofree char *crash = fake_importer("crash.sh", "echo 'about to fall over' >&2; kill -SEGV $$");
  g_setenv("TRACESCOPE_IMPORTER", crash, TRUE);
  activate("win.open-trace-from", "s", trace);
  wait_idle();
  GtkWindow *dialog = ts_window_get_error_dialog(window);
  g_assert_nonnull(dialog);
  const char *error = ts_window_get_error(window);
  g_assert_nonnull(strstr(error, "small.json"));
  g_assert_nonnull(strstr(error, "killed by signal 11"));
  g_assert_nonnull(strstr(error, "about to fall over"));
  gtk_window_destroy(dialog);
  wait_idle();
  g_assert_true(ts_profiler_panel_get_session(panel) == before);
  /* it reports progress, then hangs: Cancel ends it */
  g_autofree char *hang = fake_importer("hang.sh", "echo 'progress 0.50' >&2; exec sleep 600");
  g_setenv("TRACESCOPE_IMPORTER", hang, TRUE);
  activate("win.open-trace-from", "s", trace);
  g_assert_true(ts_window_get_busy(window));
  test_wait_for(import_reported, NULL, "the importer's progress");
  g_assert_cmpfloat(ts_window_get_import_progress(window), ==, 0.5);
  activate("win.cancel-import", NULL);
  wait_idle();
  g_assert_null(ts_window_get_error_dialog(window));
  g_assert_cmpfloat(ts_window_get_import_progress(window), ==, -1);
  g_assert_true(ts_profiler_panel_get_session(panel) == before);
  g_unsetenv("TRACESCOPE_IMPORTER");
  /* the real one: a file over a limit is refused by name; a good one reads */
  GString *deep = g_string_new("[");
  for (int i = 0; i < 100000; i++)
    g_string_append_c(deep, '[');
  g_autofree char *bad = g_build_filename(tmp_dir, "deep.json", NULL);
  g_assert_true(g_file_set_contents(bad, deep->str, (gssize)deep->len, NULL));
  g_string_free(deep, TRUE);
  activate("win.open-trace-from", "s", bad);
  wait_idle();
  dialog = ts_window_get_error_dialog(window);
  g_assert_nonnull(dialog);
  g_assert_nonnull(strstr(ts_window_get_error(window), "deep.json"));
  g_assert_nonnull(strstr(ts_window_get_error(window), "max_depth"));
  gtk_window_destroy(dialog);
  wait_idle();
  activate("win.open-trace-from", "s", trace);
  wait_idle();
  g_assert_null(ts_window_get_error_dialog(window));
  const tsp_session *opened = ts_profiler_panel_get_session(panel);
  g_assert_nonnull(opened);
  g_assert_cmpuint(tsp_session_n_events(opened), ==, 1);
  g_unlink(bad);
  g_unlink(trace);
  g_unlink(crash);
  g_unlink(hang);
}

static gboolean file_exists(gpointer data)
{
  return g_file_test(data, G_FILE_TEST_EXISTS);
}

/* Pixels of a colour (not grey) inside rect of the ARGB32 texture: the op
 * colours of a drawn graph; the "Not Traced Yet" page has none. */
static int coloured_pixels(GdkTexture *texture, const graphene_rect_t *rect)
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

static gboolean graph_drawn(gpointer data)
{
  return ts_window_get_graph_drawn(data);
}

/* `tracescope --screenshot` with a single --call: the script waits until
 * the graph is laid out and drawn, so the PNG shows the graph, never the
 * "Not Traced Yet" page.  Runs the script of a second application, in
 * this process, so that the window it shot can be looked at. */
static void test_screenshot_waits_for_graph(void)
{
  g_autofree char *path = g_build_filename(tmp_dir, "script.png", NULL);
  /* options for this run only: the saved settings stay as they were */
  char *args[] = { "tracescope", "--module", (char *)seeds_path(), "--function", SIDE_EFFECT,
                   "--call", "--arg", "2", "--size", "1000x700", "--colour", "compute-time", "--profile",
                   "--screenshot", path, NULL };
  GSettings *settings = ts_application_get_settings(app);
  g_autofree char *colour_before = g_settings_get_string(settings, "colour-mode");
  gboolean profile_before = g_settings_get_boolean(settings, "profile");
  g_assert_cmpstr(colour_before, !=, "compute-time");
  int argc = G_N_ELEMENTS(args) - 1;
  char **argv = args;
  g_autoptr(GError) error = NULL;
  TsStartup *startup = ts_startup_parse(&argc, &argv, &error);
  g_assert_no_error(error);
  TsApplication *shot_app = ts_application_new(startup);
  g_assert_true(g_application_register(G_APPLICATION(shot_app), NULL, NULL));
  g_application_activate(G_APPLICATION(shot_app));
  test_wait_for(file_exists, path, "the screenshot");
  GList *windows = gtk_application_get_windows(GTK_APPLICATION(shot_app));
  g_assert_nonnull(windows);
  TsWindow *shot = TS_WINDOW(windows->data);
  /* what the screenshot waited on */
  TsGraphPane *pane = ts_window_get_graph_pane(shot);
  g_assert_false(ts_window_get_busy(shot));
  g_assert_nonnull(ts_graph_pane_get_concrete(pane));
  g_assert_true(ts_graph_pane_get_drawn(pane));
  g_assert_true(ts_window_get_graph_drawn(shot));
  /* the options took effect in the window, not in the settings the next launch reads */
  g_assert_cmpint(ts_graph_view_get_colouring(TS_GRAPH_VIEW(ts_graph_pane_get_view(pane))), ==,
                  TS_RENDER_COLOUR_COMPUTE_TIME);
  g_autoptr(GVariant) profiling = g_action_group_get_action_state(G_ACTION_GROUP(shot), "profile");
  g_assert_true(g_variant_get_boolean(profiling));
  g_autofree char *colour_after = g_settings_get_string(settings, "colour-mode");
  g_assert_cmpstr(colour_after, ==, colour_before);
  g_assert_cmpint(g_settings_get_boolean(settings, "profile"), ==, profile_before);
  /* and what the PNG shows where the graph pane is */
  g_autoptr(GdkTexture) texture = gdk_texture_new_from_filename(path, &error);
  g_assert_no_error(error);
  graphene_rect_t bounds;
  g_assert_true(gtk_widget_compute_bounds(GTK_WIDGET(pane), GTK_WIDGET(shot), &bounds));
  int coloured = coloured_pixels(texture, &bounds);
  if (coloured < 500)
    g_error("the screenshot's graph pane has %d coloured pixels: not a drawn graph", coloured);

  /* the measure tells them apart: the page of a function not traced has none */
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(shot), "win.select-function", "s", "simple_relu"));
  g_assert_null(ts_graph_pane_get_concrete(pane));
  test_wait_for(graph_drawn, shot, "the cross-fade to the status page");
  int frames = 0;
  gtk_widget_add_tick_callback(GTK_WIDGET(shot), count_frame, &frames, NULL);
  gtk_widget_queue_draw(GTK_WIDGET(shot));
  test_wait_for(two_frames, &frames, "the window to draw");
  g_assert_true(ts_screenshot_save(GTK_WIDGET(shot), path, &error));
  g_assert_no_error(error);
  g_autoptr(GdkTexture) placeholder = gdk_texture_new_from_filename(path, &error);
  g_assert_no_error(error);
  g_assert_true(gtk_widget_compute_bounds(GTK_WIDGET(pane), GTK_WIDGET(shot), &bounds));
  g_assert_cmpint(coloured_pixels(placeholder, &bounds), <, 50);
  g_object_add_weak_pointer(G_OBJECT(shot), (gpointer *)&shot);
  gtk_window_destroy(GTK_WINDOW(shot));
  while (shot)
    g_main_context_iteration(NULL, TRUE);
  g_object_unref(shot_app);
  g_unlink(path);
}

static gboolean find_label(GtkWidget *widget, const char *text);

static gboolean diff_shown(gpointer data)
{
  return ts_diff_table_get_diff(data) != NULL;
}

/* `tracescope --screenshot X.png trace.json.gz`: another tool's trace (PyTorch's
 * profiler's) with no module.  The script waits for the file, not for a graph
 * there is none of, and the window gives the profiler's timeline all its room:
 * no empty function list, graph page or argument editor. */
static void test_screenshot_trace(void)
{
  g_autofree char *path = g_build_filename(tmp_dir, "trace.png", NULL);
  g_autofree char *trace = g_test_build_filename(G_TEST_DIST, "data", "traces", "torch-mlp.json.gz", NULL);
  char *args[] = { "tracescope", "--size", "1280x800", "--screenshot", path, NULL };
  int argc = G_N_ELEMENTS(args) - 1;
  char **argv = args;
  g_autoptr(GError) error = NULL;
  TsStartup *startup = ts_startup_parse(&argc, &argv, &error);
  g_assert_no_error(error);
  TsApplication *shot_app = ts_application_new(startup);
  g_assert_true(g_application_register(G_APPLICATION(shot_app), NULL, NULL));
  g_autoptr(GFile) file = g_file_new_for_path(trace);
  g_application_open(G_APPLICATION(shot_app), &file, 1, "");
  test_wait_for(file_exists, path, "the screenshot");
  GList *windows = gtk_application_get_windows(GTK_APPLICATION(shot_app));
  g_assert_nonnull(windows);
  TsWindow *shot = TS_WINDOW(windows->data);
  g_assert_null(ts_window_get_module(shot));
  g_assert_null(ts_window_get_error_dialog(shot));
  TsProfilerPanel *panel = ts_window_get_profiler_panel(shot);
  const tsp_session *session = ts_profiler_panel_get_session(panel);
  g_assert_nonnull(session);
  g_assert_cmpuint(tsp_session_n_events(session), ==, 354);
  g_assert_false(gtk_widget_is_visible(GTK_WIDGET(ts_window_get_graph_pane(shot))));
  g_assert_false(gtk_widget_is_visible(GTK_WIDGET(ts_window_get_function_list(shot))));
  g_assert_true(find_label(GTK_WIDGET(shot), "torch-mlp.json.gz")); /* the window's title */
  GtkWidget *timeline = GTK_WIDGET(ts_profiler_panel_get_timeline(panel));
  g_assert_true(gtk_widget_is_visible(timeline));
  graphene_rect_t bounds;
  g_assert_true(gtk_widget_compute_bounds(timeline, GTK_WIDGET(shot), &bounds));
  if (bounds.size.width < 0.9 * gtk_widget_get_width(GTK_WIDGET(shot)) ||
      bounds.size.height < 0.6 * gtk_widget_get_height(GTK_WIDGET(shot)))
    g_error("the timeline has %.0fx%.0f of a %dx%d window", bounds.size.width, bounds.size.height,
            gtk_widget_get_width(GTK_WIDGET(shot)), gtk_widget_get_height(GTK_WIDGET(shot)));
  g_autoptr(GdkTexture) texture = gdk_texture_new_from_filename(path, &error);
  g_assert_no_error(error);
  int coloured = coloured_pixels(texture, &bounds);
  if (coloured < 2000)
    g_error("the screenshot's timeline has %d coloured pixels: not a drawn trace", coloured);

  ts_profiler_panel_show_page(panel, "stats");
  g_assert_false(ts_profiler_panel_get_busy(panel));
  g_assert_cmpuint(ts_profiler_panel_get_n_rows(panel), ==, 45);
  wait_drawn(GTK_WIDGET(shot));
  save_test_screenshot(GTK_WIDGET(shot), "trace-op-stats.png");

  /* the Call Tree: the heaviest path open, self times as torch's (the test's
   * fixture: the training step's optimizer.step holds SGD's 52 µs of self time) */
  ts_profiler_panel_show_page(panel, "calltree");
  TsCallTree *tree_view = ts_profiler_panel_get_call_tree(panel);
  const tsp_tree *tree = ts_call_tree_get_tree(tree_view);
  g_assert_nonnull(tree);
  guint rows = ts_call_tree_get_n_rows(tree_view);
  g_assert_cmpuint(rows, >, 3); /* the roots, and the largest one's children open */
  const tsp_tree_node *top = &tree->nodes[ts_call_tree_get_node(tree_view, 0)];
  g_assert_cmpint(top->depth, ==, 0);
  g_assert_cmpint(tree->nodes[ts_call_tree_get_node(tree_view, 1)].parent, ==, ts_call_tree_get_node(tree_view, 0));
  double self_sum = 0;
  for (int i = 0; i < tree->n; i++)
    self_sum += tree->nodes[i].self_ns;
  g_assert_cmpfloat(fabs(self_sum - 476000), <, 1); /* tracescope-cli stats: 0.476 ms in ops */
  for (int i = tree->first_root; i >= 0; i = tree->nodes[i].next_sibling)
    if (strcmp(tree->nodes[i].name, "Optimizer.step#SGD.step") == 0)
      g_assert_cmpfloat(tree->nodes[i].self_ns, ==, 52000);
  wait_drawn(GTK_WIDGET(shot));
  save_test_screenshot(GTK_WIDGET(shot), "trace-call-tree.png");

  /* against a baseline where aten::mm took 1 µs a run (torch's took 2 µs, the median) */
  g_autofree char *baseline = g_build_filename(tmp_dir, "baseline.json", NULL);
  GString *json = g_string_new("[");
  for (int i = 0; i < 9; i++)
    g_string_append_printf(json, "%s{\"ph\":\"X\",\"name\":\"aten::mm\",\"tid\":1,\"ts\":%d,\"dur\":1}",
                           i ? "," : "", 10 * i);
  g_string_append(json, ",{\"ph\":\"X\",\"name\":\"gone\",\"tid\":1,\"ts\":100,\"dur\":1}]");
  g_assert_true(g_file_set_contents(baseline, json->str, (gssize)json->len, NULL));
  g_string_free(json, TRUE);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(shot), "win.compare-trace-from", "s", baseline));
  TsDiffTable *diff_view = ts_profiler_panel_get_diff_table(panel);
  test_wait_for(diff_shown, diff_view, "the diff against the baseline");
  const tsp_diff *diff = ts_diff_table_get_diff(diff_view);
  g_assert_cmpint(diff->n, ==, 45 + 1); /* torch's ops and the baseline's own */
  gboolean mm = FALSE, gone = FALSE;
  for (int i = 0; i < diff->n; i++) {
    const tsp_diff_row *r = &diff->rows[i];
    if (strcmp(r->key, "aten::mm") == 0) {
      g_assert_cmpuint(r->count[0], ==, 9);
      g_assert_cmpuint(r->count[1], ==, 9);
      g_assert_cmpfloat(r->ratio, ==, 2); /* slower in the recording shown */
      mm = TRUE;
    } else if (strcmp(r->key, "gone") == 0) {
      g_assert_cmpstr(r->only, ==, "only in A");
      gone = TRUE;
    } else {
      g_assert_cmpstr(r->only, ==, "only in B");
    }
  }
  g_assert_true(mm && gone);
  wait_drawn(GTK_WIDGET(shot));
  save_test_screenshot(GTK_WIDGET(shot), "trace-diff.png");
  g_unlink(baseline);
  g_object_add_weak_pointer(G_OBJECT(shot), (gpointer *)&shot);
  gtk_window_destroy(GTK_WINDOW(shot));
  while (shot)
    g_main_context_iteration(NULL, TRUE);
  g_object_unref(shot_app);
  g_unlink(path);
}

static void remove_tree(const char *path)
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

/* Started with no session bus (Xvfb alone, ssh, a container), the app
 * prints no warning: G_DEBUG=fatal-warnings would make any of them abort. */
static void test_headless_start_quiet(void)
{
  const char *exe = g_getenv("TRACESCOPE_APP");
  g_assert_nonnull(exe);
  g_autofree char *path = g_build_filename(tmp_dir, "headless.png", NULL);
  g_autofree char *config = g_build_filename(tmp_dir, "config", NULL);
  char **env = g_get_environ();
  const char *drop[] = { "DBUS_SESSION_BUS_ADDRESS", "GTK_A11Y", "NO_AT_BRIDGE", "GSETTINGS_BACKEND" };
  for (guint i = 0; i < G_N_ELEMENTS(drop); i++)
    env = g_environ_unsetenv(env, drop[i]);
  env = g_environ_setenv(env, "G_DEBUG", "fatal-warnings", TRUE);
  env = g_environ_setenv(env, "XDG_CONFIG_HOME", config, TRUE); /* the keyfile settings */
  env = g_environ_setenv(env, "ASAN_OPTIONS", "detect_leaks=0", TRUE);
  const char *argv[] = { exe, "--module", seeds_path(), "--function", SIDE_EFFECT, "--call",
                         "--arg", "2", "--size", "900x600", "--screenshot", path, NULL };
  g_autofree char *out = NULL, *err = NULL;
  int wait_status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                             &wait_status, &error));
  g_assert_no_error(error);
  g_strfreev(env);
  if (!g_spawn_check_wait_status(wait_status, NULL) || strstr(err, "WARNING") || strstr(err, "CRITICAL"))
    g_error("a headless start printed:\n%s", err);
  g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
  g_unlink(path);
  remove_tree(config);
}

/* tracescope --device: a device the worker has places the scripted calls
 * (the screenshot is taken); one it lacks ends the app with an error
 * naming the devices there are. */
static void test_device_option(void)
{
  const char *exe = g_getenv("TRACESCOPE_APP");
  g_assert_nonnull(exe);
  g_autofree char *path = g_build_filename(tmp_dir, "device.png", NULL);
  char **env = g_environ_setenv(g_get_environ(), "ASAN_OPTIONS", "detect_leaks=0", TRUE);
  const char *devices[] = { "SIM:0", "CUDA:7" };
  for (guint i = 0; i < G_N_ELEMENTS(devices); i++) {
    const char *argv[] = { exe, "--module", seeds_path(), "--function", "sequential_model", "--device", devices[i],
                           "--arg", "f32[2,28,28]:uniform", "--size", "900x600", "--screenshot", path, NULL };
    g_autofree char *out = NULL, *err = NULL;
    int wait_status = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &wait_status,
                               &error));
    g_assert_no_error(error);
    gboolean ok = g_spawn_check_wait_status(wait_status, NULL);
    if (i == 0) {
      if (!ok)
        g_error("tracescope --device SIM:0 failed:\n%s", err);
      g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
      g_unlink(path);
    } else {
      g_assert_false(ok);
      g_assert_nonnull(strstr(err, "tracescope: --device: no device 'CUDA:7' (there are CPU, SIM:0"));
      g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
    }
  }
  g_strfreev(env);
}

static gboolean find_label(GtkWidget *widget, const char *text)
{
  if (GTK_IS_LABEL(widget) && g_strcmp0(gtk_label_get_text(GTK_LABEL(widget)), text) == 0)
    return TRUE;
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child))
    if (find_label(child, text))
      return TRUE;
  return FALSE;
}

static gboolean popover_drawn(gpointer data)
{
  return gtk_widget_get_mapped(data) && *(int *)g_object_get_data(data, "frames") >= 2;
}

/* "my_module.so" shows as such in the recent modules, not as "mymodule.so"
 * (a single underscore is a mnemonic mark in menus). */
static void test_recent_menu_underscores(void)
{
  GSettings *settings = ts_application_get_settings(app);
  g_auto(GStrv) old = g_settings_get_strv(settings, "recent-modules");
  const char *recent[] = { "/home/me/my_module.so", "seeds", NULL };
  g_settings_set_strv(settings, "recent-modules", recent);
  while (g_main_context_iteration(NULL, FALSE))
    ;
  GMenuModel *menu = ts_window_get_recent_menu(window);
  g_assert_cmpint(g_menu_model_get_n_items(menu), ==, 1);
  g_autofree char *label = NULL;
  g_assert_true(g_menu_model_get_item_attribute(menu, 0, "label", "s", &label));
  g_assert_cmpstr(label, ==, "my__module.so");
  /* as GTK draws it */
  GtkWidget *popover = gtk_popover_menu_new_from_model(menu);
  gtk_widget_set_parent(popover, GTK_WIDGET(ts_window_get_graph_pane(window)));
  int frames = 0;
  g_object_set_data(G_OBJECT(popover), "frames", &frames);
  gtk_widget_add_tick_callback(popover, count_frame, &frames, NULL);
  gtk_popover_popup(GTK_POPOVER(popover));
  test_wait_for(popover_drawn, popover, "the menu to show");
  g_assert_true(find_label(popover, "my_module.so"));
  const char *shots = g_getenv("TS_TEST_SCREENSHOTS");
  if (shots) {
    g_autofree char *path = g_build_filename(shots, "recent-menu.png", NULL);
    g_assert_true(ts_screenshot_save(popover, path, NULL));
  }
  gtk_popover_popdown(GTK_POPOVER(popover));
  gtk_widget_unparent(popover);
  g_settings_set_strv(settings, "recent-modules", (const char *const *)old);
}

/* The text as read: no-break spaces as spaces, no word joiners.  Owned. */
static char *plain_text(const char *text)
{
  g_auto(GStrv) parts = g_strsplit(text, "\u2060", -1);
  g_autofree char *joined = g_strjoinv("", parts);
  g_auto(GStrv) words = g_strsplit(joined, "\u00a0", -1);
  return g_strjoinv(" ", words);
}

/* Labels that do not show all their text on screen: clipped (narrower
 * than their text and not ellipsizing), or ellipsized without a tooltip
 * holding the whole text.  Appends a line per label to problems. */
static void find_cut_labels_one(GtkWidget *widget, GString *problems)
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

static void find_cut_labels(GtkWidget *widget, GString *problems)
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
static int find_badly_wrapped_labels(GtkWidget *widget, const char *needle, GString *problems)
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

static GtkWidget *find_widget(GtkWidget *widget, GType type)
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

static void save_test_screenshot(GtkWidget *widget, const char *name)
{
  const char *dir = g_getenv("TS_TEST_SCREENSHOTS");
  if (!dir)
    return;
  g_autofree char *path = g_build_filename(dir, name, NULL);
  g_assert_true(ts_screenshot_save(widget, path, NULL));
}

static void wait_drawn(GtkWidget *widget)
{
  int frames = 0;
  gtk_widget_add_tick_callback(widget, count_frame, &frames, NULL);
  gtk_widget_queue_draw(widget);
  test_wait_for(two_frames, &frames, "a window to draw");
}

/* The trace log, the console and the preferences show their text whole, or
 * ellipsized with the whole text in a tooltip. */
static void test_no_cut_text(void)
{
  gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  select_function(SIDE_EFFECT);
  run_with((const char *const[]){ "5", NULL });
  run_with((const char *const[]){ "6", NULL });
  select_function("get_MSE");
  run_with((const char *const[]){ "i32[2,3]:ones", "i32[2,3]:zeros", NULL });
  activate("win.show-panel", "s", "trace-log");
  test_wait_for(graph_drawn, window, "the graph");
  wait_drawn(GTK_WIDGET(window));
  g_autoptr(GString) problems = g_string_new(NULL);
  /* every column in sight: the table is no wider than its scrolled window */
  GtkWidget *log = GTK_WIDGET(ts_window_get_trace_log(window));
  GtkWidget *table = find_widget(log, GTK_TYPE_COLUMN_VIEW);
  GtkWidget *scrolled = gtk_widget_get_ancestor(table, GTK_TYPE_SCROLLED_WINDOW);
  int table_width = 0;
  gtk_widget_measure(table, GTK_ORIENTATION_HORIZONTAL, -1, &table_width, NULL, NULL, NULL);
  if (table_width > gtk_widget_get_width(scrolled))
    g_string_append_printf(problems, "the trace log needs %d px, has %d\n", table_width,
                           gtk_widget_get_width(scrolled));
  find_cut_labels(GTK_WIDGET(ts_window_get_trace_log(window)), problems);
  save_test_screenshot(GTK_WIDGET(window), "trace-log.png");
  /* the sidebar: never wrapped inside a shape or a name */
  GtkWidget *sidebar = GTK_WIDGET(ts_window_get_function_list(window));
  find_cut_labels(sidebar, problems);
  g_assert_cmpint(find_badly_wrapped_labels(sidebar, "shape=(2, 3)", problems), >=, 1);
  /* a long name is shown whole where there is room, and where there is
   * not, ellipsized with the whole name in its tooltip */
  select_function(SIDE_EFFECT);
  wait_drawn(GTK_WIDGET(window));
  g_assert_cmpint(find_badly_wrapped_labels(sidebar, SIDE_EFFECT, problems), >=, 1);
  GtkWidget *split = sidebar;
  do
    split = gtk_widget_get_ancestor(gtk_widget_get_parent(split), GTK_TYPE_PANED);
  while (gtk_orientable_get_orientation(GTK_ORIENTABLE(split)) != GTK_ORIENTATION_HORIZONTAL);
  int sidebar_width = gtk_paned_get_position(GTK_PANED(split));
  gtk_paned_set_position(GTK_PANED(split), 0);
  wait_drawn(GTK_WIDGET(window));
  find_cut_labels(sidebar, problems);
  save_test_screenshot(GTK_WIDGET(window), "sidebar-narrowest.png");
  gtk_paned_set_position(GTK_PANED(split), sidebar_width);
  activate("win.show-panel", "s", "console");
  wait_drawn(GTK_WIDGET(window));
  find_cut_labels(GTK_WIDGET(ts_window_get_console(window)), problems);
  save_test_screenshot(GTK_WIDGET(window), "console.png");

  TsPreferencesWindow *prefs = ts_preferences_window_new(GTK_WINDOW(window), ts_application_get_settings(app));
  gtk_window_present(GTK_WINDOW(prefs));
  wait_drawn(GTK_WIDGET(prefs));
  find_cut_labels(GTK_WIDGET(prefs), problems);
  save_test_screenshot(GTK_WIDGET(prefs), "preferences.png");
  gtk_window_destroy(GTK_WINDOW(prefs));
  if (problems->len)
    g_error("text cut:\n%s", problems->str);
}

/* `tracescope --version` prints the project's version and exits 0. */
static void test_version(void)
{
  const char *argv[] = { g_getenv("TRACESCOPE_APP"), "--version", NULL };
  g_assert_nonnull(argv[0]);
  g_autofree char *out = NULL, *err = NULL;
  int wait_status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &wait_status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(wait_status, NULL));
  g_assert_true(g_regex_match_simple("^tracescope [0-9]+\\.[0-9]+\\.[0-9]+\n$", out, 0, 0));
  g_assert_cmpstr(err, ==, "");
}

/* `tracescope --help` names every kind of file the app opens. */
static void test_help_files(void)
{
  const char *argv[] = { g_getenv("TRACESCOPE_APP"), "--help", NULL };
  g_assert_nonnull(argv[0]);
  g_autofree char *out = NULL, *err = NULL;
  int wait_status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &wait_status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(wait_status, NULL));
  const char *kinds[] = { "[FILE]", "MODULE.so", "SESSION.json", "TRACE.json[.gz]", "PyTorch" };
  for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
    if (!strstr(out, kinds[i]))
      g_error("tracescope --help does not name %s:\n%s", kinds[i], out);
}

/* An argument the user typed is refused with the op and the detail, not
 * with the engine source location the error was raised at. */
static void test_input_error_message(void)
{
  ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ .file = "../engine/io/arg_spec.c", .func = "make", .line = 204 },
               "Range", "values from 0 to 299 do not fit in uint8");
  ts_error *e = ts_error_take();
  g_assert_nonnull(strstr(e->message, "arg_spec.c:204"));
  g_autofree char *message = ts_engine_error_input_message(e);
  g_assert_cmpstr(message, ==, "Range: values from 0 to 299 do not fit in uint8");
  ts_error_free(e);
  ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ .file = "arg_spec.c", .line = 12 }, NULL, "bad spec");
  e = ts_error_take();
  g_autofree char *plain = ts_engine_error_input_message(e);
  g_assert_cmpstr(plain, ==, "bad spec");
  ts_error_free(e);
}


/* The first console line holding text (a new reference), or NULL. */
static TsConsoleLine *console_find(const char *text)
{
  for (guint i = 0; i < n_lines(); i++) {
    TsConsoleLine *line = console_line(i);
    if (strstr(ts_console_line_get_text(line), text))
      return line;
    g_object_unref(line);
  }
  return NULL;
}

static gboolean console_has(const char *text)
{
  g_autoptr(TsConsoleLine) line = console_find(text);
  return line != NULL;
}

static gboolean console_holds(gpointer text)
{
  return console_has(text);
}

static gboolean tick_on(gpointer data)
{
  return G_SOURCE_CONTINUE;
}

/* The worker has started the call (not merely received it). */
static gboolean call_running(gpointer data)
{
  return ts_engine_worker_get_running(ts_window_get_engine(window)) != 0;
}

typedef struct {
  const char *function;
  const char *error;     /* what the run panel says */
  gboolean cancel;       /* Cancel the run once it is under way */
  gboolean eager;
} Misbehaviour;

/* Whatever a module does to its process, the window stays, says what
 * happened, keeps its trace log, and the next Run works in a fresh worker. */
static void test_worker_survives(void)
{
  static const Misbehaviour cases[] = {
    { "segv", "segv crashed: SIGSEGV (segmentation fault", FALSE, FALSE },
    { "abort_call", "abort_call crashed: SIGABRT (aborted)", FALSE, FALSE },
    { "exit_call", "exit_call called exit(3)", FALSE, FALSE },
    { "overflow", "overflow crashed: SIGSEGV (stack overflow)", FALSE, FALSE },
    { "hog", "hog ran out of memory: the worker reached its limit of 1.0", FALSE, FALSE },
    { "spin", "spin did not stop within 2 s of Cancel: the worker was killed", TRUE, FALSE },
    { "endless", "Cancelled", TRUE, FALSE },
    /* eagerly the crash comes after an op ran (traced, it comes while tracing) */
    { "segv", "segv crashed: SIGSEGV (segmentation fault", FALSE, TRUE },
  };
  GSettings *settings = ts_application_get_settings(app);
  g_settings_set_uint(settings, "worker-memory-limit", 1024);
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, "misbehave.so", NULL);
  activate("win.open-module", "s", path);
  wait_idle();
  TsRunPanel *panel = ts_window_get_run_panel(window);
  select_function("good");
  run_with((const char *const[]){ "f32[2]=1,2", NULL });
  guint traces = n_traces();
  g_assert_cmpuint(traces, >, 0);
  TsTraceEntry *first = trace_row(0);
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    const Misbehaviour *c = &cases[i];
    select_function(c->function);
    activate("win.mode", "s", c->eager ? "eager" : "graph");
    ts_run_panel_set_args(panel, (const char *const[]){ "f32[2]=1,-1", NULL });
    activate("win.run", NULL);
    if (c->cancel) {
      /* the worker's status page sends no event: turn the loop every few ms */
      guint tick = g_timeout_add(5, tick_on, NULL);
      test_wait_for(call_running, NULL, "the call to be under way");
      g_source_remove(tick);
      activate("win.cancel", NULL);
    }
    wait_idle();
    const char *error = ts_run_panel_get_error(panel);
    g_assert_nonnull(error);
    g_test_message("%s: %s", c->function, error);
    g_assert_true(g_str_has_prefix(error, c->error));
    /* the cause, in the console too; and a crash's backtrace with its file and line (the
     * worker's death may be told after its call failed: wait on the lines, not on the clock) */
    if (!c->cancel || strcmp(c->function, "spin") == 0)
      test_wait_for(console_holds, (gpointer)(error + strlen(c->function) + 1), "the cause in the console");
    if (strcmp(c->function, "segv") == 0) {
      test_wait_for(console_holds, "backtrace of the worker:", "the worker's backtrace in the console");
      test_wait_for(console_holds, "segv (misbehave.c:", "the crashing function's line in the backtrace");
    }
    /* the log keeps what it had (a call that traced before it went wrong adds its trace) */
    g_assert_cmpuint(n_traces(), >=, traces);
    g_assert_true(trace_row(0) == first);
    select_function("good");
    run_with((const char *const[]){ "f32[]=1", NULL });
    g_autofree char *text = result_text();
    g_assert_cmpstr(text, ==, "Tensor(2.0, shape=(), dtype=float32)");
    traces = n_traces();
  }
  g_autoptr(TsConsoleLine) backtrace = console_find("backtrace of the worker:");
  g_assert_nonnull(backtrace);
  g_assert_cmpint(ts_console_line_get_source(backtrace), ==, TS_CONSOLE_SOURCE_WORKER);
  g_assert_true(console_has("segv (misbehave.c:"));
  g_assert_true(console_has("last op started: Relu at "));
  activate("win.mode", "s", "graph");
  g_settings_reset(settings, "worker-memory-limit");
  activate("win.open-module", "s", "seeds");
  wait_idle();
}

static void open_hostile(void)
{
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, "hostile.so", NULL);
  activate("win.open-module", "s", path);
  wait_idle();
  g_assert_cmpstr(ts_loaded_module_get_title(ts_window_get_module(window)), ==, "hostile test module");
}

static gboolean count_frames(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  (*(guint *)data)++;
  return G_SOURCE_CONTINUE;
}

static void add_console_lines(guint from, guint to)
{
  for (guint i = from; i < to; i++) {
    g_autofree char *text = g_strdup_printf("line %u", i);
    ts_console_add_output(ts_window_get_console(window), 0, "", g_get_real_time(), TS_CONSOLE_SOURCE_HOST, text);
  }
}

/* 50000 lines on stderr (a million in test-worker-hostile): the window
 * keeps drawing frames while they come, and the console keeps the last TS_CONSOLE_MAX_LINES of them after
 * a line saying how many it dropped. */
static void test_output_flood(void)
{
  open_hostile();
  clear_logs();
  select_function("flood");
  activate("win.mode", "s", "eager");
  guint frames = 0;
  activate("win.show-panel", "s", "console");
  TsConsoleLines *lines = TS_CONSOLE_LINES(ts_console_get_lines(ts_window_get_console(window)));
  guint made = ts_console_lines_get_n_made(lines);
  guint ticker = gtk_widget_add_tick_callback(GTK_WIDGET(window), count_frames, &frames, NULL);
  run_with((const char *const[]){ "50000", NULL });
  gtk_widget_remove_tick_callback(GTK_WIDGET(window), ticker);
  g_autofree char *text = result_text();
  g_assert_cmpstr(text, ==, "Tensor(50000, shape=(), dtype=int32)");
  g_test_message("%u frames while 50000 lines came", frames);
  g_assert_cmpuint(frames, >, 1);
  g_assert_cmpuint(n_lines(), ==, TS_CONSOLE_MAX_LINES + 1);
  g_test_message("%u console items made for the rows shown", ts_console_lines_get_n_made(lines) - made);
  g_autofree char *dropped = g_strdup_printf("… %u lines dropped", 50000 - TS_CONSOLE_MAX_LINES);
  assert_line(0, dropped, TS_CONSOLE_SOURCE_WORKER, NULL);
  assert_line(1, "flood line 40000", TS_CONSOLE_SOURCE_STDERR, NULL);
  assert_line(TS_CONSOLE_MAX_LINES, "flood line 49999", TS_CONSOLE_SOURCE_STDERR, NULL);
  /* a whole console of new lines at once: the list view asks for the rows
   * it shows, not for every line kept */
  made = ts_console_lines_get_n_made(lines);
  add_console_lines(0, TS_CONSOLE_MAX_LINES);
  g_assert_cmpuint(n_lines(), ==, TS_CONSOLE_MAX_LINES + 1);
  frames = 0;
  ticker = gtk_widget_add_tick_callback(GTK_WIDGET(window), count_frames, &frames, NULL);
  while (frames < 3)
    g_main_context_iteration(NULL, TRUE);
  gtk_widget_remove_tick_callback(GTK_WIDGET(window), ticker);
  made = ts_console_lines_get_n_made(lines) - made;
  g_test_message("%u console items made for %u new lines", made, TS_CONSOLE_MAX_LINES);
  g_assert_cmpuint(made, >, 0);
  g_assert_cmpuint(made, <, TS_CONSOLE_MAX_LINES / 10);

  /* one 64 MiB line: cut, saying so */
  select_function("long_line");
  run_with((const char *const[]){ "64", NULL });
  g_autoptr(TsConsoleLine) line = console_line(n_lines() - 1);
  g_autofree char *said = g_strdup_printf(" … (%u more bytes not shown)", (64u << 20) - (16u << 10));
  g_assert_true(g_str_has_suffix(ts_console_line_get_text(line), said));
  g_assert_cmpuint(strlen(ts_console_line_get_text(line)), ==, (16u << 10) + strlen(said));
  activate("win.mode", "s", "graph");
}

/* The console keeps its last lines after one saying how many went, also
 * when more than it keeps come between two batches, and over batches. */
static void test_console_keeps_last_lines(void)
{
  ts_console_clear(ts_window_get_console(window));
  guint n = 2 * TS_CONSOLE_MAX_LINES + 5000;
  add_console_lines(0, n);
  g_assert_cmpuint(n_lines(), ==, TS_CONSOLE_MAX_LINES + 1);
  g_autofree char *dropped = g_strdup_printf("… %u lines dropped", n - TS_CONSOLE_MAX_LINES);
  assert_line(0, dropped, TS_CONSOLE_SOURCE_WORKER, NULL);
  g_autofree char *first = g_strdup_printf("line %u", n - TS_CONSOLE_MAX_LINES);
  assert_line(1, first, TS_CONSOLE_SOURCE_HOST, NULL);
  add_console_lines(n, n + 10);
  g_assert_cmpuint(n_lines(), ==, TS_CONSOLE_MAX_LINES + 1);
  g_autofree char *more = g_strdup_printf("… %u lines dropped", n + 10 - TS_CONSOLE_MAX_LINES);
  assert_line(0, more, TS_CONSOLE_SOURCE_WORKER, NULL);
  g_autofree char *last = g_strdup_printf("line %u", n + 9);
  assert_line(TS_CONSOLE_MAX_LINES, last, TS_CONSOLE_SOURCE_HOST, NULL);
  ts_console_clear(ts_window_get_console(window));
  g_assert_cmpuint(n_lines(), ==, 0);
}

/* Closing or writing over the worker's fds changes nothing; a crash after
 * forking a child that never exits is reported as any crash. */
static void test_worker_fds_and_children(void)
{
  open_hostile();
  activate("win.mode", "s", "eager");
  TsRunPanel *panel = ts_window_get_run_panel(window);
  static const char *const survived[] = { "close_std", "close_fds", "scribble_fds" };
  for (guint i = 0; i < G_N_ELEMENTS(survived); i++) {
    select_function(survived[i]);
    run_with((const char *const[]){ "f32[]=1", NULL });
    g_autofree char *text = result_text();
    g_assert_cmpstr(text, ==, "Tensor(2.0, shape=(), dtype=float32)");
    clear_logs();
    select_function("say");
    run_with((const char *const[]){ "f32[]=1", NULL });
    g_autofree char *again = result_text();
    g_assert_cmpstr(again, ==, "Tensor(2.0, shape=(), dtype=float32)");
    g_assert_true(console_has("said out"));
    g_assert_true(console_has("said err"));
  }
  select_function("fork_segv");
  run_with((const char *const[]){ "f32[]=1", NULL });
  const char *error = ts_run_panel_get_error(panel);
  g_assert_nonnull(error);
  g_assert_true(g_str_has_prefix(error, "fork_segv crashed: SIGSEGV (segmentation fault"));
  g_assert_true(console_has("fork_segv (hostile.c:"));
  wait_idle(); /* the fresh worker */
  activate("win.mode", "s", "graph");
}

/* A module whose constructor crashes: the dialog says it crashed while
 * loading, with the backtrace. */
static void test_crash_while_loading(void)
{
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, "ctor-crash.so", NULL);
  const char *error = open_refused(path);
  g_test_message("%s", error);
  g_assert_true(g_str_has_prefix(error, "ctor-crash.so crashed while loading the module: SIGSEGV (segmentation fault"));
  g_assert_nonnull(strstr(error, "\n\nbacktrace of the worker:\n#0  crash_on_load (ctor-crash.c:"));
}

/* The worker dies between calls (killed here with SIGSEGV): the fresh
 * worker takes over, and the last result and its graph stay on screen. */
static gboolean connect_dialog_shown(gpointer data)
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

/* A worker on another machine (the test's sshd) whose ssh is killed
 * mid-call: the Run fails at once saying the connection was lost, the
 * window goes on, and the module is opened there again for the next Run. */
static void test_remote_connection_lost(void)
{
  if (sshd_skip_reason) {
    g_test_skip(sshd_skip_reason);
    return;
  }
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, "misbehave.so", NULL);
  activate("win.connect-remote-to", "(ss)", sshd_target, path); /* File › Connect to Remote's Connect */
  wait_idle();
  g_assert_cmpstr(ts_loaded_module_get_title(ts_window_get_module(window)), ==, "misbehaving test module");
  select_function("good");
  run_with((const char *const[]){ "f32[]=1", NULL });
  g_autofree char *first = result_text();
  g_assert_cmpstr(first, ==, "Tensor(2.0, shape=(), dtype=float32)");

  TsRunPanel *panel = ts_window_get_run_panel(window);
  select_function("spin");
  activate("win.mode", "s", "eager");
  ts_run_panel_set_args(panel, (const char *const[]){ "f32[2]=1,-1", NULL });
  activate("win.run", NULL);
  guint tick = g_timeout_add(5, tick_on, NULL); /* the status page comes every 50 ms, with no event here */
  test_wait_for(call_running, NULL, "the call to be under way");
  g_source_remove(tick);
  TsLoadedModule *before = ts_window_get_module(window);
  GPid ssh = ts_worker_get_pid(ts_engine_worker_get_worker(ts_window_get_engine(window)));
  g_assert_cmpint(kill(ssh, SIGKILL), ==, 0);
  test_wait_for(module_changed, before, "the module opened there again");
  const char *error = ts_run_panel_get_error(panel);
  g_assert_nonnull(error);
  if (!g_str_has_prefix(error, "spin connection lost: ssh to 127.0.0.1 was ended by SIGKILL"))
    g_error("not a lost connection: %s", error);
  g_assert_true(console_has("connection lost: ssh to 127.0.0.1"));

  activate("win.mode", "s", "graph");
  select_function("good");
  run_with((const char *const[]){ "f32[]=1", NULL });
  g_autofree char *again = result_text();
  g_assert_cmpstr(again, ==, "Tensor(2.0, shape=(), dtype=float32)");

  /* File › Connect to Remote… offers the host and module in use */
  activate("win.connect-remote", NULL);
  AdwMessageDialog *dialog = NULL;
  test_wait_for(connect_dialog_shown, &dialog, "the Connect to Remote dialog");
  GtkWidget *box = adw_message_dialog_get_extra_child(dialog);
  GtkWidget *host = gtk_widget_get_next_sibling(gtk_widget_get_first_child(box));
  g_assert_cmpstr(gtk_editable_get_text(GTK_EDITABLE(host)), ==, sshd_target);
  const char *shot = g_getenv("TS_TEST_CONNECT_SCREENSHOT"); /* to look at it */
  if (shot) {
    wait_idle();
    g_autoptr(GError) shot_error = NULL;
    g_assert_true(ts_screenshot_save(GTK_WIDGET(dialog), shot, &shot_error));
  }
  adw_message_dialog_response(dialog, "cancel");
  gtk_window_destroy(GTK_WINDOW(dialog));
  activate("win.connect-remote-to", "(ss)", "", "seeds"); /* here again */
  wait_idle();
  g_assert_null(ts_engine_worker_get_remote(ts_window_get_engine(window)));
}

static void test_crash_keeps_result(void)
{
  open_hostile();
  select_function("say");
  run_with((const char *const[]){ "f32[]=1", NULL });
  g_autofree char *text = result_text();
  g_assert_cmpstr(text, ==, "Tensor(2.0, shape=(), dtype=float32)");
  TsConcreteInfo *shown = ts_graph_pane_get_concrete(ts_window_get_graph_pane(window));
  g_assert_nonnull(shown);
  TsLoadedModule *before = ts_window_get_module(window);
  GPid pid = ts_worker_get_pid(ts_engine_worker_get_worker(ts_window_get_engine(window)));
  g_assert_cmpint(pid, >, 0);
  g_assert_cmpint(kill(pid, SIGSEGV), ==, 0);
  test_wait_for(module_changed, before, "the fresh worker");
  g_assert_true(console_has("the worker crashed: SIGSEGV"));
  g_autofree char *after = result_text();
  g_assert_cmpstr(after, ==, text);
  g_assert_null(ts_run_panel_get_error(ts_window_get_run_panel(window)));
  g_assert_true(ts_graph_pane_get_concrete(ts_window_get_graph_pane(window)) == shown);
}

static gboolean window_gone(gpointer data)
{
  return window == NULL;
}

/* GTK warns when there is no session bus (as under a bare Xvfb); that one is not ours. */
static gboolean fatal_filter(const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
  return !(message && strstr(message, "session bus"));
}

/* The command line of `tracescope`: --compare needs two indexes and --function. */
static void test_startup_options(void)
{
  char *good[] = { "tracescope", "--module", "seeds", "--function", "shape_retrace",
                   "--compare", "0,1", "--expand-all", "--device", "SIM:0", NULL };
  int argc = G_N_ELEMENTS(good) - 1;
  char **argv = good;
  GError *error = NULL;
  TsStartup *s = ts_startup_parse(&argc, &argv, &error);
  g_assert_no_error(error);
  g_assert_cmpint(s->compare[0], ==, 0);
  g_assert_cmpint(s->compare[1], ==, 1);
  g_assert_true(s->expand_all);
  g_assert_cmpstr(s->device, ==, "SIM:0");
  ts_startup_free(s);

  char *bad[] = { "tracescope", "--module", "seeds", "--compare", "0", NULL };
  argc = G_N_ELEMENTS(bad) - 1;
  argv = bad;
  g_assert_null(ts_startup_parse(&argc, &argv, &error));
  g_assert_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
  g_assert_nonnull(strstr(error->message, "--compare takes two concrete function indexes"));
  g_clear_error(&error);
}

static GtkWidget *button_for(GtkWidget *widget, const char *action)
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

static gboolean pane_drawn(gpointer data)
{
  return ts_graph_pane_get_drawn(ts_window_get_graph_pane(window));
}

static TsViewport *shown_viewport;
static GtkWidget *shown_zoom_button;

static gboolean zoom_shown(gpointer data)
{
  g_autofree char *want = g_strdup_printf("%.0f%%", 100 * ts_viewport_get_zoom(shown_viewport));
  return g_strcmp0(gtk_button_get_label(GTK_BUTTON(shown_zoom_button)), want) == 0;
}

/* The label follows the zoom (after an idle: see ts-graph-pane.c). */
static void assert_zoom_shown(GtkWidget *zoom_button, TsViewport *vp)
{
  shown_viewport = vp;
  shown_zoom_button = zoom_button;
  test_wait_for(zoom_shown, NULL, "the zoom level to show");
}

/* The graph pane's header: zoom out, the zoom level (a click: 100 %), zoom
 * in, fit; its menu expands and collapses every group. */
static void test_graph_header(void)
{
  select_function("lstm_fn");
  run_with((const char *const[]){ "f32[10,10]:zeros", "f32[10,10]:zeros", "f32[10,10]:zeros", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  TsGraphPane *pane = ts_window_get_graph_pane(window);
  TsGraphView *view = TS_GRAPH_VIEW(ts_graph_pane_get_view(pane));
  g_assert_nonnull(ts_graph_view_get_graph(view));
  TsViewport *vp = ts_graph_view_get_viewport(view);
  GtkWidget *zoom_button = button_for(GTK_WIDGET(pane), "graph.zoom-reset");
  g_assert_nonnull(zoom_button);
  for (const char *const *a = (const char *const[]){ "graph.zoom-in", "graph.zoom-out", "graph.zoom-fit", NULL }; *a; a++)
    g_assert_true(gtk_widget_get_visible(button_for(GTK_WIDGET(pane), *a)));
  assert_zoom_shown(zoom_button, vp);

  double zoom = ts_viewport_get_zoom(vp);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(pane), "graph.zoom-in", NULL));
  g_assert_cmpfloat(fabs(ts_viewport_get_zoom(vp) - zoom * 1.25), <, 1e-9);
  assert_zoom_shown(zoom_button, vp);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(pane), "graph.zoom-out", NULL));
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(pane), "graph.zoom-reset", NULL));
  assert_zoom_shown(zoom_button, vp);
  g_assert_cmpstr(gtk_button_get_label(GTK_BUTTON(zoom_button)), ==, "100%");
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(pane), "graph.zoom-fit", NULL));
  g_assert_cmpfloat(fabs(ts_viewport_get_zoom(vp) - zoom), <, 1e-9);

  /* lstm_cell opens with everything else, and closes again */
  ts_view_model *model = ts_graph_view_get_model(view);
  GArray *before = ts_view_model_visible_items(model, NULL);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(pane), "graph.expand-all", NULL));
  test_wait_for(pane_drawn, NULL, "the expanded graph");
  GArray *expanded = ts_view_model_visible_items(model, NULL);
  g_assert_cmpuint(expanded->len, >, before->len + 10);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(pane), "graph.collapse-all", NULL));
  test_wait_for(pane_drawn, NULL, "the collapsed graph");
  GArray *after = ts_view_model_visible_items(model, NULL);
  g_assert_cmpuint(after->len, ==, before->len);
  g_array_free(before, TRUE);
  g_array_free(expanded, TRUE);
  g_array_free(after, TRUE);
}

/* ---- the node details panel ---------------------------------------------------- */

static const ts_node *node_named(const ts_graph *g, const char *name)
{
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    if (strcmp(ts_node_name(ts_graph_node(g, i)), name) == 0)
      return ts_graph_node(g, i);
  g_error("no node %s in graph %s", name, ts_graph_name(g));
}

static TsGraphView *shown_view(void)
{
  return TS_GRAPH_VIEW(ts_graph_pane_get_view(ts_window_get_graph_pane(window)));
}

/* The text of every label shown under widget, one per line. */
static void collect_text(GtkWidget *widget, GString *text)
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

static char *details_text(void)
{
  GString *text = g_string_new(NULL);
  collect_text(GTK_WIDGET(ts_window_get_node_details(window)), text);
  return g_string_free(text, FALSE);
}

static void assert_shows(const char *text, const char *const *wanted)
{
  for (; *wanted; wanted++)
    if (!strstr(text, *wanted))
      g_error("the node details do not show '%s':\n%s", *wanted, text);
}

/* The activatable row titled title under widget (a producer, consumer, origin or subgraph). */
static GtkWidget *row_titled(GtkWidget *widget, const char *title)
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

static gboolean details_read(gpointer data)
{
  return !ts_node_details_get_busy(ts_window_get_node_details(window));
}

/* Selects node in the graph and waits for its source to be read. */
static void select_node(const ts_node *node)
{
  g_assert_true(ts_graph_view_reveal(shown_view(), node));
  TsNodeDetails *details = ts_window_get_node_details(window);
  g_assert_true(ts_node_details_get_node(details) == node);
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(details)));
  test_wait_for(details_read, NULL, "the node's source to be read");
}

/* The highlighted line of the source snippet, the index of that line
 * among those shown and the number of lines shown. */
static char *highlighted_line(int *index, int *n_lines)
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
static char *seeds_line(int number)
{
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "..", "data", "examples", "seeds_models.c", NULL);
  g_autofree char *contents = NULL;
  g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(contents, "\n", -1);
  g_assert_cmpint(number, <=, (int)g_strv_length(lines));
  return g_strdup(lines[number - 1]);
}

static gboolean not_animating(gpointer data)
{
  return !ts_graph_view_get_animating(shown_view());
}


/* Selecting an op of lstm_fn shows what it is, where its tensors come from
 * and go, and the line that wrote it; a producer's row selects that
 * producer in the graph; Ctrl+I hides and shows the panel. */
static void test_node_details(void)
{
  select_function("lstm_fn");
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  TsNodeDetails *details = ts_window_get_node_details(window);
  const ts_graph *g = ts_graph_view_get_graph(shown_view());
  g_assert_nonnull(g);
  g_assert_false(gtk_widget_get_visible(GTK_WIDGET(details))); /* nothing selected */

  const ts_node *matmul = node_named(g, "lstm_cell/MatMul_1");
  select_node(matmul);
  g_autofree char *text = details_text();
  ts_loc loc = ts_node_loc(matmul);
  g_autofree char *where = g_strdup_printf("seeds_models.c:%d in lstm_fn()", loc.line);
  assert_shows(text, (const char *const[]){
    "MatMul\n", "lstm_cell/MatMul_1\n", "scope lstm_cell · node ", "transpose_a\nfalse\n",
    "input\n", "input 0 · Placeholder · f32[10,10]\n", "lstm_cell/ReadVariableOp_2\n",
    "input 1 · ReadVariableOp · f32[10,40]\n", "Output 0 · f32[10,40]\n", "lstm_cell/Add\n",
    "its input 0 · Add\n", where, "eager twin", "not profiled yet", "no value recorded", NULL });
  g_assert_null(strstr(text, "Subgraphs"));

  /* the snippet: five lines either side, the node's own highlighted */
  int index = 0, n_lines = 0;
  g_autofree char *line = highlighted_line(&index, &n_lines);
  g_autofree char *want = seeds_line(loc.line);
  g_assert_cmpstr(g_strstrip(line), ==, g_strstrip(want)); /* dedented */
  g_assert_cmpint(index, ==, TS_NODE_DETAILS_CONTEXT);
  g_assert_cmpint(n_lines, ==, 2 * TS_NODE_DETAILS_CONTEXT + 1);
  if (g_getenv("TS_TEST_SCREENSHOTS")) { /* for the README: the panel given room down to its source lines */
    gtk_window_set_default_size(GTK_WINDOW(window), 1440, 960);
    gtk_paned_set_position(GTK_PANED(gtk_widget_get_parent(GTK_WIDGET(details))), 170);
    test_wait_for(pane_drawn, NULL, "the opened group to be drawn");
    test_wait_for(not_animating, NULL, "the fly-to the node");
    wait_drawn(GTK_WIDGET(window));
    save_test_screenshot(GTK_WIDGET(window), "node-details.png");
    gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
  }

  /* a producer's row selects it in the graph, and the panel follows */
  const ts_node *input = node_named(g, "input");
  GtkWidget *row = row_titled(GTK_WIDGET(details), "input");
  g_assert_nonnull(row);
  gtk_widget_activate(row);
  test_wait_for(selected_node_is, (gpointer)input, "the producer to be selected");
  g_assert_true(ts_node_details_get_node(details) == input);
  test_wait_for(details_read, NULL, "the panel to settle");
  g_autofree char *placeholder = details_text();
  assert_shows(placeholder, (const char *const[]){
    "Placeholder\n", "None: an input of graph lstm_fn\n", "lstm_cell/MatMul_1\n", "No source location\n",
    "Made by the engine while tracing", NULL });

  /* hidden and shown again with the selection kept */
  activate("win.show-node-details", NULL);
  g_assert_false(gtk_widget_get_visible(GTK_WIDGET(details)));
  activate("win.show-node-details", NULL);
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(details)));
  ts_graph_view_select_item(shown_view(), -1);
  g_assert_false(gtk_widget_get_visible(GTK_WIDGET(details)));
  g_assert_null(ts_node_details_get_node(details));
}

static gboolean item_visible(gpointer data)
{
  ts_view_model *model = ts_graph_view_get_model(shown_view());
  return ts_view_model_is_visible(model, NULL, GPOINTER_TO_INT(data));
}

/* An If node lists its branches; a branch's row opens it in the graph. */
static void test_node_details_subgraphs(void)
{
  select_function("square_if_positive");
  run_with((const char *const[]){ "i32[]=2", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  const ts_graph *g = ts_graph_view_get_graph(shown_view());
  const ts_node *cond = NULL;
  for (int i = 0; i < ts_graph_n_nodes(g) && !cond; i++)
    if (ts_node_op(ts_graph_node(g, i)) == TS_OP_IF)
      cond = ts_graph_node(g, i);
  g_assert_nonnull(cond);
  select_node(cond);
  g_autofree char *text = details_text();
  assert_shows(text, (const char *const[]){ "Subgraphs\n", "then\n", "else\n", NULL });
  ts_view_model *model = ts_graph_view_get_model(shown_view());
  int op = ts_view_model_item_for_node(model, g, ts_node_id(cond));
  int else_item = -1;
  for (int i = 0; i < ts_view_item_n_children(model, op); i++)
    if (g_strcmp0(ts_view_item_label(model, ts_view_item_child(model, op, i)), "else") == 0)
      else_item = ts_view_item_child(model, op, i);
  g_assert_cmpint(else_item, >=, 0);
  g_assert_false(item_visible(GINT_TO_POINTER(else_item))); /* the If is closed */
  gtk_widget_activate(row_titled(GTK_WIDGET(ts_window_get_node_details(window)), "else"));
  test_wait_for(item_visible, GINT_TO_POINTER(else_item), "the else branch to open");
  test_wait_for(pane_drawn, NULL, "the opened branch to be drawn");
}

/* A module whose source file is not on this machine: the panel says so
 * and where it looked. */
static void test_node_details_source_missing(void)
{
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, "moved.so", NULL);
  activate("win.open-module", "s", path);
  wait_idle();
  select_function("double_it");
  run_with((const char *const[]){ "f32[2]:ones", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  const ts_graph *g = ts_graph_view_get_graph(shown_view());
  const ts_node *add = NULL;
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    if (ts_node_op(ts_graph_node(g, i)) == TS_OP_ADD)
      add = ts_graph_node(g, i);
  g_assert_nonnull(add);
  select_node(add);
  g_autofree char *text = details_text();
  g_autofree char *note = g_strdup_printf("model.c is not on this machine (looked in %s, ", TS_TEST_MODULES_DIR);
  assert_shows(text, (const char *const[]){ "Add\n", "model.c:3 in double_it()\n", note, NULL });
  g_assert_false(gtk_widget_get_visible(
    gtk_widget_get_parent(find_widget(GTK_WIDGET(ts_window_get_node_details(window)), GTK_TYPE_TEXT_VIEW))));
}

/* A remote module's source lines are read there and shown as a local
 * one's; a remote module rebuilt there reloads (its worker watches the
 * file there), keeping the function selected. */
static void test_remote_source_reload(void)
{
  if (sshd_skip_reason) {
    g_test_skip(sshd_skip_reason);
    return;
  }
  activate("win.connect-remote-to", "(ss)", sshd_target, "seeds");
  wait_idle();
  g_assert_cmpstr(ts_engine_worker_get_remote(ts_window_get_engine(window)), ==, sshd_target);
  select_function("lstm_fn");
  run_with((const char *const[]){ "f32[10,10]:zeros", "f32[10,10]:zeros", "f32[10,10]:zeros", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  const ts_node *matmul = node_named(ts_graph_view_get_graph(shown_view()), "lstm_cell/MatMul_1");
  select_node(matmul);
  int index = 0, n_lines = 0;
  g_autofree char *line = highlighted_line(&index, &n_lines);
  g_autofree char *want = seeds_line(ts_node_loc(matmul).line);
  g_assert_cmpstr(g_strstrip(line), ==, g_strstrip(want));
  g_assert_cmpint(n_lines, ==, 2 * TS_NODE_DETAILS_CONTEXT + 1);
  ts_graph_view_select_item(shown_view(), -1);

  g_autofree char *path = g_build_filename(tmp_dir, "remote-tiny.so", NULL);
  g_autofree char *src = g_build_filename(TS_TEST_MODULES_DIR, "tiny.so", NULL);
  g_autofree char *contents = NULL;
  gsize length;
  g_assert_true(g_file_get_contents(src, &contents, &length, NULL));
  g_assert_true(g_file_set_contents(path, contents, (gssize)length, NULL));
  activate("win.connect-remote-to", "(ss)", sshd_target, path);
  wait_idle();
  TsLoadedModule *old = ts_window_get_module(window);
  g_assert_cmpstr(ts_loaded_module_get_source(old), ==, path);
  select_function("scale");
  g_assert_true(g_file_set_contents(path, contents, (gssize)length, NULL)); /* "rebuilt" there */
  test_wait_for(module_changed, old, "the remote module to reload");
  g_assert_cmpstr(ts_engine_worker_get_remote(ts_window_get_engine(window)), ==, sshd_target);
  TsSidebarItem *item = ts_function_list_get_selected(ts_window_get_function_list(window));
  g_assert_nonnull(item);
  g_assert_cmpstr(ts_sidebar_item_get_function_name(item), ==, "scale");
  activate("win.connect-remote-to", "(ss)", "", "seeds"); /* here again */
  wait_idle();
  g_unlink(path);
}

static void on_transfer_shown(TsEngineWorker *engine, guint call_id, guint64 received, guint64 total,
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

/* A remote worker's large result comes in chunks, and the Run panel says
 * how much of it is in as it comes; the result is whole. */
static void test_remote_transfer_progress(void)
{
  if (sshd_skip_reason) {
    g_test_skip(sshd_skip_reason);
    return;
  }
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, "misbehave.so", NULL);
  activate("win.connect-remote-to", "(ss)", sshd_target, path);
  wait_idle();
  select_function("big");
  g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
  gulong h = g_signal_connect_after(ts_window_get_engine(window), "transfer", G_CALLBACK(on_transfer_shown), texts);
  run_with((const char *const[]){ "4194304", NULL }); /* 16 MiB of ones */
  g_signal_handler_disconnect(ts_window_get_engine(window), h);
  g_assert_cmpuint(texts->len, ==, 16); /* one a 1 MiB chunk */
  g_assert_true(g_str_has_prefix(g_ptr_array_index(texts, 0), "receiving the result · 1.0 of 16.8 MB · "));
  g_assert_true(g_str_has_prefix(g_ptr_array_index(texts, 15), "receiving the result · 16.8 of 16.8 MB · "));
  g_assert_null(ts_run_panel_get_error(ts_window_get_run_panel(window)));
  g_assert_nonnull(strstr(ts_run_panel_get_meta(ts_window_get_run_panel(window)), "f32[4194304]"));
  activate("win.connect-remote-to", "(ss)", "", "seeds"); /* here again */
  wait_idle();
}

/* g as it would read back if node `id` stood for the nodes `origins` (an
 * optimized node): its serialized form with that node's origins rewritten. */
static ts_graph *with_origins(const ts_graph *g, int id, const int *origins, int n_origins)
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

static void on_activate_node(TsNodeDetails *details, gpointer node, gpointer data)
{
  *(const ts_node **)data = node;
}

/* A node standing for other nodes (as an optimized one does) lists them,
 * and their rows ask for them; timing and value rows take what they are
 * given and go back when the node changes. */
/* x^T-free square: y = x x under "dense_3"; returns dsum(y)/dx from a tape. */
static ts_tensor *gradient_model(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *y = NULL, *g = NULL;
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, x);
  TS_NAME_SCOPE("dense_3") { y = ts_matmul(x, x); }
  ts_tape_gradient(tape, ts_reduce_sum(y, TS_ALL_AXES, false), &x, 1, &g, TS_UNCONNECTED_NONE);
  ts_tape_free(tape);
  return g;
}

/* A gradient node's details name the forward node it is the gradient of. */
static void test_node_details_gradient(void)
{
  ts_function *fn = ts_function_new("gradient_model", gradient_model, "x");
  ts_concrete *cf = ts_function_get_concrete(fn, (ts_value[]){ TS_SPEC_VALUE(TS_F32, TS_SHAPE(2, 2)) }, 1);
  g_assert_nonnull(cf);
  const ts_graph *g = ts_concrete_graph(cf);
  const ts_node *grad = NULL;
  for (int i = 0; !grad && i < ts_graph_n_nodes(g); i++)
    if (ts_node_op(ts_graph_node(g, i)) == TS_OP_MATMUL && ts_node_gradient_of(ts_graph_node(g, i)))
      grad = ts_graph_node(g, i);
  g_assert_nonnull(grad);
  GtkWindow *holder = GTK_WINDOW(gtk_window_new());
  TsNodeDetails *details = TS_NODE_DETAILS(g_object_ref(ts_node_details_new()));
  gtk_window_set_child(holder, GTK_WIDGET(details));
  ts_node_details_set_node(details, grad);
  g_autoptr(GString) text = g_string_new(NULL);
  collect_text(GTK_WIDGET(details), text);
  assert_shows(text->str, (const char *const[]){ "scope gradients · node ", " · gradient of dense_3/MatMul\n", NULL });
  ts_node_details_set_node(details, ts_node_gradient_of(grad));
  g_string_truncate(text, 0);
  collect_text(GTK_WIDGET(details), text);
  g_assert_null(strstr(text->str, "gradient of"));
  ts_node_details_set_node(details, NULL);
  gtk_window_destroy(holder);
  g_assert_finalize_object(details);
  ts_function_free(fn);
}

static void test_node_details_provenance(void)
{
  TsModuleFunction *fn = ts_loaded_module_lookup(ts_window_get_module(window), "lstm_fn");
  g_assert_nonnull(fn);
  const ts_graph *traced = ts_module_function_concrete(fn, 0)->graph;
  const int add = ts_node_id(node_named(traced, "lstm_cell/Add"));
  const int origins[] = { ts_node_id(node_named(traced, "lstm_cell/MatMul")),
                          ts_node_id(node_named(traced, "lstm_cell/MatMul_1")) };
  ts_graph *g = with_origins(traced, add, origins, G_N_ELEMENTS(origins));
  GtkWindow *holder = GTK_WINDOW(gtk_window_new()); /* rows take focus when activated: a root */
  TsNodeDetails *details = TS_NODE_DETAILS(g_object_ref(ts_node_details_new()));
  gtk_window_set_child(holder, GTK_WIDGET(details));
  const ts_node *asked = NULL;
  g_signal_connect(details, "activate-node", G_CALLBACK(on_activate_node), &asked);
  ts_node_details_set_node(details, ts_graph_node(g, add));
  g_autoptr(GString) text = g_string_new(NULL);
  collect_text(GTK_WIDGET(details), text);
  assert_shows(text->str, (const char *const[]){ "Made by an optimization, fused from MatMul, MatMul: it stands for 2 traced nodes.\n",
                                                 "MatMul in graph lstm_fn\n", NULL });
  gtk_widget_activate(row_titled(GTK_WIDGET(details), "lstm_cell/MatMul_1"));
  g_assert_true(asked == ts_graph_node(g, origins[1]));

  GtkWidget *value = gtk_label_new("a tensor inspector");
  ts_node_details_set_timing(details, "CPU", 1500000);
  ts_node_details_set_value_view(details, value);
  g_string_truncate(text, 0);
  collect_text(GTK_WIDGET(details), text);
  assert_shows(text->str, (const char *const[]){ "Device\nCPU\nTime\n1.500 ms\n", "a tensor inspector\n", NULL });
  g_assert_null(strstr(text->str, "not profiled yet"));
  ts_node_details_set_node(details, ts_graph_node(g, origins[0]));
  g_string_truncate(text, 0);
  collect_text(GTK_WIDGET(details), text);
  assert_shows(text->str, (const char *const[]){ "Device\nnot profiled yet\n", "no value recorded\n", NULL });
  g_assert_null(strstr(text->str, "a tensor inspector"));

  ts_node_details_set_node(details, NULL);
  gtk_window_destroy(holder);
  g_assert_finalize_object(details);
  ts_graph_free(g);
}

/* Source files: found under the directories given, by name or by base
 * name; a line past the end, a binary file and a missing file are said so. */
static void test_source_snippet(void)
{
  g_autofree char *dir = g_build_filename(tmp_dir, "src", NULL);
  g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
  g_autofree char *path = g_build_filename(dir, "model.c", NULL);
  g_assert_true(g_file_set_contents(path, "one\ntwo\r\nthree\n", -1, NULL));
  const char *const dirs[] = { tmp_dir, dir, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(TsSourceSnippet) s = ts_source_snippet_read("src/model.c", 2, 5, dirs, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(s->path, ==, path);
  g_assert_cmpint(s->first_line, ==, 1);
  g_assert_cmpint(s->line, ==, 2);
  g_assert_cmpstrv(s->lines, ((const char *const[]){ "one", "two", "three", NULL }));
  g_autoptr(TsSourceSnippet) moved = ts_source_snippet_read("/built/elsewhere/model.c", 3, 1, dirs, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(moved->path, ==, path); /* by its base name, beside the module */
  g_assert_cmpstrv(moved->lines, ((const char *const[]){ "two", "three", NULL }));

  g_assert_null(ts_source_snippet_read("model.c", 9, 5, dirs, NULL, &error));
  g_autofree char *past = g_strdup_printf("%s has 3 lines, so no line 9: it changed since the module was built", path);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_cmpstr(error->message, ==, past);
  g_clear_error(&error);
  g_assert_null(ts_source_snippet_read("gone.c", 1, 5, dirs, NULL, &error));
  g_autofree char *missing = g_strdup_printf("gone.c is not on this machine (looked in %s, %s)", tmp_dir, dir);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_cmpstr(error->message, ==, missing);
  g_clear_error(&error);
  g_assert_null(ts_source_snippet_read("gone.c", 1, 5, NULL, NULL, &error));
  g_assert_cmpstr(error->message, ==, "gone.c is not on this machine (no directory to look in)");
  g_clear_error(&error);
  g_assert_true(g_file_set_contents(path, "a\0b\n", 4, NULL));
  g_assert_null(ts_source_snippet_read(path, 1, 5, NULL, NULL, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_clear_error(&error);
  g_unlink(path);
  g_rmdir(dir);

  /* the module's directory, its parents, then the current one */
  g_auto(GStrv) search = ts_source_search_dirs("/a/b/c/d/e/m.so");
  g_autofree char *cwd = g_get_current_dir();
  g_assert_cmpstrv(search, ((const char *const[]){ "/a/b/c/d/e", "/a/b/c/d", "/a/b/c", "/a/b", cwd, NULL }));
}

/* Check mode: a graph-mode Run also runs eagerly, and a loop variable left
 * out of TS_WHILE's list shows as a divergence in the trace log's banner. */
static void test_check_eagerly(void)
{
  g_autofree char *module = g_build_filename(TS_TEST_MODULES_DIR, "diverge.so", NULL);
  activate("win.open-module", "s", module);
  wait_idle();
  activate("win.mode", "s", "graph");
  select_function("unlisted_loop_var");
  activate("win.check-eagerly", NULL);
  run_with((const char *const[]){ "f32[3]=1,2,3", NULL });
  const char *warning = ts_trace_log_get_warning(ts_window_get_trace_log(window));
  g_assert_nonnull(warning);
  g_assert_nonnull(strstr(warning, "not listed in TS_WHILE(...)"));
  activate("win.check-eagerly", NULL);
  ts_trace_log_hide_warning(ts_window_get_trace_log(window));
  /* off again: the same Run says nothing */
  run_with((const char *const[]){ "f32[3]=1,2,3", NULL });
  g_assert_null(ts_trace_log_get_warning(ts_window_get_trace_log(window)));
}

/* ---- the debugger ---------------------------------------------------------------- */

static gboolean graph_selects(gpointer name)
{
  TsGraphView *view = TS_GRAPH_VIEW(ts_graph_pane_get_view(ts_window_get_graph_pane(window)));
  int item = ts_graph_view_get_selected_item(view);
  return item >= 0 && g_strcmp0(ts_node_name(ts_view_item_node(ts_graph_view_get_model(view), item)), name) == 0;
}

static gboolean has_last_output(gpointer panel)
{
  return ts_debug_panel_get_last_output(panel, "MatMul") != NULL;
}

static gboolean debug_stopped(gpointer data)
{
  return ts_debug_panel_get_stopped(ts_window_get_debug_panel(window));
}

static gboolean debug_ended(gpointer data)
{
  return !ts_debug_panel_get_active(ts_window_get_debug_panel(window));
}

static gboolean shows_op_seq(gpointer data)
{
  const char *op, *node, *file;
  int line;
  return ts_debug_panel_get_shown_op(ts_window_get_debug_panel(window), &op, &node, &file, &line) &&
         strstr(ts_debug_panel_get_status(ts_window_get_debug_panel(window)), data) == NULL;
}

/* Debug mode: a breakpoint on MatMul stops power at each one, with the
 * op's tensors in the inspector and its line in the source; F11 steps,
 * the history shows an earlier op, F5 continues, and the call finishes. */
static void test_debugger(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  TsDebugPanel *panel = ts_window_get_debug_panel(window);
  select_function("power");
  /* power is not traced: Debug traces its signature first, in the background */
  g_assert_null(ts_graph_pane_get_concrete(ts_window_get_graph_pane(window)));
  ts_run_panel_set_args(ts_window_get_run_panel(window), (const char *const[]){ "f32[10,10]:ones", "3", NULL });
  activate("win.mode", "s", "debug");
  g_autoptr(GError) error = NULL;
  g_assert_false(ts_debug_panel_add_breakpoint(panel, "max >> 2", &error));
  g_assert_nonnull(strstr(error->message, "max >> 2"));
  g_assert_true(ts_debug_panel_add_breakpoint(panel, "MatMul", NULL));
  activate("win.run", NULL);
  test_wait_for(debug_stopped, NULL, "the first breakpoint");
  g_assert_nonnull(strstr(ts_debug_panel_get_status(panel), "MatMul"));
  g_assert_nonnull(strstr(ts_debug_panel_get_status(panel), "breakpoint 1"));
  const char *op, *node, *file;
  int line;
  g_assert_true(ts_debug_panel_get_shown_op(panel, &op, &node, &file, &line));
  g_assert_cmpstr(op, ==, "MatMul");
  g_assert_nonnull(strstr(file, "seeds.c"));
  g_assert_cmpint(line, >, 0);
  g_assert_nonnull(node);
  /* the op is selected in the graph of power's signature */
  test_wait_for(graph_selects, (gpointer)node, "the debugger's op to be selected in the graph");
  test_wait_for(graph_drawn, window, "power's graph");
  TsGraphView *view = TS_GRAPH_VIEW(ts_graph_pane_get_view(ts_window_get_graph_pane(window)));
  g_autofree char *first = g_strdup(ts_debug_panel_get_status(panel));

  /* F5 goes on to the next MatMul */
  activate("win.run", NULL);
  test_wait_for(shows_op_seq, first, "the second breakpoint");
  test_wait_for(debug_stopped, NULL, "the second stop");
  g_assert_nonnull(strstr(ts_debug_panel_get_status(panel), "MatMul"));
  if (g_getenv("TS_TEST_SCREENSHOTS")) {
    gtk_window_set_default_size(GTK_WINDOW(window), 1440, 960);
    wait_drawn(GTK_WIDGET(window));
    test_wait_for(view_still, view, "the graph to reach the op");
    save_test_screenshot(GTK_WIDGET(window), "debugger.png");
    gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
  }
  /* Alt+[ steps back an op, Alt+] forward again to the live stop */
  activate("win.debug", "s", "back");
  g_assert_cmpint(ts_debug_panel_get_history_index(panel), >=, 0);
  int back = ts_debug_panel_get_history_index(panel);
  activate("win.debug", "s", "back");
  g_assert_cmpint(ts_debug_panel_get_history_index(panel), ==, back - 1);
  activate("win.debug", "s", "forward");
  activate("win.debug", "s", "forward");
  g_assert_cmpint(ts_debug_panel_get_history_index(panel), ==, -1);
  /* step back: the first MatMul as it was, its output kept for the node details */
  ts_debug_panel_show_history(panel, 1); /* the ops kept: the identity (Eye), then the first MatMul */
  test_wait_for(has_last_output, panel, "the first MatMul's output from the history");
  const ts_node *first_matmul = node_named(ts_graph_pane_get_concrete(ts_window_get_graph_pane(window))->graph, "MatMul");
  ts_graph_view_reveal(view, first_matmul);
  test_wait_for(selected_node_is, (gpointer)first_matmul, "the first MatMul to be selected");
  g_autofree char *details = details_text();
  g_assert_null(strstr(details, "no value recorded"));
  ts_debug_panel_show_history(panel, -1);
  /* step into the next op */
  g_autofree char *second = g_strdup(ts_debug_panel_get_status(panel));
  activate("win.debug", "s", "into");
  test_wait_for(shows_op_seq, second, "a step");
  test_wait_for(debug_stopped, NULL, "the step's stop");
  /* the next op is the next MatMul: a step that lands on a breakpoint says so */
  g_assert_nonnull(strstr(ts_debug_panel_get_status(panel), "Stopped before"));
  /* stop: the call ends cancelled, the panel says so */
  activate("win.debug", "s", "stop");
  test_wait_for(debug_ended, NULL, "the debug call to end");
  g_assert_nonnull(strstr(ts_debug_panel_get_status(panel), "Ended"));
  /* and runs again, to the end, with F5 at each breakpoint */
  activate("win.run", NULL);
  for (int k = 0; k < 3; k++) {
    test_wait_for(debug_stopped, NULL, "a breakpoint");
    activate("win.run", NULL);
  }
  test_wait_for(debug_ended, NULL, "the call to finish");
  g_assert_nonnull(strstr(ts_debug_panel_get_status(panel), "Finished"));
  /* the result in the inspector, not printed whole into the status line */
  g_assert_nonnull(strstr(ts_debug_panel_get_status(panel), "f32[10,10], is in the inspector"));
  g_assert_null(strstr(ts_debug_panel_get_status(panel), "100."));
  ts_tensor *result = ts_tensor_view_get_tensor(ts_debug_panel_get_inspector(panel));
  g_assert_nonnull(result);
  g_assert_cmpfloat(ts_tensor_get_f64(result, 0), ==, 100.0);
  /* another function in Graph mode: the debugger forgets power's call */
  activate("win.mode", "s", "graph");
  g_assert_nonnull(ts_tensor_view_get_tensor(ts_debug_panel_get_inspector(panel)));
  select_function("simple_relu");
  g_assert_null(ts_tensor_view_get_tensor(ts_debug_panel_get_inspector(panel)));
  g_assert_null(strstr(ts_debug_panel_get_status(panel), "Finished"));
  /* reopening the module with a node shown in the details is quiet */
  activate("win.open-module", "s", seeds_path());
  wait_idle();
}

/* Issue 10: a row of the node details activated takes the focus, and the
 * panel is rebuilt for the node it names: the focus stays in the window
 * (GTK 4.8 left it on the row gone with the old panel), and reopening the
 * module then is quiet (G_DEBUG=fatal-warnings: a critical fails). */
static void test_reopen_after_details_row(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.mode", "s", "graph");
  select_function("lstm_fn");
  run_with((const char *const[]){ "f32[10,10]:zeros", "f32[10,10]:zeros", "f32[10,10]:zeros", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  const ts_graph *g = ts_graph_view_get_graph(shown_view());
  select_node(node_named(g, "lstm_cell/MatMul_1"));
  const ts_node *input = node_named(g, "input");
  GtkWidget *row = row_titled(GTK_WIDGET(ts_window_get_node_details(window)), "input");
  g_assert_nonnull(row);
  gtk_widget_activate(row);
  test_wait_for(selected_node_is, (gpointer)input, "the producer to be selected");
  GtkWidget *focus = gtk_root_get_focus(GTK_ROOT(window));
  g_assert_true(focus == NULL || gtk_widget_get_root(focus) == GTK_ROOT(window));
  /* the panel hidden and shown, the selection cleared, the module reopened */
  activate("win.show-node-details", NULL);
  activate("win.show-node-details", NULL);
  ts_graph_view_select_item(shown_view(), -1);
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  g_assert_null(ts_node_details_get_node(ts_window_get_node_details(window)));
}

/* The op of a graph's node, by name. */
static const char *op_of(const ts_node *n)
{
  return ts_op_name(ts_node_op(n));
}

static gboolean compare_selected_is(gpointer data)
{
  TsGraphView *view = TS_GRAPH_VIEW(ts_compare_pane_get_view(ts_window_get_compare_pane(window), FALSE));
  int item = ts_graph_view_get_selected_item(view);
  ts_view_model *model = ts_graph_view_get_model(view);
  return item >= 0 && model && ts_view_item_node(model, item) == data;
}

static gboolean not_animating_right(gpointer data)
{
  return !ts_graph_view_get_animating(TS_GRAPH_VIEW(ts_compare_pane_get_view(ts_window_get_compare_pane(window), TRUE)));
}

/* Compare with Optimized Graph (issue 14): sequential_model's traced graph
 * beside the graph it runs after the passes, the passes' lines above; a
 * fused kernel selected on the right colours the MatMul, Add and Relu it
 * stands for on the left and the details say what it was fused from; an
 * origin's row selects it on the left, which colours its kernel. */
static void test_compare_passes(void)
{
  activate("win.mode", "s", "graph");
  select_function("sequential_model");
  run_with((const char *const[]){ "f32[4,28,28]:uniform", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  TsGraphPane *graph_pane = ts_window_get_graph_pane(window);
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(graph_pane);
  g_assert_nonnull(cf);
  g_assert_null(cf->optimized); /* asked for when wanted */
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(graph_pane), "graph.compare-passes", NULL));
  wait_idle(); /* the worker sends the optimized graph */
  g_assert_true(ts_window_get_comparing(window));
  TsComparePane *pane = ts_window_get_compare_pane(window);
  g_assert_true(ts_compare_pane_get_passes_concrete(pane) == cf);
  g_assert_nonnull(cf->optimized);
  TsGraphView *left = TS_GRAPH_VIEW(ts_compare_pane_get_view(pane, FALSE));
  TsGraphView *right = TS_GRAPH_VIEW(ts_compare_pane_get_view(pane, TRUE));
  g_assert_true(ts_graph_view_get_graph(left) == cf->graph);
  g_assert_true(ts_graph_view_get_graph(right) == cf->optimized);
  g_assert_nonnull(strstr(ts_compare_pane_get_passes(pane), "fold: folded 0 nodes into 0 constants\n"));
  g_assert_nonnull(strstr(ts_compare_pane_get_passes(pane), "\nfuse: fused 302 nodes into 101 kernels"));
  /* 1 removed: the inactive Dropout's Identity (simplify) */
  g_autofree char *want = g_strdup_printf("%d traced nodes, %d after the passes: 101 fused, 1 removed",
                                          ts_graph_n_nodes(cf->graph), ts_graph_n_nodes(cf->optimized));
  g_assert_cmpstr(ts_compare_pane_get_summary(pane), ==, want);
  test_wait_for(compare_laid_out, NULL, "both graphs to be laid out");

  /* dense_2's kernel on the right: its MatMul, Add and Relu on the left */
  const ts_node *kernel = NULL;
  int n = 0;
  for (int i = 0; i < ts_graph_n_nodes(cf->optimized) && !kernel; i++) {
    const ts_node *node = ts_graph_node(cf->optimized, i);
    if (g_str_equal(ts_node_scope(node), "dense_2") && ts_compare_pane_get_matches(pane, node, &n) && n > 1)
      kernel = node;
  }
  g_assert_nonnull(kernel);
  g_assert_true(ts_graph_view_reveal(right, kernel));
  const ts_node *const *origins = ts_compare_pane_get_matches(pane, kernel, &n);
  g_assert_cmpint(n, ==, 3);
  g_assert_cmpstr(op_of(origins[0]), ==, "MatMul");
  g_assert_cmpstr(op_of(origins[1]), ==, "Add");
  g_assert_cmpstr(op_of(origins[2]), ==, "Relu");
  ts_render_values *colours = ts_compare_pane_get_colours(pane, FALSE);
  for (int i = 0; i < n; i++) {
    g_assert_true(ts_node_graph(origins[i]) == cf->graph);
    g_assert_cmpstr(ts_render_values_category(colours, origins[i]), ==, "matches the selection");
  }
  g_assert_cmpstr(ts_render_values_category(colours, node_named(cf->graph, "dense_3/MatMul")), ==, "fused");
  TsNodeDetails *details = ts_window_get_node_details(window);
  g_assert_true(ts_node_details_get_node(details) == kernel);
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(details)));
  g_autofree char *text = details_text();
  assert_shows(text, (const char *const[]){
    "Made by an optimization, fused from MatMul, Add, Relu: it stands for 3 traced nodes.\n",
    "dense_2/MatMul\n", "MatMul in graph sequential_model\n", NULL });
  test_wait_for(details_read, NULL, "the kernel's source to be read");

  /* an origin's row selects it on the left, which colours its kernel on the right */
  const ts_node *add = origins[1];
  GtkWidget *row = row_titled(GTK_WIDGET(details), ts_node_name(add));
  g_assert_nonnull(row);
  gtk_widget_activate(row);
  test_wait_for(compare_selected_is, (gpointer)add, "the Add to be selected on the left");
  g_assert_true(ts_node_details_get_node(details) == add);
  g_assert_cmpstr(ts_render_values_category(ts_compare_pane_get_colours(pane, TRUE), kernel), ==,
                  "matches the selection");
  g_assert_cmpstr(ts_render_values_category(ts_compare_pane_get_colours(pane, FALSE), add), ==, "fused");
  g_autofree char *traced = details_text();
  assert_shows(traced, (const char *const[]){ "Add\n", "dense_2/Add\n", "eager twin", NULL });

  /* lstm_fn's gates: one elementwise kernel for nine ops */
  activate("win.close-compare", NULL);
  select_function("lstm_fn");
  run_with((const char *const[]){ "f32[10,10]:zeros", "f32[10,10]:zeros", "f32[10,10]:zeros", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(graph_pane), "graph.compare-passes", NULL));
  wait_idle(); /* the worker sends the optimized graph */
  TsConcreteInfo *lstm = ts_compare_pane_get_passes_concrete(pane);
  g_assert_nonnull(strstr(ts_compare_pane_get_passes(pane), "fuse: fused 11 nodes into 2 kernels"));
  test_wait_for(compare_laid_out, NULL, "both graphs to be laid out");
  const ts_node *gates = node_named(lstm->optimized, "lstm_cell/Mul_2");
  g_assert_true(ts_graph_view_reveal(right, gates));
  g_assert_nonnull(ts_compare_pane_get_matches(pane, gates, &n));
  g_assert_cmpint(n, ==, 9);
  g_autofree char *gate_text = details_text();
  assert_shows(gate_text, (const char *const[]){
    "Made by an optimization, fused from Sigmoid, Sigmoid, Sigmoid, Tanh, Mul, Mul, Add, Tanh, Mul: it stands "
    "for 9 traced nodes.\n", NULL });
  test_wait_for(details_read, NULL, "the kernel's source to be read");
  test_wait_for(graph_drawn, window, "both graphs to be drawn");
  test_wait_for(not_animating_right, NULL, "the fly-to the kernel");
  if (g_getenv("TS_TEST_SCREENSHOTS")) { /* for the README: room for both graphs, each fitted */
    gtk_window_set_default_size(GTK_WINDOW(window), 1600, 1000);
    wait_drawn(GTK_WIDGET(window));
    ts_graph_view_zoom_to_fit(left);
    ts_graph_view_zoom_to_fit(right);
    test_wait_for(graph_drawn, window, "both graphs to be drawn");
    wait_drawn(GTK_WIDGET(window));
    save_test_screenshot(GTK_WIDGET(window), "passes-compare.png");
    gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
  }

  /* back to one graph, its selection in the details again */
  activate("win.close-compare", NULL);
  g_assert_false(ts_window_get_comparing(window));
  g_assert_null(ts_compare_pane_get_passes_concrete(pane));
  g_assert_cmpstr(ts_compare_pane_get_passes(pane), ==, "");
  g_assert_null(ts_graph_view_get_graph(right));

  /* the module reopened (a new worker): lstm_fn's graph from the trace log
   * compares as before, its optimized graph kept with it */
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  GListModel *log = ts_trace_log_get_entries(ts_window_get_trace_log(window));
  g_autoptr(TsTraceEntry) last = g_list_model_get_item(log, g_list_model_get_n_items(log) - 1);
  g_assert_true(ts_trace_entry_get_concrete(last) == lstm);
  ts_graph_pane_show_concrete(graph_pane, ts_trace_entry_get_module(last), lstm);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(graph_pane), "graph.compare-passes", NULL));
  g_assert_true(ts_window_get_comparing(window));
  g_assert_true(ts_compare_pane_get_passes_concrete(pane) == lstm);
  activate("win.close-compare", NULL);
}

static const ts_node *view_selected_node(TsGraphView *view)
{
  int item = ts_graph_view_get_selected_item(view);
  return item >= 0 ? ts_view_item_node(ts_graph_view_get_model(view), item) : NULL;
}

static gboolean reads(const ts_node *consumer, const ts_node *producer)
{
  for (int i = 0; i < ts_node_n_inputs(consumer); i++)
    if (ts_node_input(consumer, i).node == ts_node_id(producer))
      return TRUE;
  return FALSE;
}

/* Issue 23: the keyboard walks the graph's edges: Alt+Up to the selected
 * node's producer, Alt+Right to its other producers, Alt+Down to a
 * consumer; Find's bar closes when another function's graph is shown. */
static void test_graph_walk(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.mode", "s", "graph");
  select_function("lstm_fn");
  run_with((const char *const[]){ "f32[10,10]:zeros", "f32[10,10]:zeros", "f32[10,10]:zeros", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  TsGraphView *view = shown_view();
  const ts_graph *g = ts_graph_view_get_graph(view);
  const ts_node *matmul = node_named(g, "lstm_cell/MatMul_1");
  g_assert_cmpint(ts_node_n_inputs(matmul), ==, 2);
  const ts_node *in0 = ts_graph_node(g, ts_node_input(matmul, 0).node);
  const ts_node *in1 = ts_graph_node(g, ts_node_input(matmul, 1).node);
  g_assert_true(in0 != in1);
  g_assert_true(ts_graph_view_reveal(view, matmul));
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(view), "view.walk-up", NULL));
  g_assert_true(view_selected_node(view) == in0);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(view), "view.walk-next", NULL));
  g_assert_true(view_selected_node(view) == in1);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(view), "view.walk-previous", NULL));
  g_assert_true(view_selected_node(view) == in0);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(view), "view.walk-down", NULL));
  g_assert_true(reads(view_selected_node(view), in0));
  /* the keys are the view's */
  GtkWidget *probe = GTK_WIDGET(view);
  g_assert_true(gtk_widget_activate_action(probe, "view.search", NULL));
  GtkWidget *bar = find_widget(probe, GTK_TYPE_REVEALER);
  g_assert_true(gtk_revealer_get_reveal_child(GTK_REVEALER(bar)));
  /* another function's graph: the bar and its query go */
  select_function("power");
  run_with((const char *const[]){ "f32[2,2]:ones", "2", NULL });
  test_wait_for(pane_drawn, NULL, "power's graph");
  g_assert_false(gtk_revealer_get_reveal_child(GTK_REVEALER(find_widget(GTK_WIDGET(shown_view()), GTK_TYPE_REVEALER))));
}

/* ---- layout ------------------------------------------------------------------------ */

/* The window's width while its layout is judged.  The op statistics'
 * twelve columns need about 850 px: they fit from the default 1280 px
 * window on, and scroll sideways in the smallest. */
static int layout_width;
#define LAYOUT_WIDE_TABLES 1280

/* Widgets that do not get the room they need: allocated less than their
 * minimum size (cut, or drawn over by a neighbour), labels and buttons
 * narrower than their text (not ellipsizing by design), labels ellipsized
 * without their text in a tooltip, tables with columns out of sight.  A
 * line per widget. */
static void find_cramped(GtkWidget *widget, GString *problems)
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
  if (GTK_IS_COLUMN_VIEW(widget) && !gtk_widget_get_ancestor(widget, TS_TYPE_TENSOR_VIEW) &&
      (layout_width >= LAYOUT_WIDE_TABLES || g_strcmp0(gtk_widget_get_name(widget), "stats-view") != 0)) {
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
static void find_hidden_arguments(GString *problems)
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

static const int LAYOUT_SIZES[][2] = { { 1280, 800 }, { 1024, 700 } };
static const char *const LAYOUT_THEMES[] = { "light", "dark" };

/* The window as it is now, at each size and in each theme: every panel fits. */
static void check_layout(const char *state, GString *problems)
{
  GSettings *settings = ts_application_get_settings(app);
  for (guint t = 0; t < G_N_ELEMENTS(LAYOUT_THEMES); t++) {
    g_settings_set_string(settings, "theme", LAYOUT_THEMES[t]);
    for (guint i = 0; i < G_N_ELEMENTS(LAYOUT_SIZES); i++) {
      gtk_window_set_default_size(GTK_WINDOW(window), LAYOUT_SIZES[i][0], LAYOUT_SIZES[i][1]);
      layout_width = LAYOUT_SIZES[i][0];
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

/* Issue 23: at the default size and at the smallest, light and dark, every
 * panel shows whole: the run panel with three arguments, the trace log,
 * the console, the profiler's pages and the debugger stopped with its
 * inspector open. */
static void test_layout_fits(void)
{
  g_autoptr(GString) problems = g_string_new(NULL);
  /* another module first: no input signature applied earlier is kept for
   * seeds, so shape_retrace retraces below */
  g_autofree char *other = g_build_filename(TS_TEST_MODULES_DIR, "misbehave.so", NULL);
  activate("win.open-module", "s", other);
  wait_idle();
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.mode", "s", "graph");
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(TRUE));
  select_function("lstm_fn");
  run_with((const char *const[]){ "f32[10,10]:uniform", "f32[10,10]:zeros", "f32[10,10]:zeros", NULL });
  activate("win.show-panel", "s", "trace-log");
  check_layout("trace-log", problems);
  /* the retrace warning with its Apply Input Signature button */
  select_function("shape_retrace");
  TsTraceLog *log = ts_window_get_trace_log(window);
  for (int n = 3; n < 9 && !ts_trace_log_get_warning(log); n++) {
    g_autofree char *spec = g_strdup_printf("f32[%d]:ones", n);
    run_with((const char *const[]){ spec, NULL });
  }
  g_assert_nonnull(ts_trace_log_get_warning(log));
  check_layout("retrace-warning", problems);
  /* applied, the banner goes (shown on another panel's page at some widths,
   * GTK 4.8 finds its revealer's height one pixel off and says so) */
  activate("win.apply-signature", "s", "shape_retrace");
  wait_idle();
  g_assert_null(ts_trace_log_get_warning(log));
  select_function("lstm_fn");
  activate("win.show-panel", "s", "console");
  check_layout("console", problems);
  TsProfilerPanel *profiler = ts_window_get_profiler_panel(window);
  activate("win.show-panel", "s", "profiler");
  ts_profiler_panel_show_page(profiler, "stats");
  check_layout("profiler-stats", problems);
  ts_profiler_panel_show_page(profiler, "timeline");
  check_layout("profiler-timeline", problems);
  activate("win.profile-compare", NULL);
  wait_idle();
  check_layout("profiler-compare", problems);
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(FALSE));

  /* the debugger stopped at an op, its inspector showing a heat map */
  TsDebugPanel *debug = ts_window_get_debug_panel(window);
  select_function("power");
  ts_run_panel_set_args(ts_window_get_run_panel(window), (const char *const[]){ "f32[10,10]:ones", "8", NULL });
  activate("win.mode", "s", "debug");
  activate("win.run", NULL);
  test_wait_for(debug_stopped, NULL, "a debug stop");
  wait_drawn(GTK_WIDGET(window));
  /* Inspect, the heat map, steps: the inspector scrolls, the graph keeps its height */
  GtkWidget *graph = GTK_WIDGET(ts_window_get_graph_pane(window));
  int graph_height = gtk_widget_get_height(graph);
  _ts_tensor_view_show_page(ts_debug_panel_get_inspector(debug), "heat-map");
  for (int k = 0; k < 3; k++) {
    g_autofree char *before = g_strdup(ts_debug_panel_get_status(debug));
    activate("win.debug", "s", "into");
    test_wait_for(shows_op_seq, before, "a step");
    test_wait_for(debug_stopped, NULL, "the step's stop");
    wait_drawn(GTK_WIDGET(window));
    g_assert_cmpint(gtk_widget_get_height(graph), ==, graph_height);
  }
  check_layout("debugger", problems);
  activate("win.debug", "s", "stop");
  test_wait_for(debug_ended, NULL, "the debug call to end");
  activate("win.mode", "s", "graph");
  gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
  if (problems->len)
    g_error("the window does not fit:\n%s", problems->str);
}

/* A model file opens like a module (File › Open, `tracescope model.onnx`):
 * its function runs through the worker, traces, and its graph keeps the
 * name scopes of the ONNX node names. */
static void test_open_onnx_model(void)
{
  g_autofree char *path = g_build_filename(tmp_dir, "dense.onnx", NULL);
  ts_module *seeds = ts_module_open(seeds_path());
  g_assert_nonnull(seeds);
  ts_scope *scope = ts_scope_begin();
  ts_value arg;
  g_assert_true(ts_value_parse("f32[2,28,28]:uniform", &arg));
  ts_concrete *exported = ts_function_get_concrete(ts_module_lookup(seeds, "dense_128_model"), &arg, 1);
  g_assert_true(ts_concrete_save_onnx(exported, path));
  ts_value_clear(&arg);
  ts_scope_end(scope);
  ts_module_free(seeds);
  activate("win.open-module", "s", path);
  wait_idle();
  TsLoadedModule *module = ts_window_get_module(window);
  g_assert_nonnull(module);
  g_assert_cmpint(ts_loaded_module_get_n_functions(module), ==, 1);
  g_assert_nonnull(ts_loaded_module_lookup(module, "dense_128_model"));
  activate("win.mode", "s", "graph");
  select_function("dense_128_model");
  run_with((const char *const[]){ "f32[2,28,28]:uniform", NULL });
  g_autofree char *result = result_text();
  g_assert_nonnull(strstr(result, "shape=(2, 10), dtype=float32)"));
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(ts_window_get_graph_pane(window));
  g_assert_nonnull(cf);
  const ts_graph *g = cf->graph;
  bool scoped = false;
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    scoped |= g_str_has_prefix(ts_node_scope(ts_graph_node(g, i)), "dense");
  g_assert_true(scoped);
  g_unlink(path);
}

/* A profiled Run of seeds train: the Op Stats summary splits its op time
 * into forward, backward and optimizer, all three there and adding up to
 * the ops' self time; Compare Eager vs Graph runs on it. */
static void test_profiler_train_step(void)
{
  if (!g_file_test("/usr/share/datasets/fashion-mnist", G_FILE_TEST_IS_DIR)) {
    g_test_skip("dataset-fashion-mnist is not installed");
    return;
  }
  TsProfilerPanel *panel = ts_window_get_profiler_panel(window);
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(TRUE));
  clear_logs();
  select_function("train");
  activate("win.mode", "s", "graph");
  run_with((const char *const[]){ "3", NULL });
  wait_idle(); /* the table and its summary are made on a thread */
  tsp_step_split sp;
  g_assert_true(ts_profiler_panel_get_step_split(panel, &sp));
  double sum = 0;
  for (int p = 0; p < TSP_STEP_N_PARTS; p++) {
    g_assert_cmpuint(sp.count[p], >, 0);
    g_assert_cmpfloat(sp.self_ns[p], >, 0);
    sum += sp.self_ns[p];
  }
  g_assert_cmpfloat(fabs(sum - sp.self_total_ns), <=, 1e-6 * sp.self_total_ns);
  const char *summary = ts_profiler_panel_get_summary(panel);
  g_test_message("%s", summary);
  int shares[3];
  const char *at = strstr(summary, " · step: forward ");
  g_assert_nonnull(at);
  g_assert_cmpint(sscanf(at, " · step: forward %d%%, backward %d%%, optimizer %d%%", &shares[0], &shares[1],
                         &shares[2]), ==, 3);
  g_assert_cmpint(abs(shares[0] + shares[1] + shares[2] - 100), <=, 2); /* rounded */
  activate("win.show-panel", "s", "profiler");
  wait_drawn(GTK_WIDGET(window));
  save_test_screenshot(GTK_WIDGET(window), "profiler-train.png");

  activate("win.profile-compare", NULL);
  wait_idle();
  const tsp_compare *c = ts_profiler_panel_get_compare(panel);
  g_assert_nonnull(c);
  g_assert_cmpstr(c->function, ==, "train");
  gboolean gradient = FALSE;
  for (int i = 0; i < c->n_rows; i++)
    gradient = gradient || (g_str_has_prefix(c->rows[i].name, "gradients/") && !c->rows[i].only &&
                            c->rows[i].eager_ns > 0 && c->rows[i].graph_ns > 0);
  g_assert_true(gradient); /* a gradient op timed both ways */
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(FALSE));
  clear_logs();
}

/* Debugging seeds train eagerly: a breakpoint on the gradients scope
 * stops at the first backward op; a step goes to the next, whose status
 * names the forward node it is the gradient of. */
static void test_debug_train_backward(void)
{
  if (!g_file_test("/usr/share/datasets/fashion-mnist", G_FILE_TEST_IS_DIR)) {
    g_test_skip("dataset-fashion-mnist is not installed");
    return;
  }
  TsDebugPanel *panel = ts_window_get_debug_panel(window);
  select_function("train");
  ts_run_panel_set_args(ts_window_get_run_panel(window), (const char *const[]){ "1", NULL });
  activate("win.mode", "s", "debug");
  g_assert_true(ts_debug_panel_add_breakpoint(panel, "gradients/*", NULL));
  activate("win.run", NULL);
  test_wait_for(debug_stopped, NULL, "the first backward op");
  g_assert_nonnull(strstr(ts_debug_panel_get_status(panel), " gradients/"));
  g_autofree char *first = g_strdup(ts_debug_panel_get_status(panel));
  activate("win.debug", "s", "into");
  test_wait_for(shows_op_seq, first, "a step");
  test_wait_for(debug_stopped, NULL, "the step's stop");
  const char *status = ts_debug_panel_get_status(panel);
  g_test_message("%s", status);
  g_assert_nonnull(strstr(status, " gradients/"));
  g_assert_nonnull(strstr(status, " (gradient of sparse_categorical_crossentropy/"));
  activate("win.debug", "s", "stop");
  test_wait_for(debug_ended, NULL, "the debug call to end");
  ts_debug_panel_clear(panel);
  g_assert_true(ts_debug_panel_remove_breakpoint(panel, "gradients/*"));
  g_auto(GStrv) left = ts_debug_panel_dup_breakpoints(panel);
  g_assert_cmpuint(g_strv_length(left), ==, 0);
  g_assert_false(ts_debug_panel_remove_breakpoint(panel, "gradients/*"));
  activate("win.mode", "s", "graph");
}

int main(int argc, char **argv)
{
  g_setenv("GSETTINGS_BACKEND", "memory", TRUE);
  test_sshd_start(TS_TEST_WORKER); /* it sets variables: before any thread */
  gtk_test_init(&argc, &argv, NULL);
  g_test_log_set_fatal_handler(fatal_filter, NULL);
  tmp_dir = g_dir_make_tmp("test-app-XXXXXX", NULL);

  app = ts_application_new(NULL);
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_NON_UNIQUE);
  g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));
  g_application_activate(G_APPLICATION(app));
  GList *windows = gtk_application_get_windows(GTK_APPLICATION(app));
  g_assert_nonnull(windows);
  window = TS_WINDOW(windows->data);

  g_test_add_func("/app/open-seeds", test_open_seeds);
  g_test_add_func("/app/host-values-retrace", test_host_values_retrace);
  g_test_add_func("/app/tensors-share-a-graph", test_tensors_share_a_graph);
  g_test_add_func("/app/eager-mode", test_eager_mode);
  g_test_add_func("/app/console-print-op", test_console_print_op);
  g_test_add_func("/app/retrace-warning-applies-signature", test_retrace_warning_applies_signature);
  g_test_add_func("/app/row-opens-graph", test_row_opens_graph);
  g_test_add_func("/app/compare-concrete", test_compare_concrete);
  g_test_add_func("/app/startup-options", test_startup_options);
  g_test_add_func("/app/trace-only", test_trace_only);
  g_test_add_func("/app/inputs-remembered", test_inputs_remembered);
  g_test_add_func("/app/example-arguments", test_example_arguments);
  g_test_add_func("/app/function-filter", test_function_filter);
  g_test_add_func("/app/filter-picks-and-resets", test_filter_picks_and_resets);
  g_test_add_func("/app/export-graph", test_export_graph);
  g_test_add_func("/app/session-round-trip", test_session_round_trip);
  g_test_add_func("/app/session-keeps-view", test_session_keeps_view);
  g_test_add_func("/app/run-errors", test_run_errors);
  g_test_add_func("/app/cancel", test_cancel);
  g_test_add_func("/app/train-streams-and-cancels", test_train_streams_and_cancels);
  g_test_add_func("/app/profiler-train-step", test_profiler_train_step);
  g_test_add_func("/app/debug-train-backward", test_debug_train_backward);
  g_test_add_func("/app/corrupt-module-refused", test_corrupt_module_refused);
  g_test_add_func("/app/wrong-abi-refused", test_wrong_abi_refused);
  g_test_add_func("/app/missing-symbol-refused", test_missing_symbol_refused);
  g_test_add_func("/app/reload-on-change", test_reload_on_change);
  g_test_add_func("/app/dialogs-and-style", test_dialogs_and_style);
  g_test_add_func("/app/screenshot", test_screenshot);
  g_test_add_func("/app/screenshot-waits-for-graph", test_screenshot_waits_for_graph);
  g_test_add_func("/app/screenshot-trace", test_screenshot_trace);
  g_test_add_func("/app/help-files", test_help_files);
  g_test_add_func("/app/headless-start-quiet", test_headless_start_quiet);
  g_test_add_func("/app/input-error-message", test_input_error_message);
  g_test_add_func("/app/recent-menu-underscores", test_recent_menu_underscores);
  g_test_add_func("/app/no-cut-text", test_no_cut_text);
  g_test_add_func("/app/version", test_version);
  g_test_add_func("/app/rows-survive-reopen", test_rows_survive_reopen);
  g_test_add_func("/app/worker-survives", test_worker_survives);
  g_test_add_func("/app/console-keeps-last-lines", test_console_keeps_last_lines);
  g_test_add_func("/app/worker/output-flood", test_output_flood);
  g_test_add_func("/app/worker/fds-and-children", test_worker_fds_and_children);
  g_test_add_func("/app/worker/crash-while-loading", test_crash_while_loading);
  g_test_add_func("/app/worker/crash-keeps-result", test_crash_keeps_result);
  g_test_add_func("/app/worker/remote-connection-lost", test_remote_connection_lost);
  g_test_add_func("/app/worker/remote-source-reload", test_remote_source_reload);
  g_test_add_func("/app/worker/remote-transfer-progress", test_remote_transfer_progress);
  g_test_add_func("/app/graph-header", test_graph_header);
  g_test_add_func("/app/node-details", test_node_details);
  g_test_add_func("/app/node-details-subgraphs", test_node_details_subgraphs);
  g_test_add_func("/app/node-details-provenance", test_node_details_provenance);
  g_test_add_func("/app/node-details-gradient", test_node_details_gradient);
  g_test_add_func("/app/source-snippet", test_source_snippet);
  g_test_add_func("/app/node-details-source-missing", test_node_details_source_missing);
  g_test_add_func("/app/profiler-panel", test_profiler_panel);
  g_test_add_func("/app/device-selector", test_device_selector);
  g_test_add_func("/app/device-option", test_device_option);
  g_test_add_func("/app/trace-import-process", test_trace_import_process);
  g_test_add_func("/app/check-eagerly", test_check_eagerly);
  g_test_add_func("/app/debugger", test_debugger);
  g_test_add_func("/app/reopen-after-details-row", test_reopen_after_details_row);
  g_test_add_func("/app/compare-passes", test_compare_passes);
  g_test_add_func("/app/graph-walk", test_graph_walk);
  g_test_add_func("/app/layout-fits", test_layout_fits);
  g_test_add_func("/app/open-onnx-model", test_open_onnx_model);
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
