/* test-schedule.c — what a plan decides besides memory.  Inter-op
 * parallelism (engine/exec/schedule.c): a graph's independent heavy ops
 * run at once on the engine's threads, with the same results bit for bit
 * as one at a time; light ops, one op far bigger than the rest, and ops
 * with effects are left as they are; a failing op of a group fails the
 * call with its own error.  Data parallelism (engine/exec/rows.c): runs
 * of ops that treat a batch's rows independently are split by rows across
 * the threads, again with the same bits at every thread count.  Watching
 * (a listener, health mode) changes neither the schedule nor the bits,
 * and hears of every op, a row run's once per part, from the threads that
 * ran them, one event at a time.  Kernel choices: made when the plan is. */
#include <glib.h>
#include <math.h>
#include <string.h>
#include <pthread.h>
#include <tracescope-debug.h>
#include <tracescope.h>

#include "test-errors.h"

static ts_tensor *random_tensor(ts_shape shape, int seed)
{
  ts_tensor *t = ts_random_uniform(TS_F32, shape, -1, 1, seed);
  assert_no_error();
  return t;
}

static void assert_same_bits(ts_tensor *a, ts_tensor *b)
{
  assert_no_error();
  g_assert_nonnull(a);
  g_assert_nonnull(b);
  g_assert_true(ts_shape_equal(ts_tensor_shape(a), ts_tensor_shape(b)));
  g_assert_cmpmem(ts_tensor_data(a), ts_tensor_size(a) * 4, ts_tensor_data(b), ts_tensor_size(b) * 4);
}

static ts_schedule schedule_of(ts_function *fn, ts_value *args, int n)
{
  ts_concrete *cf = ts_function_get_concrete(fn, args, n);
  assert_no_error();
  ts_schedule s;
  g_assert_true(ts_concrete_schedule(cf, &s));
  return s;
}

static ts_tensor *call(ts_function *fn, ts_value *args, int n, int threads)
{
  g_assert_true(ts_set_threads(threads));
  ts_tensor *out = ts_function_call(fn, args, n);
  assert_no_error();
  return out;
}

/* ---- functions ------------------------------------------------------------------ */

/* Three branches of two matmuls each over one input, summed: the first
 * matmuls of the branches are one level, their second ones the next. */
static ts_tensor *branches(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *w = ts_arg(c, 1);
  ts_tensor *sum = NULL;
  for (int b = 0; b < 3; b++) {
    ts_tensor *h = ts_relu(ts_matmul(ts_mul(x, ts_scalar_f32((float)(b + 2))), w));
    h = ts_matmul(h, w);
    sum = sum ? ts_add(sum, h) : h;
  }
  return sum;
}

/* Two independent matmuls of very different sizes. */
static ts_tensor *lopsided(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *w = ts_arg(c, 1), *small = ts_arg(c, 2);
  ts_tensor *big = ts_reduce_sum(ts_matmul(x, w), TS_ALL_AXES, false);
  ts_tensor *tiny = ts_reduce_sum(ts_matmul(small, small), TS_ALL_AXES, false);
  return ts_add(big, tiny);
}

/* A variable assigned between two reads, beside independent matmuls. */
static ts_tensor *var_v;

static ts_tensor *with_effects(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *before = ts_matmul(x, ts_read(var_v));
  ts_assign(var_v, ts_add(ts_read(var_v), ts_scalar_f32(1)));
  ts_tensor *after = ts_matmul(x, ts_read(var_v));
  return ts_sub(after, before);
}

/* Two branches, each with a weight of its own in a variable. */
static ts_tensor *var_a, *var_b;

static ts_tensor *two_layers(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  return ts_add(ts_relu(ts_matmul(x, ts_read(var_a))), ts_relu(ts_matmul(x, ts_read(var_b))));
}

/* A model on a batch: flatten, six Dense layers with weights in
 * variables (one layer's weight added to its input, by rows), a
 * sum over the batch at the end (not a row op: the run's exit). */
static ts_tensor *var_w[6], *var_bias;

static ts_tensor *layers(ts_call *c)
{
  ts_tensor *h = ts_flatten(ts_arg(c, 0));
  for (int i = 0; i < 6; i++)
    h = ts_relu(ts_add(ts_matmul(h, ts_read(var_w[i])), ts_read(var_bias)));
  ts_tensor *scaled = ts_mul(h, ts_arg(c, 1)); /* [B, 1]: by rows */
  return ts_reduce_sum(scaled, TS_AXES(0), false);
}

