/* test-control-flow.c — AutoGraph for C: TS_IF / TS_ELSE / TS_END_IF,
 * TS_WHILE, TS_FOR and the functional ts_cond / ts_while_loop, eagerly and
 * traced into If and While nodes, with the errors they give. */
#include <fcntl.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tracescope.h>

#include "test-quiet.h"
#include "test-serial-check.h"
#include "test-values.h"

/* ---- the programs --------------------------------------------------------------------- */

/* The guide's square_if_positive: x * x if x > 0 else 0. */
static ts_tensor *square_if_positive(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(x, ts_scalar_i32(0)), &x) {
    x = ts_mul(x, x);
  } TS_ELSE {
    x = ts_zeros_like(x);
  } TS_END_IF;
  return x;
}

/* |x| without an else branch. */
static ts_tensor *absolute(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_less(x, ts_scalar_i32(0)), &x) {
    x = ts_neg(x);
  } TS_END_IF;
  return x;
}

/* sign(x) with a TS_IF nested in the else branch; y is a host constant
 * before the statement. */
static ts_tensor *sign(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *y = ts_scalar_i32(0);
  TS_IF (ts_greater(x, ts_scalar_i32(0)), &y) {
    y = ts_scalar_i32(1);
  } TS_ELSE {
    TS_IF (ts_less(x, ts_scalar_i32(0)), &y) {
      y = ts_scalar_i32(-1);
    } TS_END_IF;
  } TS_END_IF;
  return y;
}

/* The guide's sum_even, with TS_FOR over the items and TS_IF. */
static ts_tensor *sum_even(ts_call *c)
{
  ts_tensor *items = ts_arg(c, 0), *s = ts_scalar_i32(0), *item = NULL;
  TS_FOR (item, TS_OVER(items), &s) {
    TS_IF (ts_equal(ts_mod(item, ts_scalar_i32(2)), ts_scalar_i32(0)), &s) {
      s = ts_add(s, item);
    } TS_END_IF;
  }
  return s;
}

/* The sum of the rows of a matrix. */
static ts_tensor *sum_rows(ts_call *c)
{
  ts_tensor *m = ts_arg(c, 0), *total = ts_zeros(TS_I32, TS_SHAPE(2)), *row = NULL;
  TS_FOR (row, TS_OVER(m), &total) {
    total = ts_add(total, row);
  }
  return total;
}

/* sum(range(start, limit, delta)) */
static ts_tensor *range_sum(ts_call *c)
{
  ts_tensor *acc = ts_scalar_i32(0), *i = NULL;
  TS_FOR (i, TS_RANGE(ts_arg(c, 0), ts_arg(c, 1), ts_arg(c, 2)), &acc) {
    acc = ts_add(acc, i);
  }
  return acc;
}

/* Iterations * 10^6 + the sum of the values of range(start, limit, delta), in i64. */
static ts_tensor *range_iterations(ts_call *c)
{
  ts_tensor *n = ts_scalar_i64(0), *sum = ts_scalar_i64(0), *i = NULL;
  TS_FOR (i, TS_RANGE(ts_arg(c, 0), ts_arg(c, 1), ts_arg(c, 2)), &n, &sum) {
    n = ts_add(n, ts_scalar_i64(1));
    sum = ts_add(sum, ts_cast(i, TS_I64));
  }
  return ts_add(ts_mul(n, ts_scalar_i64(1000000)), sum);
}

/* The same over constant u8 bounds 2, 255, 2: a value counter would wrap at 256. */
static ts_tensor *u8_range_iterations(ts_call *c)
{
  ts_tensor *n = ts_scalar_i64(0), *i = NULL;
  uint8_t b[] = { 2, 255, 2 };
  ts_tensor *start = ts_constant(TS_U8, TS_SCALAR_SHAPE, &b[0]);
  ts_tensor *limit = ts_constant(TS_U8, TS_SCALAR_SHAPE, &b[1]);
  ts_tensor *delta = ts_constant(TS_U8, TS_SCALAR_SHAPE, &b[2]);
  TS_FOR (i, TS_RANGE(start, limit, delta), &n) {
    n = ts_add(n, ts_cast(i, TS_I64));
  }
  return ts_add(n, ts_cast(ts_arg(c, 0), TS_I64));
}

/* Counts the rows of x. */
static ts_tensor *count_rows(ts_call *c)
{
  ts_tensor *n = ts_scalar_i32(0), *row = NULL;
  TS_FOR (row, TS_OVER(ts_arg(c, 0)), &n) {
    n = ts_add(n, ts_scalar_i32(1));
  }
  return n;
}

/* Doubles x (by a factor computed outside the loop, so the loop captures
 * it) until it reaches limit: steps * 1000 + x. */
static ts_tensor *double_until(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *limit = ts_arg(c, 1), *steps = ts_scalar_i32(0);
  ts_tensor *factor = ts_add(ts_ones_like(x), ts_ones_like(x));
  TS_WHILE (ts_less(x, limit), &x, &steps) {
    x = ts_mul(x, factor);
    steps = ts_add(steps, ts_scalar_i32(1));
  }
  return ts_add(ts_mul(steps, ts_scalar_i32(1000)), x);
}

/* Collatz steps to reach 1: a TS_IF nested in a TS_WHILE. */
static ts_tensor *collatz(ts_call *c)
{
  ts_tensor *n = ts_arg(c, 0), *steps = ts_scalar_i32(0);
  ts_tensor *one = ts_scalar_i32(1), *two = ts_scalar_i32(2);
  TS_WHILE (ts_greater(n, one), &n, &steps) {
    TS_IF (ts_equal(ts_mod(n, two), ts_scalar_i32(0)), &n) {
      n = ts_floordiv(n, two);
    } TS_ELSE {
      n = ts_add(ts_mul(n, ts_scalar_i32(3)), one);
    } TS_END_IF;
    steps = ts_add(steps, one);
  }
  return steps;
}

/* A host-controlled loop: plain C even while tracing (unrolled). */
static ts_tensor *host_loop(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  int k = 0;
  TS_WHILE (ts_scalar_bool(k < 3), &x) {
    x = ts_add(x, x);
    k++;
  }
  return x;
}

/* TS_FOR over a range of host constants: still a loop in the graph. */
static ts_tensor *constant_range_sum(ts_call *c)
{
  ts_tensor *acc = ts_arg(c, 0), *i = NULL;
  TS_FOR (i, TS_RANGE(ts_scalar_i32(0), ts_scalar_i32(4), ts_scalar_i32(1)), &acc) {
    acc = ts_add(acc, i);
  }
  return acc;
}

/* x doubled in length if its sum is positive: the If's output shape is
 * the branches' common one, (?,). */
static ts_tensor *grow_if_positive(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_i32(0)), &x) {
    ts_tensor *parts[] = { x, x };
    x = ts_concat(parts, 2, 0);
  } TS_END_IF;
  return x;
}

/* The functional forms. */
static void double_it(ts_tensor **vars, int n, void *user_data)
{
  (void)n;
  (void)user_data;
  vars[0] = ts_add(vars[0], vars[0]);
}

static void negate_it(ts_tensor **vars, int n, void *user_data)
{
  (void)n;
  (void)user_data;
  vars[0] = ts_neg(vars[0]);
}

static ts_tensor *below_limit(ts_tensor *const *vars, int n, void *user_data)
{
  (void)n;
  return ts_less(vars[0], user_data);
}

/* cond(x > 0, 2x, -x), then doubled while below 50. */
static ts_tensor *functional(ts_call *c)
{
  ts_tensor *vars[1] = { ts_arg(c, 0) };
  ts_tensor *limit = ts_scalar_i32(50);
  if (!ts_cond(ts_greater(vars[0], ts_scalar_i32(0)), double_it, negate_it, vars, 1, NULL) ||
      !ts_while_loop(below_limit, double_it, vars, 1, limit))
    return NULL;
  return vars[0];
}

/* The guide's fizzbuzz: TS_FOR over a range without loop variables, ts_print
 * in nested branches. */
static ts_tensor *fizzbuzz(ts_call *c)
{
  ts_tensor *n = ts_arg(c, 0), *i = NULL, *zero = ts_scalar_i32(0);
  TS_FOR (i, TS_RANGE(ts_scalar_i32(1), ts_add(n, ts_scalar_i32(1)), ts_scalar_i32(1))) {
    TS_IF (ts_equal(ts_mod(i, ts_scalar_i32(15)), zero)) {
      ts_print("FizzBuzz");
    } TS_ELSE {
      TS_IF (ts_equal(ts_mod(i, ts_scalar_i32(3)), zero)) {
        ts_print("Fizz");
      } TS_ELSE {
        TS_IF (ts_equal(ts_mod(i, ts_scalar_i32(5)), zero)) {
          ts_print("Buzz");
        } TS_ELSE {
          ts_print(i);
        } TS_END_IF;
      } TS_END_IF;
    } TS_END_IF;
  }
  return n;
}

/* The guide's square_if_positive_naive: a TensorArray as loop variable. */
static ts_tensor *square_if_positive_naive(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *n = ts_gather(ts_shape(x), ts_scalar_i32(0), 0);
  ts_tensor *result = ts_tensor_array(TS_I32, n), *i = NULL;
  TS_FOR (i, TS_RANGE(ts_scalar_i32(0), n, ts_scalar_i32(1)), &result) {
    ts_tensor *xi = ts_gather(x, i, 0);
    TS_IF (ts_greater(xi, ts_scalar_i32(0)), &result) {
      result = ts_tensor_array_write(result, i, ts_mul(xi, xi));
    } TS_ELSE {
      result = ts_tensor_array_write(result, i, xi);
    } TS_END_IF;
  }
  return ts_tensor_array_stack(result);
}

/* The guide's find_next_odd: assignments in a branch run in program order. */
static ts_tensor *counter_var;

static ts_tensor *find_next_odd(ts_call *c)
{
  (void)c;
  ts_assign(counter_var, ts_add(ts_read(counter_var), ts_scalar_i32(1)));
  TS_IF (ts_equal(ts_mod(ts_read(counter_var), ts_scalar_i32(2)), ts_scalar_i32(0))) {
    ts_assign(counter_var, ts_add(ts_read(counter_var), ts_scalar_i32(1)));
  } TS_END_IF;
  return ts_read(counter_var);
}


/* ---- jumps: TS_BREAK, TS_CONTINUE, TS_RETURN ---------------------------------------------- */

