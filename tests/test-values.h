/* test-values.h — small makers and checks of tensor values, shared by the
 * engine's test programs. */
#pragma once

#include <glib.h>
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
