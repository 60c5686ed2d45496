/* ops/optional.c — optionals as TensorFlow's Optional ops (tf.experimental.
 * Optional; ONNX's optional type): OptionalFromValue, OptionalNone,
 * OptionalHasValue and OptionalGetValue.
 *
 * An optional is a variant scalar whose element holds one tensor (a
 * TensorList's variant among them) or nothing.  It never changes once
 * made; its value is shared by reference (a variable's value is copied,
 * since assignments would change it).  The value's dtype and shape are
 * not part of the variant's static type: OptionalGetValue has them as
 * attributes, which its wrapper finds as TensorArrays' reads do
 * (ts__element_op). */
#include "../engine-private.h"

#define ATTRS(a) .n_attrs = (int)(sizeof(a) / sizeof((a)[0])), .attrs = (a)

typedef struct optional {
  ts_variant base;
  ts_tensor *value; /* NULL: none */
} optional;

static void optional_destroy(ts_variant *v)
{
  optional *o = (optional *)v;
  ts_tensor_unref(o->value);
  g_free(o);
}

static const optional *optional_of(const ts_tensor *t)
{
  ts_variant *v = ((ts_variant *const *)t->data)[0];
  return v && v->destroy == optional_destroy ? (const optional *)v : NULL;
}

static const optional *input_optional(ts_kernel_ctx *k)
{
  const optional *o = optional_of(k->in[0]);
  if (!o)
    ts__op_fail(k->loc, k->def, TS_ERR_INVALID_ARGUMENT, "input 0 is a variant that holds no optional");
  return o;
}

static bool put_optional(ts_kernel_ctx *k, ts_tensor *value)
{
  optional *o = g_new0(optional, 1);
  o->base = (ts_variant){ .refcount = 1, .destroy = optional_destroy, .kind = "Optional" };
  o->value = value;
  ((ts_variant **)k->out[0]->data)[0] = &o->base;
  return true;
}

static bool check_optional(ts_infer_ctx *c)
{
  ts_info in = c->in[0];
  if (in.dtype == TS_VARIANT && in.shape.rank == 0)
    return true;
  char buf[TS_INFO_STR];
  return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "input 0 is %s, not an optional",
                        ts__info_str(buf, in.dtype, in.shape));
}

static bool variant_infer(ts_infer_ctx *c)
{
  c->out[0] = (ts_info){ TS_VARIANT, TS_SCALAR_SHAPE };
  return true;
}

/* ---- OptionalFromValue and OptionalNone ---------------------------------------- */

static bool from_value_cpu(ts_kernel_ctx *k)
{
  ts_tensor *x = k->in[0], *value = x;
  if (x->is_variable || (x->base && x->base->is_variable)) {
    value = ts__tensor_alloc_on(k->loc, k->backend, x->dtype, x->shape);
    if (!value)
      return false;
    memcpy(value->data, x->data, (size_t)x->size * ts_dtype_size(x->dtype));
  }
  return put_optional(k, ts_tensor_ref(value));
}

const ts_op_def ts__op_optional_from_value = {
  .op = TS_OP_OPTIONAL_FROM_VALUE, .name = "OptionalFromValue",
  .api_name = "optional_from_value", .n_inputs = 1, .n_outputs = 1,
  .flags = TS_OPF_ANY_DTYPE, .infer = variant_infer, .kernel[TS_DEVICE_CPU] = from_value_cpu,
};

static bool none_cpu(ts_kernel_ctx *k)
{
  return put_optional(k, NULL);
}

const ts_op_def ts__op_optional_none = {
  .op = TS_OP_OPTIONAL_NONE, .name = "OptionalNone",
  .api_name = "optional_none", .n_inputs = 0, .n_outputs = 1,
  .flags = TS_OPF_ANY_DTYPE | TS_OPF_NOT_DIFFERENTIABLE, .infer = variant_infer,
  .kernel[TS_DEVICE_CPU] = none_cpu,
};

/* ---- OptionalHasValue and OptionalGetValue -------------------------------------- */

