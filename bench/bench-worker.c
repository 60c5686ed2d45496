/* bench-worker.c — what running through tracescope-worker costs: a small
 * graph-mode call (deep_net) in process and through the worker — over the
 * fast channel waited for by the caller (ts_worker_call_sync, what the
 * issue's target is about), over the fast channel with the async API the
 * app uses, and over GDBus alone — a 64 MB result crossing, and the time
 * from a worker's death to the next Run being possible (a fresh worker
 * with the module open).  With $TRACESCOPE_BENCH_REMOTE set to an ssh
 * target ("localhost", "127.0.0.1:2222"; its key loaded, tracescope-worker
 * on its PATH or named by $TRACESCOPE_REMOTE_WORKER), the same through a
 * remote worker over ssh.  Medians. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <tracescope.h>

#include "tracescope-profiler.h"
#include "ts-worker.h"

#define REPEATS 9
#define CALLS 2000 /* per timed batch of small calls */

static const char *const deep_net_args[] = { "i32[3]=1,2,3", NULL };

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof v[0], cmp_double);
  return v[n / 2];
}

/* ---- waiting on the main context ------------------------------------------------ */

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

static const char *remote; /* $TRACESCOPE_BENCH_REMOTE: workers started there, over ssh */

static TsWorker *start_with(const char *module, gboolean fast)
{
  TsWorker *w = ts_worker_new(0);
  ts_worker_set_fast_calls(w, fast);
  ts_worker_set_remote(w, remote);
  GAsyncResult *slot = NULL;
  g_autoptr(GError) error = NULL;
  ts_worker_start_async(w, NULL, store, &slot);
  g_autoptr(GAsyncResult) started = await(&slot);
  if (!ts_worker_start_finish(w, started, &error))
    g_error("the worker did not start: %s", error->message);
  ts_worker_open_async(w, module, NULL, store, &slot);
  g_autoptr(GAsyncResult) opened = await(&slot);
  g_autofree char *title = NULL, *path = NULL;
  g_autoptr(GPtrArray) fns = NULL;
  if (!ts_worker_open_finish(w, opened, &title, &path, &fns, &error))
    g_error("cannot open %s: %s", module, error->message);
  return w;
}

static TsWorker *start(const char *module)
{
  return start_with(module, TRUE);
}

static TsCallResult *call(TsWorker *w, const char *fn, const char *const *args)
{
  static guint id;
  GAsyncResult *slot = NULL;
  g_autoptr(GError) error = NULL;
  ts_worker_call_async(w, ++id, fn, args, 1, FALSE, NULL, store, &slot);
  g_autoptr(GAsyncResult) res = await(&slot);
  TsCallResult *r = ts_worker_call_finish(w, res, &error);
  if (!r)
    g_error("%s failed: %s", fn, error->message);
  return r;
}

static TsCallResult *call_sync(TsWorker *w, const char *fn, const char *const *args)
{
  static guint id;
  g_autoptr(GError) error = NULL;
  TsCallResult *r = ts_worker_call_sync(w, ++id, fn, args, 1, FALSE, NULL, NULL, &error);
  if (!r)
    g_error("%s failed: %s", fn, error->message);
  return r;
}

static void stop(TsWorker *w)
{
  ts_worker_close(w);
  while (!ts_worker_get_death(w))
    g_main_context_iteration(NULL, TRUE);
  g_object_unref(w);
}

/* ---- the workloads ---------------------------------------------------------------- */

/* What the app did per Run before the worker: parse the argument, call,
 * print the result. */
static double in_process_us(void)
{
  ts_module *m = ts_module_open("seeds");
  if (!m)
    g_error("cannot open the seeds");
  ts_function *fn = ts_module_lookup(m, "deep_net");
  double t[REPEATS];
  for (int r = -1; r < REPEATS; r++) {
    uint64_t t0 = ts_now_ns();
    for (int i = 0; i < CALLS; i++) {
      ts_scope *scope = ts_scope_begin();
      ts_value v;
      if (!ts_value_parse(deep_net_args[0], &v))
        g_error("bad argument");
      ts_tensor *out = ts_function_call(fn, &v, 1);
      free(ts_tensor_to_string(out));
      ts_value_clear(&v);
      ts_scope_end(scope);
    }
    if (r >= 0)
      t[r] = (double)(ts_now_ns() - t0) / CALLS / 1e3;
  }
  ts_module_free(m);
  return median(t, REPEATS);
}

static double worker_call_us(TsWorker *w, gboolean sync)
{
  double t[REPEATS];
  for (int r = -1; r < REPEATS; r++) {
    uint64_t t0 = ts_now_ns();
    for (int i = 0; i < CALLS; i++)
      ts_call_result_free(sync ? call_sync(w, "deep_net", deep_net_args) : call(w, "deep_net", deep_net_args));
    if (r >= 0)
      t[r] = (double)(ts_now_ns() - t0) / CALLS / 1e3;
  }
  return median(t, REPEATS);
}

