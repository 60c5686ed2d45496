/* stats.c — op statistics (per op type, traced node, source line, name
 * scope), calls and per-call statistics, from a stopped session. */
#include "profiler-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double tsp_percentile(const double *sorted, size_t n, double p)
{
  if (n == 0)
    return 0;
  double rank = ceil(p / 100.0 * (double)n);
  size_t i = rank < 1 ? 0 : (size_t)rank - 1;
  return sorted[i < n ? i : n - 1];
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ---- self time: a span less the spans directly inside it ------------------------- */

static int cmp_by_end(const void *a, const void *b)
{
  const tsp__op_time *x = a, *y = b;
  if (x->e->end_ns != y->e->end_ns)
    return x->e->end_ns < y->e->end_ns ? -1 : 1;
  return (x->e->start_ns < y->e->start_ns) - (x->e->start_ns > y->e->start_ns); /* inner first */
}

/* By time containment on the thread, whatever wrote the events: an If or
 * While holds the ops of its branches, an imported span (PyTorch's
 * aten::linear) the spans it called.  Spans are taken in the order they
 * end (as they are recorded; a file's are sorted so); the finished spans not
 * yet inside another wait on a stack, and a span's children are those on
 * top of it that started no earlier than it. */
GArray *tsp__thread_op_times(const tsp_session *s, int thread)
{
  GArray *ops = g_array_new(FALSE, FALSE, sizeof(tsp__op_time));
  tsp_iter it;
  tsp_iter_init(&it, s, thread);
  bool sorted = true;
  for (const tsp_event *e; (e = tsp_iter_next(&it));) {
    if (e->kind != TSP_EVENT_OP)
      continue;
    tsp__op_time o = { e, (double)(e->end_ns - e->start_ns) };
    if (ops->len && cmp_by_end(&g_array_index(ops, tsp__op_time, ops->len - 1), &o) > 0)
      sorted = false;
    g_array_append_val(ops, o);
  }
  if (!sorted) { /* a file's spans: in start order, the outer of two equal spans first */
    tsp__op_time *v = (tsp__op_time *)(void *)ops->data;
    for (guint i = 0, j = ops->len - 1; i < j; i++, j--) {
      tsp__op_time x = v[i];
      v[i] = v[j];
      v[j] = x;
    }
    g_array_sort(ops, cmp_by_end); /* stable: of two equal spans, the inner now ends first */
  }
  tsp__op_time *v = (tsp__op_time *)(void *)ops->data;
  guint *stack = g_new(guint, ops->len + 1), top = 0;
  for (guint i = 0; i < ops->len; i++) {
    while (top > 0 && v[stack[top - 1]].e->start_ns >= v[i].e->start_ns) {
      const tsp_event *c = v[stack[--top]].e;
      v[i].self_ns -= (double)(c->end_ns - c->start_ns);
    }
    v[i].self_ns = MAX(0.0, v[i].self_ns);
    stack[top++] = i;
  }
  g_free(stack);
  return ops;
}

/* ---- groups ------------------------------------------------------------------------ */

typedef struct group {
  uint64_t id;
  int op;
  uint32_t node, loc;        /* what names it */
  const char *scope;         /* TSP_BY_SCOPE */
  unsigned modes;
  int device;                /* -1: several */
  uint64_t count;
  double total, self;
  GArray *durations, *selfs; /* double, per op */
  GArray *kernels;           /* double, per DEVICE event charged to the group's ops */
} group;

/* The node an op event's time goes to, 0 for none: a graph node standing
 * for one traced node (rewritten) goes to it, as an eager op goes to its
 * traced twin; a node standing for several (fused) keeps its time, once. */
uint32_t tsp__event_identity(const tsp_session *s, const tsp_event *e)
{
  const tsp_node_info *n = tsp_session_node(s, e->node);
  if (n && n->n_origins == 1)
    return n->origins[0];
  if (n && n->n_origins > 1)
    return e->node;
  return e->traced ? e->traced : e->node;
}

static group *group_get(GHashTable *groups, uint64_t id, bool create)
{
  group *g = g_hash_table_lookup(groups, &id);
  if (!g && create) {
    g = g_new0(group, 1);
    g->id = id;
    g->device = -2;
    g->durations = g_array_new(FALSE, FALSE, sizeof(double));
    g->selfs = g_array_new(FALSE, FALSE, sizeof(double));
    g->kernels = g_array_new(FALSE, FALSE, sizeof(double));
    g_hash_table_insert(groups, &g->id, g);
  }
  return g;
}

static void group_add(group *g, const tsp_event *e, double total, double self)
{
  g->op = g->count == 0 || g->op == e->op ? e->op : -1;
  g->device = g->device == -2 || g->device == e->device ? e->device : -1;
  g->modes |= tsp__event_mode(e);
  g->count++;
  g->total += total;
  g->self += self;
  g_array_append_val(g->durations, total);
  g_array_append_val(g->selfs, self);
}

#define EAGER_KEY (1ull << 62) /* an eager op with no traced twin: keyed by op and line */

static const char TOP[] = ""; /* the group of ops in no name scope */

/* Group ids: an op, a node index, a source location index, or the address
 * of a string the session holds (a TSP_OP_OTHER op's name, a scope).  The
 * group of op event e, made if create (else NULL when there is none). */
static group *group_of(const tsp_session *s, GHashTable *groups, tsp_group_by by,
                       const tsp_event *e, bool create)
{
  if (by == TSP_BY_OP) {
    uint64_t id = e->op == TSP_OP_OTHER ? (uint64_t)(uintptr_t)tsp_event_op_name(s, e) : e->op;
    group *g = group_get(groups, id, create);
    if (g)
      g->node = e->node ? e->node : e->traced; /* names a TSP_OP_OTHER op */
    return g;
  }
  uint32_t node = tsp__event_identity(s, e);
  if (!node) { /* eager, no twin: its own op and line */
    uint64_t id = by == TSP_BY_NODE ? EAGER_KEY | ((uint64_t)e->op << 32) | e->loc
                  : by == TSP_BY_LINE ? e->loc
                                      : (uint64_t)(uintptr_t)TOP;
    group *g = group_get(groups, id, create);
    if (g) {
      g->loc = e->loc;
      g->scope = TOP;
    }
    return g;
  }
  const tsp_node_info *o = tsp_session_node(s, node);
  uint32_t loc = o && o->loc ? o->loc : e->loc;
  const char *scope = o && *o->scope ? o->scope : TOP;
  uint64_t id = by == TSP_BY_NODE ? node : by == TSP_BY_LINE ? loc : (uint64_t)(uintptr_t)scope;
  group *g = group_get(groups, id, create);
  if (g) {
    g->node = node;
    g->loc = loc;
    g->scope = scope;
  }
  return g;
}

/* The kernels of one op's run: their time summed (an op may launch
 * several: im2col and a product). */
typedef struct op_kernels {
  const tsp_event *e; /* the first, standing for the op */
  double ns;
} op_kernels;

static guint run_seq_hash(gconstpointer k)
{
  const tsp_event *e = k;
  return g_int64_hash(&e->run_id) ^ e->seq;
}

static gboolean run_seq_equal(gconstpointer a, gconstpointer b)
{
  const tsp_event *x = a, *y = b;
  return x->run_id == y->run_id && x->seq == y->seq;
}

static void add_op_kernels(const tsp_session *s, GHashTable *groups, tsp_group_by by,
                           const tsp_event *e, double ns)
{
  group *g = group_of(s, groups, by, e, false);
  if (g)
    g_array_append_val(g->kernels, ns);
}

/* The kernels (DEVICE events charged to an op: copies of the op's event)
 * to their op's group, one time per op run (the sum of its kernels);
 * copies and memsets (TSP_OP_OTHER) are no op's.  A kernel runs after its
 * launch, perhaps past the window: those of the runs whose ops the window
 * holds (runs) count, and by their own start those of ops in no run. */
static void add_kernels(const tsp_session *s, GHashTable *groups, tsp_group_by by,
                        const tsp_filter *f, GHashTable *runs)
{
  GHashTable *ops = g_hash_table_new_full(run_seq_hash, run_seq_equal, NULL, g_free);
  GPtrArray *order = g_ptr_array_new(); /* op_kernels, as first met */
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));) {
      if (e->kind != TSP_EVENT_DEVICE || e->op == TSP_OP_OTHER || !(f->modes & tsp__event_mode(e)))
        continue;
      if (e->run_id ? !g_hash_table_contains(runs, &e->run_id) : !tsp__filter_accepts(f, e))
        continue;
      double ns = (double)(e->end_ns - e->start_ns);
      if (!e->run_id) { /* outside a run (seq may repeat): each kernel its own */
        add_op_kernels(s, groups, by, e, ns);
        continue;
      }
      op_kernels *k = g_hash_table_lookup(ops, e);
      if (!k) {
        k = g_new0(op_kernels, 1);
        k->e = e;
        g_hash_table_insert(ops, (gpointer)e, k);
        g_ptr_array_add(order, k);
      }
      k->ns += ns;
    }
  }
  for (guint i = 0; i < order->len; i++) {
    const op_kernels *k = order->pdata[i];
    add_op_kernels(s, groups, by, k->e, k->ns);
  }
  g_ptr_array_unref(order);
  g_hash_table_unref(ops);
}

