/* schedule.c — inter-op parallelism: which steps of a plan run at once.
 *
 * Steps are put in levels: a step's level is one more than the highest of
 * the steps it reads (data and control inputs).  Steps of one level never
 * read one another, so the heavy ones among them can run together, each
 * on a thread of the pool.  Ops with side effects (and random ones, which
 * draw from a shared state) keep their order: each is put after the
 * previous one and after every variable read before it, and a read after
 * the last of them before it.  These rules stand for the control edges
 * tracing chains such ops with in program order (reads too, so a model's
 * weight reads would otherwise put each branch a level after the last).
 * Only pure compute runs in a group.
 *
 * What is worth a thread: a step whose static shapes say it does at least
 * TS_HEAVY_WORK (flops for MatMul and Conv2D, elements read and written for
 * the others), about ten microseconds.  A level's heavy steps make a group
 * when there are two or more and the biggest is at most two thirds of
 * their work: one op far bigger than the rest runs better alone, split
 * across the threads by its own kernel (intra-op). */
#include "exec.h"

#include <math.h>


static double elements(const ts_info *info)
{
  int64_t n;
  if (info->shape.rank < 0 || !ts__shape_product(info->shape.dim, info->shape.rank, &n) || n < 0)
    return -1;
  return (double)n;
}

static const ts_info *input_info(const ts_graph *g, const ts_node *n, int i)
{
  const ts_node *src = ts__graph_node(g, n->inputs[i].node);
  return &src->outputs[n->inputs[i].index];
}

double ts__step_work(const ts_graph *g, const ts_node *n)
{
  if (n->n_outputs < 1)
    return 0;
  double out = elements(&n->outputs[0]);
  if (out < 0)
    return 0;
  switch (n->op) {
  case TS_OP_MATMUL:
  case TS_OP_FUSED_MATMUL: {
    /* a [m,k] and b [k,n] into c [m,n] (batched alike): a*b/c = batch k^2 */
    double a = elements(input_info(g, n, 0)), b = elements(input_info(g, n, 1));
    return a < 0 || b < 0 ? 0 : 2 * sqrt(a * b * out);
  }
  case TS_OP_CONV2D:
  case TS_OP_FUSED_CONV2D: {
    /* each output element: kh * kw * c multiply-adds; the filter is [kh, kw, c, o] */
    const ts_info *f = input_info(g, n, 1);
    double fe = elements(f);
    return fe <= 0 || f->shape.rank != 4 ? 0 : 2 * out * fe / (double)f->shape.dim[3];
  }
  default: {
    double work = out;
    for (int i = 0; i < n->n_inputs; i++) {
      double e = elements(input_info(g, n, i));
      if (e < 0)
        return 0;
      work += e;
    }
    return work;
  }
  }
}

/* Must the step keep its place among the others with effects? */
static bool has_effects(const ts_node *n)
{
  const ts_op_def *def = ts__op_def(n->op);
  return n->op != TS_OP_READ_VARIABLE &&
         ((def->flags & (TS_OPF_STATEFUL | TS_OPF_RANDOM)) || n->stateful);
}

/* May the step run beside others? */
static bool pure(const ts_node *n)
{
  const ts_op_def *def = ts__op_def(n->op);
  return !(def->flags & (TS_OPF_STATEFUL | TS_OPF_INPUT | TS_OPF_VALUE | TS_OPF_CONTROL_FLOW |
                         TS_OPF_ALIAS | TS_OPF_ANY_DTYPE | TS_OPF_VARIABLE | TS_OPF_RANDOM)) &&
         !n->stateful && !n->n_subgraphs;
}

typedef struct step_info {
  int step, level;
  double work;
  bool heavy;
} step_info;

static gint by_level(gconstpointer a, gconstpointer b)
{
  const step_info *x = a, *y = b;
  if (x->level != y->level)
    return (x->level > y->level) - (x->level < y->level);
  if (x->heavy != y->heavy) /* a level's light steps first, then its group */
    return x->heavy ? 1 : -1;
  return (x->step > y->step) - (x->step < y->step); /* as traced */
}

int ts__schedule(const ts_graph *g, int *steps, int n_steps, int *group_end)
{
  for (int s = 0; s < n_steps; s++)
    group_end[s] = 0;
  if (n_steps < 2)
    return 0;
  int n_nodes = (int)g->nodes->len;
  int *level_of = g_new0(int, n_nodes); /* per node id; presets stay at level 0 */
  step_info *info = g_new(step_info, n_steps);
  int last_effect = 0, last_read = 0, max_level = 0;
  for (int s = 0; s < n_steps; s++) {
    const ts_node *n = ts__graph_node(g, steps[s]);
    int level = 0;
    for (int i = 0; i < n->n_inputs; i++)
      level = MAX(level, level_of[n->inputs[i].node]);
    bool effects = has_effects(n), is_pure = pure(n), ordered = effects || n->op == TS_OP_READ_VARIABLE;
    for (int i = 0; i < n->n_control; i++) {
      const ts_node *src = ts__graph_node(g, n->control[i]);
      if (!(ordered && (has_effects(src) || src->op == TS_OP_READ_VARIABLE)))
        level = MAX(level, level_of[n->control[i]]);
    }
    if (effects)
      level = MAX(level, MAX(last_effect, last_read));
    else if (n->op == TS_OP_READ_VARIABLE)
      level = MAX(level, last_effect);
    level_of[n->id] = ++level;
    if (effects)
      last_effect = level;
    else if (n->op == TS_OP_READ_VARIABLE)
      last_read = MAX(last_read, level);
    max_level = MAX(max_level, level);
    double work = is_pure ? ts__step_work(g, n) : 0;
    info[s] = (step_info){ steps[s], level, work, work >= TS_HEAVY_WORK };
  }
  /* per level: heavy steps' count, work and biggest */
  int *count = g_new0(int, max_level + 1);
  double *total = g_new0(double, max_level + 1), *biggest = g_new0(double, max_level + 1);
  for (int s = 0; s < n_steps; s++)
    if (info[s].heavy) {
      int l = info[s].level;
      count[l]++;
      total[l] += info[s].work;
      biggest[l] = MAX(biggest[l], info[s].work);
    }
  int n_groups = 0;
  for (int l = 1; l <= max_level; l++) {
    if (count[l] >= 2 && biggest[l] * 3 <= total[l] * 2)
      n_groups++;
    else
      count[l] = 0;
  }
  if (n_groups) {
    for (int s = 0; s < n_steps; s++)
      info[s].heavy = info[s].heavy && count[info[s].level] > 0;
    /* levels in order keep every step after what it reads */
    qsort(info, (size_t)n_steps, sizeof *info, (int (*)(const void *, const void *))by_level);
    for (int s = 0; s < n_steps; s++)
      steps[s] = info[s].step;
    for (int s = 0; s < n_steps;) {
      int e = s + 1;
      while (info[s].heavy && e < n_steps && info[e].heavy && info[e].level == info[s].level)
        e++;
      if (e - s >= 2)
        group_end[s] = e;
      s = e;
    }
  }
  g_free(count);
  g_free(total);
  g_free(biggest);
  g_free(info);
  g_free(level_of);
  return n_groups;
}
