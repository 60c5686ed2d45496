/* test-op-rows.c — every op row, as ggml's test-backend-ops does it: each
 * case runs in every mode (eagerly; as a graph without passes; as a graph
 * with every pass; and so with the inputs' dims unknown when traced) on
 * every registered backend (ts_backend_count), and its result, or the
 * code of the error it gives, must be what the CPU gives eagerly.
 *
 * Elementwise rows need no case of their own: every op of TS__UNARY and
 * TS__BINARY (tracescope.h) runs over every dtype and a set of shapes
 * (broadcasting, rank 0, size 0).  The other rows have hand-written cases
 * below; rows that cannot run alone are covered the natural way (graph
 * inputs and constants by every graph case, If and While by the tracing
 * API, the fused ops by graphs the fusion pass fuses).  A row counts as
 * covered when a case ran it without error: eagerly (op events) or in an
 * optimized graph that ran.  The coverage line lists rows without cases,
 * and any makes the test fail. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <tracescope-backend.h>
#include <tracescope.h>

#include "test-quiet.h"

#define ALL_PASSES "layout,fold,cse,simplify,dce,fuse"
#define MAX_ARGS 4

typedef enum mode { MODE_EAGER, MODE_GRAPH, MODE_PASSES, MODE_UNKNOWN_DIMS, N_MODES } mode;
static const char *const MODE_NAMES[N_MODES] = { "eager", "graph", "graph with every pass",
                                                 "graph with every pass, dims unknown" };

typedef ts_tensor *(*unary_fn)(ts_loc loc, ts_tensor *x);
typedef ts_tensor *(*binary_fn)(ts_loc loc, ts_tensor *a, ts_tensor *b);

typedef struct op_case {
  char name[96];
  ts_fn body;
  int n_args;
  ts_tensor *args[MAX_ARGS];
  unary_fn unary; /* generated elementwise cases */
  binary_fn binary;
  ts_op op;       /* hand-written cases: the row they are for */
  int edge;       /* edge cases: which (EDGES) */
} op_case;

/* The case being run: what the bodies read while they run or trace. */
static const op_case *current;
static bool no_case; /* set by a body that has no case for current->op */
static bool covered[TS_OP_COUNT];
static int n_runs;

/* ---- elementwise rows: generated ------------------------------------------------------ */

static const struct {
  const char *name;
  unary_fn fn;
} UNARY[] = {
#define UNARY_ENTRY(name) { #name, ts_##name##_at },
  TS__UNARY(UNARY_ENTRY)
#undef UNARY_ENTRY
};

static const struct {
  const char *name;
  binary_fn fn;
} BINARY[] = {
#define BINARY_ENTRY(name) { #name, ts_##name##_at },
  TS__BINARY(BINARY_ENTRY)
#undef BINARY_ENTRY
};

static ts_tensor *unary_body(ts_call *c)
{
  return current->unary(TS_HERE, ts_arg(c, 0));
}

static ts_tensor *binary_body(ts_call *c)
{
  return current->binary(TS_HERE, ts_arg(c, 0), ts_arg(c, 1));
}

/* Values of every sign and size the dtype holds, n of them, from seed;
 * positive (1 to 7) for a divisor or an exponent. */
static ts_tensor *values(ts_dtype dt, ts_shape shape, int seed, bool positive)
{
  static const double MIXED[] = { 1.5, -2, 3, 0.25, 5, -6, 0, 7, -0.5, 2 };
  int64_t n = ts_shape_size(shape);
  double *v = g_new(double, n ? n : 1);
  for (int64_t k = 0; k < n; k++) {
    double x = MIXED[(k + seed) % G_N_ELEMENTS(MIXED)];
    if (positive)
      x = 1 + (k + seed) % 7;
    else if (dt == TS_U8 || dt == TS_U16 || dt == TS_U32 || dt == TS_U64)
      x = fabs(x) * 30; /* wraps in arithmetic */
    else if (dt == TS_BOOL)
      x = (k + seed) % 3 != 0;
    v[k] = x;
  }
  ts_tensor *t = ts_cast(ts_constant(TS_F64, shape, v), dt);
  g_free(v);
  return t;
}

static const ts_dtype DTYPES[] = { TS_F32, TS_F64, TS_I32, TS_I64, TS_U8, TS_BOOL, TS_I8,
                                   TS_I16, TS_U16, TS_U32, TS_U64, TS_F16, TS_BF16 };

static int unary_cases(op_case *out)
{
  const ts_shape shapes[] = { TS_SHAPE(2, 3), TS_SHAPE(), TS_SHAPE(0, 3), TS_SHAPE(37) };
  int n = 0;
  for (size_t u = 0; u < G_N_ELEMENTS(UNARY); u++)
    for (size_t d = 0; d < G_N_ELEMENTS(DTYPES); d++)
      for (size_t s = 0; s < G_N_ELEMENTS(shapes); s++) {
        op_case *c = &out[n++];
        char *sh = ts_shape_dtype_string(DTYPES[d], shapes[s]);
        snprintf(c->name, sizeof c->name, "%s(%s)", UNARY[u].name, sh);
        free(sh);
        c->body = unary_body;
        c->unary = UNARY[u].fn;
        c->n_args = 1;
        c->args[0] = values(DTYPES[d], shapes[s], (int)s, false);
      }
  return n;
}

static int binary_cases(op_case *out)
{
  /* equal shapes, a vector broadcast along rows, an outer broadcast, a
   * scalar on either side, rank 0 both, size 0 */
  const ts_shape shapes[][2] = {
    { TS_SHAPE(2, 3), TS_SHAPE(2, 3) }, { TS_SHAPE(2, 3), TS_SHAPE(3) },
    { TS_SHAPE(4, 1), TS_SHAPE(1, 5) }, { TS_SHAPE(), TS_SHAPE(2, 3) },
    { TS_SHAPE(2, 3), TS_SHAPE() },     { TS_SHAPE(), TS_SHAPE() },
    { TS_SHAPE(0, 3), TS_SHAPE(3) },
  };
  int n = 0;
  for (size_t o = 0; o < G_N_ELEMENTS(BINARY); o++)
    for (size_t d = 0; d < G_N_ELEMENTS(DTYPES); d++)
      for (size_t s = 0; s < G_N_ELEMENTS(shapes); s++) {
        op_case *c = &out[n++];
        char *sa = ts_shape_dtype_string(DTYPES[d], shapes[s][0]);
        char *sb = ts_shape_dtype_string(DTYPES[d], shapes[s][1]);
        snprintf(c->name, sizeof c->name, "%s(%s, %s)", BINARY[o].name, sa, sb);
        free(sa);
        free(sb);
        c->body = binary_body;
        c->binary = BINARY[o].fn;
        c->n_args = 2;
        c->args[0] = values(DTYPES[d], shapes[s][0], (int)s, false);
        c->args[1] = values(DTYPES[d], shapes[s][1], (int)s + 1, true);
      }
  return n;
}

/* ---- the other rows: one case each ---------------------------------------------------- */

/* A variable the state cases use, and Adam's slots for it: made afresh
 * before every run. */
static ts_tensor *variable, *slot[2];

/* TopKV2's values and indices as float32, joined. */
static ts_tensor *top_k_joined(ts_tensor *x, int k)
{
  ts_tensor *values, *indices;
  if (!ts_top_k(x, k, &values, &indices))
    return NULL;
  return ts_concat(((ts_tensor *[]){ ts_cast(values, TS_F32), ts_cast(indices, TS_F32) }), 2, 0);
}

/* The arguments of every hand-written case: x f32[2,3], p (positive)
 * f32[2,3], i i32[2,3], b bool[2,3].  Several outputs: concatenated. */
