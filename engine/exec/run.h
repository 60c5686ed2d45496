/* exec/run.h — an executable's plan and what runs it, shared by
 * executable.c (the plan, a run step by step) and parallel.c (groups and
 * row runs on the pool).  Private to exec/. */
#pragma once

#include "exec.h"
#include "../kernels/kernels.h"

#include <pthread.h>

#define MAX_GROUP 64 /* steps a group runs at once, at most (a bigger level makes several) */
#define MAX_SLICED 16 /* values made before a row run that it reads by rows, at most */

/* A run of steps split by rows across threads (rows.c). */
typedef struct row_run {
  int first, end;        /* its steps */
  int64_t rows;          /* its batch */
  int n_borrowed, n_sliced, n_exits;
  int *borrowed;         /* values made before it that its row steps read whole */
  int *sliced;           /* ... that they read by rows */
  int *exits;            /* values its row steps make that later steps or the outputs read */
} row_run;

typedef struct ts_device_plan ts_device_plan;

/* What telling a read the run made itself takes of its node, in one
 * place (ts__exec_fast_read, ts__exec_tell_read). */
typedef struct told_read {
  int var;      /* the variable's value */
  ts_event ev;  /* its event (ts__announce_template) */
} told_read;

typedef struct plan {
  int n_steps;
  int *steps;          /* node ids to run, topological (not Const/VarHandle) */
  int *group_end;      /* per step: a group [s, group_end[s]) starts here, else 0 */
  bool *fast_read;     /* per step: a variable read the run may make itself */
  const ts_info ***in_recorded; /* per node id: ts_run_site's in_recorded, or NULL */
  const ts_node **traced;       /* per node id of a step: its traced node (ts_run_site's), or NULL */
  int *told_at;                 /* per step: its fast read's index in told, or -1 */
  told_read *told;              /* per fast read */
  const ts_info **recorded_infos; /* what those point into */
  bool *row_step;      /* per step: a row step of a row run */
  int *run_at;         /* per step: a row run starts here (its index + 1), else 0 */
  row_run *runs;
  int n_runs;
  bool *made_by_run;   /* per value: made by a row step */
  int n_groups, n_grouped, max_group;
  int *offset;         /* per node id: its first output's slot in the value array */
  int n_values;
  int *step_first, *step_n; /* per step: its node's values */
  int *rel_start;      /* per step: where its releases start in rel_values (n_steps + 1) */
  int *rel_values;     /* value slots released after each step */
  ts_tensor **preset;  /* per value slot: a Const's or VarHandle's value, or NULL */
  int n_presets, *presets; /* the slots with one */
} plan;

struct ts_executable {
  ts_graph *graph;       /* owned by the top-level executable only */
  bool owns_graph;
  bool top;              /* the function's own, not a subgraph's (an If's, a While's) */
  plan plan;
  ts_planner *planner;
  ts_executable ***subs; /* per node id: executables of its subgraphs, or NULL */
  char *summary;         /* the passes' (top level only) */
  int64_t n_shared;      /* atomic: group steps and row run parts run on another thread
                            than their call's */
  /* The runs of steps between the steps that run subgraphs (If, While,
   * whose conditions the host reads mid-run): each is captured as a device
   * plan of its own, and the subgraphs' executables capture theirs. */
  int n_segments;
  ts_device_plan **device_plans; /* per segment, atomic: the backend's plan, when idle */
  bool *cf_ok;           /* per node id: an If or While the device may run inside a
                            capture (device_cf.c), which then ends no segment */
  int cf_off;            /* atomic, an If's then branch's or a While's condition's: that
                            node runs from the host now */
  int64_t n_captures, n_replays;  /* atomic: ts_schedule's */
};

/* Runs one step; its outputs land in out[] as references the run owns. */
bool ts__exec_step(const ts_executable *e, const ts_node *node, ts_tensor **values,
                   ts_tensor *const *inputs, ts_scope *scope, ts_planned *planned,
                   ts_tensor **out, const ts_node *parent, uint64_t parent_seq);
/* Step s (a read) made by the run itself: the variable's storage, or NULL
 * to run the op; numbered and queued in `announce` for listeners and the
 * observer (ts__announce) unless that is NULL.  The caller flushes the queue
 * (ts__announce_flush) before anything else of its run is told or run. */
