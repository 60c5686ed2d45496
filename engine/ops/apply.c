/* ops/apply.c — ResourceApplyAdam: Adam's update of one variable and its
 * two slots in one pass over the data, as TensorFlow's optimizer kernel
 * does it (training/optimizers.c emits it):
 *
 *   lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
 *   m   += (grad - m) * (1 - beta1)
 *   v   += (grad * grad - v) * (1 - beta2)
 *   var -= lr_t * m / (sqrt(v) + epsilon)
 *
 * in the variables' dtype, elementwise in the order the dozen separate ops
 * (sub, mul, assign_add, ..., div, assign_sub) would take, so that it gives
 * their bits while reading and writing each array once instead of a dozen
 * times.  Inputs 0-2 are the variables themselves (TS_OPF_VARIABLE: a
 * traced step captures their handles); the rest are values. */
#include "../engine-private.h"
#include "../kernels/kernels.h"
#include "elementwise.h"

#include <math.h>

enum { IN_VAR, IN_M, IN_V, IN_BETA1_POWER, IN_BETA2_POWER, IN_LR, IN_BETA1, IN_BETA2, IN_EPSILON,
       IN_GRAD, N_IN };

static const char *const IN_NAMES[N_IN] = {
  "var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad",
};

static bool apply_adam_infer(ts_infer_ctx *c)
{
  ts_info var = c->in[IN_VAR];
  if (var.dtype != TS_F32 && var.dtype != TS_F64) {
    char b[TS_INFO_STR];
    return ts__infer_fail(c, TS_ERR_DTYPE, "var must be f32 or f64, got %s",
                          ts__info_str(b, var.dtype, var.shape));
  }
  for (int i = 1; i < N_IN; i++) {
    ts_info in = c->in[i];
    bool scalar = i != IN_M && i != IN_V && i != IN_GRAD;
    bool shape_ok = scalar ? in.shape.rank == 0 : in.shape.rank == var.shape.rank;
    for (int d = 0; !scalar && shape_ok && d < in.shape.rank; d++)
      shape_ok = in.shape.dim[d] < 0 || var.shape.dim[d] < 0 || in.shape.dim[d] == var.shape.dim[d];
    if (in.dtype != var.dtype || !shape_ok) {
      char vb[TS_INFO_STR], ib[TS_INFO_STR];
      return ts__infer_fail(c, TS_ERR_SHAPE, "%s is %s, but must be %s%s", IN_NAMES[i],
                            ts__info_str(ib, in.dtype, in.shape),
                            scalar ? "a scalar of var's dtype " : "var's dtype and shape ",
                            ts__info_str(vb, var.dtype, var.shape));
    }
  }
  return true;
}

typedef struct adam_job {
  void *var, *m, *v;
  const void *grad;
  double lr_t, one_minus_beta1, one_minus_beta2, epsilon; /* exact in the dtype's type */
} adam_job;

#define ADAM_RANGE(name, T, SQRT)                                                     \
  static void name(void *ctx, int64_t begin, int64_t end)                             \
  {                                                                                   \
    const adam_job *j = ctx;                                                          \
    T *restrict var = j->var, *restrict m = j->m, *restrict v = j->v;                 \
    const T *restrict g = j->grad;                                                    \
    const T lr_t = (T)j->lr_t, c1 = (T)j->one_minus_beta1, c2 = (T)j->one_minus_beta2; \
    const T eps = (T)j->epsilon;                                                      \
    for (int64_t i = begin; i < end; i++) {                                           \
      T mi = m[i] + (g[i] - m[i]) * c1;                                               \
      T vi = v[i] + (g[i] * g[i] - v[i]) * c2;                                        \
      m[i] = mi;                                                                      \
      v[i] = vi;                                                                      \
      var[i] = var[i] - lr_t * mi / (SQRT(vi) + eps);                                 \
    }                                                                                 \
  }

ADAM_RANGE(adam_f64, double, sqrt)

/* f32 on the widest vectors the CPU has (kernels/adam.c). */
static void adam_f32(void *ctx, int64_t begin, int64_t end)
{
  const adam_job *j = ctx;
  ts_adam_f32 a = { j->var, j->m, j->v, j->grad, (float)j->lr_t, (float)j->one_minus_beta1,
                    (float)j->one_minus_beta2, (float)j->epsilon };
  ts__adam_f32(&a, begin, end);
}

/* The update itself, over the tensors' data: what the device the
 * variables live on runs (on a device's stream, where the data is). */
