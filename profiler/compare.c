/* compare.c — eager against graph, op by op.  Eager ops and graph nodes
 * meet at the traced node they stand for (ts_op_event.traced, and a graph
 * node's provenance); what runs in one mode only gets a row of its own. */
#include "profiler-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_call_ns(const tsp_session *s, const tsp_filter *f, int *n)
{
  GArray *calls = tsp_session_calls(s, f);
  GArray *d = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint i = 0; i < calls->len; i++) {
    const tsp_call *c = &g_array_index(calls, tsp_call, i);
    double ns = (double)(c->end_ns - c->start_ns);
    g_array_append_val(d, ns);
  }
  *n = (int)d->len;
  double m = 0;
  if (d->len) {
    /* the median: robust to a stray slow call */
    qsort(d->data, d->len, sizeof(double), cmp_double);
    m = tsp_percentile((double *)d->data, d->len, 50);
  }
  g_array_unref(d);
  g_array_unref(calls);
  return m;
}

static int cmp_row(const void *a, const void *b)
{
  const tsp_compare_row *x = a, *y = b;
  double mx = MAX(x->eager_ns, x->graph_ns), my = MAX(y->eager_ns, y->graph_ns);
  if (mx != my)
    return mx < my ? 1 : -1;
  return strcmp(x->name, y->name);
}

/* A row for each op identity of st (one mode), by key: the node (traced,
 * or fused), or for eager ops without a twin the stat's key.  An op's time
 * per call is its median self time times its runs per call, so that one
 * disturbed run does not move the row. */
static void add_rows(const tsp_session *s, const tsp_stats *st, bool graph, int n_calls,
                     GHashTable *index, GArray *rows)
{
  for (int i = 0; i < st->n; i++) {
    const tsp_stat *r = &st->rows[i];
    char *key = r->node ? g_strdup_printf("#%u", r->node) : g_strdup(r->key);
    gpointer v;
    guint k;
    if (g_hash_table_lookup_extended(index, key, NULL, &v)) {
      k = GPOINTER_TO_UINT(v);
      g_free(key);
    } else {
      const tsp_node_info *n = tsp_session_node(s, r->node);
      tsp_compare_row row = {
        .name = g_strdup(r->key),
        .op = g_strdup(r->op >= 0 ? (r->op == TSP_OP_OTHER ? r->key : ts_op_name((ts_op)r->op)) : "?"),
        .source = n ? tsp__loc_text(s, n->loc) : g_strdup(strstr(r->key, " at ") ? strstr(r->key, " at ") + 4 : ""),
        .node = r->node,
        .parent = -1,
      };
      k = rows->len;
      g_array_append_val(rows, row);
      g_hash_table_insert(index, key, GUINT_TO_POINTER(k));
    }
    tsp_compare_row *row = &g_array_index(rows, tsp_compare_row, k);
    double per_call = (double)r->count / n_calls;
    *(graph ? &row->graph_count : &row->eager_count) += per_call;
    *(graph ? &row->graph_ns : &row->eager_ns) += tsp_stat_time_p50_ns(r) * per_call;
    *(graph ? &row->graph_min_ns : &row->eager_min_ns) += tsp_stat_time_min_ns(r) * per_call;
    *(graph ? &row->graph_host_ns : &row->eager_host_ns) += r->self_p50_ns * per_call;
  }
}

/* A fused node's row takes the eager rows of the traced nodes it stands
 * for (those that ran in eager mode only): they are listed under it, and
 * their sum is what its graph time compares with. */
static void gather_fused(const tsp_session *s, GHashTable *index, GArray *rows)
{
  for (guint k = 0; k < rows->len; k++) {
    tsp_compare_row *f = &g_array_index(rows, tsp_compare_row, k);
    const tsp_node_info *n = tsp_session_node(s, f->node);
    if (!n || n->n_origins < 2 || f->graph_count == 0)
      continue;
    for (int i = 0; i < n->n_origins; i++) {
      char key[16];
      g_snprintf(key, sizeof key, "#%u", n->origins[i]);
      gpointer v;
      if (!g_hash_table_lookup_extended(index, key, NULL, &v))
        continue;
      tsp_compare_row *o = &g_array_index(rows, tsp_compare_row, GPOINTER_TO_UINT(v));
      if (o == f || o->parent >= 0 || o->graph_count > 0)
        continue;
      o->parent = (int)k;
      o->only = "fused";
      f->eager_count += o->eager_count;
      f->eager_ns += o->eager_ns;
      f->eager_min_ns += o->eager_min_ns;
      f->eager_host_ns += o->eager_host_ns;
    }
  }
}

/* The rows by time, largest first, each fused row followed by its ops. */
static tsp_compare_row *order_rows(GArray *rows, int *n_out)
{
  guint n = rows->len;
  tsp_compare_row *in = (tsp_compare_row *)(void *)rows->data;
  GArray *top = g_array_new(FALSE, FALSE, sizeof(tsp_compare_row));
  for (guint k = 0; k < n; k++) {
    if (in[k].parent < 0) {
      tsp_compare_row r = in[k];
      r.parent = -1 - (int)k; /* remembers where it was, until placed */
      g_array_append_val(top, r);
    }
  }
  if (top->len > 1) /* an empty GArray's data may be NULL */
    qsort(top->data, top->len, sizeof(tsp_compare_row), cmp_row);
  tsp_compare_row *out = g_new0(tsp_compare_row, n ? n : 1);
  int m = 0;
  for (guint t = 0; t < top->len; t++) {
    tsp_compare_row *r = &g_array_index(top, tsp_compare_row, t);
    int was = -1 - r->parent, at = m;
    r->parent = -1;
    out[m++] = *r;
    int first = m;
    for (guint k = 0; k < n; k++)
      if (in[k].parent == was) {
        out[m] = in[k];
        out[m++].parent = at;
      }
    if (m - first > 1)
      qsort(out + first, (size_t)(m - first), sizeof *out, cmp_row);
  }
  g_array_unref(top);
  *n_out = m;
  return out;
}

