/* fake-worker.c — stands in for tracescope-worker in test-worker-protocol:
 * speaks the protocol badly on purpose, as $FAKE_WORKER_MODE says:
 *   garbage      writes bytes that are not D-Bus on the socket and exits
 *   exit         exits at once
 *   bad-hello    answers Hello with another protocol version
 *   bad-replies  answers each Call wrongly in its own way (by call id),
 *                blobs to read in chunks among them (ReadBlob answers
 *                short), and sends malformed signals
 *   bad-channel  gives a fast call channel and answers each request on it
 *                wrongly in its own way (by call id); Calls over D-Bus
 *                as bad-replies */
#include <fcntl.h>
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ts-fast-channel.h"
#include "ts-worker-protocol.h"

static const char xml[] =
  "<node><interface name='" TS_WORKER_INTERFACE "'>"
  " <method name='Hello'><arg direction='in' type='u'/><arg direction='out' type='u'/>"
  "  <arg direction='out' type='x'/></method>"
  " <method name='Open'><arg direction='in' type='s'/><arg direction='out' type='s'/>"
  "  <arg direction='out' type='s'/><arg direction='out' type='a(sasas)'/></method>"
  " <method name='Call'><arg direction='in' type='u'/><arg direction='in' type='s'/>"
  "  <arg direction='in' type='as'/><arg direction='in' type='u'/><arg direction='in' type='b'/>"
  "  <arg direction='in' type='a{sv}'/><arg direction='out' type='a{sv}'/></method>"
  " <method name='OpenFastChannel'><arg direction='out' type='h'/><arg direction='out' type='u'/></method>"
  " <method name='ReadBlob'><arg direction='in' type='u'/><arg direction='in' type='t'/>"
  "  <arg direction='in' type='u'/><arg direction='out' type='ay'/></method>"
  " <method name='DropBlob'><arg direction='in' type='u'/></method>"
  "</interface></node>";

static GDBusConnection *connection;

static void mark_end(guint32 id)
{
  printf(TS_WORKER_MARK "%u end\n", id);
  fflush(stdout);
  fprintf(stderr, TS_WORKER_MARK "%u end\n", id);
}

static GVariant *dict(const char *first, ...)
{
  GVariantBuilder b;
  g_variant_builder_init(&b, G_VARIANT_TYPE_VARDICT);
  va_list ap;
  va_start(ap, first);
  for (const char *key = first; key; key = va_arg(ap, const char *))
    g_variant_builder_add(&b, "{sv}", key, va_arg(ap, GVariant *));
  va_end(ap);
  return g_variant_builder_end(&b);
}

static void emit(const char *name, GVariant *params)
{
  g_dbus_connection_emit_signal(connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, name, params, NULL);
}

static GVariant *shape(gint64 n)
{
  return g_variant_new_fixed_array(G_VARIANT_TYPE_INT64, &n, 1, sizeof n);
}

