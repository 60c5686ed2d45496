/* A worker's crash report (worker/crash-handler.c writes it), parsed and
 * symbolised for the app: signal, cause, memory, and the backtrace with
 * function names and source lines. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct {
  guint64 pc;
  char *function;   /* "crash_segv" or NULL if unknown */
  char *file;       /* source file with debug info, else NULL */
  int line;         /* 0 if unknown */
  char *object;     /* "/path/libcrash.so" or NULL */
  guint64 offset;   /* pc relative to object's load base */
} TsCrashFrame;

typedef struct {
  int signal;            /* 11 */
  char *signal_name;     /* "SIGSEGV" */
  /* "segmentation fault (invalid memory access at 0x0)", "stack overflow" when the
   * fault address is within or just below the faulting thread's stack, "aborted" ... */
  char *description;
  int code;              /* si_code */
  guint64 address;
  gboolean has_address;
  guint64 thread;        /* the faulting thread's id, 0 if not reported */
  guint64 vm_size, as_limit;   /* as_limit 0 = unlimited; vm_size 0 = not reported */
  gboolean out_of_memory;      /* vm_size is within 64 MiB of as_limit */
  gboolean truncated;          /* the report stops before its "end" line */
  GPtrArray *frames;           /* TsCrashFrame*, innermost first, handler's own frames dropped */
} TsCrashReport;

/* Parses a report (as read from the crash pipe, possibly truncated if the process died
 * mid-write: then keep what was complete) and symbolises its frames against the listed
 * mappings with libdw (function names from symbol tables, file:line from DWARF where the
 * object has debug info).  NULL with an error (G_IO_ERROR_INVALID_DATA) naming the bad
 * line for anything that is not a report.  It opens the mapped files: run it off the
 * main thread. */
TsCrashReport *ts_crash_report_parse(const char *text, gsize length, GError **error);
void ts_crash_report_free(TsCrashReport *report);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TsCrashReport, ts_crash_report_free)

/* "#0  crash_segv (crashy.c:35) in crashy.so\n#1  ..." — frames with no symbol show
 * the object+offset, frames in no object the bare pc; a run of frames with the same
 * pc (recursion) shows once, then "    ... the same N more times".  (The signal
 * trampoline and the handler are not there: the handler leaves them out.) */
char *ts_crash_report_format_backtrace(const TsCrashReport *report);

G_END_DECLS
