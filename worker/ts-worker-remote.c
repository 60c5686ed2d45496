/* ts-worker-remote.c — the app's end of a remote worker (ts-worker-remote.h). */
#include "ts-worker-remote.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixinputstream.h>
#include <gio/gunixoutputstream.h>
#include <glib-unix.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ts-remote-link.h"
#include "ts-worker-error.h"
#include "ts-worker-protocol.h"

#define BANNER_MAX 256           /* a first line longer than this is not ours */
#define SSH_ERR_MAX (64u << 10)  /* ssh's stderr is kept up to this */

enum { LOCAL_STDOUT, LOCAL_STDERR, LOCAL_CRASH, N_LOCAL };

struct TsRemoteLink {
  char *host;                /* "user@host" as given, without the port */
  GSubprocess *process;      /* ssh */
  int ssh_in, ssh_out;       /* our ends of its stdin and stdout (sockets: no SIGPIPE) */
  int local_read[N_LOCAL];   /* handed to the caller */
  int local_write[N_LOCAL];  /* the in-thread writes the frames' bytes here */
  int dbus_app, dbus_link;   /* a socket pair: GDBus speaks on the first, the threads carry the second */
  GIOStream *stream;
  int status_fd;
  GMutex write_lock;         /* ssh_in: the out-thread's frames and kill */
  int kill_asked;            /* a kill frame to send (atomic): by whoever holds write_lock first */
  GThread *in_thread, *out_thread;
  GMainContext *context;
  TsRemoteReady ready;
  TsRemoteEnded ended;
  gpointer data;
  char *banner_error;        /* set by the in-thread before ready */
  gboolean exited;           /* the EXIT frame came (in-thread, read after ended) */
  int wait_status;
  GString *ssh_err;          /* ssh's stderr (main context) */
  guint err_watch;
  int err_fd;
};

