/* session.c — a profiling session: its tables (strings, nodes, source
 * locations, concrete functions, devices), its threads' event chunks and
 * its collectors. */
#include "profiler-private.h"

#include <pthread.h>
#include <stddef.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

G_DEFINE_QUARK(tsp-error-quark, tsp_error)

static uint64_t next_session_id;

tsp_session *tsp_session_new_empty(void)
{
  tsp_session *s = g_new0(tsp_session, 1);
  s->id = __atomic_add_fetch(&next_session_id, 1, __ATOMIC_RELAXED);
  g_mutex_init(&s->lock);
  g_mutex_init(&s->phase_lock);
  g_rec_mutex_init(&s->node_lock);
  s->collectors = g_array_new(FALSE, FALSE, sizeof(collector));
  s->threads = g_ptr_array_new();
  s->text = g_string_chunk_new(4096);
  s->string_ids = g_hash_table_new(g_str_hash, g_str_equal);
  s->strings = g_ptr_array_new();
  g_ptr_array_add(s->strings, "");
  s->nodes = g_ptr_array_new();
  g_ptr_array_add(s->nodes, NULL);
  s->node_ids = g_hash_table_new(NULL, NULL);
  s->locs = g_array_new(FALSE, TRUE, sizeof(tsp_loc_info));
  g_array_append_val(s->locs, ((tsp_loc_info){ "", "", 0 }));
  s->loc_ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  s->concretes = g_array_new(FALSE, TRUE, sizeof(tsp_concrete_info));
  g_array_append_val(s->concretes, ((tsp_concrete_info){ "", "" }));
  s->concrete_ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  s->concrete_ptrs = g_hash_table_new(NULL, NULL);
  s->devices = g_ptr_array_new();
  g_ptr_array_add(s->devices, "");
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  s->max_bytes = pages > 0 && page > 0 ? (size_t)pages / 4 * (size_t)page : SIZE_MAX;
  return s;
}

void tsp_session_set_max_bytes(tsp_session *s, size_t bytes)
{
  s->max_bytes = bytes;
}

tsp_losses tsp_session_losses(const tsp_session *s)
{
  return (tsp_losses){ .events = __atomic_load_n(&s->losses.events, __ATOMIC_RELAXED),
                       .device_records = s->losses.device_records };
}

char *tsp_session_losses_text(const tsp_session *s)
{
  tsp_losses l = tsp_session_losses(s);
  if (!l.events && !l.device_records)
    return NULL;
  GString *text = g_string_new(NULL);
  if (l.events)
    g_string_append_printf(text, "%" G_GUINT64_FORMAT " event%s lost: the recording's memory ran out",
                           l.events, l.events == 1 ? "" : "s");
  if (l.device_records)
    g_string_append_printf(text, "%s%" G_GUINT64_FORMAT " device record%s dropped: the device's activity "
                           "buffers were full", text->len ? "; " : "", l.device_records,
                           l.device_records == 1 ? "" : "s");
  return g_string_free(text, FALSE);
}

void tsp__event_lost(tsp_session *s)
{
  __atomic_add_fetch(&s->losses.events, 1, __ATOMIC_RELAXED);
}

tsp_session *tsp_session_new(void)
{
  tsp_session *s = tsp_session_new_empty();
  tsp_session_add_collector(s, &tsp_cpu_collector, NULL);
  tsp_session_add_collector(s, &tsp_device_collector, NULL);
  return s;
}

