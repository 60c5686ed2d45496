/* test-semantics.c — tf.function behaviour beyond the guides' own
 * examples: each test names the rule of a guide (../shared/seeds/) it
 * holds the engine to, on inputs the guides do not show (nested lists of
 * tensors, input signatures with get_concrete, ...). */
#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "test-serial-check.h"

#define LIST(...) ((ts_value){ .kind = TS_VALUE_LIST, .list = { (const ts_value[]){ __VA_ARGS__ }, \
                   (int)(sizeof((ts_value[]){ __VA_ARGS__ }) / sizeof(ts_value)) } })

static ts_value tv(ts_tensor *t)
{
  return TS_TENSOR_VALUE(t);
}

static void expect_str(ts_tensor *t, const char *want)
{
  assert_no_error();
  g_assert_nonnull(t);
  char *s = ts_tensor_to_string(t);
  g_assert_cmpstr(s, ==, want);
  free(s);
}

/* The text of the pending error; it is taken. */
static char *take_error(void)
{
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  char *text = g_strdup(e->message);
  ts_error_free(e);
  return text;
}

static int host_runs; /* runs of the C code: traces, or eager calls */

/* The last trace event: its reason and signature. */
typedef struct {
  int traces;
  char reason[256];
  char signature[256];
} traces;

static void on_trace(const ts_event *ev, void *user_data)
{
  traces *t = user_data;
  if (ev->kind != TS_EVENT_TRACE)
    return;
  t->traces++;
  g_strlcpy(t->reason, ev->trace.reason_text, sizeof t->reason);
  g_strlcpy(t->signature, ev->trace.signature, sizeof t->signature);
}

/* ---- nested structures: a list of tensors --------------------------------------- */

/* The sum of the tensors of a list (its first argument), times a host int
 * the list may end with. */
static ts_tensor *sum_list(ts_call *c)
{
  host_runs++;
  const ts_value *xs = ts_call_arg_value(c, 0);
  ts_tensor *acc = NULL;
  int64_t scale = 1;
  for (int i = 0; i < xs->list.n; i++) {
    const ts_value *v = &xs->list.items[i];
    if (v->kind == TS_VALUE_INT)
      scale = v->i;
    else
      acc = acc ? ts_add(acc, v->tensor) : v->tensor;
  }
  return ts_mul(acc, ts_cast(ts_scalar_i32((int32_t)scale), ts_tensor_dtype(acc)));
}

/* 000 passes a list of tensors to a tf.function (`state = [tf.zeros([10,
 * 10])] * 2; lstm_fn(input, state)`); 001: "Each time you invoke it with a
 * new argument signature, the original function gets re-traced ... If the
 * function has already been traced with that kind of argument, you just
 * get your pre-traced graph."  The tensors of a list are inputs of the
 * graph (their dtypes and shapes are the signature), not constants of the
 * first trace: new values of the same shapes reuse the graph and give
 * their own results. */
