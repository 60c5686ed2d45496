/* test-seeds.c — the seed programs of the bundled `seeds` module, each run
 * as a graph (ts_function_call) and with functions run eagerly, against the
 * values, printed lines and traces the tf.function guides show. */
#include <glib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>
#include <unistd.h>

#include "test-errors.h"
#include "test-serial-check.h"

/* ---- helpers ---------------------------------------------------------------- */

static void assert_tensor_str(ts_tensor *t, const char *expected)
{
  assert_no_error();
  g_assert_nonnull(t);
  char *s = ts_tensor_to_string(t);
  g_assert_cmpstr(s, ==, expected);
  free(s);
}

/* Each mode a test runs in: graph (the default), then eagerly. */
enum { GRAPH, EAGER, N_MODES };

static void set_mode(int mode)
{
  ts_run_functions_eagerly(mode == EAGER);
}

/* A fresh instance of the module: its state (variables, the iterator)
 * starts over, since closing it unloads the shared object. */
static ts_module *open_seeds(void)
{
  ts_module *m = ts_module_open("seeds");
  assert_no_error();
  g_assert_nonnull(m);
  return m;
}

static ts_function *lookup(ts_module *m, const char *name)
{
  ts_function *fn = ts_module_lookup(m, name);
  if (!fn)
    g_error("seeds has no function '%s'", name);
  return fn;
}

/* Calls `name` on the NULL-terminated argument specs (ts_value_parse). */
static ts_tensor *call(ts_module *m, const char *name, ...)
{
  ts_value args[8];
  int n = 0;
  va_list ap;
  va_start(ap, name);
  for (const char *spec; (spec = va_arg(ap, const char *));) {
    g_assert_cmpint(n, <, 8);
    if (!ts_value_parse(spec, &args[n]))
      g_error("'%s' did not parse: %s", spec, ts_error_peek()->message);
    n++;
  }
  va_end(ap);
  ts_tensor *out = ts_function_call(lookup(m, name), args, n);
  for (int i = 0; i < n; i++)
    ts_value_clear(&args[i]);
  return out;
}

static ts_tensor *call_tensor(ts_module *m, const char *name, ts_tensor *x)
{
  return ts_function_call(lookup(m, name), (ts_value[]){ TS_TENSOR_VALUE(x) }, 1);
}

/* What a stretch of calls printed: host stdout (printf), the ts_print
 * lines (TS_EVENT_PRINT), and the traces (TS_EVENT_TRACE). */
typedef struct capture {
  int listener;
  int saved_stdout;
  FILE *file;
  char *out;         /* stdout, once ended */
  GString *prints;   /* ts_print lines, each ending in '\n' */
  GPtrArray *reasons; /* reason text per trace */
  GArray *kinds;     /* ts_trace_reason per trace */
} capture;

static void on_event(const ts_event *ev, void *user_data)
{
  capture *c = user_data;
  if (ev->kind == TS_EVENT_PRINT) {
    g_string_append_printf(c->prints, "%s\n", ev->print.text);
  } else {
    g_ptr_array_add(c->reasons, g_strdup(ev->trace.reason_text));
    g_array_append_val(c->kinds, ev->trace.reason);
  }
}

static void capture_begin(capture *c)
{
  *c = (capture){ .prints = g_string_new(NULL), .reasons = g_ptr_array_new_with_free_func(g_free),
                  .kinds = g_array_new(FALSE, FALSE, sizeof(ts_trace_reason)) };
  c->listener = ts_listener_add(TS_EVENT_MASK(TS_EVENT_PRINT) | TS_EVENT_MASK(TS_EVENT_TRACE),
                                on_event, c);
  fflush(stdout);
  c->file = tmpfile();
  g_assert_nonnull(c->file);
  c->saved_stdout = dup(STDOUT_FILENO);
  g_assert_cmpint(c->saved_stdout, >=, 0);
  g_assert_cmpint(dup2(fileno(c->file), STDOUT_FILENO), ==, STDOUT_FILENO);
}

/* Ends the capture; the stdout text is in c->out. */
static void capture_end(capture *c)
{
  fflush(stdout);
  g_assert_cmpint(dup2(c->saved_stdout, STDOUT_FILENO), ==, STDOUT_FILENO);
  close(c->saved_stdout);
  ts_listener_remove(c->listener);
  long size = ftell(c->file);
  g_assert_cmpint(size, >=, 0);
  c->out = g_malloc0((gsize)size + 1);
  rewind(c->file);
  g_assert_cmpint(fread(c->out, 1, (size_t)size, c->file), ==, size);
  fclose(c->file);
}

static void capture_clear(capture *c)
{
  g_free(c->out);
  g_string_free(c->prints, TRUE);
  g_ptr_array_unref(c->reasons);
  g_array_unref(c->kinds);
}

static void assert_trace(const capture *c, guint i, ts_trace_reason kind, const char *reason)
{
  g_assert_cmpuint(c->reasons->len, >, i);
  g_assert_cmpint(g_array_index(c->kinds, ts_trace_reason, i), ==, kind);
  g_assert_cmpstr(g_ptr_array_index(c->reasons, i), ==, reason);
}

/* The graph of fn's concrete function i. */
static const ts_graph *graph_of(ts_module *m, const char *name, int i)
{
  ts_function *fn = lookup(m, name);
  g_assert_cmpint(ts_function_n_concrete(fn), >, i);
  return ts_concrete_graph(ts_function_concrete(fn, i));
}

