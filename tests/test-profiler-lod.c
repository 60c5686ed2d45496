/* test-profiler-lod.c — the timeline's level-of-detail index (profiler/lod.c)
 * on synthetic sessions with known answers: nesting depths from time
 * containment, queries that give spans one by one when zoomed in and
 * per-pixel summaries (count, busy fraction, dominant op) when zoomed out,
 * live memory as steps, whole-session search in time order; and a real
 * recording of a seed program with its memory events. */
#include <glib.h>
#include <string.h>
#include <tracescope-profiler.h>
#include <tracescope.h>

#include "test-quiet.h"

static void record_op(tsp_session *s, int thread, int op, uint32_t node, uint64_t start, uint64_t end)
{
  tsp_event e = { .start_ns = start, .end_ns = end, .run_id = 1, .node = node, .op = (uint16_t)op,
                  .kind = TSP_EVENT_OP };
  tsp_record_on(s, thread, &e);
}

static void record_call(tsp_session *s, int thread, const char *fn, uint64_t start, uint64_t end)
{
  tsp_event e = { .start_ns = start, .end_ns = end, .run_id = 1, .node = tsp_intern_string(s, fn),
                  .op = TSP_MODE_GRAPH, .kind = TSP_EVENT_CALL };
  tsp_record_on(s, thread, &e);
}

static uint32_t add_node(tsp_session *s, const char *name, const char *scope, int op)
{
  tsp_node_info info = { .name = name, .scope = scope, .op = op };
  return tsp_add_node(s, &info);
}

/* A call 0-1000 holding an If 100-500 (with two ops inside) and an op at
 * 600-700, recorded as they end (inner ones first), and a trace. */
static void test_depths(void)
{
  tsp_session *s = tsp_session_new_empty();
  int t = tsp_session_add_thread(s, "main", 1);
  record_op(s, t, TS_OP_MATMUL, 0, 150, 200);
  record_op(s, t, TS_OP_ADD, 0, 200, 300);
  record_op(s, t, TS_OP_IF, 0, 100, 500);
  record_op(s, t, TS_OP_RELU, 0, 600, 700);
  tsp_event tr = { .start_ns = 20, .end_ns = 90, .node = tsp_intern_string(s, "f"),
                   .loc = tsp_intern_string(s, "first call"), .kind = TSP_EVENT_TRACE };
  tsp_record_on(s, t, &tr);
  record_call(s, t, "f", 0, 1000);
  tsp_lod *lod = tsp_lod_build(s);
  g_assert_cmpint(tsp_lod_n_depths(lod, t), ==, 3);
  uint64_t a, b;
  tsp_lod_range(lod, &a, &b);
  g_assert_cmpuint(a, ==, 0);
  g_assert_cmpuint(b, ==, 1000);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(tsp_lod_span));
  /* fine resolution: every span on its own, in time order */
  const int want_ops[3][2] = { { -1, -1 }, { TS_OP_IF, TS_OP_RELU }, { TS_OP_MATMUL, TS_OP_ADD } };
  for (int d = 0; d < 3; d++) {
    g_array_set_size(out, 0);
    int n = tsp_lod_query(lod, t, d, 0, 1000, 1.0, out);
    g_assert_cmpint(n, ==, d == 0 ? 1 : 2);
    for (int i = 0; i < n; i++) {
      tsp_lod_span *sp = &g_array_index(out, tsp_lod_span, i);
      g_assert_cmpuint(sp->count, ==, 1);
      g_assert_cmpfloat(sp->busy, ==, 1.0f);
      g_assert_cmpuint(sp->start_ns, ==, sp->event->start_ns);
      g_assert_cmpint(tsp_lod_depth_of(lod, t, sp->event), ==, d);
      if (d == 0)
        g_assert_cmpint(sp->event->kind, ==, TSP_EVENT_CALL);
      else
        g_assert_cmpint(sp->op, ==, want_ops[d][i]);
    }
  }
  /* a window holding only the second op of depth 1 */
  g_array_set_size(out, 0);
  g_assert_cmpint(tsp_lod_query(lod, t, 1, 550, 650, 1.0, out), ==, 1);
  g_assert_cmpint(g_array_index(out, tsp_lod_span, 0).op, ==, TS_OP_RELU);
  int n_traces;
  const tsp_event *const *traces = tsp_lod_traces(lod, t, &n_traces);
  g_assert_cmpint(n_traces, ==, 1);
  g_assert_cmpuint(traces[0]->start_ns, ==, 20);
  g_array_unref(out);
  tsp_lod_free(lod);
  tsp_session_free(s);
}

