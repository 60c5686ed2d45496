/* test-tape.c — gradient tapes: what they record, what the gradients are
 * (against values worked by hand), persistent and one-shot tapes,
 * stop_gradient, unconnected sources, variables, broadcasting, gradients
 * inside a traced function (the "gradients" scope and each node's forward
 * node), through ts_functions called there, and the errors a bad call gets. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>

static ts_tensor *vec(int n, const double *v)
{
  return ts_constant(TS_F64, TS_SHAPE(n), v);
}

static void assert_values(const ts_tensor *t, const double *want, int n)
{
  g_assert_nonnull(t);
  g_assert_cmpint(ts_tensor_size(t), ==, n);
  for (int i = 0; i < n; i++)
    g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(t, i), want[i], 1e-9);
}

static char *take_message(void)
{
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  char *m = g_strdup(e->message);
  ts_error_free(e);
  return m;
}

/* y = sum(x * x + 3 x): dy/dx = 2x + 3 */
static void test_eager_basic(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = vec(3, (double[]){ 1, -2, 0.5 });
  ts_tape *tape = ts_tape_new(false);
  g_assert_true(ts_tape_watch(tape, x));
  ts_tensor *y = ts_reduce_sum(ts_add(ts_mul(x, x), ts_mul(ts_scalar_f64(3), x)), TS_ALL_AXES,
                               false);
  ts_tensor *g;
  g_assert_true(ts_tape_gradient(tape, y, &x, 1, &g, TS_UNCONNECTED_NONE));
  assert_values(g, (double[]){ 5, -1, 4 }, 3);
  g_assert_cmpint(ts_tensor_dtype(g), ==, TS_F64);
  ts_tape_free(tape);
  ts_scope_end(s);
}

/* A second gradient from a tape that is not persistent is an error; a
 * persistent one gives as many as asked. */
static void test_persistent(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = vec(2, (double[]){ 2, 3 });
  ts_tape *once = ts_tape_new(false);
  ts_tape_watch(once, x);
  ts_tensor *y = ts_reduce_sum(ts_exp(x), TS_ALL_AXES, false);
  ts_tape_stop(once);
  ts_tensor *g;
  g_assert_true(ts_tape_gradient(once, y, &x, 1, &g, TS_UNCONNECTED_NONE));
  assert_values(g, (double[]){ exp(2), exp(3) }, 2);
  g_assert_false(ts_tape_gradient(once, y, &x, 1, &g, TS_UNCONNECTED_NONE));
  g_assert_null(g);
  char *m = take_message();
  g_assert_nonnull(strstr(m, "not persistent"));
  g_free(m);
  ts_tape_free(once);

  ts_tape *many = ts_tape_new(true);
  ts_tape_watch(many, x);
  ts_tensor *a = ts_reduce_sum(ts_mul(x, x), TS_ALL_AXES, false);
  ts_tensor *b = ts_reduce_sum(ts_log(x), TS_ALL_AXES, false);
  g_assert_true(ts_tape_gradient(many, a, &x, 1, &g, TS_UNCONNECTED_NONE));
  assert_values(g, (double[]){ 4, 6 }, 2);
  g_assert_true(ts_tape_gradient(many, b, &x, 1, &g, TS_UNCONNECTED_NONE));
  assert_values(g, (double[]){ 0.5, 1.0 / 3 }, 2);
  ts_tape_free(many);
  ts_scope_end(s);
}

/* ts_stop_gradient cuts the path; a source nothing reaches gets NULL or
 * zeros as asked; an unwatched constant is not a source. */
