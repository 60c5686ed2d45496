/* test-planner.c — the memory planner (engine/exec/planner.c): values with
 * disjoint lifetimes share arena bytes, elementwise ops write over inputs
 * that die there, dead buffers are poisoned and results stay right, a
 * tensor someone else holds keeps its values, unknown dims re-plan, two
 * threads calling one function get their own arenas, and a repeat call
 * allocates storage for its outputs only. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"

/* ---- helpers ---------------------------------------------------------------- */

static ts_tensor *random_tensor(ts_shape shape, int seed)
{
  ts_tensor *t = ts_random_uniform(TS_F32, shape, -1, 1, seed);
  assert_no_error();
  return t;
}

static void assert_close(ts_tensor *got, ts_tensor *expected)
{
  assert_no_error();
  g_assert_nonnull(got);
  g_assert_true(ts_shape_equal(ts_tensor_shape(got), ts_tensor_shape(expected)));
  for (int64_t i = 0; i < ts_tensor_size(expected); i++) {
    double a = ts_tensor_get_f64(got, i), b = ts_tensor_get_f64(expected, i);
    if (!(fabs(a - b) <= 1e-5 * (1 + fabs(b))))
      g_error("element %" G_GINT64_FORMAT ": %g, expected %g", i, a, b);
  }
}

/* fn called on args as a graph, and eagerly (the expected values). */
static ts_tensor *call_graph(ts_function *fn, ts_value *args, int n)
{
  ts_tensor *out = ts_function_call(fn, args, n);
  assert_no_error();
  return out;
}

static ts_tensor *call_eager(ts_function *fn, ts_value *args, int n)
{
  ts_run_functions_eagerly(true);
  ts_tensor *out = ts_function_call(fn, args, n);
  ts_run_functions_eagerly(false);
  assert_no_error();
  return out;
}

static ts_memory_plan plan_of(ts_function *fn, ts_value *args, int n)
{
  ts_concrete *cf = ts_function_get_concrete(fn, args, n);
  assert_no_error();
  ts_memory_plan plan;
  g_assert_true(ts_concrete_memory_plan(cf, &plan));
  return plan;
}

/* ---- functions --------------------------------------------------------------- */

/* Four matmuls in a row: a and c (and b and d) never live at once. */
static ts_tensor *chain(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *w = ts_arg(c, 1);
  ts_tensor *a = ts_matmul(x, w);
  ts_tensor *b = ts_matmul(a, w);
  ts_tensor *cc = ts_matmul(b, w);
  ts_tensor *d = ts_matmul(cc, w);
  return ts_reduce_sum(d, TS_ALL_AXES, false);
}

/* exp, then neg and mul over values that die there (in place). */
static ts_tensor *elementwise(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *y = ts_exp(ts_matmul(x, x));
  ts_tensor *z = ts_neg(y);
  ts_tensor *w = ts_mul(z, x);
  return ts_reduce_sum(ts_tanh(w), TS_ALL_AXES, false);
}

/* Layers over a reshaped input: a view whose base must outlive it. */
static ts_tensor *layers(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *w = ts_arg(c, 1);
  ts_tensor *h = ts_reshape(ts_add(x, x), TS_SHAPE(-1, 8));
  for (int i = 0; i < 4; i++)
    h = ts_relu(ts_add(ts_matmul(h, w), h));
  return ts_matmul(ts_reshape(h, TS_SHAPE(-1, 8)), w);
}

static void setup(void)
{
  ts_set_passes("none"); /* the graphs as written: nothing fused away */
  ts_memory_plan_set_poison(true);
}

/* ---- reuse ------------------------------------------------------------------- */

typedef struct pointers {
  GPtrArray *data; /* each MatMul's output data, in order */
} pointers;

static void on_matmul(const ts_event *ev, void *user_data)
{
  pointers *p = user_data;
  if (ev->op.op == TS_OP_MATMUL && ev->op.n_outputs == 1)
    g_ptr_array_add(p->data, ts_tensor_data(ev->op.outputs[0]));
}

