/* ts-engine-worker.c — the app's side of its worker process. */
#include "ts-engine-worker.h"

#include <unistd.h>

#include "ts-worker-source.h"

struct _TsEngineWorker {
  GObject parent_instance;
  TsWorker *worker;        /* the process, NULL before the first load */
  TsLoadedModule *module;  /* what is open in it */
  char *source;            /* what `signatures` are for */
  GHashTable *signatures;  /* function name -> GStrv of specs */
  GHashTable *labels;      /* call id -> label, while the call is in flight */
  guint64 memory_limit;
  char *remote;            /* "[user@]host[:port]": workers run there, over ssh; NULL: here */
  guint next_id;
  guint n_pending;
  gboolean profiling;
  gboolean check_eagerly;  /* graph-mode runs run each call eagerly too and compare */
  GPtrArray *devices;      /* TsWorkerDevice: the worker's engine's, once loaded */
  char *devices_note;      /* its note on real devices */
  char *device;            /* where runs go ("SIM:0"); NULL: the CPU */
};

enum { PROP_0, PROP_BUSY, PROP_DEVICES, PROP_PROFILING, PROP_DEVICE, PROP_CHECK_EAGERLY, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_TRACE, SIGNAL_WARNING, SIGNAL_OUTPUT, SIGNAL_PRINT, SIGNAL_PROGRESS, SIGNAL_TRANSFER,
       SIGNAL_MODULE_CHANGED, SIGNAL_DIED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TsEngineWorker, ts_engine_worker, G_TYPE_OBJECT)

void ts_run_result_free(TsRunResult *result)
{
  if (!result)
    return;
  g_free(result->label);
  g_free(result->value_text);
  g_free(result->shape_text);
  tsp_compare_free(result->compare);
  tsp_session_free(result->profile);
  ts_tensor_unref(result->tensor);
  g_free(result->device);
  g_free(result);
}

/* The values a call returned as a tensor of the app's own (a copy: the
 * worker's mapping goes with the call result), or NULL. */
static ts_tensor *tensor_from_result(const TsCallResult *c)
{
  if (!c->data)
    return NULL;
  ts_scope *scope = ts_scope_begin();
  ts_tensor *t = ts_tensor_ref(ts_constant(c->dtype, c->shape, g_bytes_get_data(c->data, NULL)));
  ts_scope_end(scope);
  if (!t)
    ts_error_clear(); /* the text result still shows it */
  return t;
}

static void pending_add(TsEngineWorker *self, int delta)
{
  gboolean was = self->n_pending > 0;
  self->n_pending += delta;
  if (was != (self->n_pending > 0))
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
}

static const char *label_of(TsEngineWorker *self, guint call_id)
{
  return call_id ? g_hash_table_lookup(self->labels, GUINT_TO_POINTER(call_id)) : NULL;
}

/* ---- what the worker reports ----------------------------------------------------------- */

static void on_trace(TsWorker *worker, TsWorkerTrace *t, TsEngineWorker *self)
{
  if (worker != self->worker || !self->module)
    return;
  TsConcreteInfo *cf = t->error ? NULL
                                 : ts_loaded_module_add_trace(self->module, t->function, t->signature,
                                                              t->pretty_signature, t->n_concrete,
                                                              t->trace_count, g_steal_pointer(&t->graph));
  g_autoptr(TsTraceEntry) entry = ts_trace_entry_new(self->module, t, cf, label_of(self, t->call_id),
                                                     g_get_real_time());
  g_signal_emit(self, signals[SIGNAL_TRACE], 0, entry);
}

static void on_warning(TsWorker *worker, guint call_id, guint kind, const char *function,
                       const char *message, const char *arguments, TsEngineWorker *self)
{
  if (worker == self->worker)
    g_signal_emit(self, signals[SIGNAL_WARNING], 0, kind, function, message, arguments);
}

