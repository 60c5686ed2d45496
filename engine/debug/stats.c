/* stats.c — statistics of a tensor's elements for the debugger, its
 * breakpoint conditions and health mode: NaN/Inf/zero counts, and min,
 * max, mean and std over the finite elements. */
#include "debug-private.h"

#include <math.h>

/* The largest exponent-and-mantissa bits of a block of BLOCK elements: a
 * loop of fixed length with no branch, which the compiler turns into
 * vector max instructions even at -O2.  Elements are counted one by one
 * only in a block where that maximum says a NaN or Inf is there. */
#define BLOCK 64

static inline __attribute__((always_inline)) uint32_t block_max_f32(const uint32_t *p)
{
  uint32_t m = 0;
  for (int i = 0; i < BLOCK; i++) {
    uint32_t e = p[i] & 0x7fffffffu;
    m = e > m ? e : m;
  }
  return m;
}

static inline __attribute__((always_inline)) uint64_t block_max_f64(const uint64_t *p)
{
  uint64_t m = 0;
  for (int i = 0; i < BLOCK; i++) {
    uint64_t e = p[i] & 0x7fffffffffffffffu;
    m = e > m ? e : m;
  }
  return m;
}

static inline __attribute__((always_inline)) void count_f32(const uint32_t *p, int64_t n, int64_t *nan, int64_t *inf)
{
  for (int64_t i = 0; i < n; i++) {
    uint32_t e = p[i] & 0x7fffffffu;
    *nan += e > 0x7f800000u;
    *inf += e == 0x7f800000u;
  }
}

static inline __attribute__((always_inline)) void count_f64(const uint64_t *p, int64_t n, int64_t *nan, int64_t *inf)
{
  for (int64_t i = 0; i < n; i++) {
    uint64_t e = p[i] & 0x7fffffffffffffffu;
    *nan += e > 0x7ff0000000000000u;
    *inf += e == 0x7ff0000000000000u;
  }
}

/* Cloned for AVX2 where the CPU has it (the build targets plain x86-64):
 * health mode scans every output, and at SSE2 width the scan was a tenth
 * of a 100-layer model's time.  Not under sanitizers: the clone's ifunc
 * resolver runs while relocating, before ThreadSanitizer is set up. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
  !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define TS_SCAN_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TS_SCAN_CLONES
#endif

TS_SCAN_CLONES
static void scan_f32(const uint32_t *p, int64_t n, int64_t *nan, int64_t *inf)
{
  int64_t i = 0;
  for (; i + BLOCK <= n; i += BLOCK)
    if (block_max_f32(p + i) >= 0x7f800000u)
      count_f32(p + i, BLOCK, nan, inf);
  count_f32(p + i, n - i, nan, inf);
}

TS_SCAN_CLONES
static void scan_f64(const uint64_t *p, int64_t n, int64_t *nan, int64_t *inf)
{
  int64_t i = 0;
  for (; i + BLOCK <= n; i += BLOCK)
    if (block_max_f64(p + i) >= 0x7ff0000000000000u)
      count_f64(p + i, BLOCK, nan, inf);
  count_f64(p + i, n - i, nan, inf);
}

void ts__count_nonfinite(const ts_tensor *t, int64_t *n_nan, int64_t *n_inf)
{
  *n_nan = *n_inf = 0;
  if (!t->data || t->size <= 0 || (t->backend && t->backend != ts_backend_cpu()))
    return;
  /* By bits: an all-ones exponent is Inf (zero mantissa) or NaN. */
  if (t->dtype == TS_F32)
    scan_f32(t->data, t->size, n_nan, n_inf);
  else if (t->dtype == TS_F64)
    scan_f64(t->data, t->size, n_nan, n_inf);
}

static bool stats_on_host(const ts_tensor *t, ts_tensor_stats *out);

bool ts_tensor_stats_compute(const ts_tensor *t, ts_tensor_stats *out)
{
  TS_CHECK_ARG(t != NULL && out != NULL, false);
  *out = (ts_tensor_stats){ 0 };
  if (t->dtype == TS_STRING || t->dtype == TS_VARIANT || !t->data)
    return false;
  if (!t->backend || ts__host_visible(t->backend))
    return stats_on_host(t, out);
  /* on a device: from a host copy (waits for the device's work) */
  ts_scope *scope = ts_scope_begin();
  const ts_tensor *host = ts__tensor_host((ts_loc){ 0 }, t);
  bool ok = host && stats_on_host(host, out);
  if (!host)
    ts_error_clear();
  ts_scope_end(scope);
  return ok;
}

static bool stats_on_host(const ts_tensor *t, ts_tensor_stats *out)
{
  /* Welford's update: exact for constant tensors, so `std == 0` holds there. */
  int64_t n_finite = 0;
  double mean = 0, m2 = 0, lo = 0, hi = 0;
  for (int64_t i = 0; i < t->size; i++) {
    double v = ts__load_f64(t->dtype, t->data, i);
    if (isnan(v)) {
      out->n_nan++;
      continue;
    }
    if (isinf(v)) {
      out->n_inf++;
      continue;
    }
    out->n_zero += v == 0;
    if (n_finite == 0 || v < lo)
      lo = v;
    if (n_finite == 0 || v > hi)
      hi = v;
    n_finite++;
    double d = v - mean;
    mean += d / (double)n_finite;
    m2 += d * (v - mean);
  }
  out->n = t->size;
  out->min = lo;
  out->max = hi;
  out->mean = mean;
  out->std = n_finite > 0 ? sqrt(m2 / (double)n_finite) : 0;
  return true;
}

void ts__stats_merge(ts_tensor_stats *a, const ts_tensor_stats *b)
{
  int64_t na = a->n - a->n_nan - a->n_inf, nb = b->n - b->n_nan - b->n_inf;
  if (nb > 0) {
    if (na == 0) {
      a->min = b->min;
      a->max = b->max;
      a->mean = b->mean;
      a->std = b->std;
    } else {
      /* Chan et al.'s pairwise combination of means and squared deviations. */
      double n = (double)(na + nb), d = b->mean - a->mean;
      double m2 = a->std * a->std * (double)na + b->std * b->std * (double)nb +
                  d * d * (double)na * (double)nb / n;
      a->min = fmin(a->min, b->min);
      a->max = fmax(a->max, b->max);
      a->mean += d * (double)nb / n;
      a->std = sqrt(m2 / n);
    }
  }
  a->n += b->n;
  a->n_nan += b->n_nan;
  a->n_inf += b->n_inf;
  a->n_zero += b->n_zero;
}
