/* cuda/cupti_records.c — CUPTI activity records as ts_activity (cupti.h).
 * The record layouts are those of the CUPTI this was built against; the
 * loader refuses another major version.  Timestamps are already on the
 * op events' clock: the backend registers a timestamp callback with CUPTI
 * (cuptiActivityRegisterTimestampCallback). */
#include "cupti.h"

/* One CUDA Graph launch's nodes (ts__cupti_records_launch). */
typedef struct cupti_launch {
  GArray *nodes;        /* ts_activity, TS_ACTIVITY_GRAPH_NODE */
  GHashTable *operands; /* graph node id -> the input its copy carries (nonzero only);
                         * NULL when no node carries one (most launches) */
  bool put;             /* its nodes went out before its first record */
} cupti_launch;

static void launch_free(gpointer data)
{
  cupti_launch *l = data;
  g_array_unref(l->nodes);
  if (l->operands)
    g_hash_table_unref(l->operands);
  g_free(l);
}

void ts__cupti_records_init(ts_cupti_records *r, const char *device)
{
  *r = (ts_cupti_records){
    .device = device,
    .external = g_hash_table_new(g_direct_hash, g_direct_equal),
    .operands = g_hash_table_new(g_direct_hash, g_direct_equal),
    .launches = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, launch_free),
    .pending = g_array_new(FALSE, FALSE, sizeof(ts_activity)),
    .taken = g_array_new(FALSE, FALSE, sizeof(ts_activity)),
    .names = g_string_chunk_new(4096),
  };
}

void ts__cupti_records_clear(ts_cupti_records *r)
{
  g_clear_pointer(&r->external, g_hash_table_unref);
  g_clear_pointer(&r->operands, g_hash_table_unref);
  g_clear_pointer(&r->launches, g_hash_table_unref);
  g_clear_pointer(&r->pending, g_array_unref);
  g_clear_pointer(&r->taken, g_array_unref);
  g_clear_pointer(&r->names, g_string_chunk_free);
}

static const char *copy_name(uint8_t copy_kind)
{
  switch (copy_kind) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "copy host to device";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "copy device to host";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "copy device to device";
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "copy host to host";
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "copy peer to peer";
  default: return "copy";
  }
}

/* The activity of one record; false for kinds that are not activity
 * (external correlations are remembered instead). */
static bool activity_of(ts_cupti_records *r, const CUpti_Activity *rec, ts_activity *a)
{
  *a = (ts_activity){ .device = r->device };
  switch (rec->kind) {
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
  case CUPTI_ACTIVITY_KIND_KERNEL: {
    const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
    a->kind = TS_ACTIVITY_KERNEL;
    a->stream = k->streamId;
    a->correlation = k->correlationId;
    a->graph_node = k->graphNodeId;
    a->start_ns = k->start;
    a->end_ns = k->end;
    a->name = k->name ? g_string_chunk_insert_const(r->names, k->name) : "kernel";
    return true;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    const CUpti_ActivityMemcpy6 *c = (const CUpti_ActivityMemcpy6 *)rec;
    a->kind = TS_ACTIVITY_COPY;
    a->stream = c->streamId;
    a->correlation = c->correlationId;
    a->graph_node = c->graphNodeId;
    a->start_ns = c->start;
    a->end_ns = c->end;
    a->bytes = c->bytes;
    a->name = copy_name(c->copyKind);
    return true;
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
    a->kind = TS_ACTIVITY_MEMSET;
    a->stream = m->streamId;
    a->correlation = m->correlationId;
    a->graph_node = m->graphNodeId;
    a->start_ns = m->start;
    a->end_ns = m->end;
    a->bytes = m->bytes;
    a->name = "memset";
    return true;
  }
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
    const CUpti_ActivitySynchronization2 *s = (const CUpti_ActivitySynchronization2 *)rec;
    a->kind = TS_ACTIVITY_SYNC;
    a->stream = s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s->streamId;
    a->correlation = s->correlationId;
    a->start_ns = s->start;
    a->end_ns = s->end;
    a->name = "synchronize";
    return true;
  }
  case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
    const CUpti_ActivityExternalCorrelation *e = (const CUpti_ActivityExternalCorrelation *)rec;
    if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
      g_hash_table_insert(r->external, GUINT_TO_POINTER(e->correlationId),
                          GSIZE_TO_POINTER((gsize)e->externalId));
    else if (e->externalKind == TS_CUPTI_OPERAND_KIND && e->externalId <= UINT32_MAX)
      g_hash_table_insert(r->operands, GUINT_TO_POINTER(e->correlationId),
                          GUINT_TO_POINTER((guint)e->externalId));
    return false;
  }
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: /* only there for their external correlations */
    return false;
  default:
    r->unknown++;
    return false;
  }
}

