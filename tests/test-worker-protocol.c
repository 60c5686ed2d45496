/* test-worker-protocol.c — the worker protocol under abuse, both ways:
 * a fake app sends the real worker garbage, malformed, truncated and
 * oversized messages; a fake worker (fake-worker.c) answers the real
 * client (TsWorker) wrongly.  Errors every time: never a crash or a hang. */
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ts-fast-channel.h"
#include "ts-worker.h"
#include "ts-worker-protocol.h"

#define TIMEOUT_S 60

/* ---- a fake app: the real worker, spawned by hand ---------------------------------- */

typedef struct {
  GSubprocess *process;
  int socket;      /* our end */
  int crash;       /* read end of the crash pipe */
} Spawned;

static Spawned spawn_worker(void)
{
  int sv[2], crash[2];
  g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
  g_assert_cmpint(pipe2(crash, O_CLOEXEC), ==, 0);
  int status = memfd_create("status", MFD_CLOEXEC);
  g_assert_cmpint(ftruncate(status, sizeof(TsWorkerStatus)), ==, 0);
  g_autoptr(GSubprocessLauncher) l =
    g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_subprocess_launcher_take_fd(l, sv[1], TS_WORKER_FD_DBUS);
  g_subprocess_launcher_take_fd(l, crash[1], TS_WORKER_FD_CRASH);
  g_subprocess_launcher_take_fd(l, status, TS_WORKER_FD_STATUS);
  g_autoptr(GError) error = NULL;
  Spawned s = { .socket = sv[0], .crash = crash[0] };
  s.process = g_subprocess_launcher_spawn(l, &error, g_getenv("TRACESCOPE_WORKER"), NULL);
  g_assert_no_error(error);
  return s;
}

/* The worker ended by itself, without a crash (no signal, no report). */
static void assert_clean_exit(Spawned *s)
{
  g_autoptr(GError) error = NULL;
  g_assert_true(g_subprocess_wait(s->process, NULL, &error));
  g_assert_false(g_subprocess_get_if_signaled(s->process));
  char byte;
  g_assert_cmpint(read(s->crash, &byte, 1), ==, 0); /* nothing in the crash pipe */
  close(s->crash);
  if (s->socket >= 0)
    close(s->socket);
  g_object_unref(s->process);
}

static void write_all(int fd, const void *data, size_t n)
{
  for (size_t done = 0; done < n;) {
    ssize_t w = send(fd, (const char *)data + done, n - done, MSG_NOSIGNAL);
    if (w <= 0)
      return; /* the worker may be gone already: that is fine */
    done += (size_t)w;
  }
}

/* Garbage before the handshake: the worker gives up and exits. */
static void test_app_garbage(void)
{
  for (int seed = 0; seed < 4; seed++) {
    Spawned s = spawn_worker();
    GRand *rand = g_rand_new_with_seed(seed);
    guint8 junk[512];
    for (size_t i = 0; i < sizeof junk; i++)
      junk[i] = (guint8)g_rand_int_range(rand, 0, 256);
    g_rand_free(rand);
    write_all(s.socket, junk, sizeof junk);
    shutdown(s.socket, SHUT_WR);
    assert_clean_exit(&s);
  }
}

/* Reads one "\r\n"-terminated line of the handshake. */
static char *read_line(int fd)
{
  GString *line = g_string_new(NULL);
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n')
    g_string_append_c(line, c);
  return g_string_free(line, FALSE);
}

/* Plays the server side of the D-Bus handshake by hand, so that raw bytes
 * can follow it. */
static void handshake(int fd)
{
  char nul;
  g_assert_cmpint(read(fd, &nul, 1), ==, 1);
  g_autofree char *auth = read_line(fd);
  g_assert_true(g_str_has_prefix(auth, "AUTH"));
  static const char ok[] = "OK 0123456789abcdef0123456789abcdef\r\n";
  write_all(fd, ok, strlen(ok));
  for (;;) {
    g_autofree char *line = read_line(fd);
    if (g_str_has_prefix(line, "BEGIN") || !*line)
      return;
    static const char agree[] = "AGREE_UNIX_FD\r\n";
    write_all(fd, agree, strlen(agree));
  }
}

