/* ts-timeline.c — TsTimeline: the widget around ts-timeline-render.c.
 * Holds the session's level-of-detail index and the view (start time, ns a
 * pixel, vertical scroll, marks); turns pointer, wheel and keys into view
 * changes, selections and signals.  Every input goes through the same few
 * functions as the actions that tests and menus use. */
#include "ts-timeline.h"

#include <math.h>

#include "ts-timeline-render.h"

#define MIN_NS_PER_PX 0.01
#define CLICK_SLOP_PX 3.0
#define WHEEL_STEP_PX 48.0
#define KEY_ZOOM 1.25

struct _TsTimeline {
  GtkWidget parent_instance;
  const tsp_session *session; /* borrowed */
  tsp_lod *lod;
  ts_timeline_view v;
  bool follow_fit; /* the view is the whole recording: it fits again as the width changes */
  /* a drag: pan, or a range from anchor */
  enum { DRAG_NONE, DRAG_PAN, DRAG_RANGE } drag;
  double drag_start_ns, drag_scroll_y, range_anchor_ns;
  double pointer_x, pointer_y;
  bool has_pointer;
  GArray *hits; /* tsp_lod_hit of the last search */
  bool dark_set; /* by ts_timeline_set_dark; until then the theme decides */
  int hit;
};

G_DEFINE_FINAL_TYPE(TsTimeline, ts_timeline, GTK_TYPE_WIDGET)

