/* test-listeners.c — listeners under concurrency (also built with
 * ThreadSanitizer: `make tsan`).  Callbacks run outside any lock: adding
 * and removing listeners while other threads' ops emit events is safe; a
 * listener that blocks (a debugger pause) blocks neither registration nor
 * other threads' ops; removal returns only once no other thread is inside
 * the removed callback.  No fixed waits: threads meet on conditions, with
 * a generous timeout only as a safety net. */
#include <glib.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <tracescope.h>

#define SAFETY_NET_S 60

static void count_event(const ts_event *ev, void *data)
{
  __atomic_add_fetch((int *)data, 1, __ATOMIC_RELAXED);
}

/* ---- ops on several threads while listeners come and go -------------------------------- */

typedef struct churn {
  int stop;      /* atomic */
  int ops_done;  /* atomic */
} churn;

static gpointer run_ops(gpointer data)
{
  churn *c = data;
  ts_tensor *x = ts_ones(TS_F32, TS_SHAPE(4, 4));
  while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
    ts_scope *s = ts_scope_begin();
    ts_add(ts_mul(x, x), x);
    ts_scope_end(s);
    __atomic_add_fetch(&c->ops_done, 2, __ATOMIC_RELAXED);
  }
  ts_release_all();
  return NULL;
}

static void test_add_remove_while_emitting(void)
{
  churn c = { 0 };
  GThread *threads[3];
  for (int i = 0; i < 3; i++)
    threads[i] = g_thread_new("ops", run_ops, &c);
  int heard = 0;
  for (int round = 0; round < 2000; round++) {
    int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_BEGIN) | TS_EVENT_MASK(TS_EVENT_OP_END),
                             count_event, &heard);
    g_assert_cmpint(id, >, 0);
    ts_listener_remove(id);
  }
  /* and one that stays until the threads have been heard */
  int steady = 0;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), count_event, &steady);
  gint64 deadline = g_get_monotonic_time() + SAFETY_NET_S * G_TIME_SPAN_SECOND;
  while (__atomic_load_n(&steady, __ATOMIC_RELAXED) < 1000 && g_get_monotonic_time() < deadline)
    g_thread_yield();
  ts_listener_remove(id);
  int after = __atomic_load_n(&steady, __ATOMIC_RELAXED);
  g_assert_cmpint(after, >=, 1000);
  __atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < 3; i++)
    g_thread_join(threads[i]);
  /* removed: never called again */
  g_assert_cmpint(__atomic_load_n(&steady, __ATOMIC_RELAXED), ==, after);
  g_assert_cmpint(c.ops_done, >, 0);
}

/* ---- a listener that blocks -------------------------------------------------------------- */

/* pthread's locks, not GLib's: ThreadSanitizer sees them. */
typedef struct pause {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool paused;     /* the op thread is inside the callback */
  bool resume;     /* set by the test to let it go */
  bool finished;   /* the callback returned */
  int pauser_id;
} pause_state;

static void pausing_listener(const ts_event *ev, void *data)
{
  pause_state *p = data;
  pthread_mutex_lock(&p->lock);
  if (p->paused) { /* pause the first op only */
    pthread_mutex_unlock(&p->lock);
    return;
  }
  p->paused = true;
  pthread_cond_broadcast(&p->cond);
  while (!p->resume)
    pthread_cond_wait(&p->cond, &p->lock);
  p->finished = true;
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
}

static gpointer one_op(gpointer data)
{
  ts_scope *s = ts_scope_begin();
  ts_relu(ts_ones(TS_F32, TS_SHAPE(2)));
  ts_scope_end(s);
  ts_release_all();
  return NULL;
}

static bool wait_for(pause_state *p, bool *flag)
{
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += SAFETY_NET_S;
  pthread_mutex_lock(&p->lock);
  while (!*flag && pthread_cond_timedwait(&p->cond, &p->lock, &deadline) == 0)
    ;
  bool ok = *flag;
  pthread_mutex_unlock(&p->lock);
  return ok;
}

typedef struct removal {
  int id;
  pause_state *p;
  bool callback_finished_first;
} removal;

static gpointer remove_listener(gpointer data)
{
  removal *r = data;
  ts_listener_remove(r->id);
  pthread_mutex_lock(&r->p->lock);
  r->callback_finished_first = r->p->finished;
  pthread_mutex_unlock(&r->p->lock);
  return NULL;
}

