/* cuda/random.cu — StatelessRandomUniform on the device: each thread draws
 * its elements from Philox4x32-10 through ops/philox.h, the formulas the
 * CPU loop uses, so a stream (seed, counter) gives the CPU's bits.  The
 * counter is read on the device (a variable's value, changing between
 * runs), so the kernel is a plain node of a captured CUDA Graph. */
#include "dtypes.cuh"

#include "../../ops/philox.h"

#include "launch.cuh"

/* The counter scalar of an integer dtype as the CPU's ts__load_i64 reads it. */
__device__ __forceinline__ uint64_t counter_of(ts_dtype dt, const void *p)
{
  switch (dt) {
  case TS_I32: return (uint64_t)(int64_t) * (const int32_t *)p;
  case TS_I64: return (uint64_t) * (const int64_t *)p;
  case TS_U8: return *(const uint8_t *)p;
  case TS_I8: return (uint64_t)(int64_t) * (const int8_t *)p;
  case TS_I16: return (uint64_t)(int64_t) * (const int16_t *)p;
  case TS_U16: return *(const uint16_t *)p;
  case TS_U32: return *(const uint32_t *)p;
  case TS_U64: return *(const uint64_t *)p;
  default: return 0; /* inference took integers only */
  }
}

/* Element i as the CPU's loop stores it (ops/create.c, stateless_range). */
template <class T> struct draw {
  static __device__ __forceinline__ T at(const uint32_t w[4], const ts_philox_params &u)
  {
    return (T)(int64_t)ts_philox_int(w, u.ilo, u.span);
  }
};
template <> struct draw<float> {
  static __device__ __forceinline__ float at(const uint32_t w[4], const ts_philox_params &u)
  {
    return ts_philox_f32(w, u.lo, u.hi, u.lo32);
  }
};
template <> struct draw<double> {
  static __device__ __forceinline__ double at(const uint32_t w[4], const ts_philox_params &u)
  {
    return ts_philox_f64(w, u.lo, u.hi);
  }
};
/* 16-bit floats: rounded from the double, then the next one down while >= hi */
template <class H> struct draw_half {
  static __device__ __forceinline__ H at(const uint32_t w[4], const ts_philox_params &u)
  {
    H h = narrow<H>::from(ts_philox_f64(w, u.lo, u.hi));
    unsigned short b;
    memcpy(&b, &h, sizeof b);
    while ((double)widen(h) >= u.hi) {
      b = b == 0 ? 0x8001 : b & 0x8000 ? b + 1 : b - 1;
      memcpy(&h, &b, sizeof b);
    }
    return h;
  }
};
template <> struct draw<__half> : draw_half<__half> {};
template <> struct draw<__nv_bfloat16> : draw_half<__nv_bfloat16> {};

template <class T>
__global__ void stateless_uniform_kernel(int64_t n, ts_philox_params u, ts_dtype counter_dtype,
                                         const void *counter, T *o)
{
  uint64_t c = counter_of(counter_dtype, counter);
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    uint32_t w[4];
    ts_philox_block(u.seed, c, (uint64_t)i, w);
    o[i] = draw<T>::at(w, u);
  }
}

extern "C" bool ts__cu_stateless_uniform(ts_dtype dtype, int64_t n, const ts_philox_params *u,
                                         ts_dtype counter_dtype, const void *counter, void *out,
                                         void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  if (dtype == TS_BOOL)
    return false;
  DISPATCH(dtype, if (n > 0) stateless_uniform_kernel<T><<<blocks_for(n), THREADS, 0, s>>>(
                    n, *u, counter_dtype, counter, (T *)out))
  return true;
}
