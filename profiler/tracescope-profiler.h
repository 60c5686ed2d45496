/* tracescope-profiler.h — profiling sessions over the engine's events.
 *
 * A session records what collectors report (the CPU collector listens to
 * the engine's op and trace events) into per-thread chunks of compact
 * events, then answers questions about them: op statistics, per-call
 * statistics, eager against graph op by op; and reads and writes Chrome
 * trace-event JSON and CSV.  Prefix tsp_.  See docs/profiler.md.
 *
 * Threads: recording is lock-free per thread.  Read a session (tables,
 * events, statistics, files) only while it is stopped. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <tracescope.h>

G_BEGIN_DECLS

typedef struct tsp_session tsp_session;

#define TSP_ERROR (tsp_error_quark())
GQuark tsp_error_quark(void);
typedef enum tsp_error_code {
  TSP_ERROR_IO,
  TSP_ERROR_FORMAT,
  TSP_ERROR_LIMIT,     /* a reader's limit (tsp_read_limits) or the memory ran out */
  TSP_ERROR_CANCELLED, /* the progress callback said stop */
} tsp_error_code;

/* ---- events ------------------------------------------------------------------
 * Every field is an index into one of the session's tables (0 = none) or a
 * number: 48 bytes an event.  Times are CLOCK_MONOTONIC ns (ts_now_ns). */

typedef enum tsp_kind {
  TSP_EVENT_OP,    /* an op ran */
  TSP_EVENT_CALL,  /* a function call (tsp_call_end) */
  TSP_EVENT_TRACE, /* a function was traced */
  TSP_EVENT_MEMORY, /* tensor storage allocated or released (an instant) */
  TSP_EVENT_DEVICE, /* an op's kernel on a device: its OP event's fields, device times,
                       on the device stream's thread ("SIM:0 stream"); or a copy or
                       memset there: op TSP_OP_OTHER, traced the node named for it ("host
                       to device", "device to host", "device to device", "memset"),
                       run_id, seq, parent_seq and loc those of the op that needed it
                       (an input copied to where it ran; its OP event has the same run_id
                       and seq), 0 for none */
  TSP_EVENT_PHASE,  /* the engine preparing a call (ts_phase_event): on a track of their
                       own (TSP_PHASE_TRACK); node: name, loc: detail (strings), op:
                       ts_phase_kind, seq: depth */
} tsp_kind;

/* The thread whose events are the phases of every thread. */
#define TSP_PHASE_TRACK "Trace and plan"

typedef enum tsp_mode { TSP_MODE_EAGER = 1, TSP_MODE_GRAPH = 2, TSP_MODE_ALL = 3 } tsp_mode;

#define TSP_OP_OTHER 0xffff /* an op named in an imported file that the engine lacks */

typedef struct tsp_event {
  uint64_t start_ns, end_ns;
  uint64_t run_id;     /* ts_op_event.run_id; CALL: the call's run */
  uint32_t seq;        /* OP: sequence in the run */
  uint32_t parent_seq; /* OP: the enclosing If/While op's seq, 0 at the top */
  uint32_t node;       /* OP: the node run (graph mode), 0 eagerly; CALL/TRACE: function name (string);
                          PHASE: its name (string) */
  uint32_t traced;     /* OP: the traced node it stands for, or 0; CALL/TRACE: concrete function */
  uint32_t loc;        /* OP: source location; TRACE: reason text (string) */
  uint16_t op;         /* OP: ts_op or TSP_OP_OTHER; CALL: tsp_mode; TRACE: ts_trace_reason */
  uint8_t kind;        /* tsp_kind */
  uint8_t device;      /* OP, MEMORY: device */
} tsp_event;
/* MEMORY events are instants (start_ns == end_ns, run_id 0) that keep the
 * change in seq/parent_seq and the live bytes after it in node/traced (low
 * and high halves); loc is where the allocation was, op what it counts (a
 * ts_memory_kind: tensors, or the memory planner's arenas; each kind of
 * each device is a series of its own).  Read them with: */
int64_t tsp_memory_delta(const tsp_event *e);
int64_t tsp_memory_live(const tsp_event *e);
/* Fills a MEMORY event (for collectors, importers and tests). */
void tsp_memory_event_init(tsp_event *e, uint64_t time_ns, int64_t delta, int64_t live,
                           uint8_t device, ts_memory_kind what, uint32_t loc);
