/* bench.c — the seed workloads eagerly and as graphs, the cost of tracing
 * (first call against a repeat call, tracing alone, a cache hit), eager
 * dispatch overhead, and large sgemm against OpenBLAS.  A benchmark, not a
 * test: warm-up runs, then the median of several timed repeats. */
#include "bench-blas.h"
#include "test-quiet.h" /* the seeds print: to /dev/null while timing */

#include <cblas.h> /* its constants only: the library is the engine's (bench-blas.h) */
#include <fcntl.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>
#include <unistd.h>

#define REPEATS 7
#define WARMUP 2

/* One timed batch of `iters` calls, returning total ns; -1 on error. */
typedef int64_t (*batch_fn)(void *data, int iters);

static int cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static double median(int64_t *t, int n, int iters)
{
  qsort(t, (size_t)n, sizeof t[0], cmp_i64);
  return (double)t[n / 2] / iters;
}

/* Median time per call in ns, or a negative number on error. */
static double median_per_call(batch_fn fn, void *data, int iters)
{
  int64_t t[REPEATS];
  for (int i = 0; i < WARMUP; i++)
    if (fn(data, iters) < 0)
      return -1;
  for (int i = 0; i < REPEATS; i++)
    if ((t[i] = fn(data, iters)) < 0)
      return -1;
  return median(t, REPEATS, iters);
}

/* Like median_per_call for two batches timed alternately, so that load from
 * elsewhere on the machine hits both alike.  False on error. */
static bool median_pair(batch_fn fa, batch_fn fb, void *data, int iters, double *ma, double *mb)
{
  int64_t ta[REPEATS], tb[REPEATS];
  for (int i = 0; i < WARMUP; i++)
    if (fa(data, iters) < 0 || fb(data, iters) < 0)
      return false;
  for (int i = 0; i < REPEATS; i++)
    if ((ta[i] = fa(data, iters)) < 0 || (tb[i] = fb(data, iters)) < 0)
      return false;
  *ma = median(ta, REPEATS, iters);
  *mb = median(tb, REPEATS, iters);
  return true;
}

#define NAME_W 50

/* A table of one time per row: "workload   time per call   notes". */
static void heading(const char *title)
{
  printf("\n%s\n  %-*s %15s   %s\n", title, NAME_W, "workload", "time per call", "notes");
}

/* A row of the tracing and kernel tables: one time and a note. */
static void row(const char *name, double us, const char *note)
{
  printf("  %-*s %12.2f µs   %s\n", NAME_W, name, us, note);
}

static void row_error(const char *name)
{
  ts_error *e = ts_error_take();
  printf("  %-*s %12s      %s\n", NAME_W, name, "failed", e ? e->message : "");
  ts_error_free(e);
}

/* A function to call: fn with its arguments (tensors in the bench's scope). */
typedef struct call {
  ts_function *fn;
  ts_value args[4];
  int n_args;
} call;

static ts_tensor *call_once(call *c, bool eager)
{
  return eager ? ts_function_call_eager(c->fn, c->args, c->n_args)
               : ts_function_call(c->fn, c->args, c->n_args);
}

static int64_t calls_batch(call *c, int iters, bool eager)
{
  uint64_t t0 = ts_now_ns();
  for (int i = 0; i < iters; i++) {
    ts_scope *s = ts_scope_begin();
    ts_tensor *out = call_once(c, eager);
    ts_scope_end(s);
    if (!out)
      return -1;
  }
  return (int64_t)(ts_now_ns() - t0);
}

static int64_t eager_batch(void *data, int iters)
{
  return calls_batch(data, iters, true);
}

static int64_t graph_batch(void *data, int iters)
{
  return calls_batch(data, iters, false);
}

/* ---- bench-local functions ---------------------------------------------------- */

/* The guide's first-invocation example: f(x, y) = matmul(x, y). */
static ts_tensor *matmul_fn(ts_call *c)
{
  return ts_matmul(ts_arg(c, 0), ts_arg(c, 1));
}

/* Returns its argument: a graph with nothing to execute. */
static ts_tensor *identity_fn(ts_call *c)
{
  return ts_arg(c, 0);
}

/* Returns its first argument; the others only shape the signature. */
static ts_tensor *first_of_three(ts_call *c)
{
  return ts_arg(c, 0);
}

#define CHAIN_OPS 1000