static void test_stop_and_unconnected(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = vec(2, (double[]){ 1, 2 }), *z = vec(2, (double[]){ 5, 6 });
  ts_tape *tape = ts_tape_new(true);
  ts_tape_watch(tape, x);
  ts_tape_watch(tape, z);
  ts_tensor *y = ts_reduce_sum(ts_mul(x, ts_stop_gradient(x)), TS_ALL_AXES, false);
  ts_tensor *g[2];
  g_assert_true(ts_tape_gradient(tape, y, ((ts_tensor *[]){ x, z }), 2, g, TS_UNCONNECTED_NONE));
  assert_values(g[0], (double[]){ 1, 2 }, 2); /* d(x * c)/dx = c = x */
  g_assert_null(g[1]);
  g_assert_true(ts_tape_gradient(tape, y, ((ts_tensor *[]){ x, z }), 2, g, TS_UNCONNECTED_ZERO));
  assert_values(g[1], (double[]){ 0, 0 }, 2);
  g_assert_cmpint(ts_tensor_dtype(g[1]), ==, TS_F64);

  /* Nothing recorded reaches a target made of unwatched values. */
  ts_tensor *c = ts_reduce_sum(ts_mul(z, ts_stop_gradient(x)), TS_ALL_AXES, false);
  ts_tensor *u = vec(2, (double[]){ 7, 8 });
  g_assert_true(ts_tape_gradient(tape, c, &u, 1, g, TS_UNCONNECTED_NONE));
  g_assert_null(g[0]);
  ts_tape_free(tape);
  ts_scope_end(s);
}

/* Floor and Ceil have no gradient, as TensorFlow's (their gradient
 * functions return None): a target reached only through them leaves the
 * source unconnected, and through them and another path the gradient is
 * the other path's alone; IsNan, a test, records nothing either. */
static void test_floor_ceil_none(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = vec(3, (double[]){ 1.5, -0.5, 2 });
  ts_tape *tape = ts_tape_new(true);
  ts_tape_watch(tape, x);
  ts_tensor *only = ts_reduce_sum(ts_add(ts_floor(x), ts_ceil(x)), TS_ALL_AXES, false);
  ts_tensor *mixed = ts_reduce_sum(ts_mul(x, ts_floor(x)), TS_ALL_AXES, false);
  ts_tensor *tested = ts_reduce_sum(ts_cast(ts_is_nan(x), TS_F64), TS_ALL_AXES, false);
  ts_tensor *g;
  g_assert_true(ts_tape_gradient(tape, only, &x, 1, &g, TS_UNCONNECTED_NONE));
  g_assert_null(g);
  g_assert_true(ts_tape_gradient(tape, only, &x, 1, &g, TS_UNCONNECTED_ZERO));
  assert_values(g, (double[]){ 0, 0, 0 }, 3);
  g_assert_true(ts_tape_gradient(tape, mixed, &x, 1, &g, TS_UNCONNECTED_NONE));
  assert_values(g, (double[]){ 1, -1, 2 }, 3); /* floor(x): the Mul's path only */
  g_assert_true(ts_tape_gradient(tape, tested, &x, 1, &g, TS_UNCONNECTED_NONE));
  g_assert_null(g);
  ts_tape_free(tape);
  ts_scope_end(s);
}

/* Variables read under a tape are watched by themselves; a tape that
 * does not watch variables ignores them. */
static void test_variables(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *w = ts_variable_new(vec(2, (double[]){ 3, -1 }), "w");
  ts_tensor *x = vec(2, (double[]){ 2, 5 });
  ts_tape *tape = ts_tape_new(false);
  /* read explicitly, and given to an op directly */
  ts_tensor *y = ts_add(ts_reduce_sum(ts_mul(ts_read(w), x), TS_ALL_AXES, false),
                        ts_reduce_sum(ts_mul(w, w), TS_ALL_AXES, false));
  ts_tensor *g;
  g_assert_true(ts_tape_gradient(tape, y, &w, 1, &g, TS_UNCONNECTED_NONE));
  assert_values(g, (double[]){ 2 + 6, 5 - 2 }, 2);
  ts_tape_free(tape);

  ts_tape *blind = ts_tape_new(false);
  ts_tape_set_watch_variables(blind, false);
  y = ts_reduce_sum(ts_mul(ts_read(w), x), TS_ALL_AXES, false);
  g_assert_true(ts_tape_gradient(blind, y, &w, 1, &g, TS_UNCONNECTED_NONE));
  g_assert_null(g);
  ts_tape_free(blind);
  ts_tensor_unref(w);
  ts_scope_end(s);
}

