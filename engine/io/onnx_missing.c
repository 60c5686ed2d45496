/* onnx_missing.c — the ONNX API of an engine configured with -Donnx=disabled:
 * every entry point says so. */
#include "engine-private.h"
#include "tracescope-onnx.h"

static void disabled(void)
{
  ts_error_set(TS_ERR_UNIMPLEMENTED, (ts_loc){ 0 }, NULL,
               "this libtracescope was built without ONNX (meson -Donnx=disabled)");
}

ts_onnx_model *ts_onnx_load(const char *path) { disabled(); return NULL; }
char *ts_onnx_unsupported(const char *path) { disabled(); return NULL; }
void ts_onnx_model_free(ts_onnx_model *model) {}
const char *ts_onnx_model_name(const ts_onnx_model *model) { return NULL; }
int64_t ts_onnx_model_opset(const ts_onnx_model *model) { return 0; }
int ts_onnx_model_n_inputs(const ts_onnx_model *model) { return 0; }
const char *ts_onnx_model_input_name(const ts_onnx_model *model, int i) { return NULL; }
ts_spec ts_onnx_model_input_spec(const ts_onnx_model *model, int i) { return (ts_spec){ 0 }; }
int ts_onnx_model_n_outputs(const ts_onnx_model *model) { return 0; }
const char *ts_onnx_model_output_name(const ts_onnx_model *model, int i) { return NULL; }
bool ts_onnx_model_run(ts_onnx_model *model, ts_tensor *const *inputs, int n_inputs, ts_tensor **outputs)
{
  disabled();
  return false;
}
ts_function *ts_onnx_model_function(ts_onnx_model *model, int output) { disabled(); return NULL; }
ts_tensor *ts_onnx_tensor_load(const char *path) { disabled(); return NULL; }
ts_tensor *ts_onnx_model_value_load(const ts_onnx_model *model, bool output, int i, const char *path)
{
  disabled();
  return NULL;
}
ts_module *ts_onnx_model_module(ts_onnx_model *model) { disabled(); return NULL; }
bool ts_onnx_available(void) { return false; }
bool ts_concrete_save_onnx(const ts_concrete *cf, const char *path) { disabled(); return false; }
