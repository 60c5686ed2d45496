/* ts-run-panel.c — argument editors, remembered inputs, results (tensors
 * in a compact TsTensorView, everything else as text). */
#include "ts-run-panel.h"

#include <adwaita.h>
#include <string.h>

#include "ts-arg-row.h"
#include "ts-tensor-view.h"
#include "ts-workspace.h"

#define PULSE_MS 120

typedef struct {
  char **specs;
  guint repeat;
} Remembered;

struct _TsRunPanel {
  GtkWidget parent_instance;
  GtkLabel *function_label;
  GtkBox *args_box;
  GtkLabel *no_args_label;
  GtkButton *add_button;
  GtkSpinButton *repeat_spin;
  GtkButton *cancel_button;
  GtkProgressBar *progress_bar;
  GtkLabel *result_meta_label;
  GtkLabel *error_label;
  GtkTextView *result_view;
  GtkStack *result_stack;             /* the text, or the tensor view for a tensor of rank 1 and up */
  TsTensorView *result_tensor_view;
  GtkScrolledWindow *panel_scroll;    /* the whole panel, where the window is short */
  GtkScrolledWindow *result_tensor_scroll;
  GtkWidget *result_heading;
  guint reveal_id;                    /* a tick callback bringing the result into view */
  int reveal_frames;                  /* the frames it has seen since asked */
  double page;                        /* the panel's shown height, last seen */

  TsWorkspace *workspace; /* the panel shows its function's arguments */
  TsLoadedModule *module;
  char *function;
  gboolean unnamed;      /* no named parameters: rows are added by hand */
  GHashTable *remembered; /* "source\nfunction" -> Remembered */
  GSettings *settings;    /* where remembered arguments persist, or NULL */
  guint tick_id;
  guint run_calls;        /* the run under way: how many calls, since when */
  gint64 run_start_us;
  double run_fraction;    /* < 0 until the first progress */
  guint64 run_received, run_total; /* a remote worker's large result arriving (total 0: none) */
};

G_DEFINE_FINAL_TYPE(TsRunPanel, ts_run_panel, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_WORKSPACE, N_PROPS };
static GParamSpec *properties[N_PROPS];

static void remembered_free(gpointer data)
{
  Remembered *r = data;
  g_strfreev(r->specs);
  g_free(r);
}

static char *key_for(const char *source, const char *function)
{
  return g_strdup_printf("%s\n%s", source, function);
}

static char *remember_key(TsRunPanel *self)
{
  return key_for(ts_loaded_module_get_source(self->module), self->function);
}

#define MAX_REMEMBERED 500 /* functions whose arguments persist */

/* Writes the remembered arguments to the settings. */
static void persist(TsRunPanel *self)
{
  if (!self->settings)
    return;
  GVariantBuilder b;
  g_variant_builder_init(&b, G_VARIANT_TYPE("a{s(asu)}"));
  GHashTableIter it;
  gpointer key, value;
  guint n = 0;
  g_hash_table_iter_init(&it, self->remembered);
  while (g_hash_table_iter_next(&it, &key, &value) && n++ < MAX_REMEMBERED) {
    const Remembered *r = value;
    g_variant_builder_add(&b, "{s(^asu)}", (const char *)key, r->specs, r->repeat);
  }
  g_settings_set_value(self->settings, "remembered-arguments", g_variant_builder_end(&b));
}

static void remember(TsRunPanel *self, char *key, const char *const *specs, guint repeat)
{
  Remembered *r = g_new0(Remembered, 1);
  r->specs = g_strdupv((char **)specs);
  r->repeat = MAX(repeat, 1);
  g_hash_table_replace(self->remembered, key, r);
  persist(self);
}

void ts_run_panel_remember(TsRunPanel *self, const char *source, const char *function,
                           const char *const *specs, guint repeat)
{
  g_return_if_fail(TS_IS_RUN_PANEL(self) && source != NULL && function != NULL && specs != NULL);
  remember(self, key_for(source, function), specs, repeat);
}

