/* cuda/cumulative.cu — Cumsum and Cumprod: x and y [outer, n, inner], y
 * along n the running sums (products) of x, as the CPU's loops
 * (ops/reduce.c, DEF_CUM): one thread per (outer, inner) line walks n in
 * order (from the end when reverse), the accumulator in x's dtype, each
 * step rounding or wrapping as that dtype does, so the bits are the
 * CPU's.  The first step is the element itself (-0.0 stays -0.0);
 * exclusive writes each step's accumulator before its own element's (the
 * first 0, or 1).  Every numeric dtype but bool. */
#include "dtypes.cuh"

#include <cuda_runtime.h>

#include "launch.cuh"

/* One step: integers wrap (in 64-bit unsigned, truncated to T: the same
 * residue as the CPU's narrower unsigned arithmetic); f32 and f64 as
 * their + and * round (no FMA: --fmad=false); the 16-bit floats widened,
 * combined in f64 and rounded once, as ADD_F16 / MUL_F16 there. */
template <class T> __device__ __forceinline__ T step(bool prod, T a, T b)
{
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  return (T)(prod ? ua * ub : ua + ub);
}
__device__ __forceinline__ float step(bool prod, float a, float b)
{
  return prod ? a * b : a + b;
}
__device__ __forceinline__ double step(bool prod, double a, double b)
{
  return prod ? a * b : a + b;
}
template <class H> __device__ __forceinline__ H step_16(bool prod, H a, H b)
{
  double x = widen(a), y = widen(b);
  return narrow<H>::from(prod ? x * y : x + y);
}
__device__ __forceinline__ __half step(bool prod, __half a, __half b)
{
  return step_16(prod, a, b);
}
__device__ __forceinline__ __nv_bfloat16 step(bool prod, __nv_bfloat16 a, __nv_bfloat16 b)
{
  return step_16(prod, a, b);
}

template <class T>
__global__ void cumulative_kernel(bool prod, bool exclusive, bool reverse, int64_t lines, int64_t n,
                                  int64_t inner, const T *x, T *y)
{
  const T id = store_f64<T>(prod ? 1 : 0);
  FOR_EACH(line, lines) {
    int64_t o = line / inner, i = line % inner;
    const T *xl = x + o * n * inner + i;
    T *yl = y + o * n * inner + i;
    T acc = id;
    for (int64_t k = 0; k < n; k++) {
      int64_t at = (reverse ? n - 1 - k : k) * inner;
      T v = k ? step(prod, acc, xl[at]) : xl[at];
      yl[at] = exclusive ? acc : v;
      acc = v;
    }
  }
}

extern "C" bool ts__cu_cumulative(bool prod, ts_dtype dtype, int64_t outer, int64_t n, int64_t inner,
                                  bool exclusive, bool reverse, const void *x, void *y,
                                  void *stream)
{
  if (dtype == TS_BOOL || (unsigned)dtype >= TS_NUMERIC_DTYPE_COUNT)
    return false;
  int64_t lines = outer * inner;
  if (lines <= 0 || n <= 0)
    return true;
  cudaStream_t s = (cudaStream_t)stream;
  DISPATCH(dtype, (cumulative_kernel<T><<<blocks_for(lines), THREADS, 0, s>>>(
                    prod, exclusive, reverse, lines, n, inner, (const T *)x, (T *)y)))
  return true;
}
