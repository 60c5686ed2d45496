/* fuzz-onnx.c — the ONNX importer (engine/io/onnx_*.c) on arbitrary files.
 *
 * The input is the whole model file (a memfd).  A load gives a model or a
 * clean error; a loaded model runs eagerly on zeros of its inputs' specs
 * (unknown dims 1, inputs of more than 2^16 elements left out) and as the
 * traced function of its first output, each a result or a clean error.
 * A model may compute for ever (a Loop of 2^40 iterations is a valid
 * model): past OP_BUDGET ops an input's calls are cancelled, which is a
 * clean error too (TS_ERR_CANCELLED). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-common.h"
#include "tracescope-onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_IO 16
#define OP_BUDGET 100000

static int cancel_flag;
static int64_t ops_left;

/* Ops may begin on the engine's threads: both counters are atomic. */
static void count_op(const ts_event *event, void *data)
{
  if (__atomic_sub_fetch(&ops_left, 1, __ATOMIC_RELAXED) <= 0)
    __atomic_store_n(&cancel_flag, 1, __ATOMIC_RELAXED);
}

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
  __atomic_store_n(&ops_left, OP_BUDGET, __ATOMIC_RELAXED);
  __atomic_store_n(&cancel_flag, 0, __ATOMIC_RELAXED);
  int listener = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_BEGIN) | TS_LISTENER_CONCURRENT, count_op, NULL);
  ts_watch_cancel_flag(&cancel_flag);
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
  ts_watch_cancel_flag(NULL);
  ts_listener_remove(listener);
  ts_release_all();
  ts_error_clear();
  close(fd);
  return 0;
}
