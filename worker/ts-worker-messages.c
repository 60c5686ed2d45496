/* ts-worker-messages.c — the app's readers of the worker's messages (ts-worker-messages.h). */
#include "ts-worker-messages.h"

#include <string.h>

#include "ts-worker-tensor.h"

/* The recorded session: inline (profile) or in a memfd (profile-fd, profile-size). */
static gboolean read_profile(GVariantDict *d, GUnixFDList *fds, TsCallResult *r, GError **error)
{
  g_autoptr(GVariant) inline_data = g_variant_dict_lookup_value(d, "profile", G_VARIANT_TYPE_BYTESTRING);
  if (inline_data) {
    r->profile = g_variant_get_data_as_bytes(inline_data);
    return TRUE;
  }
  gint32 index;
  guint64 size;
  if (!g_variant_dict_lookup(d, "profile-fd", "h", &index))
    return TRUE; /* none asked for */
  if (!g_variant_dict_lookup(d, "profile-size", "t", &size) || !fds || index < 0 ||
      index >= g_unix_fd_list_get_length(fds) || size == 0 || size > G_MAXSSIZE) {
    g_set_error_literal(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                        "a Call result whose profile is neither inline nor in a valid fd");
    return FALSE;
  }
  r->profile = ts_worker_map_fd(fds, index, 0, size, "the profile the worker sent", error);
  return r->profile != NULL;
}

/* A tuple's tensors (results, aa{sv}), each read as a Call result's own. */
static gboolean read_results(GVariantDict *d, GUnixFDList *fds, TsCallResult *r, GError **error)
{
  g_autoptr(GVariant) items = g_variant_dict_lookup_value(d, "results", G_VARIANT_TYPE("aa{sv}"));
  if (!items)
    return TRUE; /* one tensor */
  gsize n = g_variant_n_children(items);
  if (n < 2 || n > TS_MAX_RETURNS) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "a Call result with %" G_GSIZE_FORMAT " results (a tuple holds 2 to %d)", n,
                TS_MAX_RETURNS);
    return FALSE;
  }
  r->results = g_new0(TsResultValue, n);
  r->n_results = (guint)n;
  for (gsize i = 0; i < n; i++) {
    TsResultValue *v = &r->results[i];
    g_autoptr(GVariant) item = g_variant_get_child_value(items, i);
    GVariantDict id;
    g_variant_dict_init(&id, item);
    char what[48];
    g_snprintf(what, sizeof what, "result %" G_GSIZE_FORMAT " of a Call", i);
    gboolean ok = g_variant_dict_lookup(&id, "value-text", "s", &v->value_text) &&
                  g_variant_dict_lookup(&id, "shape-text", "s", &v->shape_text);
    if (!ok)
      g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "%s without value-text or shape-text",
                  what);
    ok = ok && ts_worker_tensor_read(&id, fds, what, &v->dtype, &v->shape, &v->data, &v->device, error);
    g_variant_dict_clear(&id);
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

TsCallResult *ts_worker_read_result(GVariant *reply, GUnixFDList *fds, guint call_id, GError **error)
{
  if (!g_variant_is_of_type(reply, G_VARIANT_TYPE("(a{sv})"))) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "a Call reply of type %s, not (a{sv})",
                g_variant_get_type_string(reply));
    return NULL;
  }
  g_autoptr(GVariant) dict = g_variant_get_child_value(reply, 0);
  GVariantDict d;
  g_variant_dict_init(&d, dict);
  g_autoptr(TsCallResult) r = g_new0(TsCallResult, 1);
  r->call_id = call_id;
  g_variant_dict_lookup(&d, "traced-only", "b", &r->traced_only);
  if (!g_variant_dict_lookup(&d, "value-text", "s", &r->value_text)) {
    g_variant_dict_clear(&d);
    g_set_error_literal(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "a Call reply without value-text");
    return NULL;
  }
  g_variant_dict_lookup(&d, "shape-text", "s", &r->shape_text);
  g_variant_dict_lookup(&d, "n-calls", "u", &r->n_calls);
  g_variant_dict_lookup(&d, "total-ns", "t", &r->total_ns);
  r->compare = g_variant_dict_lookup_value(&d, "compare", G_VARIANT_TYPE_VARDICT);
  gboolean ok = ts_worker_tensor_read(&d, fds, "a Call result", &r->dtype, &r->shape, &r->data,
                                        &r->device, error) &&
              read_results(&d, fds, r, error) && read_profile(&d, fds, r, error);
  g_variant_dict_clear(&d);
  return ok ? g_steal_pointer(&r) : NULL;
}