static gboolean send_all(int fd, const void *data, gsize len)
{
  for (gsize done = 0; done < len;) {
    ssize_t n = send(fd, (const char *)data + done, len - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return FALSE;
    done += (gsize)n;
  }
  return TRUE;
}

/* With write_lock held. */
static gboolean send_frame_locked(TsRemoteLink *link, TsRemoteChannel channel, const void *data, gsize len)
{
  TsRemoteFrame f = { .channel = channel, .length = (uint32_t)len };
  return send_all(link->ssh_in, &f, sizeof f) && (len == 0 || send_all(link->ssh_in, data, len));
}

/* The kill frame, if one was asked for and nobody sent it yet (write_lock held). */
static gboolean send_kill_locked(TsRemoteLink *link)
{
  if (!g_atomic_int_compare_and_exchange(&link->kill_asked, 1, 0))
    return TRUE;
  return send_frame_locked(link, TS_REMOTE_KILL, NULL, 0);
}

/* The out-thread's frames: a kill asked for meanwhile goes right after. */
static gboolean send_frame(TsRemoteLink *link, TsRemoteChannel channel, const void *data, gsize len)
{
  g_mutex_lock(&link->write_lock);
  gboolean ok = send_frame_locked(link, channel, data, len) && send_kill_locked(link);
  g_mutex_unlock(&link->write_lock);
  return ok;
}

/* ---- main context ------------------------------------------------------------ */

static gboolean on_ready(gpointer data)
{
  TsRemoteLink *link = data;
  g_autoptr(GError) error = NULL;
  if (link->banner_error)
    error = g_error_new_literal(TS_WORKER_ERROR, TS_WORKER_ERROR_SPAWN, link->banner_error);
  link->ready(link->data, error);
  return G_SOURCE_REMOVE;
}

static gboolean on_ended(gpointer data)
{
  TsRemoteLink *link = data;
  link->ended(link->data);
  return G_SOURCE_REMOVE;
}

static void post(TsRemoteLink *link, GSourceFunc func)
{
  GSource *idle = g_idle_source_new();
  g_source_set_priority(idle, G_PRIORITY_DEFAULT);
  g_source_set_callback(idle, func, link, NULL);
  g_source_attach(idle, link->context);
  g_source_unref(idle);
}

/* A chunk of ssh's own messages (why it could not connect, or lost the
 * connection): the bytes read, 0 at the end, -1 when none are there now. */
static ssize_t read_ssh_err(TsRemoteLink *link)
{
  char buf[4096];
  ssize_t n = read(link->err_fd, buf, sizeof buf);
  if (n < 0)
    return errno == EINTR || errno == EAGAIN ? -1 : 0;
  if (link->ssh_err->len < SSH_ERR_MAX)
    g_string_append_len(link->ssh_err, buf, MIN((gsize)n, SSH_ERR_MAX - link->ssh_err->len));
  return n;
}

static gboolean on_ssh_err(int fd, GIOCondition condition, gpointer data)
{
  TsRemoteLink *link = data;
  if (read_ssh_err(link) != 0)
    return G_SOURCE_CONTINUE;
  link->err_watch = 0;
  return G_SOURCE_REMOVE;
}

/* ---- the threads ------------------------------------------------------------- */

/* The first line: the banner and its protocol version, else why not. */
static char *read_banner(TsRemoteLink *link)
{
  char line[BANNER_MAX + 1];
  gsize n = 0;
  while (n < BANNER_MAX) {
    ssize_t r = read(link->ssh_out, line + n, 1);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return g_strdup(""); /* ssh ended: its status and stderr say why (describe_failure) */
    if (line[n] == '\n')
      break;
    n++;
  }
  line[n] = '\0';
  g_autofree char *shown = g_utf8_make_valid(line, (gssize)n);
  if (!g_str_has_prefix(line, TS_REMOTE_BANNER))
    return g_strdup_printf("%s did not answer as a tracescope-worker: its first line was \"%s\"", link->host,
                           shown);
  char *end;
  unsigned long version = strtoul(line + strlen(TS_REMOTE_BANNER), &end, 10);
  if (*end || version != TS_WORKER_PROTOCOL_VERSION)
    return g_strdup_printf("the tracescope-worker on %s speaks protocol version %s, this tracescope version %u: "
                           "install the same Tracescope release on both machines", link->host,
                           line + strlen(TS_REMOTE_BANNER), TS_WORKER_PROTOCOL_VERSION);
  return NULL;
}

/* ssh's stdout: the banner, then each frame's bytes into its local fd
 * (blocking: a reader that falls behind holds the link, as a full pipe
 * holds a local worker), until the worker's last frame or the link's end. */
static gpointer in_thread_main(gpointer data)
{
  TsRemoteLink *link = data;
  link->banner_error = read_banner(link);
  post(link, on_ready);
  gboolean ok = link->banner_error == NULL;
  g_autofree char *buf = g_malloc(TS_REMOTE_FRAME_MAX);
  TsRemoteFrame f;
  while (ok && ts_remote_read_frame(link->ssh_out, &f, buf)) {
    switch (f.channel) {
    case TS_REMOTE_DBUS:
      ok = send_all(link->dbus_link, buf, f.length);
      break;
    case TS_REMOTE_STDOUT:
    case TS_REMOTE_STDERR:
    case TS_REMOTE_CRASH: {
      int fd = link->local_write[f.channel - TS_REMOTE_STDOUT];
      ok = fd >= 0 && send_all(fd, buf, f.length);
      break;
    }
    case TS_REMOTE_STATUS:
      if (f.length == sizeof(TsWorkerStatus))
        ok = pwrite(link->status_fd, buf, f.length, 0) == (ssize_t)f.length;
      break;
    case TS_REMOTE_EXIT:
      if (f.length == sizeof(gint32)) {
        gint32 ws;
        memcpy(&ws, buf, sizeof ws);
        link->wait_status = ws;
        link->exited = TRUE;
      }
      ok = FALSE; /* the last frame */
      break;
    default:
      ok = FALSE; /* not ours: the link cannot be trusted */
    }
  }
  /* everything sent is in the local fds: their readers see their ends */
  for (int i = 0; i < N_LOCAL; i++)
    shutdown(link->local_write[i], SHUT_WR);
  shutdown(link->dbus_link, SHUT_WR);
  post(link, on_ended);
  return NULL;
}

static gpointer out_thread_main(gpointer data)
{
  TsRemoteLink *link = data;
  char buf[65536];
  for (;;) {
    ssize_t n = read(link->dbus_link, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0 || !send_frame(link, TS_REMOTE_DBUS, buf, (gsize)n))
      break;
  }
  send_frame(link, TS_REMOTE_DBUS, NULL, 0); /* the app closed the connection: the worker's ends too */
  return NULL;
}

/* ---- starting ------------------------------------------------------------------ */

static const char *env_or(const char *name, const char *fallback)
{
  const char *v = g_getenv(name);
  return v && *v ? v : fallback;
}

/* "[user@]host[:port]" into the ssh destination and port (NULL: ssh's own). */
static gboolean parse_target(const char *target, char **host, char **port, GError **error)
{
  const char *colon = strrchr(target, ':');
  const char *at = strrchr(target, '@');
  if (colon && (!at || colon > at) && !strchr(colon + 1, ']')) {
    char *end;
    unsigned long p = strtoul(colon + 1, &end, 10);
    if (*end || p == 0 || p > 65535 || end == colon + 1) {
      g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_SPAWN,
                  "the remote %s: the port after ':' must be a number from 1 to 65535", target);
      return FALSE;
    }
    *host = g_strndup(target, (gsize)(colon - target));
    *port = g_strdup(colon + 1);
  } else {
    *host = g_strdup(target);
    *port = NULL;
  }
  if (!**host || **host == '-' || strpbrk(*host, " \t\n")) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_SPAWN,
                "the remote \"%s\" is not [user@]host[:port]", target);
    g_clear_pointer(host, g_free);
    g_clear_pointer(port, g_free);
    return FALSE;
  }
  return TRUE;
}

