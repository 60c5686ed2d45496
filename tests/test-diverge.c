/* test-diverge.c — the divergence finder and check mode: a difference
 * planted in one node's output in graph mode is found at that node with
 * both values (a fused node: at the op whose value it outputs, the ops
 * fused into it listed as expected); the seed programs run the same both
 * ways; a tensor changed in a TS_WHILE body but left out of its list is
 * found and named; printing and folded constants are listed as expected;
 * nodes CSE merged, simplified or fused are matched with the right ops;
 * variables see the same state in both runs. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "test-quiet.h"

static ts_module *open_module(const char *name)
{
  char *path = g_strdup_printf("%s/%s.so", TS_TEST_MODULES_DIR, name);
  ts_module *m = ts_module_open(strcmp(name, "seeds") == 0 ? "seeds" : path);
  g_free(path);
  assert_no_error();
  g_assert_nonnull(m);
  return m;
}

static ts_function *lookup(ts_module *m, const char *name)
{
  ts_function *fn = ts_module_lookup(m, name);
  g_assert_nonnull(fn);
  return fn;
}

/* ts_diverge on one argument spec (quiet: the functions print). */
static ts_diverge_report *diverge1(ts_function *fn, const char *spec, const ts_diverge_options *opt)
{
  ts_value arg;
  g_assert_true(ts_value_parse(spec, &arg));
  ts_diverge_report *rep = NULL;
  int quiet = test_quiet_begin();
  bool ok = ts_diverge(fn, &arg, 1, opt, &rep);
  test_quiet_end(quiet);
  assert_no_error();
  g_assert_true(ok);
  g_assert_nonnull(rep);
  ts_value_clear(&arg);
  return rep;
}

static void assert_values(const ts_tensor *t, const char *expected)
{
  g_assert_nonnull(t);
  char *s = ts_tensor_format_values(t);
  g_assert_cmpstr(s, ==, expected);
  free(s);
}

static void assert_contains(const char *text, const char *fragment)
{
  if (!strstr(text, fragment))
    g_error("'%s' lacks '%s'", text, fragment);
}

/* ---- a planted difference --------------------------------------------------------- */

/* Adds `delta` to element 0 of the graph-mode output of the `nth` (from
 * 1) run of a node standing for an `op` node (itself, or a node the passes
 * fused it into): the test's stand-in for a miscompiled kernel. */
typedef struct plant {
  ts_op op;
  int nth, seen;
  float delta;
  const ts_node *node;  /* the traced node of op the changed node stands for */
  const ts_node *graph; /* the node of the optimized graph it changed */
  bool in_body;         /* only ops inside an If/While body */
} plant;

static const ts_node *origin_of_op(const ts_node *n, ts_op op)
{
  for (int i = 0; i < ts_node_n_origins(n); i++)
    if (ts_node_op(ts_node_origin(n, i)) == op)
      return ts_node_origin(n, i);
  return NULL;
}

static void on_plant(const ts_event *ev, void *data)
{
  plant *p = data;
  const ts_op_event *e = &ev->op;
  const ts_node *origin = e->node ? origin_of_op(e->node, p->op) : NULL;
  if (!origin || e->n_outputs < 1 || (p->in_body && !e->parent))
    return;
  if (++p->seen != p->nth)
    return;
  ts_tensor *out = e->outputs[0];
  g_assert_cmpint(ts_tensor_dtype(out), ==, TS_F32);
  ((float *)ts_tensor_data(out))[0] += p->delta;
  p->node = origin;
  p->graph = e->node;
}

/* Is the traced node named `name` at `line` one of n's origins? */
static bool is_origin(const ts_node *n, const char *name, int line)
{
  for (int i = 0; i < ts_node_n_origins(n); i++)
    if (strcmp(ts_node_name(ts_node_origin(n, i)), name) == 0 &&
        ts_node_loc(ts_node_origin(n, i)).line == line)
      return true;
  return false;
}

/* dense_chain's layers are MatMul + Relu (the zero bias simplified away),
 * fused into one _FusedMatMul each: the second layer's fused node is
 * changed, and the difference is found at its Relu (the value the node
 * outputs), with the MatMul fused into it listed as expected. */