tsp_compare *tsp_compare_from_session(const tsp_session *s, const tsp_filter *eager,
                                      const tsp_filter *graph, int n_calls)
{
  tsp_compare *c = g_new0(tsp_compare, 1);
  int ne, ng;
  c->eager_call_ns = median_call_ns(s, eager, &ne);
  c->graph_call_ns = median_call_ns(s, graph, &ng);
  c->n_calls = n_calls > 0 ? n_calls : MAX(1, MAX(ne, ng));
  c->speedup = c->graph_call_ns > 0 ? c->eager_call_ns / c->graph_call_ns : 0;
  tsp_stats *st[2] = { tsp_stats_compute(s, TSP_BY_NODE, eager),
                       tsp_stats_compute(s, TSP_BY_NODE, graph) };
  GHashTable *index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GArray *rows = g_array_new(FALSE, TRUE, sizeof(tsp_compare_row));
  add_rows(s, st[0], false, c->n_calls, index, rows);
  add_rows(s, st[1], true, c->n_calls, index, rows);
  gather_fused(s, index, rows);
  for (guint k = 0; k < rows->len; k++) {
    tsp_compare_row *row = &g_array_index(rows, tsp_compare_row, k);
    if (row->parent < 0) {
      c->eager_op_ns += row->eager_ns;
      c->graph_op_ns += row->graph_ns;
      row->ratio = row->eager_ns > 0 && row->graph_ns > 0 ? row->eager_ns / row->graph_ns : 0;
      row->only = row->graph_count == 0 ? "eager only" : row->eager_count == 0 ? "graph only" : NULL;
    }
  }
  c->rows = order_rows(rows, &c->n_rows);
  g_array_unref(rows);
  g_hash_table_unref(index);
  tsp_stats_free(st[0]);
  tsp_stats_free(st[1]);
  return c;
}

void tsp_compare_free(tsp_compare *c)
{
  if (!c)
    return;
  for (int i = 0; i < c->n_rows; i++) {
    g_free(c->rows[i].name);
    g_free(c->rows[i].op);
    g_free(c->rows[i].source);
  }
  g_free(c->rows);
  g_free(c);
}

/* One call in a scope of its own, recorded as a CALL event. */
static bool call(tsp_session *s, ts_function *fn, const ts_value *args, int n_args, bool eager)
{
  ts_run_functions_eagerly(eager);
  ts_scope *scope = ts_scope_begin();
  uint64_t t0 = tsp_call_begin(s);
  ts_tensor *out[TS_MAX_RETURNS]; /* every result of a tuple, compared by time only */
  int n = ts_function_call_n(fn, args, n_args, out, TS_MAX_RETURNS, NULL);
  tsp_call_end(s, t0, ts_function_name(fn), eager ? TSP_MODE_EAGER : TSP_MODE_GRAPH);
  ts_scope_end(scope);
  return n >= 0;
}

tsp_compare *tsp_compare_run(tsp_session *s, ts_function *fn, const ts_value *args, int n_args,
                             int repeat)
{
  g_return_val_if_fail(s && fn && repeat > 0, NULL);
  bool was_eager = ts_functions_run_eagerly();
  bool fresh = ts_function_trace_count(fn) == 0;
  GError *error = NULL;
  if (!tsp_session_start(s, &error)) {
    ts_error_set(TS_ERR_INTERNAL, TS_HERE, NULL, "%s", error->message);
    g_error_free(error);
    return NULL;
  }
  /* warm-up: the graph's first call (trace + run), an eager call */
  uint64_t t_first = ts_now_ns();
  bool ok = call(s, fn, args, n_args, false) && call(s, fn, args, n_args, true);
  uint64_t t_eager = ts_now_ns();
  for (int i = 0; ok && i < repeat; i++)
    ok = call(s, fn, args, n_args, true);
  uint64_t t_graph = ts_now_ns();
  for (int i = 0; ok && i < repeat; i++)
    ok = call(s, fn, args, n_args, false);
  uint64_t t_end = ts_now_ns();
  tsp_session_stop(s);
  ts_run_functions_eagerly(was_eager);
  if (!ok)
    return NULL;
  tsp_filter eager = { TSP_MODE_ALL, t_eager, t_graph }, graph = { TSP_MODE_ALL, t_graph, t_end };
  tsp_compare *c = tsp_compare_from_session(s, &eager, &graph, repeat);
  c->function = ts_function_name(fn);
  c->eager_window = eager;
  c->graph_window = graph;
  if (fresh) {
    tsp_filter first = { TSP_MODE_GRAPH, t_first, t_eager };
    GArray *calls = tsp_session_calls(s, &first);
    if (calls->len > 0) {
      const tsp_call *fc = &g_array_index(calls, tsp_call, 0);
      c->first_call_ns = (double)(fc->end_ns - fc->start_ns);
      c->trace_ns = (double)fc->trace_ns;
    }
    g_array_unref(calls);
  }
  double saved = c->eager_call_ns - c->graph_call_ns;
  double extra = c->first_call_ns - c->graph_call_ns;
  c->payback_calls = !fresh ? 0 : saved > 0 ? ceil(MAX(0.0, extra) / saved) : -1;
  return c;
}
