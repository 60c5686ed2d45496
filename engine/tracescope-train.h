/* tracescope-train.h — training in the engine's C API: Keras-like layers,
 * losses, a streaming metric, optimizers, the IDX reader and datasets.
 *
 * Everything here is built from the engine's ops, so it runs eagerly and,
 * called inside a ts_function, traces into the function's graph.  State
 * (weights, optimizer slots, a metric's totals) lives in variables, made
 * once on first use outside any trace (TS_INIT_SCOPE, as Keras' build()
 * does) and updated through the assign ops: a traced training step
 * updates it inside the graph.  Each layer's ops sit under its name scope
 * ("dense_1/MatMul"), the optimizer's under its own ("Adam/...").
 *
 * Objects (layers, models, metrics, optimizers, datasets) are the
 * caller's: free them with their _free function; their variables go with
 * them.  Failures return NULL/false with the engine's error
 * (ts_error_take), naming what was wrong. */
#pragma once

#include "tracescope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- layers ----------------------------------------------------------------- */

typedef enum ts_activation {
  TS_ACTIVATION_LINEAR,
  TS_ACTIVATION_RELU,
  TS_ACTIVATION_SIGMOID,
  TS_ACTIVATION_TANH,
  TS_ACTIVATION_SOFTMAX,
  TS_ACTIVATION_COUNT
} ts_activation;

typedef struct ts_layer ts_layer;

/* Names: NULL gives Keras' names, unique per kind in the process
 * ("dense", "dense_1", ...; ts_layer_names_reset starts them again, as
 * tf.keras.backend.clear_session does).  Weights: seeded Glorot uniform
 * (uniform in ±sqrt(6 / (fan_in + fan_out))), biases zero; the same seed
 * gives the same weights.  A layer builds its variables on its first call
 * from the input's last dimension, which must be known then. */
TS_API ts_layer *ts_dense_new(const char *name, int64_t units, ts_activation activation,
                              uint64_t seed);
/* [N, ...] -> [N, rest]. */
TS_API ts_layer *ts_flatten_layer_new(const char *name);
/* [N, ...] -> [N, target...] (target is one example's shape; one dim may be -1). */
TS_API ts_layer *ts_reshape_layer_new(const char *name, ts_shape target);
/* Dropout at `rate` when called with training, a new mask on each such
 * call as Keras' (its stream is `seed` and the calls so far, counted in an
 * i64 variable "NAME/seed_generator_state" that a traced call advances in
 * the graph: the same seed gives the same masks, eagerly and in a graph);
 * Identity otherwise. */
TS_API ts_layer *ts_dropout_layer_new(const char *name, double rate, uint64_t seed);
/* NHWC input, kernel [kh, kw, in, filters], bias [filters]. */
TS_API ts_layer *ts_conv2d_layer_new(const char *name, int64_t filters, int kernel_h, int kernel_w,
                                     int stride_h, int stride_w, ts_padding padding,
                                     ts_activation activation, uint64_t seed);
TS_API ts_layer *ts_max_pool2d_layer_new(const char *name, int pool_h, int pool_w, int stride_h,
                                         int stride_w, ts_padding padding);
/* Keras' LSTMCell: kernel [in, 4u], recurrent_kernel [u, 4u] (both Glorot
 * uniform here; Keras makes the recurrent one orthogonal), bias [4u] with
 * the forget gate's part 1 (unit_forget_bias).  Gates i, f, c, o. */
TS_API ts_layer *ts_lstm_cell_new(const char *name, int64_t units, uint64_t seed);
TS_API void ts_layer_free(ts_layer *layer);
TS_API void ts_layer_names_reset(void);

TS_API const char *ts_layer_name(const ts_layer *layer);
/* Its trainable variables ("dense/kernel", "dense/bias"), in Keras' order;
 * 0 before it is built.  Borrowed. */
TS_API int ts_layer_n_variables(const ts_layer *layer);
TS_API ts_tensor *ts_layer_variable(const ts_layer *layer, int i);

/* Applies the layer to x ([N, ...]); `training` matters to Dropout only. */
TS_API ts_tensor *ts_layer_call_at(ts_loc loc, ts_layer *layer, ts_tensor *x, bool training);
#define ts_layer_call(layer, x, training) ts_layer_call_at(TS_HERE, (layer), (x), (training))
/* One LSTM step: x [N, in], state h and c [N, units] -> *h_out, *c_out. */
TS_API bool ts_lstm_cell_call_at(ts_loc loc, ts_layer *cell, ts_tensor *x, ts_tensor *h,
                                 ts_tensor *c, ts_tensor **h_out, ts_tensor **c_out);
#define ts_lstm_cell_call(cell, x, h, c, h_out, c_out) \
  ts_lstm_cell_call_at(TS_HERE, (cell), (x), (h), (c), (h_out), (c_out))

