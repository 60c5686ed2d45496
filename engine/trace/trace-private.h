/* trace-private.h — the tracer's frames, shared by the function cache and
 * the control-flow helpers.
 *
 * While a function is traced, every op records a node in the innermost
 * frame's graph instead of running.  Frames nest: an If branch or a While
 * body is traced into a subgraph frame; a value it uses from an outer frame
 * is captured as a Placeholder of the subgraph, and the capture list tells
 * the If/While node which outer values to feed in. */
#pragma once

#include "../graph-private.h"

typedef struct ts_frame ts_frame;
typedef struct ts_trace_notes ts_trace_notes;

/* Where a value comes from: a port of some graph's node, or a concrete
 * tensor (captured as a Const node, or a VarHandle for variables). */
typedef struct ts_source {
  ts_node *node;
  int index;
  ts_tensor *value;
} ts_source;

struct ts_frame {
  ts_graph *graph;
  ts_frame *outer;
  GHashTable *lifted;    /* packed source -> packed local port */
  GArray *captures;      /* ts_source in the outer frame, one per captured Placeholder */
  GString *scope;        /* current name scope: "outer_function/dense_1" */
  GHashTable *scopes;    /* full scope names opened in this frame */
  int last_stateful;     /* node id of the previous stateful op, -1 if none */
  ts_loc block_loc;      /* the statement whose branch or body this frame traces */
  const char *block_kind; /* "TS_IF", "TS_WHILE", "TS_FOR"; NULL for a function's frame */
  bool probe;            /* a loop's condition and body run again (control_flow.c) */
  ts_trace_notes *notes; /* the function trace's (its subgraph frames share them), or NULL */
  ts_op_handler handler; /* records ops into graph while the frame is innermost */
};

/* The tracer handler's list_elem (list_types.c). */
bool ts__trace_list_elem(ts_op_handler *self, const ts_tensor *ta, ts_list_elem *e);

/* The innermost frame of the calling thread, NULL when not tracing. */
ts_frame *ts__trace_frame(void);
/* Between begin and end the frames being traced are hidden: a function
 * called while another is traced gets its own top-level trace; ops outside
 * any frame run eagerly.  h lives on the caller's stack. */
void ts__trace_isolate_begin(ts_op_handler *h);
void ts__trace_isolate_end(ts_op_handler *h);

/* Starts a frame for a new graph (a subgraph of the current frame's graph
 * if one is open); it becomes the innermost. */
ts_frame *ts__frame_push(const char *graph_name);
/* Ends the innermost frame; returns its graph (owned by the caller) and,
 * if captures is not NULL, its capture list (owned; ts_source values hold
 * references in .value). */
ts_graph *ts__frame_pop(ts_frame *frame, GArray **captures);
/* Drops the innermost frame and its graph (error paths). */
void ts__frame_abort(ts_frame *frame);

/* The local port of t in frame: t's own port, a Const for a concrete
 * tensor, or a capture Placeholder for a value of an outer frame.
 * false + error for a symbolic tensor of a graph no longer being traced. */
bool ts__frame_port(ts_frame *frame, ts_tensor *t, ts_port *out);
/* The local port of a source of the outer frame (for captures of captures). */
bool ts__frame_source_port(ts_frame *frame, ts_source src, ts_port *out);
/* A symbolic tensor for output `index` of node, in the current scope. */
ts_tensor *ts__tensor_symbolic(ts_node *node, int index);
/* Adds a Placeholder (a graph input) named `name`; returns its symbolic tensor. */
ts_tensor *ts__frame_placeholder(ts_frame *frame, const char *name, ts_info info);

/* Records op as a node of the innermost frame (dispatch calls this while
 * tracing); outputs are symbolic tensors.  Returns the number of outputs. */
int ts__trace_record(ts_frame *frame, ts_loc loc, const ts_op_def *def, ts_tensor *const *in,
                     int n_in, const ts_attr *attrs, const ts_info *out_info, int n_out,
                     ts_tensor **out);
/* The same, returning the node (control flow sets subgraphs on it). */
ts_node *ts__trace_record_node(ts_frame *frame, ts_loc loc, const ts_op_def *def,
                               const ts_port *ports, int n_in, const ts_attr *attrs,
                               const ts_info *out_info, int n_out);

