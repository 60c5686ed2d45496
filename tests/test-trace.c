/* test-trace.c — polymorphic functions: tracing, the concrete-function
 * cache, retrace reasons and warnings, input signatures, relaxed shapes,
 * concrete calls, nested calls and the graphs they build. */
#include <glib.h>
#include <string.h>
#include <tracescope.h>
#include "test-serial-check.h"

typedef struct {
  int traces, warnings;
  ts_trace_reason reason;
  char *reason_text;
  char *signature;
  int n_concrete;
  ts_warning_kind warning_kind;
  char *warning;
  char *warning_args;
  char *error;          /* the last trace failed: why */
} events;

static void on_event(const ts_event *ev, void *user_data)
{
  events *e = user_data;
  if (ev->kind == TS_EVENT_TRACE) {
    e->traces++;
    e->reason = ev->trace.reason;
    g_free(e->reason_text);
    e->reason_text = g_strdup(ev->trace.reason_text);
    g_free(e->signature);
    e->signature = g_strdup(ev->trace.signature);
    e->n_concrete = ev->trace.n_concrete;
    g_free(e->error);
    e->error = g_strdup(ev->trace.error);
    g_assert_true((ev->trace.error == NULL) == (ev->trace.concrete != NULL));
  } else if (ev->kind == TS_EVENT_WARNING) {
    e->warnings++;
    e->warning_kind = ev->warning.kind;
    g_free(e->warning);
    e->warning = g_strdup(ev->warning.message);
    g_free(e->warning_args);
    e->warning_args = g_strdup(ev->warning.arguments);
  }
}

static int listen(events *e)
{
  *e = (events){ 0 };
  return ts_listener_add(TS_EVENT_MASK(TS_EVENT_TRACE) | TS_EVENT_MASK(TS_EVENT_WARNING), on_event, e);
}

static void unlisten(int id, events *e)
{
  ts_listener_remove(id);
  g_free(e->reason_text);
  g_free(e->signature);
  g_free(e->warning);
  g_free(e->warning_args);
  g_free(e->error);
}

static ts_tensor *self_matmul(ts_call *c)
{
  return ts_matmul(ts_arg(c, 0), ts_arg(c, 0));
}

/* A trace that fails is reported too, with the error the call fails with;
 * it makes no concrete function, and a good signature traces after it. */
static void test_failed_trace_reported(void)
{
  events e;
  int id = listen(&e);
  ts_function *fn = ts_function_new("self_matmul", self_matmul, "x");
  ts_scope *s = ts_scope_begin();
  ts_value bad = TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(2, 3)));
  g_assert_null(ts_function_call(fn, &bad, 1));
  ts_error *err = ts_error_take();
  g_assert_nonnull(err);
  g_assert_cmpint(e.traces, ==, 1);
  g_assert_nonnull(e.error);
  g_assert_cmpstr(e.error, ==, err->message);
  g_assert_cmpstr(e.signature, ==, "(x: f32[2,3])");
  g_assert_cmpint(e.n_concrete, ==, 0);
  g_assert_cmpint(ts_function_n_concrete(fn), ==, 0);
  ts_error_free(err);
  ts_value good = TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(2, 2)));
  g_assert_nonnull(ts_function_call(fn, &good, 1));
  g_assert_cmpint(e.traces, ==, 2);
  g_assert_null(e.error);
  g_assert_cmpint(e.n_concrete, ==, 1);
  ts_scope_end(s);
  ts_function_free(fn);
  unlisten(id, &e);
}

static int host_runs; /* counts runs of the C code: traces, or eager calls */

/* x * x + 2 */
static ts_tensor *square_plus_two(ts_call *c)
{
  host_runs++;
  ts_tensor *x = ts_arg(c, 0);
  return ts_add(ts_mul(x, x), ts_cast(ts_scalar_i32(2), x ? ts_tensor_dtype(x) : TS_I32));
}

/* matmul(x, y) + b */
static ts_tensor *affine(ts_call *c)
{
  return ts_add(ts_matmul(ts_arg(c, 0), ts_arg(c, 1)), ts_arg(c, 2));
}

static ts_tensor *outer(ts_call *c)
{
  ts_tensor *y = ts_constant(TS_F32, TS_SHAPE(2, 1), (float[]){ 2, 3 });
  ts_tensor *first = TS_INVOKE(affine, ts_arg(c, 0), y, ts_scalar_f32(4));
  ts_tensor *one = ts_constant(TS_F32, TS_SHAPE(1, 1), (float[]){ 1 });
  return TS_INVOKE(affine, first, one, ts_scalar_f32(0));
}

static ts_tensor *unused_gather(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_gather(x, ts_constant(TS_I32, TS_SHAPE(1), (int32_t[]){ 7 }), 0); /* never used */
  return x;
}

static ts_tensor *leaked;
static ts_tensor *leak(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  if (!leaked) {
    leaked = ts_tensor_ref(ts_neg(x)); /* kept past the trace, as a global would */
    return leaked;
  }
  return ts_add(x, leaked); /* a symbolic tensor of an earlier trace */
}

static ts_tensor *i32(int32_t v)
{
  return ts_scalar_i32(v);
}

static ts_value tv(ts_tensor *t)
{
  return TS_TENSOR_VALUE(t);
}

static void expect_i64(ts_tensor *t, int64_t want)
{
  g_assert_nonnull(t);
  g_assert_cmpint(ts_tensor_get_i64(t, 0), ==, want);
}

