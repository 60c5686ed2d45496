/* ops/unary.c — unary elementwise ops: one row per op in unary_rows with the
 * dtypes it takes and a contiguous loop per dtype. */
#include "elementwise.h"

#include <tgmath.h>

#include "kernels/kernels.h"

/* ---- one element ------------------------------------------------------------ */

#define FLOAT_ELEMS(sfx, T)                                                   \
  static inline T neg_##sfx(T x) { return -x; }                               \
  static inline T abs_##sfx(T x) { return fabs(x); }                          \
  static inline T log_##sfx(T x) { return log(x); }                           \
  static inline T sqrt_##sfx(T x) { return sqrt(x); }                         \
  static inline T relu_##sfx(T x) { return x < 0 ? 0 : x; /* keeps nan */ }

/* Signed integers negate in U, so -MIN wraps to MIN as in NumPy. */
#define SIGNED_ELEMS(sfx, T, U)                                               \
  static inline T neg_##sfx(T x) { return (T)-(U)x; }                         \
  static inline T abs_##sfx(T x) { return x < 0 ? (T)-(U)x : x; }            \
  static inline T relu_##sfx(T x) { return x < 0 ? 0 : x; }

FLOAT_ELEMS(f32, float)
FLOAT_ELEMS(f64, double)
/* f32 exp, tanh and sigmoid are the array kernels (VMATH_LOOP below). */
static inline double exp_f64(double x) { return exp(x); }
static inline double tanh_f64(double x) { return tanh(x); }
static inline double sigmoid_f64(double x) { return 1 / (1 + exp(-x)); }
SIGNED_ELEMS(i32, int32_t, uint32_t)
SIGNED_ELEMS(i64, int64_t, uint64_t)
static inline uint8_t neg_u8(uint8_t x) { return (uint8_t)-x; }
static inline uint8_t abs_u8(uint8_t x) { return x; }
static inline uint8_t relu_u8(uint8_t x) { return x; }
static inline bool logical_not_b(bool x) { return !x; }

/* ---- loops and the table ------------------------------------------------------- */

typedef void (*unary_loop)(int64_t n, const void *x, void *out);

