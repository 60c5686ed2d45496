/* ops/list.c — TensorArray as TensorFlow's TensorList ops: TensorListReserve,
 * TensorListSetItem, TensorListGetItem and TensorListStack.
 *
 * A TensorArray is a variant scalar whose element is a list (ta_list) of
 * tensors of one dtype.  Lists are immutable once made: a write copies the
 * item pointers into a new list (copy-on-write), so a list someone else
 * holds never changes.  Items are shared by reference; an item backed by a
 * variable is copied, since assignments would change it.
 *
 * The list's element dtype and shape are not part of a variant tensor's
 * static type, yet reads and stacks need them while tracing: the wrappers
 * ask the op handler that records the graph (trace/list_types.c). */
#include "../engine-private.h"

#include <inttypes.h>

#define ATTRS(a) .n_attrs = (int)(sizeof(a) / sizeof((a)[0])), .attrs = (a)
#define MAX_LIST_SIZE ((int64_t)1 << 24) /* elements; each write copies the pointers */

typedef struct ta_list {
  ts_variant base;
  ts_dtype dtype;
  int64_t n;
  ts_tensor **items; /* n entries, NULL where never written */
} ta_list;

static void list_destroy(ts_variant *v)
{
  ta_list *l = (ta_list *)v;
  for (int64_t i = 0; i < l->n; i++)
    ts_tensor_unref(l->items[i]);
  g_free(l->items);
  g_free(l);
}

/* A list of n unset elements; NULL (after an error) if too large. */
static ta_list *list_new(ts_kernel_ctx *k, ts_dtype dtype, int64_t n)
{
  ta_list *l = g_new0(ta_list, 1);
  l->base = (ts_variant){ .refcount = 1, .destroy = list_destroy };
  l->dtype = dtype;
  l->items = n ? g_try_new0(ts_tensor *, (gsize)n) : NULL;
  if (n && !l->items) {
    g_free(l);
    ts__op_fail(k->loc, k->def, TS_ERR_NO_MEMORY,
                "out of memory for a TensorArray of %" PRId64 " elements", n);
    return NULL;
  }
  l->n = n;
  return l;
}

/* The list of a variant scalar; NULL for any other variant (or none). */
static ta_list *list_of(const ts_tensor *t)
{
  ts_variant *v = ((ts_variant *const *)t->data)[0];
  return v && v->destroy == list_destroy ? (ta_list *)v : NULL;
}

static const ta_list *input_list(ts_kernel_ctx *k)
{
  const ta_list *l = list_of(k->in[0]);
  if (!l)
    ts__op_fail(k->loc, k->def, TS_ERR_INVALID_ARGUMENT,
                "input 0 is a variant that holds no TensorArray");
  return l;
}

/* ---- inference helpers --------------------------------------------------------- */

static bool check_list(ts_infer_ctx *c)
{
  ts_info in = c->in[0];
  if (in.dtype == TS_VARIANT && in.shape.rank == 0)
    return true;
  char buf[TS_INFO_STR];
  return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "input 0 is %s, not a TensorArray",
                        ts__info_str(buf, in.dtype, in.shape));
}

static bool check_int_scalar(ts_infer_ctx *c, int i, const char *what)
{
  ts_info in = c->in[i];
  if ((in.dtype == TS_I32 || in.dtype == TS_I64) && in.shape.rank == 0)
    return true;
  char buf[TS_INFO_STR];
  return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                        "the %s must be an int32 or int64 scalar, got %s", what,
                        ts__info_str(buf, in.dtype, in.shape));
}

static bool check_index(ts_kernel_ctx *k, int64_t index)
{
  if (index >= 0)
    return true;
  return ts__kernel_fail(k, TS_ERR_OUT_OF_RANGE, "index %" PRId64 " is negative", index);
}

/* ---- TensorListReserve ---------------------------------------------------------- */

static const ts_attr_def reserve_attrs[] = { { "element_dtype", TS_ATTR_DTYPE } };

static bool reserve_infer(ts_infer_ctx *c)
{
  if (!check_int_scalar(c, 0, "size"))
    return false;
  if (c->attrs[0].dtype == TS_VARIANT)
    return ts__infer_fail(c, TS_ERR_DTYPE, "TensorArrays of TensorArrays are not supported");
  c->out[0] = (ts_info){ TS_VARIANT, TS_SCALAR_SHAPE };
  return true;
}

static bool reserve_cpu(ts_kernel_ctx *k)
{
  int64_t n = ts__load_i64(k->in[0]->dtype, k->in[0]->data, 0);
  if (n < 0 || n > MAX_LIST_SIZE)
    return ts__kernel_fail(k, TS_ERR_OUT_OF_RANGE, "size %" PRId64 " is not in [0, %" PRId64 "]",
                           n, MAX_LIST_SIZE);
  ta_list *l = list_new(k, k->attrs[0].dtype, n);
  if (!l)
    return false;
  ((ts_variant **)k->out[0]->data)[0] = &l->base;
  return true;
}

