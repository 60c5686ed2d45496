/* worker-debug.h — the worker's debugger interface (TS_WORKER_DEBUG_INTERFACE). */
#pragma once

#include "worker-service.h"

typedef struct WorkerDebug WorkerDebug;

/* Registers the debugger interface beside the service's on connection. */
WorkerDebug *worker_debug_new(GDBusConnection *connection, WorkerService *service, GError **error);
/* Ends a debug call still running (cancelled) and unregisters. */
void worker_debug_free(WorkerDebug *d);