static void test_planted(void)
{
  ts_module *m = open_module("seeds");
  ts_function *fn = lookup(m, "dense_chain");
  ts_value args[2];
  g_assert_true(ts_value_parse("f32[2,4,4]:uniform", &args[0]));
  g_assert_true(ts_value_parse("3", &args[1]));
  plant p = { .op = TS_OP_MATMUL, .nth = 2, .delta = 1.0f };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_plant, &p);
  ts_diverge_report *rep = NULL;
  g_assert_true(ts_diverge(fn, args, 2, NULL, &rep));
  assert_no_error();
  ts_listener_remove(id);
  g_assert_nonnull(p.node);
  g_assert_cmpint(ts_node_op(p.graph), ==, TS_OP_FUSED_MATMUL);

  g_assert_true(rep->diverged);
  const ts_diverge_op *f = rep->first;
  g_assert_nonnull(f);
  g_assert_cmpint(f->op, ==, TS_OP_RELU);
  g_assert_cmpint(f->kind, ==, TS_DIVERGE_VALUE);
  g_assert_true(is_origin(p.graph, f->node, f->loc.line));
  g_assert_nonnull(f->graph_node);
  char *graph_node = g_strdup_printf("_FusedMatMul '%s' standing for MatMul, Relu", ts_node_name(p.graph));
  g_assert_cmpstr(f->graph_node, ==, graph_node);
  /* the changed MatMul: fused into that node, its value only eager */
  const ts_diverge_op *fused = NULL;
  for (int i = 0; i < rep->n_expected && !fused; i++)
    if (rep->expected[i].expected == TS_EXPECTED_FUSED &&
        g_strcmp0(rep->expected[i].node, ts_node_name(p.node)) == 0 &&
        rep->expected[i].loc.line == ts_node_loc(p.node).line && rep->expected[i].seq < f->seq)
      fused = &rep->expected[i];
  g_assert_nonnull(fused);
  g_assert_cmpint(fused->op, ==, TS_OP_MATMUL);
  g_assert_cmpstr(fused->graph_node, ==, graph_node);
  g_assert_cmpint(f->worst, ==, 0);
  g_assert_cmpint(f->worst_index.rank, ==, ts_tensor_rank(f->eager));
  for (int k = 0; k < f->worst_index.rank; k++)
    g_assert_cmpint(f->worst_index.dim[k], ==, 0);
  g_assert_cmpfloat_with_epsilon(f->max_abs, 1.0, 1e-5);
  g_assert_cmpfloat_with_epsilon(f->graph_value - f->eager_value, 1.0, 1e-5);
  /* both values, as they were: equal but for element 0 */
  g_assert_cmpint(ts_tensor_size(f->eager), ==, ts_tensor_size(f->graph));
  g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(f->eager, 0), f->eager_value, 1e-6);
  g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(f->graph, 0), f->graph_value, 1e-6);
  for (int64_t i = 1; i < ts_tensor_size(f->eager); i++)
    g_assert_cmpfloat(ts_tensor_get_f64(f->eager, i), ==, ts_tensor_get_f64(f->graph, i));
  /* the first MatMul agreed; the difference carries on to the result */
  g_assert_cmpint(rep->n_differ, >, 1);
  g_assert_cmpint(rep->result.kind, ==, TS_DIVERGE_VALUE);

  char *text = ts_diverge_report_format(rep);
  char *line = g_strdup_printf("first divergence: op #%" G_GUINT64_FORMAT " Relu '%s' at %s:%d "
                               "(in the graph: %s): max |eager-graph| = 1 at [0, 0]",
                               f->seq, f->node, strrchr(f->loc.file, '/') + 1, f->loc.line,
                               graph_node);
  assert_contains(text, line);
  g_free(line);
  line = g_strdup_printf("op #%" G_GUINT64_FORMAT " MatMul '%s' at %s:%d: fused: fused into %s: ",
                         fused->seq, fused->node, strrchr(fused->loc.file, '/') + 1,
                         fused->loc.line, graph_node);
  assert_contains(text, line);
  g_free(line);
  g_free(graph_node);
  free(text);
  ts_diverge_report_free(rep);
  for (int k = 0; k < 2; k++)
    ts_value_clear(&args[k]);
  ts_module_free(m);
}

