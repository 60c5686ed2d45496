/* bench-inspector.c — the tensor inspector's computations (viewer/
 * ts-tensor-stats.c, ts-tensor-slice.c) on big tensors: statistics,
 * histogram and a − b per dtype, in ns per element.  These run on a GTask
 * thread above a million elements; the numbers say how long a user waits
 * for the summary.  A benchmark, not a test: medians of several runs. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <tracescope.h>

#include "ts-tensor-slice.h"
#include "ts-tensor-stats.h"

#define REPEATS 5
#define N_ELEMENTS (16 * 1024 * 1024)

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double now_ms(void)
{
  return (double)g_get_monotonic_time() / 1000.0;
}

typedef void (*bench_fn)(ts_tensor *a, ts_tensor *b);

static void run_stats(ts_tensor *a, ts_tensor *b)
{
  ts_inspector_stats s;
  ts_inspector_stats_compute(a, &s);
}

static void run_stats_histogram(ts_tensor *a, ts_tensor *b)
{
  ts_inspector_stats s;
  ts_tensor_histogram h;
  ts_inspector_stats_compute(a, &s);
  ts_tensor_histogram_compute(a, &s, &h);
}

static void run_diff(ts_tensor *a, ts_tensor *b)
{
  double max_abs, max_rel;
  ts_tensor_unref(ts_tensor_diff(a, b, &max_abs, &max_rel, NULL));
}

static void measure(const char *what, ts_dtype dtype, bench_fn fn, ts_tensor *a, ts_tensor *b)
{
  double ms[REPEATS];
  for (int r = 0; r < REPEATS; r++) {
    double t0 = now_ms();
    fn(a, b);
    ms[r] = now_ms() - t0;
  }
  qsort(ms, REPEATS, sizeof ms[0], cmp_double);
  double median = ms[REPEATS / 2];
  printf("%-22s %-4s %8.1f ms  %6.2f ns/element\n", what, ts_dtype_short_name(dtype), median,
         median * 1e6 / N_ELEMENTS);
}

int main(void)
{
  printf("tensor inspector, %d elements (medians of %d)\n", N_ELEMENTS, REPEATS);
  const ts_dtype dtypes[] = { TS_F32, TS_F64, TS_I32, TS_U8, TS_BOOL };
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++) {
    ts_scope *scope = ts_scope_begin();
    ts_tensor *u = ts_random_uniform(TS_F32, TS_SHAPE(N_ELEMENTS), -100, 100, 1);
    ts_tensor *a = dtypes[i] == TS_BOOL ? ts_greater(u, ts_scalar_f32(0)) : ts_cast(u, dtypes[i]);
    if (!a) {
      fprintf(stderr, "bench-inspector: %s\n", ts_error_peek() ? ts_error_peek()->message : "?");
      return 1;
    }
    measure("stats", dtypes[i], run_stats, a, NULL);
    measure("stats + histogram", dtypes[i], run_stats_histogram, a, NULL);
    if (dtypes[i] == TS_F32) {
      ts_tensor *b = ts_random_uniform(TS_F32, TS_SHAPE(N_ELEMENTS), -100, 100, 2);
      measure("a - b (f64 out)", dtypes[i], run_diff, a, b);
    }
    ts_scope_end(scope);
  }
  ts_release_all();
  return 0;
}