static void test_blocking_listener(void)
{
  pause_state p = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
  p.pauser_id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_BEGIN), pausing_listener, &p);
  GThread *paused = g_thread_new("paused", one_op, NULL);
  g_assert_true(wait_for(&p, &p.paused));

  /* While it is paused: registration and other threads' ops go on. */
  int heard = 0;
  for (int i = 0; i < 100; i++) {
    int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), count_event, &heard);
    g_assert_cmpint(id, >, 0);
    ts_listener_remove(id);
  }
  int other = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), count_event, &heard);
  GThread *t = g_thread_new("other", one_op, NULL); /* the pauser lets it pass: paused once */
  g_thread_join(t);
  g_assert_cmpint(__atomic_load_n(&heard, __ATOMIC_RELAXED), >, 0);
  ts_listener_remove(other);

  /* Removing the paused listener waits for its callback to return. */
  removal r = { p.pauser_id, &p, false };
  GThread *remover = g_thread_new("remover", remove_listener, &r);
  pthread_mutex_lock(&p.lock);
  p.resume = true;
  pthread_cond_broadcast(&p.cond);
  pthread_mutex_unlock(&p.lock);
  g_thread_join(remover);
  g_assert_true(r.callback_finished_first);
  g_thread_join(paused);
  pthread_mutex_destroy(&p.lock);
  pthread_cond_destroy(&p.cond);
}

/* ---- callbacks inside callbacks ---------------------------------------------------------- */

#define NEST_DEPTH 7 /* deeper than a thread's record holds (listener.c's NEST) */

typedef struct nesting {
  pause_state p;
  ts_tensor *x;
  int depth;  /* the op thread's only */
  bool done;  /* the op thread's only */
} nesting;

/* Runs an op from its callback, whose event calls it again, NEST_DEPTH
 * deep; pauses at the bottom; says `finished` as the outermost returns. */
static void nesting_listener(const ts_event *ev, void *data)
{
  nesting *n = data;
  if (n->done)
    return;
  if (n->depth < NEST_DEPTH) {
    n->depth++;
    ts_scope *s = ts_scope_begin();
    ts_relu(n->x);
    ts_scope_end(s);
    if (--n->depth == 0) {
      n->done = true;
      pthread_mutex_lock(&n->p.lock);
      n->p.finished = true;
      pthread_mutex_unlock(&n->p.lock);
    }
    return;
  }
  pthread_mutex_lock(&n->p.lock);
  n->p.paused = true;
  pthread_cond_broadcast(&n->p.cond);
  while (!n->p.resume)
    pthread_cond_wait(&n->p.cond, &n->p.lock);
  pthread_mutex_unlock(&n->p.lock);
}

/* A callback whose ops call it again, deeper than the thread's record of
 * the listeners it is inside: removal from another thread still waits for
 * the outermost call to return. */
static void test_nested_removal(void)
{
  nesting n = { .p = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER },
                .x = ts_ones(TS_F32, TS_SHAPE(2)) };
  n.p.pauser_id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), nesting_listener, &n);
  GThread *paused = g_thread_new("nested", one_op, NULL);
  g_assert_true(wait_for(&n.p, &n.p.paused));
  removal r = { n.p.pauser_id, &n.p, false };
  GThread *remover = g_thread_new("remover", remove_listener, &r);
  pthread_mutex_lock(&n.p.lock);
  n.p.resume = true;
  pthread_cond_broadcast(&n.p.cond);
  pthread_mutex_unlock(&n.p.lock);
  g_thread_join(remover);
  g_assert_true(r.callback_finished_first);
  g_thread_join(paused);
  pthread_mutex_destroy(&n.p.lock);
  pthread_cond_destroy(&n.p.cond);
  ts_release_all();
}

/* ---- threads that come and go --------------------------------------------------------- */

/* Each thread that hears events takes a record of the listeners it is
 * inside and gives it back as it ends: many short threads later, every
 * op was heard and removal does not wait for any of them. */
static void test_threads_come_and_go(void)
{
  int heard = 0;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), count_event, &heard);
  for (int round = 0; round < 8; round++) {
    GThread *threads[8];
    for (int i = 0; i < 8; i++)
      threads[i] = g_thread_new("short", one_op, NULL);
    for (int i = 0; i < 8; i++)
      g_thread_join(threads[i]);
  }
  ts_listener_remove(id);
  g_assert_cmpint(heard, ==, 64 * 2); /* ones and relu */
}

/* ---- a listener removing itself ----------------------------------------------------------- */

static int self_id, self_calls;

static void remove_self(const ts_event *ev, void *data)
{
  self_calls++;
  ts_listener_remove(self_id);
}

static void test_remove_self(void)
{
  self_id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), remove_self, NULL);
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = ts_ones(TS_I32, TS_SHAPE(3));
  ts_add(x, x);
  ts_add(x, x);
  ts_scope_end(s);
  g_assert_cmpint(self_calls, ==, 1);
}

