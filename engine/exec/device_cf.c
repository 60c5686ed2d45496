/* exec/device_cf.c — If and While nodes the device runs inside the
 * capture of the graph around them (the backend's graph_plan_if_* and
 * graph_plan_while_* entries: CUDA conditional nodes, SIM:0's branch and
 * loop launches), so that a call with such nodes is one submission and
 * the host never learns which branch ran or how many iterations.
 *
 * Which nodes (plan time, ts__cf_eligible): an If whose condition is one
 * number or bool and whose branches give the node's dtypes and static
 * shapes, a While whose body gives back its loop variables' dtypes and
 * shapes (a variable whose shape changes was traced with unknown dims),
 * whose subgraphs hold only ops on numbers of static shapes with no effect
 * on the host (no print, no assign, no string, variant or TensorList), and
 * whose nested nodes with subgraphs qualify themselves.  When (run time,
 * ts__cf_here): while an unbroken capture goes on, on a backend with the
 * entries, and nothing wants every op on the host (op handlers, an op
 * watch, a serial run: the step debugger), nor the planner's poisoning
 * memsets every slot.
 *
 * How: an If's outputs get buffers of their own on the device; the
 * branch opens on its condition (put on the device), the then branch runs
 * (its launches are the node's then body) and its outputs are copied into
 * the buffers, then the else branch likewise, and the node closes.  A
 * While's loop variables get buffers of their own, the inputs copied in;
 * the condition runs on them (its launches captured), the loop opens on
 * its output, the body runs on them once (its launches are the loop's
 * body), its outputs are copied back, the condition runs again and closes
 * the loop with its output.  The node's outputs are the buffers.
 * Listeners hear of every op of its subgraphs once per capture (both
 * branches of an If); their device records come as often as the device
 * ran them, charged to those ops through their graph nodes.
 *
 * Fallbacks: a node the backend could not open, or one a host copy broke
 * inside (what was captured of it is dropped unrun), runs from the host,
 * from its inputs, as it did before, and so does that node on every later
 * call (warned once, TS_WARNING_DEVICE_CONTROL_FLOW).  Other nodes end
 * the capture's segment as they did (device_plan.c). */
#include "run.h"

static bool info_fits(const ts_info *info)
{
  return info->dtype < TS_NUMERIC_DTYPE_COUNT && ts__shape_known(info->shape);
}

static const ts_info *port_info(const ts_graph *g, ts_port port)
{
  return &ts__graph_node(g, port.node)->outputs[port.index];
}

/* Can every node of sub's graph run inside a branch or loop of the device? */
static bool graph_fits(const ts_executable *sub)
{
  const ts_graph *g = sub->graph;
  for (guint id = 0; id < g->nodes->len; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    unsigned flags = ts__op_def(n->op)->flags;
    if (flags & (TS_OPF_INPUT | TS_OPF_VALUE))
      continue;
    bool fits = n->n_subgraphs ? sub->cf_ok[id]
                               : !((flags & TS_OPF_STATEFUL) && n->op != TS_OP_READ_VARIABLE) &&
                                   (flags & (TS_OPF_ANY_DTYPE | TS_OPF_ALIAS)) != TS_OPF_ANY_DTYPE;
    for (int i = 0; i < n->n_outputs && fits; i++)
      fits = info_fits(&n->outputs[i]);
    if (!fits)
      return false;
  }
  return true;
}

/* One number or bool of static shape, a condition the device reads. */
static bool condition_fits(const ts_info *c)
{
  int64_t elems;
  return info_fits(c) && ts__shape_product(c->shape.dim, c->shape.rank, &elems) && elems == 1;
}

