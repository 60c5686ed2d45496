/* tracer.c — recording ops into graphs: frames, captures, name scopes and
 * automatic control dependencies between stateful ops. */
#include "trace-private.h"

/* An output no tensor can have: all dims known and more elements than
 * int64 counts (unknown dims on the inputs let an op's inference accept
 * it).  The graph format refuses such a shape, so the tracer does too. */
static bool outputs_countable(const ts_op_call *call, const ts_info *info, int n_out)
{
  for (int i = 0; i < n_out; i++) {
    if (ts_shape_size(info[i].shape) != TS_SHAPE_SIZE_INVALID)
      continue;
    char buf[TS_INFO_STR];
    ts__op_fail(call->loc, call->def, TS_ERR_SHAPE,
                "output %d would be %s, more elements than int64 counts", i,
                ts__info_str(buf, info[i].dtype, info[i].shape));
    return false;
  }
  return true;
}

/* The op's inference on call with its inputs of unknown rank standing in
 * as rank `rank`, dims unknown.  false (and no error) when it refuses. */
static bool infer_at_rank(const ts_op_call *call, int rank, ts_info *info, int *n_out)
{
  ts_tensor stand_in[TS_MAX_INPUTS];
  ts_tensor *in[TS_MAX_INPUTS];
  for (int i = 0; i < call->n_in; i++) {
    in[i] = call->in[i];
    if (in[i]->shape.rank != TS_RANK_UNKNOWN)
      continue;
    stand_in[i] = *in[i];
    stand_in[i].shape = (ts_shape){ .rank = rank };
    for (int d = 0; d < rank; d++)
      stand_in[i].shape.dim[d] = -1;
    in[i] = &stand_in[i];
  }
  ts_op_call c = *call;
  c.in = in;
  bool ok = ts__dispatch_infer(&c, info, n_out);
  if (!ok)
    ts_error_free(ts_error_take()); /* infer_unknown_rank runs only without a pending error */
  return ok;
}

/* An input of unknown rank: the op's inference runs on stand-ins of each
 * rank in turn for the outputs' dtypes; an output that two ranks give
 * alike keeps its shape (a full reduction's scalar), the others' ranks are
 * unknown too, as TensorFlow's shape inference gives <unknown>. */
static bool infer_unknown_rank(const ts_op_call *call, ts_info *info, int *n_out)
{
  for (int r = 0; r < TS_MAX_RANK; r++) {
    if (!infer_at_rank(call, r, info, n_out))
      continue;
    ts_info next[TS_MAX_OUTPUTS];
    int n_next;
    bool alike = infer_at_rank(call, r + 1, next, &n_next) && n_next == *n_out;
    for (int i = 0; i < *n_out; i++)
      if (!alike || !ts_shape_equal(info[i].shape, next[i].shape))
        info[i].shape = (ts_shape){ .rank = TS_RANK_UNKNOWN };
    return true;
  }
  ts__op_fail(call->loc, call->def, TS_ERR_SHAPE,
              "takes no input of unknown rank here (an If whose branches give ranks that "
              "differ); give the branches one rank, e.g. with ts_reshape");
  return false;
}

static bool any_unknown_rank(const ts_op_call *call)
{
  for (int i = 0; i < call->n_in; i++)
    if (call->in[i]->shape.rank == TS_RANK_UNKNOWN)
      return true;
  return false;
}

/* Records an op as a node of the frame's graph instead of running it. */
static int trace_run(ts_op_handler *self, const ts_op_call *call, ts_tensor **out)
{
  ts_info info[TS_MAX_OUTPUTS];
  int n_out;
  bool inferred = G_UNLIKELY(any_unknown_rank(call)) && !ts_failed()
                    ? infer_unknown_rank(call, info, &n_out)
                    : ts__dispatch_infer(call, info, &n_out);
  if (!inferred || !outputs_countable(call, info, n_out))
    return -1;
  return ts__trace_record(self->data, call->loc, call->def, call->in, call->n_in, call->attrs,
                          info, n_out, out);
}

/* ts_init_scope: ops run eagerly whatever is traced around them. */
static int init_scope_run(ts_op_handler *self, const ts_op_call *call, ts_tensor **out)
{
  return ts__run_eager(call, out);
}

/* Hides the frames below it: a nested function is traced on its own. */
static int isolate_run(ts_op_handler *self, const ts_op_call *call, ts_tensor **out)
{
  return ts__run_eager(call, out);
}