static int count_op(const ts_graph *g, ts_op op)
{
  int n = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    n += ts_node_op(ts_graph_node(g, i)) == op;
  return n;
}

/* ---- the same results in both modes ---------------------------------------------- */

/* One call of a seed program and its result; the first call of a fresh
 * module (programs with state start from their initial values). */
static const struct program {
  const char *name;
  const char *args[3];
  const char *result;
} programs[] = {
  { "function_to_get_faster", { "f32[1,2]=1,2", "f32[2,1]=2,3", "f32[]=4" },
    "Tensor([[12.]], shape=(1, 1), dtype=float32)" },
  { "outer_function", { "f32[1,2]=1,2" }, "Tensor([[12.]], shape=(1, 1), dtype=float32)" },
  { "simple_nn_layer", { "f32[1,2]=1,-2", "f32[2,2]=1,0,0,1" },
    "Tensor([[1. 0.]], shape=(1, 2), dtype=float32)" },
  { "linear_layer", { "i32[3]=-3,0,3" }, "Tensor([-5  1  7], shape=(3,), dtype=int32)" },
  { "deep_net", { "i32[3]=1,2,3" }, "Tensor([3 5 7], shape=(3,), dtype=int32)" },
  { "deep_net", { "i32[3]=-3,0,3" }, "Tensor([0 1 7], shape=(3,), dtype=int32)" },
  { "square_if_positive", { "i32[]=2" }, "Tensor(4, shape=(), dtype=int32)" },
  { "square_if_positive", { "i32[]=-2" }, "Tensor(0, shape=(), dtype=int32)" },
  { "sum_even", { "i32[4]=10,12,15,20" }, "Tensor(42, shape=(), dtype=int32)" },
  { "sum_even", { "i32[0]:zeros" }, "Tensor(0, shape=(), dtype=int32)" },
  { "fizzbuzz", { "i32[]=15" }, "Tensor(15, shape=(), dtype=int32)" },
  { "my_function", { "f32[]=1" }, "Tensor(1.0, shape=(), dtype=float32)" },
  { "my_function", { "f32[2]=5,5" }, "Tensor([4. 4.], shape=(2,), dtype=float32)" },
  { "my_function", { "i32[]=2" }, "Tensor(1, shape=(), dtype=int32)" },
  { "my_function", { "f32[]=2" }, "Tensor(1.0, shape=(), dtype=float32)" },
  { "my_function", { "f32[3]=2,2,2" }, "Tensor([1. 1. 1.], shape=(3,), dtype=float32)" },
  { "simple_relu", { "i32[]=1" }, "Tensor(1, shape=(), dtype=int32)" },
  { "simple_relu", { "i32[]=-1" }, "Tensor(0, shape=(), dtype=int32)" },
  { "my_relu", { "f32[]=5.5" }, "Tensor(5.5, shape=(), dtype=float32)" },
  { "my_relu", { "[1,-1]" }, "Tensor([1. 0.], shape=(2,), dtype=float32)" },
  { "my_relu", { "f32[2]=3,-3" }, "Tensor([3. 0.], shape=(2,), dtype=float32)" },
  { "my_relu", { "f32[]=-2.5" }, "Tensor(0.0, shape=(), dtype=float32)" },
  { "my_relu", { "f32[2]=-1,1" }, "Tensor([0. 1.], shape=(2,), dtype=float32)" },
  { "a_function_with_python_side_effect", { "i32[]=2" }, "Tensor(6, shape=(), dtype=int32)" },
  { "a_function_with_python_side_effect", { "i32[]=3" }, "Tensor(11, shape=(), dtype=int32)" },
  { "a_function_with_python_side_effect", { "2" }, "Tensor(6, shape=(), dtype=int32)" },
  { "a_function_with_python_side_effect", { "3" }, "Tensor(11, shape=(), dtype=int32)" },
  { "get_MSE", { "i32[5]=1,4,3,1,3", "i32[5]=0,3,8,0,6" }, "Tensor(7, shape=(), dtype=int32)" },
  { "shape_retrace", { "i32[2]=3,4" }, "Tensor([3 4], shape=(2,), dtype=int32)" },
  { "poly_func", { "i32[]=1" }, "Tensor(1, shape=(), dtype=int32)" },
  { "poly_func", { "f32[]=1.1" }, "Tensor(1.1, shape=(), dtype=float32)" },
  { "find_next_odd", { NULL }, "None" },
  { "side_effect", { NULL }, "None" },
  { "custom_model", { "i32[2]=-2,-4" }, "Tensor([-1 -2], shape=(2,), dtype=int32)" },
  { "custom_model", { "i32[2]=1,2" }, "Tensor([1 2], shape=(2,), dtype=int32)" },
  { "square_if_positive_naive", { "i32[10]:range(-5)" },
    "Tensor([-5 -4 -3 -2 -1  0  1  4  9 16], shape=(10,), dtype=int32)" },
  { "square_if_positive_vectorized", { "i32[10]:range(-5)" },
    "Tensor([-5 -4 -3 -2 -1  0  1  4  9 16], shape=(10,), dtype=int32)" },
  { "power", { "i32[10,10]:ones", "2" }, NULL }, /* NULL: the modes agree (checked below) */
};

