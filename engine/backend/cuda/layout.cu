/* cuda/layout.cu — the CUDA kernels of the rows that move elements:
 * Transpose and Slice as one strided gather (output index -> input
 * offset through per-dim strides), and Where (a select over three
 * broadcast operands), and Gather (rows of params picked by indices),
 * Tile, Pad and ReverseV2 (an index map per dim), OneHot.
 * Elements move as 1-, 2-, 4- or 8-byte words, so
 * one kernel serves every dtype of that size. */
#include "kernels.h"

#include <cuda_runtime.h>

#include "launch.cuh"

__device__ __forceinline__ int64_t offset_of(const ts_cu_bcast &s, int k, int64_t i)
{
  int64_t off = 0;
  for (int d = s.rank - 1; d >= 0 && i > 0; d--) {
    int64_t q = i / s.dim[d];
    off += (i - q * s.dim[d]) * s.stride[k][d];
    i = q;
  }
  return off;
}

template <class W>
__global__ void strided_kernel(int64_t n, ts_cu_bcast s, int64_t base, const W *x, W *o)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    o[i] = x[base + offset_of(s, 0, i)];
}

template <class W>
__global__ void where_kernel(int64_t n, ts_cu_bcast s, const bool *c, const W *x, const W *y,
                             W *o)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    o[i] = c[offset_of(s, 0, i)] ? x[offset_of(s, 1, i)] : y[offset_of(s, 2, i)];
}

#define BY_WIDTH(size, ...)                               \
  switch (size) {                                         \
  case 1: { typedef uint8_t W; __VA_ARGS__; } break;      \
  case 2: { typedef uint16_t W; __VA_ARGS__; } break;     \
  case 4: { typedef uint32_t W; __VA_ARGS__; } break;     \
  case 8: { typedef uint64_t W; __VA_ARGS__; } break;     \
  default: return false;                                  \
  }

extern "C" bool ts__cu_strided(size_t elem_size, int64_t n, const ts_cu_bcast *s, int64_t base,
                               const void *x, void *out, void *stream)
{
  cudaStream_t st = (cudaStream_t)stream;
  BY_WIDTH(elem_size, if (n > 0) strided_kernel<W><<<blocks_for(n), THREADS, 0, st>>>(
                        n, *s, base, (const W *)x, (W *)out))
  return true;
}

extern "C" bool ts__cu_where(size_t elem_size, int64_t n, const ts_cu_bcast *s, const void *cond,
                             const void *x, const void *y, void *out, void *stream)
{
  cudaStream_t st = (cudaStream_t)stream;
  BY_WIDTH(elem_size, if (n > 0) where_kernel<W><<<blocks_for(n), THREADS, 0, st>>>(
                        n, *s, (const bool *)cond, (const W *)x, (const W *)y, (W *)out))
  return true;
}

/* Tile, Pad and ReverseV2: each output element from the input index its own maps to
 * (kernels.h), or the constant where a CONSTANT pad leaves x. */
template <class W>
__global__ void index_map_kernel(int64_t n, ts_cu_map m, const W *x, const W *value_at, W *o)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t off = 0, rest = i;
    bool inside = true;
    for (int d = m.rank - 1; d >= 0; d--) {
      int64_t q = rest / m.out_dim[d], at = rest - q * m.out_dim[d], len = m.in_dim[d];
      rest = q;
      if (m.mode == TS_CU_MAP_TILE) {
        at %= len;
      } else if (m.mode == TS_CU_MAP_REVERSE) {
        if (m.flip & 1u << d)
          at = len - 1 - at;
      } else {
        at -= m.before[d];
        if (at < 0 || at >= len) {
          if (m.mode == TS_CU_MAP_PAD_CONSTANT)
            inside = false;
          else if (m.mode == TS_CU_MAP_PAD_REFLECT)
            at = at < 0 ? -at : 2 * (len - 1) - at;
          else
            at = at < 0 ? -at - 1 : 2 * len - 1 - at;
        }
      }
      off += at * m.in_stride[d];
    }
    o[i] = inside ? x[off] : value_at ? *value_at : W{};
  }
}

extern "C" bool ts__cu_index_map(size_t elem_size, int64_t n, const ts_cu_map *m, const void *x,
                                 const void *value_at, void *out, void *stream)
{
  cudaStream_t st = (cudaStream_t)stream;
  BY_WIDTH(elem_size, if (n > 0) index_map_kernel<W><<<blocks_for(n), THREADS, 0, st>>>(
                        n, *m, (const W *)x, (const W *)value_at, (W *)out))
  return true;
}

/* out [outer, n_idx, row] = params [outer, n, row] at rows idx[j]; a row
 * outside [0, n) gives zeros and is recorded in fault (kernels.h). */