/* CHAIN_OPS dependent small adds: per-op overhead, eager against graph. */
static ts_tensor *add_chain(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *y = ts_arg(c, 1);
  for (int i = 0; i < CHAIN_OPS; i++)
    x = ts_add(x, y);
  return x;
}

/* ---- eager against graph --------------------------------------------------------- */

typedef struct workload {
  const char *label;
  const char *name; /* the seed function */
  int iters;
  const char *note;
} workload;


static bool quiet_pair(call *c, int iters, double *eager, double *graph)
{
  int saved = test_quiet_begin();
  bool ok = median_pair(eager_batch, graph_batch, c, iters, eager, graph);
  test_quiet_end(saved);
  return ok;
}

static void eager_graph_row(const char *label, call *c, int iters, const char *note)
{
  double eager, graph;
  if (!c->fn || !quiet_pair(c, iters, &eager, &graph)) {
    row_error(label);
    return;
  }
  printf("  %-*s %10.1f %10.1f %8.2fx   %s\n", NAME_W, label, eager / 1e3, graph / 1e3,
         eager / graph, note);
}

/* w's function; NULL (with an error) if the module lacks it. */
static ts_function *find_seed(ts_module *m, const workload *w)
{
  ts_function *fn = ts_module_lookup(m, w->name);
  if (!fn)
    ts_error_set(TS_ERR_NOT_FOUND, TS_HERE, NULL, "no function '%s' in seeds", w->name);
  return fn;
}

static ts_value tensor_arg(ts_tensor *t)
{
  return TS_TENSOR_VALUE(t);
}

/* The guides' inputs (seeded; the conv image smaller than the guide's
 * 200x200 to keep the run short). */
static int power_args(ts_value *a)
{
  a[0] = tensor_arg(ts_random_uniform(TS_F32, TS_SHAPE(10, 10), -1, 2, 1));
  a[1] = TS_INT_VALUE(100);
  return 2;
}

static int model_args(ts_value *a)
{
  a[0] = tensor_arg(ts_random_uniform(TS_F32, TS_SHAPE(20, 28, 28), 0, 1, 1));
  return 1;
}

static int model60_args(ts_value *a)
{
  a[0] = tensor_arg(ts_random_uniform(TS_F32, TS_SHAPE(60, 28, 28), 0, 1, 1));
  return 1;
}

static int conv_args(ts_value *a)
{
  a[0] = tensor_arg(ts_zeros(TS_F32, TS_SHAPE(1, 64, 64, 100)));
  return 1;
}

static int lstm_args(ts_value *a) /* input, state_h, state_c */
{
  for (int i = 0; i < 3; i++)
    a[i] = tensor_arg(ts_zeros(TS_F32, TS_SHAPE(10, 10)));
  return 3;
}

static int mse_args(ts_value *a) /* y_true, y_pred */
{
  a[0] = tensor_arg(ts_constant(TS_I32, TS_SHAPE(5), (int32_t[]){ 1, 0, 1, 1, 0 }));
  a[1] = tensor_arg(ts_constant(TS_I32, TS_SHAPE(5), (int32_t[]){ 3, 1, 0, 2, 2 }));
  return 2;
}

static const struct workload_args {
  workload w;
  int (*args)(ts_value *a);
} WORKLOADS[] = {
  { { "get_MSE, int32[5]", "get_MSE", 2000, "four tiny integer ops" }, mse_args },
  { { "power(x, 100), x f32[10,10]", "power", 20, "100 chained 10x10 matmuls" }, power_args },
  { { "100 x Dense(64)+relu, x f32[20,28,28]", "sequential_model", 5,
      "flatten, 100 small layers, weights in variables" }, model_args },
  { { "Dense(128)+relu, Dense(10), x f32[60,28,28]", "dense_128_model", 50,
      "flatten, two layers, dropout inactive" }, model60_args },
  { { "conv 3x3, 100 -> 100 channels, f32[1,64,64,100]", "conv_fn", 3, "a few expensive ops" },
    conv_args },
  { { "LSTM cell, 10 units, input and state [10,10]", "lstm_fn", 200, "many tiny ops" },
    lstm_args },
};

