/* function.c — polymorphic functions: the concrete-function cache keyed by
 * signature, tracing on a miss, retrace events with their reasons,
 * warnings, limits, input signatures and relaxed shapes. */
#include "function-private.h"
#include "../exec/exec.h"

#include <pthread.h>
#include <stdio.h>

#define DEFAULT_RETRACE_LIMIT -1 /* tf.function keeps tracing, and warns */
#define HISTORY 10        /* calls remembered for the frequent-retracing warning */
#define FREQUENT 5        /* traces among them that trigger it */
#define FREQUENT_WARNINGS 2 /* times a function warns so (TensorFlow's per function) */

struct ts_function {
  char *name;
  ts_fn fn;
  int n_params;
  char **params;          /* NULL-terminated */
  int run_eagerly;        /* -1: follow the global switch */
  const ts_backend *device; /* where its calls run; NULL: the caller's device */
  int n_specs;            /* input signature; -1: none */
  ts_spec *specs;
  bool reduce_retracing;
  int retrace_limit;
  bool fail_on_retrace;
  ts__call_hook call_hook; /* runs its calls instead (check-eagerly: diverge.c) */
  int n_warned_frequent;
  bool warned_limit;
  pthread_mutex_t lock;   /* the cache; recursive: traced code may call fn again */
  GPtrArray *concrete;    /* ts_concrete *, in trace order */
  GHashTable *by_key;     /* exact signature key -> ts_concrete * (borrowed) */
  /* The last cache hit of a call of tensors only, and what the call gave:
   * a call like it is answered without spelling the key (lookup_tensors). */
  ts_concrete *last_hit;
  int n_last;
  ts_info *last_args;
  int trace_count;
  uint32_t history;       /* bit i: the i-th most recent call traced */
  int n_history;          /* calls it remembers: up to HISTORY */
  uint64_t changed[64 + 1]; /* per argument: how often it caused a trace (last slot: structure) */
};

struct ts_concrete {
  ts_function *fn;
  ts_signature sig;
  char *sig_text;
  ts_graph *graph;        /* as traced */
  ts_executable *exec;    /* the optimized graph and its plans */
  GHashTable *twins;      /* (site, occurrence) -> traced node: eager ops' twins */
  ts_trace_notes *notes;  /* what a caller's trace needs to inline its graph (inline.c) */
  int n_outputs;          /* its results: one, a tuple's (graph outputs, in order), 0 for None */
  ts_info *outputs;
  bool tuple;             /* returned as a tuple (ts_tuple), even of one */
  uint64_t trace_ns;
};

static int run_eagerly_global;

void ts_run_functions_eagerly(bool eagerly)
{
  __atomic_store_n(&run_eagerly_global, eagerly, __ATOMIC_RELAXED);
}

bool ts_functions_run_eagerly(void)
{
  return __atomic_load_n(&run_eagerly_global, __ATOMIC_RELAXED);
}

static void concrete_free(gpointer data)
{
  ts_concrete *cf = data;
  ts__signature_clear(&cf->sig);
  g_free(cf->sig_text);
  ts__executable_free(cf->exec);
  g_hash_table_unref(cf->twins);
  ts__trace_notes_free(cf->notes);
  ts__graph_free(cf->graph);
  g_free(cf->outputs);
  g_free(cf);
}

ts_function *ts_function_new(const char *name, ts_fn fn, const char *params)
{
  TS_CHECK_ARG(name && fn, NULL);
  ts_function *f = g_new0(ts_function, 1);
  f->name = g_strdup(name);
  f->fn = fn;
  f->params = g_new0(char *, 1);
  if (params && *params) {
    g_strfreev(f->params);
    f->params = g_strsplit(params, ",", -1);
    for (char **p = f->params; *p; p++)
      g_strstrip(*p);
    f->n_params = (int)g_strv_length(f->params);
  }
  f->run_eagerly = -1;
  f->n_specs = -1;
  f->retrace_limit = DEFAULT_RETRACE_LIMIT;
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&f->lock, &attr);
  pthread_mutexattr_destroy(&attr);
  f->concrete = g_ptr_array_new_with_free_func(concrete_free);
  f->by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  return f;
}

void ts_function_free(ts_function *f)
{
  if (!f)
    return;
  g_hash_table_unref(f->by_key);
  g_ptr_array_unref(f->concrete);
  g_free(f->last_args);
  pthread_mutex_destroy(&f->lock);
  g_strfreev(f->params);
  g_free(f->specs);
  g_free(f->name);
  g_free(f);
}

const char *ts_function_name(const ts_function *f)
{
  return f->name;
}

int ts_function_n_params(const ts_function *f)
{
  return f->n_params;
}

const char *ts_function_param_name(const ts_function *f, int i)
{
  TS_CHECK_ARG(f && i >= 0 && i < f->n_params, NULL);
  return f->params[i];
}

void ts_function_set_run_eagerly(ts_function *f, int mode)
{
  f->run_eagerly = mode < 0 ? -1 : mode > 0;
}

void ts_function_set_device(ts_function *f, const ts_backend *b)
{
  f->device = b;
}

bool ts_function_set_input_signature(ts_function *f, const ts_spec *specs, int n)
{
  TS_CHECK_ARG(f && n >= 0 && (specs || n == 0), false);
  for (int i = 0; i < n; i++) {
    if (!ts__dtype_valid(specs[i].dtype) || !ts__spec_shape_valid(specs[i].shape)) {
      ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                   "%s: input signature entry %d is not a valid spec", f->name, i);
      return false;
    }
  }
  pthread_mutex_lock(&f->lock);
  g_free(f->specs);
  f->specs = g_memdup2(specs, sizeof *specs * (size_t)n);
  f->n_specs = n;
  pthread_mutex_unlock(&f->lock);
  return true;
}

void ts_function_set_reduce_retracing(ts_function *f, bool reduce)
{
  f->reduce_retracing = reduce;
}

void ts_function_set_retrace_limit(ts_function *f, int limit)
{
  f->retrace_limit = limit;
}

void ts_function_set_fail_on_retrace(ts_function *f, bool fail)
{
  f->fail_on_retrace = fail;
}

void ts__function_set_call_hook(ts_function *f, ts__call_hook hook)
{
  f->call_hook = hook;
}

ts__call_hook ts__function_call_hook(const ts_function *f)
{
  return f->call_hook;
}

int ts_function_trace_count(const ts_function *f)
{
  return f->trace_count;
}

int ts_function_n_concrete(const ts_function *f)
{
  return (int)f->concrete->len;
}

ts_concrete *ts_function_concrete(const ts_function *f, int i)
{
  TS_CHECK_ARG(f && i >= 0 && i < (int)f->concrete->len, NULL);
  return f->concrete->pdata[i];
}

ts_function *ts_concrete_function(const ts_concrete *cf)
{
  return cf->fn;
}

const ts_graph *ts_concrete_graph(const ts_concrete *cf)
{
  return cf->graph;
}

const ts_graph *ts_concrete_optimized_graph(const ts_concrete *cf)
{
  TS_CHECK_ARG(cf != NULL, NULL);
  return ts__executable_graph(cf->exec);
}

const char *ts_concrete_pass_summary(const ts_concrete *cf)
{
  TS_CHECK_ARG(cf != NULL, NULL);
  return ts__executable_summary(cf->exec);
}

bool ts_concrete_memory_plan(const ts_concrete *cf, ts_memory_plan *plan)
{
  TS_CHECK_ARG(cf != NULL && plan != NULL, false);
  return ts__executable_memory_plan(cf->exec, plan);
}

bool ts_concrete_schedule(const ts_concrete *cf, ts_schedule *schedule)
{
  TS_CHECK_ARG(cf != NULL && schedule != NULL, false);
  ts__executable_schedule(cf->exec, schedule);
  return true;
}

char *ts_concrete_schedule_describe(const ts_concrete *cf)
{
  TS_CHECK_ARG(cf != NULL, NULL);
  return ts__executable_schedule_describe(cf->exec);
}

const char *ts_concrete_signature(const ts_concrete *cf)
{
  return cf->sig_text;
}

int ts_concrete_n_results(const ts_concrete *cf)
{
  TS_CHECK_ARG(cf != NULL, -1);
  return cf->n_outputs;
}

