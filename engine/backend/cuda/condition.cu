/* cuda/condition.cu — the kernels that set CUDA Graph conditional nodes
 * from a tensor's one element (nonzero, NaN included: true, as the CPU's
 * If and While read their conditions), for the branches and loops a
 * plan's capture holds (cuda.c's graph_plan_if_* and _while_*). */
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

/* An If's two nodes: the then branch's handle true where the element is,
 * the else branch's where it is not. */
template <class T>
__global__ void set_branches_kernel(cudaGraphConditionalHandle then_handle,
                                    cudaGraphConditionalHandle else_handle, const T *cond)
{
  bool truth = value_of<T>::get(cond[0]) != 0;
  cudaGraphSetConditional(then_handle, truth ? 1u : 0u);
  cudaGraphSetConditional(else_handle, truth ? 0u : 1u);
}

extern "C" bool ts__cu_set_branches(uint64_t then_handle, uint64_t else_handle, ts_dtype dtype,
                                    const void *cond, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  DISPATCH(dtype, set_branches_kernel<T><<<1, 1, 0, s>>>((cudaGraphConditionalHandle)then_handle,
                                                          (cudaGraphConditionalHandle)else_handle,
                                                          (const T *)cond))
  return true;
}
