/* arg_spec.c — argument specs (as given to `tracescope-cli run --arg`) parsed
 * into values.  The grammar is documented beside ts_value_parse in tracescope.h. */
#include "engine-private.h"

#include <errno.h>
#include <inttypes.h>
#include <glib.h>
#include <stdlib.h>

#define DEFAULT_SEED 1

static const ts_loc no_loc = { NULL, NULL, 0 };

/* Records "argument 'SPEC': what" as the error; returns false. */
static bool __attribute__((format(printf, 2, 3))) spec_fail(const char *spec, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  /* a long spec (a generated list) is named by its start */
  int shown = strlen(spec) > 120 ? 100 : (int)strlen(spec);
  ts_error_set(TS_ERR_INVALID_ARGUMENT, no_loc, NULL, "argument '%.*s%s': %s", shown, spec,
               spec[shown] ? "..." : "", what);
  g_free(what);
  return false;
}

/* Whole-string integer / float parses; false on junk or overflow. */
static bool parse_int(const char *s, int64_t *out)
{
  if (!g_ascii_isdigit(*s) && !((*s == '-' || *s == '+') && g_ascii_isdigit(s[1])))
    return false;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*end || errno == ERANGE)
    return false;
  *out = v;
  return true;
}

static bool parse_float(const char *s, double *out)
{
  const char *digits = s + (*s == '-' || *s == '+');
  if (!*digits)
    return false;
  char *end;
  double v = g_ascii_strtod(s, &end);
  if (*end || end == s)
    return false;
  *out = v;
  return true;
}

/* ---- tensors: DTYPE[DIMS]=VALUES | DTYPE[DIMS]:GENERATOR ------------------ */

static bool parse_dims(const char *spec, const char *dims, ts_shape *shape)
{
  shape->rank = 0;
  char *text = g_strstrip(g_strdup(dims));
  bool ok = true;
  if (*text) {
    char **parts = g_strsplit(text, ",", -1);
    for (int i = 0; ok && parts[i]; i++) {
      int64_t d;
      if (i >= TS_MAX_RANK)
        ok = spec_fail(spec, "more than %d dimensions", TS_MAX_RANK);
      else if (!parse_int(g_strstrip(parts[i]), &d))
        ok = spec_fail(spec, "malformed shape [%s]: '%s' is not a dimension%s", text, parts[i],
                       g_ascii_isdigit(*parts[i]) ? " (out of range)" : "");
      else if (d < 0)
        ok = spec_fail(spec, "malformed shape [%s]: negative dimension %" PRId64, text, d);
      else
        shape->dim[shape->rank++] = d;
    }
    int64_t size;
    if (ok && (!ts__shape_product(shape->dim, shape->rank, &size) ||
               size > INT64_MAX / (int64_t)sizeof(double)))
      ok = spec_fail(spec, "shape [%s] has too many elements", text);
    g_strfreev(parts);
  }
  g_free(text);
  return ok;
}

typedef union number {
  double f;
  int64_t i;
} number;

/* The dtypes a spec can give and, for integers and bool, their value range. */
static const struct {
  bool ok;
  int64_t lo, hi;
} spec_dtypes[TS_DTYPE_COUNT] = {
  [TS_F32] = { true, 0, 0 },
  [TS_F64] = { true, 0, 0 },
  [TS_I32] = { true, INT32_MIN, INT32_MAX },
  [TS_I64] = { true, INT64_MIN, INT64_MAX },
  [TS_U8] = { true, 0, UINT8_MAX },
  [TS_BOOL] = { true, 0, 1 },
  [TS_I8] = { true, INT8_MIN, INT8_MAX },
  [TS_I16] = { true, INT16_MIN, INT16_MAX },
  [TS_U16] = { true, 0, UINT16_MAX },
  [TS_U32] = { true, 0, UINT32_MAX },
  [TS_U64] = { true, 0, INT64_MAX }, /* as far as an int64 literal goes */
  [TS_F16] = { true, 0, 0 },
  [TS_BF16] = { true, 0, 0 },
};

/* Floats, then signed and unsigned integers, then bool; smaller first. */
static int dtype_order(const void *a, const void *b)
{
  ts_dtype x = *(const ts_dtype *)a, y = *(const ts_dtype *)b;
  int kx = ts_dtype_is_float(x) ? 0 : x == TS_BOOL ? 3 : spec_dtypes[x].lo < 0 ? 1 : 2;
  int ky = ts_dtype_is_float(y) ? 0 : y == TS_BOOL ? 3 : spec_dtypes[y].lo < 0 ? 1 : 2;
  if (kx != ky)
    return kx - ky;
  if (ts_dtype_size(x) != ts_dtype_size(y))
    return ts_dtype_size(x) < ts_dtype_size(y) ? -1 : 1;
  return (int)x - (int)y;
}

