/* ts-engine-worker.c — one engine thread fed by a queue; events reach the
 * main thread through idle callbacks that hold only a weak reference. */
#include "ts-engine-worker.h"

#include <stdlib.h>

#include "ts-input-signature.h"
#include "ts-stdout-capture.h"

#define PROGRESS_NS 50000000u /* at most 20 progress updates a second */

typedef struct Shared Shared;

typedef struct {
  Shared *shared;
  guint id;
  char *label;
  TsLoadedModule *module;
  char *function;
  char **args;
  guint repeat;
  gboolean eager;
  GCancellable *cancellable;
  int cancel_flag;   /* set on cancel; the engine watches it while the job runs */
  /* set on the engine thread, read on the main thread after it is done */
  TsRunResult *result;
  GError *error;
  /* main thread only */
  GTask *task;
  gulong cancel_id;
  gboolean returned;
} Job;

/* What the object and its thread share; outlives both. */
struct Shared {
  GWeakRef owner;
  GAsyncQueue *queue;
  GMainContext *context;
};

struct _TsEngineWorker {
  GObject parent_instance;
  Shared *shared;
  GThread *thread;
  int listener_id;
  guint next_id;
  guint n_pending;
};

enum { PROP_0, PROP_BUSY, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_TRACE, SIGNAL_WARNING, SIGNAL_OUTPUT, SIGNAL_PRINT, SIGNAL_PROGRESS, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TsEngineWorker, ts_engine_worker, G_TYPE_OBJECT)
G_DEFINE_QUARK(ts-engine-error-quark, ts_engine_error)

/* The job the engine thread runs now (NULL on every other thread). */
static _Thread_local Job *current_job;
static Job quit_job;

static Shared *shared_ref(Shared *s) { return g_atomic_rc_box_acquire(s); }

static void shared_clear(Shared *s)
{
  g_weak_ref_clear(&s->owner);
  g_async_queue_unref(s->queue);
  g_main_context_unref(s->context);
}

static void shared_unref(Shared *s) { g_atomic_rc_box_release_full(s, (GDestroyNotify)shared_clear); }

void ts_run_result_free(TsRunResult *result)
{
  if (!result)
    return;
  g_free(result->label);
  g_free(result->value_text);
  g_free(result->shape_text);
  g_free(result);
}

static void job_free(Job *job)
{
  g_free(job->label);
  g_clear_object(&job->module);
  g_free(job->function);
  g_strfreev(job->args);
  g_clear_object(&job->cancellable);
  ts_run_result_free(job->result);
  g_clear_error(&job->error);
  g_assert(job->task == NULL);
  shared_unref(job->shared);
}

static Job *job_ref(Job *job) { return g_atomic_rc_box_acquire(job); }
static void job_unref(Job *job) { g_atomic_rc_box_release_full(job, (GDestroyNotify)job_free); }

/* ---- posting to the main thread ------------------------------------------------ */

typedef enum { POST_TRACE, POST_WARNING, POST_OUTPUT, POST_PRINT, POST_PROGRESS } PostKind;

typedef struct {
  Shared *shared;
  PostKind kind;
  GObject *object;  /* TsTraceEntry / TsConsoleLine */
  guint call_id;
  guint warning_kind;
  char *function, *text, *arguments;
  double fraction;
} Post;

static void post_free(gpointer data)
{
  Post *p = data;
  shared_unref(p->shared);
  g_clear_object(&p->object);
  g_free(p->function);
  g_free(p->text);
  g_free(p->arguments);
  g_free(p);
}