/* ---- slots come back ------------------------------------------------------------------- */

#define MAX_LISTENERS 32 /* engine/listener.c */

static void run_one_add(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = ts_ones(TS_I32, TS_SHAPE(3));
  ts_add(x, x);
  ts_scope_end(s);
}

/* Removed listeners give their places back, a listener that removed itself
 * once its callback has returned; a stale id never removes the listener
 * that took its place. */
static void test_slots_reused(void)
{
  for (int round = 0; round < 3; round++) {
    self_calls = 0;
    self_id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), remove_self, NULL);
    run_one_add();
    g_assert_cmpint(self_calls, ==, 1);
    int ids[MAX_LISTENERS], heard = 0;
    for (int i = 0; i < MAX_LISTENERS; i++) {
      ids[i] = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), count_event, &heard);
      g_assert_cmpint(ids[i], >, 0);
    }
    g_assert_cmpint(ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), count_event, &heard), ==, 0);
    ts_error *e = ts_error_take();
    g_assert_nonnull(e);
    g_assert_nonnull(strstr(e->message, "too many listeners"));
    ts_error_free(e);
    ts_listener_remove(self_id); /* stale: its slot holds another listener now */
    run_one_add(); /* each of them hears each op */
    int per_listener = heard / MAX_LISTENERS;
    g_assert_cmpint(per_listener, >, 0);
    g_assert_cmpint(heard, ==, per_listener * MAX_LISTENERS);
    for (int i = 0; i < MAX_LISTENERS; i++)
      ts_listener_remove(ids[i]);
    run_one_add();
    g_assert_cmpint(heard, ==, per_listener * MAX_LISTENERS);
  }
}

/* ---- op times -------------------------------------------------------------------------- */

typedef struct times {
  int n;
  uint64_t before[4096], start[4096], end[4096], after[4096];
} times;

static void keep_times(const ts_event *ev, void *data)
{
  times *t = data;
  if (t->n < 4096) {
    t->start[t->n] = ev->op.start_ns;
    t->end[t->n] = ev->op.end_ns;
  }
}

/* Op events are stamped on CLOCK_MONOTONIC (through the TSC where the
 * kernel's clock is the TSC, op_clock.h): within a few ns of ts_now_ns
 * read around each op, never going back, over many milliseconds (the op
 * clock re-anchors about every millisecond). */
static void test_op_times(void)
{
  static times t;
  t.n = 0;
  ts_tensor *x = ts_ones(TS_F32, TS_SHAPE(64, 64));
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), keep_times, &t);
  uint64_t until = ts_now_ns() + 30 * 1000000u;
  while (t.n < 4096 && (t.n < 16 || ts_now_ns() < until)) {
    ts_scope *s = ts_scope_begin();
    t.before[t.n] = ts_now_ns();
    ts_matmul(x, x);
    t.after[t.n] = ts_now_ns();
    ts_scope_end(s);
    t.n++;
  }
  ts_listener_remove(id);
  const int64_t slack = 1000; /* ns: far more than the clock's error, far less than a matmul */
  int64_t worst = 0;
  for (int i = 0; i < t.n; i++) {
    g_assert_cmpuint(t.start[i], <=, t.end[i]);
    if (i > 0)
      g_assert_cmpuint(t.end[i - 1], <=, t.start[i]);
    worst = MAX(worst, MAX((int64_t)(t.before[i] - t.start[i]), (int64_t)(t.end[i] - t.after[i])));
  }
  g_test_message("%d ops; op times at most %" G_GINT64_FORMAT " ns outside ts_now_ns", t.n, worst);
  g_assert_cmpint(worst, <=, slack);
  ts_release_all();
}

/* ---- a run's own reads -------------------------------------------------------------------- */

typedef struct stamps {
  int n;
  pthread_t thread[64];
  uint64_t seq[64], start[64], end[64];
  int op[64];
} stamps;

static void keep_stamps(const ts_event *ev, void *data)
{
  stamps *t = data;
  if (t->n < 64) {
    t->thread[t->n] = pthread_self();
    t->seq[t->n] = ev->op.seq;
    t->op[t->n] = ev->op.op;
    t->start[t->n] = ev->op.start_ns;
    t->end[t->n++] = ev->op.end_ns;
  }
}

static ts_tensor *read_w, *read_b;

static ts_tensor *dense_twice(ts_call *c)
{
  ts_tensor *h = ts_arg(c, 0);
  for (int i = 0; i < 2; i++)
    h = ts_relu(ts_add(ts_matmul(h, ts_read(read_w)), ts_read(read_b)));
  return h;
}

