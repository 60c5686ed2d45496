/* record.c — the CPU collector: the engine's OP_END and TRACE events into
 * the calling thread's chunk, PHASE_END events onto a track of their own.  OP_END carries the start time too, so
 * OP_BEGIN is not subscribed (half the listener calls).  Per event: a
 * thread-local lookup, one cache probe in graph mode (the node run gives
 * its traced node and source location too) or two eagerly (traced node,
 * source location), one 48-byte store; the session's tables are locked
 * only on a cache miss.  The memory collector: MEMORY events the same way. */
#include "profiler-private.h"

/* Per recording thread: what the last events named, so that the session's
 * tables (and their lock) are needed only on a miss.  Nodes: a two-way
 * set-associative cache (an op and the traced node it stands for may hash
 * alike; a model's hundreds of nodes must not evict each other each call). */
#define NODE_SETS 4096
#define LOC_SLOTS 1024
#define STEP_SLOTS 4096

typedef struct cache_entry {
  const void *key;
  int line;
  uint32_t value;
} cache_entry;

/* A node run in graph mode: its index, its traced node's and its location's.
 * Kept by the op's sequence number in its run: a graph runs its nodes in
 * the same order every call, so the entries are read in order (the cache
 * lines are prefetched) and the key is checked. */
typedef struct step_entry {
  const ts_node *key;
  uint32_t node, traced, loc;
} step_entry;

struct tsp_cache {
  step_entry steps[STEP_SLOTS];
  cache_entry nodes[NODE_SETS][2];
  cache_entry locs[LOC_SLOTS];
  const ts_concrete *concrete;
  uint32_t concrete_index;
  const char *device;
  uint8_t device_index;
};

static inline size_t hash_bits(const void *p, int line, int bits)
{
  uint64_t x = ((uint64_t)(uintptr_t)p ^ (uint64_t)line) * 0x9e3779b97f4a7c15ull;
  return (size_t)(x >> (64 - bits));
}

static uint32_t node_index(tsp_session *s, struct tsp_cache *c, const ts_node *n,
                           const ts_concrete *cf)
{
  if (!n)
    return 0;
  cache_entry *set = c->nodes[hash_bits(n, 0, 12)];
  if (G_LIKELY(set[0].key == n))
    return set[0].value;
  cache_entry hit = set[1].key == n ? set[1] : (cache_entry){ n, 0, tsp_intern_ts_node(s, n, cf) };
  set[1] = set[0]; /* the newest first, the other kept */
  set[0] = hit;
  return hit.value;
}

static uint32_t loc_index(tsp_session *s, struct tsp_cache *c, ts_loc loc)
{
  if (!loc.file)
    return 0;
  cache_entry *e = &c->locs[hash_bits(loc.file, loc.line, 10)];
  if (G_UNLIKELY(e->key != loc.file || e->line != loc.line))
    *e = (cache_entry){ loc.file, loc.line, tsp_intern_loc(s, loc.file, loc.func, loc.line) };
  return e->value;
}

/* A graph step's indexes: what the node runs as is the same on every run
 * (ts_op_event: `traced` is the node's single origin, `loc` the node's). */
static const step_entry *step_indexes(tsp_session *s, struct tsp_cache *c, const ts_op_event *op)
{
  step_entry *e = &c->steps[op->seq % STEP_SLOTS];
  if (G_UNLIKELY(e->key != op->node))
    *e = (step_entry){ op->node, node_index(s, c, op->node, op->concrete),
                       node_index(s, c, op->traced, op->concrete), loc_index(s, c, op->loc) };
  return e;
}

