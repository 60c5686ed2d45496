/* test-onnx-export.c — ts_concrete_save_onnx and `tracescope-cli export`:
 * every seed function is traced on its example arguments and exported;
 * those ONNX can express are imported back (ts_onnx_load) and run eagerly
 * and as a graph, giving exactly the values the traced graph gives; the
 * others fail naming the node and the op ONNX has no mapping for. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope-onnx.h>
#include <unistd.h>

#include "onnx-op-cases.h"
#include "test-errors.h"

static char *tmp_dir;

/* The seeds ONNX cannot express, and the op each one's error names. */
static const struct {
  const char *function, *op;
} INEXPRESSIBLE[] = {
  { "fizzbuzz", "PrintV2" },
  { "shape_retrace", "PrintV2" },
  { "find_next_odd", "AssignVariableOp" },
  { "side_effect", "AssignAddVariableOp" },
  { "square_if_positive_naive", "TensorListReserve" },
  { "train", "ShuffleIndices" }, /* the dataset's order for the pass; then the updates */
  { "train_rate", "ShuffleIndices" },
  { "train_where_log", "ShuffleIndices" },
};

/* Op cases whose ONNX form rounds otherwise than the rows (Log1p and
 * Expm1 as Log(1 + x) and Exp(x) - 1): within this of the rows' values. */
static const struct {
  const char *name;
  double rtol;
} ROUNDED_OTHERWISE[] = {
  { "log1p_expm1", 1e-6 },
};

static double case_rtol(const char *name)
{
  for (size_t i = 0; i < G_N_ELEMENTS(ROUNDED_OTHERWISE); i++)
    if (strcmp(ROUNDED_OTHERWISE[i].name, name) == 0)
      return ROUNDED_OTHERWISE[i].rtol;
  return 0;
}

static const char *inexpressible_op(const char *function)
{
  for (size_t i = 0; i < G_N_ELEMENTS(INEXPRESSIBLE); i++)
    if (strcmp(INEXPRESSIBLE[i].function, function) == 0)
      return INEXPRESSIBLE[i].op;
  return NULL;
}

/* Same dtype and shape; the same bits, or (rtol > 0) floats within rtol. */
static void assert_same_within(const ts_tensor *want, const ts_tensor *got, double rtol, const char *what)
{
  if (!got)
    g_error("%s: %s", what, ts_error_peek() ? ts_error_peek()->message : "no result, no error");
  bool same = ts_tensor_dtype(want) == ts_tensor_dtype(got) && ts_tensor_rank(want) == ts_tensor_rank(got);
  for (int d = 0; same && d < ts_tensor_rank(want); d++)
    same = ts_tensor_dim(want, d) == ts_tensor_dim(got, d);
  if (same && (rtol == 0 || !ts_dtype_is_float(ts_tensor_dtype(want))))
    same = memcmp(ts_tensor_data(want), ts_tensor_data(got),
                  (size_t)ts_tensor_size(want) * ts_dtype_size(ts_tensor_dtype(want))) == 0;
  for (int64_t i = 0; same && rtol > 0 && i < ts_tensor_size(want); i++) {
    double w = ts_tensor_get_f64(want, i), g = ts_tensor_get_f64(got, i);
    same = fabs(w - g) <= rtol * fabs(w) || (isnan(w) && isnan(g)) || w == g;
  }
  if (!same) {
    char *w = ts_tensor_to_string(want), *g = ts_tensor_to_string(got);
    g_error("%s: exported and imported gives\n%s\nTracescope\n%s", what, g, w);
  }
}

static void assert_same(const ts_tensor *want, const ts_tensor *got, const char *what)
{
  assert_same_within(want, got, 0, what);
}

/* Exports fn's concrete function for `examples` (argument specs) and runs
 * the model it wrote on the same tensors; false (error pending) if the
 * export failed. */
/* 1: exported, imported and ran alike (the same bits, or within rtol > 0);
 * 0: the export refused (the error set); -1: left out (a dataset it reads
 * is not installed). */
