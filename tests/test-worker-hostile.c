/* test-worker-hostile.c — modules that attack the worker they run in
 * (tests/modules/hostile.c, ctor-crash.c): they close or scribble on its
 * fds, fork children that outlive it, flood its output, crash while they
 * load, run out of a limit the worker inherited.  Each is survived or
 * reported for what it is, at once. */
#include <errno.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-wait.h"
#include "ts-worker.h"

typedef struct {
  TsWorker *worker;
  GPtrArray *lines; /* "1:7:text": fd, call id, line */
  guint n_lines[3]; /* lines seen on stdout [1] and stderr [2] */
  guint64 longest;  /* the longest line's length */
  TsWorkerDeath *death;
  guint ticks;      /* turns of a 1 ms timeout at the redraw's priority while a call runs */
} Fixture;

static void on_output(TsWorker *w, guint call_id, int fd, const char *line, gint64 time, Fixture *f)
{
  f->n_lines[fd]++;
  f->longest = MAX(f->longest, strlen(line));
  if (f->lines->len < 1000) /* a flood is counted, not kept */
    g_ptr_array_add(f->lines, g_strdup_printf("%d:%u:%s", fd, call_id, line));
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

/* Starts a worker (executable: NULL for the usual one) and opens module;
 * FALSE with *error when the open fails. */
static gboolean fixture_open(Fixture *f, const char *executable, const char *module, GError **error)
{
  f->worker = ts_worker_new(0);
  if (executable)
    ts_worker_set_executable(f->worker, executable);
  f->lines = g_ptr_array_new_with_free_func(g_free);
  g_signal_connect(f->worker, "output", G_CALLBACK(on_output), f);
  g_signal_connect(f->worker, "died", G_CALLBACK(on_died), f);
  GAsyncResult *res = NULL;
  ts_worker_start_async(f->worker, NULL, store_result, &res);
  g_assert_true(ts_worker_start_finish(f->worker, wait_result(&res, "the worker to start"), error));
  g_clear_object(&res);
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, module, NULL);
  g_autofree char *title = NULL, *canonical = NULL;
  g_autoptr(GPtrArray) functions = NULL;
  ts_worker_open_async(f->worker, path, NULL, store_result, &res);
  gboolean ok = ts_worker_open_finish(f->worker, wait_result(&res, "the module to open"), &title, &canonical,
                                      &functions, error);
  g_object_unref(res);
  return ok;
}

static void fixture_start(Fixture *f)
{
  g_autoptr(GError) error = NULL;
  g_assert_true(fixture_open(f, NULL, "hostile.so", &error));
  g_assert_no_error(error);
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
  test_wait_for(worker_gone, f, "the worker object to go");
  g_ptr_array_unref(f->lines);
  ts_worker_death_free(f->death);
}

static gboolean tick(gpointer data)
{
  ((Fixture *)data)->ticks++;
  return G_SOURCE_CONTINUE;
}

/* Calls function(arg) eagerly (host code runs on every call) and waits. */
static TsCallResult *call(Fixture *f, guint id, const char *function, const char *arg, GError **error)
{
  GAsyncResult *res = NULL;
  const char *const args[] = { arg, NULL };
  /* at GTK's redraw priority: what a window's frames would get */
  guint ticker = g_timeout_add_full(G_PRIORITY_HIGH_IDLE + 20, 1, tick, f, NULL);
  ts_worker_call_async(f->worker, id, function, args, 1, TRUE, NULL, store_result, &res);
  TsCallResult *r = ts_worker_call_finish(f->worker, wait_result(&res, function), error);
  g_source_remove(ticker);
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

/* function(1) returns 2, then say(1) works and its lines arrive. */
static void survive(Fixture *f, const char *function)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TsCallResult) r = call(f, 1, function, "f32[]=1", &error);
  g_assert_no_error(error);
  g_assert_cmpstr(r->value_text, ==, "Tensor(2.0, shape=(), dtype=float32)");
  for (guint id = 2; id <= 3; id++) {
    g_autoptr(TsCallResult) again = call(f, id, "say", "f32[]=2", &error);
    g_assert_no_error(error);
    g_assert_cmpstr(again->value_text, ==, "Tensor(3.0, shape=(), dtype=float32)");
    g_autofree char *out = g_strdup_printf("1:%u:said out", id), *err = g_strdup_printf("2:%u:said err", id);
    g_assert_true(has_line(f, out));
    g_assert_true(has_line(f, err));
  }
  g_assert_true(ts_worker_get_alive(f->worker));
}

/* A module that closes stdout and stderr: the call completes (its marks
 * reach the app), and the next call's lines come as before. */
static void test_close_std(void)
{
  Fixture f = { 0 };
  fixture_start(&f);
  survive(&f, "close_std");
  fixture_stop(&f);
}

