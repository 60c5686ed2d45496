/* test-debug.c — the step debugger and health mode (also built with
 * ThreadSanitizer: `make tsan`): a debuggee thread runs a call while the
 * test, as the controller, waits for its stops and steps, pauses, cancels
 * or leaves.  No fixed waits: every wait is on a stop, with a generous
 * timeout only as a safety net. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope-debug.h>
#include <tracescope.h>

#define WAIT_MS (60 * 1000)

/* ---- programs ------------------------------------------------------------------------ */

/* log of a negative: x - 2 is [-1, 1] for x = [1, 3] */
static ts_tensor *plant_nan(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *y = ts_sub(x, ts_scalar_f32(2));
  ts_tensor *z = ts_log(y);
  return ts_add(z, ts_scalar_f32(1));
}

static ts_tensor *inner(ts_call *c)
{
  ts_tensor *a = ts_arg(c, 0);
  ts_tensor *m = ts_mul(a, a);
  return ts_sub(m, a);
}

/* Add, then inner (Mul, Sub) as a nested call, Neg, Sum and Less for a
 * TS_IF whose block runs Exp and Sqrt, then Abs: one op type per step. */
static ts_tensor *nested(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *a = ts_add(x, x);
  ts_tensor *b = TS_INVOKE(inner, a);
  ts_tensor *n = ts_neg(b);
  TS_IF (ts_less(ts_reduce_sum(n, TS_ALL_AXES, false), ts_scalar_f32(0)), &n) {
    n = ts_exp(n);
    n = ts_sqrt(n);
  } TS_END_IF;
  return ts_abs(n);
}

/* Counts up to n: long enough to pause and cancel. */
static ts_tensor *count_to(ts_call *c)
{
  ts_tensor *n = ts_arg(c, 0);
  ts_tensor *i = ts_scalar_i64(0), *one = ts_scalar_i64(1);
  TS_WHILE (ts_less(i, n), &i) {
    i = ts_add(i, one);
  }
  return i;
}

/* x * x, then in a TS_IF on its sum, a Gather of row 7 of 4: it fails when it runs */
static ts_tensor *gather_past(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *y = ts_mul(x, x);
  TS_IF (ts_greater(ts_reduce_sum(y, TS_ALL_AXES, false), ts_scalar_f32(0)), &y) {
    y = ts_gather(y, ts_scalar_i32(7), 0);
  } TS_END_IF;
  return y;
}

static ts_tensor *var;

/* Two assign_adds of x to a variable, then its value doubled. */
static ts_tensor *bump(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_assign_add(var, x);
  ts_assign_add(var, x);
  return ts_mul(ts_read(var), ts_scalar_f32(2));
}

static ts_tensor *adam_var, *adam_m, *adam_v;

/* One Adam update whose gradient's square overflows f32: the second
 * moment v becomes Inf (var and m stay finite), then var is read. */
static ts_tensor *adam_overflow(ts_call *c)
{
  ts_tensor *grad = ts_arg(c, 0);
  if (!ts_apply_adam(adam_var, adam_m, adam_v, ts_scalar_f32(0.9f), ts_scalar_f32(0.999f),
                     ts_scalar_f32(0.001f), ts_scalar_f32(0.9f), ts_scalar_f32(0.999f),
                     ts_scalar_f32(1e-7f), grad))
    return NULL;
  return ts_read(adam_var);
}

/* ---- the debuggee thread --------------------------------------------------------------- */

typedef struct debuggee {
  ts_debug_session *s;
  ts_function *fn;
  ts_value args[2];
  int n_args;
  bool eager;
  /* results */
  bool ok;
  ts_error_code code;
  double values[4];
  GThread *thread;
} debuggee;

static gpointer debuggee_run(gpointer data)
{
  debuggee *d = data;
  ts_run_functions_eagerly(d->eager);
  ts_tensor *out = ts_debug_call(d->s, d->fn, d->args, d->n_args);
  d->ok = out != NULL;
  for (int i = 0; out && i < 4 && i < ts_tensor_size(out); i++)
    d->values[i] = ts_tensor_get_f64(out, i);
  ts_error *e = ts_error_take();
  d->code = e ? e->code : TS_OK;
  ts_error_free(e);
  ts_release_all();
  return NULL;
}

static void debuggee_start(debuggee *d)
{
  d->thread = g_thread_new("debuggee", debuggee_run, d);
}

static void debuggee_join(debuggee *d)
{
  g_thread_join(d->thread);
}

static void next_stop(ts_debug_session *s, ts_debug_stop *stop)
{
  if (!ts_debug_wait(s, WAIT_MS, stop))
    g_error("no stop within %d s", WAIT_MS / 1000);
}

/* Waits for the next stop and checks its op type and reason. */
static void expect_stop(ts_debug_session *s, ts_debug_stop *stop, ts_op op, ts_debug_reason reason)
{
  next_stop(s, stop);
  g_test_message("stop: %s at %s depth %d (%s)", stop->op.op_name, stop->op.node, stop->op.depth,
                 ts_debug_reason_name(stop->reason));
  g_assert_cmpstr(ts_debug_reason_name(stop->reason), ==, ts_debug_reason_name(reason));
  g_assert_cmpstr(stop->op.op_name, ==, ts_op_name(op));
}