static void test_list_of_tensors(void)
{
  ts_scope *s = ts_scope_begin();
  traces t = { 0 };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_TRACE), on_trace, &t);
  ts_function *f = ts_function_new("sum_list", sum_list, "xs");
  host_runs = 0;
  ts_value a = LIST(tv(ts_scalar_f32(1)), tv(ts_scalar_f32(2)));
  ts_value b = LIST(tv(ts_scalar_f32(10)), tv(ts_scalar_f32(20)));
  expect_str(ts_function_call(f, &a, 1), "Tensor(3.0, shape=(), dtype=float32)");
  expect_str(ts_function_call(f, &b, 1), "Tensor(30.0, shape=(), dtype=float32)");
  g_assert_cmpint(host_runs, ==, 1);
  g_assert_cmpstr(t.signature, ==, "(xs: [f32[], f32[]])");

  /* a tensor of the list changes shape: a retrace, saying which */
  ts_value c = LIST(tv(ts_ones(TS_F32, TS_SHAPE(2))), tv(ts_scalar_f32(20)));
  expect_str(ts_function_call(f, &c, 1), "Tensor([21. 21.], shape=(2,), dtype=float32)");
  g_assert_cmpint(t.traces, ==, 2);
  g_assert_cmpstr(t.reason, ==, "arg 0 (xs): tensor 0 of the list: shape (2,) differs from traced ()");
  /* ... or dtype */
  ts_value d = LIST(tv(ts_scalar_i32(1)), tv(ts_scalar_i32(2)));
  expect_str(ts_function_call(f, &d, 1), "Tensor(3, shape=(), dtype=int32)");
  g_assert_cmpstr(t.reason, ==, "arg 0 (xs): tensor 0 of the list: dtype int32 differs from float32");

  /* host values in the list stay part of the signature, by value */
  ts_value e3 = LIST(tv(ts_scalar_f32(1)), tv(ts_scalar_f32(2)), TS_INT_VALUE(3));
  ts_value e4 = LIST(tv(ts_scalar_f32(5)), tv(ts_scalar_f32(2)), TS_INT_VALUE(4));
  expect_str(ts_function_call(f, &e3, 1), "Tensor(9.0, shape=(), dtype=float32)");
  int n = t.traces;
  expect_str(ts_function_call(f, &e4, 1), "Tensor(28.0, shape=(), dtype=float32)");
  g_assert_cmpint(t.traces, ==, n + 1);
  g_assert_cmpstr(t.reason, ==, "arg 0 (xs): host value [f32[], f32[], 4] differs from [f32[], f32[], 3]");

  /* a list of more tensors is a change of structure, not of a host value */
  ts_value three = LIST(tv(ts_scalar_f32(1)), tv(ts_scalar_f32(2)), tv(ts_scalar_f32(3)));
  expect_str(ts_function_call(f, &three, 1), "Tensor(6.0, shape=(), dtype=float32)");
  g_assert_cmpstr(t.reason, ==, "arg 0 (xs): a list of 3 tensors, traced with 2");

  /* the placeholders are named as TensorFlow names a flattened argument */
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(f, 0));
  g_assert_cmpint(ts_graph_n_inputs(g), ==, 2);
  g_assert_cmpstr(ts_node_name(ts_graph_node(g, ts_graph_input(g, 0))), ==, "xs");
  g_assert_cmpstr(ts_node_name(ts_graph_node(g, ts_graph_input(g, 1))), ==, "xs_1");

  /* pretty-printed as TensorFlow prints a nested structure */
  char *text = ts_concrete_pretty_signature(ts_function_concrete(f, 0));
  g_assert_cmpstr(text, ==, "sum_list(xs)\n"
                            "  Args:\n"
                            "    xs: [<1>, <2>]\n"
                            "      <1>: float32 Tensor, shape=()\n"
                            "      <2>: float32 Tensor, shape=()\n"
                            "  Returns:\n"
                            "    float32 Tensor, shape=()");
  g_free(text);

  /* eager and graph agree */
  expect_str(ts_function_call_eager(f, &b, 1), "Tensor(30.0, shape=(), dtype=float32)");

  /* a concrete function for a list of specs takes any list that fits */
  ts_value specs = LIST(TS_SPEC_VALUE(TS_F32, TS_SHAPE(-1)), TS_SPEC_VALUE(TS_F32, TS_SCALAR_SHAPE));
  ts_concrete *cf = ts_function_get_concrete(f, &specs, 1);
  g_assert_nonnull(cf);
  ts_value v3 = LIST(tv(ts_ones(TS_F32, TS_SHAPE(3))), tv(ts_scalar_f32(1)));
  expect_str(ts_concrete_call(cf, &v3, 1), "Tensor([2. 2. 2.], shape=(3,), dtype=float32)");
  ts_value bad = LIST(tv(ts_ones(TS_F32, TS_SHAPE(3))), tv(ts_ones(TS_F32, TS_SHAPE(3))));
  g_assert_null(ts_concrete_call(cf, &bad, 1));
  char *msg = take_error();
  g_assert_cmpstr(msg, ==, "sum_list: arg 0 (xs) was traced with the host value [f32[?], f32[]], "
                           "got [f32[3], f32[3]]");
  g_free(msg);

  ts_function_free(f);
  ts_listener_remove(id);
  ts_scope_end(s);
}

/* A graph takes at most 64 tensors: a list of more is refused before
 * any trace (a trace would make a concrete function no call could run);
 * eagerly, with no graph, it runs. */
static void test_list_too_many_tensors(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("sum_list", sum_list, "xs");
  ts_value items[65];
  for (int i = 0; i < 65; i++)
    items[i] = tv(ts_scalar_f32(1));
  ts_value xs = { .kind = TS_VALUE_LIST, .list = { items, 65 } };
  g_assert_null(ts_function_call(f, &xs, 1));
  char *msg = take_error();
  g_assert_cmpstr(msg, ==, "sum_list: called with 65 tensors (those in lists included); a graph "
                           "takes at most 64 (pass them stacked into fewer tensors)");
  g_free(msg);
  g_assert_cmpint(ts_function_n_concrete(f), ==, 0);
  expect_str(ts_function_call_eager(f, &xs, 1), "Tensor(65.0, shape=(), dtype=float32)");
  xs.list.n = 64;
  expect_str(ts_function_call(f, &xs, 1), "Tensor(64.0, shape=(), dtype=float32)");
  ts_function_free(f);
  ts_scope_end(s);
}

/* 000: "A re-trace can also happen when tensor arguments change shape"
 * (and `state = [tf.zeros([10, 10])] * 2` is such a tensor argument, in a
 * list).  tf.function's reduce_retracing=True (its API reference; the
 * guides predate it) relaxes the shapes of every tensor, those of a
 * nested structure too: a list whose tensor changes length gets one
 * generalised concrete function, "xs: [f32[?], f32[]]", that later
 * lengths reuse. */
static void test_list_reduce_retracing(void)
{
  ts_scope *s = ts_scope_begin();
  traces t = { 0 };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_TRACE), on_trace, &t);
  ts_function *f = ts_function_new("sum_list", sum_list, "xs");
  ts_function_set_reduce_retracing(f, true);
  for (int n = 1; n <= 4; n++) {
    ts_value xs = LIST(tv(ts_ones(TS_F32, TS_SHAPE(n))), tv(ts_scalar_f32(1)), TS_INT_VALUE(2));
    ts_tensor *y = ts_function_call(f, &xs, 1);
    assert_no_error();
    g_assert_cmpint(ts_tensor_size(y), ==, n);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 0), ==, 4);
  }
  g_assert_cmpint(t.traces, ==, 2);
  g_assert_cmpstr(t.signature, ==, "(xs: [f32[?], f32[], 2])");
  ts_function_free(f);
  ts_listener_remove(id);
  ts_scope_end(s);
}

