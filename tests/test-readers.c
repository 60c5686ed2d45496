/* test-readers.c — the profiler's readers of files from elsewhere under
 * their limits (tsp_read_limits): each limit refused by name, with small
 * limits so that no test needs the memory a real refusal saves; a file
 * streamed through a small buffer reads the same as the text held whole;
 * an imported thread costs its events, not a chunk; progress and cancel;
 * whole documents nested too deep for json-glib refused before it sees
 * them. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <tracescope-json.h>
#include <tracescope-profiler.h>
#include <zlib.h>

static char *tmp_dir;

/* n "X" events on tids 1 .. tids (in turn), each with a name of name_len bytes. */
static GString *foreign_trace(int n, int tids, int name_len)
{
  GString *json = g_string_new("{\"otherData\":{\"note\":\"before the events\"},\"traceEvents\":[");
  for (int i = 0; i < n; i++) {
    g_string_append_printf(json, "%s{\"ph\":\"X\",\"name\":\"", i ? ",\n" : "");
    for (int k = 0; k < name_len; k++)
      g_string_append_c(json, (char)('a' + (i + k) % 26));
    g_string_append_printf(json, "\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":1}", 1 + i % tids, i);
  }
  g_string_append(json, "]}");
  return json;
}

static char *write_file(const char *name, const char *text, size_t len, bool gzip)
{
  char *path = g_build_filename(tmp_dir, name, NULL);
  if (gzip) {
    gzFile gz = gzopen(path, "wb");
    g_assert_nonnull(gz);
    g_assert_cmpint(gzwrite(gz, text, (unsigned)len), ==, (int)len);
    g_assert_cmpint(gzclose(gz), ==, Z_OK);
  } else {
    g_assert_true(g_file_set_contents(path, text, (gssize)len, NULL));
  }
  return path;
}

static void expect_limit(const char *json, const tsp_import_options *o, const char *limit)
{
  GError *error = NULL;
  tsp_session *s = tsp_chrome_import_data_with(json, strlen(json), o, &error);
  if (s)
    g_error("imported without error (limit %s): %.200s", limit, json);
  g_assert_error(error, TSP_ERROR, TSP_ERROR_LIMIT);
  if (!strstr(error->message, limit))
    g_error("error '%s' does not name %s", error->message, limit);
  g_error_free(error);
}

