/* ts-run-controller.c — runs, comparisons, debug calls and the worker's signals. */
#include "ts-run-controller.h"

#include "ts-input-signature.h"
#include "ts-spec-text.h"

struct _TsRunController {
  GObject parent_instance;
  TsEngineWorker *worker;
  TsWorkspace *workspace;
  TsRunPanel *run_panel;
  TsTraceLog *trace_log;
  TsConsole *console;
  TsFunctionList *function_list;
  TsDebugPanel *debug_panel;
  TsProfilerPanel *profiler_panel;
  GtkStack *bottom_stack;
  gboolean shut_down;
  GCancellable *run_cancellable;
  guint run_id;          /* the call the run panel waits for */
  guint run_repeat;
  gboolean run_eager;
  char *run_tracing;      /* the function the run's first call traces (graph mode, none traced yet), or NULL */
  char *run_signature;    /* and that call's arguments: "(x: f32[2]:ones)" */
  GStrv debug_args;       /* a debug call waiting for its graph to be traced */
  char *against;          /* Compare CPU vs device: the device of its second run, while the CPU's runs */
  GStrv against_args;     /* and the arguments both take */
  gboolean against_profiling; /* Profile as it was before */
  char *death;            /* how the last run ended its worker, shown again after the restart */
};

enum { PROP_0, PROP_RUNNING, PROP_BUSY, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_MESSAGE, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TsRunController, ts_run_controller, G_TYPE_OBJECT)

static void notify_busy(TsRunController *self)
{
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_RUNNING]);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
}

static void message(TsRunController *self, const char *text)
{
  g_signal_emit(self, signals[SIGNAL_MESSAGE], 0, text);
}

static void on_compare_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(TsRunController) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(TsRunResult) r = ts_engine_worker_run_finish(TS_ENGINE_WORKER(source), result, &error);
  g_clear_object(&self->run_cancellable);
  if (self->shut_down) /* the window went */
    return;
  ts_run_panel_set_running(self->run_panel, FALSE);
  if (r && r->compare) {
    ts_profiler_panel_set_compare(self->profiler_panel, g_steal_pointer(&r->profile), g_steal_pointer(&r->compare));
    gtk_stack_set_visible_child_name(self->bottom_stack, "profiler");
  } else if (r) { /* traced only: the worker made no calls to compare */
    message(self, "Nothing to compare: an argument is a bare spec, so the function was traced, not run");
  } else if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
    g_autofree char *text = g_strdup_printf("Cannot compare: %s", error->message);
    message(self, text);
  }
  notify_busy(self);
}

/* The run panel's arguments for a run of the selected function; NULL when
 * there is nothing to run now, or they do not read (the panel says why). */
static GStrv run_args(TsRunController *self)
{
  if (!ts_workspace_get_module(self->workspace) || !ts_workspace_get_function(self->workspace) || self->run_cancellable)
    return NULL;
  g_autoptr(GError) error = NULL;
  GStrv args = ts_run_panel_dup_args(self->run_panel, &error);
  if (!args)
    ts_run_panel_show_error(self->run_panel, error->message);
  return args;
}

/* The selected function with the run panel's arguments, eagerly and as a
 * graph, compared op by op in the Profiler panel. */
void ts_run_controller_compare(TsRunController *self)
{
  g_return_if_fail(TS_IS_RUN_CONTROLLER(self));
  g_auto(GStrv) args = run_args(self);
  if (!args)
    return;
  self->run_cancellable = g_cancellable_new();
  self->run_repeat = 1;
  ts_run_panel_set_running(self->run_panel, TRUE);
  self->run_id = ts_engine_worker_compare_async(self->worker, ts_workspace_get_module(self->workspace), ts_workspace_get_function(self->workspace),
                                                (const char *const *)args,
                                                ts_profiler_panel_get_compare_calls(self->profiler_panel),
                                                self->run_cancellable, on_compare_done, g_object_ref(self));
  notify_busy(self);
}

/* The worker died while the run's first call traced its function (no
 * trace came): the trace log has a "tracing failed" row saying how, and
 * the graph pane says it, as for a trace that failed with an error. */
