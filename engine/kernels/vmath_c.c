/* kernels/vmath_c.c — exp, tanh and sigmoid of f32 arrays (vmath_body.h) a
 * float at a time in plain C, for CPUs without AVX2: the same IEEE
 * operations as the vector paths, so their bits. */
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

/* As minps/maxps: the second operand unless the first is smaller (larger). */
static inline float vf_min(float a, float b)
{
  return a < b ? a : b;
}

static inline float vf_max(float a, float b)
{
  return a > b ? a : b;
}

#define vf_abs fabsf
#define vf_copysign copysignf

static inline float vf_lt_select(float a, float b, float p, float q)
{
  return a < b ? p : q;
}

/* n = t's bits - s's; 2^k = (k + 127) << 23 */
static inline int32_t n_of(float t, float s)
{
  uint32_t bits, shifter;
  memcpy(&bits, &t, sizeof bits);
  memcpy(&shifter, &s, sizeof shifter);
  return (int32_t)(bits - shifter);
}

static inline float pow2(int32_t k)
{
  uint32_t bits = (uint32_t)(k + 127) << 23;
  float p;
  memcpy(&p, &bits, sizeof p);
  return p;
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
  return isnan(x) ? x + x : r;
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
