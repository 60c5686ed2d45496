/* worker-source.c — ReadSource (worker-source.h).
 *
 * ReadSource (s module path, s file, i line, i context) -> (s path, i
 * first line, as lines): ts_source_snippet_read with the directories
 * ts_source_search_dirs gives for the module's path here, context at most
 * TS_SOURCE_CONTEXT_MAX, each line at most TS_SOURCE_LINE_MAX bytes.  Its
 * errors are the GIOErrors the read gave (not found: where it looked). */
#include "worker-source.h"

#include "ts-source-snippet.h"
#include "ts-worker-protocol.h"

struct WorkerSource {
  GDBusConnection *connection;
  guint filter;
};

typedef struct {
  GDBusConnection *connection;
  GDBusMessage *call;
} Request;

static gpointer read_in_thread(gpointer data)
{
  Request *req = data;
  const char *module, *file;
  gint32 line, context;
  g_variant_get(g_dbus_message_get_body(req->call), "(&s&sii)", &module, &file, &line, &context);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDBusMessage) reply = NULL;
  if (line <= 0 || context < 0 || context > TS_SOURCE_CONTEXT_MAX || !*file) {
    g_set_error(&error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                "ReadSource of line %d of \"%s\" with %d lines either side (at most %d)", line, file, context,
                TS_SOURCE_CONTEXT_MAX);
  } else {
    g_auto(GStrv) dirs = ts_source_search_dirs(*module ? module : NULL);
    g_autoptr(TsSourceSnippet) s = ts_source_snippet_read(file, line, context, (const char *const *)dirs, NULL,
                                                          &error);
    if (s) {
      reply = g_dbus_message_new_method_reply(req->call);
      g_dbus_message_set_body(reply, g_variant_new("(si^as)", s->path, s->first_line, s->lines));
    }
  }
  if (!reply) {
    g_autofree char *name = g_dbus_error_encode_gerror(error);
    reply = g_dbus_message_new_method_error_literal(req->call, name, error->message);
  }
  g_dbus_connection_send_message(req->connection, reply, G_DBUS_SEND_MESSAGE_FLAGS_NONE, NULL, NULL);
  g_object_unref(req->call);
  g_object_unref(req->connection);
  g_free(req);
  return NULL;
}

/* On the connection's thread: each ReadSource goes to a thread of its own. */
static GDBusMessage *filter(GDBusConnection *connection, GDBusMessage *message, gboolean incoming,
                            gpointer user_data)
{
  if (!incoming || g_dbus_message_get_message_type(message) != G_DBUS_MESSAGE_TYPE_METHOD_CALL ||
      g_strcmp0(g_dbus_message_get_interface(message), TS_WORKER_INTERFACE) != 0 ||
      g_strcmp0(g_dbus_message_get_member(message), "ReadSource") != 0)
    return message;
  GVariant *body = g_dbus_message_get_body(message);
  if (!body || !g_variant_is_of_type(body, G_VARIANT_TYPE("(ssii)"))) {
    g_autoptr(GDBusMessage) reply =
      g_dbus_message_new_method_error_literal(message, "org.freedesktop.DBus.Error.InvalidArgs", "ReadSource takes (ssii)");
    g_dbus_connection_send_message(connection, reply, G_DBUS_SEND_MESSAGE_FLAGS_NONE, NULL, NULL);
    g_object_unref(message);
    return NULL;
  }
  Request *req = g_new(Request, 1);
  req->connection = g_object_ref(connection);
  req->call = message; /* taken */
  g_thread_unref(g_thread_new("read-source", read_in_thread, req));
  return NULL;
}

WorkerSource *worker_source_new(GDBusConnection *connection)
{
  WorkerSource *ws = g_new0(WorkerSource, 1);
  ws->connection = g_object_ref(connection);
  ws->filter = g_dbus_connection_add_filter(connection, filter, ws, NULL);
  return ws;
}

void worker_source_free(WorkerSource *ws)
{
  if (!ws)
    return;
  g_dbus_connection_remove_filter(ws->connection, ws->filter);
  g_object_unref(ws->connection);
  g_free(ws);
}
