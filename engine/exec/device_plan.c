/* exec/device_plan.c — a graph run on a device as one submission: the
 * backend's whole-plan entry (graph_plan_create/update/compute/replay/free,
 * tracescope-backend.h).  The first run on a device captures the steps'
 * launches into a plan; later runs capture again (new buffers, perhaps
 * new shapes) and the backend updates and replays what it holds, as a
 * CUDA Graph is updated and launched.  Host work (inference, allocation,
 * op events) still happens per step of a capture; the launches go out
 * together.
 *
 * Replay as is: a graph without If or While (but While loops the device
 * runs inside the capture, device_cf.c) whose capture did nothing a
 * launch would not redo (no op on the host, no host read of the device,
 * no variable moved to a new storage) is captured once more on inputs of
 * the plan's own (device tensors the arguments are copied into) with the
 * arena of that run kept out of the planner's pool and its outputs kept;
 * from then on a call whose arguments fit those
 * inputs (dtypes and shapes), while the variables the plan touched are
 * where they were (and those it writes held by nobody else), only copies
 * its arguments in, launches the capture again (graph_plan_replay), tells
 * listeners of the recorded ops with fresh correlation ids, and copies the
 * outputs out to tensors of the caller's own, so a later replay never
 * writes what a caller holds.  Anything else captures again.  Random
 * numbers (RandomUniform, RandomNormal) do not stop a replay: they are a
 * function of the op's seed alone (ops/create.c), drawn again by a
 * replay on SIM:0 and uploaded from the plan's staging on CUDA.
 *
 * A graph with If or While nodes the device cannot run inside the capture
 * (device_cf.c), whose conditions are then read on the host mid-run, is
 * captured in segments: the steps before such a node are one
 * plan, submitted before it runs, the steps after it the next; the node's
 * subgraphs are executables of their own and capture their own plans (a
 * While's body is one plan replayed on every iteration).  A run inside
 * another's capture is not captured. */
#include "run.h"
#include "../op_clock.h"

/* An executable's plan and the backend it is for, claimed by one run at
 * a time (concurrent runs of one executable go step by step). */
struct ts_device_plan {
  const ts_backend *backend;
  ts_graph_plan *plan;
  const ts_graph *graph;  /* whose plan it is (its name for a warning) */
  bool top;               /* the function's own graph, not an If's or a While's */
  /* ---- replaying as is (an executable of one segment) ---- */
  ts_plan_record rec;     /* what the last capture ran */
  bool candidate;         /* that capture could be replayed, were its inputs the plan's */
  bool whole;             /* the capture running now is the whole run's */
  bool staged;            /* the capture running now runs on the plan's inputs */
  uint64_t staged_as;     /* their copies' placeholder correlation (ts__activity_placeholder):
                             the ops that read them are known once the capture ran */
  bool replayable;        /* the last capture did, and its outputs and arena are kept */
  int n_broken;           /* captures in a row the host broke (ts_context's plan_host_read) */
  int n_in, n_out;
  ts_tensor **in;         /* the plan's inputs, on the device */
  ts_tensor **out;        /* the last capture's outputs */
  ts_arena *arena;        /* the last capture's, out of the pool while replayable */
  ts_planner *planner;    /* the arena's */
  int n_corr;             /* recorded ops with a correlation id */
  uint64_t *captured;     /* theirs in the capture, increasing */
  uint64_t *fresh;        /* this replay's */
  /* per input: the op that reads it first (its index in fresh, or -1) and
   * which of its inputs it is (+ 1): a replay's copy of the argument is
   * that op's, as the copy of a caller's tensor to where it runs is */
  int *in_reader;
  uint32_t *in_operand;
};

/* A capture the host broke by reading one of the device's values mid-run
 * (a print, an op on the CPU) ran the rest step by step; the next call
 * captures again (a first call making its variables reads them back, a
 * later one need not), until this many in a row broke. */
#define BROKEN_LIMIT 2

/* The graph will run step by step from now on: said once, as a fallback
 * is (not of a branch or a loop body, whose host reads, a print, are
 * their reason to be one). */