enum { SPAN_SELECTED, RANGE_SELECTED, MATCH_SHOWN, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ---- the view ----------------------------------------------------------------------------- */

static double tracks_viewport(TsTimeline *self)
{
  return MAX(self->v.height - TS_TIMELINE_RULER - ts_timeline_memory_height(self->lod), 1);
}

static double tracks_width(TsTimeline *self)
{
  return MAX(self->v.width - TS_TIMELINE_GUTTER, 1);
}

/* Keeps some of the session in view and the scroll inside the tracks. */
static void clamp_view(TsTimeline *self)
{
  if (!self->lod)
    return;
  uint64_t s, e;
  tsp_lod_range(self->lod, &s, &e);
  double span = MAX((double)(e - s), 1);
  double max_ns_per_px = 4 * span / tracks_width(self);
  self->v.ns_per_px = CLAMP(self->v.ns_per_px, MIN_NS_PER_PX, max_ns_per_px);
  double visible = tracks_width(self) * self->v.ns_per_px;
  self->v.start_ns = CLAMP(self->v.start_ns, (double)s - 0.9 * visible, (double)e - 0.1 * visible);
  double max_scroll = MAX(ts_timeline_tracks_height(self->lod) - tracks_viewport(self), 0);
  self->v.scroll_y = CLAMP(self->v.scroll_y, 0, max_scroll);
}

static void view_changed(TsTimeline *self)
{
  clamp_view(self);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

void ts_timeline_zoom_to_fit(TsTimeline *self)
{
  g_return_if_fail(TS_IS_TIMELINE(self));
  if (!self->lod)
    return;
  uint64_t s, e;
  tsp_lod_range(self->lod, &s, &e);
  double span = MAX((double)(e - s), 1);
  self->v.ns_per_px = span * 1.02 / tracks_width(self);
  self->v.start_ns = (double)s - span * 0.01;
  self->v.scroll_y = 0;
  self->follow_fit = true;
  view_changed(self);
}

/* Zooms by factor (> 1: in) keeping the time at x where it is. */
static void zoom_at(TsTimeline *self, double x, double factor)
{
  self->follow_fit = false;
  if (!self->lod || factor <= 0)
    return;
  double t = ts_timeline_time_of(&self->v, x);
  self->v.ns_per_px /= factor;
  clamp_view(self);
  self->v.start_ns = t - (x - TS_TIMELINE_GUTTER) * self->v.ns_per_px;
  view_changed(self);
}

static double zoom_anchor_x(TsTimeline *self)
{
  return self->has_pointer && self->pointer_x >= TS_TIMELINE_GUTTER
           ? self->pointer_x
           : TS_TIMELINE_GUTTER + tracks_width(self) / 2;
}

/* Brings a span (or marker) into view, zooming in until it is a few pixels wide. */
static void reveal(TsTimeline *self, const ts_timeline_mark *m)
{
  self->follow_fit = false;
  const tsp_event *e = m->event;
  double width = tracks_width(self);
  double dur = (double)(e->end_ns - e->start_ns);
  if (dur > 0.8 * width * self->v.ns_per_px)
    self->v.ns_per_px = dur / (0.8 * width);
  else if (dur > 0 && dur < 8 * self->v.ns_per_px)
    self->v.ns_per_px = MAX(dur / 8, MIN_NS_PER_PX);
  double mid = (double)e->start_ns + dur / 2;
  double left = self->v.start_ns, right = left + width * self->v.ns_per_px;
  if (mid < left + 0.05 * (right - left) || mid > right - 0.05 * (right - left) || dur > 0.8 * (right - left))
    self->v.start_ns = mid - width * self->v.ns_per_px / 2;
  double y = ts_timeline_row_y(&self->v, m->track, m->depth) + self->v.scroll_y - TS_TIMELINE_RULER;
  if (y < self->v.scroll_y || y + TS_TIMELINE_ROW > self->v.scroll_y + tracks_viewport(self))
    self->v.scroll_y = y - tracks_viewport(self) / 3;
  view_changed(self);
}

static void pan(TsTimeline *self, double dx_px, double dy_px)
{
  self->follow_fit = false;
  self->v.start_ns += dx_px * self->v.ns_per_px;
  self->v.scroll_y += dy_px;
  view_changed(self);
}

/* ---- selection ----------------------------------------------------------------------------- */

static guint node_of(const tsp_event *e)
{
  return e && e->kind == TSP_EVENT_OP ? (e->node ? e->node : e->traced) : 0;
}

static void select_mark(TsTimeline *self, ts_timeline_mark m)
{
  self->v.selected = m;
  gtk_widget_queue_draw(GTK_WIDGET(self));
  g_signal_emit(self, signals[SPAN_SELECTED], 0, (gpointer)m.event, node_of(m.event));
}

static void click_at(TsTimeline *self, double x, double y)
{
  if (!self->lod)
    return;
  tsp_lod_span sp;
  int track, depth;
  const tsp_event *trace = ts_timeline_trace_at(&self->v, x, y);
  if (trace && ts_timeline_row_at(&self->v, y, &track, &depth)) {
    select_mark(self, (ts_timeline_mark){ trace, track, -1 });
  } else if (ts_timeline_span_at(&self->v, x, y, &sp) && ts_timeline_row_at(&self->v, y, &track, &depth)) {
    if (sp.count == 1) {
      select_mark(self, (ts_timeline_mark){ sp.event, track, depth });
    } else {
      /* a summary: zoom in until its spans come apart */
      double dur = MAX((double)(sp.end_ns - sp.start_ns), 1);
      self->v.ns_per_px = dur / (0.5 * tracks_width(self));
      self->v.start_ns = (double)sp.start_ns - 0.25 * tracks_width(self) * self->v.ns_per_px;
      view_changed(self);
    }
  } else if (self->v.selected.event) {
    select_mark(self, (ts_timeline_mark){ 0 });
  }
}

static void set_range(TsTimeline *self, double a_ns, double b_ns, bool emit)
{
  self->v.has_range = true;
  self->v.range_from_ns = MAX(MIN(a_ns, b_ns), 0);
  self->v.range_to_ns = MAX(MAX(a_ns, b_ns), 0);
  gtk_widget_queue_draw(GTK_WIDGET(self));
  if (emit)
    g_signal_emit(self, signals[RANGE_SELECTED], 0, (guint64)self->v.range_from_ns,
                  (guint64)ceil(self->v.range_to_ns));
}

/* ---- search ------------------------------------------------------------------------------ */

static void show_hit(TsTimeline *self)
{
  const tsp_lod_hit *h = &g_array_index(self->hits, tsp_lod_hit, self->hit);
  self->v.found = (ts_timeline_mark){ h->event, h->track, h->depth };
  reveal(self, &self->v.found);
  g_signal_emit(self, signals[MATCH_SHOWN], 0);
}

int ts_timeline_search(TsTimeline *self, const char *text)
{
  g_return_val_if_fail(TS_IS_TIMELINE(self), 0);
  g_clear_pointer(&self->hits, g_array_unref);
  self->v.found = (ts_timeline_mark){ 0 };
  gtk_widget_queue_draw(GTK_WIDGET(self));
  if (!self->lod || !text || !*text)
    return 0;
  self->hits = tsp_lod_search(self->lod, text);
  self->hit = 0;
  if (self->hits->len)
    show_hit(self);
  return (int)self->hits->len;
}

gboolean ts_timeline_search_next(TsTimeline *self, gboolean backward)
{
  g_return_val_if_fail(TS_IS_TIMELINE(self), FALSE);
  if (!self->hits || !self->hits->len)
    return FALSE;
  int n = (int)self->hits->len;
  self->hit = (self->hit + (backward ? n - 1 : 1)) % n;
  show_hit(self);
  return TRUE;
}

int ts_timeline_get_match(TsTimeline *self, int *n_matches)
{
  g_return_val_if_fail(TS_IS_TIMELINE(self), -1);
  int n = self->hits ? (int)self->hits->len : 0;
  if (n_matches)
    *n_matches = n;
  return n > 0 ? (int)self->hit : -1;
}

void ts_timeline_select_node(TsTimeline *self, guint node)
{
  g_return_if_fail(TS_IS_TIMELINE(self));
  self->v.node = node;
  gtk_widget_queue_draw(GTK_WIDGET(self));
  if (!self->lod || !node)
    return;
  ts_timeline_mark first = { 0 };
  for (int t = 0; t < tsp_session_n_threads(self->session); t++) {
    tsp_iter it;
    tsp_iter_init(&it, self->session, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));)
      if (e->kind == TSP_EVENT_OP && (e->node == node || e->traced == node) &&
          (!first.event || e->start_ns < first.event->start_ns))
        first = (ts_timeline_mark){ e, t, 0 };
  }
  if (!first.event)
    return;
  first.depth = tsp_lod_depth_of(self->lod, first.track, first.event);
  reveal(self, &first);
}