bool ts_concrete_returns_tuple(const ts_concrete *cf)
{
  TS_CHECK_ARG(cf != NULL, false);
  return cf->tuple;
}

/* ---- calling C code ------------------------------------------------------------ */

static uint64_t next_run_id;

/* A top-level call starts a run (see ts_op_event); a call inside one
 * continues it.  Returns whether this call started it. */
static bool run_begin(const ts_concrete *cf, const GHashTable *twins)
{
  ts_run_state *r = &ts__context()->run;
  if (r->run_id)
    return false;
  r->run_id = __atomic_add_fetch(&next_run_id, 1, __ATOMIC_RELAXED);
  r->seq = 0;
  r->concrete = cf;
  r->twins = twins;
  return true;
}

static void run_end(bool started)
{
  if (!started)
    return;
  ts_run_state *r = &ts__context()->run;
  r->run_id = 0;
  r->concrete = NULL;
  r->twins = NULL;
}

/* Runs the C function on args in a scope of its own; the result moves to
 * the caller's scope.  Used eagerly and, with symbolic args, to trace.
 * The call is an entry of the op path in both modes. */
static ts_tensor *run_c(const char *name, ts_fn fn, char *const *params, int n_params,
                        const ts_value *args, int n_args)
{
  ts_call call = { name, params, n_params, args, n_args };
  ts_scope *scope = ts_scope_begin();
  int depth = ts__path_depth();
  ts__path_push((ts_loc){ 0 }, name);
  ts_fn_jumps jumps;
  ts__jumps_fn_begin(&jumps, name);
  ts_tensor *out = ts__jumps_fn_end(&jumps, fn(&call));
  ts__path_truncate(depth);
  if (out && out->is_variable) /* a function returns a variable's value, not the variable */
    out = ts_read_at((ts_loc){ 0 }, out);
  if (ts_failed() || !out) {
    ts_scope_end(scope);
    if (!ts_failed())
      ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                   "%s: returned NULL without an error; a function that returns nothing "
                   "ends in `return ts_none();`",
                   name);
    return NULL;
  }
  return ts_scope_end_keep(scope, out);
}

static ts_concrete *lookup(ts_function *f, const ts_signature *sig);

/* The concrete function traced for args whose nodes an eager run's ops
 * are (see ts_op_event), when someone listens for ops and the call starts
 * a run; else NULL. */
static ts_concrete *eager_twin(ts_function *f, const ts_value *args, int n_args)
{
  ts_concrete *twin = NULL;
  uint32_t op_events = TS_EVENT_MASK(TS_EVENT_OP_BEGIN) | TS_EVENT_MASK(TS_EVENT_OP_END);
  if (!ts__context()->run.run_id && !ts_failed() &&
      (__atomic_load_n(&ts__listener_mask, __ATOMIC_RELAXED) & op_events)) {
    ts_signature sig;
    pthread_mutex_lock(&f->lock);
    if (ts__signature_init(&sig, args, n_args)) {
      twin = lookup(f, &sig);
      ts__signature_clear(&sig);
    }
    pthread_mutex_unlock(&f->lock);
    ts_error_clear(); /* a bad argument fails in the call itself */
  }
  return twin;
}

/* An eager run of f, its ops matched to twin's nodes. */
static ts_tensor *run_eager(ts_function *f, ts_concrete *twin, const ts_value *args, int n_args)
{
  bool started = run_begin(twin, twin ? twin->twins : NULL);
  int base = started ? ts__path_rebase() : -1;
  ts_tensor *out = run_c(f->name, f->fn, f->params, f->n_params, args, n_args);
  if (started)
    ts__path_restore(base);
  run_end(started);
  return out;
}

/* The functions being traced on this thread, outermost first: a function
 * calling itself under a tensor condition traces both branches, so the
 * recursion never ends on its own; the limit turns it into an error. */

/* Enters a traced call of `name`; false (with an error naming the chain) past the limit. */
static bool trace_enter(ts_loc loc, const char *name)
{
  ts_context *c = ts__context();
  if (c->trace_depth < TS_TRACE_DEPTH_LIMIT) {
    c->trace_chain[c->trace_depth++] = name;
    return true;
  }
  GString *chain = g_string_new(NULL);
  for (int i = 0; i < 6; i++)
    g_string_append_printf(chain, "%s -> ", c->trace_chain[i]);
  ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL,
               "%s... -> %s (trace depth limit %d): recursion under a tensor condition cannot be "
               "traced (write it as a TS_WHILE loop), and recursion on host values may nest "
               "at most %d traced calls",
               chain->str, name, TS_TRACE_DEPTH_LIMIT, TS_TRACE_DEPTH_LIMIT);
  g_string_free(chain, TRUE);
  return false;
}

static void trace_leave(void)
{
  ts__context()->trace_depth--;
}

/* A C helper (or a function that runs eagerly) called while tracing: its
 * C code runs, its ops joining the caller's graph under a name scope of
 * their own ("inner_function", "inner_function_1"). */
static ts_tensor *trace_inline(ts_loc loc, const char *name, ts_fn fn, char *const *params,
                               int n_params, const ts_value *args, int n_args)
{
  if (!trace_enter(loc, name))
    return NULL;
  ts_name_scope_begin(name);
  ts_tensor *out = run_c(name, fn, params, n_params, args, n_args);
  ts_name_scope_end();
  trace_leave();
  return out;
}

ts_tensor *ts_invoke_at(ts_loc loc, const char *name, ts_fn fn, const ts_value *args, int n_args)
{
  TS_CHECK_ARG(name && fn && n_args >= 0 && (args || n_args == 0), NULL);
  if (!ts__values_check(name, args, n_args))
    return NULL;
  for (int i = 0; i < n_args; i++)
    if (args[i].kind == TS_VALUE_TENSOR && !args[i].tensor) {
      if (!ts_failed())
        ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL, "%s: argument %d is NULL", name, i);
      return NULL;
    }
  ts_tensor *out = ts_tracing() ? trace_inline(loc, name, fn, NULL, 0, args, n_args)
                                 : run_c(name, fn, NULL, 0, args, n_args);
  return ts__single_result(name, "TS_INVOKE", "a ts_function and ts_function_call_n", out);
}

/* ---- tracing ---------------------------------------------------------------------- */

static void emit(const ts_event *ev)
{
  if (__atomic_load_n(&ts__listener_mask, __ATOMIC_RELAXED) & TS_EVENT_MASK(ev->kind))
    ts__listeners_emit(ev);
}

/* Traces f for sig: the C function runs once on symbolic tensors. */
/* Every traced node with a site, by (site, occurrence), subgraphs too. */
static void add_twins(GHashTable *twins, const ts_graph *g)
{
  for (guint id = 0; id < g->nodes->len; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    if (n->has_site)
      ts__twin_add(twins, n->site, n->occurrence, n);
    for (int s = 0; s < n->n_subgraphs; s++)
      add_twins(twins, n->subgraphs[s]);
  }
}

static ts_concrete *trace_impl(ts_function *f, const ts_signature *sig, const ts_value *args);

/* Traces f; *n_traces says how many traces that took (2: the first made variables). */
static ts_concrete *trace(ts_function *f, const ts_signature *sig, const ts_value *args, int *n_traces)
{
  *n_traces = 1;
  if (!trace_enter((ts_loc){ 0 }, f->name))
    return NULL;
  ts__phase phase;
  ts__phase_begin(&phase, TS_PHASE_TRACE, f->name);
  /* tf.function's singleton variables: only a first trace may create them */
  ts_context *c = ts__context();
  int retracing = f->trace_count > 0;
  int64_t made = c->variables_made;
  c->retracing += retracing;
  ts_concrete *cf = trace_impl(f, sig, args);
  c->retracing -= retracing;
  /* A first trace that made variables runs again with creation refused, as
   * tf.function traces twice: a function that makes a variable on every
   * call fails here instead of reusing the first one in silence, and one
   * guarded to make it once gives the graph of its later traces. */
  if (cf && !retracing && c->variables_made != made) {
    concrete_free(cf);
    *n_traces = 2;
    c->retracing++;
    cf = trace_impl(f, sig, args);
    c->retracing--;
  }
  /* Optimized and planned once, for the trace that is kept: the first of
   * two traces would pay the passes and the plan for nothing. */
  if (cf) {
    uint64_t start = ts_now_ns();
    cf->exec = ts__executable_new(cf->graph);
    cf->trace_ns += ts_now_ns() - start;
  }
  ts__phase_end(&phase, cf ? cf->sig_text : NULL);
  trace_leave();
  return cf;
}

