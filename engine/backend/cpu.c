/* cpu.c — the CPU backend: host memory, with a cache of large buffers.
 *
 * Tensors of a few MB come and go on every call.  Returned to malloc, each
 * is unmapped, and every first touch of a fresh mapping page-faults again
 * (about 10 µs a page on our VMs: milliseconds per large op).  Large
 * buffers freed here are kept in size classes and handed out again, up to
 * a bound; the rest of the process's malloc is left as it is.
 *
 * Where another process is to read results (tracescope-worker), large
 * buffers can live in memfds instead: ts_tensor_export_fd then hands the
 * memory itself over, and an exported buffer is never handed out again. */
#include "../engine-private.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define ALIGN 64
#define CLASS_BYTES ((size_t)64 << 10)     /* sizes rounded up to 64 KiB */
#define CACHE_LIMIT ((size_t)512 << 20)    /* bytes kept at most */
#define PER_CLASS 8                        /* buffers kept per size */

typedef struct cached {
  struct cached *next;
} cached;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static GHashTable *classes; /* rounded size -> cached list */
static size_t cached_bytes;

/* A large buffer in a memfd. */
typedef struct {
  int fd;
  size_t size;
  bool exported;   /* another process may map it: never reused */
} shared_buf;

static bool shareable;       /* new large buffers go in memfds */
static GHashTable *shared;   /* base address -> shared_buf * (under lock) */

/* A memfd of size bytes mapped here, or NULL (the caller falls back to malloc). */
static void *shared_alloc(size_t size)
{
  int fd = memfd_create("tracescope-tensor", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return NULL;
  /* its size sealed: a process it is exported to maps it without fear of
   * SIGBUS (written here, so not F_SEAL_WRITE) */
  void *p = ftruncate(fd, (off_t)size) == 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0
              ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
              : MAP_FAILED;
  if (p == MAP_FAILED) {
    close(fd);
    return NULL;
  }
  shared_buf *sb = g_new(shared_buf, 1);
  *sb = (shared_buf){ .fd = fd, .size = size };
  pthread_mutex_lock(&lock);
  if (!shared)
    shared = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_hash_table_insert(shared, p, sb);
  pthread_mutex_unlock(&lock);
  return p;
}

/* Unmaps ptr if it is a memfd buffer (lock held); false if it is not one. */
static bool shared_release(void *ptr)
{
  shared_buf *sb = shared ? g_hash_table_lookup(shared, ptr) : NULL;
  if (!sb)
    return false;
  g_hash_table_remove(shared, ptr);
  munmap(ptr, sb->size);
  close(sb->fd);
  g_free(sb);
  return true;
}

void ts_cpu_share_buffers(bool share)
{
  __atomic_store_n(&shareable, share, __ATOMIC_RELAXED);
}

int ts_tensor_export_fd(const ts_tensor *t, size_t *offset)
{
  TS_CHECK_ARG(t != NULL && offset != NULL, -1);
  if (!t->data || t->backend != ts_backend_cpu())
    return -1;
  int fd = -1;
  pthread_mutex_lock(&lock);
  GHashTableIter it;
  gpointer base, value;
  if (shared)
    g_hash_table_iter_init(&it, shared);
  while (shared && fd < 0 && g_hash_table_iter_next(&it, &base, &value)) {
    shared_buf *sb = value;
    size_t bytes = (size_t)t->size * ts_dtype_size(t->dtype);
    if ((char *)t->data >= (char *)base && (char *)t->data + bytes <= (char *)base + sb->size) {
      fd = dup(sb->fd);
      sb->exported = fd >= 0;
      *offset = (size_t)((char *)t->data - (char *)base);
    }
  }
  pthread_mutex_unlock(&lock);
  return fd;
}

static size_t round_up(size_t bytes)
{
  return (bytes + CLASS_BYTES - 1) / CLASS_BYTES * CLASS_BYTES;
}

static void *cpu_alloc(size_t bytes)
{
  if (bytes < TS_CPU_CACHE_MIN) {
    void *p = NULL;
    return posix_memalign(&p, ALIGN, bytes ? bytes : 1) == 0 ? p : NULL;
  }
  size_t size = round_up(bytes);
  pthread_mutex_lock(&lock);
  cached *c = classes ? g_hash_table_lookup(classes, GSIZE_TO_POINTER(size)) : NULL;
  if (c) {
    g_hash_table_insert(classes, GSIZE_TO_POINTER(size), c->next);
    cached_bytes -= size;
  }
  pthread_mutex_unlock(&lock);
  if (c)
    return c;
  void *p = __atomic_load_n(&shareable, __ATOMIC_RELAXED) ? shared_alloc(size) : NULL;
  if (p)
    return p;
  return posix_memalign(&p, ALIGN, size) == 0 ? p : NULL;
}

/* free() or unmap: a cached buffer is either. */
static void release(void *ptr)
{
  if (!shared_release(ptr))
    free(ptr);
}

static void cpu_free(void *ptr, size_t bytes)
{
  if (!ptr)
    return;
  if (bytes < TS_CPU_CACHE_MIN) {
    free(ptr);
    return;
  }
  size_t size = round_up(bytes);
  bool kept = false;
  pthread_mutex_lock(&lock);
  shared_buf *sb = shared ? g_hash_table_lookup(shared, ptr) : NULL;
  if (sb && sb->exported) {
    shared_release(ptr);
    pthread_mutex_unlock(&lock);
    return;
  }
  if (cached_bytes + size <= CACHE_LIMIT) {
    if (!classes)
      classes = g_hash_table_new(g_direct_hash, g_direct_equal);
    cached *head = g_hash_table_lookup(classes, GSIZE_TO_POINTER(size));
    int n = 0;
    for (cached *c = head; c && n < PER_CLASS; c = c->next)
      n++;
    if (n < PER_CLASS) {
      cached *c = ptr;
      c->next = head;
      g_hash_table_insert(classes, GSIZE_TO_POINTER(size), c);
      cached_bytes += size;
      kept = true;
    }
  }
  if (!kept)
    release(ptr);
  pthread_mutex_unlock(&lock);
}

static void release_cache(void)
{
  pthread_mutex_lock(&lock);
  if (classes) {
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, classes);
    while (g_hash_table_iter_next(&it, NULL, &value))
      for (cached *c = value, *next; c; c = next) {
        next = c->next;
        release(c);
      }
    g_clear_pointer(&classes, g_hash_table_unref);
  }
  cached_bytes = 0;
  pthread_mutex_unlock(&lock);
}

