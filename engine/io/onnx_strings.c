/* onnx_strings.c — ONNX's string ops on the engine's string rows
 * (ops/strings.c): Cast and CastLike to and from strings, and
 * StringNormalizer. */
#include "onnx-private.h"

#include <string.h>

#define IN(i) ((i) < c->n_in ? c->in[i].t : NULL)

static const Onnx__AttributeProto *attr(const onnx_node_ctx *c, const char *name)
{
  for (size_t i = 0; i < c->node->n_attribute; i++)
    if (strcmp(c->node->attribute[i]->name, name) == 0)
      return c->node->attribute[i];
  return NULL;
}

ts_tensor *onnx_cast(ts_loc loc, ts_tensor *x, ts_dtype to)
{
  bool from_string = x && ts_tensor_dtype(x) == TS_STRING;
  if (from_string && to != TS_STRING)
    return ts_string_to_number_at(loc, x, to);
  if (to == TS_STRING)
    return from_string ? ts_identity_at(loc, x) : ts_as_string_at(loc, x);
  return ts_cast_at(loc, x, to);
}

/* s compared as the node asks: as it is, or case-folded. */
static char *comparable(const char *s, bool case_sensitive)
{
  return case_sensitive ? g_strdup(s) : g_utf8_casefold(s, -1);
}

/* StringNormalizer: x ([C] or [1, C] strings) without its stopwords
 * (compared case-sensitively or not), then in lower or upper case (or as
 * it is); [1] (or [1, 1]) holding "" when every string was a stopword.
 * Which strings stay depends on their values: with stopwords x must be
 * known when the graph is built (eagerly it always is). */
bool onnx_op_string_normalizer(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x)
    return false;
  ts_shape shape = ts_tensor_shape(x);
  if (ts_tensor_dtype(x) != TS_STRING || shape.rank < 1 || shape.rank > 2 || (shape.rank == 2 && shape.dim[0] != 1)) {
    char *s = ts_shape_dtype_string(ts_tensor_dtype(x), shape);
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "the input must be strings of shape [C] or [1, C], got %s", s);
    free(s);
    return false;
  }
  const Onnx__AttributeProto *action = attr(c, "case_change_action"), *stop = attr(c, "stopwords");
  char *how = action && action->s.data ? g_strndup((const char *)action->s.data, action->s.len) : g_strdup("NONE");
  bool lower = strcmp(how, "LOWER") == 0, upper = strcmp(how, "UPPER") == 0;
  if (!lower && !upper && strcmp(how, "NONE") != 0) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "case_change_action '%s' is not LOWER, UPPER or NONE", how);
    g_free(how);
    return false;
  }
  g_free(how);
  ts_tensor *y = x;
  if (stop && stop->n_strings) {
    ts_tensor *h = c->in[0].host;
    if (!h) {
      onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "with stopwords the input must be known when the graph is built");
      return false;
    }
    bool case_sensitive = attr(c, "is_case_sensitive") && attr(c, "is_case_sensitive")->i != 0;
    GHashTable *stopwords = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (size_t i = 0; i < stop->n_strings; i++) {
      char *w = g_strndup((const char *)stop->strings[i].data, stop->strings[i].len);
      if (g_utf8_validate(w, -1, NULL))
        g_hash_table_add(stopwords, comparable(w, case_sensitive));
      g_free(w);
    }
    int64_t n = ts_tensor_size(h);
    const char **kept = g_new0(const char *, n + 1);
    int64_t n_kept = 0;
    char *const *strs = ts_tensor_data(h);
    for (int64_t i = 0; i < n; i++) {
      const char *s = strs[i] ? strs[i] : "";
      char *key = g_utf8_validate(s, -1, NULL) ? comparable(s, case_sensitive) : NULL;
      if (!key || !g_hash_table_contains(stopwords, key))
        kept[n_kept++] = s;
      g_free(key);
    }
    ts_shape out = shape;
    if (!n_kept)
      kept[n_kept++] = "";
    out.dim[out.rank - 1] = n_kept;
    y = ts_constant(TS_STRING, out, (const void *)kept);
    g_free(kept);
    g_hash_table_destroy(stopwords);
  }
  c->out[0] = lower ? ts_string_lower_at(c->loc, y) : upper ? ts_string_upper_at(c->loc, y) : ts_identity_at(c->loc, y);
  return c->out[0] != NULL;
}
