/* chrome-export.c — a session as Chrome trace-event JSON (Perfetto,
 * chrome://tracing): complete events ("X") for ops, calls and traces,
 * thread and process names ("M"), flows from each call to its top-level
 * ops and from each op to its device work ("s"/"f"), readable args (node,
 * shape, source line, run, mode), and the session's tables under
 * "tracescope" so that tsp_chrome_import gives the same session back.
 * Times are µs after the session's first event, written exactly (ns /
 * 1000 with three decimals). */
#include "profiler-private.h"

#include <errno.h>
#include <string.h>
#include <zlib.h>

#define PID 1

static void put_str(GString *o, const char *s)
{
  static const char hex[] = "0123456789abcdef";
  g_string_append_c(o, '"');
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\') {
      g_string_append_c(o, '\\');
      g_string_append_c(o, (char)*p);
    } else if (*p < 0x20) {
      g_string_append(o, "\\u00");
      g_string_append_c(o, hex[*p >> 4]);
      g_string_append_c(o, hex[*p & 15]);
    } else {
      g_string_append_c(o, (char)*p);
    }
  }
  g_string_append_c(o, '"');
}

static void put_u64(GString *o, uint64_t v)
{
  char buf[24], *p = buf + sizeof buf;
  *--p = 0;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  g_string_append(o, p);
}

/* ns as µs with three decimals, exactly */
static void put_us(GString *o, uint64_t ns)
{
  put_u64(o, ns / 1000);
  char frac[5] = { '.', (char)('0' + ns % 1000 / 100), (char)('0' + ns % 100 / 10),
                   (char)('0' + ns % 10), 0 };
  g_string_append(o, frac);
}

static void put_key(GString *o, const char *key)
{
  g_string_append_c(o, ',');
  put_str(o, key);
  g_string_append_c(o, ':');
}

static void put_event_head(GString *o, const char *name, const char *cat, const char *ph,
                           uint64_t ts, uint64_t tid)
{
  g_string_append(o, ",\n{\"name\":");
  put_str(o, name);
  g_string_append(o, ",\"cat\":\"");
  g_string_append(o, cat);
  g_string_append(o, "\",\"ph\":\"");
  g_string_append(o, ph);
  g_string_append(o, "\",\"ts\":");
  put_us(o, ts);
  g_string_append(o, ",\"pid\":1,\"tid\":");
  if ((int64_t)tid < 0) { /* another tool's negative tid, as the importer read it */
    g_string_append_c(o, '-');
    tid = -tid;
  }
  put_u64(o, tid);
}

static void put_tables(const tsp_session *s, GString *o, uint64_t base)
{
  g_string_append(o, "\"tracescope\":{\"version\":1,\"base_ns\":\"");
  put_u64(o, base);
  tsp_losses lost = tsp_session_losses(s);
  g_string_append(o, "\",\"lost_events\":\"");
  put_u64(o, lost.events);
  g_string_append(o, "\",\"dropped_device_records\":\"");
  put_u64(o, lost.device_records);
  g_string_append(o, "\",\n\"locs\":[");
  for (guint i = 1; i < s->locs->len; i++) {
    const tsp_loc_info *l = &g_array_index(s->locs, tsp_loc_info, i);
    g_string_append(o, i > 1 ? ",[" : "[");
    put_str(o, l->file);
    g_string_append_c(o, ',');
    put_str(o, l->func);
    g_string_append_printf(o, ",%d]", l->line);
  }
  g_string_append(o, "],\n\"concretes\":[");
  for (guint i = 1; i < s->concretes->len; i++) {
    const tsp_concrete_info *c = &g_array_index(s->concretes, tsp_concrete_info, i);
    g_string_append(o, i > 1 ? ",[" : "[");
    put_str(o, c->function);
    g_string_append_c(o, ',');
    put_str(o, c->signature);
    g_string_append_c(o, ']');
  }
  g_string_append(o, "],\n\"nodes\":[");
  for (guint i = 1; i < s->nodes->len; i++) {
    const tsp_node_info *n = s->nodes->pdata[i];
    g_string_append(o, i > 1 ? ",\n{\"name\":" : "\n{\"name\":");
    put_str(o, n->name);
    put_key(o, "scope");
    put_str(o, n->scope);
    put_key(o, "shape");
    put_str(o, n->shape);
    put_key(o, "op");
    put_str(o, n->op == TSP_OP_OTHER ? "" : ts_op_name((ts_op)n->op));
    put_key(o, "graph");
    put_str(o, tsp_session_string(s, n->graph));
    g_string_append_printf(o, ",\"loc\":%u,\"concrete\":%u,\"id\":%d,\"optimized\":%s,"
                              "\"eager_twin\":%s,\"origins\":[",
                           n->loc, n->concrete, n->id, n->optimized ? "true" : "false",
                           n->has_eager_twin ? "true" : "false");
    for (int k = 0; k < n->n_origins; k++)
      g_string_append_printf(o, k ? ",%u" : "%u", n->origins[k]);
    g_string_append(o, "]}");
  }
  g_string_append(o, "]},\n");
}