/* A list argument as the trace sees it: each tensor in it but variables a placeholder
 * (named as TensorFlow names a flattened argument: "xs", "xs_1", "xs_2",
 * the list's tensors depth first, as a.leaves has them), the rest as
 * given.  The item arrays made go to `lists`. */
static ts_value symbolic_list(ts_frame *frame, const ts_value *v, const ts_argsig *a,
                              const char *pname, int *k, GPtrArray *lists)
{
  if ((v->kind == TS_VALUE_TENSOR && !v->tensor->is_variable) || v->kind == TS_VALUE_SPEC) {
    char name[160];
    if (*k)
      snprintf(name, sizeof name, "%s_%d", pname, *k);
    else
      g_strlcpy(name, pname, sizeof name);
    return TS_TENSOR_VALUE(ts__frame_placeholder(frame, name, a->leaves[(*k)++]));
  }
  if (v->kind != TS_VALUE_LIST)
    return *v;
  ts_value *items = g_new(ts_value, v->list.n > 0 ? v->list.n : 1);
  g_ptr_array_add(lists, items);
  for (int i = 0; i < v->list.n; i++)
    items[i] = symbolic_list(frame, &v->list.items[i], a, pname, k, lists);
  return (ts_value){ .kind = TS_VALUE_LIST, .list = { items, v->list.n } };
}

static ts_concrete *trace_impl(ts_function *f, const ts_signature *sig, const ts_value *args)
{
  uint64_t start = ts_now_ns();
  int path_base = ts__path_rebase();
  ts_frame *frame = ts__frame_push(f->name);
  ts_trace_notes *notes = frame->notes = ts__trace_notes_new();
  ts_scope *scope = ts_scope_begin();

  ts_value *sym = g_new0(ts_value, sig->n > 0 ? sig->n : 1);
  GPtrArray *lists = g_ptr_array_new_with_free_func(g_free);
  for (int i = 0; i < sig->n; i++) {
    const ts_argsig *a = &sig->args[i];
    char fallback[32];
    snprintf(fallback, sizeof fallback, "arg%d", i);
    const char *pname = i < f->n_params ? f->params[i] : fallback;
    if (a->kind != TS_VALUE_TENSOR) {
      int k = 0; /* host values are the trace's constants, tensors in lists inputs */
      sym[i] = a->n_leaves ? symbolic_list(frame, &args[i], a, pname, &k, lists) : args[i];
      continue;
    }
    sym[i] = TS_TENSOR_VALUE(ts__frame_placeholder(frame, pname, (ts_info){ a->dtype, a->shape }));
  }

  ts_tensor *out = run_c(f->name, f->fn, f->params, f->n_params, sym, sig->n);
  g_free(sym);
  g_ptr_array_unref(lists);

  /* A plain `return` or `break` out of a TS_IF/TS_WHILE/TS_FOR block left
   * its frames open (run_c reported it). */
  while (ts__trace_frame() != frame)
    ts__frame_abort(ts__trace_frame());

  ts__path_restore(path_base);
  /* one graph output per result: the tensor, or each of a tuple's (None: none) */
  int n_out = out && out->items ? out->n_items : 1;
  ts_info *outputs = g_new(ts_info, n_out > 0 ? n_out : 1);
  bool ok = out && !ts_failed();
  for (int i = 0; ok && i < n_out; i++) {
    ts_port port;
    ok = ts__frame_port(frame, out->items ? out->items[i] : out, &port);
    if (ok) {
      outputs[i] = ts__graph_node(frame->graph, port.node)->outputs[port.index];
      g_array_append_val(frame->graph->outputs, port);
    }
  }
  if (!ok) {
    g_free(outputs);
    ts__frame_abort(frame);
    ts__trace_notes_free(notes);
    ts_scope_end(scope);
    return NULL;
  }
  bool tuple = ts__is_tuple(out);
  ts_graph *graph = ts__frame_pop(frame, NULL);
  ts_scope_end(scope);

  ts_concrete *cf = g_new0(ts_concrete, 1);
  cf->fn = f;
  ts__signature_copy(&cf->sig, sig);
  cf->sig_text = ts__signature_text(sig, f->params, f->n_params);
  cf->graph = graph;
  cf->twins = ts__twin_map_new();
  add_twins(cf->twins, graph);
  cf->notes = notes;
  cf->n_outputs = n_out;
  cf->outputs = outputs;
  cf->tuple = tuple;
  cf->trace_ns = ts_now_ns() - start;
  return cf;
}

/* The most specific shape that takes both (TensorShape's
 * most_specific_common_supertype): dims that differ unknown, an unknown
 * rank where the ranks differ. */
static void relax_shape(ts_shape *shape, const ts_shape *other)
{
  if (shape->rank != other->rank || shape->rank == TS_RANK_UNKNOWN) {
    *shape = (ts_shape){ .rank = TS_RANK_UNKNOWN };
    return;
  }
  for (int d = 0; d < shape->rank; d++)
    if (shape->dim[d] != other->dim[d])
      shape->dim[d] = -1;
}

/* Can a and c be generalised into one signature by relaxing shapes alone?
 * Everything but the shapes of tensors (those of lists too) must be
 * alike: kinds, dtypes, host values, variables, lists' skeletons. */
static bool only_shapes_differ(const ts_argsig *a, const ts_argsig *c)
{
  if (ts__argsig_match_kind(a->kind) != ts__argsig_match_kind(c->kind))
    return false;
  if (a->kind == TS_VALUE_TENSOR)
    return a->dtype == c->dtype;
  if (a->kind == TS__ARG_VARIABLE)
    return a->variable == c->variable;
  if (a->n_list_variables != c->n_list_variables)
    return false;
  for (int k = 0; k < a->n_list_variables; k++)
    if (a->list_variables[k] != c->list_variables[k])
      return false;
  if (!ts__argsig_same_host(a, c))
    return false;
  for (int k = 0; k < a->n_leaves; k++)
    if (a->leaves[k].dtype != c->leaves[k].dtype)
      return false;
  return true;
}

/* sig relaxed to take other's calls too, when they differ only in shapes
 * (relax_shape on each tensor's, those in lists too); else unchanged. */
static void relax(ts_signature *sig, const ts_signature *other)
{
  if (other->n != sig->n)
    return;
  for (int i = 0; i < sig->n; i++)
    if (!only_shapes_differ(&sig->args[i], &other->args[i]))
      return;
  for (int i = 0; i < sig->n; i++) {
    ts_argsig *a = &sig->args[i];
    const ts_argsig *c = &other->args[i];
    if (a->kind == TS_VALUE_TENSOR && !ts_shape_equal(a->shape, c->shape))
      relax_shape(&a->shape, &c->shape);
    for (int k = 0; k < a->n_leaves; k++)
      if (!ts_shape_equal(a->leaves[k].shape, c->leaves[k].shape))
        relax_shape(&a->leaves[k].shape, &c->leaves[k].shape);
    if (a->n_leaves)
      ts__argsig_update_host(a);
  }
  ts__signature_update_key(sig);
}

/* With reduce_retracing a new signature is relaxed against every traced
 * one in trace order, as TensorFlow generalises a call's type against each
 * entry of its dispatch table (try_generalizing_function_type): those that
 * differ only in shapes widen it, the others (another dtype, host value,
 * kind) are passed over.  So f32[1], i32[1], then f32[2] traces f32[?]:
 * the int32 trace between does not hide the float32 one. */
static void generalize(const ts_function *f, ts_signature *sig)
{
  for (guint i = 0; i < f->concrete->len; i++)
    relax(sig, &((const ts_concrete *)f->concrete->pdata[i])->sig);
}

/* The cached concrete function accepting sig: an exact match, else the
 * most specific of those that accept it (one the others accept too; the
 * earliest traced when none is), as TensorFlow's dispatch table picks it.
 * The choice is cached under sig's key. */