void tsp_session_free(tsp_session *s)
{
  if (!s)
    return;
  tsp_session_stop(s);
  for (guint i = 0; i < s->threads->len; i++) {
    tsp_thread *t = s->threads->pdata[i];
    for (tsp_chunk *c = t->first, *next; c; c = next) {
      next = c->next;
      free(c->ev);
      free(c); /* posix_memalign (chunk_new) */
    }
    g_free(t->cache);
    g_aligned_free(t);
  }
  for (guint i = 1; i < s->nodes->len; i++) {
    tsp_node_info *n = s->nodes->pdata[i];
    g_free(n->origins);
    g_free(n);
  }
  g_ptr_array_unref(s->threads);
  g_array_unref(s->collectors);
  g_string_chunk_free(s->text);
  g_hash_table_unref(s->string_ids);
  g_ptr_array_unref(s->strings);
  g_ptr_array_unref(s->nodes);
  g_hash_table_unref(s->node_ids);
  g_array_unref(s->locs);
  g_hash_table_unref(s->loc_ids);
  g_array_unref(s->concretes);
  g_hash_table_unref(s->concrete_ids);
  g_hash_table_unref(s->concrete_ptrs);
  g_ptr_array_unref(s->devices);
  g_mutex_clear(&s->lock);
  g_mutex_clear(&s->phase_lock);
  g_rec_mutex_clear(&s->node_lock);
  g_free(s);
}

/* ---- collectors -------------------------------------------------------------------- */

void tsp_session_add_collector(tsp_session *s, const tsp_collector_i *iface, void *data)
{
  g_return_if_fail(!s->recording);
  g_array_append_val(s->collectors, ((collector){ iface, data }));
}

bool tsp_session_start(tsp_session *s, GError **error)
{
  g_return_val_if_fail(!s->recording, false);
  for (guint i = 0; i < s->collectors->len; i++) {
    collector *c = &g_array_index(s->collectors, collector, i);
    if (!c->iface->start(s, c->data, error)) {
      while (i-- > 0) {
        c = &g_array_index(s->collectors, collector, i);
        c->iface->stop(s, c->data);
      }
      return false;
    }
  }
  s->recording = true;
  return true;
}

void tsp_session_stop(tsp_session *s)
{
  if (!s->recording)
    return;
  for (guint i = 0; i < s->collectors->len; i++) {
    collector *c = &g_array_index(s->collectors, collector, i);
    if (c->iface->flush)
      c->iface->flush(s, c->data);
    c->iface->stop(s, c->data);
  }
  s->recording = false;
  tsp__trim_chunks(s);
}

bool tsp_session_recording(const tsp_session *s)
{
  return s->recording;
}

/* ---- threads and chunks ------------------------------------------------------------- */

tsp_thread *tsp__thread_new(tsp_session *s, const char *name, uint64_t tid)
{
  /* each thread's record and chunk headers on cache lines of their own:
   * threads recording at once (a call's pieces on the pool) never share one */
  tsp_thread *t = g_aligned_alloc0(1, TSP_LINES(sizeof(tsp_thread)), TSP_CACHE_LINE);
  t->session = s;
  g_mutex_lock(&s->lock);
  t->index = (int)s->threads->len;
  t->info.tid = tid;
  t->info.name = g_string_chunk_insert_const(s->text, name ? name : "");
  g_ptr_array_add(s->threads, t);
  g_mutex_unlock(&s->lock);
  return t;
}

_Thread_local tsp__self_record tsp__self __attribute__((tls_model("initial-exec")));

/* The calling thread's track name: "main", the name the thread was given
 * (g_thread_new's, pthread_setname_np's: "ts-pool-1"), else "thread TID".
 * A thread given no name carries its creator's: the process's, for one
 * the main thread made. */
static void thread_label(uint64_t tid, char *label, size_t size)
{
  if (tid == (uint64_t)getpid()) {
    g_strlcpy(label, "main", size);
    return;
  }
  char name[16] = "", process[16] = "";
  g_autofree char *comm = NULL;
  if (g_file_get_contents("/proc/self/comm", &comm, NULL, NULL))
    g_strlcpy(process, g_strchomp(comm), sizeof process);
  if (pthread_getname_np(pthread_self(), name, sizeof name) == 0 && *name && strcmp(name, process) != 0)
    g_strlcpy(label, name, size);
  else
    g_snprintf(label, size, "thread %" G_GUINT64_FORMAT, tid);
}

tsp_thread *tsp__thread_self_first(tsp_session *s)
{
  uint64_t tid = (uint64_t)syscall(SYS_gettid);
  char label[32];
  thread_label(tid, label, sizeof label);
  tsp_thread *t = NULL;
  g_mutex_lock(&s->lock);
  for (guint i = 0; i < s->threads->len && !t; i++) {
    tsp_thread *x = s->threads->pdata[i];
    if (x->info.tid == tid)
      t = x;
  }
  g_mutex_unlock(&s->lock);
  if (!t)
    t = tsp__thread_new(s, label, tid);
  t->live = true;
  tsp__self.session = s->id;
  tsp__self.thread = t;
  return t;
}

