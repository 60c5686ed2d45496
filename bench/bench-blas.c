/* bench-blas.c — the engine's OpenBLAS for the benches (bench-blas.h). */
#include "bench-blas.h"

#include <dlfcn.h>
#include <glib.h>
#include <tracescope.h>

bench_sgemm_fn bench_sgemm(void)
{
  static bench_sgemm_fn fn;
  if (!fn) {
    ts_blas_description(); /* the engine loads it here */
    void *h = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
    fn = h ? (bench_sgemm_fn)dlsym(h, "cblas_sgemm") : NULL;
    if (!fn)
      g_error("the engine's OpenBLAS is not loaded or has no cblas_sgemm: %s",
              ts_blas_description());
  }
  return fn;
}
