/* ts-worker-blob.c — large bytes read in chunks (ts-worker-blob.h). */
#include "ts-worker-blob.h"

#include <string.h>

#include "ts-worker-error.h"
#include "ts-worker-protocol.h"

/* ---- the worker's side ------------------------------------------------------------- */

struct TsBlobStore {
  GDBusConnection *connection;
  guint filter;
  GMutex lock;          /* blobs: the main thread adds, the connection's thread reads and drops */
  GHashTable *blobs;    /* id -> GBytes */
  guint32 next_id;
};

static void reply_error(GDBusConnection *c, GDBusMessage *call, const char *format, ...) G_GNUC_PRINTF(3, 4);

static void reply_error(GDBusConnection *c, GDBusMessage *call, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *message = g_strdup_vprintf(format, ap);
  va_end(ap);
  g_autoptr(GDBusMessage) reply = g_dbus_message_new_method_error_literal(call, TS_WORKER_ERROR_PREFIX "Protocol",
                                                                          message);
  g_dbus_connection_send_message(c, reply, G_DBUS_SEND_MESSAGE_FLAGS_NONE, NULL, NULL);
}

/* ReadBlob (u id, t offset, u length) -> (ay): the bytes, exactly length of them. */
static void read_blob(TsBlobStore *store, GDBusMessage *call)
{
  GVariant *body = g_dbus_message_get_body(call);
  if (!body || !g_variant_is_of_type(body, G_VARIANT_TYPE("(utu)"))) {
    reply_error(store->connection, call, "ReadBlob takes (utu)");
    return;
  }
  guint32 id, length;
  guint64 offset;
  g_variant_get(body, "(utu)", &id, &offset, &length);
  g_mutex_lock(&store->lock);
  GBytes *bytes = g_hash_table_lookup(store->blobs, GUINT_TO_POINTER(id));
  bytes = bytes ? g_bytes_ref(bytes) : NULL;
  g_mutex_unlock(&store->lock);
  if (!bytes) {
    reply_error(store->connection, call, "no blob %u is kept", id);
    return;
  }
  gsize size = g_bytes_get_size(bytes);
  if (length > TS_WORKER_BLOB_CHUNK || offset > size || length > size - offset) {
    reply_error(store->connection, call, "ReadBlob of %u bytes at %" G_GUINT64_FORMAT " from blob %u of %zu bytes",
                length, offset, id, size);
    g_bytes_unref(bytes);
    return;
  }
  g_autoptr(GBytes) part = g_bytes_new_from_bytes(bytes, (gsize)offset, length);
  g_bytes_unref(bytes);
  g_autoptr(GDBusMessage) reply = g_dbus_message_new_method_reply(call);
  g_dbus_message_set_body(reply, g_variant_new("(@ay)", g_variant_new_from_bytes(G_VARIANT_TYPE_BYTESTRING, part,
                                                                                  TRUE)));
  g_dbus_connection_send_message(store->connection, reply, G_DBUS_SEND_MESSAGE_FLAGS_NONE, NULL, NULL);
}

/* DropBlob (u id): the app is done with it (sent without waiting for a reply). */
static void drop_blob(TsBlobStore *store, GDBusMessage *call)
{
  GVariant *body = g_dbus_message_get_body(call);
  if (body && g_variant_is_of_type(body, G_VARIANT_TYPE("(u)"))) {
    guint32 id;
    g_variant_get(body, "(u)", &id);
    g_mutex_lock(&store->lock);
    g_hash_table_remove(store->blobs, GUINT_TO_POINTER(id));
    g_mutex_unlock(&store->lock);
  }
  if (!(g_dbus_message_get_flags(call) & G_DBUS_MESSAGE_FLAGS_NO_REPLY_EXPECTED)) {
    g_autoptr(GDBusMessage) reply = g_dbus_message_new_method_reply(call);
    g_dbus_connection_send_message(store->connection, reply, G_DBUS_SEND_MESSAGE_FLAGS_NONE, NULL, NULL);
  }
}

/* On the connection's thread: the blob methods are answered here, never
 * queued behind a call on the main thread. */
static GDBusMessage *filter(GDBusConnection *connection, GDBusMessage *message, gboolean incoming,
                            gpointer user_data)
{
  TsBlobStore *store = user_data;
  if (!incoming || g_dbus_message_get_message_type(message) != G_DBUS_MESSAGE_TYPE_METHOD_CALL ||
      g_strcmp0(g_dbus_message_get_interface(message), TS_WORKER_INTERFACE) != 0)
    return message;
  const char *member = g_dbus_message_get_member(message);
  if (g_strcmp0(member, "ReadBlob") == 0)
    read_blob(store, message);
  else if (g_strcmp0(member, "DropBlob") == 0)
    drop_blob(store, message);
  else
    return message;
  g_object_unref(message);
  return NULL;
}

static void store_clear(gpointer data)
{
  TsBlobStore *store = data;
  g_hash_table_unref(store->blobs);
  g_mutex_clear(&store->lock);
  g_object_unref(store->connection);
}

static void store_release(gpointer data)
{
  g_atomic_rc_box_release_full(data, store_clear);
}

