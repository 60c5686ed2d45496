/* ts-graph-view-input.c — how TsGraphView is driven: drag, wheel, touchpad,
 * pinch, clicks, hover and tooltips, keyboard actions; and where the view
 * goes: fitting, keeping an opened group in place, the fly-to animation. */
#include "ts-graph-view-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>

#define KEY_ZOOM_STEP 1.25
#define WHEEL_ZOOM_STEP 1.2   /* per notch */
#define TOUCHPAD_ZOOM_RATE 0.01
#define KEY_PAN_FRACTION 0.15
#define FIT_PAD 16.0
#define FIT_MAX_ZOOM 1.25     /* small graphs are not blown up past this */
#define LEGEND_DRAG_THRESHOLD 8.0
#define LEGEND_ROOM_ZOOM 0.6 /* the least share of the fitted zoom kept for the legend's room */
#define FLY_US 450000
#define READABLE_ZOOM 0.8

/* ---- where the view goes ------------------------------------------------------------- */

static double widget_width(TsGraphView *self)
{
  return gtk_widget_get_width(GTK_WIDGET(self));
}

static double widget_height(TsGraphView *self)
{
  return gtk_widget_get_height(GTK_WIDGET(self));
}

/* The zoom and origin that fit the graph into a widget rectangle, centred. */
typedef struct fit {
  double zoom, x, y;
  TsLegendCorner corner;
  double covered; /* of the graph by the legend, px^2 */
} fit;

static void fit_into(TsGraphView *self, double ax, double ay, double aw, double ah, fit *f)
{
  double lw = ts_view_layout_width(self->layout), lh = ts_view_layout_height(self->layout);
  double zoom = MIN(MIN(MAX(aw, 1) / lw, MAX(ah, 1) / lh), FIT_MAX_ZOOM);
  f->zoom = CLAMP(zoom, ts_viewport_get_min_zoom(self->viewport), ts_viewport_get_max_zoom(self->viewport));
  f->x = lw / 2 - (ax + aw / 2) / f->zoom;
  f->y = lh / 2 - (ay + ah / 2) / f->zoom;
}

static double fit_all_zoom(TsGraphView *self)
{
  return MIN(MAX(widget_width(self) - 2 * FIT_PAD, 1) / ts_view_layout_width(self->layout),
             MAX(widget_height(self) - 2 * FIT_PAD, 1) / ts_view_layout_height(self->layout));
}

void _ts_graph_view_update_zoom_limits(TsGraphView *self)
{
  double min_zoom = 0.05;
  if (self->layout && widget_width(self) > 0)
    min_zoom = MIN(min_zoom, fit_all_zoom(self) / 2);
  ts_viewport_set_zoom_limits(self->viewport, MAX(min_zoom, 1e-4), 8);
}

static void centre_on(TsGraphView *self, double zoom, double cx, double cy)
{
  ts_viewport_set(self->viewport, zoom, cx - widget_width(self) / (2 * zoom), cy - widget_height(self) / (2 * zoom));
}

static void consider(TsGraphView *self, const graphene_rect_t *legend, TsLegendCorner corner, double ax,
                     double ay, double aw, double ah, fit *out)
{
  fit_into(self, ax, ay, aw, ah, out);
  out->corner = corner;
  out->covered = _ts_graph_view_cover(self, legend, out->zoom, out->x, out->y);
}

/* The graph over the whole widget, the legend in the corner covering least
 * of it; or, when every corner covers some, the graph beside or below the
 * legend, unless that shrinks it below LEGEND_ROOM_ZOOM of the whole
 * widget's zoom: then the legend collapses to its header, unless the user
 * opened or closed it. */
