/* onnx_rnn.c — ONNX's RNN, GRU and LSTM as the engine's ops.  RNN and GRU
 * step by step: every step's input projection in one MatMul per gate, then
 * per step the recurrent MatMul and the gates, as ONNX writes them with
 * their default activations (RNN tanh; GRU sigmoid, tanh).  LSTM (sigmoid,
 * tanh, tanh) as one LSTMSequence per direction (ops/rnn.c): its steps,
 * each input projection included, run inside the op, with no executor
 * step, split or copy between them (float16 runs it in float32).  Forward, reverse and bidirectional, layouts 0 and 1, biases,
 * initial states and LSTM peepholes, sequences of any length.  Other
 * activations, clip, input_forget and sequence_lens shorter than the
 * sequence are refused naming the node. */
#include "onnx-private.h"

#include <inttypes.h>
#include <string.h>

#define HERE c->loc

typedef enum cell { CELL_RNN, CELL_GRU, CELL_LSTM } cell;

static const struct {
  int gates;                 /* blocks of hidden_size rows in W and R */
  int n_default;             /* default activations, per direction */
  const char *defaults[3];
} CELLS[] = {
  [CELL_RNN] = { 1, 1, { "Tanh" } },
  [CELL_GRU] = { 3, 2, { "Sigmoid", "Tanh" } },
  [CELL_LSTM] = { 4, 3, { "Sigmoid", "Tanh", "Tanh" } },
};

static const Onnx__AttributeProto *find_attr(const onnx_node_ctx *c, const char *name)
{
  for (size_t i = 0; i < c->node->n_attribute; i++)
    if (strcmp(c->node->attribute[i]->name, name) == 0)
      return c->node->attribute[i];
  return NULL;
}

static ts_tensor *in(const onnx_node_ctx *c, int i)
{
  return i < c->n_in ? c->in[i].t : NULL;
}

static bool is_string(const Onnx__AttributeProto *a, const char *s)
{
  return a->s.len == strlen(s) && memcmp(a->s.data, s, a->s.len) == 0;
}

/* What the steps below compute: the attributes, checked. */
static bool check_attributes(const onnx_node_ctx *c, cell kind, int *directions)
{
  const Onnx__AttributeProto *a = find_attr(c, "activations");
  if (a) {
    bool same = a->n_strings % CELLS[kind].n_default == 0 && a->n_strings > 0;
    for (size_t i = 0; same && i < a->n_strings; i++) {
      const char *want = CELLS[kind].defaults[i % CELLS[kind].n_default];
      same = a->strings[i].len == strlen(want) && memcmp(a->strings[i].data, want, a->strings[i].len) == 0;
    }
    if (!same) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "only the default activations are supported");
      return false;
    }
  }
  const char *unsupported[] = { "clip", "activation_alpha", "activation_beta" };
  for (size_t i = 0; i < G_N_ELEMENTS(unsupported); i++)
    if (find_attr(c, unsupported[i])) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "attribute '%s' is not supported", unsupported[i]);
      return false;
    }
  if ((a = find_attr(c, "input_forget")) && a->i != 0) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "input_forget=%" PRId64 " is not supported", a->i);
    return false;
  }
  *directions = 1;
  if ((a = find_attr(c, "direction")) && !is_string(a, "forward")) {
    if (is_string(a, "bidirectional"))
      *directions = 2;
    else if (!is_string(a, "reverse")) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "direction must be forward, reverse or bidirectional");
      return false;
    }
  }
  return true;
}

/* sequence_lens may only say what the shape says: every batch entry runs
 * the whole sequence. */
static bool check_sequence_lens(const onnx_node_ctx *c, int64_t steps)
{
  if (!in(c, 4))
    return true;
  ts_tensor *h = c->in[4].host;
  if (!h) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "sequence_lens must be known when the graph is built");
    return false;
  }
  for (int64_t b = 0; b < ts_tensor_size(h); b++)
    if (ts_tensor_get_i64(h, b) != steps) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "sequence_lens %" PRId64 " (of %" PRId64 " steps) is not supported",
                     ts_tensor_get_i64(h, b), steps);
      return false;
    }
  return true;
}

/* Direction d of a [D, ...] weight, bias or state: [...]. */
static ts_tensor *direction_of(const onnx_node_ctx *c, ts_tensor *w, int d)
{
  ts_shape s = ts_tensor_shape(w);
  ts_ints begin = { .n = s.rank }, size = { .n = s.rank };
  for (int k = 0; k < s.rank; k++)
    size.v[k] = k == 0 ? 1 : -1;
  begin.v[0] = d;
  ts_shape rest = { .rank = s.rank - 1 };
  for (int k = 1; k < s.rank; k++)
    rest.dim[k - 1] = s.dim[k];
  return ts_reshape_at(HERE, ts_slice_at(HERE, w, begin, size), rest);
}