static void put_op(const tsp_session *s, GString *o, const tsp_event *e, uint64_t base,
                   uint64_t tid)
{
  const tsp_node_info *node = tsp_session_node(s, e->node), *traced = tsp_session_node(s, e->traced);
  const tsp_node_info *named = node ? node : traced;
  /* a kernel (DEVICE: the op's fields, the device's times) is read back as one */
  put_event_head(o, tsp_event_op_name(s, e), e->kind == TSP_EVENT_DEVICE ? "device" : "op", "X",
                 e->start_ns - base, tid);
  g_string_append(o, ",\"dur\":");
  put_us(o, e->end_ns - e->start_ns);
  g_string_append(o, ",\"args\":{\"mode\":");
  put_str(o, node ? "graph" : "eager");
  if (named) {
    put_key(o, "node");
    put_str(o, named->name);
    put_key(o, "shape");
    put_str(o, named->shape);
    if (*named->scope) {
      put_key(o, "scope");
      put_str(o, named->scope);
    }
  }
  const tsp_loc_info *l = tsp_session_loc(s, e->loc);
  if (*l->file) {
    char *line = tsp__loc_text(s, e->loc);
    put_key(o, "source");
    put_str(o, line);
    g_free(line);
  }
  put_key(o, "device");
  put_str(o, tsp_session_device(s, e->device));
  g_string_append(o, ",\"run\":");
  put_u64(o, e->run_id);
  g_string_append(o, ",\"seq\":");
  put_u64(o, e->seq);
  g_string_append(o, ",\"parent_seq\":");
  put_u64(o, e->parent_seq);
  g_string_append(o, ",\"n\":");
  put_u64(o, e->node);
  g_string_append(o, ",\"t\":");
  put_u64(o, e->traced);
  g_string_append(o, ",\"l\":");
  put_u64(o, e->loc);
  g_string_append(o, "}}");
}

static void put_call(const tsp_session *s, GString *o, const tsp_event *e, uint64_t base,
                     uint64_t tid)
{
  const tsp_concrete_info *c = tsp_session_concrete(s, e->traced);
  put_event_head(o, tsp_session_string(s, e->node), "call", "X", e->start_ns - base, tid);
  g_string_append(o, ",\"dur\":");
  put_us(o, e->end_ns - e->start_ns);
  g_string_append(o, ",\"args\":{\"mode\":");
  put_str(o, e->op == TSP_MODE_GRAPH ? "graph" : "eager");
  g_string_append(o, ",\"run\":");
  put_u64(o, e->run_id);
  put_key(o, "signature");
  put_str(o, c->signature);
  g_string_append(o, ",\"c\":");
  put_u64(o, e->traced);
  g_string_append(o, "}}");
}

static void put_trace(const tsp_session *s, GString *o, const tsp_event *e, uint64_t base,
                      uint64_t tid)
{
  const char *fn = tsp_session_string(s, e->node);
  char *name = g_strdup_printf("trace %s", fn);
  put_event_head(o, name, "trace", "X", e->start_ns - base, tid);
  g_free(name);
  g_string_append(o, ",\"dur\":");
  put_us(o, e->end_ns - e->start_ns);
  g_string_append(o, ",\"args\":{\"function\":");
  put_str(o, fn);
  put_key(o, "signature");
  put_str(o, tsp_session_concrete(s, e->traced)->signature);
  put_key(o, "reason");
  put_str(o, tsp_session_string(s, e->loc));
  g_string_append_printf(o, ",\"reason_code\":%u,\"c\":%u}}", e->op, e->traced);
}

