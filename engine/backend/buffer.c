/* buffer.c — buffer types and buffers: a backend's memory as objects, and
 * the engine's one way of moving bytes in and out of it.  Every range is
 * checked here, once, before a backend's entry sees it. */
#include "../engine-private.h"

#include <stdint.h>

/* ---- buffer types ---------------------------------------------------------------------- */

const ts_buffer_type *ts_backend_buffer_type(const ts_backend *b)
{
  TS_CHECK_ARG(b != NULL, NULL);
  return &b->buffer_type;
}

const ts_backend *ts_buffer_type_backend(const ts_buffer_type *bt)
{
  TS_CHECK_ARG(bt != NULL, NULL);
  return bt->backend;
}

const char *ts_buffer_type_name(const ts_buffer_type *bt)
{
  TS_CHECK_ARG(bt != NULL, NULL);
  return bt->iface->name ? bt->iface->name : bt->backend->iface.name;
}

size_t ts_buffer_type_alignment(const ts_buffer_type *bt)
{
  TS_CHECK_ARG(bt != NULL, 0);
  return bt->iface->alignment;
}

size_t ts_buffer_type_max_size(const ts_buffer_type *bt)
{
  TS_CHECK_ARG(bt != NULL, 0);
  return bt->iface->max_size ? bt->iface->max_size : SIZE_MAX;
}

bool ts_buffer_type_is_host(const ts_buffer_type *bt)
{
  TS_CHECK_ARG(bt != NULL, false);
  return bt->iface->is_host;
}

bool ts_buffer_type_alloc_size(const ts_buffer_type *bt, ts_dtype dtype, ts_shape shape,
                               size_t *bytes)
{
  TS_CHECK_ARG(bt != NULL && bytes != NULL, false);
  TS_CHECK_ARG((unsigned)dtype < TS_DTYPE_COUNT && shape.rank >= 0 && shape.rank <= TS_MAX_RANK,
               false);
  size_t n = ts_dtype_size(dtype);
  bool zero = false;
  for (int i = 0; i < shape.rank; i++)
    zero |= shape.dim[i] == 0;
  for (int i = 0; i < shape.rank && !zero; i++) {
    char buf[TS_INFO_STR];
    if (shape.dim[i] < 0 || __builtin_mul_overflow(n, (size_t)shape.dim[i], &n)) {
      ts_error_set(shape.dim[i] < 0 ? TS_ERR_SHAPE : TS_ERR_NO_MEMORY, (ts_loc){ 0 }, NULL,
                   "%s %s in a buffer of %s", ts__info_str(buf, dtype, shape),
                   shape.dim[i] < 0 ? "has an unknown dimension: no size" : "is too large",
                   ts_buffer_type_name(bt));
      return false;
    }
  }
  if (zero)
    n = 0;
  *bytes = bt->iface->get_alloc_size ? bt->iface->get_alloc_size(bt, dtype, shape, n) : n;
  return true;
}

/* ---- buffers --------------------------------------------------------------------------- */

ts_buffer *ts_buffer_new(const ts_buffer_type *bt, const ts_buffer_i *iface, void *base,
                         size_t size, void *context)
{
  TS_CHECK_ARG(bt != NULL && iface != NULL, NULL);
  ts_buffer *buf = g_try_new(ts_buffer, 1);
  if (buf)
    *buf = (ts_buffer){ .iface = iface, .type = bt, .base = base, .size = size,
                        .context = context };
  return buf;
}

ts_buffer *ts_buffer_alloc(const ts_buffer_type *bt, size_t size, ts_buffer_usage usage)
{
  TS_CHECK_ARG(bt != NULL && (unsigned)usage < TS_BUFFER_USAGE_COUNT, NULL);
  const char *name = ts_buffer_type_name(bt);
  if (size > ts_buffer_type_max_size(bt)) {
    ts_error_set(TS_ERR_NO_MEMORY, (ts_loc){ 0 }, NULL,
                 "%zu bytes exceed the largest buffer of %s (%zu bytes)", size, name,
                 ts_buffer_type_max_size(bt));
    return NULL;
  }
  ts_buffer *buf = bt->iface->alloc_buffer(bt, size);
  if (!buf) {
    ts_error_set(TS_ERR_NO_MEMORY, (ts_loc){ 0 }, NULL,
                 "out of memory allocating a %zu-byte buffer of %s", size, name);
    return NULL;
  }
  if (!buf->base || buf->size < size || ((uintptr_t)buf->base & (bt->iface->alignment - 1))) {
    ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL,
                 "%s gave a buffer of %zu bytes at %p for %zu bytes %zu-byte aligned", name,
                 buf->size, (void *)buf->base, size, bt->iface->alignment);
    ts_buffer_free(buf);
    return NULL;
  }
  buf->usage = usage;
  return buf;
}

