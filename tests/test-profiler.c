/* test-profiler.c — the profiler (profiler/): statistics on synthetic
 * event streams with known answers (self time, percentiles, charge-back
 * through provenance, calls), eager ops meeting their graph nodes on the
 * seed programs, Chrome trace export -> import giving the same session,
 * hostile trace files giving errors, and `tracescope-cli profile`. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <tracescope-profiler.h>
#include <unistd.h>
#include <tracescope.h>

#include "test-quiet.h"
#include "profiler-private.h" /* the chunks a thread's events are in */

static void test_event_size(void)
{
  g_assert_cmpuint(sizeof(tsp_event), ==, 48);
}

static void test_percentile(void)
{
  double v[100];
  for (int i = 0; i < 100; i++)
    v[i] = i + 1;
  g_assert_cmpfloat(tsp_percentile(v, 100, 50), ==, 50);
  g_assert_cmpfloat(tsp_percentile(v, 100, 95), ==, 95);
  g_assert_cmpfloat(tsp_percentile(v, 100, 100), ==, 100);
  g_assert_cmpfloat(tsp_percentile(v, 100, 0), ==, 1);
  g_assert_cmpfloat(tsp_percentile(v, 1, 95), ==, 1);
  g_assert_cmpfloat(tsp_percentile(v, 0, 50), ==, 0);
}

/* ---- a synthetic session ---------------------------------------------------------------
 * Traced nodes A (MatMul, scope dense, f.c:10), B (Add, dense, f.c:11),
 * W (While, top, f.c:20); optimized nodes F (fused A+B), Wg (stands for W),
 * Ag (stands for A).  Run 1 (graph): F 0-100; Wg 100-400 with Ag 150-200
 * and Ag 200-300 inside.  Run 2 (eager): A's twin 500-530, and a Relu with
 * no twin at f.c:30, 600-610. */
typedef struct synth {
  tsp_session *s;
  uint32_t a, b, w, f, wg, ag, l10, l11, l20, l30;
} synth;

static uint32_t node(tsp_session *s, const char *name, const char *scope, int op, uint32_t loc,
                     const uint32_t *origins, int n_origins)
{
  tsp_node_info info = { .name = name, .scope = scope, .op = op, .loc = loc,
                         .optimized = n_origins > 0, .has_eager_twin = op != TS_OP_WHILE,
                         .n_origins = n_origins, .origins = (uint32_t *)origins };
  return tsp_add_node(s, &info);
}

static void op(synth *x, int o, uint32_t n, uint32_t traced, uint32_t loc, uint64_t run,
               uint32_t seq, uint32_t parent, uint64_t start, uint64_t end)
{
  tsp_event e = { .start_ns = start, .end_ns = end, .run_id = run, .seq = seq,
                  .parent_seq = parent, .node = n, .traced = traced, .loc = loc,
                  .op = (uint16_t)o, .kind = TSP_EVENT_OP, .device = 1 };
  tsp_record(x->s, &e);
}

static synth synth_new(void)
{
  synth x = { .s = tsp_session_new_empty() };
  g_assert_cmpuint(tsp_intern_device(x.s, "CPU"), ==, 1);
  x.l10 = tsp_intern_loc(x.s, "/src/f.c", "f", 10);
  x.l11 = tsp_intern_loc(x.s, "/src/f.c", "f", 11);
  x.l20 = tsp_intern_loc(x.s, "/src/f.c", "f", 20);
  x.l30 = tsp_intern_loc(x.s, "/src/f.c", "f", 30);
  x.a = node(x.s, "dense/MatMul", "dense", TS_OP_MATMUL, x.l10, NULL, 0);
  x.b = node(x.s, "dense/Add", "dense", TS_OP_ADD, x.l11, NULL, 0);
  x.w = node(x.s, "while", "", TS_OP_WHILE, x.l20, NULL, 0);
  uint32_t ab[] = { x.a, x.b };
  x.f = node(x.s, "dense/fused", "dense", TS_OP_MATMUL, x.l10, ab, 2);
  x.wg = node(x.s, "while", "", TS_OP_WHILE, x.l20, &x.w, 1);
  x.ag = node(x.s, "dense/MatMul", "dense", TS_OP_MATMUL, x.l10, &x.a, 1);
  op(&x, TS_OP_MATMUL, x.f, 0, x.l10, 1, 1, 0, 0, 100);
  op(&x, TS_OP_MATMUL, x.ag, x.a, x.l10, 1, 3, 2, 150, 200);
  op(&x, TS_OP_MATMUL, x.ag, x.a, x.l10, 1, 4, 2, 200, 300);
  op(&x, TS_OP_WHILE, x.wg, x.w, x.l20, 1, 2, 0, 100, 400);
  op(&x, TS_OP_MATMUL, 0, x.a, x.l10, 2, 1, 0, 500, 530);
  op(&x, TS_OP_RELU, 0, 0, x.l30, 2, 2, 0, 600, 610);
  return x;
}

static const tsp_stat *find(const tsp_stats *st, const char *key)
{
  for (int i = 0; i < st->n; i++)
    if (strcmp(st->rows[i].key, key) == 0)
      return &st->rows[i];
  g_error("no row '%s'", key);
}

static void test_stats_by_op(void)
{
  synth x = synth_new();
  tsp_stats *st = tsp_stats_compute(x.s, TSP_BY_OP, &TSP_FILTER_ALL);
  g_assert_cmpint(st->n, ==, 3);
  g_assert_cmpuint(st->count, ==, 6);
  g_assert_cmpfloat(st->self_ns, ==, 100 + 150 + 50 + 100 + 30 + 10);
  const tsp_stat *mm = find(st, "MatMul");
  g_assert_cmpstr(st->rows[0].key, ==, "While"); /* largest total first */
  g_assert_cmpuint(mm->count, ==, 4);
  g_assert_cmpfloat(mm->total_ns, ==, 280);
  g_assert_cmpfloat(mm->self_ns, ==, 280);
  g_assert_cmpfloat(mm->min_ns, ==, 30);
  g_assert_cmpfloat(mm->max_ns, ==, 100);
  g_assert_cmpfloat(mm->p50_ns, ==, 50);  /* of 30 50 100 100 */
  g_assert_cmpfloat(mm->p95_ns, ==, 100);
  g_assert_cmpfloat(mm->mean_ns, ==, 70);
  g_assert_cmpuint(mm->modes, ==, TSP_MODE_ALL);
  g_assert_cmpstr(mm->device, ==, "CPU");
  g_assert_cmpfloat(st->wall_ns, ==, 610);
  g_assert_cmpfloat_with_epsilon(mm->share, 280.0 / 610, 1e-12); /* of the wall time */
  g_assert_cmpfloat(mm->self_p50_ns, ==, 50);
  g_assert_cmpfloat(mm->self_min_ns, ==, 30);
  const tsp_stat *w = find(st, "While");
  g_assert_cmpfloat(w->total_ns, ==, 300);
  g_assert_cmpfloat(w->self_ns, ==, 150); /* less the two MatMuls inside */
  g_assert_cmpuint(w->modes, ==, TSP_MODE_GRAPH);
  tsp_stats_free(st);

  tsp_filter eager = { TSP_MODE_EAGER, 0, 0 };
  st = tsp_stats_compute(x.s, TSP_BY_OP, &eager);
  g_assert_cmpint(st->n, ==, 2);
  g_assert_cmpfloat(st->self_ns, ==, 40);
  tsp_stats_free(st);
  tsp_filter window = { TSP_MODE_ALL, 100, 400 }; /* starts in [100, 400) */
  st = tsp_stats_compute(x.s, TSP_BY_OP, &window);
  g_assert_cmpuint(st->count, ==, 3);
  tsp_stats_free(st);
  tsp_session_free(x.s);
}

/* A node standing for one traced node counts as it; a fused node (F: A+B)
 * keeps its time, once, at its own line and scope. */
static void test_stats_charge_back(void)
{
  synth x = synth_new();
  tsp_stats *st = tsp_stats_compute(x.s, TSP_BY_NODE, &TSP_FILTER_ALL);
  g_assert_cmpint(st->n, ==, 4);
  const tsp_stat *a = find(st, "dense/MatMul");
  g_assert_cmpuint(a->node, ==, x.a);
  g_assert_cmpuint(a->count, ==, 3);          /* both Ag, the eager twin */
  g_assert_cmpfloat(a->total_ns, ==, 50 + 100 + 30);
  g_assert_cmpfloat(a->min_ns, ==, 30);
  const tsp_stat *f = find(st, "dense/fused");
  g_assert_cmpuint(f->node, ==, x.f);
  g_assert_cmpuint(f->count, ==, 1);
  g_assert_cmpfloat(f->total_ns, ==, 100);    /* all of it, on the fused node */
  g_assert_cmpint(tsp_session_node(x.s, f->node)->n_origins, ==, 2);
  const tsp_stat *w = find(st, "while");
  g_assert_cmpfloat(w->self_ns, ==, 150);
  const tsp_stat *relu = find(st, "Relu at f.c:30");
  g_assert_cmpuint(relu->node, ==, 0);
  g_assert_cmpfloat(relu->total_ns, ==, 10);
  tsp_stats_free(st);

  st = tsp_stats_compute(x.s, TSP_BY_SCOPE, &TSP_FILTER_ALL);
  g_assert_cmpint(st->n, ==, 2);
  g_assert_cmpfloat(find(st, "dense")->total_ns, ==, 280);
  g_assert_cmpfloat(find(st, "(top)")->total_ns, ==, 310);
  g_assert_cmpfloat(find(st, "(top)")->self_ns, ==, 160);
  tsp_stats_free(st);

  st = tsp_stats_compute(x.s, TSP_BY_LINE, &TSP_FILTER_ALL);
  g_assert_cmpint(st->n, ==, 3);
  g_assert_cmpfloat(find(st, "f.c:10")->total_ns, ==, 280);
  g_assert_cmpfloat(find(st, "f.c:20")->total_ns, ==, 300);
  g_assert_cmpfloat(find(st, "f.c:30")->total_ns, ==, 10);
  tsp_stats_free(st);
  tsp_session_free(x.s);
}

/* Self time by time containment, for spans that name no parent: another
 * tool's nesting, in a file's start order, on two threads. */
static void test_stats_nested(void)
{
  const char *json =
    "[{\"ph\":\"X\",\"name\":\"aten::step\",\"tid\":1,\"ts\":0,\"dur\":100},"
    "{\"ph\":\"X\",\"name\":\"aten::linear\",\"tid\":1,\"ts\":10,\"dur\":50},"
    "{\"ph\":\"X\",\"name\":\"aten::addmm\",\"tid\":1,\"ts\":20,\"dur\":30},"
    "{\"ph\":\"X\",\"name\":\"aten::addmm\",\"tid\":1,\"ts\":20,\"dur\":30},"  /* an equal span inside */
    "{\"ph\":\"X\",\"name\":\"aten::relu\",\"tid\":1,\"ts\":60,\"dur\":40},"   /* ends with step */
    "{\"ph\":\"X\",\"name\":\"aten::relu\",\"tid\":2,\"ts\":0,\"dur\":40},"    /* another thread */
    "{\"ph\":\"X\",\"name\":\"aten::step\",\"tid\":1,\"ts\":200,\"dur\":20}]";
  GError *error = NULL;
  tsp_session *s = tsp_chrome_import_data(json, strlen(json), &error);
  g_assert_no_error(error);
  tsp_stats *st = tsp_stats_compute(s, TSP_BY_OP, &TSP_FILTER_ALL);
  g_assert_cmpfloat(find(st, "aten::step")->total_ns, ==, 120000);
  g_assert_cmpfloat(find(st, "aten::step")->self_ns, ==, 10000 + 20000); /* less linear and relu */
  g_assert_cmpfloat(find(st, "aten::linear")->self_ns, ==, 20000);       /* less the outer addmm */
  g_assert_cmpfloat(find(st, "aten::addmm")->total_ns, ==, 60000);
  g_assert_cmpfloat(find(st, "aten::addmm")->self_ns, ==, 30000);        /* the outer one: 0 */
  g_assert_cmpfloat(find(st, "aten::relu")->self_ns, ==, 80000);
  /* the op time is the top-level spans' (two threads), the share of the wall time */
  g_assert_cmpfloat(st->self_ns, ==, 100000 + 20000 + 40000);
  g_assert_cmpfloat(st->wall_ns, ==, 220000);
  g_assert_cmpfloat_with_epsilon(find(st, "aten::step")->share, 30000.0 / 220000, 1e-12);
  tsp_stats_free(st);
  tsp_session_free(s);
}

