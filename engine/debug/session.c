/* session.c — a debug session: the debuggee thread stops before ops, the
 * controller thread waits for stops and resumes, pauses or cancels.
 *
 * Where the pause happens: in a blocking OP_BEGIN listener filtered to the
 * debuggee thread (listener.c runs callbacks outside its locks, so a
 * listener may block), and in OP_END for conditions on outputs.  Not an op
 * handler: handlers see only eager ops (graph nodes run straight through
 * the executor) and come before the engine numbers the op and finds its
 * traced twin, while op events carry the run, seq, node or twin, inputs
 * and outputs in both modes.  Cancelling uses the engine's own cancel
 * path: attach points the thread's cancel flag at the session's, so the
 * next op fails with TS_ERR_CANCELLED (the op a stop waits before still
 * runs, with the error already pending, so the call fails either way).
 *
 * A failing op (its shapes refused, or its kernel) stops the call too,
 * through the engine's failure hook: once per error, at the innermost op
 * (an If failing after the op in its branch failed is not another stop).
 *
 * Locking: one mutex guards everything the two sides share; the debuggee
 * waits on the condition while stopped, the controller while it waits for
 * a stop.  The controller never runs code on the debuggee thread. */
#include "debug-private.h"

#define DEFAULT_HISTORY_OPS 4096
#define DEFAULT_HISTORY_BYTES ((size_t)256 << 20)

/* An op between its OP_BEGIN and OP_END (If/While ops hold their
 * subgraphs' ops between theirs). */
typedef struct open_op {
  ts_debug_op op;
  size_t bytes;
  GArray *checks;   /* int: ids of breakpoints whose condition OP_END tests */
} open_op;

/* Graph mode: an If/While op running, a frame for the ops inside it. */
typedef struct cf_entry {
  char *name;
  uint64_t parent_seq; /* 0 at the top */
} cf_entry;

struct ts_debug_session {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int refs;                 /* the controller's, and the attached debuggee's */
  ts_debug_options options;
  GPtrArray *breaks;        /* ts_breakpoint * */
  int next_break;

  /* the debuggee */
  bool attached;
  pthread_t thread;
  int listener;
  const int *outer_cancel;  /* the thread's cancel flag before attach */
  ts_op_failure_hook failure_hook; /* the thread's while attached */
  ts_op_failure_hook *outer_hook;
  bool error_stopped;       /* stopped at the failed op; no op began since */
  int cancel;               /* atomic: the thread's cancel flag while attached */
  bool first;               /* no op seen yet */
  GArray *open;             /* open_op, innermost last (debuggee only) */
  GHashTable *cf;           /* seq -> cf_entry *, graph mode (debuggee only) */

  /* control */
  ts_debug_action action;
  int target_depth;         /* step over/out: the depth of the op stepped from */
  int pause;                /* atomic */
  int gone;                 /* atomic: the controller left */
  bool stopped;             /* the debuggee waits for a resume */
  uint64_t resumes;

  /* stops */
  uint64_t posted, delivered;
  ts_debug_stop stop;       /* the latest posted */

  ts_debug_history history;
};

static void session_unref(ts_debug_session *s)
{
  pthread_mutex_lock(&s->lock);
  bool last = --s->refs == 0;
  pthread_mutex_unlock(&s->lock);
  if (!last)
    return;
  for (guint i = 0; i < s->breaks->len; i++) {
    ts__breakpoint_clear(g_ptr_array_index(s->breaks, i));
    g_free(g_ptr_array_index(s->breaks, i));
  }
  g_ptr_array_unref(s->breaks);
  g_array_unref(s->open);
  g_hash_table_unref(s->cf);
  ts_debug_stop_clear(&s->stop);
  ts__history_clear(&s->history);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->cond);
  g_free(s);
}

static void cf_entry_free(gpointer p)
{
  cf_entry *e = p;
  g_free(e->name);
  g_free(e);
}

