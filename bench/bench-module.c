/* bench-module.c — what the worker and console benchmarks call besides the seeds. */
#include <stdio.h>
#include <tracescope.h>

/* ones(n): n f32 ones (n * 4 bytes of result). */
static ts_tensor *ones(ts_call *c)
{
  return ts_ones(TS_F32, TS_SHAPE(ts_arg_int(c, 0)));
}

/* steps(n): 1 + 1 + ... n times, eagerly one op each: a profile of n op
 * events (the 10M-event trace fetched from a remote worker). */
static ts_tensor *steps(ts_call *c)
{
  int64_t n = ts_arg_int(c, 0);
  ts_tensor *one = ts_scalar_f32(1.0f), *x = ts_scalar_f32(0.0f);
  for (int64_t i = 0; i < n;) {
    ts_scope *scope = ts_scope_begin(); /* a thousand at a time: the rest is released */
    for (int64_t k = 0; k < 1000 && i < n; k++, i++)
      x = ts_add(x, one);
    x = ts_scope_end_keep(scope, x);
  }
  return x;
}

/* flood(n): n lines on stderr as fast as it can, returns n. */
static ts_tensor *flood(ts_call *c)
{
  long n = (long)ts_arg_int(c, 0);
  for (long i = 0; i < n; i++)
    fprintf(stderr, "flood line %ld\n", i);
  return ts_scalar_i32((int)n);
}

TS_MODULE("benchmark module", TS_EXPORT(ones, n), TS_EXPORT(steps, n), TS_EXPORT(flood, n));
