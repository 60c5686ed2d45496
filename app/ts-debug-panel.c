/* ts-debug-panel.c — the step debugger in the window (ts-debug-panel.h).
 *
 * One debug call at a time: DebugStart, then a DebugWait out whenever the
 * debuggee runs (after the start and after each resume); its reply is the
 * next stop.  The panel shows a stop — or an op of the history, fetched
 * with DebugHistory — as a status line, the call stack, the source around
 * its line, and its tensors in the inspector. */
#include "ts-debug-panel.h"

#include <adwaita.h>
#include <string.h>
#include <tracescope-debug.h>

#include "ts-source-snippet.h"
#include "ts-tensor-view.h"
#include "ts-worker-debug.h"
#include "ts-workspace.h"

#define SOURCE_CONTEXT 6 /* lines either side of the op's */
#define CURRENT_MARK "current-line" /* the source line of the op shown */
#define INTRO "Run steps op by op."
#define BREAK_HELP                                                                                            \
  "A breakpoint: an op (MatMul), a node (dense_1/*), a line (file.c:12), nan, or a value test (max > 1e6); " \
  "Enter adds it"
#define MAX_STATUS_RESULT 48  /* characters of a result the status line says itself */
#define CONTROLS_WIDTH 220    /* px: the command buttons in a row */
#define SOURCE_MIN_COLUMNS 36 /* of the source's font: a line's number and its first 30 characters */
#define TENSORS_MIN_WIDTH 220 /* px: the tensor choice and the inspector's header whole */

struct _TsDebugPanel {
  GtkWidget parent_instance;

  /* the controls */
  GtkWidget *buttons[TS_DEBUG_COMMAND_COUNT];
  GtkLabel *status_label;
  GtkScale *history_scale;
  GtkLabel *history_label;
  GtkEntry *break_entry;
  GtkListBox *break_list;
  GtkListBox *stack_list;
  GtkLabel *source_label;
  GtkTextView *source_view;
  GtkAdjustment *source_vadj; /* the source's scrolling (its scrolled window's) */
  gulong keep_line_id;        /* its "changed" handler: keep_current_line */
  GtkDropDown *tensor_choice;
  GtkStringList *tensor_names;
  TsTensorView *inspector;

  TsWorkspace *workspace; /* another function selected there: what the panel shows goes */

  /* the debug call */
  TsEngineWorker *engine;
  TsWorker *worker;      /* the process the call runs in */
  char *module_file;
  char *function;
  GCancellable *cancellable; /* the call's requests */
  gboolean active, stopped, waiting;
  TsDebugStop *stop;     /* the live stop, or NULL while running */
  TsDebugOp *history_op; /* the history entry shown, or NULL */
  int history_index;     /* -1: the live stop */
  GPtrArray *tensors;    /* ts_tensor * of the op shown, in tensor_names' order */
  GPtrArray *breakpoints; /* char * specs, kept across calls */
  GHashTable *outputs;    /* node name -> LastOutput *: the last output seen of it */
  char *status;
  GCancellable *source_cancellable;
  gboolean setting_scale; /* the scale moved by the panel, not the user */
};

G_DEFINE_FINAL_TYPE(TsDebugPanel, ts_debug_panel, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_ACTIVE, PROP_STOPPED, PROP_WORKSPACE, N_PROPS };
static GParamSpec *properties[N_PROPS];
enum { SIGNAL_OP_SHOWN, SIGNAL_FINISHED, N_SIGNALS };
static guint signals[N_SIGNALS];

static const struct {
  const char *icon, *tooltip, *action; /* action: the worker's DebugResume action, or NULL */
} COMMANDS[TS_DEBUG_COMMAND_COUNT] = {
  [TS_DEBUG_COMMAND_CONTINUE] = { "media-playback-start-symbolic", "Continue (F5)", "continue" },
  [TS_DEBUG_COMMAND_STEP_OVER] = { "go-next-symbolic", "Step Over (F10)", "over" },
  [TS_DEBUG_COMMAND_STEP_INTO] = { "go-bottom-symbolic", "Step Into (F11)", "step" },
  [TS_DEBUG_COMMAND_STEP_OUT] = { "go-top-symbolic", "Step Out (Shift+F11)", "out" },
  [TS_DEBUG_COMMAND_PAUSE] = { "media-playback-pause-symbolic", "Pause", NULL },
  [TS_DEBUG_COMMAND_STOP] = { "media-playback-stop-symbolic", "Stop (Shift+F5)", NULL },
};

/* ---- state -------------------------------------------------------------------------- */

static void set_status(TsDebugPanel *self, const char *text)
{
  g_free(self->status);
  self->status = g_strdup(text);
  gtk_label_set_text(self->status_label, text);
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->status_label), text);
}

static void update_buttons(TsDebugPanel *self)
{
  for (int c = 0; c < TS_DEBUG_COMMAND_COUNT; c++) {
    gboolean on = COMMANDS[c].action ? self->stopped
                  : c == TS_DEBUG_COMMAND_PAUSE ? self->active && !self->stopped
                                                 : self->active;
    gtk_widget_set_sensitive(self->buttons[c], on);
  }
}

static void set_state(TsDebugPanel *self, gboolean active, gboolean stopped)
{
  gboolean was_active = self->active, was_stopped = self->stopped;
  self->active = active;
  self->stopped = stopped;
  update_buttons(self);
  if (was_active != active)
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_ACTIVE]);
  if (was_stopped != stopped)
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_STOPPED]);
}

/* The op shown: the history entry, else the live stop's. */
static const TsDebugOp *shown_op(TsDebugPanel *self)
{
  if (self->history_op)
    return self->history_op;
  return self->stop ? self->stop->op : NULL;
}

static char *location_text(const TsDebugOp *op)
{
  if (!op->file)
    return g_strdup("(made by the engine)");
  g_autofree char *base = g_path_get_basename(op->file);
  return g_strdup_printf("%s:%d", base, op->line);
}

/* ---- showing an op ---------------------------------------------------------------- */

