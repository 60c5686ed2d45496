/* cuda/dtypes.cuh — the dtypes as the CUDA kernels hold them: the C type
 * of each (the 16-bit floats as cuda_fp16.h's __half and cuda_bf16.h's
 * __nv_bfloat16), DISPATCH over them, and the 16-bit floats' conversions
 * as the CPU does them (engine/half.h): widened to float exactly, narrowed
 * from a float or double once, to nearest even (the hardware's cvt.rn), a
 * NaN to the bits the CPU gives it, so that Cast and the rows computed
 * in f32 and rounded back give the CPU's bits. */
#pragma once

#include "kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

/* Runs the statements with T the C type of dtype; `default` returns false
 * (string and variant tensors have no kernels). */
#define DISPATCH(dtype, ...)                                                 \
  switch (dtype) {                                                           \
  case TS_F32: { typedef float T; __VA_ARGS__; } break;                      \
  case TS_F64: { typedef double T; __VA_ARGS__; } break;                     \
  case TS_I32: { typedef int32_t T; __VA_ARGS__; } break;                    \
  case TS_I64: { typedef int64_t T; __VA_ARGS__; } break;                    \
  case TS_U8: { typedef uint8_t T; __VA_ARGS__; } break;                     \
  case TS_BOOL: { typedef bool T; __VA_ARGS__; } break;                      \
  case TS_I8: { typedef int8_t T; __VA_ARGS__; } break;                      \
  case TS_I16: { typedef int16_t T; __VA_ARGS__; } break;                    \
  case TS_U16: { typedef uint16_t T; __VA_ARGS__; } break;                   \
  case TS_U32: { typedef uint32_t T; __VA_ARGS__; } break;                   \
  case TS_U64: { typedef uint64_t T; __VA_ARGS__; } break;                   \
  case TS_F16: { typedef __half T; __VA_ARGS__; } break;                     \
  case TS_BF16: { typedef __nv_bfloat16 T; __VA_ARGS__; } break;             \
  default: return false;                                                     \
  }

/* ---- the 16-bit floats ---------------------------------------------------------- */

/* f16 widened: exact; a NaN is float's default NaN with its sign, as
 * half.h's value (the hardware's would keep no sign). */
__device__ __forceinline__ float widen(__half h)
{
  unsigned short b = __half_as_ushort(h);
  if ((b & 0x7c00) == 0x7c00 && (b & 0x3ff))
    return __uint_as_float((unsigned)(b & 0x8000) << 16 | 0x7fc00000u);
  return __half2float(h);
}

/* bf16 widened: float32's top half (a NaN keeps its payload). */
__device__ __forceinline__ float widen(__nv_bfloat16 h)
{
  return __uint_as_float((unsigned)__bfloat16_as_ushort(h) << 16);
}

/* Narrowing, T the 16-bit float: from a double or a float (exactly a
 * double), rounded once to nearest even.  NaN: f16's quiet NaN with the
 * sign; bf16's from float32's top payload bits, as x86 narrows a double
 * NaN to float and half.h cuts it short. */
template <class T> struct narrow;
template <> struct narrow<__half> {
  static __device__ __forceinline__ __half from(double v)
  {
    if (isnan(v))
      return __ushort_as_half((unsigned short)(signbit(v) ? 0xfe00 : 0x7e00));
    return __double2half(v);
  }
  static __device__ __forceinline__ __half from(float v)
  {
    if (isnan(v)) /* the sign from the float itself */
      return __ushort_as_half((unsigned short)(signbit(v) ? 0xfe00 : 0x7e00));
    return __double2half((double)v);
  }
};
template <> struct narrow<__nv_bfloat16> {
  static __device__ __forceinline__ __nv_bfloat16 from(double v)
  {
    if (isnan(v)) {
      unsigned long long u = (unsigned long long)__double_as_longlong(v);
      return __ushort_as_bfloat16(
        (unsigned short)((u >> 48 & 0x8000) | 0x7fc0 | (u >> 45 & 0x7f)));
    }
    return __double2bfloat16(v);
  }
  static __device__ __forceinline__ __nv_bfloat16 from(float v)
  {
    if (isnan(v))
      return __ushort_as_bfloat16((unsigned short)(__float_as_uint(v) >> 16 | 0x0040));
    return __double2bfloat16((double)v);
  }
};

/* An element as the C number the CPU computes with (ops/cast.c's VALUE):
 * itself, or a 16-bit float widened to float. */
template <class T> struct value_of {
  typedef T type;
  static __device__ __forceinline__ T get(T x) { return x; }
};
template <> struct value_of<__half> {
  typedef float type;
  static __device__ __forceinline__ float get(__half x) { return widen(x); }
};
template <> struct value_of<__nv_bfloat16> {
  typedef float type;
  static __device__ __forceinline__ float get(__nv_bfloat16 x) { return widen(x); }
};

/* A value computed for an element of T (value_of's type), rounded as T
 * holds it: itself, or a 16-bit float rounded and widened again. */
template <class T> __device__ __forceinline__ typename value_of<T>::type
rounded(typename value_of<T>::type v)
{
  return v;
}
template <> __device__ __forceinline__ float rounded<__half>(float v)
{
  return widen(narrow<__half>::from(v));
}
template <> __device__ __forceinline__ float rounded<__nv_bfloat16>(float v)
{
  return widen(narrow<__nv_bfloat16>::from(v));
}

/* A double stored in T as the CPU's ts__store_f64 for float results: a C
 * cast, the 16-bit floats rounded once. */
template <class T> __device__ __forceinline__ T store_f64(double v) { return (T)v; }
template <> __device__ __forceinline__ __half store_f64<__half>(double v)
{
  return narrow<__half>::from(v);
}
template <> __device__ __forceinline__ __nv_bfloat16 store_f64<__nv_bfloat16>(double v)
{
  return narrow<__nv_bfloat16>::from(v);
}
