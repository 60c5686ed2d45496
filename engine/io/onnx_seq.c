/* onnx_seq.c — ONNX's sequence and optional ops as the engine's TensorList
 * and Optional rows (ops/list.c, ops/optional.c).  A sequence is a
 * TensorList variant, an optional an Optional variant; what their elements
 * are while tracing comes from the graph (what wrote them) or, where the
 * graph cannot tell (a graph input), from the model's types (onnx_value.type). */
#include "onnx-private.h"

#include <inttypes.h>
#include <string.h>

/* Pieces SplitToSequence makes: each is a slice and a write in the graph. */
#define MAX_SPLIT_PIECES 65536

#define IN(i) ((i) < c->n_in ? c->in[i].t : NULL)

static const Onnx__AttributeProto *attr(const onnx_node_ctx *c, const char *name)
{
  for (size_t i = 0; i < c->node->n_attribute; i++)
    if (strcmp(c->node->attribute[i]->name, name) == 0)
      return c->node->attribute[i];
  return NULL;
}

static int64_t attr_int(const onnx_node_ctx *c, const char *name, int64_t def)
{
  const Onnx__AttributeProto *a = attr(c, name);
  return a ? a->i : def;
}

/* ---- types ------------------------------------------------------------------------ */

static bool tensor_hint(const Onnx__TypeProto__Tensor *tt, ts_list_elem *out)
{
  ts_dtype dtype;
  if (!tt || !tt->has_elem_type || !onnx_dtype(tt->elem_type, &dtype))
    return false;
  *out = (ts_list_elem){ .has_dtype = true, .dtype = dtype, .has_shape = true,
                         .shape = { .rank = TS_RANK_UNKNOWN } };
  if (tt->shape && tt->shape->n_dim <= TS_MAX_RANK) {
    out->shape.rank = (int)tt->shape->n_dim;
    for (size_t d = 0; d < tt->shape->n_dim; d++) {
      const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
      bool known = dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                   dim->dim_value >= 0;
      out->shape.dim[d] = known ? dim->dim_value : -1;
    }
  }
  return true;
}

bool onnx_value_hint(const Onnx__TypeProto *t, ts_list_elem *out)
{
  if (t && t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
    return tensor_hint(t->tensor_type, out);
  if (t && (t->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ||
            t->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE)) {
    *out = (ts_list_elem){ .has_dtype = true, .dtype = TS_VARIANT, .has_shape = true, .shape = TS_SCALAR_SHAPE };
    return true;
  }
  return false;
}

bool onnx_elem_hint(const Onnx__TypeProto *t, ts_list_elem *out)
{
  if (t && t->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && t->sequence_type)
    return onnx_value_hint(t->sequence_type->elem_type, out);
  if (t && t->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && t->optional_type)
    return onnx_value_hint(t->optional_type->elem_type, out);
  return false;
}

/* depth: an optional holds a sequence holds tensors, no deeper. */
static bool type_supported(const Onnx__TypeProto *t, const char **what, int32_t *data_type, int depth)
{
  *what = "non-tensor type";
  if (!t || depth > 2)
    return false;
  switch (t->value_case) {
  case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: {
    ts_dtype dtype;
    if (!t->tensor_type || !t->tensor_type->has_elem_type)
      return true; /* untyped: what runs decides */
    *data_type = t->tensor_type->elem_type;
    *what = "dtype";
    return onnx_dtype(t->tensor_type->elem_type, &dtype);
  }
  case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: {
    /* a sequence of tensors (TensorLists hold no TensorLists) */
    const Onnx__TypeProto *e = t->sequence_type ? t->sequence_type->elem_type : NULL;
    if (!e || e->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
      return false;
    return type_supported(e, what, data_type, depth + 1);
  }
  case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: {
    const Onnx__TypeProto *e = t->optional_type ? t->optional_type->elem_type : NULL;
    if (!e || e->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE)
      return false;
    return type_supported(e, what, data_type, depth + 1);
  }
  default: return false; /* maps, sparse tensors */
  }
}

bool onnx_type_supported(const Onnx__TypeProto *t, const char **what, int32_t *data_type)
{
  *data_type = 0;
  return type_supported(t, what, data_type, 0);
}

/* Input i as an int64 scalar (a position): the tensor, or NULL + error. */
static ts_tensor *position(const onnx_node_ctx *c, int i)
{
  ts_tensor *p = IN(i);
  if (!p)
    return NULL;
  if (ts_tensor_size(p) != 1 || !ts_dtype_is_integer(ts_tensor_dtype(p))) {
    char *s = ts_shape_dtype_string(ts_tensor_dtype(p), ts_tensor_shape(p));
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "the position must be one integer, got %s", s);
    free(s);
    return NULL;
  }
  return ts_reshape_at(c->loc, ts_cast_at(c->loc, p, TS_I64), TS_SCALAR_SHAPE);
}

static bool need_sequence(const onnx_node_ctx *c, int i)
{
  ts_tensor *t = IN(i);
  if (t && ts_tensor_dtype(t) == TS_VARIANT)
    return true;
  if (t) {
    char *s = ts_shape_dtype_string(ts_tensor_dtype(t), ts_tensor_shape(t));
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "input %d must be a sequence, got a tensor %s", i, s);
    free(s);
  } else
    onnx_node_fail(c, TS_ERR_FORMAT, "input %d (a sequence) is missing", i);
  return false;
}