/* h @ x and h + x with x [B, B]: x read whole and by rows, so no split. */
static ts_tensor *both_ways(ts_call *c)
{
  ts_tensor *h = ts_arg(c, 0), *x = ts_arg(c, 1);
  for (int i = 0; i < 4; i++)
    h = ts_add(ts_matmul(h, x), x);
  return h;
}

/* Two heavy gathers, the second with an index out of range. */
static ts_tensor *two_gathers(ts_call *c)
{
  ts_tensor *params = ts_arg(c, 0), *good = ts_arg(c, 1), *bad = ts_arg(c, 2);
  return ts_add(ts_gather(params, good, 0), ts_gather(params, bad, 0));
}

/* ---- tests ---------------------------------------------------------------------- */

static void test_branches(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("branches", branches, "x, w");
  ts_value args[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(96, 128), 1)),
                      TS_TENSOR_VALUE(random_tensor(TS_SHAPE(128, 128), 2)) };
  ts_schedule s = schedule_of(fn, args, 2);
  g_assert_cmpint(s.n_groups, ==, 2);
  g_assert_cmpint(s.n_grouped, ==, 6);
  char *text = ts_concrete_schedule_describe(ts_function_get_concrete(fn, args, 2));
  g_assert_nonnull(strstr(text, "; at once: "));
  g_assert_nonnull(strstr(text, "MatMul"));
  free(text);

  /* one thread: the groups' ops one by one, the reference */
  ts_tensor *one = call(fn, args, 2, 1);
  g_assert_cmpint(schedule_of(fn, args, 2).n_shared, ==, 0);
  ts_run_functions_eagerly(true);
  ts_tensor *eager = call(fn, args, 2, 1);
  ts_run_functions_eagerly(false);
  assert_same_bits(one, eager);

  /* two threads: the same bits every call, until a group's op has run on
   * the pool's other thread (it spins for the next job, so this comes
   * within a few calls; the bound is only a safety net) */
  for (int i = 0; i < 10000 && schedule_of(fn, args, 2).n_shared == 0; i++)
    assert_same_bits(call(fn, args, 2, 2), one);
  g_assert_cmpint(schedule_of(fn, args, 2).n_shared, >, 0);
  assert_same_bits(call(fn, args, 2, 2), one);
  ts_set_threads(0);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* Tracing chains the reads by control edges in program order; the
 * branches run at once all the same, and see their variables' values. */
static void test_variable_branches(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *a0 = random_tensor(TS_SHAPE(128, 128), 11), *b0 = random_tensor(TS_SHAPE(128, 128), 12);
  var_a = ts_variable_new(a0, "a");
  var_b = ts_variable_new(b0, "b");
  ts_function *fn = ts_function_new("two_layers", two_layers, "x");
  ts_value args[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(96, 128), 13)) };
  g_assert_cmpint(schedule_of(fn, args, 1).n_groups, ==, 1);
  ts_tensor *one = call(fn, args, 1, 1);
  for (int i = 0; i < 10000 && schedule_of(fn, args, 1).n_shared == 0; i++)
    assert_same_bits(call(fn, args, 1, 2), one);
  g_assert_cmpint(schedule_of(fn, args, 1).n_shared, >, 0);
  /* a new value is what the next call reads */
  ts_assign(var_b, ts_neg(b0));
  ts_tensor *x = args[0].tensor;
  ts_tensor *expected = ts_add(ts_relu(ts_matmul(x, a0)), ts_relu(ts_matmul(x, ts_neg(b0))));
  assert_same_bits(call(fn, args, 1, 2), expected);
  ts_set_threads(0);
  ts_function_free(fn);
  ts_tensor_unref(var_a);
  ts_tensor_unref(var_b);
  ts_scope_end(scope);
}