/* A chunk for n events, NULL if there is no memory.  Full-size chunks are
 * aligned for transparent huge pages; smaller ones come from malloc. */
static tsp_chunk *chunk_new(size_t n)
{
  void *p = NULL;
  size_t bytes = n * sizeof(tsp_event);
  if (n == TSP_CHUNK_EVENTS) {
    if (posix_memalign(&p, TSP_HUGE_PAGE, bytes) != 0)
      return NULL;
    madvise(p, bytes, MADV_HUGEPAGE); /* a hint: fine if refused */
  } else if (!(p = malloc(bytes))) {
    return NULL;
  }
  /* its own cache lines: threads recording at once do not share them */
  void *header = NULL;
  if (posix_memalign(&header, TSP_CACHE_LINE, TSP_LINES(sizeof(tsp_chunk))) != 0) {
    free(p);
    return NULL;
  }
  tsp_chunk *c = header;
  *c = (tsp_chunk){ .next = NULL, .n = 0, .cap = (uint32_t)n, .huge = n == TSP_CHUNK_EVENTS, .ev = p };
  return c;
}

bool tsp__thread_grow(tsp_thread *t)
{
  tsp_chunk *c = t->last;
  {
    /* A thread recording as it runs takes full-size chunks from its
     * first event: small ones would each be new memory, a page fault
     * every 85 events (most of what recording a graph's op cost).  A
     * file's threads take as many events again as they have, so that a
     * thread's memory follows its events (a trace of 100,000 threads of a
     * few events each), up to a full chunk. */
    size_t n = t->live ? TSP_CHUNK_EVENTS : CLAMP(t->n_events, TSP_CHUNK_MIN_EVENTS, TSP_CHUNK_EVENTS);
    size_t bytes = n * sizeof(tsp_event);
    tsp_session *s = t->session;
    if (t->live && __atomic_add_fetch(&s->live_bytes, bytes, __ATOMIC_RELAXED) > s->max_bytes) {
      __atomic_sub_fetch(&s->live_bytes, bytes, __ATOMIC_RELAXED);
      return false;
    }
    tsp_chunk *fresh = chunk_new(n);
    if (!fresh) {
      if (t->live)
        __atomic_sub_fetch(&s->live_bytes, bytes, __ATOMIC_RELAXED);
      return false;
    }
    if (c)
      c->next = fresh;
    else
      t->first = fresh;
    t->last = fresh;
  }
  return true;
}

void tsp_record(tsp_session *s, const tsp_event *e)
{
  tsp__thread_append(tsp__thread_self(s), e);
}

int tsp_session_add_thread(tsp_session *s, const char *name, uint64_t tid)
{
  return tsp__thread_new(s, name, tid)->index;
}

void tsp_record_on(tsp_session *s, int thread, const tsp_event *e)
{
  g_return_if_fail(thread >= 0 && (guint)thread < s->threads->len);
  tsp__thread_append(s->threads->pdata[thread], e);
}

int tsp_session_n_threads(const tsp_session *s)
{
  return (int)s->threads->len;
}

const tsp_thread_info *tsp_session_thread(const tsp_session *s, int i)
{
  g_return_val_if_fail(i >= 0 && (guint)i < s->threads->len, NULL);
  return &((tsp_thread *)s->threads->pdata[i])->info;
}

void tsp_iter_init(tsp_iter *it, const tsp_session *s, int thread)
{
  g_return_if_fail(thread >= 0 && (guint)thread < s->threads->len);
  it->chunk = ((tsp_thread *)s->threads->pdata[thread])->first;
  it->i = 0;
}

const tsp_event *tsp_iter_next(tsp_iter *it)
{
  const tsp_chunk *c = it->chunk;
  while (c && it->i >= c->n) {
    c = it->chunk = c->next;
    it->i = 0;
  }
  return c ? &c->ev[it->i++] : NULL;
}