static gboolean make_pair(int sv[2], GError **error)
{
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0)
    return TRUE;
  g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_SPAWN, "socketpair: %s", g_strerror(errno));
  return FALSE;
}

TsRemoteLink *ts_remote_link_start(const char *target, guint64 memory_limit, int status_fd,
                                   GSubprocessLauncher *launcher, TsRemoteReady ready, TsRemoteEnded ended,
                                   gpointer data, GError **error)
{
  g_autofree char *host = NULL, *port = NULL;
  if (!parse_target(target, &host, &port, error))
    return NULL;
  TsRemoteLink *link = g_new0(TsRemoteLink, 1);
  link->host = g_steal_pointer(&host);
  link->ssh_in = link->ssh_out = link->dbus_app = link->dbus_link = link->err_fd = -1;
  for (int i = 0; i < N_LOCAL; i++)
    link->local_read[i] = link->local_write[i] = -1;
  link->status_fd = status_fd;
  link->ready = ready;
  link->ended = ended;
  link->data = data;
  link->ssh_err = g_string_new(NULL);
  g_mutex_init(&link->write_lock);
  link->context = g_main_context_ref_thread_default();

  int in[2], out[2], dbus[2];
  for (int i = 0; i < N_LOCAL; i++) {
    int sv[2];
    if (!make_pair(sv, error)) {
      ts_remote_link_free(link);
      return NULL;
    }
    link->local_read[i] = sv[0];
    link->local_write[i] = sv[1];
    shutdown(sv[0], SHUT_WR);
  }
  if (!make_pair(in, error) || !make_pair(out, error) || !make_pair(dbus, error)) {
    ts_remote_link_free(link);
    return NULL;
  }
  link->ssh_in = in[0];
  link->ssh_out = out[0];
  link->dbus_app = dbus[0];
  link->dbus_link = dbus[1];
  g_subprocess_launcher_take_stdin_fd(launcher, in[1]);
  g_subprocess_launcher_take_stdout_fd(launcher, out[1]);
  g_subprocess_launcher_set_flags(launcher, G_SUBPROCESS_FLAGS_STDERR_PIPE);

  /* the remote command is one string for the remote shell */
  g_autofree char *limit = g_strdup_printf("--memory-limit=%" G_GUINT64_FORMAT, memory_limit);
  g_autofree char *worker = g_shell_quote(env_or("TRACESCOPE_REMOTE_WORKER", "tracescope-worker"));
  g_autofree char *command = g_strdup_printf("%s --stdio %s", worker, limit);
  g_autoptr(GPtrArray) argv = g_ptr_array_new();
  g_ptr_array_add(argv, (char *)env_or("TRACESCOPE_SSH", "ssh"));
  g_ptr_array_add(argv, "-o");
  g_ptr_array_add(argv, "BatchMode=yes"); /* no password or passphrase prompt: a clear error instead */
  if (g_getenv("TRACESCOPE_SSH_CONFIG")) {
    g_ptr_array_add(argv, "-F");
    g_ptr_array_add(argv, (char *)g_getenv("TRACESCOPE_SSH_CONFIG"));
  }
  if (port) {
    g_ptr_array_add(argv, "-p");
    g_ptr_array_add(argv, port);
  }
  g_ptr_array_add(argv, "--");
  g_ptr_array_add(argv, link->host);
  g_ptr_array_add(argv, command);
  g_ptr_array_add(argv, NULL);
  link->process = g_subprocess_launcher_spawnv(launcher, (const char *const *)argv->pdata, error);
  if (!link->process) {
    g_prefix_error(error, "cannot start ssh (%s): ", (const char *)argv->pdata[0]);
    ts_remote_link_free(link);
    return NULL;
  }
  GInputStream *err = g_subprocess_get_stderr_pipe(link->process);
  link->err_fd = g_unix_input_stream_get_fd(G_UNIX_INPUT_STREAM(err));
  fcntl(link->err_fd, F_SETFL, fcntl(link->err_fd, F_GETFL) | O_NONBLOCK);
  link->err_watch = g_unix_fd_add(link->err_fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_ssh_err, link);

  /* closing the connection closes both: the out-thread sees the end */
  g_autoptr(GInputStream) dbus_in = g_unix_input_stream_new(link->dbus_app, TRUE);
  g_autoptr(GOutputStream) dbus_out = g_unix_output_stream_new(dup(link->dbus_app), TRUE);
  link->dbus_app = -1;
  link->stream = g_simple_io_stream_new(dbus_in, dbus_out);
  link->in_thread = g_thread_new("remote-in", in_thread_main, link);
  link->out_thread = g_thread_new("remote-out", out_thread_main, link);
  return link;
}

