/* test-worker.c — tracescope-worker through its client (TsWorker): calls
 * and their output, large results, and every way a module can end the
 * process — each reported with its cause, and a fresh worker working after.
 * Calls go over the fast channel (the async ones too, one at a time); the
 * /worker/fast cases compare it with D-Bus and make it fall back. */
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>

#include "test-wait.h"
#include "tracescope-onnx.h"
#include "tracescope-profiler.h"
#include "ts-fast-channel.h"
#include "ts-worker-protocol.h"
#include "ts-worker-optimized.h"
#include "ts-worker.h"


static char *misbehave_path;

/* ---- helpers ---------------------------------------------------------------- */


typedef struct {
  TsWorker *worker;
  GPtrArray *lines;   /* "1:7:text": fd, call id, line */
  TsWorkerDeath *death;
  GPtrArray *traces;  /* TsWorkerTrace function names */
  double progress;    /* the last ::progress fraction */
} Fixture;

static void on_output(TsWorker *w, guint call_id, int fd, const char *line, gint64 time, Fixture *f)
{
  g_ptr_array_add(f->lines, g_strdup_printf("%d:%u:%s", fd, call_id, line));
}

static void on_died(TsWorker *w, TsWorkerDeath *death, Fixture *f)
{
  f->death = ts_worker_death_copy(death);
}

static void on_trace(TsWorker *w, TsWorkerTrace *t, Fixture *f)
{
  g_assert_nonnull(t->graph);
  g_ptr_array_add(f->traces, g_strdup(t->function));
}

static void on_progress(TsWorker *w, guint call_id, double fraction, Fixture *f)
{
  f->progress = fraction;
}

/* A started worker with no module open. */
static void fixture_start_worker(Fixture *f, guint64 memory_limit, gboolean fast)
{
  f->worker = ts_worker_new(memory_limit);
  ts_worker_set_fast_calls(f->worker, fast);
  g_signal_connect(f->worker, "progress", G_CALLBACK(on_progress), f);
  f->lines = g_ptr_array_new_with_free_func(g_free);
  f->traces = g_ptr_array_new_with_free_func(g_free);
  g_signal_connect(f->worker, "output", G_CALLBACK(on_output), f);
  g_signal_connect(f->worker, "died", G_CALLBACK(on_died), f);
  g_signal_connect(f->worker, "trace", G_CALLBACK(on_trace), f);
  GAsyncResult *res = NULL;
  ts_worker_start_async(f->worker, NULL, store_result, &res);
  g_autoptr(GError) error = NULL;
  g_assert_true(ts_worker_start_finish(f->worker, wait_result(&res, "the worker to start"), &error));
  g_assert_no_error(error);
  g_object_unref(res);
}

/* Opens the module at path in f's worker; its title and functions into
 * the caller's (each may be NULL). */
static void open_module(Fixture *f, const char *path, char **title_out, GPtrArray **functions_out)
{
  GAsyncResult *res = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *title = NULL, *opened = NULL;
  g_autoptr(GPtrArray) functions = NULL;
  ts_worker_open_async(f->worker, path, NULL, store_result, &res);
  g_assert_true(ts_worker_open_finish(f->worker, wait_result(&res, "the module to open"), &title,
                                      &opened, &functions, &error));
  g_assert_no_error(error);
  g_object_unref(res);
  if (title_out)
    *title_out = g_steal_pointer(&title);
  if (functions_out)
    *functions_out = g_steal_pointer(&functions);
}

/* A started worker with the misbehaving module open. */
static void fixture_start_with(Fixture *f, guint64 memory_limit, gboolean fast)
{
  fixture_start_worker(f, memory_limit, fast);
  g_autofree char *title = NULL;
  g_autoptr(GPtrArray) functions = NULL;
  open_module(f, misbehave_path, &title, &functions);
  g_assert_cmpstr(title, ==, "misbehaving test module");
  g_assert_cmpuint(functions->len, ==, 10);
  TsWorkerFunction *good = g_ptr_array_index(functions, 0);
  g_assert_cmpstr(good->name, ==, "good");
  g_assert_cmpstrv(good->params, ((const char *const[]){ "x", NULL }));
}

static void fixture_start(Fixture *f, guint64 memory_limit)
{
  fixture_start_with(f, memory_limit, TRUE);
}

static gboolean death_known(gpointer data)
{
  return ((Fixture *)data)->death != NULL;
}

static gboolean worker_gone(gpointer data)
{
  return ((Fixture *)data)->worker == NULL;
}

static void fixture_stop(Fixture *f)
{
  if (!f->death) {
    ts_worker_close(f->worker);
    test_wait_for(death_known, f, "the worker to end");
    g_assert_true(f->death->expected);
  }
  g_object_add_weak_pointer(G_OBJECT(f->worker), (gpointer *)&f->worker);
  g_object_unref(f->worker);
  test_wait_for(worker_gone, f, "the worker object to go"); /* its readers let go */
  g_ptr_array_unref(f->lines);
  g_ptr_array_unref(f->traces);
  ts_worker_death_free(f->death);
}

/* Calls function(args) and waits; the result, or NULL with *error. */
static TsCallResult *call(Fixture *f, guint id, const char *function, const char *const *args,
                          gboolean eager, GCancellable *cancel, GError **error)
{
  GAsyncResult *res = NULL;
  ts_worker_call_async(f->worker, id, function, args, 1, eager, cancel, store_result, &res);
  TsCallResult *r = ts_worker_call_finish(f->worker, wait_result(&res, function), error);
  g_object_unref(res);
  return r;
}

static gboolean has_line(Fixture *f, const char *line)
{
  for (guint i = 0; i < f->lines->len; i++)
    if (strcmp(g_ptr_array_index(f->lines, i), line) == 0)
      return TRUE;
  return FALSE;
}

/* ---- calls -------------------------------------------------------------------- */

