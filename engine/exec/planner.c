/* planner.c — the memory planner: one arena per plan, its buffers reused
 * by liveness.
 *
 * Every value a step makes and later steps read has a known size once
 * shapes are: the node's recorded outputs, or (unknown dims) the sizes the
 * first call saw.  Values are placed in an arena by greedy best fit over
 * their lifetimes (step made .. step released), 64-byte aligned; an
 * elementwise op whose input dies there writes over that input (in place).
 * Graph outputs, and whatever ops that keep or pass on their inputs (control
 * flow, lists, variables, Identity) read, stay outside it.
 *
 * A run takes an arena from the executable's pool (another is made for a
 * concurrent run), hands its buffers to the dispatcher through the
 * context's `planned` and gives it back; the tensor headers live with the
 * arena, those of the views the run makes (Reshape, Flatten, variable
 * reads) too, so a repeat call allocates nothing for them.  A tensor in the
 * arena that someone else still holds when its value dies (debugger
 * history, a listener) gets a buffer of its own first, so what they hold
 * is never overwritten.  When a call's sizes differ from the plan's, those
 * values take heap buffers and the executable re-plans after the call. */
#include "exec.h"

#include <pthread.h>
#include <stdlib.h>

#define ALIGN TS_BUFFER_MAX_ALIGNMENT /* every buffer type's alignment divides it */
#define POISON 0xff /* every float and double with these bytes is a NaN */

static bool poison;

/* TRACESCOPE_PLAN_POISON=1 turns poisoning on until ts_memory_plan_set_poison says. */
static void read_env(void)
{
  const char *env = g_getenv("TRACESCOPE_PLAN_POISON");
  if (env && *env && strcmp(env, "0"))
    __atomic_store_n(&poison, true, __ATOMIC_RELAXED);
}

static void poison_from_env(void)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, read_env);
}

void ts_memory_plan_set_poison(bool on)
{
  poison_from_env();
  __atomic_store_n(&poison, on, __ATOMIC_RELAXED);
}

bool ts__planner_poisons(void)
{
  poison_from_env();
  return __atomic_load_n(&poison, __ATOMIC_RELAXED);
}

/* Ops whose output may be written over an input (rows flagged
 * TS_OPF_INPLACE: their loops read each element before writing it). */
bool ts__op_is_elementwise(ts_op op)
{
  const ts_op_def *def = ts__op_def(op);
  return def && (def->flags & TS_OPF_INPLACE);
}

bool ts__op_is_view(ts_op op)
{
  const ts_op_def *def = ts__op_def(op);
  return def && (def->flags & TS_OPF_VIEW);
}

/* Ops whose kernel makes its one output with ts__tensor_view (a view of an
 * input or of a variable's storage), and nothing else. */
static bool makes_view(ts_op op)
{
  return ts__op_is_view(op) || op == TS_OP_READ_VARIABLE;
}

typedef struct mem_plan {
  int users;             /* arenas on it, and 1 while current (planner's lock) */
  int64_t *offset;       /* per value: where in the arena; -1: not planned */
  int64_t *bytes;        /* per value: its size when planned */
  bool *inherited;       /* per value: an in-place output goes on in its buffer */
  ts_memory_plan stats;
} mem_plan;

/* What the dispatcher is handed for a step (ts_planned first). */
typedef struct planned_step {
  ts_planned iface;
  ts_arena *arena;
  int first, n; /* the step's values */
} planned_step;

struct ts_arena {
  ts_arena *next;        /* in the pool */
  ts_planner *owner;
  mem_plan *plan;        /* NULL: the run records sizes only */
  const ts_backend *backend; /* the device the run places steps on */
  ts_buffer *buffer;     /* of backend's buffer type: the plan's values at their offsets */
  ts_tensor **hdr;       /* per planned value and view: its header (the arena holds a reference) */
  int64_t *seen;         /* per value: its bytes in this run */
  bool mismatch;         /* a value's size was not the plan's */
  bool part;             /* values of part of a batch: at most the plan's sizes */
  ts_tensor **values;    /* the run's value slots */
  ts_scope **scopes;     /* per slot (a step, or each of a group's at once): its scope */
  planned_step *steps;   /* per slot: what its step is handed */
};