void ts_graph_view_zoom_to_fit(TsGraphView *self)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  if (!self->layout)
    return;
  if (widget_width(self) <= 0) {
    self->fit_pending = TRUE; /* once it has a size */
    return;
  }
  _ts_graph_view_stop_flight(self);
  double w = widget_width(self), h = widget_height(self);
  fit whole;
  fit_into(self, FIT_PAD, FIT_PAD, w - 2 * FIT_PAD, h - 2 * FIT_PAD, &whole);
  if (!_ts_graph_view_legend_shown(self)) {
    ts_viewport_set(self->viewport, whole.zoom, whole.x, whole.y);
    return;
  }
  fit best = whole, beside_best = { .zoom = 0 };
  best.covered = G_MAXDOUBLE;
  gboolean any = self->legend_corner == TS_LEGEND_CORNER_AUTO;
  for (TsLegendCorner c = TS_LEGEND_CORNER_TOP_LEFT; c <= TS_LEGEND_CORNER_BOTTOM_RIGHT; c++) {
    if (!any && c != self->legend_corner)
      continue;
    graphene_rect_t r;
    _ts_graph_view_legend_rect(self, c, &r);
    gboolean left = c == TS_LEGEND_CORNER_TOP_LEFT || c == TS_LEGEND_CORNER_BOTTOM_LEFT;
    gboolean top = c == TS_LEGEND_CORNER_TOP_LEFT || c == TS_LEGEND_CORNER_TOP_RIGHT;
    double beside = r.size.width + TS_OVERLAY_MARGIN, below = r.size.height + TS_OVERLAY_MARGIN;
    fit f;
    consider(self, &r, c, FIT_PAD, FIT_PAD, w - 2 * FIT_PAD, h - 2 * FIT_PAD, &f);
    if (f.covered < best.covered)
      best = f;
    consider(self, &r, c, FIT_PAD + (left ? beside : 0), FIT_PAD, w - 2 * FIT_PAD - beside, h - 2 * FIT_PAD, &f);
    if (f.covered == 0 && f.zoom > beside_best.zoom)
      beside_best = f;
    consider(self, &r, c, FIT_PAD, FIT_PAD + (top ? below : 0), w - 2 * FIT_PAD, h - 2 * FIT_PAD - below, &f);
    if (f.covered == 0 && f.zoom > beside_best.zoom)
      beside_best = f;
  }
  if (best.covered > 0 && beside_best.zoom >= LEGEND_ROOM_ZOOM * whole.zoom)
    best = beside_best;
  if (best.covered > 0 && !self->legend_collapsed && !self->legend_collapse_chosen) {
    _ts_graph_view_set_legend_collapsed(self, TRUE, FALSE); /* no room: its header will do */
    ts_graph_view_zoom_to_fit(self);
    return;
  }
  ts_viewport_set(self->viewport, best.zoom, best.x, best.y);
  _ts_graph_view_move_legend(self, best.corner);
  memcpy(self->fitted, (double[]){ best.zoom, best.x, best.y, w, h }, sizeof self->fitted);
}

gboolean _ts_graph_view_refit_on_resize(TsGraphView *self)
{
  const double *f = self->fitted;
  TsViewport *vp = self->viewport;
  if (!self->layout || f[0] <= 0 || (f[3] == widget_width(self) && f[4] == widget_height(self)))
    return FALSE;
  if (ts_viewport_get_zoom(vp) != f[0] || ts_viewport_get_x(vp) != f[1] || ts_viewport_get_y(vp) != f[2])
    return FALSE; /* the view was moved since */
  ts_graph_view_zoom_to_fit(self);
  return TRUE;
}

void ts_graph_view_zoom_to_width(TsGraphView *self)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  if (!self->layout || widget_width(self) <= 0)
    return;
  _ts_graph_view_stop_flight(self);
  double w = widget_width(self) - 2 * FIT_PAD, h = widget_height(self) - 2 * FIT_PAD;
  double lw = ts_view_layout_width(self->layout), lh = ts_view_layout_height(self->layout);
  double zoom = MIN(MAX(w, 1) / lw, FIT_MAX_ZOOM);
  zoom = CLAMP(zoom, ts_viewport_get_min_zoom(self->viewport), ts_viewport_get_max_zoom(self->viewport));
  double x = lw / 2 - (FIT_PAD + w / 2) / zoom;
  double y = lh * zoom > h ? lh - (FIT_PAD + h) / zoom : lh / 2 - (FIT_PAD + h / 2) / zoom; /* the inputs */
  ts_viewport_set(self->viewport, zoom, x, y);
  _ts_graph_view_place_legend(self);
}

static const ts_view_box *item_box(TsGraphView *self, int item)
{
  if (!self->layout || item < 0)
    return NULL;
  int b = ts_view_layout_box_for_item(self->layout, item);
  if (b < 0)
    b = ts_view_layout_box_for_item(
      self->layout, ts_view_model_representative(self->model, ts_view_layout_state(self->layout), item));
  return b < 0 ? NULL : ts_view_layout_box(self->layout, b);
}

/* The zoom showing box whole, at most `most`. */
static double zoom_for_box(TsGraphView *self, const ts_view_box *box, double most)
{
  double w = MAX(widget_width(self) - 2 * FIT_PAD, 1), h = MAX(widget_height(self) - 2 * FIT_PAD, 1);
  return MIN(MIN(w / box->width, h / box->height), most);
}

void ts_graph_view_zoom_to_selection(TsGraphView *self)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  const ts_view_box *box = item_box(self, self->selected);
  if (!box || widget_width(self) <= 0)
    return;
  _ts_graph_view_stop_flight(self);
  centre_on(self, zoom_for_box(self, box, 2), box->x + box->width / 2, box->y + box->height / 2);
  _ts_graph_view_clear_legend(self);
}

void _ts_graph_view_stop_flight(TsGraphView *self)
{
  if (!self->fly_tick)
    return;
  gtk_widget_remove_tick_callback(GTK_WIDGET(self), self->fly_tick);
  self->fly_tick = 0;
  _ts_graph_view_notify_animating(self);
}

