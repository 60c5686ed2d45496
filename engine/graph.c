/* graph.c — the graph IR: nodes with ops, attributes, typed outputs, data
 * and control edges, name scopes, source locations and subgraphs. */
#include "graph-private.h"

#include <stdio.h>
#include <string.h>

static void node_free(gpointer data)
{
  ts_node *n = data;
  for (int i = 0; i < n->n_subgraphs; i++)
    ts__graph_free(n->subgraphs[i]);
  ts_tensor_unref(n->value);
  g_free(n->inputs);
  g_free(n->control);
  g_free(n->outputs);
  g_free(n->attrs);
  g_free(n->subgraphs);
  g_free(n->origins);
  g_free(n);
}

ts_graph *ts__graph_new(const char *name, ts_graph *parent)
{
  ts_graph *g = g_new0(ts_graph, 1);
  g->name = g_strdup(name);
  g->parent = parent;
  g->nodes = g_ptr_array_new_with_free_func(node_free);
  g->inputs = g_array_new(FALSE, FALSE, sizeof(int));
  g->outputs = g_array_new(FALSE, FALSE, sizeof(ts_port));
  g->strings = g_string_chunk_new(1024);
  g->names = g_hash_table_new(g_str_hash, g_str_equal);
  g->next_suffix = g_hash_table_new(NULL, NULL);
  return g;
}

void ts__graph_free(ts_graph *g)
{
  if (!g)
    return;
  g_ptr_array_unref(g->nodes);
  g_array_unref(g->inputs);
  g_array_unref(g->outputs);
  g_hash_table_unref(g->names);
  g_hash_table_unref(g->next_suffix);
  g_string_chunk_free(g->strings);
  g_free(g->name);
  g_free(g);
}

const char *ts__graph_intern(ts_graph *g, const char *s)
{
  return s ? g_string_chunk_insert_const(g->strings, s) : NULL;
}

/* "scope/hint", then "scope/hint_1", "scope/hint_2", ... until unused.
 * Every name taken is interned already, so a candidate is interned before
 * it is tried: one that is taken costs no memory, one that is free is
 * taken by the same hash table insertion that tests it.  Names are never
 * given back, so a base's next search starts where its last one ended:
 * n nodes of one hint cost n tries, not n²/2. */
static const char *unique_name(ts_graph *g, const char *scope, const char *hint)
{
  char *base = *scope ? g_strconcat(scope, "/", hint, NULL) : g_strdup(hint);
  const char *interned = ts__graph_intern(g, base), *name = interned;
  if (!g_hash_table_add(g->names, (gpointer)name)) {
    int i = MAX(1, GPOINTER_TO_INT(g_hash_table_lookup(g->next_suffix, interned)));
    for (;; i++) {
      char *next = g_strdup_printf("%s_%d", base, i);
      name = ts__graph_intern(g, next);
      g_free(next);
      if (g_hash_table_add(g->names, (gpointer)name))
        break;
    }
    g_hash_table_insert(g->next_suffix, (gpointer)interned, GINT_TO_POINTER(i + 1));
  }
  g_free(base);
  return name;
}

/* s interned, the last one of its slot (0: file, 1: function) reused. */
static const char *intern_loc(ts_graph *g, int slot, const char *s)
{
  const char *last = g->last_loc[slot];
  if (!s || !last || strcmp(s, last) != 0)
    g->last_loc[slot] = last = ts__graph_intern(g, s);
  return last;
}

