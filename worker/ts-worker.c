/* ts-worker.c — one tracescope-worker process, seen from the app.
 *
 * Three channels come from the process: the D-Bus connection (replies and
 * signals), its stdout/stderr pipes (lines, with call marks), and at its
 * end the crash pipe and the status page.  A call completes when its reply
 * and its end marks on both pipes are in, so every line it printed is
 * delivered first.  The death is reported once the process is reaped
 * (its process group killed, what its pipes hold read then, not at their
 * ends: a descendant may hold them), so the report and the last lines agree.
 *
 * The pipe readers hold the object: it lives until its process has ended
 * and been reported, so an owner done with it calls ts_worker_close().
 *
 * A Call made while nothing else is in flight goes over the fast channel
 * (ts-fast-channel.h) when the worker gave one: the same request and
 * result as the D-Bus Call, in shared memory.  Its reply is waited for by a
 * helper thread (async) or by the caller (ts_worker_call_sync); either way
 * the call completes on the main context like a D-Bus one, after the
 * signals the worker had sent before its reply and after its end marks. */
#include "ts-worker.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <gio/gunixinputstream.h>
#include <glib-unix.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ts-crash-report.h"
#include "ts-fast-channel.h"
#include "ts-output-lines.h"
#include "ts-worker-messages.h"
#include "ts-worker-private.h"
#include "ts-worker-protocol.h"
#include "ts-worker-blob.h"
#include "ts-worker-tensor.h"
#include "ts-worker-remote.h"

#define CANCEL_GRACE_MS 2000 /* a call has this long to stop after Cancel */
#define WATCH_MS 50          /* resident memory is checked this often during a call */
#define CRASH_MAX (4u << 20) /* a crash report is cut at 4 MiB */
#define FAST_SPIN_NS 100000u /* a fast call's reply is spun for at most this long before sleeping */
#define FAST_SLICE_MS 20     /* asleep, a waiter looks this often whether the worker died */
#define CRASH_READ_MAX (64u << 10) /* a dispatch reads at most this much of the crash pipe */
/* at the worker's death a pipe is read up to this: what a pipe holds at most (pipe-max-size) */
#define DEATH_DRAIN_MAX (1u << 20)

typedef struct {
  TsWorker *self;            /* borrowed: the task holds a reference */
  GTask *task;
  guint call_id;
  TsCallResult *result;
  GError *error;
  gboolean replied;
  gboolean ended[2];         /* its end mark on stdout, stderr */
  GCancellable *cancellable;
  gulong cancel_handler;
  guint grace;
  gboolean fast;             /* made over the fast channel */
  guint signals_needed;      /* the signals the worker had sent before its fast reply */
  gboolean signals_synced;   /* a Ping came back after them: no more are coming */
  guint sync_timer;          /* sends that Ping when they are slow to come */
} PendingCall;

/* The fast call channel, shared with its helper thread (refcounted: a
 * reply on its way to the main context holds it). */
typedef struct {
  TsFastHeader *h;
  GMainContext *context;     /* where replies are handled */
  TsWorker *self;            /* NULL once the worker is disposed (main thread) */
  guint32 seq;               /* the last request's number (main thread) */
  guint32 replied;           /* the last reply's number (main thread; the helper reads it) */
  gboolean busy;             /* a request is out (main thread) */
  gboolean broken;           /* it said something wrong: calls go over D-Bus (main thread) */
  GThread *helper;           /* waits for the replies of async calls */
  guint32 helper_seq;        /* futex: the request the helper is to wait for */
  guint32 helper_waiting;    /* 1: the helper sleeps on helper_seq */
  int stop;                  /* the worker is gone: waiters give up */
  TsFastSpin spin;           /* the caller's spin for a reply (ts_worker_call_sync) */
} FastChannel;

typedef struct {
  TsWorker *self;
  int stream;                /* 0 stdout, 1 stderr */
} OutStream;

struct _TsWorker {
  GObject parent_instance;
  guint64 memory_limit;
  GSubprocess *process;
  GPid pid;
  GDBusConnection *connection;
  guint subscription;
  TsWorkerStatus *status;
  GCancellable *io;              /* the pipe readers, until dispose */
  int out_fd[2];                 /* stdout, stderr: the pipes' read ends (the process's) */
  guint out_watch[2];
  guint death_drain;             /* after the death, the pipes are read from an idle (finish_pipes) */
  gboolean death_reads[2];       /* this pipe is (it was open at the death) */
  gsize death_left[2];           /* what each may still give then */
  OutStream out_ctx[2];          /* what the line readers are given */
  TsOutputLines *out_lines[2];   /* the pipes' lines and marks */
  gboolean out_opened[2];        /* Open's mark seen on stdout, stderr */
  GByteArray *crash;
  int crash_fd;                  /* the crash pipe's read end, -1 once closed */
  guint crash_watch;
  GQueue calls;                  /* PendingCall *, oldest first */
  guint watch;
  gboolean reaped, crash_done, out_done[2];
  int wait_status;
  gboolean killed_hung, killed_oom, closing;
  gboolean dying;                /* the crash report is being read */
  char *executable;              /* NULL: worker_path() */
  char **environment;            /* the worker's, set before start (NULL: the app's) */
  TsWorkerDeath *death;
  FastChannel *fast;             /* NULL: calls go over D-Bus */
  gboolean no_fast;              /* ts_worker_set_fast_calls(FALSE) */
  guint n_fast_calls;
  guint n_signals;               /* signals received from the worker */
  guint n_methods;               /* Open, SetInputSignature in flight: a Call after them waits its turn on D-Bus */
  gboolean loading;              /* Open in flight (or cut off by a death): a death is one while loading */
  GInputStream *out_stream[2];   /* stdout, stderr as streams (out_fd[] are theirs) */
  char *remote;                  /* "[user@]host[:port]": the worker runs there, over ssh; NULL: here */
  TsRemoteLink *link;            /* the remote worker's link (ts-worker-remote.h) */
  gboolean exited;               /* the process is reaped (reaped: and a remote one's link has ended) */
  gboolean link_ended;           /* all it carried is in the local fds */
  gboolean link_lost;            /* it ended without the worker's death: the connection was lost */
  GTask *start_task;             /* a remote start waiting for the banner */
  GQueue orphans;                /* GTask *: methods the worker's death cut off, failed with it once told */
};

enum { SIGNAL_TRACE, SIGNAL_WARNING, SIGNAL_PRINT, SIGNAL_PROGRESS, SIGNAL_TRANSFER, SIGNAL_OUTPUT,
       SIGNAL_MODULE_CHANGED, SIGNAL_DIED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TsWorker, ts_worker, G_TYPE_OBJECT)
G_DEFINE_BOXED_TYPE(TsWorkerDeath, ts_worker_death, ts_worker_death_copy, ts_worker_death_free)

/* ---- plain data ------------------------------------------------------------------ */

TsWorkerDeath *ts_worker_death_copy(const TsWorkerDeath *d)
{
  TsWorkerDeath *c = g_memdup2(d, sizeof *d);
  c->summary = g_strdup(d->summary);
  c->backtrace = g_strdup(d->backtrace);
  c->last_op = g_strdup(d->last_op);
  return c;
}

void ts_worker_death_free(TsWorkerDeath *d)
{
  if (!d)
    return;
  g_free(d->summary);
  g_free(d->backtrace);
  g_free(d->last_op);
  g_free(d);
}

void ts_call_result_free(TsCallResult *r)
{
  if (!r)
    return;
  g_free(r->value_text);
  g_free(r->shape_text);
  g_free(r->device);
  g_clear_pointer(&r->data, g_bytes_unref);
  for (guint i = 0; i < r->n_results; i++) {
    g_free(r->results[i].value_text);
    g_free(r->results[i].shape_text);
    g_free(r->results[i].device);
    g_clear_pointer(&r->results[i].data, g_bytes_unref);
  }
  g_free(r->results);
  g_clear_pointer(&r->profile, g_bytes_unref);
  g_clear_pointer(&r->compare, g_variant_unref);
  g_free(r);
}

void ts_worker_trace_free(TsWorkerTrace *t)
{
  if (!t)
    return;
  g_free(t->function);
  g_free(t->signature);
  g_free(t->pretty_signature);
  g_free(t->reason_text);
  g_free(t->error);
  ts_graph_free(t->graph);
  g_free(t);
}

void ts_worker_function_free(TsWorkerFunction *fn)
{
  if (!fn)
    return;
  g_free(fn->name);
  g_strfreev(fn->params);
  g_strfreev(fn->examples);
  g_free(fn);
}

/* ---- finding the executable ---------------------------------------------------------- */

/* $TRACESCOPE_WORKER, else the build tree's, else the installed one. */
static const char *worker_path(void)
{
  const char *env = g_getenv("TRACESCOPE_WORKER");
  if (env && *env)
    return env;
  if (g_file_test(TS_WORKER_BUILD_PATH, G_FILE_TEST_IS_EXECUTABLE))
    return TS_WORKER_BUILD_PATH;
  return TS_WORKER_INSTALL_PATH;
}

