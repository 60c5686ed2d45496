/* seeds_train.c — the guide's training loop ("Better performance with
 * tf.function and AutoGraph", TF 2.0: "Example: Training a simple model")
 * on Fashion-MNIST, with the whole loop in one traced function:
 *
 *   def mnist_dataset():
 *     (x, y), _ = tf.keras.datasets.mnist.load_data()
 *     ds = tf.data.Dataset.from_tensor_slices((x, y))
 *     ds = ds.map(prepare_mnist_features_and_labels)   # x / 255 as f32, y as i64
 *     ds = ds.take(20000).shuffle(20000).batch(100)
 *   model = tf.keras.Sequential((
 *     tf.keras.layers.Reshape(target_shape=(28 * 28,), input_shape=(28, 28)),
 *     tf.keras.layers.Dense(100, activation='relu'),
 *     tf.keras.layers.Dense(100, activation='relu'),
 *     tf.keras.layers.Dense(10)))
 *   optimizer = tf.keras.optimizers.Adam()
 *   compute_loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
 *   compute_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
 *   def train_one_step(model, optimizer, x, y):
 *     with tf.GradientTape() as tape:
 *       logits = model(x)
 *       loss = compute_loss(y, logits)
 *     grads = tape.gradient(loss, model.trainable_variables)
 *     optimizer.apply_gradients(zip(grads, model.trainable_variables))
 *     compute_accuracy(y, logits)
 *     return loss
 *   @tf.function
 *   def train(model, optimizer):
 *     train_ds = mnist_dataset()
 *     step = 0; loss = 0.0; accuracy = 0.0
 *     for x, y in train_ds:
 *       step += 1
 *       loss = train_one_step(model, optimizer, x, y)
 *       if step % 10 == 0:
 *         tf.print('Step', step, ': loss', loss, '; accuracy', compute_accuracy.result())
 *     return step, loss, accuracy
 *   step, loss, accuracy = train(model, optimizer)
 *   print('Final step', step, ': loss', loss, '; accuracy', compute_accuracy.result())
 *
 * train(steps) takes steps * 100 examples (the guide: 200 steps, 20,000).
 * It returns (step, loss, accuracy) as the guide's function does, a tuple
 * (ts_tuple) that callers read with ts_function_call_n and the CLI prints
 * whole; accuracy is the metric's result (the guide returns its unchanged
 * Python 0.0 and prints compute_accuracy.result() instead).  The final
 * line is the guide's print() of those results ("Final step
 * tf.Tensor(200, shape=(), dtype=int32) : loss tf.Tensor(...)"): a print
 * op after the loop formatting tensors as str() does (ts_print_python), so
 * it prints the same eagerly and traced, for callers that only show the
 * output.  The model, optimizer and metric
 * are the program's globals, made on the first call, as the guide's are:
 * a second call goes on training them.
 *
 * train_rate(steps, learning_rate, optimizer) is the same recipe with the
 * learning rate and the optimizer given ("adam", as train with 0.001, or
 * "sgd": tf.keras.optimizers.SGD(learning_rate), as interchangeable in the
 * guide's apply_gradients), on a model of its own, so a diverging rate
 * leaves train's alone.  Its model and optimizer are made on its first
 * call, with that call's rate and optimizer: variables are made on a
 * function's first call only (as tf.function has it), so a later call with
 * others is an error.
 *
 * train_where_log(steps, learning_rate) is train_rate with Adam and the
 * cross-entropy written by hand, as users write it, with the log guarded
 * by a where (where_log_loss below): at a large rate (1e4) the softmax
 * saturates, the loss stays finite, and a gradient goes NaN first, which
 * the debugger's `--break nan` finds. */
#include "seeds.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <tracescope-train.h>

enum { BATCH = 100, SEED = 42 };
#define GUIDE_RATE 0.001

/* One learning rate's and optimizer's model, optimizer and metric. */
typedef struct trainer {
  double rate;
  char optimizer_name[8]; /* "adam" or "sgd" */
  bool where_log;         /* where_log_loss instead of the built-in loss */
  ts_sequential *model;
  ts_optimizer *optimizer;
  ts_metric *accuracy;
} trainer;

static struct {
  ts_tensor *images, *labels; /* Fashion-MNIST's training split, loaded once */
  trainer guide, rated, where_log; /* train's, train_rate's, train_where_log's */
} g;

static void trainer_clear(trainer *t)
{
  ts_sequential_free(t->model);
  ts_optimizer_free(t->optimizer);
  ts_metric_free(t->accuracy);
  memset(t, 0, sizeof *t);
}

