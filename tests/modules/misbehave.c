/* misbehave.c — a module that does everything a module must not do to the
 * app (each function one way), and a few that behave, for the worker tests. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>

/* good(x): x + 1. */
static ts_tensor *good(ts_call *c)
{
  return ts_add(ts_arg(c, 0), ts_scalar_f32(1.0f));
}

/* chatty(x): prints to stdout and stderr (one line without a newline), returns x * 2. */
static ts_tensor *chatty(ts_call *c)
{
  printf("chatty out 1\n");
  fprintf(stderr, "chatty err\n");
  printf("chatty out 2 (no newline)");
  return ts_mul(ts_arg(c, 0), ts_scalar_f32(2.0f));
}

/* big(n): a f32 tensor of n ones (a large result). */
static ts_tensor *big(ts_call *c)
{
  return ts_ones(TS_F32, TS_SHAPE(ts_arg_int(c, 0)));
}

/* segv(x): writes through a null pointer after one op. */
static ts_tensor *segv(ts_call *c)
{
  ts_tensor *y = ts_relu(ts_arg(c, 0));
  volatile int *nowhere = NULL;
  *nowhere = 42;
  return y;
}

/* abort_call(x): abort(). */
static ts_tensor *abort_call(ts_call *c)
{
  (void)c;
  abort();
}

/* exit_call(x): exit(3). */
static ts_tensor *exit_call(ts_call *c)
{
  (void)c;
  exit(3);
}

static int recurse(int depth);
/* called through a volatile pointer: the compiler cannot see the recursion */
static int (*volatile again)(int) = recurse;

__attribute__((noinline)) static int recurse(int depth)
{
  volatile char frame[512];
  frame[depth % 512] = (char)depth;
  return again(depth + 1) + frame[0];
}

/* overflow(x): recursion without end. */
static ts_tensor *overflow(ts_call *c)
{
  (void)c;
  recurse(0);
  return NULL;
}

/* hog(x): allocates (and touches) memory without bound. */
static ts_tensor *hog(ts_call *c)
{
  (void)c;
  for (;;) {
    char *block = malloc(16u << 20);
    if (!block)
      abort();
    memset(block, 1, 16u << 20);
  }
}

/* spin(x): one op, then a host loop that never ends (no op to stop at). */
static ts_tensor *spin(ts_call *c)
{
  ts_relu(ts_arg(c, 0));
  for (volatile unsigned long i = 0; i != (unsigned long)-1; i++)
    i &= 1;
  return NULL;
}

/* endless(x): a TS_WHILE whose condition never turns false. */
static ts_tensor *endless(ts_call *c)
{
  ts_tensor *i = ts_scalar_i32(0);
  TS_WHILE (ts_greater_equal(i, ts_scalar_i32(0)), &i) {
    i = ts_add(i, ts_scalar_i32(0));
  }
  return i;
}

TS_MODULE("misbehaving test module",
  TS_EXPORT(good, x),
  TS_EXPORT(chatty, x),
  TS_EXPORT(big, n),
  TS_EXPORT(segv, x),
  TS_EXPORT(abort_call, x),
  TS_EXPORT(exit_call, x),
  TS_EXPORT(overflow, x),
  TS_EXPORT(hog, x),
  TS_EXPORT(spin, x),
  TS_EXPORT(endless, x));
