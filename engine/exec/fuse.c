/* fuse.c — the fusion pass, in two stages over the graph and each subgraph:
 *  1. MatMul (rank 2, f32/f64) or Conv2D (f32/f64) whose only user adds a
 *     vector along its last dim (a bias), and/or whose (or the bias add's)
 *     only user is Relu, Sigmoid or Tanh, becomes one _FusedMatMul or
 *     _FusedConv2D node: one kernel call, the epilogue applied as it
 *     stores;
 *  2. chains of float elementwise ops (rows flagged TS_OPF_FUSIBLE) where each
 *     op but the last has the next as its only user become one
 *     FusedElementwise node running them in one loop over the data, with
 *     broadcasting.
 * A fused node stands for every node it replaces (its provenance), so the
 * viewer shows "fused from MatMul, Add, Relu" and the profiler charges its
 * time back to them.  Nothing with control edges, side effects or users
 * outside the chain is fused. */
#include "exec.h"
#include "kernels/kernels.h"

#include <stdio.h>

#define FUSE_MAX_INSTRS 32

static ts_info port_info(const ts_graph *g, ts_port p)
{
  return ts__graph_node(g, p.node)->outputs[p.index];
}

static bool is_float(ts_dtype dt)
{
  return dt == TS_F32 || dt == TS_F64;
}

/* The node consuming all of id's outputs when it is a plain one-output op. */
static const ts_node *only_user(const ts_graph *g, const int *user, int id)
{
  if (user[id] < 0)
    return NULL;
  const ts_node *u = ts__graph_node(g, user[id]);
  return u->n_control || u->stateful || u->n_outputs != 1 ? NULL : u;
}

/* ---- stage 1: MatMul or Conv2D + bias + activation ---------------------------------- */

typedef struct mm_chain {
  const ts_node *mm, *bias_add, *act;
  ts_port bias;
} mm_chain;

/* The ops stage 1 fuses into: both keep their two attributes (transposes;
 * strides and padding) and add the activation's name. */
static ts_op fused_op_of(ts_op op)
{
  return op == TS_OP_MATMUL ? TS_OP_FUSED_MATMUL : op == TS_OP_CONV2D ? TS_OP_FUSED_CONV2D : TS_OP_COUNT;
}

static bool find_chain(const ts_graph *g, const int *user, const ts_node *mm, mm_chain *ch)
{
  *ch = (mm_chain){ mm, NULL, NULL, { -1, -1 } };
  bool conv = mm->op == TS_OP_CONV2D;
  if (fused_op_of(mm->op) == TS_OP_COUNT)
    return false;
  ts_info out = mm->outputs[0];
  int rank = conv ? 4 : 2;
  if (mm->n_control || !is_float(out.dtype) || out.shape.rank != rank ||
      port_info(g, mm->inputs[0]).shape.rank != rank || port_info(g, mm->inputs[1]).shape.rank != rank)
    return false;
  int64_t cols = out.shape.dim[rank - 1];
  const ts_node *cur = mm, *u = only_user(g, user, mm->id);
  if (u && u->op == TS_OP_ADD && cols >= 0) {
    int side = u->inputs[0].node == mm->id ? 1 : 0;
    ts_port other = u->inputs[side];
    ts_info bi = port_info(g, other);
    bool vector = bi.dtype == out.dtype &&
                  ((bi.shape.rank == 1 && bi.shape.dim[0] == cols) ||
                   (!conv && bi.shape.rank == 2 && bi.shape.dim[0] == 1 && bi.shape.dim[1] == cols));
    if (other.node != mm->id && vector &&
        ts_shape_equal(u->outputs[0].shape, out.shape)) {
      ch->bias_add = u;
      ch->bias = other;
      cur = u;
      u = only_user(g, user, u->id);
    }
  }
  if (u && ts__act_from_name(ts_op_name(u->op)) > TS_ACT_NONE) { /* an epilogue the kernels apply */
    ch->act = u;
    cur = u;
  }
  return cur != mm;
}

