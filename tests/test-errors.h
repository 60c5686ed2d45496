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