/* A variable read the run makes itself takes no time: right after a step
 * of the same run on the same thread it is stamped with that step's end
 * (no clock reading), else with a reading of its own, never with a stamp
 * left from an earlier call. */
static void test_read_stamps(void)
{
  ts_scope *scope = ts_scope_begin();
  int threads = ts_get_threads();
  ts_set_threads(1);
  read_w = ts_variable_new(ts_ones(TS_F32, TS_SHAPE(8, 8)), "w");
  read_b = ts_variable_new(ts_ones(TS_F32, TS_SHAPE(8)), "b");
  ts_function *fn = ts_function_new("dense_twice", dense_twice, "x");
  ts_value arg = TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(4, 8)));
  g_assert_nonnull(ts_function_call(fn, &arg, 1)); /* traced */
  static stamps t;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), keep_stamps, &t);
  int reads = 0, following = 0;
  for (int call = 0; call < 2; call++) {
    t.n = 0;
    uint64_t before = ts_now_ns();
    g_assert_nonnull(ts_function_call(fn, &arg, 1));
    uint64_t after = ts_now_ns();
    g_assert_cmpint(t.n, >, 0);
    for (int i = 0; i < t.n; i++) {
      g_assert_cmpuint(t.start[i], >=, before - 1000); /* the op clock's slack, as above */
      g_assert_cmpuint(t.end[i], <=, after + 1000);
      if (t.op[i] != TS_OP_READ_VARIABLE)
        continue;
      reads++;
      g_assert_cmpuint(t.start[i], ==, t.end[i]);
      if (i > 0 && t.seq[i - 1] + 1 == t.seq[i] && pthread_equal(t.thread[i - 1], t.thread[i])) {
        following++;
        g_assert_cmpuint(t.start[i], ==, t.end[i - 1]);
      }
    }
  }
  ts_listener_remove(id);
  g_assert_cmpint(reads, ==, 8);
  g_assert_cmpint(following, >, 0);
  ts_function_free(fn);
  ts_tensor_unref(read_w);
  ts_tensor_unref(read_b);
  ts_set_threads(threads);
  ts_scope_end(scope);
  ts_release_all();
}

/* Reads a run makes itself one after another reach each listener together
 * (ts__announce_flush): still every one, a begin before its end, in seq
 * order, with the variable as input and a value as output; a listener
 * that removes itself on the first hears no more of them, the others all. */
static ts_tensor *read_vars[4];

static ts_tensor *sum_of_reads(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *a = ts_add(ts_read(read_vars[0]), ts_read(read_vars[1]));
  ts_tensor *b = ts_add(ts_read(read_vars[2]), ts_read(read_vars[3]));
  return ts_add(x, ts_add(a, b));
}

typedef struct heard {
  int n;
  int kind[64];
  uint64_t seq[64];
  const void *data[64]; /* a read's output's */
} heard;

static void keep_reads(const ts_event *ev, void *data)
{
  heard *h = data;
  if (ev->op.op != TS_OP_READ_VARIABLE || h->n == 64)
    return;
  g_assert_cmpint(ev->op.n_inputs, ==, 1);
  bool variable = false;
  for (int v = 0; v < 4; v++)
    variable |= ev->op.inputs[0] == read_vars[v];
  g_assert_true(variable);
  h->kind[h->n] = ev->kind;
  h->seq[h->n] = ev->op.seq;
  h->data[h->n++] = ev->kind == TS_EVENT_OP_END ? ts_tensor_data(ev->op.outputs[0]) : NULL;
  g_assert_cmpint(ev->op.n_outputs, ==, ev->kind == TS_EVENT_OP_END ? 1 : 0);
}

static int quitter_id, quitter_calls;

static void quit_on_read(const ts_event *ev, void *data)
{
  if (ev->op.op == TS_OP_READ_VARIABLE && quitter_calls++ == 0)
    ts_listener_remove(quitter_id);
}

