/* ops/shape.c — shape and layout: reshape and flatten (views, no copy),
 * transpose, concat and split, pack and unpack (tf.stack, tf.unstack),
 * slice and gather. */
#include "engine-private.h"

#include <stdio.h>

#define ATTRS(a) .n_attrs = (int)(sizeof(a) / sizeof((a)[0])), .attrs = (a)

/* "[4,-1]": a list of dims as given (with -1 spelled out), into buf[DIMS_STR]. */
#define DIMS_STR (TS_MAX_RANK * 22 + 3)
static char *dims_str(char *buf, const int64_t *v, int n)
{
  int at = snprintf(buf, DIMS_STR, "[");
  for (int i = 0; i < n && i < TS_MAX_RANK; i++)
    at += snprintf(buf + at, DIMS_STR - (size_t)at, i ? ",%lld" : "%lld", (long long)v[i]);
  snprintf(buf + at, DIMS_STR - (size_t)at, "]");
  return buf;
}

/* Normalises axis (negative counts from the end) against rank. */
static bool norm_axis(ts_infer_ctx *c, int64_t axis, ts_info x, int *out)
{
  if (ts__axis(axis, x.shape.rank, out))
    return true;
  char buf[TS_INFO_STR];
  return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "axis %lld is out of range for %s",
                        (long long)axis, ts__info_str(buf, x.dtype, x.shape));
}

/* Product of dims [from, to) of a concrete tensor's shape (its size bounds
 * it, so it cannot overflow). */
/* ---- reshape and flatten: views ------------------------------------------------ */

bool ts__reshape_reads_dims(ts_shape shape)
{
  bool minus_one = false, zero = false;
  for (int i = 0; i < shape.rank; i++) {
    minus_one |= shape.dim[i] == -1;
    zero |= shape.dim[i] == 0;
  }
  return minus_one && zero;
}

static bool reshape_infer(ts_infer_ctx *c)
{
  ts_info x = c->in[0];
  ts_shape want = c->attrs[0].shape;
  char xs[TS_INFO_STR], ws[DIMS_STR];
  if (want.rank < 0 || want.rank > TS_MAX_RANK)
    return ts__infer_fail(c, TS_ERR_SHAPE, "rank %d is not in [0, %d]", want.rank, TS_MAX_RANK);
  int infer_at = -1;
  bool zero_dim = false, huge = false; /* a 0 among the other dims; their product overflows */
  int64_t known = 1; /* product of the other dims but 0, saturated at INT64_MAX */
  for (int i = 0; i < want.rank; i++) {
    int64_t d = want.dim[i];
    if (d < -1 || (d == -1 && infer_at >= 0))
      return ts__infer_fail(c, TS_ERR_SHAPE,
                            "shape %s may hold one -1 and otherwise dims >= 0 (input %s)",
                            dims_str(ws, want.dim, want.rank),
                            ts__info_str(xs, x.dtype, x.shape));
    if (d == -1)
      infer_at = i;
    else if (d == 0)
      zero_dim = true;
    else if ((huge |= __builtin_mul_overflow(known, d, &known)))
      known = INT64_MAX;
  }
  int64_t have = ts_shape_size(x.shape);
  c->out[0] = (ts_info){ x.dtype, want };
  if (have == TS_SHAPE_SIZE_INVALID)
    return ts__infer_fail(c, TS_ERR_SHAPE, "the size of input %s overflows int64",
                          ts__info_str(xs, x.dtype, x.shape));
  if (have < 0) { /* unknown input dims: only the -1 stays unknown */
    return true;
  }
  /* The -1 takes what the input's size leaves.  Beside a 0 that is
   * ambiguous; TensorFlow's Reshape then divides the input's nonzero dims
   * by the other nonzero dims ([0,3] into [-1,0] is [3,0], where NumPy
   * refuses), and so does this, unless the other nonzero dims overflow. */
  bool fits = infer_at >= 0 ? (zero_dim ? have == 0 && !huge : have % known == 0)
                            : (zero_dim ? 0 : known) == have;
  if (!fits)
    return ts__infer_fail(c, TS_ERR_SHAPE, "cannot reshape %s (%lld elements) into %s",
                          ts__info_str(xs, x.dtype, x.shape), (long long)have,
                          dims_str(ws, want.dim, want.rank));
  if (infer_at < 0)
    return true;
  int64_t left = have; /* beside a 0: the product of the input's nonzero dims */
  if (zero_dim) {
    left = 1;
    for (int i = 0; i < x.shape.rank; i++)
      if (x.shape.dim[i] > 0 && __builtin_mul_overflow(left, x.shape.dim[i], &left))
        left = INT64_MAX;
  }
  c->out[0].shape.dim[infer_at] = left / known;
  return true;
}

static bool flatten_infer(ts_infer_ctx *c)
{
  ts_info x = c->in[0];
  if (x.shape.rank == 0) {
    char buf[TS_INFO_STR];
    return ts__infer_fail(c, TS_ERR_SHAPE, "input must have rank >= 1, got %s",
                          ts__info_str(buf, x.dtype, x.shape));
  }
  int64_t rest = 1, known[TS_MAX_RANK] = { 0 };
  bool unknown = false;
  for (int i = 1; i < x.shape.rank; i++) {
    unknown |= x.shape.dim[i] < 0;
    known[i - 1] = x.shape.dim[i] < 0 ? 1 : x.shape.dim[i];
  }
  if (!ts__shape_product(known, x.shape.rank - 1, &rest)) {
    char buf[TS_INFO_STR];
    return ts__infer_fail(c, TS_ERR_SHAPE,
                          "cannot flatten %s: the product of the dims after the first "
                          "overflows int64",
                          ts__info_str(buf, x.dtype, x.shape));
  }
  c->out[0] = (ts_info){ x.dtype, TS_SHAPE(x.shape.dim[0], unknown && rest != 0 ? -1 : rest) };
  return true;
}

