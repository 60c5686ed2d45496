/* tensor.c — tensor storage, reference counting and host constructors. */
#include "engine-private.h"

#include <pthread.h>
#include <stdlib.h>

#define TS_DATA_ALIGN 64

static ts_tensor *header_new(ts_dtype dtype, ts_shape shape, int64_t size, size_t extra)
{
  ts_tensor *t = malloc(sizeof *t + extra);
  if (!t)
    return NULL;
  *t = (ts_tensor){ .refcount = 1, .dtype = dtype, .shape = shape, .size = size };
  return t;
}

static bool shape_check(ts_loc loc, ts_dtype dtype, ts_shape shape, int64_t *size)
{
  char buf[TS_INFO_STR];
  if ((unsigned)dtype >= TS_DTYPE_COUNT) {
    ts_error_set(TS_ERR_DTYPE, loc, NULL, "invalid dtype %d", (int)dtype);
    return false;
  }
  if (shape.rank < 0 || shape.rank > TS_MAX_RANK) {
    ts_error_set(TS_ERR_SHAPE, loc, NULL, "rank %d is outside [0, %d]", shape.rank, TS_MAX_RANK);
    return false;
  }
  for (int i = 0; i < shape.rank; i++) {
    if (shape.dim[i] < 0) {
      ts_error_set(TS_ERR_SHAPE, loc, NULL, "negative or unknown dimension in %s",
                   ts__info_str(buf, dtype, shape));
      return false;
    }
  }
  int64_t n = ts_shape_size(shape);
  int64_t bytes;
  if (n < 0 || __builtin_mul_overflow(n, (int64_t)ts_dtype_size(dtype), &bytes) ||
      bytes > TS_MAX_TENSOR_BYTES) {
    ts_error_set(TS_ERR_NO_MEMORY, loc, NULL, "%s is too large to allocate",
                 ts__info_str(buf, dtype, shape));
    return false;
  }
  *size = n;
  return true;
}

/* Live bytes per kind of device and of memory: one relaxed atomic add per
 * allocation and release; an event only when a listener wants one. */
static int64_t live_bytes[TS_DEVICE_KIND_COUNT][TS_MEMORY_KIND_COUNT];

void ts__memory_count(const ts_backend *b, ts_memory_kind what, int64_t delta, ts_loc loc)
{
  const ts_backend_i *bi = &b->iface;
  int64_t live = __atomic_add_fetch(&live_bytes[bi->kind][what], delta, __ATOMIC_RELAXED);
  if (!(__atomic_load_n(&ts__listener_mask, __ATOMIC_RELAXED) & TS_EVENT_MASK(TS_EVENT_MEMORY)))
    return;
  ts_event ev = { .kind = TS_EVENT_MEMORY };
  ev.memory = (ts_memory_event){ .delta_bytes = delta, .live_bytes = live, .device = bi->name,
                                 .loc = loc, .what = what };
  ts__listeners_emit(&ev);
}

static void count_memory(const ts_tensor *t, int64_t delta, ts_loc loc)
{
  ts__memory_count(t->backend, TS_MEMORY_TENSORS, delta, loc);
}

ts_tensor *ts__tensor_alloc_on(ts_loc loc, const ts_backend *backend, ts_dtype dtype,
                               ts_shape shape)
{
  int64_t size;
  if (!shape_check(loc, dtype, shape, &size))
    return NULL;
  size_t bytes = (size_t)size * ts_dtype_size(dtype);
  /* Strings and variants own what their elements point to: host only,
   * inline.  Small CPU tensors are inline too; the rest is a buffer of the
   * backend's type. */
  bool owning = dtype == TS_STRING || dtype == TS_VARIANT;
  bool inline_data = owning || (backend == ts_backend_cpu() && bytes < TS_CPU_CACHE_MIN);
  if (owning && !ts__host_visible(backend))
    backend = ts_backend_cpu();
  ts_buffer *buffer = NULL;
  if (!inline_data) {
    size_t need;
    const ts_buffer_type *bt = &backend->buffer_type;
    bool erred = ts_failed();
    if (!ts_buffer_type_alloc_size(bt, dtype, shape, &need) ||
        !(buffer = ts_buffer_alloc(bt, need, TS_BUFFER_USAGE_TENSOR))) {
      ts_error *why = erred ? NULL : ts_error_take(); /* said again with the tensor */
      char buf[TS_INFO_STR];
      ts_error_set(why ? why->code : TS_ERR_NO_MEMORY, loc, NULL, "cannot allocate %s on %s: %s",
                   ts__info_str(buf, dtype, shape), backend->iface.name,
                   why && why->detail ? why->detail : "out of memory");
      ts_error_free(why);
      return NULL;
    }
  }
  ts_tensor *t = header_new(dtype, shape, size, inline_data ? TS_DATA_ALIGN + bytes : 0);
  if (!t) {
    ts_buffer_free(buffer);
    char buf[TS_INFO_STR];
    ts_error_set(TS_ERR_NO_MEMORY, loc, NULL, "out of memory allocating %s on %s",
                 ts__info_str(buf, dtype, shape), backend->iface.name);
    return NULL;
  }
  if (inline_data) {
    uintptr_t p = (uintptr_t)(t + 1);
    t->data = (void *)((p + TS_DATA_ALIGN - 1) & ~(uintptr_t)(TS_DATA_ALIGN - 1));
  } else {
    t->buffer = buffer;
    t->data = buffer->base;
    t->owns_buffer = true;
  }
  t->backend = backend;
  if (dtype == TS_STRING || dtype == TS_VARIANT)
    memset(t->data, 0, bytes); /* owned pointers: NULL until a kernel sets them */
  t->counted = true;
  count_memory(t, (int64_t)bytes, loc);
  ts__scope_adopt(t);
  return t;
}

