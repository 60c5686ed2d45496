/* ts-trace-log.c — the trace log table and the retrace banner. */
#include "ts-trace-log.h"

#include <adwaita.h>

struct _TsTraceLog {
  GtkWidget parent_instance;
  GtkRevealer *banner_revealer;
  GtkLabel *banner_label;
  GtkButton *apply_button;
  GtkStack *stack;
  GtkColumnView *column_view;
  GListStore *entries;
  GtkSingleSelection *selection;
};

enum { SIGNAL_ENTRY_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TsTraceLog, ts_trace_log, GTK_TYPE_WIDGET)

static void on_row_activated(TsTraceLog *self, guint position)
{
  g_autoptr(TsTraceEntry) entry = g_list_model_get_item(G_LIST_MODEL(self->entries), position);
  if (entry)
    g_signal_emit(self, signals[SIGNAL_ENTRY_ACTIVATED], 0, entry);
}

static void on_dismiss_clicked(TsTraceLog *self)
{
  ts_trace_log_hide_warning(self);
}

void ts_trace_log_add(TsTraceLog *self, TsTraceEntry *entry)
{
  g_return_if_fail(TS_IS_TRACE_LOG(self) && TS_IS_TRACE_ENTRY(entry));
  g_list_store_append(self->entries, entry);
  gtk_stack_set_visible_child_name(self->stack, "log");
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->entries));
  gtk_widget_activate_action(GTK_WIDGET(self->column_view), "list.scroll-to-item", "u", n - 1);
}

void ts_trace_log_clear(TsTraceLog *self)
{
  g_return_if_fail(TS_IS_TRACE_LOG(self));
  g_list_store_remove_all(self->entries);
  gtk_stack_set_visible_child_name(self->stack, "empty");
  ts_trace_log_hide_warning(self);
}

GListModel *ts_trace_log_get_entries(TsTraceLog *self)
{
  g_return_val_if_fail(TS_IS_TRACE_LOG(self), NULL);
  return G_LIST_MODEL(self->entries);
}

void ts_trace_log_show_warning(TsTraceLog *self, const char *function, const char *message,
                               gboolean fixable)
{
  g_return_if_fail(TS_IS_TRACE_LOG(self) && function != NULL && message != NULL);
  gtk_label_set_label(self->banner_label, message);
  gtk_actionable_set_action_target(GTK_ACTIONABLE(self->apply_button), "s", function);
  gtk_widget_set_visible(GTK_WIDGET(self->apply_button), fixable);
  gtk_revealer_set_reveal_child(self->banner_revealer, TRUE);
}

void ts_trace_log_hide_warning(TsTraceLog *self)
{
  g_return_if_fail(TS_IS_TRACE_LOG(self));
  gtk_revealer_set_reveal_child(self->banner_revealer, FALSE);
}

const char *ts_trace_log_get_warning(TsTraceLog *self)
{
  g_return_val_if_fail(TS_IS_TRACE_LOG(self), NULL);
  if (!gtk_revealer_get_reveal_child(self->banner_revealer))
    return NULL;
  return gtk_label_get_label(self->banner_label);
}

static void ts_trace_log_dispose(GObject *object)
{
  TsTraceLog *self = TS_TRACE_LOG(object);
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_TRACE_LOG);
  /* the template's unnamed root is not among the children it clears */
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  g_clear_object(&self->selection);
  G_OBJECT_CLASS(ts_trace_log_parent_class)->dispose(object);
}

static void ts_trace_log_class_init(TsTraceLogClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  G_OBJECT_CLASS(klass)->dispose = ts_trace_log_dispose;
  signals[SIGNAL_ENTRY_ACTIVATED] =
    g_signal_new("entry-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                 NULL, G_TYPE_NONE, 1, TS_TYPE_TRACE_ENTRY);
  g_type_ensure(TS_TYPE_TRACE_ENTRY);
  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/io/github/tracescope/Tracescope/ts-trace-log.ui");
  gtk_widget_class_bind_template_child(widget_class, TsTraceLog, banner_revealer);
  gtk_widget_class_bind_template_child(widget_class, TsTraceLog, banner_label);
  gtk_widget_class_bind_template_child(widget_class, TsTraceLog, apply_button);
  gtk_widget_class_bind_template_child(widget_class, TsTraceLog, stack);
  gtk_widget_class_bind_template_child(widget_class, TsTraceLog, column_view);
  gtk_widget_class_bind_template_callback(widget_class, on_row_activated);
  gtk_widget_class_bind_template_callback(widget_class, on_dismiss_clicked);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "tstracelog");
}

static void ts_trace_log_init(TsTraceLog *self)
{
  gtk_widget_init_template(GTK_WIDGET(self));
  self->entries = g_list_store_new(TS_TYPE_TRACE_ENTRY);
  self->selection = gtk_single_selection_new(G_LIST_MODEL(self->entries)); /* takes the store */
  gtk_single_selection_set_autoselect(self->selection, FALSE);
  gtk_single_selection_set_can_unselect(self->selection, TRUE);
  gtk_column_view_set_model(self->column_view, GTK_SELECTION_MODEL(self->selection));
}