__attribute__((destructor)) static void train_globals_release(void)
{
  ts_tensor_unref(g.images);
  ts_tensor_unref(g.labels);
  trainer_clear(&g.guide);
  trainer_clear(&g.rated);
  trainer_clear(&g.where_log);
}

/* t, made for learning rate `rate` with optimizer `opt` ("adam" or "sgd")
 * on its first call (eagerly, even while tracing); the data is loaded on
 * the first of all. */
static trainer *trainer_ready(trainer *t, double rate, const char *opt, const char *fn)
{
  if (strcmp(opt, "adam") != 0 && strcmp(opt, "sgd") != 0) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, TS_HERE, NULL,
                 "%s: the optimizer must be \"adam\" or \"sgd\", got \"%s\"", fn, opt);
    return NULL;
  }
  if (t->model) {
    if (t->rate == rate && strcmp(t->optimizer_name, opt) == 0)
      return t;
    ts_error_set(TS_ERR_INVALID_ARGUMENT, TS_HERE, NULL,
                 "%s: its model was made for learning rate %g with %s on the first call, got "
                 "%g with %s (variables are made on the first call only: one rate and "
                 "optimizer a process)", fn, t->rate, t->optimizer_name, rate, opt);
    return NULL;
  }
  bool ok = false;
  TS_INIT_SCOPE {
    if (!g.images) {
      ts_scope *scope = ts_scope_begin();
      ts_tensor *images = NULL, *labels = NULL;
      if (ts_fashion_mnist_load("train", &images, &labels)) {
        g.images = ts_tensor_ref(images);
        g.labels = ts_tensor_ref(labels);
      }
      ts_scope_end(scope);
    }
    /* Keras' names in a fresh session, whatever else the process made */
    ts_layer *layers[] = {
      ts_reshape_layer_new("reshape", TS_SHAPE(28 * 28)),
      ts_dense_new("dense", 100, TS_ACTIVATION_RELU, SEED + 1),
      ts_dense_new("dense_1", 100, TS_ACTIVATION_RELU, SEED + 2),
      ts_dense_new("dense_2", 10, TS_ACTIVATION_LINEAR, SEED + 3),
    };
    t->rate = rate;
    snprintf(t->optimizer_name, sizeof t->optimizer_name, "%s", opt);
    t->model = ts_sequential_new(layers, 4);
    t->optimizer = strcmp(opt, "sgd") == 0 ? ts_sgd_new(rate, 0) : ts_adam_new(rate, 0.9, 0.999, 1e-7);
    t->accuracy = ts_accuracy_new(NULL);
    ok = g.images && t->model && t->optimizer && t->accuracy;
  }
  if (!ok) {
    trainer_clear(t);
    return NULL;
  }
  return t;
}

/* prepare_mnist_features_and_labels: x / 255 as f32, y as i64. */
static bool prepare(ts_tensor **xy, int n, void *user_data)
{
  xy[0] = ts_div(ts_cast(xy[0], TS_F32), ts_scalar_f32(255));
  xy[1] = ts_cast(xy[1], TS_I64);
  return xy[0] && xy[1];
}

static ts_dataset *mnist_dataset(int64_t n_examples)
{
  ts_dataset *ds = NULL;
  TS_INIT_SCOPE {
    ts_dataset *all = ts_dataset_from_tensors((ts_tensor *[]){ g.images, g.labels }, 2);
    ts_dataset *mapped = ts_dataset_map(all, prepare, NULL);
    ts_dataset *taken = ts_dataset_take(mapped, n_examples);
    ts_dataset *shuffled = ts_dataset_shuffle(taken, n_examples, SEED);
    ds = ts_dataset_batch(shuffled, BATCH, false);
    ts_dataset_free(all);
    ts_dataset_free(mapped);
    ts_dataset_free(taken);
    ts_dataset_free(shuffled);
  }
  return ds;
}

/* Sparse cross-entropy as it is often written by hand, the log of the
 * softmax guarded so that a probability that underflowed to 0 adds 0, not
 * -inf:  -mean(sum(onehot(labels) * where(p > 0, log(p), 0), axis=1)).
 * The loss stays finite, its gradient does not: the where hands log's
 * gradient a 0 where p is 0, which it divides by p (tf.where's documented
 * trap). */
