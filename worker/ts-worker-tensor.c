/* ts-worker-tensor.c — a tensor's values on the wire (ts-worker-tensor.h). */
#include "ts-worker-tensor.h"

#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ts-worker-error.h"
#include "ts-worker-protocol.h"

static gboolean no_fds; /* set once at start, before any thread */

void ts_worker_set_no_fds(gboolean value)
{
  no_fds = value;
}

gboolean ts_worker_goes_inline(gsize size)
{
  return no_fds || size < TS_WORKER_FD_THRESHOLD;
}

#define INLINE_MAX (120u << 20) /* inline bytes at most: the rest of the message fits beside them */

gboolean ts_worker_inline_fits(gsize size, const char *what, GError **error)
{
  if (size <= INLINE_MAX)
    return TRUE;
  g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
              "%s is %" G_GSIZE_FORMAT " bytes: a remote worker sends at most %u MiB in one message",
              what, size, INLINE_MAX >> 20);
  return FALSE;
}

int ts_worker_memfd_copy(const void *data, size_t size, GError **error)
{
  int fd = memfd_create("tracescope-result", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  /* write(2) fills the memfd's pages in bulk: much cheaper than faulting
   * them in one by one through a mapping */
  size_t done = 0;
  while (fd >= 0 && done < size) {
    ssize_t w = write(fd, (const char *)data + done, size - done);
    if (w <= 0 && errno != EINTR)
      break;
    done += w > 0 ? (size_t)w : 0;
  }
  if (fd < 0 || done < size) {
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                "cannot put the %zu-byte result in a memfd: %s", size, g_strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  }
  /* sealed: the app maps it knowing nobody changes it under it */
  fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  return fd;
}

/* Bytes at offset of a memfd, mapped read-only; NULL with an error. */
static GBytes *map_fd(int fd, guint64 offset, guint64 size, const char *what, GError **error);

static gboolean write_host(GVariantDict *d, const ts_tensor *out, GUnixFDList *fds, TsBlobStore *blobs,
                           GError **error);

/* A tensor on a device the host cannot read goes as a host copy of it. */
gboolean ts_worker_tensor_write(GVariantDict *d, const ts_tensor *out, GUnixFDList *fds, TsBlobStore *blobs,
                                GError **error)
{
  const ts_backend *backend = ts_tensor_backend(out);
  if (backend) /* the copy the app gets is its own: where the values were made */
    g_variant_dict_insert(d, "device", "s", ts_backend_name(backend));
  if (ts_tensor_data(out) || ts_tensor_size(out) <= 0 || ts_tensor_dtype(out) == TS_STRING ||
      ts_tensor_dtype(out) == TS_VARIANT)
    return write_host(d, out, fds, blobs, error);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *host = ts_tensor_to_backend((ts_tensor *)out, ts_backend_cpu());
  ts_error_clear(); /* none to send: the printed value says it all */
  gboolean ok = write_host(d, host ? host : out, fds, blobs, error);
  ts_scope_end(scope);
  return ok;
}

static gboolean write_host(GVariantDict *d, const ts_tensor *out, GUnixFDList *fds, TsBlobStore *blobs,
                           GError **error)
{
  ts_dtype dtype = ts_tensor_dtype(out);
  ts_shape shape = ts_tensor_shape(out);
  const void *data = ts_tensor_data(out);
  if (!data || dtype == TS_STRING || dtype == TS_VARIANT)
    return TRUE; /* no host bytes to send: the printed value says it all */
  size_t size = (size_t)ts_tensor_size(out) * ts_dtype_size(dtype);
  g_variant_dict_insert(d, "dtype", "s", ts_dtype_name(dtype));
  g_variant_dict_insert_value(d, "shape", g_variant_new_fixed_array(G_VARIANT_TYPE_INT64, shape.dim,
                                                                     (gsize)shape.rank, sizeof(gint64)));
  if (blobs && size >= TS_WORKER_BLOB_CHUNK) {
    /* kept for the app to read in chunks: the tensor's memfd mapped, else a copy */
    size_t offset = 0;
    int fd = ts_tensor_export_fd(out, &offset);
    g_autoptr(GBytes) bytes = fd >= 0 ? map_fd(fd, offset, size, "the result", error) : g_bytes_new(data, size);
    if (fd >= 0)
      close(fd);
    if (!bytes)
      return FALSE;
    ts_blob_store_insert(blobs, d, "data", bytes);
    return TRUE;
  }
  if (ts_worker_goes_inline(size)) {
    if (!ts_worker_inline_fits(size, "the result", error))
      return FALSE;
    g_variant_dict_insert_value(d, "data", g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, data, size, 1));
    return TRUE;
  }
  /* the tensor's own memory when it lives in a memfd (ts_cpu_share_buffers),
   * else a copy written into a fresh one */
  size_t offset = 0;
  int fd = ts_tensor_export_fd(out, &offset);
  if (fd < 0 && (fd = ts_worker_memfd_copy(data, size, error)) < 0)
    return FALSE;
  int index = g_unix_fd_list_append(fds, fd, error);
  close(fd);
  if (index < 0)
    return FALSE;
  g_variant_dict_insert(d, "data-fd", "h", index);
  g_variant_dict_insert(d, "data-offset", "t", (guint64)offset);
  g_variant_dict_insert(d, "data-size", "t", (guint64)size);
  return TRUE;
}

typedef struct {
  void *map;
  gsize size;
} Mapping;

static void mapping_free(gpointer data)
{
  Mapping *m = data;
  munmap(m->map, m->size);
  g_free(m);
}