struct ts_planner {
  pthread_mutex_t lock;  /* pthread: ThreadSanitizer sees it (Makefile) */
  int n_values, n_steps;
  int slots;             /* steps that run at once, at most */
  bool *plannable;       /* per value: may live in the arena */
  bool *view;            /* per value: a view the run makes and drops (its header is the arena's) */
  int *inplace_src;      /* per value: the input whose buffer it may take, or -1 */
  int64_t *static_bytes; /* per value: from the recorded shape; -1 unknown */
  const int *step_first, *step_n;      /* per step: its values */
  const int *rel_start, *rel_values;   /* per step: the values released after it */
  mem_plan *plan;        /* current; NULL until sizes are known */
  ts_arena *pool;
  int n_plans;
};

/* -1 where unknown, and above what a tensor may take (the bytes may
 * overflow there): the run's allocation then refuses it with an error. */
static int64_t info_bytes(const ts_info *info)
{
  int64_t n, bytes;
  if (info->dtype == TS_STRING || info->dtype == TS_VARIANT ||
      !ts__shape_product(info->shape.dim, info->shape.rank, &n) || info->shape.rank < 0 ||
      __builtin_mul_overflow(n, (int64_t)ts_dtype_size(info->dtype), &bytes) ||
      bytes > TS_MAX_TENSOR_BYTES)
    return -1;
  return bytes;
}

static bool same_info(const ts_info *a, const ts_info *b)
{
  if (a->dtype != b->dtype || a->shape.rank != b->shape.rank)
    return false;
  for (int d = 0; d < a->shape.rank; d++)
    if (a->shape.dim[d] != b->shape.dim[d] || a->shape.dim[d] < 0)
      return false;
  return true;
}

/* Reads that keep or pass on what they read (a list, a variable, a
 * subgraph, Identity's output): such inputs stay out of the arena. */
static bool keeps_inputs(const ts_op_def *def)
{
  return (def->flags & (TS_OPF_CONTROL_FLOW | TS_OPF_ANY_DTYPE | TS_OPF_VARIABLE)) ||
         ((def->flags & TS_OPF_ALIAS) && !ts__op_is_view(def->op));
}

