/* kernels/vmath_body.h — exp, tanh and sigmoid of f32 values, written once
 * over a vector of floats that each path (vmath_avx512.c, vmath_avx2.c,
 * vmath_c.c) defines before including this file.  Every path runs the same
 * IEEE operations (+ - * /, min, max, each rounded once; no fma, so that
 * the C path on any CPU can run them too) in the same order on each
 * element, so all give the same bits whatever the ISA or the split of the
 * array.  Everything is float: the double of earlier versions halved the
 * lanes and cost a widening, a narrowing and a double division.
 *
 *   e^y        = 2^n (1 + r + r^2 P(r)), n = round(y / ln 2),
 *                r = y - n ln 2 (Cody–Waite, ln 2 in two parts), |r| <= ln 2 / 2,
 *                P Cephes expf's degree-5 minimax polynomial; 2^n applied
 *                as 2^floor(n/2) 2^ceil(n/2), two exact powers, so that the
 *                result can be a denormal (rounded once) or overflow
 *   tanh(x)    = sign(x) (a + a z Q(z)), z = a^2, a = |x| < 0.625 (Cephes
 *                tanhf's polynomial: exact near 0), else
 *                sign(x) (1 - 2 / (e^(2a) + 1))
 *   sigmoid(x) = 1 / (1 + e^-|x|) for x >= 0, e^x / (1 + e^x) below (so
 *                that sigmoid's denormals are e^x's)
 * Both branches of tanh and sigmoid are computed and one picked per lane.
 * The arguments are clamped where the float result no longer changes; a
 * NaN comes out quieted (x + x).
 *
 * Error against the correctly rounded value (libm's double, rounded), all
 * 2^32 floats (`test-vmath -m slow`, which asserts these bounds):
 *   exp      <= 1 ulp (18092448 floats 1 ulp off, the rest exact)
 *   tanh     <= 1 ulp (7466214 1 ulp off)
 *   sigmoid  <= 2 ulp (125225404 1 ulp off, 245074 2 ulp, near x = -1.1)
 * denormal results counted in denormal ulps; infinities, overflow,
 * underflow to 0 and tanh's signed zeros are exact.
 *
 * A path defines, before including this file:
 *   VF, VF_LANES, VF_TARGET     the vector, its width in floats, its
 *                               function attribute (or nothing)
 *   vf_set(c)                   c in every lane
 *   vf_add, vf_sub, vf_mul, vf_div, vf_min, vf_max   (IEEE, lane by lane;
 *                               min/max give the second operand on NaN)
 *   vf_abs(a), vf_copysign(m, s)
 *   vf_pow2_lo(t, s), vf_pow2_hi(t, s)   for t = s + n, s = VM_SHIFTER
 *                               (so n = t's bits - s's, |n| <= 150):
 *                               2^floor(n/2), 2^(n - floor(n/2))
 *   vf_lt_select(a, b, p, q)    a < b ? p : q (false on NaN)
 *   vf_keep_nan(x, r)           x + x (x quieted) where x is NaN, else r
 *   vf_load(p), vf_store(p, v)  VF_LANES floats, unaligned */
#pragma once

#include <float.h>
#include <stdint.h>
#include <string.h>

#if FLT_EVAL_METHOD != 0
#error "vmath needs float arithmetic rounded to float (FLT_EVAL_METHOD 0: SSE, not x87)"
#endif

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF /* a b + c stays two roundings, as on every path */
#endif

#define VM_SHIFTER 0x1.8p23f /* t = y / ln 2 + this: n in t's low bits */
#define VM_INV_LN2 0x1.715476p0f
/* ln 2 in two parts, the first of 9 bits so that n times it and y minus
 * that are exact */
#define VM_LN2_HI 0.693359375f
#define VM_LN2_LO -2.12194440e-4f

/* Where the float results stop changing: e^89 overflows a float, e^-104 is
 * below half the smallest denormal; tanh(10) rounds to 1. */
#define VM_EXP_HI 89.0f
#define VM_EXP_LO -104.0f
#define VM_TANH_HI 10.0f
#define VM_TANH_POLY 0.625f /* below: tanh's polynomial */

