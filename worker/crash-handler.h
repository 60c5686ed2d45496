/* The worker's crash handler: a fatal signal in module code writes a crash
 * report to a file descriptor (the crash pipe to the app), then kills the
 * worker with that same signal.  The report format is described in
 * crash-handler.c; the app parses it with ts-crash-report.h. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Installs handlers for SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT and SIGTRAP that write a
 * crash report to fd, then re-raise the signal with its default action so the parent
 * sees the real cause (WIFSIGNALED).  Primes backtrace() first (it dlopens libgcc_s).
 * Also installs the alternate signal stack for the calling thread.  Call it once, from
 * the main thread, before any module code runs; fd must stay open. */
gboolean ts_crash_handler_install(int fd, GError **error);

/* A function the handler calls before it writes the report (once, on the
 * crashing thread): it must be async-signal-safe.  NULL: none. */
void ts_crash_handler_set_hook(void (*hook)(void));

/* Gives the calling thread an alternate signal stack so a stack overflow on it is
 * reported too; every thread that runs module code calls it once.  The stack is
 * released when the thread exits. */
void ts_crash_handler_thread_init(void);

G_END_DECLS
