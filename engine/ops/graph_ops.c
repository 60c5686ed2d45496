/* ops/graph_ops.c — ops that exist for graphs: Placeholder, Const and
 * VarHandle (made by the tracer, never dispatched; the executor feeds
 * them), Identity and Shape. */
#include "engine-private.h"

const ts_op_def ts__op_placeholder = {
  .op = TS_OP_PLACEHOLDER, .name = "Placeholder", .api_name = "placeholder",
  .n_inputs = 0, .n_outputs = 1, .flags = TS_OPF_INPUT | TS_OPF_ANY_DTYPE | TS_OPF_NOT_DIFFERENTIABLE,
};

const ts_op_def ts__op_const = {
  .op = TS_OP_CONST, .name = "Const", .api_name = "const",
  .n_inputs = 0, .n_outputs = 1, .flags = TS_OPF_VALUE | TS_OPF_AUXILIARY | TS_OPF_ANY_DTYPE | TS_OPF_NOT_DIFFERENTIABLE,
};

const ts_op_def ts__op_var_handle = {
  .op = TS_OP_VAR_HANDLE, .name = "VarHandleOp", .api_name = "var_handle",
  .n_inputs = 0, .n_outputs = 1, .flags = TS_OPF_VALUE | TS_OPF_AUXILIARY | TS_OPF_NOT_DIFFERENTIABLE,
};

static bool identity_infer(ts_infer_ctx *c)
{
  c->out[0] = c->in[0];
  return true;
}

/* A view, except of a variable, whose value assignments would change. */
static bool identity_cpu(ts_kernel_ctx *k)
{
  ts_tensor *x = k->in[0];
  if (!x->is_variable && x->dtype != TS_STRING && x->dtype != TS_VARIANT)
    return (k->out[0] = ts__tensor_view(x, x->shape)) != NULL;
  ts_tensor *y = ts__tensor_alloc_on(k->loc, k->backend, x->dtype, x->shape);
  if (!y)
    return false;
  if (x->dtype == TS_STRING)
    for (int64_t i = 0; i < x->size; i++)
      ((char **)y->data)[i] = strdup(((char **)x->data)[i] ? ((char **)x->data)[i] : "");
  else if (x->dtype == TS_VARIANT)
    for (int64_t i = 0; i < x->size; i++)
      ((ts_variant **)y->data)[i] = ts__variant_ref(((ts_variant **)x->data)[i]);
  else if (!ts__data_copy(y, x, (size_t)x->size * ts_dtype_size(x->dtype)))
    return ts__kernel_fail(k, TS_ERR_INTERNAL, "copying the variable on %s failed",
                           ts_backend_name(x->backend));
  k->out[0] = y;
  return true;
}

/* Identity and ReadVariableOp pass the gradient through. */
bool ts__grad_pass(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                   ts_tensor **gi)
{
  gi[0] = g[0];
  return true;
}

const ts_op_def ts__op_identity = {
  .op = TS_OP_IDENTITY, .name = "Identity", .api_name = "identity",
  .n_inputs = 1, .n_outputs = 1, .flags = TS_OPF_ALIAS | TS_OPF_ANY_DTYPE,
  .infer = identity_infer, .kernel[TS_DEVICE_CPU] = identity_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_identity), .grad = ts__grad_pass,
};

ts_tensor *ts_identity_at(ts_loc loc, ts_tensor *x)
{
  return ts__dispatch1(loc, TS_OP_IDENTITY, &x, 1, NULL);
}

static bool shape_infer(ts_infer_ctx *c)
{
  c->out[0] = (ts_info){ TS_I32, TS_SHAPE(c->in[0].shape.rank) };
  return true;
}

static bool shape_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  int32_t *out = k->out[0]->data;
  for (int i = 0; i < x->shape.rank; i++) {
    if (x->shape.dim[i] > INT32_MAX)
      return ts__kernel_fail(k, TS_ERR_OUT_OF_RANGE, "dimension %d (%lld) does not fit int32", i,
                             (long long)x->shape.dim[i]);
    out[i] = (int32_t)x->shape.dim[i];
  }
  return true;
}

const ts_op_def ts__op_shape = {
  .op = TS_OP_SHAPE, .name = "Shape", .api_name = "shape",
  .n_inputs = 1, .n_outputs = 1, .flags = TS_OPF_ANY_DTYPE | TS_OPF_NOT_DIFFERENTIABLE,
  .infer = shape_infer, .kernel[TS_DEVICE_CPU] = shape_cpu,
};

ts_tensor *ts_shape_at(ts_loc loc, ts_tensor *x)
{
  return ts__dispatch1(loc, TS_OP_SHAPE, &x, 1, NULL);
}
