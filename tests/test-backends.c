/* test-backends.c — every op's cases on every backend against the CPU.
 *
 * Besides the CPU, this test registers a second backend of kind CPU whose
 * buffers the host may not touch (host_visible false): every tensor
 * reaches it through copy_from_host, leaves through copy_to_host, and
 * every op runs through its run_op, which checks that the inputs and
 * outputs are its own buffers before calling the CPU kernel.  The GPU
 * issue adds CUDA to the backends this harness runs. */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <tracescope-backend.h>

#include "test-quiet.h"

/* ---- the test backend ------------------------------------------------------------------ */

#define MAGIC 0x7e57bac0u

typedef struct header {
  _Alignas(64) uint32_t magic; /* 64 bytes in all: the data after it stays aligned */
  size_t bytes;
} header;

static int n_live, n_copies_in, n_copies_out, n_ops, n_foreign;

static void *test_alloc(const ts_backend *b, size_t bytes)
{
  header *h = aligned_alloc(64, sizeof *h + ((bytes + 63) / 64) * 64);
  if (!h)
    return NULL;
  h->magic = MAGIC;
  h->bytes = bytes;
  __atomic_add_fetch(&n_live, 1, __ATOMIC_RELAXED);
  return h + 1;
}

static void test_free(const ts_backend *b, void *ptr, size_t bytes)
{
  header *h = (header *)ptr - 1;
  g_assert_cmphex(h->magic, ==, MAGIC);
  g_assert_cmpuint(h->bytes, ==, bytes);
  h->magic = 0;
  free(h);
  __atomic_sub_fetch(&n_live, 1, __ATOMIC_RELAXED);
}

static bool test_to_host(const ts_backend *b, void *dst, const void *src, size_t bytes)
{
  n_copies_out++;
  memcpy(dst, src, bytes);
  return true;
}

static bool test_from_host(const ts_backend *b, void *dst, const void *src, size_t bytes)
{
  n_copies_in++;
  memcpy(dst, src, bytes);
  return true;
}

static bool on_test_backend(const ts_tensor *t, const ts_backend *b)
{
  /* Strings and variants live on the host whatever the device. */
  if (ts_tensor_dtype(t) == TS_STRING || ts_tensor_dtype(t) == TS_VARIANT)
    return true;
  return ts_tensor_backend(t) == b;
}

static bool test_run_op(const ts_backend *b, ts_kernel_ctx *k)
{
  n_ops++;
  for (int i = 0; i < ts_kernel_n_inputs(k); i++)
    if (!on_test_backend(ts_kernel_input(k, i), b))
      n_foreign++;
  bool ok = ts_kernel_run(k, TS_DEVICE_CPU);
  for (int i = 0; ok && i < ts_kernel_n_outputs(k); i++)
    if (ts_kernel_output(k, i) && !on_test_backend(ts_kernel_output(k, i), b))
      n_foreign++;
  return ok;
}

static const ts_backend *test_backend(void)
{
  static const ts_backend *b;
  if (!b) {
    ts_backend_i iface = {
      .name = "CPU-test", .kind = TS_DEVICE_CPU, .host_visible = false,
      .buffer_alloc = test_alloc, .buffer_free = test_free,
      .copy_to_host = test_to_host, .copy_from_host = test_from_host,
      .run_op = test_run_op,
    };
    b = ts_backend_register(&iface);
    g_assert_nonnull(b);
  }
  return b;
}

/* ---- the cases ------------------------------------------------------------------------ */

static ts_tensor *f32_2x3(void)
{
  return ts_constant(TS_F32, TS_SHAPE(2, 3), (float[]){ 1.5f, -2, 3, 0.25f, 5, -6 });
}

static ts_tensor *pos_2x3(void)
{
  return ts_constant(TS_F32, TS_SHAPE(2, 3), (float[]){ 1.5f, 2, 3, 0.25f, 5, 6 });
}

static ts_tensor *i32_2x3(void)
{
  return ts_constant(TS_I32, TS_SHAPE(2, 3), (int32_t[]){ 7, -2, 3, 4, 5, -6 });
}