/* Tells the gradient tapes recording in the current frame of an op the
 * tracer recorded itself (an If or While node, made from the branches or
 * loop it traced, never dispatched): tape.c. */
void ts__tape_record(const ts_op_call *call, ts_tensor *const *out, int n_out);
/* Would ts__tape_record_node record (is a gradient tape the innermost op handler)? */
bool ts__tape_recording_here(void);
/* call's node's inputs and outputs as tensors, for ts__tape_record:
 * symbolic tensors of the ports' nodes, or the captured values. */
void ts__tape_record_node(ts_node *node, const ts_source *sources, int n_sources,
                          ts_tensor *const *out, int n_out);

/* Fill ts__tape_grads: If's and While's (tape_control.c), LSTMSequence's
 * (tape_rnn.c). */
void ts__tape_control_init(void);
void ts__tape_rnn_init(void);

/* Chains n after the frame's previous stateful node when n is stateful
 * (record_node does it; If/While once their subgraphs are attached). */
void ts__frame_order(ts_frame *frame, ts_node *n);

/* A scope name not yet used in f's current scope: "dense", "dense_1", ... */
char *ts__unique_scope(ts_frame *f, const char *base);

/* ---- jumps: TS_BREAK, TS_CONTINUE, TS_RETURN (control_flow.c) --------------------
 * A function call's return state: TS_RETURN under a tensor condition sets
 * `returned` and `retval` (a tuple's tensors: retval, then `more`); the
 * code after the statement that returned is guarded until the function's
 * end.  run_c brackets every call with these. */
/* ts_fn_jumps.arity besides a tuple's count (0: one tensor). */
enum { TS__ARITY_UNSET = -1, TS__ARITY_NONE = -2 };

typedef struct ts_fn_jumps {
  ts_tensor *returned, *retval;
  ts_tensor *more[TS_MAX_RETURNS - 1]; /* a returned tuple's tensors after retval */
  int arity;                 /* while tracing: TS__ARITY_UNSET before a TS_RETURN, 0 one
                                tensor, n a tuple, TS__ARITY_NONE None */
  ts_loc arity_loc;          /* the TS_RETURN that set it */
  int base;                  /* the guards below this belong to callers */
  struct ts_fn_jumps *prev;
  const char *name;
  ts_frame *frame;           /* the innermost frame at the call */
} ts_fn_jumps;
void ts__jumps_fn_begin(ts_fn_jumps *fn, const char *name);
/* Closes the guards of the function's body around out (the C function's
 * result) and returns the call's result.  While tracing, a block the
 * function left by plain `return` or `break` is an error naming it. */
ts_tensor *ts__jumps_fn_end(ts_fn_jumps *fn, ts_tensor *out);

/* ---- inlining one function's trace into another's (inline.c) ----------------------
 * A function called while another is traced is traced once on its own
 * (function.c); the caller's graph gets a copy of that graph, as if the
 * callee's C code had run there.  What the copy needs beyond the graph,
 * a trace notes as it records nodes: the op path below the trace's base
 * at each node with a site (the copy's site is the one an eager run of the
 * caller gives the op), and the nodes made while gradient tapes pause
 * (ts_stop_gradient: a caller's tape must not record them either). */
ts_trace_notes *ts__trace_notes_new(void);
void ts__trace_notes_free(ts_trace_notes *notes);
/* Notes node n, just recorded in a frame with these notes (tracer.c). */
void ts__trace_notes_record(ts_trace_notes *notes, const ts_node *n);

/* Copies g, a function's traced graph with its notes, into the innermost
 * frame's graph under a new name scope `name` ("inner", "inner_1"): its
 * placeholders become inputs[] (one per graph input), its constants and
 * variable handles the frame's captures of the same values, its If and
 * While nodes take copies of their subgraphs; the copies are ordered after
 * the frame's side effects and told to the gradient tapes recording there.
 * outputs[] gets the symbolic tensors of g's outputs (n_outputs, as many
 * as g has: a function's results); false + error. */
bool ts__inline_graph(const char *name, const ts_graph *g, const ts_trace_notes *notes,
                      ts_tensor *const *inputs, int n_inputs, ts_tensor **outputs,
                      int n_outputs);