/* Reshape and flatten: infer again on the concrete input, then view it. */
/* A header over x's buffer: no element is touched, so every kind of
 * device runs it. */
static bool view_kernel(ts_kernel_ctx *k)
{
  ts_tensor *x = k->in[0];
  ts_info in = { x->dtype, x->shape }, out;
  ts_infer_ctx c = {
    .def = k->def, .loc = k->loc, .n_in = 1, .in = &in, .attrs = k->attrs, .n_out = 1,
    .out = &out,
  };
  if (!k->def->infer(&c))
    return false;
  k->out[0] = ts__tensor_view(x, out.shape);
  return k->out[0] || ts__kernel_fail(k, TS_ERR_NO_MEMORY, "out of memory");
}

/* Reshape and Flatten: back to the input's shape. */
static bool reshape_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                         ts_tensor **gi)
{
  return (gi[0] = ts__grad_reshape(c->loc, g[0], c->in[0]->shape)) != NULL;
}

static const ts_attr_def reshape_attrs[] = { { "shape", TS_ATTR_SHAPE } };

const ts_op_def ts__op_reshape = {
  .op = TS_OP_RESHAPE, .name = "Reshape", .api_name = "reshape", .n_inputs = 1,
  .n_outputs = 1, .flags = TS_OPF_ALIAS | TS_OPF_VIEW, ATTRS(reshape_attrs), .infer = reshape_infer,
  .kernel[TS_DEVICE_CPU] = view_kernel, .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(view_kernel),
  .grad = reshape_grad,
};
const ts_op_def ts__op_flatten = {
  .op = TS_OP_FLATTEN, .name = "Flatten", .api_name = "flatten", .n_inputs = 1,
  .n_outputs = 1, .flags = TS_OPF_ALIAS | TS_OPF_VIEW, .infer = flatten_infer, .kernel[TS_DEVICE_CPU] = view_kernel,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(view_kernel),
  .grad = reshape_grad,
};

/* ---- transpose ------------------------------------------------------------------ */

static bool transpose_perm(ts_infer_ctx *c, ts_info x, ts_ints perm, int *out)
{
  int rank = x.shape.rank;
  unsigned seen = 0;
  if (perm.n < 0) {
    for (int i = 0; i < rank; i++)
      out[i] = rank - 1 - i;
    return true;
  }
  for (int i = 0; i < perm.n && perm.n == rank; i++) {
    int p;
    if (!ts__axis(perm.v[i], rank, &p) || (seen & (1u << p)))
      break;
    seen |= 1u << p;
    out[i] = p;
  }
  if (perm.n == rank && seen == (1u << rank) - 1)
    return true;
  char xs[TS_INFO_STR], ps[DIMS_STR];
  return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "perm %s is not a permutation of 0..%d for %s",
                        dims_str(ps, perm.v, perm.n), rank - 1, ts__info_str(xs, x.dtype, x.shape));
}

static bool transpose_infer(ts_infer_ctx *c)
{
  ts_info x = c->in[0];
  int perm[TS_MAX_RANK];
  if (!transpose_perm(c, x, c->attrs[0].ints, perm))
    return false;
  c->out[0] = (ts_info){ x.dtype, { .rank = x.shape.rank } };
  for (int i = 0; i < x.shape.rank; i++)
    c->out[0].shape.dim[i] = x.shape.dim[perm[i]];
  return true;
}

/* Copies lines [begin, end) of dst (its last dim) from src, in the order
 * of dst's dims, where moving one step along dst axis a moves stride[a]
 * elements in src.  Typed per element size. */
typedef void (*permute_fn)(const void *src, void *dst, int rank, const int64_t *dim,
                           const int64_t *stride, int64_t begin, int64_t end);
/* dst[c][r] = src[r][c] for columns [c0, c1) of an r x c matrix, in
 * cache-sized tiles. */
typedef void (*transpose2d_fn)(const void *src, void *dst, int64_t rows, int64_t cols,
                               int64_t c0, int64_t c1);

#define TILE 32
#define DEFINE_PERMUTE(T)                                                                     \
  static void permute_##T(const void *src_, void *dst_, int rank, const int64_t *dim,         \
                          const int64_t *stride, int64_t begin, int64_t end)                  \
  {                                                                                           \
    const T *src = src_;                                                                      \
    int64_t idx[TS_MAX_RANK] = { 0 }, off = 0, n = dim[rank - 1], step = stride[rank - 1];    \
    T *dst = (T *)dst_ + begin * n;                                                           \
    for (int64_t a = rank - 2, q = begin; a >= 0; a--) {                                      \
      idx[a] = q % dim[a];                                                                    \
      q /= dim[a];                                                                            \
      off += idx[a] * stride[a];                                                              \
    }                                                                                         \
    for (int64_t line = begin; line < end; line++) {                                          \
      for (int64_t i = 0; i < n; i++)                                                         \
        *dst++ = src[off + i * step];                                                         \
      for (int a = rank - 2; a >= 0; a--) {                                                   \
        off += stride[a];                                                                     \
        if (++idx[a] < dim[a])                                                                \
          break;                                                                              \
        off -= stride[a] * dim[a];                                                            \
        idx[a] = 0;                                                                           \
      }                                                                                       \
    }                                                                                         \
  }                                                                                           \
  static void transpose2d_##T(const void *src_, void *dst_, int64_t rows, int64_t cols,       \
                              int64_t c_begin, int64_t c_end)                                 \
  {                                                                                           \
    const T *src = src_;                                                                      \
    T *dst = dst_;                                                                            \
    for (int64_t r0 = 0; r0 < rows; r0 += TILE)                                               \
      for (int64_t c0 = c_begin; c0 < c_end; c0 += TILE)                                      \
        for (int64_t r = r0; r < r0 + TILE && r < rows; r++)                                  \
          for (int64_t c = c0; c < c0 + TILE && c < c_end; c++)                               \
            dst[c * rows + r] = src[r * cols + c];                                            \
  }