ts_planner *ts__planner_new(const ts_graph *g, const ts_exec_layout *l)
{
  poison_from_env();
  ts_planner *p = g_new0(ts_planner, 1);
  pthread_mutex_init(&p->lock, NULL);
  p->n_values = l->n_values;
  p->n_steps = l->n_steps;
  p->step_first = l->step_first;
  p->step_n = l->step_n;
  p->rel_start = l->rel_start;
  p->rel_values = l->rel_values;
  p->slots = MAX(l->max_group, 1);
  int nv = MAX(l->n_values, 1);
  p->plannable = g_new0(bool, nv);
  p->view = g_new0(bool, nv);
  p->inplace_src = g_new(int, nv);
  p->static_bytes = g_new(int64_t, nv);
  bool *escapes = g_new0(bool, nv);
  const ts_info **info = g_new0(const ts_info *, nv);
  for (int v = 0; v < l->n_values; v++)
    p->inplace_src[v] = -1, p->static_bytes[v] = -1;

  for (guint i = 0; i < g->outputs->len; i++) {
    ts_port port = g_array_index(g->outputs, ts_port, i);
    escapes[l->offset[port.node] + port.index] = true;
  }
  /* Views share their input's storage: whatever a view escapes to, so does
   * the input (steps backwards, views after what they view). */
  for (int s = l->n_steps - 1; s >= 0; s--) {
    const ts_node *n = ts__graph_node(g, l->steps[s]);
    const ts_op_def *def = ts__op_def(n->op);
    for (int i = 0; i < n->n_inputs; i++) {
      int in = l->offset[n->inputs[i].node] + n->inputs[i].index;
      if (keeps_inputs(def) || (ts__op_is_view(n->op) && escapes[l->step_first[s]]))
        escapes[in] = true;
    }
  }
  int group_end = 0; /* the group step s is in ends before this step */
  for (int s = 0; s < l->n_steps; s++) {
    const ts_node *n = ts__graph_node(g, l->steps[s]);
    const ts_op_def *def = ts__op_def(n->op);
    bool makes = !(def->flags & (TS_OPF_INPUT | TS_OPF_ALIAS | TS_OPF_VALUE)) &&
                 !n->n_subgraphs;
    for (int i = 0; i < n->n_outputs; i++) {
      int v = l->step_first[s] + i;
      info[v] = &n->outputs[i];
      p->static_bytes[v] = info_bytes(&n->outputs[i]);
      p->plannable[v] = makes && !escapes[v] && n->outputs[i].dtype != TS_STRING &&
                        n->outputs[i].dtype != TS_VARIANT;
      p->view[v] = makes_view(n->op) && n->n_outputs == 1 && !escapes[v] &&
                   n->outputs[i].dtype != TS_STRING && n->outputs[i].dtype != TS_VARIANT;
    }
    /* In place: an elementwise op's output over an input of the same
     * (static) dtype and shape that is released right after it; never in
     * a group (its inputs are released after the group, and the others
     * may read them meanwhile). */
    if (l->group_end[s] > 0)
      group_end = l->group_end[s];
    int out = l->step_first[s];
    if (!ts__op_is_elementwise(n->op) || n->n_outputs != 1 || !p->plannable[out] || s < group_end)
      continue;
    for (int i = 0; i < n->n_inputs && p->inplace_src[out] < 0; i++) {
      int in = l->offset[n->inputs[i].node] + n->inputs[i].index;
      bool dies_here = false;
      for (int r = l->rel_start[s]; r < l->rel_start[s + 1]; r++)
        dies_here |= l->rel_values[r] == in;
      if (dies_here && p->plannable[in] && info[in] && same_info(info[in], info[out]))
        p->inplace_src[out] = in;
    }
  }
  g_free(escapes);
  g_free(info);
  return p;
}

/* ---- planning ------------------------------------------------------------------ */

typedef struct block {
  int64_t off, size;
} block;

/* Best fit among the free blocks (sorted by offset), else the top of the
 * arena (growing a free block that ends there). */
static int64_t place(GArray *free_blocks, int64_t *top, int64_t size)
{
  int best = -1;
  for (guint i = 0; i < free_blocks->len; i++) {
    block *b = &g_array_index(free_blocks, block, i);
    if (b->size >= size && (best < 0 || b->size < g_array_index(free_blocks, block, best).size))
      best = (int)i;
  }
  if (best >= 0) {
    block *b = &g_array_index(free_blocks, block, best);
    int64_t off = b->off;
    b->off += size;
    b->size -= size;
    if (!b->size)
      g_array_remove_index(free_blocks, (guint)best);
    return off;
  }
  int64_t off = *top;
  if (free_blocks->len) {
    block *last = &g_array_index(free_blocks, block, free_blocks->len - 1);
    if (last->off + last->size == *top) {
      off = last->off;
      g_array_remove_index(free_blocks, free_blocks->len - 1);
    }
  }
  *top = off + size;
  return off;
}

/* Returns [off, off + size) to the free blocks, merged with its neighbours. */
static void release(GArray *free_blocks, int64_t off, int64_t size)
{
  guint i = 0;
  while (i < free_blocks->len && g_array_index(free_blocks, block, i).off < off)
    i++;
  block b = { off, size };
  g_array_insert_val(free_blocks, i, b);
  if (i + 1 < free_blocks->len) {
    block *at = &g_array_index(free_blocks, block, i), *next = at + 1;
    if (at->off + at->size == next->off) {
      at->size += next->size;
      g_array_remove_index(free_blocks, i + 1);
    }
  }
  if (i > 0) {
    block *prev = &g_array_index(free_blocks, block, i - 1), *at = prev + 1;
    if (prev->off + prev->size == at->off) {
      prev->size += at->size;
      g_array_remove_index(free_blocks, i);
    }
  }
}

