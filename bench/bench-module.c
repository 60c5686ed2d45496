/* bench-module.c — what the worker and console benchmarks call besides the seeds. */
#include <stdio.h>
#include <tracescope.h>

/* ones(n): n f32 ones (n * 4 bytes of result). */
static ts_tensor *ones(ts_call *c)
{
  return ts_ones(TS_F32, TS_SHAPE(ts_arg_int(c, 0)));
}

/* flood(n): n lines on stderr as fast as it can, returns n. */
static ts_tensor *flood(ts_call *c)
{
  long n = (long)ts_arg_int(c, 0);
  for (long i = 0; i < n; i++)
    fprintf(stderr, "flood line %ld\n", i);
  return ts_scalar_i32((int)n);
}

TS_MODULE("benchmark module", TS_EXPORT(ones, n), TS_EXPORT(flood, n));