/* Frees what the cache holds when the library is unloaded (leak checkers). */
__attribute__((destructor)) static void cpu_backend_unload(void)
{
  release_cache();
}

/* ---- its buffers: host memory, read and written in place ---- */

static void cpu_buffer_free(ts_buffer *buf)
{
  cpu_free(buf->base, buf->size);
}

static bool cpu_buffer_set(ts_buffer *buf, size_t offset, const void *host_src, size_t bytes)
{
  memcpy(buf->base + offset, host_src, bytes);
  return true;
}

static bool cpu_buffer_get(const ts_buffer *buf, size_t offset, void *host_dst, size_t bytes)
{
  memcpy(host_dst, buf->base + offset, bytes);
  return true;
}

static bool cpu_buffer_memset(ts_buffer *buf, size_t offset, int value, size_t bytes)
{
  memset(buf->base + offset, value, bytes);
  return true;
}

static const ts_buffer_i CPU_BUFFER = {
  .free_buffer = cpu_buffer_free,
  .set = cpu_buffer_set,
  .get = cpu_buffer_get,
  .memset = cpu_buffer_memset,
};

static ts_buffer *cpu_alloc_buffer(const ts_buffer_type *bt, size_t size)
{
  void *p = cpu_alloc(size);
  ts_buffer *buf = p ? ts_buffer_new(bt, &CPU_BUFFER, p, size, NULL) : NULL;
  if (p && !buf)
    cpu_free(p, size);
  return buf;
}

static bool cpu_memory_info(const ts_backend *b, size_t *free_bytes, size_t *total_bytes)
{
  long page = sysconf(_SC_PAGESIZE), total = sysconf(_SC_PHYS_PAGES),
       avail = sysconf(_SC_AVPHYS_PAGES);
  if (page <= 0 || total <= 0 || avail < 0)
    return false;
  *total_bytes = (size_t)total * (size_t)page;
  *free_bytes = (size_t)avail * (size_t)page;
  return true;
}

/* No stream: everything it does is done when the call returns. */
const ts_backend_i ts__cpu_backend_iface = {
  .name = "CPU",
  .description = "the host's cores",
  .kind = TS_DEVICE_CPU,
  .memory_info = cpu_memory_info,
  .buffer_type = { .alignment = ALIGN, .is_host = true, .alloc_buffer = cpu_alloc_buffer },
};
