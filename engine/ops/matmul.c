/* ops/matmul.c — MatMul: batched matrix products with broadcast batch dims.
 * f32/f64 run on the input buffers through kernels/gemm.c (our tile kernels
 * or OpenBLAS, chosen per shape; transposes are flags, never copies);
 * integers use a wrapping i-k-j loop of our own. */
#include "engine-private.h"
#include "kernels/kernels.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>

enum { ATTR_TRANSPOSE_A, ATTR_TRANSPOSE_B };

static const ts_attr_def matmul_attrs[] = {
  [ATTR_TRANSPOSE_A] = { "transpose_a", TS_ATTR_BOOL },
  [ATTR_TRANSPOSE_B] = { "transpose_b", TS_ATTR_BOOL },
};

/* One product c[m,n] = op(a) x op(b) with op(a) [m,k] and op(b) [k,n];
 * ta/tb say a is stored [k,m] and b [n,k]. */
typedef struct mm_dims {
  int64_t m, n, k;
  bool ta, tb;
} mm_dims;

/* false: out of memory (the 16-bit floats' scratch) */
typedef bool (*gemm_fn)(const mm_dims *d, const void *a, const void *b, void *c);

static bool gemm_f32(const mm_dims *d, const void *a, const void *b, void *c)
{
  ts__gemm_f32(&(ts_gemm){ d->m, d->n, d->k, d->ta, d->tb, a, b, NULL, c, TS_ACT_NONE });
  return true;
}

static bool gemm_f64(const mm_dims *d, const void *a, const void *b, void *c)
{
  ts__gemm_f64(&(ts_gemm){ d->m, d->n, d->k, d->ta, d->tb, a, b, NULL, c, TS_ACT_NONE });
  return true;
}

/* 16-bit floats: widened to float32, multiplied there (float accumulation),
 * rounded back once (ops/widen.c). */
static bool gemm_half(ts_dtype dt, const mm_dims *d, const void *a, const void *b, void *c)
{
  ts_widened w;
  if (!ts__widen_f32(dt, 2, (const void *[]){ a, b }, (int64_t[]){ d->m * d->k, d->k * d->n }, d->m * d->n, &w))
    return false;
  gemm_f32(d, w.in[0], w.in[1], w.out);
  ts__narrow_f32(dt, c, w.out, d->m * d->n);
  g_free(w.buf);
  return true;
}

static bool gemm_f16(const mm_dims *d, const void *a, const void *b, void *c)
{
  return gemm_half(TS_F16, d, a, b, c);
}

static bool gemm_bf16(const mm_dims *d, const void *a, const void *b, void *c)
{
  return gemm_half(TS_BF16, d, a, b, c);
}

/* Integer products wrap: the arithmetic runs in the unsigned type U. */
#define GEMM_INT(name, T, U)                                                      \
  static bool name(const mm_dims *d, const void *a_, const void *b_, void *c_)   \
  {                                                                               \
    const T *a = a_, *b = b_;                                                     \
    T *c = c_;                                                                    \
    int64_t a_row = d->ta ? 1 : d->k, a_col = d->ta ? d->m : 1;                   \
    int64_t b_row = d->tb ? 1 : d->n, b_col = d->tb ? d->k : 1;                   \
    for (int64_t i = 0; i < d->m; i++) {                                          \
      T *restrict cr = c + i * d->n;                                              \
      memset(cr, 0, sizeof(T) * (size_t)d->n);                                    \
      for (int64_t p = 0; p < d->k; p++) {                                        \
        U av = (U)a[i * a_row + p * a_col];                                       \
        const T *restrict br = b + p * b_row;                                     \
        for (int64_t j = 0; j < d->n; j++)                                        \
          cr[j] = (T)((U)cr[j] + av * (U)br[j * b_col]);                          \
      }                                                                           \
    }                                                                             \
    return true;                                                                  \
  }

GEMM_INT(gemm_i32, int32_t, uint32_t)
GEMM_INT(gemm_i64, int64_t, uint64_t)
GEMM_INT(gemm_u8, uint8_t, uint32_t)
GEMM_INT(gemm_i8, int8_t, uint32_t)
GEMM_INT(gemm_i16, int16_t, uint32_t)
GEMM_INT(gemm_u16, uint16_t, uint32_t)
GEMM_INT(gemm_u32, uint32_t, uint32_t)
GEMM_INT(gemm_u64, uint64_t, uint64_t)

