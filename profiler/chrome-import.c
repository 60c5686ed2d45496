/* chrome-import.c — Chrome trace-event JSON (ours or another tool's) into
 * a session.  A bounded scanner (json-scan.c) streams the text, finds the
 * top-level members and cuts the events into batches, checking nesting,
 * sizes and truncation so that no parser sees a document that could
 * exhaust its stack or the memory; json-glib parses our (small) tables,
 * yajl the events, a batch at a time on a thread pool.  Memory follows the
 * events kept: the text passes through a few MiB.  Anything wrong gives an
 * error naming what and where. */
#include "chrome-decode.h"
#include "json-scan.h"
#include "tracescope-json.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define BATCH 4096                     /* events */
#define BATCH_BYTES ((size_t)1 << 20)  /* or text, whichever comes first */
#define TABLES_VERSION 1 /* the "tracescope" tables chrome-export.c writes */

tsp_import_options tsp_import_options_default(void)
{
  return (tsp_import_options){ .limits = tsp_read_limits_default() };
}

/* ---- reading -------------------------------------------------------------------------- */

typedef struct reader {
  tsp_session *s;
  const tsp_read_limits *limits;
  uint64_t base;
  bool ours;                /* the file has our tables */
  GArray *loc_map, *concrete_map; /* file index -> session index */
  GHashTable *threads;      /* tid -> thread index + 1 */
  uint64_t last_tid;        /* the last thread looked up (events come in runs) */
  int last_thread;          /* its index, or -1 */
  GHashTable *ops;          /* event name -> ts_op + 2 (1: not an engine op) */
  GHashTable *other_ops;    /* op name -> node index (names the engine lacks) */
  GHashTable *open;         /* tid -> GArray of open "B" events (tsp_decoded) */
  GStringChunk *text;       /* their strings */
  uint8_t device;           /* the last device named, interned */
  const char *device_name;
  int64_t live[256][TS_MEMORY_KIND_COUNT]; /* memory counters: the last value per device and kind */
  uint64_t n;               /* events applied */
  uint64_t queued;          /* events cut out by the scanner */
} reader;

static int thread_of(reader *r, uint64_t tid, const char *name)
{
  if (r->last_thread >= 0 && tid == r->last_tid)
    return r->last_thread;
  gpointer v = g_hash_table_lookup(r->threads, &tid);
  int i;
  if (v) {
    i = GPOINTER_TO_INT(v) - 1;
  } else {
    char label[32];
    g_snprintf(label, sizeof label, "thread %" G_GUINT64_FORMAT, tid);
    i = tsp_session_add_thread(r->s, name ? name : label, tid);
    g_hash_table_insert(r->threads, g_memdup2(&tid, sizeof tid), GINT_TO_POINTER(i + 1));
  }
  r->last_tid = tid;
  r->last_thread = i;
  return i;
}

/* ts_op_from_name, remembered per name (it compares with every op's names). */
static int op_of(reader *r, const char *name)
{
  gpointer v = g_hash_table_lookup(r->ops, name);
  if (!v) {
    v = GINT_TO_POINTER(ts_op_from_name(name) + 2);
    g_hash_table_insert(r->ops, g_strdup(name), v);
  }
  return GPOINTER_TO_INT(v) - 2;
}

/* ---- applying decoded events ------------------------------------------------------------- */

static bool index_ok(int64_t v, uint32_t size, const char *key, uint64_t k, GError **error)
{
  if (v >= 0 && v < size)
    return true;
  return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"%s\" %" G_GINT64_FORMAT " names no entry (of %u)",
              k, key, v, size);
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

/* An event onto a thread: no memory for it is an error, not an abort. */
static bool append(reader *r, int thread, const tsp_event *e, uint64_t k, GError **error)
{
  if (G_LIKELY(tsp__thread_try_append(r->s->threads->pdata[thread], e)))
    return true;
  return tsp__limit(error, "event %" G_GUINT64_FORMAT ": out of memory after %" G_GUINT64_FORMAT " events",
                    k, tsp_session_n_events(r->s));
}

