/* ops/control.c — the control-flow ops If and While.
 *
 * The tracer (trace/control_flow.c) records them with their subgraphs;
 * they only run as graph nodes, whose subgraphs the kernels run through
 * their run site (ts_run_site.run_subgraph, filled by the executable):
 *   If     inputs [cond, captures...], outputs the branch's outputs,
 *          subgraphs [then, else].
 *   While  inputs [loop variables..., captures...], outputs the same (the
 *          body passes the captures through), subgraphs [cond, body]. */
#include "../engine-private.h"

#include <stdlib.h>

/* The condition's truth value: it must be one number or bool. */
static bool cond_truth(ts_kernel_ctx *k, const ts_tensor *cond, const char *what, bool *out)
{
  if (cond->dtype >= TS_NUMERIC_DTYPE_COUNT || cond->size != 1) {
    char buf[TS_INFO_STR];
    return ts__kernel_fail(k, TS_ERR_SHAPE, "the %s must be a single number or bool, got %s",
                           what, ts__info_str(buf, cond->dtype, cond->shape));
  }
  *out = ts_tensor_get_f64(cond, 0) != 0;
  return true;
}

static bool has_subgraphs(ts_kernel_ctx *k)
{
  if (k->site && k->site->n_subgraphs == 2 && k->site->run_subgraph)
    return true;
  return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT,
                         "runs only as a node of a traced graph (use TS_IF, TS_WHILE or TS_FOR)");
}

static const char *const if_subgraphs[] = { "then", "else" };
static const char *const while_subgraphs[] = { "cond", "body" };

/* ---- If ------------------------------------------------------------------------------ */

/* The outputs recorded when the If was traced (both branches agree on them). */
static bool if_infer(ts_infer_ctx *c)
{
  if (!c->site)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "runs only as a node of a traced graph (use TS_IF)");
  c->n_out = c->site->n_recorded;
  for (int i = 0; i < c->n_out; i++)
    c->out[i] = c->site->recorded[i];
  return true;
}

/* Runs the branch the condition picks on the captured values.  An If the
 * device can run inside a capture is handed over (ts_run_site.on_device)
 * first. */
static bool if_cpu(ts_kernel_ctx *k)
{
  bool which;
  if (!has_subgraphs(k))
    return false;
  int on_device = k->site->on_device ? k->site->on_device(k) : -1;
  if (on_device >= 0)
    return on_device;
  if (!cond_truth(k, k->in[0], "condition", &which))
    return false;
  int branch = which ? 0 : 1, n_out;
  ts_tensor *out[TS_MAX_OUTPUTS];
  if (!k->site->run_subgraph(k->site, k->seq, branch, k->in + 1, k->n_in - 1, out,
                             TS_MAX_OUTPUTS, &n_out))
    return false;
  if (n_out != k->n_out)
    return ts__kernel_fail(k, TS_ERR_INTERNAL, "branch '%s' has %d outputs, the node %d",
                           k->def->subgraphs[branch], n_out, k->n_out);
  memcpy(k->out, out, sizeof *out * (size_t)n_out);
  return true;
}

ts_tape_grads ts__tape_grads;

/* Through the tracer's gradients (ts_tape_grads). */
static bool cf_grad(ts_grad_fn fn, const ts_op_call *call, ts_tensor *const *out,
                    ts_tensor *const *grad_out, ts_tensor **grad_in)
{
  if (!fn) {
    ts_error_set(TS_ERR_UNIMPLEMENTED, call->loc, call->def->name, "no gradient is defined for it");
    return false;
  }
  return fn(call, out, grad_out, grad_in);
}

static bool if_grad(const ts_op_call *call, ts_tensor *const *out, ts_tensor *const *grad_out,
                    ts_tensor **grad_in)
{
  return cf_grad(__atomic_load_n(&ts__tape_grads.if_grad, __ATOMIC_ACQUIRE), call, out, grad_out,
                 grad_in);
}