/* The smallest i below 100 whose square exceeds limit (100 if none). */
static ts_tensor *first_square_over(ts_call *c)
{
  ts_tensor *limit = ts_arg(c, 0), *i = ts_scalar_i32(0);
  TS_WHILE (ts_less(i, ts_scalar_i32(100)), &i) {
    TS_IF (ts_greater(ts_mul(i, i), limit), &i) {
      TS_BREAK;
    } TS_END_IF;
    i = ts_add(i, ts_scalar_i32(1));
  }
  return i;
}

/* 100 * (the sum of the positive items) + how many there are. */
static ts_tensor *positives(ts_call *c)
{
  ts_tensor *items = ts_arg(c, 0), *x = NULL, *sum = ts_scalar_i32(0), *n = ts_scalar_i32(0);
  TS_FOR (x, TS_OVER(items), &sum, &n) {
    TS_IF (ts_less_equal(x, ts_scalar_i32(0)), &sum) {
      TS_CONTINUE;
    } TS_END_IF;
    sum = ts_add(sum, x);
    n = ts_add(n, ts_scalar_i32(1));
  }
  return ts_add(ts_mul(sum, ts_scalar_i32(100)), n);
}

/* Adds the positive items to tally_var: a side effect after a TS_CONTINUE. */
static ts_tensor *tally_var;

static ts_tensor *tally(ts_call *c)
{
  ts_tensor *items = ts_arg(c, 0), *x = NULL, *seen = ts_scalar_i32(0);
  TS_FOR (x, TS_OVER(items), &seen) {
    seen = ts_add(seen, ts_scalar_i32(1));
    TS_IF (ts_less_equal(x, ts_scalar_i32(0)), &seen) {
      TS_CONTINUE;
    } TS_END_IF;
    ts_assign_add(tally_var, x);
  }
  return ts_add(ts_read(tally_var), ts_mul(seen, ts_scalar_i32(1000)));
}

/* 10 * the index of the first item equal to target in items[0:n] + how
 * many were passed; when none is, n - 100. */
static ts_tensor *index_of(ts_call *c)
{
  ts_tensor *items = ts_arg(c, 0), *target = ts_arg(c, 1), *i = NULL, *seen = ts_scalar_i32(0);
  TS_FOR (i, TS_RANGE(ts_scalar_i32(0), ts_arg(c, 2), ts_scalar_i32(1)), &seen) {
    TS_IF (ts_equal(ts_gather(items, i, 0), target), &seen) {
      TS_RETURN(ts_add(ts_mul(i, ts_scalar_i32(10)), seen));
    } TS_END_IF;
    seen = ts_add(seen, ts_scalar_i32(1));
  }
  return ts_sub(seen, ts_scalar_i32(100));
}

/* -100 below -10, -x below 0, else 2x: returns from nested blocks, and
 * after a return that did not happen. */
static ts_tensor *bend(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_less(x, ts_scalar_i32(0)), &x) {
    TS_IF (ts_less(x, ts_scalar_i32(-10)), &x) {
      TS_RETURN(ts_scalar_i32(-100));
    } TS_END_IF;
    TS_RETURN(ts_neg(x));
  } TS_END_IF;
  x = ts_mul(x, ts_scalar_i32(2));
  return x;
}

/* Pairs (i, j) with 0 <= j <= i < n: TS_BREAK ends the inner loop only. */
static ts_tensor *triangle(ts_call *c)
{
  ts_tensor *n = ts_arg(c, 0), *i = NULL, *count = ts_scalar_i32(0);
  TS_FOR (i, TS_RANGE(ts_scalar_i32(0), n, ts_scalar_i32(1)), &count) {
    ts_tensor *j = ts_scalar_i32(0);
    TS_WHILE (ts_less(j, n), &j, &count) {
      TS_IF (ts_greater(j, i), &j) {
        TS_BREAK;
      } TS_END_IF;
      count = ts_add(count, ts_scalar_i32(1));
      j = ts_add(j, ts_scalar_i32(1));
    }
  }
  return count;
}

/* How many halvings bring x to an odd number; -1 for 0 (TS_RETURN out of
 * a TS_WHILE). */
static ts_tensor *halvings(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *n = ts_scalar_i32(0);
  TS_WHILE (ts_equal(ts_mod(x, ts_scalar_i32(2)), ts_scalar_i32(0)), &x, &n) {
    TS_IF (ts_equal(x, ts_scalar_i32(0)), &x) {
      TS_RETURN(ts_scalar_i32(-1));
    } TS_END_IF;
    x = ts_floordiv(x, ts_scalar_i32(2));
    n = ts_add(n, ts_scalar_i32(1));
  }
  return n;
}

/* A TS_RETURN under a tensor condition in a TS_WHILE whose body changes a
 * listed variable's shape (an error), in a TS_FOR, then a TS_IF: the
 * failed loop's frames are gone, and what they made must not be used. */
static int reshaping_loop_line;

static ts_tensor *return_from_reshaping_loop(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *v = ts_zeros(TS_I32, TS_SHAPE(2)), *i = NULL;
  TS_FOR (i, TS_RANGE(ts_scalar_i32(0), ts_scalar_i32(3), ts_scalar_i32(1)), &v) {
    reshaping_loop_line = __LINE__ + 1;
    TS_WHILE (ts_less(ts_reduce_sum(v, TS_ALL_AXES, false), x), &v) {
      TS_IF (ts_greater(x, ts_scalar_i32(5)), &v) {
        TS_RETURN(ts_scalar_i32(-1));
      } TS_END_IF;
      ts_tensor *parts[] = { v, ts_ones_like(v) };
      v = ts_concat(parts, 2, 0);
    }
  }
  TS_IF (ts_greater(x, ts_scalar_i32(0)), &x) {
    x = ts_neg(x);
  } TS_END_IF;
  return x;
}

/* 1 for x > 0, else -1: every path returns inside the TS_IF. */
static ts_tensor *plus_or_minus_one(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(x, ts_scalar_i32(0)), &x) {
    TS_RETURN(ts_scalar_i32(1));
  } TS_ELSE {
    TS_RETURN(ts_scalar_i32(-1));
  } TS_END_IF;
  return NULL; /* not reached: C still wants a return */
}

/* 5 + the sum of range(n) + 1000 per item; with host `first_only`, the
 * first item only: a TS_BREAK under a host condition. */
static ts_tensor *sum_or_first(ts_call *c)
{
  bool first_only = ts_arg_int(c, 1) != 0;
  ts_tensor *i = NULL, *s = ts_scalar_i32(5);
  TS_FOR (i, TS_RANGE(ts_scalar_i32(0), ts_arg(c, 0), ts_scalar_i32(1)), &s) {
    s = ts_add(s, i);
    TS_IF (ts_scalar_bool(first_only), &s) {
      TS_BREAK;
    } TS_END_IF;
    s = ts_add(s, ts_scalar_i32(1000));
  }
  return s;
}

/* TS_RETURN straight in a loop body after a TS_CONTINUE: the first odd
 * number from x on, times 3 (x itself when the loop never runs). */
static ts_tensor *first_odd_times_3(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *k = NULL;
  TS_FOR (k, TS_RANGE(x, ts_add(x, ts_scalar_i32(2)), ts_scalar_i32(1)), &x) {
    TS_IF (ts_equal(ts_mod(k, ts_scalar_i32(2)), ts_scalar_i32(0)), &x) {
      TS_CONTINUE;
    } TS_END_IF;
    TS_RETURN(ts_mul(k, ts_scalar_i32(3)));
  }
  return x;
}

/* ---- helpers ---------------------------------------------------------------------------------- */

/* f(i32 x) in both modes: eager first, then graph. */
static void check_i32(ts_function *f, int32_t x, int64_t want)
{
  for (int eager = 1; eager >= 0; eager--) {
    ts_value arg = TS_TENSOR_VALUE(ts_scalar_i32(x));
    g_assert_cmpint(scalar_of(call_in_mode(f, eager, &arg, 1)), ==, want);
  }
}

/* The first node of g running op, or NULL. */
static const ts_node *find_op(const ts_graph *g, ts_op op)
{
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    if (ts_node_op(ts_graph_node(g, i)) == op)
      return ts_graph_node(g, i);
  return NULL;
}

static int count_op(const ts_graph *g, ts_op op)
{
  int n = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    n += ts_node_op(ts_graph_node(g, i)) == op;
  return n;
}

static const ts_graph *only_graph(const ts_function *f)
{
  g_assert_cmpint(ts_function_n_concrete(f), ==, 1);
  return ts_concrete_graph(ts_function_concrete(f, 0));
}

/* Takes the pending error and checks that its message holds every part. */
static void expect_error(const char *part, const char *part2)
{
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  if (!strstr(e->message, part) || (part2 && !strstr(e->message, part2)))
    g_error("unexpected error: %s", e->message);
  ts_error_free(e);
}

static char *location(int line)
{
  return g_strdup_printf("test-control-flow.c:%d: ", line);
}

/* ---- eager ---------------------------------------------------------------------------------- */

static void test_eager_if(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *f = ts_function_new("square_if_positive", square_if_positive, "x");
  ts_function *a = ts_function_new("absolute", absolute, "x");
  ts_function *s = ts_function_new("sign", sign, "x");
  for (int x = -3; x <= 3; x++) {
    ts_value arg = TS_TENSOR_VALUE(ts_scalar_i32(x));
    g_assert_cmpint(scalar_of(ts_function_call_eager(f, &arg, 1)), ==, x > 0 ? x * x : 0);
    g_assert_cmpint(scalar_of(ts_function_call_eager(a, &arg, 1)), ==, ABS(x));
    g_assert_cmpint(scalar_of(ts_function_call_eager(s, &arg, 1)), ==, (x > 0) - (x < 0));
  }
  /* Any numeric dtype with one element is a condition: nonzero is true. */
  ts_tensor *x = ts_scalar_f32(2.5f);
  TS_IF (ts_constant(TS_F64, TS_SHAPE(1, 1), (double[]){ 0.5 }), &x) {
    x = ts_mul(x, x);
  } TS_END_IF;
  g_assert_cmpfloat(ts_tensor_get_f64(x, 0), ==, 6.25);
  g_assert_false(ts_failed());
  ts_function_free(f);
  ts_function_free(a);
  ts_function_free(s);
  ts_scope_end(scope);
}

