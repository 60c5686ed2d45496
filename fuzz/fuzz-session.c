/* fuzz-session.c — the app's session reader (app/ts-session.c, through the
 * bounded JSON reader tsp_json_load) on arbitrary files.
 *
 * The input is the file: ts_session_load gives a session or an error with
 * a message, never both, never neither.  A session read back is saved, and
 * what was saved must read again and save to the same bytes. */
#include <glib/gstdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-common.h"
#include "ts-session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *dir;

static TsSession *load(const char *path, const char *what)
{
  GError *error = NULL;
  TsSession *s = ts_session_load(path, &error);
  if (!s && (!error || !error->message || !error->message[0]))
    fuzz_finding("%s: no session and no error with a message", what);
  if (s && error)
    fuzz_finding("%s: a session and an error: %s", what, error->message);
  g_clear_error(&error);
  ts_error_clear(); /* a graph that did not read leaves the engine's error too */
  return s;
}

static char *save(const TsSession *s, const char *name)
{
  char *path = g_build_filename(dir, name, NULL);
  GError *error = NULL;
  if (!ts_session_save(s, path, &error))
    fuzz_finding("a session read back does not save: %s", error->message);
  return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_begin_input();
  if (!dir)
    dir = g_dir_make_tmp("fuzz-session-XXXXXX", NULL);
  int fd = memfd_create("fuzz-session", MFD_CLOEXEC);
  if (fd < 0 || (size > 0 && write(fd, data, size) != (ssize_t)size))
    fuzz_finding("cannot write the input to a memfd");
  char path[64];
  g_snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  TsSession *s = load(path, "the input");
  if (s) {
    g_autofree char *first = save(s, "first.json");
    TsSession *back = load(first, "a saved session");
    if (!back)
      fuzz_finding("a saved session does not read again");
    g_autofree char *second = save(back, "second.json");
    g_autofree char *a = NULL, *b = NULL;
    gsize na, nb;
    if (!g_file_get_contents(first, &a, &na, NULL) || !g_file_get_contents(second, &b, &nb, NULL) ||
        na != nb || memcmp(a, b, na) != 0)
      fuzz_finding("save, load, save: the bytes differ");
    g_unlink(first);
    g_unlink(second);
    ts_session_free(back);
    ts_session_free(s);
  }
  close(fd);
  ts_release_all();
  return 0;
}
