/* ops/list.c — TensorArray as TensorFlow's TensorList ops: TensorListReserve,
 * TensorListSetItem, TensorListGetItem and TensorListStack; and the rows
 * that make lists sequences (ONNX's Sequence ops): TensorListLength,
 * TensorListInsert, TensorListErase and TensorListConcat.
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
  l->base = (ts_variant){ .refcount = 1, .destroy = list_destroy, .kind = "TensorList" };
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

/* ---- the sequence rows: length, insert, erase, concat ------------------------------ */

static bool length_infer(ts_infer_ctx *c)
{
  if (!check_list(c))
    return false;
  c->out[0] = (ts_info){ TS_I64, TS_SCALAR_SHAPE };
  return true;
}

static bool length_cpu(ts_kernel_ctx *k)
{
  const ta_list *l = input_list(k);
  if (!l)
    return false;
  ((int64_t *)k->out[0]->data)[0] = l->n;
  return true;
}

const ts_op_def ts__op_tensor_list_length = {
  .op = TS_OP_TENSOR_LIST_LENGTH, .name = "TensorListLength",
  .api_name = "tensor_list_length", .n_inputs = 1, .n_outputs = 1,
  .flags = TS_OPF_ANY_DTYPE | TS_OPF_NOT_DIFFERENTIABLE,
  .infer = length_infer, .kernel[TS_DEVICE_CPU] = length_cpu,
};

/* index (negative: from the end) as a position in [0, n) — or [0, n] for
 * an insert, where n appends.  false + error naming the range. */
static bool resolve_index(ts_kernel_ctx *k, int64_t n, bool insert, int64_t *index)
{
  int64_t i = *index, top = insert ? n : n - 1;
  if (i >= -n && i <= top) {
    *index = i < 0 ? i + n : i;
    return true;
  }
  if (n == 0 && !insert)
    return ts__kernel_fail(k, TS_ERR_OUT_OF_RANGE, "index %" PRId64 " is out of range: the list is empty", i);
  return ts__kernel_fail(k, TS_ERR_OUT_OF_RANGE,
                         "index %" PRId64 " is out of range for a list of %" PRId64
                         " elements (from %" PRId64 " to %" PRId64 ")", i, n, -n, top);
}

/* A copy of l's item pointers with `at` removed (erase) or a hole at `at`
 * (insert): the new list, NULL + error. */
static ta_list *list_edit(ts_kernel_ctx *k, const ta_list *l, int64_t at, bool insert)
{
  ta_list *out = list_new(k, l->dtype, insert ? l->n + 1 : l->n - 1);
  if (!out)
    return NULL;
  for (int64_t i = 0, j = 0; i < l->n; i++) {
    if (i == at && !insert)
      continue;
    j += i == at && insert;
    out->items[j++] = l->items[i] ? ts_tensor_ref(l->items[i]) : NULL;
  }
  return out;
}

static bool insert_infer(ts_infer_ctx *c) { return set_item_infer(c); }

static bool insert_cpu(ts_kernel_ctx *k)
{
  const ta_list *l = input_list(k);
  int64_t index = ts__load_i64(k->in[1]->dtype, k->in[1]->data, 0);
  ts_tensor *item = k->in[2];
  if (!l)
    return false;
  if (item->dtype != l->dtype)
    return ts__kernel_fail(k, TS_ERR_DTYPE, DTYPE_MISMATCH, ts_dtype_name(item->dtype),
                           ts_dtype_name(l->dtype));
  if (!resolve_index(k, l->n, true, &index))
    return false;
  if (l->n >= MAX_LIST_SIZE)
    return ts__kernel_fail(k, TS_ERR_OUT_OF_RANGE,
                           "the list already holds %" PRId64 " elements, the most it may", l->n);
  ta_list *out = list_edit(k, l, index, true);
  ts_tensor *ref = out ? item_ref(k, item) : NULL;
  if (!ref) {
    if (out)
      list_destroy(&out->base);
    return false;
  }
  out->items[index] = ref;
  ((ts_variant **)k->out[0]->data)[0] = &out->base;
  return true;
}

