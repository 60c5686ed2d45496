/* tracescope-backend.h — the backend interface (v2): where tensors live and
 * ops run.  A table of functions in the spirit of ggml's backends (learned
 * from ggml-backend-impl.h, written for this engine); members marked
 * (optional) may be NULL.  The CPU backend is built in, the simulated GPU
 * SIM:0 (backend/sim.c) too, registered where TRACESCOPE_DEVICES names it
 * ("sim"), and others (CUDA, tests) register through ts_backend_register.
 *
 * Kernels are per kind of device (ts_device_kind): every op's row in the
 * op table holds one kernel per kind, so a backend of kind CPU runs the CPU
 * kernels on its own buffers.  A backend whose buffers the host cannot read
 * (host_visible false) is reached only through its copies: the engine
 * copies tensors in and out for printing, .npy, host values and placement.
 *
 * Each backend has one stream: the work queued on it (launches, device
 * copies, memsets, stream-ordered frees) runs in order, and a backend with
 * a stream returns from those at once.  Host copies wait for the work
 * queued before them.  A kernel's error on a stream is reported by the
 * next synchronize or host copy, as a GPU reports it. */
#pragma once

#include "tracescope.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_kernel_ctx ts_kernel_ctx;
typedef struct ts_device_event ts_device_event; /* a backend's own */
typedef struct ts_graph_plan ts_graph_plan;     /* a backend's own */

typedef struct ts_backend_i {
  /* ---- the device ---- */
  const char *name;           /* "CPU", "SIM:0", "CUDA:0": what op events report as device */
  const char *description;    /* (optional) what it is, for device menus: "NVIDIA H100 80GB HBM3" */
  ts_device_kind kind;        /* which kernels it runs */
  bool host_visible;          /* the host may read and write its buffers directly */
  /* (optional) Free and total bytes of its memory; false if unknown. */
  bool (*memory_info)(const ts_backend *b, size_t *free_bytes, size_t *total_bytes);
  /* (optional) Can it run the op of k: ts_kernel_op, the inputs' dtypes
   * and shapes, ts_kernel_attr (outputs are not allocated yet)?  NULL:
   * every op with a kernel for kind. */
  bool (*supports_op)(const ts_backend *b, const ts_kernel_ctx *k);

  /* ---- buffers ---- */
  /* At least `bytes` bytes, 64-byte aligned; NULL if out of memory.  A
   * buffer may be sub-allocated: base + offset is a buffer address of the
   * same backend (the memory planner's arena is one buffer). */
  void *(*buffer_alloc)(const ts_backend *b, size_t bytes);
  /* Stream-ordered: the memory is reused only after the work queued
   * before the free has run. */
  void (*buffer_free)(const ts_backend *b, void *ptr, size_t bytes);
  /* Host copies: wait for the work queued before them. */
  bool (*copy_to_host)(const ts_backend *b, void *host_dst, const void *src, size_t bytes);
  bool (*copy_from_host)(const ts_backend *b, void *dst, const void *host_src, size_t bytes);
  /* (optional) Sets bytes of a buffer to value (queued).  NULL: through
   * copy_from_host. */
  bool (*memset)(const ts_backend *b, void *dst, int value, size_t bytes);
  /* (optional) Copies between buffers without the host (queued): dst is
   * b's, src is src_b's (b itself, or another backend b can reach);
   * false, with no error set, when it cannot (the engine goes through the
   * host).  NULL: through the host always. */
  bool (*copy)(const ts_backend *b, void *dst, const ts_backend *src_b, const void *src,
               size_t bytes);

  /* ---- the stream ---- */
  /* (optional) Runs or queues one op whose inputs and outputs are on this
   * backend; NULL: the op's kernel for kind is called directly. */
  bool (*run_op)(const ts_backend *b, ts_kernel_ctx *k);
  /* (optional) Waits for the work queued on the stream; false + error if
   * any of it failed.  NULL: the backend has no stream (all synchronous). */
  bool (*synchronize)(const ts_backend *b);
  /* (optional) Events of b: recorded on its stream, done once the work
   * queued before them has run; event_wait makes b's stream wait for one
   * (work queued after it runs after it); event_elapsed_ns gives the
   * device time between two done events (false if either is not). */
  ts_device_event *(*event_new)(const ts_backend *b);
  void (*event_free)(const ts_backend *b, ts_device_event *e);
  bool (*event_record)(const ts_backend *b, ts_device_event *e);
  bool (*event_wait)(const ts_backend *b, const ts_device_event *e);
  bool (*event_query)(const ts_backend *b, const ts_device_event *e);
  bool (*event_elapsed_ns)(const ts_backend *b, const ts_device_event *start,
                           const ts_device_event *end, uint64_t *ns);

  /* ---- whole plans (optional, all four or none) ----
   * The executor runs a graph whose steps all run on b as: plan =
   * graph_plan_create (first run) or graph_plan_update (later runs: the
   * same launches, perhaps other buffers), then every step as usual, whose
   * run_op calls the backend records instead of running, then
   * graph_plan_compute, which submits them as one (a CUDA Graph launched,
   * updated in place when only the buffers changed).  A graph with If or
   * While nodes (their conditions are read on the host) is recorded as a
   * plan per run of steps between them, each submitted before the node
   * runs; their subgraphs record plans of their own.  A host copy of the
   * backend while a plan records is an error of the plan: the executor
   * runs such a plan's steps step by step from then on. */
  ts_graph_plan *(*graph_plan_create)(const ts_backend *b);
  bool (*graph_plan_update)(const ts_backend *b, ts_graph_plan *plan);
  bool (*graph_plan_compute)(const ts_backend *b, ts_graph_plan *plan);
  void (*graph_plan_free)(const ts_backend *b, ts_graph_plan *plan);

  /* ---- device activity ---- */
  /* (optional) Hands the activity records it holds to the collectors now
   * (ts_activity_flush calls it). */
  void (*activity_flush)(const ts_backend *b);
  void *context;              /* the backend's own */
} ts_backend_i;

