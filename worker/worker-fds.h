/* worker-fds.h — the worker's own file descriptors, out of a module's reach.
 *
 * A module runs in the worker's process and may close or write to any fd
 * it likes; the protocol's fds (the D-Bus socket, the crash pipe, the fast
 * channel) are moved to high numbers with CLOEXEC, every low number that
 * is free then holds /dev/null (so a module scribbling on fds 3..63 hits
 * nothing of ours, and what the worker opens later lands above them), and
 * the worker keeps its own copies of stdout and stderr for the call marks,
 * putting them back on 1 and 2 when a module closed them. */
#pragma once

/* Moves the fds the app started the worker with (ts-worker-protocol.h)
 * to high numbers and fills the low ones; their new numbers come back in
 * *dbus, *crash and *status.  0 (errno set) when it cannot. */
int worker_fds_own(int *dbus, int *crash, int *status);
/* fd moved to a high number with CLOEXEC (fd itself closed); -1 on failure. */
int worker_fd_move_high(int fd);
/* Puts the worker's stdout and stderr back on fds 1 and 2 where a module
 * closed them. */
void worker_fds_restore_std(void);
/* Writes len bytes on the worker's own copy of stdout (1) or stderr (2):
 * the pipe the app reads, whatever the module did to fds 1 and 2. */
void worker_fds_write_std(int stream, const char *data, unsigned long len);