ts_debug_session *ts_debug_new(const ts_debug_options *options)
{
  ts_debug_session *s = g_new0(ts_debug_session, 1);
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cond, NULL);
  s->refs = 1;
  if (options)
    s->options = *options;
  if (s->options.history_ops <= 0)
    s->options.history_ops = DEFAULT_HISTORY_OPS;
  if (s->options.history_bytes == 0)
    s->options.history_bytes = DEFAULT_HISTORY_BYTES;
  s->breaks = g_ptr_array_new();
  s->next_break = 1;
  s->open = g_array_new(FALSE, TRUE, sizeof(open_op));
  s->cf = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, cf_entry_free);
  ts__history_init(&s->history, s->options.history_ops, s->options.history_bytes);
  return s;
}

void ts_debug_free(ts_debug_session *s)
{
  if (!s)
    return;
  pthread_mutex_lock(&s->lock);
  __atomic_store_n(&s->gone, 1, __ATOMIC_SEQ_CST);
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->lock);
  session_unref(s);
}

/* ---- the debuggee side ----------------------------------------------------------- */

/* Posts a stop at op and waits (lock held) until the controller resumes,
 * cancels or leaves.  The controller gets its own copy of op. */
static void stop_and_wait(ts_debug_session *s, const ts_debug_op *op, ts_debug_reason reason,
                          int breakpoint, bool after, const char *error)
{
  __atomic_store_n(&s->pause, 0, __ATOMIC_RELAXED); /* this stop answers a pause too */
  ts_debug_stop_clear(&s->stop);
  s->stop.reason = reason;
  s->stop.breakpoint = breakpoint;
  s->stop.after = after;
  s->stop.error = g_strdup(error);
  ts__debug_op_copy(&s->stop.op, op);
  s->posted++;
  s->stopped = true;
  s->target_depth = op->depth;
  pthread_cond_broadcast(&s->cond);
  uint64_t resumes = s->resumes;
  while (s->resumes == resumes && !__atomic_load_n(&s->gone, __ATOMIC_SEQ_CST) &&
         !__atomic_load_n(&s->cancel, __ATOMIC_SEQ_CST))
    pthread_cond_wait(&s->cond, &s->lock);
  s->stopped = false;
}

/* Cancelled (by the session or by the thread's own flag from before
 * attach): the call fails with TS_ERR_CANCELLED from here on. */
static bool cancelled(ts_debug_session *s, const ts_op_event *ev)
{
  if (s->outer_cancel && __atomic_load_n(s->outer_cancel, __ATOMIC_RELAXED))
    __atomic_store_n(&s->cancel, 1, __ATOMIC_SEQ_CST);
  if (!__atomic_load_n(&s->cancel, __ATOMIC_SEQ_CST))
    return false;
  ts__op_fail(ev->loc, ts__op_def(ev->op), TS_ERR_CANCELLED, "cancelled by the debugger");
  return true;
}

/* Graph mode: the If/While nodes around ev's op, outermost first. */
static int graph_frames(ts_debug_session *s, const ts_op_event *ev, ts_debug_frame *out, int max)
{
  int n = 0;
  for (uint64_t seq = ev->parent ? ev->parent_seq : 0; seq && n < max;) {
    cf_entry *e = g_hash_table_lookup(s->cf, &seq);
    if (!e)
      break;
    out[n++] = (ts_debug_frame){ e->name, NULL, 0 };
    seq = e->parent_seq;
  }
  for (int i = 0; i < n / 2; i++) { /* innermost was found first */
    ts_debug_frame t = out[i];
    out[i] = out[n - 1 - i];
    out[n - 1 - i] = t;
  }
  return n;
}