/* ---- calls -------------------------------------------------------------------------- */

static void pending_free(PendingCall *pc)
{
  if (pc->cancel_handler)
    g_cancellable_disconnect(pc->cancellable, pc->cancel_handler);
  g_clear_object(&pc->cancellable);
  g_clear_handle_id(&pc->grace, g_source_remove);
  g_clear_handle_id(&pc->sync_timer, g_source_remove);
  ts_call_result_free(pc->result);
  g_clear_error(&pc->error);
  g_clear_object(&pc->task);
  g_free(pc);
}

static PendingCall *find_call(TsWorker *self, guint call_id)
{
  for (GList *l = self->calls.head; l; l = l->next)
    if (((PendingCall *)l->data)->call_id == call_id)
      return l->data;
  return NULL;
}

static void update_watch(TsWorker *self);

/* Completes pc with what it has (or error) and forgets it. */
static void call_return(TsWorker *self, PendingCall *pc, GError *error)
{
  g_queue_remove(&self->calls, pc);
  GTask *task = g_steal_pointer(&pc->task);
  if (error)
    g_task_return_error(task, error);
  else if (pc->error)
    g_task_return_error(task, g_steal_pointer(&pc->error));
  else
    g_task_return_pointer(task, g_steal_pointer(&pc->result), (GDestroyNotify)ts_call_result_free);
  g_object_unref(task);
  pending_free(pc);
  update_watch(self);
}

/* Every signal the worker had sent before its fast reply was delivered. */
static gboolean signals_in(TsWorker *self, PendingCall *pc)
{
  return (gint32)(self->n_signals - pc->signals_needed) >= 0;
}

/* A call completes once its reply, its end marks and the signals sent
 * before its reply are in. */
static void call_maybe_done(TsWorker *self, PendingCall *pc)
{
  if (!pc->replied || !pc->ended[0] || !pc->ended[1])
    return;
  if (!signals_in(self, pc)) {
    if (!pc->signals_synced)
      return;
    /* a Ping came back after them, and they did not come: the channel lies */
    if (self->fast)
      self->fast->broken = TRUE;
    g_clear_pointer(&pc->result, ts_call_result_free);
    g_clear_error(&pc->error);
    pc->error = g_error_new(TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                            "the worker said %u signals came before the result of call %u; %u came",
                            pc->signals_needed, pc->call_id, self->n_signals);
  }
  call_return(self, pc, NULL);
}

/* A blob of a Call result that may be read (ts-worker-blob.h): the values
 * exactly what their dtype and shape say, a profile up to
 * TS_WORKER_PROFILE_MAX; nothing else.  Checked before room is made. */
static gboolean result_blob_allowed(const char *key, guint64 size, GVariant *dict, GError **error)
{
  if (strcmp(key, "data") == 0) {
    GVariantDict d;
    g_variant_dict_init(&d, dict);
    gsize expected = 0;
    gboolean ok = ts_worker_tensor_size(&d, "a Call result", &expected, error);
    g_variant_dict_clear(&d);
    if (ok && size != expected)
      g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                  "a Call result of %" G_GUINT64_FORMAT " bytes where its shape says %zu", size, expected);
    return ok && size == expected;
  }
  if (strcmp(key, "profile") == 0 && size <= TS_WORKER_PROFILE_MAX)
    return TRUE;
  g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL, "a Call result with a %s of %" G_GUINT64_FORMAT
              " bytes to read: not one it may have", key, size);
  return FALSE;
}

/* data: the call's task, alive while its blobs are read */
static void on_transfer(guint64 received, guint64 total, gpointer data)
{
  TsWorker *self = g_task_get_source_object(data);
  PendingCall *pc = g_task_get_task_data(data);
  if (g_queue_find(&self->calls, pc)) /* not failed meanwhile (the worker died) */
    g_signal_emit(self, signals[SIGNAL_TRANSFER], 0, pc->call_id, received, total);
}

static void on_blobs_fetched(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  TsWorker *self = g_task_get_source_object(task);
  PendingCall *pc = g_task_get_task_data(task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) dict = ts_blob_fetch_finish(res, &error);
  if (!g_queue_find(&self->calls, pc))
    return; /* already failed (the worker died) */
  if (dict) {
    g_autoptr(GVariant) reply = g_variant_ref_sink(g_variant_new("(@a{sv})", dict));
    pc->result = ts_worker_read_result(reply, NULL, pc->call_id, &pc->error);
  } else if (self->connection && g_dbus_connection_is_closed(self->connection)) {
    return; /* the worker is gone: the death report fails the call */
  } else {
    pc->error = g_steal_pointer(&error);
  }
  pc->replied = TRUE;
  call_maybe_done(self, pc);
}

static void on_call_reply(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  TsWorker *self = g_task_get_source_object(task);
  PendingCall *pc = g_task_get_task_data(task);
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_finish(G_DBUS_CONNECTION(source),
                                                                             &fds, res, &error);
  if (!g_queue_find(&self->calls, pc))
    return; /* already failed (the worker died) */
  if (!reply && self->connection && g_dbus_connection_is_closed(self->connection))
    return; /* the worker is gone: the death report fails the call */
  g_autoptr(GVariant) dict = reply && g_variant_is_of_type(reply, G_VARIANT_TYPE("(a{sv})"))
                               ? g_variant_get_child_value(reply, 0) : NULL;
  if (dict && ts_blob_dict_has_blobs(dict)) {
    /* a remote worker's large result: read in chunks before the call completes */
    ts_blob_fetch_async(G_DBUS_CONNECTION(source), dict, result_blob_allowed, pc->cancellable,
                        on_transfer, task, on_blobs_fetched, g_object_ref(task));
    return;
  }
  if (reply)
    pc->result = ts_worker_read_result(reply, fds, pc->call_id, &pc->error);
  else {
    g_dbus_error_strip_remote_error(error);
    pc->error = g_steal_pointer(&error);
  }
  pc->replied = TRUE;
  call_maybe_done(self, pc);
}

/* ---- the fast channel -------------------------------------------------------------- */

static FastChannel *fast_ref(FastChannel *ch)
{
  return g_atomic_rc_box_acquire(ch);
}

static void fast_clear(FastChannel *ch)
{
  ts_fast_channel_unmap(ch->h);
  g_main_context_unref(ch->context);
}

static void fast_unref(FastChannel *ch)
{
  g_atomic_rc_box_release_full(ch, (GDestroyNotify)fast_clear);
}

/* The worker is gone (or the object is): whoever waits for a reply gives up. */
static void fast_stop(FastChannel *ch)
{
  if (!ch)
    return;
  __atomic_store_n(&ch->stop, 1, __ATOMIC_SEQ_CST);
  /* changed, so that a helper about to sleep on it does not */
  __atomic_add_fetch(&ch->helper_seq, 1, __ATOMIC_SEQ_CST);
  ts_fast_wake(&ch->h->reply_seq);
  ts_fast_wake(&ch->helper_seq);
}

/* The reply to the last request, checked: its number, then its bytes. */
static GVariant *fast_read_reply(FastChannel *ch, guint32 seq, GError **error)
{
  guint32 got = __atomic_load_n(&ch->h->reply_seq, __ATOMIC_ACQUIRE);
  if (got != seq) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_PROTOCOL,
                "the fast reply is numbered %u, the request was %u", got, seq);
    return NULL;
  }
  return ts_fast_get(ch->h, TS_FAST_REPLY, TS_FAST_REPLY_TYPE, "the reply", error);
}

static void on_signals_synced(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  TsWorker *self = g_task_get_source_object(task);
  PendingCall *pc = g_task_get_task_data(task);
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, NULL);
  if (!g_queue_find(&self->calls, pc))
    return;
  pc->signals_synced = TRUE;
  call_maybe_done(self, pc);
}

/* The signals sent before the reply are slow to come: a Ping comes back
 * after them (the connection keeps the order), so that a worker that
 * claimed too many is found out. */
static gboolean on_sync_timer(gpointer data)
{
  PendingCall *pc = data;
  TsWorker *self = pc->self;
  pc->sync_timer = 0;
  if (self->connection && !g_dbus_connection_is_closed(self->connection))
    g_dbus_connection_call(self->connection, NULL, TS_WORKER_PATH, "org.freedesktop.DBus.Peer", "Ping",
                           NULL, NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, on_signals_synced,
                           g_object_ref(pc->task));
  return G_SOURCE_REMOVE;
}

static gboolean drain_output(TsWorker *self, int stream, gsize max_bytes, gsize *total);

