/* ts-worker-debug.c — the app's end of the worker's step debugger
 * (ts-worker-debug.h): method calls on the debugger interface, and stops
 * and history entries read back from their a{sv}, every field checked. */
#include "ts-worker-debug.h"

#include <gio/gunixfdlist.h>

#include "ts-worker-private.h"
#include "ts-worker-protocol.h"
#include "ts-worker-tensor.h"

void ts_debug_tensor_free(TsDebugTensor *t)
{
  if (!t)
    return;
  g_free(t->shape_text);
  g_free(t->device);
  g_clear_pointer(&t->data, g_bytes_unref);
  g_free(t);
}

static void frame_free(TsDebugFrame *f)
{
  g_free(f->name);
  g_free(f->file);
  g_free(f);
}

void ts_debug_op_free(TsDebugOp *op)
{
  if (!op)
    return;
  g_free(op->op);
  g_free(op->device);
  g_free(op->file);
  g_free(op->func);
  g_free(op->node);
  g_free(op->path);
  g_free(op->scope);
  g_free(op->gradient_of);
  g_ptr_array_unref(op->frames);
  g_ptr_array_unref(op->inputs);
  g_ptr_array_unref(op->outputs);
  g_free(op);
}

void ts_debug_stop_free(TsDebugStop *stop)
{
  if (!stop)
    return;
  g_free(stop->reason);
  g_free(stop->error);
  g_free(stop->result_text);
  ts_debug_op_free(stop->op);
  ts_debug_tensor_free(stop->result);
  g_free(stop);
}

/* ---- reading ------------------------------------------------------------------------ */

static gboolean bad(GError **error, const char *what)
{
  g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "a debugger reply with %s", what);
  return FALSE;
}

static TsDebugTensor *read_tensor(GVariant *v, GUnixFDList *fds, GError **error)
{
  GVariantDict d;
  g_variant_dict_init(&d, v);
  TsDebugTensor *t = g_new0(TsDebugTensor, 1);
  if (!g_variant_dict_lookup(&d, "shape-text", "s", &t->shape_text))
    t->shape_text = g_strdup("?");
  gboolean ok = ts_worker_tensor_read(&d, fds, "a debugger tensor", &t->dtype, &t->shape, &t->data,
                                  &t->device, error);
  g_variant_dict_clear(&d);
  if (!ok)
    g_clear_pointer(&t, ts_debug_tensor_free);
  return t;
}

static gboolean read_tensors(GVariantDict *d, const char *key, GUnixFDList *fds, GPtrArray *out, GError **error)
{
  g_autoptr(GVariant) list = g_variant_dict_lookup_value(d, key, G_VARIANT_TYPE("aa{sv}"));
  if (!list)
    return bad(error, key[0] == 'i' ? "no inputs" : "no outputs");
  for (gsize i = 0; i < g_variant_n_children(list); i++) {
    g_autoptr(GVariant) child = g_variant_get_child_value(list, i);
    TsDebugTensor *t = read_tensor(child, fds, error);
    if (!t)
      return FALSE;
    g_ptr_array_add(out, t);
  }
  return TRUE;
}