/* Each program in both modes on the CPU, then on SIM:0 (the simulated
 * GPU: its ops on the device, copies at the boundaries, graphs captured
 * and replayed), with the same results. */
static void test_both_modes(void)
{
  const ts_backend *devices[] = { ts_backend_cpu(), ts_backend_by_name("SIM:0") };
  g_assert_nonnull(devices[1]);
  for (guint p = 0; p < G_N_ELEMENTS(programs); p++) {
    const struct program *pr = &programs[p];
    char *results[2][N_MODES];
    for (int d = 0; d < 2; d++)
      for (int mode = 0; mode < N_MODES; mode++) {
        set_mode(mode);
        ts_scope *scope = ts_scope_begin();
        ts_module *m = open_seeds();
        capture c;
        capture_begin(&c);
        ts_tensor *out;
        TS_DEVICE_SCOPE(devices[d]) {
          out = call(m, pr->name, pr->args[0], pr->args[1], pr->args[2], NULL);
          out = out ? ts_tensor_to_backend(out, ts_backend_cpu()) : NULL;
        }
        capture_end(&c);
        capture_clear(&c);
        assert_no_error();
        results[d][mode] = ts_tensor_to_string(out);
        if (pr->result && strcmp(results[d][mode], pr->result) != 0)
          g_error("%s (%s mode on %s): got %s, expected %s", pr->name, mode ? "eager" : "graph",
                  ts_backend_name(devices[d]), results[d][mode], pr->result);
        ts_module_free(m);
        ts_scope_end(scope);
      }
    g_assert_cmpstr(results[0][GRAPH], ==, results[0][EAGER]);
    for (int mode = 0; mode < N_MODES; mode++) {
      g_assert_cmpstr(results[1][mode], ==, results[0][mode]);
      free(results[0][mode]);
      free(results[1][mode]);
    }
  }
  set_mode(GRAPH);
}

/* ---- tracing the functions a function calls ------------------------------------------ */

static void test_outer_function(void)
{
  ts_module *m = open_seeds();
  assert_tensor_str(call(m, "outer_function", "f32[1,2]=1,2", NULL),
                    "Tensor([[12.]], shape=(1, 1), dtype=float32)");
  /* inner_function is traced into outer_function's graph, under its name */
  const ts_graph *g = graph_of(m, "outer_function", 0);
  int matmuls = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (ts_node_op(n) == TS_OP_MATMUL || ts_node_op(n) == TS_OP_ADD) {
      g_assert_cmpstr(ts_node_scope(n), ==, "inner_function");
      g_assert_true(g_str_has_prefix(ts_node_name(n), "inner_function/"));
      matmuls += ts_node_op(n) == TS_OP_MATMUL;
    }
  }
  g_assert_cmpint(matmuls, ==, 1);
  ts_module_free(m);
}

/* ---- AutoGraph: control flow becomes If and While nodes ------------------------------- */

static void test_control_flow_graphs(void)
{
  static const struct {
    const char *name, *arg;
    ts_op op;
  } cases[] = {
    { "square_if_positive", "i32[]=2", TS_OP_IF },   { "simple_relu", "i32[]=2", TS_OP_IF },
    { "my_function", "f32[2]=5,5", TS_OP_IF },       { "custom_model", "i32[2]=1,2", TS_OP_IF },
    { "sum_even", "i32[4]=10,12,15,20", TS_OP_WHILE }, { "fizzbuzz", "i32[]=3", TS_OP_WHILE },
    { "square_if_positive_naive", "i32[3]=1,2,3", TS_OP_WHILE },
    { "find_next_odd", NULL, TS_OP_IF },
  };
  ts_module *m = open_seeds();
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    capture c;
    capture_begin(&c);
    ts_tensor *out = call(m, cases[i].name, cases[i].arg, NULL);
    capture_end(&c);
    capture_clear(&c);
    assert_no_error();
    g_assert_nonnull(out);
    if (count_op(graph_of(m, cases[i].name, 0), cases[i].op) != 1)
      g_error("%s: expected one %s node", cases[i].name, ts_op_name(cases[i].op));
  }
  ts_module_free(m);
}

/* ---- printing: ts_print runs on every call, host printf only while tracing ------------ */

static void test_fizzbuzz(void)
{
  static const char expected[] =
    "1\n2\nFizz\n4\nBuzz\nFizz\n7\n8\nFizz\nBuzz\n11\nFizz\n13\n14\nFizzBuzz\n";
  for (int mode = 0; mode < N_MODES; mode++) {
    set_mode(mode);
    ts_module *m = open_seeds();
    for (int run = 0; run < 2; run++) {
      capture c;
      capture_begin(&c);
      assert_tensor_str(call(m, "fizzbuzz", "i32[]=15", NULL), "Tensor(15, shape=(), dtype=int32)");
      capture_end(&c);
      g_assert_cmpstr(c.out, ==, expected);
      g_assert_cmpstr(c.prints->str, ==, expected);
      g_assert_cmpuint(c.reasons->len, ==, mode == GRAPH && run == 0);
      capture_clear(&c);
    }
    ts_module_free(m);
  }
  set_mode(GRAPH);
}