void ts_buffer_free(ts_buffer *buf)
{
  if (!buf)
    return;
  buf->iface->free_buffer(buf);
  g_free(buf);
}

const ts_buffer_type *ts_buffer_get_type(const ts_buffer *buf)
{
  TS_CHECK_ARG(buf != NULL, NULL);
  return buf->type;
}

void *ts_buffer_base(const ts_buffer *buf)
{
  TS_CHECK_ARG(buf != NULL, NULL);
  return buf->base;
}

size_t ts_buffer_size(const ts_buffer *buf)
{
  TS_CHECK_ARG(buf != NULL, 0);
  return buf->size;
}

ts_buffer_usage ts_buffer_get_usage(const ts_buffer *buf)
{
  TS_CHECK_ARG(buf != NULL, TS_BUFFER_USAGE_COUNT);
  return buf->usage;
}

void *ts_buffer_context(const ts_buffer *buf)
{
  TS_CHECK_ARG(buf != NULL, NULL);
  return buf->context;
}

/* Is [offset, offset + bytes) within buf?  Else an error naming what. */
static bool in_range(const char *what, const ts_buffer *buf, size_t offset, size_t bytes)
{
  size_t end;
  if (!__builtin_add_overflow(offset, bytes, &end) && end <= buf->size)
    return true;
  ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
               "%s: %zu bytes at offset %zu are outside the %zu-byte buffer of %s", what, bytes,
               offset, buf->size, ts_buffer_type_name(buf->type));
  return false;
}

/* A backend's entry returned false: its error, or one naming what failed. */
static bool failed(const char *what, const ts_buffer *buf)
{
  if (!ts_failed())
    ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL, "%s on %s failed", what,
                 ts_buffer_type_name(buf->type));
  return false;
}

void *ts_buffer_at(const ts_buffer *buf, size_t offset, size_t bytes, size_t alignment)
{
  TS_CHECK_ARG(buf != NULL && alignment && !(alignment & (alignment - 1)), NULL);
  if (!in_range("ts_buffer_at", buf, offset, bytes))
    return NULL;
  if (((uintptr_t)buf->base + offset) & (alignment - 1)) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "ts_buffer_at: offset %zu in a buffer of %s is not %zu-byte aligned", offset,
                 ts_buffer_type_name(buf->type), alignment);
    return NULL;
  }
  return buf->base + offset;
}

bool ts_buffer_set(ts_buffer *buf, size_t offset, const void *host_src, size_t bytes)
{
  TS_CHECK_ARG(buf != NULL && (host_src != NULL || bytes == 0), false);
  if (!in_range("ts_buffer_set", buf, offset, bytes))
    return false;
  return !bytes || buf->iface->set(buf, offset, host_src, bytes) ||
         failed("a copy from the host", buf);
}

void ts__plan_note_break(const ts_backend *b)
{
  ts_context *c = ts__context();
  if (!c->plan_recording || c->plan_host_read || b != c->device)
    return;
  c->plan_host_read = true;
  const ts_op_call *op = c->plan_op;
  c->plan_break = (ts_plan_break){ op ? op->def->name : "(no op)",
                                   op && c->plan_site ? c->plan_site->node : NULL,
                                   op ? op->loc : (ts_loc){ 0 } };
}

bool ts_buffer_get(const ts_buffer *buf, size_t offset, void *host_dst, size_t bytes)
{
  TS_CHECK_ARG(buf != NULL && (host_dst != NULL || bytes == 0), false);
  if (!in_range("ts_buffer_get", buf, offset, bytes))
    return false;
  ts_context *c = ts__context();
  if (c->plan_rec) /* the host reads a capture's value: what it does with it is not in the plan */
    c->plan_rec->host_work = true;
  ts__plan_note_break(ts_buffer_type_backend(ts_buffer_get_type(buf)));
  return !bytes || buf->iface->get(buf, offset, host_dst, bytes) ||
         failed("a copy to the host", buf);
}

