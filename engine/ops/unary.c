/* ops/unary.c — unary elementwise ops, one row each in UNARY_ROWS; the
 * loops, the formula table, the definition and the ts_<id>_at wrapper of
 * each op are made from its row and its formula (docs/engine.md, "Adding
 * an elementwise op"). */
#include "elementwise.h"

#include <tgmath.h>

#include "kernels/kernels.h"

/* ---- the rows ---------------------------------------------------------------
 * X(ID, id, Name, dtypes, grain, flags, f32):
 *   dtypes  the input dtypes it takes: FLOAT (f32, f64), NUMERIC (and i32,
 *           i64, u8) or BOOL; the formulas below exist for those;
 *   grain   TS_EW_GRAIN, or TS_EW_GRAIN_COSTLY for a costly element;
 *   flags   TS_EW_FUSE (TS_OPF_FUSIBLE | TS_OPF_INPLACE) for an op
 *           FusedElementwise programs hold and the planner runs in place;
 *   f32     SCALAR (the formula) or ARRAY: kernels/vmath.c's vectorised
 *           ts__v<id>_f32, for the unfused op and fused programs alike. */
#define UNARY_ROWS(X)                                                                \
  X(NEG, neg, "Neg", NUMERIC, TS_EW_GRAIN, TS_EW_FUSE, SCALAR)                      \
  X(ABS, abs, "Abs", NUMERIC, TS_EW_GRAIN, TS_EW_FUSE, SCALAR)                      \
  X(EXP, exp, "Exp", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, ARRAY)                  \
  X(LOG, log, "Log", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR)                 \
  X(SQRT, sqrt, "Sqrt", FLOAT, TS_EW_GRAIN, TS_EW_FUSE, SCALAR)                     \
  X(TANH, tanh, "Tanh", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, ARRAY)               \
  X(SIGMOID, sigmoid, "Sigmoid", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, ARRAY)      \
  X(RELU, relu, "Relu", NUMERIC, TS_EW_GRAIN, TS_EW_FUSE, SCALAR)                   \
  X(LOGICAL_NOT, logical_not, "LogicalNot", BOOL, TS_EW_GRAIN, 0, SCALAR)           \
  X(SOFTPLUS, softplus, "Softplus", FLOAT, TS_EW_GRAIN_COSTLY, TS_EW_FUSE, SCALAR)

/* ---- the formulas: <id>_<dtype>(x) --------------------------------------------- */

/* Floats: one expression for f32 and f64 (tgmath picks the function).
 * An ARRAY row's f32 has an array kernel instead: its formula goes unused
 * (clang warns of that, gcc not). */
#define FLOAT_FORMULA(id, expr)                                                    \
  static inline __attribute__((unused)) float id##_f32(float x) { return (expr); } \
  static inline double id##_f64(double x) { return (expr); }
/* Signed integers: T the type, U its unsigned twin (arithmetic that wraps). */
#define SIGNED_FORMULA(id, expr) \
  SIGNED_ONE(id, i32, int32_t, uint32_t, expr) SIGNED_ONE(id, i64, int64_t, uint64_t, expr)
#define SIGNED_ONE(id, sfx, TT, UU, expr)                                  \
  static inline TT id##_##sfx(TT x)                                        \
  {                                                                        \
    typedef TT T __attribute__((unused));                                  \
    typedef UU U __attribute__((unused));                                  \
    return (expr);                                                         \
  }

FLOAT_FORMULA(neg, -x)
FLOAT_FORMULA(abs, fabs(x))
FLOAT_FORMULA(exp, exp(x)) /* f64; f32 is the array kernel */
FLOAT_FORMULA(log, log(x))
FLOAT_FORMULA(sqrt, sqrt(x))
FLOAT_FORMULA(tanh, tanh(x))
FLOAT_FORMULA(sigmoid, 1 / (1 + exp(-x)))
FLOAT_FORMULA(relu, x < 0 ? 0 : x) /* keeps nan */
/* log(1 + exp(x)) = log1p(exp(-|x|)) + max(x, 0): exp never overflows */
FLOAT_FORMULA(softplus, log1p(exp(-fabs(x))) + (x > 0 ? x : 0))
/* Signed integers negate in U, so -MIN wraps to MIN as in NumPy. */
SIGNED_FORMULA(neg, (T)-(U)x)
SIGNED_FORMULA(abs, x < 0 ? (T)-(U)x : x)
SIGNED_FORMULA(relu, x < 0 ? 0 : x)
static inline uint8_t neg_u8(uint8_t x) { return (uint8_t)-x; }
static inline uint8_t abs_u8(uint8_t x) { return x; }
static inline uint8_t relu_u8(uint8_t x) { return x; }
static inline bool logical_not_b(bool x) { return !x; }

