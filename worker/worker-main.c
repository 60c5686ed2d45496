/* worker-main.c — tracescope-worker: loads a user module and runs it for
 * the app, in a process of its own so that whatever the module does (a
 * crash, exit(), an endless loop, memory without bound) leaves the app
 * standing.  The app starts it; see ts-worker-protocol.h for the fds. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <gio/gunixinputstream.h>
#include <gio/gunixoutputstream.h>

#include "crash-handler.h"
#include "worker-fds.h"
#include "worker-debug.h"
#include "worker-service.h"
#include "worker-status.h"
#include "worker-stdio.h"
#include "ts-worker-tensor.h"

static TsWorkerStatus *status_page;
static ts_op_watch last_op; /* the engine keeps it (ts_watch_ops) */

/* A crash: where the engine was goes on the status page (signal-safe). */
static void on_crash(void)
{
  if (status_page)
    worker_status_note_op(status_page, &last_op);
}

/* exit() from module code: the status page keeps the code, whatever
 * happens to the process's exit status after (a sanitizer's own report). */
static void on_exit_called(int code, void *data)
{
  if (status_page && status_page->call_id) {
    worker_status_note_op(status_page, &last_op);
    status_page->exited = 1;
    status_page->exit_status = code;
  }
}

static TsWorkerStatus *map_status(int fd, GError **error)
{
  void *page = mmap(NULL, sizeof(TsWorkerStatus), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (page == MAP_FAILED) {
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "cannot map the status page (fd %d): %s",
                fd, g_strerror(errno));
    return NULL;
  }
  TsWorkerStatus *st = page;
  st->magic = TS_WORKER_STATUS_MAGIC;
  st->version = TS_WORKER_PROTOCOL_VERSION;
  return st;
}

/* The address-space limit (bytes; 0 none).  Sanitizers reserve terabytes
 * of address space, so there the app watches the resident size instead. */
static void limit_memory(guint64 limit)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)limit;
#else
  if (limit == 0)
    return;
  struct rlimit rl = { .rlim_cur = (rlim_t)limit, .rlim_max = (rlim_t)limit };
  if (setrlimit(RLIMIT_AS, &rl) != 0)
    g_printerr("tracescope-worker: cannot limit memory to %" G_GUINT64_FORMAT " bytes: %s\n", limit,
               g_strerror(errno));
#endif
}

/* relayed: the socket is carried to a remote app (worker-stdio.c), which
 * neither sees this process's credentials nor can take its fds: anonymous
 * authentication over a plain stream, and results inside the messages. */
static GDBusConnection *connect_app(int fd, gboolean relayed, GError **error)
{
  if (relayed) {
    g_autoptr(GInputStream) in = g_unix_input_stream_new(fd, TRUE);
    g_autoptr(GOutputStream) out = g_unix_output_stream_new(dup(fd), TRUE);
    g_autoptr(GIOStream) stream = g_simple_io_stream_new(in, out);
    ts_worker_set_no_fds(TRUE);
    return g_dbus_connection_new_sync(stream, NULL,
                                      G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                        G_DBUS_CONNECTION_FLAGS_DELAY_MESSAGE_PROCESSING,
                                      NULL, NULL, error);
  }
  g_autoptr(GSocket) socket = g_socket_new_from_fd(fd, error);
  if (!socket)
    return NULL;
  g_autoptr(GSocketConnection) stream = g_socket_connection_factory_create_connection(socket);
  return g_dbus_connection_new_sync(G_IO_STREAM(stream), NULL,
                                    G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                      G_DBUS_CONNECTION_FLAGS_DELAY_MESSAGE_PROCESSING,
                                    NULL, NULL, error);
}

static void on_closed(GDBusConnection *connection, gboolean remote_peer_vanished, GError *error,
                      gpointer loop)
{
  g_main_loop_quit(loop);
}

