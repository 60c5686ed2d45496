/* test-autograph-audit.c — AutoGraph programs beyond the guides' own,
 * each run eagerly and traced against what TensorFlow gives: jumps in
 * nested tensor loops, variables a block leaves undefined, loop variables
 * that change shape or dtype, lists filled in loops, loops over a
 * tensor's rows, host loops unrolled against tensor loops, side effects
 * in branches and loops, and how many traces a program takes. */
#include <glib.h>
#include <string.h>
#include <tracescope.h>

#include "test-quiet.h"
#include "test-serial-check.h"
#include "test-values.h"

static ts_tensor *i32(int32_t v)
{
  return ts_scalar_i32(v);
}

/* ---- the programs --------------------------------------------------------------------- */

/* total = 0
 * for i in tf.range(n):
 *   j = 0
 *   while j < n:
 *     j += 1
 *     if (i + j) % 3 == 0: continue
 *     if j > i: break
 *     if i * j > limit: return i * 100 + j
 *     total += i * j
 * return total */
static ts_tensor *nested_jumps(ts_call *c)
{
  ts_tensor *n = ts_arg(c, 0), *limit = ts_arg(c, 1), *total = i32(0), *i = NULL;
  TS_FOR (i, TS_RANGE(i32(0), n, i32(1)), &total) {
    ts_tensor *j = i32(0);
    TS_WHILE (ts_less(j, n), &j, &total) {
      j = ts_add(j, i32(1));
      TS_IF (ts_equal(ts_mod(ts_add(i, j), i32(3)), i32(0))) {
        TS_CONTINUE;
      } TS_END_IF;
      TS_IF (ts_greater(j, i)) {
        TS_BREAK;
      } TS_END_IF;
      TS_IF (ts_greater(ts_mul(i, j), limit)) {
        TS_RETURN(ts_add(ts_mul(i, i32(100)), j));
      } TS_END_IF;
      total = ts_add(total, ts_mul(i, j));
    }
  }
  return total;
}

static int64_t nested_jumps_ref(int n, int limit)
{
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    int j = 0;
    while (j < n) {
      j++;
      if ((i + j) % 3 == 0)
        continue;
      if (j > i)
        break;
      if (i * j > limit)
        return i * 100 + j;
      total += i * j;
    }
  }
  return total;
}


/* for row in m: for x in row: if x < 0: return x * 10;  s += x
 * return s */
static ts_tensor *return_in_rows(ts_call *c)
{
  ts_tensor *m = ts_arg(c, 0), *s = i32(0), *row = NULL, *x = NULL;
  TS_FOR (row, TS_OVER(m), &s) {
    TS_FOR (x, TS_OVER(row), &s) {
      TS_IF (ts_less(x, i32(0))) {
        TS_RETURN(ts_mul(x, i32(10)));
      } TS_END_IF;
      s = ts_add(s, x);
    }
  }
  return s;
}

/* for x in items:
 *   if x > 10:
 *     if x > 20: break
 *     else: continue
 *   s += x
 * return s */
static ts_tensor *break_or_continue(ts_call *c)
{
  ts_tensor *items = ts_arg(c, 0), *s = i32(0), *x = NULL;
  TS_FOR (x, TS_OVER(items), &s) {
    TS_IF (ts_greater(x, i32(10))) {
      TS_IF (ts_greater(x, i32(20))) {
        TS_BREAK;
      } TS_ELSE {
        TS_CONTINUE;
      } TS_END_IF;
    } TS_END_IF;
    s = ts_add(s, x);
  }
  return s;
}

/* i = s = 0; while i < n: i += 1; if i % 2 == 0: continue; s += i
 * return s * 1000 + i */
static ts_tensor *odd_sum(ts_call *c)
{
  ts_tensor *n = ts_arg(c, 0), *i = i32(0), *s = i32(0);
  TS_WHILE (ts_less(i, n), &i, &s) {
    i = ts_add(i, i32(1));
    TS_IF (ts_equal(ts_mod(i, i32(2)), i32(0))) {
      TS_CONTINUE;
    } TS_END_IF;
    s = ts_add(s, i);
  }
  return ts_add(ts_mul(s, i32(1000)), i);
}

/* y undefined before; if x > 0: y = 2x  (no else) */
static ts_tensor *then_only(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *y = NULL;
  TS_IF (ts_greater(x, i32(0)), &y) {
    y = ts_mul(x, i32(2));
  } TS_END_IF;
  return y;
}

/* y undefined before; if x > 0: pass else: y = 2x */
static ts_tensor *else_only(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *y = NULL;
  TS_IF (ts_greater(x, i32(0)), &y) {
  } TS_ELSE {
    y = ts_mul(x, i32(2));
  } TS_END_IF;
  return y;
}

/* y undefined before; both branches define it */
static ts_tensor *both_define(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *y = NULL;
  TS_IF (ts_greater(x, i32(0)), &y) {
    y = ts_mul(x, i32(2));
  } TS_ELSE {
    y = ts_neg(x);
  } TS_END_IF;
  return y;
}

/* y undefined before the loop: for i in tf.range(n): y = 2i */
static ts_tensor *undefined_before_loop(ts_call *c)
{
  ts_tensor *y = NULL, *i = NULL;
  TS_FOR (i, TS_RANGE(i32(0), ts_arg(c, 0), i32(1)), &y) {
    y = ts_mul(i, i32(2));
  }
  return y;
}

