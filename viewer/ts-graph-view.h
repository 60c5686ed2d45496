/* ts-graph-view.h — TsGraphView, the graph canvas: a traced graph drawn
 * the TensorBoard way (name scopes as boxes that open in place, series
 * folded, dots for constants), laid out by Graphviz off the main loop.
 *
 * Navigation: drag to pan; the wheel zooms around the pointer; a touchpad
 * pans, and zooms with Ctrl or a pinch; keys: arrows pan, + and - zoom,
 * Ctrl+0 zooms to 100 %, 0 fits the whole graph, W fits its width (from
 * the inputs), F fits the selection, Enter activates it, Escape clears it,
 * E and C expand and collapse every group, L collapses or opens the
 * legend and Shift+L moves it to the next corner, Ctrl+F searches (Enter,
 * F3 and Ctrl+G for the next match, with Shift for the previous).  A click
 * selects, a double click activates (and opens or closes a group).  A
 * minimap shows where the view is when the graph does not fit (and hides
 * while it would cover the selected node); drag in it to move.  The legend sits in a corner: by default the one covering least
 * of the graph, chosen at each fit (which may shrink the graph beside it
 * when every corner is taken, or else collapse the legend until the user
 * opens or closes it); a click on its header collapses it, a drag moves it
 * to another corner.
 *
 * Items are the display model's (ts-graph-model.h): groups, series, ops and
 * subgraphs; an op item stands for one ts_node.  Signals carry both:
 *   "node-selected"  (TsGraphView *view, int item, gpointer node): the
 *                    selection changed; item -1 when cleared; node is the
 *                    const ts_node * of an op item, NULL otherwise.
 *   "node-activated" (TsGraphView *view, int item, gpointer node): double
 *                    click or Enter on an item (after it opened or closed,
 *                    if it can).
 * Properties: "dark" (follows the theme until set), "show-legend",
 * "legend-collapsed", "legend-corner" (TsLegendCorner), "show-minimap", "busy" (read-only: a layout is being computed),
 * "selected-item" (read-only), "viewport" (read-only TsViewport),
 * "animating" (read-only: a fly-to animation runs; notified when it starts
 * and when it ends on its target), "drawn" (read-only: the layout on screen
 * is the newest and has been drawn at least once; false while none is or a
 * new one is being computed). */
#pragma once

#include <gtk/gtk.h>

#include "ts-graph-layout.h"
#include "ts-graph-render.h"
#include "ts-viewport.h"

G_BEGIN_DECLS

typedef enum {
  TS_LEGEND_CORNER_AUTO, /* the corner covering least of the graph */
  TS_LEGEND_CORNER_TOP_LEFT,
  TS_LEGEND_CORNER_TOP_RIGHT,
  TS_LEGEND_CORNER_BOTTOM_LEFT,
  TS_LEGEND_CORNER_BOTTOM_RIGHT,
} TsLegendCorner;

#define TS_TYPE_LEGEND_CORNER (ts_legend_corner_get_type())
GType ts_legend_corner_get_type(void);

#define TS_TYPE_GRAPH_VIEW (ts_graph_view_get_type())
G_DECLARE_FINAL_TYPE(TsGraphView, ts_graph_view, TS, GRAPH_VIEW, GtkWidget)

GtkWidget *ts_graph_view_new(void);

/* Shows graph (NULL: nothing); it must outlive the view or be replaced.
 * The first layout comes asynchronously ("busy" goes false) and is fitted
 * to the view. */
void ts_graph_view_set_graph(TsGraphView *self, const ts_graph *graph);
const ts_graph *ts_graph_view_get_graph(TsGraphView *self);
/* The display model (NULL without a graph) and the layout on screen (NULL
 * until the first one arrives).  Borrowed. */
ts_view_model *ts_graph_view_get_model(TsGraphView *self);
const ts_view_layout *ts_graph_view_get_layout(TsGraphView *self);
TsViewport *ts_graph_view_get_viewport(TsGraphView *self);
gboolean ts_graph_view_get_busy(TsGraphView *self);
gboolean ts_graph_view_get_animating(TsGraphView *self);
gboolean ts_graph_view_get_drawn(TsGraphView *self);

