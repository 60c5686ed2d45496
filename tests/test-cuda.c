/* test-cuda.c — the CUDA backend (engine/backend/cuda/) on a real GPU:
 * registration with the device's name and memory, memory that moves only
 * through its copies, memsets, device-to-device copies, events, and ops
 * that have no CUDA kernel falling back to the CPU visibly, and a
 * function's ops running there in both modes with the CPU's results, a
 * training step's rows (the gradients of a convolution and a pool, Gather,
 * the cross entropy, random numbers) among them; ConvTranspose over its
 * geometries; StatelessRandomUniform
 * with the CPU's bits, and the 16-bit floats and small integers staying
 * on the GPU; a training step's weights staying there, and copies charged
 * to their op and operand from CUPTI's records; graphs with Gather's
 * indices, integer FloorDiv/FloorMod/Pow or random numbers captured and
 * replayed, with the CPU's values and errors, 300 checking launches in
 * one capture among them; a filter gradient of more elements than a grid
 * has blocks; copies between two GPUs; While loops and an If as
 * conditional nodes of the graph's capture, nested, and one a host read
 * breaks into.
 * Without a GPU
 * (or without the driver) every test skips, saying why. */
#include <glib.h>
#include <math.h>
#include <string.h>
#include <tracescope-backend.h>

#include "test-device-control-flow.h"
#include "test-device-random.h"
#include "test-device-step.h"
#include "test-errors.h"

static const ts_backend *cuda_or_skip(void)
{
  const ts_backend *b = ts_backend_by_name("CUDA:0");
  if (!b)
    g_test_skip(ts_backend_devices_note());
  return b;
}

/* Without a device the engine says why; with one, it names it. */
static void test_note(void)
{
  const char *note = ts_backend_devices_note();
  g_assert_true(g_str_has_prefix(note, "CUDA: "));
  if (ts_backend_by_name("CUDA:0")) {
    g_assert_nonnull(strstr(note, "CUDA:0 ("));
    g_assert_nonnull(strstr(note, "GiB)"));
  } else {
    g_assert_null(strstr(note, "CUDA:0 ("));
  }
}

static void test_memory(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  const ts_buffer_type *bt = ts_backend_buffer_type(b);
  g_assert_false(ts_buffer_type_is_host(bt));
  size_t free_bytes = 0, total = 0;
  g_assert_true(ts_backend_memory_info(b, &free_bytes, &total));
  g_assert_cmpuint(free_bytes, <=, total);
  g_assert_cmpuint(total, >, (size_t)1 << 30);

  enum { N = 1 << 20 };
  float *host = g_new(float, N), *back = g_new0(float, N);
  for (int i = 0; i < N; i++)
    host[i] = (float)i * 0.5f;
  ts_buffer *a = ts_buffer_alloc(bt, N * sizeof(float), TS_BUFFER_USAGE_TENSOR);
  ts_buffer *c = ts_buffer_alloc(bt, N * sizeof(float), TS_BUFFER_USAGE_TENSOR);
  g_assert_nonnull(a);
  g_assert_nonnull(c);
  g_assert_true(ts_buffer_set(a, 0, host, N * sizeof(float)));
  g_assert_true(ts_buffer_copy(c, 0, a, 0, N * sizeof(float)));
  g_assert_true(ts_buffer_get(c, 0, back, N * sizeof(float)));
  g_assert_cmpmem(back, N * sizeof(float), host, N * sizeof(float));
  g_assert_true(ts_buffer_memset(c, 0, 0, N * sizeof(float)));
  g_assert_true(ts_buffer_get(c, 0, back, N * sizeof(float)));
  for (int i = 0; i < N; i++)
    g_assert_cmpfloat(back[i], ==, 0);
  void *base = ts_buffer_base(a);
  ts_buffer_free(a);
  /* the cache hands the block back for the same size */
  ts_buffer *again = ts_buffer_alloc(bt, N * sizeof(float), TS_BUFFER_USAGE_TENSOR);
  g_assert_true(ts_buffer_base(again) == base);
  ts_buffer_free(again);
  ts_buffer_free(c);
  g_assert_true(ts_backend_synchronize(b));
  g_free(host);
  g_free(back);
}

static void test_events(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  const ts_backend_i *bi = ts_backend_iface(b);
  ts_device_event *start = bi->event_new(b), *end = bi->event_new(b);
  g_assert_true(bi->event_record(b, start));
  enum { BYTES = 64 << 20 };
  ts_buffer *buf = ts_buffer_alloc(ts_backend_buffer_type(b), BYTES, TS_BUFFER_USAGE_TENSOR);
  g_assert_true(ts_buffer_memset(buf, 0, 1, BYTES));
  g_assert_true(bi->event_record(b, end));
  g_assert_true(ts_backend_synchronize(b));
  g_assert_true(bi->event_query(b, end));
  uint64_t ns = 0;
  g_assert_true(bi->event_elapsed_ns(b, start, end, &ns));
  g_assert_cmpuint(ns, >, 0);
  ts_buffer_free(buf);
  bi->event_free(b, start);
  bi->event_free(b, end);
}

/* A tensor placed on the device and back keeps its values. */
static void test_tensor_round_trip(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_range(TS_F32, 0, 1000, 1);
  ts_tensor *on = ts_tensor_to_backend(x, b);
  assert_no_error();
  g_assert_true(ts_tensor_backend(on) == b);
  ts_tensor *back = ts_tensor_to_backend(on, ts_backend_cpu());
  assert_no_error();
  g_assert_cmpmem(ts_tensor_data(back), 4000, ts_tensor_data(x), 4000);
  ts_scope_end(scope);
}

static ts_tensor *layers(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *w = ts_arg(call, 1);
  for (int i = 0; i < 3; i++)
    x = ts_tanh(ts_add(ts_matmul(x, w), ts_scalar_f32(0.1f)));
  return ts_reduce_sum(ts_softmax(x), TS_ALL_AXES, false);
}

typedef struct seen {
  int fallbacks, ops, on_cpu;
  bool on_cuda[TS_OP_COUNT];
} seen;

static void on_event(const ts_event *ev, void *data)
{
  seen *s = data;
  if (ev->kind == TS_EVENT_WARNING && ev->warning.kind == TS_WARNING_DEVICE_FALLBACK)
    s->fallbacks++;
  if (ev->kind == TS_EVENT_OP_END) {
    s->ops++;
    s->on_cpu += strcmp(ev->op.device, "CPU") == 0;
    if ((unsigned)ev->op.op < TS_OP_COUNT && g_str_has_prefix(ev->op.device, "CUDA:"))
      s->on_cuda[ev->op.op] = true;
  }
}

