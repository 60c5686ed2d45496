/* ts-tensor-view-private.h — the parts of TsTensorView: its value table,
 * heat map and histogram widgets, and what tests read back from them. */
#pragma once

#include <gtk/gtk.h>

#include "ts-tensor-colour.h"
#include "ts-tensor-slice.h"
#include "ts-tensor-stats.h"
#include "ts-tensor-view.h"

G_BEGIN_DECLS

/* ---- the value table: one page of rows × columns of a slice ---------- */

#define TS_TENSOR_TABLE_PAGE_ROWS 100
#define TS_TENSOR_TABLE_PAGE_COLS 16

#define TS_TYPE_TENSOR_TABLE (ts_tensor_table_get_type())
G_DECLARE_FINAL_TYPE(TsTensorTable, ts_tensor_table, TS, TENSOR_TABLE, GtkWidget)

GtkWidget *ts_tensor_table_new(void);
/* Shows slice s of t (host-readable, referenced while shown; NULL clears),
 * from its first page.  A vector is shown as one column. */
void ts_tensor_table_set_slice(TsTensorTable *self, ts_tensor *t, const ts_tensor_slice *s);
/* Pages of rows and of columns: how many, which one is shown, go to one. */
void ts_tensor_table_get_pages(TsTensorTable *self, guint *n_row_pages, guint *n_col_pages);
void ts_tensor_table_set_page(TsTensorTable *self, guint row_page, guint col_page);
/* The columns the view has now (the index column first) and the text the
 * cell in row `row`, column `col` shows (owned; NULL if that cell is not on
 * the page shown; a vector's element i is at (i, 0)). */
guint ts_tensor_table_get_n_columns(TsTensorTable *self);
char *_ts_tensor_table_dup_cell_text(TsTensorTable *self, int64_t row, int64_t col);

/* ---- the heat map of a slice, with its legend ------------------------ */

#define TS_TYPE_TENSOR_HEAT_MAP (ts_tensor_heat_map_get_type())
G_DECLARE_FINAL_TYPE(TsTensorHeatMap, ts_tensor_heat_map, TS, TENSOR_HEAT_MAP, GtkWidget)

GtkWidget *ts_tensor_heat_map_new(void);
/* Draws slice s of t (numeric, host-readable, referenced while shown;
 * NULL clears) coloured by a scale over the slice's finite values. */
void ts_tensor_heat_map_set_slice(TsTensorHeatMap *self, ts_tensor *t, const ts_tensor_slice *s);
/* The scale the slice shown is coloured with. */
const ts_colour_scale *ts_tensor_heat_map_get_scale(TsTensorHeatMap *self);
/* Shows a line of text instead of the map ("not numeric"). */
void ts_tensor_heat_map_set_note(TsTensorHeatMap *self, const char *note);
/* The cell under widget point (x, y), or FALSE. */
gboolean ts_tensor_heat_map_cell_at(TsTensorHeatMap *self, double x, double y, int64_t *row,
                                    int64_t *col);
/* The widget point at the centre of cell (row, col), or FALSE when none
 * is drawn yet. */
gboolean ts_tensor_heat_map_cell_centre(TsTensorHeatMap *self, int64_t row, int64_t col, double *x,
                                        double *y);
/* The tooltip at (x, y): "[0, 2, 1, 3] = 0.25" (owned), or NULL. */
char *ts_tensor_heat_map_dup_tooltip_at(TsTensorHeatMap *self, double x, double y);

/* ---- the histogram ---------------------------------------------------- */

#define TS_TYPE_TENSOR_HISTOGRAM_CHART (ts_tensor_histogram_chart_get_type())
G_DECLARE_FINAL_TYPE(TsTensorHistogramChart, ts_tensor_histogram_chart, TS, TENSOR_HISTOGRAM_CHART,
                     GtkWidget)

GtkWidget *ts_tensor_histogram_chart_new(void);
/* Draws h (copied); NULL draws note instead ("computing…", "not numeric"). */
void ts_tensor_histogram_chart_set(TsTensorHistogramChart *self, const ts_tensor_histogram *h,
                                   const char *note);
/* The tooltip at (x, y): "[0.5, 1) · 12 values" (owned), or NULL. */
char *ts_tensor_histogram_chart_dup_tooltip_at(TsTensorHistogramChart *self, double x, double y);

/* ---- the view itself ---------------------------------------------------- */

struct _TsTensorView {
  GtkWidget parent_instance;
  GtkLabel *title_label, *message_label, *summary_label, *stats_label;
  GtkWidget *spinner, *expand_button, *export_button, *slice_box, *page_choice;
  GtkStack *stack;
  TsTensorTable *table;
  TsTensorHeatMap *heat_map;
  TsTensorHistogramChart *histogram;
  GtkSpinButton *index_spins[TS_MAX_RANK]; /* the slice controls: NULL on shown axes */

  ts_tensor *tensor;    /* as given (a of a difference); referenced */
  ts_tensor *host;      /* its values on the host; NULL for a symbolic tensor */
  ts_tensor *b;         /* b of a difference, host; else NULL */
  ts_tensor *shown;     /* what the table and heat map show: host, or a − b once computed */
  char *title;
  char *device;         /* the device t was a host copy of (ts_tensor_view_set_copy), or NULL */
  ts_tensor_slice slice;
  gboolean numeric;
  gboolean busy;
  gboolean have_stats;
  ts_inspector_stats stats;
  ts_tensor_histogram hist;
  double max_abs, max_rel; /* of a difference */
  guint serial;            /* of the tensor shown: a late result for an older one is dropped */
  GCancellable *cancellable;
  gboolean compact;
  gboolean title_hidden; /* the title names the file an export suggests, not shown */
  gboolean building_controls;
};

/* ts-tensor-view-slice.c: the slice controls for self->slice, and what
 * every page shows after the slice changed. */
void _ts_tensor_view_build_slice_controls(TsTensorView *self);
void _ts_tensor_view_refresh_slice(TsTensorView *self);
void _ts_tensor_view_update_slice_box(TsTensorView *self);
/* ts-tensor-view.c: shows message (NULL hides it). */
void _ts_tensor_view_set_message(TsTensorView *self, const char *message);
/* ts-tensor-view-export.c: the Export button. */
void _ts_tensor_view_on_export_clicked(TsTensorView *self);

/* ---- the view's state, for tests ------------------------------------- */

/* NULL while computing or when the tensor is not numeric. */
const ts_inspector_stats *_ts_tensor_view_get_stats(TsTensorView *self);
const ts_tensor_histogram *_ts_tensor_view_get_histogram(TsTensorView *self);
/* The summary lines and the message shown (borrowed). */
const char *_ts_tensor_view_get_summary(TsTensorView *self);
const char *_ts_tensor_view_get_stats_text(TsTensorView *self);
const char *_ts_tensor_view_get_message(TsTensorView *self);
/* The slice shown; select axes and indices as the controls do. */
const ts_tensor_slice *_ts_tensor_view_get_slice(TsTensorView *self);
void _ts_tensor_view_select_axes(TsTensorView *self, int row_axis, int col_axis);
void _ts_tensor_view_select_index(TsTensorView *self, int axis, int64_t index);
/* "table", "heat-map" or "histogram". */
void _ts_tensor_view_show_page(TsTensorView *self, const char *page);
TsTensorTable *_ts_tensor_view_get_table(TsTensorView *self);
TsTensorHeatMap *_ts_tensor_view_get_heat_map(TsTensorView *self);
TsTensorHistogramChart *_ts_tensor_view_get_histogram_chart(TsTensorView *self);

G_END_DECLS