/* ---- the sequence ops -------------------------------------------------------------- */

bool onnx_op_sequence_empty(onnx_node_ctx *c)
{
  int32_t data_type = (int32_t)attr_int(c, "dtype", 1 /* float */);
  ts_dtype dtype;
  if (!onnx_dtype(data_type, &dtype)) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "dtype %s is not one the engine has", onnx_dtype_name(data_type));
    return false;
  }
  return (c->out[0] = ts_tensor_array_at(c->loc, dtype, ts_scalar_i64(0))) != NULL;
}

bool onnx_op_sequence_construct(onnx_node_ctx *c)
{
  for (int i = 0; i < c->n_in; i++)
    if (!IN(i)) {
      onnx_node_fail(c, TS_ERR_FORMAT, "input %d is missing", i);
      return false;
    }
  ts_tensor *seq = ts_tensor_array_at(c->loc, ts_tensor_dtype(IN(0)), ts_scalar_i64(c->n_in));
  for (int i = 0; i < c->n_in && seq; i++)
    seq = ts_tensor_array_write_at(c->loc, seq, ts_scalar_i64(i), IN(i));
  return (c->out[0] = seq) != NULL;
}

bool onnx_op_sequence_insert(onnx_node_ctx *c)
{
  if (!need_sequence(c, 0) || !IN(1))
    return false;
  /* no position: at the end */
  ts_tensor *at = IN(2) ? position(c, 2) : ts_tensor_list_length_at(c->loc, IN(0));
  return at && (c->out[0] = ts_tensor_list_insert_at(c->loc, IN(0), at, IN(1))) != NULL;
}

bool onnx_op_sequence_erase(onnx_node_ctx *c)
{
  if (!need_sequence(c, 0))
    return false;
  ts_tensor *at = IN(1) ? position(c, 1) : ts_scalar_i64(-1); /* no position: the last */
  return at && (c->out[0] = ts_tensor_list_erase_at(c->loc, IN(0), at)) != NULL;
}

bool onnx_op_sequence_at(onnx_node_ctx *c)
{
  if (!need_sequence(c, 0))
    return false;
  ts_tensor *at = position(c, 1);
  if (!at)
    return false;
  /* a position from the end counts from the length; one before the
   * start stays negative, which the read refuses */
  ts_tensor *n = ts_tensor_list_length_at(c->loc, IN(0));
  ts_tensor *from_end = ts_logical_and_at(c->loc, ts_less_at(c->loc, at, ts_scalar_i64(0)),
                                          ts_greater_equal_at(c->loc, ts_add_at(c->loc, at, n), ts_scalar_i64(0)));
  at = ts_where_at(c->loc, from_end, ts_add_at(c->loc, at, n), at);
  ts_list_elem hint;
  bool hinted = onnx_elem_hint(c->in[0].type, &hint);
  ts_tensor *in[2] = { IN(0), at };
  return (c->out[0] = ts__element_op(c->loc, TS_OP_TENSOR_LIST_GET_ITEM, in, 2, hinted ? &hint : NULL, 0)) != NULL;
}

