/* kernels/adam.c — the f32 loop of ResourceApplyAdam (ops/apply.c) on the
 * widest vectors this CPU runs: the same C compiled for AVX-512, AVX2 and
 * the baseline, chosen by cpuid.  Without -ffp-contract (this library's
 * flags) no FMA joins its products and sums, so every path gives the bits
 * of the separate ops; its divide and square root are what the ops' SSE
 * loops spent most of the update's time on. */
#include "kernels.h"

#include <math.h>

#define ADAM_LOOP(sfx, ATTR)                                                                   \
  static ATTR void adam_##sfx(const ts_adam_f32 *a, int64_t begin, int64_t end)                \
  {                                                                                            \
    float *restrict var = a->var, *restrict m = a->m, *restrict v = a->v;                      \
    const float *restrict g = a->grad;                                                         \
    const float lr_t = a->lr_t, c1 = a->one_minus_beta1, c2 = a->one_minus_beta2;              \
    const float eps = a->epsilon;                                                              \
    for (int64_t i = begin; i < end; i++) {                                                    \
      float mi = m[i] + (g[i] - m[i]) * c1;                                                    \
      float vi = v[i] + (g[i] * g[i] - v[i]) * c2;                                             \
      m[i] = mi;                                                                               \
      v[i] = vi;                                                                               \
      var[i] = var[i] - lr_t * mi / (sqrtf(vi) + eps);                                         \
    }                                                                                          \
  }

/* GCC takes the vector width in the target attribute, clang does not */
#if defined(__clang__)
#define AVX512_TARGET __attribute__((target("avx512f")))
#else
#define AVX512_TARGET __attribute__((target("avx512f,prefer-vector-width=512")))
#endif

ADAM_LOOP(avx512, AVX512_TARGET)
ADAM_LOOP(avx2, __attribute__((target("avx2"))))
ADAM_LOOP(c, )

void ts__adam_f32(const ts_adam_f32 *a, int64_t begin, int64_t end)
{
  const ts_cpu_features *cpu = ts__cpu();
  if (cpu->avx512f)
    adam_avx512(a, begin, end);
  else if (cpu->avx2)
    adam_avx2(a, begin, end);
  else
    adam_c(a, begin, end);
}
