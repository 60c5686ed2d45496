/* simplify.c — arithmetic simplification (Grappler's arithmetic
 * optimizer, the exact rewrites only):
 *   x * 1, 1 * x, x + 0, 0 + x, x - 0        -> x
 *   x - x (integers only: inf - inf and nan - nan are nan for floats) -> 0
 *   transpose(transpose(x, p), q)            -> transpose(x, p∘q), or x
 *   reshape(reshape or flatten(x), s)        -> reshape(x, s), or x
 *   reshape(x, s) with s x's static shape    -> x
 *   cast(x, dtype) with x of that dtype      -> x
 *   pow(x, 1|2|3|4)                          -> x, x*x, x*x*x, (x*x)*(x*x)
 *   identity(x)                              -> x (Grappler's dependency
 *                                               optimizer; Keras's inactive
 *                                               Dropout is one)
 * "-> x" holds only where the constant cannot change x's shape or dtype
 * by broadcasting or promotion.  Nodes with control inputs or side effects
 * are left alone.  A new node stands for the nodes it replaces. */
#include "exec.h"

#include <math.h>

/* The node of the new graph making src port p's value, and its info. */
static const ts_node *dst_node(const ts_rewrite *rw, ts_port p, ts_port *dp, ts_info *info)
{
  *dp = ts__rewrite_port(rw, p);
  if (dp->node < 0)
    return NULL;
  const ts_node *n = ts__graph_node(ts__rewrite_graph(rw), dp->node);
  *info = n->outputs[dp->index];
  return n;
}

/* The info of a port of the new graph. */
static ts_info port_info(const ts_rewrite *rw, ts_port dp)
{
  return ts__graph_node(ts__rewrite_graph(rw), dp.node)->outputs[dp.index];
}

/* Does every element of t equal v? */
static bool all_equal(const ts_tensor *t, double v)
{
  if (!t || !t->data || !ts__host_visible(t->backend) || t->dtype >= TS_NUMERIC_DTYPE_COUNT ||
      t->size <= 0)
    return false;
  for (int64_t i = 0; i < t->size; i++)
    if (ts__load_f64(t->dtype, t->data, i) != v)
      return false;
  return true;
}

bool ts__fits_into(ts_shape c, ts_shape x)
{
  if (c.rank > x.rank)
    return false;
  for (int i = 1; i <= c.rank; i++) {
    int64_t cd = c.dim[c.rank - i], xd = x.dim[x.rank - i];
    if (cd != 1 && (xd < 0 || cd != xd))
      return false;
  }
  return true;
}

typedef struct simplifier {
  ts_rewrite *rw;
  const ts_node *n;   /* the node being simplified (old graph) */
  ts_pass_stats *stats;
} simplifier;

static void forward(simplifier *s, ts_port to)
{
  ts__rewrite_map(s->rw, (ts_port){ s->n->id, 0 }, to);
  s->stats->count++;
}

/* A new node standing for s->n (and for `also`, a node of the new graph,
 * when given); it becomes s->n's output when last. */
static ts_port add(simplifier *s, ts_op op, const ts_port *in, int n_in, const ts_attr *attrs,
                   int n_attrs, const ts_node *also, bool last)
{
  ts_node *c = ts__rewrite_add(s->rw, s->n, op, in, n_in, attrs, n_attrs, s->n->outputs, 1);
  ts__node_add_origins_of(c, s->n);
  if (also)
    ts__node_add_origins_of(c, also);
  ts_port out = { c->id, 0 };
  if (last) {
    ts__rewrite_map(s->rw, (ts_port){ s->n->id, 0 }, out);
    s->stats->count++;
  }
  return out;
}

/* x op c -> x where c is all `unit` (and y op x too when commutes). */
static bool drop_unit(simplifier *s, double unit, bool commutes)
{
  const ts_node *n = s->n;
  for (int side = 0; side < (commutes ? 2 : 1); side++) {
    ts_port xp, cp;
    ts_info xi, ci;
    if (!dst_node(s->rw, n->inputs[side], &xp, &xi) ||
        !dst_node(s->rw, n->inputs[1 - side], &cp, &ci))
      return false;
    const ts_tensor *c = ts__rewrite_const(s->rw, n->inputs[1 - side]);
    if (c && all_equal(c, unit) && xi.dtype == n->outputs[0].dtype &&
        ts__fits_into(ci.shape, xi.shape)) {
      forward(s, xp);
      return true;
    }
  }
  return false;
}

static bool simplify_sub(simplifier *s)
{
  if (drop_unit(s, 0, false))
    return true;
  const ts_node *n = s->n;
  ts_port a = ts__rewrite_port(s->rw, n->inputs[0]), b = ts__rewrite_port(s->rw, n->inputs[1]);
  ts_info out = n->outputs[0];
  if (a.node < 0 || a.node != b.node || a.index != b.index || ts_dtype_is_float(out.dtype) ||
      out.dtype == TS_BOOL)
    return false;
  if (!ts__shape_known(out.shape)) {
    add(s, TS_OP_ZEROS_LIKE, &a, 1, NULL, 0, NULL, true);
    return true;
  }
  ts_scope *scope = ts_scope_begin();
  ts_tensor *zeros = ts_tensor_new(out.dtype, out.shape);
  bool ok = zeros != NULL;
  if (ok) {
    ts_node *c = ts__rewrite_add(s->rw, n, TS_OP_CONST, NULL, 0, NULL, 0, &out, 1);
    ts__node_set_value(c, zeros);
    ts__node_add_origins_of(c, n);
    forward(s, (ts_port){ c->id, 0 });
  } else {
    ts_error_clear();
  }
  ts_scope_end(scope);
  return ok;
}

