/* test-serial-check.h — the graph format agrees with the tracer: with
 * TS_TEST_SERIAL_CHECK set in the environment, every graph the test traces
 * is serialized, read back and serialized again, which must give the same
 * bytes; a graph the tracer made that the reader refuses fails the test at
 * once with the reader's error.  Its optimized form must read back too (not
 * byte for byte: origins in the traced graph are dropped, docs/graph-format.md).  A listener sees
 * the traces, and graph calls run one op at a time while one listens, so
 * this runs as a variant of its own (tests/meson.build: "-serial"). */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>

static inline void serial_check_graph(const ts_graph *g, const char *function, bool exact)
{
  size_t n = 0, n2 = 0;
  void *bytes = ts_graph_serialize(g, &n);
  if (!bytes) { /* a clean refusal to write (a name that is not UTF-8: /graph-serial/unwritable) */
    ts_error_free(ts_error_take());
    return;
  }
  ts_graph *back = ts_graph_deserialize(bytes, n);
  if (!back)
    g_error("%s: the graph format refuses a traced graph: %s", function, ts_error_peek()->message);
  void *again = ts_graph_serialize(back, &n2);
  if (!again || (exact && (n2 != n || memcmp(bytes, again, n) != 0)))
    g_error("%s: the graph read back (%s) serializes to other bytes", function, ts_graph_name(g));
  free(again);
  ts_graph_free(back);
  free(bytes);
}

static inline void serial_check_on_trace(const ts_event *ev, void *user_data)
{
  const ts_concrete *cf = ev->trace.concrete;
  if (!cf)
    return; /* tracing failed */
  serial_check_graph(ts_concrete_graph(cf), ev->trace.function_name, true);
  serial_check_graph(ts_concrete_optimized_graph(cf), ev->trace.function_name, false);
}

/* Call after g_test_init; checks every trace of the process when asked. */
static inline void serial_check_install(void)
{
  if (g_getenv("TS_TEST_SERIAL_CHECK"))
    ts_listener_add(TS_EVENT_MASK(TS_EVENT_TRACE), serial_check_on_trace, NULL);
}