/* Colours by mode from values (a reference is taken; NULL for none).  No
 * new layout: only a redraw. */
void ts_graph_view_set_colouring(TsGraphView *self, ts_render_colouring mode, ts_render_values *values);
ts_render_colouring ts_graph_view_get_colouring(TsGraphView *self);

void ts_graph_view_set_dark(TsGraphView *self, gboolean dark);
gboolean ts_graph_view_get_dark(TsGraphView *self);
void ts_graph_view_set_show_legend(TsGraphView *self, gboolean show);
gboolean ts_graph_view_get_show_legend(TsGraphView *self);
void ts_graph_view_set_show_minimap(TsGraphView *self, gboolean show);
gboolean ts_graph_view_get_show_minimap(TsGraphView *self);
void ts_graph_view_set_legend_collapsed(TsGraphView *self, gboolean collapsed);
gboolean ts_graph_view_get_legend_collapsed(TsGraphView *self);
void ts_graph_view_set_legend_corner(TsGraphView *self, TsLegendCorner corner);
TsLegendCorner ts_graph_view_get_legend_corner(TsGraphView *self);
/* Where the legend and the minimap are drawn, in widget coordinates;
 * FALSE when they are not shown. */
gboolean ts_graph_view_get_legend_area(TsGraphView *self, graphene_rect_t *area);
gboolean ts_graph_view_get_minimap_area(TsGraphView *self, graphene_rect_t *area);

/* Opens or closes an item (its ancestors open too when opening); a new
 * layout follows.  false if nothing changed. */
gboolean ts_graph_view_set_expanded(TsGraphView *self, int item, gboolean expanded);
/* The same for the item of that name ("dense_1", "cond/If/then"); false if
 * there is none or nothing changed. */
gboolean ts_graph_view_set_expanded_by_name(TsGraphView *self, const char *name, gboolean expanded);
void ts_graph_view_expand_all(TsGraphView *self);
void ts_graph_view_collapse_all(TsGraphView *self);

/* The view as a session keeps it: the names of the expanded items (owned,
 * NULL-terminated), and the zoom with the canvas point at the centre. */
char **ts_graph_view_dup_expanded(TsGraphView *self);
void ts_graph_view_get_centre(TsGraphView *self, double *zoom, double *cx, double *cy);
/* Expands exactly the items named (names the graph lacks are skipped) and
 * shows the next layout at zoom around (cx, cy) instead of fitting it. */
void ts_graph_view_restore(TsGraphView *self, const char *const *expanded, double zoom, double cx,
                           double cy);

/* The item drawn at a widget point, -1 if none. */
int ts_graph_view_item_at(TsGraphView *self, double x, double y);
/* Selects an item (-1: none); emits "node-selected" if it changed. */
void ts_graph_view_select_item(TsGraphView *self, int item);
int ts_graph_view_get_selected_item(TsGraphView *self);
/* Opens the groups around the item, selects it and flies to it. */
void ts_graph_view_reveal_item(TsGraphView *self, int item);
/* The same for a node of the graph or its subgraphs; false if it is not
 * in the graph shown. */
gboolean ts_graph_view_reveal(TsGraphView *self, const ts_node *node);

/* Fits the whole graph, both ways (beside the legend if it would cover
 * the graph in every corner), or its width (starting at the inputs), or
 * the selection.  A whole-graph fit holds through resizes until the view
 * is moved: the graph stays whole in sight, with no minimap over it. */
void ts_graph_view_zoom_to_fit(TsGraphView *self);
void ts_graph_view_zoom_to_width(TsGraphView *self);
void ts_graph_view_zoom_to_selection(TsGraphView *self);

/* Searches as the search bar does; the number of matches, -1 with an error
 * for a bad query.  Then next/previous reveal them in turn. */
int ts_graph_view_search(TsGraphView *self, ts_view_find_kind kind, const char *query, GError **error);
void ts_graph_view_search_next(TsGraphView *self, gboolean forward);

/* Writes the whole graph (whole) or what the view shows to path: .png,
 * .svg, .pdf (ts_render_export) or .dot (the graph's DOT text). */
gboolean ts_graph_view_export(TsGraphView *self, const char *path, gboolean whole, GError **error);

G_END_DECLS
