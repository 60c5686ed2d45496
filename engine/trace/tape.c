/* trace/tape.c — gradient tapes (tf.GradientTape): an op handler that
 * records the ops on watched values as they run (eagerly) or are traced,
 * and the reverse walk that turns the record into gradients through each
 * op row's ts_grad_fn.  The gradient's own ops go through dispatch like
 * any other, so eagerly they run and while tracing they become nodes,
 * under a "gradients" name scope and marked with the forward node they
 * are the gradient of. */
#include "trace-private.h"

/* One recorded op: what its gradient needs (references held). */
typedef struct entry {
  ts_loc loc;
  const ts_op_def *def;
  int n_in, n_out;
  ts_tensor **in, **out;
  ts_attr *attrs; /* strings copied */
} entry;

struct ts_tape {
  ts_op_handler handler;
  bool persistent;
  bool walking;           /* taking a gradient: its own ops are not recorded here (other
                           * tapes record them: gradients of gradients) */
  bool watch_variables;
  bool recording;
  bool used;              /* a gradient was taken */
  GHashTable *tracked;    /* ts_tensor * (a reference) -> itself: watched or made by a record */
  GPtrArray *entries;     /* entry *, in the order the ops ran */
  /* While tracing, several tensor objects may stand for one node output:
   * the first one met is its key (ts_node * -> GPtrArray of references by
   * output index). */
  GHashTable *ports;
};

static void ports_free(gpointer p)
{
  g_ptr_array_free(p, TRUE);
}

static void unref_maybe(gpointer t)
{
  if (t)
    ts_tensor_unref(t);
}

/* The tensor that stands for t's value on this tape. */
static ts_tensor *canon(ts_tape *tape, ts_tensor *t)
{
  if (!t->node)
    return t;
  GPtrArray *outs = g_hash_table_lookup(tape->ports, t->node);
  if (!outs) {
    outs = g_ptr_array_new_with_free_func(unref_maybe);
    g_hash_table_insert(tape->ports, t->node, outs);
  }
  if ((guint)t->node_output >= outs->len)
    g_ptr_array_set_size(outs, t->node_output + 1);
  if (!outs->pdata[t->node_output])
    outs->pdata[t->node_output] = ts_tensor_ref(t);
  return outs->pdata[t->node_output];
}

static bool differentiable(const ts_tensor *t)
{
  return t->dtype == TS_F32 || t->dtype == TS_F64;
}

/* A TensorArray carries its items' gradients: tracked, so that a read of
 * a recorded write reaches the list ops (an error naming them while they
 * have no gradient, rather than a gradient silently lost). */
static bool carries_gradient(const ts_tensor *t)
{
  return differentiable(t) || t->dtype == TS_VARIANT;
}

static void track(ts_tape *tape, ts_tensor *t)
{
  if (!g_hash_table_contains(tape->tracked, t))
    g_hash_table_add(tape->tracked, ts_tensor_ref(t));
}

static void entry_free(gpointer p)
{
  entry *e = p;
  for (int i = 0; i < e->n_in; i++)
    ts_tensor_unref(e->in[i]);
  for (int i = 0; i < e->n_out; i++)
    ts_tensor_unref(e->out[i]);
  for (int i = 0; i < e->def->n_attrs; i++)
    if (e->attrs[i].type == TS_ATTR_STRING)
      g_free((char *)e->attrs[i].s);
  g_free(e->in);
  g_free(e->out);
  g_free(e->attrs);
  g_free(e);
}

static void record(ts_tape *tape, const ts_op_call *call, ts_tensor *const *out, int n_out)
{
  const ts_op_def *def = call->def;
  if (def->flags & TS_OPF_NOT_DIFFERENTIABLE)
    return;
  bool any = false;
  for (int i = 0; i < call->n_in; i++) {
    ts_tensor *t = canon(tape, call->in[i]);
    if (g_hash_table_contains(tape->tracked, t)) {
      any = true;
    } else if (t->is_variable && tape->watch_variables && differentiable(t)) {
      track(tape, t);
      any = true;
    }
  }
  if (!any)
    return;
  entry *e = g_new0(entry, 1);
  e->loc = call->loc;
  e->def = def;
  e->n_in = call->n_in;
  e->n_out = n_out;
  e->in = g_new(ts_tensor *, call->n_in ? call->n_in : 1);
  e->out = g_new(ts_tensor *, n_out ? n_out : 1);
  for (int i = 0; i < call->n_in; i++)
    e->in[i] = ts_tensor_ref(canon(tape, call->in[i]));
  for (int i = 0; i < n_out; i++) {
    e->out[i] = ts_tensor_ref(canon(tape, out[i]));
    if (carries_gradient(e->out[i]))
      track(tape, e->out[i]);
  }
  e->attrs = g_new0(ts_attr, def->n_attrs ? def->n_attrs : 1);
  for (int i = 0; i < def->n_attrs; i++) {
    e->attrs[i] = call->attrs[i];
    if (e->attrs[i].type == TS_ATTR_STRING)
      e->attrs[i].s = g_strdup(call->attrs[i].s);
  }
  g_ptr_array_add(tape->entries, e);
}

