/* ts-graph-render-index.c — what a frame must draw, found fast: a uniform
 * grid over the layout's shapes and paths (containers apart, they are
 * few), built once per layout and queried per frame; and the placement of
 * edge labels, once per layout, beside their paths where none covers a
 * shape, a group's title bar or another label. */
#include "ts-graph-render-private.h"

#include <math.h>
#include <string.h>

/* ---- the grid ------------------------------------------------------------------------ */

/* An edge label's background, its text's top-left at (x, y). */
static void label_rect(const _ts_label *label, double x, double y, ts_render_rect *out)
{
  *out = (ts_render_rect){ x - 2, y, label->width + 4, label->height };
}

/* Every path's hull (a Bezier curve stays inside the hull of its control
 * points) and its label, once placed, into path_rect. */
static void measure_paths(ts_render *r)
{
  for (int path = 0; path < r->n_paths; path++) {
    const ts_view_path *p = ts_view_layout_path(r->layout, path);
    double x0 = p->label_at.x, y0 = p->label_at.y, x1 = x0, y1 = y0;
    for (int i = 0; i < p->n_points; i++) {
      x0 = MIN(x0, p->points[i].x);
      y0 = MIN(y0, p->points[i].y);
      x1 = MAX(x1, p->points[i].x);
      y1 = MAX(y1, p->points[i].y);
    }
    double lx, ly;
    const _ts_label *label = _ts_edge_label_at(r, path, &lx, &ly);
    if (label) {
      ts_render_rect rc;
      label_rect(label, lx, ly, &rc);
      x0 = MIN(x0, rc.x);
      y0 = MIN(y0, rc.y);
      x1 = MAX(x1, rc.x + rc.width);
      y1 = MAX(y1, rc.y + rc.height);
    }
    r->path_rect[path] = (ts_render_rect){ x0, y0, x1 - x0, y1 - y0 };
  }
}

void _ts_box_bounds(const ts_view_box *b, ts_render_rect *out)
{
  *out = (ts_render_rect){ b->x, b->y, b->width, b->height };
}

/* The cells a rectangle covers, clamped to the grid. */
static void cell_span(const ts_render *r, const ts_render_rect *rc, int *c0, int *r0, int *c1, int *r1)
{
  *c0 = CLAMP((int)floor(rc->x / r->cell), 0, r->cols - 1);
  *r0 = CLAMP((int)floor(rc->y / r->cell), 0, r->rows - 1);
  *c1 = CLAMP((int)floor((rc->x + rc->width) / r->cell), 0, r->cols - 1);
  *r1 = CLAMP((int)floor((rc->y + rc->height) / r->cell), 0, r->rows - 1);
}

/* Visits every (cell, entry) pair: counts them per cell (fill_at NULL),
 * then files them at fill_at. */
static void grid_pass(ts_render *r, int *fill_at)
{
  int n_entries = r->n_boxes + r->n_paths;
  for (int e = 0; e < n_entries; e++) {
    ts_render_rect rc;
    int entry;
    if (e < r->n_boxes) {
      const ts_view_box *b = ts_view_layout_box(r->layout, e);
      if (b->shape == TS_VIEW_SHAPE_CONTAINER)
        continue;
      _ts_box_bounds(b, &rc);
      entry = e;
    } else {
      int p = e - r->n_boxes;
      rc = r->path_rect[p];
      entry = -(p + 1);
    }
    int c0, r0, c1, r1;
    cell_span(r, &rc, &c0, &r0, &c1, &r1);
    for (int y = r0; y <= r1; y++)
      for (int x = c0; x <= c1; x++) {
        int cell = y * r->cols + x;
        if (fill_at)
          r->entries[fill_at[cell]++] = entry;
        else
          r->cell_start[cell + 1]++;
      }
  }
}