#define UNARY_LOOP(op, sfx, T)                                                           \
  static void op##_##sfx##_loop(int64_t n, const void *px, void *po) \
  {                                                                                    \
    const T *x = px;                                                                   \
    T *o = po;                                                                         \
    TS_EW_FOR(n, i, o[i] = op##_##sfx(x[i]));                                          \
  }

/* f32 exp, tanh and sigmoid: kernels/vmath.c's vectorised ones, as the
 * fused chains (ops/fused.c) and GEMM epilogues (kernels/gemm.c) use. */
#define VMATH_LOOP(op)                                                   \
  static void op##_f32_loop(int64_t n, const void *x, void *o)           \
  {                                                                      \
    ts__v##op##_f32(x, o, n);                                            \
  }

#define FLOAT_LOOPS(op) UNARY_LOOP(op, f32, float) UNARY_LOOP(op, f64, double)
#define VMATH_LOOPS(op) VMATH_LOOP(op) UNARY_LOOP(op, f64, double)
#define NUMERIC_LOOPS(op)                                                            \
  FLOAT_LOOPS(op) UNARY_LOOP(op, i32, int32_t) UNARY_LOOP(op, i64, int64_t)          \
  UNARY_LOOP(op, u8, uint8_t)

#define FLOAT_TABLE(op) [TS_F32] = op##_f32_loop, [TS_F64] = op##_f64_loop
#define NUMERIC_TABLE(op) \
  FLOAT_TABLE(op), [TS_I32] = op##_i32_loop, [TS_I64] = op##_i64_loop, [TS_U8] = op##_u8_loop

NUMERIC_LOOPS(neg)
NUMERIC_LOOPS(abs)
VMATH_LOOPS(exp)
FLOAT_LOOPS(log)
FLOAT_LOOPS(sqrt)
VMATH_LOOPS(tanh)
VMATH_LOOPS(sigmoid)
NUMERIC_LOOPS(relu)
UNARY_LOOP(logical_not, b, bool)

typedef struct unary_row {
  unsigned dtypes; /* accepted input dtypes */
  int64_t grain;   /* elements per thread at least (elementwise.h) */
  unary_loop loops[TS_DTYPE_COUNT];
} unary_row;

static const unary_row unary_rows[TS_OP_COUNT] = {
  [TS_OP_NEG] = { TS_DTYPES_NUMERIC, TS_EW_GRAIN, { NUMERIC_TABLE(neg) } },
  [TS_OP_ABS] = { TS_DTYPES_NUMERIC, TS_EW_GRAIN, { NUMERIC_TABLE(abs) } },
  [TS_OP_EXP] = { TS_DTYPES_FLOAT, TS_EW_GRAIN_COSTLY, { FLOAT_TABLE(exp) } },
  [TS_OP_LOG] = { TS_DTYPES_FLOAT, TS_EW_GRAIN_COSTLY, { FLOAT_TABLE(log) } },
  [TS_OP_SQRT] = { TS_DTYPES_FLOAT, TS_EW_GRAIN, { FLOAT_TABLE(sqrt) } },
  [TS_OP_TANH] = { TS_DTYPES_FLOAT, TS_EW_GRAIN_COSTLY, { FLOAT_TABLE(tanh) } },
  [TS_OP_SIGMOID] = { TS_DTYPES_FLOAT, TS_EW_GRAIN_COSTLY, { FLOAT_TABLE(sigmoid) } },
  [TS_OP_RELU] = { TS_DTYPES_NUMERIC, TS_EW_GRAIN, { NUMERIC_TABLE(relu) } },
  [TS_OP_LOGICAL_NOT] = { TS_DTYPES_BOOL, TS_EW_GRAIN, { [TS_BOOL] = logical_not_b_loop } },
};

/* ---- inference and kernel ------------------------------------------------------- */

static bool unary_infer(ts_infer_ctx *c)
{
  if (!ts__ew_check_dtypes(c, unary_rows[c->def->op].dtypes))
    return false;
  c->out[0] = c->in[0];
  return true;
}

typedef struct unary_job {
  unary_loop loop;
  const char *x;
  char *out;
  size_t size; /* of an element, in and out */
} unary_job;

static void unary_range(void *ctx, int64_t begin, int64_t end)
{
  const unary_job *j = ctx;
  j->loop(end - begin, j->x + begin * j->size, j->out + begin * j->size);
}

static bool unary_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  const unary_row *row = &unary_rows[k->def->op];
  unary_job j = { row->loops[x->dtype], x->data, k->out[0]->data, ts_dtype_size(x->dtype) };
  ts__parallel_range(x->size, row->grain, unary_range, &j);
  return true;
}

/* ---- definitions and wrappers ----------------------------------------------------- */

#define UNARY_OPS(X)                              \
  X(NEG, neg, "Neg")                              \
  X(ABS, abs, "Abs")                              \
  X(EXP, exp, "Exp")                              \
  X(LOG, log, "Log")                              \
  X(SQRT, sqrt, "Sqrt")                           \
  X(TANH, tanh, "Tanh")                           \
  X(SIGMOID, sigmoid, "Sigmoid")                  \
  X(RELU, relu, "Relu")                           \
  X(LOGICAL_NOT, logical_not, "LogicalNot")

#define UNARY_DEF(ID, id, NAME)                                                  \
  const ts_op_def ts__op_##id = { .op = TS_OP_##ID, .name = NAME, .api_name = #id, \
                                  .n_inputs = 1, .n_outputs = 1,                   \
                                  .infer = unary_infer, .kernel[TS_DEVICE_CPU] = unary_cpu };
UNARY_OPS(UNARY_DEF)

#define UNARY_WRAPPER(ID, id, NAME)                           \
  ts_tensor *ts_##id##_at(ts_loc loc, ts_tensor *x)           \
  {                                                           \
    return ts__dispatch1(loc, TS_OP_##ID, &x, 1, NULL);       \
  }
UNARY_OPS(UNARY_WRAPPER)