static int tape_run(ts_op_handler *self, const ts_op_call *call, ts_tensor **out)
{
  ts_tape *tape = self->data;
  int n = ts__handler_next(self, call, out);
  if (n >= 0 && !tape->walking && !ts__context()->tape_pause)
    record(tape, call, out, n);
  return n;
}

void ts__tape_record(const ts_op_call *call, ts_tensor *const *out, int n_out)
{
  ts_context *c = ts__context();
  for (ts_op_handler *h = c->handlers; h && h->run == tape_run; h = h->below) {
    ts_tape *tape = h->data;
    if (!tape->walking && !c->tape_pause)
      record(tape, call, out, n_out);
  }
}

bool ts__tape_recording_here(void)
{
  ts_op_handler *top = ts__handler_top();
  return top && top->run == tape_run;
}

void ts__tape_record_node(ts_node *node, const ts_source *sources, int n_sources,
                          ts_tensor *const *out, int n_out)
{
  if (!ts__tape_recording_here())
    return; /* no tape records here */
  ts_tensor **in = g_new(ts_tensor *, n_sources + 1);
  for (int i = 0; i < n_sources; i++)
    in[i] = sources[i].node ? ts__tensor_symbolic(sources[i].node, sources[i].index)
                            : sources[i].value;
  ts_op_call call = { node->loc, ts__op_def(node->op), in, n_sources, node->attrs };
  ts__tape_record(&call, out, n_out);
  g_free(in);
}

ts_tape *ts_tape_new(bool persistent)
{
  ts_tape *tape = g_new0(ts_tape, 1);
  tape->persistent = persistent;
  tape->watch_variables = true;
  tape->recording = true;
  tape->tracked = g_hash_table_new_full(g_direct_hash, g_direct_equal,
                                        (GDestroyNotify)ts_tensor_unref, NULL);
  tape->entries = g_ptr_array_new_with_free_func(entry_free);
  tape->ports = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, ports_free);
  ts__tape_control_init();
  ts__tape_rnn_init();
  tape->handler = (ts_op_handler){ .name = "tape", .run = tape_run, .data = tape };
  ts__handler_push(&tape->handler);
  return tape;
}

bool ts_tape_watch(ts_tape *tape, ts_tensor *t)
{
  TS_CHECK_ARG(tape != NULL, false);
  TS_CHECK_ARG(t != NULL, false);
  if (!differentiable(t)) {
    char b[TS_INFO_STR];
    ts_error_set(TS_ERR_DTYPE, (ts_loc){ 0 }, NULL,
                 "ts_tape_watch: only float32 and float64 tensors have gradients, got %s",
                 ts__info_str(b, t->dtype, t->shape));
    return false;
  }
  track(tape, canon(tape, t));
  return true;
}

void ts_tape_set_watch_variables(ts_tape *tape, bool watch)
{
  TS_CHECK_ARG(tape != NULL, );
  tape->watch_variables = watch;
}

bool ts_tape_stop(ts_tape *tape)
{
  TS_CHECK_ARG(tape != NULL, false);
  if (!tape->recording)
    return true;
  if (ts__handler_top() != &tape->handler) {
    ts_op_handler *top = ts__handler_top();
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "ts_tape_stop: the tape is not the innermost op handler (%s is): stop or "
                 "free tapes in the reverse order of their making, and inside the block or "
                 "function that made them",
                 top ? top->name : "none");
    return false;
  }
  ts__handler_pop(&tape->handler);
  tape->recording = false;
  return true;
}

void ts_tape_free(ts_tape *tape)
{
  if (!tape)
    return;
  if (tape->recording) {
    /* Taken out of the stack wherever it is (a block left early may have
     * left others above it), so nothing calls it after free. */
    ts_context *c = ts__context();
    for (ts_op_handler **p = &c->handlers; *p; p = &(*p)->below)
      if (*p == &tape->handler) {
        *p = tape->handler.below;
        break;
      }
  }
  g_ptr_array_free(tape->entries, TRUE);
  g_hash_table_destroy(tape->tracked);
  g_hash_table_destroy(tape->ports);
  g_free(tape);
}