static void warn_stepwise(const ts_device_plan *dp, const ts_plan_break *at)
{
  const char *file = at->loc.file ? at->loc.file : "?";
  const char *node = at->node ? ts_node_name(at->node) : NULL;
  char *where = node && strcmp(node, at->op_name) ? g_strdup_printf("%s (%s, %s:%d)", node, at->op_name,
                                                file, at->loc.line)
                              : g_strdup_printf("%s (%s:%d)", at->op_name, file, at->loc.line);
  char *message = g_strdup_printf(
    "%s: its graph runs op by op on %s, without capturing: the host read one of its "
    "values on the device mid-run in %d calls in a row, the last time in %s (an op on "
    "the CPU reading a tensor of the device, a print, or a copy between two GPUs); keep "
    "such reads out of the function to have it launched whole",
    dp->graph->name, ts_backend_name(dp->backend), BROKEN_LIMIT, where);
  g_free(where);
  ts_event ev = { .kind = TS_EVENT_WARNING };
  ev.warning = (ts_warning_event){ .kind = TS_WARNING_DEVICE_STEPWISE,
                                   .function_name = dp->graph->name, .message = message };
  ts__listeners_emit(&ev);
  g_free(message);
}

/* The replay state goes: the outputs let go, the arena back to the pool. */
static void replay_drop(ts_device_plan *dp)
{
  for (int i = 0; i < dp->n_out; i++)
    ts_tensor_unref(dp->out[i]);
  g_clear_pointer(&dp->out, g_free);
  dp->n_out = 0;
  if (dp->arena)
    ts__planner_give(dp->planner, dp->arena, true);
  dp->arena = NULL;
  dp->replayable = false;
}

static void record_clear(ts_plan_record *r)
{
  for (guint i = 0; r->vars && i < r->vars->len; i++)
    ts_tensor_unref(g_array_index(r->vars, ts_plan_var, i).var);
  if (r->vars)
    g_array_set_size(r->vars, 0);
  if (r->ops)
    g_array_set_size(r->ops, 0);
  r->host_work = false;
}

static void device_plan_free(ts_device_plan *dp)
{
  if (!dp)
    return;
  if (dp->plan)
    dp->backend->iface.graph_plan_free(dp->backend, dp->plan); /* waits for its launches */
  replay_drop(dp);
  for (int i = 0; i < dp->n_in; i++)
    ts_tensor_unref(dp->in[i]);
  g_free(dp->in);
  record_clear(&dp->rec);
  if (dp->rec.ops)
    g_array_unref(dp->rec.ops);
  if (dp->rec.vars)
    g_array_unref(dp->rec.vars);
  g_free(dp->captured);
  g_free(dp->fresh);
  g_free(dp->in_reader);
  g_free(dp->in_operand);
  g_free(dp);
}

/* Can a tensor be one of the plan's inputs (copied into one on b)? */
static bool stageable(const ts_tensor *t, const ts_backend *b)
{
  return t && t->data && !t->is_variable && t->dtype != TS_STRING && t->dtype != TS_VARIANT &&
         t->size >= 0 && (t->backend == b || ts__host_visible(t->backend));
}

static size_t data_bytes(const ts_tensor *t)
{
  return (size_t)t->size * ts_dtype_size(t->dtype);
}

/* Copies the arguments into the plan's inputs, made anew where their
 * dtypes or shapes differ; false (nothing staged) if one cannot be. */
static bool stage_inputs(ts_device_plan *dp, ts_tensor *const *inputs, int n)
{
  for (int i = 0; i < n; i++)
    if (!stageable(inputs[i], dp->backend))
      return false;
  if (n != dp->n_in) {
    for (int i = 0; i < dp->n_in; i++)
      ts_tensor_unref(dp->in[i]);
    dp->in = g_renew(ts_tensor *, dp->in, n);
    memset(dp->in, 0, sizeof *dp->in * (size_t)n);
    dp->n_in = n;
  }
  bool erred = ts_failed(), ok = true;
  ts_scope *scope = ts_scope_begin();
  dp->staged_as = ts__activity_placeholder();
  uint64_t outer = ts__activity_correlation_set(dp->staged_as);
  for (int i = 0; i < n && ok; i++) {
    ts_tensor *have = dp->in[i];
    if (!have || have->dtype != inputs[i]->dtype ||
        !ts_shape_equal(have->shape, inputs[i]->shape)) {
      ts_tensor *made = ts__tensor_alloc_on((ts_loc){ 0 }, dp->backend, inputs[i]->dtype,
                                            inputs[i]->shape);
      ts_tensor_unref(have);
      dp->in[i] = made ? ts_tensor_ref(made) : NULL;
    }
    ts__activity_operand_set((uint32_t)i + 1);
    ok = dp->in[i] && ts__data_copy(dp->in[i], inputs[i], data_bytes(inputs[i]));
    ts__activity_operand_set(0);
  }
  ts__activity_correlation_set(outer);
  ts_scope_end(scope);
  if (!ok)
    ts__activity_settle(dp->staged_as); /* no op of this run reads what it copied */
  if (!ok && !erred)
    ts_error_clear(); /* the run goes on with the caller's tensors */
  return ok;
}