/* Main thread: the fast reply of the call in flight (or why it is not one). */
static void fast_reply_arrived(TsWorker *self, GVariant *reply, GError *error)
{
  FastChannel *ch = self->fast;
  ch->busy = FALSE;
  __atomic_store_n(&ch->replied, ch->seq, __ATOMIC_RELEASE);
  PendingCall *pc = g_queue_peek_head(&self->calls);
  if (!pc || !pc->fast || pc->replied) {
    g_clear_error(&error);
    return; /* failed already: the worker died */
  }
  TsFastAnswer answer = { 0 };
  if (reply)
    ts_worker_read_fast_reply(reply, pc->call_id, &answer, &error);
  if (error) {
    ch->broken = TRUE; /* what else it says cannot be trusted: calls go over D-Bus */
    pc->error = error;
    pc->replied = TRUE;
    call_maybe_done(self, pc);
    return;
  }
  pc->signals_needed = answer.n_signals;
  if (!signals_in(self, pc))
    pc->sync_timer = g_timeout_add(50, on_sync_timer, pc);
  if (answer.status == TS_FAST_DEFERRED) {
    /* the answer waits in the worker: over D-Bus, with its fds */
    g_dbus_connection_call_with_unix_fd_list(self->connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE,
                                             "TakeFastReply", g_variant_new("(u)", pc->call_id),
                                             G_VARIANT_TYPE("(a{sv})"), G_DBUS_CALL_FLAGS_NONE, -1, NULL,
                                             NULL, on_call_reply, g_object_ref(pc->task));
    return;
  }
  pc->result = answer.result;
  pc->error = answer.error;
  /* its lines and marks are in the pipes already: no need to wait for the
   * loop (after a flood, the watch reads the rest a dispatch at a time) */
  for (int s = 0; s < 2; s++)
    if (!pc->ended[s] && self->out_watch[s]) {
      gsize n;
      drain_output(self, s, TS_WORKER_OUTPUT_READ_MAX, &n);
    }
  if (g_queue_find(&self->calls, pc)) {
    pc->replied = TRUE;
    call_maybe_done(self, pc);
  }
}

typedef struct {
  FastChannel *ch;
  GVariant *reply;
  GError *error;
} FastReply;

static void fast_reply_free(FastReply *r)
{
  fast_unref(r->ch);
  g_clear_pointer(&r->reply, g_variant_unref);
  g_clear_error(&r->error);
  g_free(r);
}

static gboolean on_fast_reply(gpointer data)
{
  FastReply *r = data;
  if (r->ch->self)
    fast_reply_arrived(r->ch->self, g_steal_pointer(&r->reply), g_steal_pointer(&r->error));
  return G_SOURCE_REMOVE;
}

/* The helper thread: for each async request (helper_seq), waits for the
 * reply and hands it to the main context. */
static gpointer fast_helper_main(gpointer data)
{
  FastChannel *ch = data;
  guint32 done = 0;
  for (;;) {
    guint32 job = __atomic_load_n(&ch->helper_seq, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE))
      break;
    if (job == done) {
      ts_fast_wait(&ch->helper_seq, &ch->helper_waiting, done, NULL, -1);
      continue;
    }
    guint32 old = __atomic_load_n(&ch->replied, __ATOMIC_ACQUIRE);
    while (!ts_fast_wait(&ch->h->reply_seq, &ch->h->app_waiting, old, NULL, FAST_SLICE_MS) &&
           !__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE))
      ;
    if (__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE))
      break;
    FastReply *r = g_new0(FastReply, 1);
    r->ch = fast_ref(ch);
    r->reply = fast_read_reply(ch, job, &r->error);
    /* an idle source, always: g_main_context_invoke would run it on this
     * thread when the main context happens to be free */
    GSource *idle = g_idle_source_new();
    g_source_set_priority(idle, G_PRIORITY_DEFAULT);
    g_source_set_callback(idle, on_fast_reply, r, (GDestroyNotify)fast_reply_free);
    g_source_attach(idle, ch->context);
    g_source_unref(idle);
    done = job;
  }
  return NULL;
}

/* The channel the worker passed, mapped, with its helper thread. */
static void fast_open(TsWorker *self, GUnixFDList *fds, GVariant *reply)
{
  gint32 index;
  guint32 area_size;
  g_variant_get(reply, "(hu)", &index, &area_size);
  if (!fds || index < 0 || index >= g_unix_fd_list_get_length(fds) || area_size != TS_FAST_AREA_SIZE)
    return;
  int fd = g_unix_fd_list_get(fds, index, NULL);
  if (fd < 0)
    return;
  g_autoptr(GError) error = NULL;
  TsFastHeader *h = ts_fast_channel_map(fd, &error);
  close(fd);
  if (!h) {
    g_message("the worker's fast call channel is not usable (calls go over D-Bus): %s", error->message);
    return;
  }
  FastChannel *ch = g_atomic_rc_box_new0(FastChannel);
  ch->h = h;
  ch->self = self;
  ch->context = g_main_context_ref_thread_default();
  ch->spin = (TsFastSpin){ FAST_SPIN_NS, FAST_SPIN_NS, 0 };
  ch->seq = ch->replied = __atomic_load_n(&h->reply_seq, __ATOMIC_ACQUIRE);
  ch->helper = g_thread_new("fast-call-reply", fast_helper_main, fast_ref(ch));
  self->fast = ch;
}

/* Main thread: the helper ends and the object lets go of the channel. */
static void fast_close(TsWorker *self)
{
  FastChannel *ch = g_steal_pointer(&self->fast);
  if (!ch)
    return;
  ch->self = NULL;
  fast_stop(ch);
  g_thread_join(ch->helper);
  fast_unref(ch); /* the helper's */
  fast_unref(ch);
}

/* Sends params over the fast channel if the call can go that way: the
 * channel is there and idle, nothing else is in flight (so the order of
 * calls and methods, and of the calls' output, stays), the request fits. */
static gboolean fast_send(TsWorker *self, GVariant *params)
{
  FastChannel *ch = self->fast;
  if (!ch || ch->broken || ch->busy || self->no_fast || self->calls.length > 0 || self->n_methods > 0 ||
      !ts_fast_put(ch->h, TS_FAST_REQUEST, params))
    return FALSE;
  ch->busy = TRUE;
  ch->seq++;
  self->n_fast_calls++;
  ts_fast_post(&ch->h->request_seq, &ch->h->worker_waiting, ch->seq);
  return TRUE;
}

/* The caller waits for the fast reply itself: spins, then sleeps in
 * slices, running the main context between them (a death, Cancel's grace
 * period, signals) until the reply is in or the call has failed. */
static void fast_wait_here(TsWorker *self, GAsyncResult **slot)
{
  FastChannel *ch = fast_ref(self->fast);
  guint32 seq = ch->seq;
  TsFastSpin *spin = &ch->spin;
  while (!*slot && !__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE)) {
    if (ts_fast_wait(&ch->h->reply_seq, &ch->h->app_waiting, ch->replied, spin, FAST_SLICE_MS)) {
      GError *error = NULL;
      GVariant *reply = fast_read_reply(ch, seq, &error);
      fast_reply_arrived(self, reply, error);
      g_clear_pointer(&reply, g_variant_unref);
      break;
    }
    spin = NULL; /* a long call: sleep in slices */
    while (g_main_context_iteration(ch->context, FALSE))
      ;
  }
  fast_unref(ch);
}

/* Kills the worker: the process here, or the far side's (which then tells
 * its death as a local one would). */
static void kill_worker(TsWorker *self)
{
  if (self->link && !self->link_ended)
    ts_remote_link_kill(self->link);
  else
    g_subprocess_force_exit(self->process);
}

static gboolean on_grace_over(gpointer data)
{
  PendingCall *pc = data;
  TsWorker *self = pc->self;
  pc->grace = 0;
  if (self->process && !self->reaped) {
    self->killed_hung = TRUE;
    kill_worker(self);
  }
  return G_SOURCE_REMOVE;
}

/* Asks the worker to stop the call at its next op; kills it if it has not
 * stopped when the grace period is over. */
static void on_call_cancelled(GCancellable *cancellable, gpointer data)
{
  PendingCall *pc = data;
  TsWorker *self = pc->self;
  if (self->connection && !g_dbus_connection_is_closed(self->connection))
    g_dbus_connection_call(self->connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, "Cancel",
                           g_variant_new("(u)", pc->call_id), NULL, G_DBUS_CALL_FLAGS_NONE, -1,
                           NULL, NULL, NULL);
  if (!pc->grace)
    pc->grace = g_timeout_add(CANCEL_GRACE_MS, on_grace_over, pc);
}

void ts_worker_call_async(TsWorker *self, guint call_id, const char *function,
                          const char *const *args, guint repeat, gboolean eager,
                          GCancellable *cancellable, GAsyncReadyCallback callback,
                          gpointer user_data)
{
  ts_worker_call_with_options_async(self, call_id, function, args, repeat, eager, NULL, cancellable,
                                    callback, user_data);
}

/* Starts a call: over the fast channel when it can go that way (the
 * helper waits for its reply unless `here`), else over D-Bus. */
