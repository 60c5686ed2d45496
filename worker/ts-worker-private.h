/* ts-worker-private.h — what the other files of the client (the debugger's
 * end, ts-worker-debug.c) need of TsWorker. */
#pragma once

#include "ts-worker.h"

/* The connection to the process; NULL before start and once it is gone. */
GDBusConnection *_ts_worker_get_connection(TsWorker *self);
