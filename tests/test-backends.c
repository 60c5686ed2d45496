/* test-backends.c — backends beside the ops: placement and op events,
 * copies to and from a device the host may not touch, registration
 * errors, shared CPU buffers.  Every op on every backend is
 * tests/test-op-rows.c.
 *
 * Besides the CPU, this test registers a second backend of kind CPU whose
 * buffers the host may not touch (its buffer type not is_host): every
 * tensor reaches it through its buffers' set, leaves through get, and
 * every op runs through its run_op, which checks that the inputs and
 * outputs are its own buffers before calling the CPU kernel. */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <tracescope-backend.h>


/* ---- the test backend ------------------------------------------------------------------ */

#define MAGIC 0x7e57bac0u

typedef struct header {
  _Alignas(64) uint32_t magic; /* 64 bytes in all: the data after it stays aligned */
  size_t bytes;
} header;

static int n_live, n_copies_in, n_copies_out, n_ops, n_foreign;

static void test_free(ts_buffer *buf)
{
  header *h = ts_buffer_context(buf);
  g_assert_cmphex(h->magic, ==, MAGIC);
  g_assert_cmpuint(h->bytes, ==, ts_buffer_size(buf));
  h->magic = 0;
  free(h);
  __atomic_sub_fetch(&n_live, 1, __ATOMIC_RELAXED);
}

static bool test_to_host(const ts_buffer *buf, size_t offset, void *dst, size_t bytes)
{
  n_copies_out++;
  g_assert_cmpuint(offset + bytes, <=, ts_buffer_size(buf)); /* the engine checked */
  memcpy(dst, (char *)ts_buffer_base(buf) + offset, bytes);
  return true;
}

static bool test_from_host(ts_buffer *buf, size_t offset, const void *src, size_t bytes)
{
  n_copies_in++;
  g_assert_cmpuint(offset + bytes, <=, ts_buffer_size(buf));
  memcpy((char *)ts_buffer_base(buf) + offset, src, bytes);
  return true;
}

/* No memset, no copy_from: the engine goes through set and the host. */
static const ts_buffer_i TEST_BUFFER = { .free_buffer = test_free, .get = test_to_host,
                                         .set = test_from_host };

/* misalign: the next buffer's base is off by this many bytes (a backend's bug) */
static size_t misalign;

static ts_buffer *test_alloc(const ts_buffer_type *bt, size_t bytes)
{
  header *h = aligned_alloc(64, sizeof *h + ((bytes + 63) / 64) * 64 + 64);
  if (!h)
    return NULL;
  h->magic = MAGIC;
  h->bytes = bytes;
  __atomic_add_fetch(&n_live, 1, __ATOMIC_RELAXED);
  ts_buffer *buf = ts_buffer_new(bt, &TEST_BUFFER, (char *)(h + 1) + misalign, bytes, h);
  g_assert_nonnull(buf);
  return buf;
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
      .name = "CPU-test", .kind = TS_DEVICE_CPU,
      .buffer_type = { .name = "CPU-test memory", .alignment = 64, .max_size = 1 << 20,
                       .alloc_buffer = test_alloc },
      .run_op = test_run_op,
    };
    b = ts_backend_register(&iface);
    g_assert_nonnull(b);
  }
  return b;
}

static ts_tensor *f32_2x3(void)
{
  return ts_constant(TS_F32, TS_SHAPE(2, 3), (float[]){ 1.5f, -2, 3, 0.25f, 5, -6 });
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
  int ops = n_ops;
  n_foreign = 0;
  TS_DEVICE_SCOPE(extra) { y = ts_add(x, x); }
  g_assert_cmpstr(last_device, ==, "CPU-test");
  g_assert_cmpint(n_ops, ==, ops + 1); /* through its run_op, */
  g_assert_cmpint(n_foreign, ==, 0);   /* on its own buffers */
  g_assert_true(ts_tensor_backend(y) == extra);
  g_assert_null(ts_tensor_data(y));    /* which the host cannot read */
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
  ts_backend_i dup = { .name = "CPU",
                       .buffer_type = { .alignment = 64, .alloc_buffer = test_alloc } };
  g_assert_null(ts_backend_register(&dup));
  e = ts_error_take();
  g_assert_nonnull(strstr(e->message, "exists"));
  ts_error_free(e);
  /* a buffer type's alignment: a power of two the memory planner can keep */
  size_t aligns[] = { 0, 48, 2 * TS_BUFFER_MAX_ALIGNMENT };
  for (size_t i = 0; i < G_N_ELEMENTS(aligns); i++) {
    ts_backend_i odd = { .name = "odd",
                         .buffer_type = { .alignment = aligns[i], .alloc_buffer = test_alloc } };
    g_assert_null(ts_backend_register(&odd));
    e = ts_error_take();
    g_assert_nonnull(strstr(e->message, "alignment"));
    ts_error_free(e);
  }
  ts_backend_i no_alloc = { .name = "no alloc", .buffer_type = { .alignment = 64 } };
  g_assert_null(ts_backend_register(&no_alloc));
  e = ts_error_take();
  g_assert_nonnull(strstr(e->message, "alloc_buffer"));
  ts_error_free(e);
  g_assert_null(ts_backend_by_name("no such"));
  g_assert_cmpstr(ts_backend_name(ts_backend_cpu()), ==, "CPU");
}