static void test_light_and_lopsided(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("branches", branches, "x, w");
  ts_value small[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(4, 8), 3)),
                       TS_TENSOR_VALUE(random_tensor(TS_SHAPE(8, 8), 4)) };
  g_assert_cmpint(schedule_of(fn, small, 2).n_groups, ==, 0);
  char *text = ts_concrete_schedule_describe(ts_function_get_concrete(fn, small, 2));
  g_assert_nonnull(strstr(text, "one at a time"));
  free(text);
  ts_function_free(fn);

  fn = ts_function_new("lopsided", lopsided, "x, w, small");
  ts_value args[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(256, 256), 5)),
                      TS_TENSOR_VALUE(random_tensor(TS_SHAPE(256, 256), 6)),
                      TS_TENSOR_VALUE(random_tensor(TS_SHAPE(80, 80), 7)) };
  g_assert_cmpint(schedule_of(fn, args, 3).n_groups, ==, 0);
  ts_function_free(fn);
  ts_scope_end(scope);
}

static void test_effects_keep_order(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *v0 = random_tensor(TS_SHAPE(128, 128), 8);
  var_v = ts_variable_new(v0, "v");
  assert_no_error();
  ts_function *fn = ts_function_new("with_effects", with_effects, "x");
  ts_tensor *x = random_tensor(TS_SHAPE(96, 128), 9);
  ts_value args[] = { TS_TENSOR_VALUE(x) };
  /* after - before = x @ ones: the assign between the reads, every call */
  ts_tensor *expected = ts_matmul(x, ts_ones(TS_F32, TS_SHAPE(128, 128)));
  for (int k = 0; k < 4; k++) {
    ts_tensor *got = call(fn, args, 1, 2);
    for (int64_t i = 0; i < ts_tensor_size(expected); i++)
      g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(got, i), ts_tensor_get_f64(expected, i), 1e-3);
  }
  /* the two matmuls read the variable on either side of the assign */
  g_assert_cmpint(schedule_of(fn, args, 1).n_groups, ==, 0);
  ts_set_threads(0);
  ts_function_free(fn);
  ts_tensor_unref(var_v);
  ts_scope_end(scope);
}

static void test_failing_op(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("two_gathers", two_gathers, "params, good, bad");
  int32_t good[2048], bad[2048];
  for (int i = 0; i < 2048; i++)
    good[i] = bad[i] = i % 1000;
  bad[1500] = 1000; /* one past the end */
  ts_value args[] = {
    TS_TENSOR_VALUE(random_tensor(TS_SHAPE(1000, 600), 10)),
    TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(2048), good)),
    TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(2048), bad)),
  };
  g_assert_cmpint(schedule_of(fn, args, 3).n_groups, ==, 1);
  for (int threads = 1; threads <= 2; threads++) {
    g_assert_true(ts_set_threads(threads));
    for (int k = 0; k < 3; k++) {
      g_assert_null(ts_function_call(fn, args, 3));
      expect_error_containing("1000");
    }
  }
  ts_set_threads(0);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* Did the engine choose its own kernel for the layers' "matmul Rx128x128"
 * (the condition of a split: OpenBLAS's sums depend on the rows)? */
static bool own_kernels(int64_t rows)
{
  char *choices = ts_kernel_choices(), want[64];
  g_snprintf(want, sizeof want, "matmul %" G_GINT64_FORMAT "x128x128: own", rows);
  bool own = strstr(choices, want) || strstr(ts_blas_description(), "own kernels only");
  free(choices);
  return own;
}

/* The layers split by rows (when the kernels allow: TRACESCOPE_BLAS=off,
 * the test-schedule-own-kernels run, makes sure they do). */
static bool expect_split(ts_function *fn, ts_value *args, int n, int64_t rows)
{
  ts_schedule s = schedule_of(fn, args, n);
  if (!own_kernels(rows)) {
    g_assert_cmpint(s.n_row_runs, ==, 0);
    return false;
  }
  g_assert_cmpint(s.n_row_runs, ==, 1);
  g_assert_cmpint(s.n_row_ops, >=, 8);
  char *text = ts_concrete_schedule_describe(ts_function_get_concrete(fn, args, n));
  char want[32];
  g_snprintf(want, sizeof want, "; by rows of %" G_GINT64_FORMAT ": ", rows);
  g_assert_nonnull(strstr(text, want));
  free(text);
  return true;
}

static void test_row_runs(void)
{
  ts_scope *scope = ts_scope_begin();
  for (int i = 0; i < 6; i++)
    var_w[i] = ts_variable_new(random_tensor(TS_SHAPE(128, 128), 20 + i), "w");
  var_bias = ts_variable_new(random_tensor(TS_SHAPE(128), 30), "bias");
  ts_function *fn = ts_function_new("layers", layers, "x, scale");
  /* batches of 24 and 9 rows (parts of 12 and of 4 and 5) */
  int64_t batches[] = { 24, 9 };
  for (int b = 0; b < 2; b++) {
    int64_t rows = batches[b];
    ts_value args[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(rows, 8, 16), 31)),
                        TS_TENSOR_VALUE(random_tensor(TS_SHAPE(rows, 1), 32)) };
    bool split = expect_split(fn, args, 2, rows);
    ts_tensor *one = call(fn, args, 2, 1);
    ts_run_functions_eagerly(true);
    assert_same_bits(call(fn, args, 2, 1), one);
    ts_run_functions_eagerly(false);
    int64_t before = schedule_of(fn, args, 2).n_shared;
    for (int i = 0; split && i < 10000 && schedule_of(fn, args, 2).n_shared == before; i++)
      assert_same_bits(call(fn, args, 2, 2), one);
    g_assert_cmpint(schedule_of(fn, args, 2).n_shared, >, split ? before : -1);
    assert_same_bits(call(fn, args, 2, 2), one);
  }
  /* too few rows for two parts, or too little work: one at a time */
  ts_value few[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(6, 8, 16), 33)),
                     TS_TENSOR_VALUE(random_tensor(TS_SHAPE(6, 1), 34)) };
  g_assert_cmpint(schedule_of(fn, few, 2).n_row_runs, ==, 0);
  ts_set_threads(0);
  ts_function_free(fn);
  for (int i = 0; i < 6; i++)
    ts_tensor_unref(var_w[i]);
  ts_tensor_unref(var_bias);
  ts_scope_end(scope);
}

