/* worker-source.h — ReadSource: the lines around a source location, read
 * where the module is (a remote worker's machine), on a thread of their
 * own so that neither a call nor the connection waits for the disk. */
#pragma once

#include <gio/gio.h>

typedef struct WorkerSource WorkerSource;

WorkerSource *worker_source_new(GDBusConnection *connection);
void worker_source_free(WorkerSource *ws);