uint64_t tsp_session_n_events(const tsp_session *s)
{
  uint64_t n = 0;
  for (guint i = 0; i < s->threads->len; i++)
    for (const tsp_chunk *c = ((tsp_thread *)s->threads->pdata[i])->first; c; c = c->next)
      n += c->n;
  return n;
}

size_t tsp_session_event_bytes(const tsp_session *s)
{
  size_t n = 0;
  for (guint i = 0; i < s->threads->len; i++)
    for (const tsp_chunk *c = ((tsp_thread *)s->threads->pdata[i])->first; c; c = c->next)
      n += (size_t)c->cap * sizeof(tsp_event);
  return n;
}

void tsp__trim_chunks(tsp_session *s)
{
  for (guint i = 0; i < s->threads->len; i++) {
    tsp_thread *t = s->threads->pdata[i];
    tsp_chunk *c = t->last;
    if (!c || c->n == c->cap || c->n == 0)
      continue;
    /* A full-size chunk keeps the rest of the huge page its last event is
     * in (resident anyway): a session started again goes on filling it,
     * where a new chunk would cost a fresh page each time. */
    size_t keep = c->n;
    if (c->huge) {
      size_t bytes = ((size_t)c->n * sizeof(tsp_event) + TSP_HUGE_PAGE - 1) / TSP_HUGE_PAGE * TSP_HUGE_PAGE;
      keep = MIN(bytes / sizeof(tsp_event), (size_t)c->cap);
    }
    if (keep == c->cap)
      continue;
    tsp_event *trimmed = realloc(c->ev, keep * sizeof(tsp_event)); /* the events may move */
    if (!trimmed)
      continue; /* they keep their room */
    if (t->live)
      __atomic_sub_fetch(&s->live_bytes, (c->cap - keep) * sizeof(tsp_event), __ATOMIC_RELAXED);
    c->ev = trimmed;
    c->cap = (uint32_t)keep;
  }
}

/* ---- tables ------------------------------------------------------------------------- */

/* Callers hold s->lock. */
static uint32_t intern_string_locked(tsp_session *s, const char *str)
{
  if (!str || !*str)
    return 0;
  gpointer v;
  if (g_hash_table_lookup_extended(s->string_ids, str, NULL, &v))
    return GPOINTER_TO_UINT(v);
  const char *copy = g_string_chunk_insert_const(s->text, str);
  uint32_t i = s->strings->len;
  g_ptr_array_add(s->strings, (char *)copy);
  g_hash_table_insert(s->string_ids, (char *)copy, GUINT_TO_POINTER(i));
  return i;
}

uint32_t tsp_intern_string(tsp_session *s, const char *str)
{
  g_mutex_lock(&s->lock);
  uint32_t i = intern_string_locked(s, str);
  g_mutex_unlock(&s->lock);
  return i;
}

const char *tsp_session_string(const tsp_session *s, uint32_t i)
{
  return i < s->strings->len ? s->strings->pdata[i] : "";
}

uint32_t tsp_intern_loc(tsp_session *s, const char *file, const char *func, int line)
{
  if (!file && !func && line == 0)
    return 0;
  char *key = g_strdup_printf("%s\n%s\n%d", file ? file : "", func ? func : "", line);
  g_mutex_lock(&s->lock);
  gpointer v;
  uint32_t i;
  if (g_hash_table_lookup_extended(s->loc_ids, key, NULL, &v)) {
    i = GPOINTER_TO_UINT(v);
    g_free(key);
  } else {
    tsp_loc_info l = { tsp_session_string(s, intern_string_locked(s, file)),
                       tsp_session_string(s, intern_string_locked(s, func)), line };
    i = s->locs->len;
    g_array_append_val(s->locs, l);
    g_hash_table_insert(s->loc_ids, key, GUINT_TO_POINTER(i));
  }
  g_mutex_unlock(&s->lock);
  return i;
}

const tsp_loc_info *tsp_session_loc(const tsp_session *s, uint32_t i)
{
  return &g_array_index(s->locs, tsp_loc_info, i < s->locs->len ? i : 0);
}

