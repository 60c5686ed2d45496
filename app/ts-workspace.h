/* ts-workspace.h — what a window is working on, apart from its widgets (as
 * Sysprof's SysprofSession): the module open, the sidebar row selected and
 * its function, the mode (graph, eager or debug), the device runs go to,
 * and whether they record a profile; and whether what works for it (loading
 * the module, running, the profiler's tables) is busy.  Each is a property
 * with notify; the window's actions (win.mode, win.device, win.profile) set
 * them, and the window's template (the function list's selection, the
 * device button, the run, debug and graph panes) and the run controller
 * bind to them. */
#pragma once

#include <glib-object.h>

#include "ts-loaded-module.h"
#include "ts-sidebar-item.h"

G_BEGIN_DECLS

#define TS_TYPE_WORKSPACE (ts_workspace_get_type())
G_DECLARE_FINAL_TYPE(TsWorkspace, ts_workspace, TS, WORKSPACE, GObject)

TsWorkspace *ts_workspace_new(void);

/* The module open (borrowed), or NULL. */
TsLoadedModule *ts_workspace_get_module(TsWorkspace *self);
void ts_workspace_set_module(TsWorkspace *self, TsLoadedModule *module);
/* The sidebar row selected (borrowed), or NULL; the window's template binds
 * it to the function list's.  Setting it sets the function to the row's
 * and notifies "selected" even when it is the same row: what follows the
 * selection (the graph pane) shows it again. */
TsSidebarItem *ts_workspace_get_selected(TsWorkspace *self);
void ts_workspace_set_selected(TsWorkspace *self, TsSidebarItem *item);
/* The selection's graph or page changed (a debug call traced it, the mode
 * changed, a session was applied): the function is the row's again, and
 * what follows the selection shows it again. */
void ts_workspace_selection_changed(TsWorkspace *self);
/* Why function's last trace failed (borrowed), or NULL: none failed, or one
 * worked since.  Setting the selected function's notifies "selected". */
const char *ts_workspace_get_trace_error(TsWorkspace *self, const char *function);
void ts_workspace_set_trace_error(TsWorkspace *self, const char *function, const char *reason);
void ts_workspace_forget_trace_errors(TsWorkspace *self);
/* The function the run panel is for (borrowed), or NULL. */
const char *ts_workspace_get_function(TsWorkspace *self);
void ts_workspace_set_function(TsWorkspace *self, const char *function);
/* "graph", "eager" or "debug"; another value is refused (FALSE). */
const char *ts_workspace_get_mode(TsWorkspace *self);
gboolean ts_workspace_set_mode(TsWorkspace *self, const char *mode);
gboolean ts_workspace_is_eager(TsWorkspace *self);
gboolean ts_workspace_is_debug(TsWorkspace *self);
/* The device runs go to ("CPU", "SIM:0", ...). */
const char *ts_workspace_get_device(TsWorkspace *self);
void ts_workspace_set_device(TsWorkspace *self, const char *device);
gboolean ts_workspace_get_profile(TsWorkspace *self);
void ts_workspace_set_profile(TsWorkspace *self, gboolean profile);
/* "busy" (read-only): whether one of the sources' boolean properties is
 * true; notified whenever a source notifies its property.  A source is
 * not kept alive (a weak reference). */
gboolean ts_workspace_get_busy(TsWorkspace *self);
void ts_workspace_add_busy_source(TsWorkspace *self, GObject *source, const char *property);

G_END_DECLS