/* ---- input --------------------------------------------------------------------------------- */

static void on_drag_begin(GtkGestureDrag *g, double x, double y, TsTimeline *self)
{
  GdkModifierType mods = gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(g));
  gtk_widget_grab_focus(GTK_WIDGET(self));
  if (!self->lod) {
    self->drag = DRAG_NONE;
    return;
  }
  self->drag = (mods & GDK_SHIFT_MASK) || y < TS_TIMELINE_RULER ? DRAG_RANGE : DRAG_PAN;
  self->drag_start_ns = self->v.start_ns;
  self->drag_scroll_y = self->v.scroll_y;
  self->range_anchor_ns = ts_timeline_time_of(&self->v, x);
}

static void on_drag_update(GtkGestureDrag *g, double dx, double dy, TsTimeline *self)
{
  double x, y;
  gtk_gesture_drag_get_start_point(g, &x, &y);
  if (self->drag == DRAG_PAN) {
    /* from where the drag began, so that errors do not add up */
    self->follow_fit = false;
    self->v.start_ns = self->drag_start_ns - dx * self->v.ns_per_px;
    self->v.scroll_y = self->drag_scroll_y - dy;
    view_changed(self);
  } else if (self->drag == DRAG_RANGE && fabs(dx) >= CLICK_SLOP_PX) {
    set_range(self, self->range_anchor_ns, ts_timeline_time_of(&self->v, x + dx), false);
  }
}

