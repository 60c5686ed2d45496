/* test-train.c — tracescope-train.h: layers (shapes, seeded initializers,
 * names), losses, the streaming accuracy, SGD with momentum and Adam
 * against hand-computed updates, eagerly and traced (state updated in the
 * graph), the IDX reader on Fashion-MNIST and on corrupt files, and
 * datasets (take, seeded shuffle, batch, map, iteration in a trace). */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <tracescope-train.h>
#include <unistd.h>
#include <zlib.h>

#include "test-quiet.h"

#define FASHION_MNIST "/usr/share/datasets/fashion-mnist"

static void assert_no_error(void)
{
  if (ts_failed())
    g_error("unexpected error: %s", ts_error_peek()->message);
}

/* Takes the pending error and checks its message contains each of `want` (NULL-ended). */
static void assert_error_(ts_error_code code, const char *const *want)
{
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  for (int i = 0; want[i]; i++)
    if (!strstr(e->message, want[i]))
      g_error("error '%s' does not say '%s'", e->message, want[i]);
  g_assert_cmpstr(ts_error_code_name(e->code), ==, ts_error_code_name(code));
  ts_error_free(e);
}
#define assert_error(code, ...) assert_error_((code), (const char *const[]){ __VA_ARGS__, NULL })

static ts_tensor *f32s(ts_shape shape, const float *v)
{
  return ts_constant(TS_F32, shape, v);
}

static void assert_values(ts_tensor *t, const double *want, int n, double tol)
{
  g_assert_nonnull(t);
  g_assert_cmpint(ts_tensor_size(t), ==, n);
  for (int i = 0; i < n; i++)
    if (fabs(ts_tensor_get_f64(t, i) - want[i]) > tol)
      g_error("element %d: %.9g, want %.9g", i, ts_tensor_get_f64(t, i), want[i]);
}

/* Whether any node of g (or its subgraphs) is named `name`. */
static bool graph_has_node(const ts_graph *g, const char *name)
{
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (strcmp(ts_node_name(n), name) == 0)
      return true;
    for (int k = 0; k < ts_node_n_subgraphs(n); k++)
      if (graph_has_node(ts_node_subgraph(n, k), name))
        return true;
  }
  return false;
}

/* Whether an op `op` of g sits in name scope `scope`. */
static bool graph_has_op_in(const ts_graph *g, ts_op op, const char *scope)
{
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (ts_node_op(n) == op && strcmp(ts_node_scope(n), scope) == 0)
      return true;
  }
  return false;
}

static bool graph_has_op(const ts_graph *g, ts_op op)
{
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    if (ts_node_op(ts_graph_node(g, i)) == op)
      return true;
  return false;
}

/* ---- layers ------------------------------------------------------------------ */

static void test_dense(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_layer_names_reset();
  ts_layer *a = ts_dense_new(NULL, 3, TS_ACTIVATION_RELU, 7);
  ts_layer *b = ts_dense_new(NULL, 3, TS_ACTIVATION_RELU, 7);
  ts_layer *c = ts_dense_new("other", 3, TS_ACTIVATION_LINEAR, 8);
  g_assert_cmpstr(ts_layer_name(a), ==, "dense");
  g_assert_cmpstr(ts_layer_name(b), ==, "dense_1");
  g_assert_cmpstr(ts_layer_name(c), ==, "other");
  g_assert_cmpint(ts_layer_n_variables(a), ==, 0); /* built on the first call */

  ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(4, 5), -1, 1, 3);
  ts_tensor *ya = ts_layer_call(a, x, false), *yb = ts_layer_call(b, x, false);
  ts_tensor *yc = ts_layer_call(c, x, false);
  assert_no_error();
  g_assert_true(ts_shape_equal(ts_tensor_shape(ya), TS_SHAPE(4, 3)));
  g_assert_cmpint(ts_layer_n_variables(a), ==, 2);
  ts_tensor *ka = ts_layer_variable(a, 0), *kb = ts_layer_variable(b, 0), *kc = ts_layer_variable(c, 0);
  g_assert_true(ts_shape_equal(ts_tensor_shape(ka), TS_SHAPE(5, 3)));
  g_assert_true(ts_shape_equal(ts_tensor_shape(ts_layer_variable(a, 1)), TS_SHAPE(3)));
  g_assert_null(ts_layer_variable(a, 2));
  /* the same seed, the same weights; another seed, others; all within Glorot's limit */
  double limit = sqrt(6.0 / (5 + 3));
  bool differ = false;
  for (int i = 0; i < 15; i++) {
    double va = ts_tensor_get_f64(ts_read(ka), i);
    g_assert_cmpfloat(va, ==, ts_tensor_get_f64(ts_read(kb), i));
    differ |= va != ts_tensor_get_f64(ts_read(kc), i);
    g_assert_cmpfloat(fabs(va), <=, limit);
  }
  g_assert_true(differ);
  for (int i = 0; i < 3; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(ts_read(ts_layer_variable(a, 1)), i), ==, 0);
  /* relu: no negatives; linear: the plain product (bias 0) */
  for (int i = 0; i < 12; i++) {
    g_assert_cmpfloat(ts_tensor_get_f64(ya, i), >=, 0);
    g_assert_cmpfloat(ts_tensor_get_f64(ya, i), ==, ts_tensor_get_f64(yb, i));
  }
  ts_tensor *want = ts_matmul(x, ts_read(kc));
  for (int i = 0; i < 12; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(yc, i), ==, ts_tensor_get_f64(want, i));

  /* a rank-1 input, and an input of another width once built, are errors */
  ts_layer *d = ts_dense_new(NULL, 2, TS_ACTIVATION_LINEAR, 1);
  g_assert_null(ts_layer_call(d, ts_ones(TS_F32, TS_SHAPE(3)), false));
  assert_error(TS_ERR_SHAPE, "dense_2", "rank-2+", "f32[3]");
  g_assert_null(ts_layer_call(a, ts_ones(TS_F32, TS_SHAPE(4, 6)), false));
  g_assert_true(ts_failed());
  ts_error_clear();
  g_assert_null(ts_dense_new(NULL, 0, TS_ACTIVATION_RELU, 1));
  assert_error(TS_ERR_INVALID_ARGUMENT, "units");
  ts_layer_free(a);
  ts_layer_free(b);
  ts_layer_free(c);
  ts_layer_free(d);
  ts_scope_end(scope);
}

/* A Dropout layer called with training, as a traced function. */
static ts_layer *traced_drop;
static ts_tensor *dropout_call_fn(ts_call *call)
{
  return ts_layer_call(traced_drop, ts_ones(TS_F32, TS_SHAPE(100)), true);
}

static void test_shape_layers(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(6, 4, 4, 2), 0, 1, 1);
  ts_layer *flatten = ts_flatten_layer_new(NULL), *reshape = ts_reshape_layer_new(NULL, TS_SHAPE(8, -1));
  g_assert_true(ts_shape_equal(ts_tensor_shape(ts_layer_call(flatten, x, false)), TS_SHAPE(6, 32)));
  g_assert_true(ts_shape_equal(ts_tensor_shape(ts_layer_call(reshape, x, false)), TS_SHAPE(6, 8, 4)));

  ts_layer *conv = ts_conv2d_layer_new(NULL, 5, 3, 3, 1, 1, TS_PADDING_SAME, TS_ACTIVATION_RELU, 2);
  ts_layer *pool = ts_max_pool2d_layer_new(NULL, 2, 2, 2, 2, TS_PADDING_VALID);
  ts_tensor *y = ts_layer_call(pool, ts_layer_call(conv, x, false), false);
  assert_no_error();
  g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(6, 2, 2, 5)));
  g_assert_true(ts_shape_equal(ts_tensor_shape(ts_layer_variable(conv, 0)), TS_SHAPE(3, 3, 2, 5)));
  double limit = sqrt(6.0 / (9 * 2 + 9 * 5));
  for (int i = 0; i < 90; i++)
    g_assert_cmpfloat(fabs(ts_tensor_get_f64(ts_read(ts_layer_variable(conv, 0)), i)), <=, limit);

  /* Dropout: Identity unless training; training, a new mask on each call
   * (Keras' seed generator), the same masks for the same seed, eagerly
   * and traced */
  ts_layer *drop = ts_dropout_layer_new(NULL, 0.5, 9), *again = ts_dropout_layer_new(NULL, 0.5, 9);
  ts_tensor *ones = ts_ones(TS_F32, TS_SHAPE(100));
  ts_tensor *inference = ts_layer_call(drop, ones, false);
  ts_tensor *t1 = ts_layer_call(drop, ones, true), *t2 = ts_layer_call(drop, ones, true);
  ts_tensor *a1 = ts_layer_call(again, ones, true), *a2 = ts_layer_call(again, ones, true);
  traced_drop = ts_dropout_layer_new(NULL, 0.5, 9);
  ts_function *fn = ts_function_new("dropout_call", dropout_call_fn, NULL);
  ts_tensor *g1 = ts_function_call(fn, NULL, 0), *g2 = ts_function_call(fn, NULL, 0);
  assert_no_error();
  g_assert_cmpint(ts_function_n_concrete(fn), ==, 1);
  int zeros = 0, differ = 0;
  for (int i = 0; i < 100; i++) {
    g_assert_cmpfloat(ts_tensor_get_f64(inference, i), ==, 1);
    double v = ts_tensor_get_f64(t1, i), w = ts_tensor_get_f64(t2, i);
    g_assert_true(v == 0 || v == 2);
    g_assert_cmpfloat(v, ==, ts_tensor_get_f64(a1, i));
    g_assert_cmpfloat(w, ==, ts_tensor_get_f64(a2, i));
    g_assert_cmpfloat(v, ==, ts_tensor_get_f64(g1, i));
    g_assert_cmpfloat(w, ==, ts_tensor_get_f64(g2, i));
    zeros += v == 0;
    differ += v != w;
  }
  g_assert_cmpint(zeros, >, 20);
  g_assert_cmpint(zeros, <, 80);
  g_assert_cmpint(differ, >, 20); /* another mask */
  ts_function_free(fn);
  ts_layer_free(again);
  g_clear_pointer(&traced_drop, ts_layer_free);
  g_assert_null(ts_dropout_layer_new(NULL, 1.0, 1));
  assert_error(TS_ERR_INVALID_ARGUMENT, "rate");

  /* LSTMCell: the state's shapes, the forget gate's bias 1, and a plain call refused */
  ts_layer *cell = ts_lstm_cell_new(NULL, 4, 3);
  ts_tensor *h = NULL, *c = NULL;
  ts_tensor *in = ts_random_uniform(TS_F32, TS_SHAPE(2, 3), -1, 1, 4);
  g_assert_true(ts_lstm_cell_call(cell, in, ts_zeros(TS_F32, TS_SHAPE(2, 4)),
                                  ts_zeros(TS_F32, TS_SHAPE(2, 4)), &h, &c));
  g_assert_true(ts_shape_equal(ts_tensor_shape(h), TS_SHAPE(2, 4)));
  g_assert_true(ts_shape_equal(ts_tensor_shape(c), TS_SHAPE(2, 4)));
  g_assert_cmpint(ts_layer_n_variables(cell), ==, 3);
  g_assert_true(ts_shape_equal(ts_tensor_shape(ts_layer_variable(cell, 1)), TS_SHAPE(4, 16)));
  ts_tensor *bias = ts_read(ts_layer_variable(cell, 2));
  for (int i = 0; i < 16; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(bias, i), ==, i >= 4 && i < 8 ? 1 : 0);
  for (int i = 0; i < 8; i++)
    g_assert_cmpfloat(fabs(ts_tensor_get_f64(h, i)), <, 1);
  g_assert_null(ts_layer_call(cell, in, false));
  assert_error(TS_ERR_INVALID_ARGUMENT, "ts_lstm_cell_call");

  ts_layer *layers[] = { flatten, reshape, conv, pool, drop, cell };
  for (unsigned i = 0; i < G_N_ELEMENTS(layers); i++)
    ts_layer_free(layers[i]);
  ts_scope_end(scope);
}