bool ts_buffer_memset(ts_buffer *buf, size_t offset, int value, size_t bytes)
{
  TS_CHECK_ARG(buf != NULL, false);
  if (!in_range("ts_buffer_memset", buf, offset, bytes))
    return false;
  if (!bytes)
    return true;
  if (buf->iface->memset)
    return buf->iface->memset(buf, offset, value, bytes) || failed("a memset", buf);
  void *tmp = g_try_malloc(bytes);
  bool ok = tmp && (memset(tmp, value, bytes), ts_buffer_set(buf, offset, tmp, bytes));
  g_free(tmp);
  return ok || failed("a memset", buf);
}

/* Through the host: src's bytes into dst (neither is_host), in pieces
 * of at most a few MB. */
static bool bounce(ts_buffer *dst, size_t dst_offset, const ts_buffer *src, size_t src_offset,
                   size_t bytes)
{
  size_t piece = MIN(bytes, (size_t)4 << 20);
  void *tmp = g_try_malloc(piece);
  if (!tmp) {
    ts_error_set(TS_ERR_NO_MEMORY, (ts_loc){ 0 }, NULL,
                 "out of memory staging a copy from %s to %s", ts_buffer_type_name(src->type),
                 ts_buffer_type_name(dst->type));
    return false;
  }
  bool ok = true;
  for (size_t done = 0; ok && done < bytes; done += piece) {
    size_t n = MIN(piece, bytes - done);
    ok = ts_buffer_get(src, src_offset + done, tmp, n) &&
         ts_buffer_set(dst, dst_offset + done, tmp, n);
  }
  g_free(tmp);
  return ok;
}

bool ts_buffer_copy(ts_buffer *dst, size_t dst_offset, const ts_buffer *src, size_t src_offset,
                    size_t bytes)
{
  TS_CHECK_ARG(dst != NULL && src != NULL, false);
  if (!in_range("ts_buffer_copy to", dst, dst_offset, bytes) ||
      !in_range("ts_buffer_copy from", src, src_offset, bytes))
    return false;
  if (!bytes)
    return true;
  bool erred = ts_failed(); /* copy_from fails with an error, cannot without one */
  if (dst->iface->copy_from && dst->iface->copy_from(dst, dst_offset, src, src_offset, bytes))
    return true;
  if (!erred && ts_failed())
    return false;
  bool host_dst = dst->type->iface->is_host, host_src = src->type->iface->is_host;
  if (host_dst && host_src) {
    memmove(dst->base + dst_offset, src->base + src_offset, bytes);
    return true;
  }
  if (host_src)
    return ts_buffer_set(dst, dst_offset, src->base + src_offset, bytes);
  if (host_dst)
    return ts_buffer_get(src, src_offset, dst->base + dst_offset, bytes);
  return bounce(dst, dst_offset, src, src_offset, bytes);
}

/* ---- tensors' data --------------------------------------------------------------------- */

ts_buffer *ts_tensor_buffer(const ts_tensor *t, size_t *offset)
{
  TS_CHECK_ARG(t != NULL, NULL);
  if (t->buffer && offset)
    *offset = (size_t)((const char *)t->data - t->buffer->base);
  return t->buffer;
}

bool ts__data_copy(const ts_tensor *dst, const ts_tensor *src, size_t bytes)
{
  ts_buffer *d = dst->buffer, *s = src->buffer;
  size_t doff = d ? (size_t)((char *)dst->data - d->base) : 0;
  size_t soff = s ? (size_t)((char *)src->data - s->base) : 0;
  if (d && s)
    return ts_buffer_copy(d, doff, s, soff, bytes);
  if (d)
    return ts_buffer_set(d, doff, src->data, bytes);
  if (s)
    return ts_buffer_get(s, soff, dst->data, bytes);
  if (bytes)
    memmove(dst->data, src->data, bytes);
  return true;
}
