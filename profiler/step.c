/* step.c — a training step split into forward, backward and optimizer
 * time by name scope (tracescope-profiler.h). */
#include "profiler-private.h"

#include <string.h>
#include <tracescope-train.h>

static const char *const PART_NAMES[TSP_STEP_N_PARTS] = {
  [TSP_STEP_FORWARD] = "forward",
  [TSP_STEP_BACKWARD] = "backward",
  [TSP_STEP_OPTIMIZER] = "optimizer",
};

const char *tsp_step_part_name(tsp_step_part part)
{
  return part >= 0 && part < TSP_STEP_N_PARTS ? PART_NAMES[part] : "?";
}

/* Backward wins: the gradient of an op inside an optimizer's scope is still
 * backward time. */
tsp_step_part tsp_step_part_of_scope(const char *scope)
{
  if (!scope)
    return TSP_STEP_FORWARD;
  g_auto(GStrv) parts = g_strsplit(scope, "/", -1);
  tsp_step_part part = TSP_STEP_FORWARD;
  for (char **p = parts; *p; p++) {
    if (strcmp(*p, "gradients") == 0)
      return TSP_STEP_BACKWARD;
    if (ts_optimizer_scope_is(*p))
      part = TSP_STEP_OPTIMIZER;
  }
  return part;
}

tsp_step_split tsp_step_split_compute(const tsp_session *s, const tsp_filter *f)
{
  tsp_step_split split = { 0 };
  tsp_stats *st = tsp_stats_compute(s, TSP_BY_SCOPE, f);
  for (int i = 0; i < st->n; i++) {
    tsp_step_part part = tsp_step_part_of_scope(st->rows[i].key); /* "(top)": forward */
    split.self_ns[part] += st->rows[i].self_ns;
    split.count[part] += st->rows[i].count;
  }
  split.self_total_ns = st->self_ns;
  tsp_stats_free(st);
  return split;
}
