/* ts-worker-optimized.c — GetOptimized from the app: the reply's bytes
 * (inline, in a memfd, or from a remote worker in chunks) decoded on a
 * thread into the graph and its origins over the app's traced graph. */
#include "ts-worker-optimized.h"

#include <gio/gunixfdlist.h>

#include "ts-worker-blob.h"
#include "ts-worker-private.h"
#include "ts-worker-protocol.h"
#include "ts-worker-tensor.h"

typedef struct {
  const ts_graph *traced;
  GBytes *graph;
  GVariant *origins;
  char *summary;
  guint32 traced_nodes;
} Reply;

static void reply_free(Reply *r)
{
  g_clear_pointer(&r->graph, g_bytes_unref);
  g_clear_pointer(&r->origins, g_variant_unref);
  g_free(r->summary);
  g_free(r);
}

void ts_worker_optimized_free(TsWorkerOptimized *o)
{
  if (!o)
    return;
  ts_worker_origins_free(o->origins);
  ts_graph_free(o->graph);
  g_free(o->pass_summary);
  g_free(o);
}

/* The graph's bytes (inline, or graph-fd and graph-size), origins, pass
 * lines and the traced graph's size out of the reply. */
static gboolean read_reply(GVariant *reply, GUnixFDList *fds, Reply *r, GError **error)
{
  if (!g_variant_is_of_type(reply, G_VARIANT_TYPE("(a{sv})"))) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "a GetOptimized reply of type %s, not (a{sv})",
                g_variant_get_type_string(reply));
    return FALSE;
  }
  g_autoptr(GVariant) dict = g_variant_get_child_value(reply, 0);
  GVariantDict d;
  g_variant_dict_init(&d, dict);
  g_autoptr(GVariant) inline_graph = g_variant_dict_lookup_value(&d, "graph", G_VARIANT_TYPE_BYTESTRING);
  gint32 index = -1;
  guint64 size = 0;
  gboolean ok = TRUE;
  if (inline_graph)
    r->graph = g_variant_get_data_as_bytes(inline_graph);
  else if (g_variant_dict_lookup(&d, "graph-fd", "h", &index) && g_variant_dict_lookup(&d, "graph-size", "t", &size) &&
           fds && size > 0 && size <= G_MAXSSIZE)
    ok = (r->graph = ts_worker_map_fd(fds, index, 0, size, "the optimized graph the worker sent", error)) != NULL;
  r->origins = g_variant_dict_lookup_value(&d, "origins", NULL);
  g_variant_dict_lookup(&d, "pass-summary", "s", &r->summary);
  g_variant_dict_lookup(&d, "traced-nodes", "u", &r->traced_nodes);
  g_variant_dict_clear(&d);
  if (ok && (!r->graph || !r->origins || !r->summary)) {
    g_set_error_literal(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                        "a GetOptimized reply without its graph, origins or pass summary");
    ok = FALSE;
  }
  return ok;
}

/* The graph decoded, checked against traced, its origins read. */
static TsWorkerOptimized *decode(Reply *r, GError **error)
{
  int places = ts_worker_origins_n_places(r->traced);
  if ((guint32)places != r->traced_nodes) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "the worker's concrete function has %u traced nodes, the one shown %d", r->traced_nodes, places);
    return NULL;
  }
  g_autoptr(TsWorkerOptimized) o = g_new0(TsWorkerOptimized, 1);
  gsize size;
  const void *bytes = g_bytes_get_data(r->graph, &size);
  if (!(o->graph = ts_graph_deserialize(bytes, size))) {
    ts_error *e = ts_error_take();
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "the optimized graph does not read: %s",
                e ? e->message : "?");
    ts_error_free(e);
    return NULL;
  }
  if (!(o->origins = ts_worker_origins_new(r->origins, o->graph, r->traced, error)))
    return NULL;
  o->pass_summary = g_steal_pointer(&r->summary);
  return g_steal_pointer(&o);
}