/* Adds a backend (iface is copied; its strings and context must outlive
 * the process).  Returns it, or NULL + error (no name, missing members,
 * too many backends, a name taken). */
TS_API const ts_backend *ts_backend_register(const ts_backend_i *iface);
TS_API const ts_backend_i *ts_backend_iface(const ts_backend *b);
/* What the engine found of real devices, for device menus and errors:
 * "CUDA: CUDA:0 (NVIDIA H100 80GB HBM3, 79.1 GiB);", "CUDA: no device
 * (...)", "CUDA: not built (-Dcuda=disabled)".  Static text. */
TS_API const char *ts_backend_devices_note(void);
/* The backend's description (ts_backend_i), "" if it has none. */
TS_API const char *ts_backend_description(const ts_backend *b);
/* Waits for b's stream; false + error if work queued on it failed. */
TS_API bool ts_backend_synchronize(const ts_backend *b);
/* b's free and total memory; false if it does not say. */
TS_API bool ts_backend_memory_info(const ts_backend *b, size_t *free_bytes, size_t *total_bytes);

/* What a kernel is given (for run_op and supports_op). */
TS_API ts_op ts_kernel_op(const ts_kernel_ctx *k);
TS_API int ts_kernel_n_inputs(const ts_kernel_ctx *k);
TS_API ts_tensor *ts_kernel_input(const ts_kernel_ctx *k, int i);
TS_API int ts_kernel_n_outputs(const ts_kernel_ctx *k);
/* Outputs are allocated before the kernel runs, except for ops that make
 * their own (views): NULL until then. */
TS_API ts_tensor *ts_kernel_output(const ts_kernel_ctx *k, int i);
/* Attribute `name` of the op ("transpose_a", "axis"): its value as a
 * string ("true", "1", "[0, 2]"), owned (free()); NULL if the op has none
 * of that name. */
TS_API char *ts_kernel_attr(const ts_kernel_ctx *k, const char *name);
/* The op's correlation id: unique in the process, carried by its op
 * events and by the device activity it causes. */
