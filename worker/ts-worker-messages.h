/* ts-worker-messages.h — the app's readers of what a worker says: its
 * replies, signals and status page, each read into the app's structures
 * with every field checked.  Apart from TsWorker, which waits for them,
 * so that each can be fed anything (fuzz/fuzz-worker-messages.c). */
#pragma once

#include <gio/gunixfdlist.h>

#include "ts-fast-channel.h"
#include "ts-worker-protocol.h"
#include "ts-worker.h"

G_BEGIN_DECLS

/* A Call reply, "(a{sv})" (over D-Bus with fds, or the fast channel's
 * result without): NULL + TS_WORKER_ERROR_PROTOCOL saying what is wrong. */
TsCallResult *ts_worker_read_result(GVariant *reply, GUnixFDList *fds, guint call_id, GError **error);

/* A fast call's reply (TS_FAST_REPLY_TYPE) to call call_id. */
typedef struct {
  guint n_signals;      /* the signals the worker had sent before it */
  TsFastStatus status;
  TsCallResult *result; /* TS_FAST_OK: the result, or NULL and error */
  GError *error;        /* TS_FAST_ERROR: the call's error; TS_FAST_OK: why the result does not read */
} TsFastAnswer;
/* FALSE + TS_WORKER_ERROR_PROTOCOL when the reply is not one to call_id
 * (the channel cannot be trusted after it). */
gboolean ts_worker_read_fast_reply(GVariant *reply, guint call_id, TsFastAnswer *answer, GError **error);

/* A Trace signal's parameters, "(ua{sv})"; NULL when it is not a trace.  A
 * graph that does not read leaves the trace without one. */
TsWorkerTrace *ts_worker_read_trace(GVariant *params);

/* An Open reply, "(ssa(sasas))": its title and path (owned) and functions
 * (TsWorkerFunction *). */
GPtrArray *ts_worker_read_functions(GVariant *reply, char **title, char **path);

/* What a dead worker's status page says (status page bytes as it left
 * them, written by a process that may have scribbled on them): the call
 * it was in, whether it called exit(), and the last op it started. */
void ts_worker_read_status(const TsWorkerStatus *status, TsWorkerDeath *death);

G_END_DECLS