const ts_op_def ts__op_tensor_list_reserve = {
  .op = TS_OP_TENSOR_LIST_RESERVE, .name = "TensorListReserve",
  .api_name = "tensor_list_reserve", .n_inputs = 1, .n_outputs = 1,
  .flags = TS_OPF_ANY_DTYPE | TS_OPF_NOT_DIFFERENTIABLE, ATTRS(reserve_attrs),
  .infer = reserve_infer, .kernel[TS_DEVICE_CPU] = reserve_cpu,
};

/* ---- TensorListSetItem ----------------------------------------------------------- */

static bool set_item_infer(ts_infer_ctx *c)
{
  if (!check_list(c) || !check_int_scalar(c, 1, "index"))
    return false;
  if (c->in[2].dtype == TS_VARIANT)
    return ts__infer_fail(c, TS_ERR_DTYPE, "TensorArrays of TensorArrays are not supported");
  c->out[0] = (ts_info){ TS_VARIANT, TS_SCALAR_SHAPE };
  return true;
}

#define DTYPE_MISMATCH "cannot write a %s tensor to a TensorArray of %s"

static bool backed_by_variable(const ts_tensor *t)
{
  return t->is_variable || (t->base && t->base->is_variable);
}

/* The list's own reference to item: shared, or a copy of a variable's value. */
static ts_tensor *item_ref(ts_kernel_ctx *k, ts_tensor *item)
{
  if (!backed_by_variable(item))
    return ts_tensor_ref(item);
  ts_tensor *copy = ts__tensor_alloc_on(k->loc, k->backend, item->dtype, item->shape);
  if (copy)
    memcpy(copy->data, item->data, (size_t)item->size * ts_dtype_size(item->dtype));
  return ts_tensor_ref(copy);
}

static bool set_item_cpu(ts_kernel_ctx *k)
{
  const ta_list *l = input_list(k);
  int64_t index = ts__load_i64(k->in[1]->dtype, k->in[1]->data, 0);
  ts_tensor *item = k->in[2];
  if (!l)
    return false;
  if (item->dtype != l->dtype)
    return ts__kernel_fail(k, TS_ERR_DTYPE, DTYPE_MISMATCH, ts_dtype_name(item->dtype),
                           ts_dtype_name(l->dtype));
  if (!check_index(k, index))
    return false;
  if (index >= MAX_LIST_SIZE)
    return ts__kernel_fail(k, TS_ERR_OUT_OF_RANGE,
                           "index %" PRId64 " is too large (a TensorArray holds at most %" PRId64
                           " elements)", index, MAX_LIST_SIZE);
  /* writes past the end grow the list */
  ta_list *out = list_new(k, l->dtype, MAX(l->n, index + 1));
  if (!out)
    return false;
  ts_tensor *ref = item_ref(k, item);
  if (!ref) {
    list_destroy(&out->base);
    return false;
  }
  for (int64_t i = 0; i < l->n; i++)
    out->items[i] = i == index ? NULL : ts_tensor_ref(l->items[i]);
  out->items[index] = ref;
  ((ts_variant **)k->out[0]->data)[0] = &out->base;
  return true;
}

const ts_op_def ts__op_tensor_list_set_item = {
  .op = TS_OP_TENSOR_LIST_SET_ITEM, .name = "TensorListSetItem",
  .api_name = "tensor_list_set_item", .n_inputs = 3, .n_outputs = 1,
  .flags = TS_OPF_ANY_DTYPE, .infer = set_item_infer, .kernel[TS_DEVICE_CPU] = set_item_cpu,
};

/* ---- TensorListGetItem and TensorListStack ------------------------------------------- */

/* The element dtype and shape the wrapper found while tracing; the
 * kernels make their outputs from the list itself. */
static const ts_attr_def element_attrs[] = {
  { "element_dtype", TS_ATTR_DTYPE },
  { "element_shape", TS_ATTR_SHAPE },
};

static bool get_item_infer(ts_infer_ctx *c)
{
  if (!check_list(c) || !check_int_scalar(c, 1, "index"))
    return false;
  c->out[0] = (ts_info){ c->attrs[0].dtype, c->attrs[1].shape };
  return true;
}

static bool check_dtype(ts_kernel_ctx *k, const ta_list *l)
{
  if (l->dtype == k->attrs[0].dtype)
    return true;
  return ts__kernel_fail(k, TS_ERR_DTYPE, "the TensorArray holds %s elements, not %s",
                         ts_dtype_name(l->dtype), ts_dtype_name(k->attrs[0].dtype));
}