/* 100,000 ops of 10 ns every 20 ns (three MatMuls to one Add), with a gap
 * holding one op of 50 µs: zoomed out, about one summary a pixel whose
 * counts add up to every op, half busy, MatMul dominant; the long op still
 * on its own. */
#define DENSE 100000
static void test_summaries(void)
{
  tsp_session *s = tsp_session_new_empty();
  int t = tsp_session_add_thread(s, "main", 1);
  uint64_t at = 0;
  for (int i = 0; i < DENSE; i++) {
    if (i == DENSE / 2) {
      record_op(s, t, TS_OP_WHILE, 0, at, at + 50000);
      at += 50000;
    }
    record_op(s, t, i % 4 == 3 ? TS_OP_ADD : TS_OP_MATMUL, 0, at, at + 10);
    at += 20;
  }
  tsp_lod *lod = tsp_lod_build(s);
  g_assert_cmpint(tsp_lod_n_depths(lod, t), ==, 1);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(tsp_lod_span));
  const int pixels = 1000;
  for (double zoom = 1; zoom <= 64; zoom *= 4) {
    /* the whole session, then a window of 1/zoom of it in the middle */
    uint64_t width = (uint64_t)((double)at / zoom), from = (at - width) / 2, to = from + width;
    double r = (double)width / pixels;
    g_array_set_size(out, 0);
    int n = tsp_lod_query(lod, t, 0, from, to, r, out);
    g_assert_cmpint(n, <=, 2 * pixels + 2);
    uint64_t count = 0, brute = 0, prev_end = 0;
    bool saw_while = false;
    for (int i = 0; i < n; i++) {
      tsp_lod_span *sp = &g_array_index(out, tsp_lod_span, i);
      g_assert_cmpuint(sp->start_ns, >=, prev_end);
      prev_end = sp->end_ns;
      count += sp->count;
      if (sp->op == TS_OP_WHILE) {
        saw_while = true;
        g_assert_cmpuint(sp->count, ==, 1);
        g_assert_cmpuint(sp->end_ns - sp->start_ns, ==, 50000);
      } else if (sp->count > 4) {
        g_assert_cmpint(sp->op, ==, TS_OP_MATMUL);
        g_assert_cmpfloat(sp->busy, >, 0.4f);
        g_assert_cmpfloat(sp->busy, <, 0.6f);
        g_assert_cmpfloat((double)(sp->end_ns - sp->start_ns), <, 2 * r);
      }
    }
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));)
      brute += e->end_ns > from && e->start_ns < to;
    /* summaries at the window's edges may hold a few spans just outside it */
    g_assert_cmpuint(count, >=, brute);
    g_assert_cmpuint(count, <=, brute + (uint64_t)(4 * r / 20) + 4);
    if (zoom == 1)
      g_assert_cmpuint(count, ==, DENSE + 1);
    g_assert_true(saw_while);
  }
  /* zoomed in to 1 ns a pixel: ops one by one */
  g_array_set_size(out, 0);
  g_assert_cmpint(tsp_lod_query(lod, t, 0, 1000, 1100, 1.0, out), ==, 5);
  g_assert_cmpuint(g_array_index(out, tsp_lod_span, 0).count, ==, 1);
  g_assert_cmpuint(tsp_lod_bytes(lod), >, 0);
  g_array_unref(out);
  tsp_lod_free(lod);
  tsp_session_free(s);
}

