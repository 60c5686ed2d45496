/* ts-graph-route.c — A* over the grid of lines beside the rectangles' sides
 * (each side pushed out by the clearance), so the work grows with the
 * rectangles near the path, not with its length in px. */
#include "ts-graph-route.h"

#include <math.h>
#include <string.h>

/* The route stays in the box around both ends grown by one of these in
 * turn, the next one only when the smaller would cross a rectangle. */
static const double WINDOW_MARGINS[] = { 120, 600, 3000 };
/* Bigger grids are not searched (their A* would take too long). */
#define MAX_GRID_NODES 250000
/* Running inside a rectangle costs this many times its length. */
#define INSIDE_FACTOR 1000.0
/* Running along a rectangle's side costs this many times its length. */
#define SIDE_FACTOR 4.0
/* A turn costs as much as this many px of length. */
#define BEND_COST 12.0

enum { COVER_NONE, COVER_SIDE, COVER_INSIDE };

typedef struct grid {
  double *xs, *ys; /* sorted grid lines */
  int nx, ny;
  /* The refined grid: (2nx-1) x (2ny-1); odd indices are the midpoints
   * between lines.  COVER_INSIDE where a rectangle covers the point,
   * COVER_SIDE where one's side runs through it. */
  guint8 *cover;
} grid;

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Sorts and drops values closer than 0.5 px to the previous one. */
static int unique_lines(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  int k = 0;
  for (int i = 0; i < n; i++)
    if (k == 0 || v[i] - v[k - 1] > 0.5)
      v[k++] = v[i];
  return k;
}

static double refined(const double *lines, int i)
{
  return i % 2 ? (lines[i / 2] + lines[i / 2 + 1]) / 2 : lines[i / 2];
}

