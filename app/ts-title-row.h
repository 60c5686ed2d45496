/* ts-title-row.h — TsTitleRow, a header row whose title wins: its first
 * child (the title) gets the natural width of the "title" widget inside it
 * before the tools beside it do, and the "collapsible" child (a group of
 * tools reachable elsewhere too, a menu or keys) hides while the row is
 * too narrow for both.  GtkBox would ellipsize the title instead. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TS_TYPE_TITLE_ROW (ts_title_row_get_type())
G_DECLARE_FINAL_TYPE(TsTitleRow, ts_title_row, TS, TITLE_ROW, GtkWidget)

/* Whether the collapsible child is shown at the row's present width. */
gboolean ts_title_row_get_collapsed(TsTitleRow *self);

G_END_DECLS