/* A value broadcast in an op gets the sum over what it was spread on. */
static void test_broadcasting(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *m = ts_constant(TS_F64, TS_SHAPE(2, 3), (double[]){ 1, 2, 3, 4, 5, 6 });
  ts_tensor *row = vec(3, (double[]){ 1, 1, 1 });
  ts_tensor *col = ts_constant(TS_F64, TS_SHAPE(2, 1), (double[]){ 2, 3 });
  ts_tensor *k = ts_scalar_f64(10);
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, row);
  ts_tape_watch(tape, col);
  ts_tape_watch(tape, k);
  ts_tensor *y = ts_reduce_sum(ts_mul(ts_add(ts_mul(m, row), col), k), TS_ALL_AXES, false);
  ts_tensor *g[3];
  g_assert_true(ts_tape_gradient(tape, y, ((ts_tensor *[]){ row, col, k }), 3, g,
                                 TS_UNCONNECTED_NONE));
  assert_values(g[0], (double[]){ 50, 70, 90 }, 3);
  g_assert_true(ts_shape_equal(ts_tensor_shape(g[1]), TS_SHAPE(2, 1)));
  assert_values(g[1], (double[]){ 30, 30 }, 2);
  g_assert_cmpint(ts_tensor_rank(g[2]), ==, 0);
  assert_values(g[2], (double[]){ 21 + 3 * 2 + 3 * 3 }, 1);
  ts_tape_free(tape);
  ts_scope_end(s);
}

/* Broadcasting a dim unknown while tracing: x [None, 3] * b [None, 3],
 * called with b [1, 3] and x [2, 3].  b's gradient must be summed down to
 * [1, 3] when the graph runs (as TensorFlow's BroadcastGradientArgs), and
 * x's left as it is. */
static ts_tensor *unknown_broadcast_grads(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *b = ts_arg(c, 1);
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, x);
  ts_tape_watch(tape, b);
  ts_tensor *y = ts_reduce_sum(ts_mul(x, b), TS_ALL_AXES, false);
  ts_tensor *g[2] = { NULL, NULL };
  ts_tape_gradient(tape, y, ((ts_tensor *[]){ x, b }), 2, g, TS_UNCONNECTED_NONE);
  ts_tape_free(tape);
  if (!g[0] || !g[1])
    return NULL;
  /* both, flattened: b's first */
  return ts_concat(((ts_tensor *[]){ ts_reshape(g[1], TS_SHAPE(-1)), ts_reshape(g[0], TS_SHAPE(-1)) }),
                   2, 0);
}

static void test_broadcasting_unknown_dims(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *fn = ts_function_new("grads", unknown_broadcast_grads, "x, b");
  ts_spec specs[] = { { TS_F64, TS_SHAPE(-1, 3) }, { TS_F64, TS_SHAPE(-1, 3) } };
  g_assert_true(ts_function_set_input_signature(fn, specs, 2));
  ts_tensor *x = ts_constant(TS_F64, TS_SHAPE(2, 3), (double[]){ 1, 2, 3, 4, 5, 6 });
  ts_tensor *b = ts_constant(TS_F64, TS_SHAPE(1, 3), (double[]){ 10, 20, 30 });
  for (int eager = 0; eager < 2; eager++) {
    ts_function_set_run_eagerly(fn, eager);
    ts_tensor *r = ts_function_call(fn, (ts_value[]){ TS_TENSOR_VALUE(x), TS_TENSOR_VALUE(b) }, 2);
    g_assert_nonnull(r);
    /* d/db = column sums of x (shape [1, 3]); d/dx = b broadcast (shape [2, 3]) */
    assert_values(r, (double[]){ 5, 7, 9, 10, 20, 30, 10, 20, 30 }, 9);
  }
  /* the same graph with b as big as x: nothing summed */
  ts_function_set_run_eagerly(fn, 0);
  ts_tensor *r = ts_function_call(fn, (ts_value[]){ TS_TENSOR_VALUE(x), TS_TENSOR_VALUE(x) }, 2);
  assert_values(r, (double[]){ 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6 }, 12);
  g_assert_cmpint(ts_function_n_concrete(fn), ==, 1);
  ts_function_free(fn);
  g_assert_false(ts_failed());
  ts_scope_end(s);
}

