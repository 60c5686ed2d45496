/* test-worker-remote.c — a worker on another machine, through OpenSSH:
 * a real sshd (Debian's openssh-server) on 127.0.0.1, a free port, with a
 * host key and an authorized key made for the test in a temporary folder.
 * Calls, output, large results, traces, a profile and the crash module
 * go through `ssh 127.0.0.1:PORT tracescope-worker --stdio`, and each way
 * the remote can fail says what to do: no key, an unknown host, no worker
 * on the remote PATH, another protocol version, the connection killed
 * mid-call.  Without sshd (not installed, cannot start) it says why and
 * skips. */
#include <math.h>
#include <signal.h>
#include <string.h>
#include <glib/gstdio.h>
#include <sys/stat.h>

#include "test-sshd.h"
#include "test-wait.h"
#include "tracescope-profiler.h"
#include "ts-worker-protocol.h"
#include "ts-worker-debug.h"
#include "ts-worker-optimized.h"
#include "ts-worker-source.h"
#include "ts-worker.h"

static char *misbehave_path;

/* ---- helpers ---------------------------------------------------------------------- */

typedef struct {
  TsWorker *worker;
  GPtrArray *lines; /* "fd:call:text" */
  guint n_traces;
  TsWorkerDeath *death;
} Fixture;

static void on_output(TsWorker *w, guint call_id, int fd, const char *line, gint64 time, Fixture *f)
{
  g_ptr_array_add(f->lines, g_strdup_printf("%d:%u:%s", fd, call_id, line));
}

static void on_trace(TsWorker *w, TsWorkerTrace *t, Fixture *f)
{
  g_assert_nonnull(t->graph);
  f->n_traces++;
}

static void on_died(TsWorker *w, TsWorkerDeath *death, Fixture *f)
{
  f->death = ts_worker_death_copy(death);
}

static gboolean death_known(gpointer data)
{
  return ((Fixture *)data)->death != NULL;
}

static gboolean worker_gone(gpointer data)
{
  return ((Fixture *)data)->worker == NULL;
}

/* A worker started (remote: on the test's sshd), or NULL with error. */
static gboolean fixture_start(Fixture *f, gboolean remote, GError **error)
{
  f->worker = ts_worker_new(0);
  if (remote)
    ts_worker_set_remote(f->worker, sshd_target);
  f->lines = g_ptr_array_new_with_free_func(g_free);
  g_signal_connect(f->worker, "output", G_CALLBACK(on_output), f);
  g_signal_connect(f->worker, "trace", G_CALLBACK(on_trace), f);
  g_signal_connect(f->worker, "died", G_CALLBACK(on_died), f);
  GAsyncResult *res = NULL;
  ts_worker_start_async(f->worker, NULL, store_result, &res);
  test_wait_for(test_has_result, &res, "the worker to start");
  gboolean ok = ts_worker_start_finish(f->worker, res, error);
  g_object_unref(res);
  return ok;
}

static void fixture_open(Fixture *f, const char *source, GPtrArray **functions)
{
  GAsyncResult *res = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *title = NULL, *path = NULL;
  ts_worker_open_async(f->worker, source, NULL, store_result, &res);
  test_wait_for(test_has_result, &res, "the module to open");
  g_assert_true(ts_worker_open_finish(f->worker, res, &title, &path, functions, &error));
  g_assert_no_error(error);
  g_object_unref(res);
}

/* A remote worker on the test's sshd with the misbehaving module open. */
static void open_misbehave_remotely(Fixture *f)
{
  g_autoptr(GError) error = NULL;
  g_assert_true(fixture_start(f, TRUE, &error));
  g_assert_no_error(error);
  g_autoptr(GPtrArray) functions = NULL;
  fixture_open(f, misbehave_path, &functions);
}

static void fixture_stop(Fixture *f)
{
  if (!f->death && ts_worker_get_alive(f->worker)) {
    ts_worker_close(f->worker);
    test_wait_for(death_known, f, "the worker to end");
  }
  g_object_add_weak_pointer(G_OBJECT(f->worker), (gpointer *)&f->worker);
  g_object_unref(f->worker);
  test_wait_for(worker_gone, f, "the worker object to go");
  g_ptr_array_unref(f->lines);
  ts_worker_death_free(f->death);
}

