/* json-scan.h — JSON text walked with bounds before any parser sees it
 * (json-scan.c): the text held whole, or streamed from a file (plain or
 * gzipped) a block at a time, and every value checked for nesting, string
 * length and size without recursion.  The Chrome importer cuts its events
 * with it; tsp_json_load checks whole documents with it. */
#pragma once

#include "profiler-private.h"

#include <zlib.h>

typedef struct tsp_scan {
  const char *buf;          /* the text held: [0, len), read up to pos */
  size_t pos, len;
  char *own;                /* buf when streaming (it grows), else NULL */
  size_t cap;
  gzFile gz;                /* the stream; NULL: the whole text is in buf */
  uint64_t dropped;         /* text released before buf[0] */
  uint64_t file_size;       /* the file's bytes (compressed), for progress */
  const char *path;         /* for errors; NULL for text in memory */
  int64_t index;            /* errors name "where[index]" when >= 0 */
  tsp_read_limits limits;
  tsp_progress_fn progress;
  void *progress_data;
  GError *error;            /* why the text ended early: a read error, a limit, a cancel */
} tsp_scan;

/* Over text held whole (borrowed), or a file; false + error if the text
 * is larger than limits->max_bytes or the file does not open. */
bool tsp__scan_init_text(tsp_scan *s, const char *text, size_t len, const tsp_read_limits *limits,
                         GError **error);
bool tsp__scan_init_file(tsp_scan *s, const char *path, const tsp_read_limits *limits,
                         GError **error);
void tsp__scan_clear(tsp_scan *s);

/* A byte at pos (reading more if needed), or false at the end of the
 * text (or on an error kept in s->error). */
bool tsp__scan_peek(tsp_scan *s, char *c);
/* The text ended where more was expected: s->error, or "where: the file
 * ends early (truncated?)".  Returns false. */
bool tsp__scan_ended(tsp_scan *s, GError **error, const char *where);
/* Drops the text before pos (streaming), reports progress; false if the
 * progress callback cancelled (s->error says so). */
bool tsp__scan_release(tsp_scan *s);
/* Past white space (a run longer than max_value is an error). */
bool tsp__scan_ws(tsp_scan *s, GError **error, const char *where);
/* Past a string at pos ('"'), no longer than max_string. */
bool tsp__scan_string(tsp_scan *s, GError **error, const char *where);
/* Past one value, checking its nesting (max_depth), its strings
 * (max_string), its size (max_value) and truncation; not its grammar
 * (the parsers check that).  where names it in errors. */
bool tsp__scan_value(tsp_scan *s, GError **error, const char *where);
/* Sets a TSP_ERROR_LIMIT error (its text names the limit); returns false. */
bool tsp__limit(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