static void log_crashed_trace(TsRunController *self, const char *death)
{
  ts_workspace_set_trace_error(self->workspace, self->run_tracing, death);
  TsLoadedModule *module = ts_workspace_get_module(self->workspace);
  if (!module)
    return;
  TsWorkerTrace trace = {
    .call_id = self->run_id,
    .function = self->run_tracing,
    .signature = self->run_signature,
    .reason = TS_TRACE_FIRST_CALL,
    .reason_text = (char *)"first call",
    .error = (char *)death,
  };
  g_autoptr(TsTraceEntry) entry = ts_trace_entry_new(module, &trace, NULL, NULL, g_get_real_time());
  ts_trace_log_add(self->trace_log, entry);
}

static void on_run_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(TsRunController) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(TsRunResult) r = ts_engine_worker_run_finish(TS_ENGINE_WORKER(source), result, &error);
  g_clear_object(&self->run_cancellable);
  if (self->shut_down) /* the window went */
    return;
  ts_run_panel_set_running(self->run_panel, FALSE);
  if (r)
    ts_run_panel_show_result(self->run_panel, r, self->run_eager);
  else if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    ts_run_panel_show_error(self->run_panel, "Cancelled: the calls left were not made and the result of the one running is dropped.");
  else
    ts_run_panel_show_error(self->run_panel, error->message);
  if (g_error_matches(error, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED)) {
    g_free(self->death);
    self->death = g_strdup(error->message);
    /* in graph mode the module's code runs only while tracing: the graph
     * pane says that tracing failed, and how, not "Not Traced Yet" */
    if (self->run_tracing)
      log_crashed_trace(self, error->message);
  }
  g_clear_pointer(&self->run_tracing, g_free);
  g_clear_pointer(&self->run_signature, g_free);
  if (r && r->profile) /* the colouring follows once its tables are in (session-ready) */
    ts_profiler_panel_set_session(self->profiler_panel, g_steal_pointer(&r->profile), r->label);
  notify_busy(self);
}

/* The debug call starts once its graph is traced: its ops are matched to
 * the graph's nodes when the call begins (a graph traced meanwhile would
 * find them unmatched), and the worker may run the two at once. */
static void on_debug_traced(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(TsRunController) self = user_data;
  g_autoptr(TsRunResult) r = ts_engine_worker_run_finish(TS_ENGINE_WORKER(source), res, NULL);
  g_auto(GStrv) args = g_steal_pointer(&self->debug_args);
  if (self->shut_down || !args)
    return;
  if (r)
    ts_workspace_selection_changed(self->workspace);
  ts_debug_panel_start(self->debug_panel, self->worker, ts_workspace_get_module(self->workspace), ts_workspace_get_function(self->workspace),
                       (const char *const *)args);
}

/* A debug call that ended with an error says it where a Run's would be,
 * in full: the debugger's status line holds one line of it. */
static void on_debug_finished(TsDebugPanel *panel, const char *result_text, const char *error,
                              TsRunController *self)
{
  if (error)
    ts_run_panel_show_error(self->run_panel, error);
}

/* A debug call's arguments as a trace-only call takes them: a tensor's
 * values become its bare spec ("f32[10,10]:ones" -> "f32[10,10]"), so the
 * worker traces the same signature without running anything. */
static GStrv trace_args(const char *const *args)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new();
  for (const char *const *a = args; *a; a++) {
    g_autofree char *head = g_strndup(*a, strcspn(*a, ":="));
    ts_spec spec;
    g_strv_builder_add(b, ts_spec_parse(head, &spec) ? head : *a);
  }
  return g_strv_builder_end(b);
}

static void run_debug(TsRunController *self, const char *const *args)
{
  gtk_stack_set_visible_child_name(self->bottom_stack, "debugger");
  if (ts_debug_panel_get_stopped(self->debug_panel)) {
    ts_debug_panel_command(self->debug_panel, TS_DEBUG_COMMAND_CONTINUE);
    return;
  }
  if (ts_debug_panel_get_active(self->debug_panel) || self->debug_args)
    return;
  /* The graph of the debug call's own signature, which the debugger shows
   * its ops in and matches them to (their node names and scopes: what
   * breakpoints on a scope test), is traced first; where it is
   * traced already this finds it.  The graph shown may be another
   * signature's (train(200) shown, train(1) debugged). */
  g_auto(GStrv) specs = trace_args(args);
  self->debug_args = g_strdupv((char **)args);
  ts_engine_worker_run_async(self->worker, ts_workspace_get_module(self->workspace), ts_workspace_get_function(self->workspace), (const char *const *)specs, 1,
                             FALSE, NULL, on_debug_traced, g_object_ref(self));
}