/* A function's ops (MatMul, Add, Tanh, Softmax, Sum, and in graph mode
 * what the passes fuse them into) run on the GPU in both modes, none
 * falling back, with the CPU's results; graph mode calls replay its
 * captured CUDA Graph. */
static void test_kernels_on_device(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("layers", layers, "x, w");
  ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(16, 16), -1, 1, 1);
  ts_tensor *w = ts_random_uniform(TS_F32, TS_SHAPE(16, 16), -0.5, 0.5, 2);
  ts_value args[2] = { TS_TENSOR_VALUE(x), TS_TENSOR_VALUE(w) };
  ts_tensor *want = ts_function_call(fn, args, 2);
  assert_no_error();
  float expected = *(const float *)ts_tensor_data(want);
  for (int eager = 0; eager < 2; eager++)
    for (int call = 0; call < 3; call++) {
      seen s = { 0 };
      int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING) | TS_EVENT_MASK(TS_EVENT_OP_END),
                               on_event, &s);
      ts_run_functions_eagerly(eager);
      ts_tensor *got = NULL;
      TS_DEVICE_SCOPE(b) { got = ts_function_call(fn, args, 2); }
      ts_run_functions_eagerly(false);
      ts_listener_remove(id);
      assert_no_error();
      g_assert_true(ts_tensor_backend(got) == b);
      got = ts_tensor_to_backend(got, ts_backend_cpu());
      g_assert_cmpfloat_with_epsilon(*(const float *)ts_tensor_data(got), expected,
                                     1e-4 * (1 + fabsf(expected)));
      g_assert_cmpint(s.fallbacks, ==, 0);
      g_assert_cmpint(s.on_cpu, ==, 0);
      g_assert_cmpint(s.ops, >, 0);
    }
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* A classifier's step: conv, pool, a gather of its features, the sparse
 * cross entropy, the gradients of the image and the filter, plus random
 * numbers; all of it, flattened. */
static ts_tensor *train_step(ts_call *call)
{
  ts_tensor *image = ts_arg(call, 0), *filter = ts_arg(call, 1), *labels = ts_arg(call, 2);
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, image);
  ts_tape_watch(tape, filter);
  ts_tensor *y = ts_max_pool2d(ts_conv2d(image, filter, 1, 1, TS_PADDING_SAME), 2, 2, 2, 2,
                               TS_PADDING_VALID); /* [2, 3, 3, 4] */
  ts_tensor *features = ts_gather(ts_reshape(y, TS_SHAPE(2, 36)),
                                  ts_constant(TS_I32, TS_SHAPE(5), (int32_t[]){ 0, 5, 7, 35, 5 }), 1);
  ts_tensor *loss = ts_reduce_mean(ts_sparse_softmax_cross_entropy(labels, features),
                                   TS_ALL_AXES, false);
  ts_tensor *g[2];
  bool ok = ts_tape_gradient(tape, loss, ((ts_tensor *[]){ image, filter }), 2, g,
                             TS_UNCONNECTED_NONE);
  ts_tape_free(tape);
  if (!ok)
    return NULL;
  ts_tensor *noise = ts_random_uniform(TS_F32, TS_SHAPE(3), -1, 1, 5);
  return ts_concat(((ts_tensor *[]){ ts_reshape(loss, TS_SHAPE(1)), ts_reshape(g[0], TS_SHAPE(-1)),
                                     ts_reshape(g[1], TS_SHAPE(-1)), noise }), 4, 0);
}

/* Its rows run on the GPU in both modes with the CPU's results (random
 * numbers the same: the CPU's generator, uploaded; a graph has them
 * folded into a constant). */
static void test_training_rows_on_device(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("train_step", train_step, "image, filter, labels");
  ts_value args[3] = {
    TS_TENSOR_VALUE(ts_random_normal(TS_F32, TS_SHAPE(2, 6, 6, 3), 0, 1, 3)),
    TS_TENSOR_VALUE(ts_random_normal(TS_F32, TS_SHAPE(3, 3, 3, 4), 0, 0.5, 4)),
    TS_TENSOR_VALUE(ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 4, 1 })),
  };
  ts_tensor *want = ts_function_call(fn, args, 3);
  assert_no_error();
  static const ts_op rows[] = { TS_OP_CONV2D_BACKPROP_INPUT, TS_OP_CONV2D_BACKPROP_FILTER,
                                TS_OP_MAX_POOL2D_GRAD, TS_OP_GATHER,
                                TS_OP_SPARSE_SOFTMAX_CROSS_ENTROPY, TS_OP_RANDOM_UNIFORM };
  for (int eager = 0; eager < 2; eager++)
    for (int call = 0; call < 2; call++) {
      seen s = { 0 };
      int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING) | TS_EVENT_MASK(TS_EVENT_OP_END),
                               on_event, &s);
      ts_run_functions_eagerly(eager);
      ts_tensor *got = NULL;
      TS_DEVICE_SCOPE(b) { got = ts_function_call(fn, args, 3); }
      ts_run_functions_eagerly(false);
      ts_listener_remove(id);
      assert_no_error();
      got = ts_tensor_to_backend(got, ts_backend_cpu());
      g_assert_cmpint(ts_tensor_size(got), ==, ts_tensor_size(want));
      for (int64_t k = 0; k < ts_tensor_size(want); k++) {
        double w = ts_tensor_get_f64(want, k), v = ts_tensor_get_f64(got, k);
        if (fabs(v - w) > 1e-4 * (1 + fabs(w)))
          g_error("%s, call %d: element %" G_GINT64_FORMAT ": %g on the GPU, %g on the CPU",
                  eager ? "eager" : "graph", call, k, v, w);
      }
      for (size_t r = 0; r < G_N_ELEMENTS(rows); r++)
        if (!s.on_cuda[rows[r]] && (eager || rows[r] != TS_OP_RANDOM_UNIFORM)) /* folded */
          g_error("%s, call %d: %s did not run on %s", eager ? "eager" : "graph", call,
                  ts_op_name(rows[r]), ts_backend_name(b));
    }
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* ConvTranspose on the GPU (cuBLASLt's columns, col2im there) gives the
 * CPU's results over the geometries its two paths take: one group (the
 * images one strided batch) and several (a batch of groups per image),
 * 1 to 3 spatial dims, strides, dilations, negative pads, output shapes
 * that cut taps off or leave cells no tap reaches, a bias or none, f64,
 * and no taps at all (the output is the bias). */