static void bench_eager_graph(ts_module *seeds)
{
  printf("\nEager against graph (time per call; graph calls hit the cache: traced in warm-up)\n");
  /* µ takes two bytes: one more for printf's padding */
  printf("  %-*s %11s %11s %9s   %s\n", NAME_W, "workload", "eager µs", "graph µs", "speedup",
         "notes");
  for (size_t i = 0; i < G_N_ELEMENTS(WORKLOADS); i++) {
    const workload *w = &WORKLOADS[i].w;
    call c = { .fn = find_seed(seeds, w) };
    if (c.fn)
      c.n_args = WORKLOADS[i].args(c.args);
    eager_graph_row(w->label, &c, w->iters, w->note);
  }

  ts_function *chain = ts_function_new("add_chain", add_chain, "x, y");
  call c = { chain, { tensor_arg(ts_random_uniform(TS_F32, TS_SHAPE(10, 10), 0, 1, 1)),
                      tensor_arg(ts_random_uniform(TS_F32, TS_SHAPE(10, 10), 0, 1, 2)) }, 2 };
  double eager, graph;
  if (!median_pair(eager_batch, graph_batch, &c, 5, &eager, &graph))
    row_error("1000 x add 10x10 (per op)");
  else
    printf("  %-*s %10.3f %10.3f %8.2fx   %s\n", NAME_W, "1000 x add 10x10 f32 (per op)",
           eager / CHAIN_OPS / 1e3, graph / CHAIN_OPS / 1e3, eager / graph,
           "eager dispatch against the graph executor");
  ts_function_free(chain);
}

/* ---- optimizer passes ---------------------------------------------------------------- */

/* The fastest ns per call of k batches timed round-robin, so that load from
 * elsewhere on the (shared) machine hits all alike and least.  False on error. */
static bool median_round(batch_fn fn, void *const *calls, int k, int iters, double *out)
{
  int64_t t[4][REPEATS];
  for (int i = 0; i < WARMUP; i++)
    for (int c = 0; c < k; c++)
      if (fn(calls[c], iters) < 0)
        return false;
  for (int i = 0; i < REPEATS; i++)
    for (int c = 0; c < k; c++)
      if ((t[c][i] = fn(calls[c], iters)) < 0)
        return false;
  for (int c = 0; c < k; c++) {
    qsort(t[c], REPEATS, sizeof t[c][0], cmp_i64);
    out[c] = (double)t[c][0] / iters; /* the fastest: what the code costs without the others */
  }
  return true;
}

typedef struct timed_call {
  call *c;
  bool eager;
} timed_call;

static int64_t timed_batch(void *data, int iters)
{
  timed_call *t = data;
  return calls_batch(t->c, iters, t->eager);
}

/* Each workload in graph mode with every pass off and on, and eagerly, timed
 * round-robin.  A concrete function keeps the passes it was traced with, so
 * each setting has a module instance of its own, traced while it is chosen. */
static void bench_passes(void)
{
  enum { NONE, ALL, N_SETTINGS };
  static const char *const SETTINGS[N_SETTINGS] = { "none", "all" };
  char *saved = ts_get_passes();
  ts_module *m[N_SETTINGS] = { 0 };
  printf("\nOptimizer passes (graph mode with TRACESCOPE_PASSES=none and =all, and eager;\n"
         "timed round-robin, the fastest of %d runs)\n", REPEATS);
  printf("  %-*s %10s %12s %12s %8s %8s   %s\n", NAME_W, "workload", "eager µs", "none µs",
         "all µs", "all/none", "eager/all", "what the passes did");
  for (size_t i = 0; i < G_N_ELEMENTS(WORKLOADS); i++) {
    ts_scope *scope = ts_scope_begin();
    const workload *w = &WORKLOADS[i].w;
    call graph[N_SETTINGS] = { 0 };
    bool ok = true;
    for (int set = 0; set < N_SETTINGS && ok; set++) {
      ts_set_passes(SETTINGS[set]);
      if (!m[set])
        m[set] = ts_module_open("seeds");
      graph[set].fn = m[set] ? find_seed(m[set], w) : NULL;
      ok = graph[set].fn != NULL;
      if (ok)
        graph[set].n_args = WORKLOADS[i].args(graph[set].args);
      int quiet = test_quiet_begin();
      ok = ok && call_once(&graph[set], false) != NULL; /* traced now, with these passes */
      test_quiet_end(quiet);
    }
    ts_set_passes(saved);
    double t[3];
    timed_call runs[3] = { { &graph[NONE], true }, { &graph[NONE], false }, { &graph[ALL], false } };
    void *calls[3] = { &runs[0], &runs[1], &runs[2] };
    int quiet = test_quiet_begin();
    ok = ok && median_round(timed_batch, calls, 3, w->iters, t);
    test_quiet_end(quiet);
    if (!ok) {
      row_error(w->label);
      ts_scope_end(scope);
      continue;
    }
    GString *did = g_string_new(NULL);
    char **lines = g_strsplit(ts_concrete_pass_summary(ts_function_concrete(graph[ALL].fn, 0)),
                              "\n", -1);
    for (int k = 0; lines[k]; k++) /* the passes that did something */
      if (*lines[k] && !strstr(lines[k], " 0 node"))
        g_string_append_printf(did, "%s%s", did->len ? "; " : "", lines[k]);
    g_strfreev(lines);
    printf("  %-*s %9.2f %11.2f %11.2f %7.2fx %8.2fx   %s\n", NAME_W, w->label, t[0] / 1e3,
           t[1] / 1e3, t[2] / 1e3, t[1] / t[2], t[0] / t[2], did->len ? did->str : "nothing");
    g_string_free(did, TRUE);
    ts_scope_end(scope);
  }
  for (int set = 0; set < N_SETTINGS; set++)
    ts_module_free(m[set]);
  free(saved);
}

