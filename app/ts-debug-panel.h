/* ts-debug-panel.h — the step debugger in the window: runs a call under
 * the worker's debugger and shows where it stopped (the op, the call stack,
 * the source line, the op's inputs and outputs in the tensor inspector),
 * with breakpoints, the step commands and a history slider for stepping
 * back.  Never blocks: the debuggee runs in the worker, stops come back as
 * long polls (ts-worker-debug.h). */
#pragma once

#include <gtk/gtk.h>

#include "ts-engine-worker.h"
#include "ts-tensor-view.h"

G_BEGIN_DECLS

#define TS_TYPE_DEBUG_PANEL (ts_debug_panel_get_type())
G_DECLARE_FINAL_TYPE(TsDebugPanel, ts_debug_panel, TS, DEBUG_PANEL, GtkWidget)

/* How a stopped debuggee goes on (the worker's DebugResume actions), and
 * the other commands. */
typedef enum {
  TS_DEBUG_COMMAND_CONTINUE,  /* F5 */
  TS_DEBUG_COMMAND_STEP_OVER, /* F10 */
  TS_DEBUG_COMMAND_STEP_INTO, /* F11 */
  TS_DEBUG_COMMAND_STEP_OUT,  /* Shift+F11 */
  TS_DEBUG_COMMAND_PAUSE,
  TS_DEBUG_COMMAND_STOP,      /* Shift+F5 */
  TS_DEBUG_COMMAND_COUNT
} TsDebugCommand;

GtkWidget *ts_debug_panel_new(void);

/* Starts debugging function(args) of module in engine's worker, eagerly:
 * stopped before its first op, or (with breakpoints set) run to the first
 * breakpoint.  A debug call still running is stopped first. */
void ts_debug_panel_start(TsDebugPanel *self, TsEngineWorker *engine, TsLoadedModule *module,
                          const char *function, const char *const *args);
/* Whether a debug call runs or waits (notify::active). */
gboolean ts_debug_panel_get_active(TsDebugPanel *self);
/* Whether it is stopped at an op now (notify::stopped). */
gboolean ts_debug_panel_get_stopped(TsDebugPanel *self);
/* FALSE when the command does not apply now (not stopped, not running). */
gboolean ts_debug_panel_command(TsDebugPanel *self, TsDebugCommand command);

/* Breakpoints as `tracescope-cli debug --break` takes them ("MatMul",
 * "dense_1/" glob, "model.c:12", "nan", "max > 1e6"); kept across debug
 * calls.  Added to a running call too.  FALSE + error for a bad one. */
gboolean ts_debug_panel_add_breakpoint(TsDebugPanel *self, const char *spec, GError **error);
/* Removes the breakpoint spec (as its row's button does); FALSE if none. */
gboolean ts_debug_panel_remove_breakpoint(TsDebugPanel *self, const char *spec);
/* The breakpoints' specs, in order (owned). */
char **ts_debug_panel_dup_breakpoints(TsDebugPanel *self);

/* The last output the debugger saw of the node of that path (ts_node_path:
 * "While/body/Add" is not the top level's "Add") (a stop after its op
 * ran, or its op in the history), or NULL.  Borrowed; *device (when
 * device is given): where the worker made it ("SIM:0"), or NULL. */
ts_tensor *ts_debug_panel_get_last_output(TsDebugPanel *self, const char *path, const char **device);

/* The stop shown (the live one, or an op of the history): its op name,
 * node name (NULL if none) and source line; FALSE if none is shown. */
gboolean ts_debug_panel_get_shown_op(TsDebugPanel *self, const char **op, const char **node,
                                     const char **file, int *line);
/* What the status line says ("Stopped before #12 MatMul at seeds.c:397 (breakpoint 1)"). */
const char *ts_debug_panel_get_status(TsDebugPanel *self);
/* Moves the history cursor: an op that ran earlier (0 = oldest), or the
 * live stop (-1). */
void ts_debug_panel_show_history(TsDebugPanel *self, int index);

/* Moves the history cursor delta ops (-1: step back, +1: forward, up to
 * the live stop); FALSE when not stopped or already at the end. */
gboolean ts_debug_panel_step_history(TsDebugPanel *self, int delta);
/* The history entry shown (0 = oldest), or -1 for the live stop. */
int ts_debug_panel_get_history_index(TsDebugPanel *self);
/* Stops a debug call under way and forgets what it showed: its stop, its
 * history, its tensors and the nodes' last outputs (another function or
 * module is shown).  Breakpoints stay. */
void ts_debug_panel_clear(TsDebugPanel *self);
/* The function of the debug call shown (borrowed), or NULL after a clear. */
const char *ts_debug_panel_get_function(TsDebugPanel *self);
/* The inspector of the op's (or the result's) tensors (borrowed). */
TsTensorView *ts_debug_panel_get_inspector(TsDebugPanel *self);

/* Signals:
 *   ::op-shown (const char *path, const char *function) — an op is shown (a stop, or the
 *              history cursor): the window selects its node, of that path
 *              (ts_node_path), in the graph (path NULL: none)
 *   ::finished (const char *result_text, const char *error) — the debug call ended */

G_END_DECLS