/* Each limit refuses what passes it, and names itself; what fits reads. */
static void test_limits(void)
{
  const char *two = "[{\"ph\":\"X\",\"name\":\"Add\",\"tid\":1,\"ts\":1,\"dur\":1},"
                    "{\"ph\":\"X\",\"name\":\"Add\",\"tid\":1,\"ts\":2,\"dur\":1,\"args\":{\"a\":[[[1]]]}}]";
  tsp_import_options o = tsp_import_options_default();
  GError *error = NULL;
  tsp_session *s = tsp_chrome_import_data_with(two, strlen(two), &o, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(tsp_session_n_events(s), ==, 2);
  tsp_session_free(s);

  o.limits.max_events = 1;
  expect_limit(two, &o, "max_events");
  o = tsp_import_options_default();
  o.limits.max_bytes = strlen(two) - 1;
  expect_limit(two, &o, "max_bytes");
  o = tsp_import_options_default();
  o.limits.max_string = 2; /* "Add" */
  expect_limit(two, &o, "max_string");
  o = tsp_import_options_default();
  o.limits.max_value = 40; /* an event */
  expect_limit(two, &o, "max_value");
  o = tsp_import_options_default();
  o.limits.max_depth = 4; /* the event, args, [[[ */
  expect_limit(two, &o, "max_depth");
  o.limits.max_depth = 5;
  s = tsp_chrome_import_data_with(two, strlen(two), &o, &error);
  g_assert_no_error(error);
  tsp_session_free(s);

  /* the defaults: nesting past any sane depth, a long string in our tables */
  GString *deep = g_string_new("[");
  for (int i = 0; i < 200000; i++)
    g_string_append_c(deep, '[');
  o = tsp_import_options_default();
  expect_limit(deep->str, &o, "max_depth");
  g_string_free(deep, TRUE);
  o.limits.max_string = 16;
  expect_limit("{\"tracescope\":{\"base_ns\":\"0\",\"locs\":[[\"a very long file name.c\",\"f\",1]],"
               "\"concretes\":[],\"nodes\":[]},\"traceEvents\":[]}",
               &o, "max_string");

  /* a file's refusal names the file and the limit */
  GString *json = foreign_trace(100, 1, 8);
  char *path = write_file("limits.json.gz", json->str, json->len, true);
  o = tsp_import_options_default();
  o.limits.max_bytes = json->len / 2;
  g_assert_null(tsp_chrome_import_with(path, &o, &error));
  g_assert_error(error, TSP_ERROR, TSP_ERROR_LIMIT);
  g_assert_true(g_str_has_prefix(error->message, path));
  g_assert_nonnull(strstr(error->message, "max_bytes"));
  g_clear_error(&error);
  o = tsp_import_options_default();
  o.limits.max_events = 99;
  g_assert_null(tsp_chrome_import_with(path, &o, &error));
  g_assert_error(error, TSP_ERROR, TSP_ERROR_LIMIT);
  g_assert_true(g_str_has_prefix(error->message, path));
  g_assert_nonnull(strstr(error->message, "max_events"));
  g_clear_error(&error);
  g_unlink(path);
  g_free(path);
  g_string_free(json, TRUE);
}

/* A string larger than max_string is refused as it streams in: the reader
 * does not hold it first (a 64 MiB name once took 3.9 GiB); so is white
 * space longer than max_value. */
static void test_long_string_file(void)
{
  GString *json = g_string_new("[{\"ph\":\"X\",\"tid\":1,\"ts\":1,\"name\":\"");
  for (int i = 0; i < (6 << 20); i++)
    g_string_append_c(json, 'x');
  g_string_append(json, "\"}]");
  char *path = write_file("long.json", json->str, json->len, false);
  tsp_import_options o = tsp_import_options_default();
  o.limits.max_string = 1 << 20;
  GError *error = NULL;
  g_assert_null(tsp_chrome_import_with(path, &o, &error));
  g_assert_error(error, TSP_ERROR, TSP_ERROR_LIMIT);
  g_assert_nonnull(strstr(error->message, "max_string"));
  g_clear_error(&error);
  g_unlink(path);
  g_free(path);
  g_string_free(json, TRUE);

  /* a gzip bomb: white space between two events, refused once a value's
   * worth of it has passed (the whole of it once took 2.2 GiB) */
  json = g_string_new("[{\"ph\":\"X\",\"name\":\"a\",\"tid\":1,\"ts\":1,\"dur\":1},");
  for (int i = 0; i < (6 << 20); i++)
    g_string_append_c(json, ' ');
  g_string_append(json, "{\"ph\":\"X\",\"name\":\"a\",\"tid\":1,\"ts\":2,\"dur\":1}]");
  path = write_file("bomb.json.gz", json->str, json->len, true);
  o = tsp_import_options_default();
  o.limits.max_value = 1 << 20;
  g_assert_null(tsp_chrome_import_with(path, &o, &error));
  g_assert_error(error, TSP_ERROR, TSP_ERROR_LIMIT);
  g_assert_nonnull(strstr(error->message, "white space (the max_value limit)"));
  g_clear_error(&error);
  o = tsp_import_options_default();
  tsp_session *s = tsp_chrome_import_with(path, &o, &error); /* under the default: it reads */
  g_assert_no_error(error);
  g_assert_cmpuint(tsp_session_n_events(s), ==, 2);
  tsp_session_free(s);
  g_unlink(path);
  g_free(path);
  g_string_free(json, TRUE);
}

static void assert_same_events(const tsp_session *a, const tsp_session *b)
{
  g_assert_cmpint(tsp_session_n_threads(a), ==, tsp_session_n_threads(b));
  g_assert_cmpuint(tsp_session_n_events(a), ==, tsp_session_n_events(b));
  for (int t = 0; t < tsp_session_n_threads(a); t++) {
    tsp_iter ia, ib;
    tsp_iter_init(&ia, a, t);
    tsp_iter_init(&ib, b, t);
    for (const tsp_event *ea; (ea = tsp_iter_next(&ia));) {
      const tsp_event *eb = tsp_iter_next(&ib);
      g_assert_nonnull(eb);
      g_assert_cmpmem(ea, sizeof *ea, eb, sizeof *eb);
      g_assert_cmpstr(tsp_event_op_name(a, ea), ==, tsp_event_op_name(b, eb));
    }
    g_assert_null(tsp_iter_next(&ib));
  }
}

/* A file is read a block at a time: events, strings and our tables that
 * straddle the blocks read as from the text held whole, gzipped or not;
 * our own export too. */
static void test_streamed(void)
{
  GString *json = foreign_trace(60000, 3, 37); /* about 5 MiB: several blocks and batches */
  GError *error = NULL;
  tsp_session *whole = tsp_chrome_import_data(json->str, json->len, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(tsp_session_n_events(whole), ==, 60000);
  for (int gzip = 0; gzip < 2; gzip++) {
    char *path = write_file(gzip ? "streamed.json.gz" : "streamed.json", json->str, json->len, gzip);
    tsp_session *s = tsp_chrome_import(path, &error);
    g_assert_no_error(error);
    assert_same_events(whole, s);
    /* our own format, tables and all, through a file */
    size_t len;
    char *ours = tsp_chrome_export_string(s, &len);
    char *again_path = write_file("ours.json.gz", ours, len, gzip);
    tsp_session *again = tsp_chrome_import(again_path, &error);
    g_assert_no_error(error);
    assert_same_events(s, again);
    tsp_session_free(again);
    g_unlink(again_path);
    g_free(again_path);
    g_free(ours);
    tsp_session_free(s);
    g_unlink(path);
    g_free(path);
  }
  /* a truncated gzip file is an error, not a short session */
  char *path = write_file("cut.json.gz", json->str, json->len, true);
  char *gz;
  size_t gz_len;
  g_assert_true(g_file_get_contents(path, &gz, &gz_len, NULL));
  g_assert_true(g_file_set_contents(path, gz, (gssize)(gz_len / 2), NULL));
  g_assert_null(tsp_chrome_import(path, &error));
  g_assert_nonnull(error);
  g_clear_error(&error);
  g_free(gz);
  g_unlink(path);
  g_free(path);
  tsp_session_free(whole);
  g_string_free(json, TRUE);
}

/* A thread costs what it holds: 2,000 tids of one event each took a 4 MiB
 * chunk each (8 GiB of address space, 2 MiB resident). */
static void test_threads_memory(void)
{
  GString *json = foreign_trace(4000, 2000, 3);
  GError *error = NULL;
  tsp_session *s = tsp_chrome_import_data(json->str, json->len, &error);
  g_assert_no_error(error);
  g_assert_cmpint(tsp_session_n_threads(s), ==, 2000);
  g_assert_cmpuint(tsp_session_n_events(s), ==, 4000);
  g_assert_cmpuint(tsp_session_event_bytes(s), ==, 4000 * sizeof(tsp_event));
  tsp_session_free(s);
  g_string_free(json, TRUE);
}

/* Memory that runs out is an error, not an abort (it aborted under a
 * memory limit), importing a trace or reading a serialized session.  AddressSanitizer makes it run out on cue: allocations
 * over 2 MiB fail, and one thread's chunks pass that after 65,536 events. */
static void test_out_of_memory(void)
{
#if defined(__SANITIZE_ADDRESS__)
  if (g_test_subprocess()) {
    GError *error = NULL;
    g_assert_null(tsp_chrome_import(g_getenv("TEST_READERS_TRACE"), &error));
    g_assert_error(error, TSP_ERROR, TSP_ERROR_LIMIT);
    if (!strstr(error->message, "out of memory after 65536 events"))
      g_error("%s", error->message);
    g_clear_error(&error);
    /* the worker's (and the importer's) serialized form, mapped: no copy */
    GMappedFile *mapped = g_mapped_file_new(g_getenv("TEST_READERS_SERIAL"), FALSE, &error);
    g_assert_no_error(error);
    GBytes *bytes = g_mapped_file_get_bytes(mapped);
    g_assert_null(tsp_session_deserialize(bytes, &error));
    g_assert_error(error, TSP_ERROR, TSP_ERROR_FORMAT);
    if (!strstr(error->message, "out of memory after 65536 events"))
      g_error("%s", error->message);
    g_clear_error(&error);
    g_bytes_unref(bytes);
    g_mapped_file_unref(mapped);
    return;
  }
  GString *json = foreign_trace(70000, 1, 3);
  char *path = write_file("oom.json", json->str, json->len, false);
  g_setenv("TEST_READERS_TRACE", path, TRUE);
  GError *error = NULL;
  tsp_session *s = tsp_chrome_import_data(json->str, json->len, &error);
  g_assert_no_error(error);
  GBytes *bytes = tsp_session_serialize(s);
  char *serial = write_file("oom.serial", g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes), false);
  g_setenv("TEST_READERS_SERIAL", serial, TRUE);
  g_bytes_unref(bytes);
  tsp_session_free(s);
  char *asan = g_strdup(g_getenv("ASAN_OPTIONS"));
  char *options = g_strdup_printf("%s:allocator_may_return_null=1:max_allocation_size_mb=2", asan ? asan : "");
  g_setenv("ASAN_OPTIONS", options, TRUE);
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  if (asan)
    g_setenv("ASAN_OPTIONS", asan, TRUE);
  else
    g_unsetenv("ASAN_OPTIONS");
  g_test_trap_assert_passed();
  g_unlink(path);
  g_free(path);
  g_unlink(serial);
  g_free(serial);
  g_free(options);
  g_free(asan);
  g_string_free(json, TRUE);
#else
  g_test_skip("needs AddressSanitizer (max_allocation_size_mb) to make an allocation fail");
#endif
}

typedef struct progress {
  int calls, cancel_at;
  double last;
} progress;

static bool on_progress(double fraction, void *data)
{
  progress *p = data;
  g_assert_cmpfloat(fraction, >=, p->last);
  g_assert_cmpfloat(fraction, <=, 1.0);
  p->last = fraction;
  return ++p->calls != p->cancel_at;
}

/* Progress comes as the file is read, rising to 1; false cancels. */
static void test_progress(void)
{
  GString *json = foreign_trace(60000, 1, 20);
  char *path = write_file("progress.json.gz", json->str, json->len, true);
  tsp_import_options o = tsp_import_options_default();
  progress p = { 0 };
  o.progress = on_progress;
  o.progress_data = &p;
  GError *error = NULL;
  tsp_session *s = tsp_chrome_import_with(path, &o, &error);
  g_assert_no_error(error);
  g_assert_cmpint(p.calls, >, 2);
  g_assert_cmpfloat(p.last, ==, 1.0);
  tsp_session_free(s);
  p = (progress){ .cancel_at = 2 };
  g_assert_null(tsp_chrome_import_with(path, &o, &error));
  g_assert_error(error, TSP_ERROR, TSP_ERROR_CANCELLED);
  g_clear_error(&error);
  g_assert_cmpint(p.calls, ==, 2);
  /* held whole too */
  p = (progress){ .cancel_at = 3 };
  g_assert_null(tsp_chrome_import_data_with(json->str, json->len, &o, &error));
  g_assert_error(error, TSP_ERROR, TSP_ERROR_CANCELLED);
  g_clear_error(&error);
  g_unlink(path);
  g_free(path);
  g_string_free(json, TRUE);
}

/* Whole documents: nesting json-glib would recurse on is refused by the
 * scan before it parses (200,000 arrays took its stack), inside an
 * unknown member too; what fits parses. */
static void test_json_bounded(void)
{
  tsp_read_limits limits = tsp_read_limits_default();
  GString *deep = g_string_new("{\"format\":\"x\",\"unknown\":");
  for (int i = 0; i < 200000; i++)
    g_string_append_c(deep, '[');
  for (int i = 0; i < 200000; i++)
    g_string_append_c(deep, ']');
  g_string_append_c(deep, '}');
  GError *error = NULL;
  g_assert_null(tsp_json_parse(deep->str, deep->len, &limits, &error));
  g_assert_error(error, TSP_ERROR, TSP_ERROR_LIMIT);
  g_assert_nonnull(strstr(error->message, "max_depth"));
  g_clear_error(&error);
  char *path = write_file("deep.json", deep->str, deep->len, false);
  g_assert_null(tsp_json_load(path, &limits, &error));
  g_assert_error(error, TSP_ERROR, TSP_ERROR_LIMIT);
  g_assert_true(g_str_has_prefix(error->message, path));
  g_clear_error(&error);
  g_unlink(path);
  g_free(path);
  g_string_free(deep, TRUE);

  const char *ok = " {\"a\": [1, {\"b\": \"c\"}], \"d\": null} \n";
  JsonNode *root = tsp_json_parse(ok, strlen(ok), &limits, &error);
  g_assert_no_error(error);
  g_assert_true(JSON_NODE_HOLDS_OBJECT(root));
  g_assert_true(json_object_has_member(json_node_get_object(root), "d"));
  json_node_unref(root);
  static const struct { const char *text; const char *fragment; } bad[] = {
    { "", "ends early" }, { "{\"a\":1} x", "after the document" }, { "{\"a\":", "ends early" },
    { "{\"a\" 1}", NULL }, { "[\"abc", "inside a string" }, { "//", "no JSON value" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_null(tsp_json_parse(bad[i].text, strlen(bad[i].text), &limits, &error));
    g_assert_error(error, TSP_ERROR, TSP_ERROR_FORMAT);
    if (bad[i].fragment && !strstr(error->message, bad[i].fragment))
      g_error("'%s': error '%s' lacks '%s'", bad[i].text, error->message, bad[i].fragment);
    g_clear_error(&error);
  }
  limits.max_string = 2;
  g_assert_null(tsp_json_parse("[\"abc\"]", 7, &limits, &error));
  g_assert_error(error, TSP_ERROR, TSP_ERROR_LIMIT);
  g_clear_error(&error);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("test-readers-XXXXXX", NULL);
  g_test_add_func("/readers/limits", test_limits);
  g_test_add_func("/readers/long-string-file", test_long_string_file);
  g_test_add_func("/readers/streamed", test_streamed);
  g_test_add_func("/readers/threads-memory", test_threads_memory);
  g_test_add_func("/readers/progress", test_progress);
  g_test_add_func("/readers/out-of-memory", test_out_of_memory);
  g_test_add_func("/readers/json-bounded", test_json_bounded);
  int ret = g_test_run();
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return ret;
}
