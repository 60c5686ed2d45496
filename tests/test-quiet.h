/* test-quiet.h — stdout carries the TAP stream: what modules print there
 * (host printf, ts_print) goes to /dev/null between these two calls. */
#pragma once

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/* Returns the saved stdout for test_quiet_end. */
static inline int test_quiet_begin(void)
{
  fflush(stdout);
  int saved = dup(STDOUT_FILENO), null_fd = open("/dev/null", O_WRONLY);
  dup2(null_fd, STDOUT_FILENO);
  close(null_fd);
  return saved;
}

static inline void test_quiet_end(int saved)
{
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
}
