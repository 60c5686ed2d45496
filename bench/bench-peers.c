/* bench-peers.c — tracescope-bench-peers: our side of the side-by-side
 * benchmark (scripts/bench-peers), as JSON on stdout.  Per workload: µs
 * per call eagerly and as a graph, and the GEMM floor: the GEMMs of the
 * workload's traced graph (MatMul, and Conv2D as its im2col GEMM) alone,
 * each shape on the fastest of OpenBLAS's cblas_sgemm and our tiles
 * (engine/kernels), in the same run.  Then trace + optimize +
 * plan of sequential_model.  The thread count is whatever the environment
 * says (OPENBLAS_NUM_THREADS, TRACESCOPE_THREADS): the script runs this
 * once per count.  Times are the fastest of REPEATS batches (after
 * WARMUP), each batch long enough to time: on a shared machine the
 * fastest is what the code costs with the least interference; the peers'
 * harnesses measure the same way. */
#include "bench-blas.h"
#include "kernels/kernels.h" /* our tiles, for the GEMM floor */
#include "test-quiet.h" /* the seeds print: to /dev/null while timing */
#include "peers-workloads.h"

#include <cblas.h> /* its constants only: the library is the engine's (bench-blas.h) */
#include <fcntl.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPEATS 7
#define WARMUP 2
#define BATCH_NS 20000000 /* a batch lasts at least 20 ms */

/* Runs `iters` calls; false on error. */
typedef bool (*run_fn)(void *data, int iters);

static int cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* ns per call: the fastest of REPEATS batches, each of enough calls to
 * last BATCH_NS; negative on error. */
static double fastest_per_call(run_fn run, void *data)
{
  int iters = 1;
  for (;;) { /* warm-up, and how many calls a batch needs */
    uint64_t t0 = ts_now_ns();
    if (!run(data, iters))
      return -1;
    uint64_t ns = ts_now_ns() - t0;
    if (ns >= BATCH_NS / 4 || iters >= 1 << 20)
      break;
    iters *= 2;
  }
  for (int i = 0; i < WARMUP; i++)
    if (!run(data, iters))
      return -1;
  iters = iters * 4;
  int64_t t[REPEATS];
  for (int i = 0; i < REPEATS; i++) {
    uint64_t t0 = ts_now_ns();
    if (!run(data, iters))
      return -1;
    t[i] = (int64_t)(ts_now_ns() - t0);
  }
  qsort(t, REPEATS, sizeof t[0], cmp_i64);
  return (double)t[0] / iters;
}


/* ---- our eager and graph calls -------------------------------------------------- */

typedef struct call {
  ts_function *fn;
  ts_value args[PEER_MAX_ARGS];
  int n_args;
  bool eager;
} call;

static bool run_calls(void *data, int iters)
{
  call *c = data;
  for (int i = 0; i < iters; i++) {
    ts_scope *s = ts_scope_begin();
    ts_tensor *out = c->eager ? ts_function_call_eager(c->fn, c->args, c->n_args)
                              : ts_function_call(c->fn, c->args, c->n_args);
    ts_scope_end(s);
    if (!out)
      return false;
  }
  return true;
}

/* ---- the GEMM floor ------------------------------------------------------------- */

typedef struct gemm {
  int m, n, k;
  float *a, *b, *c;
} gemm;

typedef struct gemms {
  GArray *list; /* of gemm */
} gemms;

static int64_t shape_size(ts_shape s, int from, int to)
{
  int64_t n = 1;
  for (int d = from; d < to; d++)
    n *= s.dim[d];
  return n;
}

static ts_shape input_shape(const ts_graph *g, const ts_node *n, int i)
{
  ts_port p = ts_node_input(n, i);
  return ts_node_output_shape(ts_graph_node(g, p.node), p.index);
}

static float *random_floats(int64_t n)
{
  float *p = g_new(float, n);
  for (int64_t i = 0; i < n; i++)
    p[i] = (float)g_random_double_range(-1, 1);
  return p;
}

