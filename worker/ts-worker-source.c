/* ts-worker-source.c — ReadSource, the app's end (ts-worker-source.h). */
#include "ts-worker-source.h"

#include <string.h>

#include "ts-worker-private.h"
#include "ts-worker-protocol.h"

typedef struct {
  int line, context;
} Request;

/* The snippet the worker sent, if it is one: its lines around the line
 * asked for, no more of them and no longer than it may send. */
static TsSourceSnippet *check_reply(GVariant *reply, const Request *req, GError **error)
{
  const char *path;
  gint32 first;
  g_autofree const char **lines = NULL;
  g_variant_get(reply, "(&si^a&s)", &path, &first, &lines);
  guint n = g_strv_length((char **)lines);
  gboolean ok = first >= MAX(1, req->line - req->context) && first <= req->line &&
                (gint64)first + n > req->line && n <= (guint)(2 * req->context + 1);
  for (guint i = 0; ok && i < n; i++)
    ok = strlen(lines[i]) <= TS_SOURCE_LINE_MAX + 8; /* its " …" */
  if (!ok) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "the worker sent %u lines from line %d for line %d with %d either side", n, first, req->line,
                req->context);
    return NULL;
  }
  TsSourceSnippet *s = g_new0(TsSourceSnippet, 1);
  s->path = g_strdup(path);
  s->first_line = first;
  s->line = req->line;
  s->lines = g_strdupv((char **)lines);
  return s;
}

static void on_reply(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &error);
  TsSourceSnippet *s = reply ? check_reply(reply, g_task_get_task_data(task), &error) : NULL;
  if (!s) {
    g_dbus_error_strip_remote_error(error);
    g_task_return_error(task, error);
    return;
  }
  g_task_return_pointer(task, s, (GDestroyNotify)ts_source_snippet_free);
}

void ts_worker_read_source_async(TsWorker *self, const char *module_path, const char *file, int line, int context,
                                 GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail(TS_IS_WORKER(self) && file != NULL && line > 0 && context >= 0);
  g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, ts_worker_read_source_async);
  Request *req = g_new(Request, 1);
  *req = (Request){ line, MIN(context, TS_SOURCE_CONTEXT_MAX) };
  g_task_set_task_data(task, req, g_free);
  GDBusConnection *connection = _ts_worker_get_connection(self);
  if (!connection || !ts_worker_get_alive(self)) {
    g_task_return_new_error(task, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED, "the worker is not running");
    return;
  }
  g_dbus_connection_call(connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, "ReadSource",
                         g_variant_new("(ssii)", module_path ? module_path : "", file, line, req->context),
                         G_VARIANT_TYPE("(sias)"), G_DBUS_CALL_FLAGS_NONE, -1, cancellable, on_reply,
                         g_object_ref(task));
}

TsSourceSnippet *ts_worker_read_source_finish(TsWorker *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self), NULL);
  return g_task_propagate_pointer(G_TASK(result), error);
}
