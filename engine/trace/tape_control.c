/* trace/tape_control.c — the gradients of traced If and While nodes.  A
 * tape records them whole (their ops ran in the branch or loop frames
 * above it, unseen); their gradient is a new node of the same kind whose
 * subgraphs replay the forward subgraph's ops under a tape of their own
 * and take its gradient there.  Reached from the rows' ts_grad_fn through
 * ts__tape_grads (ops/control.c), as the tracer sits above the ops. */
#include "trace-private.h"

/* Runs g's nodes as ops (dispatched: nodes of the frame being traced) on
 * inputs[] for its Placeholders; its outputs into out[].  Side effects are
 * not run again: Print and Assert are skipped, other stateful ops but
 * variable reads are refused, as are nested If and While. */
static bool replay(ts_loc loc, const ts_graph *g, ts_tensor *const *inputs, int n_inputs,
                   ts_tensor **out, int *n_out)
{
  int n = (int)g->nodes->len;
  ts_tensor ***vals = g_new0(ts_tensor **, n ? n : 1);
  bool ok = true;
  for (int id = 0; ok && id < n; id++) {
    const ts_node *node = ts__graph_node(g, id);
    const ts_op_def *def = ts__op_def(node->op);
    vals[id] = g_new0(ts_tensor *, node->n_outputs ? node->n_outputs : 1);
    if (node->op == TS_OP_PLACEHOLDER) {
      ok = node->input_index >= 0 && node->input_index < n_inputs;
      if (ok)
        vals[id][0] = inputs[node->input_index];
      continue;
    }
    if (def->flags & TS_OPF_VALUE) {
      vals[id][0] = node->value;
      continue;
    }
    if (node->op == TS_OP_PRINT || node->op == TS_OP_ASSERT)
      continue;
    if (node->n_subgraphs || ((def->flags & TS_OPF_STATEFUL) && node->op != TS_OP_READ_VARIABLE)) {
      ts_error_set(TS_ERR_UNIMPLEMENTED, loc, NULL,
                   "the gradient of %s '%s' cannot run its node '%s' (%s) again: nested "
                   "control flow and side effects in a differentiated branch or loop body "
                   "are not supported yet",
                   g->parent ? "the block" : "graph", g->name, node->name, def->name);
      ok = false;
      break;
    }
    ts_tensor *in[TS_MAX_INPUTS];
    for (int i = 0; i < node->n_inputs; i++)
      in[i] = vals[node->inputs[i].node][node->inputs[i].index];
    ok = ts__dispatch(node->loc, node->op, in, node->n_inputs, node->attrs, vals[id]) ==
         node->n_outputs;
  }
  if (ok) {
    *n_out = (int)g->outputs->len;
    for (int i = 0; i < *n_out; i++) {
      ts_port p = g_array_index(g->outputs, ts_port, i);
      out[i] = vals[p.node][p.index];
    }
  }
  for (int id = 0; id < n; id++)
    g_free(vals[id]);
  g_free(vals);
  if (!ok && !ts_failed())
    ts_error_set(TS_ERR_INTERNAL, loc, NULL, "replaying '%s' for its gradient failed", g->name);
  return ok;
}

static bool is_float(const ts_tensor *t)
{
  return t->dtype == TS_F32 || t->dtype == TS_F64;
}

/* sum_j <outs_j, grads_j> over the float outputs: the target whose
 * gradient is the vector-Jacobian product.  NULL (no error) if none. */
static ts_tensor *weighted(ts_loc loc, ts_tensor *const *outs, ts_tensor *const *grads, int n)
{
  ts_tensor *total = NULL;
  for (int j = 0; j < n; j++) {
    if (!outs[j] || !grads[j] || !is_float(outs[j]))
      continue;
    ts_tensor *t = ts_reduce_sum_at(loc, ts_mul_at(loc, outs[j], grads[j]), TS_ALL_AXES, false);
    total = total ? ts_add_at(loc, total, t) : t;
  }
  return total;
}

/* ---- If -------------------------------------------------------------------------- */

typedef struct if_grad {
  const ts_op_call *call;
  const ts_node *node;
  ts_tensor *const *grad_out;
  int n_out;
} if_grad;

/* One branch of the gradient If: the branch replayed on the captures under
 * a tape, vars[i] the gradient of the captured value i. */
