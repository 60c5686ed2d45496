/* ops/binary.c — binary elementwise ops with NumPy broadcasting.
 *
 * Each op has one row in binary_rows: the dtypes it takes and, per dtype,
 * three loops (both operands vectors, the first a scalar, the second a
 * scalar).  The kernel runs one loop over the whole output when shapes
 * allow, else one per row of the broadcast iterator. */
#include "elementwise.h"

#include <tgmath.h>

/* ---- one element ------------------------------------------------------------ */

/* Python's divmod on floats (NumPy's npy_divmod): the quotient floors, the
 * remainder takes the divisor's sign, and x / 0 gives inf or nan. */
#define FLOAT_DIVMOD(sfx, T)                                  \
  static inline T divmod_##sfx(T x, T y, T *mod)              \
  {                                                           \
    T m = fmod(x, y);                                         \
    if (y == 0) {                                             \
      *mod = m;                                               \
      return x / y;                                           \
    }                                                         \
    T d = (x - m) / y;                                        \
    if (m != 0) {                                             \
      if ((y < 0) != (m < 0)) {                               \
        m += y;                                               \
        d -= 1;                                               \
      }                                                       \
    } else {                                                  \
      m = copysign((T)0, y);                                  \
    }                                                         \
    *mod = m;                                                 \
    if (d == 0)                                               \
      return copysign((T)0, x / y);                           \
    T q = floor(d);                                           \
    return d - q > (T)0.5 ? q + 1 : q;                        \
  }

#define FLOAT_ELEMS(sfx, T)                                                              \
  FLOAT_DIVMOD(sfx, T)                                                                   \
  static inline T add_##sfx(T x, T y) { return x + y; }                                  \
  static inline T sub_##sfx(T x, T y) { return x - y; }                                  \
  static inline T mul_##sfx(T x, T y) { return x * y; }                                  \
  static inline T div_##sfx(T x, T y) { return x / y; }                                  \
  static inline T floordiv_##sfx(T x, T y) { T m; return divmod_##sfx(x, y, &m); }       \
  static inline T mod_##sfx(T x, T y) { T m; divmod_##sfx(x, y, &m); return m; }         \
  static inline T pow_##sfx(T x, T y) { return pow(x, y); }                              \
  static inline T maximum_##sfx(T x, T y) { return isnan(x) || x > y ? x : y; }          \
  static inline T minimum_##sfx(T x, T y) { return isnan(x) || x < y ? x : y; }

/* Signed integers wrap (the arithmetic runs in U) and floor like Python.
 * The kernel has ruled out y == 0 for // and %, and y < 0 for pow. */
#define SIGNED_ELEMS(sfx, T, U)                                                          \
  static inline T add_##sfx(T x, T y) { return (T)((U)x + (U)y); }                       \
  static inline T sub_##sfx(T x, T y) { return (T)((U)x - (U)y); }                       \
  static inline T mul_##sfx(T x, T y) { return (T)((U)x * (U)y); }                       \
  static inline T floordiv_##sfx(T x, T y)                                               \
  {                                                                                      \
    if (y == -1)                                                                         \
      return (T)-(U)x; /* MIN // -1 wraps */                                             \
    T q = x / y;                                                                         \
    return x % y != 0 && (x < 0) != (y < 0) ? q - 1 : q;                                 \
  }                                                                                      \
  static inline T mod_##sfx(T x, T y)                                                    \
  {                                                                                      \
    if (y == -1)                                                                         \
      return 0;                                                                          \
    T r = x % y;                                                                         \
    return r != 0 && (r < 0) != (y < 0) ? r + y : r;                                     \
  }                                                                                      \
  static inline T pow_##sfx(T x, T y)                                                    \
  {                                                                                      \
    U r = 1, b = (U)x;                                                                   \
    for (; y > 0; y >>= 1, b *= b)                                                       \
      if (y & 1)                                                                         \
        r *= b;                                                                          \
    return (T)r;                                                                         \
  }                                                                                      \
  static inline T maximum_##sfx(T x, T y) { return x > y ? x : y; }                      \
  static inline T minimum_##sfx(T x, T y) { return x < y ? x : y; }

/* uint8 arithmetic runs in int and wraps on the store. */
static inline uint8_t add_u8(uint8_t x, uint8_t y) { return (uint8_t)(x + y); }
static inline uint8_t sub_u8(uint8_t x, uint8_t y) { return (uint8_t)(x - y); }
static inline uint8_t mul_u8(uint8_t x, uint8_t y) { return (uint8_t)(x * y); }
static inline uint8_t floordiv_u8(uint8_t x, uint8_t y) { return x / y; }
static inline uint8_t mod_u8(uint8_t x, uint8_t y) { return x % y; }
static inline uint8_t maximum_u8(uint8_t x, uint8_t y) { return x > y ? x : y; }
static inline uint8_t minimum_u8(uint8_t x, uint8_t y) { return x < y ? x : y; }
static inline uint8_t pow_u8(uint8_t x, uint8_t y)
{
  unsigned r = 1, b = x;
  for (; y > 0; y >>= 1, b *= b)
    if (y & 1)
      r *= b;
  return (uint8_t)r;
}

