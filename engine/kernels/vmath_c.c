/* kernels/vmath_c.c — exp, tanh and sigmoid of f32 arrays (vmath_body.h) a
 * float at a time in plain C, for CPUs without AVX2: the same IEEE
 * operations as the vector paths, so their bits.  Branch-free (selects by
 * masks), so that the compiler vectorises the loops for the baseline ISA
 * (SSE2: 4 to 8 times the speed of branches on mixed data). */
#include "kernels.h"

#include <math.h>
#include <string.h>

#define VF float
#define VF_LANES 1
#define VF_TARGET

#define vf_set(c) ((float)(c))
#define vf_add(a, b) ((a) + (b))
#define vf_sub(a, b) ((a) - (b))
#define vf_mul(a, b) ((a) * (b))
#define vf_div(a, b) ((a) / (b))

#define vf_abs fabsf
#define vf_copysign copysignf

static inline uint32_t bits_of(float f)
{
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

static inline float float_of(uint32_t b)
{
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

/* c ? p : q by a mask, as the vector paths blend: no branch to mispredict
 * on mixed data, and a loop the compiler can vectorise */
static inline float select(bool c, float p, float q)
{
  uint32_t m = -(uint32_t)c;
  return float_of((bits_of(p) & m) | (bits_of(q) & ~m));
}

static inline float vf_lt_select(float a, float b, float p, float q)
{
  return select(a < b, p, q);
}

/* As minps/maxps: the second operand unless the first is smaller (larger). */
static inline float vf_min(float a, float b)
{
  return select(a < b, a, b);
}

static inline float vf_max(float a, float b)
{
  return select(a > b, a, b);
}

/* n = t's bits - s's; 2^k = (k + 127) << 23 */
static inline int32_t n_of(float t, float s)
{
  return (int32_t)(bits_of(t) - bits_of(s));
}

static inline float pow2(int32_t k)
{
  return float_of((uint32_t)(k + 127) << 23);
}

static inline float vf_pow2_lo(float t, float s)
{
  return pow2(n_of(t, s) >> 1);
}

static inline float vf_pow2_hi(float t, float s)
{
  int32_t n = n_of(t, s);
  return pow2(n - (n >> 1));
}

static inline float vf_keep_nan(float x, float r)
{
  return select(x != x, x + x, r);
}

static inline float vf_load(const float *p)
{
  return *p;
}

static inline void vf_store(float *p, float v)
{
  *p = v;
}

#include "vmath_body.h"

static bool usable(const ts_cpu_features *f)
{
  return true;
}

const ts_vmath_kernel ts__vmath_c = { "c", vm_exp_f32, vm_tanh_f32, vm_sigmoid_f32, usable };
