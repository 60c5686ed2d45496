/* ts-tensor-stats.h — what the tensor inspector says about a tensor's
 * values, computed without GTK: reading elements of any dtype as doubles,
 * their text, the summary statistics and the histogram.  Plain C on the
 * engine's API; safe to call on any thread for a tensor nobody writes. */
#pragma once

#include <glib.h>
#include <tracescope.h>

G_BEGIN_DECLS

/* Element i (flat, row-major) of data as a double; NULL for dtypes that are
 * not numeric (strings, variants).  Bool reads as 0 or 1. */
typedef double (*ts_element_loader)(const void *data, int64_t i);
ts_element_loader ts_tensor_element_loader(ts_dtype dtype);

/* Element i of t as the inspector shows it ("0.25", "-3", "true", "nan",
 * "\"text\"") into buf (always terminated). */
void ts_tensor_format_element(const ts_tensor *t, int64_t i, char *buf, size_t size);
/* A double as the inspector shows it ("1.5", "-inf", "nan", "2.5e-07"). */
void ts_format_value(double v, char *buf, size_t size);

/* A tensor whose values the host can read: t itself or (on a device the
 * host cannot read) a copy on the CPU.  A new reference the caller owns
 * (ts_tensor_unref), or NULL for a symbolic tensor. */
ts_tensor *ts_tensor_ref_host(ts_tensor *t);

typedef struct ts_inspector_stats {
  gboolean numeric;    /* FALSE for strings and variants: nothing below is set */
  int64_t n;           /* elements */
  int64_t n_finite;
  int64_t n_nan, n_pos_inf, n_neg_inf, n_zero;
  double min, max;     /* over the finite values; NaN when there are none */
  double mean, std;    /* population std */
} ts_inspector_stats;

/* Statistics of a host-readable tensor (ts_tensor_ref_host). */
void ts_inspector_stats_compute(const ts_tensor *t, ts_inspector_stats *out);

/* Counts of the finite values in n_bins equal bins over [lo, hi]; the
 * last bin includes hi.  Integers and bools whose range is small get one
 * bin per value (lo and hi then sit half-way between values).  NaN and
 * infinities are counted apart. */
#define TS_HISTOGRAM_MAX_BINS 64
typedef struct ts_tensor_histogram {
  int n_bins;          /* 0 when there are no finite values */
  double lo, hi;
  int64_t counts[TS_HISTOGRAM_MAX_BINS];
  int64_t n_nan, n_pos_inf, n_neg_inf;
} ts_tensor_histogram;

/* The histogram of t, whose statistics are stats. */
void ts_tensor_histogram_compute(const ts_tensor *t, const ts_inspector_stats *stats,
                                 ts_tensor_histogram *out);

G_END_DECLS