static void test_cache_and_reasons(void)
{
  ts_scope *s = ts_scope_begin();
  events e;
  int id = listen(&e);
  ts_function *f = ts_function_new("sq", square_plus_two, "x");
  host_runs = 0;

  ts_value a = tv(i32(2)), b = tv(i32(3));
  expect_i64(ts_function_call(f, &a, 1), 6);
  expect_i64(ts_function_call(f, &b, 1), 11);
  g_assert_cmpint(host_runs, ==, 1); /* one trace serves both */
  g_assert_cmpint(e.traces, ==, 1);
  g_assert_cmpint(e.reason, ==, TS_TRACE_FIRST_CALL);
  g_assert_cmpstr(e.reason_text, ==, "first call");
  g_assert_cmpstr(e.signature, ==, "(x: i32[])");

  ts_value v2 = tv(ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 1, 2 }));
  g_assert_nonnull(ts_function_call(f, &v2, 1));
  g_assert_cmpint(e.reason, ==, TS_TRACE_SHAPE);
  g_assert_cmpstr(e.reason_text, ==, "arg 0 (x): shape (2,) differs from traced ()");

  ts_value fl = tv(ts_scalar_f32(1.5f));
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(f, &fl, 1), 0), ==, 4.25);
  g_assert_cmpint(e.reason, ==, TS_TRACE_DTYPE);
  g_assert_cmpstr(e.reason_text, ==, "arg 0 (x): dtype float32 differs from int32");

  ts_value h2 = TS_INT_VALUE(2), h3 = TS_INT_VALUE(3);
  expect_i64(ts_function_call(f, &h2, 1), 6);
  g_assert_cmpint(e.reason, ==, TS_TRACE_STRUCTURE);
  expect_i64(ts_function_call(f, &h3, 1), 11);
  g_assert_cmpint(e.reason, ==, TS_TRACE_HOST_VALUE);
  g_assert_cmpstr(e.reason_text, ==, "arg 0 (x): host value 3 differs from 2");
  expect_i64(ts_function_call(f, &h3, 1), 11);
  g_assert_cmpint(e.traces, ==, 5);
  g_assert_cmpint(e.n_concrete, ==, 5);
  g_assert_cmpint(ts_function_trace_count(f), ==, 5);
  g_assert_cmpint(ts_function_n_concrete(f), ==, 5);

  /* More arguments than sq's one parameter: Python's TypeError, no trace. */
  ts_value two[] = { a, b };
  g_assert_null(ts_function_call(f, two, 2));
  ts_error *err = ts_error_take();
  g_assert_nonnull(err);
  g_assert_cmpstr(err->message, ==, "sq(x) takes 1 argument but 2 were given");
  ts_error_free(err);
  g_assert_cmpint(e.traces, ==, 5);

  /* Without parameter names, another number of arguments is another
   * structure (the C code ignores arg 1, but the signature differs). */
  ts_function *u = ts_function_new("sq_unnamed", square_plus_two, NULL);
  expect_i64(ts_function_call(u, &a, 1), 6);
  expect_i64(ts_function_call(u, two, 2), 6);
  g_assert_cmpint(e.reason, ==, TS_TRACE_STRUCTURE);
  g_assert_cmpstr(e.reason_text, ==, "2 arguments, traced with 1");

  ts_function_free(u);
  ts_function_free(f);
  unlisten(id, &e);
  ts_scope_end(s);
}

static void test_frequent_retracing_warning(void)
{
  ts_scope *s = ts_scope_begin();
  events e;
  int id = listen(&e);
  ts_function *f = ts_function_new("sq", square_plus_two, "x");
  for (int i = 0; i < 4; i++) {
    ts_value h = TS_INT_VALUE(i);
    ts_function_call(f, &h, 1);
  }
  g_assert_cmpint(e.warnings, ==, 0);
  ts_value h = TS_INT_VALUE(10);
  ts_function_call(f, &h, 1);
  g_assert_cmpint(e.warnings, ==, 1);
  g_assert_cmpint(e.warning_kind, ==, TS_WARNING_FREQUENT_RETRACING);
  g_assert_cmpstr(e.warning_args, ==, "x");
  g_assert_nonnull(strstr(e.warning, "5 of the last 5 calls"));
  g_assert_nonnull(strstr(e.warning, "pass a tensor instead of a host value"));
  ts_function_free(f);

  /* Changing ranks: the input signature that fits has an unknown rank
   * (TensorSpec(shape=None)). */
  f = ts_function_new("sq", square_plus_two, "x");
  e.warnings = 0;
  static const ts_shape shapes[] = { { 1, { 2 } }, { 2, { 2, 3 } }, { 1, { 4 } }, { 3, { 1, 2, 3 } },
                                     { 1, { 5 } } };
  for (int i = 0; i < 5; i++) {
    ts_value v = TS_TENSOR_VALUE(ts_ones(TS_F32, shapes[i]));
    ts_function_call(f, &v, 1);
  }
  g_assert_cmpint(e.warnings, ==, 1);
  g_assert_nonnull(strstr(e.warning, "input signature with the changing dimensions unknown "
                                     "(x: f32[...]), or turn on reduce_retracing"));

  /* Changing dtypes: no single input signature fits, and the fix says so. */
  f = ts_function_new("sq", square_plus_two, "x");
  e.warnings = 0;
  static const ts_dtype dtypes[] = { TS_I32, TS_F64, TS_I64, TS_F32, TS_F32 };
  for (int i = 0; i < 5; i++) { /* the last a change of shape, the others of dtype */
    ts_value v = TS_TENSOR_VALUE(ts_ones(dtypes[i], TS_SHAPE(i < 4 ? 1 : 5)));
    ts_function_call(f, &v, 1);
  }
  g_assert_cmpint(e.warnings, ==, 1);
  g_assert_nonnull(strstr(e.warning, "no single input signature accepts these calls (arg 0 (x) "
                                     "changes dtype); call it with tensors of one dtype"));
  g_assert_null(strstr(e.warning, "[?"));
  ts_function_free(f);

  /* Changing shapes: the fix names the signature with those dims unknown. */
  f = ts_function_new("sq", square_plus_two, "x");
  e.warnings = 0;
  for (int i = 1; i <= 5; i++) {
    ts_value v = TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(i, 3)));
    ts_function_call(f, &v, 1);
  }
  g_assert_cmpint(e.warnings, ==, 1);
  g_assert_nonnull(strstr(e.warning, "input signature with the changing dimensions unknown "
                                     "(x: f32[?,3]), or turn on reduce_retracing"));
  ts_function_free(f);
  unlisten(id, &e);
  ts_scope_end(s);
}

static void test_retrace_limit_falls_back_to_eager(void)
{
  ts_scope *s = ts_scope_begin();
  events e;
  int id = listen(&e);
  ts_function *f = ts_function_new("sq", square_plus_two, "x");
  ts_function_set_retrace_limit(f, 2);
  host_runs = 0;
  for (int i = 0; i < 5; i++) {
    ts_value h = TS_INT_VALUE(i);
    expect_i64(ts_function_call(f, &h, 1), i * i + 2);
  }
  g_assert_cmpint(ts_function_trace_count(f), ==, 2);
  g_assert_cmpint(host_runs, ==, 5); /* 2 traces + 3 eager runs */
  g_assert_cmpint(e.warning_kind, ==, TS_WARNING_RETRACE_LIMIT);
  g_assert_nonnull(strstr(e.warning, "run eagerly"));
  ts_function_free(f);
  unlisten(id, &e);
  ts_scope_end(s);
}

