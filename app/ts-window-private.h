/* ts-window-private.h — what the units of TsWindow share: its fields, and
 * the few helpers its units (ts-window-modules.c, ts-window-workspace.c,
 * ts-window-compare.c, ts-window-files.c) call across. */
#pragma once

#include "ts-window.h"

#include "ts-module-loader.h"
#include "ts-node-focus.h"
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
  GtkWidget *run_modes, *run_actions;   /* the header's run controls: hidden then too */
  GtkStack *bottom_stack;
  GtkPaned *bottom_paned;  /* the graph and run panel above, the panels below */
  gboolean divider_placed; /* bottom_paned's position fitted to the first size */
  TsDebugPanel *debug_panel;
  guint importing;        /* trace files being read */
  GCancellable *import_cancellable; /* theirs */
  AdwToast *import_toast; /* their progress, with Cancel */
  guint import_toast_id;  /* shows import_toast once the reading takes a while */
  AdwToast *load_failure; /* a failed reload or restart: said until dismissed or a load works */
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
  TsEngineWorker *worker;
  TsWorkspace *workspace; /* the module, selection, mode, device and profile */
  TsRunController *runs;  /* the calls into the worker, and what it says back */
  TsModuleLoader *loader; /* the module into the worker */
  TsNodeFocus *focus;     /* the node looked at, across the panels */
  char *error;
  GtkWindow *error_dialog;
  TsSession *session;     /* a session being opened: applied once its module is */
  gboolean profile_once;  /* Profile is being set for this window only: not saved */
};

void _ts_window_toast(TsWindow *self, const char *text);

/* ts-window-files.c: a file chooser over the window with its accept
 * button's label, to save when a name is suggested, else to open; each
 * kind a filter of its patterns.  `chosen` gets the path accepted. */
typedef void (*TsPathChosen)(TsWindow *self, const char *path);
typedef struct {
  const char *name;
  const char *patterns[2];
} TsFileKind;
void _ts_window_choose_file(TsWindow *self, const char *title, const char *accept, const char *suggested,
                            const TsFileKind *kinds, guint n_kinds, TsPathChosen chosen);
/* An error dialog, its message kept for ts_window_get_error. */
void _ts_window_show_error_dialog(TsWindow *self, const char *heading, const char *message);
/* "busy" changed (the workspace's, importing or fetching): the actions follow. */
void _ts_window_notify_busy(TsWindow *self);

/* ts-window-modules.c: the module opened, reloaded and shown. */
/* The sidebar, run panel and run controls: hidden while a trace is shown
 * with no module (nothing there to run). */
void _ts_window_show_module_panes(TsWindow *self, gboolean shown);
/* What the window shows of each module its loader loads. */
void _ts_window_follow_loader(TsWindow *self);
void _ts_window_class_add_module_actions(GtkWidgetClass *widget_class);

/* ts-window-workspace.c: win.mode, win.device and win.profile, and the
 * device menu following the worker's devices. */
void _ts_window_add_workspace_actions(TsWindow *self);

/* ts-window-compare.c: the graph area's compare page. */
void _ts_window_close_compare(TsWindow *self);
void _ts_window_class_add_compare_actions(GtkWidgetClass *widget_class);

/* ts-window-files.c: sessions, trace files and export. */
void _ts_window_apply_session(TsWindow *self);
void _ts_window_class_add_file_actions(GtkWidgetClass *widget_class);

G_END_DECLS