static gboolean post_dispatch(gpointer data)
{
  Post *p = data;
  g_autoptr(TsEngineWorker) self = g_weak_ref_get(&p->shared->owner);
  if (!self)
    return G_SOURCE_REMOVE;
  switch (p->kind) {
  case POST_TRACE: g_signal_emit(self, signals[SIGNAL_TRACE], 0, p->object); break;
  case POST_WARNING:
    g_signal_emit(self, signals[SIGNAL_WARNING], 0, p->warning_kind, p->function, p->text,
                  p->arguments);
    break;
  case POST_OUTPUT: g_signal_emit(self, signals[SIGNAL_OUTPUT], 0, p->object); break;
  case POST_PRINT: g_signal_emit(self, signals[SIGNAL_PRINT], 0, p->call_id, p->text); break;
  case POST_PROGRESS: g_signal_emit(self, signals[SIGNAL_PROGRESS], 0, p->call_id, p->fraction); break;
  }
  return G_SOURCE_REMOVE;
}

/* Queues fn on the main context.  Never g_main_context_invoke: when no
 * thread holds that context it runs fn at once, here, on the engine thread. */
static void to_main(GMainContext *context, GSourceFunc fn, gpointer data, GDestroyNotify destroy)
{
  GSource *idle = g_idle_source_new();
  g_source_set_priority(idle, G_PRIORITY_DEFAULT);
  g_source_set_callback(idle, fn, data, destroy);
  g_source_attach(idle, context);
  g_source_unref(idle);
}

static Post *post_new(Job *job, PostKind kind)
{
  Post *p = g_new0(Post, 1);
  p->shared = shared_ref(job->shared);
  p->kind = kind;
  p->call_id = job->id;
  return p;
}

static void post(Job *job, Post *p)
{
  to_main(job->shared->context, post_dispatch, p, post_free);
}

/* ---- the engine thread ---------------------------------------------------------- */

/* Engine events of the calling thread's job, copied for the main thread. */
static void on_engine_event(const ts_event *ev, void *user_data)
{
  Job *job = current_job;
  if (!job || job->shared != user_data)
    return;
  Post *p;
  switch (ev->kind) {
  case TS_EVENT_TRACE:
    p = post_new(job, POST_TRACE);
    p->object = G_OBJECT(ts_trace_entry_new(job->module, &ev->trace, job->label, g_get_real_time()));
    break;
  case TS_EVENT_WARNING:
    p = post_new(job, POST_WARNING);
    p->warning_kind = ev->warning.kind;
    p->function = g_strdup(ev->warning.function_name);
    p->text = g_strdup(ev->warning.message);
    p->arguments = g_strdup(ev->warning.arguments);
    break;
  case TS_EVENT_PRINT:
    p = post_new(job, POST_PRINT);
    p->text = g_strdup(ev->print.text);
    break;
  default:
    return;
  }
  post(job, p);
}

static void on_stdout_line(const char *line, gint64 time_us, gpointer user_data)
{
  Job *job = user_data;
  Post *p = post_new(job, POST_OUTPUT);
  p->object = G_OBJECT(ts_console_line_new(job->id, job->label, time_us, line));
  post(job, p);
}

static void post_progress(Job *job, double fraction)
{
  Post *p = post_new(job, POST_PROGRESS);
  p->fraction = fraction;
  post(job, p);
}

static void fail_engine(Job *job, const char *prefix)
{
  ts_error *e = ts_error_take();
  if (!e) {
    g_set_error(&job->error, TS_ENGINE_ERROR, TS_ERR_INTERNAL, "%s failed without an error",
                job->function);
    return;
  }
  g_set_error(&job->error, TS_ENGINE_ERROR, e->code, "%s%s", prefix ? prefix : "", e->message);
  ts_error_free(e);
}

char *ts_engine_error_input_message(const ts_error *e)
{
  g_return_val_if_fail(e != NULL, NULL);
  if (!e->detail)
    return g_strdup(e->message ? e->message : "unknown error");
  return e->op ? g_strdup_printf("%s: %s", e->op, e->detail) : g_strdup(e->detail);
}