DEFINE_PERMUTE(uint8_t)
DEFINE_PERMUTE(uint16_t)
DEFINE_PERMUTE(uint32_t)
DEFINE_PERMUTE(uint64_t)

/* Indexed by element size. */
static const struct {
  permute_fn permute;
  transpose2d_fn transpose2d;
} PERMUTE[9] = {
  [1] = { permute_uint8_t, transpose2d_uint8_t },
  [2] = { permute_uint16_t, transpose2d_uint16_t },
  [4] = { permute_uint32_t, transpose2d_uint32_t },
  [8] = { permute_uint64_t, transpose2d_uint64_t },
};

/* The same permutation over fewer dims: dims of 1 dropped, and input dims
 * that stay next to each other in the output merged into one.  NCHW ->
 * NHWC is [N, C, H*W] -> [N, H*W, C] then, a batch of 2-D transposes.
 * dim: the merged input dims; perm as the op's.  Returns their count. */
static int merge_dims(ts_shape x, const int *perm, int64_t *dim, int *out_perm)
{
  int rank = x.rank, renum[TS_MAX_RANK], kept = 0, q[TS_MAX_RANK], n = 0;
  for (int a = 0; a < rank; a++)
    renum[a] = x.dim[a] == 1 ? -1 : kept++;
  for (int i = 0; i < rank; i++)
    if (renum[perm[i]] >= 0)
      q[n++] = renum[perm[i]];
  /* groups of consecutive output positions reading consecutive input dims */
  int group_of[TS_MAX_RANK], groups = 0, first[TS_MAX_RANK];
  for (int i = 0; i < n; i++) {
    if (i == 0 || q[i] != q[i - 1] + 1)
      first[groups++] = q[i];
    group_of[q[i]] = groups - 1;
  }
  int64_t kept_dim[TS_MAX_RANK];
  for (int a = 0; a < rank; a++)
    if (renum[a] >= 0)
      kept_dim[renum[a]] = x.dim[a];
  /* the groups in input order: their rank among the groups' first dims */
  int order[TS_MAX_RANK];
  for (int g = 0; g < groups; g++) {
    order[g] = 0;
    for (int h = 0; h < groups; h++)
      order[g] += first[h] < first[g];
  }
  for (int g = 0; g < groups; g++) {
    dim[order[g]] = 1;
    out_perm[g] = order[g];
  }
  for (int a = 0; a < kept; a++)
    dim[order[group_of[a]]] *= kept_dim[a];
  return groups;
}

/* A transpose splits across the pool from TRANSPOSE_GRAIN elements: by
 * bands of TILE source columns of each matrix of a batch of 2-D
 * transposes, else by lines of the output.  A strided copy costs a few
 * adds an element (a CNN's NCHW input of 24K elements: ~7 µs on one
 * thread), so it splits sooner than elementwise ops.  Each element is
 * copied, whichever thread does it: the same bytes at every count. */
#define TRANSPOSE_GRAIN ((int64_t)1 << 13)

typedef struct transpose_job {
  const char *src;
  char *dst;
  size_t es;
  int64_t rows, cols, bands; /* a batch of 2-D transposes: bands of TILE columns each */
  int m;                     /* else: the merged output dims and their source strides */
  int64_t dim[TS_MAX_RANK], stride[TS_MAX_RANK];
} transpose_job;

static void bands_range(void *ctx, int64_t begin, int64_t end)
{
  const transpose_job *j = ctx;
  for (int64_t i = begin; i < end; i++) {
    size_t at = (size_t)(i / j->bands * j->rows * j->cols) * j->es;
    int64_t c0 = i % j->bands * TILE;
    PERMUTE[j->es].transpose2d(j->src + at, j->dst + at, j->rows, j->cols, c0,
                               MIN(j->cols, c0 + TILE));
  }
}

static void lines_range(void *ctx, int64_t begin, int64_t end)
{
  const transpose_job *j = ctx;
  PERMUTE[j->es].permute(j->src, j->dst, j->m, j->dim, j->stride, begin, end);
}

static bool transpose_cpu(ts_kernel_ctx *k)
{
  ts_tensor *x = k->in[0], *y = k->out[0];
  size_t es = ts_dtype_size(x->dtype);
  int rank = x->shape.rank, perm[TS_MAX_RANK];
  int64_t dim[TS_MAX_RANK], in_stride[TS_MAX_RANK];
  if (y->size == 0)
    return true;
  for (int i = 0; i < rank; i++) {
    perm[i] = rank - 1 - i;
    if (k->attrs[0].ints.n >= 0)
      ts__axis(k->attrs[0].ints.v[i], rank, &perm[i]); /* inference checked it */
  }
  int mp[TS_MAX_RANK], m = merge_dims(x->shape, perm, dim, mp);
  if (m <= 1) {
    memcpy(y->data, x->data, (size_t)x->size * es);
    return true;
  }
  transpose_job j = { .src = x->data, .dst = y->data, .es = es, .m = m };
  if (m == 2 || (m == 3 && mp[0] == 0 && mp[1] == 2)) { /* a batch of 2-D transposes */
    j.rows = dim[m - 2];
    j.cols = dim[m - 1];
    j.bands = (j.cols + TILE - 1) / TILE;
    int64_t batch = m == 3 ? dim[0] : 1;
    ts__parallel_range(batch * j.bands, MAX(TRANSPOSE_GRAIN / (j.rows * TILE), 1), bands_range, &j);
    return true;
  }
  in_stride[m - 1] = 1;
  for (int i = m - 2; i >= 0; i--)
    in_stride[i] = in_stride[i + 1] * dim[i + 1];
  for (int i = 0; i < m; i++) {
    j.stride[i] = in_stride[mp[i]];
    j.dim[i] = dim[mp[i]];
  }
  ts__parallel_range(y->size / j.dim[m - 1], MAX(TRANSPOSE_GRAIN / j.dim[m - 1], 1), lines_range, &j);
  return true;
}

