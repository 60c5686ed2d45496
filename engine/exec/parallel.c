/* parallel.c — the parts of a run that go to the engine's pool.
 *
 * Groups (schedule.c): each step of a group on the thread that claims it,
 * with a scope and planned outputs of its own.
 *
 * Row runs (rows.c): each part runs every row step of the run on its rows,
 * in an arena of its own (the plan's buffers, each holding the part's
 * rows: the sequential liveness holds within a part), reading the run's
 * inputs through row-slice headers and copying its rows of the run's exits
 * into tensors made before the split.
 *
 * Watching does not change what runs: each piece runs with its call's run
 * state (its run id, concrete function, the sequence numbers the call
 * reserved for it: a group's step i the i-th after the call's last, a row
 * run's k-th row step the k-th in every part) and the calling thread's
 * observer, and the thread that runs it delivers its events, under the
 * call's lock (listener.c) where pieces may run at once, so a listener
 * hears one call's events one at a time.  A row run's step is an event per part, each on the thread that
 * ran it with that part's rows as outputs, all with the step's seq and
 * node: a profile shows the parts side by side on their threads.  The
 * reads a row run makes itself are numbered as made and told once the
 * parts are out: to listeners by the parts, which share them out before
 * their rows (a model's reads are two thirds of its events: told by the
 * calling thread alone, they had the parts wait for it), to the observer by the
 * calling thread before its part, where it files them in order.  What
 * still runs every step on the calling thread, one by one (executable.c):
 * op handlers, an op watch, a device scope, muted ops, and whatever asks
 * for it (ts_context.serial: a debug session, the divergence finder). */
#include "run.h"

#include <string.h>

/* What a piece of a call run on the pool takes from the call. */
typedef struct caller {
  pthread_t thread;
  uint64_t run_id, seq; /* seq: the call's before the pieces (theirs follow it) */
  const ts_concrete *concrete;
  ts_op_observer *observer;
  pthread_mutex_t lock;     /* the call's events are delivered under it */
  pthread_mutex_t *deliver; /* it, or the one the calling thread delivers under already */
} caller;

static void caller_init(caller *k, int64_t n_pieces)
{
  ts_context *c = ts__context();
  *k = (caller){ .thread = pthread_self(), .run_id = c->run.run_id, .seq = c->run.seq,
                 .concrete = c->run.concrete, .observer = c->observer };
  pthread_mutexattr_t attr; /* spins a little before sleeping: callbacks are short */
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
  pthread_mutex_init(&k->lock, &attr);
  pthread_mutexattr_destroy(&attr);
  pthread_mutex_t *outer = ts__listeners_deliver_under(NULL); /* read, then put back */
  ts__listeners_deliver_under(outer);
  /* Pieces that will run one after another on this thread (one, or no
   * pool to share them: ts__parallel_for runs them inline) deliver as
   * the call does, without the lock. */
  bool at_once = n_pieces > 1 && ts__pool_width() > 1;
  k->deliver = outer ? outer : at_once ? &k->lock : NULL;
}

/* After the pieces: the calling thread's numbering goes on after the n
 * sequence numbers they took. */
static void caller_done(caller *k, int n)
{
  ts__context()->run.seq = k->seq + (uint64_t)n;
  ts__op_stamp_forget(); /* it may have waited for the others' pieces since its own last op */
  if (k->observer && k->observer->pieces_done)
    k->observer->pieces_done(k->observer);
  pthread_mutex_destroy(&k->lock);
}

/* What this thread's context was before it took up a piece of k's call. */
typedef struct acting {
  uint64_t run_id, seq;
  const ts_concrete *concrete;
  ts_op_observer *observer;
  pthread_mutex_t *deliver;
} acting;

static acting act_for(const caller *k)
{
  ts_context *c = ts__context();
  acting was = { c->run.run_id, c->run.seq, c->run.concrete, c->observer,
                 ts__listeners_deliver_under(k->deliver) };
  ts__op_stamp_forget(); /* its piece does not follow what it ran before */
  c->run.run_id = k->run_id;
  c->run.concrete = k->concrete;
  c->observer = k->observer;
  return was;
}

