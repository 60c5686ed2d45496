/* record.c — an op as the debugger keeps it: identity, location, call
 * stack and tensors, owned, so a stop or a history entry is plain data
 * that outlives the op, its scope and its module. */
#include "debug-private.h"

static bool is_mutable(const ts_tensor *t)
{
  return t->is_variable || (t->base && t->base->is_variable);
}

ts_tensor *ts__debug_keep(ts_tensor *t, size_t *bytes)
{
  size_t n = t->size > 0 ? (size_t)t->size * ts_dtype_size(t->dtype) : 0;
  *bytes += n;
  if (!is_mutable(t) || !t->data || t->dtype == TS_STRING || t->dtype == TS_VARIANT)
    return ts_tensor_ref(t);
  /* A variable's storage changes in place: keep its value as it is now
   * (one on a device, copied out).  Allocated in the current scope, which
   * drops its reference in time; ours keeps the copy. */
  bool host = !t->backend || t->backend == ts_backend_cpu();
  ts_tensor *copy = host ? ts__tensor_alloc((ts_loc){ 0 }, t->dtype, t->shape)
                         : ts__tensor_on((ts_loc){ 0 }, t, ts_backend_cpu());
  if (!copy) {
    ts_error_clear(); /* out of memory: keep the reference */
    return ts_tensor_ref(t);
  }
  if (host)
    memcpy(copy->data, t->data, n);
  return ts_tensor_ref(copy);
}

int ts__debug_written(const ts_op_def *def, ts_tensor *const *in, int n_in, int n_out,
                      ts_tensor **buf, int max)
{
  if (n_out > 0 || !def || !(def->flags & TS_OPF_VARIABLE))
    return 0;
  int n = 0;
  for (int i = 0; i < n_in && n < max; i++)
    if (in[i] && is_mutable(in[i]))
      buf[n++] = in[i];
  return n;
}

static char *dup_or_null(const char *s)
{
  return s ? g_strdup(s) : NULL;
}

/* The op path of the debuggee's run, outermost first. */
static int path_frames(ts_debug_frame *frames, int max)
{
  const ts_run_state *r = &ts__context()->run;
  int n = 0, end = r->depth < TS_MAX_PATH ? r->depth : TS_MAX_PATH;
  for (int i = r->base; i < end && n < max; i++) {
    const ts_path_entry *e = &r->path[i];
    frames[n++] = (ts_debug_frame){ g_strdup(e->what ? e->what : "?"), dup_or_null(e->loc.file),
                                    e->loc.line };
  }
  return n;
}