/* (e^r - 1 - r) / r^2 on |r| <= ln 2 / 2 (Cephes expf), highest first */
static const float VM_P[] = { 1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                              4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f };

/* (tanh(a) - a) / a^3 in z = a^2 on |a| < 0.625 (Cephes tanhf), highest first */
static const float VM_Q[] = { -5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                              1.33314422036e-1f, -3.33332819422e-1f };

/* e^y, y within the clamps above */
static VF_TARGET inline VF vm_exp_clamped(VF y)
{
  VF t = vf_add(vf_mul(y, vf_set(VM_INV_LN2)), vf_set(VM_SHIFTER));
  VF n = vf_sub(t, vf_set(VM_SHIFTER));
  VF r = vf_sub(y, vf_mul(n, vf_set(VM_LN2_HI)));
  r = vf_sub(r, vf_mul(n, vf_set(VM_LN2_LO)));
  VF p = vf_set(VM_P[0]);
  for (size_t k = 1; k < sizeof VM_P / sizeof VM_P[0]; k++)
    p = vf_add(vf_mul(p, r), vf_set(VM_P[k]));
  VF e = vf_add(vf_add(vf_mul(p, vf_mul(r, r)), r), vf_set(1.0f));
  VF s = vf_set(VM_SHIFTER);
  return vf_mul(vf_mul(e, vf_pow2_lo(t, s)), vf_pow2_hi(t, s));
}

static VF_TARGET inline VF vm_exp(VF x)
{
  VF y = vf_max(vf_min(x, vf_set(VM_EXP_HI)), vf_set(VM_EXP_LO));
  return vf_keep_nan(x, vm_exp_clamped(y));
}

static VF_TARGET inline VF vm_tanh(VF x)
{
  VF a = vf_min(vf_abs(x), vf_set(VM_TANH_HI));
  VF z = vf_mul(a, a);
  VF q = vf_set(VM_Q[0]);
  for (size_t k = 1; k < sizeof VM_Q / sizeof VM_Q[0]; k++)
    q = vf_add(vf_mul(q, z), vf_set(VM_Q[k]));
  VF near0 = vf_add(a, vf_mul(a, vf_mul(z, q)));
  VF e = vm_exp_clamped(vf_add(a, a));
  VF far = vf_sub(vf_set(1.0f), vf_div(vf_set(2.0f), vf_add(e, vf_set(1.0f))));
  VF t = vf_lt_select(a, vf_set(VM_TANH_POLY), near0, far);
  return vf_keep_nan(x, vf_copysign(t, x));
}

static VF_TARGET inline VF vm_sigmoid(VF x)
{
  VF y = vf_max(vf_sub(vf_set(0.0f), vf_abs(x)), vf_set(VM_EXP_LO)); /* -|x| */
  VF e = vm_exp_clamped(y);
  VF num = vf_lt_select(x, vf_set(0.0f), e, vf_set(1.0f));
  return vf_keep_nan(x, vf_div(num, vf_add(vf_set(1.0f), e)));
}

/* y[i] = f(x[i]) for i < n, whole vectors then the tail through a buffer
 * (so a tail lane is computed as any other: the split changes no bit).
 * x == y is allowed. */
#define VM_LOOP(name, f)                                                    \
  static VF_TARGET void name(const float *x, float *y, int64_t n)           \
  {                                                                         \
    int64_t i = 0;                                                          \
    for (; i + VF_LANES <= n; i += VF_LANES)                                \
      vf_store(y + i, f(vf_load(x + i)));                                   \
    if (i < n) {                                                            \
      float buf[VF_LANES] = { 0 };                                          \
      memcpy(buf, x + i, (size_t)(n - i) * sizeof *x);                      \
      vf_store(buf, f(vf_load(buf)));                                       \
      memcpy(y + i, buf, (size_t)(n - i) * sizeof *y);                      \
    }                                                                       \
  }

VM_LOOP(vm_exp_f32, vm_exp)
VM_LOOP(vm_tanh_f32, vm_tanh)
VM_LOOP(vm_sigmoid_f32, vm_sigmoid)
