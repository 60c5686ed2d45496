/* layers.c — Keras' layers on the engine's ops (tracescope-train.h).  A
 * layer is a kind (a row of KINDS: its name and how it builds and calls)
 * with its settings and, once built, its variables.  Building happens on
 * the first call, under TS_INIT_SCOPE, so a layer first called while
 * tracing still makes its weights once, eagerly. */
#include "train-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { V_KERNEL, V_RECURRENT, V_BIAS, N_VARS };

typedef enum layer_kind {
  K_DENSE,
  K_FLATTEN,
  K_RESHAPE,
  K_DROPOUT,
  K_CONV2D,
  K_MAX_POOL2D,
  K_LSTM_CELL,
  K_COUNT
} layer_kind;

struct ts_layer {
  layer_kind kind;
  char *name;
  int64_t units; /* Dense, LSTMCell: units; Conv2D: filters */
  ts_activation activation;
  uint64_t seed;
  double rate;   /* Dropout */
  ts_shape target; /* Reshape */
  int kh, kw, sh, sw;
  ts_padding padding;
  ts_tensor *vars[N_VARS]; /* kernel, recurrent kernel (LSTM), bias; NULL until built */
  int n_vars;
  ts_tensor *seed_state;   /* Dropout: calls with training so far (i64), NULL until the first */
};

/* Keras' names: "dense", "dense_1", ... per kind, for the process. */
static const char *const KIND_NAMES[K_COUNT] = {
  [K_DENSE] = "dense",         [K_FLATTEN] = "flatten",     [K_RESHAPE] = "reshape",
  [K_DROPOUT] = "dropout",     [K_CONV2D] = "conv2d",       [K_MAX_POOL2D] = "max_pooling2d",
  [K_LSTM_CELL] = "lstm_cell",
};
static int name_counts[K_COUNT]; /* atomic */

void ts_layer_names_reset(void)
{
  for (int k = 0; k < K_COUNT; k++)
    __atomic_store_n(&name_counts[k], 0, __ATOMIC_RELAXED);
}

static ts_layer *layer_new(layer_kind kind, const char *name)
{
  ts_layer *l = g_new0(ts_layer, 1);
  l->kind = kind;
  if (name && *name) {
    l->name = g_strdup(name);
  } else {
    int k = __atomic_fetch_add(&name_counts[kind], 1, __ATOMIC_RELAXED);
    l->name = k ? g_strdup_printf("%s_%d", KIND_NAMES[kind], k) : g_strdup(KIND_NAMES[kind]);
  }
  return l;
}

static bool check_activation(ts_activation a, const char *what)
{
  if ((unsigned)a < TS_ACTIVATION_COUNT)
    return true;
  train_error(TS_ERR_INVALID_ARGUMENT, "%s: unknown activation %d", what, (int)a);
  return false;
}

ts_layer *ts_dense_new(const char *name, int64_t units, ts_activation activation, uint64_t seed)
{
  if (units <= 0) {
    train_error(TS_ERR_INVALID_ARGUMENT, "Dense: units must be > 0, got %lld", (long long)units);
    return NULL;
  }
  if (!check_activation(activation, "Dense"))
    return NULL;
  ts_layer *l = layer_new(K_DENSE, name);
  l->units = units;
  l->activation = activation;
  l->seed = seed;
  return l;
}

ts_layer *ts_flatten_layer_new(const char *name)
{
  return layer_new(K_FLATTEN, name);
}

ts_layer *ts_reshape_layer_new(const char *name, ts_shape target)
{
  if (target.rank < 0 || target.rank >= TS_MAX_RANK) {
    train_error(TS_ERR_INVALID_ARGUMENT, "Reshape: target rank must be 0..%d, got %d",
                TS_MAX_RANK - 1, target.rank);
    return NULL;
  }
  ts_layer *l = layer_new(K_RESHAPE, name);
  l->target = target;
  return l;
}

