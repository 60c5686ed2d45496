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
