/* test-onnx-interop.c — what ts_concrete_save_onnx writes, ONNX Runtime
 * runs to our results: every seed ONNX can express (If, Loop and the
 * 100-layer model among them) is exported for its example arguments and
 * run by onnxruntime-node (tests/ort/ort-run.mjs) on the same inputs.
 * Floats agree to rtol 1e-4 + atol 1e-5 (another library's kernels),
 * integers and bools exactly.  Skips, saying why, where node or the
 * package (scripts/install-ort.sh, run by `make test`) is missing. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope-onnx.h>
#include <unistd.h>

#include "onnx-op-cases.h"

static char *tmp_dir;

/* Why ONNX Runtime cannot run here, or NULL. */
static char *ort_missing(const char *prefix)
{
  char *node = g_find_program_in_path("node");
  char *package = g_build_filename(prefix, "node_modules", "onnxruntime-node", "package.json", NULL);
  char *why = !node ? g_strdup("node is not installed")
              : !g_file_test(package, G_FILE_TEST_EXISTS)
                ? g_strdup_printf("onnxruntime-node is not installed under %s (scripts/install-ort.sh %s)", prefix, prefix)
                : NULL;
  g_free(node);
  g_free(package);
  return why;
}

/* want and got agree: shape and dtype, then values within tolerance. */
static void assert_close(const ts_tensor *want, const ts_tensor *got, const char *what)
{
  g_assert_cmpint(ts_tensor_dtype(want), ==, ts_tensor_dtype(got));
  g_assert_cmpint(ts_tensor_rank(want), ==, ts_tensor_rank(got));
  for (int d = 0; d < ts_tensor_rank(want); d++)
    g_assert_cmpint(ts_tensor_dim(want, d), ==, ts_tensor_dim(got, d));
  bool exact = !ts_dtype_is_float(ts_tensor_dtype(want));
  for (int64_t i = 0; i < ts_tensor_size(want); i++) {
    double w = ts_tensor_get_f64(want, i), g = ts_tensor_get_f64(got, i);
    bool same = w == g || (!exact && (fabs(w - g) <= 1e-5 + 1e-4 * fabs(w) || (isnan(w) && isnan(g))));
    if (!same)
      g_error("%s: element %" G_GINT64_FORMAT ": ONNX Runtime gives %.9g, Tracescope %.9g", what, i, g, w);
  }
}

/* Runs the model at path in ONNX Runtime on tensors; its outputs into
 * out[0..n_out) (current scope). */
static void ort_run(const char *prefix, const char *path, const char *name, ts_tensor *const *tensors, int n,
                    ts_tensor **out, int n_out)
{
  char *dir = g_build_filename(tmp_dir, name, NULL);
  g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
  GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(argv, g_strdup("node"));
  g_ptr_array_add(argv, g_test_build_filename(G_TEST_DIST, "ort", "ort-run.mjs", NULL));
  g_ptr_array_add(argv, g_strdup(prefix));
  g_ptr_array_add(argv, g_strdup(path));
  g_ptr_array_add(argv, g_strdup(dir));
  for (int i = 0; i < n; i++) {
    char *npy = g_strdup_printf("%s/input_%d.npy", dir, i);
    g_assert_true(ts_npy_save(npy, tensors[i]));
    g_ptr_array_add(argv, npy);
  }
  g_ptr_array_add(argv, NULL);
  char *err = NULL;
  int status;
  GError *error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                             NULL, NULL, NULL, &err, &status, &error));
  if (!g_spawn_check_wait_status(status, NULL))
    g_error("%s: ONNX Runtime failed: %s", name, err);
  g_free(err);
  g_ptr_array_unref(argv);
  for (int k = 0; k < n_out; k++) {
    char *npy = g_strdup_printf("%s/output_%d.npy", dir, k);
    out[k] = ts_npy_load(npy);
    if (!out[k])
      g_error("%s: no output %d of %d from ONNX Runtime", name, k, n_out);
    g_free(npy);
  }
  g_free(dir);
}

/* Exports fn's concrete function for examples and compares ONNX
 * Runtime's result with ours; false (error cleared) if the export was
 * refused (test-onnx-export checks which are, and why). */
