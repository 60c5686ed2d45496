/* worker-debug.c — the step debugger over the protocol
 * (TS_WORKER_DEBUG_INTERFACE; docs/worker.md, "Debugging").
 *
 * A debug call runs on a thread of its own, the debuggee, so that the main
 * thread stays free to answer: the app waits for stops with DebugWait, a
 * long poll that a waiting thread answers when the debuggee stops, and
 * steers with DebugResume, DebugPause, DebugStop and DebugBreak.  A stop
 * carries the op's tensors the way Call carries its result.  The session
 * outlives its call (its history stays readable) until the next DebugStart. */
#include "worker-debug.h"

#include <stdlib.h>
#include <string.h>
#include <tracescope-debug.h>

#include "ts-spec-text.h"
#include "ts-worker-error.h"
#include "ts-worker-protocol.h"
#include "ts-worker-tensor.h"

#define WAIT_SLICE_MS 200 /* a waiting thread looks this often whether the worker is closing */

static const char introspection_xml[] =
  "<node>"
  " <interface name='" TS_WORKER_DEBUG_INTERFACE "'>"
  "  <method name='DebugStart'>"
  "   <arg direction='in' type='u' name='call_id'/>"
  "   <arg direction='in' type='s' name='function'/>"
  "   <arg direction='in' type='as' name='args'/>"
  "   <arg direction='in' type='as' name='breakpoints'/>"
  "   <arg direction='in' type='b' name='eager'/>"
  "   <arg direction='in' type='s' name='device'/>"
  "   <arg direction='in' type='b' name='run'/>"
  "   <arg direction='out' type='ai' name='breakpoint_ids'/>"
  "  </method>"
  "  <method name='DebugWait'>"
  "   <arg direction='out' type='a{sv}' name='stop'/>"
  "  </method>"
  "  <method name='DebugResume'>"
  "   <arg direction='in' type='s' name='action'/>"
  "  </method>"
  "  <method name='DebugPause'/>"
  "  <method name='DebugStop'/>"
  "  <method name='DebugBreak'>"
  "   <arg direction='in' type='s' name='spec'/>"
  "   <arg direction='out' type='i' name='id'/>"
  "  </method>"
  "  <method name='DebugUnbreak'>"
  "   <arg direction='in' type='i' name='id'/>"
  "  </method>"
  "  <method name='DebugHistory'>"
  "   <arg direction='in' type='i' name='index'/>"
  "   <arg direction='out' type='a{sv}' name='op'/>"
  "  </method>"
  " </interface>"
  "</node>";

struct WorkerDebug {
  GDBusConnection *connection;
  guint registration;
  WorkerService *service;
  ts_debug_session *session; /* the last debug call's; main thread only */
  GThread *debuggee;         /* running the call, until joined (main thread) */
  GThread *waiter;           /* answering a DebugWait, until joined (main thread) */
  gint closing;              /* atomic: the worker is going away */
  GMutex lock;
  GCond cond;
  gboolean debuggee_done, waiter_done; /* under lock: the thread is about to end */
  /* the call, set up by the main thread before the debuggee starts */
  guint call_id;
  gboolean eager;
  const ts_backend *device;  /* its ops run there; NULL: the CPU */
  ts_function *fn;
  ts_value *values;
  int n_values;
  /* the result, set by the debuggee before it ends (read once joined) */
  char *result_text;
  ts_tensor *result;
};

static const struct {
  const char *name;
  ts_debug_action action;
} ACTIONS[] = {
  { "continue", TS_DEBUG_CONTINUE },
  { "step", TS_DEBUG_STEP_INTO },
  { "over", TS_DEBUG_STEP_OVER },
  { "out", TS_DEBUG_STEP_OUT },
};

static void return_engine_error(GDBusMethodInvocation *inv, const char *prefix)
{
  ts_error *e = ts_error_take();
  g_autofree char *message = e ? ts_engine_error_input_message(e) : g_strdup("failed without an error");
  g_dbus_method_invocation_return_error(inv, TS_ENGINE_ERROR, e ? (int)e->code : TS_ERR_INTERNAL, "%s%s",
                                        prefix, message);
  ts_error_free(e);
}

