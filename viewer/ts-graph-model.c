/* ts-graph-model.c — builds the hierarchy of a graph (name scopes, series,
 * subgraphs, extracted nodes), keeps the expansion state, and answers what
 * is visible, how edges bundle, and where a search hit hides. */
#include "ts-graph-model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct vitem {
  ts_view_item_kind kind;
  int parent;
  int depth;
  GArray *children;      /* int; NULL when none */
  const char *name;      /* interned in the model */
  const char *label;
  const char *op_name;   /* ops; static strings of the engine */
  const ts_node *node;   /* ops */
  int n_ops;
  int template_id;
  int series_first, series_last;
  const char *span_first, *span_last; /* parts: the labels they run from and to */
  GArray *dots;          /* int: extracted ops feeding it from outside; NULL when none */
  int group_edge_start, n_group_edges;
  int mark;              /* scratch while building */
  int out_degree;        /* ops: distinct consumers */
  unsigned extracted : 1, dot_only : 1, aux : 1, default_expanded : 1, placed : 1;
} vitem;

/* One op-level edge (distinct tensor or control dependency per consumer). */
typedef struct op_edge {
  int src, dst;   /* op items */
  int lca, a, b;  /* flow edges: the group holding both, and its children holding each */
  int64_t bytes;
  ts_dtype dtype;
  ts_shape shape;
  bool control;
  enum { EDGE_FLOW, EDGE_DOT, EDGE_DROPPED } role;
} op_edge;

struct ts_view_state {
  guint serial; /* the model it belongs to */
  int n;
  guint8 *expanded;
};

struct ts_view_model {
  gint refcount;
  guint serial;
  const ts_graph *graph;
  ts_view_model_options opts;
  GArray *items;          /* vitem */
  GStringChunk *strings;
  GArray *edges;          /* op_edge */
  GArray *group_edges;    /* ts_view_group_edge, sliced per item */
  GHashTable *node_items; /* const ts_graph * -> GArray of int (item per node id) */
  int *preorder;          /* item ids, parents first */
  int n_ops;
  int64_t max_bytes;
  ts_view_state *state;
};

G_DEFINE_QUARK(ts-view-error-quark, ts_view_error)

#define IT(m, i) (&g_array_index((m)->items, vitem, (i)))

static guint next_serial(void)
{
  static gint serial;
  return (guint)g_atomic_int_add(&serial, 1) + 1;
}

/* ---- building the tree ------------------------------------------------------ */

typedef struct builder {
  ts_view_model *m;
  GHashTable *groups; /* "parent:scope" -> group item id + 1 */
} builder;

static int add_item(ts_view_model *m, ts_view_item_kind kind, int parent, const char *label)
{
  vitem it = { .kind = kind, .parent = parent, .mark = -1, .template_id = -1 };
  const char *pname = parent >= 0 ? IT(m, parent)->name : "";
  it.label = g_string_chunk_insert_const(m->strings, label);
  if (*pname) {
    char *name = g_strconcat(pname, "/", label, NULL);
    it.name = g_string_chunk_insert_const(m->strings, name);
    g_free(name);
  } else {
    it.name = it.label;
  }
  int id = (int)m->items->len;
  g_array_append_val(m->items, it);
  if (parent >= 0) {
    vitem *p = IT(m, parent);
    if (!p->children)
      p->children = g_array_new(FALSE, FALSE, sizeof(int));
    g_array_append_val(p->children, id);
  }
  return id;
}

/* The group of scope path `scope` ("a/b") under `parent`, made on first use. */
static int group_for_scope(builder *b, int parent, const char *scope)
{
  if (!*scope)
    return parent;
  char *key = g_strdup_printf("%d:%s", parent, scope);
  int found = GPOINTER_TO_INT(g_hash_table_lookup(b->groups, key));
  if (found) {
    g_free(key);
    return found - 1;
  }
  const char *slash = strrchr(scope, '/');
  int outer = parent;
  if (slash) {
    char *prefix = g_strndup(scope, (gsize)(slash - scope));
    outer = group_for_scope(b, parent, prefix);
    g_free(prefix);
  }
  int id = add_item(b->m, TS_VIEW_ITEM_GROUP, outer, slash ? slash + 1 : scope);
  g_hash_table_insert(b->groups, key, GINT_TO_POINTER(id + 1));
  return id;
}

/* s without the leading "prefix/" (subgraph nodes continue the scope of
 * their If/While node). */
static const char *strip_prefix(const char *s, const char *prefix)
{
  size_t n = strlen(prefix);
  if (n && strncmp(s, prefix, n) == 0 && (s[n] == '/' || s[n] == '\0'))
    return s[n] ? s + n + 1 : s + n;
  return s;
}

static void build_graph(builder *b, const ts_graph *g, int parent, const char *outer_scope)
{
  ts_view_model *m = b->m;
  int n = ts_graph_n_nodes(g);
  GArray *map = g_array_sized_new(FALSE, FALSE, sizeof(int), (guint)n);
  g_array_set_size(map, (guint)n);
  g_hash_table_insert(m->node_items, (gpointer)g, map);
  for (int id = 0; id < n; id++) {
    const ts_node *node = ts_graph_node(g, id);
    const char *scope = ts_node_scope(node);
    int grp = group_for_scope(b, parent, strip_prefix(scope, outer_scope));
    const char *label = strip_prefix(ts_node_name(node), scope);
    int op = add_item(m, TS_VIEW_ITEM_OP, grp, *label ? label : ts_node_name(node));
    vitem *it = IT(m, op);
    it->node = node;
    it->op_name = ts_op_name(ts_node_op(node));
    g_array_index(map, int, id) = op;
    m->n_ops++;
    for (int s = 0; s < ts_node_n_subgraphs(node); s++) {
      const ts_graph *sub = ts_node_subgraph(node, s);
      const char *gname = ts_graph_name(sub);
      const char *slash = gname ? strrchr(gname, '/') : NULL;
      char fallback[32];
      g_snprintf(fallback, sizeof fallback, "branch_%d", s);
      const char *sublabel = slash ? slash + 1 : gname && *gname ? gname : fallback;
      int si = add_item(m, TS_VIEW_ITEM_SUBGRAPH, op, sublabel);
      IT(m, si)->default_expanded = 1;
      build_graph(b, sub, si, scope);
    }
  }
}

