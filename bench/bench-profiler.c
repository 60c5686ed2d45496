/* bench-profiler.c — what profiling costs: recording overhead per op on
 * eager dispatch and on graph calls of the seed models (sequential_model
 * at 1 and 2 threads: the schedule is the same profiled), each in wall
 * time and in process CPU time, memory per event, Chrome trace export and import of a
 * million events (time and peak memory), and the importer's bounds: 10
 * million events, 100,000 threads, each imported in a process of its own
 * whose peak RSS getrusage gives.  Prints measured against target; a
 * benchmark, not a test. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <tracescope-profiler.h>
#include <unistd.h>
#include <tracescope.h>

#define ROUNDS 15
/* Graph calls: many short batches, so that most run unpreempted on a
 * shared machine and their median is a clean one's wall time. */
#define CALL_ROUNDS 101
#define MAX_ROUNDS CALL_ROUNDS

/* What a batch runs under: nothing, a listener that does nothing (the
 * engine's own cost of events), or a recording session. */
enum { PLAIN, LISTENED, PROFILED, VARIANTS };

/* What a batch took: wall time (what the caller waits) and the process's
 * CPU time (every thread's, the pool's spinning for its next job
 * included). */
typedef struct took {
  int64_t wall, cpu;
} took;

typedef bool (*batch_fn)(void *data, int variant, took *t);

static int64_t cpu_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void noop(const ts_event *e, void *data)
{
}

/* The machine's load average over the last minute (the machine may be shared). */
static double load_1min(void)
{
  double load[1] = { -1 };
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

/* Medians (wall and CPU apart) of the three variants, run in turn (in a
 * rotating order) so that load from elsewhere on the machine hits all
 * alike; a warm-up round first. */
static bool medians(batch_fn fn, void *data, int rounds, took out[VARIANTS])
{
  int64_t wall[VARIANTS][MAX_ROUNDS], cpu[VARIANTS][MAX_ROUNDS];
  for (int r = -1; r < rounds; r++)
    for (int k = 0; k < VARIANTS; k++) {
      int v = (k + (r < 0 ? 0 : r)) % VARIANTS;
      took t;
      if (!fn(data, v, &t))
        return false;
      if (r >= 0) {
        wall[v][r] = t.wall;
        cpu[v][r] = t.cpu;
      }
    }
  for (int v = 0; v < VARIANTS; v++) {
    qsort(wall[v], (size_t)rounds, sizeof wall[v][0], cmp_i64);
    qsort(cpu[v], (size_t)rounds, sizeof cpu[v][0], cmp_i64);
    out[v] = (took){ wall[v][rounds / 2], cpu[v][rounds / 2] };
  }
  return true;
}

/* Starts what variant v needs: returns the listener id or 1 for the session, 0 for none, -1 on error. */
static int variant_begin(int v, tsp_session *s)
{
  if (v == LISTENED)
    return ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END) | TS_EVENT_MASK(TS_EVENT_TRACE), noop, NULL);
  if (v == PROFILED)
    return tsp_session_start(s, NULL) ? 1 : -1;
  return 0;
}

static void variant_end(int v, int id, tsp_session *s)
{
  if (v == LISTENED)
    ts_listener_remove(id);
  else if (v == PROFILED)
    tsp_session_stop(s);
}

static void row(const char *what, const char *measured, const char *target, bool met)
{
  printf("  %-58s %16s   %-12s %s\n", what, measured, target, met ? "ok" : "MISSED");
}

/* A row measured both ways: the target is judged on the wall time (what
 * the caller waits for), the CPU time beside it. */
static void row_cpu(const char *what, const char *wall, const char *cpu, const char *target, bool met)
{
  printf("  %-58s %16s   %-12s %-6s %14s\n", what, wall, target, *target ? met ? "ok" : "MISSED" : "",
         cpu);
}

static void row_error(const char *what)
{
  ts_error *e = ts_error_take();
  printf("  %-58s failed: %s\n", what, e ? e->message : "?");
  ts_error_free(e);
}

/* ---- eager dispatch ------------------------------------------------------------------ */

#define OPS 20000
#define OPS_PER_SCOPE 100 /* keeps the engine's own memory churn out of the numbers */

