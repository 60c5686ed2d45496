/* executable.c — runs an optimized graph (the passes chosen when it is
 * made rewrote it: passes.c): a plan of its nodes in creation order, which
 * is topological (the graph holds only what the outputs and the stateful
 * ops need: the passes dropped the rest), but for groups of independent
 * heavy ops put together to run at once (schedule.c) and runs of ops split
 * by rows (rows.c), both run on the pool by parallel.c.  Each value is
 * released after its last use (a view's input after the view's; in a
 * group, after the group), and the values a run makes and reads live in
 * the memory planner's arena (planner.c), so a repeat call allocates only
 * its outputs.
 *
 * Variable reads: a ReadVariableOp whose value only compute ops take is
 * a reference to the variable's storage taken by the run itself (what the
 * read's view would hold, so an assign meanwhile copies on write just the
 * same) instead of a dispatched op: models read every weight on every
 * call.  Listeners and an observer hear of it as an op of no time
 * (ts__announce, told before the run's next step); op handlers and the like (serial_only) see it run. */
#include "run.h"

#include <stdlib.h>

/* A kernel choice at plan time runs the op on zeros of this many elements at most. */
#define MAX_TUNE_ELEMS (1 << 24)

/* The step after whose end values used by step s are released: the last
 * of its group, or s. */
static int release_step(const plan *p, const int *group_of, int s)
{
  return group_of[s] >= 0 ? p->group_end[group_of[s]] - 1 : s;
}

/* When the run releases each value: after its last use, extended to the
 * last use of views of it (they share its storage; ops before their
 * views); right after its step if nothing reads it; at the end if it is
 * a graph output or a preset nothing reads. */
static void plan_releases(const ts_graph *g, plan *p)
{
  int nv = p->n_values ? p->n_values : 1;
  int *last_use = g_new(int, nv);
  int *group_of = g_new(int, p->n_steps ? p->n_steps : 1); /* per step: its group's first step, or -1 */
  for (int s = 0, start = -1; s < p->n_steps; s++) {
    if (p->group_end[s])
      start = s;
    group_of[s] = start >= 0 && s < p->group_end[start] ? start : -1;
  }
  for (int v = 0; v < p->n_values; v++)
    last_use[v] = -1;
  p->step_first = g_new(int, p->n_steps ? p->n_steps : 1);
  p->step_n = g_new(int, p->n_steps ? p->n_steps : 1);
  for (int s = 0; s < p->n_steps; s++) {
    const ts_node *node = ts__graph_node(g, p->steps[s]);
    p->step_first[s] = p->offset[node->id];
    p->step_n[s] = node->n_outputs;
    for (int i = 0; i < node->n_outputs; i++) /* never read: released right after its step */
      last_use[p->step_first[s] + i] = release_step(p, group_of, s);
  }
  for (int s = 0; s < p->n_steps; s++) {
    const ts_node *node = ts__graph_node(g, p->steps[s]);
    for (int i = 0; i < node->n_inputs; i++) {
      int *last = &last_use[p->offset[node->inputs[i].node] + node->inputs[i].index];
      *last = MAX(*last, release_step(p, group_of, s));
    }
  }
  for (guint i = 0; i < g->outputs->len; i++) {
    ts_port port = g_array_index(g->outputs, ts_port, i);
    last_use[p->offset[port.node] + port.index] = p->n_steps;
  }
  for (int s = p->n_steps - 1; s >= 0; s--) {
    const ts_node *node = ts__graph_node(g, p->steps[s]);
    if (ts__op_is_view(node->op) && node->n_inputs > 0) {
      int in = p->offset[node->inputs[0].node] + node->inputs[0].index;
      last_use[in] = MAX(last_use[in], last_use[p->step_first[s]]);
    }
  }
  /* counting sort by step: rel_start[s + 1] - rel_start[s] values each */
  p->rel_start = g_new0(int, p->n_steps + 2);
  for (int v = 0; v < p->n_values; v++)
    if (last_use[v] >= 0 && last_use[v] < p->n_steps)
      p->rel_start[last_use[v] + 2]++;
  for (int s = 0; s < p->n_steps; s++)
    p->rel_start[s + 2] += p->rel_start[s + 1];
  /* within a step, later values first: a view lets go of its base (and
   * gets its own copy if someone keeps it) before the base is released */
  p->rel_values = g_new(int, nv);
  for (int v = p->n_values - 1; v >= 0; v--)
    if (last_use[v] >= 0 && last_use[v] < p->n_steps)
      p->rel_values[p->rel_start[last_use[v] + 1]++] = v;
  g_free(last_use);
  g_free(group_of);
}

