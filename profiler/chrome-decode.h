/* chrome-decode.h — Chrome trace events as plain records (chrome-decode.c),
 * for the importer (chrome-import.c). */
#pragma once

#include "profiler-private.h"

#include <json-glib/json-glib.h>

#define TSP_MAX_NS 9007199254740992.0 /* 2^53: beyond it times lose nanoseconds */

/* Sets a TSP_ERROR_FORMAT error; returns false. */
bool tsp__fail(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* Members of an event object, checked: an integer (an integral double in
 * range too), a time in µs as ns in [0, 2^53], a string (NULL if absent or
 * not one).  k numbers the event in errors. */
bool tsp__json_int(JsonObject *o, const char *key, int64_t *out, bool required, GError **error,
                   uint64_t k);
bool tsp__json_time(JsonObject *o, const char *key, uint64_t *out, bool required, GError **error,
                    uint64_t k);
const char *tsp__json_str(JsonObject *o, const char *key);

enum { TSP_CAT_OP, TSP_CAT_CALL, TSP_CAT_TRACE };

/* One event as the importer needs it, nothing borrowed from json-glib. */
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
} tsp_decoded;

/* Decodes event k into d, its strings copied into chunk; false + error. */
bool tsp__decode_event(JsonNode *node, uint64_t k, GStringChunk *chunk, tsp_decoded *d,
                       GError **error);
