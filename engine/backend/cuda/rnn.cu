/* cuda/rnn.cu — LSTMSequence's cell (ops/rnn.c): a thread per element
 * [b, j] of a step, after the projection x_t W^T + b and the recurrent
 * product h R^T, in the order of the CPU's cell (kernels/lstm.c):
 *   g_k = x_k + hr_k                        (k = i, o, f, c)
 *   i = sigmoid(g_i + p_i . c), f = sigmoid(g_f + p_f . c)
 *   c' = f . c + i . tanh(g_c)
 *   h' = sigmoid(g_o + p_o . c') . tanh(c')
 * with the Sigmoid and Tanh rows' formulas (ops/unary_rows.h). */
#include "kernels.h"

#include <cuda_runtime.h>

#include "launch.cuh"

template <class T> __device__ T sigmoid(T x)
{
  return (T)1 / ((T)1 + exp(-x));
}

template <class T>
__global__ void lstm_cell_kernel(int64_t rows, int64_t h, const T *proj, const T *hr, const T *peep,
                                 const T *c_in, T *c_out, T *h_out, T *h_last)
{
  FOR_EACH(e, rows * h) {
    int64_t b = e / h, j = e % h;
    const T *x = proj + b * 4 * h, *g = hr + b * 4 * h;
    T gi = x[j] + g[j], go = x[h + j] + g[h + j], gf = x[2 * h + j] + g[2 * h + j];
    T gc = x[3 * h + j] + g[3 * h + j];
    T c = c_in[e];
    if (peep) {
      gi = gi + peep[j] * c;
      gf = gf + peep[2 * h + j] * c;
    }
    T cj = sigmoid(gf) * c + sigmoid(gi) * tanh(gc);
    if (peep)
      go = go + peep[h + j] * cj;
    c_out[e] = cj;
    T out = sigmoid(go) * tanh(cj);
    h_out[e] = out;
    if (h_last)
      h_last[e] = out;
  }
}

extern "C" bool ts__cu_lstm_cell(ts_dtype dtype, int64_t rows, int64_t hidden, const void *proj,
                                 const void *hr, const void *peep, const void *c_in, void *c_out,
                                 void *h_out, void *h_last, void *stream)
{
  cudaStream_t s = (cudaStream_t)stream;
  int64_t n = rows * hidden;
  if (dtype != TS_F32 && dtype != TS_F64)
    return false;
  if (n <= 0)
    return true;
  unsigned blocks = blocks_for(n);
  if (dtype == TS_F32)
    lstm_cell_kernel<float><<<blocks, THREADS, 0, s>>>(rows, hidden, (const float *)proj,
                                                        (const float *)hr, (const float *)peep,
                                                        (const float *)c_in, (float *)c_out,
                                                        (float *)h_out, (float *)h_last);
  else
    lstm_cell_kernel<double><<<blocks, THREADS, 0, s>>>(rows, hidden, (const double *)proj,
                                                         (const double *)hr, (const double *)peep,
                                                         (const double *)c_in, (double *)c_out,
                                                         (double *)h_out, (double *)h_last);
  return true;
}
