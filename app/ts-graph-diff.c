/* ts-graph-diff.c — matching two graphs' nodes by name, and an optimized
 * graph's nodes to the traced nodes they stand for. */
#include "ts-graph-diff.h"

struct ts_graph_diff {
  GHashTable *kinds; /* const ts_node * -> kind + 1 */
  int counts[TS_GRAPH_DIFF_N_KINDS];
};

static const char *const KIND_NAMES[TS_GRAPH_DIFF_N_KINDS] = {
  [TS_GRAPH_DIFF_SAME] = "same",
  [TS_GRAPH_DIFF_CHANGED] = "shape differs",
  [TS_GRAPH_DIFF_ONLY_LEFT] = "only left",
  [TS_GRAPH_DIFF_ONLY_RIGHT] = "only right",
};

static gboolean outputs_equal(const ts_node *a, const ts_node *b)
{
  if (ts_node_op(a) != ts_node_op(b) || ts_node_n_outputs(a) != ts_node_n_outputs(b))
    return FALSE;
  for (int i = 0; i < ts_node_n_outputs(a); i++)
    if (ts_node_output_dtype(a, i) != ts_node_output_dtype(b, i) ||
        !ts_shape_equal(ts_node_output_shape(a, i), ts_node_output_shape(b, i)))
      return FALSE;
  return TRUE;
}

static void mark(ts_graph_diff *diff, const ts_node *node, ts_graph_diff_kind kind)
{
  g_hash_table_insert(diff->kinds, (gpointer)node, GINT_TO_POINTER(kind + 1));
}

static GHashTable *nodes_by_name(const ts_graph *graph)
{
  GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
  for (int i = 0; graph && i < ts_graph_n_nodes(graph); i++) {
    const ts_node *node = ts_graph_node(graph, i);
    g_hash_table_insert(names, (gpointer)ts_node_name(node), (gpointer)node);
  }
  return names;
}

ts_graph_diff *ts_graph_diff_new(const ts_graph *left, const ts_graph *right)
{
  ts_graph_diff *diff = g_new0(ts_graph_diff, 1);
  diff->kinds = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_autoptr(GHashTable) right_names = nodes_by_name(right);
  for (int i = 0; left && i < ts_graph_n_nodes(left); i++) {
    const ts_node *a = ts_graph_node(left, i);
    const ts_node *b = g_hash_table_lookup(right_names, ts_node_name(a));
    ts_graph_diff_kind kind = !b ? TS_GRAPH_DIFF_ONLY_LEFT
                              : outputs_equal(a, b) ? TS_GRAPH_DIFF_SAME : TS_GRAPH_DIFF_CHANGED;
    mark(diff, a, kind);
    if (b) {
      mark(diff, b, kind);
      g_hash_table_remove(right_names, ts_node_name(a));
    }
    diff->counts[kind]++;
  }
  /* what is left of the right graph has no match */
  GHashTableIter iter;
  gpointer node;
  g_hash_table_iter_init(&iter, right_names);
  while (g_hash_table_iter_next(&iter, NULL, &node)) {
    mark(diff, node, TS_GRAPH_DIFF_ONLY_RIGHT);
    diff->counts[TS_GRAPH_DIFF_ONLY_RIGHT]++;
  }
  return diff;
}

void ts_graph_diff_free(ts_graph_diff *diff)
{
  if (!diff)
    return;
  g_hash_table_destroy(diff->kinds);
  g_free(diff);
}

int ts_graph_diff_count(const ts_graph_diff *diff, ts_graph_diff_kind kind)
{
  g_return_val_if_fail(diff != NULL && kind < TS_GRAPH_DIFF_N_KINDS, 0);
  return diff->counts[kind];
}

ts_graph_diff_kind ts_graph_diff_kind_of(const ts_graph_diff *diff, const ts_node *node)
{
  g_return_val_if_fail(diff != NULL, TS_GRAPH_DIFF_SAME);
  int k = GPOINTER_TO_INT(g_hash_table_lookup(diff->kinds, node));
  return k > 0 ? (ts_graph_diff_kind)(k - 1) : TS_GRAPH_DIFF_SAME;
}

char *ts_graph_diff_summary(const ts_graph_diff *diff, const char *left, const char *right)
{
  g_return_val_if_fail(diff != NULL, NULL);
  int changed = diff->counts[TS_GRAPH_DIFF_CHANGED];
  return g_strdup_printf("%s vs %s: %d node%s differ%s in shape, %d only left, %d only right",
                         left, right, changed, changed == 1 ? "" : "s", changed == 1 ? "s" : "",
                         diff->counts[TS_GRAPH_DIFF_ONLY_LEFT], diff->counts[TS_GRAPH_DIFF_ONLY_RIGHT]);
}

const char *ts_graph_diff_kind_name(ts_graph_diff_kind kind)
{
  g_return_val_if_fail(kind < TS_GRAPH_DIFF_N_KINDS, NULL);
  return KIND_NAMES[kind];
}

/* ---- before and after the passes ------------------------------------------------ */

static const char *const CHANGE_NAMES[TS_PASS_N_CHANGES] = {
  [TS_PASS_KEPT] = "kept",         [TS_PASS_FUSED] = "fused",         [TS_PASS_FOLDED] = "folded",
  [TS_PASS_MERGED] = "merged",     [TS_PASS_REWRITTEN] = "rewritten", [TS_PASS_REMOVED] = "removed",
};

ts_pass_change ts_pass_change_of(const ts_node *node, const ts_node *const *origins, int n)
{
  g_return_val_if_fail(node != NULL && n >= 0 && (origins != NULL || n == 0), TS_PASS_KEPT);
  ts_op op = ts_node_op(node);
  gboolean same_op = n > 0;
  for (int i = 0; i < n; i++)
    same_op &= ts_node_op(origins[i]) == op;
  if (op == TS_OP_CONST && n > 0 && !same_op)
    return TS_PASS_FOLDED;
  if (n > 1)
    return same_op ? TS_PASS_MERGED : TS_PASS_FUSED;
  return same_op ? TS_PASS_KEPT : TS_PASS_REWRITTEN;
}

const char *ts_pass_change_name(ts_pass_change change)
{
  g_return_val_if_fail(change < TS_PASS_N_CHANGES, NULL);
  return CHANGE_NAMES[change];
}

char *ts_pass_changes_summary(int n_traced, int n_optimized, const int counts[TS_PASS_N_CHANGES])
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "%d traced node%s, %d after the passes", n_traced, n_traced == 1 ? "" : "s",
                         n_optimized);
  const char *sep = ": ";
  for (int c = TS_PASS_FUSED; c < TS_PASS_N_CHANGES; c++)
    if (counts[c] > 0) {
      g_string_append_printf(s, "%s%d %s", sep, counts[c], CHANGE_NAMES[c]);
      sep = ", ";
    }
  return g_string_free(s, FALSE);
}