static ts_tensor *make_tensor(const TsDebugTensor *t)
{
  if (!t->data)
    return NULL;
  ts_scope *scope = ts_scope_begin();
  ts_tensor *made = ts_constant(t->dtype, t->shape, g_bytes_get_data(t->data, NULL));
  ts_tensor *kept = made ? ts_tensor_ref(made) : NULL;
  ts_scope_end(scope);
  if (!made)
    ts_error_clear();
  return kept;
}

static void add_tensors(TsDebugPanel *self, GPtrArray *list, const char *kind)
{
  for (guint i = 0; i < list->len; i++) {
    const TsDebugTensor *t = g_ptr_array_index(list, i);
    g_autofree char *name = g_strdup_printf("%s %u: %s", kind, i, t->shape_text);
    gtk_string_list_append(self->tensor_names, name);
    g_ptr_array_add(self->tensors, make_tensor(t));
  }
}

/* A node's last output: the app's copy and the device it was made on. */
typedef struct {
  ts_tensor *tensor;
  char *device;
} LastOutput;

static void last_output_free(LastOutput *o)
{
  ts_tensor_unref(o->tensor);
  g_free(o->device);
  g_free(o);
}

/* An op's first output, kept by its node's path for the node details. */
static void remember_output(TsDebugPanel *self, const TsDebugOp *op, guint first_output)
{
  ts_tensor *t = op->path && first_output < self->tensors->len ? g_ptr_array_index(self->tensors, first_output) : NULL;
  if (!t)
    return;
  LastOutput *o = g_new(LastOutput, 1);
  o->tensor = ts_tensor_ref(t);
  o->device = g_strdup(((const TsDebugTensor *)g_ptr_array_index(op->outputs, 0))->device);
  g_hash_table_replace(self->outputs, g_strdup(op->path), o);
}

ts_tensor *ts_debug_panel_get_last_output(TsDebugPanel *self, const char *path, const char **device)
{
  g_return_val_if_fail(TS_IS_DEBUG_PANEL(self), NULL);
  const LastOutput *o = path ? g_hash_table_lookup(self->outputs, path) : NULL;
  if (device)
    *device = o ? o->device : NULL;
  return o ? o->tensor : NULL;
}

/* The worker's tensor i of the choice (show_op's order: the op's inputs,
 * then its outputs; else the call's result), NULL if none. */
static const TsDebugTensor *choice_tensor(TsDebugPanel *self, guint i)
{
  const TsDebugOp *op = shown_op(self);
  if (op)
    return i < op->inputs->len ? g_ptr_array_index(op->inputs, i)
         : i - op->inputs->len < op->outputs->len ? g_ptr_array_index(op->outputs, i - op->inputs->len)
         : NULL;
  return self->stop && i == 0 ? self->stop->result : NULL;
}

static void show_tensor(TsDebugPanel *self)
{
  guint i = gtk_drop_down_get_selected(self->tensor_choice);
  ts_tensor *t = i < self->tensors->len ? g_ptr_array_index(self->tensors, i) : NULL;
  const char *title = i < self->tensors->len
                        ? gtk_string_list_get_string(self->tensor_names, i)
                        : NULL;
  const TsDebugTensor *made = t ? choice_tensor(self, i) : NULL;
  ts_tensor_view_set_copy(self->inspector, t, title, made ? made->device : NULL);
}

static void on_tensor_chosen(TsDebugPanel *self)
{
  show_tensor(self);
}

static void clear_list(GtkListBox *list)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child(GTK_WIDGET(list))))
    gtk_list_box_remove(list, child);
}

static GtkWidget *label_row(const char *text, const char *css_class)
{
  GtkWidget *label = gtk_label_new(text);
  gtk_label_set_xalign(GTK_LABEL(label), 0);
  gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_MIDDLE);
  gtk_widget_set_tooltip_text(label, text);
  gtk_widget_set_margin_start(label, 6);
  gtk_widget_set_margin_end(label, 6);
  if (css_class)
    gtk_widget_add_css_class(label, css_class);
  return label;
}

static void show_stack(TsDebugPanel *self, const TsDebugOp *op)
{
  clear_list(self->stack_list);
  if (!op)
    return;
  /* innermost first, as debuggers list it: the op, then its frames */
  g_autofree char *where = location_text(op);
  g_autofree char *top = g_strdup_printf("#%" G_GUINT64_FORMAT " %s at %s", op->seq, op->op, where);
  gtk_list_box_append(self->stack_list, label_row(top, "monospace"));
  for (guint i = op->frames->len; i > 0; i--) {
    const TsDebugFrame *f = g_ptr_array_index(op->frames, i - 1);
    g_autofree char *base = f->file ? g_path_get_basename(f->file) : NULL;
    g_autofree char *text = base ? g_strdup_printf("%s at %s:%d", f->name, base, f->line) : g_strdup(f->name);
    gtk_list_box_append(self->stack_list, label_row(text, "monospace"));
  }
}

/* The view lays new text out, and makes a scroll asked for, when it is
 * next allocated; text the size of the last (the same snippet, or lines
 * as long) asks for no new size, and GTK 4.8's text view then does both
 * while the frame is drawn: it moves its adjustment there, and its scroll
 * bar, drawn after it, is drawn unallocated ("Trying to snapshot GtkGizmo
 * without a current allocation", the line a frame late).  A resize asked
 * for makes the scrolled window allocate the view again, then its scroll
 * bars, in the frame's layout. */
static void settle_source(TsDebugPanel *self)
{
  gtk_widget_queue_resize(GTK_WIDGET(self->source_view));
}

/* The source's least width: SOURCE_MIN_COLUMNS of its monospace font as
 * it is drawn (the user's font and scale), its margins and frame around. */
static void update_source_width(TsDebugPanel *self)
{
  GtkWidget *view = GTK_WIDGET(self->source_view);
  PangoFontMetrics *metrics = pango_context_get_metrics(gtk_widget_get_pango_context(view), NULL, NULL);
  int columns = PANGO_PIXELS_CEIL(SOURCE_MIN_COLUMNS * pango_font_metrics_get_approximate_char_width(metrics));
  pango_font_metrics_unref(metrics);
  int frame = 2; /* the scrolled window's, a pixel each side */
  GtkWidget *scroll = gtk_widget_get_parent(view);
  gtk_widget_set_size_request(scroll, columns + gtk_text_view_get_left_margin(self->source_view) +
                                        gtk_text_view_get_right_margin(self->source_view) + frame,
                              -1);
}

