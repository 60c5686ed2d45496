/* cli-onnx-test.c — `tracescope-cli onnx-test DIR...`: runs ONNX backend
 * test directories (model.onnx beside test_data_set_N folders of
 * input_N.pb and output_N.pb TensorProtos) and compares our outputs with theirs:
 * |ours - theirs| <= atol + rtol * |theirs|, NaN where they have NaN.
 * A test is skipped when its model uses an op, dtype or attribute value
 * the importer has no mapping for, and counted by what is missing; also
 * when its data contradicts its own model (an input's shape against the
 * model's declared one: the data is wrong, not the run); one named in the
 * --wrong-data file (reference outputs that contradict their own model,
 * as upstream has acknowledged) is counted as skipped when it fails.
 * Floats compare to no finer than the output dtype's precision
 * (bfloat16's 8 bits); strings exactly; sequences element by element and
 * optionals by their values, read as the model declares each input and
 * output (ts_onnx_model_value_load). */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope-onnx.h>

#define RTOL 1e-3
#define ATOL 1e-7
#define MAX_TENSORS 64 /* inputs or outputs per data set */

typedef struct run {
  int passed, failed, skipped;
  GHashTable *missing; /* what skipped tests lack -> count */
  GHashTable *expected; /* names that must pass */
  GHashTable *wrong_data; /* names whose reference outputs contradict their model */
  bool list_passed;
  bool verbose;        /* why each test was skipped */
  bool eager, graph;   /* the modes to run (--mode eager|graph|both) */
  int graph_refused;   /* passed eagerly; the trace refused (shapes from graph inputs) */
} run;

static void count_missing(run *r, const char *what)
{
  gpointer n = g_hash_table_lookup(r->missing, what);
  g_hash_table_replace(r->missing, g_strdup(what), GINT_TO_POINTER(GPOINTER_TO_INT(n) + 1));
}

/* "node/test_add" for .../data/node/test_add */
static char *test_name(const char *dir)
{
  char *base = g_path_get_basename(dir), *parent_dir = g_path_get_dirname(dir);
  char *parent = g_path_get_basename(parent_dir);
  char *name = g_strdup_printf("%s/%s", parent, base);
  g_free(base);
  g_free(parent_dir);
  g_free(parent);
  return name;
}

static char *compare(const ts_tensor *got, const ts_tensor *want);

/* Sequences element by element, optionals by their values: NULL if equal,
 * else what differs (owned). */
static char *compare_variant(const ts_tensor *got, const ts_tensor *want)
{
  int64_t n = ts_tensor_list_size(want);
  if (n >= 0) {
    int64_t m = ts_tensor_list_size(got);
    if (m != n)
      return m < 0 ? g_strdup("not a sequence, expected one")
                   : g_strdup_printf("a sequence of %" G_GINT64_FORMAT " elements, expected %" G_GINT64_FORMAT, m, n);
    for (int64_t i = 0; i < n; i++) {
      const ts_tensor *a = ts_tensor_list_item(got, i), *b = ts_tensor_list_item(want, i);
      char *diff = a ? compare(a, b) : g_strdup("never written");
      if (diff) {
        char *msg = g_strdup_printf("sequence element %" G_GINT64_FORMAT ": %s", i, diff);
        g_free(diff);
        return msg;
      }
    }
    return NULL;
  }
  ts_tensor *want_value = NULL, *got_value = NULL;
  int want_has = ts_optional_value(want, &want_value), got_has = ts_optional_value(got, &got_value);
  if (want_has < 0)
    return g_strdup("the expected value is neither a tensor, a sequence nor an optional");
  if (got_has != want_has)
    return g_strdup_printf("%s, expected %s", got_has < 0 ? "not an optional" : got_has ? "an optional with a value" : "an empty optional",
                           want_has ? "an optional with a value" : "an empty optional");
  char *diff = want_has ? compare(got_value, want_value) : NULL;
  char *msg = diff ? g_strdup_printf("the optional's value: %s", diff) : NULL;
  g_free(diff);
  return msg;
}