/* The node of tree named name under parent (-1: the roots), or NULL. */
static const tsp_tree_node *tree_child(const tsp_tree *tree, int parent, const char *name)
{
  for (int i = parent < 0 ? tree->first_root : tree->nodes[parent].first_child; i >= 0;
       i = tree->nodes[i].next_sibling)
    if (strcmp(tree->nodes[i].name, name) == 0)
      return &tree->nodes[i];
  return NULL;
}

/* The call tree of the nested spans of test_stats_nested. */
static void test_call_tree(void)
{
  const char *json =
    "[{\"ph\":\"X\",\"name\":\"aten::step\",\"tid\":1,\"ts\":0,\"dur\":100},"
    "{\"ph\":\"X\",\"name\":\"aten::linear\",\"tid\":1,\"ts\":10,\"dur\":50},"
    "{\"ph\":\"X\",\"name\":\"aten::addmm\",\"tid\":1,\"ts\":20,\"dur\":30},"
    "{\"ph\":\"X\",\"name\":\"aten::addmm\",\"tid\":1,\"ts\":20,\"dur\":30},"
    "{\"ph\":\"X\",\"name\":\"aten::relu\",\"tid\":1,\"ts\":60,\"dur\":40},"
    "{\"ph\":\"X\",\"name\":\"aten::relu\",\"tid\":2,\"ts\":0,\"dur\":40},"
    "{\"ph\":\"X\",\"name\":\"aten::step\",\"tid\":1,\"ts\":200,\"dur\":20}]";
  GError *error = NULL;
  tsp_session *s = tsp_chrome_import_data(json, strlen(json), &error);
  g_assert_no_error(error);
  tsp_tree *tree = tsp_tree_compute(s, &TSP_FILTER_ALL);
  g_assert_cmpint(tree->n, ==, 6);
  g_assert_cmpfloat(tree->wall_ns, ==, 220000);
  const tsp_tree_node *step = &tree->nodes[tree->first_root]; /* the largest root first */
  g_assert_cmpstr(step->name, ==, "aten::step");
  g_assert_cmpuint(step->count, ==, 2);
  g_assert_cmpfloat(step->total_ns, ==, 120000);
  g_assert_cmpfloat(step->self_ns, ==, 30000);
  const tsp_tree_node *relu = &tree->nodes[step->next_sibling]; /* thread 2's */
  g_assert_cmpstr(relu->name, ==, "aten::relu");
  g_assert_cmpint(relu->next_sibling, ==, -1);
  g_assert_cmpfloat(relu->self_ns, ==, 40000);
  int si = (int)(step - tree->nodes);
  const tsp_tree_node *linear = &tree->nodes[step->first_child];
  g_assert_cmpstr(linear->name, ==, "aten::linear");
  g_assert_cmpfloat(linear->self_ns, ==, 20000);
  g_assert_cmpfloat(tree_child(tree, si, "aten::relu")->total_ns, ==, 40000);
  const tsp_tree_node *outer = tree_child(tree, step->first_child, "aten::addmm");
  g_assert_cmpfloat(outer->self_ns, ==, 0);
  g_assert_cmpint(outer->depth, ==, 2);
  const tsp_tree_node *inner = tree_child(tree, (int)(outer - tree->nodes), "aten::addmm");
  g_assert_cmpfloat(inner->self_ns, ==, 30000);
  g_assert_cmpint(inner->first_child, ==, -1);
  tsp_tree_free(tree);
  tsp_session_free(s);
}

/* PyTorch's profiler's Chrome trace (tests/data/traces/torch-mlp.py):
 * nested spans with no parent named, autograd's among them; each op's
 * count and self time as torch's key_averages gives them, within 1 %. */