static TsCallResult *call_with(Fixture *f, guint id, const char *function, const char *const *args,
                               GVariant *options, GCancellable *cancel, GError **error)
{
  GAsyncResult *res = NULL;
  ts_worker_call_with_options_async(f->worker, id, function, args, 1, FALSE, options, cancel, store_result, &res);
  test_wait_for(test_has_result, &res, function);
  TsCallResult *r = ts_worker_call_finish(f->worker, res, error);
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

#define SKIP_WITHOUT_SSHD()                                                                                    \
  do {                                                                                                         \
    if (sshd_skip_reason) {                                                                                         \
      g_test_skip(sshd_skip_reason);                                                                                \
      return;                                                                                                  \
    }                                                                                                          \
  } while (0)

static void assert_close(GBytes *a, GBytes *b)
{
  gsize na, nb;
  const float *x = g_bytes_get_data(a, &na), *y = g_bytes_get_data(b, &nb);
  g_assert_cmpuint(na, ==, nb);
  for (gsize i = 0; i < na / sizeof(float); i++)
    g_assert_cmpfloat_with_epsilon(x[i], y[i], 1e-5 * MAX(1.0, fabs(x[i])));
}

typedef struct {
  guint call_id, n;
  guint64 received, total;
  GCancellable *cancel_at_first; /* cancelled when the first chunk is in */
} Transfer;

static void on_transfer(TsWorker *w, guint call_id, guint64 received, guint64 total, Transfer *t)
{
  g_assert_cmpuint(received, >, t->received);
  g_assert_cmpuint(received, <=, total);
  *t = (Transfer){ call_id, t->n + 1, received, total, t->cancel_at_first };
  if (t->cancel_at_first)
    g_cancellable_cancel(t->cancel_at_first);
}

/* ---- what works remotely ----------------------------------------------------------- */

/* Every seed function with its example arguments: the same printed
 * result, values and traces through ssh as here. */
static void test_seeds(void)
{
  SKIP_WITHOUT_SSHD();
  Fixture local = { 0 }, remote = { 0 };
  g_autoptr(GError) error = NULL;
  g_assert_true(fixture_start(&local, FALSE, &error));
  g_assert_true(fixture_start(&remote, TRUE, &error));
  g_assert_no_error(error);
  g_autoptr(GPtrArray) fl = NULL, fr = NULL;
  fixture_open(&local, "seeds", &fl);
  fixture_open(&remote, "seeds", &fr);
  g_assert_cmpuint(fl->len, ==, fr->len);
  guint id = 1, n_run = 0;
  for (guint i = 0; i < fl->len; i++) {
    TsWorkerFunction *fn = g_ptr_array_index(fl, i);
    g_assert_cmpstr(fn->name, ==, ((TsWorkerFunction *)g_ptr_array_index(fr, i))->name);
    if (!fn->examples)
      continue;
    g_autoptr(GError) el = NULL, er = NULL;
    g_autoptr(TsCallResult) a = call_with(&local, id, fn->name, (const char *const *)fn->examples, NULL, NULL, &el);
    g_autoptr(TsCallResult) b = call_with(&remote, id, fn->name, (const char *const *)fn->examples, NULL, NULL, &er);
    id++;
    g_assert_true((a == NULL) == (b == NULL));
    if (!a) {
      g_assert_cmpstr(el->message, ==, er->message);
      continue;
    }
    n_run++;
    g_assert_cmpint(a->dtype, ==, b->dtype);
    g_assert_cmpstr(a->shape_text, ==, b->shape_text);
    g_assert_true((a->data == NULL) == (b->data == NULL));
    /* floats to their rounding: the engine's pool and OpenBLAS split sums by
     * the threads free at the time, in both processes alike */
    if (a->data && a->dtype == TS_F32)
      assert_close(a->data, b->data);
    else if (a->data)
      g_assert_true(g_bytes_equal(a->data, b->data));
    else
      g_assert_cmpstr(a->value_text, ==, b->value_text);
  }
  g_assert_cmpuint(n_run, >, 0);
  g_assert_cmpuint(remote.n_traces, ==, local.n_traces);
  g_assert_cmpuint(remote.n_traces, >, 0);
  g_assert_cmpuint(ts_worker_get_fast_calls(remote.worker), ==, 0); /* no shared memory across machines */
  fixture_stop(&local);
  fixture_stop(&remote);
}

/* Output with its call, a result far over the fd threshold (no fds travel:
 * it comes in chunks), one over what a D-Bus message holds, a recorded
 * profile. */
static void test_output_big_profile(void)
{
  SKIP_WITHOUT_SSHD();
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;
  open_misbehave_remotely(&f);
  g_autoptr(TsCallResult) chatty = call_with(&f, 7, "chatty", (const char *const[]){ "f32[]=1", NULL }, NULL,
                                             NULL, &error);
  g_assert_no_error(error);
  g_assert_true(has_line(&f, "1:7:chatty out 1"));
  g_assert_true(has_line(&f, "2:7:chatty err"));
  g_assert_true(has_line(&f, "1:7:chatty out 2 (no newline)"));

  g_autoptr(TsCallResult) big = call_with(&f, 8, "big", (const char *const[]){ "1048576", NULL }, NULL, NULL,
                                          &error);
  g_assert_no_error(error);
  g_assert_cmpuint(g_bytes_get_size(big->data), ==, 4u << 20);
  const float *v = g_bytes_get_data(big->data, NULL);
  g_assert_cmpfloat(v[0], ==, 1.0f);
  g_assert_cmpfloat(v[(1u << 20) - 1], ==, 1.0f);

  /* more than one message holds (128 MiB): read in chunks, with progress */
  Transfer t = { 0 };
  gulong h = g_signal_connect(f.worker, "transfer", G_CALLBACK(on_transfer), &t);
  g_autoptr(TsCallResult) huge = call_with(&f, 10, "big", (const char *const[]){ "33554432", NULL }, NULL, NULL,
                                           &error);
  g_assert_no_error(error);
  g_assert_cmpuint(g_bytes_get_size(huge->data), ==, 128u << 20);
  v = g_bytes_get_data(huge->data, NULL);
  g_assert_cmpfloat(v[0], ==, 1.0f);
  g_assert_cmpfloat(v[(32u << 20) - 1], ==, 1.0f);
  g_assert_cmpuint(t.call_id, ==, 10);
  g_assert_cmpuint(t.total, ==, 128u << 20);
  g_assert_cmpuint(t.received, ==, t.total);
  g_assert_cmpuint(t.n, >=, 128u << 20 >> 20); /* one a chunk */
  g_signal_handler_disconnect(f.worker, h);

  GVariantDict d;
  g_variant_dict_init(&d, NULL);
  g_variant_dict_insert(&d, "profile", "b", TRUE);
  g_autoptr(TsCallResult) prof = call_with(&f, 9, "good", (const char *const[]){ "f32[2]=1,2", NULL },
                                           g_variant_dict_end(&d), NULL, &error);
  g_assert_no_error(error);
  g_assert_nonnull(prof->profile);
  tsp_session *session = tsp_session_deserialize(prof->profile, &error);
  g_assert_no_error(error);
  tsp_session_free(session);

  /* a profile of 1 MiB and more comes in chunks too, and reads back */
  t = (Transfer){ 0 };
  h = g_signal_connect(f.worker, "transfer", G_CALLBACK(on_transfer), &t);
  g_variant_dict_init(&d, NULL);
  g_variant_dict_insert(&d, "profile", "b", TRUE);
  GAsyncResult *res = NULL;
  ts_worker_call_with_options_async(f.worker, 11, "good", (const char *const[]){ "f32[2]=1,2", NULL }, 30000,
                                    FALSE, g_variant_dict_end(&d), NULL, store_result, &res);
  test_wait_for(test_has_result, &res, "the long profile");
  g_autoptr(TsCallResult) long_prof = ts_worker_call_finish(f.worker, res, &error);
  g_object_unref(res);
  g_assert_no_error(error);
  g_signal_handler_disconnect(f.worker, h);
  g_assert_cmpuint(g_bytes_get_size(long_prof->profile), >=, 1u << 20);
  g_assert_cmpuint(t.call_id, ==, 11);
  g_assert_cmpuint(t.total, ==, g_bytes_get_size(long_prof->profile));
  g_assert_cmpuint(t.received, ==, t.total);
  session = tsp_session_deserialize(long_prof->profile, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(tsp_session_n_events(session), >=, 30000);
  tsp_session_free(session);
  fixture_stop(&f);
}

/* Cancel while a large result arrives: the reading stops (not every chunk
 * came), the call fails cancelled, the worker stays and answers the next. */
static void test_big_cancel(void)
{
  SKIP_WITHOUT_SSHD();
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;
  open_misbehave_remotely(&f);
  g_autoptr(GCancellable) cancel = g_cancellable_new();
  Transfer t = { .cancel_at_first = cancel };
  g_signal_connect(f.worker, "transfer", G_CALLBACK(on_transfer), &t);
  g_autoptr(TsCallResult) huge = call_with(&f, 3, "big", (const char *const[]){ "16777216", NULL }, NULL, cancel,
                                           &error);
  g_assert_null(huge);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error(&error);
  g_assert_cmpuint(t.n, >=, 1);
  g_assert_cmpuint(t.received, <, t.total);
  g_assert_true(ts_worker_get_alive(f.worker));
  t = (Transfer){ 0 };
  g_autoptr(TsCallResult) again = call_with(&f, 4, "big", (const char *const[]){ "1048576", NULL }, NULL, NULL,
                                            &error);
  g_assert_no_error(error);
  g_assert_cmpuint(g_bytes_get_size(again->data), ==, 4u << 20);
  g_assert_cmpuint(t.received, ==, 4u << 20);
  fixture_stop(&f);
}

static TsSourceSnippet *read_source(Fixture *f, const char *file, int line, int context, GError **error)
{
  GAsyncResult *res = NULL;
  ts_worker_read_source_async(f->worker, misbehave_path, file, line, context, NULL, store_result, &res);
  test_wait_for(test_has_result, &res, "the source lines");
  TsSourceSnippet *s = ts_worker_read_source_finish(f->worker, res, error);
  g_object_unref(res);
  return s;
}

/* path as meson hands it to the compiler: relative to the build root
 * (TS_TEST_MODULES_DIR is BUILD/tests/modules), "../" up to the two
 * directories' common ancestor, wherever the build directory is. */
static char *build_relative(const char *path)
{
  g_autofree char *build = g_canonicalize_filename(TS_TEST_MODULES_DIR "/../..", NULL);
  g_autofree char *target = g_canonicalize_filename(path, NULL);
  g_auto(GStrv) b = g_strsplit(build, "/", -1), t = g_strsplit(target, "/", -1);
  guint common = 0;
  while (b[common] && t[common] && strcmp(b[common], t[common]) == 0)
    common++;
  GString *rel = g_string_new(NULL);
  for (guint i = common; b[i]; i++)
    if (*b[i])
      g_string_append(rel, "../");
  for (guint i = common; t[i]; i++)
    g_string_append_printf(rel, "%s%s", t[i], t[i + 1] ? "/" : "");
  return g_string_free(rel, FALSE);
}

/* Source lines read where the module is, found under its directories
 * there as the app finds them here; a file not there says where it
 * looked; a context over the most is cut to it. */
static void test_source(void)
{
  SKIP_WITHOUT_SSHD();
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;
  open_misbehave_remotely(&f);
  /* the name as the compiler saw it, relative to the build directory */
  g_autofree char *file = build_relative(g_test_get_filename(G_TEST_DIST, "modules", "misbehave.c", NULL));
  g_autoptr(TsSourceSnippet) there = read_source(&f, file, 10, 1, &error);
  g_assert_no_error(error);
  g_auto(GStrv) dirs = ts_source_search_dirs(misbehave_path);
  g_autoptr(TsSourceSnippet) here = ts_source_snippet_read(file, 10, 1, (const char *const *)dirs, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(there->path, ==, here->path);
  g_assert_cmpint(there->first_line, ==, 9);
  g_assert_cmpint(there->line, ==, 10);
  g_assert_cmpuint(g_strv_length(there->lines), ==, 3);
  g_assert_true(g_strv_equal((const char *const *)there->lines, (const char *const *)here->lines));
  g_assert_cmpstr(there->lines[1], ==, "static ts_tensor *good(ts_call *c)");

  g_autoptr(TsSourceSnippet) gone = read_source(&f, "nowhere/gone.c", 3, 2, &error);
  g_assert_null(gone);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_nonnull(strstr(error->message, "gone.c is not on this machine (looked in "));
  g_clear_error(&error);

  g_autoptr(TsSourceSnippet) wide = read_source(&f, file, 100, 100000, &error);
  g_assert_no_error(error);
  g_assert_cmpint(wide->first_line, ==, 1);
  g_assert_cmpuint(g_strv_length(wide->lines), ==, 113); /* the whole file: within TS_SOURCE_CONTEXT_MAX */
  g_assert_true(ts_worker_get_alive(f.worker));
  fixture_stop(&f);
}

static GPtrArray *list_devices(Fixture *f)
{
  GAsyncResult *res = NULL;
  g_autoptr(GError) error = NULL;
  ts_worker_list_devices_async(f->worker, NULL, store_result, &res);
  test_wait_for(test_has_result, &res, "the device list");
  GPtrArray *devices = ts_worker_list_devices_finish(f->worker, res, NULL, &error);
  g_assert_no_error(error);
  g_object_unref(res);
  return devices;
}

static gboolean has_device(GPtrArray *devices, const char *name)
{
  for (guint i = 0; i < devices->len; i++)
    if (strcmp(((TsWorkerDevice *)g_ptr_array_index(devices, i))->name, name) == 0)
      return TRUE;
  return FALSE;
}

/* The devices are the remote engine's, not this process's: here the tests
 * run with TRACESCOPE_DEVICES=sim (a simulated GPU), which the test's ssh
 * config does not pass on, so the local worker lists SIM:0 and the remote
 * one only its CPU, first. */
static void test_devices(void)
{
  SKIP_WITHOUT_SSHD();
  g_assert_cmpstr(g_getenv("TRACESCOPE_DEVICES"), ==, "sim");
  Fixture local = { 0 }, remote = { 0 };
  g_autoptr(GError) error = NULL;
  g_assert_true(fixture_start(&local, FALSE, &error));
  g_assert_true(fixture_start(&remote, TRUE, &error));
  g_assert_no_error(error);
  g_autoptr(GPtrArray) here = list_devices(&local), there = list_devices(&remote);
  g_assert_true(has_device(here, "SIM:0"));
  g_assert_false(has_device(there, "SIM:0"));
  g_assert_cmpuint(there->len, ==, 1);
  TsWorkerDevice *cpu = g_ptr_array_index(there, 0);
  g_assert_cmpstr(cpu->name, ==, "CPU");
  TsWorkerDevice *local_cpu = g_ptr_array_index(here, 0);
  g_assert_cmpstr(local_cpu->name, ==, "CPU");
  g_assert_cmpint(local_cpu->total_bytes != 0, ==, cpu->total_bytes != 0);
  fixture_stop(&local);
  fixture_stop(&remote);
}

static void on_module_changed(TsWorker *w, const char *path, char **changed)
{
  g_free(*changed);
  *changed = g_strdup(path);
}

static gboolean has_string(gpointer data)
{
  return *(char **)data != NULL;
}

/* A module rebuilt on the remote is seen there (WatchModule): the worker
 * names its file in ::module-changed.  Without a file (the seeds built in
 * by path are one; a worker with nothing open is not) it says so. */
static void test_watch(void)
{
  SKIP_WITHOUT_SSHD();
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp("ts-remote-watch-XXXXXX", &error);
  g_assert_no_error(error);
  g_autofree char *path = g_build_filename(dir, "misbehave.so", NULL);
  g_autofree char *contents = NULL;
  gsize length;
  g_assert_true(g_file_get_contents(misbehave_path, &contents, &length, NULL));
  g_assert_true(g_file_set_contents(path, contents, (gssize)length, NULL));

  Fixture f = { 0 };
  g_assert_true(fixture_start(&f, TRUE, &error));
  g_assert_no_error(error);
  GAsyncResult *res = NULL;
  ts_worker_watch_module_async(f.worker, NULL, store_result, &res);
  test_wait_for(test_has_result, &res, "the watch to be refused");
  g_assert_false(ts_worker_watch_module_finish(f.worker, res, &error));
  g_assert_error(error, TS_ENGINE_ERROR, TS_ERR_NOT_FOUND);
  g_clear_error(&error);
  g_clear_object(&res);

  g_autoptr(GPtrArray) functions = NULL;
  fixture_open(&f, path, &functions);
  g_autofree char *changed = NULL;
  g_signal_connect(f.worker, "module-changed", G_CALLBACK(on_module_changed), &changed);
  ts_worker_watch_module_async(f.worker, NULL, store_result, &res);
  test_wait_for(test_has_result, &res, "the watch to start");
  g_assert_true(ts_worker_watch_module_finish(f.worker, res, &error));
  g_assert_no_error(error);
  g_clear_object(&res);
  g_assert_null(changed);
  g_assert_true(g_file_set_contents(path, contents, (gssize)length, NULL)); /* "rebuilt" there */
  test_wait_for(has_string, &changed, "the remote module to change");
  g_autofree char *canonical = g_canonicalize_filename(path, NULL);
  g_assert_cmpstr(changed, ==, canonical);
  fixture_stop(&f);
  g_unlink(path);
  g_rmdir(dir);
}

static void on_traced(TsWorker *w, TsWorkerTrace *t, TsWorkerTrace **slot)
{
  /* the signal's trace goes after the handlers: its graph moves here */
  ts_worker_trace_free(*slot);
  *slot = g_new0(TsWorkerTrace, 1);
  (*slot)->signature = g_strdup(t->signature);
  (*slot)->graph = g_steal_pointer(&t->graph);
}

/* The optimized graph of sequential_model (its 2 MB of weights: over a
 * chunk) comes from the remote worker in chunks and reads as locally. */
static void test_optimized(void)
{
  SKIP_WITHOUT_SSHD();
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;
  g_assert_true(fixture_start(&f, TRUE, &error));
  g_assert_no_error(error);
  g_autoptr(GPtrArray) functions = NULL;
  fixture_open(&f, "seeds", &functions);
  g_autoptr(TsWorkerTrace) t = NULL;
  g_signal_connect(f.worker, "trace", G_CALLBACK(on_traced), &t);
  g_autoptr(TsCallResult) r = call_with(&f, 1, "sequential_model", (const char *const[]){ "f32[4,28,28]:uniform", NULL },
                                        NULL, NULL, &error);
  g_assert_no_error(error);
  g_assert_nonnull(t);
  GAsyncResult *res = NULL;
  ts_worker_get_optimized_async(f.worker, "sequential_model", t->signature, t->graph, NULL, store_result, &res);
  test_wait_for(test_has_result, &res, "the optimized graph");
  g_autoptr(TsWorkerOptimized) o = ts_worker_get_optimized_finish(f.worker, res, &error);
  g_object_unref(res);
  g_assert_no_error(error);
  g_assert_nonnull(strstr(o->pass_summary, "fuse: fused 302 nodes into 101 kernels\n"));
  g_assert_cmpint(ts_graph_n_nodes(o->graph), <, ts_graph_n_nodes(t->graph));
  size_t size = 0;
  void *bytes = ts_graph_serialize(o->graph, &size);
  g_assert_cmpuint(size, >=, 1u << 20); /* it came in chunks */
  free(bytes);
  fixture_stop(&f);
}

/* A debug session there: the stop before the first op, its input over the
 * fd threshold (inside the message), then on to the finish. */
static void test_debug(void)
{
  SKIP_WITHOUT_SSHD();
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;
  open_misbehave_remotely(&f);
  GAsyncResult *res = NULL;
  ts_worker_debug_start_async(f.worker, 7, "good", (const char *const[]){ "f32[20000]:ones", NULL },
                              (const char *const[]){ NULL }, TRUE, NULL, FALSE, NULL, store_result, &res);
  test_wait_for(test_has_result, &res, "DebugStart");
  g_autoptr(GArray) ids = ts_worker_debug_start_finish(f.worker, res, &error);
  g_object_unref(res);
  g_assert_no_error(error);
  res = NULL;
  ts_worker_debug_wait_async(f.worker, NULL, store_result, &res);
  test_wait_for(test_has_result, &res, "the first stop");
  g_autoptr(TsDebugStop) stop = ts_worker_debug_wait_finish(f.worker, res, &error);
  g_object_unref(res);
  g_assert_no_error(error);
  if (strcmp(stop->reason, "step") != 0)
    g_error("the first stop: %s (%s)", stop->reason, stop->error ? stop->error : "no error");
  const TsDebugTensor *x = g_ptr_array_index(stop->op->inputs, 0);
  g_assert_cmpuint(g_bytes_get_size(x->data), ==, 20000 * sizeof(float));
  const float *v = g_bytes_get_data(x->data, NULL);
  g_assert_cmpfloat(v[0], ==, 1.0f);
  g_assert_cmpfloat(v[19999], ==, 1.0f);
  res = NULL;
  ts_worker_debug_command_async(f.worker, "DebugResume", g_variant_new("(s)", "continue"), NULL, store_result, &res);
  test_wait_for(test_has_result, &res, "DebugResume");
  g_autoptr(GVariant) reply = ts_worker_debug_command_finish(f.worker, res, &error);
  g_object_unref(res);
  g_assert_no_error(error);
  res = NULL;
  ts_worker_debug_wait_async(f.worker, NULL, store_result, &res);
  test_wait_for(test_has_result, &res, "the finish");
  g_autoptr(TsDebugStop) last = ts_worker_debug_wait_finish(f.worker, res, &error);
  g_object_unref(res);
  g_assert_no_error(error);
  g_assert_cmpstr(last->reason, ==, "finished");
  g_assert_null(last->error);
  g_assert_nonnull(last->result_text);
  fixture_stop(&f);
}

/* The crash module crashes on the far side: reported as locally, with its
 * backtrace and the op it was in. */
static void test_crash(void)
{
  SKIP_WITHOUT_SSHD();
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;
  open_misbehave_remotely(&f);
  GAsyncResult *res = NULL; /* eagerly: the op runs (traced, it would only be recorded) */
  ts_worker_call_async(f.worker, 3, "segv", (const char *const[]){ "f32[2]=1,-1", NULL }, 1, TRUE, NULL,
                       store_result, &res);
  test_wait_for(test_has_result, &res, "segv");
  g_autoptr(TsCallResult) r = ts_worker_call_finish(f.worker, res, &error);
  g_object_unref(res);
  g_assert_null(r);
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED);
  g_assert_nonnull(f.death);
  g_assert_true(g_str_has_prefix(f.death->summary, "crashed: SIGSEGV"));
  g_assert_cmpint(f.death->signal, ==, SIGSEGV);
  g_assert_cmpuint(f.death->call_id, ==, 3);
  g_assert_nonnull(f.death->backtrace);
  g_assert_nonnull(strstr(f.death->backtrace, "misbehave.c:"));
  g_assert_true(g_str_has_prefix(f.death->last_op, "Relu at "));
  g_assert_nonnull(strstr(f.death->last_op, "misbehave.c:"));
  fixture_stop(&f);
}

static gboolean tick_on(gpointer data)
{
  return G_SOURCE_CONTINUE;
}

static gboolean call_running(gpointer data)
{
  return ts_worker_get_running_call(data) == 4;
}

/* A call that never stops: Cancel, then the far side kills it. */
static void test_hung(void)
{
  SKIP_WITHOUT_SSHD();
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;
  open_misbehave_remotely(&f);
  g_autoptr(GCancellable) cancel = g_cancellable_new();
  GAsyncResult *res = NULL;
  ts_worker_call_async(f.worker, 4, "spin", (const char *const[]){ "f32[2]=1,-1", NULL }, 1, TRUE, cancel,
                       store_result, &res);
  /* the far side sends the status page as it changes: the call is seen running */
  guint tick = g_timeout_add(5, tick_on, NULL);
  test_wait_for(call_running, f.worker, "the call to start");
  g_source_remove(tick);
  g_cancellable_cancel(cancel);
  test_wait_for(test_has_result, &res, "spin");
  g_autoptr(TsCallResult) r = ts_worker_call_finish(f.worker, res, &error);
  g_object_unref(res);
  g_assert_null(r);
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED);
  g_assert_true(f.death->hung);
  g_assert_cmpint(f.death->signal, ==, SIGKILL);
  g_assert_nonnull(strstr(f.death->summary, "did not stop within 2 s of Cancel"));
  g_assert_true(g_str_has_prefix(f.death->last_op, "Relu at "));
  fixture_stop(&f);
}

/* ssh killed mid-call: the call fails at once with "connection lost",
 * nothing waits for an answer that cannot come. */
static void test_connection_lost(void)
{
  SKIP_WITHOUT_SSHD();
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;
  open_misbehave_remotely(&f);
  GAsyncResult *res = NULL;
  ts_worker_call_async(f.worker, 5, "spin", (const char *const[]){ "f32[2]=1,2", NULL }, 1, FALSE, NULL,
                       store_result, &res);
  kill(ts_worker_get_pid(f.worker), SIGKILL);
  test_wait_for(test_has_result, &res, "the call to fail");
  g_autoptr(TsCallResult) r = ts_worker_call_finish(f.worker, res, &error);
  g_object_unref(res);
  g_assert_null(r);
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED);
  if (!g_str_has_prefix(error->message, "connection lost: ssh to 127.0.0.1"))
    g_error("not a lost connection: %s", error->message);
  g_assert_nonnull(strstr(error->message, "SIGKILL"));
  g_assert_false(f.death->expected);
  fixture_stop(&f);
}