/* A plan for values of these sizes (-1: unknown, not planned). */
static mem_plan *plan_make(const ts_planner *p, const int64_t *sizes)
{
  int nv = MAX(p->n_values, 1);
  mem_plan *m = g_new0(mem_plan, 1);
  m->offset = g_new(int64_t, nv);
  m->bytes = g_new(int64_t, nv);
  m->inherited = g_new0(bool, nv);
  GArray *free_blocks = g_array_new(FALSE, FALSE, sizeof(block));
  int64_t top = 0;
  for (int v = 0; v < p->n_values; v++) {
    m->offset[v] = -1;
    m->bytes[v] = p->plannable[v] ? sizes[v] : -1;
  }
  for (int s = 0; s < p->n_steps; s++) {
    for (int v = p->step_first[s]; v < p->step_first[s] + p->step_n[s]; v++) {
      if (m->bytes[v] <= 0)
        continue;
      int64_t size = (m->bytes[v] + ALIGN - 1) / ALIGN * ALIGN;
      int src = p->inplace_src[v];
      if (src >= 0 && m->offset[src] >= 0 && m->bytes[src] == m->bytes[v] && !m->inherited[src]) {
        m->offset[v] = m->offset[src];
        m->inherited[src] = true;
        m->stats.n_inplace++;
      } else {
        m->offset[v] = place(free_blocks, &top, size);
      }
      m->stats.n_buffers++;
      m->stats.unshared_bytes += size;
    }
    for (int r = p->rel_start[s]; r < p->rel_start[s + 1]; r++) {
      int v = p->rel_values[r];
      if (m->offset[v] >= 0 && !m->inherited[v])
        release(free_blocks, m->offset[v], (m->bytes[v] + ALIGN - 1) / ALIGN * ALIGN);
    }
  }
  g_array_free(free_blocks, TRUE);
  m->stats.peak_bytes = top;
  return m;
}

static void plan_free(mem_plan *m)
{
  g_free(m->offset);
  g_free(m->bytes);
  g_free(m->inherited);
  g_free(m);
}

bool ts__planner_plan_static(ts_planner *p)
{
  for (int v = 0; v < p->n_values; v++)
    if (p->plannable[v] && p->static_bytes[v] < 0)
      return false; /* unknown dims: the first call's sizes decide */
  p->plan = plan_make(p, p->static_bytes);
  p->plan->users = 1;
  p->plan->stats.n_plans = ++p->n_plans;
  return true;
}

bool ts__planner_stats(ts_planner *p, ts_memory_plan *out)
{
  pthread_mutex_lock(&p->lock);
  bool ok = p->plan != NULL;
  if (ok)
    *out = p->plan->stats;
  pthread_mutex_unlock(&p->lock);
  return ok;
}

/* ---- arenas ---------------------------------------------------------------------- */

static ts_tensor *header_new(void)
{
  ts_tensor *t = calloc(1, sizeof *t);
  g_assert(t); /* a few dozen bytes, once per value and arena */
  t->refcount = 1;
  return t;
}

/* Drops one use of m (lock held); frees it after its last. */
static void plan_unuse(mem_plan *m)
{
  if (m && --m->users == 0)
    plan_free(m);
}

static void arena_free(ts_arena *a)
{
  ts_planner *p = a->owner;
  const ts_backend *b = a->backend;
  if (a->plan) {
    for (int v = 0; v < p->n_values; v++)
      ts_tensor_unref(a->hdr[v]);
    if (a->buffer) {
      ts__memory_count(b, TS_MEMORY_ARENA, -a->plan->stats.peak_bytes, (ts_loc){ 0 });
      ts_buffer_free(a->buffer);
    }
  }
  g_free(a->hdr);
  g_free(a->seen);
  g_free(a->values);
  for (int i = 0; i < p->slots; i++)
    ts__scope_free(a->scopes[i]);
  g_free(a->scopes);
  g_free(a->steps);
  g_free(a);
}

static ts_tensor *planned_take(ts_planned *p, int i, const ts_backend *b, const ts_info *info);
static ts_tensor *planned_view(ts_planned *p);

