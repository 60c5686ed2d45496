/* diverge.c — user code for the divergence finder (tests/test-diverge.c,
 * tracescope-cli diverge): the classic mistake of a tensor changed in a
 * TS_WHILE body but left out of its list, the same loop written right, and
 * differences the two modes are allowed to have (printing, folded
 * constants, variables). */
#include <tracescope.h>

/* x doubles on every iteration, but x is not listed: eagerly total sums
 * 2x + 4x + 8x; the traced body reads the x from before the loop, so the
 * graph sums 2x three times. */
static ts_tensor *unlisted_loop_var(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *i = ts_scalar_i32(0), *n = ts_scalar_i32(3), *total = ts_zeros_like(x);
  TS_WHILE (ts_less(i, n), &i, &total) {
    x = ts_mul(x, ts_scalar_f32(2));
    total = ts_add(total, x);
    i = ts_add(i, ts_scalar_i32(1));
  }
  return total;
}

/* The same mistake in a TS_FOR over a tensor range (a While node too). */
static ts_tensor *unlisted_for_var(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *total = ts_zeros_like(x), *i = NULL;
  TS_FOR (i, TS_RANGE(ts_scalar_i32(0), ts_cast(ts_reduce_sum(x, TS_ALL_AXES, false), TS_I32),
                      ts_scalar_i32(1)), &total) {
    x = ts_add(x, ts_cast(i, TS_F32));
    total = ts_add(total, x);
  }
  return total;
}

/* The same loop with x listed: both modes sum 2x + 4x + 8x. */
static ts_tensor *listed_loop_var(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *i = ts_scalar_i32(0), *n = ts_scalar_i32(3), *total = ts_zeros_like(x);
  TS_WHILE (ts_less(i, n), &i, &total, &x) {
    x = ts_mul(x, ts_scalar_f32(2));
    total = ts_add(total, x);
    i = ts_add(i, ts_scalar_i32(1));
  }
  return total;
}

/* Prints, and computes a constant the optimizer folds (1 + 2). */
static ts_tensor *print_and_fold(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *k = ts_add(ts_scalar_f32(1), ts_scalar_f32(2));
  ts_print("x:", x);
  return ts_mul(x, k);
}

/* A counter: each call adds x to it and returns the new value. */
static ts_tensor *counter;

__attribute__((destructor)) static void counter_release(void)
{
  ts_tensor_unref(counter);
}

static ts_tensor *count_up(ts_call *c)
{
  TS_INIT_SCOPE {
    if (!counter)
      counter = ts_variable_new(ts_zeros(TS_F32, TS_SHAPE(3)), "counter");
  }
  ts_tensor *now = ts_assign_add(counter, ts_arg(c, 0));
  return ts_mul(now, ts_scalar_f32(2));
}

/* Uses the variable itself (an implicit read) before and after an assign. */
static ts_tensor *read_around_assign(ts_call *c)
{
  TS_INIT_SCOPE {
    if (!counter)
      counter = ts_variable_new(ts_zeros(TS_F32, TS_SHAPE(3)), "counter");
  }
  ts_tensor *before = ts_add(counter, ts_arg(c, 0));
  ts_assign_add(counter, ts_arg(c, 0));
  ts_tensor *after = ts_add(counter, ts_arg(c, 0));
  return ts_add(before, after);
}

/* log of a negative number: NaN in both modes. */
static ts_tensor *log_of_negative(ts_call *c)
{
  return ts_add(ts_log(ts_neg(ts_arg(c, 0))), ts_scalar_f32(1));
}

TS_MODULE("divergence examples",
  TS_EXPORT_WITH(TS_EXAMPLE("f32[3]=1,2,3"), unlisted_loop_var, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[3]=1,2,3"), listed_loop_var, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[2]=1,2"), unlisted_for_var, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[3]=1,2,3"), print_and_fold, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[3]=1,2,3"), count_up, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[3]=1,2,3"), read_around_assign, x),
  TS_EXPORT_WITH(TS_EXAMPLE("f32[3]=1,2,3"), log_of_negative, x))
;
