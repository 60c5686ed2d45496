/* test-worker-messages.c — the app's readers of a worker's messages
 * (ts-worker-messages.h, ts-output-lines.h, ts-worker-optimized.h) on
 * messages a misbehaving worker could send: each is an error or a bounded
 * value, never a read past what was sent or a GLib critical.
 *
 *   test-worker-messages --write-seeds DIR   writes the fuzz corpus seeds
 *                                            (fuzz/corpus/fuzz-worker-messages) */
#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../fuzz/fuzz-worker-messages.h"
#include "../fuzz/fuzz-worker-requests.h"
#include "ts-remote-link.h"
#include "ts-worker-protocol.h"
#include "ts-fast-channel.h"
#include "ts-output-lines.h"
#include "ts-worker-messages.h"
#include "ts-worker-optimized.h"
#include "ts-worker-origins.h"
#include "ts-worker-tensor.h"

/* ---- the status page ------------------------------------------------------------------ */

/* A worker that scribbled on its status page leaves fields without their
 * NUL: each is read to its own end.  The page here ends where a page
 * nobody may read begins (was: g_strlcpy ran through the next fields and
 * on past the page, a segfault here). */
static void test_status_fields_without_nul(void)
{
  gsize page = (gsize)sysconf(_SC_PAGESIZE);
  guint8 *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  g_assert_true(map != MAP_FAILED);
  g_assert_cmpint(mprotect(map + page, page, PROT_NONE), ==, 0);
  TsWorkerStatus *st = (TsWorkerStatus *)(map + page - sizeof *st);
  memset(st, 'x', sizeof *st);
  st->magic = TS_WORKER_STATUS_MAGIC;
  st->call_id = 3;
  st->exited = 0;
  TsWorkerDeath d = { 0 };
  ts_worker_read_status(st, &d);
  g_autofree char *op = g_strnfill(sizeof st->op, 'x');
  g_autofree char *node = g_strnfill(sizeof st->node, 'x');
  g_autofree char *loc = g_strnfill(sizeof st->loc, 'x');
  g_autofree char *want = g_strdup_printf("%s (%s) at %s", op, node, loc);
  g_assert_cmpstr(d.last_op, ==, want);
  g_assert_cmpuint(d.call_id, ==, 3);
  g_free(d.last_op);
  munmap(map, 2 * page);
}

/* Bytes that are not UTF-8 come out as UTF-8 (the app shows them in labels). */
static void test_status_not_utf8(void)
{
  TsWorkerStatus st = { .magic = TS_WORKER_STATUS_MAGIC, .call_id = 1 };
  memcpy(st.op, "Mat\xffMul", 7);
  TsWorkerDeath d = { 0 };
  ts_worker_read_status(&st, &d);
  g_assert_true(g_utf8_validate(d.last_op, -1, NULL));
  g_assert_true(g_str_has_prefix(d.last_op, "Mat"));
  g_free(d.last_op);
}

/* ---- replies naming fds ----------------------------------------------------------------- */

/* A memfd of size bytes, sealed against shrinking when `sealed`. */
static GUnixFDList *memfd_list(gsize size, gboolean sealed)
{
  int fd = memfd_create("test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  g_assert_cmpint(ftruncate(fd, (off_t)size), ==, 0);
  if (sealed)
    g_assert_cmpint(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), ==, 0);
  return g_unix_fd_list_new_from_array(&fd, 1);
}

static GUnixFDList *one_memfd(gsize size)
{
  return memfd_list(size, TRUE);
}

/* Bytes in an fd that could shrink under the mapping (an unsealed memfd,
 * a pipe) are refused, naming what they were (a worker's ftruncate would
 * raise SIGBUS in the app); sealed ones map, as the worker's copies and
 * its fast channel (sealed where they are made) do. */