/* "Calculating MSE!" once over three graph calls, three times eagerly. */
static void test_get_MSE(void)
{
  for (int mode = 0; mode < N_MODES; mode++) {
    set_mode(mode);
    ts_module *m = open_seeds();
    capture c;
    capture_begin(&c);
    for (int i = 0; i < 3; i++)
      assert_tensor_str(call(m, "get_MSE", "i32[5]=1,4,3,1,3", "i32[5]=0,3,8,0,6", NULL),
                        "Tensor(7, shape=(), dtype=int32)");
    capture_end(&c);
    g_assert_cmpstr(c.out, ==,
                    mode == GRAPH ? "Calculating MSE!\n"
                                  : "Calculating MSE!\nCalculating MSE!\nCalculating MSE!\n");
    g_assert_cmpuint(c.reasons->len, ==, mode == GRAPH);
    capture_clear(&c);
    ts_module_free(m);
  }
  set_mode(GRAPH);
}

/* Tensor 2 and 3 share a trace; host 2 and host 3 trace one each. */
static void test_python_side_effect(void)
{
  static const char *const args[] = { "i32[]=2", "i32[]=3", "2", "3" };
  static const char *const results[] = {
    "Tensor(6, shape=(), dtype=int32)", "Tensor(11, shape=(), dtype=int32)",
    "Tensor(6, shape=(), dtype=int32)", "Tensor(11, shape=(), dtype=int32)",
  };
  static const char *const printed[N_MODES][4] = {
    { "Tracing!\n", "", "Tracing!\n", "Tracing!\n" },
    { "Tracing!\n", "Tracing!\n", "Tracing!\n", "Tracing!\n" },
  };
  for (int mode = 0; mode < N_MODES; mode++) {
    set_mode(mode);
    ts_module *m = open_seeds();
    capture all;
    capture_begin(&all);
    GString *out = g_string_new(NULL);
    for (int i = 0; i < 4; i++) {
      fflush(stdout);
      long at = ftell(all.file);
      assert_tensor_str(call(m, "a_function_with_python_side_effect", args[i], NULL), results[i]);
      fflush(stdout);
      g_string_append_printf(out, "%ld", ftell(all.file) - at);
    }
    capture_end(&all);
    char *expected = g_strconcat(printed[mode][0], printed[mode][1], printed[mode][2],
                                 printed[mode][3], NULL);
    g_assert_cmpstr(all.out, ==, expected);
    g_free(expected);
    /* and which call printed: "Tracing!\n" is 9 bytes */
    g_assert_cmpstr(out->str, ==, mode == GRAPH ? "9099" : "9999");
    g_string_free(out, TRUE);
    if (mode == GRAPH) {
      g_assert_cmpuint(all.reasons->len, ==, 3);
      assert_trace(&all, 0, TS_TRACE_FIRST_CALL, "first call");
      assert_trace(&all, 1, TS_TRACE_STRUCTURE, "arg 0 (x): a host int, traced with a tensor");
      assert_trace(&all, 2, TS_TRACE_HOST_VALUE, "arg 0 (x): host value 3 differs from 2");
      g_assert_cmpint(ts_function_trace_count(lookup(m, "a_function_with_python_side_effect")),
                      ==, 3);
    } else {
      g_assert_cmpuint(all.reasons->len, ==, 0);
    }
    capture_clear(&all);
    ts_module_free(m);
  }
  set_mode(GRAPH);
}

/* The guide's retracing on shape: [1] and [2] share a trace, [1,2] and [3,4] another. */
static void test_shape_retrace(void)
{
  static const char *const args[] = { "i32[1]=1", "i32[1]=2", "i32[2]=1,2", "i32[2]=3,4" };
  static const char executing[] = "[1] Executing\n[2] Executing\n[1 2] Executing\n[3 4] Executing\n";
  static const char *const out[N_MODES] = {
    "(1,) Tracing!\n[1] Executing\n[2] Executing\n(2,) Tracing!\n[1 2] Executing\n[3 4] Executing\n",
    "(1,) Tracing!\n[1] Executing\n(1,) Tracing!\n[2] Executing\n"
    "(2,) Tracing!\n[1 2] Executing\n(2,) Tracing!\n[3 4] Executing\n",
  };
  for (int mode = 0; mode < N_MODES; mode++) {
    set_mode(mode);
    ts_module *m = open_seeds();
    capture c;
    capture_begin(&c);
    for (int i = 0; i < 4; i++)
      g_assert_nonnull(call(m, "shape_retrace", args[i], NULL));
    capture_end(&c);
    assert_no_error();
    g_assert_cmpstr(c.out, ==, out[mode]);
    g_assert_cmpstr(c.prints->str, ==, executing);
    if (mode == GRAPH) {
      g_assert_cmpuint(c.reasons->len, ==, 2);
      assert_trace(&c, 0, TS_TRACE_FIRST_CALL, "first call");
      assert_trace(&c, 1, TS_TRACE_SHAPE, "arg 0 (x): shape (2,) differs from traced (1,)");
    } else {
      g_assert_cmpuint(c.reasons->len, ==, 0);
    }
    capture_clear(&c);
    ts_module_free(m);
  }
  set_mode(GRAPH);
}

/* ---- polymorphism and concrete functions ------------------------------------------------ */

