/* diverge.c — the divergence finder: a function run eagerly and as a graph
 * on the same inputs, every eager op matched to the node it became (the
 * k-th eager run of an op with the k-th run of its node; a node the
 * optimizer's passes rewrote is matched with the traced nodes whose value
 * its output is), their outputs compared, the first op that differs
 * reported with both values; and check mode, which does that on every
 * call and warns (the report as text: diverge_report.c).
 * docs/divergence.md. */
#include "diverge-private.h"

#include <math.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One eager op as the eager run saw it, and what its graph twin gave. */
typedef struct rec {
  uint64_t seq;
  ts_op op;
  ts_loc loc;
  const ts_node *traced;
  const ts_node *graph_node; /* the rewritten optimized node it was compared with or fused into */
  int occurrence;
  int n_outputs;
  ts_tensor **outputs;       /* the values (references, see keep_eager) */
  int n_inputs;
  struct rec **producer;     /* per input: the eager op that made it, or NULL */
  ts_tensor **made_outside;  /* per input not made by an op (host values, arguments): a reference */
  const char *assigned_var;  /* reads a variable an assign changed before it: its name */
  const struct rec *last_assign; /* ... and that assign */
  bool ran_in_graph;
  bool compared;
  ts_diverge_op diff;        /* kind, output, values, sizes of the difference */
} rec;

typedef struct recorder {
  pthread_t thread;
  bool graph;                /* recording the graph run */
  GPtrArray *eager;          /* rec *, owned, in event order */
  GHashTable *by_traced;     /* traced node -> GPtrArray of rec * (runs in order) */
  GHashTable *graph_runs;    /* traced node -> runs of it in the graph so far */
  GHashTable *opt_node;      /* traced node -> a node of the optimized graph standing for it */
  GHashTable *stands_for;    /* optimized node -> GPtrArray of the traced nodes its output is */
  GHashTable *fused_into;    /* traced node -> the optimized node computing it only inside */
  GHashTable *produced;      /* eager output tensor -> the rec that made it (latest) */
  GHashTable *assigned;      /* variable -> the last eager assign of it so far */
  ts_diverge_options opt;
  int n_graph, n_graph_only;
} recorder;

static void rec_free(gpointer data)
{
  rec *r = data;
  for (int i = 0; i < r->n_outputs; i++)
    ts_tensor_unref(r->outputs[i]);
  g_free(r->outputs);
  g_free(r->producer);
  for (int i = 0; i < r->n_inputs; i++)
    ts_tensor_unref(r->made_outside[i]);
  g_free(r->made_outside);
  ts_tensor_unref(r->diff.eager);
  ts_tensor_unref(r->diff.graph);
  g_free(r);
}

/* A host copy of t the caller owns (outliving every scope); NULL if t has
 * no data to copy (a TensorArray's variant values are not compared). */
static ts_tensor *copy_out(const ts_tensor *t)
{
  if (!t || !t->data || t->dtype == TS_VARIANT)
    return NULL;
  ts_scope *scope = ts_scope_begin();
  const ts_tensor *host = ts__tensor_host((ts_loc){ 0 }, t);
  ts_tensor *copy = host ? ts_constant(host->dtype, host->shape, host->data) : NULL;
  if (copy)
    ts_tensor_ref(copy);
  ts_scope_end(scope);
  return copy;
}

/* An eager output kept for the graph run: the tensor itself (tensors do not
 * change once made), but a copy when it shares a variable's memory (an
 * assign would overwrite it) or lives where the host cannot read it. */
static ts_tensor *keep_eager(ts_tensor *t)
{
  if (!t || !t->data || t->dtype == TS_VARIANT)
    return NULL;
  const ts_tensor *root = t->base ? t->base : t;
  if (root->is_variable || !ts__host_visible(t->backend))
    return copy_out(t);
  return ts_tensor_ref(t);
}

/* ---- comparing two values -------------------------------------------------------- */

/* Compares graph against eager (the reference) into d: kind, worst element
 * and sizes of the difference. */