gboolean ts_worker_read_fast_reply(GVariant *reply, guint call_id, TsFastAnswer *answer, GError **error)
{
  *answer = (TsFastAnswer){ 0 };
  if (!g_variant_is_of_type(reply, G_VARIANT_TYPE(TS_FAST_REPLY_TYPE))) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "a fast reply of type %s, not %s",
                g_variant_get_type_string(reply), TS_FAST_REPLY_TYPE);
    return FALSE;
  }
  guint32 id, n_signals, status;
  const char *name, *message;
  g_autoptr(GVariant) result = NULL;
  g_variant_get(reply, "(uuu&s&s@a{sv})", &id, &n_signals, &status, &name, &message, &result);
  if (id != call_id || status > TS_FAST_DEFERRED) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "a fast reply for call %u with status %u, to call %u", id, status, call_id);
    return FALSE;
  }
  answer->n_signals = n_signals;
  answer->status = status;
  if (status == TS_FAST_OK) {
    g_autoptr(GVariant) args = g_variant_ref_sink(g_variant_new("(@a{sv})", result));
    answer->result = ts_worker_read_result(args, NULL, call_id, &answer->error);
  } else if (status == TS_FAST_ERROR) {
    answer->error = g_dbus_error_new_for_dbus_error(name, message);
    g_dbus_error_strip_remote_error(answer->error);
  }
  return TRUE;
}

TsWorkerTrace *ts_worker_read_trace(GVariant *params)
{
  if (!g_variant_is_of_type(params, G_VARIANT_TYPE("(ua{sv})")))
    return NULL;
  guint call_id;
  g_autoptr(GVariant) dict = NULL;
  g_variant_get(params, "(u@a{sv})", &call_id, &dict);
  GVariantDict d;
  g_variant_dict_init(&d, dict);
  g_autoptr(TsWorkerTrace) t = g_new0(TsWorkerTrace, 1);
  t->call_id = call_id;
  guint32 reason = 0;
  gboolean ok = g_variant_dict_lookup(&d, "function", "s", &t->function) &&
                g_variant_dict_lookup(&d, "signature", "s", &t->signature) &&
                g_variant_dict_lookup(&d, "reason", "u", &reason) && reason < TS_TRACE_REASON_COUNT;
  t->reason = reason;
  g_variant_dict_lookup(&d, "pretty-signature", "s", &t->pretty_signature);
  g_variant_dict_lookup(&d, "reason-text", "s", &t->reason_text);
  g_variant_dict_lookup(&d, "duration-ns", "t", &t->duration_ns);
  g_variant_dict_lookup(&d, "n-concrete", "i", &t->n_concrete);
  g_variant_dict_lookup(&d, "trace-count", "i", &t->trace_count);
  g_variant_dict_lookup(&d, "error", "s", &t->error);
  g_autoptr(GVariant) graph = g_variant_dict_lookup_value(&d, "graph", G_VARIANT_TYPE_BYTESTRING);
  g_variant_dict_clear(&d);
  if (!ok || (t->n_concrete < 1 && !t->error))
    return NULL;
  if (graph && !(t->graph = ts_graph_deserialize(g_variant_get_data(graph), g_variant_get_size(graph)))) {
    ts_error *e = ts_error_take();
    /* the trace stands without it: the app says the graph did not come */
    g_message("the worker sent a graph for %s that does not read: %s", t->function,
              e ? e->message : "?");
    ts_error_free(e);
  }
  return g_steal_pointer(&t);
}

GPtrArray *ts_worker_read_functions(GVariant *reply, char **title, char **path)
{
  g_autoptr(GVariantIter) iter = NULL;
  g_variant_get(reply, "(ssa(sasas))", title, path, &iter);
  GPtrArray *functions = g_ptr_array_new_with_free_func((GDestroyNotify)ts_worker_function_free);
  TsWorkerFunction fn;
  while (g_variant_iter_next(iter, "(s^as^as)", &fn.name, &fn.params, &fn.examples)) {
    if (!*fn.examples)
      g_clear_pointer(&fn.examples, g_strfreev);
    g_ptr_array_add(functions, g_memdup2(&fn, sizeof fn));
  }
  return functions;
}

/* A field of the status page as a string: the worker may have left it
 * without its NUL. */
static char *field(const char *bytes, gsize size)
{
  return g_utf8_make_valid(bytes, (gssize)strnlen(bytes, size));
}

void ts_worker_read_status(const TsWorkerStatus *st, TsWorkerDeath *d)
{
  if (st->magic != TS_WORKER_STATUS_MAGIC)
    return;
  d->call_id = st->call_id;
  d->exited = st->exited != 0;
  if (d->exited)
    d->exit_status = st->exit_status;
  g_autofree char *op = field(st->op, sizeof st->op);
  g_autofree char *node = field(st->node, sizeof st->node);
  g_autofree char *loc = field(st->loc, sizeof st->loc);
  if (!*op || !d->call_id)
    return;
  g_autoptr(GString) s = g_string_new(op);
  if (*node)
    g_string_append_printf(s, " (%s)", node);
  if (*loc)
    g_string_append_printf(s, " at %s", loc);
  d->last_op = g_string_free(g_steal_pointer(&s), FALSE);
}