/* Steps of live bytes: each change when zoomed in, one step a pixel with
 * the pixel's highest level when zoomed out; tensors and arenas apart,
 * each with its peak and when it was reached. */
/* The spans themselves in a window: three instants at one time stay
 * three (a summary would fold them), a span ending at the window's start
 * and one starting at its end count, the latest first backward, at most
 * max; tsp_lod_depth_of finds an instant. */
static void test_spans(void)
{
  tsp_session *s = tsp_session_new_empty();
  int t = tsp_session_add_thread(s, "main", 1);
  record_op(s, t, TS_OP_ADD, 0, 100, 200);
  for (int i = 0; i < 3; i++)
    record_op(s, t, TS_OP_MUL, 0, 300, 300);
  record_op(s, t, TS_OP_SUB, 0, 400, 450);
  record_op(s, t, TS_OP_DIV, 0, 600, 700);
  tsp_lod *lod = tsp_lod_build(s);
  GPtrArray *out = g_ptr_array_new();
  g_assert_cmpint(tsp_lod_spans(lod, t, 0, 200, 400, false, 100, out), ==, 5);
  g_assert_cmpint(((const tsp_event *)out->pdata[0])->op, ==, TS_OP_ADD); /* ends at 200 */
  for (int i = 1; i < 4; i++)
    g_assert_cmpint(((const tsp_event *)out->pdata[i])->op, ==, TS_OP_MUL);
  g_assert_cmpint(((const tsp_event *)out->pdata[4])->op, ==, TS_OP_SUB); /* starts at 400 */
  g_assert_cmpint(tsp_lod_depth_of(lod, t, out->pdata[2]), ==, 0);
  g_ptr_array_set_size(out, 0);
  g_assert_cmpint(tsp_lod_spans(lod, t, 0, 0, 1000, true, 2, out), ==, 2);
  g_assert_cmpint(((const tsp_event *)out->pdata[0])->op, ==, TS_OP_DIV);
  g_assert_cmpint(((const tsp_event *)out->pdata[1])->op, ==, TS_OP_SUB);
  g_ptr_array_set_size(out, 0);
  g_assert_cmpint(tsp_lod_spans(lod, t, 0, 460, 590, false, 100, out), ==, 0);
  g_ptr_array_unref(out);
  tsp_lod_free(lod);
  tsp_session_free(s);
}