/* One direction's weights and state. */
typedef struct dir_state {
  ts_tensor *r;      /* R^T [H, G*H]; GRU without linear_before_reset: its z and r blocks [H, 2H] */
  ts_tensor *rh;     /* GRU without linear_before_reset: R's h block, transposed [H, H] */
  ts_tensor *rbh;    /* GRU: Rb's h block [H], or NULL (the other biases go with the input's) */
  ts_tensor *h, *cs; /* the hidden and cell states [B, H] (cs: LSTM's) */
} dir_state;

static bool linear_before_reset(const onnx_node_ctx *c)
{
  const Onnx__AttributeProto *a = find_attr(c, "linear_before_reset");
  return a && a->i;
}

/* One step: x[k] gate k's input projection with its biases [B, H]
 * (input_biases). */
static void step(const onnx_node_ctx *c, cell kind, dir_state *s, ts_tensor **x)
{
  ts_tensor *hr = ts_matmul_at(HERE, s->h, s->r, false, false);
  if (kind == CELL_RNN) {
    s->h = ts_tanh_at(HERE, ts_add_at(HERE, x[0], hr));
    return;
  }
  ts_tensor *r[4];
  int blocks = s->rh ? 2 : CELLS[kind].gates;
  if (ts_split_at(HERE, hr, blocks, 1, r) != blocks) {
    s->h = NULL;
    return;
  }
  /* GRU: z, r, h */
  ts_tensor *z = ts_sigmoid_at(HERE, ts_add_at(HERE, x[0], r[0]));
  ts_tensor *reset = ts_sigmoid_at(HERE, ts_add_at(HERE, x[1], r[1]));
  ts_tensor *g;
  if (!s->rh) /* r . (h Rh^T + Rbh) */
    g = ts_mul_at(HERE, reset, s->rbh ? ts_add_at(HERE, r[2], s->rbh) : r[2]);
  else /* (r . h) Rh^T + Rbh */
    g = ts_matmul_at(HERE, ts_mul_at(HERE, reset, s->h), s->rh, false, false);
  if (s->rh && s->rbh)
    g = ts_add_at(HERE, g, s->rbh);
  ts_tensor *n = ts_tanh_at(HERE, ts_add_at(HERE, x[2], g));
  ts_tensor *one = ts_cast_at(HERE, ts_scalar_f64(1), ts_tensor_dtype(z));
  s->h = ts_add_at(HERE, ts_mul_at(HERE, ts_sub_at(HERE, one, z), n), ts_mul_at(HERE, z, s->h));
}

/* Per gate, the bias of one direction's input projection [H] into bias[]:
 * Wb + Rb, but for GRU's h gate, whose Rb goes inside the reset (s->rbh). */
static bool input_biases(const onnx_node_ctx *c, cell kind, int d, dir_state *s, ts_tensor **bias)
{
  int gates = CELLS[kind].gates;
  ts_tensor *halves[2], *wb[4], *rb[4];
  if (ts_split_at(HERE, direction_of(c, in(c, 3), d), 2, 0, halves) != 2 ||
      ts_split_at(HERE, halves[0], gates, 0, wb) != gates || ts_split_at(HERE, halves[1], gates, 0, rb) != gates)
    return false;
  for (int k = 0; k < gates; k++)
    bias[k] = kind == CELL_GRU && k == 2 ? wb[k] : ts_add_at(HERE, wb[k], rb[k]);
  if (kind == CELL_GRU)
    s->rbh = rb[2];
  return true;
}

/* x [S*B, H] as S tensors [B, H] (at most TS_MAX_OUTPUTS pieces a Split). */
static bool steps_of(const onnx_node_ctx *c, ts_tensor *x, int64_t steps, int64_t batch, ts_tensor **out)
{
  for (int64_t t0 = 0; t0 < steps; t0 += TS_MAX_OUTPUTS) {
    int n = (int)MIN(TS_MAX_OUTPUTS, steps - t0);
    ts_tensor *part = steps <= TS_MAX_OUTPUTS ? x
                                              : ts_slice_at(HERE, x, TS_INTS(t0 * batch, 0), TS_INTS(n * batch, -1));
    if (ts_split_at(HERE, part, n, 0, out + t0) != n)
      return false;
  }
  return true;
}

/* The steps' outputs [B, H] as one [S*B, H], by Concats of at most
 * TS_MAX_INPUTS each. */