/* Call id k gets the k-th wrong answer. */
static void bad_call(guint32 id, GDBusMethodInvocation *inv)
{
  GVariant *text = g_variant_new_string("Tensor(?)");
  GUnixFDList *fds = NULL;
  GVariant *reply = NULL;
  switch (id) {
  case 1: reply = dict("n-calls", g_variant_new_uint32(1), NULL); break; /* no value-text */
  case 2: reply = dict("value-text", text, "dtype", g_variant_new_string("float99"), "shape", shape(1), NULL); break;
  case 3: {
    gint64 dims[40] = { 0 };
    reply = dict("value-text", text, "dtype", g_variant_new_string("f32"), "shape",
                 g_variant_new_fixed_array(G_VARIANT_TYPE_INT64, dims, 40, sizeof(gint64)), NULL);
    break;
  }
  case 4: {
    guint8 bytes[3] = { 1, 2, 3 };
    reply = dict("value-text", text, "dtype", g_variant_new_string("f32"), "shape", shape(4), "data",
                 g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, bytes, 3, 1), NULL);
    break;
  }
  case 5:
    reply = dict("value-text", text, "dtype", g_variant_new_string("f32"), "shape", shape(1 << 20),
                 "data-fd", g_variant_new_handle(5), "data-size", g_variant_new_uint64(4 << 20), NULL);
    break;
  case 6:
  case 7: {
    int fd = memfd_create("small", MFD_ALLOW_SEALING); /* sealed: its size is what is wrong */
    if (ftruncate(fd, 4096) != 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0)
      return;
    fds = g_unix_fd_list_new_from_array(&fd, 1);
    guint64 offset = id == 6 ? 0 : G_MAXUINT64 - 10;
    reply = dict("value-text", text, "dtype", g_variant_new_string("f32"), "shape", shape(1 << 20),
                 "data-fd", g_variant_new_handle(0), "data-offset", g_variant_new_uint64(offset),
                 "data-size", g_variant_new_uint64(4 << 20), NULL);
    break;
  }
  case 8: {
    gint64 dims[2] = { G_MAXINT64 / 2, 4 }; /* elements overflow */
    reply = dict("value-text", text, "dtype", g_variant_new_string("f32"), "shape",
                 g_variant_new_fixed_array(G_VARIANT_TYPE_INT64, dims, 2, sizeof(gint64)), NULL);
    break;
  }
  case 9: /* a blob far bigger than its shape says */
    reply = dict("value-text", text, "dtype", g_variant_new_string("f32"), "shape", shape(1 << 20),
                 "data-blob", g_variant_new_uint32(1), "data-size", g_variant_new_uint64(1ull << 30), NULL);
    break;
  case 10: /* a blob of a key a result has no business with */
    reply = dict("value-text", text, "secret-blob", g_variant_new_uint32(1), "secret-size",
                 g_variant_new_uint64(5 << 20), NULL);
    break;
  case 11: /* a blob the right size, whose chunks come short (ReadBlob) */
    reply = dict("value-text", text, "dtype", g_variant_new_string("f32"), "shape", shape(1 << 18),
                 "data-blob", g_variant_new_uint32(1), "data-size", g_variant_new_uint64(1 << 20), NULL);
    break;
  case 12: /* a profile over what the app takes */
    reply = dict("value-text", text, "profile-blob", g_variant_new_uint32(1), "profile-size",
                 g_variant_new_uint64(1ull << 40), NULL);
    break;
  case 13: { /* the right size, but not sealed: the worker could shrink it under the app's mapping */
    int fd = memfd_create("unsealed", 0);
    if (ftruncate(fd, 4 << 20) != 0)
      return;
    fds = g_unix_fd_list_new_from_array(&fd, 1);
    reply = dict("value-text", text, "dtype", g_variant_new_string("f32"), "shape", shape(1 << 20),
                 "data-fd", g_variant_new_handle(0), "data-size", g_variant_new_uint64(4 << 20), NULL);
    break;
  }
  default: {
    /* malformed signals first, then a good answer */
    guint8 junk[64];
    memset(junk, 0xa5, sizeof junk);
    emit("Trace", g_variant_new("(u@a{sv})", id,
                                dict("function", g_variant_new_string("f"), "signature", g_variant_new_string("()"),
                                     "reason", g_variant_new_uint32(0), "n-concrete", g_variant_new_int32(1),
                                     "graph", g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, junk, sizeof junk, 1),
                                     NULL)));
    emit("Trace", g_variant_new("(u@a{sv})", id, dict("reason", g_variant_new_uint32(999), NULL)));
    emit("Trace", g_variant_new("(s)", "not a trace"));
    emit("Progress", g_variant_new("(ud)", id, NAN));
    emit("Warning", g_variant_new("(u)", id));
    emit("NoSuchSignal", NULL);
    printf("%s", "a line without its newline, then ");
    reply = dict("value-text", g_variant_new_string("fine"), NULL);
    break;
  }
  }
  g_dbus_method_invocation_return_value_with_unix_fd_list(inv, g_variant_new_tuple(&reply, 1), fds);
  if (fds)
    g_object_unref(fds);
  mark_end(id);
}