static void test_stats_torch(void)
{
  g_autofree char *trace = g_test_build_filename(G_TEST_DIST, "data", "traces", "torch-mlp.json.gz", NULL);
  g_autofree char *tsv = g_test_build_filename(G_TEST_DIST, "data", "traces", "torch-mlp.self.tsv", NULL);
  GError *error = NULL;
  tsp_session *s = tsp_chrome_import(trace, &error);
  g_assert_no_error(error);
  tsp_stats *st = tsp_stats_compute(s, TSP_BY_OP, &TSP_FILTER_ALL);
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(tsv, &text, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  int checked = 0;
  double self_sum = 0;
  for (char **l = lines; *l; l++) {
    if (**l == '#' || !**l)
      continue;
    g_auto(GStrv) f = g_strsplit(*l, "\t", -1);
    g_assert_cmpuint(g_strv_length(f), ==, 4);
    const tsp_stat *r = find(st, f[0]);
    double self = g_ascii_strtod(f[2], NULL) * 1e3, total = g_ascii_strtod(f[3], NULL) * 1e3;
    g_assert_cmpuint(r->count, ==, g_ascii_strtoull(f[1], NULL, 10));
    if (fabs(r->self_ns - self) > 0.01 * self || fabs(r->total_ns - total) > 0.01 * total)
      g_error("%s: self %.0f ns, total %.0f ns; torch says %.0f, %.0f", f[0], r->self_ns, r->total_ns,
              self, total);
    self_sum += self;
    checked++;
  }
  g_assert_cmpint(checked, ==, st->n);
  g_assert_cmpfloat(fabs(st->self_ns - self_sum), <=, 0.01 * self_sum);
  g_assert_cmpfloat(st->self_ns, <=, st->wall_ns); /* one thread: the op time fits the wall time */
  /* the call tree: autograd's function holds its backward op, self times add up the same */
  tsp_tree *tree = tsp_tree_compute(s, &TSP_FILTER_ALL);
  double tree_self = 0;
  for (int i = 0; i < tree->n; i++)
    tree_self += tree->nodes[i].self_ns;
  g_assert_cmpfloat(fabs(tree_self - st->self_ns), <, 1);
  gboolean found = FALSE;
  for (int i = 0; i < tree->n; i++)
    if (strcmp(tree->nodes[i].name, "autograd::engine::evaluate_function: AddmmBackward0") == 0) {
      g_assert_nonnull(tree_child(tree, i, "AddmmBackward0"));
      found = TRUE;
    }
  g_assert_true(found);
  tsp_tree_free(tree);
  tsp_stats_free(st);
  tsp_session_free(s);
}

/* Eager against graph from a session made by hand: eager A (30 ns) and B
 * (20 ns) fused into F (10 ns) in graph mode; a Relu whose third eager run
 * was disturbed (1000 ns). */
static void test_compare_fused(void)
{
  tsp_session *s = tsp_session_new_empty();
  tsp_intern_device(s, "CPU");
  uint32_t l = tsp_intern_loc(s, "/src/f.c", "f", 10);
  uint32_t a = node(s, "dense/MatMul", "dense", TS_OP_MATMUL, l, NULL, 0);
  uint32_t b = node(s, "dense/Add", "dense", TS_OP_ADD, l, NULL, 0);
  uint32_t r = node(s, "relu", "", TS_OP_RELU, l, NULL, 0);
  uint32_t ab[] = { a, b };
  uint32_t f = node(s, "dense/fused", "dense", TS_OP_MATMUL, l, ab, 2);
  uint32_t rg = node(s, "relu", "", TS_OP_RELU, l, &r, 1);
  synth x = { .s = s };
  for (uint64_t k = 0; k < 3; k++) {
    uint64_t t = 1000 * k;
    op(&x, TS_OP_MATMUL, 0, a, l, k + 1, 1, 0, t, t + 30);
    op(&x, TS_OP_ADD, 0, b, l, k + 1, 2, 0, t + 100, t + 120);
    op(&x, TS_OP_RELU, 0, r, l, k + 1, 3, 0, t + 200, t + 200 + (k == 2 ? 1000 : 10));
    t += 10000;
    op(&x, TS_OP_MATMUL, f, a, l, k + 4, 1, 0, t, t + 10);
    op(&x, TS_OP_RELU, rg, r, l, k + 4, 2, 0, t + 100, t + 110);
  }
  tsp_filter eager = { TSP_MODE_ALL, 0, 10000 }, graph = { TSP_MODE_ALL, 10000, 0 };
  tsp_compare *c = tsp_compare_from_session(s, &eager, &graph, 3);
  g_assert_cmpint(c->n_rows, ==, 4);
  const tsp_compare_row *fr = &c->rows[0];
  g_assert_cmpstr(fr->name, ==, "dense/fused"); /* its time once, on it */
  g_assert_cmpuint(fr->node, ==, f);
  g_assert_cmpint(fr->parent, ==, -1);
  g_assert_cmpfloat(fr->graph_ns, ==, 10);
  g_assert_cmpfloat(fr->eager_ns, ==, 50);      /* the eager ops it stands for, summed */
  g_assert_cmpfloat(fr->ratio, ==, 5);
  g_assert_null(fr->only);
  for (int i = 1; i <= 2; i++) { /* listed under it, largest first */
    g_assert_cmpint(c->rows[i].parent, ==, 0);
    g_assert_cmpstr(c->rows[i].only, ==, "fused");
    g_assert_cmpfloat(c->rows[i].graph_ns, ==, 0);
  }
  g_assert_cmpstr(c->rows[1].name, ==, "dense/MatMul");
  g_assert_cmpfloat(c->rows[1].eager_ns, ==, 30);
  g_assert_cmpstr(c->rows[2].name, ==, "dense/Add");
  const tsp_compare_row *relu = &c->rows[3];
  g_assert_cmpstr(relu->name, ==, "relu");
  g_assert_cmpfloat(relu->eager_ns, ==, 10);    /* the median run: not moved by the disturbed one */
  g_assert_cmpfloat(relu->eager_min_ns, ==, 10);
  g_assert_cmpfloat(relu->ratio, ==, 1);
  g_assert_cmpfloat(c->eager_op_ns, ==, 60);
  g_assert_cmpfloat(c->graph_op_ns, ==, 20);
  tsp_compare_free(c);
  tsp_session_free(s);
}

/* Two recordings op by op: medians and mins, the largest change first. */
static void test_diff(void)
{
  const char *a = "[{\"ph\":\"X\",\"name\":\"aten::mm\",\"tid\":1,\"ts\":0,\"dur\":10},"
                  "{\"ph\":\"X\",\"name\":\"aten::mm\",\"tid\":1,\"ts\":20,\"dur\":12},"
                  "{\"ph\":\"X\",\"name\":\"aten::relu\",\"tid\":1,\"ts\":40,\"dur\":2},"
                  "{\"ph\":\"X\",\"name\":\"aten::old\",\"tid\":1,\"ts\":50,\"dur\":1}]";
  const char *b = "[{\"ph\":\"X\",\"name\":\"aten::mm\",\"tid\":1,\"ts\":0,\"dur\":30},"
                  "{\"ph\":\"X\",\"name\":\"aten::mm\",\"tid\":1,\"ts\":40,\"dur\":20},"
                  "{\"ph\":\"X\",\"name\":\"aten::mm\",\"tid\":1,\"ts\":70,\"dur\":900},"
                  "{\"ph\":\"X\",\"name\":\"aten::relu\",\"tid\":1,\"ts\":1000,\"dur\":2}]";
  GError *error = NULL;
  tsp_session *sa = tsp_chrome_import_data(a, strlen(a), &error), *sb = tsp_chrome_import_data(b, strlen(b), &error);
  g_assert_no_error(error);
  tsp_diff *d = tsp_diff_compute(sa, sb, TSP_BY_OP);
  g_assert_cmpint(d->n, ==, 3);
  const tsp_diff_row *mm = &d->rows[0];
  g_assert_cmpstr(mm->key, ==, "aten::mm");
  g_assert_cmpuint(mm->count[0], ==, 2);
  g_assert_cmpuint(mm->count[1], ==, 3);
  g_assert_cmpfloat(mm->p50_ns[0], ==, 10000);
  g_assert_cmpfloat(mm->p50_ns[1], ==, 30000); /* not the 900 µs outlier */
  g_assert_cmpfloat(mm->min_ns[1], ==, 20000);
  g_assert_cmpfloat(mm->ratio, ==, 3);
  g_assert_cmpstr(d->rows[1].key, ==, "aten::old");
  g_assert_cmpstr(d->rows[1].only, ==, "only in A");
  g_assert_cmpstr(d->rows[2].key, ==, "aten::relu");
  g_assert_cmpfloat(d->rows[2].ratio, ==, 1);
  g_assert_null(d->rows[2].only);
  tsp_diff_free(d);
  tsp_session_free(sa);
  tsp_session_free(sb);
}

static void call_event(tsp_session *s, const char *fn, tsp_mode mode, uint64_t run,
                       uint64_t start, uint64_t end)
{
  tsp_event e = { .start_ns = start, .end_ns = end, .run_id = run,
                  .node = tsp_intern_string(s, fn), .op = (uint16_t)mode,
                  .kind = TSP_EVENT_CALL };
  tsp_record(s, &e);
}

static void test_calls(void)
{
  synth x = synth_new();
  /* run 1 has a CALL event around its ops and a trace inside; run 2 has none */
  uint32_t cf = tsp_intern_concrete(x.s, "f", "(x: f32[2])");
  tsp_event tr = { .start_ns = 0, .end_ns = 0, .node = tsp_intern_string(x.s, "f"), .traced = cf,
                   .loc = tsp_intern_string(x.s, "first call"), .kind = TSP_EVENT_TRACE };
  tr.start_ns = 0;
  tr.end_ns = 0;
  tsp_record(x.s, &tr);
  call_event(x.s, "f", TSP_MODE_GRAPH, 1, 0, 450);
  call_event(x.s, "f", TSP_MODE_GRAPH, 7, 1000, 1100);
  call_event(x.s, "f", TSP_MODE_GRAPH, 8, 2000, 2300);
  call_event(x.s, "f", TSP_MODE_GRAPH, 9, 3000, 3200);
  GArray *calls = tsp_session_calls(x.s, &TSP_FILTER_ALL);
  g_assert_cmpuint(calls->len, ==, 5); /* four CALL events and run 2 */
  const tsp_call *c2 = &g_array_index(calls, tsp_call, 1);
  g_assert_cmpuint(c2->run_id, ==, 2);
  g_assert_cmpuint(c2->start_ns, ==, 500);
  g_assert_cmpuint(c2->end_ns, ==, 610);
  g_assert_cmpint(c2->mode, ==, TSP_MODE_EAGER);
  g_array_unref(calls);

  tsp_filter graph = { TSP_MODE_GRAPH, 0, 0 };
  GArray *cs = tsp_call_stats_compute(x.s, &graph);
  g_assert_cmpuint(cs->len, ==, 1);
  const tsp_call_stat *st = &g_array_index(cs, tsp_call_stat, 0);
  g_assert_cmpstr(st->function, ==, "f");
  g_assert_cmpuint(st->count, ==, 4);
  g_assert_cmpfloat(st->first_ns, ==, 450);
  g_assert_cmpfloat(st->steady_p50_ns, ==, 200); /* of 100 200 300 */
  g_assert_cmpfloat(st->steady_mean_ns, ==, 200);
  g_assert_cmpfloat(st->steady_min_ns, ==, 100);
  g_assert_cmpfloat(st->steady_max_ns, ==, 300);
  g_array_unref(cs);
  tsp_session_free(x.s);
}

/* ---- seeds: eager ops meet their graph nodes ----------------------------------------- */

static const struct {
  const char *name;
  const char *args[3];
} seed_cases[] = {
  { "simple_nn_layer", { "f32[3,3]:uniform", "f32[3,3]:uniform@2" } },
  { "deep_net", { "i32[3]=1,2,3" } },
  { "sum_even", { "i32[4]=10,12,15,20" } },
  { "dense_chain", { "f32[2,4,4]:uniform", "3" } },
  { "conv_layer", { "f32[1,4,4,3]:uniform" } },
  { "fizzbuzz", { "i32[]=6" } },
  { "sequential_model", { "f32[2,28,28]:uniform" } },
  { "find_next_odd", { NULL } }, /* returns None: its calls still count */
};

static void test_seeds_compare(void)
{
  ts_module *m = ts_module_open("seeds");
  g_assert_nonnull(m);
  int quiet = test_quiet_begin();
  for (size_t c = 0; c < G_N_ELEMENTS(seed_cases); c++) {
    ts_scope *scope = ts_scope_begin();
    ts_function *fn = ts_module_lookup(m, seed_cases[c].name);
    g_assert_nonnull(fn);
    ts_value args[3];
    int n = 0;
    for (; n < 3 && seed_cases[c].args[n]; n++)
      g_assert_true(ts_value_parse(seed_cases[c].args[n], &args[n]));
    tsp_session *s = tsp_session_new();
    tsp_compare *cmp = tsp_compare_run(s, fn, args, n, 3);
    if (!cmp)
      g_error("%s: %s", seed_cases[c].name, ts_error_peek()->message);
    g_assert_cmpint(cmp->n_rows, >, 0);
    g_assert_cmpfloat(cmp->eager_call_ns, >, 0);
    g_assert_cmpfloat(cmp->graph_call_ns, >, 0);
    g_assert_cmpfloat(cmp->trace_ns, >, 0); /* a fresh module: the first graph call traced */
    g_assert_cmpfloat(cmp->first_call_ns, >, cmp->trace_ns);
    double eager = 0, graph = 0;
    int matched = 0;
    for (int i = 0; i < cmp->n_rows; i++) {
      const tsp_compare_row *r = &cmp->rows[i];
      const tsp_node_info *node_info = tsp_session_node(s, r->node);
      if (r->parent >= 0) { /* an eager op a fused node stands for, listed under it */
        g_assert_cmpint(r->parent, <, i);
        const tsp_node_info *fused = tsp_session_node(s, cmp->rows[r->parent].node);
        g_assert_cmpint(fused->n_origins, >, 1);
        g_assert_cmpstr(r->only, ==, "fused");
        g_assert_cmpfloat(r->graph_ns, ==, 0);
        continue;
      }
      eager += r->eager_ns;
      graph += r->graph_ns;
      if (node_info && node_info->n_origins > 1) { /* a fused node: its time once */
        g_assert_true(node_info->optimized);
        g_assert_cmpfloat(r->graph_count, >, 0);
        matched += r->eager_count > 0;
      } else if (r->eager_count > 0 && r->graph_count > 0) {
        /* one identity: a traced node of the function's graph, run in both modes */
        g_assert_nonnull(node_info);
        g_assert_false(node_info->optimized);
        g_assert_true(node_info->has_eager_twin);
        g_assert_cmpint(node_info->op, ==, ts_op_from_name(r->op));
        g_assert_null(r->only);
        matched++;
      } else if (r->eager_count > 0) {
        g_assert_cmpstr(r->only, ==, "eager only");
      } else {
        g_assert_cmpstr(r->only, ==, "graph only");
      }
    }
    g_assert_cmpint(matched, >, 0);
    g_assert_cmpfloat_with_epsilon(eager, cmp->eager_op_ns, 1e-6 * eager + 1e-9);
    g_assert_cmpfloat_with_epsilon(graph, cmp->graph_op_ns, 1e-6 * graph + 1e-9);
    tsp_compare_free(cmp);
    tsp_session_free(s);
    for (int k = 0; k < n; k++)
      ts_value_clear(&args[k]);
    ts_scope_end(scope);
    ts_module_free(m); /* a fresh module for the next case: its function traces anew */
    m = ts_module_open("seeds");
  }
  test_quiet_end(quiet);
  ts_module_free(m);
}

/* ---- files ------------------------------------------------------------------------------- */

static tsp_session *record_seed(void)
{
  ts_module *m = ts_module_open("seeds");
  ts_function *fn = ts_module_lookup(m, "sum_even");
  ts_value x;
  g_assert_true(ts_value_parse("i32[4]=10,12,15,20", &x));
  tsp_session *s = tsp_session_new();
  tsp_session_add_collector(s, &tsp_memory_collector, NULL);
  int quiet = test_quiet_begin();
  tsp_compare_free(tsp_compare_run(s, fn, &x, 1, 2));
  test_quiet_end(quiet);
  ts_module_free(m);
  return s;
}

static void assert_same_node(const tsp_session *a, uint32_t ia, const tsp_session *b, uint32_t ib)
{
  const tsp_node_info *x = tsp_session_node(a, ia), *y = tsp_session_node(b, ib);
  g_assert_true((x == NULL) == (y == NULL));
  if (!x)
    return;
  g_assert_cmpuint(ia, ==, ib);
  g_assert_cmpstr(x->name, ==, y->name);
  g_assert_cmpstr(x->scope, ==, y->scope);
  g_assert_cmpstr(x->shape, ==, y->shape);
  g_assert_cmpint(x->op, ==, y->op);
  g_assert_cmpint(x->id, ==, y->id);
  g_assert_cmpstr(tsp_session_string(a, x->graph), ==, tsp_session_string(b, y->graph));
  g_assert_cmpint(x->optimized, ==, y->optimized);
  g_assert_cmpint(x->has_eager_twin, ==, y->has_eager_twin);
  g_assert_cmpstr(tsp_session_concrete(a, x->concrete)->signature, ==,
                  tsp_session_concrete(b, y->concrete)->signature);
  g_assert_cmpint(x->n_origins, ==, y->n_origins);
  for (int i = 0; i < x->n_origins; i++)
    g_assert_cmpuint(x->origins[i], ==, y->origins[i]);
}

static void assert_same_loc(const tsp_session *a, uint32_t ia, const tsp_session *b, uint32_t ib)
{
  const tsp_loc_info *x = tsp_session_loc(a, ia), *y = tsp_session_loc(b, ib);
  g_assert_cmpstr(x->file, ==, y->file);
  g_assert_cmpstr(x->func, ==, y->func);
  g_assert_cmpint(x->line, ==, y->line);
}

/* Equal sessions: the same threads, events and what they name. */
static void assert_same_session(const tsp_session *a, const tsp_session *b)
{
  g_assert_cmpint(tsp_session_n_threads(a), ==, tsp_session_n_threads(b));
  g_assert_cmpuint(tsp_session_n_events(a), ==, tsp_session_n_events(b));
  g_assert_cmpuint(tsp_session_n_nodes(a), ==, tsp_session_n_nodes(b));
  for (int t = 0; t < tsp_session_n_threads(a); t++) {
    g_assert_cmpstr(tsp_session_thread(a, t)->name, ==, tsp_session_thread(b, t)->name);
    g_assert_cmpuint(tsp_session_thread(a, t)->tid, ==, tsp_session_thread(b, t)->tid);
    tsp_iter ia, ib;
    tsp_iter_init(&ia, a, t);
    tsp_iter_init(&ib, b, t);
    for (const tsp_event *x; (x = tsp_iter_next(&ia));) {
      const tsp_event *y = tsp_iter_next(&ib);
      g_assert_nonnull(y);
      g_assert_cmpint(x->kind, ==, y->kind);
      g_assert_cmpuint(x->start_ns, ==, y->start_ns);
      g_assert_cmpuint(x->end_ns, ==, y->end_ns);
      g_assert_cmpuint(x->run_id, ==, y->run_id);
      g_assert_cmpuint(x->op, ==, y->op);
      if (x->kind == TSP_EVENT_MEMORY) {
        g_assert_cmpint(tsp_memory_live(x), ==, tsp_memory_live(y));
        g_assert_cmpint(tsp_memory_delta(x), ==, tsp_memory_delta(y));
        g_assert_cmpstr(tsp_session_device(a, x->device), ==, tsp_session_device(b, y->device));
      } else if (x->kind == TSP_EVENT_OP) {
        g_assert_cmpuint(x->seq, ==, y->seq);
        g_assert_cmpuint(x->parent_seq, ==, y->parent_seq);
        assert_same_node(a, x->node, b, y->node);
        assert_same_node(a, x->traced, b, y->traced);
        assert_same_loc(a, x->loc, b, y->loc);
        g_assert_cmpstr(tsp_session_device(a, x->device), ==, tsp_session_device(b, y->device));
      } else {
        g_assert_cmpstr(tsp_session_string(a, x->node), ==, tsp_session_string(b, y->node));
        g_assert_cmpstr(tsp_session_concrete(a, x->traced)->function, ==,
                        tsp_session_concrete(b, y->traced)->function);
        g_assert_cmpstr(tsp_session_concrete(a, x->traced)->signature, ==,
                        tsp_session_concrete(b, y->traced)->signature);
        if (x->kind == TSP_EVENT_TRACE)
          g_assert_cmpstr(tsp_session_string(a, x->loc), ==, tsp_session_string(b, y->loc));
      }
    }
    g_assert_null(tsp_iter_next(&ib));
  }
}

/* The session's MEMORY events of one kind. */
static int count_memory(const tsp_session *s, ts_memory_kind what)
{
  int n = 0;
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));)
      n += e->kind == TSP_EVENT_MEMORY && e->op == what;
  }
  return n;
}

