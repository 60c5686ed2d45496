/* ts-compare-pane.h — two graphs together, each in its own TsGraphView:
 * two concrete functions, nodes coloured by what differs (ts-graph-diff.h):
 * shape or dtype, only in one graph, or the same; or one concrete function
 * before and after the optimizer's passes, nodes coloured by what the
 * passes made of them and matched through provenance.  A header line sums
 * it up ("left" is the first of "A vs B"); its close button activates
 * win.close-compare.  The views are stacked, one over the other: a
 * TsGraphView is at least 585 px wide (its search bar), too wide for two
 * side by side beside the sidebar and the run panel. */
#pragma once

#include <gtk/gtk.h>
#include <tracescope.h>

#include "ts-graph-render.h"
#include "ts-loaded-module.h"

G_BEGIN_DECLS

#define TS_TYPE_COMPARE_PANE (ts_compare_pane_get_type())
G_DECLARE_FINAL_TYPE(TsComparePane, ts_compare_pane, TS, COMPARE_PANE, GtkWidget)

/* Shows left and right (module keeps them alive while shown). */
void ts_compare_pane_show(TsComparePane *self, TsLoadedModule *module, const TsConcreteInfo *left,
                          const TsConcreteInfo *right);
/* Shows cf's traced graph (left) and the graph it runs after the passes
 * (right; cf->optimized must be there), the passes' summary lines above.
 * Nodes are coloured fused, folded, merged, rewritten (and removed on the
 * left); a node selected on either side colours what it matches on the
 * other ("matches the selection": the traced nodes an optimized node
 * stands for, or those standing for a traced node) and opens their
 * groups.  A reference to cf is kept while shown. */
void ts_compare_pane_show_passes(TsComparePane *self, TsConcreteInfo *cf);
/* The concrete function shown before and after the passes, or NULL. */
TsConcreteInfo *ts_compare_pane_get_passes_concrete(TsComparePane *self);
/* What node (of a graph shown before and after the passes) matches on the
 * other side, as above; NULL and 0 for none or when comparing two
 * concrete functions.  Borrowed. */
const ts_node *const *ts_compare_pane_get_matches(TsComparePane *self, const ts_node *node, int *n);
/* The colours one side is drawn with (borrowed; NULL when empty). */
ts_render_values *ts_compare_pane_get_colours(TsComparePane *self, gboolean right);
/* The passes' summary lines shown ("" when comparing two concrete functions). */
const char *ts_compare_pane_get_passes(TsComparePane *self);
/* Shows nothing and lets go of the module. */
void ts_compare_pane_clear(TsComparePane *self);
/* The header line: "(x: f32[1]) vs (x: f32[2]): 3 nodes differ in shape, ..." (borrowed). */
const char *ts_compare_pane_get_summary(TsComparePane *self);
/* The TsGraphView of one side (borrowed). */
GtkWidget *ts_compare_pane_get_view(TsComparePane *self, gboolean right);

G_END_DECLS