/* ---- bad-channel: the fast call channel, answered wrongly --------------------------------- */

static TsFastHeader *channel;

/* Request k gets the k-th wrong reply (then marks, as a call has). */
static void bad_fast_reply(guint32 seq)
{
  g_autoptr(GVariant) request = ts_fast_get(channel, TS_FAST_REQUEST, TS_FAST_REQUEST_TYPE, "request", NULL);
  guint32 id = 0;
  if (request)
    g_variant_get_child(request, 0, "u", &id);
  guint8 *area = (guint8 *)channel + TS_FAST_HEADER_SIZE + TS_FAST_AREA_SIZE;
  GVariant *reply = g_variant_new("(uuuss@a{sv})", id, 0, 0, "", "", dict("value-text", g_variant_new_string("fine"), NULL));
  g_variant_ref_sink(reply);
  ts_fast_put(channel, TS_FAST_REPLY, reply);
  guint32 reply_seq = seq;
  switch (id) {
  case 1: { guint64 length = G_MAXUINT64 - 3; memcpy(area, &length, sizeof length); break; } /* bad length */
  case 2: memset(area + 8, 0xff, 16); break;      /* bytes that are not the reply's type */
  case 3: reply_seq = seq + 5; break;               /* out of sequence */
  case 4: {                                         /* another call's */
    g_variant_unref(reply);
    reply = g_variant_ref_sink(g_variant_new("(uuuss@a{sv})", id + 1, 0, 0, "", "", dict(NULL)));
    ts_fast_put(channel, TS_FAST_REPLY, reply);
    break;
  }
  case 5:                                           /* a status there is none of */
    g_variant_unref(reply);
    reply = g_variant_ref_sink(g_variant_new("(uuuss@a{sv})", id, 0, 7, "", "", dict(NULL)));
    ts_fast_put(channel, TS_FAST_REPLY, reply);
    break;
  case 6:                                           /* signals claimed, never sent */
    g_variant_unref(reply);
    reply = g_variant_ref_sink(g_variant_new("(uuuss@a{sv})", id, 1000, 0, "", "",
                                             dict("value-text", g_variant_new_string("fine"), NULL)));
    ts_fast_put(channel, TS_FAST_REPLY, reply);
    break;
  case 7: {                                         /* an error of a name nobody knows */
    g_variant_unref(reply);
    reply = g_variant_ref_sink(g_variant_new("(uuuss@a{sv})", id, 0, 1, "not a D-Bus name!", "boom", dict(NULL)));
    ts_fast_put(channel, TS_FAST_REPLY, reply);
    break;
  }
  default: break;                                   /* a good one */
  }
  g_variant_unref(reply);
  mark_end(id);
  ts_fast_post(&channel->reply_seq, &channel->app_waiting, reply_seq);
}

static gpointer channel_main(gpointer data)
{
  guint32 seen = 0;
  for (;;) {
    if (!ts_fast_wait(&channel->request_seq, &channel->worker_waiting, seen, NULL, 100))
      continue;
    seen = __atomic_load_n(&channel->request_seq, __ATOMIC_ACQUIRE);
    bad_fast_reply(seen);
  }
  return NULL;
}

static void open_channel(GDBusMethodInvocation *inv)
{
  int fd;
  channel = ts_fast_channel_create(&fd, NULL);
  g_thread_unref(g_thread_new("bad-channel", channel_main, NULL));
  GUnixFDList *fds = g_unix_fd_list_new_from_array(&fd, 1);
  g_dbus_method_invocation_return_value_with_unix_fd_list(inv, g_variant_new("(hu)", 0, TS_FAST_AREA_SIZE), fds);
  g_object_unref(fds);
}