static void on_output(TsWorker *worker, guint call_id, int fd, const char *text, gint64 time_us,
                      TsEngineWorker *self)
{
  const char *label = label_of(self, call_id);
  TsConsoleSource source = fd == 2 ? TS_CONSOLE_SOURCE_STDERR : TS_CONSOLE_SOURCE_HOST;
  /* plain data, no object: of a flood most lines are never shown */
  g_signal_emit(self, signals[SIGNAL_OUTPUT], 0, label ? call_id : 0, label ? label : "", time_us, source, text);
}

static void on_print(TsWorker *worker, guint call_id, const char *text, TsEngineWorker *self)
{
  g_signal_emit(self, signals[SIGNAL_PRINT], 0, call_id, text);
}

static void on_progress(TsWorker *worker, guint call_id, double fraction, TsEngineWorker *self)
{
  g_signal_emit(self, signals[SIGNAL_PROGRESS], 0, call_id, fraction);
}

static void on_transfer(TsWorker *worker, guint call_id, guint64 received, guint64 total, TsEngineWorker *self)
{
  g_signal_emit(self, signals[SIGNAL_TRANSFER], 0, call_id, received, total);
}

static void on_module_changed(TsWorker *worker, const char *path, TsEngineWorker *self)
{
  if (worker == self->worker)
    g_signal_emit(self, signals[SIGNAL_MODULE_CHANGED], 0);
}

static void on_died(TsWorker *worker, TsWorkerDeath *death, TsEngineWorker *self)
{
  /* a worker still loading fails its load instead */
  if (!death->expected && worker == self->worker)
    g_signal_emit(self, signals[SIGNAL_DIED], 0, death, label_of(self, death->call_id));
  if (worker == self->worker) {
    g_clear_object(&self->module);
    g_clear_object(&self->worker);
  }
}

/* Closes the current worker; it goes away once its process has ended. */
static void drop_worker(TsEngineWorker *self)
{
  if (!self->worker)
    return;
  ts_worker_close(self->worker);
  g_clear_object(&self->worker);
  g_clear_object(&self->module);
}

static TsWorker *new_worker(TsEngineWorker *self)
{
  /* a closed worker lives on until its process ended (its pipes hold it):
   * its last lines and its death still arrive, while self is there */
  TsWorker *w = ts_worker_new(self->memory_limit);
  if (self->remote)
    ts_worker_set_remote(w, self->remote);
  g_signal_connect_object(w, "trace", G_CALLBACK(on_trace), self, 0);
  g_signal_connect_object(w, "warning", G_CALLBACK(on_warning), self, 0);
  g_signal_connect_object(w, "output", G_CALLBACK(on_output), self, 0);
  g_signal_connect_object(w, "print", G_CALLBACK(on_print), self, 0);
  g_signal_connect_object(w, "progress", G_CALLBACK(on_progress), self, 0);
  g_signal_connect_object(w, "transfer", G_CALLBACK(on_transfer), self, 0);
  g_signal_connect_object(w, "module-changed", G_CALLBACK(on_module_changed), self, 0);
  g_signal_connect_object(w, "died", G_CALLBACK(on_died), self, 0);
  return w;
}

/* ---- loading ------------------------------------------------------------------------------ */

typedef struct {
  char *source;
  TsWorker *worker;
  TsLoadedModule *module;
  GList *signatures;   /* function names left to apply */
  GPtrArray *devices;  /* ListDevices, NULL if the worker could not say */
  char *devices_note;
} Load;

static void load_free(Load *l)
{
  g_clear_pointer(&l->devices, g_ptr_array_unref);
  g_free(l->devices_note);
  g_free(l->source);
  g_clear_object(&l->worker);
  g_clear_object(&l->module);
  g_list_free_full(l->signatures, g_free);
  g_free(l);
}

/* A load that worked replaces the worker; one that failed leaves the
 * module open before as it was. */
