/* exec.h — executables: what runs a concrete function's graph.
 *
 * An executable owns the optimized copy of a traced graph (passes rewrite
 * it with provenance; constant folding is the first) and a plan per graph
 * and subgraph.  Traced graphs stay as they were traced, for the viewer. */
#pragma once

#include "../graph-private.h"

typedef struct ts_executable ts_executable;

/* Optimizes traced (a copy: traced is not changed) and plans it; a graph
 * no pass would change is planned as it is (borrowed: it must outlive e). */
ts_executable *ts__executable_new(const ts_graph *traced);
void ts__executable_free(ts_executable *e);
const ts_graph *ts__executable_graph(const ts_executable *e);

/* Runs e on concrete inputs (one per graph input) and writes its outputs
 * (references in the caller's scope); only what the outputs and the
 * stateful ops need runs.  parent/parent_seq: the If/While op running a
 * subgraph, NULL at the top.  false + error. */
bool ts__executable_run(const ts_executable *e, ts_tensor *const *inputs, int n_inputs,
                        ts_tensor **outputs, const ts_node *parent, uint64_t parent_seq);

/* The passes' one-line summary ("fold: folded 2 nodes into constants\n
 * cse: removed 12 nodes\n..."), one line per pass run; "" when none ran. */
const char *ts__executable_summary(const ts_executable *e);

/* The planned memory of e's graph (top level); false while none is made. */
bool ts__executable_memory_plan(const ts_executable *e, ts_memory_plan *out);
/* Its schedule (top level): groups of ops run at once; and as a line
 * ("schedule: 9 ops; at once: a/MatMul, b/MatMul"), owned (free()). */
void ts__executable_schedule(const ts_executable *e, ts_schedule *out);
char *ts__executable_schedule_describe(const ts_executable *e);

/* ---- memory planner (planner.c) -----------------------------------------------------
 * Places the values a run makes in one arena by liveness; the executor
 * takes an arena per run and hands its buffers to the dispatcher. */

/* What the executor's plan says about values: steps run in order, each
 * making values step_first[s] .. + step_n[s]; the run releases
 * rel_values[rel_start[s] .. rel_start[s + 1]) after step s.  Steps
 * s .. group_end[s] - 1 run at once when group_end[s] > 0 (nothing is
 * released inside a group, only after its last step); max_group: the
 * largest group.  Borrowed: must outlive the planner. */
typedef struct ts_exec_layout {
  int n_steps, n_values;
  const int *steps;      /* node ids */
  const int *offset;     /* per node id: its first value */
  const int *step_first, *step_n;
  const int *rel_start, *rel_values;
  const int *group_end;
  int max_group;
} ts_exec_layout;

typedef struct ts_planner ts_planner;
typedef struct ts_arena ts_arena;

/* Ops whose output is a view of input 0 (shares its storage). */
bool ts__op_is_view(ts_op op);
/* Elementwise ops of one output (broadcasting, the planner's in-place kind). */
bool ts__op_is_elementwise(ts_op op);
ts_planner *ts__planner_new(const ts_graph *g, const ts_exec_layout *layout);
/* Plans from the recorded shapes; false when a dim is unknown (the first
 * run's sizes plan then). */
bool ts__planner_plan_static(ts_planner *p);
void ts__planner_free(ts_planner *p);
bool ts__planner_stats(ts_planner *p, ts_memory_plan *out);
/* An arena for one run (the pool's, or a new one); NULL + error if out of memory. */
ts_arena *ts__planner_take(ts_planner *p);
/* Back after the run; re-plans when ok and the run's sizes were not the plan's. */
void ts__planner_give(ts_planner *p, ts_arena *a, bool ok);
/* Does the planner poison the slots it hands out (ts_memory_plan_set_poison)? */
bool ts__planner_poisons(void);
/* The run's value slots, kept with the arena. */
ts_tensor **ts__arena_values(ts_arena *a);
/* The planned outputs of the step making values first_value .. + n, for
 * the context's `planned`; NULL when the arena has no plan.  slot: which
 * of a group's steps (0 .. max_group - 1; 0 outside groups), each running
 * at once on a thread of its own with its own scope. */
ts_planned *ts__arena_step(ts_arena *a, int slot, int first_value, int n);
/* The scope a step of that slot runs in (what its kernel makes). */
ts_scope *ts__arena_scope(ts_arena *a, int slot);
/* Until given back, a runs part of a batch (rows.c): its values are
 * smaller than the plan's and take the planned buffers all the same. */
void ts__arena_set_part(ts_arena *a);
/* Releases the run's reference t on value v: a tensor in the arena that
 * someone else still holds gets a buffer of its own first. */
void ts__arena_release(ts_arena *a, int v, ts_tensor *t);

/* ---- inter-op parallelism (schedule.c) --------------------------------------------------
 * Reorders steps (node ids in a topological order) so that independent
 * heavy steps sit together, and marks them: group_end[s] > 0 for the
 * first step of a group [s, group_end[s]) to run at once, 0 for the
 * others.  Returns how many groups (the order is left as it was when 0). */
int ts__schedule(const ts_graph *g, int *steps, int n_steps, int *group_end);
/* A step's work from its static shapes (flops for MatMul and Conv2D,
 * elements read and written for the others); 0 when a dim is unknown.
 * Worth a thread of its own from TS_HEAVY_WORK (about ten microseconds). */
double ts__step_work(const ts_graph *g, const ts_node *n);
#define TS_HEAVY_WORK 1e6