/* Chrome JSON and back: every event, memory counters ("memory" for
 * tensors, "arena" for the memory plans' arenas) of each kind kept apart. */
static void test_round_trip(void)
{
  tsp_session *s = record_seed();
  g_assert_cmpuint(tsp_session_n_events(s), >, 50);
  g_assert_cmpint(count_memory(s, TS_MEMORY_TENSORS), >, 0);
  g_assert_cmpint(count_memory(s, TS_MEMORY_ARENA), >, 0);
  g_autofree char *json = tsp_chrome_export_string(s, NULL);
  g_assert_nonnull(strstr(json, "{\"name\":\"arena\""));
  g_assert_nonnull(strstr(json, "{\"name\":\"memory\""));
  char *dir = g_dir_make_tmp("test-profiler-XXXXXX", NULL);
  const char *names[] = { "trace.json", "trace.json.gz" };
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    char *path = g_build_filename(dir, names[i], NULL);
    GError *error = NULL;
    g_assert_true(tsp_chrome_export(s, path, &error));
    g_assert_no_error(error);
    tsp_session *back = tsp_chrome_import(path, &error);
    g_assert_no_error(error);
    assert_same_session(s, back);
    /* and again: what was read writes the same file */
    char *a = tsp_chrome_export_string(s, NULL), *b = tsp_chrome_export_string(back, NULL);
    g_assert_cmpstr(a, ==, b);
    g_free(a);
    g_free(b);
    tsp_session_free(back);
    g_unlink(path);
    g_free(path);
  }
  g_rmdir(dir);
  g_free(dir);
  /* the synthetic session too (fused nodes, no thread names from the engine) */
  synth x = synth_new();
  char *text = tsp_chrome_export_string(x.s, NULL);
  GError *error = NULL;
  tsp_session *back = tsp_chrome_import_data(text, strlen(text), &error);
  g_assert_no_error(error);
  assert_same_session(x.s, back);
  tsp_session_free(back);
  g_free(text);
  tsp_session_free(x.s);
  tsp_session_free(s);
}

/* The worker's form: bytes back to an equal session, with stats the same. */
static void test_serial_round_trip(void)
{
  tsp_session *s = record_seed();
  GBytes *bytes = tsp_session_serialize(s);
  GError *error = NULL;
  tsp_session *back = tsp_session_deserialize(bytes, &error);
  g_assert_no_error(error);
  assert_same_session(s, back);
  tsp_stats *a = tsp_stats_compute(s, TSP_BY_NODE, &TSP_FILTER_ALL);
  tsp_stats *b = tsp_stats_compute(back, TSP_BY_NODE, &TSP_FILTER_ALL);
  g_assert_cmpint(a->n, ==, b->n);
  for (int i = 0; i < a->n; i++) {
    g_assert_cmpstr(a->rows[i].key, ==, b->rows[i].key);
    g_assert_cmpuint(a->rows[i].count, ==, b->rows[i].count);
    g_assert_cmpfloat(a->rows[i].total_ns, ==, b->rows[i].total_ns);
  }
  tsp_stats_free(a);
  tsp_stats_free(b);
  /* the same bytes again from what was read */
  GBytes *again = tsp_session_serialize(back);
  g_assert_true(g_bytes_equal(bytes, again));
  g_bytes_unref(again);
  tsp_session_free(back);
  g_bytes_unref(bytes);
  tsp_session_free(s);
  /* the synthetic session: fused nodes with origins, hand-made threads */
  synth x = synth_new();
  bytes = tsp_session_serialize(x.s);
  back = tsp_session_deserialize(bytes, &error);
  g_assert_no_error(error);
  assert_same_session(x.s, back);
  tsp_session_free(back);
  g_bytes_unref(bytes);
  tsp_session_free(x.s);
}

static tsp_session *deserialize_data(const void *data, size_t len, GError **error)
{
  GBytes *bytes = g_bytes_new(data, len);
  tsp_session *s = tsp_session_deserialize(bytes, error);
  g_bytes_unref(bytes);
  return s;
}

/* Hostile bytes: truncated, flipped, an event naming a node that is not
 * there, another version; an error each time, never a crash. */
static void test_serial_corrupt(void)
{
  synth x = synth_new();
  GBytes *bytes = tsp_session_serialize(x.s);
  gsize len;
  const guint8 *data = g_bytes_get_data(bytes, &len);
  GError *error = NULL;
  /* every truncation: read as an error or as a smaller consistent session */
  for (gsize cut = 0; cut < len; cut += 1 + cut / 64) {
    tsp_session *s = deserialize_data(data, cut, &error);
    g_assert_true((s == NULL) == (error != NULL));
    if (s) { /* what was read is usable */
      tsp_stats_free(tsp_stats_compute(s, TSP_BY_SCOPE, &TSP_FILTER_ALL));
      tsp_session_free(s);
    }
    g_clear_error(&error);
  }
  /* flipped bytes, each position in turn (a few bits each) */
  guint8 *copy = g_memdup2(data, len);
  for (gsize i = 0; i < len; i++) {
    for (int bit = 0; bit < 8; bit += 3) {
      copy[i] ^= (guint8)(1u << bit);
      tsp_session *s = deserialize_data(copy, len, &error);
      g_assert_true((s == NULL) == (error != NULL));
      if (s) {
        tsp_stats_free(tsp_stats_compute(s, TSP_BY_NODE, &TSP_FILTER_ALL));
        tsp_compare_free(tsp_compare_from_session(s, &TSP_FILTER_ALL, &TSP_FILTER_ALL, 1));
        tsp_session_free(s);
      }
      g_clear_error(&error);
      copy[i] ^= (guint8)(1u << bit);
    }
  }
  g_free(copy);
  /* an op event naming a node past the table */
  tsp_session *t = tsp_session_new_empty();
  int th = tsp_session_add_thread(t, "main", 1);
  tsp_record_on(t, th, &(tsp_event){ .start_ns = 1, .end_ns = 2, .node = 7, .kind = TSP_EVENT_OP });
  GBytes *b = tsp_session_serialize(t);
  g_assert_null(tsp_session_deserialize(b, &error));
  g_assert_error(error, TSP_ERROR, TSP_ERROR_FORMAT);
  g_assert_nonnull(strstr(error->message, "event 0"));
  g_clear_error(&error);
  g_bytes_unref(b);
  tsp_session_free(t);
  /* another version */
  guint8 *other = g_memdup2(data, len);
  other[0] ^= 0x40; /* the version is the first field */
  g_assert_null(deserialize_data(other, len, &error));
  g_assert_nonnull(strstr(error->message, "version"));
  g_clear_error(&error);
  g_free(other);
  g_bytes_unref(bytes);
  tsp_session_free(x.s);
}

/* Files over a megabyte are parsed by a thread pool, a batch at a time:
 * the same session comes back, "B"/"E" pairs span batches, and an error in
 * a late batch is still found. */
static void test_large(void)
{
  synth x = synth_new();
  for (uint32_t i = 0; i < 30000; i++)
    op(&x, TS_OP_MATMUL, x.ag, x.a, x.l10, 10 + i / 100, 1 + i % 100, 0, 1000 + 10 * (uint64_t)i,
       1005 + 10 * (uint64_t)i);
  size_t len;
  char *text = tsp_chrome_export_string(x.s, &len);
  g_assert_cmpuint(len, >, 4u << 20);
  GError *error = NULL;
  tsp_session *back = tsp_chrome_import_data(text, len, &error);
  g_assert_no_error(error);
  assert_same_session(x.s, back);
  tsp_session_free(back);
  /* an event without its time, deep in the file */
  char *bad = g_strdup(text);
  char *at = bad;
  for (int i = 0; i < 25000; i++)
    at = strstr(at + 1, "\"ts\":");
  memcpy(at, "\"tz\"", 4);
  g_assert_null(tsp_chrome_import_data(bad, len, &error));
  g_assert_error(error, TSP_ERROR, TSP_ERROR_FORMAT);
  if (!strstr(error->message, "event 25000:")) /* 0 names the process, 1 the thread */
    g_error("%s", error->message);
  g_assert_nonnull(strstr(error->message, "no \"ts\""));
  g_clear_error(&error);
  g_free(bad);
  g_free(text);
  tsp_session_free(x.s);

  GString *json = g_string_new("[{\"ph\":\"B\",\"name\":\"outer\",\"tid\":1,\"ts\":0}");
  for (int i = 0; i < 40000; i++)
    g_string_append_printf(json, ",\n{\"ph\":\"X\",\"name\":\"Add\",\"tid\":1,\"ts\":%d,\"dur\":1,"
                                 "\"args\":{\"note\":\"padding padding padding\"}}", i + 1);
  g_string_append(json, ",{\"ph\":\"E\",\"tid\":1,\"ts\":50000}]");
  back = tsp_chrome_import_data(json->str, json->len, &error);
  g_assert_no_error(error);
  tsp_stats *st = tsp_stats_compute(back, TSP_BY_OP, &TSP_FILTER_ALL);
  g_assert_cmpfloat(find(st, "outer")->total_ns, ==, 50000000);
  g_assert_cmpuint(find(st, "Add")->count, ==, 40000);
  tsp_stats_free(st);
  tsp_session_free(back);
  g_string_free(json, TRUE);
}

