/* debuggee.c — programs for the debugger's CLI tests: a NaN planted by the
 * log of a negative, and a nested call and a TS_IF block to step over. */
#include <tracescope.h>

/* log(x - 2) + 1: a NaN where x < 2 */
static ts_tensor *plant_nan(ts_call *c)
{
  ts_tensor *y = ts_sub(ts_arg(c, 0), ts_scalar_f32(2));
  TS_NAME_SCOPE ("shifted_log") {
    y = ts_log(y);
  }
  return ts_add(y, ts_scalar_f32(1));
}

static ts_tensor *inner(ts_call *c)
{
  ts_tensor *a = ts_arg(c, 0);
  return ts_sub(ts_mul(a, a), a);
}

/* Add, inner (Mul, Sub), Neg, Sum and Less for a TS_IF running Exp and
 * Sqrt, then Abs. */
static ts_tensor *nested(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *n = ts_neg(TS_INVOKE(inner, ts_add(x, x)));
  TS_IF (ts_less(ts_reduce_sum(n, TS_ALL_AXES, false), ts_scalar_f32(0)), &n) {
    n = ts_exp(n);
    n = ts_sqrt(n);
  } TS_END_IF;
  return ts_abs(n);
}

TS_MODULE("Debugger test programs",
  TS_EXPORT_WITH(TS_EXAMPLE("f32[2]=1,3"), plant_nan, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[2]=1,2"), nested, x));
