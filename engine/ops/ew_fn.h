/* ops/ew_fn.h — how the elementwise formulas (unary_rows.h, binary_rows.h)
 * are compiled: inline C functions over <tgmath.h> for the CPU, device
 * functions over CUDA's overloaded math for the CUDA kernels. */
#pragma once

#ifdef __CUDACC__
#define TS_EW_FN static __device__ __forceinline__
#else
#include <stdbool.h>
#include <stdint.h>
#include <tgmath.h>
#define TS_EW_FN static inline
#endif
