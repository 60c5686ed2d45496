/* bench-gpu.c — the GPU benchmark (issue 26): on CUDA:0, the seed
 * workloads power(x,100) and the 100-layer model (100 x Dense(64)) in our
 * eager and graph modes beside PyTorch CUDA eager and torch.cuda.CUDAGraph
 * replay (bench/peers/torch_gpu_bench.py, on the weights and inputs
 * tracescope-bench-export saves); a 4096² f32 product through the engine
 * against cuBLAS alone (cublasSgemm, its own buffers); a While of 100
 * iterations run by the device inside the graph (conditional nodes)
 * against the same body unrolled at trace time; CUPTI recording on against
 * off, and the overhead broken down by what CUPTI records.  Each target is printed with MET or MISSED.  Times are per call,
 * the fastest of rounds, each call waiting for the device (as PyTorch's
 * side synchronizes too).  Without a CUDA device it prints "skipped: no
 * CUDA device (why)" and succeeds.  A benchmark, not a test.
 *
 *   tracescope-bench-gpu [--no-peers] */
#include "peers-workloads.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope-backend.h>
#include <tracescope.h>

#define ROUNDS 5
#define CALLS 20

static const ts_backend *gpu;

static void target(const char *what, bool met)
{
  printf("  target %-58s %s\n", what, met ? "MET" : "MISSED");
}

/* ---- our modes ------------------------------------------------------------------ */

static double per_call_us(ts_function *fn, const ts_value *args, int n, bool eager)
{
  ts_run_functions_eagerly(eager);
  double best = -1;
  TS_DEVICE_SCOPE(gpu) {
    for (int r = 0; r < ROUNDS + 1; r++) { /* the first round warms up (traces, captures) */
      uint64_t t0 = ts_now_ns();
      for (int i = 0; i < CALLS; i++) {
        ts_scope *scope = ts_scope_begin();
        ts_tensor *y = ts_function_call(fn, args, n);
        if (!y || !ts_backend_synchronize(gpu))
          g_error("%s on %s: %s", ts_function_name(fn), ts_backend_name(gpu),
                  ts_error_peek()->message);
        ts_scope_end(scope);
      }
      double us = (double)(ts_now_ns() - t0) / 1e3 / CALLS;
      if (r > 0 && (best < 0 || us < best))
        best = us;
    }
  }
  ts_run_functions_eagerly(false);
  return best;
}

/* The largest difference between f's result on the GPU (mode) and on the CPU. */
static double diff_from_cpu(ts_function *fn, const ts_value *cpu_args, const ts_value *args,
                            int n, bool eager)
{
  ts_scope *scope = ts_scope_begin();
  ts_run_functions_eagerly(eager);
  /* the GPU first: a model's layers make their variables where they first
   * run, and the GPU reading the CPU's would copy every weight in on every
   * call (a graph doing so cannot be replayed as captured); the CPU reads
   * the GPU's through copies */
  ts_tensor *got = NULL;
  TS_DEVICE_SCOPE(gpu) { got = ts_function_call(fn, args, n); }
  ts_tensor *want = ts_function_call(fn, cpu_args, n);
  ts_run_functions_eagerly(false);
  got = got ? ts_tensor_to_backend(got, ts_backend_cpu()) : NULL;
  double worst = INFINITY;
  if (want && got && ts_tensor_size(want) == ts_tensor_size(got)) {
    ts_tensor *w = ts_cast(want, TS_F64), *g = ts_cast(got, TS_F64);
    const double *a = ts_tensor_data(w), *b = ts_tensor_data(g);
    worst = 0;
    for (int64_t i = 0; i < ts_tensor_size(w); i++)
      worst = fmax(worst, fabs(a[i] - b[i]));
  }
  ts_scope_end(scope);
  return worst;
}

/* ---- a While on the device -------------------------------------------------------------- */

#define LOOP_N 100

/* x through tanh(x w) n times, n a tensor argument: a While the device
 * runs inside the call's CUDA Graph. */
static ts_tensor *while_layers(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *w = ts_arg(c, 1), *n = ts_arg(c, 2), *i = ts_scalar_i32(0);
  TS_WHILE (ts_less(i, n), &x, &i) {
    x = ts_tanh(ts_matmul(x, w));
    i = ts_add(i, ts_scalar_i32(1));
  }
  return x;
}

