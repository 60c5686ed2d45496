/* ts-output-lines.h — a worker's stdout or stderr as lines and call
 * marks (TS_WORKER_MARK), read from chunks of the pipe as they come.
 * What a module prints is anything: a line is kept up to
 * TS_OUTPUT_LINE_MAX bytes and the rest only counted, so memory stays
 * bounded whatever comes. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define TS_OUTPUT_LINE_MAX (16u << 10) /* a longer line is cut: the rest is counted, not kept */

typedef struct {
  /* A line (text of len bytes, no newline, not NUL-terminated); cut: the
   * bytes of it left out after text. */
  void (*line)(gpointer data, const char *text, gsize len, gsize cut);
  /* The mark "7 end": call 7 printed all it printed on this stream ("0
   * end": Open). */
  void (*mark)(gpointer data, guint call_id);
} TsOutputLinesFuncs;

typedef struct TsOutputLines TsOutputLines;

TsOutputLines *ts_output_lines_new(const TsOutputLinesFuncs *funcs, gpointer data);
void ts_output_lines_free(TsOutputLines *lines);
/* A chunk of the stream: its complete lines and marks are handed on. */
void ts_output_lines_feed(TsOutputLines *lines, const char *chunk, gsize n);
/* The stream's end: its last line, unfinished, is handed on. */
void ts_output_lines_end(TsOutputLines *lines);

/* "7 end" (after TS_WORKER_MARK, len bytes) into 7; FALSE if it is not a mark. */
gboolean ts_output_mark_parse(const char *text, gsize len, guint *call_id);

G_END_DECLS