static void on_begin(ts_debug_session *s, const ts_op_event *ev)
{
  if (ev->node && (ts_op_traits(ev->op) & TS_OP_TRAIT_CONTROL_FLOW)) {
    cf_entry *e = g_new(cf_entry, 1);
    e->name = g_strdup(ts_node_name(ev->node));
    e->parent_seq = ev->parent ? ev->parent_seq : 0;
    g_hash_table_replace(s->cf, g_memdup2(&ev->seq, sizeof ev->seq), e);
  }
  s->error_stopped = false;
  ts_debug_frame cf[16];
  int n_cf = graph_frames(s, ev, cf, G_N_ELEMENTS(cf));
  open_op o = { .checks = g_array_new(FALSE, FALSE, sizeof(int)) };
  ts__debug_op_fill(&o.op, ev, cf, n_cf, &o.bytes);

  pthread_mutex_lock(&s->lock);
  int reason = -1, id = 0;
  if (__atomic_load_n(&s->pause, __ATOMIC_RELAXED))
    reason = TS_DEBUG_PAUSE;
  else if ((s->first && s->options.start == TS_DEBUG_START_STOPPED) ||
           s->action == TS_DEBUG_STEP_INTO ||
           (s->action == TS_DEBUG_STEP_OVER && o.op.depth <= s->target_depth) ||
           (s->action == TS_DEBUG_STEP_OUT && o.op.depth < s->target_depth))
    reason = TS_DEBUG_STEP;
  s->first = false;
  for (guint i = 0; i < s->breaks->len; i++) {
    const ts_breakpoint *bp = g_ptr_array_index(s->breaks, i);
    if (!ts__breakpoint_matches(bp, &o.op))
      continue;
    if (bp->cond != TS_BP_ALWAYS)
      g_array_append_val(o.checks, bp->id);
    else if (reason < 0 || reason == TS_DEBUG_STEP) {
      reason = TS_DEBUG_BREAKPOINT;
      id = bp->id;
    }
  }
  if (!cancelled(s, ev) && reason >= 0) {
    stop_and_wait(s, &o.op, (ts_debug_reason)reason, id, false, NULL);
    cancelled(s, ev); /* Stop while stopped */
  }
  pthread_mutex_unlock(&s->lock);
  g_array_append_val(s->open, o);
}

/* The breakpoint with this id (lock held); NULL if it was removed. */
static ts_breakpoint *find_break(ts_debug_session *s, int id)
{
  for (guint i = 0; i < s->breaks->len; i++)
    if (((ts_breakpoint *)g_ptr_array_index(s->breaks, i))->id == id)
      return g_ptr_array_index(s->breaks, i);
  return NULL;
}

static void on_end(ts_debug_session *s, const ts_op_event *ev)
{
  if (s->open->len == 0)
    return; /* attached in the middle of an op */
  open_op o = g_array_index(s->open, open_op, s->open->len - 1);
  g_array_set_size(s->open, s->open->len - 1);
  g_hash_table_remove(s->cf, &ev->seq);
  /* what the op made: its outputs, or the variables it wrote in place */
  ts_tensor *written[TS_MAX_INPUTS];
  int n_written = ts__debug_written(ts__op_def(ev->op), ev->inputs, ev->n_inputs, ev->n_outputs,
                                    written, TS_MAX_INPUTS);
  ts_tensor *const *made = n_written ? written : ev->outputs;
  int n_made = n_written ? n_written : ev->n_outputs;
  o.op.n_outputs = n_made;
  o.op.outputs = g_new0(ts_tensor *, n_made > 0 ? n_made : 1);
  for (int i = 0; i < n_made; i++)
    o.op.outputs[i] = ts__debug_keep(made[i], &o.bytes);

  pthread_mutex_lock(&s->lock);
  bool stopped = false; /* one stop per op */
  for (guint i = 0; i < o.checks->len && !stopped; i++) {
    const ts_breakpoint *bp = find_break(s, g_array_index(o.checks, int, i));
    ts_debug_reason reason;
    if (bp && ts__breakpoint_holds(bp, made, n_made, &reason) && !cancelled(s, ev)) {
      stop_and_wait(s, &o.op, reason, bp->id, true, NULL);
      cancelled(s, ev);
      stopped = true;
    }
  }
  ts__history_push(&s->history, &o.op, o.bytes);
  pthread_mutex_unlock(&s->lock);
  g_array_unref(o.checks);
}

/* An op failed (its error pending): stop at it, its inputs as they were,
 * unless the call was cancelled (that is the error) or this error stopped
 * already at an op inside this one. */
