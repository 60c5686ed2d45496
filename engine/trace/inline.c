/* trace/inline.c — a traced function's graph copied into the graph of a
 * function that calls it while being traced, and the notes a trace keeps
 * for such copies.
 *
 * tf.function traces a nested function once per signature and the caller's
 * graph calls that concrete function.  The engine copies the concrete
 * graph in instead (TensorFlow's own optimizer inlines such calls too):
 * the viewer, the passes, the exporters, the gradient tapes and the
 * debugger then see one graph, and the callee's C code runs once per
 * signature, however many callers trace it. */
#include "trace-private.h"

typedef struct note {
  const ts_path_step *steps; /* the path below the trace's base (nodes with a site) */
  int n_steps;
  bool no_gradient;          /* made while tapes paused (ts_stop_gradient) */
} note;

struct ts_trace_notes {
  GHashTable *nodes;         /* const ts_node * -> note * (owned) */
  GPtrArray *chains;         /* the steps arrays (owned) */
  GStringChunk *strings;     /* the steps' names: they outlive the functions named */
  /* The last chain made, and the path entries and steps below it was made
   * of: nodes recorded one after another mostly share it. */
  const ts_path_step *last;
  int n_last;
  ts_path_step last_from[TS_MAX_PATH];
  int n_from;
  const ts_path_step *last_below;
};

ts_trace_notes *ts__trace_notes_new(void)
{
  ts_trace_notes *notes = g_new0(ts_trace_notes, 1);
  notes->nodes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  notes->chains = g_ptr_array_new_with_free_func(g_free);
  notes->strings = g_string_chunk_new(256);
  return notes;
}

void ts__trace_notes_free(ts_trace_notes *notes)
{
  if (!notes)
    return;
  g_hash_table_unref(notes->nodes);
  g_ptr_array_unref(notes->chains);
  g_string_chunk_free(notes->strings);
  g_free(notes);
}

static const char *intern(ts_trace_notes *notes, const char *s)
{
  return s ? g_string_chunk_insert_const(notes->strings, s) : NULL;
}

static bool same_step(const ts_path_step *a, const ts_path_entry *b)
{
  return a->loc.file == b->loc.file && a->loc.func == b->loc.func && a->loc.line == b->loc.line &&
         a->what == b->what;
}

/* The current path's entries from the trace's base, then below[0..n_below):
 * the chain of steps a node recorded now is under.  *n gets its length. */
static const ts_path_step *chain(ts_trace_notes *notes, const ts_path_step *below, int n_below,
                                 int *n)
{
  int n_from;
  const ts_path_entry *from = ts__path_entries(&n_from);
  bool same = notes->last && n_from == notes->n_from && below == notes->last_below &&
              n_from + n_below == notes->n_last;
  for (int i = 0; same && i < n_from; i++)
    same = same_step(&notes->last_from[i], &from[i]);
  if (!same) {
    ts_path_step *steps = g_new(ts_path_step, n_from + n_below + 1);
    for (int i = 0; i < n_from; i++) {
      notes->last_from[i] = (ts_path_step){ from[i].loc, from[i].what };
      steps[i] = (ts_path_step){ { intern(notes, from[i].loc.file), intern(notes, from[i].loc.func),
                                   from[i].loc.line },
                                 intern(notes, from[i].what) };
    }
    for (int i = 0; i < n_below; i++)
      steps[n_from + i] = (ts_path_step){ { intern(notes, below[i].loc.file),
                                            intern(notes, below[i].loc.func), below[i].loc.line },
                                          intern(notes, below[i].what) };
    g_ptr_array_add(notes->chains, steps);
    notes->last = steps;
    notes->n_last = n_from + n_below;
    notes->n_from = n_from;
    notes->last_below = below;
  }
  *n = notes->n_last;
  return notes->last;
}

/* Notes n (with a site: the path it is under, with below[] after it). */
static void note_add(ts_trace_notes *notes, const ts_node *n, const ts_path_step *below,
                     int n_below, bool no_gradient)
{
  if (!n->has_site && !no_gradient)
    return;
  note *x = g_new0(note, 1);
  if (n->has_site)
    x->steps = chain(notes, below, n_below, &x->n_steps);
  x->no_gradient = no_gradient;
  g_hash_table_insert(notes->nodes, (gpointer)n, x);
}

void ts__trace_notes_record(ts_trace_notes *notes, const ts_node *n)
{
  note_add(notes, n, NULL, 0, ts__context()->tape_pause > 0);
}