const ts_op_def ts__op_tensor_list_insert = {
  .op = TS_OP_TENSOR_LIST_INSERT, .name = "TensorListInsert",
  .api_name = "tensor_list_insert", .n_inputs = 3, .n_outputs = 1,
  .flags = TS_OPF_ANY_DTYPE, .infer = insert_infer, .kernel[TS_DEVICE_CPU] = insert_cpu,
};

static bool erase_infer(ts_infer_ctx *c)
{
  if (!check_list(c) || !check_int_scalar(c, 1, "index"))
    return false;
  c->out[0] = (ts_info){ TS_VARIANT, TS_SCALAR_SHAPE };
  return true;
}

static bool erase_cpu(ts_kernel_ctx *k)
{
  const ta_list *l = input_list(k);
  int64_t index = ts__load_i64(k->in[1]->dtype, k->in[1]->data, 0);
  if (!l || !resolve_index(k, l->n, false, &index))
    return false;
  ta_list *out = list_edit(k, l, index, false);
  if (!out)
    return false;
  ((ts_variant **)k->out[0]->data)[0] = &out->base;
  return true;
}

const ts_op_def ts__op_tensor_list_erase = {
  .op = TS_OP_TENSOR_LIST_ERASE, .name = "TensorListErase",
  .api_name = "tensor_list_erase", .n_inputs = 2, .n_outputs = 1,
  .flags = TS_OPF_ANY_DTYPE, .infer = erase_infer, .kernel[TS_DEVICE_CPU] = erase_cpu,
};

/* TensorListConcat: the element dtype and shape as for a stack, and the axis. */
static const ts_attr_def concat_attrs[] = {
  { "element_dtype", TS_ATTR_DTYPE },
  { "element_shape", TS_ATTR_SHAPE },
  { "axis", TS_ATTR_INT },
};

static bool concat_infer(ts_infer_ctx *c)
{
  if (!check_list(c))
    return false;
  ts_shape s = c->attrs[1].shape;
  int64_t axis = c->attrs[2].i;
  if (s.rank != TS_RANK_UNKNOWN) {
    if (axis < -s.rank || axis >= s.rank)
      return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "axis %" PRId64 " is out of range for elements of rank %d",
                            axis, s.rank);
    s.dim[axis < 0 ? axis + s.rank : axis] = -1;
  }
  c->out[0] = (ts_info){ c->attrs[0].dtype, s };
  return true;
}

/* Copies n elements of src from offset from to dst at offset to (strings duplicated). */
static void copy_elements(ts_tensor *dst, int64_t to, const ts_tensor *src, int64_t from, int64_t n)
{
  if (dst->dtype != TS_STRING) {
    size_t size = ts_dtype_size(dst->dtype);
    memcpy((char *)dst->data + (size_t)to * size, (const char *)src->data + (size_t)from * size,
           (size_t)n * size);
    return;
  }
  for (int64_t j = 0; j < n; j++) {
    const char *str = ((char *const *)src->data)[from + j];
    ((char **)dst->data)[to + j] = strdup(str ? str : "");
  }
}

