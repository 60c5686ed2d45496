/* bench-remote-frames.c — the GUI's frame time while a large result
 * arrives from a remote worker: a window redrawn every frame (as the
 * Timeline's or the graph's animations are), its frame intervals measured
 * from the frame clock while idle and while a 64 MB result comes over ssh
 * in chunks (ts-worker-blob.h: each chunk copied on the main thread).
 * Needs $TRACESCOPE_BENCH_REMOTE (as tracescope-bench-worker) and a
 * display (xvfb-run). */
#include <gtk/gtk.h>
#include <stdio.h>
#include <stdlib.h>
#include <tracescope.h>

#include "ts-worker.h"

#define IDLE_MS 2000
#define TRANSFERS 5
#define RESULT_FLOATS "16777216" /* 64 MB */

typedef struct {
  GArray *intervals;   /* double ms, between painted frames */
  gint64 last_us;
  gboolean recording;
  guint frames;
} Frames;

static void on_after_paint(GdkFrameClock *clock, Frames *f)
{
  gint64 now = gdk_frame_clock_get_frame_time(clock);
  if (f->recording && f->last_us) {
    double ms = (double)(now - f->last_us) / 1e3;
    g_array_append_val(f->intervals, ms);
  }
  f->last_us = now;
  f->frames++;
}

static void draw(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  Frames *f = data;
  double phase = (f->frames % 120) / 120.0;
  cairo_set_source_rgb(cr, phase, 0.3, 1 - phase);
  cairo_rectangle(cr, phase * (width - 40), height / 2.0 - 20, 40, 40);
  cairo_fill(cr);
}

static gboolean tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  gtk_widget_queue_draw(widget);
  return G_SOURCE_CONTINUE;
}

static void store(GObject *source, GAsyncResult *res, gpointer data)
{
  *(GAsyncResult **)data = g_object_ref(res);
}

static GAsyncResult *await(GAsyncResult **slot)
{
  while (!*slot)
    g_main_context_iteration(NULL, TRUE);
  GAsyncResult *res = *slot;
  *slot = NULL;
  return res;
}

static gboolean flag_set(gpointer data)
{
  *(gboolean *)data = TRUE;
  return G_SOURCE_REMOVE;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median, 99th percentile and the longest of the intervals recorded. */
static void summarize(Frames *f, double *median, double *p99, double *longest)
{
  GArray *v = f->intervals;
  if (v->len == 0)
    g_error("no frames were drawn");
  qsort(v->data, v->len, sizeof(double), cmp_double);
  *median = g_array_index(v, double, v->len / 2);
  *p99 = g_array_index(v, double, MIN(v->len - 1, v->len * 99 / 100));
  *longest = g_array_index(v, double, v->len - 1);
}

static TsWorker *start_remote(const char *remote)
{
  TsWorker *w = ts_worker_new(0);
  ts_worker_set_remote(w, remote);
  GAsyncResult *slot = NULL;
  g_autoptr(GError) error = NULL;
  ts_worker_start_async(w, NULL, store, &slot);
  g_autoptr(GAsyncResult) started = await(&slot);
  if (!ts_worker_start_finish(w, started, &error))
    g_error("the worker did not start: %s", error->message);
  ts_worker_open_async(w, TS_BENCH_MODULE, NULL, store, &slot);
  g_autoptr(GAsyncResult) opened = await(&slot);
  g_autofree char *title = NULL, *path = NULL;
  g_autoptr(GPtrArray) fns = NULL;
  if (!ts_worker_open_finish(w, opened, &title, &path, &fns, &error))
    g_error("cannot open the bench module: %s", error->message);
  return w;
}

int main(void)
{
  const char *remote = g_getenv("TRACESCOPE_BENCH_REMOTE");
  if (!remote || !*remote) {
    printf("TRACESCOPE_BENCH_REMOTE is not set: no remote worker to measure\n");
    return 0;
  }
  gtk_init();
  Frames f = { .intervals = g_array_new(FALSE, FALSE, sizeof(double)) };
  GtkWidget *window = gtk_window_new();
  gtk_window_set_default_size(GTK_WINDOW(window), 800, 600);
  GtkWidget *area = gtk_drawing_area_new();
  gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(area), draw, &f, NULL);
  gtk_window_set_child(GTK_WINDOW(window), area);
  gtk_widget_add_tick_callback(area, tick, NULL, NULL);
  gtk_window_present(GTK_WINDOW(window));
  while (!gtk_widget_get_mapped(window))
    g_main_context_iteration(NULL, TRUE);
  g_signal_connect(gtk_widget_get_frame_clock(window), "after-paint", G_CALLBACK(on_after_paint), &f);
  TsWorker *w = start_remote(remote);

  gboolean done = FALSE;
  f.recording = TRUE;
  g_timeout_add(IDLE_MS, flag_set, &done);
  while (!done)
    g_main_context_iteration(NULL, TRUE);
  double idle_median, idle_p99, idle_max;
  summarize(&f, &idle_median, &idle_p99, &idle_max);
  guint idle_frames = f.intervals->len;

  g_array_set_size(f.intervals, 0);
  f.last_us = 0;
  double arriving = 0;
  for (int i = 0; i < TRANSFERS; i++) {
    GAsyncResult *slot = NULL;
    g_autoptr(GError) error = NULL;
    gint64 t0 = g_get_monotonic_time();
    ts_worker_call_async(w, (guint)i + 1, "ones", (const char *const[]){ RESULT_FLOATS, NULL }, 1, FALSE, NULL, store,
                         &slot);
    g_autoptr(GAsyncResult) res = await(&slot);
    g_autoptr(TsCallResult) r = ts_worker_call_finish(w, res, &error);
    if (!r || g_bytes_get_size(r->data) != 64u << 20)
      g_error("the 64 MB result did not come: %s", error ? error->message : "wrong size");
    arriving += (double)(g_get_monotonic_time() - t0) / 1e3;
  }
  double busy_median, busy_p99, busy_max;
  summarize(&f, &busy_median, &busy_p99, &busy_max);

  printf("\nFrame time while a 64 MB result arrives from the worker on %s (over ssh, in 1 MiB chunks)\n", remote);
  printf("  %-44s %8s %8s %8s %8s\n", "", "frames", "median", "p99", "longest");
  printf("  %-44s %8u %6.1f ms %6.1f ms %6.1f ms\n", "idle", idle_frames, idle_median, idle_p99, idle_max);
  printf("  %-44s %8u %6.1f ms %6.1f ms %6.1f ms\n", "while 64 MB results arrive", f.intervals->len, busy_median,
         busy_p99, busy_max);
  printf("  %-44s %8.0f ms each (%d results)\n", "the call, result in hand", arriving / TRANSFERS, TRANSFERS);

  ts_worker_close(w);
  while (!ts_worker_get_death(w))
    g_main_context_iteration(NULL, TRUE);
  g_object_unref(w);
  gtk_window_destroy(GTK_WINDOW(window));
  g_array_unref(f.intervals);
  return 0;
}
