/* ts-tensor-view.c — TsTensorView: the object, the tensor (or difference)
 * it shows, and its summary.  Statistics and the histogram are computed
 * in one pass pair: at once for a small tensor, on a GTask thread above
 * TS_TENSOR_VIEW_ASYNC_ELEMENTS so the GUI never waits.  Slice controls
 * and export live in ts-tensor-view-slice.c and ts-tensor-view-export.c. */
#include "ts-tensor-view-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ts-viewer-resources.h"

#define TS_TENSOR_VIEW_ASYNC_ELEMENTS (1 << 20)

G_DEFINE_FINAL_TYPE(TsTensorView, ts_tensor_view, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_COMPACT, PROP_BUSY, PROP_EXPANDED, N_PROPS };
static GParamSpec *properties[N_PROPS];

GtkWidget *ts_tensor_view_new(void)
{
  return g_object_new(TS_TYPE_TENSOR_VIEW, NULL);
}

/* ---- statistics, here or on a thread ------------------------------------ */

typedef struct {
  ts_tensor *a, *b; /* b: a difference */
  ts_tensor *shown; /* a, or a − b */
  double max_abs, max_rel;
  ts_inspector_stats stats;
  ts_tensor_histogram hist;
  GError *error;
} analysis;

static void analysis_free(gpointer data)
{
  analysis *an = data;
  ts_tensor_unref(an->a);
  ts_tensor_unref(an->b);
  ts_tensor_unref(an->shown);
  g_clear_error(&an->error);
  g_free(an);
}

static void analyse(analysis *an, GCancellable *cancellable)
{
  an->shown = an->b ? ts_tensor_diff(an->a, an->b, &an->max_abs, &an->max_rel, &an->error)
                    : ts_tensor_ref(an->a);
  if (!an->shown)
    return;
  ts_inspector_stats_compute(an->shown, &an->stats);
  if (!g_cancellable_is_cancelled(cancellable)) /* another tensor is shown: stop early */
    ts_tensor_histogram_compute(an->shown, &an->stats, &an->hist);
}

static void analyse_in_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  analyse(data, cancellable);
  g_task_return_boolean(task, TRUE);
}

static void set_busy(TsTensorView *self, gboolean busy)
{
  gtk_widget_set_visible(self->spinner, busy);
  gtk_spinner_set_spinning(GTK_SPINNER(self->spinner), busy);
  if (self->busy != busy) {
    self->busy = busy;
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
  }
}

/* "min -1 · max 3 · mean 0.5 · std 1.2 · NaN 1 · +Inf 0 · −Inf 0 · zeros 4",
 * each name and its value joined by a no-break space: the line wraps
 * between two of them, never inside one ("std" at a line's end, its value
 * on the next).  Floats with none of NaN and Inf say so in one item (the
 * line fits a narrow panel in two lines, not three); other dtypes cannot
 * hold them and say nothing of them. */
static void update_stats_text(TsTensorView *self)
{
  if (!self->have_stats) {
    gtk_label_set_label(self->stats_label, self->busy ? _("computing statistics…") : "");
    return;
  }
  const ts_inspector_stats *s = &self->stats;
  char v[4][32];
  ts_format_value(s->min, v[0], sizeof v[0]);
  ts_format_value(s->max, v[1], sizeof v[1]);
  ts_format_value(s->mean, v[2], sizeof v[2]);
  ts_format_value(s->std, v[3], sizeof v[3]);
  GString *text = g_string_new(NULL);
  if (self->b) {
    char d[2][32];
    ts_format_value(self->max_abs, d[0], sizeof d[0]);
    ts_format_value(self->max_rel, d[1], sizeof d[1]);
    g_string_append_printf(text, _("max\u00a0|a−b|\u00a0%s · max\u00a0rel\u00a0%s\n"), d[0], d[1]);
  }
  g_string_append_printf(text, _("min\u00a0%s · max\u00a0%s · mean\u00a0%s · std\u00a0%s · "), v[0], v[1], v[2],
                         v[3]);
  if (s->n_nan || s->n_pos_inf || s->n_neg_inf)
    g_string_append_printf(text, _("NaN\u00a0%" G_GINT64_FORMAT " · +Inf\u00a0%" G_GINT64_FORMAT " · −Inf\u00a0%" G_GINT64_FORMAT " · "),
                           s->n_nan, s->n_pos_inf, s->n_neg_inf);
  else if (self->shown && ts_dtype_is_float(ts_tensor_dtype(self->shown)))
    g_string_append(text, _("no\u00a0NaN\u00a0or\u00a0Inf · "));
  g_string_append_printf(text, _("zeros\u00a0%" G_GINT64_FORMAT), s->n_zero);
  gtk_label_set_label(self->stats_label, text->str);
  g_string_free(text, TRUE);
}