static void compare(const ts_tensor *eager, const ts_tensor *graph, const ts_diverge_options *o,
                    ts_diverge_op *d)
{
  d->kind = TS_DIVERGE_NONE;
  d->max_abs = d->max_rel = 0;
  d->worst = -1;
  if (eager->dtype != graph->dtype) {
    d->kind = TS_DIVERGE_DTYPE;
    return;
  }
  if (!ts_shape_equal(eager->shape, graph->shape)) {
    d->kind = TS_DIVERGE_SHAPE;
    return;
  }
  bool strings = eager->dtype == TS_STRING, ints = ts_dtype_is_integer(eager->dtype);
  /* the same bytes: equal (but NaNs when NaN against NaN differs) */
  if (!strings && !(o->nan_differs && ts_dtype_is_float(eager->dtype)) &&
      memcmp(eager->data, graph->data, (size_t)eager->size * ts_dtype_size(eager->dtype)) == 0)
    return;
  for (int64_t i = 0; i < eager->size; i++) {
    double a, b, abs_diff;
    bool equal;
    if (strings) {
      equal = strcmp(((char *const *)eager->data)[i], ((char *const *)graph->data)[i]) == 0;
      a = b = 0;
      abs_diff = equal ? 0 : INFINITY;
    } else if (ints) {
      int64_t x = ts__load_i64(eager->dtype, eager->data, i);
      int64_t y = ts__load_i64(graph->dtype, graph->data, i);
      a = (double)x;
      b = (double)y;
      equal = x == y;
      abs_diff = fabs(a - b);
    } else {
      a = ts__load_f64(eager->dtype, eager->data, i);
      b = ts__load_f64(graph->dtype, graph->data, i);
      bool nans = isnan(a) && isnan(b);
      equal = a == b || (nans && !o->nan_differs);
      abs_diff = equal ? 0 : isnan(a) || isnan(b) || isinf(a) || isinf(b) ? INFINITY : fabs(a - b);
      if (!equal && !isinf(abs_diff))
        equal = abs_diff <= o->atol + o->rtol * fabs(a);
    }
    if (!equal)
      d->kind = TS_DIVERGE_VALUE;
    double rel = abs_diff == 0 ? 0 : a == 0 ? INFINITY : abs_diff / fabs(a);
    if (rel > d->max_rel)
      d->max_rel = rel;
    if (d->worst < 0 || abs_diff > d->max_abs) { /* the largest difference, first of equals */
      d->max_abs = abs_diff;
      d->worst = i;
      d->eager_value = a;
      d->graph_value = b;
    }
  }
  if (d->kind == TS_DIVERGE_NONE)
    d->worst = -1;
  if (d->worst >= 0) { /* flat index -> [i, j, ...] */
    d->worst_index.rank = eager->shape.rank;
    int64_t rest = d->worst;
    for (int k = eager->shape.rank - 1; k >= 0; k--) {
      int64_t dim = eager->shape.dim[k] > 0 ? eager->shape.dim[k] : 1;
      d->worst_index.dim[k] = rest % dim;
      rest /= dim;
    }
  }
}

/* ---- recording both runs ------------------------------------------------------------ */

static bool is_assign(ts_op op)
{
  return op == TS_OP_ASSIGN_VARIABLE || op == TS_OP_ASSIGN_ADD_VARIABLE ||
         op == TS_OP_ASSIGN_SUB_VARIABLE;
}

static void on_eager_op(recorder *s, const ts_op_event *e)
{
  rec *r = g_new0(rec, 1);
  r->seq = e->seq;
  r->op = e->op;
  r->loc = e->loc;
  r->traced = e->traced;
  if (r->traced) {
    GPtrArray *runs = g_hash_table_lookup(s->by_traced, r->traced);
    if (!runs) {
      runs = g_ptr_array_new();
      g_hash_table_insert(s->by_traced, (gpointer)r->traced, runs);
    }
    r->occurrence = (int)runs->len;
    g_ptr_array_add(runs, r);
  }
  r->n_inputs = e->n_inputs;
  r->producer = g_new0(rec *, e->n_inputs > 0 ? e->n_inputs : 1);
  r->made_outside = g_new0(ts_tensor *, e->n_inputs > 0 ? e->n_inputs : 1);
  for (int i = 0; i < e->n_inputs; i++) {
    ts_tensor *in = e->inputs[i];
    r->producer[i] = in ? g_hash_table_lookup(s->produced, in) : NULL;
    /* tensors never change, variables do: those are not kept */
    if (in && !r->producer[i] && !in->is_variable)
      r->made_outside[i] = ts_tensor_ref(in);
    const rec *assign = in && in->is_variable ? g_hash_table_lookup(s->assigned, in) : NULL;
    if (assign && !is_assign(e->op)) {
      r->assigned_var = in->name ? in->name : "a variable";
      r->last_assign = assign;
    }
  }
  if (is_assign(e->op) && e->n_inputs > 0)
    g_hash_table_insert(s->assigned, e->inputs[0], r);
  r->n_outputs = e->n_outputs;
  r->outputs = g_new0(ts_tensor *, e->n_outputs > 0 ? e->n_outputs : 1);
  for (int i = 0; i < e->n_outputs; i++) {
    r->outputs[i] = keep_eager(e->outputs[i]);
    if (e->outputs[i])
      g_hash_table_insert(s->produced, e->outputs[i], r);
  }
  g_ptr_array_add(s->eager, r);
}

/* ---- what the optimized graph's nodes stand for -------------------------------------- */

/* Does user read an output of src (both nodes of one graph)? */
static bool reads(const ts_node *user, const ts_node *src)
{
  if (user == src || ts_node_graph(user) != ts_node_graph(src))
    return false;
  for (int i = 0; i < ts_node_n_inputs(user); i++)
    if (ts_node_input(user, i).node == ts_node_id(src))
      return true;
  return false;
}

/* Does traced node p of n's origins read o's value, directly or through
 * nodes the passes took out (x + 0 -> x) or other origins of n? */
static bool reads_inside(const ts_node *n, const ts_node *p, const ts_node *o,
                         GHashTable *nodes_of, int depth)
{
  if (depth > ts_graph_n_nodes(ts_node_graph(p)))
    return false;
  for (int i = 0; i < ts_node_n_inputs(p); i++) {
    const ts_node *src = ts_graph_node(ts_node_graph(p), ts_node_input(p, i).node);
    if (src == o)
      return true;
    bool through = !g_hash_table_contains(nodes_of, src);
    for (int k = 0; k < ts_node_n_origins(n) && !through; k++)
      through = ts_node_origin(n, k) == src;
    if (through && reads_inside(n, src, o, nodes_of, depth + 1))
      return true;
  }
  return false;
}

