/* ops/rnn.c — LSTMSequence: a whole LSTM direction in one op, as ONNX's LSTM
 * computes it with its default activations (engine/io/onnx_rnn.c lowers
 * it here): per step, the recurrent product h R^T (kernels/gemm.c) and the
 * cell (kernels/lstm.c), with no op, split or executor step between them.
 * Batch rows are independent, so blocks of them run the whole sequence
 * each on the pool; f32 products run on our tiles, which compute each row
 * as in a product of fewer rows, so every thread count gives the same bits. */
#include "engine-private.h"
#include "kernels/kernels.h"
#ifdef TS_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/kernels.h"
#endif

#include <inttypes.h>
#include <string.h>

#define ATTRS(a) .n_attrs = (int)(sizeof(a) / sizeof((a)[0])), .attrs = (a)

enum { ATTR_REVERSE };

static const ts_attr_def lstm_attrs[] = {
  [ATTR_REVERSE] = { "reverse", TS_ATTR_BOOL },
};

/* A block of batch rows is worth a thread from this many multiply-adds of
 * its products on (counted in double: no overflow). */
#define LSTM_GRAIN (INT64_C(1) << 17)

static bool dims_fit(int64_t a, int64_t b)
{
  return a < 0 || b < 0 || a == b;
}

/* x [S, B, I], w [I, 4H] (W^T, gate blocks i, o, f, c), r [H, 4H] (R^T),
 * b [4H] (Wb + Rb), h0 and c0 [B, H], peepholes [3, H] (i, o, f) or none
 * -> y [S, B, H], h and c [B, H] (the last step's). */
enum { IN_X, IN_W, IN_R, IN_B, IN_H0, IN_C0, IN_P };

static bool lstm_infer(ts_infer_ctx *c)
{
  if (c->n_in > 7)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "takes x, w, r, b, h0, c0 and peepholes, got %d inputs",
                          c->n_in);
  for (int i = 0; i < c->n_in; i++)
    if ((c->in[i].dtype != TS_F32 && c->in[i].dtype != TS_F64) || c->in[i].dtype != c->in[0].dtype) {
      char s[TS_INFO_STR];
      return ts__infer_fail(c, TS_ERR_DTYPE, "takes f32 or f64 inputs of one dtype, got %s for input %d",
                            ts__info_str(s, c->in[i].dtype, c->in[i].shape), i);
    }
  static const int RANKS[] = { 3, 2, 2, 1, 2, 2, 2 };
  bool fit = true;
  for (int i = 0; i < c->n_in; i++)
    fit = fit && c->in[i].shape.rank == RANKS[i];
  const ts_shape *x = &c->in[IN_X].shape, *w = &c->in[IN_W].shape, *r = &c->in[IN_R].shape;
  int64_t steps = fit ? x->dim[0] : -1, batch = -1, hidden = -1, gates = -1;
  if (fit) {
    /* each size from the first input that knows it, then every input checked against it */
    int64_t batches[] = { x->dim[1], c->in[IN_H0].shape.dim[0], c->in[IN_C0].shape.dim[0] };
    int64_t hiddens[] = { r->dim[0], c->in[IN_H0].shape.dim[1], c->in[IN_C0].shape.dim[1] };
    int64_t gate_dims[] = { w->dim[1], r->dim[1], c->in[IN_B].shape.dim[0] };
    for (int i = 0; i < 3; i++) {
      batch = batch >= 0 ? batch : batches[i];
      hidden = hidden >= 0 ? hidden : hiddens[i];
      gates = gates >= 0 ? gates : gate_dims[i];
    }
    if (hidden < 0 && gates >= 0)
      hidden = gates / 4;
    for (int i = 0; i < 3; i++)
      fit = fit && dims_fit(batches[i], batch) && dims_fit(hiddens[i], hidden) && dims_fit(gate_dims[i], gates);
    fit = fit && (gates < 0 || hidden < 0 || gates == 4 * hidden) && dims_fit(w->dim[0], x->dim[2]);
    if (c->n_in == 7)
      fit = fit && dims_fit(c->in[IN_P].shape.dim[0], 3) && dims_fit(c->in[IN_P].shape.dim[1], hidden);
  }
  if (!fit) {
    static const char *const NAMES[] = { "x", "w", "r", "b", "h0", "c0", "peepholes" };
    char msg[8 * (TS_INFO_STR + 16)] = "";
    for (int i = 0; i < c->n_in; i++) {
      char si[TS_INFO_STR];
      g_strlcat(msg, i ? ", " : "", sizeof msg);
      g_strlcat(msg, NAMES[i], sizeof msg);
      g_strlcat(msg, " ", sizeof msg);
      g_strlcat(msg, ts__info_str(si, c->in[i].dtype, c->in[i].shape), sizeof msg);
    }
    return ts__infer_fail(c, TS_ERR_SHAPE, "expected x [S, B, I], w [I, 4H], r [H, 4H], b [4H], h0 and c0 "
                          "[B, H], peepholes [3, H]: %s", msg);
  }
  ts_dtype dt = c->in[0].dtype;
  c->out[0] = (ts_info){ dt, TS_SHAPE(steps, batch, hidden) };
  c->out[1] = c->out[2] = (ts_info){ dt, TS_SHAPE(batch, hidden) };
  return true;
}

