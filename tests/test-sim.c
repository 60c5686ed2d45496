/* test-sim.c — the backend interface v2 on SIM:0, the simulated discrete
 * GPU (engine/backend/sim.c): its buffers are not host memory, data moves
 * through its copies, work runs on its stream's thread (events,
 * synchronize, errors reported late), graph runs are captured as plans and
 * replayed, device activity reaches collectors with correlation and
 * graph-node ids, and supports_op sees shapes and attributes. */
#include <fcntl.h>
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <tracescope-backend.h>

#include "test-device-control-flow.h"
#include "test-device-random.h"
#include "test-device-step.h"
#include "test-errors.h"

/* What a function prints is not TAP: stdout goes to /dev/null meanwhile. */
static int stdout_muted(void)
{
  fflush(stdout);
  int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
  dup2(null, STDOUT_FILENO);
  close(null);
  return saved;
}

static void stdout_restored(int saved)
{
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
}

static const ts_backend *sim(void)
{
  const ts_backend *b = ts_backend_by_name("SIM:0");
  g_assert_nonnull(b);
  return b;
}

static ts_tensor *matrix(int rows, int cols, float base)
{
  ts_tensor *t = ts_tensor_new(TS_F32, TS_SHAPE(rows, cols));
  float *d = ts_tensor_data(t);
  for (int i = 0; i < rows * cols; i++)
    d[i] = base + (float)(i % 7) * 0.25f - (float)(i % 3);
  return t;
}

static void assert_close(ts_tensor *want, ts_tensor *got)
{
  assert_no_error();
  g_assert_nonnull(got);
  g_assert_true(ts_tensor_backend(want) == ts_backend_cpu());
  g_assert_true(ts_shape_equal(ts_tensor_shape(want), ts_tensor_shape(got)));
  g_assert_cmpint(ts_tensor_dtype(want), ==, ts_tensor_dtype(got));
  for (int64_t i = 0; i < ts_tensor_size(want); i++)
    g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(got, i), ts_tensor_get_f64(want, i), 1e-5);
}

/* ---- memory ------------------------------------------------------------------------ */

static void test_registered(void)
{
  const ts_backend *b = sim();
  const ts_backend_i *bi = ts_backend_iface(b);
  g_assert_false(ts_buffer_type_is_host(ts_backend_buffer_type(b)));
  g_assert_nonnull(bi->graph_plan_create);
  g_assert_nonnull(bi->event_new);
  size_t free_bytes = 0, total = 0;
  g_assert_true(ts_backend_memory_info(b, &free_bytes, &total));
  g_assert_cmpuint(total, >, 0);
  g_assert_cmpuint(free_bytes, <=, total);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_tensor_to_backend(matrix(256, 256, 1), b);
  size_t after = 0;
  g_assert_true(ts_backend_memory_info(b, &after, &total));
  g_assert_cmpuint(after, <=, free_bytes - 256 * 256 * 4);
  g_assert_null(ts_tensor_data(x)); /* the host has no address for it */
  ts_scope_end(scope);
}

/* SIM:0 is there where TRACESCOPE_DEVICES names it (the tests' env), and
 * not otherwise (a child process without it): then the CPU comes first and
 * only real devices (a GPU, where there is one) follow it. */
static void test_only_when_named(void)
{
  if (g_test_subprocess()) {
    g_unsetenv("TRACESCOPE_DEVICES");
    g_assert_cmpint(ts_backend_count(), >=, 1);
    g_assert_cmpstr(ts_backend_name(ts_backend_get(0)), ==, "CPU");
    for (int i = 0; i < ts_backend_count(); i++)
      g_assert_false(g_str_has_prefix(ts_backend_name(ts_backend_get(i)), "SIM"));
    g_assert_null(ts_backend_by_name("SIM:0"));
    return;
  }
  g_assert_cmpstr(g_getenv("TRACESCOPE_DEVICES"), ==, "sim");
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed();
}

/* The host touching a SIM buffer faults at once (a child process). */
static void test_host_dereference_crashes(void)
{
  if (g_test_subprocess()) {
    const ts_backend *b = sim();
    ts_buffer *buf = ts_buffer_alloc(ts_backend_buffer_type(b), 64, TS_BUFFER_USAGE_TENSOR);
    volatile float *p = ts_buffer_base(buf);
    g_assert_nonnull((void *)p);
    p[0] = 1; /* must fault */
    return;
  }
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed();
}

static void test_copies(void)
{
  const ts_backend *b = sim();
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = matrix(3, 5, 2);
  ts_tensor *d = ts_tensor_to_backend(x, b);
  assert_no_error();
  g_assert_true(ts_tensor_backend(d) == b);
  assert_close(x, d);
  /* device to device, on the stream, and back */
  const ts_buffer_type *bt = ts_backend_buffer_type(b);
  ts_buffer *buf = ts_buffer_alloc(bt, 15 * 4, TS_BUFFER_USAGE_TENSOR);
  g_assert_true(ts_buffer_copy(buf, 0, buf, 0, 0)); /* 0 bytes: nothing */
  ts_tensor *back = ts_tensor_to_backend(d, ts_backend_cpu());
  float host[15];
  g_assert_true(ts_buffer_set(buf, 0, ts_tensor_data(back), sizeof host));
  ts_buffer *buf2 = ts_buffer_alloc(bt, sizeof host, TS_BUFFER_USAGE_TENSOR);
  g_assert_true(ts_buffer_copy(buf2, 0, buf, 0, sizeof host));
  g_assert_true(ts_buffer_memset(buf, 0, 0, sizeof host));
  g_assert_true(ts_buffer_get(buf2, 0, host, sizeof host));
  g_assert_cmpmem(host, sizeof host, ts_tensor_data(x), sizeof host);
  g_assert_true(ts_buffer_get(buf, 0, host, sizeof host));
  for (int i = 0; i < 15; i++)
    g_assert_cmpfloat(host[i], ==, 0);
  ts_buffer_free(buf);
  ts_buffer_free(buf2);
  ts_scope_end(scope);
}

/* SIM:0's buffer type: device memory with a largest buffer, 64-byte
 * aligned; a sub-allocated range moves between SIM:0 and the CPU only
 * through the buffers' copies, each on its stream, each recorded. */
static int n_copy_records;
static void count_copies(const ts_activity *records, int n, void *data)
{
  for (int i = 0; i < n; i++)
    n_copy_records += records[i].kind == TS_ACTIVITY_COPY || records[i].kind == TS_ACTIVITY_MEMSET;
}

static void test_buffer_type_and_copies(void)
{
  const ts_backend *b = sim();
  const ts_buffer_type *bt = ts_backend_buffer_type(b), *cpu = ts_backend_buffer_type(ts_backend_cpu());
  g_assert_cmpstr(ts_buffer_type_name(bt), ==, "SIM:0");
  g_assert_true(ts_buffer_type_backend(bt) == b);
  g_assert_cmpuint(ts_buffer_type_alignment(bt), ==, 64);
  g_assert_cmpuint(ts_buffer_type_max_size(bt), ==, (size_t)4 << 30);
  /* over its largest buffer: an error, as a GPU's allocator refuses */
  g_assert_null(ts_buffer_alloc(bt, ((size_t)4 << 30) + 1, TS_BUFFER_USAGE_TENSOR));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_nonnull(strstr(e->message, "largest buffer of SIM:0"));
  ts_error_free(e);
  /* and a tensor that large says so where it was made */
  ts_scope *scope = ts_scope_begin();
  TS_DEVICE_SCOPE(b) { g_assert_null(ts_zeros(TS_F32, TS_SHAPE(1 << 30, 2))); }
  e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_nonnull(strstr(e->message, "largest buffer of SIM:0"));
  g_assert_nonnull(strstr(e->message, "test-sim.c"));
  g_assert_nonnull(strstr(e->message, "cannot allocate f32[1073741824,2] on SIM:0"));
  ts_error_free(e);
  ts_scope_end(scope);

  g_assert_true(ts_activity_subscribe(count_copies, NULL));
  ts_buffer *d = ts_buffer_alloc(bt, 1024, TS_BUFFER_USAGE_ARENA);
  ts_buffer *h = ts_buffer_alloc(cpu, 1024, TS_BUFFER_USAGE_TENSOR);
  g_assert_nonnull(d);
  g_assert_nonnull(h);
  g_assert_cmpuint((uintptr_t)ts_buffer_base(d) % 64, ==, 0);
  /* two sub-allocations of one buffer: [256, 512) and [512, 768) */
  double *lo = ts_buffer_at(d, 256, 256, 64), *hi = ts_buffer_at(d, 512, 256, 64);
  g_assert_true((char *)hi - (char *)lo == 256);
  n_copy_records = 0;
  double vals[32];
  for (int i = 0; i < 32; i++)
    vals[i] = i * 0.5;
  memcpy(ts_buffer_base(h), vals, sizeof vals);
  g_assert_true(ts_buffer_copy(d, 256, h, 0, sizeof vals));  /* CPU -> SIM */
  g_assert_true(ts_buffer_copy(d, 512, d, 256, sizeof vals)); /* SIM -> SIM */
  g_assert_true(ts_buffer_memset(d, 256, 0, 8));              /* the first double of lo */
  g_assert_true(ts_buffer_copy(h, 512, d, 256, sizeof vals)); /* SIM -> CPU */
  double *got = (double *)((char *)ts_buffer_base(h) + 512);
  g_assert_cmpfloat(got[0], ==, 0);
  g_assert_cmpmem(got + 1, sizeof vals - 8, vals + 1, sizeof vals - 8);
  double back[32];
  g_assert_true(ts_buffer_get(d, 512, back, sizeof back));
  g_assert_cmpmem(back, sizeof back, vals, sizeof vals);
  ts_activity_flush();
  g_assert_cmpint(n_copy_records, ==, 5); /* in, device to device, memset, out, out */
  /* a range past the end or overflowing never reaches the stream */
  g_assert_false(ts_buffer_set(d, 1000, vals, 32));
  g_assert_false(ts_buffer_copy(d, SIZE_MAX - 8, h, 0, 16));
  g_assert_false(ts_buffer_memset(d, 8, 0, SIZE_MAX));
  e = ts_error_take();
  g_assert_nonnull(strstr(e->message, "outside the 1024-byte buffer of SIM:0"));
  ts_error_free(e);
  ts_activity_flush();
  g_assert_cmpint(n_copy_records, ==, 5);
  ts_activity_unsubscribe(count_copies, NULL);
  ts_buffer_free(d);
  ts_buffer_free(h);
}

/* The memory planner's arena on SIM:0 is one SIM:0 buffer: a graph's
 * intermediate values are sub-allocations of it. */
static ts_buffer *seen_buffer[4];
static size_t seen_offset[4];
static int n_seen;
static void on_op_end(const ts_event *ev, void *data)
{
  for (int i = 0; i < ev->op.n_outputs && n_seen < 4; i++) {
    size_t offset = 0;
    ts_buffer *buf = ts_tensor_buffer(ev->op.outputs[i], &offset);
    if (buf && ts_buffer_get_usage(buf) == TS_BUFFER_USAGE_ARENA) {
      seen_buffer[n_seen] = buf;
      seen_offset[n_seen++] = offset;
    }
  }
}

