/* ts-graph-render-shapes.c — the drawing of one thing: op ellipses, group
 * boxes, series stacks, containers with their header, dots, outlines;
 * edges with arrowheads and labels; and the cheap forms of both for when
 * they are a few pixels big. */
#include "ts-graph-render-private.h"

#include <math.h>

/* ---- shapes ------------------------------------------------------------------------------- */

static void rounded_rect(cairo_t *cr, double x, double y, double w, double h, double radius)
{
  radius = MIN(radius, MIN(w, h) / 2);
  cairo_new_sub_path(cr);
  cairo_arc(cr, x + w - radius, y + radius, radius, -G_PI / 2, 0);
  cairo_arc(cr, x + w - radius, y + h - radius, radius, 0, G_PI / 2);
  cairo_arc(cr, x + radius, y + h - radius, radius, G_PI / 2, G_PI);
  cairo_arc(cr, x + radius, y + radius, radius, G_PI, 3 * G_PI / 2);
  cairo_close_path(cr);
}

static void ellipse(cairo_t *cr, double x, double y, double w, double h)
{
  cairo_save(cr);
  cairo_translate(cr, x + w / 2, y + h / 2);
  cairo_scale(cr, w / 2, h / 2);
  cairo_new_sub_path(cr);
  cairo_arc(cr, 0, 0, 1, 0, 2 * G_PI);
  cairo_restore(cr);
}

/* The series' stack: the front card, then the two behind it. */
#define STACK 2.0

static void shape_path(cairo_t *cr, const ts_view_box *b)
{
  cairo_new_path(cr);
  switch (b->shape) {
  case TS_VIEW_SHAPE_ELLIPSE:
    ellipse(cr, b->x, b->y, b->width, b->height);
    break;
  case TS_VIEW_SHAPE_DOT:
    cairo_new_sub_path(cr);
    cairo_arc(cr, b->x + b->width / 2, b->y + b->height / 2, b->width / 2, 0, 2 * G_PI);
    break;
  case TS_VIEW_SHAPE_SERIES:
    rounded_rect(cr, b->x, b->y + 2 * STACK, b->width - 2 * STACK, b->height - 2 * STACK, 4);
    break;
  default:
    rounded_rect(cr, b->x, b->y, b->width, b->height, 5);
    break;
  }
}

static void set_fill(cairo_t *cr, const _ts_fill *f, const ts_view_box *b)
{
  if (f->n == 1) {
    _ts_set_source(cr, f->colour[0]);
    return;
  }
  /* proportions side by side, hard edges */
  cairo_pattern_t *grad = cairo_pattern_create_linear(b->x, 0, b->x + b->width, 0);
  double at = 0;
  for (int k = 0; k < f->n; k++) {
    const _ts_rgba *c = &f->colour[k];
    cairo_pattern_add_color_stop_rgba(grad, at, c->r, c->g, c->b, c->a);
    at += f->share[k];
    cairo_pattern_add_color_stop_rgba(grad, at, c->r, c->g, c->b, c->a);
  }
  cairo_set_source(cr, grad);
  cairo_pattern_destroy(grad);
}

static _ts_rgba main_colour(const _ts_fill *f)
{
  int best = 0;
  for (int k = 1; k < f->n; k++)
    if (f->share[k] > f->share[best])
      best = k;
  return f->colour[best];
}

/* Two centred lines in the rectangle (line2 may be NULL). */
static int draw_lines(ts_render *r, cairo_t *cr, const char *line1, const char *line2, double x,
                      double y, double w, double h, _ts_rgba colour)
{
  const char *lines[2] = { line1, line2 };
  int n = line2 ? 2 : 1;
  double lh = r->opts.line_height, top = y + (h - n * lh) / 2;
  for (int k = 0; k < n; k++) {
    if (!lines[k] || !*lines[k])
      continue;
    const _ts_label *label = _ts_text_get(r->text, TS_FONT_LABEL, lines[k]);
    _ts_rgba c = colour;
    if (k == 1)
      c.a *= 0.72;
    _ts_set_source(cr, c);
    _ts_text_draw(r->text, cr, TS_FONT_LABEL, lines[k], x + (w - label->width) / 2,
                  top + k * lh + (lh - label->height) / 2);
  }
  return n;
}

static int box_depth(const ts_view_layout *l, const ts_view_box *b)
{
  int depth = 0;
  for (int p = b->parent; p >= 0; p = ts_view_layout_box(l, p)->parent)
    depth++;
  return depth;
}

