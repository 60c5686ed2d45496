/* kernels/vmath_avx2.c — exp, tanh and sigmoid of f32 arrays (vmath_body.h)
 * eight floats a ymm.  Built for avx2 whatever the compiler's target;
 * run only where cpuid says so. */
#include "kernels.h"

#include <immintrin.h>

#define VF __m256
#define VF_LANES 8
#define VF_TARGET __attribute__((target("avx2")))

#define vf_set(c) _mm256_set1_ps(c)
#define vf_add _mm256_add_ps
#define vf_sub _mm256_sub_ps
#define vf_mul _mm256_mul_ps
#define vf_div _mm256_div_ps
#define vf_min _mm256_min_ps
#define vf_max _mm256_max_ps

#define SIGN_BIT _mm256_set1_ps(-0.0f)

static VF_TARGET inline VF vf_abs(VF a)
{
  return _mm256_andnot_ps(SIGN_BIT, a);
}

static VF_TARGET inline VF vf_copysign(VF m, VF s)
{
  return _mm256_or_ps(_mm256_and_ps(SIGN_BIT, s), vf_abs(m));
}

static VF_TARGET inline VF vf_lt_select(VF a, VF b, VF p, VF q)
{
  return _mm256_blendv_ps(q, p, _mm256_cmp_ps(a, b, _CMP_LT_OQ));
}

/* n = t's bits - s's; 2^k = (k + 127) << 23 */
static VF_TARGET inline __m256i n_of(VF t, VF s)
{
  return _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(s));
}

static VF_TARGET inline VF pow2(__m256i k)
{
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}

static VF_TARGET inline VF vf_pow2_lo(VF t, VF s)
{
  return pow2(_mm256_srai_epi32(n_of(t, s), 1));
}

static VF_TARGET inline VF vf_pow2_hi(VF t, VF s)
{
  __m256i n = n_of(t, s);
  return pow2(_mm256_sub_epi32(n, _mm256_srai_epi32(n, 1)));
}

static VF_TARGET inline VF vf_keep_nan(VF x, VF r)
{
  return _mm256_blendv_ps(r, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

#define vf_load _mm256_loadu_ps
#define vf_store _mm256_storeu_ps

#include "vmath_body.h"

static bool usable(const ts_cpu_features *f)
{
  return f->avx2;
}

const ts_vmath_kernel ts__vmath_avx2 = { "avx2", vm_exp_f32, vm_tanh_f32, vm_sigmoid_f32, usable };