TsDebugOp *ts_debug_op_read(GVariant *v, GUnixFDList *fds, GError **error)
{
  GVariantDict d;
  g_variant_dict_init(&d, v);
  g_autoptr(TsDebugOp) op = g_new0(TsDebugOp, 1);
  op->frames = g_ptr_array_new_with_free_func((GDestroyNotify)frame_free);
  op->inputs = g_ptr_array_new_with_free_func((GDestroyNotify)ts_debug_tensor_free);
  op->outputs = g_ptr_array_new_with_free_func((GDestroyNotify)ts_debug_tensor_free);
  gboolean ok = g_variant_dict_lookup(&d, "seq", "t", &op->seq) && g_variant_dict_lookup(&d, "op", "s", &op->op)
                  ? TRUE
                  : bad(error, "an op without seq or op");
  g_variant_dict_lookup(&d, "run-id", "t", &op->run_id);
  if (!g_variant_dict_lookup(&d, "device", "s", &op->device))
    op->device = g_strdup("CPU");
  g_variant_dict_lookup(&d, "file", "s", &op->file);
  g_variant_dict_lookup(&d, "func", "s", &op->func);
  g_variant_dict_lookup(&d, "line", "i", &op->line);
  g_variant_dict_lookup(&d, "node", "s", &op->node);
  if (!g_variant_dict_lookup(&d, "path", "s", &op->path))
    op->path = g_strdup(op->node);
  if (!g_variant_dict_lookup(&d, "scope", "s", &op->scope))
    op->scope = g_strdup("");
  g_variant_dict_lookup(&d, "gradient-of", "s", &op->gradient_of);
  g_autoptr(GVariant) frames = g_variant_dict_lookup_value(&d, "frames", G_VARIANT_TYPE("a(ssi)"));
  for (gsize i = 0; frames && i < g_variant_n_children(frames); i++) {
    TsDebugFrame *f = g_new0(TsDebugFrame, 1);
    g_variant_get_child(frames, i, "(ssi)", &f->name, &f->file, &f->line);
    if (!*f->file)
      g_clear_pointer(&f->file, g_free);
    g_ptr_array_add(op->frames, f);
  }
  ok = ok && read_tensors(&d, "inputs", fds, op->inputs, error) && read_tensors(&d, "outputs", fds, op->outputs, error);
  g_variant_dict_clear(&d);
  return ok ? g_steal_pointer(&op) : NULL;
}

TsDebugStop *ts_debug_stop_read(GVariant *v, GUnixFDList *fds, GError **error)
{
  GVariantDict d;
  g_variant_dict_init(&d, v);
  g_autoptr(TsDebugStop) stop = g_new0(TsDebugStop, 1);
  gboolean ok = g_variant_dict_lookup(&d, "reason", "s", &stop->reason) ? TRUE : bad(error, "a stop without a reason");
  g_variant_dict_lookup(&d, "breakpoint", "i", &stop->breakpoint);
  g_variant_dict_lookup(&d, "after", "b", &stop->after);
  g_variant_dict_lookup(&d, "history-n", "i", &stop->history_n);
  g_variant_dict_lookup(&d, "error", "s", &stop->error);
  g_variant_dict_lookup(&d, "result-text", "s", &stop->result_text);
  g_autoptr(GVariant) op = g_variant_dict_lookup_value(&d, "op", G_VARIANT_TYPE_VARDICT);
  if (ok && op)
    ok = (stop->op = ts_debug_op_read(op, fds, error)) != NULL;
  g_autoptr(GVariant) result = g_variant_dict_lookup_value(&d, "result", G_VARIANT_TYPE_VARDICT);
  if (ok && result)
    ok = (stop->result = read_tensor(result, fds, error)) != NULL;
  if (ok && !stop->op && g_strcmp0(stop->reason, "finished") != 0)
    ok = bad(error, "a stop at no op");
  g_variant_dict_clear(&d);
  return ok ? g_steal_pointer(&stop) : NULL;
}

/* ---- calls -------------------------------------------------------------------------- */

typedef struct {
  GVariant *reply;
  GUnixFDList *fds;
} Reply;

static void reply_free(Reply *r)
{
  g_clear_pointer(&r->reply, g_variant_unref);
  g_clear_object(&r->fds);
  g_free(r);
}

static void on_reply(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  Reply *r = g_new0(Reply, 1);
  r->reply = g_dbus_connection_call_with_unix_fd_list_finish(G_DBUS_CONNECTION(source), &r->fds, res, &error);
  if (!r->reply) {
    reply_free(r);
    g_dbus_error_strip_remote_error(error); /* the worker's words, not D-Bus's name for them */
    g_task_return_error(task, error);
    return;
  }
  g_task_return_pointer(task, r, (GDestroyNotify)reply_free);
}

