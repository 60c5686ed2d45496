/* fuzz-module-spec.c — module export tables (engine/module.c) built in
 * memory and opened with ts_module_new_static.
 *
 * Input layout: byte 0 picks the ABI version (mostly the right one), the
 * export count's sign and whether some exports lack a function; the rest,
 * split at '\n', is the title and then one TS_EXPORT spec ("name, a, b")
 * per line (a line "\x01" stands for a NULL spec).  An opened module's
 * functions are listed, looked up by name and called eagerly and in graph
 * mode. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_EXPORTS 16

static ts_tensor *count_args(ts_call *call)
{
  return ts_scalar_i32(ts_call_n_args(call));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_begin_input();
  if (size == 0)
    return 0;
  uint8_t flags = data[0];
  char *text = malloc(size);
  if (!text)
    return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';

  char *lines[MAX_EXPORTS + 1];
  int n_lines = 0;
  for (char *p = text; n_lines < MAX_EXPORTS + 1;) {
    lines[n_lines++] = p;
    char *nl = strchr(p, '\n');
    if (!nl)
      break;
    *nl = '\0';
    p = nl + 1;
  }
  ts_export exports[MAX_EXPORTS];
  int n_exports = n_lines - 1;
  for (int i = 0; i < n_exports; i++) {
    const char *spec = lines[i + 1];
    exports[i] = (ts_export){
      .fn = (flags & 0x10) && i == n_exports - 1 ? NULL : count_args,
      .spec = strcmp(spec, "\x01") == 0 ? NULL : spec,
    };
  }
  ts_module_info info = {
    .abi_version = (flags & 0x07) == 7 ? flags >> 5 : TS_ABI_VERSION,
    .title = (flags & 0x08) ? NULL : lines[0],
    .exports = (flags & 0x40) && n_exports == 0 ? NULL : exports,
    .n_exports = (flags & 0x20) && (flags & 0x07) == 6 ? -n_exports - 1 : n_exports,
  };

  ts_scope *scope = ts_scope_begin();
  ts_module *module = ts_module_new_static(&info, (flags & 0x80) ? NULL : "fuzz-module");
  if (!module) {
    fuzz_expect_error("ts_module_new_static");
  } else {
    if (ts_failed())
      fuzz_finding("ts_module_new_static succeeded but left an error");
    (void)strlen(ts_module_title(module));
    (void)strlen(ts_module_path(module));
    int n = ts_module_n_functions(module);
    if (n != info.n_exports)
      fuzz_finding("module has %d functions for %d exports", n, info.n_exports);
    for (int i = 0; i < n; i++) {
      ts_function *f = ts_module_function(module, i);
      const char *name = ts_function_name(f);
      if (ts_module_lookup(module, name) != f)
        fuzz_finding("ts_module_lookup('%s') does not find function %d", name, i);
      int n_params = ts_function_n_params(f);
      for (int k = 0; k < n_params; k++)
        (void)strlen(ts_function_param_name(f, k));
      ts_value args[3] = { TS_INT_VALUE(1), TS_FLOAT_VALUE(2.5), TS_STRING_VALUE("s") };
      int n_args = (i + flags) % 4;
      fuzz_check(ts_function_call_eager(f, args, n_args), "ts_function_call_eager");
      fuzz_check(ts_function_call(f, args, n_args), "ts_function_call");
    }
    (void)ts_module_lookup(module, lines[0]);
    ts_module_free(module);
  }
  ts_scope_end(scope);
  ts_release_all();
  ts_error_clear();
  free(text);
  return 0;
}
