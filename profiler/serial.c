/* serial.c — a session as bytes and back: how the worker hands the app
 * what it recorded.  A GVariant in normal form (SESSION_TYPE): the tables
 * from index 1 (index 0 is always "none"), then each thread with its raw
 * 48-byte events.  Reading checks every index an entry or an event holds
 * against the tables, so hostile bytes give an error, never a crash. */
#include "profiler-private.h"

#include <string.h>

#define SERIAL_VERSION 2u
/* version, losses (events, device records), strings, locs (file, func, line), concretes (function,
 * signature), devices, nodes (name, scope, shape, op, loc, concrete, id,
 * graph, optimized, has_eager_twin, origins), threads (name, tid, events) */
#define SESSION_TYPE "(u(tt)asa(uui)a(uu)asa(uuuiuuiubbau)a(stay))"

/* The string table index of a string the session interned (0: ""). */
static uint32_t string_index(const tsp_session *s, const char *str)
{
  return str && *str ? GPOINTER_TO_UINT(g_hash_table_lookup(s->string_ids, str)) : 0;
}

GBytes *tsp_session_serialize(const tsp_session *s)
{
  g_return_val_if_fail(s != NULL && !s->recording, NULL);
  GVariantBuilder b;
  g_variant_builder_init(&b, G_VARIANT_TYPE(SESSION_TYPE));
  g_variant_builder_add(&b, "u", SERIAL_VERSION);
  g_variant_builder_add(&b, "(tt)", s->losses.events, s->losses.device_records);

  g_variant_builder_open(&b, G_VARIANT_TYPE("as"));
  for (guint i = 1; i < s->strings->len; i++)
    g_variant_builder_add(&b, "s", (const char *)s->strings->pdata[i]);
  g_variant_builder_close(&b);

  g_variant_builder_open(&b, G_VARIANT_TYPE("a(uui)"));
  for (guint i = 1; i < s->locs->len; i++) {
    const tsp_loc_info *l = &g_array_index(s->locs, tsp_loc_info, i);
    g_variant_builder_add(&b, "(uui)", string_index(s, l->file), string_index(s, l->func), l->line);
  }
  g_variant_builder_close(&b);

  g_variant_builder_open(&b, G_VARIANT_TYPE("a(uu)"));
  for (guint i = 1; i < s->concretes->len; i++) {
    const tsp_concrete_info *c = &g_array_index(s->concretes, tsp_concrete_info, i);
    g_variant_builder_add(&b, "(uu)", string_index(s, c->function), string_index(s, c->signature));
  }
  g_variant_builder_close(&b);

  g_variant_builder_open(&b, G_VARIANT_TYPE("as"));
  for (guint i = 1; i < s->devices->len; i++)
    g_variant_builder_add(&b, "s", (const char *)s->devices->pdata[i]);
  g_variant_builder_close(&b);

  g_variant_builder_open(&b, G_VARIANT_TYPE("a(uuuiuuiubbau)"));
  for (guint i = 1; i < s->nodes->len; i++) {
    const tsp_node_info *n = s->nodes->pdata[i];
    GVariant *origins = g_variant_new_fixed_array(G_VARIANT_TYPE_UINT32, n->origins,
                                                  (gsize)n->n_origins, sizeof(uint32_t));
    g_variant_builder_add(&b, "(uuuiuuiubb@au)", string_index(s, n->name), string_index(s, n->scope),
                          string_index(s, n->shape), n->op, n->loc, n->concrete, n->id, n->graph,
                          n->optimized, n->has_eager_twin, origins);
  }
  g_variant_builder_close(&b);

  g_variant_builder_open(&b, G_VARIANT_TYPE("a(stay)"));
  for (guint i = 0; i < s->threads->len; i++) {
    const tsp_thread *t = s->threads->pdata[i];
    size_t n = 0;
    for (const tsp_chunk *c = t->first; c; c = c->next)
      n += c->n;
    tsp_event *events = g_new(tsp_event, MAX(n, 1));
    size_t k = 0;
    for (const tsp_chunk *c = t->first; c; c = c->next)
      for (uint32_t j = 0; j < c->n; j++)
        events[k++] = c->ev[j];
    GBytes *bytes = g_bytes_new_take(events, n * sizeof(tsp_event));
    g_variant_builder_add(&b, "(st@ay)", t->info.name, t->info.tid,
                          g_variant_new_from_bytes(G_VARIANT_TYPE_BYTESTRING, bytes, TRUE));
    g_bytes_unref(bytes);
  }
  g_variant_builder_close(&b);

  GVariant *v = g_variant_ref_sink(g_variant_builder_end(&b));
  GBytes *out = g_variant_get_data_as_bytes(v);
  g_variant_unref(v);
  return out;
}

