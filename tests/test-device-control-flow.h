/* test-device-control-flow.h — the If and While nodes test-sim, test-cuda
 * and test-profiler-device run on a device inside a graph's capture: an
 * If on a sum's sign (alone, and before an If that is not run there), a
 * loop over an argument bound and two nested, the inner one bounded by
 * the outer counter.  A MatMul by the identity of x's
 * width marks a body (the elementwise ops around it are fused). */
#pragma once

#include <tracescope.h>

static inline ts_tensor *loop_eye(ts_tensor *x)
{
  int64_t n = ts_tensor_shape(x).dim[1];
  return ts_eye(TS_F32, n, n);
}

/* x through tanh(0.9 x I + 0.1) n times (n an argument), plus n. */
G_GNUC_UNUSED static ts_tensor *counted_loop(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *n = ts_arg(call, 1), *i = ts_scalar_i32(0);
  TS_WHILE (ts_less(i, n), &x, &i) {
    x = ts_matmul(x, loop_eye(x));
    x = ts_tanh(ts_add(ts_mul(x, ts_scalar_f32(0.9f)), ts_scalar_f32(0.1f)));
    i = ts_add(i, ts_scalar_i32(1));
  }
  return ts_add(x, ts_cast(i, TS_F32));
}

/* m outer iterations, the j-th running an inner loop j times. */
G_GNUC_UNUSED static ts_tensor *nested_loops(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *m = ts_arg(call, 1), *j = ts_scalar_i32(0);
  TS_WHILE (ts_less(j, m), &x, &j) {
    ts_tensor *k = ts_scalar_i32(0);
    TS_WHILE (ts_less(k, j), &x, &k) {
      x = ts_add(ts_mul(ts_matmul(x, loop_eye(x)), ts_scalar_f32(0.5f)), ts_scalar_f32(1));
      k = ts_add(k, ts_scalar_i32(1));
    }
    x = ts_tanh(ts_matmul(x, loop_eye(x)));
    j = ts_add(j, ts_scalar_i32(1));
  }
  return x;
}

/* Doubled through a MatMul when x's sum is positive, else a constant (held
 * by the host: its kept copy on the device) minus x; x is [3, 5]. */
G_GNUC_UNUSED static ts_tensor *branchy(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *y = NULL;
  static const float twos[15] = { 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 };
  TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0)), &y) {
    y = ts_mul(ts_matmul(x, loop_eye(x)), ts_scalar_f32(2));
  } TS_ELSE {
    y = ts_sub(ts_constant(TS_F32, TS_SHAPE(3, 5), twos), x);
  } TS_END_IF;
  return ts_add(y, ts_scalar_f32(1));
}

/* branchy, then an If the device does not run inside a capture (a print
 * in a branch, never taken): the graph goes in segments, so every call
 * captures again rather than replay. */
G_GNUC_UNUSED static ts_tensor *branchy_then_printed(ts_call *call)
{
  ts_tensor *y = branchy(call), *z = NULL;
  TS_IF (ts_greater(ts_reduce_sum(y, TS_ALL_AXES, false), ts_scalar_f32(1e9f)), &z) {
    ts_print(y);
    z = y;
  } TS_ELSE {
    z = y;
  } TS_END_IF;
  return z;
}