static int round_trip(ts_function *fn, const char *const *examples, double rtol)
{
  const char *name = ts_function_name(fn);
  ts_value args[8];
  ts_tensor *tensors[8];
  int n = 0, n_tensors = 0;
  for (; examples && examples[n]; n++) {
    g_assert_true(ts_value_parse(examples[n], &args[n]));
    if (args[n].kind == TS_VALUE_TENSOR)
      tensors[n_tensors++] = args[n].tensor;
  }
  ts_concrete *cf = ts_function_get_concrete(fn, args, n);
  if (!cf && take_missing_dataset(name)) {
    for (int i = 0; i < n; i++)
      ts_value_clear(&args[i]);
    return -1;
  }
  if (!cf)
    g_error("%s: %s", name, ts_error_peek()->message);
  /* every result: a function returning a tuple exports one output each */
  ts_tensor *want[TS_MAX_RETURNS], *want_eager[TS_MAX_RETURNS];
  int n_out = ts_concrete_call_n(cf, args, n, want, TS_MAX_RETURNS, NULL);
  g_assert_cmpint(n_out, >=, 0); /* None: its assigns or prints are refused */
  /* the imported model run eagerly is compared with fn run eagerly: the
   * optimizer's fused loops may round an elementwise chain's last bit
   * otherwise than op-by-op kernels.  (unused_return fails eagerly where
   * its graph prunes the failing op, as the export does: the graph's.) */
  if (ts_function_call_eager_n(fn, args, n, want_eager, TS_MAX_RETURNS, NULL) != n_out) {
    ts_error_clear();
    memcpy(want_eager, want, sizeof want[0] * (size_t)n_out);
  }
  char *path = g_strdup_printf("%s/%s.onnx", tmp_dir, name);
  bool saved = ts_concrete_save_onnx(cf, path);
  if (saved) {
    ts_onnx_model *model = ts_onnx_load(path);
    if (!model)
      g_error("%s: %s", name, ts_error_peek()->message);
    g_assert_cmpint(ts_onnx_model_n_inputs(model), ==, n_tensors);
    g_assert_cmpint(ts_onnx_model_n_outputs(model), ==, n_out);
    ts_tensor *eager[TS_MAX_RETURNS] = { NULL };
    if (!ts_onnx_model_run(model, tensors, n_tensors, eager))
      g_error("%s: %s", name, ts_error_peek()->message);
    ts_value targs[8];
    for (int i = 0; i < n_tensors; i++)
      targs[i] = TS_TENSOR_VALUE(tensors[i]);
    for (int k = 0; k < n_out; k++) {
      assert_same_within(want_eager[k], eager[k], rtol, name);
      /* as graphs, the two are optimized apart: where the fusion pass groups
       * an elementwise chain otherwise, the last bits may differ */
      ts_tensor *graph = ts_function_call(ts_onnx_model_function(model, k), targs, n_tensors);
      assert_same_within(want[k], graph, MAX(rtol, 1e-6), name);
    }
    ts_onnx_model_free(model);
  }
  for (int i = 0; i < n; i++)
    ts_value_clear(&args[i]);
  g_free(path);
  return saved ? 1 : 0;
}

static void test_seeds_round_trip(void)
{
  ts_module *module = ts_module_open("seeds");
  g_assert_nonnull(module);
  int n_exported = 0, n_refused = 0, n_left_out = 0; /* refusals not seen: no dataset */
  for (int i = 0; i < ts_module_n_functions(module); i++) {
    if (!ts_module_examples(module, i) && ts_function_n_params(ts_module_function(module, i)) > 0)
      continue; /* no arguments to trace it for */
    const char *name = ts_function_name(ts_module_function(module, i));
    ts_scope *scope = ts_scope_begin();
    /* what the seeds print while tracing must not mix into the TAP on stdout */
    fflush(stdout);
    int saved_stdout = dup(1);
    dup2(2, 1);
    int saved = round_trip(ts_module_function(module, i), ts_module_examples(module, i), 0);
    fflush(stdout);
    dup2(saved_stdout, 1);
    close(saved_stdout);
    ts_scope_end(scope);
    const char *op = inexpressible_op(name);
    if (saved < 0) { /* its dataset is not installed: take_missing_dataset said so */
      n_left_out += op != NULL;
      continue;
    }
    if (saved) {
      g_test_message("%s: exported, imported and ran alike", name);
      if (op)
        g_error("%s exported, though its %s has no ONNX mapping", name, op);
      n_exported++;
      continue;
    }
    ts_error *e = ts_error_take();
    g_assert_nonnull(e);
    g_test_message("%s: %s", name, e->message);
    if (!op)
      g_error("%s: %s", name, e->message);
    g_assert_cmpint(e->code, ==, TS_ERR_UNIMPLEMENTED);
    char *names_op = g_strdup_printf("(%s)", op), *no_mapping = g_strdup_printf("op %s has no ONNX mapping", op);
    g_assert_nonnull(strstr(e->message, "cannot export node '"));
    g_assert_nonnull(strstr(e->message, names_op));
    g_assert_nonnull(strstr(e->message, no_mapping));
    g_free(names_op);
    g_free(no_mapping);
    ts_error_free(e);
    n_refused++;
  }
  ts_module_free(module);
  g_assert_cmpint(n_refused + n_left_out, ==, G_N_ELEMENTS(INEXPRESSIBLE));
  g_assert_cmpint(n_exported, >=, 20);
}

