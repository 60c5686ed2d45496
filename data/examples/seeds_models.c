/* seeds_models.c — the guides' bigger programs, for the benchmark and the
 * viewer: Keras layers (Dense, LSTMCell, Conv2D) written with the engine's
 * ops.  The issue-2 versions make their weights on every call; the others
 * hold them as variables, made once, as a Keras layer builds itself. */
#include "seeds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Keras' default kernel initializer, seeded: uniform in ±sqrt(6 / (fan_in + fan_out)). */
/* Fans are doubles: 9 * in (a 3x3 kernel) may not fit an int64 for a huge
 * (empty) input, and the limit is a double anyway. */
static ts_tensor *glorot_uniform(ts_shape shape, double fan_in, double fan_out, uint64_t seed)
{
  double limit = sqrt(6.0 / (fan_in + fan_out));
  return ts_random_uniform(TS_F32, shape, -limit, limit, seed);
}

/* The dimension x's layer is built for (its last one); -1 with an error
 * if x does not have rank `rank` or the dimension is unknown. */
static int64_t input_dim(ts_tensor *x, int rank, const char *layer)
{
  if (!x)
    return -1;
  int64_t d = ts_tensor_dim(x, -1);
  if (ts_tensor_rank(x) != rank || d < 0) {
    char *spec = ts_shape_dtype_string(ts_tensor_dtype(x), ts_tensor_shape(x));
    ts_error_set(TS_ERR_SHAPE, TS_HERE, NULL, "%s: expected a rank-%d input with a known last "
                 "dimension, got %s", layer, rank, spec);
    free(spec);
    return -1;
  }
  return d;
}

/* ---- weights made on every call (the eager benchmark of issue 2) ------------------- */

/* Dense(units, activation="relu") with seeded Glorot-uniform weights and zero bias. */
static ts_tensor *dense_relu(ts_tensor *x, int64_t units, uint64_t seed)
{
  if (!x)
    return NULL;
  /* a scope per layer frees its weights and intermediates as it goes */
  ts_scope *scope = ts_scope_begin();
  int64_t in = ts_tensor_dim(x, -1);
  ts_tensor *w = glorot_uniform(TS_SHAPE(in, units), in, units, seed);
  ts_tensor *b = ts_zeros(TS_F32, TS_SHAPE(units));
  return ts_scope_end_keep(scope, ts_relu(ts_add(ts_matmul(x, w), b)));
}

/* Guide "Better performance with tf.function" (the model with many small layers):
 *   x = Flatten(x); for layer in [Dense(64, activation="relu")] * n: x = layer(x) */
ts_tensor *dense_chain(ts_call *c)
{
  ts_tensor *x = ts_flatten(ts_arg(c, 0));
  int64_t n = arg_count(c, 1, "dense_chain");
  if (n < 0)
    return NULL;
  for (int64_t i = 0; i < n; i++)
    x = dense_relu(x, 64, (uint64_t)i + 1);
  return x;
}

/* Guide "Better performance with tf.function": a few expensive ops.
 *   conv_layer = tf.keras.layers.Conv2D(100, 3); conv_layer(image)
 * A 3x3 valid convolution to 100 channels with seeded weights and zero bias. */
ts_tensor *conv_layer(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  if (!x)
    return NULL;
  int64_t in = ts_tensor_rank(x) > 0 ? ts_tensor_dim(x, -1) : 1;
  ts_tensor *filter = glorot_uniform(TS_SHAPE(3, 3, in, 100), 9.0 * (double)in, 9.0 * 100, 1);
  ts_tensor *bias = ts_zeros(TS_F32, TS_SHAPE(100));
  return ts_add(ts_conv2d(x, filter, 1, 1, TS_PADDING_VALID), bias);
}

/* ---- layers holding their weights as variables ---------------------------------- */

/* A layer's variables, made on its first call outside any trace
 * (tf.init_scope), as Keras' build() does; kept until the module is
 * unloaded.  recurrent_kernel is the LSTM's only. */
typedef struct layer {
  ts_tensor *kernel, *recurrent_kernel, *bias;
} layer;

enum { N_DENSE = 101, LSTM = N_DENSE, CONV, SMALL_DENSE_1, SMALL_DENSE_2, N_LAYERS };
static layer layers[N_LAYERS];