/* No limit by default: every new signature is traced, never run eagerly. */
static void test_no_retrace_limit_by_default(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("sq", square_plus_two, "x");
  host_runs = 0;
  for (int i = 0; i < 20; i++) {
    ts_value h = TS_INT_VALUE(i);
    expect_i64(ts_function_call(f, &h, 1), i * i + 2);
  }
  g_assert_cmpint(ts_function_trace_count(f), ==, 20);
  g_assert_cmpint(ts_function_n_concrete(f), ==, 20);
  g_assert_cmpint(host_runs, ==, 20); /* each host run was a trace */
  ts_function_free(f);
  ts_scope_end(s);
}

/* A variable made on every call (the mistake tf.function forbids), and one
 * made once, guarded. */
static ts_tensor *fresh_variable;
static int n_variables_made;
static ts_tensor *variable_per_call(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_INIT_SCOPE {
    ts_tensor_unref(fresh_variable); /* eagerly each call has its own */
    fresh_variable = ts_variable_new(ts_ones(TS_F32, ts_tensor_shape(x)), "w");
  }
  return ts_mul(x, fresh_variable);
}

static ts_tensor *guarded_variable;
static ts_tensor *variable_once(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  if (!guarded_variable)
    TS_INIT_SCOPE {
      guarded_variable = ts_variable_new(ts_ones(TS_F32, ts_tensor_shape(x)), "g");
      n_variables_made++;
    }
  return ts_assign_add(guarded_variable, x);
}

static void test_variables_on_first_trace_only(void)
{
  ts_scope *s = ts_scope_begin();
  /* made on every call: refused on the first (its second trace makes another) */
  ts_function *f = ts_function_new("variable_per_call", variable_per_call, "x");
  ts_value a = tv(ts_ones(TS_F32, TS_SHAPE(2)));
  g_assert_null(ts_function_call(f, &a, 1));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_nonnull(strstr(e->message, "variable 'w': variable_per_call creates a variable "
                                      "on a later trace"));
  ts_error_free(e);
  g_assert_cmpint(ts_function_n_concrete(f), ==, 0);
  /* eagerly there is no trace: every call may make one */
  ts_function_set_run_eagerly(f, 1);
  g_assert_nonnull(ts_function_call(f, &a, 1));
  ts_tensor *first = ts_tensor_ref(fresh_variable);
  g_assert_nonnull(ts_function_call(f, &a, 1));
  g_assert_true(fresh_variable != first);
  ts_tensor_unref(first);

  /* made once, guarded: traced twice on the first call, one variable */
  ts_function *g = ts_function_new("variable_once", variable_once, "x");
  for (int i = 1; i <= 3; i++) {
    ts_tensor *y = ts_function_call(g, &a, 1);
    g_assert_nonnull(y);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 0), ==, 1 + i);
  }
  g_assert_cmpint(n_variables_made, ==, 1);
  /* counted as tf.function's experimental_get_tracing_count: both traces, one graph kept */
  g_assert_cmpint(ts_function_trace_count(g), ==, 2);
  g_assert_cmpint(ts_function_n_concrete(g), ==, 1);
  ts_tensor_unref(guarded_variable);
  guarded_variable = NULL;
  ts_tensor_unref(fresh_variable);
  fresh_variable = NULL;
  ts_function_free(g);
  ts_function_free(f);
  ts_scope_end(s);
}

static void test_fail_on_retrace(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("sq", square_plus_two, "x");
  ts_function_set_fail_on_retrace(f, true);
  ts_value a = tv(i32(2)), fl = tv(ts_scalar_f32(2));
  expect_i64(ts_function_call(f, &a, 1), 6);
  g_assert_null(ts_function_call(f, &fl, 1));
  ts_error *err = ts_error_take();
  g_assert_nonnull(strstr(err->message, "fail_on_retrace"));
  g_assert_nonnull(strstr(err->message, "dtype float32 differs from int32"));
  ts_error_free(err);
  ts_function_free(f);
  ts_scope_end(s);
}

static void test_input_signature(void)
{
  ts_scope *s = ts_scope_begin();
  events e;
  int id = listen(&e);
  ts_function *f = ts_function_new("sq", square_plus_two, "x");
  ts_spec spec = { TS_F32, TS_SHAPE(-1, 3) };
  g_assert_true(ts_function_set_input_signature(f, &spec, 1));
  for (int rows = 1; rows <= 3; rows++) {
    ts_value x = tv(ts_ones(TS_F32, TS_SHAPE(rows, 3)));
    ts_tensor *y = ts_function_call(f, &x, 1);
    g_assert_cmpint(ts_tensor_dim(y, 0), ==, rows);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 0), ==, 3);
  }
  g_assert_cmpint(e.traces, ==, 1);
  g_assert_cmpstr(e.signature, ==, "(x: f32[?,3])");
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(f, 0));
  ts_shape in_shape = ts_node_output_shape(ts_graph_node(g, ts_graph_input(g, 0)), 0);
  g_assert_cmpint(in_shape.dim[0], ==, -1);

  ts_value bad = tv(ts_ones(TS_F32, TS_SHAPE(2, 4)));
  g_assert_null(ts_function_call(f, &bad, 1));
  ts_error *err = ts_error_take();
  g_assert_cmpstr(err->message, ==,
                  "sq: arg 0 (x) does not match the input signature: expected f32[?,3], got f32[2,4]");
  ts_error_free(err);
  ts_value host = TS_INT_VALUE(1);
  g_assert_null(ts_function_call(f, &host, 1)); /* a host value is a scalar: not f32[?,3] */
  ts_error_clear();
  g_assert_cmpint(e.traces, ==, 1);
  ts_function_free(f);
  unlisten(id, &e);
  ts_scope_end(s);
}

/* Host numbers convert to a scalar spec's dtype, as tf.function converts
 * a Python 5 for a tf.int32 TensorSpec: no retrace per value. */
