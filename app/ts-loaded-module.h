/* ts-loaded-module.h — what the app knows of a module open in a worker:
 * its functions and the concrete functions their traces made, with their
 * graphs.  Shared by the window, the sidebar and the trace log; a restart
 * or a reload makes a new one, so what the log holds stays as it was. */
#pragma once

#include <gio/gio.h>
#include <tracescope.h>

#include "ts-worker-origins.h"

G_BEGIN_DECLS

/* A concrete function (reference counted: trace log entries keep theirs). */
typedef struct {
  char *function;         /* its function's name */
  int index;              /* among the function's concrete functions */
  char *signature;        /* "(x: f32[2])" */
  char *pretty_signature; /* TensorFlow's pretty-printed form */
  ts_graph *graph;        /* NULL if the worker could not send it */
  /* the graph it runs, after the optimizer's passes, with what each of its
   * nodes stands for in graph and one line per pass; all NULL until asked
   * of the worker (ts-worker-optimized.h, ts_concrete_info_set_optimized) */
  ts_graph *optimized;
  TsWorkerOrigins *origins;
  char *pass_summary;
} TsConcreteInfo;

/* Takes graph. */
TsConcreteInfo *ts_concrete_info_new(const char *function, int index, const char *signature,
                                     const char *pretty_signature, ts_graph *graph);
/* Takes optimized and origins (over optimized and cf->graph); once. */
void ts_concrete_info_set_optimized(TsConcreteInfo *cf, ts_graph *optimized, TsWorkerOrigins *origins,
                                    const char *pass_summary);
TsConcreteInfo *ts_concrete_info_ref(TsConcreteInfo *cf);
void ts_concrete_info_unref(TsConcreteInfo *cf);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TsConcreteInfo, ts_concrete_info_unref)

/* A function of the module (owned by it). */
typedef struct {
  char *name;
  char **params;          /* parameter names, NULL-terminated */
  int n_params;
  char **examples;        /* example arguments the module gives (argument specs), or NULL */
  int trace_count;
  GPtrArray *concrete;    /* TsConcreteInfo * in index order */
} TsModuleFunction;

static inline TsConcreteInfo *ts_module_function_concrete(const TsModuleFunction *fn, int i)
{
  return i >= 0 && (guint)i < fn->concrete->len ? g_ptr_array_index(fn->concrete, i) : NULL;
}

#define TS_TYPE_LOADED_MODULE (ts_loaded_module_get_type())
G_DECLARE_FINAL_TYPE(TsLoadedModule, ts_loaded_module, TS, LOADED_MODULE, GObject)

/* source is what the user opened ("seeds" or a path); file the shared
 * object on disk; functions the TsWorkerFunction array Open returned. */
TsLoadedModule *ts_loaded_module_new(const char *source, const char *file, const char *title,
                                     GPtrArray *functions);

const char *ts_loaded_module_get_source(TsLoadedModule *self);
const char *ts_loaded_module_get_file(TsLoadedModule *self);
const char *ts_loaded_module_get_title(TsLoadedModule *self);
/* "seeds" for the bundled module, else the file's base name. */
const char *ts_loaded_module_get_display_name(TsLoadedModule *self);
int ts_loaded_module_get_n_functions(TsLoadedModule *self);
/* Borrowed; valid while self lives.  NULL if out of range / not found. */
TsModuleFunction *ts_loaded_module_get_function(TsLoadedModule *self, int i);
TsModuleFunction *ts_loaded_module_lookup(TsLoadedModule *self, const char *name);
/* The function name is probably a typo of ("did you mean ...?"), or NULL. */
const char *ts_loaded_module_nearest_function(TsLoadedModule *self, const char *name);
/* "seeds has no function 'sequentail_model' (did you mean 'sequential_model'?)"; owned. */
char *ts_loaded_module_missing_function(TsLoadedModule *self, const char *name);

/* Records a trace: the function's new concrete function (taking graph)
 * and its trace count.  Returns the concrete function (borrowed), or NULL
 * if the module has no such function. */
TsConcreteInfo *ts_loaded_module_add_trace(TsLoadedModule *self, const char *function,
                                       const char *signature, const char *pretty_signature,
                                       int n_concrete, int trace_count, ts_graph *graph);

G_END_DECLS