static void on_warning(const ts_event *ev, void *user_data)
{
  char **warning = user_data;
  g_free(*warning);
  *warning = g_strdup(ev->warning.message);
}

/* 001: "No matter how large your model, you want to avoid tracing
 * frequently ... set input specifications and use tensor arguments to
 * avoid retracing"; 000: "Exercise caution when calling functions ...
 * with arguments that change shapes".  The frequent-retracing warning's
 * fix for a list whose tensors keep changing shape is reduce_retracing:
 * an input signature (of tensors) cannot describe a list. */
static void test_list_frequent_retracing(void)
{
  ts_scope *s = ts_scope_begin();
  char *warning = NULL;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), on_warning, &warning);
  ts_function *f = ts_function_new("sum_list", sum_list, "xs");
  for (int n = 1; n <= 5; n++) {
    ts_value xs = LIST(tv(ts_ones(TS_F32, TS_SHAPE(n))));
    g_assert_nonnull(ts_function_call(f, &xs, 1));
  }
  g_assert_nonnull(warning);
  g_assert_nonnull(strstr(warning, "no input signature describes these calls (arg 0 (xs) is a "
                                   "list of tensors); turn on reduce_retracing"));
  g_free(warning);
  ts_function_free(f);
  ts_listener_remove(id);
  ts_scope_end(s);
}

/* The number of strings in the list argument, plus the length of the first. */
static ts_tensor *count_strings(ts_call *c)
{
  const ts_value *xs = ts_call_arg_value(c, 0);
  return ts_scalar_i32((int32_t)(xs->list.n * 100 + (int)strlen(xs->list.items[0].s)));
}

/* 001: "new Python arguments always trigger retracing" — new by value: a
 * list of the strings "a" and "b" and a list of the one string "a', 'b"
 * are different values (their texts in the signature must differ too), so
 * the second call traces a graph of its own instead of reusing the first. */
static void test_host_strings_by_value(void)
{
  ts_scope *s = ts_scope_begin();
  traces t = { 0 };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_TRACE), on_trace, &t);
  ts_function *f = ts_function_new("count_strings", count_strings, "xs");
  ts_value two = LIST(TS_STRING_VALUE("a"), TS_STRING_VALUE("b"));
  ts_value one = LIST(TS_STRING_VALUE("a', 'b"));
  expect_str(ts_function_call(f, &two, 1), "Tensor(201, shape=(), dtype=int32)");
  expect_str(ts_function_call(f, &one, 1), "Tensor(106, shape=(), dtype=int32)");
  g_assert_cmpint(t.traces, ==, 2);
  g_assert_cmpstr(t.signature, ==, "(xs: [\"a', 'b\"])");
  ts_function_free(f);
  ts_listener_remove(id);
  ts_scope_end(s);
}

/* ---- None as an argument ------------------------------------------------------- */

/* x * mask, or x where mask is None (Python's `def f(x, mask=None)`). */
static ts_tensor *masked(ts_call *c)
{
  host_runs++;
  const ts_value *mask = ts_call_arg_value(c, 1);
  if (!mask || mask->kind == TS_VALUE_NONE)
    return ts_arg(c, 0);
  return ts_mul(ts_arg(c, 0), ts_arg(c, 1));
}

/* 000: "tf.function may also re-trace when called with different
 * non-tensor arguments"; 001: "new Python arguments always trigger
 * retracing".  None is such an argument: a call with None traces a graph
 * of its own (as it runs eagerly), a tensor in its place retraces, and
 * None again reuses the graph. */
static void test_none_argument(void)
{
  ts_scope *s = ts_scope_begin();
  traces t = { 0 };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_TRACE), on_trace, &t);
  ts_function *f = ts_function_new("masked", masked, "x, mask");
  host_runs = 0;
  ts_value none[] = { tv(ts_ones(TS_F32, TS_SHAPE(2))), { .kind = TS_VALUE_NONE } };
  ts_value mask[] = { none[0], tv(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 0, 3 })) };
  expect_str(ts_function_call_eager(f, none, 2), "Tensor([1. 1.], shape=(2,), dtype=float32)");
  expect_str(ts_function_call(f, none, 2), "Tensor([1. 1.], shape=(2,), dtype=float32)");
  g_assert_cmpstr(t.signature, ==, "(x: f32[2], mask: None)");
  expect_str(ts_function_call(f, mask, 2), "Tensor([0. 3.], shape=(2,), dtype=float32)");
  g_assert_cmpstr(t.reason, ==, "arg 1 (mask): a tensor, traced with None");
  expect_str(ts_function_call(f, none, 2), "Tensor([1. 1.], shape=(2,), dtype=float32)");
  g_assert_cmpint(t.traces, ==, 2);
  g_assert_cmpint(host_runs, ==, 3); /* the eager call and two traces */
  char *text = ts_concrete_pretty_signature(ts_function_concrete(f, 0));
  g_assert_true(g_str_has_prefix(text, "masked(x, mask=None)\n"));
  g_free(text);
  ts_function_free(f);
  ts_listener_remove(id);
  ts_scope_end(s);
}