static ts_tensor *chain(ts_call *call)
{
  ts_tensor *a = ts_exp(ts_arg(call, 0)), *b = ts_neg(a), *c = ts_sin(b);
  return ts_reduce_sum(ts_add(ts_mul(c, a), b), TS_ALL_AXES, false);
}

static void test_arena_is_one_buffer(void)
{
  const ts_backend *b = sim();
  ts_function *f = ts_function_new("chain", chain, "x");
  ts_scope *scope = ts_scope_begin();
  ts_value args[1] = { TS_TENSOR_VALUE(matrix(64, 64, 1)) };
  ts_tensor *want = ts_function_call(f, args, 1);
  assert_no_error();
  ts_tensor *got = NULL;
  n_seen = 0;
  for (int call = 0; call < 2; call++) { /* the first captures (its events carry its
                                            values), the second launches that again */
    int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_op_end, NULL);
    TS_DEVICE_SCOPE(b) { got = ts_function_call(f, args, 1); }
    assert_no_error();
    ts_listener_remove(id);
    assert_close(want, got);
  }
  g_assert_cmpint(n_seen, >=, 2);
  for (int i = 1; i < n_seen; i++)
    g_assert_true(seen_buffer[i] == seen_buffer[0]);
  for (int i = 0; i < n_seen; i++) {
    g_assert_true(ts_buffer_get_type(seen_buffer[i]) == ts_backend_buffer_type(b));
    g_assert_cmpuint(seen_offset[i] % 64, ==, 0);
    g_assert_cmpuint(seen_offset[i] + 64 * 64 * 4, <=, ts_buffer_size(seen_buffer[i]));
  }
  ts_scope_end(scope);
  ts_function_free(f);
}

/* ---- the stream ------------------------------------------------------------------------ */

static void test_ops_and_events(void)
{
  const ts_backend *b = sim();
  const ts_backend_i *bi = ts_backend_iface(b);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = matrix(64, 32, 1), *w = matrix(32, 16, -1);
  ts_tensor *want = ts_relu(ts_add(ts_matmul(x, w), ts_scalar_f32(0.5f)));
  ts_device_event *start = bi->event_new(b), *end = bi->event_new(b);
  g_assert_true(bi->event_record(b, start));
  ts_tensor *got;
  TS_DEVICE_SCOPE(b) {
    got = ts_relu(ts_add(ts_matmul(x, w), ts_scalar_f32(0.5f)));
  }
  g_assert_true(bi->event_record(b, end));
  g_assert_true(ts_tensor_backend(got) == b);
  g_assert_true(ts_backend_synchronize(b));
  g_assert_true(bi->event_query(b, start));
  g_assert_true(bi->event_query(b, end));
  uint64_t ns = 0;
  g_assert_true(bi->event_elapsed_ns(b, start, end, &ns));
  g_assert_true(bi->event_elapsed_ns(b, start, start, &ns) && ns == 0);
  assert_close(want, got);
  bi->event_free(b, start);
  bi->event_free(b, end);
  ts_scope_end(scope);
}

/* A kernel's failure on the stream comes back at the next synchronize,
 * naming the op, as a GPU's asynchronous errors do. */
static void test_late_error(void)
{
  const ts_backend *b = sim();
  ts_scope *scope = ts_scope_begin();
  ts_tensor *params = matrix(4, 2, 0);
  ts_tensor *bad = ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 1, 9 });
  TS_DEVICE_SCOPE(b) {
    ts_tensor *y = ts_gather(params, bad, 0);
    assert_no_error(); /* queued: nothing known yet */
    g_assert_nonnull(y);
  }
  g_assert_false(ts_backend_synchronize(b));
  expect_error_containing("Gather");
  g_assert_true(ts_backend_synchronize(b)); /* reported once */
  ts_scope_end(scope);
}

/* An op SIM cannot run (ts_print: an effect on the host) runs on the CPU,
 * visibly: its op event says CPU and a warning says why. */
static GPtrArray *warnings;
static GPtrArray *devices;

static void on_warning(const ts_event *ev, void *data)
{
  if (ev->kind == TS_EVENT_WARNING && ev->warning.kind == TS_WARNING_DEVICE_FALLBACK)
    g_ptr_array_add(warnings, g_strdup(ev->warning.message));
  if (ev->kind == TS_EVENT_OP_END)
    g_ptr_array_add(devices, g_strdup_printf("%s@%s", ev->op.op_name, ev->op.device));
}

static void test_visible_fallback(void)
{
  warnings = g_ptr_array_new_with_free_func(g_free);
  devices = g_ptr_array_new_with_free_func(g_free);
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING) | TS_EVENT_MASK(TS_EVENT_OP_END),
                           on_warning, NULL);
  ts_scope *scope = ts_scope_begin();
  int saved = stdout_muted();
  TS_DEVICE_SCOPE(sim()) {
    ts_tensor *y = ts_add(matrix(2, 2, 1), matrix(2, 2, 2));
    ts_print(y);
  }
  stdout_restored(saved);
  assert_no_error();
  ts_scope_end(scope);
  ts_listener_remove(id);
  g_assert_cmpuint(warnings->len, ==, 1);
  g_assert_nonnull(strstr(g_ptr_array_index(warnings, 0), "on SIM:0: it runs on the CPU"));
  /* PrintV2 has a kernel for SIM's kind, which SIM does not take: said with the dtypes */
  g_assert_nonnull(strstr(g_ptr_array_index(warnings, 0), "(it has one, but not for float32 there)"));
  g_assert_cmpstr(g_ptr_array_index(devices, 0), ==, "Add@SIM:0");
  g_assert_cmpstr(g_ptr_array_index(devices, 1), ==, "PrintV2@CPU");
  g_ptr_array_unref(warnings);
  g_ptr_array_unref(devices);
}

/* ---- activity and plans ------------------------------------------------------------------ */

typedef struct collected {
  GArray *records;       /* ts_activity */
  GHashTable *names;     /* correlation -> op name, from OP_END */
  GHashTable *corr_of_node; /* graph node -> correlation (GRAPH_NODE records) */
  int sim_ops;           /* OP_END events of ops run on SIM:0 */
} collected;

static void on_activity(const ts_activity *r, int n, void *data)
{
  collected *c = data;
  g_array_append_vals(c->records, r, (guint)n);
}

static void on_op(const ts_event *ev, void *data)
{
  collected *c = data;
  g_hash_table_insert(c->names, GSIZE_TO_POINTER(ev->op.correlation), (gpointer)ev->op.op_name);
  c->sim_ops += strcmp(ev->op.device, "SIM:0") == 0;
}

static void collect_begin(collected *c)
{
  *c = (collected){ g_array_new(FALSE, FALSE, sizeof(ts_activity)),
                    g_hash_table_new(g_direct_hash, g_direct_equal),
                    g_hash_table_new(g_direct_hash, g_direct_equal), 0 };
  g_assert_true(ts_activity_subscribe(on_activity, c));
}

static void collect_end(collected *c)
{
  ts_activity_flush();
  ts_activity_unsubscribe(on_activity, c);
}

static void collect_clear(collected *c)
{
  g_array_unref(c->records);
  g_hash_table_unref(c->names);
  g_hash_table_unref(c->corr_of_node);
}

static int count_kind(const collected *c, ts_activity_kind kind)
{
  int n = 0;
  for (guint i = 0; i < c->records->len; i++)
    n += g_array_index(c->records, ts_activity, i).kind == kind;
  return n;
}

/* Eager launches: one kernel record per op, with the op's correlation id. */
static void test_eager_activity(void)
{
  collected c;
  collect_begin(&c);
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_op, &c);
  ts_scope *scope = ts_scope_begin();
  TS_DEVICE_SCOPE(sim()) {
    ts_tensor *y = ts_tanh(ts_matmul(matrix(8, 8, 1), matrix(8, 8, 2)));
    g_assert_nonnull(y);
  }
  ts_scope_end(scope);
  ts_listener_remove(id);
  collect_end(&c);
  g_assert_cmpint(count_kind(&c, TS_ACTIVITY_KERNEL), ==, 2);
  g_assert_cmpint(count_kind(&c, TS_ACTIVITY_COPY), >=, 2); /* the inputs, from the host */
  for (guint i = 0; i < c.records->len; i++) {
    const ts_activity *r = &g_array_index(c.records, ts_activity, i);
    g_assert_cmpuint(r->end_ns, >=, r->start_ns);
    if (r->kind != TS_ACTIVITY_KERNEL)
      continue;
    g_assert_cmpuint(r->graph_node, ==, 0);
    g_assert_cmpstr(g_hash_table_lookup(c.names, GSIZE_TO_POINTER(r->correlation)), ==, r->name);
  }
  collect_clear(&c);
}

/* Copies are the op's that needed them, both ways: MatMul's inputs go to
 * SIM:0 under MatMul's correlation id, and Print (on the CPU) takes the
 * product back to the host under its own; each copy says which input of
 * its op it carried (operand: index + 1); the op events say how many
 * inputs each had copied. */
static GHashTable *copied; /* op name -> its inputs copied (OP_END's n_copied) */

static void on_copied(const ts_event *ev, void *data)
{
  on_op(ev, data);
  g_hash_table_insert(copied, (gpointer)ev->op.op_name, GUINT_TO_POINTER(ev->op.n_copied));
}

static void test_copies_carry_correlation(void)
{
  collected c;
  collect_begin(&c);
  copied = g_hash_table_new(g_str_hash, g_str_equal);
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_copied, &c);
  ts_scope *scope = ts_scope_begin();
  int saved = stdout_muted();
  TS_DEVICE_SCOPE(sim()) ts_print(ts_matmul(matrix(8, 8, 1), matrix(8, 8, 2)));
  stdout_restored(saved);
  ts_scope_end(scope);
  ts_listener_remove(id);
  collect_end(&c);
  assert_no_error();
  int up = 0, down = 0;
  uint32_t operands = 0; /* bit i: a copy carried input i of MatMul */
  for (guint i = 0; i < c.records->len; i++) {
    const ts_activity *r = &g_array_index(c.records, ts_activity, i);
    if (r->kind != TS_ACTIVITY_COPY)
      continue;
    const char *op = g_hash_table_lookup(c.names, GSIZE_TO_POINTER(r->correlation));
    g_assert_cmpuint(r->bytes, ==, 8 * 8 * sizeof(float));
    g_assert_cmpuint(r->end_ns, >=, r->start_ns);
    if (!strcmp(r->name, "host to device")) {
      g_assert_cmpstr(op, ==, "MatMul");
      g_assert_cmpuint(r->operand, >=, 1);
      g_assert_cmpuint(r->operand, <=, 2);
      operands |= 1u << (r->operand - 1);
      up++;
    } else {
      g_assert_cmpstr(r->name, ==, "device to host");
      g_assert_cmpstr(op, ==, "PrintV2");
      g_assert_cmpuint(r->operand, ==, 1);
      down++;
    }
  }
  g_assert_cmpint(up, ==, 2);
  g_assert_cmpuint(operands, ==, 3);
  g_assert_cmpint(down, ==, 1);
  g_assert_cmpuint(GPOINTER_TO_UINT(g_hash_table_lookup(copied, "MatMul")), ==, 2);
  g_assert_cmpuint(GPOINTER_TO_UINT(g_hash_table_lookup(copied, "PrintV2")), ==, 1);
  g_hash_table_unref(copied);
  collect_clear(&c);
}

