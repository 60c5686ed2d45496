/* ts-function-list.h — the sidebar: the module's functions and, under each,
 * its concrete functions with their signatures and trace counts. */
#pragma once

#include <gtk/gtk.h>

#include "ts-loaded-module.h"
#include "ts-sidebar-item.h"
#include "ts-trace-entry.h"

G_BEGIN_DECLS

#define TS_TYPE_FUNCTION_LIST (ts_function_list_get_type())
G_DECLARE_FINAL_TYPE(TsFunctionList, ts_function_list, TS, FUNCTION_LIST, GtkWidget)

/* Shows module's functions (NULL: none); selects nothing. */
void ts_function_list_set_module(TsFunctionList *self, TsLoadedModule *module);
/* Adds the concrete function a trace made to its function's row (ignored
 * for another module's trace). */
void ts_function_list_add_trace(TsFunctionList *self, TsTraceEntry *entry);
/* Selects a function row (concrete -1) or one of its concrete rows; FALSE if absent. */
gboolean ts_function_list_select(TsFunctionList *self, const char *function, int concrete);
/* The selected row (borrowed), or NULL.  ::notify::selected tells of changes. */
TsSidebarItem *ts_function_list_get_selected(TsFunctionList *self);
/* Shows only functions whose name holds text (any case); "" shows all. */
void ts_function_list_set_filter(TsFunctionList *self, const char *text);
/* The filter's text (borrowed). */
const char *ts_function_list_get_filter(TsFunctionList *self);
/* Whether the "no function matches" line shows (the filter hides them all). */
gboolean ts_function_list_get_no_match_shown(TsFunctionList *self);
/* Typing in widget (the window) types into the filter. */
void ts_function_list_capture_keys(TsFunctionList *self, GtkWidget *widget);
/* How many function rows the filter lets through. */
guint ts_function_list_get_n_shown(TsFunctionList *self);
/* The function rows (borrowed), for tests. */
GListModel *ts_function_list_get_functions(TsFunctionList *self);

G_END_DECLS