/* "(x: f32[2]:ones, n: 3)": the arguments of a call as given. */
static char *call_signature(const TsModuleFunction *fn, const char *const *args)
{
  GString *s = g_string_new("(");
  for (int i = 0; args[i]; i++)
    g_string_append_printf(s, "%s%s%s%s", i ? ", " : "", i < fn->n_params ? fn->params[i] : "",
                           i < fn->n_params ? ": " : "", args[i]);
  g_string_append_c(s, ')');
  return g_string_free(s, FALSE);
}

void ts_run_controller_run(TsRunController *self)
{
  g_return_if_fail(TS_IS_RUN_CONTROLLER(self));
  g_auto(GStrv) args = run_args(self);
  if (!args)
    return;
  if (ts_workspace_is_debug(self->workspace)) {
    run_debug(self, (const char *const *)args);
    return;
  }
  self->run_cancellable = g_cancellable_new();
  self->run_repeat = ts_run_panel_get_repeat(self->run_panel);
  self->run_eager = ts_workspace_is_eager(self->workspace);
  TsLoadedModule *module = ts_workspace_get_module(self->workspace);
  const char *function = ts_workspace_get_function(self->workspace);
  TsModuleFunction *fn = module && function ? ts_loaded_module_lookup(module, function) : NULL;
  g_free(self->run_tracing);
  g_free(self->run_signature);
  self->run_tracing = fn && !self->run_eager && fn->concrete->len == 0 ? g_strdup(function) : NULL;
  self->run_signature = self->run_tracing ? call_signature(fn, (const char *const *)args) : NULL;
  ts_run_panel_set_running(self->run_panel, TRUE);
  self->run_id = ts_engine_worker_run_async(self->worker, module, function,
                                            (const char *const *)args, self->run_repeat,
                                            self->run_eager, self->run_cancellable, on_run_done,
                                            g_object_ref(self));
  notify_busy(self);
}

/* ---- the CPU against the device ----------------------------------------------------
 * The selected function with the run panel's arguments profiled on the
 * CPU, then on the chosen device: the CPU's run is the Diff page's
 * baseline, the device's the run shown, so the Diff page compares them op
 * by op (on the device its kernels' time, the host's launch beside it). */

static void against_end(TsRunController *self)
{
  ts_engine_worker_set_profiling(self->worker, self->against_profiling);
  g_clear_pointer(&self->against, g_free);
  g_clear_pointer(&self->against_args, g_strfreev);
}

static void on_device_run_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(TsRunController) self = g_object_ref(user_data); /* on_run_done drops user_data's */
  against_end(self);
  on_run_done(source, result, user_data); /* shows it; the Diff page compares it with the CPU's */
  if (!self->shut_down && ts_profiler_panel_get_session(self->profiler_panel))
    ts_profiler_panel_show_page(self->profiler_panel, "diff");
}

static void on_cpu_run_done(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(TsRunController) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(TsRunResult) r = ts_engine_worker_run_finish(TS_ENGINE_WORKER(source), result, &error);
  if (self->shut_down || !r || !r->profile) {
    g_clear_object(&self->run_cancellable);
    against_end(self);
    if (self->shut_down) /* the window went */
      return;
    ts_run_panel_set_running(self->run_panel, FALSE);
    if (r)
      message(self, "Nothing to compare: an argument is a bare spec, so the function was traced, not run");
    else if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
      ts_run_panel_show_error(self->run_panel, error->message);
    notify_busy(self);
    return;
  }
  g_autofree char *label = g_strdup_printf("the CPU, %s", r->label ? r->label : "");
  ts_profiler_panel_set_baseline(self->profiler_panel, g_steal_pointer(&r->profile), label);
  ts_engine_worker_set_device(self->worker, self->against);
  self->run_id = ts_engine_worker_run_async(self->worker, ts_workspace_get_module(self->workspace),
                                            ts_workspace_get_function(self->workspace),
                                            (const char *const *)self->against_args, self->run_repeat,
                                            self->run_eager, self->run_cancellable, on_device_run_done,
                                            g_object_ref(self));
}