/* ---- what cannot work says what to do ----------------------------------------------- */

static void expect_start_error(const char *config, const char *worker, const char *const *needles)
{
  g_autofree char *config_path = sshd_path_in(config);
  g_autofree char *old_config = g_strdup(g_getenv("TRACESCOPE_SSH_CONFIG"));
  g_autofree char *old_worker = g_strdup(g_getenv("TRACESCOPE_REMOTE_WORKER"));
  g_setenv("TRACESCOPE_SSH_CONFIG", config_path, TRUE);
  g_setenv("TRACESCOPE_REMOTE_WORKER", worker, TRUE);
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;
  g_assert_false(fixture_start(&f, TRUE, &error));
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_SPAWN);
  for (const char *const *n = needles; *n; n++)
    if (!strstr(error->message, *n))
      g_error("\"%s\" is not in: %s", *n, error->message);
  fixture_stop(&f);
  g_setenv("TRACESCOPE_SSH_CONFIG", old_config, TRUE);
  g_setenv("TRACESCOPE_REMOTE_WORKER", old_worker, TRUE);
}

static void test_no_key(void)
{
  SKIP_WITHOUT_SSHD();
  expect_start_error("ssh_config_nokey", g_getenv("TRACESCOPE_WORKER"),
                     (const char *const[]){ "without a password", "Permission denied", "ssh-copy-id 127.0.0.1", NULL });
}