static void expect_finished(ts_debug_session *s, const char *error_part)
{
  ts_debug_stop stop;
  next_stop(s, &stop);
  g_assert_cmpint(stop.reason, ==, TS_DEBUG_FINISHED);
  if (error_part) {
    g_assert_nonnull(stop.error);
    g_assert_nonnull(strstr(stop.error, error_part));
  } else {
    g_assert_null(stop.error);
  }
  ts_debug_stop_clear(&stop);
}

static ts_module *seeds;

static bool tensors_equal(const ts_tensor *a, const ts_tensor *b, double tol)
{
  if (ts_tensor_size(a) != ts_tensor_size(b))
    return false;
  for (int64_t i = 0; i < ts_tensor_size(a); i++)
    if (fabs(ts_tensor_get_f64(a, i) - ts_tensor_get_f64(b, i)) > tol)
      return false;
  return true;
}

/* ---- tests ------------------------------------------------------------------------------ */

/* power(x, 3) stops at each MatMul, with x and the running product as inputs. */
static void test_power_matmuls(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(10, 10), 0, 1, 3);
  debuggee d = { .s = ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING }),
                 .fn = ts_module_lookup(seeds, "power"),
                 .args = { TS_TENSOR_VALUE(x), TS_INT_VALUE(3) }, .n_args = 2, .eager = true };
  int id = ts_debug_break_add(d.s, "MatMul");
  g_assert_cmpint(id, >, 0);
  debuggee_start(&d);
  ts_tensor *expected = ts_eye(TS_F32, 10, 10);
  uint64_t last_seq = 0;
  for (int k = 0; k < 3; k++) {
    ts_debug_stop stop;
    expect_stop(d.s, &stop, TS_OP_MATMUL, TS_DEBUG_BREAKPOINT);
    g_assert_cmpint(stop.breakpoint, ==, id);
    g_assert_false(stop.after);
    g_assert_cmpint(stop.op.seq, >, last_seq);
    last_seq = stop.op.seq;
    g_assert_cmpint(stop.op.n_inputs, ==, 2);
    g_assert_true(tensors_equal(stop.op.inputs[0], x, 0));
    g_assert_true(tensors_equal(stop.op.inputs[1], expected, 1e-4));
    g_assert_nonnull(strstr(stop.op.file, "seeds.c"));
    g_assert_cmpstr(stop.op.func, ==, "power");
    g_assert_cmpint(stop.op.n_frames, ==, 1);
    g_assert_cmpstr(stop.op.frames[0].name, ==, "power");
    expected = ts_matmul(x, expected);
    ts_debug_stop_clear(&stop);
    g_assert_true(ts_debug_resume(d.s, TS_DEBUG_CONTINUE));
  }
  expect_finished(d.s, NULL);
  debuggee_join(&d);
  g_assert_true(d.ok);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat_with_epsilon(d.values[i], ts_tensor_get_f64(expected, i), 1e-3);
  g_assert_false(ts_debug_resume(d.s, TS_DEBUG_CONTINUE)); /* nothing to resume */
  ts_debug_free(d.s);
  ts_scope_end(scope);
}

/* In graph mode an op of a loop's body names its node and that node's
 * path, which tells it from a node of its name elsewhere: sum_even's
 * FloorMod is "While/body/FloorMod", its Add "While/body/If/then/Add". */
static void test_node_paths(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *items = ts_constant(TS_I32, TS_SHAPE(4), (int32_t[]){ 10, 12, 15, 20 });
  debuggee d = { .s = ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING }),
                 .fn = ts_module_lookup(seeds, "sum_even"), .args = { TS_TENSOR_VALUE(items) }, .n_args = 1 };
  ts_debug_break_add(d.s, "FloorMod");
  ts_debug_break_add(d.s, "Add");
  debuggee_start(&d);
  int mods = 0, sums = 0, counters = 0;
  for (;;) {
    ts_debug_stop stop;
    next_stop(d.s, &stop);
    if (stop.reason == TS_DEBUG_FINISHED) {
      g_assert_null(stop.error);
      ts_debug_stop_clear(&stop);
      break;
    }
    g_assert_cmpint(stop.reason, ==, TS_DEBUG_BREAKPOINT);
    if (stop.op.op == TS_OP_MOD) {
      g_assert_cmpstr(stop.op.node, ==, "FloorMod");
      g_assert_cmpstr(stop.op.path, ==, "While/body/FloorMod");
      mods++;
    } else if (g_strcmp0(stop.op.path, "While/body/If/then/Add") == 0) {
      sums++; /* s += c */
    } else { /* the loop's counter */
      g_assert_true(g_str_has_prefix(stop.op.path, "While/body/Add"));
      counters++;
    }
    ts_debug_stop_clear(&stop);
    g_assert_true(ts_debug_resume(d.s, TS_DEBUG_CONTINUE));
  }
  g_assert_cmpint(mods, ==, 4);
  g_assert_cmpint(sums, ==, 3); /* 10, 12 and 20 */
  g_assert_cmpint(counters, ==, 4);
  debuggee_join(&d);
  g_assert_true(d.ok);
  ts_debug_free(d.s);

  /* a glob on the path stops at the If's then branch's Add alone */
  d.s = ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING });
  g_assert_cmpint(ts_debug_break_add(d.s, "While/body/If/then/*"), >, 0);
  debuggee_start(&d);
  for (int k = 0; k < 3; k++) {
    ts_debug_stop stop;
    expect_stop(d.s, &stop, TS_OP_ADD, TS_DEBUG_BREAKPOINT);
    g_assert_cmpstr(stop.op.path, ==, "While/body/If/then/Add");
    ts_debug_stop_clear(&stop);
    g_assert_true(ts_debug_resume(d.s, TS_DEBUG_CONTINUE));
  }
  expect_finished(d.s, NULL);
  debuggee_join(&d);
  g_assert_true(d.ok);
  g_assert_cmpfloat(d.values[0], ==, 42);
  ts_debug_free(d.s);
  ts_scope_end(scope);
}

