/* ts-timeline-render.c — the timeline drawn with Cairo from the session's
 * level-of-detail index: each visible depth row asks tsp_lod_query for its
 * window at the frame's ns a pixel, so a frame draws about a rectangle a
 * pixel a row whatever the zoom.  Ops take the graph's op colours (the same
 * op looks the same in graph and timeline); summaries of spans narrower
 * than a pixel are drawn in their dominant op's colour, fainter as they are
 * less busy.  Labels use Cairo's toy text with a fixed advance estimate
 * (no measuring: text is most of a frame's cost otherwise). */
#include "ts-timeline-render.h"

#include <math.h>
#include <string.h>

#include "ts-graph-render-private.h"

#define LABEL_MIN_PX 48.0  /* spans narrower than this get no label */
#define CHAR_PX 6.4        /* the advance of an average character at 11 px */
#define MAX_FLOWS 400      /* arrows from a selected call, or launch links */
#define LINK_SCAN 20000    /* spans of a row looked at for a selected span's launch links */

double ts_timeline_x_of(const ts_timeline_view *v, double t_ns)
{
  return TS_TIMELINE_GUTTER + (t_ns - v->start_ns) / v->ns_per_px;
}

double ts_timeline_time_of(const ts_timeline_view *v, double x)
{
  return v->start_ns + (x - TS_TIMELINE_GUTTER) * v->ns_per_px;
}

static double track_height(const tsp_lod *lod, int t)
{
  return TS_TIMELINE_HEADER + tsp_lod_n_depths(lod, t) * TS_TIMELINE_ROW + 4;
}

double ts_timeline_tracks_height(const tsp_lod *lod)
{
  double h = 0;
  for (int t = 0; lod && t < tsp_session_n_threads(tsp_lod_session(lod)); t++)
    h += track_height(lod, t);
  return h;
}

double ts_timeline_memory_height(const tsp_lod *lod)
{
  int n = lod ? tsp_lod_n_memory(lod) : 0;
  return n ? 6 + n * TS_TIMELINE_MEMORY : 0;
}

static double memory_height(const ts_timeline_view *v)
{
  return ts_timeline_memory_height(v->lod);
}

double ts_timeline_row_y(const ts_timeline_view *v, int track, int depth)
{
  double y = TS_TIMELINE_RULER - v->scroll_y;
  for (int t = 0; t < track; t++)
    y += track_height(v->lod, t);
  return depth < 0 ? y : y + TS_TIMELINE_HEADER + depth * TS_TIMELINE_ROW;
}

bool ts_timeline_row_at(const ts_timeline_view *v, double y, int *track, int *depth)
{
  if (!v->lod || y < TS_TIMELINE_RULER || y >= v->height - memory_height(v))
    return false;
  double top = TS_TIMELINE_RULER - v->scroll_y;
  for (int t = 0; t < tsp_session_n_threads(tsp_lod_session(v->lod)); t++) {
    double h = track_height(v->lod, t);
    if (y < top + h) {
      *track = t;
      double in = y - top - TS_TIMELINE_HEADER;
      *depth = in < 0 ? -1 : (int)(in / TS_TIMELINE_ROW);
      return *depth < tsp_lod_n_depths(v->lod, t);
    }
    top += h;
  }
  return false;
}

/* ---- text ---------------------------------------------------------------------------------- */

char *ts_timeline_format_ns(double ns)
{
  static const struct {
    double scale;
    const char *unit;
  } units[] = { { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "µs" }, { 1, "ns" } };
  double a = fabs(ns);
  for (size_t i = 0; i < G_N_ELEMENTS(units); i++) {
    if (a >= units[i].scale || i + 1 == G_N_ELEMENTS(units)) {
      double x = ns / units[i].scale;
      int decimals = fabs(x) >= 100 ? 0 : fabs(x) >= 10 ? 1 : 2;
      if (units[i].scale == 1)
        decimals = 0;
      char *s = g_strdup_printf("%.*f", decimals, x);
      /* 1.50 -> 1.5, 2.00 -> 2 */
      if (strchr(s, '.')) {
        char *end = s + strlen(s) - 1;
        while (*end == '0')
          *end-- = 0;
        if (*end == '.')
          *end = 0;
      }
      char *out = g_strdup_printf("%s %s", s, units[i].unit);
      g_free(s);
      return out;
    }
  }
  return g_strdup("");
}

/* A phase as its track names it: "trace dense", "pass fuse", "plan",
 * "tune matmul 20x784x64". */
static const char *phase_label(const tsp_session *s, const tsp_event *e, char *buf, size_t size)
{
  const char *kind = ts_phase_kind_name((ts_phase_kind)e->op), *name = tsp_session_string(s, e->node);
  if (g_str_equal(kind, name))
    return name;
  g_snprintf(buf, size, "%s %s", kind, name);
  return buf;
}

