/* ts-spec-text.c — tensor specs and signatures as text. */
#include "ts-spec-text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

gboolean ts_spec_parse(const char *text, ts_spec *out)
{
  g_return_val_if_fail(text != NULL && out != NULL, FALSE);
  const char *open = strchr(text, '[');
  size_t len = strlen(text);
  if (!open || len < 2 || text[len - 1] != ']')
    return FALSE;
  g_autofree char *dtype_name = g_strstrip(g_strndup(text, (gsize)(open - text)));
  ts_spec spec = { 0 };
  if (!ts_dtype_from_name(dtype_name, &spec.dtype) || spec.dtype >= TS_STRING)
    return FALSE;
  g_autofree char *inner = g_strndup(open + 1, len - (size_t)(open - text) - 2);
  g_strstrip(inner);
  if (*inner) {
    g_auto(GStrv) dims = g_strsplit(inner, ",", -1);
    for (char **d = dims; *d; d++) {
      const char *dim = g_strstrip(*d);
      if (spec.shape.rank == TS_MAX_RANK)
        return FALSE;
      if (strcmp(dim, "?") == 0 || strcmp(dim, "-1") == 0) {
        spec.shape.dim[spec.shape.rank++] = -1;
        continue;
      }
      char *end = NULL;
      errno = 0; /* out of range is an error, not clamped to G_MAXINT64 */
      gint64 v = g_ascii_strtoll(dim, &end, 10);
      if (!*dim || *end || v < 0 || errno == ERANGE)
        return FALSE;
      spec.shape.dim[spec.shape.rank++] = v;
    }
  }
  *out = spec;
  return TRUE;
}

char *ts_spec_to_string(const ts_spec *spec)
{
  char *s = ts_shape_dtype_string(spec->dtype, spec->shape);
  char *copy = g_strdup(s);
  free(s);
  return copy;
}

GStrv ts_signature_split(const char *signature)
{
  g_return_val_if_fail(signature != NULL, NULL);
  g_autoptr(GStrvBuilder) b = g_strv_builder_new();
  size_t len = strlen(signature);
  const char *p = signature, *end = signature + len;
  if (len >= 2 && signature[0] == '(' && signature[len - 1] == ')') {
    p++;
    end--;
  }
  GString *item = g_string_new(NULL);
  int depth = 0;
  char quote = 0;
  for (; p <= end; p++) {
    char ch = p < end ? *p : ',';
    if (quote) {
      quote = ch == quote ? 0 : quote;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
    } else if (ch == '[' || ch == '(') {
      depth++;
    } else if (ch == ']' || ch == ')') {
      depth--;
    } else if (ch == ',' && depth == 0) {
      g_strstrip(item->str);
      /* drop "name: " (names are identifiers; values never start like that) */
      const char *text = item->str;
      const char *colon = strstr(text, ": ");
      if (colon && strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
                     (size_t)(colon - text))
        text = colon + 2;
      if (*text || p < end)
        g_strv_builder_add(b, text);
      g_string_truncate(item, 0);
      continue;
    }
    g_string_append_c(item, ch);
  }
  g_string_free(item, TRUE);
  return g_strv_builder_end(b);
}