/* A 64 MB result: the whole round trip, and what is left of it once the
 * worker's own time making the tensor is taken off. */
static void big_result_ms(TsWorker *w, double *round_trip, double *transfer, double *read_all)
{
  const char *const args[] = { "16777216", NULL };
  double rt[REPEATS], tr[REPEATS], ra[REPEATS];
  for (int r = -1; r < REPEATS; r++) {
    uint64_t t0 = ts_now_ns();
    TsCallResult *res = call(w, "ones", args);
    double total = (double)(ts_now_ns() - t0) / 1e6;
    if (g_bytes_get_size(res->data) != 64u << 20)
      g_error("the result is %zu bytes", g_bytes_get_size(res->data));
    /* the pages come in as they are first read */
    uint64_t t1 = ts_now_ns();
    gsize size;
    const volatile char *bytes = g_bytes_get_data(res->data, &size);
    char sum = 0;
    for (gsize i = 0; i < size; i += 4096)
      sum += bytes[i];
    if (sum != (char)(size / 4096 * bytes[0]))
      g_error("the result changed under us");
    double reading = (double)(ts_now_ns() - t1) / 1e6;
    if (r >= 0) {
      rt[r] = total;
      tr[r] = total - (double)res->total_ns / 1e6;
      ra[r] = reading;
    }
    ts_call_result_free(res);
  }
  *round_trip = median(rt, REPEATS);
  *transfer = median(tr, REPEATS);
  *read_all = median(ra, REPEATS);
}

#define TRACE_EVENTS 10000000 /* the trace fetched: this many op events */

typedef struct {
  uint64_t first_chunk_ns; /* when the first chunk of the profile came (0: it came whole) */
} Arrival;

static void on_transfer(TsWorker *w, guint call_id, guint64 received, guint64 total, Arrival *a)
{
  if (!a->first_chunk_ns)
    a->first_chunk_ns = ts_now_ns();
}

/* A profile of TRACE_EVENTS op events recorded in the worker and fetched
 * here: the whole call, the part after the worker's calls (serializing and
 * fetching), the reading itself from the first chunk on (remote only), the
 * serialized size, and reading it into a session here.  One run: the
 * recording alone takes seconds. */
static void trace_fetch(TsWorker *w, double *total_ms, double *after_ms, double *reading_ms, double *mb,
                        double *deserialize_ms, uint64_t *n_events)
{
  const char *const args[] = { G_STRINGIFY(TRACE_EVENTS), NULL };
  GVariantDict d;
  g_variant_dict_init(&d, NULL);
  g_variant_dict_insert(&d, "profile", "b", TRUE);
  Arrival a = { 0 };
  gulong h = g_signal_connect(w, "transfer", G_CALLBACK(on_transfer), &a);
  GAsyncResult *slot = NULL;
  g_autoptr(GError) error = NULL;
  uint64_t t0 = ts_now_ns();
  ts_worker_call_with_options_async(w, 1000000, "steps", args, 1, TRUE, g_variant_dict_end(&d), NULL, store, &slot);
  g_autoptr(GAsyncResult) res = await(&slot);
  g_autoptr(TsCallResult) r = ts_worker_call_finish(w, res, &error);
  uint64_t t1 = ts_now_ns();
  g_signal_handler_disconnect(w, h);
  if (!r || !r->profile)
    g_error("the profiled call failed: %s", error ? error->message : "no profile");
  *total_ms = (double)(t1 - t0) / 1e6;
  *after_ms = *total_ms - (double)r->total_ns / 1e6;
  *reading_ms = a.first_chunk_ns ? (double)(t1 - a.first_chunk_ns) / 1e6 : 0;
  *mb = (double)g_bytes_get_size(r->profile) / 1e6;
  uint64_t t2 = ts_now_ns();
  tsp_session *session = tsp_session_deserialize(r->profile, &error);
  if (!session)
    g_error("the profile does not read back: %s", error->message);
  *deserialize_ms = (double)(ts_now_ns() - t2) / 1e6;
  *n_events = tsp_session_n_events(session);
  tsp_session_free(session);
}

/* From a worker's death (it is killed) to a fresh one with the module open. */
static double restart_ms(const char *module)
{
  double t[REPEATS];
  for (int r = 0; r < REPEATS; r++) {
    TsWorker *w = start(module);
    kill(ts_worker_get_pid(w), SIGKILL);
    while (!ts_worker_get_death(w))
      g_main_context_iteration(NULL, TRUE);
    uint64_t t0 = ts_now_ns();
    TsWorker *fresh = start(module);
    t[r] = (double)(ts_now_ns() - t0) / 1e6;
    g_object_unref(w);
    stop(fresh);
  }
  return median(t, REPEATS);
}

