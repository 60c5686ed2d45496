/* ts-window.h — the main window: header bar (module chooser, Graph | Eager,
 * device, Run, primary menu), the sidebar of functions, the graph, the run
 * panel, and the trace log and console below.  Everything it does is an
 * action (win.open-module, win.run, win.mode, ...), which the GUI tests drive. */
#pragma once

#include <adwaita.h>

#include "ts-debug-panel.h"
#include "ts-engine-worker.h"

#include "ts-compare-pane.h"
#include "ts-console.h"
#include "ts-function-list.h"
#include "ts-graph-pane.h"
#include "ts-loaded-module.h"
#include "ts-node-details.h"
#include "ts-profiler-panel.h"
#include "ts-run-panel.h"
#include "ts-trace-log.h"

G_BEGIN_DECLS

#define TS_TYPE_WINDOW (ts_window_get_type())
G_DECLARE_FINAL_TYPE(TsWindow, ts_window, TS, WINDOW, AdwApplicationWindow)

TsWindow *ts_window_new(GtkApplication *application);

/* Opens source ("seeds" or a path) in the background; notify::module when
 * it is in, or an error dialog (ts_window_get_error) if it was refused. */
void ts_window_open_module(TsWindow *self, const char *source);
/* The module shown (borrowed), or NULL. */
TsLoadedModule *ts_window_get_module(TsWindow *self);
/* Whether a load, a call, a file being read or a table being made or fitted
 * is in progress (notify::busy). */
gboolean ts_window_get_busy(TsWindow *self);
/* The message of the last module error shown in a dialog, or NULL. */
/* Modules opened from now on run on target ("[user@]host[:port]", over
 * ssh: tracescope --remote); NULL: here. */
void ts_window_set_remote(TsWindow *self, const char *target);
const char *ts_window_get_error(TsWindow *self);
/* The error dialog while it is open (borrowed), or NULL. */
GtkWindow *ts_window_get_error_dialog(TsWindow *self);
/* The toast saying a reload or restart failed while it shows (borrowed), or NULL. */
AdwToast *ts_window_get_load_failure(TsWindow *self);

TsFunctionList *ts_window_get_function_list(TsWindow *self);
TsGraphPane *ts_window_get_graph_pane(TsWindow *self);
/* The recent modules section of the Open menu (borrowed): labels are file
 * names with "_" doubled, as menus take a single one as a mnemonic. */
GMenuModel *ts_window_get_recent_menu(TsWindow *self);
/* Whether the graph area shows what it should in full: no cross-fade
 * running, the graph (or both compared graphs) laid out and drawn, or a
 * status page (what `--screenshot` waits for). */
gboolean ts_window_get_graph_drawn(TsWindow *self);
/* Two concrete functions side by side (win.compare-concrete (function,
 * left index, right index)), or the graph pane's one before and after the
 * optimizer's passes (win.compare-passes); win.close-compare goes back to
 * one graph.  A node selected there shows in the node details. */
TsComparePane *ts_window_get_compare_pane(TsWindow *self);
gboolean ts_window_get_comparing(TsWindow *self);
TsEngineWorker *ts_window_get_engine(TsWindow *self);
/* Runs from now on go to device (a name of the device menu, the loaded
 * module's worker's); false + an error naming the devices there are. */
gboolean ts_window_set_device(TsWindow *self, const char *device, GError **error);
/* Opens a saved session (docs/session.md): its module, arguments, mode,
 * selection and trace log. */
void ts_window_open_session(TsWindow *self, const char *path);
TsRunPanel *ts_window_get_run_panel(TsWindow *self);
TsTraceLog *ts_window_get_trace_log(TsWindow *self);
TsConsole *ts_window_get_console(TsWindow *self);
/* The details of the node selected in the graph, below the sidebar: shown
 * while one is, unless win.show-node-details (Ctrl+I) turned it off. */
TsNodeDetails *ts_window_get_node_details(TsWindow *self);
TsProfilerPanel *ts_window_get_profiler_panel(TsWindow *self);
TsDebugPanel *ts_window_get_debug_panel(TsWindow *self);
/* Turns Profile on or off for this window only: the saved setting (what
 * the next launch starts with) stays as it is (command-line options). */
void ts_window_set_profiling_once(TsWindow *self, gboolean profile);
/* Reads a Chrome trace (.json or .json.gz: tracescope-cli profile --out, or
 * another tool's) in a process of its own (tracescope-import, under the
 * default tsp_read_limits), its progress in a toast with Cancel, and
 * shows it in the Profiler panel's timeline; an error dialog says what
 * was wrong with the file, or how the importer ended. */
void ts_window_open_trace(TsWindow *self, const char *path);
/* Reads a Chrome trace on a thread as the baseline the Profiler panel's
 * Diff page compares its recording with (win.compare-trace-from). */
void ts_window_compare_trace(TsWindow *self, const char *path);
/* The fraction of the trace files being read that is read (the last
 * reported), or -1 when none is; win.cancel-import stops them. */
double ts_window_get_import_progress(TsWindow *self);

G_END_DECLS
