/* test-errors.h — checks on the engine's pending error, shared by the
 * engine's test programs. */
#pragma once

#include <glib.h>
#include <string.h>
#include <tracescope.h>

/* Fails the test if an error is pending. */
static inline void assert_no_error(void)
{
  const ts_error *e = ts_error_peek();
  if (e)
    g_error("unexpected error: %s", e->message);
}

/* Takes the pending error and checks its message holds `fragment`. */
static inline void expect_error_containing(const char *fragment)
{
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  if (!strstr(e->message, fragment))
    g_error("error message '%s' lacks '%s'", e->message, fragment);
  ts_error_free(e);
}

/* True, with the pending error taken and the test told, when it is a
 * dataset missing from this machine (the GPU machine has none of Debian's
 * dataset packages): a walk over every seed export leaves that one out
 * instead of failing on it.  False, the error left pending, otherwise. */
static inline bool take_missing_dataset(const char *what)
{
  const ts_error *e = ts_error_peek();
  if (!e || e->code != TS_ERR_NOT_FOUND || !strstr(e->message, "/usr/share/datasets/"))
    return false;
  g_test_message("%s left out: %s", what, e->message);
  ts_error_free(ts_error_take());
  return true;
}