static void call_start(TsWorker *self, guint call_id, const char *function, const char *const *args,
                       guint repeat, gboolean eager, GVariant *options, gboolean here,
                       GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr(GVariant) opts = options ? g_variant_ref_sink(options) : g_variant_ref_sink(g_variant_new("a{sv}", NULL));
  g_return_if_fail(TS_IS_WORKER(self) && function != NULL && args != NULL);
  GTask *task = g_task_new(self, NULL, callback, user_data);
  g_task_set_source_tag(task, ts_worker_call_async);
  if (!ts_worker_get_alive(self)) {
    g_task_return_new_error(task, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED, "the worker is not running");
    g_object_unref(task);
    return;
  }
  PendingCall *pc = g_new0(PendingCall, 1);
  pc->self = self;
  pc->task = task;
  pc->call_id = call_id;
  g_task_set_task_data(task, pc, NULL);
  g_autoptr(GVariant) params =
    g_variant_ref_sink(g_variant_new("(us^asub@a{sv})", call_id, function, args, repeat, eager, opts));
  pc->fast = fast_send(self, params);
  g_queue_push_tail(&self->calls, pc);
  if (pc->fast && !here) {
    ts_fast_post(&self->fast->helper_seq, &self->fast->helper_waiting, self->fast->seq);
  } else if (!pc->fast) {
    g_dbus_connection_call_with_unix_fd_list(self->connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE,
                                             "Call", params, G_VARIANT_TYPE("(a{sv})"), G_DBUS_CALL_FLAGS_NONE,
                                             G_MAXINT, NULL, NULL, on_call_reply, g_object_ref(task));
  }
  if (cancellable) {
    pc->cancellable = g_object_ref(cancellable);
    pc->cancel_handler = g_cancellable_connect(cancellable, G_CALLBACK(on_call_cancelled), pc, NULL);
  }
  update_watch(self);
}

void ts_worker_call_with_options_async(TsWorker *self, guint call_id, const char *function,
                                       const char *const *args, guint repeat, gboolean eager,
                                       GVariant *options, GCancellable *cancellable,
                                       GAsyncReadyCallback callback, gpointer user_data)
{
  call_start(self, call_id, function, args, repeat, eager, options, FALSE, cancellable, callback, user_data);
}

static void store_result(GObject *source, GAsyncResult *res, gpointer data)
{
  *(GAsyncResult **)data = g_object_ref(res);
}

TsCallResult *ts_worker_call_sync(TsWorker *self, guint call_id, const char *function,
                                  const char *const *args, guint repeat, gboolean eager, GVariant *options,
                                  GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail(TS_IS_WORKER(self), NULL);
  GAsyncResult *slot = NULL;
  call_start(self, call_id, function, args, repeat, eager, options, TRUE, cancellable, store_result, &slot);
  PendingCall *pc = g_queue_peek_tail(&self->calls);
  if (!slot && pc && pc->call_id == call_id && pc->fast)
    fast_wait_here(self, &slot);
  while (!slot)
    g_main_context_iteration(g_main_context_get_thread_default(), TRUE);
  TsCallResult *r = ts_worker_call_finish(self, slot, error);
  g_object_unref(slot);
  return r;
}

TsCallResult *ts_worker_call_finish(TsWorker *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self), NULL);
  g_autoptr(GError) local = NULL;
  TsCallResult *r = g_task_propagate_pointer(G_TASK(result), &local);
  if (!r) {
    /* a call cancelled in time ends the way cancelled calls do */
    if (g_error_matches(local, TS_ENGINE_ERROR, TS_ERR_CANCELLED))
      g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
    else
      g_propagate_error(error, g_steal_pointer(&local));
  }
  return r;
}

/* ---- memory watch ---------------------------------------------------------------------- */

static guint64 resident_bytes(GPid pid)
{
  g_autofree char *path = g_strdup_printf("/proc/%d/statm", (int)pid);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    return 0;
  guint64 size = 0, resident = 0;
  if (sscanf(text, "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT, &size, &resident) != 2)
    return 0;
  return resident * (guint64)sysconf(_SC_PAGESIZE);
}

static gboolean on_watch(gpointer data)
{
  TsWorker *self = data;
  if (self->process && !self->reaped && resident_bytes(self->pid) > self->memory_limit) {
    self->killed_oom = TRUE;
    g_subprocess_force_exit(self->process);
    self->watch = 0;
    return G_SOURCE_REMOVE;
  }
  return G_SOURCE_CONTINUE;
}

/* The resident size is watched while calls are in flight: the address
 * space limit alone does not hold where sanitizers run the worker. */
static void update_watch(TsWorker *self)
{
  /* a remote worker's limit is its address space there (--memory-limit) */
  gboolean want = self->memory_limit > 0 && self->calls.length > 0 && !self->reaped && !self->remote;
  if (want && !self->watch)
    self->watch = g_timeout_add(WATCH_MS, on_watch, self);
  else if (!want)
    g_clear_handle_id(&self->watch, g_source_remove);
}

/* ---- death ----------------------------------------------------------------------------- */

static char *format_bytes(guint64 n)
{
  return g_format_size_full(n, G_FORMAT_SIZE_IEC_UNITS);
}

/* loading: it crashed while it opened the module (a constructor). */
static char *crash_summary(const TsCrashReport *report, int sig, gboolean loading)
{
  const char *crashed = loading ? "crashed while loading the module" : "crashed";
  if (report && report->description)
    return g_strdup_printf("%s: %s (%s)", crashed, report->signal_name, report->description);
  return g_strdup_printf("%s: %s (%s)", crashed, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
                         sigdescr_np(sig) ? sigdescr_np(sig) : "unknown signal");
}

/* The limit it reached: the app's watch of its resident size, or the
 * address-space limit the crash report gives — the one the app set
 * (--memory-limit), or one the worker was started under (ulimit -v) when
 * that is lower or the app set none. */
static char *oom_summary(TsWorker *self, const TsCrashReport *report)
{
  guint64 limit = self->memory_limit;
  const char *which = "Preferences: worker memory limit";
  if (!self->killed_oom && report && report->as_limit && report->as_limit != self->memory_limit) {
    limit = report->as_limit;
    which = "the address-space limit it was started under: ulimit -v";
  }
  g_autofree char *size = format_bytes(limit);
  return g_strdup_printf("ran out of memory: the worker reached its limit of %s (%s)", size, which);
}

/* report: the crash report parsed, or NULL. */
static TsWorkerDeath *make_death(TsWorker *self, const TsCrashReport *report)
{
  TsWorkerDeath *d = g_new0(TsWorkerDeath, 1);
  if (self->status)
    ts_worker_read_status(self->status, d);
  if (report)
    d->backtrace = ts_crash_report_format_backtrace(report);
  int ws = self->wait_status;
  if (self->link_lost && !self->closing) {
    /* ssh's status, not the worker's: what happened to the worker is not known */
    d->summary = ts_remote_link_describe_failure(self->link, ws);
    return d;
  }
  d->signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
  d->out_of_memory = self->killed_oom || (report && report->out_of_memory);
  d->hung = self->killed_hung;
  if (d->out_of_memory) {
    d->summary = oom_summary(self, report);
  } else if (d->hung) {
    d->summary = g_strdup_printf("did not stop within %d s of Cancel: the worker was killed",
                                 CANCEL_GRACE_MS / 1000);
  } else if (d->exited) {
    d->summary = g_strdup_printf("called exit(%d)", d->exit_status);
  } else if (d->signal) {
    d->summary = crash_summary(report, d->signal, self->loading);
  } else if (self->closing) {
    d->expected = TRUE;
    d->summary = g_strdup("closed");
  } else {
    d->exit_status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    d->summary = g_strdup_printf("the worker exited with status %d", d->exit_status);
  }
  return d;
}

static void tell_death(TsWorker *self, const TsCrashReport *report)
{
  self->death = make_death(self, report);
  g_clear_handle_id(&self->watch, g_source_remove);
  /* the death is told first: what was in flight fails after */
  g_object_ref(self);
  g_signal_emit(self, signals[SIGNAL_DIED], 0, self->death);
  PendingCall *pc;
  while ((pc = g_queue_peek_head(&self->calls)) != NULL) {
    GError *error = g_error_new(TS_WORKER_ERROR, TS_WORKER_ERROR_DIED, "%s", self->death->summary);
    call_return(self, pc, error);
  }
  GTask *task;
  while ((task = g_queue_pop_head(&self->orphans)) != NULL) {
    g_task_return_new_error(task, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED, "%s", self->death->summary);
    g_object_unref(task);
  }
  g_object_unref(self);
}

/* Symbolising reads the debug info of every object the worker had mapped
 * (tens of ms each): it runs on a thread, not on the app's main thread. */
static void parse_crash_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  GByteArray *crash = data;
  TsCrashReport *report = ts_crash_report_parse((const char *)crash->data, crash->len, NULL);
  g_task_return_pointer(task, report, (GDestroyNotify)ts_crash_report_free);
}

static void on_crash_parsed(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(TsWorker) self = user_data;
  g_autoptr(TsCrashReport) report = g_task_propagate_pointer(G_TASK(res), NULL);
  tell_death(self, report);
}

/* Once the process is reaped and every pipe is drained. */
static void maybe_dead(TsWorker *self)
{
  if (self->death || self->dying || !self->reaped || !self->crash_done || !self->out_done[0] ||
      !self->out_done[1])
    return;
  if (self->crash->len == 0) {
    tell_death(self, NULL);
    return;
  }
  self->dying = TRUE;
  /* not the task's source object: the thread may drop the task last, and
   * the worker must go on the main thread */
  g_autoptr(GTask) task = g_task_new(NULL, NULL, on_crash_parsed, g_object_ref(self));
  g_task_set_task_data(task, g_byte_array_ref(self->crash), (GDestroyNotify)g_byte_array_unref);
  g_task_run_in_thread(task, parse_crash_thread);
}

static void finish_pipes(TsWorker *self);

/* The worker's descendants go with it: they are in its process group
 * (spawn), and whatever they hold (its pipes) does not hold up the report. */
static void kill_descendants(TsWorker *self)
{
  if (self->pid > 0)
    kill(-self->pid, SIGKILL);
}

static void start_failed_remote(TsWorker *self);

/* The process is reaped (a remote one: ssh, and its link has ended). */
static void process_gone(TsWorker *self)
{
  self->reaped = TRUE;
  if (self->link) {
    int ws;
    if (ts_remote_link_get_exit(self->link, &ws))
      self->wait_status = ws; /* the worker's, told by the far side */
    else
      self->link_lost = TRUE;
    if (self->start_task)
      start_failed_remote(self);
  }
  kill_descendants(self);
  if (self->fast)
    fast_stop(self->fast); /* its reply will not come */
  finish_pipes(self);
  maybe_dead(self);
}

static void on_wait(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(TsWorker) self = user_data;
  g_subprocess_wait_finish(G_SUBPROCESS(source), res, NULL);
  self->exited = TRUE;
  self->wait_status = g_subprocess_get_status(G_SUBPROCESS(source));
  if (!self->link || self->link_ended)
    process_gone(self);
}

/* A remote worker's link has carried all it will (main context). */
static void on_link_ended(gpointer data)
{
  g_autoptr(TsWorker) self = data; /* the reference spawn_remote took for it */
  self->link_ended = TRUE;
  if (self->exited)
    process_gone(self);
}

/* Reads what fd holds without blocking, at most max_bytes, handing each
 * chunk to take; *total: the bytes read.  FALSE at its end (an error ends
 * it too). */
static gboolean drain_fd(TsWorker *self, int fd, gsize max_bytes, gsize *total,
                         void (*take)(TsWorker *self, int stream, const char *data, gsize n), int stream)
{
  char buf[16384];
  for (*total = 0; *total < max_bytes;) {
    ssize_t n = read(fd, buf, MIN(sizeof buf, max_bytes - *total));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN)
      return TRUE;
    if (n <= 0)
      return FALSE;
    take(self, stream, buf, (gsize)n);
    *total += (gsize)n;
  }
  return TRUE; /* more may wait: the next dispatch reads on */
}