ts_frame *ts__trace_frame(void)
{
  for (ts_op_handler *h = ts__handler_top(); h; h = h->below) {
    if (h->run == trace_run)
      return h->data;
    if (h->run == init_scope_run || h->run == isolate_run)
      return NULL;
  }
  return NULL;
}

void ts__trace_isolate_begin(ts_op_handler *h)
{
  *h = (ts_op_handler){ .name = "isolate", .run = isolate_run };
  ts__handler_push(h);
}

void ts__trace_isolate_end(ts_op_handler *h)
{
  ts__handler_pop(h);
}

bool ts_tracing(void)
{
  return ts__trace_frame() != NULL;
}

void ts_init_scope_begin(void)
{
  ts_op_handler *h = g_new0(ts_op_handler, 1);
  h->name = "init_scope";
  h->run = init_scope_run;
  ts__handler_push(h);
  ts__implicit(+1); /* lifted out of any graph: no node is their twin */
}

void ts_init_scope_end(void)
{
  ts_op_handler *h = ts__handler_top();
  if (!h || h->run != init_scope_run) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "ts_init_scope_end without a matching ts_init_scope_begin");
    return;
  }
  ts__handler_pop(h);
  g_free(h);
  ts__implicit(-1);
}

ts_frame *ts__frame_push(const char *graph_name)
{
  ts_frame *innermost = ts__trace_frame();
  ts_frame *f = g_new0(ts_frame, 1);
  f->graph = ts__graph_new(graph_name, innermost ? innermost->graph : NULL);
  f->outer = innermost;
  f->lifted = g_hash_table_new(g_direct_hash, g_direct_equal);
  f->captures = g_array_new(FALSE, FALSE, sizeof(ts_source));
  /* A subgraph continues its parent's name scope. */
  f->scope = g_string_new(innermost ? innermost->scope->str : "");
  f->scopes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  f->last_stateful = -1;
  f->notes = innermost ? innermost->notes : NULL;
  f->handler = (ts_op_handler){
    .name = "tracer", .run = trace_run, .list_elem = ts__trace_list_elem, .data = f,
  };
  ts__handler_push(&f->handler);
  return f;
}

static void frame_free(ts_frame *f, GArray **captures)
{
  /* init scopes a `return` skipped are dropped with the frame */
  for (ts_op_handler *h; (h = ts__handler_top()) != &f->handler && h;) {
    ts__handler_pop(h);
    g_free(h);
    ts__implicit(-1);
  }
  ts__handler_pop(&f->handler);
  g_hash_table_unref(f->lifted);
  g_string_free(f->scope, TRUE);
  g_hash_table_unref(f->scopes);
  if (captures) {
    *captures = f->captures;
  } else {
    for (guint i = 0; i < f->captures->len; i++)
      ts_tensor_unref(g_array_index(f->captures, ts_source, i).value);
    g_array_unref(f->captures);
  }
  g_free(f);
}

ts_graph *ts__frame_pop(ts_frame *frame, GArray **captures)
{
  ts_graph *g = frame->graph;
  frame_free(frame, captures);
  return g;
}

void ts__frame_abort(ts_frame *frame)
{
  ts_graph *g = frame->graph;
  frame_free(frame, NULL);
  ts__graph_free(g);
}

/* Sources and ports packed into one pointer-sized hash key/value: a node
 * pointer (8-aligned) shifted left with the output index in the low bits. */
#define PACK_INDEX_BITS 8
static gpointer pack(const void *p, int index)
{
  return (gpointer)(((uintptr_t)p << PACK_INDEX_BITS) | (uintptr_t)index);
}

static ts_port unpack_port(gpointer v)
{
  uintptr_t u = (uintptr_t)v;
  return (ts_port){ (int)(u >> PACK_INDEX_BITS), (int)(u & ((1u << PACK_INDEX_BITS) - 1)) };
}

static gpointer pack_port(ts_port p)
{
  return (gpointer)(((uintptr_t)p.node << PACK_INDEX_BITS) | (uintptr_t)p.index);
}

ts_tensor *ts__tensor_symbolic(ts_node *node, int index)
{
  ts_info info = node->outputs[index];
  ts_tensor *t = g_malloc(sizeof *t);
  *t = (ts_tensor){
    .refcount = 1, .dtype = info.dtype, .shape = info.shape,
    .size = ts_shape_size(info.shape), .node = node, .node_output = index,
    .name = strdup(node->name), /* printable without the graph (and after it) */
  };
  ts__scope_adopt(t);
  return t;
}

static bool frame_on_stack(ts_frame *frame, const ts_graph *g)
{
  for (ts_frame *f = frame; f; f = f->outer)
    if (f->graph == g)
      return true;
  return false;
}