/* An argument the user typed was refused: op and detail, no location. */
static void fail_input(Job *job, const char *prefix)
{
  ts_error *e = ts_error_take();
  if (!e) {
    fail_engine(job, prefix);
    return;
  }
  g_autofree char *message = ts_engine_error_input_message(e);
  g_set_error(&job->error, TS_ENGINE_ERROR, e->code, "%s%s", prefix ? prefix : "", message);
  ts_error_free(e);
}

/* Takes an engine-allocated string. */
static char *dup_free(char *s)
{
  char *copy = g_strdup(s);
  free(s);
  return copy;
}

static char *arg_prefix(ts_function *fn, int i)
{
  if (i < ts_function_n_params(fn))
    return g_strdup_printf("argument %d (%s): ", i, ts_function_param_name(fn, i));
  return g_strdup_printf("argument %d: ", i);
}

/* Calls or traces; fills job->result or job->error.  Tensors live in `scope`. */
static void call_function(Job *job, ts_function *fn, ts_value *values, int n)
{
  gboolean traced_only = FALSE;
  for (int i = 0; i < n; i++) {
    ts_spec spec;
    if (ts_spec_parse(job->args[i], &spec)) {
      values[i] = TS_SPEC_VALUE(spec.dtype, spec.shape);
      traced_only = TRUE;
    } else if (!ts_value_parse(job->args[i], &values[i])) {
      g_autofree char *prefix = arg_prefix(fn, i);
      fail_input(job, prefix);
      return;
    }
  }
  TsRunResult *r = g_new0(TsRunResult, 1);
  r->call_id = job->id;
  r->label = g_strdup(job->label);
  r->traced_only = traced_only;
  if (traced_only) {
    uint64_t t0 = ts_now_ns();
    ts_concrete *cf = ts_function_get_concrete(fn, values, n);
    r->total_ns = ts_now_ns() - t0;
    if (!cf) {
      ts_run_result_free(r);
      fail_engine(job, NULL);
      return;
    }
    r->value_text = ts_concrete_pretty_signature(cf);
    job->result = r;
    return;
  }
  uint64_t last_progress = 0;
  for (guint k = 0; k < job->repeat; k++) {
    if (g_cancellable_is_cancelled(job->cancellable))
      break;
    ts_scope *call_scope = ts_scope_begin();
    uint64_t t0 = ts_now_ns();
    ts_tensor *out = ts_function_call(fn, values, n);
    r->total_ns += ts_now_ns() - t0;
    if (!out) {
      ts_scope_end(call_scope);
      ts_run_result_free(r);
      fail_engine(job, NULL);
      return;
    }
    r->n_calls++;
    if (k + 1 == job->repeat) {
      r->value_text = dup_free(ts_tensor_to_string(out));
      r->shape_text = dup_free(ts_shape_dtype_string(ts_tensor_dtype(out), ts_tensor_shape(out)));
    }
    ts_scope_end(call_scope);
    /* a few updates a second: one per call would flood the main loop */
    uint64_t now = ts_now_ns();
    if (job->repeat > 1 && (now - last_progress >= PROGRESS_NS || k + 1 == job->repeat)) {
      post_progress(job, (double)(k + 1) / job->repeat);
      last_progress = now;
    }
  }
  job->result = r;
}

static void run_job(Job *job)
{
  ts_function *fn = ts_loaded_module_lookup(job->module, job->function);
  if (!fn) {
    g_set_error(&job->error, TS_ENGINE_ERROR, TS_ERR_NOT_FOUND, "%s has no function '%s'",
                ts_loaded_module_get_display_name(job->module), job->function);
    return;
  }
  int n = (int)g_strv_length(job->args);
  int n_params = ts_function_n_params(fn);
  if (n_params > 0 && n != n_params) {
    g_set_error(&job->error, TS_ENGINE_ERROR, TS_ERR_INVALID_ARGUMENT,
                "%s takes %d argument%s, got %d", job->function, n_params,
                n_params == 1 ? "" : "s", n);
    return;
  }
  ts_error_clear();
  ts_run_functions_eagerly(job->eager);
  post_progress(job, 0.0);
  TsStdoutCapture *capture = ts_stdout_capture_begin(on_stdout_line, job);
  ts_scope *scope = ts_scope_begin();
  ts_value *values = g_new0(ts_value, n > 0 ? n : 1);
  ts_watch_cancel_flag(&job->cancel_flag);
  call_function(job, fn, values, n);
  ts_watch_cancel_flag(NULL);
  for (int i = 0; i < n; i++)
    ts_value_clear(&values[i]);
  g_free(values);
  ts_scope_end(scope);
  ts_stdout_capture_end(capture);
}

