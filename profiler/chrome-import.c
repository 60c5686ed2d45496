/* chrome-import.c — Chrome trace-event JSON (ours or another tool's) into
 * a session.  A small scanner finds the top-level members and the events'
 * boundaries (checking nesting and truncation, so that json-glib never
 * sees a document that could exhaust its stack); json-glib parses the
 * tables and the events, a batch at a time, so memory stays near the
 * file's size.  Anything wrong gives an error naming what and where. */
#include "profiler-private.h"

#include <errno.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include <zlib.h>

#define MAX_DEPTH 64
#define BATCH 4096
#define MAX_FILE ((guint)1 << 31) /* GByteArray counts in guint */
#define MAX_NS 9007199254740992.0 /* 2^53: beyond it times lose nanoseconds */

static bool fail(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool fail(GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, TSP_ERROR, TSP_ERROR_FORMAT, msg);
  g_free(msg);
  return false;
}

/* ---- the scanner ------------------------------------------------------------------ */

typedef struct scan {
  const char *p, *end;
} scan;

static void skip_ws(scan *s)
{
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
    s->p++;
}

static bool skip_string(scan *s)
{
  for (s->p++; s->p < s->end; s->p++) {
    if (*s->p == '\\')
      s->p++;
    else if (*s->p == '"')
      return s->p++, true;
  }
  return false;
}

/* Past one value, checking nesting only (json-glib checks the rest). */
static bool skip_value(scan *s, GError **error, const char *where)
{
  int depth = 0;
  skip_ws(s);
  const char *from = s->p;
  while (s->p < s->end) {
    char c = *s->p;
    if (c == '"') {
      if (!skip_string(s))
        return fail(error, "%s: the file ends inside a string (truncated?)", where);
      if (depth == 0)
        return true;
      continue;
    }
    if (c == '{' || c == '[') {
      if (++depth > MAX_DEPTH)
        return fail(error, "%s: nested more than %d deep", where, MAX_DEPTH);
    } else if (c == '}' || c == ']') {
      if (depth == 0)
        return true; /* a scalar ended by its container */
      if (--depth == 0)
        return s->p++, true;
    } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
      return true;
    }
    s->p++;
  }
  if (depth > 0 || s->p == from)
    return fail(error, "%s: the file ends early (truncated?)", where);
  return true;
}

/* ---- reading -------------------------------------------------------------------------- */

typedef struct reader {
  tsp_session *s;
  uint64_t base;
  bool ours;                /* the file has our tables */
  GArray *loc_map, *concrete_map; /* file index -> session index */
  GHashTable *threads;      /* tid -> thread index + 1 */
  GHashTable *other_ops;    /* op name -> node index (names the engine lacks) */
  GHashTable *open;         /* tid -> GArray of open "B" events */
  uint64_t n;               /* events read */
} reader;

static bool get_int(JsonObject *o, const char *key, int64_t *out, bool required, GError **error,
                    uint64_t k)
{
  JsonNode *n = json_object_get_member(o, key);
  if (!n || JSON_NODE_HOLDS_NULL(n)) {
    if (required)
      return fail(error, "event %" G_GUINT64_FORMAT ": no \"%s\"", k, key);
    *out = 0;
    return true;
  }
  if (!JSON_NODE_HOLDS_VALUE(n))
    return fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" is not a number", k, key);
  GType t = json_node_get_value_type(n);
  double d;
  if (t == G_TYPE_INT64) {
    *out = json_node_get_int(n);
    return true;
  }
  if (t != G_TYPE_DOUBLE)
    return fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" is not a number", k, key);
  d = json_node_get_double(n);
  if (!(d >= -MAX_NS && d <= MAX_NS) || d != floor(d))
    return fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" is not an integer in range", k, key);
  *out = (int64_t)d;
  return true;
}

/* A time in µs ("ts", "dur") as ns. */
static bool get_time(JsonObject *o, const char *key, uint64_t *out, bool required,
                     GError **error, uint64_t k)
{
  JsonNode *n = json_object_get_member(o, key);
  if (!n) {
    *out = 0;
    return required ? fail(error, "event %" G_GUINT64_FORMAT ": no \"%s\"", k, key) : true;
  }
  GType t = JSON_NODE_HOLDS_VALUE(n) ? json_node_get_value_type(n) : G_TYPE_INVALID;
  if (t != G_TYPE_INT64 && t != G_TYPE_DOUBLE)
    return fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" is not a number", k, key);
  double us = t == G_TYPE_INT64 ? (double)json_node_get_int(n) : json_node_get_double(n);
  double ns = round(us * 1000.0);
  if (!(ns >= 0 && ns <= MAX_NS))
    return fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" %g µs is out of range", k, key, us);
  *out = (uint64_t)ns;
  return true;
}

