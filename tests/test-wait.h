/* test-wait.h — tests wait on a state, never for a fixed time: the main
 * loop turns until cond(data) holds, with a generous timeout only as a
 * safety net (the test fails naming what it waited for). */
#pragma once

#include <gio/gio.h>

#define TEST_WAIT_TIMEOUT_S 60

static inline gboolean test_wait_timed_out(gpointer data)
{
  *(gboolean *)data = TRUE;
  return G_SOURCE_REMOVE;
}

static inline void test_wait_for(gboolean (*cond)(gpointer), gpointer data, const char *what)
{
  gboolean timed_out = FALSE;
  guint id = g_timeout_add_seconds(TEST_WAIT_TIMEOUT_S, test_wait_timed_out, &timed_out);
  while (!cond(data) && !timed_out)
    g_main_context_iteration(NULL, TRUE);
  if (timed_out)
    g_error("timed out waiting for %s", what);
  g_source_remove(id);
}

/* An async call's result: store_result puts it in *slot (a GAsyncResult *
 * that starts NULL), wait_result turns the loop until it is there. */
static inline gboolean test_has_result(gpointer slot)
{
  return *(GAsyncResult **)slot != NULL;
}

static inline void store_result(GObject *source, GAsyncResult *res, gpointer slot)
{
  *(GAsyncResult **)slot = g_object_ref(res);
}

static inline GAsyncResult *wait_result(GAsyncResult **slot, const char *what)
{
  test_wait_for(test_has_result, slot, what);
  return *slot;
}
