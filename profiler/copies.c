/* copies.c — the edges of a graph that crossed a device boundary, from the
 * copies a run recorded (not guessed from where ops ran): each copy span
 * of the device collector (device.c) names the input of its op it carried
 * (its node's id) and the op by run and seq, whose event has the op's node
 * and device. */
#include "profiler-private.h"

typedef struct op_key {
  uint64_t run_id;
  uint32_t seq;
} op_key;

static guint op_key_hash(gconstpointer p)
{
  const op_key *k = p;
  return (guint)(k->run_id * 2654435761u) ^ k->seq;
}

static gboolean op_key_equal(gconstpointer a, gconstpointer b)
{
  const op_key *x = a, *y = b;
  return x->run_id == y->run_id && x->seq == y->seq;
}

/* The input a copy span carried, or -1 (not a copy of an op's input). */
static int copied_input(const tsp_session *s, const tsp_event *e)
{
  if (e->kind != TSP_EVENT_DEVICE || e->op != TSP_OP_OTHER || !e->run_id)
    return -1;
  const tsp_node_info *n = tsp_session_node(s, e->traced);
  return n ? n->id : -1;
}

GArray *tsp_copies_compute(const tsp_session *s)
{
  g_return_val_if_fail(s != NULL, NULL);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(tsp_copy));
  /* the copies, keyed by their op, then the ops they name */
  GHashTable *copies = g_hash_table_new_full(op_key_hash, op_key_equal, g_free,
                                             (GDestroyNotify)g_array_unref);
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));) {
      int input = copied_input(s, e);
      if (input < 0)
        continue;
      op_key key = { e->run_id, e->seq };
      GArray *inputs = g_hash_table_lookup(copies, &key);
      if (!inputs) {
        inputs = g_array_new(FALSE, FALSE, sizeof(int));
        g_hash_table_insert(copies, g_memdup2(&key, sizeof key), inputs);
      }
      g_array_append_val(inputs, input);
    }
  }
  for (int t = 0; g_hash_table_size(copies) && t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));) {
      if (e->kind != TSP_EVENT_OP || !(e->node || e->traced))
        continue;
      op_key key = { e->run_id, e->seq };
      GArray *inputs = g_hash_table_lookup(copies, &key);
      for (guint i = 0; inputs && i < inputs->len; i++) {
        tsp_copy c = { e->node ? e->node : e->traced, g_array_index(inputs, int, i), e->device, 1 };
        guint k = 0;
        for (; k < out->len; k++) {
          tsp_copy *o = &g_array_index(out, tsp_copy, k);
          if (o->node == c.node && o->input == c.input && o->device == c.device) {
            o->count++;
            break;
          }
        }
        if (k == out->len)
          g_array_append_val(out, c);
      }
      if (inputs) /* an op's parts (a row run's) are one op: its copies once */
        g_hash_table_remove(copies, &key);
    }
  }
  g_hash_table_unref(copies);
  return out;
}