/* The counter a kind of memory is in Chrome traces ("memory", "arena");
 * NULL out of range. */
const char *tsp_memory_counter_name(ts_memory_kind what);

/* ---- the session's tables (index 0 of each is "none") ------------------------ */

typedef struct tsp_node_info {
  /* "dense_1/MatMul", "dense_1", "f32[20,64]"; a node of an If/While
   * subgraph is named by its path, "While/body/If/else/FloorMod"
   * (ts_node_path), so that it is not taken for the top level's of its name */
  const char *name, *scope, *shape;
  int op;                           /* ts_op, or TSP_OP_OTHER */
  uint32_t loc;                     /* source location */
  uint32_t concrete;                /* the concrete function whose graph holds it */
  int id;                           /* ts_node_id in its graph; a device copy's node (op
                                       TSP_OP_OTHER): the input of its op it carried, -1 none */
  uint32_t graph;                   /* the graph's name (string): which graph it is in */
  bool optimized;                   /* of an executable's optimized graph (not the traced one) */
  bool has_eager_twin;
  int n_origins;                    /* traced nodes it stands for (provenance) */
  uint32_t *origins;
} tsp_node_info;

typedef struct tsp_loc_info {
  const char *file, *func;
  int line;
} tsp_loc_info;

typedef struct tsp_concrete_info {
  const char *function, *signature;
} tsp_concrete_info;

typedef struct tsp_thread_info {
  const char *name;
  uint64_t tid; /* the OS thread id (or the file's tid) */
} tsp_thread_info;

const char *tsp_session_string(const tsp_session *s, uint32_t i); /* "" for 0 or out of range */
uint32_t tsp_session_n_nodes(const tsp_session *s);               /* including 0 */
const tsp_node_info *tsp_session_node(const tsp_session *s, uint32_t i); /* NULL for 0 */
const tsp_loc_info *tsp_session_loc(const tsp_session *s, uint32_t i);
const tsp_concrete_info *tsp_session_concrete(const tsp_session *s, uint32_t i);
const char *tsp_session_device(const tsp_session *s, uint32_t i);
int tsp_session_n_threads(const tsp_session *s);
const tsp_thread_info *tsp_session_thread(const tsp_session *s, int i);
/* "MatMul", or the node's name for TSP_OP_OTHER. */
const char *tsp_event_op_name(const tsp_session *s, const tsp_event *e);

/* Interning: the index of an equal entry, added if new.  For importers,
 * tests and collectors. */
uint32_t tsp_intern_string(tsp_session *s, const char *str);
uint32_t tsp_intern_loc(tsp_session *s, const char *file, const char *func, int line);
uint32_t tsp_intern_concrete(tsp_session *s, const char *function, const char *signature);
uint8_t tsp_intern_device(tsp_session *s, const char *name);
/* A node described by hand (origins are node indexes, copied); always new. */
uint32_t tsp_add_node(tsp_session *s, const tsp_node_info *info);
/* An engine node (and its origins), once per node; borrowed node pointers
 * must stay valid while the session records. */
uint32_t tsp_intern_ts_node(tsp_session *s, const ts_node *n, const ts_concrete *cf);
uint32_t tsp_intern_ts_concrete(tsp_session *s, const ts_concrete *cf);

/* ---- sessions and collectors ------------------------------------------------------ */

/* A source of events.  start and stop bracket recording; flush hands over
 * what the collector still buffers (a GPU collector's activity records);
 * all on the session's clock (CLOCK_MONOTONIC ns).  false + error. */
typedef struct tsp_collector_i {
  const char *name;
  bool (*start)(tsp_session *s, void *data, GError **error);
  void (*stop)(tsp_session *s, void *data);
  void (*flush)(tsp_session *s, void *data);
} tsp_collector_i;

/* A session with the CPU and device collectors. */
tsp_session *tsp_session_new(void);
/* A session with no collector (for importers and tests). */
tsp_session *tsp_session_new_empty(void);
void tsp_session_free(tsp_session *s);
void tsp_session_add_collector(tsp_session *s, const tsp_collector_i *iface, void *data);
/* The CPU collector: the engine's OP_END, TRACE and PHASE_END events. */
extern const tsp_collector_i tsp_cpu_collector;
/* Tensor memory: the engine's MEMORY events (every tensor allocated and
 * released), for the timeline's memory track.  Not in tsp_session_new:
 * op-heavy graph code allocates about twice an op, which costs as much
 * again as recording the ops (bench-profiler measures it). */