static void test_read_both_ways(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("both_ways", both_ways, "h, x");
  ts_value args[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(128, 128), 35)),
                      TS_TENSOR_VALUE(random_tensor(TS_SHAPE(128, 128), 36)) };
  ts_schedule s = schedule_of(fn, args, 2);
  g_assert_cmpint(s.n_row_runs, ==, 0);
  ts_tensor *one = call(fn, args, 2, 1);
  ts_tensor *two = call(fn, args, 2, 2);
  /* Same bits, unless the tuner (timing under whatever load the machine
   * has) gave the shape to OpenBLAS, whose threaded products differ in
   * their last bits (docs/engine.md#threads). */
  char *choices = ts_kernel_choices();
  if (strstr(choices, "matmul 128x128x128: OpenBLAS")) {
    const float *a = ts_tensor_data(two), *b = ts_tensor_data(one);
    float scale = 1;
    for (int64_t i = 0; i < ts_tensor_size(one); i++)
      scale = fmaxf(scale, fabsf(b[i]));
    for (int64_t i = 0; i < ts_tensor_size(one); i++)
      g_assert_cmpfloat_with_epsilon(a[i], b[i], 1e-5 * scale);
  } else {
    assert_same_bits(two, one);
  }
  free(choices);
  ts_set_threads(0);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* A matmul of a shape nothing else here uses. */
static ts_tensor *odd_matmul(ts_call *c)
{
  return ts_relu(ts_matmul(ts_arg(c, 0), ts_arg(c, 1)));
}

static int ops_seen;

static void count_op(const ts_event *ev, void *user_data)
{
  ops_seen++;
}

static void test_kernels_chosen_with_plan(void)
{
  if (strstr(ts_blas_description(), "own kernels only")) {
    g_test_skip("without OpenBLAS there is no kernel to choose");
    return;
  }
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("odd_matmul", odd_matmul, "x, w");
  ts_value specs[] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(37, 53)), TS_SPEC_VALUE(TS_F32, TS_SHAPE(53, 29)) };
  char *before = ts_kernel_choices();
  g_assert_null(strstr(before, "matmul 37x53x29"));
  free(before);
  /* traced and planned, never called: the choice is made, and unseen */
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), count_op, NULL);
  ts_function_get_concrete(fn, specs, 2);
  ts_listener_remove(id);
  assert_no_error();
  g_assert_cmpint(ops_seen, ==, 0);
  char *after = ts_kernel_choices();
  g_assert_nonnull(strstr(after, "matmul 37x53x29: "));
  free(after);
  /* a pending error is the caller's: planning neither clears nor replaces it */
  ts_error_set(TS_ERR_INVALID_ARGUMENT, TS_HERE, NULL, "the caller's own");
  ts_value other[] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(41, 53)), TS_SPEC_VALUE(TS_F32, TS_SHAPE(53, 29)) };
  ts_function_get_concrete(fn, other, 2);
  expect_error_containing("the caller's own");
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* ---- watching ---------------------------------------------------------------------- */

