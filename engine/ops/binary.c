/* ops/binary.c — binary elementwise ops with NumPy broadcasting, one row
 * each in BINARY_ROWS; the loops (both operands vectors, the first a
 * scalar, the second a scalar, per dtype), the formula table, the
 * definition and the ts_<id>_at wrapper of each op are made from its row
 * and its formulas.  The kernel runs one loop over the whole output when
 * shapes allow, else one per row of the broadcast iterator. */
#include "elementwise.h"

#include "binary_rows.h"

/* ---- made from the rows -------------------------------------------------------- */

/* The loops of one dtype: sfx the loops', fsfx the formula's (f32 for the
 * 16-bit floats), V an element to the formula's type, R its result to O. */
#define BINARY_LOOPS_AS(op, sfx, fsfx, T, O, V, R)                                     \
  static void op##_##sfx##_vv(int64_t n, const void *pa, const void *pb, void *po)     \
  {                                                                                    \
    const T *a = pa, *b = pb;                                                          \
    O *o = po;                                                                         \
    TS_EW_FOR(n, i, o[i] = R(op##_##fsfx(V(a[i]), V(b[i]))));                          \
  }                                                                                    \
  static void op##_##sfx##_sv(int64_t n, const void *pa, const void *pb, void *po)     \
  {                                                                                    \
    const T x = *(const T *)pa, *b = pb;                                               \
    O *o = po;                                                                         \
    TS_EW_FOR(n, i, o[i] = R(op##_##fsfx(V(x), V(b[i]))));                             \
  }                                                                                    \
  static void op##_##sfx##_vs(int64_t n, const void *pa, const void *pb, void *po)     \
  {                                                                                    \
    const T *a = pa, y = *(const T *)pb;                                               \
    O *o = po;                                                                         \
    TS_EW_FOR(n, i, o[i] = R(op##_##fsfx(V(a[i]), V(y))));                             \
  }
#define AS_IS(x) (x)
#define BINARY_LOOPS(op, sfx, T, O) BINARY_LOOPS_AS(op, sfx, sfx, T, O, AS_IS, AS_IS)
/* 16-bit floats: arithmetic rounds the f32 result back, comparisons give bool */
#define HALF_LOOPS(op, R16, RBF16)                                                   \
  BINARY_LOOPS_AS(op, f16, f32, ts_f16, R16, ts__f16_to_f32, R16##_RESULT)          \
  BINARY_LOOPS_AS(op, bf16, f32, ts_bf16, RBF16, ts__bf16_to_f32, RBF16##_RESULT)
#define ts_f16_RESULT ts__f64_to_f16
#define ts_bf16_RESULT ts__f64_to_bf16
#define bool_RESULT AS_IS

#define LOOPS(op, sfx) { op##_##sfx##_vv, op##_##sfx##_sv, op##_##sfx##_vs }

#define LOOPS_FLOAT(op)                                                                   \
  BINARY_LOOPS(op, f32, float, float) BINARY_LOOPS(op, f64, double, double)               \
  HALF_LOOPS(op, ts_f16, ts_bf16)
#define LOOPS_INT(op, O8, O16, OU8, OU16, OU32, OU64, O32, O64)                           \
  BINARY_LOOPS(op, i32, int32_t, O32) BINARY_LOOPS(op, i64, int64_t, O64)                 \
  BINARY_LOOPS(op, u8, uint8_t, OU8) BINARY_LOOPS(op, i8, int8_t, O8)                     \
  BINARY_LOOPS(op, i16, int16_t, O16) BINARY_LOOPS(op, u16, uint16_t, OU16)               \
  BINARY_LOOPS(op, u32, uint32_t, OU32) BINARY_LOOPS(op, u64, uint64_t, OU64)
#define LOOPS_NUMERIC(op)                                                                 \
  LOOPS_FLOAT(op)                                                                         \
  LOOPS_INT(op, int8_t, int16_t, uint8_t, uint16_t, uint32_t, uint64_t, int32_t, int64_t)
#define LOOPS_ALL(op)                                                                     \
  BINARY_LOOPS(op, f32, float, bool) BINARY_LOOPS(op, f64, double, bool)                  \
  HALF_LOOPS(op, bool, bool) LOOPS_INT(op, bool, bool, bool, bool, bool, bool, bool, bool) \
  BINARY_LOOPS(op, b, bool, bool)
#define LOOPS_BOOL(op) BINARY_LOOPS(op, b, bool, bool)

#define TABLE_FLOAT(op)                                                                   \
  [TS_F32] = LOOPS(op, f32), [TS_F64] = LOOPS(op, f64), [TS_F16] = LOOPS(op, f16),        \
  [TS_BF16] = LOOPS(op, bf16)
#define TABLE_NUMERIC(op)                                                                 \
  TABLE_FLOAT(op), [TS_I32] = LOOPS(op, i32), [TS_I64] = LOOPS(op, i64),                  \
  [TS_U8] = LOOPS(op, u8), [TS_I8] = LOOPS(op, i8), [TS_I16] = LOOPS(op, i16),            \
  [TS_U16] = LOOPS(op, u16), [TS_U32] = LOOPS(op, u32), [TS_U64] = LOOPS(op, u64)
#define TABLE_ALL(op) TABLE_NUMERIC(op), [TS_BOOL] = LOOPS(op, b)
#define TABLE_BOOL(op) [TS_BOOL] = LOOPS(op, b)

/* ---- checks the loops rely on ------------------------------------------------- */

static bool check_divisor(ts_kernel_ctx *k)
{
  const ts_tensor *b = k->in[1];
  if (ts_dtype_is_integer(b->dtype))
    for (int64_t i = 0; i < b->size; i++)
      if (ts__load_i64(b->dtype, b->data, i) == 0)
        return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT, "Integer division by zero");
  return true;
}

/* A uint64 exponent past INT64_MAX is large, not negative (as int64 it
 * would read so): NumPy's uint64 power takes it, as the CUDA check does. */
static bool check_exponent(ts_kernel_ctx *k)
{
  const ts_tensor *b = k->in[1];
  if (ts_dtype_is_integer(b->dtype) && b->dtype != TS_U64)
    for (int64_t i = 0; i < b->size; i++)
      if (ts__load_i64(b->dtype, b->data, i) < 0)
        return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT,
                               "Integers to negative integer powers are not allowed");
  return true;
}

#define CHECK_ENTRY(ID, id, NAME, DTYPES, GRAIN, CHECK, FLAGS, GRAD) [TS_OP_##ID] = CHECK,
static bool (*const checks[TS_OP_COUNT])(ts_kernel_ctx *k) = { BINARY_ROWS(CHECK_ENTRY) };

#ifdef TS_HAVE_CUDA
/* On CUDA an integer FloorDiv, FloorMod or Pow fails as the CPU's does:
 * in a CUDA Graph's capture its kernel checks b on the device (the next
 * host copy or synchronize raises the check's error), else the row's
 * check of b (above) runs on a host copy of it first (the copy waits for
 * b), then the row's kernel (backend/cuda/kernels.c). */
static bool binary_cuda(ts_kernel_ctx *k)
{
  bool (*check)(ts_kernel_ctx *k) = checks[k->def->op];
  if (!check || !ts_dtype_is_integer(k->in[1]->dtype) || k->out[0]->size == 0)
    return ts__cuda_binary(k);
  int captured = ts__cuda_binary_captured(k, check);
  if (captured >= 0)
    return captured;
  ts_tensor *in[2] = { k->in[0], ts__tensor_host(k->loc, k->in[1]) };
  if (!in[1])
    return false;
  ts_kernel_ctx host = *k;
  host.in = in;
  return check(&host) && ts__cuda_binary(k);
}
#endif

/* ---- inference and kernel ------------------------------------------------------- */

static bool binary_infer(ts_infer_ctx *c)
{
  const ts_info *a = &c->in[0], *b = &c->in[1];
  char sa[TS_INFO_STR], sb[TS_INFO_STR];
  ts_shape shape;

  if (!ts__ew_check_dtypes(c, c->def->dtypes))
    return false;
  if (a->dtype != b->dtype)
    return ts__infer_fail(c, TS_ERR_DTYPE, "operands differ in dtype: %s and %s",
                          ts__info_str(sa, a->dtype, a->shape),
                          ts__info_str(sb, b->dtype, b->shape));
  if (!ts__broadcast_shapes(a->shape, b->shape, &shape))
    return ts__infer_fail(c, TS_ERR_SHAPE, "incompatible shapes for broadcasting: %s and %s",
                          ts__info_str(sa, a->dtype, a->shape),
                          ts__info_str(sb, b->dtype, b->shape));
  bool logical = c->def->dtypes & TS_DTYPE_BIT(TS_BOOL); /* comparisons and logic */
  c->out[0] = (ts_info){ logical ? TS_BOOL : a->dtype, shape };
  return true;
}

/* The output split into ranges for the pool: equal shapes (or a scalar
 * operand) are one flat row, else rows of the broadcast iterator. */
typedef struct binary_job {
  ts_ew_loop loop;
  const char *a, *b;
  char *out;
  size_t size_in, size_out;
  bool flat;
  int64_t sa, sb; /* flat: 0 where that operand is a scalar, else 1 */
  ts_ew_iter it;  /* else */
} binary_job;

static void binary_range(void *ctx, int64_t begin, int64_t end)
{
  const binary_job *j = ctx;
  if (j->flat) {
    j->loop(end - begin, j->a + begin * j->sa * j->size_in, j->b + begin * j->sb * j->size_in,
            j->out + begin * j->size_out);
    return;
  }
  ts_ew_iter it = j->it;
  int64_t sa = ts__ew_inner_stride(&it, 0), sb = ts__ew_inner_stride(&it, 1);
  int64_t col = begin % it.inner;
  ts__ew_iter_seek(&it, begin / it.inner);
  while (begin < end) {
    int64_t n = MIN(it.inner - col, end - begin);
    j->loop(n, j->a + (it.off[0] + col * sa) * j->size_in,
            j->b + (it.off[1] + col * sb) * j->size_in, j->out + begin * j->size_out);
    begin += n;
    col = 0;
    ts__ew_iter_next(&it);
  }
}

static bool binary_cpu(ts_kernel_ctx *k)
{
  const ts_ew_formula *f = k->def->formula;
  bool (*check)(ts_kernel_ctx *k) = checks[k->def->op];
  const ts_tensor *a = k->in[0], *b = k->in[1];
  ts_tensor *o = k->out[0];

  if (o->size == 0)
    return true;
  if (check && !check(k))
    return false;

  ts_ew_loop const *loop = f->loop[a->dtype];
  binary_job j = { .a = a->data, .b = b->data, .out = o->data,
                   .size_in = ts_dtype_size(a->dtype), .size_out = ts_dtype_size(o->dtype),
                   .flat = true, .sa = 1, .sb = 1 };
  if (a->size == o->size && b->size == o->size) {
    j.loop = loop[TS_EW_VV];
  } else if (a->size == 1 && b->size == o->size) {
    j.loop = loop[TS_EW_SV];
    j.sa = 0;
  } else if (b->size == 1 && a->size == o->size) {
    j.loop = loop[TS_EW_VS];
    j.sb = 0;
  } else {
    j.flat = false;
    ts__ew_iter_init(&j.it, o->shape, 2, k->in);
    j.loop = loop[ts__ew_inner_stride(&j.it, 0) == 0   ? TS_EW_SV
                  : ts__ew_inner_stride(&j.it, 1) == 0 ? TS_EW_VS
                                                       : TS_EW_VV];
  }
  ts__parallel_range(o->size, f->grain, binary_range, &j);
  return true;
}

/* True division of integers runs in f64 (as tf.math.truediv); the casts are
 * ordinary Cast ops, so a traced graph shows them. */
static void true_div_operands(ts_loc loc, ts_tensor **a, ts_tensor **b)
{
  if (*a && *b && ts_dtype_is_integer(ts_dtype_promote((*a)->dtype, (*b)->dtype))) {
    *a = ts_cast_at(loc, *a, TS_F64);
    *b = ts_cast_at(loc, *b, TS_F64);
  }
}

static ts_tensor *binary_at(ts_loc loc, ts_op op, ts_tensor *a, ts_tensor *b)
{
  if (op == TS_OP_DIV)
    true_div_operands(loc, &a, &b);
  ts_tensor *in[2] = { a, b };
  return ts__dispatch1(loc, op, in, 2, NULL);
}

/* ---- gradients: grad_<id> (ts_grad_fn), each summed back over what broadcast ---- */

static bool unbroadcast2(const ts_op_call *c, ts_tensor *ga, ts_tensor *gb, ts_tensor **gi)
{
  gi[0] = ts__grad_unbroadcast(c->loc, ga, c->in[0], 0);
  gi[1] = ts__grad_unbroadcast(c->loc, gb, c->in[1], 0);
  return gi[0] && gi[1];
}

static bool grad_add(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return unbroadcast2(c, g[0], g[0], gi);
}

static bool grad_sub(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return unbroadcast2(c, g[0], ts_neg_at(c->loc, g[0]), gi);
}

static bool grad_mul(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return unbroadcast2(c, ts_mul_at(c->loc, g[0], c->in[1]), ts_mul_at(c->loc, g[0], c->in[0]), gi);
}

/* d(a/b) = da / b - db * (a/b) / b */
static bool grad_div(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *ga = ts_div_at(l, g[0], c->in[1]);
  return unbroadcast2(c, ga, ts_neg_at(l, ts_div_at(l, ts_mul_at(l, ga, c->in[0]), c->in[1])), gi);
}

/* a mod b = a - floor(a / b) * b */
static bool grad_mod(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *q = ts_floordiv_at(l, c->in[0], c->in[1]);
  return unbroadcast2(c, g[0], ts_neg_at(l, ts_mul_at(l, g[0], q)), gi);
}

/* d(a^b) = b a^(b-1) da + a^b log(a) db, the second 0 where a <= 0 (as TensorFlow) */
static bool grad_pow(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *a = c->in[0], *b = c->in[1];
  ts_tensor *one = ts__grad_scalar(a->dtype, 1), *zero = ts__grad_scalar(a->dtype, 0);
  ts_tensor *ga = ts_mul_at(l, g[0], ts_mul_at(l, b, ts_pow_at(l, a, ts_sub_at(l, b, one))));
  ts_tensor *positive = ts_greater_at(l, a, zero);
  ts_tensor *log_a = ts_where_at(l, positive, ts_log_at(l, ts_where_at(l, positive, a, one)), zero);
  ts_tensor *gb = ts_mul_at(l, g[0], ts_mul_at(l, out[0], log_a));
  return unbroadcast2(c, ga, gb, gi);
}

/* Maximum: to a where a >= b, else to b (Minimum: a <= b), as TensorFlow. */
static bool grad_select(const ts_op_call *c, ts_tensor *const *g, ts_tensor **gi, ts_tensor *to_a)
{
  ts_loc l = c->loc;
  ts_dtype dt = c->in[0]->dtype;
  ts_tensor *ma = ts__grad_mask(l, to_a, dt);
  ts_tensor *mb = ts_sub_at(l, ts__grad_scalar(dt, 1), ma);
  return unbroadcast2(c, ts_mul_at(l, g[0], ma), ts_mul_at(l, g[0], mb), gi);
}

static bool grad_maximum(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                         ts_tensor **gi)
{
  return grad_select(c, g, gi, ts_greater_equal_at(c->loc, c->in[0], c->in[1]));
}

static bool grad_minimum(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                         ts_tensor **gi)
{
  return grad_select(c, g, gi, ts_less_equal_at(c->loc, c->in[0], c->in[1]));
}

/* 2 (a - b) and its negation, as TensorFlow's SquaredDifferenceGrad */
static bool grad_squared_difference(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                                    ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *a = c->in[0], *b = c->in[1];
  ts_tensor *ga = ts_mul_at(l, ts_mul_at(l, ts__grad_scalar(a->dtype, 2), g[0]), ts_sub_at(l, a, b));
  return unbroadcast2(c, ga, ts_neg_at(l, ga), gi);
}

/* atan2(y, x): x / (x^2 + y^2) and -y / (x^2 + y^2), as TensorFlow's Atan2Grad */
static bool grad_atan2(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *y = c->in[0], *x = c->in[1];
  ts_tensor *inv = ts_div_at(l, g[0], ts_add_at(l, ts_mul_at(l, x, x), ts_mul_at(l, y, y)));
  return unbroadcast2(c, ts_mul_at(l, x, inv), ts_neg_at(l, ts_mul_at(l, y, inv)), gi);
}

/* a - trunc(a / b) * b: 1 and -trunc(a / b), FloorMod's gradient with the
 * quotient truncated (TensorFlow registers none for TruncateMod) */
static bool grad_truncatemod(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                             ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *q = ts_truncatediv_at(l, c->in[0], c->in[1]);
  return unbroadcast2(c, g[0], ts_neg_at(l, ts_mul_at(l, g[0], q)), gi);
}

/* as TensorFlow's DivNoNanGrad: div_no_nan(g, b) and g div_no_nan(div_no_nan(-a, b), b) */
static bool grad_div_no_nan(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                            ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *a = c->in[0], *b = c->in[1];
  ts_tensor *gb = ts_mul_at(l, g[0], ts_div_no_nan_at(l, ts_div_no_nan_at(l, ts_neg_at(l, a), b), b));
  return unbroadcast2(c, ts_div_no_nan_at(l, g[0], b), gb, gi);
}

/* as TensorFlow's XlogyGrad: xlogy(x != 0, y) and xdivy(x, y) (0 where x
 * is 0, else x / y) */
static bool grad_xlogy(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *x = c->in[0], *y = c->in[1];
  ts_tensor *zero = ts__grad_scalar(x->dtype, 0);
  ts_tensor *nonzero = ts__grad_mask(l, ts_not_equal_at(l, x, zero), x->dtype);
  ts_tensor *xdivy = ts_where_at(l, ts_equal_at(l, x, zero), zero, ts_div_at(l, x, y));
  return unbroadcast2(c, ts_mul_at(l, g[0], ts_xlogy_at(l, nonzero, y)), ts_mul_at(l, g[0], xdivy), gi);
}

#define BINARY_DEF(ID, id, NAME, DTYPES, GRAIN, CHECK, FLAGS, GRAD)                      \
  LOOPS_##DTYPES(id)                                                                     \
  static const ts_ew_formula id##_formula = { GRAIN, { TABLE_##DTYPES(id) } };           \
  const ts_op_def ts__op_##id = { .op = TS_OP_##ID, .name = NAME, .api_name = #id,       \
                                  .n_inputs = 2, .n_outputs = 1, .n_promote = -1,        \
                                  .flags = TS_OPF_ELEMENTWISE | (FLAGS),                 \
                                  .infer = binary_infer, .kernel[TS_DEVICE_CPU] = binary_cpu, \
                                  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(binary_cuda), \
                                  .grad = GRAD,                                          \
                                  .dtypes = TS_DTYPES_##DTYPES, .formula = &id##_formula }; \
  ts_tensor *ts_##id##_at(ts_loc loc, ts_tensor *a, ts_tensor *b)                        \
  {                                                                                      \
    return binary_at(loc, TS_OP_##ID, a, b);                                             \
  }
BINARY_ROWS(BINARY_DEF)