/* A new arena on m (NULL: one that records sizes only) in b's memory;
 * NULL + error. */
static ts_arena *arena_new(ts_planner *p, mem_plan *m, const ts_backend *b)
{
  int nv = MAX(p->n_values, 1);
  ts_arena *a = g_new0(ts_arena, 1);
  a->owner = p;
  a->plan = m;
  a->backend = b;
  a->seen = g_new(int64_t, nv);
  a->values = g_new0(ts_tensor *, nv);
  a->hdr = g_new0(ts_tensor *, nv);
  a->scopes = g_new(ts_scope *, p->slots);
  a->steps = g_new(planned_step, p->slots);
  for (int i = 0; i < p->slots; i++) {
    a->scopes[i] = ts__scope_new();
    a->steps[i] = (planned_step){ { planned_take, planned_view }, a, 0, 0 };
  }
  if (!m)
    return a;
  for (int v = 0; v < p->n_values; v++)
    if (m->offset[v] >= 0 || p->view[v])
      a->hdr[v] = header_new();
  if (m->stats.peak_bytes) {
    bool erred = ts_failed();
    a->buffer = ts_buffer_alloc(&b->buffer_type, (size_t)m->stats.peak_bytes,
                                TS_BUFFER_USAGE_ARENA);
    if (!a->buffer) {
      a->plan = NULL;
      for (int v = 0; v < p->n_values; v++)
        ts_tensor_unref(a->hdr[v]);
      arena_free(a);
      ts_error *why = erred ? NULL : ts_error_take();
      ts_error_set(TS_ERR_NO_MEMORY, (ts_loc){ 0 }, NULL,
                   "cannot allocate a %" G_GINT64_FORMAT "-byte memory plan arena on %s: %s",
                   m->stats.peak_bytes, ts_backend_name(b),
                   why && why->detail ? why->detail : "out of memory");
      ts_error_free(why);
      return NULL;
    }
    ts__memory_count(b, TS_MEMORY_ARENA, m->stats.peak_bytes, (ts_loc){ 0 });
  }
  return a;
}

ts_arena *ts__planner_take(ts_planner *p)
{
  /* The arena lives where the run places its steps (the thread's device). */
  const ts_context *c = ts__context();
  const ts_backend *b = c->device ? c->device : c->cpu;
  pthread_mutex_lock(&p->lock);
  ts_arena **link = &p->pool;
  while (*link && (*link)->backend != b)
    link = &(*link)->next;
  ts_arena *a = *link;
  mem_plan *m = p->plan;
  if (a)
    *link = a->next;
  else if (m)
    m->users++;
  pthread_mutex_unlock(&p->lock);
  if (!a && !(a = arena_new(p, m, b))) {
    pthread_mutex_lock(&p->lock);
    plan_unuse(m);
    pthread_mutex_unlock(&p->lock);
    return NULL;
  }
  a->next = NULL;
  a->mismatch = false;
  a->part = false;
  for (int v = 0; v < p->n_values; v++)
    a->seen[v] = -1;
  return a;
}

void ts__planner_give(ts_planner *p, ts_arena *a, bool ok)
{
  bool sized = ok && (!a->plan || a->mismatch);
  for (int v = 0; v < p->n_values && sized; v++)
    sized = !p->plannable[v] || a->seen[v] >= 0;
  mem_plan *fresh = sized ? plan_make(p, a->seen) : NULL;
  ts_arena *stale = NULL;
  pthread_mutex_lock(&p->lock);
  if (fresh) {
    fresh->users = 1;
    fresh->stats.n_plans = ++p->n_plans;
    plan_unuse(p->plan);
    p->plan = fresh;
    stale = p->pool; /* arenas of the old plan */
    p->pool = NULL;
  }
  if (a->plan && a->plan == p->plan) {
    a->next = p->pool;
    p->pool = a;
    a = NULL;
  }
  pthread_mutex_unlock(&p->lock);
  for (ts_arena *next; stale; stale = next) {
    next = stale->next;
    stale->next = a;
    a = stale;
  }
  while (a) {
    ts_arena *next = a->next;
    mem_plan *m = a->plan;
    arena_free(a);
    pthread_mutex_lock(&p->lock);
    plan_unuse(m);
    pthread_mutex_unlock(&p->lock);
    a = next;
  }
}

