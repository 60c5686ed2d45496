/* ts-worker-tensor.h — a tensor's values (and other large bytes) on the wire, both ways: dtype,
 * shape and bytes in an a{sv}, the bytes inline when small, else in a
 * sealed memfd passed beside the message (TS_WORKER_FD_THRESHOLD). */
#pragma once

#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <tracescope.h>

#include "ts-worker-blob.h"

G_BEGIN_DECLS

/* The worker's side: t's device ("device") and values into d ("dtype", "shape", then "data" or
 * "data-fd"/"data-offset"/"data-size" with the fd added to fds; without
 * fds, a blob in blobs when large, "data-blob"/"data-size", ts-worker-blob.h,
 * else inline).  Tensors without host bytes (strings, variants) add
 * nothing.  FALSE + error when no memfd could be made. */
gboolean ts_worker_tensor_write(GVariantDict *d, const ts_tensor *t, GUnixFDList *fds, TsBlobStore *blobs,
                                GError **error);

/* The bytes dtype and shape in d say the values have (after a check of
 * both); FALSE with an error naming `what` when they are bad. */
gboolean ts_worker_tensor_size(GVariantDict *d, const char *what, gsize *size, GError **error);

/* The app's side: the values ts_worker_tensor_write put in d, checked
 * (the bytes must be exactly what dtype and shape say); *data NULL and TRUE
 * when d holds none.  *device: the device the worker's tensor was on
 * (owned; the app's copy is on its CPU), left as it was when d names none.
 * `what` names it in errors ("a Call result"). */
#define TS_WORKER_DEVICE_NAME_MAX 64
gboolean ts_worker_tensor_read(GVariantDict *d, GUnixFDList *fds, const char *what, ts_dtype *dtype,
                               ts_shape *shape, GBytes **data, char **device, GError **error);

/* The worker's side: whether bytes of this size go inside the message
 * (under TS_WORKER_FD_THRESHOLD, or always once fds cannot travel: a
 * remote worker, ts_worker_set_no_fds). */
gboolean ts_worker_goes_inline(gsize size);
void ts_worker_set_no_fds(gboolean no_fds);
/* Bytes going inline fit one D-Bus message (GDBus takes at most 128 MiB);
 * FALSE with an error naming `what` and its size when they do not. */
gboolean ts_worker_inline_fits(gsize size, const char *what, GError **error);

/* A sealed memfd holding a copy of data, or -1 with an error. */
int ts_worker_memfd_copy(const void *data, size_t size, GError **error);
/* size bytes at offset of the memfd fds[index], mapped read-only (checked
 * against the file's size, and refused unless sealed against shrinking:
 * a worker shrinking it under the mapping would raise SIGBUS in the app);
 * NULL with an error naming `what`. */
GBytes *ts_worker_map_fd(GUnixFDList *fds, gint32 index, guint64 offset, guint64 size, const char *what,
                         GError **error);

/* TRUE when fd is sealed against shrinking (F_SEAL_SHRINK), which
 * mapping another process's memfd needs; else FALSE with an error naming
 * `what`. */
gboolean ts_worker_fd_check_sealed(int fd, const char *what, GError **error);

G_END_DECLS