static ts_tensor *product(ts_call *call)
{
  return ts_matmul(ts_arg(call, 0), ts_arg(call, 1));
}

static void flush_on_op(const ts_event *ev, void *data)
{
  ts_activity_flush();
}

/* In graph mode too, every call: the first copies the arguments into the
 * plan's inputs before its capture begins (the op that reads each known
 * only once it ran), later ones replay it, copying them in again, and
 * each copy is MatMul's, saying which input it carried, even where a
 * collector flushes mid-call, before the ops are known (the profiler's
 * session does). */
static void test_plan_copies_carry_correlation(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_value args[2] = { TS_TENSOR_VALUE(matrix(8, 8, 1)), TS_TENSOR_VALUE(matrix(8, 8, 2)) };
  ts_function *fn = ts_function_new("product", product, "x, w");
  for (int call = 0; call < 4; call++) {
    collected c;
    collect_begin(&c);
    int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_op, &c);
    int flushing = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_BEGIN), flush_on_op, NULL);
    TS_DEVICE_SCOPE(sim()) g_assert_nonnull(ts_function_call(fn, args, 2));
    ts_listener_remove(flushing);
    ts_listener_remove(id);
    collect_end(&c);
    assert_no_error();
    uint32_t operands = 0; /* bit i: a copy carried input i of MatMul */
    for (guint i = 0; i < c.records->len; i++) {
      const ts_activity *r = &g_array_index(c.records, ts_activity, i);
      if (r->kind != TS_ACTIVITY_COPY || strcmp(r->name, "host to device"))
        continue;
      const char *op = g_hash_table_lookup(c.names, GSIZE_TO_POINTER(r->correlation));
      if (g_strcmp0(op, "MatMul"))
        g_error("call %d: a copy of %" G_GUINT64_FORMAT " bytes is charged to %s", call, r->bytes,
                op ? op : "no op");
      g_assert_cmpuint(r->operand, >=, 1);
      g_assert_cmpuint(r->operand, <=, 2);
      operands |= 1u << (r->operand - 1);
    }
    g_assert_cmpuint(operands, ==, 3);
    collect_clear(&c);
  }
  ts_schedule sched;
  g_assert_true(ts_concrete_schedule(ts_function_get_concrete(fn, args, 2), &sched));
  g_assert_cmpint(sched.n_captures, ==, 1);
  g_assert_cmpint(sched.n_replays, ==, 3);
  ts_function_free(fn);
  ts_scope_end(scope);
}

static ts_tensor *printed_tanh(ts_call *call)
{
  ts_tensor *y = ts_matmul(ts_arg(call, 0), ts_arg(call, 0));
  ts_print(y); /* on the CPU: it reads the product back mid-run */
  return ts_tanh(y);
}

static int stepwise_warnings;

static void on_stepwise(const ts_event *ev, void *data)
{
  if (ev->warning.kind != TS_WARNING_DEVICE_STEPWISE)
    return;
  stepwise_warnings++;
  g_assert_nonnull(strstr(ev->warning.message, "printed_tanh: its graph runs op by op on SIM:0"));
  g_assert_nonnull(strstr(ev->warning.message, "mid-run in 2 calls in a row, the last time in "
                                               "PrintV2 ("));
}

/* A capture the host breaks by reading a value mid-run is captured again
 * on the next call (a first call making its variables reads them back, a
 * later one need not); after two broken in a row the graph runs op by op,
 * said once by a warning, with the same results. */
static void test_plan_broken_captures_again(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_value args[1] = { TS_TENSOR_VALUE(matrix(4, 4, 1)) };
  ts_function *fn = ts_function_new("printed_tanh", printed_tanh, "x");
  int saved = stdout_muted();
  ts_tensor *want = ts_function_call(fn, args, 1);
  stepwise_warnings = 0;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), on_stepwise, NULL);
  ts_tensor *got[5];
  for (int call = 0; call < 5; call++)
    TS_DEVICE_SCOPE(sim()) got[call] = ts_function_call(fn, args, 1);
  stdout_restored(saved);
  ts_listener_remove(id);
  assert_no_error();
  for (int call = 0; call < 5; call++)
    assert_close(want, ts_tensor_to_backend(got[call], ts_backend_cpu()));
  ts_schedule sched;
  g_assert_true(ts_concrete_schedule(ts_function_get_concrete(fn, args, 1), &sched));
  g_assert_cmpint(sched.n_captures, ==, 2);
  g_assert_cmpint(sched.n_replays, ==, 0);
  g_assert_cmpint(stepwise_warnings, ==, 1);
  ts_function_free(fn);
  ts_scope_end(scope);
}

static ts_tensor *layers(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *w = ts_arg(call, 1);
  for (int i = 0; i < 3; i++)
    x = ts_tanh(ts_add(ts_matmul(x, w), ts_scalar_f32(0.1f)));
  return ts_reduce_sum(x, TS_ALL_AXES, false);
}

/* Calls fn on SIM:0 with its activity collected in *c (the kernels have
 * reported: collect_end), and checks the result against the CPU's. */
static void call_on_sim(ts_function *fn, ts_value *args, int n, ts_tensor *want, collected *c)
{
  collect_begin(c);
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_op, c);
  ts_tensor *got;
  TS_DEVICE_SCOPE(sim()) {
    got = ts_function_call(fn, args, n);
  }
  ts_listener_remove(id);
  assert_no_error();
  assert_close(want, got);
  collect_end(c);
}

/* A graph run on SIM is captured once and replayed: kernels of a replay
 * carry their node's id (stable across calls) and the plan launch's
 * correlation; GRAPH_NODE records tie each node to this call's op. */
static void test_plan_replay(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("layers", layers, "x, w");
  ts_tensor *x = matrix(16, 16, 0.5f), *w = matrix(16, 16, -0.25f);
  ts_value args[2] = { TS_TENSOR_VALUE(x), TS_TENSOR_VALUE(w) };
  ts_tensor *want = ts_function_call(fn, args, 2);
  assert_no_error();
  GHashTable *first_nodes = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (int call = 0; call < 3; call++) {
    collected c;
    call_on_sim(fn, args, 2, want, &c);
    int kernels = 0, nodes = 0;
    uint64_t plan_launch = 0;
    for (guint i = 0; i < c.records->len; i++) {
      const ts_activity *r = &g_array_index(c.records, ts_activity, i);
      if (r->kind == TS_ACTIVITY_GRAPH_NODE) {
        nodes++;
        g_hash_table_insert(c.corr_of_node, GSIZE_TO_POINTER(r->graph_node),
                            GSIZE_TO_POINTER(r->correlation));
        if (call == 0)
          g_hash_table_add(first_nodes, GSIZE_TO_POINTER(r->graph_node));
        else /* updated in place: the same nodes */
          g_assert_true(g_hash_table_contains(first_nodes, GSIZE_TO_POINTER(r->graph_node)));
      } else if (r->kind == TS_ACTIVITY_KERNEL) {
        kernels++;
        g_assert_cmpuint(r->graph_node, !=, 0);
        plan_launch = plan_launch ? plan_launch : r->correlation;
        g_assert_cmpuint(r->correlation, ==, plan_launch); /* one submission */
        /* charged to its op of this call through its node */
        gpointer corr = g_hash_table_lookup(c.corr_of_node, GSIZE_TO_POINTER(r->graph_node));
        g_assert_nonnull(corr);
        g_assert_cmpstr(g_hash_table_lookup(c.names, corr), ==, r->name);
      }
    }
    g_assert_cmpint(kernels, >=, 4); /* however the passes fused the layers */
    g_assert_cmpint(kernels, ==, c.sim_ops);
    g_assert_cmpint(nodes, ==, kernels);
    g_assert_false(g_hash_table_contains(c.names, GSIZE_TO_POINTER(plan_launch)));
    collect_clear(&c);
  }
  g_hash_table_unref(first_nodes);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* Dense layers in a loop, then a branch on the sign of their sum. */
static ts_tensor *looped_layers(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *w = ts_arg(call, 1), *i = ts_scalar_i32(0);
  TS_WHILE (ts_less(i, ts_scalar_i32(3)), &x, &i) {
    x = ts_tanh(ts_add(ts_matmul(x, w), ts_scalar_f32(0.1f)));
    i = ts_add(i, ts_scalar_i32(1));
  }
  ts_tensor *sum = ts_reduce_sum(ts_exp(x), TS_ALL_AXES, false);
  TS_IF (ts_greater(sum, ts_scalar_f32(0)), &sum) {
    sum = ts_mul(sum, ts_scalar_f32(2));
  } TS_ELSE {
    sum = ts_neg(sum);
  } TS_END_IF;
  return sum;
}

/* Plan submissions a call's kernels came in: each carries its plan
 * launch's correlation. */
static int submissions(const collected *c)
{
  GHashTable *launches = g_hash_table_new(g_direct_hash, g_direct_equal);
  for (guint i = 0; i < c->records->len; i++) {
    const ts_activity *r = &g_array_index(c->records, ts_activity, i);
    if (r->kind == TS_ACTIVITY_KERNEL)
      g_hash_table_add(launches, GSIZE_TO_POINTER(r->correlation));
  }
  int n = (int)g_hash_table_size(launches);
  g_hash_table_unref(launches);
  return n;
}

/* Op events of the call whose op name ends in suffix. */
static int op_events(const collected *c, const char *suffix)
{
  GHashTableIter it;
  gpointer name;
  int n = 0;
  g_hash_table_iter_init(&it, c->names);
  while (g_hash_table_iter_next(&it, NULL, &name))
    n += g_str_has_suffix(name, suffix);
  return n;
}

/* Kernel records of the call whose op name ends in suffix. */
static int kernel_records(const collected *c, const char *suffix)
{
  int n = 0;
  for (guint i = 0; i < c->records->len; i++) {
    const ts_activity *r = &g_array_index(c->records, ts_activity, i);
    n += r->kind == TS_ACTIVITY_KERNEL && g_str_has_suffix(r->name, suffix);
  }
  return n;
}

/* Kernel records of the call whose op name ends in suffix, each checked
 * to come from a plan and to be charged to its op of this call through
 * its graph node. */
static int kernels_of(collected *c, const char *suffix)
{
  for (guint i = 0; i < c->records->len; i++) {
    const ts_activity *r = &g_array_index(c->records, ts_activity, i);
    if (r->kind == TS_ACTIVITY_GRAPH_NODE)
      g_hash_table_insert(c->corr_of_node, GSIZE_TO_POINTER(r->graph_node),
                          GSIZE_TO_POINTER(r->correlation));
  }
  int n = 0;
  for (guint i = 0; i < c->records->len; i++) {
    const ts_activity *r = &g_array_index(c->records, ts_activity, i);
    if (r->kind != TS_ACTIVITY_KERNEL)
      continue;
    g_assert_cmpuint(r->graph_node, !=, 0); /* from a plan */
    gpointer corr = g_hash_table_lookup(c->corr_of_node, GSIZE_TO_POINTER(r->graph_node));
    g_assert_nonnull(corr);
    g_assert_cmpstr(g_hash_table_lookup(c->names, corr), ==, r->name);
    n += g_str_has_suffix(r->name, suffix);
  }
  return n;
}

/* A graph with While and If nodes on SIM (static shapes, no host work):
 * the loop and the branch are the device's, inside the call's one
 * capture (its body's ops told once per call, their kernels run once per
 * iteration), so a call is one submission where it was 9 when each
 * ended a segment.  Every kernel of every call comes from a plan (Sum and
 * Exp between the loop and the branch among them), charged to its op of
 * that call through its node, and the result is the CPU's. */
static void test_plan_control_flow(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("looped_layers", looped_layers, "x, w");
  ts_tensor *x = matrix(8, 16, 0.5f), *w = matrix(16, 16, -0.25f);
  ts_value args[2] = { TS_TENSOR_VALUE(x), TS_TENSOR_VALUE(w) };
  ts_tensor *want = ts_function_call(fn, args, 2);
  assert_no_error();
  for (int call = 0; call < 3; call++) {
    collected c;
    call_on_sim(fn, args, 2, want, &c);
    g_assert_cmpint(kernels_of(&c, "MatMul"), ==, 3); /* one per iteration */
    g_assert_cmpint(op_events(&c, "MatMul"), ==, 1);
    g_assert_cmpint(kernels_of(&c, "Sum"), ==, 1);
    g_assert_cmpint(op_events(&c, "Sum"), ==, 1);
    g_assert_cmpint(submissions(&c), ==, 1);
    collect_clear(&c);
  }
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* ---- loops the device runs inside a capture (exec/device_cf.c) ---------------------- */

static ts_schedule schedule_of(ts_function *fn, ts_value *args, int n);


static int loop_warnings;

static void on_loop_warning(const ts_event *ev, void *data)
{
  if (ev->warning.kind != TS_WARNING_DEVICE_CONTROL_FLOW)
    return;
  loop_warnings++;
  if (data) /* what it must name */
    g_assert_nonnull(strstr(ev->warning.message, data));
}

/* A While whose loop variables keep their shapes runs on SIM:0 as a loop
 * of the call's one plan: 0, 1 and many iterations from the same concrete
 * function (the iteration count an argument the host never looks at),
 * the first call captured, the others replays of that capture as it is
 * (their counts read by the device), each call one submission, its
 * body's ops told once, their kernels charged through their nodes once
 * per iteration, the results the CPU's, no warning. */
static void test_loop_on_device(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("counted_loop", counted_loop, "x, n");
  loop_warnings = 0;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), on_loop_warning, NULL);
  const int counts[] = { 0, 1, 7, 2, 0 };
  for (guint k = 0; k < G_N_ELEMENTS(counts); k++) {
    ts_value args[2] = { TS_TENSOR_VALUE(matrix(3, 5, 0.25f)),
                         TS_TENSOR_VALUE(ts_scalar_i32(counts[k])) };
    ts_tensor *want = ts_function_call(fn, args, 2);
    assert_no_error();
    collected c;
    call_on_sim(fn, args, 2, want, &c);
    g_assert_cmpint(submissions(&c), ==, 1);
    g_assert_cmpint(kernels_of(&c, "MatMul"), ==, counts[k]);
    g_assert_cmpint(op_events(&c, "MatMul"), ==, 1); /* the body is captured once */
    g_assert_cmpint(kernels_of(&c, "Less"), ==, counts[k] + 1);
    collect_clear(&c);
  }
  ts_value args[2] = { TS_TENSOR_VALUE(matrix(3, 5, 0.25f)), TS_TENSOR_VALUE(ts_scalar_i32(1)) };
  ts_schedule sched = schedule_of(fn, args, 2);
  g_assert_cmpint(sched.n_captures, ==, 1);
  g_assert_cmpint(sched.n_replays, ==, G_N_ELEMENTS(counts) - 1);
  ts_listener_remove(id);
  g_assert_cmpint(loop_warnings, ==, 0);
  ts_function_free(fn);
  ts_scope_end(scope);
}


