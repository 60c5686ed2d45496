/* print_tf.c — tensors formatted as tf.print does them (TensorFlow's
 * SummarizeValue with print_v2 and summarize=3), beside print.c's NumPy-style
 * printer: "[0 1 2 ... 7 8 9]", rows on their own lines ("[[1 2]\n [3 4]]"),
 * floats as C++ StrCat does (%.6g, or %.9g when that does not read back;
 * %.15g / %.17g for doubles), bools as 1 and 0, string tensors quoted and
 * C-escaped.  The Print op (ops/state.c) calls it.  And as SummarizeValue
 * without print_v2 gives them, as tf.debugging.Assert shows its data
 * (ops/assert.c): the first elements only, "1 2 3...", "[1 2][3...]...",
 * strings unquoted. */
#include "engine-private.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- tf.print formatting ------------------------------------------------ */

enum { SUMMARIZE = 3 }; /* tf.print's default: 3 elements at each end of a dim */

/* absl::Utf8SafeCEscape: escapes controls, quotes and backslashes; bytes
 * from 0x80 up pass through (UTF-8 stays readable). */
static void append_c_escaped(GString *s, const char *str)
{
  for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
    switch (*p) {
    case '\n': g_string_append(s, "\\n"); break;
    case '\r': g_string_append(s, "\\r"); break;
    case '\t': g_string_append(s, "\\t"); break;
    case '\"': g_string_append(s, "\\\""); break;
    case '\'': g_string_append(s, "\\'"); break;
    case '\\': g_string_append(s, "\\\\"); break;
    default:
      if (*p < 0x80 && (*p < 0x20 || *p == 0x7f))
        g_string_append_printf(s, "\\%03o", *p);
      else
        g_string_append_c(s, (char)*p);
    }
  }
}

static void append_element(GString *s, const ts_tensor *t, int64_t i, bool quoted)
{
  char buf[40];
  switch (t->dtype) {
  case TS_F32:
  case TS_F16: /* Eigen::half and bfloat16 print as the float they widen to */
  case TS_BF16: {
    float v = (float)ts__load_f64(t->dtype, t->data, i);
    if (isnan(v)) {
      g_string_append(s, signbit(v) ? "-nan" : "nan");
      return;
    }
    snprintf(buf, sizeof buf, "%.*g", FLT_DIG, (double)v);
    if (strtof(buf, NULL) != v)
      snprintf(buf, sizeof buf, "%.*g", FLT_DIG + 3, (double)v);
    break;
  }
  case TS_F64: {
    double v = ((const double *)t->data)[i];
    if (isnan(v)) {
      g_string_append(s, signbit(v) ? "-nan" : "nan");
      return;
    }
    snprintf(buf, sizeof buf, "%.*g", DBL_DIG, v);
    if (strtod(buf, NULL) != v)
      snprintf(buf, sizeof buf, "%.*g", DBL_DIG + 2, v);
    break;
  }
  case TS_STRING: {
    const char *str = ((char *const *)t->data)[i];
    if (quoted)
      g_string_append_c(s, '"');
    append_c_escaped(s, str ? str : "");
    if (quoted)
      g_string_append_c(s, '"');
    return;
  }
  case TS_VARIANT:
    ts__variant_append_name(s, t, i);
    return;
  case TS_U64:
    snprintf(buf, sizeof buf, "%" PRIu64, ((const uint64_t *)t->data)[i]);
    break;
  default: /* integers, and bools as 1 / 0 */
    snprintf(buf, sizeof buf, "%" PRId64, ts__load_i64(t->dtype, t->data, i));
  }
  g_string_append(s, buf);
}

/* Between two items of dimension `axis`: a space in the last dim, else a
 * newline per inner dim and an indent of axis + 1 (PrintDimSpacing). */
static void append_dim_spacing(GString *s, int axis, int rank)
{
  if (axis == rank - 1) {
    g_string_append_c(s, ' ');
    return;
  }
  for (int j = 0; j < rank - axis - 1; j++)
    g_string_append_c(s, '\n');
  for (int j = 0; j <= axis; j++)
    g_string_append_c(s, ' ');
}

/* PrintOneDimV2: `ends` elements at each end of every dim, "..." between. */
static void append_dim(GString *s, const ts_tensor *t, int axis, int64_t ends, int64_t offset)
{
  int rank = t->shape.rank;
  if (axis == rank) {
    append_element(s, t, offset, true);
    return;
  }
  int64_t n = t->shape.dim[axis], stride = 0;
  if (!ts__shape_product(t->shape.dim + axis + 1, rank - axis - 1, &stride))
    stride = 0; /* an empty tensor with huge dims: no element is reached */
  g_string_append_c(s, '[');
  for (int64_t i = 0; i < ends && i < n; i++) {
    if (i > 0)
      append_dim_spacing(s, axis, rank);
    append_dim(s, t, axis + 1, ends, offset + stride * i);
  }
  if (n > 2 * ends) {
    append_dim_spacing(s, axis, rank);
    g_string_append(s, "...");
  }
  for (int64_t i = MAX(ends, n - ends); i < n; i++) {
    append_dim_spacing(s, axis, rank);
    append_dim(s, t, axis + 1, ends, offset + stride * i);
  }
  g_string_append_c(s, ']');
}

/* (TensorFlow limits the ends to the element count too, which prints an
 * empty [1, 0] tensor as "[\n ...]"; we print "[[]]".) */
void ts__append_tf_print(GString *s, const ts_tensor *t)
{
  append_dim(s, t, 0, SUMMARIZE, 0);
}

/* PrintOneDim: the elements before `limit` in row-major order, each row
 * of an inner dim in brackets, "..." where a last dim is cut short. */
static void append_dim_v1(GString *s, const ts_tensor *t, int axis, int64_t limit, int64_t *at)
{
  int64_t n = t->shape.dim[axis];
  if (axis == t->shape.rank - 1) {
    for (int64_t i = 0; i < n; i++) {
      if (*at >= limit) {
        if (axis != 0)
          g_string_append(s, "...");
        return;
      }
      if (i > 0)
        g_string_append_c(s, ' ');
      append_element(s, t, (*at)++, false);
    }
    return;
  }
  for (int64_t i = 0; i < n && *at < limit; i++) {
    g_string_append_c(s, '[');
    append_dim_v1(s, t, axis + 1, limit, at);
    g_string_append_c(s, ']');
  }
}

void ts__append_tf_summary(GString *s, const ts_tensor *t, int64_t max_entries)
{
  int64_t limit = max_entries < 0 ? t->size : MIN(max_entries, t->size), at = 0;
  if (t->shape.rank == 0) {
    if (limit > 0)
      append_element(s, t, 0, false);
  } else if (limit > 0) {
    append_dim_v1(s, t, 0, limit, &at);
  }
  if (t->size > limit)
    g_string_append(s, "...");
}