/* A complete event (an "X", or a "B" closed by its "E") into the session. */
static bool add_complete(reader *r, const tsp_decoded *d, uint64_t start, uint64_t end, uint64_t k,
                         GError **error)
{
  int thread = thread_of(r, d->tid, NULL);
  tsp_event e = { .start_ns = start + r->base, .end_ns = end + r->base, .kind = TSP_EVENT_OP };
  uint32_t n_conc = r->concrete_map->len, n_nodes = tsp_session_n_nodes(r->s);
  bool ours = r->ours && d->ours;
  if (ours && (d->run < 0 || d->seq < 0 || d->seq > UINT32_MAX || d->parent < 0 || d->parent > UINT32_MAX))
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": run or seq out of range", k);
  if (ours && d->cat == TSP_CAT_CALL) {
    if (!index_ok(d->c, n_conc, "c", k, error))
      return false;
    e.kind = TSP_EVENT_CALL;
    e.run_id = (uint64_t)d->run;
    e.node = tsp_intern_string(r->s, d->name);
    e.traced = g_array_index(r->concrete_map, uint32_t, d->c);
    e.op = d->mode && strcmp(d->mode, "graph") == 0 ? TSP_MODE_GRAPH : TSP_MODE_EAGER;
  } else if (ours && d->cat == TSP_CAT_TRACE) {
    if (!index_ok(d->c, n_conc, "c", k, error))
      return false;
    if (d->code < 0 || d->code >= TS_TRACE_REASON_COUNT)
      return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"reason_code\" out of range", k);
    e.kind = TSP_EVENT_TRACE;
    e.node = tsp_intern_string(r->s, d->function);
    e.traced = g_array_index(r->concrete_map, uint32_t, d->c);
    e.loc = tsp_intern_string(r->s, d->reason);
    e.op = (uint16_t)d->code;
  } else if (ours && d->cat == TSP_CAT_PHASE) {
    if (d->code < 0 || d->code >= TS_PHASE_KIND_COUNT)
      return tsp__fail(error, "event %" G_GUINT64_FORMAT ": phase \"reason_code\" out of range", k);
    e.kind = TSP_EVENT_PHASE;
    e.node = tsp_intern_string(r->s, d->function ? d->function : d->name);
    e.loc = tsp_intern_string(r->s, d->reason ? d->reason : "");
    e.op = (uint16_t)d->code;
    e.seq = (uint32_t)d->seq;
  } else {
    if (ours && (!index_ok(d->n, n_nodes, "n", k, error) || !index_ok(d->t, n_nodes, "t", k, error) ||
                 !index_ok(d->l, r->loc_map->len, "l", k, error)))
      return false;
    int op = op_of(r, d->name);
    if (ours) {
      if (d->cat == TSP_CAT_DEVICE) /* a kernel, a copy or a memset on a device's stream */
        e.kind = TSP_EVENT_DEVICE;
      e.run_id = (uint64_t)d->run;
      e.seq = (uint32_t)d->seq;
      e.parent_seq = (uint32_t)d->parent;
      e.node = (uint32_t)d->n;
      e.traced = (uint32_t)d->t;
      e.loc = g_array_index(r->loc_map, uint32_t, d->l);
    }
    if (d->device && (!r->device_name || strcmp(d->device, r->device_name) != 0)) {
      r->device = tsp_intern_device(r->s, d->device);
      r->device_name = tsp_session_device(r->s, r->device);
    }
    e.device = d->device ? r->device : 0;
    if (op < 0) {
      e.op = TSP_OP_OTHER;
      if (!e.node && !e.traced)
        e.traced = other_op_node(r, d->name);
    } else {
      e.op = (uint16_t)op;
    }
  }
  return append(r, thread, &e, k, error);
}

/* A memory counter: the change is ours, or else the step from the
 * device's previous value in the file. */