static bool compare(const char *prefix, ts_function *fn, const char *const *examples)
{
  const char *name = ts_function_name(fn);
  ts_scope *scope = ts_scope_begin();
  ts_value args[8];
  ts_tensor *tensors[8];
  int n = 0, n_tensors = 0;
  for (; examples[n]; n++) {
    g_assert_true(ts_value_parse(examples[n], &args[n]));
    if (args[n].kind == TS_VALUE_TENSOR)
      tensors[n_tensors++] = args[n].tensor;
  }
  /* what the seeds print while tracing must not mix into the TAP on stdout */
  fflush(stdout);
  int saved_stdout = dup(1);
  dup2(2, 1);
  ts_concrete *cf = ts_function_get_concrete(fn, args, n);
  ts_tensor *want[TS_MAX_RETURNS], *got[TS_MAX_RETURNS];
  int n_want = cf ? ts_concrete_call_n(cf, args, n, want, TS_MAX_RETURNS, NULL) : -1;
  fflush(stdout);
  dup2(saved_stdout, 1);
  close(saved_stdout);
  g_assert_cmpint(n_want, >=, 1);
  char *path = g_strdup_printf("%s/%s.onnx", tmp_dir, name);
  bool saved = ts_concrete_save_onnx(cf, path);
  if (saved) {
    ort_run(prefix, path, name, tensors, n_tensors, got, n_want);
    for (int k = 0; k < n_want; k++) {
      char *what = g_strdup_printf("%s, result %d of %d", name, k, n_want);
      assert_close(want[k], got[k], what);
      g_free(what);
    }
  } else
    ts_error_clear();
  for (int k = 0; k < n; k++)
    ts_value_clear(&args[k]);
  g_free(path);
  ts_scope_end(scope);
  return saved;
}

static void test_seeds_in_onnx_runtime(gconstpointer data)
{
  const char *prefix = data;
  char *why = ort_missing(prefix);
  if (why) {
    g_test_skip(why);
    g_free(why);
    return;
  }
  ts_module *module = ts_module_open("seeds");
  g_assert_nonnull(module);
  int n_compared = 0;
  GString *names = g_string_new(NULL);
  for (int i = 0; i < ts_module_n_functions(module); i++) {
    const char *const *examples = ts_module_examples(module, i);
    ts_function *fn = ts_module_function(module, i);
    if (examples && compare(prefix, fn, examples)) {
      g_string_append_printf(names, " %s", ts_function_name(fn));
      n_compared++;
    }
  }
  g_test_message("ONNX Runtime agrees on%s", names->str);
  /* the If, Loop and 100-layer seeds among them */
  g_assert_nonnull(strstr(names->str, " square_if_positive "));
  g_assert_nonnull(strstr(names->str, " sum_even "));
  g_assert_nonnull(strstr(names->str, " sequential_model "));
  g_assert_cmpint(n_compared, >=, 20);
  g_string_free(names, TRUE);
  ts_module_free(module);
}

/* Every op the exporter maps (tests/onnx-op-cases.h). */
static void test_op_cases_in_onnx_runtime(gconstpointer data)
{
  const char *prefix = data;
  char *why = ort_missing(prefix);
  if (why) {
    g_test_skip(why);
    g_free(why);
    return;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(ONNX_OP_CASES); i++) {
    const onnx_op_case *oc = &ONNX_OP_CASES[i];
    ts_function *fn = ts_function_new(oc->name, oc->fn, oc->params);
    if (!compare(prefix, fn, oc->args))
      g_error("%s was not exported", oc->name);
    ts_function_free(fn);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  const char *prefix = g_getenv("TRACESCOPE_ORT_PREFIX");
  tmp_dir = g_dir_make_tmp("tracescope-onnx-interop-XXXXXX", NULL);
  g_test_add_data_func("/onnx/interop/seeds-in-onnx-runtime", prefix ? prefix : "", test_seeds_in_onnx_runtime);
  g_test_add_data_func("/onnx/interop/op-cases-in-onnx-runtime", prefix ? prefix : "", test_op_cases_in_onnx_runtime);
  int ret = g_test_run();
  char *cmd = g_strdup_printf("rm -rf '%s'", tmp_dir);
  g_assert_cmpint(system(cmd), ==, 0);
  g_free(cmd);
  g_free(tmp_dir);
  ts_release_all();
  return ret;
}
