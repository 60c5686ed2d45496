/* worker-service.c — the worker's side of the protocol: opens the module,
 * makes calls on the main thread (one at a time, in the order they came)
 * and reports what the engine does during a call as signals.  Cancel is
 * taken off the connection's own thread by a filter, so it reaches a call
 * that keeps the main thread busy. */
#include "worker-service.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracescope-backend.h"
#include "tracescope-onnx.h"
#include "tracescope-profiler.h"
#include "ts-spec-text.h"
#include "ts-worker-error.h"
#include "ts-worker-origins.h"
#include "ts-worker-protocol.h"
#include "ts-fast-channel.h"
#include "ts-worker-blob.h"
#include "ts-worker-tensor.h"
#include "worker-fast.h"
#include "worker-fds.h"
#include "ts-module-watch.h"
#include "worker-source.h"
#include "worker-status.h"

#define PROGRESS_NS 50000000u /* at most 20 progress updates a second */

static const char introspection_xml[] =
  "<node>"
  " <interface name='" TS_WORKER_INTERFACE "'>"
  "  <method name='Hello'>"
  "   <arg direction='in' type='u' name='version'/>"
  "   <arg direction='out' type='u' name='version'/>"
  "   <arg direction='out' type='x' name='pid'/>"
  "  </method>"
  "  <method name='Open'>"
  "   <arg direction='in' type='s' name='source'/>"
  "   <arg direction='out' type='s' name='title'/>"
  "   <arg direction='out' type='s' name='path'/>"
  "   <arg direction='out' type='a(sasas)' name='functions'/>"
  "  </method>"
  "  <method name='SetInputSignature'>"
  "   <arg direction='in' type='s' name='function'/>"
  "   <arg direction='in' type='as' name='specs'/>"
  "  </method>"
  "  <method name='Call'>"
  "   <arg direction='in' type='u' name='call_id'/>"
  "   <arg direction='in' type='s' name='function'/>"
  "   <arg direction='in' type='as' name='args'/>"
  "   <arg direction='in' type='u' name='repeat'/>"
  "   <arg direction='in' type='b' name='eager'/>"
  "   <arg direction='in' type='a{sv}' name='options'/>"
  "   <arg direction='out' type='a{sv}' name='result'/>"
  "  </method>"
  "  <method name='GetOptimized'>"
  "   <arg direction='in' type='s' name='function'/>"
  "   <arg direction='in' type='s' name='signature'/>"
  "   <arg direction='out' type='a{sv}' name='optimized'/>"
  "  </method>"
  "  <method name='Cancel'>"
  "   <arg direction='in' type='u' name='call_id'/>"
  "  </method>"
  "  <method name='ListDevices'>"
  "   <arg direction='out' type='a(sstt)' name='devices'/>"
  "   <arg direction='out' type='s' name='note'/>"
  "  </method>"
  "  <method name='OpenFastChannel'>"
  "   <arg direction='out' type='h' name='channel'/>"
  "   <arg direction='out' type='u' name='area_size'/>"
  "  </method>"
  "  <method name='ReadBlob'>"
  "   <arg direction='in' type='u' name='blob'/>"
  "   <arg direction='in' type='t' name='offset'/>"
  "   <arg direction='in' type='u' name='length'/>"
  "   <arg direction='out' type='ay' name='bytes'/>"
  "  </method>"
  "  <method name='DropBlob'>"
  "   <arg direction='in' type='u' name='blob'/>"
  "  </method>"
  "  <method name='ReadSource'>"
  "   <arg direction='in' type='s' name='module'/>"
  "   <arg direction='in' type='s' name='file'/>"
  "   <arg direction='in' type='i' name='line'/>"
  "   <arg direction='in' type='i' name='context'/>"
  "   <arg direction='out' type='s' name='path'/>"
  "   <arg direction='out' type='i' name='first_line'/>"
  "   <arg direction='out' type='as' name='lines'/>"
  "  </method>"
  "  <method name='WatchModule'>"
  "  </method>"
  "  <method name='TakeFastReply'>"
  "   <arg direction='in' type='u' name='call_id'/>"
  "   <arg direction='out' type='a{sv}' name='result'/>"
  "  </method>"
  "  <signal name='Trace'>"
  "   <arg type='u' name='call_id'/>"
  "   <arg type='a{sv}' name='trace'/>"
  "  </signal>"
  "  <signal name='Warning'>"
  "   <arg type='u' name='call_id'/>"
  "   <arg type='u' name='kind'/>"
  "   <arg type='s' name='function'/>"
  "   <arg type='s' name='message'/>"
  "   <arg type='s' name='arguments'/>"
  "  </signal>"
  "  <signal name='Print'>"
  "   <arg type='u' name='call_id'/>"
  "   <arg type='s' name='text'/>"
  "  </signal>"
  "  <signal name='ModuleChanged'>"
  "   <arg type='u' name='call_id'/>"
  "   <arg type='s' name='path'/>"
  "  </signal>"
  "  <signal name='Progress'>"
  "   <arg type='u' name='call_id'/>"
  "   <arg type='d' name='fraction'/>"
  "  </signal>"
  " </interface>"
  "</node>";

/* Where a method's answer goes: the D-Bus invocation (inv), or, for a call
 * on the fast channel (inv NULL), kept here for worker-fast.c to send. */
struct WorkerAnswer {
  GDBusMethodInvocation *inv;
  GVariant *value;   /* the reply's arguments, e.g. (a{sv}) */
  GUnixFDList *fds;
  GError *error;
};