static void call(TsWorker *self, const char *method, GVariant *params, const GVariantType *reply_type,
                 GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data, gpointer tag)
{
  GTask *task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, tag);
  GDBusConnection *connection = _ts_worker_get_connection(self);
  if (!connection) {
    if (params)
      g_variant_unref(g_variant_ref_sink(params));
    g_task_return_new_error(task, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED, "the worker is not running");
    g_object_unref(task);
    return;
  }
  /* no timeout: DebugWait answers when the debuggee stops */
  g_dbus_connection_call_with_unix_fd_list(connection, NULL, TS_WORKER_PATH, TS_WORKER_DEBUG_INTERFACE, method,
                                           params, reply_type, G_DBUS_CALL_FLAGS_NONE, G_MAXINT, NULL,
                                           cancellable, on_reply, task);
}

static Reply *finish(TsWorker *self, GAsyncResult *result, gpointer tag, GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self) && g_task_get_source_tag(G_TASK(result)) == tag, NULL);
  return g_task_propagate_pointer(G_TASK(result), error);
}

void ts_worker_debug_start_async(TsWorker *self, guint call_id, const char *function,
                                 const char *const *args, const char *const *breakpoints, gboolean eager,
                                 const char *device, gboolean run, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data)
{
  static const char *const none[] = { NULL };
  call(self, "DebugStart",
       g_variant_new("(us^as^asbsb)", call_id, function, args ? args : none, breakpoints ? breakpoints : none,
                     eager, device ? device : "", run),
       G_VARIANT_TYPE("(ai)"), cancellable, callback, user_data, ts_worker_debug_start_async);
}

GArray *ts_worker_debug_start_finish(TsWorker *self, GAsyncResult *result, GError **error)
{
  Reply *r = finish(self, result, ts_worker_debug_start_async, error);
  if (!r)
    return NULL;
  g_autoptr(GVariant) ids = g_variant_get_child_value(r->reply, 0);
  gsize n;
  const gint32 *v = g_variant_get_fixed_array(ids, &n, sizeof(gint32));
  GArray *out = g_array_sized_new(FALSE, FALSE, sizeof(int), (guint)n);
  for (gsize i = 0; i < n; i++)
    g_array_append_val(out, v[i]);
  reply_free(r);
  return out;
}

void ts_worker_debug_wait_async(TsWorker *self, GCancellable *cancellable, GAsyncReadyCallback callback,
                                gpointer user_data)
{
  call(self, "DebugWait", NULL, G_VARIANT_TYPE("(a{sv})"), cancellable, callback, user_data,
       ts_worker_debug_wait_async);
}

TsDebugStop *ts_worker_debug_wait_finish(TsWorker *self, GAsyncResult *result, GError **error)
{
  Reply *r = finish(self, result, ts_worker_debug_wait_async, error);
  if (!r)
    return NULL;
  g_autoptr(GVariant) dict = g_variant_get_child_value(r->reply, 0);
  TsDebugStop *stop = ts_debug_stop_read(dict, r->fds, error);
  reply_free(r);
  return stop;
}

void ts_worker_debug_history_async(TsWorker *self, int index, GCancellable *cancellable,
                                   GAsyncReadyCallback callback, gpointer user_data)
{
  call(self, "DebugHistory", g_variant_new("(i)", index), G_VARIANT_TYPE("(a{sv})"), cancellable, callback,
       user_data, ts_worker_debug_history_async);
}

TsDebugOp *ts_worker_debug_history_finish(TsWorker *self, GAsyncResult *result, GError **error)
{
  Reply *r = finish(self, result, ts_worker_debug_history_async, error);
  if (!r)
    return NULL;
  g_autoptr(GVariant) dict = g_variant_get_child_value(r->reply, 0);
  TsDebugOp *op = ts_debug_op_read(dict, r->fds, error);
  reply_free(r);
  return op;
}

void ts_worker_debug_command_async(TsWorker *self, const char *method, GVariant *params,
                                   GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  call(self, method, params, NULL, cancellable, callback, user_data, ts_worker_debug_command_async);
}

GVariant *ts_worker_debug_command_finish(TsWorker *self, GAsyncResult *result, GError **error)
{
  Reply *r = finish(self, result, ts_worker_debug_command_async, error);
  if (!r)
    return NULL;
  GVariant *reply = g_steal_pointer(&r->reply);
  reply_free(r);
  return reply;
}
