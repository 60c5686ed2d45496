/* ts-worker.h — the app's end of one tracescope-worker process: starts
 * it, speaks the protocol (ts-worker-protocol.h), reads its stdout and
 * stderr, watches its memory, and when it dies — a crash, exit(), the
 * memory limit, or killed after Cancel went unanswered — says what
 * happened (TsWorkerDeath) and fails what was in flight with
 * TS_WORKER_ERROR_DIED.  A worker object lives as long as its process: a
 * new process is a new TsWorker.  GIO only (the CLI uses it too). */
#pragma once

#include <gio/gio.h>
#include <tracescope.h>

#include "ts-worker-error.h"

G_BEGIN_DECLS

/* How a worker ended. */
typedef struct {
  char *summary;     /* "crashed: SIGSEGV (segmentation fault at 0x0)", "called exit(3)", ... */
  char *backtrace;   /* "#0  crash (bad.c:12) in libbad.so\n..." or NULL */
  char *last_op;     /* "MatMul (dense_1/MatMul) at model.c:42 (dense)", or NULL */
  guint call_id;     /* the call it was running, 0 if none */
  int signal;        /* the signal that ended it, 0 if none */
  int exit_status;   /* when it exited: its code */
  gboolean exited;   /* the module called exit() */
  gboolean out_of_memory;
  gboolean hung;     /* killed: Cancel was not answered within the grace period */
  gboolean expected; /* ended because the app closed it */
} TsWorkerDeath;

#define TS_TYPE_WORKER_DEATH (ts_worker_death_get_type())
GType ts_worker_death_get_type(void);
TsWorkerDeath *ts_worker_death_copy(const TsWorkerDeath *death);
void ts_worker_death_free(TsWorkerDeath *death);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TsWorkerDeath, ts_worker_death_free)

/* One tensor of a call's tuple of results. */
typedef struct {
  char *value_text;       /* its printed value */
  char *shape_text;       /* "i32[]" */
  ts_dtype dtype;         /* its values (data NULL for strings and variants) */
  ts_shape shape;
  GBytes *data;
  char *device;           /* where the worker's tensor was ("SIM:0"), NULL if not said */
} TsResultValue;

/* What a call produced. */
typedef struct {
  guint call_id;
  gboolean traced_only;   /* an argument was a bare spec: traced, not run */
  char *value_text;       /* the printed result (a tuple's: "(Tensor(...), Tensor(...))"),
                           * or the concrete signature when traced only */
  char *shape_text;       /* "i32[]", a tuple's "(i32[], f32[])" (NULL when traced only) */
  guint n_calls;
  guint64 total_ns;       /* time of all calls, measured in the worker */
  /* the result's values (NULL for strings, variants, tuples and traced-only calls) */
  ts_dtype dtype;
  ts_shape shape;
  GBytes *data;
  char *device;           /* where the worker's result was ("SIM:0"; the data is a host copy) */
  /* a function that returned a tuple of several tensors: each of them
   * (n_results of them); else 0 and NULL */
  guint n_results;
  TsResultValue *results;
  /* option "profile" or "compare": the session recorded, serialized
   * (tsp_session_deserialize reads it), else NULL */
  GBytes *profile;
  /* option "compare": a{sv} with n-calls (u), eager-window and
   * graph-window ((tt): the timed calls of each mode in the session),
   * first-call-ns, trace-ns and payback-calls (d); else NULL */
  GVariant *compare;
} TsCallResult;

void ts_call_result_free(TsCallResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TsCallResult, ts_call_result_free)

/* A trace the worker made. */
typedef struct {
  guint call_id;
  char *function;
  char *signature;        /* "(x: f32[2])" */
  char *pretty_signature;
  ts_trace_reason reason;
  char *reason_text;
  guint64 duration_ns;    /* 0: none measured (the worker died while it traced) */
  int n_concrete;         /* the function's concrete functions now */
  int trace_count;
  ts_graph *graph;        /* the concrete function's graph (owned), NULL if it did not arrive */
  char *error;            /* tracing failed: why (no concrete function then); else NULL */
} TsWorkerTrace;

void ts_worker_trace_free(TsWorkerTrace *trace);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TsWorkerTrace, ts_worker_trace_free)

