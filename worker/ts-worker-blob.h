/* ts-worker-blob.h — large bytes read in chunks, on a connection that
 * cannot pass fds (a remote worker, over ssh).
 *
 * Locally a large result travels as its memfd.  Over ssh there are no fds,
 * and one D-Bus message holds at most 128 MiB, so the worker keeps such
 * bytes as a blob (TsBlobStore) and its reply names it: KEY-blob (u) and
 * KEY-size (t) where a small result would have KEY (ay).  The app then reads
 * the blob in chunks of at most TS_WORKER_BLOB_CHUNK with ReadBlob (several
 * in flight), with progress and cancel, and drops it with DropBlob.  Both
 * methods are answered on the worker's connection thread (a filter), so a
 * call running on its main thread does not hold them up.
 * docs/worker.md, "Remote workers". */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define TS_WORKER_BLOB_CHUNK (1u << 20) /* the most bytes one ReadBlob answers; smaller bytes go inline */
#define TS_WORKER_BLOB_IN_FLIGHT 4      /* ReadBlob calls the app keeps on the way */

/* ---- the worker's side ---- */

typedef struct TsBlobStore TsBlobStore;

/* Serves ReadBlob and DropBlob on connection. */
TsBlobStore *ts_blob_store_new(GDBusConnection *connection);
void ts_blob_store_free(TsBlobStore *store);
/* Keeps bytes (a reference) until the app drops them; their id. */
guint32 ts_blob_store_add(TsBlobStore *store, GBytes *bytes);
/* Into d as key (ay) when under TS_WORKER_BLOB_CHUNK or store is NULL,
 * else as a blob: key-blob (u) and key-size (t). */
void ts_blob_store_insert(TsBlobStore *store, GVariantDict *d, const char *key, GBytes *bytes);

/* ---- the app's side ---- */

/* received of total bytes are in (main context). */
typedef void (*TsBlobProgress)(guint64 received, guint64 total, gpointer data);

/* Whether dict (a{sv}) names blobs. */
gboolean ts_blob_dict_has_blobs(GVariant *dict);
/* Reads every blob dict names, after checking each size with allowed
 * (which says why not in error), and finishes with dict as it would have
 * been with the bytes inline: key (ay) in place of key-blob and key-size.
 * Every blob is dropped in the worker at the end, also on error or
 * cancel.  A reply of the wrong length fails it (a protocol error); memory
 * that cannot be had here is an error, never an abort. */
typedef gboolean (*TsBlobAllowed)(const char *key, guint64 size, GVariant *dict, GError **error);
void ts_blob_fetch_async(GDBusConnection *connection, GVariant *dict, TsBlobAllowed allowed,
                         GCancellable *cancellable, TsBlobProgress progress, gpointer progress_data,
                         GAsyncReadyCallback callback, gpointer user_data);
GVariant *ts_blob_fetch_finish(GAsyncResult *result, GError **error);

G_END_DECLS