static void install(TsTensorView *self, analysis *an)
{
  set_busy(self, FALSE);
  if (!an->shown) {
    _ts_tensor_view_set_message(self, an->error ? an->error->message : _("cannot compute the statistics"));
    update_stats_text(self);
    return;
  }
  if (self->shown != an->shown) {
    ts_tensor_unref(self->shown);
    self->shown = ts_tensor_ref(an->shown);
  }
  self->have_stats = TRUE;
  self->stats = an->stats;
  self->hist = an->hist;
  self->max_abs = an->max_abs;
  self->max_rel = an->max_rel;
  update_stats_text(self);
  ts_tensor_histogram_chart_set(self->histogram, &self->hist, NULL);
  _ts_tensor_view_refresh_slice(self);
}

typedef struct {
  GWeakRef view;
  guint serial;
} job;

static void on_analysed(GObject *source, GAsyncResult *result, gpointer data)
{
  job *j = data;
  g_autoptr(TsTensorView) self = g_weak_ref_get(&j->view);
  if (self && self->serial == j->serial && g_task_propagate_boolean(G_TASK(result), NULL))
    install(self, g_task_get_task_data(G_TASK(result)));
  g_weak_ref_clear(&j->view);
  g_free(j);
}

/* Statistics of self->host (or its difference with self->b). */
static void start_analysis(TsTensorView *self)
{
  analysis *an = g_new0(analysis, 1);
  an->a = ts_tensor_ref(self->host);
  an->b = ts_tensor_ref(self->b);
  if (ts_tensor_size(self->host) <= TS_TENSOR_VIEW_ASYNC_ELEMENTS) {
    analyse(an, NULL);
    install(self, an);
    analysis_free(an);
    return;
  }
  set_busy(self, TRUE);
  update_stats_text(self);
  self->cancellable = g_cancellable_new();
  job *j = g_new0(job, 1);
  g_weak_ref_init(&j->view, self);
  j->serial = self->serial;
  GTask *task = g_task_new(NULL, self->cancellable, on_analysed, j);
  g_task_set_task_data(task, an, analysis_free);
  g_task_run_in_thread(task, analyse_in_thread);
  g_object_unref(task);
}

/* ---- what is shown -------------------------------------------------------- */

void _ts_tensor_view_set_message(TsTensorView *self, const char *message)
{
  gtk_label_set_label(self->message_label, message ? message : "");
  gtk_widget_set_visible(GTK_WIDGET(self->message_label), message != NULL);
}

/* The title row, shown only with a title (and not hidden: see
 * ts_tensor_view_set_title_shown). */
static void show_title(TsTensorView *self, const char *title)
{
  gtk_label_set_label(self->title_label, title ? title : "");
  gtk_widget_set_visible(GTK_WIDGET(self->title_label), !self->title_hidden && title && *title);
}

void ts_tensor_view_set_title_shown(TsTensorView *self, gboolean shown)
{
  g_return_if_fail(TS_IS_TENSOR_VIEW(self));
  self->title_hidden = !shown;
  show_title(self, self->title);
}

static void clear(TsTensorView *self)
{
  self->serial++;
  if (self->cancellable)
    g_cancellable_cancel(self->cancellable);
  g_clear_object(&self->cancellable);
  g_clear_pointer(&self->tensor, ts_tensor_unref);
  g_clear_pointer(&self->host, ts_tensor_unref);
  g_clear_pointer(&self->b, ts_tensor_unref);
  g_clear_pointer(&self->shown, ts_tensor_unref);
  g_clear_pointer(&self->title, g_free);
  g_clear_pointer(&self->device, g_free);
  self->have_stats = FALSE;
  self->numeric = FALSE;
  set_busy(self, FALSE);
  _ts_tensor_view_set_message(self, NULL);
  show_title(self, NULL);
  gtk_label_set_label(self->summary_label, "");
  gtk_label_set_label(self->stats_label, "");
  ts_tensor_table_set_slice(self->table, NULL, NULL);
  ts_tensor_heat_map_set_slice(self->heat_map, NULL, NULL);
  ts_tensor_heat_map_set_note(self->heat_map, NULL);
  ts_tensor_histogram_chart_set(self->histogram, NULL, NULL);
  ts_tensor_slice_init(&self->slice, TS_SCALAR_SHAPE);
  _ts_tensor_view_build_slice_controls(self);
  gtk_widget_set_sensitive(self->export_button, FALSE);
}