/* NULL if equal, else what differs (owned). */
static char *compare(const ts_tensor *got, const ts_tensor *want)
{
  if (ts_tensor_dtype(want) == TS_VARIANT && ts_tensor_dtype(got) == TS_VARIANT)
    return compare_variant(got, want);
  if (ts_tensor_dtype(got) != ts_tensor_dtype(want))
    return g_strdup_printf("dtype %s, expected %s", ts_dtype_name(ts_tensor_dtype(got)),
                           ts_dtype_name(ts_tensor_dtype(want)));
  if (!ts_shape_equal(ts_tensor_shape(got), ts_tensor_shape(want))) {
    char *a = ts_shape_dtype_string(ts_tensor_dtype(got), ts_tensor_shape(got));
    char *b = ts_shape_dtype_string(ts_tensor_dtype(want), ts_tensor_shape(want));
    char *msg = g_strdup_printf("shape %s, expected %s", a, b);
    free(a);
    free(b);
    return msg;
  }
  int64_t n = ts_tensor_size(want);
  if (ts_tensor_dtype(want) == TS_STRING) {
    char *const *a = ts_tensor_data(got), *const *b = ts_tensor_data(want);
    for (int64_t i = 0; i < n; i++)
      if (strcmp(a[i] ? a[i] : "", b[i] ? b[i] : "") != 0)
        return g_strdup_printf("element %" G_GINT64_FORMAT " is '%s', expected '%s'", i, a[i] ? a[i] : "",
                               b[i] ? b[i] : "");
    return NULL;
  }
  bool is_float = ts_dtype_is_float(ts_tensor_dtype(want));
  double rtol = ts_tensor_dtype(want) == TS_BF16 ? 0x1p-7 : RTOL; /* one unit of its last bit */
  for (int64_t i = 0; i < n; i++) {
    if (is_float) {
      double g = ts_tensor_get_f64(got, i), w = ts_tensor_get_f64(want, i);
      if (isnan(g) != isnan(w) || (!isnan(w) && (isinf(w) ? g != w : fabs(g - w) > ATOL + rtol * fabs(w))))
        return g_strdup_printf("element %" G_GINT64_FORMAT " is %.9g, expected %.9g", i, g, w);
    } else if (ts_tensor_get_i64(got, i) != ts_tensor_get_i64(want, i))
      return g_strdup_printf("element %" G_GINT64_FORMAT " is %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT,
                             i, ts_tensor_get_i64(got, i), ts_tensor_get_i64(want, i));
  }
  return NULL;
}

/* The values dir/PREFIX_0.pb, _1, ... (inputs or outputs of model: tensors,
 * sequences or optionals as it declares them) into out; their count, -1 + error. */
static int load_tensors(const ts_onnx_model *model, const char *dir, bool outputs, ts_tensor **out)
{
  int n = 0, n_model = outputs ? ts_onnx_model_n_outputs(model) : ts_onnx_model_n_inputs(model);
  for (; n < MAX_TENSORS; n++) {
    char *path = g_strdup_printf("%s/%s_%d.pb", dir, outputs ? "output" : "input", n);
    bool exists = g_file_test(path, G_FILE_TEST_EXISTS);
    out[n] = !exists       ? NULL
             : n < n_model ? ts_onnx_model_value_load(model, outputs, n, path)
                           : ts_onnx_tensor_load(path);
    g_free(path);
    if (!exists)
      break;
    if (!out[n])
      return -1;
  }
  return n;
}

/* The suite's bfloat16 data: NumPy has no bfloat16, so the test data of
 * onnx's generator holds the bits as uint16 tensors; a uint16 tensor where
 * bfloat16 is wanted is read as those bits. */
static ts_tensor *as_bfloat16(ts_tensor *t, ts_dtype want)
{
  if (!t || want != TS_BF16 || ts_tensor_dtype(t) != TS_U16)
    return t;
  return ts_constant(TS_BF16, ts_tensor_shape(t), ts_tensor_data(t));
}

typedef enum outcome { PASS, FAIL, SKIP } outcome;

/* An error while loading or running: what the importer lacks is a skip. */
static outcome error_outcome(run *r, const char *name, char **why)
{
  ts_error *e = ts_error_take();
  if (e && e->code == TS_ERR_UNIMPLEMENTED) {
    count_missing(r, e->op ? e->op : "other");
    if (r->verbose)
      printf("skip %s: %s\n", name, e->message);
    ts_error_free(e);
    return SKIP;
  }
  *why = g_strdup(e ? e->message : "failed without an error");
  ts_error_free(e);
  return FAIL;
}

