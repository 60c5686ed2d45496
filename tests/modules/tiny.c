/* tiny.c — a small, well-formed module for the loader and call tests. */
#include <string.h>
#include <tracescope.h>

/* identity(x): its argument, as it came (a tensor of the caller's scope). */
static ts_tensor *identity(ts_call *c)
{
  return ts_arg(c, 0);
}

/* scale(x, k): x * k, k a host float. */
static ts_tensor *scale(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  double k = ts_arg_float(c, 1);
  return ts_mul(x, ts_scalar_f32((float)k));
}

/* fill_named(what, n): ones or zeros of shape [n] (host string and int). */
static ts_tensor *fill_named(ts_call *c)
{
  const char *what = ts_arg_str(c, 0);
  int64_t n = ts_arg_int(c, 1);
  if (ts_failed())
    return NULL;
  return strcmp(what, "ones") == 0 ? ts_ones(TS_I32, TS_SHAPE(n)) : ts_zeros(TS_I32, TS_SHAPE(n));
}

/* nothing(): returns NULL without recording an error (a bug the loader reports). */
static ts_tensor *nothing(ts_call *c)
{
  return NULL;
}

/* self_matmul(x): x @ x, failing for non-square x. */
static ts_tensor *self_matmul(ts_call *c)
{
  return ts_matmul(ts_arg(c, 0), ts_arg(c, 0));
}

/* n_args(): how many arguments it was given, as an i32 scalar (unnamed parameters). */
static ts_tensor *n_args(ts_call *c)
{
  return ts_scalar_i32(ts_call_n_args(c));
}

/* min_max(x): (min(x), max(x)), two results (a tuple). */
static ts_tensor *min_max(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  return ts_tuple(ts_reduce_min(x, TS_ALL_AXES, false), ts_reduce_max(x, TS_ALL_AXES, false));
}

/* only_min(x): (min(x),), a tuple of one. */
static ts_tensor *only_min(ts_call *c)
{
  return ts_tuple(ts_reduce_min(ts_arg(c, 0), TS_ALL_AXES, false));
}

TS_MODULE("tiny test module",
  TS_EXPORT(identity, x),
  TS_EXPORT(scale, x, k),
  TS_EXPORT(fill_named, what, n),
  TS_EXPORT(nothing),
  TS_EXPORT(self_matmul, x),
  TS_EXPORT(n_args),
  TS_EXPORT(min_max, x),
  TS_EXPORT(only_min, x));