/* A tensor's size in bytes for the edge widths: unknown dims count as 1,
 * a zero dim makes it empty, and a size past int64 saturates. */
static int64_t tensor_bytes(ts_dtype dtype, ts_shape shape)
{
  int64_t n = (int64_t)ts_dtype_size(dtype);
  bool over = false;
  for (int i = 0; i < MIN(shape.rank, TS_MAX_RANK); i++) {
    if (shape.dim[i] == 0)
      return 0;
    if (shape.dim[i] > 0)
      over = over || __builtin_mul_overflow(n, shape.dim[i], &n);
  }
  return over ? INT64_MAX : n;
}

static int64_t add_bytes(int64_t a, int64_t b)
{
  int64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? INT64_MAX : sum;
}

/* Op edges of g: one per distinct tensor (or control dependency) a node
 * reads; out-degrees counted in distinct consumers. */
static void collect_edges(ts_view_model *m, const ts_graph *g, const GArray *map)
{
  int n = ts_graph_n_nodes(g);
  for (int id = 0; id < n; id++) {
    const ts_node *node = ts_graph_node(g, id);
    int dst = g_array_index(map, int, id);
    guint first = m->edges->len;
    for (int i = 0; i < ts_node_n_inputs(node); i++) {
      ts_port p = ts_node_input(node, i);
      if (p.node < 0 || p.node >= n)
        continue;
      bool seen = false;
      for (int j = 0; j < i && !seen; j++) {
        ts_port q = ts_node_input(node, j);
        seen = q.node == p.node && q.index == p.index;
      }
      if (seen)
        continue;
      const ts_node *src = ts_graph_node(g, p.node);
      op_edge e = { .src = g_array_index(map, int, p.node), .dst = dst };
      e.dtype = ts_node_output_dtype(src, p.index);
      e.shape = ts_node_output_shape(src, p.index);
      e.bytes = tensor_bytes(e.dtype, e.shape);
      g_array_append_val(m->edges, e);
    }
    for (int i = 0; i < ts_node_n_control_inputs(node); i++) {
      int c = ts_node_control_input(node, i);
      if (c < 0 || c >= n)
        continue;
      op_edge e = { .src = g_array_index(map, int, c), .dst = dst, .control = true };
      g_array_append_val(m->edges, e);
    }
    for (guint k = first; k < m->edges->len; k++) {
      vitem *src = IT(m, g_array_index(m->edges, op_edge, k).src);
      if (src->mark != dst) {
        src->mark = dst;
        src->out_degree++;
      }
    }
    for (int s = 0; s < ts_node_n_subgraphs(node); s++) {
      const ts_graph *sub = ts_node_subgraph(node, s);
      collect_edges(m, sub, g_hash_table_lookup(m->node_items, sub));
    }
  }
}

static bool is_auxiliary_op(ts_op op)
{
  return (ts_op_traits(op) & TS_OP_TRAIT_AUXILIARY) != 0;
}

/* A laid-out node that must run before a dot-only one (an assignment
 * before a variable read) must run before the read's consumers: keep that
 * order as control edges to them. */
static void reroute_dropped(ts_view_model *m)
{
  guint n = m->edges->len;
  GHashTable *consumers = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                                (GDestroyNotify)g_array_unref);
  GHashTable *seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint k = 0; k < n; k++) {
    const op_edge *e = &g_array_index(m->edges, op_edge, k);
    if (e->role == EDGE_DOT && IT(m, e->src)->dot_only) {
      GArray *list = g_hash_table_lookup(consumers, GINT_TO_POINTER(e->src));
      if (!list) {
        list = g_array_new(FALSE, FALSE, sizeof(int));
        g_hash_table_insert(consumers, GINT_TO_POINTER(e->src), list);
      }
      g_array_append_val(list, e->dst);
    }
    if (e->role == EDGE_FLOW) {
      gint64 *key = g_new(gint64, 1);
      *key = (gint64)e->src * G_MAXINT32 + e->dst;
      g_hash_table_add(seen, key);
    }
  }
  for (guint k = 0; k < n; k++) {
    op_edge e = g_array_index(m->edges, op_edge, k);
    if (e.role != EDGE_DROPPED || IT(m, e.src)->extracted)
      continue;
    GArray *list = g_hash_table_lookup(consumers, GINT_TO_POINTER(e.dst));
    for (guint c = 0; list && c < list->len; c++) {
      int v = g_array_index(list, int, c);
      gint64 key = (gint64)e.src * G_MAXINT32 + v;
      if (v == e.src || g_hash_table_contains(seen, &key))
        continue;
      g_hash_table_add(seen, g_memdup2(&key, sizeof key));
      op_edge r = { .src = e.src, .dst = v, .control = true, .role = EDGE_FLOW };
      g_array_append_val(m->edges, r);
    }
  }
  g_hash_table_destroy(consumers);
  g_hash_table_destroy(seen);
}

