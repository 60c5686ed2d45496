/* ts-graph-layout.h — where everything of a ts_view_model goes on the
 * canvas, for one expansion state.
 *
 * TensorBoard's recipe: every expanded group is laid out on its own by
 * Graphviz dot (ranks bottom to top), its collapsed children as fixed-size
 * boxes, its expanded children as boxes the size of their own layouts.
 * Group layouts are cached per expansion state of their subtree, so
 * expanding a group lays out that group and its ancestors only.
 *
 * Graphviz is not thread-safe: every layout of the process runs on one
 * dedicated worker thread.  ts_view_layouter_run_async delivers on the
 * caller's thread-default main context and never blocks it; a newer request
 * supersedes the older ones still pending (they end with
 * G_IO_ERROR_CANCELLED).  ts_view_layouter_run waits for the worker (tests,
 * the command-line renderer).
 *
 * Coordinates are in px at zoom 1, x to the right, y down; inputs sit low
 * and outputs high, as in TensorBoard. */
#pragma once

#include <gio/gio.h>

#include "ts-graph-model.h"

G_BEGIN_DECLS

/* How big things are; the defaults suit a 10 px sans font. */
typedef void (*ts_view_measure_fn)(const char *text, double *width, double *height, void *user_data);

typedef struct ts_view_layout_options {
  double char_width;    /* average glyph width, when no measure function (7) */
  double line_height;   /* 14 */
  double pad;           /* inside shapes, around the text (6) */
  double group_pad;     /* inside an expanded group's box (10) */
  double header_height; /* the label band atop an expanded group (20) */
  double dot_size;      /* diameter of an extracted node's dot (8) */
  double dot_pitch;     /* distance between dots (12) */
  double node_sep;      /* between neighbours in a rank (16) */
  double rank_sep;      /* between ranks (24) */
  /* Optional text measurement (called on the layout thread). */
  ts_view_measure_fn measure;
  void *measure_data;
} ts_view_layout_options;

#define TS_VIEW_LAYOUT_OPTIONS_DEFAULT                                                   \
  ((ts_view_layout_options){ .char_width = 7, .line_height = 14, .pad = 6, .group_pad = 10, \
                             .header_height = 20, .dot_size = 8, .dot_pitch = 12,         \
                             .node_sep = 16, .rank_sep = 24 })

typedef enum ts_view_shape {
  TS_VIEW_SHAPE_ELLIPSE,   /* an op */
  TS_VIEW_SHAPE_BOX,       /* a collapsed group, subgraph or If/While op: rounded box */
  TS_VIEW_SHAPE_SERIES,    /* a collapsed series: stacked boxes */
  TS_VIEW_SHAPE_CONTAINER, /* an expanded item: rounded box with a header, holding its children */
  TS_VIEW_SHAPE_DOT,       /* an extracted node beside its consumer */
  TS_VIEW_SHAPE_COUNT
} ts_view_shape;

typedef struct ts_view_point {
  double x, y;
} ts_view_point;

typedef struct ts_view_box {
  int item;               /* model item */
  ts_view_shape shape;
  double x, y;            /* top-left of the shape's bounding box */
  double width, height;
  int parent;             /* the enclosing container's box, -1 at the top */
  int owner;              /* dots: the consumer's box; -1 otherwise */
  const char *line1;      /* the label lines it was sized for (line2 may be NULL) */
  const char *line2;
} ts_view_box;

/* An edge's path avoids every shape but its ends and every title bar:
 * dot routes it among the children of the group that holds both ends, and
 * where an end lies deeper, the rest is routed around what is in the way.
 * An edge into an expanded If/While op goes on to the subgraph inputs it
 * feeds, one path per input (both branches of an If, cond and body of a
 * While); one out of it starts at the subgraph outputs that give it. */
typedef struct ts_view_path {
  ts_view_edge edge;      /* what it carries */
  int src_box, dst_box;   /* the boxes it is drawn between (an If/While's inner ones) */
  double width;           /* stroke width, px */
  const char *label;      /* "f32[20,64]", "3 tensors", "control" */
  ts_view_point label_at; /* where the label goes (the middle of the path) */
  int n_points;           /* 1 + 3k: k cubic Bezier segments, src to dst */
  const ts_view_point *points;
} ts_view_path;

/* ---- a computed layout (immutable) ---------------------------------------- */

typedef struct ts_view_layout ts_view_layout;

void ts_view_layout_free(ts_view_layout *layout);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ts_view_layout, ts_view_layout_free)

double ts_view_layout_width(const ts_view_layout *layout);
double ts_view_layout_height(const ts_view_layout *layout);
/* Boxes, containers before what they contain.  Borrowed. */
int ts_view_layout_n_boxes(const ts_view_layout *layout);
const ts_view_box *ts_view_layout_box(const ts_view_layout *layout, int i);
/* The box of an item (a dot-only item: its first dot); -1 if not shown. */
int ts_view_layout_box_for_item(const ts_view_layout *layout, int item);
/* The innermost box holding the point (dots first); -1 if none. */
int ts_view_layout_box_at(const ts_view_layout *layout, double x, double y);
int ts_view_layout_n_paths(const ts_view_layout *layout);
const ts_view_path *ts_view_layout_path(const ts_view_layout *layout, int i);
/* The expansion state it was computed for.  Borrowed. */
const ts_view_state *ts_view_layout_state(const ts_view_layout *layout);
/* Groups laid out in all, and how many of those ran dot (the rest came from the cache). */
int ts_view_layout_n_groups(const ts_view_layout *layout);
int ts_view_layout_n_computed(const ts_view_layout *layout);
/* Time spent on the worker for it. */
guint64 ts_view_layout_duration_ns(const ts_view_layout *layout);

/* ---- the layouter: cache and requests -------------------------------------- */

typedef struct ts_view_layouter ts_view_layouter;

/* Owned (ts_view_layouter_free); holds a reference to model.  NULL options: defaults. */
ts_view_layouter *ts_view_layouter_new(ts_view_model *model, const ts_view_layout_options *options);
/* Pending requests end with G_IO_ERROR_CANCELLED; the cache goes once they have. */
void ts_view_layouter_free(ts_view_layouter *layouter);
ts_view_model *ts_view_layouter_model(const ts_view_layouter *layouter);

/* Lays out state (NULL: the model's current state, copied now) and waits.
 * Owned result; NULL with an error if Graphviz fails. */
ts_view_layout *ts_view_layouter_run(ts_view_layouter *layouter, const ts_view_state *state,
                                     GError **error);
/* The same on the layout thread; callback runs on the calling thread's
 * thread-default main context.  Call ts_view_layouter_run_finish there. */
void ts_view_layouter_run_async(ts_view_layouter *layouter, const ts_view_state *state,
                                GCancellable *cancellable, GAsyncReadyCallback callback,
                                gpointer user_data);
/* Owned result, or NULL with G_IO_ERROR_CANCELLED (cancelled or
 * superseded) or TS_VIEW_ERROR_LAYOUT. */
ts_view_layout *ts_view_layouter_run_finish(ts_view_layouter *layouter, GAsyncResult *result,
                                            GError **error);

G_END_DECLS
