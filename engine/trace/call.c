/* call.c — what a running function sees of its call: its arguments, as
 * tensors (host numbers and lists become constants) or as host values. */
#include "function-private.h"
#include "../ops/float_repr.h"

int ts_call_n_args(const ts_call *call)
{
  TS_CHECK_ARG(call != NULL, 0);
  return call->n_args;
}

const ts_value *ts_call_arg_value(const ts_call *call, int i)
{
  TS_CHECK_ARG(call != NULL, NULL);
  return i >= 0 && i < call->n_args ? &call->args[i] : NULL;
}

static const char *const kind_names[TS_VALUE_KIND_COUNT] = {
  [TS_VALUE_NONE] = "nothing",  [TS_VALUE_TENSOR] = "a tensor", [TS_VALUE_INT] = "an int",
  [TS_VALUE_FLOAT] = "a float", [TS_VALUE_BOOL] = "a bool",     [TS_VALUE_STRING] = "a string",
  [TS_VALUE_LIST] = "a list",   [TS_VALUE_SPEC] = "a tensor spec",
};

static const char *kind_name(ts_value_kind kind)
{
  return (unsigned)kind < TS_VALUE_KIND_COUNT && kind_names[kind] ? kind_names[kind]
                                                                   : "an unknown value";
}

/* "argument 1 (y)" or "argument 3" into buf. */
static const char *arg_label(char *buf, size_t size, const ts_call *call, int i)
{
  if (i >= 0 && i < call->n_params)
    g_snprintf(buf, size, "argument %d (%s)", i, call->params[i]);
  else
    g_snprintf(buf, size, "argument %d", i);
  return buf;
}

/* Argument i, or NULL with an error when it is missing. */
static const ts_value *arg_get(ts_loc loc, const ts_call *call, int i)
{
  const ts_value *v = ts_call_arg_value(call, i);
  if (!v || v->kind == TS_VALUE_NONE) {
    char label[128];
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL, "%s: missing %s", call->name,
                 arg_label(label, sizeof label, call, i));
    return NULL;
  }
  return v;
}

/* What v is, after its kind in an error: " 2.5", " True", " f32[2,3]"
 * (as the call's signature writes them), a string's first 48 characters
 * (a mistyped tensor spec, "f32 [3]=1,2,3", reads as one); "" for lists. */
static char *value_text(const ts_value *v)
{
  char buf[MAX(TS_INFO_STR, TS_FLOAT_REPR_SIZE)];
  switch (v->kind) {
  case TS_VALUE_INT: return g_strdup_printf(" %" G_GINT64_FORMAT, v->i);
  case TS_VALUE_FLOAT: ts__float_repr(buf, sizeof buf, v->f); return g_strdup_printf(" %s", buf);
  case TS_VALUE_BOOL: return g_strdup(v->b ? " True" : " False");
  case TS_VALUE_TENSOR:
    return v->tensor ? g_strdup_printf(" %s", ts__info_str(buf, v->tensor->dtype, v->tensor->shape)) : g_strdup("");
  case TS_VALUE_SPEC: return g_strdup_printf(" %s", ts__info_str(buf, v->spec.dtype, v->spec.shape));
  case TS_VALUE_STRING: {
    if (!v->s || !g_utf8_validate(v->s, -1, NULL))
      return g_strdup("");
    glong length = g_utf8_strlen(v->s, -1);
    g_autofree char *head = g_utf8_substring(v->s, 0, MIN(length, 48));
    return g_strdup_printf(" '%s%s'", head, length > 48 ? "..." : "");
  }
  default: return g_strdup("");
  }
}

static void *arg_kind_error(ts_loc loc, const ts_call *call, int i, const char *want,
                            const ts_value *v)
{
  char label[128];
  g_autofree char *text = value_text(v);
  ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL, "%s: %s must be %s, got %s%s", call->name,
               arg_label(label, sizeof label, call, i), want, kind_name(v->kind), text);
  return NULL;
}

/* A host list as a tensor, as tf.constant([...]) does: nested lists must be
 * rectangular and hold numbers or bools only. */
typedef struct list_scan {
  ts_shape shape;
  int leaf_depth; /* where the numbers sit; -1 until one is seen */
  bool any_float, any_int, any_bool, wide, bad;
} list_scan;

static void list_scan_value(list_scan *s, const ts_value *v, int depth)
{
  if (v->kind == TS_VALUE_LIST) {
    if (depth >= TS_MAX_RANK || (s->leaf_depth >= 0 && depth >= s->leaf_depth)) {
      s->bad = true;
      return;
    }
    if (s->shape.rank == depth)
      s->shape.dim[s->shape.rank++] = v->list.n;
    else if (s->shape.dim[depth] != v->list.n)
      s->bad = true;
    for (int i = 0; i < v->list.n && !s->bad; i++)
      list_scan_value(s, &v->list.items[i], depth + 1);
    return;
  }
  if (s->leaf_depth < 0)
    s->leaf_depth = depth;
  if (depth != s->leaf_depth || depth != s->shape.rank)
    s->bad = true;
  switch (v->kind) {
  case TS_VALUE_INT:
    s->any_int = true;
    s->wide |= v->i < INT32_MIN || v->i > INT32_MAX;
    break;
  case TS_VALUE_FLOAT: s->any_float = true; break;
  case TS_VALUE_BOOL: s->any_bool = true; break;
  default: s->bad = true; break;
  }
}