void ts_run_controller_compare_devices(TsRunController *self)
{
  g_return_if_fail(TS_IS_RUN_CONTROLLER(self));
  const char *device = ts_engine_worker_get_device(self->worker);
  if (g_str_equal(device, "CPU")) {
    message(self, "Choose a device to compare with the CPU first (the device menu)");
    return;
  }
  if (ts_workspace_is_debug(self->workspace))
    return;
  g_auto(GStrv) args = run_args(self);
  if (!args)
    return;
  self->against = g_strdup(device);
  self->against_args = g_steal_pointer(&args);
  self->against_profiling = ts_engine_worker_get_profiling(self->worker);
  ts_engine_worker_set_profiling(self->worker, TRUE);
  self->run_cancellable = g_cancellable_new();
  self->run_repeat = ts_run_panel_get_repeat(self->run_panel);
  self->run_eager = ts_workspace_is_eager(self->workspace);
  ts_run_panel_set_running(self->run_panel, TRUE);
  ts_engine_worker_set_device(self->worker, "CPU"); /* for this run: each takes the device it starts with */
  self->run_id = ts_engine_worker_run_async(self->worker, ts_workspace_get_module(self->workspace),
                                            ts_workspace_get_function(self->workspace),
                                            (const char *const *)self->against_args, self->run_repeat,
                                            self->run_eager, self->run_cancellable, on_cpu_run_done,
                                            g_object_ref(self));
  ts_engine_worker_set_device(self->worker, self->against);
  notify_busy(self);
}

typedef struct {
  TsRunController *self;
  char *text; /* "f now has the input signature (x: f32[?])" */
} SignatureRequest;

static void on_signature_applied(GObject *source, GAsyncResult *result, gpointer user_data)
{
  SignatureRequest *req = user_data;
  g_autoptr(GError) error = NULL;
  gboolean applied = ts_engine_worker_set_input_signature_finish(TS_ENGINE_WORKER(source), result, &error);
  if (req->self->shut_down) { /* the window went */
  } else if (applied) {
    message(req->self, req->text);
    ts_trace_log_hide_warning(req->self->trace_log);
  } else {
    g_autofree char *text = g_strdup_printf("Cannot apply the input signature: %s", error->message);
    message(req->self, text);
  }
  g_object_unref(req->self);
  g_free(req->text);
  g_free(req);
}

void ts_run_controller_apply_signature(TsRunController *self, const char *function)
{
  g_return_if_fail(TS_IS_RUN_CONTROLLER(self) && function != NULL);
  TsLoadedModule *module = ts_workspace_get_module(self->workspace);
  TsModuleFunction *fn = module ? ts_loaded_module_lookup(module, function) : NULL;
  if (!fn || ts_engine_worker_get_busy(self->worker))
    return;
  g_autoptr(GError) error = NULL;
  g_autofree ts_spec *specs = NULL;
  int n = 0;
  if (!ts_input_signature_relaxed(fn, &specs, &n, &error)) {
    g_autofree char *text = g_strdup_printf("Cannot apply an input signature: %s", error->message);
    message(self, text);
    return;
  }
  g_autoptr(GStrvBuilder) b = g_strv_builder_new();
  for (int i = 0; i < n; i++) {
    g_autofree char *text = ts_spec_to_string(&specs[i]);
    g_strv_builder_add(b, text);
  }
  g_auto(GStrv) texts = g_strv_builder_end(b);
  g_autofree char *sig = ts_input_signature_to_string(fn, specs, n);
  SignatureRequest *req = g_new0(SignatureRequest, 1);
  req->self = g_object_ref(self);
  req->text = g_strdup_printf("%s now has the input signature %s", function, sig);
  ts_engine_worker_set_input_signature_async(self->worker, function, (const char *const *)texts,
                                             on_signature_applied, req);
}

void ts_run_controller_cancel(TsRunController *self)
{
  g_return_if_fail(TS_IS_RUN_CONTROLLER(self));
  if (self->run_cancellable)
    g_cancellable_cancel(self->run_cancellable);
}

static void on_progress(TsEngineWorker *worker, guint call_id, double fraction, TsRunController *self)
{
  if (call_id == self->run_id && self->run_cancellable && self->run_repeat > 1)
    ts_run_panel_set_progress(self->run_panel, fraction);
}

static void on_transfer(TsEngineWorker *worker, guint call_id, guint64 received, guint64 total, TsRunController *self)
{
  if (call_id == self->run_id && self->run_cancellable)
    ts_run_panel_set_transfer(self->run_panel, received, total);
}