static bool concat_cpu(ts_kernel_ctx *k)
{
  const ta_list *l = input_list(k);
  if (!l || !check_dtype(k, l))
    return false;
  /* the result's shape: element 0's, its axis the sum of every element's */
  ts_shape shape = k->attrs[1].shape;
  if (l->n == 0 && shape.rank == TS_RANK_UNKNOWN)
    return ts__kernel_fail(k, TS_ERR_SHAPE, "the list is empty and its elements' shape is unknown");
  for (int64_t i = 0; i < l->n; i++)
    if (!check_written(k, l, i, "; concat needs every element"))
      return false;
  if (l->n)
    shape = l->items[0]->shape;
  int64_t axis = k->attrs[2].i;
  if (axis < -shape.rank || axis >= shape.rank)
    return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT, "axis %" PRId64 " is out of range for elements of rank %d",
                           axis, shape.rank);
  axis = axis < 0 ? axis + shape.rank : axis;
  for (int d = 0; d < shape.rank; d++)
    shape.dim[d] = MAX(shape.dim[d], 0);
  shape.dim[axis] = 0;
  for (int64_t i = 0; i < l->n; i++) {
    ts_shape s = l->items[i]->shape;
    bool fits = s.rank == shape.rank;
    for (int d = 0; fits && d < s.rank; d++)
      fits = d == axis || s.dim[d] == shape.dim[d];
    if (!fits) {
      char a[TS_INFO_STR], b[TS_INFO_STR];
      return ts__kernel_fail(k, TS_ERR_SHAPE,
                             "element %" PRId64 " has shape %s but element 0 has %s; concat along "
                             "axis %" PRId64 " needs the other dims equal",
                             i, ts__shape_str(a, s), ts__shape_str(b, l->items[0]->shape), axis);
    }
    if (s.dim[axis] > INT64_MAX - shape.dim[axis]) /* elements of no size may have any dims */
      return ts__kernel_fail(k, TS_ERR_SHAPE, "the concatenated axis %" PRId64 " overflows", axis);
    shape.dim[axis] += s.dim[axis];
  }
  ts_tensor *out = ts__tensor_alloc_on(k->loc, k->backend, l->dtype, shape);
  if (!out)
    return false;
  /* each element's rows of `inner` elements land at the rows' running offset */
  int64_t outer = ts__dims_prod(shape, 0, axis), inner = ts__dims_prod(shape, axis + 1, shape.rank);
  int64_t offset = 0;
  for (int64_t i = 0; i < l->n; i++) {
    int64_t rows = l->items[i]->shape.dim[axis] * inner;
    for (int64_t o = 0; o < outer && rows; o++)
      copy_elements(out, o * shape.dim[axis] * inner + offset, l->items[i], o * rows, rows);
    offset += rows;
  }
  k->out[0] = out;
  return true;
}

const ts_op_def ts__op_tensor_list_concat = {
  .op = TS_OP_TENSOR_LIST_CONCAT, .name = "TensorListConcat",
  .api_name = "tensor_list_concat", .n_inputs = 1, .n_outputs = 1,
  .flags = TS_OPF_ANY_DTYPE | TS_OPF_ALIAS, ATTRS(concat_attrs),
  .infer = concat_infer, .kernel[TS_DEVICE_CPU] = concat_cpu,
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
  if (!list || list->dtype != TS_VARIANT || list->size != 1 || !list->data)
    return false;
  const ta_list *l = list_of(list);
  if (!l)
    return ts__optional_elem_of_value(list, e);
  ts__list_elem_merge(e, l->dtype, NULL);
  for (int64_t i = 0; i < l->n && !e->has_shape; i++)
    if (l->items[i])
      ts__list_elem_merge(e, l->dtype, &l->items[i]->shape);
  return true;
}

ts_list_elem ts__variant_elem_type(const ts_tensor *v)
{
  ts_list_elem e = { 0 };
  if (v->dtype != TS_VARIANT || v->shape.rank != 0)
    return e;
  if (!v->node) {
    ts__list_elem_of_value(v, &e); /* else the kernel reports it */
    return e;
  }
  for (ts_op_handler *h = ts__handler_top(); h; h = h->below)
    if (h->list_elem && h->list_elem(h, v, &e))
      break;
  return e;
}

/* ---- public wrappers -------------------------------------------------------------- */

ts_tensor *ts_tensor_array_at(ts_loc loc, ts_dtype dtype, ts_tensor *size)
{
  ts_attr attrs[] = { TS_ATTR_DT(dtype) };
  return ts__dispatch1(loc, TS_OP_TENSOR_LIST_RESERVE, &size, 1, attrs);
}

/* A set or an insert of value at index: while tracing, a dtype mismatch
 * is caught now rather than at run time. */
static ts_tensor *put_item(ts_loc loc, const ts_op_def *def, ts_tensor *ta, ts_tensor *index,
                           ts_tensor *value)
{
  if (ta && value) {
    ts_list_elem e = ts__variant_elem_type(ta);
    if (e.has_dtype && e.dtype != value->dtype) {
      ts__op_fail(loc, def, TS_ERR_DTYPE, DTYPE_MISMATCH, ts_dtype_name(value->dtype),
                  ts_dtype_name(e.dtype));
      return NULL;
    }
  }
  ts_tensor *in[3] = { ta, index, value };
  return ts__dispatch1(loc, def->op, in, 3, NULL);
}