static void test_eager_loops(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *se = ts_function_new("sum_even", sum_even, "items");
  ts_value items = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(4), (int32_t[]){ 10, 12, 15, 20 }));
  g_assert_cmpint(scalar_of(ts_function_call_eager(se, &items, 1)), ==, 42);

  ts_function *rows = ts_function_new("sum_rows", sum_rows, "m");
  ts_value m = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(3, 2), (int32_t[]){ 1, 2, 3, 4, 5, 6 }));
  ts_tensor *total = ts_function_call_eager(rows, &m, 1);
  g_assert_nonnull(total);
  g_assert_cmpint(ts_tensor_get_i64(total, 0), ==, 9);
  g_assert_cmpint(ts_tensor_get_i64(total, 1), ==, 12);

  ts_function *rs = ts_function_new("range_sum", range_sum, "start, limit, delta");
  static const struct { int32_t start, limit, delta; int64_t sum; } ranges[] = {
    { 0, 10, 3, 0 + 3 + 6 + 9 }, { 5, 0, -2, 5 + 3 + 1 }, { 4, 4, 1, 0 }, { 4, 1, 1, 0 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(ranges); i++) {
    ts_value args[] = { TS_TENSOR_VALUE(ts_scalar_i32(ranges[i].start)),
                        TS_TENSOR_VALUE(ts_scalar_i32(ranges[i].limit)),
                        TS_TENSOR_VALUE(ts_scalar_i32(ranges[i].delta)) };
    g_assert_cmpint(scalar_of(ts_function_call_eager(rs, args, 3)), ==, ranges[i].sum);
  }

  /* A float range counts like tf.range: 0, 0.25, 0.5, 0.75. */
  ts_tensor *sum = ts_scalar_f32(0), *v = NULL;
  int n = 0;
  TS_FOR (v, TS_RANGE(ts_scalar_f32(0), ts_scalar_f32(1), ts_scalar_f32(0.25f)), &sum) {
    sum = ts_add(sum, v);
    n++;
  }
  g_assert_cmpint(n, ==, 4);
  g_assert_cmpfloat(ts_tensor_get_f64(sum, 0), ==, 1.5);
  g_assert_cmpint(ts_tensor_dtype(v), ==, TS_F32);

  ts_function *du = ts_function_new("double_until", double_until, "x, limit");
  ts_value args[] = { TS_TENSOR_VALUE(ts_scalar_i32(3)), TS_TENSOR_VALUE(ts_scalar_i32(100)) };
  g_assert_cmpint(scalar_of(ts_function_call_eager(du, args, 2)), ==, 6 * 1000 + 192);

  ts_function *cz = ts_function_new("collatz", collatz, "n");
  ts_value six = TS_TENSOR_VALUE(ts_scalar_i32(6));
  g_assert_cmpint(scalar_of(ts_function_call_eager(cz, &six, 1)), ==, 8);

  /* Eagerly, break and continue in a loop body are plain C. */
  ts_tensor *i = ts_scalar_i32(0);
  int runs = 0;
  TS_WHILE (ts_less(i, ts_scalar_i32(10)), &i) {
    i = ts_add(i, ts_scalar_i32(1));
    if (ts_tensor_get_i64(i, 0) == 2)
      continue;
    runs++;
    if (ts_tensor_get_i64(i, 0) == 4)
      break;
  }
  g_assert_cmpint(runs, ==, 3);
  g_assert_cmpint(ts_tensor_get_i64(i, 0), ==, 4);

  ts_function *fn = ts_function_new("functional", functional, "x");
  ts_value three = TS_TENSOR_VALUE(ts_scalar_i32(3)), minus = TS_TENSOR_VALUE(ts_scalar_i32(-5));
  g_assert_cmpint(scalar_of(ts_function_call_eager(fn, &three, 1)), ==, 96);
  g_assert_cmpint(scalar_of(ts_function_call_eager(fn, &minus, 1)), ==, 80);

  g_assert_false(ts_failed());
  ts_function_free(se);
  ts_function_free(rows);
  ts_function_free(rs);
  ts_function_free(du);
  ts_function_free(cz);
  ts_function_free(fn);
  ts_scope_end(scope);
}

static ts_value u8v(uint8_t v)
{
  return TS_TENSOR_VALUE(ts_constant(TS_U8, TS_SCALAR_SHAPE, &v));
}

/* sum(range(0, n, step)), the step a host int: a concrete delta beside a
 * limit the graph reads. */
static ts_tensor *range_by_step(ts_call *c)
{
  ts_tensor *acc = ts_scalar_i32(0), *i = NULL;
  ts_tensor *limit = ts_add(ts_arg(c, 0), ts_scalar_i32(0)); /* symbolic while traced */
  TS_FOR (i, TS_RANGE(ts_scalar_i32(0), limit, ts_scalar_i32((int32_t)ts_arg_int(c, 1))), &acc) {
    acc = ts_add(acc, i);
  }
  return acc;
}

/* Eager and graph TS_FOR over a range count alike (one definition of the trip
 * count, in a wide type): no wrapping counter, a zero delta fails in both. */
static void test_range_trip_count(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *ri = ts_function_new("range_iterations", range_iterations, "start, limit, delta");
  ts_function *cu = ts_function_new("u8_range_iterations", u8_range_iterations, "x");
  for (int eager = 1; eager >= 0; eager--) {
    ts_value u8[] = { u8v(2), u8v(255), u8v(2) };
    g_assert_cmpint(scalar_of(call_in_mode(ri, eager, u8, 3)), ==, 127 * 1000000 + 16256);
    ts_value u8_top[] = { u8v(250), u8v(255), u8v(1) };
    g_assert_cmpint(scalar_of(call_in_mode(ri, eager, u8_top, 3)), ==, 5 * 1000000 + 1260);
    /* 0, 2^30: the next value, 2^31, does not fit in int32 */
    ts_value i32[] = { TS_TENSOR_VALUE(ts_scalar_i32(0)), TS_TENSOR_VALUE(ts_scalar_i32(INT32_MAX)),
                       TS_TENSOR_VALUE(ts_scalar_i32(1 << 30)) };
    g_assert_cmpint(scalar_of(call_in_mode(ri, eager, i32, 3)), ==, 2 * 1000000 + (1 << 30));
    ts_value down[] = { TS_TENSOR_VALUE(ts_scalar_i32(INT32_MIN + 5)),
                        TS_TENSOR_VALUE(ts_scalar_i32(INT32_MIN)),
                        TS_TENSOR_VALUE(ts_scalar_i32(-4)) };
    g_assert_cmpint(scalar_of(call_in_mode(ri, eager, down, 3)), ==,
                    2 * 1000000 + 2 * (int64_t)INT32_MIN + 5 + 1);
    ts_value f[] = { TS_TENSOR_VALUE(ts_scalar_f32(0)), TS_TENSOR_VALUE(ts_scalar_f32(1)),
                     TS_TENSOR_VALUE(ts_scalar_f32(0.3f)) };
    g_assert_cmpint(scalar_of(call_in_mode(ri, eager, f, 3)), ==, 4 * 1000000 + 0);
    ts_value x = TS_TENSOR_VALUE(ts_scalar_i32(0));
    g_assert_cmpint(scalar_of(call_in_mode(cu, eager, &x, 1)), ==, 16256);

    /* a zero delta is an error in both modes */
    ts_value zero[] = { u8v(2), u8v(255), u8v(0) };
    g_assert_null(call_in_mode(ri, eager, zero, 3));
    expect_error(eager ? "TS_RANGE delta must not be zero" : "division by zero", NULL);
    ts_value fzero[] = { TS_TENSOR_VALUE(ts_scalar_f32(0)), TS_TENSOR_VALUE(ts_scalar_f32(1)),
                         TS_TENSOR_VALUE(ts_scalar_f32(0)) };
    g_assert_null(call_in_mode(ri, eager, fzero, 3));
    expect_error(eager ? "TS_RANGE delta must not be zero" : "division by zero", NULL);
  }
  g_assert_cmpint(ts_function_trace_count(ri), ==, 3); /* u8, i32, f32 */

  /* An empty tensor with a huge dim 0: a clean error at once, not 2^40 iterations. */
  ts_function *cr = ts_function_new("count_rows", count_rows, "x");
  for (int eager = 1; eager >= 0; eager--) {
    ts_value huge = TS_TENSOR_VALUE(ts_tensor_new(TS_F32, TS_SHAPE(INT64_C(1) << 40, 0)));
    g_assert_null(call_in_mode(cr, eager, &huge, 1));
    expect_error("cannot iterate over the 1099511627776 rows of f32[1099511627776,0]", NULL);
    ts_value few = TS_TENSOR_VALUE(ts_tensor_new(TS_F32, TS_SHAPE(3, 0)));
    g_assert_cmpint(scalar_of(call_in_mode(cr, eager, &few, 1)), ==, 3);
  }

  /* a concrete delta beside a symbolic limit: a zero one is refused as it
   * is traced, in the words of the eager run; others count as eagerly,
   * and the trip count casts only what the graph reads (the limit) */
  ts_function *rb = ts_function_new("range_by_step", range_by_step, "n, step");
  for (int eager = 1; eager >= 0; eager--) {
    ts_value zero[] = { TS_TENSOR_VALUE(ts_scalar_i32(5)), TS_INT_VALUE(0) };
    g_assert_null(call_in_mode(rb, eager, zero, 2));
    expect_error("TS_RANGE delta must not be zero", NULL);
    ts_value two[] = { TS_TENSOR_VALUE(ts_scalar_i32(7)), TS_INT_VALUE(2) }; /* 0 2 4 6 */
    g_assert_cmpint(scalar_of(call_in_mode(rb, eager, two, 2)), ==, 12);
    ts_value down[] = { TS_TENSOR_VALUE(ts_scalar_i32(-7)), TS_INT_VALUE(-3) }; /* 0 -3 -6 */
    g_assert_cmpint(scalar_of(call_in_mode(rb, eager, down, 2)), ==, -9);
  }
  for (int k = 0; k < ts_function_n_concrete(rb); k++)
    g_assert_cmpint(count_op(ts_concrete_graph(ts_function_concrete(rb, k)), TS_OP_CAST), ==, 1);
  ts_function_free(rb);
  ts_function_free(ri);
  ts_function_free(cu);
  ts_function_free(cr);
  ts_scope_end(scope);
}

/* Eagerly, each iteration's temporaries go at the end of the next one: the
 * listed variables (and the loop variable) carry over, the last two
 * iterations' values pass to the enclosing scope, and the scope stays
 * small however many iterations run. */
