/* cuda/misc.cu — the CUDA kernels of the non-elementwise rows that need no
 * library: Cast, Fill/Zeros/Ones(-like), Eye, Range, the reductions (sum,
 * mean, max, min, prod, argmax, argmin over one run of axes) and Softmax /
 * LogSoftmax over the last dim, SparseSoftmaxCrossEntropyWithLogits.
 * Float reductions accumulate in f64 (as the CPU's f32 sums and products
 * do; max, min, argmax and argmin compare exactly in it; the 16-bit floats widened
 * and the result rounded back once), one thread block per output; integer
 * ones as reduce_int_kernel says.  Every numeric dtype (cuda/dtypes.cuh). */
#include "dtypes.cuh"

#include "../../ops/cast_formulas.h"

#include <cuda_runtime.h>
#include <math.h>

#include "launch.cuh"

/* ---- Cast ------------------------------------------------------------------------ */

/* As the CPU's loops (ops/cast.c), from an element's value V (a 16-bit
 * float widened to float): floats to integers through
 * ops/cast_formulas.h, anything to bool as x != 0, anything to a 16-bit
 * float rounded once from double, the rest as C casts. */
template <class V, class T> struct convert {
  static __device__ __forceinline__ T f(V x) { return (T)x; }
};
template <class V> struct convert<V, bool> {
  static __device__ __forceinline__ bool f(V x) { return x != (V)0; }
};
template <class V> struct convert<V, __half> {
  static __device__ __forceinline__ __half f(V x) { return narrow<__half>::from((double)x); }
};
template <class V> struct convert<V, __nv_bfloat16> {
  static __device__ __forceinline__ __nv_bfloat16 f(V x)
  {
    return narrow<__nv_bfloat16>::from((double)x);
  }
};
/* a float NaN's sign and payload reach the 16-bit floats as the CPU's
 * (double) cast keeps them */
template <> struct convert<float, __half> {
  static __device__ __forceinline__ __half f(float x) { return narrow<__half>::from(x); }
};
template <> struct convert<float, __nv_bfloat16> {
  static __device__ __forceinline__ __nv_bfloat16 f(float x)
  {
    return narrow<__nv_bfloat16>::from(x);
  }
};
#define FROM_FLOAT(T, conv)                                                       \
  template <> struct convert<float, T> {                                       \
    static __device__ __forceinline__ T f(float x) { return conv((double)x); } \
  };                                                                           \
  template <> struct convert<double, T> {                                      \
    static __device__ __forceinline__ T f(double x) { return conv(x); }        \
  };
FROM_FLOAT(int32_t, float_to_i32)
FROM_FLOAT(int64_t, float_to_i64)
FROM_FLOAT(uint8_t, float_to_u8)
FROM_FLOAT(int8_t, float_to_i8)
FROM_FLOAT(int16_t, float_to_i16)
FROM_FLOAT(uint16_t, float_to_u16)
FROM_FLOAT(uint32_t, float_to_u32)
FROM_FLOAT(uint64_t, float_to_u64)

template <class F, class T>
__global__ void cast_kernel(int64_t n, const F *x, T *o)
{
  typedef typename value_of<F>::type V;
  FOR_EACH(i, n) o[i] = convert<V, T>::f(value_of<F>::get(x[i]));
}

template <class F>
static bool cast_from(ts_dtype to, int64_t n, const void *x, void *out, cudaStream_t s)
{
  DISPATCH(to, (cast_kernel<F, T><<<blocks_for(n), THREADS, 0, s>>>(n, (const F *)x, (T *)out)))
  return true;
}

extern "C" bool ts__cu_cast(ts_dtype from, ts_dtype to, int64_t n, const void *x, void *out,
                            void *stream)
{
  if (n <= 0)
    return (unsigned)from < TS_NUMERIC_DTYPE_COUNT && (unsigned)to < TS_NUMERIC_DTYPE_COUNT;
  cudaStream_t s = (cudaStream_t)stream;
  DISPATCH(from, return cast_from<T>(to, n, x, out, s))
  return true;
}

/* ---- Fill, Range ------------------------------------------------------------------ */

/* value stored as the CPU's ts__store_f64 would (Zeros, Ones: exact) */
template <class T>
__global__ void fill_kernel(int64_t n, double v, T *o)
{
  T t = store_f64<T>(v);
  FOR_EACH(i, n) o[i] = t;
}