static void branch_grad(ts_tensor **vars, int n, const if_grad *ig, int which)
{
  ts_loc loc = ig->call->loc;
  ts_tensor *const *caps = ig->call->in + 1;
  ts_tape *tape = ts_tape_new(false);
  for (int i = 0; i < n; i++)
    if (is_float(caps[i]))
      ts_tape_watch(tape, caps[i]);
  ts_tensor *outs[TS_MAX_OUTPUTS];
  int n_outs = 0;
  ts_tensor *target = NULL;
  if (replay(loc, ig->node->subgraphs[which], caps, n, outs, &n_outs))
    target = weighted(loc, outs, ig->grad_out, n_outs < ig->n_out ? n_outs : ig->n_out);
  ts_tensor *grads[TS_MAX_INPUTS];
  if (target && ts_tape_gradient_at(loc, tape, target, caps, n, grads, TS_UNCONNECTED_ZERO))
    for (int i = 0; i < n; i++)
      vars[i] = grads[i];
  ts_tape_free(tape);
}

static void then_grad(ts_tensor **vars, int n, void *data)
{
  branch_grad(vars, n, data, 0);
}

static void else_grad(ts_tensor **vars, int n, void *data)
{
  branch_grad(vars, n, data, 1);
}

static bool if_gradient(const ts_op_call *call, ts_tensor *const *out, ts_tensor *const *grad_out,
                        ts_tensor **grad_in)
{
  const ts_node *node = call->n_in > 0 && out[0] ? out[0]->node : NULL;
  if (!node || node->op != TS_OP_IF) {
    ts_error_set(TS_ERR_INTERNAL, call->loc, "If", "its gradient needs the traced If node");
    return false;
  }
  int n = call->n_in - 1;
  ts_tensor **vars = g_new(ts_tensor *, n + 1);
  bool ok = true;
  for (int i = 0; ok && i < n; i++)
    ok = (vars[i] = ts_zeros_like_at(call->loc, call->in[1 + i])) != NULL;
  if_grad ig = { call, node, grad_out, node->n_outputs };
  ok = ok && ts_cond_at(call->loc, call->in[0], then_grad, else_grad, vars, n, &ig);
  for (int i = 0; ok && i < n; i++)
    grad_in[1 + i] = is_float(call->in[1 + i]) ? vars[i] : NULL;
  g_free(vars);
  return ok;
}

/* ---- While -------------------------------------------------------------------------
 * Inputs and outputs [vars (n)..., captures (m)...]; the body passes the
 * captures through.  The gradient runs the loop again, keeping each
 * iteration's variables in TensorArrays, then a second While walks the
 * iterations backwards: it replays the body on the kept variables under a
 * tape and takes the vector-Jacobian product, carrying the variables'
 * gradients and summing the captures'. */

typedef struct while_grad {
  ts_loc loc;
  const ts_node *node;
  int n, m;                 /* loop variables, captures */
  ts_tensor *const *caps;
  ts_tensor **lists;        /* per loop variable: its value at each iteration */
} while_grad;

/* Replays subgraph `which` (0 cond, 1 body) on the variables and captures. */
static bool replay_loop(const while_grad *wg, int which, ts_tensor *const *vars, ts_tensor **out,
                        int *n_out)
{
  ts_tensor *in[TS_MAX_INPUTS];
  memcpy(in, vars, sizeof *in * (size_t)wg->n);
  memcpy(in + wg->n, wg->caps, sizeof *in * (size_t)wg->m);
  return replay(wg->loc, wg->node->subgraphs[which], in, wg->n + wg->m, out, n_out);
}

/* The forward loop again: vars [v..., i, list...]. */
static ts_tensor *keep_cond(ts_tensor *const *vars, int n, void *data)
{
  ts_tensor *out[TS_MAX_OUTPUTS];
  int n_out;
  return replay_loop(data, 0, vars, out, &n_out) && n_out == 1 ? out[0] : NULL;
}

static void keep_body(ts_tensor **vars, int n, void *data)
{
  const while_grad *wg = data;
  ts_tensor *i = vars[wg->n], **lists = vars + wg->n + 1;
  for (int k = 0; k < wg->n; k++)
    lists[k] = ts_tensor_array_write_at(wg->loc, lists[k], i, vars[k]);
  ts_tensor *out[TS_MAX_OUTPUTS];
  int n_out;
  if (!replay_loop(wg, 1, vars, out, &n_out))
    return;
  for (int k = 0; k < wg->n; k++)
    vars[k] = out[k];
  vars[wg->n] = ts_add_at(wg->loc, i, ts_scalar_i32(1));
}

/* The backward loop: vars [j, grads of the variables..., sums of the captures' grads...]. */
static ts_tensor *back_cond(ts_tensor *const *vars, int n, void *data)
{
  const while_grad *wg = data;
  return ts_greater_equal_at(wg->loc, vars[0], ts_scalar_i32(0));
}

