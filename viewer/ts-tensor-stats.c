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
static double load_i8(const void *d, int64_t i) { return ((const int8_t *)d)[i]; }
static double load_i16(const void *d, int64_t i) { return ((const int16_t *)d)[i]; }
static double load_u16(const void *d, int64_t i) { return ((const uint16_t *)d)[i]; }
static double load_u32(const void *d, int64_t i) { return ((const uint32_t *)d)[i]; }
static double load_u64(const void *d, int64_t i) { return (double)((const uint64_t *)d)[i]; }
static double load_f16(const void *d, int64_t i) { return ts_f16_bits_to_float(((const uint16_t *)d)[i]); }
static double load_bf16(const void *d, int64_t i) { return ts_bf16_bits_to_float(((const uint16_t *)d)[i]); }

static const ts_element_loader LOADERS[TS_DTYPE_COUNT] = {
  [TS_F32] = load_f32, [TS_F64] = load_f64, [TS_I32] = load_i32,
  [TS_I64] = load_i64, [TS_U8] = load_u8,   [TS_BOOL] = load_bool,
  [TS_I8] = load_i8,   [TS_I16] = load_i16, [TS_U16] = load_u16,
  [TS_U32] = load_u32, [TS_U64] = load_u64, [TS_F16] = load_f16,
  [TS_BF16] = load_bf16,
};
static_assert(TS_DTYPE_COUNT == 15, "a new dtype needs a loader (or NULL: not numeric)");

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
  if (!host)
    ts_error_clear(); /* shown as having no values */
  return host;
}

/* ---- per-dtype kernels: tight loops, no call per element ------------------ */

/* What the first pass finds: counts, extremes and the sum of the finite values. */
typedef struct {
  double sum, min, max;
  int64_t n_nan, n_pos_inf, n_neg_inf, n_zero;
} first_pass;

/* Maps finite v into a histogram's bins: (v/2 - lo2) / width2 of n_bins,
 * in halves so that the widest range does not overflow. */
typedef struct {
  double lo2, width2;
  int last;
} binning;

/* Locals in the loops: with -fno-strict-aliasing a store through p could
 * change x[], which would keep every sum in memory. */
/* VALUE(x) is element x as a double: the 16-bit floats from their bits */
#define TS_STATS_KERNELS(name, ctype, VALUE)                                         \
  static void first_##name(const void *data, int64_t n, first_pass *p)                  \
  {                                                                                     \
    const ctype *x = data;                                                              \
    double sum = 0, lo = INFINITY, hi = -INFINITY;                                      \
    int64_t n_nan = 0, n_pos = 0, n_neg = 0, n_zero = 0;                                \
    for (int64_t i = 0; i < n; i++) {                                                   \
      double v = VALUE(x[i]);                                                           \
      if (G_LIKELY(isfinite(v))) {                                                      \
        n_zero += v == 0;                                                               \
        lo = v < lo ? v : lo;                                                           \
        hi = v > hi ? v : hi;                                                           \
        sum += v;                                                                       \
      } else {                                                                          \
        n_nan += isnan(v);                                                              \
        n_pos += v == INFINITY;                                                         \
        n_neg += v == -INFINITY;                                                        \
      }                                                                                 \
    }                                                                                   \
    *p = (first_pass){ .sum = sum, .min = lo, .max = hi, .n_nan = n_nan,                \
                       .n_pos_inf = n_pos, .n_neg_inf = n_neg, .n_zero = n_zero };      \
  }                                                                                     \
  static double squares_##name(const void *data, int64_t n, double mean)               \
  {                                                                                     \
    const ctype *x = data;                                                              \
    double m2 = 0;                                                                      \
    for (int64_t i = 0; i < n; i++) {                                                   \
      double d = VALUE(x[i]) - mean;                                                    \
      m2 += isfinite(d) ? d * d : 0;                                                    \
    }                                                                                   \
    return m2;                                                                          \
  }                                                                                     \
  static void bins_##name(const void *data, int64_t n, const binning *b, int64_t *counts) \
  {                                                                                     \
    const ctype *x = data;                                                              \
    double lo2 = b->lo2, width2 = b->width2, n_bins = b->last + 1.0;                    \
    int last = b->last;                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                   \
      double f = (VALUE(x[i]) / 2 - lo2) / width2 * n_bins;                             \
      if (f >= 0 && f < n_bins)                                                         \
        counts[(int)f]++;                                                               \
      else if (f >= n_bins && isfinite(f))                                              \
        counts[last]++; /* hi itself */                                                 \
    }                                                                                   \
  }