/* Branches giving the If's own outputs, of static shapes. */
static bool if_eligible(const ts_executable *e, const ts_node *node)
{
  ts_executable *const *subs = e->subs[node->id];
  if (node->n_inputs < 1 || !condition_fits(port_info(e->graph, node->inputs[0])))
    return false;
  for (int b = 0; b < 2; b++) {
    const ts_graph *branch = subs[b]->graph;
    if ((int)branch->outputs->len != node->n_outputs)
      return false;
    for (int i = 0; i < node->n_outputs; i++) {
      const ts_info *out = port_info(branch, g_array_index(branch->outputs, ts_port, i));
      if (!info_fits(&node->outputs[i]) || out->dtype != node->outputs[i].dtype ||
          !ts_shape_equal(out->shape, node->outputs[i].shape))
        return false;
    }
  }
  return graph_fits(subs[0]) && graph_fits(subs[1]);
}

static bool loop_eligible(const ts_executable *e, const ts_node *node)
{
  ts_executable *const *subs = e->subs[node->id];
  const ts_graph *cond = subs[0]->graph, *body = subs[1]->graph;
  int n = node->n_inputs;
  if (cond->outputs->len != 1 || (int)body->outputs->len != n || node->n_outputs != n)
    return false;
  if (!condition_fits(port_info(cond, g_array_index(cond->outputs, ts_port, 0))))
    return false;
  for (int i = 0; i < n; i++) {
    const ts_info *in = port_info(e->graph, node->inputs[i]);
    const ts_info *out = port_info(body, g_array_index(body->outputs, ts_port, i));
    if (!info_fits(in) || in->dtype != out->dtype || !ts_shape_equal(in->shape, out->shape))
      return false;
  }
  return graph_fits(subs[0]) && graph_fits(subs[1]);
}

bool ts__cf_eligible(const ts_executable *e, const ts_node *node)
{
  if (node->n_subgraphs != 2)
    return false;
  return node->op == TS_OP_IF ? if_eligible(e, node) : node->op == TS_OP_WHILE && loop_eligible(e, node);
}

/* Has the node of these subgraphs been turned off (turn_off)? */
static bool turned_off(ts_executable *const *subs)
{
  return __atomic_load_n(&subs[0]->cf_off, __ATOMIC_ACQUIRE);
}

/* Can b run e's node id inside a capture now, as far as b and the
 * planner go? */
static bool runs_on(const ts_executable *e, guint id, const ts_backend *b)
{
  const ts_backend_i *bi = &b->iface;
  return e->cf_ok[id] && !turned_off(e->subs[id]) &&
         (ts__graph_node(e->graph, (int)id)->op == TS_OP_IF ? bi->graph_plan_if_begin != NULL
                                                             : bi->graph_plan_while_begin != NULL) &&
         !ts__planner_poisons(); /* its memsets in a body would break the capture */
}

bool ts__cf_here(const ts_executable *e, const ts_node *node)
{
  const ts_context *c = ts__context();
  return c->plan_now && !c->plan_host_read && c->device && !c->handlers && !c->op_watch &&
         !c->serial && runs_on(e, (guint)node->id, c->device);
}

bool ts__cf_whole(const ts_executable *e, const ts_backend *b)
{
  for (guint id = 0; id < e->graph->nodes->len; id++)
    if (e->subs[id] && !runs_on(e, id, b))
      return false;
  return true;
}

static size_t data_bytes(const ts_tensor *t)
{
  return (size_t)t->size * ts_dtype_size(t->dtype);
}

/* The node runs from the host from now on: said once. */
static void turn_off(const ts_kernel_ctx *k, const char *why)
{
  ts_executable *const *subs = k->site->exec;
  if (__atomic_exchange_n(&subs[0]->cf_off, 1, __ATOMIC_ACQ_REL))
    return;
  bool is_if = k->def->op == TS_OP_IF;
  char *message = g_strdup_printf(
    "%s:%d: the %s %s runs %s from the host from now on, instead of on %s inside the graph's "
    "capture: %s",
    k->loc.file ? k->loc.file : "?", k->loc.line, k->def->name,
    k->site->node_name ? k->site->node_name : "",
    is_if ? "its branch" : "its iterations, each a submission of its own,",
    ts_backend_name(k->backend), why);
  ts_event ev = { .kind = TS_EVENT_WARNING };
  ev.warning = (ts_warning_event){ .kind = TS_WARNING_DEVICE_CONTROL_FLOW,
                                   .function_name = subs[1]->graph->name, .message = message };
  ts__listeners_emit(&ev);
  g_free(message);
}

