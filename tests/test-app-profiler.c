/* test-app-profiler.c — GUI tests of the Profiler, device and debugger panels: tables, timeline, traces read, check mode, debugging. */
#include "test-app.h"
#include "ts-workspace.h"

static char *device_state(void)
{
  g_autoptr(GVariant) state = g_action_group_get_action_state(G_ACTION_GROUP(window), "device");
  return g_variant_dup_string(state, NULL);
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

static gboolean import_reported(gpointer data)
{
  return ts_window_get_import_progress(window) >= 0.5;
}

/* Whether the window shows a toast (AdwToastOverlay's "toast" nodes). */
static gboolean shows_toast_in(GtkWidget *widget)
{
  if (g_str_equal(gtk_widget_get_css_name(widget), "toast"))
    return TRUE;
  for (GtkWidget *c = gtk_widget_get_first_child(widget); c; c = gtk_widget_get_next_sibling(c))
    if (shows_toast_in(c))
      return TRUE;
  return FALSE;
}

static gboolean shows_toast(gpointer data)
{
  return shows_toast_in(GTK_WIDGET(window));
}

static gboolean not_shows_toast(gpointer data)
{
  return !shows_toast(data);
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

/* ---- the debugger ---------------------------------------------------------------- */

static gboolean graph_selects(gpointer name)
{
  TsGraphView *view = TS_GRAPH_VIEW(ts_graph_pane_get_view(ts_window_get_graph_pane(window)));
  int item = ts_graph_view_get_selected_item(view);
  return item >= 0 && g_strcmp0(ts_node_name(ts_view_item_node(ts_graph_view_get_model(view), item)), name) == 0;
}

static gboolean has_last_output(gpointer panel)
{
  return ts_debug_panel_get_last_output(panel, "MatMul", NULL) != NULL;
}

static gboolean search_status_set(gpointer label)
{
  return *gtk_label_get_text(label) != '\0';
}

/* The Op Stats summary counts its ops in words: "1 op", "2 ops" (a profiled
 * simple_nn_layer runs one op, its MatMul and Relu fused; linear_layer more). */
static void test_profiler_summary_counts(void)
{
  TsProfilerPanel *panel = ts_window_get_profiler_panel(window);
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(TRUE));
  activate("win.mode", "s", "graph");
  static const struct {
    const char *function, *args[3];
  } runs[] = {
    { "simple_nn_layer", { "f32[2,2]:ones", "f32[2,2]:ones", NULL } },
    { "deep_net", { "i32[3]=1,2,3", NULL } },
  };
  gboolean one = FALSE, more = FALSE;
  for (size_t r = 0; r < G_N_ELEMENTS(runs); r++) {
    select_function(runs[r].function);
    run_with(runs[r].args);
    wait_idle(); /* the table and its summary are made on a thread */
    const char *summary = ts_profiler_panel_get_summary(panel);
    g_test_message("%s", summary);
    const char *at = strstr(summary, " op");
    g_assert_nonnull(at);
    const char *digits = at;
    while (digits > summary && g_ascii_isdigit(digits[-1]))
      digits--;
    g_assert_true(digits < at);
    guint64 count = g_ascii_strtoull(digits, NULL, 10);
    g_assert_true(g_str_has_prefix(at, count == 1 ? " op · " : " ops · "));
    one = one || count == 1;
    more = more || count > 1;
  }
  g_assert_true(one && more);
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(FALSE));
  clear_logs();
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
  gboolean gradient = FALSE; /* the step's in the loop's body: "While/body/gradients/..." */
  for (int i = 0; i < c->n_rows; i++)
    gradient = gradient || (strstr(c->rows[i].name, "/gradients/") && !c->rows[i].only &&
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
  g_assert_nonnull(strstr(ts_debug_panel_get_status(panel), " While/body/gradients/") /* by its path */);
  g_autofree char *first = g_strdup(ts_debug_panel_get_status(panel));
  activate("win.debug", "s", "into");
  test_wait_for(shows_op_seq, first, "a step");
  test_wait_for(debug_stopped, NULL, "the step's stop");
  const char *status = ts_debug_panel_get_status(panel);
  g_test_message("%s", status);
  g_assert_nonnull(strstr(status, " While/body/gradients/"));
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

/* How many of graph's op nodes (its subgraphs' too) have a time in values. */
static int n_timed(const ts_graph *graph, ts_render_values *values)
{
  int n = 0;
  for (int i = 0; i < ts_graph_n_nodes(graph); i++) {
    const ts_node *node = ts_graph_node(graph, i);
    double ms;
    n += node && ts_render_values_lookup(values, node, &ms);
    for (int k = 0; node && k < ts_node_n_subgraphs(node); k++)
      n += n_timed(ts_node_subgraph(node, k), values);
  }
  return n;
}

/* Compute-time colouring after a retrace: the graph shown, the second
 * concrete function's (named after the function, as the first's is), has
 * its Run's times (they went to the first's nodes, and it showed "no
 * data" throughout). */
static void test_compute_times_after_retrace(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.mode", "s", "graph");
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(TRUE));
  select_function("deep_net");
  run_with((const char *const[]){ "i32[3]=1,2,3", NULL });
  run_with((const char *const[]){ "i32[2]=1,2", NULL }); /* a new shape: a second concrete function */
  wait_idle();
  TsGraphPane *pane = ts_window_get_graph_pane(window);
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(pane);
  g_assert_nonnull(cf);
  g_assert_cmpint(cf->index, ==, 1);
  ts_render_values *times = ts_graph_pane_get_compute_times(pane);
  g_assert_nonnull(times);
  g_assert_cmpint(n_timed(cf->graph, times), >, 0);
  /* and the first concrete function's nodes do not have the second's times */
  TsModuleFunction *fn = ts_loaded_module_lookup(ts_window_get_module(window), "deep_net");
  TsConcreteInfo *first = ts_module_function_concrete(fn, 0);
  g_assert_cmpint(n_timed(first->graph, times), ==, 0);
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(FALSE));
}

