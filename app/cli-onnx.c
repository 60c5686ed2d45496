/* cli-onnx.c — ONNX model files where the commands take a MODULE:
 * `tracescope-cli run model.onnx FUNCTION ...` opens the model as a module
 * of one function per output (ts_onnx_model_module).  The models stay open
 * until the command is done (cli_close_models). */
#include "cli.h"

#include <string.h>
#include <tracescope-onnx.h>

static GPtrArray *models;

bool cli_is_model_path(const char *path)
{
  return g_str_has_suffix(path, ".onnx");
}

ts_module *cli_open_module(const char *path)
{
  if (!cli_is_model_path(path))
    return ts_module_open(path);
  ts_onnx_model *model = ts_onnx_load(path);
  if (!model)
    return NULL;
  ts_module *module = ts_onnx_model_module(model);
  if (!module) {
    ts_onnx_model_free(model);
    return NULL;
  }
  if (!models)
    models = g_ptr_array_new_with_free_func((GDestroyNotify)ts_onnx_model_free);
  g_ptr_array_add(models, model);
  return module;
}

void cli_close_models(void)
{
  if (models)
    g_ptr_array_free(models, TRUE);
  models = NULL;
}