static void test_input_signature_converts_host_values(void)
{
  ts_scope *s = ts_scope_begin();
  events e;
  int id = listen(&e);
  ts_function *f = ts_function_new("sq", square_plus_two, "x");
  g_assert_true(ts_function_set_input_signature(f, &(ts_spec){ TS_I32, TS_SCALAR_SHAPE }, 1));
  for (int v = 1; v <= 4; v++) {
    ts_value host = TS_INT_VALUE(v);
    ts_tensor *y = ts_function_call(f, &host, 1);
    g_assert_nonnull(y);
    g_assert_cmpint(ts_tensor_dtype(y), ==, TS_I32);
    g_assert_cmpint(ts_tensor_get_i64(y, 0), ==, v * v + 2);
  }
  g_assert_cmpint(e.traces, ==, 1);
  g_assert_cmpstr(e.signature, ==, "(x: i32[])");
  ts_value fl = TS_FLOAT_VALUE(2.5); /* does not convert to int32 */
  g_assert_null(ts_function_call(f, &fl, 1));
  ts_error *err = ts_error_take();
  g_assert_nonnull(strstr(err->message, "a host float does not convert to int32"));
  ts_error_free(err);

  ts_function *g = ts_function_new("sq", square_plus_two, "x");
  g_assert_true(ts_function_set_input_signature(g, &(ts_spec){ TS_F64, TS_SCALAR_SHAPE }, 1));
  ts_value i = TS_INT_VALUE(3), d = TS_FLOAT_VALUE(0.5);
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(g, &i, 1), 0), ==, 11);
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(g, &d, 1), 0), ==, 2.25);
  g_assert_cmpint(ts_function_trace_count(g), ==, 1);
  ts_function_free(g);
  ts_function_free(f);
  unlisten(id, &e);
  ts_scope_end(s);
}

#define LIST(...) ((ts_value){ .kind = TS_VALUE_LIST, .list = { (const ts_value[]){ __VA_ARGS__ }, \
                   (int)(sizeof((ts_value[]){ __VA_ARGS__ }) / sizeof(ts_value)) } })

/* Host lists given where the signature wants a tensor convert to its dtype,
 * as tf.function converts [1, 2, 3] for a TensorSpec([None], tf.float32). */
static void test_input_signature_converts_host_lists(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("sq", square_plus_two, "x");
  g_assert_true(ts_function_set_input_signature(f, &(ts_spec){ TS_F32, TS_SHAPE(-1) }, 1));
  ts_value ints = LIST(TS_INT_VALUE(1), TS_INT_VALUE(2), TS_INT_VALUE(3));
  ts_tensor *y = ts_function_call(f, &ints, 1);
  g_assert_nonnull(y);
  g_assert_cmpint(ts_tensor_dtype(y), ==, TS_F32);
  g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(3)));
  g_assert_cmpfloat(ts_tensor_get_f64(y, 2), ==, 11);
  ts_value floats = LIST(TS_FLOAT_VALUE(0.5), TS_FLOAT_VALUE(1.5));
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(f, &floats, 1), 1), ==, 4.25);
  ts_value empty = { .kind = TS_VALUE_LIST };
  g_assert_cmpint(ts_tensor_size(ts_function_call(f, &empty, 1)), ==, 0);
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);

  ts_function *g = ts_function_new("sq", square_plus_two, "x");
  g_assert_true(ts_function_set_input_signature(g, &(ts_spec){ TS_I32, TS_SHAPE(2, 2) }, 1));
  ts_value rows = LIST(LIST(TS_INT_VALUE(1), TS_INT_VALUE(2)), LIST(TS_INT_VALUE(3), TS_INT_VALUE(4)));
  y = ts_function_call(g, &rows, 1);
  g_assert_nonnull(y);
  g_assert_cmpint(ts_tensor_dtype(y), ==, TS_I32);
  g_assert_cmpint(ts_tensor_get_i64(y, 3), ==, 18);
  const struct {
    ts_value arg;
    const char *message;
  } bad[] = {
    { LIST(LIST(TS_FLOAT_VALUE(1.5), TS_FLOAT_VALUE(2)), LIST(TS_FLOAT_VALUE(3), TS_FLOAT_VALUE(4))),
      "sq: arg 0 (x): a host list of floats does not convert to int32 (input signature)" },
    { LIST(LIST(TS_INT_VALUE(1)), LIST(TS_INT_VALUE(2), TS_INT_VALUE(3))),
      "sq: arg 0 (x): a host list converts to a int32 tensor (input signature) only when it is a "
      "rectangular list of numbers or of bools" },
    { LIST(TS_INT_VALUE(1), TS_INT_VALUE(2)),
      "sq: arg 0 (x) does not match the input signature: expected i32[2,2], got i32[2]" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_null(ts_function_call(g, &bad[i].arg, 1));
    ts_error *err = ts_error_take();
    g_assert_nonnull(err);
    g_assert_cmpstr(err->message, ==, bad[i].message);
    ts_error_free(err);
  }
  g_assert_cmpint(ts_function_trace_count(g), ==, 1);
  ts_function_free(g);
  ts_function_free(f);
  ts_scope_end(s);
}

static void test_reduce_retracing(void)
{
  ts_scope *s = ts_scope_begin();
  events e;
  int id = listen(&e);
  ts_function *f = ts_function_new("sq", square_plus_two, "x");
  ts_function_set_reduce_retracing(f, true);
  ts_value v1 = tv(ts_ones(TS_I32, TS_SHAPE(1))), v2 = tv(ts_ones(TS_I32, TS_SHAPE(2)));
  ts_value v5 = tv(ts_ones(TS_I32, TS_SHAPE(5))), m = tv(ts_ones(TS_I32, TS_SHAPE(1, 2)));
  ts_function_call(f, &v1, 1);
  ts_function_call(f, &v2, 1);
  g_assert_cmpstr(e.signature, ==, "(x: i32[?])");
  ts_tensor *y = ts_function_call(f, &v5, 1); /* served by the generalised function */
  g_assert_cmpint(ts_tensor_size(y), ==, 5);
  g_assert_cmpint(e.traces, ==, 2);
  ts_function_call(f, &m, 1); /* a change of rank: an unknown rank, as TensorFlow relaxes it */
  g_assert_cmpint(e.traces, ==, 3);
  /* unknown dims read "?" in reasons, as everywhere but TensorFlow's own printouts;
   * the reason says what the call was generalised to */
  g_assert_cmpstr(e.reason_text, ==, "arg 0 (x): shape (1, 2) differs from traced (?,) "
                                     "(reduce_retracing: generalised to (x: i32[...]))");
  g_assert_cmpstr(e.signature, ==, "(x: i32[...])");
  ts_value cube = tv(ts_ones(TS_I32, TS_SHAPE(2, 2, 2))), one = tv(i32(1));
  g_assert_cmpint(ts_tensor_size(ts_function_call(f, &cube, 1)), ==, 8);
  g_assert_cmpint(ts_tensor_get_i64(ts_function_call(f, &one, 1), 0), ==, 3);
  g_assert_cmpint(e.traces, ==, 3); /* every rank served by it */
  ts_function_free(f);
  unlisten(id, &e);
  ts_scope_end(s);
}

/* x * n: a tensor and a host value. */
static ts_tensor *scale_by_host(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  return ts_mul(x, ts_cast(ts_scalar_i64(ts_arg_int(c, 1)), x ? ts_tensor_dtype(x) : TS_I32));
}