/* Loops nest: the inner one is a loop in the outer one's body, the call
 * one submission, the inner body's kernels run 0 + 1 + ... + (m - 1)
 * times. */
static void test_nested_loops_on_device(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("nested_loops", nested_loops, "x, m");
  for (int m = 0; m <= 4; m += 2) {
    ts_value args[2] = { TS_TENSOR_VALUE(matrix(2, 3, -0.5f)), TS_TENSOR_VALUE(ts_scalar_i32(m)) };
    ts_tensor *want = ts_function_call(fn, args, 2);
    assert_no_error();
    collected c;
    call_on_sim(fn, args, 2, want, &c);
    g_assert_cmpint(submissions(&c), ==, 1);
    g_assert_cmpint(kernels_of(&c, "MatMul"), ==, m + m * (m - 1) / 2);
    collect_clear(&c);
  }
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* The loop inside a branch: the If ends its segment, the branch taken
 * captures its own plan with the loop in it. */
static ts_tensor *loop_in_branch(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0);
  TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0)), &x) {
    ts_tensor *i = ts_scalar_i32(0);
    TS_WHILE (ts_less(i, ts_scalar_i32(4)), &x, &i) {
      x = ts_tanh(ts_mul(ts_matmul(x, ts_eye(TS_F32, 4, 4)), ts_scalar_f32(1.5f)));
      i = ts_add(i, ts_scalar_i32(1));
    }
  } TS_ELSE {
    x = ts_neg(x);
  } TS_END_IF;
  return x;
}

static void test_loop_in_branch_on_device(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("loop_in_branch", loop_in_branch, "x");
  for (int k = 0; k < 4; k++) {
    ts_value arg = TS_TENSOR_VALUE(matrix(4, 4, k % 2 ? -3.0f : 2.0f));
    ts_tensor *want = ts_function_call(fn, &arg, 1);
    assert_no_error();
    collected c;
    call_on_sim(fn, &arg, 1, want, &c);
    g_assert_cmpint(kernels_of(&c, "MatMul"), ==, (k % 2 ? 0 : 4));
    collect_clear(&c);
  }
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* Loop variables passed on as one another (a swap) and a value passed
 * through unchanged. */
static ts_tensor *swapping_loop(ts_call *call)
{
  ts_tensor *a = ts_arg(call, 0), *b = ts_arg(call, 1), *keep = ts_arg(call, 2);
  ts_tensor *i = ts_scalar_i32(0);
  TS_WHILE (ts_less(i, ts_scalar_i32(5)), &a, &b, &keep, &i) {
    ts_tensor *was = a;
    a = ts_add(b, keep);
    b = was;
    i = ts_add(i, ts_scalar_i32(1));
  }
  return ts_sub(ts_mul(a, ts_scalar_f32(3)), b);
}

static void test_swapping_loop_on_device(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("swapping_loop", swapping_loop, "a, b, keep");
  ts_value args[3] = { TS_TENSOR_VALUE(matrix(2, 2, 1)), TS_TENSOR_VALUE(matrix(2, 2, -4)),
                       TS_TENSOR_VALUE(matrix(2, 2, 0.5f)) };
  ts_tensor *want = ts_function_call(fn, args, 3);
  assert_no_error();
  for (int call = 0; call < 2; call++) {
    collected c;
    call_on_sim(fn, args, 3, want, &c);
    g_assert_cmpint(submissions(&c), ==, 1);
    collect_clear(&c);
  }
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* counted_loop with a print in its body: host work, so the loop keeps
 * running from the host, its iterations submissions of their own,
 * silently (as before). */
static ts_tensor *printing_loop(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *n = ts_arg(call, 1), *i = ts_scalar_i32(0);
  TS_WHILE (ts_less(i, n), &x, &i) {
    x = ts_matmul(x, ts_eye(TS_F32, 5, 5));
    x = ts_tanh(ts_add(ts_mul(x, ts_scalar_f32(0.9f)), ts_scalar_f32(0.1f)));
    ts_print(i);
    i = ts_add(i, ts_scalar_i32(1));
  }
  return ts_add(x, ts_cast(i, TS_F32));
}

static void test_printing_loop_in_segments(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *quiet = ts_function_new("counted_loop", counted_loop, "x, n");
  ts_function *fn = ts_function_new("printing_loop", printing_loop, "x, n");
  ts_value args[2] = { TS_TENSOR_VALUE(matrix(3, 5, 0.25f)), TS_TENSOR_VALUE(ts_scalar_i32(4)) };
  int saved = stdout_muted();
  ts_tensor *want = ts_function_call(quiet, args, 2);
  loop_warnings = 0;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), on_loop_warning, NULL);
  collected c;
  call_on_sim(fn, args, 2, want, &c);
  stdout_restored(saved);
  ts_listener_remove(id);
  g_assert_cmpint(kernel_records(&c, "MatMul"), ==, 4); /* the prints break the captures */
  g_assert_cmpint(op_events(&c, "MatMul"), ==, 4); /* every iteration's body from the host */
  g_assert_cmpint(submissions(&c), >, 4);
  g_assert_cmpint(loop_warnings, ==, 0);
  collect_clear(&c);
  ts_function_free(fn);
  ts_function_free(quiet);
  ts_scope_end(scope);
}

/* Loops the device does not run inside a capture, silently: one over a
 * variable of unknown rows (an input signature's None) and one assigning
 * a variable every iteration.  Their iterations are segments run from the
 * host, with the CPU's results and the assigns made once per iteration. */
static ts_tensor *loop_total;

static ts_tensor *unknown_rows_loop(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *i = ts_scalar_i32(0);
  TS_WHILE (ts_less(i, ts_scalar_i32(3)), &x, &i) {
    x = ts_tanh(ts_matmul(x, ts_eye(TS_F32, 3, 3)));
    i = ts_add(i, ts_scalar_i32(1));
  }
  return x;
}

static ts_tensor *assigning_loop(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *i = ts_scalar_i32(0);
  TS_WHILE (ts_less(i, ts_scalar_i32(4)), &x, &i) {
    x = ts_matmul(x, ts_eye(TS_F32, 3, 3));
    ts_assign_add(loop_total, ts_reduce_sum(x, TS_ALL_AXES, false));
    i = ts_add(i, ts_scalar_i32(1));
  }
  return x;
}