static void test_reuse(void)
{
  setup();
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("chain", chain, "x, w");
  ts_value args[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(8, 8), 1)),
                      TS_TENSOR_VALUE(random_tensor(TS_SHAPE(8, 8), 2)) };
  ts_tensor *expected = call_eager(fn, args, 2);
  assert_close(call_graph(fn, args, 2), expected);

  /* a, b, c, d: 256 bytes each, two live at a time */
  ts_memory_plan plan = plan_of(fn, args, 2);
  g_assert_cmpint(plan.n_buffers, ==, 4);
  g_assert_cmpint(plan.unshared_bytes, ==, 4 * 256);
  g_assert_cmpint(plan.peak_bytes, ==, 2 * 256);
  g_assert_cmpint(plan.n_plans, ==, 1);
  char *text = ts_memory_plan_describe(&plan);
  g_assert_cmpstr(text, ==, "plan: 4 buffers, peak 512 bytes, 512 bytes saved by reuse");
  free(text);

  pointers p = { g_ptr_array_new() };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_matmul, &p);
  assert_close(call_graph(fn, args, 2), expected);
  ts_listener_remove(id);
  g_assert_cmpuint(p.data->len, ==, 4);
  g_assert_true(p.data->pdata[0] == p.data->pdata[2]);
  g_assert_true(p.data->pdata[1] == p.data->pdata[3]);
  g_assert_true(p.data->pdata[0] != p.data->pdata[1]);
  g_ptr_array_free(p.data, TRUE);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* A reshape's base stays in place as long as the view is read. */
static void test_views(void)
{
  setup();
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("layers", layers, "x, w");
  ts_value args[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(4, 2, 8), 3)),
                      TS_TENSOR_VALUE(random_tensor(TS_SHAPE(8, 8), 4)) };
  ts_tensor *expected = call_eager(fn, args, 2);
  for (int i = 0; i < 3; i++)
    assert_close(call_graph(fn, args, 2), expected);
  ts_memory_plan plan = plan_of(fn, args, 2);
  g_assert_cmpint(plan.n_buffers, >, 8);
  g_assert_cmpint(plan.peak_bytes, <, plan.unshared_bytes);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* ---- in place ------------------------------------------------------------------ */

static void test_inplace(void)
{
  setup();
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("elementwise", elementwise, "x");
  ts_value args[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(16, 16), 5)) };
  ts_tensor *expected = call_eager(fn, args, 1);
  for (int i = 0; i < 3; i++)
    assert_close(call_graph(fn, args, 1), expected);
  /* exp over the matmul, neg over exp, mul over neg, tanh over mul */
  ts_memory_plan plan = plan_of(fn, args, 1);
  g_assert_cmpint(plan.n_buffers, ==, 5);
  g_assert_cmpint(plan.n_inplace, ==, 4);
  g_assert_cmpint(plan.peak_bytes, ==, 16 * 16 * 4);
  char *text = ts_memory_plan_describe(&plan);
  g_assert_cmpstr(text, ==, "plan: 5 buffers (4 in place), peak 1.0 kB, 4.1 kB saved by reuse");
  free(text);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* ---- references held elsewhere ---------------------------------------------------- */

typedef struct kept {
  ts_op op;
  bool input;             /* keep the op's input 0, else its output */
  GPtrArray *tensors;     /* references */
} kept;

static void on_keep(const ts_event *ev, void *user_data)
{
  kept *k = user_data;
  if (ev->op.op != k->op || ev->op.n_outputs != 1)
    return;
  g_ptr_array_add(k->tensors, ts_tensor_ref(k->input ? ev->op.inputs[0] : ev->op.outputs[0]));
}

/* Expected values of what on_keep kept: the function's exp (or matmul) eagerly. */
static ts_tensor *exp_of_square(ts_tensor *x)
{
  return ts_exp(ts_matmul(x, x));
}

static void test_retained(void)
{
  setup();
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("elementwise", elementwise, "x");
  ts_tensor *x1 = random_tensor(TS_SHAPE(16, 16), 6), *x2 = random_tensor(TS_SHAPE(16, 16), 7);
  ts_value a1[] = { TS_TENSOR_VALUE(x1) }, a2[] = { TS_TENSOR_VALUE(x2) };
  ts_tensor *expected2 = call_eager(fn, a2, 1);
  call_graph(fn, a1, 1);

  /* Neg's input is exp's output, which Neg would write over in place;
   * MatMul's output dies at Exp, its buffer reused later. */
  kept neg_in = { TS_OP_NEG, true, g_ptr_array_new() };
  kept mm_out = { TS_OP_MATMUL, false, g_ptr_array_new() };
  int id1 = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_keep, &neg_in);
  int id2 = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_keep, &mm_out);
  call_graph(fn, a1, 1);
  ts_listener_remove(id1);
  ts_listener_remove(id2);
  g_assert_cmpuint(neg_in.tensors->len, ==, 1);
  g_assert_cmpuint(mm_out.tensors->len, ==, 1);

  /* later calls (in place again, no listeners) leave what was kept alone */
  for (int i = 0; i < 3; i++)
    assert_close(call_graph(fn, a2, 1), expected2);
  assert_close(neg_in.tensors->pdata[0], exp_of_square(x1));
  assert_close(mm_out.tensors->pdata[0], ts_matmul(x1, x1));
  g_ptr_array_set_free_func(neg_in.tensors, (GDestroyNotify)ts_tensor_unref);
  g_ptr_array_set_free_func(mm_out.tensors, (GDestroyNotify)ts_tensor_unref);
  g_ptr_array_free(neg_in.tensors, TRUE);
  g_ptr_array_free(mm_out.tensors, TRUE);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* A reshape (a view of a value in the arena) kept by a listener. */
