/* test-values.h — small makers and checks of tensor values, shared by the
 * engine's test programs. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <tracescope.h>

static inline ts_value tv(ts_tensor *t)
{
  return TS_TENSOR_VALUE(t);
}

/* A float32 vector of v[0..n). */
static inline ts_tensor *f32s(int n, const float *v)
{
  return ts_constant(TS_F32, TS_SHAPE(n), v);
}

/* t holds want[0..n) (to 1e-6). */
static inline void assert_values(const ts_tensor *t, const double *want, int n)
{
  g_assert_nonnull(t);
  g_assert_cmpint(ts_tensor_size(t), ==, n);
  for (int i = 0; i < n; i++)
    g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(t, i), want[i], 1e-6);
}

/* f called eagerly, or as a tf.function is (traced, then its graph). */
static inline ts_tensor *call_in_mode(ts_function *f, bool eager, const ts_value *args, int n)
{
  return eager ? ts_function_call_eager(f, args, n) : ts_function_call(f, args, n);
}

/* The one number t holds, as an int64; a NULL t fails the test with the pending error. */
static inline int64_t scalar_of(ts_tensor *t)
{
  if (!t)
    g_error("failed: %s", ts_error_peek() ? ts_error_peek()->message : "no error");
  g_assert_cmpint(ts_tensor_size(t), ==, 1);
  return ts_tensor_get_i64(t, 0);
}
