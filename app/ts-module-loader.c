/* ts-module-loader.c — a window's module loads, reloads and restarts. */
#include "ts-module-loader.h"

#include "ts-module-watch.h"

#define MAX_RECENT 8

struct _TsModuleLoader {
  GObject parent_instance;
  TsEngineWorker *worker;
  TsWorkspace *workspace;
  GSettings *settings;
  TsModuleWatch *watch;
  GCancellable *cancellable; /* the load under way */
};

enum { PROP_0, PROP_LOADING, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_LOADED, SIGNAL_FAILED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TsModuleLoader, ts_module_loader, G_TYPE_OBJECT)

static void remember_recent(TsModuleLoader *self, const char *source)
{
  g_auto(GStrv) old = g_settings_get_strv(self->settings, "recent-modules");
  g_autoptr(GStrvBuilder) b = g_strv_builder_new();
  g_strv_builder_add(b, source);
  guint n = 1;
  for (char **s = old; *s && n < MAX_RECENT; s++)
    if (g_strcmp0(*s, source) != 0) {
      g_strv_builder_add(b, *s);
      n++;
    }
  g_auto(GStrv) recent = g_strv_builder_end(b);
  g_settings_set_strv(self->settings, "recent-modules", (const char *const *)recent);
}

typedef struct {
  TsModuleLoader *self;
  char *source;
  TsLoadKind kind;
} LoadRequest;

static void on_loaded(GObject *source, GAsyncResult *result, gpointer user_data)
{
  LoadRequest *req = user_data;
  TsModuleLoader *self = req->self;
  g_autoptr(GError) error = NULL;
  g_autoptr(TsLoadedModule) module = ts_engine_worker_load_finish(TS_ENGINE_WORKER(source), result, &error);
  if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
    g_clear_object(&self->cancellable);
    if (module) {
      const char *remote = ts_engine_worker_get_remote(self->worker);
      /* a remote module's file is not here to watch: its worker watches it there (::module-changed) */
      ts_module_watch_set_path(self->watch, remote ? NULL : ts_loaded_module_get_file(module));
      if (req->kind == TS_LOAD_OPEN && !remote) /* a path there is not one here */
        remember_recent(self, req->source);
      g_signal_emit(self, signals[SIGNAL_LOADED], 0, module, req->kind);
    } else {
      g_signal_emit(self, signals[SIGNAL_FAILED], 0, req->kind, error->message);
    }
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_LOADING]);
  }
  g_object_unref(self);
  g_free(req->source);
  g_free(req);
}

void ts_module_loader_load(TsModuleLoader *self, const char *source, TsLoadKind kind)
{
  g_return_if_fail(TS_IS_MODULE_LOADER(self) && source != NULL);
  if (self->cancellable)
    g_cancellable_cancel(self->cancellable);
  g_clear_object(&self->cancellable);
  self->cancellable = g_cancellable_new();
  LoadRequest *req = g_new0(LoadRequest, 1);
  req->self = g_object_ref(self);
  req->source = g_strdup(source);
  req->kind = kind;
  ts_engine_worker_load_async(self->worker, source, self->cancellable, on_loaded, req);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_LOADING]);
}

void ts_module_loader_reload(TsModuleLoader *self)
{
  g_return_if_fail(TS_IS_MODULE_LOADER(self));
  TsLoadedModule *module = ts_workspace_get_module(self->workspace);
  if (module)
    ts_module_loader_load(self, ts_loaded_module_get_source(module), TS_LOAD_RELOAD);
}

void ts_module_loader_restart(TsModuleLoader *self)
{
  g_return_if_fail(TS_IS_MODULE_LOADER(self));
  TsLoadedModule *module = ts_workspace_get_module(self->workspace);
  if (module && !self->cancellable)
    ts_module_loader_load(self, ts_loaded_module_get_source(module), TS_LOAD_RESTART);
}

gboolean ts_module_loader_get_loading(TsModuleLoader *self)
{
  g_return_val_if_fail(TS_IS_MODULE_LOADER(self), FALSE);
  return self->cancellable != NULL;
}

void ts_module_loader_shut_down(TsModuleLoader *self)
{
  g_return_if_fail(TS_IS_MODULE_LOADER(self));
  if (self->cancellable)
    g_cancellable_cancel(self->cancellable);
  g_signal_handlers_disconnect_by_data(self->watch, self);
  g_signal_handlers_disconnect_by_data(self->worker, self);
  g_signal_handlers_disconnect_by_data(self->settings, self);
  ts_module_watch_set_path(self->watch, NULL);
}

/* The next worker started gets the limit (0 in the setting: the default). */
static void on_memory_limit_changed(GSettings *settings, const char *key, TsModuleLoader *self)
{
  guint mib = g_settings_get_uint(settings, "worker-memory-limit");
  ts_engine_worker_set_memory_limit(self->worker, mib ? (guint64)mib << 20 : ts_engine_worker_default_memory_limit());
}

TsModuleLoader *ts_module_loader_new(TsEngineWorker *worker, TsWorkspace *workspace, GSettings *settings)
{
  g_return_val_if_fail(TS_IS_ENGINE_WORKER(worker) && TS_IS_WORKSPACE(workspace) && G_IS_SETTINGS(settings), NULL);
  TsModuleLoader *self = g_object_new(TS_TYPE_MODULE_LOADER, NULL);
  self->worker = g_object_ref(worker);
  self->workspace = g_object_ref(workspace);
  self->settings = g_object_ref(settings);
  self->watch = ts_module_watch_new();
  ts_workspace_add_busy_source(workspace, G_OBJECT(self), "loading");
  g_signal_connect_swapped(self->watch, "file-changed", G_CALLBACK(ts_module_loader_reload), self);
  /* a remote module rebuilt there */
  g_signal_connect_swapped(worker, "module-changed", G_CALLBACK(ts_module_loader_reload), self);
  /* after the run controller, connected first, has said how in the console */
  g_signal_connect_swapped(worker, "died", G_CALLBACK(ts_module_loader_restart), self);
  g_signal_connect(settings, "changed::worker-memory-limit", G_CALLBACK(on_memory_limit_changed), self);
  on_memory_limit_changed(settings, "worker-memory-limit", self);
  return self;
}

static void ts_module_loader_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  switch (prop_id) {
  case PROP_LOADING: g_value_set_boolean(value, ts_module_loader_get_loading(TS_MODULE_LOADER(object))); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_module_loader_dispose(GObject *object)
{
  TsModuleLoader *self = TS_MODULE_LOADER(object);
  if (self->watch)
    ts_module_loader_shut_down(self);
  g_clear_object(&self->cancellable);
  g_clear_object(&self->watch);
  g_clear_object(&self->worker);
  g_clear_object(&self->workspace);
  g_clear_object(&self->settings);
  G_OBJECT_CLASS(ts_module_loader_parent_class)->dispose(object);
}

static void ts_module_loader_class_init(TsModuleLoaderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->get_property = ts_module_loader_get_property;
  object_class->dispose = ts_module_loader_dispose;
  properties[PROP_LOADING] = g_param_spec_boolean("loading", NULL, NULL, FALSE,
                                                  G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
  GType type = G_TYPE_FROM_CLASS(klass);
  signals[SIGNAL_LOADED] = g_signal_new("loaded", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 2,
                                        TS_TYPE_LOADED_MODULE, G_TYPE_INT);
  signals[SIGNAL_FAILED] = g_signal_new("failed", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 2,
                                        G_TYPE_INT, G_TYPE_STRING);
}

static void ts_module_loader_init(TsModuleLoader *self)
{
}
