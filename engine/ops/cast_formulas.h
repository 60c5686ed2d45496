/* ops/cast_formulas.h — how Cast turns a float into an integer, one
 * source for the CPU loops (ops/cast.c) and the CUDA kernel
 * (backend/cuda/misc.cu): truncated toward zero and saturated, NaN giving
 * 0, so that no value is undefined behaviour on either. */
#pragma once

#include "ew_fn.h"

TS_EW_FN int32_t saturate_i32(double v)
{
  return isnan(v) ? 0 : v <= INT32_MIN ? INT32_MIN : v >= INT32_MAX ? INT32_MAX : (int32_t)v;
}

TS_EW_FN int64_t saturate_i64(double v)
{
  return isnan(v) ? 0 : v <= -0x1p63 ? INT64_MIN : v >= 0x1p63 ? INT64_MAX : (int64_t)v;
}

TS_EW_FN uint8_t saturate_u8(double v)
{
  return isnan(v) ? 0 : v <= 0 ? 0 : v >= UINT8_MAX ? UINT8_MAX : (uint8_t)v;
}

TS_EW_FN int8_t saturate_i8(double v)
{
  return isnan(v) ? 0 : v <= INT8_MIN ? INT8_MIN : v >= INT8_MAX ? INT8_MAX : (int8_t)v;
}

TS_EW_FN int16_t saturate_i16(double v)
{
  return isnan(v) ? 0 : v <= INT16_MIN ? INT16_MIN : v >= INT16_MAX ? INT16_MAX : (int16_t)v;
}

TS_EW_FN uint16_t saturate_u16(double v)
{
  return isnan(v) ? 0 : v <= 0 ? 0 : v >= UINT16_MAX ? UINT16_MAX : (uint16_t)v;
}

TS_EW_FN uint32_t saturate_u32(double v)
{
  return isnan(v) ? 0 : v <= 0 ? 0 : v >= UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

TS_EW_FN uint64_t saturate_u64(double v)
{
  return isnan(v) ? 0 : v <= 0 ? 0 : v >= 0x1p64 ? UINT64_MAX : (uint64_t)v;
}
