/* fuzz-worker-messages.c — what the app reads from a worker (and the
 * little the worker reads from the app besides D-Bus's own checks), fed
 * anything: a worker runs modules that may scribble on whatever it sends.
 *
 * The input's first byte picks the message (the table below), the rest
 * is its bytes: a serialized GVariant of the message's type for a D-Bus
 * reply or signal (read in normal form, as GDBus hands them over), the
 * bytes of a fast channel area, a crash report, a status page, or pipe
 * output cut into chunks.  Every reader gives a value or an error with a
 * message, never both, never neither; a GLib critical counts as a
 * finding here (the app must not lean on g_return_if_fail for what a
 * worker sends).  Results are read through, so a wrong length or mapping
 * shows as a sanitizer report. */
#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-common.h"
#include "fuzz-worker-messages.h"
#include "ts-crash-report.h"
#include "ts-fast-channel.h"
#include "ts-output-lines.h"
#include "ts-spec-text.h"
#include "ts-worker-debug.h"
#include "ts-worker-messages.h"
#include "ts-worker-optimized.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FD_BYTES 4096 /* the memfd every message may name as fd 0 */

/* A value or an error with a message. */
static void expect(gboolean ok, GError *error, const char *what)
{
  if (fuzz_criticals > 0)
    fuzz_finding("%s: a GLib critical", what);
  if (!ok && (!error || !error->message || !error->message[0]))
    fuzz_finding("%s: nothing and no error with a message", what);
  if (ok && error)
    fuzz_finding("%s: a value and an error: %s", what, error->message);
}

/* Every byte read, so a mapping or length that lies shows. */
static unsigned touch(GBytes *bytes)
{
  gsize n;
  const guint8 *p = bytes ? g_bytes_get_data(bytes, &n) : NULL;
  unsigned sum = 0;
  for (gsize i = 0; p && i < n; i++)
    sum += p[i];
  return sum;
}

static void check_tensor(ts_dtype dtype, ts_shape shape, GBytes *data, const char *what)
{
  if (!data)
    return;
  if ((gsize)ts_shape_size(shape) * ts_dtype_size(dtype) != g_bytes_get_size(data))
    fuzz_finding("%s: %zu bytes for its shape", what, g_bytes_get_size(data));
  touch(data);
}

static void check_result(TsCallResult *r, GError *error, const char *what)
{
  expect(r != NULL, error, what);
  if (!r)
    return;
  if (!r->value_text || !g_utf8_validate(r->value_text, -1, NULL))
    fuzz_finding("%s: no value text, or not UTF-8", what);
  check_tensor(r->dtype, r->shape, r->data, what);
  touch(r->profile);
  ts_call_result_free(r);
}

static void call_reply(GVariant *v, GUnixFDList *fds)
{
  GError *error = NULL;
  TsCallResult *r = ts_worker_read_result(v, fds, 7, &error);
  check_result(r, error, "a Call reply");
  g_clear_error(&error);
}

static void trace_signal(GVariant *v, GUnixFDList *fds)
{
  TsWorkerTrace *t = ts_worker_read_trace(v);
  if (fuzz_criticals > 0)
    fuzz_finding("a Trace signal: a GLib critical");
  ts_error_clear(); /* a graph that did not read */
  if (t && t->graph)
    free(ts_graph_to_text(t->graph));
  ts_worker_trace_free(t);
}

static void open_reply(GVariant *v, GUnixFDList *fds)
{
  char *title = NULL, *path = NULL;
  GPtrArray *functions = ts_worker_read_functions(v, &title, &path);
  expect(functions != NULL, NULL, "an Open reply");
  for (guint i = 0; i < functions->len; i++) {
    TsWorkerFunction *fn = functions->pdata[i];
    if (!fn->name || !fn->params)
      fuzz_finding("an Open reply: a function without name or parameters");
  }
  g_ptr_array_unref(functions);
  g_free(title);
  g_free(path);
}

static void check_debug_tensor(const TsDebugTensor *t)
{
  check_tensor(t->dtype, t->shape, t->data, "a debugger tensor");
}

static void check_debug_op(const TsDebugOp *op)
{
  for (guint i = 0; i < op->inputs->len; i++)
    check_debug_tensor(op->inputs->pdata[i]);
  for (guint i = 0; i < op->outputs->len; i++)
    check_debug_tensor(op->outputs->pdata[i]);
}

static void debug_stop(GVariant *v, GUnixFDList *fds)
{
  GError *error = NULL;
  TsDebugStop *stop = ts_debug_stop_read(v, fds, &error);
  expect(stop != NULL, error, "a debugger stop");
  if (stop && stop->op)
    check_debug_op(stop->op);
  if (stop && stop->result)
    check_debug_tensor(stop->result);
  ts_debug_stop_free(stop);
  g_clear_error(&error);
}