#define MAX_SEQ 256

/* A listener counting one call's op events per seq, and whether any came
 * from another thread than the caller's or while another was delivered,
 * and whether a read the run made itself did (a row run's parts tell
 * their shares of them, rows_item); the caller's events in time order. */
typedef struct heard {
  pthread_t caller;
  int inside;          /* atomic: callbacks running */
  bool overlapped;     /* two at once */
  bool other_thread;
  bool read_elsewhere; /* a read the run made itself heard from another thread */
  uint64_t caller_last; /* the start of the caller's last event: they come in time order */
  bool caller_back;
  int count[MAX_SEQ];
  int64_t elements[MAX_SEQ];
} heard;

static void on_op(const ts_event *ev, void *data)
{
  heard *h = data;
  if (__atomic_add_fetch(&h->inside, 1, __ATOMIC_SEQ_CST) != 1)
    h->overlapped = true;
  const ts_op_event *op = &ev->op;
  if (op->run_id && op->seq < MAX_SEQ) { /* the call's (the only one while it listens) */
    h->count[op->seq]++;
    for (int i = 0; i < op->n_outputs; i++)
      h->elements[op->seq] += ts_tensor_size(op->outputs[i]);
    bool caller = pthread_equal(pthread_self(), h->caller);
    h->other_thread |= !caller;
    h->read_elsewhere |= op->op == TS_OP_READ_VARIABLE && !caller;
    if (caller) {
      h->caller_back |= op->start_ns < h->caller_last;
      h->caller_last = op->start_ns;
    }
  }
  __atomic_sub_fetch(&h->inside, 1, __ATOMIC_SEQ_CST);
}

enum { NOBODY, LISTENER, HEALTH, HEALTH_STATS, WATCHERS };

/* One call of fn at `threads` threads under watcher w: its bits match
 * want, its schedule reads `described`, every op it runs (n_ops less the
 * n_inputs placeholders) is heard of, a row run's n_row_ops once per part
 * (parts), and health mode files one record per op.  Returns whether a
 * piece of it ran on another thread than the caller's (and the listener
 * heard of it from there). */
static bool watched_call(ts_function *fn, ts_value *args, int n, int n_inputs, int threads, int w,
                         ts_tensor *want, const char *described, int parts)
{
  g_assert_true(ts_set_threads(threads));
  ts_concrete *cf = ts_function_get_concrete(fn, args, n);
  heard *h = g_new0(heard, 1);
  h->caller = pthread_self();
  int id = w == LISTENER ? ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_op, h) : 0;
  ts_health *health = w == HEALTH || w == HEALTH_STATS
                        ? ts_health_start(w == HEALTH ? TS_HEALTH_COUNTS : TS_HEALTH_STATS)
                        : NULL;
  int64_t shared = schedule_of(fn, args, n).n_shared;
  ts_tensor *out = ts_function_call(fn, args, n);
  assert_no_error();
  if (id)
    ts_listener_remove(id);
  assert_same_bits(out, want);
  char *text = ts_concrete_schedule_describe(cf);
  g_assert_cmpstr(text, ==, described);
  free(text);
  ts_schedule s = schedule_of(fn, args, n);
  int ops = s.n_ops - n_inputs;
  if (id) {
    g_assert_false(h->overlapped);
    if (parts < 2) /* no part on another thread: the caller made and told them */
      g_assert_false(h->read_elsewhere);
    g_assert_false(h->caller_back);
    int per_part = 0;
    for (int seq = 1; seq <= ops; seq++) {
      g_assert_true(h->count[seq] == 1 || h->count[seq] == parts);
      per_part += h->count[seq] == parts && parts > 1;
    }
    g_assert_cmpint(h->count[ops + 1], ==, 0);
    g_assert_cmpint(per_part, ==, parts > 1 ? s.n_row_ops : 0);
  }
  if (health) {
    ts_health_stop(health);
    g_assert_cmpint(ts_health_n_ops(health), ==, ops);
    for (int64_t i = 0; i < ops; i++) {
      const ts_health_op *r = ts_health_get(health, i);
      g_assert_cmpuint(r->seq, ==, (uint64_t)i + 1); /* in order, a step's parts as one */
      if (r->op == TS_OP_MATMUL || r->op == TS_OP_RELU) /* scanned whole */
        g_assert_cmpint(r->n_elements, >, 0);
    }
    g_assert_null(ts_health_first_nonfinite(health));
    ts_health_free(health);
  }
  /* a piece ran on another thread, and a listener heard of it from there
   * (a row run's reads too, often, but not always: the parts take them 16
   * at a time while any are left, and a caller quicker than the pool's
   * thread to wake takes them all, as a release build's mostly does) */
  bool other = s.n_shared > shared && (!id || h->other_thread);
  g_free(h);
  return other;
}

