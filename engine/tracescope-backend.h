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
 * (its buffer type not is_host) is reached only through its buffers'
 * copies: the engine copies tensors in and out for printing, .npy, host
 * values and placement.
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

typedef struct ts_buffer ts_buffer;
typedef struct ts_buffer_type ts_buffer_type;

/* ---- buffers (as ggml's buffer types and buffers: learned from
 * ggml-backend-impl.h, written for this engine) ----------------------------------------
 *
 * A buffer is one allocation of a backend's memory: a base address (a
 * device address, which the host may dereference only where the type
 * is_host), a size, and operations on byte ranges of it.  Tensors on a
 * device reference a buffer and an offset in it: their own buffer, or a
 * sub-allocation of a larger one (the memory planner's arena is one buffer
 * from the step's backend).  The engine checks every range against the
 * buffer's size before it calls a backend's entry. */

typedef enum ts_buffer_usage {
  TS_BUFFER_USAGE_TENSOR,  /* one tensor's own storage */
  TS_BUFFER_USAGE_ARENA,   /* a memory plan's arena: tensors sub-allocated by offset */
  TS_BUFFER_USAGE_SCRATCH, /* a kernel's workspace (im2col columns) */
  TS_BUFFER_USAGE_COUNT
} ts_buffer_usage;

/* What a buffer does (ggml_backend_buffer_i): given by the buffer type's
 * alloc_buffer to ts_buffer_new.  Ranges are within the buffer. */
typedef struct ts_buffer_i {
  /* Releases the memory, stream-ordered: it is reused only after the work
   * queued before the free has run.  (ts_buffer_free frees the object.) */
  void (*free_buffer)(ts_buffer *buf);
  /* Host copies: wait for the work queued before them; set returns once
   * the caller may reuse host_src. */
  bool (*set)(ts_buffer *buf, size_t offset, const void *host_src, size_t bytes);
  bool (*get)(const ts_buffer *buf, size_t offset, void *host_dst, size_t bytes);
  /* (optional) Sets bytes to value (queued).  NULL: through set. */
  bool (*memset)(ts_buffer *buf, size_t offset, int value, size_t bytes);
  /* (optional) Copies from src (a buffer of this backend, or of one it can
   * reach) into buf without the host (queued); false, with no error set,
   * when it cannot reach src (the engine goes through the host).  NULL:
   * through the host always. */
  bool (*copy_from)(ts_buffer *buf, size_t offset, const ts_buffer *src, size_t src_offset,
                    size_t bytes);
} ts_buffer_i;

/* A backend's kind of buffer (ggml_backend_buffer_type_i). */
typedef struct ts_buffer_type_i {
  const char *name;   /* (optional) "CUDA:0 pool"; NULL: the backend's name */
  size_t alignment;   /* of every buffer's base: a power of two, at most TS_BUFFER_MAX_ALIGNMENT */
  size_t max_size;    /* the largest one buffer; 0: no limit but memory */
  bool is_host;       /* the host may read and write its buffers directly */
  /* (optional) Bytes a tensor of dtype and shape, whose elements take
   * `bytes`, needs in a buffer (kernels that read past the end); at least
   * bytes.  NULL: bytes. */
  size_t (*get_alloc_size)(const ts_buffer_type *bt, ts_dtype dtype, ts_shape shape, size_t bytes);
  /* A buffer of `size` bytes, made with ts_buffer_new; NULL if out of
   * memory.  Its base is never NULL, for 0 bytes too (an empty tensor
   * has data all the same). */
  ts_buffer *(*alloc_buffer)(const ts_buffer_type *bt, size_t size);
} ts_buffer_type_i;

/* The largest alignment a buffer type may ask for: the memory planner
 * places tensors in its arena at multiples of it. */
#define TS_BUFFER_MAX_ALIGNMENT 64