static double ease(double t)
{
  return t < 0.5 ? 4 * t * t * t : 1 - pow(-2 * t + 2, 3) / 2;
}

/* Zoom out, pan, zoom in (van Wijk's idea, simplified): the zoom dips so
 * that both ends are in sight half-way. */
static gboolean fly_step(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  TsGraphView *self = TS_GRAPH_VIEW(widget);
  double t = (double)(gdk_frame_clock_get_frame_time(clock) - self->fly_start) / FLY_US;
  if (t >= 1) {
    self->fly_tick = 0;
    centre_on(self, self->fly_to[0], self->fly_to[1], self->fly_to[2]);
    _ts_graph_view_clear_legend(self);
    _ts_graph_view_notify_animating(self);
    return G_SOURCE_REMOVE;
  }
  double e = ease(MAX(t, 0));
  double zoom = exp(log(self->fly_from[0]) + (log(self->fly_to[0]) - log(self->fly_from[0])) * e -
                    self->fly_dip * sin(G_PI * e));
  centre_on(self, zoom, self->fly_from[1] + (self->fly_to[1] - self->fly_from[1]) * e,
            self->fly_from[2] + (self->fly_to[2] - self->fly_from[2]) * e);
  return G_SOURCE_CONTINUE;
}

double _ts_graph_view_covered_top(TsGraphView *self)
{
  if (!gtk_revealer_get_reveal_child(self->search_revealer))
    return 0;
  int bar = 0;
  gtk_widget_measure(GTK_WIDGET(self->search_revealer), GTK_ORIENTATION_VERTICAL, -1, NULL, &bar, NULL, NULL);
  return bar;
}

void _ts_graph_view_fly_to(TsGraphView *self, int item)
{
  const ts_view_box *box = item_box(self, item);
  if (!box || widget_width(self) <= 0)
    return;
  _ts_graph_view_stop_flight(self);
  double zoom = ts_viewport_get_zoom(self->viewport);
  double target = MAX(zoom, READABLE_ZOOM);
  target = MIN(target, zoom_for_box(self, box, MAX(target, 1)));
  /* centred in what the search bar leaves in sight */
  double cx = box->x + box->width / 2, cy = box->y + box->height / 2 - _ts_graph_view_covered_top(self) / (2 * target);
  gboolean animate = FALSE;
  g_object_get(gtk_widget_get_settings(GTK_WIDGET(self)), "gtk-enable-animations", &animate, NULL);
  if (!animate || !gtk_widget_get_mapped(GTK_WIDGET(self))) {
    centre_on(self, target, cx, cy);
    _ts_graph_view_clear_legend(self);
    return;
  }
  double w = widget_width(self), h = widget_height(self);
  self->fly_from[0] = zoom;
  self->fly_from[1] = ts_viewport_get_x(self->viewport) + w / (2 * zoom);
  self->fly_from[2] = ts_viewport_get_y(self->viewport) + h / (2 * zoom);
  self->fly_to[0] = target;
  self->fly_to[1] = cx;
  self->fly_to[2] = cy;
  double distance = hypot(cx - self->fly_from[1], cy - self->fly_from[2]);
  double seen = MIN(w, h) / MIN(zoom, target);
  self->fly_dip = distance > seen ? log(distance / seen) : 0;
  GdkFrameClock *clock = gtk_widget_get_frame_clock(GTK_WIDGET(self));
  self->fly_start = clock ? gdk_frame_clock_get_frame_time(clock) : g_get_monotonic_time();
  self->fly_tick = gtk_widget_add_tick_callback(GTK_WIDGET(self), fly_step, NULL, NULL);
  _ts_graph_view_notify_animating(self);
}

void _ts_graph_view_place_layout(TsGraphView *self)
{
  if (!self->layout || widget_width(self) <= 0)
    return; /* size_allocate comes back when fit_pending */
  if (self->centre_pending) {
    self->centre_pending = FALSE;
    centre_on(self, self->centre[0], self->centre[1], self->centre[2]);
    _ts_graph_view_place_legend(self);
  } else if (self->fit_pending) {
    self->fit_pending = FALSE;
    ts_graph_view_zoom_to_fit(self);
  } else {
    const ts_view_box *box = item_box(self, self->anchor_item);
    if (box)
      ts_viewport_move_point_to(self->viewport, box->x + box->width / 2, box->y + box->height / 2,
                                self->anchor_wx, self->anchor_wy);
    _ts_graph_view_place_legend(self);
  }
  self->anchor_item = -1;
  if (self->reveal_pending >= 0) {
    int item = self->reveal_pending;
    self->reveal_pending = -1;
    _ts_graph_view_fly_to(self, item);
  }
}