void _ts_draw_container(ts_render *r, cairo_t *cr, const ts_view_box *b, bool tiny, ts_render_stats *stats)
{
  const _ts_palette *pal = _ts_palette_get(r->dark);
  stats->boxes++;
  cairo_new_path(cr);
  if (tiny) { /* a frame of sub-pixel detail: no header, no curves */
    cairo_rectangle(cr, b->x, b->y, b->width, b->height);
    _ts_set_source(cr, _ts_container_fill(pal, box_depth(r->layout, b)));
    cairo_fill(cr);
    return;
  }
  rounded_rect(cr, b->x, b->y, b->width, b->height, 6);
  _ts_set_source(cr, _ts_container_fill(pal, box_depth(r->layout, b)));
  cairo_fill_preserve(cr);
  cairo_save(cr);
  cairo_clip_preserve(cr);
  cairo_new_path(cr);
  cairo_rectangle(cr, b->x, b->y, b->width, r->opts.header_height);
  _ts_set_source(cr, pal->header);
  cairo_fill(cr);
  cairo_restore(cr);
  _ts_set_source(cr, pal->container_stroke);
  cairo_set_line_width(cr, 1);
  cairo_stroke(cr);
}

/* A header word on the header's own colours, hiding what crosses it. */
static void header_text(ts_render *r, cairo_t *cr, const ts_view_box *b, const char *text, double x,
                        _ts_rgba colour)
{
  const _ts_palette *pal = _ts_palette_get(r->dark);
  const _ts_label *label = _ts_text_get(r->text, TS_FONT_LABEL, text);
  double ty = b->y + (r->opts.header_height - label->height) / 2;
  cairo_new_path(cr);
  cairo_rectangle(cr, x - 2, ty, label->width + 4, label->height);
  _ts_set_source(cr, _ts_container_fill(pal, box_depth(r->layout, b)));
  cairo_fill_preserve(cr);
  _ts_set_source(cr, pal->header);
  cairo_fill(cr);
  _ts_set_source(cr, colour);
  _ts_text_draw(r->text, cr, TS_FONT_LABEL, text, x, ty);
}

void _ts_draw_container_header(ts_render *r, cairo_t *cr, const ts_view_box *b, ts_render_stats *stats)
{
  const _ts_palette *pal = _ts_palette_get(r->dark);
  header_text(r, cr, b, b->line1, b->x + r->opts.pad, pal->text);
  stats->labels++;
  if (b->line2) {
    const _ts_label *count = _ts_text_get(r->text, TS_FONT_LABEL, b->line2);
    header_text(r, cr, b, b->line2, b->x + b->width - r->opts.pad - count->width, pal->text_muted);
    stats->labels++;
  }
}

void _ts_draw_shape(ts_render *r, cairo_t *cr, const ts_view_box *b, bool detailed,
                       ts_render_stats *stats)
{
  const _ts_palette *pal = _ts_palette_get(r->dark);
  _ts_fill fill;
  _ts_colours_fill(r->colours, pal, b, &fill);
  cairo_set_line_width(cr, b->shape == TS_VIEW_SHAPE_DOT ? 0.75 : 1);
  if (b->shape == TS_VIEW_SHAPE_SERIES) {
    /* the cards behind, back to front */
    for (int k = 2; k >= 1; k--) {
      cairo_new_path(cr);
      rounded_rect(cr, b->x + k * STACK, b->y + (2 - k) * STACK, b->width - 2 * STACK,
                   b->height - 2 * STACK, 4);
      set_fill(cr, &fill, b);
      cairo_fill_preserve(cr);
      _ts_set_source(cr, pal->stroke);
      cairo_stroke(cr);
    }
  }
  shape_path(cr, b);
  set_fill(cr, &fill, b);
  cairo_fill_preserve(cr);
  _ts_set_source(cr, pal->stroke);
  cairo_stroke(cr);
  stats->boxes++;
  if (!detailed || b->shape == TS_VIEW_SHAPE_DOT)
    return;
  double w = b->width, h = b->height, y = b->y;
  if (b->shape == TS_VIEW_SHAPE_SERIES) {
    w -= 2 * STACK;
    h -= 2 * STACK;
    y += 2 * STACK;
  }
  stats->labels += draw_lines(r, cr, b->line1, b->line2, b->x, y, w, h, _ts_text_on(pal, main_colour(&fill)));
}

