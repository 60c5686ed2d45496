/* ts-worker-devices.c — ListDevices, the app's end (ts-worker-devices.h). */
#include "ts-worker-devices.h"

#include "ts-worker-private.h"
#include "ts-worker-protocol.h"

#define DEVICES_MAX 256 /* more than any machine has: a reply with more is not believed */

void ts_worker_device_free(TsWorkerDevice *device)
{
  if (!device)
    return;
  g_free(device->name);
  g_free(device->kind);
  g_free(device);
}

static GPtrArray *parse_devices(GVariant *reply, GError **error)
{
  g_autoptr(GVariant) list = g_variant_get_child_value(reply, 0);
  g_autoptr(GPtrArray) devices = g_ptr_array_new_with_free_func((GDestroyNotify)ts_worker_device_free);
  if (g_variant_n_children(list) > DEVICES_MAX) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "the worker listed %zu devices",
                g_variant_n_children(list));
    return NULL;
  }
  for (gsize i = 0; i < g_variant_n_children(list); i++) {
    g_autoptr(GVariant) entry = g_variant_get_child_value(list, i);
    TsWorkerDevice *d = g_new0(TsWorkerDevice, 1);
    g_ptr_array_add(devices, d);
    if (!g_variant_lookup(entry, "name", "s", &d->name) || !*d->name) {
      g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "the worker listed device %zu without a name", i);
      return NULL;
    }
    if (!g_variant_lookup(entry, "kind", "s", &d->kind))
      d->kind = g_strdup("other");
    d->has_memory = g_variant_lookup(entry, "memory-free", "t", &d->memory_free) &&
                    g_variant_lookup(entry, "memory-total", "t", &d->memory_total);
  }
  return g_steal_pointer(&devices);
}

static void on_reply(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &error);
  GPtrArray *devices = reply ? parse_devices(reply, &error) : NULL;
  if (!devices) {
    g_dbus_error_strip_remote_error(error);
    g_task_return_error(task, error);
    return;
  }
  g_task_return_pointer(task, devices, (GDestroyNotify)g_ptr_array_unref);
}

void ts_worker_list_devices_async(TsWorker *self, GCancellable *cancellable, GAsyncReadyCallback callback,
                                  gpointer user_data)
{
  g_return_if_fail(TS_IS_WORKER(self));
  g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, ts_worker_list_devices_async);
  GDBusConnection *connection = _ts_worker_get_connection(self);
  if (!connection || !ts_worker_get_alive(self)) {
    g_task_return_new_error(task, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED, "the worker is not running");
    return;
  }
  g_dbus_connection_call(connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, "ListDevices", NULL,
                         G_VARIANT_TYPE("(aa{sv})"), G_DBUS_CALL_FLAGS_NONE, -1, cancellable, on_reply,
                         g_object_ref(task));
}

GPtrArray *ts_worker_list_devices_finish(TsWorker *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self), NULL);
  return g_task_propagate_pointer(G_TASK(result), error);
}