static void on_trace(TsEngineWorker *worker, TsTraceEntry *entry, TsRunController *self)
{
  ts_trace_log_add(self->trace_log, entry);
  const char *function = ts_trace_entry_get_function(entry);
  if (g_strcmp0(function, self->run_tracing) == 0) /* its trace ended: a death now is not the trace's */
    g_clear_pointer(&self->run_tracing, g_free);
  if (ts_trace_entry_get_failed(entry)) {
    ts_workspace_set_trace_error(self->workspace, function, ts_trace_entry_get_reason(entry));
    return;
  }
  ts_workspace_set_trace_error(self->workspace, function, NULL);
  ts_function_list_add_trace(self->function_list, entry);
  TsSidebarItem *item = ts_function_list_get_selected(self->function_list);
  if (ts_trace_entry_get_module(entry) == ts_workspace_get_module(self->workspace) && item &&
      g_strcmp0(ts_sidebar_item_get_function_name(item), ts_trace_entry_get_function(entry)) == 0)
    ts_function_list_select(self->function_list, ts_trace_entry_get_function(entry),
                            ts_trace_entry_get_concrete_index(entry));
}

static void on_warning(TsEngineWorker *worker, guint kind, const char *function,
                       const char *message, const char *arguments, TsRunController *self)
{
  /* retracing warnings have a fix to apply (the suggested input signature); a divergence has none */
  ts_trace_log_show_warning(self->trace_log, function, message, kind != TS_WARNING_DIVERGENCE);
}

static void on_output(TsEngineWorker *worker, guint call_id, const char *label, gint64 time_us, int source,
                      const char *text, TsRunController *self)
{
  ts_console_add_output(self->console, call_id, label, time_us, source, text);
}

static void on_print(TsEngineWorker *worker, guint call_id, const char *text, TsRunController *self)
{
  ts_console_note_print(self->console, call_id, text);
}

static void console_note(TsRunController *self, guint call_id, const char *label, const char *text)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    if (!**l && !l[1])
      break;
    ts_console_add_output(self->console, call_id, label, g_get_real_time(), TS_CONSOLE_SOURCE_WORKER, *l);
  }
}

/* The worker ended on its own: what happened goes to the console (the run
 * that was running fails with the summary), and a fresh worker opens the
 * module again so that the next Run can start. */
static void on_worker_died(TsEngineWorker *worker, TsWorkerDeath *death, const char *label,
                           TsRunController *self)
{
  g_autofree char *what = g_strdup_printf("%s%s%s", label ? label : "the worker", label ? " " : " ",
                                          death->summary);
  console_note(self, death->call_id, label, what);
  if (death->last_op) {
    g_autofree char *op = g_strdup_printf("last op started: %s", death->last_op);
    console_note(self, death->call_id, label, op);
  }
  if (death->backtrace) {
    console_note(self, death->call_id, label, "backtrace of the worker:");
    console_note(self, death->call_id, label, death->backtrace);
  }
}

static void on_worker_busy(TsEngineWorker *worker, GParamSpec *pspec, TsRunController *self)
{
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
}

static const struct {
  const char *name;
  TsDebugCommand command;
} DEBUG_COMMANDS[] = {
  { "continue", TS_DEBUG_COMMAND_CONTINUE }, { "over", TS_DEBUG_COMMAND_STEP_OVER },
  { "into", TS_DEBUG_COMMAND_STEP_INTO },    { "out", TS_DEBUG_COMMAND_STEP_OUT },
  { "pause", TS_DEBUG_COMMAND_PAUSE },       { "stop", TS_DEBUG_COMMAND_STOP },
};

/* Steps through the history of the ops that ran (the stop stays where it is). */
static const struct {
  const char *name;
  int delta;
} HISTORY_STEPS[] = { { "back", -1 }, { "forward", 1 } };

void ts_run_controller_debug(TsRunController *self, const char *which)
{
  g_return_if_fail(TS_IS_RUN_CONTROLLER(self) && which != NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(DEBUG_COMMANDS); i++)
    if (g_str_equal(which, DEBUG_COMMANDS[i].name))
      ts_debug_panel_command(self->debug_panel, DEBUG_COMMANDS[i].command);
  for (size_t i = 0; i < G_N_ELEMENTS(HISTORY_STEPS); i++)
    if (g_str_equal(which, HISTORY_STEPS[i].name))
      ts_debug_panel_step_history(self->debug_panel, HISTORY_STEPS[i].delta);
}

gboolean ts_run_controller_get_running(TsRunController *self)
{
  g_return_val_if_fail(TS_IS_RUN_CONTROLLER(self), FALSE);
  return self->run_cancellable != NULL;
}

gboolean ts_run_controller_get_busy(TsRunController *self)
{
  g_return_val_if_fail(TS_IS_RUN_CONTROLLER(self), FALSE);
  return self->run_cancellable != NULL || ts_engine_worker_get_busy(self->worker);
}