/* Nested tapes: the outer one records the inner one's gradient, so
 * d2(x^3)/dx2 = 6x (tf.GradientTape nested). */
static void test_second_order(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = vec(2, (double[]){ 2, -1 });
  ts_tape *outer = ts_tape_new(false);
  ts_tape_watch(outer, x);
  ts_tape *inner = ts_tape_new(false);
  ts_tape_watch(inner, x);
  ts_tensor *y = ts_reduce_sum(ts_mul(ts_mul(x, x), x), TS_ALL_AXES, false);
  ts_tensor *dy, *d2y;
  g_assert_true(ts_tape_gradient(inner, y, &x, 1, &dy, TS_UNCONNECTED_NONE));
  assert_values(dy, (double[]){ 12, 3 }, 2);
  ts_tape_free(inner);
  g_assert_true(ts_tape_gradient(outer, ts_reduce_sum(dy, TS_ALL_AXES, false), &x, 1, &d2y,
                                 TS_UNCONNECTED_NONE));
  assert_values(d2y, (double[]){ 12, -6 }, 2);
  ts_tape_free(outer);
  ts_scope_end(s);
}

/* Eager loops: each iteration's values stay on the tape. */
static void test_eager_loop(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = ts_scalar_f64(1.5);
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, x);
  ts_tensor *y = x, *i;
  TS_FOR (i, TS_RANGE(ts_scalar_i32(0), ts_scalar_i32(3), ts_scalar_i32(1)), &y) {
    y = ts_mul(y, x);
  }
  ts_tensor *g;
  g_assert_true(ts_tape_gradient(tape, y, &x, 1, &g, TS_UNCONNECTED_NONE));
  assert_values(g, (double[]){ 4 * pow(1.5, 3) }, 1);
  ts_tape_free(tape);
  ts_scope_end(s);
}

/* ---- traced ----------------------------------------------------------------------------- */

static ts_tensor *w_global;

/* loss = sum((relu(x w) - 1)^2); returns dloss/dw */
static ts_tensor *dense_step(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0);
  ts_tape *tape = ts_tape_new(false);
  ts_tensor *h;
  TS_NAME_SCOPE("dense_3") { h = ts_relu(ts_matmul(x, ts_read(w_global))); }
  ts_tensor *d = ts_sub(h, ts_scalar_f64(1));
  ts_tensor *loss = ts_reduce_sum(ts_mul(d, d), TS_ALL_AXES, false);
  ts_tensor *g = NULL;
  ts_tape_gradient(tape, loss, &w_global, 1, &g, TS_UNCONNECTED_ZERO);
  ts_tape_free(tape);
  return g;
}

/* The variable given to the op directly (the tracer reads it itself). */
static ts_tensor *direct_step(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *g = NULL;
  ts_tape *tape = ts_tape_new(false);
  ts_tensor *loss = ts_reduce_sum(ts_mul(ts_matmul(x, w_global), ts_scalar_f64(2)), TS_ALL_AXES,
                                  false);
  ts_tape_gradient(tape, loss, &w_global, 1, &g, TS_UNCONNECTED_NONE);
  ts_tape_free(tape);
  return g;
}

static const ts_node *find_node(const ts_graph *g, const char *name)
{
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    if (strcmp(ts_node_name(ts_graph_node(g, i)), name) == 0)
      return ts_graph_node(g, i);
  return NULL;
}