/* Extracted nodes, dot-only nodes and the role of every edge. */
static void classify(ts_view_model *m)
{
  for (guint i = 0; i < m->items->len; i++) {
    vitem *it = IT(m, i);
    if (it->kind != TS_VIEW_ITEM_OP || it->out_degree == 0)
      continue;
    bool aux = is_auxiliary_op(ts_node_op(it->node));
    it->extracted = aux || it->out_degree > m->opts.extract_out_degree;
    it->aux = aux; /* constants and variables stay dots whatever feeds them */
    it->dot_only = it->extracted; /* else cleared below when a laid-out node feeds it */
  }
  for (guint k = 0; k < m->edges->len; k++) {
    op_edge *e = &g_array_index(m->edges, op_edge, k);
    vitem *dst = IT(m, e->dst);
    if (dst->dot_only && !dst->aux && !IT(m, e->src)->extracted)
      dst->dot_only = 0;
  }
  for (guint k = 0; k < m->edges->len; k++) {
    op_edge *e = &g_array_index(m->edges, op_edge, k);
    e->role = IT(m, e->dst)->dot_only ? EDGE_DROPPED
            : IT(m, e->src)->extracted ? EDGE_DOT : EDGE_FLOW;
  }
  reroute_dropped(m);
}

/* ---- structure templates and series ------------------------------------------ */

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Items are created parents first, so walking ids backwards sees children
 * before parents. */
static void compute_templates(ts_view_model *m)
{
  GHashTable *ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GString *key = g_string_new(NULL);
  GArray *kids = g_array_new(FALSE, FALSE, sizeof(int));
  for (int i = (int)m->items->len - 1; i >= 0; i--) {
    vitem *it = IT(m, i);
    g_string_printf(key, "%d:%s(", it->kind, it->op_name ? it->op_name : "");
    g_array_set_size(kids, 0);
    for (guint c = 0; it->children && c < it->children->len; c++)
      g_array_append_val(kids, IT(m, g_array_index(it->children, int, c))->template_id);
    if (kids->len)
      qsort(kids->data, kids->len, sizeof(int), cmp_int);
    for (guint c = 0; c < kids->len; c++)
      g_string_append_printf(key, "%d,", g_array_index(kids, int, c));
    g_string_append_c(key, ')');
    gpointer found = g_hash_table_lookup(ids, key->str);
    if (!found) {
      found = GINT_TO_POINTER(g_hash_table_size(ids) + 1);
      g_hash_table_insert(ids, g_strdup(key->str), found);
    }
    it->template_id = GPOINTER_TO_INT(found) - 1;
  }
  g_array_free(kids, TRUE);
  g_string_free(key, TRUE);
  g_hash_table_destroy(ids);
}

typedef struct member {
  int number;
  int item;
} member;

static int cmp_member(const void *a, const void *b)
{
  const member *x = a, *y = b;
  return (x->number > y->number) - (x->number < y->number);
}

/* "dense_12" -> ("dense", 12); names without a number suffix are member 0. */
static char *series_prefix(const char *label, int *number)
{
  const char *us = strrchr(label, '_');
  if (us && us > label && us[1] && strlen(us + 1) <= 9 && strspn(us + 1, "0123456789") == strlen(us + 1)) {
    *number = atoi(us + 1);
    return g_strndup(label, (gsize)(us - label));
  }
  *number = 0;
  return g_strdup(label);
}

static void make_series(ts_view_model *m, int parent, const char *prefix, const member *run, int n)
{
  char *label = g_strdup_printf("%s_[%d-%d]", prefix, run[0].number, run[n - 1].number);
  int s = add_item(m, TS_VIEW_ITEM_SERIES, parent, label);
  g_free(label);
  vitem *it = IT(m, s);
  it->series_first = run[0].number;
  it->series_last = run[n - 1].number;
  it->template_id = IT(m, run[0].item)->template_id;
  it->children = g_array_sized_new(FALSE, FALSE, sizeof(int), (guint)n);
  for (int i = 0; i < n; i++) {
    g_array_append_val(it->children, run[i].item);
    IT(m, run[i].item)->parent = s;
    IT(m, run[i].item)->mark = s;
  }
}

/* Folds runs of numbered siblings with one template into series items
 * (TensorBoard's rule: consecutive numbers, at least series_min). */
