/* fuzz-onnx.c — the ONNX importer (engine/io/onnx_*.c) on arbitrary files.
 *
 * The input is the whole model file (a memfd).  A load gives a model or a
 * clean error; a loaded model runs eagerly on zeros of its inputs' specs
 * (unknown dims 1, inputs of more than 2^16 elements left out) and as the
 * traced function of its first output, each a result or a clean error. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-common.h"
#include "tracescope-onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_IO 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_begin_input();
  int fd = memfd_create("fuzz-onnx", MFD_CLOEXEC);
  if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size)) {
    perror("memfd");
    abort();
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  ts_scope *scope = ts_scope_begin();
  ts_onnx_model *model = ts_onnx_load(path);
  if (!model)
    fuzz_expect_error("ts_onnx_load");
  int n_in = model ? ts_onnx_model_n_inputs(model) : 0, n_out = model ? ts_onnx_model_n_outputs(model) : 0;
  bool runnable = model && n_in <= MAX_IO && n_out <= MAX_IO && n_out > 0;
  ts_tensor *in[MAX_IO] = { NULL }, *out[MAX_IO] = { NULL };
  ts_value args[MAX_IO];
  for (int i = 0; runnable && i < n_in; i++) {
    ts_spec s = ts_onnx_model_input_spec(model, i);
    for (int d = 0; d < s.shape.rank; d++)
      s.shape.dim[d] = s.shape.dim[d] < 0 ? 1 : s.shape.dim[d];
    int64_t n = ts_shape_size(s.shape);
    runnable = n >= 0 && n <= (1 << 16) && (in[i] = ts_zeros(s.dtype, s.shape)) != NULL;
    args[i] = TS_TENSOR_VALUE(in[i]);
  }
  ts_error_clear();
  if (runnable) {
    if (!ts_onnx_model_run(model, in, n_in, out))
      fuzz_expect_error("ts_onnx_model_run");
    for (int i = 0; i < n_out && out[i]; i++)
      fuzz_inspect(out[i]);
    ts_function *fn = ts_onnx_model_function(model, 0);
    if (!fn)
      fuzz_expect_error("ts_onnx_model_function");
    else
      fuzz_check(ts_function_call(fn, args, n_in), "ts_function_call (graph)");
  }
  char *missing = ts_onnx_unsupported(path);
  if (!missing)
    fuzz_expect_error("ts_onnx_unsupported");
  free(missing);
  ts_onnx_model_free(model);
  ts_scope_end(scope);
  ts_release_all();
  ts_error_clear();
  close(fd);
  return 0;
}
