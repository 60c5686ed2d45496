/* exec.h — executables: what runs a concrete function's graph.
 *
 * An executable owns the optimized copy of a traced graph (passes rewrite
 * it with provenance; constant folding is the first) and a plan per graph
 * and subgraph.  Traced graphs stay as they were traced, for the viewer. */
#pragma once

#include "../graph-private.h"

typedef struct ts_executable ts_executable;

/* Optimizes traced (a copy: traced is not changed) and plans it; a graph
 * no pass would change is planned as it is (borrowed: it must outlive e). */
ts_executable *ts__executable_new(const ts_graph *traced);
void ts__executable_free(ts_executable *e);
const ts_graph *ts__executable_graph(const ts_executable *e);

/* Runs e on concrete inputs (one per graph input) and writes its outputs
 * (references in the caller's scope); only what the outputs and the
 * stateful ops need runs.  parent/parent_seq: the If/While op running a
 * subgraph, NULL at the top.  false + error. */
bool ts__executable_run(const ts_executable *e, ts_tensor *const *inputs, int n_inputs,
                        ts_tensor **outputs, const ts_node *parent, uint64_t parent_seq);

/* ---- passes (each: a new graph from an old one, provenance kept) ---------------------- */

/* Grappler's constant folding: stateless nodes fed by constants only
 * become Const nodes holding their value; a node whose evaluation fails is
 * left to fail at run time.  Subgraphs are folded too. */
ts_graph *ts__pass_fold_constants(const ts_graph *g, ts_graph *parent);
/* Would the pass change g (a node it could fold, or one to drop)? */
bool ts__pass_fold_would_change(const ts_graph *g);
