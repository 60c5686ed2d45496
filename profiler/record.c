/* record.c — the CPU collector: the engine's OP_END and TRACE events into
 * the calling thread's chunk.  OP_END carries the start time too, so
 * OP_BEGIN is not subscribed (half the listener calls).  Per event: a
 * thread-local lookup, two cache probes (node, source location), one
 * 48-byte store; the session's tables are locked only on a cache miss. */
#include "profiler-private.h"

#include <string.h>

#define CACHE_SIZE 1024 /* direct-mapped, per thread */

typedef struct cache_entry {
  const void *key;
  int line;
  uint32_t value;
} cache_entry;

/* The calling thread's caches, for one session at a time. */
static _Thread_local struct {
  uint64_t session;
  cache_entry nodes[CACHE_SIZE];
  cache_entry locs[CACHE_SIZE];
  const ts_concrete *concrete;
  uint32_t concrete_index;
  const char *device;
  uint8_t device_index;
} cache;

static inline size_t slot(const void *p, int line)
{
  uintptr_t x = (uintptr_t)p ^ ((uintptr_t)line * 0x9e3779b1u);
  return (x >> 4 ^ x >> 14) & (CACHE_SIZE - 1);
}

static void cache_reset(tsp_session *s)
{
  memset(&cache, 0, sizeof cache);
  cache.session = s->id;
}

static uint32_t node_index(tsp_session *s, const ts_node *n, const ts_concrete *cf)
{
  if (!n)
    return 0;
  cache_entry *e = &cache.nodes[slot(n, 0)];
  if (G_UNLIKELY(e->key != n))
    *e = (cache_entry){ n, 0, tsp_intern_ts_node(s, n, cf) };
  return e->value;
}

static uint32_t loc_index(tsp_session *s, ts_loc loc)
{
  if (!loc.file)
    return 0;
  cache_entry *e = &cache.locs[slot(loc.file, loc.line)];
  if (G_UNLIKELY(e->key != loc.file || e->line != loc.line))
    *e = (cache_entry){ loc.file, loc.line, tsp_intern_loc(s, loc.file, loc.func, loc.line) };
  return e->value;
}

static void record_op(tsp_session *s, const ts_op_event *op)
{
  if (G_UNLIKELY(cache.session != s->id))
    cache_reset(s);
  if (G_UNLIKELY(op->device != cache.device)) {
    cache.device = op->device;
    cache.device_index = tsp_intern_device(s, op->device);
  }
  tsp_thread *t = tsp__thread_self(s);
  tsp_event e = {
    .start_ns = op->start_ns,
    .end_ns = op->end_ns,
    .run_id = op->run_id,
    .seq = (uint32_t)op->seq,
    .parent_seq = (uint32_t)op->parent_seq,
    .node = node_index(s, op->node, op->concrete),
    .traced = node_index(s, op->traced, op->concrete),
    .loc = loc_index(s, op->loc),
    .op = (uint16_t)op->op,
    .kind = TSP_EVENT_OP,
    .device = cache.device_index,
  };
  tsp__thread_append(t, &e);
  if (op->run_id) {
    t->last_run = op->run_id;
    if (G_UNLIKELY(op->concrete != cache.concrete)) {
      cache.concrete = op->concrete;
      cache.concrete_index = tsp_intern_ts_concrete(s, op->concrete);
    }
    t->last_concrete = cache.concrete_index;
  }
}

static void record_trace(tsp_session *s, const ts_trace_event *tr)
{
  uint64_t now = ts_now_ns();
  tsp_event e = {
    .start_ns = now - tr->duration_ns,
    .end_ns = now,
    .node = tsp_intern_string(s, tr->function_name),
    .traced = tsp_intern_ts_concrete(s, tr->concrete),
    .loc = tsp_intern_string(s, tr->reason_text),
    .op = (uint16_t)tr->reason,
    .kind = TSP_EVENT_TRACE,
  };
  tsp_record(s, &e);
}

static void on_event(const ts_event *ev, void *data)
{
  if (ev->kind == TS_EVENT_OP_END)
    record_op(data, &ev->op);
  else if (ev->kind == TS_EVENT_TRACE)
    record_trace(data, &ev->trace);
}

static bool cpu_start(tsp_session *s, void *data, GError **error)
{
  s->listener = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END) | TS_EVENT_MASK(TS_EVENT_TRACE),
                                on_event, s);
  if (!s->listener) {
    ts_error *e = ts_error_take();
    g_set_error(error, TSP_ERROR, TSP_ERROR_IO, "cannot listen to the engine: %s",
                e ? e->message : "unknown error");
    ts_error_free(e);
    return false;
  }
  return true;
}

/* Removal waits for callbacks in flight: afterwards the chunks are still. */
static void cpu_stop(tsp_session *s, void *data)
{
  ts_listener_remove(s->listener);
  s->listener = 0;
}

const tsp_collector_i tsp_cpu_collector = { "CPU", cpu_start, cpu_stop, NULL };

/* ---- calls ------------------------------------------------------------------------ */

uint64_t tsp_call_begin(tsp_session *s)
{
  tsp__thread_self(s)->last_run = 0;
  return ts_now_ns();
}

void tsp_call_end(tsp_session *s, uint64_t start_ns, const char *function, tsp_mode mode)
{
  uint64_t end = ts_now_ns();
  tsp_thread *t = tsp__thread_self(s);
  tsp_event e = {
    .start_ns = start_ns,
    .end_ns = end,
    .run_id = t->last_run,
    .node = tsp_intern_string(s, function),
    .traced = t->last_run ? t->last_concrete : 0,
    .op = (uint16_t)mode,
    .kind = TSP_EVENT_CALL,
  };
  tsp__thread_append(t, &e);
}
