/* chrome-decode.c — one Chrome trace event, checked and copied out of
 * json-glib's document into a plain record.  Runs on the importer's parsing
 * threads: the document is freed on the thread that made it. */
#include "chrome-decode.h"

#include <math.h>
#include <string.h>

bool tsp__fail(GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, TSP_ERROR, TSP_ERROR_FORMAT, msg);
  g_free(msg);
  return false;
}

bool tsp__json_int(JsonObject *o, const char *key, int64_t *out, bool required, GError **error,
                   uint64_t k)
{
  JsonNode *n = json_object_get_member(o, key);
  if (!n || JSON_NODE_HOLDS_NULL(n)) {
    if (required)
      return tsp__fail(error, "event %" G_GUINT64_FORMAT ": no \"%s\"", k, key);
    *out = 0;
    return true;
  }
  if (!JSON_NODE_HOLDS_VALUE(n))
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" is not a number", k, key);
  GType t = json_node_get_value_type(n);
  double d;
  if (t == G_TYPE_INT64) {
    *out = json_node_get_int(n);
    return true;
  }
  if (t != G_TYPE_DOUBLE)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" is not a number", k, key);
  d = json_node_get_double(n);
  if (!(d >= -TSP_MAX_NS && d <= TSP_MAX_NS) || d != floor(d))
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" is not an integer in range", k, key);
  *out = (int64_t)d;
  return true;
}

/* A time in µs ("ts", "dur") as ns. */
bool tsp__json_time(JsonObject *o, const char *key, uint64_t *out, bool required, GError **error,
                    uint64_t k)
{
  JsonNode *n = json_object_get_member(o, key);
  if (!n) {
    *out = 0;
    return required ? tsp__fail(error, "event %" G_GUINT64_FORMAT ": no \"%s\"", k, key) : true;
  }
  GType t = JSON_NODE_HOLDS_VALUE(n) ? json_node_get_value_type(n) : G_TYPE_INVALID;
  if (t != G_TYPE_INT64 && t != G_TYPE_DOUBLE)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" is not a number", k, key);
  double us = t == G_TYPE_INT64 ? (double)json_node_get_int(n) : json_node_get_double(n);
  double ns = round(us * 1000.0);
  if (!(ns >= 0 && ns <= TSP_MAX_NS))
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" %g µs is out of range", k, key, us);
  *out = (uint64_t)ns;
  return true;
}

const char *tsp__json_str(JsonObject *o, const char *key)
{
  JsonNode *n = o ? json_object_get_member(o, key) : NULL;
  return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING
           ? json_node_get_string(n)
           : NULL;
}

/* ---- one event, decoded on a parsing thread ------------------------------------------
 * Everything json-glib gives is checked and copied out there (the
 * document is freed on the thread that made it); the reader applies the
 * decoded events in file order. */

/* A string member copied into chunk, or NULL. */
static const char *copy_str(GStringChunk *chunk, JsonObject *o, const char *key)
{
  const char *v = tsp__json_str(o, key);
  return v ? g_string_chunk_insert_const(chunk, v) : NULL;
}

/* A "memory" counter: its first series is the device, its value the live
 * bytes; other counters are not kept. */
static bool decode_memory(JsonObject *ev, JsonObject *args, const char *name, uint64_t k,
                          GStringChunk *chunk, tsp_decoded *d, GError **error)
{
  if (!name || strcmp(name, "memory") != 0)
    return true;
  GList *members = args ? json_object_get_members(args) : NULL;
  if (!members)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": memory counter without a value", k);
  const char *series = members->data;
  g_list_free(members);
  int64_t tid;
  if (!tsp__json_int(ev, "tid", &tid, false, error, k) ||
      !tsp__json_time(ev, "ts", &d->ts, true, error, k) ||
      !tsp__json_int(args, series, &d->n, true, error, k) ||
      !tsp__json_int(ev, "delta", &d->code, false, error, k))
    return false;
  d->has_delta = json_object_has_member(ev, "delta");
  if (d->n < 0)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": memory counter \"%s\" is negative", k,
                     series);
  d->ph = 'C';
  d->tid = (uint64_t)tid;
  d->device = g_string_chunk_insert_const(chunk, series);
  return true;
}

bool tsp__decode_event(JsonNode *node, uint64_t k, GStringChunk *chunk, tsp_decoded *d,
                       GError **error)
{
  *d = (tsp_decoded){ 0 };
  if (!JSON_NODE_HOLDS_OBJECT(node))
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": not an object", k);
  JsonObject *ev = json_node_get_object(node);
  const char *ph = tsp__json_str(ev, "ph");
  if (!ph)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": no \"ph\" string", k);
  JsonNode *an = json_object_get_member(ev, "args");
  JsonObject *args = an && JSON_NODE_HOLDS_OBJECT(an) ? json_node_get_object(an) : NULL;
  const char *name = tsp__json_str(ev, "name");
  int64_t tid;
  if (strcmp(ph, "M") == 0) {
    if (!name || strcmp(name, "thread_name") != 0)
      return true;
    if (!tsp__json_int(ev, "tid", &tid, true, error, k))
      return false;
    d->ph = 'M';
    d->tid = (uint64_t)tid;
    d->name = copy_str(chunk, args, "name");
    return true;
  }
  if (strcmp(ph, "C") == 0)
    return decode_memory(ev, args, name, k, chunk, d, error);
  if (strcmp(ph, "X") != 0 && strcmp(ph, "B") != 0 && strcmp(ph, "E") != 0)
    return true; /* instants, other counters, flows, ...: not kept */
  d->ph = ph[0];
  if (!tsp__json_int(ev, "tid", &tid, false, error, k) || !tsp__json_time(ev, "ts", &d->ts, true, error, k) ||
      (d->ph == 'X' && !tsp__json_time(ev, "dur", &d->dur, false, error, k)))
    return false;
  d->tid = (uint64_t)tid;
  if (d->ph == 'E')
    return true; /* what it ends names the event */
  if (!name)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": no \"name\" string", k);
  d->name = g_string_chunk_insert_const(chunk, name);
  const char *cat = tsp__json_str(ev, "cat");
  d->cat = cat && strcmp(cat, "call") == 0 ? TSP_CAT_CALL : cat && strcmp(cat, "trace") == 0 ? TSP_CAT_TRACE : TSP_CAT_OP;
  d->ours = args != NULL; /* and the file has our tables: see add_complete */
  if (!d->ours)
    return true;
  d->device = copy_str(chunk, args, "device");
  d->mode = copy_str(chunk, args, "mode");
  d->function = copy_str(chunk, args, "function");
  d->reason = copy_str(chunk, args, "reason");
  d->signature = copy_str(chunk, args, "signature");
  return tsp__json_int(args, "run", &d->run, false, error, k) && tsp__json_int(args, "seq", &d->seq, false, error, k) &&
         tsp__json_int(args, "parent_seq", &d->parent, false, error, k) &&
         tsp__json_int(args, "n", &d->n, false, error, k) && tsp__json_int(args, "t", &d->t, false, error, k) &&
         tsp__json_int(args, "l", &d->l, false, error, k) && tsp__json_int(args, "c", &d->c, false, error, k) &&
         tsp__json_int(args, "reason_code", &d->code, false, error, k);
}