/* The same in graph mode: the stops name the graph's nodes. */
static void test_power_graph_mode(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_ones(TS_F32, TS_SHAPE(10, 10));
  debuggee d = { .s = ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING }),
                 .fn = ts_module_lookup(seeds, "power"),
                 .args = { TS_TENSOR_VALUE(x), TS_INT_VALUE(2) }, .n_args = 2, .eager = false };
  ts_debug_break_add(d.s, "MatMul");
  debuggee_start(&d);
  for (int k = 0; k < 2; k++) {
    ts_debug_stop stop;
    expect_stop(d.s, &stop, TS_OP_MATMUL, TS_DEBUG_BREAKPOINT);
    g_assert_nonnull(stop.op.node);
    g_assert_nonnull(strstr(stop.op.node, "MatMul"));
    ts_debug_stop_clear(&stop);
    ts_debug_resume(d.s, TS_DEBUG_CONTINUE);
  }
  expect_finished(d.s, NULL);
  debuggee_join(&d);
  g_assert_true(d.ok);
  g_assert_cmpfloat(d.values[0], ==, 10);
  ts_debug_free(d.s);
  ts_scope_end(scope);
}

/* An op that fails stops the call at it, with its inputs and the error,
 * before the call ends with that error: shapes refused eagerly (power's
 * MatMul of a 3 x 3 x by its 10 x 10 identity, no breakpoint set), and a
 * kernel's failure inside a traced If (a Gather past the end): one stop,
 * at the Gather, not another for the If that fails with it. */
static void test_stops_where_an_op_fails(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_ones(TS_F32, TS_SHAPE(3, 3));
  debuggee d = { .s = ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING }),
                 .fn = ts_module_lookup(seeds, "power"),
                 .args = { TS_TENSOR_VALUE(x), TS_INT_VALUE(2) }, .n_args = 2, .eager = true };
  debuggee_start(&d);
  ts_debug_stop stop;
  expect_stop(d.s, &stop, TS_OP_MATMUL, TS_DEBUG_ERROR);
  g_assert_false(stop.after);
  g_assert_nonnull(stop.error);
  g_assert_nonnull(strstr(stop.error, "inner dimensions differ"));
  g_assert_nonnull(strstr(stop.op.file, "seeds.c"));
  g_assert_cmpint(stop.op.n_inputs, ==, 2);
  g_assert_cmpint(stop.op.n_outputs, ==, 0);
  g_assert_cmpint(ts_tensor_shape(stop.op.inputs[1]).dim[0], ==, 10);
  ts_debug_stop_clear(&stop);
  ts_debug_resume(d.s, TS_DEBUG_STEP_INTO); /* nothing left to step to: the call ends */
  expect_finished(d.s, "inner dimensions differ");
  debuggee_join(&d);
  g_assert_false(d.ok);
  ts_debug_free(d.s);

  ts_function *fn = ts_function_new("gather_past", gather_past, "x");
  for (int eager = 0; eager < 2; eager++) {
    debuggee g = { .s = ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING }), .fn = fn,
                   .args = { TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(4))) }, .n_args = 1, .eager = eager };
    debuggee_start(&g);
    expect_stop(g.s, &stop, TS_OP_GATHER, TS_DEBUG_ERROR);
    g_assert_nonnull(strstr(stop.error, "7"));
    g_assert_cmpint(stop.op.n_inputs, ==, 2);
    if (!eager) /* the node, in its If */
      g_assert_nonnull(stop.op.node);
    ts_debug_stop_clear(&stop);
    ts_debug_resume(g.s, TS_DEBUG_CONTINUE);
    expect_finished(g.s, "7");
    debuggee_join(&g);
    g_assert_false(g.ok);
    ts_debug_free(g.s);
  }
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* Break on NaN stops after the Log, with the NaN in its output. */
static void test_break_on_nan(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("plant_nan", plant_nan, "x");
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 3 });
  debuggee d = { .s = ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING }),
                 .fn = fn, .args = { TS_TENSOR_VALUE(x) }, .n_args = 1, .eager = true };
  int id = ts_debug_break_add(d.s, "nan");
  debuggee_start(&d);
  ts_debug_stop stop;
  expect_stop(d.s, &stop, TS_OP_LOG, TS_DEBUG_NAN);
  g_assert_cmpint(stop.breakpoint, ==, id);
  g_assert_true(stop.after);
  g_assert_cmpint(stop.op.n_outputs, ==, 1);
  ts_tensor_stats st;
  g_assert_true(ts_tensor_stats_compute(stop.op.outputs[0], &st));
  g_assert_cmpint(st.n_nan, ==, 1);
  g_assert_cmpfloat(st.min, ==, 0);
  ts_debug_stop_clear(&stop);
  /* the Add after it has a NaN too */
  ts_debug_resume(d.s, TS_DEBUG_CONTINUE);
  expect_stop(d.s, &stop, TS_OP_ADD, TS_DEBUG_NAN);
  ts_debug_stop_clear(&stop);
  ts_debug_resume(d.s, TS_DEBUG_CONTINUE);
  expect_finished(d.s, NULL);
  debuggee_join(&d);
  ts_debug_free(d.s);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* An op with no outputs that writes variables in place (ResourceApplyAdam)
 * made what they hold after it: an Inf it writes stops `--break inf` there,
 * the stop shows the variables (var, m, v) as its outputs, and health names
 * it as the first op that made an Inf, eagerly and traced. */
