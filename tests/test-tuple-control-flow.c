/* test-tuple-control-flow.c — a tuple returned from inside traced control
 * flow, as AutoGraph's `return x, x * 2` under a tensor `if`, `for` or
 * `while`: each tensor merged as a single return value is, graph and eager
 * agreeing, and the errors of returns whose structure or dtypes differ. */
#include <glib.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "test-values.h"

static ts_tensor *pos(ts_tensor *x)
{
  return ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0));
}

/* if sum(x) > 0: return x, x * 2 — else return -x, x * 3 */
static ts_tensor *branches(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (pos(x)) {
    TS_RETURN(ts_tuple(x, ts_mul(x, ts_scalar_f32(2))));
  } TS_END_IF;
  return ts_tuple(ts_neg(x), ts_mul(x, ts_scalar_f32(3)));
}

/* the same with both returns inside the TS_IF */
static ts_tensor *both_inside(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (pos(x)) {
    TS_RETURN(ts_tuple(x, ts_mul(x, ts_scalar_f32(2))));
  } TS_ELSE {
    TS_RETURN(ts_tuple(ts_neg(x), ts_mul(x, ts_scalar_f32(3))));
  } TS_END_IF;
  return NULL;
}

/* only the else branch returns (its tensors' slots are added after the
 * then branch ended): if sum(x) > 0: y = x * 2 — else return -x, x * 3;
 * then return y, x */
static ts_tensor *else_returns(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *y = x;
  TS_IF (pos(x), &y) {
    y = ts_mul(x, ts_scalar_f32(2));
  } TS_ELSE {
    TS_RETURN(ts_tuple(ts_neg(x), ts_mul(x, ts_scalar_f32(3))));
  } TS_END_IF;
  return ts_tuple(y, x);
}

/* a tuple returned from an If nested in another, inside a loop: for i in
 * range(3): if i > 0: if sum(x) > 0: return x * i, -x — x += 1; after: (x, x) */
static ts_tensor *nested_return(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *i = NULL;
  TS_FOR (i, TS_RANGE(ts_scalar_i32(0), ts_scalar_i32(3), ts_scalar_i32(1)), &x) {
    TS_IF (ts_greater(i, ts_scalar_i32(0))) {
      TS_IF (pos(x)) {
        TS_RETURN(ts_tuple(ts_mul(x, ts_cast(i, TS_F32)), ts_neg(x)));
      } TS_END_IF;
    } TS_END_IF;
    x = ts_add(x, ts_scalar_f32(1));
  }
  return ts_tuple(x, x);
}

/* Calls f on x in graph and eager mode: both give (a, b). */
static void assert_pair(ts_function *f, ts_tensor *x, const double *a, const double *b, int n)
{
  ts_value v = tv(x);
  ts_tensor *out[3] = { NULL };
  g_assert_cmpint(ts_function_call_n(f, &v, 1, out, 3, NULL), ==, 2);
  assert_no_error();
  assert_values(out[0], a, n);
  assert_values(out[1], b, n);
  g_assert_true(ts_concrete_returns_tuple(ts_function_concrete(f, 0)));
  memset(out, 0, sizeof out);
  g_assert_cmpint(ts_function_call_eager_n(f, &v, 1, out, 3, NULL), ==, 2);
  assert_no_error();
  assert_values(out[0], a, n);
  assert_values(out[1], b, n);
}

static void test_if(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *fns[3] = { ts_function_new("branches", branches, "x"),
                          ts_function_new("both_inside", both_inside, "x"),
                          ts_function_new("else_returns", else_returns, "x") };
  /* x = (1, 2): (x, x * 2), but else_returns' (y, x) is (x * 2, x) */
  const double x1[] = { 1, 2 }, x2[] = { 2, 4 };
  for (int i = 0; i < 3; i++) {
    bool swapped = fns[i] == fns[2];
    assert_pair(fns[i], f32s(2, (const float[]){ 1, 2 }), swapped ? x2 : x1, swapped ? x1 : x2, 2);
    assert_pair(fns[i], f32s(2, (const float[]){ -1, -2 }), (const double[]){ 1, 2 },
                (const double[]){ -3, -6 }, 2);
    g_assert_cmpint(ts_function_trace_count(fns[i]), ==, 1); /* one graph, both directions */
    g_assert_cmpint(ts_concrete_n_results(ts_function_concrete(fns[i], 0)), ==, 2);
    ts_function_free(fns[i]);
  }
  ts_scope_end(s);
}