char *tsp__loc_text(const tsp_session *s, uint32_t i)
{
  const tsp_loc_info *l = tsp_session_loc(s, i);
  if (!*l->file)
    return g_strdup("");
  const char *base = strrchr(l->file, '/');
  return g_strdup_printf("%s:%d", base ? base + 1 : l->file, l->line);
}

uint32_t tsp_intern_concrete(tsp_session *s, const char *function, const char *signature)
{
  char *key = g_strdup_printf("%s\n%s", function ? function : "", signature ? signature : "");
  g_mutex_lock(&s->lock);
  gpointer v;
  uint32_t i;
  if (g_hash_table_lookup_extended(s->concrete_ids, key, NULL, &v)) {
    i = GPOINTER_TO_UINT(v);
    g_free(key);
  } else {
    tsp_concrete_info c = { tsp_session_string(s, intern_string_locked(s, function)),
                            tsp_session_string(s, intern_string_locked(s, signature)) };
    i = s->concretes->len;
    g_array_append_val(s->concretes, c);
    g_hash_table_insert(s->concrete_ids, key, GUINT_TO_POINTER(i));
  }
  g_mutex_unlock(&s->lock);
  return i;
}

const tsp_concrete_info *tsp_session_concrete(const tsp_session *s, uint32_t i)
{
  return &g_array_index(s->concretes, tsp_concrete_info, i < s->concretes->len ? i : 0);
}

uint32_t tsp_intern_ts_concrete(tsp_session *s, const ts_concrete *cf)
{
  if (!cf)
    return 0;
  g_mutex_lock(&s->lock);
  gpointer v = NULL;
  bool found = g_hash_table_lookup_extended(s->concrete_ptrs, cf, NULL, &v);
  g_mutex_unlock(&s->lock);
  if (found)
    return GPOINTER_TO_UINT(v);
  uint32_t i = tsp_intern_concrete(s, ts_function_name(ts_concrete_function(cf)),
                                   ts_concrete_signature(cf));
  g_mutex_lock(&s->lock);
  g_hash_table_insert(s->concrete_ptrs, (gpointer)cf, GUINT_TO_POINTER(i));
  g_mutex_unlock(&s->lock);
  return i;
}

uint8_t tsp_intern_device(tsp_session *s, const char *name)
{
  if (!name || !*name)
    return 0;
  g_mutex_lock(&s->lock);
  guint i = 1;
  while (i < s->devices->len && strcmp(s->devices->pdata[i], name) != 0)
    i++;
  if (i == s->devices->len && i < 256)
    g_ptr_array_add(s->devices, g_string_chunk_insert_const(s->text, name));
  g_mutex_unlock(&s->lock);
  return i < 256 ? (uint8_t)i : 0;
}

const char *tsp_session_device(const tsp_session *s, uint32_t i)
{
  return i < s->devices->len ? s->devices->pdata[i] : "";
}

uint32_t tsp_add_node(tsp_session *s, const tsp_node_info *info)
{
  tsp_node_info *n = g_new(tsp_node_info, 1);
  *n = *info;
  g_mutex_lock(&s->lock);
  n->name = tsp_session_string(s, intern_string_locked(s, info->name));
  n->scope = tsp_session_string(s, intern_string_locked(s, info->scope));
  n->shape = tsp_session_string(s, intern_string_locked(s, info->shape));
  n->origins = info->n_origins > 0 ? g_memdup2(info->origins, sizeof(uint32_t) * (size_t)info->n_origins)
                                   : NULL;
  if (info->n_origins < 0)
    n->n_origins = 0;
  uint32_t i = s->nodes->len;
  g_ptr_array_add(s->nodes, n);
  g_mutex_unlock(&s->lock);
  return i;
}

uint32_t tsp_session_n_nodes(const tsp_session *s)
{
  return s->nodes->len;
}

const tsp_node_info *tsp_session_node(const tsp_session *s, uint32_t i)
{
  return i < s->nodes->len ? s->nodes->pdata[i] : NULL;
}