template <class T>
__global__ void fill_from_kernel(int64_t n, const T *v, T *o)
{
  FOR_EACH(i, n) o[i] = *v;
}

extern "C" bool ts__cu_fill(ts_dtype dtype, int64_t n, double value, void *out, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  DISPATCH(dtype, if (n > 0) fill_kernel<T><<<blocks_for(n), THREADS, 0, s>>>(n, value, (T *)out))
  return true;
}

extern "C" bool ts__cu_fill_from(ts_dtype dtype, int64_t n, const void *value_at, void *out,
                                 void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  DISPATCH(dtype, if (n > 0) fill_from_kernel<T><<<blocks_for(n), THREADS, 0, s>>>(
                    n, (const T *)value_at, (T *)out))
  return true;
}

template <class T>
__global__ void eye_kernel(int64_t n, int64_t cols, T *o)
{
  FOR_EACH(i, n) o[i] = store_f64<T>(i / cols == i % cols ? 1 : 0);
}

extern "C" bool ts__cu_eye(ts_dtype dtype, int64_t rows, int64_t cols, void *out, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int64_t n = rows * cols;
  DISPATCH(dtype, if (n > 0) eye_kernel<T><<<blocks_for(n), THREADS, 0, s>>>(n, cols, (T *)out))
  return true;
}

template <class T>
__global__ void range_float_kernel(int64_t n, double start, double delta, T *o)
{
  FOR_EACH(i, n) o[i] = store_f64<T>(__dadd_rn(start, __dmul_rn((double)i, delta)));
}

template <class T>
__global__ void range_int_kernel(int64_t n, uint64_t start, uint64_t delta, T *o)
{
  FOR_EACH(i, n) o[i] = (T)(int64_t)(start + (uint64_t)i * delta);
}

extern "C" bool ts__cu_range(ts_dtype dtype, int64_t n, double start, double delta, void *out,
                             void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  if (n <= 0)
    return true;
  if (dtype == TS_F32 || dtype == TS_F64 || dtype == TS_F16 || dtype == TS_BF16) {
    DISPATCH(dtype, (range_float_kernel<T><<<blocks_for(n), THREADS, 0, s>>>(n, start, delta,
                                                                             (T *)out)))
    return true;
  }
  uint64_t s0 = (uint64_t)(int64_t)start, d = (uint64_t)(int64_t)delta;
  DISPATCH(dtype, (range_int_kernel<T><<<blocks_for(n), THREADS, 0, s>>>(n, s0, d, (T *)out)))
  return true;
}

/* ---- reductions --------------------------------------------------------------------
 * x as [outer, len, inner]: block b reduces the outputs (o, j) with
 * o * inner + j = b, its threads striding along len and combining in
 * shared memory.  Max/min keep NaN, as the CPU kernels do. */

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_ARGMAX, R_ARGMIN };

/* ArgMax (more) and ArgMin: the first index of the best, a NaN best of all
 * (the first NaN wins), as the CPU's loops. */
template <class T>
__device__ __forceinline__ void combine_arg(bool more, T &acc, int64_t &at, T v, int64_t i)
{
  if (!isnan(acc) && (isnan(v) || (more ? v > acc : v < acc) || (v == acc && i < at))) {
    acc = v;
    at = i;
  } else if (isnan(acc) && isnan(v) && i < at) {
    at = i;
  }
}

template <class T>
__device__ __forceinline__ void combine(int kind, T &acc, int64_t &at, T v, int64_t i)
{
  switch (kind) {
  case R_SUM: case R_MEAN: acc += v; break;
  case R_PROD: acc *= v; break;
  /* the first NaN met stays (its sign and payload), as the CPU's STEP_MAXF */
  case R_MAX: if (!isnan(acc) && (isnan(v) || v > acc)) acc = v; break;
  case R_MIN: if (!isnan(acc) && (isnan(v) || v < acc)) acc = v; break;
  case R_ARGMAX: case R_ARGMIN: combine_arg(kind == R_ARGMAX, acc, at, v, i); break;
  }
}