/* Files every shape and path in the cells it covers. */
static void file_entries(ts_render *r)
{
  measure_paths(r);
  int n_cells = r->cols * r->rows;
  g_free(r->cell_start);
  g_free(r->entries);
  r->cell_start = g_new0(int, n_cells + 1);
  grid_pass(r, NULL);
  for (int c = 0; c < n_cells; c++)
    r->cell_start[c + 1] += r->cell_start[c];
  r->entries = g_new(int, MAX(r->cell_start[n_cells], 1));
  int *fill_at = g_memdup2(r->cell_start, sizeof(int) * (gsize)n_cells);
  grid_pass(r, fill_at);
  g_free(fill_at);
}

static void build_grid(ts_render *r)
{
  const ts_view_layout *l = r->layout;
  r->n_boxes = ts_view_layout_n_boxes(l);
  r->n_paths = ts_view_layout_n_paths(l);
  double w = MAX(ts_view_layout_width(l), 1), h = MAX(ts_view_layout_height(l), 1);
  /* about 4,096 cells, none smaller than a few shapes */
  r->cell = MAX(128.0, sqrt(w * h / 4096.0));
  r->cols = MAX(1, (int)ceil(w / r->cell));
  r->rows = MAX(1, (int)ceil(h / r->cell));
  r->path_rect = g_new(ts_render_rect, MAX(r->n_paths, 1));
  file_entries(r);
  for (int i = 0; i < r->n_boxes; i++)
    if (ts_view_layout_box(l, i)->shape == TS_VIEW_SHAPE_CONTAINER)
      g_array_append_val(r->containers, i);
  r->box_stamp = g_new0(guint, MAX(r->n_boxes, 1));
  r->path_stamp = g_new0(guint, MAX(r->n_paths, 1));
  r->box_mark = g_new0(guint8, MAX(r->n_boxes, 1));
  r->path_mark = g_new0(guint8, MAX(r->n_paths, 1));
  r->stamp = 0;
}

bool _ts_rects_intersect(const ts_render_rect *a, const ts_render_rect *b)
{
  return a->x <= b->x + b->width && b->x <= a->x + a->width && a->y <= b->y + b->height &&
         b->y <= a->y + a->height;
}

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* What a frame of `visible` (NULL: all) must draw, in drawing order. */
void _ts_render_query(ts_render *r, const ts_render_rect *visible)
{
  g_array_set_size(r->hit_boxes, 0);
  g_array_set_size(r->hit_paths, 0);
  if (!visible) {
    for (int i = 0; i < r->n_boxes; i++)
      if (ts_view_layout_box(r->layout, i)->shape != TS_VIEW_SHAPE_CONTAINER)
        g_array_append_val(r->hit_boxes, i);
    for (int p = 0; p < r->n_paths; p++)
      g_array_append_val(r->hit_paths, p);
    return;
  }
  ts_render_rect wide = { visible->x - CULL_MARGIN, visible->y - CULL_MARGIN,
                          visible->width + 2 * CULL_MARGIN, visible->height + 2 * CULL_MARGIN };
  if (++r->stamp == 0) { /* wrapped: old stamps could match */
    memset(r->box_stamp, 0, sizeof(guint) * (gsize)MAX(r->n_boxes, 1));
    memset(r->path_stamp, 0, sizeof(guint) * (gsize)MAX(r->n_paths, 1));
    r->stamp = 1;
  }
  int c0, r0, c1, r1;
  cell_span(r, &wide, &c0, &r0, &c1, &r1);
  for (int y = r0; y <= r1; y++)
    for (int x = c0; x <= c1; x++) {
      int cell = y * r->cols + x;
      for (int k = r->cell_start[cell]; k < r->cell_start[cell + 1]; k++) {
        int e = r->entries[k];
        ts_render_rect rc;
        if (e >= 0) {
          if (r->box_stamp[e] == r->stamp)
            continue;
          r->box_stamp[e] = r->stamp;
          _ts_box_bounds(ts_view_layout_box(r->layout, e), &rc);
          if (_ts_rects_intersect(&rc, &wide))
            g_array_append_val(r->hit_boxes, e);
        } else {
          int p = -e - 1;
          if (r->path_stamp[p] == r->stamp)
            continue;
          r->path_stamp[p] = r->stamp;
          rc = r->path_rect[p];
          if (_ts_rects_intersect(&rc, &wide))
            g_array_append_val(r->hit_paths, p);
        }
      }
    }
  g_array_sort(r->hit_boxes, cmp_int);
  g_array_sort(r->hit_paths, cmp_int);
}