/* ---- data parallelism over a batch (rows.c) ------------------------------------------------
 * Runs of steps split by rows across threads, in layout l (its steps,
 * groups) with fast_read[s] the reads the run makes itself: a run starts
 * at s when rows_end[s] > 0, ends before rows_end[s], over a batch of
 * rows_of[s]; row_step[s] marks its row steps (the others are reads).
 * Returns how many runs. */
#define TS_MIN_PART_ROWS 4 /* rows a thread takes of a run, at least */
int ts__row_runs(const ts_graph *g, const ts_exec_layout *l, const bool *fast_read, int *rows_end,
                 int64_t *rows_of, bool *row_step);

/* ---- passes (docs/passes.md) ------------------------------------------------------------
 * Each pass builds a new graph from an old one with the rewrite API, so
 * every node keeps its provenance, and adds what it did to its stats.
 * Passes other than dce leave what they made dead in place (dce drops it). */

typedef enum ts_pass_id {
  TS_PASS_LAYOUT,
  TS_PASS_FOLD,
  TS_PASS_CSE,
  TS_PASS_SIMPLIFY,
  TS_PASS_DCE,
  TS_PASS_FUSE,
  TS_PASS_COUNT
} ts_pass_id;

#define TS_PASSES_ALL ((1u << TS_PASS_COUNT) - 1)

typedef struct ts_pass_stats {
  int count; /* nodes folded, removed, simplified or fused */
  int into;  /* what they became (constants, fused kernels) */
} ts_pass_stats;

typedef ts_graph *(*ts_pass_fn)(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats);
/* Could the pass change g at all?  false: it is skipped (a pass copies the
 * whole graph even when it changes nothing, and tracing pays for it). */
typedef bool (*ts_pass_might_fn)(const ts_graph *g);

/* Copies src node n into rw with its subgraphs run through pass. */
ts_node *ts__pass_copy(ts_rewrite *rw, const ts_node *n, ts_pass_fn pass, ts_pass_stats *stats);

/* Layout: a transpose moves past the elementwise ops and casts it feeds
 * alone (their other operands brought into the order of its input) until
 * it meets another transpose, and the two become one, or none when they
 * cancel (the NCHW <-> NHWC pairs around the ONNX importer's convolutions
 * and poolings); a MatMul by constant weights with transpose_b reads them
 * transposed once instead.  First, so that fold folds what it reorders. */
ts_graph *ts__pass_layout(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats);
bool ts__layout_might_change(const ts_graph *g);
/* Grappler's constant folding: stateless nodes fed by constants only
 * become Const nodes holding their value; a node whose evaluation fails is
 * left to fail at run time.  Subgraphs are folded too. */
ts_graph *ts__pass_fold_constants(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats);
bool ts__fold_might_change(const ts_graph *g);
/* Common-subexpression elimination: a node equal to an earlier one (op,
 * inputs, control inputs, attributes, value) is replaced by it, unless it
 * is stateful, random, reads a variable or makes a TensorArray. */
ts_graph *ts__pass_cse(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats);
bool ts__cse_might_change(const ts_graph *g);
/* Arithmetic simplification (x*1, x+0, x-0, x-x on integers, double
 * transposes, reshapes of reshapes, casts to the same dtype, small integer
 * powers). */
ts_graph *ts__pass_simplify(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats);
/* Simplify's rule for src node n, a Transpose: transpose(transpose(x, p), q)
 * in rw becomes transpose(x, p∘q), or x; false: n's input is no transpose. */
bool ts__simplify_transposes(ts_rewrite *rw, const ts_node *n, ts_pass_stats *stats);
/* A Transpose node's perm resolved against rank (its TS_ALL_AXES reverses);
 * false if it is not one. */
bool ts__transpose_perm(const ts_node *transpose, int rank, int *perm);
/* Broadcasting c against x leaves x's shape as it is (for every value of
 * x's unknown dims). */
bool ts__fits_into(ts_shape c, ts_shape x);
/* Dead-code elimination: drops what neither the outputs nor a stateful
 * node need. */
ts_graph *ts__pass_dce(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats);
/* Fusion: MatMul or Conv2D + bias + activation into _FusedMatMul or
 * _FusedConv2D, chains of float elementwise ops into FusedElementwise
 * (ops/fused.c). */
ts_graph *ts__pass_fuse(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats);

/* Parses "all", "none" or "fold,cse,..." into a mask of 1 << ts_pass_id;
 * false + error naming what is not a pass. */
bool ts__passes_parse(const char *list, unsigned *mask);
/* The passes executables run now: ts_set_passes's, else TRACESCOPE_PASSES's, else all. */
unsigned ts__passes_current(void);
/* Runs the passes of mask on g in their order, then drops what nothing
 * needs; the new graph (NULL when nothing changed: g is fine as it is) and
 * the summary (owned) come back. */
ts_graph *ts__passes_run(const ts_graph *g, unsigned mask, char **summary);
/* Per node of g: the one node using its outputs (-1: none, -2: several,
 * a graph output or a control edge); g_free() it. */
int *ts__single_users(const ts_graph *g);
/* Nodes in g and its subgraphs. */
int ts__graph_count_nodes(const ts_graph *g);
/* Are s's rank and every dim known? */
bool ts__shape_known(ts_shape s);
/* Is src_port's value in rw's graph a Const? Its value, else NULL. */
const ts_tensor *ts__rewrite_const(const ts_rewrite *rw, ts_port src_port);
