/* test-device-random.h — a graph of random ops, shared by test-sim (SIM:0,
 * every CI run) and test-cuda (CUDA:0 on a GPU): a captured plan with
 * RandomUniform and RandomNormal replays, and gives the CPU's values. */
#pragma once

#include <tracescope.h>

/* x scaled by uniform numbers plus normal ones and small integers, each
 * from its op's seed. */
static ts_tensor *noisy(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0);
  ts_tensor *u = ts_random_uniform(TS_F32, TS_SHAPE(8, 16), -1, 1, 7);
  ts_tensor *n = ts_random_normal(TS_F32, TS_SHAPE(8, 16), 0, 0.5, 11);
  ts_tensor *k = ts_cast(ts_random_uniform(TS_I32, TS_SHAPE(8, 16), 0, 5, 3), TS_F32);
  return ts_add(ts_mul(x, u), ts_add(n, k));
}
