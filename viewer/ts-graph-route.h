/* ts-graph-route.h — orthogonal routing around rectangles, for the parts
 * of edges that cross group borders (dot routes each group's edges on its
 * own and knows nothing of what lies inside its children).  Internal to
 * the layout. */
#pragma once

#include <glib.h>

#include "ts-graph-layout.h"

typedef struct ts_route_rect {
  double x0, y0, x1, y1;
} ts_route_rect;

/* Appends to `out` the straight line from a to b where it keeps `clearance`
 * px off the rectangles, else an axis-parallel polyline (both ends included)
 * that keeps `clearance` px off the rectangles where it can.  Passing
 * through a rectangle costs so much that a way around is always taken if
 * there is one; with none, the path crosses as little as it must.  Where
 * too many rectangles lie near the ends for a quick search: a straight line.
 * The polyline stays within bounds, which hold a and b. */
void ts_route_orthogonal(const ts_route_rect *rects, int n_rects, const ts_route_rect *bounds,
                         ts_view_point a, ts_view_point b, double clearance, GArray *out);
