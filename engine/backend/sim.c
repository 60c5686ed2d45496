/* sim.c — SIM:0, a simulated discrete GPU, so that everything on the
 * device path that is not a CUDA kernel runs in every build and in CI.
 *
 * - Its buffers' bases are not host addresses: host memory with a bit set that
 *   makes the address non-canonical (TAG), so a host dereference faults at
 *   once (under ASan too).  The backend translates them on its thread;
 *   base + offset stays a buffer address (the planner's arena).
 * - Data moves only through its copies.  Work is queued on one stream,
 *   served by a thread of its own: launches, device copies, memsets and
 *   frees return at once; a host copy waits for the work before it; a
 *   copy from the host is staged first (as from pageable memory), so the
 *   caller may reuse its memory at once.
 * - Its kernels are the CPU kernels, run on the stream's thread over
 *   translated headers.  A failing kernel's error is reported by the next
 *   synchronize or host copy, as a GPU reports it.
 * - Events and synchronize work on the stream's progress.
 * - Plans: launches between graph_plan_create/update and
 *   graph_plan_compute are captured, then submitted as one; a plan whose
 *   launches are those of its last run (same ops and shapes) keeps its
 *   graph-node ids and only takes the new buffers, as cudaGraphExecUpdate.
 *   Replayed kernels report the node's id and the plan launch's
 *   correlation; the capture reports which op each node stands for.  A
 *   whole capture can be launched again as it is (graph_plan_replay): the
 *   buffers freed while it captured stay its own until the next capture.
 * - Branches and loops in plans (graph_plan_if_* and _while_*), as CUDA's
 *   conditional nodes: an If or a While is a launch holding its bodies
 *   (launches, Ifs and loops among them: then and else, or the loop's
 *   body) and a condition word, written by "set" launches (one before the
 *   node, and a loop's at the end of its body) from a device tensor's
 *   element; the stream's thread runs the then or the else body by the
 *   word, or the loop's body while it is nonzero.  A host copy inside an
 *   open node submits what came before the outermost one and drops that
 *   node and every launch up to its end, unrun.
 * - Activity records (device times on CLOCK_MONOTONIC) are kept in a
 *   buffer and handed to the collectors in batches, when it fills or on
 *   ts_activity_flush, as CUPTI's activity API does.
 * - TRACESCOPE_SIM_LAUNCH_US: host time each launch costs (a plan's
 *   submission costs one), so launch overhead can be measured.
 * - TRACESCOPE_SIM_CONDITIONALS=0 (read at each branch or loop opened):
 *   opening one fails, as a CUDA driver refusing a conditional node does,
 *   so that the engine's way back to the host runs in CI. */
#include "../engine-private.h"
#include "../op_clock.h"

#include <pthread.h>
#include <stdlib.h>

#define TAG ((uintptr_t)1 << 62)
#define RECORDS 256 /* activity records held before a batch goes out */
#define SIM_MAX_BUFFER ((size_t)4 << 30) /* one buffer at most, as a GPU's allocator caps */

static void *host_of(const void *dev)
{
  return (void *)((uintptr_t)dev ^ TAG);
}

static void *dev_of(const void *host)
{
  return (void *)((uintptr_t)host ^ TAG);
}

typedef enum { LAUNCH_COPY, LAUNCH_KERNEL, LAUNCH_SET, LAUNCH_IF, LAUNCH_WHILE } launch_kind;

/* An If or a loop of a plan: its condition and bodies. */
typedef struct sim_cond {
  uint32_t word;     /* the condition, written by its LAUNCH_SET launches on the stream's thread */
  GPtrArray *body[2]; /* launch *, owned: an If's then and else, a loop's body (and NULL) */
  int filling;       /* while captured: the body launches go to */
} sim_cond;

/* A kernel as queued or captured: headers of its tensors (device
 * addresses) and its own copy of the attributes; or a copy, a loop, or
 * the setting of a loop's condition from in[0]'s element. */
typedef struct launch {
  launch_kind kind;
  const ts_op_def *def; /* LAUNCH_KERNEL's op; LAUNCH_COPY: `bytes` from in[0] to out[0] */
  size_t bytes;
  ts_loc loc;
  uint64_t seq, correlation;
  uint32_t operand;    /* a copy: ts_activity_operand when it was asked for */
  uint64_t graph_node; /* captured: its node's id */
  int n_in, n_out;
  ts_tensor in[TS_MAX_INPUTS], out[TS_MAX_OUTPUTS];
  ts_attr *attrs;
  sim_cond *cond;      /* LAUNCH_IF, LAUNCH_WHILE: its own; LAUNCH_SET: the one whose condition
                          it sets */
} launch;

typedef enum { W_KERNEL, W_COPY, W_MEMSET, W_FREE, W_EVENT, W_PLAN } work_kind;

struct ts_device_event {
  uint64_t mark;      /* the stream's count of work when recorded */
  uint64_t time_ns;   /* device time when the stream passed it */
  bool done;          /* atomic */
};