int ts__cupti_records_add(ts_cupti_records *r,
                          CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **),
                          uint8_t *buffer, size_t valid)
{
  int n = 0;
  CUpti_Activity *rec = NULL;
  while (valid > 0 && next(buffer, valid, &rec) == CUPTI_SUCCESS) {
    ts_activity a;
    if (activity_of(r, rec, &a))
      g_array_append_val(r->pending, a);
    n++;
  }
  return n;
}

uint64_t ts__cupti_records_launch(ts_cupti_records *r, const ts_activity *nodes,
                                  const uint32_t *operands, int n)
{
  cupti_launch *l = g_new0(cupti_launch, 1);
  l->nodes = g_array_sized_new(FALSE, FALSE, sizeof(ts_activity), (guint)n);
  g_array_append_vals(l->nodes, nodes, (guint)n);
  for (int i = 0; i < n; i++)
    if (operands[i]) {
      if (!l->operands)
        l->operands = g_hash_table_new(g_direct_hash, g_direct_equal);
      g_hash_table_insert(l->operands, GSIZE_TO_POINTER((gsize)nodes[i].graph_node),
                          GUINT_TO_POINTER(operands[i]));
    }
  uint64_t *id = g_new(uint64_t, 1);
  *id = TS_CUPTI_LAUNCH_BIT | ++r->next_launch;
  g_hash_table_insert(r->launches, id, l);
  return *id;
}

/* Launches whose nodes went out, and those before the newest of them
 * (one stream: their records, if any, came first), are done with. */
static gboolean launch_done(gpointer key, gpointer value, gpointer newest)
{
  const cupti_launch *l = value;
  return l->put || *(const uint64_t *)key < *(const uint64_t *)newest;
}

int ts__cupti_records_take(ts_cupti_records *r, const ts_activity **out)
{
  g_array_set_size(r->taken, 0);
  uint64_t newest = 0;
  for (guint i = 0; i < r->pending->len; i++) {
    ts_activity a = g_array_index(r->pending, ts_activity, i);
    /* CUPTI's own ids would collide with the engine's: 0 (no op) unless
     * the launch carried one of ours */
    gpointer op = NULL;
    g_hash_table_lookup_extended(r->external, GUINT_TO_POINTER((guint)a.correlation), NULL, &op);
    uint64_t id = (uint64_t)GPOINTER_TO_SIZE(op);
    cupti_launch *l = a.graph_node ? g_hash_table_lookup(r->launches, &id) : NULL;
    if (l && !l->put) { /* its launch's nodes first */
      g_array_append_vals(r->taken, l->nodes->data, l->nodes->len);
      l->put = true;
      newest = MAX(newest, id);
    }
    if (a.kind == TS_ACTIVITY_COPY) { /* which input of its op it carried, if any */
      GHashTable *by = a.graph_node ? (l ? l->operands : NULL) : r->operands;
      gpointer key = a.graph_node ? GSIZE_TO_POINTER((gsize)a.graph_node)
                                  : GUINT_TO_POINTER((guint)a.correlation);
      a.operand = by ? GPOINTER_TO_UINT(g_hash_table_lookup(by, key)) : 0;
    }
    a.correlation = id;
    g_array_append_val(r->taken, a);
  }
  g_array_set_size(r->pending, 0);
  g_hash_table_foreach_remove(r->launches, launch_done, &newest);
  g_hash_table_remove_all(r->external);
  g_hash_table_remove_all(r->operands);
  *out = (const ts_activity *)(void *)r->taken->data;
  return (int)r->taken->len;
}
