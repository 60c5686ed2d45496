/* ts-node-focus.h — the node the user is looking at, the same in every
 * panel that shows nodes.  Selected in the graph (or in one of two compared
 * graphs), it shows in the node details with what the profiler and the
 * debugger know of it (its time per run, its last output), and the
 * profiler's table keeps its row; a profiler row, the debugger's op and the
 * details' links (an input, a subgraph) reveal their node in the graph.
 *
 * The panels are the window's (borrowed); ts_node_focus_shut_down, from
 * the window's dispose, lets go of them before they go. */
#pragma once

#include <gtk/gtk.h>

#include "ts-compare-pane.h"
#include "ts-debug-panel.h"
#include "ts-graph-pane.h"
#include "ts-node-details.h"
#include "ts-profiler-panel.h"

G_BEGIN_DECLS

/* What shows nodes (borrowed). */
typedef struct {
  TsGraphPane *graph_pane;
  TsComparePane *compare_pane;
  GtkStack *graph_stack; /* its "compare" page shows the compare pane */
  TsNodeDetails *node_details;
  TsProfilerPanel *profiler_panel;
  TsDebugPanel *debug_panel;
} TsNodePanels;

#define TS_TYPE_NODE_FOCUS (ts_node_focus_get_type())
G_DECLARE_FINAL_TYPE(TsNodeFocus, ts_node_focus, TS, NODE_FOCUS, GObject)

/* ::message (a line for a toast): a link led to no node shown.  The
 * "details-wanted" property (win.show-node-details, Ctrl+I): the details
 * show while a node is selected, unless it is off. */
TsNodeFocus *ts_node_focus_new(const TsNodePanels *panels);
void ts_node_focus_shut_down(TsNodeFocus *self);
/* The graph pane's selection in the details again (after a comparison). */
void ts_node_focus_show_graph_selection(TsNodeFocus *self);

G_END_DECLS