/* reduce_retracing relaxes tensor shapes with host arguments present;
 * host values still retrace per value. */
static void test_reduce_retracing_with_host_args(void)
{
  ts_scope *s = ts_scope_begin();
  events e;
  int id = listen(&e);
  ts_function *f = ts_function_new("scale", scale_by_host, "x, n");
  ts_function_set_reduce_retracing(f, true);
  ts_value a2[] = { tv(ts_ones(TS_I32, TS_SHAPE(2))), TS_INT_VALUE(3) };
  ts_value a3[] = { tv(ts_ones(TS_I32, TS_SHAPE(3))), TS_INT_VALUE(3) };
  ts_value a7[] = { tv(ts_ones(TS_I32, TS_SHAPE(7))), TS_INT_VALUE(3) };
  ts_value b7[] = { tv(ts_ones(TS_I32, TS_SHAPE(7))), TS_INT_VALUE(4) };
  ts_function_call(f, a2, 2);
  ts_function_call(f, a3, 2);
  g_assert_cmpstr(e.signature, ==, "(x: i32[?], n: 3)");
  ts_tensor *y = ts_function_call(f, a7, 2); /* the generalised function serves it */
  g_assert_cmpint(ts_tensor_size(y), ==, 7);
  g_assert_cmpint(ts_tensor_get_i64(y, 6), ==, 3);
  g_assert_cmpint(e.traces, ==, 2);
  y = ts_function_call(f, b7, 2); /* another host value: a trace of its own */
  g_assert_cmpint(e.traces, ==, 3);
  g_assert_cmpint(ts_tensor_get_i64(y, 0), ==, 4);
  ts_function_free(f);
  unlisten(id, &e);
  ts_scope_end(s);
}

static void test_concrete_functions(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("sq", square_plus_two, "a");
  ts_value spec = TS_SPEC_VALUE(TS_I32, TS_SCALAR_SHAPE);
  host_runs = 0;
  ts_concrete *cf = ts_function_get_concrete(f, &spec, 1);
  g_assert_nonnull(cf);
  g_assert_cmpint(host_runs, ==, 1); /* traced, not run */
  g_assert_true(ts_function_get_concrete(f, &spec, 1) == cf);
  ts_value a = tv(i32(5));
  expect_i64(ts_concrete_call(cf, &a, 1), 27);
  expect_i64(ts_function_call(f, &a, 1), 27); /* the cache holds it */
  g_assert_cmpint(host_runs, ==, 1);

  ts_value fl = tv(ts_scalar_f32(7.4f));
  g_assert_null(ts_concrete_call(cf, &fl, 1));
  ts_error *err = ts_error_take();
  g_assert_cmpstr(err->message, ==, "sq: expected int32 tensor for arg 0 (a), got float32");
  ts_error_free(err);
  ts_value vec = tv(ts_ones(TS_I32, TS_SHAPE(2)));
  g_assert_null(ts_concrete_call(cf, &vec, 1));
  err = ts_error_take();
  g_assert_cmpstr(err->message, ==, "sq: expected i32[] for arg 0 (a), got i32[2]");
  ts_error_free(err);
  g_assert_null(ts_concrete_call(cf, NULL, 0));
  ts_error_clear();

  char *pretty = ts_concrete_pretty_signature(cf);
  g_assert_cmpstr(pretty, ==,
                  "sq(a)\n  Args:\n    a: int32 Tensor, shape=()\n  Returns:\n    int32 Tensor, shape=()");
  free(pretty);
  ts_value list_items[] = { TS_INT_VALUE(1), TS_INT_VALUE(-1) };
  ts_value list = { .kind = TS_VALUE_LIST, .list = { list_items, 2 } };
  g_assert_nonnull(ts_function_call(f, &list, 1));
  char *all = ts_function_pretty_printed_concrete_signatures(f);
  g_assert_cmpstr(all, ==,
                  "sq(a)\n  Args:\n    a: int32 Tensor, shape=()\n  Returns:\n    int32 Tensor, shape=()"
                  "\n\nsq(a=[1, -1])\n  Returns:\n    int32 Tensor, shape=(2,)");
  free(all);
  ts_function_free(f);
  ts_scope_end(s);
}

static void test_nested_calls_and_graph(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("outer_function", outer, "x");
  ts_value x = tv(ts_constant(TS_F32, TS_SHAPE(1, 2), (float[]){ 1, 2 }));
  ts_tensor *y = ts_function_call(f, &x, 1);
  g_assert_cmpfloat(ts_tensor_get_f64(y, 0), ==, 12);

  const ts_graph *g = ts_concrete_graph(ts_function_concrete(f, 0));
  g_assert_cmpstr(ts_graph_name(g), ==, "outer_function");
  g_assert_cmpint(ts_graph_n_inputs(g), ==, 1);
  g_assert_cmpint(ts_graph_n_outputs(g), ==, 1);
  const ts_node *in = ts_graph_node(g, ts_graph_input(g, 0));
  g_assert_cmpstr(ts_node_name(in), ==, "x");
  g_assert_cmpint(ts_node_op(in), ==, TS_OP_PLACEHOLDER);
  int matmuls = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    g_assert_cmpint(ts_node_id(n), ==, i);
    for (int k = 0; k < ts_node_n_inputs(n); k++)
      g_assert_cmpint(ts_node_input(n, k).node, <, i); /* creation order is topological */
    if (ts_node_op(n) != TS_OP_MATMUL)
      continue;
    /* Two calls of affine: two scopes, made unique as TensorFlow does. */
    g_assert_cmpstr(ts_node_name(n), ==, matmuls ? "affine_1/MatMul" : "affine/MatMul");
    g_assert_cmpstr(ts_node_scope(n), ==, matmuls ? "affine_1" : "affine");
    g_assert_true(g_str_has_suffix(ts_node_loc(n).file, "test-trace.c"));
    g_assert_cmpstr(ts_node_loc(n).func, ==, "affine");
    g_assert_cmpint(ts_node_output_dtype(n, 0), ==, TS_F32);
    matmuls++;
  }
  g_assert_cmpint(matmuls, ==, 2);
  ts_port out = ts_graph_output(g, 0);
  g_assert_cmpstr(ts_node_name(ts_graph_node(g, out.node)), ==, "affine_1/Add");

  /* Eagerly the same code gives the same value. */
  ts_function_set_run_eagerly(f, 1);
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(f, &x, 1), 0), ==, 12);
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_function_free(f);
  ts_scope_end(s);
}