static bool transpose_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                           ts_tensor **gi)
{
  ts_ints perm = c->attrs[0].ints, inverse = perm;
  for (int i = 0; i < perm.n; i++)
    inverse.v[perm.v[i]] = i;
  return (gi[0] = ts_transpose_at(c->loc, g[0], inverse)) != NULL;
}

static const ts_attr_def transpose_attrs[] = { { "perm", TS_ATTR_INTS } };

const ts_op_def ts__op_transpose = {
  .op = TS_OP_TRANSPOSE, .name = "Transpose", .api_name = "transpose", .n_inputs = 1,
  .n_outputs = 1, ATTRS(transpose_attrs), .infer = transpose_infer, .kernel[TS_DEVICE_CPU] = transpose_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_transpose),
  .grad = transpose_grad,
};

/* ---- concat and split ------------------------------------------------------------- */

static bool concat_infer(ts_infer_ctx *c)
{
  ts_info x0 = c->in[0];
  char as[TS_INFO_STR], bs[TS_INFO_STR];
  int axis;
  if (x0.shape.rank == 0)
    return ts__infer_fail(c, TS_ERR_SHAPE, "cannot concatenate scalars (%s); use reshape first",
                          ts__info_str(as, x0.dtype, x0.shape));
  if (!norm_axis(c, c->attrs[0].i, x0, &axis))
    return false;
  ts_shape out = x0.shape;
  for (int i = 1; i < c->n_in; i++) {
    ts_shape s = c->in[i].shape;
    if (s.rank != out.rank)
      return ts__infer_fail(c, TS_ERR_SHAPE, "ranks differ: input 0 is %s, input %d is %s",
                            ts__info_str(as, x0.dtype, x0.shape), i,
                            ts__info_str(bs, c->in[i].dtype, s));
    for (int a = 0; a < s.rank; a++) {
      int64_t d = s.dim[a];
      if (a == axis && out.dim[a] >= 0 && d >= 0 &&
          __builtin_add_overflow(out.dim[a], d, &out.dim[a]))
        return ts__infer_fail(c, TS_ERR_SHAPE,
                              "the concatenated dimension %d overflows int64: input 0 is %s, "
                              "input %d is %s", axis, ts__info_str(as, x0.dtype, x0.shape), i,
                              ts__info_str(bs, c->in[i].dtype, s));
      else if (a == axis)
        out.dim[a] = out.dim[a] < 0 || d < 0 ? -1 : out.dim[a];
      else if (out.dim[a] < 0)
        out.dim[a] = d;
      else if (d >= 0 && d != out.dim[a])
        return ts__infer_fail(c, TS_ERR_SHAPE,
                              "dimension %d differs: input 0 is %s, input %d is %s (axis %d)", a,
                              ts__info_str(as, x0.dtype, x0.shape), i,
                              ts__info_str(bs, c->in[i].dtype, s), axis);
    }
  }
  c->out[0] = (ts_info){ x0.dtype, out };
  return true;
}

/* Bytes of one outer step of t along axis: dims [axis, rank) times the element size. */
static size_t chunk_bytes(const ts_tensor *t, int axis)
{
  return (size_t)ts__dims_prod(t->shape, axis, t->shape.rank) * ts_dtype_size(t->dtype);
}

static bool concat_cpu(ts_kernel_ctx *k)
{
  ts_tensor *y = k->out[0];
  int axis = 0;
  ts__axis(k->attrs[0].i, y->shape.rank, &axis); /* inference checked it */
  if (y->size == 0)
    return true;
  int64_t outer = ts__dims_prod(y->shape, 0, axis);
  char *dst = y->data;
  for (int64_t o = 0; o < outer; o++)
    for (int i = 0; i < k->n_in; i++) {
      size_t n = chunk_bytes(k->in[i], axis);
      if (n) {
        memcpy(dst, (const char *)k->in[i]->data + (size_t)o * n, n);
        dst += n;
      }
    }
  return true;
}

static bool split_infer(ts_infer_ctx *c)
{
  ts_info x = c->in[0];
  int64_t num = c->attrs[0].i;
  char buf[TS_INFO_STR];
  int axis;
  if (num < 1 || num > TS_MAX_OUTPUTS)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "num must be in [1, %d], got %lld",
                          TS_MAX_OUTPUTS, (long long)num);
  if (!norm_axis(c, c->attrs[1].i, x, &axis))
    return false;
  int64_t d = x.shape.dim[axis];
  if (d >= 0 && d % num != 0)
    return ts__infer_fail(c, TS_ERR_SHAPE,
                          "Number of ways to split should evenly divide the split dimension, "
                          "but got split_dim %d (size = %lld) and num_split %lld for %s",
                          axis, (long long)d, (long long)num, ts__info_str(buf, x.dtype, x.shape));
  c->n_out = (int)num;
  for (int i = 0; i < num; i++) {
    c->out[i] = x;
    c->out[i].shape.dim[axis] = d < 0 ? -1 : d / num;
  }
  return true;
}