bool ts__transpose_perm(const ts_node *transpose, int rank, int *out)
{
  ts_ints perm = transpose->attrs[0].ints;
  if (perm.n < 0) {
    for (int i = 0; i < rank; i++)
      out[i] = rank - 1 - i;
    return true;
  }
  if (perm.n != rank)
    return false;
  for (int i = 0; i < rank; i++)
    if (!ts__axis(perm.v[i], rank, &out[i]))
      return false;
  return true;
}

static bool simplify_transpose(simplifier *s)
{
  ts_port yp;
  ts_info yi;
  const ts_node *inner = dst_node(s->rw, s->n->inputs[0], &yp, &yi);
  if (!inner || inner->op != TS_OP_TRANSPOSE)
    return false;
  ts_info xi = port_info(s->rw, inner->inputs[0]);
  int rank = xi.shape.rank, p[TS_MAX_RANK], q[TS_MAX_RANK];
  if (!ts__transpose_perm(inner, rank, p) || !ts__transpose_perm(s->n, rank, q))
    return false;
  ts_ints composed = { .n = rank };
  bool identity = true;
  for (int i = 0; i < rank; i++) {
    composed.v[i] = p[q[i]];
    identity &= composed.v[i] == i;
  }
  if (identity) {
    forward(s, inner->inputs[0]);
    return true;
  }
  ts_attr attr = TS_ATTR_INTS_(composed);
  add(s, TS_OP_TRANSPOSE, &inner->inputs[0], 1, &attr, 1, inner, true);
  return true;
}

static bool simplify_reshape(simplifier *s)
{
  ts_port yp, xp;
  ts_info yi, xi;
  const ts_node *inner = dst_node(s->rw, s->n->inputs[0], &yp, &yi);
  if (!inner)
    return false;
  ts_shape out = s->n->outputs[0].shape;
  bool nested = inner->op == TS_OP_RESHAPE || inner->op == TS_OP_FLATTEN;
  xp = nested ? inner->inputs[0] : yp;
  xi = nested ? port_info(s->rw, xp) : yi;
  if (ts__shape_known(out) && ts_shape_equal(out, xi.shape)) {
    forward(s, xp);
    return true;
  }
  if (!nested || ts__reshape_reads_dims(s->n->attrs[0].shape))
    return false;
  add(s, TS_OP_RESHAPE, &xp, 1, s->n->attrs, 1, inner, true);
  return true;
}

static bool simplify_cast(simplifier *s)
{
  ts_port xp;
  ts_info xi;
  if (!dst_node(s->rw, s->n->inputs[0], &xp, &xi) || xi.dtype != s->n->attrs[0].dtype)
    return false;
  forward(s, xp);
  return true;
}

static bool simplify_pow(simplifier *s)
{
  const ts_node *n = s->n;
  ts_port xp, ep;
  ts_info xi, ei;
  const ts_tensor *e = ts__rewrite_const(s->rw, n->inputs[1]);
  if (!e || e->size != 1 || !dst_node(s->rw, n->inputs[0], &xp, &xi) ||
      !dst_node(s->rw, n->inputs[1], &ep, &ei) || xi.dtype != n->outputs[0].dtype ||
      !ts__fits_into(ei.shape, xi.shape) || xi.dtype == TS_BOOL)
    return false;
  double k = ts_tensor_get_f64(e, 0); /* through its backend: folding may run on a device */
  if (k == 1) {
    forward(s, xp);
    return true;
  }
  if (k != 2 && k != 3 && k != 4)
    return false;
  ts_port sq[2] = { xp, xp };
  ts_port x2 = add(s, TS_OP_MUL, sq, 2, NULL, 0, NULL, k == 2);
  if (k == 3)
    add(s, TS_OP_MUL, (ts_port[]){ x2, xp }, 2, NULL, 0, NULL, true);
  else if (k == 4)
    add(s, TS_OP_MUL, (ts_port[]){ x2, x2 }, 2, NULL, 0, NULL, true);
  return true;
}

static bool simplify_identity(simplifier *s)
{
  ts_port xp;
  ts_info xi;
  if (!dst_node(s->rw, s->n->inputs[0], &xp, &xi))
    return false;
  forward(s, xp);
  return true;
}

bool ts__simplify_transposes(ts_rewrite *rw, const ts_node *n, ts_pass_stats *stats)
{
  simplifier s = { rw, n, stats };
  return simplify_transpose(&s);
}

static bool simplify_mul(simplifier *s)
{
  return drop_unit(s, 1, true);
}

static bool simplify_add(simplifier *s)
{
  return drop_unit(s, 0, true);
}

static bool (*const RULES[TS_OP_COUNT])(simplifier *s) = {
  [TS_OP_MUL] = simplify_mul,           [TS_OP_ADD] = simplify_add,
  [TS_OP_SUB] = simplify_sub,           [TS_OP_TRANSPOSE] = simplify_transpose,
  [TS_OP_RESHAPE] = simplify_reshape,   [TS_OP_CAST] = simplify_cast,
  [TS_OP_POW] = simplify_pow,           [TS_OP_IDENTITY] = simplify_identity,
};

ts_graph *ts__pass_simplify(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats)
{
  ts_rewrite *rw = ts__rewrite_begin(g, parent);
  for (guint id = 0; id < g->nodes->len; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    simplifier s = { rw, n, stats };
    bool plain = !n->stateful && !n->n_control && n->n_outputs == 1 && RULES[n->op];
    if (!plain || !RULES[n->op](&s))
      ts__pass_copy(rw, n, ts__pass_simplify, stats);
  }
  return ts__rewrite_finish(rw, false);
}