typedef struct work {
  struct work *next;
  work_kind kind;
  uint64_t correlation;
  uint32_t operand;               /* W_COPY: ts_activity_operand when it was asked for */
  launch *kernel;                 /* W_KERNEL (owned) */
  void *dst;                      /* W_COPY, W_MEMSET: a device address; W_FREE: host */
  const void *src;                /* W_COPY: device address, or staged host memory */
  void *staged;                   /* W_COPY from the host: freed after */
  int value;
  size_t bytes;
  ts_device_event *event;         /* W_EVENT */
  struct ts_graph_plan *plan;     /* W_PLAN */
  GArray *nodes;                  /* W_PLAN: its GRAPH_NODE records (ts_activity), told as it
                                     starts to run, so that a launch's kernels follow its own
                                     (the next call's launch may be submitted before) */
} work;

struct ts_graph_plan {
  GPtrArray *nodes;      /* the launches it replays (launch *, owned) */
  GPtrArray *capture;    /* what this run captured (launch *, owned) */
  GArray *deferred;      /* buffers freed while capturing (void *, host addresses) */
  GArray *held;          /* those of the capture in nodes: its launches use them */
  GPtrArray *open;       /* the loops (launch *) this capture is inside, innermost last */
  bool broken;           /* a host copy interrupted this capture: not replayable */
  int running;           /* submissions not yet done (under the stream lock) */
};

typedef struct sim {
  pthread_once_t once;
  pthread_mutex_t lock;
  pthread_cond_t wake, idle;
  work *head, *tail;
  uint64_t submitted, completed;  /* under lock */
  ts_error *error;                /* the first failure since the last report */
  uint64_t launch_ns;             /* TRACESCOPE_SIM_LAUNCH_US */
  uint64_t next_graph_node;       /* atomic */
  pthread_mutex_t rec_lock;
  ts_activity records[RECORDS];
  int n_records;
  int64_t live_bytes, total_bytes;
} sim;

/* The plan this thread is capturing into, if any: a capture is one
 * executor run, on one thread. */
static _Thread_local ts_graph_plan *capturing;
/* Loops open when a host copy broke this thread's capture: launches are
 * dropped unrun until they have all ended. */
static _Thread_local int dropping;

static sim the_sim = {
  .once = PTHREAD_ONCE_INIT,
  .lock = PTHREAD_MUTEX_INITIALIZER,
  .wake = PTHREAD_COND_INITIALIZER,
  .idle = PTHREAD_COND_INITIALIZER,
  .rec_lock = PTHREAD_MUTEX_INITIALIZER,
  .total_bytes = (int64_t)16 << 30,
};

/* ---- activity ------------------------------------------------------------------------ */

static void deliver_records(sim *s)
{
  ts_activity batch[RECORDS];
  pthread_mutex_lock(&s->rec_lock);
  int n = s->n_records;
  memcpy(batch, s->records, sizeof *batch * (size_t)n);
  s->n_records = 0;
  pthread_mutex_unlock(&s->rec_lock);
  ts_activity_deliver(batch, n);
}

static void record(sim *s, const ts_activity *a)
{
  pthread_mutex_lock(&s->rec_lock);
  s->records[s->n_records++] = *a;
  bool full = s->n_records == RECORDS;
  pthread_mutex_unlock(&s->rec_lock);
  if (full)
    deliver_records(s);
}

static void record_span(sim *s, ts_activity_kind kind, const char *name, uint64_t correlation,
                        uint32_t operand, uint64_t graph_node, uint64_t start, size_t bytes)
{
  if (!ts_activity_wanted())
    return;
  record(s, &(ts_activity){ .kind = kind, .device = "SIM:0", .correlation = correlation,
                            .operand = operand, .graph_node = graph_node, .start_ns = start,
                            .end_ns = ts__op_now_ns(), .bytes = bytes, .name = name });
}

/* ---- the stream's thread -------------------------------------------------------------- */

static void fail(sim *s, ts_error *e)
{
  pthread_mutex_lock(&s->lock);
  if (!s->error)
    s->error = e, e = NULL;
  pthread_mutex_unlock(&s->lock);
  ts_error_free(e);
}

static void run_kernel(sim *s, launch *l, uint64_t correlation)
{
  if (!l->def) {
    uint64_t start = ts__op_now_ns();
    memmove(host_of(l->out[0].data), host_of(l->in[0].data), l->bytes);
    record_span(s, TS_ACTIVITY_COPY, "device to device", correlation, l->operand, l->graph_node, start,
                l->bytes);
    return;
  }
  ts_tensor *in[TS_MAX_INPUTS], *out[TS_MAX_OUTPUTS];
  ts_tensor hin[TS_MAX_INPUTS], hout[TS_MAX_OUTPUTS];
  const ts_backend *cpu = ts_backend_cpu();
  for (int i = 0; i < l->n_in; i++) {
    hin[i] = l->in[i];
    hin[i].data = host_of(l->in[i].data);
    hin[i].backend = cpu;
    in[i] = &hin[i];
  }
  for (int i = 0; i < l->n_out; i++) {
    hout[i] = l->out[i];
    hout[i].data = host_of(l->out[i].data);
    hout[i].backend = cpu;
    out[i] = &hout[i];
  }
  ts_kernel_ctx k = { .def = l->def, .loc = l->loc, .backend = cpu, .seq = l->seq,
                      .n_in = l->n_in, .in = in, .attrs = l->attrs, .n_out = l->n_out,
                      .out = out, .correlation = l->correlation };
  uint64_t start = ts__op_now_ns();
  ts_scope *scope = ts_scope_begin();
  bool ok = l->def->kernel[TS_DEVICE_CPU](&k);
  ts_scope_end(scope);
  record_span(s, TS_ACTIVITY_KERNEL, l->def->name, correlation, 0, l->graph_node, start, 0);
  if (!ok)
    fail(s, ts_error_take());
}