/* ---- stops on the wire ------------------------------------------------------------ */

static GVariant *tensors_variant(ts_tensor *const *tensors, int n, GUnixFDList *fds, GError **error)
{
  GVariantBuilder b;
  g_variant_builder_init(&b, G_VARIANT_TYPE("aa{sv}"));
  for (int i = 0; i < n; i++) {
    GVariantDict d;
    g_variant_dict_init(&d, NULL);
    if (tensors[i]) {
      char *text = ts_shape_dtype_string(ts_tensor_dtype(tensors[i]), ts_tensor_shape(tensors[i]));
      g_variant_dict_insert(&d, "shape-text", "s", text ? text : "?");
      free(text);
      if (!ts_worker_tensor_write(&d, tensors[i], fds, NULL, error)) {
        g_variant_dict_clear(&d);
        g_variant_builder_clear(&b);
        return NULL;
      }
    }
    g_variant_builder_add_value(&b, g_variant_dict_end(&d));
  }
  return g_variant_builder_end(&b);
}

static GVariant *op_variant(const ts_debug_op *op, GUnixFDList *fds, GError **error)
{
  GVariant *inputs = tensors_variant(op->inputs, op->n_inputs, fds, error);
  GVariant *outputs = inputs ? tensors_variant(op->outputs, op->n_outputs, fds, error) : NULL;
  if (!outputs) {
    if (inputs)
      g_variant_unref(g_variant_ref_sink(inputs));
    return NULL;
  }
  GVariantDict d;
  g_variant_dict_init(&d, NULL);
  g_variant_dict_insert(&d, "run-id", "t", (guint64)op->run_id);
  g_variant_dict_insert(&d, "seq", "t", (guint64)op->seq);
  g_variant_dict_insert(&d, "op", "s", op->op_name ? op->op_name : "?");
  if (op->device)
    g_variant_dict_insert(&d, "device", "s", op->device);
  if (op->file)
    g_variant_dict_insert(&d, "file", "s", op->file);
  if (op->func)
    g_variant_dict_insert(&d, "func", "s", op->func);
  g_variant_dict_insert(&d, "line", "i", op->line);
  if (op->node)
    g_variant_dict_insert(&d, "node", "s", op->node);
  if (op->path)
    g_variant_dict_insert(&d, "path", "s", op->path);
  g_variant_dict_insert(&d, "scope", "s", op->scope ? op->scope : "");
  if (op->gradient_of)
    g_variant_dict_insert(&d, "gradient-of", "s", op->gradient_of);
  GVariantBuilder frames;
  g_variant_builder_init(&frames, G_VARIANT_TYPE("a(ssi)"));
  for (int i = 0; i < op->n_frames; i++)
    g_variant_builder_add(&frames, "(ssi)", op->frames[i].name ? op->frames[i].name : "",
                          op->frames[i].file ? op->frames[i].file : "", op->frames[i].line);
  g_variant_dict_insert_value(&d, "frames", g_variant_builder_end(&frames));
  g_variant_dict_insert_value(&d, "inputs", inputs);
  g_variant_dict_insert_value(&d, "outputs", outputs);
  return g_variant_dict_end(&d);
}

/* ---- the debuggee ----------------------------------------------------------------- */

static void clear_call(WorkerDebug *d)
{
  for (int i = 0; i < d->n_values; i++)
    ts_value_clear(&d->values[i]);
  g_clear_pointer(&d->values, g_free);
  d->n_values = 0;
  g_clear_pointer(&d->result_text, free);
  g_clear_pointer(&d->result, ts_tensor_unref);
}