/* "f32[1,8,8,3] · CPU · 192 elements" (the count and its word kept together) */
static void update_summary(TsTensorView *self, ts_tensor *t)
{
  char *desc = ts_shape_dtype_string(ts_tensor_dtype(t), ts_tensor_shape(t));
  const ts_backend *backend = ts_tensor_backend(t);
  int64_t n = ts_tensor_size(t);
  const char *device = self->device ? self->device : backend ? ts_backend_name(backend) : _("symbolic");
  g_autofree char *text = g_strdup_printf(_("%s%s · %s · %" G_GINT64_FORMAT "\u00a0element%s"),
                                          self->b ? _("a − b · ") : "", desc, device, n,
                                          n == 1 ? "" : "s");
  free(desc);
  gtk_label_set_label(self->summary_label, text);
  show_title(self, self->title);
}

/* Shows self->host (and self->b): summary, slice, statistics. */
static void show(TsTensorView *self)
{
  update_summary(self, self->tensor);
  if (!self->host) {
    _ts_tensor_view_set_message(self, _("A symbolic (traced) tensor: it has no values to show."));
    return;
  }
  self->numeric = ts_tensor_element_loader(ts_tensor_dtype(self->host)) != NULL;
  ts_tensor_slice_init(&self->slice, ts_tensor_shape(self->host));
  _ts_tensor_view_build_slice_controls(self);
  gtk_widget_set_sensitive(self->export_button, ts_tensor_dtype(self->host) != TS_VARIANT);
  if (!self->numeric) {
    g_autofree char *note = g_strdup_printf(_("not numeric (%s): no statistics, heat map or histogram"),
                                            ts_dtype_name(ts_tensor_dtype(self->host)));
    gtk_label_set_label(self->stats_label, note);
    ts_tensor_heat_map_set_note(self->heat_map, note);
    ts_tensor_histogram_chart_set(self->histogram, NULL, note);
    self->shown = ts_tensor_ref(self->host);
    _ts_tensor_view_refresh_slice(self);
    return;
  }
  if (!self->b) {
    self->shown = ts_tensor_ref(self->host); /* the table need not wait for statistics */
    _ts_tensor_view_refresh_slice(self);
  }
  ts_tensor_histogram_chart_set(self->histogram, NULL, _("Computing…"));
  if (self->b)
    ts_tensor_heat_map_set_note(self->heat_map, _("Computing…"));
  start_analysis(self);
}

void ts_tensor_view_set_tensor(TsTensorView *self, ts_tensor *t, const char *title)
{
  ts_tensor_view_set_copy(self, t, title, NULL);
}

void ts_tensor_view_set_copy(TsTensorView *self, ts_tensor *t, const char *title, const char *device)
{
  g_return_if_fail(TS_IS_TENSOR_VIEW(self));
  ts_tensor_ref(t); /* t may be what is shown now */
  clear(self);
  if (!t)
    return;
  self->tensor = t;
  self->host = ts_tensor_ref_host(t);
  self->title = g_strdup(title);
  self->device = g_strdup(device);
  show(self);
}

gboolean ts_tensor_view_set_diff(TsTensorView *self, ts_tensor *a, ts_tensor *b, GError **error)
{
  g_return_val_if_fail(TS_IS_TENSOR_VIEW(self) && a && b, FALSE);
  g_autoptr(GError) local = NULL;
  ts_tensor *ha = ts_tensor_ref_host(a), *hb = ts_tensor_ref_host(b);
  gboolean ok;
  if (!ha || !hb) {
    g_set_error_literal(&local, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                        _("cannot take the difference: a symbolic (traced) tensor has no values"));
    ok = FALSE;
  } else {
    ok = ts_tensor_diff_check(ha, hb, &local);
  }
  ts_tensor_ref(a);
  clear(self);
  self->tensor = a;
  self->title = g_strdup(_("Difference a − b"));
  if (!ok) {
    ts_tensor_unref(ha);
    ts_tensor_unref(hb);
    show_title(self, self->title);
    _ts_tensor_view_set_message(self, local->message);
    g_propagate_error(error, g_steal_pointer(&local));
    return FALSE;
  }
  self->host = ha;
  self->b = hb;
  show(self);
  _ts_tensor_view_show_page(self, "heat-map");
  return TRUE;
}