/* A node named `name` (interned, taken) in scope (interned). */
static ts_node *add_node(ts_graph *g, ts_op op, const char *name, const char *scope, ts_loc loc,
                         const ts_port *inputs, int n_inputs, const ts_attr *attrs, int n_attrs,
                         const ts_info *outputs, int n_outputs)
{
  ts_node *n = g_new0(ts_node, 1);
  n->id = (int)g->nodes->len;
  n->op = op;
  n->graph = g;
  n->scope = scope;
  n->name = name;
  n->loc = (ts_loc){ intern_loc(g, 0, loc.file), intern_loc(g, 1, loc.func), loc.line };
  n->n_inputs = n_inputs;
  n->inputs = g_memdup2(inputs, sizeof *inputs * (size_t)n_inputs);
  n->n_attrs = n_attrs;
  n->attrs = g_memdup2(attrs, sizeof *attrs * (size_t)n_attrs);
  for (int i = 0; i < n_attrs; i++)
    if (n->attrs[i].type == TS_ATTR_STRING)
      n->attrs[i].s = ts__graph_intern(g, n->attrs[i].s);
  n->n_outputs = n_outputs;
  n->outputs = g_memdup2(outputs, sizeof *outputs * (size_t)n_outputs);
  n->input_index = -1;
  n->stateful = (ts__op_def(op)->flags & TS_OPF_STATEFUL) != 0;
  g_ptr_array_add(g->nodes, n);
  return n;
}

ts_node *ts__graph_add_node(ts_graph *g, ts_op op, const char *hint, const char *scope,
                            ts_loc loc, const ts_port *inputs, int n_inputs,
                            const ts_attr *attrs, int n_attrs, const ts_info *outputs,
                            int n_outputs)
{
  const char *in_scope = ts__graph_intern(g, scope ? scope : "");
  const char *name = unique_name(g, in_scope, hint ? hint : ts_op_name(op));
  return add_node(g, op, name, in_scope, loc, inputs, n_inputs, attrs, n_attrs, outputs,
                  n_outputs);
}

ts_node *ts__graph_add_named_node(ts_graph *g, ts_op op, const char *name, const char *scope,
                                  ts_loc loc, const ts_port *inputs, int n_inputs,
                                  const ts_attr *attrs, int n_attrs, const ts_info *outputs,
                                  int n_outputs)
{
  if (g_hash_table_contains(g->names, name))
    return NULL;
  const char *interned = ts__graph_intern(g, name);
  g_hash_table_add(g->names, (gpointer)interned);
  return add_node(g, op, interned, ts__graph_intern(g, scope), loc, inputs, n_inputs, attrs,
                  n_attrs, outputs, n_outputs);
}

void ts__graph_add_input(ts_graph *g, ts_node *placeholder)
{
  placeholder->input_index = (int)g->inputs->len;
  g_array_append_val(g->inputs, placeholder->id);
}

void ts__graph_add_output(ts_graph *g, ts_port port)
{
  g_array_append_val(g->outputs, port);
}

void ts__node_set_value(ts_node *n, ts_tensor *value)
{
  ts_tensor_ref(value);
  ts_tensor_unref(n->value);
  n->value = value;
}

void ts__node_set_control(ts_node *n, const int *before, int n_before)
{
  g_free(n->control);
  n->control = g_memdup2(before, sizeof *before * (size_t)n_before);
  n->n_control = n_before;
}

void ts__node_set_site(ts_node *n, bool has_site, uint64_t site, int occurrence)
{
  n->has_site = has_site;
  n->site = site;
  n->occurrence = occurrence;
}

void ts__node_set_stateful(ts_node *n, bool stateful)
{
  n->stateful = stateful;
}

void ts__node_add_control(ts_node *node, int before)
{
  for (int i = 0; i < node->n_control; i++)
    if (node->control[i] == before)
      return;
  node->control = g_renew(int, node->control, node->n_control + 1);
  node->control[node->n_control++] = before;
}

/* Does g (or a subgraph of it) hold a stateful node? */
static bool holds_stateful(const ts_graph *g)
{
  for (guint id = 0; g && id < g->nodes->len; id++)
    if (ts__graph_node(g, (int)id)->stateful)
      return true;
  return false;
}

void ts__node_add_subgraph(ts_node *node, ts_graph *sub)
{
  /* If and While are stateful only when their subgraphs are (non-strict
   * execution prunes an unused, side-effect-free branch or loop). */
  node->stateful |= holds_stateful(sub);
  node->subgraphs = g_renew(ts_graph *, node->subgraphs, node->n_subgraphs + 1);
  node->subgraphs[node->n_subgraphs++] = sub;
}

/* ---- public accessors ------------------------------------------------------ */

void ts_graph_free(ts_graph *g)
{
  TS_CHECK_ARG(!g || !g->parent, ); /* a subgraph belongs to its node */
  ts__graph_free(g);
}

