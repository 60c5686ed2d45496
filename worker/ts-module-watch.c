/* ts-module-watch.c — a debounced GFileMonitor on the module's file. */
#include "ts-module-watch.h"

#define SETTLE_MS 400 /* a linker writes in bursts: wait for quiet before reloading */

struct _TsModuleWatch {
  GObject parent_instance;
  GFileMonitor *monitor;
  guint settle_id;
};

enum { SIGNAL_FILE_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TsModuleWatch, ts_module_watch, G_TYPE_OBJECT)

static gboolean settled(gpointer user_data)
{
  TsModuleWatch *self = user_data;
  self->settle_id = 0;
  g_signal_emit(self, signals[SIGNAL_FILE_CHANGED], 0);
  return G_SOURCE_REMOVE;
}

static void on_monitor_changed(GFileMonitor *monitor, GFile *file, GFile *other,
                               GFileMonitorEvent event, gpointer user_data)
{
  TsModuleWatch *self = user_data;
  switch (event) {
  case G_FILE_MONITOR_EVENT_CHANGED:
  case G_FILE_MONITOR_EVENT_CHANGES_DONE_HINT:
  case G_FILE_MONITOR_EVENT_CREATED:
  case G_FILE_MONITOR_EVENT_RENAMED:
  case G_FILE_MONITOR_EVENT_MOVED_IN:
    g_clear_handle_id(&self->settle_id, g_source_remove);
    self->settle_id = g_timeout_add(SETTLE_MS, settled, self);
    break;
  default:
    break;
  }
}

void ts_module_watch_set_path(TsModuleWatch *self, const char *path)
{
  g_return_if_fail(TS_IS_MODULE_WATCH(self));
  g_clear_handle_id(&self->settle_id, g_source_remove);
  if (self->monitor) {
    g_signal_handlers_disconnect_by_data(self->monitor, self);
    g_file_monitor_cancel(self->monitor);
    g_clear_object(&self->monitor);
  }
  if (!path)
    return;
  g_autoptr(GFile) file = g_file_new_for_path(path);
  /* WATCH_MOVES: linkers often write a temporary file and rename it over the old one */
  self->monitor = g_file_monitor_file(file, G_FILE_MONITOR_WATCH_MOVES, NULL, NULL);
  if (self->monitor)
    g_signal_connect(self->monitor, "changed", G_CALLBACK(on_monitor_changed), self);
}

static void ts_module_watch_dispose(GObject *object)
{
  ts_module_watch_set_path(TS_MODULE_WATCH(object), NULL);
  G_OBJECT_CLASS(ts_module_watch_parent_class)->dispose(object);
}

static void ts_module_watch_class_init(TsModuleWatchClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = ts_module_watch_dispose;
  signals[SIGNAL_FILE_CHANGED] =
    g_signal_new("file-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                 G_TYPE_NONE, 0);
}

static void ts_module_watch_init(TsModuleWatch *self)
{
}

TsModuleWatch *ts_module_watch_new(void)
{
  return g_object_new(TS_TYPE_MODULE_WATCH, NULL);
}