typedef struct adds {
  ts_tensor *a, *b;
  tsp_session *s; /* records the profiled batches, one after another */
} adds;

static bool add_batch(void *data, int v, took *t)
{
  adds *l = data;
  uint64_t before = tsp_session_n_events(l->s);
  int id = variant_begin(v, l->s);
  if (id < 0)
    return false;
  uint64_t t0 = ts_now_ns();
  int64_t c0 = cpu_ns();
  for (int k = 0; k < OPS; k += OPS_PER_SCOPE) {
    ts_scope *scope = ts_scope_begin();
    for (int i = 0; i < OPS_PER_SCOPE; i++)
      if (!ts_add(l->a, l->b))
        return false;
    ts_scope_end(scope);
  }
  *t = (took){ (int64_t)(ts_now_ns() - t0), cpu_ns() - c0 };
  variant_end(v, id, l->s);
  return v != PROFILED || tsp_session_n_events(l->s) == before + OPS;
}

static void bench_eager(void)
{
  adds l = { ts_random_uniform(TS_F32, TS_SHAPE(10, 10), 0, 1, 1),
             ts_random_uniform(TS_F32, TS_SHAPE(10, 10), 0, 1, 2), tsp_session_new() };
  took t[VARIANTS];
  bool ok = medians(add_batch, &l, ROUNDS, t);
  tsp_session_free(l.s);
  if (!ok) {
    row_error("eager add");
    return;
  }
  double own = (double)(t[PROFILED].wall - t[LISTENED].wall) / OPS;
  double own_cpu = (double)(t[PROFILED].cpu - t[LISTENED].cpu) / OPS;
  char m[64], c[64];
  g_snprintf(m, sizeof m, "%.3f µs", own / 1e3);
  g_snprintf(c, sizeof c, "%.3f µs", own_cpu / 1e3);
  row_cpu("recording per op event, eager add 10x10 (the profiler's)", m, c, "<= 0.1 µs", own <= 100);
  g_snprintf(m, sizeof m, "%.3f µs", (double)(t[PROFILED].wall - t[PLAIN].wall) / OPS / 1e3);
  g_snprintf(c, sizeof c, "%.3f µs", (double)(t[PROFILED].cpu - t[PLAIN].cpu) / OPS / 1e3);
  row_cpu("  with the engine's event delivery", m, c, "", true);
  printf("  %-58s %16s   (an eager add: %.3f µs alone, %.3f µs with a listener doing nothing)\n",
         "", "", (double)t[PLAIN].wall / OPS / 1e3, (double)t[LISTENED].wall / OPS / 1e3);
}

/* ---- graph calls of the seed models ------------------------------------------------------ */

typedef struct calls {
  ts_function *fn;
  ts_value arg;
  int iters;
  tsp_session *s;
} calls;

static bool call_batch(void *data, int v, took *t)
{
  calls *c = data;
  int id = variant_begin(v, c->s);
  if (id < 0)
    return false;
  uint64_t t0 = ts_now_ns();
  int64_t c0 = cpu_ns();
  for (int i = 0; i < c->iters; i++) {
    ts_scope *scope = ts_scope_begin();
    ts_tensor *out = ts_function_call(c->fn, &c->arg, 1);
    ts_scope_end(scope);
    if (!out)
      return false;
  }
  *t = (took){ (int64_t)(ts_now_ns() - t0), cpu_ns() - c0 };
  variant_end(v, id, c->s);
  return true;
}