static bool add_memory(reader *r, const tsp_decoded *d, uint64_t k, GError **error)
{
  if (d->ts + r->base < d->ts)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"ts\" out of range", k);
  uint8_t device = tsp_intern_device(r->s, strcmp(d->device, "memory") == 0 ? NULL : d->device);
  int64_t delta = d->has_delta ? d->code : d->n - r->live[device][d->what];
  r->live[device][d->what] = d->n;
  tsp_event e;
  tsp_memory_event_init(&e, d->ts + r->base, delta, d->n, device, d->what, 0);
  return append(r, thread_of(r, d->tid, NULL), &e, k, error);
}

static bool apply(reader *r, const tsp_decoded *d, uint64_t k, GError **error)
{
  if (d->ph == 'M') {
    thread_of(r, d->tid, d->name);
    return true;
  }
  if (d->ph == 'X') {
    if (d->ts + d->dur > (uint64_t)TSP_MAX_NS)
      return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"ts\" + \"dur\" out of range", k);
    return add_complete(r, d, d->ts, d->ts + d->dur, k, error);
  }
  if (d->ph == 'C')
    return add_memory(r, d, k, error);
  if (d->ph != 'B' && d->ph != 'E')
    return true;
  GArray *stack = g_hash_table_lookup(r->open, &d->tid);
  if (!stack) {
    stack = g_array_new(FALSE, FALSE, sizeof(tsp_decoded));
    g_hash_table_insert(r->open, g_memdup2(&d->tid, sizeof d->tid), stack);
  }
  if (d->ph == 'B') {
    /* kept past its batch: its strings move to the reader's chunk */
    tsp_decoded b = *d;
    const char **strs[] = { &b.name, &b.device, &b.mode, &b.function, &b.reason, &b.signature };
    for (size_t i = 0; i < G_N_ELEMENTS(strs); i++)
      if (*strs[i])
        *strs[i] = g_string_chunk_insert_const(r->text, *strs[i]);
    g_array_append_val(stack, b);
    return true;
  }
  if (stack->len == 0)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"E\" with no \"B\" open on tid %" G_GUINT64_FORMAT,
                k, d->tid);
  tsp_decoded b = g_array_index(stack, tsp_decoded, stack->len - 1);
  g_array_set_size(stack, stack->len - 1);
  if (b.ts > d->ts)
    return tsp__fail(error, "event %" G_GUINT64_FORMAT ": \"E\" before its \"B\"", k);
  return add_complete(r, &b, b.ts, d->ts, k, error);
}

