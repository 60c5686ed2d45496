/* ts-loaded-module.c — the app's record of a module in a worker. */
#include "ts-loaded-module.h"

#include "ts-worker.h"

struct _TsLoadedModule {
  GObject parent_instance;
  char *source;
  char *file;
  char *title;
  char *display_name;
  GPtrArray *functions; /* TsModuleFunction * */
};

G_DEFINE_FINAL_TYPE(TsLoadedModule, ts_loaded_module, G_TYPE_OBJECT)

static void concrete_clear(TsConcreteInfo *cf)
{
  g_free(cf->function);
  g_free(cf->signature);
  g_free(cf->pretty_signature);
  ts_worker_origins_free(cf->origins);
  g_free(cf->pass_summary);
  ts_graph_free(cf->optimized);
  ts_graph_free(cf->graph);
}

TsConcreteInfo *ts_concrete_info_new(const char *function, int index, const char *signature,
                                     const char *pretty_signature, ts_graph *graph)
{
  TsConcreteInfo *cf = g_atomic_rc_box_new0(TsConcreteInfo);
  cf->function = g_strdup(function);
  cf->index = index;
  cf->signature = g_strdup(signature);
  cf->pretty_signature = g_strdup(pretty_signature ? pretty_signature : "");
  cf->graph = graph;
  return cf;
}

void ts_concrete_info_set_optimized(TsConcreteInfo *cf, ts_graph *optimized, TsWorkerOrigins *origins,
                                    const char *pass_summary)
{
  g_return_if_fail(cf != NULL && cf->graph != NULL && cf->optimized == NULL);
  g_return_if_fail(optimized != NULL && origins != NULL && pass_summary != NULL);
  cf->optimized = optimized;
  cf->origins = origins;
  cf->pass_summary = g_strdup(pass_summary);
}

TsConcreteInfo *ts_concrete_info_ref(TsConcreteInfo *cf) { return g_atomic_rc_box_acquire(cf); }
void ts_concrete_info_unref(TsConcreteInfo *cf) { g_atomic_rc_box_release_full(cf, (GDestroyNotify)concrete_clear); }

static void function_free(TsModuleFunction *fn)
{
  g_free(fn->name);
  g_strfreev(fn->params);
  g_strfreev(fn->examples);
  g_ptr_array_unref(fn->concrete);
  g_free(fn);
}

static void ts_loaded_module_finalize(GObject *object)
{
  TsLoadedModule *self = TS_LOADED_MODULE(object);
  g_free(self->source);
  g_free(self->file);
  g_free(self->title);
  g_free(self->display_name);
  g_ptr_array_unref(self->functions);
  G_OBJECT_CLASS(ts_loaded_module_parent_class)->finalize(object);
}

static void ts_loaded_module_class_init(TsLoadedModuleClass *klass)
{
  G_OBJECT_CLASS(klass)->finalize = ts_loaded_module_finalize;
}

static void ts_loaded_module_init(TsLoadedModule *self)
{
  self->functions = g_ptr_array_new_with_free_func((GDestroyNotify)function_free);
}

TsLoadedModule *ts_loaded_module_new(const char *source, const char *file, const char *title,
                                     GPtrArray *functions)
{
  g_return_val_if_fail(source != NULL && file != NULL && title != NULL && functions != NULL, NULL);
  TsLoadedModule *self = g_object_new(TS_TYPE_LOADED_MODULE, NULL);
  self->source = g_strdup(source);
  self->file = g_strdup(file);
  self->title = g_strdup(title);
  self->display_name = g_strcmp0(source, "seeds") == 0 ? g_strdup("seeds") : g_path_get_basename(source);
  for (guint i = 0; i < functions->len; i++) {
    const TsWorkerFunction *wf = g_ptr_array_index(functions, i);
    TsModuleFunction *fn = g_new0(TsModuleFunction, 1);
    fn->name = g_strdup(wf->name);
    fn->params = g_strdupv(wf->params);
    fn->n_params = (int)g_strv_length(fn->params);
    fn->examples = g_strdupv(wf->examples);
    fn->concrete = g_ptr_array_new_with_free_func((GDestroyNotify)ts_concrete_info_unref);
    g_ptr_array_add(self->functions, fn);
  }
  return self;
}