/* After the handshake: a message cut short, one that says it is 200 MB
 * long, one with a bad header. */
static void test_app_broken_messages(void)
{
  static const guint8 header[] = { 'l', 1, 0, 1, 4, 0, 0, 0, 1, 0, 0, 0, 0x6e, 0, 0, 0 };
  for (int kind = 0; kind < 3; kind++) {
    Spawned s = spawn_worker();
    handshake(s.socket);
    guint8 message[16];
    memcpy(message, header, sizeof message);
    if (kind == 1) { /* body length 200 MB */
      guint32 len = 200u << 20;
      memcpy(message + 4, &len, 4);
    } else if (kind == 2) {
      message[0] = 'X'; /* neither l nor B */
    }
    write_all(s.socket, message, kind == 0 ? 9 : sizeof message);
    shutdown(s.socket, SHUT_WR);
    assert_clean_exit(&s);
  }
}

static GDBusConnection *connect_worker(Spawned *s)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) socket = g_socket_new_from_fd(s->socket, &error);
  g_assert_no_error(error);
  g_autoptr(GSocketConnection) stream = g_socket_connection_factory_create_connection(socket);
  g_autofree char *guid = g_dbus_generate_guid();
  GDBusConnection *c = g_dbus_connection_new_sync(G_IO_STREAM(stream), guid,
                                                  G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_SERVER, NULL,
                                                  NULL, &error);
  g_assert_no_error(error);
  s->socket = -1; /* the connection's now */
  return c;
}

/* Calls method with params; asserts an error whose message holds `expect`. */
static void expect_error(GDBusConnection *c, const char *method, GVariant *params, const char *expect)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_sync(c, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, method,
                                                          params, NULL, G_DBUS_CALL_FLAGS_NONE, 10000, NULL,
                                                          &error);
  g_assert_null(reply);
  g_assert_nonnull(error);
  if (!strstr(error->message, expect))
    g_error("%s: '%s' lacks '%s'", method, error->message, expect);
}

/* Well-formed D-Bus, wrong in every other way: each an error reply, and
 * the worker still works after. */
static void test_app_wrong_calls(void)
{
  Spawned s = spawn_worker();
  GDBusConnection *c = connect_worker(&s);
  expect_error(c, "Hello", g_variant_new("(u)", 99), "protocol version 99");
  expect_error(c, "Frobnicate", NULL, "Frobnicate");
  expect_error(c, "Call", g_variant_new("(s)", "x"), "");
  expect_error(c, "Call", g_variant_new("(us^asub@a{sv})", 1, "good", (const char *const[]){ NULL }, 1, FALSE, g_variant_new("a{sv}", NULL)),
               "no module is open");
  expect_error(c, "Open", g_variant_new("(s)", "/no/such/module.so"), "no such file");
  g_autofree char *module = g_build_filename(TS_TEST_MODULES_DIR, "misbehave.so", NULL);
  g_autoptr(GVariant) opened = g_dbus_connection_call_sync(c, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, "Open",
                                                           g_variant_new("(s)", module), NULL,
                                                           G_DBUS_CALL_FLAGS_NONE, 10000, NULL, NULL);
  g_assert_nonnull(opened);
  expect_error(c, "Open", g_variant_new("(s)", module), "has a module open already");
  expect_error(c, "SetInputSignature", g_variant_new("(s^as)", "good", (const char *const[]){ "f32[x", NULL }),
               "input signature, argument 0");
  expect_error(c, "SetInputSignature", g_variant_new("(s^as)", "nope", (const char *const[]){ NULL }),
               "no function 'nope'");
  /* 10000 arguments, and one of a megabyte */
  g_autoptr(GStrvBuilder) many = g_strv_builder_new();
  for (int i = 0; i < 10000; i++)
    g_strv_builder_add(many, "1");
  g_auto(GStrv) args = g_strv_builder_end(many);
  expect_error(c, "Call", g_variant_new("(us^asub@a{sv})", 2, "good", args, 1, FALSE, g_variant_new("a{sv}", NULL)), "takes 1 argument, got 10000");
  g_autofree char *huge = g_strnfill(1 << 20, '[');
  expect_error(c, "Call", g_variant_new("(us^asub@a{sv})", 3, "good", (const char *const[]){ huge, NULL }, 1, FALSE, g_variant_new("a{sv}", NULL)),
               "argument 0 (x)");
  g_dbus_connection_call_sync(c, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, "Cancel", g_variant_new("(u)", 12345),
                              NULL, G_DBUS_CALL_FLAGS_NONE, 10000, NULL, NULL);
  g_autoptr(GVariant) good = g_dbus_connection_call_sync(
    c, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, "Call",
    g_variant_new("(us^asub@a{sv})", 4, "good", (const char *const[]){ "f32[]=1", NULL }, 1, FALSE, g_variant_new("a{sv}", NULL)),
    G_VARIANT_TYPE("(a{sv})"), G_DBUS_CALL_FLAGS_NONE, 10000, NULL, NULL);
  g_assert_nonnull(good);
  g_dbus_connection_close_sync(c, NULL, NULL);
  g_object_unref(c);
  assert_clean_exit(&s);
}

