/* layout.c — the layout pass: transposes sunk through the ops that do not
 * care about the order of dims, until they meet another transpose:
 *   ew(transpose(x, p), c, ...)   -> transpose(ew(x, c', ...), p)
 *   transpose(transpose(x, p), q) -> transpose(x, p∘q), or x (simplify's rule)
 *   matmul(a, b, transpose_b) with b constant -> matmul(a, transpose(b))
 *   matmul(reshape(transpose(x, p), [M, K]), b) with b constant
 *                                 -> matmul(reshape(x, [M, K]), b's rows permuted)
 * ew: an elementwise op (broadcasting, TS_OPF_ELEMENTWISE) or a cast, the
 * only user of the transpose, whose output has the transpose's shape.  Its
 * other operands are brought into x's order: c' is y for c = transpose(y, p)
 * used by ew alone, else c aligned to x's rank and permuted back, as a
 * reshape when its dims other than 1 keep their order (a bias along one
 * axis), as a transpose when c is constant (fold, next, folds it);
 * anything else stops the transpose there.  The ONNX importer runs Conv and
 * MaxPool in NHWC between a transpose from NCHW and one back
 * (io/onnx_ops.c): between two of them the bias add, the batch norm and the
 * activation run in NCHW, and the pair around them cancels here.  A
 * product by constant weights stored [N, K] (ONNX's Gemm with transB, as
 * PyTorch's Linear exports) reads them transposed once, not copied into
 * [K, N] by the GEMM on every call.  A Flatten of NCHW before a Gemm
 * (PyTorch's classifier head) then reads the last pooling's NHWC output
 * as it is, its weights' rows put in that order once. */
#include "exec.h"

#include <limits.h>

static bool is_agnostic(ts_op op)
{
  return op == TS_OP_CAST || (ts__op_def(op)->flags & TS_OPF_ELEMENTWISE);
}

/* The transpose of the new graph making src's value, when n is its only
 * user, else NULL. */
static const ts_node *lone_transpose(const ts_rewrite *rw, const int *user, const ts_node *n,
                                     ts_port src)
{
  ts_port dp = ts__rewrite_port(rw, src);
  if (dp.node < 0 || user[src.node] != n->id)
    return NULL;
  const ts_node *t = ts__graph_node(ts__rewrite_graph(rw), dp.node);
  return t->op == TS_OP_TRANSPOSE && !t->n_control ? t : NULL;
}

/* Is port p of graph g a value fold makes a constant (a Const, or a
 * stateless op of such values)?  Looks depth nodes up at most. */
static bool constant_valued(const ts_graph *g, ts_port p, int depth)
{
  const ts_node *n = ts__graph_node(g, p.node);
  if (n->op == TS_OP_CONST)
    return n->value != NULL;
  unsigned never = TS_OPF_STATEFUL | TS_OPF_INPUT | TS_OPF_VALUE | TS_OPF_CONTROL_FLOW | TS_OPF_RANDOM;
  if (depth == 0 || n->stateful || n->n_subgraphs || (ts__op_def(n->op)->flags & never))
    return false;
  for (int i = 0; i < n->n_inputs; i++)
    if (!constant_valued(g, n->inputs[i], depth - 1))
      return false;
  return true;
}

typedef struct sinking {
  ts_rewrite *rw;
  const ts_node *n;      /* the elementwise op (old graph) */
  const ts_node *t;      /* the transpose it reads (new graph) */
  int rank, p[TS_MAX_RANK], inv[TS_MAX_RANK];
  ts_shape out;          /* t's output shape, and n's */
} sinking;

static ts_port add(sinking *s, ts_op op, ts_port in, ts_attr attr, ts_dtype dtype, ts_shape shape)
{
  ts_info info = { dtype, shape };
  ts_node *c = ts__rewrite_add(s->rw, s->n, op, &in, 1, &attr, 1, &info, 1);
  ts__node_add_origins_of(c, s->n);
  return (ts_port){ c->id, 0 };
}