/* In a loop body: the k-th run of the node is matched with the k-th eager run. */
static void test_planted_in_loop(void)
{
  ts_module *m = open_module("diverge");
  plant p = { .op = TS_OP_ADD, .nth = 3, .delta = 1.0f, .in_body = true };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_plant, &p);
  /* the body's f32 Add (total) and i32 Add (i) alternate: the 3rd is total's 2nd */
  ts_diverge_report *rep = diverge1(lookup(m, "listed_loop_var"), "f32[3]=1,2,3", NULL);
  ts_listener_remove(id);
  const ts_diverge_op *f = rep->first;
  g_assert_nonnull(f);
  g_assert_cmpint(f->op, ==, TS_OP_ADD);
  g_assert_cmpint(f->occurrence, ==, 1);
  g_assert_cmpint(f->loop_depth, ==, 1);
  g_assert_cmpint(f->loc.line, ==, ts_node_loc(p.node).line);
  assert_values(f->eager, "[ 6. 12. 18.]"); /* 2x + 4x after two iterations */
  assert_values(f->graph, "[ 7. 12. 18.]");
  g_assert_cmpfloat(f->eager_value, ==, 6);
  g_assert_cmpfloat(f->graph_value, ==, 7);
  g_assert_null(rep->cause); /* the body lists every variable it changes */
  ts_diverge_report_free(rep);

  /* within the tolerance it is no divergence */
  p = (plant){ .op = TS_OP_ADD, .nth = 3, .delta = 0.5f, .in_body = true };
  id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_plant, &p);
  ts_diverge_options loose = { .atol = 1, .rtol = 0 };
  rep = diverge1(lookup(m, "listed_loop_var"), "f32[3]=1,2,3", &loose);
  ts_listener_remove(id);
  g_assert_nonnull(p.node);
  g_assert_false(rep->diverged);
  g_assert_null(rep->first);
  ts_diverge_report_free(rep);
  ts_module_free(m);
}

/* CSE, simplify and fuse: each eager Exp is compared with the one Exp node
 * standing for both; the pow (replaced by (x*x)*x) and the first Add are
 * fused into the node whose output is the last Add's; x * 1 is gone. */
static void test_rewritten(void)
{
  ts_module *m = open_module("diverge");
  ts_diverge_report *rep = diverge1(lookup(m, "rewritten"), "f32[3]=1,2,3", NULL);
  g_assert_false(rep->diverged);
  g_assert_cmpint(rep->n_eager, ==, 6);
  g_assert_cmpint(rep->n_compared, ==, 3);
  g_assert_cmpint(rep->n_graph_only, ==, 0);
  g_assert_cmpint(rep->n_expected, ==, 3);
  const ts_op ops[] = { TS_OP_POW, TS_OP_MUL, TS_OP_ADD };
  const ts_diverge_expected why[] = { TS_EXPECTED_FUSED, TS_EXPECTED_SIMPLIFIED, TS_EXPECTED_FUSED };
  for (int i = 0; i < 3; i++) {
    g_assert_cmpint(rep->expected[i].op, ==, ops[i]);
    g_assert_cmpint(rep->expected[i].expected, ==, why[i]);
  }
  g_assert_cmpstr(rep->expected[0].graph_node, ==,
                  "FusedElementwise 'Add_1' standing for Pow, Add, Add");
  g_assert_null(rep->expected[1].graph_node);
  char *text = ts_diverge_report_format(rep);
  assert_contains(text, "Pow 'Pow' at diverge.c:100: fused: fused into FusedElementwise 'Add_1' "
                        "standing for Pow, Add, Add: its value is computed inside that node");
  assert_contains(text, "Mul 'Mul' at diverge.c:100: simplified: the optimizer replaced its node by its input");
  free(text);
  ts_diverge_report_free(rep);

  /* a difference in the merged Exp: found at the first eager Exp, and the
   * second differs as well */
  plant p = { .op = TS_OP_EXP, .nth = 1, .delta = 1.0f };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_plant, &p);
  rep = diverge1(lookup(m, "rewritten"), "f32[3]=1,2,3", NULL);
  ts_listener_remove(id);
  g_assert_nonnull(rep->first);
  g_assert_cmpint(rep->first->op, ==, TS_OP_EXP);
  g_assert_cmpstr(rep->first->node, ==, "Exp");
  g_assert_cmpstr(rep->first->graph_node, ==, "Exp 'Exp' standing for Exp, Exp");
  g_assert_cmpfloat_with_epsilon(rep->first->max_abs, 1.0, 1e-5);
  g_assert_cmpint(rep->n_differ, ==, 3); /* both Exps and the result's Add */
  ts_diverge_report_free(rep);
  ts_module_free(m);

  /* simplify alone: pow(x, 3) is two Muls; the first (x*x) is no traced
   * op's value, the second is the pow's */
  g_assert_true(ts_set_passes("simplify"));
  m = open_module("diverge");
  rep = diverge1(lookup(m, "rewritten"), "f32[3]=1,2,3", NULL);
  g_assert_false(rep->diverged);
  g_assert_cmpint(rep->n_compared, ==, 5);
  g_assert_cmpint(rep->n_graph_only, ==, 1);
  g_assert_cmpint(rep->n_expected, ==, 1);
  g_assert_cmpint(rep->expected[0].expected, ==, TS_EXPECTED_SIMPLIFIED);
  ts_diverge_report_free(rep);
  ts_module_free(m);
  g_assert_true(ts_set_passes("all"));
}