/* ta = TensorArray(f32, size=0, dynamic); for i in range(rows): ta = ta.write(i, 2 * m[i]) */
static ts_tensor *doubled_rows(ts_call *c)
{
  ts_tensor *m = ts_arg(c, 0), *row = NULL, *k = i32(0);
  ts_tensor *ta = ts_tensor_array(TS_F32, i32(0));
  TS_FOR (row, TS_OVER(m), &ta, &k) {
    ta = ts_tensor_array_write(ta, k, ts_mul(row, ts_scalar_f32(2)));
    k = ts_add(k, i32(1));
  }
  return ts_tensor_array_stack(ta);
}

/* the sum of the matrices of a 3-D tensor */
static ts_tensor *sum_matrices(ts_call *c)
{
  ts_tensor *t = ts_arg(c, 0), *acc = ts_zeros(TS_I32, TS_SHAPE(2, 2)), *mat = NULL;
  TS_FOR (mat, TS_OVER(t), &acc) {
    acc = ts_add(acc, mat);
  }
  return acc;
}

static int then_runs, else_runs;

/* host code and ts_print in both branches of a tensor if */
static ts_tensor *branch_effects(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(x, i32(0)), &x) {
    then_runs++;
    ts_print("then", x);
    x = ts_add(x, i32(1));
  } TS_ELSE {
    else_runs++;
    ts_print("else", x);
    x = ts_sub(x, i32(1));
  } TS_END_IF;
  return x;
}

/* a host loop of n (a host argument): unrolled */
static ts_tensor *host_unrolled(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  int64_t n = ts_arg_int(c, 1);
  for (int64_t k = 0; k < n; k++)
    x = ts_add(x, x);
  return x;
}

static ts_tensor *acc_var;

/* for i in tf.range(n): v.assign_add(i) */
static ts_tensor *assign_in_loop(ts_call *c)
{
  ts_tensor *i = NULL;
  TS_FOR (i, TS_RANGE(i32(0), ts_arg(c, 0), i32(1))) {
    ts_assign_add(acc_var, i);
  }
  return ts_read(acc_var);
}

/* x grows by concatenation while shorter than n: fine when x's length is unknown */
static ts_tensor *grow(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *n = ts_arg(c, 1);
  TS_WHILE (ts_less(ts_gather(ts_shape(x), i32(0), 0), n), &x) {
    ts_tensor *parts[] = { x, x };
    x = ts_concat(parts, 2, 0);
  }
  return x;
}

/* for i in tf.range(n): x = concat([x, x]) with a known shape: an error */
static ts_tensor *grow_in_for(ts_call *c)
{
  ts_tensor *x = ts_zeros(TS_F32, TS_SHAPE(1)), *i = NULL;
  TS_FOR (i, TS_RANGE(i32(0), ts_arg(c, 0), i32(1)), &x) {
    ts_tensor *parts[] = { x, x };
    x = ts_concat(parts, 2, 0);
  }
  return x;
}

/* for i in tf.range(n): x = x * 0.5 with x int32: dtype changes */
static ts_tensor *retype_in_for(ts_call *c)
{
  ts_tensor *x = i32(1), *i = NULL;
  TS_FOR (i, TS_RANGE(i32(0), ts_arg(c, 0), i32(1)), &x) {
    x = ts_cast(x, TS_F32);
  }
  return x;
}

static ts_function *inner_fn;
static int inner_runs;

static ts_tensor *inner(ts_call *c)
{
  inner_runs++;
  return ts_add(ts_mul(ts_arg(c, 0), i32(2)), i32(1));
}

/* x = inner(x) for i in range(n), breaking when x > limit; steps * 1000 + x */
static ts_tensor *call_in_for(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *i = NULL, *steps = i32(0);
  TS_FOR (i, TS_RANGE(i32(0), ts_arg(c, 1), i32(1)), &x, &steps) {
    ts_value a = TS_TENSOR_VALUE(x);
    x = ts_function_call(inner_fn, &a, 1);
    steps = ts_add(steps, i32(1));
    TS_IF (ts_greater(x, ts_arg(c, 2))) {
      TS_BREAK;
    } TS_END_IF;
  }
  return ts_add(ts_mul(steps, i32(1000)), x);
}

/* an unconditional break and return in tensor loops */
static ts_tensor *first_only(ts_call *c)
{
  ts_tensor *s = i32(0), *x = NULL;
  TS_FOR (x, TS_OVER(ts_arg(c, 0)), &s) {
    s = ts_add(s, x);
    TS_BREAK;
  }
  return s;
}

static ts_tensor *return_first(ts_call *c)
{
  ts_tensor *x = NULL;
  TS_FOR (x, TS_OVER(ts_arg(c, 0))) {
    TS_RETURN(ts_mul(x, i32(3)));
  }
  return i32(-1);
}

/* the loop variable after the loop */
static ts_tensor *last_index(ts_call *c)
{
  ts_tensor *i = i32(-7), *s = i32(0);
  TS_FOR (i, TS_RANGE(i32(0), ts_arg(c, 0), i32(1)), &s) {
    s = ts_add(s, i);
  }
  return ts_add(ts_mul(s, i32(100)), i);
}

/* the same with the loop variable given to a listed variable */
static ts_tensor *last_index_listed(ts_call *c)
{
  ts_tensor *i = NULL, *last = i32(-7), *s = i32(0);
  TS_FOR (i, TS_RANGE(i32(0), ts_arg(c, 0), i32(1)), &s, &last) {
    s = ts_add(s, i);
    last = i;
  }
  return ts_add(ts_mul(s, i32(100)), last);
}

/* the loop variable assigned in the body: for i in tf.range(n): i += 10; s += i
 * return s + i */