static void test_inf_written_in_place(void)
{
  ts_scope *scope = ts_scope_begin();
  for (int eager = 0; eager < 2; eager++) {
    adam_var = ts_variable_new(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 }), "var");
    adam_m = ts_variable_new(ts_zeros(TS_F32, TS_SHAPE(2)), "m");
    adam_v = ts_variable_new(ts_zeros(TS_F32, TS_SHAPE(2)), "v");
    ts_function *fn = ts_function_new("adam_overflow", adam_overflow, "grad");
    ts_value grad = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 1e30f }));
    debuggee d = { .s = ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING }),
                   .fn = fn, .args = { grad }, .n_args = 1, .eager = eager };
    int id = ts_debug_break_add(d.s, "inf");
    debuggee_start(&d);
    ts_debug_stop stop;
    expect_stop(d.s, &stop, TS_OP_APPLY_ADAM, TS_DEBUG_INF);
    g_assert_cmpint(stop.breakpoint, ==, id);
    g_assert_true(stop.after);
    g_assert_cmpint(stop.op.n_outputs, ==, 3);
    ts_tensor_stats st;
    g_assert_true(ts_tensor_stats_compute(stop.op.outputs[2], &st)); /* v */
    g_assert_cmpint(st.n_inf, ==, 1);
    g_assert_true(ts_tensor_stats_compute(stop.op.outputs[0], &st)); /* var */
    g_assert_cmpint(st.n_inf + st.n_nan, ==, 0);
    ts_debug_stop_clear(&stop);
    ts_debug_resume(d.s, TS_DEBUG_CONTINUE);
    expect_finished(d.s, NULL);
    debuggee_join(&d);
    ts_debug_free(d.s);

    g_assert_nonnull(ts_assign(adam_v, ts_zeros(TS_F32, TS_SHAPE(2)))); /* finite again */
    ts_run_functions_eagerly(eager);
    ts_health *h = ts_health_start(TS_HEALTH_COUNTS);
    g_assert_nonnull(ts_function_call(fn, &grad, 1));
    ts_health_stop(h);
    const ts_health_op *first = ts_health_first_nonfinite(h);
    g_assert_nonnull(first);
    g_assert_cmpstr(first->op_name, ==, "ResourceApplyAdam");
    g_assert_cmpint(first->n_inf, ==, 1);
    ts_health_free(h);
    ts_run_functions_eagerly(false);
    ts_function_free(fn);
    ts_tensor_unref(adam_var);
    ts_tensor_unref(adam_m);
    ts_tensor_unref(adam_v);
  }
  ts_scope_end(scope);
}

/* One recorded call of plant_nan: the first NaN is the Log's.  Graph mode
 * with the fuse pass runs Sub, Log and Add as one node, which the report
 * names with its origins. */
static void check_health(ts_function *fn, bool eager, bool fused)
{
  ts_value arg = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 3 }));
  ts_run_functions_eagerly(eager);
  ts_health *h = ts_health_start(eager ? TS_HEALTH_STATS : TS_HEALTH_COUNTS);
  g_assert_nonnull(ts_function_call(fn, &arg, 1));
  ts_health_stop(h);
  g_assert_nonnull(ts_function_call(fn, &arg, 1)); /* not recorded */
  const ts_health_op *first = ts_health_first_nonfinite(h);
  g_assert_nonnull(first);
  g_assert_cmpint(first->n_nan, ==, 1);
  g_assert_cmpint(first->n_inf, ==, 0);
  g_assert_nonnull(strstr(first->file, "test-debug.c"));
  g_assert_cmpstr(first->func, ==, "plant_nan");
  if (fused) {
    g_assert_cmpstr(first->op_name, ==, "FusedElementwise");
    g_assert_cmpstr(first->origins, ==, "Sub, Log, Add");
  } else {
    g_assert_cmpstr(first->op_name, ==, "Log");
    g_assert_null(first->origins);
  }
  if (!eager && !fused)
    g_assert_cmpstr(first->node, ==, "Log");
  if (eager)
    g_assert_cmpfloat(first->min, ==, 0); /* log(1); the NaN left out */
  int64_t n = ts_health_n_ops(h);
  g_assert_cmpint(n, >=, fused ? 1 : 3);
  g_assert_cmpstr(ts_health_get(h, n - 1)->op_name, ==, fused ? "FusedElementwise" : "Add");
  g_assert_null(ts_health_get(h, n));
  ts_health_reset(h);
  g_assert_cmpint(ts_health_n_ops(h), ==, 0);
  g_assert_null(ts_health_first_nonfinite(h));
  ts_health_free(h);
}