/* Keras' Sequential: the layers one after another.  Takes the layers
 * (freed with the model); NULL + error if one is NULL or an LSTMCell. */
typedef struct ts_sequential ts_sequential;
TS_API ts_sequential *ts_sequential_new(ts_layer *const *layers, int n);
TS_API void ts_sequential_free(ts_sequential *model);
TS_API ts_tensor *ts_sequential_call_at(ts_loc loc, ts_sequential *model, ts_tensor *x,
                                        bool training);
#define ts_sequential_call(model, x, training) \
  ts_sequential_call_at(TS_HERE, (model), (x), (training))
/* Every layer's trainable variables, in order (after the first call). */
TS_API int ts_sequential_n_variables(const ts_sequential *model);
TS_API ts_tensor *ts_sequential_variable(const ts_sequential *model, int i);

/* ---- losses ------------------------------------------------------------------ */

/* Keras' SparseCategoricalCrossentropy(from_logits=True): the mean over
 * the batch of -log softmax(logits)[label].  labels [N] i32/i64, logits [N, C]. */
TS_API ts_tensor *ts_loss_sparse_softmax_cross_entropy_at(ts_loc loc, ts_tensor *labels,
                                                          ts_tensor *logits);
/* Keras' MeanSquaredError: the mean of (y_true - y_pred)^2 over every element. */
TS_API ts_tensor *ts_loss_mean_squared_error_at(ts_loc loc, ts_tensor *y_true, ts_tensor *y_pred);
#define ts_loss_sparse_softmax_cross_entropy(labels, logits) \
  ts_loss_sparse_softmax_cross_entropy_at(TS_HERE, (labels), (logits))
#define ts_loss_mean_squared_error(y_true, y_pred) \
  ts_loss_mean_squared_error_at(TS_HERE, (y_true), (y_pred))

/* ---- metrics ------------------------------------------------------------------ */

/* Keras' SparseCategoricalAccuracy: a streaming mean of
 * argmax(logits) == label.  Its total and count are f32 variables
 * ("accuracy/total", "accuracy/count"): a traced update adds to them in
 * the graph. */
typedef struct ts_metric ts_metric;
TS_API ts_metric *ts_accuracy_new(const char *name);
TS_API void ts_metric_free(ts_metric *metric);
/* Adds a batch: labels [N] integer, logits [N, C].  false + error. */
TS_API bool ts_metric_update_at(ts_loc loc, ts_metric *metric, ts_tensor *labels,
                                ts_tensor *logits);
/* total / count (0 before any update), an f32 scalar. */
TS_API ts_tensor *ts_metric_result_at(ts_loc loc, ts_metric *metric);
/* Sets total and count to zero (an assign, so it works traced too). */
TS_API bool ts_metric_reset_at(ts_loc loc, ts_metric *metric);
#define ts_metric_update(metric, labels, logits) \
  ts_metric_update_at(TS_HERE, (metric), (labels), (logits))
#define ts_metric_result(metric) ts_metric_result_at(TS_HERE, (metric))
#define ts_metric_reset(metric) ts_metric_reset_at(TS_HERE, (metric))

/* ---- optimizers ---------------------------------------------------------------- */

/* Keras' optimizers (TF 2.11):
 *   SGD:  v = momentum * v - lr * g;  w += v       (momentum 0: w -= lr * g)
 *   Adam: m += (g - m)(1 - beta1);  v += (g^2 - v)(1 - beta2);  t = iterations + 1
 *         w -= lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + epsilon)
 * Slots (SGD's momentum, Adam's m and v) are variables named after the
 * variable they follow ("Adam/dense/kernel/m"), made on the first apply;
 * `iterations` is an i64 variable counting applies. */
typedef struct ts_optimizer ts_optimizer;
TS_API ts_optimizer *ts_sgd_new(double learning_rate, double momentum);
TS_API ts_optimizer *ts_adam_new(double learning_rate, double beta_1, double beta_2,
                                 double epsilon);
#define TS_ADAM_DEFAULTS 0.001, 0.9, 0.999, 1e-7
TS_API void ts_optimizer_free(ts_optimizer *opt);
/* Applies grads[i] to variable vars[i] (float, same shape); a NULL
 * gradient leaves its variable alone, as Keras does.  false + error. */
TS_API bool ts_optimizer_apply_at(ts_loc loc, ts_optimizer *opt, ts_tensor *const *grads,
                                  ts_tensor *const *vars, int n);
#define ts_optimizer_apply(opt, grads, vars, n) \
  ts_optimizer_apply_at(TS_HERE, (opt), (grads), (vars), (n))