static void on_drag_end(GtkGestureDrag *g, double dx, double dy, TsTimeline *self)
{
  double x, y;
  gtk_gesture_drag_get_start_point(g, &x, &y);
  bool click = fabs(dx) < CLICK_SLOP_PX && fabs(dy) < CLICK_SLOP_PX;
  if (self->drag == DRAG_PAN && click)
    click_at(self, x, y);
  else if (self->drag == DRAG_RANGE && !click)
    set_range(self, self->range_anchor_ns, ts_timeline_time_of(&self->v, x + dx), true);
  self->drag = DRAG_NONE;
}

static gboolean on_scroll(GtkEventControllerScroll *c, double dx, double dy, TsTimeline *self)
{
  if (!self->lod)
    return FALSE;
  GdkModifierType mods = gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(c));
  bool smooth = gtk_event_controller_scroll_get_unit(c) == GDK_SCROLL_UNIT_SURFACE;
  double step = smooth ? 1 : WHEEL_STEP_PX;
  if (mods & GDK_CONTROL_MASK) {
    zoom_at(self, zoom_anchor_x(self), smooth ? exp(-dy * 0.01) : pow(KEY_ZOOM, -dy));
  } else if ((mods & GDK_SHIFT_MASK) || ts_timeline_tracks_height(self->lod) <= tracks_viewport(self)) {
    pan(self, (dx + dy) * step, 0);
  } else {
    pan(self, dx * step, dy * step);
  }
  return TRUE;
}

static bool same_mark(const ts_timeline_mark *a, const ts_timeline_mark *b)
{
  return a->event == b->event;
}

static void on_motion(GtkEventControllerMotion *c, double x, double y, TsTimeline *self)
{
  self->pointer_x = x;
  self->pointer_y = y;
  self->has_pointer = true;
  ts_timeline_mark m = { 0 };
  tsp_lod_span sp;
  int track, depth;
  if (self->lod && ts_timeline_span_at(&self->v, x, y, &sp) && sp.count == 1 &&
      ts_timeline_row_at(&self->v, y, &track, &depth))
    m = (ts_timeline_mark){ sp.event, track, depth };
  if (!same_mark(&m, &self->v.hovered)) {
    self->v.hovered = m;
    gtk_widget_queue_draw(GTK_WIDGET(self));
  }
}

static void on_leave(GtkEventControllerMotion *c, TsTimeline *self)
{
  self->has_pointer = false;
  if (self->v.hovered.event) {
    self->v.hovered = (ts_timeline_mark){ 0 };
    gtk_widget_queue_draw(GTK_WIDGET(self));
  }
}

static gboolean on_query_tooltip(GtkWidget *w, int x, int y, gboolean keyboard, GtkTooltip *tip,
                                 TsTimeline *self)
{
  if (!self->lod || keyboard)
    return FALSE;
  tsp_lod_span sp;
  char *text = NULL;
  const tsp_event *trace = ts_timeline_trace_at(&self->v, x, y);
  if (trace) {
    sp = (tsp_lod_span){ trace->start_ns, trace->end_ns, trace, 1, trace->op, 1 };
    text = ts_timeline_describe(self->lod, &sp);
  } else if (ts_timeline_span_at(&self->v, x, y, &sp)) {
    text = ts_timeline_describe(self->lod, &sp);
  }
  if (!text)
    return FALSE;
  gtk_tooltip_set_text(tip, text);
  g_free(text);
  return TRUE;
}

/* ---- actions ------------------------------------------------------------------------------ */

static void action_zoom(GtkWidget *w, const char *name, GVariant *param)
{
  TsTimeline *self = TS_TIMELINE(w);
  if (g_str_equal(name, "timeline.zoom-fit"))
    ts_timeline_zoom_to_fit(self);
  else
    zoom_at(self, zoom_anchor_x(self), g_str_equal(name, "timeline.zoom-in") ? KEY_ZOOM : 1 / KEY_ZOOM);
}