/* Our tables: locations, concrete functions, nodes (in index order). */
static bool read_tables(reader *r, const char *text, size_t len, GError **error)
{
  GError *e = NULL;
  JsonNode *root = tsp_json_parse(text, len, r->limits, &e);
  if (!root) {
    g_propagate_prefixed_error(error, e, "\"tracescope\": ");
    return false;
  }
  bool ok = true;
  JsonObject *t = JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
  /* a file of another Tracescope: its version, not what its tables lack */
  int64_t version = TABLES_VERSION;
  if (t && json_object_has_member(t, "version") &&
      (!tsp__json_int(t, "version", &version, true, NULL, 0) || version != TABLES_VERSION)) {
    g_autofree char *said = json_to_string(json_object_get_member(t, "version"), FALSE);
    json_node_unref(root);
    return tsp__fail(error, "\"tracescope\": version %.40s is not one this Tracescope knows (it reads version %d)",
                     said, TABLES_VERSION);
  }
  const char *base = tsp__json_str(t, "base_ns");
  char *end = NULL;
  errno = 0;
  r->base = base ? g_ascii_strtoull(base, &end, 10) : 0;
  if (!t || !base || *end || errno || r->base > (uint64_t)TSP_MAX_NS) {
    json_node_unref(root);
    return tsp__fail(error, "\"tracescope\": no valid \"base_ns\"");
  }
  /* what the recording could not keep (optional: files before them lack them) */
  uint64_t *counts[] = { &r->s->losses.events, &r->s->losses.device_records };
  const char *count_names[] = { "lost_events", "dropped_device_records" };
  for (int i = 0; i < 2; i++) {
    const char *count = json_object_has_member(t, count_names[i]) ? tsp__json_str(t, count_names[i]) : "0";
    guint64 value = 0;
    if (!count || !g_ascii_string_to_unsigned(count, 10, 0, G_MAXUINT64, &value, NULL)) {
      json_node_unref(root);
      return tsp__fail(error, "\"tracescope\": \"%s\" is not a count in a string", count_names[i]);
    }
    *counts[i] = value;
  }
  JsonNode *locs = json_object_get_member(t, "locs"), *concretes = json_object_get_member(t, "concretes"),
           *nodes = json_object_get_member(t, "nodes");
  if (!locs || !JSON_NODE_HOLDS_ARRAY(locs) || !concretes || !JSON_NODE_HOLDS_ARRAY(concretes) ||
      !nodes || !JSON_NODE_HOLDS_ARRAY(nodes)) {
    json_node_unref(root);
    return tsp__fail(error, "\"tracescope\": \"locs\", \"concretes\" and \"nodes\" must be arrays");
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
      ok = tsp__fail(error, "\"tracescope\": locs[%u] is not [file, function, line]", i);
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
      ok = tsp__fail(error, "\"tracescope\": concretes[%u] is not [function, signature]", i);
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
    const char *name = tsp__json_str(o, "name"), *op = tsp__json_str(o, "op");
    if (!o || !name || !op || !origins || !JSON_NODE_HOLDS_ARRAY(origins) ||
        !tsp__json_int(o, "loc", &loc, false, error, i) || !tsp__json_int(o, "concrete", &conc, false, error, i) ||
        !tsp__json_int(o, "id", &id, false, error, i) || loc < 0 || loc >= r->loc_map->len || conc < 0 ||
        conc >= r->concrete_map->len || id < INT32_MIN || id > INT32_MAX) {
      g_clear_error(error);
      ok = tsp__fail(error, "\"tracescope\": nodes[%u] is malformed", i);
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
        ok = tsp__fail(error, "\"tracescope\": nodes[%u]: origin %u names no node", i, k);
      ov[k] = (uint32_t)v;
    }
    int opi = *op ? ts_op_from_name(op) : TSP_OP_OTHER;
    if (ok && opi < 0)
      ok = tsp__fail(error, "\"tracescope\": nodes[%u]: unknown op '%s'", i, op);
    JsonNode *opt = json_object_get_member(o, "optimized"), *twin = json_object_get_member(o, "eager_twin");
    tsp_node_info info = {
      .name = name, .scope = tsp__json_str(o, "scope"), .shape = tsp__json_str(o, "shape"), .op = opi,
      .loc = g_array_index(r->loc_map, uint32_t, loc),
      .concrete = g_array_index(r->concrete_map, uint32_t, conc), .id = (int)id,
      .graph = tsp_intern_string(r->s, tsp__json_str(o, "graph")),
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
  json_node_unref(root);
  r->ours = ok;
  return ok;
}

/* ---- events, parsed in parallel --------------------------------------------------------
 * The scanner cuts the events into batches; a thread pool parses them
 * (most of the time); the reader converts them in file order ("B"/"E"
 * pairs and event numbers need it), keeping a few in flight. */

typedef struct batch {
  const char *text;    /* its events (whole elements, commas between) */
  size_t len;
  char *own;           /* text, when copied out of a stream's buffer */
  size_t own_cap;
  uint64_t first;      /* the number of its first event */
  GArray *events;      /* tsp_decoded */
  GStringChunk *strings;
  GError *error;
  bool done;
} batch;

typedef struct batches {
  GThreadPool *pool; /* NULL: parse on the reading thread */
  GMutex lock;
  GCond cond;
  GQueue pending;    /* batch *, in file order */
  GQueue spare;      /* batch *, converted, their memory kept for the next */
  int max_pending;
} batches;

static void parse_batch(batch *b)
{
  tsp__decode_events(b->text, b->len, b->first, b->events, b->strings, &b->error);
}

static void parse_in_pool(gpointer data, gpointer user_data)
{
  batches *q = user_data;
  batch *b = data;
  parse_batch(b);
  g_mutex_lock(&q->lock);
  b->done = true;
  g_cond_broadcast(&q->cond);
  g_mutex_unlock(&q->lock);
}

static void batch_free(batch *b)
{
  g_array_unref(b->events);
  g_string_chunk_free(b->strings);
  g_clear_error(&b->error);
  g_free(b->own);
  g_free(b);
}

/* A batch to fill: a spare one (its memory reused: fresh memory for every
 * batch costs more in page faults than the parsing), or a new one. */
static batch *batch_take(batches *q)
{
  batch *b = g_queue_pop_head(&q->spare);
  if (!b) {
    b = g_new0(batch, 1);
    b->events = g_array_sized_new(FALSE, FALSE, sizeof(tsp_decoded), BATCH);
    b->strings = g_string_chunk_new(4096);
    return b;
  }
  g_array_set_size(b->events, 0);
  g_string_chunk_clear(b->strings);
  b->done = false;
  return b;
}

/* Converts the oldest pending batch once it is parsed. */
static bool convert_oldest(reader *r, batches *q, GError **error)
{
  batch *b = g_queue_pop_head(&q->pending);
  g_mutex_lock(&q->lock);
  while (q->pool && !b->done)
    g_cond_wait(&q->cond, &q->lock);
  g_mutex_unlock(&q->lock);
  bool ok = true;
  for (guint i = 0; ok && i < b->events->len; i++, r->n++)
    ok = apply(r, &g_array_index(b->events, tsp_decoded, i), r->n, error);
  if (ok && b->error) { /* the events before the bad one are applied: "B"/"E" errors come first */
    g_propagate_error(error, b->error);
    b->error = NULL;
    ok = false;
  }
  g_queue_push_tail(&q->spare, b);
  return ok;
}

/* Queues the events at [from, s->pos) of the text (whole elements with
 * the commas between), copied out of a stream's buffer. */
static bool add_batch(reader *r, batches *q, tsp_scan *s, size_t from, uint64_t first,
                      GError **error)
{
  batch *b = batch_take(q);
  b->first = first;
  b->len = s->pos - from;
  if (s->own) {
    if (b->own_cap < b->len) {
      g_free(b->own);
      b->own_cap = MAX(b->len, BATCH_BYTES + BATCH_BYTES / 4);
      if (!(b->own = g_try_malloc(b->own_cap))) {
        b->own_cap = 0;
        g_queue_push_tail(&q->spare, b);
        return tsp__limit(error, "out of memory for %zu bytes of events", b->len);
      }
    }
    memcpy(b->own, s->buf + from, b->len);
    b->text = b->own;
  } else {
    b->text = s->buf + from;
  }
  g_queue_push_tail(&q->pending, b);
  if (q->pool)
    g_thread_pool_push(q->pool, b, NULL);
  else
    parse_batch(b);
  return (int)q->pending.length < q->max_pending || convert_oldest(r, q, error);
}

/* The events array starting at s->pos ('['). */
static bool read_events(reader *r, tsp_scan *s, GError **error)
{
  batches q = { .max_pending = 1 };
  g_mutex_init(&q.lock);
  g_cond_init(&q.cond);
  g_queue_init(&q.pending);
  g_queue_init(&q.spare);
  int threads = (int)g_get_num_processors();
  if ((s->gz || s->len - s->pos > (1 << 20)) && threads > 1) {
    q.pool = g_thread_pool_new(parse_in_pool, &q, threads, FALSE, NULL);
    q.max_pending = MIN(2 * threads, 8);
  }
  s->pos++;
  char c;
  bool ok = tsp__scan_ws(s, error, "traceEvents"), done = false;
  if (ok && tsp__scan_peek(s, &c) && c == ']') {
    s->pos++;
    done = true;
  }
  size_t from = s->pos;
  int in_batch = 0;
  while (ok && !done) {
    s->index = (int64_t)r->queued; /* errors name the event */
    if (r->queued == r->limits->max_events) {
      ok = tsp__limit(error, "traceEvents[%" G_GUINT64_FORMAT "]: more than %" G_GUINT64_FORMAT
                      " events (the max_events limit)", r->queued, r->limits->max_events);
      break;
    }
    if (!(ok = tsp__scan_value(s, error, "traceEvents") && tsp__scan_ws(s, error, "traceEvents")))
      break;
    in_batch++;
    r->queued++;
    if (!tsp__scan_peek(s, &c)) {
      ok = tsp__scan_ended(s, error, "traceEvents");
    } else if (c != ',' && c != ']') {
      ok = tsp__fail(error, "traceEvents[%" G_GUINT64_FORMAT "]: expected ',' or ']' after the event",
                     r->queued - 1);
    } else {
      done = c == ']';
      if (done || in_batch == BATCH || s->pos - from >= BATCH_BYTES) {
        ok = add_batch(r, &q, s, from, r->queued - (uint64_t)in_batch, error);
        in_batch = 0;
        s->pos++;
        if (ok && !tsp__scan_release(s))
          ok = tsp__scan_ended(s, error, "traceEvents");
        from = s->pos;
      } else {
        s->pos++;
      }
    }
  }
  s->index = -1;
  while (ok && q.pending.length > 0)
    ok = convert_oldest(r, &q, error);
  if (q.pool)
    g_thread_pool_free(q.pool, FALSE, TRUE); /* waits for the batches being parsed */
  g_queue_clear_full(&q.pending, (GDestroyNotify)batch_free);
  g_queue_clear_full(&q.spare, (GDestroyNotify)batch_free);
  g_mutex_clear(&q.lock);
  g_cond_clear(&q.cond);
  return ok;
}

/* The members of the top-level object: "tracescope" (before
 * "traceEvents", as we write it) and "traceEvents". */
static bool read_members(reader *r, tsp_scan *s, bool *saw_events, GError **error)
{
  s->pos++;
  for (;;) {
    char c;
    if (!tsp__scan_ws(s, error, "the top-level object"))
      return false;
    if (!tsp__scan_peek(s, &c))
      return tsp__scan_ended(s, error, "the top-level object");
    if (c == '}')
      return true;
    if (c != '"')
      return tsp__fail(error, "expected a member name at byte %" G_GUINT64_FORMAT, s->dropped + s->pos);
    size_t key = s->pos;
    if (!tsp__scan_string(s, error, "a member name"))
      return false;
    size_t key_len = s->pos - key;
    bool events = key_len == 13 && memcmp(s->buf + key, "\"traceEvents\"", 13) == 0;
    bool tables = key_len == 12 && memcmp(s->buf + key, "\"tracescope\"", 12) == 0;
    if (!tsp__scan_ws(s, error, "a member name"))
      return false;
    if (!tsp__scan_peek(s, &c) || c != ':')
      return s->error ? tsp__scan_ended(s, error, "")
                      : tsp__fail(error, "expected ':' after a member name at byte %" G_GUINT64_FORMAT,
                                  s->dropped + s->pos);
    s->pos++;
    if (!tsp__scan_ws(s, error, "a top-level member"))
      return false;
    size_t value = s->pos;
    if (events) {
      if (!tsp__scan_peek(s, &c) || c != '[')
        return s->error ? tsp__scan_ended(s, error, "")
                        : tsp__fail(error, "\"traceEvents\" is not an array");
      if (!read_events(r, s, error))
        return false;
      *saw_events = true;
    } else {
      if (!tsp__scan_value(s, error, tables ? "\"tracescope\"" : "a top-level member"))
        return false;
      if (tables && tsp_session_n_events(r->s) == 0 &&
          !read_tables(r, s->buf + value, s->pos - value, error))
        return false;
    }
    if (!tsp__scan_release(s))
      return tsp__scan_ended(s, error, "");
    if (!tsp__scan_ws(s, error, "the top-level object"))
      return false;
    if (!tsp__scan_peek(s, &c) || (c != ',' && c != '}'))
      return s->error ? tsp__scan_ended(s, error, "")
                      : tsp__fail(error, "expected ',' or '}' at byte %" G_GUINT64_FORMAT " (truncated?)",
                                  s->dropped + s->pos);
    if (c == ',')
      s->pos++;
  }
}

static tsp_session *import(tsp_scan *s, const tsp_import_options *options, GError **error)
{
  tsp_session *session = tsp_session_new_empty();
  reader r = {
    .s = session,
    .limits = &options->limits,
    .loc_map = g_array_new(FALSE, FALSE, sizeof(uint32_t)),
    .concrete_map = g_array_new(FALSE, FALSE, sizeof(uint32_t)),
    .threads = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
    .last_thread = -1,
    .ops = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
    .other_ops = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
    .open = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                  (GDestroyNotify)g_array_unref),
    .text = g_string_chunk_new(4096),
  };
  s->progress = options->progress;
  s->progress_data = options->progress_data;
  uint32_t zero = 0;
  g_array_append_val(r.loc_map, zero);
  g_array_append_val(r.concrete_map, zero);
  bool ok = tsp__scan_ws(s, error, "the file"), saw_events = false;
  char c = 0;
  if (ok && !tsp__scan_peek(s, &c) && s->error)
    ok = tsp__scan_ended(s, error, "the file");
  if (ok && c == '[') {
    ok = saw_events = read_events(&r, s, error);
  } else if (ok && c == '{') {
    ok = read_members(&r, s, &saw_events, error);
    if (ok && !saw_events)
      ok = tsp__fail(error, "no \"traceEvents\" array: not a Chrome trace");
  } else if (ok) {
    ok = tsp__fail(error, "not a Chrome trace: expected a JSON object or array");
  }
  if (ok) {
    GHashTableIter it;
    g_hash_table_iter_init(&it, r.open);
    for (gpointer k, v; ok && g_hash_table_iter_next(&it, &k, &v);)
      if (((GArray *)v)->len > 0)
        ok = tsp__fail(error, "%u \"B\" event%s on tid %" G_GINT64_FORMAT " never end (no \"E\")",
                  ((GArray *)v)->len, ((GArray *)v)->len == 1 ? "" : "s", *(gint64 *)k);
  }
  g_array_unref(r.loc_map);
  g_array_unref(r.concrete_map);
  g_hash_table_unref(r.threads);
  g_hash_table_unref(r.ops);
  g_hash_table_unref(r.other_ops);
  g_hash_table_unref(r.open);
  g_string_chunk_free(r.text);
  if (!ok) {
    tsp_session_free(session);
    return NULL;
  }
  tsp__trim_chunks(session);
  if (options->progress)
    options->progress(1.0, options->progress_data); /* all read */
  return session;
}

tsp_session *tsp_chrome_import_data_with(const char *data, size_t len,
                                         const tsp_import_options *options, GError **error)
{
  tsp_scan s;
  tsp_session *session = tsp__scan_init_text(&s, data, len, &options->limits, error)
                           ? import(&s, options, error) : NULL;
  tsp__scan_clear(&s);
  return session;
}

tsp_session *tsp_chrome_import_data(const char *data, size_t len, GError **error)
{
  tsp_import_options options = tsp_import_options_default();
  return tsp_chrome_import_data_with(data, len, &options, error);
}

tsp_session *tsp_chrome_import_with(const char *path, const tsp_import_options *options,
                                    GError **error)
{
  tsp_scan s;
  if (!tsp__scan_init_file(&s, path, &options->limits, error))
    return NULL;
  GError *e = NULL;
  tsp_session *session = import(&s, options, &e);
  tsp__scan_clear(&s);
  if (e && e->domain == TSP_ERROR && e->code == TSP_ERROR_IO)
    g_propagate_error(error, e); /* it names the file */
  else if (e)
    g_propagate_prefixed_error(error, e, "%s: ", path);
  return session;
}

tsp_session *tsp_chrome_import(const char *path, GError **error)
{
  tsp_import_options options = tsp_import_options_default();
  return tsp_chrome_import_with(path, &options, error);
}