static bool split_cpu(ts_kernel_ctx *k)
{
  ts_tensor *x = k->in[0];
  int axis = 0;
  ts__axis(k->attrs[1].i, x->shape.rank, &axis); /* inference checked it */
  if (x->size == 0)
    return true;
  size_t n = chunk_bytes(k->out[0], axis);
  int64_t outer = ts__dims_prod(x->shape, 0, axis);
  const char *src = x->data;
  for (int64_t o = 0; o < outer; o++)
    for (int i = 0; i < k->n_out; i++) {
      memcpy((char *)k->out[i]->data + (size_t)o * n, src, n);
      src += n;
    }
  return true;
}

/* Concat: each input's slice of the gradient (their dims along the axis known). */
static bool concat_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                        ts_tensor **gi)
{
  int rank = out[0]->shape.rank, axis;
  if (!ts__axis(c->attrs[0].i, rank, &axis))
    return false;
  ts_ints begin = { .n = rank }, size = { .n = rank };
  for (int d = 0; d < rank; d++)
    size.v[d] = -1;
  for (int i = 0; i < c->n_in; i++) {
    int64_t n = c->in[i]->shape.dim[axis];
    if (n < 0) {
      ts_error_set(TS_ERR_UNIMPLEMENTED, c->loc, "Concat",
                   "its gradient needs the inputs' dims along axis %d known (input %d's is not)",
                   axis, i);
      return false;
    }
    size.v[axis] = n;
    if (!(gi[i] = ts_slice_at(c->loc, g[0], begin, size)))
      return false;
    begin.v[axis] += n;
  }
  return true;
}

/* Split: the parts' gradients joined. */
static bool split_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                       ts_tensor **gi)
{
  return (gi[0] = ts_concat_at(c->loc, g, (int)c->attrs[0].i, (int)c->attrs[1].i)) != NULL;
}

static const ts_attr_def concat_attrs[] = { { "axis", TS_ATTR_INT } };
static const ts_attr_def split_attrs[] = { { "num", TS_ATTR_INT }, { "axis", TS_ATTR_INT } };

const ts_op_def ts__op_concat = {
  .op = TS_OP_CONCAT, .name = "Concat", .api_name = "concat", .n_inputs = -1, .min_inputs = 1, .n_outputs = 1,
  .n_promote = -1, .flags = TS_OPF_PROMOTE, ATTRS(concat_attrs), .infer = concat_infer,
  .kernel[TS_DEVICE_CPU] = concat_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_concat),
  .grad = concat_grad,
};
const ts_op_def ts__op_split = {
  .op = TS_OP_SPLIT, .name = "Split", .api_name = "split", .n_inputs = 1, .n_outputs = -1,
  ATTRS(split_attrs), .infer = split_infer, .kernel[TS_DEVICE_CPU] = split_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_concat),
  .grad = split_grad,
};

/* ---- pack and unpack: concat and split along a new axis ----------------------------
 * Their outputs are laid out as Concat's and Split's with the axis of 1
 * dropped from the parts, so the same kernels copy them (the axis read
 * against the whole: Pack's output, Unpack's input). */

static bool pack_infer(ts_infer_ctx *c)
{
  ts_info x0 = c->in[0];
  char as[TS_INFO_STR], bs[TS_INFO_STR];
  int rank = x0.shape.rank + 1, axis;
  if (rank > TS_MAX_RANK)
    return ts__infer_fail(c, TS_ERR_SHAPE, "stacking %s gives rank %d, over %d",
                          ts__info_str(as, x0.dtype, x0.shape), rank, TS_MAX_RANK);
  if (!ts__axis(c->attrs[0].i, rank, &axis))
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "axis %lld is out of range [%d, %d] for stacking %s",
                          (long long)c->attrs[0].i, -rank, rank - 1,
                          ts__info_str(as, x0.dtype, x0.shape));
  ts_shape part = x0.shape;
  for (int i = 1; i < c->n_in; i++) {
    ts_shape s = c->in[i].shape;
    bool same = s.rank == part.rank;
    for (int d = 0; same && d < s.rank; d++) {
      same = s.dim[d] < 0 || part.dim[d] < 0 || s.dim[d] == part.dim[d];
      if (part.dim[d] < 0)
        part.dim[d] = s.dim[d];
    }
    if (!same)
      return ts__infer_fail(c, TS_ERR_SHAPE,
                            "Shapes of all inputs must match: values[0].shape = %s != "
                            "values[%d].shape = %s",
                            ts__info_str(as, x0.dtype, x0.shape), i,
                            ts__info_str(bs, c->in[i].dtype, s));
  }
  ts_shape out = { .rank = rank };
  for (int d = 0, from = 0; d < rank; d++)
    out.dim[d] = d == axis ? c->n_in : part.dim[from++];
  c->out[0] = (ts_info){ x0.dtype, out };
  return true;
}