/* graph's nodes of op, its subgraphs' too, in the order they are listed
 * (a node before the blocks of the If or While after it). */
static void collect_op(const ts_graph *graph, const char *op, GPtrArray *out)
{
  for (int i = 0; i < ts_graph_n_nodes(graph); i++) {
    const ts_node *node = ts_graph_node(graph, i);
    if (node && g_str_equal(ts_op_name(ts_node_op(node)), op))
      g_ptr_array_add(out, (gpointer)node);
    for (int k = 0; node && k < ts_node_n_subgraphs(node); k++)
      collect_op(ts_node_subgraph(node, k), op, out);
  }
}

/* Nodes of one name in a graph's If/While bodies: fizzbuzz's "FloorMod"
 * in the loop body (node 8 there) and in the If's else branch (node 2
 * there), both run for n = 5, each with its own time (the first of the
 * name had them all). */
static void test_compute_times_in_bodies(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.mode", "s", "graph");
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(TRUE));
  select_function("fizzbuzz");
  run_with((const char *const[]){ "i32[]=5", NULL });
  wait_idle();
  TsGraphPane *pane = ts_window_get_graph_pane(window);
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(pane);
  ts_render_values *times = ts_graph_pane_get_compute_times(pane);
  g_assert_nonnull(cf);
  g_assert_nonnull(times);
  g_autoptr(GPtrArray) mods = g_ptr_array_new();
  collect_op(cf->graph, "FloorMod", mods);
  g_assert_cmpuint(mods->len, ==, 3); /* the body's and those of its nested else branches: all ran */
  for (guint i = 0; i < mods->len; i++) {
    const ts_node *node = g_ptr_array_index(mods, i);
    double ms;
    if (!ts_render_values_lookup(times, node, &ms))
      g_error("FloorMod %d of graph %s has no time", ts_node_id(node), ts_graph_name(ts_node_graph(node)));
  }
  /* nodes are found by path; a bare name (an older trace file's) finds the first of it */
  const ts_node *inner = ts_profile_find_node(cf->graph, "While/body/If/else/FloorMod");
  g_assert_nonnull(inner);
  g_assert_cmpstr(ts_graph_name(ts_node_graph(inner)), ==, "If/else");
  const ts_node *first = ts_profile_find_node(cf->graph, "FloorMod");
  g_assert_nonnull(first);
  g_assert_cmpstr(ts_graph_name(ts_node_graph(first)), ==, "While/body");
  g_assert_null(ts_profile_find_node(cf->graph, "While/body/NoSuchNode"));
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(FALSE));
}

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
  activate("win.export-trace-to", "s", trace); /* the menu's Export Profile as Trace */
  g_assert_true(g_file_test(trace, G_FILE_TEST_EXISTS));
  test_wait_for(not_shows_toast, NULL, "the toasts before to go");
  activate("win.open-trace-from", "s", trace);
  g_assert_false(shows_toast(NULL)); /* a quick read flashes no toast */
  wait_idle();
  /* (a read slowed past the delay shows one: it goes when the read ends) */
  test_wait_for(not_shows_toast, NULL, "no toast once the trace is read");
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

  /* what a recording could not keep is said in the summary, its reasons in
   * the tooltip (a Run that lost nothing says nothing of it) */
  g_assert_null(strstr(ts_profiler_panel_get_summary(panel), "lost"));
  g_autofree char *json = tsp_chrome_export_string(run, NULL);
  g_autoptr(GString) lossy = g_string_new(json);
  g_string_replace(lossy, "\"lost_events\":\"0\"", "\"lost_events\":\"12\"", 1);
  g_string_replace(lossy, "\"dropped_device_records\":\"0\"", "\"dropped_device_records\":\"3\"", 1);
  g_autofree char *lossy_path = g_build_filename(tmp_dir, "lossy.json", NULL);
  g_assert_true(g_file_set_contents(lossy_path, lossy->str, (gssize)lossy->len, NULL));
  activate("win.open-trace-from", "s", lossy_path);
  wait_idle();
  g_assert_null(ts_window_get_error_dialog(window));
  g_assert_nonnull(strstr(ts_profiler_panel_get_summary(panel), " · 12 events lost · 3 device records dropped"));
  g_unlink(lossy_path);

  /* with no recording there is nothing to export: no file is written */
  ts_profiler_panel_set_session(panel, NULL, NULL);
  activate("win.export-trace-to", "s", trace);
  g_assert_false(g_file_test(trace, G_FILE_TEST_EXISTS));
}

