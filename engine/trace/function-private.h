/* function-private.h — signatures, concrete functions and calls. */
#pragma once

#include "trace-private.h"

/* One argument of a signature: a tensor's dtype and shape (dims -1 when
 * relaxed), or a host value by its canonical text ("2", "'a'", "[1, -1]").
 * A list holding tensors ("[f32[2], 3]") is a nested structure: its
 * tensors are inputs of the graph, by dtype and shape in `leaves` (depth
 * first), the rest host values, in `skeleton` ("[<1>, 3]"). */
/* The kind of a variable argument (a tensor of ts_variable_new): the
 * trace captures the variable itself, as a function captures a global
 * one, so that it reads its value on each call and its assign ops write
 * it; the signature holds the variable (a reference), and another one
 * traces again. */
#define TS__ARG_VARIABLE ((ts_value_kind)TS_VALUE_KIND_COUNT)

typedef struct ts_argsig {
  ts_value_kind kind; /* TS_VALUE_TENSOR for tensors and specs, TS__ARG_VARIABLE */
  ts_dtype dtype;
  ts_shape shape;
  char *host;
  char *canon;        /* host values: the text the cache compares (numbers by value,
                         a list's tensors "<t>"); else NULL */
  char *skeleton;     /* lists: the text with the tensors "<1>", "<2>"...; else NULL */
  int n_leaves;       /* lists: the tensors it holds */
  ts_info *leaves;
  char **segments;    /* lists: the text around them (n_leaves + 1, NULL-terminated) */
  ts_tensor *variable; /* TS__ARG_VARIABLE: the variable (a reference) */
  int n_list_variables; /* lists: the variables they hold (references), captured as */
  ts_tensor **list_variables; /* a variable argument is, not inputs */
} ts_argsig;

typedef struct ts_signature {
  int n;
  ts_argsig *args;
  char *key; /* exact: equal keys, equal signatures */
} ts_signature;

/* A spec's shape: dims of -1 unknown, or of rank TS_RANK_UNKNOWN
 * (TensorFlow's TensorSpec(shape=None)), which takes any shape. */
bool ts__spec_shape_valid(ts_shape shape);

/* Checks the enums and lengths in args (kinds, specs' dtypes and shapes,
 * lists) as a public function `func` receives them; false + error. */
bool ts__values_check(const char *func, const ts_value *args, int n);

/* A host number or rectangular (nested) list of numbers or of bools as a
 * tensor (call.c): of dtype, or with dtype -1 of the dtype tf.constant
 * gives it.  NULL with *why set ("ints" that do not convert to dtype, or
 * what v should have been) and no error; NULL with an error when the
 * tensor cannot be made. */
ts_tensor *ts__host_tensor(const ts_value *v, int dtype, const char **why);

/* Builds the signature of a call's arguments.  false + error on a bad value. */
bool ts__signature_init(ts_signature *sig, const ts_value *args, int n);
void ts__signature_clear(ts_signature *sig);
void ts__signature_copy(ts_signature *dst, const ts_signature *src);
/* Rebuilds key after args changed (relaxing dims). */
void ts__signature_update_key(ts_signature *sig);
/* Does a call with signature `call` fit the traced `traced` (-1 dims match any)? */
bool ts__signature_accepts(const ts_signature *traced, const ts_signature *call);
/* Rewrites a list's host text after its leaves changed (relaxed dims). */
void ts__argsig_update_host(ts_argsig *a);
/* Host kinds the cache compares by value alike: TS_VALUE_INT for ints,
 * floats and bools (Python's 1 == 1.0 == True), else the kind itself. */
ts_value_kind ts__argsig_match_kind(ts_value_kind kind);
/* Do two host arguments hold the same value (numbers by value; lists of
 * tensors alike but for their tensors' dtypes and shapes)? */
bool ts__argsig_same_host(const ts_argsig *a, const ts_argsig *b);
/* Does one argument of a call fit the traced one? */
bool ts__argsig_accepts(const ts_argsig *traced, const ts_argsig *call);
/* Number of arguments that differ (structure differences count as n + 1). */
int ts__signature_distance(const ts_signature *traced, const ts_signature *call);

/* "(x: f32[2], n: 3)" with parameter names where known.  Owned. */
char *ts__signature_text(const ts_signature *sig, char *const *params, int n_params);
/* Why `call` needed a trace given the closest cached signature (NULL: none):
 * the classification, the reason in words, and the indexes of the arguments
 * that differ (bit i set: arg i). */