static void debug_history(GVariant *v, GUnixFDList *fds)
{
  GError *error = NULL;
  TsDebugOp *op = ts_debug_op_read(v, fds, &error);
  expect(op != NULL, error, "a debugger history entry");
  if (op)
    check_debug_op(op);
  ts_debug_op_free(op);
  g_clear_error(&error);
}

/* The graph the app shows, which GetOptimized's origins refer to. */
static ts_tensor *traced_body(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0);
  return ts_add(ts_mul(x, x), ts_tanh(x));
}

static const ts_graph *traced_graph(void)
{
  static ts_function *fn;
  static const ts_graph *g;
  if (!fn) {
    fn = ts_function_new("traced", traced_body, "x");
    ts_value arg = TS_SPEC_VALUE(TS_F32, TS_SHAPE(2));
    ts_concrete *cf = ts_function_get_concrete(fn, &arg, 1);
    if (!cf)
      fuzz_finding("cannot trace the graph GetOptimized replies refer to");
    g = ts_concrete_graph(cf);
  }
  return g;
}

static void optimized_reply(GVariant *v, GUnixFDList *fds)
{
  GError *error = NULL;
  TsWorkerOptimized *o = ts_worker_optimized_read(v, fds, traced_graph(), &error);
  expect(o != NULL, error, "a GetOptimized reply");
  ts_error_clear();
  if (o)
    free(ts_graph_to_text(o->graph));
  ts_worker_optimized_free(o);
  g_clear_error(&error);
}

/* ---- not GVariants ----------------------------------------------------------- */

/* The bytes as a fast channel area: an 8-byte length, then the message. */
static void fast_area(TsFastArea area, const char *type, const uint8_t *data, size_t size)
{
  static TsFastHeader *h;
  if (!h)
    h = g_malloc0(ts_fast_channel_size());
  guint8 *start = (guint8 *)h + TS_FAST_HEADER_SIZE + (area == TS_FAST_REPLY ? TS_FAST_AREA_SIZE : 0);
  memcpy(start, data, MIN(size, TS_FAST_AREA_SIZE));
  GError *error = NULL;
  GVariant *msg = ts_fast_get(h, area, type, "the message", &error);
  memset(start, 0, MIN(size, TS_FAST_AREA_SIZE));
  expect(msg != NULL, error, "a fast channel message");
  g_clear_error(&error);
  if (msg && area == TS_FAST_REPLY) {
    TsFastAnswer answer;
    gboolean ok = ts_worker_read_fast_reply(msg, 7, &answer, &error);
    expect(ok, error, "a fast reply");
    if (ok && answer.status == TS_FAST_OK)
      check_result(answer.result, answer.error, "a fast reply's result");
    else if (ok)
      ts_call_result_free(answer.result);
    if (ok && answer.status == TS_FAST_ERROR && (!answer.error || !answer.error->message))
      fuzz_finding("a fast reply with status error and no error");
    g_clear_error(&answer.error);
    g_clear_error(&error);
  }
  if (msg)
    g_variant_unref(msg);
}

static void crash_report(const uint8_t *data, size_t size)
{
  GError *error = NULL;
  TsCrashReport *report = ts_crash_report_parse((const char *)data, size, &error);
  expect(report != NULL, error, "a crash report");
  if (report)
    g_free(ts_crash_report_format_backtrace(report));
  ts_crash_report_free(report);
  g_clear_error(&error);
}

static void status_page(const uint8_t *data, size_t size)
{
  /* exactly the page's size: a reader that runs past a field runs past it */
  TsWorkerStatus *st = g_malloc0(sizeof *st);
  memcpy(st, data, MIN(size, sizeof *st));
  if (size >= sizeof st->magic)
    st->magic = TS_WORKER_STATUS_MAGIC; /* else almost every input is refused at once */
  TsWorkerDeath death = { 0 };
  ts_worker_read_status(st, &death);
  if (death.last_op && !g_utf8_validate(death.last_op, -1, NULL))
    fuzz_finding("a status page's last op is not UTF-8");
  g_free(death.last_op);
  g_free(st);
}

static void on_line(gpointer data, const char *text, gsize len, gsize cut)
{
  if (len > TS_OUTPUT_LINE_MAX)
    fuzz_finding("an output line of %zu bytes kept", len);
  unsigned sum = 0;
  for (gsize i = 0; i < len; i++)
    sum += (guint8)text[i];
  *(unsigned *)data += sum;
}

static void on_mark(gpointer data, guint call_id)
{
}