bool onnx_op_sequence_length(onnx_node_ctx *c)
{
  return need_sequence(c, 0) && (c->out[0] = ts_tensor_list_length_at(c->loc, IN(0))) != NULL;
}

/* SplitToSequence: pieces of the split's sizes (a scalar: pieces of that
 * size, the last smaller; none: pieces of 1, without the axis unless
 * keepdims) along axis, whose length must be known when the graph is built. */
bool onnx_op_split_to_sequence(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0), *split = IN(1);
  if (!x)
    return false;
  int rank = ts_tensor_rank(x);
  int64_t axis = attr_int(c, "axis", 0);
  bool keepdims = attr_int(c, "keepdims", 1) != 0;
  if (axis < -rank || axis >= rank) {
    onnx_node_fail(c, TS_ERR_OUT_OF_RANGE, "axis %" PRId64 " is out of range for rank %d", axis, rank);
    return false;
  }
  axis = axis < 0 ? axis + rank : axis;
  int64_t len = ts_tensor_dim(x, (int)axis);
  if (len < 0) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "the length of axis %" PRId64 " must be known when the graph is built", axis);
    return false;
  }
  ts_tensor *sizes = split ? c->in[1].host : NULL;
  if (split && (!sizes || !ts_dtype_is_integer(ts_tensor_dtype(sizes)) || ts_tensor_rank(sizes) > 1)) {
    onnx_node_fail(c, TS_ERR_UNIMPLEMENTED, "split must be integers known when the graph is built");
    return false;
  }
  bool scalar = !sizes || ts_tensor_rank(sizes) == 0;
  int64_t chunk = !sizes ? 1 : scalar ? ts_tensor_get_i64(sizes, 0) : 0;
  int64_t n = scalar ? (chunk > 0 ? (len + chunk - 1) / chunk : -1) : ts_tensor_size(sizes);
  if (scalar && chunk <= 0) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "split %" PRId64 " is not positive", chunk);
    return false;
  }
  if (n > MAX_SPLIT_PIECES) {
    onnx_node_fail(c, TS_ERR_OUT_OF_RANGE, "%" PRId64 " pieces; the importer makes at most %d", n, MAX_SPLIT_PIECES);
    return false;
  }
  int64_t total = 0;
  for (int64_t i = 0; i < n && !scalar; i++) {
    int64_t s = ts_tensor_get_i64(sizes, i);
    if (s < 0 || s > len - total) {
      onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "the split sizes must be non-negative and add up to %" PRId64, len);
      return false;
    }
    total += s;
  }
  if (!scalar && total != len) {
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "the split sizes add up to %" PRId64 ", not %" PRId64, total, len);
    return false;
  }
  ts_tensor *seq = ts_tensor_array_at(c->loc, ts_tensor_dtype(x), ts_scalar_i64(n));
  ts_shape squeezed = ts_tensor_shape(x);
  for (int d = (int)axis; d + 1 < rank; d++)
    squeezed.dim[d] = squeezed.dim[d + 1];
  squeezed.rank = rank - 1;
  int64_t at = 0;
  for (int64_t i = 0; i < n && seq; i++) {
    int64_t size = scalar ? MIN(chunk, len - at) : ts_tensor_get_i64(sizes, i);
    ts_ints begin = { .n = rank }, extent = { .n = rank };
    for (int d = 0; d < rank; d++) {
      begin.v[d] = d == axis ? at : 0;
      extent.v[d] = d == axis ? size : -1;
    }
    ts_tensor *piece = ts_slice_at(c->loc, x, begin, extent);
    if (!split && !keepdims)
      piece = ts_reshape_at(c->loc, piece, squeezed);
    seq = ts_tensor_array_write_at(c->loc, seq, ts_scalar_i64(i), piece);
    at += size;
  }
  return (c->out[0] = seq) != NULL;
}

/* ConcatFromSequence: the elements joined along axis, or stacked on a new
 * axis there (new_axis: axis may then be the rank, -rank - 1 the first). */