static void test_host_loops_in_segments(void)
{
  ts_scope *scope = ts_scope_begin();
  loop_total = ts_variable_new(ts_scalar_f32(0), "loop_total");
  ts_function *unknown_rows = ts_function_new("unknown_rows_loop", unknown_rows_loop, "x");
  g_assert_true(ts_function_set_input_signature(unknown_rows, &(ts_spec){ TS_F32, TS_SHAPE(-1, 3) }, 1));
  ts_function *assigning = ts_function_new("assigning_loop", assigning_loop, "x");
  loop_warnings = 0;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), on_loop_warning, NULL);
  ts_value arg = TS_TENSOR_VALUE(matrix(2, 3, 0.5f));
  ts_tensor *want = ts_function_call(unknown_rows, &arg, 1);
  assert_no_error();
  collected c;
  call_on_sim(unknown_rows, &arg, 1, want, &c);
  g_assert_cmpint(submissions(&c), >, 3);
  collect_clear(&c);

  want = ts_function_call(assigning, &arg, 1);
  assert_no_error();
  double after_cpu = ts_tensor_get_f64(loop_total, 0);
  call_on_sim(assigning, &arg, 1, want, &c);
  g_assert_cmpint(submissions(&c), >, 4);
  g_assert_cmpint(kernel_records(&c, "MatMul"), ==, 4);
  collect_clear(&c);
  g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(loop_total, 0), 2 * after_cpu, 1e-3);
  ts_listener_remove(id);
  g_assert_cmpint(loop_warnings, ==, 0);
  ts_function_free(unknown_rows);
  ts_function_free(assigning);
  ts_scope_end(scope);
}

/* A listener reading a value on the device inside the loop's body breaks
 * the capture there: nothing of the loop ran, so it runs from the host
 * from its inputs, with the CPU's result; said once, and later calls run
 * it from the host (segments) with the CPU's results. */
static void read_matmul(const ts_event *ev, void *data)
{
  if (!strcmp(ev->op.op_name, "MatMul") && ev->op.n_outputs == 1 && !strcmp(ev->op.device, "SIM:0"))
    ts_tensor_get_f64(ev->op.outputs[0], 0);
}

static void test_loop_broken_inside_runs_from_host(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("counted_loop", counted_loop, "x, n");
  ts_value args[2] = { TS_TENSOR_VALUE(matrix(3, 5, 0.25f)), TS_TENSOR_VALUE(ts_scalar_i32(6)) };
  ts_tensor *want = ts_function_call(fn, args, 2);
  assert_no_error();
  loop_warnings = 0;
  int warned = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), on_loop_warning,
                               "the host read a value of the device in MatMul");
  int reader = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), read_matmul, NULL);
  ts_tensor *got;
  TS_DEVICE_SCOPE(sim()) got = ts_function_call(fn, args, 2);
  ts_listener_remove(reader);
  assert_close(want, got);
  g_assert_cmpint(loop_warnings, ==, 1);
  for (int call = 0; call < 2; call++) {
    collected c;
    call_on_sim(fn, args, 2, want, &c);
    g_assert_cmpint(op_events(&c, "MatMul"), ==, 6); /* from the host now */
    collect_clear(&c);
  }
  ts_listener_remove(warned);
  g_assert_cmpint(loop_warnings, ==, 1);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* The break inside an inner loop: both loops are dropped unrun, the
 * outer one runs from the host (its body's captures segment the inner
 * one, which the reads break again), the CPU's results on every call. */
static void test_nested_loop_broken_inside(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("nested_loops", nested_loops, "x, m");
  ts_value args[2] = { TS_TENSOR_VALUE(matrix(2, 3, -0.5f)), TS_TENSOR_VALUE(ts_scalar_i32(4)) };
  ts_tensor *want = ts_function_call(fn, args, 2);
  assert_no_error();
  loop_warnings = 0;
  int warned = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), on_loop_warning,
                               "the host read a value of the device in MatMul");
  int reader = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), read_matmul, NULL);
  for (int call = 0; call < 3; call++) {
    ts_tensor *got;
    TS_DEVICE_SCOPE(sim()) got = ts_function_call(fn, args, 2);
    assert_close(want, got);
  }
  ts_listener_remove(reader);
  ts_listener_remove(warned);
  g_assert_cmpint(loop_warnings, ==, 2); /* the outer loop, then the inner one */
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* A loop and an If the device could not open (SIM:0 refusing conditional
 * nodes, as a CUDA driver may): each runs from the host from its inputs,
 * with the CPU's results, said once with the backend's reason, and later
 * calls run it from the host silently, even once the device would open
 * it again (as after a break inside: /sim/loop-broken-inside-runs-from-host). */
static void test_not_opened_runs_from_host(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *loop = ts_function_new("counted_loop", counted_loop, "x, n");
  ts_function *branch = ts_function_new("branchy", branchy, "x");
  ts_value loop_args[2] = { TS_TENSOR_VALUE(matrix(3, 5, 0.25f)), TS_TENSOR_VALUE(ts_scalar_i32(5)) };
  ts_value branch_arg = TS_TENSOR_VALUE(matrix(3, 5, -0.5f));
  ts_tensor *want_loop = ts_function_call(loop, loop_args, 2);
  ts_tensor *want_branch = ts_function_call(branch, &branch_arg, 1);
  assert_no_error();
  loop_warnings = 0;
  int warned = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), on_loop_warning,
                               "conditional nodes are turned off (TRACESCOPE_SIM_CONDITIONALS=0)");
  g_setenv("TRACESCOPE_SIM_CONDITIONALS", "0", TRUE);
  for (int call = 0; call < 3; call++) {
    if (call == 2)
      g_unsetenv("TRACESCOPE_SIM_CONDITIONALS");
    collected c;
    call_on_sim(loop, loop_args, 2, want_loop, &c);
    g_assert_cmpint(op_events(&c, "MatMul"), ==, 5); /* each iteration from the host */
    collect_clear(&c);
    call_on_sim(branch, &branch_arg, 1, want_branch, &c);
    g_assert_cmpint(op_events(&c, "MatMul"), ==, 0); /* the else branch alone ran */
    collect_clear(&c);
    g_assert_cmpint(loop_warnings, ==, 2); /* the loop's and the If's, on the first call */
  }
  ts_listener_remove(warned);
  ts_function_free(loop);
  ts_function_free(branch);
  ts_scope_end(scope);
}

/* ---- branches the device runs inside a capture (exec/device_cf.c) ------------------- */

/* An If of static shapes runs on SIM:0 as a branch of the call's one
 * capture: the first call captures both branches (each told once), later
 * calls replay it, the device picking the branch from each call's values
 * (the then branch's MatMul kernel only where the sum is positive), the
 * results the CPU's, no warning. */
static void test_if_on_device(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("branchy", branchy, "x");
  loop_warnings = 0;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), on_loop_warning, NULL);
  const float bases[] = { 1, -3, -2, 2, 0.5f };
  for (guint k = 0; k < G_N_ELEMENTS(bases); k++) {
    ts_value arg = TS_TENSOR_VALUE(matrix(3, 5, bases[k]));
    ts_tensor *want = ts_function_call(fn, &arg, 1);
    assert_no_error();
    bool then = ts_tensor_get_f64(ts_reduce_sum(arg.tensor, TS_ALL_AXES, false), 0) > 0;
    collected c;
    call_on_sim(fn, &arg, 1, want, &c);
    g_assert_cmpint(submissions(&c), ==, 1);
    g_assert_cmpint(kernels_of(&c, "MatMul"), ==, then ? 1 : 0);
    g_assert_cmpint(op_events(&c, "MatMul"), ==, 1); /* both branches captured */
    collect_clear(&c);
  }
  ts_value arg = TS_TENSOR_VALUE(matrix(3, 5, 1));
  ts_schedule sched = schedule_of(fn, &arg, 1);
  g_assert_cmpint(sched.n_captures, ==, 1);
  g_assert_cmpint(sched.n_replays, ==, G_N_ELEMENTS(bases) - 1);
  ts_listener_remove(id);
  g_assert_cmpint(loop_warnings, ==, 0);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* A constant the host holds, read in a branch, reaches the device
 * through a copy made in that branch's body (on CUDA a copy node of the
 * If's body, run only when the device takes the branch): not kept for
 * later captures, the else branch first taken by a call captured after
 * one that took the then branch reads the constant's values. */
static void test_if_branch_constant_recaptured(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("branchy_then_printed", branchy_then_printed, "x");
  loop_warnings = 0;
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), on_loop_warning, NULL);
  const float bases[] = { 1, -3, 2, -1 };
  for (guint k = 0; k < G_N_ELEMENTS(bases); k++) {
    ts_value arg = TS_TENSOR_VALUE(matrix(3, 5, bases[k]));
    ts_tensor *want = ts_function_call(fn, &arg, 1);
    assert_no_error();
    collected c;
    call_on_sim(fn, &arg, 1, want, &c);
    g_assert_cmpint(kernels_of(&c, "MatMul"), ==, bases[k] > 0 ? 1 : 0); /* the device's pick */
    collect_clear(&c);
  }
  ts_listener_remove(id);
  g_assert_cmpint(loop_warnings, ==, 0);
  ts_value arg = TS_TENSOR_VALUE(matrix(3, 5, 1));
  ts_schedule sched = schedule_of(fn, &arg, 1);
  g_assert_cmpint(sched.n_replays, ==, 0);
  g_assert_cmpint(sched.n_captures, >=, G_N_ELEMENTS(bases));
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* A listener reading a value inside the then branch breaks the capture
 * there: the If is dropped unrun and runs from the host, with the CPU's
 * result, warned once; later calls run it from the host too. */
static void test_if_broken_inside_runs_from_host(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("branchy", branchy, "x");
  ts_value arg = TS_TENSOR_VALUE(matrix(3, 5, 1));
  ts_tensor *want = ts_function_call(fn, &arg, 1);
  assert_no_error();
  loop_warnings = 0;
  int warned = ts_listener_add(TS_EVENT_MASK(TS_EVENT_WARNING), on_loop_warning,
                               "the If");
  int reader = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), read_matmul, NULL);
  for (int call = 0; call < 3; call++) {
    ts_tensor *got;
    TS_DEVICE_SCOPE(sim()) got = ts_function_call(fn, &arg, 1);
    assert_close(want, got);
  }
  ts_listener_remove(reader);
  ts_listener_remove(warned);
  g_assert_cmpint(loop_warnings, ==, 1);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* ---- what a replay must not skip ----------------------------------------------------- */

/* A dense layer on a captured variable: tanh(x @ w + bias). */
static ts_tensor *dense_bias;

static ts_tensor *dense(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *w = ts_arg(call, 1);
  return ts_tanh(ts_add(ts_matmul(x, w), ts_read(dense_bias)));
}

/* dense() on the CPU, eagerly, with the bias given. */
static ts_tensor *dense_on_cpu(ts_tensor *x, ts_tensor *w, ts_tensor *bias)
{
  return ts_tanh(ts_add(ts_matmul(x, w), bias));
}

static ts_tensor *dense_on_sim(ts_function *fn, ts_tensor *x, ts_tensor *w)
{
  ts_value args[2] = { TS_TENSOR_VALUE(x), TS_TENSOR_VALUE(w) };
  ts_tensor *got = NULL;
  TS_DEVICE_SCOPE(sim()) got = ts_function_call(fn, args, 2);
  assert_no_error();
  g_assert_true(ts_tensor_backend(got) == sim());
  return got;
}

/* Repeated graph calls on SIM:0 (captured once, then replayed) each see
 * their own inputs, whether they come from the host or already live on
 * the device, and the variables' values at the call; a result stays the
 * caller's after later calls of the same plan; a call with other shapes
 * gets its own answer and the first shapes theirs again after it. */
