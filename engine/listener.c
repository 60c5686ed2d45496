/* listener.c — subscribers to engine events (profiler, debugger, app).
 *
 * Listeners live in a fixed table of slots.  An event takes no lock: per
 * slot whose mask matches it enters the slot, looks at the slot's state,
 * calls the listener if it is live and leaves.  Callbacks run outside any
 * lock, so a listener may block (a debugger pausing before an op) without
 * blocking registration or other threads' ops.  Removal marks the slot
 * removed and waits until no other thread is inside it, so the listener's
 * user data may be freed as soon as ts_listener_remove returns; a listener
 * may remove itself.  A slot is reused only once nobody is inside it.
 *
 * Entering is a store to the thread's own record (a hazard: the slot it
 * is in, a few deep for a callback's own events), which the remover scans
 * after marking the slot: no shared counter, so a call's pieces on the
 * pool's threads do not pass a cache line between them per event.  The
 * store must be seen before the thread reads the slot's state (Dekker):
 * where the kernel has membarrier, the remover's expedited barrier orders
 * every thread's at once and an event pays a compiler barrier only (the
 * asymmetric fence liburcu uses); elsewhere both are sequentially
 * consistent, a locked instruction each.  A thread deeper than its record
 * goes, or one with no record (ending), counts itself in the slot's
 * shared counter as before.  Registration is serialized by a pthread
 * mutex, which ThreadSanitizer sees (GLib's futex-based ones it does not).
 *
 * A graph call shares groups of its ops and the parts of its row runs
 * with the pool's threads (exec/parallel.c), and those threads deliver
 * the events of what they run, with the call's run id.  While they do,
 * the thread's deliver_lock is the call's and a callback runs under
 * it: one call's events reach a listener one at a time, as they did when
 * the call ran on one thread (a listener that sees several of its own
 * threads calling functions is called from them at once, as ever).  A
 * listener added with TS_LISTENER_CONCURRENT (the profiler: per-thread
 * chunks) is called without it. */
#include "engine-private.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_LISTENERS 32
#define NEST 4 /* slots a thread is inside at once through its record (a callback's own events) */

enum { FREE, LIVE, REMOVED };

typedef struct slot {
  int state;        /* atomic: FREE, LIVE, REMOVED; written under lock */
  int active;       /* atomic: threads inside the slot by the shared count (no room in their record) */
  uint32_t mask;    /* atomic: the kinds it wants (and TS_LISTENER_CONCURRENT); 0 unless
                       LIVE (a filter only) */
  int id;           /* written under lock while FREE, read once LIVE */
  ts_listener_fn fn;
  void *user_data;
} slot;

/* A thread's record: the slots it is inside, innermost last.  Records are
 * linked for good on a thread's first event and taken up again by a later
 * thread once theirs has ended. */
typedef struct reader {
  const slot *inside[NEST]; /* atomic: written by its thread, scanned by removers */
  int depth;                /* its thread's only */
  bool taken;               /* under lock */
  struct reader *next;      /* set under lock before it is linked */
} __attribute__((aligned(64))) reader; /* a cache line of its own */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;
static slot slots[MAX_LISTENERS];
static int n_slots; /* atomic: slots ever used (events look at these only) */
static int next_id = 1;
int ts__listener_mask;
static reader *readers;     /* atomic head; under lock to add */
static pthread_key_t reader_key; /* gives a record back when its thread ends */
static bool asymmetric;     /* membarrier orders entering (set before the first slot is used) */

/* The slot whose callback this thread is in (its listener may remove itself).
 * Initial-exec: two plain stores per event, no __tls_get_addr call. */
static _Thread_local const slot *calling __attribute__((tls_model("initial-exec")));
/* The lock of the call whose piece this thread runs (ts__listeners_deliver_under). */
static _Thread_local pthread_mutex_t *deliver_lock __attribute__((tls_model("initial-exec")));

/* The calling thread's record; NULL before its first event and once it ends. */
static _Thread_local reader *me __attribute__((tls_model("initial-exec")));
static _Thread_local bool ended __attribute__((tls_model("initial-exec")));

/* The remover's side of the asymmetric fence: every running thread of the
 * process passes a full barrier (their entering stores are seen, or they
 * see the slot removed). */