/* Closing fds 3 to 10 closes nothing of the protocol's. */
static void test_close_fds(void)
{
  Fixture f = { 0 };
  fixture_start(&f);
  survive(&f, "close_fds");
  fixture_stop(&f);
}

/* Garbage written to fds 3 to 10 reaches nothing of the protocol's: over
 * the fast channel and over D-Bus alike. */
static void test_scribble_fds(void)
{
  for (int fast = 0; fast < 2; fast++) {
    Fixture f = { 0 };
    fixture_start(&f);
    ts_worker_set_fast_calls(f.worker, fast);
    survive(&f, "scribble_fds");
    g_assert_cmpuint(ts_worker_get_fast_calls(f.worker), ==, fast ? 3 : 0);
    fixture_stop(&f);
  }
}

/* A process that is gone, or a zombie nobody reaped yet. */
static gboolean process_gone(gpointer data)
{
  int pid = GPOINTER_TO_INT(data);
  if (kill(pid, 0) != 0)
    return errno == ESRCH;
  g_autofree char *path = g_strdup_printf("/proc/%d/stat", pid), *stat = NULL;
  if (!g_file_get_contents(path, &stat, NULL, NULL))
    return TRUE;
  const char *state = strrchr(stat, ')');
  return state && state[1] == ' ' && state[2] == 'Z';
}

/* A module forks a child that never exits (holding every pipe of the
 * worker's), then segfaults: the crash is reported with its report, not
 * when the child lets go of the pipes, and the child is killed. */
static void test_fork_then_crash(void)
{
  Fixture f = { 0 };
  fixture_start(&f);
  g_autoptr(GError) error = NULL;
  g_autoptr(TsCallResult) r = call(&f, 9, "fork_segv", "f32[]=1", &error);
  g_assert_null(r);
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED);
  g_assert_nonnull(f.death);
  g_assert_cmpint(f.death->signal, ==, SIGSEGV);
  g_assert_nonnull(strstr(f.death->summary, "crashed: SIGSEGV"));
  g_assert_nonnull(f.death->backtrace);
  g_assert_nonnull(strstr(f.death->backtrace, "fork_segv"));
  int child = 0;
  for (guint i = 0; i < f.lines->len && !child; i++)
    sscanf(g_ptr_array_index(f.lines, i), "1:9:child %d", &child);
  g_assert_cmpint(child, >, 0);
  guint ticker = g_timeout_add(5, tick, &f); /* nothing else wakes the loop */
  test_wait_for(process_gone, GINT_TO_POINTER(child), "the worker's child to be killed");
  g_source_remove(ticker);
  fixture_stop(&f);
}

/* A million lines on stderr: every one arrives, in slices that leave the
 * main loop its turns (a timeout at the redraw's priority keeps firing). */
