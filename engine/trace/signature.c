/* signature.c — what a call's arguments look like to the concrete-function
 * cache: tensors by dtype and shape, host values by value; and, when a call
 * misses, why, in words. */
#include "function-private.h"
#include "../ops/float_repr.h"

#include <math.h>
#include <stdio.h>

/* The tensors of a list, as host_text finds them: their dtypes and
 * shapes, and the text between them (segments[k] before tensor k, the
 * last after the last). */
typedef struct list_leaves {
  GArray *leaves;     /* ts_info */
  GPtrArray *segments; /* char * */
  gsize segment_start;
  GPtrArray *variables; /* ts_tensor * (references): the list's variables, by identity */
} list_leaves;

/* A host number as the cache compares it: by value, as Python's == does
 * (tf.function's Literal trace type), so 1, 1.0 and True are one value
 * (written "1") and 0.0 and -0.0 another ("0"). */
static void canonical_number(GString *s, const ts_value *v)
{
  double f = v->kind == TS_VALUE_FLOAT ? v->f : 0;
  if (v->kind == TS_VALUE_INT)
    g_string_append_printf(s, "%" G_GINT64_FORMAT, v->i);
  else if (v->kind == TS_VALUE_BOOL)
    g_string_append_c(s, v->b ? '1' : '0');
  else if (f == floor(f) && f >= -0x1p63 && f < 0x1p63) /* integral: as the int it equals */
    g_string_append_printf(s, "%" G_GINT64_FORMAT, (int64_t)f);
  else {
    char num[TS_FLOAT_REPR_SIZE];
    ts__float_repr(num, sizeof num, f);
    g_string_append(s, num);
  }
}

/* A string as Python's repr writes it: in single quotes, or in double
 * quotes when it holds a single quote and no double one; the quote and
 * backslashes escaped, as are newlines, tabs and other control bytes. */
static void append_str_repr(GString *s, const char *text)
{
  char quote = strchr(text, '\'') && !strchr(text, '"') ? '"' : '\'';
  g_string_append_c(s, quote);
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*p == quote || *p == '\\')
      g_string_append_printf(s, "\\%c", *p);
    else if (*p == '\n')
      g_string_append(s, "\\n");
    else if (*p == '\r')
      g_string_append(s, "\\r");
    else if (*p == '\t')
      g_string_append(s, "\\t");
    else if (*p < 0x20 || *p == 0x7f)
      g_string_append_printf(s, "\\x%02x", *p);
    else
      g_string_append_c(s, (char)*p);
  }
  g_string_append_c(s, quote);
}

/* A host value in words.  Tensors (and specs) inside a list are a nested
 * structure's tensors, as tf.function flattens a list of tensors: each is
 * an input of its own; with `ll` they are collected there and written
 * "<1>", "<2>" (the list's skeleton, as TensorFlow's pretty-printed
 * signatures write a nested structure), else by dtype and shape.
 * `canonical` writes numbers as the cache compares them (canonical_number). */
static void host_text(GString *s, const ts_value *v, list_leaves *ll, bool canonical)
{
  if (canonical && (v->kind == TS_VALUE_INT || v->kind == TS_VALUE_FLOAT || v->kind == TS_VALUE_BOOL)) {
    canonical_number(s, v);
    return;
  }
  char buf[TS_INFO_STR];
  switch (v->kind) {
  case TS_VALUE_TENSOR:
    if (v->tensor && v->tensor->is_variable) { /* not an input: the trace captures it */
      g_string_append_printf(s, "variable '%s' %s", v->tensor->name ? v->tensor->name : "Variable",
                             ts__info_str(buf, v->tensor->dtype, v->tensor->shape));
      if (ll)
        g_ptr_array_add(ll->variables, ts_tensor_ref(v->tensor));
      break;
    }
    /* fall through */
  case TS_VALUE_SPEC: {
    ts_info info = v->kind == TS_VALUE_SPEC ? (ts_info){ v->spec.dtype, v->spec.shape }
                   : v->tensor                ? (ts_info){ v->tensor->dtype, v->tensor->shape }
                                              : (ts_info){ TS_F32, TS_SCALAR_SHAPE };
    if (!ll) { /* canonical: a tensor's place; the leaves are compared apart */
      g_string_append(s, canonical ? "<t>" : ts__info_str(buf, info.dtype, info.shape));
      break;
    }
    g_array_append_val(ll->leaves, info);
    g_ptr_array_add(ll->segments, g_strndup(s->str + ll->segment_start, s->len - ll->segment_start));
    g_string_append_printf(s, "<%u>", ll->leaves->len);
    ll->segment_start = s->len;
    break;
  }
  case TS_VALUE_INT: g_string_append_printf(s, "%" G_GINT64_FORMAT, v->i); break;
  case TS_VALUE_FLOAT: { /* as Python's repr: 0.1, 2.0 (a float still), 1e-05 */
    char num[TS_FLOAT_REPR_SIZE];
    ts__float_repr(num, sizeof num, v->f);
    g_string_append(s, num);
    break;
  }
  case TS_VALUE_BOOL: g_string_append(s, v->b ? "True" : "False"); break;
  case TS_VALUE_STRING: /* ["a', 'b"] is not ['a', 'b'] */
    append_str_repr(s, v->s ? v->s : "");
    break;
  case TS_VALUE_LIST:
    g_string_append_c(s, '[');
    for (int i = 0; i < v->list.n; i++) {
      if (i)
        g_string_append(s, ", ");
      host_text(s, &v->list.items[i], ll, canonical);
    }
    g_string_append_c(s, ']');
    break;
  default: g_string_append(s, "None"); break;
  }
}