/* ---- input signatures and concrete functions ---------------------------------- */

static ts_tensor *total(ts_call *c)
{
  host_runs++;
  return ts_reduce_sum(ts_arg(c, 0), TS_ALL_AXES, false);
}

/* 000: "A re-trace can also happen when tensor arguments change shape,
 * unless you specified an input_signature"; 001: get_concrete_function
 * gives the concrete function that calls of those arguments run.  With an
 * input signature that is the signature's one function: get_concrete of
 * any arguments that fit it returns it (no trace of their exact shapes),
 * of none too, and of arguments that do not fit is an error. */
static void test_input_signature_get_concrete(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("total", total, "x");
  g_assert_true(ts_function_set_input_signature(f, &(ts_spec){ TS_F32, TS_SHAPE(-1, 3) }, 1));
  ts_value x23 = tv(ts_ones(TS_F32, TS_SHAPE(2, 3)));
  ts_concrete *cf = ts_function_get_concrete(f, &x23, 1);
  g_assert_nonnull(cf);
  g_assert_cmpstr(ts_concrete_signature(cf), ==, "(x: f32[?,3])");
  g_assert_true(ts_function_get_concrete(f, NULL, 0) == cf);
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(-1, 3));
  g_assert_true(ts_function_get_concrete(f, &spec, 1) == cf);
  /* a spec is compatible where its dims are unknown (TensorSpec.is_compatible_with) */
  ts_value vague = TS_SPEC_VALUE(TS_F32, TS_SHAPE(-1, -1));
  g_assert_true(ts_function_get_concrete(f, &vague, 1) == cf);
  expect_str(ts_concrete_call(cf, &(ts_value[]){ tv(ts_ones(TS_F32, TS_SHAPE(5, 3))) }[0], 1),
             "Tensor(15.0, shape=(), dtype=float32)");
  expect_str(ts_function_call(f, &x23, 1), "Tensor(6.0, shape=(), dtype=float32)");
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);

  const struct {
    ts_value arg;
    const char *message;
  } bad[] = {
    { tv(ts_ones(TS_F32, TS_SHAPE(2, 4))),
      "total: arg 0 (x) does not match the input signature: expected f32[?,3], got f32[2,4]" },
    { TS_SPEC_VALUE(TS_F32, TS_SHAPE(-1, 4)),
      "total: arg 0 (x) does not match the input signature: expected f32[?,3], got f32[?,4]" },
    { TS_SPEC_VALUE(TS_F32, TS_SHAPE(-1)),
      "total: arg 0 (x) does not match the input signature: expected f32[?,3], got f32[?]" },
    { tv(ts_ones(TS_I32, TS_SHAPE(2, 3))),
      "total: arg 0 (x) does not match the input signature: expected f32[?,3], got i32[2,3]" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_null(ts_function_get_concrete(f, &bad[i].arg, 1));
    char *msg = take_error();
    g_assert_cmpstr(msg, ==, bad[i].message);
    g_free(msg);
  }
  g_assert_cmpint(ts_function_n_concrete(f), ==, 1);

  /* host values convert for the signature as in a call */
  ts_function *g = ts_function_new("total", total, "x");
  g_assert_true(ts_function_set_input_signature(g, &(ts_spec){ TS_I32, TS_SCALAR_SHAPE }, 1));
  ts_value five = TS_INT_VALUE(5);
  cf = ts_function_get_concrete(g, &five, 1);
  g_assert_nonnull(cf);
  g_assert_cmpstr(ts_concrete_signature(cf), ==, "(x: i32[])");
  ts_function_free(g);
  ts_function_free(f);
  ts_scope_end(s);
}

/* ---- variables: made on the first call only --------------------------------------- */

static ts_tensor *late_variable;

/* Makes a variable (guarded, once) only when called with n == 2. */
static ts_tensor *variable_for_two(ts_call *c)
{
  int64_t n = ts_arg_int(c, 0);
  if (n == 2 && !late_variable)
    TS_INIT_SCOPE { late_variable = ts_variable_new(ts_scalar_f32(7), "late"); }
  return n == 2 ? ts_read(late_variable) : ts_scalar_f32(0);
}

/* 002: "Create tf.Variables outside the Python function and modify them on
 * the inside"; tf.function refuses a variable made on any call but the
 * first ("tf.function only supports singleton tf.Variables created on the
 * first call"), also one guarded so that it is made once, when the call
 * that makes it is a later trace (here a new host value's).  The error
 * names the variable and the function and says the rule; eagerly there is
 * no trace, and the call makes it. */
static void test_variable_on_later_trace(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("variable_for_two", variable_for_two, "n");
  ts_value one = TS_INT_VALUE(1), two = TS_INT_VALUE(2);
  expect_str(ts_function_call(f, &one, 1), "Tensor(0.0, shape=(), dtype=float32)");
  g_assert_null(ts_function_call(f, &two, 1));
  char *msg = take_error();
  g_assert_true(g_str_has_prefix(msg, "variable 'late': variable_for_two creates a variable on a "
                                      "later trace (tf.function supports only variables created "
                                      "on the first call;"));
  g_free(msg);
  g_assert_null(late_variable);
  g_assert_cmpint(ts_function_n_concrete(f), ==, 1);
  expect_str(ts_function_call_eager(f, &two, 1), "Tensor(7.0, shape=(), dtype=float32)");
  ts_tensor_unref(late_variable);
  late_variable = NULL;
  ts_function_free(f);
  ts_scope_end(s);
}

