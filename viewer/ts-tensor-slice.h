/* ts-tensor-slice.h — a 2-D slice of a tensor of any rank (two axes shown
 * as rows and columns, an index along every other), and the difference of
 * two tensors.  No GTK. */
#pragma once

#include <glib.h>
#include <tracescope.h>

G_BEGIN_DECLS

/* Rank 0: one cell (no axes).  Rank 1: one row, the axis as columns.
 * Rank 2 and up: row_axis != col_axis, index[] fixes the other axes
 * (entries for row_axis and col_axis are ignored). */
typedef struct ts_tensor_slice {
  ts_shape shape;
  int row_axis, col_axis; /* -1 when the slice has no such axis */
  int64_t index[TS_MAX_RANK];
} ts_tensor_slice;

/* The default slice of shape: its last two axes, index 0 along the rest. */
void ts_tensor_slice_init(ts_tensor_slice *s, ts_shape shape);
/* Shows axes row and col (distinct, in range; FALSE otherwise). */
gboolean ts_tensor_slice_set_axes(ts_tensor_slice *s, int row_axis, int col_axis);
/* Fixes axis at index (clamped to the axis). */
void ts_tensor_slice_set_index(ts_tensor_slice *s, int axis, int64_t index);

int64_t ts_tensor_slice_rows(const ts_tensor_slice *s);
int64_t ts_tensor_slice_cols(const ts_tensor_slice *s);
/* The flat (row-major) element index of cell (row, col). */
int64_t ts_tensor_slice_offset(const ts_tensor_slice *s, int64_t row, int64_t col);
/* The full index of cell (row, col): "[0, 2, 1, 3]" (owned). */
char *ts_tensor_slice_format_index(const ts_tensor_slice *s, int64_t row, int64_t col);
/* "[0, 2, :, :]": which slice it is (owned). */
char *ts_tensor_slice_describe(const ts_tensor_slice *s);

/* a − b elementwise as a new f64 tensor (owned reference: ts_tensor_unref)
 * with the largest |a − b| and the largest |a − b| / |b| (over b != 0) in
 * *max_abs and *max_rel.  Equal values (the same infinity, NaN with NaN)
 * differ by 0; a NaN on one side only gives NaN.  NULL with an error
 * naming both shapes when they differ, or when either has no numeric
 * values. */
ts_tensor *ts_tensor_diff(const ts_tensor *a, const ts_tensor *b, double *max_abs, double *max_rel,
                          GError **error);
/* The checks ts_tensor_diff makes before it computes anything. */
gboolean ts_tensor_diff_check(const ts_tensor *a, const ts_tensor *b, GError **error);

G_END_DECLS