/* A function of the module. */
typedef struct {
  char *name;
  char **params;          /* NULL-terminated parameter names */
  char **examples;        /* its example arguments (argument specs), or NULL */
} TsWorkerFunction;

/* A dispatch reads at most this much of a worker's stdout or stderr: at
 * most 4096 lines (a line ends in a byte), about 200 of a flood of short
 * lines, so a module printing without end takes a bounded share of each
 * frame (the rest waits in the pipe, the module on the full pipe). */
#define TS_WORKER_OUTPUT_READ_MAX 4096u

#define TS_TYPE_WORKER (ts_worker_get_type())
G_DECLARE_FINAL_TYPE(TsWorker, ts_worker, TS, WORKER, GObject)

/* A worker with an address-space limit of memory_limit bytes (0: none). */
TsWorker *ts_worker_new(guint64 memory_limit);

/* Before start: the executable to run (NULL: $TRACESCOPE_WORKER, the
 * build tree's, the installed one) and variables of its environment
 * (value NULL: unset), leaving the app's own environment alone. */
void ts_worker_set_executable(TsWorker *self, const char *path);
void ts_worker_setenv(TsWorker *self, const char *name, const char *value);

/* Before start: run the worker on another machine, target
 * "[user@]host[:port]", through OpenSSH (`ssh -o BatchMode=yes host
 * tracescope-worker --stdio`, ts-worker-remote.h; NULL: here).  Start
 * then fails with what to do when ssh cannot log in without a password,
 * the host key is unknown, the remote has no tracescope-worker, or it
 * speaks another protocol version; a connection lost later is a death
 * whose summary begins "connection lost". */
void ts_worker_set_remote(TsWorker *self, const char *target);
const char *ts_worker_get_remote(TsWorker *self);

/* Starts the process and checks it speaks our protocol. */
void ts_worker_start_async(TsWorker *self, GCancellable *cancellable, GAsyncReadyCallback callback,
                           gpointer user_data);
gboolean ts_worker_start_finish(TsWorker *self, GAsyncResult *result, GError **error);

/* Opens source ("seeds" or a path) in the worker.  Its title, canonical
 * path and functions (an array of TsWorkerFunction*) come back.  When the
 * worker dies meanwhile (a constructor crashed), it fails with
 * TS_WORKER_ERROR_DIED and the death's summary ("crashed while loading
 * the module: SIGSEGV (...)"); ts_worker_get_death has the rest. */
void ts_worker_open_async(TsWorker *self, const char *source, GCancellable *cancellable,
                          GAsyncReadyCallback callback, gpointer user_data);
gboolean ts_worker_open_finish(TsWorker *self, GAsyncResult *result, char **title, char **path,
                               GPtrArray **functions, GError **error);
void ts_worker_function_free(TsWorkerFunction *fn);

void ts_worker_set_input_signature_async(TsWorker *self, const char *function,
                                         const char *const *specs, GCancellable *cancellable,
                                         GAsyncReadyCallback callback, gpointer user_data);
gboolean ts_worker_set_input_signature_finish(TsWorker *self, GAsyncResult *result, GError **error);

/* Asks the worker to watch its module's file on its machine (a remote
 * worker's module is not here to watch): ::module-changed once it has
 * settled after a change.  Fails (TS_ENGINE_ERROR, TS_ERR_NOT_FOUND) when no
 * module file is open (the seeds built in). */
void ts_worker_watch_module_async(TsWorker *self, GCancellable *cancellable, GAsyncReadyCallback callback,
                                  gpointer user_data);
gboolean ts_worker_watch_module_finish(TsWorker *self, GAsyncResult *result, GError **error);
/* A device of the worker's engine (ListDevices). */
typedef struct TsWorkerDevice {
  char *name;          /* "CPU", "SIM:0", "CUDA:0" */
  char *description;   /* "NVIDIA H100 80GB HBM3"; "" if none */
  guint64 free_bytes, total_bytes; /* 0: unknown */
} TsWorkerDevice;
void ts_worker_device_free(TsWorkerDevice *device);

/* The devices the worker's engine has (TsWorkerDevice, in the engine's
 * order, the CPU first) and its note on real devices ("CUDA: no device
 * (...)"). */