/* Health mode names the Log eagerly and in graph mode, fused or not. */
static void test_health(void)
{
  ts_scope *scope = ts_scope_begin();
  char *passes = ts_get_passes();
  for (int round = 0; round < 3; round++) {
    /* eager; graph with every pass; graph with none */
    g_assert_true(ts_set_passes(round == 2 ? "none" : "all"));
    ts_function *fn = ts_function_new("plant_nan", plant_nan, "x");
    check_health(fn, round == 0, round == 1);
    ts_function_free(fn);
  }
  g_assert_true(ts_set_passes(passes));
  free(passes);
  ts_run_functions_eagerly(false);
  ts_scope_end(scope);
}

/* More named ops than the report's table of names has slots (1024), each
 * node's name its own pointer: most meet another in their slot. */
#define MANY_NAMES 3000

static ts_tensor *many_names(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  for (int i = 0; i < MANY_NAMES && x; i++) {
    char name[16];
    g_snprintf(name, sizeof name, "n%d", i);
    TS_NAME_SCOPE(name) x = ts_neg(x);
  }
  return x;
}

/* Health mode's names are its own copies, each record its node's, however
 * many names share a slot, and still there once the function is freed. */
static void test_health_names(void)
{
  ts_scope *scope = ts_scope_begin();
  char *passes = ts_get_passes();
  g_assert_true(ts_set_passes("none")); /* the Negs stay apart */
  ts_function *fn = ts_function_new("many_names", many_names, "x");
  ts_value arg = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 3 }));
  ts_health *h = ts_health_start(TS_HEALTH_COUNTS);
  for (int call = 0; call < 2; call++) /* the second finds the names copied */
    g_assert_nonnull(ts_function_call(fn, &arg, 1));
  ts_health_stop(h);
  ts_function_free(fn);
  g_assert_cmpint(ts_health_n_ops(h), ==, 2 * MANY_NAMES);
  for (int64_t i = 0; i < 2 * MANY_NAMES; i++) {
    char want[32];
    g_snprintf(want, sizeof want, "n%d/Neg", (int)(i % MANY_NAMES));
    g_assert_cmpstr(ts_health_get(h, i)->node, ==, want);
    g_assert_cmpstr(ts_health_get(h, i)->func, ==, "many_names");
  }
  ts_health_free(h);
  g_assert_true(ts_set_passes(passes));
  free(passes);
  ts_scope_end(scope);
}

static ts_op stop_op(ts_debug_stop *stop)
{
  return (ts_op)ts_op_from_name(stop->op.op_name);
}

