/* health.c — health mode: per op of the watched thread, the NaN/Inf
 * counts of its outputs (and, at TS_HEALTH_STATS, min/max/mean), and the
 * first op that made a NaN or an Inf; eager and graph mode alike, never
 * pausing.  An op observer on the thread (engine-private.h), not an OP_END
 * listener: event delivery takes a lock and reads the clock twice per op,
 * which alone costs more than the 1.3x the 100-layer model allows.  Names
 * and locations are copied once per distinct pointer, so a record costs no
 * allocation; the copies go into one string chunk, and a pointer's first
 * sight takes a slot of a direct-mapped table (a hash table only for the
 * pointers whose slot is taken): a recording's first call of a model
 * meets hundreds of names, and a malloc and a hash insertion each were
 * half of what health mode cost a two-call recording.
 * Constants and variable reads (auxiliary ops) are recorded but not
 * scanned: they pass on a value some earlier op made, and scanning every
 * weight on every read would cost more than the layers' own work.
 *
 * The counts are made where the values are: groups of a graph's ops and
 * the parts of its row runs run on the pool's threads (exec/parallel.c),
 * which tell the observer of what they made, so each thread scans its
 * own outputs (a part its rows).  A pool thread keeps its records aside,
 * under a lock of its own (the parts of a row run end each step together:
 * one shared lock had them queue on it, and sleep, every step), and the
 * calling thread files them once the pieces are done.  Records stay in
 * each run's seq order (a group's steps may end in any order), and a row
 * run's parts of one step add up to one record of the whole step. */
#include "debug-private.h"

#include <pthread.h>

#define INTERN_SLOTS 1024 /* direct-mapped */

/* A record made on a pool's thread, to be filed. */
typedef struct pending {
  ts_health_op r;
  ts_loc loc;
  const ts_node *node, *traced;
} pending;

/* A pool thread's records kept aside. */
typedef struct aside {
  pthread_mutex_t lock; /* its thread's and the filer's only */
  pthread_t thread;
  GArray *records;      /* pending */
} aside;

struct ts_health {
  ts_op_observer observer; /* first: the engine hands it back */
  ts_op_observer *outer;   /* the thread's observer before start */
  pthread_t owner;         /* the thread that started it */
  uint64_t id;             /* unique: a pool thread's cached aside checks it */
  GPtrArray *asides;       /* aside *, under lock */
  pthread_mutex_t lock;    /* guards asides: pool threads add theirs */
  /* The rest is the owner's alone: only it files records (its own, and
   * the pool threads' once their pieces are done). */
  bool recording;
  ts_health_level level;
  GArray *ops;          /* ts_health_op */
  guint run_start;      /* where the records of the last one's run begin (they are in seq order) */
  guint merged;         /* where the last part was merged into its step's record */
  int64_t first;        /* index of the first op with a NaN or Inf; -1 */
  GStringChunk *copies; /* the report's copies of the names */
  struct {
    const char *key, *copy;
  } slots[INTERN_SLOTS]; /* borrowed pointer -> its copy, the first pointer to hash there */
  GHashTable *strings;  /* borrowed pointer -> its copy, for the others (NULL until one) */
  GPtrArray *owned;     /* origins strings */
  const char *last_file, *last_file_copy; /* most ops share their neighbour's file */
};

/* The report's own copy of a string the engine or a module owns. */
static const char *intern(ts_health *h, const char *s)
{
  if (!s)
    return NULL;
  size_t slot = (size_t)(((uintptr_t)s * 0x9e3779b97f4a7c15ull) >> 54); /* 10 bits */
  if (G_LIKELY(h->slots[slot].key == s))
    return h->slots[slot].copy;
  if (!h->slots[slot].key) { /* never evicted: a pointer is copied once */
    h->slots[slot].key = s;
    return h->slots[slot].copy = g_string_chunk_insert(h->copies, s);
  }
  if (!h->strings)
    h->strings = g_hash_table_new(g_direct_hash, g_direct_equal);
  const char *copy = g_hash_table_lookup(h->strings, s);
  if (!copy) {
    copy = g_string_chunk_insert(h->copies, s);
    g_hash_table_insert(h->strings, (gpointer)s, (gpointer)copy);
  }
  return copy;
}

/* Adds the counts of another part of the same step into r. */
static void merge_part(ts_health_op *r, const ts_health_op *part)
{
  ts_tensor_stats all = { r->n_elements, r->n_nan, r->n_inf, 0, r->min, r->max, r->mean, 0 };
  ts_tensor_stats more = { part->n_elements, part->n_nan, part->n_inf, 0, part->min, part->max,
                           part->mean, 0 };
  ts__stats_merge(&all, &more);
  r->n_elements = all.n;
  r->n_nan = all.n_nan;
  r->n_inf = all.n_inf;
  r->min = all.min;
  r->max = all.max;
  r->mean = all.mean;
}

