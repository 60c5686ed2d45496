/* cuda/conv.cu — the windows of Conv2D and MaxPool over NHWC inputs:
 * im2col (each output position's patch as one row of a [rows, kh*kw*c]
 * matrix, zeros where the window hangs over the padding), which
 * cuda/gemm.c multiplies by the HWIO filter, and max pooling (the window's
 * largest element inside the input; NaN wins, as on the CPU), and their
 * gradients (Conv2DBackpropInput, Conv2DBackpropFilter, MaxPoolGrad):
 * each output element gathers its terms and sums them in f64, as the CPU
 * loops do, so no atomics and the same sums on every run; and
 * ConvTranspose's col2im, over the columns cuda/gemm.c made. */
#include "kernels.h"

#include <cuda_runtime.h>
#include <math.h>

#include "launch.cuh"

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
  case TS_I8: max_pool_kernel<int8_t><<<blocks_for(n), THREADS, 0, s>>>(*g, (const int8_t *)x, (int8_t *)y); break;
  case TS_I16: max_pool_kernel<int16_t><<<blocks_for(n), THREADS, 0, s>>>(*g, (const int16_t *)x, (int16_t *)y); break;
  case TS_U16: max_pool_kernel<uint16_t><<<blocks_for(n), THREADS, 0, s>>>(*g, (const uint16_t *)x, (uint16_t *)y); break;
  default: return false;
  }
  return true;
}

/* The first of the windows covering cell i (and past the last): the
 * windows whose rows [o * s - pad, o * s - pad + k) hold i, clipped to
 * [0, out). */
__device__ __forceinline__ void covering(int64_t i, int64_t k, int64_t st, int64_t pad,
                                         int64_t out, int64_t *first, int64_t *end)
{
  int64_t lo = i + pad - k + 1; /* o * st >= lo */
  int64_t a = lo <= 0 ? 0 : (lo + st - 1) / st;
  int64_t b = (i + pad) / st + 1; /* o * st <= i + pad */
  *first = a;
  *end = b < out ? b : out;
}

template <class T>
__global__ void max_pool_grad_kernel(ts_cu_window g, const T *x, const T *y, const T *dy, T *dx)
{
  int64_t n = g.n * g.h * g.w * g.c;
  FOR_EACH(idx, n)
  {
    int64_t ch = idx % g.c, cx = (idx / g.c) % g.w, cy = (idx / (g.c * g.w)) % g.h;
    int64_t b = idx / (g.c * g.w * g.h);
    int64_t oy0, oy1, ox0, ox1;
    covering(cy, g.kh, g.sh, g.top, g.oh, &oy0, &oy1);
    covering(cx, g.kw, g.sw, g.left, g.ow, &ox0, &ox1);
    double acc = 0;
    for (int64_t oy = oy0; oy < oy1; oy++)
      for (int64_t ox = ox0; ox < ox1; ox++) {
        int64_t at = ((b * g.oh + oy) * g.ow + ox) * g.c + ch, from = -1;
        T best = y[at];
        int64_t y0 = oy * g.sh - g.top, x0 = ox * g.sw - g.left;
        for (int64_t iy = y0 < 0 ? 0 : y0; from < 0 && iy < y0 + g.kh && iy < g.h; iy++)
          for (int64_t ix = x0 < 0 ? 0 : x0; from < 0 && ix < x0 + g.kw && ix < g.w; ix++) {
            int64_t cell = ((b * g.h + iy) * g.w + ix) * g.c + ch;
            T v = x[cell];
            if (v == best || (is_nan(v) && is_nan(best)))
              from = cell;
          }
        if (from == idx)
          acc += (double)dy[at];
      }
    dx[idx] = (T)acc;
  }
}

template <class T>
__global__ void conv_backprop_input_kernel(ts_cu_window g, int64_t o, const T *f, const T *dy,
                                           T *dx)
{
  int64_t n = g.n * g.h * g.w * g.c;
  FOR_EACH(idx, n)
  {
    int64_t c = idx % g.c, cx = (idx / g.c) % g.w, cy = (idx / (g.c * g.w)) % g.h;
    int64_t b = idx / (g.c * g.w * g.h);
    int64_t oy0, oy1, ox0, ox1;
    covering(cy, g.kh, g.sh, g.top, g.oh, &oy0, &oy1);
    covering(cx, g.kw, g.sw, g.left, g.ow, &ox0, &ox1);
    double acc = 0;
    for (int64_t oy = oy0; oy < oy1; oy++)
      for (int64_t ox = ox0; ox < ox1; ox++) {
        int64_t ky = cy - (oy * g.sh - g.top), kx = cx - (ox * g.sw - g.left);
        const T *frow = f + ((ky * g.kw + kx) * g.c + c) * o;
        const T *drow = dy + ((b * g.oh + oy) * g.ow + ox) * o;
        for (int64_t k = 0; k < o; k++)
          acc += (double)frow[k] * (double)drow[k];
      }
    dx[idx] = (T)acc;
  }
}

/* A block per filter element (striding over them by the grid, as
 * FOR_EACH_ROW), its threads striding over the output positions and
 * summing in shared memory. */