static ts_tensor *bool_2x3(void)
{
  return ts_constant(TS_BOOL, TS_SHAPE(2, 3), (bool[]){ true, false, true, false, false, true });
}

/* One case per op: builds CPU inputs, runs the op (on the current device)
 * and returns its result (several outputs: concatenated or the last). */
static ts_tensor *run_case(ts_op op)
{
  ts_tensor *x = f32_2x3(), *p = pos_2x3(), *i = i32_2x3(), *b = bool_2x3();
  switch (op) {
  case TS_OP_FILL: return ts_fill(TS_SHAPE(2, 2), ts_scalar_f32(3));
  case TS_OP_ZEROS: return ts_zeros(TS_F64, TS_SHAPE(3));
  case TS_OP_ONES: return ts_ones(TS_I32, TS_SHAPE(2, 2));
  case TS_OP_ZEROS_LIKE: return ts_zeros_like(x);
  case TS_OP_ONES_LIKE: return ts_ones_like(i);
  case TS_OP_EYE: return ts_eye(TS_F32, 3, 4);
  case TS_OP_RANGE: return ts_range(TS_I32, 2, 11, 3);
  case TS_OP_RANDOM_UNIFORM: return ts_random_uniform(TS_F32, TS_SHAPE(4, 4), -1, 1, 7);
  case TS_OP_RANDOM_NORMAL: return ts_random_normal(TS_F64, TS_SHAPE(8), 0, 2, 9);
  case TS_OP_CAST: return ts_cast(x, TS_I32);
  case TS_OP_RESHAPE: return ts_reshape(x, TS_SHAPE(3, -1));
  case TS_OP_FLATTEN: return ts_flatten(ts_reshape(x, TS_SHAPE(1, 2, 3)));
  case TS_OP_TRANSPOSE: return ts_transpose(x, TS_ALL_AXES);
  case TS_OP_CONCAT: return ts_concat(((ts_tensor *[]){ x, p }), 2, 1);
  case TS_OP_SPLIT: {
    ts_tensor *parts[3];
    g_assert_cmpint(ts_split(x, 3, 1, parts), ==, 3);
    return ts_concat(parts, 3, 0);
  }
  case TS_OP_SLICE: return ts_slice(x, TS_INTS(0, 1), TS_INTS(2, -1));
  case TS_OP_GATHER: return ts_gather(x, ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 2, 0, 2 }), 1);
  case TS_OP_ADD: return ts_add(x, i);
  case TS_OP_SUB: return ts_sub(i, x);
  case TS_OP_MUL: return ts_mul(x, p);
  case TS_OP_DIV: return ts_div(x, p);
  case TS_OP_FLOORDIV: return ts_floordiv(i, ts_scalar_i32(4));
  case TS_OP_MOD: return ts_mod(i, ts_scalar_i32(4));
  case TS_OP_POW: return ts_pow(p, x);
  case TS_OP_MAXIMUM: return ts_maximum(x, ts_scalar_f32(0.5f));
  case TS_OP_MINIMUM: return ts_minimum(i, x);
  case TS_OP_NEG: return ts_neg(i);
  case TS_OP_ABS: return ts_abs(x);
  case TS_OP_EXP: return ts_exp(x);
  case TS_OP_LOG: return ts_log(p);
  case TS_OP_SQRT: return ts_sqrt(p);
  case TS_OP_TANH: return ts_tanh(x);
  case TS_OP_SIGMOID: return ts_sigmoid(x);
  case TS_OP_RELU: return ts_relu(x);
  case TS_OP_SOFTPLUS: return ts_softplus(x);
  case TS_OP_GREATER: return ts_greater(x, i);
  case TS_OP_GREATER_EQUAL: return ts_greater_equal(x, ts_scalar_f32(3));
  case TS_OP_LESS: return ts_less(i, x);
  case TS_OP_LESS_EQUAL: return ts_less_equal(x, p);
  case TS_OP_EQUAL: return ts_equal(x, p);
  case TS_OP_NOT_EQUAL: return ts_not_equal(x, p);
  case TS_OP_LOGICAL_AND: return ts_logical_and(b, ts_greater(x, ts_scalar_f32(0)));
  case TS_OP_LOGICAL_OR: return ts_logical_or(b, ts_greater(x, ts_scalar_f32(0)));
  case TS_OP_LOGICAL_NOT: return ts_logical_not(b);
  case TS_OP_WHERE: return ts_where(b, x, i);
  case TS_OP_REDUCE_SUM: return ts_reduce_sum(x, TS_AXES(1), false);
  case TS_OP_REDUCE_MEAN: return ts_reduce_mean(i, TS_ALL_AXES, true);
  case TS_OP_REDUCE_MAX: return ts_reduce_max(x, TS_AXES(0), false);
  case TS_OP_REDUCE_MIN: return ts_reduce_min(i, TS_AXES(-1), true);
  case TS_OP_REDUCE_PROD: return ts_reduce_prod(x, TS_ALL_AXES, false);
  case TS_OP_ARGMAX: return ts_argmax(x, 1);
  case TS_OP_MATMUL: return ts_matmul_t(x, p, false, true);
  case TS_OP_SOFTMAX: return ts_softmax(x);
  case TS_OP_LOG_SOFTMAX: return ts_log_softmax(x);
  case TS_OP_SPARSE_SOFTMAX_CROSS_ENTROPY:
    return ts_sparse_softmax_cross_entropy(ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 2, 0 }), x);
  case TS_OP_CONV2D:
    return ts_conv2d(ts_reshape(ts_range(TS_F32, 0, 32, 1), TS_SHAPE(1, 4, 4, 2)),
                     ts_reshape(ts_range(TS_F32, -9, 9, 1), TS_SHAPE(3, 3, 2, 1)), 1, 1,
                     TS_PADDING_SAME);
  case TS_OP_MAX_POOL2D:
    return ts_max_pool2d(ts_reshape(ts_range(TS_F32, 0, 32, 1), TS_SHAPE(1, 4, 4, 2)), 2, 2, 2,
                         2, TS_PADDING_VALID);
  case TS_OP_IDENTITY: return ts_identity(x);
  case TS_OP_SHAPE: return ts_shape(x);
  case TS_OP_PRINT: {
    int quiet = test_quiet_begin();
    g_assert_true(ts_print(x, "on", ts_scalar_string("the device")));
    test_quiet_end(quiet);
    return ts_identity(x);
  }
  case TS_OP_READ_VARIABLE:
  case TS_OP_ASSIGN_VARIABLE:
  case TS_OP_ASSIGN_ADD_VARIABLE:
  case TS_OP_ASSIGN_SUB_VARIABLE: {
    ts_tensor *v = ts_variable_new(x, "v");
    ts_tensor *r = op == TS_OP_READ_VARIABLE     ? ts_read(v)
                   : op == TS_OP_ASSIGN_VARIABLE ? ts_assign(v, p)
                   : op == TS_OP_ASSIGN_ADD_VARIABLE ? ts_assign_add(v, p)
                                                     : ts_assign_sub(v, p);
    r = ts_add(r, ts_read(v)); /* the variable itself changed */
    ts_tensor_unref(v);
    return r;
  }
  case TS_OP_TENSOR_LIST_RESERVE:
  case TS_OP_TENSOR_LIST_SET_ITEM:
  case TS_OP_TENSOR_LIST_GET_ITEM:
  case TS_OP_TENSOR_LIST_STACK: {
    ts_tensor *ta = ts_tensor_array(TS_F32, ts_scalar_i32(2));
    ta = ts_tensor_array_write(ta, ts_scalar_i32(0), x);
    ta = ts_tensor_array_write(ta, ts_scalar_i32(1), p);
    if (op == TS_OP_TENSOR_LIST_GET_ITEM)
      return ts_tensor_array_read(ta, ts_scalar_i32(1));
    return ts_tensor_array_stack(ta);
  }
  default: return NULL;
  }
}

