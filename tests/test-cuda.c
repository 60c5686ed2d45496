/* test-cuda.c — the CUDA backend (engine/backend/cuda/) on a real GPU:
 * registration with the device's name and memory, memory that moves only
 * through its copies, memsets, device-to-device copies, events, and ops
 * that have no CUDA kernel falling back to the CPU visibly.  Without a GPU
 * (or without the driver) every test skips, saying why. */
#include <glib.h>
#include <string.h>
#include <tracescope-backend.h>

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
  const ts_backend_i *bi = ts_backend_iface(b);
  g_assert_false(bi->host_visible);
  size_t free_bytes = 0, total = 0;
  g_assert_true(ts_backend_memory_info(b, &free_bytes, &total));
  g_assert_cmpuint(free_bytes, <=, total);
  g_assert_cmpuint(total, >, (size_t)1 << 30);

  enum { N = 1 << 20 };
  float *host = g_new(float, N), *back = g_new0(float, N);
  for (int i = 0; i < N; i++)
    host[i] = (float)i * 0.5f;
  void *a = bi->buffer_alloc(b, N * sizeof(float)), *c = bi->buffer_alloc(b, N * sizeof(float));
  g_assert_nonnull(a);
  g_assert_nonnull(c);
  g_assert_true(bi->copy_from_host(b, a, host, N * sizeof(float)));
  g_assert_true(bi->copy(b, c, b, a, N * sizeof(float)));
  g_assert_true(bi->copy_to_host(b, back, c, N * sizeof(float)));
  g_assert_cmpmem(back, N * sizeof(float), host, N * sizeof(float));
  g_assert_true(bi->memset(b, c, 0, N * sizeof(float)));
  g_assert_true(bi->copy_to_host(b, back, c, N * sizeof(float)));
  for (int i = 0; i < N; i++)
    g_assert_cmpfloat(back[i], ==, 0);
  bi->buffer_free(b, a, N * sizeof(float));
  /* the cache hands the block back for the same size */
  void *again = bi->buffer_alloc(b, N * sizeof(float));
  g_assert_true(again == a);
  bi->buffer_free(b, again, N * sizeof(float));
  bi->buffer_free(b, c, N * sizeof(float));
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
  void *buf = bi->buffer_alloc(b, BYTES);
  g_assert_true(bi->memset(b, buf, 1, BYTES));
  g_assert_true(bi->event_record(b, end));
  g_assert_true(ts_backend_synchronize(b));
  g_assert_true(bi->event_query(b, end));
  uint64_t ns = 0;
  g_assert_true(bi->event_elapsed_ns(b, start, end, &ns));
  g_assert_cmpuint(ns, >, 0);
  bi->buffer_free(b, buf, BYTES);
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

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cuda/note", test_note);
  g_test_add_func("/cuda/memory", test_memory);
  g_test_add_func("/cuda/events", test_events);
  g_test_add_func("/cuda/tensor-round-trip", test_tensor_round_trip);
  int rc = g_test_run();
  ts_release_all();
  return rc;
}
