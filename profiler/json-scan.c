/* json-scan.c — JSON text walked with bounds, held whole or streamed from
 * a file a block at a time (json-scan.h).  Nothing here recurses or
 * allocates more than the limits allow: the nesting, each string and each
 * value are measured as they pass. */
#include "json-scan.h"

#include <errno.h>
#include <string.h>
#include <glib/gstdio.h>

#define BLOCK ((size_t)1 << 20) /* read from the file at a time */

tsp_read_limits tsp_read_limits_default(void)
{
  return (tsp_read_limits){
    .max_bytes = (uint64_t)4 << 30,
    .max_events = 20000000,
    .max_string = (uint64_t)1 << 20,
    .max_value = (uint64_t)16 << 20,
    .max_depth = 64,
  };
}

bool tsp__limit(GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, TSP_ERROR, TSP_ERROR_LIMIT, msg);
  g_free(msg);
  return false;
}

bool tsp__scan_init_text(tsp_scan *s, const char *text, size_t len, const tsp_read_limits *limits,
                         GError **error)
{
  *s = (tsp_scan){ .buf = text, .len = len, .limits = *limits, .index = -1 };
  if (len > limits->max_bytes)
    return tsp__limit(error, "%zu bytes of text, more than %" G_GUINT64_FORMAT " (the max_bytes limit)",
                      len, limits->max_bytes);
  return true;
}