/* An outline around a box: the selection, its neighbours, the hover. */
void _ts_draw_outline(cairo_t *cr, const ts_view_box *b, _ts_rgba colour, double width)
{
  if (b->shape == TS_VIEW_SHAPE_CONTAINER) {
    cairo_new_path(cr);
    rounded_rect(cr, b->x, b->y, b->width, b->height, 6);
  } else
    shape_path(cr, b);
  _ts_set_source(cr, colour);
  cairo_set_line_width(cr, width);
  cairo_stroke(cr);
}

/* ---- edges ------------------------------------------------------------------------------------ */

/* Unit direction at the end of the path; false if it has no length. */
static bool end_direction(const ts_view_path *p, double *dx, double *dy)
{
  const ts_view_point *end = &p->points[p->n_points - 1];
  for (int i = p->n_points - 2; i >= 0; i--) {
    double x = end->x - p->points[i].x, y = end->y - p->points[i].y, len = hypot(x, y);
    if (len > 1e-6) {
      *dx = x / len;
      *dy = y / len;
      return true;
    }
  }
  return false;
}

static double arrow_length(double width)
{
  return 5 + 1.6 * width;
}

/* The path's curve; with an arrowhead, it stops where the head begins. */
static void edge_curve(cairo_t *cr, const ts_view_path *p, bool arrow)
{
  const ts_view_point *q = p->points;
  int n = p->n_points;
  if (n < 4)
    return;
  double dx, dy, cut = arrow ? arrow_length(p->width) * 0.85 : 0;
  if (!arrow || !end_direction(p, &dx, &dy))
    dx = dy = cut = 0;
  cairo_move_to(cr, q[0].x, q[0].y);
  for (int i = 1; i + 2 < n; i += 3) {
    bool last = i + 3 >= n;
    cairo_curve_to(cr, q[i].x, q[i].y, q[i + 1].x, q[i + 1].y, q[i + 2].x - (last ? dx * cut : 0),
                   q[i + 2].y - (last ? dy * cut : 0));
  }
}

static void draw_arrow(cairo_t *cr, const ts_view_path *p)
{
  double dx, dy;
  if (p->n_points < 4 || !end_direction(p, &dx, &dy))
    return;
  const ts_view_point *tip = &p->points[p->n_points - 1];
  double len = arrow_length(p->width), half = 2.5 + 0.9 * p->width;
  double bx = tip->x - dx * len, by = tip->y - dy * len;
  cairo_move_to(cr, tip->x, tip->y);
  cairo_line_to(cr, bx - dy * half, by + dx * half);
  cairo_line_to(cr, bx + dy * half, by - dx * half);
  cairo_close_path(cr);
  cairo_fill(cr);
}

void _ts_draw_edge(cairo_t *cr, const _ts_palette *pal, const ts_view_path *p, bool marked,
                      bool detailed, double zoom)
{
  _ts_rgba colour = marked ? pal->accent : p->edge.control ? pal->edge_control : pal->edge;
  double width = detailed ? p->width + (marked ? 1 : 0) : MAX(p->width, (marked ? 2.5 : 1) / zoom);
  cairo_new_path(cr);
  edge_curve(cr, p, detailed);
  _ts_set_source(cr, colour);
  cairo_set_line_width(cr, width);
  if (p->edge.control) {
    double dash[2] = { 4 * MAX(1, width / 2), 3 * MAX(1, width / 2) };
    cairo_set_dash(cr, dash, 2, 0);
  }
  cairo_stroke(cr);
  cairo_set_dash(cr, NULL, 0, 0);
  if (detailed)
    draw_arrow(cr, p);
}

void _ts_draw_edge_label(ts_render *r, cairo_t *cr, const _ts_palette *pal, int path, bool marked)
{
  double x, y;
  const _ts_label *label = _ts_edge_label_at(r, path, &x, &y);
  if (!label)
    return;
  cairo_new_path(cr);
  rounded_rect(cr, x - 2, y, label->width + 4, label->height, 3);
  _ts_set_source(cr, pal->edge_label_back);
  cairo_fill(cr);
  _ts_set_source(cr, marked ? pal->accent : pal->text_muted);
  _ts_text_draw(r->text, cr, TS_FONT_SMALL, ts_view_layout_path(r->layout, path)->label, x, y);
}

/* The point at t of a cubic Bezier segment (p[0] .. p[3]). */
static ts_view_point bezier_at(const ts_view_point *p, double t)
{
  double u = 1 - t, a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, d = t * t * t;
  return (ts_view_point){ a * p[0].x + b * p[1].x + c * p[2].x + d * p[3].x,
                          a * p[0].y + b * p[1].y + c * p[2].y + d * p[3].y };
}