/* The same body LOOP_N times in the trace (a Python for over a range). */
static ts_tensor *unrolled_layers(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *w = ts_arg(c, 1);
  for (int i = 0; i < LOOP_N; i++)
    x = ts_tanh(ts_matmul(x, w));
  return x;
}

/* Per call µs of the While in graph mode and eagerly and of the unrolled
 * graph; the target: the device's loop within 1.5x of the unrolled graph. */
static void bench_loops(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(32, 64), -1, 1, 1);
  ts_tensor *w = ts_mul(ts_random_uniform(TS_F32, TS_SHAPE(64, 64), -1, 1, 2), ts_scalar_f32(0.125f));
  ts_value cpu_args[3] = { TS_TENSOR_VALUE(x), TS_TENSOR_VALUE(w),
                           TS_TENSOR_VALUE(ts_scalar_i32(LOOP_N)) };
  ts_value args[3];
  for (int i = 0; i < 3; i++)
    args[i] = TS_TENSOR_VALUE(ts_tensor_to_backend(cpu_args[i].tensor, gpu));
  ts_function *looped = ts_function_new("while_layers", while_layers, "x, w, n");
  ts_function *unrolled = ts_function_new("unrolled_layers", unrolled_layers, "x, w");
  double diff = fmax(diff_from_cpu(looped, cpu_args, args, 3, false),
                     diff_from_cpu(unrolled, cpu_args, args, 2, false));
  double graph = per_call_us(looped, args, 3, false), eager = per_call_us(looped, args, 3, true);
  double flat = per_call_us(unrolled, args, 2, false);
  ts_value probe[3] = { args[0], args[1], args[2] };
  ts_schedule sched = { 0 };
  ts_concrete_schedule(ts_function_get_concrete(looped, probe, 3), &sched);
  printf("  While of %d x tanh(x[32,64] w[64,64]), µs per call: graph %.1f (%" G_GINT64_FORMAT
         " captures, %" G_GINT64_FORMAT " replays), eager %.1f; unrolled graph %.1f; "
         "|ours-cpu| %.2g\n",
         LOOP_N, graph, sched.n_captures, sched.n_replays, eager, flat, diff);
  target("While graph within 1.5x of the unrolled graph", graph <= 1.5 * flat);
  ts_function_free(looped);
  ts_function_free(unrolled);
  ts_scope_end(scope);
}

/* ---- PyTorch ------------------------------------------------------------------------- */

typedef struct torch_row {
  char key[32];
  double eager_us, graph_us, diff;
} torch_row;

/* Runs argv; its stdout (or NULL) and, failing, why. */
static char *run(char **argv, char **why)
{
  char *out = NULL, *err = NULL;
  int status = 0;
  GError *e = NULL;
  if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status, &e) ||
      !g_spawn_check_wait_status(status, &e)) {
    *why = g_strdup_printf("%s failed: %s%s%s", argv[0], e ? e->message : "",
                           err && *err ? ": " : "", err ? err : "");
    g_clear_pointer(&out, g_free);
  }
  g_clear_error(&e);
  g_free(err);
  return out;
}

/* Runs the export and torch_gpu_bench.py; rows read back, or a reason. */
static int torch_rows(torch_row *rows, int cap, char **why)
{
  char *dir = g_dir_make_tmp("tracescope-bench-gpu-XXXXXX", NULL);
  if (!dir) {
    *why = g_strdup("no temporary folder");
    return 0;
  }
  char *export_argv[] = { TS_BENCH_EXPORT, dir, NULL };
  char *torch_argv[] = { "python3", TS_BENCH_PEERS_DIR "/torch_gpu_bench.py", dir, NULL };
  char *rm_argv[] = { "rm", "-rf", dir, NULL };
  char *exported = run(export_argv, why);
  char *out = exported ? run(torch_argv, why) : NULL;
  int n = 0;
  char **lines = g_strsplit(out ? out : "", "\n", -1);
  for (int i = 0; lines[i]; i++) {
    torch_row *r = &rows[n];
    if (g_str_has_prefix(lines[i], "skipped: ") && !*why)
      *why = g_strdup(lines[i] + strlen("skipped: "));
    else if (n < cap && sscanf(lines[i], "row %31s %lf %lf %lf", r->key, &r->eager_us,
                               &r->graph_us, &r->diff) == 4)
      n++;
  }
  g_strfreev(lines);
  g_free(out);
  g_free(exported);
  char *ignored = NULL;
  g_free(run(rm_argv, &ignored));
  g_free(ignored);
  g_free(dir);
  return n;
}