TS_API uint64_t ts_kernel_correlation(const ts_kernel_ctx *k);
/* The graph node it runs (graph mode), or NULL. */
TS_API const ts_node *ts_kernel_node(const ts_kernel_ctx *k);
/* Has op's row a kernel for kind?  (One that may still take only some
 * dtypes: the backend's supports_op says, and the rest falls back.) */
TS_API bool ts_op_has_kernel(ts_op op, ts_device_kind kind);
/* Runs the op's kernel for kind; false + error (also when it has none). */
TS_API bool ts_kernel_run(ts_kernel_ctx *k, ts_device_kind kind);

/* ---- device activity (what CUPTI's activity API gives) ----------------------------- */

typedef enum ts_activity_kind {
  TS_ACTIVITY_KERNEL,
  TS_ACTIVITY_COPY,
  TS_ACTIVITY_MEMSET,
  TS_ACTIVITY_SYNC,
  /* A plan captured a launch: graph_node now stands for the launch of
   * `correlation` (CUPTI's graph-node-created callback); replays of the
   * plan report the node's kernels with graph_node and the plan's launch
   * as correlation. */
  TS_ACTIVITY_GRAPH_NODE,
  TS_ACTIVITY_KIND_COUNT
} ts_activity_kind;

typedef struct ts_activity {
  ts_activity_kind kind;
  const char *device;      /* the backend's name */
  uint32_t stream;
  uint32_t operand;        /* a copy of an op's input to where the op runs
                              (ts_activity_operand): the input's index + 1; else 0 */
  uint64_t correlation;    /* the op's (ts_kernel_correlation; copies and memsets:
                              ts_activity_correlation, 0 for none), or a plan launch's */
  uint64_t graph_node;     /* replayed from a plan: the captured node; else 0 */
  uint64_t start_ns, end_ns; /* device time on CLOCK_MONOTONIC (the op events' clock) */
  uint64_t bytes;          /* copies and memsets */
  const char *name;        /* the op's name for kernels, else a static description */
} ts_activity;

/* A collector gets device activity in batches, on whatever thread a
 * backend delivers it (a stream's thread, or ts_activity_flush's caller);
 * calls for one collector never overlap. */
typedef void (*ts_activity_fn)(const ts_activity *records, int n, void *data);
/* Adds a collector; false + error if too many. */
TS_API bool ts_activity_subscribe(ts_activity_fn fn, void *data);
TS_API void ts_activity_unsubscribe(ts_activity_fn fn, void *data);
/* Asks every backend to hand over the records it holds. */
TS_API void ts_activity_flush(void);
/* For backends: hands a batch of records to the collectors. */
TS_API void ts_activity_deliver(const ts_activity *records, int n);
/* Device activity records lost for want of buffers since start-up
 * (CUPTI's dropped records); 0 where no backend drops any. */
TS_API uint64_t ts_activity_dropped(void);
/* Is anything collecting?  A backend records activity only then. */
TS_API bool ts_activity_wanted(void);
/* The correlation id of the op the calling thread is placing or running
 * now (ts_kernel_correlation), 0 outside ops: the copies and memsets a
 * backend makes meanwhile (an input copied to where the op runs, in either
 * direction, a variable's storage) are that op's, and their records carry
 * it, as kernels carry theirs.  A backend reads it when the copy is asked
 * for (not when its stream runs it). */
TS_API uint64_t ts_activity_correlation(void);
/* The input of that op the calling thread is copying to where the op
 * runs now, as its index + 1; 0 otherwise (a kernel's own copies, a
 * variable's storage, a result read by the host).  A copy's record carries
 * it (ts_activity.operand), so a collector can tell which edge of the
 * graph a copy crossed. */
TS_API uint32_t ts_activity_operand(void);

/* The engine's thread pool, for kernels: runs fn(ctx, i) for every i in
 * [0, n) on up to ts_get_threads() threads, the caller among them, and
 * returns when all have run.  Items may run in any order and on any of
 * those threads.  Called from inside an item, or while another thread's
 * call holds the pool, it runs the items inline, in order. */
typedef void (*ts_task_fn)(void *ctx, int64_t i);
TS_API void ts_parallel_for(int64_t n, ts_task_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