/* Every traced node -> the nodes of the optimized graph g (subgraphs
 * included) standing for it, in graph order. */
static void collect_nodes_of(const ts_graph *g, GHashTable *nodes_of)
{
  for (int id = 0; id < ts_graph_n_nodes(g); id++) {
    const ts_node *n = ts_graph_node(g, id);
    for (int i = 0; i < ts_node_n_origins(n); i++) {
      const ts_node *o = ts_node_origin(n, i);
      GPtrArray *nodes = g_hash_table_lookup(nodes_of, o);
      if (!nodes) {
        nodes = g_ptr_array_new();
        g_hash_table_insert(nodes_of, (gpointer)o, nodes);
      }
      g_ptr_array_add(nodes, (gpointer)n);
    }
    for (int k = 0; k < ts_node_n_subgraphs(n); k++)
      collect_nodes_of(ts_node_subgraph(n, k), nodes_of);
  }
}

/* Which traced node's value the output of each optimized node n is.  A
 * node stands for its origins (ts_node_origin), but its output is the value
 * of only those no other origin of n reads: the last op of a fused chain
 * (the others are fused into n: their values exist only eagerly), each of
 * the equal nodes CSE merged, the pow a simplified x*x replaced.  When a
 * traced node became several nodes (pow(x, 4) -> x*x, then (x*x)*(x*x)),
 * its value is the one no other of them reads.  Folded constants stand for
 * what they folded, which never ran as an op: not matched (expected). */
static void plan_matches(recorder *s, const ts_graph *exec)
{
  GHashTable *nodes_of =
    g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)g_ptr_array_unref);
  collect_nodes_of(exec, nodes_of);
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, nodes_of);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    const ts_node *o = key;
    GPtrArray *nodes = value;
    for (guint j = 0; j < nodes->len; j++) {
      const ts_node *n = nodes->pdata[j];
      g_hash_table_insert(s->opt_node, (gpointer)o, (gpointer)n);
      if (ts_node_op(n) == TS_OP_CONST || !ts_node_has_eager_twin(o))
        continue;
      bool inside = false, read_on = false;
      for (int i = 0; i < ts_node_n_origins(n) && !inside; i++)
        inside = ts_node_origin(n, i) != o && reads_inside(n, ts_node_origin(n, i), o, nodes_of, 0);
      for (guint m = 0; m < nodes->len && !read_on; m++)
        read_on = reads(nodes->pdata[m], n);
      if (inside) {
        g_hash_table_insert(s->fused_into, (gpointer)o, (gpointer)n);
      } else if (!read_on) {
        GPtrArray *outs = g_hash_table_lookup(s->stands_for, n);
        if (!outs) {
          outs = g_ptr_array_new();
          g_hash_table_insert(s->stands_for, (gpointer)n, outs);
        }
        g_ptr_array_add(outs, (gpointer)o);
      }
    }
  }
  g_hash_table_unref(nodes_of);
}

/* Is n other than a plain copy of the traced node o? */
static bool rewritten(const ts_node *n, const ts_node *o)
{
  return ts_node_n_origins(n) > 1 || ts_node_op(n) != ts_node_op(o);
}

/* A graph op standing for traced node t: compared at once with the eager
 * run of t it is (the graph's buffers are reused as soon as the op's
 * consumers ran); false if there is none. */
static bool match_graph_op(recorder *s, const ts_op_event *e, const ts_node *t)
{
  int k = GPOINTER_TO_INT(g_hash_table_lookup(s->graph_runs, t));
  g_hash_table_insert(s->graph_runs, (gpointer)t, GINT_TO_POINTER(k + 1));
  GPtrArray *runs = g_hash_table_lookup(s->by_traced, t);
  if (!runs || k >= (int)runs->len)
    return false;
  rec *r = runs->pdata[k];
  r->ran_in_graph = true;
  r->graph_node = rewritten(e->node, t) ? e->node : NULL;
  for (int i = 0; i < r->n_outputs && i < e->n_outputs; i++) {
    if (!r->outputs[i] || !e->outputs[i] || !e->outputs[i]->data ||
        e->outputs[i]->dtype == TS_VARIANT)
      continue;
    ts_scope *scope = ts_scope_begin();
    const ts_tensor *g = ts__tensor_host((ts_loc){ 0 }, e->outputs[i]);
    ts_diverge_op d = { 0 };
    if (g) {
      r->compared = true;
      compare(r->outputs[i], g, &s->opt, &d);
    }
    ts_scope_end(scope);
    if (d.kind != TS_DIVERGE_NONE) {
      d.output = i;
      d.eager = ts_tensor_ref(r->outputs[i]);
      d.graph = copy_out(e->outputs[i]);
      r->diff = d;
      break;
    }
  }
  return true;
}

static void on_graph_op(recorder *s, const ts_op_event *e)
{
  s->n_graph++;
  GPtrArray *outs = e->node ? g_hash_table_lookup(s->stands_for, e->node) : NULL;
  bool matched = false;
  for (guint i = 0; outs && i < outs->len; i++)
    matched |= match_graph_op(s, e, outs->pdata[i]);
  if (!matched)
    s->n_graph_only++;
}

