/* cuda/sort.cu — TopKV2, Sort and ArgSort: each row of x [outer, n,
 * inner] along n in the CPU's order (ops/sort.c): by key, an unsigned
 * number per element in the order wanted (a NaN above every number and
 * equal to every NaN, -0.0 equal to 0.0; descending flips the keys),
 * then by index, so that equal keys keep their order.
 *
 * A rank kernel: one thread per element counts the elements of its row
 * that come strictly before it in that total order; the count is its
 * place, where it writes its value (bits as they are) and its index
 * (TopKV2: only when the place is below k).  O(n^2) comparisons per row
 * of n, but exact, with no temporary memory, so it may be captured in a
 * CUDA Graph as it is.  Every numeric dtype but bool. */
#include "dtypes.cuh"

#include <cuda_runtime.h>

#include "launch.cuh"

#define SIGN_BIT (1ull << 63)

/* ops/sort.c's float_key */
__device__ __forceinline__ uint64_t float_key(double v)
{
  if (isnan(v))
    return ~0ull; /* above every number, one NaN like another */
  if (v == 0)
    v = 0; /* -0.0 equals 0.0 */
  uint64_t b = (uint64_t)__double_as_longlong(v);
  return b & SIGN_BIT ? ~b : b | SIGN_BIT;
}

/* The element's key as ops/sort.c's KEY_U, KEY_I, KEY_F, KEY_F16 and
 * KEY_BF16 make it. */
template <class T> struct key_of {
  static __device__ __forceinline__ uint64_t get(T v)
  {
    return (T)-1 > (T)0 ? (uint64_t)v : (uint64_t)(int64_t)v ^ SIGN_BIT;
  }
};
template <> struct key_of<float> {
  static __device__ __forceinline__ uint64_t get(float v) { return float_key(v); }
};
template <> struct key_of<double> {
  static __device__ __forceinline__ uint64_t get(double v) { return float_key(v); }
};
template <> struct key_of<__half> {
  static __device__ __forceinline__ uint64_t get(__half v) { return float_key(widen(v)); }
};
template <> struct key_of<__nv_bfloat16> {
  static __device__ __forceinline__ uint64_t get(__nv_bfloat16 v) { return float_key(widen(v)); }
};

/* Element j of row (o, i) goes to place rank among the n_out kept: into
 * values (NULL: none) as it is, and its j into indices (NULL: none). */
template <class T>
__global__ void rank_kernel(int64_t size, int64_t n, int64_t inner, int64_t n_out, bool descending,
                            const T *x, T *values, int32_t *indices)
{
  uint64_t flip = descending ? ~0ull : 0;
  FOR_EACH(e, size) {
    int64_t i = e % inner, j = e / inner % n, o = e / inner / n;
    const T *row = x + o * n * inner + i;
    uint64_t key = key_of<T>::get(row[j * inner]) ^ flip;
    int64_t rank = 0;
    for (int64_t m = 0; m < n; m++) {
      uint64_t other = key_of<T>::get(row[m * inner]) ^ flip;
      rank += other < key || (other == key && m < j);
    }
    if (rank < n_out) {
      int64_t to = (o * n_out + rank) * inner + i;
      if (values)
        values[to] = row[j * inner];
      if (indices)
        indices[to] = (int32_t)j;
    }
  }
}

extern "C" bool ts__cu_sort(ts_dtype dtype, int64_t outer, int64_t n, int64_t inner, int64_t n_out,
                            bool descending, const void *x, void *values, int32_t *indices,
                            void *stream)
{
  if (dtype == TS_BOOL || (unsigned)dtype >= TS_NUMERIC_DTYPE_COUNT)
    return false;
  int64_t size = outer * n * inner;
  if (size <= 0 || n_out <= 0)
    return true;
  cudaStream_t s = (cudaStream_t)stream;
  DISPATCH(dtype, (rank_kernel<T><<<blocks_for(size), THREADS, 0, s>>>(
                    size, n, inner, n_out, descending, (const T *)x, (T *)values, indices)))
  return true;
}