static void on_source_read(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TsSourceSnippet) snippet = ts_engine_worker_read_source_finish(TS_ENGINE_WORKER(source), res, &error);
  if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  TsDebugPanel *self = user_data;
  GtkTextBuffer *buffer = gtk_text_view_get_buffer(self->source_view);
  if (!snippet) {
    gtk_label_set_text(self->source_label, error->message);
    gtk_text_buffer_set_text(buffer, "", 0);
    settle_source(self);
    return;
  }
  update_source_width(self);
  g_autofree char *base = g_path_get_basename(snippet->path);
  gtk_label_set_text(self->source_label, base);
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->source_label), snippet->path);
  /* the numbers as wide as the last one: the code keeps the columns */
  int n_lines = (int)g_strv_length(snippet->lines);
  int digits = g_snprintf(NULL, 0, "%d", snippet->first_line + MAX(n_lines - 1, 0));
  g_autoptr(GString) text = g_string_new(NULL);
  for (int i = 0; i < n_lines; i++)
    g_string_append_printf(text, "%s%*d  %s", i ? "\n" : "", digits, snippet->first_line + i, snippet->lines[i]);
  gtk_text_buffer_set_text(buffer, text->str, (int)text->len);
  GtkTextIter start, end;
  gtk_text_buffer_get_iter_at_line(buffer, &start, snippet->line - snippet->first_line);
  end = start;
  gtk_text_iter_forward_to_line_end(&end);
  gtk_text_buffer_apply_tag_by_name(buffer, "current", &start, &end);
  GtkTextMark *mark = gtk_text_buffer_get_mark(buffer, CURRENT_MARK);
  gtk_text_buffer_move_mark(buffer, mark, &start);
  gtk_text_view_scroll_to_mark(self->source_view, mark, 0.1, TRUE, 0, 0.5);
  settle_source(self);
}

/* The view's height changed (the panel or the window resized after the
 * line was shown): the current line scrolls back into it, if it left. */
static void keep_current_line(TsDebugPanel *self)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer(self->source_view);
  gtk_text_view_scroll_mark_onscreen(self->source_view, gtk_text_buffer_get_mark(buffer, CURRENT_MARK));
}

static void show_source(TsDebugPanel *self, const TsDebugOp *op)
{
  g_cancellable_cancel(self->source_cancellable);
  g_clear_object(&self->source_cancellable);
  GtkTextBuffer *buffer = gtk_text_view_get_buffer(self->source_view);
  if (!op || !op->file) {
    gtk_label_set_text(self->source_label, op ? "This op was made by the engine: it has no source line" : "");
    gtk_text_buffer_set_text(buffer, "", 0);
    settle_source(self);
    return;
  }
  self->source_cancellable = g_cancellable_new();
  /* where the module is: a remote worker's sources are there */
  ts_engine_worker_read_source_async(self->engine, self->module_file, op->file, op->line, SOURCE_CONTEXT,
                                     self->source_cancellable, on_source_read, self);
}

static void show_op(TsDebugPanel *self)
{
  const TsDebugOp *op = shown_op(self);
  show_stack(self, op);
  show_source(self, op);
  g_ptr_array_set_size(self->tensors, 0);
  gtk_string_list_splice(self->tensor_names, 0, g_list_model_get_n_items(G_LIST_MODEL(self->tensor_names)), NULL);
  if (op) {
    add_tensors(self, op->inputs, "in");
    add_tensors(self, op->outputs, "out");
    if (op->outputs->len > 0)
      remember_output(self, op, op->inputs->len);
  } else if (self->stop && self->stop->result) {
    gtk_string_list_append(self->tensor_names, "result");
    g_ptr_array_add(self->tensors, make_tensor(self->stop->result));
  }
  /* the first output once the op has run, else its first input */
  guint first = op && op->outputs->len > 0 ? op->inputs->len : 0;
  gtk_drop_down_set_selected(self->tensor_choice, first);
  show_tensor(self);
  if (op)
    g_signal_emit(self, signals[SIGNAL_OP_SHOWN], 0, op->path, self->function);
}

static void show_history_range(TsDebugPanel *self)
{
  int n = self->stop ? self->stop->history_n : 0;
  self->setting_scale = TRUE;
  gtk_range_set_range(GTK_RANGE(self->history_scale), 0, MAX(n, 1));
  gtk_range_set_value(GTK_RANGE(self->history_scale), self->history_index < 0 ? n : self->history_index);
  self->setting_scale = FALSE;
  gtk_widget_set_sensitive(GTK_WIDGET(self->history_scale), n > 0);
  g_autofree char *text = self->history_index < 0
                            ? g_strdup_printf("live · %d op%s kept", n, n == 1 ? "" : "s")
                            : g_strdup_printf("op %d of %d (as it was)", self->history_index + 1, n);
  gtk_label_set_text(self->history_label, text);
}

/* ---- stops ---------------------------------------------------------------------------- */

static void wait_next(TsDebugPanel *self);

/* The status line's word on a result: a tensor is in the inspector (its
 * printed values are no status line's), else the text when it is one
 * short line. */
static char *result_summary(const TsDebugStop *stop, const char *result_text)
{
  if (stop && stop->result)
    return g_strdup_printf("the result, %s, is in the inspector", stop->result->shape_text);
  if (!result_text)
    return g_strdup("no result");
  if (!strchr(result_text, '\n') && g_utf8_strlen(result_text, -1) <= MAX_STATUS_RESULT)
    return g_strdup(result_text);
  return NULL; /* the tooltip holds it */
}

