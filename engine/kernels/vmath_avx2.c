/* kernels/vmath_avx2.c — exp, tanh and sigmoid of f32 arrays (vmath_body.h)
 * four doubles a ymm.  Built for avx2 whatever the compiler's target;
 * run only where cpuid says so. */
#include "kernels.h"

#include <immintrin.h>

#define VD __m256d
#define VD_LANES 4
#define VD_TARGET __attribute__((target("avx2")))

#define vd_set(c) _mm256_set1_pd(c)
#define vd_add _mm256_add_pd
#define vd_sub _mm256_sub_pd
#define vd_mul _mm256_mul_pd
#define vd_div _mm256_div_pd
#define vd_min _mm256_min_pd
#define vd_max _mm256_max_pd

#define SIGN_BIT _mm256_set1_pd(-0.0)

static VD_TARGET inline VD vd_abs(VD a)
{
  return _mm256_andnot_pd(SIGN_BIT, a);
}

static VD_TARGET inline VD vd_copysign(VD m, VD s)
{
  return _mm256_or_pd(_mm256_and_pd(SIGN_BIT, s), vd_abs(m));
}

static VD_TARGET inline VD vd_pow2_16(VD t)
{
  __m256i m = _mm256_srli_epi64(_mm256_castpd_si256(t), 4);
  return _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(m, _mm256_set1_epi64x(1023)), 52));
}

static VD_TARGET inline VD vd_exp2_16(const double *tab, VD t)
{
  __m256i j = _mm256_and_si256(_mm256_castpd_si256(t), _mm256_set1_epi64x(15));
  return _mm256_i64gather_pd(tab, j, 8);
}

static VD_TARGET inline VD vd_keep_nan(VD x, VD r)
{
  return _mm256_blendv_pd(r, _mm256_add_pd(x, x), _mm256_cmp_pd(x, x, _CMP_UNORD_Q));
}

static VD_TARGET inline VD vd_load(const float *p)
{
  return _mm256_cvtps_pd(_mm_loadu_ps(p));
}

static VD_TARGET inline void vd_store(float *p, VD v)
{
  _mm_storeu_ps(p, _mm256_cvtpd_ps(v));
}

#include "vmath_body.h"

static bool usable(const ts_cpu_features *f)
{
  return f->avx2;
}

const ts_vmath_kernel ts__vmath_avx2 = { "avx2", vm_exp_f32, vm_tanh_f32, vm_sigmoid_f32, usable };
