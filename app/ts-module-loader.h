/* ts-module-loader.h — how a window's module gets into its engine worker:
 * opened when asked for, opened again when it changed (its file here is
 * watched; a remote worker says ::module-changed), or again in a fresh
 * worker after a death.  It remembers the modules opened here in the
 * recent-modules setting, and gives each worker it starts the
 * worker-memory-limit setting.  What to show of a module is the window's:
 * ::loaded and ::failed say how each load ended. */
#pragma once

#include <gio/gio.h>

#include "ts-engine-worker.h"
#include "ts-workspace.h"

G_BEGIN_DECLS

/* Why a module is loaded: asked for, reloaded as it changed, or again in a
 * fresh worker after a death. */
typedef enum { TS_LOAD_OPEN, TS_LOAD_RELOAD, TS_LOAD_RESTART } TsLoadKind;

#define TS_TYPE_MODULE_LOADER (ts_module_loader_get_type())
G_DECLARE_FINAL_TYPE(TsModuleLoader, ts_module_loader, TS, MODULE_LOADER, GObject)

/* Signals, each emitted with "loading" already false but before its
 * notify: ::loaded (TsLoadedModule *module, TsLoadKind kind) and ::failed
 * (TsLoadKind kind, const char *message).  A load replaced by another, or
 * cancelled, says nothing. */
TsModuleLoader *ts_module_loader_new(TsEngineWorker *worker, TsWorkspace *workspace, GSettings *settings);
/* Loads source ("seeds" or a path) in the background. */
void ts_module_loader_load(TsModuleLoader *self, const char *source, TsLoadKind kind);
/* The workspace's module again (it changed), if one is open. */
void ts_module_loader_reload(TsModuleLoader *self);
/* The workspace's module in a fresh worker (the last one died), unless a
 * load is already under way. */
void ts_module_loader_restart(TsModuleLoader *self);
/* Whether a load is under way (notify::loading). */
gboolean ts_module_loader_get_loading(TsModuleLoader *self);
/* Drops the load under way and stops watching (the window's dispose). */
void ts_module_loader_shut_down(TsModuleLoader *self);

G_END_DECLS
