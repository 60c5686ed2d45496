/* device.c — the device collector: the activity records of the engine's
 * devices (ts_activity_subscribe, tracescope-backend.h) charged to the ops
 * and graph nodes that caused them, as DEVICE events on a track per
 * device stream, with the copies and memsets between them.
 *
 * The CPU collector hands over each op that ran on a device or had
 * inputs copied to where it ran (its event, with the session's indexes,
 * under its correlation id).  A kernel or copy record names its op by that
 * correlation id; one replayed from a captured plan names a graph node
 * instead, and the plan's GRAPH_NODE records say which op of the run each
 * node stood for.  Records whose op is not known yet (a batch delivered
 * before the op's event) wait for the next flush; copies whose op never
 * came (none ran on a device or copied) are kept uncharged at the end. */
#include "profiler-private.h"

#include <tracescope-backend.h>

struct tsp_devices {
  GMutex lock;              /* the tables: ops come from the engine's threads */
  const char *cpu;          /* the CPU backend's name: its ops have no records */
  GHashTable *ops;          /* correlation -> tsp_event * (the op's, owned), until stop: an op
                             * may launch several kernels */
  GHashTable *nodes;        /* graph node id -> correlation */
  GHashTable *streams;      /* device name -> tsp_thread * */
  GHashTable *transfers;    /* a copy's or memset's name and operand -> its node (TSP_OP_OTHER) */
  GArray *pending;          /* ts_activity whose op was not known */
  uint64_t dropped_before;  /* ts_activity_dropped() at start: the backends count since start-up */
};

/* s->device_state is set while the CPU collector's listener may already run. */
bool tsp__device_op_wanted(const tsp_session *s, const ts_op_event *op)
{
  const struct tsp_devices *d = __atomic_load_n(&s->device_state, __ATOMIC_ACQUIRE);
  return d && (op->device != d->cpu || op->n_copied);
}

void tsp__device_op(tsp_session *s, uint64_t correlation, const tsp_event *e)
{
  struct tsp_devices *d = __atomic_load_n(&s->device_state, __ATOMIC_ACQUIRE);
  g_mutex_lock(&d->lock);
  g_hash_table_insert(d->ops, GSIZE_TO_POINTER(correlation), g_memdup2(e, sizeof *e));
  g_mutex_unlock(&d->lock);
}

static tsp_thread *stream_of(tsp_session *s, struct tsp_devices *d, const char *device)
{
  tsp_thread *t = g_hash_table_lookup(d->streams, device);
  if (!t) {
    char *name = g_strdup_printf("%s stream", device);
    t = tsp__thread_new(s, name, 0);
    g_free(name);
    g_hash_table_insert(d->streams, g_strdup(device), t);
  }
  return t;
}

/* A copy or memset on its stream's track, a span named for what it is
 * ("host to device": op TSP_OP_OTHER, traced that name's node, whose id is
 * the input of its op the copy carried, -1 for none), charged to the op
 * that needed it (its run, seq and location; the op's event, found by run
 * and seq, has its node), or to none. */
static void record_transfer(tsp_session *s, struct tsp_devices *d, const ts_activity *r,
                            const tsp_event *op)
{
  const char *name = r->name ? r->name : r->kind == TS_ACTIVITY_COPY ? "copy" : "memset";
  int input = r->kind == TS_ACTIVITY_COPY ? (int)r->operand - 1 : -1;
  char *key = g_strdup_printf("%s#%d", name, input);
  gpointer v = g_hash_table_lookup(d->transfers, key);
  uint32_t node = GPOINTER_TO_UINT(v);
  if (!v) {
    tsp_node_info info = { .name = name, .op = TSP_OP_OTHER, .id = input };
    node = tsp_add_node(s, &info);
    g_hash_table_insert(d->transfers, key, GUINT_TO_POINTER(node));
  } else {
    g_free(key);
  }
  tsp_event e = { .start_ns = r->start_ns, .end_ns = r->end_ns, .traced = node, .op = TSP_OP_OTHER,
                  .kind = TSP_EVENT_DEVICE, .device = tsp_intern_device(s, r->device) };
  if (op) {
    e.run_id = op->run_id;
    e.seq = op->seq;
    e.parent_seq = op->parent_seq;
    e.loc = op->loc; /* node stays 0: an OTHER event's name is its node's */
  }
  tsp__thread_append(stream_of(s, d, r->device), &e);
}

static bool is_transfer(const ts_activity *r)
{
  return r->kind == TS_ACTIVITY_COPY || r->kind == TS_ACTIVITY_MEMSET;
}