/* Ops that exist only as graph nodes: covered by the graph tests (the
 * fused ops, made by the optimizer only: test-passes). */
static bool graph_only(ts_op op)
{
  return (ts_op_traits(op) & (TS_OP_TRAIT_INPUT | TS_OP_TRAIT_VALUE | TS_OP_TRAIT_CONTROL_FLOW)) ||
         op == TS_OP_FUSED_ELEMENTWISE || op == TS_OP_FUSED_MATMUL || op == TS_OP_FUSED_CONV2D;
}

/* Normalised error of got against want (both on the CPU). */
static double nerr(const ts_tensor *want, const ts_tensor *got)
{
  g_assert_cmpint(ts_tensor_dtype(got), ==, ts_tensor_dtype(want));
  g_assert_true(ts_shape_equal(ts_tensor_shape(got), ts_tensor_shape(want)));
  double num = 0, den = 0;
  for (int64_t k = 0; k < ts_tensor_size(want); k++) {
    double w = ts_tensor_get_f64(want, k), g = ts_tensor_get_f64(got, k);
    if (isnan(w) && isnan(g))
      continue;
    num += (w - g) * (w - g);
    den += w * w;
  }
  return sqrt(num / (den > 0 ? den : 1));
}

static void test_every_op_every_backend(void)
{
  const ts_backend *extra = test_backend();
  g_assert_cmpint(ts_backend_count(), >=, 2);
  int covered = 0;
  for (int op = 0; op < TS_OP_COUNT; op++) {
    if (graph_only(op))
      continue;
    ts_scope *scope = ts_scope_begin();
    ts_tensor *want = run_case(op);
    if (!want)
      g_error("op %s has no case in the backend harness", ts_op_name(op));
    g_assert_true(ts_tensor_backend(want) == ts_backend_cpu());
    for (int k = 0; k < ts_backend_count(); k++) {
      const ts_backend *b = ts_backend_get(k);
      n_foreign = 0;
      int ops_before = n_ops;
      ts_tensor *got = NULL;
      TS_DEVICE_SCOPE(b) { got = run_case(op); }
      if (!got)
        g_error("%s on %s: %s", ts_op_name(op), ts_backend_name(b),
                ts_failed() ? ts_error_peek()->message : "no result");
      if (b == extra) {
        if (ts_tensor_backend(got) != b)
          g_error("%s on %s: the result is on %s", ts_op_name(op), ts_backend_name(b),
                  ts_backend_name(ts_tensor_backend(got)));
        g_assert_null(ts_tensor_data(got)); /* the host cannot read it */
        g_assert_cmpint(n_ops, >, ops_before);
        if (n_foreign)
          g_error("%s on %s: a kernel saw a tensor of another backend", ts_op_name(op),
                  ts_backend_name(b));
      }
      ts_tensor *host = ts_tensor_to_backend(got, ts_backend_cpu());
      g_assert_nonnull(host);
      double e = nerr(want, host);
      if (e > 1e-6)
        g_error("%s on %s differs from the CPU: normalised error %g", ts_op_name(op),
                ts_backend_name(b), e);
    }
    covered++;
    ts_scope_end(scope);
  }
  g_assert_cmpint(covered, ==, TS_OP_COUNT - 8); /* all but Placeholder, Const, VarHandle, If, While
                                                  * and the three fused ops */
  g_assert_cmpint(n_copies_in, >, 0);
  g_assert_cmpint(n_copies_out, >, 0);
}