static void take_crash(TsWorker *self, int stream, const char *data, gsize n)
{
  if (self->crash->len < CRASH_MAX)
    g_byte_array_append(self->crash, (const guint8 *)data, MIN(n, CRASH_MAX - self->crash->len));
}

static void close_crash(TsWorker *self)
{
  g_clear_handle_id(&self->crash_watch, g_source_remove);
  if (self->crash_fd >= 0)
    close(self->crash_fd);
  self->crash_fd = -1;
  self->crash_done = TRUE;
}

static gboolean on_crash_ready(int fd, GIOCondition condition, gpointer data)
{
  TsWorker *self = data;
  gsize n;
  if (drain_fd(self, fd, CRASH_READ_MAX, &n, take_crash, 0) && !g_cancellable_is_cancelled(self->io))
    return G_SOURCE_CONTINUE;
  self->crash_watch = 0; /* removed by returning */
  close_crash(self);
  maybe_dead(self);
  return G_SOURCE_REMOVE;
}

/* The crash report as it comes: a large one fills the pipe before the
 * worker is done writing it. */
static void read_crash(TsWorker *self, int fd)
{
  self->crash_fd = fd;
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  self->crash_watch = g_unix_fd_add_full(G_PRIORITY_DEFAULT, fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_crash_ready,
                                         g_object_ref(self), g_object_unref);
}

/* ---- stdout and stderr ------------------------------------------------------------------ */

/* A mark: the call printed all it printed on this stream (call 0: Open). */
static void on_mark(gpointer data, guint call_id)
{
  OutStream *out = data;
  TsWorker *self = out->self;
  if (call_id == 0) {
    self->out_opened[out->stream] = TRUE;
    return;
  }
  PendingCall *pc = find_call(self, call_id);
  if (pc) {
    pc->ended[out->stream] = TRUE;
    call_maybe_done(self, pc);
  }
}

/* The call a line belongs to: the oldest one whose end it has not seen
 * (the worker makes them one at a time, in order); 0 before Open's mark. */
static guint line_call(TsWorker *self, int stream)
{
  if (!self->out_opened[stream])
    return 0;
  for (GList *l = self->calls.head; l; l = l->next)
    if (!((PendingCall *)l->data)->ended[stream])
      return ((PendingCall *)l->data)->call_id;
  return 0;
}

/* cut: bytes of the line left out after text, said at its end. */
static void on_line(gpointer data, const char *text, gsize len, gsize cut)
{
  OutStream *out = data;
  TsWorker *self = out->self;
  int stream = out->stream;
  g_autofree char *line = g_utf8_make_valid(text, (gssize)len);
  if (cut) {
    g_autofree char *whole = g_strdup_printf("%s … (%" G_GSIZE_FORMAT " more bytes not shown)", line, cut);
    g_signal_emit(self, signals[SIGNAL_OUTPUT], 0, line_call(self, stream), stream + 1, whole,
                  g_get_real_time());
    return;
  }
  g_signal_emit(self, signals[SIGNAL_OUTPUT], 0, line_call(self, stream), stream + 1, line, g_get_real_time());
}

static const TsOutputLinesFuncs out_funcs = { on_line, on_mark };

static void take_output(TsWorker *self, int stream, const char *data, gsize n)
{
  ts_output_lines_feed(self->out_lines[stream], data, n);
}

/* Reads what the pipe holds (it does not block), up to max_bytes, and
 * hands on its lines; at the pipe's end the last unfinished line too.
 * FALSE at the end.  A fast call's reply drains the pipes too: its marks
 * are in them already. */
static gboolean drain_output(TsWorker *self, int stream, gsize max_bytes, gsize *total)
{
  if (drain_fd(self, self->out_fd[stream], max_bytes, total, take_output, stream))
    return TRUE;
  ts_output_lines_end(self->out_lines[stream]);
  return FALSE;
}

static void close_output(TsWorker *self, int stream)
{
  g_clear_handle_id(&self->out_watch[stream], g_source_remove);
  self->out_done[stream] = TRUE;
  g_input_stream_close(self->out_stream[stream], NULL, NULL);
}

static gboolean on_output_ready(TsWorker *self, int stream)
{
  gsize n;
  if (drain_output(self, stream, TS_WORKER_OUTPUT_READ_MAX, &n) && !g_cancellable_is_cancelled(self->io))
    return G_SOURCE_CONTINUE;
  self->out_watch[stream] = 0; /* removed by returning */
  self->out_done[stream] = TRUE;
  maybe_dead(self);
  return G_SOURCE_REMOVE;
}

static gboolean on_stdout_ready(int fd, GIOCondition condition, gpointer self)
{
  return on_output_ready(self, 0);
}

static gboolean on_stderr_ready(int fd, GIOCondition condition, gpointer self)
{
  return on_output_ready(self, 1);
}

/* The pipe's lines as they come (the watch holds the object until its
 * end).  Below the redraw's priority: a module printing without end
 * leaves the app its frames. */
static void read_output(TsWorker *self, int stream, GInputStream *pipe)
{
  self->out_stream[stream] = g_object_ref(pipe);
  self->out_fd[stream] = g_unix_input_stream_get_fd(G_UNIX_INPUT_STREAM(pipe));
  fcntl(self->out_fd[stream], F_SETFL, fcntl(self->out_fd[stream], F_GETFL) | O_NONBLOCK);
  self->out_ctx[stream] = (OutStream){ self, stream };
  self->out_lines[stream] = ts_output_lines_new(&out_funcs, &self->out_ctx[stream]);
  self->out_watch[stream] = g_unix_fd_add_full(G_PRIORITY_DEFAULT_IDLE, self->out_fd[stream],
                                               G_IO_IN | G_IO_HUP | G_IO_ERR,
                                               stream == 0 ? on_stdout_ready : on_stderr_ready,
                                               g_object_ref(self), g_object_unref);
}