static void layer_clear(layer *l)
{
  ts_tensor_unref(l->kernel);
  ts_tensor_unref(l->recurrent_kernel);
  ts_tensor_unref(l->bias);
  *l = (layer){ 0 };
}

__attribute__((destructor)) static void layers_release(void)
{
  for (int i = 0; i < N_LAYERS; i++)
    layer_clear(&layers[i]);
}

/* Turns initial values into l's variables "name/kernel" ...; all or none.
 * `recurrent` NULL: the layer has no recurrent kernel. */
static bool layer_init(layer *l, const char *name, ts_tensor *kernel, ts_tensor *recurrent,
                       ts_tensor *bias)
{
  char var[96];
  snprintf(var, sizeof var, "%s/kernel", name);
  l->kernel = ts_variable_new(kernel, var);
  if (recurrent) {
    snprintf(var, sizeof var, "%s/recurrent_kernel", name);
    l->recurrent_kernel = ts_variable_new(recurrent, var);
  }
  snprintf(var, sizeof var, "%s/bias", name);
  l->bias = ts_variable_new(bias, var);
  if (ts_failed())
    layer_clear(l);
  return l->kernel != NULL;
}

/* Dense(units), relu or linear, in name scope `name`. */
static ts_tensor *dense(layer *l, const char *name, ts_tensor *x, int64_t units, uint64_t seed,
                        bool relu)
{
  if (!l->kernel) {
    int64_t in = input_dim(x, 2, name);
    if (in < 0)
      return NULL;
    TS_INIT_SCOPE {
      layer_init(l, name, glorot_uniform(TS_SHAPE(in, units), in, units, seed), NULL,
                 ts_zeros(TS_F32, TS_SHAPE(units)));
    }
    if (!l->kernel)
      return NULL;
  }
  TS_NAME_SCOPE(name) {
    x = ts_add(ts_matmul(x, ts_read(l->kernel)), ts_read(l->bias));
    if (relu)
      x = ts_relu(x);
  }
  return x;
}

/* Guide "Introduction to graphs and tf.function": seeing the speed-up.
 *   class SequentialModel(tf.keras.Model):
 *     def __init__(self, **kwargs):
 *       self.flatten = tf.keras.layers.Flatten(input_shape=(28, 28))
 *       self.my_layers = [tf.keras.layers.Dense(64, activation="relu") for n in range(100)]
 *       self.dropout = tf.keras.layers.Dropout(0.2)
 *       self.dense_2 = tf.keras.layers.Dense(10)
 *     def call(self, x):
 *       x = self.flatten(x)
 *       for layer in self.my_layers:
 *         x = layer(x)
 *       x = self.dropout(x)
 *       x = self.dense_2(x)
 *       return x
 *   input_data = tf.random.uniform([20, 28, 28])
 * The layers are name scopes dense_1 ... dense_100, dropout and dense_101
 * (the output).  A model call is inference (training=False): dropout is
 * an Identity. */
ts_tensor *sequential_model(ts_call *c)
{
  ts_tensor *x = NULL;
  TS_NAME_SCOPE("flatten") x = ts_flatten(ts_arg(c, 0));
  for (int i = 0; i < N_DENSE - 1 && x; i++) {
    char name[16];
    snprintf(name, sizeof name, "dense_%d", i + 1);
    x = dense(&layers[i], name, x, 64, (uint64_t)i + 1, true);
  }
  TS_NAME_SCOPE("dropout") x = ts_dropout(x, 0.2, false, 0);
  return dense(&layers[N_DENSE - 1], "dense_101", x, 10, N_DENSE, false);
}

/* Guide "Introduction to graphs and tf.function" (the model fit() traces):
 *   class SequentialModel(tf.keras.Model):
 *     def __init__(self):
 *       self.flatten = tf.keras.layers.Flatten(input_shape=(28, 28))
 *       self.dense_1 = tf.keras.layers.Dense(128, activation="relu")
 *       self.dropout = tf.keras.layers.Dropout(0.2)
 *       self.dense_2 = tf.keras.layers.Dense(10)
 *     def call(self, x):
 *       x = self.flatten(x)
 *       x = self.dense_1(x)
 *       x = self.dropout(x)
 *       x = self.dense_2(x)
 *       return x
 *   input_data = tf.random.uniform([60, 28, 28])
 * (less the guide's EagerLayer, which only prints).  Inference: dropout is
 * an Identity. */
