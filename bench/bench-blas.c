/* bench-blas.c — the engine's OpenBLAS for the benches (bench-blas.h). */
#include "bench-blas.h"

#include <dlfcn.h>
#include <glib.h>
#include <tracescope.h>

void *bench_engine_symbol(const char *name)
{
  void *h = dlopen("libtracescope.so.0", RTLD_LAZY | RTLD_NOLOAD);
  void *f = h ? dlsym(h, name) : NULL;
  if (!f)
    g_error("the engine library (libtracescope.so.0) is not loaded or has no %s", name);
  return f;
}

bench_sgemm_fn bench_sgemm(void)
{
  static bench_sgemm_fn fn;
  if (!fn) {
    /* the engine loads it here */
    const char *(*engine_blas)(void) = (const char *(*)(void))bench_engine_symbol("ts_blas_description");
    engine_blas();
    void *h = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
    fn = h ? (bench_sgemm_fn)dlsym(h, "cblas_sgemm") : NULL;
    if (!fn)
      g_error("the engine's OpenBLAS is not loaded or has no cblas_sgemm: %s", engine_blas());
  }
  return fn;
}