static void bench_model(ts_module *seeds, const char *name, ts_tensor *x, int iters,
                        const char *label, double target)
{
  calls c = { ts_module_lookup(seeds, name), TS_TENSOR_VALUE(x), iters, tsp_session_new() };
  double load = load_1min();
  took t[VARIANTS];
  bool ok = c.fn && medians(call_batch, &c, CALL_ROUNDS, t);
  uint64_t events = tsp_session_n_events(c.s);
  ts_schedule sch = { 0 };
  if (c.fn)
    ts_concrete_schedule(ts_function_get_concrete(c.fn, &c.arg, 1), &sch);
  tsp_session_free(c.s);
  if (!ok) {
    row_error(label);
    return;
  }
  double over = (double)(t[PROFILED].wall - t[PLAIN].wall) / (double)t[PLAIN].wall * 100;
  double over_cpu = (double)(t[PROFILED].cpu - t[PLAIN].cpu) / (double)t[PLAIN].cpu * 100;
  double listened = (double)(t[LISTENED].wall - t[PLAIN].wall) / (double)t[PLAIN].wall * 100;
  double listened_cpu = (double)(t[LISTENED].cpu - t[PLAIN].cpu) / (double)t[PLAIN].cpu * 100;
  char m[64], cm[64], tg[32];
  g_snprintf(m, sizeof m, "%+.1f %%", over);
  g_snprintf(cm, sizeof cm, "%+.1f %%", over_cpu);
  g_snprintf(tg, sizeof tg, "<= %.0f %%", target);
  row_cpu(label, m, cm, tg, over <= target);
  g_snprintf(m, sizeof m, "%+.1f %%", listened);
  g_snprintf(cm, sizeof cm, "%+.1f %%", listened_cpu);
  row_cpu("  a listener doing nothing", m, cm, "", true);
  printf("  %-58s %16s   (a call: %.1f µs alone, %.1f with a listener doing nothing,\n"
         "  %-58s %16s    %.1f profiled (wall; CPU %.1f, %.1f, %.1f); %" G_GUINT64_FORMAT " op events a call;\n"
         "  %-58s %16s    %d row runs, %d groups; load average %.2f before, %.2f after)\n", "", "",
         (double)t[PLAIN].wall / iters / 1e3, (double)t[LISTENED].wall / iters / 1e3, "", "",
         (double)t[PROFILED].wall / iters / 1e3, (double)t[PLAIN].cpu / iters / 1e3,
         (double)t[LISTENED].cpu / iters / 1e3, (double)t[PROFILED].cpu / iters / 1e3,
         events / (uint64_t)((CALL_ROUNDS + 1) * iters), "", "", sch.n_row_runs, sch.n_groups, load,
         load_1min());
}

/* ---- synthetic events: memory, export, import -------------------------------------------- */

static long status_kb(const char *field)
{
  char *text = NULL;
  long kb = -1;
  if (g_file_get_contents("/proc/self/status", &text, NULL, NULL)) {
    const char *p = strstr(text, field);
    if (p)
      kb = strtol(p + strlen(field) + 1, NULL, 10);
  }
  g_free(text);
  return kb;
}

/* A session of n op events like a graph run's: 1000 nodes over 100 source lines. */
static tsp_session *synthetic(uint64_t n)
{
  tsp_session *s = tsp_session_new_empty();
  if (!tsp_session_start(s, NULL)) /* no collector: nothing to fail */
    g_error("the synthetic session did not start");
  uint8_t cpu = tsp_intern_device(s, "CPU");
  uint32_t cf = tsp_intern_concrete(s, "model", "(x: f32[20,28,28])");
  uint32_t nodes[1000], locs[100];
  for (int i = 0; i < 100; i++)
    locs[i] = tsp_intern_loc(s, "/src/model.c", "model", 10 + i);
  for (int i = 0; i < 1000; i++) {
    char name[64];
    g_snprintf(name, sizeof name, "dense_%d/MatMul", i);
    tsp_node_info info = { .name = name, .scope = name, .shape = "f32[20,64]",
                           .op = TS_OP_MATMUL, .loc = locs[i % 100], .concrete = cf, .id = i,
                           .has_eager_twin = true };
    nodes[i] = tsp_add_node(s, &info);
  }
  uint64_t t = 1000000000;
  for (uint64_t i = 0; i < n; i++) {
    tsp_event e = { .start_ns = t, .end_ns = t + 850 + i % 300, .run_id = 1 + i / 1000,
                    .seq = (uint32_t)(1 + i % 1000), .node = nodes[i % 1000],
                    .traced = nodes[i % 1000], .loc = locs[i % 100], .op = TS_OP_MATMUL,
                    .kind = TSP_EVENT_OP, .device = cpu };
    tsp_record(s, &e);
    t += 1200;
  }
  tsp_session_stop(s); /* as a recording ends: the last chunk trimmed */
  return s;
}

