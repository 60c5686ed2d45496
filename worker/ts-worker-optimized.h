/* ts-worker-optimized.h — the app's end of GetOptimized: the graph a
 * concrete function runs after the optimizer's passes, asked for when the
 * user wants to see it (it holds the weights once more, so traces do not
 * carry it) and decoded on a thread.  docs/worker.md has the method. */
#pragma once

#include <gio/gunixfdlist.h>

#include "ts-worker-origins.h"
#include "ts-worker.h"

G_BEGIN_DECLS

typedef struct {
  ts_graph *graph;          /* the graph after the passes (owned) */
  TsWorkerOrigins *origins; /* what each of its nodes stands for in the traced graph */
  char *pass_summary;       /* one line per pass: "fuse: fused 3 nodes into 1 kernels\n" */
} TsWorkerOptimized;

void ts_worker_optimized_free(TsWorkerOptimized *o);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TsWorkerOptimized, ts_worker_optimized_free)

/* Asks the worker for the optimized graph of function's concrete function
 * with that signature ("(x: f32[2])"), read over traced: the app's copy of
 * its traced graph, which must outlive the call.  Fails with the engine's
 * NotFound when the worker has no such concrete function (another worker
 * traced it), TS_WORKER_ERROR_PROTOCOL when the reply does not fit traced. */
void ts_worker_get_optimized_async(TsWorker *self, const char *function, const char *signature,
                                   const ts_graph *traced, GCancellable *cancellable, GAsyncReadyCallback callback,
                                   gpointer user_data);
TsWorkerOptimized *ts_worker_get_optimized_finish(TsWorker *self, GAsyncResult *result, GError **error);

/* A GetOptimized reply ("(a{sv})") read here, over traced: what
 * ts_worker_get_optimized_finish gives, or NULL + TS_WORKER_ERROR_PROTOCOL. */
TsWorkerOptimized *ts_worker_optimized_read(GVariant *reply, GUnixFDList *fds, const ts_graph *traced,
                                            GError **error);

G_END_DECLS