char *ts_value_spec_dtypes(const char *separator)
{
  ts_dtype order[TS_DTYPE_COUNT];
  size_t n = 0;
  for (int d = 0; d < TS_DTYPE_COUNT; d++)
    if (spec_dtypes[d].ok)
      order[n++] = (ts_dtype)d;
  qsort(order, n, sizeof order[0], dtype_order);
  GString *names = g_string_new(NULL);
  for (size_t i = 0; i < n; i++)
    g_string_append_printf(names, "%s%s", i ? separator : "", ts_dtype_short_name(order[i]));
  return g_string_free(names, FALSE);
}

static bool parse_element(const char *spec, ts_dtype dtype, const char *text, number *out)
{
  if (ts_dtype_is_float(dtype)) {
    if (!parse_float(text, &out->f))
      return spec_fail(spec, "bad number '%s' for %s", text, ts_dtype_short_name(dtype));
    return true;
  }
  if (dtype == TS_BOOL && (strcmp(text, "true") == 0 || strcmp(text, "false") == 0)) {
    out->i = text[0] == 't';
    return true;
  }
  if (!parse_int(text, &out->i))
    return spec_fail(spec, "bad number '%s' for %s", text, ts_dtype_short_name(dtype));
  if (out->i < spec_dtypes[dtype].lo || out->i > spec_dtypes[dtype].hi)
    return spec_fail(spec, "%s is out of range for %s", text, ts_dtype_short_name(dtype));
  return true;
}

static void store_element(ts_tensor *t, int64_t k, number v)
{
  if (ts_dtype_is_float(t->dtype))
    ts__store_f64(t->dtype, t->data, k, v.f);
  else
    ts__store_i64(t->dtype, t->data, k, v.i);
}

/* "1,2,3" into a tensor of shape: one value per element. */
static ts_tensor *parse_values(const char *spec, ts_dtype dtype, ts_shape shape,
                               const char *text)
{
  char *what = ts_shape_dtype_string(dtype, shape);
  int64_t size = ts_shape_size(shape);
  char **parts = *text ? g_strsplit(text, ",", -1) : g_new0(char *, 1);
  int64_t n = g_strv_length(parts);
  number *values = g_new(number, n > 0 ? n : 1);
  ts_tensor *t = NULL;
  bool ok = true;
  if (n != size)
    ok = spec_fail(spec, "%" PRId64 " value%s expected for %s, got %" PRId64
                   " (values are separated by commas, in row-major order)",
                   size, size == 1 ? "" : "s", what, n);
  for (int64_t i = 0; ok && i < n; i++)
    ok = parse_element(spec, dtype, g_strstrip(parts[i]), &values[i]);
  if (ok && (t = ts_tensor_new(dtype, shape)))
    for (int64_t k = 0; k < size; k++)
      store_element(t, k, values[k]);
  g_free(values);
  g_strfreev(parts);
  free(what);
  return t;
}

/* ":range" or ":range(START)": START, START+1, ... in row-major order. */
static ts_tensor *make_range(ts_dtype dtype, ts_shape shape, double start)
{
  ts_tensor *flat = ts_range(dtype, start, start + (double)ts_shape_size(shape), 1);
  return ts_reshape(flat, shape);
}

static ts_tensor *parse_generator(const char *spec, ts_dtype dtype, ts_shape shape,
                                  const char *gen)
{
  /* "NAME", "NAME@SEED" (random) or "range(START)" */
  const char *at = strchr(gen, '@');
  const char *paren = strchr(gen, '(');
  size_t len = at ? (size_t)(at - gen) : paren ? (size_t)(paren - gen) : strlen(gen);
  char *name = g_strndup(gen, len);
  bool is_random = strcmp(name, "uniform") == 0 || strcmp(name, "normal") == 0;
  bool is_range = strcmp(name, "range") == 0;
  int64_t seed = DEFAULT_SEED;
  double start = 0;
  ts_tensor *t = NULL;
  bool ok = true;
  if (at && !is_random)
    ok = spec_fail(spec, "only uniform and normal take a @SEED");
  else if (at && (!parse_int(at + 1, &seed) || seed < 0))
    ok = spec_fail(spec, "bad seed '%s'", at + 1);
  else if (paren && !is_range)
    ok = spec_fail(spec, "only range takes a (START)");
  else if (paren && !g_str_has_suffix(paren, ")"))
    ok = spec_fail(spec, "missing ')' after range(START");
  else if (paren) {
    char *arg = g_strndup(paren + 1, strlen(paren) - 2);
    if (!parse_float(g_strstrip(arg), &start))
      ok = spec_fail(spec, "bad range start '%s'", arg);
    g_free(arg);
  }
  if (!ok) {
    g_free(name);
    return NULL;
  }
  /* uniform is [0, 1) for floats, [0, 10) for integers, like tf.random.uniform(maxval=10) */
  double hi = ts_dtype_is_float(dtype) ? 1 : 10;
  if (strcmp(name, "uniform") == 0)
    t = ts_random_uniform(dtype, shape, 0, hi, (uint64_t)seed);
  else if (strcmp(name, "normal") == 0)
    t = ts_random_normal(dtype, shape, 0, 1, (uint64_t)seed);
  else if (strcmp(name, "zeros") == 0)
    t = ts_zeros(dtype, shape);
  else if (strcmp(name, "ones") == 0)
    t = ts_ones(dtype, shape);
  else if (is_range)
    t = make_range(dtype, shape, start);
  else
    spec_fail(spec, "unknown generator '%s' (uniform, normal, zeros, ones, range)", name);
  g_free(name);
  return t;
}

