/* ts-function-list.c — a tree list of functions and concrete functions,
 * filtered by name as the user types. */
#include "ts-function-list.h"

struct _TsFunctionList {
  GtkWidget parent_instance;
  GtkListView *list_view;
  GtkSearchEntry *filter_entry;
  GtkLabel *no_match_label;   /* shown while the filter hides every function */
  TsLoadedModule *module;
  GListStore *functions;
  GtkStringFilter *filter;    /* on the function rows' titles */
  GtkTreeListModel *tree;
  GtkSingleSelection *selection;
};

enum { PROP_0, PROP_SELECTED, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE(TsFunctionList, ts_function_list, GTK_TYPE_WIDGET)

/* Only rows with concrete functions get an expander; a function's row is
 * made anew when its first one arrives (see add_trace). */
static GListModel *create_children(gpointer item, gpointer user_data)
{
  GListModel *children = ts_sidebar_item_get_children(item);
  return children && g_list_model_get_n_items(children) > 0 ? g_object_ref(children) : NULL;
}

static void on_selection_changed(GtkSelectionModel *model, guint position, guint n_items,
                                 gpointer user_data)
{
  g_object_notify_by_pspec(G_OBJECT(user_data), properties[PROP_SELECTED]);
}

TsSidebarItem *ts_function_list_get_selected(TsFunctionList *self)
{
  g_return_val_if_fail(TS_IS_FUNCTION_LIST(self), NULL);
  GtkTreeListRow *row = gtk_single_selection_get_selected_item(self->selection);
  if (!row)
    return NULL;
  g_autoptr(GObject) item = gtk_tree_list_row_get_item(row);
  return TS_SIDEBAR_ITEM(item); /* the tree's models keep it alive */
}

GListModel *ts_function_list_get_functions(TsFunctionList *self)
{
  g_return_val_if_fail(TS_IS_FUNCTION_LIST(self), NULL);
  return G_LIST_MODEL(self->functions);
}

void ts_function_list_set_module(TsFunctionList *self, TsLoadedModule *module)
{
  g_return_if_fail(TS_IS_FUNCTION_LIST(self));
  g_return_if_fail(module == NULL || TS_IS_LOADED_MODULE(module));
  g_set_object(&self->module, module);
  /* a filter typed for the last module would hide the new one's functions */
  ts_function_list_set_filter(self, "");
  g_list_store_remove_all(self->functions);
  if (!module)
    return;
  int n = ts_loaded_module_get_n_functions(module);
  for (int i = 0; i < n; i++) {
    g_autoptr(TsSidebarItem) item =
      ts_sidebar_item_new_function(module, ts_loaded_module_get_function(module, i));
    g_list_store_append(self->functions, item);
  }
  gtk_single_selection_set_selected(self->selection, GTK_INVALID_LIST_POSITION);
}

static TsSidebarItem *find_function(TsFunctionList *self, const char *name, guint *position)
{
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->functions));
  for (guint i = 0; i < n; i++) {
    g_autoptr(TsSidebarItem) item = g_list_model_get_item(G_LIST_MODEL(self->functions), i);
    if (g_strcmp0(ts_sidebar_item_get_function_name(item), name) == 0) {
      *position = i;
      return item; /* the store keeps it alive */
    }
  }
  return NULL;
}

void ts_function_list_add_trace(TsFunctionList *self, TsTraceEntry *entry)
{
  g_return_if_fail(TS_IS_FUNCTION_LIST(self) && TS_IS_TRACE_ENTRY(entry));
  if (ts_trace_entry_get_module(entry) != self->module)
    return;
  guint position;
  TsSidebarItem *item = find_function(self, ts_trace_entry_get_function(entry), &position);
  if (!item)
    return;
  TsConcreteInfo *cf = (TsConcreteInfo *)ts_trace_entry_get_concrete(entry);
  if (!cf)
    return;
  gboolean first = g_list_model_get_n_items(ts_sidebar_item_get_children(item)) == 0;
  ts_sidebar_item_add_concrete(item, cf);
  if (!first)
    return;
  /* the row had no expander: replace it, keeping it selected if it was */
  TsSidebarItem *selected = ts_function_list_get_selected(self);
  gboolean reselect = selected == item;
  g_object_ref(item);
  g_list_store_splice(self->functions, position, 1, (gpointer *)&item, 1);
  g_object_unref(item);
  if (reselect)
    ts_function_list_select(self, ts_trace_entry_get_function(entry), -1);
}