static ts_tensor *rebound_index(ts_call *c)
{
  ts_tensor *i = NULL, *s = i32(0);
  TS_FOR (i, TS_RANGE(i32(0), ts_arg(c, 0), i32(1)), &s) {
    i = ts_add(i, i32(10));
    s = ts_add(s, i);
  }
  return ts_add(s, i);
}

/* a triangle of TensorArray writes: the inner range depends on the outer index */
static ts_tensor *triangle_list(ts_call *c)
{
  ts_tensor *n = ts_arg(c, 0), *ta = ts_tensor_array(TS_I32, i32(0)), *k = i32(0);
  ts_tensor *i = NULL, *j = NULL;
  TS_FOR (i, TS_RANGE(i32(0), n, i32(1)), &ta, &k) {
    TS_FOR (j, TS_RANGE(i32(0), ts_add(i, i32(1)), i32(1)), &ta, &k) {
      ta = ts_tensor_array_write(ta, k, ts_add(ts_mul(i, i32(10)), j));
      k = ts_add(k, i32(1));
    }
  }
  return ts_tensor_array_stack(ta);
}

/* counting down with a break: for i in tf.range(n, 0, -2): if i < m: break; s += i */
static ts_tensor *countdown(ts_call *c)
{
  ts_tensor *s = i32(0), *i = NULL;
  TS_FOR (i, TS_RANGE(ts_arg(c, 0), i32(0), i32(-2)), &s) {
    TS_IF (ts_less(i, ts_arg(c, 1))) {
      TS_BREAK;
    } TS_END_IF;
    s = ts_add(s, i);
  }
  return s;
}

/* the row a break left: for row in m: if sum(row) > 5: break */
static ts_tensor *row_at_break(ts_call *c)
{
  ts_tensor *row = NULL;
  TS_FOR (row, TS_OVER(ts_arg(c, 0))) {
    TS_IF (ts_greater(ts_reduce_sum(row, TS_ALL_AXES, false), ts_scalar_f32(5))) {
      TS_BREAK;
    } TS_END_IF;
  }
  return row;
}

/* i after an inner loop, in the outer body: sum over i of (last j of range(i + 1)) */
static ts_tensor *inner_last(ts_call *c)
{
  ts_tensor *i = NULL, *j = NULL, *s = i32(0);
  TS_FOR (i, TS_RANGE(i32(0), ts_arg(c, 0), i32(1)), &s) {
    TS_FOR (j, TS_RANGE(i32(0), ts_add(i, i32(1)), i32(1))) {
      ts_print(j);
    }
    s = ts_add(s, ts_mul(j, i32(10)));
  }
  return s;
}

static ts_tensor *undefined_before_while(ts_call *c)
{
  ts_tensor *y = NULL, *i = i32(0);
  TS_WHILE (ts_less(i, ts_arg(c, 0)), &i, &y) {
    y = ts_mul(i, i32(2));
    i = ts_add(i, i32(1));
  }
  return y;
}

static ts_function *looper_fn;
static int looper_runs;
/* sum(range(x)) */
static ts_tensor *looper(ts_call *c)
{
  looper_runs++;
  ts_tensor *i = NULL, *s = i32(0);
  TS_FOR (i, TS_RANGE(i32(0), ts_arg(c, 0), i32(1)), &s) {
    s = ts_add(s, i);
  }
  return s;
}

/* while k < n: t += looper(k); k += 1 */
static ts_tensor *loop_of_loops(ts_call *c)
{
  ts_tensor *k = i32(0), *t = i32(0);
  TS_WHILE (ts_less(k, ts_arg(c, 0)), &k, &t) {
    ts_value a = TS_TENSOR_VALUE(k);
    t = ts_add(t, ts_function_call(looper_fn, &a, 1));
    k = ts_add(k, i32(1));
  }
  return t;
}

/* rows + the sums of the rows + the last row's sum */
static ts_tensor *row_sums(ts_call *c)
{
  ts_tensor *n = ts_scalar_f32(0), *last = ts_scalar_f32(0), *row = NULL;
  TS_FOR (row, TS_OVER(ts_arg(c, 0)), &n, &last) {
    last = ts_reduce_sum(row, TS_ALL_AXES, false);
    n = ts_add(n, ts_add(ts_scalar_f32(1), last));
  }
  return ts_add(n, last);
}

/* sum(tf.range(n)) */
static ts_tensor *range_to(ts_call *c)
{
  ts_tensor *s = i32(0), *i = NULL;
  TS_FOR (i, TS_RANGE(i32(0), ts_arg(c, 0), i32(1)), &s) {
    s = ts_add(s, i);
  }
  return s;
}

static ts_tensor *limit_var, *flag_var;

/* for i in tf.range(limit_var): s += i */
static ts_tensor *range_of_variable(ts_call *c)
{
  (void)c;
  ts_tensor *s = i32(0), *i = NULL;
  TS_FOR (i, TS_RANGE(i32(0), limit_var, i32(1)), &s) {
    s = ts_add(s, i);
  }
  return s;
}

/* if flag_var: x = -x */
static ts_tensor *if_variable(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (flag_var, &x) {
    x = ts_neg(x);
  } TS_END_IF;
  return x;
}

/* while flag_var: x += 1; flag_var.assign(x < 5) */
static ts_tensor *while_variable(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_WHILE (flag_var, &x) {
    x = ts_add(x, i32(1));
    ts_assign(flag_var, ts_less(x, i32(5)));
  }
  return x;
}

/* ---- helpers ------------------------------------------------------------------------------- */

