/* bench-train.c — tracescope-bench-train: our side of the training bench
 * (scripts/bench-train): steps per second of the guide's training step
 * (Reshape(784) -> Dense(100, relu) -> Dense(100, relu) -> Dense(10),
 * sparse softmax cross-entropy from logits, Adam, the running accuracy) at
 * batch 100 on Fashion-MNIST, eagerly and as a traced step function, at
 * the thread count the environment says (the script runs it once per
 * count); and, with --memory, the process's RSS and the engine's live CPU
 * bytes over 10,000 graph-mode steps.  With --export DIR it writes the
 * model's initial weights and the batches as .npy for the PyTorch side
 * (bench/peers/torch_train.py), which starts from the same numbers.
 * Prints one JSON object.  Steps/s is the best of REPEATS runs of STEPS
 * steps (after a warm-up), eager and graph runs alternating: on a shared
 * machine the best is what the code costs with the least interference. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope-train.h>

enum { BATCH = 100, N_BATCHES = 20, STEPS = 100, REPEATS = 9, MEMORY_STEPS = 10000 };

static struct {
  ts_sequential *model;
  ts_optimizer *opt;
  ts_metric *accuracy;
  ts_tensor *x[N_BATCHES], *y[N_BATCHES];
} b;

static void die_on_error(const char *what)
{
  if (ts_failed()) {
    fprintf(stderr, "tracescope-bench-train: %s: %s\n", what, ts_error_peek()->message);
    exit(1);
  }
}

static ts_tensor *train_one_step(ts_tensor *x, ts_tensor *y)
{
  ts_tape *tape = ts_tape_new(false);
  ts_tensor *logits = ts_sequential_call(b.model, x, true);
  ts_tensor *loss = ts_loss_sparse_softmax_cross_entropy(y, logits);
  ts_tape_stop(tape);
  int n = ts_sequential_n_variables(b.model);
  ts_tensor *vars[8], *grads[8];
  for (int i = 0; i < n; i++)
    vars[i] = ts_sequential_variable(b.model, i);
  if (ts_tape_gradient(tape, loss, vars, n, grads, TS_UNCONNECTED_NONE))
    ts_optimizer_apply(b.opt, grads, vars, n);
  ts_tape_free(tape);
  ts_metric_update(b.accuracy, y, logits);
  return loss;
}

static ts_tensor *step_fn(ts_call *c)
{
  return train_one_step(ts_arg(c, 0), ts_arg(c, 1));
}

/* Runs steps steps (batches in turn); ns taken. */
static uint64_t run_steps(ts_function *fn, bool eager, int steps, int *next)
{
  uint64_t t0 = ts_now_ns();
  for (int s = 0; s < steps; s++) {
    ts_scope *scope = ts_scope_begin();
    int k = (*next)++ % N_BATCHES;
    if (eager) {
      train_one_step(b.x[k], b.y[k]);
    } else {
      ts_value args[2] = { TS_TENSOR_VALUE(b.x[k]), TS_TENSOR_VALUE(b.y[k]) };
      ts_function_call(fn, args, 2);
    }
    ts_scope_end(scope);
    die_on_error(eager ? "eager step" : "graph step");
  }
  return ts_now_ns() - t0;
}

/* Steps/s eagerly (rate[0]) and as a graph (rate[1]): runs of the two
 * modes alternate, so that both meet the same load on a shared machine;
 * each mode's best run counts. */
static void steps_per_s(ts_function *fn, double rate[2])
{
  int next[2] = { 0, 0 };
  uint64_t best[2] = { UINT64_MAX, UINT64_MAX };
  for (int mode = 0; mode < 2; mode++)
    run_steps(fn, mode == 0, STEPS / 4, &next[mode]); /* warm-up (and the trace) */
  for (int r = 0; r < REPEATS; r++)
    for (int mode = 0; mode < 2; mode++) {
      uint64_t ns = run_steps(fn, mode == 0, STEPS, &next[mode]);
      best[mode] = ns < best[mode] ? ns : best[mode];
    }
  for (int mode = 0; mode < 2; mode++)
    rate[mode] = STEPS / ((double)best[mode] * 1e-9);
}