ts_tensor *ts_stop_gradient_at(ts_loc loc, ts_tensor *x)
{
  ts_context *c = ts__context();
  c->tape_pause++;
  ts_tensor *y = ts_identity_at(loc, x);
  c->tape_pause--;
  return y;
}

/* ---- the reverse walk ----------------------------------------------------------------- */

typedef struct walk {
  ts_loc loc;
  ts_tape *tape;
  GHashTable *grads; /* ts_tensor * -> its gradient so far (in the current scope) */
} walk;

/* Adds g to t's gradient. */
static bool accumulate(walk *w, ts_tensor *t, ts_tensor *g)
{
  ts_tensor *old = g_hash_table_lookup(w->grads, t);
  if (old && !(g = ts_add_at(w->loc, old, g)))
    return false;
  g_hash_table_insert(w->grads, t, g);
  return true;
}

/* A gradient must match its input (a wrong one is the row's bug: say which). */
static bool check_grad(const entry *e, int i, const ts_tensor *g)
{
  const ts_tensor *x = e->in[i];
  bool ok = g->dtype == x->dtype && g->shape.rank == x->shape.rank;
  for (int d = 0; ok && d < x->shape.rank; d++)
    ok = x->shape.dim[d] < 0 || g->shape.dim[d] < 0 || x->shape.dim[d] == g->shape.dim[d];
  if (!ok) {
    char a[TS_INFO_STR], b[TS_INFO_STR];
    ts_error_set(TS_ERR_INTERNAL, e->loc, e->def->name,
                 "its gradient for input %d is %s, the input is %s", i,
                 ts__info_str(a, g->dtype, g->shape), ts__info_str(b, x->dtype, x->shape));
  }
  return ok;
}

static bool backprop_entry(walk *w, const entry *e)
{
  ts_tensor *grad_out[TS_MAX_OUTPUTS];
  bool any = false;
  for (int j = 0; j < e->n_out; j++)
    any |= (grad_out[j] = g_hash_table_lookup(w->grads, e->out[j])) != NULL;
  if (!any)
    return true;
  if (!e->def->grad) {
    ts_error_set(TS_ERR_UNIMPLEMENTED, e->loc, e->def->name,
                 "no gradient is defined for %s (the op at %s:%d is on the path from the "
                 "target to a source); ts_stop_gradient its input if none should flow",
                 e->def->name, e->loc.file ? e->loc.file : "?", e->loc.line);
    return false;
  }
  for (int j = 0; j < e->n_out; j++)
    if (!grad_out[j] && !(grad_out[j] = ts_zeros_like_at(e->loc, e->out[j])))
      return false;
  ts_context *c = ts__context();
  const ts_node *outer = c->grad_of;
  c->grad_of = e->n_out > 0 ? e->out[0]->node : NULL;
  ts_tensor *grad_in[TS_MAX_INPUTS] = { NULL };
  ts_op_call call = { e->loc, e->def, e->in, e->n_in, e->attrs };
  bool ok = e->def->grad(&call, e->out, grad_out, grad_in);
  for (int i = 0; ok && i < e->n_in; i++)
    if (grad_in[i] && g_hash_table_contains(w->tape->tracked, e->in[i]))
      ok = check_grad(e, i, grad_in[i]) && accumulate(w, e->in[i], grad_in[i]);
  c->grad_of = outer;
  if (!ok && !ts_failed())
    ts_error_set(TS_ERR_INTERNAL, e->loc, e->def->name, "its gradient failed");
  return ok;
}

/* The entries on a path from a source: the others need no gradient (and
 * may have none). */
static bool *from_sources(ts_tape *tape, ts_tensor *const *sources, int n)
{
  GHashTable *reached = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (int i = 0; i < n; i++)
    g_hash_table_add(reached, sources[i]);
  bool *on = g_new0(bool, tape->entries->len + 1);
  for (guint k = 0; k < tape->entries->len; k++) {
    const entry *e = tape->entries->pdata[k];
    for (int i = 0; i < e->n_in && !on[k]; i++)
      on[k] = g_hash_table_contains(reached, e->in[i]);
    for (int j = 0; on[k] && j < e->n_out; j++)
      g_hash_table_add(reached, e->out[j]);
  }
  g_hash_table_destroy(reached);
  return on;
}