/* Why a capture broke (owned). */
static char *broke_why(const ts_context *c)
{
  return c->plan_host_read ? g_strdup_printf("the host read a value of the device in %s",
                                             c->plan_break.op_name)
                           : g_strdup("the capture broke inside it");
}

/* t on the device the node runs on: itself, or (a value the host holds,
 * a constant through its kept copy) its copy there, made before the
 * launches that read it; NULL + error. */
static ts_tensor *placed(const ts_kernel_ctx *k, ts_tensor *t)
{
  bool copied;
  return t->backend == k->backend ? t : ts__tensor_on_kept(k->loc, t, k->backend, &copied);
}

/* The condition on the loop variables, on the device; NULL + error. */
static ts_tensor *condition(ts_kernel_ctx *k, ts_tensor *const *var, int n)
{
  ts_tensor *cond = NULL;
  int n_cond;
  if (!k->site->run_subgraph(k->site, k->seq, 0, var, n, &cond, 1, &n_cond))
    return NULL;
  if (n_cond != 1 || cond->size != 1) {
    ts__op_fail(k->loc, k->def, TS_ERR_INTERNAL, "malformed loop condition");
    return NULL;
  }
  return placed(k, cond);
}

/* A subgraph's outputs into the node's buffers.  An output sharing a
 * buffer's storage with another (a variable passed on as another, a swap)
 * is copied aside first: the copies run one after the other. */
static bool copy_back(ts_kernel_ctx *k, ts_tensor *const *var, ts_tensor **out, int n)
{
  for (int i = 0; i < n; i++) {
    if (out[i]->dtype != var[i]->dtype || !ts_shape_equal(out[i]->shape, var[i]->shape))
      return ts__kernel_fail(k, TS_ERR_INTERNAL, "malformed %s",
                             k->def->op == TS_OP_IF ? "branch" : "loop body");
    if (!(out[i] = placed(k, out[i])))
      return false;
    bool shares = false;
    for (int j = 0; j < n && !shares; j++)
      shares = out[i]->data != var[i]->data && out[i]->buffer && out[i]->buffer == var[j]->buffer;
    if (shares) {
      ts_tensor *aside = ts__tensor_alloc_on(k->loc, k->backend, out[i]->dtype, out[i]->shape);
      if (!aside || !ts__data_copy(aside, out[i], data_bytes(out[i])))
        return false;
      out[i] = aside;
    }
  }
  for (int i = 0; i < n; i++)
    if (out[i]->data != var[i]->data && !ts__data_copy(var[i], out[i], data_bytes(var[i])))
      return false;
  return true;
}

/* After the capture of a node's subgraphs (ended: what its entry said):
 * 1 done, 0 failed, -1 broken inside (the node turned off, to run from
 * the host), or done with the outer node (dropped with it, which runs
 * again). */
static int after_capture(ts_kernel_ctx *k, bool ok, bool ended)
{
  ts_context *c = ts__context();
  /* the capture broke inside the node (it was whole when the node
   * began): nothing of it ran */
  bool broke = c->plan_host_read || (ok && !ended && !ts_failed());
  if (broke && c->cf_open)
    return ok; /* dropped with the node around it, which runs again */
  if (broke) {
    char *why = broke_why(c);
    ts_error_clear(); /* whatever the subgraphs made of values never computed */
    turn_off(k, why);
    g_free(why);
    return -1;
  }
  return ok && ended ? 1 : 0;
}

/* The backend could not open the node: said (its error), and the node
 * runs from the host from now on (-1). */
static int not_opened(ts_kernel_ctx *k)
{
  ts_error *e = ts_error_take();
  turn_off(k, e ? e->message : "the backend could not open it");
  ts_error_free(e);
  return -1;
}

/* The node's end: done (1), its buffers (n, freed with the array) are its
 * outputs, in the caller's scope; the node's own scope ends. */
