/* test-device-step.h — a training step as a graph on a device, shared by
 * test-sim (SIM:0, every CI run) and test-cuda (CUDA:0 on a GPU): a dense
 * net trained by Adam on the sparse cross entropy, made on the CPU and,
 * from the same seeds, under the device, its batch placed there once.
 * The weights, Adam's slots and its step count are made on the device by
 * the first call and stay there (a backend that kept variables on the
 * host would upload each weight every call), and the graph's constants
 * (the rates, Adam's betas and epsilon, the step's 1) are copied there
 * once, by the first call, and kept: what a later step needs from the
 * host is nothing, and it copies nothing.  The losses and weights are the
 * CPU's. */
#pragma once

#include <glib.h>
#include <math.h>
#include <string.h>
#include <tracescope-backend.h>
#include <tracescope-train.h>

#include "test-errors.h"

static ts_sequential *step_nets[2];
static ts_optimizer *step_opts[2];
static ts_tensor *step_x[2], *step_y[2];

static ts_tensor *device_step(int k)
{
  ts_tape *tape = ts_tape_new(false);
  ts_tensor *logits = ts_sequential_call(step_nets[k], step_x[k], true);
  ts_tensor *loss = ts_loss_sparse_softmax_cross_entropy(step_y[k], logits);
  ts_tape_stop(tape);
  int n = ts_sequential_n_variables(step_nets[k]);
  ts_tensor *vars[4], *grads[4];
  g_assert_cmpint(n, ==, 4);
  for (int i = 0; i < n; i++)
    vars[i] = ts_sequential_variable(step_nets[k], i);
  g_assert_true(ts_tape_gradient(tape, loss, vars, n, grads, TS_UNCONNECTED_NONE));
  ts_tape_free(tape);
  g_assert_true(ts_optimizer_apply(step_opts[k], grads, vars, n));
  return loss;
}

static ts_tensor *device_step_cpu(ts_call *call)
{
  return device_step(0);
}

static ts_tensor *device_step_dev(ts_call *call)
{
  return device_step(1);
}

typedef struct step_activity {
  const char *device;
  int uploads, kernels;
  uint64_t uploaded;
} step_activity;

static void step_on_activity(const ts_activity *r, int n, void *data)
{
  step_activity *a = data;
  for (int i = 0; i < n; i++) {
    if (strcmp(r[i].device, a->device))
      continue;
    a->kernels += r[i].kind == TS_ACTIVITY_KERNEL;
    /* SIM:0 names its uploads "host to device", CUPTI "copy host to device" */
    if (r[i].kind != TS_ACTIVITY_COPY || !r[i].name || !strstr(r[i].name, "host to device"))
      continue;
    a->uploads++;
    a->uploaded += r[i].bytes;
  }
}

/* What the engine warned of on the device (a fallback, a graph run op by
 * op), shown with the test's messages. */
static void step_on_warning(const ts_event *ev, void *data)
{
  g_test_message("warned: %s", ev->warning.message);
}

static void assert_near(ts_tensor *want, ts_tensor *got, double rel)
{
  assert_no_error();
  g_assert_cmpint(ts_tensor_size(want), ==, ts_tensor_size(got));
  for (int64_t i = 0; i < ts_tensor_size(want); i++) {
    double w = ts_tensor_get_f64(want, i), v = ts_tensor_get_f64(got, i);
    if (fabs(v - w) > rel * (1e-3 + fabs(w)))
      g_error("element %" G_GINT64_FORMAT ": %.9g on the device, %.9g on the CPU", i, v, w);
  }
}

/* Runs the step `calls` times on the CPU and on dev, checking as above;
 * rel: the relative tolerance against the CPU (0 for the same kernels);
 * min_replays: calls on dev that must have launched the plan captured
 * before as it was (ts_schedule's n_replays), the weights updated all the
 * same. */