static ts_tensor *where_log_loss(ts_tensor *labels, ts_tensor *logits)
{
  ts_tensor *loss = NULL;
  TS_NAME_SCOPE ("where_log_crossentropy") {
    ts_tensor *p = ts_softmax(logits);
    ts_tensor *log_p = ts_where(ts_greater(p, ts_scalar_f32(0)), ts_log(p), ts_zeros_like(p));
    ts_tensor *classes = ts_range(TS_I64, 0, 10, 1);
    ts_tensor *onehot = ts_cast(ts_equal(ts_reshape(labels, TS_SHAPE(-1, 1)), classes), TS_F32);
    ts_tensor *per_example = ts_reduce_sum(ts_mul(onehot, log_p), TS_AXES(1), false);
    loss = ts_neg(ts_reduce_mean(per_example, TS_ALL_AXES, false));
  }
  return loss;
}

static ts_tensor *train_one_step(trainer *t, ts_tensor *x, ts_tensor *y)
{
  ts_tape *tape = ts_tape_new(false);
  ts_tensor *logits = ts_sequential_call(t->model, x, true);
  ts_tensor *loss = t->where_log ? where_log_loss(y, logits)
                                 : ts_loss_sparse_softmax_cross_entropy(y, logits);
  ts_tape_stop(tape);
  int n = ts_sequential_n_variables(t->model);
  ts_tensor *vars[16] = { NULL }, *grads[16] = { NULL };
  for (int i = 0; i < n && i < 16; i++)
    vars[i] = ts_sequential_variable(t->model, i);
  if (loss && ts_tape_gradient(tape, loss, vars, n, grads, TS_UNCONNECTED_NONE))
    ts_optimizer_apply(t->optimizer, grads, vars, n);
  ts_tape_free(tape);
  ts_metric_update(t->accuracy, y, logits);
  return ts_failed() ? NULL : loss;
}

/* The guide's loop: steps batches of `t`'s recipe. */
static ts_tensor *train_loop(trainer *t, int64_t steps)
{
  if (!t)
    return NULL;
  if (steps < 0 || steps > 60000 / BATCH) {
    if (!ts_failed())
      ts_error_set(TS_ERR_INVALID_ARGUMENT, TS_HERE, NULL,
                   "train: at most %d steps of %d (Fashion-MNIST has 60,000 examples), got %lld",
                   60000 / BATCH, BATCH, (long long)steps);
    return NULL;
  }
  ts_dataset *train_ds = mnist_dataset(steps * BATCH);
  if (!train_ds)
    return NULL;
  ts_tensor *step = ts_scalar_i32(0), *loss = ts_scalar_f32(0), *i = NULL;
  ts_tensor *ten = ts_scalar_i32(10), *zero = ts_scalar_i32(0), *one = ts_scalar_i32(1);
  TS_FOR (i, ts_dataset_over(train_ds), &step, &loss) {
    ts_tensor *xy[2];
    ts_dataset_get(train_ds, i, xy); /* on failure NULLs, which the ops below pass on */
    step = ts_add(step, one);
    loss = train_one_step(t, xy[0], xy[1]);
    TS_IF (ts_equal(ts_mod(step, ten), zero)) {
      ts_print("Step", step, ": loss", loss, "; accuracy", ts_metric_result(t->accuracy));
    } TS_END_IF;
  }
  ts_dataset_free(train_ds);
  ts_tensor *accuracy = ts_metric_result(t->accuracy);
  ts_print_python("Final step", step, ": loss", loss, "; accuracy", accuracy);
  return ts_tuple(step, loss, accuracy);
}

ts_tensor *train(ts_call *c)
{
  int64_t steps = arg_count(c, 0, "train");
  return steps < 0 ? NULL : train_loop(trainer_ready(&g.guide, GUIDE_RATE, "adam", "train"), steps);
}

ts_tensor *train_rate(ts_call *c)
{
  int64_t steps = arg_count(c, 0, "train_rate");
  double rate = ts_arg_float(c, 1);
  const char *opt = ts_arg_str(c, 2);
  if (ts_failed())
    return NULL;
  if (!(rate > 0) || !isfinite(rate)) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, TS_HERE, NULL,
                 "train_rate: the learning rate must be a finite number > 0, got %g", rate);
    return NULL;
  }
  return steps < 0 ? NULL : train_loop(trainer_ready(&g.rated, rate, opt, "train_rate"), steps);
}

ts_tensor *train_where_log(ts_call *c)
{
  int64_t steps = arg_count(c, 0, "train_where_log");
  double rate = ts_arg_float(c, 1);
  if (ts_failed())
    return NULL;
  if (!(rate > 0) || !isfinite(rate)) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, TS_HERE, NULL,
                 "train_where_log: the learning rate must be a finite number > 0, got %g", rate);
    return NULL;
  }
  g.where_log.where_log = true;
  return steps < 0 ? NULL
                   : train_loop(trainer_ready(&g.where_log, rate, "adam", "train_where_log"), steps);
}