static void test_run_functions_eagerly(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("sq", square_plus_two, "x");
  host_runs = 0;
  ts_value a = tv(i32(2));
  ts_run_functions_eagerly(true);
  g_assert_true(ts_functions_run_eagerly());
  for (int i = 0; i < 3; i++)
    expect_i64(ts_function_call(f, &a, 1), 6);
  g_assert_cmpint(host_runs, ==, 3);
  g_assert_cmpint(ts_function_trace_count(f), ==, 0);
  ts_function_set_run_eagerly(f, 0); /* the per-function override wins */
  for (int i = 0; i < 3; i++)
    expect_i64(ts_function_call(f, &a, 1), 6);
  g_assert_cmpint(host_runs, ==, 4);
  ts_run_functions_eagerly(false);
  ts_function_free(f);
  ts_scope_end(s);
}

static void test_non_strict_execution(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("unused_return", unused_gather, "x");
  ts_value x = tv(ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 1, 2, 3 }));
  ts_tensor *y = ts_function_call(f, &x, 1); /* the bad gather is pruned */
  g_assert_nonnull(y);
  g_assert_false(ts_failed());
  ts_function_set_run_eagerly(f, 1);
  g_assert_null(ts_function_call(f, &x, 1));
  ts_error *err = ts_error_take();
  g_assert_nonnull(strstr(err->message, "indices[0] = 7 is not in [0, 3)"));
  ts_error_free(err);
  ts_function_free(f);
  ts_scope_end(s);
}

static void test_escaped_symbolic_tensor(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("leak", leak, "x");
  ts_value a = tv(i32(1)), b = tv(ts_scalar_f32(1));
  g_assert_nonnull(ts_function_call(f, &a, 1));
  g_assert_null(ts_function_call(f, &b, 1));
  ts_error *err = ts_error_take();
  g_assert_nonnull(strstr(err->message, "no longer being traced"));
  ts_error_free(err);
  ts_tensor_unref(leaked);
  leaked = NULL;
  ts_function_free(f);
  ts_scope_end(s);
}

static ts_tensor *weights_once(ts_call *c)
{
  static int made;
  ts_tensor *w;
  TS_INIT_SCOPE {
    w = ts_ones(TS_F32, TS_SHAPE(2));
    g_assert_nonnull(ts_tensor_data(w)); /* a real tensor, made eagerly */
    made++;
  }
  g_assert_true(ts_tracing());
  return ts_mul(ts_arg(c, 0), w);
}

static void test_init_scope(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("w", weights_once, "x");
  ts_value x = tv(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 3, 4 }));
  ts_tensor *y = ts_function_call(f, &x, 1);
  g_assert_cmpfloat(ts_tensor_get_f64(y, 1), ==, 4);
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(f, 0));
  bool has_const = false;
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    has_const |= ts_node_op(ts_graph_node(g, i)) == TS_OP_CONST;
  g_assert_true(has_const);
  ts_function_free(f);
  ts_scope_end(s);
}

static void test_errors_inside_trace(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("affine", affine, "x, y, b");
  ts_value args[] = { tv(ts_ones(TS_F32, TS_SHAPE(2, 3))), tv(ts_ones(TS_F32, TS_SHAPE(2, 3))),
                      tv(ts_scalar_f32(1)) };
  g_assert_null(ts_function_call(f, args, 3));
  ts_error *err = ts_error_take();
  g_assert_cmpstr(err->op, ==, "MatMul");
  g_assert_cmpstr(err->func, ==, "affine");
  ts_error_free(err);
  g_assert_cmpint(ts_function_n_concrete(f), ==, 0);
  g_assert_false(ts_tracing());
  ts_value missing[] = { args[0] };
  g_assert_null(ts_function_call(f, missing, 1));
  err = ts_error_take();
  g_assert_nonnull(strstr(err->message, "affine: missing argument")); /* 1 (y) or 2 (b) */
  ts_error_free(err);
  ts_function_free(f);
  ts_scope_end(s);
}

/* Recursion under a tensor condition: ends eagerly, never while tracing
 * (both branches are traced), so tracing stops at a depth limit. */
static ts_function *countdown_fn;
static ts_tensor *countdown(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(x, i32(0)), &x) {
    ts_value next = tv(ts_sub(x, i32(1)));
    x = ts_add(ts_function_call(countdown_fn, &next, 1), i32(1));
  } TS_END_IF;
  return x;
}

static ts_tensor *invoke_countdown(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(x, i32(0)), &x) {
    x = ts_add(TS_INVOKE(invoke_countdown, ts_sub(x, i32(1))), i32(1));
  } TS_END_IF;
  return x;
}

/* Takes the pending error; its message must hold both parts. */
static void expect_error_with(const char *part, const char *part2)
{
  ts_error *err = ts_error_take();
  g_assert_nonnull(err);
  if (!strstr(err->message, part) || !strstr(err->message, part2))
    g_error("unexpected error: %s", err->message);
  ts_error_free(err);
}

static void test_recursion_depth_limit(void)
{
  ts_scope *s = ts_scope_begin();
  countdown_fn = ts_function_new("countdown", countdown, "x");
  ts_value three = tv(i32(3));
  ts_run_functions_eagerly(true); /* the inner calls too: the recursion ends */
  expect_i64(ts_function_call(countdown_fn, &three, 1), 3);
  ts_run_functions_eagerly(false);
  g_assert_null(ts_function_call(countdown_fn, &three, 1));
  expect_error_with("countdown -> countdown -> countdown",
                    "(trace depth limit 64): recursion under a tensor condition cannot be traced");
  g_assert_false(ts_tracing());
  g_assert_cmpint(ts_function_n_concrete(countdown_fn), ==, 0);

  ts_function *inv = ts_function_new("outer", invoke_countdown, "x");
  expect_i64(ts_function_call_eager(inv, &three, 1), 3);
  g_assert_null(ts_function_call(inv, &three, 1));
  expect_error_with("outer -> invoke_countdown -> invoke_countdown", "(trace depth limit 64)");
  /* the limit is per trace: a later trace of a plain function works */
  ts_function *f = ts_function_new("square_plus_two", square_plus_two, "x");
  expect_i64(ts_function_call(f, &three, 1), 11);
  ts_function_free(f);
  ts_function_free(inv);
  ts_function_free(countdown_fn);
  ts_scope_end(s);
}

