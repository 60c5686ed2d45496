/* exec/device_loop.c — a While node whose loop the device runs inside the
 * capture of the graph around it (the backend's graph_plan_while_begin and
 * _end: a CUDA conditional node, SIM:0's loop launch), so that a call with
 * such loops is one submission and the host never learns how many
 * iterations ran.
 *
 * Which loops (plan time, ts__loop_eligible): a While whose condition and
 * body hold only ops on numbers of static shapes with no effect on the
 * host (no print, no assign, no string, variant or TensorList), whose
 * nested nodes with subgraphs are such loops themselves, and whose body
 * gives back its loop variables' dtypes and shapes (a variable whose
 * shape changes was traced with unknown dims).  When (run time,
 * ts__loop_here): while an unbroken capture goes on, on a backend with
 * the entries, and nothing wants every iteration's ops on the host (op
 * handlers, an op watch, a serial run: the step debugger), nor the
 * planner's poisoning memsets every slot.
 *
 * How (ts__device_loop): the loop variables get buffers of their own on
 * the device, the inputs copied in; the condition runs on them (its
 * launches captured), the loop opens on its output, the body runs on them
 * once (its launches are the loop's body), its outputs are copied back
 * into them, the condition runs again and closes the loop with its
 * output; the While's outputs are the buffers.  Listeners hear of the
 * body's and the condition's ops once per capture; their device records
 * come once per iteration, charged to those ops through their graph
 * nodes.
 *
 * Fallbacks: a loop the backend could not open, or one a host copy broke
 * inside (what was captured of it is dropped unrun), runs its iterations
 * from the host, from its inputs, as it did before, and so does that node
 * on every later call (warned once, TS_WARNING_DEVICE_LOOP).  Other loops
 * end the capture's segment as they did (device_plan.c). */
#include "run.h"

static bool info_fits(const ts_info *info)
{
  return info->dtype < TS_NUMERIC_DTYPE_COUNT && ts__shape_known(info->shape);
}

static const ts_info *port_info(const ts_graph *g, ts_port port)
{
  return &ts__graph_node(g, port.node)->outputs[port.index];
}

/* Can every node of sub's graph run inside a loop of the device? */
static bool graph_fits(const ts_executable *sub)
{
  const ts_graph *g = sub->graph;
  for (guint id = 0; id < g->nodes->len; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    unsigned flags = ts__op_def(n->op)->flags;
    if (flags & (TS_OPF_INPUT | TS_OPF_VALUE))
      continue;
    bool fits = n->n_subgraphs ? sub->loop_ok[id]
                               : !((flags & TS_OPF_STATEFUL) && n->op != TS_OP_READ_VARIABLE) &&
                                   (flags & (TS_OPF_ANY_DTYPE | TS_OPF_ALIAS)) != TS_OPF_ANY_DTYPE;
    for (int i = 0; i < n->n_outputs && fits; i++)
      fits = info_fits(&n->outputs[i]);
    if (!fits)
      return false;
  }
  return true;
}

bool ts__loop_eligible(const ts_executable *e, const ts_node *node)
{
  if (node->op != TS_OP_WHILE || node->n_subgraphs != 2)
    return false;
  ts_executable *const *subs = e->subs[node->id];
  const ts_graph *cond = subs[0]->graph, *body = subs[1]->graph;
  int n = node->n_inputs;
  if (cond->outputs->len != 1 || (int)body->outputs->len != n || node->n_outputs != n)
    return false;
  const ts_info *c = port_info(cond, g_array_index(cond->outputs, ts_port, 0));
  int64_t elems;
  if (!info_fits(c) || !ts__shape_product(c->shape.dim, c->shape.rank, &elems) || elems != 1)
    return false;
  for (int i = 0; i < n; i++) {
    const ts_info *in = port_info(e->graph, node->inputs[i]);
    const ts_info *out = port_info(body, g_array_index(body->outputs, ts_port, i));
    if (!info_fits(in) || in->dtype != out->dtype || !ts_shape_equal(in->shape, out->shape))
      return false;
  }
  return graph_fits(subs[0]) && graph_fits(subs[1]);
}