static void bench_memory(void)
{
  const uint64_t n = 10000000;
  long before = status_kb("VmRSS:");
  tsp_session *s = synthetic(n);
  long after = status_kb("VmRSS:");
  size_t bytes = tsp_session_event_bytes(s);
  double resident = (double)(after - before) * 1024 / (double)n, allocated = (double)bytes / (double)n;
  char m[64];
  g_snprintf(m, sizeof m, "%.1f B", resident);
  row("memory per event, 10M synthetic op events (resident)", m, "<= 48 B", resident <= 48);
  g_snprintf(m, sizeof m, "%.2f B", allocated);
  row("memory per event, 10M synthetic op events (allocated)", m, "<= 48 B", allocated <= 48);
  printf("  %-58s %16s   (%zu chunks of 4 MiB, the last one trimmed to the end of the 2 MiB\n"
         "  %-58s %16s    page its last event is in: room for a recording started again)\n",
         "", "", (bytes + ((size_t)4 << 20) - 1) / ((size_t)4 << 20), "", "");
  tsp_session_free(s);
}

/* The synthetic session's ops grouped as a timeline sees a recording: a
 * call per run of 1000 ops, and a While op around every 50th to 59th op
 * (recorded after them, as they end).  n op events in all. */
static tsp_session *synthetic_nested(uint64_t n)
{
  tsp_session *s = synthetic(n - n / 50);
  uint32_t fn = tsp_intern_string(s, "model");
  GArray *extra = g_array_new(FALSE, FALSE, sizeof(tsp_event));
  tsp_iter it;
  tsp_iter_init(&it, s, 0);
  uint64_t i = 0, run_start = 0, loop_start = 0;
  for (const tsp_event *e; (e = tsp_iter_next(&it)); i++) {
    /* ops are 51 ns apart at least: a call 20 ns around its ops, a loop 10 */
    if (i % 1000 == 0)
      run_start = e->start_ns - 20;
    if (i % 50 == 0)
      loop_start = e->start_ns - 10;
    if (i % 50 == 9)
      g_array_append_val(extra, ((tsp_event){ .start_ns = loop_start, .end_ns = e->end_ns + 10,
                                              .run_id = e->run_id, .op = TS_OP_WHILE,
                                              .kind = TSP_EVENT_OP, .device = e->device }));
    if (i % 1000 == 999)
      g_array_append_val(extra, ((tsp_event){ .start_ns = run_start, .end_ns = e->end_ns + 20,
                                              .run_id = e->run_id, .node = fn,
                                              .op = TSP_MODE_GRAPH, .kind = TSP_EVENT_CALL }));
  }
  /* a second session in recording order: each event after those it holds */
  tsp_session *r = tsp_session_new_empty();
  if (!tsp_session_start(r, NULL)) /* no collector: nothing to fail */
    g_error("the nested session did not start");
  tsp_intern_device(r, "CPU");
  for (uint32_t k = 1; k < tsp_session_n_nodes(s); k++)
    tsp_add_node(r, tsp_session_node(s, k));
  tsp_intern_string(r, "model");
  int t = tsp_session_add_thread(r, "main", 1);
  tsp_iter_init(&it, s, 0);
  guint x = 0;
  i = 0;
  for (const tsp_event *e; (e = tsp_iter_next(&it)); i++) {
    tsp_record_on(r, t, e);
    if (i % 50 == 9 || i % 1000 == 999)
      tsp_record_on(r, t, &g_array_index(extra, tsp_event, x++));
  }
  g_array_unref(extra);
  tsp_session_free(s);
  tsp_session_stop(r); /* as a recording ends: the last chunk trimmed */
  return r;
}

static double seconds_since(gint64 t0)
{
  return (double)(g_get_monotonic_time() - t0) / 1e6;
}

/* This thread's CPU time in s: on a shared machine wall time also counts
 * other processes' turns. */
