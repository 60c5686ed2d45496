/* test-profiler-device.c — the device collector (profiler/device.c): a
 * profile of sequential_model on SIM:0, the simulated GPU, has a DEVICE
 * event for every op that ran there, charged to that op (its run, sequence
 * number and graph node) with device times inside the op's call, on the
 * device stream's own track; eagerly and in graph mode, where the kernels
 * come from the replayed plan; the copies into the device are spans of
 * their own there, each charged to the op that needed it.  Serialized and
 * read back, they stay.  The weights stay on the device between calls.  A
 * loop the device runs has a DEVICE event per iteration for its body's op.
 * On a GPU, CUDA:0's kernels are charged the same way, a CUDA Graph made
 * before the profile began and a loop's body included. */
#include <glib.h>
#include <string.h>
#include <tracescope-backend.h>
#include <tracescope-profiler.h>

#include "test-device-control-flow.h"
#include "test-errors.h"

typedef struct op_key {
  uint64_t run_id;
  uint32_t seq;
} op_key;

static guint key_hash(gconstpointer p)
{
  const op_key *k = p;
  return g_int64_hash(&k->run_id) ^ k->seq;
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
  const op_key *x = a, *y = b;
  return x->run_id == y->run_id && x->seq == y->seq;
}

/* The views sequential_model makes (its variables' reads among them):
 * headers over device memory, made on the host, launch nothing. */
static bool is_view(const char *op)
{
  return !strcmp(op, "Reshape") || !strcmp(op, "Flatten") || !strcmp(op, "Identity") ||
         !strcmp(op, "ReadVariableOp");
}

/* The copies on the stream's track: spans of their own (TSP_OP_OTHER,
 * named for what they are), each charged to the op whose input it moved
 * (its run, seq and location: ops, all ops of the session by key), except
 * those of no op: a variable's first value, and a graph call's arguments
 * copied into the inputs of the device plan it replays (or captures to
 * replay) and its results copied out of the plan's outputs. */
static int n_transfers;

static bool is_transfer(const tsp_session *s, const tsp_event *e, GHashTable *ops)
{
  if (e->op != TSP_OP_OTHER)
    return false;
  const char *name = tsp_event_op_name(s, e);
  g_assert_true(!strcmp(name, "host to device") || !strcmp(name, "device to host") ||
                !strcmp(name, "device to device") || !strcmp(name, "memset"));
  g_assert_cmpuint(e->end_ns, >=, e->start_ns);
  if (!e->run_id && !e->seq) { /* no op's: onto the device, or within it */
    g_assert_true(!strcmp(name, "device to device") || !strcmp(name, "host to device"));
    return true;
  }
  op_key k = { e->run_id, e->seq };
  const tsp_event *op = g_hash_table_lookup(ops, &k);
  if (!op)
    g_error("a copy (%s) is charged to no op (run %" G_GUINT64_FORMAT ", seq %u)", name,
            e->run_id, e->seq);
  g_assert_cmpuint(e->loc, ==, op->loc);
  if (!strcmp(name, "host to device")) /* into the device where the op ran */
    g_assert_cmpstr(tsp_session_device(s, op->device), ==, "SIM:0");
  return true;
}

/* Checks s: every op on SIM:0 has exactly one DEVICE event, with its
 * fields, on the stream's track; returns how many there are (the
 * copies beside them in n_transfers: at least the argument's, each call). */