/* A phase (tracing, a pass, the plan, tuning): named for any viewer, its
 * kind, name, detail and depth in args for our reader. */
static void put_phase(const tsp_session *s, GString *o, const tsp_event *e, uint64_t base,
                      uint64_t tid)
{
  const char *name = tsp_session_string(s, e->node);
  char *label = g_strdup_printf("%s %s", ts_phase_kind_name((ts_phase_kind)e->op), name);
  put_event_head(o, label, "phase", "X", e->start_ns - base, tid);
  g_free(label);
  g_string_append(o, ",\"dur\":");
  put_us(o, e->end_ns - e->start_ns);
  g_string_append(o, ",\"args\":{\"function\":");
  put_str(o, name);
  put_key(o, "reason");
  put_str(o, tsp_session_string(s, e->loc));
  g_string_append_printf(o, ",\"reason_code\":%u,\"seq\":%u}}", e->op, e->seq);
}

/* Live bytes as a counter track per kind of memory ("memory": tensors,
 * "arena": the memory planner's), a series per device (Perfetto draws
 * them as graphs); the change, which threads allocating at once make
 * unrecoverable from the values, rides along outside args where viewers
 * ignore it. */
static void put_memory(const tsp_session *s, GString *o, const tsp_event *e, uint64_t base,
                       uint64_t tid)
{
  put_event_head(o, tsp_memory_counter_name(e->op), "memory", "C", e->start_ns - base, tid);
  g_string_append_printf(o, ",\"delta\":%" G_GINT64_FORMAT ",\"args\":{", tsp_memory_delta(e));
  const char *device = tsp_session_device(s, e->device);
  put_str(o, *device ? device : "memory");
  g_string_append_printf(o, ":%" G_GINT64_FORMAT "}}", tsp_memory_live(e));
}

/* A flow from (start_ns, tid) to (to_ns, to_tid), named name, id. */
static void put_flow(GString *o, const char *name, uint64_t id, uint64_t start_ns, uint64_t tid,
                     uint64_t to_ns, uint64_t to_tid)
{
  put_event_head(o, name, "flow", "s", start_ns, tid);
  g_string_append(o, ",\"id\":");
  put_u64(o, id);
  g_string_append(o, "}");
  put_event_head(o, name, "flow", "f", to_ns, to_tid);
  g_string_append(o, ",\"bp\":\"e\",\"id\":");
  put_u64(o, id);
  g_string_append(o, "}");
}

/* An op of a run: its run and sequence number, its event and thread. */
typedef struct run_op {
  uint64_t run;
  uint32_t seq;
  int thread;
  const tsp_event *e;
} run_op;

static guint run_op_hash(gconstpointer p)
{
  const run_op *r = p;
  return g_int64_hash(&r->run) * 31 + r->seq;
}

static gboolean run_op_equal(gconstpointer a, gconstpointer b)
{
  const run_op *x = a, *y = b;
  return x->run == y->run && x->seq == y->seq;
}

/* Flow arrows ("launch") from each op to the device work charged to it
 * (its kernels and copies: same run, same sequence number), as Perfetto
 * links a CUDA launch to its kernel; their ids follow `id`. */
static void put_launch_flows(const tsp_session *s, GString *o, uint64_t base, uint64_t id)
{
  GHashTable *ops = g_hash_table_new_full(run_op_hash, run_op_equal, g_free, NULL);
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));)
      if (e->kind == TSP_EVENT_OP && e->run_id) {
        run_op r = { e->run_id, e->seq, t, e };
        if (!g_hash_table_contains(ops, &r)) /* the first keeps its place */
          g_hash_table_add(ops, g_memdup2(&r, sizeof r));
      }
  }
  for (int t = 0; g_hash_table_size(ops) && t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));) {
      run_op key = { .run = e->run_id, .seq = e->seq };
      const run_op *op;
      if (e->kind != TSP_EVENT_DEVICE || !e->run_id || !(op = g_hash_table_lookup(ops, &key)))
        continue;
      put_flow(o, "launch", ++id, op->e->start_ns - base, tsp_session_thread(s, op->thread)->tid,
               e->start_ns - base, tsp_session_thread(s, t)->tid);
    }
  }
  g_hash_table_unref(ops);
}