/* TRACESCOPE_DEVICES=sim (the tests' environment): the device menu lists
 * the worker's devices, SIM:0 among them, says why there is no CUDA
 * device, and choosing SIM:0 runs the calls there: the products say SIM:0
 * in the profile (the variables, made on the first call there, live there
 * and are read there), its kernels have a stream track, the graph's device
 * colouring has SIM:0.  Back on the CPU, every op but the variables'
 * reads says CPU. */
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
  /* the result's inspector names the device it was made on, not the
   * CPU its copy in the app is on */
  TsTensorView *result_view = ts_run_panel_get_tensor_view(ts_window_get_run_panel(window));
  g_assert_true(g_str_has_prefix(_ts_tensor_view_get_summary(result_view), "f32[4,10] · SIM:0 · "));
  gboolean stream;
  const char *matmul;
  g_autofree char *on_sim = profiled_devices("_FusedMatMul", &matmul, &stream);
  g_assert_cmpstr(matmul, ==, "SIM:0");
  g_assert_true(g_str_equal(on_sim, "CPU,SIM:0") || g_str_equal(on_sim, "SIM:0"));
  g_assert_true(stream);
  /* the Kernels columns: the products' time on the device; a variable's
   * read there launches none, which says so rather than "0 ns" */
  TsProfilerPanel *profiler = ts_window_get_profiler_panel(window);
  gboolean saw_read = FALSE;
  for (guint i = 0; i < ts_profiler_panel_get_n_rows(profiler); i++) {
    const tsp_stat *row = ts_profiler_panel_get_row(profiler, i);
    g_autofree char *kernels = ts_profiler_panel_dup_cell_text(profiler, i, "Kernels");
    g_autofree char *median = ts_profiler_panel_dup_cell_text(profiler, i, "Kernel Median");
    if (g_str_equal(row->key, "_FusedMatMul")) {
      g_assert_true(g_str_has_suffix(kernels, "s"));
      g_assert_cmpstr(kernels, !=, "0 ns");
    } else if (g_str_equal(row->key, "ReadVariableOp")) {
      g_assert_cmpstr(kernels, ==, "—");
      g_assert_cmpstr(median, ==, "—");
      saw_read = TRUE;
    }
  }
  g_assert_true(saw_read);
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
  /* and which edges the run copied to SIM:0: the argument into flatten
   * (the weights live there) */
  g_assert_cmpint(ts_render_values_n_copies(values), >=, 1);
  gboolean into_flatten = FALSE;
  for (int i = 0; i < ts_render_values_n_copies(values); i++) {
    int input;
    const char *to;
    const ts_node *n = ts_render_values_copy(values, i, &input, &to);
    g_assert_false(g_str_has_prefix(ts_node_name(n), "dense"));
    into_flatten |= g_str_has_prefix(ts_node_name(n), "flatten/") && input == 0 &&
                    !g_strcmp0(to, "SIM:0");
  }
  g_assert_true(into_flatten);
  if (g_getenv("TS_TEST_SCREENSHOTS")) { /* the Run's Timeline: its trace and plan, SIM:0's stream */
    TsProfilerPanel *panel = ts_window_get_profiler_panel(window);
    activate("win.show-panel", "s", "profiler");
    ts_profiler_panel_show_page(panel, "timeline");
    wait_drawn(GTK_WIDGET(window));
    save_test_screenshot(GTK_WIDGET(window), "device-timeline.png");
    ts_profiler_panel_show_page(panel, "stats");
    /* the graph coloured by device, the argument's copy tagged */
    g_settings_set_string(ts_application_get_settings(app), "colour-mode", "device");
    wait_drawn(GTK_WIDGET(window));
    save_test_screenshot(GTK_WIDGET(window), "device-graph.png");
    g_settings_set_string(ts_application_get_settings(app), "colour-mode", "op-type");
  }

  activate("win.device", "s", "CPU");
  run_with((const char *const[]){ "f32[4,28,28]:uniform", NULL });
  g_autofree char *on_cpu = profiled_devices("_FusedMatMul", &matmul, &stream);
  g_assert_cmpstr(matmul, ==, "CPU");
  /* the variables stay where they were made: their reads, on SIM:0, are
   * all that runs there (their values copied to the host, on its stream) */
  const char *read;
  g_autofree char *again = profiled_devices("ReadVariableOp", &read, &stream);
  g_assert_cmpstr(on_cpu, ==, "CPU,SIM:0");
  g_assert_cmpstr(read, ==, "SIM:0");
  g_assert_true(stream);
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(FALSE));
}