/* Operand src of s->n in x's order: *to, or false when it has none cheap. */
static bool reorder(sinking *s, const int *user, ts_port src, ts_port *to)
{
  const ts_node *t = lone_transpose(s->rw, user, s->n, src);
  int q[TS_MAX_RANK];
  if (t && t->outputs[0].shape.rank == s->rank && ts__transpose_perm(t, s->rank, q) &&
      memcmp(q, s->p, sizeof(int) * (size_t)s->rank) == 0 &&
      ts__fits_into(t->outputs[0].shape, s->out)) {
    *to = t->inputs[0];
    return true;
  }
  ts_port dp = ts__rewrite_port(s->rw, src);
  if (dp.node < 0)
    return false;
  ts_info ci = ts__graph_node(ts__rewrite_graph(s->rw), dp.node)->outputs[dp.index];
  int r = s->rank, lead = r - ci.shape.rank;
  if (ci.shape.rank < 0 || lead < 0 || !ts__fits_into(ci.shape, s->out))
    return false;
  ts_shape aligned = { .rank = r }, back = { .rank = r };
  bool keeps_order = true, ones = true;
  for (int i = 0, last = -1; i < r; i++) {
    aligned.dim[i] = i < lead ? 1 : ci.shape.dim[i - lead];
    back.dim[s->p[i]] = aligned.dim[i];
    if (aligned.dim[i] != 1) {
      keeps_order &= s->p[i] > last;
      last = s->p[i];
      ones = false;
    }
  }
  *to = dp;
  if (ones) /* broadcasts the same in any order */
    return true;
  if (!ts__shape_known(aligned))
    return false;
  ts_shape bare = back; /* without leading ones, which broadcasting adds back */
  while (bare.rank > 0 && bare.dim[0] == 1) {
    bare.rank--;
    memmove(bare.dim, bare.dim + 1, sizeof(int64_t) * (size_t)bare.rank);
  }
  if (!keeps_order) {
    if (!constant_valued(ts__rewrite_graph(s->rw), dp, 8))
      return false;
    if (lead)
      *to = add(s, TS_OP_RESHAPE, *to, TS_ATTR_SH(aligned), ci.dtype, aligned);
    ts_ints inv = { .n = r };
    for (int i = 0; i < r; i++)
      inv.v[i] = s->inv[i];
    *to = add(s, TS_OP_TRANSPOSE, *to, TS_ATTR_INTS_(inv), ci.dtype, back);
    if (bare.rank == r)
      return true;
  } else if (ts_shape_equal(bare, ci.shape)) {
    return true;
  }
  *to = add(s, TS_OP_RESHAPE, *to, TS_ATTR_SH(bare), ci.dtype, bare);
  return true;
}

/* Moves the transpose that n reads past n; false: n stays as it is. */
static bool sink(ts_rewrite *rw, const int *user, const ts_node *n, ts_pass_stats *stats)
{
  sinking s = { rw, n, NULL, 0, { 0 }, { 0 }, n->outputs[0].shape };
  for (int i = 0; i < n->n_inputs && !s.t; i++)
    s.t = lone_transpose(rw, user, n, n->inputs[i]);
  s.rank = s.out.rank;
  if (!s.t || s.rank < 1 || !ts_shape_equal(s.t->outputs[0].shape, s.out) ||
      !ts__transpose_perm(s.t, s.rank, s.p))
    return false;
  for (int i = 0; i < s.rank; i++)
    s.inv[s.p[i]] = i;
  ts_port in[TS_MAX_INPUTS];
  for (int i = 0; i < n->n_inputs; i++)
    if (!reorder(&s, user, n->inputs[i], &in[i]))
      return false; /* what reorder added is left for dce */
  ts_info moved = { n->outputs[0].dtype, { .rank = s.rank } };
  for (int i = 0; i < s.rank; i++)
    moved.shape.dim[s.p[i]] = s.out.dim[i];
  ts_node *op = ts__rewrite_add(rw, n, n->op, in, n->n_inputs, n->attrs, n->n_attrs, &moved, 1);
  ts__node_add_origins_of(op, n);
  ts_port op_out = { op->id, 0 };
  ts_node *t = ts__rewrite_add(rw, s.t, TS_OP_TRANSPOSE, &op_out, 1, s.t->attrs, 1, n->outputs, 1);
  ts__node_add_origins_of(t, s.t);
  ts__rewrite_map(rw, (ts_port){ n->id, 0 }, (ts_port){ t->id, 0 });
  stats->count++;
  return true;
}

/* MatMul n (old graph) as a product of a and b without transpose_b. */
static bool product(ts_rewrite *rw, const ts_node *n, ts_port a, ts_port b, ts_pass_stats *stats)
{
  ts_port in[2] = { a, b };
  ts_attr attrs[2] = { n->attrs[0], TS_ATTR_B(false) };
  ts_node *mm = ts__rewrite_add(rw, n, TS_OP_MATMUL, in, 2, attrs, 2, n->outputs, 1);
  ts__node_add_origins_of(mm, n);
  ts__rewrite_map(rw, (ts_port){ n->id, 0 }, (ts_port){ mm->id, 0 });
  stats->count++;
  return true;
}

