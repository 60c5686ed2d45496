/* bench-sim.c — what graph mode buys on a device: sequential_model (100 x
 * Dense(64)) eagerly and as a graph on the CPU and on SIM:0, the simulated
 * GPU, whose launches cost TRACESCOPE_SIM_LAUNCH_US of host time each
 * (argument 1, default 10 µs): eagerly every op is a launch, a graph run on
 * the device is one plan submission (exec/device_plan.c).  The fastest of
 * rounds, each call waiting for the device (its result read).  The
 * simulated device runs the CPU kernels on one thread of its own: its
 * times say what launching costs, not what a GPU would compute.  A
 * benchmark, not a test. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <tracescope-backend.h>
#include <tracescope.h>

#define ROUNDS 5
#define CALLS 20

static double per_call_us(ts_function *fn, const ts_value *x, const ts_backend *b, bool eager)
{
  ts_run_functions_eagerly(eager);
  double best = -1;
  TS_DEVICE_SCOPE(b) {
    for (int r = 0; r < ROUNDS + 1; r++) { /* the first round warms up (traces) */
      uint64_t t0 = ts_now_ns();
      for (int i = 0; i < CALLS; i++) {
        ts_scope *scope = ts_scope_begin();
        ts_tensor *y = ts_function_call(fn, x, 1);
        if (!y || !ts_backend_synchronize(b))
          g_error("sequential_model on %s: %s", ts_backend_name(b), ts_error_peek()->message);
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
  ts_module *m = ts_module_open("seeds");
  ts_function *fn = m ? ts_module_lookup(m, "sequential_model") : NULL;
  ts_value x;
  if (!fn || !ts_value_parse("f32[20,28,28]:uniform", &x)) {
    fprintf(stderr, "bench-sim: %s\n", ts_failed() ? ts_error_peek()->message : "no seeds");
    return 1;
  }
  printf("sequential_model, batch 20, µs per call (fastest of %d rounds of %d calls); "
         "SIM:0 launch cost %s µs\n", ROUNDS, CALLS, cost);
  printf("  %-8s %12s %12s %10s\n", "device", "eager", "graph", "eager/graph");
  const ts_backend *devices[] = { ts_backend_cpu(), ts_backend_by_name("SIM:0") };
  for (int d = 0; d < 2; d++) {
    double eager = per_call_us(fn, &x, devices[d], true);
    double graph = per_call_us(fn, &x, devices[d], false);
    printf("  %-8s %12.1f %12.1f %9.2fx\n", ts_backend_name(devices[d]), eager, graph, eager / graph);
  }
  ts_value_clear(&x);
  ts_module_free(m);
  return 0;
}
