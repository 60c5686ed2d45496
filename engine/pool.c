/* pool.c — the engine's thread pool and its thread-count policy.
 *
 * A fixed set of worker threads, started on first use, runs the items of
 * one parallel-for at a time together with the thread that called it
 * (the owner).  Items are claimed one by one from a shared counter, so a
 * slow thread (the machine is shared) takes fewer; what an item computes
 * must not depend on which thread runs it.
 *
 * Waking: the owner publishes the job and bumps a generation counter.
 * Idle workers spin on it for POOL_SPIN_NS, so back-to-back ops of a graph
 * reach them in about a microsecond, then sleep on a futex; the owner
 * makes the wake-up call only when one sleeps.  Jobs live in a ring of
 * slots in the pool, so the owner returns as soon as the last item is done
 * and never waits for a worker that is merely late (preempted on a busy
 * machine): a worker enters the slot of the generation it woke for by
 * counting itself in `users` and checking the slot is open and that
 * generation's (Dekker-style, both seq_cst); the owner reusing a slot
 * closes it and waits for its users to leave first.  A late worker finds
 * no item left and never touches the caller's data.
 *
 * Callers: one parallel-for runs on the pool at a time.  A call made while
 * another thread's call holds it, and a nested call (from an item, on a
 * worker or on the owner), runs its items inline on the calling thread, in
 * order: never a deadlock, never more threads than ts_get_threads().
 *
 * OpenBLAS: its thread count is process-wide.  It follows ts_get_threads()
 * (capped by what OpenBLAS itself was told at start, OPENBLAS_NUM_THREADS),
 * and drops to 1 while a job is open, so BLAS calls made inside items run
 * single-threaded beside the pool's threads instead of on top of them.
 * Its idle threads spin (sched_yield) for OPENBLAS_THREAD_TIMEOUT after a
 * threaded call, by default 2^28 cycles: a tenth of a second in which they
 * take cores from the pool and from whatever runs next.  Unless the user
 * set it, kernels/blas.c asks for about as long as the pool's own workers
 * spin when it loads OpenBLAS.
 *
 * Synchronisation is pthread's and atomics (ThreadSanitizer sees both); the
 * futex only puts a thread to sleep and never orders memory. */
#include "engine-private.h"
#include "kernels/kernels.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define POOL_SPIN_NS 50000    /* how long an idle worker spins before sleeping */
#define POOL_OWNER_SPINS 4000  /* the owner's pauses (tens of µs) before it sleeps too */
#define POOL_RING 8            /* job slots */

typedef struct job {
  ts_task_fn fn;
  void *ctx;
  int64_t n;
  int64_t next;         /* atomic: the next item to claim */
  int64_t done;         /* atomic: items finished */
  int finished;         /* atomic: done reached n (the owner's futex word) */
  int open;             /* atomic: fn, ctx, n and tag are set */
  unsigned tag;         /* the generation it was published as */
  int users;            /* atomic: workers inside it */
} job;

typedef struct pool {
  /* under `owner` */
  pthread_t workers[TS_MAX_THREADS - 1];
  int n_workers;
  int blas_threads;     /* what OpenBLAS is set to outside jobs */
  int blas_cap;         /* OpenBLAS's own count at start: the most it gets */
  job ring[POOL_RING];
  unsigned gen;         /* atomic: bumped per job and to stop workers (the futex word) */
  int sleepers;         /* atomic: workers asleep on gen */
  int owner_asleep;     /* atomic: the owner sleeps on its job's finished */
  int quit_from;        /* atomic: workers with this index and above exit */
} pool;

static pthread_mutex_t owner = PTHREAD_MUTEX_INITIALIZER;
static pool P = { .quit_from = INT_MAX };
static int threads = 1; /* atomic: ts_get_threads() */

/* Set on workers for good and on the owner during its job: parallel-fors
 * from here run inline. */
static _Thread_local bool in_pool __attribute__((tls_model("initial-exec")));

