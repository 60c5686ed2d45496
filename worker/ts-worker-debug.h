/* ts-worker-debug.h — the app's end of the worker's step debugger
 * (TS_WORKER_DEBUG_INTERFACE; docs/worker.md, "Debugging"): start a debug
 * call, wait for its stops, steer it, read its history.  The debuggee runs
 * in the worker on a thread of its own, so the app never blocks on it. */
#pragma once

#include <gio/gunixfdlist.h>

#include "ts-worker.h"

G_BEGIN_DECLS

/* A tensor of a stop: its values, when it has host bytes. */
typedef struct {
  char *shape_text; /* "f32[2,3]" */
  ts_dtype dtype;
  ts_shape shape;
  GBytes *data;     /* NULL for strings and variants */
  char *device;     /* where the worker's tensor was ("SIM:0"), NULL if not said */
} TsDebugTensor;

/* A frame of the call stack: a function, or a TS_IF/TS_WHILE/TS_FOR block. */
typedef struct {
  char *name;
  char *file; /* NULL when unknown */
  int line;
} TsDebugFrame;

/* An op as the debugger saw it. */
typedef struct {
  guint64 run_id, seq;
  char *op;             /* "MatMul" */
  char *device;         /* where it runs: "CPU", "SIM:0" */
  char *file, *func;    /* NULL when the engine made the op */
  int line;
  char *node;           /* the graph node (or eagerly its traced twin); NULL if none */
  char *path;           /* that node's path ("While/body/Add"); its name from an older worker */
  char *scope;          /* "" if none */
  char *gradient_of;    /* a gradient's op: the forward node's name; NULL if not */
  GPtrArray *frames;    /* TsDebugFrame *, outermost first */
  GPtrArray *inputs;    /* TsDebugTensor * */
  GPtrArray *outputs;   /* TsDebugTensor *, empty before the op ran */
} TsDebugOp;

/* Where the debuggee stopped, and why. */
typedef struct {
  char *reason;         /* "step", "breakpoint", "nan", "inf", "condition", "pause", "finished" */
  int breakpoint;       /* the breakpoint's id, or 0 */
  gboolean after;       /* the op has run: its outputs are set */
  int history_n;        /* ops kept for step back */
  TsDebugOp *op;        /* NULL when finished */
  char *error;          /* finished with an error (cancelled included), else NULL */
  char *result_text;    /* finished: the printed result, or NULL */
  TsDebugTensor *result;
} TsDebugStop;

void ts_debug_tensor_free(TsDebugTensor *t);
void ts_debug_op_free(TsDebugOp *op);
void ts_debug_stop_free(TsDebugStop *stop);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TsDebugOp, ts_debug_op_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TsDebugStop, ts_debug_stop_free)

/* A stop (DebugWait's a{sv}) and a history entry (DebugHistory's), every
 * field checked; NULL + TS_WORKER_ERROR_PROTOCOL saying what is wrong. */
TsDebugStop *ts_debug_stop_read(GVariant *dict, GUnixFDList *fds, GError **error);
TsDebugOp *ts_debug_op_read(GVariant *dict, GUnixFDList *fds, GError **error);

/* Starts debugging a call of function (arguments as for a call), with
 * breakpoints (ts_debug_break_add's text), stopped before its first op
 * (run FALSE) or running to the first breakpoint, its ops on device (a
 * name of ts_worker_list_devices; NULL: the CPU).  The breakpoints' ids
 * come back in order.  The worker refuses calls until the debug call has
 * finished. */
void ts_worker_debug_start_async(TsWorker *self, guint call_id, const char *function,
                                 const char *const *args, const char *const *breakpoints, gboolean eager,
                                 const char *device, gboolean run, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data);
GArray *ts_worker_debug_start_finish(TsWorker *self, GAsyncResult *result, GError **error);

/* The next stop (a long poll: completes when the debuggee stops). */
void ts_worker_debug_wait_async(TsWorker *self, GCancellable *cancellable, GAsyncReadyCallback callback,
                                gpointer user_data);
TsDebugStop *ts_worker_debug_wait_finish(TsWorker *self, GAsyncResult *result, GError **error);

/* Op `index` of the history (0 oldest, history_n - 1 the newest). */
void ts_worker_debug_history_async(TsWorker *self, int index, GCancellable *cancellable,
                                   GAsyncReadyCallback callback, gpointer user_data);
TsDebugOp *ts_worker_debug_history_finish(TsWorker *self, GAsyncResult *result, GError **error);

/* Steering, each answered by the worker at once:
 *   "DebugResume"  (s action: continue, step, over, out)
 *   "DebugPause"   ()
 *   "DebugStop"    ()   — the call ends cancelled
 *   "DebugBreak"   (s spec) -> (i id)
 *   "DebugUnbreak" (i id)
 * The reply's parameters come back (NULL + error on failure). */
void ts_worker_debug_command_async(TsWorker *self, const char *method, GVariant *params,
                                   GCancellable *cancellable, GAsyncReadyCallback callback,
                                   gpointer user_data);
GVariant *ts_worker_debug_command_finish(TsWorker *self, GAsyncResult *result, GError **error);

G_END_DECLS