const char *ts_graph_name(const ts_graph *g)
{
  return g->name;
}

const ts_graph *ts_graph_parent(const ts_graph *g)
{
  return g->parent;
}

int ts_graph_n_nodes(const ts_graph *g)
{
  return (int)g->nodes->len;
}

const ts_node *ts_graph_node(const ts_graph *g, int id)
{
  g_return_val_if_fail(id >= 0 && id < (int)g->nodes->len, NULL);
  return g->nodes->pdata[id];
}

int ts_graph_n_inputs(const ts_graph *g)
{
  return (int)g->inputs->len;
}

int ts_graph_input(const ts_graph *g, int i)
{
  g_return_val_if_fail(i >= 0 && i < (int)g->inputs->len, -1);
  return g_array_index(g->inputs, int, i);
}

int ts_graph_n_outputs(const ts_graph *g)
{
  return (int)g->outputs->len;
}

ts_port ts_graph_output(const ts_graph *g, int i)
{
  g_return_val_if_fail(i >= 0 && i < (int)g->outputs->len, ((ts_port){ -1, -1 }));
  return g_array_index(g->outputs, ts_port, i);
}

int ts_node_id(const ts_node *n)
{
  return n->id;
}

ts_op ts_node_op(const ts_node *n)
{
  return n->op;
}

const char *ts_node_name(const ts_node *n)
{
  return n->name;
}

char *ts_node_path(const ts_node *n)
{
  size_t size = strlen(n->name) + 1;
  for (const ts_graph *g = n->graph; g->parent; g = g->parent)
    size += strlen(g->name) + 1;
  char *path = malloc(size), *end = path + size - 1;
  if (!path)
    return NULL;
  *end = '\0';
  size_t len = strlen(n->name);
  memcpy(end -= len, n->name, len);
  for (const ts_graph *g = n->graph; g->parent; g = g->parent) { /* innermost first, from the end */
    *--end = '/';
    len = strlen(g->name);
    memcpy(end -= len, g->name, len);
  }
  return path;
}

const char *ts_node_scope(const ts_node *n)
{
  return n->scope;
}

ts_loc ts_node_loc(const ts_node *n)
{
  return n->loc;
}

const ts_graph *ts_node_graph(const ts_node *n)
{
  return n->graph;
}

int ts_node_n_inputs(const ts_node *n)
{
  return n->n_inputs;
}

ts_port ts_node_input(const ts_node *n, int i)
{
  g_return_val_if_fail(i >= 0 && i < n->n_inputs, ((ts_port){ -1, -1 }));
  return n->inputs[i];
}

int ts_node_n_control_inputs(const ts_node *n)
{
  return n->n_control;
}

int ts_node_control_input(const ts_node *n, int i)
{
  g_return_val_if_fail(i >= 0 && i < n->n_control, -1);
  return n->control[i];
}

int ts_node_n_outputs(const ts_node *n)
{
  return n->n_outputs;
}

ts_dtype ts_node_output_dtype(const ts_node *n, int i)
{
  g_return_val_if_fail(i >= 0 && i < n->n_outputs, TS_F32);
  return n->outputs[i].dtype;
}

ts_shape ts_node_output_shape(const ts_node *n, int i)
{
  g_return_val_if_fail(i >= 0 && i < n->n_outputs, TS_SCALAR_SHAPE);
  return n->outputs[i].shape;
}

int ts_node_n_subgraphs(const ts_node *n)
{
  return n->n_subgraphs;
}

const ts_graph *ts_node_subgraph(const ts_node *n, int i)
{
  g_return_val_if_fail(i >= 0 && i < n->n_subgraphs, NULL);
  return n->subgraphs[i];
}

const ts_tensor *ts_node_value(const ts_node *n)
{
  return n->value;
}

bool ts_node_is_stateful(const ts_node *n)
{
  return n->stateful;
}

int ts_node_n_origins(const ts_node *n)
{
  return n->n_origins ? n->n_origins : 1;
}

const ts_node *ts_node_origin(const ts_node *n, int i)
{
  TS_CHECK_ARG(n && i >= 0 && i < ts_node_n_origins(n), NULL);
  return n->n_origins ? n->origins[i] : n;
}