void ts_run_panel_set_settings(TsRunPanel *self, GSettings *settings)
{
  g_return_if_fail(TS_IS_RUN_PANEL(self) && G_IS_SETTINGS(settings));
  g_set_object(&self->settings, settings);
  g_autoptr(GVariant) saved = g_settings_get_value(settings, "remembered-arguments");
  GVariantIter it;
  const char *key;
  g_autofree const char **specs = NULL;
  guint32 repeat;
  g_variant_iter_init(&it, saved);
  while (g_variant_iter_next(&it, "{&s(^a&su)}", &key, &specs, &repeat)) {
    Remembered *r = g_new0(Remembered, 1);
    r->specs = g_strdupv((char **)specs);
    r->repeat = MAX(repeat, 1);
    g_hash_table_replace(self->remembered, g_strdup(key), r);
    g_clear_pointer(&specs, g_free);
  }
}

void ts_run_panel_foreach_remembered(TsRunPanel *self, const char *source, TsRememberedFunc func,
                                     gpointer user_data)
{
  g_return_if_fail(TS_IS_RUN_PANEL(self) && source != NULL && func != NULL);
  g_autofree char *prefix = key_for(source, "");
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, self->remembered);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    const Remembered *r = value;
    if (g_str_has_prefix(key, prefix))
      func((const char *)key + strlen(prefix), (const char *const *)r->specs, r->repeat, user_data);
  }
}

static void on_row_remove(TsArgRow *row, gpointer user_data)
{
  TsRunPanel *self = user_data;
  gtk_box_remove(self->args_box, GTK_WIDGET(row));
}

static TsArgRow *add_row(TsRunPanel *self, const char *name)
{
  TsArgRow *row = ts_arg_row_new(name, self->unnamed);
  g_signal_connect(row, "remove", G_CALLBACK(on_row_remove), self);
  gtk_box_append(self->args_box, GTK_WIDGET(row));
  return row;
}

static guint n_rows(TsRunPanel *self)
{
  guint n = 0;
  for (GtkWidget *w = gtk_widget_get_first_child(GTK_WIDGET(self->args_box)); w;
       w = gtk_widget_get_next_sibling(w))
    n++;
  return n;
}

static void on_add_clicked(TsRunPanel *self)
{
  g_autofree char *name = g_strdup_printf("arg%u", n_rows(self));
  ts_arg_row_set_spec(add_row(self, name), "f32[3]:uniform");
}

static void clear_rows(TsRunPanel *self)
{
  GtkWidget *w;
  while ((w = gtk_widget_get_first_child(GTK_WIDGET(self->args_box))))
    gtk_box_remove(self->args_box, w);
}

static void set_result_text(TsRunPanel *self, const char *text)
{
  gtk_text_buffer_set_text(gtk_text_view_get_buffer(self->result_view), text ? text : "", -1);
}

/* The room a tensor result gets below its heading (its page scrolls with
 * the panel): its summary, statistics and a few rows of values; opened,
 * the inspector's controls too.  The panel shows that much when it comes. */
#define RESULT_PX 210
#define INSPECTOR_PX 320

/* Scrolls the panel (where it is short) as little as shows the heading of
 * the result and its page, the arguments above staying in view where there
 * is room; on the frames after the one asked in, as the result's new size
 * is laid out. */
static gboolean reveal_result_tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  TsRunPanel *self = TS_RUN_PANEL(widget);
  if (++self->reveal_frames > 3) {
    self->reveal_id = 0;
    return G_SOURCE_REMOVE;
  }
  GtkWidget *content = gtk_viewport_get_child(GTK_VIEWPORT(gtk_scrolled_window_get_child(self->panel_scroll)));
  /* an error is said in full, with as much of the arguments above it as
   * fits (one of them is to fix); the result's page, which it leaves
   * empty, is not what is shown then */
  gboolean error = gtk_widget_get_visible(GTK_WIDGET(self->error_label));
  GtkWidget *said = error ? GTK_WIDGET(self->error_label) : GTK_WIDGET(self->result_stack);
  graphene_rect_t heading, result;
  if (self->reveal_frames == 1 || !gtk_widget_compute_bounds(self->result_heading, content, &heading) ||
      !gtk_widget_compute_bounds(said, content, &result))
    return G_SOURCE_CONTINUE;
  GtkAdjustment *v = gtk_scrolled_window_get_vadjustment(self->panel_scroll);
  double page = gtk_adjustment_get_page_size(v), value = gtk_adjustment_get_value(v);
  double shown = error ? result.size.height
                 : ts_tensor_view_get_expanded(self->result_tensor_view) ? INSPECTOR_PX : RESULT_PX;
  double bottom = MIN(result.origin.y + MIN(result.size.height, shown), heading.origin.y + page);
  if (bottom > value + page || error)
    value = MAX(bottom - page, 0);
  gtk_adjustment_set_value(v, MIN(value, heading.origin.y));
  return G_SOURCE_CONTINUE;
}