static ts_tensor *bump(ts_call *c)
{
  host_runs++;
  return ts_assign_add(ts_arg(c, 0), ts_scalar_f32(1));
}

static ts_tensor *times_ten(ts_call *c)
{
  return ts_mul(ts_arg(c, 0), ts_scalar_f32(10));
}

/* 002: "Create tf.Variables outside the Python function and modify them on
 * the inside"; 000: "you can use operations with side effects, like
 * tf.assign or tf.print normally inside tf.function" (and its
 * train_one_step(model, optimizer, x, y) is given the objects that hold
 * the variables).  A variable given as an argument is the variable in the
 * graph too: its assign ops write it, its reads see its value on each
 * call, as eagerly.  The graph captures it (a signature holds the
 * variable; another variable, or a plain tensor, traces again, naming it). */
static void test_variable_argument(void)
{
  ts_scope *s = ts_scope_begin();
  traces t = { 0 };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_TRACE), on_trace, &t);
  ts_tensor *v = ts_variable_new(ts_scalar_f32(0), "v");
  ts_tensor *w = ts_variable_new(ts_scalar_f32(100), "w");
  ts_function *f = ts_function_new("bump", bump, "var");
  ts_value av = tv(v), aw = tv(w);
  host_runs = 0;
  expect_str(ts_function_call(f, &av, 1), "Tensor(1.0, shape=(), dtype=float32)");
  expect_str(ts_function_call(f, &av, 1), "Tensor(2.0, shape=(), dtype=float32)");
  g_assert_cmpint(host_runs, ==, 1);
  g_assert_cmpstr(t.signature, ==, "(var: variable 'v' f32[])");
  expect_str(ts_function_call(f, &aw, 1), "Tensor(101.0, shape=(), dtype=float32)");
  g_assert_cmpstr(t.reason, ==, "arg 0 (var): variable 'w' f32[], traced with variable 'v' f32[]");
  expect_str(ts_function_call_eager(f, &av, 1), "Tensor(3.0, shape=(), dtype=float32)");
  expect_str(ts_function_call(f, &av, 1), "Tensor(4.0, shape=(), dtype=float32)");
  expect_str(ts_read(v), "Tensor(4.0, shape=(), dtype=float32)");
  expect_str(ts_read(w), "Tensor(101.0, shape=(), dtype=float32)");
  g_assert_cmpint(t.traces, ==, 2);

  /* a read sees the value of each call; a plain tensor is another signature */
  ts_function *g = ts_function_new("times_ten", times_ten, "x");
  expect_str(ts_function_call(g, &av, 1), "Tensor(40.0, shape=(), dtype=float32)");
  ts_assign(v, ts_scalar_f32(5));
  expect_str(ts_function_call(g, &av, 1), "Tensor(50.0, shape=(), dtype=float32)");
  ts_value plain = tv(ts_scalar_f32(2));
  expect_str(ts_function_call(g, &plain, 1), "Tensor(20.0, shape=(), dtype=float32)");
  g_assert_cmpstr(t.reason, ==, "arg 0 (x): a tensor, traced with a variable");
  expect_str(ts_function_call(g, &av, 1), "Tensor(50.0, shape=(), dtype=float32)");
  g_assert_cmpint(ts_function_trace_count(g), ==, 2);

  ts_function_free(g);
  ts_function_free(f);
  ts_tensor_unref(w);
  ts_tensor_unref(v);
  ts_listener_remove(id);
  ts_scope_end(s);
}

/* Adds the list's tensor (item 1) to its variable (item 0). */
static ts_tensor *add_to_variable(ts_call *c)
{
  const ts_value *xs = ts_call_arg_value(c, 0);
  return ts_assign_add(xs->list.items[0].tensor, xs->list.items[1].tensor);
}

/* The same in a nested structure (000's train_one_step gets the model and
 * optimizer that hold its variables): a variable in a list is the
 * variable in the graph, captured; the list's other tensors are inputs. */
static void test_variable_in_list(void)
{
  ts_scope *s = ts_scope_begin();
  traces t = { 0 };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_TRACE), on_trace, &t);
  ts_tensor *v = ts_variable_new(ts_scalar_f32(0), "v");
  ts_tensor *w = ts_variable_new(ts_scalar_f32(0), "v"); /* another, of the same name */
  ts_function *f = ts_function_new("add_to_variable", add_to_variable, "xs");
  ts_value a = LIST(tv(v), tv(ts_scalar_f32(2)));
  ts_value b = LIST(tv(v), tv(ts_scalar_f32(3)));
  expect_str(ts_function_call(f, &a, 1), "Tensor(2.0, shape=(), dtype=float32)");
  expect_str(ts_function_call(f, &b, 1), "Tensor(5.0, shape=(), dtype=float32)");
  g_assert_cmpint(t.traces, ==, 1);
  g_assert_cmpstr(t.signature, ==, "(xs: [variable 'v' f32[], f32[]])");
  ts_value c = LIST(tv(w), tv(ts_scalar_f32(4)));
  expect_str(ts_function_call(f, &c, 1), "Tensor(4.0, shape=(), dtype=float32)");
  g_assert_cmpstr(t.reason, ==, "arg 0 (xs): the list holds other variables than traced");
  expect_str(ts_read(v), "Tensor(5.0, shape=(), dtype=float32)");
  expect_str(ts_function_call(f, &a, 1), "Tensor(7.0, shape=(), dtype=float32)");
  g_assert_cmpint(t.traces, ==, 2);
  ts_function_free(f);
  ts_tensor_unref(w);
  ts_tensor_unref(v);
  ts_listener_remove(id);
  ts_scope_end(s);
}