static void test_map_fd_needs_seal(void)
{
  g_autoptr(GUnixFDList) unsealed = memfd_list(4096, FALSE);
  g_autoptr(GError) error = NULL;
  g_assert_null(ts_worker_map_fd(unsealed, 0, 0, 4096, "a Call result", &error));
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL);
  g_assert_nonnull(strstr(error->message, "a Call result is in an fd that can shrink (no F_SEAL_SHRINK)"));
  g_clear_error(&error);

  int p[2];
  g_assert_cmpint(pipe(p), ==, 0);
  close(p[1]);
  g_autoptr(GUnixFDList) pipe_list = g_unix_fd_list_new_from_array(p, 1);
  g_assert_null(ts_worker_map_fd(pipe_list, 0, 0, 1, "a profile", &error));
  g_assert_nonnull(strstr(error->message, "a profile is in an fd that can shrink (not a sealable memfd)"));
  g_clear_error(&error);

  int fast_fd = memfd_create("fast", MFD_CLOEXEC);
  g_assert_cmpint(ftruncate(fast_fd, (off_t)ts_fast_channel_size()), ==, 0);
  g_assert_null(ts_fast_channel_map(fast_fd, &error));
  g_assert_nonnull(strstr(error->message, "the fast call channel is in an fd that can shrink"));
  g_clear_error(&error);
  close(fast_fd);

  g_autoptr(GUnixFDList) sealed = one_memfd(4096);
  g_autoptr(GBytes) bytes = ts_worker_map_fd(sealed, 0, 100, 200, "a Call result", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(g_bytes_get_size(bytes), ==, 200);

  /* what the worker makes is sealed */
  guint8 data[5000] = { 7 };
  int copy = ts_worker_memfd_copy(data, sizeof data, &error);
  g_assert_no_error(error);
  g_assert_true(fcntl(copy, F_GET_SEALS) & F_SEAL_SHRINK);
  close(copy);
  int channel_fd;
  TsFastHeader *h = ts_fast_channel_create(&channel_fd, &error);
  g_assert_no_error(error);
  g_assert_true(fcntl(channel_fd, F_GET_SEALS) & F_SEAL_SHRINK);
  TsFastHeader *mapped = ts_fast_channel_map(channel_fd, &error);
  g_assert_no_error(error);
  ts_fast_channel_unmap(mapped);
  ts_fast_channel_unmap(h);
  close(channel_fd);
}

static ts_tensor *traced_body(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0);
  return ts_add(ts_mul(x, x), ts_tanh(x));
}

static ts_function *traced_function(void)
{
  ts_function *fn = ts_function_new("traced", traced_body, "x");
  ts_value arg = TS_SPEC_VALUE(TS_F32, TS_SHAPE(2));
  g_assert_nonnull(ts_function_get_concrete(fn, &arg, 1));
  return fn;
}

static GVariant *optimized_reply(const ts_graph *g, const ts_graph *traced, const char *fd_key, gint32 index,
                                 guint64 size)
{
  GVariantDict d;
  g_variant_dict_init(&d, NULL);
  if (fd_key) {
    g_variant_dict_insert(&d, fd_key, "h", index);
    g_variant_dict_insert(&d, "graph-size", "t", size);
  } else {
    size_t n;
    void *bytes = ts_graph_serialize(g, &n);
    g_variant_dict_insert_value(&d, "graph", g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, bytes, n, 1));
    free(bytes);
  }
  g_variant_dict_insert_value(&d, "origins", ts_worker_origins_to_variant(g, traced));
  g_variant_dict_insert(&d, "pass-summary", "s", "");
  g_variant_dict_insert(&d, "traced-nodes", "u", (guint32)ts_worker_origins_n_places(traced));
  return g_variant_ref_sink(g_variant_new("(@a{sv})", g_variant_dict_end(&d)));
}

/* GetOptimized's graph in an fd the reply did not pass: an error (was a
 * GLib critical from g_unix_fd_list_get and no error, which the async
 * reply then returned as a NULL error). */
static void test_optimized_fd_out_of_list(void)
{
  ts_function *fn = traced_function();
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
  g_autoptr(GUnixFDList) fds = one_memfd(4096);
  const gint32 indices[] = { 1, 7, -1 };
  for (guint i = 0; i < G_N_ELEMENTS(indices); i++) {
    g_autoptr(GVariant) reply = optimized_reply(g, g, "graph-fd", indices[i], 64);
    g_autoptr(GError) error = NULL;
    g_assert_null(ts_worker_optimized_read(reply, fds, g, &error));
    g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL);
    g_test_message("%s", error->message);
  }
  /* and the reply as the worker sends it reads */
  g_autoptr(GVariant) good = optimized_reply(g, g, NULL, 0, 0);
  g_autoptr(GError) error = NULL;
  TsWorkerOptimized *o = ts_worker_optimized_read(good, NULL, g, &error);
  g_assert_no_error(error);
  g_assert_nonnull(o->graph);
  ts_worker_optimized_free(o);
  ts_function_free(fn);
}