template <class T>
__global__ void reduce_kernel(int kind, int64_t n_out, int64_t len, int64_t inner, const T *x,
                              void *out)
{
  __shared__ double acc_s[THREADS];
  __shared__ int64_t at_s[THREADS];
  FOR_EACH_ROW(b, n_out) {
    int64_t o = b / inner, j = b % inner;
    const T *row = x + o * len * inner + j;
    bool arg = kind == R_ARGMAX || kind == R_ARGMIN;
    double acc = kind == R_PROD ? 1 : kind == R_MAX || kind == R_ARGMAX ? -INFINITY
               : kind == R_MIN || kind == R_ARGMIN ? INFINITY : 0;
    int64_t at = arg ? INT64_MAX : 0;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
      combine(kind, acc, at, (double)value_of<T>::get(row[i * inner]), i);
    acc_s[threadIdx.x] = acc;
    at_s[threadIdx.x] = at;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
      if (threadIdx.x < w)
        combine(kind, acc_s[threadIdx.x], at_s[threadIdx.x], acc_s[threadIdx.x + w],
                at_s[threadIdx.x + w]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (arg)
        ((int64_t *)out)[b] = at_s[0] == INT64_MAX ? 0 : at_s[0];
      else
        ((T *)out)[b] = store_f64<T>(kind == R_MEAN ? acc_s[0] / (double)len : acc_s[0]);
    }
    __syncthreads(); /* acc_s and at_s are the next output's */
  }
}

/* Integers (and bool's Max/Min, its any/all) as the CPU's reduce.c:
 * sums and products wrap (in 64-bit unsigned, truncated to T: the same
 * residue), means sum exactly in 128 bits and truncate toward zero, max,
 * min, argmax and argmin compare exactly. */
template <class T>
__device__ __forceinline__ void combine_int(int kind, __int128 &acc, int64_t &at, __int128 v,
                                            int64_t i)
{
  switch (kind) {
  case R_SUM: acc = (__int128)(uint64_t)((uint64_t)acc + (uint64_t)v); break;
  case R_PROD: acc = (__int128)(uint64_t)((uint64_t)acc * (uint64_t)v); break;
  case R_MEAN: acc += v; break;
  case R_MAX: if (v > acc) acc = v; break;
  case R_MIN: if (v < acc) acc = v; break;
  case R_ARGMAX: if (v > acc || (v == acc && i < at)) { acc = v; at = i; } break;
  case R_ARGMIN: if (v < acc || (v == acc && i < at)) { acc = v; at = i; } break;
  }
}

template <class T>
__global__ void reduce_int_kernel(int kind, int64_t n_out, int64_t len, int64_t inner, __int128 lo,
                                  __int128 hi, const T *x, void *out)
{
  __shared__ __int128 acc_s[THREADS];
  __shared__ int64_t at_s[THREADS];
  FOR_EACH_ROW(b, n_out) {
    int64_t o = b / inner, j = b % inner;
    const T *row = x + o * len * inner + j;
    __int128 acc = kind == R_PROD ? 1 : kind == R_MAX || kind == R_ARGMAX ? lo
                 : kind == R_MIN || kind == R_ARGMIN ? hi : 0;
    int64_t at = INT64_MAX;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
      combine_int<T>(kind, acc, at, (__int128)row[i * inner], i);
    acc_s[threadIdx.x] = acc;
    at_s[threadIdx.x] = at;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
      if (threadIdx.x < w)
        combine_int<T>(kind, acc_s[threadIdx.x], at_s[threadIdx.x], acc_s[threadIdx.x + w],
                       at_s[threadIdx.x + w]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (kind == R_ARGMAX || kind == R_ARGMIN)
        ((int64_t *)out)[b] = at_s[0] == INT64_MAX ? 0 : at_s[0];
      else
        ((T *)out)[b] = (T)(kind == R_MEAN ? acc_s[0] / (__int128)len : acc_s[0]);
    }
    __syncthreads(); /* acc_s and at_s are the next output's */
  }
}