/* ---- symbolic tensors outside their trace --------------------------------------- */

static ts_tensor *leaked; /* kept past the trace, as a Python global would */

static ts_tensor *leak(ts_call *c)
{
  ts_tensor *y = ts_neg(ts_arg(c, 0));
  ts_tensor_unref(leaked);
  leaked = ts_tensor_ref(y);
  return y;
}

static ts_tensor *init_scope_uses_arg(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *y = NULL;
  TS_INIT_SCOPE {
    y = ts_add(x, ts_scalar_f32(1)); /* eager code given the trace's placeholder */
  }
  return y ? y : x;
}

/* 000: "any Python code is only executed at trace time"; 001: "A
 * ConcreteFunction is an eager-compatible wrapper around a graph".  A
 * graph tensor is a value of the trace only: TensorFlow refuses one that
 * leaks out of the function building context ("An op outside of the
 * function building code is being passed a \"Graph\" tensor"), whether an
 * eager op, tf.init_scope code or another call is given it.  Each error
 * names the tensor (and the argument) and says how it leaked. */
static void test_leaked_graph_tensor(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("leak", leak, "x");
  ts_value one = tv(ts_scalar_f32(1));
  expect_str(ts_function_call(f, &one, 1), "Tensor(-1.0, shape=(), dtype=float32)");

  g_assert_null(ts_add(leaked, ts_scalar_f32(1))); /* an eager op */
  char *msg = take_error();
  g_assert_nonnull(strstr(msg, "tensor 'Neg:0' is a symbolic tensor of a traced graph, given to "
                              "an op that runs eagerly: it has no value outside its trace"));
  g_free(msg);

  ts_function *g = ts_function_new("other", leak, "y");
  ts_value arg = tv(leaked);
  for (int eagerly = 0; eagerly < 2; eagerly++) { /* a call, traced or eager */
    g_assert_null(eagerly ? ts_function_call_eager(g, &arg, 1) : ts_function_call(g, &arg, 1));
    msg = take_error();
    g_assert_cmpstr(msg, ==, "other: arg 0 (y) is tensor 'Neg:0', a symbolic tensor of a traced "
                             "graph: it has no value outside its trace (it leaked out of the "
                             "trace, e.g. through a global or into TS_INIT_SCOPE code)");
    g_free(msg);
  }
  g_assert_cmpint(ts_function_trace_count(g), ==, 0);
  ts_tensor_unref(leaked);
  leaked = NULL;

  /* tf.init_scope code given the trace's own tensor */
  ts_function *h = ts_function_new("init_scope_uses_arg", init_scope_uses_arg, "x");
  g_assert_null(ts_function_call(h, &one, 1));
  msg = take_error();
  g_assert_nonnull(strstr(msg, "tensor 'x:0' is a symbolic tensor of a traced graph"));
  g_free(msg);
  ts_function_free(h);
  ts_function_free(g);
  ts_function_free(f);
  ts_scope_end(s);
}

/* x * x + sum(x) */
static ts_tensor *square_plus_sum(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  return ts_add(ts_mul(x, x), ts_reduce_sum(x, TS_ALL_AXES, false));
}

/* 000: "A re-trace can also happen when tensor arguments change shape,
 * unless you specified an input_signature".  TensorFlow's
 * input_signature=[tf.TensorSpec(shape=None, dtype=tf.float32)] takes a
 * tensor of any shape, of any rank: one concrete function (printed with
 * "shape=<unknown>") serves scalars, vectors, matrices and empty tensors;
 * another dtype is still refused. */