/* The traced node an optimized node stands for when it is exactly one of
 * the same op (a Mul made from a Pow is not that Pow: ts_node_origin says). */
static const ts_node *traced_of(const ts_node *n)
{
  /* ts_node_origin's rule read in place (no origins: n itself) */
  const ts_node *o = n->n_origins == 0 ? n : n->n_origins == 1 ? n->origins[0] : NULL;
  return o && o->op == n->op ? o : NULL;
}

/* Each step's traced node, found once: every op's site and every told read
 * names it, and reading it from the origin (a node of the traced graph,
 * cold) was half of what telling a read cost.  And each fast read's
 * event, made once (a run copies it and fills in its own): a row run's
 * part telling a hundred of them read each node's lines cold. */
static void plan_traced(const ts_graph *g, plan *p)
{
  p->traced = g_new0(const ts_node *, g->nodes->len ? g->nodes->len : 1);
  p->told_at = g_new(int, p->n_steps ? p->n_steps : 1);
  int n_told = 0;
  for (int s = 0; s < p->n_steps; s++)
    n_told += p->fast_read[s];
  p->told = g_new(told_read, n_told ? n_told : 1);
  for (int s = 0, k = 0; s < p->n_steps; s++) {
    const ts_node *node = ts__graph_node(g, p->steps[s]);
    p->traced[node->id] = traced_of(node);
    p->told_at[s] = p->fast_read[s] ? k : -1;
    if (!p->fast_read[s])
      continue;
    told_read *t = &p->told[k++];
    t->var = p->offset[node->inputs[0].node] + node->inputs[0].index;
    ts_op_call call = { node->loc, ts__op_def(node->op), NULL, 1, node->attrs };
    ts__announce_template(&t->ev, &call, node, p->traced[node->id]);
  }
}

/* Reads whose value only compute ops take (no graph output, view,
 * Identity or subgraph passes the storage on). */
/* The recorded infos of each step's inputs where every dim of its inputs
 * and outputs is known (ts_run_site's in_recorded: inference is then
 * skipped when the inputs match). */
static void plan_recorded_inputs(const ts_graph *g, plan *p)
{
  int n = (int)g->nodes->len, total = 0;
  for (int s = 0; s < p->n_steps; s++)
    total += ts__graph_node(g, p->steps[s])->n_inputs;
  p->in_recorded = g_new0(const ts_info **, n ? n : 1);
  p->recorded_infos = g_new(const ts_info *, total ? total : 1);
  const ts_info **next = p->recorded_infos;
  for (int s = 0; s < p->n_steps; s++) {
    const ts_node *node = ts__graph_node(g, p->steps[s]);
    bool known = node->n_outputs >= 1 && !node->n_subgraphs &&
                 !(ts__op_def(node->op)->flags & TS_OPF_ANY_DTYPE);
    for (int i = 0; i < node->n_outputs && known; i++)
      known = ts__shape_known(node->outputs[i].shape);
    for (int i = 0; i < node->n_inputs && known; i++) {
      next[i] = &ts__graph_node(g, node->inputs[i].node)->outputs[node->inputs[i].index];
      known = ts__shape_known(next[i]->shape);
    }
    if (known) {
      p->in_recorded[node->id] = next;
      next += node->n_inputs;
    }
  }
}

static void plan_fast_reads(const ts_graph *g, plan *p)
{
  int n = (int)g->nodes->len;
  bool *passed_on = g_new0(bool, n ? n : 1); /* per node id: its output 0 may leave as it is */
  for (guint i = 0; i < g->outputs->len; i++)
    passed_on[g_array_index(g->outputs, ts_port, i).node] = true;
  for (int id = 0; id < n; id++) {
    const ts_node *node = ts__graph_node(g, id);
    const ts_op_def *def = ts__op_def(node->op);
    bool passes = (def->flags & (TS_OPF_ALIAS | TS_OPF_CONTROL_FLOW | TS_OPF_ANY_DTYPE |
                                 TS_OPF_VARIABLE)) || node->n_subgraphs;
    for (int i = 0; i < node->n_inputs && passes; i++)
      passed_on[node->inputs[i].node] = true;
  }
  p->fast_read = g_new0(bool, p->n_steps ? p->n_steps : 1);
  for (int s = 0; s < p->n_steps; s++) {
    const ts_node *node = ts__graph_node(g, p->steps[s]);
    p->fast_read[s] = node->op == TS_OP_READ_VARIABLE && node->n_inputs == 1 &&
                      node->n_outputs == 1 && !passed_on[node->id];
  }
  g_free(passed_on);
}

