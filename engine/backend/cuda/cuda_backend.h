/* cuda/cuda_backend.h — what the engine and the CUDA kernels see of the
 * CUDA backend (cuda.c).  Built with the CUDA toolkit only (TS_HAVE_CUDA). */
#pragma once

#include "../../tracescope-backend.h"

/* Registers a backend per CUDA device the driver finds (CUDA:0, ...);
 * none without a device or driver, or with TRACESCOPE_CUDA=off. */
void ts__cuda_register(void);
/* Why there are the CUDA devices there are: "CUDA: CUDA:0 (NVIDIA H100
 * 80GB HBM3, 79.1 GiB);" or "CUDA: no device (...)". */
const char *ts__cuda_note(void);
/* "CUDA:0 (NVIDIA H100 80GB HBM3, 79.1 GiB)" for a CUDA backend, else NULL. */
const char *ts__cuda_device_label(const ts_backend *b);
/* The stream a kernel of b launches on (a cudaStream_t). */
void *ts__cuda_stream(const ts_backend *b);
/* An op whose kernel may refuse an operand, as its CPU kernel does, says
 * so by this: one that indexes (Gather, the sparse cross entropy) names
 * an index out of range: the op, its site, the range, its indices' info;
 * an integer FloorDiv, FloorMod or Pow its row's check (ops/binary.c),
 * run again on the divisor or exponent it refused. */
typedef struct ts_cuda_index_check {
  const ts_op_def *def;
  ts_loc loc;
  int64_t limit; /* indices in [0, limit) */
  ts_dtype dtype;
  ts_shape shape;
  bool (*check)(ts_kernel_ctx *k); /* a binary row's check of in[1]; NULL: indices */
} ts_cuda_index_check;
struct ts_cu_index_fault;
/* Where the kernel of the op of this correlation records the first
 * operand it refuses on the device (an index out of range, a zero
 * divisor: cuda/kernels.h), while b captures a CUDA Graph, which a host
 * check would break: the next host copy or synchronize of b fails with
 * the op's error, as SIM:0 reports a kernel's.  NULL when b is not
 * capturing: the caller checks on the host, at the op. */
struct ts_cu_index_fault *ts__cuda_index_fault(const ts_backend *b, uint64_t correlation,
                                               const ts_cuda_index_check *c);
/* The op's error for the operand element at (indices[at] = value outside
 * [0, c->limit), or what c->check refuses): false (kernels.c; the host's
 * check and the device's say it alike). */
bool ts__cuda_index_fail(const ts_cuda_index_check *c, int64_t at, int64_t value);
/* Activity records CUPTI dropped for want of buffers, since start-up. */
uint64_t ts__cuda_dropped_records(void);
/* Queues a 2-D copy between b's buffers: height rows of width bytes,
 * pitches apart; false + error if it fails. */
bool ts__cuda_copy_2d(const ts_backend *b, void *dst, size_t dst_pitch, const void *src,
                      size_t src_pitch, size_t width, size_t height);