static void test_my_relu(void)
{
  ts_module *m = open_seeds();
  ts_function *fn = lookup(m, "my_relu");
  capture c;
  capture_begin(&c);
  /* three concrete functions ... */
  assert_tensor_str(call(m, "my_relu", "f32[]=5.5", NULL), "Tensor(5.5, shape=(), dtype=float32)");
  assert_tensor_str(call(m, "my_relu", "[1,-1]", NULL), "Tensor([1. 0.], shape=(2,), dtype=float32)");
  assert_tensor_str(call(m, "my_relu", "f32[2]=3,-3", NULL),
                    "Tensor([3. 0.], shape=(2,), dtype=float32)");
  /* ... and two calls that reuse them */
  assert_tensor_str(call(m, "my_relu", "f32[]=-2.5", NULL), "Tensor(0.0, shape=(), dtype=float32)");
  assert_tensor_str(call(m, "my_relu", "f32[2]=-1,1", NULL),
                    "Tensor([0. 1.], shape=(2,), dtype=float32)");
  capture_end(&c);
  g_assert_cmpuint(c.reasons->len, ==, 3);
  capture_clear(&c);
  g_assert_cmpint(ts_function_n_concrete(fn), ==, 3);
  char *sigs = ts_function_pretty_printed_concrete_signatures(fn);
  g_assert_cmpstr(sigs, ==,
                  "my_relu(x)\n"
                  "  Args:\n"
                  "    x: float32 Tensor, shape=()\n"
                  "  Returns:\n"
                  "    float32 Tensor, shape=()\n"
                  "\n"
                  "my_relu(x=[1, -1])\n"
                  "  Returns:\n"
                  "    float32 Tensor, shape=(2,)\n"
                  "\n"
                  "my_relu(x)\n"
                  "  Args:\n"
                  "    x: float32 Tensor, shape=(2,)\n"
                  "  Returns:\n"
                  "    float32 Tensor, shape=(2,)");
  free(sigs);
  ts_module_free(m);
}

/* The guide's inspection of my_function's concrete functions. */
static void test_my_function_concrete(void)
{
  ts_module *m = open_seeds();
  ts_function *fn = lookup(m, "my_function");
  assert_tensor_str(call(m, "my_function", "i32[]=2", NULL), "Tensor(1, shape=(), dtype=int32)");
  assert_tensor_str(call(m, "my_function", "f32[]=2", NULL), "Tensor(1.0, shape=(), dtype=float32)");
  assert_tensor_str(call(m, "my_function", "f32[3]=2,2,2", NULL),
                    "Tensor([1. 1. 1.], shape=(3,), dtype=float32)");
  g_assert_cmpint(ts_function_trace_count(fn), ==, 3);

  /* get_concrete_function(tf.TensorSpec(shape=[], dtype=tf.float32)): no new trace */
  ts_concrete *cf = ts_function_get_concrete(fn, (ts_value[]){ TS_SPEC_VALUE(TS_F32, TS_SCALAR_SHAPE) }, 1);
  assert_no_error();
  g_assert_true(cf == ts_function_concrete(fn, 1));
  char *sig = ts_concrete_pretty_signature(cf);
  g_assert_cmpstr(sig, ==,
                  "my_function(x)\n  Args:\n    x: float32 Tensor, shape=()\n"
                  "  Returns:\n    float32 Tensor, shape=()");
  free(sig);
  cf = ts_function_get_concrete(fn, (ts_value[]){ TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(3))) }, 1);
  g_assert_true(cf == ts_function_concrete(fn, 2));
  sig = ts_concrete_pretty_signature(cf);
  g_assert_cmpstr(sig, ==,
                  "my_function(x)\n  Args:\n    x: float32 Tensor, shape=(3,)\n"
                  "  Returns:\n    float32 Tensor, shape=(3,)");
  free(sig);
  g_assert_cmpint(ts_function_trace_count(fn), ==, 3);

  /* cf = a_function.get_concrete_function(tf.constant(2)); cf(tf.constant(2)) -> 1 */
  cf = ts_function_get_concrete(fn, (ts_value[]){ TS_TENSOR_VALUE(ts_scalar_i32(2)) }, 1);
  assert_tensor_str(ts_concrete_call(cf, (ts_value[]){ TS_TENSOR_VALUE(ts_scalar_i32(2)) }, 1),
                    "Tensor(1, shape=(), dtype=int32)");
  ts_module_free(m);
}