static void test_read_batches(void)
{
  ts_scope *scope = ts_scope_begin();
  int threads = ts_get_threads();
  ts_set_threads(1);
  for (int i = 0; i < 4; i++)
    read_vars[i] = ts_variable_new(ts_ones(TS_F32, TS_SHAPE(3)), NULL);
  ts_function *fn = ts_function_new("sum_of_reads", sum_of_reads, "x");
  ts_value arg = TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(3)));
  g_assert_nonnull(ts_function_call(fn, &arg, 1)); /* traced */
  static heard both, ends;
  quitter_calls = 0;
  quitter_id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), quit_on_read, NULL);
  int id_both = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_BEGIN) | TS_EVENT_MASK(TS_EVENT_OP_END),
                                keep_reads, &both);
  int id_ends = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), keep_reads, &ends);
  g_assert_nonnull(ts_function_call(fn, &arg, 1));
  ts_listener_remove(id_both);
  ts_listener_remove(id_ends);
  g_assert_cmpint(quitter_calls, ==, 1);
  g_assert_cmpint(both.n, ==, 8);
  g_assert_cmpint(ends.n, ==, 4);
  for (int i = 0; i < 4; i++) {
    g_assert_cmpint(both.kind[2 * i], ==, TS_EVENT_OP_BEGIN);
    g_assert_cmpint(both.kind[2 * i + 1], ==, TS_EVENT_OP_END);
    g_assert_cmpuint(both.seq[2 * i], ==, both.seq[2 * i + 1]);
    g_assert_cmpuint(ends.seq[i], ==, both.seq[2 * i]);
    g_assert_true(ends.data[i] == both.data[2 * i + 1]);
    if (i > 0)
      g_assert_cmpuint(ends.seq[i - 1], <, ends.seq[i]);
    g_assert_nonnull(ends.data[i]);
  }
  ts_function_free(fn);
  for (int i = 0; i < 4; i++)
    ts_tensor_unref(read_vars[i]);
  ts_set_threads(threads);
  ts_scope_end(scope);
  ts_release_all();
}

static void test_bad_arguments(void)
{
  g_assert_cmpint(ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), NULL, NULL), ==, 0);
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_nonnull(strstr(e->message, "ts_listener_add"));
  ts_error_free(e);
  g_assert_cmpint(ts_listener_add(1u << 30, count_event, NULL), ==, 0);
  ts_error_clear();
  ts_listener_remove(0);      /* nothing */
  ts_listener_remove(123456); /* nothing */
}

/* ---- tensor memory ------------------------------------------------------------------------ */

typedef struct memory_log {
  int64_t allocated, released, last_live;
  int n_alloc, n_release;
  bool device_named;
} memory_log;

static void on_memory(const ts_event *ev, void *data)
{
  memory_log *m = data;
  g_assert_cmpint(ev->kind, ==, TS_EVENT_MEMORY);
  if (ev->memory.delta_bytes > 0)
    m->allocated += ev->memory.delta_bytes, m->n_alloc++;
  else
    m->released -= ev->memory.delta_bytes, m->n_release++;
  m->last_live = ev->memory.live_bytes;
  m->device_named = ev->memory.device && strcmp(ev->memory.device, "CPU") == 0;
}

/* What a scope allocates is released when it ends: the deltas balance and
 * live bytes come back to where they were; views add nothing. */
static void test_memory_balances(void)
{
  memory_log m = { 0 };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_MEMORY), on_memory, &m);
  g_assert_cmpint(id, >, 0);
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = ts_ones(TS_F32, TS_SHAPE(64, 64)); /* 16 KiB: a backend buffer */
  ts_tensor *y = ts_add(ts_mul(x, x), ts_ones(TS_F32, TS_SHAPE(64)));
  g_assert_nonnull(y);
  g_assert_nonnull(ts_reshape(y, TS_SHAPE(4096)));
  g_assert_cmpint(m.n_alloc, >=, 4);
  g_assert_cmpint(m.allocated, >=, 3 * 64 * 64 * 4 + 64 * 4);
  int64_t live_in_scope = m.last_live;
  ts_scope_end(s);
  g_assert_cmpint(m.n_release, ==, m.n_alloc);
  g_assert_cmpint(m.released, ==, m.allocated);
  g_assert_cmpint(m.last_live, ==, live_in_scope - m.allocated);
  g_assert_true(m.device_named);
  ts_listener_remove(id);
  ts_release_all();
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/listeners/add-remove-while-emitting", test_add_remove_while_emitting);
  g_test_add_func("/listeners/blocking-listener", test_blocking_listener);
  g_test_add_func("/listeners/nested-removal", test_nested_removal);
  g_test_add_func("/listeners/threads-come-and-go", test_threads_come_and_go);
  g_test_add_func("/listeners/remove-self", test_remove_self);
  g_test_add_func("/listeners/slots-reused", test_slots_reused);
  g_test_add_func("/listeners/op-times", test_op_times);
  g_test_add_func("/listeners/read-stamps", test_read_stamps);
  g_test_add_func("/listeners/read-batches", test_read_batches);
  g_test_add_func("/listeners/bad-arguments", test_bad_arguments);
  g_test_add_func("/listeners/memory-balances", test_memory_balances);
  return g_test_run();
}