int main(int argc, char **argv)
{
  gint64 memory_limit = 0;
  gboolean version = FALSE, stdio = FALSE, relayed = FALSE;
  const GOptionEntry entries[] = {
    { "memory-limit", 0, 0, G_OPTION_ARG_INT64, &memory_limit,
      "Limit the worker's address space to BYTES (0: no limit)", "BYTES" },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the protocol version and exit", NULL },
    { "stdio", 0, 0, G_OPTION_ARG_NONE, &stdio,
      "Speak to a remote app over stdin and stdout (started by ssh: tracescope --remote)", NULL },
    { "relayed", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &relayed,
      "The connection on fd 3 is relayed to a remote app (started by --stdio)", NULL },
    G_OPTION_ENTRY_NULL,
  };
  g_autoptr(GOptionContext) context = g_option_context_new("— runs Tracescope modules for the app");
  g_option_context_set_summary(context,
                               "Started by tracescope with its protocol on fd 3, the crash pipe on fd 4\n"
                               "and the status page on fd 5 (docs/worker.md); not meant to be run by hand.\n"
                               "With --stdio, started by ssh for tracescope --remote: everything over stdin and stdout.");
  g_option_context_add_main_entries(context, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(context, &argc, &argv, &error)) {
    g_printerr("tracescope-worker: %s\n", error->message);
    return 2;
  }
  if (version) {
    printf("tracescope-worker protocol %u\n", TS_WORKER_PROTOCOL_VERSION);
    return 0;
  }
  if (stdio)
    return worker_stdio_main(memory_limit);
  for (int fd = TS_WORKER_FD_DBUS; fd <= TS_WORKER_FD_STATUS; fd++)
    if (fcntl(fd, F_GETFD) < 0) {
      g_printerr("tracescope-worker: fd %d is not open: the worker is started by tracescope "
                 "(docs/worker.md), not by hand\n", fd);
      return 2;
    }
  /* a worker never outlives its app (nor a call that hangs after the app died) */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)
    return 1;
  /* before anything else opens an fd: the protocol's out of a module's reach */
  int dbus_fd, crash_fd, status_fd;
  if (!worker_fds_own(&dbus_fd, &crash_fd, &status_fd)) {
    g_printerr("tracescope-worker: cannot move its fds out of a module's reach: %s\n", g_strerror(errno));
    return 1;
  }
  /* lines reach the app as they are printed, not when a buffer fills */
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (!ts_crash_handler_install(crash_fd, &error) || !(status_page = map_status(status_fd, &error))) {
    g_printerr("tracescope-worker: %s\n", error->message);
    return 1;
  }
  close(status_fd);
  ts_crash_handler_set_hook(on_crash);
  ts_watch_ops(&last_op); /* calls run on this thread */
  on_exit(on_exit_called, NULL);
  limit_memory((guint64)MAX(memory_limit, 0));
  /* results go to the app in the memory they were made in */
  ts_cpu_share_buffers(true);

  g_autoptr(GDBusConnection) connection = connect_app(dbus_fd, relayed, &error);
  if (!connection) {
    g_printerr("tracescope-worker: cannot talk to the app: %s\n", error->message);
    return 1;
  }
  g_dbus_connection_set_exit_on_close(connection, FALSE);
  WorkerService *service = worker_service_new(connection, status_page, &last_op, &error);
  WorkerDebug *debug = service ? worker_debug_new(connection, service, &error) : NULL;
  if (!debug) {
    g_printerr("tracescope-worker: %s\n", error->message);
    return 1;
  }
  g_autoptr(GMainLoop) loop = g_main_loop_new(NULL, FALSE);
  g_signal_connect(connection, "closed", G_CALLBACK(on_closed), loop);
  g_dbus_connection_start_message_processing(connection);
  g_main_loop_run(loop);

  worker_debug_free(debug);
  worker_service_free(service);
  ts_release_all();
  munmap(status_page, sizeof *status_page);
  status_page = NULL;
  return 0;
}
