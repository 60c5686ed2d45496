/* ops/strings.c — string rows as TensorFlow names them: AsString (numbers
 * as text), StringToNumber (text as numbers), StringLower and StringUpper.
 *
 * AsString writes what NumPy's str() of the element does: a float the
 * shortest digits that read back as the same value in its own dtype,
 * positional from 1e-4 up to 1e16 (with ".0" when that looks like an
 * integer: "100.0", "1000000000000000.0"), else scientific ("1e-05",
 * "1e+16"), "nan", "inf" and "-inf"; integers in decimal; bools "True"
 * and "False".  StringToNumber reads the whole string (strtod's forms: "1e-3",
 * "NaN", "+INF") and fails naming the first element that is no number or
 * does not fit its integer dtype.  The case rows change the case of
 * UTF-8 text (GLib's Unicode tables, whatever the locale) and refuse bytes
 * that are no UTF-8. */
#include "../engine-private.h"
#include "float_repr.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define ATTRS(a) .n_attrs = (int)(sizeof(a) / sizeof((a)[0])), .attrs = (a)

static bool check_dtype(ts_infer_ctx *c, bool want_string)
{
  ts_info in = c->in[0];
  bool ok = want_string ? in.dtype == TS_STRING : in.dtype < TS_NUMERIC_DTYPE_COUNT;
  if (ok)
    return true;
  char buf[TS_INFO_STR];
  return ts__infer_fail(c, TS_ERR_DTYPE, "input 0 is %s, not %s", ts__info_str(buf, in.dtype, in.shape),
                        want_string ? "strings" : "numbers");
}

/* Element i of a string output (the dispatcher allocates string outputs on
 * the host: these rows never run on a device, which holds no strings). */
static void set_string(ts_tensor *t, int64_t i, char *s)
{
  char **slot = &((char **)t->data)[i];
  free(*slot);
  *slot = s;
}

/* ---- AsString ----------------------------------------------------------------------- */

static bool as_string_infer(ts_infer_ctx *c)
{
  if (!check_dtype(c, false))
    return false;
  c->out[0] = (ts_info){ TS_STRING, c->in[0].shape };
  return true;
}

/* Does text read back as v in dtype dt (a float dtype)? */
static bool reads_back(const char *text, double v, ts_dtype dt)
{
  switch (dt) {
  case TS_F64: return strtod(text, NULL) == v;
  case TS_F32: return strtof(text, NULL) == (float)v;
  case TS_F16: return ts__f16_to_f32(ts__f64_to_f16(strtod(text, NULL))) == v;
  default: return ts__bf16_to_f32(ts__f64_to_bf16(strtod(text, NULL))) == v;
  }
}

/* v (finite) as NumPy's str() writes a float of dtype dt: the fewest
 * significant digits that read back as v, positional where
 * 1e-4 <= |v| < 1e16 (or v is 0), padded with zeros (float16's 65504 is
 * "65500.0", float32's 1e15 "1000000000000000.0"), else scientific with
 * two exponent digits at least (C's %e writes them so). */
static void shortest(char *buf, size_t size, double v, ts_dtype dt)
{
  char sci[32];
  for (int p = 1;; p++) { /* 17 digits read back as any double */
    snprintf(sci, sizeof sci, "%.*e", p - 1, v);
    if (p == 17 || reads_back(sci, v, dt))
      break;
  }
  double a = fabs(v);
  if (a != 0 && (a < 1e-4 || a >= 1e16)) {
    g_strlcpy(buf, sci, size);
    return;
  }
  char digits[20];
  int n = 0; /* the digits, and e the first one's power of ten */
  for (const char *c = sci; *c && *c != 'e'; c++)
    if (g_ascii_isdigit(*c))
      digits[n++] = *c;
  int e = atoi(strchr(sci, 'e') + 1);
  GString *out = g_string_new(signbit(v) ? "-" : "");
  if (e < 0) {
    g_string_append(out, "0.");
    for (int i = 0; i < -e - 1; i++)
      g_string_append_c(out, '0');
    g_string_append_len(out, digits, n);
  } else {
    for (int i = 0; i <= e; i++)
      g_string_append_c(out, i < n ? digits[i] : '0');
    g_string_append_c(out, '.');
    if (n > e + 1)
      g_string_append_len(out, digits + e + 1, n - e - 1);
    else
      g_string_append_c(out, '0');
  }
  g_strlcpy(buf, out->str, size);
  g_string_free(out, TRUE);
}