static ts_concrete *lookup(ts_function *f, const ts_signature *sig)
{
  ts_concrete *cf = g_hash_table_lookup(f->by_key, sig->key);
  if (cf)
    return cf;
  for (guint i = 0; i < f->concrete->len; i++) {
    ts_concrete *c = f->concrete->pdata[i];
    if (ts__signature_accepts(&c->sig, sig) && (!cf || ts__signature_accepts(&cf->sig, &c->sig)))
      cf = c;
  }
  if (cf)
    g_hash_table_insert(f->by_key, g_strdup(sig->key), cf);
  return cf;
}

/* Do args hold tensors of the dtypes and shapes of the last hit's call? */
static bool like_last_hit(const ts_function *f, const ts_value *args, int n)
{
  if (!f->last_hit || n != f->n_last)
    return false;
  for (int i = 0; i < n; i++) {
    const ts_tensor *t = args[i].kind == TS_VALUE_TENSOR ? args[i].tensor : NULL;
    if (!t || t->is_variable || t->dtype != f->last_args[i].dtype ||
        !ts_shape_equal(t->shape, f->last_args[i].shape))
      return false;
  }
  return true;
}

static void remember_hit(ts_function *f, ts_concrete *cf, const ts_value *args, int n)
{
  if (n != f->n_last) {
    f->last_args = g_renew(ts_info, f->last_args, n > 0 ? n : 1);
    f->n_last = n;
  }
  for (int i = 0; i < n; i++)
    f->last_args[i] = (ts_info){ args[i].tensor->dtype, args[i].tensor->shape };
  f->last_hit = cf;
}

/* The cache hit of a call of tensors only, without building a signature:
 * the last hit again, else the key as ts__signature_update_key spells it,
 * in a stack buffer. */
static ts_concrete *lookup_tensors(ts_function *f, const ts_value *args, int n)
{
  if (like_last_hit(f, args, n))
    return f->last_hit;
  char key[1024], part[TS_INFO_STR];
  size_t len = 0;
  for (int i = 0; i < n; i++) {
    if (args[i].kind != TS_VALUE_TENSOR || !args[i].tensor || args[i].tensor->is_variable)
      return NULL;
    ts__info_str(part, args[i].tensor->dtype, args[i].tensor->shape);
    size_t plen = strlen(part);
    if (len + plen + 2 > sizeof key)
      return NULL;
    if (i)
      key[len++] = ';';
    memcpy(key + len, part, plen);
    len += plen;
  }
  key[len] = '\0';
  ts_concrete *hit = g_hash_table_lookup(f->by_key, key);
  if (hit)
    remember_hit(f, hit, args, n);
  return hit;
}

static const ts_concrete *closest(const ts_function *f, const ts_signature *sig)
{
  const ts_concrete *best = NULL;
  int best_d = INT_MAX;
  for (guint i = 0; i < f->concrete->len; i++) {
    const ts_concrete *c = f->concrete->pdata[i];
    int d = ts__signature_distance(&c->sig, sig);
    if (d <= best_d) { /* ties: the most recent */
      best_d = d;
      best = c;
    }
  }
  return best;
}

static char *changing_args(const ts_function *f)
{
  GString *s = g_string_new(NULL);
  for (int i = 0; i < 64; i++) {
    if (f->changed[i] < 2)
      continue;
    if (s->len)
      g_string_append(s, ", ");
    if (i < f->n_params)
      g_string_append(s, f->params[i]);
    else
      g_string_append_printf(s, "arg %d", i);
  }
  if (!s->len)
    g_string_append(s, f->changed[64] ? "the number of arguments" : "its arguments");
  return g_string_free(s, FALSE);
}

static void warn(ts_function *f, ts_warning_kind kind, const char *message, const char *arguments)
{
  ts_event ev = { .kind = TS_EVENT_WARNING };
  ev.warning = (ts_warning_event){ kind, f, f->name, message, arguments };
  emit(&ev);
}

void ts__function_warn(ts_function *f, ts_warning_kind kind, const char *message)
{
  warn(f, kind, message, NULL);
}

/* The input signature that would have served every traced call: the
 * newest signature with each dimension that varies unknown.  NULL when no
 * single signature accepts them all (an argument changed its number,
 * kind or dtype, or is a list of tensors, which an input signature cannot
 * describe: *in_list then set); *why then says which.  A rank that
 * changes is unknown in it.  Owned. */
static char *suggested_signature(const ts_function *f, char **why, bool *in_list)
{
  const ts_concrete *last = f->concrete->pdata[f->concrete->len - 1];
  ts_signature sig;
  ts__signature_copy(&sig, &last->sig);
  char label[128];
  *why = NULL;
  *in_list = false;
  for (int a = 0; a < sig.n && !*why; a++)
    if (sig.args[a].n_leaves) {
      *in_list = true;
      *why = g_strdup_printf("%s is a list of tensors",
                             ts__arg_label(label, sizeof label, a, f->params, f->n_params));
    }
  for (guint i = 0; i < f->concrete->len && !*why; i++) {
    const ts_signature *other = &((const ts_concrete *)f->concrete->pdata[i])->sig;
    if (other->n != sig.n) {
      *why = g_strdup("the number of arguments changes");
      break;
    }
    for (int a = 0; a < sig.n && !*why; a++) {
      ts_argsig *x = &sig.args[a];
      const ts_argsig *y = &other->args[a];
      const char *change = x->kind != y->kind                      ? "kind"
                           : x->kind != TS_VALUE_TENSOR            ? NULL
                           : x->dtype != y->dtype                  ? "dtype"
                                                                   : NULL;
      if (change) {
        *why = g_strdup_printf("%s changes %s",
                               ts__arg_label(label, sizeof label, a, f->params, f->n_params),
                               change);
        break;
      }
      if (x->kind == TS_VALUE_TENSOR && !ts_shape_equal(x->shape, y->shape))
        relax_shape(&x->shape, &y->shape);
    }
  }
  char *text = *why ? NULL : ts__signature_text(&sig, f->params, f->n_params);
  ts__signature_clear(&sig);
  return text;
}

/* A call made room for in the history (its bit 0, set if it traces). */
static void remember_call(ts_function *f)
{
  f->history <<= 1;
  f->n_history = MIN(f->n_history + 1, HISTORY);
}

/* TensorFlow's "5 out of the last 5 calls triggered retracing", naming
 * the arguments that keep changing and the fix for each kind of change;
 * twice at most per function, as TensorFlow's detector warns (at the
 * fifth trace in a row and the sixth). */
static void warn_frequent(ts_function *f, ts_trace_reason reason)
{
  int traced = __builtin_popcount(f->history & ((1u << HISTORY) - 1));
  if (f->n_warned_frequent == FREQUENT_WARNINGS || traced < FREQUENT)
    return;
  f->n_warned_frequent++;
  char *args = changing_args(f);
  char *fix;
  if (reason == TS_TRACE_HOST_VALUE) {
    fix = g_strdup("pass a tensor instead of a host value (each host value is baked into a graph "
                   "of its own)");
  } else if (reason == TS_TRACE_SHAPE) {
    bool in_list;
    char *why = NULL, *sig = suggested_signature(f, &why, &in_list);
    if (sig)
      fix = g_strdup_printf("give it an input signature with the changing dimensions unknown %s, "
                            "or turn on reduce_retracing", sig);
    else if (in_list) /* reduce_retracing relaxes the tensors of lists too */
      fix = g_strdup_printf("no input signature describes these calls (%s); turn on "
                            "reduce_retracing", why);
    else
      fix = g_strdup_printf("no single input signature accepts these calls (%s); call it with "
                            "tensors of one dtype", why);
    g_free(sig);
    g_free(why);
  } else if (reason == TS_TRACE_DTYPE) {
    fix = g_strdup("cast the arguments to one dtype before the call");
  } else {
    fix = g_strdup("call it with the same number and kinds of arguments");
  }
  char *msg = g_strdup_printf("%s: %d of the last %d calls traced a new graph because %s keep%s "
                              "changing; tracing is expensive: %s",
                              f->name, traced, f->n_history, args, strchr(args, ',') ? "" : "s", fix);
  warn(f, TS_WARNING_FREQUENT_RETRACING, msg, args);
  g_free(msg);
  g_free(fix);
  g_free(args);
}