ts_layer *ts_dropout_layer_new(const char *name, double rate, uint64_t seed)
{
  if (!(rate >= 0 && rate < 1)) {
    train_error(TS_ERR_INVALID_ARGUMENT, "Dropout: rate must be in [0, 1), got %g", rate);
    return NULL;
  }
  ts_layer *l = layer_new(K_DROPOUT, name);
  l->rate = rate;
  l->seed = seed;
  return l;
}

static bool check_window(int h, int w, int sh, int sw, const char *what)
{
  if (h > 0 && w > 0 && sh > 0 && sw > 0)
    return true;
  train_error(TS_ERR_INVALID_ARGUMENT, "%s: window %dx%d and strides %dx%d must be > 0", what,
              h, w, sh, sw);
  return false;
}

ts_layer *ts_conv2d_layer_new(const char *name, int64_t filters, int kernel_h, int kernel_w,
                              int stride_h, int stride_w, ts_padding padding,
                              ts_activation activation, uint64_t seed)
{
  if (filters <= 0) {
    train_error(TS_ERR_INVALID_ARGUMENT, "Conv2D: filters must be > 0, got %lld",
                (long long)filters);
    return NULL;
  }
  if (!check_window(kernel_h, kernel_w, stride_h, stride_w, "Conv2D") ||
      !check_activation(activation, "Conv2D"))
    return NULL;
  ts_layer *l = layer_new(K_CONV2D, name);
  *l = (ts_layer){ .kind = K_CONV2D, .name = l->name, .units = filters, .activation = activation,
                   .seed = seed, .kh = kernel_h, .kw = kernel_w, .sh = stride_h, .sw = stride_w,
                   .padding = padding };
  return l;
}

ts_layer *ts_max_pool2d_layer_new(const char *name, int pool_h, int pool_w, int stride_h,
                                  int stride_w, ts_padding padding)
{
  if (!check_window(pool_h, pool_w, stride_h, stride_w, "MaxPool2D"))
    return NULL;
  ts_layer *l = layer_new(K_MAX_POOL2D, name);
  *l = (ts_layer){ .kind = K_MAX_POOL2D, .name = l->name, .kh = pool_h, .kw = pool_w,
                   .sh = stride_h, .sw = stride_w, .padding = padding };
  return l;
}

ts_layer *ts_lstm_cell_new(const char *name, int64_t units, uint64_t seed)
{
  if (units <= 0 || units > INT64_MAX / 4) {
    train_error(TS_ERR_INVALID_ARGUMENT, "LSTMCell: units must be in 1..2^61, got %lld",
                (long long)units);
    return NULL;
  }
  ts_layer *l = layer_new(K_LSTM_CELL, name);
  l->units = units;
  l->seed = seed;
  return l;
}

void ts_layer_free(ts_layer *l)
{
  if (!l)
    return;
  for (int i = 0; i < N_VARS; i++)
    ts_tensor_unref(l->vars[i]);
  ts_tensor_unref(l->seed_state);
  g_free(l->name);
  g_free(l);
}

const char *ts_layer_name(const ts_layer *l)
{
  return l ? l->name : NULL;
}

int ts_layer_n_variables(const ts_layer *l)
{
  return l ? l->n_vars : 0;
}

ts_tensor *ts_layer_variable(const ts_layer *l, int i)
{
  if (!l || i < 0 || i >= l->n_vars)
    return NULL;
  for (int k = 0, seen = 0; k < N_VARS; k++)
    if (l->vars[k] && seen++ == i)
      return l->vars[k];
  return NULL;
}

/* ---- building ------------------------------------------------------------------ */

/* Keras' default kernel initializer, seeded.  Fans are doubles: a big
 * kernel's fan may not fit an int64 product, and the limit is a double. */
static ts_tensor *glorot_uniform(ts_shape shape, double fan_in, double fan_out, uint64_t seed)
{
  double limit = sqrt(6.0 / (fan_in + fan_out));
  return ts_random_uniform(TS_F32, shape, -limit, limit, seed);
}