static void test_traced(void)
{
  ts_scope *s = ts_scope_begin();
  w_global = ts_variable_new(ts_constant(TS_F64, TS_SHAPE(2, 2), (double[]){ 1, -1, 0.5, 2 }),
                             "w");
  ts_tensor *x = ts_constant(TS_F64, TS_SHAPE(1, 2), (double[]){ 2, 1 });
  ts_function *eager = ts_function_new("dense_step", dense_step, "x");
  ts_function_set_run_eagerly(eager, 1);
  ts_function *graph = ts_function_new("dense_step", dense_step, "x");
  ts_value args[] = { TS_TENSOR_VALUE(x) };
  ts_tensor *ge = ts_function_call(eager, args, 1);
  ts_tensor *gg = ts_function_call(graph, args, 1);
  /* h = relu([2.5, 0]) = [2.5, 0]: dw = x^T (2 (h - 1) * [h > 0]) = x^T [3, 0] */
  assert_values(ge, (double[]){ 6, 0, 3, 0 }, 4);
  assert_values(gg, (double[]){ 6, 0, 3, 0 }, 4);
  for (int eagerly = 0; eagerly < 2; eagerly++) {
    ts_function *direct = ts_function_new("direct_step", direct_step, "x");
    ts_function_set_run_eagerly(direct, eagerly);
    assert_values(ts_function_call(direct, args, 1), (double[]){ 4, 4, 2, 2 }, 4);
    ts_function_free(direct);
  }

  /* The gradient's nodes are under "gradients" and name their forward node. */
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(graph, 0));
  const ts_node *matmul = find_node(g, "dense_3/MatMul");
  g_assert_nonnull(matmul);
  int n_grad = 0, of_matmul = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    const ts_node *of = ts_node_gradient_of(n);
    if (of) {
      n_grad++;
      g_assert_true(g_str_has_prefix(ts_node_scope(n), "gradients"));
      of_matmul += of == matmul;
    }
  }
  g_assert_cmpint(n_grad, >, 5);
  g_assert_cmpint(of_matmul, >=, 1);
  g_assert_null(ts_node_gradient_of(matmul));

  /* The serialized graph keeps it. */
  size_t size;
  void *bytes = ts_graph_serialize(g, &size);
  ts_graph *back = ts_graph_deserialize(bytes, size);
  free(bytes);
  g_assert_nonnull(back);
  int kept = 0;
  for (int i = 0; i < ts_graph_n_nodes(back); i++) {
    const ts_node *of = ts_node_gradient_of(ts_graph_node(back, i));
    const ts_node *was = ts_node_gradient_of(ts_graph_node(g, i));
    g_assert_true((of == NULL) == (was == NULL));
    if (of) {
      g_assert_cmpstr(ts_node_name(of), ==, ts_node_name(was));
      kept++;
    }
  }
  g_assert_cmpint(kept, ==, n_grad);
  ts_graph_free(back);
  ts_function_free(eager);
  ts_function_free(graph);
  g_clear_pointer(&w_global, ts_tensor_unref);
  ts_scope_end(s);
}

/* y = x^2 if sum(x) > 0 else 3x, through a traced If: the gradient is an
 * If of its own, the gradient of the forward one. */
static ts_tensor *if_step(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *y = x, *g = NULL;
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, x);
  TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f64(0)), &y) {
    y = ts_mul(x, x);
  } TS_ELSE {
    y = ts_mul(x, ts_scalar_f64(3));
  } TS_END_IF;
  ts_tape_gradient(tape, ts_reduce_sum(y, TS_ALL_AXES, false), &x, 1, &g, TS_UNCONNECTED_NONE);
  ts_tape_free(tape);
  return g;
}

static void test_traced_if(void)
{
  ts_scope *s = ts_scope_begin();
  ts_function *fn = ts_function_new("if_step", if_step, "x");
  ts_value pos[] = { TS_TENSOR_VALUE(vec(2, (double[]){ 1, 2 })) };
  ts_value neg[] = { TS_TENSOR_VALUE(vec(2, (double[]){ -1, -2 })) };
  assert_values(ts_function_call(fn, pos, 1), (double[]){ 2, 4 }, 2);
  assert_values(ts_function_call(fn, neg, 1), (double[]){ 3, 3 }, 2);
  g_assert_cmpint(ts_function_trace_count(fn), ==, 1);
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
  const ts_node *forward = NULL, *backward = NULL;
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (ts_node_op(n) == TS_OP_IF)
      *(ts_node_gradient_of(n) ? &backward : &forward) = n;
  }
  g_assert_nonnull(forward);
  g_assert_nonnull(backward);
  g_assert_true(ts_node_gradient_of(backward) == forward);
  g_assert_true(g_str_has_prefix(ts_node_scope(backward), "gradients"));
  ts_function_free(fn);
  ts_scope_end(s);
}