ts_tensor *ts__tensor_alloc(ts_loc loc, ts_dtype dtype, ts_shape shape)
{
  return ts__tensor_alloc_on(loc, ts_backend_cpu(), dtype, shape);
}

/* Copies src's elements (on its backend) into dst (on dst's): directly
 * when dst's backend can reach src's buffer, else through the host. */
static bool copy_data(ts_loc loc, ts_tensor *dst, const ts_tensor *src)
{
  size_t bytes = (size_t)src->size * ts_dtype_size(src->dtype);
  return ts__data_copy(dst, src, bytes) || (ts__error_locate(loc), false);
}

ts_tensor *ts__tensor_on(ts_loc loc, ts_tensor *t, const ts_backend *backend)
{
  if (!t->data) {
    /* TensorFlow: "An op outside of the function building code is being
     * passed a Graph tensor" */
    if (t->node && t->name)
      ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL,
                   "tensor '%s:%d' is a symbolic tensor of a traced graph, given to an op that "
                   "runs eagerly: it has no value outside its trace (it leaked out of the trace, "
                   "e.g. through a global or into TS_INIT_SCOPE code)",
                   t->name, t->node_output);
    else
      ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL,
                   "a symbolic tensor has no data to place on %s", ts_backend_name(backend));
    return NULL;
  }
  if (t->backend == backend || t->dtype == TS_STRING || t->dtype == TS_VARIANT)
    return t;
  ts_tensor *copy = ts__tensor_alloc_on(loc, backend, t->dtype, t->shape);
  if (copy && !copy_data(loc, copy, t))
    return NULL; /* the scope releases the copy */
  return copy;
}

/* The constants' copies (ts_tensor.kept): taken (and referenced) or set
 * under this lock.  A copy made while the thread's run records a device
 * plan is filled only when the plan is launched (a CUDA Graph's copy
 * node), so until the run settles it (ts__kept_settle) it waits on the
 * thread's list, where only that thread's ops find it; one made inside
 * an If or a loop the device runs in that plan (exec/device_cf.c) is
 * filled only if the device runs that body, so it is never kept. */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static void keep(ts_tensor *t, ts_tensor *copy)
{
  pthread_mutex_lock(&kept_lock);
  if (!t->kept) /* one backend's at a time: the first stays */
    t->kept = ts_tensor_ref(copy);
  pthread_mutex_unlock(&kept_lock);
}