static void test_retained_view(void)
{
  setup();
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("layers", layers, "x, w");
  ts_tensor *x1 = random_tensor(TS_SHAPE(4, 2, 8), 16), *w = random_tensor(TS_SHAPE(8, 8), 17);
  ts_value a1[] = { TS_TENSOR_VALUE(x1), TS_TENSOR_VALUE(w) };
  ts_value a2[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(4, 2, 8), 18)), TS_TENSOR_VALUE(w) };
  ts_tensor *expected2 = call_eager(fn, a2, 2);
  call_graph(fn, a1, 2);
  kept reshape = { TS_OP_RESHAPE, false, g_ptr_array_new_with_free_func((GDestroyNotify)ts_tensor_unref) };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_keep, &reshape);
  call_graph(fn, a1, 2);
  ts_listener_remove(id);
  g_assert_cmpuint(reshape.tensors->len, ==, 2);
  for (int i = 0; i < 3; i++)
    assert_close(call_graph(fn, a2, 2), expected2);
  assert_close(reshape.tensors->pdata[0], ts_reshape(ts_add(x1, x1), TS_SHAPE(8, 8)));
  g_ptr_array_free(reshape.tensors, TRUE);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* Variable reads are views of the variable's storage: the arena's header
 * for one lets go of it after the run (assignments then write in place),
 * and a read kept by a listener keeps the value it read. */
static ts_tensor *var_w;

static ts_tensor *accumulate(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *y = ts_matmul(x, ts_read(var_w));
  ts_assign_add(var_w, x);
  return ts_reduce_sum(y, TS_ALL_AXES, false);
}

static void test_variables(void)
{
  setup();
  ts_scope *scope = ts_scope_begin();
  ts_tensor *w0 = random_tensor(TS_SHAPE(8, 8), 19), *x = random_tensor(TS_SHAPE(8, 8), 20);
  var_w = ts_variable_new(w0, "w");
  assert_no_error();
  ts_function *fn = ts_function_new("accumulate", accumulate, "x");
  ts_value args[] = { TS_TENSOR_VALUE(x) };
  kept read = { TS_OP_READ_VARIABLE, false,
                g_ptr_array_new_with_free_func((GDestroyNotify)ts_tensor_unref) };
  for (int k = 0; k < 5; k++) {
    int id = k == 2 ? ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_keep, &read) : 0;
    ts_tensor *got = call_graph(fn, args, 1);
    if (id)
      ts_listener_remove(id);
    ts_tensor *w_k = ts_add(w0, ts_mul(ts_scalar_f32((float)k), x));
    assert_close(got, ts_reduce_sum(ts_matmul(x, w_k), TS_ALL_AXES, false));
  }
  g_assert_cmpuint(read.tensors->len, ==, 1);
  assert_close(read.tensors->pdata[0], ts_add(w0, ts_mul(ts_scalar_f32(2), x)));
  g_ptr_array_free(read.tensors, TRUE);
  ts_function_free(fn);
  ts_tensor_unref(var_w);
  ts_scope_end(scope);
}

/* An If with no outputs (its step makes no value) last in the graph, its
 * branch reshaping a value of the outer graph into a variable. */
static ts_tensor *var_total;

static ts_tensor *guarded_sum(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *y = ts_add(x, x);
  TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(-1e9f))) {
    ts_assign_add(var_total, ts_reshape(y, TS_SHAPE(8)));
  } TS_END_IF;
  return y;
}

static void test_step_without_values(void)
{
  setup();
  ts_scope *scope = ts_scope_begin();
  var_total = ts_variable_new(ts_zeros(TS_F32, TS_SHAPE(8)), "total");
  ts_function *fn = ts_function_new("guarded_sum", guarded_sum, "x");
  ts_tensor *x = random_tensor(TS_SHAPE(2, 4), 21);
  ts_value args[] = { TS_TENSOR_VALUE(x) };
  for (int k = 1; k <= 4; k++) {
    assert_close(call_graph(fn, args, 1), ts_add(x, x));
    assert_close(ts_read(var_total), ts_reshape(ts_mul(ts_scalar_f32(2.0f * (float)k), x), TS_SHAPE(8)));
  }
  ts_function_free(fn);
  ts_tensor_unref(var_total);
  ts_scope_end(scope);
}

