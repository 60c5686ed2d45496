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
/* Activity records CUPTI dropped for want of buffers, since start-up. */
uint64_t ts__cuda_dropped_records(void);
/* Queues a 2-D copy between b's buffers: height rows of width bytes,
 * pitches apart; false + error if it fails. */
bool ts__cuda_copy_2d(const ts_backend *b, void *dst, size_t dst_pitch, const void *src,
                      size_t src_pitch, size_t width, size_t height);