static void test_eager_loop_memory(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *i = ts_scalar_i32(0), *acc = ts_scalar_i32(0);
  int start = ts_scope_n_tensors(), most = 0;
  TS_WHILE (ts_less(i, ts_scalar_i32(20000)), &i, &acc) {
    ts_tensor *t = ts_mul(i, ts_scalar_i32(2));
    acc = ts_add(acc, ts_mod(t, ts_scalar_i32(7)));
    i = ts_add(i, ts_scalar_i32(1));
    most = MAX(most, ts_scope_n_tensors());
  }
  g_assert_cmpint(most, <=, 12);
  g_assert_cmpint(ts_scope_n_tensors(), <=, start + 30); /* the last two iterations' */
  g_assert_cmpint(ts_tensor_get_i64(i, 0), ==, 20000);
  int64_t want = 0;
  for (int k = 0; k < 20000; k++)
    want += (2 * k) % 7;
  g_assert_cmpint(ts_tensor_get_i64(acc, 0), ==, want);

  ts_tensor *sum = ts_scalar_i64(0), *v = NULL;
  start = ts_scope_n_tensors();
  most = 0;
  TS_FOR (v, TS_RANGE(ts_scalar_i64(0), ts_scalar_i64(20000), ts_scalar_i64(1)), &sum) {
    sum = ts_add(sum, ts_mul(v, ts_scalar_i64(3)));
    most = MAX(most, ts_scope_n_tensors());
  }
  g_assert_cmpint(most, <=, 12);
  g_assert_cmpint(ts_scope_n_tensors(), <=, start + 30);
  g_assert_cmpint(ts_tensor_get_i64(sum, 0), ==, 3 * (int64_t)19999 * 20000 / 2);
  g_assert_cmpint(ts_tensor_get_i64(v, 0), ==, 19999);

  ts_tensor *rows = ts_zeros(TS_I32, TS_SHAPE(20000, 2)), *row = NULL, *total = ts_zeros(TS_I32, TS_SHAPE(2));
  start = ts_scope_n_tensors();
  most = 0;
  TS_FOR (row, TS_OVER(rows), &total) {
    total = ts_add(total, ts_add(row, ts_ones_like(row)));
    most = MAX(most, ts_scope_n_tensors());
  }
  g_assert_cmpint(most, <=, 12);
  g_assert_cmpint(ts_scope_n_tensors(), <=, start + 30);
  g_assert_cmpint(ts_tensor_get_i64(total, 1), ==, 20000);

  /* A value the body made and the code after the loop uses stays valid, as
   * in C (in a graph it would be an error: it is not a loop variable). */
  ts_tensor *last = NULL, *n = ts_scalar_i32(0);
  TS_WHILE (ts_less(n, ts_scalar_i32(5)), &n) {
    last = ts_mul(n, ts_scalar_i32(10));
    n = ts_add(n, ts_scalar_i32(1));
  }
  g_assert_cmpint(ts_tensor_get_i64(last, 0), ==, 40);
  ts_tensor *item = NULL, *doubled = NULL;
  TS_FOR (item, TS_OVER(ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 4, 5, 6 }))) {
    doubled = ts_add(item, item);
  }
  g_assert_cmpint(ts_tensor_get_i64(doubled, 0), ==, 12);
  g_assert_cmpint(ts_tensor_get_i64(item, 0), ==, 6);

  /* nested loops, and a break: the variables stay usable, the scope's end frees the rest */
  ts_tensor *outer_n = ts_scalar_i32(0), *j = NULL;
  TS_FOR (j, TS_RANGE(ts_scalar_i32(0), ts_scalar_i32(100), ts_scalar_i32(1)), &outer_n) {
    ts_tensor *k = ts_scalar_i32(0);
    TS_WHILE (ts_less(k, j), &k, &outer_n) {
      outer_n = ts_add(outer_n, ts_scalar_i32(1));
      k = ts_add(k, ts_scalar_i32(1));
    }
    most = MAX(most, ts_scope_n_tensors());
    if (ts_tensor_get_i64(j, 0) == 50)
      break;
  }
  g_assert_cmpint(ts_tensor_get_i64(outer_n, 0), ==, 50 * 51 / 2);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static void test_eager_errors(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *v = ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 1, 2 });
  bool ran = false;

  /* More than one element: ambiguous, at the statement's line. */
  int line = __LINE__ + 1;
  TS_IF (ts_greater(v, ts_scalar_i32(0)), &v) {
    ran = true;
  } TS_END_IF;
  g_assert_false(ran);
  g_assert_null(v);
  char *at = location(line);
  expect_error(at, "TS_IF: the truth value of a tensor with more than one element is ambiguous "
                   "(the condition has shape (2,))");
  g_free(at);

  ts_tensor *x = ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 1, 2 });
  line = __LINE__ + 1;
  TS_WHILE (ts_less(x, ts_scalar_i32(5)), &x) {
    ran = true;
  }
  g_assert_false(ran);
  at = location(line);
  expect_error(at, "TS_WHILE: the truth value of a tensor with more than one element");
  g_free(at);

  /* A NULL condition (an earlier failure) runs no branch and keeps the first error. */
  x = ts_scalar_i32(1);
  ts_tensor *bad = ts_reshape(ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 1, 2 }), TS_SHAPE(3));
  g_assert_null(bad);
  TS_IF (ts_greater(bad, ts_scalar_i32(0)), &x) {
    ran = true;
  } TS_ELSE {
    ran = true;
  } TS_END_IF;
  g_assert_false(ran);
  g_assert_null(x);
  expect_error("Reshape", NULL);

  /* break and continue cannot pass through a TS_IF block. */
  for (int k = 0; k < 2; k++) {
    x = ts_scalar_i32(1);
    for (int i = 0; i < 3; i++) {
      line = __LINE__ + 1;
      TS_IF (ts_scalar_bool(true), &x) {
        if (k == 0)
          break;
        else
          continue;
      } TS_END_IF;
    }
    g_assert_null(x);
    at = location(line);
    expect_error(at, k == 0 ? "TS_IF: `break` out of a TS_IF block is not supported"
                            : "TS_IF: `continue` out of a TS_IF block is not supported");
    g_free(at);
  }

  ts_tensor *item = NULL;
  TS_FOR (item, TS_RANGE(ts_scalar_i32(0), ts_scalar_i32(3), ts_scalar_i32(0)), &x) {
    ran = true;
  }
  g_assert_false(ran);
  expect_error("TS_FOR: TS_RANGE delta must not be zero", NULL);

  TS_FOR (item, TS_OVER(ts_scalar_i32(3)), &x) {
    ran = true;
  }
  g_assert_false(ran);
  expect_error("TS_FOR: cannot iterate over a scalar tensor (i32[])", NULL);

  TS_FOR (item, TS_RANGE(ts_scalar_i32(0), ts_constant(TS_I32, TS_SHAPE(1), (int32_t[]){ 3 }),
                         ts_scalar_i32(1)), &x) {
    ran = true;
  }
  g_assert_false(ran);
  expect_error("TS_RANGE limit must be a numeric scalar, got i32[1]", NULL);
  ts_scope_end(scope);
}

/* An eager loop on a fixed true condition ends at the first failing op of
 * its body, and when the cancel flag is set (its body may run no op). */
static void test_eager_loop_stops(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *yes = ts_scalar_bool(true), *x = ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 1, 2 });
  ts_tensor *item = NULL;
  int iters = 0;
  TS_WHILE (yes, &x) {
    if (++iters > 100)
      break; /* the loop did not stop: the assertion below fails */
    x = ts_reshape(x, TS_SHAPE(3));
  }
  g_assert_cmpint(iters, ==, 1);
  g_assert_null(x);
  expect_error("Reshape", NULL);

  iters = 0;
  x = ts_scalar_i32(1);
  TS_FOR (item, TS_RANGE(ts_scalar_i64(0), ts_scalar_i64(1000), ts_scalar_i64(1)), &x) {
    ++iters;
    x = ts_reshape(x, TS_SHAPE(3));
  }
  g_assert_cmpint(iters, ==, 1);
  g_assert_null(x);
  expect_error("Reshape", NULL);

  ts_tensor *rows = ts_zeros(TS_I32, TS_SHAPE(1000));
  int flag = 1;
  ts_watch_cancel_flag(&flag);
  iters = 0;
  x = ts_scalar_i32(1);
  int line = __LINE__ + 1;
  TS_WHILE (yes, &x) {
    if (++iters > 100)
      break;
  }
  g_assert_cmpint(iters, ==, 0);
  g_assert_null(x);
  char *at = location(line);
  expect_error(at, "TS_WHILE: cancelled");
  g_free(at);
  TS_FOR (item, TS_OVER(rows), &x) {
    ++iters;
  }
  g_assert_cmpint(iters, ==, 0);
  expect_error("TS_FOR: cancelled", NULL);
  ts_watch_cancel_flag(NULL);
  ts_scope_end(scope);
}

/* ---- traced -------------------------------------------------------------------------------- */

static void test_traced_if(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *f = ts_function_new("square_if_positive", square_if_positive, "x");
  check_i32(f, 2, 4);
  check_i32(f, -2, 0);
  check_i32(f, 0, 0);
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);

  const ts_graph *g = only_graph(f);
  g_assert_cmpint(count_op(g, TS_OP_IF), ==, 1);
  const ts_node *n = find_op(g, TS_OP_IF);
  g_assert_cmpint(ts_node_n_subgraphs(n), ==, 2);
  g_assert_cmpint(ts_node_n_outputs(n), ==, 1);
  g_assert_cmpint(ts_node_output_dtype(n, 0), ==, TS_I32);
  g_assert_true(ts_shape_equal(ts_node_output_shape(n, 0), TS_SCALAR_SHAPE));
  g_assert_cmpstr(ts_graph_name(ts_node_subgraph(n, 0)), ==, "If/then");
  g_assert_cmpstr(ts_graph_name(ts_node_subgraph(n, 1)), ==, "If/else");
  /* Both branches take [x] (the condition is the node's first input). */
  g_assert_cmpint(ts_node_n_inputs(n), ==, 2);
  for (int b = 0; b < 2; b++) {
    const ts_graph *branch = ts_node_subgraph(n, b);
    g_assert_true(ts_graph_parent(branch) == g);
    g_assert_cmpint(ts_graph_n_inputs(branch), ==, 1);
    g_assert_cmpint(ts_graph_n_outputs(branch), ==, 1);
  }
  g_assert_nonnull(find_op(ts_node_subgraph(n, 0), TS_OP_MUL));
  g_assert_nonnull(find_op(ts_node_subgraph(n, 1), TS_OP_ZEROS_LIKE));
  /* The graph output is the If's. */
  g_assert_cmpint(ts_graph_output(g, 0).node, ==, ts_node_id(n));

  ts_function *a = ts_function_new("absolute", absolute, "x");
  ts_function *s = ts_function_new("sign", sign, "x");
  for (int x = -2; x <= 2; x++) {
    check_i32(a, x, ABS(x));
    check_i32(s, x, (x > 0) - (x < 0));
  }
  /* Without TS_ELSE the else branch passes x through. */
  const ts_node *ai = find_op(only_graph(a), TS_OP_IF);
  g_assert_cmpint(ts_graph_n_nodes(ts_node_subgraph(ai, 1)), ==, 1);
  /* The nested If lives in the outer one's else branch. */
  const ts_node *outer_if = find_op(only_graph(s), TS_OP_IF);
  g_assert_cmpint(count_op(only_graph(s), TS_OP_IF), ==, 1);
  g_assert_nonnull(find_op(ts_node_subgraph(outer_if, 1), TS_OP_IF));
  g_assert_null(find_op(ts_node_subgraph(outer_if, 0), TS_OP_IF));

  g_assert_false(ts_failed());
  ts_function_free(f);
  ts_function_free(a);
  ts_function_free(s);
  ts_scope_end(scope);
}