char *ts__node_origins(const ts_node *node)
{
  int n = node ? ts_node_n_origins(node) : 0;
  if (n < 2)
    return NULL;
  GString *s = g_string_new(NULL);
  for (int i = 0; i < n; i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", ts_node_name(ts_node_origin(node, i)));
  return g_string_free(s, FALSE);
}

/* The forward node a gradient op's node stands for: the node run's, or
 * (an optimized node, an eager op) its traced twin's. */
static char *gradient_of(const ts_op_event *ev)
{
  const ts_node *forward = ev->node ? ts_node_gradient_of(ev->node) : NULL;
  if (!forward && ev->traced)
    forward = ts_node_gradient_of(ev->traced);
  return forward ? g_strdup(ts_node_name(forward)) : NULL;
}

void ts__debug_op_fill(ts_debug_op *op, const ts_op_event *ev, const ts_debug_frame *cf, int n_cf,
                       size_t *bytes)
{
  const ts_node *node = ev->node ? ev->node : ev->traced;
  *op = (ts_debug_op){
    .run_id = ev->run_id, .seq = ev->seq, .op = ev->op, .op_name = ev->op_name,
    .device = ev->device,
    .file = dup_or_null(ev->loc.file), .func = dup_or_null(ev->loc.func), .line = ev->loc.line,
    .node = node ? g_strdup(ts_node_name(node)) : NULL,
    .path = node ? ts_node_path(node) : NULL,
    .scope = g_strdup(node ? ts_node_scope(node) : ""),
    .origins = ts__node_origins(ev->node),
    .gradient_of = gradient_of(ev),
  };
  ts_debug_frame frames[TS_MAX_PATH + 16];
  int n = path_frames(frames, TS_MAX_PATH);
  /* Graph mode runs no C code, so no path: the graph's function is the frame. */
  const ts_function *fn = ev->node && n == 0 && ev->concrete ? ts_concrete_function(ev->concrete) : NULL;
  if (fn)
    frames[n++] = (ts_debug_frame){ g_strdup(ts_function_name(fn)), NULL, 0 };
  for (int i = 0; i < n_cf && n < (int)G_N_ELEMENTS(frames); i++)
    frames[n++] = (ts_debug_frame){ g_strdup(cf[i].name), dup_or_null(cf[i].file), cf[i].line };
  op->n_frames = op->depth = n;
  op->frames = g_memdup2(frames, sizeof frames[0] * (size_t)(n > 0 ? n : 1));
  op->n_inputs = ev->n_inputs;
  op->inputs = g_new0(ts_tensor *, ev->n_inputs > 0 ? ev->n_inputs : 1);
  for (int i = 0; i < ev->n_inputs; i++)
    op->inputs[i] = ts__debug_keep(ev->inputs[i], bytes);
}

static ts_tensor **ref_all(ts_tensor *const *t, int n)
{
  ts_tensor **out = g_new0(ts_tensor *, n > 0 ? n : 1);
  for (int i = 0; i < n; i++)
    out[i] = ts_tensor_ref(t[i]);
  return out;
}

void ts__debug_op_copy(ts_debug_op *dst, const ts_debug_op *src)
{
  *dst = *src;
  dst->file = dup_or_null(src->file);
  dst->func = dup_or_null(src->func);
  dst->node = dup_or_null(src->node);
  dst->path = dup_or_null(src->path);
  dst->scope = dup_or_null(src->scope);
  dst->origins = dup_or_null(src->origins);
  dst->gradient_of = dup_or_null(src->gradient_of);
  dst->frames = g_new0(ts_debug_frame, src->n_frames > 0 ? src->n_frames : 1);
  for (int i = 0; i < src->n_frames; i++)
    dst->frames[i] = (ts_debug_frame){ g_strdup(src->frames[i].name),
                                       dup_or_null(src->frames[i].file), src->frames[i].line };
  dst->inputs = ref_all(src->inputs, src->n_inputs);
  dst->outputs = ref_all(src->outputs, src->n_outputs);
}

void ts_debug_op_clear(ts_debug_op *op)
{
  if (!op)
    return;
  g_free(op->file);
  g_free(op->func);
  g_free(op->node);
  g_free(op->path);
  g_free(op->scope);
  g_free(op->origins);
  g_free(op->gradient_of);
  for (int i = 0; i < op->n_frames; i++) {
    g_free(op->frames[i].name);
    g_free(op->frames[i].file);
  }
  g_free(op->frames);
  for (int i = 0; i < op->n_inputs; i++)
    ts_tensor_unref(op->inputs[i]);
  g_free(op->inputs);
  for (int i = 0; i < op->n_outputs; i++)
    ts_tensor_unref(op->outputs[i]);
  g_free(op->outputs);
  *op = (ts_debug_op){ 0 };
}

void ts_debug_stop_clear(ts_debug_stop *stop)
{
  if (!stop)
    return;
  ts_debug_op_clear(&stop->op);
  g_free(stop->error);
  *stop = (ts_debug_stop){ 0 };
}

static const char *const REASON_NAMES[TS_DEBUG_REASON_COUNT] = {
  [TS_DEBUG_STEP] = "step",     [TS_DEBUG_BREAKPOINT] = "breakpoint", [TS_DEBUG_NAN] = "nan",
  [TS_DEBUG_INF] = "inf",       [TS_DEBUG_CONDITION] = "condition",   [TS_DEBUG_PAUSE] = "pause",
  [TS_DEBUG_FINISHED] = "finished", [TS_DEBUG_ERROR] = "error",
};

const char *ts_debug_reason_name(ts_debug_reason reason)
{
  return (unsigned)reason < TS_DEBUG_REASON_COUNT ? REASON_NAMES[reason] : "?";
}