static void test_poly_func(void)
{
  static const char *const traced[N_MODES] = {
    "Tracing with Tensor(\"a:0\", shape=(), dtype=int32)\n"
    "Tracing with Tensor(\"a:0\", shape=(), dtype=float32)\n"
    "Tracing with Tensor(\"a:0\", shape=(), dtype=string)\n",
    "Tracing with Tensor(1, shape=(), dtype=int32)\n"
    "Tracing with Tensor(1.1, shape=(), dtype=float32)\n"
    "Tracing with Tensor(b'a', shape=(), dtype=string)\n"
    "Tracing with Tensor(3.6, shape=(), dtype=float32)\n",
  };
  for (int mode = 0; mode < N_MODES; mode++) {
    set_mode(mode);
    ts_module *m = open_seeds();
    ts_function *fn = lookup(m, "poly_func");
    capture c;
    capture_begin(&c);
    assert_tensor_str(call(m, "poly_func", "i32[]=1", NULL), "Tensor(1, shape=(), dtype=int32)");
    assert_tensor_str(call(m, "poly_func", "f32[]=1.1", NULL),
                      "Tensor(1.1, shape=(), dtype=float32)");
    assert_tensor_str(call_tensor(m, "poly_func", ts_scalar_string("a")),
                      "Tensor(b'a', shape=(), dtype=string)");
    /* this does not trace */
    assert_tensor_str(call(m, "poly_func", "f32[]=3.6", NULL),
                      "Tensor(3.6, shape=(), dtype=float32)");
    capture_end(&c);
    g_assert_cmpstr(c.out, ==, traced[mode]);
    g_assert_cmpuint(c.reasons->len, ==, mode == GRAPH ? 3 : 0);
    capture_clear(&c);

    if (mode == GRAPH) {
      char *sigs = ts_function_pretty_printed_concrete_signatures(fn);
      g_assert_cmpstr(sigs, ==,
                      "poly_func(a)\n  Args:\n    a: int32 Tensor, shape=()\n"
                      "  Returns:\n    int32 Tensor, shape=()\n\n"
                      "poly_func(a)\n  Args:\n    a: float32 Tensor, shape=()\n"
                      "  Returns:\n    float32 Tensor, shape=()\n\n"
                      "poly_func(a)\n  Args:\n    a: string Tensor, shape=()\n"
                      "  Returns:\n    string Tensor, shape=()");
      free(sigs);
    }

    /* polyfunc_int = poly_func.get_concrete_function(tf.constant(3)) */
    capture_begin(&c);
    ts_concrete *polyfunc_int =
      ts_function_get_concrete(fn, (ts_value[]){ TS_TENSOR_VALUE(ts_scalar_i32(3)) }, 1);
    assert_no_error();
    assert_tensor_str(ts_concrete_call(polyfunc_int, (ts_value[]){ TS_TENSOR_VALUE(ts_scalar_i32(5)) }, 1),
                      "Tensor(5, shape=(), dtype=int32)");
    g_assert_null(ts_concrete_call(polyfunc_int, (ts_value[]){ TS_TENSOR_VALUE(ts_scalar_f32(7.4f)) }, 1));
    capture_end(&c);
    expect_error_containing("expected int32 tensor for arg 0 (a), got float32");
    /* graph mode traced int32 already; run eagerly, get_concrete traces it now */
    g_assert_cmpstr(c.out, ==, mode == GRAPH ? "" : "Tracing with Tensor(\"a:0\", shape=(), dtype=int32)\n");
    capture_clear(&c);
    ts_module_free(m);
  }
  set_mode(GRAPH);
}

/* ---- state: variables and host iterators ---------------------------------------------- */

/* The value of the one variable a function of m assigns, read through its
 * concrete function's graph (traced now if the calls ran eagerly). */
static int64_t variable_of(ts_module *m, const char *name)
{
  const ts_graph *g = ts_concrete_graph(ts_function_get_concrete(lookup(m, name), NULL, 0));
  g_assert_nonnull(g);
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    if (ts_node_op(ts_graph_node(g, i)) == TS_OP_VAR_HANDLE)
      return ts_tensor_get_i64(ts_node_value(ts_graph_node(g, i)), 0);
  g_error("%s assigns no variable", name);
}

static void test_find_next_odd(void)
{
  for (int mode = 0; mode < N_MODES; mode++) {
    set_mode(mode);
    ts_module *m = open_seeds();
    /* it returns None, as the guide's does; v goes 5 -> 7 */
    assert_tensor_str(call(m, "find_next_odd", NULL), "None");
    /* the graph's assignments run on every call: 7 -> 8 -> 9 */
    assert_tensor_str(call(m, "find_next_odd", NULL), "None");
    g_assert_cmpint(ts_function_trace_count(lookup(m, "find_next_odd")), ==, mode == GRAPH);
    g_assert_cmpint(variable_of(m, "find_next_odd"), ==, 9);
    ts_module_free(m);
  }
  set_mode(GRAPH);
}

/* The iterator advances only when the C code runs: 0 0 0 as a graph, 0 1 3 eagerly. */
static void test_side_effect(void)
{
  static const char *const printed[N_MODES] = {
    "Value of variable: 0\nValue of variable: 0\nValue of variable: 0\n",
    "Value of variable: 0\nValue of variable: 1\nValue of variable: 3\n",
  };
  for (int mode = 0; mode < N_MODES; mode++) {
    set_mode(mode);
    ts_module *m = open_seeds();
    capture c;
    capture_begin(&c);
    /* it returns None, as the guide's does; the prints show var */
    for (int i = 0; i < 3; i++) {
      g_assert_true(ts_is_none(call(m, "side_effect", NULL)));
      assert_no_error();
    }
    /* iter([0, 1, 2, 3]) has one more item, then it is exhausted */
    g_assert_nonnull(call(m, "side_effect", NULL));
    ts_tensor *last = call(m, "side_effect", NULL);
    capture_end(&c);
    g_assert_true(g_str_has_prefix(c.prints->str, printed[mode]));
    if (mode == GRAPH) {
      assert_tensor_str(last, "None");
      g_assert_cmpuint(c.reasons->len, ==, 1);
    } else {
      g_assert_null(last);
      expect_error_containing("side_effect: the iterator is exhausted");
    }
    capture_clear(&c);
    ts_module_free(m);
  }
  set_mode(GRAPH);
}

