/* tracescope-debug.h — the engine's step debugger and health mode.
 *
 * A debug session watches one thread (the debuggee) run a function call and
 * stops it before the ops it should stop at; another thread (the
 * controller) waits for those stops, looks at them and tells the debuggee
 * how to go on.  Every stop is plain data plus tensor references, so a
 * worker process can send it elsewhere; the controller never calls into the
 * debuggee thread.  See docs/debugger.md.
 *
 * Health mode records, without stopping, the NaN/Inf counts of every op's
 * outputs and the first op that made a NaN or an Inf. */
#pragma once

#include "tracescope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tensor statistics ----------------------------------------------------- */

/* Over all elements of a numeric tensor (integers converted to double):
 * min, max, mean and std over the finite elements (0 when there are none). */
typedef struct ts_tensor_stats {
  int64_t n;       /* elements */
  int64_t n_nan, n_inf, n_zero;
  double min, max, mean, std;
} ts_tensor_stats;

/* false (and *out zeroed) for a string or variant tensor, or one the host
 * cannot read. */
TS_API bool ts_tensor_stats_compute(const ts_tensor *t, ts_tensor_stats *out);

/* ---- debug sessions ------------------------------------------------------------ */

typedef struct ts_debug_session ts_debug_session;

/* Why the debuggee stopped. */
typedef enum ts_debug_reason {
  TS_DEBUG_STEP,        /* a step (or the first op) */
  TS_DEBUG_BREAKPOINT,  /* an op, scope or file:line breakpoint */
  TS_DEBUG_NAN,         /* a `nan` breakpoint: an output holds a NaN */
  TS_DEBUG_INF,         /* an `inf` breakpoint: an output holds an Inf */
  TS_DEBUG_CONDITION,   /* a breakpoint's condition on output statistics held */
  TS_DEBUG_PAUSE,       /* ts_debug_pause */
  TS_DEBUG_FINISHED,    /* the call ended (with its error, if any) */
  TS_DEBUG_ERROR,       /* the op failed (stop.error says why): the call will fail */
  TS_DEBUG_REASON_COUNT
} ts_debug_reason;

/* "step", "breakpoint", "nan", "inf", "condition", "pause", "finished", "error". */
TS_API const char *ts_debug_reason_name(ts_debug_reason reason);

/* One entry of an op's call stack: a function (its name; no location), or
 * a TS_IF/TS_WHILE/TS_FOR block ("then", "else", "cond", "body" at the
 * statement's file:line); in graph mode also the If/While node running it. */
typedef struct ts_debug_frame {
  char *name;
  char *file; /* NULL when unknown */
  int line;
} ts_debug_frame;

/* An op as the debugger saw it.  Owns its strings and a reference on each
 * tensor (a copy where the tensor is a variable a later assign could
 * change); release with ts_debug_op_clear. */
typedef struct ts_debug_op {
  uint64_t run_id, seq;    /* as in ts_op_event */
  ts_op op;
  const char *op_name;     /* static: "MatMul" */
  const char *device;      /* static: the device it runs on, "CPU", "SIM:0" */
  char *file, *func;       /* NULL when the engine made the op */
  int line;
  char *node;              /* graph mode: the node run; eagerly its traced twin; NULL if none */
  char *scope;             /* that node's name scope; "" if none */
  char *origins;           /* graph mode, a node standing for several traced
                            * nodes (fused): their names, "Sub, Log, Add"; else NULL */
  char *gradient_of;       /* a gradient's node (ts_node_gradient_of): the forward
                            * node's name, "dense/MatMul"; else NULL */
  int depth;               /* call-stack depth (n_frames) */
  int n_frames;
  ts_debug_frame *frames;  /* outermost first */
  int n_inputs;
  ts_tensor **inputs;
  int n_outputs;           /* 0 before the op ran */
  ts_tensor **outputs;
  char *path;              /* node's path (ts_node_path: "While/body/Add", which tells a
                            * loop body's Add from the top level's); NULL if no node */
} ts_debug_op;

TS_API void ts_debug_op_clear(ts_debug_op *op);

/* A stop: the op the debuggee waits before (or, for NaN/Inf/condition
 * breakpoints, after; for an error, at the op that failed, its inputs and
 * no outputs: every debug call stops there, then goes on to fail), and
 * why.  Release with ts_debug_stop_clear. */
typedef struct ts_debug_stop {
  ts_debug_reason reason;
  int breakpoint;   /* the breakpoint's id (breakpoint, nan, inf, condition); else 0 */
  bool after;       /* the op has run: op.outputs are set */
  ts_debug_op op;   /* empty (seq 0) when finished */
  char *error;      /* finished: the call's error, NULL if it succeeded; error: the op's */
} ts_debug_stop;

TS_API void ts_debug_stop_clear(ts_debug_stop *stop);

typedef enum ts_debug_start {
  TS_DEBUG_START_STOPPED, /* stop before the first op */
  TS_DEBUG_START_RUNNING, /* run to the first breakpoint */
} ts_debug_start;

/* Zeroed options are the defaults. */
typedef struct ts_debug_options {
  ts_debug_start start;
  int history_ops;        /* ops kept for step back; 0: 4096 */
  size_t history_bytes;   /* their tensors' memory budget; 0: 256 MB */
} ts_debug_options;

/* A new session (options may be NULL); owned by the controller. */
TS_API ts_debug_session *ts_debug_new(const ts_debug_options *options);
/* Controller: leaves the session; a debuggee still attached runs on
 * without stopping (and detaches as usual).  Call it once the debuggee has
 * attached (its first stop says so) or when none ever will. */