static const gemm_fn gemm_table[TS_DTYPE_COUNT] = {
  [TS_F32] = gemm_f32, [TS_F64] = gemm_f64, [TS_I32] = gemm_i32,
  [TS_I64] = gemm_i64, [TS_U8] = gemm_u8,   [TS_I8] = gemm_i8,
  [TS_I16] = gemm_i16, [TS_U16] = gemm_u16, [TS_U32] = gemm_u32,
  [TS_U64] = gemm_u64, [TS_F16] = gemm_f16, [TS_BF16] = gemm_bf16,
};

static ts_shape batch_shape(ts_shape s)
{
  s.rank -= 2;
  return s;
}

/* "what: f32[2,3] x f32[3,4]tail"; the shapes are formatted only on failure. */
static bool operands_fail(ts_infer_ctx *c, ts_error_code code, const char *what, const char *tail)
{
  char sa[TS_INFO_STR], sb[TS_INFO_STR];
  ts__info_str(sa, c->in[0].dtype, c->in[0].shape);
  ts__info_str(sb, c->in[1].dtype, c->in[1].shape);
  return ts__infer_fail(c, code, "%s: %s x %s%s", what, sa, sb, tail);
}

static bool matmul_infer(ts_infer_ctx *c)
{
  const ts_info *a = &c->in[0], *b = &c->in[1];
  bool ta = c->attrs[ATTR_TRANSPOSE_A].b, tb = c->attrs[ATTR_TRANSPOSE_B].b;

  if (!gemm_table[a->dtype]) {
    char what[TS_TAKES_STR];
    unsigned mask = 0;
    for (int d = 0; d < TS_DTYPE_COUNT; d++)
      mask |= gemm_table[d] ? 1u << d : 0;
    return operands_fail(c, TS_ERR_DTYPE, ts__takes_str(what, mask, a->dtype), "");
  }
  if (a->shape.rank < 2 || b->shape.rank < 2)
    return operands_fail(c, TS_ERR_SHAPE, "both operands need rank >= 2 ([..., M, K] x [..., K, N])",
                         " (reshape vectors to [1, K] or [K, 1])");
  int ra = a->shape.rank, rb = b->shape.rank;
  int64_t m = a->shape.dim[ra - (ta ? 1 : 2)], ka = a->shape.dim[ra - (ta ? 2 : 1)];
  int64_t kb = b->shape.dim[rb - (tb ? 1 : 2)], n = b->shape.dim[rb - (tb ? 2 : 1)];
  if (ka >= 0 && kb >= 0 && ka != kb) {
    char tail[96];
    snprintf(tail, sizeof tail, " (%" PRId64 " vs %" PRId64 "%s%s)", ka, kb, ta ? ", transpose_a" : "",
             tb ? ", transpose_b" : "");
    return operands_fail(c, TS_ERR_SHAPE, "inner dimensions differ", tail);
  }
  ts_shape out;
  if (!ts__broadcast_shapes(batch_shape(a->shape), batch_shape(b->shape), &out))
    return operands_fail(c, TS_ERR_SHAPE, "batch dimensions do not broadcast", "");
  out.dim[out.rank++] = m;
  out.dim[out.rank++] = n;
  c->out[0] = (ts_info){ a->dtype, out };
  return true;
}

/* Per-batch-dim element strides of x's matrices (of `matrix` > 0 elements)
 * over the output batch shape `ob`, 0 where x broadcasts; returns how many
 * matrices x holds. */
static int64_t batch_strides(ts_shape x, ts_shape ob, int64_t matrix, int64_t *stride)
{
  int xr = x.rank - 2, off = ob.rank - xr;
  int64_t step = matrix;
  for (int d = ob.rank - 1; d >= 0; d--) {
    int64_t dim = d >= off ? x.dim[d - off] : 1;
    stride[d] = dim == 1 ? 0 : step;
    step *= dim;
  }
  return step / matrix;
}

static bool fits_blas(int64_t v)
{
  return v <= INT_MAX;
}