static gpointer debuggee_main(gpointer data)
{
  WorkerDebug *d = data;
  /* where it is goes on the status page, and Cancel reaches it, as for Call */
  ts_watch_ops((ts_op_watch *)worker_service_last_op(d->service));
  ts_watch_cancel_flag(worker_service_cancel_flag(d->service));
  ts_run_functions_eagerly(d->eager);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *out[TS_MAX_RETURNS];
  int n = -1;
  bool tuple = false;
  TS_DEVICE_SCOPE(d->device) n = ts_debug_call_n(d->session, d->fn, d->values, d->n_values, out,
                                                 TS_MAX_RETURNS, &tuple);
  if (n >= 0) /* a tuple's text holds them all (None: "None"); the values go along for one tensor */
    d->result_text = ts_results_to_string(out, n, tuple);
  if (n == 1)
    d->result = ts_tensor_ref(out[0]);
  ts_scope_end(scope);
  ts_error_clear(); /* the finished stop carries it */
  ts_watch_cancel_flag(NULL);
  ts_watch_ops(NULL);
  worker_mark_end(d->call_id);
  worker_service_set_call(d->service, 0);
  g_mutex_lock(&d->lock);
  d->debuggee_done = TRUE;
  g_cond_broadcast(&d->cond);
  g_mutex_unlock(&d->lock);
  return NULL;
}

/* Main thread: joins the threads that are done; FALSE if one still runs. */
static gboolean join_done(WorkerDebug *d)
{
  g_mutex_lock(&d->lock);
  gboolean debuggee = d->debuggee && d->debuggee_done, waiter = d->waiter && d->waiter_done;
  g_mutex_unlock(&d->lock);
  if (debuggee)
    g_thread_join(g_steal_pointer(&d->debuggee));
  if (waiter)
    g_thread_join(g_steal_pointer(&d->waiter));
  return !d->debuggee && !d->waiter;
}

/* ---- waiting ------------------------------------------------------------------------ */

static void reply_stop(WorkerDebug *d, GDBusMethodInvocation *inv, ts_debug_stop *stop)
{
  g_autoptr(GUnixFDList) fds = g_unix_fd_list_new();
  g_autoptr(GError) error = NULL;
  GVariantDict dict;
  g_variant_dict_init(&dict, NULL);
  g_variant_dict_insert(&dict, "reason", "s", ts_debug_reason_name(stop->reason));
  g_variant_dict_insert(&dict, "breakpoint", "i", stop->breakpoint);
  g_variant_dict_insert(&dict, "after", "b", stop->after);
  g_variant_dict_insert(&dict, "history-n", "i", ts_debug_history_n(d->session));
  if (stop->error)
    g_variant_dict_insert(&dict, "error", "s", stop->error);
  gboolean ok = TRUE;
  if (stop->op.seq) {
    GVariant *op = op_variant(&stop->op, fds, &error);
    ok = op != NULL;
    if (op)
      g_variant_dict_insert_value(&dict, "op", op);
  }
  if (ok && stop->reason == TS_DEBUG_FINISHED) {
    /* the debuggee stores the result after its finished stop */
    g_mutex_lock(&d->lock);
    while (!d->debuggee_done)
      g_cond_wait(&d->cond, &d->lock);
    g_mutex_unlock(&d->lock);
    if (d->result_text)
      g_variant_dict_insert(&dict, "result-text", "s", d->result_text);
    if (d->result) {
      GVariantDict r;
      g_variant_dict_init(&r, NULL);
      char *shape = ts_shape_dtype_string(ts_tensor_dtype(d->result), ts_tensor_shape(d->result));
      g_variant_dict_insert(&r, "shape-text", "s", shape ? shape : "?");
      free(shape);
      ok = ts_worker_tensor_write(&r, d->result, fds, NULL, &error);
      g_variant_dict_insert_value(&dict, "result", g_variant_dict_end(&r));
    }
  }
  if (!ok) {
    g_variant_dict_clear(&dict);
    g_dbus_method_invocation_return_gerror(inv, error);
    return;
  }
  g_dbus_method_invocation_return_value_with_unix_fd_list(
    inv, g_variant_new("(@a{sv})", g_variant_dict_end(&dict)),
    g_unix_fd_list_get_length(fds) > 0 ? fds : NULL);
}

typedef struct {
  WorkerDebug *d;
  GDBusMethodInvocation *inv;
} Wait;

