/* ts-trace-import.c — a Chrome trace read in a tracescope-import process
 * (ts-trace-import.h).  Three streams finish in any order: the session's
 * bytes on stdout, progress lines and the error on stderr, and the exit;
 * when all have, the bytes become a session on a thread. */
#include "ts-trace-import.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

typedef struct {
  char *path;
  GSubprocess *process;
  GOutputStream *out;      /* the session's bytes */
  GDataInputStream *err;
  GString *message;        /* stderr's other lines: the error */
  TsTraceImportProgress progress;
  gpointer progress_data;
  gulong cancel_id;
  int pending;             /* streams and the exit not yet finished */
  GError *error;           /* the first failure */
} Import;

static void import_free(Import *im)
{
  g_free(im->path);
  g_clear_object(&im->process);
  g_clear_object(&im->out);
  g_clear_object(&im->err);
  g_string_free(im->message, TRUE);
  g_clear_error(&im->error);
  g_free(im);
}

/* $TRACESCOPE_IMPORTER, else the build tree's, else the installed one. */
static const char *importer_path(void)
{
  const char *env = g_getenv("TRACESCOPE_IMPORTER");
  if (env && *env)
    return env;
  if (g_file_test(TS_IMPORTER_BUILD_PATH, G_FILE_TEST_IS_EXECUTABLE))
    return TS_IMPORTER_BUILD_PATH;
  return TS_IMPORTER_INSTALL_PATH;
}

static void deserialize(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Import *im = data;
  GBytes *bytes = g_memory_output_stream_steal_as_bytes(G_MEMORY_OUTPUT_STREAM(im->out));
  GError *error = NULL;
  tsp_session *s = tsp_session_deserialize(bytes, &error);
  g_bytes_unref(bytes);
  if (s)
    g_task_return_pointer(task, s, (GDestroyNotify)tsp_session_free);
  else
    g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: %s", im->path, error->message);
  g_clear_error(&error);
}

/* Why the process ended without a session (kept in im->message). */
static const char *exit_reason(Import *im)
{
  g_strchomp(im->message->str);
  im->message->len = strlen(im->message->str);
  if (g_subprocess_get_if_signaled(im->process)) {
    int sig = g_subprocess_get_term_sig(im->process);
    g_autofree char *said = g_string_free(g_steal_pointer(&im->message), FALSE);
    im->message = g_string_new(NULL);
    g_string_printf(im->message, "%s: reading it ended the importer: killed by signal %d (%s)%s%s",
                    im->path, sig, g_strsignal(sig), *said ? "; it said: " : "", said);
  } else if (!im->message->len) {
    g_string_printf(im->message, "%s: the importer exited with status %d and said nothing", im->path,
                    g_subprocess_get_exit_status(im->process));
  }
  return im->message->str;
}

static void one_done(GTask *task)
{
  Import *im = g_task_get_task_data(task);
  if (--im->pending > 0)
    return;
  g_cancellable_disconnect(g_task_get_cancellable(task), im->cancel_id);
  im->cancel_id = 0;
  if (g_task_return_error_if_cancelled(task))
    ; /* the process was ended */
  else if (im->error)
    g_task_return_error(task, g_steal_pointer(&im->error));
  else if (!g_subprocess_get_successful(im->process))
    g_task_return_error(task, g_error_new_literal(G_IO_ERROR, G_IO_ERROR_FAILED, exit_reason(im)));
  else
    g_task_run_in_thread(task, deserialize);
  g_object_unref(task);
}