static void test_unknown_host(void)
{
  SKIP_WITHOUT_SSHD();
  expect_start_error("ssh_config_unknown", g_getenv("TRACESCOPE_WORKER"),
                     (const char *const[]){ "known_hosts", "ssh 127.0.0.1", NULL });
}

static void test_not_installed(void)
{
  SKIP_WITHOUT_SSHD();
  expect_start_error("ssh_config", "tracescope-worker-not-installed-here",
                     (const char *const[]){ "127.0.0.1 has no tracescope-worker on its PATH", "install Tracescope",
                                            NULL });
}

/* A worker of another release answers with another version: refused, both named. */
static void test_version(void)
{
  SKIP_WITHOUT_SSHD();
  g_autofree char *script = sshd_path_in("old-worker");
  sshd_write_file("old-worker", "#!/bin/sh\necho 'TRACESCOPE-WORKER-STDIO 1'\nexec cat >/dev/null\n");
  g_assert_true(chmod(script, 0755) == 0);
  g_autofree char *ours = g_strdup_printf("this tracescope version %u", TS_WORKER_PROTOCOL_VERSION);
  expect_start_error("ssh_config", script, (const char *const[]){ "speaks protocol version 1", ours, NULL });
}

/* ---- the CLI and the app ---------------------------------------------------------- */