static gboolean select_shown(TsFunctionList *self, const char *function, int concrete)
{
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->tree));
  for (guint i = 0; i < n; i++) {
    g_autoptr(GtkTreeListRow) row = g_list_model_get_item(G_LIST_MODEL(self->tree), i);
    g_autoptr(TsSidebarItem) item = gtk_tree_list_row_get_item(row);
    if (g_strcmp0(ts_sidebar_item_get_function_name(item), function) != 0 ||
        ts_sidebar_item_get_concrete_index(item) != concrete)
      continue;
    gtk_single_selection_set_selected(self->selection, i);
    gtk_widget_activate_action(GTK_WIDGET(self->list_view), "list.scroll-to-item", "u", i);
    return TRUE;
  }
  return FALSE;
}

gboolean ts_function_list_select(TsFunctionList *self, const char *function, int concrete)
{
  g_return_val_if_fail(TS_IS_FUNCTION_LIST(self) && function != NULL, FALSE);
  if (select_shown(self, function, concrete))
    return TRUE;
  /* hidden by the filter: a function asked for by name is shown again */
  if (!*gtk_editable_get_text(GTK_EDITABLE(self->filter_entry)))
    return FALSE;
  ts_function_list_set_filter(self, "");
  return select_shown(self, function, concrete);
}

void ts_function_list_set_filter(TsFunctionList *self, const char *text)
{
  g_return_if_fail(TS_IS_FUNCTION_LIST(self) && text != NULL);
  gtk_editable_set_text(GTK_EDITABLE(self->filter_entry), text);
  gtk_string_filter_set_search(self->filter, text); /* now, not after the entry's delay */
}

guint ts_function_list_get_n_shown(TsFunctionList *self)
{
  g_return_val_if_fail(TS_IS_FUNCTION_LIST(self), 0);
  return g_list_model_get_n_items(gtk_tree_list_model_get_model(self->tree));
}

static void on_filter_changed(GtkSearchEntry *entry, TsFunctionList *self)
{
  gtk_string_filter_set_search(self->filter, gtk_editable_get_text(GTK_EDITABLE(entry)));
}

static void on_shown_changed(GListModel *shown, guint position, guint removed, guint added, TsFunctionList *self)
{
  gtk_widget_set_visible(GTK_WIDGET(self->no_match_label), g_list_model_get_n_items(shown) == 0 &&
                                                              g_list_model_get_n_items(G_LIST_MODEL(self->functions)) > 0);
}

/* The first function the filter shows, selected (Enter or Down in the filter). */
static gboolean select_first_shown(TsFunctionList *self)
{
  if (g_list_model_get_n_items(G_LIST_MODEL(self->tree)) == 0)
    return FALSE;
  gtk_single_selection_set_selected(self->selection, 0);
  gtk_widget_activate_action(GTK_WIDGET(self->list_view), "list.scroll-to-item", "u", 0);
  return TRUE;
}

static void on_filter_activate(TsFunctionList *self)
{
  /* the entry's delay has not always passed: filter now */
  on_filter_changed(self->filter_entry, self);
  select_first_shown(self);
}

/* Down in the filter: its first row selected.  The focus stays in the
 * filter, to type on (in the list, GTK 4.8 keeps it on a row that a first
 * trace replaces, and complains at the next allocation). */
static gboolean on_filter_key_pressed(GtkEventControllerKey *keys, guint keyval, guint keycode,
                                      GdkModifierType state, TsFunctionList *self)
{
  if ((keyval != GDK_KEY_Down && keyval != GDK_KEY_KP_Down) ||
      (state & (GDK_CONTROL_MASK | GDK_ALT_MASK | GDK_SHIFT_MASK)))
    return GDK_EVENT_PROPAGATE;
  on_filter_changed(self->filter_entry, self);
  return select_first_shown(self) ? GDK_EVENT_STOP : GDK_EVENT_PROPAGATE;
}

