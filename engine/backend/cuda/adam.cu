/* cuda/adam.cu — ResourceApplyAdam's update (ops/apply.c's
 * apply_adam_update_def) on the device where its variables live: var, m
 * and v updated in place from grad in one pass, the scalars read on the
 * device (they are values of the step, never copied to the host).
 *
 * Each operation rounded on its own (the intrinsics keep nvcc from joining
 * a product and a sum into an FMA), in the CPU's order, so the update has
 * the bits of the CPU's and of the separate ops. */
#include "dtypes.cuh"

#include "launch.cuh"

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
  FOR_EACH(i, n) {
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
  unsigned blocks = blocks_for(n);
  if (dtype == TS_F32)
    adam_kernel<float><<<blocks, THREADS, 0, st>>>(n, *a);
  else
    adam_kernel<double><<<blocks, THREADS, 0, st>>>(n, *a);
  return true;
}