static outcome check_output(ts_onnx_model *model, const char *set, const char *mode, int i,
                            const ts_tensor *got, ts_tensor *want, char **why)
{
  char *diff = compare(got, as_bfloat16(want, ts_tensor_dtype(got)));
  if (!diff)
    return PASS;
  *why = g_strdup_printf("%s: %s: output %d '%s': %s", set, mode, i, ts_onnx_model_output_name(model, i), diff);
  g_free(diff);
  return FAIL;
}

static outcome run_data_set(run *r, ts_onnx_model *model, const char *set, const char *name, char **why,
                            bool *graph_refused)
{
  ts_tensor *inputs[MAX_TENSORS], *wants[MAX_TENSORS];
  int n_in = load_tensors(model, set, false, inputs), n_want = n_in < 0 ? -1 : load_tensors(model, set, true, wants);
  if (n_in < 0 || n_want < 0)
    return error_outcome(r, name, why);
  for (int i = 0; i < n_in && i < ts_onnx_model_n_inputs(model); i++) {
    ts_spec spec = ts_onnx_model_input_spec(model, i);
    inputs[i] = as_bfloat16(inputs[i], spec.dtype);
    ts_shape shape = ts_tensor_shape(inputs[i]);
    bool contradicts = spec.shape.rank >= 0 && spec.shape.rank != shape.rank;
    for (int d = 0; !contradicts && d < spec.shape.rank; d++)
      contradicts = spec.shape.dim[d] >= 0 && spec.shape.dim[d] != shape.dim[d];
    if (contradicts) {
      count_missing(r, "input data contradicts the model");
      if (r->verbose) {
        char *got = ts_shape_dtype_string(ts_tensor_dtype(inputs[i]), shape);
        char *declared = ts_shape_dtype_string(spec.dtype, spec.shape);
        printf("skip %s: %s: input %d is %s, the model declares %s\n", name, set, i, got, declared);
        free(got);
        free(declared);
      }
      return SKIP;
    }
  }
  if (n_want != ts_onnx_model_n_outputs(model)) {
    *why = g_strdup_printf("%s: %d expected outputs for a model of %d", set, n_want, ts_onnx_model_n_outputs(model));
    return FAIL;
  }
  ts_tensor **got = g_new0(ts_tensor *, n_want + 1);
  outcome result = PASS;
  if (r->eager && !ts_onnx_model_run(model, inputs, n_in, got))
    result = error_outcome(r, name, why);
  for (int i = 0; r->eager && i < n_want && result == PASS; i++)
    result = check_output(model, set, "eager", i, got[i], wants[i], why);
  /* graph mode: the traced function of each output */
  ts_value *args = g_new0(ts_value, n_in + 1);
  for (int i = 0; i < n_in; i++)
    args[i] = TS_TENSOR_VALUE(inputs[i]);
  for (int i = 0; r->graph && i < n_want && result == PASS && !*graph_refused; i++) {
    ts_function *fn = ts_onnx_model_function(model, i);
    ts_tensor *y = fn ? ts_function_call(fn, args, n_in) : NULL;
    if (y)
      result = check_output(model, set, "graph", i, y, wants[i], why);
    else if (r->eager && ts_error_peek() && ts_error_peek()->code == TS_ERR_UNIMPLEMENTED) {
      /* it ran eagerly: what a trace cannot do (a shape read from a graph
       * input) is counted apart, not as a missing op */
      if (r->verbose)
        printf("graph refused %s: %s\n", name, ts_error_peek()->message);
      ts_error_clear();
      *graph_refused = true;
    } else
      result = error_outcome(r, name, why);
  }
  g_free(args);
  g_free(got);
  return result;
}

static outcome run_test(run *r, const char *dir, const char *name, char **why, bool *graph_refused)
{
  char *path = g_build_filename(dir, "model.onnx", NULL);
  char *missing = ts_onnx_unsupported(path);
  outcome result = PASS;
  if (!missing) {
    result = error_outcome(r, name, why);
  } else if (*missing) {
    char **items = g_strsplit(missing, ",", -1);
    for (int i = 0; items[i]; i++)
      count_missing(r, items[i]);
    if (r->verbose)
      printf("skip %s: uses %s\n", name, missing);
    g_strfreev(items);
    result = SKIP;
  }
  free(missing);
  ts_onnx_model *model = result == PASS ? ts_onnx_load(path) : NULL;
  g_free(path);
  if (result == PASS && !model)
    result = error_outcome(r, name, why);
  GDir *d = model ? g_dir_open(dir, 0, NULL) : NULL;
  GPtrArray *sets = g_ptr_array_new_with_free_func(g_free);
  for (const char *e; d && (e = g_dir_read_name(d));)
    if (g_str_has_prefix(e, "test_data_set_"))
      g_ptr_array_add(sets, g_build_filename(dir, e, NULL));
  if (d)
    g_dir_close(d);
  g_ptr_array_sort(sets, (GCompareFunc)g_strcmp0);
  for (guint i = 0; i < sets->len && result == PASS; i++) {
    ts_scope *scope = ts_scope_begin();
    result = run_data_set(r, model, sets->pdata[i], name, why, graph_refused);
    ts_scope_end(scope);
  }
  g_ptr_array_free(sets, TRUE);
  ts_onnx_model_free(model);
  return result;
}

