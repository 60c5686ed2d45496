/* tracescope-backend.h — the backend interface: where tensors live and ops
 * run.  A table of functions in the spirit of ggml's backends; optional
 * members may be NULL.  The CPU backend is built in; the CUDA backend and
 * test backends register through ts_backend_register.
 *
 * Kernels are per kind of device (ts_device_kind): every op's row in the
 * op table holds one kernel per kind, so a backend of kind CPU runs the CPU
 * kernels on its own buffers.  A backend whose buffers the host cannot read
 * (host_visible false) is reached only through copy_to_host and
 * copy_from_host: the engine copies tensors in and out for printing, .npy,
 * host values and placement. */
#pragma once

#include "tracescope.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_kernel_ctx ts_kernel_ctx;

typedef struct ts_backend_i {
  const char *name;           /* "CPU", "CUDA:0": what op events report as device */
  ts_device_kind kind;        /* which kernels it runs */
  bool host_visible;          /* the host may read and write its buffers directly */
  /* (optional) Can it run op on inputs of these dtypes?  NULL: every op
   * with a kernel for kind. */
  bool (*supports_op)(const ts_backend *b, ts_op op, const ts_dtype *in, int n_in);
  /* Buffers: at least `bytes` bytes, 64-byte aligned; NULL if out of memory. */
  void *(*buffer_alloc)(const ts_backend *b, size_t bytes);
  void (*buffer_free)(const ts_backend *b, void *ptr, size_t bytes);
  /* Copies between a buffer of this backend and host memory. */
  bool (*copy_to_host)(const ts_backend *b, void *host_dst, const void *src, size_t bytes);
  bool (*copy_from_host)(const ts_backend *b, void *dst, const void *host_src, size_t bytes);
  /* (optional) Runs one op whose inputs and outputs are on this backend;
   * NULL: the op's kernel for kind is called directly. */
  bool (*run_op)(const ts_backend *b, ts_kernel_ctx *k);
  /* (optional) Runs a whole execution plan at once (a CUDA Graph). */
  bool (*run_plan)(const ts_backend *b, void *plan);
  /* (optional) A device timestamp, and waiting for queued work (collectors). */
  uint64_t (*timestamp_ns)(const ts_backend *b);
  void (*synchronize)(const ts_backend *b);
  void *context;              /* the backend's own */
} ts_backend_i;

/* Adds a backend (iface is copied; its strings and context must outlive
 * the process).  Returns it, or NULL + error (no name, missing members,
 * too many backends, a name taken). */
TS_API const ts_backend *ts_backend_register(const ts_backend_i *iface);
TS_API const ts_backend_i *ts_backend_iface(const ts_backend *b);

/* What a kernel is given (for run_op). */
TS_API ts_op ts_kernel_op(const ts_kernel_ctx *k);
TS_API int ts_kernel_n_inputs(const ts_kernel_ctx *k);
TS_API ts_tensor *ts_kernel_input(const ts_kernel_ctx *k, int i);
TS_API int ts_kernel_n_outputs(const ts_kernel_ctx *k);
/* Outputs are allocated before the kernel runs, except for ops that make
 * their own (views): NULL until then. */
TS_API ts_tensor *ts_kernel_output(const ts_kernel_ctx *k, int i);
/* Runs the op's kernel for kind; false + error (also when it has none). */
TS_API bool ts_kernel_run(ts_kernel_ctx *k, ts_device_kind kind);

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