static void test_conv_transpose_on_device(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  static const struct {
    ts_dtype dt;
    int64_t n, c, mg, group;
    int rank; /* spatial dims */
    int64_t in[3], k[3], s[3], d[3], p[3], out[3];
    bool bias;
  } cases[] = {
    { TS_F32, 3, 4, 5, 1, 1, { 7 }, { 3 }, { 2 }, { 1 }, { 1 }, { 14 }, false },
    { TS_F32, 2, 6, 2, 3, 2, { 4, 5 }, { 3, 2 }, { 2, 1 }, { 1, 2 }, { 1, 0 }, { 9, 7 }, true },
    { TS_F32, 4, 3, 8, 1, 2, { 6, 6 }, { 3, 3 }, { 2, 2 }, { 1, 1 }, { -1, 2 }, { 15, 9 }, true },
    { TS_F64, 2, 4, 3, 2, 3, { 3, 4, 2 }, { 2, 3, 2 }, { 1, 2, 3 }, { 2, 1, 1 }, { 0, 1, 0 }, { 5, 8, 6 }, true },
    { TS_F32, 2, 2, 3, 1, 2, { 5, 5 }, { 0, 3 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, { 5, 7 }, true },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    ts_scope *scope = ts_scope_begin();
    ts_shape xs = { .rank = cases[i].rank + 2, .dim = { cases[i].n, cases[i].c } };
    ts_shape ws = { .rank = cases[i].rank + 2, .dim = { cases[i].c, cases[i].mg } };
    ts_ints s = { .n = cases[i].rank }, d = s, p = s, out = s;
    for (int j = 0; j < cases[i].rank; j++) {
      xs.dim[2 + j] = cases[i].in[j];
      ws.dim[2 + j] = cases[i].k[j];
      s.v[j] = cases[i].s[j];
      d.v[j] = cases[i].d[j];
      p.v[j] = cases[i].p[j];
      out.v[j] = cases[i].out[j];
    }
    ts_tensor *x = ts_random_normal(cases[i].dt, xs, 0, 1, 10 + (int)i);
    ts_tensor *w = ts_random_normal(cases[i].dt, ws, 0, 1, 20 + (int)i);
    ts_tensor *bias = cases[i].bias
                        ? ts_random_normal(cases[i].dt, TS_SHAPE(cases[i].mg * cases[i].group), 0, 1, 30)
                        : NULL;
    ts_tensor *want = ts_conv_transpose(x, w, bias, s, d, p, out, (int)cases[i].group);
    assert_no_error();
    seen e = { 0 };
    int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING) | TS_EVENT_MASK(TS_EVENT_OP_END),
                             on_event, &e);
    ts_tensor *got = NULL;
    TS_DEVICE_SCOPE(b) { got = ts_conv_transpose(x, w, bias, s, d, p, out, (int)cases[i].group); }
    ts_listener_remove(id);
    assert_no_error();
    g_assert_cmpint(e.fallbacks, ==, 0);
    g_assert_true(e.on_cuda[TS_OP_CONV_TRANSPOSE]);
    got = ts_tensor_to_backend(got, ts_backend_cpu());
    g_assert_cmpint(ts_tensor_size(got), ==, ts_tensor_size(want));
    for (int64_t k = 0; k < ts_tensor_size(want); k++) {
      double wv = ts_tensor_get_f64(want, k), v = ts_tensor_get_f64(got, k);
      if (fabs(v - wv) > 1e-4 * (1 + fabs(wv)))
        g_error("case %zu: element %" G_GINT64_FORMAT ": %g on the GPU, %g on the CPU", i, k, v, wv);
    }
    ts_scope_end(scope);
  }
}

/* The bytes of t, on the CPU. */
static ts_tensor *on_cpu(ts_tensor *t)
{
  g_assert_nonnull(t);
  ts_tensor *h = ts_tensor_to_backend(t, ts_backend_cpu());
  assert_no_error();
  return h;
}

static void assert_same_bytes(const char *what, ts_tensor *want, ts_tensor *got)
{
  want = on_cpu(want);
  got = on_cpu(got);
  g_assert_cmpint(ts_tensor_dtype(got), ==, ts_tensor_dtype(want));
  g_assert_cmpint(ts_tensor_size(got), ==, ts_tensor_size(want));
  size_t bytes = (size_t)ts_tensor_size(want) * ts_dtype_size(ts_tensor_dtype(want));
  if (memcmp(ts_tensor_data(want), ts_tensor_data(got), bytes) != 0)
    for (int64_t k = 0; k < ts_tensor_size(want); k++)
      if (ts_tensor_get_f64(want, k) != ts_tensor_get_f64(got, k))
        g_error("%s: element %" G_GINT64_FORMAT " is %.17g on the GPU, %.17g on the CPU", what,
                k, ts_tensor_get_f64(got, k), ts_tensor_get_f64(want, k));
}

/* A filter's gradient of more elements than a grid has blocks (3 x 3 x
 * 512 x 512 = 2359296, the cap 2097120): the kernel strides over them by
 * the grid (cuda/launch.cuh), the CPU's values in each mode. */
static ts_tensor *filter_gradient(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *f = ts_arg(call, 1);
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, f);
  ts_tensor *loss = ts_reduce_sum(ts_conv2d(x, f, 1, 1, TS_PADDING_SAME), TS_ALL_AXES, false);
  ts_tensor *g[1];
  bool ok = ts_tape_gradient(tape, loss, ((ts_tensor *[]){ f }), 1, g, TS_UNCONNECTED_NONE);
  ts_tape_free(tape);
  return ok ? g[0] : NULL;
}