static void test_flood(void)
{
  Fixture f = { 0 };
  fixture_start(&f);
  g_autoptr(GError) error = NULL;
  g_autoptr(TsCallResult) r = call(&f, 1, "flood", "1000000", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(f.n_lines[2], ==, 1000000);
  g_assert_true(has_line(&f, "2:1:flood line 0"));
  g_test_message("%u turns of the redraw-priority 1 ms timeout during the call", f.ticks);
  g_assert_cmpuint(f.ticks, >, 10);
  fixture_stop(&f);
}

/* The lines one main-loop iteration handled at most: counted from one
 * preparation of this source (it comes first) to the next. */
typedef struct {
  GSource source;
  Fixture *f;
  guint seen, most;
} Iterations;

static gboolean iterations_prepare(GSource *source, int *timeout)
{
  Iterations *it = (Iterations *)source;
  guint seen = it->f->n_lines[1] + it->f->n_lines[2];
  it->most = MAX(it->most, seen - it->seen);
  it->seen = seen;
  *timeout = -1;
  return FALSE;
}

static gboolean iterations_dispatch(GSource *source, GSourceFunc callback, gpointer data)
{
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs iterations_funcs = { iterations_prepare, NULL, iterations_dispatch, NULL, NULL, NULL };

/* A module prints 3000 lines on stderr (48 KB: its pipe holds them) and
 * segfaults while the app waits for its fast reply, not reading: every
 * line arrives before the death is told, and each main-loop iteration
 * handles at most what one read of each pipe holds (each line here takes
 * at least 13 of its TS_WORKER_OUTPUT_READ_MAX bytes), also what the pipe
 * held at the death. */
static void test_flood_then_crash(void)
{
  Fixture f = { 0 };
  fixture_start(&f);
  Iterations *it = (Iterations *)g_source_new(&iterations_funcs, sizeof(Iterations));
  it->f = &f;
  g_source_set_priority(&it->source, G_PRIORITY_HIGH);
  g_source_attach(&it->source, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TsCallResult) r =
    ts_worker_call_sync(f.worker, 5, "flood_segv", (const char *const[]){ "3000", NULL }, 1, TRUE, NULL, NULL, &error);
  g_assert_null(r);
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED);
  test_wait_for(death_known, &f, "the death to be told");
  g_assert_nonnull(strstr(f.death->summary, "crashed: SIGSEGV"));
  g_assert_cmpuint(f.n_lines[2], ==, 3000);
  g_assert_true(has_line(&f, "2:5:flood line 0"));
  g_test_message("at most %u lines in one iteration", it->most);
  g_assert_cmpuint(it->most, >, 0);
  g_assert_cmpuint(it->most, <=, 2 * (TS_WORKER_OUTPUT_READ_MAX / strlen("flood line 0\n") + 1));
  g_source_destroy(&it->source);
  g_source_unref(&it->source);
  fixture_stop(&f);
}

/* One 64 MiB line arrives cut, saying how much was left out; the call's
 * mark after it is still seen. */
static void test_long_line(void)
{
  Fixture f = { 0 };
  fixture_start(&f);
  g_autoptr(GError) error = NULL;
  g_autoptr(TsCallResult) r = call(&f, 1, "long_line", "64", &error);
  g_assert_no_error(error);
  g_assert_cmpstr(r->value_text, ==, "Tensor(64, shape=(), dtype=int32)");
  g_assert_cmpuint(f.n_lines[1], ==, 1);
  const char *line = g_ptr_array_index(f.lines, 0);
  g_assert_true(g_str_has_prefix(line, "1:1:xxxx"));
  g_autofree char *said = g_strdup_printf(" … (%u more bytes not shown)", (64u << 20) - (16u << 10));
  g_assert_true(g_str_has_suffix(line, said));
  g_assert_cmpuint(f.longest, <=, (16u << 10) + strlen(said));
  fixture_stop(&f);
}

/* A constructor that segfaults: the open fails saying so, with the
 * backtrace in the death. */
static void test_crash_while_loading(void)
{
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;
  g_assert_false(fixture_open(&f, NULL, "ctor-crash.so", &error));
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED);
  g_assert_true(g_str_has_prefix(error->message, "crashed while loading the module: SIGSEGV (segmentation fault"));
  g_assert_nonnull(f.death);
  g_assert_cmpstr(error->message, ==, f.death->summary);
  g_assert_nonnull(f.death->backtrace);
  g_assert_nonnull(strstr(f.death->backtrace, "crash_on_load"));
  fixture_stop(&f);
}

/* Started under `ulimit -v` (and no limit of the app's), a module out of
 * memory is said to have reached that limit. */
static void test_inherited_memory_limit(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  g_test_skip("sanitizers reserve more address space than any limit leaves");
  return;
#endif
  const char *worker = g_getenv("TRACESCOPE_WORKER");
  g_assert_nonnull(worker);
  g_autofree char *dir = g_dir_make_tmp("ts-hostile-XXXXXX", NULL);
  g_autofree char *script = g_build_filename(dir, "limited-worker", NULL);
  g_autofree char *text = g_strdup_printf("#!/bin/sh\nulimit -v 1048576\nexec '%s' \"$@\"\n", worker);
  g_assert_true(g_file_set_contents(script, text, -1, NULL));
  g_assert_cmpint(chmod(script, 0755), ==, 0);
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;
  g_assert_true(fixture_open(&f, script, "misbehave.so", &error));
  g_autoptr(TsCallResult) r = call(&f, 5, "hog", "1", &error);
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED);
  g_assert_true(f.death->out_of_memory);
  g_assert_nonnull(strstr(f.death->summary, "reached its limit of 1.0"));
  g_assert_nonnull(strstr(f.death->summary, "ulimit -v"));
  fixture_stop(&f);
  g_unlink(script);
  g_rmdir(dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/worker/hostile/close-std", test_close_std);
  g_test_add_func("/worker/hostile/close-fds", test_close_fds);
  g_test_add_func("/worker/hostile/scribble-fds", test_scribble_fds);
  g_test_add_func("/worker/hostile/fork-then-crash", test_fork_then_crash);
  g_test_add_func("/worker/hostile/flood", test_flood);
  g_test_add_func("/worker/hostile/flood-then-crash", test_flood_then_crash);
  g_test_add_func("/worker/hostile/long-line", test_long_line);
  g_test_add_func("/worker/hostile/crash-while-loading", test_crash_while_loading);
  g_test_add_func("/worker/hostile/inherited-memory-limit", test_inherited_memory_limit);
  return g_test_run();
}