static void test_traced_loops(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *se = ts_function_new("sum_even", sum_even, "items");
  ts_value items = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(4), (int32_t[]){ 10, 12, 15, 20 }));
  g_assert_cmpint(scalar_of(ts_function_call(se, &items, 1)), ==, 42);
  const ts_node *w = find_op(only_graph(se), TS_OP_WHILE);
  g_assert_nonnull(w);
  g_assert_cmpint(ts_node_n_subgraphs(w), ==, 2);
  g_assert_cmpint(ts_node_n_inputs(w), ==, ts_node_n_outputs(w));
  const ts_graph *cond = ts_node_subgraph(w, 0), *body = ts_node_subgraph(w, 1);
  g_assert_cmpint(ts_graph_n_outputs(cond), ==, 1);
  g_assert_cmpint(ts_graph_n_inputs(cond), ==, ts_node_n_inputs(w));
  g_assert_cmpint(ts_graph_n_inputs(body), ==, ts_node_n_inputs(w));
  g_assert_cmpint(ts_graph_n_outputs(body), ==, ts_node_n_inputs(w));
  g_assert_nonnull(find_op(body, TS_OP_IF));
  g_assert_nonnull(find_op(body, TS_OP_GATHER));

  ts_function *rows = ts_function_new("sum_rows", sum_rows, "m");
  ts_value m = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(3, 2), (int32_t[]){ 1, 2, 3, 4, 5, 6 }));
  ts_tensor *total = ts_function_call(rows, &m, 1);
  g_assert_nonnull(total);
  g_assert_cmpint(ts_tensor_get_i64(total, 0), ==, 9);
  g_assert_cmpint(ts_tensor_get_i64(total, 1), ==, 12);

  /* Ranges over tensor arguments: one trace serves every bound and direction. */
  ts_function *rs = ts_function_new("range_sum", range_sum, "start, limit, delta");
  static const struct { int32_t start, limit, delta; int64_t sum; } ranges[] = {
    { 0, 10, 3, 18 }, { 5, 0, -2, 9 }, { 4, 4, 1, 0 }, { 0, 5, 1, 10 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(ranges); i++) {
    ts_value args[] = { TS_TENSOR_VALUE(ts_scalar_i32(ranges[i].start)),
                        TS_TENSOR_VALUE(ts_scalar_i32(ranges[i].limit)),
                        TS_TENSOR_VALUE(ts_scalar_i32(ranges[i].delta)) };
    g_assert_cmpint(scalar_of(ts_function_call(rs, args, 3)), ==, ranges[i].sum);
  }
  g_assert_cmpint(ts_function_trace_count(rs), ==, 1);

  /* A loop capturing an outer tensor: factor enters as an extra loop input. */
  ts_function *du = ts_function_new("double_until", double_until, "x, limit");
  for (int eager = 1; eager >= 0; eager--) {
    ts_value args[] = { TS_TENSOR_VALUE(ts_scalar_i32(3)), TS_TENSOR_VALUE(ts_scalar_i32(100)) };
    g_assert_cmpint(scalar_of(call_in_mode(du, eager, args, 2)), ==, 6 * 1000 + 192);
    ts_value none[] = { TS_TENSOR_VALUE(ts_scalar_i32(300)), TS_TENSOR_VALUE(ts_scalar_i32(100)) };
    g_assert_cmpint(scalar_of(call_in_mode(du, eager, none, 2)), ==, 300);
  }
  const ts_node *dw = find_op(only_graph(du), TS_OP_WHILE);
  /* x, steps, and the captured limit and factor */
  g_assert_cmpint(ts_node_n_inputs(dw), ==, 4);

  /* An If nested in a While. */
  ts_function *cz = ts_function_new("collatz", collatz, "n");
  check_i32(cz, 6, 8);
  check_i32(cz, 27, 111);
  check_i32(cz, 1, 0);
  const ts_node *cw = find_op(only_graph(cz), TS_OP_WHILE);
  g_assert_nonnull(find_op(ts_node_subgraph(cw, 1), TS_OP_IF));

  /* A host condition stays C control flow: the loop is unrolled. */
  ts_function *hl = ts_function_new("host_loop", host_loop, "x");
  check_i32(hl, 1, 8);
  g_assert_null(find_op(only_graph(hl), TS_OP_WHILE));
  g_assert_cmpint(count_op(only_graph(hl), TS_OP_ADD), ==, 3);

  ts_function *cr = ts_function_new("constant_range_sum", constant_range_sum, "acc");
  check_i32(cr, 10, 16);
  g_assert_nonnull(find_op(only_graph(cr), TS_OP_WHILE));

  /* Unknown dims: the loop's bound comes from the shape at run time. */
  ts_function *se_any = ts_function_new("sum_even", sum_even, "items");
  g_assert_true(ts_function_set_input_signature(se_any, &(ts_spec){ TS_I32, TS_SHAPE(-1) }, 1));
  ts_value four = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(4), (int32_t[]){ 10, 12, 15, 20 }));
  ts_value two = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 2, 4 }));
  ts_value none = TS_TENSOR_VALUE(ts_tensor_new(TS_I32, TS_SHAPE(0)));
  g_assert_cmpint(scalar_of(ts_function_call(se_any, &four, 1)), ==, 42);
  g_assert_cmpint(scalar_of(ts_function_call(se_any, &two, 1)), ==, 6);
  g_assert_cmpint(scalar_of(ts_function_call(se_any, &none, 1)), ==, 0);
  g_assert_cmpint(ts_function_trace_count(se_any), ==, 1);

  ts_function *grow = ts_function_new("grow_if_positive", grow_if_positive, "x");
  for (int eager = 1; eager >= 0; eager--) {
    ts_value pos = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 1, 2 }));
    ts_value neg = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ -1, -2 }));
    ts_tensor *y = call_in_mode(grow, eager, &pos, 1);
    g_assert_nonnull(y);
    g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(4)));
    g_assert_cmpint(ts_tensor_get_i64(y, 3), ==, 2);
    y = call_in_mode(grow, eager, &neg, 1);
    g_assert_nonnull(y);
    g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(2)));
  }
  const ts_node *gi = find_op(only_graph(grow), TS_OP_IF);
  g_assert_true(ts_shape_equal(ts_node_output_shape(gi, 0), TS_SHAPE(-1)));

  ts_function *fn = ts_function_new("functional", functional, "x");
  check_i32(fn, 3, 96);
  check_i32(fn, -5, 80);
  g_assert_nonnull(find_op(only_graph(fn), TS_OP_IF));
  g_assert_nonnull(find_op(only_graph(fn), TS_OP_WHILE));

  g_assert_false(ts_failed());
  ts_function_free(se);
  ts_function_free(rows);
  ts_function_free(rs);
  ts_function_free(du);
  ts_function_free(cz);
  ts_function_free(hl);
  ts_function_free(cr);
  ts_function_free(se_any);
  ts_function_free(grow);
  ts_function_free(fn);
  ts_scope_end(scope);
}

static void on_print(const ts_event *ev, void *user_data)
{
  GString *lines = user_data;
  g_string_append_printf(lines, "%s%s", lines->len ? " " : "", ev->print.text);
}

static void test_side_effects(void)
{
  ts_scope *scope = ts_scope_begin();
  /* fizzbuzz prints through the listener; stdout goes to /dev/null meanwhile. */
  ts_function *fb = ts_function_new("fizzbuzz", fizzbuzz, "n");
  for (int eager = 1; eager >= 0; eager--) {
    GString *lines = g_string_new(NULL);
    int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_PRINT), on_print, lines);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
    g_assert_true(saved >= 0 && null >= 0);
    dup2(null, STDOUT_FILENO);
    close(null);
    ts_value n = TS_TENSOR_VALUE(ts_scalar_i32(15));
    g_assert_nonnull(call_in_mode(fb, eager, &n, 1));
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    ts_listener_remove(id);
    g_assert_cmpstr(lines->str, ==, "1 2 Fizz 4 Buzz Fizz 7 8 Fizz Buzz 11 Fizz 13 14 FizzBuzz");
    g_string_free(lines, TRUE);
  }
  const ts_node *w = find_op(only_graph(fb), TS_OP_WHILE);
  g_assert_nonnull(w);
  g_assert_nonnull(find_op(ts_node_subgraph(w, 1), TS_OP_IF));

  ts_function *sq = ts_function_new("square_if_positive_naive", square_if_positive_naive, "x");
  for (int eager = 1; eager >= 0; eager--) {
    ts_value x = TS_TENSOR_VALUE(ts_range(TS_I32, -5, 5, 1));
    ts_tensor *y = call_in_mode(sq, eager, &x, 1);
    g_assert_nonnull(y);
    char *text = ts_tensor_format_values(y);
    g_assert_cmpstr(text, ==, "[-5 -4 -3 -2 -1  0  1  4  9 16]");
    free(text);
  }

  counter_var = ts_variable_new(ts_scalar_i32(5), "v");
  ts_function *odd = ts_function_new("find_next_odd", find_next_odd, NULL);
  g_assert_cmpint(scalar_of(ts_function_call(odd, NULL, 0)), ==, 7);
  g_assert_cmpint(scalar_of(ts_function_call(odd, NULL, 0)), ==, 9);
  g_assert_cmpint(scalar_of(ts_function_call_eager(odd, NULL, 0)), ==, 11);
  g_assert_cmpint(ts_function_trace_count(odd), ==, 1);
  ts_tensor_unref(counter_var);

  g_assert_false(ts_failed());
  ts_function_free(fb);
  ts_function_free(sq);
  ts_function_free(odd);
  ts_scope_end(scope);
}

/* ---- trace-time errors ------------------------------------------------------------------- */

static int error_line;

static ts_tensor *undefined_in_else(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *y = NULL;
  error_line = __LINE__ + 1;
  TS_IF (ts_greater(x, ts_scalar_i32(0)), &y) {
    y = ts_mul(x, x);
  } TS_END_IF;
  return y ? y : x;
}