/* Enums crossing the API are checked: a spec's dtype and shape, a value's kind. */
static void test_invalid_enums(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("square_plus_two", square_plus_two, "x");
  static const ts_dtype bad_dtypes[] = { (ts_dtype)77, (ts_dtype)-1, TS_DTYPE_COUNT };
  for (size_t i = 0; i < G_N_ELEMENTS(bad_dtypes); i++) {
    ts_value spec = TS_SPEC_VALUE(bad_dtypes[i], TS_SHAPE(2));
    g_assert_null(ts_function_get_concrete(f, &spec, 1));
    expect_error_with("square_plus_two: argument 0 is not a valid value", "invalid dtype");
    g_assert_false(ts_function_set_input_signature(f, &(ts_spec){ bad_dtypes[i], TS_SHAPE(2) }, 1));
    ts_error_clear();
  }
  ts_value deep = TS_SPEC_VALUE(TS_F32, ((ts_shape){ .rank = 9 }));
  g_assert_null(ts_function_get_concrete(f, &deep, 1));
  g_assert_nonnull(strstr(ts_error_peek()->message, "invalid shape"));
  ts_error_clear();
  ts_value below = TS_SPEC_VALUE(TS_F32, TS_SHAPE(-2));
  g_assert_null(ts_function_get_concrete(f, &below, 1));
  ts_error_clear();

  ts_value kinds[] = { { .kind = (ts_value_kind)99 }, { .kind = (ts_value_kind)-1 } };
  for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
    g_assert_null(ts_function_call(f, &kinds[i], 1));
    g_assert_nonnull(strstr(ts_error_peek()->message, "kind is not a ts_value_kind"));
    ts_error_clear();
    g_assert_null(ts_function_call_eager(f, &kinds[i], 1));
    ts_error_clear();
    g_assert_null(ts_invoke_at(TS_HERE, "square_plus_two", square_plus_two, &kinds[i], 1));
    ts_error_clear();
  }
  ts_value items[] = { TS_INT_VALUE(1), { .kind = (ts_value_kind)42 } };
  ts_value list = { .kind = TS_VALUE_LIST, .list = { items, 2 } };
  g_assert_null(ts_function_call(f, &list, 1));
  g_assert_nonnull(strstr(ts_error_peek()->message, "kind 42"));
  ts_error_clear();
  ts_value broken = { .kind = TS_VALUE_LIST, .list = { NULL, 3 } };
  g_assert_null(ts_function_call_eager(f, &broken, 1));
  ts_error_clear();

  g_assert_null(ts_function_call(NULL, NULL, 0));
  g_assert_nonnull(strstr(ts_error_peek()->message, "ts_function_call: invalid argument: f != NULL"));
  ts_error_clear();
  g_assert_cmpint(ts_function_n_concrete(f), ==, 0);
  ts_function_free(f);
  ts_scope_end(s);
}

/* Two layers in scopes of one name: tf.name_scope makes them dense, dense_1. */
static ts_tensor *two_dense(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  for (int i = 0; i < 2; i++)
    TS_NAME_SCOPE("dense") {
      x = ts_relu(x);
    }
  return x;
}

static void test_name_scopes_unique(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("two_dense", two_dense, "x");
  ts_value x = tv(ts_scalar_f32(1));
  g_assert_nonnull(ts_function_call(f, &x, 1));
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(f, 0));
  g_assert_cmpint(ts_graph_n_nodes(g), ==, 3);
  g_assert_cmpstr(ts_node_name(ts_graph_node(g, 1)), ==, "dense/Relu");
  g_assert_cmpstr(ts_node_name(ts_graph_node(g, 2)), ==, "dense_1/Relu");
  g_assert_cmpstr(ts_node_scope(ts_graph_node(g, 2)), ==, "dense_1");
  ts_function_free(f);
  ts_scope_end(s);
}

/* (2 + 3) * x: Add of two constants is folded when the plan is made. */
static ts_tensor *folded_scale(ts_call *c)
{
  return ts_mul(ts_add(ts_scalar_f32(2), ts_scalar_f32(3)), ts_arg(c, 0));
}

/* A gather of constants with a bad index: folding must leave the error to run time. */
static ts_tensor *folded_bad_gather(ts_call *c)
{
  ts_tensor *table = ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 });
  ts_tensor *picked = ts_gather(table, ts_constant(TS_I32, TS_SHAPE(1), (int32_t[]){ 5 }), 0);
  return ts_add(picked, ts_arg(c, 0));
}

static void count_ops(const ts_event *ev, void *user_data)
{
  (*(int *)user_data)++;
  (void)ev;
}

static void test_constant_folding(void)
{
  ts_scope *s = ts_scope_begin();
  int ops = 0;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), count_ops, &ops);
  ts_function *f = ts_function_new("folded_scale", folded_scale, "x");
  ts_value x = tv(ts_scalar_f32(2));
  for (int i = 0; i < 2; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(f, &x, 1), 0), ==, 10);
  g_assert_cmpint(ops, ==, 2); /* only the Mul runs, once per call */
  ops = 0;
  ts_function_set_run_eagerly(f, 1);
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(f, &x, 1), 0), ==, 10);
  g_assert_cmpint(ops, ==, 2); /* Add and Mul */
  ts_function_free(f);

  f = ts_function_new("folded_bad_gather", folded_bad_gather, "x");
  for (int i = 0; i < 2; i++) {
    g_assert_null(ts_function_call(f, &x, 1));
    ts_error *err = ts_error_take();
    g_assert_nonnull(strstr(err->message, "indices[0] = 5 is not in [0, 2)"));
    ts_error_free(err);
  }
  ts_function_free(f);
  ts_listener_remove(id);
  ts_scope_end(s);
}

/* ---- a function called from another's trace ---------------------------------------------- */

static ts_function *triple_fn; /* triple(x) = 3x, input signature f32[?] */
static int triple_runs;

static ts_tensor *triple(ts_call *c)
{
  triple_runs++;
  return ts_mul(ts_arg(c, 0), ts_scalar_f32(3));
}

/* triple(x + 1) */
static ts_tensor *triple_next(ts_call *c)
{
  ts_value y = tv(ts_add(ts_arg(c, 0), ts_scalar_f32(1)));
  return ts_function_call(triple_fn, &y, 1);
}

/* triple(x), x as given */
static ts_tensor *pass_to_triple(ts_call *c)
{
  ts_value x = tv(ts_arg(c, 0));
  return ts_function_call(triple_fn, &x, 1);
}

static ts_tensor *f32_vector(int n, float first)
{
  float v[8];
  for (int i = 0; i < n; i++)
    v[i] = first + (float)i;
  return ts_constant(TS_F32, TS_SHAPE(n), v);
}

