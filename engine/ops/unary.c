/* ops/unary.c — unary elementwise ops, one row each in UNARY_ROWS; the
 * loops, the formula table, the definition and the ts_<id>_at wrapper of
 * each op are made from its row and its formula (docs/engine.md, "Adding
 * an elementwise op"). */
#include "elementwise.h"

#include "kernels/kernels.h"

#include "unary_rows.h"

/* ---- made from the rows -------------------------------------------------------- */

/* The loop of one dtype: sfx the loop's, fsfx the formula's (f32 for the
 * 16-bit floats), T the element, O the result, V an element to the
 * formula's type, R its result to O. */
#define LOOP_AS(id, sfx, fsfx, T, O, V, R)                                       \
  static void id##_##sfx##_loop(int64_t n, const void *px, const void *unused,   \
                                void *po)                                        \
  {                                                                              \
    const T *x = px;                                                             \
    O *o = po;                                                                   \
    TS_EW_FOR(n, i, o[i] = R(id##_##fsfx(V(x[i]))));                             \
  }
#define AS_IS(x) (x)
#define LOOP(id, sfx, T) LOOP_AS(id, sfx, sfx, T, T, AS_IS, AS_IS)
#define F32_LOOP_SCALAR(id) LOOP(id, f32, float)
#define F32_LOOP_ARRAY(id)                                                                   \
  static void id##_f32_loop(int64_t n, const void *x, const void *unused, void *o)           \
  {                                                                                          \
    ts__v##id##_f32(x, o, n);                                                                \
  }
/* 16-bit floats: the f32 formula, rounded back */
#define LOOPS_FLOAT(id, F32)                                                     \
  F32_LOOP_##F32(id) LOOP(id, f64, double)                                       \
  LOOP_AS(id, f16, f32, ts_f16, ts_f16, ts__f16_to_f32, ts__f64_to_f16)          \
  LOOP_AS(id, bf16, f32, ts_bf16, ts_bf16, ts__bf16_to_f32, ts__f64_to_bf16)
#define LOOPS_NUMERIC(id, F32)                                                             \
  LOOPS_FLOAT(id, F32) LOOP(id, i32, int32_t) LOOP(id, i64, int64_t) LOOP(id, u8, uint8_t) \
  LOOP(id, i8, int8_t) LOOP(id, i16, int16_t) LOOP(id, u16, uint16_t)                      \
  LOOP(id, u32, uint32_t) LOOP(id, u64, uint64_t)
#define LOOPS_BOOL(id, F32) LOOP(id, b, bool)
/* tests of a float: the 16-bit ones widened exactly, then tested as f32 */
#define LOOPS_PREDICATE(id, F32)                                                 \
  LOOP_AS(id, f32, f32, float, bool, AS_IS, AS_IS)                               \
  LOOP_AS(id, f64, f64, double, bool, AS_IS, AS_IS)                              \
  LOOP_AS(id, f16, f32, ts_f16, bool, ts__f16_to_f32, AS_IS)                     \
  LOOP_AS(id, bf16, f32, ts_bf16, bool, ts__bf16_to_f32, AS_IS)

#define TABLE_FLOAT(id)                                                   \
  [TS_F32] = { id##_f32_loop }, [TS_F64] = { id##_f64_loop },             \
  [TS_F16] = { id##_f16_loop }, [TS_BF16] = { id##_bf16_loop }
#define TABLE_NUMERIC(id)                                                                          \
  TABLE_FLOAT(id), [TS_I32] = { id##_i32_loop }, [TS_I64] = { id##_i64_loop },                     \
  [TS_U8] = { id##_u8_loop }, [TS_I8] = { id##_i8_loop }, [TS_I16] = { id##_i16_loop },            \
  [TS_U16] = { id##_u16_loop }, [TS_U32] = { id##_u32_loop }, [TS_U64] = { id##_u64_loop }
#define TABLE_BOOL(id) [TS_BOOL] = { id##_b_loop }
#define TABLE_PREDICATE TABLE_FLOAT

/* The output: the input's dtype and shape, or bool for a test (PREDICATE). */
static bool unary_infer(ts_infer_ctx *c)
{
  if (!ts__ew_check_dtypes(c, c->def->dtypes))
    return false;
  c->out[0] = c->in[0];
  return true;
}

static bool predicate_infer(ts_infer_ctx *c)
{
  if (!unary_infer(c))
    return false;
  c->out[0].dtype = TS_BOOL;
  return true;
}

#define INFER_FLOAT unary_infer
#define INFER_NUMERIC unary_infer
#define INFER_BOOL unary_infer
#define INFER_PREDICATE predicate_infer

typedef struct unary_job {
  ts_ew_loop loop;
  const char *x;
  char *out;
  size_t size_in, size_out; /* of an element */
} unary_job;

static void unary_range(void *ctx, int64_t begin, int64_t end)
{
  const unary_job *j = ctx;
  j->loop(end - begin, j->x + begin * j->size_in, NULL, j->out + begin * j->size_out);
}

static bool unary_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  const ts_ew_formula *f = k->def->formula;
  unary_job j = { f->loop[x->dtype][TS_EW_VV], x->data, k->out[0]->data,
                  ts_dtype_size(x->dtype), ts_dtype_size(k->out[0]->dtype) };
  ts__parallel_range(x->size, f->grain, unary_range, &j);
  return true;
}


/* ---- gradients: grad_<id> (ts_grad_fn) ------------------------------------------------ */

#define ZERO(x) ts__grad_scalar((x)->dtype, 0)
#define ONE(x) ts__grad_scalar((x)->dtype, 1)

static bool grad_neg(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = ts_neg_at(c->loc, g[0])) != NULL;
}

static bool grad_abs(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_tensor *x = c->in[0];
  ts_tensor *sign = ts_sub_at(c->loc, ts__grad_mask(c->loc, ts_greater_at(c->loc, x, ZERO(x)), x->dtype),
                              ts__grad_mask(c->loc, ts_less_at(c->loc, x, ZERO(x)), x->dtype));
  return (gi[0] = ts_mul_at(c->loc, g[0], sign)) != NULL;
}

static bool grad_exp(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = ts_mul_at(c->loc, g[0], out[0])) != NULL;
}

static bool grad_log(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = ts_div_at(c->loc, g[0], c->in[0])) != NULL;
}

static bool grad_sqrt(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_tensor *half = ts__grad_scalar(out[0]->dtype, 0.5);
  return (gi[0] = ts_div_at(c->loc, ts_mul_at(c->loc, g[0], half), out[0])) != NULL;
}

static bool grad_tanh(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_tensor *y = out[0];
  ts_tensor *d = ts_sub_at(c->loc, ONE(y), ts_mul_at(c->loc, y, y));
  return (gi[0] = ts_mul_at(c->loc, g[0], d)) != NULL;
}

static bool grad_sigmoid(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                         ts_tensor **gi)
{
  ts_tensor *y = out[0];
  ts_tensor *d = ts_mul_at(c->loc, y, ts_sub_at(c->loc, ONE(y), y));
  return (gi[0] = ts_mul_at(c->loc, g[0], d)) != NULL;
}

static bool grad_relu(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  /* from the output, as TensorFlow's ReluGrad (y > 0 exactly where x > 0):
   * the input then has the Relu as its one user, and the fusion pass can
   * make it a MatMul's epilogue in a training step too */
  ts_tensor *y = out[0];
  ts_tensor *mask = ts__grad_mask(c->loc, ts_greater_at(c->loc, y, ZERO(y)), y->dtype);
  return (gi[0] = ts_mul_at(c->loc, g[0], mask)) != NULL;
}

static bool grad_softplus(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                          ts_tensor **gi)
{
  return (gi[0] = ts_mul_at(c->loc, g[0], ts_sigmoid_at(c->loc, c->in[0]))) != NULL;
}

static bool grad_sin(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = ts_mul_at(c->loc, g[0], ts_cos_at(c->loc, c->in[0]))) != NULL;
}

static bool grad_cos(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = ts_neg_at(c->loc, ts_mul_at(c->loc, g[0], ts_sin_at(c->loc, c->in[0])))) != NULL;
}

/* tan' = 1 + tan^2 */
static bool grad_tan(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_tensor *y = out[0];
  ts_tensor *d = ts_add_at(c->loc, ONE(y), ts_mul_at(c->loc, y, y));
  return (gi[0] = ts_mul_at(c->loc, g[0], d)) != NULL;
}

/* a + b x^2, the inverse functions' derivatives are made of */
static ts_tensor *quadratic(const ts_op_call *c, double a, double b)
{
  ts_tensor *x = c->in[0];
  return ts_add_at(c->loc, ts__grad_scalar(x->dtype, a),
                   ts_mul_at(c->loc, ts__grad_scalar(x->dtype, b), ts_mul_at(c->loc, x, x)));
}

/* asin, acos, asinh, acosh: g / sqrt(a + b x^2) */
static ts_tensor *over_sqrt_quadratic(const ts_op_call *c, ts_tensor *g, double a, double b)
{
  return ts_div_at(c->loc, g, ts_sqrt_at(c->loc, quadratic(c, a, b)));
}

/* atan, atanh: g / (a + b x^2) */
static ts_tensor *over_quadratic(const ts_op_call *c, ts_tensor *g, double a, double b)
{
  return ts_div_at(c->loc, g, quadratic(c, a, b));
}

static bool grad_asin(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = over_sqrt_quadratic(c, g[0], 1, -1)) != NULL;
}