static void test_input_signature_unknown_rank(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("square_plus_sum", square_plus_sum, "x");
  ts_spec any = { TS_F32, { .rank = TS_RANK_UNKNOWN } };
  g_assert_true(ts_function_set_input_signature(f, &any, 1));
  const struct {
    ts_tensor *x;
    const char *want;
  } calls[] = {
    { ts_scalar_f32(2), "Tensor(6.0, shape=(), dtype=float32)" },
    { ts_ones(TS_F32, TS_SHAPE(3)), "Tensor([4. 4. 4.], shape=(3,), dtype=float32)" },
    { ts_ones(TS_F32, TS_SHAPE(1, 2)), "Tensor([[3. 3.]], shape=(1, 2), dtype=float32)" },
    { ts_zeros(TS_F32, TS_SHAPE(0, 2)), "Tensor([], shape=(0, 2), dtype=float32)" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(calls); i++) {
    ts_value x = tv(calls[i].x);
    expect_str(ts_function_call(f, &x, 1), calls[i].want);
    expect_str(ts_function_call_eager(f, &x, 1), calls[i].want);
  }
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  char *text = ts_concrete_pretty_signature(ts_function_concrete(f, 0));
  g_assert_cmpstr(text, ==, "square_plus_sum(x)\n"
                            "  Args:\n"
                            "    x: float32 Tensor, shape=<unknown>\n"
                            "  Returns:\n"
                            "    float32 Tensor, shape=<unknown>");
  g_free(text);
  ts_value ints = tv(ts_ones(TS_I32, TS_SHAPE(2)));
  g_assert_null(ts_function_call(f, &ints, 1));
  char *msg = take_error();
  g_assert_cmpstr(msg, ==, "square_plus_sum: arg 0 (x) does not match the input signature: "
                           "expected f32[...], got i32[2]");
  g_free(msg);
  /* get_concrete of a spec of unknown rank, without an input signature */
  ts_function *g = ts_function_new("square_plus_sum", square_plus_sum, "x");
  ts_value spec = TS_SPEC_VALUE(TS_F32, ((ts_shape){ .rank = TS_RANK_UNKNOWN }));
  ts_concrete *cf = ts_function_get_concrete(g, &spec, 1);
  g_assert_nonnull(cf);
  ts_value m = tv(ts_ones(TS_F32, TS_SHAPE(2, 1)));
  expect_str(ts_concrete_call(cf, &m, 1), "Tensor(\n[[3.]\n [3.]], shape=(2, 1), dtype=float32)");
  ts_function_free(g);
  ts_function_free(f);
  ts_scope_end(s);
}

static ts_function *total_of_3; /* total(x), input signature f32[3] */

static ts_tensor *calls_total_of_3(ts_call *c)
{
  ts_value x = tv(ts_arg(c, 0));
  return ts_function_call(total_of_3, &x, 1);
}

/* 000: "A re-trace can also happen when tensor arguments change shape,
 * unless you specified an input_signature"; 000: "any functions called
 * from an annotated function will also run in graph mode".  The input
 * signature checks a call as TensorSpec.is_compatible_with does: a traced tensor of unknown dims (here the caller's input
 * signature f32[?]) fits the callee's f32[3] while tracing; the callee's
 * own concrete function is the signature's. */
static void test_input_signature_compatible_while_tracing(void)
{
  ts_scope *s = ts_scope_begin();
  total_of_3 = ts_function_new("total", total, "x");
  g_assert_true(ts_function_set_input_signature(total_of_3, &(ts_spec){ TS_F32, TS_SHAPE(3) }, 1));
  ts_function *outer = ts_function_new("outer", calls_total_of_3, "x");
  g_assert_true(ts_function_set_input_signature(outer, &(ts_spec){ TS_F32, TS_SHAPE(-1) }, 1));
  ts_value x = tv(ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 1, 2, 3 }));
  expect_str(ts_function_call(outer, &x, 1), "Tensor(6.0, shape=(), dtype=float32)");
  g_assert_cmpint(ts_function_n_concrete(total_of_3), ==, 1);
  g_assert_cmpstr(ts_concrete_signature(ts_function_concrete(total_of_3, 0)), ==, "(x: f32[3])");
  ts_value four = tv(ts_ones(TS_F32, TS_SHAPE(4))); /* a known dim that differs still does not fit */
  g_assert_null(ts_function_call(total_of_3, &four, 1));
  char *msg = take_error();
  g_assert_cmpstr(msg, ==, "total: arg 0 (x) does not match the input signature: expected f32[3], got f32[4]");
  g_free(msg);
  ts_function_free(outer);
  ts_function_free(total_of_3);
  ts_scope_end(s);
}

/* 001: "print(a_function.get_concrete_function(tf.TensorSpec(shape=[],
 * dtype=tf.float32)))" — a TensorSpec stands for the tensors of a
 * concrete function; a call computes on values.  A spec given to a call
 * (alone or in a list) is refused before any trace, in both modes, naming
 * the argument. */
static void test_spec_in_call(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("sum_list", sum_list, "xs");
  ts_value in_list = LIST(TS_SPEC_VALUE(TS_F32, TS_SHAPE(2)), tv(ts_ones(TS_F32, TS_SHAPE(2))));
  for (int eagerly = 0; eagerly < 2; eagerly++) {
    g_assert_null(eagerly ? ts_function_call_eager(f, &in_list, 1) : ts_function_call(f, &in_list, 1));
    char *msg = take_error();
    g_assert_cmpstr(msg, ==, "sum_list: arg 0 (xs) is a tensor spec, which has no value: a call "
                             "takes tensors (specs are for get_concrete)");
    g_free(msg);
  }
  g_assert_cmpint(ts_function_n_concrete(f), ==, 0);
  ts_function *g = ts_function_new("total", total, "x");
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(2));
  g_assert_null(ts_function_call(g, &spec, 1));
  char *msg = take_error();
  g_assert_cmpstr(msg, ==, "total: arg 0 (x) is a tensor spec, which has no value: a call takes "
                           "tensors (specs are for get_concrete)");
  g_free(msg);
  g_assert_cmpint(ts_function_n_concrete(g), ==, 0); /* no concrete function traced for nothing */
  ts_function_free(g);
  ts_function_free(f);
  ts_scope_end(s);
}

/* ---- arguments and loops beyond the guides ---------------------------------------- */

static ts_tensor *twice(ts_call *c)
{
  host_runs++;
  return ts_add(ts_arg(c, 0), ts_arg(c, 0));
}

