/* diff.c — two recordings, group by group: which ops got slower.  Rows
 * meet by their key (the op, node, line or scope name), so two traces of
 * the same program meet whatever tables their sessions hold. */
#include "profiler-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What a row changed by: its median op time times its runs, B less A. */
static double change_ns(const tsp_diff_row *r)
{
  return r->p50_ns[1] * (double)r->count[1] - r->p50_ns[0] * (double)r->count[0];
}

static int cmp_row(const void *a, const void *b)
{
  const tsp_diff_row *x = a, *y = b;
  double cx = fabs(change_ns(x)), cy = fabs(change_ns(y));
  if (cx != cy)
    return cx < cy ? 1 : -1;
  return strcmp(x->key, y->key);
}

tsp_diff *tsp_diff_compute(const tsp_session *a, const tsp_session *b, tsp_group_by by)
{
  const tsp_stats *st[2] = { tsp_stats_compute(a, by, &TSP_FILTER_ALL),
                             tsp_stats_compute(b, by, &TSP_FILTER_ALL) };
  tsp_diff *d = g_new0(tsp_diff, 1);
  GHashTable *index = g_hash_table_new(g_str_hash, g_str_equal); /* key -> row + 1 */
  GArray *rows = g_array_new(FALSE, TRUE, sizeof(tsp_diff_row));
  for (int side = 0; side < 2; side++) {
    d->self_ns[side] = st[side]->self_ns;
    d->wall_ns[side] = st[side]->wall_ns;
    for (int i = 0; i < st[side]->n; i++) {
      const tsp_stat *r = &st[side]->rows[i];
      guint k = GPOINTER_TO_UINT(g_hash_table_lookup(index, r->key));
      if (!k) {
        tsp_diff_row row = { .key = g_strdup(r->key) };
        g_array_append_val(rows, row);
        k = rows->len;
        g_hash_table_insert(index, g_array_index(rows, tsp_diff_row, k - 1).key, GUINT_TO_POINTER(k));
      }
      tsp_diff_row *row = &g_array_index(rows, tsp_diff_row, k - 1);
      row->count[side] = r->count;
      row->p50_ns[side] = tsp_stat_time_p50_ns(r);
      row->min_ns[side] = tsp_stat_time_min_ns(r);
      row->self_ns[side] = tsp_stat_time_ns(r);
      row->host_p50_ns[side] = r->self_p50_ns;
      row->device[side] = g_strdup(r->device);
      row->device_ran[side] = r->device_count > 0;
    }
  }
  for (guint k = 0; k < rows->len; k++) {
    tsp_diff_row *row = &g_array_index(rows, tsp_diff_row, k);
    row->ratio = row->p50_ns[0] > 0 && row->p50_ns[1] > 0 ? row->p50_ns[1] / row->p50_ns[0] : 0;
    row->only = !row->count[1] ? "only in A" : !row->count[0] ? "only in B" : NULL;
  }
  if (rows->len > 1) /* an empty GArray's data may be NULL */
    qsort(rows->data, rows->len, sizeof(tsp_diff_row), cmp_row);
  d->n = (int)rows->len;
  d->rows = (tsp_diff_row *)(void *)g_array_free(rows, FALSE);
  g_hash_table_unref(index);
  tsp_stats_free((tsp_stats *)st[0]);
  tsp_stats_free((tsp_stats *)st[1]);
  return d;
}

void tsp_diff_free(tsp_diff *d)
{
  if (!d)
    return;
  for (int i = 0; i < d->n; i++) {
    g_free(d->rows[i].key);
    g_free(d->rows[i].device[0]);
    g_free(d->rows[i].device[1]);
  }
  g_free(d->rows);
  g_free(d);
}
