/* ts-worker-origins.c — what an optimized graph's nodes stand for, sent
 * beside the graph and read back over the app's copies. */
#include "ts-worker-origins.h"

#include "ts-worker-error.h"

struct TsWorkerOrigins {
  GHashTable *traced;    /* optimized node -> GPtrArray of traced nodes */
  GHashTable *optimized; /* traced node -> GPtrArray of optimized nodes */
};

/* Every node of g and its subgraphs in the order both sides walk them. */
static void walk(const ts_graph *g, GPtrArray *nodes)
{
  for (int id = 0; id < ts_graph_n_nodes(g); id++) {
    const ts_node *n = ts_graph_node(g, id);
    g_ptr_array_add(nodes, (gpointer)n);
    for (int s = 0; s < ts_node_n_subgraphs(n); s++)
      walk(ts_node_subgraph(n, s), nodes);
  }
}

int ts_worker_origins_n_places(const ts_graph *g)
{
  g_autoptr(GPtrArray) nodes = g_ptr_array_new();
  walk(g, nodes);
  return (int)nodes->len;
}

GVariant *ts_worker_origins_to_variant(const ts_graph *optimized, const ts_graph *traced)
{
  g_autoptr(GPtrArray) traced_nodes = g_ptr_array_new();
  g_autoptr(GPtrArray) nodes = g_ptr_array_new();
  walk(traced, traced_nodes);
  walk(optimized, nodes);
  g_autoptr(GHashTable) places = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (guint i = 0; i < traced_nodes->len; i++)
    g_hash_table_insert(places, traced_nodes->pdata[i], GUINT_TO_POINTER(i + 1));
  GVariantBuilder b;
  g_variant_builder_init(&b, G_VARIANT_TYPE("a(uau)"));
  for (guint i = 0; i < nodes->len; i++) {
    const ts_node *n = nodes->pdata[i];
    g_variant_builder_open(&b, G_VARIANT_TYPE("(uau)"));
    g_variant_builder_add(&b, "u", (guint32)i);
    g_variant_builder_open(&b, G_VARIANT_TYPE("au"));
    for (int k = 0; k < ts_node_n_origins(n); k++) {
      guint place = GPOINTER_TO_UINT(g_hash_table_lookup(places, ts_node_origin(n, k)));
      if (place)
        g_variant_builder_add(&b, "u", (guint32)(place - 1));
    }
    g_variant_builder_close(&b);
    g_variant_builder_close(&b);
  }
  return g_variant_builder_end(&b);
}

static void add(GHashTable *table, const ts_node *key, const ts_node *value)
{
  GPtrArray *list = g_hash_table_lookup(table, key);
  if (!list) {
    list = g_ptr_array_new();
    g_hash_table_insert(table, (gpointer)key, list);
  }
  g_ptr_array_add(list, (gpointer)value);
}

TsWorkerOrigins *ts_worker_origins_new(GVariant *origins, const ts_graph *optimized, const ts_graph *traced,
                                       GError **error)
{
  g_return_val_if_fail(origins != NULL && optimized != NULL && traced != NULL, NULL);
  if (!g_variant_is_of_type(origins, G_VARIANT_TYPE("a(uau)"))) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "origins of type %s, not a(uau)",
                g_variant_get_type_string(origins));
    return NULL;
  }
  g_autoptr(GPtrArray) traced_nodes = g_ptr_array_new();
  g_autoptr(GPtrArray) nodes = g_ptr_array_new();
  walk(traced, traced_nodes);
  walk(optimized, nodes);
  g_autoptr(TsWorkerOrigins) o = g_new0(TsWorkerOrigins, 1);
  o->traced = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_ptr_array_unref);
  o->optimized = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_ptr_array_unref);
  g_autofree guint8 *named = g_new0(guint8, nodes->len + 1);
  gsize count = g_variant_n_children(origins);
  for (gsize i = 0; i < count; i++) {
    guint32 place;
    g_autoptr(GVariant) of = NULL;
    g_variant_get_child(origins, i, "(u@au)", &place, &of);
    if (place >= nodes->len || named[place]) {
      g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                  "origins entry %" G_GSIZE_FORMAT " names node %u of the optimized graph's %u, %s", i, place,
                  nodes->len, place >= nodes->len ? "which has no such node" : "named before");
      return NULL;
    }
    named[place] = 1;
    gsize n;
    const guint32 *from = g_variant_get_fixed_array(of, &n, sizeof(guint32));
    for (gsize k = 0; k < n; k++) {
      if (from[k] >= traced_nodes->len) {
        g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                    "origins entry %" G_GSIZE_FORMAT " (node %u) stands for node %u of the traced graph's %u", i,
                    place, from[k], traced_nodes->len);
        return NULL;
      }
      add(o->traced, nodes->pdata[place], traced_nodes->pdata[from[k]]);
      add(o->optimized, traced_nodes->pdata[from[k]], nodes->pdata[place]);
    }
  }
  return g_steal_pointer(&o);
}

void ts_worker_origins_free(TsWorkerOrigins *o)
{
  if (!o)
    return;
  g_clear_pointer(&o->traced, g_hash_table_unref);
  g_clear_pointer(&o->optimized, g_hash_table_unref);
  g_free(o);
}

static const ts_node *const *lookup(GHashTable *table, const ts_node *node, int *n)
{
  GPtrArray *list = table ? g_hash_table_lookup(table, node) : NULL;
  *n = list ? (int)list->len : 0;
  return list ? (const ts_node *const *)list->pdata : NULL;
}

const ts_node *const *ts_worker_origins_traced(const TsWorkerOrigins *o, const ts_node *node, int *n)
{
  g_return_val_if_fail(o != NULL && n != NULL, NULL);
  return lookup(o->traced, node, n);
}

const ts_node *const *ts_worker_origins_optimized(const TsWorkerOrigins *o, const ts_node *node, int *n)
{
  g_return_val_if_fail(o != NULL && n != NULL, NULL);
  return lookup(o->optimized, node, n);
}