static int check_charged(const tsp_session *s, bool graph)
{
  n_transfers = 0;
  GHashTable *ops = g_hash_table_new_full(key_hash, key_equal, g_free,
                                          (GDestroyNotify)g_ptr_array_unref);
  GHashTable *all_ops = g_hash_table_new_full(key_hash, key_equal, g_free, NULL);
  int stream = -1, n_device = 0, n_sim_ops = 0, n_nodes = 0;
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    if (strcmp(tsp_session_thread(s, t)->name, "SIM:0 stream") == 0)
      stream = t;
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));) {
      if (e->kind == TSP_EVENT_OP) {
        op_key *k = g_new(op_key, 1);
        *k = (op_key){ e->run_id, e->seq };
        g_hash_table_insert(all_ops, k, (gpointer)e);
      }
      if (e->kind == TSP_EVENT_OP && strcmp(tsp_session_device(s, e->device), "SIM:0") == 0 &&
          !is_view(tsp_event_op_name(s, e))) {
        op_key *k = g_new(op_key, 1);
        *k = (op_key){ e->run_id, e->seq };
        /* (run, seq) may repeat outside calls (variable initializers): the
         * events of one key all name the same op */
        GPtrArray *same = g_hash_table_lookup(ops, k);
        if (!same)
          g_hash_table_insert(ops, k, same = g_ptr_array_new());
        else
          g_free(k);
        g_ptr_array_add(same, (gpointer)e);
        n_sim_ops++;
      }
    }
  }
  g_assert_cmpint(stream, >=, 0);
  g_assert_cmpint(n_sim_ops, >, 3);
  tsp_iter it;
  tsp_iter_init(&it, s, stream);
  for (const tsp_event *e; (e = tsp_iter_next(&it));) {
    g_assert_cmpint(e->kind, ==, TSP_EVENT_DEVICE);
    if (is_transfer(s, e, all_ops)) {
      n_transfers++;
      continue;
    }
    op_key k = { e->run_id, e->seq };
    GPtrArray *same = g_hash_table_lookup(ops, &k);
    if (!same || !same->len)
      g_error("a device event of %s (run %" G_GUINT64_FORMAT ", seq %u) has no op",
              tsp_event_op_name(s, e), e->run_id, e->seq);
    const tsp_event *op = g_ptr_array_steal_index(same, 0);
    g_assert_cmpint(e->op, ==, op->op);
    g_assert_cmpuint(e->node, ==, op->node);
    g_assert_cmpuint(e->traced, ==, op->traced);
    g_assert_cmpuint(e->end_ns, >=, e->start_ns);
    g_assert_cmpuint(e->start_ns, >=, op->start_ns); /* launched, then run */
    n_device++;
    n_nodes += e->node != 0;
  }
  /* graph mode: the graph's nodes (variable initializers run eagerly) */
  if (graph)
    g_assert_cmpint(n_nodes, >, 3);
  else
    g_assert_cmpint(n_nodes, ==, 0);
  g_assert_cmpint(n_transfers, >=, 2); /* two calls, each copying its argument in */
  GHashTableIter hi;
  gpointer left;
  g_hash_table_iter_init(&hi, ops);
  while (g_hash_table_iter_next(&hi, NULL, &left)) /* every op charged once */
    if (((GPtrArray *)left)->len)
      g_error("%s on SIM:0 has no device event",
              tsp_event_op_name(s, g_ptr_array_index((GPtrArray *)left, 0)));
  g_hash_table_unref(ops);
  g_hash_table_unref(all_ops);
  return n_device;
}

/* A profile of calls calls of sequential_model on device, after unprofiled
 * ones (warm: made before the session starts). */
static tsp_session *profile_after(const char *device, bool graph, int warm, int calls)
{
  ts_module *m = ts_module_open("seeds");
  assert_no_error();
  ts_function *fn = ts_module_lookup(m, "sequential_model");
  ts_value x;
  g_assert_true(ts_value_parse("f32[4,28,28]:uniform", &x));
  ts_run_functions_eagerly(!graph);
  TS_DEVICE_SCOPE(ts_backend_by_name(device)) {
    for (int i = 0; i < warm; i++) {
      ts_scope *scope = ts_scope_begin();
      g_assert_nonnull(ts_function_call(fn, &x, 1));
      ts_scope_end(scope);
    }
  }
  tsp_session *s = tsp_session_new();
  g_assert_true(tsp_session_start(s, NULL));
  TS_DEVICE_SCOPE(ts_backend_by_name(device)) {
    for (int i = 0; i < calls; i++) {
      ts_scope *scope = ts_scope_begin();
      uint64_t t0 = tsp_call_begin(s);
      g_assert_nonnull(ts_function_call(fn, &x, 1));
      tsp_call_end(s, t0, "sequential_model", graph ? TSP_MODE_GRAPH : TSP_MODE_EAGER);
      ts_scope_end(scope);
    }
  }
  ts_run_functions_eagerly(false);
  tsp_session_stop(s);
  assert_no_error();
  ts_value_clear(&x);
  ts_module_free(m);
  return s;
}