struct WorkerService {
  GDBusConnection *connection;
  guint registration;
  guint filter;
  int listener;
  TsWorkerStatus *status;
  const ts_op_watch *last_op;
  ts_module *module;
  ts_onnx_model *model;  /* a model file opened as a module: what module's functions run */
  guint call_id;         /* the call running (main thread), 0 between calls */
  guint cancel_id;       /* the last call Cancel named (any thread) */
  int cancel_flag;       /* the engine watches it during a call */
  guint n_signals;       /* signals emitted so far (any thread) */
  /* one method or call at a time: the main thread's and the fast channel's */
  pthread_mutex_t lock;
  WorkerFast *fast;      /* the fast call channel, once asked for */
  TsBlobStore *blobs;    /* without fd passing (remote): large results kept to be read in chunks */
  WorkerSource *source;  /* ReadSource */
  TsModuleWatch *watch;  /* WatchModule: the module's file, watched here */
  /* a fast call's answer too big for the channel, until TakeFastReply */
  guint deferred_id;
  WorkerAnswer deferred;
};

/* ---- answers -------------------------------------------------------------------- */


static void answer_gerror(WorkerAnswer *a, const GError *error)
{
  if (a->inv)
    g_dbus_method_invocation_return_gerror(a->inv, error);
  else
    a->error = g_error_copy(error);
}

static void answer_error(WorkerAnswer *a, GQuark domain, int code, const char *format, ...)
  G_GNUC_PRINTF(4, 5);

static void answer_error(WorkerAnswer *a, GQuark domain, int code, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *message = g_strdup_vprintf(format, ap);
  va_end(ap);
  g_autoptr(GError) error = g_error_new_literal(domain, code, message);
  answer_gerror(a, error);
}

/* value: floating or not, taken; fds may be NULL or empty. */
static void answer_value(WorkerAnswer *a, GVariant *value, GUnixFDList *fds)
{
  if (fds && g_unix_fd_list_get_length(fds) == 0)
    fds = NULL;
  if (a->inv) {
    g_dbus_method_invocation_return_value_with_unix_fd_list(a->inv, value, fds);
    return;
  }
  a->value = value ? g_variant_ref_sink(value) : NULL;
  a->fds = fds ? g_object_ref(fds) : NULL;
}

/* ---- errors --------------------------------------------------------------------- */

/* The engine's pending error as the answer, with `prefix` before its message. */
static void return_engine_error(WorkerAnswer *a, const char *prefix, gboolean input)
{
  ts_error *e = ts_error_take();
  if (!e) {
    answer_error(a, TS_ENGINE_ERROR, TS_ERR_INTERNAL, "%sfailed without an error", prefix);
    return;
  }
  /* an argument the user typed: op and detail, not the engine's source location */
  g_autofree char *message = input ? ts_engine_error_input_message(e) : g_strdup(e->message);
  answer_error(a, TS_ENGINE_ERROR, e->code, "%s%s", prefix, message);
  ts_error_free(e);
}

static ts_function *lookup(WorkerService *s, WorkerAnswer *a, const char *name)
{
  ts_function *fn = s->module ? ts_module_lookup(s->module, name) : NULL;
  if (!fn)
    answer_error(a, TS_ENGINE_ERROR, TS_ERR_NOT_FOUND,
                 s->module ? "the module has no function '%s'" : "no module is open to call '%s' in", name);
  return fn;
}

/* ---- engine events -> signals ------------------------------------------------------- */

static void emit(WorkerService *s, const char *name, GVariant *params)
{
  /* counted before it is queued: a fast reply says how many came before it */
  __atomic_add_fetch(&s->n_signals, 1, __ATOMIC_SEQ_CST);
  g_dbus_connection_emit_signal(s->connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, name,
                                params, NULL);
}

static GVariant *bytes_variant(void *data, size_t size)
{
  GBytes *bytes = g_bytes_new_with_free_func(data, size, free, data);
  return g_variant_new_from_bytes(G_VARIANT_TYPE_BYTESTRING, bytes, TRUE);
}

static void emit_trace(WorkerService *s, const ts_trace_event *t)
{
  GVariantDict d;
  g_variant_dict_init(&d, NULL);
  g_variant_dict_insert(&d, "function", "s", t->function_name);
  g_variant_dict_insert(&d, "signature", "s", t->signature);
  g_variant_dict_insert(&d, "reason", "u", (guint32)t->reason);
  g_variant_dict_insert(&d, "reason-text", "s", t->reason_text ? t->reason_text : "");
  g_variant_dict_insert(&d, "duration-ns", "t", (guint64)t->duration_ns);
  g_variant_dict_insert(&d, "n-concrete", "i", t->n_concrete);
  g_variant_dict_insert(&d, "trace-count", "i", ts_function_trace_count(t->function));
  if (t->error) { /* tracing failed: no concrete function, no graph */
    g_variant_dict_insert(&d, "error", "s", t->error);
    emit(s, "Trace", g_variant_new("(u@a{sv})", s->call_id, g_variant_dict_end(&d)));
    return;
  }
  char *pretty = ts_concrete_pretty_signature(t->concrete);
  g_variant_dict_insert(&d, "pretty-signature", "s", pretty ? pretty : "");
  free(pretty);
  size_t size;
  void *graph = ts_graph_serialize(ts_concrete_graph(t->concrete), &size);
  if (graph)
    g_variant_dict_insert_value(&d, "graph", bytes_variant(graph, size));
  else
    ts_error_clear();
  emit(s, "Trace", g_variant_new("(u@a{sv})", s->call_id, g_variant_dict_end(&d)));
}

