/* test-app-run.c — GUI tests of running functions, modules and the trace log: open, run, eager, retraces, sessions, cancel, refused modules, reload. */
#include "test-app.h"
#include "ts-run-controller.h"
#include "ts-workspace.h"

static TsGraphView *graph_view(void)
{
  return TS_GRAPH_VIEW(ts_graph_pane_get_view(ts_window_get_graph_pane(window)));
}

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

static gboolean counting_calls(gpointer panel)
{
  const char *text = ts_run_panel_get_progress_text(panel);
  return text && g_str_has_prefix(text, "call ") && strstr(text, " of 1000000 · ");
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

/* A run panel follows its workspace's function, as the window's template
 * binds it: the function's arguments when one is selected, nothing when
 * none is. */
static void test_run_panel_follows_workspace(void)
{
  TsLoadedModule *module = ts_window_get_module(window);
  g_assert_nonnull(module);
  g_autoptr(TsWorkspace) workspace = ts_workspace_new();
  ts_workspace_set_module(workspace, module);
  GtkWidget *panel = g_object_ref_sink(g_object_new(TS_TYPE_RUN_PANEL, "workspace", workspace, NULL));
  g_assert_false(gtk_widget_get_sensitive(panel));
  ts_workspace_set_function(workspace, "power");
  g_assert_true(gtk_widget_get_sensitive(panel));
  g_auto(GStrv) args = ts_run_panel_dup_args(TS_RUN_PANEL(panel), NULL);
  g_assert_nonnull(args);
  g_assert_cmpuint(g_strv_length(args), ==, 2); /* power(x, n) */
  ts_workspace_set_function(workspace, NULL);
  g_assert_false(gtk_widget_get_sensitive(panel));
  g_object_unref(panel);
}

/* A run controller binds its worker's profiling to its workspace's
 * "profile" (what win.profile sets): from the start and on each change. */
static void test_run_controller_binds_profile(void)
{
  g_autoptr(TsEngineWorker) worker = ts_engine_worker_new();
  g_autoptr(TsWorkspace) workspace = ts_workspace_new();
  ts_workspace_set_profile(workspace, TRUE);
  const TsRunPanels panels = { 0 }; /* none: no call is made */
  g_autoptr(TsRunController) runs = ts_run_controller_new(worker, workspace, &panels);
  g_assert_true(ts_engine_worker_get_profiling(worker));
  ts_workspace_set_profile(workspace, FALSE);
  g_assert_false(ts_engine_worker_get_profiling(worker));
  ts_workspace_set_profile(workspace, TRUE);
  g_assert_true(ts_engine_worker_get_profiling(worker));
  ts_run_controller_shut_down(runs);
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

/* The dtype dropdown offers every dtype an argument spec takes, and no
 * other: the parser says which it takes; each round-trips through a row. */
static void test_dtypes_are_the_specs(void)
{
  TsRunPanel *panel = ts_window_get_run_panel(window);
  select_function("power");
  ts_run_panel_set_args(panel, (const char *const[]){ "f32[2]:zeros", "3", NULL });
  TsArgRow *row = TS_ARG_ROW(find_widget(GTK_WIDGET(panel), TS_TYPE_ARG_ROW));
  GtkDropDown *dropdown = GTK_DROP_DOWN(find_named(GTK_WIDGET(row), "dtype"));
  g_assert_nonnull(dropdown);
  GListModel *offered = gtk_drop_down_get_model(dropdown);
  guint n_taken = 0;
  for (int d = 0; d < TS_DTYPE_COUNT; d++) {
    const char *name = ts_dtype_short_name((ts_dtype)d);
    g_autofree char *spec = g_strdup_printf("%s[2]:zeros", name);
    ts_scope *scope = ts_scope_begin();
    ts_value v;
    gboolean taken = ts_value_parse(spec, &v);
    if (taken)
      ts_value_clear(&v);
    ts_error_clear();
    ts_scope_end(scope);
    gboolean shown = FALSE;
    for (guint i = 0; i < n_items(offered); i++)
      shown |= g_strcmp0(gtk_string_list_get_string(GTK_STRING_LIST(offered), i), name) == 0;
    if (taken != shown)
      g_error("dtype %s: the spec parser %s it, the dropdown %s it", name, taken ? "takes" : "refuses",
              shown ? "offers" : "does not offer");
    if (!taken)
      continue;
    n_taken++;
    ts_arg_row_set_spec(row, spec);
    g_assert_cmpstr(gtk_string_list_get_string(GTK_STRING_LIST(offered), gtk_drop_down_get_selected(dropdown)), ==,
                    name);
    g_autofree char *again = ts_arg_row_dup_spec(row, NULL);
    g_assert_cmpstr(again, ==, spec);
  }
  g_assert_cmpuint(n_items(offered), ==, n_taken);
  g_assert_cmpuint(n_taken, ==, 13); /* f32 ... bf16, as the CLI's --arg takes them */
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
  /* eager mode makes no graph: the page says so instead (the pane follows the window's workspace) */
  activate("win.mode", "s", "eager");
  g_assert_cmpstr(ts_graph_pane_get_status_title(ts_window_get_graph_pane(window)), ==, "get_MSE Is Not Traced Yet");
  activate("win.mode", "s", "graph");
  g_assert_cmpstr(ts_graph_pane_get_status_title(ts_window_get_graph_pane(window)), ==,
                  "Tracing get_MSE Failed");
  g_autoptr(GError) error = NULL;
  ts_run_panel_set_args(panel, (const char *const[]){ "f32[2,x]:ones", "1", NULL });
  g_assert_null(ts_run_panel_dup_args(panel, &error));
  g_assert_nonnull(strstr(error->message, "'x' is not a dimension"));
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

/* The guide's training loop (seeds train, 200 steps, graph mode), made
 * again and again (Calls: as many as a run makes) so that it cannot end by
 * itself however slowly the window's loop turns: its step lines reach the
 * console while it runs, not at the end, and Cancel stops it inside a
 * loop: the call it stops prints fewer than its 20 step lines and no
 * final line. */
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
  ts_run_panel_set_repeat(panel, 1000000);
  activate("win.run", NULL);
  test_wait_for(step_line_shown, NULL, "the first step line");
  g_assert_true(ts_window_get_busy(window)); /* shown while the calls run on */
  activate("win.cancel", NULL);
  wait_idle();
  ts_run_panel_set_repeat(panel, 1);
  g_assert_true(g_str_has_prefix(ts_run_panel_get_error(panel), "Cancelled"));
  g_assert_true(console_line_has_prefix(0, "Step 10 : loss "));
  /* the step lines of the call Cancel stopped: those after the last final line */
  guint steps = 0;
  for (guint i = 0; i < n_lines(); i++)
    if (console_line_has_prefix(i, "Final step"))
      steps = 0;
    else if (console_line_has_prefix(i, "Step "))
      steps++;
  g_test_message("%u step lines of the cancelled call (%u in all)", steps, n_step_lines());
  g_assert_cmpuint(steps, <, 20);
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

/* A module rebuilt on disk reloads; the selection and the inputs stay. */
static void test_reload_on_change(void)
{
  g_autofree char *contents = NULL;
  gsize length;
  g_autofree char *path = copy_of_tiny("tiny.so", &contents, &length);
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

/* A function returning a tuple: the result shows every tensor, as Python
 * prints a tuple, the header their types; no one of them is shown as if
 * it were the result. */
static void test_tuple_result(void)
{
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, "tiny.so", NULL);
  activate("win.open-module", "s", path);
  wait_idle();
  select_function("min_max");
  run_with((const char *const[]){ "f32[3]=1,-2,5", NULL });
  g_autofree char *text = result_text();
  g_assert_cmpstr(text, ==,
                  "(Tensor(-2.0, shape=(), dtype=float32), Tensor(5.0, shape=(), dtype=float32))");
  TsRunPanel *panel = ts_window_get_run_panel(window);
  g_assert_nonnull(strstr(ts_run_panel_get_meta(panel), " · (f32[], f32[]) · graph · 1 call"));
  g_assert_null(ts_tensor_view_get_tensor(ts_run_panel_get_tensor_view(panel)));
}

/* A function returning None (the guide's find_next_odd): the result says
 * None, its type None, and the tensor view has nothing to show. */
static void test_none_result(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  select_function("find_next_odd");
  run_with((const char *const[]){ NULL });
  g_autofree char *text = result_text();
  g_assert_cmpstr(text, ==, "None");
  TsRunPanel *panel = ts_window_get_run_panel(window);
  g_assert_nonnull(strstr(ts_run_panel_get_meta(panel), " · None · graph · 1 call"));
  g_assert_null(ts_tensor_view_get_tensor(ts_run_panel_get_tensor_view(panel)));
}

static gboolean load_failed(gpointer data)
{
  return ts_window_get_load_failure(window) != NULL;
}

/* A module rebuilt into something that does not load leaves the window on
 * the module as it was, and says so until a rebuild loads again (a toast
 * that went by itself left the old functions looking like the new code's).
 * The toast's title is markup: the file's name, '&' and all, reads as it is. */
static void test_reload_failure_stays_said(void)
{
  g_autofree char *contents = NULL;
  gsize length;
  g_autofree char *path = copy_of_tiny("tiny&broken.so", &contents, &length);
  activate("win.open-module", "s", path);
  wait_idle();
  TsLoadedModule *old = ts_window_get_module(window);
  g_assert_null(ts_window_get_load_failure(window));

  g_assert_true(g_file_set_contents(path, "not a shared object", -1, NULL)); /* a broken rebuild */
  test_wait_for(load_failed, NULL, "the reload to fail");
  AdwToast *failure = ts_window_get_load_failure(window);
  g_assert_true(g_str_has_prefix(adw_toast_get_title(failure), "Reload failed: "));
  g_autofree char *shown = NULL;
  g_assert_true(pango_parse_markup(adw_toast_get_title(failure), -1, 0, NULL, &shown, NULL, NULL));
  g_assert_nonnull(strstr(shown, "tiny&broken.so"));
  g_assert_cmpuint(adw_toast_get_timeout(failure), ==, 0); /* it does not go by itself */
  g_assert_true(ts_window_get_module(window) == old);

  g_assert_true(g_file_set_contents(path, contents, (gssize)length, NULL)); /* fixed */
  test_wait_for(module_changed, old, "the module to reload");
  g_assert_null(ts_window_get_load_failure(window));
  g_unlink(path);
}

/* After the module is opened again, the log's rows still show their own
 * graphs (the module's new functions start untraced). */
static void test_rows_survive_reopen(void)
{
  /* two traces of seeds' (host values retrace) */
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  select_function(SIDE_EFFECT);
  run_with((const char *const[]){ "2", NULL });
  run_with((const char *const[]){ "3", NULL });
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
  /* its one function is selected, its arguments ready: Run runs it */
  TsSidebarItem *selected = ts_function_list_get_selected(ts_window_get_function_list(window));
  g_assert_nonnull(selected);
  g_assert_cmpstr(ts_sidebar_item_get_function_name(selected), ==, "dense_128_model");
  g_assert_true(gtk_widget_get_sensitive(GTK_WIDGET(ts_window_get_run_panel(window))));
  g_auto(GStrv) args = ts_run_panel_dup_args(ts_window_get_run_panel(window), NULL);
  g_assert_nonnull(args);
  g_assert_cmpuint(g_strv_length(args), ==, 1); /* x */
  wait_drawn(GTK_WIDGET(window));
  save_test_screenshot(GTK_WIDGET(window), "onnx-one-function.png");
  activate("win.mode", "s", "graph");
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

int main(int argc, char **argv)
{
  return test_app_run(&argc, &argv, FALSE, (const TestAppCase[]){
    { "/app/open-seeds", test_open_seeds },
    { "/app/run-panel-follows-workspace", test_run_panel_follows_workspace },
    { "/app/run-controller-binds-profile", test_run_controller_binds_profile },
    { "/app/host-values-retrace", test_host_values_retrace },
    { "/app/tensors-share-a-graph", test_tensors_share_a_graph },
    { "/app/eager-mode", test_eager_mode },
    { "/app/console-print-op", test_console_print_op },
    { "/app/retrace-warning-applies-signature", test_retrace_warning_applies_signature },
    { "/app/row-opens-graph", test_row_opens_graph },
    { "/app/compare-concrete", test_compare_concrete },
    { "/app/trace-only", test_trace_only },
    { "/app/inputs-remembered", test_inputs_remembered },
    { "/app/example-arguments", test_example_arguments },
    { "/app/dtypes-are-the-specs", test_dtypes_are_the_specs },
    { "/app/function-filter", test_function_filter },
    { "/app/filter-picks-and-resets", test_filter_picks_and_resets },
    { "/app/export-graph", test_export_graph },
    { "/app/session-round-trip", test_session_round_trip },
    { "/app/session-keeps-view", test_session_keeps_view },
    { "/app/run-errors", test_run_errors },
    { "/app/cancel", test_cancel },
    { "/app/train-streams-and-cancels", test_train_streams_and_cancels },
    { "/app/corrupt-module-refused", test_corrupt_module_refused },
    { "/app/wrong-abi-refused", test_wrong_abi_refused },
    { "/app/missing-symbol-refused", test_missing_symbol_refused },
    { "/app/tuple-result", test_tuple_result },
    { "/app/none-result", test_none_result },
    { "/app/reload-on-change", test_reload_on_change },
    { "/app/reload-failure-stays-said", test_reload_failure_stays_said },
    { "/app/rows-survive-reopen", test_rows_survive_reopen },
    { "/app/open-onnx-model", test_open_onnx_model },
    { NULL, NULL },
  });
}
