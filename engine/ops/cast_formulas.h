/* ops/cast_formulas.h — how Cast turns a float into an integer, one
 * source for the CPU loops (ops/cast.c) and the CUDA kernel
 * (backend/cuda/misc.cu).
 *
 * As NumPy's astype, PyTorch's to() and TensorFlow's Cast on a CPU do
 * (each a C cast compiled for x86-64), written without undefined
 * behaviour: truncated toward zero, then wrapped modulo 2^bits, through
 * int32 for the types of 32 bits or fewer but uint32 and through int64
 * for uint32 and int64 (-1.0 gives 255 as uint8, 300.0 gives 44).  A value
 * out of the intermediate's range (NaN, +-inf, 3e9 as int32) gives what
 * the x86 conversion gives, its "integer indefinite" INT_MIN, wrapped in
 * turn: NaN is INT32_MIN as int32 and 0 as int8, as NumPy (which warns of
 * an invalid value there) and TensorFlow give on the CPU.  uint64 takes
 * values from 2^63 on through int64 less 2^63, as the compiled cast does. */
#pragma once

#include "ew_fn.h"

/* v truncated as int32 (cvttsd2si): INT32_MIN where it does not fit */
TS_EW_FN int32_t float_to_i32(double v)
{
  return v > -2147483649.0 && v < 2147483648.0 ? (int32_t)v : INT32_MIN;
}

/* v truncated as int64 (the 64-bit cvttsd2si): INT64_MIN where it does not fit */
TS_EW_FN int64_t float_to_i64(double v)
{
  return v >= -0x1p63 && v < 0x1p63 ? (int64_t)v : INT64_MIN;
}

/* the narrower types wrap the int32, uint32 the int64 (unsigned arithmetic) */
TS_EW_FN uint8_t float_to_u8(double v) { return (uint8_t)(uint32_t)float_to_i32(v); }
TS_EW_FN int8_t float_to_i8(double v) { return (int8_t)(uint8_t)(uint32_t)float_to_i32(v); }
TS_EW_FN int16_t float_to_i16(double v) { return (int16_t)(uint16_t)(uint32_t)float_to_i32(v); }
TS_EW_FN uint16_t float_to_u16(double v) { return (uint16_t)(uint32_t)float_to_i32(v); }
TS_EW_FN uint32_t float_to_u32(double v) { return (uint32_t)(uint64_t)float_to_i64(v); }

TS_EW_FN uint64_t float_to_u64(double v)
{
  return v >= 0x1p63 ? (uint64_t)float_to_i64(v - 0x1p63) ^ UINT64_C(0x8000000000000000)
                     : (uint64_t)float_to_i64(v);
}