/* Groups of independent heavy steps (schedule.c), at most MAX_GROUP each. */
static void plan_groups(const ts_graph *g, plan *p)
{
  p->group_end = g_new0(int, p->n_steps ? p->n_steps : 1);
  ts__schedule(g, p->steps, p->n_steps, p->group_end);
  for (int s = 0; s < p->n_steps; s++) {
    int end = p->group_end[s];
    if (!end)
      continue;
    for (int from = s; from < end; from += MAX_GROUP) {
      int to = MIN(end, from + MAX_GROUP);
      p->group_end[from] = to - from >= 2 ? to : 0;
      if (to - from >= 2) {
        p->n_groups++;
        p->n_grouped += to - from;
        p->max_group = MAX(p->max_group, to - from);
      }
    }
    s = end - 1;
  }
}

/* Ops whose kernel is chosen per shape by timing (kernels/tune.c). */
static bool tuned_op(ts_op op)
{
  return op == TS_OP_MATMUL || op == TS_OP_FUSED_MATMUL || op == TS_OP_CONV2D ||
         op == TS_OP_FUSED_CONV2D;
}

/* Makes the kernel choices of g's f32 GEMMs and convolutions of static
 * shapes now, with the plan, rather than on their first call: each runs
 * once on zeros of its shapes, unseen by listeners, and only a shape the
 * tuner has not met yet costs more than a lookup.  A failing op is left
 * to fail when it runs.  On the CPU, whatever the device: the choices are
 * the CPU kernels' (a device of kind CPU runs them too), and zeros copied
 * to a device would be copies the call never asked for. */
static void choose_kernels(const ts_graph *g, const plan *p)
{
  ts_context *c = ts__context();
  if (c->error)
    return; /* the caller's, to keep */
  const ts_backend *device = c->device;
  c->device = NULL;
  for (int s = 0; s < p->n_steps; s++) {
    const ts_node *n = ts__graph_node(g, p->steps[s]);
    if (!tuned_op(n->op) || n->n_outputs != 1 || n->outputs[0].dtype != TS_F32)
      continue;
    ts_scope *scope = ts_scope_begin();
    ts_tensor *in[TS_MAX_INPUTS];
    bool known = true;
    for (int i = 0; i < n->n_inputs && known; i++) {
      const ts_info *info = &ts__graph_node(g, n->inputs[i].node)->outputs[n->inputs[i].index];
      int64_t elems;
      known = info->shape.rank >= 0 && ts__shape_product(info->shape.dim, info->shape.rank, &elems) &&
              elems >= 0 && elems <= MAX_TUNE_ELEMS &&
              (in[i] = ts_tensor_new(info->dtype, info->shape)) != NULL;
    }
    if (known) {
      ts_op_call call = { n->loc, ts__op_def(n->op), in, n->n_inputs, n->attrs };
      ts_tensor *out[TS_MAX_OUTPUTS];
      c->mute++;
      ts__tune_only = true;
      ts__execute(&call, NULL, out);
      ts__tune_only = false;
      c->mute--;
    }
    ts_error_clear();
    ts_scope_end(scope);
  }
  c->device = device;
}

