/* fuzz-worker-requests.c — what the worker reads from the app, fed
 * anything of the right types: the methods of its D-Bus object
 * (worker-service.c, the real service on a real peer-to-peer connection,
 * with the small test module open), and the frames of a remote link
 * (ts_remote_read_frame, as both ends read them).
 *
 * The input's first byte picks the request (fuzz-worker-requests.h); for a
 * method, the rest is a serialized GVariant of its arguments' type, read
 * in normal form (GDBus delivers nothing else) and sent as a method call;
 * for frames, the rest is the link's bytes.  Every call must be answered
 * with a value or an error with a message, never a crash, a GLib critical
 * or a hang; every frame read must lie within the bounds the reader
 * promises.  A Call repeats (and compares) at most a few times here, and
 * its arguments ask for at most FUZZ_MAX_ELEMENTS elements (or for more
 * than the engine allocates): the app asks for what the user did, and
 * the worker is meant to do it, in the time and memory that takes. */
#include <gio/gio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz-common.h"
#include "fuzz-worker-requests.h"
#include "ts-remote-link.h"
#include "ts-worker-protocol.h"
#include "worker-service.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_REPEAT 3

static const struct {
  const char *method; /* NULL: not a method */
  const char *type;   /* its arguments */
} requests[FUZZ_REQ_COUNT] = {
  [FUZZ_REQ_HELLO] = { "Hello", "(u)" },
  [FUZZ_REQ_SET_INPUT_SIGNATURE] = { "SetInputSignature", "(sas)" },
  [FUZZ_REQ_CALL] = { "Call", "(usasuba{sv})" },
  [FUZZ_REQ_GET_OPTIMIZED] = { "GetOptimized", "(ss)" },
  [FUZZ_REQ_LIST_DEVICES] = { "ListDevices", "()" },
  [FUZZ_REQ_TAKE_FAST_REPLY] = { "TakeFastReply", "(u)" },
  [FUZZ_REQ_CANCEL] = { "Cancel", "(u)" },
  [FUZZ_REQ_FRAMES] = { NULL, NULL },
};

static GDBusConnection *app_side, *worker_side;
static WorkerService *service;
static TsWorkerStatus status_page;
static ts_op_watch last_op;

static gpointer connect_app_side(gpointer fd)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) socket = g_socket_new_from_fd(GPOINTER_TO_INT(fd), &error);
  g_autoptr(GSocketConnection) stream = socket ? g_socket_connection_factory_create_connection(socket) : NULL;
  g_autofree char *guid = g_dbus_generate_guid();
  GDBusConnection *c = stream ? g_dbus_connection_new_sync(G_IO_STREAM(stream), guid,
                                                           G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_SERVER,
                                                           NULL, NULL, &error)
                              : NULL;
  if (!c)
    fuzz_finding("the app's end of the connection: %s", error->message);
  return c;
}

static void on_reply(GObject *source, GAsyncResult *res, gpointer data)
{
  *(GAsyncResult **)data = g_object_ref(res);
}

/* method with params (floating, taken), answered: a value, or an error with a message. */
static void call(const char *method, GVariant *params)
{
  GAsyncResult *res = NULL;
  g_dbus_connection_call(app_side, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, method, params, NULL,
                         G_DBUS_CALL_FLAGS_NONE, -1, NULL, on_reply, &res);
  while (!res)
    g_main_context_iteration(NULL, TRUE);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish(app_side, res, &error);
  g_object_unref(res);
  if (g_getenv("FUZZ_TRACE")) {
    g_autofree char *text = reply ? g_variant_print(reply, FALSE) : NULL;
    fprintf(stderr, "%s: %.300s\n", method, reply ? text : error->message);
  }
  if (fuzz_criticals > 0)
    fuzz_finding("%s: a GLib critical", method);
  if (!reply && (!error || !error->message[0]))
    fuzz_finding("%s: no answer and no error with a message", method);
}

static void on_signal(GDBusConnection *c, const char *sender, const char *path, const char *interface,
                      const char *name, GVariant *params, gpointer data)
{
  g_autofree char *text = g_variant_print(params, FALSE);
  const char *signature = NULL; /* a Trace's, for seeds of GetOptimized */
  if (g_variant_is_of_type(params, G_VARIANT_TYPE("(ua{sv})"))) {
    g_autoptr(GVariant) trace = g_variant_get_child_value(params, 1);
    g_variant_lookup(trace, "signature", "&s", &signature);
  }
  fprintf(stderr, "signal %s: %.300s%s%s\n", name, text, signature ? " signature " : "", signature ? signature : "");
}