/* ---- buffer types and buffers ---------------------------------------------------------- */

/* Each backend's buffer type says what its buffers are. */
static void test_buffer_types(void)
{
  const ts_buffer_type *cpu = ts_backend_buffer_type(ts_backend_cpu());
  const ts_buffer_type *dev = ts_backend_buffer_type(test_backend());
  g_assert_true(ts_buffer_type_backend(cpu) == ts_backend_cpu());
  g_assert_cmpstr(ts_buffer_type_name(cpu), ==, "CPU"); /* no name of its own: the backend's */
  g_assert_true(ts_buffer_type_is_host(cpu));
  g_assert_cmpuint(ts_buffer_type_alignment(cpu), ==, 64);
  g_assert_cmpuint(ts_buffer_type_max_size(cpu), ==, SIZE_MAX);
  g_assert_cmpstr(ts_buffer_type_name(dev), ==, "CPU-test memory");
  g_assert_false(ts_buffer_type_is_host(dev));
  g_assert_cmpuint(ts_buffer_type_max_size(dev), ==, 1 << 20);
  size_t bytes = 0;
  g_assert_true(ts_buffer_type_alloc_size(dev, TS_F64, TS_SHAPE(3, 5), &bytes));
  g_assert_cmpuint(bytes, ==, 3 * 5 * 8);
  g_assert_true(ts_buffer_type_alloc_size(dev, TS_F32, TS_SHAPE((int64_t)1 << 40, (int64_t)1 << 40, 0),
                                          &bytes));
  g_assert_cmpuint(bytes, ==, 0); /* empty, not an overflow */
  /* a size that overflows size_t is an error naming the tensor */
  g_assert_false(ts_buffer_type_alloc_size(dev, TS_F64, TS_SHAPE((int64_t)1 << 40, (int64_t)1 << 40),
                                           &bytes));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_cmpint(e->code, ==, TS_ERR_NO_MEMORY);
  g_assert_nonnull(strstr(e->message, "too large"));
  ts_error_free(e);
  /* over the type's largest buffer, before any memory is asked for */
  int live = n_live;
  g_assert_null(ts_buffer_alloc(dev, (1 << 20) + 1, TS_BUFFER_USAGE_TENSOR));
  g_assert_cmpint(n_live, ==, live);
  e = ts_error_take();
  g_assert_nonnull(strstr(e->message, "largest buffer of CPU-test memory"));
  ts_error_free(e);
  /* a backend handing out a base that is not aligned: refused, and freed */
  misalign = 8;
  g_assert_null(ts_buffer_alloc(dev, 256, TS_BUFFER_USAGE_TENSOR));
  misalign = 0;
  g_assert_cmpint(n_live, ==, live);
  e = ts_error_take();
  g_assert_nonnull(strstr(e->message, "64-byte aligned"));
  ts_error_free(e);
  /* 0 bytes: a buffer with nothing in it, at an address all the same */
  ts_buffer *empty = ts_buffer_alloc(dev, 0, TS_BUFFER_USAGE_TENSOR);
  g_assert_nonnull(empty);
  g_assert_nonnull(ts_buffer_base(empty));
  g_assert_cmpuint(ts_buffer_size(empty), ==, 0);
  g_assert_true(ts_buffer_set(empty, 0, NULL, 0));
  char one;
  g_assert_false(ts_buffer_get(empty, 0, &one, 1));
  ts_error_clear();
  ts_buffer_free(empty);
  g_assert_cmpint(n_live, ==, live);
}

/* memset, set, get and copies by offset, within a buffer and across the
 * CPU and a device the host cannot read; every range checked. */