static void on_engine_event(const ts_event *ev, void *user_data)
{
  WorkerService *s = user_data;
  switch (ev->kind) {
  case TS_EVENT_TRACE: emit_trace(s, &ev->trace); break;
  case TS_EVENT_WARNING:
    emit(s, "Warning",
         g_variant_new("(uusss)", s->call_id, (guint32)ev->warning.kind, ev->warning.function_name,
                       ev->warning.message, ev->warning.arguments ? ev->warning.arguments : ""));
    break;
  case TS_EVENT_PRINT: emit(s, "Print", g_variant_new("(us)", s->call_id, ev->print.text)); break;
  default: break;
  }
}

/* ---- methods ------------------------------------------------------------------------ */

/* A line "\x1etracescope-call 7 end" on stdout and stderr, after what
 * stdio still holds: what came before it is the call's (0: Open's). */
void worker_mark_end(guint call_id)
{
  fflush(stdout);
  fflush(stderr);
  /* on the worker's own copies of the pipes: a module may have closed 1 and 2 */
  g_autofree char *mark = g_strdup_printf(TS_WORKER_MARK "%u end\n", call_id);
  for (int fd = 1; fd <= 2; fd++)
    worker_fds_write_std(fd, mark, strlen(mark));
  worker_fds_restore_std();
}

static void handle_hello(WorkerService *s, GVariant *params, WorkerAnswer *a)
{
  guint32 version;
  g_variant_get(params, "(u)", &version);
  if (version != TS_WORKER_PROTOCOL_VERSION) {
    answer_error(a, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "the app speaks protocol version %u, this worker %u",
                 version, TS_WORKER_PROTOCOL_VERSION);
    return;
  }
  answer_value(a, g_variant_new("(ux)", TS_WORKER_PROTOCOL_VERSION, (gint64)getpid()), NULL);
}

static void handle_open(WorkerService *s, GVariant *params, WorkerAnswer *a)
{
  const char *source;
  g_variant_get(params, "(&s)", &source);
  if (s->module) {
    answer_error(a, TS_ENGINE_ERROR, TS_ERR_INVALID_ARGUMENT, "this worker has a module open already (%s)",
                 ts_module_path(s->module));
    return;
  }
  ts_error_clear();
  if (g_str_has_suffix(source, ".onnx")) { /* a model: one function per output */
    s->model = ts_onnx_load(source);
    s->module = s->model ? ts_onnx_model_module(s->model) : NULL;
    if (!s->module)
      g_clear_pointer(&s->model, ts_onnx_model_free);
  } else {
    s->module = ts_module_open(source);
  }
  worker_mark_end(0); /* what its constructors printed is nobody's call */
  if (!s->module) {
    return_engine_error(a, "", FALSE);
    return;
  }
  GVariantBuilder fns;
  g_variant_builder_init(&fns, G_VARIANT_TYPE("a(sasas)"));
  for (int i = 0; i < ts_module_n_functions(s->module); i++) {
    const ts_function *fn = ts_module_function(s->module, i);
    g_variant_builder_open(&fns, G_VARIANT_TYPE("(sasas)"));
    g_variant_builder_add(&fns, "s", ts_function_name(fn));
    g_variant_builder_open(&fns, G_VARIANT_TYPE("as"));
    for (int p = 0; p < ts_function_n_params(fn); p++)
      g_variant_builder_add(&fns, "s", ts_function_param_name(fn, p));
    g_variant_builder_close(&fns);
    g_variant_builder_open(&fns, G_VARIANT_TYPE("as"));
    const char *const *examples = ts_module_examples(s->module, i);
    for (int e = 0; examples && examples[e]; e++)
      g_variant_builder_add(&fns, "s", examples[e]);
    g_variant_builder_close(&fns);
    g_variant_builder_close(&fns);
  }
  g_autofree char *path = g_canonicalize_filename(ts_module_path(s->module), NULL);
  answer_value(a, g_variant_new("(ssa(sasas))", ts_module_title(s->module), path, &fns), NULL);
}

static void handle_set_input_signature(WorkerService *s, GVariant *params,
                                       WorkerAnswer *a)
{
  const char *name;
  g_autofree const char **texts = NULL;
  g_variant_get(params, "(&s^a&s)", &name, &texts);
  ts_function *fn = lookup(s, a, name);
  if (!fn)
    return;
  int n = (int)g_strv_length((char **)texts);
  g_autofree ts_spec *specs = g_new0(ts_spec, MAX(n, 1));
  ts_error_clear();
  for (int i = 0; i < n; i++) {
    if (!ts_spec_parse(texts[i], &specs[i])) {
      g_autofree char *prefix = g_strdup_printf("input signature, argument %d: ", i);
      return_engine_error(a, prefix, TRUE);
      return;
    }
  }
  if (!ts_function_set_input_signature(fn, specs, n)) {
    return_engine_error(a, "", FALSE);
    return;
  }
  answer_value(a, NULL, NULL);
}

typedef struct {
  WorkerService *s;
  WorkerAnswer *a;
  guint32 call_id;
  const char *function;
  const char **args;
  int n_args;
  guint32 repeat;
  gboolean profile;      /* option "profile": record a session around the calls */
  guint32 compare;       /* option "compare": N eager and N graph calls, compared */
  ts_function *fn;
  ts_value *values;
} Call;

char *worker_arg_prefix(ts_function *fn, int i)
{
  if (i < ts_function_n_params(fn))
    return g_strdup_printf("argument %d (%s): ", i, ts_function_param_name(fn, i));
  return g_strdup_printf("argument %d: ", i);
}

/* Bytes under key (ay) when small, else in a memfd: key-fd (h) and
 * key-size (t); without fds, a blob when blobs is given (key-blob, key-size). */