static bool check_input_signature(const ts_function *f, const ts_value *args, int n)
{
  char label[128], want[TS_INFO_STR], got[TS_INFO_STR];
  if (n < f->n_specs) { /* Python's "missing a required argument: 'x'", naming it */
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "%s: missing %s: its input signature takes %d argument%s, the call gave %d",
                 f->name, ts__arg_label(label, sizeof label, n, f->params, f->n_params),
                 f->n_specs, f->n_specs == 1 ? "" : "s", n);
    return false;
  }
  if (n != f->n_specs) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "%s: called with %d argument%s, its input signature has %d", f->name, n,
                 n == 1 ? "" : "s", f->n_specs);
    return false;
  }
  for (int i = 0; i < n; i++) {
    const ts_spec *s = &f->specs[i];
    ts__arg_label(label, sizeof label, i, f->params, f->n_params);
    ts__info_str(want, s->dtype, s->shape);
    /* a tensor, or (get_concrete) a spec; as TensorSpec.is_compatible_with,
     * an unknown dim (a spec's, a traced tensor's) fits any */
    ts_info arg;
    if (args[i].kind == TS_VALUE_TENSOR && args[i].tensor)
      arg = (ts_info){ args[i].tensor->dtype, args[i].tensor->shape };
    else if (args[i].kind == TS_VALUE_SPEC)
      arg = (ts_info){ args[i].spec.dtype, args[i].spec.shape };
    else {
      ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                   "%s: %s must be a %s tensor (input signature), got a host value", f->name,
                   label, want);
      return false;
    }
    bool fits = arg.dtype == s->dtype && (s->shape.rank == TS_RANK_UNKNOWN ||
                                          arg.shape.rank == s->shape.rank);
    for (int d = 0; fits && d < s->shape.rank; d++)
      fits = s->shape.dim[d] < 0 || arg.shape.dim[d] < 0 || s->shape.dim[d] == arg.shape.dim[d];
    if (!fits) {
      ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                   "%s: %s does not match the input signature: expected %s, got %s", f->name,
                   label, want, ts__info_str(got, arg.dtype, arg.shape));
      return false;
    }
  }
  return true;
}

/* Host numbers and lists given for a spec become tensors of its dtype, as
 * tf.function converts a Python 5 or [1, 2] for a tf.int32 TensorSpec:
 * ints for any numeric dtype, floats for float dtypes, bools for bool.
 * The shape is the value's (check_input_signature holds it to the spec).
 * Other host values are left for check_input_signature to reject.  out[]
 * gets the arguments; false + error for a value that does not convert. */
static bool convert_host_args(const ts_function *f, const ts_value *args, int n, ts_value *out)
{
  for (int i = 0; i < n; i++) {
    out[i] = args[i];
    const ts_value *v = &args[i];
    bool host = v->kind == TS_VALUE_INT || v->kind == TS_VALUE_FLOAT ||
                v->kind == TS_VALUE_BOOL || v->kind == TS_VALUE_LIST;
    if (i >= f->n_specs || !host)
      continue;
    const ts_spec *s = &f->specs[i];
    const char *why = NULL;
    ts_tensor *t = ts__host_tensor(v, s->dtype, &why);
    if (!t && why) {
      char label[128];
      ts__arg_label(label, sizeof label, i, f->params, f->n_params);
      if (v->kind == TS_VALUE_LIST && !strcmp(why, "a rectangular list of numbers or of bools"))
        ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                     "%s: %s: a host list converts to a %s tensor (input signature) only when "
                     "it is %s", f->name, label, ts_dtype_name(s->dtype), why);
      else
        ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                     "%s: %s: a host %s%s does not convert to %s (input signature)", f->name,
                     label, v->kind == TS_VALUE_LIST ? "list of " : "",
                     v->kind == TS_VALUE_LIST ? why
                     : v->kind == TS_VALUE_FLOAT ? "float" : v->kind == TS_VALUE_BOOL ? "bool" : "int",
                     ts_dtype_name(s->dtype));
    }
    if (!t)
      return false;
    out[i] = TS_TENSOR_VALUE(t);
  }
  return true;
}

/* Is f being traced further out on this thread (it called itself)? */
static bool tracing_outside(const ts_function *f)
{
  const ts_context *c = ts__context();
  for (int i = 0; i < c->trace_depth; i++)
    if (c->trace_chain[i] == f->name)
      return true;
  return false;
}

/* A trace that failed is an event too: the log shows it with its error
 * (the error stays pending; the call fails with it).  In a recursion only
 * the outermost trace of f says so: the 64 levels under the depth limit
 * would each report the one error. */
static void emit_failed_trace(ts_function *f, const ts_signature *sig, ts_trace_reason reason,
                              const char *reason_text, uint64_t duration_ns)
{
  if (tracing_outside(f))
    return;
  const ts_error *e = ts_error_peek();
  char *text = ts__signature_text(sig, f->params, f->n_params);
  ts_event ev = { .kind = TS_EVENT_TRACE };
  ev.trace = (ts_trace_event){
    .function = f, .function_name = f->name, .signature = text, .reason = reason,
    .reason_text = reason_text, .duration_ns = duration_ns, .n_concrete = (int)f->concrete->len,
    .error = e && e->message ? e->message : "tracing failed",
  };
  emit(&ev);
  g_free(text);
}

/* A graph takes at most TS_MAX_INPUTS tensors (those in lists count):
 * false + error, before a trace that could never run. */
static bool fits_graph_inputs(const ts_function *f, const ts_signature *sig)
{
  int n = 0;
  for (int i = 0; i < sig->n; i++)
    n += sig->args[i].kind == TS_VALUE_TENSOR ? 1 : sig->args[i].n_leaves;
  if (n <= TS_MAX_INPUTS)
    return true;
  ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
               "%s: called with %d tensors (those in lists included); a graph takes at most %d "
               "(pass them stacked into fewer tensors)", f->name, n, TS_MAX_INPUTS);
  return false;
}

/* Finds or traces the concrete function for args; *eager set when the
 * retrace limit sends the call to eager execution.  Called with f->lock. */
