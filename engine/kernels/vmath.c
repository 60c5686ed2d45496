/* kernels/vmath.c — f32 exp, tanh and sigmoid over arrays on the best path
 * this CPU runs (vmath_avx512.c, vmath_avx2.c, vmath_c.c: all give the same
 * bits).  The ops' f32 loops, fused chains and GEMM epilogues call these. */
#include "kernels.h"

#include <glib.h>
#include <pthread.h>

static const ts_vmath_kernel *const vmath_kernels[] = { &ts__vmath_avx512, &ts__vmath_avx2, &ts__vmath_c };

static const ts_vmath_kernel *best;
static pthread_once_t best_once = PTHREAD_ONCE_INIT;

/* The first usable (the portable one at worst). */
static void choose(void)
{
  for (size_t i = 0; i < G_N_ELEMENTS(vmath_kernels) && !best; i++)
    if (vmath_kernels[i]->usable(ts__cpu()))
      best = vmath_kernels[i];
}

const ts_vmath_kernel *ts__vmath_best(void)
{
  pthread_once(&best_once, choose);
  return best;
}

void ts__vexp_f32(const float *x, float *y, int64_t n)
{
  ts__vmath_best()->vexp(x, y, n);
}

void ts__vtanh_f32(const float *x, float *y, int64_t n)
{
  ts__vmath_best()->vtanh(x, y, n);
}

void ts__vsigmoid_f32(const float *x, float *y, int64_t n)
{
  ts__vmath_best()->vsigmoid(x, y, n);
}