static void load_return(GTask *task, GError *error)
{
  TsEngineWorker *self = g_task_get_source_object(task);
  Load *l = g_task_get_task_data(task);
  pending_add(self, -1);
  if (error) {
    ts_worker_close(l->worker);
    g_task_return_error(task, error);
    return;
  }
  drop_worker(self);
  if (g_strcmp0(l->source, self->source) != 0) {
    g_free(self->source);
    self->source = g_strdup(l->source);
    g_hash_table_remove_all(self->signatures);
  }
  self->worker = g_object_ref(l->worker);
  self->module = g_object_ref(l->module);
  g_clear_pointer(&self->devices, g_ptr_array_unref);
  g_free(self->devices_note);
  self->devices = g_steal_pointer(&l->devices);
  self->devices_note = g_steal_pointer(&l->devices_note);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_DEVICES]);
  g_task_return_pointer(task, g_object_ref(l->module), g_object_unref);
}

static void apply_next_signature(GTask *task);

static void on_signature_applied(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  /* a signature the module no longer takes (it changed) is dropped */
  if (!ts_worker_set_input_signature_finish(TS_WORKER(source), res, &error))
    g_debug("input signature not applied again: %s", error->message);
  apply_next_signature(g_steal_pointer(&task));
}

static void apply_next_signature(GTask *task)
{
  TsEngineWorker *self = g_task_get_source_object(task);
  Load *l = g_task_get_task_data(task);
  if (!l->signatures) {
    load_return(task, NULL);
    g_object_unref(task);
    return;
  }
  g_autofree char *function = l->signatures->data;
  l->signatures = g_list_delete_link(l->signatures, l->signatures);
  const char *const *specs = g_hash_table_lookup(self->signatures, function);
  if (!specs || !ts_loaded_module_lookup(l->module, function)) {
    apply_next_signature(task);
    return;
  }
  ts_worker_set_input_signature_async(l->worker, function, specs, NULL, on_signature_applied, task);
}

/* The worker died while it opened the module (a constructor crashed):
 * "bad.so crashed while loading the module: SIGSEGV (...)", with the
 * backtrace. */
static void say_load_death(GError *error, Load *l)
{
  const TsWorkerDeath *d = ts_worker_get_death(l->worker);
  g_autofree char *name = g_path_get_basename(l->source);
  char *message = d && d->backtrace
                    ? g_strdup_printf("%s %s\n\nbacktrace of the worker:\n%s", name, error->message, d->backtrace)
                    : g_strdup_printf("%s %s", name, error->message);
  g_free(error->message);
  error->message = message;
}

static void on_watching(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  if (!ts_worker_watch_module_finish(TS_WORKER(source), res, &error))
    g_debug("the remote module is not watched: %s", error->message);
}

/* The worker's devices, for the device menu; a worker that cannot say
 * (an older one) has the CPU only.  One that died meanwhile fails the load. */
static void on_devices_listed(GObject *source, GAsyncResult *res, gpointer user_data)
{
  GTask *task = user_data;
  Load *l = g_task_get_task_data(task);
  GError *error = NULL;
  l->devices = ts_worker_list_devices_finish(TS_WORKER(source), res, &l->devices_note, &error);
  if (!l->devices && g_error_matches(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED)) {
    say_load_death(error, l);
    load_return(task, error);
    g_object_unref(task);
    return;
  }
  if (!l->devices) {
    g_debug("the worker lists no devices: %s", error->message);
    g_error_free(error);
  }
  apply_next_signature(task);
}

static void on_opened(GObject *source, GAsyncResult *res, gpointer user_data)
{
  GTask *task = user_data;
  TsEngineWorker *self = g_task_get_source_object(task);
  Load *l = g_task_get_task_data(task);
  GError *error = NULL;
  g_autofree char *title = NULL, *path = NULL;
  g_autoptr(GPtrArray) functions = NULL;
  if (!ts_worker_open_finish(TS_WORKER(source), res, &title, &path, &functions, &error)) {
    if (g_error_matches(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED))
      say_load_death(error, l);
    load_return(task, error);
    g_object_unref(task);
    return;
  }
  l->module = ts_loaded_module_new(l->source, path, title, functions);
  if (self->remote) /* its file is there, not here: the worker watches it */
    ts_worker_watch_module_async(l->worker, NULL, on_watching, NULL);
  if (g_strcmp0(l->source, self->source) == 0) {
    l->signatures = g_hash_table_get_keys(self->signatures);
    for (GList *k = l->signatures; k; k = k->next)
      k->data = g_strdup(k->data);
  }
  ts_worker_list_devices_async(l->worker, g_task_get_cancellable(task), on_devices_listed, task);
}