static bool unpack_infer(ts_infer_ctx *c)
{
  ts_info x = c->in[0];
  int64_t num = c->attrs[0].i;
  char buf[TS_INFO_STR];
  int axis;
  if (x.shape.rank == 0)
    return ts__infer_fail(c, TS_ERR_SHAPE, "cannot unstack a scalar (%s)",
                          ts__info_str(buf, x.dtype, x.shape));
  if (!norm_axis(c, c->attrs[1].i, x, &axis))
    return false;
  int64_t d = x.shape.dim[axis];
  if (num < 1 || num > TS_MAX_OUTPUTS || (d >= 0 && d != num))
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "num %lld must be the size of axis %d of %s, in [1, %d]",
                          (long long)num, axis, ts__info_str(buf, x.dtype, x.shape),
                          TS_MAX_OUTPUTS);
  c->n_out = (int)num;
  for (int i = 0; i < num; i++) {
    c->out[i] = (ts_info){ x.dtype, { .rank = x.shape.rank - 1 } };
    for (int a = 0, to = 0; a < x.shape.rank; a++)
      if (a != axis)
        c->out[i].shape.dim[to++] = x.shape.dim[a];
  }
  return true;
}

/* Pack: each input's slice of the gradient. */
static bool pack_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                      ts_tensor **gi)
{
  return ts_unpack_at(c->loc, g[0], c->n_in, (int)c->attrs[0].i, gi) == c->n_in;
}

/* Unpack: the parts' gradients stacked. */
static bool unpack_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                        ts_tensor **gi)
{
  return (gi[0] = ts_pack_at(c->loc, g, (int)c->attrs[0].i, (int)c->attrs[1].i)) != NULL;
}

const ts_op_def ts__op_pack = {
  .op = TS_OP_PACK, .name = "Pack", .api_name = "pack", .n_inputs = -1, .min_inputs = 1, .n_outputs = 1,
  .n_promote = -1, .flags = TS_OPF_PROMOTE, ATTRS(concat_attrs), .infer = pack_infer,
  .kernel[TS_DEVICE_CPU] = concat_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_concat),
  .grad = pack_grad,
};
const ts_op_def ts__op_unpack = {
  .op = TS_OP_UNPACK, .name = "Unpack", .api_name = "unpack", .n_inputs = 1, .n_outputs = -1,
  ATTRS(split_attrs), .infer = unpack_infer, .kernel[TS_DEVICE_CPU] = split_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_concat),
  .grad = unpack_grad,
};

/* ---- slice ------------------------------------------------------------------------ */

static bool slice_infer(ts_infer_ctx *c)
{
  ts_info x = c->in[0];
  ts_ints begin = c->attrs[0].ints, size = c->attrs[1].ints;
  char xs[TS_INFO_STR];
  int rank = x.shape.rank;
  if (begin.n != rank || size.n != rank)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "begin and size need %d entries each for %s, got %d and %d", rank,
                          ts__info_str(xs, x.dtype, x.shape), begin.n, size.n);
  c->out[0] = x;
  for (int i = 0; i < rank; i++) {
    int64_t d = x.shape.dim[i], b = begin.v[i], s = size.v[i];
    if (b < 0 || (d >= 0 && b > d))
      return ts__infer_fail(c, TS_ERR_OUT_OF_RANGE,
                            "Expected begin[%d] in [0, %lld], but got %lld for %s", i,
                            (long long)(d < 0 ? INT64_MAX : d), (long long)b,
                            ts__info_str(xs, x.dtype, x.shape));
    if (s < -1 || (d >= 0 && s > d - b))
      return ts__infer_fail(c, TS_ERR_OUT_OF_RANGE,
                            "Expected size[%d] in [0, %lld], but got %lld for %s", i,
                            (long long)(d < 0 ? INT64_MAX : d - b), (long long)s,
                            ts__info_str(xs, x.dtype, x.shape));
    c->out[0].shape.dim[i] = s >= 0 ? s : d < 0 ? -1 : d - b;
  }
  return true;
}

static bool slice_cpu(ts_kernel_ctx *k)
{
  ts_tensor *x = k->in[0], *y = k->out[0];
  const int64_t *begin = k->attrs[0].ints.v;
  size_t es = ts_dtype_size(x->dtype);
  int rank = x->shape.rank;
  int64_t stride[TS_MAX_RANK], idx[TS_MAX_RANK] = { 0 }, off = 0;
  if (y->size == 0)
    return true;
  if (rank > 0)
    stride[rank - 1] = 1;
  for (int i = rank - 2; i >= 0; i--)
    stride[i] = stride[i + 1] * x->shape.dim[i + 1];
  for (int i = 0; i < rank; i++)
    off += begin[i] * stride[i];
  /* Axes after `inner` are taken whole, so dims [inner, rank) are one contiguous run. */
  int inner = rank > 0 ? rank - 1 : 0;
  while (inner > 0 && y->shape.dim[inner] == x->shape.dim[inner])
    inner--;
  size_t run = (size_t)ts__dims_prod(y->shape, inner, rank) * es;
  const char *src = x->data;
  char *dst = y->data;
  for (;;) {
    memcpy(dst, src + (size_t)off * es, run);
    dst += run;
    int a = inner - 1;
    for (; a >= 0; a--) {
      off += stride[a];
      if (++idx[a] < y->shape.dim[a])
        break;
      off -= stride[a] * y->shape.dim[a];
      idx[a] = 0;
    }
    if (a < 0)
      return true;
  }
}

/* Slice: the gradient padded with zeros back to the input's shape, an
 * axis at a time; the zero blocks are slices of zeros_like(x), so that
 * unknown dims need no arithmetic. */