/* ---- the seed programs ------------------------------------------------------------- */

static void on_warning(const ts_event *ev, void *data)
{
  if (ev->warning.kind == TS_WARNING_DIVERGENCE)
    g_ptr_array_add(data, g_strdup(ev->warning.message));
}

/* The training loops' arguments for the all-seeds check (check_seeds). */
static const struct {
  const char *function;
  const char *args[3];
} TRAINING_SEEDS[] = {
  { "train", { "5" } },
  { "train_rate", { "5", "0.001", "adam" } },
  { "train_where_log", { "5", "0.001" } },
};

/* Every seed export, on the example arguments it declares, runs the same
 * both ways, with the optimizer's passes (the default) and without; but
 * for the two the guides show differing on purpose.  Check mode, on the
 * same calls, warns for those two only. */
static void check_seeds(const char *passes)
{
  g_assert_true(ts_set_passes(passes));
  ts_module *m = open_module("seeds");
  GPtrArray *warnings = g_ptr_array_new_with_free_func(g_free);
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), on_warning, warnings);
  int n_matched = 0, n_checked = 0;
  for (int i = 0; i < ts_module_n_functions(m); i++) {
    ts_function *fn = ts_module_function(m, i);
    const char *name = ts_function_name(fn);
    const char *const *examples = ts_module_examples(m, i);
    int n = examples ? (int)g_strv_length((char **)examples) : 0;
    ts_value *args = g_new0(ts_value, MAX(n, 1));
    for (int k = 0; k < n; k++)
      g_assert_true(ts_value_parse(examples[k], &args[k]));
    /* A training loop feeds each step's rounding into the next: after a
     * few dozen steps of Adam the products' last bits (fused or not, the
     * kernel tuning picks) have grown past the tolerance, as they would in
     * TensorFlow, and at train_rate's example rate of 1e4 within two.  Its
     * first steps, at the guide's rate, compare op by op. */
    for (size_t t = 0; t < G_N_ELEMENTS(TRAINING_SEEDS); t++)
      if (strcmp(name, TRAINING_SEEDS[t].function) == 0)
        for (int k = 0; k < n && TRAINING_SEEDS[t].args[k]; k++) {
          ts_value_clear(&args[k]);
          g_assert_true(ts_value_parse(TRAINING_SEEDS[t].args[k], &args[k]));
        }
    ts_diverge_report *rep = NULL;
    int quiet = test_quiet_begin();
    bool ok = ts_diverge(fn, args, n, NULL, &rep);
    test_quiet_end(quiet);
    if (!ok && take_missing_dataset(name)) {
      for (int k = 0; k < n; k++)
        ts_value_clear(&args[k]);
      g_free(args);
      continue;
    }
    bool differs = strcmp(name, "unused_return") == 0 || strcmp(name, "side_effect") == 0;
    if (strcmp(name, "unused_return") == 0) {
      /* non-strict execution: eagerly its unused Gather fails, the graph prunes it */
      g_assert_false(ok);
      expect_error_containing("eager run");
    } else if (strcmp(name, "side_effect") == 0) {
      /* its iterator is host state: the graph keeps the value traced */
      g_assert_true(ok);
      g_assert_nonnull(rep->first);
      g_assert_cmpint(rep->first->op, ==, TS_OP_ASSIGN_ADD_VARIABLE);
      g_assert_nonnull(rep->cause);
      assert_contains(rep->cause, "constant the graph recorded while tracing");
    } else {
      assert_no_error();
      g_assert_true(ok);
      if (rep->diverged) {
        char *text = ts_diverge_report_format(rep);
        g_error("%s (passes %s) diverges:\n%s", name, passes, text);
      }
      n_matched += rep->n_matched;
      n_checked++;
    }
    ts_diverge_report_free(rep);

    guint before = warnings->len;
    ts_function_set_check_eagerly(fn, true);
    quiet = test_quiet_begin();
    ts_scope *scope = ts_scope_begin();
    ts_tensor *out[TS_MAX_RETURNS]; /* all of a tuple (train's step, loss, accuracy) */
    int n_out = ts_function_call_n(fn, args, n, out, TS_MAX_RETURNS, NULL);
    ts_scope_end(scope);
    test_quiet_end(quiet);
    assert_no_error();
    g_assert_cmpint(n_out, >=, 0); /* find_next_odd, side_effect: None */
    if (!differs && warnings->len != before)
      g_error("%s (passes %s), check mode: %s", name, passes, (char *)warnings->pdata[before]);
    g_assert_cmpuint(warnings->len, ==, before + differs);

    for (int k = 0; k < n; k++)
      ts_value_clear(&args[k]);
    g_free(args);
  }
  g_assert_cmpint(n_checked, >=, 25);
  g_assert_cmpint(n_matched, >, 500);
  ts_listener_remove(id);
  g_ptr_array_unref(warnings);
  ts_module_free(m);
  g_assert_true(ts_set_passes("all"));
}

