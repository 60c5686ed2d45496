/* bench-console.c — the app under a flood of module output: a module
 * prints N lines on stderr (default a million) in one call, run from a
 * real window (Xvfb).  Prints the time from Run to the result, the frames
 * the window drew meanwhile and the longest gap between two of them, and
 * the longest time the main loop was away (a high-priority 1 ms timer's
 * worst lateness), and the CPU time the app spent (the worker's not
 * counted; on a busy machine the times stretch, not the CPU time), and
 * the most CPU time the main thread spent between two ticks of that
 * timer: the app stays responsive when frames keep coming.
 *   xvfb-run -a build/bench/tracescope-bench-console [N] */
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "ts-application.h"
#include "ts-console.h"
#include "ts-function-list.h"
#include "ts-loaded-module.h"
#include "ts-run-panel.h"
#include "ts-window.h"

typedef struct {
  guint frames;
  gint64 last_frame, longest_frame_gap;
  gint64 last_tick, longest_loop_gap, longest_loop_gap_at; /* when it ended */
  gint64 last_tick_cpu, longest_loop_gap_cpu; /* the main thread's CPU time then, and spent in that gap */
  gint64 most_loop_gap_cpu; /* the most CPU time the main thread spent away, in any gap */
  gint64 paint_start, longest_paint; /* a frame's layout and paint */
} Watch;

static void on_before_paint(GdkFrameClock *clock, gpointer data)
{
  ((Watch *)data)->paint_start = g_get_monotonic_time();
}

static void on_after_paint(GdkFrameClock *clock, gpointer data)
{
  Watch *w = data;
  if (w->paint_start)
    w->longest_paint = MAX(w->longest_paint, g_get_monotonic_time() - w->paint_start);
}

static gboolean on_frame(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  Watch *w = data;
  gint64 now = g_get_monotonic_time();
  if (w->last_frame)
    w->longest_frame_gap = MAX(w->longest_frame_gap, now - w->last_frame);
  w->last_frame = now;
  w->frames++;
  return G_SOURCE_CONTINUE;
}

/* The calling thread's CPU time, in µs. */
static gint64 thread_cpu_us(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64)ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

static gboolean on_tick(gpointer data)
{
  Watch *w = data;
  gint64 now = g_get_monotonic_time(), cpu = thread_cpu_us();
  if (w->last_tick)
    w->most_loop_gap_cpu = MAX(w->most_loop_gap_cpu, cpu - w->last_tick_cpu);
  if (w->last_tick && now - w->last_tick > w->longest_loop_gap) {
    w->longest_loop_gap = now - w->last_tick;
    w->longest_loop_gap_at = now;
    w->longest_loop_gap_cpu = cpu - w->last_tick_cpu;
  }
  w->last_tick = now;
  w->last_tick_cpu = cpu;
  return G_SOURCE_CONTINUE;
}

static void activate(TsWindow *window, const char *action, GVariant *param)
{
  if (!gtk_widget_activate_action_variant(GTK_WIDGET(window), action, param))
    g_error("cannot activate %s", action);
}

static void wait_idle(TsWindow *window)
{
  while (ts_window_get_busy(window))
    g_main_context_iteration(NULL, TRUE);
  while (g_main_context_iteration(NULL, FALSE))
    ;
}

int main(int argc, char **argv)
{
  const char *n = argc > 1 ? argv[1] : "1000000";
  g_setenv("GSETTINGS_BACKEND", "memory", TRUE);
  g_setenv("GSK_RENDERER", "cairo", FALSE); /* as the GUI tests: software GL under Xvfb measures only itself */
  gtk_init();
  TsApplication *app = ts_application_new(NULL);
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_NON_UNIQUE);
  if (!g_application_register(G_APPLICATION(app), NULL, NULL))
    g_error("cannot register the application");
  g_application_activate(G_APPLICATION(app));
  TsWindow *window = TS_WINDOW(gtk_application_get_windows(GTK_APPLICATION(app))->data);

  activate(window, "win.open-module", g_variant_new_string(TS_BENCH_MODULE));
  wait_idle(window);
  TsLoadedModule *module = ts_window_get_module(window);
  if (!module || g_strcmp0(ts_loaded_module_get_title(module), "benchmark module") != 0)
    g_error("the benchmark module did not open: %s", TS_BENCH_MODULE);
  if (!ts_function_list_select(ts_window_get_function_list(window), "flood", -1))
    g_error("the benchmark module has no flood()");
  activate(window, "win.mode", g_variant_new_string("eager"));
  ts_run_panel_set_args(ts_window_get_run_panel(window), (const char *const[]){ n, NULL });

  Watch w = { 0 };
  guint ticker = gtk_widget_add_tick_callback(GTK_WIDGET(window), on_frame, &w, NULL);
  GdkFrameClock *clock = gtk_widget_get_frame_clock(GTK_WIDGET(window));
  gulong before_id = g_signal_connect(clock, "before-paint", G_CALLBACK(on_before_paint), &w);
  gulong after_id = g_signal_connect(clock, "after-paint", G_CALLBACK(on_after_paint), &w);
  guint timer = g_timeout_add_full(G_PRIORITY_HIGH, 1, on_tick, &w, NULL);
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  gint64 start = g_get_monotonic_time();
  activate(window, "win.run", NULL);
  wait_idle(window);
  double seconds = (double)(g_get_monotonic_time() - start) / 1e6;
  getrusage(RUSAGE_SELF, &after);
  double cpu = (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec + after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
               (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec + after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6;
  g_source_remove(timer);
  gtk_widget_remove_tick_callback(GTK_WIDGET(window), ticker);
  g_signal_handler_disconnect(clock, before_id);
  g_signal_handler_disconnect(clock, after_id);

  g_autofree char *result = ts_run_panel_dup_result_text(ts_window_get_run_panel(window));
  if (!result || !*result)
    g_error("the call failed: %s", ts_run_panel_get_error(ts_window_get_run_panel(window)));
  GListModel *console_lines = ts_console_get_lines(ts_window_get_console(window));
  guint lines = g_list_model_get_n_items(console_lines);
  printf("flood(%s): %.2f s from Run to the result (%s), the app's CPU time %.2f s\n", n, seconds, result, cpu);
  printf("  %u frames drawn meanwhile (%.1f per second), longest gap between two %.0f ms\n", w.frames,
         w.frames / seconds, (double)w.longest_frame_gap / 1e3);
  printf("  the longest frame took %.0f ms; the main loop away at most %.0f ms (ending %.2f s after Run, "
         "%.0f ms of it on the CPU: the rest waiting for one); %u console lines kept\n",
         (double)w.longest_paint / 1e3, (double)w.longest_loop_gap / 1e3,
         (double)(w.longest_loop_gap_at - start) / 1e6, (double)w.longest_loop_gap_cpu / 1e3, lines);
  printf("  the most CPU time the main loop was away: %.1f ms (what the machine's load cannot stretch)\n",
         (double)w.most_loop_gap_cpu / 1e3);
  gtk_window_destroy(GTK_WINDOW(window));
  while (g_main_context_iteration(NULL, FALSE))
    ;
  g_object_unref(app);
  return 0;
}