template <class W, class I>
__global__ void gather_kernel(int64_t total, int64_t n, int64_t n_idx, int64_t row, const W *p,
                              const I *idx, W *o, ts_cu_index_fault *fault,
                              unsigned long long correlation)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t r = i % row, j = (i / row) % n_idx, outer = i / (row * n_idx);
    int64_t at = (int64_t)idx[j];
    if (at >= 0 && at < n) {
      o[i] = p[(outer * n + at) * row + r];
      continue;
    }
    o[i] = W{};
    if (fault && r == 0 && outer == 0 && atomicCAS(&fault->flag, 0u, 1u) == 0u)
      index_fault_fill(fault, j, at, correlation);
  }
}

/* Gather's indices alone, for an output of no elements (params with no
 * rows around the axis): the CPU still refuses one out of range. */
template <class I>
__global__ void gather_check_kernel(int64_t n, int64_t n_idx, const I *idx,
                                    ts_cu_index_fault *fault, unsigned long long correlation)
{
  for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < n_idx;
       j += (int64_t)gridDim.x * blockDim.x) {
    int64_t at = (int64_t)idx[j];
    if ((at < 0 || at >= n) && atomicCAS(&fault->flag, 0u, 1u) == 0u)
      index_fault_fill(fault, j, at, correlation);
  }
}

extern "C" bool ts__cu_gather(size_t elem_size, ts_dtype index_dtype, int64_t outer, int64_t n,
                              int64_t n_idx, int64_t row, const void *params, const void *indices,
                              void *out, ts_cu_index_fault *fault, uint64_t correlation,
                              void *stream)
{
  cudaStream_t st = (cudaStream_t)stream;
  int64_t total = outer * n_idx * row;
  if (index_dtype != TS_I32 && index_dtype != TS_I64)
    return false;
  if (total <= 0) {
    if (fault && n_idx > 0) {
      if (index_dtype == TS_I32)
        gather_check_kernel<int32_t><<<blocks_for(n_idx), THREADS, 0, st>>>(
          n, n_idx, (const int32_t *)indices, fault, correlation);
      else
        gather_check_kernel<int64_t><<<blocks_for(n_idx), THREADS, 0, st>>>(
          n, n_idx, (const int64_t *)indices, fault, correlation);
    }
    return true;
  }
  if (index_dtype == TS_I32) {
    BY_WIDTH(elem_size, (gather_kernel<W, int32_t><<<blocks_for(total), THREADS, 0, st>>>(
                          total, n, n_idx, row, (const W *)params, (const int32_t *)indices,
                          (W *)out, fault, correlation)))
  } else {
    BY_WIDTH(elem_size, (gather_kernel<W, int64_t><<<blocks_for(total), THREADS, 0, st>>>(
                          total, n, n_idx, row, (const W *)params, (const int64_t *)indices,
                          (W *)out, fault, correlation)))
  }
  return true;
}

/* out [outer, depth, inner] = *on where indices [outer, inner] is the
 * middle index, else *off (kernels.h). */
template <class W, class I>
__global__ void one_hot_kernel(int64_t n, int64_t depth, int64_t inner, const I *idx, const W *on,
                               const W *off, W *o)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t s = i % inner, at = (i / inner) % depth, outer = i / (inner * depth);
    o[i] = (int64_t)idx[outer * inner + s] == at ? *on : *off;
  }
}

#define BY_INDEX(dtype, ...)                                \
  switch (dtype) {                                          \
  case TS_U8: { typedef uint8_t I; __VA_ARGS__; } break;   \
  case TS_I8: { typedef int8_t I; __VA_ARGS__; } break;    \
  case TS_I32: { typedef int32_t I; __VA_ARGS__; } break;  \
  case TS_I64: { typedef int64_t I; __VA_ARGS__; } break;  \
  default: return false;                                    \
  }

extern "C" bool ts__cu_one_hot(size_t elem_size, ts_dtype index_dtype, int64_t n, int64_t depth, int64_t inner,
                               const void *indices, const void *on, const void *off, void *out, void *stream)
{
  cudaStream_t st = (cudaStream_t)stream;
  if (index_dtype != TS_U8 && index_dtype != TS_I8 && index_dtype != TS_I32 && index_dtype != TS_I64)
    return false;
  if (n <= 0)
    return true;
  BY_INDEX(index_dtype, BY_WIDTH(elem_size, (one_hot_kernel<W, I><<<blocks_for(n), THREADS, 0, st>>>(
                                                n, depth, inner, (const I *)indices, (const W *)on,
                                                (const W *)off, (W *)out))))
  return true;
}