ts_tensor *ts__exec_fast_read(const ts_executable *e, ts_tensor *const *values, int s,
                              ts_announcements *announce, const ts_node *parent,
                              uint64_t parent_seq);
/* Queues read step s, made earlier by the run itself and numbered seq
 * (its output in values), in q. */
void ts__exec_tell_read(const ts_executable *e, ts_tensor *const *values, int s, uint64_t seq,
                        ts_announcements *q, const ts_node *parent, uint64_t parent_seq);

/* ---- device_cf.c ---- */

/* Can node (a step of e running subgraphs) be an If or a While the device
 * runs inside a capture?  Plan time, once e->subs[node->id] are planned. */
bool ts__cf_eligible(const ts_executable *e, const ts_node *node);
/* Does it run on the device inside this run's capture? */
bool ts__cf_here(const ts_executable *e, const ts_node *node);
/* Does every node of e with subgraphs run on b inside the capture (while
 * none has been turned off), so that a run is one plan? */
bool ts__cf_whole(const ts_executable *e, const ts_backend *b);
/* The If's and the While's kernels' hand-over (ts_run_site.on_device):
 * 1 done, 0 failed (+ error), -1 run it from the host. */
int ts__device_if(ts_kernel_ctx *k);
int ts__device_loop(ts_kernel_ctx *k);

/* ---- device_plan.c ---- */

/* Starts capturing this run's launches of segment `segment` into the
 * executable's plan of it on the thread's device, when it has the
 * whole-plan entry; NULL: run as usual.  inputs (segment 0, else NULL):
 * the run's, which it may point at the plan's own inputs holding the same
 * values (a capture to be replayed as is). */
ts_device_plan *ts__device_plan_begin(ts_executable *e, int segment, ts_tensor *const **inputs,
                                      int n_inputs);
/* Submits what the run captured (NULL: nothing); false + error. */
bool ts__device_plan_compute(ts_device_plan *dp);
/* After the run of a submitted capture (ok: it succeeded): a whole-graph
 * capture on the plan's inputs keeps its outputs (each replaced by a copy
 * of the caller's own) and its arena (*arena set NULL: the plan gives it
 * back to the planner), to be replayed as is; the plan goes back to its
 * slot.  Returns ok, false + error if a copy failed (outputs NULL then). */
bool ts__device_plan_close(ts_executable *e, int segment, ts_device_plan *dp, bool ok,
                           ts_tensor **outputs, int n_out, ts_arena **arena);
/* Compute and close, for a segment before an If or While node. */
bool ts__device_plan_end(ts_executable *e, int segment, ts_device_plan *dp);
/* Launches the executable's last whole capture again for this call, when
 * it may (see device_plan.c): 1 done (outputs set, references the caller
 * owns), 0 failed (+ error, outputs NULL), -1 not possible: run it. */
int ts__device_plan_replay(ts_executable *e, ts_tensor *const *inputs, int n_inputs,
                           ts_tensor **outputs, const ts_node *parent, uint64_t parent_seq);
void ts__device_plan_free(ts_executable *e);

/* ---- parallel.c ---- */

/* What each row run reads and leaves (rows.c finds them); a run reading
 * too many values by rows, or one both ways, is not split. */
void ts__exec_plan_row_runs(const ts_graph *g, plan *p, const ts_exec_layout *l);
/* Runs the group of steps [first, end) at once; the first failure's error
 * (in step order) is this thread's. */
bool ts__exec_group(const ts_executable *e, ts_arena *arena, ts_tensor **values,
                    ts_tensor *const *inputs, int first, int end, const ts_node *parent,
                    uint64_t parent_seq);
/* Row run `run`: its reads here (announced when watched: listeners or an
 * observer), then its row steps split by rows across the pool's threads.
 * false + the first failing part's error. */
bool ts__exec_rows(const ts_executable *e, ts_arena *arena, ts_tensor **values,
                   ts_tensor *const *inputs, const row_run *run, ts_scope *scope,
                   bool watched, const ts_node *parent, uint64_t parent_seq);