/* After the worker's death: a dispatch's share of what each pipe holds,
 * as during a flood, until it is empty or gave DEATH_DRAIN_MAX; then it
 * is closed, and the death told once both are. */
static gboolean on_death_drain(gpointer data)
{
  TsWorker *self = data;
  gboolean more = FALSE;
  for (int s = 0; s < 2; s++) {
    if (!self->death_reads[s] || self->out_done[s])
      continue;
    gsize max = MIN(TS_WORKER_OUTPUT_READ_MAX, self->death_left[s]), n;
    gboolean open = drain_output(self, s, max, &n);
    self->death_left[s] -= n;
    if (open && n == max && self->death_left[s] > 0) {
      more = TRUE;
      continue;
    }
    if (open) /* emptied, or it gave all it may: its unfinished line too */
      ts_output_lines_end(self->out_lines[s]);
    close_output(self, s);
  }
  if (more)
    return G_SOURCE_CONTINUE;
  self->death_drain = 0;
  maybe_dead(self);
  return G_SOURCE_REMOVE;
}

/* The worker is reaped: everything it wrote is in its pipes now.  The
 * crash report is read at once; stdout and stderr from an idle, a
 * dispatch's share at a time (on_death_drain), and closed once empty,
 * without waiting for their ends (a descendant may hold them open). */
static void finish_pipes(TsWorker *self)
{
  if (self->crash_fd >= 0) {
    gsize n;
    drain_fd(self, self->crash_fd, DEATH_DRAIN_MAX, &n, take_crash, 0);
    close_crash(self);
  }
  for (int s = 0; s < 2; s++) {
    if (!self->out_watch[s])
      continue;
    g_clear_handle_id(&self->out_watch[s], g_source_remove); /* the idle reads on */
    self->death_reads[s] = TRUE;
    self->death_left[s] = DEATH_DRAIN_MAX;
    if (!self->death_drain)
      self->death_drain =
        g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, on_death_drain, g_object_ref(self), g_object_unref);
  }
}

/* ---- signals from the worker ---------------------------------------------------------------- */

static void emit_signal(TsWorker *self, const char *name, GVariant *params);

static void on_signal(GDBusConnection *connection, const char *sender, const char *path,
                      const char *interface, const char *name, GVariant *params, gpointer user_data)
{
  TsWorker *self = user_data;
  g_autoptr(TsWorker) hold = g_object_ref(self);
  self->n_signals++; /* every one counts: the worker counts every one it sends */
  emit_signal(self, name, params);
  /* a fast call may have waited for this one */
  PendingCall *pc = g_queue_peek_head(&self->calls);
  if (pc && pc->replied)
    call_maybe_done(self, pc);
}

static void emit_signal(TsWorker *self, const char *name, GVariant *params)
{
  if (g_strcmp0(name, "Trace") == 0) {
    g_autoptr(TsWorkerTrace) t = ts_worker_read_trace(params);
    if (t)
      g_signal_emit(self, signals[SIGNAL_TRACE], 0, t);
  } else if (g_strcmp0(name, "Warning") == 0 && g_variant_is_of_type(params, G_VARIANT_TYPE("(uusss)"))) {
    guint call_id, kind;
    const char *function, *message, *arguments;
    g_variant_get(params, "(uu&s&s&s)", &call_id, &kind, &function, &message, &arguments);
    g_signal_emit(self, signals[SIGNAL_WARNING], 0, call_id, kind, function, message, arguments);
  } else if (g_strcmp0(name, "Print") == 0 && g_variant_is_of_type(params, G_VARIANT_TYPE("(us)"))) {
    guint call_id;
    const char *text;
    g_variant_get(params, "(u&s)", &call_id, &text);
    g_signal_emit(self, signals[SIGNAL_PRINT], 0, call_id, text);
  } else if (g_strcmp0(name, "Progress") == 0 && g_variant_is_of_type(params, G_VARIANT_TYPE("(ud)"))) {
    guint call_id;
    double fraction;
    g_variant_get(params, "(ud)", &call_id, &fraction);
    if (fraction >= 0.0 && fraction <= 1.0)
      g_signal_emit(self, signals[SIGNAL_PROGRESS], 0, call_id, fraction);
  } else if (g_strcmp0(name, "ModuleChanged") == 0 && g_variant_is_of_type(params, G_VARIANT_TYPE("(us)"))) {
    const char *path;
    g_variant_get(params, "(u&s)", NULL, &path);
    g_signal_emit(self, signals[SIGNAL_MODULE_CHANGED], 0, path);
  }
}

/* ---- starting ------------------------------------------------------------------------------- */

static int make_status_page(TsWorker *self, GError **error)
{
  int fd = memfd_create("tracescope-worker-status", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, sizeof(TsWorkerStatus)) != 0) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_SPAWN, "cannot make the status page: %s",
                g_strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  }
  void *map = mmap(NULL, sizeof(TsWorkerStatus), PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_SPAWN, "cannot map the status page: %s",
                g_strerror(errno));
    close(fd);
    return -1;
  }
  self->status = map;
  return fd;
}

static void own_group(gpointer data)
{
  setpgid(0, 0);
}

/* Starts the process with its fds; the app's end of the socket, or -1. */
static int spawn(TsWorker *self, GError **error)
{
  int sv[2], crash[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_SPAWN, "socketpair: %s", g_strerror(errno));
    return -1;
  }
  if (pipe2(crash, O_CLOEXEC) != 0) {
    g_set_error(error, TS_WORKER_ERROR, TS_WORKER_ERROR_SPAWN, "pipe: %s", g_strerror(errno));
    close(sv[0]);
    close(sv[1]);
    return -1;
  }
  int status_fd = make_status_page(self, error);
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_take_fd(launcher, sv[1], TS_WORKER_FD_DBUS);
  g_subprocess_launcher_take_fd(launcher, crash[1], TS_WORKER_FD_CRASH);
  if (status_fd >= 0)
    g_subprocess_launcher_take_fd(launcher, status_fd, TS_WORKER_FD_STATUS);
  if (self->environment)
    g_subprocess_launcher_set_environ(launcher, self->environment);
  /* a group of its own: its descendants are killed with it (kill_descendants) */
  g_subprocess_launcher_set_child_setup(launcher, own_group, NULL, NULL);
  g_autofree char *limit = g_strdup_printf("--memory-limit=%" G_GUINT64_FORMAT, self->memory_limit);
  const char *path = self->executable ? self->executable : worker_path();
  if (status_fd >= 0)
    self->process = g_subprocess_launcher_spawn(launcher, error, path, limit, NULL);
  if (!self->process) {
    g_prefix_error(error, "cannot start the worker (%s): ", path);
    close(sv[0]);
    close(crash[0]);
    return -1;
  }
  /* NULL when it has already ended (and been reaped) */
  const char *id = g_subprocess_get_identifier(self->process);
  self->pid = id ? atoi(id) : 0;
  g_subprocess_wait_async(self->process, NULL, on_wait, g_object_ref(self));
  read_output(self, 0, g_subprocess_get_stdout_pipe(self->process));
  read_output(self, 1, g_subprocess_get_stderr_pipe(self->process));
  read_crash(self, crash[0]);
  return sv[0];
}

static void on_link_ready(gpointer data, const GError *error);

/* Starts ssh with the remote worker (ts-worker-remote.h); FALSE on error. */
static gboolean spawn_remote(TsWorker *self, GError **error)
{
  int status_fd = make_status_page(self, error);
  if (status_fd < 0)
    return FALSE;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_NONE);
  if (self->environment)
    g_subprocess_launcher_set_environ(launcher, self->environment);
  g_subprocess_launcher_set_child_setup(launcher, own_group, NULL, NULL);
  self->link = ts_remote_link_start(self->remote, self->memory_limit, status_fd, launcher, on_link_ready,
                                    on_link_ended, g_object_ref(self), error);
  if (!self->link) {
    g_object_unref(self);
    return FALSE;
  }
  self->process = g_object_ref(ts_remote_link_get_process(self->link));
  const char *id = g_subprocess_get_identifier(self->process);
  self->pid = id ? atoi(id) : 0;
  g_subprocess_wait_async(self->process, NULL, on_wait, g_object_ref(self));
  for (int s = 0; s < 2; s++) {
    g_autoptr(GInputStream) in = g_unix_input_stream_new(ts_remote_link_steal_fd(self->link, s), TRUE);
    read_output(self, s, in);
  }
  read_crash(self, ts_remote_link_steal_fd(self->link, 2));
  return TRUE;
}

static void on_fast_channel(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  TsWorker *self = g_task_get_source_object(task);
  g_autoptr(GUnixFDList) fds = NULL;
  g_autoptr(GVariant) reply =
    g_dbus_connection_call_with_unix_fd_list_finish(G_DBUS_CONNECTION(source), &fds, res, NULL);
  /* a worker without one (an older one) makes every call over D-Bus */
  if (reply && !self->no_fast)
    fast_open(self, fds, reply);
  g_task_return_boolean(task, TRUE);
}