/* Host lists nest at most this deep (a tensor has at most TS_MAX_RANK dims,
 * argument specs at most 32 levels). */
#define VALUE_DEPTH_LIMIT 32

static bool value_check(const char *func, int i, const ts_value *v, int depth)
{
  const char *bad = NULL;
  if ((unsigned)v->kind >= TS_VALUE_KIND_COUNT)
    bad = "its kind is not a ts_value_kind";
  else if (v->kind == TS_VALUE_SPEC && !ts__dtype_valid(v->spec.dtype))
    bad = "its tensor spec has an invalid dtype";
  else if (v->kind == TS_VALUE_SPEC && !ts__spec_shape_valid(v->spec.shape))
    bad = "its tensor spec has an invalid shape (rank outside [-1, 8] or a dim below -1)";
  else if (v->kind == TS_VALUE_LIST && (v->list.n < 0 || (v->list.n > 0 && !v->list.items)))
    bad = "its list has a negative length or no items";
  else if (v->kind == TS_VALUE_LIST && depth >= VALUE_DEPTH_LIMIT)
    bad = "its lists nest more than 32 deep";
  else if (v->kind == TS_VALUE_TENSOR && depth > 0 && !v->tensor)
    bad = "its list holds a NULL tensor";
  if (bad) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "%s: argument %d is not a valid value: %s (kind %d)", func, i, bad,
                 (int)v->kind);
    return false;
  }
  if (v->kind == TS_VALUE_LIST)
    for (int k = 0; k < v->list.n; k++)
      if (!value_check(func, i, &v->list.items[k], depth + 1))
        return false;
  return true;
}

bool ts__spec_shape_valid(ts_shape shape)
{
  return shape.rank == TS_RANK_UNKNOWN || ts__shape_valid(shape, true);
}

bool ts__values_check(const char *func, const ts_value *args, int n)
{
  for (int i = 0; i < n; i++)
    if (!value_check(func, i, &args[i], 0))
      return false;
  return true;
}

void ts__signature_update_key(ts_signature *sig)
{
  GString *key = g_string_sized_new(64);
  char buf[TS_INFO_STR];
  for (int i = 0; i < sig->n; i++) {
    const ts_argsig *a = &sig->args[i];
    if (i)
      g_string_append_c(key, ';');
    if (a->kind == TS_VALUE_TENSOR)
      g_string_append(key, ts__info_str(buf, a->dtype, a->shape));
    else if (a->kind == TS__ARG_VARIABLE) /* by identity: its reference keeps the address its own */
      g_string_append_printf(key, "%d:%p", (int)a->kind, (void *)a->variable);
    else /* by value, kind aside: 1, 1.0 and True are one key */
      g_string_append_printf(key, "h:%s", a->canon);
    for (int k = 0; k < a->n_leaves; k++) /* and a list's tensors by dtype and shape */
      g_string_append_printf(key, "<%s>", ts__info_str(buf, a->leaves[k].dtype, a->leaves[k].shape));
    for (int k = 0; k < a->n_list_variables; k++)
      g_string_append_printf(key, "@%p", (void *)a->list_variables[k]);
  }
  g_free(sig->key);
  sig->key = g_string_free(key, FALSE);
}