static gpointer waiter_main(gpointer data)
{
  Wait *w = data;
  ts_debug_stop stop = { 0 };
  gboolean got = FALSE;
  while (!got && !g_atomic_int_get(&w->d->closing))
    got = ts_debug_wait(w->d->session, WAIT_SLICE_MS, &stop);
  /* done before the reply is out: the app's next DebugWait may come at
   * once, and joining this thread (what it waits for) takes no longer than
   * the reply */
  g_mutex_lock(&w->d->lock);
  w->d->waiter_done = TRUE;
  g_mutex_unlock(&w->d->lock);
  if (got) {
    reply_stop(w->d, w->inv, &stop);
    ts_debug_stop_clear(&stop);
  } else {
    g_dbus_method_invocation_return_error(w->inv, G_IO_ERROR, G_IO_ERROR_CANCELLED, "the worker is closing");
  }
  g_free(w);
  return NULL;
}

/* ---- methods ------------------------------------------------------------------------ */

static gboolean need_session(WorkerDebug *d, GDBusMethodInvocation *inv)
{
  if (!d->session)
    g_dbus_method_invocation_return_error(inv, TS_WORKER_ERROR, TS_WORKER_ERROR_BUSY,
                                          "no debug call: start one with DebugStart");
  return d->session != NULL;
}

static void handle_start(WorkerDebug *d, GVariant *params, GDBusMethodInvocation *inv)
{
  guint32 call_id;
  const char *function;
  g_autofree const char **args = NULL, **breakpoints = NULL;
  gboolean eager, run;
  const char *device_name;
  g_variant_get(params, "(u&s^a&s^a&sb&sb)", &call_id, &function, &args, &breakpoints, &eager, &device_name,
                &run);
  ts_module *module = worker_service_module(d->service);
  ts_function *fn = module ? ts_module_lookup(module, function) : NULL;
  const ts_backend *device;
  g_autofree char *no_device = NULL;
  if (!worker_find_device(device_name, &device, &no_device)) {
    g_dbus_method_invocation_return_error_literal(inv, TS_ENGINE_ERROR, TS_ERR_INVALID_ARGUMENT, no_device);
    return;
  }
  if (!fn) {
    g_dbus_method_invocation_return_error(inv, TS_ENGINE_ERROR, TS_ERR_NOT_FOUND,
                                          module ? "the module has no function '%s'"
                                                 : "no module is open to debug '%s' in",
                                          function);
    return;
  }
  if (!join_done(d)) {
    g_dbus_method_invocation_return_error(inv, TS_WORKER_ERROR, TS_WORKER_ERROR_BUSY,
                                          "call %u is being debugged: stop it first", d->call_id);
    return;
  }
  int n_args = (int)g_strv_length((char **)args);
  int n_params = ts_function_n_params(fn);
  if (n_params > 0 && n_args != n_params) {
    g_dbus_method_invocation_return_error(inv, TS_ENGINE_ERROR, TS_ERR_INVALID_ARGUMENT,
                                          "%s takes %d argument%s, got %d", function, n_params,
                                          n_params == 1 ? "" : "s", n_args);
    return;
  }
  /* the last call's session (and its history) goes now */
  g_clear_pointer(&d->session, ts_debug_free);
  clear_call(d);
  ts_error_clear();
  d->values = g_new0(ts_value, MAX(n_args, 1));
  d->n_values = n_args;
  for (int i = 0; i < n_args; i++) {
    ts_spec spec;
    g_autofree char *prefix = worker_arg_prefix(fn, i);
    if (ts_spec_parse(args[i], &spec)) { /* a Call traces with it; a debugged call runs */
      g_dbus_method_invocation_return_error(inv, TS_ENGINE_ERROR, TS_ERR_INVALID_ARGUMENT,
                                            "%s'%s' is a spec only, with no values to run op by op: "
                                            "give it values (a Fill, or '%s:uniform')",
                                            prefix, args[i], args[i]);
      clear_call(d);
      return;
    }
    if (!ts_value_parse(args[i], &d->values[i])) {
      return_engine_error(inv, prefix);
      clear_call(d);
      return;
    }
  }
  ts_debug_options options = { .start = run ? TS_DEBUG_START_RUNNING : TS_DEBUG_START_STOPPED };
  d->session = ts_debug_new(&options);
  GVariantBuilder ids;
  g_variant_builder_init(&ids, G_VARIANT_TYPE("ai"));
  for (int i = 0; breakpoints[i]; i++) {
    int id = ts_debug_break_add(d->session, breakpoints[i]);
    if (!id) {
      g_autofree char *prefix = g_strdup_printf("breakpoint '%s': ", breakpoints[i]);
      return_engine_error(inv, prefix);
      g_variant_builder_clear(&ids);
      g_clear_pointer(&d->session, ts_debug_free);
      clear_call(d);
      return;
    }
    g_variant_builder_add(&ids, "i", id);
  }
  d->fn = fn;
  d->call_id = call_id;
  d->eager = eager;
  d->device = device;
  worker_service_set_call(d->service, call_id);
  d->debuggee_done = FALSE;
  d->debuggee = g_thread_new("debuggee", debuggee_main, d);
  g_dbus_method_invocation_return_value(inv, g_variant_new("(@ai)", g_variant_builder_end(&ids)));
}