static tsp_session *profile_on(const char *device, bool graph, int calls)
{
  return profile_after(device, graph, 0, calls);
}

static tsp_session *profile(bool graph, int calls)
{
  return profile_on("SIM:0", graph, calls);
}

/* Op statistics of ops on a device take their kernels' time (one kernel
 * an op on SIM:0), the host's launch beside it; comparisons use it. */
static void test_stats_device_time(void)
{
  tsp_session *s = profile(true, 3);
  tsp_stats *st = tsp_stats_compute(s, TSP_BY_NODE, &TSP_FILTER_ALL);
  int on_device = 0, not_launch = 0;
  for (int i = 0; i < st->n; i++) {
    const tsp_stat *r = &st->rows[i];
    if (strcmp(r->device, "SIM:0") != 0) {
      g_assert_cmpuint(r->device_count, ==, 0);
      g_assert_cmpfloat(tsp_stat_time_p50_ns(r), ==, r->self_p50_ns);
      continue;
    }
    if (r->device_count == 0) { /* a view (Reshape): no kernel, its host time stays */
      g_assert_true(r->op >= 0 && is_view(ts_op_name((ts_op)r->op)));
      g_assert_cmpfloat(tsp_stat_time_p50_ns(r), ==, r->self_p50_ns);
      continue;
    }
    on_device++;
    g_assert_cmpuint(r->device_count, ==, r->count);
    g_assert_cmpfloat(r->device_ns, >, 0);
    g_assert_cmpfloat(r->device_min_ns, <=, r->device_p50_ns);
    g_assert_cmpfloat(tsp_stat_time_p50_ns(r), ==, r->device_p50_ns);
    g_assert_cmpfloat(tsp_stat_time_ns(r), ==, r->device_ns);
    not_launch += tsp_stat_time_p50_ns(r) != r->self_p50_ns;
  }
  g_assert_cmpint(on_device, >, 3);
  /* not the launch: a row's kernel and launch medians may match to the ns
   * by chance (841 == 841 was seen), never every row's */
  g_assert_cmpint(not_launch, >, 0);
  tsp_stats_free(st);
  tsp_session_free(s);
}

/* On a GPU (suite gpu: scripts/gpu-check): the op statistics of a graph
 * replayed from its CUDA Graph take every kernel op's time from CUPTI's
 * records, charged through the graph nodes; skips without one. */
/* An op on CUDA:0 that launches no kernel: a view, or a random op (its
 * numbers are the CPU's, uploaded: a copy, cuda/kernels.c). */
static bool no_kernel_on_cuda(const tsp_stat *r)
{
  if (r->op < 0)
    return false;
  const char *op = ts_op_name((ts_op)r->op);
  return is_view(op) || !strcmp(op, "RandomUniform") || !strcmp(op, "RandomNormal");
}

/* For a failure's message: each call's nodes on CUDA:0 that ran without
 * a kernel time (no_kernel_on_cuda aside). */
static const char *uncharged_by_call(tsp_session *s)
{
  GString *out = g_string_new(NULL);
  GArray *calls = tsp_session_calls(s, &TSP_FILTER_ALL);
  for (guint c = 0; c < calls->len; c++) {
    const tsp_call *call = &g_array_index(calls, tsp_call, c);
    tsp_filter window = { TSP_MODE_ALL, call->start_ns, call->end_ns };
    tsp_stats *st = tsp_stats_compute(s, TSP_BY_NODE, &window);
    g_string_append_printf(out, "%scall %u without:", c ? "; " : "", c);
    for (int i = 0; i < st->n; i++) {
      const tsp_stat *r = &st->rows[i];
      if (strcmp(r->device, "CUDA:0") == 0 && r->device_count < r->count && !no_kernel_on_cuda(r))
        g_string_append_printf(out, " %s", r->key);
    }
    tsp_stats_free(st);
  }
  g_array_unref(calls);
  return g_string_free(out, FALSE); /* the test ends on it */
}