bool ts__signature_init(ts_signature *sig, const ts_value *args, int n)
{
  *sig = (ts_signature){ .n = n, .args = g_new0(ts_argsig, n > 0 ? n : 1) };
  for (int i = 0; i < n; i++) {
    const ts_value *v = &args[i];
    ts_argsig *a = &sig->args[i];
    if (v->kind == TS_VALUE_TENSOR && v->tensor && v->tensor->is_variable) {
      char buf[TS_INFO_STR];
      const ts_tensor *t = v->tensor;
      *a = (ts_argsig){ .kind = TS__ARG_VARIABLE, .dtype = t->dtype, .shape = t->shape,
                        .variable = ts_tensor_ref(v->tensor),
                        .host = g_strdup_printf("variable '%s' %s", t->name ? t->name : "Variable",
                                                ts__info_str(buf, t->dtype, t->shape)) };
    } else if (v->kind == TS_VALUE_TENSOR && v->tensor) {
      *a = (ts_argsig){ .kind = TS_VALUE_TENSOR, .dtype = v->tensor->dtype, .shape = v->tensor->shape };
    } else if (v->kind == TS_VALUE_SPEC) {
      *a = (ts_argsig){ .kind = TS_VALUE_TENSOR, .dtype = v->spec.dtype, .shape = v->spec.shape };
    } else if (v->kind == TS_VALUE_NONE || (v->kind > TS_VALUE_TENSOR && v->kind <= TS_VALUE_LIST)) {
      /* None too: a Python None is a non-tensor argument like any other */
      GString *s = g_string_new(NULL), *canon = g_string_new(NULL);
      host_text(s, v, NULL, false);
      host_text(canon, v, NULL, true);
      *a = (ts_argsig){ .kind = v->kind, .host = g_string_free(s, FALSE),
                        .canon = g_string_free(canon, FALSE) };
      if (v->kind == TS_VALUE_LIST) {
        list_leaves ll = { g_array_new(FALSE, FALSE, sizeof(ts_info)), g_ptr_array_new(), 0,
                           g_ptr_array_new() };
        GString *skeleton = g_string_new(NULL);
        host_text(skeleton, v, &ll, false);
        g_ptr_array_add(ll.segments, g_strdup(skeleton->str + ll.segment_start));
        g_ptr_array_add(ll.segments, NULL);
        a->n_leaves = (int)ll.leaves->len;
        a->leaves = (ts_info *)(void *)g_array_free(ll.leaves, FALSE);
        a->segments = (char **)g_ptr_array_free(ll.segments, FALSE);
        a->n_list_variables = (int)ll.variables->len;
        a->list_variables = (ts_tensor **)g_ptr_array_free(ll.variables, FALSE);
        a->skeleton = g_string_free(skeleton, FALSE);
      }
    } else {
      /* A NULL tensor is an earlier failure: keep its error. */
      if (!ts_failed())
        ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL, "argument %d is NULL", i);
      ts__signature_clear(sig);
      return false;
    }
  }
  ts__signature_update_key(sig);
  return true;
}

void ts__argsig_update_host(ts_argsig *a)
{
  char buf[TS_INFO_STR];
  GString *s = g_string_new(NULL);
  for (int k = 0; k < a->n_leaves; k++) {
    g_string_append(s, a->segments[k]);
    g_string_append(s, ts__info_str(buf, a->leaves[k].dtype, a->leaves[k].shape));
  }
  g_string_append(s, a->segments[a->n_leaves]);
  g_free(a->host);
  a->host = g_string_free(s, FALSE);
}

void ts__signature_clear(ts_signature *sig)
{
  for (int i = 0; i < sig->n; i++) {
    g_free(sig->args[i].host);
    g_free(sig->args[i].canon);
    g_free(sig->args[i].skeleton);
    g_strfreev(sig->args[i].segments);
    g_free(sig->args[i].leaves);
    ts_tensor_unref(sig->args[i].variable);
    for (int k = 0; k < sig->args[i].n_list_variables; k++)
      ts_tensor_unref(sig->args[i].list_variables[k]);
    g_free(sig->args[i].list_variables);
  }
  g_free(sig->args);
  g_free(sig->key);
  *sig = (ts_signature){ 0 };
}