static ts_tensor *row_body(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *p = ts_arg(c, 1), *i = ts_arg(c, 2), *b = ts_arg(c, 3);
  switch (current->op) {
  case TS_OP_FILL: return ts_fill(TS_SHAPE(2, 2), ts_reduce_sum(x, TS_ALL_AXES, false));
  case TS_OP_ZEROS: return ts_add(ts_zeros(TS_F32, TS_SHAPE(2, 3)), x);
  case TS_OP_ONES: return ts_add(ts_ones(TS_I32, TS_SHAPE(2, 3)), i);
  case TS_OP_ZEROS_LIKE: return ts_zeros_like(x);
  case TS_OP_ONES_LIKE: return ts_ones_like(i);
  case TS_OP_EYE: return ts_matmul(ts_eye(TS_F32, 2, 2), x);
  case TS_OP_RANGE: return ts_range(TS_I32, 2, 11, 3);
  case TS_OP_RANDOM_UNIFORM: return ts_random_uniform(TS_F32, TS_SHAPE(4, 4), -1, 1, 7);
  case TS_OP_RANDOM_NORMAL: return ts_random_normal(TS_F64, TS_SHAPE(8), 0, 2, 9);
  case TS_OP_STATELESS_RANDOM_UNIFORM: /* the stream's counter from the inputs */
    return ts_stateless_random_uniform(TS_F32, TS_SHAPE(4, 4), -1, 1, 7,
                                       ts_reduce_sum(i, TS_ALL_AXES, false));
  case TS_OP_SHUFFLE_INDICES: return ts_shuffle_indices(10, 4, 5, ts_reduce_max(i, TS_ALL_AXES, false));
  case TS_OP_SUM_TO: return ts_sum_to(x, ts_reduce_sum(p, TS_AXES(0), true));
  case TS_OP_CAST: return ts_cast(x, TS_I32);
  case TS_OP_RESHAPE: return ts_reshape(x, TS_SHAPE(3, -1));
  case TS_OP_FLATTEN: return ts_flatten(ts_reshape(x, TS_SHAPE(1, 2, 3)));
  case TS_OP_TRANSPOSE: return ts_transpose(x, TS_ALL_AXES);
  case TS_OP_CONCAT: return ts_concat(((ts_tensor *[]){ x, p }), 2, 1);
  case TS_OP_SPLIT: {
    ts_tensor *parts[3];
    if (ts_split(x, 3, 1, parts) != 3)
      return NULL;
    return ts_concat(parts, 3, 0);
  }
  case TS_OP_PACK: return ts_pack(((ts_tensor *[]){ x, p, x }), 3, 1);
  case TS_OP_UNPACK: {
    ts_tensor *parts[3];
    if (ts_unpack(x, 3, -1, parts) != 3)
      return NULL;
    return ts_concat(parts, 3, 0);
  }
  case TS_OP_TILE: return ts_tile(x, TS_INTS(2, 3));
  case TS_OP_PAD: return ts_pad(x, TS_INTS(1, 2), TS_INTS(0, 1), TS_PAD_CONSTANT, ts_reduce_max(p, TS_ALL_AXES, false));
  case TS_OP_REVERSE: return ts_reverse(x, TS_INTS(-1, 0));
  case TS_OP_ONE_HOT: /* i holds negative indices and ones past the depth */
    return ts_one_hot(i, 4, ts_reduce_max(p, TS_ALL_AXES, false), ts_scalar_f32(-1), 1, TS_F32);
  case TS_OP_SLICE: return ts_slice(x, TS_INTS(0, 1), TS_INTS(2, -1));
  case TS_OP_GATHER: return ts_gather(x, ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 2, 0, 2 }), 1);
  case TS_OP_WHERE: return ts_where(b, x, ts_cast(i, TS_F32));
  case TS_OP_REDUCE_SUM: return ts_reduce_sum(x, TS_AXES(1), false);
  case TS_OP_REDUCE_MEAN: return ts_reduce_mean(i, TS_ALL_AXES, true);
  case TS_OP_REDUCE_MAX: return ts_reduce_max(x, TS_AXES(0), false);
  case TS_OP_REDUCE_MIN: return ts_reduce_min(i, TS_AXES(-1), true);
  case TS_OP_REDUCE_PROD: return ts_reduce_prod(x, TS_ALL_AXES, false);
  case TS_OP_ARGMAX: return ts_argmax(x, 1);
  case TS_OP_ARGMIN: return ts_argmin(x, 0);
  case TS_OP_CUMSUM: return ts_cumsum(x, 1, false, false);
  case TS_OP_CUMPROD: return ts_cumprod(x, 0, true, false);
  case TS_OP_REDUCE_ANY: return ts_reduce_any(b, TS_AXES(1), false);
  case TS_OP_REDUCE_ALL: return ts_reduce_all(ts_greater(x, ts_scalar_f32(-3)), TS_ALL_AXES, true);
  case TS_OP_TOP_K: return top_k_joined(x, 2);
  case TS_OP_SORT: return ts_sort(x, 0, true);
  case TS_OP_ARGSORT: return ts_argsort(i, 1, false);
  case TS_OP_MATMUL: return ts_matmul_t(x, p, false, true);
  case TS_OP_SOFTMAX: return ts_softmax(x);
  case TS_OP_LOG_SOFTMAX: return ts_log_softmax(x);
  case TS_OP_SPARSE_SOFTMAX_CROSS_ENTROPY:
    return ts_sparse_softmax_cross_entropy(ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 2, 0 }),
                                           x);
  case TS_OP_CONV2D:
  case TS_OP_FUSED_CONV2D: /* the fusion pass makes the bias and Relu its epilogue */
  {
    ts_tensor *rows = ts_concat(((ts_tensor *[]){ x, p, x, p }), 4, 0);
    ts_tensor *image = ts_reshape(rows, TS_SHAPE(1, 3, 4, 2));
    ts_tensor *filter = ts_reshape(ts_range(TS_F32, -9, 9, 1), TS_SHAPE(3, 3, 2, 1));
    ts_tensor *bias = ts_constant(TS_F32, TS_SHAPE(1), (float[]){ 0.5f });
    return ts_relu(ts_add(ts_conv2d(image, filter, 1, 1, TS_PADDING_SAME), bias));
  }
  case TS_OP_CONV2D_BACKPROP_INPUT: /* the gradients of a convolution and a pool */
  case TS_OP_CONV2D_BACKPROP_FILTER:
  case TS_OP_MAX_POOL2D_GRAD: {
    ts_tensor *image = ts_reshape(ts_concat(((ts_tensor *[]){ x, p, x, p }), 4, 0),
                                  TS_SHAPE(1, 3, 4, 2));
    ts_tensor *filter = ts_reshape(ts_range(TS_F32, -4, 4, 1), TS_SHAPE(2, 2, 2, 1));
    ts_tape *tape = ts_tape_new(false);
    ts_tape_watch(tape, image);
    ts_tape_watch(tape, filter);
    ts_tensor *y = ts_reduce_sum(ts_max_pool2d(ts_conv2d(image, filter, 1, 2, TS_PADDING_SAME), 2, 1,
                                               1, 1, TS_PADDING_VALID),
                                 TS_ALL_AXES, false);
    ts_tensor *g[2];
    bool ok = ts_tape_gradient(tape, y, ((ts_tensor *[]){ image, filter }), 2, g,
                               TS_UNCONNECTED_NONE);
    ts_tape_free(tape);
    return ok ? ts_concat(((ts_tensor *[]){ ts_reshape(g[0], TS_SHAPE(-1)),
                                            ts_reshape(g[1], TS_SHAPE(-1)) }), 2, 0)
              : NULL;
  }
  case TS_OP_MAX_POOL2D:
    return ts_max_pool2d(ts_reshape(ts_concat(((ts_tensor *[]){ x, p, x, p }), 4, 0),
                                    TS_SHAPE(1, 4, 3, 2)), 2, 2, 2, 2, TS_PADDING_VALID);
  case TS_OP_FUSED_MATMUL: /* MatMul + bias + Tanh: one _FusedMatMul */
    return ts_tanh(ts_add(ts_matmul_t(x, p, false, true),
                          ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, -1 })));
  case TS_OP_FUSED_ELEMENTWISE: /* a chain of fusible rows: one FusedElementwise */
    return ts_softplus(ts_maximum(ts_mul(ts_sub(x, p), ts_sigmoid(p)), ts_neg(ts_abs(x))));
  case TS_OP_IDENTITY: return ts_identity(x);
  case TS_OP_SHAPE: return ts_shape(x);
  case TS_OP_PRINT:
    if (!ts_print(x, "row", ts_scalar_string("print")))
      return NULL;
    return ts_identity(x);
  case TS_OP_ASSERT: /* a check that holds: its node runs though nothing reads it */
    if (!ts_assert(ts_reduce_min(ts_greater(p, ts_scalar_f32(0)), TS_ALL_AXES, false), "p > 0", p))
      return NULL;
    return ts_identity(x);
  case TS_OP_PLACEHOLDER: /* every graph case has them; a constant too */
  case TS_OP_CONST: return ts_add(x, ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 1, 2, 3 }));
  case TS_OP_VAR_HANDLE:
  case TS_OP_READ_VARIABLE: return ts_add(ts_read(variable), x);
  case TS_OP_ASSIGN_VARIABLE:
  case TS_OP_ASSIGN_ADD_VARIABLE:
  case TS_OP_ASSIGN_SUB_VARIABLE: {
    ts_tensor *r = current->op == TS_OP_ASSIGN_VARIABLE       ? ts_assign(variable, p)
                   : current->op == TS_OP_ASSIGN_ADD_VARIABLE ? ts_assign_add(variable, p)
                                                              : ts_assign_sub(variable, p);
    return ts_add(r, ts_read(variable)); /* the variable itself changed */
  }
  case TS_OP_APPLY_ADAM: { /* one Adam step: the variable and both slots change */
    ts_tensor *f[6];
    const float values[6] = { 0.9f, 0.999f, 0.5f, 0.9f, 0.999f, 1e-7f };
    for (int k = 0; k < 6; k++)
      f[k] = ts_scalar_f32(values[k]);
    if (!ts_apply_adam(variable, slot[0], slot[1], f[0], f[1], f[2], f[3], f[4], f[5], ts_mul(x, p)))
      return NULL;
    return ts_concat(((ts_tensor *[]){ ts_read(variable), ts_read(slot[0]), ts_read(slot[1]) }), 3, 0);
  }
  case TS_OP_IF: { /* a tensor condition: an If node in a graph */
    ts_tensor *y = x;
    TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0)), &y) {
      y = ts_mul(x, p);
    } TS_ELSE {
      y = ts_sub(x, p);
    } TS_END_IF;
    return y;
  }
  case TS_OP_WHILE: { /* doubles x until its sum passes 100: a While node */
    ts_tensor *y = p;
    TS_WHILE (ts_less(ts_reduce_sum(y, TS_ALL_AXES, false), ts_scalar_f32(100)), &y) {
      y = ts_mul(y, ts_scalar_f32(2));
    }
    return y;
  }
  case TS_OP_TENSOR_LIST_RESERVE:
  case TS_OP_TENSOR_LIST_SET_ITEM:
  case TS_OP_TENSOR_LIST_GET_ITEM:
  case TS_OP_TENSOR_LIST_STACK: { /* tensor arrays: TensorList ops in a graph */
    ts_tensor *ta = ts_tensor_array(TS_F32, ts_scalar_i32(2));
    ta = ts_tensor_array_write(ta, ts_scalar_i32(0), x);
    ta = ts_tensor_array_write(ta, ts_scalar_i32(1), p);
    return ts_add(ts_reshape(ts_tensor_array_stack(ta), TS_SHAPE(2, 2, 3)),
                  ts_tensor_array_read(ta, ts_scalar_i32(1)));
  }
  case TS_OP_TENSOR_LIST_LENGTH:
  case TS_OP_TENSOR_LIST_INSERT:
  case TS_OP_TENSOR_LIST_ERASE:
  case TS_OP_TENSOR_LIST_CONCAT: { /* a sequence: inserts at both ends and inside, an erase */
    ts_tensor *ta = ts_tensor_array(TS_F32, ts_scalar_i32(0));
    ta = ts_tensor_list_insert(ta, ts_scalar_i32(0), x);
    ta = ts_tensor_list_insert(ta, ts_scalar_i64(0), p);            /* p x */
    ta = ts_tensor_list_insert(ta, ts_scalar_i32(-1), ts_mul(x, p)); /* p xp x */
    ta = ts_tensor_list_insert(ta, ts_scalar_i32(3), ts_neg(x));     /* p xp x -x */
    ta = ts_tensor_list_erase(ta, ts_scalar_i32(-4));               /* xp x -x */
    ts_tensor *n = ts_cast(ts_tensor_list_length(ta), TS_F32);
    return ts_add(ts_tensor_list_concat(ta, -1), n);
  }
  case TS_OP_OPTIONAL_FROM_VALUE:
  case TS_OP_OPTIONAL_NONE:
  case TS_OP_OPTIONAL_HAS_VALUE:
  case TS_OP_OPTIONAL_GET_VALUE: { /* an optional with a value, one without */
    ts_tensor *some = ts_optional_from_value(x), *none = ts_optional_none();
    ts_tensor *has = ts_logical_and(ts_optional_has_value(some),
                                    ts_logical_not(ts_optional_has_value(none)));
    return ts_where(has, ts_optional_get_value(some), p);
  }
  case TS_OP_AS_STRING:
  case TS_OP_STRING_TO_NUMBER:
  case TS_OP_STRING_LOWER:
  case TS_OP_STRING_UPPER: { /* numbers to text and back (the text's case changed) */
    ts_tensor *text = ts_string_upper(ts_string_lower(ts_as_string(ts_div(x, p))));
    return ts_add(ts_string_to_number(text, TS_F32),
                  ts_cast(ts_string_to_number(ts_as_string(i), TS_I64), TS_F32));
  }
  case TS_OP_CONV_TRANSPOSE: { /* 2 images of 2 channels, 2 groups, strides, dilations, a pad */
    ts_tensor *image = ts_reshape(ts_concat(((ts_tensor *[]){ x, p, x, p }), 4, 0), TS_SHAPE(2, 2, 2, 3));
    ts_tensor *filter = ts_reshape(ts_range(TS_F32, -4, 4, 1), TS_SHAPE(2, 1, 2, 2));
    ts_tensor *bias = ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 0.5f, -1 });
    return ts_conv_transpose(image, filter, bias, TS_INTS(2, 1), TS_INTS(1, 2), TS_INTS(1, 0), TS_INTS(4, 6), 2);
  }
  case TS_OP_LSTM_SEQUENCE: { /* 2 steps of 2 rows, I 3, H 3, peepholes, from the last step */
    ts_tensor *seq = ts_reshape(ts_concat(((ts_tensor *[]){ x, p }), 2, 0), TS_SHAPE(2, 2, 3));
    ts_tensor *w = ts_reshape(ts_mul(ts_range(TS_F32, -18, 18, 1), ts_scalar_f32(0.05f)), TS_SHAPE(3, 12));
    ts_tensor *r = ts_reshape(ts_mul(ts_range(TS_F32, 18, -18, -1), ts_scalar_f32(0.04f)), TS_SHAPE(3, 12));
    ts_tensor *bias = ts_mul(ts_range(TS_F32, -6, 6, 1), ts_scalar_f32(0.1f));
    ts_tensor *peep = ts_reshape(ts_mul(ts_range(TS_F32, -4, 5, 1), ts_scalar_f32(0.1f)), TS_SHAPE(3, 3));
    ts_tensor *y, *h, *cs;
    if (!ts_lstm_sequence(seq, w, r, bias, x, p, peep, true, &y, &h, &cs))
      return NULL;
    return ts_concat(((ts_tensor *[]){ ts_reshape(y, TS_SHAPE(-1)), ts_reshape(h, TS_SHAPE(-1)),
                                       ts_reshape(cs, TS_SHAPE(-1)) }), 3, 0);
  }
  default: /* a row with no case yet */
    no_case = true;
    return NULL;
  }
}

static bool is_elementwise(ts_op op)
{
  return (ts_op_traits(op) & TS_OP_TRAIT_ELEMENTWISE) != 0;
}

/* x f32[2,3], p (positive) f32[2,3], i i32[2,3], b bool[2,3] */
static void row_args(op_case *c)
{
  c->n_args = 4;
  c->args[0] = ts_constant(TS_F32, TS_SHAPE(2, 3), (float[]){ 1.5f, -2, 3, 0.25f, 5, -6 });
  c->args[1] = ts_constant(TS_F32, TS_SHAPE(2, 3), (float[]){ 1.5f, 2, 3, 0.25f, 5, 6 });
  c->args[2] = ts_constant(TS_I32, TS_SHAPE(2, 3), (int32_t[]){ 7, -2, 3, 4, 5, -6 });
  c->args[3] = ts_constant(TS_BOOL, TS_SHAPE(2, 3),
                           (bool[]){ true, false, true, false, false, true });
}

static int row_cases(op_case *out)
{
  int n = 0;
  for (int op = 0; op < TS_OP_COUNT; op++) {
    if (is_elementwise(op))
      continue;
    op_case *c = &out[n++];
    snprintf(c->name, sizeof c->name, "%s", ts_op_name(op));
    c->body = row_body;
    c->op = op;
    row_args(c);
  }
  return n;
}

/* ---- edge cases: where a device's kernel differs from a loop on the host --------------
 * Operands a kernel must check before it runs (out-of-range indices and
 * labels, integer division by zero, negative integer powers: errors on
 * every backend, as on the CPU), integer reductions that wrap or need 128
 * bits, bool's any/all, integer random numbers.  Made from the arguments
 * (x, p, i, b as the row cases have them), so that no pass folds them. */

#define I64_NEAR_MAX (INT64_MAX - 10)

/* x [2,3] beside itself with its positives NaN, and its zeros signed as
 * it is and the other way ([2,12]): ties, NaNs, -0.0 and 0.0 in each row
 * for the sorts. */
static ts_tensor *ties_nans(ts_tensor *x)
{
  ts_tensor *nans = ts_where(ts_greater(x, ts_scalar_f32(0)), ts_scalar_f32(NAN), x);
  ts_tensor *zero = ts_mul(x, ts_scalar_f32(0)), *other = ts_mul(x, ts_scalar_f32(-0.0f));
  return ts_concat(((ts_tensor *[]){ x, nans, zero, other }), 4, 1);
}

/* The dtype's lowest integer (made from i [2,3], so nothing folds) by -1:
 * FloorDiv, FloorMod, TruncateDiv and TruncateMod ([8,3]), which wrap to
 * the lowest and give 0 where C's division is undefined. */
static ts_tensor *int_min_by_minus_one(ts_tensor *i, ts_dtype dt)
{
  ts_tensor *zero = ts_cast(ts_mul(i, ts_scalar_i32(0)), dt);
  ts_tensor *lowest = ts_sub(ts_sub(zero, ts_cast(ts_scalar_i64(dt == TS_I32 ? INT32_MAX : INT64_MAX), dt)),
                             ts_cast(ts_scalar_i32(1), dt));
  ts_tensor *minus_one = ts_sub(zero, ts_cast(ts_scalar_i32(1), dt));
  return ts_concat(((ts_tensor *[]){ ts_floordiv(lowest, minus_one), ts_mod(lowest, minus_one),
                                     ts_truncatediv(lowest, minus_one),
                                     ts_truncatemod(lowest, minus_one) }), 4, 0);
}

/* x [2,3] as float64 scaled out of every integer's range (3e9, 5e9 for
 * int32; 1.5e19, -6e19 for int64 and uint64), and +-inf and NaN ([8,3]):
 * what Cast gives there is the CPU's defined result (ops/cast_formulas.h). */