/* Takes the pending error and checks that its message holds both parts. */
static void expect_error(const char *part, const char *part2)
{
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  if (!strstr(e->message, part) || (part2 && !strstr(e->message, part2)))
    g_error("unexpected error: %s", e->message);
  ts_error_free(e);
}

static void expect_str(ts_tensor *t, const char *want)
{
  if (!t)
    g_error("failed: %s", ts_error_peek() ? ts_error_peek()->message : "no error");
  char *s = ts_tensor_str(t);
  g_assert_cmpstr(s, ==, want);
  g_free(s);
}

static int count_op(const ts_graph *g, ts_op op)
{
  int n = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    n += ts_node_op(ts_graph_node(g, i)) == op;
  return n;
}

static const ts_graph *graph_of(const ts_function *f, int k)
{
  return ts_concrete_graph(ts_function_concrete(f, k));
}

/* ---- the tests ------------------------------------------------------------------------------ */

/* break, continue and return under tensor conditions in nested tensor
 * loops agree with plain C (Python) on every input, eagerly and traced. */
static void test_nested_jumps(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *f = ts_function_new("nested_jumps", nested_jumps, "n, limit");
  for (int n = 0; n < 7; n++)
    for (int limit = 0; limit < 30; limit += 7)
      for (int eager = 1; eager >= 0; eager--) {
        ts_value a[] = { TS_TENSOR_VALUE(i32(n)), TS_TENSOR_VALUE(i32(limit)) };
        g_assert_cmpint(scalar_of(call_in_mode(f, eager, a, 2)), ==, nested_jumps_ref(n, limit));
      }
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_function_free(f);

  ts_function *rows = ts_function_new("return_in_rows", return_in_rows, "m");
  ts_function *bc = ts_function_new("break_or_continue", break_or_continue, "items");
  ts_function *odd = ts_function_new("odd_sum", odd_sum, "n");
  ts_function *down = ts_function_new("countdown", countdown, "n, m");
  for (int eager = 1; eager >= 0; eager--) {
    ts_value neg = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(2, 3), (int32_t[]){ 1, 2, 3, 4, -5, 6 }));
    ts_value pos = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(2, 3), (int32_t[]){ 1, 2, 3, 4, 5, 6 }));
    g_assert_cmpint(scalar_of(call_in_mode(rows, eager, &neg, 1)), ==, -50);
    g_assert_cmpint(scalar_of(call_in_mode(rows, eager, &pos, 1)), ==, 21);
    ts_value items = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(6), (int32_t[]){ 1, 15, 2, 25, 3, 4 }));
    g_assert_cmpint(scalar_of(call_in_mode(bc, eager, &items, 1)), ==, 1 + 2);
    for (int n = 0; n < 6; n++) {
      ts_value a = TS_TENSOR_VALUE(i32(n));
      int64_t sum = 0;
      for (int i = 1; i <= n; i += 2)
        sum += i;
      g_assert_cmpint(scalar_of(call_in_mode(odd, eager, &a, 1)), ==, sum * 1000 + n);
    }
    ts_value a[] = { TS_TENSOR_VALUE(i32(10)), TS_TENSOR_VALUE(i32(5)) };
    g_assert_cmpint(scalar_of(call_in_mode(down, eager, a, 2)), ==, 10 + 8 + 6);
    ts_value b[] = { TS_TENSOR_VALUE(i32(9)), TS_TENSOR_VALUE(i32(0)) };
    g_assert_cmpint(scalar_of(call_in_mode(down, eager, b, 2)), ==, 9 + 7 + 5 + 3 + 1);
  }
  ts_function_free(rows);
  ts_function_free(bc);
  ts_function_free(odd);
  ts_function_free(down);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* After `for i in tf.range(n)` (or `for row in t`) i is, eagerly, the
 * last element (the one a break left), as in Python and in AutoGraph's
 * graph.  A traced loop does not carry its loop variable out: a use after
 * it is an error naming the loop, and a listed variable given its value
 * carries it, the same in both modes. */
static void test_loop_variable_after_loop(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *li = ts_function_new("last_index", last_index, "n");
  ts_function *ll = ts_function_new("last_index_listed", last_index_listed, "n");
  ts_function *rb = ts_function_new("row_at_break", row_at_break, "m");
  ts_function *il = ts_function_new("inner_last", inner_last, "n");
  ts_function *ri = ts_function_new("rebound_index", rebound_index, "n");
  int saved = test_quiet_begin();
  ts_value four = TS_TENSOR_VALUE(i32(4)), zero = TS_TENSOR_VALUE(i32(0));
  ts_value m = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(4, 2), (float[]){ 1, 1, 2, 2, 3, 3, 4, 4 }));
  g_assert_cmpint(scalar_of(ts_function_call_eager(li, &four, 1)), ==, 6 * 100 + 3);
  g_assert_cmpint(scalar_of(ts_function_call_eager(li, &zero, 1)), ==, -7);
  expect_str(ts_function_call_eager(rb, &m, 1), "tf.Tensor([3. 3.], shape=(2,), dtype=float32)");
  /* sum over i < 4 of 10 * (the last j of range(i + 1)) */
  g_assert_cmpint(scalar_of(ts_function_call_eager(il, &four, 1)), ==, 10 * (0 + 1 + 2 + 3));
  /* i += 10 in the body: the value the last iteration gave it */
  ts_value three = TS_TENSOR_VALUE(i32(3));
  g_assert_cmpint(scalar_of(ts_function_call_eager(ri, &three, 1)), ==, 10 + 11 + 12 + 12);
  for (int eager = 1; eager >= 0; eager--) {
    g_assert_cmpint(scalar_of(call_in_mode(ll, eager, &four, 1)), ==, 6 * 100 + 3);
    g_assert_cmpint(scalar_of(call_in_mode(ll, eager, &zero, 1)), ==, -7);
  }
  test_quiet_end(saved);

  ts_function *refused[] = { li, rb, il };
  ts_value *args[] = { &four, &m, &four };
  for (int k = 0; k < 3; k++) {
    g_assert_null(ts_function_call(refused[k], args[k], 1));
    expect_error("test-autograph-audit.c:", "the loop variable of this TS_FOR is used after the "
                                            "loop; a traced loop does not carry it out");
    g_assert_cmpint(ts_function_n_concrete(refused[k]), ==, 0);
  }
  g_assert_null(ts_function_call(ri, &three, 1));
  expect_error("test-autograph-audit.c:",
               "was made inside a TS_IF/TS_WHILE/TS_FOR block (While/body) and is used after it");
  ts_function_free(li);
  ts_function_free(ll);
  ts_function_free(rb);
  ts_function_free(il);
  ts_function_free(ri);
  ts_scope_end(scope);
}

