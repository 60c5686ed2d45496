/* debug-private.h — what the debugger's files share: statistics helpers,
 * parsed breakpoints, op records and the step-back history.  Not installed. */
#pragma once

#include "engine-private.h"
#include "tracescope-debug.h"

#include <pthread.h>

/* ---- statistics (stats.c) ------------------------------------------------------ */

/* NaN and Inf counts of t's elements (0 for integer dtypes): health mode's
 * hot path, one pass the compiler vectorises. */
void ts__count_nonfinite(const ts_tensor *t, int64_t *n_nan, int64_t *n_inf);
/* a becomes the statistics of a's and b's elements together. */
void ts__stats_merge(ts_tensor_stats *a, const ts_tensor_stats *b);

/* ---- breakpoints (breakpoint.c) ------------------------------------------------ */

typedef enum ts_bp_where {
  TS_BP_ANY,   /* every op (a bare condition) */
  TS_BP_OP,
  TS_BP_GLOB,
  TS_BP_LINE,
} ts_bp_where;

typedef enum ts_bp_cond {
  TS_BP_ALWAYS,
  TS_BP_NAN,
  TS_BP_INF,
  TS_BP_EXPR,
} ts_bp_cond;

typedef enum ts_bp_stat { TS_BP_MIN, TS_BP_MAX, TS_BP_MEAN, TS_BP_STD, TS_BP_STAT_COUNT } ts_bp_stat;
typedef enum ts_bp_cmp { TS_BP_GT, TS_BP_GE, TS_BP_LT, TS_BP_LE, TS_BP_EQ, TS_BP_NE, TS_BP_CMP_COUNT } ts_bp_cmp;

typedef struct ts_breakpoint {
  int id;
  ts_bp_where where;
  ts_op op;
  char *glob;   /* TS_BP_GLOB */
  char *file;   /* TS_BP_LINE */
  int line;
  ts_bp_cond cond;
  ts_bp_stat stat;
  ts_bp_cmp cmp;
  double value;
} ts_breakpoint;

/* Parses spec (see ts_debug_break_add) into *bp; false + error naming the
 * bad token.  Clear with ts__breakpoint_clear. */
bool ts__breakpoint_parse(const char *spec, ts_breakpoint *bp);
void ts__breakpoint_clear(ts_breakpoint *bp);
/* Is op (before it runs) one bp is about? */
bool ts__breakpoint_matches(const ts_breakpoint *bp, const ts_debug_op *op);
/* After the op ran: does bp's condition hold on its outputs?  *reason says
 * which kind of stop it makes. */
bool ts__breakpoint_holds(const ts_breakpoint *bp, ts_tensor *const *out, int n_out,
                          ts_debug_reason *reason);

/* ---- op records (record.c) ----------------------------------------------------- */

/* A reference on t, or a copy when t is a variable's storage a later
 * assign could change.  Adds its bytes to *bytes. */
ts_tensor *ts__debug_keep(ts_tensor *t, size_t *bytes);
/* An op with no outputs that writes variables in place (ResourceApplyAdam:
 * a variable and its two slots): those variables, into buf (max of them),
 * as what it made for the NaN/Inf and condition checks and its outputs as
 * shown; their count, 0 for any other op. */
int ts__debug_written(const ts_op_def *def, ts_tensor *const *in, int n_in, int n_out,
                      ts_tensor **buf, int max);
/* Fills op from an OP_BEGIN event on the debuggee thread: identity,
 * location, call stack (frames from the run's op path, or the If/While
 * nodes of graph mode given in cf), inputs kept.  *bytes grows by theirs. */
void ts__debug_op_fill(ts_debug_op *op, const ts_op_event *ev, const ts_debug_frame *cf, int n_cf,
                       size_t *bytes);
/* "Sub, shifted_log/Log, Add": the traced nodes node stands for, when it
 * stands for more than one (fused); NULL otherwise.  Owned (g_free). */
char *ts__node_origins(const ts_node *node);
/* A deep copy (strings copied, tensors referenced). */
void ts__debug_op_copy(ts_debug_op *dst, const ts_debug_op *src);

/* ---- step-back history (history.c) ------------------------------------------------ */

typedef struct ts_debug_history {
  GQueue records;   /* ts_history_record *, oldest first */
  size_t bytes;
  int max_ops;
  size_t max_bytes;
} ts_debug_history;

void ts__history_init(ts_debug_history *h, int max_ops, size_t max_bytes);
void ts__history_clear(ts_debug_history *h);
/* Takes op (moved out: *op is emptied) and its bytes; drops the oldest
 * records past the budget (the newest is always kept). */
void ts__history_push(ts_debug_history *h, ts_debug_op *op, size_t bytes);
int ts__history_n(const ts_debug_history *h);
const ts_debug_op *ts__history_at(const ts_debug_history *h, int i);