static ts_executable *executable_plan(ts_graph *g, bool owns)
{
  ts_executable *e = g_new0(ts_executable, 1);
  e->graph = g;
  e->owns_graph = owns;
  plan *p = &e->plan;
  int n = (int)g->nodes->len;
  p->steps = g_new(int, n ? n : 1);
  p->offset = g_new(int, n ? n : 1);
  e->subs = g_new0(ts_executable **, n ? n : 1);
  e->cf_ok = g_new0(bool, n ? n : 1);
  e->n_segments = 1;
  for (int id = 0; id < n; id++) {
    p->offset[id] = p->n_values;
    p->n_values += ts__graph_node(g, id)->n_outputs;
  }
  p->preset = g_new0(ts_tensor *, p->n_values ? p->n_values : 1);
  p->presets = g_new(int, p->n_values ? p->n_values : 1);
  for (int id = 0; id < n; id++) {
    const ts_node *node = ts__graph_node(g, id);
    if (ts__op_def(node->op)->flags & TS_OPF_VALUE) {
      p->preset[p->offset[id]] = ts_tensor_ref(node->value), p->presets[p->n_presets++] = p->offset[id];
      if (node->op == TS_OP_CONST && !node->value->is_variable) /* its copies on devices are kept */
        __atomic_store_n(&node->value->constant, true, __ATOMIC_RELAXED);
    } else
      p->steps[p->n_steps++] = id;
    if (node->n_subgraphs) {
      e->n_segments++;
      e->subs[id] = g_new(ts_executable *, node->n_subgraphs);
      for (int s = 0; s < node->n_subgraphs; s++)
        e->subs[id][s] = executable_plan(node->subgraphs[s], false);
      e->cf_ok[id] = ts__cf_eligible(e, node);
    }
  }
  e->device_plans = g_new0(ts_device_plan *, e->n_segments);
  plan_groups(g, p);
  plan_releases(g, p);
  plan_fast_reads(g, p);
  plan_recorded_inputs(g, p);
  plan_traced(g, p);
  ts_exec_layout layout = {
    .n_steps = p->n_steps, .n_values = p->n_values, .steps = p->steps, .offset = p->offset,
    .step_first = p->step_first, .step_n = p->step_n, .rel_start = p->rel_start,
    .rel_values = p->rel_values, .group_end = p->group_end, .max_group = p->max_group,
  };
  ts__phase tune;
  ts__phase_begin(&tune, TS_PHASE_TUNE, "kernels");
  choose_kernels(g, p); /* before the row runs: they look at the choices */
  ts__phase_end(&tune, NULL);
  ts__exec_plan_row_runs(g, p, &layout);
  e->planner = ts__planner_new(g, &layout);
  ts__planner_plan_static(e->planner);
  return e;
}

ts_executable *ts__executable_new(const ts_graph *traced)
{
  char *summary;
  ts_graph *optimized = ts__passes_run(traced, ts__passes_current(), &summary);
  /* A graph the passes left as it is runs as traced (no copy). */
  ts__phase planning;
  ts__phase_begin(&planning, TS_PHASE_PLAN, "plan");
  ts_executable *e = optimized ? executable_plan(optimized, true)
                               : executable_plan((ts_graph *)traced, false);
  ts__phase_end(&planning, NULL);
  e->top = true;
  e->summary = summary;
  return e;
}

const char *ts__executable_summary(const ts_executable *e)
{
  return e->summary;
}

void ts__executable_free(ts_executable *e)
{
  if (!e)
    return;
  ts__device_plan_free(e); /* a replayable one gives its arena back through the plan */
  plan *p = &e->plan;
  for (guint id = 0; id < e->graph->nodes->len; id++) {
    if (!e->subs[id])
      continue;
    for (int s = 0; s < ts__graph_node(e->graph, (int)id)->n_subgraphs; s++)
      ts__executable_free(e->subs[id][s]);
    g_free(e->subs[id]);
  }
  g_free(e->subs);
  g_free(e->cf_ok);
  for (int v = 0; v < p->n_values; v++)
    ts_tensor_unref(p->preset[v]);
  g_free(p->preset);
  g_free(p->presets);
  g_free(p->steps);
  g_free(p->group_end);
  g_free(p->fast_read);
  g_free(p->in_recorded);
  g_free(p->traced);
  g_free(p->told_at);
  g_free(p->told);
  g_free(p->recorded_infos);
  for (int r = 0; r < p->n_runs; r++) {
    g_free(p->runs[r].borrowed);
    g_free(p->runs[r].sliced);
    g_free(p->runs[r].exits);
  }
  g_free(p->runs);
  g_free(p->run_at);
  g_free(p->row_step);
  g_free(p->made_by_run);
  g_free(p->offset);
  g_free(p->step_first);
  g_free(p->step_n);
  g_free(p->rel_start);
  g_free(p->rel_values);
  ts__planner_free(e->planner);
  if (e->owns_graph)
    ts__graph_free(e->graph);
  free(e->summary);
  g_free(e);
}

