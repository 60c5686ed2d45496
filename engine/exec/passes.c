/* passes.c — the optimizer's pass list: which passes run (ts_set_passes,
 * TRACESCOPE_PASSES), in what order, and the one-line summary of each. */
#include "exec.h"

#include <stdio.h>
#include <stdlib.h>

static bool dce_might_change(const ts_graph *g);

static const struct pass_row {
  const char *name;
  ts_pass_fn run;
  ts_pass_might_fn might_change; /* NULL: run it always */
  const char *did;  /* "<name>: <did> N nodes" */
  const char *into; /* " into M <into>", or NULL */
} PASSES[TS_PASS_COUNT] = {
  [TS_PASS_LAYOUT] = { "layout", ts__pass_layout, ts__layout_might_change, "rewrote", NULL },
  [TS_PASS_FOLD] = { "fold", ts__pass_fold_constants, ts__fold_might_change, "folded", "constants" },
  [TS_PASS_CSE] = { "cse", ts__pass_cse, ts__cse_might_change, "removed", NULL },
  [TS_PASS_SIMPLIFY] = { "simplify", ts__pass_simplify, NULL, "simplified", NULL },
  [TS_PASS_DCE] = { "dce", ts__pass_dce, dce_might_change, "removed", NULL },
  [TS_PASS_FUSE] = { "fuse", ts__pass_fuse, NULL, "fused", "kernels" },
};

/* -1: not chosen yet (TRACESCOPE_PASSES is read on first use). */
static int chosen = -1;

bool ts__passes_parse(const char *list, unsigned *mask)
{
  if (!list) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL, "no pass list");
    return false;
  }
  *mask = 0;
  if (strcmp(list, "all") == 0) {
    *mask = TS_PASSES_ALL;
    return true;
  }
  if (strcmp(list, "none") == 0 || !*list)
    return true;
  char **names = g_strsplit(list, ",", -1);
  bool ok = true;
  for (int i = 0; names[i] && ok; i++) {
    const char *name = g_strstrip(names[i]);
    int found = -1;
    for (int p = 0; p < TS_PASS_COUNT && found < 0; p++)
      if (strcmp(PASSES[p].name, name) == 0)
        found = p;
    if (found < 0) {
      ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                   "unknown pass '%s' in \"%s\" (passes: all, none or a list of layout, fold, "
                   "cse, simplify, dce, fuse)", name, list);
      ok = false;
    }
    *mask |= found >= 0 ? 1u << found : 0;
  }
  g_strfreev(names);
  return ok;
}

unsigned ts__passes_current(void)
{
  int mask = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
  if (mask >= 0)
    return (unsigned)mask;
  const char *env = getenv("TRACESCOPE_PASSES");
  unsigned from_env = TS_PASSES_ALL;
  if (env && !ts__passes_parse(env, &from_env)) {
    ts_error *e = ts_error_take();
    fprintf(stderr, "tracescope: TRACESCOPE_PASSES: %s; running all passes\n", e->message);
    ts_error_free(e);
    from_env = TS_PASSES_ALL;
  }
  int expected = -1;
  __atomic_compare_exchange_n(&chosen, &expected, (int)from_env, false, __ATOMIC_ACQ_REL,
                              __ATOMIC_ACQUIRE);
  return (unsigned)__atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
}

bool ts_set_passes(const char *list)
{
  unsigned mask;
  if (!ts__passes_parse(list, &mask))
    return false;
  __atomic_store_n(&chosen, (int)mask, __ATOMIC_RELEASE);
  return true;
}

char *ts_get_passes(void)
{
  unsigned mask = ts__passes_current();
  if (mask == 0)
    return strdup("none");
  GString *s = g_string_new(NULL);
  for (int p = 0; p < TS_PASS_COUNT; p++)
    if (mask & (1u << p))
      g_string_append_printf(s, "%s%s", s->len ? "," : "", PASSES[p].name);
  char *out = strdup(s->str);
  g_string_free(s, TRUE);
  return out;
}

typedef struct pass_sub {
  ts_pass_fn pass;
  ts_pass_stats *stats;
} pass_sub;

static ts_graph *run_sub(const ts_graph *sub, ts_graph *parent, void *data)
{
  pass_sub *ps = data;
  return ps->pass(sub, parent, ps->stats);
}

ts_node *ts__pass_copy(ts_rewrite *rw, const ts_node *n, ts_pass_fn pass, ts_pass_stats *stats)
{
  pass_sub ps = { pass, stats };
  return ts__rewrite_copy(rw, n, run_sub, &ps);
}