static void barrier_all(void)
{
  if (asymmetric)
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

static void give_back(void *r)
{
  pthread_mutex_lock(&lock);
  ((reader *)r)->taken = false;
  pthread_mutex_unlock(&lock);
  me = NULL;
  ended = true; /* events from later destructors count in the slots */
}

/* Set up with the first listener, before any slot is in use. */
static void setup(void)
{
  pthread_key_create(&reader_key, give_back);
  asymmetric = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

/* The calling thread's record, taken on its first event. */
static reader *take_reader(void)
{
  pthread_mutex_lock(&lock);
  reader *r = __atomic_load_n(&readers, __ATOMIC_RELAXED);
  while (r && r->taken)
    r = r->next;
  if (!r && (r = aligned_alloc(64, sizeof *r))) {
    *r = (reader){ .next = readers };
    __atomic_store_n(&readers, r, __ATOMIC_RELEASE);
  }
  if (r) {
    r->taken = true;
    r->depth = 0;
    pthread_setspecific(reader_key, r);
  }
  pthread_mutex_unlock(&lock);
  return me = r;
}

/* Enters s: through the record (true), else by the shared count. */
static inline bool enter(slot *s, reader *r)
{
  if (G_LIKELY(r && r->depth < NEST)) {
    if (asymmetric) {
      __atomic_store_n(&r->inside[r->depth++], s, __ATOMIC_RELAXED);
      __asm__ __volatile__("" ::: "memory"); /* barrier_all orders it */
    } else {
      __atomic_store_n(&r->inside[r->depth++], s, __ATOMIC_SEQ_CST);
    }
    return true;
  }
  __atomic_add_fetch(&s->active, 1, __ATOMIC_SEQ_CST);
  return false;
}

static inline void leave(slot *s, reader *r, bool recorded)
{
  if (recorded && asymmetric) /* (a memory order that is not a constant is taken as seq_cst) */
    __atomic_store_n(&r->inside[--r->depth], NULL, __ATOMIC_RELEASE);
  else if (recorded)
    __atomic_store_n(&r->inside[--r->depth], NULL, __ATOMIC_SEQ_CST);
  else
    __atomic_sub_fetch(&s->active, 1, __ATOMIC_SEQ_CST);
}

/* Threads inside s.  Callers hold lock, after barrier_all. */
static int inside(const slot *s)
{
  int n = __atomic_load_n(&s->active, __ATOMIC_SEQ_CST);
  for (reader *r = __atomic_load_n(&readers, __ATOMIC_ACQUIRE); r; r = r->next)
    for (int i = 0; i < NEST; i++)
      n += __atomic_load_n(&r->inside[i], __ATOMIC_SEQ_CST) == s;
  return n;
}

pthread_mutex_t *ts__listeners_deliver_under(pthread_mutex_t *call_lock)
{
  pthread_mutex_t *was = deliver_lock;
  deliver_lock = call_lock;
  return was;
}

/* Callers hold lock. */
static void recompute_mask(void)
{
  uint32_t mask = 0;
  for (int i = 0; i < n_slots; i++)
    if (slots[i].state == LIVE)
      mask |= slots[i].mask & ~TS_LISTENER_CONCURRENT;
  __atomic_store_n(&ts__listener_mask, (int)mask, __ATOMIC_RELEASE);
}

/* A removed slot nobody is inside becomes free.  Callers hold lock, after
 * barrier_all. */
static void free_if_idle(slot *s)
{
  if (__atomic_load_n(&s->state, __ATOMIC_SEQ_CST) == REMOVED && inside(s) == 0)
    __atomic_store_n(&s->state, FREE, __ATOMIC_SEQ_CST);
}

int ts_listener_add(uint32_t mask, ts_listener_fn fn, void *user_data)
{
  /* no unknown event kinds */
  TS_CHECK_ARG(fn != NULL && ((mask & ~TS_LISTENER_CONCURRENT) >> TS_EVENT_KIND_COUNT) == 0, 0);
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, setup);
  int id = 0;
  pthread_mutex_lock(&lock);
  barrier_all(); /* threads that left removed slots are seen gone */
  for (int i = 0; i < MAX_LISTENERS && !id; i++) {
    slot *s = &slots[i];
    free_if_idle(s);
    if (s->state != FREE)
      continue;
    /* Threads entering a free slot leave without reading these; the
     * release below publishes them to those that see it live. */
    id = next_id++;
    s->id = id;
    s->fn = fn;
    s->user_data = user_data;
    __atomic_store_n(&s->mask, mask, __ATOMIC_RELAXED);
    __atomic_store_n(&s->state, LIVE, __ATOMIC_SEQ_CST);
    if (i >= n_slots)
      __atomic_store_n(&n_slots, i + 1, __ATOMIC_RELEASE);
  }
  recompute_mask();
  pthread_mutex_unlock(&lock);
  if (!id)
    ts_error_set(TS_ERR_NO_MEMORY, (ts_loc){ 0 }, NULL, "too many listeners (at most %d)",
                 MAX_LISTENERS);
  return id;
}

void ts_listener_remove(int id)
{
  pthread_mutex_lock(&lock);
  slot *s = NULL;
  for (int i = 0; i < n_slots && !s && id; i++)
    if (slots[i].state == LIVE && slots[i].id == id)
      s = &slots[i];
  if (s) {
    /* Marking, then the barrier, then looking inside: a thread entering
     * either sees the mark and leaves, or is waited for.  This thread's
     * own call (a listener removing itself) cannot finish before we
     * return; the next ts_listener_add frees the slot then. */
    __atomic_store_n(&s->mask, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->state, REMOVED, __ATOMIC_SEQ_CST);
    recompute_mask();
    barrier_all();
    int own = calling == s;
    while (inside(s) > own)
      pthread_cond_wait(&idle, &lock);
    free_if_idle(s);
  }
  pthread_mutex_unlock(&lock);
}

/* Delivers events[0..n) (in that order) to each listener in turn: one
 * entry into its slot, and one hold of the call's lock, for all of them. */
static inline __attribute__((always_inline)) void deliver(const ts_event *events, int n)
{
  uint32_t bits = 0;
  for (int j = 0; j < n; j++)
    bits |= TS_EVENT_MASK(events[j].kind);
  int n_live = __atomic_load_n(&n_slots, __ATOMIC_ACQUIRE);
  const slot *outer = calling;
  pthread_mutex_t *deliver_under = deliver_lock; /* a call's piece on the pool */
  reader *r = me;
  if (G_UNLIKELY(!r) && n_live > 0 && !ended && !calling)
    r = take_reader();
  for (int i = 0; i < n_live; i++) {
    slot *s = &slots[i];
    uint32_t mask = __atomic_load_n(&s->mask, __ATOMIC_RELAXED);
    if (!(mask & bits))
      continue;
    /* The call's lock before entering: a thread waiting for it is in no
     * slot, so a callback holding it may remove any listener. */
    bool wait = deliver_under && !(mask & TS_LISTENER_CONCURRENT);
    if (wait)
      pthread_mutex_lock(deliver_under);
    /* Entering before looking at the state: either we see the removal
     * and leave, or the remover sees us and waits. */
    bool recorded = enter(s, r);
    mask = __atomic_load_n(&s->mask, __ATOMIC_RELAXED); /* the slot may have been reused */
    if (wait || !deliver_under || (mask & TS_LISTENER_CONCURRENT)) {
      calling = s;
      /* the state again before each: a callback may remove its listener */
      for (int j = 0; j < n; j++)
        if ((mask & TS_EVENT_MASK(events[j].kind)) &&
            __atomic_load_n(&s->state, __ATOMIC_SEQ_CST) == LIVE) /* a plain load on x86 */
          s->fn(&events[j], s->user_data);
    }
    leave(s, r, recorded);
    if (wait)
      pthread_mutex_unlock(deliver_under);
    if (G_UNLIKELY(__atomic_load_n(&s->state, __ATOMIC_SEQ_CST) == REMOVED)) {
      pthread_mutex_lock(&lock); /* a remover waiting for us */
      pthread_cond_broadcast(&idle);
      pthread_mutex_unlock(&lock);
    }
  }
  calling = outer;
}

void ts__listeners_emit(const ts_event *event)
{
  deliver(event, 1);
}

void ts__listeners_emit_n(const ts_event *events, int n)
{
  deliver(events, n);
}

uint64_t ts_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