static void device_step_check(const ts_backend *dev, int calls, double rel, int min_replays)
{
  const ts_backend *cpu = ts_backend_cpu();
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(32, 10), -1, 1, 5);
  int32_t labels[32];
  for (int i = 0; i < 32; i++)
    labels[i] = (i * 7) % 4;
  ts_tensor *y = ts_constant(TS_I32, TS_SHAPE(32), labels);
  for (int k = 0; k < 2; k++) {
    ts_layer_names_reset();
    TS_DEVICE_SCOPE(k ? dev : cpu) {
      ts_layer *layers[] = { ts_dense_new(NULL, 16, TS_ACTIVATION_RELU, 1),
                             ts_dense_new(NULL, 4, TS_ACTIVATION_LINEAR, 2) };
      step_nets[k] = ts_sequential_new(layers, 2);
      step_opts[k] = ts_adam_new(0.01, 0.9, 0.999, 1e-7);
    }
    step_x[k] = k ? ts_tensor_to_backend(x, dev) : x;
    step_y[k] = k ? ts_tensor_to_backend(y, dev) : y;
  }
  assert_no_error();
  ts_function *on_cpu = ts_function_new("train_step", device_step_cpu, NULL);
  ts_function *on_dev = ts_function_new("train_step", device_step_dev, NULL);
  for (int call = 0; call < calls; call++) {
    ts_scope *s = ts_scope_begin();
    ts_tensor *want = ts_function_call(on_cpu, NULL, 0);
    step_activity a = { ts_backend_name(dev), 0, 0, 0 };
    g_assert_true(ts_activity_subscribe(step_on_activity, &a));
    ts_tensor *got = NULL;
    int warned = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), step_on_warning, NULL);
    TS_DEVICE_SCOPE(dev) got = ts_function_call(on_dev, NULL, 0);
    ts_listener_remove(warned);
    ts_activity_flush();
    ts_activity_unsubscribe(step_on_activity, &a);
    assert_no_error();
    g_assert_true(ts_tensor_backend(got) == dev);
    g_test_message("%s call %d: %d copies from the host (%" G_GUINT64_FORMAT " bytes), %d kernels",
                   a.device, call, a.uploads, a.uploaded, a.kernels);
    if (!a.kernels)
      g_error("%s reported no kernels: no device activity (CUPTI missing?)", a.device);
    /* its batch, weights, slots, step count and constants are there */
    if (call > 0)
      g_assert_cmpint(a.uploads, ==, 0);
    assert_near(want, ts_tensor_to_backend(got, cpu), rel);
    ts_scope_end(s);
  }
  /* the first call made the optimizer's slots: traced twice, as tf.function, one graph */
  g_assert_cmpint(ts_function_trace_count(on_dev), ==, 2);
  g_assert_cmpint(ts_function_n_concrete(on_dev), ==, 1);
  ts_schedule sched;
  g_assert_true(ts_concrete_schedule(ts_function_get_concrete(on_dev, NULL, 0), &sched));
  g_test_message("%s: %" G_GINT64_FORMAT " captures, %" G_GINT64_FORMAT " replays in %d calls",
                 ts_backend_name(dev), sched.n_captures, sched.n_replays, calls);
  g_assert_cmpint(sched.n_replays, >=, min_replays);
  if (min_replays) /* every other call captured */
    g_assert_cmpint(sched.n_captures + sched.n_replays, ==, calls);
  for (int i = 0; i < 4; i++) {
    ts_tensor *w = ts_sequential_variable(step_nets[1], i);
    g_assert_true(ts_tensor_backend(w) == dev);
    g_assert_true(ts_tensor_backend(ts_optimizer_slot(step_opts[1], w, "m")) == dev);
    assert_near(ts_read(ts_sequential_variable(step_nets[0], i)),
                ts_tensor_to_backend(ts_read(w), cpu), rel);
  }
  g_assert_true(ts_tensor_backend(ts_optimizer_iterations(step_opts[1])) == dev);
  ts_function_free(on_cpu);
  ts_function_free(on_dev);
  for (int k = 0; k < 2; k++) {
    ts_sequential_free(step_nets[k]);
    ts_optimizer_free(step_opts[k]);
  }
  ts_scope_end(scope);
}