static void test_memory(void)
{
  tsp_session *s = tsp_session_new_empty();
  int t = tsp_session_add_thread(s, "main", 1);
  uint8_t cpu = tsp_intern_device(s, "CPU");
  int64_t live = 0, peak = 0, lives[1000];
  for (int i = 0; i < 1000; i++) {
    int64_t delta = i % 2 ? -100 : 100 + i; /* up, then down by 100: a rising saw */
    live += delta;
    peak = MAX(peak, live);
    lives[i] = live;
    tsp_event e;
    tsp_memory_event_init(&e, (uint64_t)i * 10, delta, live, cpu, TS_MEMORY_TENSORS, 0);
    tsp_record_on(s, t, &e);
  }
  /* an arena allocated before the tensors and freed at 5000: a series of its own */
  tsp_event e;
  tsp_memory_event_init(&e, 5000, -4096, 0, cpu, TS_MEMORY_ARENA, 0);
  tsp_record_on(s, t, &e);
  tsp_memory_event_init(&e, 3, 4096, 4096, cpu, TS_MEMORY_ARENA, 0);
  tsp_record_on(s, t, &e);
  tsp_lod *lod = tsp_lod_build(s);
  g_assert_cmpint(tsp_lod_n_memory(lod), ==, 2);
  g_assert_cmpuint(tsp_lod_memory_device(lod, 0), ==, cpu);
  g_assert_cmpint(tsp_lod_memory_kind(lod, 0), ==, TS_MEMORY_TENSORS);
  g_assert_cmpint(tsp_lod_memory_peak(lod, 0), ==, peak);
  g_assert_cmpuint(tsp_lod_memory_peak_ns(lod, 0), ==, 9980); /* the saw's last rise */
  g_assert_cmpuint(tsp_lod_memory_device(lod, 1), ==, cpu);
  g_assert_cmpint(tsp_lod_memory_kind(lod, 1), ==, TS_MEMORY_ARENA);
  g_assert_cmpint(tsp_lod_memory_peak(lod, 1), ==, 4096);
  g_assert_cmpuint(tsp_lod_memory_peak_ns(lod, 1), ==, 3);
  GArray *arena = g_array_new(FALSE, FALSE, sizeof(tsp_lod_level));
  g_assert_cmpint(tsp_lod_memory_query(lod, 1, 0, 10000, 1.0, arena), ==, 2);
  g_assert_cmpuint(g_array_index(arena, tsp_lod_level, 0).time_ns, ==, 3); /* sorted by time */
  g_assert_cmpint(g_array_index(arena, tsp_lod_level, 1).live_bytes, ==, 0);
  g_array_unref(arena);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(tsp_lod_level));
  g_assert_cmpint(tsp_lod_memory_query(lod, 0, 0, 10000, 1.0, out), ==, 1000);
  g_assert_cmpint(g_array_index(out, tsp_lod_level, 0).live_bytes, ==, 100);
  g_assert_cmpint(g_array_index(out, tsp_lod_level, 1).live_bytes, ==, 0);
  g_array_set_size(out, 0);
  /* 100 ns a pixel: ten changes a pixel, ending on a fall after the highest */
  g_assert_cmpint(tsp_lod_memory_query(lod, 0, 0, 10000, 100.0, out), ==, 100);
  for (int p = 0; p < 100; p++) {
    tsp_lod_level *l = &g_array_index(out, tsp_lod_level, p);
    g_assert_cmpuint(l->time_ns, ==, (uint64_t)p * 100);
    g_assert_cmpint(l->live_bytes, ==, lives[p * 10 + 9]);
    g_assert_cmpint(l->max_bytes, ==, lives[p * 10 + 8]);
  }
  g_array_unref(out);
  tsp_lod_free(lod);
  tsp_session_free(s);
}

/* Search by op name, node name, scope and function, ignoring case, over
 * every event and both threads, in time order. */
static void test_search(void)
{
  tsp_session *s = tsp_session_new_empty();
  int t0 = tsp_session_add_thread(s, "main", 1), t1 = tsp_session_add_thread(s, "worker", 2);
  uint32_t dense = add_node(s, "dense_1/MatMul", "dense_1", TS_OP_MATMUL);
  uint32_t out = add_node(s, "output/Add", "output", TS_OP_ADD);
  for (int i = 0; i < 1000; i++) {
    int t = i % 2 ? t1 : t0;
    record_op(s, t, i % 10 == 7 ? TS_OP_MATMUL : TS_OP_ADD, i % 10 == 7 ? dense : out,
              (uint64_t)i * 100, (uint64_t)i * 100 + 50);
  }
  record_call(s, t0, "train_step", 0, 100000);
  tsp_lod *lod = tsp_lod_build(s);
  struct {
    const char *text;
    int n;
  } cases[] = { { "matmul", 100 }, { "DENSE_1", 100 }, { "output", 900 }, { "train", 1 },
                { "nothing like it", 0 }, { "", 0 } };
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    GArray *hits = tsp_lod_search(lod, cases[c].text);
    g_assert_cmpint((int)hits->len, ==, cases[c].n);
    for (guint i = 1; i < hits->len; i++) {
      const tsp_lod_hit *a = &g_array_index(hits, tsp_lod_hit, i - 1), *b = a + 1;
      g_assert_cmpuint(a->event->start_ns, <=, b->event->start_ns);
      g_assert_cmpint(tsp_lod_depth_of(lod, b->track, b->event), ==, b->depth);
    }
    if (cases[c].n == 100) /* ops 7, 17, ...: thread 1, under no call */
      g_assert_cmpuint(g_array_index(hits, tsp_lod_hit, 0).event->start_ns, ==, 700);
    g_array_unref(hits);
  }
  tsp_lod_free(lod);
  tsp_session_free(s);
}