/* ---- pointer --------------------------------------------------------------------------- */

static void on_drag_begin(GtkGestureDrag *gesture, double x, double y, TsGraphView *self)
{
  _ts_graph_view_stop_flight(self);
  double cx, cy;
  self->drag_x0 = x;
  self->drag_y0 = y;
  self->drag_legend = _ts_graph_view_legend_at(self, x, y);
  self->drag_minimap = !self->drag_legend && _ts_graph_view_minimap_at(self, x, y, &cx, &cy);
  if (self->drag_legend)
    return;
  if (self->drag_minimap)
    centre_on(self, ts_viewport_get_zoom(self->viewport), cx, cy);
  else
    ts_viewport_widget_to_canvas(self->viewport, x, y, &self->drag_cx, &self->drag_cy);
}

/* The grabbed canvas point follows the pointer: no error adds up. */
static void on_drag_update(GtkGestureDrag *gesture, double dx, double dy, TsGraphView *self)
{
  double x = self->drag_x0 + dx, y = self->drag_y0 + dy, cx, cy;
  if (self->drag_legend) { /* to the corner nearest the pointer, once it moves */
    if (hypot(dx, dy) < LEGEND_DRAG_THRESHOLD)
      return;
    gboolean left = x < widget_width(self) / 2, top = y < widget_height(self) / 2;
    ts_graph_view_set_legend_corner(self, top ? (left ? TS_LEGEND_CORNER_TOP_LEFT : TS_LEGEND_CORNER_TOP_RIGHT)
                                              : (left ? TS_LEGEND_CORNER_BOTTOM_LEFT : TS_LEGEND_CORNER_BOTTOM_RIGHT));
    return;
  }
  if (self->drag_minimap) {
    if (_ts_graph_view_minimap_at(self, x, y, &cx, &cy))
      centre_on(self, ts_viewport_get_zoom(self->viewport), cx, cy);
    return;
  }
  gtk_widget_set_cursor_from_name(GTK_WIDGET(self), "grabbing");
  ts_viewport_move_point_to(self->viewport, self->drag_cx, self->drag_cy, x, y);
}

static void on_drag_end(GtkGestureDrag *gesture, double dx, double dy, TsGraphView *self)
{
  gtk_widget_set_cursor(GTK_WIDGET(self), NULL);
}

static void on_click_pressed(GtkGestureClick *gesture, int n_press, double x, double y, TsGraphView *self)
{
  double cx, cy;
  gtk_widget_grab_focus(GTK_WIDGET(self));
  if (n_press == 2 && !_ts_graph_view_minimap_at(self, x, y, &cx, &cy) && !_ts_graph_view_legend_at(self, x, y))
    _ts_graph_view_activate(self, _ts_graph_view_item_at(self, x, y));
}

/* Selection on release: a press that starts a pan selects nothing. */
static void on_click_released(GtkGestureClick *gesture, int n_press, double x, double y, TsGraphView *self)
{
  double cx, cy;
  if (_ts_graph_view_legend_header_at(self, x, y)) {
    if (n_press == 1)
      ts_graph_view_set_legend_collapsed(self, !self->legend_collapsed);
  } else if (n_press == 1 && !_ts_graph_view_minimap_at(self, x, y, &cx, &cy) && !_ts_graph_view_legend_at(self, x, y)) {
    ts_graph_view_select_item(self, _ts_graph_view_item_at(self, x, y));
  }
}

/* A wheel zooms around the pointer; a touchpad pans, and zooms with Ctrl. */
static gboolean on_scroll(GtkEventControllerScroll *controller, double dx, double dy, TsGraphView *self)
{
  _ts_graph_view_stop_flight(self);
  GdkModifierType state = gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(controller));
  double zoom = ts_viewport_get_zoom(self->viewport);
  if (gtk_event_controller_scroll_get_unit(controller) == GDK_SCROLL_UNIT_SURFACE) {
    if (!(state & GDK_CONTROL_MASK)) {
      ts_viewport_pan(self->viewport, dx, dy);
      return GDK_EVENT_STOP;
    }
    zoom *= exp(-dy * TOUCHPAD_ZOOM_RATE);
  } else {
    zoom *= pow(WHEEL_ZOOM_STEP, -dy);
  }
  ts_viewport_zoom_at(self->viewport, zoom, self->pointer_x, self->pointer_y);
  return GDK_EVENT_STOP;
}

static void on_pinch_begin(GtkGesture *gesture, GdkEventSequence *sequence, TsGraphView *self)
{
  _ts_graph_view_stop_flight(self);
  double x, y;
  self->pinch_zoom0 = ts_viewport_get_zoom(self->viewport);
  if (!gtk_gesture_get_bounding_box_center(gesture, &x, &y))
    x = widget_width(self) / 2, y = widget_height(self) / 2;
  ts_viewport_widget_to_canvas(self->viewport, x, y, &self->pinch_cx, &self->pinch_cy);
}