/* A constant (or a variable's handle) captured from eager code. */
static ts_port lift_concrete(ts_frame *frame, ts_tensor *value)
{
  ts_op op = value->is_variable ? TS_OP_VAR_HANDLE : TS_OP_CONST;
  ts_info info = { value->dtype, value->shape };
  ts_node *n = ts__graph_add_node(frame->graph, op, NULL, frame->scope->str, (ts_loc){ 0 },
                                  NULL, 0, NULL, 0, &info, 1);
  n->value = ts_tensor_ref(value);
  return (ts_port){ n->id, 0 };
}

bool ts__frame_source_port(ts_frame *frame, ts_source src, ts_port *out)
{
  if (src.node && src.node->graph == frame->graph) {
    *out = (ts_port){ src.node->id, src.index };
    return true;
  }
  gpointer key = src.node ? pack(src.node, src.index) : pack(src.value, (1 << PACK_INDEX_BITS) - 1);
  gpointer hit;
  if (g_hash_table_lookup_extended(frame->lifted, key, NULL, &hit)) {
    *out = unpack_port(hit);
    return true;
  }
  if (!src.node) {
    *out = lift_concrete(frame, src.value);
  } else {
    if (!frame->outer || !frame_on_stack(frame->outer, src.node->graph)) {
      const ts_frame *probe = frame;
      while (probe && !probe->probe)
        probe = probe->outer;
      if (probe) /* the value came round from the loop's first pass */
        ts_error_set(TS_ERR_INVALID_ARGUMENT, src.node->loc, NULL,
                     "'%s' was made by an iteration of the %s loop at %s:%d and is used by "
                     "the next one; a value carried around a loop must be one of the loop's "
                     "listed variables (&x, ...), or each iteration of the traced loop would "
                     "see the value from before the loop",
                     src.node->name, probe->block_kind, probe->block_loc.file,
                     probe->block_loc.line);
      else if (src.node->loop_element) /* AutoGraph would carry it out of the loop */
        ts_error_set(TS_ERR_INVALID_ARGUMENT, src.node->loc, NULL,
                     "the loop variable of this TS_FOR is used after the loop; a traced loop "
                     "does not carry it out (eagerly it holds the last element): give its "
                     "value to a listed variable in the body (&last, ...) and use that");
      else if (src.node->graph->parent) /* a branch or loop body of this trace */
        ts_error_set(TS_ERR_INVALID_ARGUMENT, src.node->loc, NULL,
                     "'%s' was made inside a TS_IF/TS_WHILE/TS_FOR block (%s) and is used after "
                     "it; a value that leaves a block must be one of the block's listed "
                     "variables (&x, ...)",
                     src.node->name, src.node->graph->name);
      else
        ts_error_set(TS_ERR_INVALID_ARGUMENT, src.node->loc, NULL,
                     "tensor '%s:%d' belongs to a graph that is no longer being traced (a "
                     "symbolic tensor escaped an earlier trace, e.g. through a global)",
                     src.node->name, src.index);
      return false;
    }
    /* A value of an outer frame: a Placeholder here, fed by the If/While node. */
    /* Named after the captured value ("x", or "MatMul" for "dense_1/MatMul"). */
    const char *slash = strrchr(src.node->name, '/');
    ts_node *p = ts__graph_add_node(frame->graph, TS_OP_PLACEHOLDER,
                                    slash ? slash + 1 : src.node->name, "", (ts_loc){ 0 }, NULL,
                                    0, NULL, 0, &src.node->outputs[src.index], 1);
    p->input_index = (int)frame->graph->inputs->len;
    g_array_append_val(frame->graph->inputs, p->id);
    g_array_append_val(frame->captures, src);
    *out = (ts_port){ p->id, 0 };
  }
  g_hash_table_insert(frame->lifted, key, pack_port(*out));
  return true;
}

bool ts__frame_port(ts_frame *frame, ts_tensor *t, ts_port *out)
{
  ts_source src = t->node ? (ts_source){ .node = t->node, .index = t->node_output }
                          : (ts_source){ .value = t };
  return ts__frame_source_port(frame, src, out);
}

ts_tensor *ts__frame_placeholder(ts_frame *frame, const char *name, ts_info info)
{
  ts_node *p = ts__graph_add_node(frame->graph, TS_OP_PLACEHOLDER, name, "", (ts_loc){ 0 },
                                  NULL, 0, NULL, 0, &info, 1);
  p->input_index = (int)frame->graph->inputs->len;
  g_array_append_val(frame->graph->inputs, p->id);
  return ts__tensor_symbolic(p, 0);
}