/* The input's last dimension, which the layer is built for; -1 + error
 * unless x has rank `rank` (0: any rank >= 2) and the dimension is known. */
static int64_t input_dim(const ts_layer *l, ts_tensor *x, int rank)
{
  int r = ts_tensor_rank(x);
  int64_t d = r > 0 ? ts_tensor_dim(x, -1) : -1;
  if ((rank ? r != rank : r < 2) || d < 0) {
    char *spec = ts_shape_dtype_string(ts_tensor_dtype(x), ts_tensor_shape(x));
    train_error(TS_ERR_SHAPE, "%s: expected a rank-%s input with a known last dimension, got %s",
                l->name, rank == 4 ? "4" : rank == 2 ? "2" : "2+", spec);
    free(spec);
    return -1;
  }
  return d;
}

/* Makes the variables "NAME/kernel", ... from initial values (all or none). */
static bool layer_build(ts_layer *l, ts_tensor *const init[N_VARS])
{
  static const char *const VAR_NAMES[N_VARS] = { "kernel", "recurrent_kernel", "bias" };
  for (int i = 0; i < N_VARS; i++) {
    if (!init[i])
      continue;
    char *var = g_strdup_printf("%s/%s", l->name, VAR_NAMES[i]);
    l->vars[i] = ts_variable_new(init[i], var);
    g_free(var);
    if (!l->vars[i])
      break;
  }
  if (ts_failed()) {
    for (int i = 0; i < N_VARS; i++)
      g_clear_pointer(&l->vars[i], ts_tensor_unref);
    return false;
  }
  l->n_vars = 0;
  for (int i = 0; i < N_VARS; i++)
    l->n_vars += l->vars[i] != NULL;
  return true;
}

/* Builds l for input x on its first call; true when it has its variables. */
static bool ensure_built(ts_layer *l, ts_tensor *x)
{
  if (l->n_vars)
    return true;
  int64_t in = input_dim(l, x, l->kind == K_CONV2D ? 4 : l->kind == K_LSTM_CELL ? 2 : 0);
  if (in < 0)
    return false;
  double u = (double)l->units;
  bool ok = false;
  ts_scope *scope = ts_scope_begin();
  TS_INIT_SCOPE {
    ts_tensor *init[N_VARS] = { NULL };
    if (l->kind == K_DENSE) {
      init[V_KERNEL] = glorot_uniform(TS_SHAPE(in, l->units), (double)in, u, l->seed);
      init[V_BIAS] = ts_zeros(TS_F32, TS_SHAPE(l->units));
    } else if (l->kind == K_CONV2D) {
      double area = (double)l->kh * l->kw;
      init[V_KERNEL] = glorot_uniform(TS_SHAPE(l->kh, l->kw, in, l->units), area * (double)in,
                                      area * u, l->seed);
      init[V_BIAS] = ts_zeros(TS_F32, TS_SHAPE(l->units));
    } else { /* K_LSTM_CELL */
      init[V_KERNEL] = glorot_uniform(TS_SHAPE(in, 4 * l->units), (double)in, 4 * u, l->seed);
      init[V_RECURRENT] = glorot_uniform(TS_SHAPE(l->units, 4 * l->units), u, 4 * u,
                                         l->seed + 1);
      ts_tensor *bias[3] = { ts_zeros(TS_F32, TS_SHAPE(l->units)),
                             ts_ones(TS_F32, TS_SHAPE(l->units)),
                             ts_zeros(TS_F32, TS_SHAPE(2 * l->units)) };
      init[V_BIAS] = ts_concat(bias, 3, 0);
    }
    ok = !ts_failed() && layer_build(l, init);
  }
  ts_scope_end(scope);
  return ok;
}

/* ---- calling ---------------------------------------------------------------------- */