static ts_tensor *out_of_range(ts_tensor *x)
{
  ts_tensor *d = ts_cast(x, TS_F64), *zero = ts_mul(d, ts_scalar_f64(0));
  return ts_concat(((ts_tensor *[]){ ts_mul(d, ts_scalar_f64(1e9)), ts_div(d, zero),
                                     ts_div(zero, zero), ts_mul(d, ts_scalar_f64(1e19)) }),
                   4, 0);
}

static ts_tensor *edge_body(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *i = ts_arg(c, 2), *b = ts_arg(c, 3);
  ts_tensor *big = ts_add(ts_cast(i, TS_I64), ts_scalar_i64(I64_NEAR_MAX)); /* sums wrap */
  ts_tensor *counter = ts_reduce_sum(i, TS_ALL_AXES, false);
  switch (current->edge) {
  case 0: return ts_gather(x, ts_add(ts_reshape(ts_slice(i, TS_INTS(0, 1), TS_INTS(1, 2)),
                                                TS_SHAPE(2)), ts_scalar_i32(-2)), 1); /* 3: out */
  case 1: return ts_sparse_softmax_cross_entropy(ts_reshape(ts_slice(i, TS_INTS(0, 2), TS_INTS(2, 1)),
                                                            TS_SHAPE(2)), x); /* 3, 5: out */
  case 2: return ts_floordiv(i, ts_sub(i, ts_scalar_i32(3))); /* 3 - 3: by zero */
  case 3: return ts_mod(ts_cast(i, TS_I64), ts_cast(ts_sub(i, ts_scalar_i32(5)), TS_I64));
  case 4: return ts_pow(i, ts_sub(i, ts_scalar_i32(2))); /* exponents -4, 1, ...: negative */
  case 5: return ts_floordiv(ts_neg(i), ts_add(ts_abs(i), ts_scalar_i32(1))); /* no error */
  case 6: return ts_reduce_sum(big, TS_AXES(1), false);
  case 7: return ts_reduce_mean(big, TS_AXES(1), true);
  case 8: return ts_reduce_mean(ts_neg(i), TS_AXES(1), false); /* truncates toward zero */
  case 9: return ts_reduce_prod(ts_cast(ts_add(ts_abs(i), ts_scalar_i32(100)), TS_U8), TS_AXES(0), false);
  case 10: return ts_reduce_sum(ts_cast(ts_add(ts_abs(i), ts_scalar_i32(120)), TS_U8), TS_ALL_AXES, false);
  case 11: return ts_reduce_max(big, TS_ALL_AXES, false);
  case 12: return ts_reduce_min(i, TS_AXES(0), false);
  case 13: return ts_argmax(ts_cast(ts_floordiv(ts_abs(i), ts_scalar_i32(4)), TS_I64), 1);
  case 14: return ts_concat(((ts_tensor *[]){ ts_reduce_max(b, TS_AXES(0), false),
                                              ts_reduce_min(b, TS_AXES(0), false),
                                              ts_reduce_max(b, TS_AXES(1), false) }), 3, 0);
  case 15: return ts_add(ts_random_uniform(TS_I32, TS_SHAPE(2, 3), -50, 50, 11), i);
  case 16: return ts_add(ts_random_uniform(TS_F64, TS_SHAPE(2, 3), -1, 1, 12), ts_cast(x, TS_F64));
  case 17: return ts_add(ts_stateless_random_uniform(TS_I32, TS_SHAPE(2, 3), -50, 50, 13, counter), i);
  case 18: return ts_stateless_random_uniform(TS_F64, TS_SHAPE(40), -1, 1, 14, counter);
  case 19: return ts_stateless_random_uniform(TS_F16, TS_SHAPE(40), 0, 1, 15, counter);
  case 20: return ts_stateless_random_uniform(TS_BF16, TS_SHAPE(40), -3, 1, 15, counter);
  case 21: return ts_stateless_random_uniform(TS_U8, TS_SHAPE(40), 0, 256, 16, counter);
  case 22: return ts_sum_to(ts_cast(x, TS_F16), ts_reduce_sum(x, TS_AXES(0), true));
  case 23: return ts_sum_to(ts_cast(x, TS_F64), ts_reduce_sum(x, TS_AXES(1), true));
  case 24: return ts_cast(ts_cast(ts_mul(x, ts_scalar_f32(100)), TS_BF16), TS_I8); /* wraps past 127 */
  case 25: return ts_cast(ts_mul(ts_cast(x, TS_F16), ts_cast(x, TS_F16)), TS_U16);
  case 26: return ts_cast(ts_mul(x, ts_scalar_f32(100)), TS_U8); /* negatives wrap */
  case 27: return ts_concat(((ts_tensor *[]){ ts_cast(ts_softmax(ts_cast(x, TS_F16)), TS_F32),
                                              ts_cast(ts_log_softmax(ts_cast(x, TS_BF16)), TS_F32) }), 2, 0);
  case 28: return ts_sparse_softmax_cross_entropy(ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 2, 0 }),
                                                  ts_cast(x, TS_BF16));
  case 29: return ts_max_pool2d(ts_reshape(ts_cast(ts_concat(((ts_tensor *[]){ x, ts_neg(x), x, x }), 4, 0), TS_F16),
                                           TS_SHAPE(1, 4, 3, 2)), 2, 2, 1, 1, TS_PADDING_SAME);
  case 30: return ts_max_pool2d(ts_reshape(ts_cast(ts_mul(x, ts_scalar_f32(50)), TS_I8), TS_SHAPE(1, 2, 3, 1)), 2,
                                2, 1, 1, TS_PADDING_SAME);
  case 31: {
    ts_tensor *image = ts_reshape(ts_concat(((ts_tensor *[]){ x, ts_neg(x), x, x }), 4, 0), TS_SHAPE(1, 3, 4, 2));
    ts_tensor *filter = ts_reshape(ts_range(TS_F32, -9, 9, 1), TS_SHAPE(3, 3, 2, 1));
    return ts_conv2d(ts_cast(image, TS_BF16), ts_cast(filter, TS_BF16), 1, 1, TS_PADDING_SAME);
  }
  case 32: return ts_conv_transpose(ts_cast(ts_reshape(x, TS_SHAPE(1, 2, 3)), TS_F16),
                                    ts_cast(ts_reshape(ts_slice(x, TS_INTS(0, 0), TS_INTS(2, 2)), TS_SHAPE(2, 1, 2)),
                                            TS_F16),
                                    NULL, TS_INTS(2), TS_INTS(1), TS_INTS(0), TS_INTS(6), 1);
  case 33: return ts_argmin(ts_cast(ts_floordiv(ts_abs(i), ts_scalar_i32(4)), TS_U16), 1);
  case 34: return ts_argmin(ts_cast(ts_where(ts_greater(x, ts_scalar_f32(0)), x, ts_scalar_f32(NAN)), TS_F16), 1);
  case 35: return ts_cumsum(ts_cast(ts_mul(x, ts_scalar_f32(100)), TS_I8), 0, true, true); /* wraps */
  case 36: return ts_cumsum(ts_cast(x, TS_F16), -1, false, true);
  case 37: return ts_truncatediv(i, ts_sub(i, ts_scalar_i32(3))); /* 3 - 3: by zero */
  case 38: return ts_truncatemod(ts_cast(i, TS_I64), ts_cast(ts_sub(i, ts_scalar_i32(5)), TS_I64));
  case 39: return ts_concat(((ts_tensor *[]){ ts_truncatediv(ts_neg(i), ts_add(ts_abs(i), ts_scalar_i32(1))),
                                              ts_truncatemod(ts_neg(i), ts_add(ts_abs(i), ts_scalar_i32(1))) }),
                            2, 0); /* no error */
  case 40: /* a check that fails: InvalidArgument in every mode */
    if (!ts_assert(ts_reduce_min(ts_greater(x, ts_scalar_f32(0)), TS_ALL_AXES, false), "x > 0", x))
      return NULL;
    return ts_identity(x);
  case 41: return top_k_joined(ts_cast(ts_floordiv(ts_abs(i), ts_scalar_i32(4)), TS_U16), 2); /* ties */
  case 42: return ts_sort(ts_cast(ts_where(ts_greater(x, ts_scalar_f32(0)), x, ts_scalar_f32(NAN)), TS_F16), 1, false);
  case 44: return ts_cumprod(ts_cast(ts_mul(x, ts_scalar_f32(30)), TS_I16), 1, false, true); /* wraps */
  case 45: return ts_cumprod(ts_cast(x, TS_BF16), 0, true, false);
  case 46: return ts_reduce_all(ts_slice(b, TS_INTS(0, 0), TS_INTS(2, 0)), TS_AXES(1), false); /* over nothing */
  case 47: return ts_reduce_any(ts_logical_not(b), TS_AXES(0, 1), true);
  case 43: return ts_argsort(ts_cast(ts_floordiv(ts_abs(i), ts_scalar_i32(4)), TS_I8), 1, true);
  case 48: return ts_pack(((ts_tensor *[]){ b, ts_logical_not(b) }), 2, -1);
  case 49: return ts_pack(((ts_tensor *[]){ ts_cast(i, TS_I64), ts_cast(x, TS_I64) }), 2, 0);
  case 50: { /* unpack along the last axis of a [2,3,1] float16, stacked back along axis 0 */
    ts_tensor *parts[2];
    if (ts_unpack(ts_cast(ts_reshape(x, TS_SHAPE(2, 3, 1)), TS_F16), 2, 0, parts) != 2)
      return NULL;
    return ts_pack(parts, 2, 2);
  }
  case 51: { /* a scalar per slice: rank 1 unstacked */
    ts_tensor *parts[6];
    if (ts_unpack(ts_reshape(ts_cast(i, TS_U8), TS_SHAPE(6)), 6, 0, parts) != 6)
      return NULL;
    return ts_pack(((ts_tensor *[]){ parts[5], parts[0] }), 2, 0);
  }
  case 52: return ts_tile(ts_reshape(ts_cast(x, TS_BF16), TS_SHAPE(2, 1, 3)), TS_INTS(2, 3, 1));
  case 53: return ts_tile(ts_logical_not(b), TS_INTS(1, 0));
  case 54: return ts_tile(ts_reduce_sum(i, TS_ALL_AXES, false), (ts_ints){ .n = 0 });
  case 55: return ts_pad(ts_cast(i, TS_I8), TS_INTS(1, 2), TS_INTS(1, 1), TS_PAD_REFLECT, NULL);
  case 56: return ts_pad(ts_cast(x, TS_BF16), TS_INTS(2, 0), TS_INTS(1, 3), TS_PAD_SYMMETRIC, NULL);
  case 57: return ts_pad(b, TS_INTS(0, 1), TS_INTS(1, 0), TS_PAD_CONSTANT, NULL);
  case 58: return ts_pad(x, TS_INTS(0, 3), TS_INTS(0, 0), TS_PAD_REFLECT, NULL); /* an error */
  case 59: return ts_reverse(ts_reshape(ts_cast(x, TS_BF16), TS_SHAPE(1, 2, 3)), TS_INTS(2, 0, 1));
  case 60: return ts_reverse(b, (ts_ints){ .n = 0 });
  case 61: return ts_reverse(ts_reduce_sum(ts_cast(i, TS_I64), TS_ALL_AXES, false), (ts_ints){ .n = 0 });
  case 62: return ts_reverse(ts_slice(ts_cast(i, TS_U8), TS_INTS(0, 0), TS_INTS(2, 0)), TS_INTS(1));
  case 63: return ts_reverse(x, TS_INTS(1, -1)); /* an error */
  case 64: return ts_reverse(x, TS_INTS(2)); /* an error */
  case 65: return ts_one_hot(ts_cast(i, TS_I64), 3, NULL, NULL, 0, TS_F16);
  case 66: return ts_one_hot(ts_cast(ts_abs(i), TS_U8), 0, NULL, NULL, -1, TS_BOOL);
  case 67: return ts_one_hot(ts_cast(ts_reduce_max(i, TS_ALL_AXES, false), TS_I8), 7, ts_scalar_i64(5),
                             ts_scalar_i64(-5), -1, TS_I64);
  case 68: return ts_one_hot(i, -1, NULL, NULL, -1, TS_F32); /* an error */
  case 69: return ts_one_hot(x, 3, NULL, NULL, -1, TS_F32); /* an error */
  case 70: return top_k_joined(ties_nans(x), 7);
  case 71: return ts_argsort(ts_cast(ties_nans(x), TS_F64), 1, false);
  case 72: return ts_argsort(ties_nans(x), -1, true);
  case 73: return ts_argsort(ts_cast(ties_nans(x), TS_F16), 0, false); /* rows 12 apart */
  case 74: return ts_sort(ts_cast(ties_nans(x), TS_BF16), 1, true);
  case 75: return top_k_joined(x, 0);
  case 76: return ts_cumsum(ts_cast(x, TS_F64), 0, true, false);
  case 77: return ts_cumprod(ts_cast(ts_mul(i, ts_scalar_i32(1000)), TS_U32), 1, true, true); /* wraps */
  case 78: return ts_cumsum(ties_nans(x), 1, false, true);
  /* rows of 360 (more than a block's threads: each holds several) */
  case 79: return ts_reduce_max(ts_tile(ties_nans(x), TS_INTS(1, 30)), TS_AXES(1), false);
  case 80: return ts_reduce_min(ts_cast(ts_tile(ties_nans(x), TS_INTS(1, 30)), TS_F64), TS_AXES(1), true);
  case 81: return ts_argmax(ts_tile(ties_nans(x), TS_INTS(1, 30)), 1);
  case 82: return ts_argmin(ts_cast(ts_tile(ties_nans(x), TS_INTS(30, 1)), TS_F64), 0);
  case 83: return int_min_by_minus_one(i, TS_I32);
  case 84: return int_min_by_minus_one(i, TS_I64);
  case 85: return ts_cast(out_of_range(x), TS_I32);
  case 86: return ts_cast(out_of_range(x), TS_I64);
  case 87: return ts_cast(out_of_range(x), TS_U64);
  case 88: return ts_cast(ts_cast(out_of_range(x), TS_F32), TS_U32);
  case 89: { /* 50000 and -60000 fit float16, not int16; +-inf and NaN */
    ts_tensor *wide = ts_mul(x, ts_scalar_f32(1e4)), *inf = ts_div(x, ts_mul(x, ts_scalar_f32(0)));
    return ts_cast(ts_cast(ts_concat(((ts_tensor *[]){ wide, inf }), 2, 0), TS_F16), TS_I16);
  }
  /* over nothing: TensorFlow's identities (-inf, inf; the lowest, the highest) */
  case 90: {
    ts_tensor *none = ts_slice(x, TS_INTS(0, 0), TS_INTS(2, 0));
    return ts_concat(((ts_tensor *[]){ ts_reduce_max(none, TS_AXES(1), false),
                                       ts_reduce_min(none, TS_AXES(-1), false) }), 2, 0);
  }
  case 91: {
    ts_tensor *none = ts_slice(i, TS_INTS(0, 1), TS_INTS(2, 0));
    return ts_concat(((ts_tensor *[]){ ts_reduce_max(none, TS_AXES(1), true),
                                       ts_reduce_min(none, TS_AXES(1), true) }), 2, 1);
  }
  case 92: return ts_reshape(ts_slice(x, TS_INTS(0, 0), TS_INTS(0, 3)), TS_SHAPE(-1, 0)); /* [3,0] */
  case 93: { /* inexact quotients (NumPy's divmod: 1 // 0.1 is 9), and by zero */
    ts_tensor *tenth = ts_scalar_f32(0.1f), *ys = ts_mul(ts_sub(x, x), tenth);
    return ts_concat(((ts_tensor *[]){ ts_floordiv(x, tenth), ts_mod(x, tenth), ts_floordiv(ts_neg(x), ys),
                                       ts_mod(ts_neg(x), ts_neg(tenth)) }), 4, 0);
  }
  /* the audit against NumPy and PyTorch (tests/test-ops-edge-audit.c) */
  case 94: { /* a -inf among the logits, a row of -inf (nan), a row with +inf (nan) */
    ts_tensor *minf = ts_add(ts_mul(x, ts_scalar_f32(0)), ts_scalar_f32(-INFINITY));
    ts_tensor *rows = ts_concat(((ts_tensor *[]){ ts_where(ts_greater(x, ts_scalar_f32(2)), minf, x), minf,
                                                  ts_neg(minf) }), 3, 0);
    return ts_concat(((ts_tensor *[]){ ts_softmax(rows), ts_log_softmax(rows) }), 2, 0);
  }
  case 95: { /* relu(x w + b) with a NaN in x and in b: one _FusedMatMul with every pass */
    ts_tensor *nx = ts_where(ts_less(x, ts_scalar_f32(-5)), ts_scalar_f32(NAN), x);
    ts_tensor *w = ts_reshape(ts_concat(((ts_tensor *[]){ x, ts_neg(x), ts_div(x, ts_scalar_f32(4)) }), 3, 0),
                              TS_SHAPE(3, 6));
    ts_tensor *bias = ts_where(ts_greater(ts_reshape(x, TS_SHAPE(6)), ts_scalar_f32(4)), ts_scalar_f32(NAN),
                               ts_reshape(x, TS_SHAPE(6)));
    return ts_relu(ts_add(ts_matmul(nx, w), bias));
  }
  case 96: { /* the lowest of int8, int16, int32, int64 through Abs and Neg: they wrap to themselves */
    ts_tensor *parts[8];
    static const ts_dtype dts[] = { TS_I8, TS_I16, TS_I32, TS_I64 };
    for (int k = 0; k < 4; k++) {
      ts_tensor *low = ts_sub(ts_sub(ts_cast(ts_mul(i, ts_scalar_i32(0)), dts[k]),
                                     ts_cast(ts_scalar_i64(k == 0 ? 127 : k == 1 ? 32767 : k == 2 ? INT32_MAX : INT64_MAX), dts[k])),
                              ts_cast(ts_scalar_i32(1), dts[k]));
      parts[2 * k] = ts_cast(ts_abs(low), TS_I64);
      parts[2 * k + 1] = ts_cast(ts_neg(low), TS_I64);
    }
    return ts_concat(parts, 8, 0);
  }
  case 97: { /* over nothing: Sum 0, Prod 1, Mean nan */
    ts_tensor *none = ts_slice(x, TS_INTS(0, 0), TS_INTS(2, 0));
    return ts_concat(((ts_tensor *[]){ ts_reduce_sum(none, TS_AXES(1), false), ts_reduce_prod(none, TS_AXES(1), false),
                                       ts_reduce_mean(none, TS_AXES(-1), false) }), 3, 0);
  }
  default: return NULL;
  }
}