static double cpu_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void bench_lod(void)
{
  const uint64_t n = 10000000;
  tsp_session *s = synthetic_nested(n);
  char m[64];
  gint64 t0 = g_get_monotonic_time();
  double c0 = cpu_s();
  tsp_lod *lod = tsp_lod_build(s);
  double build_s = seconds_since(t0), build_cpu = cpu_s() - c0;
  g_snprintf(m, sizeof m, "%.2f s", build_s);
  row("timeline LOD index, 10M op events (+ calls, loops): build", m, "<= 2 s", build_s <= 2);
  printf("  %-58s %14.2f s   of this thread's CPU\n", "", build_cpu);
  double added = (double)tsp_lod_bytes(lod) / (double)tsp_session_n_events(s);
  printf("  %-58s %14.1f B   (per event, beside the events' %.1f B; %d depths)\n",
         "  the index adds", added, (double)tsp_session_event_bytes(s) / (double)tsp_session_n_events(s),
         tsp_lod_n_depths(lod, 0));
  const struct {
    const char *label, *text;
  } searches[] = {
    { "whole-session search, one node in 1000 (10,000 hits)", "dense_7/" },
    { "whole-session search, no match", "conv2d" },
    { "whole-session search, every op matches (10M hits)", "matmul" },
  };
  for (size_t k = 0; k < G_N_ELEMENTS(searches); k++) {
    t0 = g_get_monotonic_time();
    c0 = cpu_s();
    GArray *hits = tsp_lod_search(lod, searches[k].text);
    double ms = seconds_since(t0) * 1e3, cpu_ms = (cpu_s() - c0) * 1e3;
    g_snprintf(m, sizeof m, "%.0f ms", ms);
    row(searches[k].label, m, "<= 200 ms", ms <= 200);
    printf("  %-58s %16u   hits, %.0f ms of this thread's CPU\n", "", hits->len, cpu_ms);
    g_array_unref(hits);
  }
  tsp_lod_free(lod);
  tsp_session_free(s);
}

static void bench_files(void)
{
  const uint64_t n = 1000000;
  tsp_session *s = synthetic(n);
  char *dir = g_dir_make_tmp("bench-profiler-XXXXXX", NULL);
  char *path = g_build_filename(dir, "trace.json", NULL);
  GError *error = NULL;
  uint64_t t0 = ts_now_ns();
  bool ok = tsp_chrome_export(s, path, &error);
  double export_s = (double)(ts_now_ns() - t0) / 1e9;
  tsp_session_free(s);
  if (!ok) {
    printf("  export failed: %s\n", error->message);
    return;
  }
  GStatBuf st;
  g_stat(path, &st);
  char m[64];
  g_snprintf(m, sizeof m, "%.2f s", export_s);
  row("Chrome JSON export, 1M op events", m, "<= 2 s", export_s <= 2);
  printf("  %-58s %16.0f MB\n", "  file size", (double)st.st_size / 1e6);

  /* the peak from here on: clear_refs resets VmHWM to the current RSS */
  FILE *f = fopen("/proc/self/clear_refs", "w");
  bool reset = f && fputs("5", f) >= 0;
  if (f)
    fclose(f);
  long base = status_kb("VmRSS:");
  t0 = ts_now_ns();
  tsp_session *back = tsp_chrome_import(path, &error);
  double import_s = (double)(ts_now_ns() - t0) / 1e9;
  long peak = status_kb("VmHWM:");
  if (!back) {
    printf("  import failed: %s\n", error->message);
    return;
  }
  g_snprintf(m, sizeof m, "%.2f s", import_s);
  row("Chrome JSON import, 1M op events", m, "<= 5 s",
      import_s <= 5 && tsp_session_n_events(back) == n);
  g_snprintf(m, sizeof m, "%.0f MB", (double)peak / 1024);
  row(reset ? "peak RSS (VmHWM) during import" : "peak RSS (VmHWM) of the process", m, "<= 1 GB",
      peak <= 1024 * 1024);
  printf("  %-58s %16.0f MB   (RSS before the import)\n", "", (double)base / 1024);
  tsp_session_free(back);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}

/* ---- the importer's bounds ------------------------------------------------------------- */

/* Another tool's trace: n "X" events over tids 1 .. tids in turn (each
 * named first when names is set), ops of a few names. */
