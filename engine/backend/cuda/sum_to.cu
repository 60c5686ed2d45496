/* cuda/sum_to.cu — SumTo: a gradient summed down to its input's shape, as
 * ops/grad.c's CPU kernel does it when the shape is known at run time. */
#include "dtypes.cuh"

#include "launch.cuh"

/* One block per output (a grid-stride loop over them), its threads
 * striding over the g elements summed into it, in f64 as the CPU sums,
 * combined in shared memory; the 16-bit floats rounded back once. */

/* The offset in g of index i over dims dim[0..n) with g's strides. */
__device__ __forceinline__ int64_t offset_in(int n, const int64_t *dim, const int64_t *stride,
                                             int64_t i)
{
  int64_t off = 0;
  for (int d = n - 1; d >= 0 && i > 0; d--) {
    int64_t q = i / dim[d];
    off += (i - q * dim[d]) * stride[d];
    i = q;
  }
  return off;
}

template <class T>
__global__ void sum_to_kernel(ts_cu_sum_to s, const T *g, T *y)
{
  __shared__ double acc_s[THREADS];
  FOR_EACH_ROW(b, s.n_out) {
    const T *base = g + offset_in(s.n_kept, s.kept_dim, s.kept_stride, b);
    double acc = 0;
    for (int64_t i = threadIdx.x; i < s.n_summed_elems; i += blockDim.x)
      acc += (double)value_of<T>::get(base[offset_in(s.n_summed, s.summed_dim, s.summed_stride, i)]);
    acc_s[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
      if (threadIdx.x < w)
        acc_s[threadIdx.x] += acc_s[threadIdx.x + w];
      __syncthreads();
    }
    if (threadIdx.x == 0)
      y[b] = store_f64<T>(acc_s[0]);
    __syncthreads(); /* acc_s is the next output's */
  }
}

extern "C" bool ts__cu_sum_to(ts_dtype dtype, const ts_cu_sum_to *s, const void *g, void *y,
                              void *stream)
{
  if (dtype != TS_F32 && dtype != TS_F64 && dtype != TS_F16 && dtype != TS_BF16)
    return false;
  if (s->n_out <= 0)
    return true;
  cudaStream_t st = (cudaStream_t)stream;
  DISPATCH(dtype, sum_to_kernel<T><<<blocks_for_rows(s->n_out), THREADS, 0, st>>>(*s, (const T *)g, (T *)y))
  return true;
}
