/* kernels/blas.c — OpenBLAS, loaded by the engine itself so that it runs
 * the core our cpuid says the CPU has.  OpenBLAS picks its core once, in
 * its constructor, from its own table of CPU models, and falls back to
 * SSE3 Prescott kernels on models it does not know; it reads
 * OPENBLAS_CORETYPE only then.  So the engine does not link it: on first
 * use it sets OPENBLAS_CORETYPE (unless the user did) to the core for our
 * features, dlopens the library and calls it through pointers.  A process
 * that already loaded OpenBLAS (a program linking it) keeps its core, which
 * ts_blas_description() then reports.  The engine's pool (pool.c) sets
 * OpenBLAS's thread count through ts__blas_set_threads and loads it at
 * start-up, asking for its thread count.  TRACESCOPE_BLAS=off keeps it
 * out: our kernels only (results that do not depend on OpenBLAS's choices
 * of method by size, e.g. to compare thread counts bit for bit). */
#include "kernels.h"

#include <cblas.h>
#include <dlfcn.h>
#include <glib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* OpenBLAS's idle threads spin OPENBLAS_THREAD_TIMEOUT after a threaded
 * call, by default 2^28 cycles (a tenth of a second taking cores from the
 * engine's pool, pool.c); unless the user chose, about as long as the
 * pool's workers spin.  OpenBLAS reads it as it starts its threads. */
#define BLAS_SPIN_TIMEOUT "17" /* 2^17 cycles: some 50 µs */

/* Sets name=value for OpenBLAS's constructor unless the user set it;
 * true if it did (unset again after the load, so children choose theirs). */
static bool set_for_load(const char *name, const char *value)
{
  if (!value || getenv(name))
    return false;
  setenv(name, value, 1);
  return true;
}

/* OpenBLAS already loaded (a program linking it): its threads are told the
 * shorter spin and restarted by the next threaded call, through two
 * functions its pthread build exports (a BLAS without them keeps its own). */
static void shorten_spin_of_loaded(void *h)
{
  void (*read_env)(void) = (void (*)(void))dlsym(h, "openblas_read_env");
  int (*shutdown)(void) = (int (*)(void))dlsym(h, "blas_thread_shutdown_");
  if (!read_env || !shutdown || !set_for_load("OPENBLAS_THREAD_TIMEOUT", BLAS_SPIN_TIMEOUT))
    return;
  read_env();
  shutdown();
  unsetenv("OPENBLAS_THREAD_TIMEOUT");
}

static void load_blas(void)
{
  const char *asked = NULL; /* the core we set OPENBLAS_CORETYPE to */
  const char *off = getenv("TRACESCOPE_BLAS");
  if (off && strcmp(off, "off") == 0) { /* every GEMM and convolution on our kernels */
    snprintf(blas.how, sizeof blas.how, "off (TRACESCOPE_BLAS=off): own kernels only");
    return;
  }
  void *h = dlopen(OPENBLAS_SONAME, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (h) {
    snprintf(blas.how, sizeof blas.how, "loaded by the program before the engine: its own choice");
    shorten_spin_of_loaded(h);
  } else {
    if (getenv("OPENBLAS_CORETYPE"))
      snprintf(blas.how, sizeof blas.how, "OPENBLAS_CORETYPE=%s set by the user", getenv("OPENBLAS_CORETYPE"));
    else if ((asked = ts__blas_core_for(ts__cpu())))
      snprintf(blas.how, sizeof blas.how, "OPENBLAS_CORETYPE=%s from cpuid", asked);
    else
      snprintf(blas.how, sizeof blas.how, "no AVX2+FMA: OpenBLAS's own choice");
    /* both read by OpenBLAS's constructor only */
    bool core = set_for_load("OPENBLAS_CORETYPE", asked);
    bool spin = set_for_load("OPENBLAS_THREAD_TIMEOUT", BLAS_SPIN_TIMEOUT);
    h = dlopen(OPENBLAS_SONAME, RTLD_LAZY | RTLD_LOCAL);
    if (core)
      unsetenv("OPENBLAS_CORETYPE");
    if (spin)
      unsetenv("OPENBLAS_THREAD_TIMEOUT");
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