/* Rewords the error of an op that failed to make the tensor to name the
 * spec; the parser's own errors name it already. */
static bool spec_fail_op(const char *spec)
{
  const ts_error *pending = ts_error_peek();
  if (pending && pending->op) {
    ts_error *e = ts_error_take();
    spec_fail(spec, "%s: %s", e->op, e->detail ? e->detail : "failed");
    ts_error_free(e);
  }
  return false;
}

static bool parse_tensor(const char *spec, const char *bracket, ts_value *out)
{
  char *dtype_name = g_strndup(spec, (size_t)(bracket - spec));
  ts_dtype dtype;
  bool known = ts_dtype_from_name(dtype_name, &dtype);
  bool ok = known && spec_dtypes[dtype].ok;
  if (!ok) {
    g_autofree char *dtypes = ts_value_spec_dtypes(", ");
    spec_fail(spec, "%s dtype '%s' (%s)", known ? "a spec cannot give" : "unknown", dtype_name, dtypes);
  }
  g_free(dtype_name);
  if (!ok)
    return false;
  const char *close = strchr(bracket, ']');
  if (!close)
    return spec_fail(spec, "malformed shape: missing ']'");
  char *dims = g_strndup(bracket + 1, (size_t)(close - bracket - 1));
  ts_shape shape;
  ok = parse_dims(spec, dims, &shape);
  g_free(dims);
  if (!ok)
    return false;
  ts_tensor *t = NULL;
  if (close[1] == '=')
    t = parse_values(spec, dtype, shape, close + 2);
  else if (close[1] == ':')
    t = parse_generator(spec, dtype, shape, close + 2);
  else
    return spec_fail(spec, "expected '=VALUES' or ':GENERATOR' after the shape");
  if (!t)
    return spec_fail_op(spec);
  out->kind = TS_VALUE_TENSOR;
  out->tensor = t;
  return true;
}

/* ---- host values: numbers, bools, lists, strings --------------------------- */

/* Lists nest at most this deep (a tensor has at most TS_MAX_RANK dims). */
#define LIST_DEPTH_LIMIT 32

static bool parse_host(const char *spec, const char *text, ts_value *out);

/* The end of the list opening at `open`: just past its matching ']', or at
 * the terminating NUL if it has none.  For error messages only. */
static const char *list_end(const char *open)
{
  int depth = 0;
  for (const char *p = open; *p; p++)
    if (*p == '[')
      depth++;
    else if (*p == ']' && --depth == 0)
      return p + 1;
  return open + strlen(open);
}

/* "empty item N in list '...'" for empty_item >= 0, else the missing ']'. */
static bool list_fail_at(const char *spec, const char *open, int empty_item)
{
  char *text = g_strndup(open, (size_t)(list_end(open) - open));
  bool r = empty_item >= 0 ? spec_fail(spec, "empty item %d in list '%s'", empty_item, text)
                           : spec_fail(spec, "list '%s' is missing its closing ']'", text);
  g_free(text);
  return r;
}

/* Parses the list opening at *pp (a '[') up to its matching ']' and leaves
 * *pp just past it.  One pass over the text, items parsed in place: time and
 * memory are linear in the spec, and nesting stops at LIST_DEPTH_LIMIT. */
