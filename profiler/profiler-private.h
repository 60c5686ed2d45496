/* profiler-private.h — the session's insides, shared by the profiler's files. */
#pragma once

#include "tracescope-profiler.h"

/* A thread's chunks grow with its events, from 8 events to 4 MiB: the
 * full-size ones are aligned so that transparent huge pages can back them
 * (two page faults fill them instead of a thousand).  A chunk's header
 * lives apart, so the events' memory is 48 B an event exactly. */
#define TSP_CHUNK_BYTES ((size_t)4 << 20)
#define TSP_CHUNK_EVENTS (TSP_CHUNK_BYTES / sizeof(tsp_event))
#define TSP_CHUNK_MIN_EVENTS ((size_t)8)
#define TSP_HUGE_PAGE ((size_t)2 << 20)

#define TSP_CACHE_LINE 64
#define TSP_LINES(bytes) (((bytes) + TSP_CACHE_LINE - 1) / TSP_CACHE_LINE * TSP_CACHE_LINE)

typedef struct tsp_chunk {
  struct tsp_chunk *next;
  uint32_t n;
  uint32_t cap;  /* events it has room for: TSP_CHUNK_EVENTS, or less once trimmed */
  bool huge;     /* made full-size, in huge pages */
  tsp_event *ev;
} tsp_chunk;

/* When recording stops (or a file has been read): each thread's last
 * chunk shrinks to what it holds (a full-size one to the end of the huge
 * page its last event is in). */
void tsp__trim_chunks(tsp_session *s);

/* A thread's events: only that thread appends (no lock), into its last chunk. */
typedef struct tsp_thread {
  tsp_session *session;
  int index;
  tsp_chunk *first, *last;
  uint64_t n_events;
  uint64_t last_run;       /* run of the last op recorded (for tsp_call_end) */
  uint32_t last_concrete;
  bool live;               /* records as it runs (tsp__thread_self's): full-size chunks */
  struct tsp_cache *cache; /* the CPU collector's lookups (record.c), owned */
  tsp_thread_info info;
} tsp_thread;

/* The phase track's tid: no OS thread's (Linux's are below 2^22), apart
 * from the device streams' 0, so that a Chrome trace keeps it apart. */
#define TSP__PHASE_TID ((uint64_t)1 << 32)

typedef struct collector {
  const tsp_collector_i *iface;
  void *data;
} collector;

struct tsp_session {
  uint64_t id;             /* unique: thread-local caches check it */
  GMutex lock;             /* tables and the thread list */
  GRecMutex node_lock;     /* interning engine nodes (with their origins) */
  bool recording;
  GArray *collectors;      /* collector */
  GPtrArray *threads;      /* tsp_thread * */
  GStringChunk *text;
  GHashTable *string_ids;  /* text -> index */
  GPtrArray *strings;      /* index -> text */
  GPtrArray *nodes;        /* tsp_node_info * (0: NULL) */
  GHashTable *node_ids;    /* const ts_node * -> index */
  GArray *locs;            /* tsp_loc_info */
  GHashTable *loc_ids;     /* "file\nfunc\nline" -> index */
  GArray *concretes;       /* tsp_concrete_info */
  GHashTable *concrete_ids; /* "function\nsignature" -> index */
  GHashTable *concrete_ptrs; /* const ts_concrete * -> index */
  GPtrArray *devices;      /* names (0: "") */
  int listener;            /* the CPU collector's */
  int memory_listener;     /* the memory collector's */
  struct tsp_devices *device_state; /* the device collector's, while it records (atomic) */
  GMutex phase_lock;       /* phases: every thread's onto one track (tid TSP__PHASE_TID) */
  tsp_thread *phases;      /* that track, made with the first phase */
  size_t max_bytes;        /* the cap on recording threads' chunks (tsp_session_set_max_bytes) */
  size_t live_bytes;       /* their chunks' bytes (atomic: threads grow at once) */
  tsp_losses losses;       /* events: atomic; device_records: the device collector's, at stop */
};

/* The device collector (device.c): does it want this op (one that ran on
 * a device, or had inputs copied to where it ran, while it records), and
 * an op's event under its correlation id. */
bool tsp__device_op_wanted(const tsp_session *s, const ts_op_event *op);
void tsp__device_op(tsp_session *s, uint64_t correlation, const tsp_event *e);

tsp_thread *tsp__thread_new(tsp_session *s, const char *name, uint64_t tid);

/* The session id and record of the calling thread's last session: the id
 * is checked first, so a freed session's record is never touched. */
typedef struct tsp__self_record {
  uint64_t session;
  tsp_thread *thread;
} tsp__self_record;
extern _Thread_local tsp__self_record tsp__self __attribute__((tls_model("initial-exec")));
tsp_thread *tsp__thread_self_first(tsp_session *s);

/* The calling thread's record in s (made on first use).  Inline, as the
 * append: both run per event recorded. */
static inline tsp_thread *tsp__thread_self(tsp_session *s)
{
  if (G_LIKELY(tsp__self.session == s->id))
    return tsp__self.thread;
  return tsp__thread_self_first(s);
}

/* Gives t a new last chunk; false without memory. */
bool tsp__thread_grow(tsp_thread *t);

static inline bool tsp__thread_try_append(tsp_thread *t, const tsp_event *e) /* false without memory */
{
  tsp_chunk *c = t->last;
  if (G_UNLIKELY(!c || c->n == c->cap)) {
    if (!tsp__thread_grow(t))
      return false;
    c = t->last;
  }
  c->ev[c->n++] = *e;
  /* the line a few events on, for writing: a recording fills fresh memory,
   * and each new line's read for ownership stalled the store */
  if (G_LIKELY(c->n + 8 < c->cap))
    __builtin_prefetch(&c->ev[c->n + 8], 1, 0);
  t->n_events++;
  return true;
}

/* Counts an event a recording could not keep (tsp_losses). */
void tsp__event_lost(tsp_session *s);

static inline void tsp__thread_append(tsp_thread *t, const tsp_event *e) /* counted as lost without memory */
{
  if (G_UNLIKELY(!tsp__thread_try_append(t, e)))
    tsp__event_lost(t->session);
}

/* The mode of an op event. */
static inline tsp_mode tsp__event_mode(const tsp_event *e)
{
  return e->node ? TSP_MODE_GRAPH : TSP_MODE_EAGER;
}

static inline bool tsp__filter_accepts(const tsp_filter *f, const tsp_event *e)
{
  return (f->modes & tsp__event_mode(e)) && e->start_ns >= f->from_ns &&
         (!f->to_ns || e->start_ns < f->to_ns);
}

/* Sets a TSP_ERROR_FORMAT error; returns false. */
bool tsp__fail(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* "file:line" (basename of file) of loc index i, owned; "" if none. */
char *tsp__loc_text(const tsp_session *s, uint32_t i);

/* An op event with its self time. */
typedef struct tsp__op_time {
  const tsp_event *e;
  double self_ns;
} tsp__op_time;
/* Thread i's op events (in the order they end) with their self times: each
 * span less the spans directly inside it on the thread (stats.c). */
GArray *tsp__thread_op_times(const tsp_session *s, int thread);
/* The node an op event's time goes to (stats.c): the traced node it
 * stands for, or a fused node itself; 0 for an eager op with no twin. */
uint32_t tsp__event_identity(const tsp_session *s, const tsp_event *e);
