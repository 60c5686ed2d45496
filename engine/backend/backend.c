/* backend.c — the backend registry and the engine's calls into backends
 * (streams, what they run). */
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

/* Entry i holding iface, with its buffer type pointing at its own table. */
static void put(int i, const ts_backend_i *iface)
{
  backends[i].iface = *iface;
  backends[i].buffer_type = (ts_buffer_type){ &backends[i].iface.buffer_type, &backends[i] };
}

static void ensure_cpu(void)
{
  if (G_LIKELY(__atomic_load_n(&n_backends, __ATOMIC_ACQUIRE) > 0))
    return;
  pthread_mutex_lock(&register_lock);
  if (n_backends == 0) {
    int n = 0;
    put(n++, &ts__cpu_backend_iface);
    if (sim_wanted())
      put(n++, &ts__sim_backend_iface);
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
  else if (!iface->buffer_type.alloc_buffer)
    why = "its buffer type has no alloc_buffer";
  else if (!iface->buffer_type.alignment ||
           (iface->buffer_type.alignment & (iface->buffer_type.alignment - 1)) ||
           iface->buffer_type.alignment > TS_BUFFER_MAX_ALIGNMENT)
    why = "its buffer type's alignment is not a power of two up to TS_BUFFER_MAX_ALIGNMENT";
  else if ((!iface->graph_plan_create + !iface->graph_plan_update + !iface->graph_plan_compute +
            !iface->graph_plan_free) % 4 != 0)
    why = "graph_plan_create, _update, _compute and _free come together";
  else if (iface->graph_plan_replay && !iface->graph_plan_create)
    why = "graph_plan_replay needs the other whole-plan entries";
  else if (!iface->graph_plan_while_begin != !iface->graph_plan_while_end ||
           (iface->graph_plan_while_begin && !iface->graph_plan_create))
    why = "graph_plan_while_begin and _end come together, with the other whole-plan entries";
  else if (!iface->graph_plan_if_begin != !iface->graph_plan_if_else ||
           !iface->graph_plan_if_begin != !iface->graph_plan_if_end ||
           (iface->graph_plan_if_begin && !iface->graph_plan_while_begin))
    why = "graph_plan_if_begin, _else and _end come together, with the loops' entries";
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
    put(n_backends, iface);
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

uint64_t ts__correlation_recharged(uint64_t c, const uint64_t *captured, const uint64_t *fresh,
                                   int n)
{
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (captured[mid] < c)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && captured[lo] == c ? fresh[lo] : c;
}