static void futex_wait(void *word, unsigned expected)
{
  syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake(void *word, int count)
{
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Claims and runs j's items until none is left; whoever finishes the
 * last one tells the owner. */
static void run_items(job *j)
{
  ts_task_fn fn = j->fn;
  void *ctx = j->ctx;
  int64_t n = j->n, ran = 0, i;
  while ((i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < n) {
    fn(ctx, i);
    ran++;
  }
  if (ran && __atomic_add_fetch(&j->done, ran, __ATOMIC_ACQ_REL) == n) {
    __atomic_store_n(&j->finished, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&P.owner_asleep, __ATOMIC_SEQ_CST))
      futex_wake(&j->finished, 1);
  }
}

/* The owner's wait for the items other threads took: some spinning
 * (they are usually about done), then sleep, leaving them the core (the
 * machine may have fewer free cores than threads). */
static void wait_finished(job *j)
{
  for (int spins = 0; spins < POOL_OWNER_SPINS; spins++) {
    if (__atomic_load_n(&j->finished, __ATOMIC_ACQUIRE))
      return;
    cpu_relax();
  }
  __atomic_store_n(&P.owner_asleep, 1, __ATOMIC_SEQ_CST);
  while (!__atomic_load_n(&j->finished, __ATOMIC_SEQ_CST))
    futex_wait(&j->finished, 0);
  __atomic_store_n(&P.owner_asleep, 0, __ATOMIC_RELAXED);
}

/* Closes slot j and waits for workers still inside it (from POOL_RING
 * jobs ago: almost never any) to leave. */
static void close_slot(job *j)
{
  __atomic_store_n(&j->open, 0, __ATOMIC_SEQ_CST);
  for (int spins = 0; __atomic_load_n(&j->users, __ATOMIC_ACQUIRE) != 0; spins++)
    if (spins < POOL_OWNER_SPINS)
      cpu_relax();
    else
      sched_yield();
}

/* The next generation after seen: spins a while, then sleeps. */
static unsigned wait_generation(unsigned seen)
{
  int64_t start = 0;
  for (int spins = 0;; spins++) {
    unsigned g = __atomic_load_n(&P.gen, __ATOMIC_ACQUIRE);
    if (g != seen)
      return g;
    cpu_relax();
    if ((spins & 255) != 255)
      continue;
    int64_t t = now_ns();
    if (!start)
      start = t;
    else if (t - start > POOL_SPIN_NS)
      break;
  }
  __atomic_fetch_add(&P.sleepers, 1, __ATOMIC_SEQ_CST);
  unsigned g;
  while ((g = __atomic_load_n(&P.gen, __ATOMIC_SEQ_CST)) == seen)
    futex_wait(&P.gen, seen);
  __atomic_fetch_sub(&P.sleepers, 1, __ATOMIC_SEQ_CST);
  return g;
}

static void *worker_main(void *arg)
{
  int index = (int)(intptr_t)arg;
  in_pool = true;
  /* a name for profilers and debuggers (the main thread is pool thread 0) */
  char name[16];
  snprintf(name, sizeof name, "ts-pool-%u", (unsigned)index % TS_MAX_THREADS + 1u); /* index < TS_MAX_THREADS */
  pthread_setname_np(pthread_self(), name);
  unsigned seen = 0;
  for (;;) {
    seen = wait_generation(seen);
    if (index >= __atomic_load_n(&P.quit_from, __ATOMIC_ACQUIRE))
      return NULL;
    job *j = &P.ring[seen % POOL_RING];
    __atomic_fetch_add(&j->users, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&j->open, __ATOMIC_SEQ_CST) && j->tag == seen)
      run_items(j);
    __atomic_fetch_sub(&j->users, 1, __ATOMIC_RELEASE);
  }
}

/* Bumps the generation and wakes up to `count` sleeping workers. */
static void signal_workers(int count)
{
  __atomic_fetch_add(&P.gen, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&P.sleepers, __ATOMIC_SEQ_CST) > 0)
    futex_wake(&P.gen, count);
}

/* Stops the workers with index >= keep and joins them.  Owner held. */
static void stop_workers(int keep)
{
  if (P.n_workers <= keep)
    return;
  __atomic_store_n(&P.quit_from, keep, __ATOMIC_RELEASE);
  signal_workers(INT_MAX);
  for (int i = keep; i < P.n_workers; i++)
    pthread_join(P.workers[i], NULL);
  P.n_workers = keep;
  __atomic_store_n(&P.quit_from, INT_MAX, __ATOMIC_RELEASE);
}

/* Starts workers up to want (fewer if the system refuses).  Owner held.
 * They block signals: those belong to the user's threads. */
