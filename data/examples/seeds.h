/* seeds.h — what the files of the bundled `seeds` module share. */
#pragma once

#include <tracescope.h>

#pragma GCC visibility push(hidden)

/* A host number as a constant of x's dtype, as Python numbers meet tensors
 * in TensorFlow (2 * x keeps x's dtype).  Made eagerly even while tracing,
 * so a graph holds it as one Const.  NULL if x is NULL. */
ts_tensor *like(ts_tensor *x, double v);
/* Host int argument i of fn, which must not be negative; -1 with an error. */
int64_t arg_count(ts_call *c, int i, const char *fn);

/* The guides' models (seeds_models.c). */
ts_tensor *dense_chain(ts_call *c);
ts_tensor *conv_layer(ts_call *c);
ts_tensor *sequential_model(ts_call *c);
ts_tensor *dense_128_model(ts_call *c);
ts_tensor *lstm_fn(ts_call *c);
ts_tensor *conv_fn(ts_call *c);
/* The guide's training loop (seeds_train.c). */
ts_tensor *train(ts_call *c);
ts_tensor *train_rate(ts_call *c);
ts_tensor *train_where_log(ts_call *c);

#pragma GCC visibility pop
