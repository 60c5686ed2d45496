/* ts-engine-worker.h — the app's engine: a tracescope-worker process
 * (TsWorker) with the module open in it.  Loads modules, queues calls and
 * turns what the worker reports into the app's objects (trace log entries,
 * console lines), on the main thread.  When the worker dies it emits
 * ::died with what happened; the next load starts a fresh one.  The GUI
 * never waits on it. */
#pragma once

#include <gio/gio.h>

#include "tracescope-profiler.h"
#include "ts-console-line.h"
#include "ts-loaded-module.h"
#include "ts-trace-entry.h"
#include "ts-source-snippet.h"
#include "ts-worker.h"

G_BEGIN_DECLS

/* What a run produced. */
typedef struct {
  guint call_id;
  char *label;        /* "#3 f(2)" */
  gboolean traced_only; /* some argument was a spec with unknown dims: traced, not run */
  char *value_text;   /* the result as the tensor printer shows it, or the concrete signature */
  char *shape_text;   /* "i32[]" (NULL when traced only) */
  guint n_calls;      /* calls made */
  guint64 total_ns;   /* time of all calls */
  tsp_session *profile; /* made while profiling, or by a comparison: what was recorded (owned), else NULL */
  tsp_compare *compare; /* ts_engine_worker_compare_async: eager against graph (owned, its
                           function is a string of profile), else NULL */
  ts_tensor *tensor;  /* the result's values (a reference: ts_tensor_unref); NULL for strings,
                         variants and traced-only calls */
  char *device;       /* where the worker's result was ("SIM:0"; tensor is the app's copy), or NULL */
} TsRunResult;

void ts_run_result_free(TsRunResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TsRunResult, ts_run_result_free)

#define TS_TYPE_ENGINE_WORKER (ts_engine_worker_get_type())
G_DECLARE_FINAL_TYPE(TsEngineWorker, ts_engine_worker, TS, ENGINE_WORKER, GObject)

TsEngineWorker *ts_engine_worker_new(void);

/* The address-space limit of workers started from now on (0: none). */
void ts_engine_worker_set_memory_limit(TsEngineWorker *self, guint64 bytes);
guint64 ts_engine_worker_get_memory_limit(TsEngineWorker *self);
/* Workers started from now on run on target ("[user@]host[:port]")
 * through ssh (ts_worker_set_remote), module paths being paths there;
 * NULL: on this machine. */
void ts_engine_worker_set_remote(TsEngineWorker *self, const char *target);
const char *ts_engine_worker_get_remote(TsEngineWorker *self);

/* The lines around a source location of the module at module_file, read
 * where the module is: here, under its directories (ts_source_search_dirs),
 * or, with a remote worker, there (ts_worker_read_source_async). */
void ts_engine_worker_read_source_async(TsEngineWorker *self, const char *module_file, const char *file, int line,
                                        int context, GCancellable *cancellable, GAsyncReadyCallback callback,
                                        gpointer user_data);
TsSourceSnippet *ts_engine_worker_read_source_finish(TsEngineWorker *self, GAsyncResult *result, GError **error);

/* Half of the machine's memory. */
guint64 ts_engine_worker_default_memory_limit(void);

/* The call the worker is running now (it has started it), 0 if none. */
guint ts_engine_worker_get_running(TsEngineWorker *self);

/* Whether a load or calls are under way (notify::busy). */
gboolean ts_engine_worker_get_busy(TsEngineWorker *self);

/* Starts a fresh worker with source ("seeds" or a path) open in it; once
 * it is open the previous worker is closed (if it fails, that one stays).
 * Input signatures given for the same source before are applied again.  The module as the app sees it, or NULL with
 * an error saying what was wrong with the file. */
void ts_engine_worker_load_async(TsEngineWorker *self, const char *source,
                                 GCancellable *cancellable, GAsyncReadyCallback callback,
                                 gpointer user_data);
TsLoadedModule *ts_engine_worker_load_finish(TsEngineWorker *self, GAsyncResult *result,
                                             GError **error);

/* Calls the loaded module's function `repeat` times with args (argument
 * specs as ts_value_parse reads them; a bare spec such as "f32[?,3]" makes
 * it trace without running), in graph mode or eagerly.  Calls queue; each
 * gets an id (returned) that its events carry.  Cancelling stops the call
 * at its next op (the worker is killed if it does not stop within 2 s) and
 * completes with G_IO_ERROR_CANCELLED.  If the worker dies the call fails
 * with TS_WORKER_ERROR_DIED, "<function> crashed: SIGSEGV (...)". */