static void emit_chain(ts_rewrite *rw, const mm_chain *ch, ts_pass_stats *stats)
{
  const ts_node *last = ch->act ? ch->act : ch->bias_add;
  ts_port in[3] = { ts__rewrite_port(rw, ch->mm->inputs[0]),
                    ts__rewrite_port(rw, ch->mm->inputs[1]), { -1, -1 } };
  if (ch->bias_add)
    in[2] = ts__rewrite_port(rw, ch->bias);
  ts_attr attrs[3] = { ch->mm->attrs[0], ch->mm->attrs[1],
                       { .type = TS_ATTR_STRING, .s = ch->act ? ts_op_name(ch->act->op) : "" } };
  ts_node *f = ts__rewrite_add(rw, ch->mm, fused_op_of(ch->mm->op), in, ch->bias_add ? 3 : 2, attrs,
                               3, last->outputs, 1);
  const ts_node *parts[] = { ch->mm, ch->bias_add, ch->act };
  for (size_t i = 0; i < G_N_ELEMENTS(parts); i++)
    if (parts[i]) {
      ts__node_add_origins_of(f, parts[i]);
      stats->count++;
    }
  stats->into++;
  ts__rewrite_map(rw, (ts_port){ last->id, 0 }, (ts_port){ f->id, 0 });
}

static ts_graph *fuse_matmul(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats)
{
  int n = (int)g->nodes->len;
  int *user = ts__single_users(g);
  /* per node: the chain it ends (emitted there), or it is part of one (skipped) */
  mm_chain *ends = g_new0(mm_chain, n ? n : 1);
  bool *inside = g_new0(bool, n ? n : 1);
  for (int id = 0; id < n; id++) {
    mm_chain ch;
    if (!find_chain(g, user, ts__graph_node(g, id), &ch))
      continue;
    const ts_node *last = ch.act ? ch.act : ch.bias_add;
    ends[last->id] = ch;
    inside[ch.mm->id] = true;
    if (ch.bias_add && ch.act)
      inside[ch.bias_add->id] = true;
  }
  ts_rewrite *rw = ts__rewrite_begin(g, parent);
  for (int id = 0; id < n; id++) {
    if (ends[id].mm)
      emit_chain(rw, &ends[id], stats);
    else if (!inside[id])
      ts__pass_copy(rw, ts__graph_node(g, id), fuse_matmul, stats);
  }
  g_free(user);
  g_free(ends);
  g_free(inside);
  return ts__rewrite_finish(rw, false);
}

/* ---- stage 2: elementwise chains --------------------------------------------------- */

static bool ew_fusible(const ts_graph *g, const ts_node *n)
{
  if (!(ts__op_def(n->op)->flags & TS_OPF_FUSIBLE) || n->n_control || n->stateful || n->n_outputs != 1 ||
      !is_float(n->outputs[0].dtype))
    return false;
  for (int i = 0; i < n->n_inputs; i++)
    if (port_info(g, n->inputs[i]).dtype != n->outputs[0].dtype)
      return false;
  return true;
}

typedef struct cluster {
  GArray *members;   /* node ids, ascending */
  GArray *externals; /* ts_port: the inputs from outside, in first-use order */
} cluster;

/* Adds root and the absorbed nodes it reads, transitively, to members;
 * false as soon as there are more than FUSE_MAX_INSTRS (such a cluster is
 * not fused, so the rest need not be found).  An absorbed node has one
 * user, so it belongs to one cluster: `seen`, shared by all clusters,
 * counts a node read twice (x * x) once, and the walk is linear in the
 * graph where a search of members made a long chain quadratic.  A stack,
 * not recursion: a chain can be as deep as the graph. */
static bool collect(const ts_graph *g, const bool *absorbed, bool *seen, int root, GArray *members)
{
  int stack[FUSE_MAX_INSTRS * TS_MAX_INPUTS + 1], top = 0;
  stack[top++] = root;
  while (top) {
    int id = stack[--top];
    if (seen[id])
      continue;
    seen[id] = true;
    if (members->len == FUSE_MAX_INSTRS)
      return false;
    g_array_append_val(members, id);
    const ts_node *n = ts__graph_node(g, id);
    for (int i = 0; i < n->n_inputs; i++)
      if (absorbed[n->inputs[i].node] && !seen[n->inputs[i].node])
        stack[top++] = n->inputs[i].node;
  }
  return true;
}

static int cmp_int(gconstpointer a, gconstpointer b)
{
  return *(const int *)a - *(const int *)b;
}