static const char *get_str(JsonObject *o, const char *key)
{
  JsonNode *n = o ? json_object_get_member(o, key) : NULL;
  return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING
           ? json_node_get_string(n)
           : NULL;
}

static int thread_of(reader *r, uint64_t tid, const char *name)
{
  gpointer v = g_hash_table_lookup(r->threads, &tid);
  if (v)
    return GPOINTER_TO_INT(v) - 1;
  char label[32];
  g_snprintf(label, sizeof label, "thread %" G_GUINT64_FORMAT, tid);
  int i = tsp_session_add_thread(r->s, name ? name : label, tid);
  g_hash_table_insert(r->threads, g_memdup2(&tid, sizeof tid), GINT_TO_POINTER(i + 1));
  return i;
}

/* An index from our args, checked against its table's size. */
static bool arg_index(JsonObject *args, const char *key, uint32_t size, uint32_t *out,
                      GError **error, uint64_t k)
{
  int64_t v;
  if (!args || !get_int(args, key, &v, false, error, k))
    return args == NULL ? (*out = 0, true) : false;
  if (v < 0 || v >= size)
    return fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" %" G_GINT64_FORMAT " names no entry "
                       "(of %u)", k, key, v, size);
  *out = (uint32_t)v;
  return true;
}

static uint32_t other_op_node(reader *r, const char *name)
{
  gpointer v = g_hash_table_lookup(r->other_ops, name);
  if (v)
    return GPOINTER_TO_UINT(v);
  tsp_node_info info = { .name = name, .op = TSP_OP_OTHER };
  uint32_t i = tsp_add_node(r->s, &info);
  g_hash_table_insert(r->other_ops, g_strdup(name), GUINT_TO_POINTER(i));
  return i;
}

/* A complete event (an "X", or a "B" closed by its "E") into the session. */
static bool add_complete(reader *r, JsonObject *ev, int thread, uint64_t start, uint64_t end,
                         GError **error)
{
  uint64_t k = r->n;
  const char *name = get_str(ev, "name");
  const char *cat = get_str(ev, "cat");
  JsonNode *an = json_object_get_member(ev, "args");
  JsonObject *args = an && JSON_NODE_HOLDS_OBJECT(an) ? json_node_get_object(an) : NULL;
  if (!name)
    return fail(error, "event %" G_GUINT64_FORMAT ": no \"name\" string", k);
  tsp_event e = { .start_ns = start + r->base, .end_ns = end + r->base, .kind = TSP_EVENT_OP };
  uint32_t n_conc = r->concrete_map->len;
  bool ours = r->ours && args;
  if (ours && cat && strcmp(cat, "call") == 0) {
    int64_t run;
    uint32_t c;
    if (!get_int(args, "run", &run, false, error, k) || !arg_index(args, "c", n_conc, &c, error, k))
      return false;
    const char *mode = get_str(args, "mode");
    e.kind = TSP_EVENT_CALL;
    e.run_id = (uint64_t)run;
    e.node = tsp_intern_string(r->s, name);
    e.traced = g_array_index(r->concrete_map, uint32_t, c);
    e.op = mode && strcmp(mode, "graph") == 0 ? TSP_MODE_GRAPH : TSP_MODE_EAGER;
  } else if (ours && cat && strcmp(cat, "trace") == 0) {
    int64_t code;
    uint32_t c;
    if (!get_int(args, "reason_code", &code, false, error, k) ||
        !arg_index(args, "c", n_conc, &c, error, k))
      return false;
    if (code < 0 || code >= TS_TRACE_REASON_COUNT)
      return fail(error, "event %" G_GUINT64_FORMAT ": \"reason_code\" out of range", k);
    e.kind = TSP_EVENT_TRACE;
    e.node = tsp_intern_string(r->s, get_str(args, "function"));
    e.traced = g_array_index(r->concrete_map, uint32_t, c);
    e.loc = tsp_intern_string(r->s, get_str(args, "reason"));
    e.op = (uint16_t)code;
  } else {
    int op = ts_op_from_name(name);
    int64_t run = 0, seq = 0, parent = 0;
    uint32_t n_nodes = tsp_session_n_nodes(r->s), l = 0;
    if (ours && (!get_int(args, "run", &run, false, error, k) ||
                 !get_int(args, "seq", &seq, false, error, k) ||
                 !get_int(args, "parent_seq", &parent, false, error, k) ||
                 !arg_index(args, "n", n_nodes, &e.node, error, k) ||
                 !arg_index(args, "t", n_nodes, &e.traced, error, k) ||
                 !arg_index(args, "l", r->loc_map->len, &l, error, k)))
      return false;
    if (run < 0 || seq < 0 || seq > UINT32_MAX || parent < 0 || parent > UINT32_MAX)
      return fail(error, "event %" G_GUINT64_FORMAT ": run or seq out of range", k);
    e.run_id = (uint64_t)run;
    e.seq = (uint32_t)seq;
    e.parent_seq = (uint32_t)parent;
    e.loc = g_array_index(r->loc_map, uint32_t, l);
    e.device = tsp_intern_device(r->s, get_str(args, "device"));
    if (op < 0) {
      e.op = TSP_OP_OTHER;
      if (!e.node && !e.traced)
        e.traced = other_op_node(r, name);
    } else {
      e.op = (uint16_t)op;
    }
  }
  tsp_record_on(r->s, thread, &e);
  return true;
}