static void check_cuda_kernels_charged(tsp_session *s)
{
  tsp_stats *st = tsp_stats_compute(s, TSP_BY_NODE, &TSP_FILTER_ALL);
  int on_device = 0;
  for (int i = 0; i < st->n; i++) {
    const tsp_stat *r = &st->rows[i];
    if (strcmp(r->device, "CUDA:0") != 0 || no_kernel_on_cuda(r))
      continue;
    if (r->device_count != r->count)
      g_error("%s: %" G_GUINT64_FORMAT " of its %" G_GUINT64_FORMAT " runs have kernel times "
              "(%s)", r->key, r->device_count, r->count, uncharged_by_call(s));
    g_assert_cmpfloat(r->device_ns, >, 0);
    on_device++;
  }
  g_assert_cmpint(on_device, >, 3);
  g_test_message("%d nodes on CUDA:0 with kernel times; %" G_GUINT64_FORMAT " records dropped",
                 on_device, ts_activity_dropped());
  tsp_stats_free(st);
  tsp_session_free(s);
}

static void test_cuda_kernels_charged(void)
{
  if (!ts_backend_by_name("CUDA:0")) {
    g_test_skip(ts_backend_devices_note());
    return;
  }
  check_cuda_kernels_charged(profile_on("CUDA:0", true, 3));
}

/* The same when the graph was captured, and its CUDA Graph made, before
 * anything wanted device activity (CUPTI not yet subscribed, so the
 * graph's nodes were not named to ops then): the profiled calls make it
 * anew rather than update or replay one whose nodes are unknown.  In a
 * process of its own: once subscribed, CUPTI stays. */
static void test_cuda_kernels_charged_after_calls(void)
{
  if (!ts_backend_by_name("CUDA:0")) {
    g_test_skip(ts_backend_devices_note());
    return;
  }
  if (g_test_subprocess()) {
    check_cuda_kernels_charged(profile_after("CUDA:0", true, 2, 3));
    return;
  }
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed();
}

/* A window of one call (as the profiler's run selector makes) holds its
 * ops' kernels, even those that ran on the device after the call returned
 * on the host. */
static void test_stats_window_kernels(void)
{
  tsp_session *s = profile(true, 3);
  GArray *calls = tsp_session_calls(s, &TSP_FILTER_ALL);
  g_assert_cmpuint(calls->len, ==, 3);
  const tsp_call *last = &g_array_index(calls, tsp_call, 2);
  tsp_filter window = { TSP_MODE_ALL, last->start_ns, last->end_ns };
  /* SIM:0's stream runs behind its host: its last kernel ends after the call */
  uint64_t device_end = 0;
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));)
      if (e->kind == TSP_EVENT_DEVICE && e->run_id == last->run_id)
        device_end = MAX(device_end, e->start_ns);
  }
  tsp_stats *st = tsp_stats_compute(s, TSP_BY_NODE, &window);
  int on_device = 0;
  for (int i = 0; i < st->n; i++) {
    const tsp_stat *r = &st->rows[i];
    g_assert_cmpuint(r->count, ==, 1);
    if (strcmp(r->device, "SIM:0") == 0 && !is_view(ts_op_name((ts_op)r->op))) {
      g_assert_cmpuint(r->device_count, ==, 1);
      on_device++;
    }
  }
  g_assert_cmpint(on_device, >, 3);
  g_test_message("the call ends at %" G_GUINT64_FORMAT ", its last kernel starts at %" G_GUINT64_FORMAT,
                 last->end_ns, device_end);
  tsp_stats_free(st);
  g_array_unref(calls);
  tsp_session_free(s);
}

/* The same function on the CPU and on SIM:0, op by op: rows meet by node,
 * each side says where it ran, the device's time is its kernels' with the
 * launch beside it. */
