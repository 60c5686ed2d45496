/* ts-sidebar-item.h — a row of the sidebar: a function of the module, or
 * one of its concrete functions (a child of the function's row). */
#pragma once

#include <gio/gio.h>
#include <tracescope.h>

#include "ts-loaded-module.h"

G_BEGIN_DECLS

#define TS_TYPE_SIDEBAR_ITEM (ts_sidebar_item_get_type())
G_DECLARE_FINAL_TYPE(TsSidebarItem, ts_sidebar_item, TS, SIDEBAR_ITEM, GObject)

/* A function row; its children (concrete functions) start with those fn holds. */
TsSidebarItem *ts_sidebar_item_new_function(TsLoadedModule *module, TsModuleFunction *fn);

/* Appends the concrete function `index` of the function (from a trace event). */
void ts_sidebar_item_add_concrete(TsSidebarItem *self, TsConcreteInfo *cf);

gboolean ts_sidebar_item_is_function(TsSidebarItem *self);
const char *ts_sidebar_item_get_function_name(TsSidebarItem *self);
TsModuleFunction *ts_sidebar_item_get_function(TsSidebarItem *self);
TsLoadedModule *ts_sidebar_item_get_module(TsSidebarItem *self);
/* NULL for a function row. */
TsConcreteInfo *ts_sidebar_item_get_concrete(TsSidebarItem *self);
int ts_sidebar_item_get_concrete_index(TsSidebarItem *self); /* -1 for a function row */
/* The concrete rows of a function row (borrowed; NULL for a concrete row). */
GListModel *ts_sidebar_item_get_children(TsSidebarItem *self);

G_END_DECLS