const ts_graph *ts__executable_graph(const ts_executable *e)
{
  return e->graph;
}

/* What If and While call to run their subgraphs (site->exec: the node's). */
static bool run_subgraph(const ts_run_site *site, uint64_t seq, int i, ts_tensor *const *in,
                         int n_in, ts_tensor **out, int max_out, int *n_out)
{
  ts_executable *const *subs = site->exec;
  if (i < 0 || i >= site->n_subgraphs || !subs) {
    ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL, "no subgraph %d", i);
    return false;
  }
  const ts_executable *sub = subs[i];
  *n_out = (int)sub->graph->outputs->len;
  if (*n_out > max_out) {
    ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL, "subgraph '%s' has %d outputs, at most %d",
                 sub->graph->name, *n_out, max_out);
    return false;
  }
  return ts__executable_run(sub, in, n_in, out, site->traced ? site->traced : site->node, seq);
}


/* Where node runs (the step runner's ts_run_site, execute.c); on_device:
 * an If or While the device runs inside the capture. */
static ts_run_site step_site(const ts_executable *e, const ts_node *node, const ts_node *parent,
                             uint64_t parent_seq, bool on_device)
{
  return (ts_run_site){
    .node = node, .node_name = node->name, .traced = e->plan.traced[node->id], .parent = parent, .parent_seq = parent_seq,
    .recorded = node->outputs, .n_recorded = node->n_outputs,
    .in_recorded = (const ts_info *const *)e->plan.in_recorded[node->id],
    .n_subgraphs = node->n_subgraphs, .run_subgraph = run_subgraph, .exec = e->subs[node->id],
    .on_device = !on_device ? NULL : node->op == TS_OP_IF ? ts__device_if : ts__device_loop,
  };
}

static bool exec_step(const ts_executable *e, const ts_node *node, ts_tensor **values,
                      ts_tensor *const *inputs, ts_scope *scope, ts_planned *planned,
                      ts_tensor **out, const ts_node *parent, uint64_t parent_seq,
                      bool on_device)
{
  const plan *p = &e->plan;
  const ts_op_def *def = ts__op_def(node->op);
  if (def->flags & TS_OPF_INPUT) {
    out[0] = ts_tensor_ref(inputs[node->input_index]);
    return true;
  }
  ts_tensor *in[TS_MAX_INPUTS];
  for (int i = 0; i < node->n_inputs; i++)
    in[i] = values[p->offset[node->inputs[i].node] + node->inputs[i].index];
  ts_op_call call = { node->loc, def, in, node->n_inputs, node->attrs };
  ts_run_site site = step_site(e, node, parent, parent_seq, on_device);
  /* The step's scope holds what the kernel makes; the run keeps the outputs. */
  ts__scope_enter(scope);
  ts__context()->planned = planned;
  int n = ts__execute(&call, &site, out);
  for (int i = 0; i < n; i++)
    ts_tensor_ref(out[i]);
  ts__scope_leave(scope);
  if (n < 0)
    memset(out, 0, sizeof *out * (size_t)node->n_outputs); /* whatever it made is gone */
  return n >= 0;
}

bool ts__exec_step(const ts_executable *e, const ts_node *node, ts_tensor **values,
                   ts_tensor *const *inputs, ts_scope *scope, ts_planned *planned,
                   ts_tensor **out, const ts_node *parent, uint64_t parent_seq)
{
  return exec_step(e, node, values, inputs, scope, planned, out, parent, parent_seq, false);
}

/* Must every step run on this thread, one by one, as an op?  While op
 * handlers (what they do is this thread's), an op watch, a device scope
 * or muted ops are on it, or something asks for it (ts_context.serial).
 * Listeners and an observer change nothing: the pool's threads deliver
 * the events of the pieces they run (parallel.c), and reads the run makes
 * itself are announced to them. */
static bool serial_only(const ts_context *c)
{
  return c->op_watch || c->handlers || c->device || c->mute || c->serial;
}

/* Does anything see this thread's ops? */
static bool watched(const ts_context *c)
{
  return c->observer || (__atomic_load_n(&ts__listener_mask, __ATOMIC_RELAXED) & TS__OP_EVENTS);
}