static const struct {
  const char *name;
  ts_op op;
} EDGES[] = {
  { "Gather, an index out of range", TS_OP_GATHER },
  { "SparseSoftmaxCrossEntropyWithLogits, labels out of range", TS_OP_SPARSE_SOFTMAX_CROSS_ENTROPY },
  { "FloorDiv int32 by zero", TS_OP_FLOORDIV },
  { "FloorMod int64 by zero", TS_OP_MOD },
  { "Pow int32 to a negative power", TS_OP_POW },
  { "FloorDiv int32, negative quotients", TS_OP_FLOORDIV },
  { "Sum int64, wrapping", TS_OP_REDUCE_SUM },
  { "Mean int64 near its largest (128-bit sum)", TS_OP_REDUCE_MEAN },
  { "Mean int32 of negative sums", TS_OP_REDUCE_MEAN },
  { "Prod uint8, wrapping", TS_OP_REDUCE_PROD },
  { "Sum uint8, wrapping", TS_OP_REDUCE_SUM },
  { "Max int64", TS_OP_REDUCE_MAX },
  { "Min int32", TS_OP_REDUCE_MIN },
  { "ArgMax int64, ties", TS_OP_ARGMAX },
  { "Max and Min of bool (any, all)", TS_OP_REDUCE_MAX },
  { "RandomUniform int32", TS_OP_RANDOM_UNIFORM },
  { "RandomUniform float64", TS_OP_RANDOM_UNIFORM },
  { "StatelessRandomUniform int32", TS_OP_STATELESS_RANDOM_UNIFORM },
  { "StatelessRandomUniform float64", TS_OP_STATELESS_RANDOM_UNIFORM },
  { "StatelessRandomUniform float16", TS_OP_STATELESS_RANDOM_UNIFORM },
  { "StatelessRandomUniform bfloat16", TS_OP_STATELESS_RANDOM_UNIFORM },
  { "StatelessRandomUniform uint8", TS_OP_STATELESS_RANDOM_UNIFORM },
  { "SumTo float16, a leading 1", TS_OP_SUM_TO },
  { "SumTo float64, a trailing 1", TS_OP_SUM_TO },
  { "Cast float32 to bfloat16 to int8", TS_OP_CAST },
  { "Mul float16, Cast to uint16", TS_OP_MUL },
  { "Cast float32 to uint8, negatives", TS_OP_CAST },
  { "Softmax float16, LogSoftmax bfloat16", TS_OP_SOFTMAX },
  { "SparseSoftmaxCrossEntropyWithLogits bfloat16", TS_OP_SPARSE_SOFTMAX_CROSS_ENTROPY },
  { "MaxPool float16 (SAME)", TS_OP_MAX_POOL2D },
  { "MaxPool int8 (SAME)", TS_OP_MAX_POOL2D },
  { "Conv2D bfloat16 (SAME)", TS_OP_CONV2D },
  { "ConvTranspose float16", TS_OP_CONV_TRANSPOSE },
  { "ArgMin uint16, ties", TS_OP_ARGMIN },
  { "ArgMin float16, NaN", TS_OP_ARGMIN },
  { "Cumsum int8, exclusive, reverse", TS_OP_CUMSUM },
  { "Cumsum float16, reverse", TS_OP_CUMSUM },
  { "TruncateDiv int32 by zero", TS_OP_TRUNCATEDIV },
  { "TruncateMod int64 by zero", TS_OP_TRUNCATEMOD },
  { "TruncateDiv and TruncateMod int32, negative quotients", TS_OP_TRUNCATEDIV },
  { "Assert that fails", TS_OP_ASSERT },
  { "TopKV2 uint16, ties", TS_OP_TOP_K },
  { "Sort float16, NaN", TS_OP_SORT },
  { "ArgSort int8, ties, descending", TS_OP_ARGSORT },
  { "Cumprod int16, reverse", TS_OP_CUMPROD },
  { "Cumprod bfloat16, exclusive", TS_OP_CUMPROD },
  { "All over nothing", TS_OP_REDUCE_ALL },
  { "Any over two axes, keepdims", TS_OP_REDUCE_ANY },
  { "Pack bool, last axis", TS_OP_PACK },
  { "Pack int64, axis 0", TS_OP_PACK },
  { "Unpack float16, Pack at the end", TS_OP_UNPACK },
  { "Unpack uint8 into scalars", TS_OP_UNPACK },
  { "Tile bfloat16, rank 3", TS_OP_TILE },
  { "Tile bool, multiple 0", TS_OP_TILE },
  { "Tile int32 scalar", TS_OP_TILE },
  { "Pad int8, REFLECT", TS_OP_PAD },
  { "Pad bfloat16, SYMMETRIC", TS_OP_PAD },
  { "Pad bool, CONSTANT 0", TS_OP_PAD },
  { "Pad REFLECT as far as the dim: refused", TS_OP_PAD },
  { "ReverseV2 bfloat16, rank 3, every axis", TS_OP_REVERSE },
  { "ReverseV2 bool, no axis", TS_OP_REVERSE },
  { "ReverseV2 int64 scalar", TS_OP_REVERSE },
  { "ReverseV2 uint8, size 0", TS_OP_REVERSE },
  { "ReverseV2 an axis twice: refused", TS_OP_REVERSE },
  { "ReverseV2 an axis out of range: refused", TS_OP_REVERSE },
  { "OneHot int64, axis 0, float16", TS_OP_ONE_HOT },
  { "OneHot uint8 to bool, depth 0", TS_OP_ONE_HOT },
  { "OneHot int8 scalar to int64", TS_OP_ONE_HOT },
  { "OneHot depth -1: refused", TS_OP_ONE_HOT },
  { "OneHot float32 indices: refused", TS_OP_ONE_HOT },
  { "TopKV2 float32, ties, NaN, signed zeros", TS_OP_TOP_K },
  { "ArgSort float64, ties, NaN, signed zeros", TS_OP_ARGSORT },
  { "ArgSort float32, ties, NaN, signed zeros, descending", TS_OP_ARGSORT },
  { "ArgSort float16 along axis 0, NaN", TS_OP_ARGSORT },
  { "Sort bfloat16, ties, NaN, descending", TS_OP_SORT },
  { "TopKV2 k = 0", TS_OP_TOP_K },
  { "Cumsum float64, exclusive, axis 0", TS_OP_CUMSUM },
  { "Cumprod uint32, exclusive, reverse, wrapping", TS_OP_CUMPROD },
  { "Cumsum float32, NaN, reverse", TS_OP_CUMSUM },
  { "Max float32, long rows, ties, NaN, signed zeros", TS_OP_REDUCE_MAX },
  { "Min float64, long rows, ties, NaN, signed zeros, keepdims", TS_OP_REDUCE_MIN },
  { "ArgMax float32, long rows, ties, NaN, signed zeros", TS_OP_ARGMAX },
  { "ArgMin float64 along axis 0, long columns, NaN", TS_OP_ARGMIN },
  { "FloorDiv, FloorMod, TruncateDiv, TruncateMod int32, the lowest by -1", TS_OP_FLOORDIV },
  { "FloorDiv, FloorMod, TruncateDiv, TruncateMod int64, the lowest by -1", TS_OP_FLOORDIV },
  { "Cast float64 to int32, out of range, inf, NaN", TS_OP_CAST },
  { "Cast float64 to int64, out of range, inf, NaN", TS_OP_CAST },
  { "Cast float64 to uint64, out of range, inf, NaN", TS_OP_CAST },
  { "Cast float32 to uint32, out of range, inf, NaN", TS_OP_CAST },
  { "Cast float16 to int16, out of range, inf, NaN", TS_OP_CAST },
  { "Max and Min float32 over nothing", TS_OP_REDUCE_MAX },
  { "Max and Min int32 over nothing, keepdims", TS_OP_REDUCE_MIN },
  { "Reshape, a -1 beside a 0", TS_OP_RESHAPE },
  { "FloorDiv and FloorMod float32, inexact quotients, by zero", TS_OP_FLOORDIV },
  { "Softmax and LogSoftmax float32, -inf and inf rows", TS_OP_SOFTMAX },
  { "MatMul float32 + bias, Relu, NaN", TS_OP_MATMUL },
  { "Abs and Neg of int8, int16, int32, int64's lowest", TS_OP_ABS },
  { "Sum, Prod and Mean float32 over nothing", TS_OP_REDUCE_SUM },
};

static int edge_cases(op_case *out)
{
  for (size_t k = 0; k < G_N_ELEMENTS(EDGES); k++) {
    op_case *c = &out[k];
    row_args(c);
    snprintf(c->name, sizeof c->name, "%s", EDGES[k].name);
    c->body = edge_body;
    c->op = EDGES[k].op;
    c->edge = (int)k;
  }
  return (int)G_N_ELEMENTS(EDGES);
}

/* ---- running and comparing ------------------------------------------------------------ */

static void on_op_end(const ts_event *ev, void *data)
{
  bool *ran = data;
  if ((unsigned)ev->op.op < TS_OP_COUNT)
    ran[ev->op.op] = true;
}