static void reveal_result(TsRunPanel *self)
{
  gboolean expanded = ts_tensor_view_get_expanded(self->result_tensor_view);
  gtk_scrolled_window_set_min_content_height(self->result_tensor_scroll, expanded ? INSPECTOR_PX : RESULT_PX);
  self->reveal_frames = 0;
  if (!self->reveal_id)
    self->reveal_id = gtk_widget_add_tick_callback(GTK_WIDGET(self), reveal_result_tick, NULL, NULL);
}

/* Where the panel gets shorter (the panels below opened or grew, the
 * window shrank), the result or error it shows comes back into view. */
static void on_page_size(GtkAdjustment *v, GParamSpec *pspec, TsRunPanel *self)
{
  double page = gtk_adjustment_get_page_size(v);
  gboolean shorter = page < self->page;
  self->page = page;
  if (shorter && (*gtk_label_get_label(self->result_meta_label) ||
                  gtk_widget_get_visible(GTK_WIDGET(self->error_label))))
    reveal_result(self);
}

/* A tensor of rank 1 and up in the inspector; scalars, strings and
 * signatures stay text (t NULL). */
static void set_result_tensor(TsRunPanel *self, ts_tensor *t, const char *device)
{
  gboolean inspect = t && ts_tensor_rank(t) > 0;
  ts_tensor_view_set_copy(self->result_tensor_view, inspect ? t : NULL, NULL, device);
  gtk_stack_set_visible_child_name(self->result_stack, inspect ? "tensor" : "text");
}

void ts_run_panel_set_function(TsRunPanel *self, TsLoadedModule *module, const char *function)
{
  g_return_if_fail(TS_IS_RUN_PANEL(self));
  g_clear_pointer(&self->function, g_free);
  g_set_object(&self->module, module);
  clear_rows(self);
  set_result_text(self, NULL);
  set_result_tensor(self, NULL, NULL);
  gtk_label_set_label(self->result_meta_label, "");
  gtk_widget_set_visible(GTK_WIDGET(self->error_label), FALSE);
  TsModuleFunction *fn = module && function ? ts_loaded_module_lookup(module, function) : NULL;
  gtk_widget_set_sensitive(GTK_WIDGET(self), fn != NULL);
  if (!fn) {
    gtk_label_set_label(self->function_label, "");
    gtk_widget_set_visible(GTK_WIDGET(self->add_button), FALSE);
    gtk_widget_set_visible(GTK_WIDGET(self->no_args_label), FALSE);
    return;
  }
  self->function = g_strdup(function);
  int n_params = fn->n_params;
  self->unnamed = n_params == 0;
  GString *label = g_string_new(function);
  g_string_append_c(label, '(');
  for (int i = 0; i < n_params; i++)
    g_string_append_printf(label, "%s%s", i ? ", " : "", fn->params[i]);
  g_string_append_c(label, ')');
  gtk_label_set_label(self->function_label, label->str);
  g_string_free(label, TRUE);
  gtk_widget_set_visible(GTK_WIDGET(self->add_button), self->unnamed);

  g_autofree char *key = remember_key(self);
  Remembered *r = g_hash_table_lookup(self->remembered, key);
  for (int i = 0; i < n_params; i++)
    ts_arg_row_set_spec(add_row(self, fn->params[i]), "f32[3]:uniform");
  /* what the user typed last, else the module's examples (a first Run works) */
  if (r)
    ts_run_panel_set_args(self, (const char *const *)r->specs);
  else if (fn->examples)
    ts_run_panel_set_args(self, (const char *const *)fn->examples);
  gtk_spin_button_set_value(self->repeat_spin, r ? r->repeat : 1);
  gtk_widget_set_visible(GTK_WIDGET(self->no_args_label), n_rows(self) == 0 && !self->unnamed);
}

