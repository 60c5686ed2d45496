/* cuda/cuda.c — CUDA:N, the backend over an NVIDIA GPU (the interface v2
 * of tracescope-backend.h, as SIM:0 exercises it in CI).
 *
 * - One backend per device, registered at start-up when the driver finds
 *   one (CUDA:0, CUDA:1, ...); TRACESCOPE_CUDA=off leaves them out.  The
 *   runtime is linked statically (it loads the driver itself), so a
 *   machine without a GPU or driver runs the engine as before and
 *   ts__cuda_note() says why there is no CUDA device.
 * - Memory: a caching allocator over cudaMalloc (never managed memory):
 *   freed blocks go back to a per-size list, stream-ordered (the device
 *   has one stream, so later work on it may reuse them at once), and the
 *   cache is emptied when cudaMalloc runs out.
 * - One non-blocking stream per device: launches, device copies and
 *   memsets are queued; host copies wait for the work before them.
 * - Kernels: each op row's kernel for TS_DEVICE_CUDA, launched on the
 *   device's stream (ts__cuda_stream) with the op's correlation id pushed
 *   as CUPTI's external correlation id.  Ops without one fall back to the
 *   CPU visibly (the engine warns: TS_WARNING_DEVICE_FALLBACK).
 * - Plans: graph_plan_create/update begin a stream capture, the steps'
 *   launches are captured, graph_plan_compute ends it and updates the
 *   instantiated CUDA Graph in place (cudaGraphExecUpdate) or instantiates
 *   it anew, then launches it.  Uploads mid-capture (arguments and
 *   constants the host holds) are nodes of the graph, from pinned staging
 *   the plan owns.  A copy to the host mid-capture breaks the plan: what
 *   was captured is launched at once and the graph runs step by step from
 *   then on.  Blocks freed mid-capture are the plan's until its next
 *   capture (the cache does not hand them out), so a whole capture can be
 *   launched again as it is (graph_plan_replay), without capturing.
 * - Branches and loops in plans (graph_plan_if_*, _while_*), where the
 *   driver has conditional nodes with copies in their bodies (12.4 on): a
 *   While node whose handle a one-thread kernel sets from the condition
 *   before it and at the end of its body; an If as two If nodes, then and
 *   else, whose handles one kernel sets before them.  A body is captured
 *   into its node's graph on a stream of its own depth, which stands in
 *   for the device's stream until the node ends, while the outer capture
 *   waits on the node (the pattern of CUDA's programming guide).
 * - Device activity: CUPTI's activity API when a collector wants it
 *   (cupti.h), flushed by activity_flush. */
#include "../../engine-private.h"
#include "../../op_clock.h"
#include "cuda_backend.h"
#include "cupti.h"
#include "kernels.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_DEVICES 8
#define CACHE_ALIGN 512          /* sizes rounded up to this */
#define ACTIVITY_BUFFER (1 << 20)
#define ACTIVITY_BUFFERS 16      /* preallocated; more are made as CUPTI asks, */
#define ACTIVITY_BUFFERS_MAX 256 /* up to these: past them CUPTI drops records (counted) */

typedef struct block {
  struct block *next;
  void *ptr;
} block;

/* Which op each of the exec's nodes stands for: CUPTI reports the exec's
 * nodes (clones of the captured ones).  A capture numbers the nodes its
 * launches and copies make (positions: captured node id -> k, ops[k] the
 * op, and the input a copy carried); the instantiation says which clone
 * each became (clones).  An update keeps the exec's nodes and so their
 * positions: this run's ops[k] is what they stand for now. */
typedef struct node_op {
  uint64_t correlation; /* the op's (ts_kernel_correlation) */
  uint32_t operand;     /* a copy of its input: ts_activity_operand; else 0 */
} node_op;

typedef struct node_clone {
  uint64_t node_id;
  guint position;
} node_clone;

/* Host data a capture uploads (a variable or constant the host holds,
 * read by a launch of the plan) goes through pinned staging buffers the
 * plan owns: their copies are nodes of the graph, so they run in order
 * with its launches.  A new capture of the plan first waits for its last
 * launch (done), which may still read them. */
typedef struct staging {
  void *host; /* pinned (cudaMallocHost) */
  size_t bytes;
} staging;

/* A block freed while the plan captured: its launches may use it again. */
typedef struct held_block {
  void *ptr;
  size_t size; /* rounded */
} held_block;

struct ts_graph_plan {
  cudaGraphExec_t exec;
  bool named;            /* exec was made with CUPTI subscribed: its clones are known */
  bool broken;
  GArray *held;          /* held_block, under the device's lock */
  /* a replay's: the node captured for the op of correlation captured[i]
   * stands for the op of fresh[i] (report_nodes) */
  const uint64_t *captured, *fresh;
  int n_fresh;
  GHashTable *positions; /* captured node id -> its launch's position, this capture */
  GArray *ops;           /* node_op, this capture's per position */
  GArray *clones;        /* node_clone, the exec's kernel nodes */
  GArray *staging;       /* staging, reused by each capture in order */
  guint n_staged;        /* used by this capture */
  cudaEvent_t done;      /* recorded after each launch; NULL until the first */
  /* index_check, under the device's lock: the launches that check their
   * operands on the device, this capture's from checks_from on (those
   * before are earlier captures', kept while a fault they made may not
   * have been looked at yet) */
  GArray *checks;
  guint checks_from;
  GArray *node_recs;     /* ts_activity, report_nodes' per launch, reused */
  GArray *node_operands; /* uint32_t, beside them */
  GArray *open;          /* open_node: the Ifs and loops this capture is inside, innermost last */
  bool unlaunchable;     /* this capture holds a node whose condition could not be switched
                          * off (condition_off): launched, it might loop on an unfinished body */
};

/* An If or a While open in a plan's capture: the conditional node (an
 * If's two, then and else, each of one body), the kernel node setting
 * their handles before them, and the streams: the one that captured the
 * nodes (the device's, or an outer node's body stream) and the one
 * capturing a body. */
typedef struct open_node {
  bool is_if;
  ts_dtype dtype; /* the condition's, which the set kernel reads */
  cudaGraphConditionalHandle handle, else_handle;
  cudaGraphNode_t node, else_node, set;
  cudaGraph_t else_body;
  cudaStream_t outer, body;
} open_node;

struct ts_device_event {
  cudaEvent_t event;
};

typedef struct index_check {
  uint64_t correlation;
  ts_cuda_index_check check;
} index_check;

typedef struct device {
  int ordinal;
  char name[16];            /* "CUDA:0" */
  char label[320];          /* "CUDA:0 (NVIDIA H100 80GB HBM3, 79.1 GiB)" */
  char model[256];          /* "NVIDIA H100 80GB HBM3" */
  cudaStream_t stream;      /* made on first use (use()) */
  cudaEvent_t copied;       /* made with the stream: orders a peer copy after this
                             * device's work, and this device's later work after it */
  pthread_mutex_t lock;     /* the cache, the stream's making */
  GHashTable *cache;        /* rounded size -> block list */
  size_t cached_bytes;
  ts_graph_plan *capturing; /* the plan the stream is capturing into */
  GArray *loop_streams;     /* cudaStream_t, the body streams of loops open depth deep
                             * (made on first use, under lock) */
  const ts_backend *backend;
  /* index faults: where launches record an index out of range (made with
   * the stream), whether one may have since the host last looked, and the
   * plans (under lock) whose checks name the op that recorded it */
  ts_cu_index_fault *fault;
  bool fault_pending;
  GPtrArray *plans;
  GArray *freed_checks; /* index_check: of plans freed since the host last looked */
} device;

static device devices[MAX_DEVICES];
static int n_devices;
static char note[512];

/* ---- errors --------------------------------------------------------------------------- */

static bool ok_or_fail(cudaError_t err, const char *what)
{
  if (err == cudaSuccess)
    return true;
  cudaGetLastError(); /* clear it where it is not sticky */
  ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL, "CUDA: %s: %s (%s)", what,
               cudaGetErrorString(err), cudaGetErrorName(err));
  return false;
}

static device *dev_of(const ts_backend *b)
{
  return (device *)ts_backend_iface(b)->context;
}

/* Makes d current on this thread; its context and stream are made on the
 * first use (not at registration: listing devices costs no GPU memory). */
/* The device this thread made current: every switch goes through use(),
 * so an op does not pay a cudaSetDevice (and, under CUPTI, its API
 * record) when it runs where the last one did. */
static _Thread_local int current_ordinal = -1;