/* while y < 10: y = y x, from y = x: y = x^6 at x = 1.5, dy/dx = 6 x^5.
 * Traced: the loop again keeping its values, and a While backwards. */
static ts_tensor *while_step(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *y = x, *g = NULL;
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, x);
  TS_WHILE (ts_less(y, ts_scalar_f64(10)), &y) {
    y = ts_mul(y, x);
  }
  ts_tape_gradient(tape, y, &x, 1, &g, TS_UNCONNECTED_NONE);
  ts_tape_free(tape);
  return g;
}

static void test_traced_while(void)
{
  ts_scope *s = ts_scope_begin();
  ts_value args[] = { TS_TENSOR_VALUE(ts_scalar_f64(1.5)) };
  for (int eager = 0; eager < 2; eager++) {
    ts_function *fn = ts_function_new("while_step", while_step, "x");
    ts_function_set_run_eagerly(fn, eager);
    assert_values(ts_function_call(fn, args, 1), (double[]){ 6 * pow(1.5, 5) }, 1);
    if (!eager) {
      const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
      int loops = 0, gradient_loops = 0;
      for (int i = 0; i < ts_graph_n_nodes(g); i++)
        if (ts_node_op(ts_graph_node(g, i)) == TS_OP_WHILE) {
          loops++;
          gradient_loops += ts_node_gradient_of(ts_graph_node(g, i)) != NULL;
        }
      g_assert_cmpint(loops, ==, 3);
      g_assert_cmpint(gradient_loops, ==, 2);
    }
    ts_function_free(fn);
  }
  ts_scope_end(s);
}

/* ---- errors --------------------------------------------------------------------------- */

/* ---- through ts_functions called while tracing ------------------------------------------
 * Their graphs are copied into the caller's (their C code does not run
 * there): the caller's tape records the copies as it would their ops. */

static ts_function *layer_fn, *blocked_fn, *branchy_fn, *cube_grad_fn;
static int layer_runs;

/* relu(x w), w the variable */
static ts_tensor *layer(ts_call *call)
{
  layer_runs++;
  return ts_relu(ts_matmul(ts_arg(call, 0), ts_read(w_global)));
}

/* x * stop_gradient(x) */
static ts_tensor *blocked(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0);
  return ts_mul(x, ts_stop_gradient(x));
}

/* x^2 if sum(x) > 0 else 3x */
static ts_tensor *branchy(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *y = x;
  TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f64(0)), &y) {
    y = ts_mul(x, x);
  } TS_ELSE {
    y = ts_mul(x, ts_scalar_f64(3));
  } TS_END_IF;
  return y;
}

/* d sum(x^3) / dx = 3x^2, from a tape of its own */
static ts_tensor *cube_grad(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *g = NULL;
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, x);
  ts_tensor *y = ts_reduce_sum(ts_mul(ts_mul(x, x), x), TS_ALL_AXES, false);
  ts_tape_gradient(tape, y, &x, 1, &g, TS_UNCONNECTED_NONE);
  ts_tape_free(tape);
  return g;
}

static ts_tensor *sum_of(ts_function *f, ts_tensor *x)
{
  ts_value v = TS_TENSOR_VALUE(x);
  return ts_reduce_sum(ts_function_call(f, &v, 1), TS_ALL_AXES, false);
}

/* loss = sum((layer(x) - 1)^2) + sum(blocked(x)) + sum(branchy(x)) +
 * sum(cube_grad(x)); returns dloss/dw and dloss/dx, flattened */