static void graph_ops(const ts_graph *g, bool *ran)
{
  for (int k = 0; k < ts_graph_n_nodes(g); k++) {
    const ts_node *n = ts_graph_node(g, k);
    ran[ts_node_op(n)] = true;
    for (int s = 0; s < ts_node_n_subgraphs(n); s++)
      graph_ops(ts_node_subgraph(n, s), ran);
  }
}

typedef struct outcome {
  ts_tensor *value;    /* on the CPU, or NULL */
  ts_error_code error; /* when value is NULL */
  char *message;
} outcome;

/* Runs c once in mode m on backend b.  The rows it ran go to ran[]. */
static bool same_result(const ts_tensor *want, const ts_tensor *got, double *err);

/* On a device that replays plans as they were captured: the graph called
 * twice more on the same arguments (the second capture, on the plan's own
 * inputs, and a replay where the capture allows it) gives the first call's
 * result again.  Not for cases with variables: each call changes them. */
static int n_replayed; /* graph cases whose third call replayed its plan */

static void replay_check(const op_case *c, mode m, const ts_backend *b, ts_function *fn,
                         ts_value *args, const ts_tensor *first)
{
  if (!ts_backend_iface(b)->graph_plan_replay || variable || slot[0])
    return;
  for (int k = 0; k < 2; k++) {
    int quiet = test_quiet_begin();
    ts_tensor *r = NULL;
    TS_DEVICE_SCOPE(b) { r = ts_function_call(fn, args, c->n_args); }
    test_quiet_end(quiet);
    if (!r)
      g_error("%s, %s on %s: call %d of the graph failed: %s", c->name, MODE_NAMES[m],
              ts_backend_name(b), k + 2, ts_error_peek() ? ts_error_peek()->message : "?");
    double err;
    if (!same_result(first, ts_tensor_to_backend(r, ts_backend_cpu()), &err))
      g_error("%s, %s on %s: call %d of the graph differs from the first (error %g)", c->name,
              MODE_NAMES[m], ts_backend_name(b), k + 2, err);
  }
  ts_schedule sched;
  if (ts_concrete_schedule(ts_function_concrete(fn, 0), &sched) && sched.n_replays)
    n_replayed++;
}

static outcome run_case(const op_case *c, mode m, const ts_backend *b, bool *ran)
{
  current = c;
  n_runs++;
  if (c->body == row_body && (c->op == TS_OP_VAR_HANDLE || c->op == TS_OP_READ_VARIABLE ||
                              c->op == TS_OP_ASSIGN_VARIABLE || c->op == TS_OP_ASSIGN_ADD_VARIABLE ||
                              c->op == TS_OP_ASSIGN_SUB_VARIABLE || c->op == TS_OP_APPLY_ADAM))
    variable = ts_variable_new(c->args[0], "v"); /* afresh: every run starts from x */
  if (c->body == row_body && c->op == TS_OP_APPLY_ADAM)
    for (int k = 0; k < 2; k++)
      slot[k] = ts_variable_new(c->args[1], k ? "v" : "m"); /* v must be >= 0 */
  g_assert_true(ts_set_passes(m == MODE_GRAPH ? "none" : ALL_PASSES));
  ts_function *fn = ts_function_new("op_row", c->body, NULL);
  ts_function_set_run_eagerly(fn, m == MODE_EAGER ? 1 : 0);
  ts_value args[MAX_ARGS];
  ts_spec specs[MAX_ARGS];
  for (int i = 0; i < c->n_args; i++) {
    args[i] = TS_TENSOR_VALUE(c->args[i]);
    specs[i] = (ts_spec){ ts_tensor_dtype(c->args[i]), ts_tensor_shape(c->args[i]) };
    for (int d = 0; d < specs[i].shape.rank; d++)
      specs[i].shape.dim[d] = -1;
  }
  if (m == MODE_UNKNOWN_DIMS)
    g_assert_true(ts_function_set_input_signature(fn, specs, c->n_args));

  int listener = m == MODE_EAGER
                   ? ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), on_op_end, ran)
                   : -1;
  int quiet = test_quiet_begin(); /* Print */
  ts_tensor *r = NULL;
  TS_DEVICE_SCOPE(b) { r = ts_function_call(fn, args, c->n_args); }
  test_quiet_end(quiet);
  if (listener >= 0)
    ts_listener_remove(listener);

  outcome o = { 0 };
  if (r)
    o.value = ts_tensor_to_backend(r, ts_backend_cpu());
  if (!o.value) {
    ts_error *e = ts_error_take();
    g_assert_true(e || no_case);
    o.error = e ? e->code : TS_OK;
    o.message = g_strdup(e ? e->message : "no case");
    ts_error_free(e);
  } else if (m != MODE_EAGER) {
    replay_check(c, m, b, fn, args, o.value);
    g_assert_cmpint(ts_function_n_concrete(fn), ==, 1);
    const ts_graph *g = ts_concrete_optimized_graph(ts_function_concrete(fn, 0));
    graph_ops(g, ran);
    bool fused_case = c->op == TS_OP_FUSED_ELEMENTWISE || c->op == TS_OP_FUSED_MATMUL ||
                      c->op == TS_OP_FUSED_CONV2D;
    for (int k = 0; fused_case && m != MODE_GRAPH && k < ts_graph_n_nodes(g); k++)
      if (is_elementwise(ts_node_op(ts_graph_node(g, k))))
        g_error("%s, %s: %s was not fused", c->name, MODE_NAMES[m],
                ts_op_name(ts_node_op(ts_graph_node(g, k))));
  }
  ts_function_free(fn);
  g_clear_pointer(&variable, ts_tensor_unref);
  g_clear_pointer(&slot[0], ts_tensor_unref);
  g_clear_pointer(&slot[1], ts_tensor_unref);
  return o;
}

/* Are got and want the same result: dtype, shape, and values within a
 * normalised error of 1e-6 (nan where nan, infinities equal)?  The 16-bit
 * floats, computed in f32 and rounded back, within a few of their ulps: a
 * device's f32 exp or tanh an ulp from the CPU's can round the other way. */
static bool same_result(const ts_tensor *want, const ts_tensor *got, double *err)
{
  ts_dtype dt = ts_tensor_dtype(want);
  double tolerance = dt == TS_F16 ? 2e-3 : dt == TS_BF16 ? 1e-2 : 1e-6;
  *err = 0;
  if (ts_tensor_dtype(got) != ts_tensor_dtype(want) ||
      !ts_shape_equal(ts_tensor_shape(got), ts_tensor_shape(want)))
    return false;
  if (ts_tensor_dtype(want) == TS_STRING || ts_tensor_dtype(want) == TS_VARIANT)
    return true;
  double num = 0, den = 0;
  for (int64_t k = 0; k < ts_tensor_size(want); k++) {
    double w = ts_tensor_get_f64(want, k), g = ts_tensor_get_f64(got, k);
    if ((isnan(w) && isnan(g)) || w == g)
      continue;
    if (!isfinite(w) || !isfinite(g))
      return false;
    num += (w - g) * (w - g);
    den += w * w;
  }
  *err = sqrt(num / (den > 0 ? den : 1));
  return *err <= tolerance;
}

static char *describe(const outcome *o)
{
  if (!o->value)
    return g_strdup_printf("error %d: %s", o->error, o->message);
  char *s = ts_tensor_to_string(o->value), *d = g_strdup(s);
  free(s);
  return d;
}

/* Runs c everywhere against the CPU eagerly; the rows it ran without
 * error are covered. */
static void check_case(const op_case *c)
{
  bool ran[TS_OP_COUNT] = { false };
  no_case = false;
  outcome want = run_case(c, MODE_EAGER, ts_backend_cpu(), ran);
  if (no_case) {
    g_free(want.message);
    return;
  }
  bool all_ok = want.value != NULL;
  for (int k = 0; k < ts_backend_count(); k++) {
    const ts_backend *b = ts_backend_get(k);
    for (mode m = 0; m < N_MODES; m++) {
      if (b == ts_backend_cpu() && m == MODE_EAGER)
        continue; /* the reference */
      outcome got = run_case(c, m, b, ran);
      double err = 0;
      bool same = want.value ? got.value && same_result(want.value, got.value, &err)
                             : !got.value && got.error == want.error;
      if (!same) {
        char *w = describe(&want), *g = describe(&got);
        g_error("%s, %s on %s: got %s\nthe CPU eagerly: %s (normalised error %g)", c->name,
                MODE_NAMES[m], ts_backend_name(b), g, w, err);
      }
      all_ok &= got.value != NULL;
      g_free(got.message);
    }
  }
  g_free(want.message);
  if (all_ok)
    for (int op = 0; op < TS_OP_COUNT; op++)
      covered[op] |= ran[op];
}

static void test_every_row(void)
{
  char *passes = ts_get_passes();
  ts_scope *scope = ts_scope_begin();
  int cap = (int)((G_N_ELEMENTS(UNARY) * 4 + G_N_ELEMENTS(BINARY) * 7) * G_N_ELEMENTS(DTYPES)) +
            TS_OP_COUNT + (int)G_N_ELEMENTS(EDGES);
  op_case *cases = g_new0(op_case, cap);
  int n = unary_cases(cases);
  n += binary_cases(cases + n);
  n += row_cases(cases + n);
  n += edge_cases(cases + n);
  g_assert_cmpint(n, <=, cap);
  for (int k = 0; k < n; k++) {
    ts_scope *inner = ts_scope_begin();
    check_case(&cases[k]);
    ts_scope_end(inner);
  }

  GString *missing = g_string_new(NULL);
  int n_covered = 0;
  for (int op = 0; op < TS_OP_COUNT; op++) {
    if (covered[op])
      n_covered++;
    else
      g_string_append_printf(missing, " %s", ts_op_name(op));
  }
  g_test_message("coverage: %d of %d rows, %d cases, %d runs on %d backends; without cases:%s",
                 n_covered, (int)TS_OP_COUNT, n, n_runs, ts_backend_count(),
                 missing->len ? missing->str : " none");
  g_test_message("graph runs on devices replayed as captured: %d", n_replayed);
  if (missing->len)
    g_error("rows without cases:%s", missing->str);
  g_string_free(missing, TRUE);
  g_free(cases);
  ts_scope_end(scope);
  g_assert_true(ts_set_passes(passes));
  free(passes);
}

/* ---- gradients: every row's against central finite differences ------------------------
 * A case is a forward function of float64 inputs drawn at random in a
 * domain where the op is smooth (away from kinks, ties and poles).  Its
 * target is sum_j <out_j, w_j> with fixed weights w_j, so that every
 * output element has its own weight.  The tape's gradient of the target
 * (eagerly, and traced with and without passes, on every backend) must
 * match central differences of the target taken eagerly on the CPU: the
 * norm of the difference at most 1e-6 of the norm of the numeric
 * gradient (each input on its own). */

#define GRAD_MAX_IN 7
#define GRAD_MAX_OUT 4
#define FD_STEP 1e-5
#define GRAD_TOL 1e-6

typedef int (*forward_fn)(ts_tensor *const *in, ts_tensor **out);

typedef struct grad_case {
  const char *name;
  ts_op op; /* the row it checks (TS_OP_COUNT: a composite) */
  forward_fn fn;
  int n_in;
  ts_shape shape[GRAD_MAX_IN];
  double lo, hi;           /* the inputs' domain */
  bool variable;           /* input 0 is the value of a variable the forward reads (gvar) */
} grad_case;

static ts_tensor *gvar; /* the variable of a `variable` case */

static ts_tensor *c_i32(ts_shape shape, const int32_t *v)
{
  return ts_constant(TS_I32, shape, v);
}

#define FWD1(id, expr)                                            \
  static int fwd_##id(ts_tensor *const *in, ts_tensor **out)      \
  {                                                               \
    out[0] = (expr);                                              \
    return 1;                                                     \
  }
FWD1(neg, ts_neg(in[0]))
FWD1(abs, ts_abs(in[0]))
FWD1(exp, ts_exp(in[0]))
FWD1(log, ts_log(in[0]))
FWD1(sqrt, ts_sqrt(in[0]))
FWD1(tanh, ts_tanh(in[0]))
FWD1(sigmoid, ts_sigmoid(in[0]))
FWD1(relu, ts_relu(in[0]))
FWD1(softplus, ts_softplus(in[0]))
FWD1(sin, ts_sin(in[0]))
FWD1(cos, ts_cos(in[0]))
FWD1(tan, ts_tan(in[0]))
FWD1(asin, ts_asin(in[0]))
FWD1(acos, ts_acos(in[0]))
FWD1(atan, ts_atan(in[0]))
FWD1(sinh, ts_sinh(in[0]))
FWD1(cosh, ts_cosh(in[0]))
FWD1(asinh, ts_asinh(in[0]))
FWD1(acosh, ts_acosh(in[0]))
FWD1(atanh, ts_atanh(in[0]))
FWD1(erf, ts_erf(in[0]))
FWD1(sign, ts_sign(in[0]))
FWD1(round, ts_round(in[0]))
FWD1(square, ts_square(in[0]))
FWD1(rsqrt, ts_rsqrt(in[0]))
FWD1(reciprocal, ts_reciprocal(in[0]))
FWD1(log1p, ts_log1p(in[0]))
FWD1(expm1, ts_expm1(in[0]))
FWD1(elu, ts_elu(in[0]))
FWD1(selu, ts_selu(in[0]))
FWD1(relu6, ts_relu6(in[0]))
FWD1(softsign, ts_softsign(in[0]))
FWD1(gelu, ts_gelu(in[0]))
FWD1(squared_difference, ts_squared_difference(in[0], in[1]))
FWD1(atan2, ts_atan2(in[0], in[1]))
/* a in [7.1, 7.4], b in [2.05, 2.35]: the truncated quotient 3 throughout */
FWD1(truncatemod, ts_truncatemod(ts_add(in[0], ts_scalar_f64(5.05)), in[1]))
FWD1(div_no_nan, ts_div_no_nan(in[0], in[1]))
FWD1(xlogy, ts_xlogy(in[0], in[1]))
FWD1(cumsum, ts_cumsum(in[0], 1, false, false))
FWD1(cumsum_exclusive_reverse, ts_cumsum(in[0], 0, true, true))
FWD1(sort, ts_sort(in[0], 0, true))
FWD1(cumprod, ts_cumprod(in[0], 1, false, false))
FWD1(cumprod_exclusive_reverse, ts_cumprod(in[0], 0, true, true))
FWD1(sort_last, ts_sort(in[0], -1, false))
static int fwd_top_k(ts_tensor *const *in, ts_tensor **out)
{
  return ts_top_k(in[0], 2, &out[0], NULL) ? 1 : 0;
}
FWD1(add, ts_add(in[0], in[1]))
FWD1(sub, ts_sub(in[0], in[1]))
FWD1(mul, ts_mul(in[0], in[1]))
FWD1(div, ts_div(in[0], in[1]))
FWD1(mod, ts_mod(in[0], in[1]))
FWD1(pow, ts_pow(in[0], in[1]))
/* maximum and minimum of values kept apart: b shifted by a's sign pattern */
FWD1(maximum, ts_maximum(in[0], ts_add(in[1], ts_constant(TS_F64, TS_SHAPE(4), (double[]){ 3, -3, 3, -3 }))))
FWD1(minimum, ts_minimum(in[0], ts_add(in[1], ts_constant(TS_F64, TS_SHAPE(4), (double[]){ -3, 3, -3, 3 }))))
FWD1(where, ts_where(ts_constant(TS_BOOL, TS_SHAPE(3, 4), (bool[]){ 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0 }),
                     in[0], in[1]))
