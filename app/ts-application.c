/* ts-application.c — application actions, style, windows for files and the command line. */
#include "ts-application.h"

#include <string.h>

#include "ts-preferences-window.h"
#include "ts-resources.h"
#include "ts-window.h"

struct _TsApplication {
  AdwApplication parent_instance;
  GSettings *settings;
  TsStartup *startup;
  TsStartupScript *script; /* the startup's, in the first window made */
};

G_DEFINE_FINAL_TYPE(TsApplication, ts_application, ADW_TYPE_APPLICATION)

/* ---- settings ------------------------------------------------------------------------- */

GSettings *ts_application_settings_new(void)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default();
  g_autoptr(GSettingsSchema) schema =
    source ? g_settings_schema_source_lookup(source, TS_APPLICATION_ID, TRUE) : NULL;
  if (!schema) {
    /* running from the build tree */
    g_autoptr(GSettingsSchemaSource) build =
      g_settings_schema_source_new_from_directory(TS_BUILD_SCHEMA_DIR, source, FALSE, NULL);
    schema = build ? g_settings_schema_source_lookup(build, TS_APPLICATION_ID, FALSE) : NULL;
  }
  return schema ? g_settings_new_full(schema, NULL, NULL) : NULL;
}

GSettings *ts_application_get_settings(TsApplication *self)
{
  g_return_val_if_fail(TS_IS_APPLICATION(self), NULL);
  return self->settings;
}

static gboolean theme_to_scheme(GValue *value, GVariant *variant, gpointer user_data)
{
  const char *theme = g_variant_get_string(variant, NULL);
  AdwColorScheme scheme = ADW_COLOR_SCHEME_DEFAULT; /* follows the system's dark style */
  if (g_strcmp0(theme, "light") == 0)
    scheme = ADW_COLOR_SCHEME_FORCE_LIGHT;
  else if (g_strcmp0(theme, "dark") == 0)
    scheme = ADW_COLOR_SCHEME_FORCE_DARK;
  g_value_set_enum(value, scheme);
  return TRUE;
}

/* ---- actions ---------------------------------------------------------------------------- */

static void action_preferences(GSimpleAction *action, GVariant *param, gpointer user_data)
{
  TsApplication *self = user_data;
  TsPreferencesWindow *prefs =
    ts_preferences_window_new(gtk_application_get_active_window(GTK_APPLICATION(self)), self->settings);
  gtk_window_present(GTK_WINDOW(prefs));
}

static void action_about(GSimpleAction *action, GVariant *param, gpointer user_data)
{
  static const char *const developers[] = { "The Tracescope developers", NULL };
  GtkWidget *about = adw_about_window_new();
  g_object_set(about,
               "transient-for", gtk_application_get_active_window(GTK_APPLICATION(user_data)),
               "application-name", "Tracescope",
               "application-icon", TS_APPLICATION_ID,
               "developer-name", "The Tracescope developers",
               "developers", developers,
               "version", TS_VERSION,
               "comments", "A debugger and profiler for traced tensor programs: run them in graph "
                           "or eager mode, see each graph, and learn why a function traced again.",
               "license-type", GTK_LICENSE_MIT_X11,
               "website", "https://github.com/tracescope/tracescope",
               NULL);
  gtk_window_present(GTK_WINDOW(about));
}

static void action_quit(GSimpleAction *action, GVariant *param, gpointer user_data)
{
  for (GList *l = gtk_application_get_windows(GTK_APPLICATION(user_data)); l;) {
    GtkWindow *window = l->data;
    l = l->next;
    gtk_window_close(window);
  }
}

static const GActionEntry app_actions[] = {
  { .name = "preferences", .activate = action_preferences },
  { .name = "about", .activate = action_about },
  { .name = "quit", .activate = action_quit },
};

/* ---- life cycle --------------------------------------------------------------------------- */

static void ts_application_startup(GApplication *app)
{
  TsApplication *self = TS_APPLICATION(app);
  G_APPLICATION_CLASS(ts_application_parent_class)->startup(app);
  g_action_map_add_action_entries(G_ACTION_MAP(self), app_actions, G_N_ELEMENTS(app_actions), self);
  static const char *const quit[] = { "<Control>q", NULL };
  static const char *const prefs[] = { "<Control>comma", NULL };
  gtk_application_set_accels_for_action(GTK_APPLICATION(self), "app.quit", quit);
  gtk_application_set_accels_for_action(GTK_APPLICATION(self), "app.preferences", prefs);
  g_settings_bind_with_mapping(self->settings, "theme", adw_style_manager_get_default(),
                               "color-scheme", G_SETTINGS_BIND_GET, theme_to_scheme, NULL, NULL,
                               NULL);
}