void _ts_render_index_drop(ts_render *r)
{
  g_clear_pointer(&r->cell_start, g_free);
  g_clear_pointer(&r->entries, g_free);
  g_clear_pointer(&r->box_stamp, g_free);
  g_clear_pointer(&r->path_stamp, g_free);
  g_clear_pointer(&r->path_rect, g_free);
  g_clear_pointer(&r->box_mark, g_free);
  g_clear_pointer(&r->path_mark, g_free);
  g_clear_pointer(&r->label_shown, g_free);
  g_clear_pointer(&r->label_pos, g_free);
  g_array_set_size(r->containers, 0);
  r->n_boxes = r->n_paths = 0;
}

/* ---- edge labels ------------------------------------------------------------------------ */

/* Points along a path a label may sit beside, besides its middle. */
#define LABEL_ANCHORS 16
/* Between a label and its path. */
#define LABEL_GAP 4.0

typedef struct anchor {
  ts_view_point at;
  bool across;     /* the path runs more across than up or down there */
  double lean;     /* how far it leans off that axis: 0 along it, 1 at 45 degrees */
  double distance; /* from the path's middle */
} anchor;

/* The point at t of the cubic Bezier segment s, and the way it runs there. */
static ts_view_point bezier_at(const ts_view_point *s, double t, bool *across, double *lean)
{
  double u = 1 - t;
  /* the derivative gives the path's direction there */
  double dx = 3 * u * u * (s[1].x - s[0].x) + 6 * u * t * (s[2].x - s[1].x) + 3 * t * t * (s[3].x - s[2].x);
  double dy = 3 * u * u * (s[1].y - s[0].y) + 6 * u * t * (s[2].y - s[1].y) + 3 * t * t * (s[3].y - s[2].y);
  if (hypot(dx, dy) < 1e-9) {
    dx = s[3].x - s[0].x;
    dy = s[3].y - s[0].y;
  }
  *across = fabs(dx) > fabs(dy);
  *lean = *across ? fabs(dy) / fabs(dx) : fabs(dx) / MAX(fabs(dy), 1e-9);
  double a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, d = t * t * t;
  return (ts_view_point){ a * s[0].x + b * s[1].x + c * s[2].x + d * s[3].x,
                          a * s[0].y + b * s[1].y + c * s[2].y + d * s[3].y };
}

static int cmp_anchor(const void *a, const void *b)
{
  double x = ((const anchor *)a)->distance, y = ((const anchor *)b)->distance;
  return (x > y) - (x < y);
}

/* The layout's middle of the path, along the way the path runs there
 * (it is the middle of one of its segments). */
static anchor middle_anchor(const ts_view_path *p)
{
  anchor best = { p->label_at, false, 0, G_MAXDOUBLE };
  for (int s = 0; 3 * s + 3 < p->n_points; s++) {
    bool across;
    double lean;
    ts_view_point q = bezier_at(p->points + 3 * s, 0.5, &across, &lean);
    double d = hypot(q.x - p->label_at.x, q.y - p->label_at.y);
    if (d < best.distance)
      best = (anchor){ p->label_at, across, lean, d };
  }
  best.distance = 0;
  return best;
}

/* More points beside which the label may go, when the middle is taken:
 * the quarter points of every segment, nearest the middle first. */
