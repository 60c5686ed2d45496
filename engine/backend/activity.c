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
 * copies made on its behalf. */
static _Thread_local uint64_t current_correlation;

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
static _Thread_local uint32_t current_operand;

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
 * correlation, each with a key (operand); once the run says which op read
 * each, ts__activity_recharge says so and deliveries charge them to it.
 * The last RECHARGES are remembered: records of an older placeholder, or
 * delivered before their op was known, are charged to no op. */
#define PLACEHOLDER_BIT (1ull << 62)
#define RECHARGES 256

typedef struct {
  uint64_t placeholder, correlation;
  uint32_t key, operand;
} recharge;

static recharge recharges[RECHARGES]; /* under lock */
static unsigned n_recharges;

uint64_t ts__activity_placeholder(void)
{
  static uint64_t next = 1;
  return PLACEHOLDER_BIT | __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
}

void ts__activity_recharge(uint64_t placeholder, uint32_t key, uint64_t correlation,
                           uint32_t operand)
{
  pthread_mutex_lock(&lock);
  recharges[n_recharges++ % RECHARGES] = (recharge){ placeholder, correlation, key, operand };
  pthread_mutex_unlock(&lock);
}

/* r charged to the op its placeholder stands for (under lock). */
static void recharged(ts_activity *r)
{
  uint64_t placeholder = r->correlation;
  uint32_t key = r->operand;
  r->correlation = 0;
  r->operand = 0;
  for (unsigned i = 0; i < MIN(n_recharges, RECHARGES); i++)
    if (recharges[i].placeholder == placeholder && recharges[i].key == key) {
      r->correlation = recharges[i].correlation;
      r->operand = recharges[i].operand;
      return;
    }
}

void ts_activity_deliver(const ts_activity *records, int n)
{
  if (n <= 0 || !records)
    return;
  pthread_mutex_lock(&lock);
  ts_activity *copy = NULL;
  for (int i = 0; i < n; i++)
    if ((records[i].correlation & PLACEHOLDER_BIT) && !(records[i].correlation >> 63)) {
      if (!copy && (copy = g_try_malloc(sizeof *records * (size_t)n)))
        memcpy(copy, records, sizeof *records * (size_t)n);
      if (!copy)
        break; /* out of memory: delivered as they are */
      recharged(&copy[i]);
    }
  for (int i = 0; i < n_collectors; i++)
    collectors[i].fn(copy ? copy : records, n, collectors[i].data);
  pthread_mutex_unlock(&lock);
  g_free(copy);
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