static void on_failed(ts_op_failure_hook *hook, const ts_op_event *ev)
{
  ts_debug_session *s = (ts_debug_session *)((char *)hook - offsetof(ts_debug_session, failure_hook));
  const ts_error *e = ts_error_peek();
  if (s->error_stopped || !e || e->code == TS_ERR_CANCELLED || __atomic_load_n(&s->cancel, __ATOMIC_SEQ_CST))
    return;
  s->error_stopped = true;
  ts_debug_frame cf[16];
  int n_cf = graph_frames(s, ev, cf, G_N_ELEMENTS(cf));
  ts_debug_op op;
  size_t bytes = 0;
  ts__debug_op_fill(&op, ev, cf, n_cf, &bytes);
  pthread_mutex_lock(&s->lock);
  stop_and_wait(s, &op, TS_DEBUG_ERROR, 0, false, e->message);
  pthread_mutex_unlock(&s->lock);
  ts_debug_op_clear(&op);
}

static void on_event(const ts_event *ev, void *data)
{
  ts_debug_session *s = data;
  if (!pthread_equal(pthread_self(), s->thread) || __atomic_load_n(&s->gone, __ATOMIC_SEQ_CST))
    return;
  if (ev->kind == TS_EVENT_OP_BEGIN)
    on_begin(s, &ev->op);
  else
    on_end(s, &ev->op);
}

bool ts_debug_attach(ts_debug_session *s)
{
  TS_CHECK_ARG(s != NULL, false);
  pthread_mutex_lock(&s->lock);
  bool busy = s->attached;
  if (!busy) {
    s->attached = true;
    s->refs++;
    s->thread = pthread_self();
    s->first = true;
    s->action = TS_DEBUG_CONTINUE;
  }
  pthread_mutex_unlock(&s->lock);
  if (busy) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "ts_debug_attach: the session debugs another call already");
    return false;
  }
  ts_context *c = ts__context();
  s->outer_cancel = c->cancel_flag;
  c->cancel_flag = &s->cancel;
  s->failure_hook.op_failed = on_failed;
  s->outer_hook = c->failure_hook;
  c->failure_hook = &s->failure_hook;
  s->error_stopped = false;
  c->serial++; /* it pauses this thread before ops: every op here, whole */
  s->listener = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_BEGIN) | TS_EVENT_MASK(TS_EVENT_OP_END),
                                on_event, s);
  return true;
}

void ts_debug_detach(ts_debug_session *s)
{
  g_return_if_fail(s != NULL && s->attached && pthread_equal(pthread_self(), s->thread));
  ts_listener_remove(s->listener);
  ts__context()->cancel_flag = s->outer_cancel;
  ts__context()->failure_hook = s->outer_hook;
  ts__context()->serial--;
  for (guint i = 0; i < s->open->len; i++) { /* left open by an error */
    open_op *o = &g_array_index(s->open, open_op, i);
    ts_debug_op_clear(&o->op);
    g_array_unref(o->checks);
  }
  g_array_set_size(s->open, 0);
  g_hash_table_remove_all(s->cf);
  const ts_error *error = ts_error_peek();
  pthread_mutex_lock(&s->lock);
  ts_debug_stop_clear(&s->stop);
  s->stop.reason = TS_DEBUG_FINISHED;
  s->stop.error = error ? g_strdup(error->message) : NULL;
  s->posted++;
  s->attached = false;
  __atomic_store_n(&s->cancel, 0, __ATOMIC_SEQ_CST); /* a cancel ends one call */
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->lock);
  session_unref(s);
}

ts_tensor *ts_debug_call(ts_debug_session *s, ts_function *fn, const ts_value *args, int n_args)
{
  TS_CHECK_ARG(s != NULL && fn != NULL, NULL);
  if (!ts_debug_attach(s))
    return NULL;
  ts_tensor *out = ts_function_call(fn, args, n_args);
  if (ts_failed())
    out = NULL; /* cancelled at the last op: the error stands */
  ts_debug_detach(s);
  return out;
}

int ts_debug_call_n(ts_debug_session *s, ts_function *fn, const ts_value *args, int n_args,
                    ts_tensor **out, int max_out, bool *tuple)
{
  TS_CHECK_ARG(s != NULL && fn != NULL && out != NULL && max_out >= 1, -1);
  if (!ts_debug_attach(s))
    return -1;
  int n = ts_function_call_n(fn, args, n_args, out, max_out, tuple);
  if (ts_failed())
    n = -1; /* cancelled at the last op: the error stands */
  ts_debug_detach(s);
  return n;
}