static int more_anchors(const ts_view_path *p, anchor *out, int max)
{
  int n_segments = (p->n_points - 1) / 3, n = 0;
  anchor *all = g_new(anchor, 3 * MAX(n_segments, 1));
  for (int s = 0; s < n_segments; s++)
    for (int q = 1; q <= 3; q++) {
      anchor *a = &all[n];
      a->at = bezier_at(p->points + 3 * s, q / 4.0, &a->across, &a->lean);
      a->distance = hypot(a->at.x - p->label_at.x, a->at.y - p->label_at.y);
      n += a->distance > 1; /* not the middle again */
    }
  qsort(all, (size_t)n, sizeof *all, cmp_anchor);
  n = MIN(n, max);
  memcpy(out, all, sizeof *all * (gsize)n);
  g_free(all);
  return n;
}

/* Where a label beside the anchor goes (its text's top-left): right or
 * left of a path running up or down, above or below one running across,
 * centred on the anchor; with `clear`, far enough off that a leaning path,
 * straight through the anchor, misses it. */
static ts_view_point label_beside(const anchor *a, const _ts_label *label, double path_width, int side, bool clear)
{
  double w = label->width + 4, h = label->height; /* as label_rect has it */
  double lean = clear ? a->lean : 0;
  if (a->across) {
    double off = path_width / 2 + LABEL_GAP + lean * w / 2;
    return (ts_view_point){ a->at.x - label->width / 2, side == 0 ? a->at.y - off - h : a->at.y + off };
  }
  double off = path_width / 2 + LABEL_GAP + lean * h / 2;
  return (ts_view_point){ side == 0 ? a->at.x + off + 2 : a->at.x - off - w + 2, a->at.y - h / 2 };
}

static bool hits_shape(ts_render *r, const ts_render_rect *rc)
{
  int c0, r0, c1, r1;
  cell_span(r, rc, &c0, &r0, &c1, &r1);
  for (int y = r0; y <= r1; y++)
    for (int x = c0; x <= c1; x++) {
      int cell = y * r->cols + x;
      for (int k = r->cell_start[cell]; k < r->cell_start[cell + 1]; k++) {
        ts_render_rect b;
        if (r->entries[k] < 0)
          continue;
        _ts_box_bounds(ts_view_layout_box(r->layout, r->entries[k]), &b);
        if (_ts_rects_intersect(&b, rc))
          return true;
      }
    }
  return false;
}

/* Whether the segment a-b enters the rectangle (Liang-Barsky). */
static bool segment_meets(ts_view_point a, ts_view_point b, const ts_render_rect *rc)
{
  double t0 = 0, t1 = 1, dx = b.x - a.x, dy = b.y - a.y;
  double p[4] = { -dx, dx, -dy, dy };
  double q[4] = { a.x - rc->x, rc->x + rc->width - a.x, a.y - rc->y, rc->y + rc->height - a.y };
  for (int i = 0; i < 4; i++) {
    if (fabs(p[i]) < 1e-12) {
      if (q[i] < 0)
        return false;
      continue;
    }
    double t = q[i] / p[i];
    if (p[i] < 0)
      t0 = MAX(t0, t);
    else
      t1 = MIN(t1, t);
  }
  return t0 <= t1;
}

/* Whether the drawn path (its stroke's width too) runs through the
 * rectangle; hull: the path's bounds. */
static bool path_meets(const ts_view_path *p, const ts_render_rect *hull, const ts_render_rect *rc)
{
  double half = p->width / 2;
  ts_render_rect grown = { rc->x - half, rc->y - half, rc->width + 2 * half, rc->height + 2 * half };
  if (!_ts_rects_intersect(hull, &grown))
    return false;
  for (int s = 0; 3 * s + 3 < p->n_points; s++) {
    const ts_view_point *q = p->points + 3 * s;
    double x0 = MIN(MIN(q[0].x, q[1].x), MIN(q[2].x, q[3].x)), x1 = MAX(MAX(q[0].x, q[1].x), MAX(q[2].x, q[3].x));
    double y0 = MIN(MIN(q[0].y, q[1].y), MIN(q[2].y, q[3].y)), y1 = MAX(MAX(q[0].y, q[1].y), MAX(q[2].y, q[3].y));
    if (!_ts_rects_intersect(&(ts_render_rect){ x0, y0, x1 - x0, y1 - y0 }, &grown))
      continue; /* the segment stays inside its control points' hull */
    ts_view_point prev = q[0];
    for (int k = 1; k <= 8; k++) {
      bool across;
      double lean;
      ts_view_point next = bezier_at(q, k / 8.0, &across, &lean);
      if (segment_meets(prev, next, &grown))
        return true;
      prev = next;
    }
  }
  return false;
}