static void test_seeds(void)
{
  check_seeds("all");
  check_seeds("none");
}

/* ---- what the modes may do differently ----------------------------------------------- */

static void test_expected(void)
{
  ts_module *m = open_module("diverge");
  ts_diverge_report *rep = diverge1(lookup(m, "print_and_fold"), "f32[3]=1,2,3", NULL);
  g_assert_false(rep->diverged);
  g_assert_cmpint(rep->n_expected, ==, 2);
  g_assert_cmpint(rep->expected[0].expected, ==, TS_EXPECTED_FOLDED);
  g_assert_cmpint(rep->expected[0].op, ==, TS_OP_ADD);
  g_assert_cmpint(rep->expected[1].expected, ==, TS_EXPECTED_PRINT);
  g_assert_cmpint(rep->expected[1].op, ==, TS_OP_PRINT);
  char *text = ts_diverge_report_format(rep);
  assert_contains(text, "no divergence");
  assert_contains(text, "expected differences:\n  op #1 Add 'Add' at diverge.c:");
  assert_contains(text, ": folded: folded into the constant 'Add' by the optimizer");
  assert_contains(text, "PrintV2 'PrintV2' at diverge.c:");
  free(text);
  ts_diverge_report_free(rep);

  /* NaN against NaN is equal unless asked otherwise */
  rep = diverge1(lookup(m, "log_of_negative"), "f32[3]=1,2,3", NULL);
  g_assert_false(rep->diverged);
  ts_diverge_report_free(rep);
  ts_diverge_options strict = TS_DIVERGE_OPTIONS_DEFAULT;
  strict.nan_differs = true;
  rep = diverge1(lookup(m, "log_of_negative"), "f32[3]=1,2,3", &strict);
  g_assert_true(rep->diverged);
  g_assert_nonnull(rep->first);
  /* neg, log and add are one fused node: its output is the Add's */
  g_assert_cmpint(rep->first->op, ==, TS_OP_ADD);
  g_assert_cmpstr(rep->first->graph_node, ==, "FusedElementwise 'Add' standing for Neg, Log, Add");
  g_assert_true(isnan(rep->first->eager_value) && isnan(rep->first->graph_value));
  g_assert_cmpint(rep->n_expected, ==, 2);
  g_assert_cmpint(rep->expected[1].op, ==, TS_OP_LOG);
  g_assert_cmpint(rep->expected[1].expected, ==, TS_EXPECTED_FUSED);
  ts_diverge_report_free(rep);
  ts_module_free(m);
}

/* Variables: both runs start from the same state, which then advances once. */
static void test_state(void)
{
  ts_module *m = open_module("diverge");
  ts_function *count_up = lookup(m, "count_up");
  for (int call = 1; call <= 2; call++) {
    ts_diverge_report *rep = diverge1(count_up, "f32[3]=1,2,3", NULL);
    g_assert_false(rep->diverged);
    g_assert_cmpint(rep->n_compared, ==, 2);
    /* the counter held (call-1)x before the call, call*x after it */
    assert_values(rep->result.eager, call == 1 ? "[2. 4. 6.]" : "[ 4.  8. 12.]");
    assert_values(rep->result.graph, call == 1 ? "[2. 4. 6.]" : "[ 4.  8. 12.]");
    ts_diverge_report_free(rep);
  }
  ts_diverge_report *rep = diverge1(lookup(m, "read_around_assign"), "f32[3]=1,2,3", NULL);
  g_assert_false(rep->diverged); /* reads stay on their side of the assign */
  /* the assign and the three Adds, two of them fused into the last */
  g_assert_cmpint(rep->n_compared, ==, 2);
  g_assert_cmpint(rep->n_expected, ==, 2);
  for (int i = 0; i < rep->n_expected; i++)
    g_assert_cmpint(rep->expected[i].expected, ==, TS_EXPECTED_FUSED);
  /* the counter holds 2x (count_up above): (2x + x) + (3x + x) */
  assert_values(rep->result.eager, "[ 7. 14. 21.]");
  assert_values(rep->result.graph, "[ 7. 14. 21.]");
  ts_diverge_report_free(rep);
  ts_module_free(m);
}