static void fold_series(ts_view_model *m, int parent)
{
  vitem *p = IT(m, parent);
  if (!p->children || (int)p->children->len < m->opts.series_min)
    return;
  GHashTable *clusters = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                               (GDestroyNotify)g_array_unref);
  for (guint c = 0; c < p->children->len; c++) {
    int ci = g_array_index(p->children, int, c);
    vitem *child = IT(m, ci);
    if (child->kind != TS_VIEW_ITEM_GROUP && child->kind != TS_VIEW_ITEM_OP)
      continue;
    if (child->dot_only)
      continue;
    member mb = { .item = ci };
    char *prefix = series_prefix(child->label, &mb.number);
    char *key = g_strdup_printf("%d\x1f%s", child->template_id, prefix);
    g_free(prefix);
    GArray *list = g_hash_table_lookup(clusters, key);
    if (!list) {
      list = g_array_new(FALSE, FALSE, sizeof(member));
      g_hash_table_insert(clusters, key, list);
    } else {
      g_free(key);
    }
    g_array_append_val(list, mb);
  }
  guint before = m->items->len;
  GHashTableIter iter;
  gpointer k, v;
  g_hash_table_iter_init(&iter, clusters);
  while (g_hash_table_iter_next(&iter, &k, &v)) {
    GArray *list = v;
    if ((int)list->len < m->opts.series_min)
      continue;
    qsort(list->data, list->len, sizeof(member), cmp_member);
    const member *ms = (const member *)list->data;
    const char *prefix = strchr(k, '\x1f') + 1;
    guint start = 0;
    for (guint i = 1; i <= list->len; i++) {
      if (i < list->len && ms[i].number == ms[i - 1].number + 1)
        continue;
      if ((int)(i - start) >= m->opts.series_min)
        make_series(m, parent, prefix, ms + start, (int)(i - start));
      start = i;
    }
  }
  g_hash_table_destroy(clusters);
  if (m->items->len == before)
    return;
  /* Rebuild the child list in its old order, each series in the place of
   * its first member (make_series appended the series ids at the end). */
  p = IT(m, parent);
  GArray *old = p->children;
  GArray *kids = g_array_new(FALSE, FALSE, sizeof(int));
  guint n_old = old->len - (m->items->len - before);
  for (guint c = 0; c < n_old; c++) {
    int ci = g_array_index(old, int, c);
    int s = IT(m, ci)->mark;
    if (s < (int)before) {
      g_array_append_val(kids, ci);
    } else if (!IT(m, s)->placed) {
      IT(m, s)->placed = 1;
      g_array_append_val(kids, s);
    }
  }
  g_array_free(old, TRUE);
  IT(m, parent)->children = kids;
}

/* ---- parts of big groups ------------------------------------------------------------------ */

static const char *span_label(const ts_view_model *m, int i, bool last)
{
  const vitem *it = IT(m, i);
  if (it->kind == TS_VIEW_ITEM_PART)
    return last ? it->span_last : it->span_first;
  return it->label;
}

/* Moves parent's children into parts of at most max_children laid-out
 * items each, in their order (dot-only ones ride along), and the parts
 * into parts again while there are too many. */
static void split_children(ts_view_model *m, int parent)
{
  int max = m->opts.max_children;
  GArray *old = IT(m, parent)->children;
  int n_laid = 0;
  for (guint c = 0; old && c < old->len; c++)
    n_laid += !IT(m, g_array_index(old, int, c))->dot_only;
  if (max < 2 || n_laid <= max)
    return;
  IT(m, parent)->children = NULL;
  guint c = 0;
  while (c < old->len) {
    guint end = c;
    for (int n = 0; end < old->len; end++) {
      bool laid = !IT(m, g_array_index(old, int, end))->dot_only;
      if (laid && n == max)
        break;
      n += laid;
    }
    const char *first = span_label(m, g_array_index(old, int, c), false);
    const char *last = span_label(m, g_array_index(old, int, end - 1), true);
    char *label = g_strdup_printf("%s\u2026%s", first, last);
    int part = add_item(m, TS_VIEW_ITEM_PART, parent, label);
    g_free(label);
    vitem *it = IT(m, part);
    it->span_first = first;
    it->span_last = last;
    it->children = g_array_sized_new(FALSE, FALSE, sizeof(int), end - c);
    for (; c < end; c++) {
      int child = g_array_index(old, int, c);
      g_array_append_val(it->children, child);
      IT(m, child)->parent = part;
    }
  }
  g_array_free(old, TRUE);
  split_children(m, parent);
}

/* ---- orders, counts, edges per group, dots -------------------------------------- */

static void compute_preorder(ts_view_model *m)
{
  int n = (int)m->items->len;
  m->preorder = g_new(int, n);
  int *stack = g_new(int, n);
  int top = 0, k = 0;
  stack[top++] = TS_VIEW_ROOT;
  while (top) {
    int i = stack[--top];
    m->preorder[k++] = i;
    vitem *it = IT(m, i);
    it->depth = it->parent >= 0 ? IT(m, it->parent)->depth + 1 : 0;
    for (int c = it->children ? (int)it->children->len - 1 : -1; c >= 0; c--)
      stack[top++] = g_array_index(it->children, int, c);
  }
  g_assert(k == n);
  g_free(stack);
  for (int j = n - 1; j >= 0; j--) {
    vitem *it = IT(m, m->preorder[j]);
    if (it->kind == TS_VIEW_ITEM_OP)
      it->n_ops++;
    if (it->parent >= 0)
      IT(m, it->parent)->n_ops += it->n_ops;
  }
}

/* The lowest common ancestor of x and y, and its children holding each. */
static int lca(const ts_view_model *m, int x, int y, int *cx, int *cy)
{
  int px = -1, py = -1;
  while (IT(m, x)->depth > IT(m, y)->depth) {
    px = x;
    x = IT(m, x)->parent;
  }
  while (IT(m, y)->depth > IT(m, x)->depth) {
    py = y;
    y = IT(m, y)->parent;
  }
  while (x != y) {
    px = x;
    py = y;
    x = IT(m, x)->parent;
    y = IT(m, y)->parent;
  }
  *cx = px;
  *cy = py;
  return x;
}

static int cmp_group_edge(const void *a, const void *b)
{
  const int *x = a, *y = b; /* group, a, b, control */
  for (int i = 0; i < 4; i++)
    if (x[i] != y[i])
      return (x[i] > y[i]) - (x[i] < y[i]);
  return 0;
}

