/* fuzz-graph-serial.c — the reader of serialized graphs
 * (engine/io/graph_serial.c) on arbitrary bytes.
 *
 * The input is the whole serialized form.  Reading gives a graph or a
 * clean format error; a graph read is printed as text and DOT, serialized
 * again, and must read back from those bytes to the same text and the
 * same bytes. */
#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* g serialized (a finding if it cannot be: it was read from bytes). */
static void *serialized(const ts_graph *g, size_t *size)
{
  void *bytes = ts_graph_serialize(g, size);
  if (!bytes)
    fuzz_finding("a graph read back does not serialize: %s",
                 ts_error_peek() ? ts_error_peek()->message : "(no error)");
  return bytes;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_begin_input();
  ts_graph *g = ts_graph_deserialize(data, size);
  if (!g) {
    if (!ts_failed() || ts_error_peek()->code != TS_ERR_FORMAT)
      fuzz_finding("ts_graph_deserialize failed without a format error");
    fuzz_expect_error("ts_graph_deserialize");
    return 0;
  }
  if (ts_failed())
    fuzz_finding("ts_graph_deserialize returned a graph but left an error: %s",
                 ts_error_peek()->message);
  char *text = ts_graph_to_text(g), *dot = ts_graph_to_dot(g);
  size_t n_bytes, n_again;
  void *bytes = serialized(g, &n_bytes);
  ts_graph *back = ts_graph_deserialize(bytes, n_bytes);
  if (!back)
    fuzz_finding("a graph's serialized form does not read back: %s", ts_error_peek()->message);
  char *back_text = ts_graph_to_text(back);
  if (strcmp(text, back_text) != 0)
    fuzz_finding("a graph changed its text in a serialize/deserialize round trip");
  void *again = serialized(back, &n_again);
  if (n_again != n_bytes || memcmp(again, bytes, n_bytes) != 0)
    fuzz_finding("a graph read back serializes to other bytes");
  free(again);
  free(back_text);
  ts_graph_free(back);
  free(bytes);
  free(dot);
  free(text);
  ts_graph_free(g);
  return 0;
}
