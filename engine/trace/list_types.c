/* list_types.c — the element dtype and shape of a TensorArray being
 * traced, or the value's of an optional.  They are not part of a variant
 * tensor's static type, yet reads and stacks need them: walk the graph back
 * from the list (writes, inserts, erases, the reserve, If/While outputs)
 * and, where that ends at a subgraph input, look at every TensorArray op in
 * the graphs being traced (an optional: where it was made). */
#include "trace-private.h"

static ts_info port_info(const ts_graph *g, ts_port p)
{
  return ts__graph_node(g, p.node)->outputs[p.index];
}

enum { MAX_WALK_DEPTH = 64 };

/* What a node that makes or writes a list (or makes an optional) says about
 * its elements; *optional set for an optional's. */
static void from_node(const ts_node *n, ts_list_elem *e, bool *optional)
{
  switch (n->op) {
  case TS_OP_TENSOR_LIST_SET_ITEM:
  case TS_OP_TENSOR_LIST_INSERT: {
    ts_info item = port_info(n->graph, n->inputs[2]);
    ts__list_elem_merge(e, item.dtype, &item.shape);
    break;
  }
  case TS_OP_TENSOR_LIST_RESERVE: ts__list_elem_merge(e, n->attrs[0].dtype, NULL); break;
  case TS_OP_OPTIONAL_FROM_VALUE: {
    ts_info value = port_info(n->graph, n->inputs[0]);
    ts__list_elem_merge(e, value.dtype, &value.shape);
    *optional = true;
    break;
  }
  case TS_OP_OPTIONAL_NONE: *optional = true; break;
  case TS_OP_CONST:
    ts__list_elem_of_value(n->value, e);
    break;
  default: break;
  }
}

/* The ops whose output 0 is their input 0 changed (or not): the walk goes on there. */
static bool passes_list_on(ts_op op)
{
  return op == TS_OP_TENSOR_LIST_SET_ITEM || op == TS_OP_TENSOR_LIST_INSERT ||
         op == TS_OP_TENSOR_LIST_ERASE || op == TS_OP_IDENTITY;
}

/* Follows list output `index` of node back to where it was made: through
 * writes (each adds its item's shape), identities, and If/While outputs to
 * the value a branch or the loop body gives for them.  Inputs come before
 * their node, so the chain ends; `depth` bounds the nesting. */
static void walk(const ts_node *node, int index, ts_list_elem *e, bool *optional, int depth)
{
  for (;;) {
    from_node(node, e, optional);
    if ((ts__op_def(node->op)->flags & TS_OPF_CONTROL_FLOW) && depth < MAX_WALK_DEPTH) {
      for (int s = 0; s < node->n_subgraphs; s++) {
        const ts_graph *sub = node->subgraphs[s];
        if (index >= (int)sub->outputs->len)
          continue;
        ts_port p = g_array_index(sub->outputs, ts_port, index);
        if (port_info(sub, p).dtype == TS_VARIANT)
          walk(ts__graph_node(sub, p.node), p.index, e, optional, depth + 1);
      }
    }
    if (!passes_list_on(node->op))
      return;
    index = node->inputs[0].index;
    node = ts__graph_node(node->graph, node->inputs[0].node);
  }
}

/* Every TensorArray op in g and its subgraphs, for lists whose origin the
 * walk cannot see (inputs of a branch or a loop body). */
static void scan_graph(const ts_graph *g, ts_list_elem *found, int *n_dtypes, int depth)
{
  for (guint id = 0; id < g->nodes->len && depth < MAX_WALK_DEPTH; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    ts_list_elem e = { 0 };
    bool optional = false;
    from_node(n, &e, &optional);
    if (e.has_dtype && !optional) {
      ts_list_elem *f = &found[e.dtype];
      *n_dtypes += !f->has_dtype;
      ts__list_elem_merge(f, e.dtype, e.has_shape ? &e.shape : NULL);
    }
    for (int s = 0; s < n->n_subgraphs; s++)
      scan_graph(n->subgraphs[s], found, n_dtypes, depth + 1);
  }
}

static void scan_frames(ts_list_elem *e)
{
  ts_list_elem found[TS_DTYPE_COUNT] = { 0 };
  int n_dtypes = 0;
  for (ts_frame *f = ts__trace_frame(); f; f = f->outer)
    scan_graph(f->graph, found, &n_dtypes, 0);
  if (!e->has_dtype && n_dtypes == 1)
    for (int dt = 0; dt < TS_DTYPE_COUNT; dt++)
      if (found[dt].has_dtype)
        ts__list_elem_merge(e, (ts_dtype)dt, NULL);
  if (e->has_dtype && !e->has_shape && found[e->dtype].has_shape)
    ts__list_elem_merge(e, e->dtype, &found[e->dtype].shape);
}

bool ts__trace_list_elem(ts_op_handler *self, const ts_tensor *ta, ts_list_elem *e)
{
  bool optional = false;
  walk(ta->node, ta->node_output, e, &optional, 0);
  if (!optional && (!e->has_dtype || !e->has_shape))
    scan_frames(e);
  return true;
}
