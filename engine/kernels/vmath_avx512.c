/* kernels/vmath_avx512.c — exp, tanh and sigmoid of f32 arrays (vmath_body.h)
 * eight doubles a zmm.  Built for avx512f whatever the compiler's target;
 * run only where cpuid says so. */
#include "kernels.h"

#include <immintrin.h>

#define VD __m512d
#define VD_LANES 8
#define VD_TARGET __attribute__((target("avx512f")))

#define vd_set(c) _mm512_set1_pd(c)
#define vd_add _mm512_add_pd
#define vd_sub _mm512_sub_pd
#define vd_mul _mm512_mul_pd
#define vd_div _mm512_div_pd
#define vd_min _mm512_min_pd
#define vd_max _mm512_max_pd

#define SIGN_BIT _mm512_set1_epi64((long long)0x8000000000000000ull)

static VD_TARGET inline VD vd_abs(VD a)
{
  return _mm512_castsi512_pd(_mm512_andnot_epi64(SIGN_BIT, _mm512_castpd_si512(a)));
}

static VD_TARGET inline VD vd_copysign(VD m, VD s)
{
  __m512i sign = _mm512_and_epi64(SIGN_BIT, _mm512_castpd_si512(s));
  return _mm512_castsi512_pd(_mm512_or_epi64(sign, _mm512_castpd_si512(vd_abs(m))));
}

static VD_TARGET inline VD vd_pow2_16(VD t)
{
  __m512i m = _mm512_srli_epi64(_mm512_castpd_si512(t), 4);
  return _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(m, _mm512_set1_epi64(1023)), 52));
}

/* The table is two zmm; t's low 4 bits pick one of their 16 lanes. */
static VD_TARGET inline VD vd_exp2_16(const double *tab, VD t)
{
  return _mm512_permutex2var_pd(_mm512_loadu_pd(tab), _mm512_castpd_si512(t), _mm512_loadu_pd(tab + 8));
}

static VD_TARGET inline VD vd_keep_nan(VD x, VD r)
{
  return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q), r, _mm512_add_pd(x, x));
}

static VD_TARGET inline VD vd_load(const float *p)
{
  return _mm512_cvtps_pd(_mm256_loadu_ps(p));
}

static VD_TARGET inline void vd_store(float *p, VD v)
{
  _mm256_storeu_ps(p, _mm512_cvtpd_ps(v));
}


#include "vmath_body.h"

static bool usable(const ts_cpu_features *f)
{
  return f->avx512f;
}

const ts_vmath_kernel ts__vmath_avx512 = { "avx512", vm_exp_f32, vm_tanh_f32, vm_sigmoid_f32, usable };
