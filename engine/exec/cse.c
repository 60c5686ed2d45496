/* cse.c — common-subexpression elimination: a node computing what an
 * earlier node of the same graph computes (same op, same inputs after
 * merging, same control inputs, same attributes; Consts: the same value)
 * is dropped and its users read the earlier one, which then stands for
 * both.  Never merged: stateful nodes (their side effects happen once per
 * node), random ops, nodes reading a variable handle directly (its value
 * changes between them), TensorArray makers (each call makes a list of its
 * own).  Subgraphs are processed on their own: a node of a branch is never
 * merged with one outside it, whose value may not exist when it runs. */
#include "exec.h"

/* Consts up to this size are compared by value; larger ones by identity. */
#define CSE_VALUE_BYTES 1024

/* Where keys are made: the rewrite in progress (ports as mapped into its
 * graph), or, for cse_might_change, the old graph itself (rw NULL). */
typedef struct key_view {
  const ts_rewrite *rw;
  const ts_graph *g;
} key_view;

static ts_port view_port(const key_view *v, ts_port p)
{
  return v->rw ? ts__rewrite_port(v->rw, p) : p;
}

static const ts_graph *view_graph(const key_view *v)
{
  return v->rw ? ts__rewrite_graph(v->rw) : v->g;
}

static bool mergeable(const key_view *v, const ts_node *n)
{
  const ts_op_def *def = ts__op_def(n->op);
  if (n->stateful || n->n_subgraphs || (def->flags & (TS_OPF_RANDOM | TS_OPF_INPUT)))
    return false;
  for (int i = 0; i < n->n_outputs; i++)
    if (n->outputs[i].dtype == TS_VARIANT)
      return false;
  for (int i = 0; i < n->n_inputs; i++) {
    ts_port p = view_port(v, n->inputs[i]);
    if (p.node < 0 || ts__graph_node(view_graph(v), p.node)->op == TS_OP_VAR_HANDLE)
      return false;
  }
  return true;
}

static void append_attr(GString *key, const ts_attr *a)
{
  g_string_append_printf(key, "|%d:", (int)a->type);
  switch (a->type) {
  case TS_ATTR_INT: g_string_append_printf(key, "%" G_GINT64_FORMAT, a->i); break;
  case TS_ATTR_FLOAT: g_string_append_printf(key, "%a", a->f); break;
  case TS_ATTR_BOOL: g_string_append_c(key, a->b ? '1' : '0'); break;
  case TS_ATTR_DTYPE: g_string_append_printf(key, "%d", (int)a->dtype); break;
  case TS_ATTR_INTS:
    g_string_append_printf(key, "%d", a->ints.n);
    for (int i = 0; i < a->ints.n; i++)
      g_string_append_printf(key, ",%" G_GINT64_FORMAT, a->ints.v[i]);
    break;
  case TS_ATTR_SHAPE:
    g_string_append_printf(key, "%d", a->shape.rank);
    for (int i = 0; i < a->shape.rank; i++)
      g_string_append_printf(key, ",%" G_GINT64_FORMAT, a->shape.dim[i]);
    break;
  case TS_ATTR_STRING:
    g_string_append_printf(key, "%zu:%s", a->s ? strlen(a->s) : 0, a->s ? a->s : "");
    break;
  default: break;
  }
}

/* What identifies n's computation in the new graph; NULL if n must stay. */
static char *node_key(const key_view *view, const ts_node *n)
{
  if (!mergeable(view, n))
    return NULL;
  GString *key = g_string_new(NULL);
  g_string_append_printf(key, "%d(", (int)n->op);
  for (int i = 0; i < n->n_inputs; i++) {
    ts_port p = view_port(view, n->inputs[i]);
    g_string_append_printf(key, "%d.%d,", p.node, p.index);
  }
  g_string_append(key, ")^(");
  /* control inputs, sorted (by the old graph's ids: equal only when the same) */
  int ctl[TS_MAX_INPUTS * 4];
  int n_ctl = 0;
  for (int i = 0; i < n->n_control && n_ctl < (int)G_N_ELEMENTS(ctl); i++)
    ctl[n_ctl++] = n->control[i];
  if (n_ctl < n->n_control) {
    g_string_free(key, TRUE);
    return NULL;
  }
  for (int i = 1; i < n_ctl; i++)
    for (int k = i; k > 0 && ctl[k - 1] > ctl[k]; k--) {
      int t = ctl[k];
      ctl[k] = ctl[k - 1];
      ctl[k - 1] = t;
    }
  for (int i = 0; i < n_ctl; i++)
    g_string_append_printf(key, "%d,", ctl[i]);
  g_string_append_c(key, ')');
  for (int i = 0; i < n->n_attrs; i++)
    append_attr(key, &n->attrs[i]);
  for (int i = 0; i < n->n_outputs; i++) {
    char buf[TS_INFO_STR];
    g_string_append_printf(key, "->%s", ts__info_str(buf, n->outputs[i].dtype, n->outputs[i].shape));
  }
  const ts_tensor *v = n->value;
  if (v) {
    size_t bytes = (size_t)v->size * ts_dtype_size(v->dtype);
    bool by_value = n->op == TS_OP_CONST && v->data && ts__host_visible(v->backend) &&
                    v->dtype != TS_STRING && bytes <= CSE_VALUE_BYTES;
    if (by_value)
      for (size_t i = 0; i < bytes; i++)
        g_string_append_printf(key, "%02x", ((const unsigned char *)v->data)[i]);
    else
      g_string_append_printf(key, "@%p", (const void *)v);
  }
  return g_string_free(key, FALSE);
}

ts_graph *ts__pass_cse(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats)
{
  ts_rewrite *rw = ts__rewrite_begin(g, parent);
  ts_graph *dst = ts__rewrite_graph(rw);
  key_view view = { rw, dst };
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint id = 0; id < g->nodes->len; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    char *key = node_key(&view, n);
    gpointer found;
    if (key && g_hash_table_lookup_extended(seen, key, NULL, &found)) {
      ts_node *kept = ts__graph_node(dst, GPOINTER_TO_INT(found));
      for (int i = 0; i < n->n_outputs; i++)
        ts__rewrite_map(rw, (ts_port){ n->id, i }, (ts_port){ kept->id, i });
      ts__node_add_origins_of(kept, n);
      stats->count++;
      g_free(key);
      continue;
    }
    ts_node *c = ts__pass_copy(rw, n, ts__pass_cse, stats);
    if (key)
      g_hash_table_insert(seen, key, GINT_TO_POINTER(c->id));
  }
  g_hash_table_unref(seen);
  return ts__rewrite_finish(rw, false);
}

/* Until a first merge the rewrite maps ports one to one, so the first
 * merge is between two nodes whose keys over the old graph are equal:
 * without such a pair (in g or a subgraph, each on its own) nothing merges. */
bool ts__cse_might_change(const ts_graph *g)
{
  key_view view = { NULL, g };
  GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  bool found = false;
  for (guint id = 0; id < g->nodes->len && !found; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    char *key = node_key(&view, n);
    if (key && !g_hash_table_add(seen, key))
      found = true;
    for (int s = 0; s < n->n_subgraphs && !found; s++)
      found = ts__cse_might_change(n->subgraphs[s]);
  }
  g_hash_table_unref(seen);
  return found;
}