void ts_worker_list_devices_async(TsWorker *self, GCancellable *cancellable,
                                  GAsyncReadyCallback callback, gpointer user_data);
GPtrArray *ts_worker_list_devices_finish(TsWorker *self, GAsyncResult *result, char **note,
                                         GError **error);

/* Calls function `repeat` times (argument specs as ts_value_parse reads
 * them; a bare spec such as "f32[?,3]" traces without running).  Calls run
 * one after another in the order made.  Cancelling asks the worker to stop
 * at the next op; if the call has not ended 2 s later the worker is killed
 * (TS_WORKER_ERROR_DIED, death->hung).  A cancelled call fails with
 * G_IO_ERROR_CANCELLED.  The result comes after every line the call
 * printed was delivered (::output). */
void ts_worker_call_async(TsWorker *self, guint call_id, const char *function,
                          const char *const *args, guint repeat, gboolean eager,
                          GCancellable *cancellable, GAsyncReadyCallback callback,
                          gpointer user_data);
TsCallResult *ts_worker_call_finish(TsWorker *self, GAsyncResult *result, GError **error);
/* The same with options (a{sv}, NULL for none; a floating reference is
 * sunk): "profile" (b) records a profiling session around the calls,
 * "compare" (u: N) calls instead a warm-up and N times each way, eagerly
 * and as a graph, recorded (result->profile, result->compare).  Finish
 * with ts_worker_call_finish. */
void ts_worker_call_with_options_async(TsWorker *self, guint call_id, const char *function,
                                       const char *const *args, guint repeat, gboolean eager,
                                       GVariant *options, GCancellable *cancellable,
                                       GAsyncReadyCallback callback, gpointer user_data);

/* The same, waiting here: over the fast channel the reply is spun for,
 * then slept for in slices between which the thread-default main context
 * runs (deaths, Cancel's grace period, signals); over D-Bus the context
 * runs until the call completes.  ::output, ::trace and the other signals
 * of the call are emitted before it returns.  For callers that would wait
 * anyway (benchmarks, the command line): it saves the main loop's wakeup. */
TsCallResult *ts_worker_call_sync(TsWorker *self, guint call_id, const char *function,
                                  const char *const *args, guint repeat, gboolean eager, GVariant *options,
                                  GCancellable *cancellable, GError **error);

/* Calls go over the fast channel (shared memory beside the connection,
 * docs/worker.md "Fast calls") when the worker has one and nothing else is
 * in flight; FALSE (before start) keeps every call on D-Bus. */
void ts_worker_set_fast_calls(TsWorker *self, gboolean fast);
/* How many calls went over the fast channel. */
guint ts_worker_get_fast_calls(TsWorker *self);

/* Ends the process: closes its connection, or kills it when it is inside
 * a call (it could not notice).  The object lives until its process has
 * ended and ::died was emitted, so every owner calls this when done. */
void ts_worker_close(TsWorker *self);

gboolean ts_worker_get_alive(TsWorker *self);
/* How it ended; NULL while it lives. */
const TsWorkerDeath *ts_worker_get_death(TsWorker *self);
GPid ts_worker_get_pid(TsWorker *self);
/* The call the worker is inside now (from its status page: no message), 0 if none. */
guint ts_worker_get_running_call(TsWorker *self);

/* Signals (main context of the creating thread):
 *   ::trace    (TsWorkerTrace *trace)           — a (re)trace, with its graph
 *   ::warning  (guint call_id, guint kind, const char *function,
 *               const char *message, const char *arguments)
 *   ::print    (guint call_id, const char *text) — ts_print output
 *   ::progress (guint call_id, double fraction)
 *   ::transfer (guint call_id, guint64 received, guint64 total)
 *              — a remote worker's large result arriving in chunks
 *                (ts-worker-blob.h): bytes in so far, of total
 *   ::output   (guint call_id, int fd, const char *line, gint64 time_us)
 *              — a line of the module's stdout (1) or stderr (2); call_id
 *                0 for lines printed outside calls; one longer than 16 KiB
 *                is cut, ending "… (N more bytes not shown)"
 *   ::module-changed (const char *path) — the module's file there changed
 *                (after ts_worker_watch_module_async)
 *   ::died     (TsWorkerDeath *death) */

G_END_DECLS
