/* ts-graph-diff.h — what differs between two concrete functions' graphs:
 * nodes are matched by name (names are stable across retraces:
 * "dense_1/MatMul"); a matched pair differs when its op or any output's
 * dtype or shape does.  Only the top-level graphs are compared.  And what
 * the optimizer's passes made of a traced graph's nodes, matched through
 * provenance.  No GTK: the compare pane colours with it, the tests check
 * it directly. */
#pragma once

#include <glib.h>
#include <tracescope.h>

G_BEGIN_DECLS

typedef enum ts_graph_diff_kind {
  TS_GRAPH_DIFF_SAME,
  TS_GRAPH_DIFF_CHANGED,    /* in both, op or output dtypes or shapes differ */
  TS_GRAPH_DIFF_ONLY_LEFT,
  TS_GRAPH_DIFF_ONLY_RIGHT,
  TS_GRAPH_DIFF_N_KINDS
} ts_graph_diff_kind;

typedef struct ts_graph_diff ts_graph_diff;

/* Owned (ts_graph_diff_free); the graphs must outlive it. */
ts_graph_diff *ts_graph_diff_new(const ts_graph *left, const ts_graph *right);
void ts_graph_diff_free(ts_graph_diff *diff);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ts_graph_diff, ts_graph_diff_free)

/* How many nodes are of kind (a changed pair counts once). */
int ts_graph_diff_count(const ts_graph_diff *diff, ts_graph_diff_kind kind);
/* The kind of a node of either graph (TS_GRAPH_DIFF_SAME for a node of neither). */
ts_graph_diff_kind ts_graph_diff_kind_of(const ts_graph_diff *diff, const ts_node *node);
/* "LEFT vs RIGHT: 3 nodes differ in shape, 1 only left, 0 only right" (owned). */
char *ts_graph_diff_summary(const ts_graph_diff *diff, const char *left, const char *right);
/* A short name of a kind, for legends: "same", "shape differs", "only left", "only right". */
const char *ts_graph_diff_kind_name(ts_graph_diff_kind kind);

/* ---- before and after the passes ---- */

typedef enum ts_pass_change {
  TS_PASS_KEPT,       /* a copy of one traced node of its own op */
  TS_PASS_FUSED,      /* stands for several nodes of other ops (fuse) */
  TS_PASS_FOLDED,     /* a constant standing for computed nodes (fold) */
  TS_PASS_MERGED,     /* stands for several nodes of its own op (cse) */
  TS_PASS_REWRITTEN,  /* stands for one node of another op (simplify), or for none */
  TS_PASS_REMOVED,    /* a traced node nothing stands for (dce, simplify) */
  TS_PASS_N_CHANGES
} ts_pass_change;

/* What the passes made of an optimized node standing for origins[0..n). */
ts_pass_change ts_pass_change_of(const ts_node *node, const ts_node *const *origins, int n);
/* "kept", "fused", "folded", "merged", "rewritten", "removed". */
const char *ts_pass_change_name(ts_pass_change change);
/* "302 traced nodes, 120 after the passes: 101 fused, 1 folded, 3 removed"
 * from the counts of the optimized nodes' changes (and of the traced nodes
 * removed); the kinds with none are left out (owned). */
char *ts_pass_changes_summary(int n_traced, int n_optimized, const int counts[TS_PASS_N_CHANGES]);

G_END_DECLS