char *ts_run_controller_take_death(TsRunController *self)
{
  g_return_val_if_fail(TS_IS_RUN_CONTROLLER(self), NULL);
  return g_steal_pointer(&self->death);
}

void ts_run_controller_shut_down(TsRunController *self)
{
  g_return_if_fail(TS_IS_RUN_CONTROLLER(self));
  self->shut_down = TRUE;
  if (self->run_cancellable)
    g_cancellable_cancel(self->run_cancellable);
  g_signal_handlers_disconnect_by_data(self->worker, self);
  if (self->debug_panel)
    g_signal_handlers_disconnect_by_data(self->debug_panel, self);
}

TsRunController *ts_run_controller_new(TsEngineWorker *worker, TsWorkspace *workspace, const TsRunPanels *panels)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(worker) && TS_IS_WORKSPACE(workspace) && panels != NULL, NULL);
  TsRunController *self = g_object_new(TS_TYPE_RUN_CONTROLLER, NULL);
  self->worker = g_object_ref(worker);
  self->workspace = g_object_ref(workspace);
  self->run_panel = panels->run_panel;
  self->trace_log = panels->trace_log;
  self->console = panels->console;
  self->function_list = panels->function_list;
  self->debug_panel = panels->debug_panel;
  self->profiler_panel = panels->profiler_panel;
  self->bottom_stack = panels->panels;
  g_signal_connect(worker, "trace", G_CALLBACK(on_trace), self);
  g_signal_connect(worker, "warning", G_CALLBACK(on_warning), self);
  g_signal_connect(worker, "output", G_CALLBACK(on_output), self);
  g_signal_connect(worker, "print", G_CALLBACK(on_print), self);
  g_signal_connect(worker, "progress", G_CALLBACK(on_progress), self);
  g_signal_connect(worker, "transfer", G_CALLBACK(on_transfer), self);
  g_signal_connect(worker, "notify::busy", G_CALLBACK(on_worker_busy), self);
  g_signal_connect(worker, "died", G_CALLBACK(on_worker_died), self);
  if (self->debug_panel)
    g_signal_connect(self->debug_panel, "finished", G_CALLBACK(on_debug_finished), self);
  ts_workspace_add_busy_source(workspace, G_OBJECT(self), "busy");
  /* runs record a profile while the workspace asks for one (win.profile) */
  g_object_bind_property(workspace, "profile", worker, "profiling", G_BINDING_SYNC_CREATE);
  /* and go to the workspace's device (win.device) */
  g_object_bind_property(workspace, "device", worker, "device", G_BINDING_SYNC_CREATE);
  return self;
}

static void ts_run_controller_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TsRunController *self = TS_RUN_CONTROLLER(object);
  switch (prop_id) {
  case PROP_RUNNING: g_value_set_boolean(value, ts_run_controller_get_running(self)); break;
  case PROP_BUSY: g_value_set_boolean(value, ts_run_controller_get_busy(self)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_run_controller_dispose(GObject *object)
{
  TsRunController *self = TS_RUN_CONTROLLER(object);
  if (self->worker && !self->shut_down)
    ts_run_controller_shut_down(self);
  g_clear_object(&self->run_cancellable);
  g_clear_object(&self->worker);
  g_clear_object(&self->workspace);
  G_OBJECT_CLASS(ts_run_controller_parent_class)->dispose(object);
}

static void ts_run_controller_finalize(GObject *object)
{
  TsRunController *self = TS_RUN_CONTROLLER(object);
  g_strfreev(self->debug_args);
  g_free(self->against);
  g_strfreev(self->against_args);
  g_free(self->death);
  g_free(self->run_tracing);
  g_free(self->run_signature);
  G_OBJECT_CLASS(ts_run_controller_parent_class)->finalize(object);
}

static void ts_run_controller_class_init(TsRunControllerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->get_property = ts_run_controller_get_property;
  object_class->dispose = ts_run_controller_dispose;
  object_class->finalize = ts_run_controller_finalize;
  GParamFlags flags = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
  properties[PROP_RUNNING] = g_param_spec_boolean("running", NULL, NULL, FALSE, flags);
  properties[PROP_BUSY] = g_param_spec_boolean("busy", NULL, NULL, FALSE, flags);
  g_object_class_install_properties(object_class, N_PROPS, properties);
  signals[SIGNAL_MESSAGE] = g_signal_new("message", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                         NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void ts_run_controller_init(TsRunController *self)
{
}