gboolean ts_worker_tensor_size(GVariantDict *d, const char *what, gsize *size, GError **error)
{
  const char *dtype_name = "";
  ts_dtype dtype;
  g_autoptr(GVariant) dims_v = g_variant_dict_lookup_value(d, "shape", G_VARIANT_TYPE("ax"));
  gsize rank = 0;
  const gint64 *dims = dims_v ? g_variant_get_fixed_array(dims_v, &rank, sizeof(gint64)) : NULL;
  if (!g_variant_dict_lookup(d, "dtype", "&s", &dtype_name) || !ts_dtype_from_name(dtype_name, &dtype) ||
      !dims_v || rank > TS_MAX_RANK) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "%s with a bad dtype (%s) or shape", what, dtype_name);
    return FALSE;
  }
  ts_shape shape = { .rank = (int)rank };
  for (gsize i = 0; i < rank; i++)
    shape.dim[i] = dims[i];
  int64_t n = ts_shape_size(shape);
  if (n < 0 || !g_size_checked_mul(size, (gsize)n, ts_dtype_size(dtype))) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "%s whose shape has unknown dims or overflows", what);
    return FALSE;
  }
  return TRUE;
}

gboolean ts_worker_tensor_read(GVariantDict *d, GUnixFDList *fds, const char *what, ts_dtype *dtype,
                               ts_shape *shape, GBytes **data, char **device, GError **error)
{
  const char *device_name;
  if (g_variant_dict_lookup(d, "device", "&s", &device_name)) {
    if (strlen(device_name) > TS_WORKER_DEVICE_NAME_MAX) {
      g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "%s on a device named by %zu bytes",
                  what, strlen(device_name));
      return FALSE;
    }
    g_free(*device);
    *device = g_strdup(device_name);
  }
  const char *dtype_name;
  if (!g_variant_dict_lookup(d, "dtype", "&s", &dtype_name))
    return TRUE; /* no values: strings, variants, traced only */
  *data = NULL;
  gsize expected;
  if (!ts_worker_tensor_size(d, what, &expected, error))
    return FALSE;
  g_autoptr(GVariant) dims_v = g_variant_dict_lookup_value(d, "shape", G_VARIANT_TYPE("ax"));
  gsize rank = 0;
  const gint64 *dims = g_variant_get_fixed_array(dims_v, &rank, sizeof(gint64));
  ts_dtype_from_name(dtype_name, dtype);
  shape->rank = (int)rank;
  for (gsize i = 0; i < rank; i++)
    shape->dim[i] = dims[i];
  g_autoptr(GVariant) inline_data = g_variant_dict_lookup_value(d, "data", G_VARIANT_TYPE_BYTESTRING);
  if (inline_data) {
    if (g_variant_get_size(inline_data) != expected) {
      g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                  "%s of %zu bytes where its shape says %zu", what, g_variant_get_size(inline_data),
                  expected);
      return FALSE;
    }
    *data = g_variant_get_data_as_bytes(inline_data);
    return TRUE;
  }
  gint32 index;
  guint64 size, offset = 0;
  g_variant_dict_lookup(d, "data-offset", "t", &offset);
  if (!g_variant_dict_lookup(d, "data-fd", "h", &index) ||
      !g_variant_dict_lookup(d, "data-size", "t", &size) || !fds || index < 0 ||
      index >= g_unix_fd_list_get_length(fds) || size != expected || size == 0) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "%s whose values are neither inline nor in a valid fd", what);
    return FALSE;
  }
  *data = ts_worker_map_fd(fds, index, offset, size, what, error);
  return *data != NULL;
}

GBytes *ts_worker_map_fd(GUnixFDList *fds, gint32 index, guint64 offset, guint64 size, const char *what,
                         GError **error)
{
  if (!fds || index < 0 || index >= g_unix_fd_list_get_length(fds)) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "%s is in fd %d of the %d passed", what,
                index, fds ? g_unix_fd_list_get_length(fds) : 0);
    return NULL;
  }
  int fd = g_unix_fd_list_get(fds, index, error);
  if (fd < 0)
    return NULL;
  GBytes *bytes = map_fd(fd, offset, size, what, error);
  close(fd);
  return bytes;
}

gboolean ts_worker_fd_check_sealed(int fd, const char *what, GError **error)
{
  int seals = fcntl(fd, F_GET_SEALS);
  if (seals >= 0 && (seals & F_SEAL_SHRINK))
    return TRUE;
  g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
              "%s is in an fd that can shrink (%s): the worker must seal it (F_SEAL_SHRINK) before passing it",
              what, seals < 0 ? "not a sealable memfd" : "no F_SEAL_SHRINK");
  return FALSE;
}

static GBytes *map_fd(int fd, guint64 offset, guint64 size, const char *what, GError **error)
{
  /* mapped from the page the bytes start in */
  guint64 page = (guint64)sysconf(_SC_PAGESIZE), start = offset / page * page, end;
  struct stat st;
  void *map = MAP_FAILED;
  if (!ts_worker_fd_check_sealed(fd, what, error))
    return NULL;
  if (!g_uint64_checked_add(&end, offset, size) || fstat(fd, &st) != 0 || (guint64)st.st_size < end)
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "%s (%" G_GUINT64_FORMAT " bytes at %" G_GUINT64_FORMAT
                ") is not in its fd", what, size, offset);
  else if ((map = mmap(NULL, end - start, PROT_READ, MAP_PRIVATE, fd, (off_t)start)) == MAP_FAILED)
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "cannot map %s (%" G_GUINT64_FORMAT " bytes): %s", what, size,
                g_strerror(errno));
  if (map == MAP_FAILED)
    return NULL;
  Mapping *m = g_new(Mapping, 1);
  m->map = map;
  m->size = end - start;
  return g_bytes_new_with_free_func((char *)map + (offset - start), size, mapping_free, m);
}