static bool use(device *d)
{
  if (current_ordinal != d->ordinal) {
    if (!ok_or_fail(cudaSetDevice(d->ordinal), "cudaSetDevice"))
      return false;
    current_ordinal = d->ordinal;
  }
  if (__atomic_load_n(&d->stream, __ATOMIC_ACQUIRE))
    return true;
  pthread_mutex_lock(&d->lock);
  cudaStream_t made = NULL;
  bool ok = d->stream ||
            ((d->fault ||
              (ok_or_fail(cudaMalloc((void **)&d->fault, sizeof *d->fault), "cudaMalloc") &&
               ok_or_fail(cudaMemset(d->fault, 0, sizeof *d->fault), "cudaMemset"))) &&
             (d->copied || ok_or_fail(cudaEventCreateWithFlags(&d->copied, cudaEventDisableTiming),
                                      "cudaEventCreate")) &&
             ok_or_fail(cudaStreamCreateWithFlags(&made, cudaStreamNonBlocking),
                        "cudaStreamCreateWithFlags"));
  if (made)
    __atomic_store_n(&d->stream, made, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&d->lock);
  return ok;
}

void *ts__cuda_stream(const ts_backend *b)
{
  return dev_of(b)->stream;
}

/* ---- CUPTI ------------------------------------------------------------------------------ */

static struct {
  pthread_mutex_t lock;
  const ts_cupti_api *api;
  bool started, enabled, refused;
  CUpti_SubscriberHandle subscriber;
  GAsyncQueue *free_buffers, *done_buffers; /* uint8_t[ACTIVITY_BUFFER]; done: with valid bytes */
  ts_cupti_records records;
  uint64_t dropped;
  int buffers; /* made, all told (ACTIVITY_BUFFERS_MAX) */
} cupti = { .lock = PTHREAD_MUTEX_INITIALIZER };

typedef struct done_buffer {
  uint8_t *data;
  size_t valid;
} done_buffer;

static _Thread_local uint64_t launching; /* the op whose kernel is being launched */
static _Thread_local ts_graph_plan *capture_plan;
/* Loops open when a host copy broke this thread's capture: their launches
 * are dropped unrun until they have all ended. */
static _Thread_local int dropping;

static uint64_t cupti_now(void)
{
  return ts__op_now_ns();
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
  /* a run that flushes seldom (a bench's thousands of launches) needs
   * more than the preallocated ones; NULL past the cap: CUPTI drops, and counts */
  *buffer = g_async_queue_try_pop(cupti.free_buffers);
  if (!*buffer && __atomic_fetch_add(&cupti.buffers, 1, __ATOMIC_RELAXED) < ACTIVITY_BUFFERS_MAX)
    *buffer = g_try_malloc(ACTIVITY_BUFFER); /* 16-aligned: CUPTI asks 8 */
  *size = *buffer ? ACTIVITY_BUFFER : 0;
  *max_records = 0;
}

/* On CUPTI's thread: only handed over; activity_flush reads them. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
  size_t dropped = 0;
  if (cupti.api->ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
    __atomic_add_fetch(&cupti.dropped, dropped, __ATOMIC_RELAXED);
  done_buffer *d = g_new(done_buffer, 1);
  *d = (done_buffer){ buffer, valid };
  g_async_queue_push(cupti.done_buffers, d);
}

/* Graph nodes made while a plan captures: which op each stands for (the
 * op launching, or the one whose input or storage is being copied), and
 * the input a copy node carries; their clones (the instantiated graph's
 * nodes, which kernels and copies report) follow. */
static void CUPTIAPI on_callback(void *data, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                 const void *info)
{
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || !capture_plan)
    return;
  const CUpti_ResourceData *r = info;
  const CUpti_GraphData *g = r->resourceDescriptor;
  uint64_t node_id = 0;
  if (!g || cupti.api->GetGraphNodeId(g->node, &node_id) != CUPTI_SUCCESS)
    return;
  ts_graph_plan *p = capture_plan;
  node_op op = { launching ? launching : ts_activity_correlation(), ts_activity_operand() };
  if (id == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED && op.correlation) {
    g_hash_table_insert(p->positions, GSIZE_TO_POINTER((gsize)node_id),
                        GUINT_TO_POINTER(p->ops->len));
    g_array_append_val(p->ops, op);
  } else if (id == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
    uint64_t original = 0;
    gpointer k;
    if (cupti.api->GetGraphNodeId(g->originalNode, &original) == CUPTI_SUCCESS &&
        g_hash_table_lookup_extended(p->positions, GSIZE_TO_POINTER((gsize)original), NULL, &k))
      g_array_append_val(p->clones, ((node_clone){ node_id, GPOINTER_TO_UINT(k) }));
  }
}

/* The kinds recorded while a collector is subscribed.  No
 * SYNCHRONIZATION: no collector reads syncs (profiler/device.c skips
 * them), and CUPTI would write one per synchronize. */
static const CUpti_ActivityKind ACTIVITY_KINDS[] = {
  CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, /* never KERNEL: it serialises kernels */
  CUPTI_ACTIVITY_KIND_MEMCPY,
  CUPTI_ACTIVITY_KIND_MEMSET,
  CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
  /* CUPTI writes an EXTERNAL_CORRELATION record only beside the API record
   * of the call made under the pushed id (seen on an H200: none came
   * without these), so the runtime's and the driver's (cuBLAS launches
   * through it) are recorded too, and dropped when read */
  CUPTI_ACTIVITY_KIND_RUNTIME,
  CUPTI_ACTIVITY_KIND_DRIVER,
};

/* For tracescope-bench-gpu only, to tell CUPTI's cost from ours:
 * TRACESCOPE_CUPTI_KINDS (read each time recording starts) replaces
 * ACTIVITY_KINDS by a comma-separated list of kernel, memcpy, memset,
 * sync, external, runtime, driver and launch-api (the API records of the
 * calls that launch, copy and memset alone, through
 * cuptiActivityEnableRuntimeApi/DriverApi, instead of every call's), or
 * none (the backend's own bookkeeping, CUPTI recording nothing).  Not
 * API: the default is what collectors get. */
