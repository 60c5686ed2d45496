/* ts-fast-channel.c — the Call fast path's shared memory (ts-fast-channel.h). */
#include "ts-fast-channel.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ts-worker-error.h"
#include "ts-worker-tensor.h"

#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ volatile("yield")
#else
#define CPU_RELAX() ((void)0)
#endif

#define LENGTH_SIZE 8u /* the length before each message; keeps the GVariant 8-aligned */

gsize ts_fast_channel_size(void)
{
  return TS_FAST_HEADER_SIZE + 2 * (gsize)TS_FAST_AREA_SIZE;
}

static TsFastHeader *map(int fd, GError **error)
{
  void *p = mmap(NULL, ts_fast_channel_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "cannot map the fast call channel: %s",
                g_strerror(errno));
    return NULL;
  }
  return p;
}

TsFastHeader *ts_fast_channel_create(int *fd, GError **error)
{
  *fd = memfd_create("tracescope-fast-call", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  /* its size sealed: the app maps it (both sides write, so not F_SEAL_WRITE) */
  if (*fd < 0 || ftruncate(*fd, (off_t)ts_fast_channel_size()) != 0 ||
      fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "cannot make the fast call channel: %s",
                g_strerror(errno));
    if (*fd >= 0)
      close(*fd);
    *fd = -1;
    return NULL;
  }
  TsFastHeader *h = map(*fd, error);
  if (!h) {
    close(*fd);
    *fd = -1;
    return NULL;
  }
  h->version = TS_FAST_VERSION;
  h->area_size = TS_FAST_AREA_SIZE;
  __atomic_store_n(&h->magic, TS_FAST_MAGIC, __ATOMIC_RELEASE);
  return h;
}

TsFastHeader *ts_fast_channel_map(int fd, GError **error)
{
  struct stat st;
  if (!ts_worker_fd_check_sealed(fd, "the fast call channel", error))
    return NULL;
  if (fstat(fd, &st) != 0 || (guint64)st.st_size != ts_fast_channel_size()) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "the fast call channel is %jd bytes, not %zu", (intmax_t)st.st_size, ts_fast_channel_size());
    return NULL;
  }
  TsFastHeader *h = map(fd, error);
  if (!h)
    return NULL;
  if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != TS_FAST_MAGIC || h->version != TS_FAST_VERSION ||
      h->area_size != TS_FAST_AREA_SIZE) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "the fast call channel has magic %#x, version %u, areas of %u bytes: not ours",
                h->magic, h->version, h->area_size);
    ts_fast_channel_unmap(h);
    return NULL;
  }
  return h;
}

void ts_fast_channel_unmap(TsFastHeader *h)
{
  if (h)
    munmap(h, ts_fast_channel_size());
}

static guint8 *area_start(TsFastHeader *h, TsFastArea area)
{
  return (guint8 *)h + TS_FAST_HEADER_SIZE + (area == TS_FAST_REPLY ? TS_FAST_AREA_SIZE : 0);
}

gboolean ts_fast_put(TsFastHeader *h, TsFastArea area, GVariant *msg)
{
  gsize size = g_variant_get_size(msg);
  if (size > TS_FAST_AREA_SIZE - LENGTH_SIZE)
    return FALSE;
  guint8 *start = area_start(h, area);
  guint64 length = size;
  memcpy(start, &length, sizeof length);
  g_variant_store(msg, start + LENGTH_SIZE);
  return TRUE;
}

GVariant *ts_fast_get(TsFastHeader *h, TsFastArea area, const char *type, const char *what, GError **error)
{
  const guint8 *start = area_start(h, area);
  guint64 length;
  memcpy(&length, start, sizeof length);
  if (length > TS_FAST_AREA_SIZE - LENGTH_SIZE) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "%s on the fast call channel is %" G_GUINT64_FORMAT " bytes: more than its area holds",
                what, length);
    return NULL;
  }
  /* a copy: the other side could change the shared bytes while they are read */
  GBytes *bytes = g_bytes_new(start + LENGTH_SIZE, (gsize)length);
  g_autoptr(GVariant) msg = g_variant_ref_sink(g_variant_new_from_bytes(G_VARIANT_TYPE(type), bytes, FALSE));
  g_bytes_unref(bytes);
  if (!g_variant_is_normal_form(msg)) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "%s on the fast call channel is not a valid %s", what, type);
    return NULL;
  }
  return g_steal_pointer(&msg);
}

static long futex(uint32_t *word, int op, uint32_t value, const struct timespec *timeout)
{
  return syscall(SYS_futex, word, op, value, timeout, NULL, 0);
}

void ts_fast_wake(uint32_t *word)
{
  futex(word, FUTEX_WAKE, G_MAXINT, NULL);
}

void ts_fast_post(uint32_t *word, uint32_t *waiting, uint32_t value)
{
  /* both sides store, then look at the other's word: a sleeper is never missed */
  __atomic_store_n(word, value, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(waiting, __ATOMIC_SEQ_CST))
    ts_fast_wake(word);
}

static gint64 now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (gint64)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A wait that a spin caught: the next spin covers twice as long.  One
 * that slept: the next spin is half as long, down to nothing; every 64th
 * wait then spins in full again, to find out whether spinning pays again. */
static void spin_learn(TsFastSpin *spin, gboolean caught, gint64 waited_ns)
{
  if (caught)
    spin->ns = MIN(spin->max_ns, MAX(spin->ns, 2 * (guint64)waited_ns + 1000));
  else
    spin->ns /= 2;
  if (spin->ns < 1000 && (++spin->probe & 63) == 0)
    spin->ns = spin->max_ns;
}

gboolean ts_fast_wait(uint32_t *word, uint32_t *waiting, uint32_t old, TsFastSpin *spin, int slice_ms)
{
  if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != old)
    return TRUE;
  gint64 start = spin ? now_ns() : 0;
  if (spin && spin->ns > 0) {
    gint64 end = start + (gint64)spin->ns;
    do {
      for (int i = 0; i < 64; i++) {
        CPU_RELAX();
        if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != old) {
          spin_learn(spin, TRUE, now_ns() - start);
          return TRUE;
        }
      }
    } while (now_ns() < end);
  }
  __atomic_store_n(waiting, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(word, __ATOMIC_SEQ_CST) == old) {
    struct timespec slice = { slice_ms / 1000, (long)(slice_ms % 1000) * 1000000 };
    futex(word, FUTEX_WAIT, old, slice_ms >= 0 ? &slice : NULL);
  }
  __atomic_store_n(waiting, 0, __ATOMIC_SEQ_CST);
  gboolean changed = __atomic_load_n(word, __ATOMIC_ACQUIRE) != old;
  if (spin && changed)
    spin_learn(spin, FALSE, now_ns() - start);
  return changed;
}
