/* graph-private.h — the graph IR's layout and its rewrite API, shared by
 * the tracer, the executables (exec/) and the serialized form
 * (io/graph_serial.c).  Everyone else walks graphs through the
 * ts_graph_* / ts_node_* accessors in tracescope.h. */
#pragma once

#include "engine-private.h"

struct ts_node {
  int id;                /* index in its graph, stable */
  ts_op op;
  ts_graph *graph;
  const char *name;      /* unique in its graph: "dense_1/MatMul_1" (interned) */
  const char *scope;     /* name scope: "dense_1", "" at the top (interned) */
  ts_loc loc;            /* strings interned in the graph */
  int n_inputs;
  ts_port *inputs;
  int n_control;
  int *control;          /* node ids that must run first */
  int n_outputs;
  ts_info *outputs;      /* static dtype and (possibly partial) shape */
  int n_attrs;
  ts_attr *attrs;        /* string attrs interned */
  ts_tensor *value;      /* Const and VarHandle: the captured tensor (a reference) */
  int n_subgraphs;
  ts_graph **subgraphs;  /* If: then, else; While: cond, body (owned) */
  int input_index;       /* Placeholder: position among the graph's inputs */
  bool stateful;         /* a stateful op, or If/While whose subgraphs hold one */
  bool has_site;         /* recorded for an op the user's code called (see ts_op_event) */
  bool loop_element;     /* a traced TS_FOR's element, its loop variable in the body */
  int occurrence;
  uint64_t site;
  int n_origins;         /* provenance: the traced nodes it stands for; 0: itself */
  const ts_node **origins;
  const ts_node *gradient_of; /* gradient nodes: the forward node (ts_node_gradient_of) */
};

struct ts_graph {
  char *name;
  ts_graph *parent;      /* the graph holding the If/While node that owns this one */
  GPtrArray *nodes;      /* ts_node *, indexed by id; creation order is topological */
  GArray *inputs;        /* int: Placeholder node ids, in argument order */
  GArray *outputs;       /* ts_port */
  GStringChunk *strings;
  GHashTable *names;     /* node names taken (interned keys) */
  GHashTable *next_suffix; /* interned base name -> the first N that "base_N" may be free for */
  /* The last file and function interned (add_node): a graph's nodes mostly
   * come from one of each, and comparing is cheaper than interning. */
  const char *last_loc[2];
};

ts_graph *ts__graph_new(const char *name, ts_graph *parent);
void ts__graph_free(ts_graph *g);
const char *ts__graph_intern(ts_graph *g, const char *s);

/* Adds a node; copies inputs, attrs (interning strings) and output infos.
 * The name is `scope/hint`, made unique with _1, _2, ... as TensorFlow does. */
ts_node *ts__graph_add_node(ts_graph *g, ts_op op, const char *hint, const char *scope,
                            ts_loc loc, const ts_port *inputs, int n_inputs,
                            const ts_attr *attrs, int n_attrs, const ts_info *outputs,
                            int n_outputs);
/* The same with the name as given (a graph read back keeps its names);
 * NULL if g has a node of that name. */
ts_node *ts__graph_add_named_node(ts_graph *g, ts_op op, const char *name, const char *scope,
                                  ts_loc loc, const ts_port *inputs, int n_inputs,
                                  const ts_attr *attrs, int n_attrs, const ts_info *outputs,
                                  int n_outputs);
/* Appends placeholder to g's inputs (its input_index is its position). */
void ts__graph_add_input(ts_graph *g, ts_node *placeholder);
void ts__graph_add_output(ts_graph *g, ts_port port);
/* Const and VarHandle: holds value (a reference is taken). */
void ts__node_set_value(ts_node *n, ts_tensor *value);
/* Sets the control inputs (distinct earlier node ids) all at once. */
void ts__node_set_control(ts_node *n, const int *before, int n_before);
void ts__node_set_site(ts_node *n, bool has_site, uint64_t site, int occurrence);
/* Overrides what the op and the subgraphs say (a graph read back). */
void ts__node_set_stateful(ts_node *n, bool stateful);
void ts__node_add_control(ts_node *node, int before);
void ts__node_add_subgraph(ts_node *node, ts_graph *sub);
static inline ts_node *ts__graph_node(const ts_graph *g, int id)
{
  return g->nodes->pdata[id];
}

/* ---- rewriting -------------------------------------------------------------------
 * Passes build a new graph from an old one node by node.  Every node of
 * the new graph keeps its provenance: the traced nodes it stands for.  A
 * copied node stands for what its source stood for; a new node for what
 * the nodes it replaces stood for. */

typedef struct ts_rewrite ts_rewrite;

/* Starts a graph to be filled from src (name, parent and inputs follow
 * as nodes are copied). */
ts_rewrite *ts__rewrite_begin(const ts_graph *src, ts_graph *parent);
/* The new graph's port for a port of src (after its node was copied or
 * replaced); {-1, -1} if it has none. */
ts_port ts__rewrite_port(const ts_rewrite *rw, ts_port src_port);
/* The graph being built. */
ts_graph *ts__rewrite_graph(const ts_rewrite *rw);
/* Copies src node n (inputs mapped, subgraphs rewritten with sub_fn, or
 * copied when sub_fn is NULL); returns the new node. */
typedef ts_graph *(*ts_rewrite_sub_fn)(const ts_graph *sub, ts_graph *parent, void *data);
ts_node *ts__rewrite_copy(ts_rewrite *rw, const ts_node *n, ts_rewrite_sub_fn sub_fn, void *data);
/* Replaces src node n's outputs with a new Const node holding value (a
 * reference is taken); it stands for n and whatever n's inputs stood for
 * when they are not used elsewhere (folding). */
ts_node *ts__rewrite_constant(ts_rewrite *rw, const ts_node *n, int index, ts_tensor *value);
/* Ends: sets the outputs from src's, drops nodes nothing needs (neither
 * the outputs nor a stateful node) and returns the new graph. */
ts_graph *ts__rewrite_end(ts_rewrite *rw);
/* The same, keeping what nothing needs when prune is false (the passes
 * leave that to dead-code elimination). */
ts_graph *ts__rewrite_finish(ts_rewrite *rw, bool prune);
/* Adds a new node to the graph being built, named, scoped and located like
 * src node `like`; it stands for no one until its origins are set
 * (ts__node_add_origins_of). */
ts_node *ts__rewrite_add(ts_rewrite *rw, const ts_node *like, ts_op op, const ts_port *inputs,
                         int n_inputs, const ts_attr *attrs, int n_attrs, const ts_info *outputs,
                         int n_outputs);
/* src_port's value is dst_port's from now on (a node replaced by another). */
void ts__rewrite_map(ts_rewrite *rw, ts_port src_port, ts_port dst_port);
void ts__node_set_origins(ts_node *n, const ts_node *const *origins, int n_origins);
/* n stands also for what src stands for (src itself when it is traced). */
void ts__node_add_origins_of(ts_node *n, const ts_node *src);

/* Does everything in g serve its outputs or a side effect (nothing to drop)? */
bool ts__graph_all_needed(const ts_graph *g);

/* The default rewrite of a whole graph: a copy with provenance. */
ts_graph *ts__graph_copy(const ts_graph *g, ts_graph *parent);