/* Every op the exporter maps, on the corners a mapping gets wrong first. */
static void test_op_cases_round_trip(void)
{
  for (size_t i = 0; i < G_N_ELEMENTS(ONNX_OP_CASES); i++) {
    const onnx_op_case *oc = &ONNX_OP_CASES[i];
    ts_function *fn = ts_function_new(oc->name, oc->fn, oc->params);
    ts_scope *scope = ts_scope_begin();
    if (round_trip(fn, oc->args, case_rtol(oc->name)) != 1)
      g_error("%s: %s", oc->name, ts_error_peek()->message);
    ts_scope_end(scope);
    ts_function_free(fn);
  }
}

/* Names survive: the ONNX nodes keep the graph's node names, whose scopes
 * fold the imported graph the same way. */
static void test_names_and_scopes_kept(void)
{
  ts_module *module = ts_module_open("seeds");
  ts_function *fn = ts_module_lookup(module, "dense_128_model");
  ts_scope *scope = ts_scope_begin();
  ts_value arg;
  g_assert_true(ts_value_parse("f32[2,28,28]:uniform", &arg));
  ts_concrete *cf = ts_function_get_concrete(fn, &arg, 1);
  char *path = g_strdup_printf("%s/names.onnx", tmp_dir);
  g_assert_true(ts_concrete_save_onnx(cf, path));
  ts_onnx_model *model = ts_onnx_load(path);
  g_assert_nonnull(model);
  g_assert_cmpstr(ts_onnx_model_name(model), ==, "dense_128_model");
  g_assert_cmpstr(ts_onnx_model_input_name(model, 0), ==, "x");
  ts_spec spec = ts_onnx_model_input_spec(model, 0);
  g_assert_cmpint(spec.dtype, ==, TS_F32);
  g_assert_cmpint(spec.shape.rank, ==, 3);
  g_assert_cmpint(spec.shape.dim[0], ==, 2);
  ts_function *imported = ts_onnx_model_function(model, 0);
  ts_tensor *y = ts_function_call(imported, &arg, 1);
  g_assert_nonnull(y);
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(imported, 0));
  GHashTable *scopes = g_hash_table_new(g_str_hash, g_str_equal);
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    g_hash_table_add(scopes, (char *)ts_node_scope(ts_graph_node(g, i)));
  GHashTable *orig_scopes = g_hash_table_new(g_str_hash, g_str_equal);
  const ts_graph *orig = ts_concrete_graph(cf);
  for (int i = 0; i < ts_graph_n_nodes(orig); i++)
    g_hash_table_add(orig_scopes, (char *)ts_node_scope(ts_graph_node(orig, i)));
  /* the same scopes: a module's nodes fold into one scope, not dense_1, dense_1_1, ... */
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, orig_scopes);
  while (g_hash_table_iter_next(&it, &key, NULL))
    if (!g_hash_table_contains(scopes, key))
      g_error("scope '%s' of the traced graph is not in the imported one", (char *)key);
  g_hash_table_iter_init(&it, scopes);
  while (g_hash_table_iter_next(&it, &key, NULL))
    if (!g_hash_table_contains(orig_scopes, key))
      g_error("the imported graph has scope '%s', the traced one not", (char *)key);
  g_hash_table_destroy(orig_scopes);
  g_hash_table_destroy(scopes);
  ts_onnx_model_free(model);
  ts_value_clear(&arg);
  ts_scope_end(scope);
  ts_module_free(module);
  g_free(path);
}

