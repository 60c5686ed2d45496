/* ts-run-panel.h — the inputs of a call, one editor per argument
 * (remembered per function), how many calls to make, and the result
 * below, with a progress bar while the worker runs them. */
#pragma once

#include <gtk/gtk.h>

#include "ts-engine-worker.h"
#include "ts-loaded-module.h"
#include "ts-tensor-view.h"

G_BEGIN_DECLS

#define TS_TYPE_RUN_PANEL (ts_run_panel_get_type())
G_DECLARE_FINAL_TYPE(TsRunPanel, ts_run_panel, TS, RUN_PANEL, GtkWidget)

/* Shows the arguments of module's function (NULL: none), restoring the
 * inputs last used with it.  With a "workspace" (TsWorkspace, as the
 * window's template binds it), the panel does so whenever the workspace's
 * function changes. */
void ts_run_panel_set_function(TsRunPanel *self, TsLoadedModule *module, const char *function);
/* The argument specs, remembered for the function; NULL with an error
 * naming the argument if one is not valid. */
GStrv ts_run_panel_dup_args(TsRunPanel *self, GError **error);
/* Sets the editors from specs (adding rows for a function without named parameters). */
void ts_run_panel_set_args(TsRunPanel *self, const char *const *specs);
guint ts_run_panel_get_repeat(TsRunPanel *self);

/* Where the arguments typed per function persist across runs of the app. */
void ts_run_panel_set_settings(TsRunPanel *self, GSettings *settings);
/* The arguments remembered per function (a session saved or read back). */
void ts_run_panel_remember(TsRunPanel *self, const char *source, const char *function,
                           const char *const *specs, guint repeat);
typedef void (*TsRememberedFunc)(const char *function, const char *const *specs, guint repeat,
                                 gpointer user_data);
void ts_run_panel_foreach_remembered(TsRunPanel *self, const char *source, TsRememberedFunc func,
                                     gpointer user_data);
void ts_run_panel_set_repeat(TsRunPanel *self, guint repeat);

/* While running: the progress bar (fraction < 0 pulses) and Cancel. */
void ts_run_panel_set_running(TsRunPanel *self, gboolean running);
void ts_run_panel_set_progress(TsRunPanel *self, double fraction);
/* A remote worker's large result arriving: received of total bytes. */
void ts_run_panel_set_transfer(TsRunPanel *self, guint64 received, guint64 total);
void ts_run_panel_show_result(TsRunPanel *self, const TsRunResult *result, gboolean eager);
void ts_run_panel_show_error(TsRunPanel *self, const char *message);
/* "call 120 of 1000 · 2.4 s" while running, else NULL. */
const char *ts_run_panel_get_progress_text(TsRunPanel *self);
/* The result's header: "#3 f(...) · f32[2] · graph · 1 call, 0.021 ms", or "". */
const char *ts_run_panel_get_meta(TsRunPanel *self);
/* The error shown, or NULL. */
const char *ts_run_panel_get_error(TsRunPanel *self);
/* The inspector showing the last result when it is a tensor of rank 1 and
 * up (else it shows none).  Borrowed. */
TsTensorView *ts_run_panel_get_tensor_view(TsRunPanel *self);
/* What the result area shows as text (for tests; a tensor's printed
 * values too).  Owned. */
char *ts_run_panel_dup_result_text(TsRunPanel *self);

G_END_DECLS