ts_tensor *ts__tensor_on_kept(ts_loc loc, ts_tensor *t, const ts_backend *backend, bool *copied)
{
  *copied = false;
  if (t->backend == backend || !__atomic_load_n(&t->constant, __ATOMIC_RELAXED)) {
    ts_tensor *on = ts__tensor_on(loc, t, backend);
    *copied = on && on != t;
    return on;
  }
  ts_context *c = ts__context();
  pthread_mutex_lock(&kept_lock);
  ts_tensor *reuse = t->kept && t->kept->backend == backend ? ts_tensor_ref(t->kept) : NULL;
  pthread_mutex_unlock(&kept_lock);
  GPtrArray *pending = c->kept_pending; /* pairs: constant, copy */
  for (guint i = 0; !reuse && pending && i < pending->len; i += 2)
    if (pending->pdata[i] == t && ((ts_tensor *)pending->pdata[i + 1])->backend == backend)
      reuse = ts_tensor_ref(pending->pdata[i + 1]);
  if (reuse) {
    ts__scope_adopt(reuse); /* the op's reference */
    return reuse;
  }
  ts_tensor *on = ts__tensor_on(loc, t, backend);
  *copied = on && on != t;
  if (!*copied)
    return on;
  if (c->plan_recording && c->cf_open) /* a copy node of an If's or a loop's body (on CUDA),
                                         * filled only when the device runs that body: this
                                         * capture's alone */
    return on;
  if (c->plan_recording) {
    if (!pending)
      pending = c->kept_pending = g_ptr_array_new();
    g_ptr_array_add(pending, ts_tensor_ref(t));
    g_ptr_array_add(pending, ts_tensor_ref(on));
  } else {
    keep(t, on); /* queued on the backend's stream already */
  }
  return on;
}

void ts__kept_settle(ts_context *c, bool ok)
{
  GPtrArray *pending = c->kept_pending;
  if (!pending || c->plan_recording) /* the plan that copies them is an outer run's */
    return;
  for (guint i = 0; i < pending->len; i += 2) {
    if (ok)
      keep(pending->pdata[i], pending->pdata[i + 1]);
    ts_tensor_unref(pending->pdata[i]);
    ts_tensor_unref(pending->pdata[i + 1]);
  }
  g_ptr_array_set_size(pending, 0);
}

ts_tensor *ts__tensor_host(ts_loc loc, const ts_tensor *t)
{
  if (!t->data || ts__host_visible(t->backend))
    return (ts_tensor *)t;
  return ts__tensor_on(loc, (ts_tensor *)t, ts_backend_cpu());
}

ts_tensor *ts__tensor_view(ts_tensor *x, ts_shape shape)
{
  if (ts_shape_size(shape) != x->size) {
    char xs[TS_INFO_STR], ys[TS_INFO_STR];
    ts_error_set(TS_ERR_SHAPE, (ts_loc){ 0 }, NULL, "cannot view %s as %s: sizes differ",
                 ts__info_str(xs, x->dtype, x->shape), ts__info_str(ys, x->dtype, shape));
    return NULL;
  }
  /* a graph's view op reuses the header the memory planner holds for it */
  ts_context *c = ts__context();
  ts_tensor *t = c->planned_view;
  if (t) {
    c->planned_view = NULL;
    *t = (ts_tensor){ .refcount = t->refcount + 1, .dtype = x->dtype, .shape = shape,
                      .size = x->size };
  } else if (!(t = header_new(x->dtype, shape, x->size, 0))) {
    ts_error_set(TS_ERR_NO_MEMORY, (ts_loc){ 0 }, NULL, "out of memory");
    return NULL;
  }
  ts_tensor *base = x->base ? x->base : x;
  t->data = x->data;
  t->backend = x->backend;
  t->buffer = x->buffer;
  t->base = ts_tensor_ref(base);
  ts__scope_adopt(t);
  return t;
}

bool ts__tensor_own_copy(ts_tensor *t)
{
  size_t bytes = (size_t)t->size * ts_dtype_size(t->dtype), need;
  const ts_buffer_type *bt = &t->backend->buffer_type;
  bool erred = ts_failed();
  ts_buffer *buf = ts_buffer_type_alloc_size(bt, t->dtype, t->shape, &need)
                     ? ts_buffer_alloc(bt, need, TS_BUFFER_USAGE_TENSOR)
                     : NULL;
  ts_tensor copy = { .data = buf ? buf->base : NULL, .buffer = buf };
  if (!buf || !ts__data_copy(&copy, t, bytes)) {
    ts_buffer_free(buf);
    if (!erred)
      ts_error_clear(); /* the caller says what it could not do */
    return false;
  }
  t->data = buf->base;
  t->buffer = buf;
  t->owns_buffer = true;
  t->counted = true;
  count_memory(t, (int64_t)bytes, (ts_loc){ 0 });
  g_clear_pointer(&t->base, ts_tensor_unref);
  return true;
}

ts_tensor *ts_tensor_ref(ts_tensor *t)
{
  if (t)
    __atomic_add_fetch(&t->refcount, 1, __ATOMIC_RELAXED);
  return t;
}

ts_variant *ts__variant_ref(ts_variant *v)
{
  if (v)
    __atomic_add_fetch(&v->refcount, 1, __ATOMIC_RELAXED);
  return v;
}