extern const tsp_collector_i tsp_memory_collector;
/* Devices: their activity records (ts_activity) as DEVICE events charged
 * to the ops and graph nodes that launched them (device.c). */
extern const tsp_collector_i tsp_device_collector;
bool tsp_session_start(tsp_session *s, GError **error);
void tsp_session_stop(tsp_session *s); /* flushes, then stops every collector */
bool tsp_session_recording(const tsp_session *s);

/* Appends an event for the calling thread (recorders), or for thread i. */
void tsp_record(tsp_session *s, const tsp_event *e);
int tsp_session_add_thread(tsp_session *s, const char *name, uint64_t tid);
void tsp_record_on(tsp_session *s, int thread, const tsp_event *e);

/* A function call as the driver sees it (the engine has no call event):
 * begin returns the start time; end records a CALL event for the calling
 * thread, with the run of the last op the thread recorded since begin. */
uint64_t tsp_call_begin(tsp_session *s);
void tsp_call_end(tsp_session *s, uint64_t start_ns, const char *function, tsp_mode mode);

/* What a recording could not keep, both 0 normally: its own events lost
 * (its memory cap reached, or no memory left: the recording goes on
 * without them, never aborts), and device activity records the backends
 * dropped while it recorded (CUPTI's buffers full: ts_activity_dropped). */
typedef struct tsp_losses {
  uint64_t events;
  uint64_t device_records;
} tsp_losses;
tsp_losses tsp_session_losses(const tsp_session *s);
/* Says them in a sentence ("12 events lost: ..."), NULL when none. */
char *tsp_session_losses_text(const tsp_session *s);
/* Caps the memory a recording's events take (a quarter of the machine's
 * by default): past it, events are lost and counted. */
void tsp_session_set_max_bytes(tsp_session *s, size_t bytes);

/* Events of thread i in recording order. */
typedef struct tsp_iter {
  const void *chunk;
  uint32_t i;
} tsp_iter;
void tsp_iter_init(tsp_iter *it, const tsp_session *s, int thread);
const tsp_event *tsp_iter_next(tsp_iter *it); /* NULL at the end */
uint64_t tsp_session_n_events(const tsp_session *s);
/* Bytes of the session's event memory, for the memory bench (each 4 MiB
 * chunk's 24-byte header lives apart and is not counted). */
size_t tsp_session_event_bytes(const tsp_session *s);

/* ---- copies at device boundaries (copies.c) ---------------------------------------- */

/* An input of an op that the run copied to where the op ran. */
typedef struct tsp_copy {
  uint32_t node;   /* the op: its node (graph mode), or its traced twin (eagerly) */
  int input;       /* which of its inputs */
  uint8_t device;  /* where it was copied to: the device the op ran on */
  uint64_t count;  /* copies recorded */
} tsp_copy;
/* The inputs s's recorded device copies carried (the device collector's
 * spans, each charged to its op), one entry per (node, input, device) in
 * the order first seen: the edges of the graph that crossed a device
 * boundary.  Copies of no op's input, of an op not in s, or of one with
 * neither node nor twin are left out.  Owned GArray of tsp_copy. */
GArray *tsp_copies_compute(const tsp_session *s);

/* ---- statistics ----------------------------------------------------------------------- */

typedef enum tsp_group_by { TSP_BY_OP, TSP_BY_NODE, TSP_BY_LINE, TSP_BY_SCOPE } tsp_group_by;

/* Which op events count: modes (tsp_mode bits) and a time window
 * [from_ns, to_ns) on op start (to_ns 0: no end). */
typedef struct tsp_filter {
  unsigned modes;
  uint64_t from_ns, to_ns;
} tsp_filter;
#define TSP_FILTER_ALL ((tsp_filter){ TSP_MODE_ALL, 0, 0 })