/* A session keeps the device the calls ran on: saved on SIM:0, opened
 * again while on the CPU, the calls run on SIM:0 again; the file names
 * it.  A session naming a device this engine lacks opens on the device
 * the window has (a toast says so), and a name that is no device's is
 * refused naming it. */
static void test_session_keeps_device(void)
{
  select_function("deep_net");
  activate("win.device", "s", "SIM:0");
  g_autofree char *path = g_build_filename(tmp_dir, "device-session.json", NULL);
  activate("win.save-session-to", "s", path);
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "\"device\" : \"SIM:0\""));

  activate("win.device", "s", "CPU");
  activate("win.open-session-from", "s", path);
  wait_idle();
  g_assert_null(ts_window_get_error_dialog(window));
  g_autofree char *restored = device_state();
  g_assert_cmpstr(restored, ==, "SIM:0");
  g_assert_cmpstr(ts_engine_worker_get_device(ts_window_get_engine(window)), ==, "SIM:0");

  /* a device this engine lacks: opened on the one the window has */
  activate("win.device", "s", "CPU");
  g_autofree char *elsewhere = g_strdup(text);
  char *at = strstr(elsewhere, "\"SIM:0\"");
  memcpy(at, "\"GPU:9\"", strlen("\"GPU:9\"")); /* as long: the JSON stays whole */
  g_assert_true(g_file_set_contents(path, elsewhere, -1, NULL));
  activate("win.open-session-from", "s", path);
  wait_idle();
  g_assert_null(ts_window_get_error_dialog(window));
  g_autofree char *kept = device_state();
  g_assert_cmpstr(kept, ==, "CPU");

  /* not a device's name: refused, naming it */
  g_assert_true(g_file_set_contents(path,
                                    "{\"format\": \"tracescope-session\", \"version\": 1, \"module\": \"seeds\", "
                                    "\"device\": \"\"}",
                                    -1, NULL));
  activate("win.open-session-from", "s", path);
  GtkWindow *dialog = ts_window_get_error_dialog(window);
  g_assert_nonnull(dialog);
  g_assert_nonnull(strstr(ts_window_get_error(window), "device '' is not a device's name"));
  gtk_window_destroy(dialog);
  wait_idle();
  g_unlink(path);
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
  /* it reports progress, then hangs: its toast (with Cancel) comes once
   * the reading takes a while, not at once; Cancel ends it */
  g_autofree char *hang = fake_importer("hang.sh", "echo 'progress 0.50' >&2; exec sleep 600");
  g_setenv("TRACESCOPE_IMPORTER", hang, TRUE);
  test_wait_for(not_shows_toast, NULL, "the toasts before to go");
  activate("win.open-trace-from", "s", trace);
  g_assert_true(ts_window_get_busy(window));
  g_assert_false(shows_toast(NULL));
  test_wait_for(shows_toast, NULL, "the reading's toast");
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