static bool has_value_infer(ts_infer_ctx *c)
{
  if (!check_optional(c))
    return false;
  c->out[0] = (ts_info){ TS_BOOL, TS_SCALAR_SHAPE };
  return true;
}

static bool has_value_cpu(ts_kernel_ctx *k)
{
  const optional *o = input_optional(k);
  if (!o)
    return false;
  ((uint8_t *)k->out[0]->data)[0] = o->value != NULL;
  return true;
}

const ts_op_def ts__op_optional_has_value = {
  .op = TS_OP_OPTIONAL_HAS_VALUE, .name = "OptionalHasValue",
  .api_name = "optional_has_value", .n_inputs = 1, .n_outputs = 1,
  .flags = TS_OPF_ANY_DTYPE | TS_OPF_NOT_DIFFERENTIABLE, .infer = has_value_infer,
  .kernel[TS_DEVICE_CPU] = has_value_cpu,
};

/* The value's dtype and shape the wrapper found while tracing. */
static const ts_attr_def get_value_attrs[] = {
  { "dtype", TS_ATTR_DTYPE },
  { "shape", TS_ATTR_SHAPE },
};

static bool get_value_infer(ts_infer_ctx *c)
{
  if (!check_optional(c))
    return false;
  c->out[0] = (ts_info){ c->attrs[0].dtype, c->attrs[1].shape };
  return true;
}

static bool get_value_cpu(ts_kernel_ctx *k)
{
  const optional *o = input_optional(k);
  if (!o)
    return false;
  if (!o->value)
    return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT, "the optional holds no value");
  if (o->value->dtype != k->attrs[0].dtype)
    return ts__kernel_fail(k, TS_ERR_DTYPE, "the optional holds a %s value, not %s",
                           ts_dtype_name(o->value->dtype), ts_dtype_name(k->attrs[0].dtype));
  return (k->out[0] = ts__tensor_view(o->value, o->value->shape)) != NULL;
}

const ts_op_def ts__op_optional_get_value = {
  .op = TS_OP_OPTIONAL_GET_VALUE, .name = "OptionalGetValue",
  .api_name = "optional_get_value", .n_inputs = 1, .n_outputs = 1,
  .flags = TS_OPF_ANY_DTYPE | TS_OPF_ALIAS, ATTRS(get_value_attrs),
  .infer = get_value_infer, .kernel[TS_DEVICE_CPU] = get_value_cpu,
};

/* ---- the value's type, wrappers, values for tools -------------------------------- */

bool ts__optional_elem_of_value(const ts_tensor *opt, ts_list_elem *e)
{
  const optional *o = optional_of(opt);
  if (!o)
    return false;
  if (o->value)
    ts__list_elem_merge(e, o->value->dtype, &o->value->shape);
  return true;
}

ts_tensor *ts_optional_from_value_at(ts_loc loc, ts_tensor *value)
{
  return ts__dispatch1(loc, TS_OP_OPTIONAL_FROM_VALUE, &value, 1, NULL);
}

ts_tensor *ts_optional_none_at(ts_loc loc)
{
  return ts__dispatch1(loc, TS_OP_OPTIONAL_NONE, NULL, 0, NULL);
}

ts_tensor *ts_optional_has_value_at(ts_loc loc, ts_tensor *opt)
{
  return ts__dispatch1(loc, TS_OP_OPTIONAL_HAS_VALUE, &opt, 1, NULL);
}

ts_tensor *ts_optional_get_value_at(ts_loc loc, ts_tensor *opt)
{
  return ts__element_op(loc, TS_OP_OPTIONAL_GET_VALUE, &opt, 1, NULL, 0);
}

int ts_optional_value(const ts_tensor *t, ts_tensor **value)
{
  const optional *o = t && t->dtype == TS_VARIANT && t->size == 1 && t->data ? optional_of(t) : NULL;
  if (!o)
    return -1;
  if (value)
    *value = o->value;
  return o->value != NULL;
}