ts_tensor *ts_tensor_array_write_at(ts_loc loc, ts_tensor *ta, ts_tensor *index, ts_tensor *value)
{
  return put_item(loc, &ts__op_tensor_list_set_item, ta, index, value);
}

/* Dispatches a read, a stack, a concat (axis) or an optional's get with
 * the element type as attributes: what the graph says, and the hint (what
 * the caller knows: the ONNX importer, from the model's types) where the
 * graph says nothing or guessed another dtype. */
ts_tensor *ts__element_op(ts_loc loc, ts_op op, ts_tensor *const *in, int n_in,
                          const ts_list_elem *hint, int64_t axis)
{
  ts_tensor *ta = in[0];
  ts_list_elem e = { 0 };
  if (ta && ta->dtype == TS_VARIANT) {
    e = ts__variant_elem_type(ta);
    if (hint && hint->has_dtype && (!e.has_dtype || e.dtype != hint->dtype))
      e = (ts_list_elem){ .has_dtype = true, .dtype = hint->dtype };
    if (!e.has_shape && hint && hint->has_shape && hint->dtype == e.dtype)
      e.shape = hint->shape, e.has_shape = true;
    if (!e.has_dtype && ta->node) {
      ts__op_fail(loc, ts__op_def(op), TS_ERR_INVALID_ARGUMENT,
                  op == TS_OP_OPTIONAL_GET_VALUE
                    ? "cannot tell the dtype of this optional's value while tracing: it enters a "
                      "loop, a branch or the function as an input, or holds nothing"
                    : "cannot tell the element dtype of this TensorArray while tracing: it enters "
                      "a loop, a branch or the function as an input, and the traced code holds "
                      "TensorArrays of several dtypes (or none); read it where it is written, or "
                      "keep one dtype per function");
      return NULL;
    }
  }
  /* never written anywhere: reads fail when run, stacks give [0] */
  ts_attr attrs[] = { TS_ATTR_DT(e.dtype), TS_ATTR_SH(e.has_shape ? e.shape : TS_SCALAR_SHAPE),
                      TS_ATTR_I(axis) };
  return ts__dispatch1(loc, op, in, n_in, attrs);
}

ts_tensor *ts_tensor_array_read_at(ts_loc loc, ts_tensor *ta, ts_tensor *index)
{
  ts_tensor *in[2] = { ta, index };
  return ts__element_op(loc, TS_OP_TENSOR_LIST_GET_ITEM, in, 2, NULL, 0);
}

ts_tensor *ts_tensor_array_stack_at(ts_loc loc, ts_tensor *ta)
{
  return ts__element_op(loc, TS_OP_TENSOR_LIST_STACK, &ta, 1, NULL, 0);
}

ts_tensor *ts_tensor_list_length_at(ts_loc loc, ts_tensor *ta)
{
  return ts__dispatch1(loc, TS_OP_TENSOR_LIST_LENGTH, &ta, 1, NULL);
}

ts_tensor *ts_tensor_list_insert_at(ts_loc loc, ts_tensor *ta, ts_tensor *index, ts_tensor *value)
{
  return put_item(loc, &ts__op_tensor_list_insert, ta, index, value);
}

ts_tensor *ts_tensor_list_erase_at(ts_loc loc, ts_tensor *ta, ts_tensor *index)
{
  ts_tensor *in[2] = { ta, index };
  return ts__dispatch1(loc, TS_OP_TENSOR_LIST_ERASE, in, 2, NULL);
}

ts_tensor *ts_tensor_list_concat_at(ts_loc loc, ts_tensor *ta, int axis)
{
  return ts__element_op(loc, TS_OP_TENSOR_LIST_CONCAT, &ta, 1, NULL, axis);
}

/* ---- list values, for tools ---------------------------------------------------------- */

static const ta_list *value_list(const ts_tensor *t)
{
  return t && t->dtype == TS_VARIANT && t->size == 1 && t->data && !t->node ? list_of(t) : NULL;
}

int64_t ts_tensor_list_size(const ts_tensor *t)
{
  const ta_list *l = value_list(t);
  return l ? l->n : -1;
}

ts_tensor *ts_tensor_list_item(const ts_tensor *t, int64_t i)
{
  const ta_list *l = value_list(t);
  return l && i >= 0 && i < l->n ? l->items[i] : NULL;
}