static bool grad_acos(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = ts_neg_at(c->loc, over_sqrt_quadratic(c, g[0], 1, -1))) != NULL;
}

static bool grad_atan(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = over_quadratic(c, g[0], 1, 1)) != NULL;
}

static bool grad_sinh(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = ts_mul_at(c->loc, g[0], ts_cosh_at(c->loc, c->in[0]))) != NULL;
}

static bool grad_cosh(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = ts_mul_at(c->loc, g[0], ts_sinh_at(c->loc, c->in[0]))) != NULL;
}

static bool grad_asinh(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = over_sqrt_quadratic(c, g[0], 1, 1)) != NULL;
}

static bool grad_acosh(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = over_sqrt_quadratic(c, g[0], -1, 1)) != NULL;
}

static bool grad_atanh(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = over_quadratic(c, g[0], 1, -1)) != NULL;
}

/* erf' = 2 / sqrt(pi) exp(-x^2) */
static bool grad_erf(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_tensor *x = c->in[0];
  ts_tensor *d = ts_mul_at(c->loc, ts__grad_scalar(x->dtype, 1.1283791670955126),
                           ts_exp_at(c->loc, ts_neg_at(c->loc, ts_mul_at(c->loc, x, x))));
  return (gi[0] = ts_mul_at(c->loc, g[0], d)) != NULL;
}