/* Runs argv (with env: NAME, VALUE pairs, NULL-terminated, or NULL); its
 * stdout and stderr, and its exit status. */
static int run_program_with(const char *const *argv, const char *const *env, char **out, char **err)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  for (; env && *env; env += 2)
    g_subprocess_launcher_setenv(launcher, env[0], env[1], TRUE);
  g_autoptr(GSubprocess) p = g_subprocess_launcher_spawnv(launcher, argv, &error);
  g_assert_no_error(error);
  g_assert_true(g_subprocess_communicate_utf8(p, NULL, NULL, out, err, &error));
  g_assert_no_error(error);
  return g_subprocess_get_if_exited(p) ? g_subprocess_get_exit_status(p) : -1;
}

static int run_program(const char *const *argv, char **out, char **err)
{
  return run_program_with(argv, NULL, out, err);
}

/* tracescope-cli run --remote: what --isolate prints, made there. */
static void test_cli(void)
{
  SKIP_WITHOUT_SSHD();
  const char *cli = g_getenv("TRACESCOPE_CLI");
  g_autofree char *lout = NULL, *lerr = NULL, *rout = NULL, *rerr = NULL;
  int ls = run_program((const char *const[]){ cli, "run", "seeds", "deep_net", "--isolate", "--call", "--arg",
                                              "i32[3]=1,2,3", "--call", "--arg", "f32[3]=1,2,3", NULL }, &lout, &lerr);
  int rs = run_program((const char *const[]){ cli, "run", "seeds", "deep_net", "--remote", sshd_target, "--call",
                                              "--arg", "i32[3]=1,2,3", "--call", "--arg", "f32[3]=1,2,3", NULL }, &rout, &rerr);
  g_assert_cmpint(ls, ==, 0);
  g_assert_cmpint(rs, ==, 0);
  g_assert_cmpstr(rout, ==, lout);
  g_assert_cmpstr(rerr, ==, lerr);
  /* the crash module's crash, reported as --isolate reports it */
  g_autofree char *cout = NULL, *cerr = NULL;
  int cs = run_program((const char *const[]){ cli, "run", misbehave_path, "segv", "--remote", sshd_target, "--mode", "eager",
                                              "--call", "--arg", "f32[2]=1,-1", NULL }, &cout, &cerr);
  g_assert_cmpint(cs, ==, 1);
  g_assert_nonnull(strstr(cerr, "segv crashed: SIGSEGV"));
  g_assert_nonnull(strstr(cerr, "backtrace of the worker:"));
  /* a bad target is a usage error naming it */
  g_autofree char *bout = NULL, *berr = NULL;
  int bs = run_program((const char *const[]){ cli, "run", "seeds", "deep_net", "--remote", "127.0.0.1:99999", NULL },
                       &bout, &berr);
  g_assert_cmpint(bs, ==, 1);
  g_assert_nonnull(strstr(berr, "port after ':' must be a number from 1 to 65535"));
}