/* The model of the guide, traced: its layers are name scopes. */
static ts_sequential *traced_model;
static ts_tensor *model_fn(ts_call *call)
{
  return ts_sequential_call(traced_model, ts_arg(call, 0), false);
}

static void test_sequential_traced(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_layer_names_reset();
  ts_layer *layers[] = { ts_reshape_layer_new(NULL, TS_SHAPE(12)),
                         ts_dense_new(NULL, 5, TS_ACTIVATION_RELU, 1),
                         ts_dense_new(NULL, 2, TS_ACTIVATION_LINEAR, 2) };
  traced_model = ts_sequential_new(layers, 3);
  ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(2, 3, 4), 0, 1, 5);
  ts_function *fn = ts_function_new("model", model_fn, "x");
  ts_value arg = TS_TENSOR_VALUE(x);
  ts_tensor *traced = ts_function_call(fn, &arg, 1);
  assert_no_error();
  ts_tensor *eager = ts_sequential_call(traced_model, x, false);
  assert_values(traced, (double[]){ ts_tensor_get_f64(eager, 0), ts_tensor_get_f64(eager, 1),
                                     ts_tensor_get_f64(eager, 2), ts_tensor_get_f64(eager, 3) },
                4, 1e-6);
  g_assert_cmpint(ts_sequential_n_variables(traced_model), ==, 4);
  g_assert_true(ts_shape_equal(ts_tensor_shape(ts_sequential_variable(traced_model, 2)), TS_SHAPE(5, 2)));
  g_assert_null(ts_sequential_variable(traced_model, 4));
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
  g_assert_true(graph_has_node(g, "dense/MatMul"));
  g_assert_true(graph_has_node(g, "dense_1/MatMul"));
  g_assert_true(graph_has_node(g, "reshape/Reshape"));
  ts_function_free(fn);
  ts_sequential_free(traced_model);
  ts_scope_end(scope);
}

/* ---- losses and the metric ------------------------------------------------------- */

static void test_losses(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *logits = f32s(TS_SHAPE(2, 3), (float[]){ 1, 2, 3, 0, 0, 0 });
  ts_tensor *labels = ts_constant(TS_I64, TS_SHAPE(2), (int64_t[]){ 2, 0 });
  /* -log softmax: log(e + e^2 + e^3) - 3 and log 3 */
  double l0 = log(exp(1) + exp(2) + exp(3)) - 3, l1 = log(3);
  assert_values(ts_loss_sparse_softmax_cross_entropy(labels, logits),
                (double[]){ (l0 + l1) / 2 }, 1, 1e-6);
  ts_tensor *a = f32s(TS_SHAPE(2, 2), (float[]){ 1, 2, 3, 4 });
  ts_tensor *b = f32s(TS_SHAPE(2, 2), (float[]){ 1, 0, 3, 7 });
  assert_values(ts_loss_mean_squared_error(a, b), (double[]){ (4.0 + 9.0) / 4 }, 1, 1e-6);
  g_assert_null(ts_loss_sparse_softmax_cross_entropy(logits, logits));
  g_assert_true(ts_failed());
  ts_error_clear();
  ts_scope_end(scope);
}

static ts_metric *traced_metric;
static ts_tensor *metric_fn(ts_call *call)
{
  ts_metric_update(traced_metric, ts_arg(call, 0), ts_arg(call, 1));
  return ts_metric_result(traced_metric);
}

static ts_tensor *metric_reset_fn(ts_call *call)
{
  ts_metric_reset(traced_metric);
  return ts_metric_result(traced_metric);
}

static void test_metric(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_metric *m = ts_accuracy_new(NULL);
  assert_values(ts_metric_result(m), (double[]){ 0 }, 1, 0);
  ts_tensor *logits = f32s(TS_SHAPE(4, 2), (float[]){ 1, 0, 0, 1, 1, 0, 0, 1 });
  ts_tensor *labels = ts_constant(TS_I32, TS_SHAPE(4), (int32_t[]){ 0, 1, 1, 1 });
  g_assert_true(ts_metric_update(m, labels, logits));
  assert_values(ts_metric_result(m), (double[]){ 0.75 }, 1, 1e-7);
  ts_tensor *wrong = ts_constant(TS_I32, TS_SHAPE(4), (int32_t[]){ 1, 0, 0, 0 });
  g_assert_true(ts_metric_update(m, wrong, logits)); /* streaming: 3 + 1 of 8 */
  assert_values(ts_metric_result(m), (double[]){ 4.0 / 8 }, 1, 1e-7);
  g_assert_true(ts_metric_reset(m));
  assert_values(ts_metric_result(m), (double[]){ 0 }, 1, 0);
  g_assert_false(ts_metric_update(m, logits, logits));
  assert_error(TS_ERR_DTYPE, "accuracy", "labels must be integers");

  /* traced: the update and the reset change the variables from the graph */
  traced_metric = m;
  ts_function *fn = ts_function_new("update", metric_fn, "labels, logits");
  ts_function *reset = ts_function_new("reset", metric_reset_fn, NULL);
  ts_value args[] = { TS_TENSOR_VALUE(labels), TS_TENSOR_VALUE(logits) };
  assert_values(ts_function_call(fn, args, 2), (double[]){ 0.75 }, 1, 1e-7);
  args[0] = TS_TENSOR_VALUE(wrong);
  assert_values(ts_function_call(fn, args, 2), (double[]){ 4.0 / 8 }, 1, 1e-7);
  g_assert_cmpint(ts_function_trace_count(fn), ==, 1);
  assert_values(ts_function_call(reset, NULL, 0), (double[]){ 0 }, 1, 0);
  assert_values(ts_metric_result(m), (double[]){ 0 }, 1, 0);
  assert_no_error();
  /* traced for batches of any size: the count is summed in the graph */
  ts_function *any = ts_function_new("update_any", metric_fn, "labels, logits");
  ts_spec specs[2] = { { TS_I32, TS_SHAPE(-1) }, { TS_F32, TS_SHAPE(-1, 2) } };
  g_assert_true(ts_function_set_input_signature(any, specs, 2));
  args[0] = TS_TENSOR_VALUE(labels);
  assert_values(ts_function_call(any, args, 2), (double[]){ 0.75 }, 1, 1e-7);
  ts_tensor *two[2] = { ts_slice(labels, TS_INTS(0), TS_INTS(2)), ts_slice(logits, TS_INTS(0, 0), TS_INTS(2, -1)) };
  ts_value args2[] = { TS_TENSOR_VALUE(two[0]), TS_TENSOR_VALUE(two[1]) };
  assert_values(ts_function_call(any, args2, 2), (double[]){ 5.0 / 6 }, 1, 1e-7);
  g_assert_cmpint(ts_function_trace_count(any), ==, 1);
  ts_function_free(any);
  ts_function_free(fn);
  ts_function_free(reset);
  ts_metric_free(m);
  ts_scope_end(scope);
}

/* ---- optimizers ---------------------------------------------------------------- */

static const float GRADS[2][2] = { { 0.5f, -1 }, { -0.25f, 2 } };
/* Hand-computed (float64) for w0 = [1, 2] and the gradients above:
 * SGD(lr 0.1, momentum 0.9) and Adam(lr 0.1, 0.9, 0.999, 1e-7). */
