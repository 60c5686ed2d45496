/* onnx_export.c — a concrete function's graph as an ONNX model (opset 17).
 *
 * Every node the outputs need becomes the ONNX nodes that compute it
 * exactly: most one node under the node's own name, some a few (an NHWC
 * Conv2D is ONNX's NCHW Conv between Transposes, FloorMod on floats is
 * fmod moved to the divisor's sign).  Placeholders become the graph's
 * inputs with their dtypes and dims (unknown ones left without a value),
 * Const and VarHandle nodes initializers (a variable's value as it is
 * now), If and While ONNX If and Loop whose subgraphs read outer values by
 * name.  Each node output has a value_info with its dtype and shape.
 * Value names are node names ("dense_1/MatMul", "Split:1" for a second
 * output) made unique across subgraphs ("If/then/Add").  Seeded random
 * ops are the constants they compute.  A node ONNX cannot express (state,
 * Print, TensorArrays) fails the export naming the node and its op:
 * nothing is dropped. */
#include "graph-private.h"
#include "onnx-private.h"

#include <inttypes.h>
#include <string.h>

#define EXPORT_OPSET 17
#define EXPORT_IR_VERSION 8 /* what opset 17 came with */

typedef struct exporter {
  const char *path;
  GPtrArray *blocks;     /* what the messages point to: g_free */
  GPtrArray *arrays;     /* GPtrArrays the messages' arrays live in */
  GHashTable *values;    /* value names taken (keys in blocks) */
  GHashTable *nodes;     /* node names taken */
  GPtrArray *inits;      /* the top graph's initializers */
  int depth;             /* subgraphs entered */
  bool failed;
} exporter;

/* One ONNX graph being filled. */
typedef struct egraph {
  GPtrArray *nodes, *inputs, *outputs, *infos;
} egraph;

typedef struct emit_ctx {
  exporter *ex;
  egraph *eg;
  const ts_node *n;
  const char *prefix;    /* of value and node names in this subgraph */
  const char **in;       /* the ONNX names of n's inputs */
  const char **out;      /* of its outputs, chosen before the mapping runs */
} emit_ctx;

static bool emit_graph(exporter *ex, egraph *eg, const ts_graph *g, const char *prefix,
                       const char *const *input_names, const char ***outputs);

/* ---- memory the messages point to ---------------------------------------------- */

static void *keep(exporter *ex, void *block)
{
  g_ptr_array_add(ex->blocks, block);
  return block;
}

#define NEW(ex, T, INIT) new_message((ex), sizeof(T), &(T)INIT)
static void *new_message(exporter *ex, size_t size, const void *init)
{
  return keep(ex, g_memdup2(init, size));
}

