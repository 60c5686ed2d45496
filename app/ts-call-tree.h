/* ts-call-tree.h — the Profiler panel's Call Tree: a tsp_tree as an
 * expandable table (name, runs, total, self, share of the wall time), its
 * heaviest path open to start. */
#pragma once

#include <gtk/gtk.h>

#include "tracescope-profiler.h"

G_BEGIN_DECLS

#define TS_TYPE_CALL_TREE (ts_call_tree_get_type())
G_DECLARE_FINAL_TYPE(TsCallTree, ts_call_tree, TS, CALL_TREE, GtkWidget)

TsCallTree *ts_call_tree_new(void);
/* Shows tree (owned; NULL: nothing). */
void ts_call_tree_set_tree(TsCallTree *self, tsp_tree *tree);
/* The rows shown (expanded ones' children included), for tests: the
 * tree's node index of row i, or -1. */
guint ts_call_tree_get_n_rows(TsCallTree *self);
int ts_call_tree_get_node(TsCallTree *self, guint i);
const tsp_tree *ts_call_tree_get_tree(TsCallTree *self);

G_END_DECLS