static int reduce_kind_of(ts_op op)
{
  switch (op) {
  case TS_OP_REDUCE_SUM: return R_SUM;
  case TS_OP_REDUCE_MEAN: return R_MEAN;
  case TS_OP_REDUCE_MAX: return R_MAX;
  case TS_OP_REDUCE_MIN: return R_MIN;
  case TS_OP_REDUCE_PROD: return R_PROD;
  case TS_OP_REDUCE_ANY: return R_MAX; /* of bool: any, all */
  case TS_OP_REDUCE_ALL: return R_MIN;
  case TS_OP_ARGMAX: return R_ARGMAX;
  case TS_OP_ARGMIN: return R_ARGMIN;
  default: return -1;
  }
}

extern "C" bool ts__cu_has_reduce(ts_op op, ts_dtype dtype)
{
  int kind = reduce_kind_of(op);
  if (kind < 0)
    return false;
  if (op == TS_OP_REDUCE_ANY || op == TS_OP_REDUCE_ALL) /* bool alone */
    return dtype == TS_BOOL;
  if (dtype == TS_BOOL) /* Max and Min (any, all) only, as on the CPU */
    return kind == R_MAX || kind == R_MIN;
  return (unsigned)dtype < TS_NUMERIC_DTYPE_COUNT;
}

template <class T>
static void reduce_int(int kind, int64_t n_out, int64_t len, int64_t inner, __int128 lo,
                       __int128 hi, const void *x, void *out, cudaStream_t s)
{
  reduce_int_kernel<T><<<blocks_for_rows(n_out), THREADS, 0, s>>>(kind, n_out, len, inner, lo, hi,
                                                                  (const T *)x, out);
}

extern "C" bool ts__cu_reduce(ts_op op, ts_dtype dtype, int64_t outer, int64_t len, int64_t inner,
                              const void *x, void *out, void *stream)
{
  int kind = reduce_kind_of(op);
  if (!ts__cu_has_reduce(op, dtype) || len <= 0)
    return false;
  int64_t n_out = outer * inner;
  if (n_out <= 0)
    return true;
  cudaStream_t s = (cudaStream_t)stream;
  unsigned nb = blocks_for_rows(n_out);
  switch (dtype) {
  case TS_F32:
    reduce_kernel<float><<<nb, THREADS, 0, s>>>(kind, n_out, len, inner, (const float *)x, out);
    break;
  case TS_F64:
    reduce_kernel<double><<<nb, THREADS, 0, s>>>(kind, n_out, len, inner, (const double *)x, out);
    break;
  case TS_F16:
    reduce_kernel<__half><<<nb, THREADS, 0, s>>>(kind, n_out, len, inner, (const __half *)x, out);
    break;
  case TS_BF16:
    reduce_kernel<__nv_bfloat16><<<nb, THREADS, 0, s>>>(kind, n_out, len, inner,
                                                         (const __nv_bfloat16 *)x, out);
    break;
  case TS_I32: reduce_int<int32_t>(kind, n_out, len, inner, INT32_MIN, INT32_MAX, x, out, s); break;
  case TS_I64: reduce_int<int64_t>(kind, n_out, len, inner, INT64_MIN, INT64_MAX, x, out, s); break;
  case TS_U8: reduce_int<uint8_t>(kind, n_out, len, inner, 0, UINT8_MAX, x, out, s); break;
  case TS_BOOL: reduce_int<bool>(kind, n_out, len, inner, 0, 1, x, out, s); break;
  case TS_I8: reduce_int<int8_t>(kind, n_out, len, inner, INT8_MIN, INT8_MAX, x, out, s); break;
  case TS_I16: reduce_int<int16_t>(kind, n_out, len, inner, INT16_MIN, INT16_MAX, x, out, s); break;
  case TS_U16: reduce_int<uint16_t>(kind, n_out, len, inner, 0, UINT16_MAX, x, out, s); break;
  case TS_U32: reduce_int<uint32_t>(kind, n_out, len, inner, 0, UINT32_MAX, x, out, s); break;
  case TS_U64: reduce_int<uint64_t>(kind, n_out, len, inner, 0, UINT64_MAX, x, out, s); break;
  default: return false;
  }
  return true;
}

/* ---- Softmax, LogSoftmax ------------------------------------------------------------- */

template <class T>
__device__ T block_reduce(T v, bool max, T *shared)
{
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      T other = shared[threadIdx.x + w];
      shared[threadIdx.x] = max ? (other > shared[threadIdx.x] ? other : shared[threadIdx.x])
                                : shared[threadIdx.x] + other;
    }
    __syncthreads();
  }
  T r = shared[0];
  __syncthreads();
  return r;
}