/* An unknown dim stays unknown: a concrete function for f32[?,28,28]
 * exports an input of that spec, and the model runs at any batch size. */
static void test_unknown_dims(void)
{
  ts_module *module = ts_module_open("seeds");
  ts_function *fn = ts_module_lookup(module, "dense_128_model");
  ts_scope *scope = ts_scope_begin();
  ts_value spec = { .kind = TS_VALUE_SPEC, .spec = { TS_F32, TS_SHAPE(-1, 28, 28) } };
  ts_concrete *cf = ts_function_get_concrete(fn, &spec, 1);
  g_assert_nonnull(cf);
  char *path = g_strdup_printf("%s/unknown.onnx", tmp_dir);
  g_assert_true(ts_concrete_save_onnx(cf, path));
  ts_onnx_model *model = ts_onnx_load(path);
  g_assert_nonnull(model);
  g_assert_cmpint(ts_onnx_model_input_spec(model, 0).shape.dim[0], ==, -1);
  for (int batch = 1; batch <= 3; batch += 2) {
    ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(batch, 28, 28), 0, 1, 7);
    ts_value arg = TS_TENSOR_VALUE(x);
    ts_tensor *want = ts_concrete_call(cf, &arg, 1), *got = NULL;
    g_assert_true(ts_onnx_model_run(model, &x, 1, &got));
    assert_same(want, got, "dense_128_model at an unknown batch size");
  }
  ts_onnx_model_free(model);
  ts_scope_end(scope);
  ts_module_free(module);
  g_free(path);
}

/* A function returning a tuple exports one graph output per tensor (one
 * of them the same value twice, which ONNX names apart), each of which
 * the imported model gives back. */
static ts_tensor *three_results(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *y = ts_add(x, ts_scalar_f32(1));
  return ts_tuple(y, ts_reduce_sum(ts_mul(x, x), TS_ALL_AXES, false), y);
}

static void test_tuple_outputs(void)
{
  ts_function *fn = ts_function_new("three_results", three_results, "x");
  ts_scope *scope = ts_scope_begin();
  g_assert_cmpint(round_trip(fn, (const char *const[]){ "f32[3]=1,2,3", NULL }, 0), ==, 1);
  ts_scope_end(scope);
  ts_function_free(fn);
}

/* x > 0 asserted: ONNX has no Assert (a model cannot fail a run), so the
 * export refuses the node by name rather than drop the check. */
/* fn (traced for args) has no ONNX form: the export refuses it with an
 * error holding each of `fragments` (NULL-terminated) and writes no file. */
static void expect_refused(const char *name, ts_fn fn_body, const char *params, const ts_value *args,
                           int n, const char *const *fragments)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new(name, fn_body, params);
  ts_concrete *cf = ts_function_get_concrete(fn, args, n);
  g_assert_nonnull(cf);
  char *path = g_strdup_printf("%s/%s.onnx", tmp_dir, name);
  g_assert_false(ts_concrete_save_onnx(cf, path));
  ts_error *e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_UNIMPLEMENTED);
  for (int i = 0; fragments[i]; i++)
    if (!strstr(e->message, fragments[i]))
      g_error("'%s' lacks '%s'", e->message, fragments[i]);
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
  ts_error_free(e);
  g_free(path);
  ts_function_free(fn);
  ts_scope_end(scope);
}

static ts_tensor *asserted(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_assert_greater(x, ts_scalar_f32(0), "x must be positive");
  return ts_add(x, x);
}

static void test_assert_refused(void)
{
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(2));
  expect_refused("asserted", asserted, "x", &spec, 1,
                 (const char *const[]){ "cannot export node 'Assert' (Assert)", "ONNX has no Assert op", NULL });
}

static ts_tensor *cumprod_body(ts_call *c)
{
  return ts_cumprod(ts_arg(c, 0), 0, false, false);
}

/* Cumprod has no ONNX op: the export is refused, naming it and why. */
static void test_cumprod_refused(void)
{
  ts_function *fn = ts_function_new("cumprod", cumprod_body, "x");
  ts_scope *scope = ts_scope_begin();
  const char *args[] = { "f32[3]=1,2,3", NULL };
  g_assert_cmpint(round_trip(fn, args, 0), ==, 0);
  ts_error *e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_UNIMPLEMENTED);
  g_assert_nonnull(strstr(e->message, "op Cumprod has no ONNX mapping: ONNX has no cumulative product"));
  ts_error_free(e);
  ts_scope_end(scope);
  ts_function_free(fn);
}

