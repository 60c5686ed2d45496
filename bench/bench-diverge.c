/* bench-diverge.c — what the divergence finder costs: seed workloads
 * called as graphs, eagerly, in check mode (both runs and the comparison
 * on every call) and through ts_diverge (with its report).  A benchmark,
 * not a test: warm-up runs, then the median of several timed repeats. */
#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <tracescope.h>
#include <unistd.h>

#define REPEATS 7
#define WARMUP 2

typedef enum how { GRAPH, EAGER, CHECK, DIVERGE, N_HOW } how;

static const char *const HOW_NAMES[N_HOW] = { "graph", "eager", "check mode", "ts_diverge" };

typedef struct workload {
  const char *name;
  const char *args[3];
  int iters;
} workload;

static const workload WORKLOADS[] = {
  { "sequential_model", { "f32[20,28,28]:uniform" }, 20 },
  { "dense_chain", { "f32[20,28,28]:uniform", "10" }, 20 },
  { "lstm_fn", { "f32[10,10]:uniform", "f32[10,10]:uniform@2", "f32[10,10]:uniform@3" }, 50 },
  { "fizzbuzz", { "i32[]=15" }, 20 },
  { "sum_even", { "i32[100]:range" }, 20 },
};

/* One batch of iters calls; total ns, or -1 on error. */
static int64_t batch(ts_function *fn, const ts_value *args, int n, how h, int iters)
{
  ts_function_set_check_eagerly(fn, h == CHECK);
  uint64_t t0 = ts_now_ns();
  for (int i = 0; i < iters; i++) {
    ts_scope *s = ts_scope_begin();
    bool ok;
    if (h == DIVERGE) {
      ts_diverge_report *rep = NULL;
      ok = ts_diverge(fn, args, n, NULL, &rep);
      ts_diverge_report_free(rep);
    } else {
      ok = (h == EAGER ? ts_function_call_eager(fn, args, n) : ts_function_call(fn, args, n)) != NULL;
    }
    ts_scope_end(s);
    if (!ok)
      return -1;
  }
  ts_function_set_check_eagerly(fn, false);
  return (int64_t)(ts_now_ns() - t0);
}

static int cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Median µs per call of each way, the ways timed in turn (load from
 * elsewhere on the machine hits them alike).  False on error. */
static bool measure(ts_function *fn, const ts_value *args, int n, int iters, double us[N_HOW])
{
  int64_t t[N_HOW][REPEATS];
  for (int r = -WARMUP; r < REPEATS; r++)
    for (int h = 0; h < N_HOW; h++) {
      int64_t ns = batch(fn, args, n, (how)h, iters);
      if (ns < 0)
        return false;
      if (r >= 0)
        t[h][r] = ns;
    }
  for (int h = 0; h < N_HOW; h++) {
    qsort(t[h], REPEATS, sizeof t[h][0], cmp_i64);
    us[h] = (double)t[h][REPEATS / 2] / iters / 1e3;
  }
  return true;
}

int main(void)
{
  ts_module *seeds = ts_module_open("seeds");
  if (!seeds) {
    fprintf(stderr, "tracescope-bench-diverge: %s\n", ts_error_peek()->message);
    return 1;
  }
  /* the seeds print; the table goes to stdout */
  fflush(stdout);
  int table = dup(STDOUT_FILENO);
  FILE *out = fdopen(table, "w");
  if (!freopen("/dev/null", "w", stdout))
    g_error("bench-diverge: cannot send the seeds' prints to /dev/null: %s", g_strerror(errno));
  fprintf(out, "\nThe divergence finder (µs per call, median of %d)\n  %-18s", REPEATS, "workload");
  for (int h = 0; h < N_HOW; h++)
    fprintf(out, " %12s", HOW_NAMES[h]);
  fprintf(out, " %12s\n", "check/graph");
  for (size_t w = 0; w < G_N_ELEMENTS(WORKLOADS); w++) {
    const workload *wl = &WORKLOADS[w];
    ts_function *fn = ts_module_lookup(seeds, wl->name);
    ts_value args[3];
    int n = 0;
    for (; n < 3 && wl->args[n]; n++)
      if (!ts_value_parse(wl->args[n], &args[n]))
        return 1;
    double us[N_HOW];
    if (!fn || !measure(fn, args, n, wl->iters, us)) {
      ts_error *e = ts_error_take();
      fprintf(out, "  %-18s failed: %s\n", wl->name, e ? e->message : "no such function");
      ts_error_free(e);
    } else {
      fprintf(out, "  %-18s", wl->name);
      for (int h = 0; h < N_HOW; h++)
        fprintf(out, " %12.1f", us[h]);
      fprintf(out, " %11.2fx\n", us[CHECK] / us[GRAPH]);
    }
    for (int k = 0; k < n; k++)
      ts_value_clear(&args[k]);
  }
  fclose(out);
  ts_module_free(seeds);
  return 0;
}
