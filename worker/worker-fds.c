/* worker-fds.c — the worker's fds kept out of a module's reach (worker-fds.h). */
#include "worker-fds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ts-worker-protocol.h"

#define LOW_FDS 64    /* 0..63 hold /dev/null where nothing of ours is */
#define HIGH_BASE 512 /* where the worker's own fds go, below the usual 1024 fds */

static int std_copy[3] = { -1, -1, -1 }; /* [1], [2]: the pipes the app reads */

static int limit_fds(void)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1 << 20)
    return 1 << 20;
  return (int)rl.rlim_cur;
}

/* The number high fds start from: HIGH_BASE, or less where fewer fds are allowed. */
static int high_base(void)
{
  int n = limit_fds();
  return n > HIGH_BASE + 64 ? HIGH_BASE : n / 2;
}

int worker_fd_move_high(int fd)
{
  if (fd < 0)
    return -1;
  int high = fcntl(fd, F_DUPFD_CLOEXEC, high_base());
  if (high < 0)
    return -1;
  close(fd);
  return high;
}

int worker_fds_own(int *dbus, int *crash, int *status)
{
  if ((*dbus = worker_fd_move_high(TS_WORKER_FD_DBUS)) < 0 ||
      (*crash = worker_fd_move_high(TS_WORKER_FD_CRASH)) < 0 ||
      (*status = worker_fd_move_high(TS_WORKER_FD_STATUS)) < 0)
    return 0;
  for (int s = 1; s <= 2; s++)
    if ((std_copy[s] = fcntl(s, F_DUPFD_CLOEXEC, high_base())) < 0)
      return 0;
  int low = limit_fds() > 4 * LOW_FDS ? LOW_FDS : 3;
  for (int fd = 0; fd < low; fd++) {
    if (fcntl(fd, F_GETFD) >= 0)
      continue;
    int null = open("/dev/null", O_RDWR); /* the lowest free number: fd */
    if (null < 0)
      return 0;
    if (null != fd) { /* cannot happen: every number below was open */
      close(null);
      errno = EBADF;
      return 0;
    }
  }
  return 1;
}

void worker_fds_restore_std(void)
{
  for (int s = 1; s <= 2; s++) {
    if (std_copy[s] < 0 || fcntl(s, F_GETFD) >= 0)
      continue;
    dup2(std_copy[s], s);
    clearerr(s == 1 ? stdout : stderr);
  }
}

void worker_fds_write_std(int stream, const char *data, unsigned long len)
{
  int fd = stream == 1 || stream == 2 ? std_copy[stream] : -1;
  if (fd < 0)
    fd = stream;
  for (unsigned long done = 0; done < len;) {
    ssize_t w = write(fd, data + done, len - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      break;
    done += (unsigned long)w;
  }
}