static const struct {
  const char *name;
  CUpti_ActivityKind kind;
} KIND_NAMES[] = {
  { "kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL },
  { "memcpy", CUPTI_ACTIVITY_KIND_MEMCPY },
  { "memset", CUPTI_ACTIVITY_KIND_MEMSET },
  { "sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION },
  { "external", CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION },
  { "runtime", CUPTI_ACTIVITY_KIND_RUNTIME },
  { "driver", CUPTI_ACTIVITY_KIND_DRIVER },
};

/* The calls launch-api records (CUDA 13's <<<>>> is __cudaLaunchKernel;
 * cuBLASLt launches through the driver). */
static const CUpti_CallbackId LAUNCH_RUNTIME_APIS[] = {
  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
  CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
  CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
  CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020,
  CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000,
  CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
  CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
};
static const CUpti_CallbackId LAUNCH_DRIVER_APIS[] = {
  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
};

typedef struct recorded_kinds {
  CUpti_ActivityKind kind[G_N_ELEMENTS(KIND_NAMES)];
  int n;
  bool launch_apis;
} recorded_kinds;

static recorded_kinds kinds_wanted(void)
{
  recorded_kinds k = { .n = 0 };
  const char *env = getenv("TRACESCOPE_CUPTI_KINDS");
  if (!env || !*env) {
    for (size_t i = 0; i < G_N_ELEMENTS(ACTIVITY_KINDS); i++)
      k.kind[k.n++] = ACTIVITY_KINDS[i];
    return k;
  }
  char **names = g_strsplit(env, ",", -1);
  for (char **n = names; *n; n++) {
    bool known = strcmp(*n, "none") == 0;
    if (strcmp(*n, "launch-api") == 0)
      known = k.launch_apis = true;
    for (size_t i = 0; i < G_N_ELEMENTS(KIND_NAMES) && !known; i++)
      if (strcmp(*n, KIND_NAMES[i].name) == 0) {
        if (k.n < (int)G_N_ELEMENTS(k.kind)) /* a name given twice, and more */
          k.kind[k.n++] = KIND_NAMES[i].kind;
        known = true;
      }
    if (!known)
      g_warning("TRACESCOPE_CUPTI_KINDS: no kind \"%s\" (kernel, memcpy, memset, sync, "
                "external, runtime, driver, launch-api, none)", *n);
  }
  g_strfreev(names);
  return k;
}

static recorded_kinds recording; /* under cupti.lock */

static void launch_apis_enable(uint8_t on)
{
  const ts_cupti_api *a = cupti.api;
  if (!a->ActivityEnableRuntimeApi || !a->ActivityEnableDriverApi) {
    if (on)
      g_warning("CUDA: this CUPTI cannot record single API calls (launch-api)");
    return;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(LAUNCH_RUNTIME_APIS); i++)
    a->ActivityEnableRuntimeApi(LAUNCH_RUNTIME_APIS[i], on);
  for (size_t i = 0; i < G_N_ELEMENTS(LAUNCH_DRIVER_APIS); i++)
    a->ActivityEnableDriverApi(LAUNCH_DRIVER_APIS[i], on);
}

/* Starts CUPTI on first need; false (with a warning once) if it cannot. */
static bool cupti_start(void)
{
  if (cupti.started)
    return cupti.api != NULL;
  cupti.started = true;
  const char *why = NULL;
  cupti.api = ts__cupti_load(&why);
  const ts_cupti_api *a = cupti.api;
  if (!a) {
    g_warning("%s", why);
    return false;
  }
  cupti.free_buffers = g_async_queue_new();
  cupti.done_buffers = g_async_queue_new();
  cupti.buffers = ACTIVITY_BUFFERS;
  for (int i = 0; i < ACTIVITY_BUFFERS; i++)
    g_async_queue_push(cupti.free_buffers, g_aligned_alloc(ACTIVITY_BUFFER, 1, 8));
  ts__cupti_records_init(&cupti.records, devices[0].name);
  CUptiResult r = a->Subscribe(&cupti.subscriber, on_callback, NULL);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    g_warning("CUDA: another CUPTI client is attached to this process (Nsight Systems or "
              "Compute?): Tracescope's device times are off");
    cupti.api = NULL;
    cupti.refused = true;
    return false;
  }
  if (r == CUPTI_SUCCESS) {
    a->EnableCallback(1, cupti.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
    a->EnableCallback(1, cupti.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
  }
  if (a->ActivityRegisterTimestampCallback(cupti_now) != CUPTI_SUCCESS ||
      a->ActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
    g_warning("CUDA: CUPTI refused its callbacks: device times are off");
    cupti.api = NULL;
    return false;
  }
  return true;
}

/* Activity is recorded only while a collector wants it. */
static void cupti_follow_wanted(void)
{
  bool want = ts_activity_wanted();
  if (want == cupti.enabled || (want && !cupti_start()))
    return;
  pthread_mutex_lock(&cupti.lock);
  if (want != cupti.enabled) { /* another thread may have followed meanwhile */
    if (want)
      recording = kinds_wanted();
    for (int i = 0; i < recording.n; i++)
      (want ? cupti.api->ActivityEnable : cupti.api->ActivityDisable)(recording.kind[i]);
    if (recording.launch_apis)
      launch_apis_enable(want);
    cupti.enabled = want;
  }
  pthread_mutex_unlock(&cupti.lock);
}

/* The flush is forced: CUPTI hands over buffers holding records of work
 * still running too, and cuptiActivityGetNextRecord refuses such a record
 * (CUPTI_ERROR_INVALID_KIND), which ends its buffer's walk and loses the
 * records after it.  So every device's work is waited for first, not only
 * b's (ts_activity_flush flushes the devices one after the other); a
 * stream being captured may not be synchronized. */
static void cuda_activity_flush(const ts_backend *b)
{
  if (!cupti.api || !cupti.enabled)
    return;
  for (int i = 0; i < n_devices; i++) {
    device *d = &devices[i];
    if (__atomic_load_n(&d->stream, __ATOMIC_ACQUIRE) && !d->capturing && use(d))
      cudaStreamSynchronize(d->stream);
  }
  pthread_mutex_lock(&cupti.lock);
  cupti.api->ActivityFlushAll(1);
  done_buffer *buf;
  while ((buf = g_async_queue_try_pop(cupti.done_buffers))) {
    ts__cupti_records_add(&cupti.records, cupti.api->ActivityGetNextRecord, buf->data, buf->valid);
    g_async_queue_push(cupti.free_buffers, buf->data);
    g_free(buf);
  }
  const ts_activity *recs;
  int n = ts__cupti_records_take(&cupti.records, &recs);
  pthread_mutex_unlock(&cupti.lock);
  ts_activity_deliver(recs, n);
}

uint64_t ts__cuda_dropped_records(void)
{
  return __atomic_load_n(&cupti.dropped, __ATOMIC_RELAXED);
}

/* ---- memory ----------------------------------------------------------------------------- */

static size_t rounded(size_t bytes)
{
  return (MAX(bytes, 1) + CACHE_ALIGN - 1) / CACHE_ALIGN * CACHE_ALIGN;
}

static void cache_empty(device *d)
{
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, d->cache);
  while (g_hash_table_iter_next(&it, &key, &value))
    for (block *bl = value, *next; bl; bl = next) {
      next = bl->next;
      cudaFree(bl->ptr);
      g_free(bl);
    }
  g_hash_table_remove_all(d->cache);
  d->cached_bytes = 0;
}

static void *cuda_alloc(const ts_backend *b, size_t bytes)
{
  device *d = dev_of(b);
  size_t size = rounded(bytes);
  if (!use(d))
    return NULL;
  pthread_mutex_lock(&d->lock);
  block *bl = g_hash_table_lookup(d->cache, GSIZE_TO_POINTER(size));
  void *ptr = NULL;
  if (bl) {
    g_hash_table_replace(d->cache, GSIZE_TO_POINTER(size), bl->next);
    ptr = bl->ptr;
    d->cached_bytes -= size;
    g_free(bl);
  }
  /* mid-capture (a plan recording its launches) cudaMalloc is allowed
   * only in relaxed mode (it is not captured: the buffer is this run's,
   * as the plan's launches are), and the cache cannot be emptied: the
   * stream may not synchronize then */
  bool capturing = d->capturing != NULL;
  enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  bool relaxed = !ptr && capturing;
  if (relaxed)
    cudaThreadExchangeStreamCaptureMode(&mode);
  if (!ptr && cudaMalloc(&ptr, size) != cudaSuccess) {
    cudaGetLastError();
    ptr = NULL;
    if (!capturing) {
      cudaStreamSynchronize(d->stream); /* frees queued before may still be in use */
      cache_empty(d);
      if (cudaMalloc(&ptr, size) != cudaSuccess) {
        cudaGetLastError();
        ptr = NULL;
      }
    }
  }
  if (relaxed) /* the thread's mode as it was */
    cudaThreadExchangeStreamCaptureMode(&mode);
  pthread_mutex_unlock(&d->lock);
  return ptr;
}

/* Stream-ordered: the block is reused only by work queued after this. */
static void cuda_free(const ts_backend *b, void *ptr, size_t bytes)
{
  if (!ptr)
    return;
  device *d = dev_of(b);
  size_t size = rounded(bytes);
  pthread_mutex_lock(&d->lock);
  if (d->capturing) { /* the plan's launches may run again: not reused meanwhile */
    g_array_append_val(d->capturing->held, ((held_block){ ptr, size }));
    pthread_mutex_unlock(&d->lock);
    return;
  }
  block *bl = g_new(block, 1);
  *bl = (block){ g_hash_table_lookup(d->cache, GSIZE_TO_POINTER(size)), ptr };
  g_hash_table_replace(d->cache, GSIZE_TO_POINTER(size), bl);
  d->cached_bytes += size;
  pthread_mutex_unlock(&d->lock);
}

/* The blocks p held go back to the cache, stream-ordered: work queued
 * after this may reuse them. */
static void release_held(device *d, ts_graph_plan *p)
{
  pthread_mutex_lock(&d->lock);
  for (guint i = 0; i < p->held->len; i++) {
    const held_block *h = &g_array_index(p->held, held_block, i);
    block *bl = g_new(block, 1);
    *bl = (block){ g_hash_table_lookup(d->cache, GSIZE_TO_POINTER(h->size)), h->ptr };
    g_hash_table_replace(d->cache, GSIZE_TO_POINTER(h->size), bl);
    d->cached_bytes += h->size;
  }
  g_array_set_size(p->held, 0);
  pthread_mutex_unlock(&d->lock);
}

static bool cuda_memory_info(const ts_backend *b, size_t *free_bytes, size_t *total_bytes)
{
  device *d = dev_of(b);
  if (!use(d) || !ok_or_fail(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo"))
    return false;
  *free_bytes += d->cached_bytes; /* ours to hand out again */
  return true;
}

/* ---- copies ------------------------------------------------------------------------------ */

/* A copy or memset asked for while an op is placed or runs is that op's
 * (ts_activity_correlation), and a copy of one of its inputs to where it
 * runs says which (ts_activity_operand): both pushed as CUPTI external
 * correlation ids around the call (CUSTOM0 the op, as around its
 * launches; CUSTOM1 the input's index + 1), so that CUPTI's MEMCPY record
 * comes with the records that charge it to the op and the graph edge
 * (cupti_records.c). */
typedef struct copy_tags {
  bool op, operand;
} copy_tags;

static copy_tags tags_push(void)
{
  copy_tags t = { false, false };
  cupti_follow_wanted();
  if (!cupti.api || !cupti.enabled)
    return t;
  uint64_t corr = ts_activity_correlation();
  uint32_t operand = ts_activity_operand();
  t.op = corr && cupti.api->ActivityPushExternalCorrelationId(
                   CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, corr) == CUPTI_SUCCESS;
  t.operand = operand && cupti.api->ActivityPushExternalCorrelationId(
                           TS_CUPTI_OPERAND_KIND, operand) == CUPTI_SUCCESS;
  return t;
}

static void tags_pop(copy_tags t)
{
  uint64_t id;
  if (t.operand)
    cupti.api->ActivityPopExternalCorrelationId(TS_CUPTI_OPERAND_KIND, &id);
  if (t.op)
    cupti.api->ActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
}

static void break_capture(device *d);

/* ---- index faults (cuda_backend.h) ----------------------------------------------------- */

ts_cu_index_fault *ts__cuda_index_fault(const ts_backend *b, uint64_t correlation,
                                        const ts_cuda_index_check *c)
{
  device *d = dev_of(b);
  if (!d->capturing)
    return NULL;
  pthread_mutex_lock(&d->lock);
  g_array_append_val(d->capturing->checks, ((index_check){ correlation, *c }));
  pthread_mutex_unlock(&d->lock);
  __atomic_store_n(&d->fault_pending, true, __ATOMIC_RELEASE);
  return d->fault;
}

/* The check of the launch of this correlation, from the plans' (under the
 * device's lock); with the stream idle (forget), the checks of earlier
 * captures go: their launches have all run and been looked at. */
static bool check_named(device *d, uint64_t correlation, index_check *named, bool forget)
{
  bool found = false;
  pthread_mutex_lock(&d->lock);
  for (guint i = 0; i <= d->plans->len; i++) {
    ts_graph_plan *p = i < d->plans->len ? g_ptr_array_index(d->plans, i) : NULL;
    GArray *checks = p ? p->checks : d->freed_checks;
    for (guint j = 0; j < checks->len && !found; j++)
      if (g_array_index(checks, index_check, j).correlation == correlation) {
        *named = g_array_index(checks, index_check, j);
        found = true;
      }
    guint earlier = p ? p->checks_from : checks->len;
    if (forget && earlier) {
      g_array_remove_range(checks, 0, earlier);
      if (p)
        p->checks_from = 0;
    }
  }
  pthread_mutex_unlock(&d->lock);
  return found;
}

/* After the stream went idle: the index fault (or refused divisor or
 * exponent) a launch recorded since the last look, as its op's error
 * (false); true when there is none. */
static bool index_faults_taken(device *d)
{
  if (!__atomic_exchange_n(&d->fault_pending, false, __ATOMIC_ACQ_REL))
    return true;
  ts_cu_index_fault f;
  if (!ok_or_fail(cudaMemcpy(&f, d->fault, sizeof f, cudaMemcpyDeviceToHost),
                  "reading the index faults"))
    return false;
  index_check named;
  bool found = check_named(d, f.flag ? f.correlation : 0, &named, true);
  if (!f.flag)
    return true;
  if (!ok_or_fail(cudaMemset(d->fault, 0, sizeof f), "clearing the index faults"))
    return false;
  if (found)
    return ts__cuda_index_fail(&named.check, f.at, f.value);
  ts_error_set(TS_ERR_OUT_OF_RANGE, (ts_loc){ 0 }, NULL,
               "%s: an operand out of range (element %lld, %lld) in a CUDA Graph launch of op %llu",
               d->name, f.at, f.value, f.correlation);
  return false;
}

static bool cuda_get(const ts_buffer *buf, size_t offset, void *host_dst, size_t bytes)
{
  device *d = dev_of(ts_buffer_type_backend(ts_buffer_get_type(buf)));
  const char *src = (const char *)ts_buffer_base(buf) + offset;
  if (d->capturing)
    break_capture(d);
  if (!use(d))
    return false;
  copy_tags t = tags_push();
  bool ok = ok_or_fail(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, d->stream),
                       "copy to the host");
  tags_pop(t);
  return ok && ok_or_fail(cudaStreamSynchronize(d->stream), "copy to the host") &&
         index_faults_taken(d);
}

/* The next staging buffer of the capturing plan p, of at least bytes;
 * NULL + error.  (Pinned memory is allocated in relaxed capture mode:
 * cudaMallocHost is not captured, and is refused otherwise.) */
static void *staging_take(ts_graph_plan *p, size_t bytes)
{
  if (p->n_staged == p->staging->len)
    g_array_append_val(p->staging, ((staging){ NULL, 0 }));
  staging *st = &g_array_index(p->staging, staging, p->n_staged);
  if (st->bytes < bytes) {
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    if (st->host)
      cudaFreeHost(st->host);
    st->bytes = 0;
    bool ok = ok_or_fail(cudaMallocHost(&st->host, MAX(bytes, 1)), "cudaMallocHost");
    cudaThreadExchangeStreamCaptureMode(&mode);
    if (!ok) {
      st->host = NULL;
      return NULL;
    }
    st->bytes = MAX(bytes, 1);
  }
  p->n_staged++;
  return st->host;
}

/* Mid-capture, through the plan's staging (a node of its graph);
 * otherwise from pageable host memory: the runtime stages it before
 * returning, so the caller may reuse its memory at once. */
static bool cuda_set(ts_buffer *buf, size_t offset, const void *host_src, size_t bytes)
{
  device *d = dev_of(ts_buffer_type_backend(ts_buffer_get_type(buf)));
  char *dst = (char *)ts_buffer_base(buf) + offset;
  if (!use(d))
    return false;
  if (d->capturing) {
    void *staged = staging_take(d->capturing, bytes);
    if (!staged)
      return false;
    memcpy(staged, host_src, bytes);
    host_src = staged;
  }
  copy_tags t = tags_push();
  bool ok = ok_or_fail(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, d->stream),
                       "copy from the host");
  tags_pop(t);
  return ok;
}

static bool cuda_memset(ts_buffer *buf, size_t offset, int value, size_t bytes)
{
  device *d = dev_of(ts_buffer_type_backend(ts_buffer_get_type(buf)));
  char *dst = (char *)ts_buffer_base(buf) + offset;
  if (dropping)
    return true;
  if (!use(d))
    return false;
  copy_tags t = tags_push();
  bool ok = ok_or_fail(cudaMemsetAsync(dst, value, bytes, d->stream), "cudaMemsetAsync");
  tags_pop(t);
  return ok;
}

/* A capture of this thread on d (if any) ends here: what it captured is
 * launched and the rest of the run goes step by step, as after a host read
 * (the engine counts it: ts__plan_note_break). */
static void capture_end_here(device *d)
{
  if (d->capturing && d->capturing == capture_plan) {
    ts__plan_note_break(d->backend);
    break_capture(d);
  }
}

/* From another GPU of the process, on d's stream, ordered by events both
 * ways without the host waiting: after the work queued on the source's
 * stream (which writes src), and before the source's later work (which
 * may reuse src's memory).  Not capturable: a CUDA Graph's replay would
 * not order itself after the other device's work of its own time (an
 * event wait node waits on a record made at capture), and a capture may
 * not wait on an event recorded outside it.  So a capture on either
 * device breaks first.  (A cudaStreamSynchronize of the source instead
 * would be a host wait the graph does not hold, refused outright when
 * the source's own stream is capturing.) */
static bool peer_copy(device *d, void *dst, device *s, const void *src, size_t bytes)
{
  capture_end_here(d);
  capture_end_here(s);
  if (!use(s) || !ok_or_fail(cudaEventRecord(s->copied, s->stream), "cudaEventRecord") ||
      !use(d) || !ok_or_fail(cudaStreamWaitEvent(d->stream, s->copied, 0), "cudaStreamWaitEvent"))
    return false;
  copy_tags t = tags_push();
  bool ok = ok_or_fail(cudaMemcpyPeerAsync(dst, d->ordinal, src, s->ordinal, bytes, d->stream),
                       "peer copy");
  tags_pop(t);
  return ok && ok_or_fail(cudaEventRecord(d->copied, d->stream), "cudaEventRecord") &&
         ok_or_fail(cudaStreamWaitEvent(s->stream, d->copied, 0), "cudaStreamWaitEvent");
}

static bool cuda_copy_from(ts_buffer *buf, size_t offset, const ts_buffer *src_buf,
                           size_t src_offset, size_t bytes)
{
  const ts_backend *b = ts_buffer_type_backend(ts_buffer_get_type(buf));
  const ts_backend *src_b = ts_buffer_type_backend(ts_buffer_get_type(src_buf));
  device *d = dev_of(b);
  char *dst = (char *)ts_buffer_base(buf) + offset;
  const char *src = (const char *)ts_buffer_base(src_buf) + src_offset;
  if (dropping)
    return true;
  int from = -1; /* another GPU's index: peer to peer */
  for (int i = 0; src_b != b && i < n_devices; i++)
    if (devices[i].backend == src_b)
      from = i;
  if (src_b != b && from < 0)
    return false; /* the host: set */
  if (from >= 0)
    return peer_copy(d, dst, &devices[from], src, bytes);
  if (!use(d))
    return false;
  copy_tags t = tags_push();
  bool ok = ok_or_fail(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, d->stream),
                       "device-to-device copy");
  tags_pop(t);
  return ok;
}

static void cuda_buffer_free(ts_buffer *buf)
{
  cuda_free(ts_buffer_type_backend(ts_buffer_get_type(buf)), ts_buffer_base(buf),
            ts_buffer_size(buf));
}

static const ts_buffer_i CUDA_BUFFER = {
  .free_buffer = cuda_buffer_free,
  .set = cuda_set,
  .get = cuda_get,
  .memset = cuda_memset,
  .copy_from = cuda_copy_from,
};

static ts_buffer *cuda_alloc_buffer(const ts_buffer_type *bt, size_t size)
{
  const ts_backend *b = ts_buffer_type_backend(bt);
  void *p = cuda_alloc(b, size);
  ts_buffer *buf = p ? ts_buffer_new(bt, &CUDA_BUFFER, p, size, NULL) : NULL;
  if (p && !buf)
    cuda_free(b, p, size);
  return buf;
}

bool ts__cuda_copy_2d(const ts_backend *b, void *dst, size_t dst_pitch, const void *src,
                      size_t src_pitch, size_t width, size_t height)
{
  device *d = dev_of(b);
  return use(d) && ok_or_fail(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, height,
                                                cudaMemcpyDeviceToDevice, d->stream),
                              "2-D device copy");
}

