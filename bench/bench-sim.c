/* bench-sim.c — what graph mode buys on a device: the GPU bench's
 * workloads, power(x,100) 10x10 and sequential_model (100 x Dense(64)),
 * eagerly and as a graph on the CPU and on SIM:0, the simulated GPU, whose
 * launches cost TRACESCOPE_SIM_LAUNCH_US of host time each (argument 1,
 * default 10 µs): eagerly every op is a launch, a graph run on the device
 * is one plan submission, replayed as captured once its capture allows it
 * (exec/device_plan.c: the calls that replayed are counted).  The fastest of
 * rounds, each call waiting for the device (its result read).  The
 * simulated device runs the CPU kernels on one thread of its own: its
 * times say what launching costs, not what a GPU would compute.  A
 * benchmark, not a test. */
#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <tracescope-backend.h>
#include <tracescope.h>

#define ROUNDS 5
#define CALLS 20

static double per_call_us(ts_function *fn, const ts_value *args, int n, const ts_backend *b,
                          bool eager)
{
  ts_run_functions_eagerly(eager);
  double best = -1;
  TS_DEVICE_SCOPE(b) {
    for (int r = 0; r < ROUNDS + 1; r++) { /* the first round warms up (traces, captures) */
      uint64_t t0 = ts_now_ns();
      for (int i = 0; i < CALLS; i++) {
        ts_scope *scope = ts_scope_begin();
        ts_tensor *y = ts_function_call(fn, args, n);
        if (!y || !ts_backend_synchronize(b))
          g_error("%s on %s: %s", ts_function_name(fn), ts_backend_name(b),
                  ts_error_peek()->message);
        ts_scope_end(scope);
      }
      double us = (double)(ts_now_ns() - t0) / 1e3 / CALLS;
      if (r > 0 && (best < 0 || us < best))
        best = us;
    }
  }
  ts_run_functions_eagerly(false);
  return best;
}

int main(int argc, char **argv)
{
  const char *cost = argc > 1 ? argv[1] : "10";
  g_setenv("TRACESCOPE_DEVICES", "sim", TRUE);
  g_setenv("TRACESCOPE_SIM_LAUNCH_US", cost, TRUE);
  /* The model's layers make their variables where they first run, and a
   * device reading the CPU's would copy every weight in on every call: each
   * device gets the seeds of its own (a copy of the module, its own layers). */
  ts_module *mods[2] = { ts_module_open("seeds"), NULL };
  char *copy = NULL, *bytes = NULL;
  gsize size = 0;
  int fd = mods[0] ? g_file_open_tmp("bench-sim-seeds-XXXXXX.so", &copy, NULL) : -1;
  if (fd >= 0) {
    close(fd);
    if (g_file_get_contents(ts_module_path(mods[0]), &bytes, &size, NULL) &&
        g_file_set_contents(copy, bytes, (gssize)size, NULL))
      mods[1] = ts_module_open(copy);
    g_free(bytes);
  }
  const char *names[] = { "power", "sequential_model" };
  const char *labels[] = { "power(x,100) 10x10", "100 x Dense(64) b=20" };
  ts_function *fns[2][2] = { { NULL } }; /* per device, per workload */
  ts_value args[2][2];
  int n_args[2] = { 2, 1 };
  for (int d = 0; d < 2; d++)
    for (int w = 0; w < 2; w++)
      fns[d][w] = mods[d] ? ts_module_lookup(mods[d], names[w]) : NULL;
  args[0][1] = TS_INT_VALUE(100);
  if (!fns[1][0] || !fns[1][1] || !ts_value_parse("f32[10,10]:uniform", &args[0][0]) ||
      !ts_value_parse("f32[20,28,28]:uniform", &args[1][0])) {
    fprintf(stderr, "bench-sim: %s\n", ts_failed() ? ts_error_peek()->message : "no seeds");
    return 1;
  }
  /* power's x in [0, 0.2): rows sum to about 1, so x^100 stays finite */
  ts_tensor *x = args[0][0].tensor;
  for (int64_t i = 0; i < ts_tensor_size(x); i++)
    ((float *)ts_tensor_data(x))[i] *= 0.2f;
  printf("µs per call (fastest of %d rounds of %d calls); SIM:0 launch cost %s µs\n", ROUNDS,
         CALLS, cost);
  printf("  %-22s %-8s %12s %12s %11s %8s\n", "workload", "device", "eager", "graph",
         "eager/graph", "replays");
  const ts_backend *devices[] = { ts_backend_cpu(), ts_backend_by_name("SIM:0") };
  for (int w = 0; w < 2; w++)
    for (int d = 0; d < 2; d++) {
      double eager = per_call_us(fns[d][w], args[w], n_args[w], devices[d], true);
      double graph = per_call_us(fns[d][w], args[w], n_args[w], devices[d], false);
      ts_schedule sched = { 0 };
      ts_concrete_schedule(ts_function_get_concrete(fns[d][w], args[w], n_args[w]), &sched);
      printf("  %-22s %-8s %12.1f %12.1f %10.2fx %8" G_GINT64_FORMAT "\n", labels[w],
             ts_backend_name(devices[d]), eager, graph, eager / graph, sched.n_replays);
    }
  ts_value_clear(&args[0][0]);
  ts_value_clear(&args[1][0]);
  for (int d = 0; d < 2; d++)
    ts_module_free(mods[d]);
  g_unlink(copy);
  g_free(copy);
  return 0;
}