static ts_tensor *activation_at(ts_loc loc, ts_tensor *x, ts_activation a)
{
  switch (a) {
  case TS_ACTIVATION_RELU: return ts_relu_at(loc, x);
  case TS_ACTIVATION_SIGMOID: return ts_sigmoid_at(loc, x);
  case TS_ACTIVATION_TANH: return ts_tanh_at(loc, x);
  case TS_ACTIVATION_SOFTMAX: return ts_softmax_at(loc, x);
  default: return x;
  }
}

/* [N, ...] -> [N, target...]: the batch dimension as the input has it
 * (read from its shape when it is unknown while tracing). */
static ts_tensor *reshape_call(ts_loc loc, ts_layer *l, ts_tensor *x)
{
  ts_shape s = { .rank = l->target.rank + 1 };
  s.dim[0] = -1;
  int unknown = 0;
  for (int i = 0; i < l->target.rank; i++)
    unknown += (s.dim[i + 1] = l->target.dim[i]) < 0;
  if (unknown && ts_tensor_rank(x) > 0 && ts_tensor_dim(x, 0) >= 0)
    s.dim[0] = ts_tensor_dim(x, 0); /* the -1 is the target's */
  return ts_reshape_at(loc, x, s);
}

/* Keras' Dropout draws a new mask on each call (its seed generator's state
 * advances): the mask's stream is (seed, calls so far), the count an i64
 * variable "NAME/seed_generator_state" (made on the first call), so a
 * traced call advances it in the graph and the same seed gives the same
 * masks, eagerly and traced. */
static ts_tensor *dropout_call(ts_loc loc, ts_layer *l, ts_tensor *x, bool training)
{
  if (!training || l->rate == 0)
    return ts_dropout_at(loc, x, l->rate, false, l->seed);
  if (!l->seed_state) {
    char *var = g_strdup_printf("%s/seed_generator_state", l->name);
    TS_INIT_SCOPE {
      ts_scope *scope = ts_scope_begin();
      l->seed_state = ts_variable_new(ts_scalar_i64(0), var);
      ts_scope_end(scope);
    }
    g_free(var);
    if (!l->seed_state)
      return NULL;
  }
  ts_tensor *counter = ts_read_at(loc, l->seed_state);
  ts_assign_add_at(loc, l->seed_state, ts_scalar_i64(1));
  return ts_dropout_stream_at(loc, x, l->rate, true, l->seed, counter);
}

static ts_tensor *layer_call(ts_loc loc, ts_layer *l, ts_tensor *x, bool training)
{
  switch (l->kind) {
  case K_DENSE: {
    ts_tensor *y = ts_matmul_at(loc, x, ts_read_at(loc, l->vars[V_KERNEL]), false, false);
    y = ts_add_at(loc, y, ts_read_at(loc, l->vars[V_BIAS]));
    return activation_at(loc, y, l->activation);
  }
  case K_FLATTEN: return ts_flatten_at(loc, x);
  case K_RESHAPE: return reshape_call(loc, l, x);
  case K_DROPOUT: return dropout_call(loc, l, x, training);
  case K_CONV2D: {
    ts_tensor *y = ts_conv2d_at(loc, x, ts_read_at(loc, l->vars[V_KERNEL]), l->sh, l->sw,
                                l->padding);
    y = ts_add_at(loc, y, ts_read_at(loc, l->vars[V_BIAS]));
    return activation_at(loc, y, l->activation);
  }
  case K_MAX_POOL2D: return ts_max_pool2d_at(loc, x, l->kh, l->kw, l->sh, l->sw, l->padding);
  default: return NULL;
  }
}

static bool has_weights(const ts_layer *l)
{
  return l->kind == K_DENSE || l->kind == K_CONV2D || l->kind == K_LSTM_CELL;
}

ts_tensor *ts_layer_call_at(ts_loc loc, ts_layer *l, ts_tensor *x, bool training)
{
  if (!l) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL, "layer call: the layer is NULL");
    return NULL;
  }
  if (!x)
    return ts_identity_at(loc, x); /* reports the missing input as every op does */
  if (l->kind == K_LSTM_CELL) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL,
                 "%s: an LSTMCell takes a state: call it with ts_lstm_cell_call", l->name);
    return NULL;
  }
  if (has_weights(l) && !ensure_built(l, x))
    return NULL;
  ts_tensor *y = NULL;
  TS_NAME_SCOPE(l->name) y = layer_call(loc, l, x, training);
  return y;
}

