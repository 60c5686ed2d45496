/* fuzz-common.h — what every fuzz target checks after an engine call. */
#pragma once

#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracescope.h"

/* A finding: say what and abort, so libFuzzer (or the corpus test) fails. */
static inline void __attribute__((noreturn, format(printf, 1, 2))) fuzz_finding(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("FUZZ FINDING: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

/* Public functions refuse programming errors (a negative count, a NULL
 * callback) with g_return_val_if_fail, as STYLE.md has it: a CRITICAL
 * message instead of an engine error.  Those count as clean refusals. */
static int fuzz_criticals;

static inline void fuzz_log_handler(const char *domain, GLogLevelFlags level, const char *message,
                                    void *user_data)
{
  if (level & G_LOG_LEVEL_CRITICAL)
    fuzz_criticals++;
  else if (level & (G_LOG_LEVEL_ERROR | G_LOG_FLAG_FATAL))
    fuzz_finding("%s: %s", domain ? domain : "log", message);
}

/* Call at the start of every input. */
static inline void fuzz_begin_input(void)
{
  static bool installed;
  if (!installed) {
    g_log_set_default_handler(fuzz_log_handler, NULL);
    installed = true;
  }
  fuzz_criticals = 0;
}

/* A call failed: there must be an error with a message (or a refusal by
 * g_return_val_if_fail).  Takes it. */
static inline void fuzz_expect_error(const char *what)
{
  if (!ts_failed() && fuzz_criticals > 0) {
    fuzz_criticals = 0;
    return;
  }
  if (!ts_failed())
    fuzz_finding("%s failed without recording an error", what);
  ts_error *e = ts_error_take();
  if (!e || !e->message || !e->message[0])
    fuzz_finding("%s failed with an error that has no message", what);
  ts_error_free(e);
}

/* FUZZ_TRACE=1 in the environment: one line per checked call (to read a
 * reproducer). */
static inline void fuzz_trace(const char *what, const ts_tensor *t)
{
  static int on = -1;
  if (on < 0)
    on = getenv("FUZZ_TRACE") != NULL;
  if (!on)
    return;
  if (!t) {
    fprintf(stderr, "trace: %s -> error: %s\n", what,
            ts_error_peek() ? ts_error_peek()->message : "(none)");
    return;
  }
  char *s = ts_shape_dtype_string(ts_tensor_dtype(t), ts_tensor_shape(t));
  fprintf(stderr, "trace: %s -> %s\n", what, s);
  free(s);
}

/* A result or a clean error: t non-NULL with no error pending, or NULL
 * with one (taken).  Returns t. */
static inline ts_tensor *fuzz_check(ts_tensor *t, const char *what)
{
  fuzz_trace(what, t);
  if (!t) {
    fuzz_expect_error(what);
    return NULL;
  }
  if (ts_failed())
    fuzz_finding("%s returned a tensor but left an error: %s", what, ts_error_peek()->message);
  fuzz_criticals = 0;
  return t;
}

/* Same for calls that return a bool. */
static inline bool fuzz_check_ok(bool ok, const char *what)
{
  if (!ok)
    fuzz_expect_error(what);
  else if (ts_failed())
    fuzz_finding("%s succeeded but left an error: %s", what, ts_error_peek()->message);
  else
    fuzz_criticals = 0;
  return ok;
}

/* Formats and reads a result the way a user would look at it.  Printing
 * is NumPy's exact float formatting: a tensor whose dims are all short is
 * printed whole (5^7 doubles take 0.35 s in a release build and over 10 s
 * instrumented), so only results of up to FUZZ_PRINT_MAX elements print. */
#define FUZZ_PRINT_MAX 4096
static inline void fuzz_inspect(const ts_tensor *t)
{
  if (ts_tensor_size(t) <= FUZZ_PRINT_MAX) {
    char *s = ts_tensor_to_string(t);
    free(s);
  }
  if (ts_failed())
    ts_error_clear();
  int64_t n = ts_tensor_size(t);
  if (ts_tensor_data(t) && n > 0) {
    double sum = ts_tensor_get_f64(t, 0) + ts_tensor_get_f64(t, n - 1);
    (void)sum;
  }
}

/* Specs that ask for more elements than this are left out, unless they
 * ask for more bytes than the engine allocates (refused at once): they
 * would be made, and be slow or out of memory for nothing but their size. */
#define FUZZ_MAX_ELEMENTS ((int64_t)1 << 22)
#define FUZZ_ALWAYS_REFUSED ((int64_t)1 << 36)

/* The element count a "DTYPE[d0,d1,...]" prefix asks for (saturating), or 0. */
static inline int64_t fuzz_spec_elements(const char *spec)
{
  const char *open = strchr(spec, '['), *close = open ? strchr(open, ']') : NULL;
  if (!open || !close)
    return 0;
  int64_t n = 1;
  for (const char *p = open + 1; p < close;) {
    char *end;
    long long d = strtoll(p, &end, 10);
    if (end == p)
      return 0;
    if (d > 0 && __builtin_mul_overflow(n, (int64_t)d, &n))
      return INT64_MAX;
    if (d == 0)
      n = 0;
    p = strchr(end, ',');
    if (!p || p > close)
      break;
    p++;
  }
  return n;
}

/* A spec (or a host integer: a size a module may use) too big to try. */
static inline bool fuzz_spec_too_big(const char *spec)
{
  char *end;
  long long k = strtoll(spec, &end, 10);
  int64_t n = end != spec && *end == '\0' ? (int64_t)llabs(k) : fuzz_spec_elements(spec);
  return n > FUZZ_MAX_ELEMENTS && n < FUZZ_ALWAYS_REFUSED;
}