const ts_node *ts_node_gradient_of(const ts_node *n)
{
  TS_CHECK_ARG(n, NULL);
  if (!n->gradient_of && n->n_origins == 1 && n->origins[0] != n)
    return n->origins[0]->gradient_of; /* an optimized graph's copy */
  return n->gradient_of;
}

bool ts_node_has_eager_twin(const ts_node *n)
{
  if (!n->n_origins)
    return n->has_site;
  /* an optimized node: a copy of one traced node has that node's twin */
  return n->n_origins == 1 && n->origins[0] != n && n->op == n->origins[0]->op &&
         n->origins[0]->has_site;
}

int ts_node_n_attrs(const ts_node *n)
{
  return n->n_attrs;
}

const char *ts_node_attr_name(const ts_node *n, int i)
{
  const ts_op_def *def = ts__op_def(n->op);
  g_return_val_if_fail(i >= 0 && i < n->n_attrs && i < def->n_attrs, NULL);
  return def->attrs[i].name;
}

char *ts_node_attr_to_string(const ts_node *n, int i)
{
  g_return_val_if_fail(i >= 0 && i < n->n_attrs, NULL);
  return ts__attr_to_string(&n->attrs[i]);
}

/* ---- rewriting ----------------------------------------------------------------------- */

struct ts_rewrite {
  const ts_graph *src;
  ts_graph *dst;
  ts_port *map;   /* per src port (offset[node] + index): the dst port */
  int *offset;
  int *node_map;  /* per src node: its dst node (control edges), -1 if none */
};

void ts__node_set_origins(ts_node *n, const ts_node *const *origins, int n_origins)
{
  g_free(n->origins);
  n->origins = g_memdup2(origins, sizeof *origins * (size_t)n_origins);
  n->n_origins = n_origins;
}

static void copy_origins(ts_node *dst, const ts_node *src)
{
  if (src->n_origins)
    ts__node_set_origins(dst, (const ts_node *const *)src->origins, src->n_origins);
  else
    ts__node_set_origins(dst, &src, 1);
}

ts_rewrite *ts__rewrite_begin(const ts_graph *src, ts_graph *parent)
{
  ts_rewrite *rw = g_new0(ts_rewrite, 1);
  rw->src = src;
  rw->dst = ts__graph_new(src->name, parent);
  guint n = src->nodes->len, n_ports = 0;
  rw->offset = g_new(int, n + 1);
  for (guint id = 0; id < n; id++) {
    rw->offset[id] = (int)n_ports;
    n_ports += (guint)ts__graph_node(src, (int)id)->n_outputs;
  }
  rw->offset[n] = (int)n_ports;
  rw->map = g_new(ts_port, n_ports + 1);
  for (guint i = 0; i < n_ports; i++)
    rw->map[i] = (ts_port){ -1, -1 };
  rw->node_map = g_new(int, n + 1);
  for (guint id = 0; id < n; id++)
    rw->node_map[id] = -1;
  return rw;
}

ts_graph *ts__rewrite_graph(const ts_rewrite *rw)
{
  return rw->dst;
}

ts_port ts__rewrite_port(const ts_rewrite *rw, ts_port p)
{
  return rw->map[rw->offset[p.node] + p.index];
}

/* A node of dst like n: same op, name, scope, location, attributes. */
static ts_node *add_like(ts_rewrite *rw, const ts_node *n, ts_op op, const ts_port *inputs,
                         int n_inputs, const ts_attr *attrs, int n_attrs, const ts_info *outputs,
                         int n_outputs)
{
  const char *slash = strrchr(n->name, '/');
  ts_node *c = ts__graph_add_node(rw->dst, op, slash ? slash + 1 : n->name, n->scope, n->loc,
                                  inputs, n_inputs, attrs, n_attrs, outputs, n_outputs);
  c->has_site = n->has_site;
  c->site = n->site;
  c->occurrence = n->occurrence;
  return c;
}