/* ---- reading ------------------------------------------------------------------------ */

static bool bad(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);
static bool bad(GError **error, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  char *text = g_strdup_vprintf(format, ap);
  va_end(ap);
  g_set_error(error, TSP_ERROR, TSP_ERROR_FORMAT, "a serialized profiling session: %s", text);
  g_free(text);
  return false;
}

static bool op_valid(int op)
{
  return (op >= 0 && op < TS_OP_COUNT) || op == TSP_OP_OTHER;
}

static bool read_tables(tsp_session *s, GVariant *v, GError **error)
{
  g_autoptr(GVariant) strings = g_variant_get_child_value(v, 2);
  gsize n_strings = g_variant_n_children(strings) + 1;
  for (gsize i = 1; i < n_strings; i++) {
    const char *str;
    g_variant_get_child(strings, i - 1, "&s", &str);
    if (tsp_intern_string(s, str) != i)
      return bad(error, "string %zu is empty or repeats an earlier one", i);
  }

  g_autoptr(GVariant) locs = g_variant_get_child_value(v, 3);
  for (gsize i = 1; i <= g_variant_n_children(locs); i++) {
    guint32 file, func;
    gint32 line;
    g_variant_get_child(locs, i - 1, "(uui)", &file, &func, &line);
    if (file >= n_strings || func >= n_strings)
      return bad(error, "source location %zu names string %u of %zu", i, MAX(file, func), n_strings);
    if (tsp_intern_loc(s, tsp_session_string(s, file), tsp_session_string(s, func), line) != i)
      return bad(error, "source location %zu repeats an earlier one", i);
  }

  g_autoptr(GVariant) concretes = g_variant_get_child_value(v, 4);
  for (gsize i = 1; i <= g_variant_n_children(concretes); i++) {
    guint32 fn, sig;
    g_variant_get_child(concretes, i - 1, "(uu)", &fn, &sig);
    if (fn >= n_strings || sig >= n_strings)
      return bad(error, "concrete function %zu names string %u of %zu", i, MAX(fn, sig), n_strings);
    if (tsp_intern_concrete(s, tsp_session_string(s, fn), tsp_session_string(s, sig)) != i)
      return bad(error, "concrete function %zu repeats an earlier one", i);
  }

  g_autoptr(GVariant) devices = g_variant_get_child_value(v, 5);
  for (gsize i = 1; i <= g_variant_n_children(devices); i++) {
    const char *name;
    g_variant_get_child(devices, i - 1, "&s", &name);
    if (i > 255 || tsp_intern_device(s, name) != i)
      return bad(error, "device %zu is empty, repeats an earlier one or is one too many", i);
  }

  g_autoptr(GVariant) nodes = g_variant_get_child_value(v, 6);
  gsize n_nodes = g_variant_n_children(nodes) + 1;
  for (gsize i = 1; i < n_nodes; i++) {
    g_autoptr(GVariant) node = g_variant_get_child_value(nodes, i - 1);
    guint32 name, scope, shape, loc, concrete, graph;
    gint32 op, id;
    gboolean optimized, twin;
    g_autoptr(GVariant) origins = NULL;
    g_variant_get(node, "(uuuiuuiubb@au)", &name, &scope, &shape, &op, &loc, &concrete, &id, &graph,
                  &optimized, &twin, &origins);
    gsize n_origins;
    const guint32 *o = g_variant_get_fixed_array(origins, &n_origins, sizeof(guint32));
    if (name >= n_strings || scope >= n_strings || shape >= n_strings || graph >= n_strings)
      return bad(error, "node %zu names a string past the %zu there are", i, n_strings);
    if (!op_valid(op) || loc >= s->locs->len || concrete >= s->concretes->len)
      return bad(error, "node %zu has op %d, location %u or concrete function %u out of range", i, op,
                 loc, concrete);
    for (gsize k = 0; k < n_origins; k++)
      if (o[k] == 0 || o[k] >= n_nodes)
        return bad(error, "node %zu has origin %u of %zu nodes", i, o[k], n_nodes);
    tsp_node_info info = {
      .name = tsp_session_string(s, name), .scope = tsp_session_string(s, scope),
      .shape = tsp_session_string(s, shape), .op = op, .loc = loc, .concrete = concrete, .id = id,
      .graph = graph, .optimized = optimized, .has_eager_twin = twin, .n_origins = (int)n_origins,
      .origins = (uint32_t *)o,
    };
    tsp_add_node(s, &info);
  }
  return true;
}