ts_tensor *ts_tensor_view_get_tensor(TsTensorView *self)
{
  g_return_val_if_fail(TS_IS_TENSOR_VIEW(self), NULL);
  return self->tensor;
}

/* ---- compact ---------------------------------------------------------------- */

static void update_compact(TsTensorView *self)
{
  gboolean expanded = ts_tensor_view_get_expanded(self);
  gtk_widget_set_visible(self->expand_button, self->compact);
  gtk_widget_set_visible(self->page_choice, expanded);
  if (!expanded)
    gtk_stack_set_visible_child_name(self->stack, "table");
  _ts_tensor_view_build_slice_controls(self);
}

static void on_expand_toggled(TsTensorView *self)
{
  update_compact(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_EXPANDED]);
}

gboolean ts_tensor_view_get_expanded(TsTensorView *self)
{
  g_return_val_if_fail(TS_IS_TENSOR_VIEW(self), FALSE);
  return !self->compact || gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(self->expand_button));
}

void ts_tensor_view_set_compact(TsTensorView *self, gboolean compact)
{
  g_return_if_fail(TS_IS_TENSOR_VIEW(self));
  if (self->compact == !!compact)
    return;
  self->compact = !!compact;
  update_compact(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_COMPACT]);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_EXPANDED]);
}

gboolean ts_tensor_view_get_compact(TsTensorView *self)
{
  g_return_val_if_fail(TS_IS_TENSOR_VIEW(self), FALSE);
  return self->compact;
}

gboolean ts_tensor_view_get_busy(TsTensorView *self)
{
  g_return_val_if_fail(TS_IS_TENSOR_VIEW(self), FALSE);
  return self->busy;
}

/* ---- for tests --------------------------------------------------------------- */

const ts_inspector_stats *_ts_tensor_view_get_stats(TsTensorView *self)
{
  return self->have_stats ? &self->stats : NULL;
}

const ts_tensor_histogram *_ts_tensor_view_get_histogram(TsTensorView *self)
{
  return self->have_stats ? &self->hist : NULL;
}

const char *_ts_tensor_view_get_summary(TsTensorView *self) { return gtk_label_get_label(self->summary_label); }
const char *_ts_tensor_view_get_stats_text(TsTensorView *self) { return gtk_label_get_label(self->stats_label); }

const char *_ts_tensor_view_get_message(TsTensorView *self)
{
  return gtk_widget_get_visible(GTK_WIDGET(self->message_label)) ? gtk_label_get_label(self->message_label) : NULL;
}

const ts_tensor_slice *_ts_tensor_view_get_slice(TsTensorView *self) { return &self->slice; }

void _ts_tensor_view_show_page(TsTensorView *self, const char *page)
{
  if (self->compact && strcmp(page, "table") != 0)
    gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(self->expand_button), TRUE);
  gtk_stack_set_visible_child_name(self->stack, page);
}

TsTensorTable *_ts_tensor_view_get_table(TsTensorView *self) { return self->table; }
TsTensorHeatMap *_ts_tensor_view_get_heat_map(TsTensorView *self) { return self->heat_map; }
TsTensorHistogramChart *_ts_tensor_view_get_histogram_chart(TsTensorView *self) { return self->histogram; }

/* ---- the page chooser ---------------------------------------------------------- */

/* The drop-down lists the stack's pages by title; the stack's pages model
 * selects the one shown, and each follows the other. */
static void on_page_chosen(TsTensorView *self)
{
  if (!self->stack)
    return; /* being disposed */
  guint i = gtk_drop_down_get_selected(GTK_DROP_DOWN(self->page_choice));
  g_autoptr(GtkSelectionModel) pages = gtk_stack_get_pages(self->stack);
  if (i != GTK_INVALID_LIST_POSITION)
    gtk_selection_model_select_item(pages, i, TRUE);
}

static void on_page_changed(TsTensorView *self)
{
  if (!self->stack || !self->page_choice)
    return; /* being disposed */
  g_autoptr(GtkSelectionModel) pages = gtk_stack_get_pages(self->stack);
  for (guint i = 0; i < g_list_model_get_n_items(G_LIST_MODEL(pages)); i++)
    if (gtk_selection_model_is_selected(pages, i))
      gtk_drop_down_set_selected(GTK_DROP_DOWN(self->page_choice), i);
  _ts_tensor_view_update_slice_box(self);
}

/* ---- the object -------------------------------------------------------------- */