static ts_tensor *seven(ts_call *c)
{
  (void)c;
  return i32(7);
}

/* A tf.function called in an eager loop (a training loop calling its
 * step): its first call traces it during an iteration, and the constants
 * its graph holds are the function's, not that iteration's, though a call
 * gives one back as its result. */
static void test_function_called_in_eager_loop(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *s7 = ts_function_new("seven", seven, NULL);
  ts_tensor *t = i32(0), *i = NULL;
  TS_FOR (i, TS_RANGE(i32(0), i32(3), i32(1)), &t) {
    t = ts_add(t, ts_function_call(s7, NULL, 0));
  }
  g_assert_cmpint(scalar_of(t), ==, 21);

  /* the same from an eager function, the callee's loop of no iteration
   * giving back its constant */
  looper_fn = ts_function_new("looper", looper, "x");
  ts_function *f = ts_function_new("loop_of_loops", loop_of_loops, "n");
  for (int eager = 1; eager >= 0; eager--) {
    ts_value five = TS_TENSOR_VALUE(i32(5));
    g_assert_cmpint(scalar_of(call_in_mode(f, eager, &five, 1)), ==, 0 + 0 + 1 + 3 + 6);
  }
  g_assert_cmpint(ts_function_trace_count(looper_fn), ==, 1);
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_function_free(f);
  ts_function_free(looper_fn);
  ts_function_free(s7);
  ts_scope_end(scope);
}

/* A variable one path leaves undefined: eagerly plain C (Python) runs the
 * path taken; traced, an error naming the variable and the statement,
 * as AutoGraph's "'y' must also be initialized in the else branch". */
static void test_undefined_variables(void)
{
  static const struct {
    const char *name;
    ts_fn fn;
    const char *message;
    int32_t x, eager; /* an argument whose path defines y, and y */
  } cases[] = {
    { "then_only", then_only,
      "TS_IF: y is undefined (NULL) at the end of the else branch but defined in the then branch",
      3, 6 },
    { "else_only", else_only,
      "TS_IF: y is undefined (NULL) at the end of the then branch but defined in the else branch",
      -3, -6 },
    { "undefined_before_loop", undefined_before_loop,
      "TS_FOR: y is undefined (NULL) before the loop; give it a value before the TS_FOR", 3, 4 },
    { "undefined_before_while", undefined_before_while,
      "TS_WHILE: y is undefined (NULL) before the loop; give it a value before the TS_WHILE", 3, 4 },
  };
  ts_scope *scope = ts_scope_begin();
  ts_function *both = ts_function_new("both_define", both_define, "x");
  for (int eager = 1; eager >= 0; eager--) {
    ts_value a = TS_TENSOR_VALUE(i32(3)), b = TS_TENSOR_VALUE(i32(-3));
    g_assert_cmpint(scalar_of(call_in_mode(both, eager, &a, 1)), ==, 6);
    g_assert_cmpint(scalar_of(call_in_mode(both, eager, &b, 1)), ==, 3);
  }
  ts_function_free(both);
  for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
    ts_function *f = ts_function_new(cases[k].name, cases[k].fn, "x");
    ts_value a = TS_TENSOR_VALUE(i32(cases[k].x));
    g_assert_cmpint(scalar_of(ts_function_call_eager(f, &a, 1)), ==, cases[k].eager);
    g_assert_null(ts_function_call(f, &a, 1));
    expect_error("test-autograph-audit.c:", cases[k].message);
    g_assert_cmpint(ts_function_n_concrete(f), ==, 0);
    ts_function_free(f);
  }
  ts_scope_end(scope);
}

/* A loop variable keeps its dtype and its known dims (AutoGraph's "'x'
 * has shape (1,) before the loop, but shape (2,) after one iteration");
 * a dim unknown before the loop (an input signature's None) may change.
 * Eagerly the loop is plain C and runs. */
