/* cuda/elementwise.cu — the CUDA kernels of the elementwise rows, made
 * from the rows and formulas of ops/unary_rows.h and ops/binary_rows.h
 * (the same text the CPU loops are made from, compiled here as device
 * functions), and the FusedElementwise interpreter over the fusible float
 * rows.  The 16-bit floats run the f32 formula on their widened values
 * and round the result back, as the CPU loops do.  Binary rows whose CPU
 * kernel checks its operands (integer division by zero, negative integer
 * powers) run the same check on a host copy of the operand first, or,
 * while a CUDA Graph is captured, have their kernel check it on the device
 * (ts__cu_binary_checked; ops/binary.c, binary_cuda). */
#include "dtypes.cuh"

#include "../../ops/unary_rows.h"
#include "../../ops/binary_rows.h"

#include <cuda_runtime.h>
#include <type_traits>

#include "launch.cuh"

/* The element offset of output index i in input k. */
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

/* ---- unary ------------------------------------------------------------------- */

template <class F, class T, class O>
__global__ void unary_kernel(int64_t n, const T *x, O *o)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    o[i] = F::f(x[i]);
}

typedef void (*unary_launch)(int64_t n, const void *x, void *o, cudaStream_t s);

template <class F, class T, class O>
static void launch_unary(int64_t n, const void *x, void *o, cudaStream_t s)
{
  unary_kernel<F, T, O><<<blocks_for(n), THREADS, 0, s>>>(n, (const T *)x, (O *)o);
}

#define U_FN(id, sfx, T, O)                                 \
  struct id##_##sfx##_u {                                   \
    static __device__ __forceinline__ O f(T x) { return id##_##sfx(x); } \
  };
