/* bench-blas.h — the OpenBLAS the engine loaded, for benches that time a
 * library GEMM beside ours.  Linking OpenBLAS into a bench would load it
 * before the engine does, with the library's own guess of the core instead
 * of the one the engine picks by cpuid (engine/kernels/blas.c). */
#pragma once

typedef void (*bench_sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
                               const float *a, int lda, const float *b, int ldb, float beta,
                               float *c, int ldc);

/* The engine's cblas_sgemm (loading OpenBLAS as the engine does); aborts
 * with a message when the library has none. */
bench_sgemm_fn bench_sgemm(void);

/* The engine library's own `const char *name(void)`-like function, for a
 * bench that links the kernels' static library too (its copies of
 * ts_blas_description, ts_kernel_choices... would answer for themselves,
 * not for the engine that ran the workloads); aborts when missing. */
void *bench_engine_symbol(const char *name);