/* Another tool's trace: B/E pairs, X events, names the engine lacks. */
static void test_foreign(void)
{
  const char *json =
    "[{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":7,\"args\":{\"name\":\"worker\"}},"
    "{\"ph\":\"B\",\"name\":\"outer\",\"pid\":1,\"tid\":7,\"ts\":10},"
    "{\"ph\":\"X\",\"name\":\"MatMul\",\"pid\":1,\"tid\":7,\"ts\":11,\"dur\":2.5},"
    "{\"ph\":\"E\",\"pid\":1,\"tid\":7,\"ts\":20},"
    "{\"ph\":\"i\",\"name\":\"mark\",\"pid\":1,\"tid\":7,\"ts\":21},"
    "{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":21,\"args\":{\"v\":3}}]";
  GError *error = NULL;
  tsp_session *s = tsp_chrome_import_data(json, strlen(json), &error);
  g_assert_no_error(error);
  g_assert_cmpint(tsp_session_n_threads(s), ==, 1);
  g_assert_cmpstr(tsp_session_thread(s, 0)->name, ==, "worker");
  g_assert_cmpuint(tsp_session_n_events(s), ==, 2);
  tsp_stats *st = tsp_stats_compute(s, TSP_BY_OP, &TSP_FILTER_ALL);
  g_assert_cmpfloat(find(st, "outer")->total_ns, ==, 10000);
  g_assert_cmpfloat(find(st, "MatMul")->total_ns, ==, 2500);
  tsp_stats_free(st);
  tsp_session_free(s);
  /* another tool's "memory" counters: the changes are the steps between values */
  json = "[{\"ph\":\"C\",\"name\":\"memory\",\"pid\":1,\"tid\":7,\"ts\":1,\"args\":{\"GPU\":100}},"
         "{\"ph\":\"C\",\"name\":\"memory\",\"pid\":1,\"tid\":7,\"ts\":2,\"args\":{\"GPU\":40}}]";
  s = tsp_chrome_import_data(json, strlen(json), &error);
  g_assert_no_error(error);
  tsp_iter it;
  tsp_iter_init(&it, s, 0);
  const int64_t want[][2] = { { 100, 100 }, { -60, 40 } };
  for (int i = 0; i < 2; i++) {
    const tsp_event *e = tsp_iter_next(&it);
    g_assert_cmpint(e->kind, ==, TSP_EVENT_MEMORY);
    g_assert_cmpint(tsp_memory_delta(e), ==, want[i][0]);
    g_assert_cmpint(tsp_memory_live(e), ==, want[i][1]);
    g_assert_cmpstr(tsp_session_device(s, e->device), ==, "GPU");
  }
  g_assert_null(tsp_iter_next(&it));
  tsp_session_free(s);
}

/* Times in µs as JSON writes them, to the nanosecond: integers, decimals,
 * exponents, more digits than a double holds exactly. */