/* a 16-bit float H through the f32 formula, rounded back */
#define U_FN_HALF(id, sfx, H)                                                              \
  struct id##_##sfx##_u {                                                                  \
    static __device__ __forceinline__ H f(H x) { return narrow<H>::from(id##_f32(widen(x))); } \
  };
/* a test of a 16-bit float H: of its value widened (exactly) to float */
#define U_FN_HALF_TEST(id, sfx, H)                                                         \
  struct id##_##sfx##_u {                                                                  \
    static __device__ __forceinline__ bool f(H x) { return id##_f32(widen(x)); }           \
  };
#define U_FNS_FLOAT(id)                                                                    \
  U_FN(id, f32, float, float) U_FN(id, f64, double, double) U_FN_HALF(id, f16, __half)     \
  U_FN_HALF(id, bf16, __nv_bfloat16)
#define U_FNS_NUMERIC(id)                                                                  \
  U_FNS_FLOAT(id) U_FN(id, i32, int32_t, int32_t) U_FN(id, i64, int64_t, int64_t)          \
  U_FN(id, u8, uint8_t, uint8_t) U_FN(id, i8, int8_t, int8_t) U_FN(id, i16, int16_t, int16_t) \
  U_FN(id, u16, uint16_t, uint16_t) U_FN(id, u32, uint32_t, uint32_t) U_FN(id, u64, uint64_t, uint64_t)
#define U_FNS_BOOL(id) U_FN(id, b, bool, bool)
#define U_FNS_PREDICATE(id)                                                                \
  U_FN(id, f32, float, bool) U_FN(id, f64, double, bool) U_FN_HALF_TEST(id, f16, __half)   \
  U_FN_HALF_TEST(id, bf16, __nv_bfloat16)
#define U_FNS(ID, id, NAME, DTYPES, GRAIN, FLAGS, F32, GRAD) U_FNS_##DTYPES(id)
UNARY_ROWS(U_FNS)

#define U_SET(ID, id, DT, sfx, T, O) t[TS_OP_##ID][DT] = launch_unary<id##_##sfx##_u, T, O>;
#define U_SET_FLOATS(ID, id, O32, O64, O16, OBF16)                                     \
  U_SET(ID, id, TS_F32, f32, float, O32) U_SET(ID, id, TS_F64, f64, double, O64)       \
  U_SET(ID, id, TS_F16, f16, __half, O16) U_SET(ID, id, TS_BF16, bf16, __nv_bfloat16, OBF16)
#define U_SET_FLOAT(ID, id) U_SET_FLOATS(ID, id, float, double, __half, __nv_bfloat16)
#define U_SET_NUMERIC(ID, id)                                                          \
  U_SET_FLOAT(ID, id) U_SET(ID, id, TS_I32, i32, int32_t, int32_t)                     \
  U_SET(ID, id, TS_I64, i64, int64_t, int64_t) U_SET(ID, id, TS_U8, u8, uint8_t, uint8_t) \
  U_SET(ID, id, TS_I8, i8, int8_t, int8_t) U_SET(ID, id, TS_I16, i16, int16_t, int16_t) \
  U_SET(ID, id, TS_U16, u16, uint16_t, uint16_t) U_SET(ID, id, TS_U32, u32, uint32_t, uint32_t) \
  U_SET(ID, id, TS_U64, u64, uint64_t, uint64_t)
#define U_SET_BOOL(ID, id) U_SET(ID, id, TS_BOOL, b, bool, bool)
#define U_SET_PREDICATE(ID, id) U_SET_FLOATS(ID, id, bool, bool, bool, bool)
#define U_SETS(ID, id, NAME, DTYPES, GRAIN, FLAGS, F32, GRAD) U_SET_##DTYPES(ID, id)

static const struct unary_table {
  unary_launch t[TS_OP_COUNT][TS_NUMERIC_DTYPE_COUNT];
  unary_table() : t() { UNARY_ROWS(U_SETS) }
} unary;

extern "C" bool ts__cu_has_unary(ts_op op, ts_dtype dtype)
{
  return (unsigned)op < TS_OP_COUNT && (unsigned)dtype < TS_NUMERIC_DTYPE_COUNT &&
         unary.t[op][dtype];
}

extern "C" bool ts__cu_unary(ts_op op, ts_dtype dtype, int64_t n, const void *x, void *out,
                             void *stream)
{
  if (!ts__cu_has_unary(op, dtype))
    return false;
  if (n > 0)
    unary.t[op][dtype](n, x, out, (cudaStream_t)stream);
  return true;
}

/* ---- binary ------------------------------------------------------------------ */

template <class F, class T, class O>
__global__ void binary_kernel(int64_t n, ts_cu_bcast s, const T *a, const T *b, O *o)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    o[i] = F::f(a[offset_of(s, 0, i)], b[offset_of(s, 1, i)]);
}

typedef void (*binary_launch)(int64_t n, const ts_cu_bcast *s, const void *a, const void *b,
                              void *o, cudaStream_t st);

template <class F, class T, class O>
static void launch_binary(int64_t n, const ts_cu_bcast *s, const void *a, const void *b, void *o,
                          cudaStream_t st)
{
  binary_kernel<F, T, O><<<blocks_for(n), THREADS, 0, st>>>(n, *s, (const T *)a, (const T *)b,
                                                            (O *)o);
}

#define B_FN(id, sfx, T, O)                                            \
  struct id##_##sfx##_b {                                              \
    static __device__ __forceinline__ O f(T x, T y) { return id##_##sfx(x, y); } \
  };
/* a 16-bit float H through the f32 formula: arithmetic rounded back to
 * H, comparisons bool */
