/* ts-module-watch.h — watches a module's file: a module rebuilt on disk
 * emits ::file-changed so the window can open it again (in a fresh worker,
 * which maps the new code) while keeping its state.  The app watches a
 * local module's file; a remote worker watches its own (WatchModule). */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define TS_TYPE_MODULE_WATCH (ts_module_watch_get_type())
G_DECLARE_FINAL_TYPE(TsModuleWatch, ts_module_watch, TS, MODULE_WATCH, GObject)

TsModuleWatch *ts_module_watch_new(void);

/* Watches the file at path (one at a time; NULL stops watching).
 * ::file-changed is emitted once the file has settled after a change. */
void ts_module_watch_set_path(TsModuleWatch *self, const char *path);

G_END_DECLS
