/* ts-tensor-stats.c — element loaders and text, summary statistics and the
 * histogram of a tensor (ts-tensor-stats.h).  No GTK. */
#include "ts-tensor-stats.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>

static double load_f32(const void *d, int64_t i) { return ((const float *)d)[i]; }
static double load_f64(const void *d, int64_t i) { return ((const double *)d)[i]; }
static double load_i32(const void *d, int64_t i) { return ((const int32_t *)d)[i]; }
static double load_i64(const void *d, int64_t i) { return (double)((const int64_t *)d)[i]; }
static double load_u8(const void *d, int64_t i) { return ((const uint8_t *)d)[i]; }
static double load_bool(const void *d, int64_t i) { return ((const bool *)d)[i] ? 1 : 0; }

static const ts_element_loader LOADERS[TS_DTYPE_COUNT] = {
  [TS_F32] = load_f32, [TS_F64] = load_f64, [TS_I32] = load_i32,
  [TS_I64] = load_i64, [TS_U8] = load_u8,   [TS_BOOL] = load_bool,
};
static_assert(TS_DTYPE_COUNT == 8, "a new dtype needs a loader (or NULL: not numeric)");

ts_element_loader ts_tensor_element_loader(ts_dtype dtype)
{
  return (unsigned)dtype < TS_DTYPE_COUNT ? LOADERS[dtype] : NULL;
}

void ts_format_value(double v, char *buf, size_t size)
{
  if (isnan(v))
    g_strlcpy(buf, "nan", size);
  else if (isinf(v))
    g_strlcpy(buf, v > 0 ? "inf" : "-inf", size);
  else
    snprintf(buf, size, "%.6g", v == 0 ? 0 : v); /* no "-0" */
}

void ts_tensor_format_element(const ts_tensor *t, int64_t i, char *buf, size_t size)
{
  ts_dtype dtype = ts_tensor_dtype(t);
  const void *data = ts_tensor_data(t);
  g_assert(data && i >= 0 && i < ts_tensor_size(t));
  switch (dtype) {
  case TS_BOOL:
    g_strlcpy(buf, ((const bool *)data)[i] ? "true" : "false", size);
    return;
  case TS_I64:
    snprintf(buf, size, "%" G_GINT64_FORMAT, ((const int64_t *)data)[i]);
    return;
  case TS_STRING:
    snprintf(buf, size, "\"%s\"", ((char *const *)data)[i]);
    return;
  case TS_VARIANT:
    g_strlcpy(buf, "(variant)", size);
    return;
  default:
    ts_format_value(ts_tensor_element_loader(dtype)(data, i), buf, size);
  }
}

ts_tensor *ts_tensor_ref_host(ts_tensor *t)
{
  if (!t || ts_tensor_data(t))
    return ts_tensor_ref(t);
  if (!ts_tensor_backend(t))
    return NULL; /* symbolic */
  ts_scope *scope = ts_scope_begin();
  ts_tensor *host = ts_tensor_ref(ts_tensor_to_backend(t, ts_backend_cpu()));
  ts_scope_end(scope);
  return host;
}

void ts_tensor_stats_compute(const ts_tensor *t, ts_tensor_stats *out)
{
  *out = (ts_tensor_stats){ .n = ts_tensor_size(t), .min = NAN, .max = NAN, .mean = NAN, .std = NAN };
  ts_element_loader load = ts_tensor_element_loader(ts_tensor_dtype(t));
  const void *data = ts_tensor_data(t);
  if (!load || !data)
    return;
  out->numeric = TRUE;
  /* Welford's running mean and sum of squared deviations: no cancellation */
  double mean = 0, m2 = 0, lo = INFINITY, hi = -INFINITY;
  int64_t k = 0;
  for (int64_t i = 0; i < out->n; i++) {
    double v = load(data, i);
    if (isnan(v)) {
      out->n_nan++;
      continue;
    }
    if (isinf(v)) {
      *(v > 0 ? &out->n_pos_inf : &out->n_neg_inf) += 1;
      continue;
    }
    out->n_zero += v == 0;
    lo = MIN(lo, v);
    hi = MAX(hi, v);
    k++;
    double d = v - mean;
    mean += d / (double)k;
    m2 += d * (v - mean);
  }
  out->n_finite = k;
  if (k > 0) {
    out->min = lo;
    out->max = hi;
    out->mean = mean;
    out->std = sqrt(m2 / (double)k);
  }
}

int ts_tensor_histogram_bin(const ts_tensor_histogram *h, double v)
{
  if (h->n_bins == 0 || !isfinite(v) || v < h->lo || v > h->hi)
    return -1;
  if (h->hi == h->lo)
    return 0;
  /* halves: a range as wide as the doubles' does not overflow */
  double f = (v / 2 - h->lo / 2) / (h->hi / 2 - h->lo / 2);
  return MIN((int)(CLAMP(f, 0, 1) * h->n_bins), h->n_bins - 1);
}

void ts_tensor_histogram_compute(const ts_tensor *t, const ts_tensor_stats *stats,
                                 ts_tensor_histogram *out)
{
  *out = (ts_tensor_histogram){ .n_nan = stats->n_nan, .n_pos_inf = stats->n_pos_inf,
                                .n_neg_inf = stats->n_neg_inf };
  ts_element_loader load = ts_tensor_element_loader(ts_tensor_dtype(t));
  const void *data = ts_tensor_data(t);
  if (!load || !data || stats->n_finite == 0)
    return;
  double range = stats->max - stats->min;
  ts_dtype dtype = ts_tensor_dtype(t);
  if (!ts_dtype_is_float(dtype) && range < TS_HISTOGRAM_MAX_BINS) {
    /* one bin per integer value, centred on it */
    out->n_bins = (int)range + 1;
    out->lo = stats->min - 0.5;
    out->hi = stats->max + 0.5;
  } else {
    /* the square-root rule, within [1, max] (one bin when all are equal) */
    out->n_bins = range > 0 ? (int)CLAMP(ceil(sqrt((double)stats->n_finite)), 1, TS_HISTOGRAM_MAX_BINS) : 1;
    out->lo = stats->min;
    out->hi = stats->max;
  }
  for (int64_t i = 0; i < stats->n; i++) {
    int b = ts_tensor_histogram_bin(out, load(data, i));
    if (b >= 0)
      out->counts[b]++;
  }
}