static const double SGD_W[2][2] = { { 0.95, 2.1 }, { 0.93, 1.99 } };
static const double SGD_MOMENTUM[2][2] = { { -0.05, 0.1 }, { -0.02, -0.11 } };
static const double ADAM_W[2][2] = { { 0.900000632, 2.09999968 }, { 0.873367079, 2.06338938 } };
static const double ADAM_M[2][2] = { { 0.05, -0.1 }, { 0.02, 0.11 } };
static const double ADAM_V[2][2] = { { 0.00025, 0.001 }, { 0.00031225, 0.004999 } };

static ts_optimizer *traced_opt;
static ts_tensor *traced_var;
static ts_tensor *apply_fn(ts_call *call)
{
  ts_tensor *g = ts_arg(call, 0);
  ts_optimizer_apply(traced_opt, &g, &traced_var, 1);
  return ts_read(traced_var);
}

/* Two steps of opt on a fresh [1, 2], eagerly or through a traced function. */
static void run_steps(ts_optimizer *opt, bool traced, const double want_w[2][2],
                      const char *slot, const double want_slot[2][2], const char *slot2,
                      const double want_slot2[2][2])
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *var = ts_variable_new(f32s(TS_SHAPE(2), (float[]){ 1, 2 }), "w");
  ts_function *fn = ts_function_new("apply", apply_fn, "g");
  traced_opt = opt;
  traced_var = var;
  for (int step = 0; step < 2; step++) {
    ts_tensor *g = f32s(TS_SHAPE(2), GRADS[step]);
    if (traced) {
      ts_value arg = TS_TENSOR_VALUE(g);
      g_assert_nonnull(ts_function_call(fn, &arg, 1));
    } else {
      g_assert_true(ts_optimizer_apply(opt, &g, &var, 1));
    }
    assert_no_error();
    assert_values(ts_read(var), want_w[step], 2, 1e-6);
    assert_values(ts_read(ts_optimizer_slot(opt, var, slot)), want_slot[step], 2, 1e-7);
    /* Adam's v: 1 - beta_2 is taken in f32 as TensorFlow's ResourceApplyAdam
     * takes it (1 - 0.999f = 0.00099998713), 1.3e-5 relative off the float64
     * hand computation */
    if (slot2)
      assert_values(ts_read(ts_optimizer_slot(opt, var, slot2)), want_slot2[step], 2, 1e-7);
    g_assert_cmpint(ts_tensor_get_i64(ts_read(ts_optimizer_iterations(opt)), 0), ==, step + 1);
  }
  if (traced) {
    /* its first call made the step count (and the slots): traced twice, as tf.function, one graph */
    g_assert_cmpint(ts_function_trace_count(fn), ==, 2);
    g_assert_cmpint(ts_function_n_concrete(fn), ==, 1);
    const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
    /* the updates are the graph's, under the optimizer's name scope */
    const char *opt_scope = slot2 ? "Adam" : "SGD";
    g_assert_true(graph_has_op_in(g, slot2 ? TS_OP_APPLY_ADAM : TS_OP_ASSIGN_ADD_VARIABLE, opt_scope));
    g_assert_true(graph_has_op_in(g, TS_OP_ASSIGN_ADD_VARIABLE, opt_scope)); /* iterations */
  }
  ts_function_free(fn);
  ts_tensor_unref(var);
  ts_scope_end(scope);
}

static void test_sgd_momentum(void)
{
  for (int traced = 0; traced < 2; traced++) {
    ts_optimizer *opt = ts_sgd_new(0.1, 0.9);
    run_steps(opt, traced, SGD_W, "momentum", SGD_MOMENTUM, NULL, NULL);
    ts_optimizer_free(opt);
  }
  /* plain SGD: w -= lr g */
  ts_scope *scope = ts_scope_begin();
  ts_optimizer *opt = ts_sgd_new(0.5, 0);
  ts_tensor *var = ts_variable_new(f32s(TS_SHAPE(2), (float[]){ 1, 2 }), "w");
  ts_tensor *g = f32s(TS_SHAPE(2), GRADS[0]);
  g_assert_true(ts_optimizer_apply(opt, &g, &var, 1));
  assert_values(ts_read(var), (double[]){ 0.75, 2.5 }, 2, 1e-7);
  /* a NULL gradient leaves its variable; a gradient of another shape is an error */
  ts_tensor *none = NULL;
  g_assert_true(ts_optimizer_apply(opt, &none, &var, 1));
  assert_values(ts_read(var), (double[]){ 0.75, 2.5 }, 2, 1e-7);
  ts_tensor *bad = ts_ones(TS_F32, TS_SHAPE(3));
  g_assert_false(ts_optimizer_apply(opt, &bad, &var, 1));
  assert_error(TS_ERR_SHAPE, "SGD", "gradient 0 is f32[3]", "'w' is f32[2]");
  g_assert_null(ts_sgd_new(0.1, 1.5));
  assert_error(TS_ERR_INVALID_ARGUMENT, "momentum");
  ts_tensor_unref(var);
  ts_optimizer_free(opt);
  ts_scope_end(scope);
}

static void test_adam(void)
{
  for (int traced = 0; traced < 2; traced++) {
    ts_optimizer *opt = ts_adam_new(0.1, 0.9, 0.999, 1e-7);
    run_steps(opt, traced, ADAM_W, "m", ADAM_M, "v", ADAM_V);
    ts_optimizer_free(opt);
  }
  g_assert_null(ts_adam_new(0.1, 1, 0.999, 1e-7));
  assert_error(TS_ERR_INVALID_ARGUMENT, "beta");
}

/* ---- IDX ---------------------------------------------------------------------- */

static void test_idx_fashion_mnist(void)
{
  if (!g_file_test(FASHION_MNIST, G_FILE_TEST_IS_DIR)) {
    g_test_skip("dataset-fashion-mnist is not installed");
    return;
  }
  ts_scope *scope = ts_scope_begin();
  ts_tensor *images = NULL, *labels = NULL;
  g_assert_true(ts_fashion_mnist_load("t10k", &images, &labels));
  assert_no_error();
  g_assert_true(ts_shape_equal(ts_tensor_shape(images), TS_SHAPE(10000, 28, 28)));
  g_assert_true(ts_shape_equal(ts_tensor_shape(labels), TS_SHAPE(10000)));
  g_assert_cmpint(ts_tensor_dtype(images), ==, TS_U8);
  /* the test set's first labels (ankle boot, pullover, trouser, trouser) */
  static const int64_t FIRST[4] = { 9, 2, 1, 1 };
  for (int i = 0; i < 4; i++)
    g_assert_cmpint(ts_tensor_get_i64(labels, i), ==, FIRST[i]);
  int counts[10] = { 0 };
  for (int i = 0; i < 10000; i++)
    counts[ts_tensor_get_i64(labels, i)]++;
  for (int k = 0; k < 10; k++)
    g_assert_cmpint(counts[k], ==, 1000);
  g_assert_false(ts_fashion_mnist_load("validation", &images, &labels));
  assert_error(TS_ERR_INVALID_ARGUMENT, "split");
  g_setenv("TRACESCOPE_FASHION_MNIST", "/nonexistent", TRUE);
  g_assert_false(ts_fashion_mnist_load("train", &images, &labels));
  assert_error(TS_ERR_NOT_FOUND, "/nonexistent/train-images-idx3-ubyte.gz", "dataset-fashion-mnist");
  g_unsetenv("TRACESCOPE_FASHION_MNIST");
  ts_scope_end(scope);
}

/* Writes bytes to a temporary file, gzipped or not; returns its path (owned). */
static char *write_file(const void *bytes, size_t n, bool gzip)
{
  char *path = NULL;
  int fd = g_file_open_tmp("test-train-XXXXXX.idx", &path, NULL);
  g_assert_cmpint(fd, >=, 0);
  gzFile f = gzdopen(fd, gzip ? "wb" : "wbT");
  g_assert_nonnull(f);
  g_assert_cmpint(gzwrite(f, bytes, (unsigned)n), ==, (int)n);
  gzclose(f);
  return path;
}

/* Loads bytes as an IDX file; NULL if it fails (the error pending). */
static ts_tensor *load_bytes(const void *bytes, size_t n, bool gzip, size_t cap)
{
  char *path = write_file(bytes, n, gzip);
  ts_tensor *t = ts_idx_load(path, cap);
  g_unlink(path);
  g_free(path);
  return t;
}