ts_device_plan *ts__device_plan_begin(ts_executable *e, int segment, ts_tensor *const **inputs,
                                      int n_inputs)
{
  ts_context *c = ts__context();
  const ts_backend *b = c->device;
  if (!b || !b->iface.graph_plan_create || c->plan_recording)
    return NULL;
  ts_device_plan **slot = &e->device_plans[segment];
  ts_device_plan *dp = __atomic_exchange_n(slot, NULL, __ATOMIC_ACQ_REL);
  if (dp && dp->backend != b)
    g_clear_pointer(&dp, device_plan_free);
  if (dp)
    replay_drop(dp); /* this run captures anew */
  bool first = !dp;
  if (first) {
    dp = g_new0(ts_device_plan, 1);
    dp->backend = b;
    dp->candidate = true; /* until its first capture says otherwise */
    dp->rec.ops = g_array_new(FALSE, FALSE, sizeof(ts_plan_op));
    dp->rec.vars = g_array_new(FALSE, FALSE, sizeof(ts_plan_var));
  }
  /* the arguments go into the plan's inputs before the capture begins, so
   * that a capture that can be launched again as it is (the first one,
   * most often) is replayed by the next call */
  bool whole = (e->n_segments == 1 || ts__cf_whole(e, b)) && inputs &&
               b->iface.graph_plan_replay;
  bool staged = whole && dp->candidate && stage_inputs(dp, *inputs, n_inputs);
  if (first && !(dp->plan = b->iface.graph_plan_create(b))) {
    if (staged)
      ts__activity_settle(dp->staged_as);
    device_plan_free(dp);
    return NULL;
  }
  if (!first && (dp->n_broken >= BROKEN_LIMIT || !b->iface.graph_plan_update(b, dp->plan))) {
    /* the host keeps reading its values mid-run: step by step */
    if (staged)
      ts__activity_settle(dp->staged_as);
    dp->candidate = false;
    device_plan_free(__atomic_exchange_n(slot, dp, __ATOMIC_ACQ_REL));
    return NULL;
  }
  __atomic_add_fetch(&e->n_captures, 1, __ATOMIC_RELAXED);
  dp->graph = e->graph;
  dp->top = e->top;
  dp->whole = whole;
  dp->staged = staged;
  if (staged)
    *inputs = dp->in;
  record_clear(&dp->rec);
  c->plan_rec = whole ? &dp->rec : NULL;
  c->plan_recording = true;
  c->plan_host_read = false;
  c->plan_op = NULL;
  c->plan_site = NULL;
  c->plan_now = dp->plan;
  c->cf_open = 0;
  return dp;
}

bool ts__device_plan_compute(ts_device_plan *dp)
{
  if (!dp)
    return true;
  ts_context *c = ts__context();
  c->plan_recording = false;
  c->plan_rec = NULL;
  c->plan_now = NULL;
  dp->n_broken = c->plan_host_read ? dp->n_broken + 1 : 0;
  if (dp->n_broken == BROKEN_LIMIT && dp->top) /* a branch's print says so itself */
    warn_stepwise(dp, &c->plan_break);
  c->plan_op = NULL;
  c->plan_site = NULL;
  return dp->backend->iface.graph_plan_compute(dp->backend, dp->plan);
}

/* Could the capture just submitted be launched again as it is, given its
 * outputs?  (Its inputs: whether they were the plan's says dp->staged.) */