static const char *span_name(const tsp_session *s, const tsp_event *e, bool long_name, char buf[128])
{
  if (e->kind == TSP_EVENT_CALL || e->kind == TSP_EVENT_TRACE)
    return tsp_session_string(s, e->node);
  if (e->kind == TSP_EVENT_PHASE)
    return phase_label(s, e, buf, 128);
  const tsp_node_info *n = tsp_session_node(s, e->node ? e->node : e->traced);
  return long_name && n && *n->name ? n->name : tsp_event_op_name(s, e);
}

char *ts_timeline_describe(const tsp_lod *lod, const tsp_lod_span *sp)
{
  const tsp_session *s = tsp_lod_session(lod);
  const tsp_event *e = sp->event;
  g_autofree char *dur = ts_timeline_format_ns((double)(sp->end_ns - sp->start_ns));
  if (sp->count > 1 && e->kind == TSP_EVENT_PHASE)
    return g_strdup_printf("%u phases in %s, %.0f %% busy\nzoom in to see them one by one", sp->count,
                           dur, 100.0 * sp->busy);
  if (e->kind == TSP_EVENT_PHASE) {
    char buf[128];
    const char *detail = tsp_session_string(s, e->loc);
    return g_strdup_printf("%s%s%s\n%s", phase_label(s, e, buf, sizeof buf), *detail ? ": " : "",
                           detail, dur);
  }
  if (sp->count > 1) {
    tsp_event dominant = { .op = sp->op, .kind = TSP_EVENT_OP };
    const char *what = e->kind == TSP_EVENT_CALL ? "calls" : "ops";
    const char *op = e->kind == TSP_EVENT_CALL ? tsp_session_string(s, e->node)
                                               : tsp_event_op_name(s, &dominant);
    return g_strdup_printf("%u %s in %s, mostly %s, %.0f %% busy\nzoom in to see them one by one",
                           sp->count, what, dur, op, 100.0 * sp->busy);
  }
  if (e->kind == TSP_EVENT_CALL)
    return g_strdup_printf("call %s (%s)\n%s", tsp_session_string(s, e->node),
                           e->op == TSP_MODE_GRAPH ? "graph" : "eager", dur);
  if (e->kind == TSP_EVENT_TRACE)
    return g_strdup_printf("traced %s: %s\n%s %s", tsp_session_string(s, e->node),
                           tsp_session_string(s, e->loc),
                           tsp_session_concrete(s, e->traced)->signature, dur);
  const tsp_node_info *n = tsp_session_node(s, e->node ? e->node : e->traced);
  const tsp_loc_info *loc = tsp_session_loc(s, e->loc);
  GString *o = g_string_new(tsp_event_op_name(s, e));
  if (n && *n->name)
    g_string_append_printf(o, "  %s", n->name);
  g_string_append_printf(o, "\n%s, %s", dur, e->node ? "graph" : "eager");
  if (n && *n->shape)
    g_string_append_printf(o, ", %s", n->shape);
  if (*loc->file) {
    const char *base = strrchr(loc->file, '/');
    g_string_append_printf(o, "\n%s:%d", base ? base + 1 : loc->file, loc->line);
    if (*loc->func)
      g_string_append_printf(o, " in %s", loc->func);
  }
  if (n && *n->scope)
    g_string_append_printf(o, "\nscope %s", n->scope);
  return g_string_free(o, FALSE);
}

/* Text clipped to fit width px, by the advance estimate. */
static void show_text_in(cairo_t *cr, const char *text, double x, double y, double width)
{
  int fit = (int)(width / CHAR_PX);
  if (fit <= 0)
    return;
  size_t len = strlen(text);
  char buf[128];
  if ((size_t)fit >= len && len < sizeof buf) {
    memcpy(buf, text, len + 1);
  } else {
    /* cut on a character boundary, with an ellipsis */
    const char *end = g_utf8_offset_to_pointer(text, MIN(fit - 1, (int)g_utf8_strlen(text, -1)));
    size_t n = MIN((size_t)(end - text), sizeof buf - 4);
    if (fit < 3)
      return;
    memcpy(buf, text, n);
    memcpy(buf + n, "…", 4);
  }
  cairo_move_to(cr, x, y);
  cairo_show_text(cr, buf);
}

/* ---- spans --------------------------------------------------------------------------------- */

/* Ops take their op's colour; ops the engine does not know (another
 * tool's: aten::addmm) one picked by their name from colours of their own,
 * so that a name keeps its colour, neighbours differ, and none looks like
 * an engine op. */
static _ts_rgba span_colour(const _ts_palette *pal, const tsp_session *s, const tsp_event *e, int op)
{
  if (e->kind == TSP_EVENT_CALL)
    return _ts_mix(_ts_category_colour(pal, e->op == TSP_MODE_GRAPH ? 0 : 1), pal->background, 0.45);
  if (e->kind == TSP_EVENT_PHASE) /* a colour per kind of phase, after the calls' two */
    return _ts_mix(_ts_category_colour(pal, 2 + e->op), pal->background, 0.3);
  if (op == TSP_OP_OTHER && e->op == TSP_OP_OTHER)
    return _ts_foreign_colour(pal, g_str_hash(tsp_event_op_name(s, e)));
  return _ts_op_colour(pal, op == TSP_OP_OTHER ? -1 : op);
}