void ts__variant_append_name(GString *s, const ts_tensor *t, int64_t i)
{
  const ts_variant *v = t->data ? ((ts_variant *const *)t->data)[i] : NULL;
  g_string_append_printf(s, "<%s>", v && v->kind ? v->kind : "variant");
}

void ts__variant_unref(ts_variant *v)
{
  if (v && __atomic_sub_fetch(&v->refcount, 1, __ATOMIC_ACQ_REL) == 0)
    v->destroy(v);
}

/* Strings and variants own what their elements point to. */
static void release_elements(ts_tensor *t)
{
  if (t->base || !t->data)
    return;
  if (t->dtype == TS_STRING)
    for (int64_t i = 0; i < t->size; i++)
      free(((char **)t->data)[i]);
  else if (t->dtype == TS_VARIANT)
    for (int64_t i = 0; i < t->size; i++)
      ts__variant_unref(((ts_variant **)t->data)[i]);
}

void ts_tensor_unref(ts_tensor *t)
{
  if (!t || __atomic_sub_fetch(&t->refcount, 1, __ATOMIC_ACQ_REL) != 0)
    return;
  release_elements(t);
  for (int i = 0; i < t->n_items; i++)
    ts_tensor_unref(t->items[i]);
  free(t->items);
  if (t->counted)
    count_memory(t, -(int64_t)((size_t)t->size * ts_dtype_size(t->dtype)), (ts_loc){ 0 });
  if (t->owns_buffer)
    ts_buffer_free(t->buffer);
  ts_tensor_unref(t->base);
  ts_tensor_unref(t->kept);
  free(t->name);
  free(t);
}

ts_dtype ts_tensor_dtype(const ts_tensor *t)
{
  TS_CHECK_ARG(t != NULL, TS_DTYPE_COUNT);
  return t->dtype;
}

int ts_tensor_rank(const ts_tensor *t)
{
  TS_CHECK_ARG(t != NULL, -1);
  return t->shape.rank;
}

ts_shape ts_tensor_shape(const ts_tensor *t)
{
  TS_CHECK_ARG(t != NULL, (ts_shape){ .rank = -1 });
  return t->shape;
}

int64_t ts_tensor_dim(const ts_tensor *t, int axis)
{
  int a;
  TS_CHECK_ARG(t != NULL, -1);
  return ts__axis(axis, t->shape.rank, &a) ? t->shape.dim[a] : -1;
}

int64_t ts_tensor_size(const ts_tensor *t)
{
  TS_CHECK_ARG(t != NULL, -1);
  return t->size;
}

void *ts_tensor_data(const ts_tensor *t)
{
  TS_CHECK_ARG(t != NULL, NULL);
  return t->backend && ts__host_visible(t->backend) ? t->data : NULL;
}

/* Element i's bytes, through the backend when the host cannot read them. */
static const void *element(const ts_tensor *t, int64_t i, void *buf)
{
  size_t size = ts_dtype_size(t->dtype), offset = 0;
  if (ts__host_visible(t->backend))
    return (const char *)t->data + (size_t)i * size;
  ts_buffer *b = ts_tensor_buffer(t, &offset);
  if (!ts_buffer_get(b, offset + (size_t)i * size, buf, size))
    memset(buf, 0, size);
  return buf;
}

double ts_tensor_get_f64(const ts_tensor *t, int64_t i)
{
  TS_CHECK_ARG(t && t->data && i >= 0 && i < t->size, 0);
  int64_t buf;
  return ts__load_f64(t->dtype, element(t, i, &buf), 0);
}

int64_t ts_tensor_get_i64(const ts_tensor *t, int64_t i)
{
  TS_CHECK_ARG(t && t->data && i >= 0 && i < t->size, 0);
  int64_t buf;
  return ts__load_i64(t->dtype, element(t, i, &buf), 0);
}

ts_tensor *ts_tensor_new(ts_dtype dtype, ts_shape shape)
{
  ts_tensor *t = ts__tensor_alloc((ts_loc){ 0 }, dtype, shape);
  if (t)
    memset(t->data, 0, (size_t)t->size * ts_dtype_size(dtype));
  if (t && dtype == TS_STRING)
    for (int64_t i = 0; i < t->size; i++)
      ((char **)t->data)[i] = strdup("");
  return t;
}

