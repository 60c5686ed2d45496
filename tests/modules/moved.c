/* moved.c — a module as it comes from another machine: its ops name a
 * source file (set by #line, as a build elsewhere leaves it) that is on
 * no disk here, for the node details panel's "not on this machine" note. */
#include <tracescope.h>

#line 1 "model.c"
static ts_tensor *double_it(ts_call *c)
{
  return ts_add(ts_arg(c, 0), ts_arg(c, 0));
}

TS_MODULE("a module built elsewhere",
  TS_EXPORT(double_it, x));
