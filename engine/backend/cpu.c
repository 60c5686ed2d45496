/* cpu.c — the CPU backend: host memory, with a cache of large buffers.
 *
 * Tensors of a few MB come and go on every call.  Returned to malloc, each
 * is unmapped, and every first touch of a fresh mapping page-faults again
 * (about 10 µs a page on our VMs: milliseconds per large op).  Large
 * buffers freed here are kept in size classes and handed out again, up to
 * a bound; the rest of the process's malloc is left as it is. */
#include "../engine-private.h"

#include <pthread.h>
#include <stdlib.h>

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

static size_t round_up(size_t bytes)
{
  return (bytes + CLASS_BYTES - 1) / CLASS_BYTES * CLASS_BYTES;
}

static void *cpu_alloc(const ts_backend *b, size_t bytes)
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
  void *p = NULL;
  return posix_memalign(&p, ALIGN, size) == 0 ? p : NULL;
}

static void cpu_free(const ts_backend *b, void *ptr, size_t bytes)
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
  pthread_mutex_unlock(&lock);
  if (!kept)
    free(ptr);
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
        free(c);
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

static bool cpu_copy(const ts_backend *b, void *dst, const void *src, size_t bytes)
{
  if (bytes)
    memcpy(dst, src, bytes);
  return true;
}

const ts_backend_i ts__cpu_backend_iface = {
  .name = "CPU",
  .kind = TS_DEVICE_CPU,
  .host_visible = true,
  .buffer_alloc = cpu_alloc,
  .buffer_free = cpu_free,
  .copy_to_host = cpu_copy,
  .copy_from_host = cpu_copy,
};