bool ts__loop_here(const ts_executable *e, const ts_node *node)
{
  const ts_context *c = ts__context();
  return e->loop_ok[node->id] && c->plan_now && !c->plan_host_read && c->device &&
         c->device->iface.graph_plan_while_begin && !c->handlers && !c->op_watch && !c->serial &&
         !ts__planner_poisons() && /* its memsets in a body would break the capture */
         !__atomic_load_n(&e->subs[node->id][1]->loop_off, __ATOMIC_ACQUIRE);
}

bool ts__loops_whole(const ts_executable *e, const ts_backend *b)
{
  if (!b->iface.graph_plan_while_begin || ts__planner_poisons())
    return false;
  for (guint id = 0; id < e->graph->nodes->len; id++)
    if (e->subs[id] && (!e->loop_ok[id] ||
                        __atomic_load_n(&e->subs[id][1]->loop_off, __ATOMIC_ACQUIRE)))
      return false;
  return true;
}

static size_t data_bytes(const ts_tensor *t)
{
  return (size_t)t->size * ts_dtype_size(t->dtype);
}

/* The loop runs its iterations from the host from now on: said once. */
static void turn_off(const ts_kernel_ctx *k, const char *why)
{
  ts_executable *body = ((ts_executable *const *)k->site->exec)[1];
  if (__atomic_exchange_n(&body->loop_off, 1, __ATOMIC_ACQ_REL))
    return;
  char *message = g_strdup_printf(
    "%s:%d: the While %s runs its iterations from the host from now on, each a submission of "
    "its own, instead of on %s inside the graph's capture: %s",
    k->loc.file ? k->loc.file : "?", k->loc.line, k->site->node_name ? k->site->node_name : "",
    ts_backend_name(k->backend), why);
  ts_event ev = { .kind = TS_EVENT_WARNING };
  ev.warning = (ts_warning_event){ .kind = TS_WARNING_DEVICE_LOOP,
                                   .function_name = body->graph->name, .message = message };
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
  return cond->backend == k->backend ? cond : ts__tensor_on(k->loc, cond, k->backend);
}

/* The body's outputs into the loop's buffers.  An output sharing a
 * buffer's storage with another (a variable passed on as another, a swap)
 * is copied aside first: the copies run one after the other. */
static bool copy_back(ts_kernel_ctx *k, ts_tensor *const *var, ts_tensor **out, int n)
{
  for (int i = 0; i < n; i++) {
    if (out[i]->dtype != var[i]->dtype || !ts_shape_equal(out[i]->shape, var[i]->shape))
      return ts__kernel_fail(k, TS_ERR_INTERNAL, "malformed loop body");
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
    /* an input from the host (a constant: its kept copy) goes to the
     * device first; the copy into the loop's buffer is the device's, so
     * that a loop around this one makes it on every iteration */
    bool copied;
    ts_tensor *in = ts__tensor_on_kept(k->loc, k->in[i], b, &copied);
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
    ts_error *e = ts_error_take();
    turn_off(k, e ? e->message : "the backend could not make the loop");
    ts_error_free(e);
    done = -1; /* this call's loop from the host breaks the capture at its first condition */
  } else if (cond) {
    c->loops_open++;
    int n_body = 0;
    ok = k->site->run_subgraph(k->site, k->seq, 1, var, n, out, n, &n_body) &&
         (n_body == n || ts__kernel_fail(k, TS_ERR_INTERNAL, "malformed loop body")) &&
         copy_back(k, var, out, n);
    ts_tensor *next = ok ? condition(k, var, n) : NULL;
    c->loops_open--;
    /* next NULL: the loop is given up, unrun */
    bool ended = b->iface.graph_plan_while_end(b, gp, next);
    /* the capture broke inside the loop (it was whole when the loop
     * began): nothing of the loop ran */
    bool broke = c->plan_host_read || (next && !ended && !ts_failed());
    if (broke && c->loops_open) {
      done = ok; /* dropped with the loop around it, which runs again */
    } else if (broke) {
      char *why = broke_why(c);
      ts_error_clear(); /* whatever the body made of values never computed */
      turn_off(k, why);
      g_free(why);
      done = -1;
    } else if (!ok || !ended || !next) {
      done = 0;
    }
  }
  for (int i = 0; i < n && done == 1; i++)
    k->out[i] = ts_tensor_ref(var[i]);
  ts_scope_end(scope);
  for (int i = 0; i < n && done == 1; i++)
    ts__scope_adopt(k->out[i]);
  g_free(var);
  return done;
}