static bool read_event(reader *r, JsonNode *node, GError **error)
{
  uint64_t k = r->n;
  if (!JSON_NODE_HOLDS_OBJECT(node))
    return fail(error, "event %" G_GUINT64_FORMAT ": not an object", k);
  JsonObject *ev = json_node_get_object(node);
  const char *ph = get_str(ev, "ph");
  if (!ph)
    return fail(error, "event %" G_GUINT64_FORMAT ": no \"ph\" string", k);
  int64_t tid;
  if (strcmp(ph, "M") == 0) {
    const char *name = get_str(ev, "name");
    JsonNode *an = json_object_get_member(ev, "args");
    const char *tname = an && JSON_NODE_HOLDS_OBJECT(an) ? get_str(json_node_get_object(an), "name") : NULL;
    if (name && strcmp(name, "thread_name") == 0) {
      if (!get_int(ev, "tid", &tid, true, error, k))
        return false;
      thread_of(r, (uint64_t)tid, tname);
    }
    return true;
  }
  if (strcmp(ph, "X") != 0 && strcmp(ph, "B") != 0 && strcmp(ph, "E") != 0)
    return true; /* instants, counters, flows, ...: not kept */
  uint64_t ts, dur;
  if (!get_int(ev, "tid", &tid, false, error, k) || !get_time(ev, "ts", &ts, true, error, k))
    return false;
  int thread = thread_of(r, (uint64_t)tid, NULL);
  if (strcmp(ph, "X") == 0) {
    if (!get_time(ev, "dur", &dur, false, error, k))
      return false;
    if (ts + dur > (uint64_t)MAX_NS)
      return fail(error, "event %" G_GUINT64_FORMAT ": \"ts\" + \"dur\" out of range", k);
    return add_complete(r, ev, thread, ts, ts + dur, error);
  }
  GPtrArray *stack = g_hash_table_lookup(r->open, &tid);
  if (!stack) {
    stack = g_ptr_array_new_with_free_func((GDestroyNotify)json_node_unref);
    g_hash_table_insert(r->open, g_memdup2(&tid, sizeof tid), stack);
  }
  if (ph[0] == 'B') {
    g_ptr_array_add(stack, json_node_ref(node));
    return true;
  }
  if (stack->len == 0)
    return fail(error, "event %" G_GUINT64_FORMAT ": \"E\" with no \"B\" open on tid %" G_GINT64_FORMAT,
                k, tid);
  JsonNode *b = g_ptr_array_steal_index(stack, stack->len - 1);
  uint64_t start;
  bool ok = get_time(json_node_get_object(b), "ts", &start, true, error, k);
  if (ok && start > ts)
    ok = fail(error, "event %" G_GUINT64_FORMAT ": \"E\" before its \"B\"", k);
  if (ok)
    ok = add_complete(r, json_node_get_object(b), thread, start, ts, error);
  json_node_unref(b);
  return ok;
}

