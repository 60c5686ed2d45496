/* lstm.c — one LSTM step over a block of batch rows, after the recurrent
 * product: what ONNX's LSTM computes (default activations), in the order
 * the unfused ops of engine/io/onnx_rnn.c compute it, so that each element
 * gets the same bits:
 *   g_k = x_k + hr_k                        (k = i, o, f, c)
 *   i = sigmoid(g_i + p_i . c), f = sigmoid(g_f + p_f . c)
 *   c' = f . c + i . tanh(g_c)
 *   h' = sigmoid(g_o + p_o . c') . tanh(c')
 * f32 runs vmath's sigmoid and tanh (as the Sigmoid and Tanh rows do),
 * f64 libm's formulas (as theirs do). */
#include "kernels.h"

#include <math.h>

void ts__lstm_cell_f32(const ts_lstm_cell *s)
{
  int64_t h = s->hidden;
  for (int64_t b = 0; b < s->rows; b++) {
    float *g = (float *)s->gates + b * 4 * h;
    const float *x = (const float *)s->x + b * 4 * h;
    float *c = (float *)s->c + b * h, *out = (float *)s->h + b * h;
    const float *p = s->peep;
    for (int64_t j = 0; j < 4 * h; j++)
      g[j] = x[j] + g[j];
    if (p)
      for (int64_t j = 0; j < h; j++) {
        g[j] = g[j] + p[j] * c[j];
        g[2 * h + j] = g[2 * h + j] + p[2 * h + j] * c[j];
      }
    ts__vsigmoid_f32(g, g, p ? h : 3 * h); /* i (o, f) */
    if (p)
      ts__vsigmoid_f32(g + 2 * h, g + 2 * h, h);
    ts__vtanh_f32(g + 3 * h, g + 3 * h, h);
    for (int64_t j = 0; j < h; j++)
      c[j] = g[2 * h + j] * c[j] + g[j] * g[3 * h + j];
    if (p) {
      for (int64_t j = 0; j < h; j++)
        g[h + j] = g[h + j] + p[h + j] * c[j];
      ts__vsigmoid_f32(g + h, g + h, h);
    }
    ts__vtanh_f32(c, out, h);
    for (int64_t j = 0; j < h; j++)
      out[j] = g[h + j] * out[j];
  }
}

static double sigmoid(double x)
{
  return 1 / (1 + exp(-x));
}

void ts__lstm_cell_f64(const ts_lstm_cell *s)
{
  int64_t h = s->hidden;
  for (int64_t b = 0; b < s->rows; b++) {
    double *g = (double *)s->gates + b * 4 * h;
    const double *x = (const double *)s->x + b * 4 * h;
    double *c = (double *)s->c + b * h, *out = (double *)s->h + b * h;
    const double *p = s->peep;
    for (int64_t j = 0; j < h; j++) {
      double gi = x[j] + g[j], go = x[h + j] + g[h + j], gf = x[2 * h + j] + g[2 * h + j];
      double gc = x[3 * h + j] + g[3 * h + j];
      if (p) {
        gi = gi + p[j] * c[j];
        gf = gf + p[2 * h + j] * c[j];
      }
      double cj = sigmoid(gf) * c[j] + sigmoid(gi) * tanh(gc);
      if (p)
        go = go + p[h + j] * cj;
      c[j] = cj;
      out[j] = sigmoid(go) * tanh(cj);
    }
  }
}
