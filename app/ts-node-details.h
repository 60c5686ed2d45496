/* ts-node-details.h — TsNodeDetails, what one graph node is: its op, name,
 * scope and attributes; its inputs with their producers and its outputs
 * with their consumers (shapes and dtypes); the source lines around where
 * it was written (read from disk off the main thread, or a note saying
 * where they were looked for); its provenance (the traced nodes an
 * optimized node stands for, or whether a traced node has an eager twin);
 * an If/While node's subgraphs; and its last timing and output value once
 * a profiler or an inspector gives them.
 *
 * Producers, consumers, origins and subgraphs are activatable rows:
 *   "activate-node"     (TsNodeDetails *, gpointer node): a const ts_node *
 *                       to select and reveal in the graph;
 *   "activate-subgraph" (TsNodeDetails *, gpointer node, int index): open
 *                       subgraph `index` of the If/While `node` in the graph.
 * Property "busy" (read-only): the source lines are being read. */
#pragma once

#include <gtk/gtk.h>
#include <tracescope.h>

#include "ts-engine-worker.h"

G_BEGIN_DECLS

/* Lines shown either side of the node's source line. */
#define TS_NODE_DETAILS_CONTEXT 5

#define TS_TYPE_NODE_DETAILS (ts_node_details_get_type())
G_DECLARE_FINAL_TYPE(TsNodeDetails, ts_node_details, TS, NODE_DETAILS, GtkWidget)

GtkWidget *ts_node_details_new(void);

/* Shows node (NULL: a page saying to select an op), as TsGraphView's
 * "node-selected" gives it.  Its graph must outlive the panel's showing it
 * or be replaced first (the view's selection is cleared when its graph
 * changes).  Timing and value go back to "not profiled yet" and "no value
 * recorded"; the source lines are read in the background. */
void ts_node_details_set_node(TsNodeDetails *self, const ts_node *node);
const ts_node *ts_node_details_get_node(TsNodeDetails *self);
/* The traced nodes the node shown stands for, when its graph does not
 * carry them: an optimized graph from the worker reads back with each node
 * standing for itself (ts-worker-origins.h).  Until the next node. */
void ts_node_details_set_origins(TsNodeDetails *self, const ts_node *const *origins, int n_origins);

/* Where relative source file names are looked for (ts_source_search_dirs);
 * taken for the next node shown. */
/* Where source lines come from: engine reads them where the module at
 * module_file is (here, or on a remote worker's machine). */
void ts_node_details_set_source(TsNodeDetails *self, TsEngineWorker *engine, const char *module_file);
gboolean ts_node_details_get_busy(TsNodeDetails *self);

/* The node's last run, for the profiler: the device that ran it and its
 * time per run in the last profile (last_ns < 0 or device NULL: "not
 * profiled yet"). */
void ts_node_details_set_timing(TsNodeDetails *self, const char *device, gint64 last_ns);
/* Its last output, for the tensor inspector: a widget shown in the
 * "Last Output" section (NULL: "no value recorded"). */
void ts_node_details_set_value_view(TsNodeDetails *self, GtkWidget *view);

G_END_DECLS