static void handle_wait(WorkerDebug *d, GVariant *params, GDBusMethodInvocation *inv)
{
  if (!need_session(d, inv))
    return;
  join_done(d);
  if (d->waiter) {
    g_dbus_method_invocation_return_error(inv, TS_WORKER_ERROR, TS_WORKER_ERROR_BUSY,
                                          "a DebugWait is waiting already");
    return;
  }
  Wait *w = g_new(Wait, 1);
  *w = (Wait){ d, inv }; /* the waiter replies: the invocation is its */
  d->waiter_done = FALSE;
  d->waiter = g_thread_new("debug-wait", waiter_main, w);
}

static void handle_resume(WorkerDebug *d, GVariant *params, GDBusMethodInvocation *inv)
{
  const char *name;
  g_variant_get(params, "(&s)", &name);
  if (!need_session(d, inv))
    return;
  for (size_t i = 0; i < G_N_ELEMENTS(ACTIONS); i++) {
    if (strcmp(name, ACTIONS[i].name) != 0)
      continue;
    if (ts_debug_resume(d->session, ACTIONS[i].action))
      g_dbus_method_invocation_return_value(inv, NULL);
    else
      g_dbus_method_invocation_return_error(inv, TS_WORKER_ERROR, TS_WORKER_ERROR_BUSY,
                                            "the debuggee is not stopped: nothing to %s", name);
    return;
  }
  g_dbus_method_invocation_return_error(inv, TS_ENGINE_ERROR, TS_ERR_INVALID_ARGUMENT,
                                        "unknown action '%s' (continue, step, over, out)", name);
}

static void handle_pause(WorkerDebug *d, GVariant *params, GDBusMethodInvocation *inv)
{
  if (!need_session(d, inv))
    return;
  ts_debug_pause(d->session);
  g_dbus_method_invocation_return_value(inv, NULL);
}

static void handle_stop(WorkerDebug *d, GVariant *params, GDBusMethodInvocation *inv)
{
  if (!need_session(d, inv))
    return;
  ts_debug_cancel(d->session);
  g_dbus_method_invocation_return_value(inv, NULL);
}

static void handle_break(WorkerDebug *d, GVariant *params, GDBusMethodInvocation *inv)
{
  const char *spec;
  g_variant_get(params, "(&s)", &spec);
  if (!need_session(d, inv))
    return;
  ts_error_clear();
  int id = ts_debug_break_add(d->session, spec);
  if (!id) {
    g_autofree char *prefix = g_strdup_printf("breakpoint '%s': ", spec);
    return_engine_error(inv, prefix);
    return;
  }
  g_dbus_method_invocation_return_value(inv, g_variant_new("(i)", id));
}

