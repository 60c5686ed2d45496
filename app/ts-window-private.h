/* ts-window-private.h — what the units of TsWindow share: its fields, and
 * the few helpers the files unit (ts-window-files.c) calls back into. */
#pragma once

#include "ts-window.h"

#include "ts-module-watch.h"
#include "ts-run-controller.h"
#include "ts-session.h"
#include "ts-workspace.h"

G_BEGIN_DECLS

struct _TsWindow {
  AdwApplicationWindow parent_instance;

  AdwToastOverlay *toast_overlay;
  AdwWindowTitle *window_title;
  GtkStack *main_stack;
  GtkWidget *sidebar_split, *run_paned; /* hidden while a trace is shown with no module */
  GtkStack *bottom_stack;
  TsDebugPanel *debug_panel;
  guint importing;        /* trace files being read */
  GCancellable *import_cancellable; /* theirs */
  AdwToast *import_toast; /* their progress, with Cancel */
  double import_progress;
  guint fetching;         /* optimized graphs being asked of the worker */
  TsFunctionList *function_list;
  GtkStack *graph_stack;
  TsGraphPane *graph_pane;
  TsComparePane *compare_pane;
  TsRunPanel *run_panel;
  TsTraceLog *trace_log;
  TsConsole *console;
  TsNodeDetails *node_details;
  TsProfilerPanel *profiler_panel;
  GMenu *recent_menu;
  GtkBox *device_box;

  GSettings *settings;
  TsModuleWatch *watch;
  TsEngineWorker *worker;
  TsRunController *runs; /* the calls into the worker, and what it says back */
  TsWorkspace *workspace; /* the module, selection, mode, device and profile */
  GCancellable *load_cancellable;
  gboolean loading;
  char *error;
  GtkWindow *error_dialog;
  TsSession *session;     /* a session being opened: applied once its module is */
  gboolean revealing;     /* a profiler row's node is being revealed: not a filter for the table */
  gboolean profile_once;  /* Profile is being set for this window only: not saved */
};

/* How a module is opened: asked for, reloaded as it changed, or again in a
 * fresh worker after a death. */
typedef enum { LOAD_OPEN, LOAD_RELOAD, LOAD_RESTART } LoadKind;

void _ts_window_toast(TsWindow *self, const char *text);
/* An error dialog, its message kept for ts_window_get_error. */
void _ts_window_show_error_dialog(TsWindow *self, const char *heading, const char *message);
void _ts_window_notify_busy(TsWindow *self);
/* The graph, run panel and debugger for the function selected. */
void _ts_window_show_selection(TsWindow *self);
/* The sidebar and run panel: hidden while a trace is shown with no module. */
void _ts_window_show_module_panes(TsWindow *self, gboolean shown);
void _ts_window_load(TsWindow *self, const char *source, LoadKind kind);

/* ts-window-files.c: sessions, trace files and export. */
void _ts_window_apply_session(TsWindow *self);
void _ts_window_class_add_file_actions(GtkWidgetClass *widget_class);

G_END_DECLS