typedef struct lstm_run {
  const ts_tensor *x, *w, *r, *b, *h0, *c0, *peep;
  ts_tensor *y, *h, *c;
  int64_t steps, batch, input, hidden, parts;
  bool reverse;
  int failed; /* atomic: a block could not get its scratch */
} lstm_run;

/* Block `part` of the batch rows through every step: its rows' projection
 * x_t W^T + b and recurrence h R^T, then the cell. */
static void lstm_block(void *ctx, int64_t part)
{
  const lstm_run *run = ctx;
  int64_t b0 = part * run->batch / run->parts, b1 = (part + 1) * run->batch / run->parts;
  int64_t rows = b1 - b0, h = run->hidden;
  bool f32 = run->x->dtype == TS_F32;
  size_t es = f32 ? sizeof(float) : sizeof(double);
  char *gates = run->steps ? g_try_malloc((size_t)(2 * rows * 4 * h) * es) : NULL, *proj = NULL;
  if (run->steps && !gates) {
    __atomic_store_n(&((lstm_run *)ctx)->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  if (gates)
    proj = gates + (size_t)(rows * 4 * h) * es;
#define AT(t, row, width) ((char *)(t)->data + (size_t)((row) * (width)) * es)
  memcpy(AT(run->c, b0, h), AT(run->c0, b0, h), (size_t)(rows * h) * es);
  const void *prev = AT(run->h0, b0, h);
  for (int64_t k = 0; k < run->steps; k++) {
    int64_t t = run->reverse ? run->steps - 1 - k : k;
    ts_gemm xw = { rows, 4 * h, run->input, false, false, AT(run->x, t * run->batch + b0, run->input),
                   run->w->data, run->b->data, proj, TS_ACT_NONE };
    ts_gemm hr = { rows, 4 * h, h, false, false, prev, run->r->data, NULL, gates, TS_ACT_NONE };
    ts_lstm_cell cell = { rows, h, gates, proj, AT(run->c, b0, h), AT(run->y, t * run->batch + b0, h),
                          run->peep ? run->peep->data : NULL };
    if (f32) {
      ts__gemm_f32_with(ts__tile_best(), &xw);
      ts__gemm_f32_with(ts__tile_best(), &hr);
      ts__lstm_cell_f32(&cell);
    } else {
      ts__gemm_f64(&xw);
      ts__gemm_f64(&hr);
      ts__lstm_cell_f64(&cell);
    }
    prev = cell.h;
  }
  memcpy(AT(run->h, b0, h), prev, (size_t)(rows * h) * es);
#undef AT
  g_free(gates);
}

static bool lstm_cpu(ts_kernel_ctx *k)
{
  lstm_run run = {
    .x = k->in[IN_X], .w = k->in[IN_W], .r = k->in[IN_R], .b = k->in[IN_B], .h0 = k->in[IN_H0],
    .c0 = k->in[IN_C0], .peep = k->n_in == 7 ? k->in[IN_P] : NULL, .y = k->out[0], .h = k->out[1],
    .c = k->out[2], .steps = k->out[0]->shape.dim[0], .batch = k->out[0]->shape.dim[1],
    .input = k->in[IN_X]->shape.dim[2], .hidden = k->out[0]->shape.dim[2],
    .reverse = k->attrs[ATTR_REVERSE].b,
  };
  if (run.batch == 0 || run.hidden == 0)
    return true;
  /* blocks by the work and the pool's width; f64 in one (its products may
   * be OpenBLAS's, whose rows depend on the block) */
  double blocks = (double)run.steps * (double)run.batch * 4 * (double)run.hidden *
                  ((double)run.hidden + (double)run.input) / LSTM_GRAIN;
  run.parts = run.x->dtype == TS_F32 ? (int64_t)MAX(1, MIN(MIN(run.batch, ts__pool_width()), blocks)) : 1;
  if (run.parts > 1)
    ts__parallel_for(run.parts, lstm_block, &run);
  else
    lstm_block(&run, 0);
  if (run.failed)
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "cannot allocate the gates of %" PRId64 " batch rows",
                           run.batch);
  return true;
}

#ifdef TS_HAVE_CUDA
/* On CUDA, all on the stream (capturable): the projection x W^T + b of
 * every step as one product into a scratch buffer, then per step the
 * recurrent product h R^T and the cell (cuda/rnn.cu), which reads c0 at
 * the first step and writes the last step's h beside y.  An input of
 * width 0 stays on the CPU (ts__cuda_op_supported). */
static bool lstm_cuda(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[IN_X], *peep = k->n_in == 7 ? k->in[IN_P] : NULL;
  ts_tensor *y = k->out[0], *hn = k->out[1], *cn = k->out[2];
  int64_t steps = y->shape.dim[0], batch = y->shape.dim[1], h = y->shape.dim[2];
  size_t es = ts_dtype_size(x->dtype), state = (size_t)(batch * h) * es;
  if (batch == 0 || h == 0)
    return true;
  if (steps == 0)
    return ts__cuda_copy_2d(k->backend, hn->data, state, k->in[IN_H0]->data, state, state, 1) &&
           ts__cuda_copy_2d(k->backend, cn->data, state, k->in[IN_C0]->data, state, state, 1);
  size_t bytes;
  if (__builtin_mul_overflow((size_t)(steps + 1), (size_t)(4 * batch * h) * es, &bytes))
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "the gates of %" PRId64 " steps overflow", steps);
  ts_buffer *scratch = ts_buffer_alloc(ts_backend_buffer_type(k->backend), bytes, TS_BUFFER_USAGE_SCRATCH);
  if (!scratch) {
    ts_error *why = ts_error_take(); /* the op's error says it */
    bool ok = ts__kernel_fail(k, TS_ERR_NO_MEMORY, "LSTM gates scratch: %s",
                              why && why->detail ? why->detail : "out of memory");
    ts_error_free(why);
    return ok;
  }
  char *proj = ts_buffer_base(scratch), *hr = proj + (size_t)(steps * batch * 4 * h) * es;
  void *stream = ts__cuda_stream(k->backend);
  ts_cu_gemm xw = { .dtype = x->dtype, .m = steps * batch, .n = 4 * h, .k = x->shape.dim[2], .batch = 1,
                    .a = x->data, .b = k->in[IN_W]->data, .bias = k->in[IN_B]->data, .c = proj };
  bool ok = ts__cuda_gemm(&xw, stream);
  const void *prev = k->in[IN_H0]->data;
  for (int64_t s = 0; ok && s < steps; s++) {
    int64_t t = k->attrs[ATTR_REVERSE].b ? steps - 1 - s : s;
    char *yt = (char *)y->data + (size_t)(t * batch * h) * es;
    ts_cu_gemm rec = { .dtype = x->dtype, .m = batch, .n = 4 * h, .k = h, .batch = 1,
                       .a = prev, .b = k->in[IN_R]->data, .c = hr };
    ok = ts__cuda_gemm(&rec, stream) &&
         ts__cu_lstm_cell(x->dtype, batch, h, proj + (size_t)(t * batch * 4 * h) * es, hr,
                          peep ? peep->data : NULL, s ? cn->data : k->in[IN_C0]->data, cn->data, yt,
                          s == steps - 1 ? hn->data : NULL, stream);
    prev = yt;
  }
  ts_buffer_free(scratch); /* stream-ordered: after the steps */
  return ok;
}
#endif