static void test_numbers(void)
{
  static const struct { const char *ts; uint64_t ns; } cases[] = {
    { "0", 0 }, { "7", 7000 }, { "0.001", 1 }, { "51.276", 51276 }, { "123456.789", 123456789 },
    { "-0", 0 }, { "1.5e3", 1500000 }, { "2E-3", 2 }, { "9007199254.740991", 9007199254741 },
    { "0.0004", 0 }, { "0.0005", 1 }, { "1234567890.123456789", 1234567890123 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *json = g_strdup_printf("[{\"ph\":\"X\",\"name\":\"Add\",\"tid\":1,\"ts\":%s,\"dur\":1}]",
                                 cases[i].ts);
    GError *error = NULL;
    tsp_session *s = tsp_chrome_import_data(json, strlen(json), &error);
    g_assert_no_error(error);
    tsp_iter it;
    tsp_iter_init(&it, s, 0);
    const tsp_event *e = tsp_iter_next(&it);
    g_assert_nonnull(e);
    if (e->start_ns != cases[i].ns)
      g_error("ts %s: %" G_GUINT64_FORMAT " ns, not %" G_GUINT64_FORMAT, cases[i].ts, e->start_ns,
              cases[i].ns);
    g_assert_cmpuint(e->end_ns - e->start_ns, ==, 1000);
    tsp_session_free(s);
    g_free(json);
  }
}

/* Escaped quotes and backslashes in strings (the scanner finds a string's
 * end past them). */
static void test_escapes(void)
{
  const char *json = "[{\"ph\":\"X\",\"name\":\"a\\\"b\\\\\",\"tid\":1,\"ts\":1,\"dur\":1},"
                     "{\"ph\":\"X\",\"name\":\"\\\\\",\"tid\":1,\"ts\":3,\"dur\":2,"
                     "\"args\":{\"note\":\"]}\\\"[{\"}}]";
  GError *error = NULL;
  tsp_session *s = tsp_chrome_import_data(json, strlen(json), &error);
  g_assert_no_error(error);
  g_assert_cmpuint(tsp_session_n_events(s), ==, 2);
  tsp_stats *st = tsp_stats_compute(s, TSP_BY_OP, &TSP_FILTER_ALL);
  g_assert_cmpfloat(find(st, "a\"b\\")->total_ns, ==, 1000);
  g_assert_cmpfloat(find(st, "\\")->total_ns, ==, 2000);
  tsp_stats_free(st);
  tsp_session_free(s);
}

static void expect_import_error(const char *json, size_t len, const char *fragment)
{
  GError *error = NULL;
  tsp_session *s = tsp_chrome_import_data(json, len, &error);
  if (s)
    g_error("imported without error: %.*s", (int)MIN(len, 200), json);
  g_assert_error(error, TSP_ERROR, TSP_ERROR_FORMAT);
  if (fragment && !strstr(error->message, fragment))
    g_error("error '%s' lacks '%s'", error->message, fragment);
  g_error_free(error);
}

#define BAD(json, fragment) expect_import_error(json, strlen(json), fragment)

static void test_hostile(void)
{
  BAD("", "not a Chrome trace");
  BAD("42", "not a Chrome trace");
  BAD("{}", "no \"traceEvents\"");
  BAD("{\"traceEvents\":3}", "not an array");
  BAD("[{\"ph\":\"X\",\"name\":\"Add\",\"ts\":1", "truncated");
  BAD("[{\"ph\":\"X\",\"name\":\"Add\",\"ts\":1}", "truncated");
  BAD("[{\"ph\":\"X\",\"name\":\"Add\",\"ts\":\"1\"}]", "not a number");
  BAD("[{\"ph\":\"X\",\"name\":\"Add\",\"ts\":1,\"dur\":[1]}]", "not a number");
  BAD("[{\"ph\":\"X\",\"name\":\"Add\",\"ts\":1e300}]", "out of range");
  BAD("[{\"ph\":\"X\",\"name\":\"Add\",\"ts\":-5}]", "out of range");
  BAD("[{\"ph\":\"X\",\"name\":\"Add\",\"ts\":1,\"dur\":123456789012345678901234567890}]", NULL);
  BAD("[{\"ph\":\"X\",\"name\":\"Add\",\"ts\":1,\"tid\":1.5}]", "integer");
  BAD("[{\"ph\":\"X\",\"ts\":1}]", "no \"name\"");
  BAD("[{\"name\":\"Add\",\"ts\":1}]", "no \"ph\"");
  BAD("[3]", "not an object");
  BAD("[{\"ph\":\"E\",\"ts\":1}]", "no \"B\"");
  BAD("[{\"ph\":\"C\",\"name\":\"memory\",\"ts\":1}]", "memory counter without a value");
  BAD("[{\"ph\":\"C\",\"name\":\"memory\",\"ts\":1,\"args\":{\"CPU\":-4}}]", "negative");
  BAD("[{\"ph\":\"C\",\"name\":\"memory\",\"ts\":1,\"args\":{\"CPU\":\"x\"}}]", "not a number");
  BAD("[{\"ph\":\"B\",\"name\":\"a\",\"ts\":1}]", "never end");
  BAD("[{\"ph\":\"B\",\"name\":\"a\",\"ts\":5},{\"ph\":\"E\",\"ts\":1}]", "before its");
  BAD("[{\"ph\":\"X\",\"name\":\"Add\",\"ts\":1} {\"ph\":\"X\"}]", "expected ','");
  BAD("[{\"ph\":\"X\",\"name\":\"Add\",\"ts\":1,}]", NULL);
  BAD("[\"unterminated]", "inside a string");
  BAD("[{\"ph\":\"X\",\"name\":\"over\xc1\xbalong\",\"ts\":1}]", "not valid UTF-8"); /* yajl lets it by */
  BAD("[{\"ph\":\"C\",\"name\":\"memory\",\"ts\":1,\"args\":{\"\xc1\xba\":1}}]", "not valid UTF-8");
  /* our tables, broken */
  BAD("{\"tracescope\":{\"version\":1},\"traceEvents\":[]}", "base_ns");
  /* a later version: said as such, whatever its tables hold */
  BAD("{\"tracescope\":{\"version\":2,\"epoch\":\"0\"},\"traceEvents\":[]}",
      "version 2 is not one this Tracescope knows (it reads version 1)");
  BAD("{\"tracescope\":{\"version\":\"two\"},\"traceEvents\":[]}", "version \"two\" is not one");
  BAD("{\"tracescope\":{\"base_ns\":\"0\",\"lost_events\":\"-1\"},\"traceEvents\":[]}",
      "\"lost_events\" is not a count");
  BAD("{\"tracescope\":{\"base_ns\":\"0\",\"dropped_device_records\":7},\"traceEvents\":[]}",
      "\"dropped_device_records\" is not a count");
  BAD("{\"tracescope\":{\"base_ns\":\"0\",\"locs\":[],\"concretes\":[],\"nodes\":[{\"name\":\"a\"}]},"
      "\"traceEvents\":[]}", "nodes[0]");
  BAD("{\"tracescope\":{\"base_ns\":\"0\",\"locs\":[],\"concretes\":[],\"nodes\":[]},"
      "\"traceEvents\":[{\"ph\":\"X\",\"name\":\"Add\",\"cat\":\"op\",\"ts\":1,\"args\":{\"n\":5}}]}",
      "names no entry");
  BAD("{\"tracescope\":{\"base_ns\":\"0\",\"locs\":[],\"concretes\":[],\"nodes\":[{\"name\":\"a\","
      "\"op\":\"Add\",\"origins\":[9]}]},\"traceEvents\":[]}", "origin");
  /* nested past any sane depth: an error naming the limit, not a stack overflow */
  GString *deep = g_string_new("[");
  for (int i = 0; i < 100000; i++)
    g_string_append_c(deep, '[');
  GError *deep_error = NULL;
  g_assert_null(tsp_chrome_import_data(deep->str, deep->len, &deep_error));
  g_assert_error(deep_error, TSP_ERROR, TSP_ERROR_LIMIT);
  g_assert_nonnull(strstr(deep_error->message, "nested more than 64 deep (the max_depth limit)"));
  g_clear_error(&deep_error);
  g_string_free(deep, TRUE);
  /* every truncation of a real file */
  tsp_session *s = record_seed();
  size_t len;
  char *text = tsp_chrome_export_string(s, &len);
  for (size_t cut = 0; cut + 3 < len; cut += 1 + cut / 50)
    expect_import_error(text, cut, NULL);
  /* random byte flips never crash (errors or not) */
  GRand *rand = g_rand_new_with_seed(7);
  for (int round = 0; round < 300; round++) {
    char *copy = g_memdup2(text, len);
    for (int k = 0; k < 4; k++)
      copy[g_rand_int_range(rand, 0, (gint32)len)] = "{}[]\",:0-9e\\x"[g_rand_int_range(rand, 0, 14)];
    GError *error = NULL;
    tsp_session *back = tsp_chrome_import_data(copy, len, &error);
    g_assert_true((back == NULL) == (error != NULL));
    if (back) {
      tsp_stats_free(tsp_stats_compute(back, TSP_BY_NODE, &TSP_FILTER_ALL));
      tsp_session_free(back);
    }
    g_clear_error(&error);
    g_free(copy);
  }
  g_rand_free(rand);
  g_free(text);
  tsp_session_free(s);
  /* files */
  GError *error = NULL;
  g_assert_null(tsp_chrome_import("/nonexistent/trace.json", &error));
  g_assert_error(error, TSP_ERROR, TSP_ERROR_IO);
  g_clear_error(&error);
}

static void test_csv(void)
{
  synth x = synth_new();
  tsp_stats *st = tsp_stats_compute(x.s, TSP_BY_NODE, &TSP_FILTER_ALL);
  char *dir = g_dir_make_tmp("test-profiler-XXXXXX", NULL);
  char *path = g_build_filename(dir, "stats.csv", NULL);
  GError *error = NULL;
  const tsp_stats *tables[] = { st };
  g_assert_true(tsp_stats_write_csv(tables, 1, path, &error));
  g_assert_no_error(error);
  char *text;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  char **lines = g_strsplit(text, "\n", -1);
  g_assert_cmpstr(lines[0], ==, "key,op,mode,device,count,total_ns,self_ns,mean_ns,min_ns,max_ns,"
                                "p50_ns,p95_ns,share");
  g_assert_cmpint(g_strv_length(lines), ==, 1 + 4 + 1);
  g_assert_cmpstr(lines[1], ==, "while,While,graph,CPU,1,300,150,300.0,300,300,300,300,0.245902");
  g_assert_true(g_str_has_prefix(lines[4], "Relu at f.c:30,Relu,eager,CPU,1,10,"));
  g_strfreev(lines);
  g_free(text);
  g_assert_false(tsp_stats_write_csv(tables, 1, "/nonexistent/dir/stats.csv", &error));
  g_assert_error(error, TSP_ERROR, TSP_ERROR_IO);
  g_clear_error(&error);
  g_unlink(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
  tsp_stats_free(st);
  tsp_session_free(x.s);
}

/* ---- recording from several threads --------------------------------------------------------- */

static gpointer run_adds(gpointer data)
{
  ts_tensor *x = ts_ones(TS_F32, TS_SHAPE(4, 4));
  for (int i = 0; i < 1000; i++) {
    ts_scope *s = ts_scope_begin();
    ts_add(x, x);
    ts_scope_end(s);
  }
  ts_release_all();
  return NULL;
}

static void test_threads(void)
{
  tsp_session *s = tsp_session_new();
  g_assert_true(tsp_session_start(s, NULL));
  GThread *threads[3];
  for (int i = 0; i < 3; i++)
    threads[i] = g_thread_new("adds", run_adds, NULL);
  for (int i = 0; i < 3; i++)
    g_thread_join(threads[i]);
  tsp_session_stop(s);
  g_assert_cmpint(tsp_session_n_threads(s), ==, 3);
  for (int i = 0; i < 3; i++) /* their tracks have the threads' names */
    g_assert_cmpstr(tsp_session_thread(s, i)->name, ==, "adds");
  tsp_stats *st = tsp_stats_compute(s, TSP_BY_OP, &TSP_FILTER_ALL);
  g_assert_cmpuint(find(st, "Add")->count, ==, 3000);
  tsp_stats_free(st);
  tsp_session_free(s);
}

/* A recording stopped and started again goes on in the chunk it was
 * filling: each start taking a new one touched fresh memory (page faults
 * that cost more than recording the events), once per thread per start.
 * A file's thread still takes room as its events come. */
static void test_restart_same_chunk(void)
{
  tsp_session *s = tsp_session_new_empty();
  for (int round = 0; round < 20; round++) {
    g_assert_true(tsp_session_start(s, NULL));
    for (int i = 0; i < 500; i++)
      tsp_record(s, &(tsp_event){ .start_ns = 1000 * (uint64_t)(round * 500 + i) + 1,
                                 .end_ns = 1000 * (uint64_t)(round * 500 + i) + 900,
                                 .kind = TSP_EVENT_OP });
    tsp_session_stop(s);
  }
  g_assert_cmpint(tsp_session_n_threads(s), ==, 1);
  const tsp_thread *t = s->threads->pdata[0];
  g_assert_true(t->first == t->last);
  g_assert_cmpuint(t->first->n, ==, 10000);
  tsp_iter it; /* in order, none lost */
  tsp_iter_init(&it, s, 0);
  uint64_t n = 0, last = 0;
  for (const tsp_event *e; (e = tsp_iter_next(&it)); n++) {
    g_assert_cmpuint(e->start_ns, >, last);
    last = e->start_ns;
  }
  g_assert_cmpuint(n, ==, 10000);
  int file = tsp_session_add_thread(s, "imported", 4711);
  tsp_record_on(s, file, &(tsp_event){ .start_ns = 1, .end_ns = 2, .kind = TSP_EVENT_OP });
  g_assert_cmpuint(((const tsp_thread *)s->threads->pdata[file])->last->cap, <=, TSP_CHUNK_MIN_EVENTS);
  tsp_session_free(s);
}

/* A recording past its memory cap goes on without the events it cannot
 * keep, counts them and says so; the count travels with the session to
 * the app (serial) and into files (Chrome), as do device records the
 * backends dropped. */
static void test_losses(void)
{
  tsp_session *s = tsp_session_new_empty();
  g_assert_null(tsp_session_losses_text(s));
  tsp_session_set_max_bytes(s, TSP_CHUNK_BYTES); /* one chunk */
  g_assert_true(tsp_session_start(s, NULL));
  const uint64_t n = TSP_CHUNK_EVENTS + 1000;
  for (uint64_t i = 0; i < n; i++)
    tsp_record(s, &(tsp_event){ .start_ns = 10 * i + 1, .end_ns = 10 * i + 5, .kind = TSP_EVENT_OP });
  tsp_session_stop(s);
  g_assert_cmpuint(tsp_session_n_events(s), ==, TSP_CHUNK_EVENTS);
  g_assert_cmpuint(tsp_session_losses(s).events, ==, 1000);
  g_assert_cmpuint(tsp_session_losses(s).device_records, ==, 0);
  g_autofree char *text = tsp_session_losses_text(s);
  g_assert_cmpstr(text, ==, "1000 events lost: the recording's memory ran out");

  GError *error = NULL;
  GBytes *bytes = tsp_session_serialize(s);
  tsp_session *back = tsp_session_deserialize(bytes, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(tsp_session_losses(back).events, ==, 1000);
  tsp_session_free(back);
  g_bytes_unref(bytes);

  size_t len = 0;
  g_autofree char *json = tsp_chrome_export_string(s, &len);
  g_autoptr(GString) edited = g_string_new(json);
  g_assert_cmpuint(g_string_replace(edited, "\"dropped_device_records\":\"0\"",
                                    "\"dropped_device_records\":\"3\"", 1), ==, 1);
  back = tsp_chrome_import_data(edited->str, edited->len, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(tsp_session_losses(back).events, ==, 1000);
  g_assert_cmpuint(tsp_session_losses(back).device_records, ==, 3);
  g_autofree char *both = tsp_session_losses_text(back);
  g_assert_cmpstr(both, ==, "1000 events lost: the recording's memory ran out; "
                            "3 device records dropped: the device's activity buffers were full");
  tsp_session_free(back);
  tsp_session_free(s);
}

/* Three branches of two matmuls each, summed: two groups run at once. */
static ts_tensor *branches(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *w = ts_arg(c, 1), *sum = NULL;
  for (int b = 0; b < 3; b++) {
    ts_tensor *h = ts_matmul(ts_relu(ts_matmul(ts_mul(x, ts_scalar_f32((float)(b + 2))), w)), w);
    sum = sum ? ts_add(sum, h) : h;
  }
  return sum;
}

/* Profiling keeps a graph's schedule: its groups run at once on the
 * engine's threads, and the profile has every op of the call once, those
 * that ran on the pool's other thread on that thread's track, named for
 * it ("ts-pool-1", not "thread 4711"). */
static void test_profiled_schedule(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("branches", branches, "x, w");
  ts_value args[] = { TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(96, 128), -1, 1, 1)),
                      TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(128, 128), -1, 1, 2)) };
  ts_concrete *cf = ts_function_get_concrete(fn, args, 2);
  ts_schedule sched;
  g_assert_true(ts_concrete_schedule(cf, &sched));
  g_assert_cmpint(sched.n_groups, ==, 2);
  g_assert_true(ts_set_threads(2));
  bool elsewhere = false;
  for (int i = 0; i < 1000 && !elsewhere; i++) { /* the bound is only a safety net */
    tsp_session *s = tsp_session_new();
    g_assert_true(tsp_session_start(s, NULL));
    ts_scope *call_scope = ts_scope_begin();
    g_assert_nonnull(ts_function_call(fn, args, 2));
    ts_scope_end(call_scope);
    tsp_session_stop(s);
    int ops = sched.n_ops - 2; /* less the placeholders */
    int *seen = g_new0(int, ops + 2);
    for (int t = 0; t < tsp_session_n_threads(s); t++) {
      tsp_iter it;
      tsp_iter_init(&it, s, t);
      for (const tsp_event *e; (e = tsp_iter_next(&it));) {
        if (e->kind != TSP_EVENT_OP || !e->run_id)
          continue;
        g_assert_cmpuint(e->seq, >=, 1);
        g_assert_cmpuint(e->seq, <=, (uint32_t)ops);
        seen[e->seq]++;
        const tsp_thread_info *info = tsp_session_thread(s, t);
        if (info->tid != (uint64_t)getpid()) { /* the pool's thread, by its name */
          elsewhere = true;
          g_assert_cmpstr(info->name, ==, "ts-pool-1");
        } else {
          g_assert_cmpstr(info->name, ==, "main");
        }
      }
    }
    for (int q = 1; q <= ops; q++)
      g_assert_cmpint(seen[q], ==, 1);
    g_free(seen);
    tsp_session_free(s);
  }
  g_assert_true(elsewhere);
  ts_set_threads(0);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* Nodes of If/While subgraphs are named by their path in a session:
 * fizzbuzz's three FloorMods (the loop body's, and those of the If/else
 * branches nested in it) are three rows, not one "FloorMod" charged with
 * all; ts_node_path gives the same name for the graph's node. */