static bool while_grad(const ts_op_call *call, ts_tensor *const *out, ts_tensor *const *grad_out,
                       ts_tensor **grad_in)
{
  return cf_grad(__atomic_load_n(&ts__tape_grads.while_grad, __ATOMIC_ACQUIRE), call, out, grad_out,
                 grad_in);
}

const ts_op_def ts__op_if = {
  .op = TS_OP_IF, .name = "If", .api_name = "if", .n_inputs = -1, .min_inputs = 1,
  .n_outputs = -1, .subgraphs = if_subgraphs, .n_subgraphs = 2,
  .flags = TS_OPF_CONTROL_FLOW | TS_OPF_ALIAS | TS_OPF_ANY_DTYPE,
  .infer = if_infer, .kernel[TS_DEVICE_CPU] = if_cpu, .grad = if_grad,
};

/* ---- While --------------------------------------------------------------------------- */

/* The loop state keeps its dtypes and shapes. */
static bool while_infer(ts_infer_ctx *c)
{
  for (int i = 0; i < c->n_in; i++)
    c->out[i] = c->in[i];
  c->n_out = c->n_in;
  return true;
}

/* Runs cond, then body, on the loop state until cond is false.  Each
 * iteration's intermediates die in a scope of their own; the state is held
 * by references (`owned` once the body has run).  A loop the device can
 * run inside a capture is handed over (ts_run_site.on_device) first. */
static bool while_cpu(ts_kernel_ctx *k)
{
  if (!has_subgraphs(k))
    return false;
  int on_device = k->site->on_device ? k->site->on_device(k) : -1;
  if (on_device >= 0)
    return on_device;
  int n = k->n_in;
  if (k->n_out != n)
    return ts__kernel_fail(k, TS_ERR_INTERNAL, "malformed loop: %d outputs for %d loop values",
                           k->n_out, n);
  ts_tensor **cur = g_new(ts_tensor *, 2 * (size_t)(n ? n : 1)), **next = cur + (n ? n : 1);
  memcpy(cur, k->in, sizeof *cur * (size_t)n);
  bool owned = false, ok = true;
  for (;;) {
    ts_scope *scope = ts_scope_begin();
    ts_tensor *c = NULL;
    bool more = false;
    int n_cond, n_body;
    ok = k->site->run_subgraph(k->site, k->seq, 0, cur, n, &c, 1, &n_cond) &&
         (n_cond == 1 || ts__kernel_fail(k, TS_ERR_INTERNAL, "malformed loop condition")) &&
         cond_truth(k, c, "loop condition", &more);
    if (ok && more)
      ok = k->site->run_subgraph(k->site, k->seq, 1, cur, n, next, n, &n_body) &&
           (n_body == n || ts__kernel_fail(k, TS_ERR_INTERNAL, "malformed loop body"));
    if (ok && more)
      for (int i = 0; i < n; i++)
        ts_tensor_ref(next[i]);
    ts_scope_end(scope);
    if (!ok || !more)
      break;
    for (int i = 0; i < n; i++) {
      if (owned)
        ts_tensor_unref(cur[i]);
      cur[i] = next[i];
    }
    owned = true;
  }
  for (int i = 0; i < n; i++) {
    if (ok) {
      k->out[i] = owned ? cur[i] : ts_tensor_ref(cur[i]);
      ts__scope_adopt(k->out[i]);
    } else if (owned) {
      ts_tensor_unref(cur[i]);
    }
  }
  g_free(cur);
  return ok;
}

const ts_op_def ts__op_while = {
  .op = TS_OP_WHILE, .name = "While", .api_name = "while", .n_inputs = -1, .min_inputs = 0,
  .n_outputs = -1, .subgraphs = while_subgraphs, .n_subgraphs = 2,
  .flags = TS_OPF_CONTROL_FLOW | TS_OPF_ALIAS | TS_OPF_ANY_DTYPE,
  .infer = while_infer, .kernel[TS_DEVICE_CPU] = while_cpu, .grad = while_grad,
};