static void outline(cairo_t *cr, const ts_timeline_view *v, const ts_timeline_mark *m, _ts_rgba c,
                    double width)
{
  if (!m->event || m->depth < 0)
    return;
  double x0 = ts_timeline_x_of(v, (double)m->event->start_ns);
  double x1 = MAX(ts_timeline_x_of(v, (double)m->event->end_ns), x0 + 2);
  double y = ts_timeline_row_y(v, m->track, m->depth);
  _ts_set_source(cr, c);
  cairo_set_line_width(cr, width);
  cairo_rectangle(cr, x0 - width / 2, y + 0.5, x1 - x0 + width, TS_TIMELINE_ROW - 1);
  cairo_stroke(cr);
}

/* Rectangles of one colour, merged where they touch, filled together:
 * zoomed out, most of a row is runs of like summaries. */
typedef struct rect_batch {
  cairo_t *cr;
  _ts_rgba colour;
  double x0, x1, y, h;
  bool has_rect, has_path;
} rect_batch;

static bool same_colour(_ts_rgba a, _ts_rgba b)
{
  return a.r == b.r && a.g == b.g && a.b == b.b && a.a == b.a;
}

static void batch_flush(rect_batch *b)
{
  if (b->has_rect)
    cairo_rectangle(b->cr, b->x0, b->y, b->x1 - b->x0, b->h);
  if (b->has_rect || b->has_path) {
    _ts_set_source(b->cr, b->colour);
    cairo_fill(b->cr);
  }
  b->has_rect = b->has_path = false;
}

static void batch_add(rect_batch *b, _ts_rgba c, double x0, double x1)
{
  if ((b->has_rect || b->has_path) && !same_colour(c, b->colour))
    batch_flush(b);
  b->colour = c;
  if (b->has_rect && x0 <= b->x1 + 0.5) {
    b->x1 = MAX(b->x1, x1);
    return;
  }
  if (b->has_rect) {
    cairo_rectangle(b->cr, b->x0, b->y, b->x1 - b->x0, b->h);
    b->has_path = true;
  }
  b->x0 = x0;
  b->x1 = x1;
  b->has_rect = true;
}

static void draw_row(cairo_t *cr, const ts_timeline_view *v, const _ts_palette *pal, int t, int d,
                     double y, uint64_t from, uint64_t to, GArray *buf)
{
  const tsp_session *s = tsp_lod_session(v->lod);
  g_array_set_size(buf, 0);
  tsp_lod_query(v->lod, t, d, from, to, v->ns_per_px, buf);
  const tsp_lod_span *sp = (const tsp_lod_span *)(void *)buf->data;
  double h = TS_TIMELINE_ROW - 2;
  rect_batch batch = { .cr = cr, .y = y + 1, .h = h };
  for (guint i = 0; i < buf->len; i++) {
    double x0 = ts_timeline_x_of(v, (double)sp[i].start_ns);
    double x1 = ts_timeline_x_of(v, (double)sp[i].end_ns);
    x0 = MAX(x0, TS_TIMELINE_GUTTER - 1);
    x1 = MIN(x1, (double)v->width + 1);
    x1 = MAX(x1, x0 + 1);
    _ts_rgba c = span_colour(pal, s, sp[i].event, sp[i].op);
    if (sp[i].count > 1)
      c.a = 0.35 + 0.65 * round(4 * sp[i].busy) / 4; /* five steps: like runs batch */
    batch_add(&batch, c, x0, x1);
  }
  batch_flush(&batch);
  /* outlines and labels over the fills, for the spans drawn one by one */
  for (guint i = 0; i < buf->len; i++) {
    const tsp_event *e = sp[i].event;
    double x0 = MAX(ts_timeline_x_of(v, (double)sp[i].start_ns), TS_TIMELINE_GUTTER - 1);
    double x1 = MIN(ts_timeline_x_of(v, (double)sp[i].end_ns), (double)v->width + 1);
    double w = MAX(x1 - x0, 1.0);
    if (sp[i].count != 1 || (w < LABEL_MIN_PX && !v->node))
      continue;
    if (v->node && e->kind != TSP_EVENT_PHASE && (e->node == v->node || e->traced == v->node)) {
      _ts_set_source(cr, pal->accent);
      cairo_set_line_width(cr, 2);
      cairo_rectangle(cr, x0 + 1, y + 2, MAX(w - 2, 1), h - 2);
      cairo_stroke(cr);
    }
    if (w >= LABEL_MIN_PX) {
      _ts_set_source(cr, _ts_text_on(pal, span_colour(pal, s, e, sp[i].op)));
      char label[128];
      show_text_in(cr, span_name(s, e, w >= 140, label), x0 + 4, y + h - 3, w - 8);
    }
  }
}