static void test_nested(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("nested_return", nested_return, "x");
  /* x = 1: i = 1 returns (2 * 1, -2) */
  assert_pair(f, f32s(1, (const float[]){ 1 }), (const double[]){ 2 }, (const double[]){ -2 }, 1);
  /* x = -5: -4, -3 at i = 1, 2 stay negative: the loop ends, (-2, -2) */
  assert_pair(f, f32s(1, (const float[]){ -5 }), (const double[]){ -2 }, (const double[]){ -2 }, 1);
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_function_free(f);
  ts_scope_end(s);
}

/* for i in range(4): if i == stop: return x * i, acc — acc += x; after: (-x, acc) */
static ts_tensor *loop_return(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *acc = ts_zeros_like(x), *i = NULL;
  TS_FOR (i, TS_RANGE(ts_scalar_i32(0), ts_scalar_i32(4), ts_scalar_i32(1)), &acc) {
    TS_IF (ts_equal(i, ts_arg(c, 1))) {
      TS_RETURN(ts_tuple(ts_mul(x, ts_cast(i, TS_F32)), acc));
    } TS_END_IF;
    acc = ts_add(acc, x);
  }
  return ts_tuple(ts_neg(x), acc);
}

/* while x < 10: x *= 2, steps += 1; if x == 8: return x, steps — the loop stops */
static ts_tensor *while_return(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *steps = ts_scalar_i32(0);
  TS_WHILE (ts_less(x, ts_scalar_f32(10)), &x, &steps) {
    x = ts_mul(x, ts_scalar_f32(2));
    steps = ts_add(steps, ts_scalar_i32(1));
    TS_IF (ts_equal(x, ts_scalar_f32(8))) {
      TS_RETURN(ts_tuple(x, steps));
    } TS_END_IF;
  }
  return ts_tuple(ts_neg(x), steps);
}

/* f's two results in graph mode (g) and eagerly (e) */
static void call_both(ts_function *f, const ts_value *args, int n_args, ts_tensor **g,
                      ts_tensor **e)
{
  g_assert_cmpint(ts_function_call_n(f, args, n_args, g, 2, NULL), ==, 2);
  assert_no_error();
  g_assert_cmpint(ts_function_call_eager_n(f, args, n_args, e, 2, NULL), ==, 2);
  assert_no_error();
}

static void test_loops(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("loop_return", loop_return, "x, stop");
  ts_tensor *g[2], *e[2];
  /* returns at i == 2 with acc = 2x; with stop 9 never: the tuple after the loop */
  ts_value args[2] = { tv(f32s(2, (const float[]){ 1, 3 })), tv(ts_scalar_i32(2)) };
  call_both(f, args, 2, g, e);
  for (int k = 0; k < 2; k++) {
    assert_values(k ? e[0] : g[0], (const double[]){ 2, 6 }, 2);
    assert_values(k ? e[1] : g[1], (const double[]){ 2, 6 }, 2);
  }
  args[1] = tv(ts_scalar_i32(9));
  call_both(f, args, 2, g, e);
  for (int k = 0; k < 2; k++) {
    assert_values(k ? e[0] : g[0], (const double[]){ -1, -3 }, 2);
    assert_values(k ? e[1] : g[1], (const double[]){ 4, 12 }, 2);
  }
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_function_free(f);

  f = ts_function_new("while_return", while_return, "x");
  ts_value v = tv(ts_scalar_f32(1)); /* 2, 4, 8: returns (8, 3) */
  call_both(f, &v, 1, g, e);
  for (int k = 0; k < 2; k++) {
    assert_values(k ? e[0] : g[0], (const double[]){ 8 }, 1);
    assert_values(k ? e[1] : g[1], (const double[]){ 3 }, 1);
    g_assert_cmpint(ts_tensor_dtype(k ? e[1] : g[1]), ==, TS_I32);
  }
  v = tv(ts_scalar_f32(3)); /* 6, 12: the loop ends, (-12, 2) */
  call_both(f, &v, 1, g, e);
  for (int k = 0; k < 2; k++) {
    assert_values(k ? e[0] : g[0], (const double[]){ -12 }, 1);
    assert_values(k ? e[1] : g[1], (const double[]){ 2 }, 1);
  }
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_function_free(f);
  ts_scope_end(s);
}