static void test_grids_past_the_cap(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("filter_gradient", filter_gradient, "x, f");
  ts_value args[2] = {
    TS_TENSOR_VALUE(ts_random_normal(TS_F32, TS_SHAPE(1, 3, 3, 512), 0, 1, 5)),
    TS_TENSOR_VALUE(ts_random_normal(TS_F32, TS_SHAPE(3, 3, 512, 512), 0, 0.1, 6)),
  };
  ts_tensor *want = ts_function_call(fn, args, 2);
  assert_no_error();
  g_assert_cmpint(ts_tensor_size(want), ==, 3 * 3 * 512 * 512);
  for (int eager = 0; eager < 2; eager++) {
    ts_run_functions_eagerly(eager);
    ts_tensor *got = NULL;
    TS_DEVICE_SCOPE(b) { got = ts_function_call(fn, args, 2); }
    ts_run_functions_eagerly(false);
    got = on_cpu(got);
    for (int64_t k = 0; k < ts_tensor_size(want); k++) {
      double w = ts_tensor_get_f64(want, k), v = ts_tensor_get_f64(got, k);
      if (fabs(v - w) > 1e-4 * (1 + fabs(w)))
        g_error("%s: element %" G_GINT64_FORMAT ": %g on the GPU, %g on the CPU",
                eager ? "eager" : "graph", k, v, w);
    }
  }
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* Between two GPUs: a tensor made by a chain of kernels on CUDA:1 and
 * copied to CUDA:0 at once holds their result (the copy waits for
 * CUDA:1's stream on the device, by an event), and a graph on CUDA:0 fed
 * CUDA:1's tensors gives the CPU's values every call (a peer copy in its
 * capture ends the capture, as a host read does, rather than invalidating
 * it).  Skips with one GPU. */
static ts_tensor *halved_sum(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *y = x;
  for (int k = 0; k < 20; k++)
    y = ts_add(ts_mul(y, ts_scalar_f32(0.5f)), x);
  return y;
}

static void test_peer_copies(void)
{
  const ts_backend *b0 = cuda_or_skip();
  if (!b0)
    return;
  const ts_backend *b1 = ts_backend_by_name("CUDA:1");
  if (!b1) {
    g_test_skip("one GPU: copies between two need CUDA:1");
    return;
  }
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("halved_sum", halved_sum, "x");
  ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(2048, 2048), -1, 1, 8);
  ts_value args[1] = { TS_TENSOR_VALUE(x) };
  ts_run_functions_eagerly(true);
  ts_tensor *want = ts_function_call(fn, args, 1);
  ts_tensor *on1 = NULL;
  TS_DEVICE_SCOPE(b1) { on1 = ts_function_call(fn, args, 1); }
  ts_run_functions_eagerly(false);
  assert_no_error();
  assert_same_bytes("CUDA:1's result copied to CUDA:0", want, ts_tensor_to_backend(on1, b0));

  args[0] = TS_TENSOR_VALUE(ts_tensor_to_backend(x, b1));
  for (int call = 0; call < 4; call++) {
    ts_tensor *got = NULL;
    TS_DEVICE_SCOPE(b0) { got = ts_function_call(fn, args, 1); }
    assert_no_error();
    g_assert_true(ts_tensor_backend(got) == b0);
    assert_same_bytes("a graph on CUDA:0 of CUDA:1's tensor", want, got);
  }
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* StatelessRandomUniform runs on the GPU and draws the CPU's bits, in
 * every dtype, its counter on the device. */
static void test_stateless_uniform_bits(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  ts_scope *scope = ts_scope_begin();
  static const struct {
    ts_dtype dtype;
    double lo, hi;
  } CASES[] = { { TS_F32, -2, 3 }, { TS_F64, -2, 3 }, { TS_F16, 0, 1 }, { TS_BF16, -1, 1 },
                { TS_I32, -50, 50 }, { TS_U8, 0, 256 }, { TS_I64, -0x1p63, 0x1p63 },
                { TS_U16, 3, 40000 } };
  ts_tensor *counter_cpu = ts_scalar_i64(41);
  ts_tensor *counter = ts_tensor_to_backend(counter_cpu, b); /* read by the kernel there */
  assert_no_error();
  for (size_t c = 0; c < G_N_ELEMENTS(CASES); c++) {
    ts_tensor *want = ts_stateless_random_uniform(CASES[c].dtype, TS_SHAPE(100003), CASES[c].lo,
                                                  CASES[c].hi, 77, counter_cpu);
    seen s = { 0 };
    int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING) | TS_EVENT_MASK(TS_EVENT_OP_END),
                             on_event, &s);
    ts_tensor *got = NULL;
    TS_DEVICE_SCOPE(b)
    {
      got = ts_stateless_random_uniform(CASES[c].dtype, TS_SHAPE(100003), CASES[c].lo,
                                        CASES[c].hi, 77, counter);
    }
    ts_listener_remove(id);
    assert_no_error();
    g_assert_true(ts_tensor_backend(got) == b);
    g_assert_true(s.on_cuda[TS_OP_STATELESS_RANDOM_UNIFORM]);
    g_assert_cmpint(s.fallbacks, ==, 0);
    assert_same_bytes(ts_dtype_name(CASES[c].dtype), want, got);
  }
  ts_scope_end(scope);
}

/* float16 and bfloat16 (an ONNX model's) and the small integers stay on
 * the GPU: elementwise rows, Cast, a reduction and a fused program, with
 * the CPU's results within the 16-bit floats' rounding. */
static ts_tensor *half_body(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0);
  ts_tensor *h = ts_cast(x, TS_F16), *bf = ts_cast(x, TS_BF16);
  ts_tensor *y = ts_tanh(ts_sub(ts_mul(h, h), ts_cast(ts_scalar_f32(0.5f), TS_F16)));
  ts_tensor *z = ts_reduce_sum(ts_exp(ts_mul(bf, ts_cast(ts_scalar_f32(0.5f), TS_BF16))),
                               TS_AXES(1), false);
  ts_tensor *q = ts_cast(ts_add(ts_cast(x, TS_I8), ts_cast(ts_scalar_f32(3), TS_I8)), TS_U16);
  return ts_concat(((ts_tensor *[]){ ts_cast(ts_reshape(y, TS_SHAPE(-1)), TS_F32),
                                     ts_cast(z, TS_F32), ts_cast(ts_reshape(q, TS_SHAPE(-1)), TS_F32) }),
                   3, 0);
}