int main(void)
{
  TsWorker *seeds = start("seeds");
  double in_process = in_process_us();
  double through = worker_call_us(seeds, TRUE);
  double through_async = worker_call_us(seeds, FALSE);
  if (ts_worker_get_fast_calls(seeds) == 0)
    g_error("no call went over the fast channel");
  stop(seeds);
  TsWorker *gdbus = start_with("seeds", FALSE);
  double through_gdbus = worker_call_us(gdbus, FALSE);
  stop(gdbus);
  TsWorker *bench = start(TS_BENCH_MODULE);
  double round_trip, transfer, read_all;
  big_result_ms(bench, &round_trip, &transfer, &read_all);
  stop(bench);
  double restart = restart_ms("seeds");

  printf("\nThe worker process (medians of %d)\n", REPEATS);
  printf("  %-52s %10s   %s\n", "workload", "time", "notes");
  printf("  %-52s %7.1f µs   %s\n", "deep_net graph call, in process", in_process,
         "parse the argument, call, print the result");
  printf("  %-52s %7.1f µs   %s\n", "deep_net graph call, through the worker", through,
         "the same, over the fast channel, ts_worker_call_sync");
  printf("  %-52s %7.1f µs   %s\n", "  worker overhead per call", through - in_process,
         "target: <= 50 µs");
  printf("  %-52s %7.1f µs   %s\n", "  the same, ts_worker_call_async", through_async - in_process,
         "fast channel, reply handed to the main loop (the app)");
  printf("  %-52s %7.1f µs   %s\n", "  the same, over GDBus", through_gdbus - in_process,
         "ts_worker_set_fast_calls(FALSE): what every call paid before");
  printf("  %-52s %7.2f ms   %s\n", "64 MB result, round trip", round_trip,
         "made in the worker, in a memfd passed as is, mapped here");
  printf("  %-52s %7.2f ms   %s\n", "64 MB result, arriving", transfer,
         "round trip less the worker's own time; target: <= 20 ms");
  printf("  %-52s %7.2f ms   %s\n", "64 MB result, every page first read here", read_all,
         "what a reader of all of it pays on top (page faults)");
  printf("  %-52s %7.2f ms   %s\n", "restart after a crash", restart,
         "a fresh worker with the module open; target: <= 300 ms");

  remote = g_getenv("TRACESCOPE_BENCH_REMOTE");
  if (!remote || !*remote)
    return 0;
  TsWorker *far = start("seeds");
  double far_call = worker_call_us(far, FALSE);
  stop(far);
  TsWorker *far_bench = start(TS_BENCH_MODULE);
  big_result_ms(far_bench, &round_trip, &transfer, &read_all);
  stop(far_bench);
  double connect = restart_ms("seeds");
  double trace_total, trace_after, trace_reading, trace_mb, trace_read, far_total, far_after, far_reading, far_mb,
    far_read;
  uint64_t trace_events, far_events;
  far_bench = start(TS_BENCH_MODULE);
  trace_fetch(far_bench, &far_total, &far_after, &far_reading, &far_mb, &far_read, &far_events);
  stop(far_bench);
  const char *far_host = remote;
  remote = NULL; /* the same here, for comparison */
  TsWorker *near = start(TS_BENCH_MODULE);
  trace_fetch(near, &trace_total, &trace_after, &trace_reading, &trace_mb, &trace_read, &trace_events);
  stop(near);
  remote = far_host;
  printf("\nThe worker on %s, over ssh (medians of %d)\n", remote, REPEATS);
  printf("  %-52s %7.1f µs   %s\n", "  worker overhead per call", far_call - in_process,
         "ts_worker_call_async, D-Bus over the ssh pipe");
  printf("  %-52s %7.2f ms   %s\n", "64 MB result, round trip", round_trip,
         "in 1 MiB chunks (ReadBlob): no fds cross machines");
  printf("  %-52s %7.2f ms   %s\n", "64 MB result, arriving", transfer, "round trip less the worker's own time");
  printf("  %-52s %7.2f ms   %s\n", "reconnect after a lost connection", connect,
         "ssh killed; ssh connects, the worker starts there, the module opens");
  printf("\nA %" G_GUINT64_FORMAT "-event trace (a profile of steps(%d), eager), one run each\n", far_events,
         TRACE_EVENTS);
  printf("  %-52s %7.0f ms   %s\n", "over ssh: the call, profile in hand", far_total, "recording included");
  printf("  %-52s %7.0f ms   %.0f MB serialized, in 1 MiB chunks\n", "  after the calls: serialize and fetch", far_after,
         far_mb);
  printf("  %-52s %7.0f ms   %.0f MB/s, first chunk to the last\n", "  of which reading the chunks", far_reading,
         far_reading > 0 ? far_mb / (far_reading / 1e3) : 0.0);
  printf("  %-52s %7.0f ms   %s\n", "  read into a session here", far_read, "tsp_session_deserialize");
  printf("  %-52s %7.0f ms   %s\n", "here: the call, profile in hand", trace_total, "a local worker, a memfd");
  printf("  %-52s %7.0f ms   %s\n", "  after the calls: serialize and hand over", trace_after, "");
  if (far_events != trace_events || far_events < TRACE_EVENTS)
    g_error("%" G_GUINT64_FORMAT " events there, %" G_GUINT64_FORMAT " here", far_events, trace_events);
  return 0;
}
