/* ts-remote-link.h — how a remote worker's channels share one ssh pipe.
 *
 * `tracescope-worker --stdio` (worker-stdio.c) is started by ssh on the
 * remote machine.  It forks the real worker with the local fd layout
 * (ts-worker-protocol.h) and carries every one of its channels over its
 * own stdin and stdout, which the module never sees: the first line it
 * writes is the banner (TS_REMOTE_BANNER, then the protocol version),
 * after which both directions are frames, a TsRemoteFrame header and
 * `length` bytes.  The app's end (ts-worker-remote.c) writes each frame's
 * bytes into local pipes of the same layout, so TsWorker reads a remote
 * worker exactly as a local one.  docs/worker.md, "Remote workers". */
#pragma once

#include <glib.h>
#include <stdint.h>

#define TS_REMOTE_BANNER "TRACESCOPE-WORKER-STDIO "
#define TS_REMOTE_FRAME_MAX (1u << 20) /* the most bytes one frame carries */

typedef enum {
  TS_REMOTE_DBUS = 0,   /* both ways: the D-Bus connection's bytes; empty: the app closed it */
  TS_REMOTE_STDOUT = 1, /* worker → app: the module's stdout, with the call marks */
  TS_REMOTE_STDERR = 2, /* worker → app: its stderr */
  TS_REMOTE_CRASH = 3,  /* worker → app: the crash pipe */
  TS_REMOTE_STATUS = 4, /* worker → app: the status page (TsWorkerStatus) when it changed, and at its death */
  TS_REMOTE_EXIT = 5,   /* worker → app: its wait status (int32), the last frame */
  TS_REMOTE_KILL = 6,   /* app → worker: kill it (Cancel unanswered, the memory limit) */
  TS_REMOTE_N_CHANNELS
} TsRemoteChannel;

typedef struct {
  uint32_t channel; /* TsRemoteChannel */
  uint32_t length;  /* bytes that follow, at most TS_REMOTE_FRAME_MAX */
} TsRemoteFrame;

/* The whole of len bytes to or from fd (blocking, EINTR retried); FALSE
 * at an error or (reading) the end. */
gboolean ts_remote_write_all(int fd, const void *data, gsize len);
gboolean ts_remote_read_all(int fd, void *data, gsize len);
/* One frame; FALSE when fd failed. */
gboolean ts_remote_write_frame(int fd, TsRemoteChannel channel, const void *data, gsize len);
/* The next frame from fd: its header in *f and its bytes in buf (room
 * for TS_REMOTE_FRAME_MAX); FALSE at the end, an error, a frame cut short
 * or one longer than TS_REMOTE_FRAME_MAX (the link cannot be trusted
 * after it).  The channel is the caller's to check. */
gboolean ts_remote_read_frame(int fd, TsRemoteFrame *f, void *buf);