/* Arrows from a selected call to the ops it ran at the top of its run. */
static void draw_flows(cairo_t *cr, const ts_timeline_view *v, const _ts_palette *pal, GArray *buf)
{
  const ts_timeline_mark *m = &v->selected;
  if (!m->event || m->event->kind != TSP_EVENT_CALL || m->depth < 0 ||
      m->depth + 1 >= tsp_lod_n_depths(v->lod, m->track))
    return;
  g_array_set_size(buf, 0);
  tsp_lod_query(v->lod, m->track, m->depth + 1, m->event->start_ns, m->event->end_ns,
                v->ns_per_px * 4, buf); /* one arrow every few pixels at most */
  double cx = ts_timeline_x_of(v, (double)m->event->start_ns) + 3;
  double cy = ts_timeline_row_y(v, m->track, m->depth) + TS_TIMELINE_ROW - 2;
  double oy = ts_timeline_row_y(v, m->track, m->depth + 1) + 2;
  _ts_set_source(cr, pal->hover);
  cairo_set_line_width(cr, 1.5);
  const tsp_lod_span *sp = (const tsp_lod_span *)(void *)buf->data;
  for (guint i = 0; i < buf->len && i < MAX_FLOWS; i++) {
    double ox = ts_timeline_x_of(v, (double)sp[i].start_ns) + 1;
    if (ox < TS_TIMELINE_GUTTER || ox > v->width)
      continue;
    cairo_move_to(cr, cx, cy);
    cairo_curve_to(cr, cx, cy + 8, ox, oy - 10, ox, oy);
    cairo_stroke(cr);
    cairo_move_to(cr, ox, oy);
    cairo_rel_line_to(cr, -3, -5);
    cairo_rel_line_to(cr, 6, 0);
    cairo_close_path(cr);
    cairo_fill(cr);
  }
}

/* Does span e stand at the other end of a launch link from sel: sel an
 * op and e a device span it launched, or the other way round? */
static bool launch_pair(const tsp_event *sel, const tsp_event *e)
{
  bool pair = (sel->kind == TSP_EVENT_OP && e->kind == TSP_EVENT_DEVICE) ||
              (sel->kind == TSP_EVENT_DEVICE && e->kind == TSP_EVENT_OP);
  return pair && e->run_id == sel->run_id && e->seq == sel->seq;
}

int ts_timeline_launch_links(const ts_timeline_view *v, GArray *out)
{
  const ts_timeline_mark *m = &v->selected;
  const tsp_event *sel = m->event;
  if (!sel || m->depth < 0 || !sel->run_id || (sel->kind != TSP_EVENT_OP && sel->kind != TSP_EVENT_DEVICE))
    return 0;
  /* device work starts after its launch: an op's from its start on, a
   * device span's op up to its start (latest first), in view; the spans
   * themselves, not the view's summaries (a replayed graph's ops are
   * instants at one time) */
  bool op_selected = sel->kind == TSP_EVENT_OP;
  double from = MAX(v->start_ns, 0), to = v->start_ns + v->ns_per_px * v->width;
  if (op_selected)
    from = MAX(from, (double)sel->start_ns);
  else
    to = MIN(to, (double)sel->start_ns);
  if (to < from)
    return 0;
  double sel_x = ts_timeline_x_of(v, (double)sel->start_ns) + 2;
  double sel_top = ts_timeline_row_y(v, m->track, m->depth);
  const tsp_session *s = tsp_lod_session(v->lod);
  GPtrArray *spans = g_ptr_array_new();
  int n = 0;
  for (int t = 0; t < tsp_session_n_threads(s) && n < MAX_FLOWS; t++) {
    for (int d = 0; d < tsp_lod_n_depths(v->lod, t) && n < MAX_FLOWS; d++) {
      g_ptr_array_set_size(spans, 0);
      tsp_lod_spans(v->lod, t, d, (uint64_t)from, (uint64_t)to, !op_selected, LINK_SCAN, spans);
      for (guint i = 0; i < spans->len && n < MAX_FLOWS; i++) {
        const tsp_event *e = spans->pdata[i];
        if (!launch_pair(sel, e))
          continue;
        double x = ts_timeline_x_of(v, (double)e->start_ns) + 2, top = ts_timeline_row_y(v, t, d);
        ts_timeline_link l = {
          .op = op_selected ? sel : e, .device = op_selected ? e : sel,
          .x0 = op_selected ? sel_x : x, .y0 = (op_selected ? sel_top : top) + TS_TIMELINE_ROW - 2,
          .x1 = op_selected ? x : sel_x, .y1 = (op_selected ? top : sel_top) + 2,
        };
        g_array_append_val(out, l);
        n++;
      }
    }
  }
  g_ptr_array_unref(spans);
  return n;
}

