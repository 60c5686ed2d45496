/* fuzz-chrome-import.c — the profiler's Chrome trace importer
 * (profiler/chrome-import.c, chrome-decode.c) on arbitrary files.
 *
 * The input is the file's bytes: tsp_chrome_import_data gives a session or
 * a TSP_ERROR with a message, never both, never neither.  A session read
 * back has its statistics computed every way, and it is a fixed point of
 * the round trip: exported, imported and exported again, the bytes are
 * the same. */
#include <stdint.h>
#include <string.h>
#include <tracescope-profiler.h>

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_begin_input();
  GError *error = NULL;
  tsp_session *s = tsp_chrome_import_data((const char *)data, size, &error);
  if (!s) {
    if (!error || error->domain != TSP_ERROR || !error->message || !error->message[0])
      fuzz_finding("import failed without a TSP_ERROR with a message");
    g_error_free(error);
    return 0;
  }
  if (error)
    fuzz_finding("import gave a session and an error: %s", error->message);
  static const tsp_group_by bys[] = { TSP_BY_OP, TSP_BY_NODE, TSP_BY_LINE, TSP_BY_SCOPE };
  for (size_t i = 0; i < G_N_ELEMENTS(bys); i++)
    tsp_stats_free(tsp_stats_compute(s, bys[i], &TSP_FILTER_ALL));
  size_t len;
  char *first = tsp_chrome_export_string(s, &len);
  tsp_session *back = tsp_chrome_import_data(first, len, &error);
  if (!back)
    fuzz_finding("our own export does not import: %s", error->message);
  size_t len2;
  char *second = tsp_chrome_export_string(back, &len2);
  if (len != len2 || memcmp(first, second, len) != 0)
    fuzz_finding("export, import, export: the bytes differ (%zu and %zu bytes)", len, len2);
  g_free(second);
  g_free(first);
  tsp_session_free(back);
  tsp_session_free(s);
  return 0;
}