/* Debug mode: a breakpoint on MatMul stops power at each one, with the
 * op's tensors in the inspector and its line in the source; F11 steps,
 * the history shows an earlier op, F5 continues, and the call finishes. */
/* A debug panel bound to a workspace shows itself among the pages of its
 * stack when the workspace's mode becomes "debug", and again when Debug
 * mode is asked for again (the window notifies "mode"); other modes leave
 * the page shown as it is. */
static void test_debug_panel_follows_mode(void)
{
  g_autoptr(TsWorkspace) workspace = ts_workspace_new();
  GtkStack *stack = GTK_STACK(g_object_ref_sink(gtk_stack_new()));
  GtkWidget *other = gtk_label_new("profiler");
  gtk_stack_add_named(stack, other, "profiler");
  GtkWidget *panel = g_object_new(TS_TYPE_DEBUG_PANEL, "workspace", workspace, NULL);
  gtk_stack_add_named(stack, panel, "debugger");
  gtk_stack_set_visible_child(stack, other);
  ts_workspace_set_mode(workspace, "eager");
  g_assert_true(gtk_stack_get_visible_child(stack) == other);
  ts_workspace_set_mode(workspace, "debug");
  g_assert_true(gtk_stack_get_visible_child(stack) == panel);
  gtk_stack_set_visible_child(stack, other);
  g_object_notify(G_OBJECT(workspace), "mode");
  g_assert_true(gtk_stack_get_visible_child(stack) == panel);
  gtk_stack_set_visible_child(stack, other);
  ts_workspace_set_mode(workspace, "graph");
  g_assert_true(gtk_stack_get_visible_child(stack) == other);
  g_object_unref(stack);
}

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
  /* the history kept so far, in words: the identity (Eye), one op */
  GtkWidget *history = find_named(GTK_WIDGET(panel), "debug-history");
  g_assert_nonnull(history);
  g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(history)), ==, "live · 1 op kept");

  /* F5 goes on to the next MatMul */
  activate("win.run", NULL);
  test_wait_for(shows_op_seq, first, "the second breakpoint");
  test_wait_for(debug_stopped, NULL, "the second stop");
  g_assert_nonnull(strstr(ts_debug_panel_get_status(panel), "MatMul"));
  g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(history)), ==, "live · 2 ops kept");
  if (g_getenv("TS_TEST_SCREENSHOTS")) { /* for the README, at the default size */
    wait_drawn(GTK_WIDGET(window));
    test_wait_for(view_still, view, "the graph to reach the op");
    save_test_screenshot(GTK_WIDGET(window), "debugger.png");
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
  const char *made_on = NULL;
  ts_debug_panel_get_last_output(panel, "MatMul", &made_on);
  g_assert_cmpstr(made_on, ==, "CPU"); /* where the worker made it, as its details say */
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
  /* named once, by the tensor choice above it, not again as its title */
  TsTensorView *inspector = ts_debug_panel_get_inspector(panel);
  g_assert_nonnull(gtk_label_get_text(inspector->title_label));
  g_assert_cmpstr(gtk_label_get_text(inspector->title_label), !=, "");
  g_assert_false(gtk_widget_get_visible(GTK_WIDGET(inspector->title_label)));
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

/* Issue 23: the Timeline's Find bar.  Ctrl+F in the Timeline opens it with
 * the focus in its entry; typing finds spans, the first revealed in view
 * with "1 of N"; Enter and F3 step on, Shift+F3 back (F3 in the timeline
 * too); a query that finds nothing says so; Escape closes the bar and gives
 * the timeline the keys again. */
static void test_timeline_search(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.mode", "s", "graph");
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(TRUE));
  select_function("get_MSE");
  run_with((const char *const[]){ "f32[4]:uniform", "f32[4]:uniform", NULL });
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(FALSE));
  TsProfilerPanel *panel = ts_window_get_profiler_panel(window);
  activate("win.show-panel", "s", "profiler");
  ts_profiler_panel_show_page(panel, "timeline");
  wait_drawn(GTK_WIDGET(window));
  GtkWidget *timeline = GTK_WIDGET(ts_profiler_panel_get_timeline(panel));
  GtkWidget *entry = find_named(GTK_WIDGET(panel), "timeline-search");
  GtkWidget *status = find_named(GTK_WIDGET(panel), "timeline-search-status");
  GtkRevealer *bar = GTK_REVEALER(gtk_widget_get_ancestor(entry, GTK_TYPE_REVEALER));
  g_assert_false(gtk_revealer_get_reveal_child(bar));

  /* Ctrl+F (the page's shortcut, checked with the shortcuts window) from the timeline */
  gtk_widget_grab_focus(timeline);
  g_assert_true(gtk_widget_activate_action(timeline, "profiler.find", NULL));
  g_assert_true(gtk_revealer_get_reveal_child(bar));
  GtkWidget *focus = gtk_root_get_focus(GTK_ROOT(window));
  g_assert_true(focus == entry || gtk_widget_is_ancestor(focus, entry));

  gtk_editable_set_text(GTK_EDITABLE(entry), "get_MSE");
  test_wait_for(search_status_set, status, "the search to run");
  int n = 0;
  g_assert_cmpint(ts_timeline_get_match(TS_TIMELINE(timeline), &n), ==, 0);
  g_assert_cmpint(n, >=, 2); /* the call, its trace */
  g_autofree char *first = g_strdup_printf("1 of %d", n), *second = g_strdup_printf("2 of %d", n);
  g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(status)), ==, first);
  /* the match is in view, the bar above the timeline, not over it */
  wait_drawn(GTK_WIDGET(window));
  graphene_rect_t area;
  g_assert_true(ts_timeline_get_span_area(TS_TIMELINE(timeline), ts_timeline_get_found(TS_TIMELINE(timeline)), &area));
  double mid = area.origin.x + area.size.width / 2;
  g_assert_cmpfloat(mid, >=, 0);
  g_assert_cmpfloat(mid, <=, gtk_widget_get_width(timeline));
  graphene_rect_t bar_box;
  g_assert_true(gtk_widget_compute_bounds(GTK_WIDGET(bar), timeline, &bar_box));
  g_assert_cmpfloat(bar_box.origin.y + bar_box.size.height, <=, 0.5);
  save_test_screenshot(GTK_WIDGET(window), "timeline-search.png");

  g_signal_emit_by_name(entry, "activate"); /* Enter */
  g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(status)), ==, second);
  g_assert_true(gtk_widget_activate_action(entry, "profiler.find-previous", NULL)); /* Shift+F3 */
  g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(status)), ==, first);
  g_assert_true(gtk_widget_activate_action(entry, "profiler.find-next", NULL)); /* F3 */
  g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(status)), ==, second);
  g_assert_true(gtk_widget_activate_action(timeline, "timeline.search-previous", NULL)); /* Shift+F3 there */
  g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(status)), ==, first);

  gtk_editable_set_text(GTK_EDITABLE(entry), "no such span anywhere");
  test_wait_for(search_status_set, status, "the search to run");
  while (g_strcmp0(gtk_label_get_text(GTK_LABEL(status)), "no match") != 0)
    g_main_context_iteration(NULL, TRUE);
  g_assert_true(gtk_widget_has_css_class(entry, "error"));

  g_signal_emit_by_name(entry, "stop-search"); /* Escape */
  g_assert_false(gtk_revealer_get_reveal_child(bar));
  g_assert_true(gtk_root_get_focus(GTK_ROOT(window)) == timeline);
  activate("win.show-panel", "s", "trace-log");
}