/* ---- the controller side --------------------------------------------------------- */

bool ts_debug_wait(ts_debug_session *s, int timeout_ms, ts_debug_stop *out)
{
  TS_CHECK_ARG(s != NULL && out != NULL, false);
  *out = (ts_debug_stop){ 0 };
  gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
  pthread_mutex_lock(&s->lock);
  while (s->posted == s->delivered) {
    if (timeout_ms < 0) {
      pthread_cond_wait(&s->cond, &s->lock);
      continue;
    }
    gint64 left = deadline - g_get_monotonic_time();
    if (left <= 0)
      break;
    /* pthread's clock is the realtime one unless set otherwise: wait in slices */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    gint64 ns = (gint64)ts.tv_nsec + (left < 100000 ? left : 100000) * 1000;
    ts.tv_sec += ns / 1000000000;
    ts.tv_nsec = ns % 1000000000;
    pthread_cond_timedwait(&s->cond, &s->lock, &ts);
  }
  bool got = s->posted != s->delivered;
  if (got) {
    out->reason = s->stop.reason;
    out->breakpoint = s->stop.breakpoint;
    out->after = s->stop.after;
    out->error = s->stop.error ? g_strdup(s->stop.error) : NULL;
    if (s->stop.reason != TS_DEBUG_FINISHED)
      ts__debug_op_copy(&out->op, &s->stop.op);
    s->delivered = s->posted;
  }
  pthread_mutex_unlock(&s->lock);
  return got;
}

bool ts_debug_resume(ts_debug_session *s, ts_debug_action action)
{
  TS_CHECK_ARG(s != NULL && (unsigned)action < TS_DEBUG_ACTION_COUNT, false);
  pthread_mutex_lock(&s->lock);
  bool stopped = s->stopped;
  if (stopped) {
    s->action = action;
    s->resumes++;
    pthread_cond_broadcast(&s->cond);
  }
  pthread_mutex_unlock(&s->lock);
  return stopped;
}

void ts_debug_pause(ts_debug_session *s)
{
  g_return_if_fail(s != NULL);
  __atomic_store_n(&s->pause, 1, __ATOMIC_SEQ_CST);
}

void ts_debug_cancel(ts_debug_session *s)
{
  g_return_if_fail(s != NULL);
  pthread_mutex_lock(&s->lock);
  __atomic_store_n(&s->cancel, 1, __ATOMIC_SEQ_CST);
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->lock);
}

int ts_debug_break_add(ts_debug_session *s, const char *spec)
{
  TS_CHECK_ARG(s != NULL, 0);
  ts_breakpoint *bp = g_new(ts_breakpoint, 1);
  if (!ts__breakpoint_parse(spec, bp)) {
    g_free(bp);
    return 0;
  }
  pthread_mutex_lock(&s->lock);
  bp->id = s->next_break++;
  g_ptr_array_add(s->breaks, bp);
  pthread_mutex_unlock(&s->lock);
  return bp->id;
}

bool ts_debug_break_remove(ts_debug_session *s, int id)
{
  TS_CHECK_ARG(s != NULL, false);
  pthread_mutex_lock(&s->lock);
  ts_breakpoint *found = find_break(s, id);
  if (found)
    g_ptr_array_remove(s->breaks, found);
  pthread_mutex_unlock(&s->lock);
  if (found) {
    ts__breakpoint_clear(found);
    g_free(found);
  }
  return found != NULL;
}

int ts_debug_history_n(ts_debug_session *s)
{
  TS_CHECK_ARG(s != NULL, 0);
  pthread_mutex_lock(&s->lock);
  int n = ts__history_n(&s->history);
  pthread_mutex_unlock(&s->lock);
  return n;
}

bool ts_debug_history_get(ts_debug_session *s, int i, ts_debug_op *out)
{
  TS_CHECK_ARG(s != NULL && out != NULL, false);
  *out = (ts_debug_op){ 0 };
  pthread_mutex_lock(&s->lock);
  const ts_debug_op *op = ts__history_at(&s->history, i);
  if (op)
    ts__debug_op_copy(out, op);
  pthread_mutex_unlock(&s->lock);
  return op != NULL;
}