/* ---- unknown dims ------------------------------------------------------------------ */

static void test_replan(void)
{
  setup();
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("layers", layers, "x, w");
  ts_spec specs[] = { { TS_F32, TS_SHAPE(-1, 2, 8) }, { TS_F32, TS_SHAPE(8, 8) } };
  g_assert_true(ts_function_set_input_signature(fn, specs, 2));
  ts_tensor *w = random_tensor(TS_SHAPE(8, 8), 8);
  ts_value small[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(2, 2, 8), 9)), TS_TENSOR_VALUE(w) };
  ts_value large[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(6, 2, 8), 10)), TS_TENSOR_VALUE(w) };
  ts_tensor *expected_small = call_eager(fn, small, 2);
  ts_tensor *expected_large = call_eager(fn, large, 2);

  /* one concrete function for both (f32[?,2,8]); no plan before its first call */
  ts_value signature[] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(-1, 2, 8)),
                           TS_SPEC_VALUE(TS_F32, TS_SHAPE(8, 8)) };
  ts_concrete *cf = ts_function_get_concrete(fn, signature, 2);
  assert_no_error();
  ts_memory_plan plan;
  g_assert_false(ts_concrete_memory_plan(cf, &plan));

  assert_close(call_graph(fn, small, 2), expected_small);
  g_assert_cmpint(ts_function_n_concrete(fn), ==, 1);
  g_assert_true(ts_function_concrete(fn, 0) == cf);
  g_assert_true(ts_concrete_memory_plan(cf, &plan));
  g_assert_cmpint(plan.n_plans, ==, 1);
  int64_t small_peak = plan.peak_bytes;
  assert_close(call_graph(fn, small, 2), expected_small);

  /* new sizes: heap buffers for this call, a new plan after it */
  assert_close(call_graph(fn, large, 2), expected_large);
  g_assert_true(ts_concrete_memory_plan(cf, &plan));
  g_assert_cmpint(plan.n_plans, ==, 2);
  g_assert_cmpint(plan.peak_bytes, ==, 3 * small_peak);
  assert_close(call_graph(fn, large, 2), expected_large);
  g_assert_true(ts_concrete_memory_plan(cf, &plan));
  g_assert_cmpint(plan.n_plans, ==, 2);
  assert_close(call_graph(fn, small, 2), expected_small);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* ---- threads ----------------------------------------------------------------------- */

typedef struct worker {
  ts_function *fn;
  ts_tensor *x, *w, *expected;
  int calls;
} worker;

static gpointer run_worker(gpointer data)
{
  worker *k = data;
  ts_value args[] = { TS_TENSOR_VALUE(k->x), TS_TENSOR_VALUE(k->w) };
  for (int i = 0; i < k->calls; i++) {
    ts_scope *scope = ts_scope_begin();
    assert_close(ts_function_call(k->fn, args, 2), k->expected);
    ts_scope_end(scope);
  }
  return NULL;
}

static void test_threads(void)
{
  setup();
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("layers", layers, "x, w");
  ts_tensor *w = random_tensor(TS_SHAPE(8, 8), 11);
  worker k[2];
  for (int i = 0; i < 2; i++) {
    k[i] = (worker){ fn, random_tensor(TS_SHAPE(4, 2, 8), 12 + i), w, NULL, 300 };
    ts_value args[] = { TS_TENSOR_VALUE(k[i].x), TS_TENSOR_VALUE(w) };
    k[i].expected = call_eager(fn, args, 2);
    call_graph(fn, args, 2); /* traced here, not raced for */
  }
  GThread *t = g_thread_new("planner-worker", run_worker, &k[1]);
  run_worker(&k[0]);
  g_thread_join(t);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* ---- allocations --------------------------------------------------------------------- */

typedef struct allocations {
  int n;             /* allocations */
  int64_t arena;     /* an arena of this many bytes... */
  bool arena_seen;   /* ...was among them */
  int n_arenas;      /* allocations counted as arenas */
} allocations;

static void on_memory(const ts_event *ev, void *user_data)
{
  allocations *a = user_data;
  bool arena = ev->memory.what == TS_MEMORY_ARENA;
  a->n += ev->memory.delta_bytes > 0;
  a->n_arenas += arena && ev->memory.delta_bytes > 0;
  a->arena_seen |= arena && ev->memory.delta_bytes == a->arena;
}

/* A repeat call allocates storage for its output only: the arena is the
 * first call's (one allocation of the plan's peak, reported as an arena,
 * not as tensor storage, for the profiler's memory tracks), and the values
 * in it need no headers of their own. */
static void test_repeat_allocates_outputs_only(void)
{
  setup();
  ts_scope *scope = ts_scope_begin();
  ts_function *fns[] = { ts_function_new("chain", chain, "x, w"),
                         ts_function_new("elementwise", elementwise, "x") };
  ts_value args[] = { TS_TENSOR_VALUE(random_tensor(TS_SHAPE(8, 8), 14)),
                      TS_TENSOR_VALUE(random_tensor(TS_SHAPE(8, 8), 15)) };
  for (int f = 0; f < 2; f++) {
    int n_args = 2 - f;
    ts_memory_plan plan = plan_of(fns[f], args, n_args);
    allocations first = { .arena = plan.peak_bytes }, repeat = { .arena = -1 };
    int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_MEMORY), on_memory, &first);
    call_graph(fns[f], args, n_args);
    ts_listener_remove(id);
    id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_MEMORY), on_memory, &repeat);
    for (int i = 0; i < 3; i++)
      call_graph(fns[f], args, n_args);
    ts_listener_remove(id);
    g_assert_true(first.arena_seen);
    g_assert_cmpint(first.n_arenas, ==, 1);
    g_assert_cmpint(repeat.n, ==, 3);
    g_assert_cmpint(repeat.n_arenas, ==, 0);
    ts_function_free(fns[f]);
  }
  ts_scope_end(scope);
}