static void keep_error(Import *im, GError *error)
{
  if (!im->error && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_propagate_prefixed_error(&im->error, error, "%s: ", im->path);
  else
    g_error_free(error);
}

static void on_spliced(GObject *source, GAsyncResult *res, gpointer user_data)
{
  GTask *task = user_data;
  GError *error = NULL;
  if (g_output_stream_splice_finish(G_OUTPUT_STREAM(source), res, &error) < 0)
    keep_error(g_task_get_task_data(task), error);
  one_done(task);
}

static void on_line(GObject *source, GAsyncResult *res, gpointer user_data)
{
  GTask *task = user_data;
  Import *im = g_task_get_task_data(task);
  GError *error = NULL;
  g_autofree char *line = g_data_input_stream_read_line_finish_utf8(im->err, res, NULL, &error);
  if (!line) {
    if (error)
      keep_error(im, error);
    one_done(task);
    return;
  }
  if (g_str_has_prefix(line, "progress ")) {
    if (im->progress)
      im->progress(g_ascii_strtod(line + 9, NULL), im->progress_data);
  } else if (im->message->len < 4096) {
    g_string_append_printf(im->message, "%s\n", line);
  }
  g_data_input_stream_read_line_async(im->err, G_PRIORITY_DEFAULT, g_task_get_cancellable(task), on_line,
                                       task);
}

static void on_exited(GObject *source, GAsyncResult *res, gpointer user_data)
{
  GTask *task = user_data;
  GError *error = NULL;
  if (!g_subprocess_wait_finish(G_SUBPROCESS(source), res, &error))
    keep_error(g_task_get_task_data(task), error);
  one_done(task);
}

static void on_cancelled(GCancellable *cancellable, gpointer data)
{
  g_subprocess_force_exit(data);
}

void ts_trace_import_async(const char *path, const tsp_read_limits *limits, GCancellable *cancellable,
                           TsTraceImportProgress progress, gpointer progress_data,
                           GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task = g_task_new(NULL, cancellable, callback, user_data);
  g_task_set_source_tag(task, ts_trace_import_async);
  Import *im = g_new0(Import, 1);
  im->path = g_strdup(path);
  im->message = g_string_new(NULL);
  im->progress = progress;
  im->progress_data = progress_data;
  g_task_set_task_data(task, im, (GDestroyNotify)import_free);
  char bytes[32], events[32], string[32], value[32], depth[16];
  g_snprintf(bytes, sizeof bytes, "%" G_GUINT64_FORMAT, limits->max_bytes);
  g_snprintf(events, sizeof events, "%" G_GUINT64_FORMAT, limits->max_events);
  g_snprintf(string, sizeof string, "%" G_GUINT64_FORMAT, limits->max_string);
  g_snprintf(value, sizeof value, "%" G_GUINT64_FORMAT, limits->max_value);
  g_snprintf(depth, sizeof depth, "%d", limits->max_depth);
  const char *argv[] = { importer_path(), "--max-bytes", bytes, "--max-events", events, "--max-string", string,
                         "--max-value", value, "--max-depth", depth, "--", path, NULL };
  GError *error = NULL;
  im->process = g_subprocess_newv(argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  if (!im->process) {
    g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: cannot start the importer: %s", path,
                            error->message);
    g_error_free(error);
    g_object_unref(task);
    return;
  }
  im->out = g_memory_output_stream_new(NULL, 0, g_try_realloc, g_free); /* no memory: an error, not an abort */
  im->err = g_data_input_stream_new(g_subprocess_get_stderr_pipe(im->process));
  im->pending = 3;
  if (cancellable)
    im->cancel_id = g_cancellable_connect(cancellable, G_CALLBACK(on_cancelled), g_object_ref(im->process),
                                          g_object_unref);
  g_output_stream_splice_async(im->out, g_subprocess_get_stdout_pipe(im->process),
                               G_OUTPUT_STREAM_SPLICE_CLOSE_SOURCE | G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET,
                               G_PRIORITY_DEFAULT, cancellable, on_spliced, g_object_ref(task));
  g_data_input_stream_read_line_async(im->err, G_PRIORITY_DEFAULT, cancellable, on_line, g_object_ref(task));
  g_subprocess_wait_async(im->process, NULL, on_exited, task); /* the exit is waited for, cancelled or not */
}

tsp_session *ts_trace_import_finish(GAsyncResult *result, GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, NULL), NULL);
  return g_task_propagate_pointer(G_TASK(result), error);
}