static int finish(ts_kernel_ctx *k, ts_scope *scope, ts_tensor **buffers, int n, int done)
{
  for (int i = 0; i < n && done == 1; i++)
    k->out[i] = ts_tensor_ref(buffers[i]);
  ts_scope_end(scope);
  for (int i = 0; i < n && done == 1; i++)
    ts__scope_adopt(k->out[i]);
  g_free(buffers);
  return done;
}

int ts__device_loop(ts_kernel_ctx *k)
{
  ts_context *c = ts__context();
  const ts_backend *b = k->backend;
  ts_graph_plan *gp = c->plan_now;
  if (!gp || c->plan_host_read) /* the capture broke before it: from the host */
    return -1;
  int n = k->n_in;
  ts_tensor **var = g_new0(ts_tensor *, 2 * (size_t)MAX(n, 1)), **out = var + MAX(n, 1);
  ts_scope *scope = ts_scope_begin();
  bool ok = true;
  for (int i = 0; i < n && ok; i++) {
    /* the copy into the loop's buffer is the device's, so that a loop
     * around this one makes it on every iteration */
    ts_tensor *in = placed(k, k->in[i]);
    ok = in && (var[i] = ts__tensor_alloc_on(k->loc, b, in->dtype, in->shape)) &&
         ts__data_copy(var[i], in, data_bytes(in));
  }
  ts_tensor *cond = ok ? condition(k, var, n) : NULL;
  int done = cond ? 1 : 0;
  if (cond && c->plan_host_read) { /* in the condition: its ops ran, the loop is the host's */
    char *why = broke_why(c);
    turn_off(k, why);
    g_free(why);
    done = -1;
  } else if (cond && !b->iface.graph_plan_while_begin(b, gp, cond)) {
    done = not_opened(k); /* from the host, breaking the capture at its first condition */
  } else if (cond) {
    c->cf_open++;
    int n_body = 0;
    ok = k->site->run_subgraph(k->site, k->seq, 1, var, n, out, n, &n_body) &&
         (n_body == n || ts__kernel_fail(k, TS_ERR_INTERNAL, "malformed loop body")) &&
         copy_back(k, var, out, n);
    ts_tensor *next = ok ? condition(k, var, n) : NULL;
    c->cf_open--;
    /* next NULL: the loop is given up, unrun */
    done = after_capture(k, next != NULL, b->iface.graph_plan_while_end(b, gp, next));
  }
  return finish(k, scope, var, n, done);
}

int ts__device_if(ts_kernel_ctx *k)
{
  ts_context *c = ts__context();
  const ts_backend *b = k->backend;
  ts_graph_plan *gp = c->plan_now;
  if (!gp || c->plan_host_read) /* the capture broke before it: from the host */
    return -1;
  int n = k->n_out;
  ts_tensor **res = g_new0(ts_tensor *, 2 * (size_t)MAX(n, 1)), **out = res + MAX(n, 1);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *cond = placed(k, k->in[0]);
  bool ok = cond != NULL;
  for (int i = 0; i < n && ok; i++)
    ok = (res[i] = ts__tensor_alloc_on(k->loc, b, k->site->recorded[i].dtype,
                                       k->site->recorded[i].shape)) != NULL;
  int done = ok ? 1 : 0;
  if (ok && !b->iface.graph_plan_if_begin(b, gp, cond)) {
    done = not_opened(k); /* from the host, breaking the capture at its condition */
  } else if (ok) {
    c->cf_open++;
    for (int branch = 0; branch < 2 && ok; branch++) {
      int n_branch = 0;
      ok = (branch == 0 || b->iface.graph_plan_if_else(b, gp)) &&
           k->site->run_subgraph(k->site, k->seq, branch, k->in + 1, k->n_in - 1, out, n,
                                 &n_branch) &&
           (n_branch == n || ts__kernel_fail(k, TS_ERR_INTERNAL, "malformed branch")) &&
           copy_back(k, res, out, n);
    }
    c->cf_open--;
    /* !ok: the node is given up, unrun */
    done = after_capture(k, ok, b->iface.graph_plan_if_end(b, gp, ok));
  }
  return finish(k, scope, res, n, done);
}