/* dir itself when it holds model.onnx, else its subfolders that do, sorted. */
static void collect(const char *dir, GPtrArray *tests)
{
  char *model = g_build_filename(dir, "model.onnx", NULL);
  bool is_test = g_file_test(model, G_FILE_TEST_IS_REGULAR);
  g_free(model);
  if (is_test) {
    g_ptr_array_add(tests, g_strdup(dir));
    return;
  }
  GDir *d = g_dir_open(dir, 0, NULL);
  GPtrArray *found = g_ptr_array_new();
  for (const char *e; d && (e = g_dir_read_name(d));) {
    char *sub = g_build_filename(dir, e, NULL), *m = g_build_filename(sub, "model.onnx", NULL);
    if (g_file_test(m, G_FILE_TEST_IS_REGULAR))
      g_ptr_array_add(found, sub);
    else
      g_free(sub);
    g_free(m);
  }
  if (d)
    g_dir_close(d);
  g_ptr_array_sort(found, (GCompareFunc)g_strcmp0);
  for (guint i = 0; i < found->len; i++)
    g_ptr_array_add(tests, found->pdata[i]);
  g_ptr_array_free(found, TRUE);
}

static gint by_count(gconstpointer a, gconstpointer b, gpointer table)
{
  int na = GPOINTER_TO_INT(g_hash_table_lookup(table, *(char *const *)a));
  int nb = GPOINTER_TO_INT(g_hash_table_lookup(table, *(char *const *)b));
  return na != nb ? nb - na : strcmp(*(char *const *)a, *(char *const *)b);
}

/* The test names of a list file, one a line ('#' comments, and anything
 * after a name's first blank, are ignored). */
static bool read_test_list(const char *path, GHashTable *names)
{
  char *text;
  GError *error = NULL;
  if (!g_file_get_contents(path, &text, NULL, &error)) {
    cli_fail(CLI_EXIT_USAGE, "onnx-test: %s", error->message);
    g_error_free(error);
    return false;
  }
  char **lines = g_strsplit(text, "\n", -1);
  for (int i = 0; lines[i]; i++) {
    char *line = g_strstrip(lines[i]);
    if (*line && *line != '#')
      g_hash_table_add(names, g_strndup(line, strcspn(line, " \t")));
  }
  g_strfreev(lines);
  g_free(text);
  return true;
}

