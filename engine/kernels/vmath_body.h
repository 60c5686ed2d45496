/* kernels/vmath_body.h — exp, tanh and sigmoid of f32 values, written once
 * over a vector of doubles that each path (vmath_avx512.c, vmath_avx2.c,
 * vmath_c.c) defines before including this file.  Every path runs the same
 * IEEE operations (+ - * /, each rounded once; no fma, which a CPU without
 * FMA could only emulate slowly) in the same order, so all give the same
 * bits whatever the ISA or the split of the array.
 *
 * The float is widened to double, e^y is computed to ~1e-15 relative and
 * the result is rounded to float once: within 1 ulp of the correctly
 * rounded value, and almost always equal to it.
 *   e^y        = 2^(n/16) (1 + q), n = round(16 y / ln 2), r = y - n ln 2 / 16
 *                (|r| <= ln 2 / 32), 2^(n/16) = 2^floor(n/16) 2^((n mod 16)/16)
 *                from a table, q = expm1(r) by its Taylor series to r^6
 *                (error < 5e-16)
 *   expm1(y)   = s q + (s - 1), s = 2^(n/16): q itself near 0 (s = 1),
 *                where tanh needs it exact relative to a tiny result
 *   tanh(x)    = sign(x) e / (e + 2), e = expm1(2 |x|)
 *   sigmoid(x) = 1 / (1 + e^-x)
 * The arguments are clamped where the float result no longer changes, so
 * 2^(n/16) stays a normal double; a NaN comes out quieted (x + x: a
 * signalling NaN too, which a plain C cast could pass through unchanged).
 *
 * A path defines, before including this file:
 *   VD, VD_LANES, VD_TARGET     the vector, its width in doubles, its
 *                               function attribute (or nothing)
 *   vd_set(c)                   c in every lane
 *   vd_add, vd_sub, vd_mul, vd_div, vd_min, vd_max   (IEEE, lane by lane;
 *                               min/max give the second operand on NaN)
 *   vd_abs(a), vd_copysign(m, s)
 *   vd_pow2_16(t), vd_exp2_16(tab, t)   for t = VM_SHIFTER + n (n in
 *                               its low bits): 2^floor(n/16), tab[n & 15]
 *   vd_keep_nan(x, r)           x + x (x quieted) where x is NaN, else r
 *   vd_load(p), vd_store(p, v)  VD_LANES floats widened, rounded back */
#pragma once

#include <stdint.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF /* a b + c stays two roundings, as on every path */
#endif

#define VM_SHIFTER 0x1.8p52 /* t = 16 y / ln 2 + this: n in t's low bits */
#define VM_16_INV_LN2 0x1.71547652b82fep4
/* ln 2 / 16 in two parts, the first of 32 bits so that n times it is exact */
#define VM_LN2_16_HI 0x1.62e42feep-5
#define VM_LN2_16_LO 0x1.a39ef35793c76p-37

/* Where the float results stop changing: e^89 overflows a float, e^-104 is
 * below half the smallest denormal; tanh(10) and sigmoid(40) round to 1. */
#define VM_EXP_HI 89.0
#define VM_EXP_LO -104.0
#define VM_TANH_HI 10.0
#define VM_SIGMOID_HI 40.0

/* 2^(j/16), j < 16 */
static const double VM_EXP2_16[16] = {
  0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
  0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
  0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
  0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0,
};

/* q = (e^r - 1 - r) / r^2: 1/2!, ... 1/6!, highest first. */
static const double VM_Q[] = { 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 1.0 / 2 };

/* e^y = *scale (1 + q); returns q.  y must be within the clamps above (so
 * 2^(n/16) stays a normal double). */
static VD_TARGET inline VD vm_exp_parts(VD y, VD *scale)
{
  VD t = vd_add(vd_mul(y, vd_set(VM_16_INV_LN2)), vd_set(VM_SHIFTER));
  VD n = vd_sub(t, vd_set(VM_SHIFTER));
  /* exact: n VM_LN2_16_HI has at most 44 bits, and y is within a factor 2 of it */
  VD r = vd_sub(y, vd_mul(n, vd_set(VM_LN2_16_HI)));
  r = vd_sub(r, vd_mul(n, vd_set(VM_LN2_16_LO)));
  VD p = vd_set(VM_Q[0]);
  for (size_t k = 1; k < sizeof VM_Q / sizeof VM_Q[0]; k++)
    p = vd_add(vd_mul(p, r), vd_set(VM_Q[k]));
  *scale = vd_mul(vd_pow2_16(t), vd_exp2_16(VM_EXP2_16, t)); /* 2^(n / 16): exact */
  return vd_add(vd_mul(vd_mul(r, r), p), r);
}

static VD_TARGET inline VD vm_exp(VD x)
{
  VD scale, q = vm_exp_parts(vd_max(vd_min(x, vd_set(VM_EXP_HI)), vd_set(VM_EXP_LO)), &scale);
  return vd_keep_nan(x, vd_add(vd_mul(scale, q), scale));
}

static VD_TARGET inline VD vm_tanh(VD x)
{
  VD a = vd_min(vd_abs(x), vd_set(VM_TANH_HI));
  VD scale, q = vm_exp_parts(vd_add(a, a), &scale);
  VD e = vd_add(vd_mul(scale, q), vd_sub(scale, vd_set(1.0)));
  return vd_keep_nan(x, vd_copysign(vd_div(e, vd_add(e, vd_set(2.0))), x));
}

static VD_TARGET inline VD vm_sigmoid(VD x)
{
  VD y = vd_max(vd_min(vd_sub(vd_set(0.0), x), vd_set(-VM_EXP_LO)), vd_set(-VM_SIGMOID_HI));
  VD scale, q = vm_exp_parts(y, &scale);
  VD e = vd_add(vd_mul(scale, q), scale);
  return vd_keep_nan(x, vd_div(vd_set(1.0), vd_add(vd_set(1.0), e)));
}

/* y[i] = f(x[i]) for i < n, whole vectors then the tail through a buffer
 * (so a tail lane is computed as any other: the split changes no bit).
 * x == y is allowed. */
#define VM_LOOP(name, f)                                                    \
  static VD_TARGET void name(const float *x, float *y, int64_t n)           \
  {                                                                         \
    int64_t i = 0;                                                          \
    for (; i + VD_LANES <= n; i += VD_LANES)                                \
      vd_store(y + i, f(vd_load(x + i)));                                   \
    if (i < n) {                                                            \
      float buf[VD_LANES] = { 0 };                                          \
      memcpy(buf, x + i, (size_t)(n - i) * sizeof *x);                      \
      vd_store(buf, f(vd_load(buf)));                                       \
      memcpy(y + i, buf, (size_t)(n - i) * sizeof *y);                      \
    }                                                                       \
  }

VM_LOOP(vm_exp_f32, vm_exp)
VM_LOOP(vm_tanh_f32, vm_tanh)
VM_LOOP(vm_sigmoid_f32, vm_sigmoid)
