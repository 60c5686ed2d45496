/* ts-preferences-window.c — rows bound to settings keys. */
#include "ts-preferences-window.h"

struct _TsPreferencesWindow {
  AdwPreferencesWindow parent_instance;
  AdwComboRow *mode_row;
  AdwComboRow *device_row;
  AdwComboRow *theme_row;
  AdwComboRow *colour_row;
  GtkSpinButton *memory_spin;
  GSettings *settings;
};

G_DEFINE_FINAL_TYPE(TsPreferencesWindow, ts_preferences_window, ADW_TYPE_PREFERENCES_WINDOW)

/* The nicks of each key, in the order of its row's items. */
static const char *const MODES[] = { "graph", "eager", NULL };
static const char *const DEVICES[] = { "cpu", NULL };
static const char *const THEMES[] = { "system", "light", "dark", NULL };
static const char *const COLOURS[] = { "op-type", "device", "compute-time", NULL };

static gboolean nick_to_index(GValue *value, GVariant *variant, gpointer user_data)
{
  const char *const *nicks = user_data;
  const char *nick = g_variant_get_string(variant, NULL);
  for (guint i = 0; nicks[i]; i++)
    if (g_strcmp0(nicks[i], nick) == 0) {
      g_value_set_uint(value, i);
      return TRUE;
    }
  g_value_set_uint(value, 0);
  return TRUE;
}

static GVariant *index_to_nick(const GValue *value, const GVariantType *type, gpointer user_data)
{
  const char *const *nicks = user_data;
  guint i = g_value_get_uint(value);
  if (i >= g_strv_length((char **)nicks))
    return NULL;
  return g_variant_new_string(nicks[i]);
}

static void bind(TsPreferencesWindow *self, const char *key, AdwComboRow *row, const char *const *nicks)
{
  g_settings_bind_with_mapping(self->settings, key, row, "selected", G_SETTINGS_BIND_DEFAULT,
                               nick_to_index, index_to_nick, (gpointer)nicks, NULL);
}

static void ts_preferences_window_dispose(GObject *object)
{
  TsPreferencesWindow *self = TS_PREFERENCES_WINDOW(object);
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_PREFERENCES_WINDOW);
  g_clear_object(&self->settings);
  G_OBJECT_CLASS(ts_preferences_window_parent_class)->dispose(object);
}

static void ts_preferences_window_class_init(TsPreferencesWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  G_OBJECT_CLASS(klass)->dispose = ts_preferences_window_dispose;
  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/io/github/tracescope/Tracescope/ts-preferences-window.ui");
  gtk_widget_class_bind_template_child(widget_class, TsPreferencesWindow, mode_row);
  gtk_widget_class_bind_template_child(widget_class, TsPreferencesWindow, device_row);
  gtk_widget_class_bind_template_child(widget_class, TsPreferencesWindow, theme_row);
  gtk_widget_class_bind_template_child(widget_class, TsPreferencesWindow, colour_row);
  gtk_widget_class_bind_template_child(widget_class, TsPreferencesWindow, memory_spin);
}

static void ts_preferences_window_init(TsPreferencesWindow *self)
{
  gtk_widget_init_template(GTK_WIDGET(self));
}

TsPreferencesWindow *ts_preferences_window_new(GtkWindow *parent, GSettings *settings)
{
  g_return_val_if_fail(G_IS_SETTINGS(settings), NULL);
  TsPreferencesWindow *self = g_object_new(TS_TYPE_PREFERENCES_WINDOW, "transient-for", parent,
                                           "modal", TRUE, NULL);
  self->settings = g_object_ref(settings);
  bind(self, "default-mode", self->mode_row, MODES);
  bind(self, "device", self->device_row, DEVICES);
  bind(self, "theme", self->theme_row, THEMES);
  bind(self, "colour-mode", self->colour_row, COLOURS);
  g_settings_bind(settings, "worker-memory-limit", gtk_spin_button_get_adjustment(self->memory_spin),
                  "value", G_SETTINGS_BIND_DEFAULT);
  return self;
}
