/* ts-console-lines.h — the console's list: the last lines module code
 * printed, as a GListModel over a ring of plain data.  The console's view
 * reads lines as data (ts_console_lines_peek); a line becomes a
 * TsConsoleLine only when an item is asked for, so a flood costs the app
 * a bounded ring and no object.  Lines appended wait (again the last `max` of them) until
 * ts_console_lines_flush announces them (at most two items-changed: the
 * front's lines dropped, then the new lines at the end); once lines were
 * left out, the first item says how many ("… 12 lines dropped"). */
#pragma once

#include <gio/gio.h>

#include "ts-console-line.h"

G_BEGIN_DECLS

#define TS_TYPE_CONSOLE_LINES (ts_console_lines_get_type())
G_DECLARE_FINAL_TYPE(TsConsoleLines, ts_console_lines, TS, CONSOLE_LINES, GObject)

/* A line as the view draws it: borrowed, valid until the next flush or clear. */
typedef struct {
  const char *call_label;
  const char *text;
  gint64 time_us;
  TsConsoleSource source;
} TsConsoleRow;

/* A list keeping the last `max` lines (and the marker before them). */
TsConsoleLines *ts_console_lines_new(guint max);
/* A line waits for the next flush; of those waiting only the last `max`
 * stay (the others count as dropped). */
void ts_console_lines_append(TsConsoleLines *self, guint call_id, const char *call_label, gint64 time_us,
                             TsConsoleSource source, const char *text);
/* Lines waiting to join the list. */
guint ts_console_lines_get_n_waiting(TsConsoleLines *self);
/* The waiting lines join the list, its oldest going where there are more
 * than it keeps (at most two items-changed); FALSE when nothing changed.
 * It moves what waits: no line becomes an object. */
gboolean ts_console_lines_flush(TsConsoleLines *self);
/* Marks the newest line of call_id with text (stdout, not yet a print's),
 * within the last `window` lines, waiting ones first, as a Print op's
 * (its item, if one was made, notifies, and a line shown is announced
 * as changed); FALSE when there is none. */
gboolean ts_console_lines_mark_print(TsConsoleLines *self, guint call_id, const char *text, guint window);
/* Item `position` as plain data, no object made; FALSE past the end. */
gboolean ts_console_lines_peek(TsConsoleLines *self, guint position, TsConsoleRow *row);
/* Lines left out so far (announced or not). */
guint64 ts_console_lines_get_n_dropped(TsConsoleLines *self);
/* How many line items were made so far (marker included): the rows asked for. */
guint ts_console_lines_get_n_made(TsConsoleLines *self);
void ts_console_lines_clear(TsConsoleLines *self);

G_END_DECLS