/* ---- made from the rows -------------------------------------------------------- */

#define LOOP(id, sfx, T)                                                         \
  static void id##_##sfx##_loop(int64_t n, const void *px, const void *unused,   \
                                void *po)                                        \
  {                                                                              \
    const T *x = px;                                                             \
    T *o = po;                                                                   \
    TS_EW_FOR(n, i, o[i] = id##_##sfx(x[i]));                                    \
  }
#define F32_LOOP_SCALAR(id) LOOP(id, f32, float)
#define F32_LOOP_ARRAY(id)                                                                   \
  static void id##_f32_loop(int64_t n, const void *x, const void *unused, void *o)           \
  {                                                                                          \
    ts__v##id##_f32(x, o, n);                                                                \
  }
#define LOOPS_FLOAT(id, f32) F32_LOOP_##f32(id) LOOP(id, f64, double)
#define LOOPS_NUMERIC(id, f32) \
  LOOPS_FLOAT(id, f32) LOOP(id, i32, int32_t) LOOP(id, i64, int64_t) LOOP(id, u8, uint8_t)
#define LOOPS_BOOL(id, f32) LOOP(id, b, bool)

#define TABLE_FLOAT(id) [TS_F32] = { id##_f32_loop }, [TS_F64] = { id##_f64_loop }
#define TABLE_NUMERIC(id) \
  TABLE_FLOAT(id), [TS_I32] = { id##_i32_loop }, [TS_I64] = { id##_i64_loop }, [TS_U8] = { id##_u8_loop }
#define TABLE_BOOL(id) [TS_BOOL] = { id##_b_loop }

static bool unary_infer(ts_infer_ctx *c)
{
  if (!ts__ew_check_dtypes(c, c->def->dtypes))
    return false;
  c->out[0] = c->in[0];
  return true;
}

typedef struct unary_job {
  ts_ew_loop loop;
  const char *x;
  char *out;
  size_t size; /* of an element, in and out */
} unary_job;

static void unary_range(void *ctx, int64_t begin, int64_t end)
{
  const unary_job *j = ctx;
  j->loop(end - begin, j->x + begin * j->size, NULL, j->out + begin * j->size);
}

static bool unary_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  const ts_ew_formula *f = k->def->formula;
  unary_job j = { f->loop[x->dtype][TS_EW_VV], x->data, k->out[0]->data,
                  ts_dtype_size(x->dtype) };
  ts__parallel_range(x->size, f->grain, unary_range, &j);
  return true;
}

#define UNARY_DEF(ID, id, NAME, DTYPES, GRAIN, FLAGS, F32)                               \
  LOOPS_##DTYPES(id, F32)                                                                \
  static const ts_ew_formula id##_formula = { GRAIN, { TABLE_##DTYPES(id) } };           \
  const ts_op_def ts__op_##id = { .op = TS_OP_##ID, .name = NAME, .api_name = #id,       \
                                  .n_inputs = 1, .n_outputs = 1,                         \
                                  .flags = TS_OPF_ELEMENTWISE | (FLAGS),                 \
                                  .infer = unary_infer, .kernel[TS_DEVICE_CPU] = unary_cpu, \
                                  .dtypes = TS_DTYPES_##DTYPES, .formula = &id##_formula }; \
  ts_tensor *ts_##id##_at(ts_loc loc, ts_tensor *x)                                      \
  {                                                                                      \
    return ts__dispatch1(loc, TS_OP_##ID, &x, 1, NULL);                                  \
  }
UNARY_ROWS(UNARY_DEF)
