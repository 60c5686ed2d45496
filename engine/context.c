/* context.c — the calling thread's engine state in one place: scopes, the
 * pending error, the cancel flag, listener muting, the op-handler stack,
 * the device scope, and the run state that gives ops their identity. */
#include "engine-private.h"

#include <stdlib.h>
#include <unistd.h>

static _Thread_local ts_context context;
_Thread_local ts_context *ts__context_here __attribute__((tls_model("initial-exec")));

static void context_release(ts_context *c)
{
  c->plan_recording = false;
  ts__kept_settle(c, false);
  g_clear_pointer(&c->kept_pending, g_ptr_array_unref);
  ts_release_all();
  ts__scope_free(c->root);
  ts_error_free(c->error);
  for (int i = 0; i < TS_MAX_PATH; i++)
    g_clear_pointer(&c->run.path[i].counts, g_hash_table_unref);
  g_slist_free(c->device_stack);
  *c = (ts_context){ 0 };
  ts__context_here = NULL; /* on its own thread: the next lookup sets it up again */
}

/* The context outlives user code and is released with its thread: by a
 * GPrivate destructor on other threads, at exit on the main thread (which
 * never "exits" for GPrivate). */
static void thread_release(void *data)
{
  context_release(data);
}

static GPrivate context_key = G_PRIVATE_INIT(thread_release);

static void main_release(void)
{
  context_release(&context);
}

ts_context *ts__context_first(void)
{
  if (!context.root) {
    context.root = ts__scope_new();
    context.top = context.root;
    context.cpu = ts_backend_cpu();
    if (gettid() == getpid())
      atexit(main_release);
    else
      g_private_set(&context_key, &context);
  }
  return ts__context_here = &context;
}

/* ---- cancellation ------------------------------------------------------------------ */

void ts_watch_ops(ts_op_watch *w)
{
  ts__context()->op_watch = w;
}

void ts_watch_cancel_flag(const int *flag)
{
  ts__context()->cancel_flag = flag;
}

/* ---- devices ----------------------------------------------------------------------- */

void ts_device_scope_begin(const ts_backend *b)
{
  ts_context *c = ts__context();
  c->device_stack = g_slist_prepend(c->device_stack, (gpointer)c->device);
  c->device = b;
}

void ts_device_scope_end(void)
{
  ts_context *c = ts__context();
  if (!c->device_stack) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "ts_device_scope_end without a matching ts_device_scope_begin");
    return;
  }
  c->device = c->device_stack->data;
  c->device_stack = g_slist_delete_link(c->device_stack, c->device_stack);
}

const ts_backend *ts_current_device(void)
{
  const ts_backend *b = ts__context()->device;
  return b ? b : ts_backend_cpu();
}

/* ---- op identity: paths and sites -------------------------------------------------- */

/* FNV-1a over the bytes of s, continuing from h. */
static uint64_t hash_str(uint64_t h, const char *s)
{
  for (; s && *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

static uint64_t hash_int(uint64_t h, int64_t v)
{
  for (int i = 0; i < 8; i++, v >>= 8)
    h = (h ^ (uint64_t)(v & 0xff)) * 1099511628211u;
  return h;
}

/* The file's base name: the same source seen through two paths still matches. */
static const char *base_name(const char *file)
{
  const char *slash = file ? strrchr(file, '/') : NULL;
  return slash ? slash + 1 : file;
}

static uint64_t hash_loc(uint64_t h, ts_loc loc)
{
  return hash_int(hash_str(hash_str(h, base_name(loc.file)), loc.func), loc.line);
}

#define PATH_ROOT 14695981039346656037u

int ts__path_rebase(void)
{
  ts_run_state *r = &ts__context()->run;
  int base = r->base;
  r->base = r->depth;
  return base;
}

void ts__path_restore(int base)
{
  ts__context()->run.base = base;
}

void ts__path_push(ts_loc loc, const char *what)
{
  ts_run_state *r = &ts__context()->run;
  uint64_t h = r->depth > r->base && r->depth <= TS_MAX_PATH ? r->path[r->depth - 1].hash
                                                              : PATH_ROOT;
  if (r->depth < TS_MAX_PATH) {
    ts_path_entry *e = &r->path[r->depth];
    e->hash = hash_str(hash_loc(h, loc), what);
    e->loc = loc;
    e->what = what;
    if (e->counts)
      g_hash_table_remove_all(e->counts);
  }
  r->depth++; /* counted beyond the limit so pops stay balanced */
}

int ts__path_depth(void)
{
  return ts__context()->run.depth;
}

void ts__path_truncate(int depth)
{
  ts_run_state *r = &ts__context()->run;
  if (depth >= 0 && depth < r->depth)
    r->depth = depth;
}

void ts__implicit(int delta)
{
  ts__context()->run.implicit += delta;
}

bool ts__site_next(ts_loc loc, uint64_t *site, int *occurrence)
{
  ts_run_state *r = &ts__context()->run;
  if (r->implicit > 0 || r->depth <= r->base || r->depth > TS_MAX_PATH || !loc.file)
    return false;
  ts_path_entry *e = &r->path[r->depth - 1];
  *site = hash_loc(e->hash, loc);
  if (!e->counts)
    e->counts = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  gpointer value;
  int n = g_hash_table_lookup_extended(e->counts, site, NULL, &value) ? GPOINTER_TO_INT(value) : 0;
  g_hash_table_replace(e->counts, g_memdup2(site, sizeof *site), GINT_TO_POINTER(n + 1));
  *occurrence = n;
  return true;
}

const ts_path_entry *ts__path_entries(int *n)
{
  ts_run_state *r = &ts__context()->run;
  int top = MIN(r->depth, TS_MAX_PATH);
  *n = MAX(top - r->base, 0);
  return r->path + MIN(r->base, TS_MAX_PATH);
}

bool ts__site_below(const ts_path_step *steps, int n, ts_loc loc, uint64_t *site)
{
  ts_run_state *r = &ts__context()->run;
  int depth = r->depth + n;
  if (r->implicit > 0 || depth <= r->base || depth > TS_MAX_PATH || !loc.file)
    return false;
  uint64_t h = r->depth > r->base ? r->path[r->depth - 1].hash : PATH_ROOT;
  for (int i = 0; i < n; i++) /* as ts__path_push enters each */
    h = hash_str(hash_loc(h, steps[i].loc), steps[i].what);
  *site = hash_loc(h, loc);
  return true;
}

/* ---- twin maps ----------------------------------------------------------------------- */

static uint64_t twin_key(uint64_t site, int occurrence)
{
  return site ^ ((uint64_t)occurrence + 1) * 0x9E3779B97F4A7C15u;
}

GHashTable *ts__twin_map_new(void)
{
  return g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
}

void ts__twin_add(GHashTable *map, uint64_t site, int occurrence, const struct ts_node *node)
{
  uint64_t key = twin_key(site, occurrence);
  g_hash_table_replace(map, g_memdup2(&key, sizeof key), (gpointer)node);
}

const struct ts_node *ts__twin_lookup(const GHashTable *map, uint64_t site, int occurrence)
{
  uint64_t key = twin_key(site, occurrence);
  return g_hash_table_lookup((GHashTable *)map, &key);
}
