/* ts-graph-view-search.c — Ctrl+F: find nodes by name (regular
 * expression), op type or file:line; Enter and Shift+Enter step through the
 * matches, each one revealed (its groups opened), selected and flown to. */
#include "ts-graph-view-private.h"

#include <glib/gi18n.h>

static void show_status(TsGraphView *self, const GError *error)
{
  GtkWidget *entry = GTK_WIDGET(self->search_entry);
  const char *query = gtk_editable_get_text(GTK_EDITABLE(entry));
  g_autofree char *text = NULL;
  if (error)
    text = g_strdup(_("bad query"));
  else if (self->matches->len == 0)
    text = g_strdup(*query ? _("no match") : "");
  else if (self->match_index < 0)
    text = g_strdup_printf(g_dngettext(NULL, "%u match", "%u matches", self->matches->len), self->matches->len);
  else
    text = g_strdup_printf(_("%d of %u"), self->match_index + 1, self->matches->len);
  gtk_label_set_text(self->search_status, text);
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->search_status), error ? error->message : NULL);
  if (error || (*query && self->matches->len == 0))
    gtk_widget_add_css_class(entry, "error");
  else
    gtk_widget_remove_css_class(entry, "error");
}

int ts_graph_view_search(TsGraphView *self, ts_view_find_kind kind, const char *query, GError **error)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), -1);
  g_return_val_if_fail((unsigned)kind < TS_VIEW_FIND_KIND_COUNT, -1);
  g_array_set_size(self->matches, 0);
  self->match_index = -1;
  if (!self->model || !query || !*query)
    return 0;
  GArray *found = ts_view_model_find(self->model, kind, query, error);
  if (!found)
    return -1;
  g_array_append_vals(self->matches, found->data, found->len);
  g_array_free(found, TRUE);
  return (int)self->matches->len;
}

void ts_graph_view_search_next(TsGraphView *self, gboolean forward)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  int n = (int)self->matches->len;
  if (n == 0)
    return;
  if (self->match_index < 0)
    self->match_index = forward ? 0 : n - 1;
  else
    self->match_index = (self->match_index + (forward ? 1 : n - 1)) % n;
  ts_graph_view_reveal_item(self, g_array_index(self->matches, int, self->match_index));
  show_status(self, NULL);
}

void _ts_graph_view_show_search(TsGraphView *self)
{
  gtk_revealer_set_reveal_child(self->search_revealer, TRUE);
  gtk_widget_queue_draw(GTK_WIDGET(self)); /* the legend moves under the bar */
  gtk_widget_grab_focus(GTK_WIDGET(self->search_entry));
}

/* ---- the search bar ------------------------------------------------------------------ */

static void on_search_changed(TsGraphView *self)
{
  GError *error = NULL;
  guint kind = gtk_drop_down_get_selected(self->search_kind);
  ts_graph_view_search(self, kind < TS_VIEW_FIND_KIND_COUNT ? (ts_view_find_kind)kind : TS_VIEW_FIND_NAME,
                       gtk_editable_get_text(GTK_EDITABLE(self->search_entry)), &error);
  if (self->matches->len > 0) /* as you type: the first match, in sight */
    ts_graph_view_search_next(self, TRUE);
  show_status(self, error);
  g_clear_error(&error);
}

static void on_search_kind_changed(TsGraphView *self)
{
  on_search_changed(self);
}

static void on_search_activate(TsGraphView *self)
{
  ts_graph_view_search_next(self, TRUE);
}

static void on_search_next_match(TsGraphView *self)
{
  ts_graph_view_search_next(self, TRUE);
}

static void on_search_previous_match(TsGraphView *self)
{
  ts_graph_view_search_next(self, FALSE);
}

void _ts_graph_view_close_search(TsGraphView *self)
{
  gtk_revealer_set_reveal_child(self->search_revealer, FALSE);
  gtk_widget_queue_draw(GTK_WIDGET(self));
  gtk_editable_set_text(GTK_EDITABLE(self->search_entry), "");
}

static void on_search_stop(TsGraphView *self)
{
  gtk_revealer_set_reveal_child(self->search_revealer, FALSE);
  gtk_widget_queue_draw(GTK_WIDGET(self));
  gtk_widget_grab_focus(GTK_WIDGET(self));
}

/* Shift+Enter in the entry: the previous match (Enter alone activates). */
static gboolean on_entry_key_pressed(GtkEventControllerKey *controller, guint keyval, guint keycode,
                                     GdkModifierType state, TsGraphView *self)
{
  if ((keyval == GDK_KEY_Return || keyval == GDK_KEY_KP_Enter) && (state & GDK_SHIFT_MASK)) {
    ts_graph_view_search_next(self, FALSE);
    return GDK_EVENT_STOP;
  }
  return GDK_EVENT_PROPAGATE;
}

static void action_search(GtkWidget *widget, const char *name, GVariant *parameter)
{
  _ts_graph_view_show_search(TS_GRAPH_VIEW(widget));
}

static void action_search_step(GtkWidget *widget, const char *name, GVariant *parameter)
{
  ts_graph_view_search_next(TS_GRAPH_VIEW(widget), g_str_equal(name, "view.search-next"));
}

void _ts_graph_view_class_init_search(GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_callback(widget_class, on_search_changed);
  gtk_widget_class_bind_template_callback(widget_class, on_search_kind_changed);
  gtk_widget_class_bind_template_callback(widget_class, on_search_activate);
  gtk_widget_class_bind_template_callback(widget_class, on_search_next_match);
  gtk_widget_class_bind_template_callback(widget_class, on_search_previous_match);
  gtk_widget_class_bind_template_callback(widget_class, on_search_stop);
  gtk_widget_class_install_action(widget_class, "view.search", NULL, action_search);
  gtk_widget_class_install_action(widget_class, "view.search-next", NULL, action_search_step);
  gtk_widget_class_install_action(widget_class, "view.search-previous", NULL, action_search_step);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_f, GDK_CONTROL_MASK, "view.search", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_g, GDK_CONTROL_MASK, "view.search-next", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_G, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                      "view.search-previous", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_F3, 0, "view.search-next", NULL);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_F3, GDK_SHIFT_MASK, "view.search-previous", NULL);
}

void _ts_graph_view_init_search(TsGraphView *self)
{
  GtkEventController *keys = gtk_event_controller_key_new();
  gtk_event_controller_set_propagation_phase(keys, GTK_PHASE_CAPTURE);
  g_signal_connect(keys, "key-pressed", G_CALLBACK(on_entry_key_pressed), self);
  gtk_widget_add_controller(GTK_WIDGET(self->search_entry), keys);
}
