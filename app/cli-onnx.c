/* cli-onnx.c — ONNX model files where the commands take a MODULE:
 * `tracescope-cli run model.onnx FUNCTION ...` opens the model as a module
 * of one function per output (ts_onnx_model_module).  The models stay open
 * until the command is done (cli_close_models).  `export` writes a traced
 * concrete function as a model (ts_concrete_save_onnx). */
#include "cli.h"

#include <stdio.h>
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

static int export_body(const cli_options *o)
{
  ts_scope *scope = ts_scope_begin();
  GArray *inputs = g_array_new(FALSE, TRUE, sizeof(cli_args));
  ts_module *module = NULL;
  ts_function *fn = NULL;
  int ret = cli_open_function(o, &module, &fn);
  if (ret == 0)
    ret = cli_trace_inputs(o, module, fn, 1, inputs);
  if (ret == 0) {
    int listener = cli_listen(false);
    ts_concrete *cf = cli_trace_aside(fn, &g_array_index(inputs, cli_args, 0));
    if (!cf || !ts_concrete_save_onnx(cf, o->out))
      ret = cli_fail_engine(CLI_EXIT_FAILED);
    else
      printf("%s: %s as ONNX (opset 17)\n", o->out, ts_concrete_signature(cf));
    ts_listener_remove(listener);
  }
  for (guint i = 0; i < inputs->len; i++)
    cli_args_clear(&g_array_index(inputs, cli_args, i));
  g_array_unref(inputs);
  ts_module_free(module);
  ts_scope_end(scope);
  return ret;
}

int cli_export(int argc, char **argv)
{
  return cli_command_main(CLI_EXPORT, argc, argv, export_body);
}