/* The launch links of the selected span, as the flows are drawn. */
static void draw_launch_links(cairo_t *cr, const ts_timeline_view *v, const _ts_palette *pal)
{
  GArray *links = g_array_new(FALSE, FALSE, sizeof(ts_timeline_link));
  ts_timeline_launch_links(v, links);
  _ts_set_source(cr, pal->accent);
  cairo_set_line_width(cr, 1.5);
  for (guint i = 0; i < links->len; i++) {
    const ts_timeline_link *l = &g_array_index(links, ts_timeline_link, i);
    double bend = (l->y1 - l->y0) / 3;
    cairo_move_to(cr, l->x0, l->y0);
    cairo_curve_to(cr, l->x0, l->y0 + bend, l->x1, l->y1 - bend, l->x1, l->y1);
    cairo_stroke(cr);
    double dir = l->y1 >= l->y0 ? -1 : 1; /* the head points along the link */
    cairo_move_to(cr, l->x1, l->y1);
    cairo_rel_line_to(cr, -3, 5 * dir);
    cairo_rel_line_to(cr, 6, 0);
    cairo_close_path(cr);
    cairo_fill(cr);
  }
  g_array_unref(links);
}

static void draw_traces(cairo_t *cr, const ts_timeline_view *v, const _ts_palette *pal, int t,
                        double y)
{
  int n;
  const tsp_event *const *traces = tsp_lod_traces(v->lod, t, &n);
  _ts_rgba red = _ts_op_colour(pal, TS_OP_WHILE);
  red = _ts_mix(red, pal->text, 0.35);
  double last_x = -10;
  for (int i = 0; i < n; i++) {
    double x0 = ts_timeline_x_of(v, (double)traces[i]->start_ns);
    double x1 = ts_timeline_x_of(v, (double)traces[i]->end_ns);
    if (x1 < TS_TIMELINE_GUTTER || x0 > v->width || x0 - last_x < 2)
      continue;
    last_x = x0;
    /* the tracing time as a band, a flag at its start */
    _ts_rgba band = red;
    band.a = 0.35;
    _ts_set_source(cr, band);
    cairo_rectangle(cr, MAX(x0, TS_TIMELINE_GUTTER), y + TS_TIMELINE_HEADER - 4,
                    MAX(x1 - MAX(x0, TS_TIMELINE_GUTTER), 1), 3);
    cairo_fill(cr);
    _ts_set_source(cr, red);
    cairo_move_to(cr, x0, y + TS_TIMELINE_HEADER - 1);
    cairo_line_to(cr, x0, y + 2);
    cairo_line_to(cr, x0 + 8, y + 5);
    cairo_line_to(cr, x0, y + 8);
    cairo_close_path(cr);
    cairo_fill(cr);
    if (v->selected.event == traces[i] || v->found.event == traces[i] || v->hovered.event == traces[i]) {
      _ts_set_source(cr, pal->accent);
      cairo_arc(cr, x0 + 2, y + 5, 7, 0, 2 * G_PI);
      cairo_set_line_width(cr, 2);
      cairo_stroke(cr);
    }
  }
}

static void draw_tracks(cairo_t *cr, const ts_timeline_view *v, const _ts_palette *pal, double bottom)
{
  const tsp_session *s = tsp_lod_session(v->lod);
  double t_from = MAX(ts_timeline_time_of(v, TS_TIMELINE_GUTTER), 0);
  double t_to = MAX(ts_timeline_time_of(v, v->width), 0);
  uint64_t from = (uint64_t)t_from, to = (uint64_t)ceil(t_to) + 1;
  GArray *buf = g_array_new(FALSE, FALSE, sizeof(tsp_lod_span));
  cairo_save(cr);
  cairo_rectangle(cr, 0, TS_TIMELINE_RULER, v->width, bottom - TS_TIMELINE_RULER);
  cairo_clip(cr);
  double y = TS_TIMELINE_RULER - v->scroll_y;
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    double h = track_height(v->lod, t);
    if (y + h >= TS_TIMELINE_RULER && y < bottom) {
      _ts_set_source(cr, pal->header);
      cairo_rectangle(cr, 0, y, v->width, TS_TIMELINE_HEADER);
      cairo_fill(cr);
      _ts_set_source(cr, pal->text);
      cairo_set_font_size(cr, 11);
      show_text_in(cr, tsp_session_thread(s, t)->name, 6, y + TS_TIMELINE_HEADER - 4,
                   TS_TIMELINE_GUTTER - 10);
      cairo_save(cr);
      cairo_rectangle(cr, TS_TIMELINE_GUTTER, y, v->width - TS_TIMELINE_GUTTER, h);
      cairo_clip(cr);
      for (int d = 0; d < tsp_lod_n_depths(v->lod, t); d++) {
        double ry = y + TS_TIMELINE_HEADER + d * TS_TIMELINE_ROW;
        if (ry + TS_TIMELINE_ROW >= TS_TIMELINE_RULER && ry < bottom)
          draw_row(cr, v, pal, t, d, ry, from, to, buf);
      }
      draw_traces(cr, v, pal, t, y);
      cairo_restore(cr);
      _ts_set_source(cr, pal->container_stroke);
      cairo_set_line_width(cr, 1);
      cairo_move_to(cr, 0, floor(y + h) - 0.5);
      cairo_line_to(cr, v->width, floor(y + h) - 0.5);
      cairo_stroke(cr);
    }
    y += h;
  }
  cairo_rectangle(cr, TS_TIMELINE_GUTTER, TS_TIMELINE_RULER, v->width - TS_TIMELINE_GUTTER,
                  bottom - TS_TIMELINE_RULER);
  cairo_clip(cr);
  draw_flows(cr, v, pal, buf);
  draw_launch_links(cr, v, pal);
  outline(cr, v, &v->found, pal->accent, 2.5);
  outline(cr, v, &v->hovered, pal->hover, 1.5);
  outline(cr, v, &v->selected, pal->text, 2);
  cairo_restore(cr);
  g_array_unref(buf);
}

