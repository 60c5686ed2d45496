/* ts-compare-pane.h — two concrete functions together, each graph in its
 * own TsGraphView, nodes coloured by what differs (ts-graph-diff.h): shape
 * or dtype, only in one graph, or the same.  A header line sums it up
 * ("left" is the first of "A vs B"); its close button activates
 * win.close-compare.  The views are stacked, one over the other: a
 * TsGraphView is at least 585 px wide (its search bar), too wide for two
 * side by side beside the sidebar and the run panel. */
#pragma once

#include <gtk/gtk.h>
#include <tracescope.h>

#include "ts-loaded-module.h"

G_BEGIN_DECLS

#define TS_TYPE_COMPARE_PANE (ts_compare_pane_get_type())
G_DECLARE_FINAL_TYPE(TsComparePane, ts_compare_pane, TS, COMPARE_PANE, GtkWidget)

/* Shows left and right (module keeps them alive while shown). */
void ts_compare_pane_show(TsComparePane *self, TsLoadedModule *module, const TsConcreteInfo *left,
                          const TsConcreteInfo *right);
/* Shows nothing and lets go of the module. */
void ts_compare_pane_clear(TsComparePane *self);
/* The header line: "(x: f32[1]) vs (x: f32[2]): 3 nodes differ in shape, ..." (borrowed). */
const char *ts_compare_pane_get_summary(TsComparePane *self);
/* The TsGraphView of one side (borrowed). */
GtkWidget *ts_compare_pane_get_view(TsComparePane *self, gboolean right);

G_END_DECLS
