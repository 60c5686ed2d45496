/* ts-profile-values.h — a profiling session's per-node times as the graph
 * view's compute-time colouring: each traced node's total time (in ms),
 * found in its concrete function's graph by node path (ts_node_path: a
 * While body's "While/body/Cast_1" is not the top level's), with a note for
 * its tooltip (runs, total, mean, share), and the device that ran it as
 * its category (the device colouring: "SIM:0", "CPU", "mixed"). */
#pragma once

#include "tracescope-profiler.h"
#include "ts-graph-render.h"
#include "ts-loaded-module.h"

G_BEGIN_DECLS

/* "1.23 ms", "45.6 µs", "789 ns" (owned). */
char *ts_profile_format_ns(double ns);

/* Values for the nodes of every graph of module that session timed, from
 * its statistics by node (TSP_BY_NODE: ops run eagerly charged to the
 * traced nodes they stand for; a fused node, which the traced graph
 * lacks, shares its time among the nodes it stands for), with the inputs
 * the session's device copies carried (tsp_copies_compute: the edges the
 * device colouring tags; those into a fused node are left out).  Owned. */
ts_render_values *ts_profile_compute_times(const tsp_session *session, const tsp_stats *by_node,
                                           TsLoadedModule *module);

/* The node of graph (or of its subgraphs) of that path (ts_node_path,
 * the profiler's and the debugger's name for it: "While/body/Cast_1"),
 * else the first node of that name (an older trace file's or worker's
 * names); NULL if none. */
const ts_node *ts_profile_find_node(const ts_graph *graph, const char *name);

G_END_DECLS