static void test_half_on_device(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("halves", half_body, "x");
  ts_value args[1] = { TS_TENSOR_VALUE(ts_random_uniform(TS_F32, TS_SHAPE(32, 40), -3, 3, 10)) };
  ts_tensor *want = ts_function_call(fn, args, 1);
  assert_no_error();
  for (int eager = 0; eager < 2; eager++) {
    seen s = { 0 };
    int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING) | TS_EVENT_MASK(TS_EVENT_OP_END),
                             on_event, &s);
    ts_run_functions_eagerly(eager);
    ts_tensor *got = NULL;
    TS_DEVICE_SCOPE(b) { got = ts_function_call(fn, args, 1); }
    ts_run_functions_eagerly(false);
    ts_listener_remove(id);
    assert_no_error();
    g_assert_cmpint(s.fallbacks, ==, 0);
    g_assert_cmpint(s.on_cpu, ==, 0);
    got = on_cpu(got);
    for (int64_t k = 0; k < ts_tensor_size(want); k++) {
      double w = ts_tensor_get_f64(want, k), v = ts_tensor_get_f64(got, k);
      if (fabs(v - w) > 8e-3 * (1 + fabs(w)))
        g_error("%s: element %" G_GINT64_FORMAT ": %g on the GPU, %g on the CPU",
                eager ? "eager" : "graph", k, v, w);
    }
  }
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* A training step as a graph on the GPU (test-device-step.h): its weights
 * and Adam's slots live there, so after the first call only scalar
 * constants come from the host (counted from CUPTI's copy records), with
 * the CPU's losses and weights within cuBLAS's other rounding. */
static void test_training_step_keeps_weights(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  device_step_check(b, 4, 1e-4, 1); /* the first call makes the weights, reading back: the next captures again */
}

/* Copies of an op's inputs to the GPU are charged to the op and say which
 * input they carried, from CUPTI's records as from SIM:0's: eagerly
 * through the op's id and the operand pushed around the copy, and in
 * graph mode (the arguments uploaded as nodes of the captured graph)
 * through the node, whose GRAPH_NODE record names the op. */
typedef struct charged {
  GArray *records;        /* ts_activity */
  GHashTable *names;      /* correlation -> op name */
} charged;

static void charged_activity(const ts_activity *r, int n, void *data)
{
  charged *c = data;
  g_array_append_vals(c->records, r, (guint)n);
}

static void charged_op(const ts_event *ev, void *data)
{
  charged *c = data;
  g_hash_table_insert(c->names, GSIZE_TO_POINTER(ev->op.correlation), (gpointer)ev->op.op_name);
}

static ts_tensor *product(ts_call *call)
{
  return ts_matmul(ts_arg(call, 0), ts_arg(call, 1));
}

static void test_copies_carry_operand(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(8, 8), -1, 1, 1);
  ts_tensor *w = ts_random_uniform(TS_F32, TS_SHAPE(8, 8), -1, 1, 2);
  ts_value args[2] = { TS_TENSOR_VALUE(x), TS_TENSOR_VALUE(w) };
  ts_function *fn = ts_function_new("product", product, "x, w");
  for (int eager = 1; eager >= 0; eager--)
    for (int call = 0; call < 2; call++) {
      charged c = { g_array_new(FALSE, FALSE, sizeof(ts_activity)),
                    g_hash_table_new(g_direct_hash, g_direct_equal) };
      g_assert_true(ts_activity_subscribe(charged_activity, &c));
      int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), charged_op, &c);
      ts_function_set_run_eagerly(fn, eager);
      TS_DEVICE_SCOPE(b) g_assert_nonnull(ts_function_call(fn, args, 2));
      ts_listener_remove(id);
      ts_activity_flush();
      ts_activity_unsubscribe(charged_activity, &c);
      assert_no_error();
      GHashTable *node_op = g_hash_table_new(g_direct_hash, g_direct_equal);
      for (guint i = 0; i < c.records->len; i++) {
        const ts_activity *r = &g_array_index(c.records, ts_activity, i);
        if (r->kind == TS_ACTIVITY_GRAPH_NODE)
          g_hash_table_insert(node_op, GSIZE_TO_POINTER(r->graph_node),
                              GSIZE_TO_POINTER(r->correlation));
      }
      uint32_t operands = 0; /* bit i: a copy carried input i of MatMul */
      for (guint i = 0; i < c.records->len; i++) {
        const ts_activity *r = &g_array_index(c.records, ts_activity, i);
        if (r->kind != TS_ACTIVITY_COPY || strcmp(r->name, "copy host to device"))
          continue;
        uint64_t corr = r->graph_node ? GPOINTER_TO_SIZE(g_hash_table_lookup(
                                          node_op, GSIZE_TO_POINTER(r->graph_node)))
                                      : r->correlation;
        const char *op = g_hash_table_lookup(c.names, GSIZE_TO_POINTER(corr));
        if (!op || !g_str_has_suffix(op, "MatMul")) /* _FusedMatMul, if a pass made it one */
          g_error("a copy of %" G_GUINT64_FORMAT " bytes is charged to %s", r->bytes,
                  op ? op : "no op");
        g_assert_cmpuint(r->operand, >=, 1);
        g_assert_cmpuint(r->operand, <=, 2);
        g_assert_cmpuint(r->bytes, ==, 8 * 8 * sizeof(float));
        operands |= 1u << (r->operand - 1);
      }
      g_test_message("%s call %d: MatMul's inputs copied: %#x", eager ? "eager" : "graph", call,
                     operands);
      g_assert_cmpuint(operands, ==, 3);
      g_hash_table_unref(node_op);
      g_hash_table_unref(c.names);
      g_array_unref(c.records);
    }
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* fn(args) with args[arg] = good replays on b and gives want; with bad,
 * whose check the kernel makes on the device in a graph (a host read would
 * break the capture), the call's error comes by the next host copy (the
 * launch already went out), once: the next call is clean; eagerly it
 * comes at the op, on a host copy of the operand. */
static void expect_checked_in_graphs(const ts_backend *b, ts_function *fn, ts_value *args, int arg,
                                     ts_tensor *good, ts_tensor *bad, ts_tensor *want,
                                     const char *error)
{
  args[arg] = TS_TENSOR_VALUE(good);
  for (int call = 0; call < 4; call++)
    TS_DEVICE_SCOPE(b) assert_same_bytes(error, want, ts_function_call(fn, args, 2));
  ts_schedule sched;
  g_assert_true(ts_concrete_schedule(ts_function_get_concrete(fn, args, 2), &sched));
  g_test_message("%s on CUDA:0: %" G_GINT64_FORMAT " captures, %" G_GINT64_FORMAT " replays",
                 error, sched.n_captures, sched.n_replays);
  g_assert_cmpint(sched.n_replays, >=, 1);

  args[arg] = TS_TENSOR_VALUE(bad);
  ts_tensor *late = NULL;
  TS_DEVICE_SCOPE(b) late = ts_function_call(fn, args, 2);
  if (late) /* queued: the host copy finds it */
    g_assert_null(ts_tensor_to_backend(late, ts_backend_cpu()));
  expect_error_containing(error);
  args[arg] = TS_TENSOR_VALUE(good);
  TS_DEVICE_SCOPE(b) assert_same_bytes(error, want, ts_function_call(fn, args, 2));

  ts_run_functions_eagerly(true);
  args[arg] = TS_TENSOR_VALUE(bad);
  TS_DEVICE_SCOPE(b) g_assert_null(ts_function_call(fn, args, 2));
  ts_run_functions_eagerly(false);
  expect_error_containing(error);
}