static void action_pan(GtkWidget *w, const char *name, GVariant *param)
{
  TsTimeline *self = TS_TIMELINE(w);
  double fx, fy;
  g_variant_get(param, "(dd)", &fx, &fy);
  pan(self, fx * tracks_width(self), fy * TS_TIMELINE_ROW);
}

static void action_zoom_at(GtkWidget *w, const char *name, GVariant *param)
{
  double x, factor;
  g_variant_get(param, "(dd)", &x, &factor);
  zoom_at(TS_TIMELINE(w), x, factor);
}

static void action_click_at(GtkWidget *w, const char *name, GVariant *param)
{
  double x, y;
  g_variant_get(param, "(dd)", &x, &y);
  click_at(TS_TIMELINE(w), x, y);
}

static void action_select_range(GtkWidget *w, const char *name, GVariant *param)
{
  TsTimeline *self = TS_TIMELINE(w);
  double x0, x1;
  g_variant_get(param, "(dd)", &x0, &x1);
  if (self->lod)
    set_range(self, ts_timeline_time_of(&self->v, x0), ts_timeline_time_of(&self->v, x1), true);
}

static void action_search_step(GtkWidget *w, const char *name, GVariant *param)
{
  ts_timeline_search_next(TS_TIMELINE(w), g_str_equal(name, "timeline.search-previous"));
}

static void action_unselect(GtkWidget *w, const char *name, GVariant *param)
{
  TsTimeline *self = TS_TIMELINE(w);
  self->v.has_range = false;
  if (self->v.selected.event)
    select_mark(self, (ts_timeline_mark){ 0 });
  gtk_widget_queue_draw(w);
}

/* ---- the widget ------------------------------------------------------------------------------ */

void ts_timeline_set_session(TsTimeline *self, const tsp_session *session)
{
  g_return_if_fail(TS_IS_TIMELINE(self));
  g_return_if_fail(!session || !tsp_session_recording(session));
  g_clear_pointer(&self->hits, g_array_unref);
  g_clear_pointer(&self->lod, tsp_lod_free);
  self->session = session;
  self->v = (ts_timeline_view){ .width = self->v.width, .height = self->v.height, .dark = self->v.dark };
  if (session)
    self->lod = tsp_lod_build(session);
  self->v.lod = self->lod;
  self->follow_fit = true;
  if (self->v.width > TS_TIMELINE_GUTTER)
    ts_timeline_zoom_to_fit(self);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

const tsp_session *ts_timeline_get_session(TsTimeline *self)
{
  g_return_val_if_fail(TS_IS_TIMELINE(self), NULL);
  return self->session;
}

const tsp_lod *ts_timeline_get_lod(TsTimeline *self)
{
  g_return_val_if_fail(TS_IS_TIMELINE(self), NULL);
  return self->lod;
}

void ts_timeline_set_dark(TsTimeline *self, gboolean dark)
{
  g_return_if_fail(TS_IS_TIMELINE(self));
  self->dark_set = true;
  self->v.dark = dark;
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

/* Until set_dark, the theme decides, as for the graph: light text means a
 * dark theme. */
static void ts_timeline_css_changed(GtkWidget *w, GtkCssStyleChange *change)
{
  TsTimeline *self = TS_TIMELINE(w);
  GTK_WIDGET_CLASS(ts_timeline_parent_class)->css_changed(w, change);
  if (self->dark_set)
    return;
  GdkRGBA fg;
  gtk_style_context_get_color(gtk_widget_get_style_context(w), &fg);
  self->v.dark = 0.299 * fg.red + 0.587 * fg.green + 0.114 * fg.blue > 0.5;
  gtk_widget_queue_draw(w);
}

double ts_timeline_time_at(TsTimeline *self, double x)
{
  return ts_timeline_time_of(&self->v, x);
}

double ts_timeline_x_at(TsTimeline *self, double time_ns)
{
  return ts_timeline_x_of(&self->v, time_ns);
}

double ts_timeline_get_ns_per_px(TsTimeline *self)
{
  return self->v.ns_per_px;
}

gboolean ts_timeline_get_span_area(TsTimeline *self, const tsp_event *event, graphene_rect_t *area)
{
  g_return_val_if_fail(TS_IS_TIMELINE(self) && event, FALSE);
  for (int t = 0; self->lod && t < tsp_session_n_threads(self->session); t++) {
    int d = tsp_lod_depth_of(self->lod, t, event);
    if (d < 0)
      continue;
    double x0 = ts_timeline_x_of(&self->v, (double)event->start_ns);
    double x1 = ts_timeline_x_of(&self->v, (double)event->end_ns);
    graphene_rect_init(area, (float)x0, (float)ts_timeline_row_y(&self->v, t, d), (float)(x1 - x0),
                       (float)TS_TIMELINE_ROW);
    return TRUE;
  }
  return FALSE;
}

const tsp_event *ts_timeline_get_selected(TsTimeline *self)
{
  return self->v.selected.event;
}

const tsp_event *ts_timeline_get_found(TsTimeline *self)
{
  return self->v.found.event;
}

gboolean ts_timeline_get_range(TsTimeline *self, guint64 *from_ns, guint64 *to_ns)
{
  if (!self->v.has_range)
    return FALSE;
  *from_ns = (guint64)self->v.range_from_ns;
  *to_ns = (guint64)ceil(self->v.range_to_ns);
  return TRUE;
}

static void ts_timeline_size_allocate(GtkWidget *w, int width, int height, int baseline)
{
  TsTimeline *self = TS_TIMELINE(w);
  gboolean resized = width != self->v.width;
  self->v.width = width;
  self->v.height = height;
  if (self->follow_fit && resized && self->lod && width > TS_TIMELINE_GUTTER)
    ts_timeline_zoom_to_fit(self);
  clamp_view(self);
}

static void ts_timeline_snapshot(GtkWidget *w, GtkSnapshot *snapshot)
{
  TsTimeline *self = TS_TIMELINE(w);
  int width = gtk_widget_get_width(w), height = gtk_widget_get_height(w);
  if (width <= 0 || height <= 0)
    return;
  cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, width, height));
  ts_timeline_render(cr, &self->v);
  cairo_destroy(cr);
}

