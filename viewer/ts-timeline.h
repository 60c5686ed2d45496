/* ts-timeline.h — TsTimeline, the profiler's timeline: a recorded session
 * drawn as one track per thread (named), its spans stacked by depth (call,
 * If/While op, the ops inside) in the graph's op colours, trace events as
 * flags (their reason on hover), a time ruler and live tensor memory as a
 * filled step graph at the bottom.  Drawn from the session's level-of-detail
 * index, so a frame costs about the same at any zoom.
 *
 * Navigation: Ctrl+wheel (or a touchpad with Ctrl) and + / - zoom around
 * the pointer; drag, the wheel and the arrow keys pan; 0 or F fits the
 * whole session.  Shift+drag, or a drag on the ruler, selects a time range
 * and shows its duration; Escape clears selection and range.  A click on
 * a span selects it (a selected call shows arrows to its ops); a click on a
 * summary of spans too narrow to draw zooms in on it.  F3 / Shift+F3 step
 * through the matches of the last search.
 *
 * Signals:
 *   "span-selected"  (TsTimeline *self, gpointer event, guint node): a click
 *                    selected a span (event: the const tsp_event *, borrowed
 *                    from the session; node: its session node index, the
 *                    node run or else the traced node it stands for, 0 for
 *                    none), or cleared the selection (NULL, 0).
 *   "range-selected" (TsTimeline *self, guint64 from_ns, guint64 to_ns): a
 *                    range was selected; [from_ns, to_ns) as a tsp_filter
 *                    window takes that range's statistics.
 *   "match-shown"    (TsTimeline *self): a match of the search was brought
 *                    into view (ts_timeline_get_match says which).
 * Actions (for keys, menus and tests): timeline.zoom-in, timeline.zoom-out,
 * timeline.zoom-fit, timeline.pan (dd: fractions of the width and of a
 * row), timeline.zoom-at (dd: x, factor; the time at x stays put),
 * timeline.click-at (dd: x, y), timeline.select-range (dd: x from, x to),
 * timeline.search-next, timeline.search-previous, timeline.unselect. */
#pragma once

#include <gtk/gtk.h>
#include <tracescope-profiler.h>

G_BEGIN_DECLS

#define TS_TYPE_TIMELINE (ts_timeline_get_type())
G_DECLARE_FINAL_TYPE(TsTimeline, ts_timeline, TS, TIMELINE, GtkWidget)

GtkWidget *ts_timeline_new(void);

/* Shows session (stopped; NULL: nothing).  Borrowed: it must outlive the
 * timeline or be replaced first.  Builds its level-of-detail index (about
 * 0.2 s a million events) and fits the whole session in view. */
void ts_timeline_set_session(TsTimeline *self, const tsp_session *session);
const tsp_session *ts_timeline_get_session(TsTimeline *self);
/* The index drawn from (borrowed; NULL without a session). */
const tsp_lod *ts_timeline_get_lod(TsTimeline *self);

void ts_timeline_zoom_to_fit(TsTimeline *self);
/* Searches every event (op names, node names, scopes, functions; not only
 * those in view), outlines the first match and brings it into view;
 * returns the number of matches. */
int ts_timeline_search(TsTimeline *self, const char *text);
/* Moves to the next (or previous) match, wrapping; false if none. */
gboolean ts_timeline_search_next(TsTimeline *self, gboolean backward);
/* The index of the match shown (-1: none) and, in n_matches, how many the
 * last search found. */
int ts_timeline_get_match(TsTimeline *self, int *n_matches);
/* Marks the spans of session node `node` (0: none) and brings the first into view. */
void ts_timeline_select_node(TsTimeline *self, guint node);
/* Dark colours; until set, the theme decides. */
void ts_timeline_set_dark(TsTimeline *self, gboolean dark);

/* The view: the time at widget x, and back. */
double ts_timeline_time_at(TsTimeline *self, double x);
double ts_timeline_x_at(TsTimeline *self, double time_ns);
double ts_timeline_get_ns_per_px(TsTimeline *self);
/* Where event is drawn (widget coordinates); false if not a drawn span. */
gboolean ts_timeline_get_span_area(TsTimeline *self, const tsp_event *event, graphene_rect_t *area);
/* The selected span and the search's current match (NULL for none). */
const tsp_event *ts_timeline_get_selected(TsTimeline *self);
const tsp_event *ts_timeline_get_found(TsTimeline *self);
/* The selected range; false if none. */
gboolean ts_timeline_get_range(TsTimeline *self, guint64 *from_ns, guint64 *to_ns);

G_END_DECLS
