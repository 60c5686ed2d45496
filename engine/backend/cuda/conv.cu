/* cuda/conv.cu — the windows of Conv2D and MaxPool over NHWC inputs:
 * im2col (each output position's patch as one row of a [rows, kh*kw*c]
 * matrix, zeros where the window hangs over the padding), which
 * cuda/gemm.c multiplies by the HWIO filter, and max pooling (the window's
 * largest element inside the input; NaN wins, as on the CPU). */
#include "kernels.h"

#include <cuda_runtime.h>
#include <math.h>

#define THREADS 256

static unsigned blocks_for(int64_t n)
{
  int64_t b = (n + THREADS - 1) / THREADS;
  return (unsigned)(b < 65535 * 32 ? (b > 0 ? b : 1) : 65535 * 32);
}

#define FOR_EACH(i, n)                                                            \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);      \
       i += (int64_t)gridDim.x * blockDim.x)

template <class T>
__global__ void im2col_kernel(ts_cu_window g, const T *x, T *col)
{
  int64_t patch = g.kh * g.kw * g.c, n = g.n * g.oh * g.ow * patch;
  FOR_EACH(idx, n)
  {
    int64_t r = idx / patch, q = idx - r * patch;
    int64_t ch = q % g.c, j = (q / g.c) % g.kw, i = q / (g.c * g.kw);
    int64_t ox = r % g.ow, oy = (r / g.ow) % g.oh, b = r / (g.ow * g.oh);
    int64_t iy = oy * g.sh + i - g.top, ix = ox * g.sw + j - g.left;
    col[idx] = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w ? x[((b * g.h + iy) * g.w + ix) * g.c + ch]
                                                          : (T)0;
  }
}

template <class T> __device__ __forceinline__ bool is_nan(T v) { return v != v; }

template <class T>
__global__ void max_pool_kernel(ts_cu_window g, const T *x, T *y)
{
  int64_t n = g.n * g.oh * g.ow * g.c;
  FOR_EACH(idx, n)
  {
    int64_t ch = idx % g.c, ox = (idx / g.c) % g.ow, oy = (idx / (g.c * g.ow)) % g.oh;
    int64_t b = idx / (g.c * g.ow * g.oh);
    int64_t y0 = oy * g.sh - g.top, x0 = ox * g.sw - g.left;
    int64_t ya = y0 > 0 ? y0 : 0, yb = y0 + g.kh < g.h ? y0 + g.kh : g.h;
    int64_t xa = x0 > 0 ? x0 : 0, xb = x0 + g.kw < g.w ? x0 + g.kw : g.w;
    T m = x[((b * g.h + ya) * g.w + xa) * g.c + ch];
    for (int64_t iy = ya; iy < yb; iy++)
      for (int64_t ix = xa; ix < xb; ix++) {
        T v = x[((b * g.h + iy) * g.w + ix) * g.c + ch];
        if (v > m || is_nan(v))
          m = v;
      }
    y[idx] = m;
  }
}

extern "C" bool ts__cu_im2col(ts_dtype dtype, const ts_cu_window *g, const void *x, void *col,
                              void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  if (dtype == TS_F32)
    im2col_kernel<float><<<blocks_for(g->n * g->oh * g->ow * g->kh * g->kw * g->c), THREADS, 0,
                           s>>>(*g, (const float *)x, (float *)col);
  else if (dtype == TS_F64)
    im2col_kernel<double><<<blocks_for(g->n * g->oh * g->ow * g->kh * g->kw * g->c), THREADS, 0,
                            s>>>(*g, (const double *)x, (double *)col);
  else
    return false;
  return true;
}

extern "C" bool ts__cu_max_pool(ts_dtype dtype, const ts_cu_window *g, const void *x, void *y,
                                void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int64_t n = g->n * g->oh * g->ow * g->c;
  if (n <= 0)
    return true;
  switch (dtype) {
  case TS_F32: max_pool_kernel<float><<<blocks_for(n), THREADS, 0, s>>>(*g, (const float *)x, (float *)y); break;
  case TS_F64: max_pool_kernel<double><<<blocks_for(n), THREADS, 0, s>>>(*g, (const double *)x, (double *)y); break;
  case TS_I32: max_pool_kernel<int32_t><<<blocks_for(n), THREADS, 0, s>>>(*g, (const int32_t *)x, (int32_t *)y); break;
  case TS_I64: max_pool_kernel<int64_t><<<blocks_for(n), THREADS, 0, s>>>(*g, (const int64_t *)x, (int64_t *)y); break;
  case TS_U8: max_pool_kernel<uint8_t><<<blocks_for(n), THREADS, 0, s>>>(*g, (const uint8_t *)x, (uint8_t *)y); break;
  default: return false;
  }
  return true;
}