/* ---- the copy ------------------------------------------------------------------------ */

typedef struct inliner {
  ts_frame *frame;
  const ts_trace_notes *notes; /* the callee's */
  const char *scope;           /* the copy's name scope: "outer_scope/inner" */
  GHashTable *copies;          /* callee node -> its copy (for gradient_of) */
} inliner;

/* Where the nodes of one graph being copied went. */
typedef struct node_map {
  int *node;     /* per node: its copy's id (-1: none) */
  int *offset;   /* per node: its first port in `port` */
  ts_port *port;
} node_map;

static void map_init(node_map *m, const ts_graph *g)
{
  guint n = g->nodes->len, n_ports = 0;
  m->node = g_new(int, n + 1);
  m->offset = g_new(int, n + 1);
  for (guint id = 0; id < n; id++) {
    m->node[id] = -1;
    m->offset[id] = (int)n_ports;
    n_ports += (guint)ts__graph_node(g, (int)id)->n_outputs;
  }
  m->port = g_new0(ts_port, n_ports + 1);
}

static void map_clear(node_map *m)
{
  g_free(m->node);
  g_free(m->offset);
  g_free(m->port);
}

static ts_port map_port(const node_map *m, ts_port p)
{
  return m->port[m->offset[p.node] + p.index];
}

/* Node n's single output is at port p of the copy's graph. */
static void map_to_port(node_map *m, const ts_node *n, ts_port p)
{
  m->node[n->id] = p.node;
  m->port[m->offset[n->id]] = p;
}

static void map_to_node(node_map *m, const ts_node *n, const ts_node *c)
{
  m->node[n->id] = c->id;
  for (int i = 0; i < n->n_outputs; i++)
    m->port[m->offset[n->id] + i] = (ts_port){ c->id, i };
}

static ts_graph *copy_graph(inliner *in, const ts_graph *src, ts_graph *parent);

/* A copy of n in dst, its inputs and control edges mapped by m: named and
 * scoped under the copy's scope (placeholders keep theirs, as a branch's
 * captures have none), with the site the same op gets when the caller
 * runs eagerly. */
static ts_node *copy_node(inliner *in, const ts_node *n, ts_graph *dst, const node_map *m)
{
  ts_port ports[TS_MAX_INPUTS];
  for (int i = 0; i < n->n_inputs; i++)
    ports[i] = map_port(m, n->inputs[i]);
  const char *slash = strrchr(n->name, '/');
  char *scope = n->op == TS_OP_PLACEHOLDER ? g_strdup(n->scope)
                : *n->scope                ? g_strconcat(in->scope, "/", n->scope, NULL)
                                           : g_strdup(in->scope);
  ts_node *c = ts__graph_add_node(dst, n->op, slash ? slash + 1 : n->name, scope, n->loc, ports,
                                  n->n_inputs, n->attrs, n->n_attrs, n->outputs, n->n_outputs);
  g_free(scope);
  for (int i = 0; i < n->n_control; i++)
    if (m->node[n->control[i]] >= 0)
      ts__node_add_control(c, m->node[n->control[i]]);
  if (n->value)
    ts__node_set_value(c, n->value);
  for (int s = 0; s < n->n_subgraphs; s++)
    ts__node_add_subgraph(c, copy_graph(in, n->subgraphs[s], dst));
  c->stateful = n->stateful;

  const note *x = g_hash_table_lookup(in->notes->nodes, n);
  c->occurrence = n->occurrence;
  c->has_site = n->has_site && x && ts__site_below(x->steps, x->n_steps, n->loc, &c->site);
  ts_context *ctx = ts__context();
  const ts_node *grad_of = n->gradient_of ? g_hash_table_lookup(in->copies, n->gradient_of) : NULL;
  c->gradient_of = grad_of ? grad_of : ctx->grad_of;
  g_hash_table_insert(in->copies, (gpointer)n, c);
  if (in->frame->notes)
    note_add(in->frame->notes, c, x ? x->steps : NULL, x ? x->n_steps : 0,
             (x && x->no_gradient) || ctx->tape_pause > 0);
  return c;
}