/* Our tables: locations, concrete functions, nodes (in index order). */
static bool read_tables(reader *r, const char *text, size_t len, GError **error)
{
  JsonParser *p = json_parser_new_immutable();
  GError *e = NULL;
  bool ok = json_parser_load_from_data(p, text, (gssize)len, &e);
  if (!ok) {
    fail(error, "\"tracescope\": %s", e->message);
    g_error_free(e);
    g_object_unref(p);
    return false;
  }
  JsonNode *root = json_parser_get_root(p);
  JsonObject *t = JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
  const char *base = get_str(t, "base_ns");
  char *end = NULL;
  errno = 0;
  r->base = base ? g_ascii_strtoull(base, &end, 10) : 0;
  if (!t || !base || *end || errno || r->base > (uint64_t)MAX_NS) {
    g_object_unref(p);
    return fail(error, "\"tracescope\": no valid \"base_ns\"");
  }
  JsonNode *locs = json_object_get_member(t, "locs"), *concretes = json_object_get_member(t, "concretes"),
           *nodes = json_object_get_member(t, "nodes");
  if (!locs || !JSON_NODE_HOLDS_ARRAY(locs) || !concretes || !JSON_NODE_HOLDS_ARRAY(concretes) ||
      !nodes || !JSON_NODE_HOLDS_ARRAY(nodes)) {
    g_object_unref(p);
    return fail(error, "\"tracescope\": \"locs\", \"concretes\" and \"nodes\" must be arrays");
  }
  JsonArray *a = json_node_get_array(locs);
  for (guint i = 0; ok && i < json_array_get_length(a); i++) {
    JsonNode *l = json_array_get_element(a, i);
    JsonArray *la = JSON_NODE_HOLDS_ARRAY(l) ? json_node_get_array(l) : NULL;
    JsonNode *line = la && json_array_get_length(la) == 3 ? json_array_get_element(la, 2) : NULL;
    if (!line || !JSON_NODE_HOLDS_VALUE(line) || json_node_get_value_type(line) != G_TYPE_INT64 ||
        json_node_get_value_type(json_array_get_element(la, 0)) != G_TYPE_STRING ||
        json_node_get_value_type(json_array_get_element(la, 1)) != G_TYPE_STRING ||
        json_node_get_int(line) < 0 || json_node_get_int(line) > INT32_MAX) {
      ok = fail(error, "\"tracescope\": locs[%u] is not [file, function, line]", i);
      break;
    }
    uint32_t idx = tsp_intern_loc(r->s, json_array_get_string_element(la, 0),
                                  json_array_get_string_element(la, 1), (int)json_node_get_int(line));
    g_array_append_val(r->loc_map, idx);
  }
  a = json_node_get_array(concretes);
  for (guint i = 0; ok && i < json_array_get_length(a); i++) {
    JsonNode *c = json_array_get_element(a, i);
    JsonArray *ca = JSON_NODE_HOLDS_ARRAY(c) ? json_node_get_array(c) : NULL;
    if (!ca || json_array_get_length(ca) != 2 ||
        json_node_get_value_type(json_array_get_element(ca, 0)) != G_TYPE_STRING ||
        json_node_get_value_type(json_array_get_element(ca, 1)) != G_TYPE_STRING) {
      ok = fail(error, "\"tracescope\": concretes[%u] is not [function, signature]", i);
      break;
    }
    uint32_t idx = tsp_intern_concrete(r->s, json_array_get_string_element(ca, 0),
                                       json_array_get_string_element(ca, 1));
    g_array_append_val(r->concrete_map, idx);
  }
  a = json_node_get_array(nodes);
  guint n_nodes = json_array_get_length(a);
  for (guint i = 0; ok && i < n_nodes; i++) {
    JsonNode *nn = json_array_get_element(a, i);
    JsonObject *o = JSON_NODE_HOLDS_OBJECT(nn) ? json_node_get_object(nn) : NULL;
    JsonNode *origins = o ? json_object_get_member(o, "origins") : NULL;
    int64_t loc = 0, conc = 0, id = 0;
    const char *name = get_str(o, "name"), *op = get_str(o, "op");
    if (!o || !name || !op || !origins || !JSON_NODE_HOLDS_ARRAY(origins) ||
        !get_int(o, "loc", &loc, false, error, i) || !get_int(o, "concrete", &conc, false, error, i) ||
        !get_int(o, "id", &id, false, error, i) || loc < 0 || loc >= r->loc_map->len || conc < 0 ||
        conc >= r->concrete_map->len || id < INT32_MIN || id > INT32_MAX) {
      g_clear_error(error);
      ok = fail(error, "\"tracescope\": nodes[%u] is malformed", i);
      break;
    }
    JsonArray *oa = json_node_get_array(origins);
    guint n_o = json_array_get_length(oa);
    uint32_t *ov = g_new0(uint32_t, n_o + 1);
    for (guint k = 0; ok && k < n_o; k++) {
      JsonNode *x = json_array_get_element(oa, k);
      int64_t v = JSON_NODE_HOLDS_VALUE(x) && json_node_get_value_type(x) == G_TYPE_INT64
                    ? json_node_get_int(x) : -1;
      if (v < 1 || v > n_nodes)
        ok = fail(error, "\"tracescope\": nodes[%u]: origin %u names no node", i, k);
      ov[k] = (uint32_t)v;
    }
    int opi = *op ? ts_op_from_name(op) : TSP_OP_OTHER;
    if (ok && opi < 0)
      ok = fail(error, "\"tracescope\": nodes[%u]: unknown op '%s'", i, op);
    JsonNode *opt = json_object_get_member(o, "optimized"), *twin = json_object_get_member(o, "eager_twin");
    tsp_node_info info = {
      .name = name, .scope = get_str(o, "scope"), .shape = get_str(o, "shape"), .op = opi,
      .loc = g_array_index(r->loc_map, uint32_t, loc),
      .concrete = g_array_index(r->concrete_map, uint32_t, conc), .id = (int)id,
      .graph = tsp_intern_string(r->s, get_str(o, "graph")),
      .optimized = opt && JSON_NODE_HOLDS_VALUE(opt) && json_node_get_value_type(opt) == G_TYPE_BOOLEAN &&
                   json_node_get_boolean(opt),
      .has_eager_twin = twin && JSON_NODE_HOLDS_VALUE(twin) &&
                        json_node_get_value_type(twin) == G_TYPE_BOOLEAN && json_node_get_boolean(twin),
      .n_origins = (int)n_o, .origins = ov,
    };
    if (ok)
      tsp_add_node(r->s, &info);
    g_free(ov);
  }
  g_object_unref(p);
  r->ours = ok;
  return ok;
}

