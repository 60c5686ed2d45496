/* exec/device_plan.c — a graph run on a device as one submission: the
 * backend's whole-plan entry (graph_plan_create/update/compute/free,
 * tracescope-backend.h).  The first run on a device captures the steps'
 * launches into a plan; later runs capture again (new buffers, perhaps
 * new shapes) and the backend updates and replays what it holds, as a
 * CUDA Graph is updated and launched.  Host work (inference, allocation,
 * op events) still happens per step; the launches go out together.
 *
 * A graph with If or While nodes, whose conditions are read on the host
 * mid-run, is captured in segments: the steps before such a node are one
 * plan, submitted before it runs, the steps after it the next; the node's
 * subgraphs are executables of their own and capture their own plans (a
 * While's body is one plan replayed on every iteration).  A run inside
 * another's capture is not captured. */
#include "run.h"

/* An executable's plan and the backend it is for, claimed by one run at
 * a time (concurrent runs of one executable go step by step). */
struct ts_device_plan {
  const ts_backend *backend;
  ts_graph_plan *plan;
};

static void device_plan_free(ts_device_plan *dp)
{
  if (dp) {
    dp->backend->iface.graph_plan_free(dp->backend, dp->plan);
    g_free(dp);
  }
}

ts_device_plan *ts__device_plan_begin(ts_executable *e, int segment)
{
  ts_context *c = ts__context();
  const ts_backend *b = c->device;
  if (!b || !b->iface.graph_plan_create || c->plan_recording)
    return NULL;
  ts_device_plan **slot = &e->device_plans[segment];
  ts_device_plan *dp = __atomic_exchange_n(slot, NULL, __ATOMIC_ACQ_REL);
  if (dp && dp->backend != b)
    g_clear_pointer(&dp, device_plan_free);
  if (dp && !b->iface.graph_plan_update(b, dp->plan)) {
    /* not replayable (the host read its results mid-run): step by step */
    device_plan_free(__atomic_exchange_n(slot, dp, __ATOMIC_ACQ_REL));
    return NULL;
  }
  if (!dp) {
    ts_graph_plan *gp = b->iface.graph_plan_create(b);
    if (!gp)
      return NULL;
    dp = g_new(ts_device_plan, 1);
    *dp = (ts_device_plan){ b, gp };
  }
  c->plan_recording = true;
  return dp;
}

bool ts__device_plan_end(ts_executable *e, int segment, ts_device_plan *dp)
{
  if (!dp)
    return true;
  ts__context()->plan_recording = false;
  bool ok = dp->backend->iface.graph_plan_compute(dp->backend, dp->plan);
  device_plan_free(__atomic_exchange_n(&e->device_plans[segment], dp, __ATOMIC_ACQ_REL));
  return ok;
}

void ts__device_plan_free(ts_executable *e)
{
  for (int i = 0; i < e->n_segments; i++)
    device_plan_free(e->device_plans[i]);
  g_free(e->device_plans);
}
