/* ts-source-snippet.c — finds a node's source file and reads the lines
 * around its line, on a thread for the GUI; the same in a remote worker
 * (worker-source.c), where the file is. */
#include "ts-source-snippet.h"

#include <string.h>

#define PARENT_LEVELS 3

void ts_source_snippet_free(TsSourceSnippet *snippet)
{
  if (!snippet)
    return;
  g_free(snippet->path);
  g_strfreev(snippet->lines);
  g_free(snippet);
}

static void add_once(GPtrArray *dirs, const char *dir)
{
  for (guint i = 0; i < dirs->len; i++)
    if (g_strcmp0(g_ptr_array_index(dirs, i), dir) == 0)
      return;
  g_ptr_array_add(dirs, g_strdup(dir));
}

char **ts_source_search_dirs(const char *module_file)
{
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
  if (module_file) {
    g_autofree char *absolute = g_canonicalize_filename(module_file, NULL);
    g_autofree char *dir = g_path_get_dirname(absolute);
    for (int level = 0; level <= PARENT_LEVELS; level++) {
      add_once(dirs, dir);
      char *parent = g_path_get_dirname(dir);
      g_free(dir);
      dir = parent;
    }
  }
  g_autofree char *cwd = g_get_current_dir();
  add_once(dirs, cwd);
  g_ptr_array_add(dirs, NULL);
  return (char **)g_ptr_array_steal(dirs, NULL);
}

/* The paths to try, in order, and the directories they are in (for the
 * "looked in" note). */
static GPtrArray *candidates(const char *file, const char *const *dirs, GPtrArray *looked_in)
{
  GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *base = g_path_get_basename(file);
  if (g_path_is_absolute(file)) {
    add_once(paths, file);
    g_autofree char *dir = g_path_get_dirname(file);
    add_once(looked_in, dir);
  } else {
    for (const char *const *d = dirs; d && *d; d++) {
      g_autofree char *path = g_build_filename(*d, file, NULL);
      g_autofree char *canonical = g_canonicalize_filename(path, NULL);
      add_once(paths, canonical);
    }
  }
  for (const char *const *d = dirs; d && *d; d++) {
    g_autofree char *path = g_build_filename(*d, base, NULL);
    add_once(paths, path);
    add_once(looked_in, *d);
  }
  return paths;
}

/* Lines first_line .. last_line of the file at path (fewer at its end);
 * *n_read how many lines it has up to there. */
static char **read_lines(const char *path, int first_line, int last_line, int *n_read,
                         GCancellable *cancellable, GError **error)
{
  g_autoptr(GFile) file = g_file_new_for_path(path);
  g_autoptr(GFileInputStream) in = g_file_read(file, cancellable, error);
  if (!in)
    return NULL;
  g_autoptr(GDataInputStream) data = g_data_input_stream_new(G_INPUT_STREAM(in));
  g_autoptr(GStrvBuilder) lines = g_strv_builder_new();
  int number = 0;
  while (number < last_line) {
    gsize length = 0;
    GError *read_error = NULL;
    g_autofree char *text = g_data_input_stream_read_line(data, &length, cancellable, &read_error);
    if (read_error) {
      g_propagate_error(error, read_error);
      return NULL;
    }
    if (!text)
      break;
    number++;
    if (memchr(text, '\0', length)) {
      g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s is not a text file", path);
      return NULL;
    }
    if (number >= first_line) {
      /* a minified or generated line is shown in part */
      g_autofree char *valid = g_utf8_make_valid(text, (gssize)MIN(length, TS_SOURCE_LINE_MAX));
      if (length > TS_SOURCE_LINE_MAX) {
        char *cut = g_strconcat(valid, " …", NULL);
        g_free(valid);
        valid = cut;
      }
      g_strv_builder_add(lines, g_strchomp(valid));
    }
  }
  *n_read = number;
  return g_strv_builder_end(lines);
}

TsSourceSnippet *ts_source_snippet_read(const char *file, int line, int context, const char *const *dirs,
                                        GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail(file != NULL && line > 0 && context >= 0, NULL);
  g_autoptr(GPtrArray) looked_in = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) paths = candidates(file, dirs, looked_in);
  const char *found = NULL;
  for (guint i = 0; i < paths->len && !found; i++)
    if (g_file_test(g_ptr_array_index(paths, i), G_FILE_TEST_IS_REGULAR))
      found = g_ptr_array_index(paths, i);
  g_autofree char *base = g_path_get_basename(file);
  if (!found && looked_in->len == 0) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "%s is not on this machine (no directory to look in)", base);
    return NULL;
  }
  if (!found) {
    g_ptr_array_add(looked_in, NULL);
    g_autofree char *where = g_strjoinv(", ", (char **)looked_in->pdata);
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "%s is not on this machine (looked in %s)", base,
                where);
    return NULL;
  }
  int first = MAX(1, line - context), n_read = 0;
  char **lines = read_lines(found, first, line + context, &n_read, cancellable, error);
  if (!lines)
    return NULL;
  if (n_read < line) {
    g_strfreev(lines);
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                "%s has %d lines, so no line %d: it changed since the module was built", found, n_read, line);
    return NULL;
  }
  TsSourceSnippet *snippet = g_new0(TsSourceSnippet, 1);
  snippet->path = g_strdup(found);
  snippet->first_line = first;
  snippet->line = line;
  snippet->lines = lines;
  return snippet;
}

typedef struct {
  char *file;
  int line, context;
  char **dirs;
} ReadRequest;

static void read_request_free(ReadRequest *req)
{
  g_free(req->file);
  g_strfreev(req->dirs);
  g_free(req);
}

static void read_in_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  ReadRequest *req = data;
  GError *error = NULL;
  TsSourceSnippet *snippet = ts_source_snippet_read(req->file, req->line, req->context,
                                                    (const char *const *)req->dirs, cancellable, &error);
  if (snippet)
    g_task_return_pointer(task, snippet, (GDestroyNotify)ts_source_snippet_free);
  else
    g_task_return_error(task, error);
}

void ts_source_snippet_read_async(const char *file, int line, int context, const char *const *dirs,
                                  GCancellable *cancellable, GAsyncReadyCallback callback,
                                  gpointer user_data)
{
  g_return_if_fail(file != NULL);
  ReadRequest *req = g_new0(ReadRequest, 1);
  req->file = g_strdup(file);
  req->line = line;
  req->context = context;
  req->dirs = g_strdupv((char **)dirs);
  g_autoptr(GTask) task = g_task_new(NULL, cancellable, callback, user_data);
  g_task_set_source_tag(task, ts_source_snippet_read_async);
  g_task_set_task_data(task, req, (GDestroyNotify)read_request_free);
  g_task_run_in_thread(task, read_in_thread);
}

TsSourceSnippet *ts_source_snippet_read_finish(GAsyncResult *result, GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, NULL), NULL);
  return g_task_propagate_pointer(G_TASK(result), error);
}
