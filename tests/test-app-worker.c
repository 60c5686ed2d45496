/* test-app-worker.c — GUI tests of the worker process seen from the window: deaths, floods, descriptors, remote connections. */
#include "test-app.h"
#include "ts-console-view.h"
#include "ts-worker.h"

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

static void open_hostile(void)
{
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, "hostile.so", NULL);
  activate("win.open-module", "s", path);
  wait_idle();
  g_assert_cmpstr(ts_loaded_module_get_title(ts_window_get_module(window)), ==, "hostile test module");
}

static void add_console_lines(guint from, guint to)
{
  for (guint i = from; i < to; i++) {
    g_autofree char *text = g_strdup_printf("line %u", i);
    ts_console_add_output(ts_window_get_console(window), 0, "", g_get_real_time(), TS_CONSOLE_SOURCE_HOST, text);
  }
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

static void wait_frames(guint n)
{
  int frames = 0;
  for (guint i = 0; i < n; i++) {
    frames = 0;
    gtk_widget_add_tick_callback(GTK_WIDGET(window), count_frame, &frames, NULL);
    test_wait_for(two_frames, &frames, "two frames");
  }
}

/* A print waits for its line among the last 64 prints: a flood of prints
 * whose lines never come does not make every line look through all of
 * them; a recent one still finds its line. */
static void test_console_prints_wait_bounded(void)
{
  TsConsole *console = ts_window_get_console(window);
  ts_console_clear(console);
  for (guint i = 0; i < 10000; i++) {
    g_autofree char *text = g_strdup_printf("print %u", i);
    ts_console_note_print(console, 7, text);
  }
  ts_console_add_output(console, 7, "f()", g_get_real_time(), TS_CONSOLE_SOURCE_HOST, "print 0");
  ts_console_add_output(console, 7, "f()", g_get_real_time(), TS_CONSOLE_SOURCE_HOST, "print 9990");
  assert_line(0, "print 0", TS_CONSOLE_SOURCE_HOST, NULL);
  assert_line(1, "print 9990", TS_CONSOLE_SOURCE_PRINT, NULL);
  ts_console_clear(console);
}

/* The console's view follows the end while at the end; scrolled up, it
 * stays on its lines as the oldest go (the rows above it that went are
 * taken off its place) and new lines do not move it. */
static void test_console_view_keeps_place(void)
{
  TsConsole *console = ts_window_get_console(window);
  ts_console_clear(console);
  activate("win.show-panel", "s", "console");
  TsConsoleView *view = TS_CONSOLE_VIEW(find_widget(GTK_WIDGET(console), TS_TYPE_CONSOLE_VIEW));
  GtkAdjustment *adj = gtk_scrollable_get_vadjustment(GTK_SCROLLABLE(view));
  add_console_lines(0, TS_CONSOLE_MAX_LINES / 2);
  wait_frames(1);
  g_assert_true(ts_console_view_get_at_end(view));
  double row = gtk_adjustment_get_step_increment(adj), page = gtk_adjustment_get_page_size(adj);
  g_assert_cmpfloat(row, >, 0);
  g_assert_cmpfloat(page, >, 0);
  g_assert_cmpfloat(gtk_adjustment_get_value(adj), ==, gtk_adjustment_get_upper(adj) - page);
  g_assert_cmpfloat(gtk_adjustment_get_upper(adj), ==, row * (TS_CONSOLE_MAX_LINES / 2));
  /* more lines: still at the end */
  add_console_lines(TS_CONSOLE_MAX_LINES / 2, TS_CONSOLE_MAX_LINES);
  wait_frames(1);
  g_assert_true(ts_console_view_get_at_end(view));
  g_assert_cmpfloat(gtk_adjustment_get_value(adj), ==, gtk_adjustment_get_upper(adj) - page);
  /* scrolled up to line 3000: new lines push 500 out, the marker comes first */
  gtk_adjustment_set_value(adj, 3000 * row);
  g_assert_false(ts_console_view_get_at_end(view));
  add_console_lines(TS_CONSOLE_MAX_LINES, TS_CONSOLE_MAX_LINES + 500);
  wait_frames(1);
  g_assert_false(ts_console_view_get_at_end(view));
  g_assert_cmpfloat(gtk_adjustment_get_value(adj), ==, (3000 - 500 + 1) * row);
  g_assert_cmpuint(n_lines(), ==, TS_CONSOLE_MAX_LINES + 1);
  /* back at the end, it follows again */
  gtk_adjustment_set_value(adj, gtk_adjustment_get_upper(adj) - page);
  g_assert_true(ts_console_view_get_at_end(view));
  add_console_lines(0, 10);
  wait_frames(1);
  g_assert_cmpfloat(gtk_adjustment_get_value(adj), ==, gtk_adjustment_get_upper(adj) - page);
  ts_console_clear(console);
}

/* What a flood costs the main loop: the lines handled in one iteration
 * (counted from one preparation of this source, which comes first, to the
 * next), the console's changes and the rows drawn in one frame. */
typedef struct {
  GSource source;
  guint lines, most_lines;
  guint changes, most_changes;
  guint frames, most_drawn;
  gint64 last_frame, longest_gap; /* reported, not asserted: it is the machine's load too */
  TsConsoleView *view;
  guint tick_id;
} FloodWatch;

static gboolean flood_prepare(GSource *source, int *timeout)
{
  FloodWatch *w = (FloodWatch *)source;
  w->most_lines = MAX(w->most_lines, w->lines);
  w->lines = 0;
  *timeout = -1;
  return FALSE;
}

static gboolean flood_dispatch(GSource *source, GSourceFunc callback, gpointer data)
{
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs flood_funcs = { flood_prepare, NULL, flood_dispatch, NULL, NULL, NULL };

static void flood_line(TsEngineWorker *worker, guint call_id, const char *label, gint64 time_us, int source,
                       const char *text, FloodWatch *w)
{
  w->lines++;
}

static void flood_changed(GListModel *model, guint position, guint removed, guint added, FloodWatch *w)
{
  w->changes++;
}

static gboolean flood_frame(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  FloodWatch *w = data;
  gint64 now = g_get_monotonic_time();
  if (w->last_frame)
    w->longest_gap = MAX(w->longest_gap, now - w->last_frame);
  w->last_frame = now;
  w->frames++;
  w->most_changes = MAX(w->most_changes, w->changes);
  w->changes = 0;
  w->most_drawn = MAX(w->most_drawn, ts_console_view_get_n_drawn(w->view));
  return G_SOURCE_CONTINUE;
}

static FloodWatch *flood_watch_new(void)
{
  FloodWatch *w = (FloodWatch *)g_source_new(&flood_funcs, sizeof(FloodWatch));
  g_source_set_priority(&w->source, G_PRIORITY_HIGH);
  g_source_attach(&w->source, NULL);
  w->view = TS_CONSOLE_VIEW(find_widget(GTK_WIDGET(ts_window_get_console(window)), TS_TYPE_CONSOLE_VIEW));
  g_signal_connect(ts_window_get_engine(window), "output", G_CALLBACK(flood_line), w);
  g_signal_connect(ts_console_get_lines(ts_window_get_console(window)), "items-changed", G_CALLBACK(flood_changed), w);
  w->tick_id = gtk_widget_add_tick_callback(GTK_WIDGET(window), flood_frame, w, NULL);
  return w;
}

static void flood_watch_free(FloodWatch *w)
{
  g_signal_handlers_disconnect_by_data(ts_window_get_engine(window), w);
  g_signal_handlers_disconnect_by_data(ts_console_get_lines(ts_window_get_console(window)), w);
  gtk_widget_remove_tick_callback(GTK_WIDGET(window), w->tick_id);
  g_source_destroy(&w->source);
  g_source_unref(&w->source);
}

/* The view draws the rows in view, not the lines kept: a row is at least
 * a line of text tall (10 px, generously) */
static void assert_drawn_in_view(FloodWatch *w)
{
  g_assert_cmpuint(w->most_drawn, >, 0);
  g_assert_cmpuint(w->most_drawn, <=, (guint)gtk_widget_get_height(GTK_WIDGET(w->view)) / 10 + 1);
}

/* 50000 lines on stderr (a million in test-worker-hostile): the window
 * keeps drawing frames while they come, each main-loop iteration handles
 * at most what one read of each pipe holds (TS_WORKER_OUTPUT_READ_MAX
 * bytes: each line here takes at least 13), each frame announces the
 * lines that came at once and draws only the rows in view, no line
 * becomes an object, and the console keeps the last TS_CONSOLE_MAX_LINES
 * after a line saying how many it dropped. */
static void test_output_flood(void)
{
  open_hostile();
  clear_logs();
  select_function("flood");
  activate("win.mode", "s", "eager");
  activate("win.show-panel", "s", "console");
  TsConsoleLines *lines = TS_CONSOLE_LINES(ts_console_get_lines(ts_window_get_console(window)));
  guint made = ts_console_lines_get_n_made(lines);
  FloodWatch *w = flood_watch_new();
  run_with((const char *const[]){ "50000", NULL });
  g_autofree char *text = result_text();
  g_assert_cmpstr(text, ==, "Tensor(50000, shape=(), dtype=int32)");
  g_test_message("%u frames while 50000 lines came, the longest gap between two %.0f ms; at most %u lines in "
                 "an iteration, %u changes and %u rows drawn in a frame",
                 w->frames, w->longest_gap / 1e3, w->most_lines, w->most_changes, w->most_drawn);
  g_assert_cmpuint(w->frames, >, 1);
  g_assert_cmpuint(w->most_lines, >, 0);
  g_assert_cmpuint(w->most_lines, <=, 2 * (TS_WORKER_OUTPUT_READ_MAX / strlen("flood line 0\n") + 1));
  g_assert_cmpuint(w->most_changes, <=, 2); /* the front's lines and the marker; the new lines */
  assert_drawn_in_view(w);
  g_assert_true(ts_console_view_get_at_end(w->view));
  g_assert_cmpuint(ts_console_lines_get_n_made(lines), ==, made);
  g_assert_cmpuint(n_lines(), ==, TS_CONSOLE_MAX_LINES + 1);
  g_autofree char *dropped = g_strdup_printf("… %u lines dropped", 50000 - TS_CONSOLE_MAX_LINES);
  assert_line(0, dropped, TS_CONSOLE_SOURCE_WORKER, NULL);
  assert_line(1, "flood line 40000", TS_CONSOLE_SOURCE_STDERR, NULL);
  assert_line(TS_CONSOLE_MAX_LINES, "flood line 49999", TS_CONSOLE_SOURCE_STDERR, NULL);

  /* a whole console of new lines at once: one frame's changes, the rows in view drawn */
  made = ts_console_lines_get_n_made(lines);
  add_console_lines(0, TS_CONSOLE_MAX_LINES);
  w->changes = w->most_changes = w->most_drawn = 0; /* n_lines() above flushed the last lines, outside a frame */
  guint frames = w->frames;
  while (w->frames < frames + 3)
    g_main_context_iteration(NULL, TRUE);
  g_assert_cmpuint(w->most_changes, <=, 2);
  assert_drawn_in_view(w);
  g_assert_cmpuint(ts_console_lines_get_n_made(lines), ==, made);
  g_assert_cmpuint(n_lines(), ==, TS_CONSOLE_MAX_LINES + 1);
  flood_watch_free(w);

  /* one 64 MiB line: cut, saying so */
  select_function("long_line");
  run_with((const char *const[]){ "64", NULL });
  g_autoptr(TsConsoleLine) line = console_line(n_lines() - 1);
  g_autofree char *said = g_strdup_printf(" … (%u more bytes not shown)", (64u << 20) - (16u << 10));
  g_assert_true(g_str_has_suffix(ts_console_line_get_text(line), said));
  g_assert_cmpuint(strlen(ts_console_line_get_text(line)), ==, (16u << 10) + strlen(said));
  activate("win.mode", "s", "graph");
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

/* A function whose C code crashes the worker while its first call traces
 * it: the trace log and the graph pane say tracing failed (not "Not Traced
 * Yet: run it in graph mode", which the user just did); the pane still
 * does in the fresh worker. */
static void test_crash_while_tracing(void)
{
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, "misbehave.so", NULL);
  activate("win.open-module", "s", path);
  wait_idle();
  activate("win.mode", "s", "graph");
  TsGraphPane *pane = ts_window_get_graph_pane(window);
  TsLoadedModule *before = ts_window_get_module(window);
  guint traces = n_traces();
  select_function("segv");
  ts_run_panel_set_args(ts_window_get_run_panel(window), (const char *const[]){ "f32[2]=1,-1", NULL });
  activate("win.run", NULL);
  wait_idle();
  g_assert_true(g_str_has_prefix(ts_run_panel_get_error(ts_window_get_run_panel(window)),
                                 "segv crashed: SIGSEGV (segmentation fault"));
  /* the trace log has the trace that failed, as for one that failed with an error */
  g_assert_cmpuint(n_traces(), ==, traces + 1);
  TsTraceEntry *failed = trace_row(traces);
  g_assert_true(ts_trace_entry_get_failed(failed));
  g_assert_cmpstr(ts_trace_entry_get_function(failed), ==, "segv");
  g_assert_cmpstr(ts_trace_entry_get_signature(failed), ==, "(x: f32[2]=1,-1)");
  g_assert_cmpstr(ts_trace_entry_get_kind(failed), ==, "tracing failed");
  g_assert_true(g_str_has_prefix(ts_trace_entry_get_reason(failed), "segv crashed: SIGSEGV"));
  /* no duration was measured: the row shows a dash, not "0.000 ms" */
  g_assert_cmpuint(ts_trace_entry_get_duration_ns(failed), ==, 0);
  g_autofree char *duration = NULL;
  g_object_get(failed, "duration-text", &duration, NULL);
  g_assert_cmpstr(duration, ==, "—");
  wait_drawn(GTK_WIDGET(window));
  save_test_screenshot(GTK_WIDGET(window), "crash-while-tracing.png");
  test_wait_for(module_changed, before, "the fresh worker");
  wait_idle();
  g_assert_cmpstr(ts_graph_pane_get_status_title(pane), ==, "Tracing segv Failed");
  select_function("good");
  g_assert_cmpstr(ts_graph_pane_get_status_title(pane), ==, "good Is Not Traced Yet");
  select_function("segv");
  g_assert_cmpstr(ts_graph_pane_get_status_title(pane), ==, "Tracing segv Failed");
  activate("win.open-module", "s", "seeds");
  wait_idle();
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

  g_autofree char *contents = NULL;
  gsize length;
  g_autofree char *path = copy_of_tiny("remote-tiny.so", &contents, &length);
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

int main(int argc, char **argv)
{
  return test_app_run(&argc, &argv, TRUE, (const TestAppCase[]){
    { "/app/worker-survives", test_worker_survives },
    { "/app/console-keeps-last-lines", test_console_keeps_last_lines },
    { "/app/console-view-keeps-place", test_console_view_keeps_place },
    { "/app/console-prints-wait-bounded", test_console_prints_wait_bounded },
    { "/app/worker/output-flood", test_output_flood },
    { "/app/worker/fds-and-children", test_worker_fds_and_children },
    { "/app/worker/crash-while-loading", test_crash_while_loading },
    { "/app/worker/crash-keeps-result", test_crash_keeps_result },
    { "/app/worker/crash-while-tracing", test_crash_while_tracing },
    { "/app/worker/remote-connection-lost", test_remote_connection_lost },
    { "/app/worker/remote-source-reload", test_remote_source_reload },
    { "/app/worker/remote-transfer-progress", test_remote_transfer_progress },
    { NULL, NULL },
  });
}