static char *group_key(const tsp_session *s, tsp_group_by by, const group *g)
{
  char *line = tsp__loc_text(s, g->loc);
  char *key = NULL;
  switch (by) {
  case TSP_BY_OP:
    key = g_strdup(g->op != TSP_OP_OTHER ? ts_op_name((ts_op)g->op)
                   : tsp_session_node(s, g->node) ? tsp_session_node(s, g->node)->name : "?");
    break;
  case TSP_BY_NODE:
    key = g->id & EAGER_KEY ? g_strdup_printf("%s at %s", g->op == TSP_OP_OTHER ? "?" : ts_op_name((ts_op)g->op), line)
                            : g_strdup(tsp_session_node(s, g->node)->name);
    break;
  case TSP_BY_LINE:
    key = g_strdup(*line ? line : "(no source)");
    break;
  case TSP_BY_SCOPE:
    key = g_strdup(*g->scope ? g->scope : "(top)");
    break;
  }
  g_free(line);
  return key;
}

static int cmp_stat(const void *a, const void *b)
{
  const tsp_stat *x = a, *y = b;
  if (x->total_ns != y->total_ns)
    return x->total_ns < y->total_ns ? 1 : -1;
  return strcmp(x->key, y->key);
}

static void group_free(gpointer p)
{
  group *g = p;
  g_array_unref(g->durations);
  g_array_unref(g->selfs);
  g_array_unref(g->kernels);
  g_free(g);
}

