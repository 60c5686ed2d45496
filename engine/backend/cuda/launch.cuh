/* cuda/launch.cuh — how the kernels are launched: THREADS per block,
 * blocks up to a cap (a grid's x holds 2^31 - 1, and a tensor more
 * elements than that), each thread striding over elements by the whole
 * grid (FOR_EACH, 64-bit indices); kernels with a block per row or output
 * stride over rows the same way (blocks_for_rows, FOR_EACH_ROW).  At
 * least one block: a launch of none is an error. */
#pragma once

#include <stdint.h>

#define THREADS 256
#define MAX_BLOCKS (65535 * 32)

static inline unsigned blocks_for(int64_t n)
{
  int64_t b = (n + THREADS - 1) / THREADS;
  return (unsigned)(b < MAX_BLOCKS ? (b > 0 ? b : 1) : MAX_BLOCKS);
}

#define FOR_EACH(i, n)                                                            \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);      \
       i += (int64_t)gridDim.x * blockDim.x)

static inline unsigned blocks_for_rows(int64_t rows)
{
  return (unsigned)(rows < MAX_BLOCKS ? (rows > 0 ? rows : 1) : MAX_BLOCKS);
}

/* A block's rows b, b + gridDim.x, ...: the same for all its threads, so
 * they may __syncthreads inside. */
#define FOR_EACH_ROW(b, n) for (int64_t b = blockIdx.x; b < (n); b += gridDim.x)