static void ts_tensor_view_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TsTensorView *self = TS_TENSOR_VIEW(object);
  switch (prop_id) {
  case PROP_COMPACT:
    g_value_set_boolean(value, self->compact);
    break;
  case PROP_BUSY:
    g_value_set_boolean(value, self->busy);
    break;
  case PROP_EXPANDED:
    g_value_set_boolean(value, ts_tensor_view_get_expanded(self));
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_tensor_view_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  switch (prop_id) {
  case PROP_COMPACT:
    ts_tensor_view_set_compact(TS_TENSOR_VIEW(object), g_value_get_boolean(value));
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_tensor_view_dispose(GObject *object)
{
  TsTensorView *self = TS_TENSOR_VIEW(object);
  if (self->cancellable)
    g_cancellable_cancel(self->cancellable);
  g_clear_object(&self->cancellable);
  g_clear_pointer(&self->tensor, ts_tensor_unref);
  g_clear_pointer(&self->host, ts_tensor_unref);
  g_clear_pointer(&self->b, ts_tensor_unref);
  g_clear_pointer(&self->shown, ts_tensor_unref);
  g_clear_pointer(&self->title, g_free);
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_TENSOR_VIEW);
  /* the template's unnamed root is not among the children it clears */
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  G_OBJECT_CLASS(ts_tensor_view_parent_class)->dispose(object);
}

static void ts_tensor_view_class_init(TsTensorViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = ts_tensor_view_dispose;
  object_class->get_property = ts_tensor_view_get_property;
  object_class->set_property = ts_tensor_view_set_property;

  properties[PROP_COMPACT] = g_param_spec_boolean("compact", NULL, NULL, FALSE,
                                                  G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_BUSY] = g_param_spec_boolean("busy", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_EXPANDED] = g_param_spec_boolean("expanded", NULL, NULL, FALSE,
                                                   G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  ts_viewer_register_resource();
  gtk_widget_class_set_template_from_resource(widget_class, "/io/github/tracescope/viewer/ts-tensor-view.ui");
  gtk_widget_class_bind_template_child(widget_class, TsTensorView, title_label);
  gtk_widget_class_bind_template_child(widget_class, TsTensorView, message_label);
  gtk_widget_class_bind_template_child(widget_class, TsTensorView, summary_label);
  gtk_widget_class_bind_template_child(widget_class, TsTensorView, stats_label);
  gtk_widget_class_bind_template_child(widget_class, TsTensorView, spinner);
  gtk_widget_class_bind_template_child(widget_class, TsTensorView, expand_button);
  gtk_widget_class_bind_template_child(widget_class, TsTensorView, export_button);
  gtk_widget_class_bind_template_child(widget_class, TsTensorView, slice_box);
  gtk_widget_class_bind_template_child(widget_class, TsTensorView, page_choice);
  gtk_widget_class_bind_template_child(widget_class, TsTensorView, stack);
  gtk_widget_class_bind_template_child(widget_class, TsTensorView, table);
  gtk_widget_class_bind_template_child(widget_class, TsTensorView, heat_map);
  gtk_widget_class_bind_template_child(widget_class, TsTensorView, histogram);
  gtk_widget_class_bind_template_callback(widget_class, on_expand_toggled);
  gtk_widget_class_bind_template_callback(widget_class, on_page_changed);
  gtk_widget_class_bind_template_callback(widget_class, on_page_chosen);
  gtk_widget_class_bind_template_callback_full(widget_class, "on_export_clicked",
                                               G_CALLBACK(_ts_tensor_view_on_export_clicked));
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "tstensorview");
}

static void ts_tensor_view_init(TsTensorView *self)
{
  g_type_ensure(TS_TYPE_TENSOR_TABLE);
  g_type_ensure(TS_TYPE_TENSOR_HEAT_MAP);
  g_type_ensure(TS_TYPE_TENSOR_HISTOGRAM_CHART);
  gtk_widget_init_template(GTK_WIDGET(self));
  g_autoptr(GtkExpression) title = gtk_property_expression_new(GTK_TYPE_STACK_PAGE, NULL, "title");
  g_autoptr(GtkSelectionModel) pages = gtk_stack_get_pages(self->stack);
  gtk_drop_down_set_expression(GTK_DROP_DOWN(self->page_choice), title);
  gtk_drop_down_set_model(GTK_DROP_DOWN(self->page_choice), G_LIST_MODEL(pages));
  ts_tensor_slice_init(&self->slice, TS_SCALAR_SHAPE);
  gtk_widget_set_sensitive(self->export_button, FALSE);
  update_compact(self);
}
