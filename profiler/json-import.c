/* json-import.c — whole JSON documents, measured by the bounded scanner
 * (json-scan.c) before json-glib parses them (tracescope-json.h). */
#include "json-scan.h"
#include "tracescope-json.h"

/* The scanned document (all of s's text) parsed. */
static JsonNode *parse(tsp_scan *s, GError **error)
{
  if (!tsp__scan_value(s, error, "the document") || !tsp__scan_ws(s, error, "the document"))
    return NULL;
  char c;
  if (tsp__scan_peek(s, &c)) {
    tsp__fail(error, "text after the document at byte %zu", s->pos);
    return NULL;
  }
  if (s->error) {
    tsp__scan_ended(s, error, "the document");
    return NULL;
  }
  g_autoptr(JsonParser) p = json_parser_new_immutable();
  GError *e = NULL;
  if (!json_parser_load_from_data(p, s->len ? s->buf : "", (gssize)s->len, &e)) {
    tsp__fail(error, "%s", e->message);
    g_error_free(e);
    return NULL;
  }
  JsonNode *root = json_parser_steal_root(p);
  if (!root) /* json-glib reads comments: "//" is a document with nothing in it */
    tsp__fail(error, "no JSON value in the document");
  return root;
}

JsonNode *tsp_json_parse(const char *text, size_t len, const tsp_read_limits *limits,
                         GError **error)
{
  tsp_scan s;
  JsonNode *root = tsp__scan_init_text(&s, text, len, limits, error) ? parse(&s, error) : NULL;
  tsp__scan_clear(&s);
  return root;
}

JsonNode *tsp_json_load(const char *path, const tsp_read_limits *limits, GError **error)
{
  tsp_scan s;
  if (!tsp__scan_init_file(&s, path, limits, error))
    return NULL;
  GError *e = NULL;
  JsonNode *root = parse(&s, &e);
  tsp__scan_clear(&s);
  if (e && e->domain == TSP_ERROR && e->code == TSP_ERROR_IO)
    g_propagate_error(error, e); /* it names the file */
  else if (e)
    g_propagate_prefixed_error(error, e, "%s: ", path);
  return root;
}