static bool capture_replayable(ts_device_plan *dp, ts_tensor *const *outputs, int n_out)
{
  const ts_context *c = ts__context();
  if (dp->rec.host_work || c->observer || c->op_watch || c->handlers || c->mute || c->serial)
    return false;
  for (guint i = 0; i < dp->rec.vars->len; i++) {
    const ts_plan_var *v = &g_array_index(dp->rec.vars, ts_plan_var, i);
    if (v->var->data != v->data) /* moved (copy on write) or given a storage mid-run */
      return false;
  }
  for (int i = 0; i < n_out; i++)
    if (!outputs[i] || outputs[i]->backend != dp->backend || outputs[i]->size < 0 ||
        outputs[i]->dtype == TS_STRING || outputs[i]->dtype == TS_VARIANT)
      return false;
  /* the correlation ids of its ops, in the run's order (increasing on a thread) */
  int n = 0;
  uint64_t last = 0;
  for (guint k = 0; k < dp->rec.ops->len; k++) {
    uint64_t corr = g_array_index(dp->rec.ops, ts_plan_op, k).correlation;
    if (!corr)
      continue;
    if (corr <= last)
      return false;
    last = corr;
    n++;
  }
  dp->captured = g_renew(uint64_t, dp->captured, MAX(n, 1));
  dp->fresh = g_renew(uint64_t, dp->fresh, MAX(n, 1));
  dp->n_corr = 0;
  for (guint k = 0; k < dp->rec.ops->len; k++) {
    uint64_t corr = g_array_index(dp->rec.ops, ts_plan_op, k).correlation;
    if (corr)
      dp->captured[dp->n_corr++] = corr;
  }
  return true;
}

/* Which recorded op reads each graph input first, and as which input;
 * the copies that staged the inputs for this capture are charged to it. */
static void find_readers(ts_device_plan *dp, const ts_graph *g)
{
  int n = (int)g->inputs->len;
  dp->in_reader = g_renew(int, dp->in_reader, MAX(n, 1));
  dp->in_operand = g_renew(uint32_t, dp->in_operand, MAX(n, 1));
  for (int i = 0; i < n; i++)
    dp->in_reader[i] = -1, dp->in_operand[i] = 0;
  for (guint k = 0, f = 0; k < dp->rec.ops->len; k++) {
    ts_plan_op *op = &g_array_index(dp->rec.ops, ts_plan_op, k);
    /* ops of g itself (a loop's condition and body are graphs of their own) */
    bool own = op->node && (guint)op->node->id < g->nodes->len &&
               ts__graph_node(g, op->node->id) == op->node;
    for (int j = 0; op->correlation && own && j < op->node->n_inputs; j++) {
      const ts_node *from = ts__graph_node(g, op->node->inputs[j].node);
      int i = from->input_index;
      if ((ts__op_def(from->op)->flags & TS_OPF_INPUT) && i >= 0 && i < n &&
          dp->in_reader[i] < 0) {
        dp->in_reader[i] = (int)f, dp->in_operand[i] = (uint32_t)j + 1;
        op->n_copied++; /* its events on a replay say so */
        if (dp->staged)
          ts__activity_recharge(dp->staged_as, (uint32_t)i + 1, op->correlation, (uint32_t)j + 1);
      }
    }
    f += op->correlation != 0;
  }
}

/* A tensor of the caller's own holding src's elements (a copy queued on
 * the device), as a reference; NULL + error. */
static ts_tensor *copy_out(const ts_tensor *src)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *t = ts__tensor_alloc_on((ts_loc){ 0 }, src->backend, src->dtype, src->shape);
  if (t && ts__data_copy(t, src, data_bytes(src)))
    ts_tensor_ref(t);
  else
    t = NULL;
  ts_scope_end(scope);
  return t;
}

bool ts__device_plan_close(ts_executable *e, int segment, ts_device_plan *dp, bool ok,
                           ts_tensor **outputs, int n_out, ts_arena **arena)
{
  if (!dp)
    return ok;
  if (ok && outputs && dp->whole) {
    bool can = capture_replayable(dp, outputs, n_out);
    if (dp->staged)
      find_readers(dp, e->graph);
    if (can && dp->staged) {
      /* the outputs are the plan's; the caller gets copies */
      dp->out = g_new(ts_tensor *, MAX(n_out, 1));
      dp->n_out = n_out;
      for (int i = 0; i < n_out && ok; i++) {
        dp->out[i] = outputs[i];
        outputs[i] = copy_out(dp->out[i]);
        ok = outputs[i] != NULL;
      }
      if (ok) {
        dp->arena = *arena;
        dp->planner = e->planner;
        *arena = NULL;
        dp->replayable = true;
      } else {
        for (int i = 0; i < n_out; i++)
          g_clear_pointer(&outputs[i], ts_tensor_unref);
        replay_drop(dp);
      }
    }
    dp->candidate = can;
  }
  if (dp->staged) /* its copies' ops are known now, if it ran */
    ts__activity_settle(dp->staged_as);
  dp->staged = false;
  device_plan_free(__atomic_exchange_n(&e->device_plans[segment], dp, __ATOMIC_ACQ_REL));
  return ok;
}