static void test_cpu_against_device(void)
{
  tsp_session *cpu = profile_on("CPU", true, 2), *sim = profile(true, 2);
  tsp_diff *d = tsp_diff_compute(cpu, sim, TSP_BY_NODE);
  tsp_stats *st = tsp_stats_compute(sim, TSP_BY_NODE, &TSP_FILTER_ALL);
  int met = 0;
  for (int i = 0; i < d->n; i++) {
    const tsp_diff_row *r = &d->rows[i];
    if (r->only)
      continue;
    g_assert_cmpstr(r->device[0], ==, "CPU");
    g_assert_false(r->device_ran[0]);
    g_assert_cmpfloat(r->host_p50_ns[0], ==, r->p50_ns[0]);
    const tsp_stat *k = NULL;
    for (int j = 0; j < st->n && !k; j++)
      if (strcmp(st->rows[j].key, r->key) == 0)
        k = &st->rows[j];
    g_assert_nonnull(k);
    g_assert_cmpstr(r->device[1], ==, k->device);
    g_assert_true(r->device_ran[1] == (k->device_count > 0));
    g_assert_cmpfloat(r->p50_ns[1], ==, tsp_stat_time_p50_ns(k));
    g_assert_cmpfloat(r->host_p50_ns[1], ==, k->self_p50_ns);
    met += r->device_ran[1];
  }
  g_assert_cmpint(met, >, 3);
  tsp_stats_free(st);
  tsp_diff_free(d);
  tsp_session_free(cpu);
  tsp_session_free(sim);
}

static void test_eager(void)
{
  tsp_session *s = profile(false, 2);
  g_assert_cmpint(check_charged(s, false), >, 3);
  tsp_session_free(s);
}

static void test_graph_replayed(void)
{
  tsp_session *s = profile(true, 3);
  g_assert_cmpint(check_charged(s, true), >, 3);
  tsp_session_free(s);
}


/* A While the device runs inside the call's plan: the host walks its body
 * once per call, so its MatMul is one op event per call, and the device
 * ran it once per iteration: as many DEVICE events charged to that op
 * (its run, seq and node), one after another, after its launch (on
 * CUDA:0, as many per iteration as cuBLASLt launches kernels for it: a
 * multiple).  The calls go back to back (nothing read in between): a
 * replay submitted before the last launch ran does not take its kernels. */
static void loop_iterations_on(const char *device)
{
  ts_function *fn = ts_function_new("counted_loop", counted_loop, "x, n");
  const int counts[] = { 4, 0, 6 };
  char *stream_name = g_strdup_printf("%s stream", device);
  bool sim = strcmp(device, "SIM:0") == 0;
  tsp_session *s = tsp_session_new();
  g_assert_true(tsp_session_start(s, NULL));
  TS_DEVICE_SCOPE(ts_backend_by_name(device)) {
    for (guint k = 0; k < G_N_ELEMENTS(counts); k++) {
      ts_scope *scope = ts_scope_begin();
      ts_value args[2] = { TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(2, 4))),
                           TS_TENSOR_VALUE(ts_scalar_i32(counts[k])) };
      uint64_t t0 = tsp_call_begin(s);
      g_assert_nonnull(ts_function_call(fn, args, 2));
      tsp_call_end(s, t0, "counted_loop", TSP_MODE_GRAPH);
      ts_scope_end(scope);
    }
  }
  tsp_session_stop(s);
  assert_no_error();
  GPtrArray *matmuls = g_ptr_array_new();
  int stream = -1;
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    if (strcmp(tsp_session_thread(s, t)->name, stream_name) == 0)
      stream = t;
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));)
      if (e->kind == TSP_EVENT_OP && g_str_has_suffix(tsp_event_op_name(s, e), "MatMul"))
        g_ptr_array_add(matmuls, (gpointer)e);
  }
  g_assert_cmpint(stream, >=, 0);
  g_assert_cmpuint(matmuls->len, ==, G_N_ELEMENTS(counts)); /* one per call */
  for (guint k = 0; k < matmuls->len; k++) {
    const tsp_event *op = g_ptr_array_index(matmuls, k);
    int charged = 0;
    uint64_t last = 0;
    tsp_iter it;
    tsp_iter_init(&it, s, stream);
    for (const tsp_event *e; (e = tsp_iter_next(&it));) {
      if (e->run_id != op->run_id || e->seq != op->seq || e->op != op->op)
        continue;
      g_assert_cmpuint(e->node, ==, op->node);
      g_assert_cmpuint(e->start_ns, >=, op->start_ns);
      g_assert_cmpuint(e->start_ns, >=, last); /* the iterations in order */
      last = e->end_ns;
      charged++;
    }
    if (sim || !counts[k])
      g_assert_cmpint(charged, ==, counts[k]);
    else if (charged == 0 || charged % counts[k])
      g_error("%s: the loop's MatMul has %d kernels charged over %d iterations", device, charged,
              counts[k]);
  }
  g_ptr_array_unref(matmuls);
  g_free(stream_name);
  tsp_session_free(s);
  ts_function_free(fn);
}

