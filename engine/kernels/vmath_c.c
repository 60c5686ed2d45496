/* kernels/vmath_c.c — exp, tanh and sigmoid of f32 arrays (vmath_body.h) a
 * double at a time in plain C, for CPUs without AVX2: the same IEEE
 * operations as the vector paths, so their bits. */
#include "kernels.h"

#include <math.h>
#include <string.h>

#define VD double
#define VD_LANES 1
#define VD_TARGET

#define vd_set(c) ((double)(c))
#define vd_add(a, b) ((a) + (b))
#define vd_sub(a, b) ((a) - (b))
#define vd_mul(a, b) ((a) * (b))
#define vd_div(a, b) ((a) / (b))

/* As minpd/maxpd: the second operand unless the first is smaller (larger). */
static inline double vd_min(double a, double b)
{
  return a < b ? a : b;
}

static inline double vd_max(double a, double b)
{
  return a > b ? a : b;
}

#define vd_abs fabs
#define vd_copysign copysign

static inline uint64_t bits_of(double t)
{
  uint64_t bits;
  memcpy(&bits, &t, sizeof bits);
  return bits;
}

static inline double vd_pow2_16(double t)
{
  uint64_t bits = ((bits_of(t) >> 4) + 1023) << 52;
  double p;
  memcpy(&p, &bits, sizeof p);
  return p;
}

static inline double vd_exp2_16(const double *tab, double t)
{
  return tab[bits_of(t) & 15];
}

static inline double vd_keep_nan(double x, double r)
{
  return isnan(x) ? x + x : r;
}

static inline double vd_load(const float *p)
{
  return *p;
}

static inline void vd_store(float *p, double v)
{
  *p = (float)v;
}

#include "vmath_body.h"

static bool usable(const ts_cpu_features *f)
{
  return true;
}

const ts_vmath_kernel ts__vmath_c = { "c", vm_exp_f32, vm_tanh_f32, vm_sigmoid_f32, usable };