/* Parses events [from, to) of the text (whole array elements, with the
 * commas between them) in one go. */
static bool read_batch(reader *r, const char *from, const char *to, GError **error)
{
  GString *text = g_string_sized_new((gsize)(to - from) + 2);
  g_string_append_c(text, '[');
  g_string_append_len(text, from, to - from);
  g_string_append_c(text, ']');
  JsonParser *p = json_parser_new_immutable();
  GError *e = NULL;
  bool ok = json_parser_load_from_data(p, text->str, (gssize)text->len, &e);
  if (!ok) {
    fail(error, "traceEvents, near event %" G_GUINT64_FORMAT ": %s", r->n, e->message);
    g_error_free(e);
  } else {
    JsonArray *a = json_node_get_array(json_parser_get_root(p));
    for (guint i = 0; ok && i < json_array_get_length(a); i++, r->n++)
      ok = read_event(r, json_array_get_element(a, i), error);
  }
  g_object_unref(p);
  g_string_free(text, TRUE);
  return ok;
}

/* The events array starting at s->p ('['). */
static bool read_events(reader *r, scan *s, GError **error)
{
  s->p++;
  skip_ws(s);
  if (s->p < s->end && *s->p == ']')
    return s->p++, true;
  const char *batch = s->p;
  int in_batch = 0;
  for (;;) {
    char where[64];
    g_snprintf(where, sizeof where, "traceEvents[%" G_GUINT64_FORMAT "]", r->n + (uint64_t)in_batch);
    if (!skip_value(s, error, where))
      return false;
    in_batch++;
    skip_ws(s);
    if (s->p >= s->end)
      return fail(error, "%s: the file ends early (truncated?)", where);
    bool last = *s->p == ']';
    if (*s->p != ',' && !last)
      return fail(error, "%s: expected ',' or ']' after the event", where);
    if (last || in_batch == BATCH) {
      if (!read_batch(r, batch, s->p, error))
        return false;
      in_batch = 0;
      batch = s->p + 1;
    }
    s->p++;
    if (last)
      return true;
  }
}

