/* cuda/condition.cu — the kernel that sets a CUDA Graph conditional node
 * from a tensor's one element (nonzero, NaN included: true, as the CPU's
 * While reads its condition), for the loops a plan's capture holds
 * (cuda.c's graph_plan_while_begin and _end). */
#include "dtypes.cuh"

template <class T>
__global__ void set_condition_kernel(cudaGraphConditionalHandle handle, const T *cond)
{
  cudaGraphSetConditional(handle, value_of<T>::get(cond[0]) != 0 ? 1u : 0u);
}

extern "C" bool ts__cu_set_condition(uint64_t handle, ts_dtype dtype, const void *cond,
                                     void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  DISPATCH(dtype, set_condition_kernel<T><<<1, 1, 0, s>>>((cudaGraphConditionalHandle)handle,
                                                           (const T *)cond))
  return true;
}