static void finish(TsDebugPanel *self, const char *result_text, const char *error)
{
  g_autofree char *summary = error ? NULL : result_summary(self->stop, result_text);
  g_autofree char *status = error     ? g_strdup_printf("Ended: %s", error)
                            : summary ? g_strdup_printf("Finished: %s", summary)
                                      : g_strdup("Finished (hover for the result)");
  set_status(self, status);
  if (!error && !summary)
    gtk_widget_set_tooltip_text(GTK_WIDGET(self->status_label), result_text);
  set_state(self, FALSE, FALSE);
  g_signal_emit(self, signals[SIGNAL_FINISHED], 0, result_text, error);
}

static void take_stop(TsDebugPanel *self, TsDebugStop *stop)
{
  g_clear_pointer(&self->stop, ts_debug_stop_free);
  g_clear_pointer(&self->history_op, ts_debug_op_free);
  self->stop = stop;
  self->history_index = -1;
  if (g_strcmp0(stop->reason, "finished") == 0) {
    show_op(self);
    show_history_range(self);
    finish(self, stop->result_text, stop->error);
    return;
  }
  g_autofree char *where = location_text(stop->op);
  g_autofree char *why = stop->breakpoint ? g_strdup_printf("%s %d", stop->reason, stop->breakpoint)
                                          : g_strdup(stop->reason);
  g_autofree char *gradient = stop->op->gradient_of ? g_strdup_printf(" (gradient of %s)", stop->op->gradient_of)
                                                     : g_strdup("");
  /* the device, where it is not the CPU */
  g_autofree char *device = g_strcmp0(stop->op->device, "CPU") != 0 ? g_strdup_printf(" on %s", stop->op->device)
                                                                      : g_strdup("");
  /* an op that failed: where, then the error (continuing ends the call with it) */
  gboolean failed = g_strcmp0(stop->reason, "error") == 0;
  g_autofree char *status = g_strdup_printf("%s #%" G_GUINT64_FORMAT " %s%s%s%s%s at %s (%s)",
                                            failed ? "Failed at" : stop->after ? "Stopped after" : "Stopped before",
                                            stop->op->seq, stop->op->op, stop->op->path ? " " : "",
                                            stop->op->path ? stop->op->path : "", gradient, device, where,
                                            failed && stop->error ? stop->error : why);
  set_status(self, status);
  set_state(self, TRUE, TRUE);
  show_op(self);
  show_history_range(self);
}

static void on_stop(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  TsDebugStop *stop = ts_worker_debug_wait_finish(TS_WORKER(source), res, &error);
  if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* the panel moved on */
  TsDebugPanel *self = user_data;
  self->waiting = FALSE;
  if (!stop) {
    finish(self, NULL, error->message);
    return;
  }
  take_stop(self, stop);
}

/* The worker went away under the debug call: reloaded, restarted, or died. */
static void on_worker_died(TsWorker *worker, TsWorkerDeath *death, TsDebugPanel *self)
{
  if (worker != self->worker || !self->active)
    return;
  g_cancellable_cancel(self->cancellable);
  self->waiting = FALSE;
  finish(self, NULL, death->expected ? "the module was reloaded, and its worker with it" : death->summary);
}

static void wait_next(TsDebugPanel *self)
{
  if (self->waiting)
    return;
  self->waiting = TRUE;
  ts_worker_debug_wait_async(self->worker, self->cancellable, on_stop, self);
}

static void on_started(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) ids = ts_worker_debug_start_finish(TS_WORKER(source), res, &error);
  if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  TsDebugPanel *self = user_data;
  if (!ids) {
    finish(self, NULL, error->message);
    return;
  }
  set_status(self, "Running…");
  wait_next(self);
}

static void on_command_done(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = ts_worker_debug_command_finish(TS_WORKER(source), res, &error);
  if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  TsDebugPanel *self = user_data;
  if (!reply)
    set_status(self, error->message);
}

/* ---- public ---------------------------------------------------------------------------- */

void ts_debug_panel_start(TsDebugPanel *self, TsEngineWorker *engine, TsLoadedModule *module,
                          const char *function, const char *const *args)
{
  g_return_if_fail(TS_IS_DEBUG_PANEL(self));
  TsWorker *worker = ts_engine_worker_get_worker(engine);
  if (self->active && self->worker)
    ts_worker_debug_command_async(self->worker, "DebugStop", NULL, NULL, NULL, NULL);
  g_cancellable_cancel(self->cancellable);
  g_clear_object(&self->cancellable);
  self->cancellable = g_cancellable_new();
  self->waiting = FALSE;
  g_clear_pointer(&self->stop, ts_debug_stop_free);
  g_clear_pointer(&self->history_op, ts_debug_op_free);
  self->history_index = -1;
  g_set_object(&self->engine, engine);
  if (self->worker != worker) {
    if (self->worker)
      g_signal_handlers_disconnect_by_func(self->worker, on_worker_died, self);
    g_set_object(&self->worker, worker);
    if (worker)
      g_signal_connect(worker, "died", G_CALLBACK(on_worker_died), self);
  }
  g_free(self->module_file);
  self->module_file = g_strdup(ts_loaded_module_get_file(module));
  g_free(self->function);
  self->function = g_strdup(function);
  show_op(self);
  show_history_range(self);
  if (!worker) {
    finish(self, NULL, "no module is open");
    return;
  }
  set_state(self, TRUE, FALSE);
  g_autofree char *label = ts_engine_worker_format_label(0, function, args);
  g_autofree char *status = g_strdup_printf("Starting %s…", label);
  set_status(self, status);
  g_ptr_array_add(self->breakpoints, NULL);
  /* with breakpoints set, run to the first; else stop before the first op */
  gboolean run = self->breakpoints->len > 1;
  ts_worker_debug_start_async(worker, ts_engine_worker_reserve_call_id(engine, function, args), function, args,
                              (const char *const *)self->breakpoints->pdata, TRUE,
                              ts_engine_worker_get_device(engine), run, self->cancellable,
                              on_started, self);
  g_ptr_array_remove_index(self->breakpoints, self->breakpoints->len - 1);
}