static void on_hello(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &error);
  if (!reply) {
    g_dbus_error_strip_remote_error(error);
    g_prefix_error(&error, "the worker did not answer: ");
    g_task_return_error(task, error);
    return;
  }
  g_dbus_connection_call_with_unix_fd_list(G_DBUS_CONNECTION(source), NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE,
                                           "OpenFastChannel", NULL, G_VARIANT_TYPE("(hu)"),
                                           G_DBUS_CALL_FLAGS_NONE, 10000, NULL, g_task_get_cancellable(task),
                                           on_fast_channel, g_object_ref(task));
}

/* The far side's answer to a remote start: anonymous D-Bus over the link
 * (ssh has authenticated; no fds travel). */
static gboolean allow_anonymous(GDBusAuthObserver *observer, const char *mechanism, gpointer data)
{
  return g_strcmp0(mechanism, "ANONYMOUS") == 0;
}

static void on_connected(GObject *source, GAsyncResult *res, gpointer user_data);

static void on_link_ready(gpointer data, const GError *error)
{
  TsWorker *self = data;
  if (!self->start_task)
    return;
  if (error && !*error->message)
    return; /* ssh ended before the banner: its status says why (start_failed_remote) */
  g_autoptr(GTask) task = g_steal_pointer(&self->start_task);
  if (error) {
    g_task_return_error(task, g_error_copy(error));
    self->closing = TRUE; /* not our worker: whatever answered goes with ssh */
    g_subprocess_force_exit(self->process);
    return;
  }
  g_autoptr(GDBusAuthObserver) observer = g_dbus_auth_observer_new();
  g_signal_connect(observer, "allow-mechanism", G_CALLBACK(allow_anonymous), NULL);
  g_autofree char *guid = g_dbus_generate_guid();
  g_dbus_connection_new(ts_remote_link_get_stream(self->link), guid,
                        G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_SERVER |
                          G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_ALLOW_ANONYMOUS |
                          G_DBUS_CONNECTION_FLAGS_DELAY_MESSAGE_PROCESSING,
                        observer, g_task_get_cancellable(task), on_connected, g_object_ref(task));
}

/* ssh ended before the far side said who it is: why, in words. */
static void start_failed_remote(TsWorker *self)
{
  g_autoptr(GTask) task = g_steal_pointer(&self->start_task);
  g_autofree char *why = ts_remote_link_describe_failure(self->link, self->wait_status);
  g_task_return_new_error(task, TS_WORKER_ERROR, TS_WORKER_ERROR_SPAWN, "%s", why);
}

static void on_connected(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  TsWorker *self = g_task_get_source_object(task);
  GError *error = NULL;
  GDBusConnection *connection = g_dbus_connection_new_finish(res, &error);
  if (!connection) {
    g_prefix_error(&error, "the worker did not connect: ");
    g_task_return_error(task, error);
    return;
  }
  self->connection = connection;
  g_dbus_connection_set_exit_on_close(connection, FALSE);
  self->subscription = g_dbus_connection_signal_subscribe(connection, NULL, TS_WORKER_INTERFACE, NULL,
                                                          TS_WORKER_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                                          on_signal, self, NULL);
  g_dbus_connection_start_message_processing(connection);
  g_dbus_connection_call(connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, "Hello",
                         g_variant_new("(u)", TS_WORKER_PROTOCOL_VERSION), G_VARIANT_TYPE("(ux)"),
                         G_DBUS_CALL_FLAGS_NONE, 10000, g_task_get_cancellable(task), on_hello,
                         g_object_ref(task));
}

void ts_worker_start_async(TsWorker *self, GCancellable *cancellable, GAsyncReadyCallback callback,
                           gpointer user_data)
{
  g_return_if_fail(TS_IS_WORKER(self) && self->process == NULL);
  g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, ts_worker_start_async);
  GError *error = NULL;
  if (self->remote) {
    if (!spawn_remote(self, &error))
      g_task_return_error(task, error);
    else
      self->start_task = g_steal_pointer(&task); /* the banner first: on_link_ready */
    return;
  }
  int fd = spawn(self, &error);
  if (fd < 0) {
    g_task_return_error(task, error);
    return;
  }
  g_autoptr(GSocket) socket = g_socket_new_from_fd(fd, &error);
  if (!socket) {
    close(fd);
    g_task_return_error(task, error);
    return;
  }
  g_autoptr(GSocketConnection) stream = g_socket_connection_factory_create_connection(socket);
  g_autofree char *guid = g_dbus_generate_guid();
  g_dbus_connection_new(G_IO_STREAM(stream), guid,
                        G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_SERVER |
                          G_DBUS_CONNECTION_FLAGS_DELAY_MESSAGE_PROCESSING,
                        NULL, cancellable, on_connected, g_object_ref(task));
}

gboolean ts_worker_start_finish(TsWorker *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
  return g_task_propagate_boolean(G_TASK(result), error);
}

/* ---- open and input signatures ------------------------------------------------------------- */

/* A method failed.  When the worker died (the connection closed under
 * it), it fails with what the death report says, once that is known:
 * TRUE then. */
static gboolean method_failed(TsWorker *self, GTask *task, GError *error)
{
  if (self->death || (self->connection && g_dbus_connection_is_closed(self->connection))) {
    g_error_free(error);
    if (self->death)
      g_task_return_new_error(task, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED, "%s", self->death->summary);
    else
      g_queue_push_tail(&self->orphans, g_object_ref(task));
    return TRUE;
  }
  g_dbus_error_strip_remote_error(error);
  g_task_return_error(task, error);
  return FALSE;
}

static void on_open_reply(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  TsWorker *self = g_task_get_source_object(task);
  self->n_methods--;
  GError *error = NULL;
  GVariant *reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &error);
  /* cut off by a death: the worker stays "loading" for its report */
  if (!reply) {
    if (!method_failed(self, task, error))
      self->loading = FALSE;
    return;
  }
  self->loading = FALSE;
  g_task_return_pointer(task, reply, (GDestroyNotify)g_variant_unref);
}

static gboolean check_alive(TsWorker *self, GTask *task)
{
  if (ts_worker_get_alive(self) && self->connection)
    return TRUE;
  g_task_return_new_error(task, TS_WORKER_ERROR, TS_WORKER_ERROR_DIED, "the worker is not running");
  return FALSE;
}

void ts_worker_open_async(TsWorker *self, const char *source, GCancellable *cancellable,
                          GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail(TS_IS_WORKER(self) && source != NULL);
  g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, ts_worker_open_async);
  if (!check_alive(self, task))
    return;
  self->n_methods++;
  self->loading = TRUE;
  g_dbus_connection_call(self->connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, "Open",
                         g_variant_new("(s)", source), G_VARIANT_TYPE("(ssa(sasas))"),
                         G_DBUS_CALL_FLAGS_NONE, G_MAXINT, cancellable, on_open_reply,
                         g_object_ref(task));
}

gboolean ts_worker_open_finish(TsWorker *self, GAsyncResult *result, char **title, char **path,
                               GPtrArray **functions, GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
  g_autoptr(GVariant) reply = g_task_propagate_pointer(G_TASK(result), error);
  if (!reply)
    return FALSE;
  *functions = ts_worker_read_functions(reply, title, path);
  return TRUE;
}

static void on_void_reply(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  TsWorker *self = g_task_get_source_object(task);
  self->n_methods--;
  GError *error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &error);
  if (!reply) {
    (void)method_failed(self, task, error);
  } else {
    g_task_return_boolean(task, TRUE);
  }
}

void ts_worker_set_input_signature_async(TsWorker *self, const char *function,
                                         const char *const *specs, GCancellable *cancellable,
                                         GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail(TS_IS_WORKER(self) && function != NULL && specs != NULL);
  g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, ts_worker_set_input_signature_async);
  if (!check_alive(self, task))
    return;
  self->n_methods++;
  g_dbus_connection_call(self->connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE,
                         "SetInputSignature", g_variant_new("(s^as)", function, specs), NULL,
                         G_DBUS_CALL_FLAGS_NONE, -1, cancellable, on_void_reply, g_object_ref(task));
}

gboolean ts_worker_set_input_signature_finish(TsWorker *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
  return g_task_propagate_boolean(G_TASK(result), error);
}

void ts_worker_watch_module_async(TsWorker *self, GCancellable *cancellable, GAsyncReadyCallback callback,
                                  gpointer user_data)
{
  g_return_if_fail(TS_IS_WORKER(self));
  g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, ts_worker_watch_module_async);
  if (!check_alive(self, task))
    return;
  self->n_methods++;
  g_dbus_connection_call(self->connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, "WatchModule", NULL, NULL,
                         G_DBUS_CALL_FLAGS_NONE, -1, cancellable, on_void_reply, g_object_ref(task));
}

gboolean ts_worker_watch_module_finish(TsWorker *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
  return g_task_propagate_boolean(G_TASK(result), error);
}

/* ---- devices ------------------------------------------------------------------------------------ */