ts_trace_reason ts__signature_diff(const ts_signature *closest, const ts_signature *call,
                                   char *const *params, int n_params, GString *text,
                                   uint64_t *changed);
/* "arg 0 (x)" / "arg 3" into buf. */
const char *ts__arg_label(char *buf, size_t size, int i, char *const *params, int n_params);

struct ts_call {
  const char *name;      /* the function's, for messages */
  char *const *params;
  int n_params;
  const ts_value *args;
  int n_args;
};

/* ---- a call, checked once and resolved once (function.c) --------------------------- */

/* How a call runs. */
typedef enum ts__call_how {
  TS__CALL_AUTO,   /* to resolve: as f and the thread say (the mode, tracing or not) */
  TS__CALL_EAGER,  /* f's C code on the arguments */
  TS__CALL_GRAPH,  /* a concrete function's graph (traced first if need be) */
  TS__CALL_INLINE, /* a call while another function is traced: into its graph */
} ts__call_how;

/* A call of f.  ts__call_begin checks the arguments (the only check a
 * call's runs make); ts__call_resolve converts them for f's input
 * signature and finds how the call runs and on which concrete function
 * (the one path from arguments to signature, cache and trace); then
 * ts__call_run runs it; ts__call_clear frees what resolving made. */
typedef struct ts__call {
  ts_function *f;
  const ts_value *args; /* as given, or `converted` */
  int n_args;
  ts__call_how how;
  /* GRAPH: what runs (graph-mode calls past the retrace limit resolve to
   * EAGER with `limited` set).  EAGER: the concrete function traced for
   * these arguments, whose nodes name the eager ops (when someone listens
   * for ops), or NULL.  INLINE: the concrete function the caller's graph
   * copies, or NULL when f's C code runs in the trace (f runs eagerly, or
   * `limited`). */
  ts_concrete *cf;
  bool limited;
  ts_value *converted;  /* owned, or NULL */
} ts__call;

/* false + error for a bad argument (an enum, a length, a NULL tensor). */
bool ts__call_begin(ts__call *call, ts_function *f, const ts_value *args, int n_args);
/* Resolves call as `want` says (TS__CALL_GRAPH: a concrete function even
 * for a function that runs eagerly; it must not be tracing).  false +
 * error. */
bool ts__call_resolve(ts__call *call, ts__call_how want);
/* Runs a resolved call as `how` says: its own how, or, for a call resolved
 * to GRAPH, EAGER on the same arguments (its concrete function naming the
 * ops).  The result belongs to the current scope; NULL + error. */
ts_tensor *ts__call_run(const ts__call *call, ts__call_how how);
void ts__call_clear(ts__call *call);

/* A hook that runs f's graph-mode calls instead of the usual path (not
 * while tracing, nor inside another run), given the call checked but not
 * resolved: it resolves it, with whatever the trace should know set, and
 * runs it.  Check-eagerly's is the divergence finder's (diverge.c).  NULL:
 * none. */
typedef ts_tensor *(*ts__call_hook)(ts__call *call);
void ts__function_set_call_hook(ts_function *f, ts__call_hook hook);
ts__call_hook ts__function_call_hook(const ts_function *f);

/* ---- for the divergence finder (diverge.c) ---------------------------------------- */

/* The optimized graph cf runs (the traced one when no pass changed it). */
const ts_graph *ts__concrete_exec_graph(const ts_concrete *cf);
/* A TS_EVENT_WARNING about f. */
void ts__function_warn(ts_function *f, ts_warning_kind kind, const char *message);

/* ---- tuples (tuple.c) ------------------------------------------------------------- */

/* A tuple of tensors[0..n) (checked by the caller; none: None), in the current scope. */
ts_tensor *ts__tuple_new(ts_tensor *const *tensors, int n);
/* A call's result into out[0..): the tuple's tensors, or result itself.
 * The count (0 for None), or -1 (result NULL: its error; more than max_out: an error
 * naming function `name`). */
int ts__results(const char *name, ts_tensor *result, ts_tensor **out, int max_out, bool *tuple);
/* The one tensor of a result for public function `reader`
 * ("ts_function_call"): a tuple of one gives its tensor, a longer one is
 * an error naming `reader_n`, what reads them all; None is itself. */
ts_tensor *ts__single_result(const char *name, const char *reader, const char *reader_n,
                             ts_tensor *result);