static void on_event(const ts_event *ev, void *data)
{
  recorder *s = data;
  const ts_op_event *e = &ev->op;
  if (!pthread_equal(pthread_self(), s->thread) || !e->run_id)
    return; /* another thread's, or an op outside the call (weights made while tracing) */
  if (s->graph)
    on_graph_op(s, e);
  else if (!e->node)
    on_eager_op(s, e);
}

/* ---- variables: the same state for both runs ------------------------------------- */

typedef struct saved_var {
  ts_tensor *var;
  void *bytes;
} saved_var;

static bool assigns_any(const ts_graph *g)
{
  for (int id = 0; id < ts_graph_n_nodes(g); id++) {
    const ts_node *n = ts_graph_node(g, id);
    if (is_assign(n->op))
      return true;
    for (int k = 0; k < n->n_subgraphs; k++)
      if (assigns_any(n->subgraphs[k]))
        return true;
  }
  return false;
}

/* The variables g uses, with their values now (none when g assigns none:
 * then both runs see the same state anyway). */
static void collect_vars(const ts_graph *g, GArray *out)
{
  for (int id = 0; id < ts_graph_n_nodes(g); id++) {
    const ts_node *n = ts_graph_node(g, id);
    ts_tensor *v = n->op == TS_OP_VAR_HANDLE ? n->value : NULL;
    bool seen = false;
    for (guint i = 0; v && i < out->len; i++)
      seen |= g_array_index(out, saved_var, i).var == v;
    if (v && !seen && v->data && v->dtype != TS_STRING && v->dtype != TS_VARIANT) {
      /* variables live on the CPU */
      saved_var sv = { ts_tensor_ref(v), g_memdup2(v->data, (gsize)v->size * ts_dtype_size(v->dtype)) };
      g_array_append_val(out, sv);
    }
    for (int k = 0; k < n->n_subgraphs; k++)
      collect_vars(n->subgraphs[k], out);
  }
}

/* Puts the saved values back, copy on write as an assign does (ops/state.c):
 * a storage the eager run's reads and assigns still hold keeps the value
 * they saw (the eager outputs kept for comparing), the variable moves to a
 * fresh one. */
static void vars_restore(GArray *vars)
{
  for (guint i = 0; i < vars->len; i++) {
    saved_var *sv = &g_array_index(vars, saved_var, i);
    ts_tensor *var = sv->var, *old = var->base;
    size_t bytes = (size_t)var->size * ts_dtype_size(var->dtype);
    if (!old || __atomic_load_n(&old->refcount, __ATOMIC_ACQUIRE) == 1) {
      memcpy(var->data, sv->bytes, bytes);
      continue;
    }
    ts_scope *scope = ts_scope_begin();
    ts_tensor *fresh = ts_constant(var->dtype, var->shape, sv->bytes);
    if (fresh) {
      var->base = ts_tensor_ref(fresh);
      var->data = fresh->data;
      var->buffer = fresh->buffer;
      ts_tensor_unref(old);
    } else { /* out of memory: in place, the kept eager values may change */
      ts_error_clear();
      memcpy(var->data, sv->bytes, bytes);
    }
    ts_scope_end(scope);
  }
}

static void vars_free(GArray *vars)
{
  for (guint i = 0; i < vars->len; i++) {
    saved_var *sv = &g_array_index(vars, saved_var, i);
    ts_tensor_unref(sv->var);
    g_free(sv->bytes);
  }
  g_array_unref(vars);
}

/* ---- what a difference means -------------------------------------------------------- */

/* The If/While node whose subgraph g is (NULL at the top). */
static const ts_node *owner_of(const ts_graph *g)
{
  const ts_graph *up = ts_graph_parent(g);
  for (int id = 0; up && id < ts_graph_n_nodes(up); id++) {
    const ts_node *n = ts_graph_node(up, id);
    for (int k = 0; k < ts_node_n_subgraphs(n); k++)
      if (ts_node_subgraph(n, k) == g)
        return n;
  }
  return NULL;
}

static bool graph_within(const ts_graph *g, const ts_graph *outer)
{
  for (; g; g = ts_graph_parent(g))
    if (g == outer)
      return true;
  return false;
}

static int loop_depth(const ts_node *traced)
{
  int depth = 0;
  for (const ts_graph *g = traced ? ts_node_graph(traced) : NULL; g && ts_graph_parent(g);
       g = ts_graph_parent(g))
    depth++;
  return depth;
}

/* Where input i of node n comes from, followed out of If branches: the
 * producing node, and in *graph the graph it is in. */
static const ts_node *producer_of(const ts_node *n, int i)
{
  ts_port p = ts_node_input(n, i);
  const ts_graph *g = ts_node_graph(n);
  const ts_node *src = ts_graph_node(g, p.node);
  for (;;) {
    const ts_node *owner = ts_node_op(src) == TS_OP_PLACEHOLDER ? owner_of(g) : NULL;
    if (!owner || ts_node_op(owner) != TS_OP_IF)
      return src;
    int k = 0; /* a branch's inputs are the If's inputs after the condition */
    while (k < ts_graph_n_inputs(g) && ts_graph_input(g, k) != ts_node_id(src))
      k++;
    if (k + 1 >= ts_node_n_inputs(owner))
      return src;
    g = ts_node_graph(owner);
    src = ts_graph_node(g, ts_node_input(owner, k + 1).node);
  }
}