/* The canvas point between the fingers stays between them. */
static void on_pinch_scale_changed(GtkGestureZoom *gesture, double scale, TsGraphView *self)
{
  double x, y;
  if (!gtk_gesture_get_bounding_box_center(GTK_GESTURE(gesture), &x, &y))
    return;
  ts_viewport_zoom_at(self->viewport, self->pinch_zoom0 * scale, x, y);
  ts_viewport_move_point_to(self->viewport, self->pinch_cx, self->pinch_cy, x, y);
}

static void on_motion(GtkEventControllerMotion *controller, double x, double y, TsGraphView *self)
{
  double cx, cy;
  self->pointer_x = x;
  self->pointer_y = y;
  gboolean over = _ts_graph_view_minimap_at(self, x, y, &cx, &cy) || _ts_graph_view_legend_at(self, x, y);
  _ts_graph_view_set_hovered(self, over ? -1 : _ts_graph_view_item_at(self, x, y));
}

static void on_leave(GtkEventControllerMotion *controller, TsGraphView *self)
{
  _ts_graph_view_set_hovered(self, -1);
}

/* ---- tooltips ---------------------------------------------------------------------------- */

static void append_ports(GString *out, const char *what, const ts_node *n, bool inputs)
{
  int count = inputs ? ts_node_n_inputs(n) : ts_node_n_outputs(n);
  if (count == 0)
    return;
  g_string_append_printf(out, "\n%s ", what);
  const ts_graph *g = ts_node_graph(n);
  for (int i = 0; i < count; i++) {
    const ts_node *src = n;
    int index = i;
    if (inputs) {
      ts_port port = ts_node_input(n, i);
      src = ts_graph_node(g, port.node);
      index = port.index;
    }
    char *text = src ? ts_shape_dtype_string(ts_node_output_dtype(src, index), ts_node_output_shape(src, index))
                     : NULL;
    g_autofree char *escaped = g_markup_escape_text(text ? text : "?", -1);
    g_string_append_printf(out, "%s%s", i ? ", " : "", escaped);
    free(text);
  }
}

static const char *const KIND_NAMES[TS_VIEW_ITEM_KIND_COUNT] = {
  [TS_VIEW_ITEM_ROOT] = "graph",
  [TS_VIEW_ITEM_GROUP] = "name scope",
  [TS_VIEW_ITEM_SERIES] = "series of alike scopes",
  [TS_VIEW_ITEM_OP] = "op",
  [TS_VIEW_ITEM_SUBGRAPH] = "subgraph",
};

/* Compute time: the node's note (its timing), or a group's sum. */
static void append_timing(GString *out, const ts_render *render, const ts_node *n, int item)
{
  const ts_render_values *values = ts_render_get_values(render);
  const char *note = n && values ? ts_render_values_note(values, n) : NULL;
  double v;
  const char *unit = NULL;
  if (note) {
    g_autofree char *escaped = g_markup_escape_text(note, -1);
    g_string_append_printf(out, "\n%s", escaped);
  } else if (ts_render_item_value(render, item, &v, &unit)) {
    g_autofree char *text = g_markup_printf_escaped("\ncompute time %.3g%s%s", v, unit ? " " : "", unit ? unit : "");
    g_string_append(out, text);
  }
}

/* op, name, shapes in and out, source line; or what a group holds; its
 * compute time when coloured by it. */
static char *tooltip_markup(ts_view_model *model, const ts_render *render, int item)
{
  GString *out = g_string_new(NULL);
  const ts_node *n = ts_view_item_node(model, item);
  g_autofree char *name = g_markup_escape_text(ts_view_item_name(model, item), -1);
  if (n) {
    g_autofree char *op = g_markup_escape_text(ts_view_item_op_name(model, item), -1);
    g_string_append_printf(out, "<b>%s</b>  %s", op, name);
    append_ports(out, "in:", n, true);
    append_ports(out, "out:", n, false);
    ts_loc loc = ts_node_loc(n);
    if (loc.file) {
      g_autofree char *where = g_markup_printf_escaped("\n%s:%d%s%s", loc.file, loc.line,
                                                       loc.func ? " in " : "", loc.func ? loc.func : "");
      g_string_append(out, where);
    }
    if (ts_view_item_is_extracted(model, item))
      g_string_append(out, "\n<i>drawn as a dot beside its consumers</i>");
    append_timing(out, render, n, item);
  } else {
    ts_view_item_kind kind = ts_view_item_kind_of(model, item);
    int n_ops = ts_view_item_n_ops(model, item);
    g_string_append_printf(out, "<b>%s</b>\n%s", name, KIND_NAMES[kind]);
    if (kind == TS_VIEW_ITEM_SERIES)
      g_string_append_printf(out, " × %d", ts_view_item_n_children(model, item));
    g_string_append_printf(out, " · %d op%s", n_ops, n_ops == 1 ? "" : "s");
    append_timing(out, render, NULL, item);
    if (ts_view_item_is_expandable(model, item))
      g_string_append(out, "\n<i>double-click to open or close</i>");
  }
  return g_string_free(out, FALSE);
}