/* MatMul(a, b, transpose_b) with b constant -> MatMul(a, transpose(b)):
 * the GEMM copies a transposed B on every call, fold transposes it once.
 * pretransposed maps b's port (node * TS_MAX_OUTPUTS + index) to the
 * transpose's node, one for all the products reading b. */
static bool pretranspose_b(ts_rewrite *rw, GHashTable *pretransposed, const ts_node *n,
                           ts_pass_stats *stats)
{
  ts_graph *dst = ts__rewrite_graph(rw);
  ts_port bp = ts__rewrite_port(rw, n->inputs[1]);
  if (!n->attrs[1].b || bp.node < 0 || bp.node >= INT_MAX / TS_MAX_OUTPUTS ||
      !constant_valued(dst, bp, 8))
    return false;
  ts_info bi = ts__graph_node(dst, bp.node)->outputs[bp.index];
  int r = bi.shape.rank;
  if (r < 2)
    return false;
  gpointer key = GINT_TO_POINTER(bp.node * TS_MAX_OUTPUTS + bp.index);
  int t = GPOINTER_TO_INT(g_hash_table_lookup(pretransposed, key)) - 1;
  if (t < 0) {
    ts_ints perm = { .n = r };
    for (int i = 0; i < r; i++)
      perm.v[i] = i < r - 2 ? i : 2 * r - 3 - i; /* the last two swapped */
    ts_info ti = bi;
    ti.shape.dim[r - 2] = bi.shape.dim[r - 1];
    ti.shape.dim[r - 1] = bi.shape.dim[r - 2];
    ts_attr attr = TS_ATTR_INTS_(perm);
    ts_node *tn = ts__rewrite_add(rw, ts__graph_node(dst, bp.node), TS_OP_TRANSPOSE, &bp, 1, &attr, 1, &ti, 1);
    ts__node_add_origins_of(tn, ts__graph_node(dst, bp.node));
    t = tn->id;
    g_hash_table_insert(pretransposed, key, GINT_TO_POINTER(t + 1));
  }
  return product(rw, n, ts__rewrite_port(rw, n->inputs[0]), (ts_port){ t, 0 }, stats);
}

/* op(in) {attr} -> info in the new graph, named and placed as `like`,
 * with like's origins. */
static ts_node *add_like(ts_rewrite *rw, const ts_node *like, ts_op op, ts_port in, ts_attr attr,
                         ts_info info)
{
  ts_node *c = ts__rewrite_add(rw, like, op, &in, 1, &attr, 1, &info, 1);
  ts__node_add_origins_of(c, like);
  return c;
}

/* MatMul(reshape(transpose(x, p), [M, K]), b) with b constant, where p
 * keeps the dims that make M and permutes only those that make K (the
 * ONNX importer's NHWC back to NCHW before a Flatten and a Gemm):
 *   -> MatMul(reshape(x, [M, K]), b')
 * b' the rows of b in x's order, reshape(transpose(reshape(b, [T..., N]),
 * p⁻¹), [K, N]) over the permuted dims T, which fold computes once: the
 * transpose of the activations on every call goes. */