static ts_tensor *nested_step(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0);
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, x);
  ts_value xv = TS_TENSOR_VALUE(x);
  ts_tensor *d = ts_sub(ts_function_call(layer_fn, &xv, 1), ts_scalar_f64(1));
  ts_tensor *loss = ts_reduce_sum(ts_mul(d, d), TS_ALL_AXES, false);
  loss = ts_add(loss, sum_of(blocked_fn, x));
  loss = ts_add(loss, sum_of(branchy_fn, x));
  loss = ts_add(loss, sum_of(cube_grad_fn, x));
  ts_tensor *g[2] = { NULL, NULL };
  ts_tape_gradient(tape, loss, ((ts_tensor *[]){ w_global, x }), 2, g, TS_UNCONNECTED_NONE);
  ts_tape_free(tape);
  if (!g[0] || !g[1])
    return NULL;
  return ts_concat(((ts_tensor *[]){ ts_reshape(g[0], TS_SHAPE(-1)), ts_reshape(g[1], TS_SHAPE(-1)) }),
                   2, 0);
}

/* Is n in g or one of its subgraphs? */
static bool graph_holds(const ts_graph *g, const ts_node *n)
{
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *x = ts_graph_node(g, i);
    if (x == n)
      return true;
    for (int k = 0; k < ts_node_n_subgraphs(x); k++)
      if (graph_holds(ts_node_subgraph(x, k), n))
        return true;
  }
  return false;
}

static void test_through_nested_functions(void)
{
  ts_scope *s = ts_scope_begin();
  w_global = ts_variable_new(ts_constant(TS_F64, TS_SHAPE(2, 2), (double[]){ 1, -1, 0.5, 2 }),
                             "w");
  layer_fn = ts_function_new("layer", layer, "x");
  blocked_fn = ts_function_new("blocked", blocked, "x");
  branchy_fn = ts_function_new("branchy", branchy, "x");
  cube_grad_fn = ts_function_new("cube_grad", cube_grad, "x");
  ts_function *step = ts_function_new("nested_step", nested_step, "x");
  ts_value x = TS_TENSOR_VALUE(ts_constant(TS_F64, TS_SHAPE(1, 2), (double[]){ 2, 1 }));
  /* layer: h = relu([2.5, 0]), dh = 2 (h - 1) [h > 0] = [3, 0]: dw = x^T dh,
   * dx = dh w^T = [3, 1.5]; blocked: x (the stopped factor only); branchy:
   * 2x; cube_grad: d sum(3x^2) = 6x.  dx = [3 + 2 + 4 + 12, 1.5 + 1 + 2 + 6] */
  const double want[] = { 6, 0, 3, 0, 21, 10.5 };
  layer_runs = 0;
  for (int mode = 0; mode < 2; mode++) {
    ts_run_functions_eagerly(mode == 1);
    assert_values(ts_function_call(step, &x, 1), want, 6);
    assert_values(ts_function_call(step, &x, 1), want, 6);
  }
  ts_run_functions_eagerly(false);
  g_assert_cmpint(layer_runs, ==, 1 + 2); /* traced once, then two eager calls */
  g_assert_cmpint(ts_function_trace_count(layer_fn), ==, 1);

  /* The gradient's nodes in the caller's graph name the copies they are
   * the gradient of (cube_grad's own gradient too). */
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(step, 0));
  const ts_node *matmul = find_node(g, "layer/MatMul");
  g_assert_nonnull(matmul);
  int of_matmul = 0, in_cube = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    const ts_node *of = ts_node_gradient_of(n);
    if (!of)
      continue;
    g_assert_true(graph_holds(g, of));
    of_matmul += of == matmul;
    in_cube += g_str_has_prefix(ts_node_name(n), "cube_grad/gradients/");
  }
  g_assert_cmpint(of_matmul, >=, 1);
  g_assert_cmpint(in_cube, >, 0);
  ts_function_free(step);
  ts_function_free(layer_fn);
  ts_function_free(blocked_fn);
  ts_function_free(branchy_fn);
  ts_function_free(cube_grad_fn);
  g_clear_pointer(&w_global, ts_tensor_unref);
  ts_scope_end(s);
}