template <class T>
__global__ void conv_backprop_filter_kernel(ts_cu_window g, int64_t o, const T *x, const T *dy,
                                            T *df, int64_t n)
{
  __shared__ double part[THREADS];
  FOR_EACH_ROW(idx, n) {
    int64_t k = idx % o, c = (idx / o) % g.c, kx = (idx / (o * g.c)) % g.kw;
    int64_t ky = idx / (o * g.c * g.kw);
    int64_t positions = g.n * g.oh * g.ow;
    double acc = 0;
    for (int64_t p = threadIdx.x; p < positions; p += blockDim.x) {
      int64_t ox = p % g.ow, oy = (p / g.ow) % g.oh, b = p / (g.ow * g.oh);
      int64_t iy = oy * g.sh - g.top + ky, ix = ox * g.sw - g.left + kx;
      if (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w)
        acc += (double)x[((b * g.h + iy) * g.w + ix) * g.c + c] * (double)dy[p * o + k];
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
      if (threadIdx.x < w)
        part[threadIdx.x] += part[threadIdx.x + w];
      __syncthreads();
    }
    if (threadIdx.x == 0)
      df[idx] = (T)part[0];
    __syncthreads(); /* part is the next element's */
  }
}

#define FLOATS(dtype, ...)                                  \
  switch (dtype) {                                          \
  case TS_F32: { typedef float T; __VA_ARGS__; } break;     \
  case TS_F64: { typedef double T; __VA_ARGS__; } break;    \
  default: return false;                                    \
  }

extern "C" bool ts__cu_max_pool_grad(ts_dtype dtype, const ts_cu_window *g, const void *x,
                                     const void *y, const void *dy, void *dx, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int64_t n = g->n * g->h * g->w * g->c;
  FLOATS(dtype, if (n > 0) max_pool_grad_kernel<T><<<blocks_for(n), THREADS, 0, s>>>(
                  *g, (const T *)x, (const T *)y, (const T *)dy, (T *)dx))
  return true;
}

extern "C" bool ts__cu_conv_backprop_input(ts_dtype dtype, const ts_cu_window *g, int64_t o,
                                           const void *f, const void *dy, void *dx, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int64_t n = g->n * g->h * g->w * g->c;
  FLOATS(dtype, if (n > 0) conv_backprop_input_kernel<T><<<blocks_for(n), THREADS, 0, s>>>(
                  *g, o, (const T *)f, (const T *)dy, (T *)dx))
  return true;
}

extern "C" bool ts__cu_conv_backprop_filter(ts_dtype dtype, const ts_cu_window *g, int64_t o,
                                            const void *x, const void *dy, void *df, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int64_t n = g->kh * g->kw * g->c * o;
  FLOATS(dtype, if (n > 0) conv_backprop_filter_kernel<T><<<blocks_for_rows(n), THREADS, 0, s>>>(
                  *g, o, (const T *)x, (const T *)dy, (T *)df, n))
  return true;
}

/* ConvTranspose's col2im, gathering: each output element of the chunk's
 * images is its channel's bias (or 0) plus its column entries, one per
 * tap that lands on it from an input pixel, added in the taps' order as
 * the CPU's scatter adds them (no atomics, the same sums on every run). */
template <class T>
__global__ void col2im_kernel(ts_cu_col2im g, const T *col, const T *bias, T *y)
{
  int64_t taps = g.k[0] * g.k[1] * g.k[2], pixels = g.in[0] * g.in[1] * g.in[2];
  int64_t out_pixels = g.out[0] * g.out[1] * g.out[2], m = g.group * g.mg;
  int64_t n = g.n * m * out_pixels;
  FOR_EACH(idx, n)
  {
    int64_t o[3] = { (idx / (g.out[2] * g.out[1])) % g.out[0], (idx / g.out[2]) % g.out[1],
                     idx % g.out[2] };
    int64_t ch = (idx / out_pixels) % m, b = idx / (out_pixels * m);
    T acc = bias ? bias[ch] : (T)0;
    if (col) {
      /* the rows [mg * taps, pixels] of image b's group, this channel's taps */
      const T *rows = col + ((b * g.group + ch / g.mg) * g.mg + ch % g.mg) * taps * pixels;
      for (int64_t k0 = 0; k0 < g.k[0]; k0++) {
        int64_t v0 = o[0] + g.p[0] - k0 * g.d[0]; /* = i0 * s0 */
        if (v0 < 0 || v0 % g.s[0] || v0 / g.s[0] >= g.in[0])
          continue;
        for (int64_t k1 = 0; k1 < g.k[1]; k1++) {
          int64_t v1 = o[1] + g.p[1] - k1 * g.d[1];
          if (v1 < 0 || v1 % g.s[1] || v1 / g.s[1] >= g.in[1])
            continue;
          for (int64_t k2 = 0; k2 < g.k[2]; k2++) {
            int64_t v2 = o[2] + g.p[2] - k2 * g.d[2];
            if (v2 < 0 || v2 % g.s[2] || v2 / g.s[2] >= g.in[2])
              continue;
            int64_t t = (k0 * g.k[1] + k1) * g.k[2] + k2;
            int64_t pixel = (v0 / g.s[0] * g.in[1] + v1 / g.s[1]) * g.in[2] + v2 / g.s[2];
            acc += rows[t * pixels + pixel];
          }
        }
      }
    }
    y[idx] = acc;
  }
}

extern "C" bool ts__cu_col2im(ts_dtype dtype, const ts_cu_col2im *g, const void *col,
                              const void *bias, void *y, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int64_t n = g->n * g->group * g->mg * g->out[0] * g->out[1] * g->out[2];
  FLOATS(dtype, if (n > 0) col2im_kernel<T><<<blocks_for(n), THREADS, 0, s>>>(
                  *g, (const T *)col, (const T *)bias, (T *)y))
  return true;
}