guint ts_engine_worker_run_async(TsEngineWorker *self, TsLoadedModule *module,
                                 const char *function, const char *const *args, guint repeat,
                                 gboolean eager, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data);
/* Owned result, or NULL with an error (the engine's message, cancelled, or died). */
TsRunResult *ts_engine_worker_run_finish(TsEngineWorker *self, GAsyncResult *result,
                                         GError **error);

/* Whether runs started from now record a profiling session (TsRunResult.profile):
 * the "profiling" property, which the run controller binds to the workspace. */
void ts_engine_worker_set_profiling(TsEngineWorker *self, gboolean profiling);
gboolean ts_engine_worker_get_profiling(TsEngineWorker *self);
/* The devices of the loaded module's worker (TsWorkerDevice, borrowed;
 * NULL before a load, or from a worker that cannot say) and its note on
 * real devices ("CUDA: no device (...)"; borrowed, may be NULL).
 * notify::devices when a load changes them. */
GPtrArray *ts_engine_worker_get_devices(TsEngineWorker *self, const char **note);
/* Runs and comparisons started from now run their calls on device (a
 * name of the list; "CPU" or NULL: the CPU).  Debugging runs on the CPU. */
void ts_engine_worker_set_device(TsEngineWorker *self, const char *device);
/* ("device" property, notified) */
const char *ts_engine_worker_get_device(TsEngineWorker *self);

/* Check mode: every graph-mode call also runs eagerly and a divergence
 * comes as a warning (ts_function_set_check_eagerly), in the trace log. */
void ts_engine_worker_set_check_eagerly(TsEngineWorker *self, gboolean check);
gboolean ts_engine_worker_get_check_eagerly(TsEngineWorker *self);

/* Runs function eagerly and as a graph, a warm-up and then n_calls times
 * each way, recorded; finish with ts_engine_worker_run_finish: the result
 * has profile and compare.  The recorded bytes are read off the main
 * thread. */
guint ts_engine_worker_compare_async(TsEngineWorker *self, TsLoadedModule *module,
                                     const char *function, const char *const *args, guint n_calls,
                                     GCancellable *cancellable, GAsyncReadyCallback callback,
                                     gpointer user_data);

/* Gives function an input signature (specs as "f32[?,3]"), remembered for
 * the worker's restarts. */
void ts_engine_worker_set_input_signature_async(TsEngineWorker *self, const char *function,
                                                const char *const *specs,
                                                GAsyncReadyCallback callback, gpointer user_data);
gboolean ts_engine_worker_set_input_signature_finish(TsEngineWorker *self, GAsyncResult *result,
                                                     GError **error);

/* The worker process, for what goes to it directly (the debugger,
 * ts-worker-debug.h); NULL before the first load.  Borrowed. */
TsWorker *ts_engine_worker_get_worker(TsEngineWorker *self);
/* An id for a call made directly on the worker, its label ("#4 f(2)")
 * kept so that what the call prints is attributed to it. */
guint ts_engine_worker_reserve_call_id(TsEngineWorker *self, const char *function, const char *const *args);

/* "#3 f(2, f32[3]:uniform)" */
char *ts_engine_worker_format_label(guint call_id, const char *function, const char *const *args);

/* Signals:
 *   ::trace    (TsTraceEntry *entry)
 *   ::warning  (guint kind, const char *function, const char *message, const char *arguments)
 *   ::output   (guint call_id, const char *call_label, gint64 time_us, TsConsoleSource source,
 *               const char *text) — a line the module printed (call 0 and label "": none known)
 *   ::print    (guint call_id, const char *text)
 *   ::progress (guint call_id, double fraction)
 *   ::transfer (guint call_id, guint64 received, guint64 total) — a remote
 *                worker's large result arriving in chunks
 *   ::module-changed () — a remote module's file changed there (a local
 *                one the window watches itself, ts-module-watch.h)
 *   ::died     (TsWorkerDeath *death, const char *call_label) — the worker
 *              ended on its own (crash, exit, memory, killed after Cancel);
 *              call_label is the call it was running, or NULL */

G_END_DECLS
