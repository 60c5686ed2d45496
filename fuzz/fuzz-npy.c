/* fuzz-npy.c — the .npy loader (engine/io/npy.c) on arbitrary files.
 *
 * The input is the whole file: ts_npy_load reads it from a memfd.  A load
 * gives a tensor or a clean error; a loaded tensor is formatted, saved and
 * loaded again, and must come back with the same dtype and shape. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd_with(const uint8_t *data, size_t size, char *path, size_t path_len)
{
  int fd = memfd_create("fuzz-npy", MFD_CLOEXEC);
  if (fd < 0) {
    perror("memfd_create");
    abort();
  }
  for (size_t done = 0; done < size;) {
    ssize_t w = write(fd, data + done, size - done);
    if (w <= 0) {
      perror("write");
      abort();
    }
    done += (size_t)w;
  }
  snprintf(path, path_len, "/proc/self/fd/%d", fd);
  return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_begin_input();
  char path[64], copy_path[64];
  int fd = memfd_with(data, size, path, sizeof path);
  ts_scope *scope = ts_scope_begin();

  ts_tensor *t = fuzz_check(ts_npy_load(path), "ts_npy_load");
  if (t) {
    fuzz_inspect(t);
    int copy = memfd_with(NULL, 0, copy_path, sizeof copy_path);
    if (fuzz_check_ok(ts_npy_save(copy_path, t), "ts_npy_save")) {
      ts_tensor *back = fuzz_check(ts_npy_load(copy_path), "ts_npy_load (saved copy)");
      if (!back)
        fuzz_finding("a loaded .npy did not load again after ts_npy_save");
      if (ts_tensor_dtype(back) != ts_tensor_dtype(t) ||
          !ts_shape_equal(ts_tensor_shape(back), ts_tensor_shape(t)))
        fuzz_finding("a .npy changed dtype or shape in a save/load round trip");
      size_t bytes = (size_t)ts_tensor_size(t) * ts_dtype_size(ts_tensor_dtype(t));
      if (bytes && memcmp(ts_tensor_data(back), ts_tensor_data(t), bytes) != 0)
        fuzz_finding("a .npy changed its values in a save/load round trip");
    }
    close(copy);
  }

  ts_scope_end(scope);
  ts_release_all();
  ts_error_clear();
  close(fd);
  return 0;
}