typedef struct tsp_stat {
  char *key;             /* "MatMul", "dense_1/MatMul", "model.c:12", "dense_1" */
  int op;                /* the ops' ts_op; -1 if several */
  uint32_t node;         /* TSP_BY_NODE: the traced node, or a fused node (its origins are
                          * the traced nodes it stands for); 0 for eager ops without one */
  unsigned modes;        /* tsp_mode bits seen */
  const char *device;    /* "CPU"; "mixed" if several */
  uint64_t count;
  double total_ns, self_ns; /* self: total less the spans directly inside (If/While, nesting) */
  double mean_ns, min_ns, max_ns, p50_ns, p95_ns; /* of one op's total */
  double self_p50_ns, self_min_ns; /* of one op's self time: what comparisons use */
  double share;          /* self_ns / wall_ns */
  /* Ops that ran on a device: their kernels' time there (the DEVICE events
   * charged to them, profiler/device.c; an op's several kernels summed);
   * the op times above are then the host's launch.  device_count: the op
   * runs with kernels.  0 for ops on the CPU. */
  uint64_t device_count;
  double device_ns, device_p50_ns, device_min_ns;
} tsp_stat;

/* The time a row is compared and coloured by: the kernels' time on the
 * device where its ops ran on one, else the host's self time (total, one
 * op's median, one op's least). */
double tsp_stat_time_ns(const tsp_stat *r);
double tsp_stat_time_p50_ns(const tsp_stat *r);
double tsp_stat_time_min_ns(const tsp_stat *r);

typedef struct tsp_stats {
  tsp_stat *rows; /* by total_ns, largest first */
  int n;
  double self_ns; /* all ops' self time (the sum of top-level op times) */
  double wall_ns; /* from the first op's start to the last op's end */
  uint64_t count;
} tsp_stats;

/* Op statistics grouped by op type, traced node, source line or name scope.
 * Self time is by time containment on each thread, whatever wrote the
 * events.  A node standing for one traced node counts as it (an eager op
 * as its traced twin); a node standing for several (fused) is a group of
 * its own, counted once, at its own line and scope.  Percentiles are
 * nearest-rank. */
tsp_stats *tsp_stats_compute(const tsp_session *s, tsp_group_by by, const tsp_filter *f);
void tsp_stats_free(tsp_stats *st);
/* The nearest-rank percentile p (0-100) of n sorted values. */
double tsp_percentile(const double *sorted, size_t n, double p);

/* Calls: CALL events, and runs that have none (from their first and last op). */
typedef struct tsp_call {
  const char *function;
  uint32_t concrete;
  tsp_mode mode;
  uint64_t run_id, start_ns, end_ns;
  uint64_t trace_ns; /* tracing inside the call */
} tsp_call;
/* The calls whose start is in f's window, in start order; free with g_array_unref. */
GArray *tsp_session_calls(const tsp_session *s, const tsp_filter *f);

/* Per function and mode: the first call (which traces) against the rest. */
typedef struct tsp_call_stat {
  const char *function;
  tsp_mode mode;
  uint64_t count;
  double first_ns, first_trace_ns;
  double steady_mean_ns, steady_p50_ns, steady_min_ns, steady_max_ns; /* 0 if one call */
} tsp_call_stat;
/* free with g_array_unref */
GArray *tsp_call_stats_compute(const tsp_session *s, const tsp_filter *f);

/* ---- training steps ------------------------------------------------------------------------ */

/* The part of a training step an op is, by its name scope: a "gradients"
 * component (the tape's gradient nodes) is backward, an optimizer's scope
 * (ts_optimizer_scope_is: "Adam", "SGD") the optimizer, the rest (the
 * model, the loss, metrics, data, the loop itself) forward. */
typedef enum tsp_step_part {
  TSP_STEP_FORWARD,
  TSP_STEP_BACKWARD,
  TSP_STEP_OPTIMIZER,
  TSP_STEP_N_PARTS
} tsp_step_part;
const char *tsp_step_part_name(tsp_step_part part); /* "forward", "backward", "optimizer" */
tsp_step_part tsp_step_part_of_scope(const char *scope); /* "gradients/dense", "Adam", "" */

/* Self time and op count per part of the op events f accepts (their
 * scopes as TSP_BY_SCOPE finds them: an eager op's is its traced twin's);
 * the parts add up to the ops' self time. */
typedef struct tsp_step_split {
  double self_ns[TSP_STEP_N_PARTS];
  uint64_t count[TSP_STEP_N_PARTS];
  double self_total_ns;
} tsp_step_split;
tsp_step_split tsp_step_split_compute(const tsp_session *s, const tsp_filter *f);