void ts__float_repr(char *buf, size_t size, double v)
{
  if (isnan(v))
    g_strlcpy(buf, "nan", size);
  else if (isinf(v))
    g_strlcpy(buf, v > 0 ? "inf" : "-inf", size);
  else
    shortest(buf, size, v, TS_F64);
}

static char *format_element(ts_dtype dt, const void *data, int64_t i)
{
  char buf[48];
  if (dt == TS_BOOL)
    return strdup(((const bool *)data)[i] ? "True" : "False");
  if (dt == TS_U64)
    snprintf(buf, sizeof buf, "%" PRIu64, ((const uint64_t *)data)[i]);
  else if (!ts_dtype_is_float(dt))
    snprintf(buf, sizeof buf, "%" PRId64, ts__load_i64(dt, data, i));
  else {
    double v = ts__load_f64(dt, data, i);
    if (isnan(v))
      return strdup("nan");
    if (isinf(v))
      return strdup(v > 0 ? "inf" : "-inf");
    shortest(buf, sizeof buf, v, dt);
  }
  return strdup(buf);
}

static bool as_string_cpu(ts_kernel_ctx *k)
{
  ts_tensor *x = k->in[0];
  for (int64_t i = 0; i < x->size; i++)
    set_string(k->out[0], i, format_element(x->dtype, x->data, i));
  return true;
}

const ts_op_def ts__op_as_string = {
  .op = TS_OP_AS_STRING, .name = "AsString", .api_name = "as_string", .n_inputs = 1, .n_outputs = 1,
  .flags = TS_OPF_ANY_DTYPE | TS_OPF_NOT_DIFFERENTIABLE,
  .infer = as_string_infer, .kernel[TS_DEVICE_CPU] = as_string_cpu,
};

/* ---- StringToNumber ----------------------------------------------------------------- */

static const ts_attr_def to_number_attrs[] = { { "out_type", TS_ATTR_DTYPE } };

static bool to_number_infer(ts_infer_ctx *c)
{
  if (!check_dtype(c, true))
    return false;
  ts_dtype to = c->attrs[0].dtype;
  if (to >= TS_NUMERIC_DTYPE_COUNT || to == TS_BOOL)
    return ts__infer_fail(c, TS_ERR_DTYPE, "out_type %s is not a number dtype", ts_dtype_name(to));
  c->out[0] = (ts_info){ to, c->in[0].shape };
  return true;
}

/* Whether v fits integer dtype dt. */
static bool fits(ts_dtype dt, long long v, bool is_unsigned)
{
  switch (dt) {
  case TS_I8: return v >= INT8_MIN && v <= INT8_MAX;
  case TS_I16: return v >= INT16_MIN && v <= INT16_MAX;
  case TS_I32: return v >= INT32_MIN && v <= INT32_MAX;
  case TS_I64: return !is_unsigned || v >= 0;
  case TS_U8: return v >= 0 && v <= UINT8_MAX;
  case TS_U16: return v >= 0 && v <= UINT16_MAX;
  case TS_U32: return v >= 0 && v <= (long long)UINT32_MAX;
  default: return true;
  }
}