static ts_tensor *gathered(ts_call *call)
{
  return ts_mul(ts_gather(ts_arg(call, 0), ts_arg(call, 1), 0), ts_scalar_f32(2));
}

/* Gathers on the argument's indices in a graph named name (body), the
 * calls replaying, then an index out of range: still the op's error. */
static void expect_gathers_checked(const char *name, ts_tensor *(*body)(ts_call *))
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  ts_scope *scope = ts_scope_begin();
  ts_tensor *params = ts_random_uniform(TS_F32, TS_SHAPE(4, 3), -1, 1, 3);
  ts_tensor *good = ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 3, 0 });
  ts_tensor *bad = ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 1, 9 });
  ts_function *fn = ts_function_new(name, body, "params, indices");
  ts_value args[2] = { TS_TENSOR_VALUE(params), TS_TENSOR_VALUE(good) };
  ts_tensor *want = ts_function_call(fn, args, 2);
  expect_checked_in_graphs(b, fn, args, 1, good, bad, want, "Gather: indices[1] = 9 is not in [0, 4)");
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* Gather's indices are checked on the device in a graph, so its capture
 * is not broken by a host read (the calls replay), and an index out of
 * range is still the op's error. */
static void test_indices_checked_in_graphs(void)
{
  expect_gathers_checked("gathered", gathered);
}

/* 300 Gathers in one graph, the first on the argument's indices, the
 * rest permuting its rows: more checking launches in one capture than a
 * table of 256 held, and an index out of range in the first is still its
 * op's error, not a message naming no op. */
#define MANY_GATHERS 300
static ts_tensor *many_gathers(ts_call *call)
{
  ts_tensor *swap = ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 1, 0 });
  ts_tensor *x = ts_gather(ts_arg(call, 0), ts_arg(call, 1), 0);
  for (int k = 1; k < MANY_GATHERS; k++)
    x = ts_gather(x, swap, 0);
  return x;
}

static void test_many_index_checks_in_graphs(void)
{
  expect_gathers_checked("many_gathers", many_gathers);
}

/* A Gather whose output has no elements (params [4, 0]) still refuses an
 * index out of range in a graph, as the CPU does: its kernel checks the
 * indices though it gathers nothing. */
static void test_empty_gather_checked_in_graphs(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  ts_scope *scope = ts_scope_begin();
  ts_tensor *params = ts_zeros(TS_F32, TS_SHAPE(4, 0));
  ts_tensor *good = ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 3, 0 });
  ts_tensor *bad = ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 1, 9 });
  ts_function *fn = ts_function_new("gathered", gathered, "params, indices");
  ts_value args[2] = { TS_TENSOR_VALUE(params), TS_TENSOR_VALUE(good) };
  for (int call = 0; call < 3; call++) {
    ts_tensor *got = NULL;
    TS_DEVICE_SCOPE(b) got = ts_function_call(fn, args, 2);
    assert_no_error();
    g_assert_true(ts_shape_equal(ts_tensor_shape(got), TS_SHAPE(2, 0)));
  }
  args[1] = TS_TENSOR_VALUE(bad);
  ts_tensor *late = NULL;
  TS_DEVICE_SCOPE(b) late = ts_function_call(fn, args, 2);
  if (late) /* queued: the next synchronize finds it */
    g_assert_false(ts_backend_synchronize(b));
  expect_error_containing("Gather: indices[1] = 9 is not in [0, 4)");
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* A graph with RandomUniform and RandomNormal (passes off, or fold would
 * make their numbers constants) is replayed as it was captured: each
 * launch uploads its numbers from the plan's pinned staging, and every
 * call gives the CPU's values, eagerly and in graph mode. */
static void test_random_replays(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  ts_scope *scope = ts_scope_begin();
  char *passes = ts_get_passes();
  g_assert_true(ts_set_passes("none"));
  ts_function *fn = ts_function_new("noisy", noisy, "x");
  ts_value args[1];
  for (int call = 0; call < 5; call++) {
    ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(8, 16), -2, 2, 100 + (uint64_t)call);
    args[0] = TS_TENSOR_VALUE(x);
    ts_run_functions_eagerly(true);
    ts_tensor *eager = ts_function_call(fn, args, 1);
    ts_run_functions_eagerly(false);
    assert_same_bytes("noisy in graph mode", eager, ts_function_call(fn, args, 1));
    ts_tensor *got = NULL;
    TS_DEVICE_SCOPE(b) got = ts_function_call(fn, args, 1);
    assert_no_error();
    g_assert_true(ts_tensor_backend(got) == b);
    assert_same_bytes("noisy on CUDA:0", eager, got);
  }
  ts_schedule sched;
  g_assert_true(ts_concrete_schedule(ts_function_get_concrete(fn, args, 1), &sched));
  g_test_message("CUDA:0: %" G_GINT64_FORMAT " captures, %" G_GINT64_FORMAT " replays",
                 sched.n_captures, sched.n_replays);
  g_assert_cmpint(sched.n_replays, >=, 3);
  ts_function_free(fn);
  g_assert_true(ts_set_passes(passes));
  free(passes);
  ts_scope_end(scope);
}

/* ---- While loops inside a graph's capture (conditional nodes) ---- */



typedef struct loop_watch {
  int matmuls;  /* MatMul op events on CUDA:0 */
  int warnings; /* TS_WARNING_DEVICE_CONTROL_FLOW */
  char *said;
} loop_watch;

static void on_loop_event(const ts_event *ev, void *data)
{
  loop_watch *w = data;
  if (ev->kind == TS_EVENT_WARNING && ev->warning.kind == TS_WARNING_DEVICE_CONTROL_FLOW) {
    w->warnings++;
    g_free(w->said);
    w->said = g_strdup(ev->warning.message);
  } else if (ev->kind == TS_EVENT_OP_END && !strcmp(ev->op.op_name, "MatMul") &&
             !strcmp(ev->op.device, "CUDA:0")) {
    w->matmuls++;
  }
}

static void assert_close_to(ts_tensor *want, ts_tensor *got)
{
  assert_no_error();
  g_assert_nonnull(got);
  g_assert_cmpint(ts_tensor_size(want), ==, ts_tensor_size(got));
  for (int64_t i = 0; i < ts_tensor_size(want); i++)
    g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(got, i), ts_tensor_get_f64(want, i), 1e-4);
}

