/* ts-workspace.c — a window's module, selection, mode, device and profile,
 * why its functions' last traces failed, and whether what works for it is
 * busy. */
#include "ts-workspace.h"

struct _TsWorkspace {
  GObject parent_instance;
  TsLoadedModule *module;
  TsSidebarItem *selected;
  GHashTable *trace_errors; /* function -> why its last trace failed (none once one worked) */
  char *function;
  char *mode;
  char *device;
  gboolean profile;
  GArray *busy_sources; /* BusySource: what "busy" is the OR of */
};

typedef struct {
  GWeakRef object;
  const char *property; /* interned */
} BusySource;

enum { PROP_0, PROP_MODULE, PROP_SELECTED, PROP_FUNCTION, PROP_MODE, PROP_DEVICE, PROP_PROFILE, PROP_BUSY, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE(TsWorkspace, ts_workspace, G_TYPE_OBJECT)

static const char *const MODES[] = { "graph", "eager", "debug", NULL };

/* Whether *field changed to value (GLib 2.74 has no g_set_str). */
static gboolean set_str(char **field, const char *value)
{
  if (g_strcmp0(*field, value) == 0)
    return FALSE;
  g_free(*field);
  *field = g_strdup(value);
  return TRUE;
}

TsWorkspace *ts_workspace_new(void)
{
  return g_object_new(TS_TYPE_WORKSPACE, NULL);
}

TsLoadedModule *ts_workspace_get_module(TsWorkspace *self)
{
  g_return_val_if_fail(TS_IS_WORKSPACE(self), NULL);
  return self->module;
}

void ts_workspace_set_module(TsWorkspace *self, TsLoadedModule *module)
{
  g_return_if_fail(TS_IS_WORKSPACE(self) && (!module || TS_IS_LOADED_MODULE(module)));
  if (g_set_object(&self->module, module))
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_MODULE]);
}

TsSidebarItem *ts_workspace_get_selected(TsWorkspace *self)
{
  g_return_val_if_fail(TS_IS_WORKSPACE(self), NULL);
  return self->selected;
}

void ts_workspace_set_selected(TsWorkspace *self, TsSidebarItem *item)
{
  g_return_if_fail(TS_IS_WORKSPACE(self) && (!item || TS_IS_SIDEBAR_ITEM(item)));
  g_set_object(&self->selected, item);
  if (item) /* the run and debug panels follow it */
    ts_workspace_set_function(self, ts_sidebar_item_get_function_name(item));
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SELECTED]);
}

void ts_workspace_selection_changed(TsWorkspace *self)
{
  g_return_if_fail(TS_IS_WORKSPACE(self));
  ts_workspace_set_selected(self, self->selected);
}

const char *ts_workspace_get_trace_error(TsWorkspace *self, const char *function)
{
  g_return_val_if_fail(TS_IS_WORKSPACE(self), NULL);
  return function ? g_hash_table_lookup(self->trace_errors, function) : NULL;
}

void ts_workspace_set_trace_error(TsWorkspace *self, const char *function, const char *reason)
{
  g_return_if_fail(TS_IS_WORKSPACE(self) && function != NULL);
  if (!reason) {
    g_hash_table_remove(self->trace_errors, function);
    return;
  }
  g_hash_table_replace(self->trace_errors, g_strdup(function), g_strdup(reason));
  if (self->selected && g_strcmp0(ts_sidebar_item_get_function_name(self->selected), function) == 0)
    ts_workspace_selection_changed(self); /* its page says why */
}

void ts_workspace_forget_trace_errors(TsWorkspace *self)
{
  g_return_if_fail(TS_IS_WORKSPACE(self));
  g_hash_table_remove_all(self->trace_errors);
}

const char *ts_workspace_get_function(TsWorkspace *self)
{
  g_return_val_if_fail(TS_IS_WORKSPACE(self), NULL);
  return self->function;
}

void ts_workspace_set_function(TsWorkspace *self, const char *function)
{
  g_return_if_fail(TS_IS_WORKSPACE(self));
  if (set_str(&self->function, function))
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_FUNCTION]);
}

const char *ts_workspace_get_mode(TsWorkspace *self)
{
  g_return_val_if_fail(TS_IS_WORKSPACE(self), NULL);
  return self->mode;
}

gboolean ts_workspace_set_mode(TsWorkspace *self, const char *mode)
{
  g_return_val_if_fail(TS_IS_WORKSPACE(self), FALSE);
  if (!mode || !g_strv_contains(MODES, mode))
    return FALSE;
  if (set_str(&self->mode, mode))
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_MODE]);
  return TRUE;
}

gboolean ts_workspace_is_eager(TsWorkspace *self)
{
  return g_strcmp0(ts_workspace_get_mode(self), "eager") == 0;
}

gboolean ts_workspace_is_debug(TsWorkspace *self)
{
  return g_strcmp0(ts_workspace_get_mode(self), "debug") == 0;
}

const char *ts_workspace_get_device(TsWorkspace *self)
{
  g_return_val_if_fail(TS_IS_WORKSPACE(self), NULL);
  return self->device;
}

void ts_workspace_set_device(TsWorkspace *self, const char *device)
{
  g_return_if_fail(TS_IS_WORKSPACE(self) && device != NULL);
  if (set_str(&self->device, device))
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_DEVICE]);
}

gboolean ts_workspace_get_profile(TsWorkspace *self)
{
  g_return_val_if_fail(TS_IS_WORKSPACE(self), FALSE);
  return self->profile;
}