/* Posts request number seq on the fast channel; the worker's reply. */
static GVariant *fast_exchange(TsFastHeader *h, guint32 seq)
{
  guint32 old = __atomic_load_n(&h->reply_seq, __ATOMIC_ACQUIRE);
  ts_fast_post(&h->request_seq, &h->worker_waiting, seq);
  gint64 end = g_get_monotonic_time() + TIMEOUT_S * G_USEC_PER_SEC;
  while (!ts_fast_wait(&h->reply_seq, &h->app_waiting, old, NULL, 20))
    if (g_get_monotonic_time() > end)
      g_error("no fast reply to request %u", seq);
  g_assert_cmpuint(__atomic_load_n(&h->reply_seq, __ATOMIC_ACQUIRE), ==, seq);
  g_autoptr(GError) error = NULL;
  GVariant *reply = ts_fast_get(h, TS_FAST_REPLY, TS_FAST_REPLY_TYPE, "reply", &error);
  g_assert_no_error(error);
  return reply;
}

/* The reply is a failure whose message holds `expect`. */
static void expect_fast_error(GVariant *reply, const char *expect)
{
  guint32 status;
  const char *message;
  g_variant_get(reply, "(uuu&s&s@a{sv})", NULL, NULL, &status, NULL, &message, NULL);
  g_assert_cmpuint(status, ==, TS_FAST_ERROR);
  if (!strstr(message, expect))
    g_error("fast reply: '%s' lacks '%s'", message, expect);
}

/* Corrupt requests on the fast channel — a length past the area, bytes
 * that are not a Call, numbers out of sequence — are error replies, and
 * the worker goes on. */
static void test_app_bad_channel(void)
{
  Spawned s = spawn_worker();
  GDBusConnection *c = connect_worker(&s);
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) opened = g_dbus_connection_call_with_unix_fd_list_sync(
    c, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, "OpenFastChannel", NULL, G_VARIANT_TYPE("(hu)"),
    G_DBUS_CALL_FLAGS_NONE, 10000, NULL, &fds, NULL, &error);
  g_assert_no_error(error);
  int fd = g_unix_fd_list_get(fds, 0, &error);
  g_assert_no_error(error);
  TsFastHeader *h = ts_fast_channel_map(fd, &error);
  close(fd);
  g_assert_no_error(error);
  guint8 *request = (guint8 *)h + TS_FAST_HEADER_SIZE;
  guint64 length = (guint64)TS_FAST_AREA_SIZE * 2;
  memcpy(request, &length, sizeof length);
  g_autoptr(GVariant) r1 = fast_exchange(h, 1);
  expect_fast_error(r1, "more than its area holds");
  length = 16;
  memcpy(request, &length, sizeof length);
  memset(request + 8, 0xff, 16);
  g_autoptr(GVariant) r2 = fast_exchange(h, 2);
  expect_fast_error(r2, "is not a valid");
  /* a good Call, numbered out of sequence: answered under its own number */
  g_autoptr(GVariant) call = g_variant_ref_sink(
    g_variant_new("(us^asub@a{sv})", 7, "good", (const char *const[]){ NULL }, 1, FALSE, g_variant_new("a{sv}", NULL)));
  g_assert_true(ts_fast_put(h, TS_FAST_REQUEST, call));
  g_autoptr(GVariant) r3 = fast_exchange(h, 40);
  expect_fast_error(r3, "no module is open");
  ts_fast_channel_unmap(h);
  g_dbus_connection_close_sync(c, NULL, NULL);
  g_object_unref(c);
  assert_clean_exit(&s);
}