/* ---- the stream ---------------------------------------------------------------------------- */

/* The rows with a CUDA kernel for these inputs, never one with effects on
 * the host; the variable rows run here (their bookkeeping on the caller's
 * thread, their writes queued on the stream: ops/state.c), so a variable
 * made on the GPU lives there and a step never uploads it. */
static bool cuda_supports_op(const ts_backend *b, const ts_kernel_ctx *k)
{
  unsigned flags = k->def->flags;
  return k->def->kernel[TS_DEVICE_CUDA] &&
         (!(flags & TS_OPF_STATEFUL) || (flags & TS_OPF_VARIABLE)) && ts__cuda_op_supported(k);
}

static bool cuda_run_op(const ts_backend *b, ts_kernel_ctx *k)
{
  device *d = dev_of(b);
  if (dropping)
    return true;
  if (!use(d))
    return false;
  cupti_follow_wanted();
  bool push = cupti.api && cupti.enabled;
  if (push)
    cupti.api->ActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                                 k->correlation);
  uint64_t outer = launching; /* a variable row's kernel runs the write's op inside */
  launching = k->correlation;
  bool ok = ts_kernel_run(k, TS_DEVICE_CUDA);
  if (ok)
    ok = ok_or_fail(cudaGetLastError(), k->def->name);
  launching = outer;
  if (push) {
    uint64_t id;
    cupti.api->ActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
  }
  return ok;
}