/* ---- memory -------------------------------------------------------------------------------- */

/* What a memory series counts, as its row says it. */
static const char *const memory_kind_label[TS_MEMORY_KIND_COUNT] = {
  [TS_MEMORY_TENSORS] = "tensors",
  [TS_MEMORY_ARENA] = "arena",
};

/* "peak 1.2 MiB" on the graph where the series first reaches it: a tick
 * at the level, the text beside it (left of it near the right edge). */
static void draw_memory_peak(cairo_t *cr, const ts_timeline_view *v, const _ts_palette *pal,
                             int series, double top, double scale, double base)
{
  int64_t peak = tsp_lod_memory_peak(v->lod, series);
  double x = ts_timeline_x_of(v, (double)tsp_lod_memory_peak_ns(v->lod, series));
  if (peak <= 0 || x < TS_TIMELINE_GUTTER || x > v->width)
    return;
  double y = base - (double)peak * scale;
  g_autofree char *size = g_format_size_full((guint64)peak, G_FORMAT_SIZE_IEC_UNITS);
  g_autofree char *text = g_strdup_printf("peak %s", size);
  cairo_text_extents_t ext;
  cairo_set_font_size(cr, 10);
  cairo_text_extents(cr, text, &ext);
  _ts_set_source(cr, pal->accent);
  cairo_arc(cr, x, y, 2.5, 0, 2 * G_PI);
  cairo_fill(cr);
  double tx = x + 5 + ext.x_advance <= v->width ? x + 5 : x - 5 - ext.x_advance;
  _ts_set_source(cr, pal->text);
  cairo_move_to(cr, MAX(tx, TS_TIMELINE_GUTTER + 2), MAX(y + 4, top + 10));
  cairo_show_text(cr, text);
}

/* One row per series: its name and peak in the gutter, live bytes as a
 * step graph scaled to the peak. */