static void compute_group_edges(ts_view_model *m)
{
  GArray *keys = g_array_new(FALSE, FALSE, sizeof(int[4]));
  for (guint k = 0; k < m->edges->len; k++) {
    op_edge *e = &g_array_index(m->edges, op_edge, k);
    if (e->bytes > m->max_bytes)
      m->max_bytes = e->bytes;
    if (e->role != EDGE_FLOW)
      continue;
    e->lca = lca(m, e->src, e->dst, &e->a, &e->b);
    int key[4] = { e->lca, e->a, e->b, e->control };
    g_array_append_val(keys, key);
  }
  if (keys->len)
    qsort(keys->data, keys->len, sizeof(int[4]), cmp_group_edge);
  m->group_edges = g_array_new(FALSE, FALSE, sizeof(ts_view_group_edge));
  for (guint k = 0; k < keys->len; k++) {
    const int *key = &g_array_index(keys, int, 4 * k);
    vitem *g = IT(m, key[0]);
    if (k > 0 && cmp_group_edge(key, key - 4) == 0) {
      g_array_index(m->group_edges, ts_view_group_edge, m->group_edges->len - 1).count++;
      continue;
    }
    if (g->n_group_edges == 0)
      g->group_edge_start = (int)m->group_edges->len;
    g->n_group_edges++;
    ts_view_group_edge ge = { .a = key[1], .b = key[2], .count = 1, .control = key[3] != 0 };
    g_array_append_val(m->group_edges, ge);
  }
  g_array_free(keys, TRUE);
}

static int cmp_dot_edge(const void *a, const void *b)
{
  const op_edge *x = *(op_edge *const *)a, *y = *(op_edge *const *)b;
  if (x->src != y->src)
    return (x->src > y->src) - (x->src < y->src);
  return (x->dst > y->dst) - (x->dst < y->dst);
}

/* Every item on the way from a consumer up to (not including) the lowest
 * group that also holds the extracted source shows the source as a dot. */
static void compute_dots(ts_view_model *m)
{
  GPtrArray *dot_edges = g_ptr_array_new();
  for (guint k = 0; k < m->edges->len; k++) {
    op_edge *e = &g_array_index(m->edges, op_edge, k);
    if (e->role == EDGE_DOT)
      g_ptr_array_add(dot_edges, e);
  }
  if (dot_edges->len)
    qsort(dot_edges->pdata, dot_edges->len, sizeof(gpointer), cmp_dot_edge);
  for (guint i = 0; i < m->items->len; i++)
    IT(m, i)->mark = -1;
  for (guint k = 0; k < dot_edges->len; k++) {
    const op_edge *e = dot_edges->pdata[k];
    int cx, cy;
    int top = lca(m, e->src, e->dst, &cx, &cy);
    for (int w = e->dst; w != top; w = IT(m, w)->parent) {
      vitem *it = IT(m, w);
      if (it->mark == e->src)
        continue;
      it->mark = e->src;
      if (!it->dots)
        it->dots = g_array_new(FALSE, FALSE, sizeof(int));
      g_array_append_val(it->dots, e->src);
    }
  }
  g_ptr_array_free(dot_edges, TRUE);
}

static ts_view_state *state_new(const ts_view_model *m)
{
  ts_view_state *s = g_new0(ts_view_state, 1);
  s->serial = m->serial;
  s->n = (int)m->items->len;
  s->expanded = g_new0(guint8, s->n);
  return s;
}

static void reset_state(ts_view_model *m)
{
  for (int i = 0; i < m->state->n; i++)
    m->state->expanded[i] = IT(m, i)->default_expanded;
  m->state->expanded[TS_VIEW_ROOT] = 1;
}

ts_view_model *ts_view_model_new(const ts_graph *g, const ts_view_model_options *options)
{
  g_return_val_if_fail(g != NULL, NULL);
  ts_view_model *m = g_new0(ts_view_model, 1);
  m->refcount = 1;
  m->serial = next_serial();
  m->graph = g;
  m->opts = options ? *options : TS_VIEW_MODEL_OPTIONS_DEFAULT;
  m->items = g_array_new(FALSE, FALSE, sizeof(vitem));
  m->strings = g_string_chunk_new(4096);
  m->edges = g_array_new(FALSE, FALSE, sizeof(op_edge));
  m->node_items = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                        (GDestroyNotify)g_array_unref);
  const char *gname = ts_graph_name(g);
  add_item(m, TS_VIEW_ITEM_ROOT, -1, "");
  IT(m, TS_VIEW_ROOT)->label = g_string_chunk_insert_const(m->strings, gname ? gname : "");
  builder b = { m, g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL) };
  build_graph(&b, g, TS_VIEW_ROOT, "");
  g_hash_table_destroy(b.groups);

  collect_edges(m, g, g_hash_table_lookup(m->node_items, g));
  classify(m);
  compute_templates(m);
  if (m->opts.series_min > 1) {
    for (guint i = 0; i < m->items->len; i++)
      IT(m, i)->mark = -1;
    for (int i = (int)m->items->len - 1; i >= 0; i--)
      if (IT(m, i)->kind != TS_VIEW_ITEM_OP)
        fold_series(m, i);
  }
  for (int i = 0, n = (int)m->items->len; i < n; i++)
    if (IT(m, i)->kind != TS_VIEW_ITEM_OP)
      split_children(m, i);
  compute_preorder(m);
  compute_group_edges(m);
  compute_dots(m);
  m->state = state_new(m);
  reset_state(m);
  return m;
}

ts_view_model *ts_view_model_ref(ts_view_model *model)
{
  g_return_val_if_fail(model != NULL, NULL);
  g_atomic_int_inc(&model->refcount);
  return model;
}