tsp_session *tsp_chrome_import_data(const char *data, size_t len, GError **error)
{
  tsp_session *session = tsp_session_new_empty();
  reader r = {
    .s = session,
    .loc_map = g_array_new(FALSE, FALSE, sizeof(uint32_t)),
    .concrete_map = g_array_new(FALSE, FALSE, sizeof(uint32_t)),
    .threads = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
    .other_ops = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
    .open = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                  (GDestroyNotify)g_ptr_array_unref),
  };
  uint32_t zero = 0;
  g_array_append_val(r.loc_map, zero);
  g_array_append_val(r.concrete_map, zero);
  scan s = { data, data + len };
  bool ok = true, saw_events = false;
  skip_ws(&s);
  if (s.p < s.end && *s.p == '[') {
    ok = saw_events = read_events(&r, &s, error);
  } else if (s.p < s.end && *s.p == '{') {
    /* members: "tracescope" (before "traceEvents", as we write it) and "traceEvents" */
    s.p++;
    for (;;) {
      skip_ws(&s);
      if (s.p < s.end && *s.p == '}')
        break;
      if (s.p >= s.end || *s.p != '"') {
        ok = fail(error, "expected a member name at byte %zu", (size_t)(s.p - data));
        break;
      }
      const char *key = s.p;
      if (!skip_string(&s)) {
        ok = fail(error, "the file ends inside a member name (truncated?)");
        break;
      }
      size_t key_len = (size_t)(s.p - key);
      skip_ws(&s);
      if (s.p >= s.end || *s.p != ':') {
        ok = fail(error, "expected ':' after a member name at byte %zu", (size_t)(s.p - data));
        break;
      }
      s.p++;
      skip_ws(&s);
      const char *value = s.p;
      if (key_len == 13 && memcmp(key, "\"traceEvents\"", 13) == 0) {
        if (s.p >= s.end || *s.p != '[') {
          ok = fail(error, "\"traceEvents\" is not an array");
          break;
        }
        if (!(ok = saw_events = read_events(&r, &s, error)))
          break;
      } else {
        if (!(ok = skip_value(&s, error, "a top-level member")))
          break;
        if (key_len == 12 && memcmp(key, "\"tracescope\"", 12) == 0 && tsp_session_n_events(session) == 0 &&
            !(ok = read_tables(&r, value, (size_t)(s.p - value), error)))
          break;
      }
      skip_ws(&s);
      if (s.p < s.end && *s.p == ',') {
        s.p++;
      } else if (s.p >= s.end || *s.p != '}') {
        ok = fail(error, "expected ',' or '}' at byte %zu (truncated?)", (size_t)(s.p - data));
        break;
      }
    }
    if (ok && !saw_events)
      ok = fail(error, "no \"traceEvents\" array: not a Chrome trace");
  } else {
    ok = fail(error, "not a Chrome trace: expected a JSON object or array");
  }
  if (ok) {
    GHashTableIter it;
    g_hash_table_iter_init(&it, r.open);
    for (gpointer k, v; ok && g_hash_table_iter_next(&it, &k, &v);)
      if (((GPtrArray *)v)->len > 0)
        ok = fail(error, "%u \"B\" event%s on tid %" G_GINT64_FORMAT " never end (no \"E\")",
                  ((GPtrArray *)v)->len, ((GPtrArray *)v)->len == 1 ? "" : "s", *(gint64 *)k);
  }
  g_array_unref(r.loc_map);
  g_array_unref(r.concrete_map);
  g_hash_table_unref(r.threads);
  g_hash_table_unref(r.other_ops);
  g_hash_table_unref(r.open);
  if (!ok) {
    tsp_session_free(session);
    return NULL;
  }
  return session;
}

tsp_session *tsp_chrome_import(const char *path, GError **error)
{
  gzFile gz = gzopen(path, "rb"); /* reads plain files too */
  if (!gz) {
    g_set_error(error, TSP_ERROR, TSP_ERROR_IO, "cannot open '%s': %s", path,
                g_strerror(errno ? errno : ENOENT));
    return NULL;
  }
  gzbuffer(gz, 1 << 20);
  GByteArray *buf = g_byte_array_new();
  guint8 chunk[1 << 16];
  int n;
  while ((n = gzread(gz, chunk, sizeof chunk)) > 0 && buf->len <= MAX_FILE)
    g_byte_array_append(buf, chunk, (guint)n);
  int zerr;
  const char *zmsg = gzerror(gz, &zerr);
  bool read_ok = n == 0 && zerr == Z_OK && buf->len <= MAX_FILE;
  char *why = read_ok ? NULL
              : buf->len > MAX_FILE ? g_strdup("larger than 2 GiB")
              : g_strdup(zerr == Z_ERRNO ? g_strerror(errno) : zmsg);
  gzclose(gz);
  tsp_session *s = NULL;
  if (!read_ok)
    g_set_error(error, TSP_ERROR, TSP_ERROR_IO, "cannot read '%s': %s", path, why);
  else if (!(s = tsp_chrome_import_data((const char *)buf->data, buf->len, error)))
    g_prefix_error(error, "%s: ", path);
  g_free(why);
  g_byte_array_unref(buf);
  return s;
}