TsBlobStore *ts_blob_store_new(GDBusConnection *connection)
{
  TsBlobStore *store = g_atomic_rc_box_new0(TsBlobStore);
  store->connection = g_object_ref(connection);
  g_mutex_init(&store->lock);
  store->blobs = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)g_bytes_unref);
  /* the filter holds its own reference: one running as it is removed goes on safely */
  store->filter = g_dbus_connection_add_filter(connection, filter, g_atomic_rc_box_acquire(store), store_release);
  return store;
}

void ts_blob_store_free(TsBlobStore *store)
{
  if (!store)
    return;
  g_dbus_connection_remove_filter(store->connection, store->filter);
  store_release(store);
}

guint32 ts_blob_store_add(TsBlobStore *store, GBytes *bytes)
{
  g_mutex_lock(&store->lock);
  guint32 id = ++store->next_id ? store->next_id : ++store->next_id; /* never 0 */
  g_hash_table_replace(store->blobs, GUINT_TO_POINTER(id), g_bytes_ref(bytes));
  g_mutex_unlock(&store->lock);
  return id;
}

void ts_blob_store_insert(TsBlobStore *store, GVariantDict *d, const char *key, GBytes *bytes)
{
  gsize size = g_bytes_get_size(bytes);
  if (!store || size < TS_WORKER_BLOB_CHUNK) {
    g_variant_dict_insert_value(d, key, g_variant_new_from_bytes(G_VARIANT_TYPE_BYTESTRING, bytes, TRUE));
    return;
  }
  g_autofree char *blob_key = g_strconcat(key, "-blob", NULL), *size_key = g_strconcat(key, "-size", NULL);
  g_variant_dict_insert(d, blob_key, "u", ts_blob_store_add(store, bytes));
  g_variant_dict_insert(d, size_key, "t", (guint64)size);
}

/* ---- the app's side ---------------------------------------------------------------- */

typedef struct {
  char *key;            /* "data" */
  guint32 id;
  guint64 size;
  guint8 *buf;
  guint64 asked;        /* bytes asked for so far */
} Blob;

typedef struct {
  GDBusConnection *connection;
  GVariant *dict;
  GArray *blobs;        /* Blob */
  guint next;           /* the blob being asked for */
  guint in_flight;
  guint64 total, received;
  TsBlobProgress progress;
  gpointer progress_data;
  GError *error;        /* the first failure: no more asked, the task fails once in_flight is 0 */
} Fetch;

typedef struct {
  GTask *task;
  guint index;
  guint64 offset;
  guint32 length;
} Chunk;

static void blob_clear(gpointer data)
{
  Blob *b = data;
  g_free(b->key);
  g_free(b->buf);
}

static void fetch_free(Fetch *f)
{
  /* whatever happened, the worker lets go of them */
  for (guint i = 0; i < f->blobs->len; i++)
    g_dbus_connection_call(f->connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, "DropBlob",
                           g_variant_new("(u)", g_array_index(f->blobs, Blob, i).id), NULL,
                           G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL, NULL);
  g_object_unref(f->connection);
  g_variant_unref(f->dict);
  g_array_unref(f->blobs);
  g_clear_error(&f->error);
  g_free(f);
}

gboolean ts_blob_dict_has_blobs(GVariant *dict)
{
  GVariantIter iter;
  const char *key;
  g_variant_iter_init(&iter, dict);
  while (g_variant_iter_next(&iter, "{&sv}", &key, NULL))
    if (g_str_has_suffix(key, "-blob"))
      return TRUE;
  return FALSE;
}

/* dict with each blob's bytes in place of its id and size. */
static GVariant *assemble(Fetch *f)
{
  GVariantDict d;
  g_variant_dict_init(&d, f->dict);
  for (guint i = 0; i < f->blobs->len; i++) {
    Blob *b = &g_array_index(f->blobs, Blob, i);
    g_autofree char *blob_key = g_strconcat(b->key, "-blob", NULL), *size_key = g_strconcat(b->key, "-size", NULL);
    g_variant_dict_remove(&d, blob_key);
    g_variant_dict_remove(&d, size_key);
    GBytes *bytes = g_bytes_new_take(g_steal_pointer(&b->buf), (gsize)b->size);
    g_variant_dict_insert_value(&d, b->key, g_variant_new_from_bytes(G_VARIANT_TYPE_BYTESTRING, bytes, TRUE));
    g_bytes_unref(bytes);
  }
  return g_variant_ref_sink(g_variant_dict_end(&d));
}

static void on_chunk(GObject *source, GAsyncResult *res, gpointer user_data);

/* Asks for chunks until TS_WORKER_BLOB_IN_FLIGHT are on their way;
 * completes the task once nothing is.  Cancel stops the asking: the
 * chunks on their way still come (at most TS_WORKER_BLOB_IN_FLIGHT MiB),
 * for the calls are not given the cancellable — a caller's handler of it
 * that makes a D-Bus call (TsWorker's Cancel) would deadlock against
 * GDBus disconnecting its own handler of it. */