ts_node *ts__rewrite_copy(ts_rewrite *rw, const ts_node *n, ts_rewrite_sub_fn sub_fn, void *data)
{
  ts_port inputs[TS_MAX_INPUTS];
  for (int i = 0; i < n->n_inputs; i++)
    inputs[i] = ts__rewrite_port(rw, n->inputs[i]);
  ts_node *c = add_like(rw, n, n->op, inputs, n->n_inputs, n->attrs, n->n_attrs, n->outputs,
                        n->n_outputs);
  for (int i = 0; i < n->n_control; i++)
    if (rw->node_map[n->control[i]] >= 0)
      ts__node_add_control(c, rw->node_map[n->control[i]]);
  c->value = ts_tensor_ref(n->value);
  c->input_index = n->input_index; /* the inputs keep their order (ts__rewrite_end) */
  for (int s = 0; s < n->n_subgraphs; s++)
    ts__node_add_subgraph(c, sub_fn ? sub_fn(n->subgraphs[s], rw->dst, data)
                                    : ts__graph_copy(n->subgraphs[s], rw->dst));
  copy_origins(c, n);
  c->stateful = n->stateful;
  rw->node_map[n->id] = c->id;
  for (int i = 0; i < n->n_outputs; i++)
    rw->map[rw->offset[n->id] + i] = (ts_port){ c->id, i };
  return c;
}

ts_node *ts__rewrite_constant(ts_rewrite *rw, const ts_node *n, int index, ts_tensor *value)
{
  ts_info info = { value->dtype, value->shape };
  ts_node *c = add_like(rw, n, TS_OP_CONST, NULL, 0, NULL, 0, &info, 1);
  c->has_site = false; /* folded away: no op runs */
  c->value = ts_tensor_ref(value);
  /* It stands for n and for the folded constants n read. */
  GPtrArray *origins = g_ptr_array_new();
  const ts_node *self = n;
  for (int i = 0; i < (n->n_origins ? n->n_origins : 1); i++)
    g_ptr_array_add(origins, (gpointer)(n->n_origins ? n->origins[i] : self));
  for (int i = 0; i < n->n_inputs; i++) {
    ts_port p = ts__rewrite_port(rw, n->inputs[i]);
    const ts_node *in = p.node >= 0 ? ts__graph_node(rw->dst, p.node) : NULL;
    if (!in || in->op != TS_OP_CONST || !in->n_origins || in->origins[0]->op == TS_OP_CONST)
      continue;
    for (int k = 0; k < in->n_origins; k++)
      if (!g_ptr_array_find(origins, in->origins[k], NULL))
        g_ptr_array_add(origins, (gpointer)in->origins[k]);
  }
  ts__node_set_origins(c, (const ts_node *const *)origins->pdata, (int)origins->len);
  g_ptr_array_unref(origins);
  if (rw->node_map[n->id] < 0)
    rw->node_map[n->id] = c->id;
  rw->map[rw->offset[n->id] + index] = (ts_port){ c->id, 0 };
  return c;
}

/* Marks what the outputs and the stateful nodes need (graph inputs stay:
 * they are the calling convention). */
static bool *needed_nodes(const ts_graph *g)
{
  int n = (int)g->nodes->len;
  bool *needed = g_new0(bool, g->nodes->len + 1);
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(int));
  for (guint i = 0; i < g->outputs->len; i++)
    g_array_append_val(stack, g_array_index(g->outputs, ts_port, i).node);
  for (int id = 0; id < n; id++) {
    const ts_node *node = ts__graph_node(g, id);
    if (node->stateful || node->input_index >= 0)
      g_array_append_val(stack, id);
  }
  while (stack->len) {
    int id = g_array_index(stack, int, stack->len - 1);
    g_array_set_size(stack, stack->len - 1);
    if (needed[id])
      continue;
    needed[id] = true;
    const ts_node *node = ts__graph_node(g, id);
    for (int i = 0; i < node->n_inputs; i++)
      g_array_append_val(stack, node->inputs[i].node);
    for (int i = 0; i < node->n_control; i++)
      g_array_append_val(stack, node->control[i]);
  }
  g_array_unref(stack);
  return needed;
}

static ts_graph *no_subgraph(const ts_graph *sub, ts_graph *parent, void *data)
{
  return NULL;
}

