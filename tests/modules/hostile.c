/* hostile.c — a module that attacks the worker it runs in: its fds, its
 * output, its process (each function one way), for the worker tests
 * (tests/test-worker.c "hostile"), the CLI's and the app's. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>
#include <unistd.h>

/* say(x): a line on stdout and one on stderr, returns x + 1. */
static ts_tensor *say(ts_call *c)
{
  printf("said out\n");
  fprintf(stderr, "said err\n");
  return ts_add(ts_arg(c, 0), ts_scalar_f32(1.0f));
}

/* close_std(x): closes stdout and stderr, returns x + 1. */
static ts_tensor *close_std(ts_call *c)
{
  fflush(stdout);
  close(1);
  close(2);
  return ts_add(ts_arg(c, 0), ts_scalar_f32(1.0f));
}

/* close_fds(x): closes fds 3 to 10, returns x + 1. */
static ts_tensor *close_fds(ts_call *c)
{
  for (int fd = 3; fd <= 10; fd++)
    close(fd);
  return ts_add(ts_arg(c, 0), ts_scalar_f32(1.0f));
}

/* scribble_fds(x): writes garbage to fds 3 to 10, returns x + 1. */
static ts_tensor *scribble_fds(ts_call *c)
{
  static const char garbage[] = "scribbled over by a module, scribbled over by a module";
  for (int fd = 3; fd <= 10; fd++)
    for (int i = 0; i < 4; i++)
      if (write(fd, garbage, sizeof garbage) < 0)
        break;
  return ts_add(ts_arg(c, 0), ts_scalar_f32(1.0f));
}

static int *volatile nowhere; /* volatile: the compiler cannot see the null */

/* fork_segv(x): forks a child that never exits (it holds every fd the
 * worker has), says its pid on stdout ("child 1234"), then segfaults. */
static ts_tensor *fork_segv(ts_call *c)
{
  (void)c;
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    for (;;)
      pause();
  }
  printf("child %d\n", (int)child);
  fflush(stdout);
  *nowhere = 42;
  return NULL;
}

/* flood(n): n lines on stderr as fast as it can, returns n. */
static ts_tensor *flood(ts_call *c)
{
  long n = (long)ts_arg_int(c, 0);
  for (long i = 0; i < n; i++)
    fprintf(stderr, "flood line %ld\n", i);
  return ts_scalar_i32((int)n);
}

/* flood_segv(n): n lines on stderr, then segfaults. */
static ts_tensor *flood_segv(ts_call *c)
{
  long n = (long)ts_arg_int(c, 0);
  for (long i = 0; i < n; i++)
    fprintf(stderr, "flood line %ld\n", i);
  *nowhere = 42;
  return NULL;
}

/* long_line(n): one line of n MiB of 'x' on stdout, returns n. */
static ts_tensor *long_line(ts_call *c)
{
  long n = (long)ts_arg_int(c, 0);
  static char mib[1 << 20];
  memset(mib, 'x', sizeof mib);
  for (long i = 0; i < n; i++)
    fwrite(mib, 1, sizeof mib, stdout);
  printf("\n");
  return ts_scalar_i32((int)n);
}

TS_MODULE("hostile test module",
  TS_EXPORT(say, x),
  TS_EXPORT(close_std, x),
  TS_EXPORT(close_fds, x),
  TS_EXPORT(scribble_fds, x),
  TS_EXPORT(fork_segv, x),
  TS_EXPORT(flood, n),
  TS_EXPORT(long_line, n),
  TS_EXPORT(flood_segv, n));