TS_API ts_tensor *ts_optimizer_iterations(const ts_optimizer *opt); /* the variable; borrowed */
/* Whether a name scope component is an optimizer's ("Adam", "SGD"; a
 * traced graph's "Adam_1" too): a profiler's split of a training step. */
TS_API bool ts_optimizer_scope_is(const char *component);
/* Slot `name` ("momentum", "m", "v") of var; NULL before the first apply. */
TS_API ts_tensor *ts_optimizer_slot(const ts_optimizer *opt, const ts_tensor *var,
                                    const char *name);

/* ---- data: IDX files and datasets ----------------------------------------------- */

/* An IDX file (as MNIST ships), gzip-compressed or not: u8 data as u8, i8
 * and i16 as i32, i32, f32 and f64 as themselves.  The header's dims are
 * checked (rank <= TS_MAX_RANK, no overflow, at most max_bytes of data;
 * 0: 1 GiB) before anything is allocated; a short, long or corrupt file is
 * an error naming the file and the field.  The tensor is in the current scope. */
TS_API ts_tensor *ts_idx_load(const char *path, size_t max_bytes);

/* Fashion-MNIST from Debian's dataset-fashion-mnist
 * (/usr/share/datasets/fashion-mnist, or $TRACESCOPE_FASHION_MNIST):
 * split "train" (60,000) or "t10k" (10,000); images u8 [N, 28, 28],
 * labels u8 [N].  A missing file is an error naming the package. */
TS_API bool ts_fashion_mnist_load(const char *split, ts_tensor **images, ts_tensor **labels);

/* A dataset: up to 4 components sharing their first dimension (examples),
 * held in memory (references to the tensors, which must be concrete).
 * Each transformation returns a new dataset (the caller's), as tf.data's do. */
#define TS_DATASET_MAX_COMPONENTS 4
typedef struct ts_dataset ts_dataset;
/* Runs on each batch's components (in place), eagerly or traced. */
typedef bool (*ts_dataset_map_fn)(ts_tensor **components, int n, void *user_data);

TS_API ts_dataset *ts_dataset_from_tensors(ts_tensor *const *components, int n);
TS_API void ts_dataset_free(ts_dataset *ds);
TS_API ts_dataset *ts_dataset_take(const ts_dataset *ds, int64_t count);
/* tf.data's shuffle: a buffer of buffer_size elements, each next one drawn
 * from it at random (ShuffleIndices: a GLib Mersenne Twister); a buffer as
 * big as the dataset is a uniform shuffle.  Each pass over the dataset
 * (ts_dataset_over) has an order of its own, as tf.data's
 * reshuffle_each_iteration: the stream (seed, passes so far), the passes
 * counted in an i64 variable that a traced loop advances in its graph, so
 * the same seed gives the same orders, eagerly and traced.  A dataset made
 * while a function is traced is made anew on each call, as one made inside
 * a tf.function: its passes start again at 0 on every call.  Examples are
 * shuffled before batching (a batched dataset is refused).  Iterating it
 * without ts_dataset_over (ts_dataset_get first) is a pass too. */
TS_API ts_dataset *ts_dataset_shuffle(const ts_dataset *ds, int64_t buffer_size, uint64_t seed);
/* Batches of batch_size; the last, smaller one is dropped (drop_remainder)
 * or kept.  Kept, a traced TS_FOR over the dataset refuses it (a While's
 * batches need one shape). */
TS_API ts_dataset *ts_dataset_batch(const ts_dataset *ds, int64_t batch_size, bool drop_remainder);
/* fn runs on each element as it is taken (in the loop's body when
 * traced): on a whole batch once the dataset is batched, whether map came
 * before batch or after (tf.data maps example by example before batch; for
 * an elementwise fn, as prepare functions are, the result is the same). */
TS_API ts_dataset *ts_dataset_map(const ts_dataset *ds, ts_dataset_map_fn fn, void *user_data);

TS_API int64_t ts_dataset_cardinality(const ts_dataset *ds); /* elements (batches once batched) */
TS_API int ts_dataset_n_components(const ts_dataset *ds);
/* Iteration:
 *   ts_tensor *i = NULL;
 *   TS_FOR (i, ts_dataset_over(ds), &step, &loss) {
 *     ts_tensor *xy[2];
 *     ts_dataset_get(ds, i, xy);
 *     ...
 *   }
 * ts_dataset_over is the range of element indices (i64): eagerly a loop,
 * traced a While over the batches, each taken in the body with Gather. */
TS_API ts_iterable ts_dataset_over(ts_dataset *ds);
TS_API bool ts_dataset_get_at(ts_loc loc, ts_dataset *ds, ts_tensor *index, ts_tensor **out);
#define ts_dataset_get(ds, index, out) ts_dataset_get_at(TS_HERE, (ds), (index), (out))

#ifdef __cplusplus
}
#endif