void ts_run_panel_set_args(TsRunPanel *self, const char *const *specs)
{
  g_return_if_fail(TS_IS_RUN_PANEL(self) && specs != NULL);
  guint n = g_strv_length((char **)specs);
  if (self->unnamed) {
    clear_rows(self);
    for (guint i = 0; i < n; i++) {
      g_autofree char *name = g_strdup_printf("arg%u", i);
      add_row(self, name);
    }
  }
  guint i = 0;
  for (GtkWidget *w = gtk_widget_get_first_child(GTK_WIDGET(self->args_box)); w && i < n;
       w = gtk_widget_get_next_sibling(w))
    ts_arg_row_set_spec(TS_ARG_ROW(w), specs[i++]);
}

GStrv ts_run_panel_dup_args(TsRunPanel *self, GError **error)
{
  g_return_val_if_fail(TS_IS_RUN_PANEL(self), NULL);
  g_autoptr(GStrvBuilder) b = g_strv_builder_new();
  for (GtkWidget *w = gtk_widget_get_first_child(GTK_WIDGET(self->args_box)); w;
       w = gtk_widget_get_next_sibling(w)) {
    g_autofree char *spec = ts_arg_row_dup_spec(TS_ARG_ROW(w), error);
    if (!spec)
      return NULL;
    g_strv_builder_add(b, spec);
  }
  GStrv specs = g_strv_builder_end(b);
  if (self->module && self->function)
    remember(self, remember_key(self), (const char *const *)specs, ts_run_panel_get_repeat(self));
  return specs;
}

guint ts_run_panel_get_repeat(TsRunPanel *self)
{
  g_return_val_if_fail(TS_IS_RUN_PANEL(self), 1);
  /* a count typed but not yet committed (Ctrl+R straight after typing) counts */
  gtk_spin_button_update(self->repeat_spin);
  return (guint)gtk_spin_button_get_value_as_int(self->repeat_spin);
}

void ts_run_panel_set_repeat(TsRunPanel *self, guint repeat)
{
  g_return_if_fail(TS_IS_RUN_PANEL(self));
  gtk_spin_button_set_value(self->repeat_spin, MAX(repeat, 1));
}

/* "call 120 of 1000 · 2.4 s", or "running · 0.8 s" before the first
 * progress, or "receiving the result · 12.0 of 64.0 MB · 0.8 s". */
static void update_progress_text(TsRunPanel *self)
{
  double elapsed = (double)(g_get_monotonic_time() - self->run_start_us) / G_USEC_PER_SEC;
  g_autofree char *text = NULL;
  if (self->run_total > 0)
    text = g_strdup_printf("receiving the result · %.1f of %.1f MB · %.1f s", (double)self->run_received / 1e6,
                           (double)self->run_total / 1e6, elapsed);
  else if (self->run_fraction < 0 || self->run_calls <= 1)
    text = g_strdup_printf("running · %.1f s", elapsed);
  else
    text = g_strdup_printf("call %u of %u · %.1f s",
                           MIN((guint)(self->run_fraction * self->run_calls) + 1, self->run_calls),
                           self->run_calls, elapsed);
  gtk_progress_bar_set_text(self->progress_bar, text);
}

/* Runs while a run is under way: pulses before the first progress, and
 * keeps the elapsed time moving. */
static gboolean tick(gpointer user_data)
{
  TsRunPanel *self = user_data;
  if (self->run_fraction < 0)
    gtk_progress_bar_pulse(self->progress_bar);
  update_progress_text(self);
  return G_SOURCE_CONTINUE;
}

void ts_run_panel_set_progress(TsRunPanel *self, double fraction)
{
  g_return_if_fail(TS_IS_RUN_PANEL(self));
  self->run_fraction = fraction;
  if (fraction >= 0)
    gtk_progress_bar_set_fraction(self->progress_bar, fraction);
  update_progress_text(self);
}

