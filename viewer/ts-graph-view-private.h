/* ts-graph-view-private.h — what the files of TsGraphView share: the
 * instance, drawing (ts-graph-view-draw.c), input and navigation
 * (ts-graph-view-input.c) and the search bar (ts-graph-view-search.c). */
#pragma once

#include "ts-graph-view.h"

G_BEGIN_DECLS

struct _TsGraphView {
  GtkWidget parent_instance;

  /* template children */
  GtkWidget *busy_box;
  GtkSpinner *spinner;
  GtkLabel *busy_label;
  GtkRevealer *search_revealer;
  GtkSearchEntry *search_entry;
  GtkDropDown *search_kind;
  GtkLabel *search_status;

  TsViewport *viewport;
  ts_render *render;

  /* the graph, its model and the layout on screen */
  const ts_graph *graph;
  ts_view_model *model;
  ts_view_layouter *layouter;
  ts_view_layout *layout;
  GCancellable *cancellable;
  guint request_serial; /* the newest layout request */
  gboolean busy;
  gboolean fit_pending;  /* fit the next layout to the view */
  double fitted[5];      /* the last fit: zoom, x, y, widget width, height */
  int anchor_item;       /* keep this item where it was on screen ... */
  double anchor_wx, anchor_wy; /* ... at this widget point */
  int reveal_pending;    /* fly to this item once the layout shows it */
  gboolean centre_pending; /* show the next layout around centre ... */
  double centre[3];        /* ... zoom, canvas x, canvas y (ts_graph_view_restore) */

  int selected, hovered;
  gboolean dark, dark_set;
  gboolean show_legend, show_minimap;
  gboolean legend_collapsed;
  gboolean legend_collapse_chosen; /* by the user: fits no longer collapse it */
  TsLegendCorner legend_corner; /* as set: maybe AUTO */
  TsLegendCorner legend_placed; /* where it is drawn: never AUTO */

  /* input */
  double pointer_x, pointer_y;
  double drag_cx, drag_cy; /* the canvas point grabbed */
  double drag_x0, drag_y0;
  gboolean drag_minimap, drag_legend;
  double pinch_zoom0, pinch_cx, pinch_cy;

  /* the fly-to animation */
  guint fly_tick;
  gint64 fly_start;
  double fly_from[3], fly_to[3]; /* zoom, centre x, centre y */
  double fly_dip;

  /* the layout on screen has been drawn since it arrived ("drawn") */
  gboolean drawn;
  guint drawn_idle;

  /* the minimap, drawn once per layout and colouring */
  cairo_surface_t *minimap;

  /* search */
  GArray *matches; /* items */
  int match_index;

  /* walking the edges (Alt+arrows): the node stepped from, which way, and
   * which of its neighbours that way is selected */
  const ts_node *walk_from;
  gboolean walk_up;
  int walk_index;
};

/* ---- ts-graph-view.c -------------------------------------------------------- */

/* The item drawn at a widget point (dots first); -1 if none. */
int _ts_graph_view_item_at(TsGraphView *self, double wx, double wy);
/* Double click or Enter: opens or closes the item if it can, then signals. */
void _ts_graph_view_activate(TsGraphView *self, int item);
void _ts_graph_view_set_hovered(TsGraphView *self, int item);
/* Something the minimap shows changed. */
void _ts_graph_view_invalidate_minimap(TsGraphView *self);
/* A fly-to animation started or ended: notifies "animating". */
void _ts_graph_view_notify_animating(TsGraphView *self);
/* Called by snapshot: a layout that is not being replaced was drawn. */
void _ts_graph_view_note_drawn(TsGraphView *self);

/* ---- ts-graph-view-draw.c ---------------------------------------------------- */

void _ts_graph_view_snapshot(GtkWidget *widget, GtkSnapshot *snapshot);
/* The canvas point under a widget point in the minimap; false outside it. */
gboolean _ts_graph_view_minimap_at(TsGraphView *self, double wx, double wy, double *cx, double *cy);

/* ---- ts-graph-view-input.c --------------------------------------------------- */

void _ts_graph_view_class_init_input(GtkWidgetClass *widget_class);
/* The viewport for the current layout: fit, keep the anchor, fly to a reveal. */
void _ts_graph_view_place_layout(TsGraphView *self);
/* Animates the view onto the item's box (instantly when not mapped). */
void _ts_graph_view_fly_to(TsGraphView *self, int item);
void _ts_graph_view_stop_flight(TsGraphView *self);
/* The view still shows the last fit and its size changed: fits again
 * (the whole graph stays in sight, the minimap off it); false if not. */
gboolean _ts_graph_view_refit_on_resize(TsGraphView *self);
/* The zoom limits for the current layout and size. */
void _ts_graph_view_update_zoom_limits(TsGraphView *self);

/* ---- ts-graph-view-legend.c ------------------------------------------------- */

/* Space between the overlays (legend, minimap) and the widget's edges. */
#define TS_OVERLAY_MARGIN 12.0

/* Collapses or opens the legend; chosen: the user did (not a fit). */
void _ts_graph_view_set_legend_collapsed(TsGraphView *self, gboolean collapsed, gboolean chosen);
/* Whether the legend shows, and its rectangle in a corner (not AUTO). */
gboolean _ts_graph_view_legend_shown(TsGraphView *self);
/* How tall its columns may be. */
double _ts_graph_view_legend_max_height(TsGraphView *self);
void _ts_graph_view_legend_rect(TsGraphView *self, TsLegendCorner corner, graphene_rect_t *out);
/* The legend's header (click: collapse) and body at a widget point. */
gboolean _ts_graph_view_legend_header_at(TsGraphView *self, double wx, double wy);
gboolean _ts_graph_view_legend_at(TsGraphView *self, double wx, double wy);
/* How much of the graph (widget px^2) a rectangle covers with the
 * viewport at (zoom, x, y). */
double _ts_graph_view_cover(TsGraphView *self, const graphene_rect_t *rect, double zoom, double x, double y);
/* With the corner AUTO: moves the legend to the corner covering least of
 * the graph as shown now, if its own covers some. */
void _ts_graph_view_place_legend(TsGraphView *self);
/* After the view moved on its own (a reveal): the legend placed as above
 * and, if it still covers some of the graph, collapsed to its header
 * (unless the user opened or closed it), which is placed again. */
void _ts_graph_view_clear_legend(TsGraphView *self);
/* Where the minimap goes unless the legend was put there (bottom right),
 * while it shows. */
gboolean _ts_graph_view_minimap_home(TsGraphView *self, graphene_rect_t *area);
/* Places the legend where it was set, or where it was dragged to. */
void _ts_graph_view_move_legend(TsGraphView *self, TsLegendCorner corner);

/* ---- ts-graph-view-search.c ------------------------------------------------- */

void _ts_graph_view_class_init_search(GtkWidgetClass *widget_class);
void _ts_graph_view_init_search(TsGraphView *self);
void _ts_graph_view_show_search(TsGraphView *self);
/* How much of the top of the view the search bar covers (0 while it is
 * hidden): flights centre below it, the legend goes under it. */
double _ts_graph_view_covered_top(TsGraphView *self);
/* Hides the search bar and forgets its query (another graph is shown). */
void _ts_graph_view_close_search(TsGraphView *self);

G_END_DECLS