static void draw_memory(cairo_t *cr, const ts_timeline_view *v, const _ts_palette *pal, double top)
{
  const tsp_session *s = tsp_lod_session(v->lod);
  int n = tsp_lod_n_memory(v->lod);
  if (!n)
    return;
  double h = TS_TIMELINE_MEMORY;
  double t_from = MAX(ts_timeline_time_of(v, TS_TIMELINE_GUTTER), 0);
  double t_to = MAX(ts_timeline_time_of(v, v->width), 0);
  GArray *steps = g_array_new(FALSE, FALSE, sizeof(tsp_lod_level));
  _ts_set_source(cr, pal->header);
  cairo_rectangle(cr, 0, top, v->width, ts_timeline_memory_height(v->lod));
  cairo_fill(cr);
  for (int i = 0; i < n; i++) {
    double y0 = top + 4 + i * h, base = y0 + h - 2;
    double peak = (double)MAX(tsp_lod_memory_peak(v->lod, i), 1);
    const char *device = tsp_session_device(s, tsp_lod_memory_device(v->lod, i));
    g_autofree char *peak_text = g_format_size_full((guint64)peak, G_FORMAT_SIZE_IEC_UNITS);
    g_autofree char *label = g_strdup_printf("%s %s", *device ? device : "memory",
                                             memory_kind_label[tsp_lod_memory_kind(v->lod, i)]);
    _ts_set_source(cr, pal->text);
    cairo_set_font_size(cr, 11);
    show_text_in(cr, label, 6, y0 + 12, TS_TIMELINE_GUTTER - 10);
    _ts_set_source(cr, pal->text_muted);
    g_autofree char *peak_label = g_strdup_printf("peak %s", peak_text);
    show_text_in(cr, peak_label, 6, y0 + 26, TS_TIMELINE_GUTTER - 10);
    g_array_set_size(steps, 0);
    tsp_lod_memory_query(v->lod, i, (uint64_t)t_from, (uint64_t)ceil(t_to) + 1, v->ns_per_px, steps);
    if (!steps->len)
      continue;
    cairo_save(cr);
    cairo_rectangle(cr, TS_TIMELINE_GUTTER, y0, v->width - TS_TIMELINE_GUTTER, h);
    cairo_clip(cr);
    const tsp_lod_level *st = (const tsp_lod_level *)(void *)steps->data;
    double scale = (h - 4) / peak;
    cairo_move_to(cr, MAX(ts_timeline_x_of(v, (double)st[0].time_ns), TS_TIMELINE_GUTTER), base);
    for (guint k = 0; k < steps->len; k++) {
      double x = MAX(ts_timeline_x_of(v, (double)st[k].time_ns), TS_TIMELINE_GUTTER);
      double next = k + 1 < steps->len ? ts_timeline_x_of(v, (double)st[k + 1].time_ns) : v->width;
      /* the pixel's highest level, then the level it ends on */
      cairo_line_to(cr, x, base - (double)st[k].max_bytes * scale);
      cairo_line_to(cr, MIN(x + 1, next), base - (double)st[k].max_bytes * scale);
      cairo_line_to(cr, MIN(x + 1, next), base - (double)st[k].live_bytes * scale);
      cairo_line_to(cr, next, base - (double)st[k].live_bytes * scale);
    }
    cairo_line_to(cr, v->width, base);
    cairo_close_path(cr);
    _ts_rgba fill = pal->accent_soft;
    fill.a = 0.55;
    _ts_set_source(cr, fill);
    cairo_fill_preserve(cr);
    _ts_set_source(cr, pal->accent);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
    draw_memory_peak(cr, v, pal, i, y0, scale, base);
    cairo_restore(cr);
  }
  g_array_unref(steps);
}

/* ---- ruler and range ------------------------------------------------------------------------- */

/* A tick's time in the unit of the step, whole: deep in a long session
 * "6000123 µs", not six ticks all reading "6 s". */
static char *tick_label(double t, double step)
{
  static const struct {
    double scale;
    const char *unit;
  } units[] = { { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "µs" }, { 1, "ns" } };
  size_t i = 0;
  while (i + 1 < G_N_ELEMENTS(units) && step < units[i].scale)
    i++;
  return g_strdup_printf("%.0f %s", t / units[i].scale + 0.0, units[i].unit);
}

static double nice_step(double min_ns)
{
  double p = pow(10, floor(log10(MAX(min_ns, 1e-3))));
  for (int k = 0; k < 4; k++) {
    static const double m[] = { 1, 2, 5, 10 };
    if (m[k] * p >= min_ns)
      return m[k] * p;
  }
  return 10 * p;
}

static void draw_ruler(cairo_t *cr, const ts_timeline_view *v, const _ts_palette *pal, double bottom)
{
  uint64_t origin = 0, end = 0;
  tsp_lod_range(v->lod, &origin, &end);
  _ts_set_source(cr, pal->legend_back);
  cairo_rectangle(cr, 0, 0, v->width, TS_TIMELINE_RULER);
  cairo_fill(cr);
  double step = nice_step(100 * v->ns_per_px);
  double t0 = ts_timeline_time_of(v, TS_TIMELINE_GUTTER) - (double)origin;
  double first = ceil(t0 / step) * step;
  cairo_set_font_size(cr, 11);
  cairo_set_line_width(cr, 1);
  for (double t = first; ; t += step) {
    double x = floor(ts_timeline_x_of(v, t + (double)origin)) + 0.5;
    if (x > v->width)
      break;
    _ts_set_source(cr, pal->edge_control);
    cairo_move_to(cr, x, TS_TIMELINE_RULER - 8);
    cairo_line_to(cr, x, bottom);
    cairo_stroke(cr);
    g_autofree char *label = tick_label(fabs(t) < step / 2 ? 0 : t, step);
    cairo_text_extents_t ext;
    cairo_text_extents(cr, label, &ext);
    _ts_set_source(cr, pal->text_muted);
    if (x + 3 + ext.x_advance <= v->width - 2) /* whole or not at all: "3500 µs" cut would read "35" */
      show_text_in(cr, label, x + 3, TS_TIMELINE_RULER - 10, 90);
    /* minor ticks */
    _ts_set_source(cr, pal->edge_control);
    for (int k = 1; k < 5; k++) {
      double mx = floor(ts_timeline_x_of(v, t + k * step / 5 + (double)origin)) + 0.5;
      cairo_move_to(cr, mx, TS_TIMELINE_RULER - 4);
      cairo_line_to(cr, mx, TS_TIMELINE_RULER);
    }
    cairo_stroke(cr);
  }
  _ts_set_source(cr, pal->container_stroke);
  cairo_move_to(cr, 0, TS_TIMELINE_RULER - 0.5);
  cairo_line_to(cr, v->width, TS_TIMELINE_RULER - 0.5);
  cairo_stroke(cr);
}