static bool cuda_synchronize(const ts_backend *b)
{
  device *d = dev_of(b);
  if (d->capturing)
    break_capture(d);
  return use(d) && ok_or_fail(cudaStreamSynchronize(d->stream), "synchronize") &&
         index_faults_taken(d);
}

/* ---- events ----------------------------------------------------------------------------------- */

static ts_device_event *cuda_event_new(const ts_backend *b)
{
  ts_device_event *e = g_new(ts_device_event, 1);
  if (!use(dev_of(b)) || !ok_or_fail(cudaEventCreate(&e->event), "cudaEventCreate"))
    g_clear_pointer(&e, g_free);
  return e;
}

static void cuda_event_free(const ts_backend *b, ts_device_event *e)
{
  if (e) {
    cudaEventDestroy(e->event);
    g_free(e);
  }
}

static bool cuda_event_record(const ts_backend *b, ts_device_event *e)
{
  device *d = dev_of(b);
  return use(d) && ok_or_fail(cudaEventRecord(e->event, d->stream), "cudaEventRecord");
}

static bool cuda_event_wait(const ts_backend *b, const ts_device_event *e)
{
  device *d = dev_of(b);
  return use(d) && ok_or_fail(cudaStreamWaitEvent(d->stream, e->event, 0), "cudaStreamWaitEvent");
}

static bool cuda_event_query(const ts_backend *b, const ts_device_event *e)
{
  return cudaEventQuery(e->event) == cudaSuccess;
}