static gboolean on_query_tooltip(GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip)
{
  TsGraphView *self = TS_GRAPH_VIEW(widget);
  double cx, cy;
  if (!keyboard && _ts_graph_view_legend_header_at(self, x, y)) {
    gtk_tooltip_set_text(tooltip, self->legend_collapsed ? _("Click to show the legend (L); drag to move it (Shift+L)")
                                                         : _("Click to collapse the legend (L); drag to move it (Shift+L)"));
    return TRUE;
  }
  if (!keyboard && (_ts_graph_view_minimap_at(self, x, y, &cx, &cy) || _ts_graph_view_legend_at(self, x, y)))
    return FALSE;
  int item = keyboard ? self->selected : _ts_graph_view_item_at(self, x, y);
  const ts_view_box *box = item_box(self, item);
  if (!box)
    return FALSE;
  g_autofree char *markup = tooltip_markup(self->model, self->render, item);
  gtk_tooltip_set_markup(tooltip, markup);
  double x0, y0, x1, y1;
  ts_viewport_canvas_to_widget(self->viewport, box->x, box->y, &x0, &y0);
  ts_viewport_canvas_to_widget(self->viewport, box->x + box->width, box->y + box->height, &x1, &y1);
  gtk_tooltip_set_tip_area(tooltip, &(GdkRectangle){ (int)x0, (int)y0, (int)ceil(x1 - x0), (int)ceil(y1 - y0) });
  return TRUE;
}

/* ---- keyboard actions ----------------------------------------------------------------------- */

static void action_zoom(GtkWidget *widget, const char *name, GVariant *parameter)
{
  TsGraphView *self = TS_GRAPH_VIEW(widget);
  _ts_graph_view_stop_flight(self);
  double step = g_str_equal(name, "view.zoom-in") ? KEY_ZOOM_STEP : 1 / KEY_ZOOM_STEP;
  ts_viewport_zoom_at(self->viewport, ts_viewport_get_zoom(self->viewport) * step, widget_width(self) / 2,
                      widget_height(self) / 2);
}

static void action_zoom_fit(GtkWidget *widget, const char *name, GVariant *parameter)
{
  ts_graph_view_zoom_to_fit(TS_GRAPH_VIEW(widget));
}

static void action_zoom_width(GtkWidget *widget, const char *name, GVariant *parameter)
{
  ts_graph_view_zoom_to_width(TS_GRAPH_VIEW(widget));
}

static void action_zoom_reset(GtkWidget *widget, const char *name, GVariant *parameter)
{
  TsGraphView *self = TS_GRAPH_VIEW(widget);
  _ts_graph_view_stop_flight(self);
  ts_viewport_zoom_at(self->viewport, 1, widget_width(self) / 2, widget_height(self) / 2);
}

static void action_zoom_selection(GtkWidget *widget, const char *name, GVariant *parameter)
{
  ts_graph_view_zoom_to_selection(TS_GRAPH_VIEW(widget));
}

static void action_expand_all(GtkWidget *widget, const char *name, GVariant *parameter)
{
  if (g_str_equal(name, "view.expand-all"))
    ts_graph_view_expand_all(TS_GRAPH_VIEW(widget));
  else
    ts_graph_view_collapse_all(TS_GRAPH_VIEW(widget));
}

static void action_toggle_legend(GtkWidget *widget, const char *name, GVariant *parameter)
{
  TsGraphView *self = TS_GRAPH_VIEW(widget);
  ts_graph_view_set_legend_collapsed(self, !self->legend_collapsed);
}

/* Clockwise round the corners. */
static void action_move_legend(GtkWidget *widget, const char *name, GVariant *parameter)
{
  static const TsLegendCorner NEXT[] = {
    [TS_LEGEND_CORNER_TOP_LEFT] = TS_LEGEND_CORNER_TOP_RIGHT,
    [TS_LEGEND_CORNER_TOP_RIGHT] = TS_LEGEND_CORNER_BOTTOM_RIGHT,
    [TS_LEGEND_CORNER_BOTTOM_RIGHT] = TS_LEGEND_CORNER_BOTTOM_LEFT,
    [TS_LEGEND_CORNER_BOTTOM_LEFT] = TS_LEGEND_CORNER_TOP_LEFT,
  };
  TsGraphView *self = TS_GRAPH_VIEW(widget);
  ts_graph_view_set_legend_corner(self, NEXT[self->legend_placed]);
}

