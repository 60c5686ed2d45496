/* activity.c — device activity collectors: backends hand over batches of
 * records (kernels, copies, memsets, syncs, captured graph nodes) and the
 * collectors (a profiler's) charge them to ops through their correlation
 * ids and graph-node ids. */
#include "../engine-private.h"
#ifdef TS_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

#include <pthread.h>

#define MAX_COLLECTORS 8

typedef struct {
  ts_activity_fn fn;
  void *data;
} collector;

/* Delivery holds the lock, so calls to one collector never overlap and an
 * unsubscribed collector is never called after ts_activity_unsubscribe. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static collector collectors[MAX_COLLECTORS];
static int n_collectors; /* atomic reads outside the lock */

bool ts_activity_subscribe(ts_activity_fn fn, void *data)
{
  TS_CHECK_ARG(fn != NULL, false);
  pthread_mutex_lock(&lock);
  bool ok = n_collectors < MAX_COLLECTORS;
  if (ok) {
    collectors[n_collectors] = (collector){ fn, data };
    __atomic_store_n(&n_collectors, n_collectors + 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&lock);
  if (!ok)
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "ts_activity_subscribe: at most %d collectors", MAX_COLLECTORS);
  return ok;
}

void ts_activity_unsubscribe(ts_activity_fn fn, void *data)
{
  pthread_mutex_lock(&lock);
  for (int i = 0; i < n_collectors; i++)
    if (collectors[i].fn == fn && collectors[i].data == data) {
      collectors[i] = collectors[n_collectors - 1];
      __atomic_store_n(&n_collectors, n_collectors - 1, __ATOMIC_RELEASE);
      break;
    }
  pthread_mutex_unlock(&lock);
}

uint64_t ts_activity_dropped(void)
{
#ifdef TS_HAVE_CUDA
  return ts__cuda_dropped_records();
#else
  return 0;
#endif
}

/* The op this thread is placing or running (its correlation id), for the
 * copies made on its behalf.  Set twice per op: initial-exec, as the
 * engine's other per-op thread state, so that it is no __tls_get_addr call. */
static _Thread_local uint64_t current_correlation __attribute__((tls_model("initial-exec")));

uint64_t ts_activity_correlation(void)
{
  return current_correlation;
}

uint64_t ts__activity_correlation_set(uint64_t correlation)
{
  uint64_t outer = current_correlation;
  current_correlation = correlation;
  return outer;
}

/* The input of that op being copied to where it runs: its index + 1, or 0. */
static _Thread_local uint32_t current_operand __attribute__((tls_model("initial-exec")));

uint32_t ts_activity_operand(void)
{
  return current_operand;
}

void ts__activity_operand_set(uint32_t operand)
{
  current_operand = operand;
}

bool ts_activity_wanted(void)
{
  return __atomic_load_n(&n_collectors, __ATOMIC_ACQUIRE) > 0;
}

/* Copies made before the op they serve is known (a plan's inputs staged
 * before its capture runs, which numbers its ops) go under a placeholder
 * correlation, each keyed by the operand it was made under.  Until the
 * placeholder is settled (the run said which op read each key:
 * ts__activity_recharge) its records wait here, so that a collector never
 * sees them charged to no op because a flush came first; settled, they
 * go out charged to their op (or to none, for a key no op read), as do
 * those a device reports later (the last RECHARGES are remembered). */
#define PLACEHOLDER_BIT (1ull << 62)
#define OPEN_MAX 64 /* placeholders unsettled at once; past it the oldest settles */
#define RECHARGES 1024

typedef struct {
  uint64_t placeholder, correlation;
  uint32_t key, operand;
} recharge;

/* under lock */
static uint64_t open_placeholders[OPEN_MAX];
static int n_open;
static recharge recharges[RECHARGES];
static unsigned n_recharges;
static GArray *waiting;   /* ts_activity, of the open placeholders */

static bool is_placeholder(uint64_t correlation)
{
  return (correlation & PLACEHOLDER_BIT) && !(correlation >> 63);
}