#define B_FN_HALF(id, sfx, H, O)                                                      \
  struct id##_##sfx##_b {                                                             \
    static __device__ __forceinline__ O f(H x, H y) { return result(id##_f32(widen(x), widen(y))); } \
    static __device__ __forceinline__ H result(float r) { return narrow<H>::from(r); } \
    static __device__ __forceinline__ bool result(bool r) { return r; }             \
  };
#define B_FNS_FLOAT(id)                                                               \
  B_FN(id, f32, float, float) B_FN(id, f64, double, double)                           \
  B_FN_HALF(id, f16, __half, __half) B_FN_HALF(id, bf16, __nv_bfloat16, __nv_bfloat16)
#define B_FNS_INTS(id, O8, O16, OU8, OU16, OU32, OU64, O32, O64)                      \
  B_FN(id, i32, int32_t, O32) B_FN(id, i64, int64_t, O64) B_FN(id, u8, uint8_t, OU8)  \
  B_FN(id, i8, int8_t, O8) B_FN(id, i16, int16_t, O16) B_FN(id, u16, uint16_t, OU16)  \
  B_FN(id, u32, uint32_t, OU32) B_FN(id, u64, uint64_t, OU64)
#define B_FNS_NUMERIC(id)                                                             \
  B_FNS_FLOAT(id)                                                                     \
  B_FNS_INTS(id, int8_t, int16_t, uint8_t, uint16_t, uint32_t, uint64_t, int32_t, int64_t)
#define B_FNS_ALL(id)                                                                 \
  B_FN(id, f32, float, bool) B_FN(id, f64, double, bool)                              \
  B_FN_HALF(id, f16, __half, bool) B_FN_HALF(id, bf16, __nv_bfloat16, bool)           \
  B_FNS_INTS(id, bool, bool, bool, bool, bool, bool, bool, bool) B_FN(id, b, bool, bool)
#define B_FNS_BOOL(id) B_FN(id, b, bool, bool)
#define B_FNS(ID, id, NAME, DTYPES, GRAIN, CHECK, FLAGS, GRAD) B_FNS_##DTYPES(id)
BINARY_ROWS(B_FNS)

#define B_SET(ID, id, DT, sfx, T, O) t[TS_OP_##ID][DT] = launch_binary<id##_##sfx##_b, T, O>;
#define B_SET_FLOAT(ID, id)                                                               \
  B_SET(ID, id, TS_F32, f32, float, float) B_SET(ID, id, TS_F64, f64, double, double)     \
  B_SET(ID, id, TS_F16, f16, __half, __half)                                              \
  B_SET(ID, id, TS_BF16, bf16, __nv_bfloat16, __nv_bfloat16)
#define B_SET_INTS(ID, id, O8, O16, OU8, OU16, OU32, OU64, O32, O64)                      \
  B_SET(ID, id, TS_I32, i32, int32_t, O32) B_SET(ID, id, TS_I64, i64, int64_t, O64)       \
  B_SET(ID, id, TS_U8, u8, uint8_t, OU8) B_SET(ID, id, TS_I8, i8, int8_t, O8)             \
  B_SET(ID, id, TS_I16, i16, int16_t, O16) B_SET(ID, id, TS_U16, u16, uint16_t, OU16)     \
  B_SET(ID, id, TS_U32, u32, uint32_t, OU32) B_SET(ID, id, TS_U64, u64, uint64_t, OU64)
#define B_SET_NUMERIC(ID, id)                                                             \
  B_SET_FLOAT(ID, id)                                                                     \
  B_SET_INTS(ID, id, int8_t, int16_t, uint8_t, uint16_t, uint32_t, uint64_t, int32_t, int64_t)
#define B_SET_ALL(ID, id)                                                                 \
  B_SET(ID, id, TS_F32, f32, float, bool) B_SET(ID, id, TS_F64, f64, double, bool)        \
  B_SET(ID, id, TS_F16, f16, __half, bool) B_SET(ID, id, TS_BF16, bf16, __nv_bfloat16, bool) \
  B_SET_INTS(ID, id, bool, bool, bool, bool, bool, bool, bool, bool)                      \
  B_SET(ID, id, TS_BOOL, b, bool, bool)
#define B_SET_BOOL(ID, id) B_SET(ID, id, TS_BOOL, b, bool, bool)
#define B_SETS(ID, id, NAME, DTYPES, GRAIN, CHECK, FLAGS, GRAD) B_SET_##DTYPES(ID, id)

static const struct binary_table {
  binary_launch t[TS_OP_COUNT][TS_NUMERIC_DTYPE_COUNT];
  binary_table() : t() { BINARY_ROWS(B_SETS) }
} binary;

extern "C" bool ts__cu_has_binary(ts_op op, ts_dtype dtype)
{
  return (unsigned)op < TS_OP_COUNT && (unsigned)dtype < TS_NUMERIC_DTYPE_COUNT &&
         binary.t[op][dtype];
}

extern "C" bool ts__cu_binary(ts_op op, ts_dtype dtype, int64_t n, const ts_cu_bcast *s,
                              const void *a, const void *b, void *out, void *stream)
{
  if (!ts__cu_has_binary(op, dtype))
    return false;
  if (n > 0)
    binary.t[op][dtype](n, s, a, b, out, (cudaStream_t)stream);
  return true;
}

/* ---- binary rows with a check, in a captured graph ------------------------------
 * What the check column of ops/binary_rows.h refuses in an integer b
 * (check_divisor and check_exponent in ops/binary.c, on the host). */
struct refuse_zero {
  template <class T> static __device__ __forceinline__ bool refuses(T y) { return y == 0; }
};
struct refuse_negative {
  template <class T> static __device__ __forceinline__ bool refuses(T y)
  {
    if constexpr (std::is_signed<T>::value)
      return y < 0;
    return false;
  }
};

template <class F, class R, class T>
__global__ void checked_kernel(int64_t n, ts_cu_bcast s, const T *a, const T *b, T *o,
                               ts_cu_index_fault *fault, unsigned long long correlation)
{
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t j = offset_of(s, 1, i);
    T y = b[j];
    if (R::refuses(y)) {
      o[i] = 0;
      if (atomicCAS(&fault->flag, 0u, 1u) == 0u)
        index_fault_fill(fault, j, (int64_t)y, correlation);
      continue;
    }
    o[i] = F::f(a[offset_of(s, 0, i)], y);
  }
}

