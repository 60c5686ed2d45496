/* test-worker-debug.c — the step debugger through the worker: a debug call
 * on the worker's debuggee thread, stops with their tensors, steering,
 * history, and stopping — with the worker's calls refused meanwhile and
 * working again after. */
#include <string.h>

#include "test-wait.h"
#include "ts-worker-debug.h"

/* Waits for the async call started with store_result on *slot, and takes
 * it (owned; *slot is NULL again). */
static GAsyncResult *take_result(GAsyncResult **slot, const char *what)
{
  wait_result(slot, what);
  return g_steal_pointer(slot);
}

static TsWorker *start_worker(void)
{
  TsWorker *w = ts_worker_new(0);
  GAsyncResult *res = NULL;
  g_autoptr(GError) error = NULL;
  ts_worker_start_async(w, NULL, store_result, &res);
  g_autoptr(GAsyncResult) started = take_result(&res, "the worker to start");
  g_assert_true(ts_worker_start_finish(w, started, &error));
  g_autofree char *title = NULL, *path = NULL;
  g_autoptr(GPtrArray) functions = NULL;
  ts_worker_open_async(w, "seeds", NULL, store_result, &res);
  g_autoptr(GAsyncResult) opened = take_result(&res, "the seeds to open");
  g_assert_true(ts_worker_open_finish(w, opened, &title, &path, &functions, &error));
  g_assert_no_error(error);
  return w;
}

static gboolean is_dead(gpointer data)
{
  return !ts_worker_get_alive(data) && ts_worker_get_death(data) != NULL;
}

static void stop_worker(TsWorker *w)
{
  ts_worker_close(w);
  test_wait_for(is_dead, w, "the worker to end");
  g_assert_true(ts_worker_get_death(w)->expected);
  g_object_unref(w);
}

static const char *debug_device; /* where debug_start runs the call; NULL: the CPU */

static GArray *debug_start(TsWorker *w, const char *function, const char *const *args,
                           const char *const *breakpoints, gboolean run, GError **error)
{
  GAsyncResult *res = NULL;
  ts_worker_debug_start_async(w, 7, function, args, breakpoints, TRUE, debug_device, run, NULL, store_result,
                              &res);
  g_autoptr(GAsyncResult) done = take_result(&res, "DebugStart");
  return ts_worker_debug_start_finish(w, done, error);
}

static TsDebugStop *debug_wait(TsWorker *w)
{
  GAsyncResult *res = NULL;
  g_autoptr(GError) error = NULL;
  ts_worker_debug_wait_async(w, NULL, store_result, &res);
  g_autoptr(GAsyncResult) done = take_result(&res, "a stop");
  TsDebugStop *stop = ts_worker_debug_wait_finish(w, done, &error);
  g_assert_no_error(error);
  return stop;
}

static GVariant *command(TsWorker *w, const char *method, GVariant *params, GError **error)
{
  GAsyncResult *res = NULL;
  ts_worker_debug_command_async(w, method, params, NULL, store_result, &res);
  g_autoptr(GAsyncResult) done = take_result(&res, method);
  return ts_worker_debug_command_finish(w, done, error);
}

static void resume(TsWorker *w, const char *action)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = command(w, "DebugResume", g_variant_new("(s)", action), &error);
  g_assert_no_error(error);
}

/* Every element of a f32 tensor equals v. */
static void assert_all(const TsDebugTensor *t, float v)
{
  g_assert_cmpint(t->dtype, ==, TS_F32);
  g_assert_nonnull(t->data);
  gsize size;
  const float *x = g_bytes_get_data(t->data, &size);
  g_assert_cmpuint(size, ==, 100 * sizeof(float));
  for (int i = 0; i < 100; i++)
    g_assert_cmpfloat(x[i], ==, v);
}

/* power(ones, 3) stops at every MatMul with the running product as its
 * second input, and finishes with the result. */
