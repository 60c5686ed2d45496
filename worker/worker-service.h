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