typedef struct ts_backend_i {
  /* ---- the device ---- */
  const char *name;           /* "CPU", "SIM:0", "CUDA:0": what op events report as device */
  const char *description;    /* (optional) what it is, for device menus: "NVIDIA H100 80GB HBM3" */
  ts_device_kind kind;        /* which kernels it runs */
  /* (optional) Free and total bytes of its memory; false if unknown. */
  bool (*memory_info)(const ts_backend *b, size_t *free_bytes, size_t *total_bytes);
  /* (optional) Can it run the op of k: ts_kernel_op, the inputs' dtypes
   * and shapes, ts_kernel_attr (outputs are not allocated yet)?  NULL:
   * every op with a kernel for kind. */
  bool (*supports_op)(const ts_backend *b, const ts_kernel_ctx *k);

  /* ---- memory ---- */
  /* Its one kind of buffer (ts_buffer_type_i above). */
  ts_buffer_type_i buffer_type;

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
   * backend while a plan records breaks that capture: what was recorded
   * goes out, the rest of the run step by step; graph_plan_update then
   * captures anew (the engine stops asking after two broken captures in a
   * row and warns, TS_WARNING_DEVICE_STEPWISE).  Buffers freed
   * while a plan captured are the plan's until its next capture or its
   * free (released then, stream-ordered): its launches may run again. */
  ts_graph_plan *(*graph_plan_create)(const ts_backend *b);
  bool (*graph_plan_update)(const ts_backend *b, ts_graph_plan *plan);
  bool (*graph_plan_compute)(const ts_backend *b, ts_graph_plan *plan);
  void (*graph_plan_free)(const ts_backend *b, ts_graph_plan *plan);
  /* (optional) Launches the plan's last capture again as it is, queued
   * after the work before it: the same launches on the same buffers, with
   * no host work per launch (a CUDA Graph launched again).  The engine
   * calls it only where those buffers hold this call's data (the inputs
   * and outputs are tensors the engine keeps for the plan, the rest
   * buffers the plan holds or variables it checked).  Its nodes are
   * charged to this call's ops: the node captured for the op of
   * correlation captured[i] stands for the op of fresh[i] now (n of each,
   * captured increasing).  false with no error set: there is no whole
   * capture to replay (a host copy broke it); false + error: the launch
   * failed. */
  bool (*graph_plan_replay)(const ts_backend *b, ts_graph_plan *plan, const uint64_t *captured,
                            const uint64_t *fresh, int n);
  /* (optional, with the whole plans; both or none) A loop inside a
   * capture, run by the device: a While node whose iteration count the
   * host never learns (a CUDA conditional node).  graph_plan_while_begin
   * opens it where the capture is; cond is a tensor of b of one element
   * (a number or bool, nonzero: true) that the device reads when the plan
   * runs.  The launches after it, until graph_plan_while_end, are the
   * loop's body, run while the condition holds; next (a tensor of b, one
   * element) is the condition after an iteration, made by the body's
   * launches.  Loops nest.  while_begin false + error: no loop (the
   * capture goes on where it was).  while_end false with no error: a host
   * copy broke the capture inside the loop (what came before the
   * outermost open loop went out; that loop and every launch since, up to
   * its end, were dropped unrun); false + error: the loop could not be
   * made. */
  bool (*graph_plan_while_begin)(const ts_backend *b, ts_graph_plan *plan, const ts_tensor *cond);
  bool (*graph_plan_while_end)(const ts_backend *b, ts_graph_plan *plan, const ts_tensor *next);
  /* (optional, with the loops; all three or none) An If inside a capture,
   * run by the device: graph_plan_if_begin opens it where the capture is
   * (cond as a loop's); the launches after it are its then branch, those
   * after graph_plan_if_else its else branch, until graph_plan_if_end;
   * the device runs the branch the condition picks.  Ifs and loops nest.
   * if_begin: as while_begin.  if_end(keep false): the If is given up,
   * unrun; false with no error: a host copy broke the capture inside it
   * (as while_end says it). */
  bool (*graph_plan_if_begin)(const ts_backend *b, ts_graph_plan *plan, const ts_tensor *cond);
  bool (*graph_plan_if_else)(const ts_backend *b, ts_graph_plan *plan);
  bool (*graph_plan_if_end)(const ts_backend *b, ts_graph_plan *plan, bool keep);

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

/* ---- buffer types and buffers ---- */

/* b's buffer type. */
TS_API const ts_buffer_type *ts_backend_buffer_type(const ts_backend *b);
TS_API const ts_backend *ts_buffer_type_backend(const ts_buffer_type *bt);
TS_API const char *ts_buffer_type_name(const ts_buffer_type *bt);
TS_API size_t ts_buffer_type_alignment(const ts_buffer_type *bt);
/* The largest one buffer; SIZE_MAX where the type has no limit. */
TS_API size_t ts_buffer_type_max_size(const ts_buffer_type *bt);
TS_API bool ts_buffer_type_is_host(const ts_buffer_type *bt);
/* Bytes a tensor of dtype and shape needs in a buffer of bt; false +
 * error on a bad shape or one whose size overflows. */
TS_API bool ts_buffer_type_alloc_size(const ts_buffer_type *bt, ts_dtype dtype, ts_shape shape,
                                      size_t *bytes);
/* A buffer of bt of `size` bytes; NULL + error (over the type's max_size,
 * out of memory, a NULL or unaligned base). */
TS_API ts_buffer *ts_buffer_alloc(const ts_buffer_type *bt, size_t size, ts_buffer_usage usage);
/* For a buffer type's alloc_buffer: the buffer object over memory it has
 * allocated (context: its own); NULL if out of memory (the memory is
 * then the caller's to release). */
TS_API ts_buffer *ts_buffer_new(const ts_buffer_type *bt, const ts_buffer_i *iface, void *base,
                                size_t size, void *context);
/* Releases the buffer (stream-ordered) and frees the object; NULL is fine. */
TS_API void ts_buffer_free(ts_buffer *buf);
TS_API const ts_buffer_type *ts_buffer_get_type(const ts_buffer *buf);
/* A device address (host-readable only where the type is_host). */
TS_API void *ts_buffer_base(const ts_buffer *buf);
TS_API size_t ts_buffer_size(const ts_buffer *buf);
TS_API ts_buffer_usage ts_buffer_get_usage(const ts_buffer *buf);
TS_API void *ts_buffer_context(const ts_buffer *buf);
/* Sub-allocation: the device address of offset in buf, for `bytes` bytes
 * aligned to `alignment` (a power of two; 1: any); NULL + error if the
 * range is not within the buffer or the offset not aligned. */
TS_API void *ts_buffer_at(const ts_buffer *buf, size_t offset, size_t bytes, size_t alignment);
/* Operations on a range of buf, [offset, offset + bytes): false + error
 * if it is not within the buffer or the backend failed.  memset and copy
 * are queued on the backend's stream; set and get wait for it. */
TS_API bool ts_buffer_memset(ts_buffer *buf, size_t offset, int value, size_t bytes);
TS_API bool ts_buffer_set(ts_buffer *buf, size_t offset, const void *host_src, size_t bytes);
TS_API bool ts_buffer_get(const ts_buffer *buf, size_t offset, void *host_dst, size_t bytes);
/* Between buffers of any backends: directly where dst's backend reaches
 * src's, else through the host. */
TS_API bool ts_buffer_copy(ts_buffer *dst, size_t dst_offset, const ts_buffer *src,
                           size_t src_offset, size_t bytes);

/* The buffer t's data is in and its offset there; NULL where t has none
 * (host memory of its own, inline after its header, or no data). */
TS_API ts_buffer *ts_tensor_buffer(const ts_tensor *t, size_t *offset);

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