static void launch_free(launch *l)
{
  if (!l)
    return;
  if (l->kind == LAUNCH_IF || l->kind == LAUNCH_WHILE) {
    for (int i = 0; i < 2; i++)
      if (l->cond->body[i])
        g_ptr_array_unref(l->cond->body[i]);
    g_free(l->cond);
  }
  for (int i = 0; l->attrs && l->def && i < l->def->n_attrs; i++)
    if (l->attrs[i].type == TS_ATTR_STRING)
      g_free((char *)l->attrs[i].s);
  g_free(l->attrs);
  g_free(l);
}

static bool failed_since(sim *s)
{
  pthread_mutex_lock(&s->lock);
  bool failed = s->error != NULL;
  pthread_mutex_unlock(&s->lock);
  return failed;
}

/* Runs a launch of a plan (or queued alone); a loop's body until its
 * condition is false, or until a kernel of it failed (a loop whose
 * condition a failed kernel should have cleared would never end). */
static void run_launch(sim *s, launch *l, uint64_t correlation)
{
  switch (l->kind) {
  case LAUNCH_COPY:
  case LAUNCH_KERNEL: run_kernel(s, l, correlation); break;
  case LAUNCH_SET: l->cond->word = ts__load_f64(l->in[0].dtype, host_of(l->in[0].data), 0) != 0; break;
  case LAUNCH_IF: {
    GPtrArray *body = l->cond->body[l->cond->word ? 0 : 1];
    for (guint i = 0; i < body->len; i++)
      run_launch(s, g_ptr_array_index(body, i), correlation);
    break;
  }
  case LAUNCH_WHILE:
    while (l->cond->word && !failed_since(s))
      for (guint i = 0; i < l->cond->body[0]->len; i++)
        run_launch(s, g_ptr_array_index(l->cond->body[0], i), correlation);
    break;
  }
}

static void run_work(sim *s, work *w)
{
  uint64_t start = ts__op_now_ns();
  switch (w->kind) {
  case W_KERNEL: run_launch(s, w->kernel, w->correlation); break;
  case W_COPY:
    memmove(host_of(w->dst), w->staged ? w->staged : host_of(w->src), w->bytes);
    record_span(s, TS_ACTIVITY_COPY, w->staged ? "host to device" : "device to device",
                w->correlation, w->operand, 0, start, w->bytes);
    break;
  case W_MEMSET:
    memset(host_of(w->dst), w->value, w->bytes);
    record_span(s, TS_ACTIVITY_MEMSET, "memset", w->correlation, 0, 0, start, w->bytes);
    break;
  case W_FREE: free(w->dst); break;
  case W_EVENT:
    w->event->time_ns = start;
    __atomic_store_n(&w->event->done, true, __ATOMIC_RELEASE);
    break;
  case W_PLAN:
    for (guint i = 0; w->nodes && i < w->nodes->len; i++)
      record(s, &g_array_index(w->nodes, ts_activity, i));
    for (guint i = 0; i < w->plan->nodes->len; i++)
      run_launch(s, g_ptr_array_index(w->plan->nodes, i), w->correlation);
    break;
  }
}

static void work_free(work *w)
{
  if (w->kind == W_KERNEL)
    launch_free(w->kernel);
  if (w->nodes)
    g_array_unref(w->nodes);
  g_free(w->staged);
  g_free(w);
}

static void *stream_main(void *data)
{
  sim *s = data;
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (!s->head)
      pthread_cond_wait(&s->wake, &s->lock);
    work *w = s->head;
    s->head = w->next;
    if (!s->head)
      s->tail = NULL;
    pthread_mutex_unlock(&s->lock);
    run_work(s, w);
    pthread_mutex_lock(&s->lock);
    if (w->kind == W_PLAN)
      w->plan->running--;
    work_free(w);
    s->completed++;
    pthread_cond_broadcast(&s->idle);
  }
  return NULL;
}

static void start(void)
{
  sim *s = &the_sim;
  const char *us = g_getenv("TRACESCOPE_SIM_LAUNCH_US");
  s->launch_ns = us ? (uint64_t)(g_ascii_strtod(us, NULL) * 1000) : 0;
  s->next_graph_node = 1;
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&thread, &attr, stream_main, s);
  pthread_attr_destroy(&attr);
  g_assert(rc == 0); /* no stream, no device: nothing sensible to go on with */
}

static sim *get(void)
{
  pthread_once(&the_sim.once, start);
  return &the_sim;
}

/* Queues w; returns the stream's count after it (for events). */
static uint64_t submit(sim *s, work *w)
{
  pthread_mutex_lock(&s->lock);
  if (s->tail)
    s->tail->next = w;
  else
    s->head = w;
  s->tail = w;
  uint64_t mark = ++s->submitted;
  pthread_cond_signal(&s->wake);
  pthread_mutex_unlock(&s->lock);
  return mark;
}

static work *work_new(work_kind kind)
{
  work *w = g_new0(work, 1);
  w->kind = kind;
  return w;
}

/* Waits for everything queued; false + the first failure since the last
 * report (taken, so each failure is reported once). */