static bool cuda_event_elapsed(const ts_backend *b, const ts_device_event *start,
                               const ts_device_event *end, uint64_t *ns)
{
  float ms = 0;
  if (cudaEventElapsedTime(&ms, start->event, end->event) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  *ns = (uint64_t)((double)ms * 1e6);
  return true;
}

/* ---- plans: CUDA Graphs ---------------------------------------------------------------------- */

static bool begin_capture(device *d, ts_graph_plan *p)
{
  /* the last launch may still read the staging this capture refills */
  if (p->done && !ok_or_fail(cudaEventSynchronize(p->done), "the plan's last launch"))
    return false;
  release_held(d, p); /* the last capture's: never launched again */
  p->n_staged = 0;
  if (!use(d) ||
      !ok_or_fail(cudaStreamBeginCapture(d->stream, cudaStreamCaptureModeThreadLocal),
                  "cudaStreamBeginCapture"))
    return false;
  g_array_set_size(p->ops, 0);
  g_hash_table_remove_all(p->positions);
  pthread_mutex_lock(&d->lock); /* the last capture's checks may name a fault not yet seen */
  if (!__atomic_load_n(&d->fault_pending, __ATOMIC_ACQUIRE))
    g_array_set_size(p->checks, 0);
  p->checks_from = p->checks->len;
  pthread_mutex_unlock(&d->lock);
  p->broken = false; /* the last capture's exec, if any, is updated or made anew */
  g_array_set_size(p->open, 0);
  p->unlaunchable = false;
  dropping = 0;
  d->capturing = p;
  capture_plan = p; /* for CUPTI's node callbacks on this thread */
  return true;
}

static void plan_free(ts_graph_plan *p)
{
  for (guint i = 0; i < p->staging->len; i++)
    cudaFreeHost(g_array_index(p->staging, staging, i).host);
  g_array_unref(p->staging);
  g_array_unref(p->held);
  if (p->done)
    cudaEventDestroy(p->done);
  g_hash_table_unref(p->positions);
  g_array_unref(p->ops);
  g_array_unref(p->clones);
  g_array_unref(p->checks);
  g_array_unref(p->node_recs);
  g_array_unref(p->node_operands);
  g_array_unref(p->open);
  g_free(p);
}

/* p's checks outlive it until the host looks for a fault its launches
 * may have made. */
static void plan_forget(device *d, ts_graph_plan *p)
{
  pthread_mutex_lock(&d->lock);
  g_ptr_array_remove_fast(d->plans, p);
  if (__atomic_load_n(&d->fault_pending, __ATOMIC_ACQUIRE))
    g_array_append_vals(d->freed_checks, p->checks->data, p->checks->len);
  pthread_mutex_unlock(&d->lock);
}

static ts_graph_plan *cuda_plan_create(const ts_backend *b)
{
  ts_graph_plan *p = g_new0(ts_graph_plan, 1);
  p->positions = g_hash_table_new(g_direct_hash, g_direct_equal);
  p->ops = g_array_new(FALSE, FALSE, sizeof(node_op));
  p->clones = g_array_new(FALSE, FALSE, sizeof(node_clone));
  p->staging = g_array_new(FALSE, FALSE, sizeof(staging));
  p->held = g_array_new(FALSE, FALSE, sizeof(held_block));
  p->checks = g_array_new(FALSE, FALSE, sizeof(index_check));
  p->node_recs = g_array_new(FALSE, FALSE, sizeof(ts_activity));
  p->node_operands = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  p->open = g_array_new(FALSE, FALSE, sizeof(open_node));
  device *d = dev_of(b);
  pthread_mutex_lock(&d->lock);
  g_ptr_array_add(d->plans, p);
  pthread_mutex_unlock(&d->lock);
  if (!begin_capture(d, p)) {
    plan_forget(d, p);
    g_clear_pointer(&p, plan_free);
  }
  return p;
}

static bool cuda_plan_update(const ts_backend *b, ts_graph_plan *p)
{
  return begin_capture(dev_of(b), p);
}

/* Ends the capture; the captured graph, or NULL (+ error). */
static cudaGraph_t end_capture(device *d)
{
  cudaGraph_t g = NULL;
  d->capturing = NULL;
  capture_plan = NULL;
  if (!ok_or_fail(cudaStreamEndCapture(d->stream, &g), "cudaStreamEndCapture"))
    return NULL;
  return g;
}

static uint64_t report_nodes(device *d, ts_graph_plan *p);
static bool launch_graph(device *d, ts_graph_plan *p, cudaGraphExec_t exec);

/* A node given up: the kernel setting its handles sets nothing from now
 * on, so that they keep the default they get at each launch (0: the node
 * runs nothing).  Not removed: the graph it is in is still captured into,
 * and a node may not be removed then (cudaStreamGetCaptureInfo).  Where it
 * cannot be switched off, p's capture is not to be launched. */
static bool condition_off(ts_graph_plan *p, const open_node *l)
{
  if (ts__cu_condition_off(l->set, l->is_if, l->handle, l->else_handle, l->dtype))
    return true;
  cudaError_t err = cudaGetLastError();
  p->unlaunchable = true;
  return ok_or_fail(err != cudaSuccess ? err : cudaErrorInvalidValue,
                    "switching off a branch's or loop's condition");
}

/* A break inside open Ifs or loops: their bodies' captures end (the
 * device's stream is its own again), the outermost node is given up
 * (condition_off), and launches are dropped unrun until that node ends. */
static void drop_loops(device *d, ts_graph_plan *p)
{
  if (!p->open->len)
    return;
  for (guint i = p->open->len; i-- > 0;) {
    const open_node *l = &g_array_index(p->open, open_node, i);
    cudaGraph_t body = NULL;
    ok_or_fail(cudaStreamEndCapture(l->body, &body), "ending a branch's or loop's body");
    __atomic_store_n(&d->stream, l->outer, __ATOMIC_RELEASE);
  }
  condition_off(p, &g_array_index(p->open, open_node, 0));
  dropping = (int)p->open->len;
  g_array_set_size(p->open, 0);
}

/* A host copy mid-capture: what was captured goes out now, the rest step
 * by step.  Its one-off exec's nodes are named to their ops like a plan's
 * (the plan's own clones put aside meanwhile), so the kernels captured so
 * far are charged too. */
static void break_capture(device *d)
{
  ts_graph_plan *p = d->capturing;
  p->broken = true;
  drop_loops(d, p);
  cudaGraph_t g = end_capture(d);
  cudaGraphExec_t exec = NULL;
  GArray *kept = p->clones;
  p->clones = g_array_new(FALSE, FALSE, sizeof(node_clone));
  capture_plan = p;
  bool ok = g && !p->unlaunchable && ok_or_fail(cudaGraphInstantiate(&exec, g, 0),
                                                "cudaGraphInstantiate");
  capture_plan = NULL;
  if (ok)
    launch_graph(d, p, exec);
  g_array_unref(p->clones);
  p->clones = kept;
  if (exec)
    cudaGraphExecDestroy(exec);
  if (g)
    cudaGraphDestroy(g);
  release_held(d, p); /* after the launch, stream-ordered: it is not launched again */
}

/* The exec's nodes stand for this run's ops, in capture order, and its
 * copies carry these inputs: handed to the CUPTI records as this launch's
 * (an updated exec keeps its node ids while each run's ops are new, so a
 * node means another op in each launch).  Returns the launch's id, 0 when
 * nothing is recorded. */
static uint64_t report_nodes(device *d, ts_graph_plan *p)
{
  if (!ts_activity_wanted() || !cupti.api || !cupti.enabled)
    return 0;
  g_array_set_size(p->node_recs, 0);
  g_array_set_size(p->node_operands, 0);
  for (guint i = 0; i < p->clones->len; i++) {
    const node_clone *c = &g_array_index(p->clones, node_clone, i);
    if (c->position >= p->ops->len)
      continue;
    const node_op *op = &g_array_index(p->ops, node_op, c->position);
    g_array_append_val(p->node_operands, op->operand);
    g_array_append_val(p->node_recs, ((ts_activity){
      .kind = TS_ACTIVITY_GRAPH_NODE, .device = d->name, .graph_node = c->node_id,
      .correlation = ts__correlation_recharged(op->correlation, p->captured, p->fresh, p->n_fresh),
    }));
  }
  pthread_mutex_lock(&cupti.lock);
  uint64_t launch = ts__cupti_records_launch(&cupti.records,
                                             (const ts_activity *)(void *)p->node_recs->data,
                                             (const uint32_t *)(void *)p->node_operands->data,
                                             (int)p->node_recs->len);
  pthread_mutex_unlock(&cupti.lock);
  return launch;
}

/* Launches exec for p's run, under its launch id (CUSTOM0, as an op's id
 * around its launches): CUPTI's records of the replay name the launch,
 * and the take puts its nodes' records before them. */
static bool launch_graph(device *d, ts_graph_plan *p, cudaGraphExec_t exec)
{
  uint64_t launch = report_nodes(d, p), id;
  if (launch)
    cupti.api->ActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, launch);
  bool ok = ok_or_fail(cudaGraphLaunch(exec, d->stream), "cudaGraphLaunch");
  if (launch)
    cupti.api->ActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
  return ok;
}

/* Records the plan's done event after its launch. */
static bool record_done(device *d, ts_graph_plan *p)
{
  if (!p->done &&
      !ok_or_fail(cudaEventCreateWithFlags(&p->done, cudaEventDisableTiming), "cudaEventCreate"))
    return false;
  return ok_or_fail(cudaEventRecord(p->done, d->stream), "cudaEventRecord");
}

static bool cuda_plan_compute(const ts_backend *b, ts_graph_plan *p)
{
  device *d = dev_of(b);
  dropping = 0; /* the run is over: every loop of it has ended */
  if (d->capturing != p)
    return true; /* broken mid-run: its launches went out */
  cudaGraph_t g = end_capture(d);
  if (!g)
    return false;
  if (p->unlaunchable) { /* its error says why; not replayed either */
    cudaGraphDestroy(g);
    p->broken = true;
    return false;
  }
  bool ok = true;
  if (p->exec && !p->named && cupti.api) { /* an update would keep its unknown clones */
    cudaGraphExecDestroy(p->exec);
    p->exec = NULL;
  }
  if (p->exec) {
    cudaGraphExecUpdateResultInfo info;
    if (cudaGraphExecUpdate(p->exec, g, &info) != cudaSuccess) {
      cudaGetLastError(); /* another topology: instantiate anew */
      cudaGraphExecDestroy(p->exec);
      p->exec = NULL;
    }
  }
  if (!p->exec) {
    g_array_set_size(p->clones, 0);
    capture_plan = p; /* CUPTI names the clones as they are made */
    p->named = cupti.api != NULL;
    ok = ok_or_fail(cudaGraphInstantiate(&p->exec, g, 0), "cudaGraphInstantiate");
    capture_plan = NULL;
  }
  cudaGraphDestroy(g);
  if (ok)
    ok = launch_graph(d, p, p->exec);
  return ok && record_done(d, p);
}

/* The exec of the last whole capture launched again: its uploads from the
 * plan's staging, its kernels on the buffers it holds and those the
 * engine keeps for it.  No capture, no update, no host work per launch. */
