/* kernels/vmath_avx512.c — exp, tanh and sigmoid of f32 arrays (vmath_body.h)
 * sixteen floats a zmm.  Built for avx512f whatever the compiler's target;
 * run only where cpuid says so. */
#include "kernels.h"

#include <immintrin.h>

#define VF __m512
#define VF_LANES 16
#define VF_TARGET __attribute__((target("avx512f")))

#define vf_set(c) _mm512_set1_ps(c)
#define vf_add _mm512_add_ps
#define vf_sub _mm512_sub_ps
#define vf_mul _mm512_mul_ps
#define vf_div _mm512_div_ps
#define vf_min _mm512_min_ps
#define vf_max _mm512_max_ps

#define SIGN_BIT _mm512_set1_epi32((int)0x80000000u)

static VF_TARGET inline VF vf_abs(VF a)
{
  return _mm512_castsi512_ps(_mm512_andnot_epi32(SIGN_BIT, _mm512_castps_si512(a)));
}

static VF_TARGET inline VF vf_copysign(VF m, VF s)
{
  __m512i sign = _mm512_and_epi32(SIGN_BIT, _mm512_castps_si512(s));
  return _mm512_castsi512_ps(_mm512_or_epi32(sign, _mm512_castps_si512(vf_abs(m))));
}

static VF_TARGET inline VF vf_lt_select(VF a, VF b, VF p, VF q)
{
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), q, p);
}

/* n = t's bits - s's; 2^k = (k + 127) << 23 */
static VF_TARGET inline __m512i n_of(VF t, VF s)
{
  return _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_castps_si512(s));
}

static VF_TARGET inline VF pow2(__m512i k)
{
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(k, _mm512_set1_epi32(127)), 23));
}

static VF_TARGET inline VF vf_pow2_lo(VF t, VF s)
{
  return pow2(_mm512_srai_epi32(n_of(t, s), 1));
}

static VF_TARGET inline VF vf_pow2_hi(VF t, VF s)
{
  __m512i n = n_of(t, s);
  return pow2(_mm512_sub_epi32(n, _mm512_srai_epi32(n, 1)));
}

static VF_TARGET inline VF vf_keep_nan(VF x, VF r)
{
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), r, _mm512_add_ps(x, x));
}

#define vf_load _mm512_loadu_ps
#define vf_store _mm512_storeu_ps

#include "vmath_body.h"

static bool usable(const ts_cpu_features *f)
{
  return f->avx512f;
}

const ts_vmath_kernel ts__vmath_avx512 = { "avx512", vm_exp_f32, vm_tanh_f32, vm_sigmoid_f32, usable };