/* tracescope --remote HOST seeds ...: the window with the function run
 * there and its graph drawn, saved as a screenshot. */
static void test_app(void)
{
  SKIP_WITHOUT_SSHD();
  if (!g_getenv("DISPLAY") && !g_getenv("WAYLAND_DISPLAY")) {
    g_test_skip("no display (the suite runs under xvfb-run)");
    return;
  }
  g_autofree char *app = g_build_filename(g_getenv("G_TEST_BUILDDIR"), "..", "app", "tracescope", NULL);
  g_autofree char *shot = sshd_path_in("remote.png");
  g_autofree char *out = NULL, *err = NULL;
  /* as the GUI tests run the app: what GTK, Mesa and fontconfig keep for
   * good is not ours (their suppressions, no GL context) */
  g_autofree char *lsan = g_strdup_printf("suppressions=%s/lsan-gui.supp:print_suppressions=0:fast_unwind_on_malloc=0",
                                          g_getenv("G_TEST_SRCDIR"));
  int status = run_program_with((const char *const[]){ app, "--remote", sshd_target, "seeds", "--function", "deep_net",
                                                       "--call", "--arg", "i32[3]=1,2,3", "--screenshot", shot,
                                                       "--size", "1200x800", NULL },
                                (const char *const[]){ "LSAN_OPTIONS", lsan, "GDK_DEBUG", "gl-disable", "NO_AT_BRIDGE",
                                                       "1", NULL },
                                &out, &err);
  if (status != 0)
    g_error("tracescope --remote exited with %d: %s", status, err);
  g_autofree char *png = NULL;
  gsize len;
  g_assert_true(g_file_get_contents(shot, &png, &len, NULL));
  g_assert_cmpuint(len, >, 8);
  g_assert_cmpmem(png, 8, "\x89PNG\r\n\x1a\n", 8);
  const char *keep = g_getenv("TS_TEST_REMOTE_SCREENSHOT"); /* to look at it */
  if (keep)
    g_assert_true(g_file_set_contents(keep, png, (gssize)len, NULL));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  misbehave_path = g_build_filename(TS_TEST_MODULES_DIR, "misbehave.so", NULL);
  signal(SIGPIPE, SIG_IGN);
  test_sshd_start(g_getenv("TRACESCOPE_WORKER"));
  g_test_add_func("/worker/remote/seeds", test_seeds);
  g_test_add_func("/worker/remote/output-big-profile", test_output_big_profile);
  g_test_add_func("/worker/remote/big-cancel", test_big_cancel);
  g_test_add_func("/worker/remote/source", test_source);
  g_test_add_func("/worker/remote/devices", test_devices);
  g_test_add_func("/worker/remote/watch", test_watch);
  g_test_add_func("/worker/remote/optimized", test_optimized);
  g_test_add_func("/worker/remote/debug", test_debug);
  g_test_add_func("/worker/remote/crash", test_crash);
  g_test_add_func("/worker/remote/hung", test_hung);
  g_test_add_func("/worker/remote/connection-lost", test_connection_lost);
  g_test_add_func("/worker/remote/no-key", test_no_key);
  g_test_add_func("/worker/remote/unknown-host", test_unknown_host);
  g_test_add_func("/worker/remote/not-installed", test_not_installed);
  g_test_add_func("/worker/remote/version", test_version);
  g_test_add_func("/worker/remote/cli", test_cli);
  g_test_add_func("/worker/remote/app", test_app);
  int status = g_test_run();
  test_sshd_stop();
  g_free(misbehave_path);
  return status;
}