FWD1(cast, ts_cast(ts_cast(in[0], TS_F64), TS_F64))
FWD1(fill, ts_fill(TS_SHAPE(2, 3), in[0]))
FWD1(reshape, ts_reshape(in[0], TS_SHAPE(4, -1)))
FWD1(flatten, ts_flatten(in[0]))
FWD1(transpose, ts_transpose(in[0], TS_INTS(1, 2, 0)))
FWD1(concat, ts_concat(((ts_tensor *[]){ in[0], in[1], in[0] }), 3, 1))
FWD1(slice, ts_slice(in[0], TS_INTS(1, 0, 1), TS_INTS(2, -1, 2)))
FWD1(tile, ts_tile(in[0], TS_INTS(2, 1, 3)))
FWD1(reverse, ts_reverse(in[0], TS_INTS(0, -1)))
FWD1(pad_constant, ts_pad(in[0], TS_INTS(1, 0), TS_INTS(2, 1), TS_PAD_CONSTANT, ts_scalar_f64(0.5)))
FWD1(pad_reflect, ts_pad(in[0], TS_INTS(2, 1), TS_INTS(1, 2), TS_PAD_REFLECT, NULL))
FWD1(pad_symmetric, ts_pad(in[0], TS_INTS(3, 1), TS_INTS(1, 3), TS_PAD_SYMMETRIC, NULL))
FWD1(pack, ts_pack(((ts_tensor *[]){ in[0], in[1], in[0] }), 3, -2))
FWD1(gather0, ts_gather(in[0], c_i32(TS_SHAPE(2, 2), (int32_t[]){ 4, 0, 4, 2 }), 0))
FWD1(gather1, ts_gather(in[0], c_i32(TS_SHAPE(3), (int32_t[]){ 2, 2, 0 }), 1))
FWD1(sum, ts_reduce_sum(in[0], TS_AXES(1), false))
FWD1(sum_all, ts_reduce_sum(in[0], TS_ALL_AXES, true))
FWD1(mean, ts_reduce_mean(in[0], TS_AXES(0, 2), false))
FWD1(max, ts_reduce_max(in[0], TS_AXES(-1), false))
FWD1(min, ts_reduce_min(in[0], TS_AXES(0), true))
FWD1(prod, ts_reduce_prod(in[0], TS_AXES(1), false))
/* SumTo: g [3,4] down to x's [1,4] (x gives only its shape: gradient 0). */
FWD1(sum_to, ts_sum_to(in[0], in[1]))
/* Prod at zeros: with every input 1, the factors x - k are 0 where k is 1:
 * one zero in row 0, two in row 1, none in row 2 (the product of the
 * others, not y / x, which is 0 / 0 there). */
static int fwd_prod_zeros(ts_tensor *const *in, ts_tensor **out)
{
  static const double K[] = { 1, 0.5, -0.5, 2, 1, 1, 0.25, 3, 0.5, 0.25, -1, 1.5 };
  out[0] = ts_reduce_prod(ts_sub(in[0], ts_constant(TS_F64, TS_SHAPE(3, 4), K)), TS_AXES(1), false);
  return 1;
}
FWD1(matmul, ts_matmul(in[0], in[1]))
FWD1(matmul_ta, ts_matmul_t(in[0], in[1], true, false))
FWD1(matmul_tb, ts_matmul_t(in[0], in[1], false, true))
FWD1(matmul_tab, ts_matmul_t(in[0], in[1], true, true))
FWD1(matmul_batch, ts_matmul(in[0], in[1]))
FWD1(softmax, ts_softmax(in[0]))
FWD1(log_softmax, ts_log_softmax(in[0]))
FWD1(xent, ts_sparse_softmax_cross_entropy(c_i32(TS_SHAPE(4), (int32_t[]){ 2, 0, 4, 2 }), in[0]))
FWD1(identity, ts_identity(in[0]))
FWD1(read_variable, ts_mul(ts_read(gvar), ts_read(gvar)))

FWD1(conv_same, ts_conv2d(in[0], in[1], 1, 1, TS_PADDING_SAME))
FWD1(conv_valid, ts_conv2d(in[0], in[1], 2, 1, TS_PADDING_VALID))
FWD1(pool_valid, ts_max_pool2d(in[0], 2, 2, 2, 2, TS_PADDING_VALID))
FWD1(pool_same, ts_max_pool2d(in[0], 3, 2, 2, 1, TS_PADDING_SAME))

/* conv 3x3 (4 filters, SAME) -> relu -> max pool 2x2 -> dense(3) -> cross-entropy */
static int fwd_convnet(ts_tensor *const *in, ts_tensor **out)
{
  ts_tensor *h = ts_relu(ts_add(ts_conv2d(in[0], in[1], 1, 1, TS_PADDING_SAME), in[2]));
  ts_tensor *p = ts_flatten(ts_max_pool2d(h, 2, 2, 2, 2, TS_PADDING_VALID));
  ts_tensor *logits = ts_matmul(p, in[3]);
  ts_tensor *labels = c_i32(TS_SHAPE(2), (int32_t[]){ 2, 0 });
  out[0] = ts_reduce_mean(ts_sparse_softmax_cross_entropy(labels, logits), TS_ALL_AXES, false);
  return 1;
}

/* A tensor condition: an If node when traced; the branches use x, y and a
 * variable-free constant, and each changes one of two variables. */
static int fwd_if(ts_tensor *const *in, ts_tensor **out)
{
  ts_tensor *y = in[1], *z = in[0];
  TS_IF (ts_greater(ts_reduce_sum(in[0], TS_ALL_AXES, false), ts_scalar_f64(0)), &y, &z) {
    y = ts_mul(ts_tanh(in[0]), in[1]);
  } TS_ELSE {
    z = ts_exp(ts_mul(in[1], ts_scalar_f64(0.5)));
  } TS_END_IF;
  out[0] = y;
  out[1] = z;
  return 2;
}

/* A While of three steps of a small recurrence (a counter and a value
 * carried, both inputs used inside): a While node when traced. */
static int fwd_while(ts_tensor *const *in, ts_tensor **out)
{
  ts_tensor *y = in[0], *k = ts_scalar_i32(0);
  TS_WHILE (ts_less(k, ts_scalar_i32(3)), &y, &k) {
    y = ts_tanh(ts_add(ts_mul(y, in[1]), in[0]));
    k = ts_add(k, ts_scalar_i32(1));
  }
  out[0] = y;
  return 1;
}

/* A loop whose trip count depends on the values: doubles by p until the sum passes 40. */
static int fwd_while_data(ts_tensor *const *in, ts_tensor **out)
{
  ts_tensor *y = in[0];
  TS_WHILE (ts_less(ts_reduce_sum(y, TS_ALL_AXES, false), ts_scalar_f64(40)), &y) {
    y = ts_mul(y, ts_add(in[1], ts_scalar_f64(1)));
  }
  out[0] = y;
  return 1;
}

/* Gradients of gradients: the input's and filter's gradients of
 * sum(conv(x, f)^2), taken by a tape inside (so the harness's tape
 * differentiates Conv2DBackpropInput and Conv2DBackpropFilter). */
static int fwd_conv_grads(ts_tensor *const *in, ts_tensor **out)
{
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, in[0]);
  ts_tape_watch(tape, in[1]);
  ts_tensor *y = ts_conv2d(in[0], in[1], 2, 1, TS_PADDING_SAME);
  bool ok = ts_tape_gradient(tape, ts_reduce_sum(ts_mul(y, y), TS_ALL_AXES, false), in, 2, out,
                             TS_UNCONNECTED_NONE);
  ts_tape_free(tape);
  return ok ? 2 : -1;
}

static int fwd_unpack(ts_tensor *const *in, ts_tensor **out)
{
  return ts_unpack(in[0], -1, 1, out);
}

static int fwd_split(ts_tensor *const *in, ts_tensor **out)
{
  return ts_split(in[0], 3, 1, out);
}

/* Dense(5, relu) -> Dense(3) -> mean sparse softmax cross-entropy */
static int fwd_mlp(ts_tensor *const *in, ts_tensor **out)
{
  ts_tensor *h = ts_relu(ts_add(ts_matmul(in[0], in[1]), in[2]));
  ts_tensor *logits = ts_add(ts_matmul(h, in[3]), in[4]);
  ts_tensor *labels = c_i32(TS_SHAPE(4), (int32_t[]){ 1, 0, 2, 1 });
  out[0] = ts_reduce_mean(ts_sparse_softmax_cross_entropy(labels, logits), TS_ALL_AXES, false);
  return 1;
}

/* An LSTM cell of ops: x [2,3], h [2,4], c [2,4], W [3,16], U [4,16], b [16];
 * outputs the new h and c. */
static int fwd_lstm(ts_tensor *const *in, ts_tensor **out)
{
  ts_tensor *z = ts_add(ts_add(ts_matmul(in[0], in[3]), ts_matmul(in[1], in[4])), in[5]);
  ts_tensor *gate[4];
  if (ts_split(z, 4, 1, gate) != 4)
    return -1;
  ts_tensor *i = ts_sigmoid(gate[0]), *f = ts_sigmoid(gate[1]), *o = ts_sigmoid(gate[3]);
  ts_tensor *c = ts_add(ts_mul(f, in[2]), ts_mul(i, ts_tanh(gate[2])));
  out[0] = ts_mul(o, ts_tanh(c));
  out[1] = c;
  return 2;
}

/* LSTMSequence of 3 steps, 2 rows, I 3, H 3: x, w, r, b, h0, c0 (and
 * peepholes) -> y, h, c; forwards with peepholes, in reverse without. */
static int fwd_lstm_sequence(ts_tensor *const *in, ts_tensor **out)
{
  return ts_lstm_sequence(in[0], in[1], in[2], in[3], in[4], in[5], in[6], false, &out[0], &out[1],
                          &out[2]) ? 3 : -1;
}

static int fwd_lstm_sequence_reverse(ts_tensor *const *in, ts_tensor **out)
{
  return ts_lstm_sequence(in[0], in[1], in[2], in[3], in[4], in[5], NULL, true, &out[0], &out[1],
                          &out[2]) ? 3 : -1;
}