/* Values an ended iteration of an eager loop made are refused as op
 * inputs (ts_tensor.carried_loop); the record keeps them on purpose, so
 * the walk lifts their marks and puts them back after. */
typedef struct carried {
  ts_tensor *t;
  ts_loc loop;
  const char *kind;
} carried;

static GArray *lift_carried(ts_tape *tape)
{
  GArray *saved = g_array_new(FALSE, FALSE, sizeof(carried));
  for (guint k = 0; k < tape->entries->len; k++) {
    entry *e = tape->entries->pdata[k];
    for (int i = 0; i < e->n_in + e->n_out; i++) {
      ts_tensor *t = i < e->n_in ? e->in[i] : e->out[i - e->n_in];
      if (!t->carried_loop.file)
        continue;
      carried m = { t, t->carried_loop, t->carried_kind };
      g_array_append_val(saved, m);
      t->carried_loop = (ts_loc){ 0 };
    }
  }
  return saved;
}

static void restore_carried(GArray *saved)
{
  for (guint k = 0; k < saved->len; k++) {
    carried *m = &g_array_index(saved, carried, k);
    m->t->carried_loop = m->loop;
    m->t->carried_kind = m->kind;
  }
  g_array_free(saved, TRUE);
}

static bool walk_back(walk *w, ts_tensor *target, ts_tensor *const *sources, int n)
{
  ts_tape *tape = w->tape;
  if (!g_hash_table_contains(tape->tracked, target))
    return true; /* nothing recorded leads to it: every source is unconnected */
  ts_tensor *seed = ts_ones_like_at(w->loc, target);
  if (!seed)
    return false;
  g_hash_table_insert(w->grads, target, seed);
  bool *on = from_sources(tape, sources, n);
  bool ok = true;
  for (guint k = tape->entries->len; ok && k-- > 0;)
    if (on[k])
      ok = backprop_entry(w, tape->entries->pdata[k]);
  g_free(on);
  return ok;
}

bool ts_tape_gradient_at(ts_loc loc, ts_tape *tape, ts_tensor *target, ts_tensor *const *sources,
                         int n, ts_tensor **grads, ts_unconnected unconnected)
{
  TS_CHECK_ARG(tape != NULL, false);
  TS_CHECK_ARG(n >= 0, false);
  TS_CHECK_ARG(n == 0 || (sources != NULL && grads != NULL), false);
  TS_CHECK_ARG(unconnected == TS_UNCONNECTED_NONE || unconnected == TS_UNCONNECTED_ZERO, false);
  for (int i = 0; i < n; i++)
    grads[i] = NULL;
  if (!target) {
    if (!ts_failed())
      ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL, "ts_tape_gradient: the target is NULL");
    return false;
  }
  for (int i = 0; i < n; i++)
    if (!sources[i]) {
      if (!ts_failed())
        ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL, "ts_tape_gradient: source %d is NULL", i);
      return false;
    }
  if (!differentiable(target)) {
    char b[TS_INFO_STR];
    ts_error_set(TS_ERR_DTYPE, loc, NULL,
                 "ts_tape_gradient: the target must be a float32 or float64 tensor, got %s",
                 ts__info_str(b, target->dtype, target->shape));
    return false;
  }
  if (tape->used && !tape->persistent) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL,
                 "ts_tape_gradient: this tape is not persistent and has given its gradient "
                 "already; make it with ts_tape_new(true) to take several");
    return false;
  }
  tape->used = true;

  tape->walking = true; /* its gradient's ops are not recorded here */
  bool tracing = ts__trace_frame() != NULL;
  if (tracing)
    ts_name_scope_begin("gradients");
  GArray *saved = lift_carried(tape);
  walk w = { loc, tape, g_hash_table_new(g_direct_hash, g_direct_equal) };
  ts_tensor **keys = g_new(ts_tensor *, n + 1);
  for (int i = 0; i < n; i++)
    keys[i] = canon(tape, sources[i]);
  bool ok = walk_back(&w, canon(tape, target), keys, n);
  for (int i = 0; ok && i < n; i++) {
    ts_tensor *g = g_hash_table_lookup(w.grads, keys[i]);
    if (!g && unconnected == TS_UNCONNECTED_ZERO)
      ok = (g = ts_zeros_like_at(loc, sources[i])) != NULL;
    grads[i] = g;
  }
  g_free(keys);
  g_hash_table_destroy(w.grads);
  restore_carried(saved);
  if (tracing)
    ts_name_scope_end();
  tape->walking = false;
  if (!ok)
    for (int i = 0; i < n; i++)
      grads[i] = NULL;
  return ok;
}
