/* worker-service.h — the object tracescope-worker serves on its connection. */
#pragma once

#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <tracescope.h>

#include "ts-worker-protocol.h"

typedef struct WorkerService WorkerService;
/* A method's answer: a value (with fds) or an error. */
typedef struct WorkerAnswer WorkerAnswer;

/* Registers the worker object on connection; status is the shared page,
 * last_op what the engine keeps of the op it started last. */
WorkerService *worker_service_new(GDBusConnection *connection, TsWorkerStatus *status,
                                  const ts_op_watch *last_op, GError **error);
void worker_service_free(WorkerService *s);

/* For a call the service did not make itself (a debug call on a thread
 * of its own): its id goes with the signals its events raise and on the
 * status page, and Cancel for it sets the engine's cancel flag (0: the
 * call ended).  ts_watch_cancel_flag is the caller's to set. */
void worker_service_set_call(WorkerService *s, guint call_id);
const int *worker_service_cancel_flag(WorkerService *s);
const ts_op_watch *worker_service_last_op(WorkerService *s);
/* Marks the end of call_id's output on stdout and stderr. */
void worker_mark_end(guint call_id);
/* The module open, NULL if none. */
ts_module *worker_service_module(WorkerService *s);
/* The device named (NULL or "": none, the CPU) in *device; FALSE with
 * *message (owned) naming it and the devices there are when there is
 * none of that name (Call's option "device", DebugStart's device). */
gboolean worker_find_device(const char *name, const ts_backend **device, char **message);
/* "argument 1 (n): ", how errors name argument i of fn (owned). */
char *worker_arg_prefix(ts_function *fn, int i);

/* ---- for the fast call channel (worker-fast.c) ---- */

/* Makes a Call (params as the method takes them) on the calling thread,
 * one at a time with the main thread's methods; its answer. */
WorkerAnswer *worker_service_fast_call(WorkerService *s, GVariant *params);
GVariant *worker_answer_value(WorkerAnswer *a);       /* (a{sv}); NULL on error */
const GError *worker_answer_error(WorkerAnswer *a);   /* NULL on success */
gboolean worker_answer_has_fds(WorkerAnswer *a);
void worker_answer_clear(WorkerAnswer *a);
void worker_answer_free(WorkerAnswer *a);
/* Keeps a's contents (emptied) for TakeFastReply call_id. */
void worker_service_defer(WorkerService *s, guint call_id, WorkerAnswer *a);
/* Signals emitted so far, on any thread. */
guint worker_service_signals_emitted(WorkerService *s);
GDBusConnection *worker_service_connection(WorkerService *s);