static bool wait_idle(sim *s, bool report)
{
  pthread_mutex_lock(&s->lock);
  while (s->completed != s->submitted)
    pthread_cond_wait(&s->idle, &s->lock);
  ts_error *e = report ? s->error : NULL;
  if (report)
    s->error = NULL;
  pthread_mutex_unlock(&s->lock);
  if (!e)
    return true;
  ts__error_put(e);
  return false;
}

static void spend_launch_cost(sim *s)
{
  if (!s->launch_ns)
    return;
  uint64_t until = ts__op_now_ns() + s->launch_ns;
  while (ts__op_now_ns() < until)
    ;
}

/* Where p's capture puts a launch: the innermost open loop's body, or
 * the top. */
static GPtrArray *target(ts_graph_plan *p)
{
  if (!p->open->len)
    return p->capture;
  const sim_cond *c = ((launch *)g_ptr_array_index(p->open, p->open->len - 1))->cond;
  return c->body[c->filling];
}

/* A capture stops being replayable when the host must see its results:
 * what it holds goes out launch by launch. */
static void break_capture(sim *s);
static void release(sim *s, GArray *buffers);

/* ---- the interface -------------------------------------------------------------------- */

static bool sim_memory_info(const ts_backend *b, size_t *free_bytes, size_t *total_bytes)
{
  sim *s = get();
  int64_t live = __atomic_load_n(&s->live_bytes, __ATOMIC_RELAXED);
  *total_bytes = (size_t)s->total_bytes;
  *free_bytes = live < s->total_bytes ? (size_t)(s->total_bytes - live) : 0;
  return true;
}

/* The CPU kernels, on tensors the stream can reach: never strings or
 * variants (they live on the host: ops that may make them, such as the
 * TensorList ops, run there; a view of a number tensor is no such op),
 * never ops that run subgraphs or have effects on the host (print).  The
 * variable ops run here (state.c reads with views and writes through the
 * backend's copies and kernels), so variables made on SIM:0 live here. */
static bool sim_supports_op(const ts_backend *b, const ts_kernel_ctx *k)
{
  const ts_op_def *def = k->def;
  if (!def->kernel[TS_DEVICE_CPU] ||
      (def->flags & (TS_OPF_CONTROL_FLOW | TS_OPF_INPUT | TS_OPF_VALUE)) ||
      ((def->flags & TS_OPF_STATEFUL) && !(def->flags & TS_OPF_VARIABLE)) ||
      (def->flags & (TS_OPF_ANY_DTYPE | TS_OPF_ALIAS)) == TS_OPF_ANY_DTYPE)
    return false;
  for (int i = 0; i < k->n_in; i++)
    if (k->in[i]->dtype == TS_STRING || k->in[i]->dtype == TS_VARIANT)
      return false;
  return true;
}

/* ---- its buffers ---- */

static void sim_free(ts_buffer *buf)
{
  sim *s = get();
  __atomic_sub_fetch(&s->live_bytes, (int64_t)buf->size, __ATOMIC_RELAXED);
  void *host = host_of(buf->base);
  if (capturing) { /* the plan's launches may still use it */
    g_array_append_val(capturing->deferred, host);
    return;
  }
  work *w = work_new(W_FREE);
  w->dst = host;
  submit(s, w);
}

static bool take_error(sim *s)
{
  return wait_idle(s, true);
}

/* On the caller's thread once the stream is idle, recorded as the copy
 * it is (the op's whose input it is, if any). */
static bool sim_get(const ts_buffer *buf, size_t offset, void *host_dst, size_t bytes)
{
  sim *s = get();
  const void *src = buf->base + offset;
  if (capturing)
    break_capture(s);
  if (!take_error(s))
    return false;
  uint64_t start = ts__op_now_ns();
  memcpy(host_dst, host_of(src), bytes);
  record_span(s, TS_ACTIVITY_COPY, "device to host", ts_activity_correlation(),
              ts_activity_operand(), 0, start, bytes);
  return true;
}

static bool sim_set(ts_buffer *buf, size_t offset, const void *host_src, size_t bytes)
{
  sim *s = get();
  work *w = work_new(W_COPY);
  w->staged = g_try_malloc(bytes);
  if (!w->staged) {
    g_free(w);
    return false;
  }
  memcpy(w->staged, host_src, bytes);
  w->dst = buf->base + offset;
  w->bytes = bytes;
  w->correlation = ts_activity_correlation();
  w->operand = ts_activity_operand();
  submit(s, w); /* fresh buffers only: never one the capture's launches use */
  return true;
}

/* Queued; while a plan captures, after what it captured (the capture is
 * broken: the planner's poisoning is the only memset in a run). */
static bool sim_memset(ts_buffer *buf, size_t offset, int value, size_t bytes)
{
  sim *s = get();
  if (dropping)
    return true;
  if (capturing)
    break_capture(s);
  work *w = work_new(W_MEMSET);
  w->dst = buf->base + offset;
  w->value = value;
  w->bytes = bytes;
  w->correlation = ts_activity_correlation();
  submit(s, w);
  return true;
}