void ts_workspace_set_profile(TsWorkspace *self, gboolean profile)
{
  g_return_if_fail(TS_IS_WORKSPACE(self));
  if (self->profile == !!profile)
    return;
  self->profile = !!profile;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_PROFILE]);
}

gboolean ts_workspace_get_busy(TsWorkspace *self)
{
  g_return_val_if_fail(TS_IS_WORKSPACE(self), FALSE);
  for (guint i = 0; i < self->busy_sources->len; i++) {
    BusySource *source = &g_array_index(self->busy_sources, BusySource, i);
    g_autoptr(GObject) object = g_weak_ref_get(&source->object);
    gboolean busy = FALSE;
    if (object)
      g_object_get(object, source->property, &busy, NULL);
    if (busy)
      return TRUE;
  }
  return FALSE;
}

/* Each notify of a source's property, as the source notifies it (some say
 * "busy" again to mean "look at me again"): the window's actions follow. */
static void on_source_busy(TsWorkspace *self)
{
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
}

void ts_workspace_add_busy_source(TsWorkspace *self, GObject *source, const char *property)
{
  g_return_if_fail(TS_IS_WORKSPACE(self) && G_IS_OBJECT(source) && property != NULL);
  GParamSpec *pspec = g_object_class_find_property(G_OBJECT_GET_CLASS(source), property);
  g_return_if_fail(pspec != NULL && pspec->value_type == G_TYPE_BOOLEAN);
  BusySource entry = { .property = g_intern_string(property) };
  g_weak_ref_init(&entry.object, source);
  g_array_append_val(self->busy_sources, entry);
  g_autofree char *signal = g_strconcat("notify::", property, NULL);
  g_signal_connect_object(source, signal, G_CALLBACK(on_source_busy), self, G_CONNECT_SWAPPED);
}

static void clear_busy_source(gpointer data)
{
  g_weak_ref_clear(&((BusySource *)data)->object);
}

static void ts_workspace_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TsWorkspace *self = TS_WORKSPACE(object);
  switch (prop_id) {
  case PROP_MODULE: g_value_set_object(value, self->module); break;
  case PROP_SELECTED: g_value_set_object(value, self->selected); break;
  case PROP_FUNCTION: g_value_set_string(value, self->function); break;
  case PROP_MODE: g_value_set_string(value, self->mode); break;
  case PROP_DEVICE: g_value_set_string(value, self->device); break;
  case PROP_PROFILE: g_value_set_boolean(value, self->profile); break;
  case PROP_BUSY: g_value_set_boolean(value, ts_workspace_get_busy(self)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_workspace_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  TsWorkspace *self = TS_WORKSPACE(object);
  switch (prop_id) {
  case PROP_MODULE: ts_workspace_set_module(self, g_value_get_object(value)); break;
  case PROP_SELECTED: ts_workspace_set_selected(self, g_value_get_object(value)); break;
  case PROP_FUNCTION: ts_workspace_set_function(self, g_value_get_string(value)); break;
  case PROP_MODE: ts_workspace_set_mode(self, g_value_get_string(value)); break;
  case PROP_DEVICE: ts_workspace_set_device(self, g_value_get_string(value)); break;
  case PROP_PROFILE: ts_workspace_set_profile(self, g_value_get_boolean(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_workspace_dispose(GObject *object)
{
  g_clear_object(&TS_WORKSPACE(object)->module);
  g_clear_object(&TS_WORKSPACE(object)->selected);
  g_array_set_size(TS_WORKSPACE(object)->busy_sources, 0);
  G_OBJECT_CLASS(ts_workspace_parent_class)->dispose(object);
}

static void ts_workspace_finalize(GObject *object)
{
  TsWorkspace *self = TS_WORKSPACE(object);
  g_hash_table_unref(self->trace_errors);
  g_free(self->function);
  g_free(self->mode);
  g_free(self->device);
  g_array_unref(self->busy_sources);
  G_OBJECT_CLASS(ts_workspace_parent_class)->finalize(object);
}

static void ts_workspace_class_init(TsWorkspaceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->get_property = ts_workspace_get_property;
  object_class->set_property = ts_workspace_set_property;
  object_class->dispose = ts_workspace_dispose;
  object_class->finalize = ts_workspace_finalize;
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
  properties[PROP_MODULE] = g_param_spec_object("module", NULL, NULL, TS_TYPE_LOADED_MODULE, flags);
  properties[PROP_SELECTED] = g_param_spec_object("selected", NULL, NULL, TS_TYPE_SIDEBAR_ITEM, flags);
  properties[PROP_FUNCTION] = g_param_spec_string("function", NULL, NULL, NULL, flags);
  properties[PROP_MODE] = g_param_spec_string("mode", NULL, NULL, "graph", flags);
  properties[PROP_DEVICE] = g_param_spec_string("device", NULL, NULL, "CPU", flags);
  properties[PROP_PROFILE] = g_param_spec_boolean("profile", NULL, NULL, FALSE, flags);
  properties[PROP_BUSY] = g_param_spec_boolean("busy", NULL, NULL, FALSE,
                                               G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
}

static void ts_workspace_init(TsWorkspace *self)
{
  self->trace_errors = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  self->mode = g_strdup("graph");
  self->device = g_strdup("CPU");
  self->busy_sources = g_array_new(FALSE, TRUE, sizeof(BusySource));
  g_array_set_clear_func(self->busy_sources, clear_busy_source);
}