/* Op events name the device that ran the op; an op it cannot run falls
 * back to the CPU. */
static const char *last_device;
static void on_end(const ts_event *ev, void *data)
{
  last_device = ev->op.device;
}

static void test_placement_and_events(void)
{
  const ts_backend *extra = test_backend();
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_end, NULL);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = f32_2x3();
  ts_add(x, x);
  g_assert_cmpstr(last_device, ==, "CPU");
  ts_tensor *y = NULL;
  TS_DEVICE_SCOPE(extra) { y = ts_add(x, x); }
  g_assert_cmpstr(last_device, ==, "CPU-test");
  g_assert_true(ts_current_device() == ts_backend_cpu());
  /* an op with tensors on two backends runs where the scope says */
  ts_tensor *z = ts_mul(y, x);
  g_assert_cmpstr(last_device, ==, "CPU");
  g_assert_true(ts_tensor_backend(z) == ts_backend_cpu());
  int copies = n_copies_out;
  char *s = ts_tensor_to_string(y); /* printing copies to the host */
  g_assert_cmpstr(s, ==, "Tensor(\n[[  3.   -4.    6. ]\n [  0.5  10.  -12. ]], shape=(2, 3), dtype=float32)");
  free(s);
  g_assert_cmpint(n_copies_out, >, copies);
  /* so does saving; the loaded copy is on the CPU */
  char *path = g_build_filename(g_get_tmp_dir(), "test-backends-XXXXXX.npy", NULL);
  int fd = g_mkstemp(path);
  g_assert_cmpint(fd, >=, 0);
  close(fd);
  g_assert_true(ts_npy_save(path, y));
  ts_tensor *back = ts_npy_load(path);
  g_assert_nonnull(back);
  g_assert_true(ts_tensor_backend(back) == ts_backend_cpu());
  g_assert_cmpfloat(ts_tensor_get_f64(back, 5), ==, -12);
  g_unlink(path);
  g_free(path);
  ts_scope_end(scope);
  ts_listener_remove(id);
  ts_release_all();
  g_assert_cmpint(n_live, ==, 0); /* every buffer went back */
}