gboolean ts_debug_panel_command(TsDebugPanel *self, TsDebugCommand command)
{
  g_return_val_if_fail(TS_IS_DEBUG_PANEL(self) && command < TS_DEBUG_COMMAND_COUNT, FALSE);
  if (!gtk_widget_get_sensitive(self->buttons[command]) || !self->worker)
    return FALSE;
  if (COMMANDS[command].action) {
    ts_worker_debug_command_async(self->worker, "DebugResume", g_variant_new("(s)", COMMANDS[command].action),
                                  self->cancellable, on_command_done, self);
    g_clear_pointer(&self->history_op, ts_debug_op_free);
    set_status(self, "Running…");
    set_state(self, TRUE, FALSE);
  } else {
    ts_worker_debug_command_async(self->worker, command == TS_DEBUG_COMMAND_PAUSE ? "DebugPause" : "DebugStop",
                                  NULL, self->cancellable, on_command_done, self);
  }
  wait_next(self); /* the next stop: after the resume, the pause, or the end */
  return TRUE;
}

gboolean ts_debug_panel_get_active(TsDebugPanel *self)
{
  g_return_val_if_fail(TS_IS_DEBUG_PANEL(self), FALSE);
  return self->active;
}

gboolean ts_debug_panel_get_stopped(TsDebugPanel *self)
{
  g_return_val_if_fail(TS_IS_DEBUG_PANEL(self), FALSE);
  return self->stopped;
}

const char *ts_debug_panel_get_status(TsDebugPanel *self)
{
  g_return_val_if_fail(TS_IS_DEBUG_PANEL(self), NULL);
  return self->status;
}

gboolean ts_debug_panel_get_shown_op(TsDebugPanel *self, const char **op, const char **node, const char **file,
                                     int *line)
{
  g_return_val_if_fail(TS_IS_DEBUG_PANEL(self), FALSE);
  const TsDebugOp *shown = shown_op(self);
  if (!shown)
    return FALSE;
  *op = shown->op;
  *node = shown->node;
  *file = shown->file;
  *line = shown->line;
  return TRUE;
}

/* ---- breakpoints ------------------------------------------------------------------------ */

gboolean ts_debug_panel_remove_breakpoint(TsDebugPanel *self, const char *spec)
{
  g_return_val_if_fail(TS_IS_DEBUG_PANEL(self) && spec != NULL, FALSE);
  for (guint i = 0; i < self->breakpoints->len; i++)
    if (g_str_equal(g_ptr_array_index(self->breakpoints, i), spec)) {
      g_ptr_array_remove_index(self->breakpoints, i);
      break;
    }
  for (GtkWidget *row = gtk_widget_get_first_child(GTK_WIDGET(self->break_list)); row;
       row = gtk_widget_get_next_sibling(row)) {
    GtkWidget *box = GTK_IS_LIST_BOX_ROW(row) ? gtk_list_box_row_get_child(GTK_LIST_BOX_ROW(row)) : NULL;
    GtkWidget *button = box ? gtk_widget_get_last_child(box) : NULL;
    if (button && g_strcmp0(g_object_get_data(G_OBJECT(button), "spec"), spec) == 0) {
      gtk_list_box_remove(self->break_list, row);
      return TRUE;
    }
  }
  return FALSE;
}

static void on_remove_breakpoint(GtkButton *button, TsDebugPanel *self)
{
  ts_debug_panel_remove_breakpoint(self, g_object_get_data(G_OBJECT(button), "spec"));
}

static void add_breakpoint_row(TsDebugPanel *self, const char *spec)
{
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *label = label_row(spec, "monospace");
  gtk_widget_set_hexpand(label, TRUE);
  gtk_box_append(GTK_BOX(box), label);
  GtkWidget *remove = gtk_button_new_from_icon_name("user-trash-symbolic");
  gtk_widget_add_css_class(remove, "flat");
  gtk_widget_set_tooltip_text(remove, "Remove the breakpoint (for the next debug call)");
  g_object_set_data_full(G_OBJECT(remove), "spec", g_strdup(spec), g_free);
  g_signal_connect(remove, "clicked", G_CALLBACK(on_remove_breakpoint), self);
  gtk_box_append(GTK_BOX(box), remove);
  gtk_list_box_append(self->break_list, box);
}

gboolean ts_debug_panel_add_breakpoint(TsDebugPanel *self, const char *spec, GError **error)
{
  g_return_val_if_fail(TS_IS_DEBUG_PANEL(self) && spec != NULL, FALSE);
  g_autofree char *text = g_strstrip(g_strdup(spec));
  if (!ts_debug_break_check(text)) {
    ts_error *e = ts_error_take();
    /* the engine's message names the breakpoint */
    if (e)
      g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, e->message);
    else
      g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "breakpoint '%s': not understood", text);
    ts_error_free(e);
    return FALSE;
  }
  g_ptr_array_add(self->breakpoints, g_strdup(text));
  add_breakpoint_row(self, text);
  if (self->active && self->worker)
    ts_worker_debug_command_async(self->worker, "DebugBreak", g_variant_new("(s)", text), self->cancellable,
                                  on_command_done, self);
  return TRUE;
}

char **ts_debug_panel_dup_breakpoints(TsDebugPanel *self)
{
  g_return_val_if_fail(TS_IS_DEBUG_PANEL(self), NULL);
  g_autoptr(GStrvBuilder) b = g_strv_builder_new();
  for (guint i = 0; i < self->breakpoints->len; i++)
    g_strv_builder_add(b, g_ptr_array_index(self->breakpoints, i));
  return g_strv_builder_end(b);
}

static void on_break_activate(GtkEntry *entry, TsDebugPanel *self)
{
  g_autoptr(GError) error = NULL;
  const char *text = gtk_editable_get_text(GTK_EDITABLE(entry));
  if (!*text)
    return;
  if (ts_debug_panel_add_breakpoint(self, text, &error)) {
    gtk_editable_set_text(GTK_EDITABLE(entry), "");
    gtk_widget_remove_css_class(GTK_WIDGET(entry), "error");
    gtk_widget_set_tooltip_text(GTK_WIDGET(entry), BREAK_HELP);
  } else {
    gtk_widget_add_css_class(GTK_WIDGET(entry), "error");
    gtk_widget_set_tooltip_text(GTK_WIDGET(entry), error->message);
    set_status(self, error->message);
  }
}