static void test_node_paths(void)
{
  ts_module *m = ts_module_open("seeds");
  ts_function *fn = ts_module_lookup(m, "fizzbuzz");
  ts_scope *scope = ts_scope_begin();
  ts_value n = TS_INT_VALUE(15);
  int quiet = test_quiet_begin(); /* fizzbuzz prints */
  g_assert_nonnull(ts_function_call(fn, &n, 1)); /* traced before the session: no trace's ops */
  tsp_session *s = tsp_session_new();
  g_assert_true(tsp_session_start(s, NULL));
  g_assert_nonnull(ts_function_call(fn, &n, 1));
  tsp_session_stop(s);
  test_quiet_end(quiet);
  tsp_filter graph = { TSP_MODE_GRAPH, 0, 0 };
  tsp_stats *st = tsp_stats_compute(s, TSP_BY_NODE, &graph);
  static const char *const paths[] = { "While/body/FloorMod", "While/body/If/else/FloorMod",
                                       "While/body/If/else/If/else/FloorMod" };
  static const uint64_t runs[] = { 15, 14, 10 }; /* i of 1..15; not a multiple of 15; nor of 3 */
  for (guint k = 0; k < G_N_ELEMENTS(paths); k++)
    g_assert_cmpuint(find(st, paths[k])->count, ==, runs[k]);
  for (int i = 0; i < st->n; i++)
    for (int j = i + 1; j < st->n; j++)
      g_assert_cmpstr(st->rows[i].key, !=, st->rows[j].key);
  /* the graph's nested node has the session's name */
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
  const ts_node *loop = NULL;
  for (int i = 0; i < ts_graph_n_nodes(g) && !loop; i++)
    if (ts_node_op(ts_graph_node(g, i)) == TS_OP_WHILE)
      loop = ts_graph_node(g, i);
  g_assert_nonnull(loop);
  const ts_graph *body = ts_node_subgraph(loop, 1);
  gboolean seen = FALSE;
  for (int i = 0; i < ts_graph_n_nodes(body); i++) {
    const ts_node *node = ts_graph_node(body, i);
    if (ts_node_op(node) != TS_OP_MOD)
      continue;
    g_autofree char *path = ts_node_path(node);
    g_assert_cmpstr(path, ==, "While/body/FloorMod");
    seen = TRUE;
  }
  g_assert_true(seen);
  g_autofree char *top = ts_node_path(loop);
  g_assert_cmpstr(top, ==, "While");
  tsp_stats_free(st);
  tsp_session_free(s);
  ts_scope_end(scope);
  ts_module_free(m);
}

/* A row run's op is an event per part, on each thread that ran one: the
 * statistics count it once, its time its parts' together. */
static void test_row_run_counted_once(void)
{
  ts_module *m = ts_module_open("seeds");
  ts_function *fn = ts_module_lookup(m, "sequential_model");
  g_assert_nonnull(fn);
  ts_scope *scope = ts_scope_begin();
  ts_value x = TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(20, 28, 28), 0, 1, 3));
  g_assert_true(ts_set_threads(2));
  ts_schedule sched;
  g_assert_true(ts_concrete_schedule(ts_function_get_concrete(fn, &x, 1), &sched));
  g_assert_cmpint(sched.n_row_runs, >, 0);
  bool split = false;
  for (int i = 0; i < 1000 && !split; i++) { /* the bound is only a safety net */
    tsp_session *s = tsp_session_new();
    g_assert_true(tsp_session_start(s, NULL));
    ts_scope *call_scope = ts_scope_begin();
    g_assert_nonnull(ts_function_call(fn, &x, 1));
    ts_scope_end(call_scope);
    tsp_session_stop(s);
    /* the events of each (run, seq), and their time */
    GHashTable *parts = g_hash_table_new(g_int64_hash, g_int64_equal);
    uint64_t keys[4096];
    int n_keys = 0;
    double time_ns = 0;
    for (int t = 0; t < tsp_session_n_threads(s); t++) {
      tsp_iter it;
      tsp_iter_init(&it, s, t);
      for (const tsp_event *e; (e = tsp_iter_next(&it));) {
        if (e->kind != TSP_EVENT_OP || !e->run_id || e->op == TS_OP_READ_VARIABLE)
          continue;
        g_assert_cmpint(n_keys, <, (int)G_N_ELEMENTS(keys));
        keys[n_keys] = e->seq;
        int seen = GPOINTER_TO_INT(g_hash_table_lookup(parts, &keys[n_keys]));
        g_hash_table_insert(parts, &keys[n_keys++], GINT_TO_POINTER(seen + 1));
        split |= seen > 0;
        time_ns += (double)(e->end_ns - e->start_ns);
      }
    }
    tsp_filter graph = { TSP_MODE_GRAPH, 0, 0 };
    tsp_stats *st = tsp_stats_compute(s, TSP_BY_NODE, &graph);
    uint64_t count = 0;
    double self_ns = 0;
    for (int r = 0; r < st->n; r++) {
      if (st->rows[r].op == TS_OP_READ_VARIABLE)
        continue;
      g_assert_cmpuint(st->rows[r].count, ==, 1); /* one call: each node ran once */
      count += st->rows[r].count;
      self_ns += st->rows[r].self_ns;
    }
    g_assert_cmpuint(count, ==, g_hash_table_size(parts));
    g_assert_cmpfloat(fabs(self_ns - time_ns), <=, 1e-6 * time_ns + 1); /* leaf ops: self = total */
    tsp_stats_free(st);
    g_hash_table_unref(parts);
    tsp_session_free(s);
  }
  g_assert_true(split);
  ts_set_threads(0);
  ts_scope_end(scope);
  ts_module_free(m);
}

/* ---- the CLI ------------------------------------------------------------------------------- */

/* "  NAME ... a b" rows of a table: the number in column `col` (from the right, 1 = last). */
static double column(const char *line, int col)
{
  char **words = g_strsplit_set(line, " ", -1);
  GPtrArray *w = g_ptr_array_new();
  for (char **p = words; *p; p++)
    if (**p)
      g_ptr_array_add(w, *p);
  double v = w->len >= (guint)col ? g_ascii_strtod(w->pdata[w->len - (guint)col], NULL) : NAN;
  g_ptr_array_unref(w);
  g_strfreev(words);
  return v;
}

/* ---- a training step split by scope ------------------------------------------------------ */

static void test_step_parts(void)
{
  const struct { const char *scope; tsp_step_part part; } cases[] = {
    { "gradients", TSP_STEP_BACKWARD },      { "gradients/dense", TSP_STEP_BACKWARD },
    { "train/gradients", TSP_STEP_BACKWARD }, { "Adam/gradients", TSP_STEP_BACKWARD },
    { "Adam", TSP_STEP_OPTIMIZER },          { "Adam_1", TSP_STEP_OPTIMIZER },
    { "SGD", TSP_STEP_OPTIMIZER },           { "step/SGD/dense", TSP_STEP_OPTIMIZER },
    { "Adamant", TSP_STEP_FORWARD },         { "Adam_", TSP_STEP_FORWARD },
    { "Adam_1x", TSP_STEP_FORWARD },         { "gradients_of", TSP_STEP_FORWARD },
    { "dense_1", TSP_STEP_FORWARD },         { "", TSP_STEP_FORWARD },
    { "(top)", TSP_STEP_FORWARD },           { NULL, TSP_STEP_FORWARD },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
    g_assert_cmpstr(tsp_step_part_name(tsp_step_part_of_scope(cases[i].scope)), ==,
                    tsp_step_part_name(cases[i].part));
  g_assert_cmpstr(tsp_step_part_name(TSP_STEP_N_PARTS), ==, "?");

  /* after synth's events (0-610), a step of known times: forward 10 + 5
   * (top), backward 20 + 7, optimizer 30; the While holds a gradient op: its
   * self time is forward, the op's backward */
  synth x = synth_new();
  uint32_t fwd = node(x.s, "dense/MatMul", "dense", TS_OP_MATMUL, x.l10, NULL, 0);
  uint32_t bwd = node(x.s, "gradients/MatMul", "gradients", TS_OP_MATMUL, x.l11, NULL, 0);
  uint32_t upd = node(x.s, "Adam/AssignSubVariableOp", "Adam", TS_OP_ASSIGN_SUB_VARIABLE, x.l20, NULL, 0);
  op(&x, TS_OP_MATMUL, fwd, fwd, x.l10, 3, 1, 0, 1000, 1010);
  op(&x, TS_OP_MATMUL, bwd, bwd, x.l11, 3, 2, 0, 1010, 1030);
  op(&x, TS_OP_ASSIGN_SUB_VARIABLE, upd, upd, x.l20, 3, 3, 0, 1030, 1060);
  op(&x, TS_OP_MATMUL, bwd, bwd, x.l11, 3, 5, 4, 1061, 1068);
  op(&x, TS_OP_WHILE, x.w, x.w, x.l20, 3, 4, 0, 1060, 1072);
  tsp_session_stop(x.s);
  tsp_step_split sp = tsp_step_split_compute(x.s, &(tsp_filter){ TSP_MODE_ALL, 1000, 0 });
  g_assert_cmpfloat(sp.self_ns[TSP_STEP_FORWARD], ==, 10 + 5);
  g_assert_cmpfloat(sp.self_ns[TSP_STEP_BACKWARD], ==, 20 + 7);
  g_assert_cmpfloat(sp.self_ns[TSP_STEP_OPTIMIZER], ==, 30);
  g_assert_cmpuint(sp.count[TSP_STEP_FORWARD], ==, 2);
  g_assert_cmpuint(sp.count[TSP_STEP_BACKWARD], ==, 2);
  g_assert_cmpuint(sp.count[TSP_STEP_OPTIMIZER], ==, 1);
  g_assert_cmpfloat(sp.self_total_ns, ==, 72);
  /* a window: only the ops starting in it */
  tsp_step_split late = tsp_step_split_compute(x.s, &(tsp_filter){ TSP_MODE_ALL, 1030, 0 });
  g_assert_cmpfloat(late.self_ns[TSP_STEP_FORWARD], ==, 5);
  g_assert_cmpfloat(late.self_ns[TSP_STEP_BACKWARD], ==, 7);
  g_assert_cmpfloat(late.self_ns[TSP_STEP_OPTIMIZER], ==, 30);
  tsp_session_free(x.s);
}

/* The guide's training loop (two steps), eagerly and traced: each mode's
 * ops split into all three parts, which add up to its op time; eager ops
 * find their scopes through their traced twins. */
static void test_step_split_train(void)
{
  ts_module *m = ts_module_open("seeds");
  g_assert_nonnull(m);
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_module_lookup(m, "train");
  g_assert_nonnull(fn);
  ts_value arg;
  g_assert_true(ts_value_parse("2", &arg));
  int quiet = test_quiet_begin();
  tsp_session *s = tsp_session_new();
  tsp_compare *cmp = tsp_compare_run(s, fn, &arg, 1, 1);
  test_quiet_end(quiet);
  if (!cmp)
    g_error("train: %s", ts_error_peek()->message);
  const tsp_filter *windows[] = { &cmp->eager_window, &cmp->graph_window };
  for (int w = 0; w < 2; w++) {
    tsp_step_split sp = tsp_step_split_compute(s, windows[w]);
    double sum = 0;
    for (int p = 0; p < TSP_STEP_N_PARTS; p++) {
      g_assert_cmpuint(sp.count[p], >, 0);
      g_assert_cmpfloat(sp.self_ns[p], >, 0);
      sum += sp.self_ns[p];
    }
    g_assert_cmpfloat(fabs(sum - sp.self_total_ns), <=, 1e-6 * sp.self_total_ns);
    /* the backward ops are those the scope statistics put under gradients */
    tsp_stats *st = tsp_stats_compute(s, TSP_BY_SCOPE, windows[w]);
    uint64_t gradients = 0, adam = 0;
    for (int i = 0; i < st->n; i++) {
      gradients += g_str_has_prefix(st->rows[i].key, "gradients") ? st->rows[i].count : 0;
      adam += strcmp(st->rows[i].key, "Adam") == 0 ? st->rows[i].count : 0;
    }
    g_assert_cmpuint(sp.count[TSP_STEP_BACKWARD], ==, gradients);
    g_assert_cmpuint(sp.count[TSP_STEP_OPTIMIZER], ==, adam);
    tsp_stats_free(st);
  }
  tsp_compare_free(cmp);
  tsp_session_free(s);
  ts_value_clear(&arg);
  ts_scope_end(scope);
  ts_module_free(m);
}

static char *cli_out(const char *const *argv)
{
  char *out = NULL, *err = NULL;
  int status;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                             &status, NULL));
  if (!g_spawn_check_wait_status(status, NULL))
    g_error("%s %s: %s", argv[1], argv[2], err);
  g_free(err);
  return out;
}