void ts_view_model_unref(ts_view_model *model)
{
  if (!model || !g_atomic_int_dec_and_test(&model->refcount))
    return;
  for (guint i = 0; i < model->items->len; i++) {
    vitem *it = IT(model, i);
    if (it->children)
      g_array_free(it->children, TRUE);
    if (it->dots)
      g_array_free(it->dots, TRUE);
  }
  g_array_free(model->items, TRUE);
  g_array_free(model->edges, TRUE);
  g_array_free(model->group_edges, TRUE);
  g_hash_table_destroy(model->node_items);
  g_string_chunk_free(model->strings);
  g_free(model->preorder);
  ts_view_state_free(model->state);
  g_free(model);
}

const ts_graph *ts_view_model_graph(const ts_view_model *model)
{
  return model->graph;
}

int ts_view_model_n_items(const ts_view_model *model)
{
  return (int)model->items->len;
}

int ts_view_model_n_ops(const ts_view_model *model)
{
  return model->n_ops;
}

/* ---- item accessors ------------------------------------------------------------- */

static bool valid(const ts_view_model *m, int i)
{
  return m && i >= 0 && i < (int)m->items->len;
}

ts_view_item_kind ts_view_item_kind_of(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), TS_VIEW_ITEM_KIND_COUNT);
  return IT(model, item)->kind;
}

int ts_view_item_parent(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), -1);
  return IT(model, item)->parent;
}

int ts_view_item_depth(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), 0);
  return IT(model, item)->depth;
}

int ts_view_item_n_children(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), 0);
  GArray *c = IT(model, item)->children;
  return c ? (int)c->len : 0;
}

int ts_view_item_child(const ts_view_model *model, int item, int i)
{
  g_return_val_if_fail(i >= 0 && i < ts_view_item_n_children(model, item), -1);
  return g_array_index(IT(model, item)->children, int, i);
}

const char *ts_view_item_name(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), NULL);
  return IT(model, item)->name;
}

const char *ts_view_item_label(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), NULL);
  return IT(model, item)->label;
}

const char *ts_view_item_op_name(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), NULL);
  return IT(model, item)->op_name;
}

const ts_node *ts_view_item_node(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), NULL);
  return IT(model, item)->node;
}

int ts_view_item_n_ops(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), 0);
  return IT(model, item)->n_ops;
}

int ts_view_item_template(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), -1);
  return IT(model, item)->template_id;
}

bool ts_view_item_is_expandable(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), false);
  return IT(model, item)->children != NULL;
}

void ts_view_item_series_range(const ts_view_model *model, int item, int *first, int *last)
{
  g_return_if_fail(valid(model, item));
  if (first)
    *first = IT(model, item)->series_first;
  if (last)
    *last = IT(model, item)->series_last;
}

bool ts_view_item_is_extracted(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), false);
  return IT(model, item)->extracted;
}

bool ts_view_item_is_dot_only(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), false);
  return IT(model, item)->dot_only;
}

int ts_view_item_n_dots(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), 0);
  GArray *d = IT(model, item)->dots;
  return d ? (int)d->len : 0;
}

int ts_view_item_dot(const ts_view_model *model, int item, int i)
{
  g_return_val_if_fail(i >= 0 && i < ts_view_item_n_dots(model, item), -1);
  return g_array_index(IT(model, item)->dots, int, i);
}

int ts_view_model_item_for_node(const ts_view_model *model, const ts_graph *g, int node_id)
{
  g_return_val_if_fail(model != NULL, -1);
  GArray *map = g_hash_table_lookup(model->node_items, g);
  if (!map || node_id < 0 || node_id >= (int)map->len)
    return -1;
  return g_array_index(map, int, node_id);
}

int ts_view_group_n_edges(const ts_view_model *model, int group)
{
  g_return_val_if_fail(valid(model, group), 0);
  return IT(model, group)->n_group_edges;
}

const ts_view_group_edge *ts_view_group_edge_at(const ts_view_model *model, int group, int i)
{
  g_return_val_if_fail(i >= 0 && i < ts_view_group_n_edges(model, group), NULL);
  return &g_array_index(model->group_edges, ts_view_group_edge,
                        IT(model, group)->group_edge_start + i);
}

/* ---- expansion state --------------------------------------------------------------- */

ts_view_state *ts_view_state_copy(const ts_view_state *state)
{
  g_return_val_if_fail(state != NULL, NULL);
  ts_view_state *s = g_new(ts_view_state, 1);
  *s = *state;
  s->expanded = g_memdup2(state->expanded, (gsize)state->n);
  return s;
}

void ts_view_state_free(ts_view_state *state)
{
  if (!state)
    return;
  g_free(state->expanded);
  g_free(state);
}

bool ts_view_state_is_expanded(const ts_view_state *state, int item)
{
  g_return_val_if_fail(state != NULL, false);
  return item >= 0 && item < state->n && state->expanded[item];
}

bool ts_view_state_equal(const ts_view_state *a, const ts_view_state *b)
{
  g_return_val_if_fail(a != NULL && b != NULL, false);
  return a->serial == b->serial && a->n == b->n && memcmp(a->expanded, b->expanded, (size_t)a->n) == 0;
}

const ts_view_state *ts_view_model_state(const ts_view_model *model)
{
  g_return_val_if_fail(model != NULL, NULL);
  return model->state;
}

bool ts_view_model_set_state(ts_view_model *model, const ts_view_state *state)
{
  g_return_val_if_fail(model != NULL && state != NULL, false);
  if (state->serial != model->serial || state->n != model->state->n)
    return false;
  memcpy(model->state->expanded, state->expanded, (size_t)state->n);
  return true;
}

