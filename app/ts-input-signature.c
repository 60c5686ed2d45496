/* ts-input-signature.c — relaxed input signatures. */
#include "ts-input-signature.h"

#include <gio/gio.h>

gboolean ts_input_signature_relaxed(const TsModuleFunction *fn, ts_spec **specs, int *n_specs,
                                    GError **error)
{
  g_return_val_if_fail(fn != NULL && specs != NULL && n_specs != NULL, FALSE);
  int n_concrete = (int)fn->concrete->len;
  if (n_concrete == 0) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s has not been traced yet",
                fn->name);
    return FALSE;
  }
  g_autofree ts_spec *out = NULL;
  int n = -1;
  for (int c = 0; c < n_concrete; c++) {
    const char *sig = ts_module_function_concrete(fn, c)->signature;
    g_auto(GStrv) args = ts_signature_split(sig);
    int n_args = (int)g_strv_length(args);
    if (n < 0) {
      n = n_args;
      out = g_new0(ts_spec, n > 0 ? n : 1);
    } else if (n_args != n) {
      g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                  "%s was traced with %d and with %d arguments: one input signature cannot "
                  "cover both", fn->name, n, n_args);
      return FALSE;
    }
    for (int i = 0; i < n; i++) {
      ts_spec s;
      if (!ts_spec_parse(args[i], &s)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "argument %d of %s is the host value %s: an input signature takes tensors "
                    "only (pass a tensor instead)", i, fn->name, args[i]);
        return FALSE;
      }
      if (c == 0) {
        out[i] = s;
        continue;
      }
      if (s.dtype != out[i].dtype || s.shape.rank != out[i].shape.rank) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "argument %d of %s changed its dtype or rank: relaxing dimensions cannot "
                    "cover that", i, fn->name);
        return FALSE;
      }
      for (int d = 0; d < s.shape.rank; d++)
        if (s.shape.dim[d] != out[i].shape.dim[d])
          out[i].shape.dim[d] = -1;
    }
  }
  *specs = g_steal_pointer(&out);
  *n_specs = n;
  return TRUE;
}

char *ts_input_signature_to_string(const TsModuleFunction *fn, const ts_spec *specs, int n_specs)
{
  GString *s = g_string_new("(");
  for (int i = 0; i < n_specs; i++) {
    g_autofree char *spec = ts_spec_to_string(&specs[i]);
    if (i)
      g_string_append(s, ", ");
    if (i < fn->n_params)
      g_string_append_printf(s, "%s: ", fn->params[i]);
    g_string_append(s, spec);
  }
  g_string_append_c(s, ')');
  return g_string_free(s, FALSE);
}