static void act_done(const acting *was)
{
  ts_context *c = ts__context();
  c->run.run_id = was->run_id;
  c->run.seq = was->seq;
  c->run.concrete = was->concrete;
  c->observer = was->observer;
  ts__listeners_deliver_under(was->deliver);
}

/* The next op this thread runs for k's call is the call's seq + 1 + i. */
static void act_seq(const caller *k, int i)
{
  ts__context()->run.seq = k->seq + (uint64_t)i;
}

/* Counts a piece of work done on another thread than its call's. */
static void count_shared(const ts_executable *e, const caller *k)
{
  if (!pthread_equal(pthread_self(), k->thread))
    __atomic_add_fetch(&((ts_executable *)e)->n_shared, 1, __ATOMIC_RELAXED);
}

/* After n items on the pool: true when all went well; else the first
 * failure's error (in item order) is this thread's, the others' dropped. */
static bool items_done(int n, const bool *ok, ts_error **error)
{
  bool all = true;
  for (int i = 0; i < n; i++) {
    if (!ok[i] && all)
      ts__error_put(error[i]);
    else
      ts_error_free(error[i]);
    all = all && ok[i];
  }
  return all;
}

/* ---- planning row runs ---------------------------------------------------------------- */

/* Adds v to list (n entries) unless it is there; false when it is in
 * `other` (read both whole and by rows: the run is not split). */
static bool add_value(int *list, int *n, const int *other, int n_other, int v)
{
  for (int i = 0; i < n_other; i++)
    if (other[i] == v)
      return false;
  for (int i = 0; i < *n; i++)
    if (list[i] == v)
      return true;
  list[(*n)++] = v;
  return true;
}

/* Is input i of a row step read by rows (rows.c's rules)? */
static bool read_by_rows(const ts_graph *g, const ts_node *n, int i)
{
  if (n->op == TS_OP_MATMUL || n->op == TS_OP_FUSED_MATMUL || n->op == TS_OP_FLATTEN)
    return i == 0;
  const ts_info *in = &ts__graph_node(g, n->inputs[i].node)->outputs[n->inputs[i].index];
  return in->shape.rank == n->outputs[0].shape.rank && in->shape.dim[0] == n->outputs[0].shape.dim[0];
}

void ts__exec_plan_row_runs(const ts_graph *g, plan *p, const ts_exec_layout *l)
{
  int ns = p->n_steps ? p->n_steps : 1, nv = p->n_values ? p->n_values : 1;
  int *rows_end = g_new(int, ns);
  int64_t *rows_of = g_new(int64_t, ns);
  p->row_step = g_new0(bool, ns);
  p->run_at = g_new0(int, ns);
  p->made_by_run = g_new0(bool, nv);
  int n = ts__row_runs(g, l, p->fast_read, rows_end, rows_of, p->row_step);
  p->runs = g_new0(row_run, n ? n : 1);
  bool *read_after = g_new0(bool, nv); /* by a step after the run, or an output */
  for (int s = 0; s < p->n_steps; s++) {
    if (!rows_end[s])
      continue;
    row_run *r = &p->runs[p->n_runs];
    *r = (row_run){ .first = s, .end = rows_end[s], .rows = rows_of[s] };
    int cap = 0;
    for (int t = r->first; t < r->end; t++)
      cap += ts__graph_node(g, p->steps[t])->n_inputs + 1;
    r->borrowed = g_new(int, cap);
    r->sliced = g_new(int, cap);
    r->exits = g_new(int, cap);
    bool ok = true;
    for (int t = r->first; t < r->end && ok; t++) {
      const ts_node *node = ts__graph_node(g, p->steps[t]);
      if (!p->row_step[t])
        continue;
      for (int i = 0; i < node->n_outputs; i++)
        p->made_by_run[p->step_first[t] + i] = true;
      for (int i = 0; i < node->n_inputs && ok; i++) {
        int v = p->offset[node->inputs[i].node] + node->inputs[i].index;
        if (p->made_by_run[v])
          continue;
        ok = read_by_rows(g, node, i)
               ? add_value(r->sliced, &r->n_sliced, r->borrowed, r->n_borrowed, v)
               : add_value(r->borrowed, &r->n_borrowed, r->sliced, r->n_sliced, v);
      }
    }
    memset(read_after, 0, sizeof *read_after * (size_t)nv);
    for (int t = r->end; t < p->n_steps; t++) {
      const ts_node *node = ts__graph_node(g, p->steps[t]);
      for (int i = 0; i < node->n_inputs; i++)
        read_after[p->offset[node->inputs[i].node] + node->inputs[i].index] = true;
    }
    for (guint i = 0; i < g->outputs->len; i++) {
      ts_port port = g_array_index(g->outputs, ts_port, i);
      read_after[p->offset[port.node] + port.index] = true;
    }
    for (int t = r->first; t < r->end; t++)
      for (int i = 0; p->row_step[t] && i < p->step_n[t]; i++)
        if (read_after[p->step_first[t] + i])
          r->exits[r->n_exits++] = p->step_first[t] + i;
    if (ok && r->n_sliced <= MAX_SLICED) {
      p->run_at[s] = ++p->n_runs;
      continue;
    }
    for (int t = r->first; t < r->end; t++) { /* not split after all */
      for (int i = 0; p->row_step[t] && i < p->step_n[t]; i++)
        p->made_by_run[p->step_first[t] + i] = false;
      p->row_step[t] = false;
    }
    g_free(r->borrowed);
    g_free(r->sliced);
    g_free(r->exits);
  }
  g_free(read_after);
  g_free(rows_end);
  g_free(rows_of);
}

