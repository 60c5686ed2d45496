/* ts-worker-origins.h — provenance across the process boundary, both
 * ways.  The serialized form keeps origins within one graph only
 * (docs/graph-format.md), so an optimized graph arrives with each node
 * standing for itself.  Beside it the worker sends what each of its nodes
 * stands for in the traced graph, as a(uau): a node's place and the places
 * of the traced nodes it stands for.  A place is the node's index in a
 * walk both sides make alike, since serializing keeps node ids and
 * subgraphs: a graph's nodes by id, each followed by its subgraphs' nodes
 * (depth first).  The app reads that into a TsWorkerOrigins over its copy
 * of the traced graph and the optimized graph it was sent
 * (ts-worker-optimized.h). */
#pragma once

#include <gio/gio.h>
#include <tracescope.h>

G_BEGIN_DECLS

/* The number of places in g: its nodes and its subgraphs' nodes. */
int ts_worker_origins_n_places(const ts_graph *g);

/* The worker's side: what each node of optimized (and its subgraphs)
 * stands for among traced's nodes, as a(uau) (floating).  Origins outside
 * traced are left out. */
GVariant *ts_worker_origins_to_variant(const ts_graph *optimized, const ts_graph *traced);

typedef struct TsWorkerOrigins TsWorkerOrigins;

/* The app's side: origins (a(uau)) over the graphs as they read back;
 * both must outlive the table.  NULL + TS_WORKER_ERROR_PROTOCOL naming
 * the entry that does not fit them. */
TsWorkerOrigins *ts_worker_origins_new(GVariant *origins, const ts_graph *optimized, const ts_graph *traced,
                                       GError **error);
void ts_worker_origins_free(TsWorkerOrigins *o);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TsWorkerOrigins, ts_worker_origins_free)

/* The traced nodes that node (of the optimized graph) stands for, in the
 * order the passes gave them, and their number in *n; NULL and 0 for a
 * node the table does not know.  Borrowed. */
const ts_node *const *ts_worker_origins_traced(const TsWorkerOrigins *o, const ts_node *node, int *n);
/* The nodes of the optimized graph that stand for node (of the traced
 * graph); NULL and 0 for none (the passes removed it).  Borrowed. */
const ts_node *const *ts_worker_origins_optimized(const TsWorkerOrigins *o, const ts_node *node, int *n);

G_END_DECLS