bool ts__graph_all_needed(const ts_graph *g)
{
  bool *needed = needed_nodes(g);
  bool all = true;
  for (guint id = 0; id < g->nodes->len && all; id++)
    all = needed[id];
  g_free(needed);
  return all;
}

static void rewrite_free(ts_rewrite *rw)
{
  g_free(rw->map);
  g_free(rw->offset);
  g_free(rw->node_map);
  g_free(rw);
}

ts_node *ts__rewrite_add(ts_rewrite *rw, const ts_node *like, ts_op op, const ts_port *inputs,
                         int n_inputs, const ts_attr *attrs, int n_attrs, const ts_info *outputs,
                         int n_outputs)
{
  ts_node *c = add_like(rw, like, op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs);
  c->has_site = false; /* no op of the user's code is exactly this one */
  c->stateful = (ts__op_def(op)->flags & TS_OPF_STATEFUL) != 0;
  return c;
}

void ts__rewrite_map(ts_rewrite *rw, ts_port src_port, ts_port dst_port)
{
  rw->map[rw->offset[src_port.node] + src_port.index] = dst_port;
  if (rw->node_map[src_port.node] < 0)
    rw->node_map[src_port.node] = dst_port.node;
}

void ts__node_add_origins_of(ts_node *n, const ts_node *src)
{
  int n_src = src->n_origins ? src->n_origins : 1;
  int have = n->n_origins; /* 0: a new node, standing for no one yet */
  const ts_node **all = g_new(const ts_node *, have + n_src);
  int count = 0;
  for (int i = 0; i < have; i++)
    all[count++] = n->origins[i];
  for (int i = 0; i < n_src; i++) {
    const ts_node *o = src->n_origins ? src->origins[i] : src;
    bool dup = false;
    for (int k = 0; k < count && !dup; k++)
      dup = all[k] == o;
    if (!dup)
      all[count++] = o;
  }
  ts__node_set_origins(n, all, count);
  g_free(all);
}

ts_graph *ts__rewrite_end(ts_rewrite *rw)
{
  return ts__rewrite_finish(rw, true);
}

ts_graph *ts__rewrite_finish(ts_rewrite *rw, bool drop_dead)
{
  ts_graph *g = rw->dst;
  for (guint i = 0; i < rw->src->inputs->len; i++)
    g_array_append_val(g->inputs, rw->node_map[g_array_index(rw->src->inputs, int, i)]);
  for (guint i = 0; i < rw->src->outputs->len; i++) {
    ts_port p = ts__rewrite_port(rw, g_array_index(rw->src->outputs, ts_port, i));
    g_array_append_val(g->outputs, p);
  }
  rewrite_free(rw);
  if (!drop_dead)
    return g;
  bool *needed = needed_nodes(g);
  bool all = true;
  for (guint id = 0; id < g->nodes->len; id++)
    all &= needed[id];
  if (all) {
    g_free(needed);
    return g;
  }
  /* Drop dead nodes: copy the needed ones into a fresh graph. */
  ts_rewrite *prune = ts__rewrite_begin(g, g->parent);
  for (guint id = 0; id < g->nodes->len; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    if (!needed[id])
      continue;
    ts_node *c = ts__rewrite_copy(prune, n, no_subgraph, NULL);
    /* moved, not copied: the subgraphs and provenance stay as they were */
    for (int s = 0; s < c->n_subgraphs; s++) {
      c->subgraphs[s] = n->subgraphs[s];
      c->subgraphs[s]->parent = prune->dst;
      ((ts_node *)n)->subgraphs[s] = NULL;
    }
    ts__node_set_origins(c, (const ts_node *const *)n->origins, n->n_origins);
    c->stateful = n->stateful;
  }
  g_free(needed);
  ts_graph *pruned = ts__rewrite_end(prune);
  ts__graph_free(g);
  return pruned;
}

ts_graph *ts__graph_copy(const ts_graph *g, ts_graph *parent)
{
  ts_rewrite *rw = ts__rewrite_begin(g, parent);
  for (guint id = 0; id < g->nodes->len; id++)
    ts__rewrite_copy(rw, ts__graph_node(g, (int)id), NULL, NULL);
  return ts__rewrite_end(rw);
}