void ts__planner_free(ts_planner *p)
{
  if (!p)
    return;
  while (p->pool) {
    ts_arena *a = p->pool;
    p->pool = a->next;
    mem_plan *m = a->plan;
    arena_free(a);
    plan_unuse(m);
  }
  plan_unuse(p->plan);
  g_free(p->plannable);
  g_free(p->view);
  g_free(p->inplace_src);
  g_free(p->static_bytes);
  pthread_mutex_destroy(&p->lock);
  g_free(p);
}

ts_tensor **ts__arena_values(ts_arena *a)
{
  return a->values;
}

ts_scope *ts__arena_scope(ts_arena *a, int slot)
{
  return a->scopes[slot];
}

void ts__arena_set_part(ts_arena *a)
{
  a->part = true;
}

ts_planned *ts__arena_step(ts_arena *a, int slot, int first_value, int n)
{
  if (!a->plan)
    return NULL;
  a->steps[slot].first = first_value;
  a->steps[slot].n = n;
  return &a->steps[slot].iface;
}

/* ---- a run ------------------------------------------------------------------------- */

static bool in_arena(const ts_arena *a, const ts_tensor *t)
{
  return a->plan && a->buffer && t->buffer == a->buffer;
}

/* t (value v) is held by someone besides the run: if its data is in the
 * arena it gets a buffer of its own, and if it is the arena's header for v
 * the arena makes itself another. */
static void detach(ts_arena *a, int v, ts_tensor *t)
{
  if (in_arena(a, t) && !ts__tensor_own_copy(t)) {
    /* What they hold would be overwritten: keep this arena's memory alive instead. */
    g_warning("memory planner: out of memory copying a tensor still referenced; "
              "leaking its arena");
    a->plan = NULL;
    a->buffer = NULL;
    return;
  }
  if (a->hdr[v] == t) {
    a->hdr[v] = header_new();
    ts_tensor_unref(t); /* the arena's reference */
  }
}

/* May output v be written over its in-place input now?  Not while anyone
 * else holds the input, nor while listeners or an observer see the op's
 * inputs (the debugger keeps them): the output then takes a heap buffer. */
static bool inplace_ok(ts_arena *a, int v)
{
  int src = a->owner->inplace_src[v];
  ts_tensor *t = a->values[src];
  if (!t || t != a->hdr[src])
    return true; /* not in its buffer: nothing there to keep */
  int ops = TS_EVENT_MASK(TS_EVENT_OP_BEGIN) | TS_EVENT_MASK(TS_EVENT_OP_END);
  ts_context *c = ts__context();
  if (!c->mute && ((__atomic_load_n(&ts__listener_mask, __ATOMIC_RELAXED) & ops) || c->observer))
    return false;
  /* the arena's reference and the run's */
  return __atomic_load_n(&t->refcount, __ATOMIC_ACQUIRE) <= 2;
}

static ts_tensor *planned_view(ts_planned *p)
{
  planned_step *ps = (planned_step *)p;
  ts_arena *a = ps->arena;
  int v = ps->first;
  if (!a->plan || ps->n != 1 || !a->owner->view[v])
    return NULL;
  if (__atomic_load_n(&a->hdr[v]->refcount, __ATOMIC_ACQUIRE) != 1)
    detach(a, v, a->hdr[v]);
  return a->plan ? a->hdr[v] : NULL;
}

