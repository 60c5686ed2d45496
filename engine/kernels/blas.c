/* kernels/blas.c — OpenBLAS, loaded by the engine itself so that it runs
 * the core our cpuid says the CPU has.  OpenBLAS picks its core once, in
 * its constructor, from its own table of CPU models, and falls back to
 * SSE3 Prescott kernels on models it does not know; it reads
 * OPENBLAS_CORETYPE only then.  So the engine does not link it: on first
 * use it sets OPENBLAS_CORETYPE (unless the user did) to the core for our
 * features, dlopens the library and calls it through pointers.  A process
 * that already loaded OpenBLAS (a program linking it) keeps its core, which
 * ts_blas_description() then reports. */
#include "kernels.h"

#include <cblas.h>
#include <dlfcn.h>
#include <glib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../tracescope.h"

#define OPENBLAS_SONAME "libopenblas.so.0"

typedef void (*sgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint,
                         blasint, blasint, float, const float *, blasint, const float *, blasint,
                         float, float *, blasint);
typedef void (*dgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint,
                         blasint, blasint, double, const double *, blasint, const double *,
                         blasint, double, double *, blasint);

static struct {
  sgemm_fn sgemm;
  dgemm_fn dgemm;
  char *(*corename)(void);
  int (*get_threads)(void);
  void (*set_threads)(int);
  char how[160]; /* how the core was chosen */
} blas;

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void load_blas(void)
{
  const char *asked = NULL; /* the core we set OPENBLAS_CORETYPE to */
  void *h = dlopen(OPENBLAS_SONAME, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (h) {
    snprintf(blas.how, sizeof blas.how, "loaded by the program before the engine: its own choice");
  } else if (getenv("OPENBLAS_CORETYPE")) {
    snprintf(blas.how, sizeof blas.how, "OPENBLAS_CORETYPE=%s set by the user", getenv("OPENBLAS_CORETYPE"));
    h = dlopen(OPENBLAS_SONAME, RTLD_LAZY | RTLD_LOCAL);
  } else {
    const char *core = asked = ts__blas_core_for(ts__cpu());
    if (core) {
      /* read by OpenBLAS's constructor only; unset after so children pick their own */
      setenv("OPENBLAS_CORETYPE", core, 1);
      snprintf(blas.how, sizeof blas.how, "OPENBLAS_CORETYPE=%s from cpuid", core);
    } else {
      snprintf(blas.how, sizeof blas.how, "no AVX2+FMA: OpenBLAS's own choice");
    }
    h = dlopen(OPENBLAS_SONAME, RTLD_LAZY | RTLD_LOCAL);
    if (core)
      unsetenv("OPENBLAS_CORETYPE");
  }
  if (!h) {
    snprintf(blas.how, sizeof blas.how, "not loaded (%s): own kernels only", dlerror());
    return;
  }
  blas.sgemm = (sgemm_fn)dlsym(h, "cblas_sgemm");
  blas.dgemm = (dgemm_fn)dlsym(h, "cblas_dgemm");
  blas.corename = (char *(*)(void))dlsym(h, "openblas_get_corename");
  blas.get_threads = (int (*)(void))dlsym(h, "openblas_get_num_threads");
  blas.set_threads = (void (*)(int))dlsym(h, "openblas_set_num_threads");
  /* OpenBLAS falls back to its own guess on a name it does not take: say so */
  const char *got = blas.corename ? blas.corename() : NULL;
  if (asked && got && g_ascii_strcasecmp(asked, got) != 0)
    snprintf(blas.how, sizeof blas.how, "OPENBLAS_CORETYPE=%s from cpuid not accepted: OpenBLAS's own choice",
             asked);
  if (!blas.sgemm || !blas.dgemm) {
    snprintf(blas.how, sizeof blas.how, "%s lacks cblas_sgemm/cblas_dgemm: own kernels only", OPENBLAS_SONAME);
    blas.sgemm = NULL;
    blas.dgemm = NULL;
  }
}

bool ts__blas_available(void)
{
  pthread_once(&blas_once, load_blas);
  return blas.sgemm != NULL;
}

static enum CBLAS_TRANSPOSE trans(bool t)
{
  return t ? CblasTrans : CblasNoTrans;
}

void ts__blas_sgemm(bool ta, bool tb, int m, int n, int k, const float *a, int lda, const float *b,
                    int ldb, float beta, float *c, int ldc)
{
  blas.sgemm(CblasRowMajor, trans(ta), trans(tb), m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

void ts__blas_dgemm(bool ta, bool tb, int m, int n, int k, const double *a, int lda, const double *b,
                    int ldb, double beta, double *c, int ldc)
{
  blas.dgemm(CblasRowMajor, trans(ta), trans(tb), m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

int ts__blas_threads(void)
{
  return ts__blas_available() && blas.get_threads ? blas.get_threads() : 1;
}

void ts__blas_set_threads(int n)
{
  if (ts__blas_available() && blas.set_threads)
    blas.set_threads(n);
}

static char blas_text[256];
static pthread_once_t text_once = PTHREAD_ONCE_INIT;

static void describe_blas(void)
{
  if (!ts__blas_available())
    snprintf(blas_text, sizeof blas_text, "OpenBLAS %s", blas.how);
  else
    snprintf(blas_text, sizeof blas_text, "OpenBLAS core %s (%s)",
             blas.corename ? blas.corename() : "unknown", blas.how);
}

const char *ts_blas_description(void)
{
  pthread_once(&text_once, describe_blas);
  return blas_text;
}