/* A Call result whose profile is past the fd's end: an error, not a mapping. */
static void test_result_profile_past_fd(void)
{
  g_autoptr(GUnixFDList) fds = one_memfd(100);
  GVariantDict d;
  g_variant_dict_init(&d, NULL);
  g_variant_dict_insert(&d, "value-text", "s", "1");
  g_variant_dict_insert(&d, "profile-fd", "h", 0);
  g_variant_dict_insert(&d, "profile-size", "t", (guint64)4096);
  g_autoptr(GVariant) reply = g_variant_ref_sink(g_variant_new("(@a{sv})", g_variant_dict_end(&d)));
  g_autoptr(GError) error = NULL;
  g_assert_null(ts_worker_read_result(reply, fds, 1, &error));
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL);
}

/* A Call result's tuple: one entry, an entry without its texts, or values
 * whose bytes are not what dtype and shape say are protocol errors. */
static void test_result_bad_tuples(void)
{
  for (int c = 0; c < 3; c++) {
    GVariantBuilder items;
    g_variant_builder_init(&items, G_VARIANT_TYPE("aa{sv}"));
    for (int i = 0; i < (c == 0 ? 1 : 2); i++) {
      GVariantDict item;
      g_variant_dict_init(&item, NULL);
      if (c != 1 || i == 0)
        g_variant_dict_insert(&item, "value-text", "s", "1");
      g_variant_dict_insert(&item, "shape-text", "s", "f32[]");
      if (c == 2) {
        g_variant_dict_insert(&item, "dtype", "s", "float32");
        g_variant_dict_insert_value(&item, "shape", g_variant_new_fixed_array(G_VARIANT_TYPE_INT64,
                                                                              NULL, 0, sizeof(gint64)));
        g_variant_dict_insert_value(&item, "data", g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE,
                                                                             "ab", 2, 1));
      }
      g_variant_builder_add_value(&items, g_variant_dict_end(&item));
    }
    GVariantDict d;
    g_variant_dict_init(&d, NULL);
    g_variant_dict_insert(&d, "value-text", "s", "(1, 1)");
    g_variant_dict_insert_value(&d, "results", g_variant_builder_end(&items));
    g_autoptr(GVariant) reply = g_variant_ref_sink(g_variant_new("(@a{sv})", g_variant_dict_end(&d)));
    g_autoptr(GError) error = NULL;
    g_assert_null(ts_worker_read_result(reply, NULL, 1, &error));
    g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL);
    const char *want[] = { "with 1 results (a tuple holds 2 to 64)",
                           "result 1 of a Call without value-text", "result 0 of a Call" };
    if (!strstr(error->message, want[c]))
      g_error("case %d: '%s' lacks '%s'", c, error->message, want[c]);
  }
}

/* ---- fast replies --------------------------------------------------------------------- */

static GVariant *fast_reply(guint32 call_id, guint32 status, const char *name, const char *message,
                            GVariant *result)
{
  return g_variant_ref_sink(g_variant_new("(uuuss@a{sv})", call_id, 0u, status, name, message,
                                          result ? result : g_variant_new("a{sv}", NULL)));
}

static void test_fast_reply(void)
{
  TsFastAnswer a;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) other_call = fast_reply(8, TS_FAST_OK, "", "", NULL);
  g_assert_false(ts_worker_read_fast_reply(other_call, 7, &a, &error));
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL);
  g_clear_error(&error);
  g_autoptr(GVariant) bad_status = fast_reply(7, 99, "", "", NULL);
  g_assert_false(ts_worker_read_fast_reply(bad_status, 7, &a, &error));
  g_assert_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL);
  g_clear_error(&error);
  /* a result without value-text: the call's error, the channel stays */
  g_autoptr(GVariant) bad_result = fast_reply(7, TS_FAST_OK, "", "", NULL);
  g_assert_true(ts_worker_read_fast_reply(bad_result, 7, &a, &error));
  g_assert_null(a.result);
  g_assert_error(a.error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL);
  g_clear_error(&a.error);
  /* an error by any name */
  g_autoptr(GVariant) call_error = fast_reply(7, TS_FAST_ERROR, "not.a valid name", "it failed", NULL);
  g_assert_true(ts_worker_read_fast_reply(call_error, 7, &a, &error));
  g_assert_nonnull(a.error);
  g_assert_nonnull(strstr(a.error->message, "it failed"));
  g_clear_error(&a.error);
}