static void test_call(void)
{
  Fixture f = { 0 };
  fixture_start(&f, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(TsCallResult) r = call(&f, 1, "good", (const char *const[]){ "f32[2]=1,2", NULL }, FALSE,
                                   NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(r->value_text, ==, "Tensor([2. 3.], shape=(2,), dtype=float32)");
  g_assert_cmpstr(r->shape_text, ==, "f32[2]");
  g_assert_cmpuint(r->n_calls, ==, 1);
  g_assert_cmpint(r->dtype, ==, TS_F32);
  g_assert_cmpint(r->shape.rank, ==, 1);
  gsize size;
  const float *v = g_bytes_get_data(r->data, &size);
  g_assert_cmpuint(size, ==, 2 * sizeof(float));
  g_assert_cmpfloat(v[0], ==, 2.0f);
  g_assert_cmpfloat(v[1], ==, 3.0f);
  /* the first graph-mode call traced, and the graph came across */
  g_assert_cmpuint(f.traces->len, ==, 1);
  g_assert_cmpstr(g_ptr_array_index(f.traces, 0), ==, "good");

  /* errors of the call are the engine's, the worker stays */
  g_autoptr(TsCallResult) bad = call(&f, 2, "good", (const char *const[]){ "f32[2]=1,2", "3", NULL },
                                     FALSE, NULL, &error);
  g_assert_null(bad);
  g_assert_error(error, TS_ENGINE_ERROR, TS_ERR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(error->message, "good takes 1 argument, got 2"));
  g_clear_error(&error);
  g_autoptr(TsCallResult) missing = call(&f, 3, "nope", (const char *const[]){ NULL }, FALSE, NULL, &error);
  g_assert_error(error, TS_ENGINE_ERROR, TS_ERR_NOT_FOUND);
  g_clear_error(&error);
  g_assert_true(ts_worker_get_alive(f.worker));
  fixture_stop(&f);
}

/* A function returning None (the guide's find_next_odd): "None" for its
 * text and type, no values and no results list, over both channels. */
static void test_none_result(void)
{
  for (int fast = 0; fast < 2; fast++) {
    Fixture f = { 0 };
    fixture_start_worker(&f, 0, fast);
    open_module(&f, g_getenv("TRACESCOPE_SEEDS"), NULL, NULL);
    g_autoptr(GError) error = NULL;
    for (int eager = 0; eager < 2; eager++) {
      g_autoptr(TsCallResult) r = call(&f, 1 + eager, "find_next_odd", (const char *const[]){ NULL },
                                       eager, NULL, &error);
      g_assert_no_error(error);
      g_assert_cmpstr(r->value_text, ==, "None");
      g_assert_cmpstr(r->shape_text, ==, "None");
      g_assert_null(r->data);
      g_assert_cmpuint(r->n_results, ==, 0);
      g_assert_null(r->results);
    }
    fixture_stop(&f);
  }
}

/* A function returning a tuple: the text of them all, and each tensor's
 * text, type and values, alike over the fast channel and D-Bus. */
static void test_tuple_results(void)
{
  g_autofree char *tiny = g_build_filename(TS_TEST_MODULES_DIR, "tiny.so", NULL);
  for (int fast = 0; fast < 2; fast++) {
    Fixture f = { 0 };
    fixture_start_worker(&f, 0, fast);
    open_module(&f, tiny, NULL, NULL);
    g_autoptr(GError) error = NULL;
    for (int eager = 0; eager < 2; eager++) {
      g_autoptr(TsCallResult) r = call(&f, 1 + eager, "min_max",
                                       (const char *const[]){ "f32[3]=1,-2,5", NULL }, eager, NULL,
                                       &error);
      g_assert_no_error(error);
      g_assert_cmpstr(r->value_text, ==,
                      "(Tensor(-2.0, shape=(), dtype=float32), Tensor(5.0, shape=(), dtype=float32))");
      g_assert_cmpstr(r->shape_text, ==, "(f32[], f32[])");
      g_assert_null(r->data);
      g_assert_cmpuint(r->n_results, ==, 2);
      for (int i = 0; i < 2; i++) {
        const TsResultValue *v = &r->results[i];
        g_assert_cmpstr(v->shape_text, ==, "f32[]");
        g_assert_cmpstr(v->value_text, ==,
                        i ? "Tensor(5.0, shape=(), dtype=float32)" : "Tensor(-2.0, shape=(), dtype=float32)");
        g_assert_cmpint(v->dtype, ==, TS_F32);
        g_assert_cmpint(v->shape.rank, ==, 0);
        gsize size;
        const float *x = g_bytes_get_data(v->data, &size);
        g_assert_cmpuint(size, ==, sizeof(float));
        g_assert_cmpfloat(*x, ==, i ? 5.0f : -2.0f);
      }
    }
    /* a one-tensor result has no results list */
    g_autoptr(TsCallResult) one = call(&f, 3, "identity", (const char *const[]){ "f32[2]=1,2", NULL },
                                       FALSE, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(one->n_results, ==, 0);
    g_assert_null(one->results);
    g_assert_nonnull(one->data);
    g_assert_cmpuint(ts_worker_get_fast_calls(f.worker), ==, fast ? 3 : 0);
    fixture_stop(&f);
  }
}

/* What a call prints comes line by line, with its call, before its result. */
static void test_output_attributed(void)
{
  Fixture f = { 0 };
  fixture_start(&f, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(TsCallResult) r = call(&f, 7, "chatty", (const char *const[]){ "f32[]=1", NULL }, TRUE,
                                   NULL, &error);
  g_assert_no_error(error);
  g_assert_true(has_line(&f, "1:7:chatty out 1"));
  g_assert_true(has_line(&f, "2:7:chatty err"));
  g_assert_true(has_line(&f, "1:7:chatty out 2 (no newline)"));
  fixture_stop(&f);
}

/* A 64 MB result crosses in a memfd, whole. */
static void test_large_result(void)
{
  Fixture f = { 0 };
  fixture_start(&f, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(TsCallResult) r = call(&f, 1, "big", (const char *const[]){ "16777216", NULL }, TRUE,
                                   NULL, &error);
  g_assert_no_error(error);
  gsize size;
  const float *v = g_bytes_get_data(r->data, &size);
  g_assert_cmpuint(size, ==, 64u << 20);
  g_assert_cmpfloat(v[0], ==, 1.0f);
  g_assert_cmpfloat(v[(16u << 20) - 1], ==, 1.0f);
  fixture_stop(&f);
}

/* ---- profiling ------------------------------------------------------------------- */

static TsCallResult *call_with(Fixture *f, guint id, const char *function, const char *const *args,
                               guint repeat, GVariant *options, GError **error)
{
  GAsyncResult *res = NULL;
  ts_worker_call_with_options_async(f->worker, id, function, args, repeat, FALSE, options, NULL,
                                    store_result, &res);
  TsCallResult *r = ts_worker_call_finish(f->worker, wait_result(&res, function), error);
  g_object_unref(res);
  return r;
}

/* "profile": the calls' session comes back (1000 calls: in a memfd), one
 * CALL per call and the same ops in each; without it, none. */
static void test_profile(void)
{
  Fixture f = { 0 };
  fixture_start(&f, 0);
  g_autoptr(GError) error = NULL;
  const char *const args[] = { "f32[2]=1,2", NULL };
  g_autoptr(TsCallResult) plain = call_with(&f, 1, "good", args, 2, NULL, &error);
  g_assert_no_error(error);
  g_assert_null(plain->profile);
  g_autoptr(TsCallResult) r = call_with(&f, 2, "good", args, 1000, g_variant_new_parsed("{'profile': <true>}"), &error);
  g_assert_no_error(error);
  g_assert_nonnull(r->profile);
  g_assert_cmpuint(g_bytes_get_size(r->profile), >=, TS_WORKER_FD_THRESHOLD);
  tsp_session *s = tsp_session_deserialize(r->profile, &error);
  g_assert_no_error(error);
  GArray *calls = tsp_session_calls(s, &TSP_FILTER_ALL);
  g_assert_cmpuint(calls->len, ==, 1000);
  for (guint i = 0; i < calls->len; i++) {
    g_assert_cmpstr(g_array_index(calls, tsp_call, i).function, ==, "good");
    g_assert_cmpint(g_array_index(calls, tsp_call, i).mode, ==, TSP_MODE_GRAPH);
  }
  g_array_unref(calls);
  tsp_stats *st = tsp_stats_compute(s, TSP_BY_NODE, &TSP_FILTER_ALL);
  g_assert_cmpint(st->n, >, 0);
  for (int i = 0; i < st->n; i++)
    g_assert_cmpuint(st->rows[i].count, ==, 1000);
  tsp_stats_free(st);
  tsp_session_free(s);
  fixture_stop(&f);
}

/* ListDevices names the engine's devices (the CPU first, SIM:0 under
 * TRACESCOPE_DEVICES=sim) and its note on real ones; "device" places the
 * calls there (the profile's ops say so) for those calls only; a device
 * the worker lacks is refused, naming the ones it has. */
static void test_devices(void)
{
  Fixture f = { 0 };
  fixture_start(&f, 0);
  GAsyncResult *res = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *note = NULL;
  ts_worker_list_devices_async(f.worker, NULL, store_result, &res);
  g_autoptr(GPtrArray) devices = ts_worker_list_devices_finish(f.worker, wait_result(&res, "the devices"), &note, &error);
  g_object_unref(res);
  g_assert_no_error(error);
  g_assert_cmpuint(devices->len, >=, 2);
  TsWorkerDevice *cpu = g_ptr_array_index(devices, 0), *sim = g_ptr_array_index(devices, 1);
  g_assert_cmpstr(cpu->name, ==, "CPU");
  g_assert_cmpstr(sim->name, ==, "SIM:0");
  g_assert_cmpstr(sim->description, !=, "");
  g_assert_cmpuint(sim->total_bytes, >, 0);
  g_assert_true(g_str_has_prefix(note, "CUDA: "));

  const char *const args[] = { "f32[2]=1,2", NULL };
  const char *const where[] = { "SIM:0", "CPU" };
  for (int k = 0; k < 2; k++) {
    g_autoptr(TsCallResult) r =
      call_with(&f, (guint)k + 1, "good", args, 1,
                k == 0 ? g_variant_new_parsed("{'profile': <true>, 'device': <'SIM:0'>}")
                       : g_variant_new_parsed("{'profile': <true>}"), &error);
    g_assert_no_error(error);
    tsp_session *s = tsp_session_deserialize(r->profile, &error);
    g_assert_no_error(error);
    tsp_stats *st = tsp_stats_compute(s, TSP_BY_OP, &TSP_FILTER_ALL);
    g_assert_cmpint(st->n, >, 0);
    for (int i = 0; i < st->n; i++)
      g_assert_cmpstr(st->rows[i].device, ==, where[k]);
    tsp_stats_free(st);
    tsp_session_free(s);
  }
  TsCallResult *bad = call_with(&f, 3, "good", args, 1, g_variant_new_parsed("{'device': <'CUDA:7'>}"), &error);
  g_assert_null(bad);
  g_assert_error(error, TS_ENGINE_ERROR, TS_ERR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(error->message, "no device 'CUDA:7'"));
  g_assert_nonnull(strstr(error->message, "CPU, SIM:0"));
  fixture_stop(&f);
}

/* "compare": N calls each way after a warm-up, and the windows that tell them apart. */
static void test_compare(void)
{
  Fixture f = { 0 };
  fixture_start(&f, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(TsCallResult) r = call_with(&f, 1, "good", (const char *const[]){ "f32[2]=1,2", NULL }, 1,
                                        g_variant_new_parsed("{'compare': <uint32 4>}"), &error);
  g_assert_no_error(error);
  g_assert_nonnull(r->profile);
  g_assert_nonnull(r->compare);
  tsp_session *s = tsp_session_deserialize(r->profile, &error);
  g_assert_no_error(error);
  tsp_filter w[2] = { { TSP_MODE_ALL, 0, 0 }, { TSP_MODE_ALL, 0, 0 } };
  guint32 n = 0;
  g_assert_true(g_variant_lookup(r->compare, "n-calls", "u", &n));
  g_assert_true(g_variant_lookup(r->compare, "eager-window", "(tt)", &w[0].from_ns, &w[0].to_ns));
  g_assert_true(g_variant_lookup(r->compare, "graph-window", "(tt)", &w[1].from_ns, &w[1].to_ns));
  g_assert_cmpuint(n, ==, 4);
  for (int k = 0; k < 2; k++) {
    GArray *calls = tsp_session_calls(s, &w[k]);
    g_assert_cmpuint(calls->len, ==, 4);
    for (guint i = 0; i < calls->len; i++)
      g_assert_cmpint(g_array_index(calls, tsp_call, i).mode, ==, k ? TSP_MODE_GRAPH : TSP_MODE_EAGER);
    g_array_unref(calls);
  }
  tsp_compare *c = tsp_compare_from_session(s, &w[0], &w[1], (int)n);
  g_assert_cmpint(c->n_rows, >, 0);
  g_assert_cmpfloat(c->speedup, >, 0);
  tsp_compare_free(c);
  tsp_session_free(s);
  fixture_stop(&f);
}

/* A request for more calls than TS_WORKER_REPEAT_MAX, as a repeat count or
 * as compare's N, is refused before any call, naming the count and the
 * limit; the worker takes the next call as ever. */
static void test_repeat_capped(void)
{
  Fixture f = { 0 };
  fixture_start(&f, 0);
  const char *const args[] = { "f32[2]=1,2", NULL };
  static const struct {
    guint repeat;
    const char *options;
    const char *message;
  } refused[] = {
    { TS_WORKER_REPEAT_MAX + 1, "@a{sv} {}", "repeat 1000001 is more calls than one call request makes (at most 1000000)" },
    { G_MAXUINT32, "{'profile': <true>}", "repeat 4294967295 is more calls" },
    { 1, "{'compare': <uint32 4294967295>}", "compare 4294967295 is more calls" },
    { 1, "{'compare': <uint32 1000001>}", "compare 1000001 is more calls" },
  };
  for (guint i = 0; i < G_N_ELEMENTS(refused); i++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(TsCallResult) r = call_with(&f, i + 1, "good", args, refused[i].repeat,
                                          g_variant_new_parsed(refused[i].options), &error);
    g_assert_null(r);
    g_assert_error(error, TS_ENGINE_ERROR, TS_ERR_INVALID_ARGUMENT);
    g_assert_nonnull(strstr(error->message, refused[i].message));
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(TsCallResult) r = call_with(&f, 9, "good", args, 3, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(r->n_calls, ==, 3);
  fixture_stop(&f);
}

/* ---- deaths --------------------------------------------------------------------- */

typedef struct {
  const char *function;
  int signal;
  const char *summary;   /* a substring of the summary */
  const char *frame;     /* a function the backtrace must name, or NULL */
} Crash;

/* Calls a function that ends the worker; checks the death and that the
 * call failed with it. */
static TsWorkerDeath *die(Fixture *f, const char *function, const char *const *args, GCancellable *cancel)
{
  g_autoptr(GError) error = NULL;
  guint fast = ts_worker_get_fast_calls(f->worker);
  g_autoptr(TsCallResult) r = call(f, 9, function, args, TRUE, cancel, &error);
  g_assert_null(r);
  g_assert_cmpuint(ts_worker_get_fast_calls(f->worker), ==, fast + 1);
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED);
  g_assert_nonnull(f->death);
  g_assert_false(f->death->expected);
  g_assert_cmpstr(error->message, ==, f->death->summary);
  g_assert_false(ts_worker_get_alive(f->worker));
  return f->death;
}

static void check_crash(gconstpointer data)
{
  const Crash *c = data;
  Fixture f = { 0 };
  fixture_start(&f, 0);
  TsWorkerDeath *d = die(&f, c->function, (const char *const[]){ "f32[2]=1,-1", NULL }, NULL);
  g_test_message("%s: %s\nlast op: %s\n%s", c->function, d->summary, d->last_op, d->backtrace);
  g_assert_cmpint(d->signal, ==, c->signal);
  g_assert_nonnull(strstr(d->summary, c->summary));
  g_assert_cmpuint(d->call_id, ==, 9);
  if (c->frame) {
    g_assert_nonnull(d->backtrace);
    g_assert_nonnull(strstr(d->backtrace, c->frame));
    g_assert_nonnull(strstr(d->backtrace, "misbehave.c:"));
  }
  fixture_stop(&f);
}

static void test_segv_last_op(void)
{
  Fixture f = { 0 };
  fixture_start(&f, 0);
  TsWorkerDeath *d = die(&f, "segv", (const char *const[]){ "f32[2]=1,-1", NULL }, NULL);
  g_assert_nonnull(d->last_op);
  g_assert_true(g_str_has_prefix(d->last_op, "Relu at "));
  g_assert_nonnull(strstr(d->last_op, "misbehave.c:"));
  fixture_stop(&f);
}

static void test_exit(void)
{
  Fixture f = { 0 };
  fixture_start(&f, 0);
  TsWorkerDeath *d = die(&f, "exit_call", (const char *const[]){ "1", NULL }, NULL);
  g_assert_true(d->exited);
  g_assert_cmpint(d->exit_status, ==, 3);
  g_assert_cmpstr(d->summary, ==, "called exit(3)");
  fixture_stop(&f);
}

static void test_out_of_memory(void)
{
  Fixture f = { 0 };
  fixture_start(&f, 1u << 30);
  TsWorkerDeath *d = die(&f, "hog", (const char *const[]){ "1", NULL }, NULL);
  g_assert_true(d->out_of_memory);
  g_assert_nonnull(strstr(d->summary, "ran out of memory"));
  g_assert_nonnull(strstr(d->summary, "limit of 1.0")); /* "1.0 GiB", with a no-break space */
  fixture_stop(&f);
}

static gboolean tick_on(gpointer data)
{
  return G_SOURCE_CONTINUE;
}

static gboolean call_running(gpointer data)
{
  return ts_worker_get_running_call(data) != 0;
}

/* Calls function and cancels it once the worker is inside it. */
static TsCallResult *call_and_cancel(Fixture *f, guint id, const char *function, gboolean eager,
                                     GError **error)
{
  g_autoptr(GCancellable) cancel = g_cancellable_new();
  GAsyncResult *res = NULL;
  ts_worker_call_async(f->worker, id, function, (const char *const[]){ "f32[2]=1,-1", NULL }, 1, eager,
                       cancel, store_result, &res);
  /* the status page sends no event: the loop turns every few ms while waiting */
  guint tick = g_timeout_add(5, tick_on, NULL);
  test_wait_for(call_running, f->worker, "the call to start");
  g_source_remove(tick);
  g_assert_cmpuint(ts_worker_get_running_call(f->worker), ==, id);
  g_assert_cmpuint(ts_worker_get_fast_calls(f->worker), >, 0); /* this one */
  g_cancellable_cancel(cancel);
  TsCallResult *r = ts_worker_call_finish(f->worker, wait_result(&res, function), error);
  g_object_unref(res);
  return r;
}

/* A host loop cannot stop at an op: the worker is killed after the grace period. */
static void test_hang_killed(void)
{
  Fixture f = { 0 };
  fixture_start(&f, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(TsCallResult) r = call_and_cancel(&f, 9, "spin", TRUE, &error);
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED);
  TsWorkerDeath *d = f.death;
  g_assert_nonnull(d);
  g_assert_true(d->hung);
  g_assert_cmpint(d->signal, ==, SIGKILL);
  /* killed, it still says where it was: noted when Cancel came */
  g_assert_nonnull(d->last_op);
  g_assert_true(g_str_has_prefix(d->last_op, "Relu at "));
  g_assert_nonnull(strstr(d->summary, "did not stop within 2 s of Cancel"));
  fixture_stop(&f);
}

/* An endless TS_WHILE stops at its next op: cancelled, the worker lives on. */
static void test_endless_loop_cancelled(void)
{
  for (int eager = 0; eager < 2; eager++) {
    Fixture f = { 0 };
    fixture_start(&f, 0);
    g_autoptr(GError) error = NULL;
    g_autoptr(TsCallResult) r = call_and_cancel(&f, 4, "endless", eager, &error);
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    g_clear_error(&error);
    g_assert_true(ts_worker_get_alive(f.worker));
    g_autoptr(TsCallResult) again = call(&f, 5, "good", (const char *const[]){ "f32[]=1", NULL }, FALSE,
                                         NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(again->value_text, ==, "Tensor(2.0, shape=(), dtype=float32)");
    fixture_stop(&f);
  }
}


/* ---- the fast channel ----------------------------------------------------------- */

static TsCallResult *call_sync(Fixture *f, guint id, const char *function, const char *const *args,
                               guint repeat, gboolean eager, GCancellable *cancel, GError **error)
{
  return ts_worker_call_sync(f->worker, id, function, args, repeat, eager, NULL, cancel, error);
}

typedef struct {
  const char *function;
  const char *args[3];
  gboolean eager;
} Case;

static const Case cases[] = {
  { "good", { "f32[2]=1,2", NULL }, FALSE },
  { "good", { "i32[2,2]=1,2,3,4", NULL }, TRUE },
  { "good", { "f32[?,3]", NULL }, FALSE },           /* traced only */
  { "chatty", { "f32[]=2", NULL }, TRUE },
  { "good", { "f32[2]=1,2", "3", NULL }, FALSE },    /* an error: too many arguments */
  { "good", { "f32[2]=1,", NULL }, FALSE },          /* an error: a bad argument */
  { "nope", { NULL }, FALSE },                       /* an error: no such function */
};

static void assert_same_result(const TsCallResult *a, const GError *ea, const TsCallResult *b, const GError *eb)
{
  if (ea || eb) {
    g_assert_nonnull(ea);
    g_assert_nonnull(eb);
    g_assert_true(ea->domain == eb->domain);
    g_assert_cmpint(ea->code, ==, eb->code);
    g_assert_cmpstr(ea->message, ==, eb->message);
    return;
  }
  g_assert_cmpuint(a->call_id, ==, b->call_id);
  g_assert_cmpint(a->traced_only, ==, b->traced_only);
  g_assert_cmpstr(a->value_text, ==, b->value_text);
  g_assert_cmpstr(a->shape_text, ==, b->shape_text);
  g_assert_cmpuint(a->n_calls, ==, b->n_calls);
  g_assert_cmpint(a->dtype, ==, b->dtype);
  g_assert_cmpint(a->shape.rank, ==, b->shape.rank);
  for (int i = 0; i < a->shape.rank; i++)
    g_assert_cmpint(a->shape.dim[i], ==, b->shape.dim[i]);
  g_assert_true((a->data == NULL) == (b->data == NULL));
  if (a->data)
    g_assert_true(g_bytes_equal(a->data, b->data));
}

/* The same calls over the fast channel (async and sync) and over D-Bus
 * alone: the same results and errors, the same lines. */
static void test_fast_same_as_dbus(void)
{
  Fixture fast = { 0 }, dbus = { 0 };
  fixture_start(&fast, 0);
  fixture_start_with(&dbus, 0, FALSE);
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    const Case *c = &cases[i];
    g_autoptr(GError) e_dbus = NULL, e_async = NULL, e_sync = NULL;
    guint id = 10 + i;
    g_autoptr(TsCallResult) r_dbus = call(&dbus, id, c->function, c->args, c->eager, NULL, &e_dbus);
    g_autoptr(TsCallResult) r_async = call(&fast, id, c->function, c->args, c->eager, NULL, &e_async);
    assert_same_result(r_dbus, e_dbus, r_async, e_async);
    g_autoptr(TsCallResult) r_sync = call_sync(&fast, id, c->function, c->args, 1, c->eager, NULL, &e_sync);
    assert_same_result(r_dbus, e_dbus, r_sync, e_sync);
  }
  g_assert_cmpuint(ts_worker_get_fast_calls(fast.worker), ==, 2 * G_N_ELEMENTS(cases));
  g_assert_cmpuint(ts_worker_get_fast_calls(dbus.worker), ==, 0);
  /* chatty's lines: twice over the fast channel, once over D-Bus */
  g_assert_cmpuint(dbus.lines->len, >, 0);
  for (guint i = 0; i < dbus.lines->len; i++) {
    const char *line = g_ptr_array_index(dbus.lines, i);
    guint n = 0;
    for (guint k = 0; k < fast.lines->len; k++)
      n += strcmp(g_ptr_array_index(fast.lines, k), line) == 0;
    g_assert_cmpuint(n, ==, 2);
  }
  g_assert_cmpuint(fast.lines->len, ==, 2 * dbus.lines->len);
  fixture_stop(&fast);
  fixture_stop(&dbus);
}

/* A request too big for the channel goes over D-Bus; a result too big for
 * it (or in a memfd) is fetched over D-Bus after the fast reply. */
static void test_fast_large_falls_back(void)
{
  Fixture f = { 0 };
  fixture_start(&f, 0);
  enum { N = 600000 };
  /* an argument of 1 MiB and more: answered over D-Bus (it does not parse) */
  g_autofree char *huge = g_strnfill(TS_FAST_AREA_SIZE + 16, '[');
  g_autoptr(GError) error = NULL;
  g_autoptr(TsCallResult) r = call_sync(&f, 1, "good", (const char *const[]){ huge, NULL }, 1, TRUE,
                                        NULL, &error);
  g_assert_null(r);
  g_assert_error(error, TS_ENGINE_ERROR, TS_ERR_INVALID_ARGUMENT);
  g_assert_true(g_str_has_prefix(error->message, "argument 0 (x): "));
  g_clear_error(&error);
  g_assert_cmpuint(ts_worker_get_fast_calls(f.worker), ==, 0);
  /* the result: 2.4 MB in a memfd */
  g_autoptr(TsCallResult) big = call_sync(&f, 2, "big", (const char *const[]){ "600000", NULL }, 1, TRUE,
                                          NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ts_worker_get_fast_calls(f.worker), ==, 1);
  g_assert_cmpuint(g_bytes_get_size(big->data), ==, N * sizeof(float));
  g_assert_cmpfloat(((const float *)g_bytes_get_data(big->data, NULL))[N - 1], ==, 1.0f);
  /* and the channel goes on */
  g_autoptr(TsCallResult) small = call_sync(&f, 3, "good", (const char *const[]){ "f32[]=1", NULL }, 1, TRUE,
                                            NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(small->value_text, ==, "Tensor(2.0, shape=(), dtype=float32)");
  g_assert_cmpuint(ts_worker_get_fast_calls(f.worker), ==, 2);
  fixture_stop(&f);
}

/* A call made while SetInputSignature is on its way goes after it (over
 * D-Bus, in order): the signature already holds for it. */
static void test_fast_after_method(void)
{
  Fixture f = { 0 };
  fixture_start(&f, 0);
  GAsyncResult *set = NULL, *res = NULL;
  ts_worker_set_input_signature_async(f.worker, "good", (const char *const[]){ "f32[?]", NULL }, NULL,
                                      store_result, &set);
  ts_worker_call_async(f.worker, 1, "good", (const char *const[]){ "i32[2]=1,2", NULL }, 1, FALSE, NULL,
                       store_result, &res);
  g_autoptr(GError) error = NULL;
  g_assert_true(ts_worker_set_input_signature_finish(f.worker, wait_result(&set, "the signature"), &error));
  g_assert_no_error(error);
  g_autoptr(TsCallResult) r = ts_worker_call_finish(f.worker, wait_result(&res, "good"), &error);
  g_assert_null(r);
  g_assert_nonnull(error);
  g_assert_cmpuint(ts_worker_get_fast_calls(f.worker), ==, 0);
  g_clear_error(&error);
  g_object_unref(set);
  g_object_unref(res);
  /* with nothing in flight, fast again, under the signature */
  g_autoptr(TsCallResult) ok = call_sync(&f, 2, "good", (const char *const[]){ "f32[2]=1,2", NULL }, 1, FALSE,
                                         NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(ok->shape_text, ==, "f32[2]");
  g_assert_cmpuint(ts_worker_get_fast_calls(f.worker), ==, 1);
  fixture_stop(&f);
}

typedef struct {
  Fixture *f;
  GAsyncResult *res;
  guint traces;      /* what had come when the result did */
  double progress;
} Order;

static void note_order(GObject *source, GAsyncResult *res, gpointer data)
{
  Order *o = data;
  o->traces = o->f->traces->len;
  o->progress = o->f->progress;
  o->res = g_object_ref(res);
}

/* The signals a call sends (its trace, its progress) are delivered before
 * its result, by either API. */
static void test_fast_signals_before_result(void)
{
  for (int sync = 0; sync < 2; sync++) {
    Fixture f = { 0 };
    fixture_start(&f, 0);
    g_autoptr(GError) error = NULL;
    const char *const args[] = { "f32[3]=1,2,3", NULL };
    Order o = { .f = &f };
    g_autoptr(TsCallResult) r = NULL;
    if (sync) {
      r = call_sync(&f, 1, "good", args, 50, FALSE, NULL, &error);
      o.traces = f.traces->len;
      o.progress = f.progress;
    } else {
      ts_worker_call_async(f.worker, 1, "good", args, 50, FALSE, NULL, note_order, &o);
      r = ts_worker_call_finish(f.worker, wait_result(&o.res, "good"), &error);
      g_object_unref(o.res);
    }
    g_assert_no_error(error);
    g_assert_cmpuint(r->n_calls, ==, 50);
    g_assert_cmpuint(o.traces, ==, 1);
    g_assert_cmpfloat(o.progress, ==, 1.0);
    g_assert_cmpuint(ts_worker_get_fast_calls(f.worker), ==, 1);
    fixture_stop(&f);
  }
}

/* A crash during a call waited for here is reported as any other. */
static void test_fast_sync_crash(void)
{
  Fixture f = { 0 };
  fixture_start(&f, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(TsCallResult) r = call_sync(&f, 9, "segv", (const char *const[]){ "f32[2]=1,-1", NULL }, 1,
                                        TRUE, NULL, &error);
  g_assert_null(r);
  g_assert_cmpuint(ts_worker_get_fast_calls(f.worker), ==, 1);
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED);
  g_assert_nonnull(f.death);
  g_assert_cmpstr(error->message, ==, f.death->summary);
  g_assert_nonnull(strstr(f.death->summary, "crashed: SIGSEGV"));
  g_assert_cmpuint(f.death->call_id, ==, 9);
  g_assert_true(g_str_has_prefix(f.death->last_op, "Relu at "));
  g_assert_nonnull(strstr(f.death->backtrace, "misbehave.c:"));
  fixture_stop(&f);
}

typedef struct {
  TsWorker *worker;
  GCancellable *cancel;
} Canceller;

/* Cancels once the worker is inside the call (the status page says so). */
static gboolean cancel_when_running(gpointer data)
{
  Canceller *c = data;
  if (ts_worker_get_running_call(c->worker) == 0)
    return G_SOURCE_CONTINUE;
  g_cancellable_cancel(c->cancel);
  return G_SOURCE_REMOVE;
}

/* Cancel reaches a call waited for here: an endless loop stops at its next
 * op, a host loop is killed after the grace period. */
static void test_fast_sync_cancel(void)
{
  const char *const args[] = { "f32[2]=1,-1", NULL };
  for (int hang = 0; hang < 2; hang++) {
    Fixture f = { 0 };
    fixture_start(&f, 0);
    g_autoptr(GCancellable) cancel = g_cancellable_new();
    Canceller c = { f.worker, cancel };
    g_timeout_add(5, cancel_when_running, &c);
    g_autoptr(GError) error = NULL;
    g_autoptr(TsCallResult) r = call_sync(&f, 4, hang ? "spin" : "endless", args, 1, FALSE, cancel, &error);
    g_assert_null(r);
    g_assert_true(g_cancellable_is_cancelled(cancel)); /* so the poll is gone */
    g_assert_cmpuint(ts_worker_get_fast_calls(f.worker), ==, 1);
    if (hang) {
      g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED);
      g_assert_true(f.death->hung);
    } else {
      g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
      g_clear_error(&error);
      g_autoptr(TsCallResult) again = call_sync(&f, 5, "good", (const char *const[]){ "f32[]=1", NULL }, 1,
                                                FALSE, NULL, &error);
      g_assert_no_error(error);
      g_assert_cmpstr(again->value_text, ==, "Tensor(2.0, shape=(), dtype=float32)");
      g_assert_cmpuint(ts_worker_get_fast_calls(f.worker), ==, 2);
    }
    fixture_stop(&f);
  }
}

/* ---- optimized graphs -------------------------------------------------------- */

static void on_traced(TsWorker *w, TsWorkerTrace *t, TsWorkerTrace **slot)
{
  /* the signal's trace goes after the handlers: its graph moves here */
  TsWorkerTrace *kept = g_new0(TsWorkerTrace, 1);
  kept->function = g_strdup(t->function);
  kept->signature = g_strdup(t->signature);
  kept->graph = g_steal_pointer(&t->graph);
  *slot = kept;
}

static TsWorkerOptimized *get_optimized(TsWorker *w, const char *function, const char *signature,
                                        const ts_graph *traced, GError **error)
{
  GAsyncResult *res = NULL;
  ts_worker_get_optimized_async(w, function, signature, traced, NULL, store_result, &res);
  TsWorkerOptimized *o = ts_worker_get_optimized_finish(w, wait_result(&res, "the optimized graph"), error);
  g_object_unref(res);
  return o;
}

/* GetOptimized: the graph a concrete function runs after the passes, one
 * line per pass, and what each of its nodes stands for in the app's copy
 * of the traced graph: sequential_model's dense layers are fused MatMul,
 * Add, Relu (its 2 MB of weights come in a memfd). */
static void test_optimized_graph(void)
{
  TsWorker *w = ts_worker_new(0);
  TsWorkerTrace *t = NULL;
  g_signal_connect(w, "trace", G_CALLBACK(on_traced), &t);
  GAsyncResult *res = NULL;
  g_autoptr(GError) error = NULL;
  ts_worker_start_async(w, NULL, store_result, &res);
  g_assert_true(ts_worker_start_finish(w, wait_result(&res, "the worker to start"), &error));
  g_clear_object(&res);
  g_autofree char *title = NULL, *path = NULL;
  g_autoptr(GPtrArray) functions = NULL;
  ts_worker_open_async(w, g_getenv("TRACESCOPE_SEEDS"), NULL, store_result, &res);
  g_assert_true(ts_worker_open_finish(w, wait_result(&res, "the seeds to open"), &title, &path, &functions, &error));
  g_assert_no_error(error);
  g_clear_object(&res);
  ts_worker_call_async(w, 1, "sequential_model", (const char *const[]){ "f32[4,28,28]:uniform", NULL }, 1, FALSE,
                       NULL, store_result, &res);
  g_autoptr(TsCallResult) r = ts_worker_call_finish(w, wait_result(&res, "sequential_model"), &error);
  g_assert_no_error(error);
  g_clear_object(&res);
  g_assert_nonnull(t);
  g_assert_nonnull(t->graph);

  g_autoptr(TsWorkerOptimized) o = get_optimized(w, "sequential_model", t->signature, t->graph, &error);
  g_assert_no_error(error);
  g_test_message("%s", o->pass_summary);
  g_assert_nonnull(strstr(o->pass_summary, "fuse: fused 302 nodes into 101 kernels\n"));
  g_assert_cmpint(ts_graph_n_nodes(o->graph), <, ts_graph_n_nodes(t->graph));
  int fused = 0;
  for (int i = 0; i < ts_graph_n_nodes(o->graph); i++) {
    const ts_node *n = ts_graph_node(o->graph, i);
    int k = 0;
    const ts_node *const *of = ts_worker_origins_traced(o->origins, n, &k);
    g_assert_cmpint(k, >=, 1); /* every node stands for a traced one */
    for (int j = 0; j < k; j++) {
      g_assert_true(ts_node_graph(of[j]) == t->graph);
      int back = 0;
      const ts_node *const *users = ts_worker_origins_optimized(o->origins, of[j], &back);
      gboolean found = FALSE;
      for (int u = 0; u < back; u++)
        found |= users[u] == n;
      g_assert_true(found);
    }
    if (k != 3 || ts_node_op(of[0]) != TS_OP_MATMUL)
      continue;
    g_assert_cmpint(ts_node_op(of[1]), ==, TS_OP_ADD);
    g_assert_cmpint(ts_node_op(of[2]), ==, TS_OP_RELU);
    g_assert_cmpstr(ts_node_scope(of[0]), ==, ts_node_scope(n));
    fused++;
  }
  g_assert_cmpint(fused, ==, 100); /* the last layer has no activation */

  /* a concrete function this worker did not trace; a traced graph that is not its own */
  g_assert_null(get_optimized(w, "sequential_model", "(x: f32[9])", t->graph, &error));
  g_assert_error(error, TS_ENGINE_ERROR, TS_ERR_NOT_FOUND);
  g_assert_cmpstr(error->message, ==, "sequential_model has no concrete function (x: f32[9]) in this worker");
  g_clear_error(&error);
  g_assert_null(get_optimized(w, "sequential_model", t->signature, o->graph, &error));
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL);
  g_assert_nonnull(strstr(error->message, "traced nodes, the one shown"));
  g_clear_error(&error);

  /* a table that does not fit the graphs is an error naming the entry */
  g_autoptr(GVariant) bad = g_variant_ref_sink(g_variant_new_parsed("[(@u 0, [@u 9999999])]"));
  g_assert_null(ts_worker_origins_new(bad, o->graph, t->graph, &error));
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL);
  g_assert_nonnull(strstr(error->message, "origins entry 0 (node 0) stands for node 9999999 of the traced graph's"));
  g_clear_error(&error);
  g_autoptr(GVariant) twice = g_variant_ref_sink(g_variant_new_parsed("[(@u 1, @au []), (1, [])]"));
  g_assert_null(ts_worker_origins_new(twice, o->graph, t->graph, &error));
  g_assert_nonnull(strstr(error->message, "origins entry 1 names node 1 of the optimized graph's"));
  g_clear_error(&error);
  g_autoptr(GVariant) wrong = g_variant_ref_sink(g_variant_new_parsed("[(@i 1, @ai [])]"));
  g_assert_null(ts_worker_origins_new(wrong, o->graph, t->graph, &error));
  g_assert_nonnull(strstr(error->message, "not a(uau)"));
  g_clear_error(&error);

  g_clear_pointer(&o, ts_worker_optimized_free);
  ts_worker_trace_free(t);
  ts_worker_close(w);
  while (!ts_worker_get_death(w))
    g_main_context_iteration(NULL, TRUE);
  g_object_unref(w);
}

/* ---- ONNX models ---------------------------------------------------------------- */

static ts_tensor *add_relu(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  return ts_relu(ts_add(x, x));
}

/* A model file opens as a module (one function per output), runs and
 * traces as any module's function; a broken one is an error, the worker
 * staying. */
static void test_onnx_model(void)
{
  g_autofree char *dir = g_dir_make_tmp("tracescope-worker-onnx-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "add_relu.onnx", NULL);
  ts_function *fn = ts_function_new("add_relu", add_relu, "x");
  ts_scope *scope = ts_scope_begin();
  ts_value spec = { .kind = TS_VALUE_SPEC, .spec = { TS_F32, TS_SHAPE(-1) } };
  g_assert_true(ts_concrete_save_onnx(ts_function_get_concrete(fn, &spec, 1), path));
  ts_scope_end(scope);
  ts_function_free(fn);

  Fixture f = { 0 };
  fixture_start_worker(&f, 0, TRUE);
  GAsyncResult *res = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *title = NULL, *opened = NULL;
  g_autoptr(GPtrArray) functions = NULL;
  ts_worker_open_async(f.worker, path, NULL, store_result, &res);
  g_assert_true(ts_worker_open_finish(f.worker, wait_result(&res, "the model to open"), &title, &opened,
                                      &functions, &error));
  g_assert_no_error(error);
  g_clear_object(&res);
  g_assert_nonnull(strstr(title, "ONNX model add_relu (opset 17)"));
  g_assert_cmpuint(functions->len, ==, 1);
  TsWorkerFunction *fn0 = g_ptr_array_index(functions, 0);
  g_assert_cmpstr(fn0->name, ==, "add_relu");
  g_assert_cmpstrv(fn0->params, ((const char *const[]){ "x", NULL }));
  g_autoptr(TsCallResult) r = call(&f, 1, "add_relu", (const char *const[]){ "f32[3]=-3,0,1", NULL }, FALSE,
                                   NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(r->value_text, ==, "Tensor([0. 0. 2.], shape=(3,), dtype=float32)");
  g_assert_cmpuint(f.traces->len, ==, 1); /* a graph-mode call traced the model */
  fixture_stop(&f);

  /* a file that is no model: the open fails, naming it */
  g_autofree char *bad = g_build_filename(dir, "bad.onnx", NULL);
  g_assert_true(g_file_set_contents(bad, "not a model", -1, NULL));
  f = (Fixture){ 0 };
  fixture_start_worker(&f, 0, TRUE);
  g_autofree char *t2 = NULL, *p2 = NULL;
  g_autoptr(GPtrArray) fns2 = NULL;
  ts_worker_open_async(f.worker, bad, NULL, store_result, &res);
  g_assert_false(ts_worker_open_finish(f.worker, wait_result(&res, "the model to fail"), &t2, &p2, &fns2, &error));
  g_clear_object(&res);
  g_assert_nonnull(error);
  g_assert_nonnull(strstr(error->message, "bad.onnx"));
  g_clear_error(&error);
  g_assert_true(ts_worker_get_alive(f.worker));
  fixture_stop(&f);
  g_unlink(bad);
  g_unlink(path);
  g_rmdir(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  misbehave_path = g_build_filename(TS_TEST_MODULES_DIR, "misbehave.so", NULL);
  static const Crash crashes[] = {
    { "segv", SIGSEGV, "crashed: SIGSEGV", "segv" },
    { "abort_call", SIGABRT, "crashed: SIGABRT", "abort_call" },
    { "overflow", SIGSEGV, "stack overflow", "recurse" },
  };
  g_test_add_func("/worker/call", test_call);
  g_test_add_func("/worker/tuple-results", test_tuple_results);
  g_test_add_func("/worker/none-result", test_none_result);
  g_test_add_func("/worker/onnx-model", test_onnx_model);
  g_test_add_func("/worker/output-attributed", test_output_attributed);
  g_test_add_func("/worker/large-result", test_large_result);
  g_test_add_func("/worker/profile", test_profile);
  g_test_add_func("/worker/compare", test_compare);
  g_test_add_func("/worker/repeat-capped", test_repeat_capped);
  g_test_add_func("/worker/devices", test_devices);
  g_test_add_func("/worker/optimized-graph", test_optimized_graph);
  for (guint i = 0; i < G_N_ELEMENTS(crashes); i++) {
    g_autofree char *path = g_strdup_printf("/worker/crash/%s", crashes[i].function);
    g_test_add_data_func(path, &crashes[i], check_crash);
  }
  g_test_add_func("/worker/segv-last-op", test_segv_last_op);
  g_test_add_func("/worker/exit", test_exit);
  g_test_add_func("/worker/out-of-memory", test_out_of_memory);
  g_test_add_func("/worker/hang-killed", test_hang_killed);
  g_test_add_func("/worker/endless-loop-cancelled", test_endless_loop_cancelled);
  g_test_add_func("/worker/fast/same-as-dbus", test_fast_same_as_dbus);
  g_test_add_func("/worker/fast/large-falls-back", test_fast_large_falls_back);
  g_test_add_func("/worker/fast/signals-before-result", test_fast_signals_before_result);
  g_test_add_func("/worker/fast/after-method", test_fast_after_method);
  g_test_add_func("/worker/fast/sync-crash", test_fast_sync_crash);
  g_test_add_func("/worker/fast/sync-cancel", test_fast_sync_cancel);
  int status = g_test_run();
  g_free(misbehave_path);
  return status;
}
