/* peers-workloads.c — the seed workloads of the side-by-side benchmark and
 * their (seeded) arguments.  Inputs are random rather than zeros so that
 * comparing outputs across implementations means something. */
#include "peers-workloads.h"


static ts_value uniform(ts_shape shape, double lo, double hi, uint64_t seed)
{
  return TS_TENSOR_VALUE(ts_random_uniform(TS_F32, shape, lo, hi, seed));
}

/* x in [0, 0.2): rows sum to about 1, so x^100 stays finite */
static int power_args(ts_value *a)
{
  a[0] = uniform(TS_SHAPE(10, 10), 0, 0.2, 1);
  a[1] = TS_INT_VALUE(100);
  return 2;
}

static int dense64_args(ts_value *a)
{
  a[0] = uniform(TS_SHAPE(20, 28, 28), 0, 1, 1);
  return 1;
}

static int dense128_args(ts_value *a)
{
  a[0] = uniform(TS_SHAPE(60, 28, 28), 0, 1, 1);
  return 1;
}

static int lstm_args(ts_value *a) /* input, state_h, state_c */
{
  for (int i = 0; i < 3; i++)
    a[i] = uniform(TS_SHAPE(10, 10), -1, 1, (uint64_t)i + 1);
  return 3;
}

static int mse_args(ts_value *a) /* the guide's y_true, y_pred */
{
  a[0] = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(5), (int32_t[]){ 1, 4, 3, 1, 3 }));
  a[1] = TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(5), (int32_t[]){ 0, 3, 8, 0, 6 }));
  return 2;
}

static int conv_args(ts_value *a)
{
  a[0] = uniform(TS_SHAPE(1, 64, 64, 100), 0, 1, 1);
  return 1;
}

const peer_workload PEER_WORKLOADS[] = {
  { "power", "power(x,100) 10x10", "power", power_args },
  { "dense64", "100 x Dense(64) b=20", "sequential_model", dense64_args },
  { "dense128", "Dense(128)->Dense(10) b=60", "dense_128_model", dense128_args },
  { "lstm", "LSTM cell 10, b=10", "lstm_fn", lstm_args },
  { "mse", "get_MSE int32[5]", "get_MSE", mse_args },
  { "conv", "conv 3x3 100->100, 64x64", "conv_fn", conv_args },
};
const int PEER_N_WORKLOADS = sizeof PEER_WORKLOADS / sizeof PEER_WORKLOADS[0];
