/* ts-console-line.h — one line of the console: what module code printed
 * during a call, from host code (printf: runs while tracing only) or from a
 * Print op (ts_print: runs on every call), or what the app says about the
 * worker that ran it (a crash, its backtrace). */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

typedef enum {
  TS_CONSOLE_SOURCE_HOST,   /* host stdout (printf) */
  TS_CONSOLE_SOURCE_PRINT,  /* a Print op (ts_print) */
  TS_CONSOLE_SOURCE_STDERR, /* host stderr */
  TS_CONSOLE_SOURCE_WORKER, /* the app, about the worker process */
} TsConsoleSource;

/* "stdout", "ts_print", "stderr", "worker": the Source column. */
const char *ts_console_source_name(TsConsoleSource source);
/* "12:34:56.789" (local time) into buf. */
void ts_console_format_time(gint64 time_us, char buf[16]);

#define TS_TYPE_CONSOLE_LINE (ts_console_line_get_type())
G_DECLARE_FINAL_TYPE(TsConsoleLine, ts_console_line, TS, CONSOLE_LINE, GObject)

TsConsoleLine *ts_console_line_new(guint call_id, const char *call_label, gint64 time_us,
                                   TsConsoleSource source, const char *text);

guint ts_console_line_get_call_id(TsConsoleLine *self);
const char *ts_console_line_get_call_label(TsConsoleLine *self);
const char *ts_console_line_get_text(TsConsoleLine *self);
gint64 ts_console_line_get_time(TsConsoleLine *self);
TsConsoleSource ts_console_line_get_source(TsConsoleLine *self);
/* Notifies source and source-text when it changes. */
void ts_console_line_set_source(TsConsoleLine *self, TsConsoleSource source);

G_END_DECLS