static bool write_foreign(const char *path, uint64_t n, uint64_t tids, bool names)
{
  static const char *const ops[] = { "MatMul", "Add", "Relu", "conv2d", "memcpy" };
  FILE *f = fopen(path, "w");
  if (!f)
    return false;
  char *buf = g_malloc(1 << 20);
  setvbuf(f, buf, _IOFBF, 1 << 20);
  fputs("{\"traceEvents\":[\n", f);
  for (uint64_t t = 1; names && t <= tids; t++)
    fprintf(f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%" G_GUINT64_FORMAT
               ",\"args\":{\"name\":\"w%" G_GUINT64_FORMAT "\"}},\n", t, t);
  for (uint64_t i = 0; i < n; i++)
    fprintf(f, "{\"name\":\"%s\",\"ph\":\"X\",\"ts\":%" G_GUINT64_FORMAT ".%03u,\"dur\":0.5,\"pid\":1,"
               "\"tid\":%" G_GUINT64_FORMAT "}%s\n",
            ops[i % 5], i / 3, (unsigned)(i % 1000), 1 + i % tids, i + 1 < n ? "," : "");
  fputs("]}\n", f);
  bool ok = fclose(f) == 0;
  g_free(buf);
  return ok;
}

/* `tracescope-bench-profiler import FILE`: the import alone; prints its
 * seconds, events and threads. */
static int import_only(const char *path)
{
  GError *error = NULL;
  uint64_t t0 = ts_now_ns();
  tsp_session *s = tsp_chrome_import(path, &error);
  double secs = (double)(ts_now_ns() - t0) / 1e9;
  if (!s) {
    fprintf(stderr, "%s\n", error->message);
    return 1;
  }
  printf("%.3f %" G_GUINT64_FORMAT " %d\n", secs, tsp_session_n_events(s), tsp_session_n_threads(s));
  tsp_session_free(s);
  return 0;
}

/* Imports path in a child process: its time, events, threads and peak RSS (KiB). */
static bool import_in_child(const char *path, double *secs, uint64_t *events, int *threads, long *peak_kb,
                            double *cpu_s)
{
  char *self = g_file_read_link("/proc/self/exe", NULL);
  char *argv[] = { self, "import", (char *)path, NULL };
  GPid pid;
  int out;
  bool ok = self && g_spawn_async_with_pipes(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
                                             NULL, &out, NULL, NULL);
  g_free(self);
  if (!ok)
    return false;
  GString *text = g_string_new(NULL);
  char chunk[256];
  for (ssize_t n; (n = read(out, chunk, sizeof chunk)) > 0;)
    g_string_append_len(text, chunk, n);
  close(out);
  int status;
  struct rusage ru;
  ok = wait4(pid, &status, 0, &ru) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
       sscanf(text->str, "%lf %" G_GUINT64_FORMAT " %d", secs, events, threads) == 3;
  *peak_kb = ru.ru_maxrss;
  *cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
  g_string_free(text, TRUE);
  return ok;
}