static bool sim_copy_from(ts_buffer *buf, size_t offset, const ts_buffer *src_buf,
                          size_t src_offset, size_t bytes)
{
  if (src_buf->type != buf->type)
    return false; /* from the host: set stages it */
  sim *s = get();
  void *dst = buf->base + offset;
  const void *src = src_buf->base + src_offset;
  if (dropping)
    return true;
  if (capturing) { /* a node of the plan */
    launch *l = g_new0(launch, 1);
    l->bytes = bytes;
    l->correlation = ts_activity_correlation();
    l->operand = ts_activity_operand();
    l->n_in = l->n_out = 1;
    l->in[0].data = (void *)src;
    l->out[0].data = dst;
    g_ptr_array_add(target(capturing), l);
    return true;
  }
  work *w = work_new(W_COPY);
  w->dst = dst;
  w->src = src;
  w->bytes = bytes;
  w->correlation = ts_activity_correlation();
  w->operand = ts_activity_operand();
  submit(s, w);
  return true;
}

static const ts_buffer_i SIM_BUFFER = {
  .free_buffer = sim_free,
  .set = sim_set,
  .get = sim_get,
  .memset = sim_memset,
  .copy_from = sim_copy_from,
};

static ts_buffer *sim_alloc_buffer(const ts_buffer_type *bt, size_t size)
{
  sim *s = get();
  void *p = NULL;
  if (posix_memalign(&p, 64, size ? size : 1) != 0)
    return NULL;
  ts_buffer *buf = ts_buffer_new(bt, &SIM_BUFFER, dev_of(p), size, NULL);
  if (!buf) {
    free(p);
    return NULL;
  }
  __atomic_add_fetch(&s->live_bytes, (int64_t)size, __ATOMIC_RELAXED);
  return buf;
}

/* ---- launches ---- */

static ts_attr *attrs_copy(const ts_op_def *def, const ts_attr *attrs)
{
  if (!attrs || !def->n_attrs)
    return NULL;
  ts_attr *a = g_memdup2(attrs, sizeof *a * (size_t)def->n_attrs);
  for (int i = 0; i < def->n_attrs; i++)
    if (a[i].type == TS_ATTR_STRING)
      a[i].s = g_strdup(a[i].s);
  return a;
}

static launch *launch_new(const ts_kernel_ctx *k)
{
  launch *l = g_new0(launch, 1);
  *l = (launch){ .kind = LAUNCH_KERNEL, .def = k->def, .loc = k->loc, .seq = k->seq, .correlation = k->correlation,
                 .n_in = k->n_in, .n_out = k->n_out, .attrs = attrs_copy(k->def, k->attrs) };
  for (int i = 0; i < k->n_in; i++)
    l->in[i] = (ts_tensor){ .refcount = 1, .dtype = k->in[i]->dtype, .shape = k->in[i]->shape,
                            .size = k->in[i]->size, .data = k->in[i]->data };
  for (int i = 0; i < k->n_out; i++)
    l->out[i] = (ts_tensor){ .refcount = 1, .dtype = k->out[i]->dtype,
                             .shape = k->out[i]->shape, .size = k->out[i]->size,
                             .data = k->out[i]->data };
  return l;
}

static bool sim_run_op(const ts_backend *b, ts_kernel_ctx *k)
{
  /* Views only make headers, and the variable ops keep the variables'
   * bookkeeping (launching their writes here): on the caller's thread,
   * over device addresses. */
  if (k->def->flags & (TS_OPF_ALIAS | TS_OPF_VARIABLE))
    return ts_kernel_run(k, TS_DEVICE_CPU);
  for (int i = 0; i < k->n_in; i++)
    if (k->in[i]->backend != b)
      return ts__kernel_fail(k, TS_ERR_INTERNAL, "input %d is on %s, not on SIM:0", i,
                             ts_backend_name(k->in[i]->backend));
  for (int i = 0; i < k->n_out; i++)
    if (k->out[i]->backend != b)
      return ts__kernel_fail(k, TS_ERR_INTERNAL, "output %d is on %s, not on SIM:0", i,
                             ts_backend_name(k->out[i]->backend));
  sim *s = get();
  if (dropping)
    return true;
  launch *l = launch_new(k);
  if (capturing) {
    g_ptr_array_add(target(capturing), l);
    return true;
  }
  spend_launch_cost(s);
  work *w = work_new(W_KERNEL);
  w->kernel = l;
  w->correlation = k->correlation;
  submit(s, w);
  return true;
}

static bool sim_synchronize(const ts_backend *b)
{
  sim *s = get();
  uint64_t start = ts__op_now_ns();
  bool ok = take_error(s);
  record_span(s, TS_ACTIVITY_SYNC, "synchronize", 0, 0, 0, start, 0);
  return ok;
}

static ts_device_event *sim_event_new(const ts_backend *b)
{
  ts_device_event *e = g_new0(ts_device_event, 1);
  e->done = true; /* never recorded: nothing to wait for */
  return e;
}

static void sim_event_free(const ts_backend *b, ts_device_event *e)
{
  sim *s = get();
  /* the stream may still hold it: wait until it has passed */
  pthread_mutex_lock(&s->lock);
  while (!__atomic_load_n(&e->done, __ATOMIC_ACQUIRE))
    pthread_cond_wait(&s->idle, &s->lock);
  pthread_mutex_unlock(&s->lock);
  g_free(e);
}