static void fetch_more(GTask *task)
{
  Fetch *f = g_task_get_task_data(task);
  if (!f->error && g_cancellable_is_cancelled(g_task_get_cancellable(task)))
    f->error = g_error_new_literal(G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
  while (!f->error && f->in_flight < TS_WORKER_BLOB_IN_FLIGHT && f->next < f->blobs->len) {
    Blob *b = &g_array_index(f->blobs, Blob, f->next);
    if (b->asked == b->size) {
      f->next++;
      continue;
    }
    Chunk *c = g_new(Chunk, 1);
    c->task = g_object_ref(task);
    c->index = f->next;
    c->offset = b->asked;
    c->length = (guint32)MIN((guint64)TS_WORKER_BLOB_CHUNK, b->size - b->asked);
    b->asked += c->length;
    f->in_flight++;
    g_dbus_connection_call(f->connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, "ReadBlob",
                           g_variant_new("(utu)", b->id, c->offset, c->length), G_VARIANT_TYPE("(ay)"),
                           G_DBUS_CALL_FLAGS_NONE, G_MAXINT /* a slow link is slow, not gone */, NULL,
                           on_chunk, c);
  }
  if (f->in_flight > 0)
    return;
  if (f->error)
    g_task_return_error(task, g_steal_pointer(&f->error));
  else
    g_task_return_pointer(task, assemble(f), (GDestroyNotify)g_variant_unref);
}

static void on_chunk(GObject *source, GAsyncResult *res, gpointer user_data)
{
  Chunk *c = user_data;
  g_autoptr(GTask) task = c->task;
  Fetch *f = g_task_get_task_data(task);
  f->in_flight--;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &error);
  Blob *b = &g_array_index(f->blobs, Blob, c->index);
  if (reply && !f->error) {
    g_autoptr(GVariant) bytes = g_variant_get_child_value(reply, 0);
    if (g_variant_get_size(bytes) != c->length)
      error = g_error_new(TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                          "the worker sent %zu bytes of %s at %" G_GUINT64_FORMAT " where %u were asked for",
                          g_variant_get_size(bytes), b->key, c->offset, c->length);
    else {
      memcpy(b->buf + c->offset, g_variant_get_data(bytes), c->length);
      f->received += c->length;
      if (f->progress)
        f->progress(f->received, f->total, f->progress_data);
    }
  }
  if (error && !f->error) {
    g_dbus_error_strip_remote_error(error);
    f->error = g_steal_pointer(&error);
  }
  g_free(c);
  fetch_more(task);
}

/* The blob named by key (KEY-blob) and value, checked and its room made. */
static gboolean add_blob(Fetch *f, const char *key, GVariant *value, TsBlobAllowed allowed, GError **error)
{
  Blob b = { .key = g_strndup(key, strlen(key) - strlen("-blob")) };
  g_autofree char *size_key = g_strconcat(b.key, "-size", NULL);
  gboolean known = g_variant_is_of_type(value, G_VARIANT_TYPE_UINT32) &&
                   g_variant_lookup(f->dict, size_key, "t", &b.size);
  if (known)
    b.id = g_variant_get_uint32(value);
  g_array_append_val(f->blobs, b); /* dropped at the end, also when refused */
  Blob *kept = &g_array_index(f->blobs, Blob, f->blobs->len - 1);
  if (!known) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "the blob %s without its size", key);
    return FALSE;
  }
  if (allowed && !allowed(kept->key, kept->size, f->dict, error))
    return FALSE;
  if (!(kept->buf = g_try_malloc(MAX(kept->size, 1)))) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "cannot hold the %" G_GUINT64_FORMAT " bytes of %s here: out of memory", kept->size, kept->key);
    return FALSE;
  }
  f->total += kept->size;
  return TRUE;
}

void ts_blob_fetch_async(GDBusConnection *connection, GVariant *dict, TsBlobAllowed allowed,
                         GCancellable *cancellable, TsBlobProgress progress, gpointer progress_data,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr(GTask) task = g_task_new(NULL, cancellable, callback, user_data);
  g_task_set_source_tag(task, ts_blob_fetch_async);
  g_task_set_check_cancellable(task, FALSE); /* the reads in flight end first, then the drops */
  Fetch *f = g_new0(Fetch, 1);
  f->connection = g_object_ref(connection);
  f->dict = g_variant_ref_sink(dict);
  f->blobs = g_array_new(FALSE, TRUE, sizeof(Blob));
  g_array_set_clear_func(f->blobs, blob_clear);
  f->progress = progress;
  f->progress_data = progress_data;
  g_task_set_task_data(task, f, (GDestroyNotify)fetch_free);

  GVariantIter iter;
  const char *key;
  GVariant *value;
  g_variant_iter_init(&iter, dict);
  while (!f->error && g_variant_iter_next(&iter, "{&sv}", &key, &value)) {
    if (g_str_has_suffix(key, "-blob"))
      add_blob(f, key, value, allowed, &f->error);
    g_variant_unref(value);
  }
  fetch_more(task);
}

GVariant *ts_blob_fetch_finish(GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer(G_TASK(result), error);
}
