/* ts-graph-view-legend.c — where TsGraphView's legend goes: a corner, set
 * by the user (a drag, Shift+L, "legend-corner") or, by default, the one
 * covering least of the graph; its height is bounded, so long lists of op
 * types wrap into columns. */
#include "ts-graph-view-private.h"

#define LEGEND_HEIGHT_FRACTION 0.6 /* of the widget: more op types make columns */
#define LEGEND_MIN_HEIGHT 160.0

G_DEFINE_ENUM_TYPE(TsLegendCorner, ts_legend_corner,
                   G_DEFINE_ENUM_VALUE(TS_LEGEND_CORNER_AUTO, "auto"),
                   G_DEFINE_ENUM_VALUE(TS_LEGEND_CORNER_TOP_LEFT, "top-left"),
                   G_DEFINE_ENUM_VALUE(TS_LEGEND_CORNER_TOP_RIGHT, "top-right"),
                   G_DEFINE_ENUM_VALUE(TS_LEGEND_CORNER_BOTTOM_LEFT, "bottom-left"),
                   G_DEFINE_ENUM_VALUE(TS_LEGEND_CORNER_BOTTOM_RIGHT, "bottom-right"))

gboolean _ts_graph_view_legend_shown(TsGraphView *self)
{
  return self->show_legend && self->layout != NULL;
}

double _ts_graph_view_legend_max_height(TsGraphView *self)
{
  return MAX(gtk_widget_get_height(GTK_WIDGET(self)) * LEGEND_HEIGHT_FRACTION, LEGEND_MIN_HEIGHT);
}

static void rect_at(TsGraphView *self, TsLegendCorner corner, gboolean collapsed, graphene_rect_t *out)
{
  double lw, lh;
  ts_render_legend_size(self->render, _ts_graph_view_legend_max_height(self), collapsed, &lw, &lh);
  double w = gtk_widget_get_width(GTK_WIDGET(self)), h = gtk_widget_get_height(GTK_WIDGET(self));
  gboolean left = corner == TS_LEGEND_CORNER_TOP_LEFT || corner == TS_LEGEND_CORNER_BOTTOM_LEFT;
  gboolean top = corner == TS_LEGEND_CORNER_TOP_LEFT || corner == TS_LEGEND_CORNER_TOP_RIGHT;
  /* a top corner's legend goes under the search bar while it shows */
  graphene_rect_init(out, left ? TS_OVERLAY_MARGIN : w - lw - TS_OVERLAY_MARGIN,
                     top ? TS_OVERLAY_MARGIN + _ts_graph_view_covered_top(self) : h - lh - TS_OVERLAY_MARGIN,
                     (float)lw, (float)lh);
}

void _ts_graph_view_legend_rect(TsGraphView *self, TsLegendCorner corner, graphene_rect_t *out)
{
  rect_at(self, corner, self->legend_collapsed, out);
}

gboolean ts_graph_view_get_legend_area(TsGraphView *self, graphene_rect_t *area)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self) && area != NULL, FALSE);
  if (!_ts_graph_view_legend_shown(self))
    return FALSE;
  _ts_graph_view_legend_rect(self, self->legend_placed, area);
  return TRUE;
}

gboolean _ts_graph_view_legend_at(TsGraphView *self, double wx, double wy)
{
  graphene_rect_t r;
  return ts_graph_view_get_legend_area(self, &r) &&
         graphene_rect_contains_point(&r, &GRAPHENE_POINT_INIT((float)wx, (float)wy));
}

gboolean _ts_graph_view_legend_header_at(TsGraphView *self, double wx, double wy)
{
  if (!_ts_graph_view_legend_at(self, wx, wy))
    return FALSE;
  graphene_rect_t r, header;
  _ts_graph_view_legend_rect(self, self->legend_placed, &r);
  rect_at(self, self->legend_placed, TRUE, &header);
  /* the header is the legend's top part, wherever the legend sits */
  return wy <= r.origin.y + header.size.height;
}

/* The share of r, a rectangle of the canvas at zoom scrolled to (x, y), under rect. */
static double covered_of(const graphene_rect_t *rect, double zoom, double x, double y, const ts_render_rect *r)
{
  graphene_rect_t box = GRAPHENE_RECT_INIT((float)((r->x - x) * zoom), (float)((r->y - y) * zoom),
                                           (float)(r->width * zoom), (float)(r->height * zoom));
  graphene_rect_t both;
  return graphene_rect_intersection(&box, rect, &both) ? (double)both.size.width * both.size.height : 0;
}

/* What rect hides of the top-level shapes and, where the zoom draws them,
 * of the edges' labels (a legend over "f32[10,10]" hides what the edge carries). */
double _ts_graph_view_cover(TsGraphView *self, const graphene_rect_t *rect, double zoom, double x, double y)
{
  double covered = 0;
  for (int i = 0; self->layout && i < ts_view_layout_n_boxes(self->layout); i++) {
    const ts_view_box *b = ts_view_layout_box(self->layout, i);
    if (b->parent >= 0)
      continue; /* inside a top-level box already counted */
    covered += covered_of(rect, zoom, x, y, &(ts_render_rect){ b->x, b->y, b->width, b->height });
  }
  for (int i = 0; self->layout && zoom >= TS_RENDER_DETAIL_ZOOM && i < ts_view_layout_n_paths(self->layout); i++) {
    ts_render_rect label;
    if (ts_render_path_label_rect(self->render, i, &label))
      covered += covered_of(rect, zoom, x, y, &label);
  }
  return covered;
}

/* What the legend in that corner would hide of the graph as shown now;
 * where it would push the minimap out of its corner onto the graph, as
 * good as all of it. */
static double cover_now(TsGraphView *self, TsLegendCorner corner)
{
  graphene_rect_t r, map;
  _ts_graph_view_legend_rect(self, corner, &r);
  if (_ts_graph_view_minimap_home(self, &map) && graphene_rect_intersection(&r, &map, NULL))
    return G_MAXDOUBLE;
  return _ts_graph_view_cover(self, &r, ts_viewport_get_zoom(self->viewport), ts_viewport_get_x(self->viewport),
                              ts_viewport_get_y(self->viewport));
}

void _ts_graph_view_move_legend(TsGraphView *self, TsLegendCorner corner)
{
  g_assert(corner != TS_LEGEND_CORNER_AUTO);
  if (corner == self->legend_placed)
    return;
  self->legend_placed = corner;
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

void _ts_graph_view_place_legend(TsGraphView *self)
{
  if (self->legend_corner != TS_LEGEND_CORNER_AUTO || !_ts_graph_view_legend_shown(self))
    return;
  TsLegendCorner best = self->legend_placed;
  double least = cover_now(self, best);
  for (TsLegendCorner c = TS_LEGEND_CORNER_TOP_LEFT; c <= TS_LEGEND_CORNER_BOTTOM_RIGHT && least > 0; c++) {
    double covered = cover_now(self, c);
    if (covered < least) {
      least = covered;
      best = c;
    }
  }
  _ts_graph_view_move_legend(self, best);
}

void _ts_graph_view_clear_legend(TsGraphView *self)
{
  if (!_ts_graph_view_legend_shown(self))
    return;
  _ts_graph_view_place_legend(self);
  if (self->legend_collapsed || self->legend_collapse_chosen || cover_now(self, self->legend_placed) == 0)
    return;
  _ts_graph_view_set_legend_collapsed(self, TRUE, FALSE); /* no room: its header will do */
  _ts_graph_view_place_legend(self);
}