static void action_pan(GtkWidget *widget, const char *name, GVariant *parameter)
{
  TsGraphView *self = TS_GRAPH_VIEW(widget);
  double dx, dy;
  g_variant_get(parameter, "(dd)", &dx, &dy);
  _ts_graph_view_stop_flight(self);
  ts_viewport_pan(self->viewport, dx * KEY_PAN_FRACTION * widget_width(self),
                  dy * KEY_PAN_FRACTION * widget_height(self));
}

static void action_activate(GtkWidget *widget, const char *name, GVariant *parameter)
{
  TsGraphView *self = TS_GRAPH_VIEW(widget);
  _ts_graph_view_activate(self, self->selected);
}

static void action_unselect(GtkWidget *widget, const char *name, GVariant *parameter)
{
  ts_graph_view_select_item(TS_GRAPH_VIEW(widget), -1);
}

/* ---- walking the edges ---------------------------------------------------------------- */

/* The nodes next to n: the producers of its inputs (up) or the readers of
 * its outputs (down), in input or node order, each once.  Owned. */
static GPtrArray *neighbours(const ts_node *n, gboolean up)
{
  GPtrArray *out = g_ptr_array_new();
  const ts_graph *g = ts_node_graph(n);
  for (int id = 0; id < (up ? ts_node_n_inputs(n) : ts_graph_n_nodes(g)); id++) {
    const ts_node *other = up ? ts_graph_node(g, ts_node_input(n, id).node) : ts_graph_node(g, id);
    gboolean next = up;
    for (int i = 0; !up && i < ts_node_n_inputs(other); i++)
      next = next || ts_node_input(other, i).node == ts_node_id(n);
    if (other && next && !g_ptr_array_find(out, other, NULL))
      g_ptr_array_add(out, (gpointer)other);
  }
  return out;
}

static const ts_node *selected_node(TsGraphView *self)
{
  return self->model && self->selected >= 0 ? ts_view_item_node(self->model, self->selected) : NULL;
}

/* Selects and shows the neighbour of walk_from at walk_index (wrapping). */
static void walk_to(TsGraphView *self, GPtrArray *list)
{
  int n = (int)list->len;
  self->walk_index = ((self->walk_index % n) + n) % n;
  const ts_node *from = self->walk_from;
  ts_graph_view_reveal(self, g_ptr_array_index(list, self->walk_index));
  self->walk_from = from; /* the reveal's selection does not end the walk */
}

/* Alt+Up / Alt+Down: from the selected node to its first producer or consumer. */
static void action_walk(GtkWidget *widget, const char *name, GVariant *parameter)
{
  TsGraphView *self = TS_GRAPH_VIEW(widget);
  const ts_node *node = selected_node(self);
  gboolean up = g_str_equal(name, "view.walk-up");
  g_autoptr(GPtrArray) list = node ? neighbours(node, up) : NULL;
  if (!list || list->len == 0) {
    gtk_widget_error_bell(widget);
    return;
  }
  self->walk_from = node;
  self->walk_up = up;
  self->walk_index = 0;
  walk_to(self, list);
}

/* Alt+Left / Alt+Right: the previous or next of the neighbours the last walk chose among. */
static void action_walk_sibling(GtkWidget *widget, const char *name, GVariant *parameter)
{
  TsGraphView *self = TS_GRAPH_VIEW(widget);
  g_autoptr(GPtrArray) list = self->walk_from ? neighbours(self->walk_from, self->walk_up) : NULL;
  if (!list || list->len < 2 || g_ptr_array_index(list, self->walk_index % list->len) != selected_node(self)) {
    gtk_widget_error_bell(widget);
    return;
  }
  self->walk_index += g_str_equal(name, "view.walk-next") ? 1 : -1;
  walk_to(self, list);
}