void ts_worker_device_free(TsWorkerDevice *device)
{
  if (!device)
    return;
  g_free(device->name);
  g_free(device->description);
  g_free(device);
}

typedef struct {
  GPtrArray *devices;
  char *note;
} DeviceList;

static void device_list_free(DeviceList *l)
{
  g_clear_pointer(&l->devices, g_ptr_array_unref);
  g_free(l->note);
  g_free(l);
}

static void on_devices_reply(GObject *source, GAsyncResult *res, gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  TsWorker *self = g_task_get_source_object(task);
  self->n_methods--;
  GError *error = NULL;
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &error);
  if (!reply) {
    (void)method_failed(self, task, error);
    return;
  }
  DeviceList *l = g_new0(DeviceList, 1);
  l->devices = g_ptr_array_new_with_free_func((GDestroyNotify)ts_worker_device_free);
  g_autoptr(GVariantIter) iter = NULL;
  const char *name, *description;
  guint64 free_bytes, total_bytes;
  g_variant_get(reply, "(a(sstt)s)", &iter, &l->note);
  while (g_variant_iter_next(iter, "(&s&stt)", &name, &description, &free_bytes, &total_bytes)) {
    TsWorkerDevice *d = g_new0(TsWorkerDevice, 1);
    *d = (TsWorkerDevice){ g_strdup(name), g_strdup(description), free_bytes, total_bytes };
    g_ptr_array_add(l->devices, d);
  }
  g_task_return_pointer(task, l, (GDestroyNotify)device_list_free);
}

void ts_worker_list_devices_async(TsWorker *self, GCancellable *cancellable,
                                  GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail(TS_IS_WORKER(self));
  g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, ts_worker_list_devices_async);
  if (!check_alive(self, task))
    return;
  self->n_methods++;
  g_dbus_connection_call(self->connection, NULL, TS_WORKER_PATH, TS_WORKER_INTERFACE, "ListDevices",
                         NULL, G_VARIANT_TYPE("(a(sstt)s)"), G_DBUS_CALL_FLAGS_NONE, -1, cancellable,
                         on_devices_reply, g_object_ref(task));
}

GPtrArray *ts_worker_list_devices_finish(TsWorker *self, GAsyncResult *result, char **note,
                                         GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, self), NULL);
  DeviceList *l = g_task_propagate_pointer(G_TASK(result), error);
  if (!l)
    return NULL;
  GPtrArray *devices = g_steal_pointer(&l->devices);
  if (note)
    *note = g_steal_pointer(&l->note);
  device_list_free(l);
  return devices;
}

/* ---- life ------------------------------------------------------------------------------------ */

void ts_worker_set_executable(TsWorker *self, const char *path)
{
  g_return_if_fail(TS_IS_WORKER(self) && self->process == NULL);
  g_free(self->executable);
  self->executable = g_strdup(path);
}

void ts_worker_set_remote(TsWorker *self, const char *target)
{
  g_return_if_fail(TS_IS_WORKER(self) && self->process == NULL);
  g_free(self->remote);
  self->remote = g_strdup(target);
}

const char *ts_worker_get_remote(TsWorker *self)
{
  g_return_val_if_fail(TS_IS_WORKER(self), NULL);
  return self->remote;
}

void ts_worker_setenv(TsWorker *self, const char *name, const char *value)
{
  g_return_if_fail(TS_IS_WORKER(self) && self->process == NULL && name != NULL);
  if (!self->environment)
    self->environment = g_get_environ();
  self->environment = value ? g_environ_setenv(self->environment, name, value, TRUE)
                            : g_environ_unsetenv(self->environment, name);
}

gboolean ts_worker_get_alive(TsWorker *self)
{
  g_return_val_if_fail(TS_IS_WORKER(self), FALSE);
  return self->process != NULL && !self->reaped && !self->death && !self->dying;
}

const TsWorkerDeath *ts_worker_get_death(TsWorker *self)
{
  g_return_val_if_fail(TS_IS_WORKER(self), NULL);
  return self->death;
}

guint ts_worker_get_running_call(TsWorker *self)
{
  g_return_val_if_fail(TS_IS_WORKER(self), 0);
  if (!self->status || !ts_worker_get_alive(self))
    return 0;
  return __atomic_load_n(&self->status->call_id, __ATOMIC_RELAXED);
}

GPid ts_worker_get_pid(TsWorker *self)
{
  g_return_val_if_fail(TS_IS_WORKER(self), 0);
  return self->pid;
}

void ts_worker_close(TsWorker *self)
{
  g_return_if_fail(TS_IS_WORKER(self));
  if (!self->process || self->reaped)
    return;
  self->closing = TRUE;
  /* a worker inside a call cannot see its connection close: it is killed */
  if (self->calls.length > 0 || !self->connection)
    kill_worker(self);
  else
    g_dbus_connection_close(self->connection, NULL, NULL, NULL);
}

static void ts_worker_dispose(GObject *object)
{
  TsWorker *self = TS_WORKER(object);
  ts_worker_close(self);
  fast_close(self);
  g_cancellable_cancel(self->io);
  g_clear_handle_id(&self->watch, g_source_remove);
  g_clear_handle_id(&self->death_drain, g_source_remove);
  if (self->subscription)
    g_dbus_connection_signal_unsubscribe(self->connection, self->subscription);
  self->subscription = 0;
  G_OBJECT_CLASS(ts_worker_parent_class)->dispose(object);
}

static void ts_worker_finalize(GObject *object)
{
  TsWorker *self = TS_WORKER(object);
  g_assert(self->calls.length == 0); /* each call's task holds the worker */
  g_clear_object(&self->connection);
  ts_remote_link_free(self->link);
  g_free(self->remote);
  g_clear_object(&self->process);
  for (int s = 0; s < 2; s++) {
    ts_output_lines_free(self->out_lines[s]);
    g_clear_object(&self->out_stream[s]);
  }
  g_clear_object(&self->io);
  g_byte_array_unref(self->crash);
  if (self->crash_fd >= 0)
    close(self->crash_fd);
  if (self->status)
    munmap(self->status, sizeof(TsWorkerStatus));
  ts_worker_death_free(self->death);
  g_free(self->executable);
  g_strfreev(self->environment);
  G_OBJECT_CLASS(ts_worker_parent_class)->finalize(object);
}

static void ts_worker_class_init(TsWorkerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  /* registered with GDBus before any reply can carry one of their errors */
  (void)TS_ENGINE_ERROR;
  (void)TS_WORKER_ERROR;
  object_class->dispose = ts_worker_dispose;
  object_class->finalize = ts_worker_finalize;
  GType type = G_TYPE_FROM_CLASS(klass);
  signals[SIGNAL_TRACE] = g_signal_new("trace", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                       G_TYPE_NONE, 1, G_TYPE_POINTER);
  signals[SIGNAL_WARNING] = g_signal_new("warning", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                         G_TYPE_NONE, 5, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_STRING,
                                         G_TYPE_STRING, G_TYPE_STRING);
  signals[SIGNAL_PRINT] = g_signal_new("print", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                       G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_STRING);
  signals[SIGNAL_PROGRESS] = g_signal_new("progress", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                          G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_DOUBLE);
  signals[SIGNAL_TRANSFER] = g_signal_new("transfer", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                          G_TYPE_NONE, 3, G_TYPE_UINT, G_TYPE_UINT64, G_TYPE_UINT64);
  signals[SIGNAL_MODULE_CHANGED] = g_signal_new("module-changed", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                                G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIGNAL_OUTPUT] = g_signal_new("output", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                        G_TYPE_NONE, 4, G_TYPE_UINT, G_TYPE_INT, G_TYPE_STRING,
                                        G_TYPE_INT64);
  signals[SIGNAL_DIED] = g_signal_new("died", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                      G_TYPE_NONE, 1, TS_TYPE_WORKER_DEATH | G_SIGNAL_TYPE_STATIC_SCOPE);
}

static void ts_worker_init(TsWorker *self)
{
  self->io = g_cancellable_new();
  self->crash = g_byte_array_new();
  self->crash_fd = -1;
  g_queue_init(&self->calls);
  g_queue_init(&self->orphans);
}

TsWorker *ts_worker_new(guint64 memory_limit)
{
  TsWorker *self = g_object_new(TS_TYPE_WORKER, NULL);
  self->memory_limit = memory_limit;
  return self;
}

void ts_worker_set_fast_calls(TsWorker *self, gboolean fast)
{
  g_return_if_fail(TS_IS_WORKER(self));
  self->no_fast = !fast;
}

guint ts_worker_get_fast_calls(TsWorker *self)
{
  g_return_val_if_fail(TS_IS_WORKER(self), 0);
  return self->n_fast_calls;
}

GDBusConnection *_ts_worker_get_connection(TsWorker *self)
{
  g_return_val_if_fail(TS_IS_WORKER(self), NULL);
  return self->connection && !g_dbus_connection_is_closed(self->connection) ? self->connection : NULL;
}