/* The layers (a row run when our kernels run them) and the branches (two
 * groups), watched and not, at 1 and 2 threads. */
static void test_watching_keeps_schedule(void)
{
  ts_scope *scope = ts_scope_begin();
  for (int i = 0; i < 6; i++)
    var_w[i] = ts_variable_new(random_tensor(TS_SHAPE(128, 128), 40 + i), "w");
  var_bias = ts_variable_new(random_tensor(TS_SHAPE(128), 50), "bias");
  ts_function *fns[] = { ts_function_new("layers", layers, "x, scale"),
                         ts_function_new("branches", branches, "x, w") };
  ts_value layer_args[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(24, 8, 16), 51)),
                            TS_TENSOR_VALUE(random_tensor(TS_SHAPE(24, 1), 52)) };
  ts_value branch_args[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(96, 128), 53)),
                             TS_TENSOR_VALUE(random_tensor(TS_SHAPE(128, 128), 54)) };
  ts_value *args[] = { layer_args, branch_args };
  for (int f = 0; f < 2; f++) {
    ts_function *fn = fns[f];
    bool split = f == 0 ? expect_split(fn, args[f], 2, 24) : false;
    if (f == 1)
      g_assert_cmpint(schedule_of(fn, args[f], 2).n_groups, ==, 2);
    ts_tensor *want = call(fn, args[f], 2, 1);
    char *described = ts_concrete_schedule_describe(ts_function_get_concrete(fn, args[f], 2));
    for (int threads = 1; threads <= 2; threads++)
      for (int w = NOBODY; w < WATCHERS; w++) {
        int parts = split && threads == 2 ? 2 : 1;
        /* until a piece has run on the pool's other thread, heard from there
         * (the bound is only a safety net) */
        bool other = false;
        for (int i = 0; i < 1000 && !other; i++) {
          other = watched_call(fn, args[f], 2, 2, threads, w, want, described, parts);
          other = other || threads == 1 || (!split && f == 0);
        }
        g_assert_true(other);
      }
    free(described);
  }
  ts_set_threads(0);
  for (int f = 0; f < 2; f++)
    ts_function_free(fns[f]);
  for (int i = 0; i < 6; i++)
    ts_tensor_unref(var_w[i]);
  ts_tensor_unref(var_bias);
  ts_scope_end(scope);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ts_memory_plan_set_poison(true); /* a buffer reused inside a group would show */
  g_test_add_func("/schedule/branches", test_branches);
  g_test_add_func("/schedule/variable-branches", test_variable_branches);
  g_test_add_func("/schedule/light-and-lopsided", test_light_and_lopsided);
  g_test_add_func("/schedule/effects-keep-order", test_effects_keep_order);
  g_test_add_func("/schedule/failing-op", test_failing_op);
  g_test_add_func("/schedule/row-runs", test_row_runs);
  g_test_add_func("/schedule/read-both-ways", test_read_both_ways);
  g_test_add_func("/schedule/kernels-chosen-with-plan", test_kernels_chosen_with_plan);
  g_test_add_func("/schedule/watching-keeps-schedule", test_watching_keeps_schedule);
  int rc = g_test_run();
  ts_release_all();
  return rc;
}