/* Sign and Round: flat wherever they are differentiable, so zeros (TensorFlow's SignGrad) */
static bool grad_zero(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = ts_zeros_like_at(c->loc, c->in[0])) != NULL;
}


/* 2 x, as TensorFlow's SquareGrad */
static bool grad_square(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_tensor *x = c->in[0];
  return (gi[0] = ts_mul_at(c->loc, g[0], ts_mul_at(c->loc, x, ts__grad_scalar(x->dtype, 2)))) != NULL;
}

/* from the output, as TensorFlow's RsqrtGrad: -0.5 y^3 */
static bool grad_rsqrt(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_tensor *y = out[0];
  ts_tensor *d = ts_mul_at(c->loc, ts__grad_scalar(y->dtype, -0.5),
                           ts_mul_at(c->loc, y, ts_mul_at(c->loc, y, y)));
  return (gi[0] = ts_mul_at(c->loc, g[0], d)) != NULL;
}

/* from the output, as TensorFlow's ReciprocalGrad: -y^2 */
static bool grad_reciprocal(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                            ts_tensor **gi)
{
  ts_tensor *y = out[0];
  return (gi[0] = ts_neg_at(c->loc, ts_mul_at(c->loc, g[0], ts_mul_at(c->loc, y, y)))) != NULL;
}