static ts_concrete *resolve(ts_function *f, const ts_value *args, int n, bool explicit_trace,
                            bool *eager)
{
  *eager = false;
  if (f->n_specs < 0) {
    ts_concrete *hit = lookup_tensors(f, args, n);
    if (hit) {
      remember_call(f);
      return hit;
    }
  }
  /* With an input signature every call, get_concrete's too, gets the one
   * concrete function of the signature (get_concrete may leave the
   * arguments out). */
  if (f->n_specs >= 0 && !(explicit_trace && n == 0) && !check_input_signature(f, args, n))
    return NULL;
  if (f->n_specs >= 0)
    n = f->n_specs;
  ts_signature sig;
  if (f->n_specs >= 0) {
    ts_value *specs = g_new(ts_value, n > 0 ? n : 1);
    for (int i = 0; i < n; i++)
      specs[i] = TS_SPEC_VALUE(f->specs[i].dtype, f->specs[i].shape);
    bool ok = ts__signature_init(&sig, specs, n);
    g_free(specs);
    if (!ok)
      return NULL;
  } else if (!ts__signature_init(&sig, args, n)) {
    return NULL;
  }

  ts_concrete *cf = lookup(f, &sig);
  if (!cf && !fits_graph_inputs(f, &sig)) {
    ts__signature_clear(&sig);
    return NULL;
  }
  remember_call(f);
  if (cf) {
    ts__signature_clear(&sig);
    return cf;
  }

  const ts_concrete *near = closest(f, &sig);
  GString *reason_text = g_string_new(NULL);
  uint64_t changed;
  ts_trace_reason reason =
    ts__signature_diff(near ? &near->sig : NULL, &sig, f->params, f->n_params, reason_text, &changed);
  if (explicit_trace && reason == TS_TRACE_FIRST_CALL)
    reason = TS_TRACE_EXPLICIT;

  if (f->fail_on_retrace && f->trace_count > 0) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "%s: retracing is not allowed (fail_on_retrace): %s", f->name, reason_text->str);
    goto out;
  }
  if (f->retrace_limit >= 0 && f->trace_count >= f->retrace_limit && !explicit_trace) {
    if (!f->warned_limit) {
      f->warned_limit = true;
      char *args_text = changing_args(f);
      char *msg = g_strdup_printf("%s: traced %d times, the retrace limit; calls with new "
                                  "signatures now run eagerly (last reason: %s)",
                                  f->name, f->trace_count, reason_text->str);
      warn(f, TS_WARNING_RETRACE_LIMIT, msg, args_text);
      g_free(msg);
      g_free(args_text);
    }
    *eager = true;
    goto out;
  }

  if (f->reduce_retracing) {
    /* the log says what the call's type was widened to, not only what changed */
    char *before = g_strdup(sig.key);
    generalize(f, &sig);
    if (strcmp(before, sig.key)) {
      char *text = ts__signature_text(&sig, f->params, f->n_params);
      g_string_append_printf(reason_text, " (reduce_retracing: generalised to %s)", text);
      g_free(text);
    }
    g_free(before);
  }
  uint64_t t0 = ts_now_ns();
  int n_traces;
  cf = trace(f, &sig, args, &n_traces);
  if (!cf) {
    emit_failed_trace(f, &sig, reason, reason_text->str, ts_now_ns() - t0);
    goto out;
  }
  g_ptr_array_add(f->concrete, cf);
  g_hash_table_insert(f->by_key, g_strdup(sig.key), cf);
  /* counted as tf.function's experimental_get_tracing_count counts: a
   * first call that made variables was traced twice */
  f->trace_count += n_traces;
  if (n_traces == 2)
    g_string_append(reason_text, " (traced twice: it created variables)");
  f->history |= 1;
  for (int i = 0; i < 64; i++)
    f->changed[i] += (changed >> i) & 1;
  f->changed[64] += reason == TS_TRACE_STRUCTURE;

  ts_event ev = { .kind = TS_EVENT_TRACE };
  ev.trace = (ts_trace_event){
    .function = f, .function_name = f->name, .concrete = cf, .signature = cf->sig_text,
    .reason = reason, .reason_text = reason_text->str, .duration_ns = cf->trace_ns,
    .n_concrete = (int)f->concrete->len,
  };
  emit(&ev);
  if (reason != TS_TRACE_FIRST_CALL && reason != TS_TRACE_EXPLICIT)
    warn_frequent(f, reason);
out:
  g_string_free(reason_text, TRUE);
  ts__signature_clear(&sig);
  return cf;
}

/* Appends the tensors of v (itself, or those a list holds, depth first)
 * to inputs; false past TS_MAX_INPUTS (or when a read fails).  Variables
 * in lists are captured by the trace, not inputs; a variable given for a
 * tensor parameter (read_variable: an input signature's, or a concrete
 * function's traced with a tensor) is read, as TensorFlow converts it to a
 * tensor there: its value now is the input (a read node in the graph of a
 * caller being traced). */
static bool gather_inputs(const ts_value *v, bool read_variable, ts_tensor **inputs, int *n_in)
{
  if (v->kind == TS_VALUE_LIST) {
    for (int i = 0; i < v->list.n; i++)
      if (!gather_inputs(&v->list.items[i], false, inputs, n_in))
        return false;
    return true;
  }
  if (v->kind != TS_VALUE_TENSOR || (v->tensor->is_variable && !read_variable))
    return true;
  if (*n_in == TS_MAX_INPUTS)
    return false;
  ts_tensor *t = v->tensor->is_variable ? ts_read_at((ts_loc){ 0 }, v->tensor) : v->tensor;
  if (!t)
    return false;
  inputs[(*n_in)++] = t;
  return true;
}

/* The tensors of a call of cf that feed its graph's inputs, those in
 * lists too (host arguments are baked in): *n_in of them.  false + error. */
static bool concrete_inputs(const ts_concrete *cf, const ts_value *args, int n,
                            ts_tensor **inputs, int *n_in)
{
  *n_in = 0;
  for (int i = 0; i < n; i++) {
    const ts_argsig *a = &cf->sig.args[i];
    if (a->kind != TS_VALUE_TENSOR && !a->n_leaves)
      continue;
    if (!gather_inputs(&args[i], a->kind == TS_VALUE_TENSOR, inputs, n_in)) {
      ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                   "%s: more than %d tensor arguments", cf->fn->name, TS_MAX_INPUTS);
      return false;
    }
  }
  return true;
}

/* A call of cf's result from its graph's outputs: the tensor, a tuple of
 * them, or None. */
static ts_tensor *call_result(const ts_concrete *cf, ts_tensor *const *out)
{
  return cf->tuple || cf->n_outputs == 0 ? ts__tuple_new(out, cf->n_outputs) : out[0];
}

/* Runs cf's graph on the call's tensors: its result, or its tuple of them. */
static ts_tensor *run_concrete(ts_concrete *cf, const ts_value *args, int n)
{
  ts_tensor *inputs[TS_MAX_INPUTS];
  int n_in;
  if (!concrete_inputs(cf, args, n, inputs, &n_in))
    return NULL;
  ts_tensor *out[TS_MAX_RETURNS] = { NULL };
  bool started = run_begin(cf, NULL);
  bool ok = ts__executable_run(cf->exec, inputs, n_in, out, NULL, 0);
  run_end(started);
  if (!ok)
    return NULL;
  return call_result(cf, out);
}

static bool runs_eagerly(const ts_function *f)
{
  return f->run_eagerly >= 0 ? f->run_eagerly : ts_functions_run_eagerly();
}

/* Host arguments converted for f's input signature: *converted is NULL
 * (args as given) or owned.  false after an error. */
static bool convert_args(const ts_function *f, const ts_value **args, int n_args,
                         ts_value **converted)
{
  *converted = NULL;
  if (f->n_specs < 0 || n_args == 0)
    return true;
  *converted = g_new(ts_value, n_args);
  if (!convert_host_args(f, *args, n_args, *converted)) {
    g_free(*converted);
    *converted = NULL;
    return false;
  }
  *args = *converted;
  return true;
}

/* ---- calls: checked once, resolved once, run ---------------------------------------- */

/* Does v hold a tensor spec (itself, or in a list)? */
static bool holds_spec(const ts_value *v)
{
  if (v->kind == TS_VALUE_SPEC)
    return true;
  for (int i = 0; v->kind == TS_VALUE_LIST && i < v->list.n; i++)
    if (holds_spec(&v->list.items[i]))
      return true;
  return false;
}

/* More arguments than named parameters is Python's TypeError ("f(x)
 * takes 1 positional argument but 2 were given"), before any trace; a
 * function without names takes any number. */
static bool check_arg_count(const ts_function *f, int n_args)
{
  if (f->n_params == 0 || n_args <= f->n_params)
    return true;
  char *names = g_strjoinv(", ", f->params);
  ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
               "%s(%s) takes %d argument%s but %d were given", f->name, names, f->n_params,
               f->n_params == 1 ? "" : "s", n_args);
  g_free(names);
  return false;
}

/* What a call (not get_concrete) must not be given: more arguments than
 * it names, a tensor spec (it has no value), or, outside a trace, a
 * symbolic tensor (TensorFlow: a graph tensor leaked out of the function
 * building context).  false + error naming the argument. */
static bool check_call_args(const ts_function *f, const ts_value *args, int n_args)
{
  if (!check_arg_count(f, n_args))
    return false;
  char label[128];
  for (int i = 0; i < n_args; i++) {
    const ts_tensor *t = args[i].kind == TS_VALUE_TENSOR ? args[i].tensor : NULL;
    if (holds_spec(&args[i])) {
      ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                   "%s: %s is a tensor spec, which has no value: a call takes tensors "
                   "(specs are for get_concrete)",
                   f->name, ts__arg_label(label, sizeof label, i, f->params, f->n_params));
      return false;
    }
    if (t && t->node && t->name && !ts_tracing()) {
      ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                   "%s: %s is tensor '%s:%d', a symbolic tensor of a traced graph: it has no "
                   "value outside its trace (it leaked out of the trace, e.g. through a global "
                   "or into TS_INIT_SCOPE code)",
                   f->name, ts__arg_label(label, sizeof label, i, f->params, f->n_params),
                   t->name, t->node_output);
      return false;
    }
  }
  return true;
}