typedef void (*checked_launch)(int64_t n, const ts_cu_bcast *s, const void *a, const void *b,
                               void *o, ts_cu_index_fault *fault,
                               unsigned long long correlation, cudaStream_t st);

template <class F, class R, class T>
static void launch_checked(int64_t n, const ts_cu_bcast *s, const void *a, const void *b, void *o,
                           ts_cu_index_fault *fault, unsigned long long correlation,
                           cudaStream_t st)
{
  checked_kernel<F, R, T><<<blocks_for(n), THREADS, 0, st>>>(n, *s, (const T *)a, (const T *)b,
                                                             (T *)o, fault, correlation);
}

#define C_SET(ID, id, DT, sfx, T, R) t[TS_OP_##ID][DT] = launch_checked<id##_##sfx##_b, R, T>;
#define C_SET_INTS(ID, id, R)                                                                  \
  C_SET(ID, id, TS_I32, i32, int32_t, R) C_SET(ID, id, TS_I64, i64, int64_t, R)               \
  C_SET(ID, id, TS_U8, u8, uint8_t, R) C_SET(ID, id, TS_I8, i8, int8_t, R)                    \
  C_SET(ID, id, TS_I16, i16, int16_t, R) C_SET(ID, id, TS_U16, u16, uint16_t, R)              \
  C_SET(ID, id, TS_U32, u32, uint32_t, R) C_SET(ID, id, TS_U64, u64, uint64_t, R)
#define C_SETS_NULL(ID, id)
#define C_SETS_check_divisor(ID, id) C_SET_INTS(ID, id, refuse_zero)
#define C_SETS_check_exponent(ID, id) C_SET_INTS(ID, id, refuse_negative)
#define C_SETS(ID, id, NAME, DTYPES, GRAIN, CHECK, FLAGS, GRAD) C_SETS_##CHECK(ID, id)