static ts_tensor *planned_take(ts_planned *p, int i, const ts_backend *b, const ts_info *info)
{
  planned_step *ps = (planned_step *)p;
  ts_arena *a = ps->arena;
  const mem_plan *m = a->plan;
  int v = ps->first + i;
  if (!m || i >= ps->n || m->offset[v] < 0 || b != a->backend)
    return NULL;
  int64_t bytes = info_bytes(info);
  if (a->part ? bytes < 0 || bytes > m->bytes[v] : bytes != m->bytes[v]) {
    if (!a->part) /* a part's sizes are no reason to plan again */
      __atomic_store_n(&a->mismatch, true, __ATOMIC_RELAXED); /* steps of a group at once */
    return NULL;
  }
  /* a type that pads its tensors past the plan's slot: a buffer of their own */
  const ts_buffer_type *bt = &b->buffer_type;
  if (bt->iface->get_alloc_size &&
      bt->iface->get_alloc_size(bt, info->dtype, info->shape, (size_t)bytes) >
        (size_t)(bytes + ALIGN - 1) / ALIGN * ALIGN)
    return NULL;
  int src = a->owner->inplace_src[v];
  if (src >= 0 && m->inherited[src] && m->offset[v] == m->offset[src] && !inplace_ok(a, v))
    return NULL;
  ts_tensor *t = a->hdr[v];
  if (__atomic_load_n(&t->refcount, __ATOMIC_ACQUIRE) != 1)
    detach(a, v, t), t = a->hdr[v];
  if (!a->plan)
    return NULL;
  t->dtype = info->dtype;
  t->shape = info->shape;
  t->size = bytes / (int64_t)ts_dtype_size(info->dtype);
  t->buffer = a->buffer; /* NULL where the plan's values are all empty */
  t->data = a->buffer ? a->buffer->base + m->offset[v] : NULL;
  t->backend = b;
  ts_tensor_ref(t);
  ts__scope_adopt(t);
  return t;
}

void ts__arena_release(ts_arena *a, int v, ts_tensor *t)
{
  if (!t)
    return;
  if (a->owner->plannable[v])
    a->seen[v] = t->size * (int64_t)ts_dtype_size(t->dtype);
  const mem_plan *m = a->plan;
  bool own = m && t == a->hdr[v]; /* the arena's header: it holds a reference too */
  if (m && (own || in_arena(a, t))) {
    bool in_slot = m->offset[v] >= 0 && a->buffer && t->data == a->buffer->base + m->offset[v];
    if (__atomic_load_n(&t->refcount, __ATOMIC_ACQUIRE) > (own ? 2 : 1))
      detach(a, v, t);
    if (in_slot && a->plan && !m->inherited[v] && __atomic_load_n(&poison, __ATOMIC_RELAXED))
      ts_buffer_memset(a->buffer, (size_t)m->offset[v], POISON, (size_t)m->bytes[v]);
    if (t == a->hdr[v]) {
      /* back to the arena's reference alone; a view lets go of what it viewed */
      ts_tensor_unref(t);
      g_clear_pointer(&t->base, ts_tensor_unref);
      t->data = NULL;
      t->buffer = NULL;
      return;
    }
  }
  ts_tensor_unref(t);
}

/* "512 bytes", "1.2 kB", "3.4 MB" (powers of 1000, as g_format_size but
 * with a plain space: the CLI's lines are read by scripts). */
static void append_size(GString *s, int64_t bytes)
{
  static const char *const units[] = { "kB", "MB", "GB", "TB" };
  if (bytes < 1000) {
    g_string_append_printf(s, "%" G_GINT64_FORMAT " byte%s", bytes, bytes == 1 ? "" : "s");
    return;
  }
  double v = (double)bytes / 1000;
  int u = 0;
  while (v >= 1000 && u + 1 < (int)G_N_ELEMENTS(units))
    v /= 1000, u++;
  g_string_append_printf(s, "%.1f %s", v, units[u]);
}

char *ts_memory_plan_describe(const ts_memory_plan *plan)
{
  TS_CHECK_ARG(plan != NULL, NULL);
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "plan: %d buffer%s", plan->n_buffers, plan->n_buffers == 1 ? "" : "s");
  if (plan->n_inplace)
    g_string_append_printf(s, " (%d in place)", plan->n_inplace);
  g_string_append(s, ", peak ");
  append_size(s, plan->peak_bytes);
  g_string_append(s, ", ");
  append_size(s, plan->unshared_bytes - plan->peak_bytes);
  g_string_append(s, " saved by reuse");
  char *owned = strdup(s->str);
  g_string_free(s, TRUE);
  return owned;
}
