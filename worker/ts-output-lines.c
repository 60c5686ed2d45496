/* ts-output-lines.c — a worker's output as lines and call marks (ts-output-lines.h). */
#include "ts-output-lines.h"

#include <string.h>

#include "ts-worker-protocol.h"

#define MARK_TAIL 64 /* the end of a cut line is kept: a call's mark may be there */

struct TsOutputLines {
  TsOutputLinesFuncs funcs;
  gpointer data;
  GString *pending; /* what came after the last newline */
  gsize cut;        /* bytes of that line not kept (it is longer than TS_OUTPUT_LINE_MAX) */
};

TsOutputLines *ts_output_lines_new(const TsOutputLinesFuncs *funcs, gpointer data)
{
  TsOutputLines *lines = g_new0(TsOutputLines, 1);
  lines->funcs = *funcs;
  lines->data = data;
  lines->pending = g_string_new(NULL);
  return lines;
}

void ts_output_lines_free(TsOutputLines *lines)
{
  if (!lines)
    return;
  g_string_free(lines->pending, TRUE);
  g_free(lines);
}

gboolean ts_output_mark_parse(const char *text, gsize len, guint *call_id)
{
  static const char end[] = " end";
  gsize digits = 0;
  while (digits < len && g_ascii_isdigit(text[digits]))
    digits++;
  if (digits == 0 || digits > 9 || len - digits < strlen(end) || memcmp(text + digits, end, strlen(end)) != 0)
    return FALSE;
  guint id = 0;
  for (gsize i = 0; i < digits; i++)
    id = id * 10 + (guint)(text[i] - '0');
  *call_id = id;
  return TRUE;
}

/* A line may hold a mark after text the module printed without a newline.
 * A cut line (cut bytes left out after its first TS_OUTPUT_LINE_MAX)
 * keeps its last bytes, where a mark would be. */
static void on_line(TsOutputLines *lines, const char *line, gsize len, gsize cut)
{
  gsize text_len = cut ? TS_OUTPUT_LINE_MAX : len;
  const char *from = cut ? line + TS_OUTPUT_LINE_MAX : line;
  const char *mark = g_strstr_len(from, (gssize)(line + len - from), TS_WORKER_MARK);
  if (cut) /* what stood between the cut and the mark is left out too */
    cut += (gsize)((mark ? mark : line + len) - from);
  else if (mark)
    text_len = (gsize)(mark - line);
  if (text_len > 0 || cut > 0 || !mark)
    lines->funcs.line(lines->data, line, text_len, cut);
  guint call_id;
  if (mark) {
    mark += strlen(TS_WORKER_MARK);
    if (ts_output_mark_parse(mark, (gsize)(line + len - mark), &call_id))
      lines->funcs.mark(lines->data, call_id);
  }
}

void ts_output_lines_feed(TsOutputLines *lines, const char *chunk, gsize n)
{
  GString *pending = lines->pending;
  gsize from = pending->len;
  g_string_append_len(pending, chunk, (gssize)n);
  gsize start = 0;
  for (const char *nl; (nl = memchr(pending->str + from, '\n', pending->len - from)) != NULL;) {
    gsize end = (gsize)(nl - pending->str);
    on_line(lines, pending->str + start, end - start, lines->cut);
    lines->cut = 0;
    start = from = end + 1;
  }
  g_string_erase(pending, 0, (gssize)start);
  if (pending->len > TS_OUTPUT_LINE_MAX + MARK_TAIL) {
    gsize drop = pending->len - TS_OUTPUT_LINE_MAX - MARK_TAIL;
    g_string_erase(pending, TS_OUTPUT_LINE_MAX, (gssize)drop);
    lines->cut += drop;
  }
}

void ts_output_lines_end(TsOutputLines *lines)
{
  GString *pending = lines->pending;
  if (pending->len > 0)
    on_line(lines, pending->str, pending->len, lines->cut);
  g_string_truncate(pending, 0);
  lines->cut = 0;
}