/* ---- a fake worker: the real client ------------------------------------------------- */

static void store(GObject *source, GAsyncResult *res, gpointer data)
{
  *(GAsyncResult **)data = g_object_ref(res);
}

static gboolean on_timeout(gpointer data)
{
  g_error("timed out waiting for %s", (const char *)data);
  return G_SOURCE_REMOVE;
}

static GAsyncResult *await(GAsyncResult **slot, const char *what)
{
  guint id = g_timeout_add_seconds(TIMEOUT_S, on_timeout, (gpointer)what);
  while (!*slot)
    g_main_context_iteration(NULL, TRUE);
  g_source_remove(id);
  GAsyncResult *res = *slot;
  *slot = NULL;
  return res;
}

static void on_fake_output(TsWorker *w, guint call_id, int fd, const char *line, gint64 t, gpointer data)
{
  g_test_message("fake worker: %s", line);
}

static TsWorker *fake(const char *mode, GError **error)
{
  TsWorker *w = ts_worker_new(0);
  g_signal_connect(w, "output", G_CALLBACK(on_fake_output), NULL);
  ts_worker_set_executable(w, FAKE_WORKER);
  ts_worker_setenv(w, "FAKE_WORKER_MODE", mode);
  GAsyncResult *slot = NULL;
  ts_worker_start_async(w, NULL, store, &slot);
  g_autoptr(GAsyncResult) res = await(&slot, mode);
  gboolean ok = ts_worker_start_finish(w, res, error);
  return ok ? w : (ts_worker_close(w), g_object_unref(w), NULL);
}

static void test_worker_that_does_not_speak(void)
{
  static const struct {
    const char *mode, *message;
  } cases[] = {
    { "garbage", "the worker did not connect" },
    { "exit", "the worker did not connect" },
    { "bad-hello", "protocol version 2" },
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GError) error = NULL;
    g_assert_null(fake(cases[i].mode, &error));
    g_assert_nonnull(error);
    if (!strstr(error->message, cases[i].message))
      g_error("%s: '%s' lacks '%s'", cases[i].mode, error->message, cases[i].message);
  }
}

static int n_outputs;
static void on_output(TsWorker *w, guint call_id, int fd, const char *line, gint64 t, gpointer data)
{
  n_outputs++;
}

/* Each wrong answer to a call is an error naming what was wrong (a blob to
 * read in chunks: before room is made for it, or a chunk of the wrong
 * length); malformed signals are dropped; the client carries on. */