static gboolean add_bytes(GVariantDict *d, const char *key, GBytes *bytes, GUnixFDList *fds, TsBlobStore *blobs,
                          GError **error)
{
  gsize size;
  const void *data = g_bytes_get_data(bytes, &size);
  if (blobs) {
    ts_blob_store_insert(blobs, d, key, bytes);
    return TRUE;
  }
  if (ts_worker_goes_inline(size)) {
    if (!ts_worker_inline_fits(size, key, error))
      return FALSE;
    g_variant_dict_insert_value(d, key, g_variant_new_from_bytes(G_VARIANT_TYPE_BYTESTRING, bytes, TRUE));
    return TRUE;
  }
  int fd = ts_worker_memfd_copy(data, size, error);
  if (fd < 0)
    return FALSE;
  int index = g_unix_fd_list_append(fds, fd, error);
  close(fd);
  if (index < 0)
    return FALSE;
  g_autofree char *fd_key = g_strconcat(key, "-fd", NULL), *size_key = g_strconcat(key, "-size", NULL);
  g_variant_dict_insert(d, fd_key, "h", index);
  g_variant_dict_insert(d, size_key, "t", (guint64)size);
  return TRUE;
}

/* The session recorded, into the result as "profile". */
static gboolean add_profile(WorkerService *s, GVariantDict *d, tsp_session *session, GUnixFDList *fds,
                            GError **error)
{
  g_autoptr(GBytes) bytes = tsp_session_serialize(session);
  return add_bytes(d, "profile", bytes, fds, s->blobs, error);
}

/* Option "compare": the function eagerly and as a graph (tsp_compare_run:
 * a warm-up each way, then N calls each way), recorded; the app reads the
 * rows from the session and the windows and first call from "compare". */
static void make_compare(Call *c)
{
  g_autoptr(GUnixFDList) fds = g_unix_fd_list_new();
  tsp_session *session = tsp_session_new();
  tsp_compare *cmp = tsp_compare_run(session, c->fn, c->values, c->n_args, (int)c->compare);
  if (!cmp) {
    tsp_session_free(session);
    return_engine_error(c->a, "", FALSE);
    return;
  }
  GVariantDict d, w;
  g_variant_dict_init(&d, NULL);
  g_variant_dict_init(&w, NULL);
  g_variant_dict_insert(&w, "n-calls", "u", c->compare);
  g_variant_dict_insert(&w, "eager-window", "(tt)", cmp->eager_window.from_ns, cmp->eager_window.to_ns);
  g_variant_dict_insert(&w, "graph-window", "(tt)", cmp->graph_window.from_ns, cmp->graph_window.to_ns);
  g_variant_dict_insert(&w, "first-call-ns", "d", cmp->first_call_ns);
  g_variant_dict_insert(&w, "trace-ns", "d", cmp->trace_ns);
  g_variant_dict_insert(&w, "payback-calls", "d", cmp->payback_calls);
  g_autofree char *text = g_strdup_printf("graph speedup %.2fx (%u calls each way)", cmp->speedup, c->compare);
  g_variant_dict_insert(&d, "value-text", "s", text);
  g_variant_dict_insert(&d, "n-calls", "u", 2 * c->compare + 2);
  g_variant_dict_insert_value(&d, "compare", g_variant_dict_end(&w));
  tsp_compare_free(cmp);
  g_autoptr(GError) error = NULL;
  gboolean ok = add_profile(c->s, &d, session, fds, &error);
  tsp_session_free(session);
  if (!ok) {
    g_variant_dict_clear(&d);
    answer_gerror(c->a, error);
    return;
  }
  answer_value(c->a, g_variant_new("(@a{sv})", g_variant_dict_end(&d)), fds);
}

/* A call's results into d: value-text and shape-text of them all (a
 * tuple as Python prints one, `(x,)` too; None as "None", nothing more)
 * and, for one tensor (alone or a tuple's only one), its values; for a
 * tuple of several, "results" (aa{sv}) with each tensor's text, type and
 * values. */
static gboolean write_results(GVariantDict *d, ts_tensor *const *out, int n, bool tuple,
                              GUnixFDList *fds, TsBlobStore *blobs, GError **error)
{
  char *text = ts_results_to_string(out, n, tuple);
  char *shape = ts_results_type_string(out, n, tuple);
  g_variant_dict_insert(d, "value-text", "s", text);
  g_variant_dict_insert(d, "shape-text", "s", shape);
  free(text);
  free(shape);
  if (n == 0)
    return TRUE;
  if (n == 1)
    return ts_worker_tensor_write(d, out[0], fds, blobs, error);
  GVariantBuilder items;
  g_variant_builder_init(&items, G_VARIANT_TYPE("aa{sv}"));
  for (int i = 0; i < n; i++) {
    GVariantDict item;
    g_variant_dict_init(&item, NULL);
    text = ts_results_to_string(&out[i], 1, false);
    shape = ts_results_type_string(&out[i], 1, false);
    g_variant_dict_insert(&item, "value-text", "s", text);
    g_variant_dict_insert(&item, "shape-text", "s", shape);
    free(text);
    free(shape);
    /* no blobs: the app fetches a result's own, not those inside results
     * (a remote worker sends a tuple's values inline) */
    if (!ts_worker_tensor_write(&item, out[i], fds, NULL, error)) {
      g_variant_dict_clear(&item);
      g_variant_builder_clear(&items);
      return FALSE;
    }
    g_variant_builder_add_value(&items, g_variant_dict_end(&item));
  }
  g_variant_dict_insert_value(d, "results", g_variant_builder_end(&items));
  return TRUE;
}