void _ts_draw_copy_tag(ts_render *r, cairo_t *cr, const _ts_palette *pal, int path, int category,
                       const char *device)
{
  const ts_view_path *p = ts_view_layout_path(r->layout, path);
  if (p->n_points < 4)
    return;
  g_autofree char *text = g_strdup_printf("copy to %s", device);
  const _ts_label *label = _ts_text_get(r->text, TS_FONT_SMALL, text);
  ts_view_point at = bezier_at(&p->points[p->n_points - 4], 0.6); /* on the last stretch, before the arrow */
  double w = label->width + 8, h = label->height + 2;
  double x = at.x - w - 3; /* left of the edge: its shape label is on the right */
  _ts_rgba fill = _ts_category_colour(pal, category);
  cairo_new_path(cr);
  rounded_rect(cr, x, at.y - h / 2, w, h, h / 2);
  _ts_set_source(cr, fill);
  cairo_fill(cr);
  _ts_set_source(cr, _ts_text_on(pal, fill));
  _ts_text_draw(r->text, cr, TS_FONT_SMALL, text, x + 4, at.y - label->height / 2);
}

/* ---- far away: fewer, simpler strokes and fills ------------------------------------------------ */

/* Below the detail zoom, plain edges go out in a few strokes: one per
 * width (whole px) and kind, each at least a device pixel wide. */
int _ts_draw_edges_coarse(ts_render *r, cairo_t *cr, const _ts_palette *pal, double zoom)
{
  enum { N_WIDTHS = 13 }; /* edge widths run from 0.75 to 12 */
  int drawn = 0;
  for (int control = 0; control < 2; control++)
    for (int w = 0; w < N_WIDTHS; w++) {
      bool any = false;
      cairo_new_path(cr);
      for (guint k = 0; k < r->hit_paths->len; k++) {
        int p = g_array_index(r->hit_paths, int, k);
        const ts_view_path *path = ts_view_layout_path(r->layout, p);
        if (r->path_mark[p] || path->edge.control != control || MIN((int)lround(path->width), N_WIDTHS - 1) != w)
          continue;
        edge_curve(cr, path, false);
        any = true;
        drawn++;
      }
      if (!any)
        continue;
      double width = MAX(w, 1 / zoom);
      _ts_set_source(cr, control ? pal->edge_control : pal->edge);
      cairo_set_line_width(cr, width);
      if (control) {
        double dash[2] = { 4 * width, 3 * width };
        cairo_set_dash(cr, dash, 2, 0);
      }
      cairo_stroke(cr);
      cairo_set_dash(cr, NULL, 0, 0);
    }
  return drawn;
}

static int cmp_u64(const void *a, const void *b)
{
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return (x > y) - (x < y);
}

/* Shapes a few pixels big: rectangles, one fill per colour. */
void _ts_draw_shapes_tiny(ts_render *r, cairo_t *cr, const _ts_palette *pal, ts_render_stats *stats)
{
  GArray *keyed = g_array_sized_new(FALSE, FALSE, sizeof(guint64), r->hit_boxes->len);
  for (guint k = 0; k < r->hit_boxes->len; k++) {
    int i = g_array_index(r->hit_boxes, int, k);
    const ts_view_box *b = ts_view_layout_box(r->layout, i);
    if (b->shape == TS_VIEW_SHAPE_DOT)
      continue; /* smaller than a pixel */
    _ts_fill fill;
    _ts_colours_fill(r->colours, pal, b, &fill);
    _ts_rgba c = main_colour(&fill);
    guint64 key = (guint64)((int)(c.r * 255) << 16 | (int)(c.g * 255) << 8 | (int)(c.b * 255));
    key = key << 32 | (guint64)i;
    g_array_append_val(keyed, key);
  }
  g_array_sort(keyed, cmp_u64);
  for (guint k = 0; k < keyed->len;) {
    guint64 colour = g_array_index(keyed, guint64, k) >> 32;
    cairo_new_path(cr);
    for (; k < keyed->len && g_array_index(keyed, guint64, k) >> 32 == colour; k++) {
      const ts_view_box *b = ts_view_layout_box(r->layout, (int)(g_array_index(keyed, guint64, k) & 0xffffffffu));
      cairo_rectangle(cr, b->x, b->y, b->width, b->height);
      stats->boxes++;
    }
    cairo_set_source_rgb(cr, (double)(colour >> 16 & 0xff) / 255, (double)(colour >> 8 & 0xff) / 255,
                         (double)(colour & 0xff) / 255);
    cairo_fill(cr);
  }
  g_array_free(keyed, TRUE);
}