static bool sim_event_record(const ts_backend *b, ts_device_event *e)
{
  sim *s = get();
  pthread_mutex_lock(&s->lock); /* the stream may be passing its last recording */
  while (!__atomic_load_n(&e->done, __ATOMIC_ACQUIRE))
    pthread_cond_wait(&s->idle, &s->lock);
  pthread_mutex_unlock(&s->lock);
  __atomic_store_n(&e->done, false, __ATOMIC_RELAXED);
  work *w = work_new(W_EVENT);
  w->event = e;
  e->mark = submit(s, w);
  return true;
}

/* One stream: work queued after an event of SIM:0 already runs after it. */
static bool sim_event_wait(const ts_backend *b, const ts_device_event *e)
{
  return true;
}

static bool sim_event_query(const ts_backend *b, const ts_device_event *e)
{
  return __atomic_load_n(&e->done, __ATOMIC_ACQUIRE);
}

static bool sim_event_elapsed(const ts_backend *b, const ts_device_event *start,
                              const ts_device_event *end, uint64_t *ns)
{
  if (!sim_event_query(b, start) || !sim_event_query(b, end) || end->time_ns < start->time_ns)
    return false;
  *ns = end->time_ns - start->time_ns;
  return true;
}

/* ---- plans ---------------------------------------------------------------------------- */

static ts_graph_plan *sim_plan_create(const ts_backend *b)
{
  get();
  ts_graph_plan *p = g_new0(ts_graph_plan, 1);
  p->nodes = g_ptr_array_new_with_free_func((GDestroyNotify)launch_free);
  p->capture = g_ptr_array_new_with_free_func((GDestroyNotify)launch_free);
  p->deferred = g_array_new(FALSE, FALSE, sizeof(void *));
  p->held = g_array_new(FALSE, FALSE, sizeof(void *));
  p->open = g_ptr_array_new();
  capturing = p;
  dropping = 0;
  return p;
}

static bool sim_plan_update(const ts_backend *b, ts_graph_plan *p)
{
  sim *s = get();
  /* the last replay may still be reading the launches this capture replaces */
  pthread_mutex_lock(&s->lock);
  while (p->running)
    pthread_cond_wait(&s->idle, &s->lock);
  pthread_mutex_unlock(&s->lock);
  release(s, p->held);
  p->broken = false;
  g_ptr_array_set_size(p->open, 0);
  capturing = p;
  dropping = 0;
  return true;
}

/* Frees the buffers (host addresses), after the work queued so far. */
static void release(sim *s, GArray *buffers)
{
  for (guint i = 0; i < buffers->len; i++) {
    work *w = work_new(W_FREE);
    w->dst = g_array_index(buffers, void *, i);
    submit(s, w);
  }
  g_array_set_size(buffers, 0);
}

static void break_capture(sim *s)
{
  ts_graph_plan *p = capturing;
  capturing = NULL;
  p->broken = true;
  if (p->open->len) { /* the outermost open loop and its condition's setting end the top */
    dropping = (int)p->open->len;
    g_ptr_array_set_size(p->open, 0);
    g_ptr_array_set_size(p->capture, p->capture->len - 2);
  }
  while (p->capture->len) {
    work *w = work_new(W_KERNEL);
    w->kernel = g_ptr_array_steal_index(p->capture, 0);
    w->correlation = w->kernel->correlation;
    submit(s, w);
  }
  release(s, p->deferred);
}

/* Do the captured launches match the plan's nodes (the same ops on the same
 * shapes, the same loops), so that only their buffers change? */
static bool same_launches(const GPtrArray *nodes, const GPtrArray *capture)
{
  if (nodes->len != capture->len)
    return false;
  for (guint i = 0; i < nodes->len; i++) {
    const launch *a = g_ptr_array_index(nodes, i), *c = g_ptr_array_index(capture, i);
    if (a->kind != c->kind || a->def != c->def || a->bytes != c->bytes || a->n_in != c->n_in ||
        a->n_out != c->n_out)
      return false;
    for (int b = 0; b < 2 && (a->kind == LAUNCH_IF || a->kind == LAUNCH_WHILE); b++)
      if (a->cond->body[b] && !same_launches(a->cond->body[b], c->cond->body[b]))
        return false;
    for (int j = 0; j < a->n_in; j++)
      if (a->in[j].dtype != c->in[j].dtype || a->in[j].size != c->in[j].size)
        return false;
    for (int j = 0; j < a->n_out; j++)
      if (a->out[j].dtype != c->out[j].dtype || a->out[j].size != c->out[j].size)
        return false;
  }
  return true;
}

/* p's nodes go out as one submission, under the plan launch's own
 * correlation id, as cudaGraphLaunch's. */
static void submit_plan(sim *s, ts_graph_plan *p, GArray *nodes)
{
  spend_launch_cost(s);
  work *w = work_new(W_PLAN);
  w->plan = p;
  w->nodes = nodes;
  w->correlation = __atomic_fetch_add(&s->next_graph_node, 1, __ATOMIC_RELAXED) | (1ull << 63);
  pthread_mutex_lock(&s->lock);
  p->running++;
  pthread_mutex_unlock(&s->lock);
  submit(s, w);
}

/* Numbers the captured launches (in loops too), with the ids of the
 * plan's nodes where before holds them (the same launches), and says in
 * told (when not NULL) which op each kernel and copy stands for. */