static void handle_unbreak(WorkerDebug *d, GVariant *params, GDBusMethodInvocation *inv)
{
  gint32 id;
  g_variant_get(params, "(i)", &id);
  if (!need_session(d, inv))
    return;
  if (ts_debug_break_remove(d->session, id))
    g_dbus_method_invocation_return_value(inv, NULL);
  else
    g_dbus_method_invocation_return_error(inv, TS_ENGINE_ERROR, TS_ERR_NOT_FOUND, "no breakpoint %d", id);
}

static void handle_history(WorkerDebug *d, GVariant *params, GDBusMethodInvocation *inv)
{
  gint32 index;
  g_variant_get(params, "(i)", &index);
  if (!need_session(d, inv))
    return;
  ts_debug_op op = { 0 };
  if (!ts_debug_history_get(d->session, index, &op)) {
    g_dbus_method_invocation_return_error(inv, TS_ENGINE_ERROR, TS_ERR_INVALID_ARGUMENT,
                                          "no op %d in the history (it holds %d)", index,
                                          ts_debug_history_n(d->session));
    return;
  }
  g_autoptr(GUnixFDList) fds = g_unix_fd_list_new();
  g_autoptr(GError) error = NULL;
  GVariant *v = op_variant(&op, fds, &error);
  ts_debug_op_clear(&op);
  if (!v) {
    g_dbus_method_invocation_return_gerror(inv, error);
    return;
  }
  g_dbus_method_invocation_return_value_with_unix_fd_list(inv, g_variant_new("(@a{sv})", v),
                                                          g_unix_fd_list_get_length(fds) > 0 ? fds : NULL);
}

static void method_call(GDBusConnection *connection, const char *sender, const char *path,
                        const char *interface, const char *method, GVariant *params,
                        GDBusMethodInvocation *inv, gpointer user_data)
{
  static const struct {
    const char *name;
    void (*handle)(WorkerDebug *d, GVariant *params, GDBusMethodInvocation *inv);
  } methods[] = {
    { "DebugStart", handle_start }, { "DebugWait", handle_wait },   { "DebugResume", handle_resume },
    { "DebugPause", handle_pause }, { "DebugStop", handle_stop },   { "DebugBreak", handle_break },
    { "DebugUnbreak", handle_unbreak }, { "DebugHistory", handle_history },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(methods); i++)
    if (strcmp(method, methods[i].name) == 0) {
      methods[i].handle(user_data, params, inv);
      return;
    }
  g_dbus_method_invocation_return_error(inv, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD, "no method %s", method);
}

static const GDBusInterfaceVTable vtable = { .method_call = method_call };

WorkerDebug *worker_debug_new(GDBusConnection *connection, WorkerService *service, GError **error)
{
  g_autoptr(GDBusNodeInfo) info = g_dbus_node_info_new_for_xml(introspection_xml, error);
  if (!info)
    return NULL;
  WorkerDebug *d = g_new0(WorkerDebug, 1);
  g_mutex_init(&d->lock);
  g_cond_init(&d->cond);
  d->connection = g_object_ref(connection);
  d->service = service;
  d->registration = g_dbus_connection_register_object(connection, TS_WORKER_PATH, info->interfaces[0],
                                                      &vtable, d, NULL, error);
  if (!d->registration) {
    worker_debug_free(d);
    return NULL;
  }
  return d;
}

void worker_debug_free(WorkerDebug *d)
{
  if (!d)
    return;
  if (d->registration)
    g_dbus_connection_unregister_object(d->connection, d->registration);
  /* a call still running ends cancelled; a waiter gives up */
  g_atomic_int_set(&d->closing, 1);
  if (d->session)
    ts_debug_cancel(d->session);
  if (d->debuggee)
    g_thread_join(d->debuggee);
  if (d->waiter)
    g_thread_join(d->waiter);
  g_clear_pointer(&d->session, ts_debug_free);
  clear_call(d);
  g_mutex_clear(&d->lock);
  g_cond_clear(&d->cond);
  g_object_unref(d->connection);
  g_free(d);
}