static const struct checked_table {
  checked_launch t[TS_OP_COUNT][TS_NUMERIC_DTYPE_COUNT];
  checked_table() : t() { BINARY_ROWS(C_SETS) }
} checked;

extern "C" bool ts__cu_binary_checked(ts_op op, ts_dtype dtype, int64_t n, const ts_cu_bcast *s,
                                      const void *a, const void *b, void *out,
                                      ts_cu_index_fault *fault, uint64_t correlation,
                                      void *stream)
{
  if ((unsigned)op >= TS_OP_COUNT || (unsigned)dtype >= TS_NUMERIC_DTYPE_COUNT ||
      !checked.t[op][dtype])
    return false;
  if (n > 0)
    checked.t[op][dtype](n, s, a, b, out, fault, correlation, (cudaStream_t)stream);
  return true;
}

/* ---- FusedElementwise: an interpreter over the fusible float rows ----------------
 * Each thread runs the whole program for its element, its temporaries in
 * registers; the switch over ops is made from the rows, so a new fusible
 * row is in it without a line here. */

/* One instruction of a program over T: the row's formula for T; *ok
 * false where the op is not a row of that arity. */
template <class T> struct instr_of {
  static __device__ __forceinline__ T unary(ts_op op, T x, bool *ok);
  static __device__ __forceinline__ T binary(ts_op op, T x, T y, bool *ok);
};

#define F_UNARY_CASE_FLOAT(ID, id, sfx) case TS_OP_##ID: return id##_##sfx(x);
#define F_UNARY_CASE_NUMERIC F_UNARY_CASE_FLOAT
#define F_UNARY_CASE_BOOL(ID, id, sfx)
#define F_UNARY_CASE_PREDICATE(ID, id, sfx)
#define F_BINARY_CASE_FLOAT(ID, id, sfx) case TS_OP_##ID: return id##_##sfx(x, y);
#define F_BINARY_CASE_NUMERIC F_BINARY_CASE_FLOAT
#define F_BINARY_CASE_ALL(ID, id, sfx)
#define F_BINARY_CASE_BOOL(ID, id, sfx)