/* ---- history ------------------------------------------------------------------------------ */

static void on_history_op(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  TsDebugOp *op = ts_worker_debug_history_finish(TS_WORKER(source), res, &error);
  if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  TsDebugPanel *self = user_data;
  if (!op) {
    set_status(self, error->message);
    return;
  }
  g_clear_pointer(&self->history_op, ts_debug_op_free);
  self->history_op = op;
  show_op(self);
  show_history_range(self);
}

void ts_debug_panel_show_history(TsDebugPanel *self, int index)
{
  g_return_if_fail(TS_IS_DEBUG_PANEL(self));
  int n = self->stop ? self->stop->history_n : 0;
  if (index < 0 || index >= n || !self->worker) {
    self->history_index = -1;
    g_clear_pointer(&self->history_op, ts_debug_op_free);
    show_op(self);
    show_history_range(self);
    return;
  }
  self->history_index = index;
  ts_worker_debug_history_async(self->worker, index, self->cancellable, on_history_op, self);
}

gboolean ts_debug_panel_step_history(TsDebugPanel *self, int delta)
{
  g_return_val_if_fail(TS_IS_DEBUG_PANEL(self), FALSE);
  int n = self->stop ? self->stop->history_n : 0;
  if (!self->stopped || n == 0)
    return FALSE;
  int at = self->history_index < 0 ? n : self->history_index; /* the live stop comes after the history */
  int to = CLAMP(at + delta, 0, n);
  if (to == at)
    return FALSE;
  ts_debug_panel_show_history(self, to == n ? -1 : to);
  return TRUE;
}

int ts_debug_panel_get_history_index(TsDebugPanel *self)
{
  g_return_val_if_fail(TS_IS_DEBUG_PANEL(self), -1);
  return self->history_index;
}

const char *ts_debug_panel_get_function(TsDebugPanel *self)
{
  g_return_val_if_fail(TS_IS_DEBUG_PANEL(self), NULL);
  return self->function;
}

TsTensorView *ts_debug_panel_get_inspector(TsDebugPanel *self)
{
  g_return_val_if_fail(TS_IS_DEBUG_PANEL(self), NULL);
  return self->inspector;
}

void ts_debug_panel_clear(TsDebugPanel *self)
{
  g_return_if_fail(TS_IS_DEBUG_PANEL(self));
  if (self->active && self->worker)
    ts_worker_debug_command_async(self->worker, "DebugStop", NULL, NULL, NULL, NULL);
  g_cancellable_cancel(self->cancellable);
  g_clear_object(&self->cancellable);
  self->waiting = FALSE;
  g_clear_pointer(&self->stop, ts_debug_stop_free);
  g_clear_pointer(&self->history_op, ts_debug_op_free);
  self->history_index = -1;
  g_hash_table_remove_all(self->outputs);
  g_clear_pointer(&self->function, g_free);
  show_op(self);
  show_history_range(self);
  set_status(self, INTRO);
  set_state(self, FALSE, FALSE);
}

/* ---- the workspace ---------------------------------------------------------------------- */

/* Another function selected: what the debugger shows was the last one's. */
static void on_workspace_function(TsDebugPanel *self)
{
  const char *function = ts_workspace_get_function(self->workspace);
  if (function && self->function && !g_str_equal(function, self->function))
    ts_debug_panel_clear(self);
}

/* Debug mode (chosen, or asked for again): the panel shows itself among
 * the panels of the stack it is a page of. */
static void on_workspace_mode(TsDebugPanel *self)
{
  GtkWidget *stack = gtk_widget_get_parent(GTK_WIDGET(self));
  if (ts_workspace_is_debug(self->workspace) && GTK_IS_STACK(stack))
    gtk_stack_set_visible_child(GTK_STACK(stack), GTK_WIDGET(self));
}

static void set_workspace(TsDebugPanel *self, TsWorkspace *workspace)
{
  if (self->workspace == workspace)
    return;
  if (self->workspace) {
    g_signal_handlers_disconnect_by_func(self->workspace, on_workspace_function, self);
    g_signal_handlers_disconnect_by_func(self->workspace, on_workspace_mode, self);
  }
  g_set_object(&self->workspace, workspace);
  if (workspace) {
    g_signal_connect_swapped(workspace, "notify::function", G_CALLBACK(on_workspace_function), self);
    g_signal_connect_swapped(workspace, "notify::mode", G_CALLBACK(on_workspace_mode), self);
  }
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_WORKSPACE]);
}

static void on_history_moved(GtkRange *range, TsDebugPanel *self)
{
  if (self->setting_scale)
    return;
  ts_debug_panel_show_history(self, (int)gtk_range_get_value(range));
}

/* ---- construction ------------------------------------------------------------------------ */

static void on_command_clicked(GtkButton *button, TsDebugPanel *self)
{
  ts_debug_panel_command(self, GPOINTER_TO_INT(g_object_get_data(G_OBJECT(button), "command")));
}

static GtkWidget *section(const char *title, GtkWidget *content)
{
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
  GtkWidget *heading = gtk_label_new(title);
  gtk_label_set_xalign(GTK_LABEL(heading), 0);
  gtk_widget_add_css_class(heading, "heading");
  gtk_box_append(GTK_BOX(box), heading);
  GtkWidget *scroll = gtk_scrolled_window_new();
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), content);
  gtk_widget_set_vexpand(scroll, TRUE);
  gtk_scrolled_window_set_has_frame(GTK_SCROLLED_WINDOW(scroll), TRUE);
  gtk_box_append(GTK_BOX(box), scroll);
  return box;
}

