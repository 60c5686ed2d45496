/* bench-onnx.c — tracescope-bench-onnx: one ONNX model run in graph mode,
 * our side of scripts/bench-onnx (against ONNX Runtime).
 *
 *   tracescope-bench-onnx MODEL.onnx INPUT... [--save DIR]  ->  JSON on stdout
 *
 * Imports MODEL.onnx (ts_onnx_load), calls its first output's function
 * (ts_onnx_model_function) in graph mode on the inputs (each a .npy, or
 * a TensorProto .pb as ONNX's test data has), traces and warms up, then
 * times single calls and prints the median (and fastest) µs per call.
 * The first call (trace, optimize, plan) is timed apart.  With --save, the
 * inputs and our output are written to DIR as input_I.npy and output.npy
 * for ONNX Runtime to run on and compare with.  The thread count is
 * whatever the environment says (TRACESCOPE_THREADS, OPENBLAS_NUM_THREADS):
 * the script runs this once per count.  Wall time, on a shared machine:
 * the median of many calls is what the script's ONNX Runtime side measures
 * the same way (bench/peers/ort_onnx_bench.mjs). */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope-onnx.h>
#include <tracescope.h>

#define WARMUP 5
#define MIN_RUNS 30
#define MIN_TOTAL_NS 1000000000 /* timed calls until 1 s has passed, */
#define MAX_RUNS 10000          /* at most this many */

static int fail(const char *what)
{
  ts_error *e = ts_error_take();
  fprintf(stderr, "tracescope-bench-onnx: %s: %s\n", what, e ? e->message : "failed");
  ts_error_free(e);
  return 1;
}

static int cmp_i64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* One graph-mode call; its output (in the current scope), NULL + error. */
static ts_tensor *call(ts_function *fn, const ts_value *args, int n_args)
{
  return ts_function_call(fn, args, n_args);
}

static bool timed_call(ts_function *fn, const ts_value *args, int n_args, int64_t *ns)
{
  ts_scope *s = ts_scope_begin();
  uint64_t t0 = ts_now_ns();
  ts_tensor *out = call(fn, args, n_args);
  *ns = (int64_t)(ts_now_ns() - t0);
  ts_scope_end(s);
  return out != NULL;
}

static bool save_all(const char *dir, ts_tensor *const *inputs, int n, ts_tensor *out)
{
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    ts_error_set(TS_ERR_IO, TS_HERE, NULL, "cannot create %s", dir);
    return false;
  }
  for (int i = 0; i < n; i++) {
    g_autofree char *name = g_strdup_printf("input_%d.npy", i);
    g_autofree char *path = g_build_filename(dir, name, NULL);
    if (!ts_npy_save(path, inputs[i]))
      return false;
  }
  g_autofree char *path = g_build_filename(dir, "output.npy", NULL);
  return ts_npy_save(path, out);
}

int main(int argc, char **argv)
{
  const char *save_dir = NULL;
  const char *files[64];
  int n_files = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--save") == 0 && i + 1 < argc)
      save_dir = argv[++i];
    else if (n_files < (int)G_N_ELEMENTS(files))
      files[n_files++] = argv[i];
    else {
      fprintf(stderr, "tracescope-bench-onnx: more than %d arguments\n", (int)G_N_ELEMENTS(files));
      return 2;
    }
  }
  if (n_files < 1) {
    fprintf(stderr, "usage: tracescope-bench-onnx MODEL.onnx INPUT.npy|INPUT.pb... [--save DIR]\n");
    return 2;
  }
  const char *model_path = files[0];
  ts_onnx_model *model = ts_onnx_load(model_path);
  if (!model)
    return fail(model_path);
  int n_inputs = n_files - 1;
  if (n_inputs != ts_onnx_model_n_inputs(model)) {
    fprintf(stderr, "tracescope-bench-onnx: %s takes %d inputs, %d given\n", model_path,
            ts_onnx_model_n_inputs(model), n_inputs);
    ts_onnx_model_free(model);
    return 2;
  }

  ts_scope *scope = ts_scope_begin();
  ts_tensor *inputs[64];
  ts_value args[64];
  int rc = 0;
  for (int i = 0; i < n_inputs; i++) {
    const char *f = files[i + 1];
    inputs[i] = g_str_has_suffix(f, ".pb") ? ts_onnx_tensor_load(f) : ts_npy_load(f);
    if (!inputs[i]) {
      rc = fail(f);
      goto out;
    }
    args[i] = TS_TENSOR_VALUE(inputs[i]);
  }
  ts_function *fn = ts_onnx_model_function(model, 0);
  if (!fn) {
    rc = fail(model_path);
    goto out;
  }

  uint64_t t0 = ts_now_ns(); /* the first call traces, optimizes and plans */
  ts_tensor *first = call(fn, args, n_inputs);
  double first_us = (double)(ts_now_ns() - t0) / 1e3;
  if (!first) {
    rc = fail("first graph-mode call");
    goto out;
  }
  if (save_dir && !save_all(save_dir, inputs, n_inputs, first)) {
    rc = fail(save_dir);
    goto out;
  }

  int64_t ns;
  for (int i = 0; i < WARMUP; i++)
    if (!timed_call(fn, args, n_inputs, &ns)) {
      rc = fail("warm-up call");
      goto out;
    }
  int64_t *t = g_new(int64_t, MAX_RUNS);
  int64_t total = 0;
  int runs = 0;
  while (runs < MAX_RUNS && (runs < MIN_RUNS || total < MIN_TOTAL_NS)) {
    if (!timed_call(fn, args, n_inputs, &t[runs])) {
      g_free(t);
      rc = fail("timed call");
      goto out;
    }
    total += t[runs++];
  }
  qsort(t, (size_t)runs, sizeof t[0], cmp_i64);
  printf("{\"model\": \"%s\", \"runs\": %d, \"median_us\": %.2f, \"min_us\": %.2f, "
         "\"first_call_us\": %.1f, \"traces\": %d}\n",
         model_path, runs, (double)t[runs / 2] / 1e3, (double)t[0] / 1e3, first_us,
         ts_function_trace_count(fn));
  g_free(t);
out:
  ts_scope_end(scope);
  ts_onnx_model_free(model);
  return rc;
}