/* ---- the loop variable left out ---------------------------------------------------- */

static void test_loop_variable(void)
{
  ts_module *m = open_module("diverge");
  ts_diverge_report *rep = diverge1(lookup(m, "unlisted_loop_var"), "f32[3]=1,2,3", NULL);
  g_assert_true(rep->diverged);
  /* x * 2 and total + that are one fused node: the Mul's value exists only
   * eagerly, the Add (the node's output) is the first to differ */
  const ts_diverge_op *f = rep->first;
  g_assert_nonnull(f);
  g_assert_cmpint(f->op, ==, TS_OP_ADD);
  g_assert_cmpint(f->loc.line, ==, 17);
  g_assert_cmpstr(f->graph_node, ==, "FusedElementwise 'Add' standing for Mul, Add");
  g_assert_cmpint(f->occurrence, ==, 1); /* the first iteration agrees */
  assert_values(f->eager, "[ 6. 12. 18.]"); /* 2x + 4x */
  assert_values(f->graph, "[ 4.  8. 12.]"); /* 2x + 2x */
  g_assert_cmpint(rep->n_expected, ==, 3); /* the Mul of each iteration */
  for (int i = 0; i < rep->n_expected; i++) {
    g_assert_cmpint(rep->expected[i].op, ==, TS_OP_MUL);
    g_assert_cmpint(rep->expected[i].expected, ==, TS_EXPECTED_FUSED);
    g_assert_cmpint(rep->expected[i].occurrence, ==, i);
  }
  /* the cause is found at the Mul fused into the Add's node */
  g_assert_nonnull(rep->cause);
  assert_contains(rep->cause, "Mul at diverge.c:16 reads 'x': eagerly the value that Mul at "
                              "diverge.c:16 made in an earlier iteration");
  assert_contains(rep->cause, "a tensor changed inside the loop body but not listed in TS_WHILE(...)");
  assert_contains(rep->cause, "which lists &i, &total: add &x to the list");
  assert_values(rep->result.eager, "[14. 28. 42.]");
  assert_values(rep->result.graph, "[ 6. 12. 18.]");
  char *text = ts_diverge_report_format(rep);
  assert_contains(text, "Add 'Add' at diverge.c:17 (in the graph: FusedElementwise 'Add' standing for "
                        "Mul, Add): max |eager-graph| = 6 at [2] (eager 18, graph 12)");
  assert_contains(text, "likely cause: ");
  assert_contains(text, "Mul 'Mul' at diverge.c:16: fused: fused into FusedElementwise 'Add' "
                        "standing for Mul, Add: ");
  free(text);
  ts_diverge_report_free(rep);

  /* the same in a TS_FOR: x changes by i on every iteration; x + i and
   * total + x are one fused node */
  rep = diverge1(lookup(m, "unlisted_for_var"), "f32[2]=1,2", NULL);
  g_assert_nonnull(rep->first);
  g_assert_cmpint(rep->first->op, ==, TS_OP_ADD);
  g_assert_cmpint(rep->first->loc.line, ==, 30); /* total = total + x */
  g_assert_cmpint(rep->first->occurrence, ==, 2); /* iteration 0 adds 0, iteration 1 reads x as it was */
  assert_values(rep->first->eager, "[ 7. 10.]"); /* 1 + 2 + 4, 2 + 3 + 5 */
  assert_values(rep->first->graph, "[6. 9.]");
  assert_contains(rep->cause, "a tensor changed inside the loop body but not listed in TS_FOR(...)");
  assert_contains(rep->cause, "which lists &total: add &x to the list");
  ts_diverge_report_free(rep);

  /* listed, it agrees (x is a loop variable: nothing is fused) */
  rep = diverge1(lookup(m, "listed_loop_var"), "f32[3]=1,2,3", NULL);
  g_assert_false(rep->diverged);
  g_assert_cmpint(rep->n_matched, ==, rep->n_eager);
  ts_diverge_report_free(rep);
  ts_module_free(m);
}