#define F_DEFS(T, sfx)                                                                     \
  template <> __device__ __forceinline__ T instr_of<T>::unary(ts_op op, T x, bool *ok)       \
  {                                                                                        \
    switch (op) {                                                                          \
      UNARY_ROWS(F_U_##sfx)                                                                \
    default: *ok = false; return x;                                                        \
    }                                                                                      \
  }                                                                                        \
  template <> __device__ __forceinline__ T instr_of<T>::binary(ts_op op, T x, T y, bool *ok) \
  {                                                                                        \
    switch (op) {                                                                          \
      BINARY_ROWS(F_B_##sfx)                                                               \
    default: *ok = false; return x;                                                        \
    }                                                                                      \
  }
#define F_U_f32(ID, id, NAME, DTYPES, GRAIN, FLAGS, F32, GRAD) F_UNARY_CASE_##DTYPES(ID, id, f32)
#define F_U_f64(ID, id, NAME, DTYPES, GRAIN, FLAGS, F32, GRAD) F_UNARY_CASE_##DTYPES(ID, id, f64)
#define F_B_f32(ID, id, NAME, DTYPES, GRAIN, CHECK, FLAGS, GRAD) F_BINARY_CASE_##DTYPES(ID, id, f32)
#define F_B_f64(ID, id, NAME, DTYPES, GRAIN, CHECK, FLAGS, GRAD) F_BINARY_CASE_##DTYPES(ID, id, f64)
F_DEFS(float, f32)
F_DEFS(double, f64)

struct fused_args {
  ts_cu_program p;
  ts_cu_bcast s;
  const void *in[TS_CU_MAX_IN];
};

/* S the stored dtype, T the one computed in (value_of: float for the
 * 16-bit floats, each instruction's result rounded to S as the CPU's
 * fused loops round each op's). */
template <class S>
__global__ void fused_kernel(int64_t n, fused_args a, S *o)
{
  typedef typename value_of<S>::type T;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    T in[TS_CU_MAX_IN], t[TS_CU_FUSED_MAX];
    for (int k = 0; k < a.s.n_in; k++)
      in[k] = value_of<S>::get(((const S *)a.in[k])[offset_of(a.s, k, i)]);
    bool ok = true;
    for (int k = 0; k < a.p.n; k++) {
      const ts_cu_instr c = a.p.code[k];
      T x = c.a >= 0 ? in[c.a] : t[-c.a - 1];
      T y = c.b >= 0 ? in[c.b] : t[-c.b - 1];
      t[k] = instr_of<T>::binary(c.op, x, y, &ok);
      if (!ok) {
        ok = true;
        t[k] = instr_of<T>::unary(c.op, x, &ok);
      }
      t[k] = rounded<S>(t[k]);
    }
    o[i] = store_f64<S>(t[a.p.n - 1]);
  }
}

/* The fusible float rows with a kernel here: those the switches cover. */
#define FUSED_HAS_U_FLOAT(ID) case TS_OP_##ID:
#define FUSED_HAS_U_NUMERIC FUSED_HAS_U_FLOAT
#define FUSED_HAS_U_BOOL(ID)
#define FUSED_HAS_U_PREDICATE(ID)
#define FUSED_HAS_B_FLOAT FUSED_HAS_U_FLOAT
#define FUSED_HAS_B_NUMERIC FUSED_HAS_U_FLOAT
#define FUSED_HAS_B_ALL(ID)
#define FUSED_HAS_B_BOOL(ID)
#define FUSED_HAS_U(ID, id, NAME, DTYPES, GRAIN, FLAGS, F32, GRAD) FUSED_HAS_U_##DTYPES(ID)
#define FUSED_HAS_B(ID, id, NAME, DTYPES, GRAIN, CHECK, FLAGS, GRAD) FUSED_HAS_B_##DTYPES(ID)

extern "C" bool ts__cu_has_fused(ts_op op)
{
  switch (op) {
    UNARY_ROWS(FUSED_HAS_U)
    BINARY_ROWS(FUSED_HAS_B)
    return true;
  default:
    return false;
  }
}

extern "C" bool ts__cu_fused(const ts_cu_program *p, ts_dtype dtype, int64_t n,
                             const ts_cu_bcast *s, const void *const *in, void *out, void *stream)
{
  if (p->n < 1 || p->n > TS_CU_FUSED_MAX || s->n_in > TS_CU_MAX_IN)
    return false;
  for (int k = 0; k < p->n; k++)
    if (!ts__cu_has_fused(p->code[k].op))
      return false;
  fused_args a;
  a.p = *p;
  a.s = *s;
  for (int k = 0; k < s->n_in; k++)
    a.in[k] = in[k];
  if (dtype != TS_F32 && dtype != TS_F64 && dtype != TS_F16 && dtype != TS_BF16)
    return false;
  if (n <= 0)
    return true;
  cudaStream_t st = (cudaStream_t)stream;
  switch (dtype) {
  case TS_F32: fused_kernel<float><<<blocks_for(n), THREADS, 0, st>>>(n, a, (float *)out); break;
  case TS_F64: fused_kernel<double><<<blocks_for(n), THREADS, 0, st>>>(n, a, (double *)out); break;
  case TS_F16: fused_kernel<__half><<<blocks_for(n), THREADS, 0, st>>>(n, a, (__half *)out); break;
  default:
    fused_kernel<__nv_bfloat16><<<blocks_for(n), THREADS, 0, st>>>(n, a, (__nv_bfloat16 *)out);
    break;
  }
  return true;
}
