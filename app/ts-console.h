/* ts-console.h — what module code printed, line by line, with the time and
 * the call that produced it, and whether it came from host code (printf:
 * only while tracing) or from a Print op (ts_print: on every call). */
#pragma once

#include <gtk/gtk.h>

#include "ts-console-line.h"

G_BEGIN_DECLS

#define TS_TYPE_CONSOLE (ts_console_get_type())
G_DECLARE_FINAL_TYPE(TsConsole, ts_console, TS, CONSOLE, GtkWidget)

/* The console keeps this many lines, the last ones; the first line then
 * says how many were dropped ("… 12 lines dropped"). */
#define TS_CONSOLE_MAX_LINES 10000

/* A line of the module's output (or the app's about the worker).  Lines
 * wait as plain data and are announced to the list at most once a frame;
 * of a flood between two only the last TS_CONSOLE_MAX_LINES wait
 * (ts_console_get_lines has them all). */
void ts_console_add_output(TsConsole *self, guint call_id, const char *call_label, gint64 time_us,
                           TsConsoleSource source, const char *text);
/* A ts_print of call_id printed text: the matching stdout line (arrived or
 * still to come) is marked as a Print op's. */
void ts_console_note_print(TsConsole *self, guint call_id, const char *text);
void ts_console_clear(TsConsole *self);
/* The lines (borrowed, a TsConsoleLines), those still to join it included. */
GListModel *ts_console_get_lines(TsConsole *self);

G_END_DECLS
