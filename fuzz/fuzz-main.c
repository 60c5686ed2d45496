/* fuzz-main.c — runs a fuzz target's regression corpus without libFuzzer.
 *
 * Built into every target when `-Dfuzz=false` (gcc, `make test`): main
 * calls LLVMFuzzerTestOneInput once per file of each directory (or file)
 * named on the command line, in name order, and prints TAP ("1..N",
 * "ok K - FILE") for meson.  A crash, a sanitizer report or an abort from
 * the target ends the process, which fails the test.  Whatever the engine
 * prints (ts_print) goes to stderr so it cannot disturb the TAP stream. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct file_list {
  char **paths;
  int n, cap;
} file_list;

static void list_add(file_list *l, char *path)
{
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->paths = realloc(l->paths, (size_t)l->cap * sizeof *l->paths);
    if (!l->paths)
      abort();
  }
  l->paths[l->n++] = path;
}

static int compare_paths(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds path, or the regular files directly inside it; false if unreadable. */
static int collect(file_list *l, const char *path)
{
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "fuzz-main: %s: %s\n", path, strerror(errno));
    return 0;
  }
  if (!S_ISDIR(st.st_mode)) {
    list_add(l, strdup(path));
    return 1;
  }
  DIR *dir = opendir(path);
  if (!dir) {
    fprintf(stderr, "fuzz-main: %s: %s\n", path, strerror(errno));
    return 0;
  }
  int first = l->n;
  for (struct dirent *e; (e = readdir(dir));) {
    if (e->d_name[0] == '.')
      continue;
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    char *full = malloc(len);
    if (!full)
      abort();
    snprintf(full, len, "%s/%s", path, e->d_name);
    if (stat(full, &st) == 0 && S_ISREG(st.st_mode))
      list_add(l, full);
    else
      free(full);
  }
  closedir(dir);
  qsort(l->paths + first, (size_t)(l->n - first), sizeof *l->paths, compare_paths);
  return 1;
}

static unsigned char *read_all(const char *path, size_t *size)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0;
  unsigned char *buf = malloc(cap);
  for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
    n += got;
    if (n == cap) {
      cap *= 2;
      unsigned char *bigger = realloc(buf, cap);
      if (!bigger)
        free(buf);
      buf = bigger;
    }
  }
  if (ferror(f)) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = n;
  return buf;
}

int main(int argc, char **argv)
{
  /* TAP on the original stdout; everything else printed goes to stderr. */
  int tap_fd = dup(STDOUT_FILENO);
  FILE *tap = tap_fd >= 0 ? fdopen(tap_fd, "w") : NULL;
  if (!tap || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    perror("fuzz-main");
    return 1;
  }
  file_list files = { 0 };
  int ok = 1;
  for (int i = 1; i < argc; i++)
    ok &= collect(&files, argv[i]);
  if (argc < 2 || !ok) {
    fprintf(stderr, "usage: %s CORPUS-DIR-OR-FILE...\n", argv[0]);
    return 1;
  }
  fprintf(tap, "1..%d\n", files.n);
  fflush(tap);
  int failed = 0;
  for (int k = 0; k < files.n; k++) {
    size_t size = 0;
    unsigned char *data = read_all(files.paths[k], &size);
    if (!data) {
      fprintf(tap, "not ok %d - %s (unreadable)\n", k + 1, files.paths[k]);
      failed = 1;
    } else {
      fprintf(stderr, "# running %s (%zu bytes)\n", files.paths[k], size);
      LLVMFuzzerTestOneInput(data, size);
      fprintf(tap, "ok %d - %s\n", k + 1, files.paths[k]);
    }
    fflush(tap);
    free(data);
    free(files.paths[k]);
  }
  free(files.paths);
  fclose(tap);
  return failed;
}
