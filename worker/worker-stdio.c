/* worker-stdio.c — `tracescope-worker --stdio`: the far end of a remote
 * worker (ts-remote-link.h).  ssh starts it with the link on its stdin
 * and stdout; it moves them out of reach, writes the banner, forks the
 * real worker with the local fd layout (stdout and stderr pipes, the
 * D-Bus socket, the crash pipe, the status page) and then carries each of
 * those as frames over the link, both ways (the status page when it
 * changed), until the worker has died: then
 * what its pipes still hold, its status page and its wait status go last,
 * and it exits.  The end of the link (ssh gone) kills the worker.  It runs
 * no module code itself, so nothing can write on the link but it. */
#include "worker-stdio.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ts-remote-link.h"
#include "ts-worker-protocol.h"
#include "worker-fds.h"

#define DRAIN_MAX (1u << 20) /* at the death, at most this much more from each pipe */
#define STATUS_MS 50         /* the status page is looked at this often, and sent when it changed */

enum { SRC_LINK, SRC_DBUS, SRC_STDOUT, SRC_STDERR, SRC_CRASH, SRC_CHILD, N_SRC };

typedef struct {
  int link_in, link_out;
  int fd[N_SRC];        /* -1 once at its end */
  int status_fd;
  TsWorkerStatus sent;  /* the status page as last sent */
  pid_t child;
} Relay;

static const TsRemoteChannel channel_of[N_SRC] = {
  [SRC_DBUS] = TS_REMOTE_DBUS, [SRC_STDOUT] = TS_REMOTE_STDOUT,
  [SRC_STDERR] = TS_REMOTE_STDERR, [SRC_CRASH] = TS_REMOTE_CRASH,
};

/* The worker: fds 0 (/dev/null), 1, 2, 3, 4, 5 as the app would give
 * them, in a process group of its own, started as `--relayed`. */
static pid_t start_worker(int out, int err, int dbus, int crash, int status, gint64 memory_limit)
{
  pid_t pid = fork();
  if (pid != 0)
    return pid;
  setpgid(0, 0);
  int null = open("/dev/null", O_RDONLY);
  int from[] = { null, out, err, dbus, crash, status };
  int high[G_N_ELEMENTS(from)];
  for (guint i = 0; i < G_N_ELEMENTS(from); i++) /* above 5 first: a source may sit on a target */
    high[i] = fcntl(from[i], F_DUPFD, 16);
  for (guint i = 0; i < G_N_ELEMENTS(from); i++)
    if (high[i] < 0 || dup2(high[i], (int)i) < 0)
      _exit(127);
  char limit[64];
  snprintf(limit, sizeof limit, "--memory-limit=%" G_GINT64_FORMAT, memory_limit);
  execl("/proc/self/exe", "tracescope-worker", "--relayed", limit, (char *)NULL);
  _exit(127);
}

/* Bytes the worker wrote on a source, as a frame; FALSE at its end. */
static gboolean forward(Relay *r, int src, gsize max)
{
  static char buf[65536];
  gsize total = 0;
  do {
    /* the socket stays blocking for the writes take_frame makes */
    ssize_t n = src == SRC_DBUS ? recv(r->fd[src], buf, sizeof buf, MSG_DONTWAIT) : read(r->fd[src], buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN)
      return TRUE;
    if (n <= 0)
      return FALSE;
    if (!ts_remote_write_frame(r->link_out, channel_of[src], buf, (gsize)n))
      exit(1); /* the link is gone: nobody to tell */
    total += (gsize)n;
  } while (max && total < max);
  return TRUE;
}

/* A frame from the app; FALSE at the link's end. */
static gboolean take_frame(Relay *r)
{
  static char data[TS_REMOTE_FRAME_MAX];
  TsRemoteFrame f;
  if (!ts_remote_read_frame(r->link_in, &f, data))
    return FALSE;
  if (f.channel == TS_REMOTE_KILL)
    kill(-r->child, SIGKILL);
  else if (f.channel == TS_REMOTE_DBUS && f.length == 0 && r->fd[SRC_DBUS] >= 0)
    shutdown(r->fd[SRC_DBUS], SHUT_WR); /* the app closed its connection: the worker sees it end */
  else if (f.channel == TS_REMOTE_DBUS && r->fd[SRC_DBUS] >= 0)
    ts_remote_write_all(r->fd[SRC_DBUS], data, f.length); /* a worker gone: its death follows */
  return TRUE;
}