void ts_run_panel_set_transfer(TsRunPanel *self, guint64 received, guint64 total)
{
  g_return_if_fail(TS_IS_RUN_PANEL(self));
  self->run_received = received;
  self->run_total = total;
  self->run_fraction = total > 0 ? (double)received / (double)total : -1;
  gtk_progress_bar_set_fraction(self->progress_bar, MAX(self->run_fraction, 0));
  update_progress_text(self);
}

const char *ts_run_panel_get_progress_text(TsRunPanel *self)
{
  g_return_val_if_fail(TS_IS_RUN_PANEL(self), NULL);
  return gtk_widget_get_visible(GTK_WIDGET(self->progress_bar)) ? gtk_progress_bar_get_text(self->progress_bar)
                                                                 : NULL;
}

const char *ts_run_panel_get_meta(TsRunPanel *self)
{
  g_return_val_if_fail(TS_IS_RUN_PANEL(self), NULL);
  return gtk_label_get_label(self->result_meta_label);
}

void ts_run_panel_set_running(TsRunPanel *self, gboolean running)
{
  g_return_if_fail(TS_IS_RUN_PANEL(self));
  gtk_widget_set_visible(GTK_WIDGET(self->progress_bar), running);
  gtk_widget_set_visible(GTK_WIDGET(self->cancel_button), running);
  g_clear_handle_id(&self->tick_id, g_source_remove);
  if (running) {
    gtk_widget_set_visible(GTK_WIDGET(self->error_label), FALSE);
    gtk_progress_bar_set_fraction(self->progress_bar, 0);
    gtk_progress_bar_set_show_text(self->progress_bar, TRUE);
    self->run_calls = ts_run_panel_get_repeat(self);
    self->run_start_us = g_get_monotonic_time();
    self->run_received = self->run_total = 0;
    ts_run_panel_set_progress(self, -1);
    self->tick_id = g_timeout_add(PULSE_MS, tick, self);
  }
}

void ts_run_panel_show_result(TsRunPanel *self, const TsRunResult *r, gboolean eager)
{
  g_return_if_fail(TS_IS_RUN_PANEL(self) && r != NULL);
  gtk_widget_set_visible(GTK_WIDGET(self->error_label), FALSE);
  set_result_text(self, r->value_text);
  set_result_tensor(self, r->tensor, r->device);
  g_autofree char *meta = NULL;
  if (r->traced_only)
    meta = g_strdup_printf("%s · traced, not run (%.3f ms)", r->label, (double)r->total_ns / 1e6);
  else
    meta = g_strdup_printf("%s · %s · %s · %u call%s, %.3f ms", r->label, r->shape_text,
                           eager ? "eager" : "graph", r->n_calls, r->n_calls == 1 ? "" : "s",
                           (double)r->total_ns / 1e6);
  gtk_label_set_label(self->result_meta_label, meta);
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->result_meta_label), meta);
  reveal_result(self);
}

void ts_run_panel_show_error(TsRunPanel *self, const char *message)
{
  g_return_if_fail(TS_IS_RUN_PANEL(self));
  gtk_label_set_label(self->error_label, message);
  gtk_widget_set_visible(GTK_WIDGET(self->error_label), message != NULL);
  if (message) {
    /* the last run failed: nothing of an earlier one stays shown as if it were this one's */
    set_result_text(self, NULL);
    set_result_tensor(self, NULL, NULL);
    gtk_label_set_label(self->result_meta_label, "");
    reveal_result(self); /* the error is said where the result would be */
  }
}

const char *ts_run_panel_get_error(TsRunPanel *self)
{
  g_return_val_if_fail(TS_IS_RUN_PANEL(self), NULL);
  return gtk_widget_get_visible(GTK_WIDGET(self->error_label)) ? gtk_label_get_label(self->error_label) : NULL;
}

TsTensorView *ts_run_panel_get_tensor_view(TsRunPanel *self)
{
  g_return_val_if_fail(TS_IS_RUN_PANEL(self), NULL);
  return self->result_tensor_view;
}