/* The position of Placeholder src among g's inputs, or -1. */
static int input_position(const ts_graph *g, const ts_node *src)
{
  for (int k = 0; k < ts_graph_n_inputs(g); k++)
    if (ts_graph_input(g, k) == ts_node_id(src))
      return k;
  return -1;
}

/* Is input k of loop body `body` passed through unchanged (a capture, or
 * a listed variable the body does not change)? */
static bool passed_through(const ts_graph *body, int k)
{
  return k >= 0 && k < ts_graph_n_outputs(body) &&
         ts_graph_output(body, k).node == ts_graph_input(body, k);
}

/* A TS_FOR's While carries its hidden counter as loop variable 0, named
 * "counter" (control_flow.c); a TS_WHILE has none. */
static bool is_for_loop(const ts_graph *body)
{
  if (ts_graph_n_inputs(body) < 1)
    return false;
  const ts_node *first = ts_graph_node(body, ts_graph_input(body, 0));
  return strcmp(ts_node_name(first), "counter") == 0 && ts_node_output_shape(first, 0).rank == 0 &&
         ts_dtype_is_integer(ts_node_output_dtype(first, 0));
}

/* "&i, &total": the loop variables a While's body changes, by their names
 * (a TS_FOR's counter left out). */
static char *listed_names(const ts_graph *body)
{
  GString *s = g_string_new(NULL);
  for (int k = is_for_loop(body); k < ts_graph_n_inputs(body); k++)
    if (!passed_through(body, k))
      g_string_append_printf(s, "%s&%s", s->len ? ", " : "",
                             ts_node_name(ts_graph_node(body, ts_graph_input(body, k))));
  return g_string_free(s, FALSE);
}

/* The classic: r, in a loop body, reads a value the graph captured from
 * before the loop, while eagerly that input was made inside the loop (a
 * tensor changed in the body but not listed as a loop variable). */
static char *loop_cause(const rec *r)
{
  for (int i = 0; i < r->n_inputs && i < ts_node_n_inputs(r->traced); i++) {
    const ts_node *src = producer_of(r->traced, i);
    const ts_graph *body = ts_node_graph(src);
    const ts_node *loop = owner_of(body);
    if (ts_node_op(src) != TS_OP_PLACEHOLDER || !loop || ts_node_op(loop) != TS_OP_WHILE ||
        ts_node_n_subgraphs(loop) < 2 || ts_node_subgraph(loop, 1) != body ||
        !passed_through(body, input_position(body, src)))
      continue;
    const rec *p = r->producer[i];
    if (!p || !p->traced || !graph_within(ts_node_graph(p->traced), body))
      continue; /* eagerly too the value came from before the loop */
    ts_loc at = ts_node_loc(loop);
    char *names = listed_names(body);
    char *cause = g_strdup_printf(
      "%s at %s:%d reads '%s': eagerly the value that %s at %s:%d made in an earlier iteration, "
      "in the graph the value from before the loop; a tensor changed inside the loop body but "
      "not listed in %s(...) at %s:%d, which lists %s: add &%s to the list",
      ts_op_name(r->op), ts__diverge_base_name(r->loc.file), r->loc.line, ts_node_name(src),
      ts_op_name(p->op), ts__diverge_base_name(p->loc.file), p->loc.line,
      is_for_loop(body) ? "TS_FOR" : "TS_WHILE", ts__diverge_base_name(at.file), at.line,
      *names ? names : "nothing", ts_node_name(src));
    g_free(names);
    return cause;
  }
  return NULL;
}

/* A host value baked into the graph: r's input is a constant the graph
 * recorded while tracing, and eagerly that input (made by no op: C code
 * computed it) has another value now. */
static char *host_constant_cause(const rec *r, const ts_diverge_options *opt)
{
  for (int i = 0; i < r->n_inputs && i < ts_node_n_inputs(r->traced); i++) {
    const ts_node *src = producer_of(r->traced, i);
    const ts_tensor *baked = ts_node_op(src) == TS_OP_CONST ? ts_node_value(src) : NULL;
    if (!baked || !r->made_outside[i] || !r->made_outside[i]->data)
      continue;
    ts_diverge_op d = { 0 };
    compare(r->made_outside[i], baked, opt, &d);
    if (d.kind == TS_DIVERGE_NONE)
      continue;
    char *now = ts_tensor_format_values(r->made_outside[i]);
    char *then = ts_tensor_format_values(baked);
    char *cause = g_strdup_printf(
      "input %d of %s at %s:%d is a constant the graph recorded while tracing (%s), but the C "
      "code computed %s for this call: host state (a C variable, an iterator) changed since "
      "the trace; pass the value as a tensor argument or keep it in a variable",
      i, ts_op_name(r->op), ts__diverge_base_name(r->loc.file), r->loc.line, then, now);
    free(now);
    free(then);
    return cause;
  }
  return NULL;
}

/* The cause at r, or else at an op fused into the same node that feeds it
 * (their inputs are the fused node's). */
static char *likely_cause(const rec *r, const ts_diverge_options *opt)
{
  if (!r->traced)
    return NULL;
  char *cause = loop_cause(r);
  cause = cause ? cause : host_constant_cause(r, opt);
  for (int i = 0; !cause && r->graph_node && i < r->n_inputs; i++) {
    const rec *p = r->producer[i];
    if (p && p->diff.expected == TS_EXPECTED_FUSED && p->graph_node == r->graph_node)
      cause = likely_cause(p, opt);
  }
  return cause;
}