/* Every index an event holds names an entry of its table. */
static bool event_valid(const tsp_session *s, const tsp_event *e)
{
  guint n_strings = s->strings->len, n_nodes = s->nodes->len;
  switch (e->kind) {
  case TSP_EVENT_OP:
  case TSP_EVENT_DEVICE:
    return e->node < n_nodes && e->traced < n_nodes && e->loc < s->locs->len &&
           e->device < s->devices->len && op_valid(e->op);
  case TSP_EVENT_CALL:
    return e->node < n_strings && e->traced < s->concretes->len && e->op >= TSP_MODE_EAGER &&
           e->op <= TSP_MODE_ALL;
  case TSP_EVENT_TRACE:
    return e->node < n_strings && e->traced < s->concretes->len && e->loc < n_strings;
  case TSP_EVENT_PHASE:
    return e->node < n_strings && e->loc < n_strings && e->op < TS_PHASE_KIND_COUNT;
  case TSP_EVENT_MEMORY:
    return e->loc < s->locs->len && e->device < s->devices->len && e->op < TS_MEMORY_KIND_COUNT;
  default: return false;
  }
}

static bool read_threads(tsp_session *s, GVariant *v, GError **error)
{
  g_autoptr(GVariant) threads = g_variant_get_child_value(v, 7);
  for (gsize i = 0; i < g_variant_n_children(threads); i++) {
    const char *name;
    guint64 tid;
    g_autoptr(GVariant) events = NULL;
    g_variant_get_child(threads, i, "(&st@ay)", &name, &tid, &events);
    gsize size = g_variant_get_size(events);
    if (size % sizeof(tsp_event) != 0)
      return bad(error, "thread %zu (%s) has %zu bytes of events, not a multiple of %zu", i, name,
                 size, sizeof(tsp_event));
    const char *data = g_variant_get_data(events);
    int t = tsp_session_add_thread(s, name, tid);
    for (gsize k = 0; k < size / sizeof(tsp_event); k++) {
      tsp_event e;
      memcpy(&e, data + k * sizeof e, sizeof e); /* the bytes need not be aligned */
      if (!event_valid(s, &e))
        return bad(error, "thread %zu (%s), event %zu: kind %u with an index out of range", i, name,
                   k, e.kind);
      if (!tsp__thread_try_append(s->threads->pdata[t], &e)) /* an error, not an abort */
        return bad(error, "out of memory after %" G_GUINT64_FORMAT " events", tsp_session_n_events(s));
    }
  }
  return true;
}

tsp_session *tsp_session_deserialize(GBytes *bytes, GError **error)
{
  g_return_val_if_fail(bytes != NULL, NULL);
  /* GVariant reads any bytes safely as the type asked for (malformed parts
   * read as defaults); the version and indexes are checked here */
  g_autoptr(GVariant) v = g_variant_ref_sink(g_variant_new_from_bytes(G_VARIANT_TYPE(SESSION_TYPE), bytes, FALSE));
  guint32 version;
  g_variant_get_child(v, 0, "u", &version);
  if (version != SERIAL_VERSION) {
    bad(error, "version %u; this Tracescope reads version %u", version, SERIAL_VERSION);
    return NULL;
  }
  tsp_session *s = tsp_session_new_empty();
  g_variant_get_child(v, 1, "(tt)", &s->losses.events, &s->losses.device_records);
  if (!read_tables(s, v, error) || !read_threads(s, v, error)) {
    tsp_session_free(s);
    return NULL;
  }
  tsp__trim_chunks(s);
  return s;
}
