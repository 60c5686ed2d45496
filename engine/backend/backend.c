/* backend.c — the backend registry, placement of tensors, and what a
 * backend's run_op is handed (ts_kernel_ctx accessors). */
#include "../engine-private.h"

#include <pthread.h>

#define MAX_BACKENDS 16

static ts_backend backends[MAX_BACKENDS];
static int n_backends; /* atomic: entries below it are complete */
static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER;

/* The CPU backend is entry 0, filled on first use. */
extern const ts_backend_i ts__cpu_backend_iface;

static void ensure_cpu(void)
{
  if (G_LIKELY(__atomic_load_n(&n_backends, __ATOMIC_ACQUIRE) > 0))
    return;
  pthread_mutex_lock(&register_lock);
  if (n_backends == 0) {
    backends[0].iface = ts__cpu_backend_iface;
    __atomic_store_n(&n_backends, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&register_lock);
}

const ts_backend *ts_backend_cpu(void)
{
  ensure_cpu();
  return &backends[0];
}

int ts_backend_count(void)
{
  ensure_cpu();
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
  if (why) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL, "ts_backend_register: %s", why);
    return NULL;
  }
  ensure_cpu();
  const ts_backend *b = NULL;
  pthread_mutex_lock(&register_lock);
  if (ts_backend_by_name(iface->name))
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

const ts_backend *ts_tensor_backend(const ts_tensor *t)
{
  return t ? t->backend : NULL;
}

ts_tensor *ts_tensor_to_backend(ts_tensor *t, const ts_backend *b)
{
  if (!t || !b) {
    if (!ts_failed())
      ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                   "ts_tensor_to_backend: %s is NULL", t ? "the backend" : "the tensor");
    return NULL;
  }
  return ts__tensor_on((ts_loc){ 0 }, t, b);
}

/* ---- what run_op is handed ----------------------------------------------------------- */

ts_op ts_kernel_op(const ts_kernel_ctx *k)
{
  return k->def->op;
}

int ts_kernel_n_inputs(const ts_kernel_ctx *k)
{
  return k->n_in;
}

ts_tensor *ts_kernel_input(const ts_kernel_ctx *k, int i)
{
  return i >= 0 && i < k->n_in ? k->in[i] : NULL;
}

int ts_kernel_n_outputs(const ts_kernel_ctx *k)
{
  return k->n_out;
}

ts_tensor *ts_kernel_output(const ts_kernel_ctx *k, int i)
{
  return i >= 0 && i < k->n_out ? k->out[i] : NULL;
}

bool ts_kernel_run(ts_kernel_ctx *k, ts_device_kind kind)
{
  ts_kernel_fn fn = (unsigned)kind < TS_DEVICE_KIND_COUNT ? k->def->kernel[kind] : NULL;
  if (!fn)
    return ts__kernel_fail(k, TS_ERR_UNIMPLEMENTED, "has no kernel for this device");
  return fn(k);
}