void ts__signature_copy(ts_signature *dst, const ts_signature *src)
{
  *dst = (ts_signature){ .n = src->n, .args = g_new0(ts_argsig, src->n > 0 ? src->n : 1) };
  for (int i = 0; i < src->n; i++) {
    dst->args[i] = src->args[i];
    dst->args[i].host = g_strdup(src->args[i].host);
    dst->args[i].canon = g_strdup(src->args[i].canon);
    dst->args[i].skeleton = g_strdup(src->args[i].skeleton);
    dst->args[i].segments = g_strdupv(src->args[i].segments);
    if (src->args[i].variable)
      ts_tensor_ref(src->args[i].variable);
    dst->args[i].list_variables = g_memdup2(src->args[i].list_variables,
                                            sizeof(ts_tensor *) * (size_t)src->args[i].n_list_variables);
    for (int k = 0; k < src->args[i].n_list_variables; k++)
      ts_tensor_ref(src->args[i].list_variables[k]);
    dst->args[i].leaves = g_memdup2(src->args[i].leaves, sizeof(ts_info) * (size_t)src->args[i].n_leaves);
  }
  dst->key = g_strdup(src->key);
}

static bool shape_accepts(ts_shape traced, ts_shape call)
{
  if (traced.rank == TS_RANK_UNKNOWN) /* TensorSpec(shape=None): any shape */
    return true;
  if (traced.rank != call.rank)
    return false;
  for (int d = 0; d < traced.rank; d++)
    if (traced.dim[d] >= 0 && traced.dim[d] != call.dim[d])
      return false;
  return true;
}

static bool info_accepts(ts_info traced, ts_info call)
{
  return traced.dtype == call.dtype && shape_accepts(traced.shape, call.shape);
}

/* The first tensor of a list that `traced` does not accept, or -1. */
static int leaf_mismatch(const ts_argsig *traced, const ts_argsig *call)
{
  for (int k = 0; k < traced->n_leaves; k++)
    if (!info_accepts(traced->leaves[k], call->leaves[k]))
      return k;
  return -1;
}

/* Host values by value; a list holding tensors by its other values and
 * its tensors' dtypes and shapes. */
static bool same_list_variables(const ts_argsig *traced, const ts_argsig *call)
{
  if (traced->n_list_variables != call->n_list_variables)
    return false;
  for (int k = 0; k < traced->n_list_variables; k++)
    if (traced->list_variables[k] != call->list_variables[k])
      return false;
  return true;
}

static bool host_accepts(const ts_argsig *traced, const ts_argsig *call)
{
  return same_list_variables(traced, call) && ts__argsig_same_host(traced, call) &&
         leaf_mismatch(traced, call) < 0;
}

ts_value_kind ts__argsig_match_kind(ts_value_kind kind)
{
  return kind == TS_VALUE_FLOAT || kind == TS_VALUE_BOOL ? TS_VALUE_INT : kind;
}

bool ts__argsig_same_host(const ts_argsig *a, const ts_argsig *b)
{
  return a->n_leaves == b->n_leaves && strcmp(a->canon, b->canon) == 0;
}

bool ts__argsig_accepts(const ts_argsig *traced, const ts_argsig *call)
{
  if (ts__argsig_match_kind(traced->kind) != ts__argsig_match_kind(call->kind))
    return false;
  if (traced->kind == TS__ARG_VARIABLE)
    return traced->variable == call->variable;
  if (traced->kind != TS_VALUE_TENSOR)
    return host_accepts(traced, call);
  return info_accepts((ts_info){ traced->dtype, traced->shape }, (ts_info){ call->dtype, call->shape });
}

bool ts__signature_accepts(const ts_signature *traced, const ts_signature *call)
{
  if (traced->n != call->n)
    return false;
  for (int i = 0; i < traced->n; i++)
    if (!ts__argsig_accepts(&traced->args[i], &call->args[i]))
      return false;
  return true;
}

int ts__signature_distance(const ts_signature *traced, const ts_signature *call)
{
  if (traced->n != call->n)
    return call->n + 1 + abs(traced->n - call->n);
  int d = 0;
  for (int i = 0; i < call->n; i++)
    d += !ts__argsig_accepts(&traced->args[i], &call->args[i]);
  return d;
}

const char *ts__arg_label(char *buf, size_t size, int i, char *const *params, int n_params)
{
  if (i < n_params && params && params[i])
    snprintf(buf, size, "arg %d (%s)", i, params[i]);
  else
    snprintf(buf, size, "arg %d", i);
  return buf;
}

char *ts__signature_text(const ts_signature *sig, char *const *params, int n_params)
{
  GString *s = g_string_new("(");
  char buf[TS_INFO_STR];
  for (int i = 0; i < sig->n; i++) {
    const ts_argsig *a = &sig->args[i];
    if (i)
      g_string_append(s, ", ");
    if (i < n_params && params && params[i])
      g_string_append_printf(s, "%s: ", params[i]);
    g_string_append(s, a->kind == TS_VALUE_TENSOR ? ts__info_str(buf, a->dtype, a->shape) : a->host);
  }
  g_string_append_c(s, ')');
  return g_string_free(s, FALSE);
}