int cli_onnx_test(int argc, char **argv)
{
  run r = { .eager = true, .graph = true };
  r.missing = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  r.expected = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  r.wrong_data = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GPtrArray *tests = g_ptr_array_new_with_free_func(g_free);
  int status = EXIT_SUCCESS;
  for (int i = 0; i < argc && status == EXIT_SUCCESS; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      cli_show_command_help("onnx-test");
      status = -1;
    } else if (strcmp(argv[i], "--expected") == 0) {
      if (i + 1 >= argc)
        status = cli_fail(CLI_EXIT_USAGE, "onnx-test: --expected needs a FILE");
      else if (!read_test_list(argv[++i], r.expected))
        status = CLI_EXIT_USAGE;
    } else if (strcmp(argv[i], "--wrong-data") == 0) {
      if (i + 1 >= argc)
        status = cli_fail(CLI_EXIT_USAGE, "onnx-test: --wrong-data needs a FILE");
      else if (!read_test_list(argv[++i], r.wrong_data))
        status = CLI_EXIT_USAGE;
    } else if (strcmp(argv[i], "--mode") == 0) {
      const char *mode = i + 1 < argc ? argv[++i] : "";
      r.eager = strcmp(mode, "eager") == 0 || strcmp(mode, "both") == 0;
      r.graph = strcmp(mode, "graph") == 0 || strcmp(mode, "both") == 0;
      if (!r.eager && !r.graph)
        status = cli_fail(CLI_EXIT_USAGE, "onnx-test: --mode takes eager, graph or both");
    } else if (strcmp(argv[i], "--list-passed") == 0)
      r.list_passed = true;
    else if (strcmp(argv[i], "--verbose") == 0)
      r.verbose = r.list_passed = true;
    else if (argv[i][0] == '-')
      status = cli_fail(CLI_EXIT_USAGE, "onnx-test: unknown option '%s' (see: tracescope-cli onnx-test --help)", argv[i]);
    else if (!g_file_test(argv[i], G_FILE_TEST_IS_DIR))
      status = cli_fail(CLI_EXIT_USAGE, "onnx-test: '%s' is not a folder", argv[i]);
    else
      collect(argv[i], tests);
  }
  if (status == -1)
    status = EXIT_SUCCESS;
  else if (status == EXIT_SUCCESS && !ts_onnx_available())
    status = cli_fail(CLI_EXIT_USAGE, "onnx-test: this tracescope-cli was built without ONNX (meson -Donnx=disabled)");
  else if (status == EXIT_SUCCESS && tests->len == 0 && argc > 0)
    status = cli_fail(CLI_EXIT_USAGE, "onnx-test: no ONNX tests found (folders with model.onnx)");
  else if (status == EXIT_SUCCESS && argc == 0)
    status = cli_fail(CLI_EXIT_USAGE, "onnx-test takes test folders (see: tracescope-cli onnx-test --help)");
  else if (status == EXIT_SUCCESS) {
    for (guint i = 0; i < tests->len; i++) {
      char *name = test_name(tests->pdata[i]), *why = NULL;
      bool graph_refused = false;
      ts_scope *scope = ts_scope_begin();
      outcome o = run_test(&r, tests->pdata[i], name, &why, &graph_refused);
      r.graph_refused += o == PASS && graph_refused;
      ts_scope_end(scope);
      ts_error_clear();
      if (o == FAIL && g_hash_table_contains(r.wrong_data, name)) {
        count_missing(&r, "wrong reference data");
        if (r.verbose)
          printf("skip %s: its reference data is listed as wrong: %s\n", name, why);
        o = SKIP;
      }
      if (o == PASS) {
        r.passed++;
        if (r.list_passed)
          printf("pass %s\n", name);
        g_hash_table_remove(r.expected, name);
      } else if (o == FAIL) {
        r.failed++;
        printf("FAIL %s: %s\n", name, why);
      } else
        r.skipped++;
      g_free(why);
      g_free(name);
    }
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, r.expected);
    GPtrArray *unmet = g_ptr_array_new();
    while (g_hash_table_iter_next(&it, &key, NULL))
      g_ptr_array_add(unmet, key);
    g_ptr_array_sort(unmet, (GCompareFunc)g_strcmp0);
    for (guint i = 0; i < unmet->len; i++)
      printf("EXPECTED PASS did not pass: %s\n", (char *)unmet->pdata[i]);
    GPtrArray *missing = g_ptr_array_new();
    g_hash_table_iter_init(&it, r.missing);
    while (g_hash_table_iter_next(&it, &key, NULL))
      g_ptr_array_add(missing, key);
    g_ptr_array_sort_with_data(missing, by_count, r.missing);
    if (missing->len) {
      printf("skipped by op:");
      for (guint i = 0; i < missing->len; i++)
        printf("%s %s %d", i ? "," : "", (char *)missing->pdata[i],
               GPOINTER_TO_INT(g_hash_table_lookup(r.missing, missing->pdata[i])));
      printf("\n");
    }
    if (r.eager && r.graph)
      printf("graph mode: %d of the passed also pass as graphs, %d only eagerly (the trace needs a "
             "shape that is a graph input)\n", r.passed - r.graph_refused, r.graph_refused);
    printf("%d passed, %d failed, %d skipped\n", r.passed, r.failed, r.skipped);
    status = r.failed || unmet->len ? CLI_EXIT_FAILED : EXIT_SUCCESS;
    g_ptr_array_free(missing, TRUE);
    g_ptr_array_free(unmet, TRUE);
  }
  g_ptr_array_free(tests, TRUE);
  g_hash_table_destroy(r.missing);
  g_hash_table_destroy(r.expected);
  g_hash_table_destroy(r.wrong_data);
  return status;
}
