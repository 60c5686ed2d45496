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
/* An op that indexes (Gather, the sparse cross entropy) as an index out
 * of range names it: the op, its site, the range, its indices' info. */
typedef struct ts_cuda_index_check {
  const ts_op_def *def;
  ts_loc loc;
  int64_t limit; /* indices in [0, limit) */
  ts_dtype dtype;
  ts_shape shape;
} ts_cuda_index_check;
struct ts_cu_index_fault;
/* Where the kernel of the op of this correlation records its first index
 * out of range on the device (cuda/kernels.h), while b captures a CUDA
 * Graph, which a host check would break: the next host copy or
 * synchronize of b fails with the op's error, as SIM:0 reports a
 * kernel's.  NULL when b is not capturing: the caller checks on the host,
 * at the op. */
struct ts_cu_index_fault *ts__cuda_index_fault(const ts_backend *b, uint64_t correlation,
                                               const ts_cuda_index_check *c);
/* The op's error for indices[at] = value outside [0, c->limit): false
 * (kernels.c; the host's check and the device's say it alike). */
bool ts__cuda_index_fail(const ts_cuda_index_check *c, int64_t at, int64_t value);
/* Activity records CUPTI dropped for want of buffers, since start-up. */
uint64_t ts__cuda_dropped_records(void);
/* Queues a 2-D copy between b's buffers: height rows of width bytes,
 * pitches apart; false + error if it fails. */
bool ts__cuda_copy_2d(const ts_backend *b, void *dst, size_t dst_pitch, const void *src,
                      size_t src_pitch, size_t width, size_t height);
