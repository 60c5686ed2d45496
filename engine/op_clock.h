/* op_clock.h — the clock op events are stamped with: CLOCK_MONOTONIC
 * nanoseconds, read through the TSC where the kernel's own clock is the TSC
 * (an rdtsc, about a third of a clock_gettime), else clock_gettime.  Each
 * thread measures the TSC's rate against CLOCK_MONOTONIC from its first
 * reading on and re-anchors to clock_gettime every 2^20 ticks (under a
 * millisecond), so its times stay within a few nanoseconds of ts_now_ns's
 * (at worst the kernel's frequency correction, at most 500 ppm, over a
 * millisecond); they never go back.  It is read twice per op when a
 * listener wants op events: most of what delivering them costs
 * (op_clock.c). */
#pragma once

#include <stdint.h>

#if defined(__x86_64__)
#include <x86intrin.h>

typedef struct ts_op_clock {
  uint64_t tsc, ns;           /* the anchor: a TSC reading and the time at it */
  uint64_t base_tsc, base_ns; /* the thread's first reading: the rate is measured from it */
  uint64_t mult;              /* nanoseconds per tick << 32; 0 until measured */
} ts_op_clock;

#define TS_OP_CLOCK_SPAN ((uint64_t)1 << 20) /* ticks between anchors */

extern _Thread_local ts_op_clock ts__op_clock __attribute__((tls_model("initial-exec")));

/* The slow path: anchors (and measures the rate); returns the time at tsc. */
uint64_t ts__op_clock_anchor(ts_op_clock *c, uint64_t tsc);

static inline uint64_t ts__op_now_ns(void)
{
  ts_op_clock *c = &ts__op_clock;
  uint64_t tsc = __rdtsc();
  uint64_t ticks = tsc - c->tsc;
  if (__builtin_expect(ticks >= TS_OP_CLOCK_SPAN || !c->mult, 0))
    return ts__op_clock_anchor(c, tsc);
  return c->ns + ((ticks * c->mult) >> 32); /* < 2^20 ticks, mult < 2^36: no overflow */
}
#else
#include "tracescope.h"

static inline uint64_t ts__op_now_ns(void)
{
  return ts_now_ns();
}
#endif