static bool cuda_plan_replay(const ts_backend *b, ts_graph_plan *p, const uint64_t *captured,
                             const uint64_t *fresh, int n)
{
  device *d = dev_of(b);
  if (p->broken || !p->exec || d->capturing)
    return false;
  cupti_follow_wanted();
  if (!p->named && cupti.api && cupti.enabled) /* captured again: its nodes named this time */
    return false;
  if (!use(d))
    return false;
  p->captured = captured;
  p->fresh = fresh;
  p->n_fresh = n;
  if (p->checks->len > p->checks_from) /* its kernels may record a fault again, under the captured ids */
    __atomic_store_n(&d->fault_pending, true, __ATOMIC_RELEASE);
  bool ok = launch_graph(d, p, p->exec);
  p->n_fresh = 0;
  p->captured = p->fresh = NULL;
  return ok && record_done(d, p);
}

static void cuda_plan_free(const ts_backend *b, ts_graph_plan *p)
{
  device *d = dev_of(b);
  if (d->capturing == p)
    break_capture(d);
  cudaStreamSynchronize(d->stream); /* its launches, and their staging, are done */
  release_held(d, p);
  if (p->exec)
    cudaGraphExecDestroy(p->exec);
  plan_forget(d, p);
  plan_free(p);
}

/* ---- loops in plans: conditional nodes ------------------------------------------------------ */

/* Is t a condition the device can read: one number or bool of d? */
static bool condition_ok(const ts_backend *b, const ts_tensor *t, const char *what)
{
  if (t && t->backend == b && t->data && t->size == 1 && t->dtype < TS_NUMERIC_DTYPE_COUNT)
    return true;
  char buf[TS_INFO_STR];
  ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL,
               "%s: a loop's %s must be one number or bool on it, got %s on %s",
               ts_backend_name(b), what, t ? ts__info_str(buf, t->dtype, t->shape) : "none",
               t && t->backend ? ts_backend_name(t->backend) : "no device");
  return false;
}

/* The stream capturing the bodies of loops open depth deep (made once). */
static cudaStream_t loop_stream(device *d, guint depth)
{
  pthread_mutex_lock(&d->lock);
  cudaStream_t s = depth < d->loop_streams->len ? g_array_index(d->loop_streams, cudaStream_t, depth)
                                               : NULL;
  if (!s) {
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed; /* not a capture's work */
    cudaThreadExchangeStreamCaptureMode(&mode);
    if (ok_or_fail(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"))
      g_array_append_val(d->loop_streams, s);
    cudaThreadExchangeStreamCaptureMode(&mode);
  }
  pthread_mutex_unlock(&d->lock);
  return s;
}

/* The graph the capture on stream s adds to, and (last not NULL) the one
 * node it goes on from: the launch just made. */
static bool capture_tail(cudaStream_t s, cudaGraph_t *graph, cudaGraphNode_t *last)
{
  enum cudaStreamCaptureStatus status;
  const cudaGraphNode_t *deps = NULL;
  size_t n = 0;
  if (!ok_or_fail(cudaStreamGetCaptureInfo(s, &status, NULL, graph, &deps, NULL, &n),
                  "cudaStreamGetCaptureInfo"))
    return false;
  if (status != cudaStreamCaptureStatusActive || (last && n != 1)) {
    ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL,
                 "CUDA: a loop's condition is not where its capture goes on");
    return false;
  }
  if (last)
    *last = deps[0];
  return true;
}

static bool set_condition(device *d, cudaGraphConditionalHandle h, const ts_tensor *cond)
{
  return ts__cu_set_condition(h, cond->dtype, cond->data, d->stream) &&
         ok_or_fail(cudaGetLastError(), "setting a loop's condition");
}

/* Opens a While node where the capture is: its condition set from cond
 * first; the launches from here on are its body, captured on the body
 * stream of this depth, which the device's launches go to meanwhile. */
static bool cuda_while_begin(const ts_backend *b, ts_graph_plan *p, const ts_tensor *cond)
{
  device *d = dev_of(b);
  if (dropping) { /* inside a loop a host copy broke: dropped with it */
    dropping++;
    return true;
  }
  if (d->capturing != p) {
    ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL, "%s: a loop begun outside its plan's capture",
                 d->name);
    return false;
  }
  if (!condition_ok(b, cond, "condition"))
    return false;
  open_node l = { .dtype = cond->dtype, .outer = d->stream,
                  .body = loop_stream(d, p->open->len) };
  cudaGraph_t graph;
  if (!l.body || !capture_tail(l.outer, &graph, NULL) ||
      /* 0 at each launch unless the kernel before the node sets it */
      !ok_or_fail(cudaGraphConditionalHandleCreate(&l.handle, graph, 0, cudaGraphCondAssignDefault),
                  "cudaGraphConditionalHandleCreate") ||
      !set_condition(d, l.handle, cond) || !capture_tail(l.outer, &graph, &l.set))
    return false;
  struct cudaGraphNodeParams params = { .type = cudaGraphNodeTypeConditional };
  params.conditional.handle = l.handle;
  params.conditional.type = cudaGraphCondTypeWhile;
  params.conditional.size = 1;
  /* Failing from here, the node must never run an empty body while its
   * condition holds: it is given up (condition_off) */
  if (!ok_or_fail(cudaGraphAddNode(&l.node, graph, &l.set, NULL, 1, &params), "adding a While node") ||
      !ok_or_fail(cudaStreamUpdateCaptureDependencies(l.outer, &l.node, NULL, 1,
                                                      cudaStreamSetCaptureDependencies),
                  "cudaStreamUpdateCaptureDependencies") ||
      !ok_or_fail(cudaStreamBeginCaptureToGraph(l.body, params.conditional.phGraph_out[0], NULL,
                                                NULL, 0, cudaStreamCaptureModeThreadLocal),
                  "capturing a loop's body")) {
    condition_off(p, &l);
    return false;
  }
  g_array_append_val(p->open, l);
  __atomic_store_n(&d->stream, l.body, __ATOMIC_RELEASE);
  return true;
}

/* Closes the innermost loop: next sets its condition at the end of its
 * body; NULL: the loop is given up, unrun (condition_off). */
static bool cuda_while_end(const ts_backend *b, ts_graph_plan *p, const ts_tensor *next)
{
  device *d = dev_of(b);
  if (dropping) {
    dropping--;
    return false;
  }
  if (d->capturing != p || !p->open->len) {
    ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL, "%s: a loop ended that was not begun",
                 d->name);
    return false;
  }
  open_node l = g_array_index(p->open, open_node, p->open->len - 1);
  if (next && !(condition_ok(b, next, "next condition") && set_condition(d, l.handle, next)))
    next = NULL; /* the loop goes; the error says why */
  cudaGraph_t body = NULL;
  bool ok = ok_or_fail(cudaStreamEndCapture(l.body, &body), "ending a loop's body");
  g_array_set_size(p->open, p->open->len - 1);
  __atomic_store_n(&d->stream, l.outer, __ATOMIC_RELEASE);
  if (!next || !ok) {
    condition_off(p, &l);
    return !ts_failed() && ok;
  }
  return true;
}

/* Opens an If where the capture is: the kernel setting its two nodes'
 * handles from cond, then the then node and the else node after it; the
 * launches from here on are the then body, captured on the body stream of
 * this depth, which the device's launches go to meanwhile. */