static void name_nodes(sim *s, GPtrArray *capture, const GPtrArray *before, GArray *told)
{
  for (guint i = 0; i < capture->len; i++) {
    launch *c = g_ptr_array_index(capture, i);
    const launch *was = before ? g_ptr_array_index(before, i) : NULL;
    c->graph_node = was ? was->graph_node
                        : __atomic_fetch_add(&s->next_graph_node, 1, __ATOMIC_RELAXED);
    if (c->kind == LAUNCH_IF || c->kind == LAUNCH_WHILE) {
      for (int b = 0; b < 2; b++)
        if (c->cond->body[b])
          name_nodes(s, c->cond->body[b], was ? was->cond->body[b] : NULL, told);
    } else if (c->kind != LAUNCH_SET && told) /* which op of this run each node stands for */
      g_array_append_val(told, ((ts_activity){ .kind = TS_ACTIVITY_GRAPH_NODE, .device = "SIM:0",
                                               .correlation = c->correlation,
                                               .graph_node = c->graph_node,
                                               .name = c->def ? c->def->name : "copy" }));
  }
}

/* The nodes a replay launches say (in told) which op of this call they
 * stand for. */
static void renamed_nodes(const GPtrArray *nodes, const uint64_t *captured, const uint64_t *fresh,
                          int n, GArray *told)
{
  for (guint i = 0; i < nodes->len; i++) {
    const launch *l = g_ptr_array_index(nodes, i);
    if (l->kind == LAUNCH_IF || l->kind == LAUNCH_WHILE) {
      for (int b = 0; b < 2; b++)
        if (l->cond->body[b])
          renamed_nodes(l->cond->body[b], captured, fresh, n, told);
      continue;
    }
    if (l->kind == LAUNCH_SET)
      continue;
    uint64_t corr = ts__correlation_recharged(l->correlation, captured, fresh, n);
    g_array_append_val(told, ((ts_activity){ .kind = TS_ACTIVITY_GRAPH_NODE, .device = "SIM:0",
                                             .correlation = corr, .graph_node = l->graph_node,
                                             .name = l->def ? l->def->name : "copy" }));
  }
}

static bool sim_plan_compute(const ts_backend *b, ts_graph_plan *p)
{
  sim *s = get();
  dropping = 0; /* the run is over: every loop of it has ended */
  if (capturing != p)
    return true; /* broken mid-run: its launches went out one by one */
  capturing = NULL;
  g_ptr_array_set_size(p->open, 0);
  GArray *told = ts_activity_wanted() ? g_array_new(FALSE, FALSE, sizeof(ts_activity)) : NULL;
  name_nodes(s, p->capture, same_launches(p->nodes, p->capture) ? p->nodes : NULL, told);
  GPtrArray *t = p->nodes;
  p->nodes = p->capture;
  p->capture = t;
  g_ptr_array_set_size(p->capture, 0);
  if (p->nodes->len)
    submit_plan(s, p, told);
  else if (told)
    g_array_unref(told);
  /* the plan's until its next capture: replays use them */
  GArray *held = p->held;
  p->held = p->deferred;
  p->deferred = held;
  return true;
}

/* The last whole capture submitted again, one submission: its nodes
 * first say which of this call's ops they stand for. */
static bool sim_plan_replay(const ts_backend *b, ts_graph_plan *p, const uint64_t *captured,
                            const uint64_t *fresh, int n)
{
  sim *s = get();
  if (p->broken || capturing)
    return false;
  if (!p->nodes->len)
    return true;
  GArray *told = NULL;
  if (ts_activity_wanted()) {
    told = g_array_new(FALSE, FALSE, sizeof(ts_activity));
    renamed_nodes(p->nodes, captured, fresh, n, told);
  }
  submit_plan(s, p, told);
  return true;
}

static void sim_plan_free(const ts_backend *b, ts_graph_plan *p)
{
  sim *s = get();
  if (capturing == p)
    break_capture(s);
  pthread_mutex_lock(&s->lock);
  while (p->running)
    pthread_cond_wait(&s->idle, &s->lock);
  pthread_mutex_unlock(&s->lock);
  release(s, p->held);
  g_ptr_array_unref(p->nodes);
  g_ptr_array_unref(p->capture);
  g_array_unref(p->deferred);
  g_array_unref(p->held);
  g_ptr_array_unref(p->open);
  g_free(p);
}

/* ---- branches and loops ---- */

/* Is t a condition the stream can read: one element of a number or bool on SIM:0? */
static bool condition_ok(const ts_backend *b, const ts_tensor *t, const char *what)
{
  if (t && t->backend == b && t->data && t->size == 1 && t->dtype < TS_NUMERIC_DTYPE_COUNT)
    return true;
  char buf[TS_INFO_STR];
  ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL,
               "SIM:0: a branch's or loop's %s must be one number or bool on SIM:0, got %s on %s", what,
               t ? ts__info_str(buf, t->dtype, t->shape) : "none",
               t && t->backend ? ts_backend_name(t->backend) : "no device");
  return false;
}

/* The launch that sets cond's word from t's element. */
static launch *set_new(const ts_tensor *t, sim_cond *cond)
{
  launch *l = g_new0(launch, 1);
  l->kind = LAUNCH_SET;
  l->n_in = 1;
  l->in[0] = (ts_tensor){ .refcount = 1, .dtype = t->dtype, .shape = t->shape, .size = t->size,
                          .data = t->data };
  l->cond = cond;
  return l;
}