/* ---- the 4096² product against cuBLAS alone ---------------------------------------- */

static double matmul_ratio(void)
{
  enum { N = 4096, REPS = 20 };
  ts_scope *scope = ts_scope_begin();
  ts_tensor *a = NULL, *b = NULL;
  TS_DEVICE_SCOPE(gpu) {
    a = ts_random_uniform(TS_F32, TS_SHAPE(N, N), -1, 1, 1);
    b = ts_random_uniform(TS_F32, TS_SHAPE(N, N), -1, 1, 2);
  }
  a = ts_tensor_to_backend(a, gpu);
  b = ts_tensor_to_backend(b, gpu);
  double ours = INFINITY, theirs = INFINITY;
  for (int r = 0; r < 3; r++) {
    uint64_t t0 = ts_now_ns();
    TS_DEVICE_SCOPE(gpu) {
      for (int i = 0; i < REPS; i++) {
        ts_scope *s = ts_scope_begin();
        ts_matmul(a, b);
        ts_scope_end(s);
      }
    }
    ts_backend_synchronize(gpu);
    ours = fmin(ours, (double)(ts_now_ns() - t0) / REPS);
  }
  /* cuBLAS on its own buffers (the engine's are not the host's to name),
   * the same column-major trick: row-major C = A B as Cᵀ = Bᵀ Aᵀ; every
   * byte 0x3c, about 0.0115 (values do not change a product's time) */
  float *da = NULL, *db = NULL, *dc = NULL;
  size_t bytes = (size_t)N * N * sizeof(float);
  cublasHandle_t h;
  float one = 1, zero = 0;
  if (cudaMalloc((void **)&da, bytes) != cudaSuccess || cudaMalloc((void **)&db, bytes) != cudaSuccess ||
      cudaMalloc((void **)&dc, bytes) != cudaSuccess || cudaMemset(da, 0x3c, bytes) != cudaSuccess ||
      cudaMemset(db, 0x3c, bytes) != cudaSuccess || cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
    g_error("cuBLAS: no handle or memory");
  cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH); /* f32, as ours: no TF32 */
  for (int r = 0; r < 4; r++) {
    uint64_t t0 = ts_now_ns();
    for (int i = 0; i < REPS; i++)
      cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, db, N, da, N, &zero, dc, N);
    cudaDeviceSynchronize();
    if (r > 0) /* the first warms up */
      theirs = fmin(theirs, (double)(ts_now_ns() - t0) / REPS);
  }
  cublasDestroy(h);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  ts_scope_end(scope);
  printf("  4096x4096 f32 MatMul: ours %.3f ms, cuBLAS alone %.3f ms (%.0f %%)\n", ours / 1e6,
         theirs / 1e6, 100 * theirs / ours);
  return theirs / ours;
}

/* ---- CUPTI on against off ------------------------------------------------------------- */

typedef struct tally {
  uint64_t records, kernels, charged; /* charged: kernels with an op's or a launch's id */
} tally;

static void on_activity(const ts_activity *records, int n, void *data)
{
  tally *t = data;
  t->records += (uint64_t)n;
  for (int i = 0; i < n; i++)
    if (records[i].kind == TS_ACTIVITY_KERNEL) {
      t->kernels++;
      t->charged += records[i].correlation != 0;
    }
}

/* 100 x Dense(64) in graph mode ([0]) and eagerly ([1]) with a collector
 * subscribed and CUPTI recording `kinds` (TRACESCOPE_CUPTI_KINDS, read by
 * the CUDA backend when recording starts: engine/backend/cuda/cuda.c;
 * NULL: the default kinds).  One eager call after unsubscribing lets the
 * backend see that no collector is left (it looks as an op launches), so
 * that the next phase starts recording afresh with its own kinds. */