/* ---- non-strict execution ----------------------------------------------------------------- */

static void test_unused_return(void)
{
  ts_module *m = open_seeds();
  /* as a graph, the unused gather is skipped */
  assert_tensor_str(call(m, "unused_return", "f32[1]=0", NULL),
                    "Tensor([0.], shape=(1,), dtype=float32)");
  set_mode(EAGER);
  g_assert_null(call(m, "unused_return", "f32[1]=0", NULL));
  expect_error_containing("Gather: indices[0] = 1 is not in [0, 1)");
  set_mode(GRAPH);
  ts_module_free(m);
}

/* ---- TensorArray vs vectorized ------------------------------------------------------------ */

static void test_naive_equals_vectorized(void)
{
  static const char *const inputs[] = { "i32[10]:range(-5)", "i32[6]=3,-1,0,7,-8,2", "i32[1]=-4" };
  for (int mode = 0; mode < N_MODES; mode++) {
    set_mode(mode);
    ts_module *m = open_seeds();
    for (guint i = 0; i < G_N_ELEMENTS(inputs); i++) {
      char *naive = ts_tensor_to_string(call(m, "square_if_positive_naive", inputs[i], NULL));
      assert_no_error();
      char *vectorized = ts_tensor_to_string(call(m, "square_if_positive_vectorized", inputs[i], NULL));
      assert_no_error();
      g_assert_cmpstr(naive, ==, vectorized);
      free(naive);
      free(vectorized);
    }
    ts_module_free(m);
  }
  set_mode(GRAPH);
}

/* ---- the models of the benchmark ---------------------------------------------------------- */

/* Calls name on args in both modes (fresh modules: weights made anew from
 * their seeds) and checks the two results print the same; returns the
 * graph result's text (owned). */
static char *same_in_both_modes(const char *name, const char *a0, const char *a1, const char *a2)
{
  char *results[N_MODES];
  for (int mode = 0; mode < N_MODES; mode++) {
    set_mode(mode);
    ts_module *m = open_seeds();
    ts_tensor *out = call(m, name, a0, a1, a2, NULL);
    assert_no_error();
    results[mode] = ts_tensor_to_string(out);
    if (mode == GRAPH) /* a second call reuses the weights and the trace */
      assert_tensor_str(call(m, name, a0, a1, a2, NULL), results[mode]);
    ts_module_free(m);
  }
  set_mode(GRAPH);
  g_assert_cmpstr(results[GRAPH], ==, results[EAGER]);
  free(results[EAGER]);
  return results[GRAPH];
}

static void test_sequential_model(void)
{
  free(same_in_both_modes("sequential_model", "f32[20,28,28]:uniform", NULL, NULL));

  ts_module *m = open_seeds();
  ts_tensor *out = call(m, "sequential_model", "f32[20,28,28]:uniform", NULL);
  assert_no_error();
  g_assert_true(ts_shape_equal(ts_tensor_shape(out), TS_SHAPE(20, 10)));
  const ts_graph *g = graph_of(m, "sequential_model", 0);
  /* flatten, then dense_1 ... dense_101, each MatMul, Add (+ Relu) on two
   * variables; dropout (inference) an Identity between the last two */
  bool seen[102] = { false };
  int relus = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    const char *scope = ts_node_scope(n);
    int layer;
    if (ts_node_op(n) == TS_OP_FLATTEN)
      g_assert_cmpstr(scope, ==, "flatten");
    if (ts_node_op(n) == TS_OP_IDENTITY)
      g_assert_cmpstr(scope, ==, "dropout");
    if (ts_node_op(n) != TS_OP_MATMUL)
      relus += ts_node_op(n) == TS_OP_RELU;
    else if (sscanf(scope, "dense_%d", &layer) == 1 && layer >= 1 && layer <= 101)
      seen[layer] = true;
    else
      g_error("MatMul in scope '%s'", scope);
  }
  for (int layer = 1; layer <= 101; layer++)
    g_assert_true(seen[layer]);
  g_assert_cmpint(relus, ==, 100);
  g_assert_cmpint(count_op(g, TS_OP_READ_VARIABLE), ==, 202);
  g_assert_cmpint(count_op(g, TS_OP_IDENTITY), ==, 1);
  g_assert_cmpint(count_op(g, TS_OP_RANDOM_UNIFORM), ==, 0);
  ts_module_free(m);
}

static void test_dense_128_model(void)
{
  free(same_in_both_modes("dense_128_model", "f32[60,28,28]:uniform", NULL, NULL));

  ts_module *m = open_seeds();
  ts_tensor *out = call(m, "dense_128_model", "f32[60,28,28]:uniform", NULL);
  assert_no_error();
  g_assert_true(ts_shape_equal(ts_tensor_shape(out), TS_SHAPE(60, 10)));
  /* flatten, dense_1 (128, relu), dropout (inference: Identity), dense_2 (10) */
  const ts_graph *g = graph_of(m, "dense_128_model", 0);
  static const struct { ts_op op; const char *scope; } want[] = {
    { TS_OP_FLATTEN, "flatten" }, { TS_OP_MATMUL, "dense_1" }, { TS_OP_RELU, "dense_1" },
    { TS_OP_IDENTITY, "dropout" }, { TS_OP_MATMUL, "dense_2" },
  };
  for (size_t k = 0; k < G_N_ELEMENTS(want); k++) {
    bool found = false;
    for (int i = 0; i < ts_graph_n_nodes(g) && !found; i++) {
      const ts_node *n = ts_graph_node(g, i);
      found = ts_node_op(n) == want[k].op && strcmp(ts_node_scope(n), want[k].scope) == 0;
    }
    if (!found)
      g_error("no %s in scope %s", ts_op_name(want[k].op), want[k].scope);
  }
  g_assert_cmpint(count_op(g, TS_OP_MATMUL), ==, 2);
  g_assert_cmpint(count_op(g, TS_OP_RELU), ==, 1);
  g_assert_cmpint(count_op(g, TS_OP_READ_VARIABLE), ==, 4);
  g_assert_cmpint(count_op(g, TS_OP_RANDOM_UNIFORM), ==, 0);
  ts_module_free(m);
}