GSubprocess *ts_remote_link_get_process(TsRemoteLink *link)
{
  return link->process;
}

int ts_remote_link_steal_fd(TsRemoteLink *link, int which)
{
  g_return_val_if_fail(which >= 0 && which < N_LOCAL, -1);
  int fd = link->local_read[which];
  link->local_read[which] = -1;
  return fd;
}

GIOStream *ts_remote_link_get_stream(TsRemoteLink *link)
{
  return link->stream;
}

gboolean ts_remote_link_get_exit(TsRemoteLink *link, int *wait_status)
{
  *wait_status = link->wait_status;
  return link->exited;
}

const char *ts_remote_link_get_host(TsRemoteLink *link)
{
  return link->host;
}

void ts_remote_link_kill(TsRemoteLink *link)
{
  g_atomic_int_set(&link->kill_asked, 1);
  /* never waits on a slow link: if the out-thread is sending, it sends the
   * kill once its frame is out */
  if (!g_mutex_trylock(&link->write_lock))
    return;
  gboolean ok = send_kill_locked(link);
  g_mutex_unlock(&link->write_lock);
  if (!ok)
    g_subprocess_force_exit(link->process); /* the link is gone: ssh goes */
}

/* ssh's last line that says something (it may warn before it fails). */
static char *ssh_said(TsRemoteLink *link)
{
  g_auto(GStrv) lines = g_strsplit(link->ssh_err->str, "\n", -1);
  for (int i = (int)g_strv_length(lines) - 1; i >= 0; i--) {
    g_strstrip(lines[i]);
    if (*lines[i])
      return g_utf8_make_valid(lines[i], -1);
  }
  return NULL;
}