ts_tensor *ts__exec_fast_read(const ts_executable *e, ts_tensor *const *values, int s,
                              ts_announcements *announce, const ts_node *parent,
                              uint64_t parent_seq)
{
  const plan *p = &e->plan;
  const told_read *t = &p->told[p->told_at[s]];
  ts_tensor *var = values[t->var];
  ts_tensor *store = ts__variable_read_storage(var);
  ts_plan_record *rec = ts__context()->plan_rec;
  if (store && rec) {
    const ts_node *node = ts__graph_node(e->graph, p->steps[s]);
    ts_op_call call = { node->loc, ts__op_def(node->op), &var, 1, node->attrs };
    ts_run_site site = step_site(e, node, parent, parent_seq, false);
    ts__plan_record_op(rec, &call, &site, store->backend, 0, 0);
  }
  if (store && announce)
    ts__announce(announce, &t->ev, var, store, ++ts__context()->run.seq, parent, parent_seq);
  return store;
}

void ts__exec_tell_read(const ts_executable *e, ts_tensor *const *values, int s, uint64_t seq,
                        ts_announcements *q, const ts_node *parent, uint64_t parent_seq)
{
  const plan *p = &e->plan;
  const told_read *t = &p->told[p->told_at[s]];
  ts__announce(q, &t->ev, values[t->var], values[p->step_first[s]], seq, parent, parent_seq);
}

bool ts__executable_run(const ts_executable *e, ts_tensor *const *inputs, int n_inputs,
                        ts_tensor **outputs, const ts_node *parent, uint64_t parent_seq)
{
  const ts_graph *g = e->graph;
  const plan *p = &e->plan;
  if (n_inputs != (int)g->inputs->len) {
    ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL, "graph '%s' takes %u inputs, got %d",
                 g->name, g->inputs->len, n_inputs);
    return false;
  }
  int replayed = ts__device_plan_replay((ts_executable *)e, inputs, n_inputs, outputs, parent,
                                        parent_seq); /* its own atomics */
  if (replayed >= 0) {
    for (int i = 0; i < (int)g->outputs->len; i++)
      if (outputs[i])
        ts__scope_adopt(outputs[i]);
    return replayed;
  }
  ts_arena *arena = ts__planner_take(e->planner);
  if (!arena) {
    memset(outputs, 0, sizeof *outputs * g->outputs->len);
    return false;
  }
  ts_tensor **values = ts__arena_values(arena);
  for (int i = 0; i < p->n_presets; i++) /* the others are NULL between runs */
    values[p->presets[i]] = ts_tensor_ref(p->preset[p->presets[i]]);
  ts_scope *step_scope = ts__arena_scope(arena, 0);
  const ts_context *c = ts__context();
  bool ok = true, serial = serial_only(c), seen = watched(c);
  bool share = !serial && (p->n_groups || p->n_runs) && ts__pool_width() > 1;
  ts_announcements reads; /* the reads made since the last step that ran */
  ts__announce_init(&reads, TS_TELL_ALL);
  ts_tensor *store;
  int segment = 0; /* the device plan's: a step that runs subgraphs ends one */
  ts_device_plan *dp = ts__device_plan_begin((ts_executable *)e, 0, &inputs, n_inputs);
  for (int s = 0; s < p->n_steps && ok; s++) {
    int from = s; /* releases after steps from .. s */
    const ts_node *runs_subgraphs = e->subs[p->steps[s]] ? ts__graph_node(g, p->steps[s]) : NULL;
    /* an If or While the device runs inside the capture ends no segment */
    bool on_device = runs_subgraphs && ts__cf_here(e, runs_subgraphs);
    if (on_device)
      runs_subgraphs = NULL;
    bool rows = share && p->run_at[s];
    store = !rows && !serial && p->fast_read[s]
                ? ts__exec_fast_read(e, values, s, seen ? &reads : NULL, parent, parent_seq)
                : NULL;
    if (!store) /* the reads are told before anything else of the run */
      ts__announce_flush(&reads);
    if (runs_subgraphs) { /* what came before goes out; its subgraphs capture their own */
      ok = ts__device_plan_end((ts_executable *)e, segment, dp);
      ts__kept_settle(ts__context(), ok);
      dp = NULL;
      if (!ok)
        break;
    }
    if (rows) {
      const row_run *run = &p->runs[p->run_at[s] - 1];
      ok = ts__exec_rows(e, arena, values, inputs, run, step_scope, seen, parent, parent_seq);
      s = run->end - 1;
    } else if (store) {
      values[p->step_first[s]] = ts_tensor_ref(store);
    } else if (share && p->group_end[s]) {
      ok = ts__exec_group(e, arena, values, inputs, s, p->group_end[s], parent, parent_seq);
      s = p->group_end[s] - 1; /* nothing to release before the group's last step */
    } else {
      const ts_node *node = ts__graph_node(g, p->steps[s]);
      int base = p->step_first[s];
      ok = exec_step(e, node, values, inputs, step_scope,
                     ts__arena_step(arena, 0, base, p->step_n[s]), &values[base], parent,
                     parent_seq, on_device);
    }
    if (runs_subgraphs && ok)
      dp = ts__device_plan_begin((ts_executable *)e, ++segment, NULL, 0);
    for (int r = p->rel_start[from]; r < p->rel_start[s + 1]; r++) {
      int v = p->rel_values[r];
      ts__arena_release(arena, v, values[v]);
      values[v] = NULL;
    }
  }
  ts__announce_flush(&reads);
  ok = ts__device_plan_compute(dp) && ok;
  ts__kept_settle(ts__context(), ok);
  int n_out = (int)g->outputs->len;
  for (int i = 0; i < n_out; i++) {
    ts_port port = g_array_index(g->outputs, ts_port, i);
    outputs[i] = ok ? ts_tensor_ref(values[p->offset[port.node] + port.index]) : NULL;
  }
  for (int v = p->n_values - 1; v >= 0; v--) /* views before their bases */
    if (values[v]) {
      ts__arena_release(arena, v, values[v]);
      values[v] = NULL;
    }
  /* a capture to replay keeps the arena and the outputs (the caller gets copies) */
  ok = ts__device_plan_close((ts_executable *)e, segment, dp, ok, outputs, n_out, &arena);
  for (int i = 0; i < n_out; i++)
    if (outputs[i])
      ts__scope_adopt(outputs[i]);
  if (arena)
    ts__planner_give(e->planner, arena, ok);
  return ok;
}