/* Whether an edge (the label's own too) runs through the rectangle. */
static bool hits_path(ts_render *r, const ts_render_rect *rc)
{
  int c0, r0, c1, r1;
  cell_span(r, rc, &c0, &r0, &c1, &r1);
  for (int y = r0; y <= r1; y++)
    for (int x = c0; x <= c1; x++) {
      int cell = y * r->cols + x;
      for (int k = r->cell_start[cell]; k < r->cell_start[cell + 1]; k++) {
        int p = -r->entries[k] - 1;
        if (p >= 0 && path_meets(ts_view_layout_path(r->layout, p), &r->path_rect[p], rc))
          return true;
      }
    }
  return false;
}

/* Rectangles labels must keep off besides the shapes, filed per cell. */
typedef struct taken {
  ts_render *r;
  GArray **cells;
} taken;

static void taken_add(taken *t, const ts_render_rect *rc)
{
  int c0, r0, c1, r1;
  cell_span(t->r, rc, &c0, &r0, &c1, &r1);
  for (int cy = r0; cy <= r1; cy++)
    for (int cx = c0; cx <= c1; cx++) {
      GArray **in = &t->cells[cy * t->r->cols + cx];
      if (!*in)
        *in = g_array_new(FALSE, FALSE, sizeof(ts_render_rect));
      g_array_append_val(*in, *rc);
    }
}

static bool taken_hit(const taken *t, const ts_render_rect *rc)
{
  int c0, r0, c1, r1;
  cell_span(t->r, rc, &c0, &r0, &c1, &r1);
  for (int cy = r0; cy <= r1; cy++)
    for (int cx = c0; cx <= c1; cx++) {
      GArray *in = t->cells[cy * t->r->cols + cx];
      for (guint i = 0; in && i < in->len; i++)
        if (_ts_rects_intersect(&g_array_index(in, ts_render_rect, i), rc))
          return true;
    }
  return false;
}

static int cmp_by_width(const void *a, const void *b, void *data)
{
  const ts_view_layout *l = data;
  double wa = ts_view_layout_path(l, *(const int *)a)->width, wb = ts_view_layout_path(l, *(const int *)b)->width;
  if (wa != wb)
    return wa > wb ? -1 : 1;
  return cmp_int(a, b);
}

/* Tries both sides of each anchor in turn; true with the first place
 * where the label covers no shape, title bar or label placed before, nor
 * any edge's line when `off_lines`. */
static bool place_beside(ts_render *r, const taken *t, const ts_view_path *p, const _ts_label *label,
                         const anchor *anchors, int n, bool off_lines, ts_view_point *at, ts_render_rect *rc)
{
  for (int i = 0; i < n; i++)
    for (int side = 0; side < 2; side++) {
      *at = label_beside(&anchors[i], label, p->width, side, off_lines);
      label_rect(label, at->x, at->y, rc);
      if (!hits_shape(r, rc) && !taken_hit(t, rc) && (!off_lines || !hits_path(r, rc)))
        return true;
    }
  return false;
}

/* The place nearest the path's middle, then farther out, where the label
 * covers no edge; failing that, one closer in where it may cover edges,
 * its own too; false if none. */
