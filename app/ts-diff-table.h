/* ts-diff-table.h — the Profiler panel's Against Baseline page: two
 * recordings group by group (tsp_diff), the largest change first, with
 * each side's runs, median and min of one op's self time and B over A. */
#pragma once

#include <gtk/gtk.h>

#include "tracescope-profiler.h"

G_BEGIN_DECLS

#define TS_TYPE_DIFF_TABLE (ts_diff_table_get_type())
G_DECLARE_FINAL_TYPE(TsDiffTable, ts_diff_table, TS, DIFF_TABLE, GtkWidget)

/* Shows diff (owned; NULL: the page that says how to get one) of
 * recording b (label_b: the panel's) against baseline a (label_a). */
void ts_diff_table_set_diff(TsDiffTable *self, tsp_diff *diff, const char *label_a, const char *label_b);
const tsp_diff *ts_diff_table_get_diff(TsDiffTable *self);

G_END_DECLS
