/* scope.c — per-thread arenas that own every tensor an op returns.
 *
 * Each thread has a root scope (made on first use, released at thread exit)
 * and a stack of scopes above it.  A scope is a growable array of owned
 * references; ending it drops them. */
#include "engine-private.h"

#include <stdlib.h>

struct ts_scope {
  ts_scope *parent;
  ts_tensor **items;
  int n, cap;
};

static void scope_clear(ts_scope *s)
{
  for (int i = 0; i < s->n; i++)
    ts_tensor_unref(s->items[i]);
  s->n = 0;
}

static void scope_free(ts_scope *s)
{
  scope_clear(s);
  free(s->items);
  free(s);
}

void ts__scope_adopt(ts_tensor *t)
{
  ts_scope *s = ts__context()->top;
  if (G_UNLIKELY(s->n == s->cap)) {
    int cap = s->cap ? s->cap * 2 : 64;
    ts_tensor **items = realloc(s->items, (size_t)cap * sizeof *items);
    g_assert(items); /* a scope cannot fail to own what it was given */
    s->items = items;
    s->cap = cap;
  }
  s->items[s->n++] = t;
}

ts_scope *ts_scope_begin(void)
{
  ts_context *c = ts__context();
  ts_scope *s = calloc(1, sizeof *s);
  g_assert(s);
  s->parent = c->top;
  c->top = s;
  return s;
}

void ts_scope_end(ts_scope *scope)
{
  ts_context *c = ts__context();
  g_return_if_fail(scope && scope != c->root);
  bool found = false;
  for (ts_scope *s = c->top; s != c->root; s = s->parent)
    if (s == scope)
      found = true;
  g_return_if_fail(found);
  /* Ends inner scopes a caller forgot, then this one. */
  while (c->top != scope) {
    ts_scope *inner = c->top;
    c->top = inner->parent;
    scope_free(inner);
  }
  c->top = scope->parent;
  scope_free(scope);
}

ts_tensor *ts_scope_end_keep(ts_scope *scope, ts_tensor *keep)
{
  ts_tensor_ref(keep);
  ts_scope_end(scope);
  if (keep)
    ts__scope_adopt(keep);
  return keep;
}

ts_scope *ts__scope_new(void)
{
  ts_scope *s = calloc(1, sizeof *s);
  g_assert(s);
  return s;
}

void ts__scope_free(ts_scope *s)
{
  if (s)
    scope_free(s);
}

void ts__scope_enter(ts_scope *s)
{
  ts_context *c = ts__context();
  s->parent = c->top;
  c->top = s;
}

void ts__scope_leave(ts_scope *s)
{
  ts__scope_leave_keep(s);
  scope_clear(s);
}

void ts__scope_leave_keep(ts_scope *s)
{
  ts_context *c = ts__context();
  g_return_if_fail(c->top == s);
  c->top = s->parent;
}

void ts__scope_clear(ts_scope *s)
{
  scope_clear(s);
}

ts_scope *ts__scope_parent(const ts_scope *s)
{
  return s->parent;
}

void ts__scope_hand_over(ts_scope *s)
{
  for (int i = 0; i < s->n; i++)
    ts__scope_adopt(s->items[i]);
  s->n = 0;
  scope_free(s);
}

int ts_scope_n_tensors(void)
{
  return ts__context()->top->n;
}

void ts_release_all(void)
{
  ts_context *c = ts__context();
  while (c->top != c->root) {
    ts_scope *inner = c->top;
    c->top = inner->parent;
    scope_free(inner);
  }
  scope_clear(c->root);
}

void ts__scope_mark_carried(ts_scope *s, ts_loc loop, const char *kind, ts_tensor *const *keep,
                            int n_keep)
{
  for (int i = 0; i < s->n; i++) {
    ts_tensor *t = s->items[i];
    /* A graph's constant (made while a function was traced in the
     * iteration) is the function's, not the iteration's: a call of it
     * may give it back as a result in any later iteration. */
    bool kept = __atomic_load_n(&t->constant, __ATOMIC_RELAXED);
    for (int k = 0; k < n_keep && !kept; k++)
      kept = keep[k] == t;
    if (!kept) {
      t->carried_loop = loop;
      t->carried_kind = kind;
    }
  }
}