/* Step into, over and out around a nested call and a TS_IF block. */
static void test_stepping(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("nested", nested, "x");
  ts_value arg = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 }));
  /* step over: Add, (inner skipped) Neg, Sum, Less, (block skipped) Abs */
  debuggee d = { .s = ts_debug_new(NULL), .fn = fn, .args = { arg }, .n_args = 1, .eager = true };
  debuggee_start(&d);
  ts_debug_stop stop;
  expect_stop(d.s, &stop, TS_OP_ADD, TS_DEBUG_STEP);
  g_assert_cmpint(stop.op.depth, ==, 1);
  static const ts_op over[] = { TS_OP_NEG, TS_OP_REDUCE_SUM, TS_OP_LESS, TS_OP_ABS };
  for (size_t i = 0; i < G_N_ELEMENTS(over); i++) {
    ts_debug_stop_clear(&stop);
    ts_debug_resume(d.s, TS_DEBUG_STEP_OVER);
    expect_stop(d.s, &stop, over[i], TS_DEBUG_STEP);
    g_assert_cmpint(stop.op.depth, ==, 1);
  }
  ts_debug_stop_clear(&stop);
  ts_debug_resume(d.s, TS_DEBUG_STEP_OVER);
  expect_finished(d.s, NULL);
  debuggee_join(&d);
  g_assert_true(d.ok);
  ts_debug_free(d.s);

  /* step into: every op, the nested call's frames and the block's */
  d = (debuggee){ .s = ts_debug_new(NULL), .fn = fn, .args = { arg }, .n_args = 1, .eager = true };
  debuggee_start(&d);
  static const ts_op into[] = { TS_OP_ADD, TS_OP_MUL, TS_OP_SUB, TS_OP_NEG, TS_OP_REDUCE_SUM,
                                TS_OP_LESS, TS_OP_EXP, TS_OP_SQRT, TS_OP_ABS };
  for (size_t i = 0; i < G_N_ELEMENTS(into); i++) {
    expect_stop(d.s, &stop, into[i], TS_DEBUG_STEP);
    if (into[i] == TS_OP_MUL) {
      g_assert_cmpint(stop.op.depth, ==, 2);
      g_assert_cmpstr(stop.op.frames[0].name, ==, "nested");
      g_assert_cmpstr(stop.op.frames[1].name, ==, "inner");
    }
    if (into[i] == TS_OP_EXP) {
      g_assert_cmpint(stop.op.depth, ==, 2);
      g_assert_cmpstr(stop.op.frames[1].name, ==, "then");
      g_assert_nonnull(strstr(stop.op.frames[1].file, "test-debug.c"));
      g_assert_cmpint(stop.op.frames[1].line, >, 0);
    }
    ts_debug_stop_clear(&stop);
    ts_debug_resume(d.s, TS_DEBUG_STEP_INTO);
  }
  expect_finished(d.s, NULL);
  debuggee_join(&d);
  ts_debug_free(d.s);

  /* step out of the nested call and of the block */
  d = (debuggee){ .s = ts_debug_new(NULL), .fn = fn, .args = { arg }, .n_args = 1, .eager = true };
  debuggee_start(&d);
  expect_stop(d.s, &stop, TS_OP_ADD, TS_DEBUG_STEP);
  ts_debug_stop_clear(&stop);
  ts_debug_resume(d.s, TS_DEBUG_STEP_INTO);
  expect_stop(d.s, &stop, TS_OP_MUL, TS_DEBUG_STEP);
  ts_debug_stop_clear(&stop);
  ts_debug_resume(d.s, TS_DEBUG_STEP_OUT);
  expect_stop(d.s, &stop, TS_OP_NEG, TS_DEBUG_STEP);
  ts_debug_stop_clear(&stop);
  ts_debug_break_add(d.s, "Exp");
  ts_debug_resume(d.s, TS_DEBUG_CONTINUE);
  expect_stop(d.s, &stop, TS_OP_EXP, TS_DEBUG_BREAKPOINT);
  g_assert_cmpint(stop_op(&stop), ==, TS_OP_EXP);
  ts_debug_stop_clear(&stop);
  ts_debug_resume(d.s, TS_DEBUG_STEP_OUT);
  expect_stop(d.s, &stop, TS_OP_ABS, TS_DEBUG_STEP);
  ts_debug_stop_clear(&stop);
  ts_debug_resume(d.s, TS_DEBUG_CONTINUE);
  expect_finished(d.s, NULL);
  debuggee_join(&d);
  ts_debug_free(d.s);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* Step back: the history holds each op's tensors as they were, a
 * variable's value included, after later ops changed it. */
static void test_history(void)
{
  ts_scope *scope = ts_scope_begin();
  var = ts_variable_new(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 }), "v");
  ts_function *fn = ts_function_new("bump", bump, "x");
  ts_value arg = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 10, 10 }));
  debuggee d = { .s = ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING }),
                 .fn = fn, .args = { arg }, .n_args = 1, .eager = true };
  debuggee_start(&d);
  expect_finished(d.s, NULL);
  debuggee_join(&d);
  g_assert_true(d.ok);
  g_assert_cmpfloat(d.values[0], ==, 42);
  int n = ts_debug_history_n(d.s);
  int assigns = 0;
  for (int i = 0; i < n; i++) {
    ts_debug_op op;
    g_assert_true(ts_debug_history_get(d.s, i, &op));
    if (op.op == TS_OP_ASSIGN_ADD_VARIABLE) {
      /* the variable before and after this assign, not as it is now (21, 22) */
      double before = assigns == 0 ? 1 : 11;
      g_assert_cmpfloat(ts_tensor_get_f64(op.inputs[0], 0), ==, before);
      g_assert_cmpfloat(ts_tensor_get_f64(op.outputs[0], 0), ==, before + 10);
      assigns++;
    }
    ts_debug_op_clear(&op);
  }
  g_assert_cmpint(assigns, ==, 2);
  ts_debug_op none;
  g_assert_false(ts_debug_history_get(d.s, n, &none));
  ts_debug_free(d.s);
  ts_function_free(fn);
  ts_tensor_unref(var);
  ts_scope_end(scope);
}

/* The budget keeps the last ops only. */
static void test_history_budget(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_ones(TS_F32, TS_SHAPE(10, 10));
  debuggee d = { .s = ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING,
                                                         .history_ops = 2 }),
                 .fn = ts_module_lookup(seeds, "power"),
                 .args = { TS_TENSOR_VALUE(x), TS_INT_VALUE(5) }, .n_args = 2, .eager = true };
  debuggee_start(&d);
  expect_finished(d.s, NULL);
  debuggee_join(&d);
  g_assert_cmpint(ts_debug_history_n(d.s), ==, 2);
  ts_debug_op op;
  g_assert_true(ts_debug_history_get(d.s, 1, &op));
  g_assert_cmpint(op.op, ==, TS_OP_MATMUL);
  g_assert_cmpfloat(ts_tensor_get_f64(op.outputs[0], 0), ==, 10000); /* 10^4 */
  ts_debug_op_clear(&op);
  ts_debug_free(d.s);
  /* a byte budget smaller than one op's tensors keeps the newest only */
  d.s = ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING, .history_bytes = 100 });
  debuggee_start(&d);
  expect_finished(d.s, NULL);
  debuggee_join(&d);
  g_assert_cmpint(ts_debug_history_n(d.s), ==, 1);
  ts_debug_free(d.s);
  ts_scope_end(scope);
}