static void add_gemm(gemms *gs, int64_t m, int64_t n, int64_t k)
{
  if (m <= 0 || n <= 0 || k <= 0) /* nothing to multiply */
    return;
  gemm g = { (int)m, (int)n, (int)k, random_floats(m * k), random_floats(k * n),
             g_new0(float, m * n) };
  g_array_append_val(gs->list, g);
}

/* The GEMMs of g's MatMul nodes (one per batch matrix) and Conv2D nodes
 * (im2col: [N*OH*OW, KH*KW*C] x [KH*KW*C, O]), in graph order. */
static void collect_gemms(gemms *gs, const ts_graph *g)
{
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    ts_shape out = ts_node_output_shape(n, 0);
    if (ts_node_op(n) == TS_OP_MATMUL && out.rank >= 2) {
      /* a's last two dims are M x K, transposed or not */
      ts_shape a = input_shape(g, n, 0);
      int64_t batch = shape_size(out, 0, out.rank - 2), m = out.dim[out.rank - 2];
      int64_t k = m ? shape_size(a, a.rank - 2, a.rank) / m : 0;
      for (int64_t b = 0; b < batch; b++)
        add_gemm(gs, m, out.dim[out.rank - 1], k);
    } else if (ts_node_op(n) == TS_OP_CONV2D && out.rank == 4) {
      ts_shape f = input_shape(g, n, 1); /* [KH, KW, C, O] */
      add_gemm(gs, shape_size(out, 0, 3), out.dim[3], shape_size(f, 0, 3));
    }
  }
}

/* One GEMM on one library: OpenBLAS (kern NULL) or one of our tiles. */
typedef struct gemm_on {
  const gemm *g;
  const ts_tile_kernel *kern;
} gemm_on;

static bool run_gemm_on(void *data, int iters)
{
  const gemm_on *on = data;
  const gemm *g = on->g;
  ts_gemm tg = { g->m, g->n, g->k, false, false, g->a, g->b, NULL, g->c, TS_ACT_NONE };
  bench_sgemm_fn sgemm = on->kern ? NULL : bench_sgemm();
  for (int i = 0; i < iters; i++) {
    if (on->kern)
      ts__gemm_f32_with(on->kern, &tg);
    else
      sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->m, g->n, g->k, 1.0f, g->a, g->k, g->b,
            g->n, 0.0f, g->c, g->n);
  }
  return true;
}

/* ns of the workload's GEMMs, each shape on its fastest library (timed
 * once per shape). */
static double gemms_floor(const gemms *gs)
{
  const ts_tile_kernel *libs[] = { NULL, ts__tile_best(), &ts__tile_avx512_wide };
  double total = 0, *best_of = g_new(double, gs->list->len);
  for (guint j = 0; j < gs->list->len; j++) {
    const gemm *g = &g_array_index(gs->list, gemm, j);
    double best = -1;
    for (guint i = 0; i < j && best < 0; i++) {
      const gemm *h = &g_array_index(gs->list, gemm, i);
      if (h->m == g->m && h->n == g->n && h->k == g->k)
        best = best_of[i];
    }
    bool timed = best >= 0; /* an earlier GEMM of its shape */
    for (size_t l = 0; l < G_N_ELEMENTS(libs) && !timed; l++) {
      if (libs[l] && !libs[l]->usable(ts__cpu()))
        continue;
      gemm_on on = { g, libs[l] };
      double ns = fastest_per_call(run_gemm_on, &on);
      best = best < 0 || ns < best ? ns : best;
    }
    best_of[j] = best;
    total += best;
  }
  g_free(best_of);
  return total;
}

static void gemms_free(gemms *gs)
{
  for (guint j = 0; j < gs->list->len; j++) {
    gemm *g = &g_array_index(gs->list, gemm, j);
    g_free(g->a);
    g_free(g->b);
    g_free(g->c);
  }
  g_array_free(gs->list, TRUE);
}