/* "FusedElementwise 'Add' standing for Mul, Add" */
static char *describe_node(const ts_node *n)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "%s '%s' standing for ", ts_op_name(ts_node_op(n)), ts_node_name(n));
  for (int i = 0; i < ts_node_n_origins(n); i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", ts_op_name(ts_node_op(ts_node_origin(n, i))));
  return g_string_free(s, FALSE);
}

static ts_diverge_op op_of(const rec *r)
{
  ts_diverge_op d = r->diff;
  d.seq = r->seq;
  d.op = r->op;
  d.op_name = ts_op_name(r->op);
  d.node = r->traced ? g_strdup(ts_node_name(r->traced)) : NULL;
  d.graph_node = r->graph_node ? describe_node(r->graph_node) : NULL;
  d.loc = r->loc;
  d.occurrence = r->occurrence;
  d.loop_depth = loop_depth(r->traced);
  d.eager = d.eager ? ts_tensor_ref(d.eager) : NULL;
  d.graph = d.graph ? ts_tensor_ref(d.graph) : NULL;
  return d;
}

/* Is traced node t's value an output of its graph, or read by a node that
 * is in the optimized graph?  Then a pass replaced t by its input
 * (x + 0 -> x) rather than pruning it.  (A chain of such, x + 0 + 0, is
 * told apart only at its last node: the others count as pruned.) */
static bool value_used(const recorder *s, const ts_node *t)
{
  const ts_graph *g = ts_node_graph(t);
  for (int k = 0; k < ts_graph_n_outputs(g); k++)
    if (ts_graph_output(g, k).node == ts_node_id(t))
      return true;
  for (int id = 0; id < ts_graph_n_nodes(g); id++) {
    const ts_node *u = ts_graph_node(g, id);
    if (reads(u, t) && g_hash_table_contains(s->opt_node, u))
      return true;
  }
  return false;
}

/* Why r's difference (or its lack of a comparison) is expected; NONE if it is not. */
static ts_diverge_expected classify(rec *r, const recorder *s, char **note)
{
  *note = NULL;
  if (r->op == TS_OP_PRINT) {
    *note = g_strdup("prints: its output is the text, printed in both modes");
    return TS_EXPECTED_PRINT;
  }
  if (!r->traced) {
    *note = g_strdup("ran eagerly with no node of its own (in a TS_INIT_SCOPE, or the engine's "
                     "own op): its value enters the graph as a constant");
    return TS_EXPECTED_NO_TWIN;
  }
  if (!r->ran_in_graph) {
    const ts_node *into = g_hash_table_lookup(s->fused_into, r->traced);
    if (into) {
      r->graph_node = into;
      char *what = describe_node(into);
      *note = g_strdup_printf("fused into %s: its value is computed inside that node, so it "
                              "exists only eagerly", what);
      g_free(what);
      return TS_EXPECTED_FUSED;
    }
    const ts_node *opt = g_hash_table_lookup(s->opt_node, r->traced);
    if (!opt && value_used(s, r->traced)) {
      *note = g_strdup("the optimizer replaced its node by its input (x + 0, x * 1, a cast to "
                       "the same dtype, ...): the graph reads that instead");
      return TS_EXPECTED_SIMPLIFIED;
    }
    if (!opt) {
      *note = g_strdup("its node is not in the optimized graph (pruned)");
      return TS_EXPECTED_PRUNED;
    }
    if (ts_node_op(opt) == TS_OP_CONST) {
      *note = g_strdup_printf("folded into the constant '%s' by the optimizer", ts_node_name(opt));
      return TS_EXPECTED_FOLDED;
    }
    r->diff.kind = TS_DIVERGE_NOT_RUN;
  }
  if (r->diff.kind == TS_DIVERGE_NONE)
    return TS_EXPECTED_NONE;
  for (int i = 0; i < r->n_inputs; i++) {
    const rec *p = r->producer[i];
    if (p && p->diff.kind != TS_DIVERGE_NONE && p->diff.expected != TS_EXPECTED_NONE) {
      *note = g_strdup_printf("its input %d carries the expected difference of op #%" PRIu64
                              " %s", i, p->seq, ts_op_name(p->op));
      return TS_EXPECTED_FOLLOWS;
    }
  }
  if (r->assigned_var && r->diff.kind == TS_DIVERGE_VALUE &&
      r->last_assign->diff.kind == TS_DIVERGE_NONE) {
    *note = g_strdup_printf("reads the variable '%s' after an assign changed it: the graph "
                            "reads it at another point of the run", r->assigned_var);
    return TS_EXPECTED_STATE_ORDER;
  }
  return TS_EXPECTED_NONE;
}

static void report_add_expected(ts_diverge_report *rep, GArray *expected, rec *r, char *note)
{
  ts_diverge_op d = op_of(r);
  d.expected = r->diff.expected;
  d.note = note;
  g_array_append_val(expected, d);
  rep->n_expected++;
}

