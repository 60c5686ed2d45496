/* peers-workloads.h — the seed workloads the side-by-side benchmark runs
 * here and in PyTorch and ONNX Runtime: which seed function, on which
 * arguments (the same ones the peers get, through .npy files). */
#pragma once

#include <tracescope.h>

#define PEER_MAX_ARGS 4

typedef struct peer_workload {
  const char *key;   /* "dense64": file and JSON names */
  const char *label; /* "100 x Dense(64), b=20" */
  const char *seed;  /* the seed function */
  /* Fills args (tensors in the current scope); returns how many. */
  int (*args)(ts_value *args);
} peer_workload;

extern const peer_workload PEER_WORKLOADS[];
extern const int PEER_N_WORKLOADS;