static void test_buffer_ops(void)
{
  const ts_buffer_type *cpu = ts_backend_buffer_type(ts_backend_cpu());
  const ts_buffer_type *dev = ts_backend_buffer_type(test_backend());
  ts_buffer *h = ts_buffer_alloc(cpu, 256, TS_BUFFER_USAGE_TENSOR);
  ts_buffer *d = ts_buffer_alloc(dev, 256, TS_BUFFER_USAGE_ARENA);
  g_assert_nonnull(h);
  g_assert_nonnull(d);
  g_assert_cmpint(ts_buffer_get_usage(d), ==, TS_BUFFER_USAGE_ARENA);
  g_assert_true(ts_buffer_get_type(d) == dev);
  g_assert_cmpuint((uintptr_t)ts_buffer_base(d) % 64, ==, 0);
  /* sub-allocation: an aligned range within the buffer */
  g_assert_true(ts_buffer_at(d, 128, 64, 64) == (char *)ts_buffer_base(d) + 128);
  g_assert_null(ts_buffer_at(d, 200, 64, 1)); /* past the end */
  ts_error *e = ts_error_take();
  g_assert_nonnull(strstr(e->message, "outside the 256-byte buffer of CPU-test memory"));
  ts_error_free(e);
  g_assert_null(ts_buffer_at(d, 8, 8, 64)); /* not aligned */
  e = ts_error_take();
  g_assert_nonnull(strstr(e->message, "not 64-byte aligned"));
  ts_error_free(e);

  unsigned char src[64], back[64];
  for (int i = 0; i < 64; i++)
    src[i] = (unsigned char)i;
  int in = n_copies_in, out = n_copies_out;
  g_assert_true(ts_buffer_set(d, 64, src, 64));
  g_assert_cmpint(n_copies_in, ==, in + 1);
  /* memset without a backend memset: through set */
  g_assert_true(ts_buffer_memset(d, 0, 0xab, 64));
  g_assert_cmpint(n_copies_in, ==, in + 2);
  /* within the device (no copy_from: through the host) */
  g_assert_true(ts_buffer_copy(d, 128, d, 64, 64));
  g_assert_true(ts_buffer_get(d, 128, back, 64));
  g_assert_cmpmem(back, 64, src, 64);
  g_assert_true(ts_buffer_get(d, 0, back, 64));
  for (int i = 0; i < 64; i++)
    g_assert_cmpuint(back[i], ==, 0xab);
  /* device to CPU is one get, CPU to device one set */
  out = n_copies_out;
  g_assert_true(ts_buffer_copy(h, 32, d, 64, 64));
  g_assert_cmpint(n_copies_out, ==, out + 1);
  g_assert_cmpmem((char *)ts_buffer_base(h) + 32, 64, src, 64);
  g_assert_true(ts_buffer_memset(h, 0, 7, 32));
  in = n_copies_in;
  g_assert_true(ts_buffer_copy(d, 192, h, 0, 64));
  g_assert_cmpint(n_copies_in, ==, in + 1);
  g_assert_true(ts_buffer_get(d, 192, back, 32));
  for (int i = 0; i < 32; i++)
    g_assert_cmpuint(back[i], ==, 7);

  /* ranges out of the buffer, and offsets whose end overflows: errors,
   * and the backend never sees them */
  in = n_copies_in, out = n_copies_out;
  struct { size_t offset, bytes; } bad[] = { { 250, 7 }, { 257, 0 }, { SIZE_MAX, 2 },
                                             { 8, SIZE_MAX - 4 } };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_false(ts_buffer_set(d, bad[i].offset, src, bad[i].bytes));
    g_assert_false(ts_buffer_get(d, bad[i].offset, back, bad[i].bytes));
    g_assert_false(ts_buffer_memset(d, bad[i].offset, 0, bad[i].bytes));
    g_assert_false(ts_buffer_copy(h, 0, d, bad[i].offset, bad[i].bytes));
    g_assert_false(ts_buffer_copy(d, bad[i].offset, h, 0, bad[i].bytes));
    e = ts_error_take();
    g_assert_cmpint(e->code, ==, TS_ERR_INVALID_ARGUMENT);
    g_assert_nonnull(strstr(e->message, "outside the"));
    ts_error_free(e);
  }
  g_assert_cmpint(n_copies_in, ==, in);
  g_assert_cmpint(n_copies_out, ==, out);
  ts_buffer_free(d);
  ts_buffer_free(h);
  ts_buffer_free(NULL);
}

/* A tensor on a device references its buffer and its offset there; a
 * view shares them. */
static void test_tensor_buffer(void)
{
  int live = n_live;
  ts_scope *scope = ts_scope_begin();
  ts_tensor *y = NULL, *v = NULL;
  TS_DEVICE_SCOPE(test_backend())
  {
    y = ts_add(f32_2x3(), f32_2x3());
    v = ts_reshape(y, TS_SHAPE(3, 2));
  }
  size_t offset = 99;
  ts_buffer *buf = ts_tensor_buffer(y, &offset);
  g_assert_nonnull(buf);
  g_assert_cmpuint(offset, ==, 0);
  g_assert_true(ts_buffer_get_type(buf) == ts_backend_buffer_type(test_backend()));
  g_assert_cmpuint(ts_buffer_size(buf), ==, 6 * sizeof(float));
  float host[6];
  g_assert_true(ts_buffer_get(buf, offset, host, sizeof host));
  g_assert_cmpfloat(host[5], ==, -12);
  g_assert_true(ts_tensor_buffer(v, NULL) == buf);
  /* a small host tensor lives inline: no buffer */
  g_assert_null(ts_tensor_buffer(f32_2x3(), NULL));
  ts_scope_end(scope);
  ts_release_all();
  g_assert_cmpint(n_live, ==, live);
}