/* ---- output lines --------------------------------------------------------------------- */

typedef struct {
  GPtrArray *lines;
  GArray *cuts;
  GArray *marks;
} Collected;

static void collect_line(gpointer data, const char *text, gsize len, gsize cut)
{
  Collected *c = data;
  g_ptr_array_add(c->lines, g_strndup(text, len));
  g_array_append_val(c->cuts, cut);
}

static void collect_mark(gpointer data, guint call_id)
{
  Collected *c = data;
  g_array_append_val(c->marks, call_id);
}

static const TsOutputLinesFuncs collect = { collect_line, collect_mark };

static Collected *collected_new(void)
{
  Collected *c = g_new0(Collected, 1);
  c->lines = g_ptr_array_new_with_free_func(g_free);
  c->cuts = g_array_new(FALSE, FALSE, sizeof(gsize));
  c->marks = g_array_new(FALSE, FALSE, sizeof(guint));
  return c;
}

static void collected_free(Collected *c)
{
  g_ptr_array_unref(c->lines);
  g_array_unref(c->cuts);
  g_array_unref(c->marks);
  g_free(c);
}

/* Lines, marks after text printed without a newline, and a line longer
 * than the cap fed a byte at a time up to its mark: kept to the cap, the
 * rest counted, the mark still found. */
static void test_output_lines(void)
{
  Collected *c = collected_new();
  TsOutputLines *lines = ts_output_lines_new(&collect, c);
  const char *text = "one\ntwo" TS_WORKER_MARK "4 end\n" TS_WORKER_MARK "5 end\nlast";
  for (const char *p = text; *p; p++)
    ts_output_lines_feed(lines, p, 1);
  gsize long_len = 3 * TS_OUTPUT_LINE_MAX;
  g_autofree char *long_line = g_strnfill(long_len, 'y');
  ts_output_lines_feed(lines, "\n", 1);
  for (gsize at = 0; at < long_len; at += 1000)
    ts_output_lines_feed(lines, long_line + at, MIN(1000, long_len - at));
  const char *mark = TS_WORKER_MARK "6 end\n";
  ts_output_lines_feed(lines, mark, strlen(mark));
  ts_output_lines_feed(lines, "tail", 4);
  ts_output_lines_end(lines);
  ts_output_lines_free(lines);

  g_assert_cmpuint(c->lines->len, ==, 5);
  g_assert_cmpstr(c->lines->pdata[0], ==, "one");
  g_assert_cmpstr(c->lines->pdata[1], ==, "two");
  g_assert_cmpstr(c->lines->pdata[2], ==, "last");
  g_assert_cmpuint(strlen(c->lines->pdata[3]), ==, TS_OUTPUT_LINE_MAX);
  g_assert_cmpuint(g_array_index(c->cuts, gsize, 3), ==, long_len - TS_OUTPUT_LINE_MAX);
  g_assert_cmpstr(c->lines->pdata[4], ==, "tail");
  g_assert_cmpuint(c->marks->len, ==, 3);
  g_assert_cmpuint(g_array_index(c->marks, guint, 0), ==, 4);
  g_assert_cmpuint(g_array_index(c->marks, guint, 1), ==, 5);
  g_assert_cmpuint(g_array_index(c->marks, guint, 2), ==, 6);
  collected_free(c);
}

/* A mark is digits and " end": no sign, space or overflow (sscanf's %u
 * took "-1", " 7" and wrapped numbers past 2^32). */