static ts_tensor *dtype_mismatch(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  error_line = __LINE__ + 1;
  TS_IF (ts_greater(x, ts_scalar_i32(0)), &x) {
    x = ts_cast(x, TS_F32);
  } TS_ELSE {
    x = ts_neg(x);
  } TS_END_IF;
  return x;
}

static ts_tensor *growing_loop(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  error_line = __LINE__ + 1;
  TS_WHILE (ts_less(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_i32(10)), &x) {
    ts_tensor *parts[] = { x, x };
    x = ts_concat(parts, 2, 0);
  }
  return x;
}

/* AutoGraph: "'x' has dtype int32 before the loop, but dtype float32 after
 * one iteration" */
static ts_tensor *retyping_loop(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  error_line = __LINE__ + 1;
  TS_WHILE (ts_less(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_i32(10)), &x) {
    x = ts_mul(x, ts_scalar_f32(2));
  }
  return x;
}

static ts_tensor *break_in_if(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  error_line = __LINE__ + 1;
  TS_IF (ts_greater(x, ts_scalar_i32(0)), &x) {
    x = ts_neg(x);
    break;
  } TS_END_IF;
  return x;
}

static ts_tensor *return_in_if(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  error_line = __LINE__ + 1;
  TS_IF (ts_greater(x, ts_scalar_i32(0)), &x) {
    return ts_neg(x);
  } TS_END_IF;
  return x;
}

static ts_tensor *break_in_loop_in_if(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  error_line = __LINE__ + 1;
  TS_IF (ts_greater(x, ts_scalar_i32(0)), &x) {
    TS_WHILE (ts_less(x, ts_scalar_i32(10)), &x) {
      x = ts_add(x, x);
      break;
    }
  } TS_END_IF;
  return x;
}

/* Plain `break` out of a traced loop. */
static ts_tensor *break_in_while(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  error_line = __LINE__ + 1;
  TS_WHILE (ts_less(x, ts_scalar_i32(10)), &x) {
    x = ts_add(x, x);
    break;
  }
  return x;
}

/* Plain `return` in code guarded after a TS_BREAK. */
static ts_tensor *return_after_jump(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *i = ts_scalar_i32(0);
  TS_WHILE (ts_less(i, x), &i) {
    TS_IF (ts_greater(i, ts_scalar_i32(2)), &i) {
      TS_BREAK;
    } TS_END_IF;
    error_line = __LINE__ + 1;
    TS_IF (ts_greater(i, ts_scalar_i32(5)), &i) {
      return i;
    } TS_END_IF;
    i = ts_add(i, ts_scalar_i32(1));
  }
  return i;
}

/* TS_BREAK with no loop around it. */
static ts_tensor *break_without_loop(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(x, ts_scalar_i32(0)), &x) {
    error_line = __LINE__ + 1;
    TS_BREAK;
  } TS_END_IF;
  return x;
}

/* TS_BREAK under a tensor condition in a loop on a host condition. */
static ts_tensor *break_in_host_loop(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  int rounds = 0;
  error_line = __LINE__ + 1;
  TS_WHILE (ts_scalar_bool(rounds < 3), &x) {
    rounds++;
    TS_IF (ts_greater(x, ts_scalar_i32(0)), &x) {
      TS_BREAK;
    } TS_END_IF;
  }
  return x;
}

static ts_tensor *ambiguous(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  error_line = __LINE__ + 1;
  TS_IF (ts_greater(x, ts_scalar_i32(0)), &x) {
    x = ts_neg(x);
  } TS_END_IF;
  return x;
}

/* An error in a traced loop leaves nothing behind that later statements use. */
static void test_failed_loop_then_if(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *f = ts_function_new("return_from_reshaping_loop", return_from_reshaping_loop, "x");
  ts_value arg = TS_TENSOR_VALUE(ts_scalar_i32(3));
  g_assert_null(ts_function_call(f, &arg, 1));
  char *at = location(reshaping_loop_line);
  expect_error(at, "TS_WHILE: v has shape (2,) before the loop, but shape (?,) after one "
                   "iteration");
  g_free(at);
  ts_function_free(f);
  ts_scope_end(scope);
}

static void test_trace_errors(void)
{
  static const struct {
    const char *name;
    ts_fn fn;
    bool vector;     /* called with i32[2] instead of a scalar */
    const char *message;
    bool has_line;
  } cases[] = {
    { "undefined_in_else", undefined_in_else, false,
      "TS_IF: y is undefined (NULL) at the end of the else branch but defined in the then branch",
      true },
    { "dtype_mismatch", dtype_mismatch, false,
      "TS_IF: x has dtype float32 in the then branch, but dtype int32 in the else branch", true },
    { "growing_loop", growing_loop, true,
      "TS_WHILE: x has shape (2,) before the loop, but shape (4,) after one iteration", true },
    { "retyping_loop", retyping_loop, false,
      "TS_WHILE: x has dtype int32 before the loop, but dtype float32 after one iteration", true },
    { "break_in_if", break_in_if, false,
      "TS_IF: `break` out of a TS_IF block is not supported (the statement cannot pass it on to "
      "an enclosing loop); use TS_BREAK", true },
    { "return_in_if", return_in_if, false,
      "TS_IF: return_in_if: `return` or `break` inside a TS_IF/TS_WHILE/TS_FOR block cannot be "
      "traced; use TS_RETURN(value) or TS_BREAK", true },
    { "break_in_while", break_in_while, false,
      "TS_WHILE: break_in_while: `return` or `break` inside a TS_IF/TS_WHILE/TS_FOR block cannot "
      "be traced; use TS_RETURN(value) or TS_BREAK", true },
    { "return_after_jump", return_after_jump, false,
      "TS_IF: return_after_jump: `return` or `break` inside a TS_IF/TS_WHILE/TS_FOR block cannot "
      "be traced; use TS_RETURN(value) or TS_BREAK", true },
    { "break_without_loop", break_without_loop, false,
      "TS_BREAK: outside a TS_WHILE or TS_FOR loop", true },
    { "break_in_host_loop", break_in_host_loop, false,
      "TS_WHILE: a TS_BREAK or TS_RETURN under a tensor condition cannot end this loop", true },
    { "break_in_loop_in_if", break_in_loop_in_if, false,
      "TS_IF: a TS_WHILE or TS_FOR loop inside this block was left by `break`", true },
    { "ambiguous", ambiguous, true,
      "TS_IF: the truth value of a tensor with more than one element is ambiguous (the "
      "condition has shape (2,))", true },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    ts_scope *scope = ts_scope_begin();
    ts_function *f = ts_function_new(cases[i].name, cases[i].fn, "x");
    ts_value arg = TS_TENSOR_VALUE(cases[i].vector
                                     ? ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 1, 2 })
                                     : ts_scalar_i32(3));
    g_assert_null(ts_function_call(f, &arg, 1));
    char *at = cases[i].has_line ? location(error_line) : NULL;
    expect_error(cases[i].message, at);
    g_free(at);
    g_assert_cmpint(ts_function_n_concrete(f), ==, 0);
    /* Nothing was left open: the next trace works. */
    ts_value ok = TS_TENSOR_VALUE(ts_scalar_i32(0));
    ts_function *sq = ts_function_new("square_if_positive", square_if_positive, "x");
    g_assert_cmpint(scalar_of(ts_function_call(sq, &ok, 1)), ==, 0);
    ts_function_free(sq);
    ts_function_free(f);
    ts_scope_end(scope);
  }
}

/* A value made in a branch and used after the block, without being listed. */
static int escaping_value_line;
static ts_tensor *escaping_value(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *y = x, *t = NULL;
  TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0)), &y) {
    t = ts_mul(x, x); /* not listed */ escaping_value_line = __LINE__;
    y = ts_add(t, x);
  } TS_END_IF;
  return ts_add(y, t);
}

static void test_escaping_value(void)
{
  ts_scope *s = ts_scope_begin();
  ts_value x = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 }));
  ts_function *f = ts_function_new("escaping_value", escaping_value, "x");
  g_assert_null(ts_function_call(f, &x, 1));
  char *at = location(escaping_value_line);
  expect_error(at, "'Mul' was made inside a TS_IF/TS_WHILE/TS_FOR block (If/then) and is used "
                   "after it; a value that leaves a block must be one of the block's listed "
                   "variables");
  g_free(at);
  ts_function_set_run_eagerly(f, 1); /* eagerly it is plain C */
  ts_tensor *out = ts_function_call(f, &x, 1);
  g_assert_cmpfloat(ts_tensor_get_f64(out, 1), ==, 10);
  ts_function_free(f);
  ts_scope_end(s);
}

/* Branches giving x different ranks: as tf.cond, the If's output has an
 * unknown rank, the ops after it too (a full reduction's scalar aside), and
 * each call gets the branch's own shape. */
static ts_tensor *rank_per_branch(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(x, ts_scalar_i32(0)), &x) {
    x = ts_reshape(ts_add(x, x), TS_SHAPE(1, 1));
  } TS_END_IF;
  ts_tensor *total = ts_reduce_sum(x, TS_ALL_AXES, false);
  return ts_add(ts_mul(x, ts_scalar_i32(10)), total);
}

static bool text_has(const ts_graph *g, const char *part);

static void test_rank_per_branch(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *f = ts_function_new("rank_per_branch", rank_per_branch, "x");
  for (int eager = 1; eager >= 0; eager--) {
    ts_value pos = TS_TENSOR_VALUE(ts_scalar_i32(3)), neg = TS_TENSOR_VALUE(ts_scalar_i32(-3));
    ts_tensor *y = call_in_mode(f, eager, &pos, 1);
    g_assert_nonnull(y);
    g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(1, 1)));
    g_assert_cmpint(ts_tensor_get_i64(y, 0), ==, 66);
    y = call_in_mode(f, eager, &neg, 1);
    g_assert_nonnull(y);
    g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SCALAR_SHAPE));
    g_assert_cmpint(ts_tensor_get_i64(y, 0), ==, -33);
  }
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  const ts_graph *g = only_graph(f);
  const ts_node *n = find_op(g, TS_OP_IF);
  g_assert_cmpint(ts_node_output_shape(n, 0).rank, ==, TS_RANK_UNKNOWN);
  g_assert_cmpint(ts_node_output_shape(find_op(g, TS_OP_MUL), 0).rank, ==, TS_RANK_UNKNOWN);
  g_assert_true(ts_shape_equal(ts_node_output_shape(find_op(g, TS_OP_REDUCE_SUM), 0), TS_SCALAR_SHAPE));
  g_assert_true(text_has(g, "i32[...]"));
  char *sig = ts_concrete_pretty_signature(ts_function_concrete(f, 0));
  g_assert_nonnull(strstr(sig, "shape=<unknown>"));
  free(sig);
  ts_function_free(f);
  ts_scope_end(s);
}