static void test_errors(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = vec(2, (double[]){ 1, 2 });
  ts_tensor *g = NULL;
  char *m;

  g_assert_false(ts_tape_gradient(NULL, x, &x, 1, &g, TS_UNCONNECTED_NONE));
  m = take_message();
  g_assert_nonnull(strstr(m, "tape != NULL"));
  g_free(m);

  ts_tape *tape = ts_tape_new(true);
  ts_tape_watch(tape, x);
  ts_tensor *y = ts_reduce_sum(x, TS_ALL_AXES, false);

  g_assert_false(ts_tape_gradient(tape, NULL, &x, 1, &g, TS_UNCONNECTED_NONE));
  m = take_message();
  g_assert_nonnull(strstr(m, "target is NULL"));
  g_free(m);

  g_assert_false(ts_tape_gradient(tape, y, ((ts_tensor *[]){ x, NULL }), 2,
                                  ((ts_tensor *[2]){ 0 }), TS_UNCONNECTED_NONE));
  m = take_message();
  g_assert_nonnull(strstr(m, "source 1 is NULL"));
  g_free(m);

  g_assert_false(ts_tape_gradient(tape, ts_argmax(x, 0), &x, 1, &g, TS_UNCONNECTED_NONE));
  m = take_message();
  g_assert_nonnull(strstr(m, "target must be a float32 or float64 tensor, got i64[]"));
  g_free(m);

  g_assert_false(ts_tape_gradient(tape, y, &x, -1, &g, TS_UNCONNECTED_NONE));
  m = take_message();
  g_assert_nonnull(strstr(m, "n >= 0"));
  g_free(m);

  g_assert_false(ts_tape_gradient(tape, y, &x, 1, &g, 7));
  m = take_message();
  g_assert_nonnull(strstr(m, "unconnected"));
  g_free(m);

  g_assert_false(ts_tape_watch(tape, ts_scalar_i32(3)));
  m = take_message();
  g_assert_nonnull(strstr(m, "got i32[]"));
  g_free(m);

  /* Tapes stop innermost first. */
  ts_tape *inner = ts_tape_new(false);
  g_assert_false(ts_tape_stop(tape));
  m = take_message();
  g_assert_nonnull(strstr(m, "not the innermost"));
  g_free(m);
  ts_tape_free(inner);
  g_assert_true(ts_tape_stop(tape));
  ts_tape_free(tape);

  /* Freed out of order: taken out of the stack, the other goes on. */
  ts_tape *a = ts_tape_new(false), *b = ts_tape_new(false);
  ts_tape_watch(b, x);
  ts_tape_free(a);
  g_assert_false(ts_failed());
  y = ts_reduce_sum(ts_mul(x, x), TS_ALL_AXES, false);
  g_assert_true(ts_tape_gradient(b, y, &x, 1, &g, TS_UNCONNECTED_NONE));
  assert_values(g, (double[]){ 2, 4 }, 2);
  ts_tape_free(b);
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/tape/eager-basic", test_eager_basic);
  g_test_add_func("/tape/persistent", test_persistent);
  g_test_add_func("/tape/stop-gradient-unconnected", test_stop_and_unconnected);
  g_test_add_func("/tape/floor-ceil-none", test_floor_ceil_none);
  g_test_add_func("/tape/variables", test_variables);
  g_test_add_func("/tape/broadcasting", test_broadcasting);
  g_test_add_func("/tape/broadcasting-unknown-dims", test_broadcasting_unknown_dims);
  g_test_add_func("/tape/eager-loop", test_eager_loop);
  g_test_add_func("/tape/second-order", test_second_order);
  g_test_add_func("/tape/traced", test_traced);
  g_test_add_func("/tape/traced-if", test_traced_if);
  g_test_add_func("/tape/traced-while", test_traced_while);
  g_test_add_func("/tape/through-nested-functions", test_through_nested_functions);
  g_test_add_func("/tape/errors", test_errors);
  return g_test_run();
}
