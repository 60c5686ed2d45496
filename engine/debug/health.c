/* health.c — health mode: per op of the watched thread, the NaN/Inf
 * counts of its outputs (and, at TS_HEALTH_STATS, min/max/mean), and the
 * first op that made a NaN or an Inf; eager and graph mode alike, never
 * pausing.  An OP_END listener filtered to the thread; names and locations
 * are copied once per distinct pointer, so a record costs no allocation. */
#include "debug-private.h"

struct ts_health {
  ts_health_level level;
  pthread_t thread;
  int listener;
  GArray *ops;          /* ts_health_op */
  int64_t first;        /* index of the first op with a NaN or Inf; -1 */
  GHashTable *strings;  /* borrowed pointer -> owned copy */
};

/* The report's own copy of a string the engine or a module owns. */
static const char *intern(ts_health *h, const char *s)
{
  if (!s)
    return NULL;
  char *copy = g_hash_table_lookup(h->strings, s);
  if (!copy) {
    copy = g_strdup(s);
    g_hash_table_insert(h->strings, (gpointer)s, copy);
  }
  return copy;
}

static void on_op_end(const ts_event *e, void *data)
{
  ts_health *h = data;
  if (!pthread_equal(pthread_self(), h->thread))
    return;
  const ts_op_event *ev = &e->op;
  const ts_node *node = ev->node ? ev->node : ev->traced;
  ts_health_op r = {
    .run_id = ev->run_id, .seq = ev->seq, .op = ev->op, .op_name = ev->op_name,
    .node = node ? intern(h, ts_node_name(node)) : NULL,
    .file = intern(h, ev->loc.file), .func = intern(h, ev->loc.func), .line = ev->loc.line,
  };
  for (int i = 0; i < ev->n_outputs; i++) {
    const ts_tensor *t = ev->outputs[i];
    if (h->level == TS_HEALTH_STATS) {
      ts_tensor_stats st;
      if (ts_tensor_stats_compute(t, &st)) {
        ts_tensor_stats all = { r.n_elements, r.n_nan, r.n_inf, 0, r.min, r.max, r.mean, 0 };
        ts__stats_merge(&all, &st);
        r.n_elements = all.n;
        r.n_nan = all.n_nan;
        r.n_inf = all.n_inf;
        r.min = all.min;
        r.max = all.max;
        r.mean = all.mean;
      }
      continue;
    }
    int64_t nan, inf;
    ts__count_nonfinite(t, &nan, &inf);
    r.n_elements += t->size > 0 ? t->size : 0;
    r.n_nan += nan;
    r.n_inf += inf;
  }
  if (h->first < 0 && (r.n_nan > 0 || r.n_inf > 0))
    h->first = (int64_t)h->ops->len;
  g_array_append_val(h->ops, r);
}

ts_health *ts_health_start(ts_health_level level)
{
  ts_health *h = g_new0(ts_health, 1);
  h->level = level;
  h->thread = pthread_self();
  h->ops = g_array_sized_new(FALSE, FALSE, sizeof(ts_health_op), 1024);
  h->first = -1;
  h->strings = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  h->listener = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_op_end, h);
  if (!h->listener) {
    ts_health_free(h);
    return NULL;
  }
  return h;
}

void ts_health_stop(ts_health *h)
{
  g_return_if_fail(h != NULL);
  ts_listener_remove(h->listener);
  h->listener = 0;
}

void ts_health_free(ts_health *h)
{
  if (!h)
    return;
  if (h->listener)
    ts_health_stop(h);
  g_array_unref(h->ops);
  g_hash_table_unref(h->strings);
  g_free(h);
}

int64_t ts_health_n_ops(const ts_health *h)
{
  TS_CHECK_ARG(h != NULL, 0);
  return (int64_t)h->ops->len;
}

const ts_health_op *ts_health_get(const ts_health *h, int64_t i)
{
  TS_CHECK_ARG(h != NULL, NULL);
  return i >= 0 && i < (int64_t)h->ops->len ? &g_array_index(h->ops, ts_health_op, i) : NULL;
}

const ts_health_op *ts_health_first_nonfinite(const ts_health *h)
{
  TS_CHECK_ARG(h != NULL, NULL);
  return h->first >= 0 ? &g_array_index(h->ops, ts_health_op, h->first) : NULL;
}

void ts_health_reset(ts_health *h)
{
  g_return_if_fail(h != NULL);
  g_array_set_size(h->ops, 0);
  h->first = -1;
}
