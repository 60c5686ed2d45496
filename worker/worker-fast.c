/* worker-fast.c — the worker's end of the fast call channel: a thread
 * that waits for a request (spinning a little after each, then asleep on
 * the futex), makes the call through the service's Call (one
 * implementation, two transports) and puts the reply in place.  Signals
 * the call emitted are flushed onto the connection first, and the reply
 * says how many there were so far: the app gives out the result after
 * them.  An answer that carries fds or does not fit is kept for
 * TakeFastReply. */
#include "worker-fast.h"

#include <unistd.h>

#include "crash-handler.h"
#include "ts-fast-channel.h"
#include "worker-fds.h"

#define SPIN_MAX_NS 150000u /* after a call the thread spins at most this long for the next */
#define SLICE_MS 100    /* asleep, it looks this often whether it is to stop */

struct WorkerFast {
  WorkerService *service;
  TsFastHeader *h;
  int fd;
  GThread *thread;
  int quit;
};

static GVariant *reply(guint32 call_id, guint32 n_signals, TsFastStatus status, const GError *error,
                       GVariant *result)
{
  g_autofree char *name = error ? g_dbus_error_encode_gerror(error) : NULL;
  return g_variant_ref_sink(g_variant_new("(uuuss@a{sv})", call_id, n_signals, (guint32)status,
                                          name ? name : "", error ? error->message : "",
                                          result ? result : g_variant_new("a{sv}", NULL)));
}

/* The answer of the request in the channel, as a reply. */
static GVariant *serve(WorkerFast *f)
{
  WorkerService *s = f->service;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) request = ts_fast_get(f->h, TS_FAST_REQUEST, TS_FAST_REQUEST_TYPE, "the request", &error);
  if (!request)
    return reply(0, worker_service_signals_emitted(s), TS_FAST_ERROR, error, NULL);
  guint32 call_id;
  g_variant_get_child(request, 0, "u", &call_id);
  guint before = worker_service_signals_emitted(s);
  WorkerAnswer *a = worker_service_fast_call(s, request);
  guint n_signals = worker_service_signals_emitted(s);
  /* the call's signals are on their way before its reply */
  if (n_signals != before)
    g_dbus_connection_flush_sync(worker_service_connection(s), NULL, NULL);
  GVariant *r;
  if (worker_answer_error(a)) {
    r = reply(call_id, n_signals, TS_FAST_ERROR, worker_answer_error(a), NULL);
  } else {
    g_autoptr(GVariant) result = g_variant_get_child_value(worker_answer_value(a), 0);
    r = reply(call_id, n_signals, TS_FAST_OK, NULL, result);
  }
  if (worker_answer_has_fds(a) || g_variant_get_size(r) > TS_FAST_AREA_SIZE - 8) {
    g_variant_unref(r);
    worker_service_defer(s, call_id, a);
    r = reply(call_id, n_signals, TS_FAST_DEFERRED, NULL, NULL);
  }
  worker_answer_free(a);
  return r;
}

static gpointer fast_main(gpointer data)
{
  WorkerFast *f = data;
  ts_crash_handler_thread_init(); /* a stack overflow here is reported too */
  /* where a call is goes on the status page, as for the main thread's */
  ts_watch_ops((ts_op_watch *)worker_service_last_op(f->service));
  guint32 seen = 0; /* the channel starts zeroed: the first request is 1 */
  TsFastSpin spin = { SPIN_MAX_NS, SPIN_MAX_NS, 0 };
  gboolean idle = TRUE; /* no spinning before the first call, nor after a slice without one */
  while (!__atomic_load_n(&f->quit, __ATOMIC_ACQUIRE)) {
    if (!ts_fast_wait(&f->h->request_seq, &f->h->worker_waiting, seen, idle ? NULL : &spin, SLICE_MS)) {
      idle = TRUE;
      continue;
    }
    idle = FALSE;
    seen = __atomic_load_n(&f->h->request_seq, __ATOMIC_ACQUIRE);
    g_autoptr(GVariant) r = serve(f);
    ts_fast_put(f->h, TS_FAST_REPLY, r); /* it fits: serve made sure */
    ts_fast_post(&f->h->reply_seq, &f->h->app_waiting, seen);
  }
  ts_watch_ops(NULL);
  return NULL;
}

WorkerFast *worker_fast_new(WorkerService *service, GError **error)
{
  WorkerFast *f = g_new0(WorkerFast, 1);
  f->service = service;
  if (!(f->h = ts_fast_channel_create(&f->fd, error))) {
    g_free(f);
    return NULL;
  }
  /* a module writing to low fds would write over the channel's header */
  int high = worker_fd_move_high(f->fd);
  if (high >= 0)
    f->fd = high;
  /* its name is the profiler's track name for the calls it makes */
  f->thread = g_thread_new("calls", fast_main, f);
  return f;
}

int worker_fast_fd(WorkerFast *f)
{
  return f->fd;
}

void worker_fast_free(WorkerFast *f)
{
  if (!f)
    return;
  __atomic_store_n(&f->quit, 1, __ATOMIC_RELEASE);
  ts_fast_wake(&f->h->request_seq);
  g_thread_join(f->thread);
  ts_fast_channel_unmap(f->h);
  close(f->fd);
  g_free(f);
}
