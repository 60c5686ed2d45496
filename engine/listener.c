/* listener.c — subscribers to engine events (profiler, debugger, app). */
#include "engine-private.h"

#include <time.h>

#define MAX_LISTENERS 32

typedef struct listener {
  int id; /* 0: free slot */
  uint32_t mask;
  ts_listener_fn fn;
  void *user_data;
} listener;

static listener listeners[MAX_LISTENERS];
static int next_id = 1;
static GRWLock lock;
int ts__listener_mask;

static void recompute_mask(void)
{
  uint32_t mask = 0;
  for (int i = 0; i < MAX_LISTENERS; i++)
    if (listeners[i].id)
      mask |= listeners[i].mask;
  __atomic_store_n(&ts__listener_mask, (int)mask, __ATOMIC_RELEASE);
}

int ts_listener_add(uint32_t mask, ts_listener_fn fn, void *user_data)
{
  TS_CHECK_ARG(fn != NULL && (mask >> TS_EVENT_KIND_COUNT) == 0, 0); /* no unknown event kinds */
  int id = 0;
  g_rw_lock_writer_lock(&lock);
  for (int i = 0; i < MAX_LISTENERS; i++) {
    if (!listeners[i].id) {
      id = next_id++;
      listeners[i] = (listener){ id, mask, fn, user_data };
      break;
    }
  }
  recompute_mask();
  g_rw_lock_writer_unlock(&lock);
  if (!id)
    ts_error_set(TS_ERR_NO_MEMORY, (ts_loc){ 0 }, NULL, "too many listeners (at most %d)",
                 MAX_LISTENERS);
  return id;
}

void ts_listener_remove(int id)
{
  g_rw_lock_writer_lock(&lock);
  for (int i = 0; i < MAX_LISTENERS; i++)
    if (id && listeners[i].id == id)
      listeners[i] = (listener){ 0 };
  recompute_mask();
  g_rw_lock_writer_unlock(&lock);
}

void ts__listeners_emit(const ts_event *event)
{
  uint32_t bit = TS_EVENT_MASK(event->kind);
  g_rw_lock_reader_lock(&lock);
  for (int i = 0; i < MAX_LISTENERS; i++)
    if (listeners[i].id && (listeners[i].mask & bit))
      listeners[i].fn(event, listeners[i].user_data);
  g_rw_lock_reader_unlock(&lock);
}

uint64_t ts_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