static void test_plan_replay_inputs_and_results(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *bias_host = matrix(1, 16, 0.1f);
  TS_DEVICE_SCOPE(sim()) dense_bias = ts_variable_new(bias_host, "bias");
  g_assert_true(ts_tensor_backend(dense_bias) == sim());
  ts_function *fn = ts_function_new("dense", dense, "x, w");
  ts_tensor *w = matrix(16, 16, -0.25f);
  ts_tensor *xs[3] = { matrix(4, 16, 0.5f), matrix(4, 16, -1.5f), matrix(4, 16, 2.0f) };
  ts_tensor *on_dev = ts_tensor_to_backend(xs[2], sim());
  g_assert_true(ts_tensor_backend(on_dev) == sim());
  for (int call = 0; call < 3; call++) {
    ts_tensor *want[3], *got[3];
    for (int i = 0; i < 3; i++)
      want[i] = dense_on_cpu(xs[i], w, bias_host);
    for (int i = 0; i < 2; i++)
      got[i] = dense_on_sim(fn, xs[i], w);
    got[2] = dense_on_sim(fn, on_dev, w);
    for (int i = 0; i < 3; i++) /* all of them, after the last call */
      assert_close(want[i], got[i]);
  }
  /* other shapes, then the first ones again */
  ts_tensor *tall = matrix(7, 16, 0.75f);
  assert_close(dense_on_cpu(tall, w, bias_host), dense_on_sim(fn, tall, w));
  ts_tensor *again = dense_on_sim(fn, xs[0], w);
  assert_close(dense_on_cpu(xs[0], w, bias_host), again);
  /* the variable assigned between calls: the next call reads the new value */
  ts_tensor *before = dense_on_sim(fn, xs[1], w);
  bias_host = matrix(1, 16, -0.6f);
  TS_DEVICE_SCOPE(sim()) ts_assign(dense_bias, bias_host);
  assert_no_error();
  ts_tensor *after = dense_on_sim(fn, xs[1], w);
  assert_close(dense_on_cpu(xs[1], w, bias_host), after);
  assert_close(dense_on_cpu(xs[1], w, matrix(1, 16, 0.1f)), before);
  ts_function_free(fn);
  ts_tensor_unref(dense_bias);
  dense_bias = NULL;
  ts_scope_end(scope);
}

/* Doubles x when its sum is positive, else negates it. */
static ts_tensor *sign_branch(ts_call *call)
{
  ts_tensor *x = ts_mul(ts_arg(call, 0), ts_scalar_f32(1.5f));
  TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0)), &x) {
    x = ts_mul(x, ts_scalar_f32(2));
  } TS_ELSE {
    x = ts_neg(x);
  } TS_END_IF;
  return ts_add(x, ts_scalar_f32(1));
}

/* A segmented plan (an If between two captured runs of steps) called on
 * SIM:0 with inputs that take one branch, then the other, alternately:
 * each call's result is the CPU's, and stays so after the later calls. */
static void test_plan_replay_branch_changes(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("sign_branch", sign_branch, "x");
  ts_tensor *xs[2] = { matrix(5, 6, 1.0f), matrix(5, 6, -2.0f) };
  ts_tensor *want[2], *got[4];
  for (int i = 0; i < 2; i++) {
    ts_value arg = TS_TENSOR_VALUE(xs[i]);
    want[i] = ts_function_call(fn, &arg, 1);
    assert_no_error();
  }
  for (int call = 0; call < 4; call++) {
    ts_value arg = TS_TENSOR_VALUE(xs[call % 2]);
    TS_DEVICE_SCOPE(sim()) got[call] = ts_function_call(fn, &arg, 1);
    assert_no_error();
    g_assert_true(ts_tensor_backend(got[call]) == sim());
  }
  for (int call = 0; call < 4; call++)
    assert_close(want[call % 2], got[call]);
  /* the two branches really differ: x doubled, or negated */
  g_assert_cmpfloat(ts_tensor_get_f64(got[0], 1), ==, 1.0 + 1.5 * 2 * ts_tensor_get_f64(xs[0], 1));
  g_assert_cmpfloat(ts_tensor_get_f64(got[1], 1), ==, 1.0 - 1.5 * ts_tensor_get_f64(xs[1], 1));
  ts_function_free(fn);
  ts_scope_end(scope);
}

static ts_schedule schedule_of(ts_function *fn, ts_value *args, int n)
{
  ts_schedule s;
  g_assert_true(ts_concrete_schedule(ts_function_get_concrete(fn, args, n), &s));
  assert_no_error();
  return s;
}

/* layers() on SIM:0 with new values in x each call: the first call
 * captures (on the plan's own inputs), and every later call only
 * launches that capture again (no op runs on the host, nothing
 * is captured), each with the CPU's result for its own x; what each call
 * returned is unchanged by the calls after it.  Other shapes capture
 * anew (another concrete function here) and the first shapes replay
 * again after them; a listener hears every op of every replay, and
 * arguments already on the device replay too. */
static void test_plan_replays_without_capture(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("layers", layers, "x, w");
  ts_tensor *w = matrix(16, 16, -0.25f);
  enum { CALLS = 6 };
  ts_tensor *want[CALLS], *got[CALLS];
  ts_value args[2] = { TS_TENSOR_VALUE(NULL), TS_TENSOR_VALUE(w) };
  for (int call = 0; call < CALLS; call++) {
    ts_tensor *x = matrix(8, 16, 0.5f - 0.375f * (float)call);
    args[0] = TS_TENSOR_VALUE(x);
    want[call] = ts_function_call(fn, args, 2);
    assert_no_error();
    collected c;
    call_on_sim(fn, args, 2, want[call], &c);
    ts_schedule sched = schedule_of(fn, args, 2);
    int sim_calls = 2 * call + 1;
    g_assert_cmpint(sched.n_captures, ==, 1);
    g_assert_cmpint(sched.n_replays, ==, sim_calls - 1);
    int kernels = 0;
    for (guint i = 0; i < c.records->len; i++)
      kernels += g_array_index(c.records, ts_activity, i).kind == TS_ACTIVITY_KERNEL;
    g_assert_cmpint(c.sim_ops, ==, kernels); /* every op told, replayed or not */
    collect_clear(&c);
    TS_DEVICE_SCOPE(sim()) got[call] = ts_function_call(fn, args, 2);
    assert_no_error();
    g_assert_true(ts_tensor_backend(got[call]) == sim());
    /* its kernels run before the next collection begins */
    g_assert_true(ts_backend_synchronize(sim()));
  }
  g_assert_cmpint(schedule_of(fn, args, 2).n_replays, ==, 2 * CALLS - 1);
  for (int call = 0; call < CALLS; call++) /* held from each call, after all of them */
    assert_close(want[call], got[call]);
  for (int call = 1; call < CALLS; call++) /* really other values each call */
    g_assert_cmpfloat(ts_tensor_get_f64(want[call], 0), !=, ts_tensor_get_f64(want[0], 0));
  /* another shape: its own concrete function captures; the first replays on */
  ts_tensor *tall = matrix(5, 16, 0.25f);
  ts_value tall_args[2] = { TS_TENSOR_VALUE(tall), TS_TENSOR_VALUE(w) };
  ts_tensor *tall_want = ts_function_call(fn, tall_args, 2), *tall_got = NULL;
  TS_DEVICE_SCOPE(sim()) tall_got = ts_function_call(fn, tall_args, 2);
  assert_close(tall_want, tall_got);
  g_assert_cmpint(schedule_of(fn, tall_args, 2).n_replays, ==, 0);
  ts_tensor *on_dev = ts_tensor_to_backend(matrix(8, 16, 3.0f), sim());
  args[0] = TS_TENSOR_VALUE(on_dev);
  ts_tensor *dev_got = NULL;
  TS_DEVICE_SCOPE(sim()) dev_got = ts_function_call(fn, args, 2);
  args[0] = TS_TENSOR_VALUE(matrix(8, 16, 3.0f));
  assert_close(ts_function_call(fn, args, 2), dev_got);
  g_assert_cmpint(schedule_of(fn, args, 2).n_replays, ==, 2 * CALLS);
  for (int call = 0; call < CALLS; call++)
    assert_close(want[call], got[call]);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* One concrete function for every batch (its signature's first dim
 * unknown): a call of another batch captures anew (on the plan's inputs,
 * made anew for its shape), with its own result, and so does the first
 * batch, back, before it replays again. */
static void test_plan_replay_shape_change(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("layers", layers, "x, w");
  ts_spec specs[2] = { { TS_F32, TS_SHAPE(-1, 16) }, { TS_F32, TS_SHAPE(16, 16) } };
  g_assert_true(ts_function_set_input_signature(fn, specs, 2));
  ts_tensor *w = matrix(16, 16, -0.25f);
  const int rows[] = { 8, 8, 8, 5, 8, 8, 5 };
  const int captures[] = { 1, 1, 1, 2, 3, 3, 4 }, replays[] = { 0, 1, 2, 2, 2, 3, 3 };
  for (int call = 0; call < (int)G_N_ELEMENTS(rows); call++) {
    ts_value args[2] = { TS_TENSOR_VALUE(matrix(rows[call], 16, 0.5f - (float)call)),
                         TS_TENSOR_VALUE(w) };
    ts_tensor *want = ts_function_call(fn, args, 2), *got = NULL;
    TS_DEVICE_SCOPE(sim()) got = ts_function_call(fn, args, 2);
    assert_close(want, got);
    ts_schedule sched = schedule_of(fn, args, 2);
    g_assert_cmpint(sched.n_captures, ==, captures[call]);
    g_assert_cmpint(sched.n_replays, ==, replays[call]);
  }
  g_assert_cmpint(ts_function_trace_count(fn), ==, 1);
  ts_function_free(fn);
  ts_scope_end(scope);
}

static void assert_same_values(ts_tensor *want, ts_tensor *got)
{
  assert_no_error();
  g_assert_nonnull(got);
  g_assert_true(ts_shape_equal(ts_tensor_shape(want), ts_tensor_shape(got)));
  for (int64_t i = 0; i < ts_tensor_size(want); i++)
    g_assert_cmpfloat(ts_tensor_get_f64(got, i), ==, ts_tensor_get_f64(want, i));
}

/* A graph with random ops on SIM:0 (passes off, or fold would make their
 * numbers constants) captures once and replays from then on, each replay
 * drawing the numbers its seeds give, as every CPU call does: the same
 * values as the CPU's, eagerly and in graph mode, call after call. */
static void test_plan_replays_random(void)
{
  ts_scope *scope = ts_scope_begin();
  char *passes = ts_get_passes();
  g_assert_true(ts_set_passes("none"));
  ts_function *fn = ts_function_new("noisy", noisy, "x");
  enum { CALLS = 5 };
  ts_value args[1];
  for (int call = 0; call < CALLS; call++) {
    args[0] = TS_TENSOR_VALUE(matrix(8, 16, 0.25f * (float)call));
    ts_run_functions_eagerly(true);
    ts_tensor *eager = ts_function_call(fn, args, 1);
    ts_run_functions_eagerly(false);
    ts_tensor *graph = ts_function_call(fn, args, 1), *got = NULL;
    assert_same_values(eager, graph);
    TS_DEVICE_SCOPE(sim()) got = ts_function_call(fn, args, 1);
    assert_no_error();
    g_assert_true(ts_tensor_backend(got) == sim());
    assert_same_values(eager, ts_tensor_to_backend(got, ts_backend_cpu()));
    ts_schedule sched = schedule_of(fn, args, 1);
    g_assert_cmpint(sched.n_captures, ==, 1);
    g_assert_cmpint(sched.n_replays, ==, call);
  }
  ts_function_free(fn);
  g_assert_true(ts_set_passes(passes));
  free(passes);
  ts_scope_end(scope);
}

static ts_tensor *floor_divided(ts_call *call)
{
  return ts_add(ts_floordiv(ts_arg(call, 0), ts_arg(call, 1)), ts_arg(call, 0));
}

/* An integer division by zero in a captured graph on SIM:0 is the CPU's
 * error (its kernel fails on the stream's thread; the call, or the host
 * copy after it, reports it), once: the graph captured and replayed
 * before it and replays after it. */
static void test_plan_floordiv_by_zero(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 7, -7, 9 });
  ts_tensor *good = ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 2, 2, -4 });
  ts_tensor *zero = ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 2, 0, 1 });
  ts_function *fn = ts_function_new("floor_divided", floor_divided, "x, y");
  ts_value args[2] = { TS_TENSOR_VALUE(x), TS_TENSOR_VALUE(zero) };
  g_assert_null(ts_function_call(fn, args, 2));
  ts_error *cpu = ts_error_take();
  g_assert_nonnull(cpu);
  g_assert_nonnull(strstr(cpu->message, "FloorDiv: Integer division by zero"));
  args[1] = TS_TENSOR_VALUE(good);
  ts_tensor *want = ts_function_call(fn, args, 2), *got = NULL;
  for (int call = 0; call < 3; call++) {
    TS_DEVICE_SCOPE(sim()) got = ts_function_call(fn, args, 2);
    assert_same_values(want, ts_tensor_to_backend(got, ts_backend_cpu()));
  }
  g_assert_cmpint(schedule_of(fn, args, 2).n_replays, ==, 2);
  args[1] = TS_TENSOR_VALUE(zero);
  TS_DEVICE_SCOPE(sim()) got = ts_function_call(fn, args, 2);
  if (got) /* queued: the host copy finds it */
    g_assert_null(ts_tensor_to_backend(got, ts_backend_cpu()));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_cmpint(e->code, ==, cpu->code);
  g_assert_cmpstr(e->op, ==, cpu->op);
  g_assert_cmpstr(e->detail, ==, cpu->detail);
  g_assert_cmpint(e->line, ==, cpu->line);
  ts_error_free(e);
  args[1] = TS_TENSOR_VALUE(good); /* said once: the next call is clean */
  TS_DEVICE_SCOPE(sim()) got = ts_function_call(fn, args, 2);
  assert_same_values(want, ts_tensor_to_backend(got, ts_backend_cpu()));
  g_assert_cmpint(schedule_of(fn, args, 2).n_replays, >=, 3);
  ts_error_free(cpu);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* Adds x * x to a variable and returns x times its new value. */