/* ---- groups ------------------------------------------------------------------------ */

typedef struct group_run {
  ts_executable *e;
  ts_arena *arena;
  ts_tensor **values;
  ts_tensor *const *inputs;
  int first;
  const ts_node *parent;
  uint64_t parent_seq;
  caller call;
  bool ok[MAX_GROUP];
  ts_error *error[MAX_GROUP]; /* what a failed step set, on its thread */
} group_run;

static void group_item(void *ctx, int64_t i)
{
  group_run *r = ctx;
  const plan *p = &r->e->plan;
  int s = r->first + (int)i, base = p->step_first[s];
  const ts_node *node = ts__graph_node(r->e->graph, p->steps[s]);
  acting was = act_for(&r->call);
  act_seq(&r->call, (int)i);
  r->ok[i] = ts__exec_step(r->e, node, r->values, r->inputs, ts__arena_scope(r->arena, (int)i),
                           ts__arena_step(r->arena, (int)i, base, p->step_n[s]), &r->values[base],
                           r->parent, r->parent_seq);
  if (!r->ok[i])
    r->error[i] = ts_error_take();
  act_done(&was);
  count_shared(r->e, &r->call);
}

bool ts__exec_group(const ts_executable *e, ts_arena *arena, ts_tensor **values,
                      ts_tensor *const *inputs, int first, int end, const ts_node *parent,
                      uint64_t parent_seq)
{
  group_run r = { .e = (ts_executable *)e, .arena = arena, .values = values, .inputs = inputs,
                  .first = first, .parent = parent, .parent_seq = parent_seq };
  caller_init(&r.call, end - first);
  ts__parallel_for(end - first, group_item, &r);
  caller_done(&r.call, end - first);
  return items_done(end - first, r.ok, r.error);
}

/* ---- row runs ----------------------------------------------------------------------- */

typedef struct run_read {
  int step;
  uint64_t seq;
} run_read;

typedef struct rows_job {
  const ts_executable *e;
  const row_run *run;
  ts_tensor **values;
  ts_tensor *const *inputs;
  const ts_node *parent;
  uint64_t parent_seq;
  caller call;
  /* The reads the run made itself, not yet told (read steps and their
   * seqs): the parts tell the listeners of them before their rows, taking
   * READS_TAKEN at a time while any are left (the calling thread starts
   * on them while the pool's wakes up), and the calling thread tells the
   * observer (which files them on it, in order) before its own part */
  const run_read *reads;
  int n_reads;
  int next_read;      /* atomic: the first not taken */
  bool observer_told; /* the calling thread's alone */
  int parts;
  bool ok[TS_MAX_THREADS];
  ts_error *error[TS_MAX_THREADS];
} rows_job;

/* Bytes per row of t, a value of the run's batch. */
static int64_t row_bytes(const ts_tensor *t, int64_t rows)
{
  return t->size / rows * (int64_t)ts_dtype_size(t->dtype);
}