/* ---- eager against graph ------------------------------------------------------------------ */

typedef struct tsp_compare_row {
  char *name;        /* the traced node's name; eager ops without one: "Op at file:line" */
  char *op, *source; /* "MatMul", "model.c:12" */
  uint32_t node;     /* the traced node, 0 if none */
  double eager_count, graph_count; /* per call */
  double eager_ns, graph_ns;       /* time per call: the median run's times runs per call (on a
                                    * device the kernels' time, tsp_stat_time_p50_ns) */
  double eager_min_ns, graph_min_ns; /* the same from the fastest run */
  double eager_host_ns, graph_host_ns; /* the host's self time per call beside it (on a device
                                        * the launch; else the same as eager_ns, graph_ns) */
  double ratio;                    /* eager_ns / graph_ns; 0 if either is 0 */
  const char *only;                /* NULL, "eager only", "graph only", or "fused": an
                                    * eager op that a fused node stands for */
  int parent;                      /* "fused" rows: the fused node's row (their eager times
                                    * are in its own); else -1 */
} tsp_compare_row;

typedef struct tsp_compare {
  const char *function;
  int n_calls;
  double eager_call_ns, graph_call_ns; /* median per call */
  double speedup;                      /* eager / graph */
  double eager_op_ns, graph_op_ns;     /* op self time per call (the rows' sums) */
  double first_call_ns, trace_ns;      /* the graph's first call and its trace; 0 if traced before */
  double payback_calls;                /* calls for the graph to pay back its first call; -1 never */
  tsp_compare_row *rows;               /* by max(eager, graph) time, largest first; a
                                        * fused node's row followed by its ops' */
  int n_rows;
  tsp_filter eager_window, graph_window; /* tsp_compare_run: the timed calls of each mode */
} tsp_compare;

/* Compares the eager and graph windows of a recorded session, one row per
 * op identity: a traced node (its eager op, the graph node that stands for
 * it), or a fused node (compared with the sum of the eager ops it stands for). */
tsp_compare *tsp_compare_from_session(const tsp_session *s, const tsp_filter *eager,
                                      const tsp_filter *graph, int n_calls);
/* Runs fn on args: the first graph call (trace + run), an eager warm-up,
 * then `repeat` eager calls and `repeat` graph calls, recorded into s
 * (started and stopped here).  NULL + engine error (ts_error) on failure. */
tsp_compare *tsp_compare_run(tsp_session *s, ts_function *fn, const ts_value *args, int n_args,
                             int repeat);
void tsp_compare_free(tsp_compare *c);

/* ---- the call tree ---------------------------------------------------------------------- */

/* Spans (ops and calls) merged by their path of names from the top, by
 * time containment on each thread: a thread's top-level spans, what ran
 * inside each, and so on. */
typedef struct tsp_tree_node {
  const char *name;   /* the op's or call's name (the tree's copy) */
  int parent, depth;  /* parent -1: a root */
  int first_child, next_sibling; /* children by total time, largest first; -1: none */
  uint64_t count;
  double total_ns, self_ns; /* self: total less the spans directly inside */
} tsp_tree_node;

typedef struct tsp_tree {
  tsp_tree_node *nodes;
  int n;
  int first_root;  /* roots linked by next_sibling, largest first; -1: none */
  double wall_ns;  /* the first span's start to the last one's end */
  GStringChunk *names;
} tsp_tree;

/* The call tree of the spans that start in f's window (its modes: of the
 * ops).  It holds copies of the names: it outlives the session. */
tsp_tree *tsp_tree_compute(const tsp_session *s, const tsp_filter *f);
void tsp_tree_free(tsp_tree *tree);

/* ---- two recordings ---------------------------------------------------------------------- */

/* One group (tsp_stats key) in recordings A and B: [0] is A's, [1] B's. */
typedef struct tsp_diff_row {
  char *key;
  uint64_t count[2];
  double p50_ns[2], min_ns[2]; /* of one op's time (tsp_stat_time_p50_ns: the kernels' on a
                                * device, else the host's self time); 0 where it did not run */
  double self_ns[2];           /* all its time, the same way */
  double host_p50_ns[2];       /* of one op's host self time (on a device: the launch) */
  char *device[2];             /* where it ran: "CPU", "SIM:0", "mixed" (owned); NULL where
                                * it did not */
  bool device_ran[2];          /* its kernels' times are the side's p50_ns, min_ns */
  double ratio;                /* B's median / A's (above 1: slower in B); 0 if one side lacks it */
  const char *only;            /* NULL, "only in A" or "only in B" */
} tsp_diff_row;