/* Charges one record (lock held); false if its op is not known yet. */
static bool charge(tsp_session *s, struct tsp_devices *d, const ts_activity *r)
{
  if (r->kind == TS_ACTIVITY_GRAPH_NODE) {
    g_hash_table_insert(d->nodes, GSIZE_TO_POINTER(r->graph_node),
                        GSIZE_TO_POINTER(r->correlation));
    return true;
  }
  if (r->kind != TS_ACTIVITY_KERNEL && !is_transfer(r))
    return true; /* syncs */
  uint64_t corr = r->graph_node
                    ? GPOINTER_TO_SIZE(g_hash_table_lookup(d->nodes, GSIZE_TO_POINTER(r->graph_node)))
                    : r->correlation;
  if (is_transfer(r) && !corr) {
    record_transfer(s, d, r, NULL); /* no op's: a host read of a result, a variable made */
    return true;
  }
  const tsp_event *op = g_hash_table_lookup(d->ops, GSIZE_TO_POINTER(corr));
  if (!op)
    return false;
  if (is_transfer(r)) {
    record_transfer(s, d, r, op);
    return true;
  }
  tsp_event e = *op;
  e.kind = TSP_EVENT_DEVICE;
  e.start_ns = r->start_ns;
  e.end_ns = r->end_ns;
  tsp__thread_append(stream_of(s, d, r->device), &e);
  return true; /* the op stays: it may launch more kernels (im2col, then a product) */
}

static void on_activity(const ts_activity *records, int n, void *data)
{
  tsp_session *s = data;
  struct tsp_devices *d = s->device_state;
  g_mutex_lock(&d->lock);
  for (int i = 0; i < n; i++)
    if (!charge(s, d, &records[i]))
      g_array_append_val(d->pending, records[i]);
  g_mutex_unlock(&d->lock);
}

static void devices_free(struct tsp_devices *d)
{
  g_hash_table_unref(d->ops);
  g_hash_table_unref(d->nodes);
  g_hash_table_unref(d->streams);
  g_hash_table_unref(d->transfers);
  g_array_unref(d->pending);
  g_mutex_clear(&d->lock);
  g_free(d);
}

static bool device_start(tsp_session *s, void *data, GError **error)
{
  struct tsp_devices *d = g_new0(struct tsp_devices, 1);
  g_mutex_init(&d->lock);
  d->cpu = ts_backend_name(ts_backend_cpu());
  d->ops = g_hash_table_new_full(NULL, NULL, NULL, g_free);
  d->nodes = g_hash_table_new(NULL, NULL);
  d->streams = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  d->transfers = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  d->pending = g_array_new(FALSE, FALSE, sizeof(ts_activity));
  d->dropped_before = ts_activity_dropped();
  __atomic_store_n(&s->device_state, d, __ATOMIC_RELEASE);
  if (!ts_activity_subscribe(on_activity, s)) {
    ts_error *e = ts_error_take();
    g_set_error(error, TSP_ERROR, TSP_ERROR_IO, "device activity: %s", e ? e->message : "?");
    ts_error_free(e);
    __atomic_store_n(&s->device_state, NULL, __ATOMIC_RELEASE);
    devices_free(d);
    return false;
  }
  return true;
}

/* Everything the devices hold, then what waited for its op. */
static void device_flush(tsp_session *s, void *data)
{
  ts_activity_flush();
  struct tsp_devices *d = s->device_state;
  g_mutex_lock(&d->lock);
  GArray *waiting = d->pending;
  d->pending = g_array_new(FALSE, FALSE, sizeof(ts_activity));
  for (guint i = 0; i < waiting->len; i++)
    if (!charge(s, d, &g_array_index(waiting, ts_activity, i)))
      g_array_append_val(d->pending, g_array_index(waiting, ts_activity, i));
  g_mutex_unlock(&d->lock);
  g_array_unref(waiting);
}

static void device_stop(tsp_session *s, void *data)
{
  ts_activity_unsubscribe(on_activity, s);
  struct tsp_devices *d = s->device_state;
  for (guint i = 0; i < d->pending->len; i++) /* copies whose op never came: kept */
    if (is_transfer(&g_array_index(d->pending, ts_activity, i)))
      record_transfer(s, d, &g_array_index(d->pending, ts_activity, i), NULL);
  s->losses.device_records += ts_activity_dropped() - d->dropped_before;
  __atomic_store_n(&s->device_state, NULL, __ATOMIC_RELEASE);
  devices_free(d);
}

const tsp_collector_i tsp_device_collector = { "devices", device_start, device_stop,
                                               device_flush };