static GtkWidget *build_controls(TsDebugPanel *self)
{
  GtkWidget *column = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
  gtk_widget_set_size_request(column, CONTROLS_WIDTH, -1);
  GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 2);
  gtk_widget_add_css_class(bar, "linked");
  for (int c = 0; c < TS_DEBUG_COMMAND_COUNT; c++) {
    GtkWidget *b = gtk_button_new_from_icon_name(COMMANDS[c].icon);
    gtk_widget_set_tooltip_text(b, COMMANDS[c].tooltip);
    gtk_accessible_update_property(GTK_ACCESSIBLE(b), GTK_ACCESSIBLE_PROPERTY_LABEL, COMMANDS[c].tooltip, -1);
    g_object_set_data(G_OBJECT(b), "command", GINT_TO_POINTER(c));
    g_signal_connect(b, "clicked", G_CALLBACK(on_command_clicked), self);
    gtk_box_append(GTK_BOX(bar), b);
    self->buttons[c] = b;
  }
  gtk_box_append(GTK_BOX(column), bar);
  self->status_label = GTK_LABEL(gtk_label_new(INTRO));
  gtk_label_set_xalign(self->status_label, 0);
  /* one line, the whole text in the tooltip: a wrapping label would make
   * the panel's height depend on its width */
  gtk_label_set_ellipsize(self->status_label, PANGO_ELLIPSIZE_END);
  gtk_box_append(GTK_BOX(column), GTK_WIDGET(self->status_label));

  self->break_entry = GTK_ENTRY(gtk_entry_new());
  gtk_entry_set_placeholder_text(self->break_entry, "Add a breakpoint");
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->break_entry), BREAK_HELP);
  g_signal_connect(self->break_entry, "activate", G_CALLBACK(on_break_activate), self);
  gtk_box_append(GTK_BOX(column), GTK_WIDGET(self->break_entry));
  self->break_list = GTK_LIST_BOX(gtk_list_box_new());
  gtk_list_box_set_selection_mode(self->break_list, GTK_SELECTION_NONE);
  gtk_box_append(GTK_BOX(column), section("Breakpoints", GTK_WIDGET(self->break_list)));
  self->stack_list = GTK_LIST_BOX(gtk_list_box_new());
  gtk_list_box_set_selection_mode(self->stack_list, GTK_SELECTION_NONE);
  gtk_box_append(GTK_BOX(column), section("Call Stack", GTK_WIDGET(self->stack_list)));
  return column;
}

/* The scrubber under the source, as wide as it: a step back moves the line
 * shown, and the column of controls stays short enough to show the
 * breakpoint entry in a short window. */
static GtkWidget *build_history(TsDebugPanel *self)
{
  GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  self->history_scale = GTK_SCALE(gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, 0, 1, 1));
  gtk_scale_set_draw_value(self->history_scale, FALSE);
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->history_scale),
                              "Step back (Alt+[) and forward (Alt+]): the ops that ran, with their tensors as they were");
  gtk_widget_set_hexpand(GTK_WIDGET(self->history_scale), TRUE);
  g_signal_connect(self->history_scale, "value-changed", G_CALLBACK(on_history_moved), self);
  gtk_box_append(GTK_BOX(row), GTK_WIDGET(self->history_scale));
  self->history_label = GTK_LABEL(gtk_label_new(""));
  gtk_widget_set_name(GTK_WIDGET(self->history_label), "debug-history");
  /* a width of its own: the divider beside the source stays put as the
   * text changes from "live · 12 ops kept" to "op 3 of 12 (as it was)" */
  gtk_label_set_width_chars(self->history_label, 24);
  gtk_label_set_xalign(self->history_label, 0);
  gtk_label_set_ellipsize(self->history_label, PANGO_ELLIPSIZE_END);
  gtk_widget_add_css_class(GTK_WIDGET(self->history_label), "dim-label");
  gtk_box_append(GTK_BOX(row), GTK_WIDGET(self->history_label));
  return row;
}

static GtkWidget *build_source(TsDebugPanel *self)
{
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
  self->source_label = GTK_LABEL(gtk_label_new(""));
  gtk_label_set_xalign(self->source_label, 0);
  gtk_label_set_ellipsize(self->source_label, PANGO_ELLIPSIZE_START);
  gtk_widget_add_css_class(GTK_WIDGET(self->source_label), "heading");
  gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->source_label));
  self->source_view = GTK_TEXT_VIEW(gtk_text_view_new());
  gtk_widget_set_name(GTK_WIDGET(self->source_view), "debug-source");
  gtk_text_view_set_editable(self->source_view, FALSE);
  gtk_text_view_set_monospace(self->source_view, TRUE);
  gtk_text_view_set_cursor_visible(self->source_view, FALSE);
  gtk_text_view_set_left_margin(self->source_view, 4);
  gtk_text_view_set_right_margin(self->source_view, 4);
  /* its font is known once styled; a font changed later counts from the next op shown */
  g_signal_connect_swapped(self->source_view, "realize", G_CALLBACK(update_source_width), self);
  GtkTextBuffer *buffer = gtk_text_view_get_buffer(self->source_view);
  gtk_text_buffer_create_tag(buffer, "current", "paragraph-background", "rgba(53,132,228,0.28)", "weight",
                             PANGO_WEIGHT_BOLD, NULL);
  GtkTextIter first;
  gtk_text_buffer_get_start_iter(buffer, &first);
  gtk_text_buffer_create_mark(buffer, CURRENT_MARK, &first, TRUE);
  GtkWidget *scroll = gtk_scrolled_window_new();
  /* "changed": the page's size (or the text's); a scroll by the user is "value-changed" */
  self->source_vadj = gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(scroll));
  self->keep_line_id = g_signal_connect_swapped(self->source_vadj, "changed", G_CALLBACK(keep_current_line), self);
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), GTK_WIDGET(self->source_view));
  gtk_scrolled_window_set_has_frame(GTK_SCROLLED_WINDOW(scroll), TRUE);
  gtk_widget_set_vexpand(scroll, TRUE);
  gtk_box_append(GTK_BOX(box), scroll);
  gtk_box_append(GTK_BOX(box), build_history(self));
  return box;
}

