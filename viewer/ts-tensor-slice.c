/* ts-tensor-slice.c — 2-D slices of tensors and the difference of two
 * (ts-tensor-slice.h).  No GTK. */
#include "ts-tensor-slice.h"

#include <gio/gio.h>
#include <math.h>
#include <stdlib.h>

#include "ts-tensor-stats.h"

void ts_tensor_slice_init(ts_tensor_slice *s, ts_shape shape)
{
  *s = (ts_tensor_slice){ .shape = shape, .row_axis = shape.rank - 2, .col_axis = shape.rank - 1 };
  s->row_axis = MAX(s->row_axis, -1);
  s->col_axis = MAX(s->col_axis, -1);
}

gboolean ts_tensor_slice_set_axes(ts_tensor_slice *s, int row_axis, int col_axis)
{
  if (s->shape.rank < 2 || row_axis == col_axis || row_axis < 0 || col_axis < 0 ||
      row_axis >= s->shape.rank || col_axis >= s->shape.rank)
    return FALSE;
  s->row_axis = row_axis;
  s->col_axis = col_axis;
  return TRUE;
}

void ts_tensor_slice_set_index(ts_tensor_slice *s, int axis, int64_t index)
{
  g_return_if_fail(axis >= 0 && axis < s->shape.rank);
  s->index[axis] = CLAMP(index, 0, MAX(s->shape.dim[axis] - 1, 0));
}

int64_t ts_tensor_slice_rows(const ts_tensor_slice *s)
{
  return s->row_axis < 0 ? 1 : s->shape.dim[s->row_axis];
}

int64_t ts_tensor_slice_cols(const ts_tensor_slice *s)
{
  return s->col_axis < 0 ? 1 : s->shape.dim[s->col_axis];
}

int64_t ts_tensor_slice_offset(const ts_tensor_slice *s, int64_t row, int64_t col)
{
  int64_t offset = 0;
  for (int a = 0; a < s->shape.rank; a++) {
    int64_t i = a == s->row_axis ? row : a == s->col_axis ? col : s->index[a];
    offset = offset * s->shape.dim[a] + i;
  }
  return offset;
}

/* The slice's index with cell (row, col), or ":" on its axes when row < 0. */
static char *format_index(const ts_tensor_slice *s, int64_t row, int64_t col)
{
  GString *str = g_string_new("[");
  for (int a = 0; a < s->shape.rank; a++) {
    if (a)
      g_string_append(str, ", ");
    if (row < 0 && (a == s->row_axis || a == s->col_axis))
      g_string_append_c(str, ':');
    else
      g_string_append_printf(str, "%" G_GINT64_FORMAT,
                             a == s->row_axis ? row : a == s->col_axis ? col : s->index[a]);
  }
  g_string_append_c(str, ']');
  return g_string_free(str, FALSE);
}

char *ts_tensor_slice_format_index(const ts_tensor_slice *s, int64_t row, int64_t col)
{
  return format_index(s, MAX(row, 0), col);
}

char *ts_tensor_slice_describe(const ts_tensor_slice *s)
{
  return format_index(s, -1, -1);
}

static gboolean check_numeric(const ts_tensor *t, const char *which, GError **error)
{
  if (ts_tensor_element_loader(ts_tensor_dtype(t)) && ts_tensor_data(t))
    return TRUE;
  g_autofree char *desc = ts_shape_dtype_string(ts_tensor_dtype(t), ts_tensor_shape(t));
  g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
              "cannot take the difference: %s (%s) has no numeric values", which, desc);
  return FALSE;
}

gboolean ts_tensor_diff_check(const ts_tensor *a, const ts_tensor *b, GError **error)
{
  g_return_val_if_fail(a && b, FALSE);
  if (!ts_shape_equal(ts_tensor_shape(a), ts_tensor_shape(b))) {
    char *sa = ts_shape_dtype_string(ts_tensor_dtype(a), ts_tensor_shape(a));
    char *sb = ts_shape_dtype_string(ts_tensor_dtype(b), ts_tensor_shape(b));
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                "cannot take the difference of %s and %s: the shapes differ", sa, sb);
    free(sa);
    free(sb);
    return FALSE;
  }
  return check_numeric(a, "a", error) && check_numeric(b, "b", error);
}

ts_tensor *ts_tensor_diff(const ts_tensor *a, const ts_tensor *b, double *max_abs, double *max_rel,
                          GError **error)
{
  if (!ts_tensor_diff_check(a, b, error))
    return NULL;
  ts_scope *scope = ts_scope_begin();
  ts_tensor *d = ts_tensor_ref(ts_tensor_new(TS_F64, ts_tensor_shape(a)));
  ts_scope_end(scope);
  if (!d) {
    ts_error *e = ts_error_take();
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot take the difference: %s",
                e ? e->message : "out of memory");
    ts_error_free(e);
    return NULL;
  }
  ts_element_loader la = ts_tensor_element_loader(ts_tensor_dtype(a));
  ts_element_loader lb = ts_tensor_element_loader(ts_tensor_dtype(b));
  const void *da = ts_tensor_data(a), *db = ts_tensor_data(b);
  double *out = ts_tensor_data(d);
  double worst_abs = 0, worst_rel = 0;
  for (int64_t i = 0, n = ts_tensor_size(a); i < n; i++) {
    double x = la(da, i), y = lb(db, i);
    double diff = x == y || (isnan(x) && isnan(y)) ? 0 : x - y;
    out[i] = diff;
    if (isnan(diff))
      continue;
    worst_abs = MAX(worst_abs, fabs(diff));
    if (y != 0 && diff != 0)
      worst_rel = MAX(worst_rel, fabs(diff) / fabs(y));
  }
  *max_abs = worst_abs;
  *max_rel = worst_rel;
  return d;
}