TS_API void ts_debug_free(ts_debug_session *s);

/* Debuggee: from now on the calling thread's ops stop as the session
 * says, until ts_debug_detach on the same thread.  A session debugs one
 * call at a time; false + error if it is attached already. */
TS_API bool ts_debug_attach(ts_debug_session *s);
/* Debuggee: ends the call; the controller gets a `finished` stop carrying
 * the thread's pending error, if any. */
TS_API void ts_debug_detach(ts_debug_session *s);
/* Debuggee: attach, ts_function_call, detach.  The result (current scope)
 * or NULL + error (TS_ERR_CANCELLED after ts_debug_cancel). */
TS_API ts_tensor *ts_debug_call(ts_debug_session *s, ts_function *fn, const ts_value *args,
                                int n_args);
/* The same for a function's several results (ts_function_call_n): their
 * count, or -1 + error. */
TS_API int ts_debug_call_n(ts_debug_session *s, ts_function *fn, const ts_value *args,
                           int n_args, ts_tensor **out, int max_out, bool *tuple);

/* Controller: waits up to timeout_ms (-1: for ever) for the next stop not
 * yet returned; true with *out filled (clear it), false on timeout. */
TS_API bool ts_debug_wait(ts_debug_session *s, int timeout_ms, ts_debug_stop *out);

/* How a stopped debuggee goes on. */
typedef enum ts_debug_action {
  TS_DEBUG_CONTINUE,  /* to the next breakpoint */
  TS_DEBUG_STEP_INTO, /* to the next op */
  TS_DEBUG_STEP_OVER, /* to the next op at the same or a shallower call-stack depth */
  TS_DEBUG_STEP_OUT,  /* to the next op at a shallower depth */
  TS_DEBUG_ACTION_COUNT
} ts_debug_action;

/* Controller: resumes the debuggee; false if it is not stopped. */
TS_API bool ts_debug_resume(ts_debug_session *s, ts_debug_action action);
/* Controller: the running debuggee stops before its next op. */
TS_API void ts_debug_pause(ts_debug_session *s);
/* Controller: the call ends with a TS_ERR_CANCELLED error, stopped or not
 * (one given before the debuggee attaches cancels its coming call). */
TS_API void ts_debug_cancel(ts_debug_session *s);

/* Breakpoints, from the text `tracescope-cli debug --break` takes:
 *   MatMul          an op type
 *   dense_?/MatMul  a glob on the node's name, its path ("While/body/Add",
 *                   ts_node_path) or its scope (a star matches any text,
 *                   ? one character; needs a / or a wildcard)
 *   file.c:12       a source line (file matched by base name or path suffix)
 *   nan  inf        an output holds a NaN / an Inf
 *   max > 1e6       a condition on the outputs' statistics: min max mean std,
 *                   then > >= < <= == !=, then a number
 *   OP if EXPR      any of the first three, only when EXPR holds
 * Returns the breakpoint's id (> 0), or 0 with an error naming the bad token. */
TS_API int ts_debug_break_add(ts_debug_session *s, const char *spec);
/* false if there is no breakpoint `id`. */
TS_API bool ts_debug_break_remove(ts_debug_session *s, int id);
/* Checks spec as ts_debug_break_add would; false + error. */
TS_API bool ts_debug_break_check(const char *spec);

/* Step back: the ops that ran to their end last (oldest first), as they
 * were; the op of a stop after an op enters once it is resumed. */
TS_API int ts_debug_history_n(ts_debug_session *s);
/* A copy of entry i into *out (clear it); false if out of range. */
TS_API bool ts_debug_history_get(ts_debug_session *s, int i, ts_debug_op *out);

/* ---- health mode ------------------------------------------------------------- */

typedef enum ts_health_level {
  TS_HEALTH_COUNTS, /* NaN/Inf counts per op */
  TS_HEALTH_STATS,  /* and min/max/mean of each op's outputs */
} ts_health_level;

typedef struct ts_health ts_health;

/* One op's outputs.  Strings belong to the report. */
typedef struct ts_health_op {
  uint64_t run_id, seq;
  ts_op op;
  const char *op_name;
  const char *node;   /* graph mode: the traced node it is (else the node run); NULL eagerly */
  const char *origins; /* an op with a NaN or Inf whose node stands for several
                        * traced nodes (fused): their names, "Sub, Log, Add"; else NULL */
  const char *file, *func;
  int line;
  int64_t n_elements, n_nan, n_inf;
  double min, max, mean; /* TS_HEALTH_STATS, over finite elements; else 0 */
} ts_health_op;

/* Starts recording the ops of the calling thread (both modes).  Owned. */
TS_API ts_health *ts_health_start(ts_health_level level);
/* Stops recording (on the thread that started it; recordings nest like
 * scopes); the report stays readable until ts_health_free, which stops it
 * too. */
TS_API void ts_health_stop(ts_health *h);
TS_API void ts_health_free(ts_health *h);
TS_API int64_t ts_health_n_ops(const ts_health *h);
TS_API const ts_health_op *ts_health_get(const ts_health *h, int64_t i); /* borrowed */
/* The first op that made a NaN or an Inf; NULL if none did.  Borrowed. */
TS_API const ts_health_op *ts_health_first_nonfinite(const ts_health *h);
/* Forgets what was recorded (keeps recording). */
TS_API void ts_health_reset(ts_health *h);

#ifdef __cplusplus
}
#endif