static ts_tensor *concat_steps(const onnx_node_ctx *c, ts_tensor **xs, int64_t n)
{
  if (n <= TS_MAX_INPUTS)
    return ts_concat_at(HERE, xs, (int)n, 0);
  int64_t groups = (n + TS_MAX_INPUTS - 1) / TS_MAX_INPUTS;
  ts_tensor **parts = g_new(ts_tensor *, groups);
  for (int64_t k = 0; k < groups; k++)
    parts[k] = ts_concat_at(HERE, xs + k * TS_MAX_INPUTS, (int)MIN(TS_MAX_INPUTS, n - k * TS_MAX_INPUTS), 0);
  ts_tensor *all = concat_steps(c, parts, groups);
  g_free(parts);
  return all;
}

/* t in dtype dt (itself when it is). */
static ts_tensor *as_dtype(const onnx_node_ctx *c, ts_tensor *t, ts_dtype dt)
{
  return t && ts_tensor_dtype(t) != dt ? ts_cast_at(HERE, t, dt) : t;
}

/* LSTM's direction d: Y [S, 1, B, H], its last states in s.  x [S, B, I]. */
static ts_tensor *lstm_direction(onnx_node_ctx *c, ts_tensor *x, int d, bool reverse, dir_state *s)
{
  ts_shape xs = ts_tensor_shape(x), rs = ts_tensor_shape(in(c, 2));
  int64_t steps = xs.dim[0], batch = xs.dim[1], hidden = rs.dim[2];
  ts_dtype dt = ts_tensor_dtype(x), run = dt == TS_F64 ? TS_F64 : TS_F32;
  ts_tensor *v[8]; /* the inputs of direction d, in the dtype the op runs in */
  for (int k = 1; k < 8; k++)
    v[k] = !in(c, k) || k == 4 ? NULL : as_dtype(c, direction_of(c, in(c, k), d), run);
  /* W and R transposed here (folded with the weights); both biases in one */
  ts_tensor *bias = ts_zeros_at(HERE, run, TS_SHAPE(4 * hidden));
  if (v[3]) {
    ts_tensor *halves[2];
    if (ts_split_at(HERE, v[3], 2, 0, halves) != 2)
      return NULL;
    bias = ts_add_at(HERE, halves[0], halves[1]);
  }
  ts_tensor *h0 = v[5] ? v[5] : ts_zeros_at(HERE, run, TS_SHAPE(batch, hidden));
  ts_tensor *c0 = v[6] ? v[6] : ts_zeros_at(HERE, run, TS_SHAPE(batch, hidden));
  ts_tensor *y, *peep = v[7] ? ts_reshape_at(HERE, v[7], TS_SHAPE(3, hidden)) : NULL;
  if (!ts_lstm_sequence_at(HERE, as_dtype(c, x, run), ts_transpose_at(HERE, v[1], TS_INTS(1, 0)),
                           ts_transpose_at(HERE, v[2], TS_INTS(1, 0)), bias, h0, c0, peep, reverse, &y, &s->h,
                           &s->cs))
    return NULL;
  s->h = as_dtype(c, s->h, dt);
  s->cs = as_dtype(c, s->cs, dt);
  return ts_reshape_at(HERE, as_dtype(c, y, dt), TS_SHAPE(steps, 1, batch, hidden));
}

/* RNN's or GRU's direction d: Y [S, 1, B, H], its last state in s. */
static ts_tensor *direction(onnx_node_ctx *c, cell kind, ts_tensor *x, int d, bool reverse, dir_state *s)
{
  ts_tensor *w = in(c, 1), *r = in(c, 2);
  ts_shape xs = ts_tensor_shape(x), rs = ts_tensor_shape(r);
  int gates = CELLS[kind].gates;
  int64_t steps = xs.dim[0], batch = xs.dim[1], hidden = rs.dim[2];
  ts_dtype dt = ts_tensor_dtype(x);
  /* R transposed once here, not by every step's MatMul */
  s->r = ts_transpose_at(HERE, direction_of(c, r, d), TS_INTS(1, 0));
  if (kind == CELL_GRU && !linear_before_reset(c)) {
    s->rh = ts_slice_at(HERE, s->r, TS_INTS(0, 2 * hidden), TS_INTS(-1, hidden));
    s->r = ts_slice_at(HERE, s->r, TS_INTS(0, 0), TS_INTS(-1, 2 * hidden));
  }
  ts_tensor *wg[4], *bg[4];
  bool biased = in(c, 3) != NULL;
  if ((biased && !input_biases(c, kind, d, s, bg)) ||
      ts_split_at(HERE, direction_of(c, w, d), gates, 0, wg) != gates)
    return NULL;
  s->h = in(c, 5) ? direction_of(c, in(c, 5), d) : ts_zeros_at(HERE, dt, TS_SHAPE(batch, hidden));
  /* every step's input projection at once, per gate [S*B, I] W_k^T + its
   * bias (contiguous, where one MatMul's [S*B, G*H] would need a Split
   * of short rows), cut into steps before the loop: the steps only read
   * their pieces */
  ts_tensor *x2 = ts_reshape_at(HERE, x, TS_SHAPE(steps * batch, -1));
  ts_tensor **pieces = g_new0(ts_tensor *, gates * steps + steps), **outs = pieces + gates * steps;
  ts_tensor *y = NULL;
  for (int k = 0; k < gates; k++) {
    ts_tensor *xw = ts_matmul_at(HERE, x2, wg[k], false, true);
    if (!steps_of(c, biased ? ts_add_at(HERE, xw, bg[k]) : xw, steps, batch, pieces + k * steps))
      goto out;
  }
  for (int64_t k = 0; k < steps; k++) {
    int64_t t = reverse ? steps - 1 - k : k;
    ts_tensor *xt[4];
    for (int j = 0; j < gates; j++)
      xt[j] = pieces[j * steps + t];
    step(c, kind, s, xt);
    if (!s->h)
      goto out;
    outs[t] = s->h;
  }
  y = ts_reshape_at(HERE, concat_steps(c, outs, steps), TS_SHAPE(steps, 1, batch, hidden));
out:
  g_free(pieces);
  return y;
}