static tally cupti_phase(const char *kinds, ts_function *fn, const ts_value *args, int n,
                         double us[2])
{
  tally t = { 0 };
  if (kinds)
    g_setenv("TRACESCOPE_CUPTI_KINDS", kinds, TRUE);
  else
    g_unsetenv("TRACESCOPE_CUPTI_KINDS");
  if (!ts_activity_subscribe(on_activity, &t))
    g_error("bench-gpu: %s", ts_error_peek()->message);
  us[0] = per_call_us(fn, args, n, false);
  us[1] = per_call_us(fn, args, n, true);
  ts_activity_flush();
  ts_activity_unsubscribe(on_activity, &t);
  g_unsetenv("TRACESCOPE_CUPTI_KINDS");
  ts_scope *scope = ts_scope_begin();
  ts_run_functions_eagerly(true); /* op by op: each op's launch looks */
  TS_DEVICE_SCOPE(gpu) {
    if (!ts_function_call(fn, args, n) || !ts_backend_synchronize(gpu))
      g_error("bench-gpu: %s", ts_error_peek()->message);
  }
  ts_run_functions_eagerly(false);
  ts_scope_end(scope);
  return t;
}

/* Where recording's overhead comes from: the backend's own bookkeeping
 * with CUPTI recording nothing, then CUPTI's kinds added a few at a time
 * (the default set and the old one with SYNCHRONIZATION among them), and
 * a candidate that records the API calls of launches and copies alone
 * (launch-api) instead of every runtime and driver call.  "charged" says
 * whether kernels still reach their ops under each set (external
 * correlation needs API records beside it). */
static const struct {
  const char *label, *kinds;
} CUPTI_PHASES[] = {
  { "ours alone (CUPTI records nothing)", "none" },
  { "kernel", "kernel" },
  { "kernel memcpy memset", "kernel,memcpy,memset" },
  { "+ external, launch APIs only", "kernel,memcpy,memset,external,launch-api" },
  { "+ external, runtime, driver (default)", NULL },
  { "+ sync (the default before)", "kernel,memcpy,memset,sync,external,runtime,driver" },
};