static void test_mark_parse(void)
{
  guint id = 0;
  g_assert_true(ts_output_mark_parse("12 end", 6, &id));
  g_assert_cmpuint(id, ==, 12);
  const char *bad[] = { "-1 end", " 7 end", "99999999999 end", "7end", "7 en", "", "x end" };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++)
    g_assert_false(ts_output_mark_parse(bad[i], strlen(bad[i]), &id));
  /* the length given, not the NUL */
  g_assert_false(ts_output_mark_parse("7 end", 4, &id));
}

/* ---- seeds for fuzz-worker-messages --------------------------------------------------- */

static void put(const char *dir, const char *name, guint kind, const void *bytes, gsize size)
{
  g_autofree char *path = g_strdup_printf("%s/seed-%s", dir, name);
  g_autoptr(GByteArray) a = g_byte_array_new();
  guint8 k = (guint8)kind;
  g_byte_array_append(a, &k, 1);
  g_byte_array_append(a, bytes, (guint)size);
  g_autoptr(GError) error = NULL;
  if (!g_file_set_contents(path, (const char *)a->data, a->len, &error))
    g_error("%s", error->message);
}

static void put_variant(const char *dir, const char *name, guint kind, GVariant *v)
{
  g_variant_ref_sink(v);
  put(dir, name, kind, g_variant_get_data(v), g_variant_get_size(v));
  g_variant_unref(v);
}

/* The area's bytes: the length, then the message. */
static void put_fast(const char *dir, const char *name, FuzzMessage kind, GVariant *v)
{
  g_variant_ref_sink(v);
  guint64 length = g_variant_get_size(v);
  g_autoptr(GByteArray) a = g_byte_array_new();
  g_byte_array_append(a, (const guint8 *)&length, sizeof length);
  g_byte_array_append(a, g_variant_get_data(v), (guint)length);
  put(dir, name, kind, a->data, a->len);
  g_variant_unref(v);
}

static GVariant *result_dict(gboolean with_fd)
{
  GVariantDict d;
  g_variant_dict_init(&d, NULL);
  g_variant_dict_insert(&d, "value-text", "s", "[1. 2.]");
  g_variant_dict_insert(&d, "shape-text", "s", "f32[2]");
  g_variant_dict_insert(&d, "n-calls", "u", 1u);
  g_variant_dict_insert(&d, "dtype", "s", "float32");
  const gint64 dims[] = { 2 };
  g_variant_dict_insert_value(&d, "shape", g_variant_new_fixed_array(G_VARIANT_TYPE_INT64, dims, 1, sizeof(gint64)));
  const float values[] = { 1, 2 };
  if (with_fd) {
    g_variant_dict_insert(&d, "data-fd", "h", 0);
    g_variant_dict_insert(&d, "data-offset", "t", (guint64)8);
    g_variant_dict_insert(&d, "data-size", "t", (guint64)sizeof values);
    g_variant_dict_insert(&d, "profile-fd", "h", 0);
    g_variant_dict_insert(&d, "profile-size", "t", (guint64)16);
  } else {
    g_variant_dict_insert_value(&d, "data", g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, values, sizeof values, 1));
  }
  return g_variant_dict_end(&d);
}

static GVariant *op_dict(void)
{
  GVariantDict d;
  g_variant_dict_init(&d, NULL);
  g_variant_dict_insert(&d, "seq", "t", (guint64)3);
  g_variant_dict_insert(&d, "op", "s", "MatMul");
  g_variant_dict_insert(&d, "file", "s", "model.c");
  g_variant_dict_insert(&d, "line", "i", 42);
  g_variant_dict_insert(&d, "node", "s", "dense/MatMul");
  g_variant_dict_insert_value(&d, "frames", g_variant_new_parsed("[('dense', 'model.c', 40), ('TS_IF', '', 0)]"));
  GVariant *t = result_dict(FALSE);
  g_variant_dict_insert_value(&d, "inputs", g_variant_new_array(NULL, &t, 1));
  g_variant_dict_insert_value(&d, "outputs", g_variant_new_array(G_VARIANT_TYPE_VARDICT, NULL, 0));
  return g_variant_dict_end(&d);
}