bool ts_lstm_cell_call_at(ts_loc loc, ts_layer *l, ts_tensor *x, ts_tensor *h, ts_tensor *c,
                          ts_tensor **h_out, ts_tensor **c_out)
{
  if (!l || l->kind != K_LSTM_CELL || !h_out || !c_out) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL,
                 "LSTM cell call: needs an LSTMCell layer and both outputs");
    return false;
  }
  *h_out = *c_out = NULL;
  if (!x || !h || !c) {
    ts_identity_at(loc, NULL);
    return false;
  }
  if (!ensure_built(l, x))
    return false;
  TS_NAME_SCOPE(l->name) {
    ts_tensor *z = ts_add_at(loc, ts_matmul_at(loc, x, ts_read_at(loc, l->vars[V_KERNEL]), false, false),
                             ts_matmul_at(loc, h, ts_read_at(loc, l->vars[V_RECURRENT]), false, false));
    z = ts_add_at(loc, z, ts_read_at(loc, l->vars[V_BIAS]));
    ts_tensor *gate[4] = { NULL };
    if (z && ts_split_at(loc, z, 4, 1, gate) == 4) {
      ts_tensor *i = ts_sigmoid_at(loc, gate[0]), *f = ts_sigmoid_at(loc, gate[1]);
      ts_tensor *o = ts_sigmoid_at(loc, gate[3]);
      *c_out = ts_add_at(loc, ts_mul_at(loc, f, c), ts_mul_at(loc, i, ts_tanh_at(loc, gate[2])));
      *h_out = ts_mul_at(loc, o, ts_tanh_at(loc, *c_out));
    }
  }
  if (!*h_out)
    *c_out = NULL;
  return *h_out != NULL;
}

/* ---- Sequential ------------------------------------------------------------------ */

struct ts_sequential {
  ts_layer **layers;
  int n;
};

ts_sequential *ts_sequential_new(ts_layer *const *layers, int n)
{
  if (n < 0 || (n && !layers)) {
    train_error(TS_ERR_INVALID_ARGUMENT, "Sequential: bad layer list (n = %d)", n);
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!layers[i] || layers[i]->kind == K_LSTM_CELL) {
      train_error(TS_ERR_INVALID_ARGUMENT, "Sequential: layer %d is %s", i,
                  layers[i] ? "an LSTMCell (it takes a state)" : "NULL");
      return NULL;
    }
  ts_sequential *m = g_new0(ts_sequential, 1);
  m->layers = g_memdup2(layers, sizeof *layers * (size_t)n);
  m->n = n;
  return m;
}

void ts_sequential_free(ts_sequential *m)
{
  if (!m)
    return;
  for (int i = 0; i < m->n; i++)
    ts_layer_free(m->layers[i]);
  g_free(m->layers);
  g_free(m);
}

ts_tensor *ts_sequential_call_at(ts_loc loc, ts_sequential *m, ts_tensor *x, bool training)
{
  if (!m) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL, "Sequential call: the model is NULL");
    return NULL;
  }
  for (int i = 0; i < m->n && x; i++)
    x = ts_layer_call_at(loc, m->layers[i], x, training);
  return x;
}

int ts_sequential_n_variables(const ts_sequential *m)
{
  int n = 0;
  for (int i = 0; m && i < m->n; i++)
    n += m->layers[i]->n_vars;
  return n;
}

ts_tensor *ts_sequential_variable(const ts_sequential *m, int i)
{
  for (int k = 0; m && k < m->n && i >= 0; k++) {
    if (i < m->layers[k]->n_vars)
      return ts_layer_variable(m->layers[k], i);
    i -= m->layers[k]->n_vars;
  }
  return NULL;
}
