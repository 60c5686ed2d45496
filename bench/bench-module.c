/* bench-module.c — what the worker benchmark calls besides the seeds. */
#include <tracescope.h>

/* ones(n): n f32 ones (n * 4 bytes of result). */
static ts_tensor *ones(ts_call *c)
{
  return ts_ones(TS_F32, TS_SHAPE(ts_arg_int(c, 0)));
}

TS_MODULE("benchmark module", TS_EXPORT(ones, n));