static void on_started(GObject *source, GAsyncResult *res, gpointer user_data)
{
  GTask *task = user_data;
  Load *l = g_task_get_task_data(task);
  GError *error = NULL;
  if (!ts_worker_start_finish(TS_WORKER(source), res, &error)) {
    load_return(task, error);
    g_object_unref(task);
    return;
  }
  ts_worker_open_async(l->worker, l->source, g_task_get_cancellable(task), on_opened, task);
}

void ts_engine_worker_load_async(TsEngineWorker *self, const char *source,
                                 GCancellable *cancellable, GAsyncReadyCallback callback,
                                 gpointer user_data)
{
  g_return_if_fail(TS_IS_ENGINE_WORKER(self) && source != NULL);
  GTask *task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, ts_engine_worker_load_async);
  Load *l = g_new0(Load, 1);
  l->source = g_strdup(source);
  l->worker = new_worker(self);
  g_task_set_task_data(task, l, (GDestroyNotify)load_free);
  pending_add(self, 1);
  ts_worker_start_async(l->worker, cancellable, on_started, task);
}

TsLoadedModule *ts_engine_worker_load_finish(TsEngineWorker *self, GAsyncResult *result,
                                             GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self), NULL);
  return g_task_propagate_pointer(G_TASK(result), error);
}

/* ---- calls -------------------------------------------------------------------------------- */

typedef struct {
  guint call_id;
  char *function;
  /* read off the main thread into result */
  GBytes *profile;
  GVariant *compare;
  TsRunResult *result;
} Run;

static void run_free(Run *r)
{
  g_free(r->function);
  g_clear_pointer(&r->profile, g_bytes_unref);
  g_clear_pointer(&r->compare, g_variant_unref);
  ts_run_result_free(r->result);
  g_free(r);
}

/* The comparison the worker made, again from the session it recorded:
 * the rows from its windows, the first call from what it measured. */
static tsp_compare *compare_from(tsp_session *s, GVariant *info, const char *function)
{
  guint32 n = 1;
  tsp_filter eager = { TSP_MODE_ALL, 0, 0 }, graph = { TSP_MODE_ALL, 0, 0 };
  g_variant_lookup(info, "n-calls", "u", &n);
  g_variant_lookup(info, "eager-window", "(tt)", &eager.from_ns, &eager.to_ns);
  g_variant_lookup(info, "graph-window", "(tt)", &graph.from_ns, &graph.to_ns);
  tsp_compare *c = tsp_compare_from_session(s, &eager, &graph, (int)MAX(n, 1));
  c->function = tsp_session_string(s, tsp_intern_string(s, function));
  c->eager_window = eager;
  c->graph_window = graph;
  g_variant_lookup(info, "first-call-ns", "d", &c->first_call_ns);
  g_variant_lookup(info, "trace-ns", "d", &c->trace_ns);
  g_variant_lookup(info, "payback-calls", "d", &c->payback_calls);
  return c;
}

static void read_profile(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Run *run = data;
  GError *error = NULL;
  TsRunResult *r = run->result;
  r->profile = tsp_session_deserialize(run->profile, &error);
  if (!r->profile) {
    g_prefix_error(&error, "%s: ", run->function);
    g_task_return_error(task, error);
    return;
  }
  if (run->compare)
    r->compare = compare_from(r->profile, run->compare, run->function);
  g_task_return_pointer(task, g_steal_pointer(&run->result), (GDestroyNotify)ts_run_result_free);
}