void ts_function_list_capture_keys(TsFunctionList *self, GtkWidget *widget)
{
  g_return_if_fail(TS_IS_FUNCTION_LIST(self) && GTK_IS_WIDGET(widget));
  gtk_search_entry_set_key_capture_widget(self->filter_entry, widget);
}

gboolean ts_function_list_get_no_match_shown(TsFunctionList *self)
{
  g_return_val_if_fail(TS_IS_FUNCTION_LIST(self), FALSE);
  return gtk_widget_get_visible(GTK_WIDGET(self->no_match_label));
}

const char *ts_function_list_get_filter(TsFunctionList *self)
{
  g_return_val_if_fail(TS_IS_FUNCTION_LIST(self), NULL);
  return gtk_editable_get_text(GTK_EDITABLE(self->filter_entry));
}

static void ts_function_list_get_property(GObject *object, guint prop_id, GValue *value,
                                          GParamSpec *pspec)
{
  switch (prop_id) {
  case PROP_SELECTED: g_value_set_object(value, ts_function_list_get_selected(TS_FUNCTION_LIST(object))); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_function_list_dispose(GObject *object)
{
  TsFunctionList *self = TS_FUNCTION_LIST(object);
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_FUNCTION_LIST);
  /* the template's unnamed root is not among the children it clears */
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  g_clear_object(&self->selection);
  g_clear_object(&self->module);
  g_clear_object(&self->filter);
  g_clear_object(&self->functions);
  G_OBJECT_CLASS(ts_function_list_parent_class)->dispose(object);
}

static void ts_function_list_class_init(TsFunctionListClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = ts_function_list_dispose;
  object_class->get_property = ts_function_list_get_property;
  properties[PROP_SELECTED] =
    g_param_spec_object("selected", NULL, NULL, TS_TYPE_SIDEBAR_ITEM,
                        G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  g_type_ensure(TS_TYPE_SIDEBAR_ITEM);
  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/io/github/tracescope/Tracescope/ts-function-list.ui");
  gtk_widget_class_bind_template_child(widget_class, TsFunctionList, list_view);
  gtk_widget_class_bind_template_child(widget_class, TsFunctionList, filter_entry);
  gtk_widget_class_bind_template_child(widget_class, TsFunctionList, no_match_label);
  gtk_widget_class_bind_template_callback(widget_class, on_filter_activate);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "tsfunctionlist");
}

static void ts_function_list_init(TsFunctionList *self)
{
  gtk_widget_init_template(GTK_WIDGET(self));
  self->functions = g_list_store_new(TS_TYPE_SIDEBAR_ITEM);
  self->filter = gtk_string_filter_new(gtk_property_expression_new(TS_TYPE_SIDEBAR_ITEM, NULL, "title"));
  gtk_string_filter_set_match_mode(self->filter, GTK_STRING_FILTER_MATCH_MODE_SUBSTRING);
  gtk_string_filter_set_ignore_case(self->filter, TRUE);
  /* the filter model takes the store and the filter, the tree the filter model,
   * the selection the tree */
  GtkFilterListModel *shown = gtk_filter_list_model_new(G_LIST_MODEL(g_object_ref(self->functions)),
                                                        GTK_FILTER(g_object_ref(self->filter)));
  self->tree = gtk_tree_list_model_new(G_LIST_MODEL(shown), FALSE, TRUE, create_children, NULL, NULL);
  g_signal_connect(self->filter_entry, "search-changed", G_CALLBACK(on_filter_changed), self);
  g_signal_connect(shown, "items-changed", G_CALLBACK(on_shown_changed), self);
  GtkEventController *keys = gtk_event_controller_key_new();
  gtk_event_controller_set_propagation_phase(keys, GTK_PHASE_CAPTURE);
  g_signal_connect(keys, "key-pressed", G_CALLBACK(on_filter_key_pressed), self);
  gtk_widget_add_controller(GTK_WIDGET(self->filter_entry), keys);
  self->selection = gtk_single_selection_new(G_LIST_MODEL(self->tree));
  gtk_single_selection_set_autoselect(self->selection, FALSE);
  gtk_single_selection_set_can_unselect(self->selection, TRUE);
  gtk_list_view_set_model(self->list_view, GTK_SELECTION_MODEL(self->selection));
  g_signal_connect(self->selection, "selection-changed", G_CALLBACK(on_selection_changed), self);
}