/* Compare CPU vs Device (win.profile-devices): with SIM:0 chosen, the
 * selected function profiled on the CPU, then on SIM:0, op by op on the
 * Diff page (the CPU's run its baseline); SIM:0 stays chosen.  (Last: the
 * runs it leaves in the shared window's profiler change what later tests
 * see.) */
static void test_device_compare(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.device", "s", "SIM:0");
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(TRUE));
  select_function("sequential_model");
  activate("win.mode", "s", "graph");
  ts_run_panel_set_args(ts_window_get_run_panel(window), (const char *const[]){ "f32[4,28,28]:uniform", NULL });
  TsProfilerPanel *panel = ts_window_get_profiler_panel(window);
  TsDiffTable *diff_view = ts_profiler_panel_get_diff_table(panel);
  activate("win.profile-devices", NULL);
  wait_idle();
  test_wait_for(diff_shown, diff_view, "the CPU against SIM:0");
  const tsp_diff *diff = ts_diff_table_get_diff(diff_view);
  int both = 0;
  for (int i = 0; i < diff->n; i++) {
    const tsp_diff_row *r = &diff->rows[i];
    if (!r->device[0] || !r->device[1] || !strstr(r->key, "MatMul"))
      continue;
    g_assert_cmpstr(r->device[0], ==, "CPU");
    g_assert_false(r->device_ran[0]);
    g_assert_cmpstr(r->device[1], ==, "SIM:0");
    g_assert_true(r->device_ran[1]); /* its kernels' time, the launch beside it */
    g_assert_cmpfloat(r->p50_ns[1], >, 0);
    g_assert_cmpfloat(r->host_p50_ns[1], >, 0);
    both++;
  }
  g_assert_cmpint(both, >, 0);
  g_autofree char *kept = device_state();
  g_assert_cmpstr(kept, ==, "SIM:0");
  if (g_getenv("TS_TEST_SCREENSHOTS")) {
    activate("win.show-panel", "s", "profiler");
    wait_drawn(GTK_WIDGET(window));
    save_test_screenshot(GTK_WIDGET(window), "device-diff.png");
  }
  ts_profiler_panel_set_baseline(panel, NULL, NULL);
  wait_idle();
  /* on the CPU there is nothing to compare the CPU with: no run starts */
  activate("win.device", "s", "CPU");
  activate("win.profile-devices", NULL);
  g_assert_false(ts_engine_worker_get_busy(ts_window_get_engine(window)));
  g_assert_false(ts_window_get_busy(window));
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(FALSE));
}

int main(int argc, char **argv)
{
  return test_app_run(&argc, &argv, TRUE, (const TestAppCase[]){
    { "/app/profiler-train-step", test_profiler_train_step },
    { "/app/debug-train-backward", test_debug_train_backward },
    { "/app/profiler-panel", test_profiler_panel },
    { "/app/compute-times-after-retrace", test_compute_times_after_retrace },
    { "/app/compute-times-in-bodies", test_compute_times_in_bodies },
    { "/app/profiler-summary-counts", test_profiler_summary_counts },
    { "/app/device-selector", test_device_selector },
    { "/app/session-keeps-device", test_session_keeps_device },
    { "/app/device-option", test_device_option },
    { "/app/trace-import-process", test_trace_import_process },
    { "/app/check-eagerly", test_check_eagerly },
    { "/app/debug-panel-follows-mode", test_debug_panel_follows_mode },
    { "/app/debugger", test_debugger },
    { "/app/timeline-search", test_timeline_search },
    { "/app/device-compare", test_device_compare },
    { NULL, NULL },
  });
}