bool ts__call_begin(ts__call *call, ts_function *f, const ts_value *args, int n_args)
{
  *call = (ts__call){ .f = f, .args = args, .n_args = n_args, .how = TS__CALL_AUTO };
  return ts__values_check(f->name, args, n_args) && check_call_args(f, args, n_args);
}

/* A call that failed while another function was traced names the
 * functions being traced, once, where it failed: "(calling inner while
 * tracing outer)", "(... while tracing outer -> middle)"; a deep chain
 * (recursion) by its ends. */
static void note_call_failure(const ts_function *f)
{
  ts_context *c = ts__context();
  if (!ts_failed() || c->error == c->error_noted)
    return;
  enum { ENDS = 3 };
  GString *chain = g_string_new(NULL);
  for (int i = 0; i < c->trace_depth; i++) {
    if (c->trace_depth > 2 * ENDS + 1 && i == ENDS) {
      g_string_append(chain, " -> ...");
      i = c->trace_depth - ENDS;
    }
    g_string_append_printf(chain, "%s%s", i ? " -> " : "", c->trace_chain[i]);
  }
  ts__error_append("(calling %s while tracing %s)", f->name, chain->str);
  g_string_free(chain, TRUE);
  c->error_noted = c->error;
}

/* A call while another function is traced, as tf.function does it: the
 * arguments are checked against the callee's own input signature, and the
 * callee is traced once per signature into a concrete function of its own
 * (its cache, its trace count), on its own, outside the caller's graph;
 * later direct calls reuse it.  The caller's graph inlines that concrete
 * function (ts__call_run): its C code does not run again.  A callee that
 * runs eagerly (or past its retrace limit) runs its C code in the caller's
 * trace instead, as a plain C helper does. */
static bool resolve_inline(ts__call *call)
{
  ts_function *f = call->f;
  if (runs_eagerly(f))
    return true;
  ts_op_handler isolate;
  ts__trace_isolate_begin(&isolate);
  bool ok = convert_args(f, &call->args, call->n_args, &call->converted);
  if (ok) {
    pthread_mutex_lock(&f->lock);
    call->cf = resolve(f, call->args, call->n_args, false, &call->limited);
    pthread_mutex_unlock(&f->lock);
    ok = call->cf || call->limited;
  }
  ts__trace_isolate_end(&isolate);
  if (!ok)
    note_call_failure(f);
  return ok;
}

/* The caller's graph gets a copy of cf's, its placeholders standing for
 * the call's tensors; its outputs are the call's result (a tuple's
 * tensors for a tuple). */
static ts_tensor *inline_concrete(ts_concrete *cf, const ts_value *args, int n)
{
  ts_tensor *inputs[TS_MAX_INPUTS], *out[TS_MAX_RETURNS];
  int n_in;
  if (!concrete_inputs(cf, args, n, inputs, &n_in) ||
      !ts__inline_graph(cf->fn->name, cf->graph, cf->notes, inputs, n_in, out, cf->n_outputs))
    return NULL;
  return call_result(cf, out);
}

bool ts__call_resolve(ts__call *call, ts__call_how want)
{
  ts_function *f = call->f;
  if (want == TS__CALL_AUTO)
    want = ts_tracing() ? TS__CALL_INLINE : runs_eagerly(f) ? TS__CALL_EAGER : TS__CALL_GRAPH;
  call->how = want;
  switch (want) {
  case TS__CALL_INLINE:
    return resolve_inline(call);
  case TS__CALL_EAGER:
    call->cf = eager_twin(f, call->args, call->n_args);
    return true;
  case TS__CALL_GRAPH:
  default:
    if (!convert_args(f, &call->args, call->n_args, &call->converted))
      return false;
    pthread_mutex_lock(&f->lock);
    call->cf = resolve(f, call->args, call->n_args, false, &call->limited);
    pthread_mutex_unlock(&f->lock);
    if (call->limited) { /* past the retrace limit: eagerly */
      call->how = TS__CALL_EAGER;
      call->cf = eager_twin(f, call->args, call->n_args);
    }
    return call->cf || call->limited;
  }
}

ts_tensor *ts__call_run(const ts__call *call, ts__call_how how)
{
  ts_function *f = call->f;
  switch (how) {
  case TS__CALL_INLINE:
    if (call->cf)
      return inline_concrete(call->cf, call->args, call->n_args);
    return trace_inline((ts_loc){ 0 }, f->name, f->fn, f->params, f->n_params, call->args,
                        call->n_args);
  case TS__CALL_GRAPH:
    return run_concrete(call->cf, call->args, call->n_args);
  case TS__CALL_EAGER:
  default:
    return run_eager(f, call->cf, call->args, call->n_args);
  }
}

void ts__call_clear(ts__call *call)
{
  g_free(call->converted);
  call->converted = NULL;
}

static ts_tensor *call_as(ts_function *f, const ts_value *args, int n_args, ts__call_how want)
{
  ts__call call;
  ts_tensor *out = NULL;
  if (!ts__call_begin(&call, f, args, n_args))
    return NULL;
  if (want == TS__CALL_AUTO && f->call_hook && !ts_tracing() && !runs_eagerly(f) &&
      !ts__context()->run.run_id)
    out = f->call_hook(&call);
  else if (ts__call_resolve(&call, want))
    out = ts__call_run(&call, call.how);
  ts__call_clear(&call);
  return out;
}

/* A function placed on a device runs its calls there (not calls traced
 * into another graph: graphs run where their caller runs them). */
static ts_tensor *call_placed(ts_function *f, const ts_value *args, int n_args)
{
  if (!f->device || ts_tracing())
    return call_as(f, args, n_args, TS__CALL_AUTO);
  ts_device_scope_begin(f->device);
  ts_tensor *out = call_as(f, args, n_args, TS__CALL_AUTO);
  ts_device_scope_end();
  return out;
}

ts_tensor *ts_function_call(ts_function *f, const ts_value *args, int n_args)
{
  TS_CHECK_ARG(f != NULL && n_args >= 0 && (args || n_args == 0), NULL);
  return ts__single_result(f->name, "ts_function_call", "ts_function_call_n",
                           call_placed(f, args, n_args));
}

int ts_function_call_n(ts_function *f, const ts_value *args, int n_args, ts_tensor **out,
                       int max_out, bool *tuple)
{
  TS_CHECK_ARG(f != NULL && n_args >= 0 && (args || n_args == 0) && out && max_out >= 1, -1);
  return ts__results(f->name, call_placed(f, args, n_args), out, max_out, tuple);
}

ts_tensor *ts_function_call_eager(ts_function *f, const ts_value *args, int n_args)
{
  TS_CHECK_ARG(f != NULL && n_args >= 0 && (args || n_args == 0), NULL);
  return ts__single_result(f->name, "ts_function_call_eager", "ts_function_call_eager_n",
                           call_as(f, args, n_args, TS__CALL_EAGER));
}

int ts_function_call_eager_n(ts_function *f, const ts_value *args, int n_args, ts_tensor **out,
                             int max_out, bool *tuple)
{
  TS_CHECK_ARG(f != NULL && n_args >= 0 && (args || n_args == 0) && out && max_out >= 1, -1);
  return ts__results(f->name, call_as(f, args, n_args, TS__CALL_EAGER), out, max_out, tuple);
}

const ts_graph *ts__concrete_exec_graph(const ts_concrete *cf)
{
  return ts__executable_graph(cf->exec);
}

ts_concrete *ts_function_get_concrete(ts_function *f, const ts_value *args, int n_args)
{
  TS_CHECK_ARG(f != NULL && n_args >= 0 && (args || n_args == 0), NULL);
  if (!ts__values_check(f->name, args, n_args) || !check_arg_count(f, n_args))
    return NULL;
  /* Inside another function's trace, f is traced on its own, as a call
   * of it is there (resolve_inline); ts_concrete_call then copies it in. */
  ts_op_handler isolate;
  bool nested = ts__trace_frame() != NULL;
  if (nested)
    ts__trace_isolate_begin(&isolate);
  ts_value *converted;
  ts_concrete *cf = NULL;
  if (convert_args(f, &args, n_args, &converted)) {
    bool eager;
    pthread_mutex_lock(&f->lock);
    cf = resolve(f, args, n_args, true, &eager);
    pthread_mutex_unlock(&f->lock);
    g_free(converted);
  }
  if (nested)
    ts__trace_isolate_end(&isolate);
  return cf;
}