static bool slice_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                       ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *x = c->in[0], *r = g[0];
  ts_ints begin = c->attrs[0].ints, size = c->attrs[1].ints;
  int rank = x->shape.rank;
  ts_tensor *zeros = ts_zeros_like_at(l, x);
  for (int d = 0; r && d < rank; d++) {
    /* A zero block: axes before d padded (whole), d as asked, after d as sliced. */
    ts_ints zb = { .n = rank }, zs = { .n = rank };
    for (int a = 0; a < rank; a++) {
      zb.v[a] = a > d ? begin.v[a] : 0;
      zs.v[a] = a > d ? size.v[a] : -1;
    }
    ts_tensor *parts[3];
    int n = 0;
    if (begin.v[d] > 0) {
      zs.v[d] = begin.v[d];
      parts[n++] = ts_slice_at(l, zeros, zb, zs);
    }
    parts[n++] = r;
    int64_t dim = x->shape.dim[d];
    if (size.v[d] >= 0 && !(dim >= 0 && begin.v[d] + size.v[d] == dim)) {
      zb.v[d] = begin.v[d] + size.v[d];
      zs.v[d] = -1;
      parts[n++] = ts_slice_at(l, zeros, zb, zs);
    }
    if (n > 1)
      r = ts_concat_at(l, parts, n, d);
  }
  return (gi[0] = r) != NULL;
}

static const ts_attr_def slice_attrs[] = { { "begin", TS_ATTR_INTS }, { "size", TS_ATTR_INTS } };

const ts_op_def ts__op_slice = {
  .op = TS_OP_SLICE, .name = "Slice", .api_name = "slice", .n_inputs = 1, .n_outputs = 1,
  ATTRS(slice_attrs), .infer = slice_infer, .kernel[TS_DEVICE_CPU] = slice_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_slice),
  .grad = slice_grad,
};

/* ---- gather ------------------------------------------------------------------------ */

static bool gather_infer(ts_infer_ctx *c)
{
  ts_info p = c->in[0], ix = c->in[1];
  char ps[TS_INFO_STR], is[TS_INFO_STR];
  int axis;
  if (ix.dtype != TS_I32 && ix.dtype != TS_I64)
    return ts__infer_fail(c, TS_ERR_DTYPE, "indices must be int32 or int64, got %s",
                          ts__info_str(is, ix.dtype, ix.shape));
  if (p.shape.rank == 0)
    return ts__infer_fail(c, TS_ERR_SHAPE, "params must be at least 1-dimensional, got %s",
                          ts__info_str(ps, p.dtype, p.shape));
  if (!norm_axis(c, c->attrs[0].i, p, &axis))
    return false;
  int rank = p.shape.rank - 1 + ix.shape.rank;
  if (rank > TS_MAX_RANK)
    return ts__infer_fail(c, TS_ERR_SHAPE, "result rank %d exceeds %d: params %s, indices %s",
                          rank, TS_MAX_RANK, ts__info_str(ps, p.dtype, p.shape),
                          ts__info_str(is, ix.dtype, ix.shape));
  ts_shape out = { .rank = rank };
  int at = 0;
  for (int i = 0; i < axis; i++)
    out.dim[at++] = p.shape.dim[i];
  for (int i = 0; i < ix.shape.rank; i++)
    out.dim[at++] = ix.shape.dim[i];
  for (int i = axis + 1; i < p.shape.rank; i++)
    out.dim[at++] = p.shape.dim[i];
  c->out[0] = (ts_info){ p.dtype, out };
  return true;
}

static bool gather_cpu(ts_kernel_ctx *k)
{
  ts_tensor *p = k->in[0], *ix = k->in[1], *y = k->out[0];
  int axis = 0;
  ts__axis(k->attrs[0].i, p->shape.rank, &axis); /* inference checked it */
  int64_t n = p->shape.dim[axis], n_idx = ix->size;
  for (int64_t j = 0; j < n_idx; j++) {
    int64_t v = ts__load_i64(ix->dtype, ix->data, j);
    if (v < 0 || v >= n)
      return ts__kernel_fail(k, TS_ERR_OUT_OF_RANGE, "indices[%lld] = %lld is not in [0, %lld)",
                             (long long)j, (long long)v, (long long)n);
  }
  if (y->size == 0)
    return true;
  size_t row = (size_t)ts__dims_prod(p->shape, axis + 1, p->shape.rank) * ts_dtype_size(p->dtype);
  int64_t outer = ts__dims_prod(p->shape, 0, axis);
  const char *src = p->data;
  char *dst = y->data;
  for (int64_t o = 0; o < outer; o++, src += (size_t)n * row)
    for (int64_t j = 0; j < n_idx; j++, dst += row)
      memcpy(dst, src + (size_t)ts__load_i64(ix->dtype, ix->data, j) * row, row);
  return true;
}

/* Gather: the gradient of each gathered row added back to the row it came
 * from, as a product with the indices' one-hot matrix: params seen as
 * [A, N, B] (N along the axis, known), the gradient as [A, M, B] (M
 * indices), onehot [M, N]: dparams = onehot^T g.  No gradient to indices. */
static bool gather_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                        ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *params = c->in[0], *indices = c->in[1];
  ts_shape ps = params->shape;
  int axis;
  if (!ts__axis(c->attrs[0].i, ps.rank, &axis))
    return false;
  int64_t n = ps.dim[axis];
  if (n < 0) {
    ts_error_set(TS_ERR_UNIMPLEMENTED, l, "Gather",
                 "its gradient needs the params' dim along axis %d known", axis);
    return false;
  }
  int64_t a = 1, b = 1;
  for (int d = 0; d < ps.rank; d++) {
    int64_t *p = d < axis ? &a : d > axis ? &b : NULL;
    if (p)
      *p = *p < 0 || ps.dim[d] < 0 ? -1 : *p * ps.dim[d];
  }
  int64_t m = ts_shape_size(indices->shape) < 0 ? -1 : ts_shape_size(indices->shape);
  ts_tensor *flat = ts__grad_reshape(l, indices, TS_SHAPE(m, 1));
  ts_tensor *onehot = ts__grad_mask(l, ts_equal_at(l, flat, ts_range_at(l, indices->dtype, 0, (double)n, 1)),
                                    params->dtype);
  ts_tensor *g3 = ts__grad_reshape(l, g[0], TS_SHAPE(a, m, b));
  ts_tensor *d3 = ts_matmul_at(l, onehot, g3, true, false);
  return (gi[0] = ts__grad_reshape(l, d3, ps)) != NULL;
}