static GtkWidget *build_tensors(TsDebugPanel *self)
{
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
  gtk_widget_set_name(box, "debug-tensors");
  self->tensor_names = gtk_string_list_new(NULL);
  self->tensor_choice = GTK_DROP_DOWN(gtk_drop_down_new(G_LIST_MODEL(g_object_ref(self->tensor_names)), NULL));
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->tensor_choice), "The op's inputs and outputs");
  g_signal_connect_swapped(self->tensor_choice, "notify::selected", G_CALLBACK(on_tensor_chosen), self);
  gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->tensor_choice));
  self->inspector = TS_TENSOR_VIEW(ts_tensor_view_new());
  ts_tensor_view_set_compact(self->inspector, TRUE);
  /* the choice above names the tensor: its title again would take a row
   * the values need in a short window */
  ts_tensor_view_set_title_shown(self->inspector, FALSE);
  /* Inspect's heat map and histogram scroll here: they do not make the
   * panel taller and push the graph away */
  GtkWidget *scroll = gtk_scrolled_window_new();
  gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroll), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), GTK_WIDGET(self->inspector));
  gtk_widget_set_vexpand(scroll, TRUE);
  gtk_box_append(GTK_BOX(box), scroll);
  return box;
}

static void ts_debug_panel_init(TsDebugPanel *self)
{
  self->history_index = -1;
  self->tensors = g_ptr_array_new_with_free_func((GDestroyNotify)ts_tensor_unref);
  self->breakpoints = g_ptr_array_new_with_free_func(g_free);
  self->outputs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)last_output_free);
  /* no pane is squeezed under its minimum (the buttons, the source's
   * columns and the inspector's controls stay whole); the source and the
   * tensors share what is left in proportion to those minimums until the
   * divider is moved, and in proportion to where it was put after */
  GtkWidget *outer = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL);
  GtkWidget *inner = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL);
  /* the controls scroll when the panel is short: its height is the graph's */
  GtkWidget *controls = gtk_scrolled_window_new();
  gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(controls), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(controls), build_controls(self));
  gtk_paned_set_start_child(GTK_PANED(outer), controls);
  gtk_paned_set_resize_start_child(GTK_PANED(outer), FALSE);
  gtk_paned_set_shrink_start_child(GTK_PANED(outer), FALSE);
  gtk_paned_set_shrink_end_child(GTK_PANED(outer), FALSE);
  gtk_paned_set_end_child(GTK_PANED(outer), inner);
  GtkWidget *source = build_source(self), *tensors = build_tensors(self);
  gtk_widget_set_size_request(tensors, TENSORS_MIN_WIDTH, -1);
  gtk_paned_set_start_child(GTK_PANED(inner), source);
  gtk_paned_set_end_child(GTK_PANED(inner), tensors);
  gtk_paned_set_shrink_start_child(GTK_PANED(inner), FALSE);
  gtk_paned_set_shrink_end_child(GTK_PANED(inner), FALSE);
  gtk_widget_set_margin_start(outer, 6);
  gtk_widget_set_margin_end(outer, 6);
  gtk_widget_set_margin_top(outer, 6);
  gtk_widget_set_margin_bottom(outer, 6);
  gtk_widget_set_parent(outer, GTK_WIDGET(self));
  update_buttons(self);
}

static void ts_debug_panel_dispose(GObject *object)
{
  TsDebugPanel *self = TS_DEBUG_PANEL(object);
  if (self->active && self->worker)
    ts_worker_debug_command_async(self->worker, "DebugStop", NULL, NULL, NULL, NULL);
  g_cancellable_cancel(self->cancellable);
  g_cancellable_cancel(self->source_cancellable);
  /* before the source goes: its adjustment may change on the way */
  g_clear_signal_handler(&self->keep_line_id, self->source_vadj);
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child(GTK_WIDGET(self))))
    gtk_widget_unparent(child);
  g_clear_object(&self->tensor_names);
  g_clear_object(&self->engine);
  if (self->worker)
    g_signal_handlers_disconnect_by_func(self->worker, on_worker_died, self);
  g_clear_object(&self->worker);
  set_workspace(self, NULL);
  G_OBJECT_CLASS(ts_debug_panel_parent_class)->dispose(object);
}

static void ts_debug_panel_finalize(GObject *object)
{
  TsDebugPanel *self = TS_DEBUG_PANEL(object);
  g_clear_object(&self->cancellable);
  g_clear_object(&self->source_cancellable);
  g_clear_pointer(&self->stop, ts_debug_stop_free);
  g_clear_pointer(&self->history_op, ts_debug_op_free);
  g_ptr_array_unref(self->tensors);
  g_ptr_array_unref(self->breakpoints);
  g_hash_table_unref(self->outputs);
  g_free(self->module_file);
  g_free(self->function);
  g_free(self->status);
  G_OBJECT_CLASS(ts_debug_panel_parent_class)->finalize(object);
}

static void ts_debug_panel_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  TsDebugPanel *self = TS_DEBUG_PANEL(object);
  switch (id) {
  case PROP_ACTIVE: g_value_set_boolean(value, self->active); break;
  case PROP_STOPPED: g_value_set_boolean(value, self->stopped); break;
  case PROP_WORKSPACE: g_value_set_object(value, self->workspace); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void ts_debug_panel_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
  switch (id) {
  case PROP_WORKSPACE: set_workspace(TS_DEBUG_PANEL(object), g_value_get_object(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void ts_debug_panel_class_init(TsDebugPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->dispose = ts_debug_panel_dispose;
  object_class->finalize = ts_debug_panel_finalize;
  object_class->get_property = ts_debug_panel_get_property;
  object_class->set_property = ts_debug_panel_set_property;
  properties[PROP_ACTIVE] = g_param_spec_boolean("active", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_STOPPED] = g_param_spec_boolean("stopped", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /* the window's template binds it */
  properties[PROP_WORKSPACE] = g_param_spec_object("workspace", NULL, NULL, TS_TYPE_WORKSPACE,
                                                   G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
  signals[SIGNAL_OP_SHOWN] = g_signal_new("op-shown", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                          NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);
  signals[SIGNAL_FINISHED] = g_signal_new("finished", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                          NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);
  gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "tsdebugpanel");
}

GtkWidget *ts_debug_panel_new(void)
{
  return g_object_new(TS_TYPE_DEBUG_PANEL, NULL);
}
