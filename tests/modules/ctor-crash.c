/* ctor-crash.c — a module whose constructor segfaults: the worker dies
 * while it loads the module (tests/test-worker.c, test-app.c). */
#include <tracescope.h>

static int *volatile nowhere; /* volatile: the compiler cannot see the null */

__attribute__((constructor)) static void crash_on_load(void)
{
  *nowhere = 42;
}

static ts_tensor *never(ts_call *c)
{
  return ts_arg(c, 0);
}

TS_MODULE("a module that crashes while it loads",
  TS_EXPORT(never, x));