static void start_workers(int want)
{
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  while (P.n_workers < want &&
         pthread_create(&P.workers[P.n_workers], NULL, worker_main,
                        (void *)(intptr_t)P.n_workers) == 0)
    P.n_workers++;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void set_blas_threads(int n)
{
  if (n != P.blas_threads) {
    ts__blas_set_threads(n);
    P.blas_threads = n;
  }
}

static void run_inline(int64_t n, ts_task_fn fn, void *ctx)
{
  for (int64_t i = 0; i < n; i++)
    fn(ctx, i);
}

void ts__parallel_for(int64_t n, ts_task_fn fn, void *ctx)
{
  int width = __atomic_load_n(&threads, __ATOMIC_RELAXED);
  if (n <= 1 || width <= 1 || in_pool || pthread_mutex_trylock(&owner) != 0) {
    run_inline(n, fn, ctx);
    return;
  }
  if (P.n_workers < width - 1)
    start_workers(width - 1);
  if (P.n_workers == 0) {
    pthread_mutex_unlock(&owner);
    run_inline(n, fn, ctx);
    return;
  }

  int blas = P.blas_threads;
  set_blas_threads(1);
  unsigned g = __atomic_load_n(&P.gen, __ATOMIC_RELAXED) + 1; /* only the owner moves gen */
  job *j = &P.ring[g % POOL_RING];
  close_slot(j);
  j->fn = fn;
  j->ctx = ctx;
  j->n = n;
  j->tag = g;
  __atomic_store_n(&j->next, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&j->done, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&j->finished, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&j->open, 1, __ATOMIC_SEQ_CST);
  signal_workers((int)MIN(n - 1, (int64_t)P.n_workers));

  in_pool = true;
  run_items(j);
  in_pool = false;
  wait_finished(j);
  set_blas_threads(blas);
  pthread_mutex_unlock(&owner);
}

int ts__pool_width(void)
{
  return in_pool ? 1 : __atomic_load_n(&threads, __ATOMIC_RELAXED);
}

/* ---- ranges ------------------------------------------------------------------ */

#define RANGE_ALIGN 64        /* items (grains this large): a cache line even of bytes */
#define RANGE_PER_THREAD 4    /* ranges a thread may claim (uneven progress) */

typedef struct range_job {
  ts_range_fn fn;
  void *ctx;
  int64_t n, step;
} range_job;

static void range_item(void *ctx, int64_t i)
{
  const range_job *j = ctx;
  int64_t begin = i * j->step;
  j->fn(j->ctx, begin, MIN(begin + j->step, j->n));
}

void ts__parallel_range(int64_t n, int64_t grain, ts_range_fn fn, void *ctx)
{
  if (n <= 0)
    return;
  int width = ts__pool_width();
  grain = MAX(grain, 1);
  if (width <= 1 || n < 2 * grain) {
    fn(ctx, 0, n);
    return;
  }
  int64_t parts = MIN(n / grain, (int64_t)width * RANGE_PER_THREAD);
  int64_t step = (n + parts - 1) / parts;
  if (grain >= RANGE_ALIGN)
    step = (step + RANGE_ALIGN - 1) / RANGE_ALIGN * RANGE_ALIGN;
  range_job j = { fn, ctx, n, step };
  ts__parallel_for((n + step - 1) / step, range_item, &j);
}

/* ---- the policy -------------------------------------------------------------- */

static int cores(void)
{
  return CLAMP(g_get_num_processors(), 1, TS_MAX_THREADS);
}

/* Owner held. */
static void apply_threads(int n)
{
  __atomic_store_n(&threads, n, __ATOMIC_RELAXED);
  stop_workers(n - 1);
  set_blas_threads(MIN(n, P.blas_cap));
}

/* TRACESCOPE_THREADS, else every core; OpenBLAS follows from the start. */
__attribute__((constructor)) static void pool_init(void)
{
  int n = cores();
  const char *env = getenv("TRACESCOPE_THREADS");
  if (env && *env) {
    char *end;
    long v = strtol(env, &end, 10);
    if (*end || v < 0 || v > TS_MAX_THREADS)
      fprintf(stderr, "tracescope: TRACESCOPE_THREADS=%s is not a thread count "
              "(0 to %d); using %d\n", env, TS_MAX_THREADS, n);
    else if (v > 0)
      n = (int)v;
  }
  pthread_mutex_lock(&owner);
  P.blas_cap = MAX(ts__blas_threads(), 1); /* loads OpenBLAS (kernels/blas.c) */
  P.blas_threads = P.blas_cap;
  apply_threads(n);
  pthread_mutex_unlock(&owner);
}

/* Workers are joined at exit unless a job is running (exit from another
 * thread): leak checkers then see no thread of ours. */
__attribute__((destructor)) static void pool_fini(void)
{
  if (pthread_mutex_trylock(&owner) != 0)
    return;
  if (!in_pool)
    stop_workers(0);
  pthread_mutex_unlock(&owner);
}

bool ts_set_threads(int n)
{
  TS_CHECK_ARG(n >= 0 && n <= TS_MAX_THREADS, false);
  TS_CHECK_ARG(!in_pool, false); /* the job running here holds the pool */
  pthread_mutex_lock(&owner);
  apply_threads(n ? n : cores());
  pthread_mutex_unlock(&owner);
  return true;
}

int ts_get_threads(void)
{
  return __atomic_load_n(&threads, __ATOMIC_RELAXED);
}

void ts_parallel_for(int64_t n, ts_task_fn fn, void *ctx)
{
  TS_CHECK_ARG(fn != NULL || n <= 0, );
  ts__parallel_for(n, fn, ctx);
}