/* ---- tracing ------------------------------------------------------------------------ */

/* First and second call of a fresh function (the guide's "First invocation"
 * and "Second invocation"), medians over REPEATS fresh functions. */
typedef ts_function *(*fresh_fn)(void *data, ts_module **module);

static bool first_second(fresh_fn fresh, void *data, call *c, double *first, double *second)
{
  int64_t t1[REPEATS], t2[REPEATS];
  for (int r = 0; r < REPEATS; r++) {
    ts_module *module = NULL;
    c->fn = fresh(data, &module);
    if (!c->fn)
      return false;
    int64_t *t[2] = { &t1[r], &t2[r] };
    bool ok = true;
    for (int k = 0; k < 2 && ok; k++) {
      ts_scope *s = ts_scope_begin();
      uint64_t t0 = ts_now_ns();
      ok = ts_function_call(c->fn, c->args, c->n_args) != NULL;
      *t[k] = (int64_t)(ts_now_ns() - t0);
      ts_scope_end(s);
    }
    if (module)
      ts_module_free(module);
    else
      ts_function_free(c->fn);
    if (!ok)
      return false;
  }
  *first = median(t1, REPEATS, 1);
  *second = median(t2, REPEATS, 1);
  return true;
}

static ts_function *fresh_matmul(void *data, ts_module **module)
{
  return ts_function_new("f", matmul_fn, "x, y");
}

/* A fresh copy of a seed function: the module opened again, so the
 * function's cache starts empty.  *module owns it.  The module stays
 * loaded meanwhile, so sequential_model's weights (variables made once per
 * loaded module, in warm-up) are not made again: like the guide, the first
 * call counts the trace, not the model's build. */
static ts_function *fresh_seed(void *data, ts_module **module)
{
  *module = ts_module_open("seeds");
  return *module ? ts_module_lookup(*module, data) : NULL;
}

static void first_second_rows(const char *label, fresh_fn fresh, void *data, call *c)
{
  double first, second;
  char name[128], note[96];
  if (!first_second(fresh, data, c, &first, &second)) {
    row_error(label);
    return;
  }
  g_snprintf(name, sizeof name, "%s: first call", label);
  g_snprintf(note, sizeof note, "trace + plan + run (%.0fx the second)", first / second);
  row(name, first / 1e3, note);
  g_snprintf(name, sizeof name, "%s: second call", label);
  row(name, second / 1e3, "cache hit + run");
}

/* get_concrete_function of a fresh copy: trace, optimize and plan, no run. */
static void trace_only_row(const char *label, const char *seed, call *c)
{
  int64_t t[REPEATS];
  int n_nodes = 0;
  for (int r = 0; r < REPEATS; r++) {
    ts_module *module = NULL;
    ts_function *fn = fresh_seed((void *)seed, &module);
    uint64_t t0 = ts_now_ns();
    ts_concrete *cf = fn ? ts_function_get_concrete(fn, c->args, c->n_args) : NULL;
    t[r] = (int64_t)(ts_now_ns() - t0);
    if (cf)
      n_nodes = ts_graph_n_nodes(ts_concrete_graph(cf));
    ts_module_free(module);
    if (!cf) {
      row_error(label);
      return;
    }
  }
  char note[96];
  g_snprintf(note, sizeof note, "%d nodes; target <= 2000 µs", n_nodes);
  row(label, median(t, REPEATS, 1) / 1e3, note);
}

