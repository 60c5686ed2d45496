/* ts-graph-view-draw.c — a frame of TsGraphView: the canvas through the
 * renderer (culled to the viewport), the legend, the minimap (drawn once
 * per layout into a surface) and the overlay widgets. */
#include "ts-graph-render-private.h"
#include "ts-graph-view-private.h"

#include <math.h>

/* The minimap: up to a quarter of the view's width and a third of its
 * height, the graph's aspect kept; a tall (or wide) thin graph gets a
 * short side of at least MINIMAP_MIN_SIDE while its long side stays
 * within MINIMAP_MAX_FRACTION of the view, and sits centred in a box at
 * least that wide. */
#define MINIMAP_WIDTH_FRACTION 0.25
#define MINIMAP_HEIGHT_FRACTION 0.33
#define MINIMAP_MAX_WIDTH 320.0
#define MINIMAP_MAX_HEIGHT 240.0
#define MINIMAP_MIN_SIDE 72.0
#define MINIMAP_MAX_FRACTION 0.45

typedef struct minimap_geometry {
  double x, y, width, height; /* widget px */
  double scale;               /* minimap px per canvas unit */
  double inset_x, inset_y;    /* from the box's top-left to the graph's */
} minimap_geometry;

/* Where the minimap goes when nothing is in its way: bottom right; false
 * when it is off or the graph fits the view. */
static gboolean minimap_home(TsGraphView *self, minimap_geometry *g)
{
  if (!self->show_minimap || !self->layout)
    return FALSE;
  double w = gtk_widget_get_width(GTK_WIDGET(self)), h = gtk_widget_get_height(GTK_WIDGET(self));
  double lw = ts_view_layout_width(self->layout), lh = ts_view_layout_height(self->layout);
  double zoom = ts_viewport_get_zoom(self->viewport);
  double x = ts_viewport_get_x(self->viewport), y = ts_viewport_get_y(self->viewport);
  if (x <= 0 && y <= 0 && x + w / zoom >= lw && y + h / zoom >= lh)
    return FALSE;
  /* the long side of a thin graph's map: never more than half the view */
  double long_w = MIN(w * MINIMAP_MAX_FRACTION, w / 2 - 2 * TS_OVERLAY_MARGIN);
  double long_h = MIN(h * MINIMAP_MAX_FRACTION, h / 2 - 2 * TS_OVERLAY_MARGIN);
  double box_w = MIN(w * MINIMAP_WIDTH_FRACTION, MINIMAP_MAX_WIDTH);
  double box_h = MIN(h * MINIMAP_HEIGHT_FRACTION, MINIMAP_MAX_HEIGHT);
  g->scale = MIN(box_w / lw, box_h / lh);
  if (lw * g->scale < MINIMAP_MIN_SIDE)
    g->scale = MIN(MINIMAP_MIN_SIDE / lw, long_h / lh);
  else if (lh * g->scale < MINIMAP_MIN_SIDE)
    g->scale = MIN(MINIMAP_MIN_SIDE / lh, long_w / lw);
  g->width = MAX(MINIMAP_MIN_SIDE, ceil(lw * g->scale));
  g->height = MAX(MINIMAP_MIN_SIDE, ceil(lh * g->scale));
  g->inset_x = floor((g->width - lw * g->scale) / 2);
  g->inset_y = floor((g->height - lh * g->scale) / 2);
  if (g->width + 2 * TS_OVERLAY_MARGIN > w / 2 + 1 || g->height + 2 * TS_OVERLAY_MARGIN > h / 2 + 1)
    return FALSE; /* it would hide what it maps */
  g->x = floor(w - g->width - TS_OVERLAY_MARGIN);
  g->y = floor(h - g->height - TS_OVERLAY_MARGIN);
  return TRUE;
}

gboolean _ts_graph_view_minimap_home(TsGraphView *self, graphene_rect_t *area)
{
  minimap_geometry g;
  if (!minimap_home(self, &g))
    return FALSE;
  graphene_rect_init(area, (float)g.x, (float)g.y, (float)g.width, (float)g.height);
  return TRUE;
}

/* The selected item's box in widget coordinates: what a reveal, a search
 * or F flew to; false when nothing is selected or it is not laid out. */
static gboolean selected_rect(TsGraphView *self, graphene_rect_t *out)
{
  int b = self->selected >= 0 ? ts_view_layout_box_for_item(self->layout, self->selected) : -1;
  if (b < 0)
    return FALSE;
  const ts_view_box *box = ts_view_layout_box(self->layout, b);
  double zoom = ts_viewport_get_zoom(self->viewport);
  graphene_rect_init(out, (float)((box->x - ts_viewport_get_x(self->viewport)) * zoom),
                     (float)((box->y - ts_viewport_get_y(self->viewport)) * zoom), (float)(box->width * zoom),
                     (float)(box->height * zoom));
  return TRUE;
}

/* Where the minimap goes: its home, or bottom left when the legend was
 * put there; nowhere while it would cover the selected node. */
