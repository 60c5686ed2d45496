/* fold.c — the constant-folding pass (Grappler's): a node that is
 * stateless and fed by constants only is evaluated once, and a Const node
 * holding its value stands for it (and for the folded nodes it read). */
#include "exec.h"

/* Could n be evaluated once, whatever its inputs hold? */
static bool foldable_op(const ts_node *n)
{
  const ts_op_def *def = ts__op_def(n->op);
  return !(def->flags & (TS_OPF_STATEFUL | TS_OPF_INPUT | TS_OPF_VALUE | TS_OPF_CONTROL_FLOW)) &&
         !n->n_subgraphs;
}

/* Evaluates n on its constant inputs; false if it cannot be folded (or
 * fails: the error belongs to run time). */
static bool evaluate(ts_rewrite *rw, const ts_node *n, ts_tensor **out, int *n_out)
{
  const ts_op_def *def = ts__op_def(n->op);
  if (!foldable_op(n) || ts_failed())
    return false;
  ts_tensor *in[TS_MAX_INPUTS];
  for (int i = 0; i < n->n_inputs; i++) {
    ts_port p = ts__rewrite_port(rw, n->inputs[i]);
    const ts_node *src = p.node >= 0 ? ts__graph_node(ts__rewrite_graph(rw), p.node) : NULL;
    if (!src || src->op != TS_OP_CONST || !src->value) /* a value left out (graph_serial.c) */
      return false;
    in[i] = src->value;
  }
  ts_op_call call = { n->loc, def, in, n->n_inputs, n->attrs };
  /* Folding runs ops for no one to see: listeners hear only of real runs. */
  ts_context *c = ts__context();
  c->mute++;
  *n_out = ts__execute(&call, NULL, out);
  c->mute--;
  if (*n_out < 0)
    ts_error_clear(); /* raised again when (and if) the node runs */
  return *n_out >= 0;
}

ts_graph *ts__pass_fold_constants(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats)
{
  ts_rewrite *rw = ts__rewrite_begin(g, parent);
  for (guint id = 0; id < g->nodes->len; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    ts_tensor *out[TS_MAX_OUTPUTS];
    int n_out;
    ts_scope *scope = ts_scope_begin();
    if (evaluate(rw, n, out, &n_out)) {
      for (int i = 0; i < n_out; i++)
        ts__rewrite_constant(rw, n, i, out[i]);
      stats->count++;
      stats->into += n_out;
    } else {
      ts__pass_copy(rw, n, ts__pass_fold_constants, stats);
    }
    ts_scope_end(scope);
  }
  return ts__rewrite_finish(rw, false);
}

/* The first node folded reads Consts of the old graph only (the nodes
 * before it were copied as they are): without such a node (in g or a
 * subgraph) nothing folds. */
bool ts__fold_might_change(const ts_graph *g)
{
  for (guint id = 0; id < g->nodes->len; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    bool consts_only = foldable_op(n);
    for (int i = 0; i < n->n_inputs && consts_only; i++) {
      const ts_node *src = n->inputs[i].node >= 0 ? ts__graph_node(g, n->inputs[i].node) : NULL;
      consts_only = src && src->op == TS_OP_CONST && src->value;
    }
    if (consts_only)
      return true;
    for (int s = 0; s < n->n_subgraphs; s++)
      if (ts__fold_might_change(n->subgraphs[s]))
        return true;
  }
  return false;
}
