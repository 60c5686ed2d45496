/* ts-source-snippet.h — the lines around a node's source location, read
 * from disk off the main thread.  A module records file names as its
 * compiler saw them ("../src/model.c", relative to where it was built), so
 * a relative name is looked for under a list of directories: the module's
 * own, its parents and the current one (ts_source_search_dirs). */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define TS_SOURCE_LINE_MAX 2000   /* bytes of a line kept; a longer one ends " …" */
#define TS_SOURCE_CONTEXT_MAX 200 /* lines either side a remote worker sends at most */

typedef struct {
  char *path;       /* the file read */
  int first_line;   /* the number of lines[0] (from 1) */
  int line;         /* the line asked for */
  char **lines;     /* first_line ... up to `context` lines after `line`, NULL-terminated */
} TsSourceSnippet;

void ts_source_snippet_free(TsSourceSnippet *snippet);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TsSourceSnippet, ts_source_snippet_free)

/* Where to look for the sources of the module at module_file (NULL: none):
 * its directory and three levels of parents, then the current directory;
 * each once.  Owned (g_strfreev). */
char **ts_source_search_dirs(const char *module_file);

/* Reads line `line` of file with `context` lines either side.  file is
 * tried as it is when absolute, else under each of dirs; then its base
 * name under each of dirs (sources copied beside the module).  NULL with
 * G_IO_ERROR_NOT_FOUND ("model.c is not on this machine (looked in /a,
 * /b)") or G_IO_ERROR_INVALID_DATA (the line is past the file's end, or
 * the file is not text).  Blocking: see the _async form. */
TsSourceSnippet *ts_source_snippet_read(const char *file, int line, int context, const char *const *dirs,
                                        GCancellable *cancellable, GError **error);
/* The same on a worker thread. */
void ts_source_snippet_read_async(const char *file, int line, int context, const char *const *dirs,
                                  GCancellable *cancellable, GAsyncReadyCallback callback,
                                  gpointer user_data);
TsSourceSnippet *ts_source_snippet_read_finish(GAsyncResult *result, GError **error);

G_END_DECLS