static void back_body(ts_tensor **vars, int n, void *data)
{
  const while_grad *wg = data;
  ts_loc loc = wg->loc;
  ts_tensor *j = vars[0], **gv = vars + 1, **gc = vars + 1 + wg->n;
  ts_tensor *v[TS_MAX_INPUTS];
  for (int k = 0; k < wg->n; k++)
    v[k] = ts_tensor_array_read_at(loc, wg->lists[k], j);
  ts_tape *tape = ts_tape_new(false);
  for (int k = 0; k < wg->n; k++)
    if (v[k] && is_float(v[k]))
      ts_tape_watch(tape, v[k]);
  for (int c = 0; c < wg->m; c++)
    if (is_float(wg->caps[c]))
      ts_tape_watch(tape, wg->caps[c]);
  ts_tensor *out[TS_MAX_OUTPUTS], *sources[TS_MAX_INPUTS], *grads[TS_MAX_INPUTS];
  int n_out;
  ts_tensor *target = replay_loop(wg, 1, v, out, &n_out) ? weighted(loc, out, gv, wg->n) : NULL;
  memcpy(sources, v, sizeof *v * (size_t)wg->n);
  memcpy(sources + wg->n, wg->caps, sizeof *sources * (size_t)wg->m);
  if (target &&
      ts_tape_gradient_at(loc, tape, target, sources, wg->n + wg->m, grads, TS_UNCONNECTED_ZERO)) {
    for (int k = 0; k < wg->n; k++)
      if (is_float(v[k]))
        gv[k] = grads[k];
    for (int c = 0; c < wg->m; c++)
      if (is_float(wg->caps[c]))
        gc[c] = ts_add_at(loc, gc[c], grads[wg->n + c]);
  }
  ts_tape_free(tape);
  vars[0] = ts_sub_at(loc, j, ts_scalar_i32(1));
}

static bool while_gradient(const ts_op_call *call, ts_tensor *const *out,
                           ts_tensor *const *grad_out, ts_tensor **grad_in)
{
  const ts_node *node = call->n_in > 0 && out[0] ? out[0]->node : NULL;
  if (!node || node->op != TS_OP_WHILE) {
    ts_error_set(TS_ERR_INTERNAL, call->loc, "While", "its gradient needs the traced While node");
    return false;
  }
  /* The captures are the trailing inputs the body passes through (a
   * variable the body leaves as it is would be the same as one). */
  const ts_graph *body = node->subgraphs[1];
  int total = call->n_in, m = 0;
  while (m < total) {
    ts_port p = g_array_index(body->outputs, ts_port, total - 1 - m);
    const ts_node *src = ts__graph_node(body, p.node);
    if (src->op != TS_OP_PLACEHOLDER || src->input_index != total - 1 - m)
      break;
    m++;
  }
  ts_loc loc = call->loc;
  while_grad wg = { loc, node, total - m, m, call->in + (total - m), NULL };
  int n = wg.n;

  /* the loop again, keeping each iteration's variables */
  ts_tensor **keep = g_new0(ts_tensor *, 2 * n + 1);
  memcpy(keep, call->in, sizeof *keep * (size_t)n);
  keep[n] = ts_scalar_i32(0);
  bool ok = true;
  for (int k = 0; ok && k < n; k++)
    ok = (keep[n + 1 + k] = ts_tensor_array_at(loc, call->in[k]->dtype, ts_scalar_i32(0))) != NULL;
  ok = ok && ts_while_loop_at(loc, keep_cond, keep_body, keep, 2 * n + 1, &wg);
  wg.lists = keep + n + 1;

  /* backwards over the iterations */
  ts_tensor **back = g_new0(ts_tensor *, 1 + n + m);
  if (ok) {
    back[0] = ts_sub_at(loc, keep[n], ts_scalar_i32(1));
    for (int k = 0; ok && k < n; k++)
      ok = (back[1 + k] = is_float(call->in[k]) ? grad_out[k] : ts_zeros_like_at(loc, call->in[k])) != NULL;
    for (int c = 0; ok && c < m; c++)
      ok = (back[1 + n + c] = ts_zeros_like_at(loc, wg.caps[c])) != NULL;
  }
  ok = ok && ts_while_loop_at(loc, back_cond, back_body, back, 1 + n + m, &wg);
  for (int k = 0; ok && k < n; k++)
    grad_in[k] = is_float(call->in[k]) ? back[1 + k] : NULL;
  for (int c = 0; ok && c < m; c++)
    if (is_float(wg.caps[c]))
      ok = (grad_in[n + c] = ts_add_at(loc, back[1 + n + c], grad_out[n + c])) != NULL;
  g_free(keep);
  g_free(back);
  return ok;
}

void ts__tape_control_init(void)
{
  __atomic_store_n(&ts__tape_grads.if_grad, if_gradient, __ATOMIC_RELEASE);
  __atomic_store_n(&ts__tape_grads.while_grad, while_gradient, __ATOMIC_RELEASE);
}