bool tsp__scan_init_file(tsp_scan *s, const char *path, const tsp_read_limits *limits,
                         GError **error)
{
  *s = (tsp_scan){ .path = path, .limits = *limits, .index = -1 };
  errno = 0;
  s->gz = gzopen(path, "rb"); /* reads plain files too */
  if (!s->gz) {
    g_set_error(error, TSP_ERROR, TSP_ERROR_IO, "cannot open '%s': %s", path,
                g_strerror(errno ? errno : ENOENT));
    return false;
  }
  gzbuffer(s->gz, (unsigned)BLOCK);
  GStatBuf st;
  s->file_size = g_stat(path, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
  return true;
}

void tsp__scan_clear(tsp_scan *s)
{
  if (s->gz)
    gzclose(s->gz);
  g_free(s->own);
  g_clear_error(&s->error);
  *s = (tsp_scan){ 0 };
}

/* More text after len; false at its end or on an error (kept in s->error).
 * Offsets stay valid: the text moves only in tsp__scan_release. */
static bool more(tsp_scan *s)
{
  if (!s->gz || s->error)
    return false;
  if (s->cap - s->len < BLOCK) {
    size_t cap = MAX(s->cap * 2, s->len + BLOCK);
    char *p = g_try_realloc(s->own, cap);
    if (!p) {
      g_set_error(&s->error, TSP_ERROR, TSP_ERROR_LIMIT, "out of memory for %zu bytes of text", cap);
      return false;
    }
    s->buf = s->own = p;
    s->cap = cap;
  }
  int n = gzread(s->gz, s->own + s->len, (unsigned)BLOCK);
  if (n <= 0) {
    int zerr = Z_OK;
    const char *why = gzerror(s->gz, &zerr);
    if (n < 0 || (zerr != Z_OK && zerr != Z_STREAM_END))
      g_set_error(&s->error, TSP_ERROR, TSP_ERROR_IO, "cannot read '%s': %s", s->path,
                  zerr == Z_ERRNO ? g_strerror(errno) : why);
    return false;
  }
  s->len += (size_t)n;
  if (s->dropped + s->len > s->limits.max_bytes) {
    tsp__limit(&s->error, "more than %" G_GUINT64_FORMAT " bytes of text%s (the max_bytes limit)",
               s->limits.max_bytes, gzdirect(s->gz) ? "" : " decompressed");
    return false;
  }
  return true;
}

/* The stream's error as the caller's. */
static bool stream_error(tsp_scan *s, GError **error)
{
  g_propagate_error(error, g_error_copy(s->error));
  return false;
}

/* where, and the index of the element being read if one is (s->index),
 * formatted only for an error. */
static const char *place(const tsp_scan *s, const char *where, char buf[80])
{
  if (s->index < 0)
    return where;
  g_snprintf(buf, 80, "%s[%" G_GINT64_FORMAT "]", where, s->index);
  return buf;
}
#define WHERE place(s, where, (char[80]){ 0 })

bool tsp__scan_ended(tsp_scan *s, GError **error, const char *where)
{
  return s->error ? stream_error(s, error)
                  : tsp__fail(error, "%s: the file ends early (truncated?)", WHERE);
}

bool tsp__scan_peek(tsp_scan *s, char *c)
{
  if (s->pos == s->len && !more(s))
    return false;
  *c = s->buf[s->pos];
  return true;
}

bool tsp__scan_release(tsp_scan *s)
{
  double done = 0;
  if (s->own && s->pos >= BLOCK) { /* at least a block dropped for each move */
    memmove(s->own, s->own + s->pos, s->len - s->pos);
    s->dropped += s->pos;
    s->len -= s->pos;
    s->pos = 0;
  }
  if (s->own) {
    done = s->file_size ? (double)gzoffset(s->gz) / (double)s->file_size : 0;
  } else if (s->len) {
    done = (double)s->pos / (double)s->len;
  }
  if (s->progress && !s->progress(MIN(done, 1.0), s->progress_data)) {
    if (!s->error)
      g_set_error_literal(&s->error, TSP_ERROR, TSP_ERROR_CANCELLED, "cancelled");
    return false;
  }
  return true;
}

static bool is_ws(char c)
{
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

bool tsp__scan_ws(tsp_scan *s, GError **error, const char *where)
{
  size_t from = s->pos;
  for (;;) {
    while (s->pos < s->len && is_ws(s->buf[s->pos]))
      s->pos++;
    if (s->pos < s->len)
      return true;
    if (s->pos - from > s->limits.max_value)
      return tsp__limit(error, "%s: more than %" G_GUINT64_FORMAT " bytes of white space (the max_value limit)",
                        WHERE, s->limits.max_value);
    if (!more(s))
      return s->error ? stream_error(s, error) : true; /* the end: the caller sees it */
  }
}

static bool long_string(tsp_scan *s, GError **error, const char *where)
{
  return tsp__limit(error, "%s: a string of more than %" G_GUINT64_FORMAT " bytes (the max_string limit)",
                    WHERE, s->limits.max_string);
}

/* Strings are most of a trace's bytes: memchr finds their quotes.  A quote
 * after an odd run of backslashes is escaped. */
bool tsp__scan_string(tsp_scan *s, GError **error, const char *where)
{
  size_t from = s->pos + 1, p = from;
  for (;;) {
    const char *q = p < s->len ? memchr(s->buf + p, '"', s->len - p) : NULL;
    if (q) {
      size_t at = (size_t)(q - s->buf), backslashes = 0;
      while (at - backslashes > from && s->buf[at - 1 - backslashes] == '\\')
        backslashes++;
      if (at - from > s->limits.max_string)
        return long_string(s, error, where);
      if (backslashes % 2 == 0) {
        s->pos = at + 1;
        return true;
      }
      p = at + 1;
      continue;
    }
    p = s->len;
    if (p - from > s->limits.max_string)
      return long_string(s, error, where);
    if (!more(s)) {
      s->pos = s->len;
      return s->error ? stream_error(s, error)
                      : tsp__fail(error, "%s: the file ends inside a string (truncated?)", WHERE);
    }
  }
}

static bool value_fits(tsp_scan *s, size_t from, GError **error, const char *where)
{
  if (s->pos - from <= s->limits.max_value)
    return true;
  return tsp__limit(error, "%s: more than %" G_GUINT64_FORMAT " bytes (the max_value limit)", WHERE,
                    s->limits.max_value);
}

/* The bytes that open or close a string or a container. */
static const bool NESTING[256] = { ['"'] = true, ['{'] = true, ['['] = true, ['}'] = true, [']'] = true };

bool tsp__scan_value(tsp_scan *s, GError **error, const char *where)
{
  if (!tsp__scan_ws(s, error, where))
    return false;
  int depth = 0;
  size_t from = s->pos;
  for (;;) {
    if (s->pos == s->len) {
      if (!value_fits(s, from, error, where))
        return false;
      if (!more(s))
        break;
    }
    if (depth > 0) { /* inside a container only strings and brackets matter */
      const unsigned char *b = (const unsigned char *)s->buf;
      size_t p = s->pos;
      while (p < s->len && !NESTING[b[p]])
        p++;
      s->pos = p;
      if (p == s->len)
        continue;
    }
    char c = s->buf[s->pos];
    if (c == '"') {
      if (!tsp__scan_string(s, error, where))
        return false;
      if (depth == 0)
        return value_fits(s, from, error, where);
      continue;
    }
    if (c == '{' || c == '[') {
      if (++depth > s->limits.max_depth)
        return tsp__limit(error, "%s: nested more than %d deep (the max_depth limit)", WHERE,
                          s->limits.max_depth);
    } else if (c == '}' || c == ']') {
      if (depth == 0)
        return value_fits(s, from, error, where); /* a scalar ended by its container */
      if (--depth == 0) {
        s->pos++;
        return value_fits(s, from, error, where);
      }
    } else if (depth == 0 && (c == ',' || is_ws(c))) {
      return value_fits(s, from, error, where);
    }
    s->pos++;
  }
  if (s->error)
    return stream_error(s, error);
  if (depth > 0 || s->pos == from)
    return tsp__fail(error, "%s: the file ends early (truncated?)", WHERE);
  return value_fits(s, from, error, where);
}