/* Flow arrows from the calls to the top-level ops of their runs, then
 * from ops to their device work. */
static void put_flows(const tsp_session *s, GString *o, uint64_t base)
{
  GHashTable *calls = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));)
      if (e->kind == TSP_EVENT_CALL && e->run_id) {
        tsp_event *copy = g_memdup2(e, sizeof *e);
        copy->seq = (uint32_t)t; /* the call's thread */
        g_hash_table_insert(calls, &copy->run_id, copy);
      }
  }
  uint64_t id = 0;
  for (int t = 0; g_hash_table_size(calls) && t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));) {
      const tsp_event *c;
      if (e->kind != TSP_EVENT_OP || e->parent_seq || !e->run_id ||
          !(c = g_hash_table_lookup(calls, &e->run_id)))
        continue;
      put_flow(o, "call", ++id, c->start_ns - base, tsp_session_thread(s, (int)c->seq)->tid,
               e->start_ns - base, tsp_session_thread(s, t)->tid);
    }
  }
  g_hash_table_unref(calls);
  put_launch_flows(s, o, base, id);
}

char *tsp_chrome_export_string(const tsp_session *s, size_t *len)
{
  uint64_t base = UINT64_MAX;
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));)
      base = MIN(base, e->start_ns);
  }
  if (base == UINT64_MAX)
    base = 0;
  GString *o = g_string_sized_new(256 + tsp_session_n_events(s) * 240);
  g_string_append(o, "{\"displayTimeUnit\":\"ns\",\n");
  put_tables(s, o, base);
  g_string_append(o, "\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,"
                     "\"args\":{\"name\":\"tracescope\"}}");
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    const tsp_thread_info *ti = tsp_session_thread(s, t);
    put_event_head(o, "thread_name", "__metadata", "M", 0, ti->tid);
    g_string_append(o, ",\"args\":{\"name\":");
    put_str(o, ti->name);
    g_string_append(o, "}}");
  }
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    uint64_t tid = tsp_session_thread(s, t)->tid;
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));) {
      if (e->kind == TSP_EVENT_OP || e->kind == TSP_EVENT_DEVICE)
        put_op(s, o, e, base, tid);
      else if (e->kind == TSP_EVENT_CALL)
        put_call(s, o, e, base, tid);
      else if (e->kind == TSP_EVENT_MEMORY)
        put_memory(s, o, e, base, tid);
      else if (e->kind == TSP_EVENT_PHASE)
        put_phase(s, o, e, base, tid);
      else
        put_trace(s, o, e, base, tid);
    }
  }
  put_flows(s, o, base);
  g_string_append(o, "\n]}\n");
  if (len)
    *len = o->len;
  return g_string_free(o, FALSE);
}

bool tsp_chrome_export(const tsp_session *s, const char *path, GError **error)
{
  size_t len;
  char *text = tsp_chrome_export_string(s, &len);
  bool ok = true;
  if (g_str_has_suffix(path, ".gz")) {
    gzFile gz = gzopen(path, "wb6");
    size_t done = 0;
    while (gz && done < len) {
      unsigned n = (unsigned)MIN(len - done, (size_t)1 << 30);
      if (gzwrite(gz, text + done, n) != (int)n)
        break;
      done += n;
    }
    ok = gz && done == len;
    int err = errno;
    if ((gz && gzclose(gz) != Z_OK) || !ok) {
      g_set_error(error, TSP_ERROR, TSP_ERROR_IO, "cannot write '%s': %s", path,
                  g_strerror(err ? err : EIO));
      ok = false;
    }
  } else {
    GError *e = NULL;
    if (!(ok = g_file_set_contents(path, text, (gssize)len, &e))) {
      g_set_error(error, TSP_ERROR, TSP_ERROR_IO, "%s", e->message);
      g_error_free(e);
    }
  }
  g_free(text);
  return ok;
}