static gboolean job_done(gpointer data);

static gpointer worker_main(gpointer data)
{
  Shared *shared = data;
  for (;;) {
    Job *job = g_async_queue_pop(shared->queue);
    if (job == &quit_job)
      break;
    current_job = job;
    if (!g_cancellable_is_cancelled(job->cancellable))
      run_job(job);
    current_job = NULL;
    to_main(shared->context, job_done, job, (GDestroyNotify)job_unref);
  }
  shared_unref(shared);
  return NULL;
}

/* ---- the main thread -------------------------------------------------------------- */

/* Completes the task once.  A cancelled job's result is left alone: the
 * engine thread may still be writing it. */
static void job_return(Job *job, gboolean cancelled)
{
  if (job->returned)
    return;
  job->returned = TRUE;
  if (job->cancel_id)
    g_cancellable_disconnect(job->cancellable, job->cancel_id);
  job->cancel_id = 0;
  g_autoptr(GTask) task = g_steal_pointer(&job->task);
  if (cancelled)
    g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
  else if (job->error)
    g_task_return_error(task, g_steal_pointer(&job->error));
  else
    g_task_return_pointer(task, g_steal_pointer(&job->result), (GDestroyNotify)ts_run_result_free);
}

static gboolean job_done(gpointer data)
{
  Job *job = data;
  g_autoptr(TsEngineWorker) self = g_weak_ref_get(&job->shared->owner);
  if (self && --self->n_pending == 0)
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
  job_return(job, g_cancellable_is_cancelled(job->cancellable));
  return G_SOURCE_REMOVE;
}

static gboolean job_cancelled_idle(gpointer data)
{
  job_return(data, TRUE);
  return G_SOURCE_REMOVE;
}

/* Runs in the thread that cancels (the main thread); returning the task
 * here could re-enter the cancellable, so it happens in an idle. */
static void on_job_cancelled(GCancellable *cancellable, gpointer data)
{
  Job *job = data;
  /* the engine stops the running call at its next op */
  __atomic_store_n(&job->cancel_flag, 1, __ATOMIC_RELAXED);
  to_main(job->shared->context, job_cancelled_idle, job_ref(job), (GDestroyNotify)job_unref);
}

char *ts_engine_worker_format_label(guint call_id, const char *function, const char *const *args)
{
  g_autofree char *joined = g_strjoinv(", ", (char **)args);
  return g_strdup_printf("#%u %s(%s)", call_id, function, joined);
}

guint ts_engine_worker_run_async(TsEngineWorker *self, TsLoadedModule *module,
                                 const char *function, const char *const *args, guint repeat,
                                 gboolean eager, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(self), 0);
  g_return_val_if_fail(TS_IS_LOADED_MODULE(module) && function != NULL && args != NULL, 0);
  Job *job = g_atomic_rc_box_new0(Job);
  job->shared = shared_ref(self->shared);
  job->id = ++self->next_id;
  job->label = ts_engine_worker_format_label(job->id, function, args);
  job->module = g_object_ref(module);
  job->function = g_strdup(function);
  job->args = g_strdupv((char **)args);
  job->repeat = MAX(repeat, 1);
  job->eager = eager;
  job->cancellable = cancellable ? g_object_ref(cancellable) : g_cancellable_new();
  job->task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(job->task, ts_engine_worker_run_async);
  g_task_set_check_cancellable(job->task, FALSE);
  if (self->n_pending++ == 0)
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
  job->cancel_id = g_cancellable_connect(job->cancellable, G_CALLBACK(on_job_cancelled),
                                         job_ref(job), (GDestroyNotify)job_unref);
  guint id = job->id; /* the job is the engine thread's once pushed */
  g_async_queue_push(self->shared->queue, job);
  return id;
}

