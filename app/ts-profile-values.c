/* ts-profile-values.c — per-node times from a session onto the module's graphs. */
#include "ts-profile-values.h"

#include <string.h>

char *ts_profile_format_ns(double ns)
{
  if (ns >= 1e9)
    return g_strdup_printf("%.3g s", ns / 1e9);
  if (ns >= 1e6)
    return g_strdup_printf("%.3g ms", ns / 1e6);
  if (ns >= 1e3)
    return g_strdup_printf("%.3g µs", ns / 1e3);
  return g_strdup_printf("%.0f ns", ns);
}

/* path -> node over graph and its subgraphs: a subgraph's nodes by their
 * path (ts_node_path, the session's name for them), so a While body's
 * "While/body/Cast_1" is not the top level's "Cast_1". */
static void index_paths(GHashTable *paths, const ts_graph *g)
{
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (!n)
      continue;
    g_hash_table_insert(paths, ts_node_path(n), (gpointer)n);
    for (int k = 0; k < ts_node_n_subgraphs(n); k++)
      index_paths(paths, ts_node_subgraph(n, k));
  }
}

static GHashTable *paths_new(void)
{
  return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

/* The node of that path over g and its subgraphs; meanwhile the first
 * node named so goes to *named (a name that is no path: an older trace
 * file's or worker's). */
static const ts_node *find_path(const ts_graph *g, const char *path, const ts_node **named)
{
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (!n)
      continue;
    g_autofree char *p = ts_node_path(n);
    if (g_strcmp0(p, path) == 0)
      return n;
    if (!*named && strcmp(ts_node_name(n), path) == 0)
      *named = n;
    for (int k = 0; k < ts_node_n_subgraphs(n); k++) {
      const ts_node *found = find_path(ts_node_subgraph(n, k), path, named);
      if (found)
        return found;
    }
  }
  return NULL;
}

const ts_node *ts_profile_find_node(const ts_graph *graph, const char *name)
{
  g_return_val_if_fail(graph != NULL && name != NULL, NULL);
  const ts_node *named = NULL;
  const ts_node *n = find_path(graph, name, &named);
  return n ? n : named;
}

/* A concrete function's key: every concrete function's graph is named
 * after its function, so the signature tells them apart. */
static char *concrete_key(const char *function, const char *signature)
{
  return g_strdup_printf("%s\n%s", function ? function : "", signature ? signature : "");
}

/* (function, signature) of each concrete function of the module -> (node
 * path -> node); and a graph's name -> the first of its name's, for
 * nodes whose concrete function the session does not know. */
static GHashTable *index_module(TsLoadedModule *module)
{
  GHashTable *graphs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_hash_table_unref);
  for (int f = 0; f < ts_loaded_module_get_n_functions(module); f++) {
    TsModuleFunction *fn = ts_loaded_module_get_function(module, f);
    for (guint c = 0; c < fn->concrete->len; c++) {
      const TsConcreteInfo *cf = g_ptr_array_index(fn->concrete, c);
      if (!cf->graph)
        continue;
      GHashTable *paths = paths_new();
      index_paths(paths, cf->graph);
      if (!g_hash_table_contains(graphs, ts_graph_name(cf->graph)))
        g_hash_table_insert(graphs, g_strdup(ts_graph_name(cf->graph)), g_hash_table_ref(paths));
      g_hash_table_insert(graphs, concrete_key(cf->function, cf->signature), paths);
    }
  }
  return graphs;
}

/* The node of the module's graphs that session node i names, in its
 * concrete function's graph, or NULL. */
static const ts_node *module_node(const tsp_session *session, GHashTable *graphs, uint32_t i)
{
  const tsp_node_info *info = tsp_session_node(session, i);
  if (!info)
    return NULL;
  const tsp_concrete_info *ci = info->concrete ? tsp_session_concrete(session, info->concrete) : NULL;
  g_autofree char *key = ci ? concrete_key(ci->function, ci->signature) : NULL;
  GHashTable *paths = key ? g_hash_table_lookup(graphs, key) : NULL;
  if (!paths)
    paths = g_hash_table_lookup(graphs, tsp_session_string(session, info->graph));
  return paths ? g_hash_table_lookup(paths, info->name) : NULL;
}

ts_render_values *ts_profile_compute_times(const tsp_session *session, const tsp_stats *st,
                                           TsLoadedModule *module)
{
  g_return_val_if_fail(session != NULL && st != NULL && TS_IS_LOADED_MODULE(module), NULL);
  ts_render_values *values = ts_render_values_new("ms");
  g_autoptr(GHashTable) graphs = index_module(module);
  for (int i = 0; i < st->n; i++) {
    const tsp_stat *r = &st->rows[i];
    const ts_node *n = module_node(session, graphs, r->node);
    /* on a device, its kernels' time, the host's launch beside it */
    double time_ns = r->device_count ? r->device_ns : r->total_ns;
    g_autofree char *total = ts_profile_format_ns(time_ns), *median = ts_profile_format_ns(tsp_stat_time_p50_ns(r));
    g_autofree char *launch = ts_profile_format_ns(r->total_ns);
    g_autofree char *note =
      r->device_count
        ? g_strdup_printf("%" G_GUINT64_FORMAT " run%s on %s · %s in kernels · %s median kernel · %s host launch",
                          r->count, r->count == 1 ? "" : "s", r->device, total, median, launch)
        : g_strdup_printf("%" G_GUINT64_FORMAT " run%s · %s total · %s median · %.1f %% of the wall time",
                          r->count, r->count == 1 ? "" : "s", total, median, 100 * r->share);
    if (n) {
      ts_render_values_set(values, n, time_ns / 1e6);
      ts_render_values_set_note(values, n, note);
      ts_render_values_set_category(values, n, r->device);
      continue;
    }
    /* a fused node, which the traced graph does not have: the nodes it
     * stands for share its time there, each saying whose it is */
    const tsp_node_info *info = tsp_session_node(session, r->node);
    for (int k = 0; info && k < info->n_origins; k++) {
      const ts_node *o = module_node(session, graphs, info->origins[k]);
      double before = 0;
      if (!o)
        continue;
      ts_render_values_lookup(values, o, &before);
      ts_render_values_set(values, o, before + time_ns / info->n_origins / 1e6);
      g_autofree char *part = g_strdup_printf("fused into %s: %s", info->name, note);
      ts_render_values_set_note(values, o, part);
      ts_render_values_set_category(values, o, r->device);
    }
  }
  g_autoptr(GArray) copies = tsp_copies_compute(session);
  for (guint i = 0; i < copies->len; i++) {
    const tsp_copy *c = &g_array_index(copies, tsp_copy, i);
    const ts_node *n = module_node(session, graphs, c->node);
    if (n && c->input < ts_node_n_inputs(n))
      ts_render_values_add_copy(values, n, c->input, tsp_session_device(session, c->device));
  }
  return values;
}
