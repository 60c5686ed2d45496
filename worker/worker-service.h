/* worker-service.h — the object tracescope-worker serves on its connection. */
#pragma once

#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <tracescope.h>

#include "ts-worker-protocol.h"

typedef struct WorkerService WorkerService;

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