static void test_idx_files(void)
{
  ts_scope *scope = ts_scope_begin();
  /* u8 [2, 3], plain and gzipped */
  const unsigned char u8[] = { 0, 0, 0x08, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 4, 5, 255 };
  for (int gz = 0; gz < 2; gz++) {
    ts_tensor *t = load_bytes(u8, sizeof u8, gz, 0);
    assert_no_error();
    g_assert_true(ts_shape_equal(ts_tensor_shape(t), TS_SHAPE(2, 3)));
    assert_values(t, (double[]){ 1, 2, 3, 4, 5, 255 }, 6, 0);
  }
  /* big-endian i16 -> i32, f32, f64 */
  const unsigned char i16[] = { 0, 0, 0x0B, 1, 0, 0, 0, 2, 0xFF, 0xFE, 0x01, 0x00 };
  assert_values(load_bytes(i16, sizeof i16, true, 0), (double[]){ -2, 256 }, 2, 0);
  const unsigned char f32[] = { 0, 0, 0x0D, 1, 0, 0, 0, 1, 0x3F, 0xC0, 0, 0 };
  assert_values(load_bytes(f32, sizeof f32, false, 0), (double[]){ 1.5 }, 1, 0);
  const unsigned char f64[] = { 0, 0, 0x0E, 0, 0xC0, 0x04, 0, 0, 0, 0, 0, 0 };
  assert_values(load_bytes(f64, sizeof f64, true, 0), (double[]){ -2.5 }, 1, 0);

  /* corrupt files: each an error naming the file's field */
  static const struct {
    unsigned char bytes[16];
    size_t n;
    size_t cap;
    const char *field;
  } BAD[] = {
    { { 1, 0, 0x08, 1, 0, 0, 0, 1, 7 }, 9, 0, "magic: expected two zero bytes" },
    { { 0, 0, 0x07, 1, 0, 0, 0, 1, 7 }, 9, 0, "type: unknown element type 0x07" },
    { { 0, 0, 0x08, 9 }, 4, 0, "rank: 9 dimensions" },
    { { 0, 0, 0x08 }, 3, 0, "magic: the file ends" },
    { { 0, 0, 0x08, 2, 0, 0, 0, 2, 0, 0 }, 10, 0, "dimension 1: the file ends" },
    { { 0, 0, 0x08, 1, 0, 0, 0, 4, 1, 2 }, 10, 0, "data: the file ends after 2 of its 4 bytes" },
    { { 0, 0, 0x08, 1, 0, 0, 0, 1, 1, 2 }, 10, 0, "data: bytes after the 1" },
    { { 0, 0, 0x08, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF }, 12, 0, "over the cap" },
    { { 0, 0, 0x0E, 1, 0, 0, 1, 0, 1 }, 9, 1024, "dimension 0: 256 makes 2048 bytes of data, over the cap of 1024" },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(BAD); i++) {
    for (int gz = 0; gz < 2; gz++) {
      g_assert_null(load_bytes(BAD[i].bytes, BAD[i].n, gz, BAD[i].cap));
      ts_error *e = ts_error_take();
      g_assert_nonnull(e);
      if (!strstr(e->message, BAD[i].field) || !strstr(e->message, "test-train-"))
        g_error("case %u: '%s' does not name the file and '%s'", i, e->message, BAD[i].field);
      ts_error_free(e);
    }
  }
  /* a damaged gzip stream */
  char *path = write_file(u8, sizeof u8, true);
  char *bytes = NULL;
  gsize n = 0;
  g_assert_true(g_file_get_contents(path, &bytes, &n, NULL));
  for (gsize i = 12; i < n - 8; i++)
    bytes[i] ^= 0x5A;
  g_assert_true(g_file_set_contents(path, bytes, (gssize)n, NULL));
  g_assert_null(ts_idx_load(path, 0));
  assert_error(TS_ERR_FORMAT, path);
  g_unlink(path);
  g_free(path);
  g_free(bytes);
  g_assert_null(ts_idx_load("/nonexistent.idx", 0));
  assert_error(TS_ERR_NOT_FOUND, "/nonexistent.idx");
  ts_scope_end(scope);
}

/* ---- datasets ------------------------------------------------------------------- */

static ts_dataset *range_dataset(int64_t n)
{
  ts_tensor *c[2] = { ts_range(TS_I64, 0, (double)n, 1), ts_range(TS_F32, 0, (double)n * 10, 10) };
  return ts_dataset_from_tensors(c, 2);
}

/* The order of a dataset of single elements, as host ints. */
static void element_order(ts_dataset *ds, int64_t *out)
{
  ts_tensor *i = NULL;
  int64_t k = 0;
  TS_FOR (i, ts_dataset_over(ds)) {
    ts_tensor *xy[2];
    g_assert_true(ts_dataset_get(ds, i, xy));
    out[k++] = ts_tensor_get_i64(xy[0], 0);
    g_assert_cmpfloat(ts_tensor_get_f64(xy[1], 0), ==, 10.0 * (double)out[k - 1]);
  }
  g_assert_cmpint(k, ==, ts_dataset_cardinality(ds));
}

static void test_dataset_shuffle(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_dataset *ds = range_dataset(50);
  ts_dataset *a = ts_dataset_shuffle(ds, 50, 7), *b = ts_dataset_shuffle(ds, 50, 7);
  ts_dataset *c = ts_dataset_shuffle(ds, 50, 8), *small = ts_dataset_shuffle(ds, 3, 7);
  int64_t oa[50], ob[50], oc[50], os[50];
  element_order(a, oa);
  element_order(b, ob);
  element_order(c, oc);
  element_order(small, os);
  bool seen[50] = { false }, moved = false, differ = false;
  for (int i = 0; i < 50; i++) {
    g_assert_cmpint(oa[i], ==, ob[i]); /* the same seed, the same order */
    g_assert_false(seen[oa[i]]);       /* a permutation */
    seen[oa[i]] = true;
    moved |= oa[i] != i;
    differ |= oa[i] != oc[i];
    /* a buffer of 3: element i comes out no earlier than i - 2 */
    g_assert_cmpint(os[i], <=, i + 2);
  }
  g_assert_true(moved);
  g_assert_true(differ);
  g_assert_null(ts_dataset_shuffle(ds, 0, 1));
  assert_error(TS_ERR_INVALID_ARGUMENT, "buffer size");
  ts_dataset *list[] = { ds, a, b, c, small };
  for (unsigned i = 0; i < G_N_ELEMENTS(list); i++)
    ts_dataset_free(list[i]);
  ts_scope_end(scope);
}

/* tf.data's reshuffle_each_iteration: each pass over a shuffled dataset
 * has an order of its own, the same for the same seed; a traced loop
 * reshuffles in its graph (a pass per call), eagerly and traced alike. */
static ts_dataset *pass_ds;
static ts_tensor *pass_order_fn(ts_call *call)
{
  /* one batch of all 50: the pass's order */
  ts_tensor *order = ts_zeros(TS_I64, TS_SHAPE(50)), *i = NULL;
  TS_FOR (i, ts_dataset_over(pass_ds), &order) {
    ts_tensor *xy[2];
    ts_dataset_get(pass_ds, i, xy);
    order = xy[0];
  }
  return order;
}

static void test_dataset_reshuffle(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_dataset *ds = range_dataset(50);
  ts_dataset *a = ts_dataset_shuffle(ds, 50, 7), *b = ts_dataset_shuffle(ds, 50, 7);
  int64_t pass[3][50], same[2][50];
  for (int p = 0; p < 3; p++)
    element_order(a, pass[p]);
  for (int p = 0; p < 2; p++)
    element_order(b, same[p]);
  int differ[2] = { 0, 0 };
  for (int i = 0; i < 50; i++) {
    g_assert_cmpint(pass[0][i], ==, same[0][i]); /* the same seed, the same orders */
    g_assert_cmpint(pass[1][i], ==, same[1][i]);
    differ[0] += pass[0][i] != pass[1][i];
    differ[1] += pass[1][i] != pass[2][i];
  }
  g_assert_cmpint(differ[0], >, 10);
  g_assert_cmpint(differ[1], >, 10);

  /* traced: a pass per call, the eager passes' orders */
  ts_dataset *shuffled = ts_dataset_shuffle(ds, 50, 7);
  pass_ds = ts_dataset_batch(shuffled, 50, true);
  ts_function *fn = ts_function_new("pass_order", pass_order_fn, NULL);
  for (int p = 0; p < 3; p++) {
    ts_tensor *order = ts_function_call(fn, NULL, 0);
    assert_no_error();
    for (int i = 0; i < 50; i++)
      g_assert_cmpint(ts_tensor_get_i64(order, i), ==, pass[p][i]);
  }
  g_assert_cmpint(ts_function_n_concrete(fn), ==, 1);
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
  g_assert_true(graph_has_op(g, TS_OP_SHUFFLE_INDICES));
  ts_function_free(fn);
  ts_dataset *list[] = { ds, a, b, shuffled, pass_ds };
  for (unsigned i = 0; i < G_N_ELEMENTS(list); i++)
    ts_dataset_free(list[i]);
  ts_scope_end(scope);
}

static bool scale_map(ts_tensor **c, int n, void *user_data)
{
  c[1] = ts_mul(c[1], ts_scalar_f32(*(float *)user_data));
  return c[1] != NULL;
}

static void test_dataset_batch(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_dataset *ds = range_dataset(23);
  ts_dataset *taken = ts_dataset_take(ds, 20);
  g_assert_cmpint(ts_dataset_cardinality(taken), ==, 20);
  ts_dataset *kept = ts_dataset_batch(ds, 5, false), *dropped = ts_dataset_batch(ds, 5, true);
  g_assert_cmpint(ts_dataset_cardinality(kept), ==, 5);
  g_assert_cmpint(ts_dataset_cardinality(dropped), ==, 4);
  float half = 0.5f;
  ts_dataset *mapped = ts_dataset_map(kept, scale_map, &half);
  ts_tensor *i = NULL;
  int64_t batches = 0;
  TS_FOR (i, ts_dataset_over(mapped)) {
    ts_tensor *xy[2];
    g_assert_true(ts_dataset_get(mapped, i, xy));
    int64_t want = batches < 4 ? 5 : 3;
    g_assert_true(ts_shape_equal(ts_tensor_shape(xy[0]), TS_SHAPE(want)));
    for (int64_t k = 0; k < want; k++) {
      g_assert_cmpint(ts_tensor_get_i64(xy[0], k), ==, batches * 5 + k);
      g_assert_cmpfloat(ts_tensor_get_f64(xy[1], k), ==, 5.0 * (double)(batches * 5 + k));
    }
    batches++;
  }
  g_assert_cmpint(batches, ==, 5);
  ts_dataset *head = ts_dataset_take(kept, 2);
  g_assert_cmpint(ts_dataset_cardinality(head), ==, 2);
  g_assert_null(ts_dataset_batch(kept, 2, false));
  assert_error(TS_ERR_UNIMPLEMENTED, "batched already");
  g_assert_null(ts_dataset_shuffle(kept, 10, 1));
  assert_error(TS_ERR_UNIMPLEMENTED, "batched already", "before batch");
  g_assert_null(ts_dataset_from_tensors((ts_tensor *[]){ ts_ones(TS_F32, TS_SHAPE(3)),
                                                          ts_ones(TS_F32, TS_SHAPE(4)) }, 2));
  assert_error(TS_ERR_INVALID_ARGUMENT, "component 1");
  ts_dataset *list[] = { ds, taken, kept, dropped, mapped, head };
  for (unsigned k = 0; k < G_N_ELEMENTS(list); k++)
    ts_dataset_free(list[k]);
  ts_scope_end(scope);
}

