/* bench-debug.c — what health mode costs: calls of the seeds'
 * sequential_model (100 Dense layers; graph mode at 1 and 2 threads) and
 * dense_chain with and without ts_health_start, in graph and eager mode,
 * as a ratio against the ≤ 1.3× target; and a debug session attached but
 * never stopping (history on).  Medians of rounds run in turn, of wall time
 * (what the caller waits for: the target is judged on it) and of process
 * CPU time beside it (every thread's, the pool's spinning included; on a
 * shared machine wall time also counts other people's work: the load
 * average is printed); a benchmark, not a test. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <tracescope-debug.h>
#include <tracescope.h>

/* Many short batches (two calls each), so that most run unpreempted on a
 * shared machine and their median is a clean one's wall time. */
#define ROUNDS 101

enum { PLAIN, HEALTH, STATS, DEBUGGED, VARIANTS };

typedef struct calls {
  ts_function *fn;
  ts_value args[2];
  int n_args;
  int iters;
  bool eager;
} calls;

typedef struct took {
  int64_t wall, cpu;
} took;

static int64_t wall_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double load_1min(void)
{
  double load[1] = { -1 };
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

static int64_t cpu_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* One batch of calls under variant v into *t; false on error. */
static bool batch(calls *c, int v, took *t)
{
  ts_health *h = v == HEALTH || v == STATS ? ts_health_start(v == STATS ? TS_HEALTH_STATS : TS_HEALTH_COUNTS) : NULL;
  ts_debug_session *s =
    v == DEBUGGED ? ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING }) : NULL;
  int64_t w0 = wall_ns(), t0 = cpu_ns();
  bool ok = true;
  for (int i = 0; i < c->iters && ok; i++) {
    ts_scope *scope = ts_scope_begin();
    ok = (s ? ts_debug_call(s, c->fn, c->args, c->n_args)
            : ts_function_call(c->fn, c->args, c->n_args)) != NULL;
    ts_scope_end(scope);
  }
  *t = (took){ wall_ns() - w0, cpu_ns() - t0 };
  if (h && ts_health_first_nonfinite(h))
    ok = false; /* the models make no NaN: a report of one is wrong */
  ts_health_free(h);
  ts_debug_free(s);
  return ok;
}

static void row(const char *what, const char *measured, const char *target, bool met, const char *cpu)
{
  printf("  %-58s %16s   %-12s %-6s %14s\n", what, measured, target, met ? "ok" : "MISSED", cpu);
}

static void bench_model(calls *c, const char *label, bool debugged)
{
  ts_run_functions_eagerly(c->eager);
  int64_t wall[VARIANTS][ROUNDS], cpu[VARIANTS][ROUNDS];
  int n_variants = debugged ? VARIANTS : DEBUGGED;
  double load = load_1min();
  for (int r = -1; r < ROUNDS; r++)
    for (int k = 0; k < n_variants; k++) {
      int v = (k + (r < 0 ? 0 : r)) % n_variants;
      took t;
      if (!batch(c, v, &t)) {
        ts_error *e = ts_error_take();
        printf("  %-58s failed: %s\n", label, e ? e->message : "a NaN was reported");
        ts_error_free(e);
        return;
      }
      if (r >= 0) {
        wall[v][r] = t.wall;
        cpu[v][r] = t.cpu;
      }
    }
  double med[VARIANTS], med_cpu[VARIANTS];
  for (int v = 0; v < n_variants; v++) {
    qsort(wall[v], ROUNDS, sizeof wall[v][0], cmp_i64);
    qsort(cpu[v], ROUNDS, sizeof cpu[v][0], cmp_i64);
    med[v] = (double)wall[v][ROUNDS / 2];
    med_cpu[v] = (double)cpu[v][ROUNDS / 2];
  }
  char m[64], cm[64], what[128];
  g_snprintf(m, sizeof m, "%.2f×", med[HEALTH] / med[PLAIN]);
  g_snprintf(cm, sizeof cm, "%.2f×", med_cpu[HEALTH] / med_cpu[PLAIN]);
  g_snprintf(what, sizeof what, "health mode (NaN/Inf counts), %s", label);
  row(what, m, "<= 1.3×", med[HEALTH] / med[PLAIN] <= 1.3, cm);
  g_snprintf(m, sizeof m, "%.2f×", med[STATS] / med[PLAIN]);
  g_snprintf(cm, sizeof cm, "%.2f×", med_cpu[STATS] / med_cpu[PLAIN]);
  g_snprintf(what, sizeof what, "  with min/max/mean (TS_HEALTH_STATS)");
  row(what, m, "(no target)", true, cm);
  if (debugged) {
    g_snprintf(m, sizeof m, "%.2f×", med[DEBUGGED] / med[PLAIN]);
    g_snprintf(cm, sizeof cm, "%.2f×", med_cpu[DEBUGGED] / med_cpu[PLAIN]);
    row("  a debug session attached, never stopping", m, "(no target)", true, cm);
  }
  ts_schedule sch = { 0 };
  ts_concrete_schedule(ts_function_get_concrete(c->fn, c->args, c->n_args), &sch);
  printf("  %-58s %16s   (a call: %.1f µs plain, %.1f with health; CPU %.1f, %.1f;\n"
         "  %-58s %16s    graph: %d row runs, %d groups; load average %.2f before, %.2f after)\n", "", "",
         med[PLAIN] / c->iters / 1e3, med[HEALTH] / c->iters / 1e3, med_cpu[PLAIN] / c->iters / 1e3,
         med_cpu[HEALTH] / c->iters / 1e3, "", "", sch.n_row_runs, sch.n_groups, load, load_1min());
}

int main(void)
{
  ts_module *seeds = ts_module_open("seeds");
  if (!seeds) {
    fprintf(stderr, "tracescope-bench-debug: error: cannot open seeds\n");
    return 1;
  }
  printf("Tracescope debugger benchmark: %u cores; medians of %d rounds after a warm-up round;\n"
         "load average %.2f (1 min)\n"
         "Ratios are judged on wall time, what a caller waits for; the process's CPU time (every\n"
         "thread's, the pool's spinning for work included) is beside it.\n",
         g_get_num_processors(), ROUNDS, load_1min());
  printf("  %-58s %16s   %-12s %-6s %14s\n", "what", "measured", "target", "", "CPU time");
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(20, 28, 28), 0, 1, 1);
  calls model = { ts_module_lookup(seeds, "sequential_model"), { TS_TENSOR_VALUE(x) }, 1, 2, false };
  /* at 1 and 2 threads: health mode keeps the schedule (groups, row runs) */
  int saved = ts_get_threads();
  for (int threads = 1; threads <= 2; threads++) {
    char label[96];
    g_snprintf(label, sizeof label, "sequential_model (100 Dense), graph, %d thread%s", threads,
               threads > 1 ? "s" : "");
    ts_set_threads(threads);
    bench_model(&model, label, false);
  }
  ts_set_threads(saved);
  model.eager = true;
  bench_model(&model, "sequential_model (100 Dense), eager", true);
  calls chain = { ts_module_lookup(seeds, "dense_chain"), { TS_TENSOR_VALUE(x), TS_INT_VALUE(10) },
                  2, 2, false };
  bench_model(&chain, "dense_chain(x, 10), graph", false);
  ts_scope_end(scope);
  ts_module_free(seeds);
  ts_release_all();
  return 0;
}