bool ts_view_model_is_expanded(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), false);
  return model->state->expanded[item];
}

bool ts_view_model_set_expanded(ts_view_model *model, int item, bool expanded)
{
  g_return_val_if_fail(valid(model, item), false);
  if (item == TS_VIEW_ROOT || !IT(model, item)->children)
    return false;
  if (model->state->expanded[item] == expanded)
    return false;
  model->state->expanded[item] = expanded;
  return true;
}

bool ts_view_model_toggle(ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), false);
  return ts_view_model_set_expanded(model, item, !model->state->expanded[item]);
}

void ts_view_model_expand_all(ts_view_model *model)
{
  g_return_if_fail(model != NULL);
  ts_view_model_expand_subtree(model, TS_VIEW_ROOT);
}

void ts_view_model_collapse_all(ts_view_model *model)
{
  g_return_if_fail(model != NULL);
  reset_state(model);
}

void ts_view_model_expand_subtree(ts_view_model *model, int item)
{
  g_return_if_fail(valid(model, item));
  GArray *stack = g_array_new(FALSE, FALSE, sizeof(int));
  g_array_append_val(stack, item);
  while (stack->len) {
    int i = g_array_index(stack, int, stack->len - 1);
    g_array_set_size(stack, stack->len - 1);
    GArray *c = IT(model, i)->children;
    if (!c)
      continue;
    model->state->expanded[i] = 1;
    g_array_append_vals(stack, c->data, c->len);
  }
  g_array_free(stack, TRUE);
}

/* ---- visibility ------------------------------------------------------------------------ */

/* rep[i]: the visible item standing for i (see ts_view_model_representative). */
static int *representatives(const ts_view_model *m, const ts_view_state *s)
{
  int n = (int)m->items->len;
  int *rep = g_new(int, n);
  for (int k = 0; k < n; k++) {
    int i = m->preorder[k];
    int p = IT(m, i)->parent;
    rep[i] = p < 0 || (rep[p] == p && s->expanded[p]) ? i : rep[p];
  }
  return rep;
}

static const ts_view_state *state_or_current(const ts_view_model *m, const ts_view_state *s)
{
  if (!s)
    return m->state;
  g_return_val_if_fail(s->serial == m->serial && s->n == (int)m->items->len, m->state);
  return s;
}

int ts_view_model_representative(const ts_view_model *model, const ts_view_state *state, int item)
{
  g_return_val_if_fail(valid(model, item), -1);
  state = state_or_current(model, state);
  int rep = item;
  for (int i = IT(model, item)->parent; i >= 0; i = IT(model, i)->parent)
    if (!state->expanded[i])
      rep = i;
  return rep;
}

bool ts_view_model_is_visible(const ts_view_model *model, const ts_view_state *state, int item)
{
  return ts_view_model_representative(model, state, item) == item;
}

GArray *ts_view_model_visible_items(const ts_view_model *model, const ts_view_state *state)
{
  g_return_val_if_fail(model != NULL, NULL);
  state = state_or_current(model, state);
  int *rep = representatives(model, state);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(int));
  for (guint k = 1; k < model->items->len; k++) {
    int i = model->preorder[k];
    if (rep[i] == i && !IT(model, i)->dot_only)
      g_array_append_val(out, i);
  }
  g_free(rep);
  return out;
}

typedef struct edge_ref {
  int src, dst, control;
  guint edge;
} edge_ref;

static int cmp_edge_ref(const void *a, const void *b)
{
  const edge_ref *x = a, *y = b;
  if (x->src != y->src)
    return (x->src > y->src) - (x->src < y->src);
  if (x->dst != y->dst)
    return (x->dst > y->dst) - (x->dst < y->dst);
  if (x->control != y->control)
    return x->control - y->control;
  return (x->edge > y->edge) - (x->edge < y->edge);
}

GArray *ts_view_model_visible_edges(const ts_view_model *model, const ts_view_state *state)
{
  g_return_val_if_fail(model != NULL, NULL);
  state = state_or_current(model, state);
  int *rep = representatives(model, state);
  GArray *refs = g_array_new(FALSE, FALSE, sizeof(edge_ref));
  for (guint k = 0; k < model->edges->len; k++) {
    const op_edge *e = &g_array_index(model->edges, op_edge, k);
    if (e->role != EDGE_FLOW || rep[e->src] == rep[e->dst])
      continue;
    edge_ref r = { rep[e->src], rep[e->dst], e->control, k };
    g_array_append_val(refs, r);
  }
  g_free(rep);
  if (refs->len)
    qsort(refs->data, refs->len, sizeof(edge_ref), cmp_edge_ref);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(ts_view_edge));
  for (guint k = 0; k < refs->len; k++) {
    const edge_ref *r = &g_array_index(refs, edge_ref, k);
    const op_edge *e = &g_array_index(model->edges, op_edge, r->edge);
    if (k > 0 && r[-1].src == r->src && r[-1].dst == r->dst && r[-1].control == r->control) {
      ts_view_edge *last = &g_array_index(out, ts_view_edge, out->len - 1);
      last->count++;
      last->bytes = add_bytes(last->bytes, e->bytes);
      continue;
    }
    ts_view_edge ve = {
      .src = r->src, .dst = r->dst, .group = e->lca, .src_child = e->a, .dst_child = e->b,
      .count = 1, .bytes = e->bytes, .control = e->control, .dtype = e->dtype, .shape = e->shape,
    };
    g_array_append_val(out, ve);
  }
  g_array_free(refs, TRUE);
  return out;
}