/* Calls or traces; replies either way. */
static void make_call(Call *c)
{
  WorkerService *s = c->s;
  gboolean traced_only = FALSE;
  for (int i = 0; i < c->n_args; i++) {
    ts_spec spec;
    if (ts_spec_parse(c->args[i], &spec)) {
      c->values[i] = TS_SPEC_VALUE(spec.dtype, spec.shape);
      traced_only = TRUE;
    } else if (!ts_value_parse(c->args[i], &c->values[i])) {
      g_autofree char *prefix = worker_arg_prefix(c->fn, i);
      return_engine_error(c->a, prefix, TRUE);
      return;
    }
  }
  if (c->compare > 0 && !traced_only) {
    make_compare(c);
    return;
  }
  GVariantDict d;
  g_variant_dict_init(&d, NULL);
  g_variant_dict_insert(&d, "traced-only", "b", traced_only);
  if (traced_only) {
    uint64_t t0 = ts_now_ns();
    ts_concrete *cf = ts_function_get_concrete(c->fn, c->values, c->n_args);
    uint64_t dt = ts_now_ns() - t0;
    if (!cf) {
      g_variant_dict_clear(&d);
      return_engine_error(c->a, "", FALSE);
      return;
    }
    char *pretty = ts_concrete_pretty_signature(cf);
    g_variant_dict_insert(&d, "value-text", "s", pretty);
    free(pretty);
    g_variant_dict_insert(&d, "total-ns", "t", (guint64)dt);
    answer_value(c->a, g_variant_new("(@a{sv})", g_variant_dict_end(&d)), NULL);
    return;
  }
  g_autoptr(GUnixFDList) fds = g_unix_fd_list_new();
  guint64 total_ns = 0, last_progress = 0;
  guint32 n_calls = 0;
  g_autoptr(GError) error = NULL;
  tsp_session *session = NULL;
  if (c->profile) {
    session = tsp_session_new();
    if (!tsp_session_start(session, &error)) {
      tsp_session_free(session);
      g_variant_dict_clear(&d);
      answer_gerror(c->a, error);
      return;
    }
  }
  for (guint32 k = 0; k < c->repeat; k++) {
    ts_scope *scope = ts_scope_begin();
    uint64_t t0 = session ? tsp_call_begin(session) : ts_now_ns();
    ts_tensor *out[TS_MAX_RETURNS];
    bool tuple = false;
    int n_out = ts_function_call_n(c->fn, c->values, c->n_args, out, TS_MAX_RETURNS, &tuple);
    total_ns += ts_now_ns() - t0;
    if (session)
      tsp_call_end(session, t0, c->function, ts_functions_run_eagerly() ? TSP_MODE_EAGER : TSP_MODE_GRAPH);
    if (n_out < 0) {
      ts_scope_end(scope);
      tsp_session_free(session);
      g_variant_dict_clear(&d);
      return_engine_error(c->a, "", FALSE);
      return;
    }
    n_calls++;
    if (k + 1 == c->repeat && !write_results(&d, out, n_out, tuple, fds, s->blobs, &error)) {
      ts_scope_end(scope);
      tsp_session_free(session);
      g_variant_dict_clear(&d);
      answer_gerror(c->a, error);
      return;
    }
    ts_scope_end(scope);
    uint64_t now = ts_now_ns();
    if (c->repeat > 1 && (now - last_progress >= PROGRESS_NS || k + 1 == c->repeat)) {
      emit(s, "Progress", g_variant_new("(ud)", c->call_id, (double)(k + 1) / c->repeat));
      last_progress = now;
    }
  }
  g_variant_dict_insert(&d, "n-calls", "u", n_calls);
  g_variant_dict_insert(&d, "total-ns", "t", total_ns);
  if (session) {
    tsp_session_stop(session);
    gboolean ok = add_profile(c->s, &d, session, fds, &error);
    tsp_session_free(session);
    if (!ok) {
      g_variant_dict_clear(&d);
      answer_gerror(c->a, error);
      return;
    }
  }
  answer_value(c->a, g_variant_new("(@a{sv})", g_variant_dict_end(&d)), fds);
}