static void record_op(tsp_session *s, const ts_op_event *op)
{
  tsp_thread *t = tsp__thread_self(s);
  struct tsp_cache *c = t->cache;
  if (G_UNLIKELY(!c))
    c = t->cache = g_new0(struct tsp_cache, 1);
  if (G_UNLIKELY(op->device != c->device)) {
    c->device = op->device;
    c->device_index = tsp_intern_device(s, op->device);
  }
  uint32_t node = 0, traced, loc;
  if (op->node) {
    const step_entry *step = step_indexes(s, c, op);
    node = step->node;
    traced = step->traced;
    loc = step->loc;
  } else {
    traced = node_index(s, c, op->traced, op->concrete);
    loc = loc_index(s, c, op->loc);
  }
  tsp_event e = {
    .start_ns = op->start_ns,
    .end_ns = op->end_ns,
    .run_id = op->run_id,
    .seq = (uint32_t)op->seq,
    .parent_seq = (uint32_t)op->parent_seq,
    .node = node,
    .traced = traced,
    .loc = loc,
    .op = (uint16_t)op->op,
    .kind = TSP_EVENT_OP,
    .device = c->device_index,
  };
  tsp__thread_append(t, &e);
  if (G_UNLIKELY(tsp__device_op_wanted(s, op)))
    tsp__device_op(s, op->correlation, &e);
  if (op->run_id) {
    t->last_run = op->run_id;
    if (G_UNLIKELY(op->concrete != c->concrete)) {
      c->concrete = op->concrete;
      c->concrete_index = tsp_intern_ts_concrete(s, op->concrete);
    }
    t->last_concrete = c->concrete_index;
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

/* Phases are few (a handful a trace): every thread's go to one track
 * under a lock, so that the timeline shows them together. */
static void record_phase(tsp_session *s, const ts_phase_event *p)
{
  tsp_event e = {
    .start_ns = p->start_ns,
    .end_ns = p->end_ns,
    .seq = (uint32_t)p->depth,
    .node = tsp_intern_string(s, p->name),
    .loc = tsp_intern_string(s, p->detail ? p->detail : ""),
    .op = (uint16_t)p->phase,
    .kind = TSP_EVENT_PHASE,
  };
  tsp__thread_self(s); /* the thread's own track first: the phases' sits below it */
  g_mutex_lock(&s->phase_lock);
  if (!s->phases)
    s->phases = tsp__thread_new(s, TSP_PHASE_TRACK, TSP__PHASE_TID);
  tsp__thread_append(s->phases, &e);
  g_mutex_unlock(&s->phase_lock);
}

static void record_memory(tsp_session *s, const ts_memory_event *m)
{
  tsp_thread *t = tsp__thread_self(s);
  struct tsp_cache *c = t->cache;
  if (G_UNLIKELY(!c))
    c = t->cache = g_new0(struct tsp_cache, 1);
  tsp_event e;
  tsp_memory_event_init(&e, ts_now_ns(), m->delta_bytes, m->live_bytes,
                        tsp_intern_device(s, m->device), m->what, loc_index(s, c, m->loc));
  tsp__thread_append(t, &e);
}

static void on_event(const ts_event *ev, void *data)
{
  if (ev->kind == TS_EVENT_OP_END)
    record_op(data, &ev->op);
  else if (ev->kind == TS_EVENT_TRACE)
    record_trace(data, &ev->trace);
  else if (ev->kind == TS_EVENT_PHASE_END)
    record_phase(data, &ev->phase);
}

static void on_memory(const ts_event *ev, void *data)
{
  record_memory(data, &ev->memory);
}

static int listen_engine(tsp_session *s, uint32_t mask, ts_listener_fn fn, GError **error)
{
  int id = ts_listener_add(mask, fn, s);
  if (!id) {
    ts_error *e = ts_error_take();
    g_set_error(error, TSP_ERROR, TSP_ERROR_IO, "cannot listen to the engine: %s",
                e ? e->message : "unknown error");
    ts_error_free(e);
  }
  return id;
}

static bool cpu_start(tsp_session *s, void *data, GError **error)
{
  /* per-thread chunks: a call's pieces on the pool's threads record at once */
  s->listener = listen_engine(s, TS_EVENT_MASK(TS_EVENT_OP_END) | TS_EVENT_MASK(TS_EVENT_TRACE) |
                                   TS_EVENT_MASK(TS_EVENT_PHASE_END) | TS_LISTENER_CONCURRENT,
                              on_event, error);
  return s->listener != 0;
}

/* Removal waits for callbacks in flight: afterwards the chunks are still. */
static void cpu_stop(tsp_session *s, void *data)
{
  ts_listener_remove(s->listener);
  s->listener = 0;
}

const tsp_collector_i tsp_cpu_collector = { "CPU", cpu_start, cpu_stop, NULL };

/* Memory: a listener of its own, so that sessions without it pay nothing. */
static bool memory_start(tsp_session *s, void *data, GError **error)
{
  s->memory_listener = listen_engine(s, TS_EVENT_MASK(TS_EVENT_MEMORY) | TS_LISTENER_CONCURRENT,
                                     on_memory, error);
  return s->memory_listener != 0;
}

static void memory_stop(tsp_session *s, void *data)
{
  ts_listener_remove(s->memory_listener);
  s->memory_listener = 0;
}

const tsp_collector_i tsp_memory_collector = { "memory", memory_start, memory_stop, NULL };

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
