/* test-backends.c — backends beside the ops: placement and op events,
 * copies to and from a device the host may not touch, registration
 * errors, shared CPU buffers.  Every op on every backend is
 * tests/test-op-rows.c.
 *
 * Besides the CPU, this test registers a second backend of kind CPU whose
 * buffers the host may not touch (host_visible false): every tensor
 * reaches it through copy_from_host, leaves through copy_to_host, and
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
  g_test_add_func("/backends/export-fd", test_export_fd);
  return g_test_run();
}