static void test_loop_iterations(void)
{
  loop_iterations_on("SIM:0");
}

/* On a GPU: the loop is a conditional node of the call's CUDA Graph, its
 * body's kernels charged through the nodes of the While's body graph
 * (CUPTI's node-created and cloned callbacks for them, and their kernel
 * records naming the clones); skips without one. */
static void test_cuda_loop_iterations(void)
{
  if (!ts_backend_by_name("CUDA:0")) {
    g_test_skip(ts_backend_devices_note());
    return;
  }
  loop_iterations_on("CUDA:0");
}

/* The timeline's index has the stream as a track of its own, its spans
 * the kernels, one by one at a fine resolution. */
static void test_stream_track(void)
{
  tsp_session *s = profile(true, 2);
  int n = check_charged(s, true);
  tsp_lod *lod = tsp_lod_build(s);
  int track = -1;
  for (int t = 0; t < tsp_session_n_threads(s); t++)
    if (strcmp(tsp_session_thread(s, t)->name, "SIM:0 stream") == 0)
      track = t;
  g_assert_cmpint(track, >=, 0);
  g_assert_cmpint(tsp_lod_n_depths(lod, track), ==, 1); /* one kernel at a time */
  uint64_t from, to;
  tsp_lod_range(lod, &from, &to);
  GArray *spans = g_array_new(FALSE, FALSE, sizeof(tsp_lod_span));
  tsp_lod_query(lod, track, 0, from, to + 1, 1e-3, spans);
  g_assert_cmpuint(spans->len, ==, (guint)(n + n_transfers)); /* kernels and copies, one after another */
  for (guint i = 0; i < spans->len; i++) {
    const tsp_lod_span *sp = &g_array_index(spans, tsp_lod_span, i);
    g_assert_cmpuint(sp->count, ==, 1);
    g_assert_cmpint(sp->event->kind, ==, TSP_EVENT_DEVICE);
    g_assert_cmpint(sp->op, ==, sp->event->op);
  }
  g_array_unref(spans);
  tsp_lod_free(lod);
  tsp_session_free(s);
}

/* Serialized (as the worker sends a profile) and read back, they stay. */
static void test_serialized(void)
{
  tsp_session *s = profile(true, 2);
  int n = check_charged(s, true), transfers = n_transfers;
  GBytes *bytes = tsp_session_serialize(s);
  GError *error = NULL;
  tsp_session *back = tsp_session_deserialize(bytes, &error);
  g_assert_no_error(error);
  g_assert_cmpint(check_charged(back, true), ==, n);
  g_assert_cmpint(n_transfers, ==, transfers);
  tsp_session_free(back);
  tsp_session_free(s);
  g_bytes_unref(bytes);
}

/* Bytes copied into a device from the host, as its activity records say
 * (SIM:0 names them "host to device", CUPTI "copy host to device"). */
typedef struct uploads {
  const char *device;
  uint64_t bytes;
} uploads;

static void count_uploads(const ts_activity *records, int n, void *data)
{
  uploads *u = data;
  for (int i = 0; i < n; i++)
    if (records[i].kind == TS_ACTIVITY_COPY && !strcmp(records[i].device, u->device) &&
        strstr(records[i].name, "host to device"))
      u->bytes += records[i].bytes;
}

/* The weights live on the device they were made on: after the first call
 * (which makes them there), a call copies in its argument only, eagerly
 * and in graph mode; the reads of the variables run on the device; the
 * copies recorded say which edge crossed to the device
 * (tsp_copies_compute): on SIM:0 here, on CUDA:0 from CUPTI's records. */