/* ---- the seed programs, poisoned ------------------------------------------------------ */

/* The result of seeds' function `name` on its example arguments (lstm_fn:
 * random ones), called `calls` times, from a fresh instance of the module
 * (variables start over). */
static char *seed_result(const char *name, bool eager, int calls)
{
  ts_scope *scope = ts_scope_begin();
  ts_module *m = ts_module_open("seeds");
  assert_no_error();
  int f = 0;
  while (f < ts_module_n_functions(m) && strcmp(ts_function_name(ts_module_function(m, f)), name))
    f++;
  g_assert_cmpint(f, <, ts_module_n_functions(m));
  static const char *const lstm[] = { "f32[10,10]:uniform", "f32[10,10]:uniform@2",
                                      "f32[10,10]:uniform@3", NULL };
  const char *const *specs = strcmp(name, "lstm_fn") ? ts_module_examples(m, f) : lstm;
  ts_value args[8];
  int n = 0;
  for (; specs[n]; n++)
    g_assert_true(ts_value_parse(specs[n], &args[n]));
  ts_run_functions_eagerly(eager);
  char *text = NULL;
  for (int i = 0; i < calls; i++) {
    ts_tensor *out = ts_function_call(ts_module_function(m, f), args, n);
    assert_no_error();
    char *now = ts_tensor_to_string(out);
    if (text)
      g_assert_cmpstr(now, ==, text);
    free(text);
    text = now;
  }
  ts_run_functions_eagerly(false);
  for (int i = 0; i < n; i++)
    ts_value_clear(&args[i]);
  ts_module_free(m);
  ts_scope_end(scope);
  return text;
}

/* Every dead buffer NaN: a graph reading one after its value died would
 * show it (the whole seeds suite also runs so: test-seeds-poisoned). */
static void test_seeds_poisoned(void)
{
  ts_set_passes("all");
  ts_memory_plan_set_poison(true);
  static const char *const names[] = {
    "simple_nn_layer", "function_to_get_faster", "square_if_positive_vectorized",
    "power", "dense_chain", "conv_layer", "sequential_model", "lstm_fn", "my_relu",
    "square_if_positive_naive",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    char *eager = seed_result(names[i], true, 1);
    char *graph = seed_result(names[i], false, 3);
    if (strcmp(eager, graph))
      g_error("%s: graph %s, eagerly %s", names[i], graph, eager);
    free(graph);
    free(eager);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/planner/reuse", test_reuse);
  g_test_add_func("/planner/views", test_views);
  g_test_add_func("/planner/in-place", test_inplace);
  g_test_add_func("/planner/retained", test_retained);
  g_test_add_func("/planner/retained-view", test_retained_view);
  g_test_add_func("/planner/variables", test_variables);
  g_test_add_func("/planner/step-without-values", test_step_without_values);
  g_test_add_func("/planner/replan", test_replan);
  g_test_add_func("/planner/threads", test_threads);
  g_test_add_func("/planner/repeat-allocates-outputs-only", test_repeat_allocates_outputs_only);
  g_test_add_func("/planner/seeds-poisoned", test_seeds_poisoned);
  return g_test_run();
}