static bool check_written(ts_kernel_ctx *k, const ta_list *l, int64_t i, const char *why)
{
  if (l->items[i])
    return true;
  return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT,
                         "element %" PRId64 " of the TensorArray (size %" PRId64
                         ") was never written%s",
                         i, l->n, why);
}

static bool get_item_cpu(ts_kernel_ctx *k)
{
  const ta_list *l = input_list(k);
  int64_t index = ts__load_i64(k->in[1]->dtype, k->in[1]->data, 0);
  if (!l || !check_dtype(k, l) || !check_index(k, index))
    return false;
  if (index >= l->n)
    return ts__kernel_fail(k, TS_ERR_OUT_OF_RANGE,
                           "index %" PRId64 " is out of range for a TensorArray of size %" PRId64,
                           index, l->n);
  if (!check_written(k, l, index, ""))
    return false;
  ts_tensor *item = l->items[index];
  return (k->out[0] = ts__tensor_view(item, item->shape)) != NULL;
}

const ts_op_def ts__op_tensor_list_get_item = {
  .op = TS_OP_TENSOR_LIST_GET_ITEM, .name = "TensorListGetItem",
  .api_name = "tensor_list_get_item", .n_inputs = 2, .n_outputs = 1,
  .flags = TS_OPF_ANY_DTYPE | TS_OPF_ALIAS, ATTRS(element_attrs),
  .infer = get_item_infer, .kernel[TS_DEVICE_CPU] = get_item_cpu,
};

static bool stack_infer(ts_infer_ctx *c)
{
  if (!check_list(c))
    return false;
  ts_shape elem = c->attrs[1].shape;
  if (elem.rank >= TS_MAX_RANK)
    return ts__infer_fail(c, TS_ERR_SHAPE,
                          "elements of rank %d cannot be stacked (rank %d at most)", elem.rank,
                          TS_MAX_RANK - 1);
  ts_shape s = { .rank = elem.rank + 1, .dim = { -1 } };
  for (int i = 0; i < elem.rank; i++)
    s.dim[i + 1] = elem.dim[i];
  c->out[0] = (ts_info){ c->attrs[0].dtype, s };
  return true;
}

static bool stack_cpu(ts_kernel_ctx *k)
{
  const ta_list *l = input_list(k);
  if (!l || !check_dtype(k, l))
    return false;
  /* an empty list stacks to [0, element shape] (unknown dims as 0) */
  ts_shape elem = k->attrs[1].shape;
  for (int i = 0; i < elem.rank; i++)
    elem.dim[i] = MAX(elem.dim[i], 0);
  for (int64_t i = 0; i < l->n; i++) {
    if (!check_written(k, l, i, "; stack needs every element"))
      return false;
    ts_shape s = l->items[i]->shape;
    if (i == 0 && s.rank >= TS_MAX_RANK)
      return ts__kernel_fail(k, TS_ERR_SHAPE, "elements of rank %d cannot be stacked", s.rank);
    if (i > 0 && !ts_shape_equal(s, elem)) {
      char a[TS_INFO_STR], b[TS_INFO_STR];
      return ts__kernel_fail(k, TS_ERR_SHAPE,
                             "element %" PRId64 " has shape %s but element 0 has %s; stacking "
                             "needs equal shapes",
                             i, ts__shape_str(a, s), ts__shape_str(b, elem));
    }
    elem = s;
  }
  ts_shape shape = { .rank = elem.rank + 1, .dim = { l->n } };
  for (int i = 0; i < elem.rank; i++)
    shape.dim[i + 1] = elem.dim[i];
  ts_tensor *out = ts__tensor_alloc_on(k->loc, k->backend, l->dtype, shape);
  if (!out)
    return false;
  int64_t per = ts_shape_size(elem);
  size_t bytes = (size_t)per * ts_dtype_size(l->dtype);
  for (int64_t i = 0; i < l->n; i++) {
    const ts_tensor *item = l->items[i];
    if (l->dtype != TS_STRING) {
      memcpy((char *)out->data + (size_t)i * bytes, item->data, bytes);
      continue;
    }
    for (int64_t j = 0; j < per; j++) {
      const char *str = ((char *const *)item->data)[j];
      ((char **)out->data)[i * per + j] = strdup(str ? str : "");
    }
  }
  k->out[0] = out;
  return true;
}

const ts_op_def ts__op_tensor_list_stack = {
  .op = TS_OP_TENSOR_LIST_STACK, .name = "TensorListStack",
  .api_name = "tensor_list_stack", .n_inputs = 1, .n_outputs = 1,
  .flags = TS_OPF_ANY_DTYPE | TS_OPF_ALIAS, ATTRS(element_attrs),
  .infer = stack_infer, .kernel[TS_DEVICE_CPU] = stack_cpu,
};

