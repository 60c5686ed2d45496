/* cuda/train.cu — the rows a training step adds: SumTo (a gradient summed
 * down to its input's shape, as ops/grad.c) and ResourceApplyAdam (Adam's
 * update in one pass, as ops/apply.c gives it). */
#include "dtypes.cuh"

#define THREADS 256

/* ---- SumTo --------------------------------------------------------------------------
 * One block per output (a grid-stride loop over them), its threads
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
  for (int64_t b = blockIdx.x; b < s.n_out; b += gridDim.x) {
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
  unsigned blocks = (unsigned)(s->n_out < 65535 * 32 ? s->n_out : 65535 * 32);
  DISPATCH(dtype, sum_to_kernel<T><<<blocks, THREADS, 0, st>>>(*s, (const T *)g, (T *)y))
  return true;
}

/* ---- ResourceApplyAdam -----------------------------------------------------------
 * Each operation rounded on its own (the intrinsics keep nvcc from joining
 * a product and a sum into an FMA), in the CPU's order, so the update has
 * the bits of the CPU's and of the separate ops. */

template <class T> struct rn;
template <> struct rn<float> {
  static __device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
  static __device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
  static __device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
  static __device__ __forceinline__ float div(float a, float b) { return __fdiv_rn(a, b); }
  static __device__ __forceinline__ float sqrt(float a) { return __fsqrt_rn(a); }
};
template <> struct rn<double> {
  static __device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
  static __device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
  static __device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
  static __device__ __forceinline__ double div(double a, double b) { return __ddiv_rn(a, b); }
  static __device__ __forceinline__ double sqrt(double a) { return __dsqrt_rn(a); }
};

template <class T>
__global__ void adam_kernel(int64_t n, ts_cu_adam a)
{
  typedef rn<T> R;
  T *var = (T *)a.var, *m = (T *)a.m, *v = (T *)a.v;
  const T *g = (const T *)a.grad;
  const T one = 1;
  /* the rates as the CPU computes them once, from the scalars on the device */
  const T lr_t = R::div(R::mul(*(const T *)a.lr, R::sqrt(R::sub(one, *(const T *)a.beta2_power))),
                        R::sub(one, *(const T *)a.beta1_power));
  const T c1 = R::sub(one, *(const T *)a.beta1), c2 = R::sub(one, *(const T *)a.beta2);
  const T eps = *(const T *)a.epsilon;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    T gi = g[i];
    T mi = R::add(m[i], R::mul(R::sub(gi, m[i]), c1));
    T vi = R::add(v[i], R::mul(R::sub(R::mul(gi, gi), v[i]), c2));
    m[i] = mi;
    v[i] = vi;
    var[i] = R::sub(var[i], R::div(R::mul(lr_t, mi), R::add(R::sqrt(vi), eps)));
  }
}

extern "C" bool ts__cu_adam(ts_dtype dtype, int64_t n, const ts_cu_adam *a, void *stream)
{
  if (dtype != TS_F32 && dtype != TS_F64)
    return false;
  if (n <= 0)
    return true;
  cudaStream_t st = (cudaStream_t)stream;
  int64_t b = (n + THREADS - 1) / THREADS;
  unsigned blocks = (unsigned)(b < 65535 * 32 ? b : 65535 * 32);
  if (dtype == TS_F32)
    adam_kernel<float><<<blocks, THREADS, 0, st>>>(n, *a);
  else if (dtype == TS_F64)
    adam_kernel<double><<<blocks, THREADS, 0, st>>>(n, *a);
  return true;
}
