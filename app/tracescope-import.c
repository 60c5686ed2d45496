/* tracescope-import — reads a Chrome trace for the app in a process of its
 * own (ts-trace-import.c): whatever a file does to the importer (a limit
 * passed, the memory running out, a bug), the app sees only this process
 * end.  No GTK.
 *
 *   tracescope-import [--max-bytes N] [--max-events N] [--max-string N]
 *                     [--max-value N] [--max-depth N] FILE
 *
 * On success the session, serialized (tsp_session_serialize), on stdout
 * and exit 0; while reading, "progress FRACTION" lines on stderr; on
 * failure the error on stderr and exit 1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope-profiler.h>
#include <unistd.h>

static bool report_progress(double fraction, void *data)
{
  int *last = data;
  int percent = (int)(fraction * 100);
  if (percent != *last) { /* a line a percent at most */
    *last = percent;
    fprintf(stderr, "progress %.2f\n", fraction);
    fflush(stderr);
  }
  return true; /* the app cancels by ending the process */
}

static bool write_all(int fd, const char *p, size_t n)
{
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= (size_t)k;
  }
  return true;
}

int main(int argc, char **argv)
{
  tsp_import_options o = tsp_import_options_default();
  gint64 max_bytes = (gint64)o.limits.max_bytes, max_events = (gint64)o.limits.max_events,
         max_string = (gint64)o.limits.max_string, max_value = (gint64)o.limits.max_value;
  int max_depth = o.limits.max_depth;
  GOptionEntry entries[] = {
    { "max-bytes", 0, 0, G_OPTION_ARG_INT64, &max_bytes, "Text (decompressed) read at most", "N" },
    { "max-events", 0, 0, G_OPTION_ARG_INT64, &max_events, "Events read at most", "N" },
    { "max-string", 0, 0, G_OPTION_ARG_INT64, &max_string, "Bytes of one string at most", "N" },
    { "max-value", 0, 0, G_OPTION_ARG_INT64, &max_value, "Bytes of one event at most", "N" },
    { "max-depth", 0, 0, G_OPTION_ARG_INT, &max_depth, "Nesting at most", "N" },
    G_OPTION_ENTRY_NULL,
  };
  GOptionContext *context = g_option_context_new("FILE");
  g_option_context_add_main_entries(context, entries, NULL);
  GError *error = NULL;
  bool parsed = g_option_context_parse(context, &argc, &argv, &error);
  g_option_context_free(context);
  if (!parsed || argc != 2 || max_bytes < 0 || max_events < 0 || max_string < 0 || max_value < 0) {
    fprintf(stderr, "tracescope-import: %s\n", error ? error->message : "usage: tracescope-import [OPTION]... FILE");
    g_clear_error(&error);
    return 2;
  }
  o.limits = (tsp_read_limits){ (uint64_t)max_bytes, (uint64_t)max_events, (uint64_t)max_string,
                                (uint64_t)max_value, max_depth };
  int last = -1;
  o.progress = report_progress;
  o.progress_data = &last;
  tsp_session *s = tsp_chrome_import_with(argv[1], &o, &error);
  if (!s) {
    fprintf(stderr, "%s\n", error->message);
    g_error_free(error);
    return 1;
  }
  GBytes *bytes = tsp_session_serialize(s);
  tsp_session_free(s);
  gsize size;
  const char *data = g_bytes_get_data(bytes, &size);
  bool ok = write_all(STDOUT_FILENO, data, size);
  g_bytes_unref(bytes);
  if (!ok) {
    fprintf(stderr, "tracescope-import: cannot write the session: %s\n", g_strerror(errno));
    return 1;
  }
  return 0;
}
