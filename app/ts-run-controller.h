/* ts-run-controller.h — a window's calls into its engine worker (as
 * Sysprof's recording controller apart from its window): Run (graph or
 * eager, or a debug call in Debug mode), Eager vs Graph, Cancel, and the
 * debugger's commands; and what the worker says back (traces, warnings,
 * output, progress, a death), each to the panel that shows it.
 *
 * The panels are the window's (borrowed); ts_run_controller_shut_down,
 * from the window's dispose, cancels the call running and leaves them. */
#pragma once

#include <gtk/gtk.h>

#include "ts-console.h"
#include "ts-debug-panel.h"
#include "ts-engine-worker.h"
#include "ts-function-list.h"
#include "ts-profiler-panel.h"
#include "ts-run-panel.h"
#include "ts-trace-log.h"
#include "ts-workspace.h"

G_BEGIN_DECLS

/* What the controller drives (borrowed). */
typedef struct {
  TsRunPanel *run_panel;
  TsTraceLog *trace_log;
  TsConsole *console;
  TsFunctionList *function_list;
  TsDebugPanel *debug_panel;
  TsProfilerPanel *profiler_panel;
  GtkStack *panels; /* the bottom panels: the Debugger or the Profiler shown for their calls */
} TsRunPanels;

#define TS_TYPE_RUN_CONTROLLER (ts_run_controller_get_type())
G_DECLARE_FINAL_TYPE(TsRunController, ts_run_controller, TS, RUN_CONTROLLER, GObject)

/* Signals: ::message (a line for a toast).  Why a trace failed, and that
 * a debug call's graph came, go to the workspace (its selection shows
 * them).  A worker's death is said in the console (the module loader
 * opens the module in a fresh one).  The worker records a profile while the
 * workspace's "profile" is on, and runs on its "device" (bindings). */
TsRunController *ts_run_controller_new(TsEngineWorker *worker, TsWorkspace *workspace, const TsRunPanels *panels);
void ts_run_controller_shut_down(TsRunController *self);

/* The workspace's function with the run panel's arguments: run (the run
 * panel's count of calls, graph or eager), or in Debug mode a debug call
 * started or the stopped one continued. */
void ts_run_controller_run(TsRunController *self);
/* The same call eagerly and as a graph, compared op by op in the Profiler. */
void ts_run_controller_compare(TsRunController *self);
/* The same calls profiled on the CPU, then on the chosen device, compared
 * op by op on the Profiler's Diff page. */
void ts_run_controller_compare_devices(TsRunController *self);
void ts_run_controller_cancel(TsRunController *self);
/* Gives function the relaxed input signature its trace warning suggests
 * (win.apply-signature): ::message says so or why not, and the trace
 * log's warning goes. */
void ts_run_controller_apply_signature(TsRunController *self, const char *function);
/* A debugger command: continue, over, into, out, pause, stop, back, forward. */
void ts_run_controller_debug(TsRunController *self, const char *command);
/* Whether a Run or a comparison is in progress (notify::running). */
gboolean ts_run_controller_get_running(TsRunController *self);
/* running, or the worker busy (notify::busy). */
gboolean ts_run_controller_get_busy(TsRunController *self);
/* How the last run ended its worker (owned), or NULL; said once. */
char *ts_run_controller_take_death(TsRunController *self);

G_END_DECLS