static void handle_call(WorkerService *s, GVariant *params, WorkerAnswer *a)
{
  Call c = { .s = s, .a = a };
  gboolean eager;
  g_autoptr(GVariant) options = NULL;
  g_variant_get(params, "(u&s^a&sub@a{sv})", &c.call_id, &c.function, &c.args, &c.repeat, &eager, &options);
  g_variant_lookup(options, "profile", "b", &c.profile);
  g_variant_lookup(options, "compare", "u", &c.compare);
  gboolean check = FALSE; /* option "check-eagerly": each call both ways, a divergence a Warning */
  g_variant_lookup(options, "check-eagerly", "b", &check);
  const char *device_name = NULL; /* option "device": the backend the calls run on */
  g_variant_lookup(options, "device", "&s", &device_name);
  c.n_args = (int)g_strv_length((char **)c.args);
  c.repeat = MAX(c.repeat, 1);
  if (c.repeat > TS_WORKER_REPEAT_MAX || c.compare > TS_WORKER_REPEAT_MAX) {
    gboolean repeat = c.repeat > TS_WORKER_REPEAT_MAX;
    answer_error(a, TS_ENGINE_ERROR, TS_ERR_INVALID_ARGUMENT,
                 "%s %u is more calls than one call request makes (at most %u)", repeat ? "repeat" : "compare",
                 repeat ? c.repeat : c.compare, TS_WORKER_REPEAT_MAX);
    goto out;
  }
  if (!(c.fn = lookup(s, a, c.function)))
    goto out;
  const ts_backend *device;
  char *no_device = NULL; /* not g_autofree: the gotos above jump past it */
  if (!worker_find_device(device_name, &device, &no_device)) {
    answer_error(a, TS_ENGINE_ERROR, TS_ERR_INVALID_ARGUMENT, "%s", no_device);
    g_free(no_device);
    goto out;
  }
  int n_params = ts_function_n_params(c.fn);
  if (n_params > 0 && c.n_args != n_params) {
    answer_error(a, TS_ENGINE_ERROR, TS_ERR_INVALID_ARGUMENT, "%s takes %d argument%s, got %d", c.function,
                 n_params, n_params == 1 ? "" : "s", c.n_args);
    goto out;
  }
  if (__atomic_load_n(&s->call_id, __ATOMIC_SEQ_CST) != 0) {
    answer_error(a, TS_WORKER_ERROR, TS_WORKER_ERROR_BUSY, "call %u is being debugged: stop it first",
                 __atomic_load_n(&s->call_id, __ATOMIC_SEQ_CST));
    goto out;
  }
  /* each side stores, then looks at the other's: a Cancel is never lost */
  __atomic_store_n(&s->cancel_flag, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&s->call_id, c.call_id, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&s->cancel_id, __ATOMIC_SEQ_CST) == c.call_id) {
    __atomic_store_n(&s->call_id, 0, __ATOMIC_SEQ_CST);
    answer_error(a, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
    goto out;
  }
  s->status->call_id = c.call_id;
  ts_error_clear();
  ts_run_functions_eagerly(eager);
  if (c.repeat > 1)
    emit(s, "Progress", g_variant_new("(ud)", c.call_id, 0.0));
  ts_scope *scope = ts_scope_begin();
  c.values = g_new0(ts_value, MAX(c.n_args, 1));
  ts_watch_cancel_flag(&s->cancel_flag);
  gboolean checked = ts_function_checks_eagerly(c.fn);
  ts_function_set_check_eagerly(c.fn, check || checked);
  ts_function_set_device(c.fn, device); /* for these calls only */
  make_call(&c);
  ts_function_set_device(c.fn, NULL);
  ts_function_set_check_eagerly(c.fn, checked);
  ts_watch_cancel_flag(NULL);
  for (int i = 0; i < c.n_args; i++)
    ts_value_clear(&c.values[i]);
  g_free(c.values);
  ts_scope_end(scope);
  __atomic_store_n(&s->call_id, 0, __ATOMIC_SEQ_CST);
  s->status->call_id = 0;
out:
  /* every call has its mark, also one refused before it ran */
  worker_mark_end(c.call_id);
  g_free(c.args);
}

gboolean worker_find_device(const char *name, const ts_backend **device, char **message)
{
  *device = name && *name ? ts_backend_by_name(name) : NULL;
  if (*device || !name || !*name)
    return TRUE;
  g_autoptr(GString) names = g_string_new(NULL);
  for (int i = 0; i < ts_backend_count(); i++)
    g_string_append_printf(names, "%s%s", i ? ", " : "", ts_backend_name(ts_backend_get(i)));
  *message = g_strdup_printf("no device '%s' in this worker (it has %s; %s)", name, names->str,
                             ts_backend_devices_note());
  return FALSE;
}

/* ListDevices: the engine's devices (name, description, free and total
 * bytes, 0 when unknown) and what it found of the real ones
 * (ts_backend_devices_note: "CUDA: no device (...)"). */
static void handle_list_devices(WorkerService *s, GVariant *params, WorkerAnswer *a)
{
  GVariantBuilder b;
  g_variant_builder_init(&b, G_VARIANT_TYPE("a(sstt)"));
  for (int i = 0; i < ts_backend_count(); i++) {
    const ts_backend *dev = ts_backend_get(i);
    size_t free_bytes = 0, total_bytes = 0;
    if (!ts_backend_memory_info(dev, &free_bytes, &total_bytes))
      free_bytes = total_bytes = 0;
    g_variant_builder_add(&b, "(sstt)", ts_backend_name(dev), ts_backend_description(dev),
                          (guint64)free_bytes, (guint64)total_bytes);
  }
  answer_value(a, g_variant_new("(@a(sstt)s)", g_variant_builder_end(&b), ts_backend_devices_note()), NULL);
}

/* OpenFastChannel: the channel's memfd (made on the first ask) and the
 * size of its areas. */
static void handle_open_fast_channel(WorkerService *s, GVariant *params, WorkerAnswer *a)
{
  g_autoptr(GError) error = NULL;
  if (!(g_dbus_connection_get_capabilities(s->connection) & G_DBUS_CAPABILITY_FLAGS_UNIX_FD_PASSING)) {
    answer_error(a, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                 "no fast call channel without fd passing (a remote worker): calls go over D-Bus");
    return;
  }
  if (!s->fast && !(s->fast = worker_fast_new(s, &error))) {
    answer_gerror(a, error);
    return;
  }
  g_autoptr(GUnixFDList) fds = g_unix_fd_list_new();
  if (g_unix_fd_list_append(fds, worker_fast_fd(s->fast), &error) < 0) {
    answer_gerror(a, error);
    return;
  }
  answer_value(a, g_variant_new("(hu)", 0, TS_FAST_AREA_SIZE), fds);
}

/* TakeFastReply: the answer of the fast call call_id that did not fit the channel. */
static void handle_take_fast_reply(WorkerService *s, GVariant *params, WorkerAnswer *a)
{
  guint32 call_id;
  g_variant_get(params, "(u)", &call_id);
  if (call_id == 0 || call_id != s->deferred_id) {
    answer_error(a, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "no fast call %u has an answer waiting", call_id);
    return;
  }
  if (s->deferred.error)
    answer_gerror(a, s->deferred.error);
  else
    answer_value(a, g_steal_pointer(&s->deferred.value), s->deferred.fds);
  worker_answer_clear(&s->deferred);
  s->deferred_id = 0;
}