static TsWindow *new_window(TsApplication *self)
{
  TsWindow *window = ts_window_new(GTK_APPLICATION(self));
  if (self->startup && self->startup->remote)
    ts_window_set_remote(window, self->startup->remote);
  if (self->startup && self->startup->width > 0) {
    gtk_window_unmaximize(GTK_WINDOW(window));
    gtk_window_set_default_size(GTK_WINDOW(window), self->startup->width, self->startup->height);
  }
  gtk_window_present(GTK_WINDOW(window));
  return window;
}

/* The command line's script (--function, --call, --screenshot ...) works
 * in the first window made, whether for a file or not. */
static void start_script(TsApplication *self, TsWindow *window)
{
  if (self->startup && !self->script)
    self->script = ts_startup_script_new(G_APPLICATION(self), self->startup, window);
}

static void ts_application_activate(GApplication *app)
{
  TsApplication *self = TS_APPLICATION(app);
  GtkWindow *active = gtk_application_get_active_window(GTK_APPLICATION(self));
  if (active && !self->startup) {
    gtk_window_present(active);
    return;
  }
  start_script(self, new_window(self));
}

/* A .json file is a saved session when its first kilobytes name the
 * format (ts-session.c writes it first); else a trace. */
static gboolean is_session(const char *path)
{
  if (!g_str_has_suffix(path, ".json"))
    return FALSE;
  g_autoptr(GFile) file = g_file_new_for_path(path);
  g_autoptr(GFileInputStream) in = g_file_read(file, NULL, NULL);
  char head[4096];
  gssize n = in ? g_input_stream_read(G_INPUT_STREAM(in), head, sizeof head - 1, NULL, NULL) : -1;
  if (n <= 0)
    return TRUE; /* unreadable: the session reader says why */
  head[n] = '\0';
  return strstr(head, "\"tracescope-session\"") != NULL;
}

static void ts_application_open(GApplication *app, GFile **files, int n_files, const char *hint)
{
  TsApplication *self = TS_APPLICATION(app);
  for (int i = 0; i < n_files; i++) {
    g_autofree char *path = g_file_get_path(files[i]);
    if (!path)
      continue;
    TsWindow *window = new_window(self);
    if (is_session(path))
      ts_window_open_session(window, path); /* a saved session */
    else if (g_str_has_suffix(path, ".json") || g_str_has_suffix(path, ".json.gz"))
      ts_window_open_trace(window, path); /* a recording: tracescope-cli profile --out, PyTorch's */
    else
      ts_window_open_module(window, path);
    start_script(self, window); /* once the file is being read: the script waits for it */
  }
}

static void ts_application_dispose(GObject *object)
{
  TsApplication *self = TS_APPLICATION(object);
  g_clear_pointer(&self->script, ts_startup_script_free);
  g_clear_object(&self->settings);
  g_clear_pointer(&self->startup, ts_startup_free);
  G_OBJECT_CLASS(ts_application_parent_class)->dispose(object);
}

static void ts_application_class_init(TsApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS(klass);
  G_OBJECT_CLASS(klass)->dispose = ts_application_dispose;
  app_class->startup = ts_application_startup;
  app_class->activate = ts_application_activate;
  app_class->open = ts_application_open;
  ts_app_register_resource();
}

static void ts_application_init(TsApplication *self)
{
  self->settings = ts_application_settings_new();
}

static gboolean have_session_bus = TRUE;

gboolean ts_application_prepare_session(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GDBusConnection) bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, &error);
  have_session_bus = bus != NULL;
  if (!have_session_bus) {
    g_setenv("GTK_A11Y", "none", FALSE);
    g_setenv("GSETTINGS_BACKEND", "keyfile", FALSE);
  }
  return have_session_bus;
}

TsApplication *ts_application_new(TsStartup *startup)
{
  GApplicationFlags flags = G_APPLICATION_HANDLES_OPEN;
  if ((startup && startup->screenshot) || !have_session_bus)
    flags |= G_APPLICATION_NON_UNIQUE;
  TsApplication *self = g_object_new(TS_TYPE_APPLICATION, "application-id", TS_APPLICATION_ID,
                                     "flags", flags, "resource-base-path",
                                     "/io/github/tracescope/Tracescope", NULL);
  if (ts_startup_has_script(startup))
    self->startup = startup;
  else
    ts_startup_free(startup);
  return self;
}