void ts__frame_order(ts_frame *frame, ts_node *n)
{
  if (!n->stateful)
    return;
  /* Automatic control dependencies: side effects run in program order. */
  if (frame->last_stateful >= 0)
    ts__node_add_control(n, frame->last_stateful);
  frame->last_stateful = n->id;
}

ts_node *ts__trace_record_node(ts_frame *frame, ts_loc loc, const ts_op_def *def,
                               const ts_port *ports, int n_in, const ts_attr *attrs,
                               const ts_info *out_info, int n_out)
{
  ts_node *n = ts__graph_add_node(frame->graph, def->op, NULL, frame->scope->str, loc, ports, n_in,
                                  attrs, def->n_attrs, out_info, n_out);
  /* If and While have no eager op of their own: their blocks are paths. */
  n->has_site = !(def->flags & TS_OPF_CONTROL_FLOW) && ts__site_next(loc, &n->site, &n->occurrence);
  n->gradient_of = ts__context()->grad_of;
  if (frame->notes)
    ts__trace_notes_record(frame->notes, n);
  ts__frame_order(frame, n);
  return n;
}

int ts__trace_record(ts_frame *frame, ts_loc loc, const ts_op_def *def, ts_tensor *const *in,
                     int n_in, const ts_attr *attrs, const ts_info *out_info, int n_out,
                     ts_tensor **out)
{
  ts_port ports[TS_MAX_INPUTS];
  for (int i = 0; i < n_in; i++) {
    ts_tensor *t = in[i];
    /* Other ops see a variable's value as read here, in program order
     * (a read of the engine's own: eagerly there is no such op). */
    if (t->is_variable && !(def->flags & TS_OPF_VARIABLE)) {
      ts__implicit(+1);
      t = ts_read_at(loc, t);
      ts__implicit(-1);
      if (!t)
        return -1;
    }
    if (!ts__frame_port(frame, t, &ports[i]))
      return -1;
    /* A constant lifted for this op is placed where the op is written. */
    ts_node *lifted = ts__graph_node(frame->graph, ports[i].node);
    if ((ts__op_def(lifted->op)->flags & TS_OPF_VALUE) && !lifted->loc.file)
      lifted->loc = (ts_loc){ ts__graph_intern(frame->graph, loc.file),
                              ts__graph_intern(frame->graph, loc.func), loc.line };
  }
  ts_node *n = ts__trace_record_node(frame, loc, def, ports, n_in, attrs, out_info, n_out);
  for (int i = 0; i < n_out; i++)
    out[i] = ts__tensor_symbolic(n, i);
  return n_out;
}

/* ---- name scopes ------------------------------------------------------------ */

/* A scope name not yet opened under f's current scope: "dense", then
 * "dense_1", "dense_2", ... as tf.name_scope does.  Owned. */
char *ts__unique_scope(ts_frame *f, const char *base)
{
  const char *prefix = f->scope->len ? "/" : "";
  char *name = g_strdup(base);
  char *full = g_strdup_printf("%s%s%s", f->scope->str, prefix, name);
  for (int i = 1; g_hash_table_contains(f->scopes, full); i++) {
    g_free(name);
    g_free(full);
    name = g_strdup_printf("%s_%d", base, i);
    full = g_strdup_printf("%s%s%s", f->scope->str, prefix, name);
  }
  g_hash_table_add(f->scopes, full);
  return name;
}

void ts_name_scope_begin(const char *name)
{
  ts_frame *f = ts__trace_frame();
  if (!f)
    return; /* eager code has no graph to name */
  char *unique = ts__unique_scope(f, name && *name ? name : "scope");
  if (f->scope->len)
    g_string_append_c(f->scope, '/');
  g_string_append(f->scope, unique);
  g_free(unique);
}

void ts__name_scope_reenter(const char *name)
{
  ts_frame *f = ts__trace_frame();
  if (!f)
    return;
  if (f->scope->len)
    g_string_append_c(f->scope, '/');
  g_string_append(f->scope, name && *name ? name : "scope");
  g_hash_table_add(f->scopes, g_strdup(f->scope->str)); /* taken: ts_name_scope_begin avoids it */
}

void ts_name_scope_end(void)
{
  ts_frame *f = ts__trace_frame();
  if (!f)
    return;
  char *slash = strrchr(f->scope->str, '/');
  g_string_truncate(f->scope, slash ? (gsize)(slash - f->scope->str) : 0);
}