/* The program of root's cluster (members sorted); its externals filled. */
static char *cluster_program(const ts_graph *g, cluster *cl)
{
  GString *prog = g_string_new(NULL);
  for (guint k = 0; k < cl->members->len; k++) {
    const ts_node *n = ts__graph_node(g, g_array_index(cl->members, int, k));
    g_string_append_printf(prog, "%s%s", k ? "; " : "", ts__op_def(n->op)->api_name);
    for (int i = 0; i < n->n_inputs; i++) {
      int at = -1;
      for (guint m = 0; m < cl->members->len && at < 0; m++)
        if (g_array_index(cl->members, int, m) == n->inputs[i].node)
          at = (int)m;
      if (at >= 0) {
        g_string_append_printf(prog, " t%d", at);
        continue;
      }
      int x = -1;
      for (guint e = 0; e < cl->externals->len && x < 0; e++) {
        ts_port p = g_array_index(cl->externals, ts_port, e);
        if (p.node == n->inputs[i].node && p.index == n->inputs[i].index)
          x = (int)e;
      }
      if (x < 0) {
        x = (int)cl->externals->len;
        g_array_append_val(cl->externals, n->inputs[i]);
      }
      g_string_append_printf(prog, " x%d", x);
    }
  }
  return g_string_free(prog, FALSE);
}

static ts_graph *fuse_elementwise(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats)
{
  int n = (int)g->nodes->len;
  int *user = ts__single_users(g);
  bool *fusible = g_new0(bool, n ? n : 1), *absorbed = g_new0(bool, n ? n : 1);
  bool *seen = g_new0(bool, n ? n : 1);
  for (int id = 0; id < n; id++)
    fusible[id] = ew_fusible(g, ts__graph_node(g, id));
  for (int id = 0; id < n; id++) {
    const ts_node *u = fusible[id] ? only_user(g, user, id) : NULL;
    absorbed[id] = u && fusible[u->id] && u->outputs[0].dtype == ts__graph_node(g, id)->outputs[0].dtype;
  }
  /* per root of a cluster worth fusing: its members and program */
  int *root_of = g_new(int, n ? n : 1);
  cluster *clusters = g_new0(cluster, n ? n : 1);
  char **programs = g_new0(char *, n ? n : 1);
  for (int id = 0; id < n; id++)
    root_of[id] = -1;
  for (int id = 0; id < n; id++) {
    if (!fusible[id] || absorbed[id])
      continue;
    cluster *cl = &clusters[id];
    cl->members = g_array_new(FALSE, FALSE, sizeof(int));
    cl->externals = g_array_new(FALSE, FALSE, sizeof(ts_port));
    if (!collect(g, absorbed, seen, id, cl->members) || cl->members->len < 2)
      continue;
    g_array_sort(cl->members, cmp_int);
    programs[id] = cluster_program(g, cl);
    if (cl->externals->len > TS_MAX_INPUTS) {
      g_clear_pointer(&programs[id], g_free);
      continue;
    }
    for (guint k = 0; k < cl->members->len; k++)
      root_of[g_array_index(cl->members, int, k)] = id;
  }
  ts_rewrite *rw = ts__rewrite_begin(g, parent);
  for (int id = 0; id < n; id++) {
    const ts_node *node = ts__graph_node(g, id);
    if (root_of[id] < 0) {
      ts__pass_copy(rw, node, fuse_elementwise, stats);
      continue;
    }
    if (root_of[id] != id)
      continue; /* a member: its root, later, computes it */
    cluster *cl = &clusters[id];
    ts_port in[TS_MAX_INPUTS];
    for (guint e = 0; e < cl->externals->len; e++)
      in[e] = ts__rewrite_port(rw, g_array_index(cl->externals, ts_port, e));
    ts_attr attr = { .type = TS_ATTR_STRING, .s = programs[id] };
    ts_node *f = ts__rewrite_add(rw, node, TS_OP_FUSED_ELEMENTWISE, in, (int)cl->externals->len,
                                 &attr, 1, node->outputs, 1);
    for (guint k = 0; k < cl->members->len; k++)
      ts__node_add_origins_of(f, ts__graph_node(g, g_array_index(cl->members, int, k)));
    ts__rewrite_map(rw, (ts_port){ id, 0 }, (ts_port){ f->id, 0 });
    stats->count += (int)cl->members->len;
    stats->into++;
  }
  for (int id = 0; id < n; id++) {
    if (clusters[id].members) {
      g_array_unref(clusters[id].members);
      g_array_unref(clusters[id].externals);
    }
    g_free(programs[id]);
  }
  g_free(clusters);
  g_free(programs);
  g_free(root_of);
  g_free(user);
  g_free(fusible);
  g_free(absorbed);
  g_free(seen);
  return ts__rewrite_finish(rw, false);
}

ts_graph *ts__pass_fuse(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats)
{
  ts_graph *mm = fuse_matmul(g, parent, stats);
  ts_graph *ew = fuse_elementwise(mm, parent, stats);
  ts__graph_free(mm);
  return ew;
}