char *ts_remote_link_describe_failure(TsRemoteLink *link, int ssh_status)
{
  /* whatever is still in ssh's stderr pipe: it has ended */
  if (link->err_watch)
    while (read_ssh_err(link) > 0)
      ;
  g_autofree char *said = ssh_said(link);
  const char *err = link->ssh_err->str;
  const char *h = link->host;
  if (WIFSIGNALED(ssh_status))
    return g_strdup_printf("connection lost: ssh to %s was ended by SIG%s", h, sigabbrev_np(WTERMSIG(ssh_status)));
  int code = WIFEXITED(ssh_status) ? WEXITSTATUS(ssh_status) : -1;
  if (code == 127 || strstr(err, "command not found") || strstr(err, "No such file or directory"))
    return g_strdup_printf("%s has no tracescope-worker on its PATH (%s): install Tracescope there "
                           "(meson install, or your distribution's tracescope package), or name the "
                           "worker's path with TRACESCOPE_REMOTE_WORKER",
                           h, said ? said : "the remote shell could not run it");
  if (strstr(err, "Host key verification failed"))
    return g_strdup_printf("cannot connect to %s: its host key is not in your known_hosts (%s): run ssh %s "
                           "once in a terminal to check and accept it", h, said, h);
  if (strstr(err, "Permission denied"))
    return g_strdup_printf("cannot log in to %s without a password (%s): add your key there with ssh-copy-id %s, "
                           "or load it with ssh-add, then try again", h, said, h);
  if (code == 255)
    return g_strdup_printf("connection lost: ssh to %s failed (%s)", h, said ? said : "status 255");
  if (said)
    return g_strdup_printf("connection lost: ssh to %s ended with status %d (%s)", h, code, said);
  return g_strdup_printf("connection lost: ssh to %s ended with status %d", h, code);
}

void ts_remote_link_free(TsRemoteLink *link)
{
  if (!link)
    return;
  if (link->process && !g_subprocess_get_if_exited(link->process) &&
      !g_subprocess_get_if_signaled(link->process))
    g_subprocess_force_exit(link->process);
  /* the in-thread ends at ssh's end; the out-thread at the pair's */
  if (link->dbus_link >= 0)
    shutdown(link->dbus_link, SHUT_RDWR);
  if (link->in_thread)
    g_thread_join(link->in_thread);
  if (link->out_thread)
    g_thread_join(link->out_thread);
  g_clear_handle_id(&link->err_watch, g_source_remove);
  g_clear_object(&link->stream);
  int fds[] = { link->ssh_in, link->ssh_out, link->dbus_app, link->dbus_link };
  for (guint i = 0; i < G_N_ELEMENTS(fds); i++)
    if (fds[i] >= 0)
      close(fds[i]);
  for (int i = 0; i < N_LOCAL; i++) {
    if (link->local_read[i] >= 0)
      close(link->local_read[i]);
    if (link->local_write[i] >= 0)
      close(link->local_write[i]);
  }
  if (link->status_fd >= 0)
    close(link->status_fd);
  g_clear_object(&link->process);
  g_string_free(link->ssh_err, TRUE);
  g_free(link->banner_error);
  g_free(link->host);
  g_main_context_unref(link->context);
  g_mutex_clear(&link->write_lock);
  g_free(link);
}