/* The step's parts in `profile` (each mode, the eager one traced first so
 * its ops have scopes) and in `stats` of the trace it wrote; none for a
 * function that does not train. */
static void test_cli_step_split(void)
{
  const char *cli = g_getenv("TRACESCOPE_CLI");
  g_assert_nonnull(cli);
  char *dir = g_dir_make_tmp("test-profiler-XXXXXX", NULL);
  char *trace = g_build_filename(dir, "t.json.gz", NULL);
  const char *modes[] = { "eager", "graph" };
  for (int k = 0; k < 2; k++) {
    const char *argv[] = { cli, "profile", "seeds", "train", "--arg", "2", "--repeat", "1",
                           "--mode", modes[k], "--out", trace, NULL };
    char *out = cli_out(argv);
    g_autofree char *title = g_strdup_printf("\nTraining step (%s; by name scope", modes[k]);
    const char *at = strstr(out, title);
    g_assert_nonnull(at);
    double share = 0;
    const char *parts[] = { "\n  forward ", "\n  backward ", "\n  optimizer " };
    for (int p = 0; p < 3; p++) {
      const char *line = strstr(at, parts[p]);
      g_assert_nonnull(line);
      unsigned long ops;
      double us, pct;
      g_assert_cmpint(sscanf(line + strlen(parts[p]), "%lu %lf %lf%%", &ops, &us, &pct), ==, 3);
      g_assert_cmpuint(ops, >, 0);
      g_assert_cmpfloat(us, >, 0);
      share += pct;
    }
    g_assert_cmpfloat(fabs(share - 100), <, 0.5);
    g_free(out);
  }
  const char *stats[] = { cli, "stats", trace, NULL };
  char *out = cli_out(stats);
  g_assert_nonnull(strstr(out, "\nTraining step (all calls; by name scope"));
  g_assert_nonnull(strstr(out, "\n  backward "));
  g_free(out);
  const char *plain[] = { cli, "profile", "seeds", "simple_nn_layer", "--repeat", "1", NULL };
  out = cli_out(plain);
  g_assert_null(strstr(out, "Training step"));
  g_free(out);
  g_unlink(trace);
  g_rmdir(dir);
  g_free(trace);
  g_free(dir);
}

/* A node path longer than the table's name column keeps its end, the
 * node's own name, after "...": fizzbuzz's innermost print. */
static void test_cli_long_node_paths(void)
{
  const char *argv[] = { g_getenv("TRACESCOPE_CLI"), "profile", "seeds", "fizzbuzz", "--arg", "5",
                         "--by", "node", "--repeat", "1", NULL };
  char *out = NULL, *err = NULL;
  int status;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                             NULL));
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  g_assert_nonnull(strstr(out, "\n  While/body/If/else/FloorMod "));
  g_assert_nonnull(strstr(out, "\n  .../body/If/else/If/else/If/else/PrintV2 "));
  g_free(out);
  g_free(err);
}

static void test_cli_both(void)
{
  const char *cli = g_getenv("TRACESCOPE_CLI");
  g_assert_nonnull(cli);
  const char *fns[][2] = { { "simple_nn_layer", NULL }, { "sum_even", "i32[4]=10,12,15,20" },
                           { "dense_chain", NULL } };
  char *dir = g_dir_make_tmp("test-profiler-XXXXXX", NULL);
  for (size_t f = 0; f < G_N_ELEMENTS(fns); f++) {
    char *trace = g_build_filename(dir, "t.json.gz", NULL), *csv = g_build_filename(dir, "s.csv", NULL);
    /* one thread: ops on the pool's threads (groups, row runs, which a
     * profiled call keeps) add up to more than the wall time */
    const char *argv[18] = { cli, "profile", "seeds", fns[f][0], "--mode", "both", "--repeat", "3",
                             "--out", trace, "--csv", csv, "--threads", "1" };
    int n = 14;
    if (fns[f][1]) {
      argv[n++] = "--arg";
      argv[n++] = fns[f][1];
    }
    char *out = NULL, *err = NULL;
    int status;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                               &status, NULL));
    if (!g_spawn_check_wait_status(status, NULL))
      g_error("%s: %s", fns[f][0], err);
    g_assert_cmpstr(err, ==, "");
    /* each table: its rows add up to its total line */
    char **lines = g_strsplit(out, "\n", -1);
    int tables = 0, compare = 0;
    double sum_self = 0, sum_eager = 0, sum_graph = 0;
    bool in_ops = false, in_compare = false;
    for (char **l = lines; *l; l++) {
      if (g_str_has_prefix(*l, "Top ops by total time")) {
        in_ops = true;
        sum_self = 0;
        l++; /* the heading */
        continue;
      }
      if (g_str_has_prefix(*l, "Eager against graph")) {
        in_compare = true;
        l++;
        continue;
      }
      if (in_ops && g_str_has_prefix(*l, "  total")) {
        g_assert_cmpfloat(fabs(sum_self - column(*l, 2)), <, 0.05 + 1e-3 * sum_self);
        g_assert_cmpfloat(column(*l, 1), >, 0); /* of the wall time: one thread, so at most all */
        g_assert_cmpfloat(column(*l, 1), <=, 100.0);
        in_ops = false;
        tables++;
      } else if (in_ops) {
        sum_self += column(*l, 5);
      } else if (in_compare && g_str_has_prefix(*l, "  ops total")) {
        g_assert_cmpfloat(fabs(sum_eager - column(*l, 2)), <, 0.05 + 1e-3 * sum_eager);
        g_assert_cmpfloat(fabs(sum_graph - column(*l, 1)), <, 0.05 + 1e-3 * sum_graph);
        compare++;
      } else if (in_compare && g_str_has_prefix(*l, "  call (median)")) {
        double speedup = column(*l, 1), eager = column(*l, 3), graph = column(*l, 2);
        g_assert_cmpfloat(fabs(speedup - eager / graph), <, 0.01 + 0.01 * speedup);
        in_compare = false;
      } else if (in_compare && !g_str_has_suffix(*l, " fused")) { /* fused: in the row above */
        bool only = strstr(*l, " only") != NULL;
        sum_eager += column(*l, only ? 4 : 3);
        sum_graph += column(*l, only ? 3 : 2);
      }
    }
    g_assert_cmpint(tables, ==, 2);
    g_assert_cmpint(compare, ==, 1);
    g_strfreev(lines);
    /* the files: a trace that reads back, and CSV rows of both modes */
    GError *error = NULL;
    tsp_session *back = tsp_chrome_import(trace, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(tsp_session_n_events(back), >, 0);
    tsp_session_free(back);
    char *text;
    g_assert_true(g_file_get_contents(csv, &text, NULL, NULL));
    g_assert_true(strstr(text, ",eager,") && strstr(text, ",graph,"));
    g_free(text);
    g_unlink(trace);
    g_unlink(csv);
    g_free(trace);
    g_free(csv);
    g_free(out);
    g_free(err);
  }
  g_rmdir(dir);
  g_free(dir);
}

/* profile --memory: the trace holds the tensor memory counter, and only then. */
static void test_cli_memory(void)
{
  const char *cli = g_getenv("TRACESCOPE_CLI");
  g_assert_nonnull(cli);
  char *dir = g_dir_make_tmp("test-profiler-XXXXXX", NULL);
  char *trace = g_build_filename(dir, "m.json", NULL);
  for (int memory = 0; memory <= 1; memory++) {
    const char *argv[] = { cli, "profile", "seeds", "dense_chain", "--out", trace, memory ? "--memory" : NULL, NULL };
    char *out = NULL, *err = NULL;
    int status;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL));
    if (!g_spawn_check_wait_status(status, NULL))
      g_error("profile --memory: %s", err);
    GError *error = NULL;
    tsp_session *s = tsp_chrome_import(trace, &error);
    g_assert_no_error(error);
    uint64_t n_memory = 0;
    for (int t = 0; t < tsp_session_n_threads(s); t++) {
      tsp_iter it;
      tsp_iter_init(&it, s, t);
      for (const tsp_event *e; (e = tsp_iter_next(&it));)
        n_memory += e->kind == TSP_EVENT_MEMORY;
    }
    if (memory)
      g_assert_cmpuint(n_memory, >, 0);
    else
      g_assert_cmpuint(n_memory, ==, 0);
    tsp_session_free(s);
    g_free(out);
    g_free(err);
  }
  g_unlink(trace);
  g_free(trace);
  g_rmdir(dir);
  g_free(dir);
}

static void test_cli_errors(void)
{
  const char *cli = g_getenv("TRACESCOPE_CLI");
  const char *cases[][8] = {
    { "profile", "seeds", "simple_nn_layer", "--mode", "fast", NULL },
    { "profile", "seeds", "simple_nn_layer", "--out", "trace.txt", NULL },
    { "profile", "seeds", "simple_nn_layer", "--by", "colour", NULL },
    { "profile", "seeds", "simple_nn_layer", "--repeat", "0", NULL },
    { "profile", "seeds", NULL },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const char *argv[10] = { cli };
    for (int k = 0; cases[i][k]; k++)
      argv[k + 1] = cases[i][k];
    char *out = NULL, *err = NULL;
    int status;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                               &status, NULL));
    g_assert_false(g_spawn_check_wait_status(status, NULL));
    g_assert_true(g_str_has_prefix(err, "tracescope-cli: error: "));
    g_assert_cmpstr(out, ==, "");
    g_free(out);
    g_free(err);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/profiler/event-size", test_event_size);
  g_test_add_func("/profiler/percentile", test_percentile);
  g_test_add_func("/profiler/stats/by-op", test_stats_by_op);
  g_test_add_func("/profiler/stats/charge-back", test_stats_charge_back);
  g_test_add_func("/profiler/stats/nested", test_stats_nested);
  g_test_add_func("/profiler/stats/torch", test_stats_torch);
  g_test_add_func("/profiler/call-tree", test_call_tree);
  g_test_add_func("/profiler/stats/calls", test_calls);
  g_test_add_func("/profiler/compare/fused", test_compare_fused);
  g_test_add_func("/profiler/diff", test_diff);
  g_test_add_func("/profiler/threads", test_threads);
  g_test_add_func("/profiler/restart-same-chunk", test_restart_same_chunk);
  g_test_add_func("/profiler/losses", test_losses);
  g_test_add_func("/profiler/profiled-schedule", test_profiled_schedule);
  g_test_add_func("/profiler/row-run-counted-once", test_row_run_counted_once);
  g_test_add_func("/profiler/stats/node-paths", test_node_paths);
  g_test_add_func("/profiler/seeds-compare", test_seeds_compare);
  g_test_add_func("/profiler/chrome/round-trip", test_round_trip);
  g_test_add_func("/profiler/chrome/foreign", test_foreign);
  g_test_add_func("/profiler/chrome/numbers", test_numbers);
  g_test_add_func("/profiler/chrome/escapes", test_escapes);
  g_test_add_func("/profiler/chrome/large", test_large);
  g_test_add_func("/profiler/chrome/hostile", test_hostile);
  g_test_add_func("/profiler/csv", test_csv);
  g_test_add_func("/profiler/serial/round-trip", test_serial_round_trip);
  g_test_add_func("/profiler/serial/corrupt", test_serial_corrupt);
  g_test_add_func("/profiler/step/parts", test_step_parts);
  g_test_add_func("/profiler/step/train", test_step_split_train);
  g_test_add_func("/profiler/cli/both", test_cli_both);
  g_test_add_func("/profiler/cli/long-node-paths", test_cli_long_node_paths);
  g_test_add_func("/profiler/cli/step-split", test_cli_step_split);
  g_test_add_func("/profiler/cli/memory", test_cli_memory);
  g_test_add_func("/profiler/cli/errors", test_cli_errors);
  return g_test_run();
}