/* Listens for w (ts_listener_remove the id returned). */
static int watch_loops(loop_watch *w)
{
  return ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING) | TS_EVENT_MASK(TS_EVENT_OP_END),
                         on_loop_event, w);
}

/* Calls fn on CUDA:0 with x and the count, against the CPU; returns the
 * MatMul op events the call had there. */
static int loop_call(const ts_backend *b, ts_function *fn, int count, loop_watch *w)
{
  ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(3, 5), -1, 1, 7 + (uint64_t)count);
  ts_value args[2] = { TS_TENSOR_VALUE(x), TS_TENSOR_VALUE(ts_scalar_i32(count)) };
  ts_tensor *want = ts_function_call(fn, args, 2);
  assert_no_error();
  int before = w->matmuls;
  ts_tensor *got = NULL;
  TS_DEVICE_SCOPE(b) got = ts_function_call(fn, args, 2);
  assert_close_to(want, got);
  g_assert_true(ts_tensor_backend(got) == b);
  return w->matmuls - before;
}

/* A While over an argument bound runs on the GPU as a conditional node of
 * the call's one CUDA Graph: 0, 1 and many iterations of one concrete
 * function, from replays of one capture, nested two deep, with the CPU's
 * results; the host walks each
 * body once per call (one MatMul op event per loop body), so the device
 * counted the iterations.  No fallback is warned. */
static void test_loops_in_graphs(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  ts_scope *scope = ts_scope_begin();
  loop_watch w = { 0 };
  int id = watch_loops(&w);
  ts_function *counted = ts_function_new("counted_loop", counted_loop, "x, n");
  ts_function *nested = ts_function_new("nested_loops", nested_loops, "x, m");
  const int counts[] = { 0, 1, 9, 3, 0, 40 };
  for (guint k = 0; k < G_N_ELEMENTS(counts); k++)
    g_assert_cmpint(loop_call(b, counted, counts[k], &w), ==, 1);
  ts_value args[2] = { TS_TENSOR_VALUE(ts_zeros(TS_F32, TS_SHAPE(3, 5))),
                       TS_TENSOR_VALUE(ts_scalar_i32(1)) };
  ts_schedule sched;
  g_assert_true(ts_concrete_schedule(ts_function_get_concrete(counted, args, 2), &sched));
  g_test_message("CUDA:0: %" G_GINT64_FORMAT " captures, %" G_GINT64_FORMAT " replays",
                 sched.n_captures, sched.n_replays);
  g_assert_cmpint(sched.n_replays, >=, (int)G_N_ELEMENTS(counts) - 2); /* each count read anew */
  for (int m = 0; m <= 5; m++)
    g_assert_cmpint(loop_call(b, nested, m, &w), ==, 2);
  ts_listener_remove(id);
  if (w.warnings)
    g_test_message("warned: %s", w.said);
  g_assert_cmpint(w.warnings, ==, 0);
  g_free(w.said);
  ts_function_free(counted);
  ts_function_free(nested);
  ts_scope_end(scope);
}

/* A host read of a value inside an inner loop's body breaks the capture
 * there: both loops are dropped unrun, the outer one runs from the host
 * from its inputs (its body's captures segment the inner one, which the
 * reads break again), with the CPU's results on every call. */
static void read_matmul(const ts_event *ev, void *data)
{
  if (!strcmp(ev->op.op_name, "MatMul") && !strcmp(ev->op.device, "CUDA:0"))
    ts_tensor_get_f64(ev->op.outputs[0], 0);
}

static void test_loop_broken_inside(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  ts_scope *scope = ts_scope_begin();
  loop_watch w = { 0 };
  int id = watch_loops(&w);
  int reader = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), read_matmul, NULL);
  ts_function *nested = ts_function_new("nested_loops", nested_loops, "x, m");
  for (int call = 0; call < 3; call++)
    loop_call(b, nested, 4, &w);
  ts_listener_remove(reader);
  ts_listener_remove(id);
  g_assert_cmpint(w.warnings, ==, 2); /* the outer loop, then the inner one */
  g_assert_nonnull(strstr(w.said, "the host read a value of the device in MatMul"));
  g_free(w.said);
  ts_function_free(nested);
  ts_scope_end(scope);
}

/* An If on x's sum runs on the GPU as two conditional nodes of the
 * call's CUDA Graph: both branches captured once (one MatMul op event per
 * call), the device picking the branch from each replay's values, with
 * the CPU's results, no fallback warned. */
static void test_if_in_graphs(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  ts_scope *scope = ts_scope_begin();
  loop_watch w = { 0 };
  int id = watch_loops(&w);
  ts_function *fn = ts_function_new("branchy", branchy, "x");
  const double shifts[] = { 1, -1, -1, 1, 1 };
  ts_value arg;
  for (guint k = 0; k < G_N_ELEMENTS(shifts); k++) {
    arg = TS_TENSOR_VALUE(ts_add(ts_random_uniform(TS_F32, TS_SHAPE(3, 5), -1, 1, 40 + k),
                                 ts_scalar_f32((float)shifts[k])));
    ts_tensor *want = ts_function_call(fn, &arg, 1);
    assert_no_error();
    int before = w.matmuls;
    ts_tensor *got = NULL;
    TS_DEVICE_SCOPE(b) got = ts_function_call(fn, &arg, 1);
    assert_close_to(want, got);
    g_assert_cmpint(w.matmuls - before, ==, 1);
  }
  ts_schedule sched;
  g_assert_true(ts_concrete_schedule(ts_function_get_concrete(fn, &arg, 1), &sched));
  g_test_message("CUDA:0: %" G_GINT64_FORMAT " captures, %" G_GINT64_FORMAT " replays",
                 sched.n_captures, sched.n_replays);
  g_assert_cmpint(sched.n_replays, >=, 3);
  ts_listener_remove(id);
  if (w.warnings)
    g_test_message("warned: %s", w.said);
  g_assert_cmpint(w.warnings, ==, 0);
  g_free(w.said);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* branchy's If where every call captures anew (a printing If after it
 * keeps the graph in segments): the constant its else branch reads goes
 * to the GPU by a copy node of that branch's body, run only when the
 * branch is taken, so a call taking it after one that did not has the
 * CPU's result too (the copy is not kept as if it had been filled). */