static void weights_stay_on(const char *device)
{
  const ts_backend *dev = ts_backend_by_name(device);
  ts_module *m = ts_module_open("seeds");
  assert_no_error();
  ts_function *fn = ts_module_lookup(m, "sequential_model");
  ts_value x;
  g_assert_true(ts_value_parse("f32[4,28,28]:uniform", &x));
  const uint64_t arg_bytes = 4 * 28 * 28 * sizeof(float);
  uploads uploaded = { device, 0 };
  g_assert_true(ts_activity_subscribe(count_uploads, &uploaded));
  /* traced first (its variables made on the device), so that eager ops have twins */
  TS_DEVICE_SCOPE(dev) g_assert_nonnull(ts_function_get_concrete(fn, &x, 1));
  ts_activity_flush();
  uploaded.bytes = 0;
  tsp_session *s = tsp_session_new();
  g_assert_true(tsp_session_start(s, NULL));
  for (int graph = 0; graph < 2; graph++) {
    ts_run_functions_eagerly(!graph);
    TS_DEVICE_SCOPE(dev) {
      for (int i = 0; i < 3; i++) {
        ts_scope *scope = ts_scope_begin();
        g_assert_nonnull(ts_function_call(fn, &x, 1));
        ts_scope_end(scope);
        ts_activity_flush();
        if (i > 0 || graph)
          g_assert_cmpuint(uploaded.bytes, ==, arg_bytes);
        uploaded.bytes = 0;
      }
    }
  }
  ts_run_functions_eagerly(false);
  tsp_session_stop(s);
  int reads = 0;
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));)
      if (e->kind == TSP_EVENT_OP && !strcmp(tsp_event_op_name(s, e), "ReadVariableOp")) {
        g_assert_cmpstr(tsp_session_device(s, e->device), ==, device);
        reads++;
      }
  }
  g_assert_cmpint(reads, >, 0);
  /* the edges that crossed to the device: the argument into flatten, on
   * every call of both modes (a replay's copy into the plan's input too,
   * and the second graph call's, which copies it into the plan's input
   * before its capture runs flatten); no weight into a dense layer */
  GArray *copies = tsp_copies_compute(s);
  uint64_t into_flatten = 0;
  for (guint i = 0; i < copies->len; i++) {
    const tsp_copy *c = &g_array_index(copies, tsp_copy, i);
    const tsp_node_info *n = tsp_session_node(s, c->node);
    g_assert_nonnull(n);
    g_assert_false(g_str_has_prefix(n->name, "dense"));
    if (g_str_has_prefix(n->name, "flatten/")) {
      g_assert_cmpint(c->input, ==, 0);
      g_assert_cmpstr(tsp_session_device(s, c->device), ==, device);
      into_flatten += c->count;
    }
  }
  ts_schedule sched;
  g_assert_true(ts_concrete_schedule(ts_function_get_concrete(fn, &x, 1), &sched));
  if (!strcmp(device, "SIM:0"))
    g_assert_cmpint(sched.n_replays, ==, 2); /* the first graph call captures */
  g_assert_cmpuint(into_flatten, ==, 6);
  g_array_unref(copies);
  tsp_session_free(s);
  ts_activity_unsubscribe(count_uploads, &uploaded);
  assert_no_error();
  ts_value_clear(&x);
  ts_module_free(m);
}

static void test_weights_stay(void)
{
  weights_stay_on("SIM:0");
}

static void test_cuda_weights_stay(void)
{
  if (!ts_backend_by_name("CUDA:0")) {
    g_test_skip(ts_backend_devices_note());
    return;
  }
  weights_stay_on("CUDA:0");
}