/* A value carried around a loop in a C variable that is not listed (other,
 * in the body and in the condition): eagerly and traced, an error naming
 * the loop and the line that made the value. */
static int carried_loop_line, carried_made_line;

static ts_tensor *carried_in_body(ts_call *c)
{
  ts_tensor *acc = ts_scalar_i32(0), *other = ts_scalar_i32(1), *i = NULL;
  carried_loop_line = __LINE__ + 1;
  TS_FOR (i, TS_RANGE(ts_scalar_i32(0), ts_arg(c, 0), ts_scalar_i32(1)), &acc) {
    acc = ts_add(acc, other);
    carried_made_line = __LINE__ + 1;
    other = ts_mul(other, ts_scalar_i32(2));
  }
  return acc;
}

static ts_tensor *carried_in_cond(ts_call *c)
{
  ts_tensor *n = ts_arg(c, 0), *acc = ts_scalar_i32(0);
  carried_loop_line = __LINE__ + 1;
  TS_WHILE (ts_less(acc, n), &acc) {
    carried_made_line = __LINE__ + 1;
    n = ts_sub(n, ts_scalar_i32(1));
    acc = ts_add(acc, ts_scalar_i32(1));
  }
  return acc;
}

/* The same loops with the value listed: both modes agree. */
static ts_tensor *listed_in_body(ts_call *c)
{
  ts_tensor *acc = ts_scalar_i32(0), *other = ts_scalar_i32(1), *i = NULL;
  TS_FOR (i, TS_RANGE(ts_scalar_i32(0), ts_arg(c, 0), ts_scalar_i32(1)), &acc, &other) {
    acc = ts_add(acc, other);
    other = ts_mul(other, ts_scalar_i32(2));
  }
  return acc;
}

static int64_t both_i32(ts_function *f, int32_t x);

static void test_carried_value(void)
{
  static const struct {
    const char *name;
    ts_fn fn;
    const char *kind, *made;
  } cases[] = {
    { "carried_in_body", carried_in_body, "TS_FOR", "Mul" },
    { "carried_in_cond", carried_in_cond, "TS_WHILE", "Sub" },
  };
  for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
    ts_scope *s = ts_scope_begin();
    ts_function *f = ts_function_new(cases[k].name, cases[k].fn, "n");
    for (int eager = 1; eager >= 0; eager--) {
      ts_value n = TS_TENSOR_VALUE(ts_scalar_i32(4));
      g_assert_null(call_in_mode(f, eager, &n, 1));
      /* eagerly at the op that uses it, traced where it was made */
      char *at = location(eager ? carried_made_line - 2 : carried_made_line);
      char *loop = g_strdup_printf("made by an iteration of the %s loop at %s:%d and is used by "
                                   "the next one; a value carried around a loop must be one of "
                                   "the loop's listed variables", cases[k].kind, __FILE__,
                                   carried_loop_line);
      ts_error *e = ts_error_take();
      g_assert_nonnull(e);
      if (!strstr(e->message, at) || !strstr(e->message, loop))
        g_error("%s (%s): unexpected error: %s", cases[k].name, eager ? "eager" : "graph",
                e->message);
      ts_error_free(e);
      g_free(loop);
      g_free(at);
    }
    ts_function_free(f);
    ts_scope_end(s);
  }
  ts_function *ok = ts_function_new("listed_in_body", listed_in_body, "n");
  g_assert_cmpint(both_i32(ok, 4), ==, 15);
  ts_function_free(ok);
}

/* ---- non-strict execution ------------------------------------------------------------- */

/* An If and a While nobody uses and whose blocks have no side effect: a
 * graph prunes them (so their errors never happen), as TensorFlow's
 * non-strict execution does; eagerly they run. */
static ts_tensor *unused_pure_blocks(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *y = ts_zeros_like(x), *i = ts_scalar_i32(0);
  TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0)), &y) {
    y = ts_gather(x, ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 7, 0 }), 0); /* out of range */
  } TS_END_IF;
  TS_WHILE (ts_less(i, ts_scalar_i32(3)), &i, &y) {
    y = ts_gather(x, ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 0, 9 }), 0); /* out of range */
    i = ts_add(i, ts_scalar_i32(1));
  }
  return ts_add(x, x);
}

/* The same If with a print inside: stateful, so it runs though unused. */
static ts_tensor *unused_printing_if(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *y = ts_zeros_like(x);
  TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0)), &y) {
    ts_print("branch ran");
    y = ts_add(x, x);
  } TS_END_IF;
  return x;
}

static void count_prints(const ts_event *ev, void *data)
{
  (*(int *)data)++;
}

static void test_non_strict(void)
{
  ts_scope *s = ts_scope_begin();
  ts_value x = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 }));
  ts_function *pure = ts_function_new("unused_pure_blocks", unused_pure_blocks, "x");
  ts_tensor *out = ts_function_call(pure, &x, 1);
  g_assert_false(ts_failed());
  g_assert_cmpfloat(ts_tensor_get_f64(out, 1), ==, 4);
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(pure, 0));
  int n_blocks = 0;
  for (int id = 0; id < ts_graph_n_nodes(g); id++) {
    const ts_node *n = ts_graph_node(g, id);
    if (ts_op_traits(ts_node_op(n)) & TS_OP_TRAIT_CONTROL_FLOW) {
      n_blocks++;
      g_assert_false(ts_node_is_stateful(n)); /* traced, shown, but not run */
    }
  }
  g_assert_cmpint(n_blocks, ==, 2);
  ts_function_set_run_eagerly(pure, 1);
  g_assert_null(ts_function_call(pure, &x, 1));
  expect_error("Gather", "is not in [0, 2)");

  int prints = 0;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_PRINT), count_prints, &prints);
  ts_function *printing = ts_function_new("unused_printing_if", unused_printing_if, "x");
  int quiet = test_quiet_begin();
  ts_function_call(printing, &x, 1);
  test_quiet_end(quiet);
  g_assert_false(ts_failed());
  g_assert_cmpint(prints, ==, 1);
  g = ts_concrete_graph(ts_function_concrete(printing, 0));
  for (int k = 0; k < ts_graph_n_nodes(g); k++)
    if (ts_node_op(ts_graph_node(g, k)) == TS_OP_IF)
      g_assert_true(ts_node_is_stateful(ts_graph_node(g, k)));
  ts_listener_remove(id);
  ts_function_free(printing);
  ts_function_free(pure);
  ts_scope_end(s);
}


/* ---- jumps ----------------------------------------------------------------------------------- */

/* f(args) in both modes, eager first; returns the graph mode's value. */
static int64_t both_modes(ts_function *f, const ts_value *args, int n)
{
  int64_t eager = scalar_of(call_in_mode(f, true, args, n));
  int64_t graph = scalar_of(call_in_mode(f, false, args, n));
  g_assert_cmpint(eager, ==, graph);
  return graph;
}

static int64_t both_i32(ts_function *f, int32_t x)
{
  ts_value arg = TS_TENSOR_VALUE(ts_scalar_i32(x));
  return both_modes(f, &arg, 1);
}

static void on_op_end(const ts_event *ev, void *data)
{
  if (ev->kind == TS_EVENT_OP_END)
    g_ptr_array_add(data, g_memdup2(&ev->op, sizeof ev->op));
}

/* Every eager op of f(args) finds the node it became in f's graph: code
 * guarded after a jump keeps its op identity. */
static void check_twins(ts_function *f, const ts_value *args, int n)
{
  GPtrArray *events = g_ptr_array_new_with_free_func(g_free);
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_op_end, events);
  g_assert_nonnull(ts_function_call_eager(f, args, n));
  ts_listener_remove(id);
  g_assert_cmpuint(events->len, >, 0);
  for (guint i = 0; i < events->len; i++) {
    const ts_op_event *e = events->pdata[i];
    if (!e->traced)
      g_error("%s: eager %s at line %d has no twin", ts_function_name(f), e->op_name, e->loc.line);
    g_assert_cmpint(ts_node_op(e->traced), ==, e->op);
    g_assert_cmpint(ts_node_loc(e->traced).line, ==, e->loc.line);
  }
  g_ptr_array_unref(events);
}

static bool text_has(const ts_graph *g, const char *part)
{
  char *text = ts_graph_to_text(g);
  bool has = strstr(text, part) != NULL;
  g_free(text);
  return has;
}

/* TS_BREAK: the loop gets a "broke" variable folded into its condition; the
 * rest of the body is guarded by an If on not broke. */