/* The bytes as pipe output, in chunks whose sizes the first byte picks. */
static void output(const uint8_t *data, size_t size)
{
  static const TsOutputLinesFuncs funcs = { on_line, on_mark };
  unsigned sum = 0;
  TsOutputLines *lines = ts_output_lines_new(&funcs, &sum);
  size_t chunk = size > 0 ? 1u + data[0] * 67u : 1;
  for (size_t at = size > 0 ? 1 : 0; at < size; at += chunk)
    ts_output_lines_feed(lines, (const char *)data + at, MIN(chunk, size - at));
  ts_output_lines_end(lines);
  ts_output_lines_free(lines);
}

/* What the worker reads from the app beside D-Bus's types: signatures and
 * specs (SetInputSignature, GetOptimized). */
static void signature(const uint8_t *data, size_t size)
{
  g_autofree char *text = g_strndup((const char *)data, size);
  g_auto(GStrv) parts = ts_signature_split(text);
  for (int i = 0; parts && parts[i]; i++) {
    ts_spec spec;
    if (ts_spec_parse(parts[i], &spec))
      g_free(ts_spec_to_string(&spec));
  }
  ts_spec spec;
  if (ts_spec_parse(text, &spec))
    g_free(ts_spec_to_string(&spec));
  if (fuzz_criticals > 0)
    fuzz_finding("a signature: a GLib critical");
}

/* ---- the table --------------------------------------------------------------- */

typedef struct {
  const char *type; /* the GVariant type, or NULL: raw bytes */
  void (*variant)(GVariant *v, GUnixFDList *fds);
  void (*raw)(const uint8_t *data, size_t size);
} Message;

static void fast_reply(const uint8_t *data, size_t size)
{
  fast_area(TS_FAST_REPLY, TS_FAST_REPLY_TYPE, data, size);
}

static void fast_request(const uint8_t *data, size_t size)
{
  fast_area(TS_FAST_REQUEST, TS_FAST_REQUEST_TYPE, data, size);
}

static const Message messages[FUZZ_MSG_COUNT] = {
  [FUZZ_MSG_CALL_REPLY] = { "(a{sv})", call_reply, NULL },
  [FUZZ_MSG_TRACE] = { "(ua{sv})", trace_signal, NULL },
  [FUZZ_MSG_OPEN_REPLY] = { "(ssa(sasas))", open_reply, NULL },
  [FUZZ_MSG_DEBUG_STOP] = { "a{sv}", debug_stop, NULL },
  [FUZZ_MSG_DEBUG_HISTORY] = { "a{sv}", debug_history, NULL },
  [FUZZ_MSG_OPTIMIZED] = { "(a{sv})", optimized_reply, NULL },
  [FUZZ_MSG_FAST_REPLY] = { NULL, NULL, fast_reply },
  [FUZZ_MSG_FAST_REQUEST] = { NULL, NULL, fast_request },
  [FUZZ_MSG_CRASH_REPORT] = { NULL, NULL, crash_report },
  [FUZZ_MSG_STATUS_PAGE] = { NULL, NULL, status_page },
  [FUZZ_MSG_OUTPUT] = { NULL, NULL, output },
  [FUZZ_MSG_SIGNATURE] = { NULL, NULL, signature },
};

/* fd 0 of a message: a sealed memfd as the worker passes them. */
static GUnixFDList *fd_list(void)
{
  int fd = memfd_create("fuzz-worker-fd", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  guint8 bytes[FD_BYTES];
  for (gsize i = 0; i < sizeof bytes; i++)
    bytes[i] = (guint8)(i * 37);
  if (fd < 0 || write(fd, bytes, sizeof bytes) != (ssize_t)sizeof bytes)
    fuzz_finding("cannot make a memfd");
  fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  GUnixFDList *fds = g_unix_fd_list_new_from_array(&fd, 1);
  return fds;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_begin_input();
  if (size < 1)
    return 0;
  const Message *m = &messages[data[0] % FUZZ_MSG_COUNT];
  data++;
  size--;
  if (m->raw) {
    m->raw(data, size);
  } else {
    GBytes *bytes = g_bytes_new(data, size);
    GVariant *v = g_variant_ref_sink(g_variant_new_from_bytes(G_VARIANT_TYPE(m->type), bytes, FALSE));
    GVariant *normal = g_variant_get_normal_form(v);
    GUnixFDList *fds = fd_list();
    m->variant(normal, fds);
    g_object_unref(fds);
    g_variant_unref(normal);
    g_variant_unref(v);
    g_bytes_unref(bytes);
  }
  ts_error_clear();
  ts_release_all();
  return 0;
}