const char *ts_loaded_module_get_source(TsLoadedModule *self)
{
  g_return_val_if_fail(TS_IS_LOADED_MODULE(self), NULL);
  return self->source;
}

const char *ts_loaded_module_get_file(TsLoadedModule *self)
{
  g_return_val_if_fail(TS_IS_LOADED_MODULE(self), NULL);
  return self->file;
}

const char *ts_loaded_module_get_title(TsLoadedModule *self)
{
  g_return_val_if_fail(TS_IS_LOADED_MODULE(self), NULL);
  return self->title;
}

const char *ts_loaded_module_get_display_name(TsLoadedModule *self)
{
  g_return_val_if_fail(TS_IS_LOADED_MODULE(self), NULL);
  return self->display_name;
}

int ts_loaded_module_get_n_functions(TsLoadedModule *self)
{
  g_return_val_if_fail(TS_IS_LOADED_MODULE(self), 0);
  return (int)self->functions->len;
}

TsModuleFunction *ts_loaded_module_get_function(TsLoadedModule *self, int i)
{
  g_return_val_if_fail(TS_IS_LOADED_MODULE(self), NULL);
  return i >= 0 && (guint)i < self->functions->len ? g_ptr_array_index(self->functions, i) : NULL;
}

TsModuleFunction *ts_loaded_module_lookup(TsLoadedModule *self, const char *name)
{
  g_return_val_if_fail(TS_IS_LOADED_MODULE(self), NULL);
  for (guint i = 0; name && i < self->functions->len; i++) {
    TsModuleFunction *fn = g_ptr_array_index(self->functions, i);
    if (strcmp(fn->name, name) == 0)
      return fn;
  }
  return NULL;
}

const char *ts_loaded_module_nearest_function(TsLoadedModule *self, const char *name)
{
  g_return_val_if_fail(TS_IS_LOADED_MODULE(self), NULL);
  g_autofree const char **names = g_new(const char *, self->functions->len + 1);
  for (guint i = 0; i < self->functions->len; i++)
    names[i] = ((TsModuleFunction *)g_ptr_array_index(self->functions, i))->name;
  return ts_nearest_name(name, names, self->functions->len);
}

char *ts_loaded_module_missing_function(TsLoadedModule *self, const char *name)
{
  g_return_val_if_fail(TS_IS_LOADED_MODULE(self) && name != NULL, NULL);
  const char *near = ts_loaded_module_nearest_function(self, name);
  g_autofree char *hint = near ? g_strdup_printf(" (did you mean '%s'?)", near) : NULL;
  return g_strdup_printf("%s has no function '%s'%s", ts_loaded_module_get_display_name(self), name,
                         hint ? hint : "");
}

TsConcreteInfo *ts_loaded_module_add_trace(TsLoadedModule *self, const char *function,
                                       const char *signature, const char *pretty_signature,
                                       int n_concrete, int trace_count, ts_graph *graph)
{
  g_return_val_if_fail(TS_IS_LOADED_MODULE(self) && signature != NULL, NULL);
  TsModuleFunction *fn = ts_loaded_module_lookup(self, function);
  /* the worker numbers concrete functions 1, 2, ...: one more than we hold */
  if (!fn || n_concrete != (int)fn->concrete->len + 1) {
    ts_graph_free(graph);
    return NULL;
  }
  TsConcreteInfo *cf = ts_concrete_info_new(function, n_concrete - 1, signature, pretty_signature, graph);
  g_ptr_array_add(fn->concrete, cf);
  fn->trace_count = trace_count;
  return cf;
}