static int write_seeds(const char *dir)
{
  g_mkdir_with_parents(dir, 0755);
  put_variant(dir, "call-inline", FUZZ_MSG_CALL_REPLY, g_variant_new("(@a{sv})", result_dict(FALSE)));
  put_variant(dir, "call-fd", FUZZ_MSG_CALL_REPLY, g_variant_new("(@a{sv})", result_dict(TRUE)));

  ts_function *fn = traced_function();
  ts_concrete *cf = ts_function_concrete(fn, 0);
  const ts_graph *g = ts_concrete_graph(cf);
  size_t n;
  void *bytes = ts_graph_serialize(g, &n);
  GVariantDict d;
  g_variant_dict_init(&d, NULL);
  g_variant_dict_insert(&d, "function", "s", "traced");
  g_variant_dict_insert(&d, "signature", "s", ts_concrete_signature(cf));
  g_variant_dict_insert(&d, "reason", "u", 0u);
  g_variant_dict_insert(&d, "n-concrete", "i", 1);
  g_variant_dict_insert_value(&d, "graph", g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, bytes, n, 1));
  put_variant(dir, "trace", FUZZ_MSG_TRACE, g_variant_new("(u@a{sv})", 2u, g_variant_dict_end(&d)));
  free(bytes);

  put_variant(dir, "open", FUZZ_MSG_OPEN_REPLY,
              g_variant_new_parsed("('model', '/m.so', [('f', ['x', 'y'], ['f32[2]', '3']), ('g', @as [], @as [])])"));

  g_variant_dict_init(&d, NULL);
  g_variant_dict_insert(&d, "reason", "s", "step");
  g_variant_dict_insert(&d, "history-n", "i", 2);
  g_variant_dict_insert_value(&d, "op", op_dict());
  g_variant_dict_insert_value(&d, "result", result_dict(TRUE));
  put_variant(dir, "debug-stop", FUZZ_MSG_DEBUG_STOP, g_variant_dict_end(&d));
  put_variant(dir, "debug-history", FUZZ_MSG_DEBUG_HISTORY, op_dict());

  g_autoptr(GVariant) optimized = optimized_reply(ts_concrete_optimized_graph(cf), g, NULL, 0, 0);
  put(dir, "optimized", FUZZ_MSG_OPTIMIZED, g_variant_get_data(optimized), g_variant_get_size(optimized));
  ts_function_free(fn);

  put_fast(dir, "fast-ok", FUZZ_MSG_FAST_REPLY,
           g_variant_new("(uuuss@a{sv})", 7u, 1u, (guint32)TS_FAST_OK, "", "", result_dict(FALSE)));
  put_fast(dir, "fast-error", FUZZ_MSG_FAST_REPLY,
           g_variant_new("(uuuss@a{sv})", 7u, 0u, (guint32)TS_FAST_ERROR, "org.tracescope.Worker1.Error.InvalidArgument",
                         "bad", g_variant_new("a{sv}", NULL)));
  const char *const args[] = { "f32[2]", "3", NULL };
  put_fast(dir, "fast-request", FUZZ_MSG_FAST_REQUEST,
           g_variant_new("(us^asub@a{sv})", 7u, "f", args, 1u, FALSE, g_variant_new("a{sv}", NULL)));

  const char *crash = "tracescope-crash 1\nsignal 11 SIGSEGV\ncode 1\naddress 0x0000000000000000\nthread 42\n"
                      "vm_size 123456789\nas_limit unlimited\npc 0x00007f0123456789\npc 0x0000000000401000\nmaps\n"
                      "00400000-00401000 r-xp 00000000 08:01 1234 /bin/true\nend\n";
  put(dir, "crash", FUZZ_MSG_CRASH_REPORT, crash, strlen(crash));

  TsWorkerStatus st = { .magic = TS_WORKER_STATUS_MAGIC, .call_id = 3, .op_seq = 9 };
  strcpy(st.op, "MatMul");
  strcpy(st.node, "dense_1/MatMul");
  strcpy(st.loc, "model.c:42 (dense)");
  put(dir, "status", FUZZ_MSG_STATUS_PAGE, &st, sizeof st);

  const char *out = "\x05hello\n" TS_WORKER_MARK "0 end\nprinted" TS_WORKER_MARK "1 end\nno newline";
  put(dir, "output", FUZZ_MSG_OUTPUT, out, strlen(out));
  const char *sig = "(x: f32[2,?], n: 'a, b', m: i64[])";
  put(dir, "signature", FUZZ_MSG_SIGNATURE, sig, strlen(sig));
  return 0;
}