static void on_call_done(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  TsEngineWorker *self = g_task_get_source_object(task);
  Run *run = g_task_get_task_data(task);
  GError *error = NULL;
  g_autoptr(TsCallResult) c = ts_worker_call_finish(TS_WORKER(source), res, &error);
  g_autofree char *label = NULL;
  g_hash_table_steal_extended(self->labels, GUINT_TO_POINTER(run->call_id), NULL, (gpointer *)&label);
  pending_add(self, -1);
  if (!c) {
    if (g_error_matches(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED))
      g_prefix_error(&error, "%s ", run->function);
    g_task_return_error(task, error);
    return;
  }
  TsRunResult *r = g_new0(TsRunResult, 1);
  r->call_id = run->call_id;
  r->label = g_steal_pointer(&label);
  r->traced_only = c->traced_only;
  r->value_text = g_steal_pointer(&c->value_text);
  r->shape_text = g_steal_pointer(&c->shape_text);
  r->n_calls = c->n_calls;
  r->total_ns = c->total_ns;
  r->tensor = tensor_from_result(c);
  r->device = g_steal_pointer(&c->device);
  if (!c->profile) {
    g_task_return_pointer(task, r, (GDestroyNotify)ts_run_result_free);
    return;
  }
  run->result = r;
  run->profile = g_steal_pointer(&c->profile);
  run->compare = g_steal_pointer(&c->compare);
  g_task_run_in_thread(task, read_profile);
}

char *ts_engine_worker_format_label(guint call_id, const char *function, const char *const *args)
{
  g_autofree char *joined = g_strjoinv(", ", (char **)args);
  return g_strdup_printf("#%u %s(%s)", call_id, function, joined);
}

static guint start_run(TsEngineWorker *self, TsLoadedModule *module, const char *function,
                       const char *const *args, guint repeat, gboolean eager, GVariant *options,
                       GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr(GVariant) opts = g_variant_ref_sink(options);
  g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, ts_engine_worker_run_async);
  g_task_set_check_cancellable(task, FALSE);
  Run *run = g_new0(Run, 1);
  run->call_id = ++self->next_id;
  run->function = g_strdup(function);
  g_task_set_task_data(task, run, (GDestroyNotify)run_free);
  if (module != self->module || !self->worker) {
    g_task_return_new_error(task, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED,
                            "%s is not open in the worker any more: open it again",
                            ts_loaded_module_get_display_name(module));
    return run->call_id;
  }
  g_hash_table_insert(self->labels, GUINT_TO_POINTER(run->call_id),
                      ts_engine_worker_format_label(run->call_id, function, args));
  pending_add(self, 1);
  ts_worker_call_with_options_async(self->worker, run->call_id, function, args, MAX(repeat, 1), eager,
                                    opts, cancellable, on_call_done, g_object_ref(task));
  return run->call_id;
}

guint ts_engine_worker_run_async(TsEngineWorker *self, TsLoadedModule *module,
                                 const char *function, const char *const *args, guint repeat,
                                 gboolean eager, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(self), 0);
  g_return_val_if_fail(TS_IS_LOADED_MODULE(module) && function != NULL && args != NULL, 0);
  GVariantDict d;
  g_variant_dict_init(&d, NULL);
  if (self->profiling)
    g_variant_dict_insert(&d, "profile", "b", TRUE);
  if (self->check_eagerly && !eager)
    g_variant_dict_insert(&d, "check-eagerly", "b", TRUE);
  if (self->device)
    g_variant_dict_insert(&d, "device", "s", self->device);
  return start_run(self, module, function, args, repeat, eager, g_variant_dict_end(&d), cancellable,
                   callback, user_data);
}

guint ts_engine_worker_compare_async(TsEngineWorker *self, TsLoadedModule *module,
                                     const char *function, const char *const *args, guint n_calls,
                                     GCancellable *cancellable, GAsyncReadyCallback callback,
                                     gpointer user_data)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(self), 0);
  g_return_val_if_fail(TS_IS_LOADED_MODULE(module) && function != NULL && args != NULL, 0);
  GVariantDict d;
  g_variant_dict_init(&d, NULL);
  g_variant_dict_insert(&d, "compare", "u", MAX(n_calls, 1u));
  if (self->device)
    g_variant_dict_insert(&d, "device", "s", self->device);
  return start_run(self, module, function, args, 1, FALSE, g_variant_dict_end(&d), cancellable,
                   callback, user_data);
}