static void test_loop_variable_shape_and_dtype(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *g = ts_function_new("grow", grow, "x, n");
  ts_function_set_input_signature(g, (ts_spec[]){ { TS_F32, TS_SHAPE(-1) }, { TS_I32, TS_SCALAR_SHAPE } }, 2);
  for (int eager = 1; eager >= 0; eager--) {
    ts_value a[] = { TS_TENSOR_VALUE(ts_zeros(TS_F32, TS_SHAPE(3))), TS_TENSOR_VALUE(i32(10)) };
    ts_tensor *r = call_in_mode(g, eager, a, 2);
    g_assert_nonnull(r);
    g_assert_cmpint(ts_tensor_size(r), ==, 12);
  }
  ts_function_free(g);

  static const struct {
    const char *name;
    ts_fn fn;
    const char *message;
    int64_t eager_size;
  } cases[] = {
    { "grow_in_for", grow_in_for,
      "TS_FOR: x has shape (1,) before the loop, but shape (2,) after one iteration", 8 },
    { "retype_in_for", retype_in_for,
      "TS_FOR: x has dtype int32 before the loop, but dtype float32 after one iteration", 1 },
  };
  for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
    ts_function *f = ts_function_new(cases[k].name, cases[k].fn, "n");
    ts_value three = TS_TENSOR_VALUE(i32(3));
    ts_tensor *r = ts_function_call_eager(f, &three, 1);
    g_assert_nonnull(r);
    g_assert_cmpint(ts_tensor_size(r), ==, cases[k].eager_size);
    g_assert_null(ts_function_call(f, &three, 1));
    expect_error("test-autograph-audit.c:", cases[k].message);
    ts_function_free(f);
  }
  ts_scope_end(scope);
}

/* TensorArrays filled in tensor loops: stacked, (rows, ...) eagerly and
 * (?, ...) in the graph, as a TensorArray written in a tf.while_loop. */
static void test_lists_in_loops(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *dr = ts_function_new("doubled_rows", doubled_rows, "m");
  ts_function *tl = ts_function_new("triangle_list", triangle_list, "n");
  ts_function *sm = ts_function_new("sum_matrices", sum_matrices, "t");
  for (int eager = 1; eager >= 0; eager--) {
    ts_value m = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(3, 2), (float[]){ 1, 2, 3, 4, 5, 6 }));
    expect_str(call_in_mode(dr, eager, &m, 1), "tf.Tensor(\n[[ 2.  4.]\n [ 6.  8.]\n [10. 12.]], shape=(3, 2), dtype=float32)");
    ts_value three = TS_TENSOR_VALUE(i32(3));
    expect_str(call_in_mode(tl, eager, &three, 1), "tf.Tensor([ 0 10 11 20 21 22], shape=(6,), dtype=int32)");
    /* a 3-D tensor's first dimension: its matrices */
    ts_value t = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(3, 2, 2),
                                             (int32_t[]){ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }));
    expect_str(call_in_mode(sm, eager, &t, 1), "tf.Tensor(\n[[15 18]\n [21 24]], shape=(2, 2), dtype=int32)");
  }
  ts_function_free(sm);
  const ts_graph *g = graph_of(dr, 0);
  ts_port out = ts_graph_output(g, 0);
  g_assert_true(ts_shape_equal(ts_node_output_shape(ts_graph_node(g, out.node), out.index),
                               TS_SHAPE(-1, 2)));
  /* No row written: the graph knows the element shape from the trace, an
   * eager list written nowhere does not (TensorFlow's too) */
  ts_value none = TS_TENSOR_VALUE(ts_zeros(TS_F32, TS_SHAPE(0, 2)));
  expect_str(ts_function_call(dr, &none, 1), "tf.Tensor([], shape=(0, 2), dtype=float32)");
  expect_str(ts_function_call_eager(dr, &none, 1), "tf.Tensor([], shape=(0,), dtype=float32)");
  g_assert_cmpint(ts_function_trace_count(dr), ==, 2);
  ts_function_free(dr);
  ts_function_free(tl);
  ts_scope_end(scope);
}

/* A host loop (a C `for` on a host argument) unrolls at trace time, one
 * trace per value, as a Python `for k in range(n)`; a TS_FOR, even over
 * constants, is one While node. */
static void test_host_loop_unrolled(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *f = ts_function_new("host_unrolled", host_unrolled, "x, n");
  for (int eager = 1; eager >= 0; eager--) {
    ts_value a[] = { TS_TENSOR_VALUE(i32(3)), TS_INT_VALUE(3) };
    g_assert_cmpint(scalar_of(call_in_mode(f, eager, a, 2)), ==, 24);
    ts_value b[] = { TS_TENSOR_VALUE(i32(1)), TS_INT_VALUE(3) };
    g_assert_cmpint(scalar_of(call_in_mode(f, eager, b, 2)), ==, 8);
    ts_value c[] = { TS_TENSOR_VALUE(i32(1)), TS_INT_VALUE(0) };
    g_assert_cmpint(scalar_of(call_in_mode(f, eager, c, 2)), ==, 1);
  }
  g_assert_cmpint(ts_function_trace_count(f), ==, 2);
  g_assert_cmpint(count_op(graph_of(f, 0), TS_OP_WHILE), ==, 0);
  g_assert_cmpint(count_op(graph_of(f, 0), TS_OP_ADD), ==, 3);
  g_assert_cmpint(count_op(graph_of(f, 1), TS_OP_ADD), ==, 0);
  ts_function_free(f);

  ts_function *t = ts_function_new("triangle_list", triangle_list, "n");
  ts_value n = TS_TENSOR_VALUE(i32(2));
  g_assert_nonnull(ts_function_call(t, &n, 1));
  g_assert_cmpint(count_op(graph_of(t, 0), TS_OP_WHILE), ==, 1); /* the inner one is in its body */
  ts_function_free(t);
  ts_scope_end(scope);
}

static GPtrArray *printed;

static void on_print(const ts_event *ev, void *user_data)
{
  (void)user_data;
  g_ptr_array_add(printed, g_strdup(ev->print.text));
}