/* Sums a batched dataset's second component over a TS_FOR: a While when traced. */
static ts_dataset *traced_ds;
static ts_tensor *dataset_sum_fn(ts_call *call)
{
  ts_tensor *total = ts_scalar_f32(0), *i = NULL;
  TS_FOR (i, ts_dataset_over(traced_ds), &total) {
    ts_tensor *xy[2];
    ts_dataset_get(traced_ds, i, xy);
    total = ts_add(total, ts_reduce_sum(ts_mul(xy[1], ts_cast(xy[0], TS_F32)), TS_ALL_AXES, false));
  }
  return total;
}

static void test_dataset_traced(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_dataset *ds = range_dataset(40);
  ts_dataset *shuffled = ts_dataset_shuffle(ds, 40, 3);
  traced_ds = ts_dataset_batch(shuffled, 8, true);
  double want = 0;
  for (int k = 0; k < 40; k++)
    want += 10.0 * k * k;
  ts_function *fn = ts_function_new("dataset_sum", dataset_sum_fn, NULL);
  ts_tensor *traced = ts_function_call(fn, NULL, 0);
  assert_no_error();
  assert_values(traced, &want, 1, 0.5);
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
  g_assert_true(graph_has_op(g, TS_OP_WHILE));
  ts_run_functions_eagerly(true);
  assert_values(ts_function_call(fn, NULL, 0), &want, 1, 0.5);
  ts_run_functions_eagerly(false);
  ts_function_free(fn);

  /* a smaller last batch cannot be a traced loop's */
  ts_dataset_free(traced_ds);
  traced_ds = ts_dataset_batch(shuffled, 7, false);
  fn = ts_function_new("dataset_sum", dataset_sum_fn, NULL);
  g_assert_null(ts_function_call(fn, NULL, 0));
  assert_error(TS_ERR_SHAPE, "last batch has 5 of 7");
  ts_function_free(fn);
  ts_dataset_free(traced_ds);
  ts_dataset_free(shuffled);
  ts_dataset_free(ds);
  ts_scope_end(scope);
}

/* ---- training through the layers ------------------------------------------------ */

/* An LSTMCell over 3 time steps and a Dense(1), fitted to a target by
 * SGD with momentum on the MSE: one step, eagerly or as a traced function. */
typedef struct fit {
  ts_layer *cell, *out;
  ts_optimizer *opt;
  ts_tensor *x[3], *target;
} fit;

static fit fits[2];
static ts_tensor *fit_step(fit *f)
{
  ts_tape *tape = ts_tape_new(false);
  ts_tensor *h = ts_zeros(TS_F32, TS_SHAPE(8, 4)), *c = ts_zeros(TS_F32, TS_SHAPE(8, 4));
  for (int t = 0; t < 3; t++)
    g_assert_true(ts_lstm_cell_call(f->cell, f->x[t], h, c, &h, &c));
  ts_tensor *loss = ts_loss_mean_squared_error(f->target, ts_layer_call(f->out, h, false));
  ts_tape_stop(tape);
  ts_tensor *vars[5], *grads[5];
  for (int i = 0; i < 3; i++)
    vars[i] = ts_layer_variable(f->cell, i);
  vars[3] = ts_layer_variable(f->out, 0);
  vars[4] = ts_layer_variable(f->out, 1);
  g_assert_true(ts_tape_gradient(tape, loss, vars, 5, grads, TS_UNCONNECTED_NONE));
  ts_tape_free(tape);
  for (int i = 0; i < 5; i++)
    g_assert_nonnull(grads[i]); /* every weight is connected to the loss */
  g_assert_true(ts_optimizer_apply(f->opt, grads, vars, 5));
  return loss;
}

static ts_tensor *fit_step_fn(ts_call *call)
{
  return fit_step(&fits[1]);
}

static void test_fit_lstm(void)
{
  ts_scope *scope = ts_scope_begin();
  for (int k = 0; k < 2; k++) { /* 0 eager, 1 traced: the same seeds, the same model */
    fits[k].cell = ts_lstm_cell_new(NULL, 4, 11);
    fits[k].out = ts_dense_new(NULL, 1, TS_ACTIVATION_LINEAR, 12);
    fits[k].opt = ts_sgd_new(0.1, 0.9);
    for (int t = 0; t < 3; t++)
      fits[k].x[t] = ts_random_uniform(TS_F32, TS_SHAPE(8, 2), -1, 1, 20 + t);
    fits[k].target = ts_random_uniform(TS_F32, TS_SHAPE(8, 1), -0.5, 0.5, 30);
  }
  ts_function *fn = ts_function_new("fit_step", fit_step_fn, NULL);
  double first = 0, last = 0;
  for (int step = 0; step < 30; step++) {
    ts_scope *s = ts_scope_begin();
    ts_tensor *eager = fit_step(&fits[0]), *traced = ts_function_call(fn, NULL, 0);
    assert_no_error();
    double e = ts_tensor_get_f64(eager, 0), t = ts_tensor_get_f64(traced, 0);
    g_assert_cmpfloat_with_epsilon(t, e, 1e-5 * fabs(e) + 1e-7);
    first = step ? first : e;
    last = e;
    ts_scope_end(s);
  }
  g_assert_cmpint(ts_function_trace_count(fn), ==, 2); /* the first call made the slots: traced twice */
  g_assert_cmpint(ts_function_n_concrete(fn), ==, 1);
  g_assert_cmpfloat(last, <, 0.5 * first); /* it learns */
  ts_function_free(fn);
  for (int k = 0; k < 2; k++) {
    ts_layer_free(fits[k].cell);
    ts_layer_free(fits[k].out);
    ts_optimizer_free(fits[k].opt);
  }
  ts_scope_end(scope);
}

/* A conv net (Conv2D, MaxPool2D, Flatten, Dropout, Dense) fitted to labels
 * by Adam on the sparse cross-entropy, eagerly and as a traced step. */
static ts_sequential *conv_nets[2];
static ts_optimizer *conv_opts[2];
static ts_tensor *conv_x, *conv_y;

static ts_tensor *conv_step(int k)
{
  ts_tape *tape = ts_tape_new(false);
  ts_tensor *logits = ts_sequential_call(conv_nets[k], conv_x, true);
  ts_tensor *loss = ts_loss_sparse_softmax_cross_entropy(conv_y, logits);
  ts_tape_stop(tape);
  int n = ts_sequential_n_variables(conv_nets[k]);
  g_assert_cmpint(n, ==, 4);
  ts_tensor *vars[4], *grads[4];
  for (int i = 0; i < n; i++)
    vars[i] = ts_sequential_variable(conv_nets[k], i);
  g_assert_true(ts_tape_gradient(tape, loss, vars, n, grads, TS_UNCONNECTED_NONE));
  ts_tape_free(tape);
  g_assert_true(ts_optimizer_apply(conv_opts[k], grads, vars, n));
  return loss;
}

static ts_tensor *conv_step_fn(ts_call *call)
{
  return conv_step(1);
}

static void test_fit_conv(void)
{
  ts_scope *scope = ts_scope_begin();
  for (int k = 0; k < 2; k++) {
    ts_layer *layers[] = {
      ts_conv2d_layer_new(NULL, 4, 3, 3, 1, 1, TS_PADDING_SAME, TS_ACTIVATION_RELU, 1),
      ts_max_pool2d_layer_new(NULL, 2, 2, 2, 2, TS_PADDING_VALID),
      ts_flatten_layer_new(NULL),
      ts_dropout_layer_new(NULL, 0.25, 5),
      ts_dense_new(NULL, 3, TS_ACTIVATION_LINEAR, 2),
    };
    conv_nets[k] = ts_sequential_new(layers, 5);
    conv_opts[k] = ts_adam_new(0.01, 0.9, 0.999, 1e-7);
  }
  conv_x = ts_random_uniform(TS_F32, TS_SHAPE(6, 6, 6, 2), 0, 1, 40);
  conv_y = ts_constant(TS_I64, TS_SHAPE(6), (int64_t[]){ 0, 1, 2, 0, 1, 2 });
  ts_function *fn = ts_function_new("conv_step", conv_step_fn, NULL);
  double first = 0, last = 0;
  for (int step = 0; step < 40; step++) {
    ts_scope *s = ts_scope_begin();
    ts_tensor *eager = conv_step(0), *traced = ts_function_call(fn, NULL, 0);
    assert_no_error();
    double e = ts_tensor_get_f64(eager, 0), t = ts_tensor_get_f64(traced, 0);
    g_assert_cmpfloat_with_epsilon(t, e, 1e-4 * fabs(e) + 1e-6);
    first = step ? first : e;
    last = e;
    ts_scope_end(s);
  }
  g_assert_cmpfloat(last, <, 0.5 * first); /* it learns */
  ts_function_free(fn);
  for (int k = 0; k < 2; k++) {
    ts_sequential_free(conv_nets[k]);
    ts_optimizer_free(conv_opts[k]);
  }
  ts_scope_end(scope);
}

/* ---- the guide's example: tracescope-cli run seeds train ------------------------ */

/* `tracescope-cli ARGS...`: its stdout and stderr (owned) and whether it
 * exited with 0. */
static bool cli_run(const char *const *args, char **out, char **err)
{
  const char *exe = g_getenv("TRACESCOPE_CLI");
  g_assert_nonnull(exe);
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (char *)exe);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add(argv, (char *)*a);
  g_ptr_array_add(argv, NULL);
  int status;
  GError *error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out,
                             err, &status, &error));
  g_assert_no_error(error);
  g_ptr_array_unref(argv);
  return g_spawn_check_wait_status(status, NULL);
}