/* The passes alone on a traced graph (ts_graph_optimize), median of REPEATS. */
static void optimize_row(const char *label, const ts_graph *g, const char *passes)
{
  int64_t t[REPEATS];
  for (int r = 0; r < REPEATS; r++) {
    uint64_t t0 = ts_now_ns();
    ts_graph *out = ts_graph_optimize(g, passes, NULL);
    t[r] = (int64_t)(ts_now_ns() - t0);
    if (!out) {
      row_error(label);
      return;
    }
    ts_graph_free(out);
  }
  char note[96];
  g_snprintf(note, sizeof note, "%d nodes, passes: %s", ts_graph_n_nodes(g), passes);
  row(label, median(t, REPEATS, 1) / 1e3, note);
}

/* sequential_model's traced graph through all passes and through fuse. */
static void pass_rows(const char *seed, call *c)
{
  ts_module *module = NULL;
  ts_function *fn = fresh_seed((void *)seed, &module);
  ts_concrete *cf = fn ? ts_function_get_concrete(fn, c->args, c->n_args) : NULL;
  if (!cf) {
    row_error("passes on sequential_model");
  } else {
    optimize_row("passes on sequential_model's graph", ts_concrete_graph(cf), "all");
    optimize_row("fuse pass on sequential_model's graph", ts_concrete_graph(cf), "fuse");
  }
  if (module)
    ts_module_free(module);
}

/* A chain of EW_CHAIN elementwise ops, longer than a fused kernel takes:
 * the fuse pass looks at it and leaves it (the search was once quadratic). */
#define EW_CHAIN 16000

static ts_tensor *ew_chain_fn(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  for (int i = 0; i < EW_CHAIN / 2; i++)
    x = ts_tanh(ts_mul(x, x));
  return x;
}

/* ONE_SCOPE ops of one kind in no name scope: Add, Add_1, ... Add_3999
 * (finding each name once tried every one before it). */
#define ONE_SCOPE 4000

static ts_tensor *one_scope_fn(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  for (int i = 0; i < ONE_SCOPE; i++)
    x = ts_add(x, x);
  return x;
}

static void one_scope_row(void)
{
  int64_t t[REPEATS];
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(4));
  for (int r = 0; r < REPEATS; r++) {
    ts_function *fn = ts_function_new("one_scope", one_scope_fn, "x");
    uint64_t t0 = ts_now_ns();
    ts_concrete *cf = ts_function_get_concrete(fn, &spec, 1);
    t[r] = (int64_t)(ts_now_ns() - t0);
    ts_function_free(fn);
    if (!cf) {
      row_error("trace+optimize+plan 4000 Adds in one scope");
      return;
    }
  }
  row("trace+optimize+plan 4000 Adds in one scope", median(t, REPEATS, 1) / 1e3,
      "Add, Add_1, ... Add_3999");
}

static void long_chain_row(void)
{
  ts_function *fn = ts_function_new("ew_chain", ew_chain_fn, "x");
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(4));
  ts_concrete *cf = ts_function_get_concrete(fn, &spec, 1);
  if (!cf)
    row_error("fuse pass on a 16000-op elementwise chain");
  else
    optimize_row("fuse pass on a 16000-op elementwise chain", ts_concrete_graph(cf), "fuse");
  ts_function_free(fn);
}

/* A cache hit before execution starts.  The traced function returns its
 * argument, so its graph is one Placeholder wired to the output and the
 * executor runs no kernel: the whole call — the signature of the
 * arguments, the cache lookup, entering and leaving the executor, handing
 * the output to the caller's scope — is overhead that a real call pays
 * before (and around) its first kernel.  Calls share one scope per batch
 * so that the caller's own scope costs stay out. */
static int64_t hit_batch(void *data, int iters)
{
  call *c = data;
  ts_scope *s = ts_scope_begin();
  uint64_t t0 = ts_now_ns();
  for (int i = 0; i < iters; i++)
    if (!ts_function_call(c->fn, c->args, c->n_args)) {
      ts_scope_end(s);
      return -1;
    }
  int64_t ns = (int64_t)(ts_now_ns() - t0);
  ts_scope_end(s);
  return ns;
}