static void test_breakpoints(void)
{
  TsWorker *w = start_worker();
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) ids = debug_start(w, "power", (const char *const[]){ "f32[10,10]:ones", "3", NULL },
                                      (const char *const[]){ "MatMul", NULL }, TRUE, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ids->len, ==, 1);
  int id = g_array_index(ids, int, 0);
  const float product[] = { 0, 1, 10 }; /* MatMul k's second input (k = 0: the identity) */
  for (int k = 0; k < 3; k++) {
    g_autoptr(TsDebugStop) stop = debug_wait(w);
    g_assert_cmpstr(stop->reason, ==, "breakpoint");
    g_assert_cmpint(stop->breakpoint, ==, id);
    g_assert_nonnull(stop->op);
    g_assert_cmpstr(stop->op->op, ==, "MatMul");
    g_assert_cmpstr(stop->op->device, ==, debug_device ? debug_device : "CPU");
    g_assert_nonnull(stop->op->file);
    g_assert_cmpuint(stop->op->inputs->len, ==, 2);
    g_assert_cmpuint(stop->op->outputs->len, ==, 0);
    assert_all(g_ptr_array_index(stop->op->inputs, 0), 1);
    if (k > 0) { /* the last MatMul's product, made where the ops run */
      assert_all(g_ptr_array_index(stop->op->inputs, 1), product[k]);
      g_assert_cmpstr(((TsDebugTensor *)g_ptr_array_index(stop->op->inputs, 1))->device, ==,
                      debug_device ? debug_device : "CPU");
    }
    g_assert_cmpstr(((TsDebugTensor *)g_ptr_array_index(stop->op->inputs, 1))->shape_text, ==, "f32[10,10]");
    /* the call stack names the function */
    g_assert_cmpuint(stop->op->frames->len, >=, 1);
    g_assert_cmpstr(((TsDebugFrame *)g_ptr_array_index(stop->op->frames, 0))->name, ==, "power");
    if (k == 2) {
      /* step back: the first MatMul is in the history, as it was */
      g_assert_cmpint(stop->history_n, >=, 2);
      gboolean found = FALSE;
      for (int i = 0; i < stop->history_n && !found; i++) {
        GAsyncResult *res = NULL;
        ts_worker_debug_history_async(w, i, NULL, store_result, &res);
        g_autoptr(GAsyncResult) done = take_result(&res, "a history entry");
        g_autoptr(TsDebugOp) op = ts_worker_debug_history_finish(w, done, &error);
        g_assert_no_error(error);
        if (strcmp(op->op, "MatMul") == 0 && op->outputs->len == 1) {
          assert_all(g_ptr_array_index(op->outputs, 0), 1);
          found = TRUE;
        }
      }
      g_assert_true(found);
    }
    resume(w, "continue");
  }
  g_autoptr(TsDebugStop) end = debug_wait(w);
  g_assert_cmpstr(end->reason, ==, "finished");
  g_assert_null(end->error);
  g_assert_nonnull(end->result);
  assert_all(end->result, 100);
  g_assert_nonnull(strstr(end->result_text, "100."));
  stop_worker(w);
}

/* Stepping from the first op; a call made meanwhile is refused; Stop ends
 * the debug call cancelled and the worker calls again. */
static void test_step_and_stop(void)
{
  TsWorker *w = start_worker();
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) ids = debug_start(w, "power", (const char *const[]){ "f32[10,10]:ones", "2", NULL }, NULL,
                                      FALSE, &error);
  g_assert_no_error(error);
  g_autoptr(TsDebugStop) first = debug_wait(w);
  g_assert_cmpstr(first->reason, ==, "step");
  resume(w, "step");
  g_autoptr(TsDebugStop) second = debug_wait(w);
  g_assert_cmpstr(second->reason, ==, "step");
  g_assert_cmpuint(second->op->seq, >, first->op->seq);

  /* the worker does one thing at a time */
  GAsyncResult *res = NULL;
  ts_worker_call_async(w, 8, "power", (const char *const[]){ "f32[10,10]:ones", "2", NULL }, 1, TRUE, NULL,
                       store_result, &res);
  g_autoptr(GAsyncResult) refused = take_result(&res, "a call during a debug call");
  g_autoptr(TsCallResult) none = ts_worker_call_finish(w, refused, &error);
  g_assert_null(none);
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_BUSY);
  g_clear_error(&error);

  /* a breakpoint that does not parse is refused by name */
  g_autoptr(GVariant) bad = command(w, "DebugBreak", g_variant_new("(s)", "max >> 3"), &error);
  g_assert_null(bad);
  g_assert_nonnull(error);
  g_assert_nonnull(strstr(error->message, "max >> 3"));
  g_clear_error(&error);

  g_autoptr(GVariant) stopped = command(w, "DebugStop", NULL, &error);
  g_assert_no_error(error);
  g_autoptr(TsDebugStop) end = debug_wait(w);
  g_assert_cmpstr(end->reason, ==, "finished");
  g_assert_nonnull(end->error);

  ts_worker_call_async(w, 9, "power", (const char *const[]){ "f32[10,10]:ones", "2", NULL }, 1, TRUE, NULL,
                       store_result, &res);
  g_autoptr(GAsyncResult) done = take_result(&res, "a call after the debug call");
  g_autoptr(TsCallResult) r = ts_worker_call_finish(w, done, &error);
  g_assert_no_error(error);
  g_assert_nonnull(strstr(r->value_text, "10."));
  stop_worker(w);
}