bool onnx_op_concat_from_sequence(onnx_node_ctx *c)
{
  if (!need_sequence(c, 0))
    return false;
  int64_t axis = attr_int(c, "axis", INT64_MIN);
  bool new_axis = attr_int(c, "new_axis", 0) != 0;
  if (axis == INT64_MIN) {
    onnx_node_fail(c, TS_ERR_FORMAT, "attribute 'axis' is required");
    return false;
  }
  ts_list_elem hint;
  bool hinted = onnx_elem_hint(c->in[0].type, &hint);
  if (!new_axis) {
    if (axis < INT32_MIN || axis > INT32_MAX) {
      onnx_node_fail(c, TS_ERR_OUT_OF_RANGE, "axis %" PRId64 " is out of range", axis);
      return false;
    }
    ts_tensor *seq = IN(0);
    return (c->out[0] = ts__element_op(c->loc, TS_OP_TENSOR_LIST_CONCAT, &seq, 1, hinted ? &hint : NULL, axis)) != NULL;
  }
  ts_tensor *seq = IN(0);
  ts_tensor *y = ts__element_op(c->loc, TS_OP_TENSOR_LIST_STACK, &seq, 1, hinted ? &hint : NULL, 0);
  if (!y)
    return false;
  int rank = ts_tensor_rank(y);
  if (rank == TS_RANK_UNKNOWN || axis < -rank || axis >= rank) {
    onnx_node_fail(c, TS_ERR_OUT_OF_RANGE, "axis %" PRId64 " is out of range for elements of rank %d (or the rank is unknown)",
                   axis, rank - 1);
    return false;
  }
  axis = axis < 0 ? axis + rank : axis;
  if (axis == 0)
    return (c->out[0] = y) != NULL;
  ts_ints perm = { .n = rank }; /* the stacked axis 0 moved to axis */
  for (int d = 0; d < rank; d++)
    perm.v[d] = d < axis ? d + 1 : d == axis ? 0 : d;
  return (c->out[0] = ts_transpose_at(c->loc, y, perm)) != NULL;
}

/* ---- the optional ops -------------------------------------------------------------- */

bool onnx_op_optional(onnx_node_ctx *c)
{
  ts_tensor *x = IN(0);
  if (!x && !attr(c, "type")) {
    onnx_node_fail(c, TS_ERR_FORMAT, "an Optional without an input needs attribute 'type'");
    return false;
  }
  c->out[0] = x ? ts_optional_from_value_at(c->loc, x) : ts_optional_none_at(c->loc);
  return c->out[0] != NULL;
}

static bool need_optional(const onnx_node_ctx *c)
{
  ts_tensor *t = IN(0);
  if (t && ts_tensor_dtype(t) == TS_VARIANT)
    return true;
  if (t) {
    char *s = ts_shape_dtype_string(ts_tensor_dtype(t), ts_tensor_shape(t));
    onnx_node_fail(c, TS_ERR_INVALID_ARGUMENT, "input 0 must be an optional, got a tensor %s", s);
    free(s);
  } else
    onnx_node_fail(c, TS_ERR_FORMAT, "input 0 (an optional) is missing");
  return false;
}

/* From opset 18 the two take a plain tensor too (there, and itself), and
 * OptionalHasElement no input (absent). */
static bool plain_tensor(const onnx_node_ctx *c)
{
  return c->opset >= 18 && IN(0) && ts_tensor_dtype(IN(0)) != TS_VARIANT;
}

bool onnx_op_optional_has_element(onnx_node_ctx *c)
{
  if (c->opset >= 18 && (plain_tensor(c) || !IN(0)))
    return (c->out[0] = ts_scalar_bool(IN(0) != NULL)) != NULL;
  return need_optional(c) && (c->out[0] = ts_optional_has_value_at(c->loc, IN(0))) != NULL;
}

bool onnx_op_optional_get_element(onnx_node_ctx *c)
{
  if (plain_tensor(c))
    return (c->out[0] = ts_identity_at(c->loc, IN(0))) != NULL;
  if (!need_optional(c))
    return false;
  ts_list_elem hint;
  bool hinted = onnx_elem_hint(c->in[0].type, &hint);
  ts_tensor *opt = IN(0);
  return (c->out[0] = ts__element_op(c->loc, TS_OP_OPTIONAL_GET_VALUE, &opt, 1, hinted ? &hint : NULL, 0)) != NULL;
}
