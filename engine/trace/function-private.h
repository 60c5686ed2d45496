/* function-private.h — signatures, concrete functions and calls. */
#pragma once

#include "trace-private.h"

/* One argument of a signature: a tensor's dtype and shape (dims -1 when
 * relaxed), or a host value by its canonical text ("2", "'a'", "[1, -1]"). */
typedef struct ts_argsig {
  ts_value_kind kind; /* TS_VALUE_TENSOR for tensors and specs */
  ts_dtype dtype;
  ts_shape shape;
  char *host;
} ts_argsig;

typedef struct ts_signature {
  int n;
  ts_argsig *args;
  char *key; /* exact: equal keys, equal signatures */
} ts_signature;

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

/* ---- for the divergence finder (diverge.c) ---------------------------------------- */

/* The concrete function a graph-mode call of f runs for *args (traced if
 * need be), *args converted for f's input signature (*converted: owned, or
 * NULL).  NULL + error; NULL without an error when the retrace limit sends
 * the call to eager execution. */
ts_concrete *ts__function_resolve(ts_function *f, const ts_value **args, int n_args,
                                  ts_value **converted);
/* The optimized graph cf runs (the traced one when no pass changed it). */
const ts_graph *ts__concrete_exec_graph(const ts_concrete *cf);
/* A TS_EVENT_WARNING about f. */
void ts__function_warn(ts_function *f, ts_warning_kind kind, const char *message);
/* A hook that runs f's graph-mode calls instead of the usual path (the
 * arguments checked; not while tracing, nor inside another run):
 * check-eagerly's is the divergence finder's (diverge.c).  NULL: none. */
typedef ts_tensor *(*ts__call_hook)(ts_function *f, const ts_value *args, int n_args);
void ts__function_set_call_hook(ts_function *f, ts__call_hook hook);
ts__call_hook ts__function_call_hook(const ts_function *f);
/* f run eagerly, and cf run on its graph, without checking the arguments
 * again (cf checks they fit its signature). */
ts_tensor *ts__function_run_eager(ts_function *f, const ts_value *args, int n_args);
ts_tensor *ts__concrete_call(ts_concrete *cf, const ts_value *args, int n_args);