static void test_worker_wrong_answers(void)
{
  static const char *const expected[] = {
    NULL, "without value-text", "bad dtype (float99)", "bad dtype (f32) or shape",
    "of 3 bytes where its shape says 16", "neither inline nor in a valid fd", "is not in its fd",
    "is not in its fd", "unknown dims or overflows",
    /* blobs (a remote worker's large results, read in chunks): refused before room is made for them */
    "a Call result of 1073741824 bytes where its shape says 4194304",
    "a Call result with a secret of 5242880 bytes to read: not one it may have",
    "the worker sent 10 bytes of data at 0 where 1048576 were asked for",
    "a Call result with a profile of 1099511627776 bytes to read: not one it may have",
    "a Call result is in an fd that can shrink (no F_SEAL_SHRINK)",
  };
  g_autoptr(GError) error = NULL;
  TsWorker *w = fake("bad-replies", &error);
  g_assert_no_error(error);
  g_signal_connect(w, "output", G_CALLBACK(on_output), NULL);
  for (guint id = 1; id <= G_N_ELEMENTS(expected); id++) {
    GAsyncResult *slot = NULL;
    ts_worker_call_async(w, id, "f", (const char *const[]){ "1", NULL }, 1, FALSE, NULL, store, &slot);
    g_autoptr(GAsyncResult) res = await(&slot, "a call");
    g_autoptr(GError) call_error = NULL;
    g_autoptr(TsCallResult) r = ts_worker_call_finish(w, res, &call_error);
    if (id < G_N_ELEMENTS(expected)) {
      g_assert_null(r);
      g_assert_error(call_error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL);
      if (!strstr(call_error->message, expected[id]))
        g_error("call %u: '%s' lacks '%s'", id, call_error->message, expected[id]);
    } else {
      g_assert_no_error(call_error);
      g_assert_cmpstr(r->value_text, ==, "fine");
    }
    g_assert_true(ts_worker_get_alive(w));
  }
  g_assert_cmpint(n_outputs, ==, 1); /* the line it left without a newline */
  ts_worker_close(w);
  while (!ts_worker_get_death(w))
    g_main_context_iteration(NULL, TRUE);
  g_object_unref(w);
}

/* Each wrong reply on the fast channel — a length past its area, bytes
 * that are not a reply, a number out of sequence, another call's reply, a
 * status there is none of, signals claimed and never sent, an error name
 * that is none — is an error naming it; but for the last (a D-Bus error
 * like any other) the channel is not trusted again: the next call goes
 * over D-Bus. */
static void test_worker_bad_channel(void)
{
  static const char *const expected[] = {
    NULL, "more than its area holds", "is not a valid", "numbered 6, the request was 1",
    "for call 5 with status 0, to call 4", "with status 7", "said 1000 signals came", "boom",
  };
  for (guint id = 1; id < G_N_ELEMENTS(expected); id++) {
    g_autoptr(GError) error = NULL;
    TsWorker *w = fake("bad-channel", &error);
    g_assert_no_error(error);
    GAsyncResult *slot = NULL;
    ts_worker_call_async(w, id, "f", (const char *const[]){ "1", NULL }, 1, FALSE, NULL, store, &slot);
    g_autoptr(GAsyncResult) res = await(&slot, "a fast call");
    g_assert_cmpuint(ts_worker_get_fast_calls(w), ==, 1);
    g_autoptr(TsCallResult) r = ts_worker_call_finish(w, res, &error);
    g_assert_null(r);
    g_assert_nonnull(error);
    if (!strstr(error->message, expected[id]))
      g_error("fast call %u: '%s' lacks '%s'", id, error->message, expected[id]);
    g_clear_error(&error);
    g_assert_true(ts_worker_get_alive(w));
    /* answered well: over D-Bus as bad-replies (id 9 and up), or fast */
    ts_worker_call_async(w, 100, "f", (const char *const[]){ "1", NULL }, 1, FALSE, NULL, store, &slot);
    g_autoptr(GAsyncResult) again = await(&slot, "a call over D-Bus");
    g_autoptr(TsCallResult) fine = ts_worker_call_finish(w, again, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(fine->value_text, ==, "fine");
    g_assert_cmpuint(ts_worker_get_fast_calls(w), ==, id == 7 ? 2 : 1);
    ts_worker_close(w);
    while (!ts_worker_get_death(w))
      g_main_context_iteration(NULL, TRUE);
    g_object_unref(w);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/worker-protocol/app/garbage", test_app_garbage);
  g_test_add_func("/worker-protocol/app/broken-messages", test_app_broken_messages);
  g_test_add_func("/worker-protocol/app/wrong-calls", test_app_wrong_calls);
  g_test_add_func("/worker-protocol/app/bad-channel", test_app_bad_channel);
  g_test_add_func("/worker-protocol/worker/does-not-speak", test_worker_that_does_not_speak);
  g_test_add_func("/worker-protocol/worker/wrong-answers", test_worker_wrong_answers);
  g_test_add_func("/worker-protocol/worker/bad-channel", test_worker_bad_channel);
  return g_test_run();
}