/* Are cf's arguments from `from` on host values its trace baked in (no
 * tensors, variables or lists of tensors)?  A call may leave those out, as
 * a concrete function from pow.get_concrete_function(a=spec, b=2) is
 * called square(x): b is bound to the 2 it was traced with. */
static bool bound_from(const ts_concrete *cf, int from)
{
  for (int i = from; i < cf->sig.n; i++) {
    const ts_argsig *a = &cf->sig.args[i];
    if (a->kind == TS_VALUE_TENSOR || a->kind == TS__ARG_VARIABLE || a->n_leaves)
      return false;
  }
  return true;
}

/* A concrete function called directly: its arguments checked against its
 * signature (a call of the function is checked when it is resolved).
 * Called while another function is traced, its graph is copied into the
 * caller's, as a call of the function is (TensorFlow calls a
 * ConcreteFunction from a tf.function as an op of its graph). */
static ts_tensor *concrete_call(ts_concrete *cf, const ts_value *args, int n_args)
{
  const ts_function *f = cf->fn;
  if (!ts__values_check(f->name, args, n_args) || !check_call_args(f, args, n_args))
    return NULL;
  char label[128], want[TS_INFO_STR], got[TS_INFO_STR];
  if (n_args > cf->sig.n || (n_args < cf->sig.n && !bound_from(cf, n_args))) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "%s: this concrete function takes %d argument%s, got %d", f->name, cf->sig.n,
                 cf->sig.n == 1 ? "" : "s", n_args);
    return NULL;
  }
  for (int i = 0; i < n_args; i++) {
    const ts_argsig *a = &cf->sig.args[i];
    const ts_value *v = &args[i];
    ts__arg_label(label, sizeof label, i, f->params, f->n_params);
    if (a->kind == TS_VALUE_TENSOR) {
      if (v->kind != TS_VALUE_TENSOR || !v->tensor) {
        ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                     "%s: expected %s tensor for %s, got a host value", f->name,
                     ts_dtype_name(a->dtype), label);
        return NULL;
      }
      const ts_tensor *t = v->tensor;
      if (t->dtype != a->dtype) {
        ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                     "%s: expected %s tensor for %s, got %s", f->name, ts_dtype_name(a->dtype),
                     label, ts_dtype_name(t->dtype));
        return NULL;
      }
      ts_signature one_traced = { .n = 1, .args = (ts_argsig *)a };
      ts_argsig now = { .kind = TS_VALUE_TENSOR, .dtype = t->dtype, .shape = t->shape };
      ts_signature one_call = { .n = 1, .args = &now };
      /* strict while tracing too: the copy's nodes keep the shapes traced */
      if (!ts__signature_accepts(&one_traced, &one_call)) {
        ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                     "%s: expected %s for %s, got %s", f->name,
                     ts__info_str(want, a->dtype, a->shape), label,
                     ts__info_str(got, t->dtype, t->shape));
        return NULL;
      }
    } else {
      ts_signature one;
      if (!ts__signature_init(&one, v, 1))
        return NULL;
      bool same = ts__argsig_accepts(a, &one.args[0]);
      if (!same)
        ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                     "%s: %s was traced with the host value %s, got %s", f->name, label, a->host,
                     one.args[0].kind == TS_VALUE_TENSOR ? "a tensor" : one.args[0].host);
      ts__signature_clear(&one);
      if (!same)
        return NULL;
    }
  }
  return ts_tracing() ? inline_concrete(cf, args, n_args) : run_concrete(cf, args, n_args);
}

ts_tensor *ts_concrete_call(ts_concrete *cf, const ts_value *args, int n_args)
{
  TS_CHECK_ARG(cf != NULL && n_args >= 0 && (args || n_args == 0), NULL);
  return ts__single_result(cf->fn->name, "ts_concrete_call", "ts_concrete_call_n",
                           concrete_call(cf, args, n_args));
}

int ts_concrete_call_n(ts_concrete *cf, const ts_value *args, int n_args, ts_tensor **out,
                       int max_out, bool *tuple)
{
  TS_CHECK_ARG(cf != NULL && n_args >= 0 && (args || n_args == 0) && out && max_out >= 1, -1);
  return ts__results(cf->fn->name, concrete_call(cf, args, n_args), out, max_out, tuple);
}


/* ---- pretty-printed signatures --------------------------------------------------- */

static void append_tensor_spec(GString *s, ts_dtype dtype, ts_shape shape)
{
  char buf[TS_INFO_STR];
  g_string_append_printf(s, "%s Tensor, shape=%s", ts_dtype_name(dtype), ts__shape_str(buf, shape));
}

char *ts_concrete_pretty_signature(const ts_concrete *cf)
{
  const ts_function *f = cf->fn;
  GString *s = g_string_new(f->name);
  g_string_append_c(s, '(');
  bool any_tensor = false;
  for (int i = 0; i < cf->sig.n; i++) {
    const ts_argsig *a = &cf->sig.args[i];
    if (i)
      g_string_append(s, ", ");
    if (i < f->n_params)
      g_string_append(s, f->params[i]);
    else
      g_string_append_printf(s, "arg%d", i);
    if (a->kind != TS_VALUE_TENSOR && !a->n_leaves)
      g_string_append_printf(s, "=%s", a->host);
    any_tensor |= a->kind == TS_VALUE_TENSOR || a->n_leaves;
  }
  g_string_append(s, ")\n");
  if (any_tensor) {
    g_string_append(s, "  Args:\n");
    for (int i = 0; i < cf->sig.n; i++) {
      const ts_argsig *a = &cf->sig.args[i];
      if (a->kind != TS_VALUE_TENSOR && !a->n_leaves)
        continue;
      if (i < f->n_params)
        g_string_append_printf(s, "    %s: ", f->params[i]);
      else
        g_string_append_printf(s, "    arg%d: ", i);
      if (a->n_leaves) { /* TensorFlow's "xs: [<1>, <2>]", then each <k> */
        g_string_append_printf(s, "%s\n", a->skeleton);
        for (int k = 0; k < a->n_leaves; k++) {
          g_string_append_printf(s, "      <%d>: ", k + 1);
          append_tensor_spec(s, a->leaves[k].dtype, a->leaves[k].shape);
          g_string_append_c(s, '\n');
        }
        continue;
      }
      append_tensor_spec(s, a->dtype, a->shape);
      g_string_append_c(s, '\n');
    }
  }
  g_string_append(s, "  Returns:\n    ");
  if (cf->n_outputs == 0) {
    g_string_append(s, "None");
    return g_string_free(s, FALSE);
  }
  if (!cf->tuple) {
    append_tensor_spec(s, cf->outputs[0].dtype, cf->outputs[0].shape);
    return g_string_free(s, FALSE);
  }
  /* TensorFlow's "(<1>, <2>)" (Python's "(<1>,)" for one), then each <k> */
  g_string_append_c(s, '(');
  for (int k = 0; k < cf->n_outputs; k++)
    g_string_append_printf(s, "%s<%d>", k ? ", " : "", k + 1);
  g_string_append(s, cf->n_outputs == 1 ? ",)" : ")");
  for (int k = 0; k < cf->n_outputs; k++) {
    g_string_append_printf(s, "\n      <%d>: ", k + 1);
    append_tensor_spec(s, cf->outputs[k].dtype, cf->outputs[k].shape);
  }
  return g_string_free(s, FALSE);
}

char *ts_function_pretty_printed_concrete_signatures(const ts_function *f)
{
  GString *s = g_string_new(NULL);
  pthread_mutex_lock((pthread_mutex_t *)&f->lock);
  for (guint i = 0; i < f->concrete->len; i++) {
    char *one = ts_concrete_pretty_signature(f->concrete->pdata[i]);
    if (i)
      g_string_append(s, "\n\n");
    g_string_append(s, one);
    g_free(one);
  }
  pthread_mutex_unlock((pthread_mutex_t *)&f->lock);
  return g_string_free(s, FALSE);
}