static ts_tensor *accumulated;

static ts_tensor *accumulate(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0);
  ts_assign_add(accumulated, ts_mul(x, x));
  return ts_mul(ts_read(accumulated), x);
}

/* A plan that writes a variable and reads it replays with the variable's
 * value at each call and leaves it updated, as the CPU does; an eager
 * read held across a call (its storage shared) makes that call capture
 * anew, so that the held read keeps the value it read.  (A plan whose
 * read outlives its own assign moves the variable every call, copy on
 * write, and so captures every call.) */
static void test_plan_replay_variables(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *start = matrix(3, 4, 0.5f);
  ts_tensor *on_cpu = ts_variable_new(start, "acc_cpu");
  TS_DEVICE_SCOPE(sim()) accumulated = ts_variable_new(start, "acc");
  ts_function *fn = ts_function_new("accumulate", accumulate, "x");
  for (int call = 0; call < 8; call++) {
    ts_scope *each = ts_scope_begin(); /* the reads below let go of the storage after it */
    ts_tensor *x = matrix(3, 4, 0.25f * (float)call - 1.0f);
    ts_assign_add(on_cpu, ts_mul(x, x));
    ts_tensor *want = ts_mul(ts_read(on_cpu), x);
    ts_value arg = TS_TENSOR_VALUE(x);
    ts_tensor *held = call == 4 ? ts_tensor_to_backend(ts_read(on_cpu), ts_backend_cpu()) : NULL;
    ts_tensor *held_read = NULL;
    if (call == 4) /* a read of the device variable kept across the call */
      TS_DEVICE_SCOPE(sim()) held_read = ts_read(accumulated);
    ts_tensor *got = NULL;
    TS_DEVICE_SCOPE(sim()) got = ts_function_call(fn, &arg, 1);
    assert_close(want, got);
    assert_close(ts_read(on_cpu), ts_read(accumulated));
    if (held_read) /* the value before the call, not after it */
      assert_close(ts_sub(held, ts_mul(x, x)), held_read);
    ts_scope_end(each);
  }
  ts_schedule sched = schedule_of(fn, &TS_TENSOR_VALUE(start), 1);
  /* captured: the first call (the variable got its storage), the second
   * (on the caller's x: the first could not be replayed), the third (on
   * the plan's inputs), the held read's, the two after it */
  g_assert_cmpint(sched.n_replays, ==, 2);
  g_assert_cmpint(sched.n_captures, ==, 6);
  ts_function_free(fn);
  ts_tensor_unref(on_cpu);
  ts_tensor_unref(accumulated);
  accumulated = NULL;
  ts_scope_end(scope);
}

/* Placement per function: its calls run on its device wherever the
 * caller is; per scope and per call (TS_DEVICE_SCOPE) otherwise. */
static void test_function_placement(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("layers", layers, "x, w");
  ts_tensor *x = matrix(4, 16, 0.5f), *w = matrix(16, 16, -0.25f);
  ts_value args[2] = { TS_TENSOR_VALUE(x), TS_TENSOR_VALUE(w) };
  ts_tensor *want = ts_function_call(fn, args, 2);
  g_assert_true(ts_tensor_backend(want) == ts_backend_cpu());
  ts_function_set_device(fn, sim());
  for (int eager = 0; eager < 2; eager++) {
    ts_function_set_run_eagerly(fn, eager);
    ts_tensor *got = ts_function_call(fn, args, 2);
    g_assert_true(ts_tensor_backend(got) == sim());
    assert_close(want, got);
    g_assert_true(ts_current_device() == ts_backend_cpu()); /* the caller's, as it was */
  }
  ts_function_set_device(fn, NULL);
  TS_DEVICE_SCOPE(sim()) {
    g_assert_true(ts_tensor_backend(ts_function_call(fn, args, 2)) == sim());
  }
  g_assert_true(ts_tensor_backend(ts_function_call(fn, args, 2)) == ts_backend_cpu());
  assert_no_error();
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* A step of state on the variables the call captures (step_v, step_w):
 * v += x; v -= 0.5 * x; w = v; returns read(v) * 2. */
static ts_tensor *step_v, *step_w;

static ts_tensor *var_step(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_assign_add(step_v, x);
  ts_assign_sub(step_v, ts_mul(x, ts_scalar_f32(0.5f)));
  ts_assign(step_w, ts_read(step_v));
  return ts_mul(ts_read(step_v), ts_scalar_f32(2));
}

/* A variable made on SIM:0 lives there (as a tf.Variable made under
 * tf.device): its reads and assigns run there, eagerly and as a graph,
 * with the values the CPU gives; one made on the CPU stays there, and
 * ops on it run there whatever the device. */
static void test_variables_live_on_device(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = matrix(3, 5, 1.0f);
  ts_value arg = TS_TENSOR_VALUE(x);
  ts_tensor *cpu_v = ts_variable_new(matrix(3, 5, 0.25f), "v");
  ts_tensor *cpu_w = ts_variable_new(matrix(3, 5, 0), "w");
  ts_tensor *dev_v = NULL, *dev_w = NULL;
  TS_DEVICE_SCOPE(sim()) {
    dev_v = ts_variable_new(matrix(3, 5, 0.25f), "v");
    dev_w = ts_variable_new(matrix(3, 5, 0), "w");
  }
  g_assert_true(ts_tensor_backend(cpu_v) == ts_backend_cpu());
  g_assert_true(ts_tensor_backend(dev_v) == sim());
  /* one function per set of variables: each traces its own captures */
  ts_function *on_cpu = ts_function_new("var_step", var_step, "x");
  ts_function *on_dev = ts_function_new("var_step", var_step, "x");
  for (int eager = 0; eager < 2; eager++) {
    ts_function_set_run_eagerly(on_cpu, eager);
    ts_function_set_run_eagerly(on_dev, eager);
    for (int i = 0; i < 2; i++) {
      step_v = cpu_v, step_w = cpu_w;
      ts_tensor *want = ts_function_call(on_cpu, &arg, 1);
      step_v = dev_v, step_w = dev_w;
      ts_tensor *got = NULL;
      TS_DEVICE_SCOPE(sim()) got = ts_function_call(on_dev, &arg, 1);
      assert_no_error();
      g_assert_true(ts_tensor_backend(got) == sim());
      assert_close(want, got);
      assert_close(ts_read(cpu_v), ts_read(dev_v));
      assert_close(ts_read(cpu_w), ts_read(dev_w));
      g_assert_true(ts_tensor_backend(dev_v) == sim());
      g_assert_true(ts_tensor_backend(ts_read(dev_v)) == sim()); /* read where it lives */
    }
  }
  /* its graph, serialized (as the worker sends it), keeps the variables'
   * names: read back, they are variables again */
  ts_concrete *cf = NULL;
  TS_DEVICE_SCOPE(sim()) cf = ts_function_get_concrete(on_dev, &arg, 1);
  g_assert_nonnull(cf);
  size_t size;
  void *bytes = ts_graph_serialize(ts_concrete_graph(cf), &size);
  g_assert_nonnull(bytes);
  ts_graph *back = ts_graph_deserialize(bytes, size);
  assert_no_error();
  g_assert_nonnull(back);
  ts_graph_free(back);
  free(bytes);
  /* a CPU variable's read inside a device scope still runs on the CPU */
  TS_DEVICE_SCOPE(sim()) g_assert_true(ts_tensor_backend(ts_read(cpu_v)) == ts_backend_cpu());
  assert_no_error();
  ts_function_free(on_cpu);
  ts_function_free(on_dev);
  ts_tensor_unref(cpu_v);
  ts_tensor_unref(cpu_w);
  ts_tensor_unref(dev_v);
  ts_tensor_unref(dev_w);
  ts_scope_end(scope);
}

/* test-device-step.h's training step on SIM:0: the weights stay on the
 * device, only scalar constants come from the host after the first call,
 * with the CPU's losses and weights (the same kernels: within float32's
 * last bits), the later calls replaying the captured step as it was
 * (Adam's updates of the variables in place among its launches). */
static void test_training_step_keeps_weights(void)
{
  device_step_check(sim(), 6, 1e-6, 3); /* replayed once the variables settled */
}

/* A graph's constants go to the device once: x [1, 4] times the constant
 * [4, 1] + 0.5 + (the number its text says) on SIM:0 copies its two
 * constants from the host on its first call that goes well, and after
 * that only the number (read on the host, a new one each call): the
 * constants' copies are kept.  A first run that fails (on its text:
 * StringToNumber, on the host) after the product copied its constant
 * keeps nothing (the copy is filled when the run's plan is launched);
 * one that fails later leaves the kept copies be.  The CPU's results
 * each time. */
static int uploads;
static void count_uploads(const ts_activity *r, int n, void *data)
{
  for (int i = 0; i < n; i++)
    uploads += r[i].kind == TS_ACTIVITY_COPY && strcmp(r[i].name, "host to device") == 0;
}

static ts_tensor *scaled(ts_call *call)
{
  ts_tensor *y = ts_matmul(ts_arg(call, 0), ts_constant(TS_F32, TS_SHAPE(4, 1), (float[]){ 1, 2, 3, 4 }));
  y = ts_add(y, ts_scalar_f32(0.5f));
  return ts_add(y, ts_string_to_number(ts_arg(call, 1), TS_F32));
}

static void test_graph_constants_copied_once(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(1, 4), (float[]){ 1, -1, 0.5f, 2 });
  ts_value good[2] = { TS_TENSOR_VALUE(ts_tensor_to_backend(x, sim())),
                       TS_TENSOR_VALUE(ts_scalar_string("0.25")) };
  ts_value bad[2] = { good[0], TS_TENSOR_VALUE(ts_scalar_string("not a number")) };
  ts_tensor *want = ts_constant(TS_F32, TS_SHAPE(1, 1), (float[]){ 9.25f });
  ts_function *fn = ts_function_new("scaled", scaled, "x, text");
  g_assert_true(ts_backend_synchronize(sim())); /* x's copy is no call's */
  g_assert_true(ts_activity_subscribe(count_uploads, NULL));
  /* the calls, and how many copies from the host each makes (-1: fails) */
  static const int expect[] = { -1, 3, 1, 1, -1, 1 };
  for (size_t call = 0; call < G_N_ELEMENTS(expect); call++) {
    ts_scope *s = ts_scope_begin();
    uploads = 0;
    ts_tensor *got = NULL;
    TS_DEVICE_SCOPE(sim()) { got = ts_function_call(fn, expect[call] < 0 ? bad : good, 2); }
    ts_activity_flush();
    if (expect[call] < 0) {
      g_assert_null(got);
      expect_error_containing("StringToNumber");
    } else {
      g_assert_true(ts_tensor_backend(got) == sim());
      assert_close(want, ts_tensor_to_backend(got, ts_backend_cpu()));
      g_assert_cmpint(uploads, ==, expect[call]);
    }
    ts_scope_end(s);
  }
  ts_activity_unsubscribe(count_uploads, NULL);
  g_assert_cmpint(ts_function_trace_count(fn), ==, 1);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* Threads calling it at once on SIM:0 (one records the plan, the others
 * go step by step meanwhile) share the kept copies safely: each call
 * gives the CPU's result (ThreadSanitizer checks the sharing in CI). */
static ts_function *shared_fn;
static ts_value shared_args[2];

static gpointer call_scaled(gpointer data)
{
  ts_tensor *want = data;
  for (int i = 0; i < 10; i++) {
    ts_scope *s = ts_scope_begin();
    ts_tensor *got = NULL;
    TS_DEVICE_SCOPE(sim()) { got = ts_function_call(shared_fn, shared_args, 2); }
    assert_close(want, ts_tensor_to_backend(got, ts_backend_cpu()));
    ts_scope_end(s);
  }
  return NULL;
}

static void test_graph_constants_shared_by_threads(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(1, 4), (float[]){ 1, -1, 0.5f, 2 });
  shared_args[0] = TS_TENSOR_VALUE(ts_tensor_to_backend(x, sim()));
  shared_args[1] = TS_TENSOR_VALUE(ts_scalar_string("0.25"));
  ts_tensor *want = ts_constant(TS_F32, TS_SHAPE(1, 1), (float[]){ 9.25f });
  shared_fn = ts_function_new("scaled", scaled, "x, text");
  GThread *threads[4];
  for (int i = 0; i < 4; i++)
    threads[i] = g_thread_new("caller", call_scaled, want);
  for (int i = 0; i < 4; i++)
    g_thread_join(threads[i]);
  assert_no_error();
  ts_function_free(shared_fn);
  ts_scope_end(scope);
}