static bool parse_list_at(const char *spec, const char **pp, int depth, ts_value *out)
{
  const char *open = *pp, *p = open + 1;
  if (depth >= LIST_DEPTH_LIMIT)
    return spec_fail(spec, "lists nest more than %d deep (at position %td)", LIST_DEPTH_LIMIT,
                     open - spec);
  GArray *items = g_array_new(FALSE, TRUE, sizeof(ts_value));
  bool ok = true;
  while (g_ascii_isspace(*p))
    p++;
  if (*p == ']') {
    p++;
  } else {
    for (;;) {
      while (g_ascii_isspace(*p))
        p++;
      ts_value v = { .kind = TS_VALUE_NONE };
      if (*p == '[') {
        ok = parse_list_at(spec, &p, depth + 1, &v);
        while (ok && g_ascii_isspace(*p))
          p++;
        if (ok && *p != ',' && *p != ']') {
          ts_value_clear(&v);
          ok = *p ? spec_fail(spec, "unexpected '%c' after a list at position %td", *p, p - spec)
                  : list_fail_at(spec, open, -1);
        }
      } else {
        /* a scalar item: up to the next ',' or ']' outside brackets ("x[1]" is a string) */
        const char *at = p;
        int inner = 0;
        for (; *p && !(inner == 0 && (*p == ',' || *p == ']')); p++)
          inner += *p == '[' ? 1 : *p == ']' ? -1 : 0;
        if (!*p) {
          ok = list_fail_at(spec, open, -1);
        } else {
          char *item = g_strstrip(g_strndup(at, (size_t)(p - at)));
          ok = *item ? parse_host(spec, item, &v) : list_fail_at(spec, open, (int)items->len);
          g_free(item);
        }
      }
      if (!ok)
        break;
      g_array_append_val(items, v);
      if (*p++ == ']')
        break;
    }
  }
  out->kind = TS_VALUE_LIST;
  out->list.n = (int)items->len;
  out->list.items = (const ts_value *)g_array_free(items, items->len == 0);
  if (!out->list.items)
    out->list.items = g_new0(ts_value, 1);
  if (!ok) {
    ts_value_clear(out);
    return false;
  }
  *pp = p;
  return true;
}

/* A whole list spec: one list and nothing after it but spaces. */
static bool parse_list(const char *spec, const char *text, ts_value *out)
{
  const char *p = text;
  if (!parse_list_at(spec, &p, 0, out))
    return false;
  while (g_ascii_isspace(*p))
    p++;
  if (!*p)
    return true;
  ts_value_clear(out);
  if (*p == ']')
    return spec_fail(spec, "unbalanced brackets in list '%s'", text);
  return spec_fail(spec, "list '%s' is missing its closing ']'", text);
}

static bool parse_host(const char *spec, const char *text, ts_value *out)
{
  if (text[0] == '[')
    return parse_list(spec, text, out);
  if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0) {
    out->kind = TS_VALUE_BOOL;
    out->b = text[0] == 't';
    return true;
  }
  const char *digits = text + (*text == '-' || *text == '+');
  if (g_ascii_isdigit(*digits) || (*digits == '.' && g_ascii_isdigit(digits[1]))) {
    if (parse_int(text, &out->i)) {
      out->kind = TS_VALUE_INT;
      return true;
    }
    if (!strpbrk(text, ".eE") && strspn(digits, "0123456789") == strlen(digits))
      return spec_fail(spec, "integer %s is out of range", text);
    if (parse_float(text, &out->f)) {
      out->kind = TS_VALUE_FLOAT;
      return true;
    }
  }
  out->kind = TS_VALUE_STRING;
  out->s = g_strdup(text);
  return true;
}

/* Where "DTYPE[" ends: the '[' after an identifier, or NULL. */
static const char *tensor_bracket(const char *spec)
{
  const char *p = spec;
  if (!g_ascii_isalpha(*p))
    return NULL;
  while (g_ascii_isalnum(*p) || *p == '_')
    p++;
  return *p == '[' ? p : NULL;
}

bool ts_value_parse(const char *spec, ts_value *out)
{
  TS_CHECK_ARG(spec != NULL && out != NULL, false);
  *out = (ts_value){ .kind = TS_VALUE_NONE };
  if (g_str_has_prefix(spec, "npy:")) {
    if (!spec[4])
      return spec_fail(spec, "npy: needs a file name");
    ts_tensor *t = ts_npy_load(spec + 4);
    if (!t)
      return false;
    out->kind = TS_VALUE_TENSOR;
    out->tensor = t;
    return true;
  }
  const char *bracket = tensor_bracket(spec);
  bool ok = bracket ? parse_tensor(spec, bracket, out) : parse_host(spec, spec, out);
  if (!ok)
    *out = (ts_value){ .kind = TS_VALUE_NONE };
  return ok;
}

void ts_value_clear(ts_value *v)
{
  if (!v)
    return;
  if (v->kind == TS_VALUE_STRING)
    g_free((char *)v->s);
  else if (v->kind == TS_VALUE_LIST) {
    for (int i = 0; i < v->list.n; i++)
      ts_value_clear((ts_value *)&v->list.items[i]);
    g_free((ts_value *)v->list.items);
  }
  *v = (ts_value){ .kind = TS_VALUE_NONE };
}