#define COMPARE_ELEMS(sfx, T)                                            \
  static inline bool greater_##sfx(T x, T y) { return x > y; }           \
  static inline bool greater_equal_##sfx(T x, T y) { return x >= y; }    \
  static inline bool less_##sfx(T x, T y) { return x < y; }              \
  static inline bool less_equal_##sfx(T x, T y) { return x <= y; }       \
  static inline bool equal_##sfx(T x, T y) { return x == y; }            \
  static inline bool not_equal_##sfx(T x, T y) { return x != y; }

static inline bool logical_and_b(bool x, bool y) { return x && y; }
static inline bool logical_or_b(bool x, bool y) { return x || y; }

FLOAT_ELEMS(f32, float)
FLOAT_ELEMS(f64, double)
SIGNED_ELEMS(i32, int32_t, uint32_t)
SIGNED_ELEMS(i64, int64_t, uint64_t)
COMPARE_ELEMS(f32, float)
COMPARE_ELEMS(f64, double)
COMPARE_ELEMS(i32, int32_t)
COMPARE_ELEMS(i64, int64_t)
COMPARE_ELEMS(u8, uint8_t)
COMPARE_ELEMS(b, bool)

/* ---- loops ------------------------------------------------------------------ */

typedef void (*binary_loop)(int64_t n, const void *a, const void *b, void *out);

typedef struct binary_loops {
  binary_loop vv, sv, vs; /* s: that operand is one element */
} binary_loops;

#define BINARY_LOOPS(op, sfx, T, O)                                                    \
  static void op##_##sfx##_vv(int64_t n, const void *pa, const void *pb, \
                              void *po)                                       \
  {                                                                                    \
    const T *a = pa, *b = pb;                                                          \
    O *o = po;                                                                         \
    TS_EW_FOR(n, i, o[i] = op##_##sfx(a[i], b[i]));                                    \
  }                                                                                    \
  static void op##_##sfx##_sv(int64_t n, const void *pa, const void *pb, \
                              void *po)                                       \
  {                                                                                    \
    const T x = *(const T *)pa, *b = pb;                                               \
    O *o = po;                                                                         \
    TS_EW_FOR(n, i, o[i] = op##_##sfx(x, b[i]));                                       \
  }                                                                                    \
  static void op##_##sfx##_vs(int64_t n, const void *pa, const void *pb, \
                              void *po)                                       \
  {                                                                                    \
    const T *a = pa, y = *(const T *)pb;                                               \
    O *o = po;                                                                         \
    TS_EW_FOR(n, i, o[i] = op##_##sfx(a[i], y));                                       \
  }

#define LOOPS(op, sfx) { op##_##sfx##_vv, op##_##sfx##_sv, op##_##sfx##_vs }

#define FLOAT_LOOPS(op) BINARY_LOOPS(op, f32, float, float) BINARY_LOOPS(op, f64, double, double)
#define NUMERIC_LOOPS(op)                                                                 \
  FLOAT_LOOPS(op) BINARY_LOOPS(op, i32, int32_t, int32_t)                                 \
  BINARY_LOOPS(op, i64, int64_t, int64_t) BINARY_LOOPS(op, u8, uint8_t, uint8_t)
#define COMPARE_LOOPS(op)                                                                 \
  BINARY_LOOPS(op, f32, float, bool) BINARY_LOOPS(op, f64, double, bool)                  \
  BINARY_LOOPS(op, i32, int32_t, bool) BINARY_LOOPS(op, i64, int64_t, bool)               \
  BINARY_LOOPS(op, u8, uint8_t, bool) BINARY_LOOPS(op, b, bool, bool)

#define FLOAT_TABLE(op) [TS_F32] = LOOPS(op, f32), [TS_F64] = LOOPS(op, f64)
#define NUMERIC_TABLE(op) \
  FLOAT_TABLE(op), [TS_I32] = LOOPS(op, i32), [TS_I64] = LOOPS(op, i64), [TS_U8] = LOOPS(op, u8)
#define COMPARE_TABLE(op) NUMERIC_TABLE(op), [TS_BOOL] = LOOPS(op, b)

NUMERIC_LOOPS(add)
NUMERIC_LOOPS(sub)
NUMERIC_LOOPS(mul)
FLOAT_LOOPS(div)
NUMERIC_LOOPS(floordiv)
NUMERIC_LOOPS(mod)
NUMERIC_LOOPS(pow)
NUMERIC_LOOPS(maximum)
NUMERIC_LOOPS(minimum)
COMPARE_LOOPS(greater)
COMPARE_LOOPS(greater_equal)
COMPARE_LOOPS(less)
COMPARE_LOOPS(less_equal)
COMPARE_LOOPS(equal)
COMPARE_LOOPS(not_equal)
BINARY_LOOPS(logical_and, b, bool, bool)
BINARY_LOOPS(logical_or, b, bool, bool)

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

static bool check_exponent(ts_kernel_ctx *k)
{
  const ts_tensor *b = k->in[1];
  if (ts_dtype_is_integer(b->dtype))
    for (int64_t i = 0; i < b->size; i++)
      if (ts__load_i64(b->dtype, b->data, i) < 0)
        return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT,
                               "Integers to negative integer powers are not allowed");
  return true;
}

