/* ts-trace-import.h — a Chrome trace read for the window in a process of
 * its own (tracescope-import): the app's memory and life do not depend on
 * what the file holds; progress comes as it reads, and cancelling ends
 * the process.  The session comes back serialized and is read on a
 * thread (tsp_session_deserialize). */
#pragma once

#include <gio/gio.h>
#include <tracescope-profiler.h>

G_BEGIN_DECLS

/* On the main context, with the fraction of the file read. */
typedef void (*TsTraceImportProgress)(double fraction, gpointer user_data);

/* Reads path under limits; callback gets the result on the calling
 * thread's main context.  progress may be NULL. */
void ts_trace_import_async(const char *path, const tsp_read_limits *limits, GCancellable *cancellable,
                           TsTraceImportProgress progress, gpointer progress_data,
                           GAsyncReadyCallback callback, gpointer user_data);
/* The session (owned), or NULL + an error naming the file: the importer's
 * own (a limit, bad JSON), its death ("… ended: killed by signal 11"), or
 * G_IO_ERROR_CANCELLED. */
tsp_session *ts_trace_import_finish(GAsyncResult *result, GError **error);

G_END_DECLS
