/* listener.c — subscribers to engine events (profiler, debugger, app).
 *
 * Callbacks run outside any lock: an event takes a reference on each
 * listener it will call, under the lock, then calls them with the lock
 * released.  So a listener may block (a debugger pausing before an op)
 * without blocking registration or other threads' ops.  Removal waits
 * until no other thread is inside the listener's callback, so its user
 * data may be freed as soon as ts_listener_remove returns.  The locks are
 * pthread's, which ThreadSanitizer sees (GLib's futex-based ones it does
 * not). */
#include "engine-private.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define MAX_LISTENERS 32

typedef struct listener {
  int id;
  uint32_t mask;
  ts_listener_fn fn;
  void *user_data;
  int refs;       /* atomic: the registry's, plus one per event holding it */
  int active;     /* atomic: threads inside fn */
  int removed;    /* atomic */
} listener;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER;
static listener *slots[MAX_LISTENERS];
static int next_id = 1;
int ts__listener_mask;

/* The listener whose callback this thread is in (it may remove itself). */
static _Thread_local const listener *calling;

static void recompute_mask(void)
{
  uint32_t mask = 0;
  for (int i = 0; i < MAX_LISTENERS; i++)
    if (slots[i])
      mask |= slots[i]->mask;
  __atomic_store_n(&ts__listener_mask, (int)mask, __ATOMIC_RELEASE);
}

int ts_listener_add(uint32_t mask, ts_listener_fn fn, void *user_data)
{
  TS_CHECK_ARG(fn != NULL && (mask >> TS_EVENT_KIND_COUNT) == 0, 0); /* no unknown event kinds */
  listener *l = malloc(sizeof *l);
  if (!l) {
    ts_error_set(TS_ERR_NO_MEMORY, (ts_loc){ 0 }, NULL, "ts_listener_add: out of memory");
    return 0;
  }
  int id = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < MAX_LISTENERS && !id; i++) {
    if (!slots[i]) {
      id = next_id++;
      *l = (listener){ id, mask, fn, user_data, 1, 0, 0 };
      slots[i] = l;
    }
  }
  recompute_mask();
  pthread_mutex_unlock(&lock);
  if (!id) {
    free(l);
    ts_error_set(TS_ERR_NO_MEMORY, (ts_loc){ 0 }, NULL, "too many listeners (at most %d)",
                 MAX_LISTENERS);
  }
  return id;
}

static void unref(listener *l)
{
  if (__atomic_sub_fetch(&l->refs, 1, __ATOMIC_ACQ_REL) == 0)
    free(l);
}

void ts_listener_remove(int id)
{
  pthread_mutex_lock(&lock);
  listener *l = NULL;
  for (int i = 0; i < MAX_LISTENERS && !l; i++) {
    if (id && slots[i] && slots[i]->id == id) {
      l = slots[i];
      slots[i] = NULL;
    }
  }
  recompute_mask();
  if (l) {
    /* Events that still hold l skip it from now on; wait for the calls
     * already inside it on other threads (this thread's own call, a
     * listener removing itself, cannot finish before we return).  Only
     * calls into l are waited for: a listener blocked elsewhere holds
     * nothing up. */
    __atomic_store_n(&l->removed, 1, __ATOMIC_SEQ_CST);
    int own = calling == l;
    while (__atomic_load_n(&l->active, __ATOMIC_SEQ_CST) > own)
      pthread_cond_wait(&idle, &lock);
  }
  pthread_mutex_unlock(&lock);
  if (l)
    unref(l);
}

void ts__listeners_emit(const ts_event *event)
{
  uint32_t bit = TS_EVENT_MASK(event->kind);
  listener *take[MAX_LISTENERS];
  int n = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < MAX_LISTENERS; i++) {
    if (slots[i] && (slots[i]->mask & bit)) {
      __atomic_add_fetch(&slots[i]->refs, 1, __ATOMIC_RELAXED);
      take[n++] = slots[i];
    }
  }
  pthread_mutex_unlock(&lock);
  const listener *outer = calling;
  for (int i = 0; i < n; i++) {
    listener *l = take[i];
    /* Entering before looking at `removed` (both sequentially consistent):
     * either we see the removal and skip, or the remover sees us and waits. */
    __atomic_add_fetch(&l->active, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&l->removed, __ATOMIC_SEQ_CST)) {
      calling = l;
      l->fn(event, l->user_data);
    }
    __atomic_sub_fetch(&l->active, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&l->removed, __ATOMIC_SEQ_CST)) {
      pthread_mutex_lock(&lock);
      pthread_cond_broadcast(&idle);
      pthread_mutex_unlock(&lock);
    }
    unref(l);
  }
  calling = outer;
}

uint64_t ts_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