int main(int argc, char **argv)
{
  bool peers = !(argc > 1 && strcmp(argv[1], "--no-peers") == 0);
  printf("==== bench-gpu\n");
  gpu = ts_backend_by_name("CUDA:0");
  if (!gpu) {
    printf("skipped: no CUDA device (%s)\n", ts_backend_devices_note());
    return 0;
  }
  printf("%s\n", ts_backend_devices_note());
  ts_module *m = ts_module_open("seeds");
  if (!m)
    g_error("bench-gpu: %s", ts_error_peek()->message);

  ts_scope *scope = ts_scope_begin(); /* the workloads' arguments */
  torch_row torch[8];
  char *why = NULL;
  int n_torch = peers ? torch_rows(torch, 8, &why) : 0;
  if (!peers)
    why = g_strdup("--no-peers");

  printf("µs per call, fastest of %d rounds of %d calls, each synchronized\n", ROUNDS, CALLS);
  printf("  %-24s %10s %10s %8s %11s %11s %10s\n", "workload", "eager", "graph", "e/g",
         "torch eager", "torch graph", "|ours-cpu|");
  const char *keys[] = { "power", "dense64" };
  double eager_us[2], graph_us[2];
  ts_function *fns[2];
  ts_value args[2][PEER_MAX_ARGS], dev_args[2][PEER_MAX_ARGS];
  int n_args[2];
  for (int w = 0; w < 2; w++) {
    const peer_workload *pw = NULL;
    for (int i = 0; i < PEER_N_WORKLOADS; i++)
      if (strcmp(PEER_WORKLOADS[i].key, keys[w]) == 0)
        pw = &PEER_WORKLOADS[i];
    fns[w] = ts_module_lookup(m, pw->seed);
    n_args[w] = pw->args(args[w]);
    for (int i = 0; i < n_args[w]; i++) { /* the inputs live on the GPU, as torch's do */
      dev_args[w][i] = args[w][i];
      if (args[w][i].kind == TS_VALUE_TENSOR)
        dev_args[w][i].tensor = ts_tensor_to_backend(args[w][i].tensor, gpu);
    }
    double diff = fmax(diff_from_cpu(fns[w], args[w], dev_args[w], n_args[w], true),
                       diff_from_cpu(fns[w], args[w], dev_args[w], n_args[w], false));
    eager_us[w] = per_call_us(fns[w], dev_args[w], n_args[w], true);
    graph_us[w] = per_call_us(fns[w], dev_args[w], n_args[w], false);
    const torch_row *t = NULL;
    for (int i = 0; i < n_torch; i++)
      if (strcmp(torch[i].key, keys[w]) == 0)
        t = &torch[i];
    printf("  %-24s %10.1f %10.1f %7.2fx", pw->label, eager_us[w], graph_us[w],
           eager_us[w] / graph_us[w]);
    if (t)
      printf(" %11.1f %11.1f", t->eager_us, t->graph_us);
    else
      printf(" %11s %11s", "-", "-");
    printf(" %10.2g\n", diff);
  }
  if (why)
    printf("  PyTorch: skipped: %s\n", why);
  for (int w = 0; w < 2; w++) {
    char what[96];
    snprintf(what, sizeof what, "%s: graph >= 3x our GPU eager", keys[w]);
    target(what, eager_us[w] >= 3 * graph_us[w]);
    for (int i = 0; i < n_torch; i++)
      if (strcmp(torch[i].key, keys[w]) == 0) {
        snprintf(what, sizeof what, "%s: graph within 1.2x of torch CUDAGraph", keys[w]);
        target(what, graph_us[w] <= 1.2 * torch[i].graph_us);
        snprintf(what, sizeof what, "%s: ahead of torch CUDA eager", keys[w]);
        target(what, fmin(eager_us[w], graph_us[w]) < torch[i].eager_us);
      }
  }

  target("4096^2 f32 MatMul >= 90% of cuBLAS alone", matmul_ratio() >= 0.9);
  bench_loops();

  /* CUPTI: a collector subscribed turns recording on (engine/backend/cuda/cuda.c) */
  double off[2] = { per_call_us(fns[1], dev_args[1], n_args[1], false),
                    per_call_us(fns[1], dev_args[1], n_args[1], true) };
  double on[2] = { 0, 0 };
  uint64_t records = 0;
  printf("  CUPTI overhead by what is recorded, 100 x Dense(64), µs per call (+%% over off):\n");
  printf("    %-40s %9s %8s %9s %8s %9s %15s\n", "recording", "graph", "", "eager", "",
         "records", "kernels charged");
  printf("    %-40s %9.1f %8s %9.1f %8s\n", "off (no collector)", off[0], "", off[1], "");
  for (size_t i = 0; i < G_N_ELEMENTS(CUPTI_PHASES); i++) {
    double us[2];
    tally t = cupti_phase(CUPTI_PHASES[i].kinds, fns[1], dev_args[1], n_args[1], us);
    printf("    %-40s %9.1f %+7.1f%% %9.1f %+7.1f%% %9" G_GUINT64_FORMAT " %7" G_GUINT64_FORMAT
           "/%-7" G_GUINT64_FORMAT "\n",
           CUPTI_PHASES[i].label, us[0], 100 * (us[0] / off[0] - 1), us[1],
           100 * (us[1] / off[1] - 1), t.records, t.charged, t.kernels);
    if (!CUPTI_PHASES[i].kinds) {
      on[0] = us[0], on[1] = us[1];
      records = t.records;
    }
  }
  double after[2] = { per_call_us(fns[1], dev_args[1], n_args[1], false),
                      per_call_us(fns[1], dev_args[1], n_args[1], true) };
  printf("    %-40s %9.1f %+7.1f%% %9.1f %+7.1f%%\n", "off again (CUPTI attached, idle)", after[0],
         100 * (after[0] / off[0] - 1), after[1], 100 * (after[1] / off[1] - 1));
  printf("  CUPTI on/off, 100 x Dense(64): graph %.1f / %.1f µs (+%.1f %%), eager %.1f / %.1f µs "
         "(+%.1f %%); %" G_GUINT64_FORMAT " records, %" G_GUINT64_FORMAT " dropped\n",
         on[0], off[0], 100 * (on[0] / off[0] - 1), on[1], off[1], 100 * (on[1] / off[1] - 1),
         records, ts_activity_dropped());
  target("CUPTI recording <= 3% overhead in graph mode", on[0] <= 1.03 * off[0]);
  target("CUPTI recording <= 10% overhead eagerly", on[1] <= 1.10 * off[1]);
  target("zero dropped records", ts_activity_dropped() == 0 && records > 0);

  g_free(why);
  ts_scope_end(scope);
  ts_module_free(m);
  return 0;
}