/* Big enough for the search's two threads (a million events and up): each
 * text finds what a plain count finds, in start order, ties by track and
 * depth, across both threads' time spans. */
static void test_search_large(void)
{
  tsp_session *s = tsp_session_new_empty();
  int threads[2] = { tsp_session_add_thread(s, "main", 1), tsp_session_add_thread(s, "worker", 2) };
  uint32_t dense = add_node(s, "dense_1/MatMul", "dense_1", TS_OP_MATMUL);
  uint32_t out = add_node(s, "output/Add", "output", TS_OP_ADD);
  const int n_calls = 10000, per_call = 100; /* 1,010,000 events: two threads */
  for (int c = 0; c < n_calls; c++) {
    int t = threads[c % 2];
    uint64_t start = (uint64_t)(c / 2) * 20000; /* both threads' calls start together: ties */
    for (int i = 0; i < per_call; i++)
      record_op(s, t, i % 10 == 7 ? TS_OP_MATMUL : TS_OP_ADD, i % 10 == 7 ? dense : out,
                start + 100 + (uint64_t)i * 150, start + 100 + (uint64_t)i * 150 + 100);
    record_call(s, t, "train_step", start, start + 19000);
  }
  tsp_lod *lod = tsp_lod_build(s);
  const struct {
    const char *text;
    int n;
  } cases[] = { { "matmul", n_calls * per_call / 10 }, { "output", n_calls * per_call * 9 / 10 },
                { "train", n_calls }, { "", 0 }, { "nothing like it", 0 } };
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    GArray *hits = tsp_lod_search(lod, cases[c].text);
    g_assert_cmpint((int)hits->len, ==, cases[c].n);
    for (guint i = 1; i < hits->len; i++) {
      const tsp_lod_hit *a = &g_array_index(hits, tsp_lod_hit, i - 1), *b = a + 1;
      g_assert_true(a->event->start_ns < b->event->start_ns ||
                    (a->event->start_ns == b->event->start_ns &&
                     (a->track < b->track || (a->track == b->track && a->depth <= b->depth))));
    }
    g_array_unref(hits);
  }
  /* every op and every call ("t": MatMul, output, train_step), spread
   * over both threads' spans and merged from four lists */
  GArray *all = tsp_lod_search(lod, "t");
  g_assert_cmpint((int)all->len, ==, n_calls * per_call + n_calls);
  for (guint i = 1; i < all->len; i++)
    g_assert_cmpuint(g_array_index(all, tsp_lod_hit, i - 1).event->start_ns, <=,
                     g_array_index(all, tsp_lod_hit, i).event->start_ns);
  g_array_unref(all);
  tsp_lod_free(lod);
  tsp_session_free(s);
}

/* A real recording: every op has a depth, ops nest under the calls of the
 * run, and live tensor memory was recorded and comes back to its start. */