const char *tsp_event_op_name(const tsp_session *s, const tsp_event *e)
{
  if (e->op == TSP_OP_OTHER) {
    const tsp_node_info *n = tsp_session_node(s, e->node ? e->node : e->traced);
    return n ? n->name : "?";
  }
  const char *name = ts_op_name((ts_op)e->op);
  return name ? name : "?";
}

int64_t tsp_memory_delta(const tsp_event *e)
{
  return (int64_t)((uint64_t)e->parent_seq << 32 | e->seq);
}

int64_t tsp_memory_live(const tsp_event *e)
{
  return (int64_t)((uint64_t)e->traced << 32 | e->node);
}

void tsp_memory_event_init(tsp_event *e, uint64_t time_ns, int64_t delta, int64_t live,
                           uint8_t device, ts_memory_kind what, uint32_t loc)
{
  *e = (tsp_event){
    .start_ns = time_ns, .end_ns = time_ns,
    .seq = (uint32_t)(uint64_t)delta, .parent_seq = (uint32_t)((uint64_t)delta >> 32),
    .node = (uint32_t)(uint64_t)live, .traced = (uint32_t)((uint64_t)live >> 32),
    .loc = loc, .op = (uint16_t)what, .kind = TSP_EVENT_MEMORY, .device = device,
  };
}

static const char *const memory_counters[TS_MEMORY_KIND_COUNT] = {
  [TS_MEMORY_TENSORS] = "memory",
  [TS_MEMORY_ARENA] = "arena",
};

const char *tsp_memory_counter_name(ts_memory_kind what)
{
  return (unsigned)what < TS_MEMORY_KIND_COUNT ? memory_counters[what] : NULL;
}

/* The graph a node is in, named by its top-level graph and whether it is
 * the traced graph (origins stand for themselves) or an optimized copy. */
static bool node_is_traced(const ts_node *n)
{
  return ts_node_n_origins(n) == 1 && ts_node_origin(n, 0) == n;
}

uint32_t tsp_intern_ts_node(tsp_session *s, const ts_node *n, const ts_concrete *cf)
{
  if (!n)
    return 0;
  g_rec_mutex_lock(&s->node_lock); /* one entry per node, whichever thread sees it first */
  g_mutex_lock(&s->lock);
  gpointer v = NULL;
  bool found = g_hash_table_lookup_extended(s->node_ids, n, NULL, &v);
  g_mutex_unlock(&s->lock);
  if (found) {
    g_rec_mutex_unlock(&s->node_lock);
    return GPOINTER_TO_UINT(v);
  }
  bool traced = node_is_traced(n);
  int n_origins = traced ? 0 : ts_node_n_origins(n);
  uint32_t *origins = g_new0(uint32_t, n_origins > 0 ? n_origins : 1);
  for (int i = 0; i < n_origins; i++)
    origins[i] = tsp_intern_ts_node(s, ts_node_origin(n, i), cf);
  const ts_graph *top = ts_node_graph(n);
  while (ts_graph_parent(top))
    top = ts_graph_parent(top);
  ts_loc loc = ts_node_loc(n);
  char *shape = ts_node_n_outputs(n) > 0
                  ? ts_shape_dtype_string(ts_node_output_dtype(n, 0), ts_node_output_shape(n, 0))
                  : NULL;
  g_autofree char *path = ts_node_path(n);
  tsp_node_info info = {
    .name = path, .scope = ts_node_scope(n), .shape = shape, .op = ts_node_op(n),
    .loc = tsp_intern_loc(s, loc.file, loc.func, loc.line),
    .concrete = tsp_intern_ts_concrete(s, cf), .id = ts_node_id(n),
    .graph = tsp_intern_string(s, ts_graph_name(top)), .optimized = !traced,
    .has_eager_twin = ts_node_has_eager_twin(n), .n_origins = n_origins, .origins = origins,
  };
  uint32_t i = tsp_add_node(s, &info);
  free(shape);
  g_free(origins);
  g_mutex_lock(&s->lock);
  g_hash_table_insert(s->node_ids, (gpointer)n, GUINT_TO_POINTER(i));
  g_mutex_unlock(&s->lock);
  g_rec_mutex_unlock(&s->node_lock);
  return i;
}