/* Through the tracer's (ts_tape_grads: trace/tape_rnn.c). */
static bool lstm_grad(const ts_op_call *call, ts_tensor *const *out, ts_tensor *const *g,
                      ts_tensor **gi)
{
  ts_grad_fn fn = __atomic_load_n(&ts__tape_grads.lstm_sequence_grad, __ATOMIC_ACQUIRE);
  if (!fn) {
    ts_error_set(TS_ERR_UNIMPLEMENTED, call->loc, call->def->name, "no gradient is defined for it");
    return false;
  }
  return fn(call, out, g, gi);
}

const ts_op_def ts__op_lstm_sequence = {
  .op = TS_OP_LSTM_SEQUENCE, .name = "LSTMSequence", .api_name = "lstm_sequence",
  .n_inputs = -1, .min_inputs = 6, .n_outputs = 3, ATTRS(lstm_attrs),
  .infer = lstm_infer, .kernel[TS_DEVICE_CPU] = lstm_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(lstm_cuda), .grad = lstm_grad,
};

bool ts_lstm_sequence_at(ts_loc loc, ts_tensor *x, ts_tensor *w, ts_tensor *r, ts_tensor *b, ts_tensor *h0,
                         ts_tensor *c0, ts_tensor *peepholes, bool reverse, ts_tensor **y, ts_tensor **h,
                         ts_tensor **c)
{
  ts_tensor *in[] = { x, w, r, b, h0, c0, peepholes }, *out[3] = { NULL, NULL, NULL };
  ts_attr attrs[] = { TS_ATTR_B(reverse) };
  bool ok = ts__dispatch(loc, TS_OP_LSTM_SEQUENCE, in, peepholes ? 7 : 6, attrs, out) == 3;
  if (y)
    *y = out[0];
  if (h)
    *h = out[1];
  if (c)
    *c = out[2];
  return ok;
}
