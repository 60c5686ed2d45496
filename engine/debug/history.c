/* history.c — step back: the records of the ops that ran last, within a
 * count and a memory budget, oldest dropped first. */
#include "debug-private.h"

typedef struct history_record {
  ts_debug_op op;
  size_t bytes;
} history_record;

void ts__history_init(ts_debug_history *h, int max_ops, size_t max_bytes)
{
  g_queue_init(&h->records);
  h->bytes = 0;
  h->max_ops = max_ops;
  h->max_bytes = max_bytes;
}

static void drop_oldest(ts_debug_history *h)
{
  history_record *r = g_queue_pop_head(&h->records);
  h->bytes -= r->bytes;
  ts_debug_op_clear(&r->op);
  g_free(r);
}

void ts__history_clear(ts_debug_history *h)
{
  while (!g_queue_is_empty(&h->records))
    drop_oldest(h);
}

void ts__history_push(ts_debug_history *h, ts_debug_op *op, size_t bytes)
{
  history_record *r = g_new(history_record, 1);
  r->op = *op;
  r->bytes = bytes;
  *op = (ts_debug_op){ 0 };
  g_queue_push_tail(&h->records, r);
  h->bytes += bytes;
  while (h->records.length > 1 &&
         ((int)h->records.length > h->max_ops || h->bytes > h->max_bytes))
    drop_oldest(h);
}

int ts__history_n(const ts_debug_history *h)
{
  return (int)h->records.length;
}

const ts_debug_op *ts__history_at(const ts_debug_history *h, int i)
{
  history_record *r = i >= 0 ? g_queue_peek_nth((GQueue *)&h->records, (guint)i) : NULL;
  return r ? &r->op : NULL;
}
