/* tracescope-json.h — the one way Tracescope reads a JSON document whole
 * (a saved session, a trace's tables): the text is measured first, its
 * nesting, strings and size against tsp_read_limits, without recursion,
 * and only then parsed by json-glib, so that a hostile file gives an
 * error naming the limit, never a stack overflow.  (A trace's events are
 * streamed, not read whole: tsp_chrome_import.)  json-import.c. */
#pragma once

#include <json-glib/json-glib.h>

#include "tracescope-profiler.h"

G_BEGIN_DECLS

/* The document in text[0, len), or NULL + TSP_ERROR_LIMIT/FORMAT; owned
 * (json_node_unref). */
JsonNode *tsp_json_parse(const char *text, size_t len, const tsp_read_limits *limits,
                         GError **error);
/* The document in a file (plain or gzipped), or NULL + an error naming
 * the file (TSP_ERROR_IO/LIMIT/FORMAT). */
JsonNode *tsp_json_load(const char *path, const tsp_read_limits *limits, GError **error);

G_END_DECLS