/* ---- the table ------------------------------------------------------------------ */

typedef struct binary_row {
  unsigned dtypes;                 /* accepted input dtypes */
  int64_t grain;                   /* elements per thread at least (elementwise.h) */
  bool compare;                    /* the output is bool */
  bool (*check)(ts_kernel_ctx *k); /* rejects operands the loops cannot take */
  binary_loops loops[TS_DTYPE_COUNT];
} binary_row;

/* Bool arithmetic is rejected (TS_ERR_DTYPE) rather than read as logic. */
static const binary_row binary_rows[TS_OP_COUNT] = {
  [TS_OP_ADD] = { TS_DTYPES_NUMERIC, TS_EW_GRAIN, false, NULL, { NUMERIC_TABLE(add) } },
  [TS_OP_SUB] = { TS_DTYPES_NUMERIC, TS_EW_GRAIN, false, NULL, { NUMERIC_TABLE(sub) } },
  [TS_OP_MUL] = { TS_DTYPES_NUMERIC, TS_EW_GRAIN, false, NULL, { NUMERIC_TABLE(mul) } },
  [TS_OP_DIV] = { TS_DTYPES_FLOAT, TS_EW_GRAIN, false, NULL, { FLOAT_TABLE(div) } },
  [TS_OP_FLOORDIV] = { TS_DTYPES_NUMERIC, TS_EW_GRAIN_COSTLY, false, check_divisor, { NUMERIC_TABLE(floordiv) } },
  [TS_OP_MOD] = { TS_DTYPES_NUMERIC, TS_EW_GRAIN_COSTLY, false, check_divisor, { NUMERIC_TABLE(mod) } },
  [TS_OP_POW] = { TS_DTYPES_NUMERIC, TS_EW_GRAIN_COSTLY, false, check_exponent, { NUMERIC_TABLE(pow) } },
  [TS_OP_MAXIMUM] = { TS_DTYPES_NUMERIC, TS_EW_GRAIN, false, NULL, { NUMERIC_TABLE(maximum) } },
  [TS_OP_MINIMUM] = { TS_DTYPES_NUMERIC, TS_EW_GRAIN, false, NULL, { NUMERIC_TABLE(minimum) } },
  [TS_OP_GREATER] = { TS_DTYPES_ALL, TS_EW_GRAIN, true, NULL, { COMPARE_TABLE(greater) } },
  [TS_OP_GREATER_EQUAL] = { TS_DTYPES_ALL, TS_EW_GRAIN, true, NULL, { COMPARE_TABLE(greater_equal) } },
  [TS_OP_LESS] = { TS_DTYPES_ALL, TS_EW_GRAIN, true, NULL, { COMPARE_TABLE(less) } },
  [TS_OP_LESS_EQUAL] = { TS_DTYPES_ALL, TS_EW_GRAIN, true, NULL, { COMPARE_TABLE(less_equal) } },
  [TS_OP_EQUAL] = { TS_DTYPES_ALL, TS_EW_GRAIN, true, NULL, { COMPARE_TABLE(equal) } },
  [TS_OP_NOT_EQUAL] = { TS_DTYPES_ALL, TS_EW_GRAIN, true, NULL, { COMPARE_TABLE(not_equal) } },
  [TS_OP_LOGICAL_AND] = { TS_DTYPES_BOOL, TS_EW_GRAIN, true, NULL, { [TS_BOOL] = LOOPS(logical_and, b) } },
  [TS_OP_LOGICAL_OR] = { TS_DTYPES_BOOL, TS_EW_GRAIN, true, NULL, { [TS_BOOL] = LOOPS(logical_or, b) } },
};

/* ---- inference and kernel ------------------------------------------------------- */