static void method_call(GDBusConnection *c, const char *sender, const char *path, const char *iface,
                        const char *method, GVariant *params, GDBusMethodInvocation *inv, gpointer data)
{
  const char *mode = data;
  if (strcmp(method, "Hello") == 0) {
    guint32 version = strcmp(mode, "bad-hello") == 0 ? TS_WORKER_PROTOCOL_VERSION + 1 : TS_WORKER_PROTOCOL_VERSION;
    /* a worker of another version refuses the app's */
    if (version != TS_WORKER_PROTOCOL_VERSION)
      g_dbus_method_invocation_return_dbus_error(inv, TS_WORKER_ERROR_PREFIX "Protocol",
                                                 "this worker speaks protocol version 2");
    else
      g_dbus_method_invocation_return_value(inv, g_variant_new("(ux)", version, (gint64)getpid()));
  } else if (strcmp(method, "Open") == 0) {
    g_dbus_method_invocation_return_value(inv, g_variant_new_parsed("('fake', '/fake.so', [('f', ['x'], @as [])])"));
    mark_end(0);
  } else if (strcmp(method, "ReadBlob") == 0) {
    guint8 few[10] = { 0 };
    g_dbus_method_invocation_return_value(inv, g_variant_new("(@ay)", g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE,
                                                                                                 few, sizeof few, 1)));
  } else if (strcmp(method, "DropBlob") == 0) {
    g_dbus_method_invocation_return_value(inv, NULL);
  } else if (strcmp(method, "OpenFastChannel") == 0) {
    if (strcmp(mode, "bad-channel") == 0)
      open_channel(inv);
    else
      g_dbus_method_invocation_return_dbus_error(inv, "org.freedesktop.DBus.Error.UnknownMethod", "no fast calls here");
  } else {
    guint32 id;
    g_variant_get_child(params, 0, "u", &id);
    bad_call(id, inv);
  }
}

static void on_closed(GDBusConnection *c, gboolean vanished, GError *error, gpointer loop)
{
  g_main_loop_quit(loop);
}

int main(void)
{
  const char *mode = g_getenv("FAKE_WORKER_MODE");
  if (!mode || strcmp(mode, "exit") == 0)
    return 0;
  if (strcmp(mode, "garbage") == 0) {
    static const char junk[] = "\0\xff\xfeNOT D-BUS\r\n\x01\x02l\x01\x00\x01";
    if (write(TS_WORKER_FD_DBUS, junk, sizeof junk) < 0)
      return 1;
    return 0;
  }
  GError *error = NULL;
  GSocket *socket = g_socket_new_from_fd(TS_WORKER_FD_DBUS, &error);
  GSocketConnection *stream = g_socket_connection_factory_create_connection(socket);
  connection = g_dbus_connection_new_sync(G_IO_STREAM(stream), NULL,
                                          G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                            G_DBUS_CONNECTION_FLAGS_DELAY_MESSAGE_PROCESSING,
                                          NULL, NULL, &error);
  if (!connection)
    return 1;
  GDBusNodeInfo *info = g_dbus_node_info_new_for_xml(xml, NULL);
  static const GDBusInterfaceVTable vtable = { .method_call = method_call };
  g_dbus_connection_register_object(connection, TS_WORKER_PATH, info->interfaces[0], &vtable, (gpointer)mode,
                                    NULL, NULL);
  GMainLoop *loop = g_main_loop_new(NULL, FALSE);
  g_signal_connect(connection, "closed", G_CALLBACK(on_closed), loop);
  g_dbus_connection_start_message_processing(connection);
  g_main_loop_run(loop);
  g_main_loop_unref(loop);
  g_dbus_node_info_unref(info);
  g_object_unref(connection);
  g_object_unref(stream);
  g_object_unref(socket);
  return 0;
}