/* A ts_function called while another is traced keeps its own cache, trace
 * count and input signature (tf.function semantics); the caller's graph
 * inlines it under its name scope. */
static void test_nested_function_cache(void)
{
  ts_scope *s = ts_scope_begin();
  triple_fn = ts_function_new("triple", triple, "x");
  g_assert_true(ts_function_set_input_signature(
    triple_fn, &(ts_spec){ TS_F32, TS_SHAPE(-1) }, 1));
  ts_function *outer = ts_function_new("triple_next", triple_next, "x");
  ts_value x2 = tv(f32_vector(2, 1));
  for (int eager = 1; eager >= 0; eager--) {
    ts_tensor *y = eager ? ts_function_call_eager(outer, &x2, 1) : ts_function_call(outer, &x2, 1);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 0), ==, 6);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 1), ==, 9);
  }
  /* Eagerly triple was traced for f32[?] (its input signature); tracing
   * triple_next found that trace. */
  g_assert_cmpint(ts_function_trace_count(triple_fn), ==, 1);
  g_assert_cmpint(ts_function_trace_count(outer), ==, 1);
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(outer, 0));
  bool inlined = false;
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    inlined |= strcmp(ts_node_name(ts_graph_node(g, i)), "triple/Mul") == 0;
  g_assert_true(inlined);
  g_assert_cmpstr(ts_concrete_signature(ts_function_concrete(triple_fn, 0)), ==, "(x: f32[?])");

  /* A new shape retraces the caller, not triple: its signature takes it. */
  ts_value x5 = tv(f32_vector(5, 0));
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(outer, &x5, 1), 4), ==, 15);
  g_assert_cmpint(ts_function_trace_count(outer), ==, 2);
  g_assert_cmpint(ts_function_trace_count(triple_fn), ==, 1);
  int runs = triple_runs;
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(triple_fn, &x5, 1), 4), ==, 12);
  g_assert_cmpint(triple_runs, ==, runs); /* the direct call ran the trace */

  /* A wrong dtype is refused by triple's own signature, in both modes. */
  ts_function *pass = ts_function_new("pass_to_triple", pass_to_triple, "x");
  ts_value ints = tv(ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 1, 2 }));
  for (int eager = 1; eager >= 0; eager--) {
    g_assert_null(eager ? ts_function_call_eager(pass, &ints, 1) : ts_function_call(pass, &ints, 1));
    expect_error_with("triple: arg 0 (x) does not match the input signature",
                      "expected f32[?], got i32[2]");
  }
  g_assert_cmpint(ts_function_n_concrete(pass), ==, 0);
  g_assert_cmpint(ts_function_trace_count(triple_fn), ==, 1);
  ts_function_free(pass);
  ts_function_free(outer);
  ts_function_free(triple_fn);
  ts_scope_end(s);
}

/* Without an input signature the callee is traced per signature, once. */
static ts_function *scale_fn;

static ts_tensor *scale(ts_call *c)
{
  return ts_mul(ts_arg(c, 0), ts_arg(c, 0));
}

static ts_tensor *scale_twice(ts_call *c)
{
  ts_value x = tv(ts_arg(c, 0));
  ts_value y = tv(ts_function_call(scale_fn, &x, 1));
  return ts_function_call(scale_fn, &y, 1);
}

static void test_nested_function_traced_once(void)
{
  ts_scope *s = ts_scope_begin();
  scale_fn = ts_function_new("scale", scale, "x");
  ts_function *outer = ts_function_new("scale_twice", scale_twice, "x");
  ts_value x = tv(i32(3));
  expect_i64(ts_function_call(outer, &x, 1), 81);
  g_assert_cmpint(ts_function_trace_count(scale_fn), ==, 1);
  g_assert_cmpint(ts_function_n_concrete(scale_fn), ==, 1);
  expect_i64(ts_function_call(scale_fn, &x, 1), 9);
  g_assert_cmpint(ts_function_trace_count(scale_fn), ==, 1);
  expect_i64(ts_function_call_eager(outer, &x, 1), 81);
  ts_value f = tv(ts_scalar_f32(2));
  g_assert_cmpfloat(ts_tensor_get_f64(ts_function_call(outer, &f, 1), 0), ==, 16);
  g_assert_cmpint(ts_function_trace_count(scale_fn), ==, 2); /* a new dtype */
  ts_function_free(outer);
  ts_function_free(scale_fn);
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  serial_check_install();
  g_test_add_func("/trace/cache-and-reasons", test_cache_and_reasons);
  g_test_add_func("/trace/failed-trace-reported", test_failed_trace_reported);
  g_test_add_func("/trace/frequent-retracing-warning", test_frequent_retracing_warning);
  g_test_add_func("/trace/retrace-limit", test_retrace_limit_falls_back_to_eager);
  g_test_add_func("/trace/no-retrace-limit-by-default", test_no_retrace_limit_by_default);
  g_test_add_func("/trace/variables-on-first-trace-only", test_variables_on_first_trace_only);
  g_test_add_func("/trace/fail-on-retrace", test_fail_on_retrace);
  g_test_add_func("/trace/input-signature", test_input_signature);
  g_test_add_func("/trace/input-signature-converts-host-lists",
                  test_input_signature_converts_host_lists);
  g_test_add_func("/trace/input-signature-converts-host-values",
                  test_input_signature_converts_host_values);
  g_test_add_func("/trace/reduce-retracing", test_reduce_retracing);
  g_test_add_func("/trace/reduce-retracing-with-host-args", test_reduce_retracing_with_host_args);
  g_test_add_func("/trace/concrete-functions", test_concrete_functions);
  g_test_add_func("/trace/nested-calls-and-graph", test_nested_calls_and_graph);
  g_test_add_func("/trace/nested-function-cache", test_nested_function_cache);
  g_test_add_func("/trace/nested-function-traced-once", test_nested_function_traced_once);
  g_test_add_func("/trace/run-functions-eagerly", test_run_functions_eagerly);
  g_test_add_func("/trace/non-strict", test_non_strict_execution);
  g_test_add_func("/trace/escaped-symbolic-tensor", test_escaped_symbolic_tensor);
  g_test_add_func("/trace/init-scope", test_init_scope);
  g_test_add_func("/trace/errors-inside-trace", test_errors_inside_trace);
  g_test_add_func("/trace/recursion-depth-limit", test_recursion_depth_limit);
  g_test_add_func("/trace/invalid-enums", test_invalid_enums);
  g_test_add_func("/trace/constant-folding", test_constant_folding);
  g_test_add_func("/trace/name-scopes-unique", test_name_scopes_unique);
  return g_test_run();
}