static char *printed_text(void)
{
  g_ptr_array_add(printed, NULL);
  char *text = g_strjoinv("|", (char **)printed->pdata);
  g_ptr_array_set_size(printed, 0);
  return text;
}

/* Host code in both branches of a tensor if runs once while tracing (both
 * branches are traced), never again; tf.print in a branch prints on each
 * call whose condition picks it.  Eagerly host code runs on the branch taken. */
static void test_side_effects_in_branches(void)
{
  ts_scope *scope = ts_scope_begin();
  printed = g_ptr_array_new_with_free_func(g_free);
  int listener = ts_listener_add(TS_EVENT_MASK(TS_EVENT_PRINT), on_print, NULL);
  ts_function *f = ts_function_new("branch_effects", branch_effects, "x");
  int saved = test_quiet_begin();
  for (int eager = 1; eager >= 0; eager--) {
    then_runs = else_runs = 0;
    ts_value pos = TS_TENSOR_VALUE(i32(3)), neg = TS_TENSOR_VALUE(i32(-3));
    g_assert_cmpint(scalar_of(call_in_mode(f, eager, &pos, 1)), ==, 4);
    g_assert_cmpint(scalar_of(call_in_mode(f, eager, &neg, 1)), ==, -4);
    g_assert_cmpint(scalar_of(call_in_mode(f, eager, &pos, 1)), ==, 4);
    g_assert_cmpint(then_runs, ==, eager ? 2 : 1);
    g_assert_cmpint(else_runs, ==, 1);
    char *text = printed_text();
    g_assert_cmpstr(text, ==, "then 3|else -3|then 3");
    g_free(text);
  }
  test_quiet_end(saved);
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_function_free(f);
  ts_listener_remove(listener);
  g_ptr_array_unref(printed);
  ts_scope_end(scope);
}

/* A tf.function called in a traced loop body with a break after it: it is
 * traced once, on its own, and its graph copied into the loop's body. */
static void test_function_in_loop_body(void)
{
  ts_scope *scope = ts_scope_begin();
  inner_fn = ts_function_new("inner", inner, "x");
  ts_function *f = ts_function_new("call_in_for", call_in_for, "x, n, limit");
  for (int eager = 1; eager >= 0; eager--) {
    inner_runs = 0;
    /* 1 -> 3 -> 7 -> 15 -> 31 > 20 */
    ts_value a[] = { TS_TENSOR_VALUE(i32(1)), TS_TENSOR_VALUE(i32(10)), TS_TENSOR_VALUE(i32(20)) };
    g_assert_cmpint(scalar_of(call_in_mode(f, eager, a, 3)), ==, 4 * 1000 + 31);
    ts_value b[] = { TS_TENSOR_VALUE(i32(1)), TS_TENSOR_VALUE(i32(2)), TS_TENSOR_VALUE(i32(20)) };
    g_assert_cmpint(scalar_of(call_in_mode(f, eager, b, 3)), ==, 2 * 1000 + 7);
    /* the eager run traced inner on its first call; the graph's reuses it */
    g_assert_cmpint(inner_runs, ==, eager ? 1 : 0);
  }
  g_assert_cmpint(ts_function_trace_count(inner_fn), ==, 1);
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_function_free(f);
  ts_function_free(inner_fn);

  /* an unconditional break and return in a tensor loop: one iteration */
  ts_function *fo = ts_function_new("first_only", first_only, "x");
  ts_function *rf = ts_function_new("return_first", return_first, "x");
  for (int eager = 1; eager >= 0; eager--) {
    ts_value a = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 5, 6, 7 }));
    g_assert_cmpint(scalar_of(call_in_mode(fo, eager, &a, 1)), ==, 5);
    g_assert_cmpint(scalar_of(call_in_mode(rf, eager, &a, 1)), ==, 15);
    ts_value z = TS_TENSOR_VALUE(ts_zeros(TS_I32, TS_SHAPE(0)));
    g_assert_cmpint(scalar_of(call_in_mode(fo, eager, &z, 1)), ==, 0);
    g_assert_cmpint(scalar_of(call_in_mode(rf, eager, &z, 1)), ==, -1);
  }
  ts_function_free(fo);
  ts_function_free(rf);

  /* v.assign_add(i) in a tensor loop runs on every call */
  for (int eager = 1; eager >= 0; eager--) {
    acc_var = ts_variable_new(i32(0), "acc");
    ts_function *al = ts_function_new("assign_in_loop", assign_in_loop, "n");
    ts_value four = TS_TENSOR_VALUE(i32(4));
    g_assert_cmpint(scalar_of(call_in_mode(al, eager, &four, 1)), ==, 6);
    g_assert_cmpint(scalar_of(call_in_mode(al, eager, &four, 1)), ==, 12);
    ts_function_free(al);
    ts_tensor_unref(acc_var);
  }
  ts_scope_end(scope);
}

/* `for row in t` where t's rank is unknown while tracing (an input
 * signature's TensorSpec(shape=None)): rows of unknown shape, counted when
 * the graph runs; a scalar then fails there, at the TS_FOR's line.  The
 * same for `tf.range(n)`: n must be a scalar when the graph runs. */