static void test_register_errors(void)
{
  ts_backend_i bad = { .name = "CPU" };
  g_assert_null(ts_backend_register(&bad));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_nonnull(strstr(e->message, "ts_backend_register"));
  ts_error_free(e);
  g_assert_null(ts_backend_register(NULL));
  ts_error_clear();
  ts_backend_i dup = { .name = "CPU", .buffer_alloc = test_alloc, .buffer_free = test_free,
                       .copy_to_host = test_to_host, .copy_from_host = test_from_host };
  g_assert_null(ts_backend_register(&dup));
  e = ts_error_take();
  g_assert_nonnull(strstr(e->message, "exists"));
  ts_error_free(e);
  g_assert_null(ts_backend_by_name("no such"));
  g_assert_cmpstr(ts_backend_name(ts_backend_cpu()), ==, "CPU");
}


/* With shared buffers, a large result's own memory can go to another
 * process: the fd maps the same values, and the engine never reuses it. */
static void test_export_fd(void)
{
  ts_cpu_share_buffers(true);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *big = ts_range(TS_F32, 0, 1 << 20, 1); /* 4 MiB */
  ts_tensor *small = ts_range(TS_F32, 0, 4, 1);
  size_t offset = 1;
  g_assert_cmpint(ts_tensor_export_fd(small, &offset), ==, -1);
  int fd = ts_tensor_export_fd(big, &offset);
  g_assert_cmpint(fd, >=, 0);
  g_assert_cmpuint(offset, ==, 0);
  size_t bytes = (size_t)4 << 20;
  const float *seen = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  g_assert_true(seen != MAP_FAILED);
  close(fd);
  g_assert_cmpfloat(seen[12345], ==, 12345.0f);
  ts_scope_end(scope);
  /* the same size again: a new buffer, the exported one stays as it was */
  scope = ts_scope_begin();
  ts_tensor *again = ts_fill(TS_SHAPE(1 << 20), ts_scalar_f32(-1.0f));
  g_assert_nonnull(again);
  g_assert_cmpfloat(seen[12345], ==, 12345.0f);
  g_assert_cmpfloat(ts_tensor_get_f64(again, 12345), ==, -1.0);
  ts_scope_end(scope);
  munmap((void *)seen, bytes);
  ts_cpu_share_buffers(false);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/backends/every-op-every-backend", test_every_op_every_backend);
  g_test_add_func("/backends/placement-and-events", test_placement_and_events);
  g_test_add_func("/backends/register-errors", test_register_errors);
  g_test_add_func("/backends/export-fd", test_export_fd);
  return g_test_run();
}
