/* ts-profiler-panel.h — the Profiler panel: a Run's op statistics as a
 * sortable, filterable table grouped by op, node, source line or name
 * scope, the call tree, and the eager-against-graph comparison of a function op by op
 * with a bar per op.  Each profiled Run is one recording (as a capture is
 * in Nsight Systems or Perfetto): the newest is shown, every one is kept
 * and can be shown again, and the Diff page compares it with the one
 * before (or a trace read as the baseline).  The Timeline has a Find bar
 * (Ctrl+F there, profiler.find): matches as you type, the first revealed
 * and centred, Enter or F3 the next, Shift+F3 the previous, "N of M",
 * Escape closes it.
 *
 * The tables are made on a thread: "busy" (read-only) is true meanwhile.
 * The Op Stats table fits its columns to its width: where they do not all
 * fit, the least important hide, a priority level a frame, "fitting"
 * (read-only) true meanwhile; the op name ellipsizes, whole in its tooltip.
 * Signals: "node-selected" (const char *name): a row of one traced node
 * was selected (grouped by node); name is the node's.  "session-ready": a
 * new session's tables are in (ts_profiler_panel_get_node_stats). */
#pragma once

#include <gtk/gtk.h>

#include "ts-call-tree.h"
#include "ts-diff-table.h"
#include "ts-timeline.h"
#include "tracescope-profiler.h"

G_BEGIN_DECLS

#define TS_TYPE_PROFILER_PANEL (ts_profiler_panel_get_type())
G_DECLARE_FINAL_TYPE(TsProfilerPanel, ts_profiler_panel, TS, PROFILER_PANEL, GtkWidget)

/* Adds a recording (taking it), from the Run label, and shows it; the
 * earlier ones are kept (ts_profiler_panel_select_run).  NULL: drops them all. */
void ts_profiler_panel_set_session(TsProfilerPanel *self, tsp_session *session, const char *label);
/* Borrowed; NULL if none. */
const tsp_session *ts_profiler_panel_get_session(TsProfilerPanel *self);
/* The session's statistics by node once "session-ready" came (borrowed), else NULL. */
const tsp_stats *ts_profiler_panel_get_node_stats(TsProfilerPanel *self);
gboolean ts_profiler_panel_get_busy(TsProfilerPanel *self);
gboolean ts_profiler_panel_get_fitting(TsProfilerPanel *self);
/* Shows compare, made from session (taking both), on the compare page. */
void ts_profiler_panel_set_compare(TsProfilerPanel *self, tsp_session *session, tsp_compare *compare);
const tsp_compare *ts_profiler_panel_get_compare(TsProfilerPanel *self);

void ts_profiler_panel_set_group_by(TsProfilerPanel *self, tsp_group_by by);
tsp_group_by ts_profiler_panel_get_group_by(TsProfilerPanel *self);
/* Keeps the rows whose key holds text ("" or NULL: all). */
void ts_profiler_panel_set_filter_text(TsProfilerPanel *self, const char *text);
/* Keeps the row of node (its op, line or scope when grouped so); NULL: all. */
void ts_profiler_panel_set_node_filter(TsProfilerPanel *self, const ts_node *node);

/* The statistics table's rows as shown (sorted and filtered). */
/* Shows a page: "stats", "timeline" or "compare". */
void ts_profiler_panel_show_page(TsProfilerPanel *self, const char *name);
/* The timeline of the Run's session (borrowed). */
TsTimeline *ts_profiler_panel_get_timeline(TsProfilerPanel *self);
/* Every recording set is kept (the newest shown): how many, which is shown,
 * and show recording i (also the toolbar's Run dropdown, with two or more). */
/* The Run's (or the timeline range's) training-step parts, by scope
 * (tsp_step_split_compute); FALSE when no op is a gradient's or an
 * optimizer's.  The Op Stats summary line says them. */
gboolean ts_profiler_panel_get_step_split(TsProfilerPanel *self, tsp_step_split *out);
const char *ts_profiler_panel_get_summary(TsProfilerPanel *self);
guint ts_profiler_panel_get_n_runs(TsProfilerPanel *self);
guint ts_profiler_panel_get_run(TsProfilerPanel *self);
void ts_profiler_panel_select_run(TsProfilerPanel *self, guint i);
/* The Diff page: the Run's session (B) group by group against a baseline
 * recording (A; owned, NULL: none, then the Run before the one shown), with
 * the Op Stats' grouping; shows it. */
void ts_profiler_panel_set_baseline(TsProfilerPanel *self, tsp_session *session, const char *label);
/* The device the runs are made on ("CPU" or NULL: the CPU): with another,
 * the Diff page offers Compare CPU vs it (win.profile-devices). */
void ts_profiler_panel_set_device(TsProfilerPanel *self, const char *device);
TsDiffTable *ts_profiler_panel_get_diff_table(TsProfilerPanel *self);
/* The Call Tree page: the spans by their path of names (the Op Stats' window). */
TsCallTree *ts_profiler_panel_get_call_tree(TsProfilerPanel *self);
guint ts_profiler_panel_get_n_rows(TsProfilerPanel *self);
const tsp_stat *ts_profiler_panel_get_row(TsProfilerPanel *self, guint i);
void ts_profiler_panel_select_row(TsProfilerPanel *self, guint i);
/* Row i's text under the Op Stats column titled column, as the table
 * shows it (owned); NULL when there is no such row or column. */
char *ts_profiler_panel_dup_cell_text(TsProfilerPanel *self, guint i, const char *column);
/* The comparison's rows, largest first. */
guint ts_profiler_panel_get_n_compare_rows(TsProfilerPanel *self);

/* How many calls each way Compare makes. */
guint ts_profiler_panel_get_compare_calls(TsProfilerPanel *self);

G_END_DECLS