bool ts__executable_memory_plan(const ts_executable *e, ts_memory_plan *out)
{
  return ts__planner_stats(e->planner, out);
}

void ts__executable_schedule(const ts_executable *e, ts_schedule *out)
{
  const plan *p = &e->plan;
  int row_ops = 0;
  for (int s = 0; s < p->n_steps; s++)
    row_ops += p->row_step[s];
  *out = (ts_schedule){ p->n_steps, p->n_groups, p->n_grouped, p->n_runs, row_ops,
                        __atomic_load_n(&e->n_shared, __ATOMIC_RELAXED),
                        __atomic_load_n(&e->n_captures, __ATOMIC_RELAXED),
                        __atomic_load_n(&e->n_replays, __ATOMIC_RELAXED) };
}

char *ts__executable_schedule_describe(const ts_executable *e)
{
  const plan *p = &e->plan;
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "schedule: %d op%s", p->n_steps, p->n_steps == 1 ? "" : "s");
  if (!p->n_groups && !p->n_runs)
    g_string_append(s, ", one at a time");
  for (int i = 0; i < p->n_steps; i++) {
    if (!p->group_end[i])
      continue;
    g_string_append(s, "; at once: ");
    for (int j = i; j < p->group_end[i]; j++)
      g_string_append_printf(s, "%s%s", j > i ? ", " : "", ts__graph_node(e->graph, p->steps[j])->name);
  }
  for (int r = 0; r < p->n_runs; r++) {
    const row_run *run = &p->runs[r];
    int n = 0, first = -1, last = -1;
    for (int t = run->first; t < run->end; t++)
      if (p->row_step[t])
        n++, last = t, first = first < 0 ? t : first;
    g_string_append_printf(s, "; by rows of %" G_GINT64_FORMAT ": %d ops (%s .. %s)", run->rows, n,
                           ts__graph_node(e->graph, p->steps[first])->name,
                           ts__graph_node(e->graph, p->steps[last])->name);
  }
  return g_string_free(s, FALSE);
}