#define S(...) TS_SHAPE(__VA_ARGS__)
static const grad_case GRAD_CASES[] = {
  { "Neg", TS_OP_NEG, fwd_neg, 1, { S(3, 4) }, -2, 2, false },
  { "Abs", TS_OP_ABS, fwd_abs, 1, { S(3, 4) }, 0.2, 2, false },
  { "Exp", TS_OP_EXP, fwd_exp, 1, { S(3, 4) }, -2, 2, false },
  { "Log", TS_OP_LOG, fwd_log, 1, { S(3, 4) }, 0.2, 3, false },
  { "Sqrt", TS_OP_SQRT, fwd_sqrt, 1, { S(3, 4) }, 0.2, 3, false },
  { "Tanh", TS_OP_TANH, fwd_tanh, 1, { S(3, 4) }, -2, 2, false },
  { "Sigmoid", TS_OP_SIGMOID, fwd_sigmoid, 1, { S(3, 4) }, -3, 3, false },
  { "Relu", TS_OP_RELU, fwd_relu, 1, { S(3, 4) }, 0.1, 2, false },
  { "Relu (negative side)", TS_OP_RELU, fwd_relu, 1, { S(3, 4) }, -2, -0.1, false },
  { "Softplus", TS_OP_SOFTPLUS, fwd_softplus, 1, { S(3, 4) }, -3, 3, false },
  { "Sin", TS_OP_SIN, fwd_sin, 1, { S(3, 4) }, -2, 2, false },
  { "Cos", TS_OP_COS, fwd_cos, 1, { S(3, 4) }, -2, 2, false },
  { "Tan", TS_OP_TAN, fwd_tan, 1, { S(3, 4) }, -1, 1, false },
  { "Asin", TS_OP_ASIN, fwd_asin, 1, { S(3, 4) }, -0.8, 0.8, false },
  { "Acos", TS_OP_ACOS, fwd_acos, 1, { S(3, 4) }, -0.8, 0.8, false },
  { "Atan", TS_OP_ATAN, fwd_atan, 1, { S(3, 4) }, -2, 2, false },
  { "Sinh", TS_OP_SINH, fwd_sinh, 1, { S(3, 4) }, -2, 2, false },
  { "Cosh", TS_OP_COSH, fwd_cosh, 1, { S(3, 4) }, -2, 2, false },
  { "Asinh", TS_OP_ASINH, fwd_asinh, 1, { S(3, 4) }, -2, 2, false },
  { "Acosh", TS_OP_ACOSH, fwd_acosh, 1, { S(3, 4) }, 1.2, 3, false },
  { "Atanh", TS_OP_ATANH, fwd_atanh, 1, { S(3, 4) }, -0.8, 0.8, false },
  { "Erf", TS_OP_ERF, fwd_erf, 1, { S(3, 4) }, -2, 2, false },
  { "Sign", TS_OP_SIGN, fwd_sign, 1, { S(3, 4) }, -2, 2, false },
  { "Round", TS_OP_ROUND, fwd_round, 1, { S(3, 4) }, 0.1, 0.4, false },
  { "Square", TS_OP_SQUARE, fwd_square, 1, { S(3, 4) }, -2, 2, false },
  { "Rsqrt", TS_OP_RSQRT, fwd_rsqrt, 1, { S(3, 4) }, 0.2, 3, false },
  { "Reciprocal", TS_OP_RECIPROCAL, fwd_reciprocal, 1, { S(3, 4) }, -3, -0.2, false },
  { "Log1p", TS_OP_LOG1P, fwd_log1p, 1, { S(3, 4) }, -0.8, 3, false },
  { "Expm1", TS_OP_EXPM1, fwd_expm1, 1, { S(3, 4) }, -2, 2, false },
  { "Elu", TS_OP_ELU, fwd_elu, 1, { S(3, 4) }, 0.1, 2, false },
  { "Elu (negative side)", TS_OP_ELU, fwd_elu, 1, { S(3, 4) }, -3, -0.1, false },
  { "Selu", TS_OP_SELU, fwd_selu, 1, { S(3, 4) }, 0.1, 2, false },
  { "Selu (negative side)", TS_OP_SELU, fwd_selu, 1, { S(3, 4) }, -3, -0.1, false },
  { "Relu6", TS_OP_RELU6, fwd_relu6, 1, { S(3, 4) }, 0.1, 5.9, false },
  { "Relu6 (above 6)", TS_OP_RELU6, fwd_relu6, 1, { S(3, 4) }, 6.1, 9, false },
  { "Softsign", TS_OP_SOFTSIGN, fwd_softsign, 1, { S(3, 4) }, -3, 3, false },
  { "Gelu", TS_OP_GELU, fwd_gelu, 1, { S(3, 4) }, -3, 3, false },
  { "Cumsum", TS_OP_CUMSUM, fwd_cumsum, 1, { S(3, 4) }, -2, 2, false },
  { "Cumsum (exclusive, reverse)", TS_OP_CUMSUM, fwd_cumsum_exclusive_reverse, 1, { S(3, 4) }, -2, 2, false },
  { "Cumprod", TS_OP_CUMPROD, fwd_cumprod, 1, { S(3, 4) }, 0.5, 2, false },
  { "Cumprod (exclusive, reverse)", TS_OP_CUMPROD, fwd_cumprod_exclusive_reverse, 1, { S(3, 4) }, -2, -0.5, false },
  { "TopKV2", TS_OP_TOP_K, fwd_top_k, 1, { S(3, 4) }, -2, 2, false },
  { "Sort (descending)", TS_OP_SORT, fwd_sort, 1, { S(3, 4) }, -2, 2, false },
  { "Sort (last axis)", TS_OP_SORT, fwd_sort_last, 1, { S(3, 4) }, -2, 2, false },
  { "Add (broadcast rows)", TS_OP_ADD, fwd_add, 2, { S(3, 4), S(4) }, -2, 2, false },
  { "Add (outer)", TS_OP_ADD, fwd_add, 2, { S(3, 1), S(1, 4) }, -2, 2, false },
  { "Sub (scalar)", TS_OP_SUB, fwd_sub, 2, { TS_SCALAR_SHAPE, S(3, 4) }, -2, 2, false },
  { "Mul (broadcast rows)", TS_OP_MUL, fwd_mul, 2, { S(3, 4), S(4) }, -2, 2, false },
  { "Mul (outer)", TS_OP_MUL, fwd_mul, 2, { S(2, 1, 4), S(3, 1) }, -2, 2, false },
  { "RealDiv", TS_OP_DIV, fwd_div, 2, { S(3, 4), S(3, 1) }, 0.5, 2, false },
  { "FloorMod", TS_OP_MOD, fwd_mod, 2, { S(3, 4), S(4) }, 0.3, 0.45, false },
  { "Pow", TS_OP_POW, fwd_pow, 2, { S(3, 4), S(4) }, 0.5, 2, false },
  { "Maximum", TS_OP_MAXIMUM, fwd_maximum, 2, { S(3, 4), S(4) }, -1, 1, false },
  { "Minimum", TS_OP_MINIMUM, fwd_minimum, 2, { S(3, 4), S(3, 4) }, -1, 1, false },
  { "SquaredDifference", TS_OP_SQUARED_DIFFERENCE, fwd_squared_difference, 2, { S(3, 4), S(4) }, -2, 2, false },
  { "Atan2", TS_OP_ATAN2, fwd_atan2, 2, { S(3, 4), S(3, 1) }, 0.5, 2, false },
  { "Atan2 (second quadrant)", TS_OP_ATAN2, fwd_atan2, 2, { S(3, 4), S(3, 4) }, -2, -0.5, false },
  { "TruncateMod", TS_OP_TRUNCATEMOD, fwd_truncatemod, 2, { S(3, 4), S(4) }, 2.05, 2.35, false },
  { "DivNoNan", TS_OP_DIV_NO_NAN, fwd_div_no_nan, 2, { S(3, 4), S(3, 1) }, 0.5, 2, false },
  { "Xlogy", TS_OP_XLOGY, fwd_xlogy, 2, { S(3, 4), S(4) }, 0.5, 2, false },
  { "Select", TS_OP_WHERE, fwd_where, 2, { S(3, 4), S(4) }, -2, 2, false },
  { "Cast", TS_OP_CAST, fwd_cast, 1, { S(3, 4) }, -2, 2, false },
  { "Fill", TS_OP_FILL, fwd_fill, 1, { TS_SCALAR_SHAPE }, -2, 2, false },
  { "Reshape", TS_OP_RESHAPE, fwd_reshape, 1, { S(2, 3, 2) }, -2, 2, false },
  { "Flatten", TS_OP_FLATTEN, fwd_flatten, 1, { S(2, 3, 2) }, -2, 2, false },
  { "Transpose", TS_OP_TRANSPOSE, fwd_transpose, 1, { S(2, 3, 4) }, -2, 2, false },
  { "Concat", TS_OP_CONCAT, fwd_concat, 2, { S(2, 3), S(2, 1) }, -2, 2, false },
  { "Split", TS_OP_SPLIT, fwd_split, 1, { S(2, 6) }, -2, 2, false },
  { "Slice", TS_OP_SLICE, fwd_slice, 1, { S(4, 3, 4) }, -2, 2, false },
  { "Tile", TS_OP_TILE, fwd_tile, 1, { S(2, 3, 2) }, -2, 2, false },
  { "Pad (CONSTANT)", TS_OP_PAD, fwd_pad_constant, 1, { S(2, 3) }, -2, 2, false },
  { "Pad (REFLECT)", TS_OP_PAD, fwd_pad_reflect, 1, { S(3, 4) }, -2, 2, false },
  { "Pad (SYMMETRIC)", TS_OP_PAD, fwd_pad_symmetric, 1, { S(3, 4) }, -2, 2, false },
  { "ReverseV2", TS_OP_REVERSE, fwd_reverse, 1, { S(2, 3, 2) }, -2, 2, false },
  { "Pack", TS_OP_PACK, fwd_pack, 2, { S(2, 3), S(2, 3) }, -2, 2, false },
  { "Unpack", TS_OP_UNPACK, fwd_unpack, 1, { S(2, 3, 2) }, -2, 2, false },
  { "Gather (axis 0)", TS_OP_GATHER, fwd_gather0, 1, { S(5, 3) }, -2, 2, false },
  { "Gather (axis 1)", TS_OP_GATHER, fwd_gather1, 1, { S(2, 3, 2) }, -2, 2, false },
  { "Sum", TS_OP_REDUCE_SUM, fwd_sum, 1, { S(3, 4) }, -2, 2, false },
  { "Sum (all, keepdims)", TS_OP_REDUCE_SUM, fwd_sum_all, 1, { S(3, 4) }, -2, 2, false },
  { "Mean", TS_OP_REDUCE_MEAN, fwd_mean, 1, { S(2, 3, 4) }, -2, 2, false },
  { "Max", TS_OP_REDUCE_MAX, fwd_max, 1, { S(3, 4) }, -2, 2, false },
  { "Min", TS_OP_REDUCE_MIN, fwd_min, 1, { S(3, 4) }, -2, 2, false },
  { "Prod", TS_OP_REDUCE_PROD, fwd_prod, 1, { S(3, 4) }, 0.5, 1.5, false },
  { "Prod (at zeros)", TS_OP_REDUCE_PROD, fwd_prod_zeros, 1, { S(3, 4) }, 1, 1, false },
  { "SumTo", TS_OP_SUM_TO, fwd_sum_to, 2, { S(2, 3, 4), S(1, 4) }, -2, 2, false },
  { "MatMul", TS_OP_MATMUL, fwd_matmul, 2, { S(3, 4), S(4, 2) }, -1, 1, false },
  { "MatMul (transpose_a)", TS_OP_MATMUL, fwd_matmul_ta, 2, { S(4, 3), S(4, 2) }, -1, 1, false },
  { "MatMul (transpose_b)", TS_OP_MATMUL, fwd_matmul_tb, 2, { S(3, 4), S(2, 4) }, -1, 1, false },
  { "MatMul (both)", TS_OP_MATMUL, fwd_matmul_tab, 2, { S(4, 3), S(2, 4) }, -1, 1, false },
  { "MatMul (batch broadcast)", TS_OP_MATMUL, fwd_matmul_batch, 2, { S(2, 3, 4), S(4, 2) }, -1, 1, false },
  { "Softmax", TS_OP_SOFTMAX, fwd_softmax, 1, { S(3, 5) }, -2, 2, false },
  { "LogSoftmax", TS_OP_LOG_SOFTMAX, fwd_log_softmax, 1, { S(3, 5) }, -2, 2, false },
  { "SparseSoftmaxCrossEntropyWithLogits", TS_OP_SPARSE_SOFTMAX_CROSS_ENTROPY, fwd_xent, 1,
    { S(4, 5) }, -2, 2, false },
  { "Identity", TS_OP_IDENTITY, fwd_identity, 1, { S(3, 4) }, -2, 2, false },
  { "ReadVariableOp", TS_OP_READ_VARIABLE, fwd_read_variable, 1, { S(3, 4) }, -2, 2, true },
  { "Conv2D (SAME)", TS_OP_CONV2D, fwd_conv_same, 2, { S(2, 4, 5, 3), S(3, 3, 3, 2) }, -1, 1, false },
  { "Conv2D (VALID, strides 2,1)", TS_OP_CONV2D, fwd_conv_valid, 2, { S(1, 5, 4, 2), S(2, 3, 2, 3) },
    -1, 1, false },
  { "MaxPool (VALID)", TS_OP_MAX_POOL2D, fwd_pool_valid, 1, { S(2, 4, 4, 3) }, -2, 2, false },
  { "MaxPool (SAME, strides 2,1)", TS_OP_MAX_POOL2D, fwd_pool_same, 1, { S(1, 5, 4, 2) }, -2, 2, false },
  { "conv net", TS_OP_COUNT, fwd_convnet, 4, { S(2, 4, 4, 1), S(3, 3, 1, 4), S(4), S(16, 3) }, -1, 1,
    false },
  { "If (then)", TS_OP_IF, fwd_if, 2, { S(3, 4), S(3, 4) }, 0.1, 2, false },
  { "If (else)", TS_OP_IF, fwd_if, 2, { S(3, 4), S(3, 4) }, -2, -0.1, false },
  { "While (counted)", TS_OP_WHILE, fwd_while, 2, { S(3, 4), S(4) }, -1, 1, false },
  { "While (data-dependent)", TS_OP_WHILE, fwd_while_data, 2, { S(3, 4), S(4) }, 0.3, 0.9, false },
  { "Conv2DBackpropInput, Conv2DBackpropFilter (second order)", TS_OP_CONV2D_BACKPROP_INPUT,
    fwd_conv_grads, 2, { S(1, 5, 4, 2), S(3, 2, 2, 3) }, -1, 1, false },
  { "dense MLP", TS_OP_COUNT, fwd_mlp, 5, { S(4, 3), S(3, 5), S(5), S(5, 3), S(3) }, -1, 1, false },
  { "LSTMSequence (peepholes)", TS_OP_LSTM_SEQUENCE, fwd_lstm_sequence, 7,
    { S(3, 2, 3), S(3, 12), S(3, 12), S(12), S(2, 3), S(2, 3), S(3, 3) }, -1, 1, false },
  { "LSTMSequence (reverse)", TS_OP_LSTM_SEQUENCE, fwd_lstm_sequence_reverse, 6,
    { S(3, 2, 3), S(3, 12), S(3, 12), S(12), S(2, 3), S(2, 3) }, -1, 1, false },
  { "LSTM cell", TS_OP_COUNT, fwd_lstm, 6, { S(2, 3), S(2, 4), S(2, 4), S(3, 16), S(4, 16), S(16) },
    -1, 1, false },
};
#undef S