static bool binary_infer(ts_infer_ctx *c)
{
  const binary_row *row = &binary_rows[c->def->op];
  const ts_info *a = &c->in[0], *b = &c->in[1];
  char sa[TS_INFO_STR], sb[TS_INFO_STR];
  ts_shape shape;

  if (!ts__ew_check_dtypes(c, row->dtypes))
    return false;
  if (a->dtype != b->dtype)
    return ts__infer_fail(c, TS_ERR_DTYPE, "operands differ in dtype: %s and %s",
                          ts__info_str(sa, a->dtype, a->shape),
                          ts__info_str(sb, b->dtype, b->shape));
  if (!ts__broadcast_shapes(a->shape, b->shape, &shape))
    return ts__infer_fail(c, TS_ERR_SHAPE, "incompatible shapes for broadcasting: %s and %s",
                          ts__info_str(sa, a->dtype, a->shape),
                          ts__info_str(sb, b->dtype, b->shape));
  c->out[0] = (ts_info){ row->compare ? TS_BOOL : a->dtype, shape };
  return true;
}

/* The output split into ranges for the pool: equal shapes (or a scalar
 * operand) are one flat row, else rows of the broadcast iterator. */
typedef struct binary_job {
  binary_loop loop;
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
  const binary_row *row = &binary_rows[k->def->op];
  const ts_tensor *a = k->in[0], *b = k->in[1];
  ts_tensor *o = k->out[0];

  if (o->size == 0)
    return true;
  if (row->check && !row->check(k))
    return false;

  const binary_loops *f = &row->loops[a->dtype];
  binary_job j = { .a = a->data, .b = b->data, .out = o->data,
                   .size_in = ts_dtype_size(a->dtype), .size_out = ts_dtype_size(o->dtype),
                   .flat = true, .sa = 1, .sb = 1 };
  if (a->size == o->size && b->size == o->size) {
    j.loop = f->vv;
  } else if (a->size == 1 && b->size == o->size) {
    j.loop = f->sv;
    j.sa = 0;
  } else if (b->size == 1 && a->size == o->size) {
    j.loop = f->vs;
    j.sb = 0;
  } else {
    j.flat = false;
    ts__ew_iter_init(&j.it, o->shape, 2, k->in);
    j.loop = ts__ew_inner_stride(&j.it, 0) == 0 ? f->sv
             : ts__ew_inner_stride(&j.it, 1) == 0 ? f->vs
             : f->vv;
  }
  ts__parallel_range(o->size, row->grain, binary_range, &j);
  return true;
}

/* ---- definitions and wrappers ----------------------------------------------------- */

/* Logical ops take bool only, so they skip promotion: the error then names
 * the dtype the caller gave. */
#define BINARY_OPS(X)                                       \
  X(ADD, add, "Add", TS_OPF_PROMOTE)                        \
  X(SUB, sub, "Sub", TS_OPF_PROMOTE)                        \
  X(MUL, mul, "Mul", TS_OPF_PROMOTE)                        \
  X(DIV, div, "RealDiv", TS_OPF_PROMOTE)                    \
  X(FLOORDIV, floordiv, "FloorDiv", TS_OPF_PROMOTE)         \
  X(MOD, mod, "FloorMod", TS_OPF_PROMOTE)                   \
  X(POW, pow, "Pow", TS_OPF_PROMOTE)                        \
  X(MAXIMUM, maximum, "Maximum", TS_OPF_PROMOTE)            \
  X(MINIMUM, minimum, "Minimum", TS_OPF_PROMOTE)            \
  X(GREATER, greater, "Greater", TS_OPF_PROMOTE)            \
  X(GREATER_EQUAL, greater_equal, "GreaterEqual", TS_OPF_PROMOTE) \
  X(LESS, less, "Less", TS_OPF_PROMOTE)                     \
  X(LESS_EQUAL, less_equal, "LessEqual", TS_OPF_PROMOTE)    \
  X(EQUAL, equal, "Equal", TS_OPF_PROMOTE)                  \
  X(NOT_EQUAL, not_equal, "NotEqual", TS_OPF_PROMOTE)       \
  X(LOGICAL_AND, logical_and, "LogicalAnd", 0)              \
  X(LOGICAL_OR, logical_or, "LogicalOr", 0)

#define BINARY_DEF(ID, id, NAME, FLAGS)                                         \
  const ts_op_def ts__op_##id = { .op = TS_OP_##ID, .name = NAME, .api_name = #id, \
                                  .n_inputs = 2, .n_outputs = 1, .n_promote = -1,  \
                                  .flags = FLAGS, .infer = binary_infer,           \
                                  .kernel[TS_DEVICE_CPU] = binary_cpu };
BINARY_OPS(BINARY_DEF)

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

#define BINARY_WRAPPER(ID, id, NAME, FLAGS)                           \
  ts_tensor *ts_##id##_at(ts_loc loc, ts_tensor *a, ts_tensor *b)     \
  {                                                                   \
    return binary_at(loc, TS_OP_##ID, a, b);                          \
  }
BINARY_OPS(BINARY_WRAPPER)
