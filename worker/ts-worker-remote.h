/* ts-worker-remote.h — the app's end of a remote worker: ssh started with
 * `tracescope-worker --stdio` on the far side, its frames
 * (ts-remote-link.h) turned back into the local fd layout — stdout and
 * stderr, the crash pipe, the status page, a D-Bus stream — so that
 * TsWorker reads it as it reads a local worker.  Two threads carry the
 * bytes: one reads ssh's stdout, one writes the D-Bus connection's bytes
 * to its stdin.
 *
 * The environment can change what runs (the tests do):
 *   TRACESCOPE_SSH           the ssh client (default: ssh on the PATH)
 *   TRACESCOPE_SSH_CONFIG    a config file for it (ssh -F)
 *   TRACESCOPE_REMOTE_WORKER the command on the remote (default: tracescope-worker) */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct TsRemoteLink TsRemoteLink;

/* Main context, once each: ready (error NULL: the banner came and names
 * our protocol) and ended (ssh's stdout is at its end: everything the
 * worker sent is in the local fds, which are closed on our side). */
typedef void (*TsRemoteReady)(gpointer data, const GError *error);
typedef void (*TsRemoteEnded)(gpointer data);

/* Starts ssh to target ("[user@]host[:port]").  status_fd: the status
 * page (a memfd, taken) the worker's page is written into at its death. */
TsRemoteLink *ts_remote_link_start(const char *target, guint64 memory_limit, int status_fd,
                                   GSubprocessLauncher *launcher, TsRemoteReady ready, TsRemoteEnded ended,
                                   gpointer data, GError **error);
GSubprocess *ts_remote_link_get_process(TsRemoteLink *link);
/* The local read ends of stdout (0), stderr (1), and the crash pipe (2):
 * taken by the caller, which closes them. */
int ts_remote_link_steal_fd(TsRemoteLink *link, int which);
/* The stream to speak D-Bus over (anonymous authentication, no fds). */
GIOStream *ts_remote_link_get_stream(TsRemoteLink *link);
/* After ended: TRUE and the worker's wait status when it told its death;
 * FALSE when the connection was lost first. */
gboolean ts_remote_link_get_exit(TsRemoteLink *link, int *wait_status);
/* Why the connection failed or was lost, for a message: ssh's error and
 * status, turned into what to do ("run ssh-copy-id HOST"...).  After the
 * process was reaped. */
char *ts_remote_link_describe_failure(TsRemoteLink *link, int ssh_status);
const char *ts_remote_link_get_host(TsRemoteLink *link);
/* Asks the far side to kill the worker (its death is then told).  Never
 * waits: while a frame is on its way the kill follows it. */
void ts_remote_link_kill(TsRemoteLink *link);
/* Stops the threads (after ended, or kills ssh first) and frees it. */
void ts_remote_link_free(TsRemoteLink *link);

G_END_DECLS
