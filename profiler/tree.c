/* tree.c — the call tree: spans merged by their path of names from the
 * top (a thread's top-level spans, what each ran inside it, and so on),
 * with each node's runs, total and self time.  Nesting is by time
 * containment on each thread, as for self times (stats.c), so it reads
 * our recordings and another tool's traces alike. */
#include "profiler-private.h"

#include <stdlib.h>
#include <string.h>

typedef struct span {
  const tsp_event *e;
  uint64_t i; /* in recording order: of two equal spans, the earlier holds the later */
} span;

static int cmp_by_start(const void *a, const void *b)
{
  const span *x = a, *y = b;
  if (x->e->start_ns != y->e->start_ns)
    return x->e->start_ns < y->e->start_ns ? -1 : 1;
  if (x->e->end_ns != y->e->end_ns)
    return x->e->end_ns > y->e->end_ns ? -1 : 1; /* the outer first */
  return (x->i > y->i) - (x->i < y->i);
}

/* A recorded span ends after what ran inside it and is recorded after
 * it; a file's spans come in start order.  Equal spans: the earlier in a
 * file holds the later, the later recorded holds the earlier. */
static bool file_order(const span *v, size_t n)
{
  for (size_t k = 1; k < n; k++)
    if (v[k].e->start_ns < v[k - 1].e->start_ns)
      return false;
  return true;
}

static const char *span_name(const tsp_session *s, const tsp_event *e)
{
  return e->kind == TSP_EVENT_CALL ? tsp_session_string(s, e->node) : tsp_event_op_name(s, e);
}

typedef struct key {
  int parent;
  const char *name;
} key;

static guint key_hash(gconstpointer p)
{
  const key *k = p;
  return g_str_hash(k->name) * 31u + (guint)k->parent;
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
  const key *x = a, *y = b;
  return x->parent == y->parent && strcmp(x->name, y->name) == 0;
}

static int child_of(GArray *nodes, GHashTable *index, GStringChunk *names, int parent, const char *name)
{
  key k = { parent, name };
  gpointer v = g_hash_table_lookup(index, &k);
  if (v)
    return GPOINTER_TO_INT(v) - 1;
  k.name = g_string_chunk_insert_const(names, name);
  tsp_tree_node n = { .name = k.name, .parent = parent, .first_child = -1, .next_sibling = -1,
                      .depth = parent < 0 ? 0 : g_array_index(nodes, tsp_tree_node, parent).depth + 1 };
  g_array_append_val(nodes, n);
  int i = (int)nodes->len - 1;
  key *stored = g_new(key, 1);
  *stored = k;
  g_hash_table_insert(index, stored, GINT_TO_POINTER(i + 1));
  return i;
}

static void add_thread(const tsp_session *s, int t, const tsp_filter *f, GArray *nodes, GHashTable *index,
                       GStringChunk *names, uint64_t *first, uint64_t *last)
{
  GArray *spans = g_array_new(FALSE, FALSE, sizeof(span));
  tsp_iter it;
  tsp_iter_init(&it, s, t);
  uint64_t i = 0;
  for (const tsp_event *e; (e = tsp_iter_next(&it)); i++) {
    if ((e->kind != TSP_EVENT_OP && e->kind != TSP_EVENT_CALL) || e->start_ns < f->from_ns ||
        (f->to_ns && e->start_ns >= f->to_ns) || (e->kind == TSP_EVENT_OP && !(f->modes & tsp__event_mode(e))))
      continue;
    span sp = { e, i };
    g_array_append_val(spans, sp);
  }
  span *v = (span *)(void *)spans->data;
  if (!file_order(v, spans->len))
    for (guint k = 0; k < spans->len; k++)
      v[k].i = UINT64_MAX - v[k].i; /* recorded: the later of two equal spans holds the earlier */
  if (spans->len > 1)
    qsort(v, spans->len, sizeof(span), cmp_by_start);
  /* the open spans: their ends and tree nodes */
  GArray *ends = g_array_new(FALSE, FALSE, sizeof(uint64_t)), *open = g_array_new(FALSE, FALSE, sizeof(int));
  for (guint k = 0; k < spans->len; k++) {
    const tsp_event *e = v[k].e;
    while (ends->len && e->end_ns > g_array_index(ends, uint64_t, ends->len - 1)) {
      g_array_set_size(ends, ends->len - 1);
      g_array_set_size(open, open->len - 1);
    }
    int parent = open->len ? g_array_index(open, int, open->len - 1) : -1;
    int n = child_of(nodes, index, names, parent, span_name(s, e));
    tsp_tree_node *node = &g_array_index(nodes, tsp_tree_node, n);
    double ns = (double)(e->end_ns - e->start_ns);
    node->count++;
    node->total_ns += ns;
    node->self_ns += ns;
    if (parent >= 0)
      g_array_index(nodes, tsp_tree_node, parent).self_ns -= ns;
    g_array_append_val(ends, e->end_ns);
    g_array_append_val(open, n);
    *first = MIN(*first, e->start_ns);
    *last = MAX(*last, e->end_ns);
  }
  g_array_unref(ends);
  g_array_unref(open);
  g_array_unref(spans);
}

static gint cmp_total(gconstpointer a, gconstpointer b, gpointer data)
{
  const tsp_tree_node *nodes = data;
  const tsp_tree_node *x = &nodes[*(const int *)a], *y = &nodes[*(const int *)b];
  if (x->total_ns != y->total_ns)
    return x->total_ns < y->total_ns ? 1 : -1;
  return strcmp(x->name, y->name);
}

tsp_tree *tsp_tree_compute(const tsp_session *s, const tsp_filter *f)
{
  GArray *nodes = g_array_new(FALSE, TRUE, sizeof(tsp_tree_node));
  GHashTable *index = g_hash_table_new_full(key_hash, key_equal, g_free, NULL);
  GStringChunk *names = g_string_chunk_new(4096);
  uint64_t first = UINT64_MAX, last = 0;
  for (int t = 0; t < tsp_session_n_threads(s); t++)
    add_thread(s, t, f, nodes, index, names, &first, &last);
  g_hash_table_unref(index);
  tsp_tree *tree = g_new0(tsp_tree, 1);
  tree->names = names;
  tree->n = (int)nodes->len;
  tree->nodes = (tsp_tree_node *)(void *)g_array_free(nodes, FALSE);
  tree->wall_ns = tree->n ? (double)(last - first) : 0;
  tree->first_root = -1;
  /* children linked largest first: sort every node by total, then link in reverse */
  GArray *order = g_array_sized_new(FALSE, FALSE, sizeof(int), (guint)tree->n);
  for (int i = 0; i < tree->n; i++)
    g_array_append_val(order, i);
  g_array_sort_with_data(order, cmp_total, tree->nodes);
  for (int k = tree->n - 1; k >= 0; k--) {
    int i = g_array_index(order, int, k);
    tsp_tree_node *n = &tree->nodes[i];
    int *head = n->parent >= 0 ? &tree->nodes[n->parent].first_child : &tree->first_root;
    n->next_sibling = *head;
    *head = i;
    n->self_ns = MAX(0.0, n->self_ns);
  }
  g_array_unref(order);
  return tree;
}

void tsp_tree_free(tsp_tree *tree)
{
  if (!tree)
    return;
  g_free(tree->nodes);
  g_string_chunk_free(tree->names);
  g_free(tree);
}