static const char *kind_word(ts_value_kind kind)
{
  static const char *const words[TS_VALUE_KIND_COUNT] = {
    [TS_VALUE_NONE] = "None",         [TS_VALUE_TENSOR] = "a tensor", [TS_VALUE_INT] = "a host int",
    [TS_VALUE_FLOAT] = "a host float", [TS_VALUE_BOOL] = "a host bool",
    [TS_VALUE_STRING] = "a host string", [TS_VALUE_LIST] = "a host list",
    [TS_VALUE_SPEC] = "a tensor spec",
  };
  if (kind == TS__ARG_VARIABLE)
    return "a variable";
  return (unsigned)kind < TS_VALUE_KIND_COUNT ? words[kind] : "?";
}

ts_trace_reason ts__signature_diff(const ts_signature *closest, const ts_signature *call,
                                   char *const *params, int n_params, GString *text,
                                   uint64_t *changed)
{
  *changed = 0;
  if (!closest) {
    g_string_append(text, "first call");
    return TS_TRACE_FIRST_CALL;
  }
  if (closest->n != call->n) {
    g_string_append_printf(text, "%d argument%s, traced with %d", call->n, call->n == 1 ? "" : "s",
                           closest->n);
    return TS_TRACE_STRUCTURE;
  }
  bool structure = false, dtype = false, host = false;
  char label[128], a_buf[TS_INFO_STR], b_buf[TS_INFO_STR];
  for (int i = 0; i < call->n; i++) {
    const ts_argsig *was = &closest->args[i], *now = &call->args[i];
    if (ts__argsig_accepts(was, now))
      continue;
    if (i < 64)
      *changed |= (uint64_t)1 << i;
    if (text->len)
      g_string_append(text, "; ");
    ts__arg_label(label, sizeof label, i, params, n_params);
    if (ts__argsig_match_kind(was->kind) != ts__argsig_match_kind(now->kind)) {
      structure = true;
      g_string_append_printf(text, "%s: %s, traced with %s", label, kind_word(now->kind),
                             kind_word(was->kind));
    } else if (now->kind == TS_VALUE_LIST && ts__argsig_same_host(was, now) &&
               !same_list_variables(was, now)) {
      structure = true;
      g_string_append_printf(text, "%s: the list holds other variables than traced", label);
    } else if (now->kind != TS_VALUE_TENSOR && was->n_leaves && ts__argsig_same_host(was, now) &&
               leaf_mismatch(was, now) >= 0) {
      int k = leaf_mismatch(was, now);
      ts_info w = was->leaves[k], c = now->leaves[k];
      if (c.dtype != w.dtype) {
        dtype = true;
        g_string_append_printf(text, "%s: tensor %d of the list: dtype %s differs from %s", label,
                               k, ts_dtype_name(c.dtype), ts_dtype_name(w.dtype));
      } else {
        g_string_append_printf(text, "%s: tensor %d of the list: shape %s differs from traced %s",
                               label, k, ts__shape_msg_str(a_buf, c.shape),
                               ts__shape_msg_str(b_buf, w.shape));
      }
    } else if (now->kind == TS__ARG_VARIABLE) {
      structure = true; /* another object, as TensorFlow keys Python objects */
      g_string_append_printf(text, "%s: %s, traced with %s", label, now->host, was->host);
    } else if (now->kind == TS_VALUE_LIST && was->n_leaves != now->n_leaves) {
      structure = true; /* a list of tensors grew or shrank: not a host value's change */
      g_string_append_printf(text, "%s: a list of %d tensor%s, traced with %d", label,
                             now->n_leaves, now->n_leaves == 1 ? "" : "s", was->n_leaves);
    } else if (now->kind != TS_VALUE_TENSOR) {
      host = true;
      g_string_append_printf(text, "%s: host value %s differs from %s", label, now->host, was->host);
    } else if (now->dtype != was->dtype) {
      dtype = true;
      g_string_append_printf(text, "%s: dtype %s differs from %s", label, ts_dtype_name(now->dtype),
                             ts_dtype_name(was->dtype));
    } else {
      g_string_append_printf(text, "%s: shape %s differs from traced %s", label,
                             ts__shape_msg_str(a_buf, now->shape), ts__shape_msg_str(b_buf, was->shape));
    }
  }
  return structure ? TS_TRACE_STRUCTURE : dtype ? TS_TRACE_DTYPE
         : host    ? TS_TRACE_HOST_VALUE : TS_TRACE_SHAPE;
}
