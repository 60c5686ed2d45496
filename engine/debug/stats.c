/* stats.c — statistics of a tensor's elements for the debugger, its
 * breakpoint conditions and health mode: NaN/Inf/zero counts, and min,
 * max, mean and std over the finite elements. */
#include "debug-private.h"

#include <math.h>

void ts__count_nonfinite(const ts_tensor *t, int64_t *n_nan, int64_t *n_inf)
{
  int64_t nan = 0, inf = 0;
  if (t->data && t->size > 0 && (!t->backend || t->backend == ts_backend_cpu())) {
    /* By bits: all-ones exponent is Inf (zero mantissa) or NaN. */
    if (t->dtype == TS_F32) {
      const uint32_t *p = t->data;
      for (int64_t i = 0; i < t->size; i++) {
        uint32_t e = p[i] & 0x7fffffffu;
        nan += e > 0x7f800000u;
        inf += e == 0x7f800000u;
      }
    } else if (t->dtype == TS_F64) {
      const uint64_t *p = t->data;
      for (int64_t i = 0; i < t->size; i++) {
        uint64_t e = p[i] & 0x7fffffffffffffffu;
        nan += e > 0x7ff0000000000000u;
        inf += e == 0x7ff0000000000000u;
      }
    }
  }
  *n_nan = nan;
  *n_inf = inf;
}

bool ts_tensor_stats_compute(const ts_tensor *t, ts_tensor_stats *out)
{
  TS_CHECK_ARG(t != NULL && out != NULL, false);
  *out = (ts_tensor_stats){ 0 };
  if (t->dtype == TS_STRING || t->dtype == TS_VARIANT || !t->data ||
      (t->backend && t->backend != ts_backend_cpu()))
    return false;
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