/* Files r (names not yet interned) in its run's seq order, or into the
 * record of its step when another part of it is there.  The run's records
 * are the last ones (a call's pieces are filed before it goes on): one
 * after the last is appended (the owner's own records come in seq order),
 * a part of the step after the one the last part merged into goes there,
 * else a binary search among them, as a row run's parts of a hundred steps
 * each would otherwise walk back over the whole run per record.  On the
 * owner. */
static void file_record(ts_health *h, ts_health_op *r, ts_loc loc, const ts_node *run,
                        const ts_node *traced)
{
  guint len = h->ops->len, at = len;
  const ts_health_op *last = len > 0 ? &g_array_index(h->ops, ts_health_op, len - 1) : NULL;
  bool same_run = r->run_id && last && last->run_id == r->run_id;
  if (!same_run) {
    h->run_start = len;
  } else if (last->seq >= r->seq) { /* (after the last, as the owner's own come: no search) */
    guint next = h->merged + 1; /* a part's steps come in seq order: often the next record */
    if (next > h->run_start && next < len && g_array_index(h->ops, ts_health_op, next).seq == r->seq) {
      at = next;
    } else {
      guint lo = h->run_start, hi = len; /* the first record of the run with a seq >= r's */
      while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (g_array_index(h->ops, ts_health_op, mid).seq < r->seq)
          lo = mid + 1;
        else
          hi = mid;
      }
      at = lo;
    }
    ts_health_op *step = at < len ? &g_array_index(h->ops, ts_health_op, at) : NULL;
    if (step && step->seq == r->seq) { /* a row run's part: its step's record */
      bool was_finite = step->n_nan == 0 && step->n_inf == 0;
      h->merged = at;
      merge_part(step, r);
      if (was_finite && (step->n_nan > 0 || step->n_inf > 0) && (h->first < 0 || at < h->first))
        h->first = at;
      return;
    }
  }
  if (loc.file != h->last_file) {
    h->last_file = loc.file;
    h->last_file_copy = intern(h, loc.file);
  }
  const ts_node *node = traced ? traced : run;
  r->node = node ? intern(h, ts_node_name(node)) : NULL;
  r->file = h->last_file_copy;
  r->func = intern(h, loc.func);
  if (r->n_nan > 0 || r->n_inf > 0) {
    char *origins = ts__node_origins(run);
    if (origins) {
      g_ptr_array_add(h->owned, origins);
      r->origins = origins;
    }
  }
  g_array_insert_val(h->ops, (guint)at, *r);
  if (h->first >= at)
    h->first++;
  if ((r->n_nan > 0 || r->n_inf > 0) && (h->first < 0 || at < h->first))
    h->first = at;
}

/* A pool thread's aside in h: the last one it used, else one it had (it
 * served another thread's health between), else a new one. */
static aside *aside_of(ts_health *h)
{
  static _Thread_local struct {
    uint64_t id;
    aside *a;
  } mine;
  if (mine.id == h->id)
    return mine.a;
  pthread_t self = pthread_self();
  aside *a = NULL;
  pthread_mutex_lock(&h->lock);
  for (guint i = 0; i < h->asides->len && !a; i++)
    if (pthread_equal(((aside *)h->asides->pdata[i])->thread, self))
      a = h->asides->pdata[i];
  if (!a) {
    a = g_new0(aside, 1);
    pthread_mutex_init(&a->lock, NULL);
    a->thread = self;
    a->records = g_array_new(FALSE, FALSE, sizeof(pending));
    g_ptr_array_add(h->asides, a);
  }
  pthread_mutex_unlock(&h->lock);
  mine.id = h->id;
  mine.a = a;
  return a;
}

static void aside_free(gpointer p)
{
  aside *a = p;
  g_array_unref(a->records);
  pthread_mutex_destroy(&a->lock);
  g_free(a);
}