static bool to_number_cpu(ts_kernel_ctx *k)
{
  ts_tensor *x = k->in[0], *y = k->out[0];
  ts_dtype to = y->dtype;
  for (int64_t i = 0; i < x->size; i++) {
    const char *s = ((char *const *)x->data)[i];
    s = s ? s : "";
    char *end;
    errno = 0;
    bool ok;
    if (to == TS_F32) {
      ((float *)y->data)[i] = strtof(s, &end);
      ok = end != s && !*end;
    } else if (ts_dtype_is_float(to)) {
      ts__store_f64(to, y->data, i, strtod(s, &end));
      ok = end != s && !*end;
    } else if (to == TS_U64) {
      unsigned long long v = strtoull(s, &end, 10);
      ((uint64_t *)y->data)[i] = v;
      ok = end != s && !*end && errno == 0 && !strchr(s, '-');
    } else {
      long long v = strtoll(s, &end, 10);
      ts__store_i64(to, y->data, i, v);
      ok = end != s && !*end && errno == 0 && fits(to, v, false);
    }
    if (!ok)
      return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT, "element %" PRId64 " '%.64s' is not a %s", i, s,
                             ts_dtype_name(to));
  }
  return true;
}

const ts_op_def ts__op_string_to_number = {
  .op = TS_OP_STRING_TO_NUMBER, .name = "StringToNumber", .api_name = "string_to_number",
  .n_inputs = 1, .n_outputs = 1, .flags = TS_OPF_ANY_DTYPE | TS_OPF_NOT_DIFFERENTIABLE,
  ATTRS(to_number_attrs), .infer = to_number_infer, .kernel[TS_DEVICE_CPU] = to_number_cpu,
};

/* ---- StringLower and StringUpper ---------------------------------------------------- */

static bool case_infer(ts_infer_ctx *c)
{
  if (!check_dtype(c, true))
    return false;
  c->out[0] = (ts_info){ TS_STRING, c->in[0].shape };
  return true;
}

static bool change_case(ts_kernel_ctx *k, bool upper)
{
  ts_tensor *x = k->in[0];
  for (int64_t i = 0; i < x->size; i++) {
    const char *s = ((char *const *)x->data)[i];
    if (s && !g_utf8_validate(s, -1, NULL))
      return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT, "element %" PRId64 " is not UTF-8 text", i);
  }
  for (int64_t i = 0; i < x->size; i++) {
    const char *s = ((char *const *)x->data)[i];
    char *changed = upper ? g_utf8_strup(s ? s : "", -1) : g_utf8_strdown(s ? s : "", -1);
    set_string(k->out[0], i, strdup(changed)); /* the tensor frees with free() */
    g_free(changed);
  }
  return true;
}

static bool lower_cpu(ts_kernel_ctx *k) { return change_case(k, false); }
static bool upper_cpu(ts_kernel_ctx *k) { return change_case(k, true); }

const ts_op_def ts__op_string_lower = {
  .op = TS_OP_STRING_LOWER, .name = "StringLower", .api_name = "string_lower", .n_inputs = 1,
  .n_outputs = 1, .flags = TS_OPF_ANY_DTYPE | TS_OPF_NOT_DIFFERENTIABLE,
  .infer = case_infer, .kernel[TS_DEVICE_CPU] = lower_cpu,
};

const ts_op_def ts__op_string_upper = {
  .op = TS_OP_STRING_UPPER, .name = "StringUpper", .api_name = "string_upper", .n_inputs = 1,
  .n_outputs = 1, .flags = TS_OPF_ANY_DTYPE | TS_OPF_NOT_DIFFERENTIABLE,
  .infer = case_infer, .kernel[TS_DEVICE_CPU] = upper_cpu,
};

/* ---- wrappers ----------------------------------------------------------------------- */

ts_tensor *ts_as_string_at(ts_loc loc, ts_tensor *x)
{
  return ts__dispatch1(loc, TS_OP_AS_STRING, &x, 1, NULL);
}

ts_tensor *ts_string_to_number_at(ts_loc loc, ts_tensor *x, ts_dtype out_type)
{
  ts_attr attrs[] = { TS_ATTR_DT(out_type) };
  return ts__dispatch1(loc, TS_OP_STRING_TO_NUMBER, &x, 1, attrs);
}

ts_tensor *ts_string_lower_at(ts_loc loc, ts_tensor *x)
{
  return ts__dispatch1(loc, TS_OP_STRING_LOWER, &x, 1, NULL);
}

ts_tensor *ts_string_upper_at(ts_loc loc, ts_tensor *x)
{
  return ts__dispatch1(loc, TS_OP_STRING_UPPER, &x, 1, NULL);
}