/* Pause from another thread stops a long loop; cancel then ends the call. */
static void test_pause_and_cancel(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("count_to", count_to, "n");
  ts_value arg = TS_TENSOR_VALUE(ts_scalar_i64(INT64_C(1) << 60));
  debuggee d = { .s = ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING }),
                 .fn = fn, .args = { arg }, .n_args = 1, .eager = true };
  debuggee_start(&d);
  ts_debug_pause(d.s);
  ts_debug_stop stop;
  next_stop(d.s, &stop);
  g_assert_cmpint(stop.reason, ==, TS_DEBUG_PAUSE);
  g_assert_cmpint(stop.op.depth, >=, 2); /* in the loop's cond or body */
  ts_debug_stop_clear(&stop);
  ts_debug_cancel(d.s);
  expect_finished(d.s, "cancelled");
  debuggee_join(&d);
  g_assert_false(d.ok);
  g_assert_cmpint(d.code, ==, TS_ERR_CANCELLED);
  ts_debug_free(d.s);

  /* cancelled while running, never stopped */
  d.s = ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING });
  debuggee_start(&d);
  ts_debug_cancel(d.s);
  expect_finished(d.s, "cancelled");
  debuggee_join(&d);
  g_assert_cmpint(d.code, ==, TS_ERR_CANCELLED);
  ts_debug_free(d.s);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* A controller that leaves while the debuggee is stopped lets it run on. */
static void test_controller_leaves(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_ones(TS_F32, TS_SHAPE(10, 10));
  debuggee d = { .s = ts_debug_new(NULL), .fn = ts_module_lookup(seeds, "power"),
                 .args = { TS_TENSOR_VALUE(x), TS_INT_VALUE(3) }, .n_args = 2, .eager = true };
  debuggee_start(&d);
  ts_debug_stop stop;
  next_stop(d.s, &stop);
  g_assert_cmpint(stop.reason, ==, TS_DEBUG_STEP);
  ts_debug_stop_clear(&stop);
  ts_debug_free(d.s);
  debuggee_join(&d);
  g_assert_true(d.ok);
  g_assert_cmpfloat(d.values[0], ==, 100);
  ts_scope_end(scope);
}

/* Every kind of breakpoint: op, scope glob, file:line, conditions. */
static void test_breakpoint_kinds(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("nested", nested, "x");
  ts_value arg = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 }));
  /* traced once, so eager ops know their nodes (and name scopes) */
  g_assert_nonnull(ts_function_get_concrete(fn, &arg, 1));
  struct {
    const char *spec;
    ts_op op;
    ts_debug_reason reason;
  } cases[] = {
    { "Sqrt", TS_OP_SQRT, TS_DEBUG_BREAKPOINT },
    { "sqrt", TS_OP_SQRT, TS_DEBUG_BREAKPOINT }, /* the API name */
    { "inner/*", TS_OP_MUL, TS_DEBUG_BREAKPOINT },
    { "inner/Sub*", TS_OP_SUB, TS_DEBUG_BREAKPOINT },
    { "max > 5", TS_OP_MUL, TS_DEBUG_CONDITION },      /* Add is [2, 4], Mul [4, 16] */
    { "Sub if max > 5", TS_OP_SUB, TS_DEBUG_CONDITION }, /* Sub [2, 12] */
    { "min < -1", TS_OP_NEG, TS_DEBUG_CONDITION },
    { "std == 0", TS_OP_REDUCE_SUM, TS_DEBUG_CONDITION },     /* a scalar */
    { "Abs if mean != 0", TS_OP_ABS, TS_DEBUG_CONDITION },
    { "mean >= 1e9", TS_OP_COUNT, TS_DEBUG_FINISHED }, /* never */
  };
  char line_spec[64] = "";
  for (size_t i = 0; i <= G_N_ELEMENTS(cases); i++) {
    /* the last round: file:line of the Sqrt, as the first stop gave it */
    const char *spec = i < G_N_ELEMENTS(cases) ? cases[i].spec : line_spec;
    debuggee d = { .s = ts_debug_new(&(ts_debug_options){ .start = TS_DEBUG_START_RUNNING }),
                   .fn = fn, .args = { arg }, .n_args = 1, .eager = true };
    int id = ts_debug_break_add(d.s, spec);
    g_assert_cmpint(id, >, 0);
    debuggee_start(&d);
    ts_debug_stop stop;
    next_stop(d.s, &stop);
    ts_op want = i < G_N_ELEMENTS(cases) ? cases[i].op : TS_OP_SQRT;
    ts_debug_reason reason = i < G_N_ELEMENTS(cases) ? cases[i].reason : TS_DEBUG_BREAKPOINT;
    g_test_message("breakpoint '%s': stopped at %s (%s)", spec, stop.op.op_name,
                   ts_debug_reason_name(stop.reason));
    g_assert_cmpint(stop.reason, ==, reason);
    if (reason != TS_DEBUG_FINISHED) {
      g_assert_cmpstr(stop.op.op_name, ==, ts_op_name(want));
      g_assert_cmpint(stop.breakpoint, ==, id);
      g_assert_true(stop.after == (reason == TS_DEBUG_CONDITION));
      if (i == 0) {
        g_snprintf(line_spec, sizeof line_spec, "%s:%d", strrchr(stop.op.file, '/') ?
                   strrchr(stop.op.file, '/') + 1 : stop.op.file, stop.op.line);
        g_assert_cmpstr(stop.op.node, ==, "Sqrt");
      }
      if (want == TS_OP_MUL && reason == TS_DEBUG_BREAKPOINT)
        g_assert_cmpstr(stop.op.scope, ==, "inner");
      ts_debug_stop_clear(&stop);
      g_assert_true(ts_debug_break_remove(d.s, id));
      g_assert_false(ts_debug_break_remove(d.s, id));
      ts_debug_resume(d.s, TS_DEBUG_CONTINUE);
      expect_finished(d.s, NULL);
    }
    ts_debug_stop_clear(&stop);
    debuggee_join(&d);
    g_assert_true(d.ok);
    ts_debug_free(d.s);
  }
  ts_function_free(fn);
  ts_scope_end(scope);
}