static void test_lstm_fn(void)
{
  /* zero input and state: c' = f*0 + i*tanh(0) = 0, so h' = o*tanh(0) = 0 */
  char *zeros = same_in_both_modes("lstm_fn", "f32[10,10]:zeros", "f32[10,10]:zeros",
                                   "f32[10,10]:zeros");
  ts_scope *scope = ts_scope_begin();
  char *expected = ts_tensor_to_string(ts_zeros(TS_F32, TS_SHAPE(10, 10)));
  g_assert_cmpstr(zeros, ==, expected);
  free(expected);
  free(zeros);

  ts_module *m = open_seeds();
  ts_tensor *h = call(m, "lstm_fn", "f32[10,10]:uniform", "f32[10,10]:uniform@2",
                      "f32[10,10]:uniform@3", NULL);
  assert_no_error();
  g_assert_true(ts_shape_equal(ts_tensor_shape(h), TS_SHAPE(10, 10)));
  for (int64_t i = 0; i < 100; i++) /* o * tanh(c'), both factors in (-1, 1) */
    g_assert_cmpfloat(fabs(ts_tensor_get_f64(h, i)), <, 1.0);
  ts_module_free(m);
  ts_scope_end(scope);
  free(same_in_both_modes("lstm_fn", "f32[10,10]:uniform", "f32[10,10]:uniform@2",
                          "f32[10,10]:uniform@3"));
}

static void test_conv_fn(void)
{
  char *zeros = same_in_both_modes("conv_fn", "f32[1,5,5,100]:zeros", NULL, NULL);
  ts_scope *scope = ts_scope_begin();
  char *expected = ts_tensor_to_string(ts_zeros(TS_F32, TS_SHAPE(1, 3, 3, 100)));
  g_assert_cmpstr(zeros, ==, expected);
  free(expected);
  free(zeros);
  ts_scope_end(scope);
  free(same_in_both_modes("conv_fn", "f32[1,5,5,100]:uniform", NULL, NULL));

  /* a bad image fails cleanly, and leaves the layer unbuilt */
  ts_module *m = open_seeds();
  g_assert_null(call(m, "conv_fn", "f32[5,5]:ones", NULL));
  expect_error_containing("conv2d: expected a rank-4 input with a known last dimension, got f32[5,5]");
  g_assert_nonnull(call(m, "conv_fn", "f32[1,3,3,4]:ones", NULL));
  assert_no_error();
  ts_module_free(m);
}

static void test_issue2_programs(void)
{
  free(same_in_both_modes("dense_chain", "f32[2,4,4]:uniform", "3", NULL));
  free(same_in_both_modes("conv_layer", "f32[1,4,4,3]:uniform", NULL, NULL));
  char *p = same_in_both_modes("power", "i32[10,10]:ones", "2", NULL);
  /* ones · (ones · I) = 10 everywhere */
  g_assert_nonnull(strstr(p, "[[10 10 10"));
  g_assert_null(strstr(p, " 1 "));
  free(p);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  serial_check_install();
  g_test_add_func("/seeds/both-modes", test_both_modes);
  g_test_add_func("/seeds/outer-function", test_outer_function);
  g_test_add_func("/seeds/control-flow-graphs", test_control_flow_graphs);
  g_test_add_func("/seeds/fizzbuzz", test_fizzbuzz);
  g_test_add_func("/seeds/get-mse", test_get_MSE);
  g_test_add_func("/seeds/python-side-effect", test_python_side_effect);
  g_test_add_func("/seeds/shape-retrace", test_shape_retrace);
  g_test_add_func("/seeds/my-relu", test_my_relu);
  g_test_add_func("/seeds/my-function-concrete", test_my_function_concrete);
  g_test_add_func("/seeds/poly-func", test_poly_func);
  g_test_add_func("/seeds/find-next-odd", test_find_next_odd);
  g_test_add_func("/seeds/side-effect", test_side_effect);
  g_test_add_func("/seeds/unused-return", test_unused_return);
  g_test_add_func("/seeds/naive-equals-vectorized", test_naive_equals_vectorized);
  g_test_add_func("/seeds/sequential-model", test_sequential_model);
  g_test_add_func("/seeds/dense-128-model", test_dense_128_model);
  g_test_add_func("/seeds/lstm-fn", test_lstm_fn);
  g_test_add_func("/seeds/conv-fn", test_conv_fn);
  g_test_add_func("/seeds/issue2-programs", test_issue2_programs);
  int status = g_test_run();
  ts_release_all();
  return status;
}