/* A subgraph (a branch, a loop's condition or body) copied whole. */
static ts_graph *copy_graph(inliner *in, const ts_graph *src, ts_graph *parent)
{
  ts_graph *dst = ts__graph_new(src->name, parent);
  node_map m;
  map_init(&m, src);
  for (guint id = 0; id < src->nodes->len; id++) {
    const ts_node *n = ts__graph_node(src, (int)id);
    map_to_node(&m, n, copy_node(in, n, dst, &m));
  }
  for (guint i = 0; i < src->inputs->len; i++)
    ts__graph_add_input(dst, ts__graph_node(dst, m.node[g_array_index(src->inputs, int, i)]));
  for (guint i = 0; i < src->outputs->len; i++)
    ts__graph_add_output(dst, map_port(&m, g_array_index(src->outputs, ts_port, i)));
  map_clear(&m);
  return dst;
}

/* Tells the tapes recording in the frame of the copy c, as they would have
 * heard of its op: its inputs as tensors (captured values as themselves,
 * so that a variable's read is the variable's). */
static void tape_record(const ts_node *c)
{
  ts_source sources[TS_MAX_INPUTS];
  ts_tensor *out[TS_MAX_OUTPUTS];
  for (int i = 0; i < c->n_inputs; i++) {
    ts_node *from = ts__graph_node(c->graph, c->inputs[i].node);
    sources[i] = (ts__op_def(from->op)->flags & TS_OPF_VALUE) && from->value
                   ? (ts_source){ .value = from->value }
                   : (ts_source){ .node = from, .index = c->inputs[i].index };
  }
  for (int j = 0; j < c->n_outputs; j++)
    out[j] = ts__tensor_symbolic((ts_node *)c, j);
  ts__tape_record_node((ts_node *)c, sources, c->n_inputs, out, c->n_outputs);
}

/* The port of the frame standing for node n of the callee's graph when n
 * is a placeholder (the argument) or a captured value (the same capture). */
static bool outer_port(ts_frame *frame, const ts_node *n, ts_tensor *const *inputs,
                       int n_inputs, ts_port *port)
{
  if (n->op == TS_OP_PLACEHOLDER) {
    if (n->input_index < 0 || n->input_index >= n_inputs) {
      ts_error_set(TS_ERR_INTERNAL, n->loc, NULL, "inlining '%s': placeholder '%s' has no argument",
                   n->graph->name, n->name);
      return false;
    }
    return ts__frame_port(frame, inputs[n->input_index], port);
  }
  if (!ts__frame_port(frame, n->value, port))
    return false;
  ts_node *lifted = ts__graph_node(frame->graph, port->node);
  if ((ts__op_def(lifted->op)->flags & TS_OPF_VALUE) && !lifted->loc.file && n->loc.file)
    lifted->loc = (ts_loc){ ts__graph_intern(frame->graph, n->loc.file),
                            ts__graph_intern(frame->graph, n->loc.func), n->loc.line };
  return true;
}

bool ts__inline_graph(const char *name, const ts_graph *g, const ts_trace_notes *notes,
                      ts_tensor *const *inputs, int n_inputs, ts_tensor **outputs,
                      int n_outputs)
{
  ts_frame *frame = ts__trace_frame();
  if (n_inputs != (int)g->inputs->len || n_outputs != (int)g->outputs->len) {
    ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL,
                 "inlining '%s': %d arguments for %u inputs, %d results for %u outputs",
                 g->name, n_inputs, g->inputs->len, n_outputs, g->outputs->len);
    return false;
  }
  ts_name_scope_begin(name);
  char *scope = g_strdup(frame->scope->str);
  inliner in = { frame, notes, scope, g_hash_table_new(g_direct_hash, g_direct_equal) };
  bool taped = ts__tape_recording_here();
  node_map m;
  map_init(&m, g);
  bool ok = true;
  for (guint id = 0; ok && id < g->nodes->len; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    if (n->op == TS_OP_PLACEHOLDER || (ts__op_def(n->op)->flags & TS_OPF_VALUE)) {
      ts_port port;
      ok = outer_port(frame, n, inputs, n_inputs, &port);
      if (ok)
        map_to_port(&m, n, port);
      continue;
    }
    ts_node *c = copy_node(&in, n, frame->graph, &m);
    map_to_node(&m, n, c);
    ts__frame_order(frame, c);
    const note *x = g_hash_table_lookup(notes->nodes, n);
    if (taped && !(x && x->no_gradient))
      tape_record(c);
  }
  for (int i = 0; ok && i < n_outputs; i++) {
    ts_port p = map_port(&m, g_array_index(g->outputs, ts_port, i));
    outputs[i] = ts__tensor_symbolic(ts__graph_node(frame->graph, p.node), p.index);
    ok = outputs[i] != NULL;
  }
  map_clear(&m);
  g_hash_table_unref(in.copies);
  g_free(scope);
  ts_name_scope_end();
  return ok;
}