static gint by_seq(gconstpointer a, gconstpointer b)
{
  const rec *x = *(rec *const *)a, *y = *(rec *const *)b;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void summarize(recorder *s, ts_diverge_report *rep)
{
  g_ptr_array_sort(s->eager, by_seq);
  GArray *expected = g_array_new(FALSE, TRUE, sizeof(ts_diverge_op));
  rec *first = NULL;
  for (guint i = 0; i < s->eager->len; i++) {
    rec *r = s->eager->pdata[i];
    rep->n_matched += r->ran_in_graph;
    rep->n_compared += r->compared;
    char *note;
    r->diff.expected = classify(r, s, &note);
    if (r->diff.expected != TS_EXPECTED_NONE) {
      report_add_expected(rep, expected, r, note);
    } else if (r->diff.kind != TS_DIVERGE_NONE) {
      rep->n_differ++;
      first = first ? first : r;
    }
  }
  rep->n_eager = (int)s->eager->len;
  rep->n_graph = s->n_graph;
  rep->n_graph_only = s->n_graph_only;
  rep->expected = (ts_diverge_op *)(void *)g_array_free(expected, FALSE);
  if (first) {
    rep->first = g_new(ts_diverge_op, 1);
    *rep->first = op_of(first);
    rep->cause = likely_cause(first, &s->opt);
    rep->diverged = true;
  }
}

/* ---- running both ---------------------------------------------------------------------- */

static void recorder_init(recorder *s, const ts_diverge_options *opt)
{
  *s = (recorder){
    .thread = pthread_self(),
    .eager = g_ptr_array_new_with_free_func(rec_free),
    .by_traced = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)g_ptr_array_unref),
    .graph_runs = g_hash_table_new(NULL, NULL),
    .opt_node = g_hash_table_new(NULL, NULL),
    .stands_for = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)g_ptr_array_unref),
    .fused_into = g_hash_table_new(NULL, NULL),
    .produced = g_hash_table_new(NULL, NULL),
    .assigned = g_hash_table_new(NULL, NULL),
    .opt = opt ? *opt : TS_DIVERGE_OPTIONS_DEFAULT,
  };
}

static void recorder_clear(recorder *s)
{
  g_hash_table_unref(s->by_traced);
  g_hash_table_unref(s->graph_runs);
  g_hash_table_unref(s->opt_node);
  g_hash_table_unref(s->stands_for);
  g_hash_table_unref(s->fused_into);
  g_hash_table_unref(s->produced);
  g_hash_table_unref(s->assigned);
  g_ptr_array_unref(s->eager);
}

/* The results of both runs (a tuple's tensors: the first that differs,
 * else the first) into res, with the output's index; a tuple of another
 * length differs in shape. */
static void compare_results(ts_tensor *const *eager, int n_eager, ts_tensor *const *graph,
                            int n_graph, const ts_diverge_options *o, ts_diverge_op *res)
{
  for (int k = 0; k < n_graph && k < n_eager; k++) {
    if (!eager[k])
      continue;
    ts_diverge_op d = *res;
    ts_scope *scope = ts_scope_begin();
    const ts_tensor *g = ts__tensor_host((ts_loc){ 0 }, graph[k]);
    if (g)
      compare(eager[k], g, o, &d);
    ts_scope_end(scope);
    if (res->eager && (res->kind != TS_DIVERGE_NONE || d.kind == TS_DIVERGE_NONE))
      continue;
    ts_tensor_unref(res->eager);
    ts_tensor_unref(res->graph);
    *res = d;
    res->output = k;
    res->eager = ts_tensor_ref(eager[k]);
    res->graph = copy_out(graph[k]);
  }
  if (n_eager > 0 && n_eager != n_graph)
    res->kind = TS_DIVERGE_SHAPE;
}

/* Both runs of a call resolved to its graph: eagerly and through its
 * concrete function.  *graph_out gets the graph's result (current scope)
 * and *out the report; when the eager run fails the graph still runs and
 * *eager_error (owned) says why, with no report.  false + error when the
 * graph run fails. */