static bool matmul_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *a = k->in[0], *b = k->in[1];
  ts_tensor *c = k->out[0];
  if (c->size == 0)
    return true;
  ts_dtype dt = a->dtype;
  ts_shape ob = batch_shape(c->shape);
  mm_dims d = {
    .m = c->shape.dim[c->shape.rank - 2],
    .n = c->shape.dim[c->shape.rank - 1],
    .k = a->shape.dim[a->shape.rank - (k->attrs[ATTR_TRANSPOSE_A].b ? 2 : 1)],
    .ta = k->attrs[ATTR_TRANSPOSE_A].b,
    .tb = k->attrs[ATTR_TRANSPOSE_B].b,
  };
  size_t esize = ts_dtype_size(dt);
  if (d.k == 0) {
    memset(c->data, 0, (size_t)c->size * esize);
    return true;
  }
  int64_t sa[TS_MAX_RANK], sb[TS_MAX_RANK];
  int64_t na = batch_strides(a->shape, ob, d.m * d.k, sa);
  int64_t nb = batch_strides(b->shape, ob, d.k * d.n, sb);
  int64_t nbatch = c->size / (d.m * d.n);

  /* a's batch stacked on rows against one b matrix is a single product. */
  if (!d.ta && nb == 1 && na == nbatch && nbatch > 1 && fits_blas(nbatch * d.m)) {
    d.m *= nbatch;
    nbatch = 1;
  }
  if (ts_dtype_is_float(dt) && !(fits_blas(d.m) && fits_blas(d.n) && fits_blas(d.k)))
    return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT,
                           "matrix dimensions exceed the BLAS limit of %d: [%" PRId64 ", %" PRId64
                           "] x [%" PRId64 ", %" PRId64 "]", INT_MAX, d.m, d.k, d.k, d.n);

  gemm_fn gemm = gemm_table[dt];
  const char *pa = a->data, *pb = b->data;
  char *pc = c->data;
  int64_t idx[TS_MAX_RANK] = { 0 }, oa = 0, obb = 0;
  for (int64_t i = 0; i < nbatch; i++) {
    if (!gemm(&d, pa + (size_t)oa * esize, pb + (size_t)obb * esize,
              pc + (size_t)(i * d.m * d.n) * esize))
      return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "no memory for the float32 copies of %s operands",
                             ts_dtype_name(dt));
    for (int dim = ob.rank - 1; dim >= 0; dim--) {
      oa += sa[dim];
      obb += sb[dim];
      if (++idx[dim] < ob.dim[dim])
        break;
      oa -= sa[dim] * ob.dim[dim];
      obb -= sb[dim] * ob.dim[dim];
      idx[dim] = 0;
    }
  }
  return true;
}

/* The gradient of c = op(a) op(b), per transpose case (TensorFlow's
 * _MatMulGrad), summed back over broadcast batch dims. */
static bool matmul_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                        ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *a = c->in[0], *b = c->in[1], *d = g[0];
  bool ta = c->attrs[ATTR_TRANSPOSE_A].b, tb = c->attrs[ATTR_TRANSPOSE_B].b;
  ts_tensor *ga, *gb;
  if (!ta && !tb) {
    ga = ts_matmul_at(l, d, b, false, true);
    gb = ts_matmul_at(l, a, d, true, false);
  } else if (!ta && tb) {
    ga = ts_matmul_at(l, d, b, false, false);
    gb = ts_matmul_at(l, d, a, true, false);
  } else if (ta && !tb) {
    ga = ts_matmul_at(l, b, d, false, true);
    gb = ts_matmul_at(l, a, d, false, false);
  } else {
    ga = ts_matmul_at(l, b, d, true, true);
    gb = ts_matmul_at(l, d, a, true, true);
  }
  gi[0] = ts__grad_unbroadcast(l, ga, a, 2);
  gi[1] = ts__grad_unbroadcast(l, gb, b, 2);
  return gi[0] && gi[1];
}

const ts_op_def ts__op_matmul = {
  .op = TS_OP_MATMUL,
  .name = "MatMul",
  .api_name = "matmul",
  .n_inputs = 2,
  .n_outputs = 1,
  .n_promote = -1,
  .flags = TS_OPF_PROMOTE,
  .n_attrs = (int)(sizeof matmul_attrs / sizeof matmul_attrs[0]),
  .attrs = matmul_attrs,
  .infer = matmul_infer,
  .kernel[TS_DEVICE_CPU] = matmul_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_matmul),
  .grad = matmul_grad,
};

ts_tensor *ts_matmul_at(ts_loc loc, ts_tensor *a, ts_tensor *b, bool transpose_a, bool transpose_b)
{
  ts_tensor *in[] = { a, b };
  ts_attr attrs[] = { TS_ATTR_B(transpose_a), TS_ATTR_B(transpose_b) };
  return ts__dispatch1(loc, TS_OP_MATMUL, in, 2, attrs);
}