void ts_engine_worker_set_profiling(TsEngineWorker *self, gboolean profiling)
{
  g_return_if_fail(TS_IS_ENGINE_WORKER(self));
  if (self->profiling == !!profiling)
    return;
  self->profiling = !!profiling;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_PROFILING]);
}

GPtrArray *ts_engine_worker_get_devices(TsEngineWorker *self, const char **note)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(self), NULL);
  if (note)
    *note = self->devices_note;
  return self->devices;
}

void ts_engine_worker_set_device(TsEngineWorker *self, const char *device)
{
  g_return_if_fail(TS_IS_ENGINE_WORKER(self));
  if (g_strcmp0(device, ts_engine_worker_get_device(self)) == 0 || (!device && !self->device))
    return;
  g_free(self->device);
  self->device = g_strcmp0(device, "CPU") == 0 ? NULL : g_strdup(device);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_DEVICE]);
}

const char *ts_engine_worker_get_device(TsEngineWorker *self)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(self), NULL);
  return self->device ? self->device : "CPU";
}

void ts_engine_worker_set_check_eagerly(TsEngineWorker *self, gboolean check)
{
  g_return_if_fail(TS_IS_ENGINE_WORKER(self));
  if (self->check_eagerly == !!check)
    return;
  self->check_eagerly = !!check;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_CHECK_EAGERLY]);
}

gboolean ts_engine_worker_get_check_eagerly(TsEngineWorker *self)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(self), FALSE);
  return self->check_eagerly;
}

gboolean ts_engine_worker_get_profiling(TsEngineWorker *self)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(self), FALSE);
  return self->profiling;
}

TsRunResult *ts_engine_worker_run_finish(TsEngineWorker *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self), NULL);
  return g_task_propagate_pointer(G_TASK(result), error);
}

/* ---- input signatures --------------------------------------------------------------------- */

typedef struct {
  char *function;
  GStrv specs;
} Signature;

static void signature_free(Signature *s)
{
  g_free(s->function);
  g_strfreev(s->specs);
  g_free(s);
}

static void on_signature_set(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  TsEngineWorker *self = g_task_get_source_object(task);
  Signature *s = g_task_get_task_data(task);
  GError *error = NULL;
  pending_add(self, -1);
  if (!ts_worker_set_input_signature_finish(TS_WORKER(source), res, &error)) {
    g_task_return_error(task, error);
    return;
  }
  g_hash_table_insert(self->signatures, g_steal_pointer(&s->function), g_steal_pointer(&s->specs));
  g_task_return_boolean(task, TRUE);
}

void ts_engine_worker_set_input_signature_async(TsEngineWorker *self, const char *function,
                                                const char *const *specs,
                                                GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail(TS_IS_ENGINE_WORKER(self) && function != NULL && specs != NULL);
  g_autoptr(GTask) task = g_task_new(self, NULL, callback, user_data);
  g_task_set_source_tag(task, ts_engine_worker_set_input_signature_async);
  if (!self->worker) {
    g_task_return_new_error(task, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED, "no module is open");
    return;
  }
  Signature *s = g_new0(Signature, 1);
  s->function = g_strdup(function);
  s->specs = g_strdupv((char **)specs);
  g_task_set_task_data(task, s, (GDestroyNotify)signature_free);
  pending_add(self, 1);
  ts_worker_set_input_signature_async(self->worker, function, specs, NULL, on_signature_set,
                                      g_object_ref(task));
}

gboolean ts_engine_worker_set_input_signature_finish(TsEngineWorker *self, GAsyncResult *result,
                                                     GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
  return g_task_propagate_boolean(G_TASK(result), error);
}

/* ---- the object ------------------------------------------------------------------------------ */

void ts_engine_worker_set_memory_limit(TsEngineWorker *self, guint64 bytes)
{
  g_return_if_fail(TS_IS_ENGINE_WORKER(self));
  self->memory_limit = bytes;
}

void ts_engine_worker_set_remote(TsEngineWorker *self, const char *target)
{
  g_return_if_fail(TS_IS_ENGINE_WORKER(self));
  g_free(self->remote);
  self->remote = g_strdup(target);
}