/* One run of an op.  A row run's op is an event per part, each on the
 * thread that ran it (one thread may run both, when the pool's was slow
 * to wake), with the same run and seq (tracescope.h): it ran
 * once, and its time is its parts' together (the parts of a row run go
 * through its ops each at its own pace, so an op's parts need not overlap:
 * the threads' time on it, not a span from the first part to the last). */
typedef struct op_run {
  const tsp_event *e; /* its first part met, standing for it */
  uint64_t start, end; /* its first part's start, its last part's end */
  double total, self;
} op_run;

/* The op runs of the events f accepts, every thread's. */
static GArray *op_runs(const tsp_session *s, const tsp_filter *f)
{
  GArray *runs = g_array_new(FALSE, FALSE, sizeof(op_run));
  GHashTable *index = g_hash_table_new(run_seq_hash, run_seq_equal); /* event -> its run + 1 */
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    GArray *ops = tsp__thread_op_times(s, t);
    for (guint i = 0; i < ops->len; i++) {
      const tsp__op_time *o = &g_array_index(ops, tsp__op_time, i);
      if (!tsp__filter_accepts(f, o->e))
        continue;
      double total = (double)(o->e->end_ns - o->e->start_ns);
      guint at = o->e->run_id ? GPOINTER_TO_UINT(g_hash_table_lookup(index, o->e)) : 0;
      if (at) { /* another part of an op run */
        op_run *r = &g_array_index(runs, op_run, at - 1);
        r->start = MIN(r->start, o->e->start_ns);
        r->end = MAX(r->end, o->e->end_ns);
        r->total += total;
        r->self += o->self_ns;
        continue;
      }
      g_array_append_val(runs, ((op_run){ o->e, o->e->start_ns, o->e->end_ns, total, o->self_ns }));
      if (o->e->run_id) /* outside a run, seq may repeat: each event an op run */
        g_hash_table_insert(index, (gpointer)o->e, GUINT_TO_POINTER(runs->len));
    }
    g_array_unref(ops);
  }
  g_hash_table_unref(index);
  return runs;
}