static void deliver_locked(const ts_activity *records, int n)
{
  for (int i = 0; i < n_collectors; i++)
    collectors[i].fn(records, n, collectors[i].data);
}

/* Charges r to the op its key was read by (under lock). */
static void recharged(ts_activity *r)
{
  uint64_t placeholder = r->correlation;
  uint32_t key = r->operand;
  r->correlation = 0;
  r->operand = 0;
  for (unsigned i = 0; i < MIN(n_recharges, RECHARGES); i++) {
    const recharge *c = &recharges[i];
    if (c->placeholder == placeholder && c->key == key) {
      r->correlation = c->correlation;
      r->operand = c->operand;
      return;
    }
  }
}

/* Its waiting records go out charged (under lock). */
static void settle_locked(int k)
{
  uint64_t p = open_placeholders[k];
  open_placeholders[k] = open_placeholders[--n_open];
  GArray *out = g_array_new(FALSE, FALSE, sizeof(ts_activity));
  for (guint i = 0; waiting && i < waiting->len;) {
    ts_activity *r = &g_array_index(waiting, ts_activity, i);
    if (r->correlation != p) {
      i++;
      continue;
    }
    recharged(r);
    g_array_append_val(out, *r);
    g_array_remove_index_fast(waiting, i);
  }
  deliver_locked((const ts_activity *)(void *)out->data, (int)out->len);
  g_array_unref(out);
}

uint64_t ts__activity_placeholder(void)
{
  static uint64_t next = 1;
  uint64_t p = PLACEHOLDER_BIT | __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
  pthread_mutex_lock(&lock);
  if (n_open == OPEN_MAX)
    settle_locked(0);
  open_placeholders[n_open++] = p;
  pthread_mutex_unlock(&lock);
  return p;
}

void ts__activity_recharge(uint64_t placeholder, uint32_t key, uint64_t correlation,
                           uint32_t operand)
{
  pthread_mutex_lock(&lock);
  recharges[n_recharges++ % RECHARGES] = (recharge){ placeholder, correlation, key, operand };
  pthread_mutex_unlock(&lock);
}

void ts__activity_settle(uint64_t placeholder)
{
  pthread_mutex_lock(&lock);
  for (int k = 0; k < n_open; k++)
    if (open_placeholders[k] == placeholder) {
      settle_locked(k);
      break;
    }
  pthread_mutex_unlock(&lock);
}

static bool open_locked(uint64_t placeholder)
{
  for (int k = 0; k < n_open; k++)
    if (open_placeholders[k] == placeholder)
      return true;
  return false;
}

void ts_activity_deliver(const ts_activity *records, int n)
{
  if (n <= 0 || !records)
    return;
  pthread_mutex_lock(&lock);
  GArray *rest = NULL; /* records, less those that wait */
  for (int i = 0; i < n; i++) {
    if (!is_placeholder(records[i].correlation)) {
      if (rest)
        g_array_append_val(rest, records[i]);
      continue;
    }
    if (!rest) {
      rest = g_array_sized_new(FALSE, FALSE, sizeof(ts_activity), (guint)n);
      g_array_append_vals(rest, records, (guint)i);
    }
    ts_activity r = records[i];
    if (open_locked(r.correlation)) {
      if (!waiting)
        waiting = g_array_new(FALSE, FALSE, sizeof(ts_activity));
      g_array_append_val(waiting, r);
      continue;
    }
    recharged(&r); /* settled already: no op read it */
    g_array_append_val(rest, r);
  }
  if (rest)
    deliver_locked((const ts_activity *)(void *)rest->data, (int)rest->len);
  else
    deliver_locked(records, n);
  pthread_mutex_unlock(&lock);
  if (rest)
    g_array_unref(rest);
}

void ts_activity_flush(void)
{
  for (int i = 0; i < ts_backend_count(); i++) {
    const ts_backend *b = ts_backend_get(i);
    const ts_backend_i *bi = ts_backend_iface(b);
    if (bi->activity_flush)
      bi->activity_flush(b);
  }
}