static void test_break(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *f = ts_function_new("first_square_over", first_square_over, "limit");
  g_assert_cmpint(both_i32(f, 10), ==, 4);
  g_assert_cmpint(both_i32(f, 0), ==, 1);
  g_assert_cmpint(both_i32(f, 100000), ==, 100);
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  const ts_node *w = find_op(only_graph(f), TS_OP_WHILE);
  const ts_graph *cond = ts_node_subgraph(w, 0), *body = ts_node_subgraph(w, 1);
  g_assert_cmpint(ts_node_n_inputs(w), ==, 3); /* i, broke, limit */
  g_assert_true(text_has(cond, "cond(i: i32[], broke: bool[], "));
  g_assert_cmpint(ts_graph_output(cond, 0).node, ==, ts_node_id(find_op(cond, TS_OP_LOGICAL_AND)));
  g_assert_nonnull(find_op(cond, TS_OP_LOGICAL_NOT));
  g_assert_cmpint(count_op(body, TS_OP_IF), ==, 2); /* the TS_IF, and the guard of i + 1 */
  const ts_node *guard = ts_graph_node(body, ts_graph_output(body, 0).node);
  g_assert_cmpint(ts_node_op(guard), ==, TS_OP_IF);
  g_assert_nonnull(find_op(ts_node_subgraph(guard, 0), TS_OP_ADD));
  g_assert_null(find_op(ts_node_subgraph(guard, 1), TS_OP_ADD));
  ts_value ten = TS_TENSOR_VALUE(ts_scalar_i32(10));
  check_twins(f, &ten, 1);

  /* In nested loops it ends the inner one. */
  ts_function *t = ts_function_new("triangle", triangle, "n");
  g_assert_cmpint(both_i32(t, 4), ==, 10);
  g_assert_cmpint(both_i32(t, 0), ==, 0);
  const ts_node *outer = find_op(only_graph(t), TS_OP_WHILE);
  g_assert_false(text_has(ts_node_subgraph(outer, 0), "broke"));
  const ts_node *inner = find_op(ts_node_subgraph(outer, 1), TS_OP_WHILE);
  g_assert_true(text_has(ts_node_subgraph(inner, 0), "broke: bool[]"));
  ts_value four = TS_TENSOR_VALUE(ts_scalar_i32(4));
  check_twins(t, &four, 1);

  /* Under a host condition while tracing the break is certain: the code
   * after it is not traced and the loop stops after one iteration. */
  ts_function *h = ts_function_new("sum_or_first", sum_or_first, "n, first_only");
  for (int first_only = 0; first_only < 2; first_only++) {
    ts_value args[] = { TS_TENSOR_VALUE(ts_scalar_i32(4)), TS_INT_VALUE(first_only) };
    g_assert_cmpint(both_modes(h, args, 2), ==, first_only ? 5 : 4011);
  }
  const ts_node *hw = find_op(ts_concrete_graph(ts_function_concrete(h, 1)), TS_OP_WHILE);
  g_assert_cmpint(count_op(ts_node_subgraph(hw, 1), TS_OP_IF), ==, 0);
  g_assert_false(text_has(ts_node_subgraph(hw, 1), "value=1000"));
  g_assert_true(text_has(ts_node_subgraph(hw, 0), "broke: bool[]"));

  /* With no loop around it, TS_BREAK is an error in both modes. */
  ts_function *nl = ts_function_new("break_without_loop", break_without_loop, "x");
  for (int eager = 1; eager >= 0; eager--) {
    ts_value three = TS_TENSOR_VALUE(ts_scalar_i32(3));
    g_assert_null(call_in_mode(nl, eager, &three, 1));
    char *at = location(error_line);
    expect_error("TS_BREAK: outside a TS_WHILE or TS_FOR loop", at);
    g_free(at);
  }
  g_assert_false(ts_failed());
  ts_function_free(f);
  ts_function_free(t);
  ts_function_free(h);
  ts_function_free(nl);
  ts_scope_end(scope);
}

/* TS_CONTINUE: the rest of the body is guarded; the loop keeps its variables. */
static void test_continue(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *f = ts_function_new("positives", positives, "items");
  ts_value items = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(5), (int32_t[]){ 3, -1, 0, 4, -7 }));
  g_assert_cmpint(both_modes(f, &items, 1), ==, 702);
  const ts_node *w = find_op(only_graph(f), TS_OP_WHILE);
  g_assert_null(find_op(ts_node_subgraph(w, 0), TS_OP_LOGICAL_AND));
  g_assert_false(text_has(only_graph(f), "broke"));
  const ts_graph *body = ts_node_subgraph(w, 1);
  g_assert_cmpint(count_op(body, TS_OP_IF), ==, 2);
  g_assert_cmpint(ts_node_n_outputs(w), ==, ts_node_n_inputs(w));
  check_twins(f, &items, 1);
  ts_value none = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ -3, 0 }));
  g_assert_cmpint(both_modes(f, &none, 1), ==, 0);

  /* A side effect after the jump runs only where it did not happen. */
  tally_var = ts_variable_new(ts_scalar_i32(0), "tally");
  ts_function *t = ts_function_new("tally", tally, "items");
  for (int eager = 1; eager >= 0; eager--) {
    ts_assign(tally_var, ts_scalar_i32(0));
    g_assert_cmpint(scalar_of(call_in_mode(t, eager, &items, 1)), ==, 7 + 5000);
  }
  const ts_node *guard = find_op(ts_node_subgraph(find_op(only_graph(t), TS_OP_WHILE), 1),
                                 TS_OP_IF);
  g_assert_nonnull(guard);
  ts_function_free(t);
  ts_tensor_unref(tally_var);

  /* Outside any function, eagerly: jumps are plain control flow, and the
   * code after a jump runs no op, stateful ones included (1 + 3 + 5 + 7). */
  ts_tensor *i = ts_scalar_i32(0), *odd = ts_scalar_i32(0);
  ts_tensor *total = ts_variable_new(ts_scalar_i32(0), "total");
  TS_WHILE (ts_less(i, ts_scalar_i32(100)), &i, &odd) {
    i = ts_add(i, ts_scalar_i32(1));
    TS_IF (ts_equal(ts_mod(i, ts_scalar_i32(2)), ts_scalar_i32(0)), &i) {
      TS_CONTINUE;
    } TS_END_IF;
    TS_IF (ts_greater(i, ts_scalar_i32(7)), &i) {
      TS_BREAK;
    } TS_END_IF;
    odd = ts_add(odd, i);
    ts_assign_add(total, i);
  }
  g_assert_cmpint(ts_tensor_get_i64(i, 0), ==, 9);
  g_assert_cmpint(ts_tensor_get_i64(odd, 0), ==, 16);
  g_assert_cmpint(ts_tensor_get_i64(ts_read(total), 0), ==, 16);
  ts_tensor_unref(total);
  g_assert_false(ts_tracing());
  g_assert_false(ts_failed());
  ts_function_free(f);
  ts_scope_end(scope);
}

/* TS_RETURN: a returned flag and the value leave the loop (folded into its
 * condition) or the TS_IF; the code after them is guarded to the end of
 * the function. */
static void test_return(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *f = ts_function_new("index_of", index_of, "items, target, n");
  ts_tensor *items = ts_constant(TS_I32, TS_SHAPE(4), (int32_t[]){ 5, 8, 8, 2 });
  int32_t targets[] = { 8, 2, 7 };
  int64_t want[] = { 11, 33, 4 - 100 };
  ts_value args[3];
  for (int k = 0; k < 3; k++) {
    ts_value a[] = { TS_TENSOR_VALUE(items), TS_TENSOR_VALUE(ts_scalar_i32(targets[k])),
                     TS_TENSOR_VALUE(ts_scalar_i32(4)) };
    memcpy(args, a, sizeof a);
    g_assert_cmpint(both_modes(f, args, 3), ==, want[k]);
  }
  g_assert_cmpint(ts_function_trace_count(f), ==, 1);
  const ts_graph *g = only_graph(f);
  const ts_node *w = find_op(g, TS_OP_WHILE);
  g_assert_true(text_has(ts_node_subgraph(w, 0),
                         "cond(counter: i64[], seen: i32[], returned: bool[], retval: i32[]"));
  g_assert_nonnull(find_op(ts_node_subgraph(w, 0), TS_OP_LOGICAL_AND));
  /* After the loop, `seen - 100` runs only where nothing returned. */
  const ts_node *guard = ts_graph_node(g, ts_graph_output(g, 0).node);
  g_assert_cmpint(ts_node_op(guard), ==, TS_OP_IF);
  g_assert_nonnull(find_op(ts_node_subgraph(guard, 0), TS_OP_SUB));
  check_twins(f, args, 3);

  ts_function *b = ts_function_new("bend", bend, "x");
  g_assert_cmpint(both_i32(b, -20), ==, -100);
  g_assert_cmpint(both_i32(b, -3), ==, 3);
  g_assert_cmpint(both_i32(b, 5), ==, 10);
  const ts_graph *bg = only_graph(b);
  g_assert_cmpint(count_op(bg, TS_OP_IF), ==, 2); /* the TS_IF, the guard of x * 2 */
  const ts_node *outer_if = find_op(bg, TS_OP_IF);
  g_assert_cmpint(count_op(ts_node_subgraph(outer_if, 0), TS_OP_IF), ==, 2);
  g_assert_cmpint(ts_node_n_outputs(outer_if), ==, 3); /* x, returned, retval */
  ts_value minus3 = TS_TENSOR_VALUE(ts_scalar_i32(-3));
  check_twins(b, &minus3, 1);

  ts_function *o = ts_function_new("first_odd_times_3", first_odd_times_3, "x");
  g_assert_cmpint(both_i32(o, 4), ==, 15);
  g_assert_cmpint(both_i32(o, 7), ==, 21);

  /* Out of a TS_WHILE: returned and retval join its variables. */
  ts_function *h = ts_function_new("halvings", halvings, "x");
  g_assert_cmpint(both_i32(h, 12), ==, 2);
  g_assert_cmpint(both_i32(h, 7), ==, 0);
  g_assert_cmpint(both_i32(h, 0), ==, -1);
  const ts_node *hw = find_op(only_graph(h), TS_OP_WHILE);
  g_assert_true(text_has(ts_node_subgraph(hw, 0), "cond(x: i32[], n: i32[], returned: bool[], "
                                                  "retval: i32[]"));
  ts_value twelve = TS_TENSOR_VALUE(ts_scalar_i32(12));
  check_twins(h, &twelve, 1);

  /* Every path returns: the code after the TS_IF is never needed. */
  ts_function *pm = ts_function_new("plus_or_minus_one", plus_or_minus_one, "x");
  g_assert_cmpint(both_i32(pm, 3), ==, 1);
  g_assert_cmpint(both_i32(pm, -3), ==, -1);
  ts_function_free(h);
  ts_function_free(pm);
  g_assert_false(ts_failed());
  ts_function_free(f);
  ts_function_free(b);
  ts_function_free(o);
  ts_scope_end(scope);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  serial_check_install();
  g_test_add_func("/control-flow/eager/if", test_eager_if);
  g_test_add_func("/control-flow/eager/loops", test_eager_loops);
  g_test_add_func("/control-flow/eager/errors", test_eager_errors);
  g_test_add_func("/control-flow/eager/loop-stops", test_eager_loop_stops);
  g_test_add_func("/control-flow/eager/loop-memory", test_eager_loop_memory);
  g_test_add_func("/control-flow/range-trip-count", test_range_trip_count);
  g_test_add_func("/control-flow/traced/if", test_traced_if);
  g_test_add_func("/control-flow/traced/loops", test_traced_loops);
  g_test_add_func("/control-flow/traced/side-effects", test_side_effects);
  g_test_add_func("/control-flow/traced/non-strict", test_non_strict);
  g_test_add_func("/control-flow/traced/escaping-value", test_escaping_value);
  g_test_add_func("/control-flow/carried-value", test_carried_value);
  g_test_add_func("/control-flow/traced/rank-per-branch", test_rank_per_branch);
  g_test_add_func("/control-flow/traced/errors", test_trace_errors);
  g_test_add_func("/control-flow/traced/failed-loop-then-if", test_failed_loop_then_if);
  g_test_add_func("/control-flow/jumps/break", test_break);
  g_test_add_func("/control-flow/jumps/continue", test_continue);
  g_test_add_func("/control-flow/jumps/return", test_return);
  return g_test_run();
}