static long rss_kb(void)
{
  long kb = -1;
  char *text = NULL;
  if (g_file_get_contents("/proc/self/status", &text, NULL, NULL)) {
    const char *p = strstr(text, "VmRSS:");
    if (p)
      kb = strtol(p + 6, NULL, 10);
  }
  g_free(text);
  return kb;
}

static int64_t live_bytes = -1;
static void on_memory(const ts_event *ev, void *user_data)
{
  if (strcmp(ev->memory.device, "CPU") == 0)
    live_bytes = ev->memory.live_bytes;
}

/* The initial weights (Keras layout: kernel [in, out]) and the batches. */
static void export_data(const char *dir)
{
  g_mkdir_with_parents(dir, 0755);
  ts_scope *scope = ts_scope_begin();
  for (int i = 0; i < ts_sequential_n_variables(b.model); i++) {
    char *path = g_strdup_printf("%s/var-%d.npy", dir, i);
    ts_npy_save(path, ts_read(ts_sequential_variable(b.model, i)));
    g_free(path);
  }
  for (int k = 0; k < N_BATCHES; k++) {
    char *px = g_strdup_printf("%s/x-%d.npy", dir, k), *py = g_strdup_printf("%s/y-%d.npy", dir, k);
    ts_npy_save(px, b.x[k]);
    ts_npy_save(py, b.y[k]);
    g_free(px);
    g_free(py);
  }
  ts_scope_end(scope);
  die_on_error("export");
}

int main(int argc, char **argv)
{
  const char *export_dir = NULL;
  bool memory = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--export") == 0 && i + 1 < argc)
      export_dir = argv[++i];
    else if (strcmp(argv[i], "--memory") == 0)
      memory = true;
    else {
      fprintf(stderr, "usage: tracescope-bench-train [--export DIR] [--memory]\n");
      return 2;
    }
  }
  ts_tensor *images = NULL, *labels = NULL;
  ts_fashion_mnist_load("train", &images, &labels);
  die_on_error("Fashion-MNIST");
  for (int k = 0; k < N_BATCHES; k++) {
    ts_tensor *x = ts_slice(images, TS_INTS(k * BATCH, 0, 0), TS_INTS(BATCH, -1, -1));
    b.x[k] = ts_tensor_ref(ts_div(ts_cast(x, TS_F32), ts_scalar_f32(255)));
    b.y[k] = ts_tensor_ref(ts_cast(ts_slice(labels, TS_INTS(k * BATCH), TS_INTS(BATCH)), TS_I64));
  }
  ts_layer *layers[] = {
    ts_reshape_layer_new(NULL, TS_SHAPE(28 * 28)),
    ts_dense_new(NULL, 100, TS_ACTIVATION_RELU, 1),
    ts_dense_new(NULL, 100, TS_ACTIVATION_RELU, 2),
    ts_dense_new(NULL, 10, TS_ACTIVATION_LINEAR, 3),
  };
  b.model = ts_sequential_new(layers, 4);
  b.opt = ts_adam_new(TS_ADAM_DEFAULTS);
  b.accuracy = ts_accuracy_new(NULL);
  ts_sequential_call(b.model, b.x[0], true); /* builds the weights */
  die_on_error("model");
  if (export_dir) {
    export_data(export_dir);
    printf("{\"exported\": \"%s\"}\n", export_dir);
    return 0;
  }
  ts_function *fn = ts_function_new("train_step", step_fn, "x, y");
  if (memory) {
    int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_MEMORY), on_memory, NULL);
    int next = 0;
    run_steps(fn, false, 100, &next);
    long rss0 = rss_kb();
    int64_t live0 = live_bytes;
    run_steps(fn, false, MEMORY_STEPS - 100, &next);
    printf("{\"steps\": %d, \"rss_kb_100\": %ld, \"rss_kb_end\": %ld, "
           "\"live_bytes_100\": %lld, \"live_bytes_end\": %lld}\n",
           MEMORY_STEPS, rss0, rss_kb(), (long long)live0, (long long)live_bytes);
    ts_listener_remove(id);
  } else {
    double rate[2];
    steps_per_s(fn, rate);
    printf("{\"threads\": %d, \"eager_steps_per_s\": %.2f, \"graph_steps_per_s\": %.2f}\n",
           ts_get_threads(), rate[0], rate[1]);
  }
  ts_function_free(fn);
  return 0;
}