static bool apply_adam_update(ts_kernel_ctx *k)
{
  ts_tensor *const *in = k->in;
  ts_dtype dt = in[IN_VAR]->dtype;
  /* the scalars as the dtype holds them, combined in it as the ops would */
#define SCALAR(T, i) (*(const T *)in[i]->data)
#define RATES(T, SQRT)                                                                     \
  do {                                                                                     \
    T one = 1;                                                                             \
    j.lr_t = SCALAR(T, IN_LR) * SQRT(one - SCALAR(T, IN_BETA2_POWER)) /                    \
             (one - SCALAR(T, IN_BETA1_POWER));                                            \
    j.one_minus_beta1 = (T)(one - SCALAR(T, IN_BETA1));                                    \
    j.one_minus_beta2 = (T)(one - SCALAR(T, IN_BETA2));                                    \
    j.epsilon = SCALAR(T, IN_EPSILON);                                                     \
  } while (0)
  adam_job j = { in[IN_VAR]->data, in[IN_M]->data, in[IN_V]->data, in[IN_GRAD]->data,
                 0, 0, 0, 0 };
  if (dt == TS_F32)
    RATES(float, sqrtf);
  else
    RATES(double, sqrt);
#undef RATES
#undef SCALAR
  ts__parallel_range(in[IN_VAR]->size, TS_EW_GRAIN_COSTLY, dt == TS_F32 ? adam_f32 : adam_f64, &j);
  return true;
}

static const ts_op_def apply_adam_update_def = {
  .op = TS_OP_APPLY_ADAM, .name = "ResourceApplyAdam", .api_name = "apply_adam",
  .n_inputs = N_IN, .n_outputs = 0, .flags = TS_OPF_STATEFUL | TS_OPF_NOT_DIFFERENTIABLE,
  .kernel[TS_DEVICE_CPU] = apply_adam_update,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_apply_adam_update),
};

/* On the caller's thread, as the other variable ops' kernels: the
 * variables' storage is made writable here (a read still holding it gets
 * it to itself), then the update runs where the variables live. */
static bool apply_adam_kernel(ts_kernel_ctx *k)
{
  ts_tensor *const *in = k->in;
  for (int i = IN_VAR; i <= IN_V; i++)
    if (!in[i]->is_variable)
      return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT, "%s is not a variable", IN_NAMES[i]);
  if (in[IN_M] == in[IN_VAR] || in[IN_V] == in[IN_VAR] || in[IN_M] == in[IN_V])
    return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT, "var, m and v must be three variables");
  /* grad may be a read of one of them: its data stays where it is */
  for (int i = IN_VAR; i <= IN_V; i++)
    if (!ts__variable_writable(k, in[i], true))
      return false;
  const ts_backend *b = in[IN_VAR]->backend;
  ts_kernel_ctx update = *k;
  update.def = &apply_adam_update_def;
  update.backend = b;
  return b->iface.run_op ? b->iface.run_op(b, &update) : ts_kernel_run(&update, b->iface.kind);
}

const ts_op_def ts__op_apply_adam = {
  .op = TS_OP_APPLY_ADAM, .name = "ResourceApplyAdam", .api_name = "apply_adam",
  .n_inputs = N_IN, .n_outputs = 0,
  .flags = TS_OPF_STATEFUL | TS_OPF_VARIABLE | TS_OPF_NOT_DIFFERENTIABLE,
  .infer = apply_adam_infer, .kernel[TS_DEVICE_CPU] = apply_adam_kernel,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(apply_adam_kernel),
};

bool ts_apply_adam_at(ts_loc loc, ts_tensor *var, ts_tensor *m, ts_tensor *v,
                      ts_tensor *beta1_power, ts_tensor *beta2_power, ts_tensor *lr,
                      ts_tensor *beta1, ts_tensor *beta2, ts_tensor *epsilon, ts_tensor *grad)
{
  ts_tensor *in[N_IN] = { var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad };
  for (int i = IN_VAR; i <= IN_V; i++)
    if (in[i] && !in[i]->is_variable) { /* checked here too: tracing would lift it to a Const */
      ts__op_fail(loc, &ts__op_apply_adam, TS_ERR_INVALID_ARGUMENT, "%s is not a variable",
                  IN_NAMES[i]);
      return false;
    }
  return ts__dispatch(loc, TS_OP_APPLY_ADAM, in, N_IN, NULL, NULL) >= 0;
}