/* How many times needle is in haystack. */
static int occurrences(const char *haystack, const char *needle)
{
  int n = 0;
  for (const char *p = haystack; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

/* "run:seq" of an event (owned). */
static char *run_seq(const tsp_event *e)
{
  return g_strdup_printf("%" G_GUINT64_FORMAT ":%u", e->run_id, e->seq);
}

/* Device events of s charged to an op of s (same run, same sequence). */
static int launched(const tsp_session *s)
{
  GHashTable *ops = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GPtrArray *device = g_ptr_array_new();
  for (int t = 0; t < tsp_session_n_threads(s); t++) {
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));)
      if (e->run_id && e->kind == TSP_EVENT_OP)
        g_hash_table_add(ops, run_seq(e));
      else if (e->run_id && e->kind == TSP_EVENT_DEVICE)
        g_ptr_array_add(device, (gpointer)e);
  }
  int n = 0;
  for (guint i = 0; i < device->len; i++) {
    char *key = run_seq(device->pdata[i]);
    n += g_hash_table_contains(ops, key);
    g_free(key);
  }
  g_ptr_array_unref(device);
  g_hash_table_unref(ops);
  return n;
}

/* Written as a Chrome trace (profile --out) and read back, the kernels
 * stay kernels charged to their ops (not ops of their own), so diff of two
 * such files compares the device's kernel times; each op's device work
 * has a "launch" flow from it, as Perfetto links a launch to its kernel,
 * written the same again from the session read back. */
static void test_chrome_round_trip(void)
{
  tsp_session *s = profile(true, 2);
  int n = check_charged(s, true), transfers = n_transfers;
  size_t len = 0;
  char *json = tsp_chrome_export_string(s, &len);
  int flows = launched(s);
  g_assert_cmpint(flows, >, 3);
  g_assert_cmpint(occurrences(json, "{\"name\":\"launch\",\"cat\":\"flow\",\"ph\":\"s\""), ==, flows);
  g_assert_cmpint(occurrences(json, "{\"name\":\"launch\",\"cat\":\"flow\",\"ph\":\"f\""), ==, flows);
  GError *error = NULL;
  tsp_session *back = tsp_chrome_import_data(json, len, &error);
  g_assert_no_error(error);
  g_assert_cmpint(check_charged(back, true), ==, n);
  g_assert_cmpint(n_transfers, ==, transfers);
  tsp_stats *st[2] = { tsp_stats_compute(s, TSP_BY_NODE, &TSP_FILTER_ALL),
                       tsp_stats_compute(back, TSP_BY_NODE, &TSP_FILTER_ALL) };
  uint64_t ops[2] = { 0, 0 }, kernels[2] = { 0, 0 };
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < st[k]->n; i++) {
      ops[k] += st[k]->rows[i].count;
      kernels[k] += st[k]->rows[i].device_count;
    }
  g_assert_cmpuint(ops[1], ==, ops[0]); /* the kernels did not come back as ops */
  g_assert_cmpuint(kernels[1], ==, kernels[0]);
  g_assert_cmpuint(kernels[0], >, 3);
  tsp_stats_free(st[0]);
  tsp_stats_free(st[1]);
  char *again = tsp_chrome_export_string(back, NULL);
  g_assert_cmpstr(again, ==, json);
  g_free(again);
  tsp_session_free(back);
  g_free(json);
  tsp_session_free(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/profiler-device/eager", test_eager);
  g_test_add_func("/profiler-device/graph-replayed", test_graph_replayed);
  g_test_add_func("/profiler-device/loop-iterations", test_loop_iterations);
  g_test_add_func("/profiler-device/stream-track", test_stream_track);
  g_test_add_func("/profiler-device/serialized", test_serialized);
  g_test_add_func("/profiler-device/weights-stay", test_weights_stay);
  g_test_add_func("/profiler-device/stats-device-time", test_stats_device_time);
  g_test_add_func("/profiler-device/cpu-against-device", test_cpu_against_device);
  g_test_add_func("/profiler-device/stats-window-kernels", test_stats_window_kernels);
  g_test_add_func("/profiler-device/cuda-kernels-charged", test_cuda_kernels_charged);
  g_test_add_func("/profiler-device/cuda-kernels-charged-after-calls",
                  test_cuda_kernels_charged_after_calls);
  g_test_add_func("/profiler-device/cuda-weights-stay", test_cuda_weights_stay);
  g_test_add_func("/profiler-device/cuda-loop-iterations", test_cuda_loop_iterations);
  g_test_add_func("/profiler-device/chrome-round-trip", test_chrome_round_trip);
  return g_test_run();
}