/* One eager op for scale: what the graph replaces. */
static int64_t identity_op_batch(void *data, int iters)
{
  call *c = data;
  ts_scope *s = ts_scope_begin();
  uint64_t t0 = ts_now_ns();
  for (int i = 0; i < iters; i++)
    if (!ts_identity(c->args[0].tensor)) {
      ts_scope_end(s);
      return -1;
    }
  int64_t ns = (int64_t)(ts_now_ns() - t0);
  ts_scope_end(s);
  return ns;
}

static void cache_hit_rows(void)
{
  ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(10, 10), 0, 1, 1);
  call one = { ts_function_new("identity", identity_fn, "x"), { tensor_arg(x) }, 1 };
  call three = { ts_function_new("first_of_three", first_of_three, "x, y, n"),
                 { tensor_arg(x), tensor_arg(x), TS_INT_VALUE(100) }, 3 };
  double ns;
  if ((ns = median_per_call(hit_batch, &one, 1000)) < 0)
    row_error("cache hit, f(x) = x");
  else
    row("cache hit, f(x) = x, x f32[10,10]", ns / 1e3,
        "signature + lookup + executor; target < 2 µs");
  if ((ns = median_per_call(hit_batch, &three, 1000)) < 0)
    row_error("cache hit, f(x, y, n)");
  else
    row("cache hit, f(x, y, n): 2 tensors + host int", ns / 1e3, "the same with three arguments");
  if ((ns = median_per_call(identity_op_batch, &one, 1000)) < 0)
    row_error("one eager op");
  else
    row("one eager op (Identity), for scale", ns / 1e3, "dispatch + infer + a view of x");
  ts_function_free(one.fn);
  ts_function_free(three.fn);
}

static void bench_tracing(ts_module *seeds)
{
  heading("Tracing (medians over fresh functions)");
  call mm = { NULL, { tensor_arg(ts_ones(TS_F32, TS_SHAPE(10, 10))),
                      tensor_arg(ts_ones(TS_F32, TS_SHAPE(10, 10))) }, 2 };
  first_second_rows("f(x, y) = matmul, 10x10", fresh_matmul, NULL, &mm);

  const struct workload_args *model = NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(WORKLOADS) && !model; i++)
    if (strcmp(WORKLOADS[i].w.name, "sequential_model") == 0)
      model = &WORKLOADS[i];
  if (!model || !find_seed(seeds, &model->w)) {
    row_error("100-layer model");
  } else {
    call c = { .fn = NULL };
    c.n_args = model->args(c.args);
    call spec = { NULL, { TS_SPEC_VALUE(TS_F32, TS_SHAPE(20, 28, 28)) }, 1 };
    trace_only_row("trace+optimize+plan sequential_model (100 layers)", model->w.name, &spec);
    pass_rows(model->w.name, &spec);
    first_second_rows("sequential_model", fresh_seed, (void *)model->w.name, &c);
  }
  long_chain_row();
  one_scope_row();
  cache_hit_rows();
}

/* ---- dispatch overhead: many ts_add on 10x10 ------------------------------- */

#define DISPATCH_OPS 10000

typedef struct add_loop {
  ts_tensor *a, *b;
} add_loop;

static int64_t add_batch(void *data, int iters)
{
  add_loop *l = data;
  uint64_t t0 = ts_now_ns();
  for (int i = 0; i < iters; i++) {
    ts_scope *s = ts_scope_begin();
    for (int k = 0; k < DISPATCH_OPS; k++)
      if (!ts_add(l->a, l->b)) {
        ts_scope_end(s);
        return -1;
      }
    ts_scope_end(s);
  }
  return (int64_t)(ts_now_ns() - t0);
}

static void count_event(const ts_event *event, void *user_data)
{
  (*(uint64_t *)user_data)++;
}

/* add_batch with a listener subscribed to every op's begin and end. */
static int64_t add_batch_listened(void *data, int iters)
{
  uint64_t events = 0;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_BEGIN) | TS_EVENT_MASK(TS_EVENT_OP_END),
                           count_event, &events);
  int64_t ns = add_batch(data, iters);
  ts_listener_remove(id);
  if (ns >= 0 && events != 2ull * DISPATCH_OPS * (uint64_t)iters) {
    ts_error_set(TS_ERR_INTERNAL, TS_HERE, NULL, "the listener saw %llu events for %d ops",
                 (unsigned long long)events, DISPATCH_OPS * iters);
    return -1;
  }
  return ns;
}