const char *ts_engine_worker_get_remote(TsEngineWorker *self)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(self), NULL);
  return self->remote;
}

static void on_source_read_here(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  TsSourceSnippet *s = ts_source_snippet_read_finish(res, &error);
  if (s)
    g_task_return_pointer(task, s, (GDestroyNotify)ts_source_snippet_free);
  else
    g_task_return_error(task, error);
}

static void on_source_read_there(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  TsSourceSnippet *s = ts_worker_read_source_finish(TS_WORKER(source), res, &error);
  if (s)
    g_task_return_pointer(task, s, (GDestroyNotify)ts_source_snippet_free);
  else
    g_task_return_error(task, error);
}

void ts_engine_worker_read_source_async(TsEngineWorker *self, const char *module_file, const char *file, int line,
                                        int context, GCancellable *cancellable, GAsyncReadyCallback callback,
                                        gpointer user_data)
{
  g_return_if_fail(TS_IS_ENGINE_WORKER(self));
  GTask *task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, ts_engine_worker_read_source_async);
  if (!self->remote) {
    g_auto(GStrv) dirs = ts_source_search_dirs(module_file);
    ts_source_snippet_read_async(file, line, context, (const char *const *)dirs, cancellable, on_source_read_here,
                                 task);
  } else if (!self->worker) {
    g_task_return_new_error(task, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED,
                            "%s is on %s, and no worker is connected there to read it", file, self->remote);
    g_object_unref(task);
  } else {
    ts_worker_read_source_async(self->worker, module_file, file, line, context, cancellable, on_source_read_there,
                                task);
  }
}

TsSourceSnippet *ts_engine_worker_read_source_finish(TsEngineWorker *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self), NULL);
  return g_task_propagate_pointer(G_TASK(result), error);
}

guint64 ts_engine_worker_get_memory_limit(TsEngineWorker *self)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(self), 0);
  return self->memory_limit;
}

guint ts_engine_worker_get_running(TsEngineWorker *self)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(self), 0);
  return self->worker ? ts_worker_get_running_call(self->worker) : 0;
}

gboolean ts_engine_worker_get_busy(TsEngineWorker *self)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(self), FALSE);
  return self->n_pending > 0;
}

static void ts_engine_worker_dispose(GObject *object)
{
  TsEngineWorker *self = TS_ENGINE_WORKER(object);
  drop_worker(self);
  G_OBJECT_CLASS(ts_engine_worker_parent_class)->dispose(object);
}

static void ts_engine_worker_finalize(GObject *object)
{
  TsEngineWorker *self = TS_ENGINE_WORKER(object);
  g_free(self->source);
  g_free(self->remote);
  g_free(self->device);
  g_free(self->devices_note);
  g_clear_pointer(&self->devices, g_ptr_array_unref);
  g_hash_table_unref(self->signatures);
  g_hash_table_unref(self->labels);
  G_OBJECT_CLASS(ts_engine_worker_parent_class)->finalize(object);
}