TS_STATS_KERNELS(f32, float, (double))
TS_STATS_KERNELS(f64, double, (double))
TS_STATS_KERNELS(i32, int32_t, (double))
TS_STATS_KERNELS(i64, int64_t, (double))
TS_STATS_KERNELS(u8, uint8_t, (double))
TS_STATS_KERNELS(bool, bool, (double))
TS_STATS_KERNELS(i8, int8_t, (double))
TS_STATS_KERNELS(i16, int16_t, (double))
TS_STATS_KERNELS(u16, uint16_t, (double))
TS_STATS_KERNELS(u32, uint32_t, (double))
TS_STATS_KERNELS(u64, uint64_t, (double))
TS_STATS_KERNELS(f16, uint16_t, (double)ts_f16_bits_to_float)
TS_STATS_KERNELS(bf16, uint16_t, (double)ts_bf16_bits_to_float)

typedef struct {
  void (*first)(const void *data, int64_t n, first_pass *p);
  double (*squares)(const void *data, int64_t n, double mean);
  void (*bins)(const void *data, int64_t n, const binning *b, int64_t *counts);
} stats_kernels;

#define TS_KERNEL_ROW(name) { first_##name, squares_##name, bins_##name }
static const stats_kernels KERNELS[TS_DTYPE_COUNT] = {
  [TS_F32] = TS_KERNEL_ROW(f32), [TS_F64] = TS_KERNEL_ROW(f64), [TS_I32] = TS_KERNEL_ROW(i32),
  [TS_I64] = TS_KERNEL_ROW(i64), [TS_U8] = TS_KERNEL_ROW(u8),   [TS_BOOL] = TS_KERNEL_ROW(bool),
  [TS_I8] = TS_KERNEL_ROW(i8),   [TS_I16] = TS_KERNEL_ROW(i16), [TS_U16] = TS_KERNEL_ROW(u16),
  [TS_U32] = TS_KERNEL_ROW(u32), [TS_U64] = TS_KERNEL_ROW(u64), [TS_F16] = TS_KERNEL_ROW(f16),
  [TS_BF16] = TS_KERNEL_ROW(bf16),
};

static const stats_kernels *kernels_for(const ts_tensor *t)
{
  ts_dtype dtype = ts_tensor_dtype(t);
  return (unsigned)dtype < TS_DTYPE_COUNT && KERNELS[dtype].first && ts_tensor_data(t) ? &KERNELS[dtype]
                                                                                         : NULL;
}

/* Two passes (sum, then squared deviations from the mean): exact enough
 * for any size, and a tight loop each. */
void ts_inspector_stats_compute(const ts_tensor *t, ts_inspector_stats *out)
{
  *out = (ts_inspector_stats){ .n = ts_tensor_size(t), .min = NAN, .max = NAN, .mean = NAN, .std = NAN };
  const stats_kernels *k = kernels_for(t);
  if (!k)
    return;
  out->numeric = TRUE;
  first_pass p = { .min = INFINITY, .max = -INFINITY };
  k->first(ts_tensor_data(t), out->n, &p);
  out->n_finite = out->n - p.n_nan - p.n_pos_inf - p.n_neg_inf;
  out->n_nan = p.n_nan;
  out->n_pos_inf = p.n_pos_inf;
  out->n_neg_inf = p.n_neg_inf;
  out->n_zero = p.n_zero;
  if (out->n_finite == 0)
    return;
  out->min = p.min;
  out->max = p.max;
  out->mean = CLAMP(p.sum / (double)out->n_finite, p.min, p.max);
  out->std = sqrt(k->squares(ts_tensor_data(t), out->n, out->mean) / (double)out->n_finite);
}

void ts_tensor_histogram_compute(const ts_tensor *t, const ts_inspector_stats *stats,
                                 ts_tensor_histogram *out)
{
  *out = (ts_tensor_histogram){ .n_nan = stats->n_nan, .n_pos_inf = stats->n_pos_inf,
                                .n_neg_inf = stats->n_neg_inf };
  const stats_kernels *k = kernels_for(t);
  const void *data = ts_tensor_data(t);
  if (!k || stats->n_finite == 0)
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
  if (out->hi == out->lo) {
    out->counts[0] = stats->n_finite;
    return;
  }
  binning b = { .lo2 = out->lo / 2, .width2 = out->hi / 2 - out->lo / 2, .last = out->n_bins - 1 };
  k->bins(data, stats->n, &b, out->counts);
}