static bool place_label(ts_render *r, const taken *t, const ts_view_path *p, const _ts_label *label,
                        ts_view_point *at, ts_render_rect *rc)
{
  anchor middle = middle_anchor(p), more[LABEL_ANCHORS];
  int n_more = -1; /* not yet found */
  for (int off_lines = 1; off_lines >= 0; off_lines--) {
    if (place_beside(r, t, p, label, &middle, 1, off_lines, at, rc))
      return true;
    if (n_more < 0)
      n_more = more_anchors(p, more, LABEL_ANCHORS);
    if (place_beside(r, t, p, label, more, n_more, off_lines, at, rc))
      return true;
  }
  return false;
}

/* Edge labels go beside their path, clear of shapes, groups' title bars
 * and each other; one with no such place stays hidden.  The widest edges
 * choose first.  Once per layout. */
static void place_labels(ts_render *r)
{
  r->label_shown = g_new0(guint8, MAX(r->n_paths, 1));
  r->label_pos = g_new0(ts_view_point, MAX(r->n_paths, 1));
  taken t = { r, g_new0(GArray *, (gsize)r->cols * (gsize)r->rows) };
  for (guint k = 0; k < r->containers->len; k++) {
    const ts_view_box *b = ts_view_layout_box(r->layout, g_array_index(r->containers, int, k));
    taken_add(&t, &(ts_render_rect){ b->x, b->y, b->width, r->opts.header_height });
  }
  int *order = g_new(int, MAX(r->n_paths, 1));
  for (int p = 0; p < r->n_paths; p++)
    order[p] = p;
  g_qsort_with_data(order, r->n_paths, sizeof(int), cmp_by_width, (gpointer)r->layout);
  for (int k = 0; k < r->n_paths; k++) {
    const ts_view_path *p = ts_view_layout_path(r->layout, order[k]);
    ts_render_rect rc;
    if (!p->label || !*p->label ||
        !place_label(r, &t, p, _ts_text_get(r->text, TS_FONT_SMALL, p->label), &r->label_pos[order[k]], &rc))
      continue;
    r->label_shown[order[k]] = 1;
    taken_add(&t, &rc);
  }
  for (int c = 0; c < r->cols * r->rows; c++)
    if (t.cells[c])
      g_array_free(t.cells[c], TRUE);
  g_free(t.cells);
  g_free(order);
}

const _ts_label *_ts_edge_label_at(ts_render *r, int path, double *x, double *y)
{
  if (!ts_render_path_label_shown(r, path))
    return NULL;
  *x = r->label_pos[path].x;
  *y = r->label_pos[path].y;
  return _ts_text_get(r->text, TS_FONT_SMALL, ts_view_layout_path(r->layout, path)->label);
}

bool ts_render_path_label_shown(const ts_render *render, int path)
{
  g_return_val_if_fail(render != NULL, false);
  return render->label_shown && path >= 0 && path < render->n_paths && render->label_shown[path];
}

bool ts_render_path_label_rect(ts_render *render, int path, ts_render_rect *out)
{
  g_return_val_if_fail(render != NULL && out != NULL, false);
  double x, y;
  const _ts_label *label = _ts_edge_label_at(render, path, &x, &y);
  if (label)
    label_rect(label, x, y, out);
  return label != NULL;
}

void _ts_render_bounds(ts_render *render, ts_render_rect *out)
{
  const ts_view_layout *l = render->layout;
  double x0 = 0, y0 = 0, x1 = ts_view_layout_width(l), y1 = ts_view_layout_height(l);
  for (int p = 0; p < render->n_paths; p++) {
    double x, y;
    const _ts_label *label = _ts_edge_label_at(render, p, &x, &y);
    if (!label)
      continue;
    x0 = MIN(x0, x - 2);
    y0 = MIN(y0, y);
    x1 = MAX(x1, x + label->width + 2);
    y1 = MAX(y1, y + label->height);
  }
  *out = (ts_render_rect){ x0, y0, x1 - x0, y1 - y0 };
}

void _ts_render_index_build(ts_render *r)
{
  build_grid(r);
  place_labels(r);
  file_entries(r); /* again: the paths' labels are in place */
}