/* ---- the element type of a list, for the wrappers -------------------------------- */

void ts__list_elem_merge(ts_list_elem *e, ts_dtype dtype, const ts_shape *shape)
{
  if (!e->has_dtype) {
    e->dtype = dtype;
    e->has_dtype = true;
  }
  if (!shape)
    return;
  /* Dims that differ between writes become unknown; a write of another
   * rank keeps the first one found (the latest write). */
  if (!e->has_shape) {
    e->shape = *shape;
    e->has_shape = true;
  } else if (e->shape.rank == shape->rank) {
    for (int i = 0; i < shape->rank; i++)
      if (e->shape.dim[i] != shape->dim[i])
        e->shape.dim[i] = -1;
  }
}

bool ts__list_elem_of_value(const ts_tensor *list, ts_list_elem *e)
{
  const ta_list *l = list && list->dtype == TS_VARIANT && list->size == 1 && list->data
                       ? list_of(list) : NULL;
  if (!l)
    return false;
  ts__list_elem_merge(e, l->dtype, NULL);
  for (int64_t i = 0; i < l->n && !e->has_shape; i++)
    if (l->items[i])
      ts__list_elem_merge(e, l->dtype, &l->items[i]->shape);
  return true;
}

/* A list's element dtype and shape: from the list itself, or while
 * tracing from the handler that knows the graph (the tracer). */
static ts_list_elem element_type(const ts_tensor *ta)
{
  ts_list_elem e = { 0 };
  if (ta->dtype != TS_VARIANT || ta->shape.rank != 0)
    return e;
  if (!ta->node) {
    ts__list_elem_of_value(ta, &e); /* else the kernel reports it */
    return e;
  }
  for (ts_op_handler *h = ts__handler_top(); h; h = h->below)
    if (h->list_elem && h->list_elem(h, ta, &e))
      break;
  return e;
}

/* ---- public wrappers -------------------------------------------------------------- */

ts_tensor *ts_tensor_array_at(ts_loc loc, ts_dtype dtype, ts_tensor *size)
{
  ts_attr attrs[] = { TS_ATTR_DT(dtype) };
  return ts__dispatch1(loc, TS_OP_TENSOR_LIST_RESERVE, &size, 1, attrs);
}

ts_tensor *ts_tensor_array_write_at(ts_loc loc, ts_tensor *ta, ts_tensor *index, ts_tensor *value)
{
  if (ta && value) {
    /* while tracing, catch a dtype mismatch now rather than at run time */
    ts_list_elem e = element_type(ta);
    if (e.has_dtype && e.dtype != value->dtype) {
      ts__op_fail(loc, &ts__op_tensor_list_set_item, TS_ERR_DTYPE, DTYPE_MISMATCH,
                  ts_dtype_name(value->dtype), ts_dtype_name(e.dtype));
      return NULL;
    }
  }
  ts_tensor *in[3] = { ta, index, value };
  return ts__dispatch1(loc, TS_OP_TENSOR_LIST_SET_ITEM, in, 3, NULL);
}

/* Dispatches a read or a stack with the element type as attributes. */
static ts_tensor *element_op(ts_loc loc, ts_op op, ts_tensor *const *in, int n_in)
{
  ts_tensor *ta = in[0];
  ts_list_elem e = { 0 };
  if (ta && ta->dtype == TS_VARIANT) {
    e = element_type(ta);
    if (!e.has_dtype && ta->node) {
      ts__op_fail(loc, ts__op_def(op), TS_ERR_INVALID_ARGUMENT,
                  "cannot tell the element dtype of this TensorArray while tracing: it enters "
                  "a loop, a branch or the function as an input, and the traced code holds "
                  "TensorArrays of several dtypes (or none); read it where it is written, or "
                  "keep one dtype per function");
      return NULL;
    }
  }
  /* never written anywhere: reads fail when run, stacks give [0] */
  ts_attr attrs[] = { TS_ATTR_DT(e.dtype), TS_ATTR_SH(e.has_shape ? e.shape : TS_SCALAR_SHAPE) };
  return ts__dispatch1(loc, op, in, n_in, attrs);
}

ts_tensor *ts_tensor_array_read_at(ts_loc loc, ts_tensor *ta, ts_tensor *index)
{
  ts_tensor *in[2] = { ta, index };
  return element_op(loc, TS_OP_TENSOR_LIST_GET_ITEM, in, 2);
}

ts_tensor *ts_tensor_array_stack_at(ts_loc loc, ts_tensor *ta)
{
  return element_op(loc, TS_OP_TENSOR_LIST_STACK, &ta, 1);
}