static void bench_dispatch(void)
{
  add_loop l = { ts_random_uniform(TS_F32, TS_SHAPE(10, 10), 0, 1, 1),
                 ts_random_uniform(TS_F32, TS_SHAPE(10, 10), 0, 1, 2) };
  double plain, listened;
  if (!l.a || !l.b || !median_pair(add_batch, add_batch_listened, &l, 1, &plain, &listened)) {
    row_error("add 10x10 f32");
    return;
  }
  row("eager add 10x10 f32, no listener (per op)", plain / DISPATCH_OPS / 1e3,
      "eager dispatch overhead");
  row("eager add 10x10 f32, one listener (per op)", listened / DISPATCH_OPS / 1e3,
      "op begin + end events");
}

/* ---- large sgemm: ts_matmul vs cblas_sgemm on the same buffers -------------- */

#define GEMM_N 1024

typedef struct gemm {
  ts_tensor *a, *b;
  float *c;
} gemm;

static int64_t ts_gemm_batch(void *data, int iters)
{
  gemm *g = data;
  uint64_t t0 = ts_now_ns();
  for (int i = 0; i < iters; i++) {
    ts_scope *s = ts_scope_begin();
    ts_tensor *out = ts_matmul(g->a, g->b);
    ts_scope_end(s);
    if (!out)
      return -1;
  }
  return (int64_t)(ts_now_ns() - t0);
}

static int64_t blas_gemm_batch(void *data, int iters)
{
  gemm *g = data;
  bench_sgemm_fn sgemm = bench_sgemm();
  uint64_t t0 = ts_now_ns();
  for (int i = 0; i < iters; i++)
    sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, GEMM_N, GEMM_N, GEMM_N, 1.0f,
                ts_tensor_data(g->a), GEMM_N, ts_tensor_data(g->b), GEMM_N, 0.0f, g->c, GEMM_N);
  return (int64_t)(ts_now_ns() - t0);
}

static void bench_gemm(void)
{
  gemm g = { ts_random_uniform(TS_F32, TS_SHAPE(GEMM_N, GEMM_N), -1, 1, 1),
             ts_random_uniform(TS_F32, TS_SHAPE(GEMM_N, GEMM_N), -1, 1, 2),
             g_new(float, GEMM_N * GEMM_N) };
  double flops = 2.0 * GEMM_N * GEMM_N * GEMM_N;
  double ts_ns, blas_ns;
  if (!g.a || !g.b || !median_pair(ts_gemm_batch, blas_gemm_batch, &g, 3, &ts_ns, &blas_ns)) {
    row_error("sgemm 1024x1024 f32");
  } else {
    char note[96];
    g_snprintf(note, sizeof note, "%.1f GFLOP/s (%.0f%% of OpenBLAS)", flops / ts_ns,
               100.0 * blas_ns / ts_ns);
    row("sgemm 1024x1024 f32, ts_matmul", ts_ns / 1e3, note);
    g_snprintf(note, sizeof note, "%.1f GFLOP/s", flops / blas_ns);
    row("sgemm 1024x1024 f32, cblas_sgemm", blas_ns / 1e3, note);
  }
  g_free(g.c);
}

int main(void)
{
  ts_module *seeds = ts_module_open("seeds");
  if (!seeds) {
    ts_error *e = ts_error_take();
    fprintf(stderr, "tracescope-bench: error: %s\n", e ? e->message : "cannot open seeds");
    ts_error_free(e);
    return 1;
  }
  printf("Tracescope benchmark: %s, %u cores, %d engine threads; %s; median of %d runs "
         "after %d warm-up runs\n",
         ts_cpu_description(), g_get_num_processors(), ts_get_threads(), ts_blas_description(),
         REPEATS, WARMUP);
  ts_scope *scope = ts_scope_begin();
  bench_eager_graph(seeds);
  bench_passes();
  bench_tracing(seeds);
  heading("Eager kernels and dispatch");
  bench_dispatch();
  bench_gemm();
  ts_scope_end(scope);
  ts_module_free(seeds);
  ts_release_all();
  return 0;
}