/* ---- check mode ---------------------------------------------------------------------- */

static ts_tensor *call1(ts_function *fn, const char *spec)
{
  ts_value arg;
  g_assert_true(ts_value_parse(spec, &arg));
  ts_tensor *out = ts_function_call(fn, &arg, 1);
  assert_no_error();
  ts_value_clear(&arg);
  return out;
}

static void test_check_mode(void)
{
  ts_module *m = open_module("diverge");
  GPtrArray *warnings = g_ptr_array_new_with_free_func(g_free);
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), on_warning, warnings);
  ts_scope *scope = ts_scope_begin();

  ts_function *bad = lookup(m, "unlisted_loop_var");
  g_assert_false(ts_function_checks_eagerly(bad));
  ts_function_set_check_eagerly(bad, true);
  g_assert_true(ts_function_checks_eagerly(bad));
  assert_values(call1(bad, "f32[3]=1,2,3"), "[ 6. 12. 18.]"); /* the graph's result */
  g_assert_cmpuint(warnings->len, ==, 1);
  const char *msg = warnings->pdata[0];
  assert_contains(msg, "unlisted_loop_var(x: f32[3]): eager and graph differ (check mode): "
                       "first divergence: op #8 Add 'Add' at diverge.c:17 (in the graph: "
                       "FusedElementwise 'Add' standing for Mul, Add)");
  assert_contains(msg, "a tensor changed inside the loop body but not listed in TS_WHILE(...)");
  g_assert_null(strchr(msg, '\n'));
  /* off again: the graph alone, no warning */
  ts_function_set_check_eagerly(bad, false);
  assert_values(call1(bad, "f32[3]=1,2,3"), "[ 6. 12. 18.]");
  g_assert_cmpuint(warnings->len, ==, 1);

  ts_function *good = lookup(m, "listed_loop_var");
  ts_function_set_check_eagerly(good, true);
  assert_values(call1(good, "f32[3]=1,2,3"), "[14. 28. 42.]");
  /* state advances once per call, as without check mode */
  ts_function *count_up = lookup(m, "count_up");
  ts_function_set_check_eagerly(count_up, true);
  for (int call = 1; call <= 3; call++)
    assert_values(call1(count_up, "f32[3]=1,2,3"),
                  call == 1 ? "[2. 4. 6.]" : call == 2 ? "[ 4.  8. 12.]" : "[ 6. 12. 18.]");
  g_assert_cmpuint(warnings->len, ==, 1);

  /* the guides' unused_return fails eagerly; the graph prunes what fails */
  ts_module *seeds = open_module("seeds");
  ts_function *unused = lookup(seeds, "unused_return");
  ts_function_set_check_eagerly(unused, true);
  assert_values(call1(unused, "f32[1]=0"), "[0.]");
  g_assert_cmpuint(warnings->len, ==, 2);
  assert_contains(warnings->pdata[1], "unused_return(x: f32[1]): the eager run failed where the "
                                      "graph ran (check mode): ");
  assert_contains(warnings->pdata[1], "Gather: indices[0] = 1 is not in [0, 1)");
  ts_module_free(seeds);

  ts_scope_end(scope);
  ts_listener_remove(id);
  g_ptr_array_unref(warnings);
  ts_module_free(m);
}

/* Every way to call a function resolves the call on one path: a host list
 * given for the tensor of its input signature is converted, and the graph
 * call, the check-mode call (both its runs), ts_diverge and the eager call
 * agree, on the one concrete function traced for it; past the retrace
 * limit the check-mode call runs eagerly and ts_diverge says there is no
 * graph. */