static void on_op_end(ts_op_observer *self, const ts_op_call *call, const ts_run_site *site,
                      uint64_t seq, ts_tensor *const *out, int n_out)
{
  ts_health *h = (ts_health *)self;
  ts_health_op r = {
    .run_id = ts__context()->run.run_id, .seq = seq, .op = call->def->op,
    .op_name = call->def->name, .line = call->loc.line,
  };
  bool computed = !(call->def->flags & TS_OPF_AUXILIARY);
  /* what the op made: its outputs, or the variables it wrote in place */
  ts_tensor *written[TS_MAX_INPUTS];
  int n_written = ts__debug_written(call->def, call->in, call->n_in, n_out, written, TS_MAX_INPUTS);
  if (n_written) {
    out = written;
    n_out = n_written;
  }
  for (int i = 0; i < n_out && computed; i++) {
    const ts_tensor *t = out[i];
    if (h->level == TS_HEALTH_STATS) {
      ts_tensor_stats st;
      if (ts_tensor_stats_compute(t, &st)) {
        ts_tensor_stats all = { r.n_elements, r.n_nan, r.n_inf, 0, r.min, r.max, r.mean, 0 };
        ts__stats_merge(&all, &st);
        r.n_elements = all.n;
        r.n_nan = all.n_nan;
        r.n_inf = all.n_inf;
        r.min = all.min;
        r.max = all.max;
        r.mean = all.mean;
      }
      continue;
    }
    int64_t nan, inf;
    ts__count_nonfinite(t, &nan, &inf);
    r.n_elements += t->size > 0 ? t->size : 0;
    r.n_nan += nan;
    r.n_inf += inf;
  }
  const ts_node *run = site ? site->node : NULL, *traced = site ? site->traced : NULL;
  if (pthread_equal(pthread_self(), h->owner)) { /* the report is this thread's alone */
    file_record(h, &r, call->loc, run, traced);
    return;
  }
  aside *a = aside_of(h);
  pending p = { r, call->loc, run, traced };
  pthread_mutex_lock(&a->lock);
  g_array_append_val(a->records, p);
  pthread_mutex_unlock(&a->lock);
}

/* Files what the pool's threads kept aside (on the calling thread). */
static void file_asides(ts_health *h)
{
  pthread_mutex_lock(&h->lock);
  for (guint i = 0; i < h->asides->len; i++) {
    aside *a = h->asides->pdata[i];
    pthread_mutex_lock(&a->lock);
    for (guint k = 0; k < a->records->len; k++) {
      pending *p = &g_array_index(a->records, pending, k);
      file_record(h, &p->r, p->loc, p->node, p->traced);
    }
    g_array_set_size(a->records, 0);
    pthread_mutex_unlock(&a->lock);
  }
  pthread_mutex_unlock(&h->lock);
}

/* A call's pieces are done: the owner files what they kept aside.  (A
 * pool thread whose piece shared pieces of its own leaves them there for
 * the owner's call to file when all its pieces are done.) */
static void on_pieces_done(ts_op_observer *self)
{
  ts_health *h = (ts_health *)self;
  if (pthread_equal(pthread_self(), h->owner))
    file_asides(h);
}

ts_health *ts_health_start(ts_health_level level)
{
  static uint64_t next_id = 1;
  ts_health *h = g_new0(ts_health, 1);
  h->observer.op_end = on_op_end;
  h->observer.pieces_done = on_pieces_done;
  h->owner = pthread_self();
  h->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
  h->asides = g_ptr_array_new_with_free_func(aside_free);
  pthread_mutexattr_t attr; /* spins a little before sleeping: filing a record is short */
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
  pthread_mutex_init(&h->lock, &attr);
  pthread_mutexattr_destroy(&attr);
  h->level = level;
  h->ops = g_array_sized_new(FALSE, FALSE, sizeof(ts_health_op), 1024);
  h->first = -1;
  h->copies = g_string_chunk_new(4096);
  h->owned = g_ptr_array_new_with_free_func(g_free);
  ts_context *c = ts__context();
  h->outer = c->observer;
  c->observer = &h->observer;
  h->recording = true;
  return h;
}

void ts_health_stop(ts_health *h)
{
  g_return_if_fail(h != NULL);
  if (!h->recording)
    return;
  ts_context *c = ts__context();
  g_return_if_fail(c->observer == &h->observer); /* the thread that started it, innermost */
  c->observer = h->outer;
  h->recording = false;
}

void ts_health_free(ts_health *h)
{
  if (!h)
    return;
  ts_health_stop(h);
  g_ptr_array_unref(h->asides);
  g_array_unref(h->ops);
  g_string_chunk_free(h->copies);
  if (h->strings)
    g_hash_table_unref(h->strings);
  g_ptr_array_unref(h->owned);
  pthread_mutex_destroy(&h->lock);
  g_free(h);
}

int64_t ts_health_n_ops(const ts_health *h)
{
  TS_CHECK_ARG(h != NULL, 0);
  return (int64_t)h->ops->len;
}

const ts_health_op *ts_health_get(const ts_health *h, int64_t i)
{
  TS_CHECK_ARG(h != NULL, NULL);
  return i >= 0 && i < (int64_t)h->ops->len ? &g_array_index(h->ops, ts_health_op, i) : NULL;
}

const ts_health_op *ts_health_first_nonfinite(const ts_health *h)
{
  TS_CHECK_ARG(h != NULL, NULL);
  return h->first >= 0 ? &g_array_index(h->ops, ts_health_op, h->first) : NULL;
}

void ts_health_reset(ts_health *h)
{
  g_return_if_fail(h != NULL);
  g_array_set_size(h->ops, 0);
  h->run_start = 0;
  h->first = -1;
}