typedef struct tsp_diff {
  tsp_diff_row *rows; /* by how much the row changed (median times runs), largest first */
  int n;
  double self_ns[2], wall_ns[2]; /* all ops' self time; first op's start to last op's end */
} tsp_diff;

/* Recordings a and b group by group (their whole sessions), matched by key. */
tsp_diff *tsp_diff_compute(const tsp_session *a, const tsp_session *b, tsp_group_by by);
void tsp_diff_free(tsp_diff *d);

/* ---- files ------------------------------------------------------------------------------ */

/* Chrome trace-event JSON (Perfetto, chrome://tracing); gzipped when the
 * path ends in .gz.  Flows join each call to its ops. */
bool tsp_chrome_export(const tsp_session *s, const char *path, GError **error);
/* The same into a string (owned, g_free). */
char *tsp_chrome_export_string(const tsp_session *s, size_t *len);

/* What a reader of files from elsewhere takes on before it refuses
 * (TSP_ERROR_LIMIT, the error naming the limit): the importer's memory
 * follows the events it keeps, and these bound the rest. */
typedef struct tsp_read_limits {
  uint64_t max_bytes;  /* the text, decompressed */
  uint64_t max_events; /* elements of a trace's event array */
  uint64_t max_string; /* one string, as written (escapes included) */
  uint64_t max_value;  /* one event, or another top-level member (our tables), as text */
  int max_depth;       /* arrays and objects inside one another */
} tsp_read_limits;
/* 4 GiB of text, 20 million events (960 MB of session), 1 MiB strings,
 * 16 MiB values, 64 deep: an import holds at most 8 batches of a MiB and
 * a value each in flight. */
tsp_read_limits tsp_read_limits_default(void);

/* Called now and then with the fraction of the file read; false cancels
 * (TSP_ERROR_CANCELLED).  On the importing thread. */
typedef bool (*tsp_progress_fn)(double fraction, void *data);

typedef struct tsp_import_options {
  tsp_read_limits limits;
  tsp_progress_fn progress; /* or NULL */
  void *progress_data;
} tsp_import_options;
/* The default limits, no progress callback. */
tsp_import_options tsp_import_options_default(void);

/* Reads a Chrome trace (plain or gzipped, ours or another tool's) into a
 * new stopped session; NULL + TSP_ERROR_FORMAT/IO/LIMIT/CANCELLED saying
 * what is wrong (a file's errors begin with its path).  A file is
 * streamed: the memory held is the session's events and a few MiB of
 * text.  Without options: tsp_import_options_default(). */
tsp_session *tsp_chrome_import(const char *path, GError **error);
tsp_session *tsp_chrome_import_data(const char *data, size_t len, GError **error);
tsp_session *tsp_chrome_import_with(const char *path, const tsp_import_options *options,
                                    GError **error);
tsp_session *tsp_chrome_import_data_with(const char *data, size_t len,
                                         const tsp_import_options *options, GError **error);

/* The session as bytes (a versioned GVariant in normal form: its tables
 * and every thread's events), for the worker to hand the app what it
 * recorded.  The session must be stopped.  Owned. */
GBytes *tsp_session_serialize(const tsp_session *s);
/* A new stopped session from tsp_session_serialize's bytes; NULL +
 * TSP_ERROR_FORMAT saying what is wrong (any bytes: never a crash). */
tsp_session *tsp_session_deserialize(GBytes *bytes, GError **error);

/* Op statistics as CSV: a header line, then one row per group of each
 * table in turn (the mode column tells tables of two modes apart). */
bool tsp_stats_write_csv(const tsp_stats *const *st, int n, const char *path, GError **error);
void tsp_stats_print_csv(const tsp_stats *const *st, int n, FILE *out);