/* A buffer type whose tensors need 64 bytes past their elements (kernels
 * that read a vector past the end): each tensor's buffer has them, and the
 * memory planner, whose slots do not, gives such tensors buffers of their
 * own instead of arena offsets. */
static size_t padded(const ts_buffer_type *bt, ts_dtype dtype, ts_shape shape, size_t bytes)
{
  return bytes + 64;
}

static const ts_backend *padded_backend(void)
{
  static const ts_backend *b;
  if (!b) {
    ts_backend_i iface = {
      .name = "CPU-padded", .kind = TS_DEVICE_CPU,
      .buffer_type = { .alignment = 64, .is_host = true, .get_alloc_size = padded,
                       .alloc_buffer = test_alloc },
    };
    b = ts_backend_register(&iface);
    g_assert_nonnull(b);
  }
  return b;
}

static int n_arena_outputs, n_own_outputs;
static void count_output_buffers(const ts_event *ev, void *data)
{
  for (int i = 0; i < ev->op.n_outputs; i++) {
    ts_buffer *buf = ts_tensor_buffer(ev->op.outputs[i], NULL);
    if (buf && ts_buffer_get_usage(buf) == TS_BUFFER_USAGE_ARENA)
      n_arena_outputs++;
    else if (buf)
      n_own_outputs++;
  }
}

static ts_tensor *three_ops(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0);
  return ts_reduce_sum(ts_exp(ts_neg(ts_sin(x))), TS_ALL_AXES, false);
}

static void test_alloc_size(void)
{
  const ts_backend *b = padded_backend();
  const ts_buffer_type *bt = ts_backend_buffer_type(b);
  size_t bytes = 0;
  g_assert_true(ts_buffer_type_alloc_size(bt, TS_F32, TS_SHAPE(2, 3), &bytes));
  g_assert_cmpuint(bytes, ==, 6 * 4 + 64);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_range(TS_F32, 0, 64 * 64, 1);
  x = ts_reshape(x, TS_SHAPE(64, 64));
  ts_tensor *y = NULL;
  TS_DEVICE_SCOPE(b) { y = ts_sin(x); }
  g_assert_cmpuint(ts_buffer_size(ts_tensor_buffer(y, NULL)), ==, 64 * 64 * 4 + 64);
  /* in a graph: the CPU's intermediate values are in its arena, the padded
   * backend's in buffers of their own */
  ts_function *f = ts_function_new("three_ops", three_ops, "x");
  ts_value args[1] = { TS_TENSOR_VALUE(x) };
  ts_tensor *want = ts_function_call(f, args, 1);
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), count_output_buffers, NULL);
  for (int i = 0; i < 2; i++) {
    n_arena_outputs = n_own_outputs = 0;
    ts_function_call(f, args, 1);
  }
  g_assert_cmpint(n_arena_outputs, >, 0);
  ts_tensor *got = NULL;
  for (int i = 0; i < 2; i++) {
    n_arena_outputs = n_own_outputs = 0;
    TS_DEVICE_SCOPE(b) { got = ts_function_call(f, args, 1); }
  }
  ts_listener_remove(id);
  g_assert_false(ts_failed());
  g_assert_cmpint(n_arena_outputs, ==, 0);
  g_assert_cmpint(n_own_outputs, >=, 2); /* the fused elementwise ops, the sum */
  g_assert_cmpfloat(ts_tensor_get_f64(got, 0), ==, ts_tensor_get_f64(want, 0));
  ts_function_free(f);
  ts_scope_end(scope);
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
  /* its size sealed: the other process maps it without fear of SIGBUS */
  g_assert_cmpint(fcntl(fd, F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_GROW), ==, F_SEAL_SHRINK | F_SEAL_GROW);
  g_assert_cmpint(ftruncate(fd, 0), ==, -1);
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
  g_test_add_func("/backends/placement-and-events", test_placement_and_events);
  g_test_add_func("/backends/register-errors", test_register_errors);
  g_test_add_func("/backends/buffer-types", test_buffer_types);
  g_test_add_func("/backends/buffer-ops", test_buffer_ops);
  g_test_add_func("/backends/tensor-buffer", test_tensor_buffer);
  g_test_add_func("/backends/alloc-size", test_alloc_size);
  g_test_add_func("/backends/export-fd", test_export_fd);
  return g_test_run();
}