ts_tensor *ts_constant(ts_dtype dtype, ts_shape shape, const void *data)
{
  if (dtype == TS_VARIANT) {
    ts_error_set(TS_ERR_DTYPE, (ts_loc){ 0 }, NULL, "variant tensors are made by ops only");
    return NULL;
  }
  TS_CHECK_ARG(data || ts_shape_size(shape) <= 0, NULL);
  ts_tensor *t = ts__tensor_alloc((ts_loc){ 0 }, dtype, shape);
  if (!t || !t->size)
    return t;
  if (dtype == TS_STRING) {
    for (int64_t i = 0; i < t->size; i++) {
      const char *s = ((const char *const *)data)[i];
      ((char **)t->data)[i] = strdup(s ? s : "");
    }
  } else {
    memcpy(t->data, data, (size_t)t->size * ts_dtype_size(dtype));
  }
  return t;
}

ts_tensor *ts_scalar_string(const char *s)
{
  return ts_constant(TS_STRING, TS_SCALAR_SHAPE, &s);
}

/* Where a variable lives: on the device it is made under (as a tf.Variable
 * under tf.device), when that device runs the variable ops; else on the
 * CPU.  Its reads and assigns run there (execute.c's place), so a call on
 * the device never copies its weights in. */
static const ts_backend *variable_home(ts_context *c, ts_tensor *initial)
{
  const ts_backend *b = c->device;
  if (!b || b == c->cpu)
    return c->cpu;
  static const ts_op ops[] = { TS_OP_READ_VARIABLE, TS_OP_ASSIGN_VARIABLE,
                               TS_OP_ASSIGN_ADD_VARIABLE, TS_OP_ASSIGN_SUB_VARIABLE };
  ts_tensor *in[2] = { initial, initial };
  for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
    if (!ts__backend_runs(b, ts__op_def(ops[i]), in, ops[i] == TS_OP_READ_VARIABLE ? 1 : 2, NULL))
      return c->cpu;
  return b;
}

ts_tensor *ts_variable_new(ts_tensor *initial, const char *name)
{
  if (!initial) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL, "variable '%s': no initial value",
                 name ? name : "Variable");
    return NULL;
  }
  if (!initial->data || initial->dtype == TS_STRING || initial->dtype == TS_VARIANT) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "variable '%s': the initial value must be a concrete numeric tensor",
                 name ? name : "Variable");
    return NULL;
  }
  ts_context *c = ts__context();
  if (c->retracing) {
    /* graph and eager would drift apart: each trace would get variables of its own */
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "variable '%s': %s creates a variable on a later trace (tf.function "
                 "supports only variables created on the first call; a first call that "
                 "makes variables is traced twice, as by tf.function, so one made on every "
                 "call fails there; eagerly every call would make a new one): create them "
                 "once, outside the function or guarded so that later traces reuse them",
                 name ? name : "Variable", c->trace_chain[0]);
    return NULL;
  }
  /* a fresh tensor: never the caller's, which it copies */
  ts_tensor *v = ts__tensor_alloc_on((ts_loc){ 0 }, variable_home(c, initial), initial->dtype,
                                     initial->shape);
  if (!v || !copy_data((ts_loc){ 0 }, v, initial))
    return NULL;
  /* Out of the scope that ts_constant put it in: the caller owns it. */
  ts_tensor_ref(v);
  c->variables_made++;
  v->is_variable = true;
  v->name = strdup(name ? name : "Variable");
  return v;
}

#define SCALAR_CTOR(name, ctype, dtype)                                  \
  ts_tensor *ts_scalar_##name(ctype v)                                   \
  {                                                                      \
    return ts_constant(dtype, TS_SCALAR_SHAPE, &v);                      \
  }
SCALAR_CTOR(f32, float, TS_F32)
SCALAR_CTOR(f64, double, TS_F64)
SCALAR_CTOR(i32, int32_t, TS_I32)
SCALAR_CTOR(i64, int64_t, TS_I64)
SCALAR_CTOR(bool, bool, TS_BOOL)

/* ---- placement ---------------------------------------------------------------------- */

const ts_backend *ts_tensor_backend(const ts_tensor *t)
{
  return t ? t->backend : NULL;
}

bool ts_is_none(const ts_tensor *t)
{
  return ts__is_none(t);
}

ts_tensor *ts_tensor_to_backend(ts_tensor *t, const ts_backend *b)
{
  if (!t || !b) {
    if (!ts_failed())
      ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                   "ts_tensor_to_backend: %s is NULL", t ? "the backend" : "the tensor");
    return NULL;
  }
  if (ts__is_none(t))
    return t; /* nothing to move */
  return ts__tensor_on((ts_loc){ 0 }, t, b);
}