bool ts__device_plan_end(ts_executable *e, int segment, ts_device_plan *dp)
{
  bool ok = ts__device_plan_compute(dp);
  return ts__device_plan_close(e, segment, dp, ok, NULL, 0, NULL);
}

/* Do the arguments fit the plan's inputs, and the variables it touched
 * stand where they stood (those it writes held by nobody else, or an
 * assign would have moved them first)? */
static bool call_fits(const ts_device_plan *dp, ts_tensor *const *inputs, int n)
{
  if (n != dp->n_in)
    return false;
  for (int i = 0; i < n; i++)
    if (!stageable(inputs[i], dp->backend) || inputs[i]->dtype != dp->in[i]->dtype ||
        !ts_shape_equal(inputs[i]->shape, dp->in[i]->shape))
      return false;
  for (guint i = 0; i < dp->rec.vars->len; i++) {
    const ts_plan_var *v = &g_array_index(dp->rec.vars, ts_plan_var, i);
    if (v->var->data != v->data || !v->var->base ||
        (v->written && __atomic_load_n(&v->var->base->refcount, __ATOMIC_ACQUIRE) != 1))
      return false;
  }
  return true;
}

int ts__device_plan_replay(ts_executable *e, ts_tensor *const *inputs, int n_inputs,
                           ts_tensor **outputs, const ts_node *parent, uint64_t parent_seq)
{
  ts_context *c = ts__context();
  const ts_backend *b = c->device;
  if (!b || c->plan_recording || c->observer || c->op_watch ||
      c->handlers || c->mute || c->serial)
    return -1;
  ts_device_plan **slot = &e->device_plans[0];
  ts_device_plan *dp = __atomic_exchange_n(slot, NULL, __ATOMIC_ACQ_REL);
  if (!dp)
    return -1;
  int done = -1;
  if (!dp->replayable || dp->backend != b || !call_fits(dp, inputs, n_inputs))
    goto out;
  ts__correlations_take(dp->fresh, dp->n_corr);
  for (int i = 0; i < n_inputs; i++) {
    int r = dp->in_reader[i];
    uint64_t outer = ts__activity_correlation_set(r >= 0 ? dp->fresh[r] : 0);
    ts__activity_operand_set(r >= 0 ? dp->in_operand[i] : 0);
    bool copied = ts__data_copy(dp->in[i], inputs[i], data_bytes(inputs[i]));
    ts__activity_operand_set(0);
    ts__activity_correlation_set(outer);
    if (!copied) {
      done = 0;
      goto out;
    }
  }
  uint64_t launched = ts__op_now_ns();
  if (!b->iface.graph_plan_replay(b, dp->plan, dp->captured, dp->fresh, dp->n_corr)) {
    if (ts_failed())
      done = 0;
    else
      replay_drop(dp); /* nothing whole to launch: capture again */
    goto out;
  }
  ts__replay_events((const ts_plan_op *)dp->rec.ops->data, (int)dp->rec.ops->len, dp->fresh,
                    parent, parent_seq, launched);
  done = 1;
  for (int i = 0; i < dp->n_out; i++)
    if (!(outputs[i] = copy_out(dp->out[i])))
      done = 0;
  if (!done)
    for (int i = 0; i < dp->n_out; i++)
      g_clear_pointer(&outputs[i], ts_tensor_unref);
  __atomic_add_fetch(&e->n_replays, 1, __ATOMIC_RELAXED);
out:
  device_plan_free(__atomic_exchange_n(slot, dp, __ATOMIC_ACQ_REL));
  return done;
}

void ts__device_plan_free(ts_executable *e)
{
  for (int i = 0; i < e->n_segments; i++)
    device_plan_free(e->device_plans[i]);
  g_free(e->device_plans);
}