char *ts_run_panel_dup_result_text(TsRunPanel *self)
{
  g_return_val_if_fail(TS_IS_RUN_PANEL(self), NULL);
  GtkTextBuffer *buffer = gtk_text_view_get_buffer(self->result_view);
  GtkTextIter start, end;
  gtk_text_buffer_get_bounds(buffer, &start, &end);
  return gtk_text_buffer_get_text(buffer, &start, &end, FALSE);
}

/* ---- the workspace ---------------------------------------------------------------- */

static void on_workspace_function(TsRunPanel *self)
{
  const char *function = ts_workspace_get_function(self->workspace);
  ts_run_panel_set_function(self, function ? ts_workspace_get_module(self->workspace) : NULL, function);
}

static void set_workspace(TsRunPanel *self, TsWorkspace *workspace)
{
  if (self->workspace == workspace)
    return;
  if (self->workspace)
    g_signal_handlers_disconnect_by_func(self->workspace, on_workspace_function, self);
  g_set_object(&self->workspace, workspace);
  if (workspace)
    g_signal_connect_swapped(workspace, "notify::function", G_CALLBACK(on_workspace_function), self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_WORKSPACE]);
}

static void ts_run_panel_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  switch (id) {
  case PROP_WORKSPACE: g_value_set_object(value, TS_RUN_PANEL(object)->workspace); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void ts_run_panel_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
  switch (id) {
  case PROP_WORKSPACE: set_workspace(TS_RUN_PANEL(object), g_value_get_object(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void ts_run_panel_dispose(GObject *object)
{
  TsRunPanel *self = TS_RUN_PANEL(object);
  g_clear_handle_id(&self->tick_id, g_source_remove);
  if (self->reveal_id)
    gtk_widget_remove_tick_callback(GTK_WIDGET(self), self->reveal_id);
  self->reveal_id = 0;
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_RUN_PANEL);
  /* the template's unnamed root is not among the children it clears */
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  g_clear_object(&self->module);
  set_workspace(self, NULL);
  G_OBJECT_CLASS(ts_run_panel_parent_class)->dispose(object);
}

static void ts_run_panel_finalize(GObject *object)
{
  TsRunPanel *self = TS_RUN_PANEL(object);
  g_free(self->function);
  g_hash_table_unref(self->remembered);
  g_clear_object(&self->settings);
  G_OBJECT_CLASS(ts_run_panel_parent_class)->finalize(object);
}

static void ts_run_panel_class_init(TsRunPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = ts_run_panel_dispose;
  object_class->finalize = ts_run_panel_finalize;
  object_class->get_property = ts_run_panel_get_property;
  object_class->set_property = ts_run_panel_set_property;
  /* the window's template binds it: the panel follows the function selected */
  properties[PROP_WORKSPACE] = g_param_spec_object("workspace", NULL, NULL, TS_TYPE_WORKSPACE,
                                                   G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/io/github/tracescope/Tracescope/ts-run-panel.ui");
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, function_label);
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, args_box);
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, no_args_label);
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, add_button);
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, repeat_spin);
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, cancel_button);
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, progress_bar);
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, result_meta_label);
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, error_label);
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, result_view);
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, result_stack);
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, result_tensor_view);
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, panel_scroll);
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, result_tensor_scroll);
  gtk_widget_class_bind_template_child(widget_class, TsRunPanel, result_heading);
  gtk_widget_class_bind_template_callback(widget_class, on_add_clicked);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "tsrunpanel");
}

static void ts_run_panel_init(TsRunPanel *self)
{
  g_type_ensure(TS_TYPE_ARG_ROW);
  g_type_ensure(TS_TYPE_TENSOR_VIEW);
  gtk_widget_init_template(GTK_WIDGET(self));
  gtk_scrolled_window_set_min_content_height(self->result_tensor_scroll, RESULT_PX);
  /* opened (Inspect), the inspector comes into view */
  g_signal_connect_swapped(self->result_tensor_view, "notify::expanded", G_CALLBACK(reveal_result), self);
  g_signal_connect(gtk_scrolled_window_get_vadjustment(self->panel_scroll), "notify::page-size",
                   G_CALLBACK(on_page_size), self);
  self->remembered = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, remembered_free);
  gtk_widget_set_sensitive(GTK_WIDGET(self), FALSE);
}