/* "100 x 10x10x10" or "20x784x64 + 99 x 20x64x64 + 20x64x10": the GEMMs as M x K x N runs. */
static char *gemms_describe(const gemms *gs)
{
  GString *s = g_string_new(NULL);
  for (guint j = 0; j < gs->list->len;) {
    const gemm *g = &g_array_index(gs->list, gemm, j);
    guint run = 1;
    while (j + run < gs->list->len) {
      const gemm *h = &g_array_index(gs->list, gemm, j + run);
      if (h->m != g->m || h->n != g->n || h->k != g->k)
        break;
      run++;
    }
    g_string_append_printf(s, "%s", s->len ? " + " : "");
    if (run > 1)
      g_string_append_printf(s, "%u x ", run);
    g_string_append_printf(s, "%dx%dx%d", g->m, g->k, g->n);
    j += run;
  }
  return g_string_free(s, FALSE);
}

/* ---- one workload --------------------------------------------------------------- */

static void json_number(const char *name, double ns, bool last)
{
  if (ns < 0)
    printf("      \"%s\": null%s\n", name, last ? "" : ",");
  else
    printf("      \"%s\": %.3f%s\n", name, ns / 1e3, last ? "" : ",");
}

static void json_error(const char *what)
{
  ts_error *e = ts_error_take();
  char *msg = g_strescape(e ? e->message : "failed", NULL);
  printf("      \"error\": \"%s: %s\",\n", what, msg);
  g_free(msg);
  ts_error_free(e);
}

static void bench_workload(ts_module *seeds, const peer_workload *w, bool last)
{
  ts_scope *scope = ts_scope_begin();
  call c = { .fn = ts_module_lookup(seeds, w->seed) };
  printf("    \"%s\": {\n      \"label\": \"%s\",\n", w->key, w->label);
  double eager = -1, graph = -1, floor = -1;
  if (!c.fn) {
    ts_error_set(TS_ERR_NOT_FOUND, TS_HERE, NULL, "no function '%s' in seeds", w->seed);
    json_error(w->seed);
  } else {
    c.n_args = w->args(c.args);
    int quiet = test_quiet_begin();
    c.eager = true;
    eager = fastest_per_call(run_calls, &c);
    c.eager = false;
    graph = eager >= 0 ? fastest_per_call(run_calls, &c) : -1;
    test_quiet_end(quiet);
    if (graph < 0)
      json_error(w->seed);
    gemms gs = { g_array_new(FALSE, FALSE, sizeof(gemm)) };
    ts_concrete *cf = ts_function_n_concrete(c.fn) ? ts_function_concrete(c.fn, 0) : NULL;
    if (cf)
      collect_gemms(&gs, ts_concrete_graph(cf));
    if (gs.list->len) {
      floor = gemms_floor(&gs);
      char *what = gemms_describe(&gs);
      printf("      \"gemms\": \"%s\",\n", what);
      g_free(what);
    }
    gemms_free(&gs);
  }
  json_number("eager_us", eager, false);
  json_number("graph_us", graph, false);
  json_number("floor_us", floor, true);
  printf("    }%s\n", last ? "" : ",");
  ts_scope_end(scope);
}

/* ---- trace + optimize + plan of sequential_model -------------------------------- */

/* Bytes the memory planner sets aside for cf's intermediates at their
 * peak (its arena); -1 without a plan, or with an engine built before the
 * planner's API (bench/meson.build looks for it in tracescope.h). */
static int64_t plan_peak_bytes(const ts_concrete *cf)
{
  ts_memory_plan plan;
  return ts_concrete_memory_plan(cf, &plan) ? plan.peak_bytes : -1;
}

/* ts_function_get_concrete traces, optimizes and plans (function.c); the
 * median over fresh copies of the function (the module opened again, so
 * its cache starts empty; its weights exist already, made in the
 * workloads above, so the model's build is not counted). */
