/* trace/tape_rnn.c — the gradient of LSTMSequence (ops/rnn.c): its steps
 * run again as the unfused ops under a tape of their own, whose gradient
 * is the op's.  Reached from the row's ts_grad_fn through ts__tape_grads,
 * as the tracer sits above the ops. */
#include "trace-private.h"

/* The op's inputs, as ops/rnn.c orders them. */
enum { IN_X, IN_W, IN_R, IN_B, IN_H0, IN_C0, IN_P };

/* One step of the sequence as the unfused ops compute it (the cell's
 * formula, kernels/lstm.c), for the gradient. */
static void lstm_step_ops(ts_loc loc, ts_tensor *xt, ts_tensor *const *in, ts_tensor *const *peep,
                          ts_tensor **h, ts_tensor **c)
{
  ts_tensor *g = ts_add_at(loc, ts_add_at(loc, ts_matmul_at(loc, xt, in[IN_W], false, false), in[IN_B]),
                           ts_matmul_at(loc, *h, in[IN_R], false, false));
  ts_tensor *gate[4] = { NULL }; /* i, o, f, c */
  if (!g || ts_split_at(loc, g, 4, 1, gate) != 4) {
    *h = *c = NULL;
    return;
  }
  if (peep) {
    gate[0] = ts_add_at(loc, gate[0], ts_mul_at(loc, peep[0], *c));
    gate[2] = ts_add_at(loc, gate[2], ts_mul_at(loc, peep[2], *c));
  }
  *c = ts_add_at(loc, ts_mul_at(loc, ts_sigmoid_at(loc, gate[2]), *c),
                 ts_mul_at(loc, ts_sigmoid_at(loc, gate[0]), ts_tanh_at(loc, gate[3])));
  if (peep)
    gate[1] = ts_add_at(loc, gate[1], ts_mul_at(loc, peep[1], *c));
  *h = ts_mul_at(loc, ts_sigmoid_at(loc, gate[1]), ts_tanh_at(loc, *c));
}

/* The gradient: the forward again as the unfused ops, one step each, on a
 * tape of its own, and that tape's gradient of sum(y gy) + sum(h gh) +
 * sum(c gc) for every input.  A second forward's cost, but an LSTM the
 * ONNX importer fused trains as its unfused ops did (and higher orders
 * come from theirs).  The steps are unrolled: their number must be known. */
static bool lstm_sequence_gradient(const ts_op_call *call, ts_tensor *const *out,
                                   ts_tensor *const *g, ts_tensor **gi)
{
  ts_loc loc = call->loc;
  ts_tensor *const *in = call->in;
  int64_t steps = in[IN_X]->shape.dim[0];
  if (steps < 0) {
    char x[TS_INFO_STR];
    ts_error_set(TS_ERR_SHAPE, loc, call->def->name,
                 "its gradient unrolls the steps: their number (x's first dim) must be known, got x %s",
                 ts__shape_str(x, in[IN_X]->shape));
    return false;
  }
  bool reverse = call->attrs[0].b /* reverse */;
  ts_tape *tape = ts_tape_new(false);
  ts_tape_set_watch_variables(tape, false);
  for (int i = 0; i < call->n_in; i++)
    ts_tape_watch(tape, in[i]);
  ts_tensor *peep[3] = { NULL }, **p = NULL;
  if (call->n_in > IN_P) {
    ts_tensor *rows[3] = { NULL };
    if (ts_split_at(loc, in[IN_P], 3, 0, rows) == 3)
      for (int k = 0; k < 3; k++)
        peep[k] = ts_reshape_at(loc, rows[k], TS_SHAPE(in[IN_P]->shape.dim[1]));
    p = peep;
  }
  /* sum(y gy) step by step: sum(h_t gy[t]) */
  ts_tensor *h = in[IN_H0], *c = in[IN_C0], *target = NULL;
  for (int64_t k = 0; k < steps && h && c; k++) {
    int64_t t = reverse ? steps - 1 - k : k;
    ts_tensor *at = ts_scalar_i64(t);
    lstm_step_ops(loc, ts_gather_at(loc, in[IN_X], at, 0), in, p, &h, &c);
    ts_tensor *term = ts_reduce_sum_at(loc, ts_mul_at(loc, h, ts_gather_at(loc, g[0], at, 0)),
                                       TS_ALL_AXES, false);
    target = target ? ts_add_at(loc, target, term) : term;
  }
  if (h && c) {
    ts_tensor *last = ts_add_at(loc, ts_reduce_sum_at(loc, ts_mul_at(loc, h, g[1]), TS_ALL_AXES, false),
                                ts_reduce_sum_at(loc, ts_mul_at(loc, c, g[2]), TS_ALL_AXES, false));
    target = target ? ts_add_at(loc, target, last) : last;
  } else {
    target = NULL;
  }
  bool ok = target && ts_tape_gradient_at(loc, tape, target, in, call->n_in, gi, TS_UNCONNECTED_ZERO);
  ts_tape_free(tape);
  return ok;
}

void ts__tape_rnn_init(void)
{
  __atomic_store_n(&ts__tape_grads.lstm_sequence_grad, lstm_sequence_gradient, __ATOMIC_RELEASE);
}