/* `tracescope-cli run seeds train --mode MODE --arg STEPS`: its stdout (owned). */
static char *run_train(const char *mode, const char *steps)
{
  const char *args[] = { "run", "seeds", "train", "--mode", mode, "--arg", steps, NULL };
  char *out = NULL, *err = NULL;
  if (!cli_run(args, &out, &err))
    g_error("tracescope-cli run seeds train --mode %s failed:\n%s%s", mode, out, err);
  g_free(err);
  return out;
}

/* The numbers of "Step N : loss L ; accuracy A" lines, then the final
 * line's, which prints the results as the guide's Python print() does
 * ("Final step tf.Tensor(200, shape=(), dtype=int32) : loss
 * tf.Tensor(0.58123213, shape=(), dtype=float32) ; accuracy ..."); returns
 * how many lines there were. */
static int step_lines(const char *out, int *step, double *loss, double *accuracy, int max)
{
  static const char FINAL[] = "Final step tf.Tensor(%d, shape=(), dtype=int32) : loss "
                              "tf.Tensor(%lf, shape=(), dtype=float32) ; accuracy "
                              "tf.Tensor(%lf, shape=(), dtype=float32%c";
  char **lines = g_strsplit(out, "\n", -1);
  int n = 0;
  for (char **l = lines; *l && n < max; l++) {
    char close = 0;
    if (sscanf(*l, "Step %d : loss %lf ; accuracy %lf", &step[n], &loss[n], &accuracy[n]) == 3 ||
        (sscanf(*l, FINAL, &step[n], &loss[n], &accuracy[n], &close) == 4 && close == ')' &&
         g_str_has_suffix(*l, "dtype=float32)")))
      n++;
  }
  g_strfreev(lines);
  return n;
}

/* Checks a run of `steps` steps: a step line every 10 steps, in order,
 * then the final line and the results train returned; eagerly and traced
 * alike (the same accuracies; losses to float32's last bits, which the
 * kernel a product gets may change: ts_kernel_choices).  Returns the final
 * running accuracy. */
static double check_train_runs(int steps)
{
  char *arg = g_strdup_printf("%d", steps);
  char *out[2] = { run_train("graph", arg), run_train("eager", arg) };
  g_free(arg);
  enum { MAX = 64 };
  int step[2][MAX];
  double loss[2][MAX], accuracy[2][MAX];
  int n = step_lines(out[0], step[0], loss[0], accuracy[0], MAX);
  g_assert_cmpint(step_lines(out[1], step[1], loss[1], accuracy[1], MAX), ==, n);
  if (n != steps / 10 + 1 || !strstr(out[0], "\nFinal step "))
    g_error("expected %d step lines and the final one:\n%s", steps / 10, out[0]);
  for (int i = 0; i < n; i++) {
    g_assert_cmpint(step[0][i], ==, i < n - 1 ? 10 * (i + 1) : steps);
    g_assert_cmpint(step[1][i], ==, step[0][i]);
    g_assert_cmpfloat_with_epsilon(accuracy[1][i], accuracy[0][i], 1e-6);
    g_assert_cmpfloat_with_epsilon(loss[1][i], loss[0][i], 1e-4 * fabs(loss[0][i]));
    g_assert_true(isfinite(loss[0][i]) && loss[0][i] > 0);
  }
  g_assert_cmpfloat(loss[0][n - 1], <, loss[0][0]); /* it learns */
  /* then what train returned, (step, loss, accuracy), as the CLI prints a
   * tuple: the values the final line printed */
  static const char RESULT[] = "(Tensor(%d, shape=(), dtype=int32), Tensor(%lf, shape=(), "
                               "dtype=float32), Tensor(%lf, shape=(), dtype=float32%c";
  for (int m = 0; m < 2; m++) {
    const char *line = strstr(out[m], "\n(Tensor(");
    if (!line)
      g_error("no result line after the final one:\n%s", out[m]);
    int r_step;
    double r_loss, r_accuracy;
    char close = 0;
    g_assert_cmpint(sscanf(line + 1, RESULT, &r_step, &r_loss, &r_accuracy, &close), ==, 4);
    g_assert_cmpint(close, ==, ')');
    g_assert_cmpint(r_step, ==, steps);
    g_assert_cmpfloat_with_epsilon(r_loss, loss[m][n - 1], 1e-6 * loss[m][n - 1]);
    g_assert_cmpfloat_with_epsilon(r_accuracy, accuracy[m][n - 1], 1e-6);
  }
  g_free(out[0]);
  g_free(out[1]);
  return accuracy[0][n - 1];
}

/* Counts g's nodes (subgraphs included) whose scope starts with `prefix`
 * and, of them, the gradient nodes naming their forward node. */
static int scope_nodes(const ts_graph *g, const char *prefix, int *n_gradient_of)
{
  int n = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *node = ts_graph_node(g, i);
    if (g_str_has_prefix(ts_node_scope(node), prefix)) {
      n++;
      *n_gradient_of += ts_node_gradient_of(node) != NULL;
    }
    for (int k = 0; k < ts_node_n_subgraphs(node); k++)
      n += scope_nodes(ts_node_subgraph(node, k), prefix, n_gradient_of);
  }
  return n;
}

/* The whole loop is one graph: a While whose body holds the model's
 * layers, the gradients (each naming its forward node), Adam's updates,
 * the accuracy's and the print. */
static void test_example_graph(void)
{
  if (!g_file_test(FASHION_MNIST, G_FILE_TEST_IS_DIR)) {
    g_test_skip("dataset-fashion-mnist is not installed");
    return;
  }
  ts_scope *scope = ts_scope_begin();
  ts_module *m = ts_module_open("seeds");
  g_assert_nonnull(m);
  ts_value steps = TS_INT_VALUE(200);
  ts_concrete *cf = ts_function_get_concrete(ts_module_lookup(m, "train"), &steps, 1);
  assert_no_error();
  const ts_graph *g = ts_concrete_graph(cf);
  const ts_graph *body = NULL;
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    if (ts_node_op(ts_graph_node(g, i)) == TS_OP_WHILE)
      body = ts_node_subgraph(ts_graph_node(g, i), 1);
  g_assert_nonnull(body);
  int n_grad_of = 0, unused = 0;
  g_assert_cmpint(scope_nodes(body, "gradients", &n_grad_of), >, 10);
  g_assert_cmpint(n_grad_of, >, 10);
  static const char *const SCOPES[] = { "reshape", "dense", "dense_1", "dense_2",
                                        "sparse_categorical_crossentropy", "Adam", "accuracy" };
  for (unsigned i = 0; i < G_N_ELEMENTS(SCOPES); i++)
    if (scope_nodes(body, SCOPES[i], &unused) == 0)
      g_error("the loop's body has no node in scope %s", SCOPES[i]);
  g_assert_true(graph_has_op_in(body, TS_OP_APPLY_ADAM, "Adam"));
  g_assert_true(graph_has_node(body, "dense_2/MatMul"));
  g_assert_true(graph_has_node(g, "PrintV2") || graph_has_node(body, "PrintV2"));
  ts_module_free(m);
  ts_scope_end(scope);
}

/* The guide's recipe in full: 200 steps of 100, the running accuracy
 * over them >= 0.70 on Fashion-MNIST (PyTorch's 0.709-0.718). */
static void test_example_guide(void)
{
  if (!g_file_test(FASHION_MNIST, G_FILE_TEST_IS_DIR)) {
    g_test_skip("dataset-fashion-mnist is not installed");
    return;
  }
  double accuracy = check_train_runs(200);
  g_test_message("final running accuracy %.4f", accuracy);
  g_assert_cmpfloat(accuracy, >=, 0.70);
  g_assert_cmpfloat(accuracy, <=, 1);
}

/* The lines of out that start with prefix, joined (owned). */
static char *lines_starting(const char *out, const char *prefix)
{
  char **lines = g_strsplit(out, "\n", -1);
  GString *kept = g_string_new(NULL);
  for (char **l = lines; *l; l++)
    if (g_str_has_prefix(*l, prefix))
      g_string_append_printf(kept, "%s\n", *l);
  g_strfreev(lines);
  return g_string_free(kept, FALSE);
}

/* train_rate is train's recipe with the rate given: at the guide's 0.001
 * it prints train's lines, at another rate others; a second call goes on
 * training; a second rate in one process, or a rate that is not a finite
 * number > 0, is an error. */
/* The guide's step on a device, eagerly and traced: SIM:0, the simulated
 * GPU, and CUDA:0 where there is one.  Its variables live there (made under
 * the device), Adam's update runs there too, and the lines are the CPU's. */