static void ts_engine_worker_get_property(GObject *object, guint prop_id, GValue *value,
                                          GParamSpec *pspec)
{
  switch (prop_id) {
  case PROP_BUSY: g_value_set_boolean(value, ts_engine_worker_get_busy(TS_ENGINE_WORKER(object))); break;
  case PROP_DEVICES: g_value_set_boxed(value, TS_ENGINE_WORKER(object)->devices); break;
  case PROP_PROFILING: g_value_set_boolean(value, TS_ENGINE_WORKER(object)->profiling); break;
  case PROP_DEVICE: g_value_set_string(value, ts_engine_worker_get_device(TS_ENGINE_WORKER(object))); break;
  case PROP_CHECK_EAGERLY: g_value_set_boolean(value, TS_ENGINE_WORKER(object)->check_eagerly); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_engine_worker_set_property(GObject *object, guint prop_id, const GValue *value,
                                          GParamSpec *pspec)
{
  switch (prop_id) {
  case PROP_PROFILING: ts_engine_worker_set_profiling(TS_ENGINE_WORKER(object), g_value_get_boolean(value)); break;
  case PROP_DEVICE: ts_engine_worker_set_device(TS_ENGINE_WORKER(object), g_value_get_string(value)); break;
  case PROP_CHECK_EAGERLY: ts_engine_worker_set_check_eagerly(TS_ENGINE_WORKER(object), g_value_get_boolean(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_engine_worker_class_init(TsEngineWorkerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->dispose = ts_engine_worker_dispose;
  object_class->finalize = ts_engine_worker_finalize;
  object_class->get_property = ts_engine_worker_get_property;
  object_class->set_property = ts_engine_worker_set_property;

  properties[PROP_BUSY] = g_param_spec_boolean("busy", NULL, NULL, FALSE,
                                               G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                                 G_PARAM_STATIC_STRINGS);
  /* notified when a load brings the new worker's list */
  properties[PROP_DEVICES] = g_param_spec_boxed("devices", NULL, NULL, G_TYPE_PTR_ARRAY,
                                                G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                                  G_PARAM_STATIC_STRINGS);
  /* whether runs record a profile; the run controller binds it to the workspace's "profile" */
  properties[PROP_PROFILING] = g_param_spec_boolean("profiling", NULL, NULL, FALSE,
                                                    G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                                      G_PARAM_STATIC_STRINGS);
  /* the run controller binds it to the workspace's "device" */
  properties[PROP_DEVICE] = g_param_spec_string("device", NULL, NULL, "CPU",
                                                G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* win.check-eagerly is a property action over it */
  properties[PROP_CHECK_EAGERLY] = g_param_spec_boolean("check-eagerly", NULL, NULL, FALSE,
                                                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                                          G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  GType type = G_TYPE_FROM_CLASS(klass);
  signals[SIGNAL_TRACE] = g_signal_new("trace", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                       G_TYPE_NONE, 1, TS_TYPE_TRACE_ENTRY);
  signals[SIGNAL_WARNING] = g_signal_new("warning", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                         G_TYPE_NONE, 4, G_TYPE_UINT, G_TYPE_STRING, G_TYPE_STRING,
                                         G_TYPE_STRING);
  signals[SIGNAL_OUTPUT] = g_signal_new("output", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                        G_TYPE_NONE, 5, G_TYPE_UINT, G_TYPE_STRING, G_TYPE_INT64, G_TYPE_INT,
                                        G_TYPE_STRING);
  signals[SIGNAL_PRINT] = g_signal_new("print", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                       G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_STRING);
  signals[SIGNAL_PROGRESS] = g_signal_new("progress", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                          NULL, G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_DOUBLE);
  signals[SIGNAL_TRANSFER] = g_signal_new("transfer", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 3,
                                          G_TYPE_UINT, G_TYPE_UINT64, G_TYPE_UINT64);
  signals[SIGNAL_MODULE_CHANGED] = g_signal_new("module-changed", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                                G_TYPE_NONE, 0);
  signals[SIGNAL_DIED] = g_signal_new("died", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                      G_TYPE_NONE, 2, TS_TYPE_WORKER_DEATH, G_TYPE_STRING);
}

/* Half the machine's memory: enough for real models, short of taking the
 * desktop down with the worker. */
guint64 ts_engine_worker_default_memory_limit(void)
{
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (guint64)pages * (guint64)size / 2 : 0;
}

static void ts_engine_worker_init(TsEngineWorker *self)
{
  self->signatures = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_strfreev);
  self->labels = g_hash_table_new_full(NULL, NULL, NULL, g_free);
  self->memory_limit = ts_engine_worker_default_memory_limit();
}

TsEngineWorker *ts_engine_worker_new(void)
{
  return g_object_new(TS_TYPE_ENGINE_WORKER, NULL);
}

TsWorker *ts_engine_worker_get_worker(TsEngineWorker *self)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(self), NULL);
  return self->worker;
}

guint ts_engine_worker_reserve_call_id(TsEngineWorker *self, const char *function, const char *const *args)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(self), 0);
  guint id = ++self->next_id;
  g_hash_table_insert(self->labels, GUINT_TO_POINTER(id), ts_engine_worker_format_label(id, function, args));
  return id;
}