ts_tensor *dense_128_model(ts_call *c)
{
  ts_tensor *x = NULL;
  TS_NAME_SCOPE("flatten") x = ts_flatten(ts_arg(c, 0));
  x = dense(&layers[SMALL_DENSE_1], "dense_1", x, 128, 1, true);
  TS_NAME_SCOPE("dropout") x = ts_dropout(x, 0.2, false, 0);
  return dense(&layers[SMALL_DENSE_2], "dense_2", x, 10, 2, false);
}

/* Guide "Better performance with tf.function": a cell of small ops.
 *   lstm_cell = tf.keras.layers.LSTMCell(10)
 *   def lstm_fn(input, state):
 *     return lstm_cell(input, state)
 *   input = tf.zeros([10, 10]); state = [tf.zeros([10, 10])] * 2
 * Keras' cell: z = input·W + h·U + b, split into the input, forget, cell
 * and output gates; c' = f*c + i*tanh(g), h' = o*tanh(c').  It returns h',
 * the cell's output (Keras returns the state [h', c'] beside it).  W and
 * U are Glorot uniform (Keras makes U orthogonal); b is 0, and 1 for the
 * forget gate (unit_forget_bias). */
ts_tensor *lstm_fn(ts_call *c)
{
  enum { UNITS = 10 };
  ts_tensor *input = ts_arg(c, 0), *h = ts_arg(c, 1), *state_c = ts_arg(c, 2);
  layer *l = &layers[LSTM];
  if (!h || !state_c)
    return NULL;
  if (!l->kernel) {
    int64_t in = input_dim(input, 2, "lstm_cell");
    if (in < 0)
      return NULL;
    TS_INIT_SCOPE {
      ts_tensor *bias[3] = { ts_zeros(TS_F32, TS_SHAPE(UNITS)), ts_ones(TS_F32, TS_SHAPE(UNITS)),
                             ts_zeros(TS_F32, TS_SHAPE(2 * UNITS)) };
      layer_init(l, "lstm_cell", glorot_uniform(TS_SHAPE(in, 4 * UNITS), in, 4 * UNITS, 1),
                 glorot_uniform(TS_SHAPE(UNITS, 4 * UNITS), UNITS, 4 * UNITS, 2),
                 ts_concat(bias, 3, 0));
    }
    if (!l->kernel)
      return NULL;
  }
  ts_tensor *out = NULL;
  TS_NAME_SCOPE("lstm_cell") {
    ts_tensor *z = ts_add(ts_add(ts_matmul(input, ts_read(l->kernel)),
                                 ts_matmul(h, ts_read(l->recurrent_kernel))),
                          ts_read(l->bias));
    ts_tensor *gate[4] = { NULL };
    ts_split(z, 4, 1, gate);
    ts_tensor *i = ts_sigmoid(gate[0]), *f = ts_sigmoid(gate[1]), *o = ts_sigmoid(gate[3]);
    ts_tensor *c_next = ts_add(ts_mul(f, state_c), ts_mul(i, ts_tanh(gate[2])));
    out = ts_mul(o, ts_tanh(c_next));
  }
  return out;
}

/* Guide "Better performance with tf.function": a few expensive ops.
 *   conv_layer = tf.keras.layers.Conv2D(100, 3)
 *   def conv_fn(image):
 *     return conv_layer(image)
 *   image = tf.zeros([1, 200, 200, 100])
 * A 3x3 valid convolution to 100 channels, Glorot-uniform kernel, zero bias. */
ts_tensor *conv_fn(ts_call *c)
{
  enum { FILTERS = 100 };
  ts_tensor *image = ts_arg(c, 0);
  layer *l = &layers[CONV];
  if (!l->kernel) {
    int64_t in = input_dim(image, 4, "conv2d");
    if (in < 0)
      return NULL;
    TS_INIT_SCOPE {
      layer_init(l, "conv2d", glorot_uniform(TS_SHAPE(3, 3, in, FILTERS), 9.0 * (double)in, 9.0 * FILTERS, 1),
                 NULL, ts_zeros(TS_F32, TS_SHAPE(FILTERS)));
    }
    if (!l->kernel)
      return NULL;
  }
  ts_tensor *out = NULL;
  TS_NAME_SCOPE("conv2d") {
    out = ts_add(ts_conv2d(image, ts_read(l->kernel), 1, 1, TS_PADDING_VALID), ts_read(l->bias));
  }
  return out;
}