/* Shapes that differ between the paths relax: the item's dim is unknown. */
static ts_tensor *shapes_differ(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (pos(x)) {
    TS_RETURN(ts_tuple(x, ts_concat(((ts_tensor *[]){ x, x }), 2, 0)));
  } TS_END_IF;
  return ts_tuple(x, x);
}

static void test_shapes_relax(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("shapes_differ", shapes_differ, "x");
  ts_value v = tv(f32s(2, (const float[]){ 1, 2 }));
  ts_tensor *out[2];
  g_assert_cmpint(ts_function_call_n(f, &v, 1, out, 2, NULL), ==, 2);
  assert_no_error();
  assert_values(out[1], (const double[]){ 1, 2, 1, 2 }, 4);
  char *sig = ts_concrete_pretty_signature(ts_function_concrete(f, 0));
  g_test_message("%s", sig);
  g_assert_nonnull(strstr(sig, "<1>: float32 Tensor, shape=(2,)"));
  g_assert_nonnull(strstr(sig, "<2>: float32 Tensor, shape=(None,)"));
  g_free(sig);
  ts_function_free(f);
  ts_scope_end(s);
}

/* ---- mismatches: one structure, and one dtype per tensor, on every path ---- */

static ts_tensor *tuple_then_tensor(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (pos(x)) {
    TS_RETURN(ts_tuple(x, x));
  } TS_END_IF;
  return x;
}

static ts_tensor *tensor_then_tuple(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (pos(x)) {
    TS_RETURN(x);
  } TS_END_IF;
  return ts_tuple(ts_neg(x), x);
}

static ts_tensor *lengths_differ(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (pos(x)) {
    TS_RETURN(ts_tuple(x, x));
  } TS_ELSE {
    TS_RETURN(ts_tuple(x, x, x));
  } TS_END_IF;
  return NULL;
}

static ts_tensor *dtypes_differ(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (pos(x)) {
    TS_RETURN(ts_tuple(x, x));
  } TS_END_IF;
  return ts_tuple(x, ts_cast(x, TS_I32));
}

/* Tracing f fails with an error holding every one of parts. */
static void expect_failure(const char *name, ts_fn fn, const char *const *parts)
{
  ts_function *f = ts_function_new(name, fn, "x");
  ts_value v = tv(f32s(2, (const float[]){ 1, 2 }));
  ts_tensor *out[3];
  g_assert_cmpint(ts_function_call_n(f, &v, 1, out, 3, NULL), ==, -1);
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  for (int i = 0; parts[i]; i++)
    if (!strstr(e->message, parts[i]))
      g_error("%s: '%s' lacks '%s'", name, e->message, parts[i]);
  ts_error_free(e);
  ts_function_free(f);
}

static void test_mismatches(void)
{
  ts_scope *s = ts_scope_begin();
  expect_failure("tuple_then_tensor", tuple_then_tensor,
                 (const char *[]){ "tuple_then_tensor: returns a tuple of 2 tensors at line ",
                                   "but one tensor at its end", "same structure", NULL });
  expect_failure("tensor_then_tuple", tensor_then_tuple,
                 (const char *[]){ "tensor_then_tuple: returns one tensor at line ",
                                   "but a tuple of 2 tensors at its end", NULL });
  expect_failure("lengths_differ", lengths_differ,
                 (const char *[]){ "lengths_differ: returns a tuple of 2 tensors at line ",
                                   "but a tuple of 3 tensors at line ", NULL });
  expect_failure("dtypes_differ", dtypes_differ,
                 (const char *[]){ "item 1 of dtypes_differ's returned tuple has dtype int32",
                                   "float32", NULL });
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/tuple-cf/if", test_if);
  g_test_add_func("/tuple-cf/loops", test_loops);
  g_test_add_func("/tuple-cf/nested", test_nested);
  g_test_add_func("/tuple-cf/shapes-relax", test_shapes_relax);
  g_test_add_func("/tuple-cf/mismatches", test_mismatches);
  return g_test_run();
}