static void bench_trace_plan(void)
{
  int64_t t[REPEATS], peak = -1;
  int nodes = 0;
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(20, 28, 28));
  for (int r = 0; r < REPEATS; r++) {
    ts_module *m = ts_module_open("seeds");
    ts_function *fn = m ? ts_module_lookup(m, "sequential_model") : NULL;
    uint64_t t0 = ts_now_ns();
    ts_concrete *cf = fn ? ts_function_get_concrete(fn, &spec, 1) : NULL;
    t[r] = (int64_t)(ts_now_ns() - t0);
    if (cf) {
      nodes = ts_graph_n_nodes(ts_concrete_graph(cf));
      peak = plan_peak_bytes(cf);
    }
    if (m)
      ts_module_free(m);
    if (!cf) {
      printf("  \"trace_plan\": {\n");
      json_error("sequential_model");
      printf("      \"us\": null\n  },\n");
      return;
    }
  }
  qsort(t, REPEATS, sizeof t[0], cmp_i64);
  printf("  \"trace_plan\": {\"us\": %.1f, \"nodes\": %d, \"peak_plan_bytes\": ",
         (double)t[REPEATS / 2] / 1e3, nodes);
  if (peak < 0)
    printf("null},\n");
  else
    printf("%lld},\n", (long long)peak);
}

/* s as the inside of a JSON string (UTF-8 kept as it is). */
static char *json_escape(const char *s)
{
  GString *out = g_string_new(NULL);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      g_string_append_printf(out, "\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      g_string_append_printf(out, "\\u%04x", *s);
    else
      g_string_append_c(out, *s);
  }
  return g_string_free(out, FALSE);
}

/* Is w among the workloads named on the command line (all when none)? */
static bool wanted(const peer_workload *w, int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], w->key) == 0)
      return true;
  return argc < 2;
}

/* tracescope-bench-peers [WORKLOAD...]: all workloads, or those named
 * (dense64, conv, ...: a profiler's run of one). */
int main(int argc, char **argv)
{
  ts_module *seeds = ts_module_open("seeds");
  if (!seeds) {
    ts_error *e = ts_error_take();
    fprintf(stderr, "tracescope-bench-peers: %s\n", e ? e->message : "cannot open seeds");
    ts_error_free(e);
    return 1;
  }
  g_random_set_seed(1);
  const char *env = g_getenv("TRACESCOPE_THREADS");
  int threads = env ? atoi(env) : 0;
  char count[16] = "null";
  if (threads > 0)
    g_snprintf(count, sizeof count, "%d", threads);
  printf("{\n  \"threads\": %s,\n", count);
  printf("  \"workloads\": {\n");
  int last = -1;
  for (int i = 0; i < PEER_N_WORKLOADS; i++)
    if (wanted(&PEER_WORKLOADS[i], argc, argv))
      last = i;
  for (int i = 0; i <= last; i++)
    if (wanted(&PEER_WORKLOADS[i], argc, argv))
      bench_workload(seeds, &PEER_WORKLOADS[i], i == last);
  printf("  },\n");
  bench_trace_plan();
  /* after the workloads: the engine has met (and chosen a kernel for) their shapes */
  /* the engine's, not the copy of the kernels linked here for the floor */
  char *(*engine_choices)(void) = (char *(*)(void))bench_engine_symbol("ts_kernel_choices");
  const char *(*engine_cpu)(void) = (const char *(*)(void))bench_engine_symbol("ts_cpu_description");
  const char *(*engine_blas)(void) = (const char *(*)(void))bench_engine_symbol("ts_blas_description");
  g_autofree char *choices = engine_choices();
  g_autoptr(GString) lines = g_string_new(NULL);
  g_auto(GStrv) split = g_strsplit(choices ? choices : "", "\n", -1);
  for (char **l = split; *l; l++)
    if (**l) {
      g_autofree char *q = json_escape(*l);
      g_string_append_printf(lines, "%s\"%s\"", lines->len ? ", " : "", q);
    }
  g_autofree char *cpu = json_escape(engine_cpu());
  g_autofree char *blas = json_escape(engine_blas());
  printf("  \"cpu\": \"%s\",\n  \"blas\": \"%s\",\n  \"kernels\": [%s],\n", cpu, blas, lines->str);
  printf("  \"repeats\": %d\n}\n", REPEATS);
  ts_module_free(seeds);
  ts_release_all();
  return 0;
}