static void ts_timeline_measure(GtkWidget *w, GtkOrientation o, int for_size, int *min, int *nat,
                                int *min_base, int *nat_base)
{
  TsTimeline *self = TS_TIMELINE(w);
  *min = o == GTK_ORIENTATION_HORIZONTAL ? 240 : 120;
  double tracks = self->lod ? ts_timeline_tracks_height(self->lod) : 0;
  *nat = o == GTK_ORIENTATION_HORIZONTAL ? 800 : (int)MAX(300, TS_TIMELINE_RULER + tracks + ts_timeline_memory_height(self->lod));
}

static void ts_timeline_finalize(GObject *object)
{
  TsTimeline *self = TS_TIMELINE(object);
  g_clear_pointer(&self->hits, g_array_unref);
  g_clear_pointer(&self->lod, tsp_lod_free);
  G_OBJECT_CLASS(ts_timeline_parent_class)->finalize(object);
}

static void ts_timeline_class_init(TsTimelineClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->finalize = ts_timeline_finalize;
  widget_class->snapshot = ts_timeline_snapshot;
  widget_class->size_allocate = ts_timeline_size_allocate;
  widget_class->measure = ts_timeline_measure;
  widget_class->css_changed = ts_timeline_css_changed;

  signals[SPAN_SELECTED] = g_signal_new("span-selected", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_POINTER, G_TYPE_UINT);
  signals[RANGE_SELECTED] = g_signal_new("range-selected", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_UINT64, G_TYPE_UINT64);
  signals[MATCH_SHOWN] = g_signal_new("match-shown", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                      NULL, G_TYPE_NONE, 0);

  gtk_widget_class_install_action(widget_class, "timeline.zoom-in", NULL, action_zoom);
  gtk_widget_class_install_action(widget_class, "timeline.zoom-out", NULL, action_zoom);
  gtk_widget_class_install_action(widget_class, "timeline.zoom-fit", NULL, action_zoom);
  gtk_widget_class_install_action(widget_class, "timeline.pan", "(dd)", action_pan);
  gtk_widget_class_install_action(widget_class, "timeline.zoom-at", "(dd)", action_zoom_at);
  gtk_widget_class_install_action(widget_class, "timeline.click-at", "(dd)", action_click_at);
  gtk_widget_class_install_action(widget_class, "timeline.select-range", "(dd)", action_select_range);
  gtk_widget_class_install_action(widget_class, "timeline.search-next", NULL, action_search_step);
  gtk_widget_class_install_action(widget_class, "timeline.search-previous", NULL, action_search_step);
  gtk_widget_class_install_action(widget_class, "timeline.unselect", NULL, action_unselect);

  static const struct {
    guint key;
    GdkModifierType mods;
    const char *action;
  } keys[] = {
    { GDK_KEY_plus, 0, "timeline.zoom-in" },
    { GDK_KEY_equal, 0, "timeline.zoom-in" },
    { GDK_KEY_KP_Add, 0, "timeline.zoom-in" },
    { GDK_KEY_minus, 0, "timeline.zoom-out" },
    { GDK_KEY_KP_Subtract, 0, "timeline.zoom-out" },
    { GDK_KEY_0, 0, "timeline.zoom-fit" },
    { GDK_KEY_f, 0, "timeline.zoom-fit" },
    { GDK_KEY_F, GDK_SHIFT_MASK, "timeline.zoom-fit" },
    { GDK_KEY_F3, 0, "timeline.search-next" },
    { GDK_KEY_F3, GDK_SHIFT_MASK, "timeline.search-previous" },
    { GDK_KEY_Escape, 0, "timeline.unselect" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
    gtk_widget_class_add_binding_action(widget_class, keys[i].key, keys[i].mods, keys[i].action, NULL);
  static const struct {
    guint key;
    double dx, dy; /* fractions of the width, rows */
  } pans[] = {
    { GDK_KEY_Left, -0.1, 0 }, { GDK_KEY_Right, 0.1, 0 }, { GDK_KEY_Up, 0, -1 }, { GDK_KEY_Down, 0, 1 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(pans); i++)
    gtk_widget_class_add_binding_action(widget_class, pans[i].key, 0, "timeline.pan", "(dd)",
                                        pans[i].dx, pans[i].dy);
}

static void ts_timeline_init(TsTimeline *self)
{
  GtkWidget *w = GTK_WIDGET(self);
  gtk_widget_set_focusable(w, TRUE);
  gtk_widget_set_has_tooltip(w, TRUE);
  g_signal_connect(w, "query-tooltip", G_CALLBACK(on_query_tooltip), self);

  GtkGesture *drag = gtk_gesture_drag_new();
  gtk_gesture_single_set_button(GTK_GESTURE_SINGLE(drag), GDK_BUTTON_PRIMARY);
  g_signal_connect(drag, "drag-begin", G_CALLBACK(on_drag_begin), self);
  g_signal_connect(drag, "drag-update", G_CALLBACK(on_drag_update), self);
  g_signal_connect(drag, "drag-end", G_CALLBACK(on_drag_end), self);
  gtk_widget_add_controller(w, GTK_EVENT_CONTROLLER(drag));

  GtkEventController *scroll = gtk_event_controller_scroll_new(GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), self);
  gtk_widget_add_controller(w, scroll);

  GtkEventController *motion = gtk_event_controller_motion_new();
  g_signal_connect(motion, "motion", G_CALLBACK(on_motion), self);
  g_signal_connect(motion, "leave", G_CALLBACK(on_leave), self);
  gtk_widget_add_controller(w, motion);
}

GtkWidget *ts_timeline_new(void)
{
  return g_object_new(TS_TYPE_TIMELINE, NULL);
}
