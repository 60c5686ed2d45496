/* ts-console-view.h — the console's lines as a table (Time, Call, Source,
 * Output), drawn for the rows in view only.  GTK 4.8's list views keep
 * some 200 rows bound around their anchor and bind and measure them anew
 * when the lines there change, so following the end of a flood cost them
 * 60–200 ms a frame (release build); this view's frame costs the rows it
 * shows, however many lines came.  Rows have one height; a cell's text is
 * cut with "…" and shown whole in its tooltip.  At the end, the view stays
 * at the end as lines come; scrolled up, it keeps its lines in view as the
 * oldest go.  A GtkScrollable: it goes in a GtkScrolledWindow. */
#pragma once

#include <gtk/gtk.h>

#include "ts-console-lines.h"

G_BEGIN_DECLS

#define TS_TYPE_CONSOLE_VIEW (ts_console_view_get_type())
G_DECLARE_FINAL_TYPE(TsConsoleView, ts_console_view, TS, CONSOLE_VIEW, GtkWidget)

GtkWidget *ts_console_view_new(void);
void ts_console_view_set_lines(TsConsoleView *self, TsConsoleLines *lines);
/* The lines the last frame drew. */
guint ts_console_view_get_n_drawn(TsConsoleView *self);
/* Whether the view follows the end (it was at the end when lines last came). */
gboolean ts_console_view_get_at_end(TsConsoleView *self);

G_END_DECLS
