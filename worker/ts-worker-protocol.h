/* ts-worker-protocol.h — what the app and tracescope-worker agree on.
 *
 * The app starts the worker with one end of a socket pair as fd 3 and
 * talks D-Bus peer to peer over it (GDBus, no bus daemon): the app calls
 * methods of TS_WORKER_INTERFACE at TS_WORKER_PATH, the worker emits
 * signals for what happens during a call.  docs/worker.md is the full
 * description.  A worker on another machine (ssh) has the same fds, carried
 * as frames over one pipe (ts-remote-link.h).
 *
 * Fds of a spawned worker:
 *   1, 2  pipes the app reads: the module's stdout and stderr, with a
 *         mark after each call (below) so lines are attributed to their call;
 *   3     the D-Bus socket;
 *   4     the crash pipe: a report written by the worker's signal handler;
 *   5     the status page (memfd, TsWorkerStatus) the app reads after the
 *         worker died or was killed: the last op it started.
 *
 * Calls also have a fast path beside D-Bus: shared memory the worker
 * passes with OpenFastChannel (ts-fast-channel.h, docs/worker.md "Fast
 * calls"); a result too big for it is fetched with TakeFastReply. */
#pragma once

#include <stdint.h>

/* Bumped on any incompatible change; Hello refuses another version. */
#define TS_WORKER_PROTOCOL_VERSION 2u /* 2: Call takes options (profile, compare) */

#define TS_WORKER_INTERFACE "org.tracescope.Worker1"
#define TS_WORKER_PATH "/org/tracescope/Worker"
/* The step debugger's methods (docs/worker.md, "Debugging"), at the same path. */
#define TS_WORKER_DEBUG_INTERFACE "org.tracescope.Worker1.Debug"
/* D-Bus error names: TS_WORKER_ERROR_PREFIX + the engine's error code name
 * ("org.tracescope.Worker1.Error.InvalidArgument"). */
#define TS_WORKER_ERROR_PREFIX TS_WORKER_INTERFACE ".Error."

#define TS_WORKER_FD_DBUS 3
#define TS_WORKER_FD_CRASH 4
#define TS_WORKER_FD_STATUS 5

/* Written on stdout and on stderr after every call ("\x1etracescope-call
 * 7 end\n") and after Open (call 0): what came before it on that stream
 * since the previous mark is that call's.  The record separator byte keeps
 * it apart from what modules print; it may follow text printed without a
 * newline on the same line. */
#define TS_WORKER_MARK "\x1etracescope-call "

/* The most calls one Call request makes: its repeat, and its compare
 * option's N (each way); more is InvalidArgument.  A profiled call's
 * session grows with its calls, and a call without ops never sees a
 * cancel.  The run panel's Calls field stops there too. */
#define TS_WORKER_REPEAT_MAX 1000000u

/* Results at least this big travel in a sealed memfd passed with the
 * reply instead of inside the message. */
#define TS_WORKER_FD_THRESHOLD (64u * 1024u)

/* The largest recorded profile the app takes from a remote worker (read
 * in chunks, ts-worker-blob.h). */
#define TS_WORKER_PROFILE_MAX (4ull << 30)

#define TS_WORKER_STATUS_MAGIC 0x54535753u /* "TSWS" */

/* The status page.  The worker writes it as it runs; the app reads it
 * only once the worker is gone, so there is nothing to synchronise. */
typedef struct TsWorkerStatus {
  uint32_t magic;
  uint32_t version;
  uint32_t call_id;      /* the call running, 0 between calls */
  uint32_t exited;       /* 1: exit() was called (status below) */
  int32_t exit_status;
  uint32_t reserved;
  uint64_t op_seq;       /* the last op started: its sequence number in the run */
  char op[48];           /* "MatMul" */
  char node[160];        /* "dense_1/MatMul" in graph mode, "" eager */
  char loc[256];         /* "model.c:42 (dense)" */
} TsWorkerStatus;