static const ts_attr_def gather_attrs[] = { { "axis", TS_ATTR_INT } };

const ts_op_def ts__op_gather = {
  .op = TS_OP_GATHER, .name = "Gather", .api_name = "gather", .n_inputs = 2, .n_outputs = 1,
  ATTRS(gather_attrs), .infer = gather_infer, .kernel[TS_DEVICE_CPU] = gather_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_gather),
  .grad = gather_grad,
};

/* ---- public wrappers ---------------------------------------------------------------- */

ts_tensor *ts_reshape_at(ts_loc loc, ts_tensor *x, ts_shape shape)
{
  ts_attr attrs[] = { TS_ATTR_SH(shape) };
  return ts__dispatch1(loc, TS_OP_RESHAPE, &x, 1, attrs);
}

ts_tensor *ts_flatten_at(ts_loc loc, ts_tensor *x)
{
  return ts__dispatch1(loc, TS_OP_FLATTEN, &x, 1, NULL);
}

ts_tensor *ts_transpose_at(ts_loc loc, ts_tensor *x, ts_ints perm)
{
  ts_attr attrs[] = { TS_ATTR_INTS_(perm) };
  return ts__dispatch1(loc, TS_OP_TRANSPOSE, &x, 1, attrs);
}

ts_tensor *ts_concat_at(ts_loc loc, ts_tensor *const *xs, int n, int axis)
{
  ts_attr attrs[] = { TS_ATTR_I(axis) };
  if (n < 1 || n > TS_MAX_INPUTS || !xs) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, ts__op_concat.name,
                 "needs 1 to %d inputs, got %d%s", TS_MAX_INPUTS, n, xs ? "" : " (NULL list)");
    return NULL;
  }
  return ts__dispatch1(loc, TS_OP_CONCAT, xs, n, attrs);
}

int ts_split_at(ts_loc loc, ts_tensor *x, int n, int axis, ts_tensor **out)
{
  ts_attr attrs[] = { TS_ATTR_I(n), TS_ATTR_I(axis) };
  if (n < 1 || n > TS_MAX_OUTPUTS || !out) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, ts__op_split.name,
                 "num must be in [1, %d], got %d%s", TS_MAX_OUTPUTS, n,
                 out ? "" : " (NULL output array)");
    return -1;
  }
  int got = ts__dispatch(loc, TS_OP_SPLIT, &x, 1, attrs, out);
  for (int i = got < 0 ? 0 : n; i < n; i++)
    out[i] = NULL;
  return got;
}

ts_tensor *ts_pack_at(ts_loc loc, ts_tensor *const *xs, int n, int axis)
{
  ts_attr attrs[] = { TS_ATTR_I(axis) };
  if (n < 1 || n > TS_MAX_INPUTS || !xs) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, ts__op_pack.name,
                 "needs 1 to %d inputs, got %d%s", TS_MAX_INPUTS, n, xs ? "" : " (NULL list)");
    return NULL;
  }
  return ts__dispatch1(loc, TS_OP_PACK, xs, n, attrs);
}

int ts_unpack_at(ts_loc loc, ts_tensor *x, int num, int axis, ts_tensor **out)
{
  int ax;
  if (!out) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, ts__op_unpack.name, "NULL output array");
    return -1;
  }
  bool given = num >= 0;
  if (x && !given && ts__axis(axis, x->shape.rank, &ax)) {
    int64_t d = x->shape.dim[ax];
    char buf[TS_INFO_STR];
    if (d < 0)
      ts_error_set(TS_ERR_SHAPE, loc, ts__op_unpack.name,
                   "cannot infer num from %s: its axis %d is unknown (give num)",
                   ts__info_str(buf, x->dtype, x->shape), axis);
    else if (d < 1 || d > TS_MAX_OUTPUTS)
      ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, ts__op_unpack.name,
                   "%s has %lld slices along axis %d; it unstacks into 1 to %d",
                   ts__info_str(buf, x->dtype, x->shape), (long long)d, axis, TS_MAX_OUTPUTS);
    if (d < 1 || d > TS_MAX_OUTPUTS)
      return -1;
    num = (int)d;
  }
  ts_attr attrs[] = { TS_ATTR_I(num), TS_ATTR_I(axis) };
  int got = ts__dispatch(loc, TS_OP_UNPACK, &x, 1, attrs, out);
  for (int i = 0; got < 0 && given && i < num; i++)
    out[i] = NULL;
  return got;
}

ts_tensor *ts_slice_at(ts_loc loc, ts_tensor *x, ts_ints begin, ts_ints size)
{
  ts_attr attrs[] = { TS_ATTR_INTS_(begin), TS_ATTR_INTS_(size) };
  return ts__dispatch1(loc, TS_OP_SLICE, &x, 1, attrs);
}

ts_tensor *ts_gather_at(ts_loc loc, ts_tensor *params, ts_tensor *indices, int axis)
{
  ts_tensor *in[] = { params, indices };
  ts_attr attrs[] = { TS_ATTR_I(axis) };
  return ts__dispatch1(loc, TS_OP_GATHER, in, 2, attrs);
}
