/* dce.c — dead-code elimination: a copy of the graph (and its subgraphs)
 * holding only what the outputs and the side effects need.  Stateful nodes
 * (prints, assigns, variable reads, If/While holding one) are roots, so
 * they and everything they depend on stay, data or control edge alike;
 * graph inputs stay as the calling convention. */
#include "exec.h"

ts_graph *ts__pass_dce(const ts_graph *g, ts_graph *parent, ts_pass_stats *stats)
{
  ts_graph *out = ts__graph_copy(g, parent);
  stats->count += ts__graph_count_nodes(g) - ts__graph_count_nodes(out);
  return out;
}