/* Part `part` of a row run: its rows of every row step, in an arena of
 * its own (the plan's buffers, each holding this part's rows), its rows
 * of the exits copied into theirs. */
static bool run_part(rows_job *job, int part, ts_arena *pa)
{
  const ts_executable *e = job->e;
  const plan *p = &e->plan;
  const row_run *run = job->run;
  int64_t r0 = run->rows * part / job->parts, r1 = run->rows * (part + 1) / job->parts;
  ts_tensor **pv = ts__arena_values(pa);
  ts_tensor slice[MAX_SLICED];
  for (int i = 0; i < run->n_borrowed; i++)
    pv[run->borrowed[i]] = job->values[run->borrowed[i]];
  for (int i = 0; i < run->n_sliced; i++) {
    ts_tensor *full = job->values[run->sliced[i]];
    int64_t line = row_bytes(full, run->rows);
    slice[i] = (ts_tensor){ .refcount = 1, .dtype = full->dtype, .shape = full->shape,
                            .size = full->size / run->rows * (r1 - r0),
                            .data = (char *)full->data + r0 * line, .backend = full->backend,
                            .buffer = full->buffer };
    slice[i].shape.dim[0] = r1 - r0;
    pv[run->sliced[i]] = &slice[i];
  }
  ts__tune_rows = run->rows;
  bool ok = true;
  for (int s = run->first, k = 0; s < run->end && ok; s++) {
    if (!p->row_step[s])
      continue;
    act_seq(&job->call, k++);
    int base = p->step_first[s];
    ok = ts__exec_step(e, ts__graph_node(e->graph, p->steps[s]), pv, job->inputs,
                       ts__arena_scope(pa, 0), ts__arena_step(pa, 0, base, p->step_n[s]), &pv[base],
                       job->parent, job->parent_seq);
    for (int r = p->rel_start[s]; r < p->rel_start[s + 1]; r++) {
      int v = p->rel_values[r];
      bool exit = false;
      for (int i = 0; i < run->n_exits; i++)
        exit |= run->exits[i] == v;
      if (p->made_by_run[v] && !exit) {
        ts__arena_release(pa, v, pv[v]);
        pv[v] = NULL;
      }
    }
  }
  ts__tune_rows = 0;
  for (int i = 0; i < run->n_exits && ok; i++) {
    int v = run->exits[i];
    ts_tensor *full = job->values[v];
    int64_t line = row_bytes(full, run->rows);
    memcpy((char *)full->data + r0 * line, pv[v]->data, (size_t)((r1 - r0) * line));
  }
  for (int s = run->first; s < run->end; s++)
    for (int v = p->step_first[s]; p->row_step[s] && v < p->step_first[s] + p->step_n[s]; v++) {
      ts__arena_release(pa, v, pv[v]);
      pv[v] = NULL;
    }
  for (int i = 0; i < run->n_borrowed; i++) /* the run's, not this arena's */
    pv[run->borrowed[i]] = NULL;
  for (int i = 0; i < run->n_sliced; i++)
    pv[run->sliced[i]] = NULL;
  return ok;
}

#define READS_TAKEN 16

/* Tells reads [from, to) of the run to whom `to_whom` says, if anyone
 * there wants them. */
static void tell_reads(const rows_job *job, int from, int to, int to_whom)
{
  const ts_context *c = ts__context();
  if (c->mute || !c->observer)
    to_whom &= ~TS_TELL_OBSERVER;
  if (c->mute || !(__atomic_load_n(&ts__listener_mask, __ATOMIC_RELAXED) & TS__OP_EVENTS))
    to_whom &= ~TS_TELL_LISTENERS;
  if (!to_whom || from >= to)
    return;
  ts_announcements q;
  ts__announce_init(&q, to_whom);
  for (int i = from; i < to; i++)
    ts__exec_tell_read(job->e, job->values, job->reads[i].step, job->reads[i].seq, &q,
                       job->parent, job->parent_seq);
  ts__announce_flush(&q);
}