static bool grad_log1p(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_tensor *x = c->in[0];
  return (gi[0] = ts_div_at(c->loc, g[0], ts_add_at(c->loc, ONE(x), x))) != NULL;
}

static bool grad_expm1(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return (gi[0] = ts_mul_at(c->loc, g[0], ts_exp_at(c->loc, c->in[0]))) != NULL;
}

/* Elu and Selu from the output, as TensorFlow's EluGrad and SeluGrad:
 * where y < 0, g (y + a), else g s (Elu: a = s = 1) */
static bool elu_like_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *g, double a, double s,
                          ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *y = out[0];
  ts_tensor *below = ts_mul_at(l, g, ts_add_at(l, y, ts__grad_scalar(y->dtype, a)));
  ts_tensor *above = s == 1 ? g : ts_mul_at(l, g, ts__grad_scalar(y->dtype, s));
  return (gi[0] = ts_where_at(l, ts_less_at(l, y, ZERO(y)), below, above)) != NULL;
}

static bool grad_elu(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return elu_like_grad(c, out, g[0], 1, 1, gi);
}

static bool grad_selu(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  return elu_like_grad(c, out, g[0], 1.7580993408473768599402175208123,
                       1.0507009873554804934193349852946, gi);
}

/* from the output, as TensorFlow's Relu6Grad: g where 0 < y < 6 */
static bool grad_relu6(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *y = out[0];
  ts_tensor *inside = ts_logical_and_at(l, ts_greater_at(l, y, ZERO(y)),
                                        ts_less_at(l, y, ts__grad_scalar(y->dtype, 6)));
  return (gi[0] = ts_mul_at(l, g[0], ts__grad_mask(l, inside, y->dtype))) != NULL;
}

/* as TensorFlow's SoftsignGrad: g / (1 + |x|)^2 */
static bool grad_softsign(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *x = c->in[0];
  ts_tensor *d = ts_add_at(l, ts_abs_at(l, x), ONE(x));
  return (gi[0] = ts_div_at(l, g[0], ts_mul_at(l, d, d))) != NULL;
}

/* gelu' = Phi(x) + x phi(x): 0.5 (1 + erf(x / sqrt(2))) + x exp(-x^2 / 2) / sqrt(2 pi) */
static bool grad_gelu(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *x = c->in[0];
  ts_dtype dt = x->dtype;
  ts_tensor *cdf = ts_mul_at(l, ts__grad_scalar(dt, 0.5),
                             ts_add_at(l, ONE(x), ts_erf_at(l, ts_div_at(l, x, ts__grad_scalar(dt, 1.4142135623730951)))));
  ts_tensor *pdf = ts_mul_at(l, ts__grad_scalar(dt, 0.3989422804014327),
                             ts_exp_at(l, ts_mul_at(l, ts__grad_scalar(dt, -0.5), ts_mul_at(l, x, x))));
  return (gi[0] = ts_mul_at(l, g[0], ts_add_at(l, cdf, ts_mul_at(l, x, pdf)))) != NULL;
}


#define UNARY_DEF(ID, id, NAME, DTYPES, GRAIN, FLAGS, F32, GRAD)                         \
  LOOPS_##DTYPES(id, F32)                                                                \
  static const ts_ew_formula id##_formula = { GRAIN, { TABLE_##DTYPES(id) } };           \
  const ts_op_def ts__op_##id = { .op = TS_OP_##ID, .name = NAME, .api_name = #id,       \
                                  .n_inputs = 1, .n_outputs = 1,                         \
                                  .flags = TS_OPF_ELEMENTWISE | (FLAGS),                 \
                                  .infer = INFER_##DTYPES, .kernel[TS_DEVICE_CPU] = unary_cpu, \
                                  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_unary), \
                                  .grad = GRAD,                                          \
                                  .dtypes = TS_DTYPES_##DTYPES, .formula = &id##_formula }; \
  ts_tensor *ts_##id##_at(ts_loc loc, ts_tensor *x)                                      \
  {                                                                                      \
    return ts__dispatch1(loc, TS_OP_##ID, &x, 1, NULL);                                  \
  }
UNARY_ROWS(UNARY_DEF)