static bool recurrent(onnx_node_ctx *c, cell kind)
{
  ts_tensor *x = in(c, 0), *w = in(c, 1), *r = in(c, 2);
  int dirs;
  if (!x || !w || !r || !check_attributes(c, kind, &dirs))
    return false;
  const Onnx__AttributeProto *la = find_attr(c, "layout");
  bool batch_first = la && la->i != 0;
  if (batch_first)
    x = ts_transpose_at(HERE, x, TS_INTS(1, 0, 2));
  ts_shape xs = ts_tensor_shape(x), ws = ts_tensor_shape(w), rs = ts_tensor_shape(r);
  int gates = CELLS[kind].gates;
  int64_t steps = xs.dim[0], batch = xs.dim[1], hidden = rs.rank == 3 ? rs.dim[2] : -1;
  const Onnx__AttributeProto *ha = find_attr(c, "hidden_size");
  if (xs.rank != 3 || ws.rank != 3 || rs.rank != 3 || steps < 1 || batch < 0 || hidden < 1 ||
      ws.dim[0] != dirs || rs.dim[0] != dirs || ws.dim[1] != gates * hidden || rs.dim[1] != gates * hidden ||
      ws.dim[2] != xs.dim[2] || (ha && ha->i != hidden)) {
    onnx_node_fail(c, TS_ERR_SHAPE, "X, W and R do not fit %d direction(s) of %d gate(s) (hidden_size %" PRId64
                   "), or the sequence length is unknown or 0", dirs, gates, hidden);
    return false;
  }
  if (!check_sequence_lens(c, steps))
    return false;
  ts_tensor *ys[2], *hs[2], *cs[2];
  for (int d = 0; d < dirs; d++) {
    const Onnx__AttributeProto *da = find_attr(c, "direction");
    dir_state s = { 0 };
    bool reverse = d == 1 || (da && is_string(da, "reverse"));
    if (!(ys[d] = kind == CELL_LSTM ? lstm_direction(c, x, d, reverse, &s) : direction(c, kind, x, d, reverse, &s)))
      return false;
    hs[d] = ts_reshape_at(HERE, s.h, TS_SHAPE(1, batch, hidden));
    cs[d] = kind == CELL_LSTM ? ts_reshape_at(HERE, s.cs, TS_SHAPE(1, batch, hidden)) : NULL;
  }
  /* one direction: its results themselves (a Concat of one would copy) */
  ts_tensor *y = dirs == 1 ? ys[0] : ts_concat_at(HERE, ys, dirs, 1);
  ts_tensor *yh = dirs == 1 ? hs[0] : ts_concat_at(HERE, hs, dirs, 0);
  ts_tensor *yc = kind != CELL_LSTM ? NULL : dirs == 1 ? cs[0] : ts_concat_at(HERE, cs, dirs, 0);
  if (batch_first) {
    y = ts_transpose_at(HERE, y, TS_INTS(2, 0, 1, 3));
    yh = ts_transpose_at(HERE, yh, TS_INTS(1, 0, 2));
    yc = yc ? ts_transpose_at(HERE, yc, TS_INTS(1, 0, 2)) : NULL;
  }
  ts_tensor *results[3] = { y, yh, yc };
  for (int k = 0; k < c->n_out; k++)
    if (!(c->out[k] = results[k]))
      return false;
  return true;
}

bool onnx_op_rnn(onnx_node_ctx *c)
{
  return recurrent(c, CELL_RNN);
}

bool onnx_op_gru(onnx_node_ctx *c)
{
  return recurrent(c, CELL_GRU);
}

bool onnx_op_lstm(onnx_node_ctx *c)
{
  return recurrent(c, CELL_LSTM);
}