static void test_example_device(void)
{
  if (!g_file_test(FASHION_MNIST, G_FILE_TEST_IS_DIR)) {
    g_test_skip("dataset-fashion-mnist is not installed");
    return;
  }
  g_assert_cmpstr(g_getenv("TRACESCOPE_DEVICES"), ==, "sim"); /* the tests' environment */
  char *cpu = run_train("graph", "20");
  int step_c[4], step_d[4];
  double loss_c[4], loss_d[4], acc_c[4], acc_d[4];
  g_assert_cmpint(step_lines(cpu, step_c, loss_c, acc_c, 4), ==, 3);
  const char *devices[] = { "SIM:0", ts_backend_by_name("CUDA:0") ? "CUDA:0" : NULL };
  for (size_t d = 0; d < G_N_ELEMENTS(devices) && devices[d]; d++)
    for (int m = 0; m < 2; m++) {
      const char *args[] = { "run", "seeds", "train", "--device", devices[d], "--mode",
                             m ? "eager" : "graph", "--arg", "20", NULL };
      char *out = NULL, *err = NULL, *print = g_strdup_printf("PrintV2 has no kernel on %s", devices[d]);
      if (!cli_run(args, &out, &err))
        g_error("train on %s (%s) failed:\n%s%s", devices[d], args[6], out, err);
      /* every op of the step runs on the device but the print, which the host does */
      char **warnings = g_strsplit(err, "\n", -1);
      for (char **w = warnings; *w; w++)
        if (**w && !strstr(*w, print))
          g_error("train on %s (%s) warned: %s", devices[d], args[6], *w);
      g_strfreev(warnings);
      g_assert_cmpint(step_lines(out, step_d, loss_d, acc_d, 4), ==, 3);
      for (int i = 0; i < 3; i++) {
        g_assert_cmpint(step_c[i], ==, step_d[i]);
        g_assert_cmpfloat_with_epsilon(acc_c[i], acc_d[i], d ? 0.01 : 1e-12); /* CUDA's sums: other rounding */
        g_assert_cmpfloat_with_epsilon(loss_c[i], loss_d[i], (d ? 1e-3 : 1e-5) * loss_c[i]);
      }
      g_free(print);
      g_free(out);
      g_free(err);
    }
  g_free(cpu);
}

static void test_example_rate(void)
{
  if (!g_file_test(FASHION_MNIST, G_FILE_TEST_IS_DIR)) {
    g_test_skip("dataset-fashion-mnist is not installed");
    return;
  }
  char *guide = run_train("graph", "20"), *out = NULL, *err = NULL;
  const char *same[] = { "run", "seeds", "train_rate", "--arg", "20", "--arg", "0.001", "--arg", "adam", NULL };
  g_assert_true(cli_run(same, &out, &err));
  /* the same accuracies; losses to float32's last bits (the kernel a product gets) */
  int step_a[4], step_b[4];
  double loss_a[4], loss_b[4], acc_a[4], acc_b[4];
  g_assert_cmpint(step_lines(guide, step_a, loss_a, acc_a, 4), ==, 3);
  g_assert_cmpint(step_lines(out, step_b, loss_b, acc_b, 4), ==, 3);
  for (int i = 0; i < 3; i++) {
    g_assert_cmpint(step_a[i], ==, step_b[i]);
    g_assert_cmpfloat(acc_a[i], ==, acc_b[i]);
    g_assert_cmpfloat_with_epsilon(loss_a[i], loss_b[i], 1e-5 * loss_a[i]);
  }
  char *want = lines_starting(guide, "Step ");
  g_free(out);
  g_free(err);

  /* another rate: another run; called again it goes on training its model */
  const char *twice[] = { "run", "seeds", "train_rate", "--call", "--arg", "10", "--arg", "0.01",
                          "--arg", "adam", "--call", "--arg", "10", "--arg", "0.01", "--arg", "adam",
                          NULL };
  g_assert_true(cli_run(twice, &out, &err));
  char *steps = lines_starting(out, "Step ");
  char **l = g_strsplit(steps, "\n", -1);
  g_assert_cmpint(g_strv_length(l), ==, 3); /* two lines and the empty tail */
  char **guide_first = g_strsplit(want, "\n", 2);
  g_assert_cmpstr(l[0], !=, guide_first[0]);
  g_strfreev(guide_first);
  int step;
  double loss, accuracy, first_accuracy;
  g_assert_cmpint(sscanf(l[0], "Step %d : loss %lf ; accuracy %lf", &step, &loss, &first_accuracy), ==, 3);
  g_assert_cmpint(sscanf(l[1], "Step %d : loss %lf ; accuracy %lf", &step, &loss, &accuracy), ==, 3);
  g_assert_cmpfloat(accuracy, >, first_accuracy); /* the running accuracy of a model learning on */
  g_strfreev(l);
  g_free(steps);
  g_free(out);
  g_free(err);

  /* a second rate in one process: its variables would be made on a later call */
  const char *two_rates[] = { "run", "seeds", "train_rate", "--call", "--arg", "10", "--arg", "0.01",
                              "--arg", "adam", "--call", "--arg", "10", "--arg", "0.1", "--arg",
                              "adam", NULL };
  g_assert_false(cli_run(two_rates, &out, &err));
  g_assert_nonnull(strstr(err, "train_rate: its model was made for learning rate 0.01 with adam on "
                               "the first call, got 0.1 with adam"));
  g_free(out);
  g_free(err);
  const char *two_optimizers[] = { "run", "seeds", "train_rate", "--call", "--arg", "10", "--arg",
                                   "0.01", "--arg", "adam", "--call", "--arg", "10", "--arg",
                                   "0.01", "--arg", "sgd", NULL };
  g_assert_false(cli_run(two_optimizers, &out, &err));
  g_assert_nonnull(strstr(err, "got 0.01 with sgd"));
  g_free(out);
  g_free(err);

  const char *bad[] = { "run", "seeds", "train_rate", "--arg", "10", "--arg", "-1", "--arg", "adam", NULL };
  g_assert_false(cli_run(bad, &out, &err));
  g_assert_nonnull(strstr(err, "train_rate: the learning rate must be a finite number > 0, got -1"));
  g_free(out);
  g_free(err);
  const char *bad_opt[] = { "run", "seeds", "train_rate", "--arg", "10", "--arg", "1", "--arg", "rmsprop", NULL };
  g_assert_false(cli_run(bad_opt, &out, &err));
  g_assert_nonnull(strstr(err, "train_rate: the optimizer must be \"adam\" or \"sgd\", got \"rmsprop\""));
  g_free(out);
  g_free(err);

  /* SGD learns at a sound rate (the guide's optimizers are interchangeable) */
  const char *sgd[] = { "run", "seeds", "train_rate", "--arg", "20", "--arg", "0.1", "--arg", "sgd", NULL };
  g_assert_true(cli_run(sgd, &out, &err));
  g_assert_cmpint(step_lines(out, step_b, loss_b, acc_b, 4), ==, 3);
  g_assert_cmpfloat(loss_b[1], <, loss_b[0]);
  g_assert_cmpfloat(acc_b[2], >, 0.3);
  g_free(out);
  g_free(err);
  g_free(want);
  g_free(guide);
}

/* The debugger on a diverging step, eagerly (each backward and optimizer
 * op its own stop): `--break nan` stops at the first op that made a NaN
 * (Adam at 1e8: its second moment's update),
 * names it by its node in its scope, and `where` shows the loop body and
 * train_rate; health mode agrees that the step went non-finite. */