static void bench_import_bounds(void)
{
  char *dir = g_dir_make_tmp("bench-profiler-XXXXXX", NULL);
  char *path = g_build_filename(dir, "trace.json", NULL);
  static const struct {
    const char *what;
    uint64_t events, tids;
    bool names;
    double max_s;
    long max_mb;
  } cases[] = {
    { "10M events (another tool's, 8 threads)", 10000000, 8, true, 3, 1024 },
    { "100,000 threads (a named thread and an event each)", 100000, 100000, true, 0, 200 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char what[128], m[64], target[32];
    double secs;
    uint64_t events;
    int threads;
    long peak_kb;
    double cpu;
    GStatBuf st;
    if (!write_foreign(path, cases[i].events, cases[i].tids, cases[i].names) || g_stat(path, &st) != 0 ||
        !import_in_child(path, &secs, &events, &threads, &peak_kb, &cpu) || events != cases[i].events ||
        (uint64_t)threads != cases[i].tids) {
      printf("  %-58s failed\n", cases[i].what);
      continue;
    }
    g_snprintf(what, sizeof what, "import, %s", cases[i].what);
    g_snprintf(m, sizeof m, "%.2f s", secs);
    g_snprintf(target, sizeof target, "<= %.0f s", cases[i].max_s);
    if (cases[i].max_s > 0)
      row(what, m, target, secs <= cases[i].max_s);
    else
      printf("  %-58s %16s\n", what, m);
    printf("  %-58s %14.2f s   (user + system, all its threads)\n", "  its CPU time", cpu);
    g_snprintf(m, sizeof m, "%.0f MiB", (double)peak_kb / 1024);
    g_snprintf(target, sizeof target, "<= %ld MiB", cases[i].max_mb);
    row("  its peak RSS (getrusage of the importing process)", m, target, peak_kb <= cases[i].max_mb * 1024);
    printf("  %-58s %16.0f MB\n", "  file size", (double)st.st_size / 1e6);
  }
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
}

/* The worker's form of a session (tsp_session_serialize): 1M op events
 * there and back, as a profiled Run's session crosses to the app.  No
 * target in the issue; what the Profile toggle adds to a Run's reply. */
static void bench_serial(void)
{
  const uint64_t n = 1000000;
  tsp_session *s = synthetic(n);
  uint64_t t0 = ts_now_ns();
  GBytes *bytes = tsp_session_serialize(s);
  double ser_s = (double)(ts_now_ns() - t0) / 1e9;
  GError *error = NULL;
  t0 = ts_now_ns();
  tsp_session *back = tsp_session_deserialize(bytes, &error);
  double de_s = (double)(ts_now_ns() - t0) / 1e9;
  char m[32];
  if (!back) {
    printf("  deserialize failed: %s\n", error->message);
    g_error_free(error);
  } else {
    g_snprintf(m, sizeof m, "%.3f s", ser_s);
    printf("  %-58s %16s\n", "session serialize (worker -> app), 1M op events", m);
    g_snprintf(m, sizeof m, "%.3f s", de_s);
    printf("  %-58s %16s   (%.1f B an event; every index checked)\n", "session deserialize, 1M op events", m,
           (double)g_bytes_get_size(bytes) / (double)n);
    tsp_session_free(back);
  }
  g_bytes_unref(bytes);
  tsp_session_free(s);
}

/* `tracescope-bench-profiler timeline`: the timeline's rows only;
 * `... models`: the eager and sequential_model rows only; `... bounds`:
 * the importer's bounds only. */
int main(int argc, char **argv)
{
  if (argc > 1 && strcmp(argv[1], "timeline") == 0) {
    bench_lod();
    return 0;
  }
  if (argc > 2 && strcmp(argv[1], "import") == 0)
    return import_only(argv[2]);
  if (argc > 1 && strcmp(argv[1], "bounds") == 0) {
    bench_import_bounds();
    return 0;
  }
  bool models_only = argc > 1 && strcmp(argv[1], "models") == 0;
  ts_module *seeds = ts_module_open("seeds");
  if (!seeds) {
    fprintf(stderr, "tracescope-bench-profiler: error: cannot open seeds\n");
    return 1;
  }
  printf("Tracescope profiler benchmark: %u cores; medians of %d rounds (graph calls: %d) after a warm-up round;\n"
         "load average %.2f (1 min)\n"
         "Overheads are judged on wall time, what a caller waits for (per op, per call); the\n"
         "process's CPU time (every thread's, the pool's spinning for work included) is beside it.\n",
         g_get_num_processors(), ROUNDS, CALL_ROUNDS, load_1min());
  printf("  %-58s %16s   %-12s %-6s %14s\n", "what", "measured", "target", "", "CPU time");
  ts_scope *scope = ts_scope_begin();
  bench_eager();
  /* at 1 and 2 threads: watching keeps the schedule (groups, row runs) */
  int saved = ts_get_threads();
  for (int threads = 1; threads <= 2; threads++) {
    char label[96];
    g_snprintf(label, sizeof label, "overhead, sequential_model (100 Dense), graph, %d thread%s", threads,
               threads > 1 ? "s" : "");
    ts_set_threads(threads);
    bench_model(seeds, "sequential_model", ts_random_uniform(TS_F32, TS_SHAPE(20, 28, 28), 0, 1, 1),
                2, label, 10);
  }
  ts_set_threads(saved);
  if (!models_only)
    bench_model(seeds, "conv_fn", ts_zeros(TS_F32, TS_SHAPE(1, 64, 64, 100)), 1,
                "overhead, conv_fn, graph, f32[1,64,64,100]", 2);
  ts_scope_end(scope);
  ts_module_free(seeds);
  if (models_only)
    return 0;
  bench_memory();
  bench_lod();
  bench_files();
  bench_import_bounds();
  bench_serial();
  ts_release_all();
  return 0;
}