/* ---- what a backend is asked ------------------------------------------------------------ */

/* A backend of kind CPU (host memory) that refuses MatMul with
 * transpose_a and any op on inputs of more than 100 elements. */
static int asked;

static bool picky_supports(const ts_backend *b, const ts_kernel_ctx *k)
{
  asked++;
  for (int i = 0; i < ts_kernel_n_inputs(k); i++)
    if (ts_tensor_size(ts_kernel_input(k, i)) > 100)
      return false;
  char *ta = ts_kernel_attr(k, "transpose_a");
  bool ok = !ta || strcmp(ta, "true") != 0;
  free(ta);
  g_assert_null(ts_kernel_attr(k, "no such attribute"));
  return ok;
}

/* picky's memory: host memory of its own */
static void picky_free(ts_buffer *buf)
{
  free(ts_buffer_base(buf));
}

static bool picky_set(ts_buffer *buf, size_t offset, const void *src, size_t bytes)
{
  memcpy((char *)ts_buffer_base(buf) + offset, src, bytes);
  return true;
}

static bool picky_get(const ts_buffer *buf, size_t offset, void *dst, size_t bytes)
{
  memcpy(dst, (char *)ts_buffer_base(buf) + offset, bytes);
  return true;
}

static const ts_buffer_i PICKY_BUFFER = { .free_buffer = picky_free, .set = picky_set,
                                          .get = picky_get };

static ts_buffer *picky_alloc(const ts_buffer_type *bt, size_t bytes)
{
  void *p = NULL;
  g_assert_cmpint(posix_memalign(&p, 64, bytes ? bytes : 1), ==, 0);
  return ts_buffer_new(bt, &PICKY_BUFFER, p, bytes, NULL);
}

static ts_graph_plan *no_plan(const ts_backend *b)
{
  return NULL;
}

static void test_supports_op_sees_shapes_and_attrs(void)
{
  ts_backend_i iface = { .name = "picky", .kind = TS_DEVICE_CPU, .supports_op = picky_supports,
                         .buffer_type = { .alignment = 64, .is_host = true,
                                          .alloc_buffer = picky_alloc } };
  const ts_backend *b = ts_backend_register(&iface);
  g_assert_nonnull(b);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *small = matrix(3, 3, 1), *big = matrix(20, 20, 1);
  TS_DEVICE_SCOPE(b) {
    g_assert_true(ts_tensor_backend(ts_matmul(small, small)) == b);
    g_assert_true(ts_tensor_backend(ts_matmul_t(small, small, true, false)) == ts_backend_cpu());
    g_assert_true(ts_tensor_backend(ts_neg(big)) == ts_backend_cpu());
  }
  assert_no_error();
  g_assert_cmpint(asked, ==, 3);
  ts_scope_end(scope);
  /* the plan members come together */
  iface.name = "half a plan";
  iface.graph_plan_create = no_plan;
  g_assert_null(ts_backend_register(&iface));
  expect_error_containing("come together");
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sim/registered", test_registered);
  g_test_add_func("/sim/only-when-named", test_only_when_named);
  g_test_add_func("/sim/host-dereference-crashes", test_host_dereference_crashes);
  g_test_add_func("/sim/copies", test_copies);
  g_test_add_func("/sim/buffer-type-and-copies", test_buffer_type_and_copies);
  g_test_add_func("/sim/arena-is-one-buffer", test_arena_is_one_buffer);
  g_test_add_func("/sim/ops-and-events", test_ops_and_events);
  g_test_add_func("/sim/late-error", test_late_error);
  g_test_add_func("/sim/visible-fallback", test_visible_fallback);
  g_test_add_func("/sim/eager-activity", test_eager_activity);
  g_test_add_func("/sim/copies-carry-correlation", test_copies_carry_correlation);
  g_test_add_func("/sim/plan-copies-carry-correlation", test_plan_copies_carry_correlation);
  g_test_add_func("/sim/plan-broken-captures-again", test_plan_broken_captures_again);
  g_test_add_func("/sim/plan-replay", test_plan_replay);
  g_test_add_func("/sim/plan-control-flow", test_plan_control_flow);
  g_test_add_func("/sim/if-on-device", test_if_on_device);
  g_test_add_func("/sim/if-branch-constant-recaptured", test_if_branch_constant_recaptured);
  g_test_add_func("/sim/if-broken-inside-runs-from-host", test_if_broken_inside_runs_from_host);
  g_test_add_func("/sim/loop-on-device", test_loop_on_device);
  g_test_add_func("/sim/nested-loops-on-device", test_nested_loops_on_device);
  g_test_add_func("/sim/loop-in-branch-on-device", test_loop_in_branch_on_device);
  g_test_add_func("/sim/swapping-loop-on-device", test_swapping_loop_on_device);
  g_test_add_func("/sim/printing-loop-in-segments", test_printing_loop_in_segments);
  g_test_add_func("/sim/host-loops-in-segments", test_host_loops_in_segments);
  g_test_add_func("/sim/nested-loop-broken-inside", test_nested_loop_broken_inside);
  g_test_add_func("/sim/loop-broken-inside-runs-from-host", test_loop_broken_inside_runs_from_host);
  g_test_add_func("/sim/not-opened-runs-from-host", test_not_opened_runs_from_host);
  g_test_add_func("/sim/plan-replay-inputs-and-results", test_plan_replay_inputs_and_results);
  g_test_add_func("/sim/plan-replay-branch-changes", test_plan_replay_branch_changes);
  g_test_add_func("/sim/plan-replays-without-capture", test_plan_replays_without_capture);
  g_test_add_func("/sim/plan-replay-shape-change", test_plan_replay_shape_change);
  g_test_add_func("/sim/plan-replay-variables", test_plan_replay_variables);
  g_test_add_func("/sim/plan-replays-random", test_plan_replays_random);
  g_test_add_func("/sim/plan-floordiv-by-zero", test_plan_floordiv_by_zero);
  g_test_add_func("/sim/function-placement", test_function_placement);
  g_test_add_func("/sim/variables-live-on-device", test_variables_live_on_device);
  g_test_add_func("/sim/training-step-keeps-weights", test_training_step_keeps_weights);
  g_test_add_func("/sim/graph-constants-copied-once", test_graph_constants_copied_once);
  g_test_add_func("/sim/graph-constants-shared-by-threads", test_graph_constants_shared_by_threads);
  g_test_add_func("/sim/supports-op-sees-shapes-and-attrs", test_supports_op_sees_shapes_and_attrs);
  return g_test_run();
}