static void test_if_branch_constant_recaptured(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("branchy_then_printed", branchy_then_printed, "x");
  const double shifts[] = { 1, -1, 1, -1 };
  ts_value arg;
  for (guint k = 0; k < G_N_ELEMENTS(shifts); k++) {
    arg = TS_TENSOR_VALUE(ts_add(ts_random_uniform(TS_F32, TS_SHAPE(3, 5), -1, 1, 60 + k),
                                 ts_scalar_f32((float)shifts[k])));
    ts_tensor *want = ts_function_call(fn, &arg, 1);
    assert_no_error();
    ts_tensor *got = NULL;
    TS_DEVICE_SCOPE(b) got = ts_function_call(fn, &arg, 1);
    assert_close_to(want, got);
  }
  ts_schedule sched;
  g_assert_true(ts_concrete_schedule(ts_function_get_concrete(fn, &arg, 1), &sched));
  g_assert_cmpint(sched.n_replays, ==, 0);
  ts_function_free(fn);
  ts_scope_end(scope);
}

static ts_op checked_op; /* the row checked_row traces */

static ts_tensor *checked_row(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *y = ts_arg(call, 1);
  ts_tensor *z = checked_op == TS_OP_FLOORDIV ? ts_floordiv(x, y)
                 : checked_op == TS_OP_MOD    ? ts_mod(x, y)
                                              : ts_pow(x, y);
  return ts_add(z, x);
}

/* Integer FloorDiv, FloorMod and Pow check their divisor or exponent on
 * the device in a graph, so the capture is not broken by a host read (the
 * calls replay), and a zero divisor or a negative exponent is still the
 * CPU's error: eagerly at the op, in a graph by the next host copy (the
 * launch already went out), once. */
static void test_integer_checks_in_graphs(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  static const struct {
    ts_op op;
    int32_t refused;
    const char *error;
  } ROWS[] = {
    { TS_OP_FLOORDIV, 0, "FloorDiv: Integer division by zero" },
    { TS_OP_MOD, 0, "FloorMod: Integer division by zero" },
    { TS_OP_POW, -1, "Pow: Integers to negative integer powers are not allowed" },
  };
  for (size_t r = 0; r < G_N_ELEMENTS(ROWS); r++) {
    ts_scope *scope = ts_scope_begin();
    ts_tensor *x = ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 7, -7, 9 });
    ts_tensor *good = ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 2, 3, 1 });
    ts_tensor *bad = ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 2, ROWS[r].refused, 1 });
    checked_op = ROWS[r].op;
    ts_function *fn = ts_function_new("checked_row", checked_row, "x, y");
    ts_value args[2] = { TS_TENSOR_VALUE(x), TS_TENSOR_VALUE(bad) };
    g_assert_null(ts_function_call(fn, args, 2)); /* the CPU's error */
    expect_error_containing(ROWS[r].error);
    args[1] = TS_TENSOR_VALUE(good);
    ts_tensor *want = ts_function_call(fn, args, 2);
    expect_checked_in_graphs(b, fn, args, 1, good, bad, want, ROWS[r].error);
    ts_function_free(fn);
    ts_scope_end(scope);
  }
}

/* Sort's rank kernel is O(n^2) per row: a row of 8192 sorts on the GPU,
 * one longer falls back to the CPU's sort with a warning; both give the
 * CPU's order. */
static void test_long_rows_sort_on_cpu(void)
{
  const ts_backend *b = cuda_or_skip();
  if (!b)
    return;
  static const int64_t rows[] = { 8192, 8193 };
  for (int r = 0; r < 2; r++) {
    ts_scope *scope = ts_scope_begin();
    ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(2, rows[r]), -1, 1, 3);
    ts_tensor *want = ts_sort(x, -1, true);
    seen s = { 0 };
    int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING) | TS_EVENT_MASK(TS_EVENT_OP_END),
                             on_event, &s);
    ts_tensor *got = NULL;
    TS_DEVICE_SCOPE(b) { got = ts_sort(ts_tensor_to_backend(x, b), -1, true); }
    ts_listener_remove(id);
    assert_no_error();
    g_assert_cmpint(s.fallbacks, ==, r);
    g_assert_true(s.on_cuda[TS_OP_SORT] == (r == 0));
    got = ts_tensor_to_backend(got, ts_backend_cpu());
    g_assert_cmpmem(ts_tensor_data(got), 2 * rows[r] * 4, ts_tensor_data(want), 2 * rows[r] * 4);
    ts_scope_end(scope);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cuda/note", test_note);
  g_test_add_func("/cuda/memory", test_memory);
  g_test_add_func("/cuda/events", test_events);
  g_test_add_func("/cuda/tensor-round-trip", test_tensor_round_trip);
  g_test_add_func("/cuda/kernels-on-device", test_kernels_on_device);
  g_test_add_func("/cuda/training-rows-on-device", test_training_rows_on_device);
  g_test_add_func("/cuda/stateless-uniform-bits", test_stateless_uniform_bits);
  g_test_add_func("/cuda/half-on-device", test_half_on_device);
  g_test_add_func("/cuda/conv-transpose-on-device", test_conv_transpose_on_device);
  g_test_add_func("/cuda/training-step-keeps-weights", test_training_step_keeps_weights);
  g_test_add_func("/cuda/copies-carry-operand", test_copies_carry_operand);
  g_test_add_func("/cuda/indices-checked-in-graphs", test_indices_checked_in_graphs);
  g_test_add_func("/cuda/empty-gather-checked-in-graphs", test_empty_gather_checked_in_graphs);
  g_test_add_func("/cuda/random-replays", test_random_replays);
  g_test_add_func("/cuda/integer-checks-in-graphs", test_integer_checks_in_graphs);
  g_test_add_func("/cuda/long-rows-sort-on-cpu", test_long_rows_sort_on_cpu);
  g_test_add_func("/cuda/many-index-checks-in-graphs", test_many_index_checks_in_graphs);
  g_test_add_func("/cuda/grids-past-the-cap", test_grids_past_the_cap);
  g_test_add_func("/cuda/peer-copies", test_peer_copies);
  g_test_add_func("/cuda/loops-in-graphs", test_loops_in_graphs);
  g_test_add_func("/cuda/loop-broken-inside", test_loop_broken_inside);
  g_test_add_func("/cuda/if-in-graphs", test_if_in_graphs);
  g_test_add_func("/cuda/if-branch-constant-recaptured", test_if_branch_constant_recaptured);
  int rc = g_test_run();
  ts_release_all();
  return rc;
}