tsp_stats *tsp_stats_compute(const tsp_session *s, tsp_group_by by, const tsp_filter *f)
{
  GHashTable *groups = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, group_free);
  tsp_stats *st = g_new0(tsp_stats, 1);
  GHashTable *runs = g_hash_table_new(g_int64_hash, g_int64_equal); /* of the ops taken */
  uint64_t first = UINT64_MAX, last = 0;
  GArray *ops = op_runs(s, f);
  for (guint i = 0; i < ops->len; i++) {
    const op_run *o = &g_array_index(ops, op_run, i);
    st->self_ns += o->self;
    st->count++;
    first = MIN(first, o->start);
    last = MAX(last, o->end);
    group_add(group_of(s, groups, by, o->e, true), o->e, o->total, o->self);
    if (o->e->run_id)
      g_hash_table_add(runs, (gpointer)&o->e->run_id); /* the session holds the event */
  }
  g_array_unref(ops);
  add_kernels(s, groups, by, f, runs);
  g_hash_table_unref(runs);
  st->wall_ns = st->count ? (double)(last - first) : 0;
  st->n = (int)g_hash_table_size(groups);
  st->rows = g_new0(tsp_stat, st->n > 0 ? st->n : 1);
  GHashTableIter hi;
  g_hash_table_iter_init(&hi, groups);
  int k = 0;
  for (gpointer v; g_hash_table_iter_next(&hi, NULL, &v);) {
    group *g = v;
    double *d = (double *)g->durations->data;
    size_t n = g->durations->len;
    qsort(d, n, sizeof *d, cmp_double);
    double *sd = (double *)g->selfs->data;
    qsort(sd, n, sizeof *sd, cmp_double);
    double *kd = (double *)g->kernels->data, kernel_ns = 0;
    size_t nk = g->kernels->len;
    if (nk)
      qsort(kd, nk, sizeof *kd, cmp_double);
    for (size_t i = 0; i < nk; i++)
      kernel_ns += kd[i];
    st->rows[k++] = (tsp_stat){
      .key = group_key(s, by, g),
      .op = g->op,
      .node = g->id & EAGER_KEY ? 0 : g->node,
      .modes = g->modes,
      .device = g->device >= 0 ? tsp_session_device(s, (uint32_t)g->device) : "mixed",
      .count = g->count,
      .total_ns = g->total,
      .self_ns = g->self,
      .mean_ns = g->total / (double)g->count,
      .min_ns = d[0],
      .max_ns = d[n - 1],
      .p50_ns = tsp_percentile(d, n, 50),
      .p95_ns = tsp_percentile(d, n, 95),
      .self_p50_ns = tsp_percentile(sd, n, 50),
      .self_min_ns = sd[0],
      .share = st->wall_ns > 0 ? g->self / st->wall_ns : 0,
      .device_count = nk,
      .device_ns = kernel_ns,
      .device_p50_ns = tsp_percentile(kd, nk, 50),
      .device_min_ns = nk ? kd[0] : 0,
    };
  }
  if (st->n > 1) /* none: rows may be NULL, which qsort must not get */
    qsort(st->rows, (size_t)st->n, sizeof *st->rows, cmp_stat);
  g_hash_table_unref(groups);
  return st;
}

double tsp_stat_time_ns(const tsp_stat *r)
{
  return r->device_count ? r->device_ns : r->self_ns;
}

double tsp_stat_time_p50_ns(const tsp_stat *r)
{
  return r->device_count ? r->device_p50_ns : r->self_p50_ns;
}

double tsp_stat_time_min_ns(const tsp_stat *r)
{
  return r->device_count ? r->device_min_ns : r->self_min_ns;
}

void tsp_stats_free(tsp_stats *st)
{
  if (!st)
    return;
  for (int i = 0; i < st->n; i++)
    g_free(st->rows[i].key);
  g_free(st->rows);
  g_free(st);
}

/* ---- calls ------------------------------------------------------------------------------ */

typedef struct run_span {
  uint64_t start, end;
  uint32_t concrete;
  unsigned modes;
  bool annotated; /* a CALL event covers it */
} run_span;