static ts_tensor *argsort_body(ts_call *c)
{
  return ts_argsort(ts_arg(c, 0), 0, false);
}

/* ArgSort over an axis unknown when traced: TopK's k read by Shape. */
static void test_argsort_unknown_axis(void)
{
  ts_function *fn = ts_function_new("argsort", argsort_body, "x");
  ts_scope *scope = ts_scope_begin();
  ts_value spec = { .kind = TS_VALUE_SPEC, .spec = { TS_F32, TS_SHAPE(-1) } };
  ts_concrete *cf = ts_function_get_concrete(fn, &spec, 1);
  g_assert_nonnull(cf);
  char *path = g_strdup_printf("%s/argsort.onnx", tmp_dir);
  g_assert_true(ts_concrete_save_onnx(cf, path));
  ts_onnx_model *model = ts_onnx_load(path);
  g_assert_nonnull(model);
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(4), (float[]){ 2, -1, 2, 0 }), *got = NULL;
  g_assert_true(ts_onnx_model_run(model, &x, 1, &got));
  g_assert_cmpint(ts_tensor_dtype(got), ==, TS_I32);
  const int32_t want[] = { 1, 3, 0, 2 };
  g_assert_cmpint(ts_tensor_size(got), ==, 4);
  for (int i = 0; i < 4; i++)
    g_assert_cmpint(ts_tensor_get_i64(got, i), ==, want[i]);
  ts_onnx_model_free(model);
  g_free(path);
  ts_scope_end(scope);
  ts_function_free(fn);
}

static void test_unwritable_path(void)
{
  ts_module *module = ts_module_open("seeds");
  ts_scope *scope = ts_scope_begin();
  ts_value arg;
  g_assert_true(ts_value_parse("f32[2]=1,-1", &arg));
  ts_concrete *cf = ts_function_get_concrete(ts_module_lookup(module, "my_relu"), &arg, 1);
  g_assert_false(ts_concrete_save_onnx(cf, "/nonexistent-dir/x.onnx"));
  ts_error *e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_IO);
  g_assert_nonnull(strstr(e->message, "/nonexistent-dir/x.onnx"));
  ts_error_free(e);
  ts_value_clear(&arg);
  ts_scope_end(scope);
  ts_module_free(module);
}

static ts_tensor *angle(ts_call *c)
{
  return ts_atan2(ts_arg(c, 0), ts_arg(c, 1));
}

/* Atan2 has no ONNX form (opset 17 has no atan2; Atan(y / x) is wrong
 * off the right half-plane): the export refuses it by name and says why. */
static void test_atan2_refused(void)
{
  ts_value args[2] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(3)), TS_SPEC_VALUE(TS_F32, TS_SHAPE(3)) };
  expect_refused("angle", angle, "y, x", args, 2,
                 (const char *const[]){ "(Atan2)", "op Atan2 has no ONNX mapping: ONNX (opset 17) has no atan2",
                                        NULL });
}

static ts_tensor *nothing(ts_call *c)
{
  (void)ts_mul(ts_arg(c, 0), ts_arg(c, 0)); /* dead: nothing returned, no effect */
  return ts_none();
}

/* A function returning None with no stateful op gives no model: ONNX
 * models compute outputs, and it has none (its pruned ops are no export). */
static void test_none_refused(void)
{
  ts_value arg = TS_SPEC_VALUE(TS_F32, TS_SHAPE(3));
  expect_refused("nothing", nothing, "x", &arg, 1,
                 (const char *const[]){ "cannot export 'nothing': it returns None", NULL });
}

static ts_tensor *pad_symmetric(ts_call *c)
{
  return ts_pad(ts_arg(c, 0), TS_INTS(1), TS_INTS(2), TS_PAD_SYMMETRIC, NULL);
}

/* SYMMETRIC padding has no ONNX mode: the export refuses it, naming the
 * mode, and writes no file. */