static void test_one_resolution(void)
{
  ts_module *m = open_module("diverge");
  ts_function *fn = lookup(m, "listed_loop_var");
  ts_spec spec = { TS_F32, TS_SHAPE(3) };
  g_assert_true(ts_function_set_input_signature(fn, &spec, 1));
  ts_value list;
  g_assert_true(ts_value_parse("[1.0, 2.0, 3.0]", &list));
  GPtrArray *warnings = g_ptr_array_new_with_free_func(g_free);
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), on_warning, warnings);
  ts_scope *scope = ts_scope_begin();

  assert_values(ts_function_call(fn, &list, 1), "[14. 28. 42.]");
  assert_values(ts_function_call_eager(fn, &list, 1), "[14. 28. 42.]");
  ts_function_set_check_eagerly(fn, true);
  assert_values(ts_function_call(fn, &list, 1), "[14. 28. 42.]");
  g_assert_cmpuint(warnings->len, ==, 0);
  ts_diverge_report *rep = NULL;
  g_assert_true(ts_diverge(fn, &list, 1, NULL, &rep));
  assert_no_error();
  g_assert_false(rep->diverged);
  assert_values(rep->result.graph, "[14. 28. 42.]");
  ts_diverge_report_free(rep);
  g_assert_cmpint(ts_function_trace_count(fn), ==, 1);
  g_assert_cmpint(ts_function_n_concrete(fn), ==, 1);
  /* a bad argument is refused once, with the same words on every path */
  ts_value word = TS_STRING_VALUE("no tensor");
  g_assert_null(ts_function_call(fn, &word, 1));
  expect_error_containing("listed_loop_var: arg 0 (x) must be a f32[3] tensor (input signature)");
  g_assert_false(ts_diverge(fn, &word, 1, NULL, &rep));
  expect_error_containing("listed_loop_var: arg 0 (x) must be a f32[3] tensor (input signature)");
  ts_function_set_check_eagerly(fn, false);
  g_assert_null(ts_function_call(fn, &word, 1));
  expect_error_containing("listed_loop_var: arg 0 (x) must be a f32[3] tensor (input signature)");

  /* past the retrace limit (0 more traces): a new signature runs eagerly */
  ts_function *other = lookup(m, "unlisted_loop_var");
  ts_function_set_retrace_limit(other, 0);
  ts_function_set_check_eagerly(other, true);
  ts_value x;
  g_assert_true(ts_value_parse("f32[3]=1,2,3", &x));
  int quiet = test_quiet_begin();
  ts_tensor *eager = ts_function_call(other, &x, 1);
  test_quiet_end(quiet);
  assert_no_error();
  g_assert_nonnull(eager);
  g_assert_cmpint(ts_function_n_concrete(other), ==, 0);
  g_assert_false(ts_diverge(other, &x, 1, NULL, &rep));
  g_assert_null(rep);
  expect_error_containing("past its retrace limit, this call would run eagerly");
  ts_value_clear(&x);

  ts_scope_end(scope);
  ts_listener_remove(id);
  g_ptr_array_unref(warnings);
  ts_value_clear(&list);
  ts_module_free(m);
}

/* ---- bad input ---------------------------------------------------------------------------- */

static void test_errors(void)
{
  ts_module *m = open_module("diverge");
  ts_function *fn = lookup(m, "listed_loop_var");
  ts_diverge_report *rep = NULL;
  ts_value s = TS_STRING_VALUE("no tensor");
  g_assert_false(ts_diverge(fn, &s, 1, NULL, &rep));
  g_assert_null(rep);
  expect_error_containing("listed_loop_var");
  ts_value x;
  g_assert_true(ts_value_parse("f32[3]=1,2,3", &x));
  ts_diverge_options bad = { .atol = -1, .rtol = 0 };
  g_assert_false(ts_diverge(fn, &x, 1, &bad, &rep));
  expect_error_containing("tolerances must be numbers >= 0");
  bad = (ts_diverge_options){ .atol = NAN };
  g_assert_false(ts_diverge(fn, &x, 1, &bad, &rep));
  expect_error_containing("tolerances");
  g_assert_null(rep);
  ts_value_clear(&x);
  ts_module_free(m);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  /* the expectations below are of the default passes, whatever TRACESCOPE_PASSES says */
  g_assert_true(ts_set_passes("all"));
  g_test_add_func("/diverge/planted", test_planted);
  g_test_add_func("/diverge/planted-in-loop", test_planted_in_loop);
  g_test_add_func("/diverge/rewritten", test_rewritten);
  g_test_add_func("/diverge/seeds", test_seeds);
  g_test_add_func("/diverge/expected", test_expected);
  g_test_add_func("/diverge/state", test_state);
  g_test_add_func("/diverge/loop-variable", test_loop_variable);
  g_test_add_func("/diverge/check-mode", test_check_mode);
  g_test_add_func("/diverge/one-resolution", test_one_resolution);
  g_test_add_func("/diverge/errors", test_errors);
  return g_test_run();
}