static bool diverge_run(const ts__call *call, const ts_diverge_options *opt,
                        ts_diverge_report **out, ts_tensor **graph_out, char **eager_error)
{
  ts_function *f = call->f;
  ts_concrete *cf = call->cf;
  *out = NULL;
  *eager_error = NULL;
  GArray *vars = g_array_new(FALSE, FALSE, sizeof(saved_var));
  if (assigns_any(ts_concrete_graph(cf)))
    collect_vars(ts_concrete_graph(cf), vars);
  recorder s;
  recorder_init(&s, opt);
  plan_matches(&s, ts__concrete_exec_graph(cf));
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_event, &s);

  /* Eagerly, functions it calls included (a process-wide switch, as
   * tf.config.run_functions_eagerly is). */
  bool was_eager = ts_functions_run_eagerly();
  ts_run_functions_eagerly(true);
  ts_tensor *eager = ts__call_run(call, TS__CALL_EAGER);
  ts_run_functions_eagerly(was_eager);
  ts_tensor *eager_copy[TS_MAX_RETURNS] = { NULL };
  int n_eager = eager ? ts__results(ts_function_name(f), eager, eager_copy, TS_MAX_RETURNS, NULL) : 0;
  for (int k = 0; k < n_eager; k++)
    eager_copy[k] = keep_eager(eager_copy[k]);
  if (!eager) {
    ts_error *e = ts_error_take();
    *eager_error = g_strdup(e && e->message ? e->message : "failed");
    ts_error_free(e);
  }

  vars_restore(vars);
  s.graph = true;
  ts__context()->serial++; /* whole values on this thread, to compare with the eager ones */
  ts_tensor *graph = ts__call_run(call, TS__CALL_GRAPH);
  ts__context()->serial--;
  ts_listener_remove(id);
  vars_free(vars);

  if (graph && eager) {
    ts_diverge_report *rep = g_new0(ts_diverge_report, 1);
    rep->function = g_strdup(ts_function_name(f));
    rep->signature = g_strdup(ts_concrete_signature(cf));
    rep->options = s.opt;
    summarize(&s, rep);
    ts_diverge_op *res = &rep->result;
    res->op = TS_OP_IDENTITY;
    res->op_name = "result";
    res->worst = -1;
    ts_tensor *results[TS_MAX_RETURNS];
    int n_graph = ts__results(ts_function_name(f), graph, results, TS_MAX_RETURNS, NULL);
    rep->n_results = n_graph;
    compare_results(eager_copy, n_eager, results, n_graph, &s.opt, res);
    rep->diverged |= res->kind != TS_DIVERGE_NONE;
    *out = rep;
  }
  *graph_out = graph;
  for (int k = 0; k < n_eager; k++)
    ts_tensor_unref(eager_copy[k]);
  recorder_clear(&s);
  return graph != NULL;
}

bool ts_diverge(ts_function *fn, const ts_value *args, int n_args, const ts_diverge_options *opt,
                ts_diverge_report **out)
{
  TS_CHECK_ARG(fn && out && n_args >= 0 && (args || n_args == 0), false);
  *out = NULL;
  if (ts_tracing() || ts__context()->run.run_id) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "%s: ts_diverge runs a top-level call; not inside another function",
                 ts_function_name(fn));
    return false;
  }
  if (opt && !(opt->atol >= 0 && opt->rtol >= 0)) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "%s: tolerances must be numbers >= 0 (atol %g, rtol %g)", ts_function_name(fn),
                 opt->atol, opt->rtol);
    return false;
  }
  ts__call call;
  if (!ts__call_begin(&call, fn, args, n_args))
    return false;
  ts_scope *scope = ts_scope_begin();
  ts__context()->carried_ok++; /* what the modes make of an unlisted loop value is compared */
  bool ok = ts__call_resolve(&call, TS__CALL_GRAPH);
  if (ok && call.how != TS__CALL_GRAPH) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "%s: past its retrace limit, this call would run eagerly: no graph to compare",
                 ts_function_name(fn));
    ok = false;
  }
  bool resolved = ok;
  ts_tensor *graph = NULL;
  char *eager_error = NULL;
  ok = ok && diverge_run(&call, opt, out, &graph, &eager_error);
  if (eager_error) { /* the eager run's error wins: it came first */
    ts_error_clear();
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL, "eager run: %s", eager_error);
    ok = false;
  } else if (!ok && resolved) {
    ts_error *e = ts_error_take();
    ts_error_set(e ? e->code : TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL, "graph run: %s",
                 e && e->message ? e->message : "failed");
    ts_error_free(e);
  }
  ts__context()->carried_ok--;
  g_free(eager_error);
  ts__call_clear(&call);
  ts_scope_end(scope);
  return ok;
}

/* ---- check mode ------------------------------------------------------------------------ */

/* Check mode's call hook: the call resolved as graph mode resolves it,
 * then both runs compared, a warning when they differ; returns the
 * graph's result (current scope).  NULL + error. */
static ts_tensor *check_call(ts__call *call)
{
  ts_function *f = call->f;
  ts__context()->carried_ok++; /* as in ts_diverge */
  ts_tensor *graph = NULL;
  ts_diverge_report *rep = NULL;
  char *eager_error = NULL;
  if (ts__call_resolve(call, TS__CALL_GRAPH)) {
    if (call->how != TS__CALL_GRAPH) /* past the retrace limit: eagerly, nothing to compare */
      graph = ts__call_run(call, call->how);
    else
      diverge_run(call, NULL, &rep, &graph, &eager_error);
  }
  ts__context()->carried_ok--;
  GString *msg = g_string_new(NULL);
  if (graph && eager_error)
    g_string_append_printf(msg, "%s%s: the eager run failed where the graph ran (check mode): %s",
                           ts_function_name(f), ts_concrete_signature(call->cf), eager_error);
  if (rep && rep->diverged) {
    g_string_append_printf(msg, "%s%s: eager and graph differ (check mode): ", rep->function,
                           rep->signature);
    ts__diverge_append_verdict(msg, rep);
    if (rep->cause)
      g_string_append_printf(msg, "; likely cause: %s", rep->cause);
  }
  if (msg->len)
    ts__function_warn(f, TS_WARNING_DIVERGENCE, msg->str);
  g_string_free(msg, TRUE);
  g_free(eager_error);
  ts_diverge_report_free(rep);
  return graph;
}

void ts_function_set_check_eagerly(ts_function *f, bool check)
{
  TS_CHECK_ARG(f != NULL, );
  ts__function_set_call_hook(f, check ? check_call : NULL);
}

bool ts_function_checks_eagerly(const ts_function *f)
{
  return f && ts__function_call_hook(f) == check_call;
}
