/* ts-engine-worker.h — runs module functions on one engine thread (the
 * engine's scopes and errors are per thread), capturing their stdout and
 * relaying engine events (traces, warnings, prints) to the main thread as
 * signals.  The GUI never waits on a call. */
#pragma once

#include <gio/gio.h>

#include "ts-console-line.h"
#include "ts-loaded-module.h"
#include "ts-trace-entry.h"

G_BEGIN_DECLS

#define TS_ENGINE_ERROR (ts_engine_error_quark())
GQuark ts_engine_error_quark(void);
/* Codes are the engine's ts_error_code. */

/* What a run produced. */
typedef struct {
  guint call_id;
  char *label;        /* "#3 f(2)" */
  gboolean traced_only; /* some argument was a spec with unknown dims: traced, not run */
  char *value_text;   /* the result as the tensor printer shows it, or the concrete signature */
  char *shape_text;   /* "i32[]" (NULL when traced only) */
  guint n_calls;      /* calls made */
  guint64 total_ns;   /* time of all calls */
} TsRunResult;

void ts_run_result_free(TsRunResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TsRunResult, ts_run_result_free)

#define TS_TYPE_ENGINE_WORKER (ts_engine_worker_get_type())
G_DECLARE_FINAL_TYPE(TsEngineWorker, ts_engine_worker, TS, ENGINE_WORKER, GObject)

TsEngineWorker *ts_engine_worker_new(void);

/* Whether calls are queued or running (notify::busy). */
gboolean ts_engine_worker_get_busy(TsEngineWorker *self);

/* Calls module's function `repeat` times with args (argument specs as
 * ts_value_parse reads them; a bare spec such as "f32[?,3]" makes it trace
 * without running), in graph mode or eagerly.  Calls queue; each gets an id
 * (returned) that its events carry.  Cancelling stops between calls and
 * completes at once with G_IO_ERROR_CANCELLED; a call already in the engine
 * finishes in the background and its result is dropped. */
guint ts_engine_worker_run_async(TsEngineWorker *self, TsLoadedModule *module,
                                 const char *function, const char *const *args, guint repeat,
                                 gboolean eager, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data);
/* Owned result, or NULL with an error (the engine's message, or cancelled). */
TsRunResult *ts_engine_worker_run_finish(TsEngineWorker *self, GAsyncResult *result,
                                         GError **error);

/* "#3 f(2, f32[3]:uniform)" */
char *ts_engine_worker_format_label(guint call_id, const char *function, const char *const *args);

/* The message for an error in an argument the user typed: "Op: detail" or
 * the detail alone, without the engine's source location ("arg_spec.c:204:"),
 * which says nothing about the user's input or code.  Owned. */
char *ts_engine_error_input_message(const ts_error *e);

G_END_DECLS