static const grad_case *gcase;
static bool gwant; /* the body returns the gradient (else the target) */

/* sum_j <out_j, w_j>, w_j fixed by the shape. */
static ts_tensor *weighted_target(ts_tensor *const *out, int n)
{
  ts_tensor *total = NULL;
  for (int j = 0; j < n; j++) {
    if (!out[j])
      return NULL;
    int64_t size = ts_tensor_size(out[j]);
    double *w = g_new(double, size ? size : 1);
    for (int64_t k = 0; k < size; k++)
      w[k] = cos(1.3 * (double)k + j) + 0.25;
    ts_tensor *t = ts_reduce_sum(ts_mul(out[j], ts_constant(TS_F64, ts_tensor_shape(out[j]), w)),
                                 TS_ALL_AXES, false);
    g_free(w);
    total = total ? ts_add(total, t) : t;
  }
  return total;
}

/* The case's target, or (gwant) its gradients flattened and joined. */
static ts_tensor *grad_body(ts_call *c)
{
  ts_tensor *in[GRAD_MAX_IN], *out[GRAD_MAX_OUT];
  for (int i = 0; i < gcase->n_in; i++)
    in[i] = ts_arg(c, i);
  ts_tape *tape = gwant ? ts_tape_new(false) : NULL;
  for (int i = 0; tape && !gcase->variable && i < gcase->n_in; i++)
    ts_tape_watch(tape, in[i]);
  int n = gcase->fn(in, out);
  ts_tensor *target = n > 0 ? weighted_target(out, n) : NULL;
  if (!tape)
    return target;
  ts_tensor *g[GRAD_MAX_IN];
  ts_tensor *const *sources = gcase->variable ? &gvar : in;
  ts_tensor *r = NULL;
  if (ts_tape_gradient(tape, target, sources, gcase->n_in, g, TS_UNCONNECTED_ZERO)) {
    for (int i = 0; i < gcase->n_in; i++)
      g[i] = ts_reshape(g[i], TS_SHAPE(-1));
    r = ts_concat(g, gcase->n_in, 0);
  }
  ts_tape_free(tape);
  return r;
}

/* Runs the body in mode m on backend b; the result on the CPU. */
static ts_tensor *grad_run(ts_tensor *const *args, bool want, mode m, const ts_backend *b)
{
  gwant = want;
  if (gcase->variable)
    gvar = ts_variable_new(args[0], "v");
  g_assert_true(ts_set_passes(m == MODE_GRAPH ? "none" : ALL_PASSES));
  ts_function *fn = ts_function_new("grad_case", grad_body, NULL);
  ts_function_set_run_eagerly(fn, m == MODE_EAGER ? 1 : 0);
  ts_value v[GRAD_MAX_IN];
  for (int i = 0; i < gcase->n_in; i++)
    v[i] = TS_TENSOR_VALUE(args[i]);
  ts_tensor *r = NULL;
  TS_DEVICE_SCOPE(b) { r = ts_function_call(fn, v, gcase->n_in); }
  if (r)
    r = ts_tensor_to_backend(r, ts_backend_cpu());
  if (!r) {
    ts_error *e = ts_error_take();
    g_error("gradient of %s, %s on %s: %s", gcase->name, MODE_NAMES[m], ts_backend_name(b),
            e ? e->message : "no error");
  }
  ts_function_free(fn);
  g_clear_pointer(&gvar, ts_tensor_unref);
  return r;
}

/* Central differences of the target, eagerly on the CPU, into num[]. */
static void numeric_gradient(ts_tensor **args, double *num)
{
  int at = 0;
  for (int i = 0; i < gcase->n_in; i++) {
    double *x = ts_tensor_data(args[i]);
    for (int64_t k = 0; k < ts_tensor_size(args[i]); k++) {
      double keep = x[k], f[2];
      for (int s = 0; s < 2; s++) {
        ts_scope *scope = ts_scope_begin();
        x[k] = keep + (s ? -FD_STEP : FD_STEP);
        f[s] = ts_tensor_get_f64(grad_run(args, false, MODE_EAGER, ts_backend_cpu()), 0);
        ts_scope_end(scope);
      }
      x[k] = keep;
      num[at++] = (f[0] - f[1]) / (2 * FD_STEP);
    }
  }
}

/* |analytic - numeric| / |numeric| over each input's elements (2-norms). */
static double grad_error(const ts_tensor *got, const double *num)
{
  double worst = 0;
  int64_t at = 0;
  for (int i = 0; i < gcase->n_in; i++) {
    int64_t n = ts_shape_size(gcase->shape[i]);
    double d = 0, r = 0;
    for (int64_t k = 0; k < n; k++, at++) {
      double a = ts_tensor_get_f64(got, at);
      d += (a - num[at]) * (a - num[at]);
      r += num[at] * num[at];
    }
    double e = sqrt(d) / (r > 0 ? sqrt(r) : 1);
    worst = e > worst || isnan(e) ? e : worst; /* a NaN is the worst */
  }
  return worst;
}

static void test_gradients(void)
{
  char *passes = ts_get_passes();
  GRand *rng = g_rand_new_with_seed(27);
  bool checked[TS_OP_COUNT] = { false };
  double worst = 0;
  const char *worst_name = "";
  int n_runs_grad = 0;
  for (size_t ci = 0; ci < G_N_ELEMENTS(GRAD_CASES); ci++) {
    gcase = &GRAD_CASES[ci];
    ts_scope *scope = ts_scope_begin();
    ts_tensor *args[GRAD_MAX_IN];
    int64_t total = 0;
    for (int i = 0; i < gcase->n_in; i++) {
      int64_t n = ts_shape_size(gcase->shape[i]);
      double *v = g_new(double, n ? n : 1);
      for (int64_t k = 0; k < n; k++)
        v[k] = g_rand_double_range(rng, gcase->lo, gcase->hi);
      args[i] = ts_constant(TS_F64, gcase->shape[i], v);
      g_free(v);
      total += n;
    }
    double *num = g_new(double, total);
    numeric_gradient(args, num);
    for (int k = 0; k < ts_backend_count(); k++) {
      const ts_backend *b = ts_backend_get(k);
      for (mode m = MODE_EAGER; m <= MODE_PASSES; m++) {
        ts_tensor *got = grad_run(args, true, m, b);
        g_assert_cmpint(ts_tensor_size(got), ==, total);
        double e = grad_error(got, num);
        n_runs_grad++;
        if (!(e <= GRAD_TOL)) { /* a NaN gradient fails too */
          char *s = ts_tensor_to_string(got);
          g_error("gradient of %s, %s on %s: relative error %.3g (tape %s; numeric [%g, %g, ...])",
                  gcase->name, MODE_NAMES[m], ts_backend_name(b), e, s, num[0],
                  total > 1 ? num[1] : 0);
        }
        if (e > worst) {
          worst = e;
          worst_name = gcase->name;
        }
      }
    }
    if (gcase->op < TS_OP_COUNT)
      checked[gcase->op] = true;
    if (gcase->op == TS_OP_CONV2D_BACKPROP_INPUT)
      checked[TS_OP_CONV2D_BACKPROP_FILTER] = true; /* the same case differentiates both */
    g_free(num);
    ts_scope_end(scope);
  }
  g_rand_free(rng);

  /* Every row with a gradient has a case; rows without one are listed. */
  GString *missing = g_string_new(NULL), *unchecked = g_string_new(NULL);
  int n_defined = 0, n_not = 0;
  for (int op = 0; op < TS_OP_COUNT; op++) {
    switch (ts_op_gradient_kind(op)) {
    case TS_OP_GRADIENT_DEFINED:
      n_defined++;
      if (!checked[op])
        g_string_append_printf(unchecked, " %s", ts_op_name(op));
      break;
    case TS_OP_GRADIENT_MISSING: g_string_append_printf(missing, " %s", ts_op_name(op)); break;
    case TS_OP_GRADIENT_NOT_DIFFERENTIABLE: n_not++; break;
    }
  }
  g_test_message("gradients: %d rows with one, %d not differentiable; %zu cases, %d runs on %d "
                 "backends; max relative error %.3g (%s); rows without a gradient:%s",
                 n_defined, n_not, G_N_ELEMENTS(GRAD_CASES), n_runs_grad, ts_backend_count(),
                 worst, worst_name, missing->len ? missing->str : " none");
  if (unchecked->len)
    g_error("rows with a gradient and no finite-difference case:%s", unchecked->str);
  g_string_free(missing, TRUE);
  g_string_free(unchecked, TRUE);
  g_assert_true(ts_set_passes(passes));
  free(passes);
}

/* ---- ResourceApplyAdam against the update written as separate ops ---------------------- */

static ts_tensor *random_values(GRand *rng, ts_dtype dt, ts_shape shape, double lo, double hi)
{
  int64_t n = ts_shape_size(shape);
  double *v = g_new(double, n);
  for (int64_t k = 0; k < n; k++)
    v[k] = g_rand_double_range(rng, lo, hi);
  ts_tensor *t = ts_cast(ts_constant(TS_F64, shape, v), dt);
  g_free(v);
  return t;
}

static ts_tensor *scalar_of(ts_dtype dt, double v)
{
  return ts_cast(ts_scalar_f64(v), dt);
}

/* Three steps of Adam on 1000 random numbers (a size the pool splits) in
 * each float dtype: ResourceApplyAdam gives what the dozen ops of its
 * formula (ops/apply.c) give, op by op, for var, m and v. */
static void test_apply_adam_reference(void)
{
  GRand *rng = g_rand_new_with_seed(7);
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-7;
  for (ts_dtype dt = TS_F32; dt <= TS_F64; dt++) {
    g_assert_true(dt == TS_F32 || dt == TS_F64);
    ts_scope *scope = ts_scope_begin();
    ts_shape shape = TS_SHAPE(10, 100);
    ts_tensor *init[3] = { random_values(rng, dt, shape, -1, 1), random_values(rng, dt, shape, -0.1, 0.1),
                           random_values(rng, dt, shape, 0, 0.01) };
    ts_tensor *fused[3], *ops[3];
    for (int k = 0; k < 3; k++) {
      fused[k] = ts_variable_new(init[k], "fused");
      ops[k] = ts_variable_new(init[k], "ops");
    }
    ts_tensor *one = scalar_of(dt, 1);
    for (int t = 1; t <= 3; t++) {
      ts_tensor *g = random_values(rng, dt, shape, -2, 2);
      ts_tensor *p1 = ts_pow(scalar_of(dt, b1), scalar_of(dt, t));
      ts_tensor *p2 = ts_pow(scalar_of(dt, b2), scalar_of(dt, t));
      g_assert_true(ts_apply_adam(fused[0], fused[1], fused[2], p1, p2, scalar_of(dt, lr), scalar_of(dt, b1),
                                  scalar_of(dt, b2), scalar_of(dt, eps), g));
      ts_tensor *lr_t = ts_div(ts_mul(scalar_of(dt, lr), ts_sqrt(ts_sub(one, p2))), ts_sub(one, p1));
      ts_tensor *m = ts_assign_add(ops[1], ts_mul(ts_sub(g, ts_read(ops[1])),
                                                  ts_sub(one, scalar_of(dt, b1))));
      ts_tensor *v = ts_assign_add(ops[2], ts_mul(ts_sub(ts_mul(g, g), ts_read(ops[2])),
                                                  ts_sub(one, scalar_of(dt, b2))));
      ts_assign_sub(ops[0], ts_div(ts_mul(lr_t, m), ts_add(ts_sqrt(v), scalar_of(dt, eps))));
    }
    for (int k = 0; k < 3; k++) {
      double err = 0;
      ts_tensor *want = ts_read(ops[k]), *got = ts_read(fused[k]);
      if (!same_result(want, got, &err) || err != 0)
        g_error("ResourceApplyAdam, %s, %s: normalised error %g against the ops",
                ts_dtype_name(dt), k == 0 ? "var" : k == 1 ? "m" : "v", err);
      ts_tensor_unref(fused[k]);
      ts_tensor_unref(ops[k]);
    }
    ts_scope_end(scope);
  }
  g_rand_free(rng);
}

/* What is not three variables of var's dtype and shape is refused, naming it. */
static void test_apply_adam_refuses(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_zeros(TS_F32, TS_SHAPE(2, 3)), *s = ts_scalar_f32(0.5f);
  ts_tensor *var = ts_variable_new(x, "var"), *m = ts_variable_new(x, "m"), *v = ts_variable_new(x, "v");
  g_assert_false(ts_apply_adam(var, x, v, s, s, s, s, s, s, x));
  ts_error *e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(e->message, "m is not a variable"));
  ts_error_free(e);
  g_assert_false(ts_apply_adam(var, m, v, s, s, s, s, s, s, ts_zeros(TS_F32, TS_SHAPE(3, 2))));
  e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_SHAPE);
  g_assert_nonnull(strstr(e->message, "grad is f32[3,2]"));
  ts_error_free(e);
  g_assert_false(ts_apply_adam(var, m, v, s, s, ts_scalar_f64(0.5), s, s, s, x));
  e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_SHAPE);
  g_assert_nonnull(strstr(e->message, "lr is f64[]"));
  ts_error_free(e);
  g_assert_false(ts_apply_adam(var, var, v, s, s, s, s, s, s, x));
  e = ts_error_take();
  g_assert_nonnull(strstr(e->message, "three variables"));
  ts_error_free(e);
  ts_tensor_unref(var);
  ts_tensor_unref(m);
  ts_tensor_unref(v);
  ts_scope_end(scope);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/op-rows/every-row-mode-backend", test_every_row);
  g_test_add_func("/op-rows/gradients", test_gradients);
  g_test_add_func("/op-rows/apply-adam-reference", test_apply_adam_reference);
  g_test_add_func("/op-rows/apply-adam-refuses", test_apply_adam_refuses);
  return g_test_run();
}