static void expect_bad(const char *spec, const char *fragment)
{
  g_assert_false(ts_debug_break_check(spec));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_test_message("%s", e->message);
  g_assert_nonnull(strstr(e->message, spec));
  g_assert_nonnull(strstr(e->message, fragment));
  ts_error_free(e);
}

static void test_bad_breakpoints(void)
{
  expect_bad("MatMull", "unknown op type 'MatMull' (did you mean 'MatMul'?)");
  expect_bad("Matmul", "unknown op type 'Matmul' (did you mean 'MatMul'?)");
  expect_bad("Reluu if nan", "did you mean 'Relu'?");
  expect_bad("Frobnicate", "unknown op type 'Frobnicate' (a breakpoint is an op type");
  expect_bad("max >> 5", "expected a number after the comparison, got '> 5'");
  expect_bad("max 5", "expected a comparison");
  expect_bad("median > 1", "unknown statistic 'median'");
  expect_bad("MatMul if median > 1", "unknown statistic 'median'");
  expect_bad("mean > 1 2", "unexpected '2'");
  expect_bad("seeds.c:x", "expected FILE:LINE");
  expect_bad("seeds.c:0", "expected FILE:LINE");
  expect_bad("", "empty");
  expect_bad(" if nan", "nothing before 'if'");
  expect_bad("Mat Mul", "unexpected space");
  ts_debug_session *s = ts_debug_new(NULL);
  g_assert_cmpint(ts_debug_break_add(s, "nan if"), ==, 0);
  ts_error_clear();
  g_assert_cmpint(ts_debug_break_add(s, "NaN"), ==, 1);
  g_assert_cmpint(ts_debug_break_add(s, "inf"), ==, 2);
  g_assert_true(ts_debug_break_check("data/examples/seeds.c:12"));
  ts_debug_free(s);
}

static void test_stats(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor_stats st;
  ts_tensor *t = ts_constant(TS_F64, TS_SHAPE(5), (double[]){ 1, 0, NAN, INFINITY, 5 });
  g_assert_true(ts_tensor_stats_compute(t, &st));
  g_assert_cmpint(st.n, ==, 5);
  g_assert_cmpint(st.n_nan, ==, 1);
  g_assert_cmpint(st.n_inf, ==, 1);
  g_assert_cmpint(st.n_zero, ==, 1);
  g_assert_cmpfloat(st.min, ==, 0);
  g_assert_cmpfloat(st.max, ==, 5);
  g_assert_cmpfloat(st.mean, ==, 2);
  g_assert_cmpfloat_with_epsilon(st.std, sqrt(14.0 / 3), 1e-12);
  g_assert_true(ts_tensor_stats_compute(ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 7, 7, 7 }), &st));
  g_assert_cmpfloat(st.std, ==, 0);
  g_assert_false(ts_tensor_stats_compute(ts_scalar_string("a"), &st));
  ts_scope_end(scope);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  seeds = ts_module_open("seeds");
  g_assert_nonnull(seeds);
  g_test_add_func("/debug/stats", test_stats);
  g_test_add_func("/debug/power-matmuls", test_power_matmuls);
  g_test_add_func("/debug/power-graph-mode", test_power_graph_mode);
  g_test_add_func("/debug/node-paths", test_node_paths);
  g_test_add_func("/debug/break-on-nan", test_break_on_nan);
  g_test_add_func("/debug/stops-where-an-op-fails", test_stops_where_an_op_fails);
  g_test_add_func("/debug/health", test_health);
  g_test_add_func("/debug/inf-written-in-place", test_inf_written_in_place);
  g_test_add_func("/debug/health-names", test_health_names);
  g_test_add_func("/debug/stepping", test_stepping);
  g_test_add_func("/debug/history", test_history);
  g_test_add_func("/debug/history-budget", test_history_budget);
  g_test_add_func("/debug/pause-and-cancel", test_pause_and_cancel);
  g_test_add_func("/debug/controller-leaves", test_controller_leaves);
  g_test_add_func("/debug/breakpoint-kinds", test_breakpoint_kinds);
  g_test_add_func("/debug/bad-breakpoints", test_bad_breakpoints);
  int ret = g_test_run();
  ts_module_free(seeds);
  ts_release_all();
  return ret;
}