static void test_example_break_nan(void)
{
  if (!g_file_test(FASHION_MNIST, G_FILE_TEST_IS_DIR)) {
    g_test_skip("dataset-fashion-mnist is not installed");
    return;
  }
  char *commands = NULL;
  int fd = g_file_open_tmp("test-train-XXXXXX", &commands, NULL);
  g_assert_cmpint(fd, >=, 0);
  g_assert_true(g_file_set_contents(commands, "print out\nwhere\nquit\n", -1, NULL));
  close(fd);
  const char *args[] = { "debug", "seeds", "train_rate", "--arg", "20", "--arg", "1e8", "--arg",
                         "adam", "--break", "nan", "--commands", commands, NULL };
  char *out = NULL, *err = NULL;
  cli_run(args, &out, &err); /* quit cancels the call */
  const char *stop = strstr(out, "breakpoint 1: nan\n#");
  if (!stop)
    g_error("no NaN stop:\n%s%s", out, err);
  char **line = g_strsplit(stop + strlen("breakpoint 1: nan\n"), "\n", 2);
  g_test_message("%s", line[0]);
  char op[64], node[128];
  int seq;
  g_assert_cmpint(sscanf(line[0], "#%d %63s %127s at seeds_train.c:", &seq, op, node), ==, 3);
  g_assert_nonnull(strchr(node, '/')); /* a node in a scope: its twin's name */
  g_assert_nonnull(strstr(line[0], "(nan "));
  g_assert_nonnull(strstr(stop, "#0 body at seeds_train.c:"));
  g_assert_nonnull(strstr(stop, "#1 train_rate"));
  g_strfreev(line);
  g_free(out);
  g_free(err);

  /* SGD at 1e5: the weights overflow the forward pass first (dense_2's
   * logits to Inf, the loss to NaN); the first gradient that went NaN is
   * a stop of its own, named with the forward op it is the gradient of */
  static const struct {
    const char *spec, *stop;
  } SGD_STOPS[] = {
    /* the training loop's ops, named by their node's path */
    { "inf", " MatMul While/body/dense_2/MatMul at seeds_train.c:" },
    { "nan", " SparseSoftmaxCrossEntropyWithLogits "
             "While/body/sparse_categorical_crossentropy/SparseSoftmaxCrossEntropyWithLogits at" },
    { "gradients/* if nan", " While/body/gradients/" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(SGD_STOPS); i++) {
    const char *sgd[] = { "debug", "seeds", "train_rate", "--arg", "20", "--arg", "1e5", "--arg",
                          "sgd", "--break", SGD_STOPS[i].spec, "--commands", commands, NULL };
    cli_run(sgd, &out, &err);
    char *head = g_strdup_printf("breakpoint 1: %s\n#", SGD_STOPS[i].spec);
    stop = strstr(out, head);
    if (!stop)
      g_error("no stop at --break '%s':\n%s%s", SGD_STOPS[i].spec, out, err);
    line = g_strsplit(stop + strlen(head) - 1, "\n", 2);
    g_test_message("%s", line[0]);
    g_assert_nonnull(strstr(line[0], SGD_STOPS[i].stop));
    if (i == 2) /* the gradient's stop names its forward node */
      g_assert_nonnull(strstr(line[0], "(gradient of "));
    g_assert_nonnull(strstr(line[0], i ? "(nan " : "(inf "));
    g_strfreev(line);
    g_free(head);
    g_free(out);
    g_free(err);
  }

  /* Adam at the issue's 1e4 with the cross-entropy written by hand, its
   * log guarded by a where: the softmax saturates, the loss stays finite,
   * and the first NaN of the run is a gradient's, the log's, eagerly and
   * traced */
  for (int m = 0; m < 2; m++) {
    const char *where_log[] = { "debug", "seeds", "train_where_log", "--arg", "20", "--arg", "1e4",
                                "--mode", m ? "graph" : "eager", "--break", "nan", "--commands",
                                commands, NULL };
    cli_run(where_log, &out, &err);
    stop = strstr(out, "breakpoint 1: nan\n#");
    if (!stop)
      g_error("no NaN stop in train_where_log (%s):\n%s%s", where_log[8], out, err);
    line = g_strsplit(stop + strlen("breakpoint 1: nan\n"), "\n", 2);
    g_test_message("%s", line[0]);
    g_assert_nonnull(strstr(line[0], " While/body/gradients/"));
    g_assert_nonnull(strstr(line[0], "(gradient of where_log_crossentropy/Log) at seeds_train.c:"));
    g_assert_nonnull(strstr(line[0], "(nan "));
    g_assert_null(strstr(out, "Step 10")); /* quit cancelled the call at the stop */
    g_strfreev(line);
    g_free(out);
    g_free(err);
  }
  g_unlink(commands);
  g_free(commands);
}

/* The debugger steps through a training step's backward ops eagerly:
 * a breakpoint on the gradients scope stops at the first, each step after
 * it is the next gradient op, named by its node and the forward node it is
 * the gradient of (the loss's first). */
static void test_example_debug_backward(void)
{
  if (!g_file_test(FASHION_MNIST, G_FILE_TEST_IS_DIR)) {
    g_test_skip("dataset-fashion-mnist is not installed");
    return;
  }
  char *commands = NULL;
  int fd = g_file_open_tmp("test-train-XXXXXX", &commands, NULL);
  g_assert_cmpint(fd, >=, 0);
  g_assert_true(g_file_set_contents(commands, "step\nstep\nstep\nwhere\nquit\n", -1, NULL));
  close(fd);
  const char *args[] = { "debug", "seeds", "train", "--arg", "1", "--break", "gradients/*",
                         "--commands", commands, NULL };
  char *out = NULL, *err = NULL;
  cli_run(args, &out, &err); /* quit cancels the call */
  const char *at = strstr(out, "breakpoint 1: gradients/*\n");
  if (!at)
    g_error("no breakpoint:\n%s%s", out, err);
  char **lines = g_strsplit(at, "\n", -1);
  int stops = 0, gradient_of = 0, seq = -1;
  for (char **l = lines + 1; *l && **l == '#'; l++, stops++) {
    int s;
    char op[64], node[160];
    g_assert_cmpint(sscanf(*l, "#%d %63s %159s", &s, op, node), ==, 3);
    g_assert_true(g_str_has_prefix(node, "While/body/gradients/")); /* every stop a backward op (its path) */
    g_assert_cmpint(s, >, seq); /* in the order they run */
    seq = s;
    gradient_of += strstr(*l, " (gradient of sparse_categorical_crossentropy/") != NULL;
  }
  g_assert_cmpint(stops, ==, 4); /* the breakpoint's and three steps' */
  g_assert_cmpint(gradient_of, >=, 1);
  g_assert_nonnull(strstr(at, "#1 train"));
  g_strfreev(lines);
  g_free(out);
  g_free(err);
  g_unlink(commands);
  g_free(commands);
}

/* ---- the divergence finder on training steps ------------------------------------- */

/* A training step with a host-side bug: a C counter scales the gradient
 * (a learning-rate decay kept in host state), which eagerly moves every
 * call and in the graph stays the constant traced. */
static struct {
  ts_layer *layer;
  ts_optimizer *opt;
  int calls;
  bool host_decay;
} decaying;

static ts_tensor *decaying_step_fn(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *y = ts_arg(call, 1);
  ts_tape *tape = ts_tape_new(false);
  ts_tensor *loss = ts_loss_mean_squared_error(y, ts_layer_call(decaying.layer, x, true));
  ts_tape_stop(tape);
  ts_tensor *vars[2] = { ts_layer_variable(decaying.layer, 0), ts_layer_variable(decaying.layer, 1) };
  ts_tensor *grads[2];
  g_assert_true(ts_tape_gradient(tape, loss, vars, 2, grads, TS_UNCONNECTED_NONE));
  ts_tape_free(tape);
  decaying.calls++;
  if (decaying.host_decay)
    for (int i = 0; i < 2; i++)
      grads[i] = ts_mul(grads[i], ts_scalar_f32(1.0f / (float)decaying.calls));
  g_assert_true(ts_optimizer_apply(decaying.opt, grads, vars, 2));
  return loss;
}

static ts_diverge_report *diverge_decaying_step(bool host_decay)
{
  decaying.layer = ts_dense_new("dense", 3, TS_ACTIVATION_RELU, 7);
  decaying.opt = ts_sgd_new(0.1, 0.9);
  decaying.calls = 0;
  decaying.host_decay = host_decay;
  ts_function *fn = ts_function_new("decaying_step", decaying_step_fn, "x, y");
  ts_value args[2] = { TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(8, 4), -1, 1, 1)),
                       TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(8, 3), -1, 1, 2)) };
  for (int k = 0; k < 2; k++) /* two graph calls: traced, then as a program runs on */
    g_assert_nonnull(ts_function_call(fn, args, 2));
  ts_diverge_report *rep = NULL;
  g_assert_true(ts_diverge(fn, args, 2, NULL, &rep));
  ts_function_free(fn);
  ts_layer_free(decaying.layer);
  ts_optimizer_free(decaying.opt);
  return rep;
}

/* ts_diverge on training steps: a small step and the guide's loop
 * (forward, gradients, the optimizer's updates of variables, the metric) run
 * the same both ways, their ops matched and compared; a step whose gradient
 * a host counter scales diverges at the update that Mul is fused into, the
 * cause named at the Mul. */
static void test_diverge_training_step(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_diverge_report *rep = diverge_decaying_step(false);
  g_assert_false(rep->diverged);
  g_assert_cmpint(rep->n_compared, >, 10);
  ts_diverge_report_free(rep);

  rep = diverge_decaying_step(true);
  g_assert_true(rep->diverged);
  g_assert_nonnull(rep->first);
  char *text = ts_diverge_report_format(rep);
  g_test_message("%s", text);
  /* the scaling Mul is fused into the optimizer's update, the first op that
   * can differ: found there, the cause at the Mul */
  g_assert_nonnull(rep->first->node);
  g_assert_true(g_str_has_prefix(rep->first->node, "SGD/"));
  g_assert_cmpstr(rep->first->loc.func, ==, "decaying_step_fn");
  g_assert_nonnull(rep->cause);
  g_assert_nonnull(strstr(rep->cause, "input 1 of Mul at test-train.c:"));
  g_assert_nonnull(strstr(rep->cause, "constant the graph recorded while tracing (0.5)"));
  free(text);
  ts_diverge_report_free(rep);

  if (g_file_test(FASHION_MNIST, G_FILE_TEST_IS_DIR)) {
    ts_module *m = ts_module_open("seeds");
    g_assert_nonnull(m);
    ts_value steps;
    g_assert_true(ts_value_parse("2", &steps));
    int quiet = test_quiet_begin(); /* its step lines: not TAP */
    g_assert_true(ts_diverge(ts_module_lookup(m, "train"), &steps, 1, NULL, &rep));
    test_quiet_end(quiet);
    g_assert_false(rep->diverged);
    int gradient_expected = 0;
    for (int i = 0; i < rep->n_expected; i++)
      gradient_expected += rep->expected[i].node && g_str_has_prefix(rep->expected[i].node, "gradients/");
    g_test_message("train: %d compared, %d expected differences (%d of gradients)", rep->n_compared,
                   rep->n_expected, gradient_expected);
    g_assert_cmpint(rep->n_compared, >, 100);
    ts_diverge_report_free(rep);
    ts_value_clear(&steps);
    ts_module_free(m);
  }
  ts_scope_end(scope);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/train/layers/dense", test_dense);
  g_test_add_func("/train/layers/shapes", test_shape_layers);
  g_test_add_func("/train/layers/sequential-traced", test_sequential_traced);
  g_test_add_func("/train/losses", test_losses);
  g_test_add_func("/train/metric/accuracy", test_metric);
  g_test_add_func("/train/optimizer/sgd-momentum", test_sgd_momentum);
  g_test_add_func("/train/optimizer/adam", test_adam);
  g_test_add_func("/train/idx/fashion-mnist", test_idx_fashion_mnist);
  g_test_add_func("/train/idx/files", test_idx_files);
  g_test_add_func("/train/dataset/shuffle", test_dataset_shuffle);
  g_test_add_func("/train/dataset/reshuffle", test_dataset_reshuffle);
  g_test_add_func("/train/dataset/batch-take-map", test_dataset_batch);
  g_test_add_func("/train/dataset/traced", test_dataset_traced);
  g_test_add_func("/train/fit/lstm-mse", test_fit_lstm);
  g_test_add_func("/train/fit/conv-net", test_fit_conv);
  g_test_add_func("/train/example/graph", test_example_graph);
  g_test_add_func("/train/example/guide", test_example_guide);
  g_test_add_func("/train/example/rate", test_example_rate);
  g_test_add_func("/train/example/device", test_example_device);
  g_test_add_func("/train/example/break-nan", test_example_break_nan);
  g_test_add_func("/train/example/debug-backward", test_example_debug_backward);
  g_test_add_func("/train/diverge", test_diverge_training_step);
  int rc = g_test_run();
  ts_release_all();
  return rc;
}