/* The graph a concrete function runs, after the optimizer's passes: its
 * serialized form (graph, or graph-fd and graph-size when large), what
 * each of its nodes stands for in the traced graph (origins: the
 * serialized form drops that), one line per pass (pass-summary) and the
 * traced graph's node count (traced-nodes), which the app checks against
 * its copy.  Asked for when the user wants to see it, not sent with every
 * trace: it holds the weights once more. */
static void handle_get_optimized(WorkerService *s, GVariant *params, WorkerAnswer *a)
{
  const char *name, *signature;
  g_variant_get(params, "(&s&s)", &name, &signature);
  ts_function *fn = lookup(s, a, name);
  if (!fn)
    return;
  if (__atomic_load_n(&s->call_id, __ATOMIC_SEQ_CST) != 0) { /* a debuggee may be tracing it */
    answer_error(a, TS_WORKER_ERROR, TS_WORKER_ERROR_BUSY, "call %u is being debugged: stop it first",
                 __atomic_load_n(&s->call_id, __ATOMIC_SEQ_CST));
    return;
  }
  const ts_concrete *cf = NULL;
  for (int i = 0; i < ts_function_n_concrete(fn) && !cf; i++)
    if (g_strcmp0(ts_concrete_signature(ts_function_concrete(fn, i)), signature) == 0)
      cf = ts_function_concrete(fn, i);
  if (!cf) {
    answer_error(a, TS_ENGINE_ERROR, TS_ERR_NOT_FOUND, "%s has no concrete function %s in this worker", name,
                 signature);
    return;
  }
  ts_error_clear();
  const ts_graph *optimized = ts_concrete_optimized_graph(cf);
  size_t size;
  void *data = optimized ? ts_graph_serialize(optimized, &size) : NULL;
  if (!data) {
    return_engine_error(a, "the optimized graph: ", FALSE);
    return;
  }
  g_autoptr(GBytes) bytes = g_bytes_new_with_free_func(data, size, free, data);
  g_autoptr(GUnixFDList) fds = g_unix_fd_list_new();
  g_autoptr(GError) error = NULL;
  GVariantDict d;
  g_variant_dict_init(&d, NULL);
  if (!add_bytes(&d, "graph", bytes, fds, s->blobs, &error)) {
    g_variant_dict_clear(&d);
    answer_gerror(a, error);
    return;
  }
  g_variant_dict_insert_value(&d, "origins", ts_worker_origins_to_variant(optimized, ts_concrete_graph(cf)));
  g_variant_dict_insert(&d, "pass-summary", "s", ts_concrete_pass_summary(cf));
  g_variant_dict_insert(&d, "traced-nodes", "u", (guint32)ts_worker_origins_n_places(ts_concrete_graph(cf)));
  answer_value(a, g_variant_new("(@a{sv})", g_variant_dict_end(&d)), fds);
}

static void on_module_file_changed(TsModuleWatch *watch, WorkerService *s)
{
  g_autofree char *path = g_canonicalize_filename(ts_module_path(s->module), NULL);
  emit(s, "ModuleChanged", g_variant_new("(us)", 0, path));
}

/* WatchModule: the open module's file is watched here, on the worker's
 * machine; once it has settled after a change (rebuilt), ModuleChanged.
 * For a remote worker, whose file the app cannot watch. */
static void handle_watch_module(WorkerService *s, GVariant *params, WorkerAnswer *a)
{
  if (!s->module || !g_file_test(ts_module_path(s->module), G_FILE_TEST_IS_REGULAR)) {
    answer_error(a, TS_ENGINE_ERROR, TS_ERR_NOT_FOUND, "no module file is open to watch%s%s",
                 s->module ? ": " : "", s->module ? ts_module_path(s->module) : "");
    return;
  }
  if (!s->watch) {
    s->watch = ts_module_watch_new();
    g_signal_connect(s->watch, "file-changed", G_CALLBACK(on_module_file_changed), s);
  }
  ts_module_watch_set_path(s->watch, ts_module_path(s->module));
  answer_value(a, NULL, NULL);
}

static void method_call(GDBusConnection *connection, const char *sender, const char *path,
                        const char *interface, const char *method, GVariant *params,
                        GDBusMethodInvocation *inv, gpointer user_data)
{
  static const struct {
    const char *name;
    void (*handle)(WorkerService *s, GVariant *params, WorkerAnswer *a);
  } methods[] = {
    { "Hello", handle_hello },
    { "Open", handle_open },
    { "SetInputSignature", handle_set_input_signature },
    { "Call", handle_call },
    { "GetOptimized", handle_get_optimized },
    { "ListDevices", handle_list_devices },
    { "WatchModule", handle_watch_module },
    { "OpenFastChannel", handle_open_fast_channel },
    { "TakeFastReply", handle_take_fast_reply },
  };
  WorkerService *s = user_data;
  for (size_t i = 0; i < G_N_ELEMENTS(methods); i++)
    if (strcmp(method, methods[i].name) == 0) {
      WorkerAnswer a = { .inv = inv };
      pthread_mutex_lock(&s->lock);
      methods[i].handle(s, params, &a);
      pthread_mutex_unlock(&s->lock);
      return;
    }
  /* Cancel arrives here too once the filter has acted on it */
  g_dbus_method_invocation_return_value(inv, NULL);
}

