/* cuda/condition.cu — the kernels that set CUDA Graph conditional nodes
 * from a tensor's one element (nonzero, NaN included: true, as the CPU's
 * If and While read their conditions), for the branches and loops a
 * plan's capture holds (cuda.c's graph_plan_if_* and _while_*).  A kernel
 * node given no element (ts__cu_condition_off) leaves the handles be: at
 * each launch they hold their default (0), so their nodes run nothing. */
#include "dtypes.cuh"

template <class T>
__global__ void set_condition_kernel(cudaGraphConditionalHandle handle, const T *cond)
{
  if (cond)
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
  if (!cond)
    return;
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

/* The graph's kernel node of ts__cu_set_condition or _set_branches
 * (branches) given no element to read: a node may not be removed from
 * a graph while it is captured into (cudaStreamGetCaptureInfo: "All
 * operations other than destroy and node removal are permitted on the
 * graph while the capture sequence is in progress"), its parameters may
 * be set. */
extern "C" bool ts__cu_condition_off(void *node, bool branches, uint64_t handle,
                                     uint64_t else_handle, ts_dtype dtype)
{
  cudaGraphConditionalHandle h = handle, e = else_handle;
  const void *none = NULL;
  void *condition_args[] = { &h, &none }, *branches_args[] = { &h, &e, &none };
  cudaKernelNodeParams p = {};
  p.gridDim = dim3(1, 1, 1);
  p.blockDim = dim3(1, 1, 1);
  p.kernelParams = branches ? branches_args : condition_args;
  DISPATCH(dtype, p.func = branches ? (void *)set_branches_kernel<T>
                                     : (void *)set_condition_kernel<T>)
  return cudaGraphKernelNodeSetParams((cudaGraphNode_t)node, &p) == cudaSuccess;
}