/* fuzz-worker-requests' seeds: each method with arguments the app sends
 * the test module (tests/modules/tiny.c), and a remote link's frames. */
static int write_request_seeds(const char *dir)
{
  g_mkdir_with_parents(dir, 0755);
  put_variant(dir, "hello", FUZZ_REQ_HELLO, g_variant_new("(u)", TS_WORKER_PROTOCOL_VERSION));
  const char *const specs[] = { "f32[2,?]", NULL };
  put_variant(dir, "set-input-signature", FUZZ_REQ_SET_INPUT_SIGNATURE,
              g_variant_new("(s^as)", "self_matmul", specs));
  GVariantDict options;
  g_variant_dict_init(&options, NULL);
  g_variant_dict_insert(&options, "compare", "u", 1u);
  g_variant_dict_insert(&options, "check-eagerly", "b", TRUE);
  const char *const args[] = { "f32[2,2]:ones", "2.5", NULL };
  put_variant(dir, "call-graph", FUZZ_REQ_CALL,
              g_variant_new("(us^asub@a{sv})", 1u, "scale", args, 2u, FALSE, g_variant_dict_end(&options)));
  g_variant_dict_init(&options, NULL);
  g_variant_dict_insert(&options, "profile", "b", TRUE);
  g_variant_dict_insert(&options, "device", "s", "CPU");
  const char *const fill[] = { "ones", "4", NULL };
  put_variant(dir, "call-eager", FUZZ_REQ_CALL,
              g_variant_new("(us^asub@a{sv})", 2u, "fill_named", fill, 1u, TRUE, g_variant_dict_end(&options)));
  put_variant(dir, "get-optimized", FUZZ_REQ_GET_OPTIMIZED, g_variant_new("(ss)", "scale", "(x: f32[2,2], k: 2.5)"));
  put_variant(dir, "list-devices", FUZZ_REQ_LIST_DEVICES, g_variant_new("()"));
  put_variant(dir, "take-fast-reply", FUZZ_REQ_TAKE_FAST_REPLY, g_variant_new("(u)", 3u));
  put_variant(dir, "cancel", FUZZ_REQ_CANCEL, g_variant_new("(u)", 4u));
  /* a D-Bus frame, a kill, an empty frame (the app closed), then one cut short */
  g_autoptr(GByteArray) frames = g_byte_array_new();
  const TsRemoteFrame heads[] = { { TS_REMOTE_DBUS, 5 }, { TS_REMOTE_KILL, 0 }, { TS_REMOTE_DBUS, 0 },
                                  { TS_REMOTE_STDOUT, 100 } };
  for (guint i = 0; i < G_N_ELEMENTS(heads); i++) {
    g_byte_array_append(frames, (const guint8 *)&heads[i], sizeof heads[i]);
    g_byte_array_append(frames, (const guint8 *)"hello", MIN(heads[i].length, 5));
  }
  put(dir, "frames", FUZZ_REQ_FRAMES, frames->data, frames->len);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0)
    return write_seeds(argv[2]);
  if (argc == 3 && strcmp(argv[1], "--write-request-seeds") == 0)
    return write_request_seeds(argv[2]);
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/worker-messages/status/fields-without-nul", test_status_fields_without_nul);
  g_test_add_func("/worker-messages/status/not-utf8", test_status_not_utf8);
  g_test_add_func("/worker-messages/optimized/fd-out-of-list", test_optimized_fd_out_of_list);
  g_test_add_func("/worker-messages/result/profile-past-fd", test_result_profile_past_fd);
  g_test_add_func("/worker-messages/result/bad-tuples", test_result_bad_tuples);
  g_test_add_func("/worker-messages/map-fd/needs-seal", test_map_fd_needs_seal);
  g_test_add_func("/worker-messages/fast-reply", test_fast_reply);
  g_test_add_func("/worker-messages/output/lines", test_output_lines);
  g_test_add_func("/worker-messages/output/mark-parse", test_mark_parse);
  return g_test_run();
}