static void draw_range(cairo_t *cr, const ts_timeline_view *v, const _ts_palette *pal)
{
  if (!v->has_range)
    return;
  double x0 = MAX(ts_timeline_x_of(v, v->range_from_ns), TS_TIMELINE_GUTTER);
  double x1 = MIN(ts_timeline_x_of(v, v->range_to_ns), v->width);
  if (x1 < x0)
    return;
  _ts_rgba shade = pal->hover;
  shade.a = 0.15;
  _ts_set_source(cr, shade);
  cairo_rectangle(cr, x0, 0, x1 - x0, v->height);
  cairo_fill(cr);
  _ts_set_source(cr, pal->hover);
  cairo_set_line_width(cr, 1);
  cairo_move_to(cr, floor(x0) + 0.5, 0);
  cairo_line_to(cr, floor(x0) + 0.5, v->height);
  cairo_move_to(cr, floor(x1) + 0.5, 0);
  cairo_line_to(cr, floor(x1) + 0.5, v->height);
  cairo_stroke(cr);
  /* the duration, in a tag on the ruler */
  g_autofree char *d = ts_timeline_format_ns(v->range_to_ns - v->range_from_ns);
  double w = CHAR_PX * (double)g_utf8_strlen(d, -1) + 10;
  double cx = CLAMP((x0 + x1) / 2 - w / 2, TS_TIMELINE_GUTTER, MAX(v->width - w, TS_TIMELINE_GUTTER));
  _ts_set_source(cr, pal->hover);
  cairo_rectangle(cr, cx, 2, w, TS_TIMELINE_RULER - 6);
  cairo_fill(cr);
  _ts_set_source(cr, _ts_text_on(pal, pal->hover));
  show_text_in(cr, d, cx + 5, TS_TIMELINE_RULER - 9, w);
}

void ts_timeline_render(cairo_t *cr, const ts_timeline_view *v)
{
  const _ts_palette *pal = _ts_palette_get(v->dark);
  cairo_save(cr);
  _ts_set_source(cr, pal->background);
  cairo_rectangle(cr, 0, 0, v->width, v->height);
  cairo_fill(cr);
  cairo_select_font_face(cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  if (!v->lod || v->ns_per_px <= 0) {
    cairo_set_font_size(cr, 13);
    _ts_set_source(cr, pal->text_muted);
    cairo_move_to(cr, 20, 40);
    cairo_show_text(cr, "No recording");
    cairo_restore(cr);
    return;
  }
  double bottom = v->height - memory_height(v);
  draw_ruler(cr, v, pal, bottom);
  draw_tracks(cr, v, pal, bottom);
  draw_memory(cr, v, pal, bottom);
  draw_range(cr, v, pal);
  cairo_restore(cr);
}

/* ---- hit testing --------------------------------------------------------------------------- */

bool ts_timeline_span_at(const ts_timeline_view *v, double x, double y, tsp_lod_span *out)
{
  int t, d;
  if (x < TS_TIMELINE_GUTTER || !ts_timeline_row_at(v, y, &t, &d) || d < 0)
    return false;
  double at = ts_timeline_time_of(v, x), slop = 2 * v->ns_per_px;
  GArray *buf = g_array_new(FALSE, FALSE, sizeof(tsp_lod_span));
  tsp_lod_query(v->lod, t, d, (uint64_t)MAX(at - slop, 0), (uint64_t)(at + slop) + 1, v->ns_per_px, buf);
  /* the one under x, else the nearest within the slop */
  double best = slop + 1;
  bool found = false;
  for (guint i = 0; i < buf->len; i++) {
    const tsp_lod_span *sp = &g_array_index(buf, tsp_lod_span, i);
    double dist = at < (double)sp->start_ns ? (double)sp->start_ns - at
                  : at > (double)sp->end_ns ? at - (double)sp->end_ns : 0;
    if (dist < best) {
      best = dist;
      *out = *sp;
      found = true;
    }
  }
  g_array_unref(buf);
  return found;
}

const tsp_event *ts_timeline_trace_at(const ts_timeline_view *v, double x, double y)
{
  int t, d;
  if (x < TS_TIMELINE_GUTTER || !ts_timeline_row_at(v, y, &t, &d) || d >= 0)
    return NULL;
  int n;
  const tsp_event *const *traces = tsp_lod_traces(v->lod, t, &n);
  for (int i = 0; i < n; i++) {
    double x0 = ts_timeline_x_of(v, (double)traces[i]->start_ns);
    double x1 = ts_timeline_x_of(v, (double)traces[i]->end_ns);
    if (x >= x0 - 3 && x <= MAX(x1, x0 + 9))
      return traces[i];
  }
  return NULL;
}