/* The first refined index whose value is above v (or at least v: `or_equal`). */
static int refined_above(const double *lines, int n, double v, bool or_equal)
{
  int lo = 0, hi = 2 * n - 1;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    double r = refined(lines, mid);
    if (r > v || (or_equal && r >= v))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* The refined indices between lo and hi, their ends included when
 * `closed`: [*first, *last] (empty when last < first). */
static void refined_span(const double *lines, int n, double lo, double hi, bool closed, int *first,
                         int *last)
{
  *first = refined_above(lines, n, lo, closed);
  *last = refined_above(lines, n, hi, !closed) - 1;
}

/* Marks the refined points covered by r (or by its sides) as `level`. */
static void cover_rect(grid *g, const ts_route_rect *r, guint8 level)
{
  int mx = 2 * g->nx - 1, x0, x1, y0, y1;
  bool closed = level == COVER_SIDE;
  refined_span(g->xs, g->nx, r->x0, r->x1, closed, &x0, &x1);
  refined_span(g->ys, g->ny, r->y0, r->y1, closed, &y0, &y1);
  for (int y = y0; y <= y1; y++)
    for (int x = x0; x <= x1; x++)
      g->cover[(gsize)y * (gsize)mx + (gsize)x] = MAX(g->cover[(gsize)y * (gsize)mx + (gsize)x], level);
}

static bool near_window(const ts_route_rect *r, const ts_route_rect *w)
{
  return r->x1 >= w->x0 && r->x0 <= w->x1 && r->y1 >= w->y0 && r->y0 <= w->y1;
}

/* Keeps the lines inside [lo, hi] (the window's own sides are lines). */
static void clip_lines(GArray *lines, double lo, double hi)
{
  guint k = 0;
  for (guint i = 0; i < lines->len; i++) {
    double v = g_array_index(lines, double, i);
    if (v >= lo && v <= hi)
      g_array_index(lines, double, k++) = v;
  }
  g_array_set_size(lines, k);
}

static void grid_build(grid *g, const ts_route_rect *rects, int n, const ts_route_rect *bounds,
                       ts_view_point a, ts_view_point b, double c, double margin)
{
  ts_route_rect w = { MAX(MIN(a.x, b.x) - margin, bounds->x0), MAX(MIN(a.y, b.y) - margin, bounds->y0),
                      MIN(MAX(a.x, b.x) + margin, bounds->x1), MIN(MAX(a.y, b.y) + margin, bounds->y1) };
  GArray *xs = g_array_new(FALSE, FALSE, sizeof(double));
  GArray *ys = g_array_new(FALSE, FALSE, sizeof(double));
  GArray *near = g_array_new(FALSE, FALSE, sizeof(ts_route_rect));
  double ex[] = { a.x, b.x, w.x0, w.x1 }, ey[] = { a.y, b.y, w.y0, w.y1 };
  g_array_append_vals(xs, ex, 4);
  g_array_append_vals(ys, ey, 4);
  for (int i = 0; i < n; i++) {
    const ts_route_rect *r = &rects[i];
    if (!near_window(r, &w))
      continue;
    g_array_append_val(near, *r);
    /* lines off the sides only: no route runs along a side (or on a
     * line of no width); a rectangle is wider than c, so a step between
     * two lines crosses one only with its middle or an end inside it */
    double rx[] = { r->x0 - c, r->x1 + c }, ry[] = { r->y0 - c, r->y1 + c };
    g_array_append_vals(xs, rx, 2);
    g_array_append_vals(ys, ry, 2);
  }
  clip_lines(xs, w.x0, w.x1);
  clip_lines(ys, w.y0, w.y1);
  g->nx = unique_lines((double *)xs->data, (int)xs->len);
  g->ny = unique_lines((double *)ys->data, (int)ys->len);
  g->xs = (double *)g_array_free(xs, FALSE);
  g->ys = (double *)g_array_free(ys, FALSE);
  int mx = 2 * g->nx - 1, my = 2 * g->ny - 1;
  g->cover = g_new0(guint8, (gsize)mx * (gsize)my);
  for (guint i = 0; i < near->len; i++)
    for (guint8 level = COVER_SIDE; level <= COVER_INSIDE; level++)
      cover_rect(g, &g_array_index(near, ts_route_rect, i), level);
  g_array_free(near, TRUE);
}

static void grid_clear(grid *g)
{
  g_free(g->xs);
  g_free(g->ys);
  g_free(g->cover);
}

static int line_of(const double *lines, int n, double v)
{
  int best = 0;
  for (int i = 1; i < n; i++)
    if (fabs(lines[i] - v) < fabs(lines[best] - v))
      best = i;
  return best;
}

/* ---- A* over (node, arriving direction) -------------------------------------- */

typedef struct entry {
  double f;
  int state;
} entry;

static void heap_push(GArray *h, entry e)
{
  g_array_append_val(h, e);
  entry *v = (entry *)h->data;
  for (guint i = h->len - 1; i > 0 && v[(i - 1) / 2].f > v[i].f; i = (i - 1) / 2) {
    entry t = v[i];
    v[i] = v[(i - 1) / 2];
    v[(i - 1) / 2] = t;
  }
}

static entry heap_pop(GArray *h)
{
  entry *v = (entry *)h->data, top = v[0];
  v[0] = v[h->len - 1];
  g_array_set_size(h, h->len - 1);
  for (guint i = 0;;) {
    guint l = 2 * i + 1, r = l + 1, s = i;
    if (l < h->len && v[l].f < v[s].f)
      s = l;
    if (r < h->len && v[r].f < v[s].f)
      s = r;
    if (s == i)
      break;
    entry t = v[i];
    v[i] = v[s];
    v[s] = t;
    i = s;
  }
  return top;
}

static const int DX[4] = { 1, -1, 0, 0 }, DY[4] = { 0, 0, 1, -1 };

/* How the step from node (x, y) in direction d meets the rectangles:
 * the most of its middle and its end; -1 off the grid. */
static int step_cover(const grid *g, int x, int y, int d)
{
  int x2 = x + DX[d], y2 = y + DY[d];
  if (x2 < 0 || y2 < 0 || x2 >= g->nx || y2 >= g->ny)
    return -1;
  gsize mx = 2 * (gsize)g->nx - 1;
  return MAX(g->cover[(gsize)(y + y2) * mx + (gsize)(x + x2)], g->cover[(gsize)(2 * y2) * mx + (gsize)(2 * x2)]);
}

/* The cost of the step from node (x, y) in direction d; < 0 off the grid. */
static double step_cost(const grid *g, int x, int y, int d)
{
  int cover = step_cover(g, x, y, d);
  if (cover < 0)
    return -1;
  double len = fabs(g->xs[x + DX[d]] - g->xs[x]) + fabs(g->ys[y + DY[d]] - g->ys[y]);
  return len * (cover == COVER_INSIDE ? INSIDE_FACTOR : cover == COVER_SIDE ? SIDE_FACTOR : 1);
}

/* Walks back from the goal state and appends the corners, a first. */
static void emit_path(const grid *g, const int *from, int goal, ts_view_point a, ts_view_point b, GArray *out)
{
  GArray *rev = g_array_new(FALSE, FALSE, sizeof(int));
  for (int s = goal; s >= 0; s = from[s])
    g_array_append_val(rev, s);
  g_array_append_val(out, a);
  int last_dir = -1;
  for (int i = (int)rev->len - 1; i >= 1; i--) {
    int s = g_array_index(rev, int, i), d = g_array_index(rev, int, i - 1) % 4;
    int node = s / 4;
    ts_view_point p = { g->xs[node % g->nx], g->ys[node / g->nx] };
    if (d != last_dir && i != (int)rev->len - 1)
      g_array_append_val(out, p);
    last_dir = d;
  }
  g_array_append_val(out, b);
  g_array_free(rev, TRUE);
}

/* Whether the step into state s (from its predecessor) runs inside a rectangle. */
static bool step_blocked(const grid *g, const int *from, int s)
{
  int prev = from[s] / 4;
  return step_cover(g, prev % g->nx, prev / g->nx, s % 4) == COVER_INSIDE;
}

typedef enum routed { ROUTED_CLEAR, ROUTED_CROSSING, ROUTED_NONE } routed;

/* A* on one window's grid; appends the corners unless the grid is too big. */
static routed route_in_window(const ts_route_rect *rects, int n_rects, const ts_route_rect *bounds,
                              ts_view_point a, ts_view_point b, double clearance, double margin, GArray *out)
{
  grid g;
  grid_build(&g, rects, n_rects, bounds, a, b, clearance, margin);
  if ((gint64)g.nx * g.ny > MAX_GRID_NODES) {
    grid_clear(&g);
    return ROUTED_NONE;
  }
  int sx = line_of(g.xs, g.nx, a.x), sy = line_of(g.ys, g.ny, a.y);
  int gx = line_of(g.xs, g.nx, b.x), gy = line_of(g.ys, g.ny, b.y);
  int n_states = 4 * g.nx * g.ny;
  double *cost = g_new(double, n_states);
  int *from = g_new(int, n_states);
  for (int i = 0; i < n_states; i++) {
    cost[i] = G_MAXDOUBLE;
    from[i] = -1;
  }
  GArray *heap = g_array_new(FALSE, FALSE, sizeof(entry));
  /* the start is entered "from" every direction at no cost */
  for (int d = 0; d < 4; d++) {
    int s = 4 * (sy * g.nx + sx) + d;
    cost[s] = 0;
    heap_push(heap, (entry){ 0, s });
  }
  int goal = -1;
  while (heap->len) {
    entry e = heap_pop(heap);
    int node = e.state / 4, d0 = e.state % 4, x = node % g.nx, y = node / g.nx;
    if (x == gx && y == gy) {
      goal = e.state;
      break;
    }
    for (int d = 0; d < 4; d++) {
      double c = step_cost(&g, x, y, d);
      if (c < 0)
        continue;
      int next = 4 * ((y + DY[d]) * g.nx + x + DX[d]) + d;
      double total = cost[e.state] + c + (d != d0 && from[e.state] >= 0 ? BEND_COST : 0);
      if (total >= cost[next])
        continue;
      cost[next] = total;
      from[next] = e.state;
      double h = fabs(g.xs[x + DX[d]] - g.xs[gx]) + fabs(g.ys[y + DY[d]] - g.ys[gy]);
      heap_push(heap, (entry){ total + h, next });
    }
  }
  bool crosses = false;
  for (int s = goal; s >= 0 && from[s] >= 0 && !crosses; s = from[s])
    crosses = step_blocked(&g, from, s);
  emit_path(&g, from, goal, a, b, out);
  g_array_free(heap, TRUE);
  g_free(from);
  g_free(cost);
  grid_clear(&g);
  return crosses ? ROUTED_CROSSING : ROUTED_CLEAR;
}

/* Whether the segment a-b enters the open rectangle r grown by c (Liang-Barsky). */
static bool segment_meets(ts_view_point a, ts_view_point b, const ts_route_rect *r, double c)
{
  double t0 = 0, t1 = 1, dx = b.x - a.x, dy = b.y - a.y;
  double p[4] = { -dx, dx, -dy, dy };
  double q[4] = { a.x - (r->x0 - c), (r->x1 + c) - a.x, a.y - (r->y0 - c), (r->y1 + c) - a.y };
  for (int i = 0; i < 4; i++) {
    if (fabs(p[i]) < 1e-12) {
      if (q[i] <= 0)
        return false;
      continue;
    }
    double t = q[i] / p[i];
    if (p[i] < 0)
      t0 = MAX(t0, t);
    else
      t1 = MIN(t1, t);
  }
  return t0 < t1;
}

/* Whether the segment a-b runs along the line r (a rectangle of no width
 * or height) within 2 px; crossing it is fine. */
static bool segment_runs_along(ts_view_point a, ts_view_point b, const ts_route_rect *r)
{
  bool vertical = r->x1 - r->x0 < 1e-6;
  double da = vertical ? a.x : a.y, db = vertical ? b.x : b.y, line = vertical ? r->x0 : r->y0;
  double lo = vertical ? r->y0 : r->x0, hi = vertical ? r->y1 : r->x1;
  double a_along = vertical ? a.y : a.x, b_along = vertical ? b.y : b.x;
  return fabs(da - line) < 2 && fabs(db - line) < 2 && MAX(a_along, b_along) > lo &&
         MIN(a_along, b_along) < hi;
}

/* Whether the straight line keeps the clearance off every rectangle and
 * runs along none of the lines (rectangles of no width: routes before). */
static bool straight_is_clear(const ts_route_rect *rects, int n_rects, ts_view_point a, ts_view_point b,
                              double clearance)
{
  for (int i = 0; i < n_rects; i++) {
    const ts_route_rect *r = &rects[i];
    bool line = r->x1 - r->x0 < 1e-6 || r->y1 - r->y0 < 1e-6;
    if (line ? segment_runs_along(a, b, r) : segment_meets(a, b, r, clearance))
      return false;
  }
  return true;
}

void ts_route_orthogonal(const ts_route_rect *rects, int n_rects, const ts_route_rect *bounds,
                         ts_view_point a, ts_view_point b, double clearance, GArray *out)
{
  if (straight_is_clear(rects, n_rects, a, b, clearance)) {
    g_array_append_val(out, a);
    g_array_append_val(out, b);
    return;
  }
  guint start = out->len;
  GArray *wider = g_array_new(FALSE, FALSE, sizeof(ts_view_point));
  routed r = ROUTED_NONE;
  for (guint i = 0; i < G_N_ELEMENTS(WINDOW_MARGINS) && r != ROUTED_CLEAR; i++) {
    g_array_set_size(wider, 0);
    routed w = route_in_window(rects, n_rects, bounds, a, b, clearance, WINDOW_MARGINS[i], wider);
    if (w == ROUTED_NONE)
      break;
    g_array_set_size(out, start);
    g_array_append_vals(out, wider->data, wider->len);
    r = w;
  }
  g_array_free(wider, TRUE);
  if (r == ROUTED_NONE) { /* too many rectangles near even the shortest way: straight */
    g_array_append_val(out, a);
    g_array_append_val(out, b);
  }
}