template <class T>
__global__ void softmax_kernel(bool log_out, int64_t rows, int64_t len, const T *x, T *o)
{
  __shared__ T shared[THREADS];
  __shared__ double shared_sum[THREADS];
  FOR_EACH_ROW(r, rows) {
    const T *row = x + r * len;
    T *orow = o + r * len;
    T m = (T)-INFINITY;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
      m = row[i] > m ? row[i] : m;
    m = block_reduce(m, true, shared);
    double sum = 0; /* exps summed in f64, as on the CPU */
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
      sum += (double)exp(row[i] - m);
    sum = block_reduce(sum, false, shared_sum);
    T lse = (T)log(sum);
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
      orow[i] = log_out ? row[i] - m - lse : (T)((double)exp(row[i] - m) / sum);
  }
}

extern "C" bool ts__cu_softmax(bool log_out, ts_dtype dtype, int64_t rows, int64_t len,
                               const void *x, void *out, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  if (dtype != TS_F32 && dtype != TS_F64)
    return false;
  if (rows <= 0 || len <= 0)
    return true;
  if (dtype == TS_F32)
    softmax_kernel<float><<<blocks_for_rows(rows), THREADS, 0, s>>>(log_out, rows, len, (const float *)x,
                                                              (float *)out);
  else
    softmax_kernel<double><<<blocks_for_rows(rows), THREADS, 0, s>>>(log_out, rows, len, (const double *)x,
                                                               (double *)out);
  return true;
}

/* The loss of each row at its label: log(sum exp(x - m)) - (x[label] - m),
 * exps summed in f64 as on the CPU (ops/nn.c).  A label outside [0, len)
 * gives NaN and is recorded in fault (kernels.h). */
template <class T, class L>
__global__ void xent_kernel(int64_t rows, int64_t len, const T *x, const L *labels, T *o,
                            ts_cu_index_fault *fault, unsigned long long correlation)
{
  __shared__ T shared[THREADS];
  __shared__ double shared_sum[THREADS];
  FOR_EACH_ROW(r, rows) {
    int64_t label = (int64_t)labels[r];
    if (label < 0 || label >= len) { /* the whole block: no reduction to join */
      if (threadIdx.x == 0) {
        o[r] = (T)NAN;
        if (fault && atomicCAS(&fault->flag, 0u, 1u) == 0u)
          index_fault_fill(fault, r, label, correlation);
      }
      continue;
    }
    const T *row = x + r * len;
    T m = row[0];
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
      m = row[i] > m ? row[i] : m;
    m = block_reduce(m, true, shared);
    double sum = 0;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
      sum += (double)exp(row[i] - m);
    sum = block_reduce(sum, false, shared_sum);
    if (threadIdx.x == 0)
      o[r] = (T)(log(sum) - (double)(row[label] - m));
  }
}

template <class T>
static bool xent_of(ts_dtype label_dtype, int64_t rows, int64_t len, const void *x,
                    const void *labels, void *out, ts_cu_index_fault *fault,
                    uint64_t correlation, cudaStream_t s)
{
  if (label_dtype == TS_I32)
    xent_kernel<T, int32_t><<<blocks_for_rows(rows), THREADS, 0, s>>>(
      rows, len, (const T *)x, (const int32_t *)labels, (T *)out, fault, correlation);
  else if (label_dtype == TS_I64)
    xent_kernel<T, int64_t><<<blocks_for_rows(rows), THREADS, 0, s>>>(
      rows, len, (const T *)x, (const int64_t *)labels, (T *)out, fault, correlation);
  else
    return false;
  return true;
}

extern "C" bool ts__cu_xent(ts_dtype dtype, ts_dtype label_dtype, int64_t rows, int64_t len,
                            const void *x, const void *labels, void *out,
                            ts_cu_index_fault *fault, uint64_t correlation, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  if (rows <= 0)
    return dtype == TS_F32 || dtype == TS_F64;
  if (dtype == TS_F32)
    return xent_of<float>(label_dtype, rows, len, x, labels, out, fault, correlation, s);
  if (dtype == TS_F64)
    return xent_of<double>(label_dtype, rows, len, x, labels, out, fault, correlation, s);
  return false;
}
