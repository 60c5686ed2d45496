/* ops/widen.c — the float16 and bfloat16 operands of a kernel that
 * computes in float32 (MatMul, Conv2D, ConvTranspose): widened (exactly)
 * into one buffer with room for the float32 result, which is rounded back
 * to the 16-bit dtype once. */
#include "engine-private.h"

bool ts__widen_f32(ts_dtype dt, int n, const void *const *src, const int64_t *size, int64_t out_size,
                   ts_widened *w)
{
  int64_t total = out_size;
  for (int i = 0; i < n; i++)
    total += src[i] ? size[i] : 0;
  *w = (ts_widened){ .buf = g_try_malloc_n((gsize)MAX(total, 1), sizeof(float)) };
  if (!w->buf)
    return false;
  float *at = w->buf;
  for (int i = 0; i < n; i++) {
    if (!src[i])
      continue;
    w->in[i] = at;
    if (dt == TS_F16)
      for (int64_t j = 0; j < size[i]; j++)
        at[j] = ts__f16_to_f32(((const ts_f16 *)src[i])[j]);
    else
      for (int64_t j = 0; j < size[i]; j++)
        at[j] = ts__bf16_to_f32(((const ts_bf16 *)src[i])[j]);
    at += size[i];
  }
  w->out = at;
  return true;
}

void ts__narrow_f32(ts_dtype dt, void *dst, const float *src, int64_t n)
{
  if (dt == TS_F16)
    for (int64_t i = 0; i < n; i++)
      ((ts_f16 *)dst)[i] = ts__f64_to_f16(src[i]);
  else
    for (int64_t i = 0; i < n; i++)
      ((ts_bf16 *)dst)[i] = ts__f64_to_bf16(src[i]);
}