static void test_pad_symmetric_refused(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_value arg = TS_TENSOR_VALUE(ts_range(TS_F32, 0, 3, 1));
  expect_refused("symmetric", pad_symmetric, NULL, &arg, 1,
                 (const char *const[]){ "SYMMETRIC padding has no ONNX mode", NULL });
  ts_scope_end(scope);
}

static ts_tensor *one_hot_depth_0(ts_call *c)
{
  return ts_one_hot(ts_arg(c, 0), 0, NULL, NULL, -1, TS_F32);
}

/* ONNX's OneHot takes a depth of 1 or more: a depth of 0 is refused,
 * naming it, and no file is written. */
static void test_one_hot_depth_0_refused(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_value arg = TS_TENSOR_VALUE(ts_range(TS_I32, 0, 3, 1));
  expect_refused("one_hot_depth_0", one_hot_depth_0, NULL, &arg, 1,
                 (const char *const[]){ "OneHot of depth 0", NULL });
  ts_scope_end(scope);
}

static char *run_cli(const char *const *args, int *status)
{
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (char *)g_getenv("TRACESCOPE_CLI"));
  for (int i = 0; args[i]; i++)
    g_ptr_array_add(argv, (char *)args[i]);
  g_ptr_array_add(argv, NULL);
  char *out = NULL, *err = NULL;
  GError *error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                             status, &error));
  g_ptr_array_unref(argv);
  char *all = g_strconcat(out, err, NULL);
  g_free(out);
  g_free(err);
  return all;
}
#define WORDS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* `export` writes what `run FILE.onnx` runs to the same values. */
static void test_cli_export(void)
{
  char *path = g_strdup_printf("%s/cli.onnx", tmp_dir);
  int status;
  char *out = run_cli(WORDS("export", "seeds", "my_relu", "--arg", "f32[2]=1,-1", "--out", path), &status);
  g_test_message("%s", out);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  g_assert_nonnull(strstr(out, "as ONNX (opset 17)"));
  g_free(out);
  out = run_cli(WORDS("run", path, "my_relu", "--arg", "f32[2]=3,-4"), &status);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  g_assert_nonnull(strstr(out, "Tensor([3. 0.], shape=(2,), dtype=float32)"));
  g_free(out);
  out = run_cli(WORDS("export", "seeds", "fizzbuzz", "--arg", "i32[]=15", "--out", path), &status);
  g_assert_false(g_spawn_check_wait_status(status, NULL));
  g_assert_nonnull(strstr(out, "(PrintV2)"));
  g_free(out);
  out = run_cli(WORDS("export", "seeds", "my_relu", "--out", "x.png"), &status);
  g_assert_false(g_spawn_check_wait_status(status, NULL));
  g_assert_nonnull(strstr(out, "--out must name a .onnx file"));
  g_free(out);
  g_free(path);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("tracescope-onnx-export-XXXXXX", NULL);
  g_test_add_func("/onnx/export/seeds-round-trip", test_seeds_round_trip);
  g_test_add_func("/onnx/export/op-cases-round-trip", test_op_cases_round_trip);
  g_test_add_func("/onnx/export/names-and-scopes-kept", test_names_and_scopes_kept);
  g_test_add_func("/onnx/export/unknown-dims", test_unknown_dims);
  g_test_add_func("/onnx/export/tuple-outputs", test_tuple_outputs);
  g_test_add_func("/onnx/export/assert-refused", test_assert_refused);
  g_test_add_func("/onnx/export/cumprod-refused", test_cumprod_refused);
  g_test_add_func("/onnx/export/argsort-unknown-axis", test_argsort_unknown_axis);
  g_test_add_func("/onnx/export/unwritable-path", test_unwritable_path);
  g_test_add_func("/onnx/export/atan2-refused", test_atan2_refused);
  g_test_add_func("/onnx/export/none-refused", test_none_refused);
  g_test_add_func("/onnx/export/pad-symmetric-refused", test_pad_symmetric_refused);
  g_test_add_func("/onnx/export/one-hot-depth-0-refused", test_one_hot_depth_0_refused);
  g_test_add_func("/onnx/export/cli", test_cli_export);
  int ret = g_test_run();
  char *cmd = g_strdup_printf("rm -rf '%s'", tmp_dir);
  g_assert_cmpint(system(cmd), ==, 0);
  g_free(cmd);
  g_free(tmp_dir);
  ts_release_all();
  return ret;
}