/* Python binds a call's arguments to the function's parameters before
 * tracing: `f(x)` called as f(a, b) raises TypeError ("takes 1 positional
 * argument but 2 were given"), eagerly too, and get_concrete_function
 * alike; nothing is traced and the C code does not run. */
static void test_too_many_arguments(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("twice", twice, "x");
  ts_value a = tv(ts_scalar_f32(2));
  ts_value two[] = { a, a };
  host_runs = 0;
  for (int eagerly = 0; eagerly < 2; eagerly++) {
    g_assert_null(eagerly ? ts_function_call_eager(f, two, 2) : ts_function_call(f, two, 2));
    char *msg = take_error();
    g_assert_cmpstr(msg, ==, "twice(x) takes 1 argument but 2 were given");
    g_free(msg);
  }
  g_assert_null(ts_function_get_concrete(f, two, 2));
  char *msg = take_error();
  g_assert_cmpstr(msg, ==, "twice(x) takes 1 argument but 2 were given");
  g_free(msg);
  g_assert_cmpint(host_runs, ==, 0);
  g_assert_cmpint(ts_function_n_concrete(f), ==, 0);
  expect_str(ts_function_call(f, &a, 1), "Tensor(4.0, shape=(), dtype=float32)");
  ts_concrete *cf = ts_function_get_concrete(f, &a, 1);
  g_assert_nonnull(cf);
  g_assert_null(ts_concrete_call(cf, two, 2));
  msg = take_error();
  g_assert_cmpstr(msg, ==, "twice(x) takes 1 argument but 2 were given");
  g_free(msg);
  ts_function_free(f);

  /* Without parameter names any number is taken; a concrete function
   * still wants those it was traced for. */
  ts_function *g = ts_function_new("unnamed", twice, NULL);
  expect_str(ts_function_call(g, two, 2), "Tensor(4.0, shape=(), dtype=float32)");
  cf = ts_function_get_concrete(g, &a, 1);
  g_assert_nonnull(cf);
  g_assert_null(ts_concrete_call(cf, two, 2));
  msg = take_error();
  g_assert_cmpstr(msg, ==, "unnamed: this concrete function takes 1 argument, got 2");
  g_free(msg);
  ts_function_free(g);
  ts_scope_end(s);
}

/* The sum of the rows of x, plus 7; the loop variable r is bound only by
 * an iteration, and holds a pointer to a freed tensor before the loop. */
static ts_tensor *sum_rows_stale(ts_call *c)
{
  ts_scope *inner = ts_scope_begin();
  ts_tensor *r = ts_scalar_f32(-1);
  ts_scope_end(inner); /* r now dangles: an empty loop must not read it */
  ts_tensor *acc = ts_scalar_f32(7);
  TS_FOR (r, TS_OVER(ts_arg(c, 0)), &acc) {
    acc = ts_add(acc, ts_reduce_sum(r, TS_ALL_AXES, false));
  }
  return acc;
}

/* `for r in x:` over a tensor of no rows (or an empty tf.range) runs no
 * iteration and never binds r: the loop's variables keep their values,
 * eagerly and traced, and the loop does not read r. */
static void test_empty_loop(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("sum_rows_stale", sum_rows_stale, "x");
  for (int eagerly = 0; eagerly < 2; eagerly++) {
    ts_value none = tv(ts_tensor_new(TS_F32, TS_SHAPE(0, 3)));
    ts_value two = tv(ts_ones(TS_F32, TS_SHAPE(2, 3)));
    ts_function_set_run_eagerly(f, eagerly);
    expect_str(ts_function_call(f, &none, 1), "Tensor(7.0, shape=(), dtype=float32)");
    expect_str(ts_function_call(f, &two, 1), "Tensor(13.0, shape=(), dtype=float32)");
  }
  ts_function_free(f);
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  serial_check_install();
  g_test_add_func("/semantics/list-of-tensors", test_list_of_tensors);
  g_test_add_func("/semantics/list-too-many-tensors", test_list_too_many_tensors);
  g_test_add_func("/semantics/list-reduce-retracing", test_list_reduce_retracing);
  g_test_add_func("/semantics/list-frequent-retracing", test_list_frequent_retracing);
  g_test_add_func("/semantics/host-strings-by-value", test_host_strings_by_value);
  g_test_add_func("/semantics/none-argument", test_none_argument);
  g_test_add_func("/semantics/input-signature-get-concrete", test_input_signature_get_concrete);
  g_test_add_func("/semantics/input-signature-unknown-rank", test_input_signature_unknown_rank);
  g_test_add_func("/semantics/input-signature-compatible-while-tracing",
                  test_input_signature_compatible_while_tracing);
  g_test_add_func("/semantics/spec-in-call", test_spec_in_call);
  g_test_add_func("/semantics/variable-on-later-trace", test_variable_on_later_trace);
  g_test_add_func("/semantics/variable-argument", test_variable_argument);
  g_test_add_func("/semantics/variable-in-list", test_variable_in_list);
  g_test_add_func("/semantics/leaked-graph-tensor", test_leaked_graph_tensor);
  g_test_add_func("/semantics/too-many-arguments", test_too_many_arguments);
  g_test_add_func("/semantics/empty-loop", test_empty_loop);
  return g_test_run();
}