int *ts__single_users(const ts_graph *g)
{
  int n = (int)g->nodes->len;
  int *user = g_new(int, n ? n : 1);
  for (int id = 0; id < n; id++)
    user[id] = -1;
  for (int id = 0; id < n; id++) {
    const ts_node *node = ts__graph_node(g, id);
    for (int i = 0; i < node->n_inputs; i++) {
      int *u = &user[node->inputs[i].node];
      *u = *u == -1 || *u == id ? id : -2;
    }
    for (int i = 0; i < node->n_control; i++)
      user[node->control[i]] = -2;
  }
  for (guint i = 0; i < g->outputs->len; i++)
    user[g_array_index(g->outputs, ts_port, i).node] = -2;
  return user;
}

bool ts__shape_known(ts_shape s)
{
  if (s.rank < 0)
    return false;
  for (int d = 0; d < s.rank; d++)
    if (s.dim[d] < 0)
      return false;
  return true;
}

int ts__graph_count_nodes(const ts_graph *g)
{
  int count = (int)g->nodes->len;
  for (guint id = 0; id < g->nodes->len; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    for (int s = 0; s < n->n_subgraphs; s++)
      count += ts__graph_count_nodes(n->subgraphs[s]);
  }
  return count;
}

const ts_tensor *ts__rewrite_const(const ts_rewrite *rw, ts_port src_port)
{
  ts_port p = ts__rewrite_port(rw, src_port);
  if (p.node < 0)
    return NULL;
  const ts_node *n = ts__graph_node(ts__rewrite_graph(rw), p.node);
  return n->op == TS_OP_CONST ? n->value : NULL;
}

/* Does g or a subgraph hold a node nothing needs? */
static bool all_needed_deep(const ts_graph *g)
{
  if (!ts__graph_all_needed(g))
    return false;
  for (guint id = 0; id < g->nodes->len; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    for (int s = 0; s < n->n_subgraphs; s++)
      if (!all_needed_deep(n->subgraphs[s]))
        return false;
  }
  return true;
}

static bool dce_might_change(const ts_graph *g)
{
  return !all_needed_deep(g);
}

ts_graph *ts__passes_run(const ts_graph *g, unsigned mask, char **summary)
{
  GString *text = g_string_new(NULL);
  ts_graph *cur = NULL;
  bool changed = false;
  ts__phase optimize;
  ts__phase_begin(&optimize, TS_PHASE_OPTIMIZE, "optimize");
  for (int p = 0; p < TS_PASS_COUNT; p++) {
    if (!(mask & (1u << p)))
      continue;
    const struct pass_row *row = &PASSES[p];
    ts_pass_stats stats = { 0 };
    size_t line = text->len;
    bool runs = !row->might_change || row->might_change(cur ? cur : g);
    ts__phase pass;
    if (runs) {
      ts__phase_begin(&pass, TS_PHASE_PASS, row->name);
      ts_graph *next = row->run(cur ? cur : g, NULL, &stats);
      ts__graph_free(cur);
      cur = next;
      changed |= stats.count > 0;
    }
    g_string_append_printf(text, "%s: %s %d node%s", row->name, row->did, stats.count,
                           stats.count == 1 ? "" : "s");
    if (row->into)
      g_string_append_printf(text, " into %d %s", stats.into, row->into);
    if (runs)
      ts__phase_end(&pass, text->str + line + strlen(row->name) + 2); /* "fused 3 nodes ..." */
    g_string_append_c(text, '\n');
  }
  /* Unused nodes never run, passes or not (tf.function prunes them too). */
  if (!all_needed_deep(cur ? cur : g)) {
    ts_graph *pruned = ts__graph_copy(cur ? cur : g, NULL);
    ts__graph_free(cur);
    cur = pruned;
    changed = true;
  }
  if (!changed)
    g_clear_pointer(&cur, ts__graph_free);
  ts__phase_end(&optimize, NULL);
  if (summary)
    *summary = strdup(text->str);
  g_string_free(text, TRUE);
  return cur;
}

ts_graph *ts_graph_optimize(const ts_graph *g, const char *passes, char **summary)
{
  if (summary)
    *summary = NULL;
  TS_CHECK_ARG(g != NULL, NULL);
  unsigned mask = ts__passes_current();
  if (passes && !ts__passes_parse(passes, &mask))
    return NULL;
  ts_graph *out = ts__passes_run(g, mask, summary);
  return out ? out : ts__graph_copy(g, NULL);
}