static void decode_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  GError *error = NULL;
  TsWorkerOptimized *o = decode(data, &error);
  if (o)
    g_task_return_pointer(task, o, (GDestroyNotify)ts_worker_optimized_free);
  else
    g_task_return_error(task, error);
}

TsWorkerOptimized *ts_worker_optimized_read(GVariant *reply, GUnixFDList *fds, const ts_graph *traced, GError **error)
{
  Reply *r = g_new0(Reply, 1);
  r->traced = traced;
  TsWorkerOptimized *o = read_reply(reply, fds, r, error) ? decode(r, error) : NULL;
  reply_free(r);
  return o;
}

#define GRAPH_MAX (2ull << 30) /* the largest optimized graph taken in chunks from a remote worker */

/* The one blob a GetOptimized reply may have: its graph, up to GRAPH_MAX. */
static gboolean graph_blob_allowed(const char *key, guint64 size, GVariant *dict, GError **error)
{
  if (g_strcmp0(key, "graph") == 0 && size <= GRAPH_MAX)
    return TRUE;
  g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
              "a GetOptimized reply with a %s of %" G_GUINT64_FORMAT " bytes to read: not one it may have", key, size);
  return FALSE;
}

static void take_reply(GTask *task, GVariant *reply, GUnixFDList *fds)
{
  GError *error = NULL;
  if (!read_reply(reply, fds, g_task_get_task_data(task), &error)) {
    g_task_return_error(task, error);
    return;
  }
  g_task_run_in_thread(task, decode_thread);
}

static void on_graph_fetched(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  g_autoptr(GVariant) dict = ts_blob_fetch_finish(res, &error);
  if (!dict) {
    g_task_return_error(task, error);
    return;
  }
  g_autoptr(GVariant) reply = g_variant_ref_sink(g_variant_new("(@a{sv})", dict));
  take_reply(task, reply, NULL);
}

static void on_reply(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GUnixFDList) fds = NULL;
  GError *error = NULL;
  g_autoptr(GVariant) reply =
    g_dbus_connection_call_with_unix_fd_list_finish(G_DBUS_CONNECTION(source), &fds, res, &error);
  if (!reply) {
    g_dbus_error_strip_remote_error(error);
    g_task_return_error(task, error);
    return;
  }
  g_autoptr(GVariant) dict = g_variant_get_child_value(reply, 0);
  if (ts_blob_dict_has_blobs(dict)) { /* a remote worker's graph of 1 MiB or more */
    ts_blob_fetch_async(G_DBUS_CONNECTION(source), dict, graph_blob_allowed, g_task_get_cancellable(task), NULL, NULL,
                        on_graph_fetched, g_object_ref(task));
    return;
  }
  take_reply(task, reply, fds);
}

void ts_worker_get_optimized_async(TsWorker *self, const char *function, const char *signature,
                                   const ts_graph *traced, GCancellable *cancellable, GAsyncReadyCallback callback,
                                   gpointer user_data)
{
  g_return_if_fail(TS_IS_WORKER(self) && function != NULL && signature != NULL && traced != NULL);
  g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, ts_worker_get_optimized_async);
  Reply *r = g_new0(Reply, 1);
  r->traced = traced;
  g_task_set_task_data(task, r, (GDestroyNotify)reply_free);
  GDBusConnection *connection = _ts_worker_get_connection(self);
  if (!connection || !ts_worker_get_alive(self)) {
    g_task_return_new_error(task, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED, "the worker is not running");
    return;
  }
  g_dbus_connection_call_with_unix_fd_list(connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, "GetOptimized",
                                           g_variant_new("(ss)", function, signature), G_VARIANT_TYPE("(a{sv})"),
                                           G_DBUS_CALL_FLAGS_NONE, G_MAXINT, NULL, cancellable, on_reply,
                                           g_object_ref(task));
}

TsWorkerOptimized *ts_worker_get_optimized_finish(TsWorker *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self), NULL);
  return g_task_propagate_pointer(G_TASK(result), error);
}