static char *kept_printf(exporter *ex, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *kept_printf(exporter *ex, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *s = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  return keep(ex, s);
}

static GPtrArray *new_array(exporter *ex)
{
  GPtrArray *a = g_ptr_array_new();
  g_ptr_array_add(ex->arrays, a);
  return a;
}

/* base, or base_1, base_2 ... : a name no value (or node) has taken yet. */
static const char *unique(exporter *ex, GHashTable *taken, const char *base)
{
  char *name = g_strdup(base);
  for (int i = 1; g_hash_table_contains(taken, name); i++) {
    g_free(name);
    name = g_strdup_printf("%s_%d", base, i);
  }
  g_hash_table_add(taken, keep(ex, name));
  return name;
}

static const char *new_value(exporter *ex, const char *base)
{
  return unique(ex, ex->values, base);
}

/* ---- errors -------------------------------------------------------------------- */

static bool export_fail(exporter *ex, const ts_node *n, ts_error_code code, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
static bool export_fail(exporter *ex, const ts_node *n, ts_error_code code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *detail = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (!ex->failed) {
    if (n)
      ts_error_set(code, n->loc, ts_op_name(n->op), "%s: cannot export node '%s' (%s) of graph '%s': %s",
                   ex->path, n->name, ts_op_name(n->op), n->graph->name, detail);
    else
      ts_error_set(code, (ts_loc){ 0 }, NULL, "%s: %s", ex->path, detail);
  }
  g_free(detail);
  ex->failed = true;
  return false;
}

/* ---- types, tensors, attributes ----------------------------------------------------- */

static Onnx__TypeProto *tensor_type(exporter *ex, int32_t elem, ts_shape shape)
{
  Onnx__TypeProto__Tensor *tt = NEW(ex, Onnx__TypeProto__Tensor, ONNX__TYPE_PROTO__TENSOR__INIT);
  tt->has_elem_type = true;
  tt->elem_type = elem;
  if (shape.rank != TS_RANK_UNKNOWN) {
    Onnx__TensorShapeProto *s = NEW(ex, Onnx__TensorShapeProto, ONNX__TENSOR_SHAPE_PROTO__INIT);
    s->n_dim = (size_t)shape.rank;
    s->dim = keep(ex, g_new0(Onnx__TensorShapeProto__Dimension *, shape.rank + 1));
    for (int d = 0; d < shape.rank; d++) {
      Onnx__TensorShapeProto__Dimension *dim =
        NEW(ex, Onnx__TensorShapeProto__Dimension, ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT);
      if (shape.dim[d] >= 0) {
        dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dim->dim_value = shape.dim[d];
      }
      s->dim[d] = dim;
    }
    tt->shape = s;
  }
  Onnx__TypeProto *t = NEW(ex, Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
  t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  t->tensor_type = tt;
  return t;
}

/* The ONNX data type of a node's output; 0 + error when ONNX has none. */
static int32_t output_elem(exporter *ex, const ts_node *n, int i)
{
  int32_t elem = onnx_data_type(n->outputs[i].dtype);
  if (!elem)
    export_fail(ex, n, TS_ERR_UNIMPLEMENTED, "output %d is %s, which ONNX tensors cannot hold", i,
                ts_dtype_name(n->outputs[i].dtype));
  return elem;
}

static Onnx__ValueInfoProto *value_info(exporter *ex, const char *name, Onnx__TypeProto *type)
{
  Onnx__ValueInfoProto *v = NEW(ex, Onnx__ValueInfoProto, ONNX__VALUE_INFO_PROTO__INIT);
  v->name = (char *)name;
  v->type = type;
  return v;
}

/* An initializer of the top graph holding dtype/shape/bytes (bytes must
 * live until the model is written). */
static const char *add_initializer(exporter *ex, const char *base, int32_t elem, ts_shape shape,
                                   const void *bytes, size_t n_bytes)
{
  Onnx__TensorProto *t = NEW(ex, Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);
  t->name = (char *)new_value(ex, base);
  t->has_data_type = true;
  t->data_type = elem;
  t->n_dims = (size_t)shape.rank;
  t->dims = keep(ex, g_memdup2(shape.dim, sizeof(int64_t) * (size_t)(shape.rank + 1)));
  t->has_raw_data = true;
  t->raw_data = (ProtobufCBinaryData){ n_bytes, (uint8_t *)bytes };
  g_ptr_array_add(ex->inits, t);
  return t->name;
}

/* A constant i64 vector (a shape, axes, starts): [n] values, or a scalar. */
static const char *const_i64(emit_ctx *c, const char *what, const int64_t *v, int n, bool scalar)
{
  ts_shape shape = scalar ? TS_SCALAR_SHAPE : TS_SHAPE(n);
  void *bytes = keep(c->ex, g_memdup2(v, sizeof *v * (size_t)(n ? n : 1)));
  char *base = g_strdup_printf("%s%s/%s", c->prefix, c->n->name, what);
  const char *name = add_initializer(c->ex, base, onnx_data_type(TS_I64), shape, bytes, sizeof *v * (size_t)n);
  g_free(base);
  return name;
}

/* One element of dtype holding x (ConstantOfShape's value, Range's bounds). */
static void *scalar_bytes(exporter *ex, ts_dtype dtype, double x)
{
  void *p = keep(ex, g_malloc0(8));
  ts__store_f64(dtype, p, 0, x);
  return p;
}

/* Attributes are few: each node's list is rebuilt from its own array. */
static void push_attr(emit_ctx *c, Onnx__NodeProto *node, Onnx__AttributeProto *a)
{
  Onnx__AttributeProto **old = node->attribute;
  Onnx__AttributeProto **list = keep(c->ex, g_new(Onnx__AttributeProto *, node->n_attribute + 1));
  if (node->n_attribute)
    memcpy(list, old, sizeof *list * node->n_attribute);
  list[node->n_attribute++] = a;
  node->attribute = list;
}

static void attr_int(emit_ctx *c, Onnx__NodeProto *node, const char *name, int64_t v)
{
  Onnx__AttributeProto *a = NEW(c->ex, Onnx__AttributeProto, ONNX__ATTRIBUTE_PROTO__INIT);
  a->name = (char *)name;
  a->has_type = true;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  a->has_i = true;
  a->i = v;
  push_attr(c, node, a);
}

static void attr_ints(emit_ctx *c, Onnx__NodeProto *node, const char *name, const int64_t *v, int n)
{
  Onnx__AttributeProto *a = NEW(c->ex, Onnx__AttributeProto, ONNX__ATTRIBUTE_PROTO__INIT);
  a->name = (char *)name;
  a->has_type = true;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  a->n_ints = (size_t)n;
  a->ints = keep(c->ex, g_memdup2(v, sizeof *v * (size_t)(n ? n : 1)));
  push_attr(c, node, a);
}

static void attr_string(emit_ctx *c, Onnx__NodeProto *node, const char *name, const char *s)
{
  Onnx__AttributeProto *a = NEW(c->ex, Onnx__AttributeProto, ONNX__ATTRIBUTE_PROTO__INIT);
  a->name = (char *)name;
  a->has_type = true;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
  a->has_s = true;
  a->s = (ProtobufCBinaryData){ strlen(s), (uint8_t *)s };
  push_attr(c, node, a);
}

static void attr_graph(emit_ctx *c, Onnx__NodeProto *node, const char *name, Onnx__GraphProto *g)
{
  Onnx__AttributeProto *a = NEW(c->ex, Onnx__AttributeProto, ONNX__ATTRIBUTE_PROTO__INIT);
  a->name = (char *)name;
  a->has_type = true;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
  a->g = g;
  push_attr(c, node, a);
}

/* A one-element tensor attribute (ConstantOfShape's value). */
static void attr_scalar(emit_ctx *c, Onnx__NodeProto *node, const char *name, ts_dtype dtype, double x)
{
  Onnx__TensorProto *t = NEW(c->ex, Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);
  static const int64_t one = 1;
  t->n_dims = 1;
  t->dims = (int64_t *)&one;
  t->has_data_type = true;
  t->data_type = onnx_data_type(dtype);
  t->has_raw_data = true;
  t->raw_data = (ProtobufCBinaryData){ ts_dtype_size(dtype), scalar_bytes(c->ex, dtype, x) };
  Onnx__AttributeProto *a = NEW(c->ex, Onnx__AttributeProto, ONNX__ATTRIBUTE_PROTO__INIT);
  a->name = (char *)name;
  a->has_type = true;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  a->t = t;
  push_attr(c, node, a);
}

/* ---- nodes ---------------------------------------------------------------------- */

/* An ONNX node of op on inputs, making outputs; named after the engine
 * node: the one making its first output takes the name itself, the
 * others "NAME/OP" (a scope in the viewer). */
static Onnx__NodeProto *add_node(emit_ctx *c, const char *op, const char *const *in, int n_in,
                                 const char *const *out, int n_out)
{
  exporter *ex = c->ex;
  Onnx__NodeProto *node = NEW(ex, Onnx__NodeProto, ONNX__NODE_PROTO__INIT);
  bool main = c->out && n_out > 0 && out[0] == c->out[0];
  char *base = main ? g_strdup_printf("%s%s", c->prefix, c->n->name)
                    : g_strdup_printf("%s%s/%s", c->prefix, c->n->name, op);
  node->name = (char *)unique(ex, ex->nodes, base);
  g_free(base);
  node->op_type = (char *)op;
  node->n_input = (size_t)n_in;
  node->input = keep(ex, g_memdup2(in, sizeof *in * (size_t)(n_in ? n_in : 1)));
  node->n_output = (size_t)n_out;
  node->output = keep(ex, g_memdup2(out, sizeof *out * (size_t)(n_out ? n_out : 1)));
  g_ptr_array_add(c->eg->nodes, node);
  return node;
}

/* A value inside the node's mapping: "dense/MatMul/a_t". */
static const char *temp(emit_ctx *c, const char *what)
{
  char *base = g_strdup_printf("%s%s/%s", c->prefix, c->n->name, what);
  const char *name = new_value(c->ex, base);
  g_free(base);
  return name;
}

/* A constant scalar of dtype holding x: "dense/Relu6/six". */
static const char *const_scalar(emit_ctx *c, const char *what, ts_dtype dtype, double x)
{
  char *base = g_strdup_printf("%s%s/%s", c->prefix, c->n->name, what);
  const char *name = add_initializer(c->ex, base, onnx_data_type(dtype), TS_SCALAR_SHAPE,
                                     scalar_bytes(c->ex, dtype, x), ts_dtype_size(dtype));
  g_free(base);
  return name;
}

static Onnx__NodeProto *node1(emit_ctx *c, const char *op, const char *out, int n_in, ...)
{
  const char *in[8];
  va_list ap;
  va_start(ap, n_in);
  for (int i = 0; i < n_in; i++)
    in[i] = va_arg(ap, const char *);
  va_end(ap);
  return add_node(c, op, in, n_in, &out, 1);
}

static const char *cast(emit_ctx *c, const char *x, ts_dtype to, const char *what)
{
  const char *t = temp(c, what);
  attr_int(c, node1(c, "Cast", t, 1, x), "to", onnx_data_type(to));
  return t;
}

static const ts_attr *attr(const ts_node *n, int i)
{
  return &n->attrs[i];
}

static ts_info input_info(const ts_node *n, int i)
{
  ts_port p = n->inputs[i];
  return ts__graph_node(n->graph, p.node)->outputs[p.index];
}

/* ---- the mappings ----------------------------------------------------------------- */

typedef bool (*emit_fn)(emit_ctx *c);

/* One ONNX node of the same inputs and outputs. */
static bool emit_same(emit_ctx *c, const char *op)
{
  add_node(c, op, c->in, c->n->n_inputs, c->out, c->n->n_outputs);
  return true;
}

#define SAME(NAME, OP) \
  static bool emit_##NAME(emit_ctx *c) { return emit_same(c, OP); }
SAME(add, "Add") SAME(sub, "Sub") SAME(mul, "Mul") SAME(div, "Div") SAME(pow, "Pow")
SAME(maximum, "Max") SAME(minimum, "Min") SAME(neg, "Neg") SAME(abs, "Abs") SAME(exp, "Exp")
SAME(log, "Log") SAME(sqrt, "Sqrt") SAME(tanh, "Tanh") SAME(sigmoid, "Sigmoid") SAME(relu, "Relu")
SAME(softplus, "Softplus") SAME(greater, "Greater") SAME(greater_equal, "GreaterOrEqual")
SAME(less, "Less") SAME(less_equal, "LessOrEqual") SAME(equal, "Equal") SAME(logical_and, "And")
SAME(logical_or, "Or") SAME(logical_not, "Not") SAME(where, "Where") SAME(identity, "Identity")
SAME(read_variable, "Identity") SAME(sin, "Sin") SAME(cos, "Cos") SAME(tan, "Tan") SAME(asin, "Asin")
SAME(acos, "Acos") SAME(atan, "Atan") SAME(sinh, "Sinh") SAME(cosh, "Cosh") SAME(asinh, "Asinh")
SAME(acosh, "Acosh") SAME(atanh, "Atanh") SAME(erf, "Erf") SAME(sign, "Sign") SAME(floor, "Floor")
SAME(ceil, "Ceil") SAME(reciprocal, "Reciprocal") SAME(elu, "Elu") SAME(selu, "Selu")
SAME(softsign, "Softsign") SAME(is_nan, "IsNaN") SAME(is_inf, "IsInf")
#undef SAME

/* ---- rows ONNX (opset 17) has no op for, as a few of its ops ---- */

static bool emit_square(emit_ctx *c)
{
  node1(c, "Mul", c->out[0], 2, c->in[0], c->in[0]);
  return true;
}

/* 1 / sqrt(x): the row's own formula, so the same bits */
static bool emit_rsqrt(emit_ctx *c)
{
  const char *root = temp(c, "sqrt");
  node1(c, "Sqrt", root, 1, c->in[0]);
  node1(c, "Reciprocal", c->out[0], 1, root);
  return true;
}

/* Clip to [0, 6], its bounds inputs of the row's dtype (integers too) */
static bool emit_relu6(emit_ctx *c)
{
  ts_dtype dt = c->n->outputs[0].dtype;
  node1(c, "Clip", c->out[0], 3, c->in[0], const_scalar(c, "zero", dt, 0), const_scalar(c, "six", dt, 6));
  return true;
}

/* log(1 + x) and exp(x) - 1: ONNX has neither log1p nor expm1, so these
 * lose the row's precision for x near 0 (1 + 1e-10 is 1 in float32) */
static bool emit_log1p(emit_ctx *c)
{
  const char *sum = temp(c, "one_plus");
  node1(c, "Add", sum, 2, const_scalar(c, "one", c->n->outputs[0].dtype, 1), c->in[0]);
  node1(c, "Log", c->out[0], 1, sum);
  return true;
}

static bool emit_expm1(emit_ctx *c)
{
  const char *e = temp(c, "exp");
  node1(c, "Exp", e, 1, c->in[0]);
  node1(c, "Sub", c->out[0], 2, e, const_scalar(c, "one", c->n->outputs[0].dtype, 1));
  return true;
}

static bool emit_is_finite(emit_ctx *c)
{
  const char *nan = temp(c, "is_nan"), *inf = temp(c, "is_inf"), *either = temp(c, "nan_or_inf");
  node1(c, "IsNaN", nan, 1, c->in[0]);
  node1(c, "IsInf", inf, 1, c->in[0]);
  node1(c, "Or", either, 2, nan, inf);
  node1(c, "Not", c->out[0], 1, either);
  return true;
}

static bool emit_squared_difference(emit_ctx *c)
{
  const char *d = temp(c, "difference");
  node1(c, "Sub", d, 2, c->in[0], c->in[1]);
  node1(c, "Mul", c->out[0], 2, d, d);
  return true;
}

/* Integers: ONNX's Div truncates; floats: the quotient truncated (opset
 * 17 has no Trunc): Ceil below 0, else Floor (-0.5 gives -0.0, nan stays) */
static bool emit_truncatediv(emit_ctx *c)
{
  ts_dtype dt = c->n->outputs[0].dtype;
  if (!ts_dtype_is_float(dt)) {
    node1(c, "Div", c->out[0], 2, c->in[0], c->in[1]);
    return true;
  }
  const char *q = temp(c, "quotient"), *neg = temp(c, "negative"), *up = temp(c, "ceil"),
             *down = temp(c, "floor");
  node1(c, "Div", q, 2, c->in[0], c->in[1]);
  node1(c, "Less", neg, 2, q, const_scalar(c, "zero", dt, 0));
  node1(c, "Ceil", up, 1, q);
  node1(c, "Floor", down, 1, q);
  node1(c, "Where", c->out[0], 3, neg, up, down);
  return true;
}

/* C's remainder: ONNX's Mod with fmod 1, for integers and floats alike */
static bool emit_truncatemod(emit_ctx *c)
{
  attr_int(c, node1(c, "Mod", c->out[0], 2, c->in[0], c->in[1]), "fmod", 1);
  return true;
}

/* 0 where b is 0, else a / b */
static bool emit_div_no_nan(emit_ctx *c)
{
  ts_dtype dt = c->n->outputs[0].dtype;
  const char *zero = const_scalar(c, "zero", dt, 0), *is_zero = temp(c, "divisor_zero"),
             *q = temp(c, "quotient");
  node1(c, "Equal", is_zero, 2, c->in[1], zero);
  node1(c, "Div", q, 2, c->in[0], c->in[1]);
  node1(c, "Where", c->out[0], 3, is_zero, zero, q);
  return true;
}

/* 0 where x is 0, else x log(y) */
static bool emit_xlogy(emit_ctx *c)
{
  ts_dtype dt = c->n->outputs[0].dtype;
  const char *zero = const_scalar(c, "zero", dt, 0), *is_zero = temp(c, "x_zero"), *lg = temp(c, "log"),
             *p = temp(c, "product");
  node1(c, "Equal", is_zero, 2, c->in[0], zero);
  node1(c, "Log", lg, 1, c->in[1]);
  node1(c, "Mul", p, 2, c->in[0], lg);
  node1(c, "Where", c->out[0], 3, is_zero, zero, p);
  return true;
}

/* ONNX's Gelu came with opset 20: 0.5 x (1 + erf(x / sqrt(2))) in the
 * row's order */
static bool emit_gelu(emit_ctx *c)
{
  ts_dtype dt = c->n->outputs[0].dtype;
  const char *half_x = temp(c, "half_x"), *scaled = temp(c, "scaled"), *e = temp(c, "erf"),
             *sum = temp(c, "one_plus_erf");
  node1(c, "Mul", half_x, 2, const_scalar(c, "half", dt, 0.5), c->in[0]);
  node1(c, "Div", scaled, 2, c->in[0], const_scalar(c, "sqrt2", dt, 1.4142135623730951));
  node1(c, "Erf", e, 1, scaled);
  node1(c, "Add", sum, 2, const_scalar(c, "one", dt, 1), e);
  node1(c, "Mul", c->out[0], 2, half_x, sum);
  return true;
}

/* ONNX's Round takes floats only; an integer is its own rounding. */
static bool emit_round(emit_ctx *c)
{
  return emit_same(c, ts_dtype_is_float(input_info(c->n, 0).dtype) ? "Round" : "Identity");
}

static bool emit_not_equal(emit_ctx *c)
{
  const char *eq = temp(c, "equal");
  node1(c, "Equal", eq, 2, c->in[0], c->in[1]);
  node1(c, "Not", c->out[0], 1, eq);
  return true;
}

/* FloorDiv: floats floor the quotient; integers subtract the floored
 * remainder (ONNX's integer Mod takes the divisor's sign) before dividing,
 * which is exact, where Div alone truncates. */
static bool emit_floordiv(emit_ctx *c)
{
  ts_dtype dt = c->n->outputs[0].dtype;
  if (ts_dtype_is_float(dt)) {
    const char *q = temp(c, "quotient");
    node1(c, "Div", q, 2, c->in[0], c->in[1]);
    node1(c, "Floor", c->out[0], 1, q);
  } else if (dt == TS_U8) {
    node1(c, "Div", c->out[0], 2, c->in[0], c->in[1]);
  } else {
    const char *r = temp(c, "remainder"), *d = temp(c, "difference");
    node1(c, "Mod", r, 2, c->in[0], c->in[1]);
    node1(c, "Sub", d, 2, c->in[0], r);
    node1(c, "Div", c->out[0], 2, d, c->in[1]);
  }
  return true;
}

/* FloorMod: integers are ONNX's Mod; floats C's fmod (fmod=1), moved by
 * the divisor where it is non-zero and its sign is not the divisor's. */
static bool emit_mod(emit_ctx *c)
{
  ts_dtype dt = c->n->outputs[0].dtype;
  if (!ts_dtype_is_float(dt)) {
    node1(c, "Mod", c->out[0], 2, c->in[0], c->in[1]);
    return true;
  }
  const char *m = temp(c, "fmod"), *zero = temp(c, "zero"), *m_neg = temp(c, "fmod_negative"),
             *y_neg = temp(c, "divisor_negative"), *signs = temp(c, "signs_differ"),
             *is_zero = temp(c, "fmod_zero"), *nonzero = temp(c, "fmod_nonzero"),
             *fix = temp(c, "moved"), *shifted = temp(c, "shifted");
  attr_int(c, node1(c, "Mod", m, 2, c->in[0], c->in[1]), "fmod", 1);
  char *zbase = g_strdup_printf("%s%s/zero", c->prefix, c->n->name);
  const char *zc = add_initializer(c->ex, zbase, onnx_data_type(dt), TS_SCALAR_SHAPE,
                                   scalar_bytes(c->ex, dt, 0), ts_dtype_size(dt));
  g_free(zbase);
  node1(c, "Identity", zero, 1, zc);
  node1(c, "Less", m_neg, 2, m, zero);
  node1(c, "Less", y_neg, 2, c->in[1], zero);
  node1(c, "Xor", signs, 2, m_neg, y_neg);
  node1(c, "Equal", is_zero, 2, m, zero);
  node1(c, "Not", nonzero, 1, is_zero);
  node1(c, "And", fix, 2, signs, nonzero);
  node1(c, "Add", shifted, 2, m, c->in[1]);
  node1(c, "Where", c->out[0], 3, fix, shifted, m);
  return true;
}

static bool emit_cast(emit_ctx *c)
{
  attr_int(c, node1(c, "Cast", c->out[0], 1, c->in[0]), "to", onnx_data_type(attr(c->n, 0)->dtype));
  return true;
}

static bool emit_reshape(emit_ctx *c)
{
  ts_shape s = attr(c->n, 0)->shape;
  /* ONNX refuses a -1 beside a 0 with allowzero: the traced shape (which
   * holds the 0 too) says the -1 once it knows it */
  if (ts__reshape_reads_dims(s) && !ts__reshape_reads_dims(c->n->outputs[0].shape))
    s = c->n->outputs[0].shape;
  const char *shape = const_i64(c, "shape", s.dim, s.rank, false);
  Onnx__NodeProto *node = node1(c, "Reshape", c->out[0], 2, c->in[0], shape);
  for (int d = 0; d < s.rank; d++)
    if (s.dim[d] == 0) {
      attr_int(c, node, "allowzero", 1); /* 0 is a size here, not "keep the dim" */
      break;
    }
  return true;
}

static bool emit_flatten(emit_ctx *c)
{
  attr_int(c, node1(c, "Flatten", c->out[0], 1, c->in[0]), "axis", 1);
  return true;
}

static bool emit_transpose(emit_ctx *c)
{
  ts_ints perm = attr(c->n, 0)->ints;
  Onnx__NodeProto *node = node1(c, "Transpose", c->out[0], 1, c->in[0]);
  if (perm.n >= 0) /* TS_ALL_AXES: ONNX's default reverses the dims too */
    attr_ints(c, node, "perm", perm.v, perm.n);
  return true;
}

static bool emit_concat(emit_ctx *c)
{
  attr_int(c, add_node(c, "Concat", c->in, c->n->n_inputs, c->out, 1), "axis", attr(c->n, 0)->i);
  return true;
}

/* Split into equal parts: opset 17 takes the sizes as an input. */
static bool emit_split(emit_ctx *c)
{
  int64_t num = attr(c->n, 0)->i, axis = attr(c->n, 1)->i;
  ts_shape s = c->n->outputs[0].shape;
  int64_t a = axis < 0 ? axis + s.rank : axis;
  if (s.rank == TS_RANK_UNKNOWN || a < 0 || a >= s.rank || s.dim[a] < 0 || num > TS_MAX_OUTPUTS)
    return export_fail(c->ex, c->n, TS_ERR_UNIMPLEMENTED,
                       "the size of the split axis is unknown (ONNX's Split needs the part sizes)");
  int64_t sizes[TS_MAX_OUTPUTS];
  for (int64_t i = 0; i < num; i++)
    sizes[i] = s.dim[a];
  const char *split = const_i64(c, "split", sizes, (int)num, false);
  const char *in[2] = { c->in[0], split };
  attr_int(c, add_node(c, "Split", in, 2, c->out, c->n->n_outputs), "axis", axis);
  return true;
}

static bool emit_slice(emit_ctx *c)
{
  ts_ints begin = attr(c->n, 0)->ints, size = attr(c->n, 1)->ints;
  int64_t ends[TS_MAX_RANK], axes[TS_MAX_RANK];
  for (int i = 0; i < begin.n; i++) {
    ends[i] = size.v[i] < 0 ? INT64_MAX : begin.v[i] + size.v[i];
    axes[i] = i;
  }
  node1(c, "Slice", c->out[0], 4, c->in[0], const_i64(c, "starts", begin.v, begin.n, false),
        const_i64(c, "ends", ends, begin.n, false), const_i64(c, "axes", axes, begin.n, false));
  return true;
}

static bool emit_gather(emit_ctx *c)
{
  attr_int(c, node1(c, "Gather", c->out[0], 2, c->in[0], c->in[1]), "axis", attr(c->n, 0)->i);
  return true;
}

/* Reductions: ReduceSum takes its axes as an input from opset 13, the
 * others as an attribute until 18; x into out.  No axes at all is the
 * identity. */
static void reduce_node(emit_ctx *c, const char *op, bool axes_input, const char *x, const char *out)
{
  ts_ints axes = attr(c->n, 0)->ints;
  Onnx__NodeProto *node;
  if (axes.n > 0 && axes_input)
    node = node1(c, op, out, 2, x, const_i64(c, "axes", axes.v, axes.n, false));
  else
    node = node1(c, op, out, 1, x);
  if (axes.n > 0 && !axes_input)
    attr_ints(c, node, "axes", axes.v, axes.n);
  attr_int(c, node, "keepdims", attr(c->n, 1)->b);
}

static bool emit_reduce(emit_ctx *c, const char *op, bool axes_input)
{
  if (attr(c->n, 0)->ints.n == 0)
    return emit_same(c, "Identity");
  reduce_node(c, op, axes_input, c->in[0], c->out[0]);
  return true;
}

/* Any and All: ONNX reduces no bool.  The count of true (Any) or false
 * (All) elements as int64, compared with 0: over nothing 0, so false and
 * true as TensorFlow's (ReduceMax of an empty int would be its least). */
static bool emit_any_all(emit_ctx *c)
{
  if (attr(c->n, 0)->ints.n == 0)
    return emit_same(c, "Identity");
  bool all = c->n->op == TS_OP_REDUCE_ALL;
  const char *x = c->in[0];
  if (all) {
    x = temp(c, "not");
    node1(c, "Not", x, 1, c->in[0]);
  }
  const char *count = temp(c, "count");
  reduce_node(c, "ReduceSum", true, cast(c, x, TS_I64, "as_i64"), count);
  int64_t zero = 0;
  node1(c, all ? "Equal" : "Greater", c->out[0], 2, count, const_i64(c, "zero", &zero, 1, true));
  return true;
}

static bool emit_reduce_sum(emit_ctx *c) { return emit_reduce(c, "ReduceSum", true); }
static bool emit_reduce_mean(emit_ctx *c) { return emit_reduce(c, "ReduceMean", false); }
static bool emit_reduce_max(emit_ctx *c) { return emit_reduce(c, "ReduceMax", false); }
static bool emit_reduce_min(emit_ctx *c) { return emit_reduce(c, "ReduceMin", false); }
static bool emit_reduce_prod(emit_ctx *c) { return emit_reduce(c, "ReduceProd", false); }

static bool emit_arg(emit_ctx *c, const char *op)
{
  Onnx__NodeProto *node = node1(c, op, c->out[0], 1, c->in[0]);
  attr_int(c, node, "axis", attr(c->n, 0)->i);
  attr_int(c, node, "keepdims", 0);
  return true;
}
static bool emit_argmax(emit_ctx *c) { return emit_arg(c, "ArgMax"); }

/* CumSum takes its axis as an input */
static bool emit_cumsum(emit_ctx *c)
{
  int64_t axis = attr(c->n, 0)->i;
  Onnx__NodeProto *node = node1(c, "CumSum", c->out[0], 2, c->in[0], const_i64(c, "axis", &axis, 1, true));
  attr_int(c, node, "exclusive", attr(c->n, 1)->b);
  attr_int(c, node, "reverse", attr(c->n, 2)->b);
  return true;
}
static bool emit_argmin(emit_ctx *c) { return emit_arg(c, "ArgMin"); }

/* ONNX's TopK along axis, k given as a 1-D int64 tensor; its int64
 * indices cast to our int32 into `indices` (NULL: unused).  Equal values
 * come lower index first in ONNX's TopK too, both ways. */
static void top_k_node(emit_ctx *c, const char *k, int64_t axis, bool largest, const char *values,
                       const char *indices)
{
  const char *out[2] = { values ? values : temp(c, "values"), temp(c, "indices_i64") };
  Onnx__NodeProto *node = add_node(c, "TopK", (const char *[]){ c->in[0], k }, 2, out, 2);
  attr_int(c, node, "axis", axis);
  attr_int(c, node, "largest", largest);
  attr_int(c, node, "sorted", 1);
  if (indices)
    attr_int(c, node1(c, "Cast", indices, 1, out[1]), "to", onnx_data_type(TS_I32));
}

static bool emit_top_k(emit_ctx *c)
{
  int64_t k = attr(c->n, 0)->i;
  top_k_node(c, const_i64(c, "k", &k, 1, false), -1, true, c->out[0], c->out[1]);
  return true;
}

/* Sort and ArgSort: TopK over the whole axis, its length read by Shape
 * (known or not when traced). */
static bool emit_sort(emit_ctx *c)
{
  int64_t axis = attr(c->n, 0)->i;
  int rank = c->n->outputs[0].shape.rank;
  if (rank == TS_RANK_UNKNOWN)
    return export_fail(c->ex, c->n, TS_ERR_UNIMPLEMENTED, "the input's rank is unknown (TopK's axis needs it)");
  int64_t a = axis < 0 ? axis + rank : axis;
  const char *k = temp(c, "k");
  Onnx__NodeProto *shape = node1(c, "Shape", k, 1, c->in[0]);
  attr_int(c, shape, "start", a);
  attr_int(c, shape, "end", a + 1);
  bool arg = c->n->op == TS_OP_ARGSORT;
  top_k_node(c, k, a, attr(c->n, 1)->b, arg ? NULL : c->out[0], arg ? c->out[0] : NULL);
  return true;
}

/* x with its last two dims swapped (a transposed MatMul operand). */
static const char *swap_last(emit_ctx *c, int input, const char *what)
{
  int rank = input_info(c->n, input).shape.rank;
  if (rank < 2) {
    export_fail(c->ex, c->n, TS_ERR_UNIMPLEMENTED, "input %d of a transposed product has %s rank",
                input, rank == TS_RANK_UNKNOWN ? "an unknown" : "a rank under 2");
    return NULL;
  }
  int64_t perm[TS_MAX_RANK];
  for (int d = 0; d < rank; d++)
    perm[d] = d;
  perm[rank - 2] = rank - 1;
  perm[rank - 1] = rank - 2;
  const char *t = temp(c, what);
  attr_ints(c, node1(c, "Transpose", t, 1, c->in[input]), "perm", perm, rank);
  return t;
}

static bool emit_matmul(emit_ctx *c)
{
  const char *a = c->in[0], *b = c->in[1];
  if (attr(c->n, 0)->b && !(a = swap_last(c, 0, "a_transposed")))
    return false;
  if (attr(c->n, 1)->b && !(b = swap_last(c, 1, "b_transposed")))
    return false;
  node1(c, "MatMul", c->out[0], 2, a, b);
  return true;
}

/* Over the last axis, as opset 13 on defines it. */
static bool emit_softmax(emit_ctx *c)
{
  attr_int(c, node1(c, "Softmax", c->out[0], 1, c->in[0]), "axis", -1);
  return true;
}

static bool emit_log_softmax(emit_ctx *c)
{
  attr_int(c, node1(c, "LogSoftmax", c->out[0], 1, c->in[0]), "axis", -1);
  return true;
}

static bool emit_sparse_softmax_cross_entropy(emit_ctx *c)
{
  Onnx__NodeProto *node = node1(c, "SoftmaxCrossEntropyLoss", c->out[0], 2, c->in[1], c->in[0]);
  attr_string(c, node, "reduction", "none");
  return true;
}

static const int64_t NHWC_TO_NCHW[] = { 0, 3, 1, 2 }, NCHW_TO_NHWC[] = { 0, 2, 3, 1 },
                     HWIO_TO_OIHW[] = { 3, 2, 0, 1 };

static const char *transposed(emit_ctx *c, const char *x, const int64_t *perm, const char *what)
{
  const char *t = temp(c, what);
  attr_ints(c, node1(c, "Transpose", t, 1, x), "perm", perm, 4);
  return t;
}

/* TensorFlow's SAME puts the odd padding cell after: ONNX's SAME_UPPER. */
static void window_attrs(emit_ctx *c, Onnx__NodeProto *node, ts_ints strides, int64_t padding)
{
  attr_ints(c, node, "strides", strides.v, 2);
  attr_string(c, node, "auto_pad", padding == TS_PADDING_SAME ? "SAME_UPPER" : "VALID");
}

/* NHWC and HWIO around ONNX's NCHW and OIHW. */
static bool emit_conv2d(emit_ctx *c)
{
  const char *x = transposed(c, c->in[0], NHWC_TO_NCHW, "input_nchw");
  const char *w = transposed(c, c->in[1], HWIO_TO_OIHW, "filter_oihw");
  const char *y = temp(c, "output_nchw");
  window_attrs(c, node1(c, "Conv", y, 2, x, w), attr(c->n, 0)->ints, attr(c->n, 1)->i);
  attr_ints(c, node1(c, "Transpose", c->out[0], 1, y), "perm", NCHW_TO_NHWC, 4);
  return true;
}

static bool emit_max_pool2d(emit_ctx *c)
{
  const char *x = transposed(c, c->in[0], NHWC_TO_NCHW, "input_nchw");
  const char *y = temp(c, "output_nchw");
  Onnx__NodeProto *pool = node1(c, "MaxPool", y, 1, x);
  attr_ints(c, pool, "kernel_shape", attr(c->n, 0)->ints.v, 2);
  window_attrs(c, pool, attr(c->n, 1)->ints, attr(c->n, 2)->i);
  attr_ints(c, node1(c, "Transpose", c->out[0], 1, y), "perm", NCHW_TO_NHWC, 4);
  return true;
}

/* Our ConvTranspose row as ONNX's: pads before each dim as ours, after it
 * what makes the output's dims (output_padding where the output outgrows
 * the taps' extent). */
static bool emit_conv_transpose(emit_ctx *c)
{
  ts_shape x = input_info(c->n, 0).shape, w = input_info(c->n, 1).shape;
  ts_ints strides = attr(c->n, 0)->ints, dil = attr(c->n, 1)->ints, begin = attr(c->n, 2)->ints;
  ts_ints out = attr(c->n, 3)->ints;
  int n = out.n;
  int64_t pads[2 * TS_MAX_RANK] = { 0 }, outpad[TS_MAX_RANK] = { 0 };
  for (int i = 0; i < n; i++) {
    int64_t in = x.dim[2 + i], k = w.dim[2 + i];
    if (in < 0 || begin.v[i] < 0)
      return export_fail(c->ex, c->n, TS_ERR_UNIMPLEMENTED, "spatial dim %d: an unknown input dim or a "
                         "negative pad (%" PRId64 ") has no ConvTranspose attribute", i, begin.v[i]);
    int64_t end = strides.v[i] * (in - 1) + (k - 1) * dil.v[i] + 1 - begin.v[i] - out.v[i];
    pads[i] = begin.v[i];
    pads[n + i] = MAX(end, 0);
    outpad[i] = MAX(-end, 0);
  }
  Onnx__NodeProto *node = add_node(c, "ConvTranspose", c->in, c->n->n_inputs, c->out, 1);
  attr_ints(c, node, "strides", strides.v, n);
  attr_ints(c, node, "dilations", dil.v, n);
  attr_ints(c, node, "pads", pads, 2 * n);
  attr_ints(c, node, "output_padding", outpad, n);
  attr_int(c, node, "group", attr(c->n, 4)->i);
  return true;
}

/* x with a dim of 1 inserted at axis, or removed there (Unsqueeze/Squeeze). */
static const char *axis_op(emit_ctx *c, const char *op, const char *x, int64_t axis, const char *out,
                           const char *what)
{
  const char *t = out ? out : temp(c, what);
  node1(c, op, t, 2, x, const_i64(c, "axes", &axis, 1, false));
  return t;
}

/* Pack: each input unsqueezed at the axis, then joined there. */
static bool emit_pack(emit_ctx *c)
{
  int64_t axis = attr(c->n, 0)->i;
  int n = c->n->n_inputs;
  const char **parts = keep(c->ex, g_new(const char *, n));
  for (int i = 0; i < n; i++)
    parts[i] = axis_op(c, "Unsqueeze", c->in[i], axis, NULL, kept_printf(c->ex, "part_%d", i));
  attr_int(c, add_node(c, "Concat", parts, n, c->out, 1), "axis", axis);
  return true;
}

/* Unpack: Split into parts of 1, each squeezed at the axis. */
static bool emit_unpack(emit_ctx *c)
{
  int64_t num = attr(c->n, 0)->i, axis = attr(c->n, 1)->i, ones[TS_MAX_OUTPUTS];
  const char **parts = keep(c->ex, g_new(const char *, num));
  for (int64_t i = 0; i < num; i++) {
    ones[i] = 1;
    parts[i] = temp(c, kept_printf(c->ex, "part_%d", (int)i));
  }
  const char *in[2] = { c->in[0], const_i64(c, "split", ones, (int)num, false) };
  attr_int(c, add_node(c, "Split", in, 2, parts, (int)num), "axis", axis);
  for (int64_t i = 0; i < num; i++)
    axis_op(c, "Squeeze", parts[i], axis, c->out[i], NULL);
  return true;
}

/* ReverseV2: ONNX has no reverse; a Slice with step -1 on each reversed
 * axis, from its last element to past its first (an end below every
 * dim's -dim clamps to before the first). */
static bool emit_reverse(emit_ctx *c)
{
  ts_ints axis = attr(c->n, 0)->ints;
  int64_t starts[TS_MAX_RANK], ends[TS_MAX_RANK], steps[TS_MAX_RANK];
  if (axis.n == 0) {
    node1(c, "Identity", c->out[0], 1, c->in[0]);
    return true;
  }
  for (int i = 0; i < axis.n; i++) {
    starts[i] = -1;
    ends[i] = INT64_MIN;
    steps[i] = -1;
  }
  node1(c, "Slice", c->out[0], 5, c->in[0], const_i64(c, "starts", starts, axis.n, false),
        const_i64(c, "ends", ends, axis.n, false), const_i64(c, "axes", axis.v, axis.n, false),
        const_i64(c, "steps", steps, axis.n, false));
  return true;
}

/* OneHot: ONNX's counts a negative index from the end, TensorFlow's gives
 * it a row of off_value, so negative indices become depth (past the end)
 * first; the values are [off_value, on_value]. */
static bool emit_one_hot(emit_ctx *c)
{
  int64_t depth = attr(c->n, 0)->i, axis = attr(c->n, 1)->i, zero = 0;
  if (depth == 0)
    return export_fail(c->ex, c->n, TS_ERR_UNIMPLEMENTED,
                       "OneHot of depth 0 (ONNX's OneHot takes a depth of 1 or more)");
  ts_dtype it = input_info(c->n, 0).dtype;
  const char *idx = it == TS_I64 ? c->in[0] : cast(c, c->in[0], TS_I64, "indices_i64");
  const char *d = const_i64(c, "depth", &depth, 1, true);
  if (it != TS_U8) {
    const char *neg = temp(c, "negative"), *moved = temp(c, "indices_past_negative");
    node1(c, "Less", neg, 2, idx, const_i64(c, "zero", &zero, 1, true));
    node1(c, "Where", moved, 3, neg, d, idx);
    idx = moved;
  }
  const char *parts[2] = { axis_op(c, "Unsqueeze", c->in[2], 0, NULL, "off_value_1"),
                           axis_op(c, "Unsqueeze", c->in[1], 0, NULL, "on_value_1") };
  const char *values = temp(c, "values");
  attr_int(c, add_node(c, "Concat", parts, 2, &values, 1), "axis", 0);
  attr_int(c, node1(c, "OneHot", c->out[0], 3, idx, d, values), "axis", axis);
  return true;
}

static bool emit_tile(emit_ctx *c)
{
  ts_ints m = attr(c->n, 0)->ints;
  node1(c, "Tile", c->out[0], 2, c->in[0], const_i64(c, "repeats", m.v, m.n, false));
  return true;
}

/* Pad: ONNX's Pad (pads all befores then all afters; CONSTANT and REFLECT
 * as ONNX's constant and reflect); SYMMETRIC has no ONNX mode. */
static bool emit_pad(emit_ctx *c)
{
  ts_ints before = attr(c->n, 0)->ints, after = attr(c->n, 1)->ints;
  const char *mode = attr(c->n, 2)->s;
  if (strcmp(mode, "SYMMETRIC") == 0)
    return export_fail(c->ex, c->n, TS_ERR_UNIMPLEMENTED,
                       "SYMMETRIC padding has no ONNX mode (ONNX's Pad reflects without the edge, or repeats it)");
  int64_t pads[2 * TS_MAX_RANK];
  for (int d = 0; d < before.n; d++) {
    pads[d] = before.v[d];
    pads[before.n + d] = after.v[d];
  }
  const char *in[3] = { c->in[0], const_i64(c, "pads", pads, 2 * before.n, false),
                        c->n->n_inputs == 2 ? c->in[1] : NULL };
  attr_string(c, add_node(c, "Pad", in, in[2] ? 3 : 2, c->out, 1), "mode",
              strcmp(mode, "REFLECT") == 0 ? "reflect" : "constant");
  return true;
}

/* LSTMSequence as ONNX's LSTM: W and R are w and r transposed, B the
 * op's bias beside zeros (ONNX adds Wb and Rb), the states and Y with the
 * direction's dim of 1. */
static bool emit_lstm_sequence(emit_ctx *c)
{
  int64_t hidden = c->n->outputs[0].shape.dim[2], gates = 4 * hidden;
  if (hidden < 0)
    return export_fail(c->ex, c->n, TS_ERR_UNIMPLEMENTED, "the hidden size is unknown (LSTM needs it)");
  const int64_t perm[2] = { 1, 0 };
  const char *w_t = temp(c, "w_t"), *r_t = temp(c, "r_t"), *zeros = temp(c, "rb"), *b = temp(c, "wb_rb");
  attr_ints(c, node1(c, "Transpose", w_t, 1, c->in[1]), "perm", perm, 2);
  attr_ints(c, node1(c, "Transpose", r_t, 1, c->in[2]), "perm", perm, 2);
  attr_scalar(c, node1(c, "ConstantOfShape", zeros, 1, const_i64(c, "rb_shape", &gates, 1, false)), "value",
              c->n->outputs[0].dtype, 0);
  attr_int(c, node1(c, "Concat", b, 2, c->in[3], zeros), "axis", 0);
  const char *in[8] = { c->in[0], axis_op(c, "Unsqueeze", w_t, 0, NULL, "w"),
                        axis_op(c, "Unsqueeze", r_t, 0, NULL, "r"), axis_op(c, "Unsqueeze", b, 0, NULL, "b"), "",
                        axis_op(c, "Unsqueeze", c->in[4], 0, NULL, "initial_h"),
                        axis_op(c, "Unsqueeze", c->in[5], 0, NULL, "initial_c"), NULL };
  if (c->n->n_inputs == 7) {
    const char *p = temp(c, "p");
    node1(c, "Reshape", p, 2, c->in[6], const_i64(c, "p_shape", (int64_t[]){ 1, 3 * hidden }, 2, false));
    in[7] = p;
  }
  const char *out[3] = { temp(c, "y"), temp(c, "y_h"), temp(c, "y_c") };
  Onnx__NodeProto *node = add_node(c, "LSTM", in, c->n->n_inputs == 7 ? 8 : 7, out, 3);
  attr_int(c, node, "hidden_size", hidden);
  attr_string(c, node, "direction", attr(c->n, 0)->b ? "reverse" : "forward");
  axis_op(c, "Squeeze", out[0], 1, c->out[0], NULL);
  axis_op(c, "Squeeze", out[1], 0, c->out[1], NULL);
  axis_op(c, "Squeeze", out[2], 0, c->out[2], NULL);
  return true;
}

/* ONNX's Shape is i64, ours i32. */
static bool emit_shape(emit_ctx *c)
{
  const char *s = temp(c, "shape_i64");
  node1(c, "Shape", s, 1, c->in[0]);
  attr_int(c, node1(c, "Cast", c->out[0], 1, s), "to", onnx_data_type(c->n->outputs[0].dtype));
  return true;
}

static bool emit_fill(emit_ctx *c)
{
  ts_shape s = attr(c->n, 0)->shape;
  node1(c, "Expand", c->out[0], 2, c->in[0], const_i64(c, "shape", s.dim, s.rank, false));
  return true;
}

static bool constant_of_shape(emit_ctx *c, const char *shape, double value)
{
  attr_scalar(c, node1(c, "ConstantOfShape", c->out[0], 1, shape), "value", c->n->outputs[0].dtype, value);
  return true;
}

static bool emit_zeros_ones(emit_ctx *c, double value)
{
  ts_shape s = attr(c->n, 1)->shape;
  return constant_of_shape(c, const_i64(c, "shape", s.dim, s.rank, false), value);
}

/* A shape known when traced is a constant (importers that need
 * ConstantOfShape's shape while building take it); else Shape(x). */
static bool emit_like(emit_ctx *c, double value)
{
  ts_shape shape = c->n->outputs[0].shape;
  bool known = shape.rank != TS_RANK_UNKNOWN;
  for (int d = 0; known && d < shape.rank; d++)
    known = shape.dim[d] >= 0;
  if (known)
    return constant_of_shape(c, const_i64(c, "shape", shape.dim, shape.rank, false), value);
  const char *s = temp(c, "shape");
  node1(c, "Shape", s, 1, c->in[0]);
  return constant_of_shape(c, s, value);
}

static bool emit_zeros(emit_ctx *c) { return emit_zeros_ones(c, 0); }
static bool emit_ones(emit_ctx *c) { return emit_zeros_ones(c, 1); }
static bool emit_zeros_like(emit_ctx *c) { return emit_like(c, 0); }
static bool emit_ones_like(emit_ctx *c) { return emit_like(c, 1); }

static bool emit_eye(emit_ctx *c)
{
  int64_t dims[2] = { attr(c->n, 1)->i, attr(c->n, 2)->i };
  const char *zeros = temp(c, "zeros");
  attr_scalar(c, node1(c, "ConstantOfShape", zeros, 1, const_i64(c, "shape", dims, 2, false)), "value",
              c->n->outputs[0].dtype, 0);
  node1(c, "EyeLike", c->out[0], 1, zeros);
  return true;
}

static bool emit_range(emit_ctx *c)
{
  ts_dtype dt = attr(c->n, 0)->dtype;
  if (dt != TS_F32 && dt != TS_F64 && dt != TS_I32 && dt != TS_I64)
    return export_fail(c->ex, c->n, TS_ERR_UNIMPLEMENTED, "ONNX's Range does not make %s", ts_dtype_name(dt));
  const char *bound[3];
  static const char *const what[3] = { "start", "limit", "delta" };
  for (int i = 0; i < 3; i++) {
    char *base = g_strdup_printf("%s%s/%s", c->prefix, c->n->name, what[i]);
    bound[i] = add_initializer(c->ex, base, onnx_data_type(dt), TS_SCALAR_SHAPE,
                               scalar_bytes(c->ex, dt, attr(c->n, 1 + i)->f), ts_dtype_size(dt));
    g_free(base);
  }
  node1(c, "Range", c->out[0], 3, bound[0], bound[1], bound[2]);
  return true;
}

/* RandomUniform and RandomNormal are functions of their attributes (the
 * seed among them): the values the node makes on every call, computed
 * now, are an initializer (ONNX's random ops draw other numbers). */
static bool emit_random(emit_ctx *c)
{
  const ts_node *n = c->n;
  ts_shape shape = attr(n, 1)->shape;
  for (int d = 0; d < shape.rank; d++)
    if (shape.dim[d] < 0)
      return export_fail(c->ex, n, TS_ERR_UNIMPLEMENTED, "its shape is not fully known: ONNX's random "
                         "ops draw other numbers than ours, and only known values can be written");
  ts_tensor *v;
  ts_init_scope_begin(); /* computed, never recorded, when called while tracing */
  if (n->op == TS_OP_RANDOM_UNIFORM)
    v = ts_random_uniform_at(n->loc, attr(n, 0)->dtype, shape, attr(n, 2)->f, attr(n, 3)->f, (uint64_t)attr(n, 4)->i);
  else
    v = ts_random_normal_at(n->loc, attr(n, 0)->dtype, shape, attr(n, 2)->f, attr(n, 3)->f, (uint64_t)attr(n, 4)->i);
  ts_init_scope_end();
  if (!v)
    return export_fail(c->ex, n, TS_ERR_INTERNAL, "its values could not be computed");
  char *base = g_strdup_printf("%s%s/values", c->prefix, n->name);
  const char *values = add_initializer(c->ex, base, onnx_data_type(v->dtype), v->shape, v->data,
                                       (size_t)v->size * ts_dtype_size(v->dtype));
  g_free(base);
  node1(c, "Identity", c->out[0], 1, values);
  return true;
}

/* A condition as ONNX's If and Loop take it: bool. */
static const char *as_bool(emit_ctx *c, const char *x, ts_dtype dt, const char *what)
{
  return dt == TS_BOOL ? x : cast(c, x, TS_BOOL, what);
}

/* A subgraph of its own whose inputs are `inputs` (NULL: none, it reads
 * outer values by the names in_names) and whose outputs are copies of
 * what emit_graph leaves in outs. */
typedef struct subgraph {
  Onnx__GraphProto *g;
  egraph eg;
} subgraph;

static void subgraph_init(exporter *ex, subgraph *s, const char *name)
{
  s->g = NEW(ex, Onnx__GraphProto, ONNX__GRAPH_PROTO__INIT);
  s->g->name = (char *)name;
  s->eg = (egraph){ new_array(ex), new_array(ex), new_array(ex), new_array(ex) };
}

static void subgraph_output(emit_ctx *c, subgraph *s, const char *value, const char *what,
                            Onnx__TypeProto *type)
{
  const char *out = temp(c, what);
  egraph *saved = c->eg;
  c->eg = &s->eg;
  node1(c, "Identity", out, 1, value);
  c->eg = saved;
  g_ptr_array_add(s->eg.outputs, value_info(c->ex, out, type));
}

static void subgraph_end(subgraph *s)
{
#define TAKE(field, arr) s->g->n_##field = arr->len, s->g->field = (void *)arr->pdata
  TAKE(node, s->eg.nodes);
  TAKE(input, s->eg.inputs);
  TAKE(output, s->eg.outputs);
  TAKE(value_info, s->eg.infos);
#undef TAKE
}

static bool enter(emit_ctx *c)
{
  if (c->ex->depth + 1 <= TS_ONNX_MAX_DEPTH)
    return true;
  return export_fail(c->ex, c->n, TS_ERR_UNIMPLEMENTED,
                     "subgraphs nest deeper than " G_STRINGIFY(TS_ONNX_MAX_DEPTH));
}

/* If: the branches read the captured values (inputs 1...) by name. */
static bool emit_if(emit_ctx *c)
{
  if (!enter(c))
    return false;
  static const char *const names[2] = { "then_branch", "else_branch" };
  static const char *const parts[2] = { "then", "else" };
  Onnx__GraphProto *branch[2];
  c->ex->depth++;
  for (int b = 0; b < 2; b++) {
    const ts_graph *sub = c->n->subgraphs[b];
    char *prefix = g_strdup_printf("%s%s/%s/", c->prefix, c->n->name, parts[b]);
    subgraph s;
    subgraph_init(c->ex, &s, kept_printf(c->ex, "%s%s/%s", c->prefix, c->n->name, parts[b]));
    const char **outs = NULL;
    bool ok = (int)sub->inputs->len == c->n->n_inputs - 1 &&
              (int)sub->outputs->len == c->n->n_outputs;
    if (!ok)
      export_fail(c->ex, c->n, TS_ERR_INTERNAL, "branch '%s' does not fit the node", parts[b]);
    ok = ok && emit_graph(c->ex, &s.eg, sub, prefix, c->in + 1, &outs);
    for (int i = 0; ok && i < c->n->n_outputs; i++) {
      int32_t elem = output_elem(c->ex, c->n, i);
      ok = elem != 0;
      if (ok)
        subgraph_output(c, &s, outs[i], kept_printf(c->ex, "%s_output_%d", parts[b], i),
                        tensor_type(c->ex, elem, c->n->outputs[i].shape));
    }
    g_free(outs);
    g_free(prefix);
    if (!ok) {
      c->ex->depth--;
      return false;
    }
    subgraph_end(&s);
    branch[b] = s.g;
  }
  c->ex->depth--;
  const char *cond = as_bool(c, c->in[0], input_info(c->n, 0).dtype, "condition");
  Onnx__NodeProto *node = add_node(c, "If", &cond, 1, c->out, c->n->n_outputs);
  for (int b = 0; b < 2; b++)
    attr_graph(c, node, names[b], branch[b]);
  return true;
}

/* While: ONNX's Loop tests its condition before the first iteration from
 * an input, and after each in the body: the cond subgraph is made twice,
 * on the initial values here and on the body's results inside it. */
static bool emit_while(emit_ctx *c)
{
  const ts_graph *cond_g = c->n->subgraphs[0], *body_g = c->n->subgraphs[1];
  int n = c->n->n_inputs;
  if ((int)cond_g->inputs->len != n || (int)body_g->inputs->len != n || cond_g->outputs->len != 1 ||
      (int)body_g->outputs->len != n || c->n->n_outputs != n)
    return export_fail(c->ex, c->n, TS_ERR_INTERNAL, "the loop's subgraphs do not fit the node");
  if (!enter(c))
    return false;
  const char **cond_out = NULL, **body_out = NULL, **cond_again = NULL;
  char *prefix = g_strdup_printf("%s%s/cond/", c->prefix, c->n->name);
  bool ok = emit_graph(c->ex, c->eg, cond_g, prefix, c->in, &cond_out);
  g_free(prefix);
  const char *first = NULL;
  if (ok) {
    ts_port cp = g_array_index(cond_g->outputs, ts_port, 0);
    first = as_bool(c, cond_out[0], ts__graph_node(cond_g, cp.node)->outputs[cp.index].dtype, "first_condition");
  }

  subgraph s;
  subgraph_init(c->ex, &s, kept_printf(c->ex, "%s%s/body", c->prefix, c->n->name));
  const char **vars = g_new0(const char *, n + 1);
  int32_t *elems = g_new0(int32_t, n + 1);
  for (int i = 0; ok && i < n; i++)
    ok = (elems[i] = output_elem(c->ex, c->n, i)) != 0;
  if (ok) {
    const char *iter = temp(c, "iteration"), *cond_in = temp(c, "condition_in");
    g_ptr_array_add(s.eg.inputs, value_info(c->ex, iter, tensor_type(c->ex, onnx_data_type(TS_I64), TS_SCALAR_SHAPE)));
    g_ptr_array_add(s.eg.inputs, value_info(c->ex, cond_in, tensor_type(c->ex, onnx_data_type(TS_BOOL), TS_SCALAR_SHAPE)));
    for (int i = 0; i < n; i++) {
      vars[i] = temp(c, kept_printf(c->ex, "var_%d", i));
      g_ptr_array_add(s.eg.inputs, value_info(c->ex, vars[i], tensor_type(c->ex, elems[i], c->n->outputs[i].shape)));
    }
  }
  c->ex->depth++;
  prefix = g_strdup_printf("%s%s/body/", c->prefix, c->n->name);
  ok = ok && emit_graph(c->ex, &s.eg, body_g, prefix, vars, &body_out);
  g_free(prefix);
  prefix = g_strdup_printf("%s%s/body/cond/", c->prefix, c->n->name);
  ok = ok && emit_graph(c->ex, &s.eg, cond_g, prefix, body_out, &cond_again);
  g_free(prefix);
  c->ex->depth--;
  if (ok) {
    ts_port cp = g_array_index(cond_g->outputs, ts_port, 0);
    egraph *saved = c->eg;
    c->eg = &s.eg;
    const char *again = as_bool(c, cond_again[0], ts__graph_node(cond_g, cp.node)->outputs[cp.index].dtype,
                                "condition_bool");
    c->eg = saved;
    subgraph_output(c, &s, again, "condition_out", tensor_type(c->ex, onnx_data_type(TS_BOOL), TS_SCALAR_SHAPE));
    for (int i = 0; i < n; i++)
      subgraph_output(c, &s, body_out[i], kept_printf(c->ex, "var_%d_out", i),
                      tensor_type(c->ex, elems[i], c->n->outputs[i].shape));
    subgraph_end(&s);
    const char **in = g_new0(const char *, n + 2);
    in[0] = "";
    in[1] = first;
    memcpy(in + 2, c->in, sizeof *in * (size_t)n);
    attr_graph(c, add_node(c, "Loop", in, n + 2, c->out, n), "body", s.g);
    g_free(in);
  }
  g_free(vars);
  g_free(elems);
  g_free(cond_out);
  g_free(body_out);
  g_free(cond_again);
  return ok;
}

/* The ops ONNX has a mapping for; the others fail naming why. */
static const struct {
  ts_op op;
  emit_fn emit;
} MAPPINGS[] = {
  { TS_OP_ADD, emit_add }, { TS_OP_SUB, emit_sub }, { TS_OP_MUL, emit_mul }, { TS_OP_DIV, emit_div },
  { TS_OP_FLOORDIV, emit_floordiv }, { TS_OP_MOD, emit_mod }, { TS_OP_POW, emit_pow },
  { TS_OP_MAXIMUM, emit_maximum }, { TS_OP_MINIMUM, emit_minimum }, { TS_OP_NEG, emit_neg },
  { TS_OP_ABS, emit_abs }, { TS_OP_EXP, emit_exp }, { TS_OP_LOG, emit_log }, { TS_OP_SQRT, emit_sqrt },
  { TS_OP_TANH, emit_tanh }, { TS_OP_SIGMOID, emit_sigmoid }, { TS_OP_RELU, emit_relu },
  { TS_OP_SOFTPLUS, emit_softplus }, { TS_OP_GREATER, emit_greater },
  { TS_OP_GREATER_EQUAL, emit_greater_equal }, { TS_OP_LESS, emit_less },
  { TS_OP_LESS_EQUAL, emit_less_equal }, { TS_OP_EQUAL, emit_equal }, { TS_OP_NOT_EQUAL, emit_not_equal },
  { TS_OP_LOGICAL_AND, emit_logical_and }, { TS_OP_LOGICAL_OR, emit_logical_or },
  { TS_OP_LOGICAL_NOT, emit_logical_not }, { TS_OP_WHERE, emit_where }, { TS_OP_IDENTITY, emit_identity },
  { TS_OP_READ_VARIABLE, emit_read_variable }, { TS_OP_CAST, emit_cast }, { TS_OP_RESHAPE, emit_reshape },
  { TS_OP_FLATTEN, emit_flatten }, { TS_OP_TRANSPOSE, emit_transpose }, { TS_OP_CONCAT, emit_concat },
  { TS_OP_SPLIT, emit_split }, { TS_OP_SLICE, emit_slice }, { TS_OP_GATHER, emit_gather },
  { TS_OP_REDUCE_SUM, emit_reduce_sum }, { TS_OP_REDUCE_MEAN, emit_reduce_mean },
  { TS_OP_REDUCE_MAX, emit_reduce_max }, { TS_OP_REDUCE_MIN, emit_reduce_min },
  { TS_OP_REDUCE_PROD, emit_reduce_prod }, { TS_OP_ARGMAX, emit_argmax }, { TS_OP_MATMUL, emit_matmul },
  { TS_OP_SOFTMAX, emit_softmax }, { TS_OP_LOG_SOFTMAX, emit_log_softmax },
  { TS_OP_SPARSE_SOFTMAX_CROSS_ENTROPY, emit_sparse_softmax_cross_entropy },
  { TS_OP_CONV2D, emit_conv2d }, { TS_OP_MAX_POOL2D, emit_max_pool2d }, { TS_OP_SHAPE, emit_shape },
  { TS_OP_FILL, emit_fill }, { TS_OP_ZEROS, emit_zeros }, { TS_OP_ONES, emit_ones },
  { TS_OP_ZEROS_LIKE, emit_zeros_like }, { TS_OP_ONES_LIKE, emit_ones_like }, { TS_OP_EYE, emit_eye },
  { TS_OP_RANGE, emit_range }, { TS_OP_RANDOM_UNIFORM, emit_random }, { TS_OP_RANDOM_NORMAL, emit_random },
  { TS_OP_IF, emit_if }, { TS_OP_WHILE, emit_while }, { TS_OP_SIN, emit_sin },
  { TS_OP_COS, emit_cos }, { TS_OP_TAN, emit_tan }, { TS_OP_ASIN, emit_asin }, { TS_OP_ACOS, emit_acos },
  { TS_OP_ATAN, emit_atan }, { TS_OP_SINH, emit_sinh }, { TS_OP_COSH, emit_cosh }, { TS_OP_ASINH, emit_asinh },
  { TS_OP_ACOSH, emit_acosh }, { TS_OP_ATANH, emit_atanh }, { TS_OP_ERF, emit_erf }, { TS_OP_SIGN, emit_sign },
  { TS_OP_ROUND, emit_round }, { TS_OP_ARGMIN, emit_argmin }, { TS_OP_CUMSUM, emit_cumsum },
  { TS_OP_TOP_K, emit_top_k }, { TS_OP_REDUCE_ANY, emit_any_all }, { TS_OP_REDUCE_ALL, emit_any_all }, { TS_OP_SORT, emit_sort }, { TS_OP_ARGSORT, emit_sort },
  { TS_OP_CONV_TRANSPOSE, emit_conv_transpose }, { TS_OP_LSTM_SEQUENCE, emit_lstm_sequence },
  { TS_OP_FLOOR, emit_floor }, { TS_OP_CEIL, emit_ceil }, { TS_OP_SQUARE, emit_square },
  { TS_OP_RSQRT, emit_rsqrt }, { TS_OP_RECIPROCAL, emit_reciprocal }, { TS_OP_LOG1P, emit_log1p },
  { TS_OP_EXPM1, emit_expm1 }, { TS_OP_ELU, emit_elu }, { TS_OP_SELU, emit_selu }, { TS_OP_RELU6, emit_relu6 },
  { TS_OP_SOFTSIGN, emit_softsign }, { TS_OP_IS_NAN, emit_is_nan }, { TS_OP_IS_INF, emit_is_inf },
  { TS_OP_IS_FINITE, emit_is_finite }, { TS_OP_GELU, emit_gelu },
  { TS_OP_SQUARED_DIFFERENCE, emit_squared_difference }, { TS_OP_TRUNCATEDIV, emit_truncatediv },
  { TS_OP_TRUNCATEMOD, emit_truncatemod }, { TS_OP_DIV_NO_NAN, emit_div_no_nan }, { TS_OP_XLOGY, emit_xlogy },
  { TS_OP_PACK, emit_pack }, { TS_OP_UNPACK, emit_unpack }, { TS_OP_TILE, emit_tile }, { TS_OP_PAD, emit_pad },
  { TS_OP_REVERSE, emit_reverse }, { TS_OP_ONE_HOT, emit_one_hot },
};

/* Why an op has none. */
static const struct {
  ts_op op;
  const char *why;
} UNMAPPED[] = {
  { TS_OP_PRINT, "an ONNX graph cannot print" },
  { TS_OP_ASSERT, "ONNX has no Assert op (an ONNX graph cannot fail a run)" },
  { TS_OP_ASSIGN_VARIABLE, "an ONNX graph has no state to assign" },
  { TS_OP_ASSIGN_ADD_VARIABLE, "an ONNX graph has no state to assign" },
  { TS_OP_ASSIGN_SUB_VARIABLE, "an ONNX graph has no state to assign" },
  { TS_OP_STATELESS_RANDOM_UNIFORM, "ONNX's RandomUniform takes its seed as an attribute, not a tensor" },
  { TS_OP_SHUFFLE_INDICES, "ONNX has no tf.data shuffle order" },
  { TS_OP_ATAN2, "ONNX (opset 17) has no atan2, and Atan(y / x) loses the quadrant, the signed zeros and the infinities" },
  { TS_OP_CUMPROD, "ONNX has no cumulative product (only CumSum)" },
};

static emit_fn mapping(ts_op op)
{
  for (size_t i = 0; i < G_N_ELEMENTS(MAPPINGS); i++)
    if (MAPPINGS[i].op == op)
      return MAPPINGS[i].emit;
  return NULL;
}

static bool emit_unmapped(exporter *ex, const ts_node *n)
{
  for (size_t i = 0; i < G_N_ELEMENTS(UNMAPPED); i++)
    if (UNMAPPED[i].op == n->op)
      return export_fail(ex, n, TS_ERR_UNIMPLEMENTED, "op %s has no ONNX mapping: %s", ts_op_name(n->op),
                         UNMAPPED[i].why);
  return export_fail(ex, n, TS_ERR_UNIMPLEMENTED, "op %s has no ONNX mapping", ts_op_name(n->op));
}

/* ---- graphs ---------------------------------------------------------------------------- */

/* The nodes g's outputs need, and its stateful nodes (which fail: an
 * export drops nothing). */
static bool *needed_nodes(const ts_graph *g)
{
  int n = (int)g->nodes->len;
  bool *needed = g_new0(bool, n + 1);
  int *stack = g_new(int, n + 1), top = 0;
  for (int id = 0; id < n; id++)
    if (ts__graph_node(g, id)->stateful)
      needed[id] = true, stack[top++] = id;
  for (guint i = 0; i < g->outputs->len; i++) {
    int id = g_array_index(g->outputs, ts_port, i).node;
    if (!needed[id])
      needed[id] = true, stack[top++] = id;
  }
  while (top > 0) {
    const ts_node *node = ts__graph_node(g, stack[--top]);
    for (int i = 0; i < node->n_inputs; i++)
      if (!needed[node->inputs[i].node])
        needed[node->inputs[i].node] = true, stack[top++] = node->inputs[i].node;
  }
  g_free(stack);
  return needed;
}

/* A Const or VarHandle's value as an initializer. */
static const char *value_initializer(exporter *ex, const ts_node *n, const char *base)
{
  const ts_tensor *v = n->value;
  int32_t elem = v ? onnx_data_type(v->dtype) : 0;
  if (!elem) {
    export_fail(ex, n, TS_ERR_UNIMPLEMENTED, "its value is %s, which ONNX tensors cannot hold",
                v ? ts_dtype_name(v->dtype) : "missing");
    return NULL;
  }
  ts_tensor *host = ts__tensor_host((ts_loc){ 0 }, v); /* in ts_concrete_save_onnx's scope */
  if (!host)
    return NULL;
  return add_initializer(ex, base, elem, host->shape, host->data, (size_t)host->size * ts_dtype_size(host->dtype));
}

/* A needed node ONNX cannot express is refused before anything it reads
 * is written: the error names its op (an Assert's message, a string
 * constant, would be refused first otherwise). */
static bool refuse_unmapped(exporter *ex, const ts_graph *g, const bool *needed)
{
  for (guint id = 0; id < g->nodes->len; id++) {
    const ts_node *n = ts__graph_node(g, (int)id);
    if (needed[id] && n->op != TS_OP_PLACEHOLDER && n->op != TS_OP_CONST &&
        n->op != TS_OP_VAR_HANDLE && !mapping(n->op))
      return emit_unmapped(ex, n);
  }
  return true;
}

/* Emits g's needed nodes into eg; Placeholder i reads input_names[i]
 * (NULL: the top graph, whose Placeholders become eg's inputs).
 * *outputs (g_free) gets the ONNX names of g's outputs. */
static bool emit_graph(exporter *ex, egraph *eg, const ts_graph *g, const char *prefix,
                       const char *const *input_names, const char ***outputs)
{
  int n_nodes = (int)g->nodes->len;
  bool *needed = needed_nodes(g);
  const char ***names = g_new0(const char **, n_nodes + 1);
  bool ok = refuse_unmapped(ex, g, needed);
  for (int id = 0; id < n_nodes && ok; id++) {
    const ts_node *n = ts__graph_node(g, id);
    if (!needed[id])
      continue;
    names[id] = g_new0(const char *, n->n_outputs + 1);
    char *base = g_strdup_printf("%s%s", prefix, n->name);
    if (n->op == TS_OP_PLACEHOLDER && input_names) {
      names[id][0] = input_names[n->input_index];
    } else if (n->op == TS_OP_PLACEHOLDER) {
      int32_t elem = output_elem(ex, n, 0);
      ok = elem != 0;
      if (ok) {
        names[id][0] = new_value(ex, base);
        g_ptr_array_add(eg->inputs, value_info(ex, names[id][0], tensor_type(ex, elem, n->outputs[0].shape)));
      }
    } else if (n->op == TS_OP_CONST || n->op == TS_OP_VAR_HANDLE) {
      ok = (names[id][0] = value_initializer(ex, n, base)) != NULL;
    } else {
      emit_fn emit = mapping(n->op);
      const char **in = g_new0(const char *, n->n_inputs + 1);
      for (int i = 0; i < n->n_inputs; i++)
        in[i] = names[n->inputs[i].node][n->inputs[i].index];
      int32_t *elems = g_new0(int32_t, n->n_outputs + 1);
      for (int k = 0; k < n->n_outputs && ok && emit; k++) {
        ok = (elems[k] = output_elem(ex, n, k)) != 0;
        char *vbase = k ? g_strdup_printf("%s:%d", base, k) : g_strdup(base);
        names[id][k] = new_value(ex, vbase);
        g_free(vbase);
      }
      emit_ctx c = { ex, eg, n, prefix, in, names[id] };
      ok = ok && (emit ? emit(&c) : emit_unmapped(ex, n)) && !ex->failed;
      for (int k = 0; k < n->n_outputs && ok; k++)
        g_ptr_array_add(eg->infos, value_info(ex, names[id][k], tensor_type(ex, elems[k], n->outputs[k].shape)));
      g_free(elems);
      g_free(in);
    }
    g_free(base);
  }
  if (ok) {
    *outputs = g_new0(const char *, g->outputs->len + 1);
    for (guint i = 0; i < g->outputs->len; i++) {
      ts_port p = g_array_index(g->outputs, ts_port, i);
      (*outputs)[i] = names[p.node][p.index];
    }
  }
  for (int id = 0; id < n_nodes; id++)
    g_free(names[id]);
  g_free(names);
  g_free(needed);
  return ok;
}

/* The top graph's outputs: a value a node makes is an output under its
 * own name; an input, an initializer or a value listed twice is copied
 * out by an Identity first (ONNX wants outputs made by nodes, each once). */
static bool top_outputs(exporter *ex, egraph *eg, const ts_graph *g, const char **outs)
{
  GHashTable *made = g_hash_table_new(g_str_hash, g_str_equal), *used = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < eg->nodes->len; i++) {
    const Onnx__NodeProto *node = eg->nodes->pdata[i];
    for (size_t k = 0; k < node->n_output; k++)
      g_hash_table_add(made, node->output[k]);
  }
  bool ok = true;
  for (guint i = 0; i < g->outputs->len && ok; i++) {
    ts_port p = g_array_index(g->outputs, ts_port, i);
    const ts_node *n = ts__graph_node(g, p.node);
    int32_t elem = output_elem(ex, n, p.index);
    ok = elem != 0;
    if (!ok)
      break;
    const char *name = outs[i];
    if (!g_hash_table_contains(made, name) || g_hash_table_contains(used, name)) {
      emit_ctx c = { ex, eg, n, "", NULL, NULL };
      char *base = g_strdup_printf("output_%u", i);
      const char *copy = new_value(ex, base);
      g_free(base);
      node1(&c, "Identity", copy, 1, name);
      name = copy;
    }
    g_hash_table_add(used, (char *)name);
    g_ptr_array_add(eg->outputs, value_info(ex, name, tensor_type(ex, elem, n->outputs[p.index].shape)));
  }
  g_hash_table_destroy(made);
  g_hash_table_destroy(used);
  return ok;
}

static bool write_model(exporter *ex, const Onnx__ModelProto *m)
{
  size_t size = onnx__model_proto__get_packed_size(m);
  uint8_t *bytes = g_try_malloc(size ? size : 1);
  if (!bytes) {
    ts_error_set(TS_ERR_NO_MEMORY, (ts_loc){ 0 }, NULL, "%s: no memory for the %zu bytes of the model",
                 ex->path, size);
    return false;
  }
  onnx__model_proto__pack(m, bytes);
  GError *error = NULL;
  bool ok = g_file_set_contents(ex->path, (const char *)bytes, (gssize)size, &error);
  if (!ok) {
    ts_error_set(TS_ERR_IO, (ts_loc){ 0 }, NULL, "%s", error->message);
    g_error_free(error);
  }
  g_free(bytes);
  return ok;
}

static bool save_graph(const ts_graph *g, const char *path)
{
  exporter ex = {
    .path = path,
    .blocks = g_ptr_array_new_with_free_func(g_free),
    .arrays = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref),
    .values = g_hash_table_new(g_str_hash, g_str_equal),
    .nodes = g_hash_table_new(g_str_hash, g_str_equal),
  };
  ex.inits = new_array(&ex);
  egraph eg = { new_array(&ex), new_array(&ex), new_array(&ex), new_array(&ex) };
  const char **outs = NULL;
  ts_scope *scope = ts_scope_begin(); /* host copies of values on devices */
  bool ok = emit_graph(&ex, &eg, g, "", NULL, &outs) && top_outputs(&ex, &eg, g, outs);
  if (ok && g->outputs->len == 0) { /* its stateful ops, if any, failed above */
    ts_error_set(TS_ERR_UNIMPLEMENTED, (ts_loc){ 0 }, NULL,
                 "%s: cannot export '%s': it returns None, and an ONNX model gives outputs",
                 path, g->name);
    ok = false;
  }
  if (ok) {
    Onnx__GraphProto graph = ONNX__GRAPH_PROTO__INIT;
    graph.name = g->name;
    graph.n_node = eg.nodes->len, graph.node = (Onnx__NodeProto **)eg.nodes->pdata;
    graph.n_input = eg.inputs->len, graph.input = (Onnx__ValueInfoProto **)eg.inputs->pdata;
    graph.n_output = eg.outputs->len, graph.output = (Onnx__ValueInfoProto **)eg.outputs->pdata;
    graph.n_value_info = eg.infos->len, graph.value_info = (Onnx__ValueInfoProto **)eg.infos->pdata;
    graph.n_initializer = ex.inits->len, graph.initializer = (Onnx__TensorProto **)ex.inits->pdata;
    Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    opset.domain = "";
    opset.has_version = true;
    opset.version = EXPORT_OPSET;
    Onnx__OperatorSetIdProto *opsets[1] = { &opset };
    Onnx__ModelProto model = ONNX__MODEL_PROTO__INIT;
    model.has_ir_version = true;
    model.ir_version = EXPORT_IR_VERSION;
    model.producer_name = "tracescope";
    model.n_opset_import = 1;
    model.opset_import = opsets;
    model.graph = &graph;
    ok = write_model(&ex, &model);
  }
  ts_scope_end(scope);
  g_free(outs);
  g_hash_table_destroy(ex.values);
  g_hash_table_destroy(ex.nodes);
  g_ptr_array_unref(ex.arrays);
  g_ptr_array_unref(ex.blocks);
  return ok;
}

bool ts_concrete_save_onnx(const ts_concrete *cf, const char *path)
{
  if (!cf || !path) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL, "ts_concrete_save_onnx: %s is NULL",
                 cf ? "path" : "the concrete function");
    return false;
  }
  return save_graph(ts_concrete_graph(cf), path);
}