static bool cuda_if_begin(const ts_backend *b, ts_graph_plan *p, const ts_tensor *cond)
{
  device *d = dev_of(b);
  if (dropping) { /* inside a node a host copy broke: dropped with it */
    dropping++;
    return true;
  }
  if (d->capturing != p) {
    ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL,
                 "%s: a branch begun outside its plan's capture", d->name);
    return false;
  }
  if (!condition_ok(b, cond, "condition"))
    return false;
  open_node l = { .is_if = true, .dtype = cond->dtype, .outer = d->stream,
                  .body = loop_stream(d, p->open->len) };
  cudaGraph_t graph;
  /* both 0 at each launch unless the kernel before the nodes sets them;
   * an If node of size 2 would need a 12.8 driver: two of size 1 */
  if (!l.body || !capture_tail(l.outer, &graph, NULL) ||
      !ok_or_fail(cudaGraphConditionalHandleCreate(&l.handle, graph, 0, cudaGraphCondAssignDefault),
                  "cudaGraphConditionalHandleCreate") ||
      !ok_or_fail(cudaGraphConditionalHandleCreate(&l.else_handle, graph, 0,
                                                   cudaGraphCondAssignDefault),
                  "cudaGraphConditionalHandleCreate") ||
      !ts__cu_set_branches(l.handle, l.else_handle, cond->dtype, cond->data, d->stream) ||
      !ok_or_fail(cudaGetLastError(), "setting a branch's condition") ||
      !capture_tail(l.outer, &graph, &l.set))
    return false;
  struct cudaGraphNodeParams then_params = { .type = cudaGraphNodeTypeConditional },
                             else_params = { .type = cudaGraphNodeTypeConditional };
  then_params.conditional = (struct cudaConditionalNodeParams){ .handle = l.handle,
                                                                .type = cudaGraphCondTypeIf,
                                                                .size = 1 };
  else_params.conditional = (struct cudaConditionalNodeParams){ .handle = l.else_handle,
                                                                .type = cudaGraphCondTypeIf,
                                                                .size = 1 };
  /* failing from here, the nodes are given up (condition_off): an If node
   * would run an empty body at worst, but "the handle must be associated
   * with a single conditional node" (programming guide), and the kernel
   * may set one whose node was not added */
  if (!ok_or_fail(cudaGraphAddNode(&l.node, graph, &l.set, NULL, 1, &then_params), "adding an If node") ||
      !ok_or_fail(cudaGraphAddNode(&l.else_node, graph, &l.node, NULL, 1, &else_params),
                  "adding an If node") ||
      !ok_or_fail(cudaStreamUpdateCaptureDependencies(l.outer, &l.else_node, NULL, 1,
                                                      cudaStreamSetCaptureDependencies),
                  "cudaStreamUpdateCaptureDependencies") ||
      !ok_or_fail(cudaStreamBeginCaptureToGraph(l.body, then_params.conditional.phGraph_out[0], NULL,
                                                NULL, 0, cudaStreamCaptureModeThreadLocal),
                  "capturing a branch")) {
    condition_off(p, &l);
    return false;
  }
  l.else_body = else_params.conditional.phGraph_out[0];
  g_array_append_val(p->open, l);
  __atomic_store_n(&d->stream, l.body, __ATOMIC_RELEASE);
  return true;
}

/* The innermost open node, if an If; else NULL + error. */
static open_node *open_if(device *d, ts_graph_plan *p)
{
  open_node *l = d->capturing == p && p->open->len
                   ? &g_array_index(p->open, open_node, p->open->len - 1) : NULL;
  if (l && l->is_if)
    return l;
  ts_error_set(TS_ERR_INTERNAL, (ts_loc){ 0 }, NULL, "%s: a branch ended that was not begun",
               d->name);
  return NULL;
}

/* The launches from here on are the else body. */
static bool cuda_if_else(const ts_backend *b, ts_graph_plan *p)
{
  device *d = dev_of(b);
  if (dropping)
    return true;
  open_node *l = open_if(d, p);
  cudaGraph_t then_body = NULL;
  return l && ok_or_fail(cudaStreamEndCapture(l->body, &then_body), "ending a branch") &&
         ok_or_fail(cudaStreamBeginCaptureToGraph(l->body, l->else_body, NULL, NULL, 0,
                                                  cudaStreamCaptureModeThreadLocal),
                    "capturing a branch");
}

/* Closes the innermost If; keep false: it is given up, unrun
 * (condition_off). */
static bool cuda_if_end(const ts_backend *b, ts_graph_plan *p, bool keep)
{
  device *d = dev_of(b);
  if (dropping) {
    dropping--;
    return false;
  }
  open_node *at = open_if(d, p);
  if (!at)
    return false;
  open_node l = *at;
  enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t body = NULL;
  bool ok = cudaStreamIsCapturing(l.body, &status) == cudaSuccess &&
            status == cudaStreamCaptureStatusActive &&
            ok_or_fail(cudaStreamEndCapture(l.body, &body), "ending a branch");
  g_array_set_size(p->open, p->open->len - 1);
  __atomic_store_n(&d->stream, l.outer, __ATOMIC_RELEASE);
  if (!keep || !ok) {
    condition_off(p, &l);
    return !ts_failed() && ok;
  }
  return true;
}

/* ---- registration --------------------------------------------------------------------------- */

static const ts_backend_i CUDA_IFACE = {
  .kind = TS_DEVICE_CUDA,
  .memory_info = cuda_memory_info,
  .supports_op = cuda_supports_op,
  /* cudaMalloc gives 256-byte aligned blocks; tensors in an arena are 64-byte aligned */
  .buffer_type = { .alignment = 64, .alloc_buffer = cuda_alloc_buffer },
  .run_op = cuda_run_op,
  .synchronize = cuda_synchronize,
  .event_new = cuda_event_new,
  .event_free = cuda_event_free,
  .event_record = cuda_event_record,
  .event_wait = cuda_event_wait,
  .event_query = cuda_event_query,
  .event_elapsed_ns = cuda_event_elapsed,
  .graph_plan_create = cuda_plan_create,
  .graph_plan_update = cuda_plan_update,
  .graph_plan_compute = cuda_plan_compute,
  .graph_plan_free = cuda_plan_free,
  .graph_plan_replay = cuda_plan_replay,
  .graph_plan_while_begin = cuda_while_begin,
  .graph_plan_while_end = cuda_while_end,
  .graph_plan_if_begin = cuda_if_begin,
  .graph_plan_if_else = cuda_if_else,
  .graph_plan_if_end = cuda_if_end,
  .activity_flush = cuda_activity_flush,
};

void ts__cuda_register(void)
{
  const char *off = getenv("TRACESCOPE_CUDA");
  if (off && strcmp(off, "off") == 0) {
    snprintf(note, sizeof note, "CUDA: off (TRACESCOPE_CUDA=off)");
    return;
  }
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    snprintf(note, sizeof note, "CUDA: no device (%s%s)",
             err != cudaSuccess ? cudaGetErrorString(err) : "the driver found none",
             err == cudaErrorInsufficientDriver
               ? ": no NVIDIA driver, or one older than this CUDA runtime" : "");
    return;
  }
  /* 12.3 brought conditional nodes, 12.4 the copies and memsets in their
   * bodies that captured loops hold */
  int driver = 0;
  bool loops = cudaDriverGetVersion(&driver) == cudaSuccess && driver >= 12040;
  GString *s = g_string_new("CUDA:");
  for (int i = 0; i < count && n_devices < MAX_DEVICES; i++) {
    struct cudaDeviceProp prop;
    device *d = &devices[n_devices];
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
      g_string_append_printf(s, " device %d unusable (%s);", i,
                             cudaGetErrorString(cudaGetLastError()));
      continue;
    }
    d->ordinal = i;
    snprintf(d->name, sizeof d->name, "CUDA:%d", i);
    snprintf(d->label, sizeof d->label, "CUDA:%d (%s, %.1f GiB)", i, prop.name,
             (double)prop.totalGlobalMem / (1 << 30));
    pthread_mutex_init(&d->lock, NULL);
    d->cache = g_hash_table_new(g_direct_hash, g_direct_equal);
    d->plans = g_ptr_array_new();
    d->freed_checks = g_array_new(FALSE, FALSE, sizeof(index_check));
    d->loop_streams = g_array_new(FALSE, FALSE, sizeof(cudaStream_t));
    ts_backend_i iface = CUDA_IFACE;
    if (!loops) { /* Ifs and loops in graphs run from the host */
      iface.graph_plan_while_begin = iface.graph_plan_while_end = NULL;
      iface.graph_plan_if_begin = NULL;
      iface.graph_plan_if_else = NULL;
      iface.graph_plan_if_end = NULL;
    }
    iface.name = d->name;
    g_strlcpy(d->model, prop.name, sizeof d->model);
    iface.description = d->model;
    iface.context = d;
    d->backend = ts_backend_register(&iface);
    if (!d->backend) {
      ts_error *e = ts_error_take();
      g_string_append_printf(s, " %s not registered: %s;", d->name, e ? e->message : "?");
      ts_error_free(e);
      continue;
    }
    g_string_append_printf(s, " %s;", d->label);
    n_devices++;
  }
  if (!loops && n_devices)
    g_string_append_printf(s, " driver %d.%d: Ifs and loops in graphs run from the host (conditional "
                              "nodes need 12.4);", driver / 1000, driver % 1000 / 10);
  g_strlcpy(note, s->str, sizeof note);
  g_string_free(s, TRUE);
}

const char *ts__cuda_note(void)
{
  return note;
}

const char *ts__cuda_device_label(const ts_backend *b)
{
  for (int i = 0; i < n_devices; i++)
    if (devices[i].backend == b)
      return devices[i].label;
  return NULL;
}
