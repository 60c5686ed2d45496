/* ts-timeline-render.h — drawing a profiling session's timeline with Cairo
 * (no GTK): the ruler, one track per thread with its spans stacked by
 * depth, trace markers, the memory track; and the geometry the widget
 * (ts-timeline.c) and the benchmark share.  Every frame reads the session's
 * level-of-detail index (tsp_lod), so it costs about the same at any zoom. */
#pragma once

#include <cairo.h>
#include <stdbool.h>
#include <tracescope-profiler.h>

G_BEGIN_DECLS

#define TS_TIMELINE_GUTTER 120.0  /* track names, left */
#define TS_TIMELINE_RULER 26.0    /* the time ruler, top */
#define TS_TIMELINE_HEADER 16.0   /* a track's name row (its trace markers) */
#define TS_TIMELINE_ROW 18.0      /* a depth of spans */
#define TS_TIMELINE_MEMORY 36.0   /* a memory series (tensors or arena of a device), bottom */

/* An event where it is drawn. */
typedef struct ts_timeline_mark {
  const tsp_event *event; /* NULL: none */
  int track, depth;       /* depth -1: a trace marker */
} ts_timeline_mark;

/* What a frame shows.  Times are the session's ns (doubles: exact to well
 * under a ns for CLOCK_MONOTONIC times). */
typedef struct ts_timeline_view {
  const tsp_lod *lod;
  double start_ns;     /* the time at the tracks' left edge */
  double ns_per_px;
  double scroll_y;     /* px the tracks are scrolled up */
  int width, height;
  bool dark;
  ts_timeline_mark selected, hovered, found; /* outlined; a selected call shows flows to its ops,
                                               * a selected op or device span its launch links */
  uint32_t node;       /* spans of this session node are marked (0: none) */
  bool has_range;
  double range_from_ns, range_to_ns;
} ts_timeline_view;

/* A launch link: from the op that launched device work (a kernel, a copy)
 * to the span of that work on its device's stream track, as drawn. */
typedef struct ts_timeline_link {
  const tsp_event *op, *device;
  double x0, y0, x1, y1; /* from the op span's foot to the device span's head */
} ts_timeline_link;

/* The launch links of the selected span that are in view: a selected op's
 * to each of its device spans, a selected device span's from its op (the
 * events of one run with one sequence number).  Appends them to out
 * (ts_timeline_link, at most a few hundred); returns how many. */
int ts_timeline_launch_links(const ts_timeline_view *v, GArray *out);

/* Draws the frame into cr (width x height from its origin). */
void ts_timeline_render(cairo_t *cr, const ts_timeline_view *v);

double ts_timeline_x_of(const ts_timeline_view *v, double t_ns);
double ts_timeline_time_of(const ts_timeline_view *v, double x);
/* The height the tracks need (without ruler and memory track). */
double ts_timeline_tracks_height(const tsp_lod *lod);
/* The memory track's height: a row per series, 0 without any. */
double ts_timeline_memory_height(const tsp_lod *lod);
/* The top of a depth row of a track on screen (scroll applied); depth -1:
 * the track's header row. */
double ts_timeline_row_y(const ts_timeline_view *v, int track, int depth);
/* The track and depth at y (depth -1: the header); false outside tracks. */
bool ts_timeline_row_at(const ts_timeline_view *v, double y, int *track, int *depth);
/* What is at (x, y): a span (count 1) or a summary; false for nothing. */
bool ts_timeline_span_at(const ts_timeline_view *v, double x, double y, tsp_lod_span *out);
/* The trace marker at (x, y) (in a header row), or NULL. */
const tsp_event *ts_timeline_trace_at(const ts_timeline_view *v, double x, double y);
/* Tooltip text for a span or summary (owned). */
char *ts_timeline_describe(const tsp_lod *lod, const tsp_lod_span *s);
/* "1.25 ms", "830 ns", "2.5 s" (owned). */
char *ts_timeline_format_ns(double ns);

G_END_DECLS
