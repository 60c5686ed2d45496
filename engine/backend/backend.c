/* backend.c — the backend registry and the engine's calls into backends
 * (buffers, copies, streams). */
#include "../engine-private.h"
#ifdef TS_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

#include <pthread.h>

#define MAX_BACKENDS 16

static ts_backend backends[MAX_BACKENDS];
static int n_backends; /* atomic: entries below it are complete */
static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER;

/* The built-in backends, filled on first use: the CPU is entry 0, the
 * simulated GPU entry 1 where TRACESCOPE_DEVICES names it ("sim"; the
 * tests set it), so that users see only the devices they have. */
extern const ts_backend_i ts__cpu_backend_iface, ts__sim_backend_iface;

static bool sim_wanted(void)
{
  const char *list = g_getenv("TRACESCOPE_DEVICES");
  char **names = list ? g_strsplit(list, ",", -1) : NULL;
  bool wanted = false;
  for (int i = 0; names && names[i]; i++)
    wanted |= g_ascii_strcasecmp(g_strstrip(names[i]), "sim") == 0;
  g_strfreev(names);
  return wanted;
}

static void ensure_cpu(void)
{
  if (G_LIKELY(__atomic_load_n(&n_backends, __ATOMIC_ACQUIRE) > 0))
    return;
  pthread_mutex_lock(&register_lock);
  if (n_backends == 0) {
    int n = 0;
    backends[n++].iface = ts__cpu_backend_iface;
    if (sim_wanted())
      backends[n++].iface = ts__sim_backend_iface;
    __atomic_store_n(&n_backends, n, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&register_lock);
}

const ts_backend *ts_backend_cpu(void)
{
  ensure_cpu();
  return &backends[0];
}

/* Real devices, probed once when the list is first read (not on
 * ts_backend_cpu: most programs never ask). */
static void add_devices(void)
{
#ifdef TS_HAVE_CUDA
  ts__cuda_register();
#endif
}

const char *ts_backend_devices_note(void)
{
  ts_backend_count(); /* the devices are probed */
#ifdef TS_HAVE_CUDA
  return ts__cuda_note();
#else
  return "CUDA: not built (-Dcuda=disabled or no toolkit at build time)";
#endif
}

int ts_backend_count(void)
{
  static pthread_once_t devices_once = PTHREAD_ONCE_INIT;
  ensure_cpu();
  pthread_once(&devices_once, add_devices);
  return __atomic_load_n(&n_backends, __ATOMIC_ACQUIRE);
}

const ts_backend *ts_backend_get(int i)
{
  return i >= 0 && i < ts_backend_count() ? &backends[i] : NULL;
}

const ts_backend *ts_backend_by_name(const char *name)
{
  for (int i = 0; name && i < ts_backend_count(); i++)
    if (strcmp(backends[i].iface.name, name) == 0)
      return &backends[i];
  return NULL;
}

const char *ts_backend_name(const ts_backend *b)
{
  return b ? b->iface.name : "none";
}

const char *ts_backend_description(const ts_backend *b)
{
  return b && b->iface.description ? b->iface.description : "";
}

ts_device_kind ts_backend_device_kind(const ts_backend *b)
{
  return b ? b->iface.kind : TS_DEVICE_CPU;
}

const ts_backend_i *ts_backend_iface(const ts_backend *b)
{
  return b ? &b->iface : NULL;
}

const ts_backend *ts_backend_register(const ts_backend_i *iface)
{
  const char *why = NULL;
  if (!iface)
    why = "no interface";
  else if (!iface->name || !*iface->name)
    why = "no name";
  else if ((unsigned)iface->kind >= TS_DEVICE_KIND_COUNT)
    why = "invalid device kind";
  else if (!iface->buffer_alloc || !iface->buffer_free || !iface->copy_to_host ||
           !iface->copy_from_host)
    why = "buffer_alloc, buffer_free, copy_to_host and copy_from_host are required";
  else if ((!iface->graph_plan_create + !iface->graph_plan_update + !iface->graph_plan_compute +
            !iface->graph_plan_free) % 4 != 0)
    why = "graph_plan_create, _update, _compute and _free come together";
  else if ((iface->event_new || iface->event_record) && !(iface->event_new && iface->event_free &&
                                                           iface->event_record &&
                                                           iface->event_query))
    why = "event_new, event_free, event_record and event_query come together";
  if (why) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL, "ts_backend_register: %s", why);
    return NULL;
  }
  ensure_cpu();
  const ts_backend *b = NULL;
  pthread_mutex_lock(&register_lock);
  for (int i = 0; i < n_backends && !why; i++) /* not ts_backend_by_name: add_devices calls here */
    if (strcmp(backends[i].iface.name, iface->name) == 0)
      why = "a backend of that name exists";
  else if (n_backends == MAX_BACKENDS)
    why = "too many backends";
  if (!why) {
    backends[n_backends].iface = *iface;
    b = &backends[n_backends];
    __atomic_store_n(&n_backends, n_backends + 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&register_lock);
  if (why)
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL, "ts_backend_register: '%s': %s",
                 iface->name, why);
  return b;
}

bool ts_backend_synchronize(const ts_backend *b)
{
  TS_CHECK_ARG(b != NULL, false);
  return !b->iface.synchronize || b->iface.synchronize(b);
}

bool ts_backend_memory_info(const ts_backend *b, size_t *free_bytes, size_t *total_bytes)
{
  TS_CHECK_ARG(b != NULL && free_bytes != NULL && total_bytes != NULL, false);
  return b->iface.memory_info && b->iface.memory_info(b, free_bytes, total_bytes);
}

/* ---- the engine's calls into a backend ---------------------------------------------- */

bool ts__buffer_memset(const ts_backend *b, void *dst, int value, size_t bytes)
{
  const ts_backend_i *bi = &b->iface;
  if (bi->host_visible && !bi->memset) {
    memset(dst, value, bytes);
    return true;
  }
  if (bi->memset)
    return bi->memset(b, dst, value, bytes);
  void *tmp = g_try_malloc(bytes ? bytes : 1);
  bool ok = tmp && (memset(tmp, value, bytes), bi->copy_from_host(b, dst, tmp, bytes));
  g_free(tmp);
  return ok;
}

bool ts__backend_runs(const ts_backend *b, const ts_op_def *def, ts_tensor *const *in, int n_in,
                      const ts_attr *attrs)
{
  const ts_backend_i *bi = &b->iface;
  if (!def->kernel[bi->kind])
    return false;
  if (!bi->supports_op)
    return true;
  ts_kernel_ctx k = { .def = def, .backend = b, .n_in = n_in, .in = in, .attrs = attrs };
  return bi->supports_op(b, &k);
}

bool ts__buffer_copy(const ts_backend *to, void *dst, const ts_backend *from, const void *src,
                     size_t bytes)
{
  const ts_backend_i *fi = &from->iface, *ti = &to->iface;
  if (ti->copy && ti->copy(to, dst, from, src, bytes))
    return true;
  if (fi->host_visible && ti->host_visible) {
    memmove(dst, src, bytes);
    return true;
  }
  if (fi->host_visible)
    return ti->copy_from_host(to, dst, src, bytes);
  if (ti->host_visible)
    return fi->copy_to_host(from, dst, src, bytes);
  /* two devices that cannot reach each other */
  void *tmp = g_try_malloc(bytes ? bytes : 1);
  bool ok = tmp && fi->copy_to_host(from, tmp, src, bytes) &&
            ti->copy_from_host(to, dst, tmp, bytes);
  g_free(tmp);
  return ok;
}