/* Opens an If or a loop where p's capture is, its word set from cond. */
static bool cond_begin(const ts_backend *b, ts_graph_plan *p, launch_kind kind, const ts_tensor *cond)
{
  if (dropping) { /* inside a node a host copy broke: dropped with it */
    dropping++;
    return true;
  }
  if (capturing != p) {
    ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL, "SIM:0: a %s begun outside its plan's capture",
                 kind == LAUNCH_IF ? "branch" : "loop");
    return false;
  }
  if (g_strcmp0(g_getenv("TRACESCOPE_SIM_CONDITIONALS"), "0") == 0) {
    ts_error_set(TS_ERR_UNIMPLEMENTED, (ts_loc){ 0 }, NULL,
                 "SIM:0: conditional nodes are turned off (TRACESCOPE_SIM_CONDITIONALS=0)");
    return false;
  }
  if (!condition_ok(b, cond, "condition"))
    return false;
  launch *l = g_new0(launch, 1);
  l->kind = kind;
  l->cond = g_new0(sim_cond, 1);
  for (int i = 0; i < (kind == LAUNCH_IF ? 2 : 1); i++)
    l->cond->body[i] = g_ptr_array_new_with_free_func((GDestroyNotify)launch_free);
  GPtrArray *t = target(p);
  g_ptr_array_add(t, set_new(cond, l->cond));
  g_ptr_array_add(t, l);
  g_ptr_array_add(p->open, l);
  return true;
}

/* The innermost open node, if of kind; else NULL + error. */
static launch *open_node(ts_graph_plan *p, launch_kind kind)
{
  launch *l = capturing == p && p->open->len ? g_ptr_array_index(p->open, p->open->len - 1) : NULL;
  if (l && l->kind == kind)
    return l;
  ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL, "SIM:0: a %s ended that was not begun",
               kind == LAUNCH_IF ? "branch" : "loop");
  return NULL;
}

/* Closes the innermost node; keep false: it goes, unrun (its setting,
 * then itself, the last two launches where it was opened). */
static bool cond_end(ts_graph_plan *p, bool keep)
{
  g_ptr_array_set_size(p->open, p->open->len - 1);
  if (!keep) {
    GPtrArray *t = target(p);
    g_ptr_array_set_size(t, t->len - 2);
    return !ts_failed();
  }
  return true;
}

static bool sim_while_begin(const ts_backend *b, ts_graph_plan *p, const ts_tensor *cond)
{
  return cond_begin(b, p, LAUNCH_WHILE, cond);
}

/* next NULL: the loop is given up (its run failed): it goes, unrun. */
static bool sim_while_end(const ts_backend *b, ts_graph_plan *p, const ts_tensor *next)
{
  if (dropping) {
    dropping--;
    return false;
  }
  launch *l = open_node(p, LAUNCH_WHILE);
  if (!l)
    return false;
  if (next && !condition_ok(b, next, "next condition"))
    next = NULL; /* the loop goes; the error says why */
  if (next)
    g_ptr_array_add(l->cond->body[0], set_new(next, l->cond));
  return cond_end(p, next != NULL);
}

static bool sim_if_begin(const ts_backend *b, ts_graph_plan *p, const ts_tensor *cond)
{
  return cond_begin(b, p, LAUNCH_IF, cond);
}

static bool sim_if_else(const ts_backend *b, ts_graph_plan *p)
{
  if (dropping)
    return true;
  launch *l = open_node(p, LAUNCH_IF);
  if (l)
    l->cond->filling = 1;
  return l != NULL;
}

static bool sim_if_end(const ts_backend *b, ts_graph_plan *p, bool keep)
{
  if (dropping) {
    dropping--;
    return false;
  }
  return open_node(p, LAUNCH_IF) && cond_end(p, keep);
}

static void sim_activity_flush(const ts_backend *b)
{
  sim *s = get();
  wait_idle(s, false);
  deliver_records(s);
}

const ts_backend_i ts__sim_backend_iface = {
  .name = "SIM:0",
  .description = "simulated GPU: CPU kernels on a stream thread, memory the host cannot read",
  .kind = TS_DEVICE_CPU,
  .memory_info = sim_memory_info,
  .supports_op = sim_supports_op,
  .buffer_type = { .alignment = 64, .max_size = SIM_MAX_BUFFER, .alloc_buffer = sim_alloc_buffer },
  .run_op = sim_run_op,
  .synchronize = sim_synchronize,
  .event_new = sim_event_new,
  .event_free = sim_event_free,
  .event_record = sim_event_record,
  .event_wait = sim_event_wait,
  .event_query = sim_event_query,
  .event_elapsed_ns = sim_event_elapsed,
  .graph_plan_create = sim_plan_create,
  .graph_plan_update = sim_plan_update,
  .graph_plan_compute = sim_plan_compute,
  .graph_plan_free = sim_plan_free,
  .graph_plan_replay = sim_plan_replay,
  .graph_plan_while_begin = sim_while_begin,
  .graph_plan_while_end = sim_while_end,
  .graph_plan_if_begin = sim_if_begin,
  .graph_plan_if_else = sim_if_else,
  .graph_plan_if_end = sim_if_end,
  .activity_flush = sim_activity_flush,
};