/* ---- level of detail: what a timeline draws ------------------------------------------------
 * An index over a stopped session, built once (lod.c): per thread, each
 * span's nesting depth (call > If/While op > the ops inside, by time
 * containment) and per depth a pyramid of summaries, so that a window of
 * any width costs about as much as the pixels it is drawn on.  Borrows the
 * session's events: free the index before the session. */

typedef struct tsp_lod tsp_lod;

/* Builds the index over s (stopped); owned, free with tsp_lod_free. */
tsp_lod *tsp_lod_build(const tsp_session *s);
void tsp_lod_free(tsp_lod *lod);
const tsp_session *tsp_lod_session(const tsp_lod *lod);
/* Bytes the index holds (beyond the session's events). */
size_t tsp_lod_bytes(const tsp_lod *lod);
/* The time spanned by all events; 0, 0 if none. */
void tsp_lod_range(const tsp_lod *lod, uint64_t *start_ns, uint64_t *end_ns);
/* Tracks are the session's threads, in order; depths 0 .. n_depths - 1. */
int tsp_lod_n_depths(const tsp_lod *lod, int track);
/* The depth of span e of the track (an OP or CALL event), -1 if not in it. */
int tsp_lod_depth_of(const tsp_lod *lod, int track, const tsp_event *e);

/* What a query returns: one span (count 1, event the span), or a summary
 * of count spans narrower than the resolution (event: the first of them). */
typedef struct tsp_lod_span {
  uint64_t start_ns, end_ns;
  const tsp_event *event;
  uint32_t count;
  uint16_t op;   /* the span's op; summaries: the op with most of the time */
  float busy;    /* summaries: the fraction of [start, end) inside spans; 1 for one span */
} tsp_lod_span;

/* Appends to out (of tsp_lod_span) what overlaps [from_ns, to_ns) at depth
 * of track, in time order, at ns_per_px nanoseconds a pixel: spans at
 * least a pixel wide one by one, narrower runs as summaries about a pixel
 * wide.  Returns the number appended. */
int tsp_lod_query(const tsp_lod *lod, int track, int depth, uint64_t from_ns, uint64_t to_ns,
                  double ns_per_px, GArray *out);
/* The spans themselves (never summaries: instants at one time stay apart)
 * of depth of track that overlap [from_ns, to_ns], an instant at either
 * end included: up to max of them (the first in time order, or with
 * backward the last, latest first), appended to out (const tsp_event *).
 * Returns the number appended. */
int tsp_lod_spans(const tsp_lod *lod, int track, int depth, uint64_t from_ns, uint64_t to_ns,
                  bool backward, int max, GPtrArray *out);
/* The TRACE events of a track, by start time (borrowed array of n). */
const tsp_event *const *tsp_lod_traces(const tsp_lod *lod, int track, int *n);

/* Live bytes over time, one series per device and kind of memory (tensors,
 * the memory planner's arenas) that reported any: by device, tensors first. */
int tsp_lod_n_memory(const tsp_lod *lod);
uint8_t tsp_lod_memory_device(const tsp_lod *lod, int series);
ts_memory_kind tsp_lod_memory_kind(const tsp_lod *lod, int series);
/* The series' highest level, and when it first reached it. */
int64_t tsp_lod_memory_peak(const tsp_lod *lod, int series);
uint64_t tsp_lod_memory_peak_ns(const tsp_lod *lod, int series);
typedef struct tsp_lod_level {
  uint64_t time_ns;
  int64_t live_bytes; /* from time_ns on; max: the most in the pixel it starts */
  int64_t max_bytes;
} tsp_lod_level;
/* Appends to out (of tsp_lod_level) the steps of a series over [from_ns,
 * to_ns): each change, or one step a pixel with the pixel's last and
 * highest levels where changes are denser than ns_per_px. */
int tsp_lod_memory_query(const tsp_lod *lod, int series, uint64_t from_ns, uint64_t to_ns,
                         double ns_per_px, GArray *out);

/* Whole-session search: the OP, CALL and TRACE events whose op name, node
 * name, name scope or function name contains text (ignoring case), in
 * start order (ties by track).  Free with g_array_unref. */
typedef struct tsp_lod_hit {
  const tsp_event *event;
  int track, depth; /* depth -1: a TRACE event (drawn as a marker) */
} tsp_lod_hit;
GArray *tsp_lod_search(const tsp_lod *lod, const char *text);

G_END_DECLS
