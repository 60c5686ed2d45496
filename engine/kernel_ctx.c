/* kernel_ctx.c — what a kernel, a backend's run_op or supports_op is
 * handed (tracescope-backend.h: ts_kernel_ctx's accessors), and running
 * an op's kernel for a kind of device. */
#include "engine-private.h"

ts_op ts_kernel_op(const ts_kernel_ctx *k)
{
  return k->def->op;
}

int ts_kernel_n_inputs(const ts_kernel_ctx *k)
{
  return k->n_in;
}

ts_tensor *ts_kernel_input(const ts_kernel_ctx *k, int i)
{
  return i >= 0 && i < k->n_in ? k->in[i] : NULL;
}

int ts_kernel_n_outputs(const ts_kernel_ctx *k)
{
  return k->n_out;
}

ts_tensor *ts_kernel_output(const ts_kernel_ctx *k, int i)
{
  return i >= 0 && i < k->n_out ? k->out[i] : NULL;
}

uint64_t ts_kernel_correlation(const ts_kernel_ctx *k)
{
  return k->correlation;
}

bool ts_op_has_kernel(ts_op op, ts_device_kind kind)
{
  const ts_op_def *def = ts__op_def(op);
  return def && (unsigned)kind < TS_DEVICE_KIND_COUNT && def->kernel[kind];
}

const ts_node *ts_kernel_node(const ts_kernel_ctx *k)
{
  return k->site ? k->site->node : NULL;
}

static void append_ints(GString *s, const int64_t *v, int n, bool unknown_as_question)
{
  g_string_append_c(s, '[');
  for (int i = 0; i < n; i++) {
    if (i)
      g_string_append(s, ", ");
    if (unknown_as_question && v[i] < 0)
      g_string_append_c(s, '?');
    else
      g_string_append_printf(s, "%" G_GINT64_FORMAT, v[i]);
  }
  g_string_append_c(s, ']');
}

char *ts__attr_to_string(const ts_attr *a)
{
  GString *s = g_string_new(NULL);
  switch (a->type) {
  case TS_ATTR_INT: g_string_append_printf(s, "%" G_GINT64_FORMAT, a->i); break;
  case TS_ATTR_FLOAT: g_string_append_printf(s, "%g", a->f); break;
  case TS_ATTR_BOOL: g_string_append(s, a->b ? "true" : "false"); break;
  case TS_ATTR_DTYPE: g_string_append(s, ts_dtype_name(a->dtype)); break;
  case TS_ATTR_INTS:
    if (a->ints.n < 0)
      g_string_append(s, "all");
    else
      append_ints(s, a->ints.v, a->ints.n, false);
    break;
  case TS_ATTR_SHAPE: append_ints(s, a->shape.dim, a->shape.rank, true); break;
  case TS_ATTR_STRING: g_string_append_printf(s, "\"%s\"", a->s ? a->s : ""); break;
  default: g_string_append(s, "?"); break;
  }
  return g_string_free(s, FALSE);
}

char *ts_kernel_attr(const ts_kernel_ctx *k, const char *name)
{
  const ts_op_def *def = k->def;
  for (int i = 0; name && k->attrs && i < def->n_attrs; i++)
    if (strcmp(def->attrs[i].name, name) == 0)
      return ts__attr_to_string(&k->attrs[i]);
  return NULL;
}

bool ts_kernel_run(ts_kernel_ctx *k, ts_device_kind kind)
{
  ts_kernel_fn fn = (unsigned)kind < TS_DEVICE_KIND_COUNT ? k->def->kernel[kind] : NULL;
  if (!fn)
    return ts__kernel_fail(k, TS_ERR_UNIMPLEMENTED, "has no kernel for this device");
  return fn(k);
}
