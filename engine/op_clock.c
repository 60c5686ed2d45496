/* op_clock.c — the op events' clock's slow path (op_clock.h): anchoring to
 * CLOCK_MONOTONIC and measuring the TSC's rate, per thread. */
#include "op_clock.h"

#if defined(__x86_64__)
#include "tracescope.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

_Thread_local ts_op_clock ts__op_clock __attribute__((tls_model("initial-exec")));

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool tsc_ok;

/* The TSC may stand for CLOCK_MONOTONIC only where the kernel's clock is
 * the TSC (it checked that the TSC is invariant and synchronized). */
static void check_clocksource(void)
{
  FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  char name[32] = "";
  if (f) {
    if (!fgets(name, sizeof name, f))
      name[0] = '\0';
    fclose(f);
  }
  tsc_ok = strcmp(name, "tsc\n") == 0;
}

/* A TSC reading and CLOCK_MONOTONIC read together within this many ticks
 * (well under a microsecond): a pair read across a preemption is not used. */
#define PAIR_TICKS 1024

uint64_t ts__op_clock_anchor(ts_op_clock *c, uint64_t tsc)
{
  pthread_once(&once, check_clocksource);
  uint64_t now = ts_now_ns();
  if (!tsc_ok)
    return now; /* mult stays 0: every reading comes here */
  uint64_t after = __rdtsc();
  /* Never back: not before what the anchor's line gives at tsc. */
  uint64_t at = now;
  if (c->mult) {
    uint64_t line = tsc > c->tsc
                      ? c->ns + (uint64_t)(((unsigned __int128)(tsc - c->tsc) * c->mult) >> 32)
                      : c->ns;
    at = line > now ? line : now;
  }
  if (after - tsc > PAIR_TICKS)
    return at;
  uint64_t mid = tsc + (after - tsc) / 2; /* the TSC when `now` was read */
  if (!c->base_tsc) {
    *c = (ts_op_clock){ .tsc = mid, .ns = now, .base_tsc = mid, .base_ns = now };
    return now;
  }
  if (mid - c->base_tsc >= TS_OP_CLOCK_SPAN && now > c->base_ns)
    c->mult = (uint64_t)(((unsigned __int128)(now - c->base_ns) << 32) / (mid - c->base_tsc));
  if (c->mult) {
    c->tsc = mid;
    c->ns = at;
  }
  return at;
}
#endif