static int cmp_call(const void *a, const void *b)
{
  const tsp_call *x = a, *y = b;
  return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

GArray *tsp_session_calls(const tsp_session *s, const tsp_filter *f)
{
  GArray *calls = g_array_new(FALSE, TRUE, sizeof(tsp_call));
  GArray *traces = g_array_new(FALSE, FALSE, sizeof(tsp_event));
  GHashTable *runs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));) {
      if (e->kind == TSP_EVENT_TRACE) {
        g_array_append_val(traces, *e);
      } else if (e->kind == TSP_EVENT_CALL) {
        tsp_call c = { tsp_session_string(s, e->node), e->traced, (tsp_mode)e->op, e->run_id,
                       e->start_ns, e->end_ns, 0 };
        g_array_append_val(calls, c);
      } else if (e->run_id) {
        run_span *r = g_hash_table_lookup(runs, &e->run_id);
        if (!r) {
          r = g_new0(run_span, 1);
          r->start = e->start_ns;
          g_hash_table_insert(runs, g_memdup2(&e->run_id, sizeof e->run_id), r);
        }
        r->start = MIN(r->start, e->start_ns);
        r->end = MAX(r->end, e->end_ns);
        r->modes |= tsp__event_mode(e);
        const tsp_node_info *n = tsp_session_node(s, e->node ? e->node : e->traced);
        if (n && n->concrete)
          r->concrete = n->concrete;
      }
    }
  }
  for (guint i = 0; i < calls->len; i++) {
    run_span *r = g_hash_table_lookup(runs, &g_array_index(calls, tsp_call, i).run_id);
    if (r)
      r->annotated = true;
  }
  GHashTableIter hi;
  g_hash_table_iter_init(&hi, runs);
  for (gpointer k, v; g_hash_table_iter_next(&hi, &k, &v);) {
    run_span *r = v;
    if (r->annotated)
      continue;
    tsp_call c = { tsp_session_concrete(s, r->concrete)->function, r->concrete,
                   r->modes == TSP_MODE_GRAPH ? TSP_MODE_GRAPH : TSP_MODE_EAGER,
                   *(uint64_t *)k, r->start, r->end, 0 };
    g_array_append_val(calls, c);
  }
  /* keep the window's calls, and charge each trace to the call around it */
  GArray *kept = g_array_new(FALSE, TRUE, sizeof(tsp_call));
  for (guint i = 0; i < calls->len; i++) {
    tsp_call *c = &g_array_index(calls, tsp_call, i);
    if (!(f->modes & c->mode) || c->start_ns < f->from_ns || (f->to_ns && c->start_ns >= f->to_ns))
      continue;
    for (guint k = 0; k < traces->len; k++) {
      const tsp_event *tr = &g_array_index(traces, tsp_event, k);
      if (tr->start_ns >= c->start_ns && tr->end_ns <= c->end_ns)
        c->trace_ns += tr->end_ns - tr->start_ns;
    }
    g_array_append_val(kept, *c);
  }
  if (kept->len > 1) /* an empty GArray's data may be NULL */
    qsort(kept->data, kept->len, sizeof(tsp_call), cmp_call);
  g_array_unref(calls);
  g_array_unref(traces);
  g_hash_table_unref(runs);
  return kept;
}

GArray *tsp_call_stats_compute(const tsp_session *s, const tsp_filter *f)
{
  GArray *calls = tsp_session_calls(s, f);
  GArray *out = g_array_new(FALSE, TRUE, sizeof(tsp_call_stat));
  GPtrArray *steady = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  for (guint i = 0; i < calls->len; i++) {
    const tsp_call *c = &g_array_index(calls, tsp_call, i);
    guint k = 0;
    while (k < out->len && !(g_array_index(out, tsp_call_stat, k).mode == c->mode &&
                             strcmp(g_array_index(out, tsp_call_stat, k).function, c->function) == 0))
      k++;
    double ns = (double)(c->end_ns - c->start_ns);
    if (k == out->len) {
      tsp_call_stat st = { c->function, c->mode, 1, ns, (double)c->trace_ns, 0, 0, 0, 0 };
      g_array_append_val(out, st);
      g_ptr_array_add(steady, g_array_new(FALSE, FALSE, sizeof(double)));
    } else {
      g_array_index(out, tsp_call_stat, k).count++;
      g_array_append_val(steady->pdata[k], ns);
    }
  }
  for (guint k = 0; k < out->len; k++) {
    tsp_call_stat *st = &g_array_index(out, tsp_call_stat, k);
    GArray *d = steady->pdata[k];
    if (d->len == 0)
      continue;
    qsort(d->data, d->len, sizeof(double), cmp_double);
    double sum = 0;
    for (guint i = 0; i < d->len; i++)
      sum += g_array_index(d, double, i);
    st->steady_mean_ns = sum / d->len;
    st->steady_p50_ns = tsp_percentile((double *)d->data, d->len, 50);
    st->steady_min_ns = g_array_index(d, double, 0);
    st->steady_max_ns = g_array_index(d, double, d->len - 1);
  }
  g_ptr_array_unref(steady);
  g_array_unref(calls);
  return out;
}
