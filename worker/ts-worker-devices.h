/* ts-worker-devices.h — the devices a worker's engine has, on its machine
 * (ListDevices): for a remote worker, the server's GPUs, not this
 * machine's.  What a device selector lists. */
#pragma once

#include "ts-worker.h"

G_BEGIN_DECLS

typedef struct {
  char *name;            /* "CPU", "CUDA:0": what op events name as device */
  char *kind;            /* "cpu", "cuda" */
  gboolean has_memory;   /* the backend told its memory */
  guint64 memory_free, memory_total;
} TsWorkerDevice;

void ts_worker_device_free(TsWorkerDevice *device);

/* The worker's devices, in its engine's order (the CPU first): an array of
 * TsWorkerDevice * (owned), or NULL with an error (TS_WORKER_ERROR_DIED
 * when it is gone; a protocol error for a reply without names). */
void ts_worker_list_devices_async(TsWorker *self, GCancellable *cancellable, GAsyncReadyCallback callback,
                                  gpointer user_data);
GPtrArray *ts_worker_list_devices_finish(TsWorker *self, GAsyncResult *result, GError **error);

G_END_DECLS