static void test_seed_recording(void)
{
  ts_module *m = ts_module_open("seeds");
  g_assert_nonnull(m);
  ts_function *fn = ts_module_lookup(m, "sum_even");
  ts_value x;
  g_assert_true(ts_value_parse("i32[4]=10,12,15,20", &x));
  tsp_session *s = tsp_session_new();
  tsp_session_add_collector(s, &tsp_memory_collector, NULL);
  int quiet = test_quiet_begin();
  tsp_compare_free(tsp_compare_run(s, fn, &x, 1, 2));
  test_quiet_end(quiet);
  tsp_lod *lod = tsp_lod_build(s);
  int n_ops = 0, n_memory = 0;
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));) {
      if (e->kind == TSP_EVENT_OP) {
        n_ops++;
        g_assert_cmpint(tsp_lod_depth_of(lod, t, e), >=, 1); /* under its call */
      } else if (e->kind == TSP_EVENT_CALL) {
        g_assert_cmpint(tsp_lod_depth_of(lod, t, e), ==, 0);
      } else if (e->kind == TSP_EVENT_MEMORY) {
        n_memory++;
        g_assert_cmpint(tsp_memory_delta(e), !=, 0);
        g_assert_cmpint(tsp_memory_live(e), >=, 0);
      }
    }
  }
  g_assert_cmpint(n_ops, >, 10);
  g_assert_cmpint(n_memory, >, 10);
  /* tensors, and the graph's memory plan arena */
  g_assert_cmpint(tsp_lod_n_memory(lod), ==, 2);
  g_assert_cmpint(tsp_lod_memory_kind(lod, 0), ==, TS_MEMORY_TENSORS);
  g_assert_cmpint(tsp_lod_memory_kind(lod, 1), ==, TS_MEMORY_ARENA);
  g_assert_cmpint(tsp_lod_memory_peak(lod, 0), >, 0);
  g_assert_cmpint(tsp_lod_memory_peak(lod, 1), >, 0);
  GArray *hits = tsp_lod_search(lod, "sum_even");
  g_assert_cmpuint(hits->len, >=, 4); /* the calls, and its trace */
  g_array_unref(hits);
  /* memory goes through a Chrome trace as counters and comes back, each series apart */
  size_t len;
  char *text = tsp_chrome_export_string(s, &len);
  g_assert_nonnull(strstr(text, "\"ph\":\"C\""));
  GError *error = NULL;
  tsp_session *back = tsp_chrome_import_data(text, len, &error);
  g_assert_no_error(error);
  tsp_lod *back_lod = tsp_lod_build(back);
  g_assert_cmpint(tsp_lod_n_memory(back_lod), ==, 2);
  for (int series = 0; series < 2; series++) {
    g_assert_cmpint(tsp_lod_memory_kind(back_lod, series), ==, tsp_lod_memory_kind(lod, series));
    g_assert_cmpint(tsp_lod_memory_peak(back_lod, series), ==, tsp_lod_memory_peak(lod, series));
    GArray *a = g_array_new(FALSE, FALSE, sizeof(tsp_lod_level)), *b = g_array_new(FALSE, FALSE, sizeof(tsp_lod_level));
    uint64_t from, to;
    tsp_lod_range(lod, &from, &to);
    tsp_lod_memory_query(lod, series, from, to + 1, 1.0, a);
    tsp_lod_range(back_lod, &from, &to);
    tsp_lod_memory_query(back_lod, series, from, to + 1, 1.0, b);
    g_assert_cmpuint(a->len, ==, b->len);
    for (guint i = 0; i < a->len; i++)
      g_assert_cmpint(g_array_index(a, tsp_lod_level, i).live_bytes, ==, g_array_index(b, tsp_lod_level, i).live_bytes);
    g_array_unref(a);
    g_array_unref(b);
  }
  tsp_lod_free(back_lod);
  tsp_session_free(back);
  g_free(text);
  tsp_lod_free(lod);
  tsp_session_free(s);
  ts_module_free(m);
  ts_release_all();
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/profiler/lod/depths", test_depths);
  g_test_add_func("/profiler/lod/summaries", test_summaries);
  g_test_add_func("/profiler/lod/spans", test_spans);
  g_test_add_func("/profiler/lod/memory", test_memory);
  g_test_add_func("/profiler/lod/search", test_search);
  g_test_add_func("/profiler/lod/search-large", test_search_large);
  g_test_add_func("/profiler/lod/seed-recording", test_seed_recording);
  return g_test_run();
}