static void setup(void)
{
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    fuzz_finding("socketpair failed");
  GThread *t = g_thread_new("app-side", connect_app_side, GINT_TO_POINTER(sv[0]));
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) socket = g_socket_new_from_fd(sv[1], &error);
  g_autoptr(GSocketConnection) stream = g_socket_connection_factory_create_connection(socket);
  worker_side = g_dbus_connection_new_sync(G_IO_STREAM(stream), NULL,
                                           G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                             G_DBUS_CONNECTION_FLAGS_DELAY_MESSAGE_PROCESSING,
                                           NULL, NULL, &error);
  app_side = g_thread_join(t);
  if (!worker_side)
    fuzz_finding("the worker's end of the connection: %s", error->message);
  g_dbus_connection_set_exit_on_close(worker_side, FALSE);
  g_dbus_connection_set_exit_on_close(app_side, FALSE);
  ts_watch_ops(&last_op);
  ts_cpu_share_buffers(true);
  if (!(service = worker_service_new(worker_side, &status_page, &last_op, &error)))
    fuzz_finding("the worker's service: %s", error->message);
  g_dbus_connection_start_message_processing(worker_side);
  if (g_getenv("FUZZ_TRACE"))
    g_dbus_connection_signal_subscribe(app_side, NULL, TS_WORKER_INTERFACE, NULL, TS_WORKER_PATH, NULL,
                                       G_DBUS_SIGNAL_FLAGS_NONE, on_signal, NULL, NULL);
  call("Open", g_variant_new("(s)", FUZZ_WORKER_MODULE));
  if (!worker_service_module(service))
    fuzz_finding("the test module did not open: %s", FUZZ_WORKER_MODULE);
}

/* The link's bytes, frame after frame, as both ends read them. */
static void read_frames(const uint8_t *data, size_t size)
{
  int fd = memfd_create("fuzz-frames", MFD_CLOEXEC);
  if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || lseek(fd, 0, SEEK_SET) != 0)
    fuzz_finding("cannot put the frames in a memfd");
  static char buf[TS_REMOTE_FRAME_MAX];
  TsRemoteFrame f;
  size_t consumed = 0;
  while (ts_remote_read_frame(fd, &f, buf)) {
    if (f.length > TS_REMOTE_FRAME_MAX)
      fuzz_finding("a frame of %u bytes was read", f.length);
    consumed += sizeof f + f.length;
    if (consumed > size)
      fuzz_finding("frames of %zu bytes read from %zu", consumed, size);
  }
  close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_begin_input();
  if (!service)
    setup();
  if (size == 0)
    return 0;
  FuzzRequest r = data[0] % FUZZ_REQ_COUNT;
  if (!requests[r].method) {
    read_frames(data + 1, size - 1);
    return 0;
  }
  g_autoptr(GBytes) bytes = g_bytes_new(data + 1, size - 1);
  g_autoptr(GVariant) raw = g_variant_ref_sink(
    g_variant_new_from_bytes(G_VARIANT_TYPE(requests[r].type), bytes, FALSE));
  g_autoptr(GVariant) params = g_variant_get_normal_form(raw);
  if (r == FUZZ_REQ_CALL) {
    /* the repeat count bounded, the rest as it came */
    guint32 call_id, repeat;
    const char *function;
    g_autofree const char **args = NULL;
    gboolean eager;
    g_autoptr(GVariant) options = NULL;
    g_variant_get(params, "(u&s^a&sub@a{sv})", &call_id, &function, &args, &repeat, &eager, &options);
    for (guint i = 0; args[i]; i++)
      if (fuzz_spec_too_big(args[i]))
        return 0;
    guint32 compare = 0;
    if (g_variant_lookup(options, "compare", "u", &compare) && compare > MAX_REPEAT)
      return 0;
    GVariant *bounded = g_variant_new("(us^asub@a{sv})", call_id, function, args, MIN(repeat, MAX_REPEAT), eager,
                                      options);
    call(requests[r].method, bounded);
  } else {
    call(requests[r].method, g_variant_new_from_data(G_VARIANT_TYPE(requests[r].type),
                                                     g_variant_get_data(params), g_variant_get_size(params), TRUE,
                                                     (GDestroyNotify)g_variant_unref, g_variant_ref(params)));
  }
  return 0;
}