void worker_answer_clear(WorkerAnswer *a)
{
  g_clear_pointer(&a->value, g_variant_unref);
  g_clear_object(&a->fds);
  g_clear_error(&a->error);
}

WorkerAnswer *worker_service_fast_call(WorkerService *s, GVariant *params)
{
  WorkerAnswer *a = g_new0(WorkerAnswer, 1);
  pthread_mutex_lock(&s->lock);
  handle_call(s, params, a);
  pthread_mutex_unlock(&s->lock);
  return a;
}

void worker_answer_free(WorkerAnswer *a)
{
  if (!a)
    return;
  worker_answer_clear(a);
  g_free(a);
}

GVariant *worker_answer_value(WorkerAnswer *a)
{
  return a->value;
}

const GError *worker_answer_error(WorkerAnswer *a)
{
  return a->error;
}

gboolean worker_answer_has_fds(WorkerAnswer *a)
{
  return a->fds != NULL;
}

void worker_service_defer(WorkerService *s, guint call_id, WorkerAnswer *a)
{
  pthread_mutex_lock(&s->lock);
  worker_answer_clear(&s->deferred);
  s->deferred = *a;
  s->deferred_id = call_id;
  *a = (WorkerAnswer){ 0 };
  pthread_mutex_unlock(&s->lock);
}

guint worker_service_signals_emitted(WorkerService *s)
{
  return __atomic_load_n(&s->n_signals, __ATOMIC_SEQ_CST);
}

GDBusConnection *worker_service_connection(WorkerService *s)
{
  return s->connection;
}

/* On the connection's thread: a Cancel for the running call stops it at
 * its next op, even while the main thread is deep in that call. */
static GDBusMessage *filter(GDBusConnection *connection, GDBusMessage *message, gboolean incoming,
                            gpointer user_data)
{
  WorkerService *s = user_data;
  if (!incoming || g_dbus_message_get_message_type(message) != G_DBUS_MESSAGE_TYPE_METHOD_CALL ||
      g_strcmp0(g_dbus_message_get_member(message), "Cancel") != 0)
    return message;
  GVariant *body = g_dbus_message_get_body(message);
  if (body && g_variant_is_of_type(body, G_VARIANT_TYPE("(u)"))) {
    guint32 id;
    g_variant_get(body, "(u)", &id);
    __atomic_store_n(&s->cancel_id, id, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&s->call_id, __ATOMIC_SEQ_CST) == id) {
      __atomic_store_n(&s->cancel_flag, 1, __ATOMIC_SEQ_CST);
      /* a call stuck in host code may be killed soon: say where it is now */
      worker_status_note_op(s->status, s->last_op);
    }
  }
  return message;
}

static const GDBusInterfaceVTable vtable = { .method_call = method_call };

WorkerService *worker_service_new(GDBusConnection *connection, TsWorkerStatus *status,
                                  const ts_op_watch *last_op, GError **error)
{
  g_autoptr(GDBusNodeInfo) info = g_dbus_node_info_new_for_xml(introspection_xml, error);
  if (!info)
    return NULL;
  WorkerService *s = g_new0(WorkerService, 1);
  pthread_mutex_init(&s->lock, NULL);
  s->connection = g_object_ref(connection);
  s->status = status;
  s->last_op = last_op;
  s->registration = g_dbus_connection_register_object(connection, TS_WORKER_PATH,
                                                      info->interfaces[0], &vtable, s, NULL, error);
  if (!s->registration) {
    worker_service_free(s);
    return NULL;
  }
  s->filter = g_dbus_connection_add_filter(connection, filter, s, NULL);
  if (!(g_dbus_connection_get_capabilities(connection) & G_DBUS_CAPABILITY_FLAGS_UNIX_FD_PASSING))
    s->blobs = ts_blob_store_new(connection);
  s->source = worker_source_new(connection);
  /* no op events: they would slow every op; the last op comes from last_op */
  s->listener = ts_listener_add(TS_EVENT_MASK(TS_EVENT_TRACE) | TS_EVENT_MASK(TS_EVENT_WARNING) |
                                  TS_EVENT_MASK(TS_EVENT_PRINT),
                                on_engine_event, s);
  return s;
}

void worker_service_free(WorkerService *s)
{
  if (!s)
    return;
  worker_fast_free(s->fast); /* first: its thread may be in a call */
  worker_answer_clear(&s->deferred);
  ts_blob_store_free(s->blobs);
  worker_source_free(s->source);
  g_clear_object(&s->watch);
  if (s->listener)
    ts_listener_remove(s->listener);
  if (s->filter)
    g_dbus_connection_remove_filter(s->connection, s->filter);
  if (s->registration)
    g_dbus_connection_unregister_object(s->connection, s->registration);
  g_object_unref(s->connection);
  ts_module_free(s->module);
  ts_onnx_model_free(s->model); /* after the module, whose functions it runs */
  pthread_mutex_destroy(&s->lock);
  g_free(s);
}

void worker_service_set_call(WorkerService *s, guint call_id)
{
  /* a call starting waits for a fast call to end, as it would on the main thread */
  pthread_mutex_lock(&s->lock);
  if (call_id)
    __atomic_store_n(&s->cancel_flag, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&s->call_id, call_id, __ATOMIC_SEQ_CST);
  s->status->call_id = call_id;
  pthread_mutex_unlock(&s->lock);
}

const int *worker_service_cancel_flag(WorkerService *s)
{
  return &s->cancel_flag;
}

const ts_op_watch *worker_service_last_op(WorkerService *s)
{
  return s->last_op;
}

ts_module *worker_service_module(WorkerService *s)
{
  return s->module;
}