static void test_loop_over_unknown_rank(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *f = ts_function_new("row_sums", row_sums, "x");
  ts_function_set_input_signature(f, (ts_spec[]){ { TS_F32, { .rank = TS_RANK_UNKNOWN } } }, 1);
  for (int eager = 1; eager >= 0; eager--) {
    ts_value m = TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(3, 2)));
    expect_str(call_in_mode(f, eager, &m, 1), "tf.Tensor(11.0, shape=(), dtype=float32)");
    ts_value v = TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(4)));
    expect_str(call_in_mode(f, eager, &v, 1), "tf.Tensor(9.0, shape=(), dtype=float32)");
    ts_value cube = TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(2, 2, 2)));
    expect_str(call_in_mode(f, eager, &cube, 1), "tf.Tensor(14.0, shape=(), dtype=float32)");
    ts_value scalar = TS_TENSOR_VALUE(ts_scalar_f32(2));
    g_assert_null(call_in_mode(f, eager, &scalar, 1));
    expect_error("test-autograph-audit.c:", eager ? "TS_FOR: cannot iterate over a scalar tensor (f32[])"
                                                  : "Gather: indices[0] = 0 is not in [0, 0)");
  }
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  ts_function_free(f);

  /* tf.range(n) with n's rank unknown: a scalar when the graph runs */
  ts_function *r = ts_function_new("range_to", range_to, "n");
  ts_function_set_input_signature(r, (ts_spec[]){ { TS_I32, { .rank = TS_RANK_UNKNOWN } } }, 1);
  for (int eager = 1; eager >= 0; eager--) {
    ts_value four = TS_TENSOR_VALUE(i32(4));
    g_assert_cmpint(scalar_of(call_in_mode(r, eager, &four, 1)), ==, 0 + 1 + 2 + 3);
    ts_value vector = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(1), (int32_t[]){ 4 }));
    g_assert_null(call_in_mode(r, eager, &vector, 1));
    expect_error("test-autograph-audit.c:", eager ? "TS_RANGE limit must be a numeric scalar, got i32[1]"
                                                  : "TS_RANGE limit must be a scalar; its rank is");
  }
  g_assert_cmpint(ts_function_trace_count(r), ==, 1);
  ts_function_free(r);
  ts_scope_end(scope);
}

/* A tf.Variable as a condition or a range bound (`if v:`, `while v:`,
 * `tf.range(v)`) is read when the graph runs, on each call, as eagerly:
 * not its value while tracing. */
static void test_variable_conditions(void)
{
  ts_scope *scope = ts_scope_begin();
  for (int eager = 1; eager >= 0; eager--) {
    limit_var = ts_variable_new(i32(3), "limit");
    flag_var = ts_variable_new(ts_scalar_bool(true), "flag");
    ts_function *r = ts_function_new("range_of_variable", range_of_variable, NULL);
    ts_function *i = ts_function_new("if_variable", if_variable, "x");
    ts_function *w = ts_function_new("while_variable", while_variable, "x");
    ts_function_set_run_eagerly(r, eager);
    ts_function_set_run_eagerly(i, eager);
    ts_function_set_run_eagerly(w, eager);
    g_assert_cmpint(scalar_of(ts_function_call(r, NULL, 0)), ==, 0 + 1 + 2);
    g_assert_nonnull(ts_assign(limit_var, i32(5)));
    g_assert_cmpint(scalar_of(ts_function_call(r, NULL, 0)), ==, 0 + 1 + 2 + 3 + 4);
    ts_value seven = TS_TENSOR_VALUE(i32(7)), zero = TS_TENSOR_VALUE(i32(0));
    g_assert_cmpint(scalar_of(ts_function_call(i, &seven, 1)), ==, -7);
    g_assert_nonnull(ts_assign(flag_var, ts_scalar_bool(false)));
    g_assert_cmpint(scalar_of(ts_function_call(i, &seven, 1)), ==, 7);
    g_assert_cmpint(scalar_of(ts_function_call(w, &zero, 1)), ==, 0);
    g_assert_nonnull(ts_assign(flag_var, ts_scalar_bool(true)));
    g_assert_cmpint(scalar_of(ts_function_call(w, &zero, 1)), ==, 5);
    g_assert_false(ts_tensor_get_i64(flag_var, 0));
    g_assert_cmpint(ts_function_trace_count(r), ==, eager ? 0 : 1);
    g_assert_cmpint(ts_function_trace_count(i), ==, eager ? 0 : 1);
    g_assert_cmpint(ts_function_trace_count(w), ==, eager ? 0 : 1);
    ts_function_free(r);
    ts_function_free(i);
    ts_function_free(w);
    ts_tensor_unref(limit_var);
    ts_tensor_unref(flag_var);
  }
  ts_scope_end(scope);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  serial_check_install();
  g_test_add_func("/autograph-audit/nested-jumps", test_nested_jumps);
  g_test_add_func("/autograph-audit/loop-variable-after-loop", test_loop_variable_after_loop);
  g_test_add_func("/autograph-audit/function-called-in-eager-loop",
                  test_function_called_in_eager_loop);
  g_test_add_func("/autograph-audit/loop-over-unknown-rank", test_loop_over_unknown_rank);
  g_test_add_func("/autograph-audit/variable-conditions", test_variable_conditions);
  g_test_add_func("/autograph-audit/undefined-variables", test_undefined_variables);
  g_test_add_func("/autograph-audit/loop-variable-shape-and-dtype",
                  test_loop_variable_shape_and_dtype);
  g_test_add_func("/autograph-audit/lists-in-loops", test_lists_in_loops);
  g_test_add_func("/autograph-audit/host-loop-unrolled", test_host_loop_unrolled);
  g_test_add_func("/autograph-audit/side-effects-in-branches", test_side_effects_in_branches);
  g_test_add_func("/autograph-audit/function-in-loop-body", test_function_in_loop_body);
  return g_test_run();
}