static bool flatten_into_weights(ts_rewrite *rw, const ts_graph *g, const int *user, const ts_node *n,
                                 ts_pass_stats *stats)
{
  ts_graph *dst = ts__rewrite_graph(rw);
  const ts_node *r = ts__graph_node(g, n->inputs[0].node);
  if (n->attrs[0].b || r->op != TS_OP_RESHAPE || r->n_control || user[r->id] != n->id)
    return false;
  const ts_node *t = lone_transpose(rw, user, r, r->inputs[0]);
  ts_port bp = ts__rewrite_port(rw, n->inputs[1]);
  if (!t || bp.node < 0 || !constant_valued(dst, bp, 8))
    return false;
  ts_info bi = ts__graph_node(dst, bp.node)->outputs[bp.index];
  ts_shape tshape = t->outputs[0].shape, rs = r->outputs[0].shape;
  int rank = tshape.rank, p[TS_MAX_RANK];
  if (rs.rank != 2 || bi.shape.rank != 2 || !ts__shape_known(tshape) || !ts__shape_known(rs) ||
      !ts__shape_known(bi.shape) || !ts__transpose_perm(t, rank, p))
    return false;
  bool tb = n->attrs[1].b;
  int64_t k = rs.dim[1], cols = bi.shape.dim[tb ? 0 : 1];
  if (bi.shape.dim[tb ? 1 : 0] != k)
    return false;
  int j = 0; /* the dims before j make M, p keeps them */
  for (int64_t m = 1; m != rs.dim[0]; j++) {
    if (j == rank || p[j] != j || (m *= tshape.dim[j]) > rs.dim[0])
      return false;
  }
  if (rank - j + 1 > TS_MAX_RANK) /* the weights' rows as dims, and their columns */
    return false;
  ts_shape rows = { .rank = rank - j + 1 }, turned = rows;
  ts_ints inv = { .n = rank - j + 1 };
  for (int i = j; i < rank; i++) { /* p[i] >= j: p keeps those below */
    rows.dim[i - j] = tshape.dim[i];
    inv.v[p[i] - j] = i - j;
  }
  for (int i = 0; i < rank - j; i++)
    turned.dim[i] = rows.dim[inv.v[i]];
  rows.dim[rank - j] = turned.dim[rank - j] = cols;
  inv.v[rank - j] = rank - j;

  ts_port w = bp;
  ts_dtype dt = bi.dtype;
  const ts_node *like = ts__graph_node(g, n->inputs[1].node);
  if (tb) {
    ts_info ti = { dt, TS_SHAPE(k, cols) };
    w = (ts_port){ add_like(rw, like, TS_OP_TRANSPOSE, w, TS_ATTR_INTS_(TS_INTS(1, 0)), ti)->id, 0 };
  }
  w = (ts_port){ add_like(rw, like, TS_OP_RESHAPE, w, TS_ATTR_SH(rows), (ts_info){ dt, rows })->id, 0 };
  w = (ts_port){ add_like(rw, like, TS_OP_TRANSPOSE, w, TS_ATTR_INTS_(inv), (ts_info){ dt, turned })->id, 0 };
  w = (ts_port){ add_like(rw, like, TS_OP_RESHAPE, w, TS_ATTR_SH(TS_SHAPE(k, cols)),
                          (ts_info){ dt, TS_SHAPE(k, cols) })->id, 0 };
  ts_port a = { add_like(rw, r, TS_OP_RESHAPE, t->inputs[0], TS_ATTR_SH(rs), r->outputs[0])->id, 0 };
  return product(rw, n, a, w, stats);
}

ts_graph *ts__pass_layout(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats)
{
  ts_rewrite *rw = ts__rewrite_begin(g, parent);
  int *user = ts__single_users(g);
  GHashTable *pretransposed = g_hash_table_new(NULL, NULL);
  for (guint id = 0; id < g->nodes->len; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    bool plain = !n->stateful && !n->n_control && n->n_outputs == 1 && !n->n_subgraphs;
    bool done = plain && (n->op == TS_OP_TRANSPOSE ? ts__simplify_transposes(rw, n, stats)
                          : n->op == TS_OP_MATMUL  ? flatten_into_weights(rw, g, user, n, stats) ||
                                                       pretranspose_b(rw, pretransposed, n, stats)
                          : is_agnostic(n->op)     ? sink(rw, user, n, stats)
                                                   : false);
    if (!done)
      ts__pass_copy(rw, n, ts__pass_layout, stats);
  }
  g_hash_table_destroy(pretransposed);
  g_free(user);
  return ts__rewrite_finish(rw, false);
}

/* A transpose read by an op it could move past or merge with alone, or by
 * a reshape read by a product alone, or a product with transpose_b, in g
 * or a subgraph. */
bool ts__layout_might_change(const ts_graph *g)
{
  int *user = ts__single_users(g);
  bool might = false;
  for (guint id = 0; id < g->nodes->len && !might; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    const ts_node *u = n->op == TS_OP_TRANSPOSE && user[id] >= 0 ? ts__graph_node(g, user[id]) : NULL;
    const ts_node *uu = u && u->op == TS_OP_RESHAPE && user[u->id] >= 0 ? ts__graph_node(g, user[u->id]) : NULL;
    might = (u && (u->op == TS_OP_TRANSPOSE || is_agnostic(u->op))) ||
            (uu && uu->op == TS_OP_MATMUL) || (n->op == TS_OP_MATMUL && n->attrs[1].b);
    for (int s = 0; s < n->n_subgraphs && !might; s++)
      might = ts__layout_might_change(n->subgraphs[s]);
  }
  g_free(user);
  return might;
}
