/* bench-timeline.c — the timeline's frame time: a 1600 x 900 frame drawn
 * offscreen (a Cairo image surface, through the same draw function the
 * widget's snapshot uses) over 10 million op events all in view, then at
 * deeper zooms; prints the worst median against the 16 ms target.  A
 * benchmark, not a test.  TS_BENCH_TIMELINE_PNG=dir saves each zoom's
 * frame there, to look at. */
#include <cairo.h>
#include <glib.h>
#include <stdio.h>
#include <time.h>

#include "ts-timeline-render.h"

#define WIDTH 1600
#define HEIGHT 900
#define FRAMES 7

/* n op events as a graph run's: a call per 1000 ops, a While around ops
 * 0-9 of every 50, and three threads' worth of tracks (the last two short);
 * with memory rising and falling with the ops. */
static tsp_session *session(uint64_t n)
{
  tsp_session *s = tsp_session_new_empty();
  uint8_t cpu = tsp_intern_device(s, "CPU");
  uint32_t fn = tsp_intern_string(s, "model");
  uint32_t nodes[100];
  for (int i = 0; i < 100; i++) {
    char name[64];
    g_snprintf(name, sizeof name, "dense_%d/MatMul", i);
    tsp_node_info info = { .name = name, .scope = "model", .op = i % 4 ? TS_OP_MATMUL : TS_OP_ADD };
    nodes[i] = tsp_add_node(s, &info);
  }
  int threads[3] = { tsp_session_add_thread(s, "main", 1), tsp_session_add_thread(s, "pool 1", 2),
                     tsp_session_add_thread(s, "pool 2", 3) };
  uint64_t t = 1000000000, run_start = 0, loop_start = 0;
  int64_t live = 0;
  for (uint64_t i = 0; i < n; i++) {
    int th = i % 1000 < 900 ? 0 : 1 + (int)(i % 2);
    /* ops are 51 ns apart at least: a call 20 ns around its ops, a loop 10 */
    if (i % 1000 == 0)
      run_start = t - 20;
    if (i % 50 == 0)
      loop_start = t - 10;
    uint64_t end = t + 850 + i % 300;
    tsp_event e = { .start_ns = t, .end_ns = end, .run_id = 1 + i / 1000, .node = nodes[i % 100],
                    .op = (uint16_t)(i % 4 ? TS_OP_MATMUL : TS_OP_ADD), .kind = TSP_EVENT_OP, .device = cpu };
    tsp_record_on(s, threads[th], &e);
    if (th == 0 && i % 50 == 9) {
      tsp_event w = { .start_ns = loop_start, .end_ns = end + 10, .run_id = e.run_id, .op = TS_OP_WHILE,
                      .kind = TSP_EVENT_OP, .device = cpu };
      tsp_record_on(s, threads[0], &w);
    }
    if (i % 1000 == 899) {
      tsp_event c = { .start_ns = run_start, .end_ns = end + 20, .run_id = e.run_id, .node = fn,
                      .op = TSP_MODE_GRAPH, .kind = TSP_EVENT_CALL };
      tsp_record_on(s, threads[0], &c);
    }
    if (i % 10 == 0) {
      int64_t delta = i % 1000 < 500 ? 4096 : -4096;
      live += delta;
      tsp_event m;
      tsp_memory_event_init(&m, t, delta, live, cpu, TS_MEMORY_TENSORS, 0);
      tsp_record_on(s, threads[0], &m);
    }
    t += 1200;
  }
  return s;
}

/* This thread's CPU time: on a shared machine, wall time also counts the
 * other processes' turns. */
static double cpu_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(void)
{
  const uint64_t n = 10000000;
  printf("Tracescope timeline benchmark: %u cores; median of %d frames a zoom\n", g_get_num_processors(),
         FRAMES);
  tsp_session *s = session(n);
  gint64 t0 = g_get_monotonic_time();
  tsp_lod *lod = tsp_lod_build(s);
  printf("  %-58s %14.2f s   (the index adds %.1f B an event)\n", "LOD index, 10M op events: build",
         (double)(g_get_monotonic_time() - t0) / 1e6, (double)tsp_lod_bytes(lod) / (double)tsp_session_n_events(s));
  uint64_t start, end;
  tsp_lod_range(lod, &start, &end);
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, WIDTH, HEIGHT);
  cairo_t *cr = cairo_create(surface);
  double worst = 0, worst_cpu = 0;
  for (double zoom = 1; zoom <= 1e6; zoom *= 10) {
    double visible = (double)(end - start) / zoom;
    ts_timeline_view v = {
      .lod = lod, .ns_per_px = visible / (WIDTH - TS_TIMELINE_GUTTER),
      .start_ns = (double)start + ((double)(end - start) - visible) / 2, .width = WIDTH, .height = HEIGHT,
    };
    double ms[FRAMES], cpu[FRAMES];
    for (int f = 0; f < FRAMES; f++) {
      v.start_ns += v.ns_per_px * 0.37; /* a pan between frames: nothing cached */
      gint64 a = g_get_monotonic_time();
      double c = cpu_ms();
      ts_timeline_render(cr, &v);
      cairo_surface_flush(surface);
      cpu[f] = cpu_ms() - c;
      ms[f] = (double)(g_get_monotonic_time() - a) / 1e3;
    }
    qsort(ms, FRAMES, sizeof *ms, cmp_double);
    qsort(cpu, FRAMES, sizeof *cpu, cmp_double);
    worst = MAX(worst, ms[FRAMES / 2]);
    worst_cpu = MAX(worst_cpu, cpu[FRAMES / 2]);
    const char *dir = g_getenv("TS_BENCH_TIMELINE_PNG");
    if (dir) {
      g_autofree char *path = g_strdup_printf("%s/zoom-%07.0f.png", dir, zoom);
      cairo_surface_write_to_png(surface, path);
    }
    g_autofree char *span = ts_timeline_format_ns(visible);
    printf("  frame 1600x900, %-41s %13.2f ms   (%.2f ms of CPU)\n", span, ms[FRAMES / 2], cpu[FRAMES / 2]);
  }
  printf("  %-58s %13.2f ms   %-12s %s\n", "frame 1600x900, 10M events, worst over the zooms", worst,
         "<= 16 ms", worst <= 16 ? "ok" : "MISSED");
  printf("  %-58s %13.2f ms   %-12s %s\n", "  the same in this thread's CPU time", worst_cpu, "<= 16 ms",
         worst_cpu <= 16 ? "ok" : "MISSED");
  cairo_destroy(cr);
  cairo_surface_destroy(surface);
  tsp_lod_free(lod);
  tsp_session_free(s);
  return 0;
}