char *ts_view_edge_label(const ts_view_edge *edge)
{
  g_return_val_if_fail(edge != NULL, NULL);
  if (edge->control)
    return edge->count == 1 ? g_strdup("control") : g_strdup_printf("%d control deps", edge->count);
  if (edge->count > 1)
    return g_strdup_printf("%d tensors", edge->count);
  char *s = ts_shape_dtype_string(edge->dtype, edge->shape);
  char *out = g_strdup(s ? s : "");
  free(s);
  return out;
}

double ts_view_model_edge_width(const ts_view_model *model, int64_t bytes)
{
  g_return_val_if_fail(model != NULL, 0.75);
  const double lo = 0.75, hi = 12.0;
  double top = (double)MAX(model->max_bytes, TS_VIEW_EDGE_FULL_BYTES);
  if (bytes <= 1)
    return lo;
  double t = (pow((double)bytes, 0.3) - 1.0) / (pow(top, 0.3) - 1.0);
  return lo + (hi - lo) * CLAMP(t, 0.0, 1.0);
}

/* ---- search and reveal ------------------------------------------------------------------ */

/* "dir/file.c" matches "/src/dir/file.c" and "dir/file.c", not "xdir/file.c". */
static bool path_matches(const char *path, const char *query)
{
  size_t n = strlen(path), q = strlen(query);
  if (q > n || strcmp(path + n - q, query) != 0)
    return false;
  return q == n || path[n - q - 1] == '/';
}

GArray *ts_view_model_find(const ts_view_model *model, ts_view_find_kind kind, const char *query,
                           GError **error)
{
  g_return_val_if_fail(model != NULL && query != NULL, NULL);
  GRegex *re = NULL;
  char *file = NULL;
  long line = 0;
  int op = -1;
  if (kind == TS_VIEW_FIND_NAME) {
    GError *err = NULL;
    re = g_regex_new(query, G_REGEX_CASELESS, 0, &err);
    if (!re) {
      g_set_error(error, TS_VIEW_ERROR, TS_VIEW_ERROR_INVALID_QUERY,
                  "invalid regular expression '%s': %s", query, err->message);
      g_error_free(err);
      return NULL;
    }
  } else if (kind == TS_VIEW_FIND_LOCATION) {
    const char *colon = strrchr(query, ':');
    char *end = NULL;
    if (colon && colon > query)
      line = strtol(colon + 1, &end, 10);
    if (!colon || colon == query || !end || end == colon + 1 || *end || line <= 0) {
      g_set_error(error, TS_VIEW_ERROR, TS_VIEW_ERROR_INVALID_QUERY,
                  "invalid source location '%s': expected FILE:LINE (model.c:42)", query);
      return NULL;
    }
    file = g_strndup(query, (gsize)(colon - query));
  } else if (kind == TS_VIEW_FIND_OP) {
    op = ts_op_from_name(query);
    for (int o = 0; o < TS_OP_COUNT && op < 0; o++)
      if (g_ascii_strcasecmp(ts_op_name((ts_op)o), query) == 0)
        op = o;
    if (op < 0) {
      g_set_error(error, TS_VIEW_ERROR, TS_VIEW_ERROR_INVALID_QUERY, "unknown op type '%s'", query);
      return NULL;
    }
  } else {
    g_set_error(error, TS_VIEW_ERROR, TS_VIEW_ERROR_INVALID_QUERY, "unknown search kind %d", kind);
    return NULL;
  }
  GArray *out = g_array_new(FALSE, FALSE, sizeof(int));
  for (guint i = 0; i < model->items->len; i++) {
    const vitem *it = IT(model, i);
    if (it->kind != TS_VIEW_ITEM_OP)
      continue;
    bool hit = false;
    if (kind == TS_VIEW_FIND_NAME) {
      hit = g_regex_match(re, it->name, 0, NULL);
    } else if (kind == TS_VIEW_FIND_OP) {
      hit = (int)ts_node_op(it->node) == op;
    } else {
      ts_loc loc = ts_node_loc(it->node);
      hit = loc.file && loc.line == line && path_matches(loc.file, file);
    }
    if (hit) {
      int id = (int)i;
      g_array_append_val(out, id);
    }
  }
  if (re)
    g_regex_unref(re);
  g_free(file);
  return out;
}

/* A dot-only item shows beside its consumers: reveal the first of them. */
static int reveal_target(const ts_view_model *m, int item)
{
  if (!IT(m, item)->dot_only)
    return item;
  for (guint k = 0; k < m->edges->len; k++) {
    const op_edge *e = &g_array_index(m->edges, op_edge, k);
    if (e->src == item && e->role == EDGE_DOT)
      return e->dst;
  }
  return item;
}

GArray *ts_view_model_reveal_path(const ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), NULL);
  int target = reveal_target(model, item);
  GArray *path = g_array_new(FALSE, FALSE, sizeof(int));
  for (int i = IT(model, target)->parent; i > TS_VIEW_ROOT; i = IT(model, i)->parent)
    if (!model->state->expanded[i])
      g_array_prepend_val(path, i);
  return path;
}

int ts_view_model_reveal(ts_view_model *model, int item)
{
  g_return_val_if_fail(valid(model, item), 0);
  GArray *path = ts_view_model_reveal_path(model, item);
  int n = (int)path->len;
  for (guint k = 0; k < path->len; k++)
    model->state->expanded[g_array_index(path, int, k)] = 1;
  g_array_free(path, TRUE);
  return n;
}