static void list_store(ts_tensor *t, const ts_value *v, int64_t *at)
{
  if (v->kind == TS_VALUE_LIST) {
    for (int i = 0; i < v->list.n; i++)
      list_store(t, &v->list.items[i], at);
    return;
  }
  int64_t k = (*at)++;
  double f = v->kind == TS_VALUE_FLOAT ? v->f : v->kind == TS_VALUE_INT ? (double)v->i : v->b;
  if (ts_dtype_is_float(t->dtype))
    ts__store_f64(t->dtype, t->data, k, f);
  else
    ts__store_i64(t->dtype, t->data, k, v->kind == TS_VALUE_BOOL ? v->b : v->i);
}

/* Can the scanned values be stored as dtype?  As tf.convert_to_tensor
 * with a dtype: ints as any number, floats as floats, bools as bools. */
static bool list_fits(const list_scan *s, ts_dtype dtype)
{
  if (s->any_float)
    return ts_dtype_is_float(dtype);
  if (s->any_int)
    return dtype < TS_NUMERIC_DTYPE_COUNT && dtype != TS_BOOL;
  return s->any_bool ? dtype == TS_BOOL : dtype < TS_NUMERIC_DTYPE_COUNT;
}

ts_tensor *ts__host_tensor(const ts_value *v, int dtype, const char **why)
{
  list_scan s = { .leaf_depth = -1 };
  list_scan_value(&s, v, 0);
  if (s.bad || (s.any_bool && (s.any_int || s.any_float))) {
    *why = "a rectangular list of numbers or of bools";
    return NULL;
  }
  if (dtype < 0) /* [] is float32, as in TensorFlow */
    dtype = s.any_bool ? TS_BOOL : s.any_int && !s.any_float ? (s.wide ? TS_I64 : TS_I32) : TS_F32;
  else if (!list_fits(&s, (ts_dtype)dtype)) {
    *why = s.any_float ? "floats" : s.any_int ? "ints" : "bools";
    return NULL;
  }
  ts_tensor *t = ts_tensor_new((ts_dtype)dtype, s.shape);
  if (!t)
    return NULL;
  int64_t at = 0;
  list_store(t, v, &at);
  return t;
}

static ts_tensor *list_to_tensor(ts_loc loc, const ts_call *call, int i, const ts_value *v)
{
  const char *why = NULL;
  ts_tensor *t = ts__host_tensor(v, -1, &why);
  return t || !why ? t : arg_kind_error(loc, call, i, why, v);
}

ts_tensor *ts_arg_at(ts_loc loc, ts_call *call, int i)
{
  TS_CHECK_ARG(call != NULL, NULL);
  const ts_value *v = arg_get(loc, call, i);
  if (!v)
    return NULL;
  switch (v->kind) {
  case TS_VALUE_TENSOR:
    if (!v->tensor)
      ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL, "%s: argument %d is a NULL tensor",
                   call->name, i);
    return v->tensor;
  case TS_VALUE_INT:
    return v->i >= INT32_MIN && v->i <= INT32_MAX ? ts_scalar_i32((int32_t)v->i) : ts_scalar_i64(v->i);
  case TS_VALUE_FLOAT: return ts_scalar_f32((float)v->f);
  case TS_VALUE_BOOL: return ts_scalar_bool(v->b);
  case TS_VALUE_LIST: return list_to_tensor(loc, call, i, v);
  default: return arg_kind_error(loc, call, i, "a tensor or a number", v);
  }
}

int64_t ts_arg_int_at(ts_loc loc, ts_call *call, int i)
{
  TS_CHECK_ARG(call != NULL, 0);
  const ts_value *v = arg_get(loc, call, i);
  if (!v)
    return 0;
  if (v->kind == TS_VALUE_BOOL) /* a bool is an int, as in Python (True == 1) */
    return v->b;
  if (v->kind != TS_VALUE_INT) {
    arg_kind_error(loc, call, i, "an int", v);
    return 0;
  }
  return v->i;
}

double ts_arg_float_at(ts_loc loc, ts_call *call, int i)
{
  TS_CHECK_ARG(call != NULL, 0);
  const ts_value *v = arg_get(loc, call, i);
  if (!v)
    return 0;
  if (v->kind == TS_VALUE_INT) /* an int (or a bool) is a fine float, as in Python */
    return (double)v->i;
  if (v->kind == TS_VALUE_BOOL)
    return v->b;
  if (v->kind != TS_VALUE_FLOAT) {
    arg_kind_error(loc, call, i, "a float", v);
    return 0;
  }
  return v->f;
}

const char *ts_arg_str_at(ts_loc loc, ts_call *call, int i)
{
  TS_CHECK_ARG(call != NULL, "");
  const ts_value *v = arg_get(loc, call, i);
  if (!v)
    return "";
  if (v->kind != TS_VALUE_STRING || !v->s) {
    arg_kind_error(loc, call, i, "a string", v);
    return "";
  }
  return v->s;
}