/* The status page, when it changed: the app sees the call running (and,
 * once it died, where it was). */
static void send_status(Relay *r)
{
  TsWorkerStatus st;
  if (pread(r->status_fd, &st, sizeof st, 0) == (ssize_t)sizeof st && memcmp(&st, &r->sent, sizeof st) != 0) {
    ts_remote_write_frame(r->link_out, TS_REMOTE_STATUS, &st, sizeof st);
    r->sent = st;
  }
}

/* The worker is reaped: its descendants go, what its pipes hold follows,
 * then its status page and wait status. */
static int finish(Relay *r, int wait_status)
{
  kill(-r->child, SIGKILL);
  for (int src = SRC_DBUS; src <= SRC_CRASH; src++)
    if (r->fd[src] >= 0)
      forward(r, src, DRAIN_MAX);
  send_status(r);
  gint32 ws = wait_status;
  ts_remote_write_frame(r->link_out, TS_REMOTE_EXIT, &ws, sizeof ws);
  return 0;
}

int worker_stdio_main(gint64 memory_limit)
{
  Relay r = { .child = -1 };
  /* the link, out of reach of everything after: the worker gets its own 0, 1, 2 */
  r.link_in = worker_fd_move_high(0);
  r.link_out = worker_fd_move_high(1);
  if (r.link_in < 0 || r.link_out < 0 || open("/dev/null", O_RDONLY) != 0 || open("/dev/null", O_WRONLY) != 1) {
    fprintf(stderr, "tracescope-worker: cannot set up the link: %s\n", g_strerror(errno));
    return 1;
  }
  char banner[64];
  int n = snprintf(banner, sizeof banner, TS_REMOTE_BANNER "%u\n", TS_WORKER_PROTOCOL_VERSION);
  if (!ts_remote_write_all(r.link_out, banner, (gsize)n))
    return 1;

  int out[2], err[2], crash[2], sv[2];
  r.status_fd = memfd_create("tracescope-worker-status", MFD_CLOEXEC);
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(crash, O_CLOEXEC) ||
      socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) || r.status_fd < 0 ||
      ftruncate(r.status_fd, sizeof(TsWorkerStatus)) != 0) {
    fprintf(stderr, "tracescope-worker: cannot make the worker's fds: %s\n", g_strerror(errno));
    return 1;
  }
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  r.fd[SRC_CHILD] = signalfd(-1, &chld, SFD_CLOEXEC);
  r.child = start_worker(out[1], err[1], sv[1], crash[1], r.status_fd, memory_limit);
  if (r.child < 0) {
    fprintf(stderr, "tracescope-worker: cannot start the worker: %s\n", g_strerror(errno));
    return 1;
  }
  close(out[1]);
  close(err[1]);
  close(crash[1]);
  close(sv[1]);
  r.fd[SRC_LINK] = r.link_in;
  r.fd[SRC_DBUS] = sv[0];
  r.fd[SRC_STDOUT] = out[0];
  r.fd[SRC_STDERR] = err[0];
  r.fd[SRC_CRASH] = crash[0];
  for (int src = SRC_STDOUT; src <= SRC_CRASH; src++)
    fcntl(r.fd[src], F_SETFL, fcntl(r.fd[src], F_GETFL) | O_NONBLOCK);

  for (;;) {
    struct pollfd p[N_SRC];
    for (int i = 0; i < N_SRC; i++)
      p[i] = (struct pollfd){ .fd = r.fd[i], .events = POLLIN };
    if (poll(p, N_SRC, STATUS_MS) < 0 && errno != EINTR)
      return 1;
    send_status(&r);
    int status;
    if (waitpid(r.child, &status, WNOHANG) == r.child)
      return finish(&r, status);
    if (p[SRC_CHILD].revents) {
      struct signalfd_siginfo info;
      if (read(r.fd[SRC_CHILD], &info, sizeof info) < 0 && errno != EINTR && errno != EAGAIN)
        return 1;
    }
    if (p[SRC_LINK].revents && !take_frame(&r)) {
      kill(-r.child, SIGKILL); /* the app is gone */
      waitpid(r.child, NULL, 0);
      return 0;
    }
    for (int src = SRC_DBUS; src <= SRC_CRASH; src++)
      if (r.fd[src] >= 0 && p[src].revents && !forward(&r, src, 65536)) {
        close(r.fd[src]);
        r.fd[src] = -1;
      }
  }
}