static void rows_item(void *ctx, int64_t part)
{
  rows_job *job = ctx;
  acting was = act_for(&job->call);
  if (pthread_equal(pthread_self(), job->call.thread) && !job->observer_told) {
    job->observer_told = true;
    tell_reads(job, 0, job->n_reads, TS_TELL_OBSERVER);
  }
  /* under the call's lock, as the part's own events */
  int from;
  while ((from = __atomic_fetch_add(&job->next_read, READS_TAKEN, __ATOMIC_RELAXED)) < job->n_reads)
    tell_reads(job, from, MIN(from + READS_TAKEN, job->n_reads), TS_TELL_LISTENERS);
  ts_arena *pa = ts__planner_take(job->e->planner);
  bool ok = pa != NULL;
  if (pa) {
    ts__arena_set_part(pa);
    ok = run_part(job, (int)part, pa);
    ts__planner_give(job->e->planner, pa, ok);
  }
  act_done(&was);
  job->ok[part] = ok;
  if (!ok)
    job->error[part] = ts_error_take();
  count_shared(job->e, &job->call);
}

/* Makes the whole of exit v (step s's output i) for the parts to fill. */
static ts_tensor *exit_tensor(const ts_executable *e, ts_arena *arena, ts_scope *scope, int s, int i)
{
  const plan *p = &e->plan;
  const ts_node *node = ts__graph_node(e->graph, p->steps[s]);
  const ts_backend *cpu = ts_backend_cpu();
  ts__scope_enter(scope);
  ts_planned *pl = ts__arena_step(arena, 0, p->step_first[s], p->step_n[s]);
  ts_tensor *t = pl ? pl->take(pl, i, cpu, &node->outputs[i]) : NULL;
  if (!t)
    t = ts__tensor_alloc_on(node->loc, cpu, node->outputs[i].dtype, node->outputs[i].shape);
  ts_tensor_ref(t);
  ts__scope_leave(scope);
  return t;
}

bool ts__exec_rows(const ts_executable *e, ts_arena *arena, ts_tensor **values,
                     ts_tensor *const *inputs, const row_run *run, ts_scope *scope,
                     bool watched, const ts_node *parent, uint64_t parent_seq)
{
  const plan *p = &e->plan;
  ts_tensor *store;
  /* The reads made here, numbered as made and told with the parts
   * (rows_item), or before a step that runs here */
  run_read *reads = watched ? g_new(run_read, run->end - run->first) : NULL;
  rows_job job = { .e = e, .run = run, .values = values, .inputs = inputs, .parent = parent,
                   .parent_seq = parent_seq, .reads = reads,
                   .parts = (int)MIN(ts__pool_width(), run->rows / TS_MIN_PART_ROWS) };
  int n_row = 0;
  bool ok = true;
  for (int s = run->first; s < run->end && ok; s++) {
    n_row += p->row_step[s];
    if (p->row_step[s])
      continue;
    int base = p->step_first[s];
    if ((store = ts__exec_fast_read(e, values, s, NULL, parent, parent_seq))) {
      values[base] = ts_tensor_ref(store);
      if (reads)
        reads[job.n_reads++] = (run_read){ s, ++ts__context()->run.seq };
      continue;
    }
    tell_reads(&job, 0, job.n_reads, TS_TELL_ALL);
    job.n_reads = 0;
    ok = ts__exec_step(e, ts__graph_node(e->graph, p->steps[s]), values, inputs, scope,
                       ts__arena_step(arena, 0, base, p->step_n[s]), &values[base], parent,
                       parent_seq);
  }
  for (int i = 0; i < run->n_exits && ok; i++) {
    int v = run->exits[i], s = run->first;
    while (p->step_first[s] + p->step_n[s] <= v)
      s++;
    ok = (values[v] = exit_tensor(e, arena, scope, s, v - p->step_first[s])) != NULL;
  }
  if (!ok) {
    tell_reads(&job, 0, job.n_reads, TS_TELL_ALL);
    g_free(reads);
    return false;
  }
  caller_init(&job.call, job.parts);
  ts__parallel_for(job.parts, rows_item, &job);
  if (!job.observer_told) /* this thread took no part: now */
    tell_reads(&job, 0, job.n_reads, TS_TELL_OBSERVER);
  caller_done(&job.call, n_row);
  g_free(reads);
  return items_done(job.parts, job.ok, job.error);
}

