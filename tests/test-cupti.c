/* test-cupti.c — CUPTI's activity records made into the engine's device
 * activity (engine/backend/cuda/cupti_records.c), without a GPU: activity
 * buffers laid out as CUPTI fills them, read through the real CUPTI's
 * cuptiActivityGetNextRecord (loaded as the backend loads it), then
 * correlated to ops as the profiler needs: eager kernels through the
 * external correlation id pushed around their launch, kernels replayed
 * from a CUDA Graph through their graph node; copies charged to their op
 * and to the input they carried (operand) as SIM:0's copies are. */
#include <glib.h>
#include <string.h>

#include "backend/cuda/cupti.h"

/* An activity buffer being filled, records back to back as CUPTI lays them. */
typedef struct {
  uint8_t *data;
  size_t used, size;
} buffer;

static void buffer_init(buffer *b)
{
  b->size = 1 << 16;
  b->data = g_malloc0(b->size);
  b->used = 0;
}

static void *put(buffer *b, size_t size, CUpti_ActivityKind kind)
{
  g_assert_cmpuint(b->used + size, <=, b->size);
  CUpti_Activity *a = (CUpti_Activity *)(b->data + b->used);
  a->kind = kind;
  b->used += size;
  return a;
}

static void put_kernel(buffer *b, const char *name, uint32_t corr, uint64_t node, uint64_t start,
                       uint64_t end)
{
  CUpti_ActivityKernel10 *k = put(b, sizeof *k, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k->name = name;
  k->correlationId = corr;
  k->graphNodeId = node;
  k->streamId = 7;
  k->start = start;
  k->end = end;
}

static void put_external_kind(buffer *b, CUpti_ExternalCorrelationKind kind, uint32_t corr,
                              uint64_t ours)
{
  CUpti_ActivityExternalCorrelation *e =
    put(b, sizeof *e, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  e->externalKind = kind;
  e->correlationId = corr;
  e->externalId = ours;
}

/* The op's id, pushed around its launches and copies. */
static void put_external(buffer *b, uint32_t corr, uint64_t ours)
{
  put_external_kind(b, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, corr, ours);
}

static void put_copy(buffer *b, uint8_t copy_kind, uint32_t corr, uint64_t node, uint64_t bytes)
{
  CUpti_ActivityMemcpy6 *c = put(b, sizeof *c, CUPTI_ACTIVITY_KIND_MEMCPY);
  c->copyKind = copy_kind;
  c->correlationId = corr;
  c->graphNodeId = node;
  c->bytes = bytes;
  c->streamId = 7;
  c->start = 5;
  c->end = 6;
}

static const ts_cupti_api *cupti_or_skip(void)
{
  const char *why = NULL;
  const ts_cupti_api *api = ts__cupti_load(&why);
  if (!api)
    g_test_skip(why);
  return api;
}

static int add(ts_cupti_records *r, const ts_cupti_api *api, buffer *b)
{
  return ts__cupti_records_add(r, api->ActivityGetNextRecord, b->data, b->used);
}

/* Eager: each kernel is charged to the op whose id was pushed around its
 * launch, whichever buffer brings the external correlation record. */
static void test_eager_correlation(void)
{
  const ts_cupti_api *api = cupti_or_skip();
  if (!api)
    return;
  ts_cupti_records r;
  ts__cupti_records_init(&r, "CUDA:0");
  buffer one, two;
  buffer_init(&one);
  buffer_init(&two);
  put_external(&one, 11, 1001);
  put_kernel(&one, "matmul_kernel", 11, 0, 100, 250);
  put_kernel(&one, "relu_kernel", 12, 0, 260, 300); /* its external record comes later */
  put_kernel(&one, "stray_kernel", 13, 0, 310, 320); /* no op pushed around it */
  put_external(&two, 12, 1002);
  g_assert_cmpint(add(&r, api, &one), ==, 4);
  g_assert_cmpint(add(&r, api, &two), ==, 1);

  const ts_activity *a;
  int n = ts__cupti_records_take(&r, &a);
  g_assert_cmpint(n, ==, 3);
  g_assert_cmpint(a[0].kind, ==, TS_ACTIVITY_KERNEL);
  g_assert_cmpstr(a[0].device, ==, "CUDA:0");
  g_assert_cmpstr(a[0].name, ==, "matmul_kernel");
  g_assert_cmpuint(a[0].correlation, ==, 1001);
  g_assert_cmpuint(a[0].start_ns, ==, 100);
  g_assert_cmpuint(a[0].end_ns, ==, 250);
  g_assert_cmpuint(a[0].stream, ==, 7);
  g_assert_cmpuint(a[0].graph_node, ==, 0);
  g_assert_cmpuint(a[1].correlation, ==, 1002);
  g_assert_cmpuint(a[2].correlation, ==, 0); /* never CUPTI's own id */
  /* taken once */
  g_assert_cmpint(ts__cupti_records_take(&r, &a), ==, 0);
  g_free(one.data);
  g_free(two.data);
  ts__cupti_records_clear(&r);
}

/* A CUDA Graph replay: its kernels carry the graph launch's correlation
 * and their node ids, which the capture tied to ops. */
static void test_graph_replay(void)
{
  const ts_cupti_api *api = cupti_or_skip();
  if (!api)
    return;
  ts_cupti_records r;
  ts__cupti_records_init(&r, "CUDA:0");
  buffer b;
  buffer_init(&b);
  put_kernel(&b, "gemm", 40, 9001, 1000, 1100);
  put_kernel(&b, "bias_relu", 40, 9002, 1100, 1120);
  put_external(&b, 40, 555); /* the plan launch's id, pushed around cudaGraphLaunch */
  g_assert_cmpint(add(&r, api, &b), ==, 3);
  const ts_activity *a;
  g_assert_cmpint(ts__cupti_records_take(&r, &a), ==, 2);
  g_assert_cmpuint(a[0].graph_node, ==, 9001);
  g_assert_cmpuint(a[1].graph_node, ==, 9002);
  g_assert_cmpuint(a[0].correlation, ==, 555);
  g_assert_cmpuint(a[1].correlation, ==, 555);
  g_free(b.data);
  ts__cupti_records_clear(&r);
}

/* Copies, memsets and synchronizations, with their bytes and names;
 * kinds that are not device activity are counted, not passed on. */
static void test_copies_memsets_syncs(void)
{
  const ts_cupti_api *api = cupti_or_skip();
  if (!api)
    return;
  ts_cupti_records r;
  ts__cupti_records_init(&r, "CUDA:0");
  buffer b;
  buffer_init(&b);
  CUpti_ActivityMemcpy6 *c = put(&b, sizeof *c, CUPTI_ACTIVITY_KIND_MEMCPY);
  c->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  c->bytes = 4096;
  c->correlationId = 3;
  c->streamId = 2;
  c->start = 10;
  c->end = 20;
  CUpti_ActivityMemset4 *m = put(&b, sizeof *m, CUPTI_ACTIVITY_KIND_MEMSET);
  m->bytes = 512;
  m->correlationId = 4;
  m->start = 30;
  m->end = 31;
  CUpti_ActivitySynchronization2 *s = put(&b, sizeof *s, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  s->correlationId = 5;
  s->streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  s->start = 40;
  s->end = 90;
  CUpti_ActivityAPI *api_rec = put(&b, sizeof *api_rec, CUPTI_ACTIVITY_KIND_RUNTIME);
  api_rec->correlationId = 3;
  put_external(&b, 3, 77);
  g_assert_cmpint(add(&r, api, &b), ==, 5);
  /* the runtime API record: there only for its external correlation,
   * read and left out, not counted among the unknown kinds */
  g_assert_cmpuint(r.unknown, ==, 0);

  const ts_activity *a;
  g_assert_cmpint(ts__cupti_records_take(&r, &a), ==, 3);
  g_assert_cmpint(a[0].kind, ==, TS_ACTIVITY_COPY);
  g_assert_cmpstr(a[0].name, ==, "copy host to device");
  g_assert_cmpuint(a[0].bytes, ==, 4096);
  g_assert_cmpuint(a[0].stream, ==, 2);
  g_assert_cmpuint(a[0].correlation, ==, 77);
  g_assert_cmpint(a[1].kind, ==, TS_ACTIVITY_MEMSET);
  g_assert_cmpuint(a[1].bytes, ==, 512);
  g_assert_cmpint(a[2].kind, ==, TS_ACTIVITY_SYNC);
  g_assert_cmpuint(a[2].stream, ==, 0);
  g_assert_cmpuint(a[2].end_ns - a[2].start_ns, ==, 50);
  g_free(b.data);
  ts__cupti_records_clear(&r);
}

/* Copies issued for an op: charged to it through the op's id pushed
 * around them, and to the input they carried through the operand pushed
 * beside it (TS_CUPTI_OPERAND_KIND), whichever buffer brings those
 * records; a copy that carried no input (a result read by the host, a
 * variable's storage) says 0, and so do kernels, whatever else their
 * launch carried. */
static void test_copies_carry_operand(void)
{
  const ts_cupti_api *api = cupti_or_skip();
  if (!api)
    return;
  ts_cupti_records r;
  ts__cupti_records_init(&r, "CUDA:0");
  buffer one, two;
  buffer_init(&one);
  buffer_init(&two);
  put_external(&one, 21, 3001);
  put_external_kind(&one, TS_CUPTI_OPERAND_KIND, 21, 2); /* MatMul's input 1 */
  put_copy(&one, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 21, 0, 256);
  put_copy(&one, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 22, 0, 256); /* its records come later */
  put_copy(&one, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 23, 0, 64);
  put_external(&one, 23, 3002); /* Print's read of the product: the op's, no input's */
  put_external(&one, 24, 3001);
  put_external_kind(&one, TS_CUPTI_OPERAND_KIND, 24, 9); /* never a kernel's */
  put_kernel(&one, "gemm", 24, 0, 10, 20);
  put_external(&two, 22, 3001);
  put_external_kind(&two, TS_CUPTI_OPERAND_KIND, 22, 1);
  g_assert_cmpint(add(&r, api, &one), ==, 9);
  g_assert_cmpint(add(&r, api, &two), ==, 2);

  const ts_activity *a;
  g_assert_cmpint(ts__cupti_records_take(&r, &a), ==, 4);
  g_assert_cmpint(a[0].kind, ==, TS_ACTIVITY_COPY);
  g_assert_cmpstr(a[0].name, ==, "copy host to device");
  g_assert_cmpuint(a[0].correlation, ==, 3001);
  g_assert_cmpuint(a[0].operand, ==, 2);
  g_assert_cmpuint(a[0].bytes, ==, 256);
  g_assert_cmpuint(a[1].correlation, ==, 3001);
  g_assert_cmpuint(a[1].operand, ==, 1);
  g_assert_cmpstr(a[2].name, ==, "copy device to host");
  g_assert_cmpuint(a[2].correlation, ==, 3002);
  g_assert_cmpuint(a[2].operand, ==, 0);
  g_assert_cmpint(a[3].kind, ==, TS_ACTIVITY_KERNEL);
  g_assert_cmpuint(a[3].correlation, ==, 3001);
  g_assert_cmpuint(a[3].operand, ==, 0);
  /* the operands were this stretch's: a later record with a reused id has none */
  two.used = 0;
  put_copy(&two, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 21, 0, 8);
  g_assert_cmpint(add(&r, api, &two), ==, 1);
  g_assert_cmpint(ts__cupti_records_take(&r, &a), ==, 1);
  g_assert_cmpuint(a[0].correlation, ==, 0);
  g_assert_cmpuint(a[0].operand, ==, 0);
  g_free(one.data);
  g_free(two.data);
  ts__cupti_records_clear(&r);
}

/* Three launches of one updated exec: the same node ids stand for other
 * ops and carry other inputs in each (the third none).  A take puts each
 * launch's node records just before its first replayed record, so a
 * consumer charging nodes in order charges each replay to its own
 * launch's ops, and a replayed copy's operand is the one its launch
 * recorded for the node. */
static void test_launches_of_one_exec(void)
{
  const ts_cupti_api *api = cupti_or_skip();
  if (!api)
    return;
  ts_cupti_records r;
  ts__cupti_records_init(&r, "CUDA:0");
  uint64_t launch[3];
  for (int k = 0; k < 3; k++) {
    ts_activity nodes[3];
    for (int i = 0; i < 3; i++)
      nodes[i] = (ts_activity){ .kind = TS_ACTIVITY_GRAPH_NODE, .device = "CUDA:0",
                                .graph_node = 9100 + (uint64_t)i, .correlation = 100 * (k + 1) + i };
    const uint32_t operands[3][3] = { { 3, 0, 0 }, { 0, 1, 0 }, { 0, 0, 0 } };
    launch[k] = ts__cupti_records_launch(&r, nodes, operands[k], 3);
    g_assert_true(launch[k] & TS_CUPTI_LAUNCH_BIT);
  }
  g_assert_cmpuint(launch[0], !=, launch[1]);
  g_assert_cmpuint(launch[1], !=, launch[2]);
  buffer b;
  buffer_init(&b);
  for (int k = 0; k < 3; k++) { /* CUPTI's ids 40, 41, 42 for the cudaGraphLaunch calls */
    put_copy(&b, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 40 + k, 9100, 4);
    put_copy(&b, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 40 + k, 9101, 640);
    put_kernel(&b, "adam", 40 + k, 9102, 30 + 20 * k, 40 + 20 * k);
    put_external(&b, 40 + k, launch[k]);
  }
  g_assert_cmpint(add(&r, api, &b), ==, 12);
  const ts_activity *a;
  g_assert_cmpint(ts__cupti_records_take(&r, &a), ==, 18);
  for (int k = 0; k < 3; k++) {
    const ts_activity *n = a + 6 * k, *rec = n + 3;
    for (int i = 0; i < 3; i++) {
      g_assert_cmpint(n[i].kind, ==, TS_ACTIVITY_GRAPH_NODE);
      g_assert_cmpuint(n[i].graph_node, ==, 9100 + (uint64_t)i);
      g_assert_cmpuint(n[i].correlation, ==, 100 * (k + 1) + (uint64_t)i);
      g_assert_cmpuint(rec[i].graph_node, ==, 9100 + (uint64_t)i);
      g_assert_cmpuint(rec[i].correlation, ==, launch[k]);
    }
    g_assert_cmpint(rec[0].kind, ==, TS_ACTIVITY_COPY);
    g_assert_cmpint(rec[2].kind, ==, TS_ACTIVITY_KERNEL);
    g_assert_cmpuint(rec[0].operand, ==, k == 0 ? 3 : 0);
    g_assert_cmpuint(rec[1].operand, ==, k == 1 ? 1 : 0); /* the third carries none */
    g_assert_cmpuint(rec[2].operand, ==, 0);
  }
  /* both launches are done with: a stray record of one later has no nodes */
  b.used = 0;
  put_kernel(&b, "adam", 41, 9102, 90, 95);
  put_external(&b, 41, launch[1]);
  g_assert_cmpint(add(&r, api, &b), ==, 2);
  g_assert_cmpint(ts__cupti_records_take(&r, &a), ==, 1);
  g_assert_cmpint(a[0].kind, ==, TS_ACTIVITY_KERNEL);
  g_free(b.data);
  ts__cupti_records_clear(&r);
}

/* An empty or unfilled buffer reads as nothing. */
static void test_empty_buffer(void)
{
  const ts_cupti_api *api = cupti_or_skip();
  if (!api)
    return;
  ts_cupti_records r;
  ts__cupti_records_init(&r, "CUDA:0");
  buffer b;
  buffer_init(&b);
  g_assert_cmpint(add(&r, api, &b), ==, 0);
  const ts_activity *a;
  g_assert_cmpint(ts__cupti_records_take(&r, &a), ==, 0);
  g_free(b.data);
  ts__cupti_records_clear(&r);
}

/* A CUPTI that cannot be found is a message, never a crash. */
static void test_missing_cupti(void)
{
  if (g_test_subprocess()) {
    g_setenv("TRACESCOPE_CUPTI", "/no/such/libcupti.so", TRUE);
    const char *why = NULL;
    g_assert_null(ts__cupti_load(&why));
    g_assert_nonnull(strstr(why, "CUPTI not found"));
    g_assert_nonnull(strstr(why, "device times are off"));
    return;
  }
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed();
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cupti/eager-correlation", test_eager_correlation);
  g_test_add_func("/cupti/graph-replay", test_graph_replay);
  g_test_add_func("/cupti/copies-memsets-syncs", test_copies_memsets_syncs);
  g_test_add_func("/cupti/copies-carry-operand", test_copies_carry_operand);
  g_test_add_func("/cupti/launches-of-one-exec", test_launches_of_one_exec);
  g_test_add_func("/cupti/empty-buffer", test_empty_buffer);
  g_test_add_func("/cupti/missing", test_missing_cupti);
  return g_test_run();
}
