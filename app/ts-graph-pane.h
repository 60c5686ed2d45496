/* ts-graph-pane.h — the selected concrete function: its signature over its
 * graph (the viewer's TsGraphView), or a status page saying why there is
 * no graph to show.  It follows the selection of its "workspace" (the
 * window's template binds it): a concrete function's graph, a function's
 * last concrete function's, or its untraced page.  The header's zoom buttons, zoom level and menu
 * (expand or collapse all, fit width) use the pane's "graph." actions,
 * which run the view's own: graph.zoom-in, graph.zoom-out, graph.zoom-fit,
 * graph.zoom-width, graph.zoom-reset, graph.expand-all, graph.collapse-all;
 * and graph.compare-passes, enabled when a graph is shown, runs
 * win.compare-passes (the graph before and after the optimizer's passes). */
#pragma once

#include <gtk/gtk.h>
#include <tracescope.h>

#include "ts-graph-render.h"
#include "ts-loaded-module.h"

G_BEGIN_DECLS

#define TS_TYPE_GRAPH_PANE (ts_graph_pane_get_type())
G_DECLARE_FINAL_TYPE(TsGraphPane, ts_graph_pane, TS, GRAPH_PANE, GtkWidget)

/* Shows cf's graph (a reference is kept while shown); module is where cf's
 * function's other concrete functions are found for "Compare With". */
void ts_graph_pane_show_concrete(TsGraphPane *self, TsLoadedModule *module, TsConcreteInfo *cf);
/* Shows a status page: title and description (NULL: nothing selected). */
void ts_graph_pane_show_status(TsGraphPane *self, const char *icon_name, const char *title,
                               const char *description);
/* Shows that function has no graph yet, and why its last trace failed
 * (failure; NULL: it is not traced yet): the page says what to do in the
 * mode of the pane's "workspace" (the window's template binds it), and
 * follows that mode while it shows. */
void ts_graph_pane_show_untraced(TsGraphPane *self, const char *function, const char *failure);
/* What node colours show: "op-type", "device" or "compute-time" (the
 * GSettings colour-mode nicks; the "colour-mode" property). */
void ts_graph_pane_set_colour_mode(TsGraphPane *self, const char *mode);
/* The last profile's values (ts_profile_compute_times; set from each
 * session of the pane's "profiler", a TsProfilerPanel the window's
 * template binds, when it is ready): the times the
 * "compute-time" mode shows, the devices the "device" mode shows (a
 * reference is taken; NULL: none, "no data" and "CPU"). */
void ts_graph_pane_set_compute_times(TsGraphPane *self, ts_render_values *values);
ts_render_values *ts_graph_pane_get_compute_times(TsGraphPane *self); /* borrowed */
/* The status page's title when it shows instead of a graph, else NULL. */
const char *ts_graph_pane_get_status_title(TsGraphPane *self);
/* The TsGraphView (borrowed). */
GtkWidget *ts_graph_pane_get_view(TsGraphPane *self);
/* The concrete function shown, or NULL. */
TsConcreteInfo *ts_graph_pane_get_concrete(TsGraphPane *self);
/* Whether what the pane shows is on screen in full, no cross-fade between
 * its pages running: the status page, or the graph laid out and drawn
 * (TsGraphView:drawn). */
gboolean ts_graph_pane_get_drawn(TsGraphPane *self);

G_END_DECLS
