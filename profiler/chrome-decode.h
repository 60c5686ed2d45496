/* chrome-decode.h — Chrome trace events as plain records (chrome-decode.c),
 * for the importer (chrome-import.c). */
#pragma once

#include "profiler-private.h"

#include <json-glib/json-glib.h>

#define TSP_MAX_NS 9007199254740992.0 /* 2^53: beyond it times lose nanoseconds */

/* Members of a json-glib object (the file's tables), checked: an integer
 * (an integral double in range too; 0 if absent or null unless required),
 * a string (NULL if absent or not one).  k numbers the entry in errors. */
bool tsp__json_int(JsonObject *o, const char *key, int64_t *out, bool required, GError **error,
                   uint64_t k);
const char *tsp__json_str(JsonObject *o, const char *key);

enum { TSP_CAT_OP, TSP_CAT_CALL, TSP_CAT_TRACE, TSP_CAT_PHASE, TSP_CAT_DEVICE };

/* One event as the importer needs it, nothing borrowed from the parser. */
typedef struct tsp_decoded {
  char ph;            /* 'X', 'B', 'E', 'M' (thread names), 'C' ("memory"
                       * counters: device the series, n its value); 0: not kept */
  uint8_t cat;
  bool ours;          /* has args (our indexes, in a file with our tables) */
  uint64_t tid, ts, dur;
  const char *name;   /* event name; 'M': the thread's name */
  const char *device, *mode, *function, *reason, *signature;
  int64_t run, seq, parent, n, t, l, c, code;
  bool has_delta;     /* 'C': our "delta" (the change) is in code */
  uint8_t what;       /* 'C': the ts_memory_kind its counter's name says */
} tsp_decoded;

/* Streams the events text[0, len) — whole elements of a traceEvents array
 * with the commas between them — through yajl, appending one tsp_decoded
 * per element to events (ph 0 for the ones not kept), strings copied into
 * chunk; first numbers the first event in errors.  On a bad event (or bad
 * JSON) the events before it are in events and false + error is returned. */
bool tsp__decode_events(const char *text, size_t len, uint64_t first, GArray *events,
                        GStringChunk *chunk, GError **error);