/* Closing the app while the debuggee waits ends the worker cleanly. */
static void test_close_while_stopped(void)
{
  TsWorker *w = start_worker();
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) ids = debug_start(w, "power", (const char *const[]){ "f32[10,10]:ones", "2", NULL }, NULL,
                                      FALSE, &error);
  g_assert_no_error(error);
  g_autoptr(TsDebugStop) first = debug_wait(w);
  g_assert_cmpstr(first->reason, ==, "step");
  stop_worker(w);
}

/* An op of a loop's body says its node's path beside its name, which
 * tells it from a node of its name elsewhere (the app keeps outputs and
 * selects nodes by it): sum_even's FloorMod is "While/body/FloorMod". */
static void test_node_path(void)
{
  TsWorker *w = start_worker();
  g_autoptr(GError) error = NULL;
  const char *const *args = (const char *const[]){ "i32[4]=10,12,15,20", NULL };
  /* traced first (a Run in graph mode): the eager ops then name their twins */
  GAsyncResult *res = NULL;
  ts_worker_call_async(w, 3, "sum_even", args, 1, FALSE, NULL, store_result, &res);
  g_autoptr(GAsyncResult) called = take_result(&res, "the call");
  g_autoptr(TsCallResult) result = ts_worker_call_finish(w, called, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(result->value_text, ==, "Tensor(42, shape=(), dtype=int32)");
  g_autoptr(GArray) ids = debug_start(w, "sum_even", args,
                                      (const char *const[]){ "FloorMod", NULL }, TRUE, &error);
  g_assert_no_error(error);
  g_autoptr(TsDebugStop) stop = debug_wait(w);
  g_assert_cmpstr(stop->reason, ==, "breakpoint");
  g_assert_cmpstr(stop->op->op, ==, "FloorMod");
  g_assert_cmpstr(stop->op->node, ==, "FloorMod");
  g_assert_cmpstr(stop->op->path, ==, "While/body/FloorMod");
  stop_worker(w);
}

/* A call debugged on SIM:0 runs each op there: the stops say so, and
 * their tensors (on the device) come to the app as host copies; the same
 * stops and values as on the CPU.  A device the worker lacks is refused,
 * naming it. */
static void test_on_device(void)
{
  debug_device = "SIM:0";
  test_breakpoints();
  debug_device = "GPU:9";
  TsWorker *w = start_worker();
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) ids = debug_start(w, "power", (const char *const[]){ "f32[10,10]:ones", "3", NULL }, NULL,
                                      TRUE, &error);
  g_assert_null(ids);
  g_assert_nonnull(error);
  g_assert_true(g_str_has_prefix(error->message, "no device 'GPU:9' in this worker"));
  debug_device = NULL;
  g_clear_error(&error);
  /* an argument without values (a spec, which traces) cannot run op by op */
  ids = debug_start(w, "power", (const char *const[]){ "f32[10,10]", "3", NULL }, NULL, TRUE, &error);
  g_assert_null(ids);
  g_assert_cmpstr(error->message, ==,
                  "argument 0 (x): 'f32[10,10]' is a spec only, with no values to run op by op: "
                  "give it values (a Fill, or 'f32[10,10]:uniform')");
  stop_worker(w);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/worker-debug/breakpoints", test_breakpoints);
  g_test_add_func("/worker-debug/step-and-stop", test_step_and_stop);
  g_test_add_func("/worker-debug/close-while-stopped", test_close_while_stopped);
  g_test_add_func("/worker-debug/node-path", test_node_path);
  g_test_add_func("/worker-debug/on-device", test_on_device);
  return g_test_run();
}