static gboolean minimap_place(TsGraphView *self, minimap_geometry *g)
{
  if (!minimap_home(self, g))
    return FALSE;
  graphene_rect_t legend, selected, map = GRAPHENE_RECT_INIT((float)g->x, (float)g->y, (float)g->width, (float)g->height);
  if (ts_graph_view_get_legend_area(self, &legend) && graphene_rect_intersection(&legend, &map, NULL))
    map.origin.x = (float)(g->x = TS_OVERLAY_MARGIN); /* the legend is in the way: bottom left */
  return !selected_rect(self, &selected) || !graphene_rect_intersection(&selected, &map, NULL);
}

gboolean ts_graph_view_get_minimap_area(TsGraphView *self, graphene_rect_t *area)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self) && area != NULL, FALSE);
  minimap_geometry g;
  if (!minimap_place(self, &g))
    return FALSE;
  graphene_rect_init(area, (float)g.x, (float)g.y, (float)g.width, (float)g.height);
  return TRUE;
}

gboolean _ts_graph_view_minimap_at(TsGraphView *self, double wx, double wy, double *cx, double *cy)
{
  minimap_geometry g;
  if (!minimap_place(self, &g) || wx < g.x || wy < g.y || wx > g.x + g.width || wy > g.y + g.height)
    return FALSE;
  *cx = (wx - g.x - g.inset_x) / g.scale;
  *cy = (wy - g.y - g.inset_y) / g.scale;
  return TRUE;
}

/* The whole graph small, without selection or hover (they change often). */
static cairo_surface_t *minimap_draw(TsGraphView *self, const minimap_geometry *g, int scale_factor)
{
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)g->width * scale_factor,
                                                        (int)g->height * scale_factor);
  cairo_surface_set_device_scale(surface, scale_factor, scale_factor);
  cairo_t *cr = cairo_create(surface);
  cairo_translate(cr, g->inset_x, g->inset_y);
  cairo_scale(cr, g->scale, g->scale);
  ts_render_set_selected(self->render, -1);
  ts_render_set_hovered(self->render, -1);
  ts_render_draw(self->render, cr, NULL, g->scale, NULL);
  ts_render_set_selected(self->render, self->selected);
  ts_render_set_hovered(self->render, self->hovered);
  cairo_destroy(cr);
  return surface;
}

static void minimap_paint(TsGraphView *self, cairo_t *cr)
{
  minimap_geometry g;
  if (!minimap_place(self, &g))
    return;
  int scale_factor = gtk_widget_get_scale_factor(GTK_WIDGET(self));
  if (self->minimap && (cairo_image_surface_get_width(self->minimap) != (int)g.width * scale_factor ||
                        cairo_image_surface_get_height(self->minimap) != (int)g.height * scale_factor))
    _ts_graph_view_invalidate_minimap(self);
  if (!self->minimap)
    self->minimap = minimap_draw(self, &g, scale_factor);
  const _ts_palette *pal = _ts_palette_get(self->dark);
  cairo_save(cr);
  cairo_rectangle(cr, g.x - 0.5, g.y - 0.5, g.width + 1, g.height + 1);
  _ts_set_source(cr, pal->legend_border);
  cairo_set_line_width(cr, 1);
  cairo_stroke(cr);
  cairo_set_source_surface(cr, self->minimap, g.x, g.y);
  cairo_paint_with_alpha(cr, 0.92);
  /* the view's rectangle, clipped to the map */
  double zoom = ts_viewport_get_zoom(self->viewport);
  double w = gtk_widget_get_width(GTK_WIDGET(self)) / zoom, h = gtk_widget_get_height(GTK_WIDGET(self)) / zoom;
  cairo_rectangle(cr, g.x, g.y, g.width, g.height);
  cairo_clip(cr);
  cairo_rectangle(cr, g.x + g.inset_x + ts_viewport_get_x(self->viewport) * g.scale,
                  g.y + g.inset_y + ts_viewport_get_y(self->viewport) * g.scale, MAX(w * g.scale, 2),
                  MAX(h * g.scale, 2));
  _ts_rgba fill = pal->minimap_view;
  fill.a = 0.15;
  _ts_set_source(cr, fill);
  cairo_fill_preserve(cr);
  _ts_set_source(cr, pal->minimap_view);
  cairo_set_line_width(cr, 1.5);
  cairo_stroke(cr);
  cairo_restore(cr);
}

void _ts_graph_view_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
  TsGraphView *self = TS_GRAPH_VIEW(widget);
  double w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
  if (w > 0 && h > 0) {
    cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, (float)w, (float)h));
    double zoom = ts_viewport_get_zoom(self->viewport);
    double x = ts_viewport_get_x(self->viewport), y = ts_viewport_get_y(self->viewport);
    cairo_save(cr);
    cairo_scale(cr, zoom, zoom);
    cairo_translate(cr, -x, -y);
    ts_render_rect visible = { x, y, w / zoom, h / zoom };
    ts_render_draw(self->render, cr, &visible, zoom, NULL);
    cairo_restore(cr);
    graphene_rect_t legend;
    if (ts_graph_view_get_legend_area(self, &legend))
      ts_render_draw_legend(self->render, cr, legend.origin.x, legend.origin.y,
                            _ts_graph_view_legend_max_height(self), self->legend_collapsed);
    minimap_paint(self, cr);
    cairo_destroy(cr);
    _ts_graph_view_note_drawn(self);
  }
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child))
    gtk_widget_snapshot_child(widget, child, snapshot);
}