static const struct {
  guint key;
  GdkModifierType mods;
  const char *action;
  double dx, dy; /* view.pan only */
} BINDINGS[] = {
  { GDK_KEY_Up, GDK_ALT_MASK, "view.walk-up", 0, 0 },
  { GDK_KEY_Down, GDK_ALT_MASK, "view.walk-down", 0, 0 },
  { GDK_KEY_Left, GDK_ALT_MASK, "view.walk-previous", 0, 0 },
  { GDK_KEY_Right, GDK_ALT_MASK, "view.walk-next", 0, 0 },
  { GDK_KEY_plus, 0, "view.zoom-in", 0, 0 },
  { GDK_KEY_plus, GDK_SHIFT_MASK, "view.zoom-in", 0, 0 },
  { GDK_KEY_equal, 0, "view.zoom-in", 0, 0 },
  { GDK_KEY_KP_Add, 0, "view.zoom-in", 0, 0 },
  { GDK_KEY_minus, 0, "view.zoom-out", 0, 0 },
  { GDK_KEY_KP_Subtract, 0, "view.zoom-out", 0, 0 },
  { GDK_KEY_0, 0, "view.zoom-fit", 0, 0 },
  { GDK_KEY_KP_0, 0, "view.zoom-fit", 0, 0 },
  { GDK_KEY_0, GDK_CONTROL_MASK, "view.zoom-reset", 0, 0 },
  { GDK_KEY_KP_0, GDK_CONTROL_MASK, "view.zoom-reset", 0, 0 },
  { GDK_KEY_w, 0, "view.zoom-width", 0, 0 },
  { GDK_KEY_e, 0, "view.expand-all", 0, 0 },
  { GDK_KEY_c, 0, "view.collapse-all", 0, 0 },
  { GDK_KEY_l, 0, "view.toggle-legend", 0, 0 },
  { GDK_KEY_L, GDK_SHIFT_MASK, "view.move-legend", 0, 0 },
  { GDK_KEY_f, 0, "view.zoom-selection", 0, 0 },
  { GDK_KEY_F, GDK_SHIFT_MASK, "view.zoom-selection", 0, 0 },
  { GDK_KEY_Left, 0, "view.pan", -1, 0 },
  { GDK_KEY_Right, 0, "view.pan", 1, 0 },
  { GDK_KEY_Up, 0, "view.pan", 0, -1 },
  { GDK_KEY_Down, 0, "view.pan", 0, 1 },
  { GDK_KEY_Return, 0, "view.activate", 0, 0 },
  { GDK_KEY_KP_Enter, 0, "view.activate", 0, 0 },
  { GDK_KEY_Escape, 0, "view.unselect", 0, 0 },
};

void _ts_graph_view_class_init_input(GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_callback(widget_class, on_drag_begin);
  gtk_widget_class_bind_template_callback(widget_class, on_drag_update);
  gtk_widget_class_bind_template_callback(widget_class, on_drag_end);
  gtk_widget_class_bind_template_callback(widget_class, on_click_pressed);
  gtk_widget_class_bind_template_callback(widget_class, on_click_released);
  gtk_widget_class_bind_template_callback(widget_class, on_scroll);
  gtk_widget_class_bind_template_callback(widget_class, on_pinch_begin);
  gtk_widget_class_bind_template_callback(widget_class, on_pinch_scale_changed);
  gtk_widget_class_bind_template_callback(widget_class, on_motion);
  gtk_widget_class_bind_template_callback(widget_class, on_leave);
  gtk_widget_class_bind_template_callback(widget_class, on_query_tooltip);

  gtk_widget_class_install_action(widget_class, "view.zoom-in", NULL, action_zoom);
  gtk_widget_class_install_action(widget_class, "view.zoom-out", NULL, action_zoom);
  gtk_widget_class_install_action(widget_class, "view.zoom-fit", NULL, action_zoom_fit);
  gtk_widget_class_install_action(widget_class, "view.zoom-width", NULL, action_zoom_width);
  gtk_widget_class_install_action(widget_class, "view.zoom-reset", NULL, action_zoom_reset);
  gtk_widget_class_install_action(widget_class, "view.zoom-selection", NULL, action_zoom_selection);
  gtk_widget_class_install_action(widget_class, "view.expand-all", NULL, action_expand_all);
  gtk_widget_class_install_action(widget_class, "view.collapse-all", NULL, action_expand_all);
  gtk_widget_class_install_action(widget_class, "view.toggle-legend", NULL, action_toggle_legend);
  gtk_widget_class_install_action(widget_class, "view.move-legend", NULL, action_move_legend);
  gtk_widget_class_install_action(widget_class, "view.pan", "(dd)", action_pan);
  gtk_widget_class_install_action(widget_class, "view.activate", NULL, action_activate);
  gtk_widget_class_install_action(widget_class, "view.unselect", NULL, action_unselect);
  gtk_widget_class_install_action(widget_class, "view.walk-up", NULL, action_walk);
  gtk_widget_class_install_action(widget_class, "view.walk-down", NULL, action_walk);
  gtk_widget_class_install_action(widget_class, "view.walk-previous", NULL, action_walk_sibling);
  gtk_widget_class_install_action(widget_class, "view.walk-next", NULL, action_walk_sibling);
  for (size_t i = 0; i < G_N_ELEMENTS(BINDINGS); i++) {
    if (g_str_equal(BINDINGS[i].action, "view.pan"))
      gtk_widget_class_add_binding_action(widget_class, BINDINGS[i].key, BINDINGS[i].mods, BINDINGS[i].action,
                                          "(dd)", BINDINGS[i].dx, BINDINGS[i].dy);
    else
      gtk_widget_class_add_binding_action(widget_class, BINDINGS[i].key, BINDINGS[i].mods, BINDINGS[i].action,
                                          NULL);
  }
}
