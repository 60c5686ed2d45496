/* ts-console-lines.h — the console's list: the last lines module code
 * printed, as a GListModel over a ring of plain data.  A line becomes a
 * TsConsoleLine only when the list view asks for it (the rows it shows),
 * so a flood costs the app a bounded ring and no object for a line never
 * seen.  Lines appended wait (again the last `max` of them) until
 * ts_console_lines_flush announces them (at most two items-changed: the
 * front's lines dropped, then the new lines at the end); once lines were
 * left out, the first item says how many ("… 12 lines dropped"). */
#pragma once

#include <gio/gio.h>

#include "ts-console-line.h"

G_BEGIN_DECLS

#define TS_TYPE_CONSOLE_LINES (ts_console_lines_get_type())
G_DECLARE_FINAL_TYPE(TsConsoleLines, ts_console_lines, TS, CONSOLE_LINES, GObject)

/* A list keeping the last `max` lines (and the marker before them). */
TsConsoleLines *ts_console_lines_new(guint max);
/* A line waits for the next flush; of those waiting only the last `max`
 * stay (the others count as dropped). */
void ts_console_lines_append(TsConsoleLines *self, guint call_id, const char *call_label, gint64 time_us,
                             TsConsoleSource source, const char *text);
/* Lines waiting to join the list. */
guint ts_console_lines_get_n_waiting(TsConsoleLines *self);
/* The oldest max_lines waiting lines (G_MAXUINT: all) join the list, its
 * oldest going where there are more than it keeps; FALSE when nothing
 * changed.  GTK's list view spends time on each line announced or
 * dropped (about 8 µs in a release build, measured on GTK 4.8), so a
 * caller bounds a frame's share with max_lines; a flood meanwhile drops
 * the oldest waiting lines, and once it ends the list catches up with its
 * last lines. */
gboolean ts_console_lines_flush(TsConsoleLines *self, guint max_lines);
/* Marks the newest line of call_id with text (stdout, not yet a print's),
 * within the last `window` lines, waiting ones first, as a Print op's
 * (its item, if one is shown, notifies); FALSE when there is none. */
gboolean ts_console_lines_mark_print(TsConsoleLines *self, guint call_id, const char *text, guint window);
/* Lines left out so far (announced or not). */
guint64 ts_console_lines_get_n_dropped(TsConsoleLines *self);
/* How many line items were made so far (marker included): the rows asked for. */
guint ts_console_lines_get_n_made(TsConsoleLines *self);
void ts_console_lines_clear(TsConsoleLines *self);

G_END_DECLS