TsRunResult *ts_engine_worker_run_finish(TsEngineWorker *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self), NULL);
  return g_task_propagate_pointer(G_TASK(result), error);
}

gboolean ts_engine_worker_get_busy(TsEngineWorker *self)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(self), FALSE);
  return self->n_pending > 0;
}

static void ts_engine_worker_dispose(GObject *object)
{
  TsEngineWorker *self = TS_ENGINE_WORKER(object);
  if (self->thread) {
    g_async_queue_push_front(self->shared->queue, &quit_job);
    g_thread_join(g_steal_pointer(&self->thread));
  }
  if (self->listener_id)
    ts_listener_remove(self->listener_id);
  self->listener_id = 0;
  G_OBJECT_CLASS(ts_engine_worker_parent_class)->dispose(object);
}

static void ts_engine_worker_finalize(GObject *object)
{
  TsEngineWorker *self = TS_ENGINE_WORKER(object);
  /* jobs still queued were never run: their idles complete them as cancelled */
  Job *job;
  while ((job = g_async_queue_try_pop(self->shared->queue)) != NULL)
    job_unref(job);
  shared_unref(self->shared);
  G_OBJECT_CLASS(ts_engine_worker_parent_class)->finalize(object);
}

static void ts_engine_worker_get_property(GObject *object, guint prop_id, GValue *value,
                                          GParamSpec *pspec)
{
  switch (prop_id) {
  case PROP_BUSY: g_value_set_boolean(value, ts_engine_worker_get_busy(TS_ENGINE_WORKER(object))); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_engine_worker_class_init(TsEngineWorkerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->dispose = ts_engine_worker_dispose;
  object_class->finalize = ts_engine_worker_finalize;
  object_class->get_property = ts_engine_worker_get_property;

  properties[PROP_BUSY] = g_param_spec_boolean("busy", NULL, NULL, FALSE,
                                               G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                                 G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  GType type = G_TYPE_FROM_CLASS(klass);
  signals[SIGNAL_TRACE] = g_signal_new("trace", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                       G_TYPE_NONE, 1, TS_TYPE_TRACE_ENTRY);
  signals[SIGNAL_WARNING] = g_signal_new("warning", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                         G_TYPE_NONE, 4, G_TYPE_UINT, G_TYPE_STRING, G_TYPE_STRING,
                                         G_TYPE_STRING);
  signals[SIGNAL_OUTPUT] = g_signal_new("output", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                        G_TYPE_NONE, 1, TS_TYPE_CONSOLE_LINE);
  signals[SIGNAL_PRINT] = g_signal_new("print", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                       G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_STRING);
  signals[SIGNAL_PROGRESS] = g_signal_new("progress", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                          NULL, G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_DOUBLE);
}

static void ts_engine_worker_init(TsEngineWorker *self)
{
  self->shared = g_atomic_rc_box_new0(Shared);
  g_weak_ref_init(&self->shared->owner, self);
  self->shared->queue = g_async_queue_new();
  self->shared->context = g_main_context_ref_thread_default();
  self->listener_id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_TRACE) | TS_EVENT_MASK(TS_EVENT_WARNING) |
                                        TS_EVENT_MASK(TS_EVENT_PRINT),
                                      on_engine_event, self->shared);
  self->thread = g_thread_new("ts-engine", worker_main, shared_ref(self->shared));
}

TsEngineWorker *ts_engine_worker_new(void)
{
  return g_object_new(TS_TYPE_ENGINE_WORKER, NULL);
}
