/* ts-worker-source.h — the lines around a source location, read by the
 * worker where the module is: for a remote worker the sources are on its
 * machine, not here (ReadSource, docs/worker.md). */
#pragma once

#include "ts-source-snippet.h"
#include "ts-worker.h"

G_BEGIN_DECLS

/* Line `line` of file with `context` lines either side (at most
 * TS_SOURCE_CONTEXT_MAX), looked for as ts_source_snippet_read looks,
 * under the directories of module_path there.  Fails as the read there
 * failed (G_IO_ERROR_NOT_FOUND naming where it looked), or with
 * TS_WORKER_ERROR_DIED when the worker is gone.  The reply is checked: at
 * most 2 * context + 1 lines, each at most TS_SOURCE_LINE_MAX bytes and a
 * few more, around the line asked for. */
void ts_worker_read_source_async(TsWorker *self, const char *module_path, const char *file, int line, int context,
                                 GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
TsSourceSnippet *ts_worker_read_source_finish(TsWorker *self, GAsyncResult *result, GError **error);

G_END_DECLS
