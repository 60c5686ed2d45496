/* ops/reduce.c — reductions (Sum, Mean, Max, Min, Prod, Any, All), ArgMax, ArgMin, Cumsum and Cumprod.
 *
 * Semantics follow TensorFlow: integer sums and products wrap (computed
 * unsigned), integer means sum exactly (128 bits) and truncate toward zero,
 * sums and products of f32 accumulate in f64 (more accurate than TF, which
 * accumulates in f32), Max/Min propagate NaN, ArgMax and ArgMin pick the
 * first of equal values and a NaN before any number (as NumPy's), Any
 * and All take bool alone.  Reducing over zero elements gives 0 (Sum), 1
 * (Prod), NaN (float Mean), false (Any), true (All), and for Max and Min
 * the reducer's identity as TensorFlow's: -inf and inf for floats, the
 * dtype's lowest and highest for integers (NumPy refuses there); an
 * integer Mean of zero elements is an error unless the output is empty. */
#include "engine-private.h"

#include <glib.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

enum { K_SUM, K_MEAN, K_MAX, K_MIN, K_PROD, K_ANY, K_ALL, K_COUNT };
_Static_assert(TS_OP_REDUCE_PROD - TS_OP_REDUCE_SUM == K_PROD,
               "Sum, Mean, Max, Min, Prod must stay in this order in TS_OP_LIST");

/* x is viewed as [outer, r, inner], y as [outer, inner].  part() folds
 * rows [j0, j1) of one outer slice, columns [i0, i1), into acc[0 .. i1-i0)
 * (accumulators of type A, ACC_BYTES at most); finish() combines n_parts
 * partial accumulators per output (output k's part p at acc[p * stride + k])
 * in order and writes y[0 .. n).  rows() reduces n rows of r (inner 1)
 * into y[0 .. n), each as part() and finish() would: ROWS_AT_ONCE rows
 * step by step together, so their chains of adds overlap (a row's own
 * four chains wait on each add's latency: a layer norm's mean of rows
 * of 64). */
#define ACC_BYTES 16
#define ROWS_AT_ONCE 8
typedef struct reduce_impl {
  void (*part)(const void *x, void *acc, int64_t inner, int64_t j0, int64_t j1, int64_t i0,
               int64_t i1);
  void (*finish)(const void *acc, void *y, int64_t n, int64_t n_parts, int64_t stride,
                 int64_t count);
  void (*rows)(const void *x, void *y, int64_t n, int64_t r);
  size_t acc_size;
} reduce_impl;

/* T the element, C the C number it is (V(x) widens it, N(c) narrows back:
 * the 16-bit floats; else both as is), A the accumulator. */
#define DEF_REDUCE(name, T, A, INIT, STEP, FINISH) DEF_REDUCE_AS(name, T, T, A, INIT, STEP, FINISH, AS_IS, AS_IS)
#define AS_IS(x) (x)
#define DEF_REDUCE_AS(name, T, C, A, INIT, STEP, FINISH, V, N)                             \
  static void name##_part(const void *xv, void *accv, int64_t inner, int64_t j0,         \
                          int64_t j1, int64_t i0, int64_t i1)                             \
  {                                                                                       \
    const T *restrict x = xv;                                                             \
    A *restrict acc = accv;                                                               \
    if (inner == 1) { /* a row: four chains hide the latency of each step */             \
      A a0 = (INIT), a1 = a0, a2 = a0, a3 = a0;                                           \
      int64_t j = j0;                                                                     \
      for (; j + 4 <= j1; j += 4) {                                                       \
        STEP(A, a0, V(x[j]));                                                             \
        STEP(A, a1, V(x[j + 1]));                                                         \
        STEP(A, a2, V(x[j + 2]));                                                         \
        STEP(A, a3, V(x[j + 3]));                                                         \
      }                                                                                   \
      for (; j < j1; j++)                                                                 \
        STEP(A, a0, V(x[j]));                                                             \
      STEP(A, a0, a1);                                                                    \
      STEP(A, a2, a3);                                                                    \
      STEP(A, a0, a2);                                                                    \
      acc[0] = a0;                                                                        \
      return;                                                                             \
    }                                                                                     \
    for (int64_t i = i0; i < i1; i++)                                                     \
      acc[i - i0] = (INIT);                                                               \
    for (int64_t j = j0; j < j1; j++) {                                                   \
      const T *row = x + j * inner;                                                       \
      for (int64_t i = i0; i < i1; i++)                                                   \
        STEP(A, acc[i - i0], V(row[i]));                                                  \
    }                                                                                     \
  }                                                                                       \
  static void name##_finish(const void *accv, void *yv, int64_t n, int64_t n_parts,      \
                            int64_t stride, int64_t count)                                \
  {                                                                                       \
    const A *restrict acc = accv;                                                         \
    T *restrict y = yv;                                                                   \
    for (int64_t k = 0; k < n; k++) {                                                     \
      A a = acc[k];                                                                       \
      for (int64_t p = 1; p < n_parts; p++)                                               \
        STEP(A, a, acc[p * stride + k]);                                                  \
      y[k] = N(FINISH(C, a, count));                                                      \
    }                                                                                     \
  }                                                                                       \
  static void name##_rows(const void *xv, void *yv, int64_t n, int64_t r)                \
  {                                                                                       \
    const T *restrict x = xv;                                                             \
    T *restrict y = yv;                                                                   \
    int64_t o = 0;                                                                        \
    for (; o + ROWS_AT_ONCE <= n; o += ROWS_AT_ONCE) {                                    \
      A a[ROWS_AT_ONCE][4];                                                               \
      const T *row[ROWS_AT_ONCE];                                                         \
      for (int q = 0; q < ROWS_AT_ONCE; q++) {                                            \
        row[q] = x + (o + q) * r;                                                         \
        for (int c = 0; c < 4; c++)                                                       \
          a[q][c] = (INIT);                                                               \
      }                                                                                   \
      int64_t j = 0;                                                                      \
      for (; j + 4 <= r; j += 4)                                                          \
        for (int q = 0; q < ROWS_AT_ONCE; q++)                                            \
          for (int c = 0; c < 4; c++)                                                     \
            STEP(A, a[q][c], V(row[q][j + c]));                                           \
      for (; j < r; j++)                                                                  \
        for (int q = 0; q < ROWS_AT_ONCE; q++)                                            \
          STEP(A, a[q][0], V(row[q][j]));                                                 \
      for (int q = 0; q < ROWS_AT_ONCE; q++) {                                            \
        STEP(A, a[q][0], a[q][1]);                                                        \
        STEP(A, a[q][2], a[q][3]);                                                        \
        STEP(A, a[q][0], a[q][2]);                                                        \
        y[o + q] = N(FINISH(C, a[q][0], r));                                              \
      }                                                                                   \
    }                                                                                     \
    for (; o < n; o++) {                                                                  \
      A acc;                                                                              \
      name##_part(x + o * r, &acc, 1, 0, r, 0, 1);                                        \
      name##_finish(&acc, y + o, 1, 1, 0, r);                                             \
    }                                                                                     \
  }                                                                                       \
  _Static_assert(sizeof(A) <= ACC_BYTES, "accumulator too large");                       \
  static const reduce_impl name = { name##_part, name##_finish, name##_rows, sizeof(A) };

#define STEP_ADD(A, a, v) ((a) += (A)(v))
#define STEP_MUL(A, a, v) ((a) *= (A)(v))
#define STEP_MAXF(A, a, v) ((a) = ((v) > (a) || isnan(v)) && !isnan(a) ? (v) : (a))
#define STEP_MINF(A, a, v) ((a) = ((v) < (a) || isnan(v)) && !isnan(a) ? (v) : (a))
#define STEP_MAXI(A, a, v) ((a) = (v) > (a) ? (v) : (a))
#define STEP_MINI(A, a, v) ((a) = (v) < (a) ? (v) : (a))
#define FINISH_PLAIN(T, a, r) ((T)(a))
#define FINISH_MEANF(T, a, r) ((r) > 0 ? (T)((a) / (double)(r)) : (T)NAN)
/* r > 0: checked before.  C division truncates toward zero, as TF does. */
#define FINISH_MEANI(T, a, r) ((T)((a) / (r)))

/* Integer means sum exactly in 128 bits (a sum of the largest tensor of
 * int64 cannot overflow it) and divide there; sums and products wrap. */
__extension__ typedef __int128 wide_int;

/* suffix, type, lowest, highest */
#define FLOAT_TYPES(X) X(f32, float, -INFINITY, INFINITY) X(f64, double, -INFINITY, INFINITY)
/* suffix, type, unsigned accumulator (wraps), lowest, highest */
#define INT_TYPES(X)                                                                      \
  X(i32, int32_t, uint32_t, INT32_MIN, INT32_MAX)                                         \
  X(i64, int64_t, uint64_t, INT64_MIN, INT64_MAX)                                         \
  X(u8, uint8_t, uint32_t, 0, UINT8_MAX)                                                  \
  X(i8, int8_t, uint32_t, INT8_MIN, INT8_MAX)                                             \
  X(i16, int16_t, uint32_t, INT16_MIN, INT16_MAX)                                         \
  X(u16, uint16_t, uint32_t, 0, UINT16_MAX)                                               \
  X(u32, uint32_t, uint32_t, 0, UINT32_MAX)                                               \
  X(u64, uint64_t, uint64_t, 0, UINT64_MAX)
/* suffix, type, widen to float, round back: computed as float32 (sums in f64) */
#define HALF_TYPES(X)                                                                     \
  X(f16, ts_f16, ts__f16_to_f32, ts__f64_to_f16)                                          \
  X(bf16, ts_bf16, ts__bf16_to_f32, ts__f64_to_bf16)

#define DEF_FLOAT(sfx, T, LO, HI)                                                         \
  DEF_REDUCE(sum_##sfx, T, double, 0, STEP_ADD, FINISH_PLAIN)                             \
  DEF_REDUCE(mean_##sfx, T, double, 0, STEP_ADD, FINISH_MEANF)                            \
  DEF_REDUCE(max_##sfx, T, T, LO, STEP_MAXF, FINISH_PLAIN)                                \
  DEF_REDUCE(min_##sfx, T, T, HI, STEP_MINF, FINISH_PLAIN)                                \
  DEF_REDUCE(prod_##sfx, T, double, 1, STEP_MUL, FINISH_PLAIN)
#define DEF_INT(sfx, T, U, LO, HI)                                                        \
  DEF_REDUCE(sum_##sfx, T, U, 0, STEP_ADD, FINISH_PLAIN)                                  \
  DEF_REDUCE(mean_##sfx, T, wide_int, 0, STEP_ADD, FINISH_MEANI)                                 \
  DEF_REDUCE(max_##sfx, T, T, LO, STEP_MAXI, FINISH_PLAIN)                                \
  DEF_REDUCE(min_##sfx, T, T, HI, STEP_MINI, FINISH_PLAIN)                                \
  DEF_REDUCE(prod_##sfx, T, U, 1, STEP_MUL, FINISH_PLAIN)
#define DEF_HALF(sfx, T, V, N)                                                            \
  DEF_REDUCE_AS(sum_##sfx, T, float, double, 0, STEP_ADD, FINISH_PLAIN, V, N)             \
  DEF_REDUCE_AS(mean_##sfx, T, float, double, 0, STEP_ADD, FINISH_MEANF, V, N)            \
  DEF_REDUCE_AS(max_##sfx, T, float, float, -INFINITY, STEP_MAXF, FINISH_PLAIN, V, N)     \
  DEF_REDUCE_AS(min_##sfx, T, float, float, INFINITY, STEP_MINF, FINISH_PLAIN, V, N)      \
  DEF_REDUCE_AS(prod_##sfx, T, float, double, 1, STEP_MUL, FINISH_PLAIN, V, N)
FLOAT_TYPES(DEF_FLOAT)
INT_TYPES(DEF_INT)
HALF_TYPES(DEF_HALF)
/* Max/Min of bool are any/all; Sum, Mean and Prod of bool are refused. */
DEF_REDUCE(max_bool, bool, bool, false, STEP_MAXI, FINISH_PLAIN)
DEF_REDUCE(min_bool, bool, bool, true, STEP_MINI, FINISH_PLAIN)

#define ROW(kind, fn)                                                                     \
  [kind] = { [TS_F32] = &fn##_f32, [TS_F64] = &fn##_f64, [TS_I32] = &fn##_i32,            \
             [TS_I64] = &fn##_i64, [TS_U8] = &fn##_u8, [TS_I8] = &fn##_i8,                \
             [TS_I16] = &fn##_i16, [TS_U16] = &fn##_u16, [TS_U32] = &fn##_u32,              \
             [TS_U64] = &fn##_u64, [TS_F16] = &fn##_f16, [TS_BF16] = &fn##_bf16 }
static const reduce_impl *const REDUCE_FNS[K_COUNT][TS_DTYPE_COUNT] = {
  ROW(K_SUM, sum), ROW(K_MEAN, mean), ROW(K_MAX, max), ROW(K_MIN, min), ROW(K_PROD, prod),
};
#undef ROW

/* Sum .. Prod in TS_OP_LIST's order, Any and All after them */
static int reduce_kind(const ts_op_def *def)
{
  return def->op == TS_OP_REDUCE_ANY ? K_ANY
         : def->op == TS_OP_REDUCE_ALL ? K_ALL
                                       : (int)def->op - TS_OP_REDUCE_SUM;
}

/* Any and All take bool alone (tf.reduce_any and tf.reduce_all), as Max
 * and Min of bool compute them; Sum, Mean and Prod never bool. */
static const reduce_impl *reduce_lookup(int kind, ts_dtype dtype)
{
  if (dtype != TS_BOOL)
    return REDUCE_FNS[kind][dtype]; /* the rows of Any and All are empty */
  return kind == K_MAX || kind == K_ANY ? &max_bool : kind == K_MIN || kind == K_ALL ? &min_bool : NULL;
}

/* Which axes a reduction removes, the output shape, and how many elements
 * each output reduces (-1 while a reduced dim is unknown). */
typedef struct reduce_plan {
  bool reduced[TS_MAX_RANK];
  ts_shape out;
  int64_t count;
} reduce_plan;

/* Validates dtype, axes and emptiness; shared by infer and the kernel
 * (which sees the concrete shape a traced graph did not know). */
static bool reduce_plan_make(ts_loc loc, const ts_op_def *def, ts_dtype dtype, ts_shape shape,
                             const ts_attr *attrs, reduce_plan *p)
{
#define PLAN_FAIL(code, ...) (ts__op_fail(loc, def, (code), __VA_ARGS__), false)
  char in[TS_INFO_STR];
  ts_ints axes = attrs[0].ints;
  bool keepdims = attrs[1].b;
  int kind = reduce_kind(def);

  if (!reduce_lookup(kind, dtype) && kind >= K_ANY)
    return PLAN_FAIL(TS_ERR_DTYPE, "%s input %s is not supported: it takes bool (compare it with 0 first)",
                     ts_dtype_name(dtype), ts__info_str(in, dtype, shape));
  if (!reduce_lookup(kind, dtype))
    return PLAN_FAIL(TS_ERR_DTYPE, "bool input %s is not supported; cast it to a number first",
                     ts__info_str(in, dtype, shape));
  if (axes.n > TS_MAX_RANK)
    return PLAN_FAIL(TS_ERR_INVALID_ARGUMENT, "%d axes given for input %s, at most %d allowed",
                     axes.n, ts__info_str(in, dtype, shape), TS_MAX_RANK);

  memset(p->reduced, 0, sizeof p->reduced);
  for (int i = 0; i < axes.n; i++) {
    int64_t a = axes.v[i];
    int ax;
    if (!ts__axis(a, shape.rank, &ax))
      return PLAN_FAIL(TS_ERR_INVALID_ARGUMENT,
                       "axis %" PRId64 " is out of range for input %s (rank %d)", a,
                       ts__info_str(in, dtype, shape), shape.rank);
    if (p->reduced[ax])
      return PLAN_FAIL(TS_ERR_INVALID_ARGUMENT,
                       "axis %" PRId64 " is repeated in the axes for input %s", a,
                       ts__info_str(in, dtype, shape));
    p->reduced[ax] = true;
  }

  p->out.rank = 0;
  int64_t red_dims[TS_MAX_RANK] = { 0 };
  int n_red = 0;
  bool unknown = false;
  for (int d = 0; d < shape.rank; d++) {
    if (axes.n < 0)
      p->reduced[d] = true;
    if (!p->reduced[d])
      p->out.dim[p->out.rank++] = shape.dim[d];
    else if (keepdims)
      p->out.dim[p->out.rank++] = 1;
    if (p->reduced[d]) {
      unknown |= shape.dim[d] < 0;
      red_dims[n_red++] = shape.dim[d] < 0 ? 1 : shape.dim[d];
    }
  }
  if (!ts__shape_product(red_dims, n_red, &p->count)) {
    /* An empty input with huge reduced dims reduces nothing; only "not zero" matters. */
    int64_t in_size;
    if (!ts__shape_product(shape.dim, shape.rank, &in_size) || in_size != 0)
      return PLAN_FAIL(TS_ERR_SHAPE,
                       "the number of reduced elements of input %s overflows int64",
                       ts__info_str(in, dtype, shape));
    p->count = INT64_MAX;
  }
  if (unknown && p->count != 0)
    p->count = -1;

  /* an empty output (or one the trace does not know yet) divides nothing */
  int64_t out_size = ts_shape_size(p->out);
  if (p->count == 0 && kind == K_MEAN && !ts_dtype_is_float(dtype) && out_size != 0 &&
      out_size != -1)
    return PLAN_FAIL(TS_ERR_INVALID_ARGUMENT,
                     "integer mean of zero elements (division by zero is not allowed): "
                     "the reduced axes of input %s are empty", ts__info_str(in, dtype, shape));
  return true;
#undef PLAN_FAIL
}

static bool reduce_infer(ts_infer_ctx *c)
{
  reduce_plan p;
  if (!reduce_plan_make(c->loc, c->def, c->in[0].dtype, c->in[0].shape, c->attrs, &p))
    return false;
  c->out[0] = (ts_info){ .dtype = c->in[0].dtype, .shape = p.out };
  return true;
}

/* Copies dims[] x strides[] (source strides, in elements) in row-major order into dst. */
typedef void (*permute_fn)(void *dst, const void *src, int n, const int64_t *dims,
                           const int64_t *strides);

#define DEF_PERMUTE(name, T)                                                              \
  static void name(void *dstv, const void *srcv, int n, const int64_t *dims,             \
                   const int64_t *strides)                                                \
  {                                                                                       \
    T *dst = dstv;                                                                        \
    const T *src = srcv;                                                                  \
    int64_t idx[TS_MAX_RANK] = { 0 }, off = 0;                                            \
    for (;;) {                                                                            \
      for (int64_t i = 0; i < dims[n - 1]; i++)                                           \
        *dst++ = src[off + i * strides[n - 1]];                                           \
      int d = n - 2;                                                                      \
      for (; d >= 0; d--) {                                                               \
        off += strides[d];                                                                \
        if (++idx[d] < dims[d])                                                           \
          break;                                                                          \
        off -= strides[d] * dims[d];                                                      \
        idx[d] = 0;                                                                       \
      }                                                                                   \
      if (d < 0)                                                                          \
        return;                                                                           \
    }                                                                                     \
  }
DEF_PERMUTE(permute_1, uint8_t)
DEF_PERMUTE(permute_2, uint16_t)
DEF_PERMUTE(permute_4, uint32_t)
DEF_PERMUTE(permute_8, uint64_t)
static const permute_fn PERMUTE_FNS[9] = { [1] = permute_1, [2] = permute_2, [4] = permute_4,
                                           [8] = permute_8 };

/* Views non-empty x as [outer, r, inner].  Dims of size 1 are dropped and
 * neighbours of the same kind merged; if the reduced dims still form more
 * than one block, x is copied into *tmp with the reduced blocks moved
 * together (kept blocks first, a trailing kept block stays innermost).
 * Returns the data to reduce, or NULL when out of memory. */
static const void *reduce_layout(const ts_tensor *x, const bool *reduced, int64_t *outer,
                                 int64_t *r, int64_t *inner, void **tmp)
{
  int64_t size[TS_MAX_RANK], stride[TS_MAX_RANK];
  bool red[TS_MAX_RANK];
  int n = 0, runs = 0;
  for (int d = 0; d < x->shape.rank; d++) {
    if (x->shape.dim[d] == 1)
      continue;
    if (n > 0 && red[n - 1] == reduced[d]) {
      size[n - 1] *= x->shape.dim[d];
      continue;
    }
    runs += reduced[d];
    size[n] = x->shape.dim[d];
    red[n++] = reduced[d];
  }
  for (int g = n - 1; g >= 0; g--)
    stride[g] = g == n - 1 ? 1 : stride[g + 1] * size[g + 1];

  *outer = *r = *inner = 1;
  if (runs <= 1) {
    bool after = false;
    for (int g = 0; g < n; g++) {
      if (red[g])
        *r *= size[g], after = true;
      else
        *(after ? inner : outer) *= size[g];
    }
    return x->data;
  }

  int body = red[n - 1] ? n : n - 1;
  int64_t dims[TS_MAX_RANK], strides[TS_MAX_RANK];
  int m = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int g = 0; g < body; g++) {
      if (red[g] != (pass == 1))
        continue;
      *(red[g] ? r : outer) *= size[g];
      dims[m] = size[g];
      strides[m++] = stride[g];
    }
  }
  if (body < n) {
    *inner = size[n - 1];
    dims[m] = size[n - 1];
    strides[m++] = 1;
  }
  size_t es = ts_dtype_size(x->dtype);
  *tmp = g_try_malloc_n((gsize)x->size, es);
  if (*tmp)
    PERMUTE_FNS[es](*tmp, x->data, m, dims, strides);
  return *tmp;
}

/* ---- splitting a reduction across the pool -----------------------------------------
 * Below REDUCE_GRAIN input elements a reduction runs on the calling thread.
 * Above it the work is split by shape alone, never by the thread count, so
 * every count gives the same bits: by outer slices, each output folded in
 * the same order as on one thread; or, with fewer than REDUCE_MIN_SLICES
 * slices, by parts of REDUCE_GRAIN / inner rows (at least one) whose
 * partial accumulators are combined in order afterwards (the order of the
 * additions then differs from a single pass: float sums may differ in the
 * last bits from what one pass over the rows would give). */
#define REDUCE_GRAIN ((int64_t)1 << 15)
#define REDUCE_MIN_SLICES 8 /* fewer outer slices than this split their rows */

typedef enum { BY_SLICES, BY_PARTS } reduce_split;

typedef struct reduce_job {
  const reduce_impl *f;
  const char *x;
  char *y;
  char *acc;            /* accumulators: per task (BY_SLICES), per part (BY_PARTS) */
  int64_t outer, r, inner;
  int64_t slices;       /* BY_SLICES: outer slices per task */
  int64_t rows, n_parts; /* BY_PARTS: rows per part, parts per slice */
  size_t es;            /* element size of x and y */
} reduce_job;

static void slices_item(void *ctx, int64_t t)
{
  const reduce_job *j = ctx;
  void *acc = j->acc + t * j->inner * j->f->acc_size;
  int64_t o0 = t * j->slices, o1 = MIN(j->outer, (t + 1) * j->slices);
  if (j->inner == 1) { /* rows */
    j->f->rows(j->x + o0 * j->r * j->es, j->y + o0 * j->es, o1 - o0, j->r);
    return;
  }
  for (int64_t o = o0; o < o1; o++) {
    j->f->part(j->x + o * j->r * j->inner * j->es, acc, j->inner, 0, j->r, 0, j->inner);
    j->f->finish(acc, j->y + o * j->inner * j->es, j->inner, 1, 0, j->r);
  }
}

static void part_item(void *ctx, int64_t t)
{
  const reduce_job *j = ctx;
  int64_t o = t / j->n_parts, p = t % j->n_parts;
  j->f->part(j->x + o * j->r * j->inner * j->es, j->acc + t * j->inner * j->f->acc_size,
             j->inner, p * j->rows, MIN(j->r, (p + 1) * j->rows), 0, j->inner);
}

/* How j is split, with its slices per task or rows and parts set, and the
 * number of tasks; by shape only. */
static reduce_split reduce_split_of(reduce_job *j, int64_t *n_tasks)
{
  if (j->outer < REDUCE_MIN_SLICES && j->outer * j->r * j->inner >= REDUCE_GRAIN) {
    j->rows = MAX(REDUCE_GRAIN / j->inner, 1);
    j->n_parts = (j->r + j->rows - 1) / j->rows;
    *n_tasks = j->outer * j->n_parts;
    if (j->n_parts >= 2)
      return BY_PARTS;
  }
  j->slices = MAX(REDUCE_GRAIN / MAX(j->r * j->inner, 1), 1);
  *n_tasks = (j->outer + j->slices - 1) / j->slices;
  return BY_SLICES;
}

static bool reduce_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  ts_tensor *y = k->out[0];
  reduce_plan p;
  if (!reduce_plan_make(k->loc, k->def, x->dtype, x->shape, k->attrs, &p))
    return false;

  /* An empty x reduces nothing into each output: the identity (or NaN). */
  reduce_job j = { .f = reduce_lookup(reduce_kind(k->def), x->dtype), .x = x->data,
                   .y = y->data, .outer = y->size, .r = 0, .inner = 1,
                   .es = ts_dtype_size(x->dtype) };
  void *tmp = NULL;
  if (x->size > 0)
    j.x = reduce_layout(x, p.reduced, &j.outer, &j.r, &j.inner, &tmp);
  if (x->size > 0 && !j.x)
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "out of memory reordering %" PRId64 " elements",
                           x->size);
  int64_t n_tasks;
  reduce_split split = reduce_split_of(&j, &n_tasks);
  int64_t n_acc = n_tasks * j.inner;
  if (!(j.acc = g_try_malloc_n((gsize)MAX(n_acc, 1), j.f->acc_size))) {
    g_free(tmp);
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "out of memory for %" PRId64 " accumulators",
                           n_acc);
  }
  switch (split) {
  case BY_SLICES:
    ts__parallel_for(n_tasks, slices_item, &j);
    break;
  case BY_PARTS:
    ts__parallel_for(n_tasks, part_item, &j);
    for (int64_t o = 0; o < j.outer; o++)
      j.f->finish(j.acc + o * j.n_parts * j.inner * j.f->acc_size, j.y + o * j.inner * j.es,
                  j.inner, j.n_parts, j.inner, j.r);
    break;
  }
  g_free(j.acc);
  g_free(tmp);
  return true;
}

static const ts_attr_def REDUCE_ATTRS[] = {
  { "axes", TS_ATTR_INTS },
  { "keepdims", TS_ATTR_BOOL },
};

/* ---- gradients: the output's gradient spread back over what was reduced ---- */

#define REDUCE_GRAD_ARGS                                                                  \
  const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g, ts_tensor **gi
#define AXES(c) ((c)->attrs[0].ints)
#define KEEPDIMS(c) ((c)->attrs[1].b)

static bool reduce_sum_grad(REDUCE_GRAD_ARGS)
{
  return (gi[0] = ts__grad_unreduce(c->loc, g[0], c->in[0], AXES(c), KEEPDIMS(c))) != NULL;
}

/* The output's share of the input: size(out) / size(in), from the shapes
 * when known, else computed (dims unknown while tracing). */
static ts_tensor *mean_share(ts_loc l, ts_tensor *x, ts_tensor *y)
{
  if (x->size >= 0 && y->size >= 0)
    return ts__grad_scalar(x->dtype, x->size ? (double)y->size / (double)x->size : 0);
  ts_tensor *ny = ts_cast_at(l, ts_reduce_prod_at(l, ts_shape_at(l, y), TS_ALL_AXES, false), x->dtype);
  ts_tensor *nx = ts_cast_at(l, ts_reduce_prod_at(l, ts_shape_at(l, x), TS_ALL_AXES, false), x->dtype);
  return ts_div_at(l, ny, nx);
}

static bool reduce_mean_grad(REDUCE_GRAD_ARGS)
{
  ts_tensor *spread = ts__grad_unreduce(c->loc, g[0], c->in[0], AXES(c), KEEPDIMS(c));
  return (gi[0] = ts_mul_at(c->loc, spread, mean_share(c->loc, c->in[0], out[0]))) != NULL;
}

/* Max and Min: to the elements equal to the result, shared among ties
 * (as TensorFlow). */
static bool reduce_extreme_grad(REDUCE_GRAD_ARGS)
{
  ts_loc l = c->loc;
  ts_tensor *x = c->in[0];
  ts_tensor *y = ts__grad_unreduce(l, out[0], x, AXES(c), KEEPDIMS(c));
  ts_tensor *mask = ts__grad_mask(l, ts_equal_at(l, x, y), x->dtype);
  ts_tensor *ties = ts_reduce_sum_at(l, mask, AXES(c), true);
  ts_tensor *spread = ts__grad_unreduce(l, g[0], x, AXES(c), KEEPDIMS(c));
  return (gi[0] = ts_div_at(l, ts_mul_at(l, spread, mask), ties)) != NULL;
}

/* d(prod)/dx_i is the product of the others.  Not y / x, which is 0 / 0 at
 * a zero (TensorFlow takes exclusive cumulative products for the same
 * reason): with p the product of the nonzero elements and z the number of
 * zeros in x_i's reduction, it is p / x_i where z = 0, p at the one zero
 * where z = 1, and 0 elsewhere. */
static bool reduce_prod_grad(REDUCE_GRAD_ARGS)
{
  ts_loc l = c->loc;
  ts_tensor *x = c->in[0];
  ts_tensor *zero = ts__grad_scalar(x->dtype, 0), *one = ts__grad_scalar(x->dtype, 1);
  ts_tensor *is_zero = ts_equal_at(l, x, zero);
  ts_tensor *nonzero = ts_where_at(l, is_zero, one, x);
  ts_tensor *p = ts_reduce_prod_at(l, nonzero, AXES(c), true);
  ts_tensor *zeros = ts_reduce_sum_at(l, ts__grad_mask(l, is_zero, x->dtype), AXES(c), true);
  ts_tensor *at_zero = ts_where_at(l, ts_equal_at(l, zeros, one), p, zero);
  ts_tensor *elsewhere = ts_where_at(l, ts_equal_at(l, zeros, zero), ts_div_at(l, p, nonzero), zero);
  ts_tensor *others = ts_where_at(l, is_zero, at_zero, elsewhere);
  ts_tensor *spread = ts__grad_unreduce(l, g[0], x, AXES(c), KEEPDIMS(c));
  return (gi[0] = ts_mul_at(l, spread, others)) != NULL;
}

#define DEF_REDUCE_OP(ID, id, display, grad_fn, op_flags)                                 \
  const ts_op_def ts__op_##id = {                                                         \
    .op = TS_OP_##ID, .name = display, .api_name = #id, .n_inputs = 1, .n_outputs = 1,    \
    .n_attrs = 2, .attrs = REDUCE_ATTRS, .infer = reduce_infer, .kernel[TS_DEVICE_CPU] = reduce_cpu,        \
    .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_reduce),                             \
    .flags = (op_flags), .grad = (grad_fn),                                               \
  };                                                                                      \
  ts_tensor *ts_##id##_at(ts_loc loc, ts_tensor *x, ts_ints axes, bool keepdims)          \
  {                                                                                       \
    ts_attr attrs[] = { TS_ATTR_INTS_(axes), TS_ATTR_B(keepdims) };                       \
    return ts__dispatch1(loc, TS_OP_##ID, &x, 1, attrs);                                  \
  }
DEF_REDUCE_OP(REDUCE_SUM, reduce_sum, "Sum", reduce_sum_grad, 0)
DEF_REDUCE_OP(REDUCE_MEAN, reduce_mean, "Mean", reduce_mean_grad, 0)
DEF_REDUCE_OP(REDUCE_MAX, reduce_max, "Max", reduce_extreme_grad, 0)
DEF_REDUCE_OP(REDUCE_MIN, reduce_min, "Min", reduce_extreme_grad, 0)
DEF_REDUCE_OP(REDUCE_PROD, reduce_prod, "Prod", reduce_prod_grad, 0)
DEF_REDUCE_OP(REDUCE_ANY, reduce_any, "Any", NULL, TS_OPF_NOT_DIFFERENTIABLE)
DEF_REDUCE_OP(REDUCE_ALL, reduce_all, "All", NULL, TS_OPF_NOT_DIFFERENTIABLE)

/* ---- ArgMax, ArgMin ------------------------------------------------------------ */

/* Writes the index of the largest (ArgMin: the smallest) of x [outer, n,
 * inner] along n into y [outer, inner]; best holds `inner` values. */
typedef void (*arg_fn)(const void *x, int64_t *y, void *best, int64_t outer, int64_t n,
                       int64_t inner);

/* best holds C numbers (8 bytes at most): V(x) widens a 16-bit float */
#define DEF_ARG(name, T, BETTER) DEF_ARG_AS(name, T, T, AS_IS, BETTER)
#define DEF_ARG_AS(name, T, C, V, BETTER)                                                 \
  static void name(const void *xv, int64_t *y, void *bestv, int64_t outer, int64_t n,    \
                   int64_t inner)                                                         \
  {                                                                                       \
    const T *restrict x = xv;                                                             \
    C *restrict best = bestv;                                                             \
    for (int64_t o = 0; o < outer; o++) {                                                 \
      const T *xo = x + o * n * inner;                                                    \
      int64_t *yo = y + o * inner;                                                        \
      for (int64_t i = 0; i < inner; i++)                                                 \
        best[i] = V(xo[i]), yo[i] = 0;                                                    \
      for (int64_t j = 1; j < n; j++) {                                                   \
        const T *row = xo + j * inner;                                                    \
        for (int64_t i = 0; i < inner; i++)                                               \
          if (BETTER(V(row[i]), best[i]))                                                 \
            best[i] = V(row[i]), yo[i] = j;                                               \
      }                                                                                   \
    }                                                                                     \
  }
/* a NaN beats every number and no later NaN: the first NaN wins both */
#define MORE_F(v, b) (((v) > (b) || isnan(v)) && !isnan(b))
#define LESS_F(v, b) (((v) < (b) || isnan(v)) && !isnan(b))
#define MORE_I(v, b) ((v) > (b))
#define LESS_I(v, b) ((v) < (b))
/* arg##_fns: one loop per dtype */
#define DEF_ARG_FNS(arg, BETTER_F, BETTER_I)                                              \
  DEF_ARG(arg##_f32, float, BETTER_F)                                                     \
  DEF_ARG(arg##_f64, double, BETTER_F)                                                    \
  DEF_ARG(arg##_i32, int32_t, BETTER_I)                                                   \
  DEF_ARG(arg##_i64, int64_t, BETTER_I)                                                   \
  DEF_ARG(arg##_u8, uint8_t, BETTER_I)                                                    \
  DEF_ARG(arg##_bool, bool, BETTER_I)                                                     \
  DEF_ARG(arg##_i8, int8_t, BETTER_I)                                                     \
  DEF_ARG(arg##_i16, int16_t, BETTER_I)                                                   \
  DEF_ARG(arg##_u16, uint16_t, BETTER_I)                                                  \
  DEF_ARG(arg##_u32, uint32_t, BETTER_I)                                                  \
  DEF_ARG(arg##_u64, uint64_t, BETTER_I)                                                  \
  DEF_ARG_AS(arg##_f16, ts_f16, float, ts__f16_to_f32, BETTER_F)                          \
  DEF_ARG_AS(arg##_bf16, ts_bf16, float, ts__bf16_to_f32, BETTER_F)                       \
  static const arg_fn arg##_fns[TS_DTYPE_COUNT] = {                                       \
    [TS_F32] = arg##_f32, [TS_F64] = arg##_f64, [TS_I32] = arg##_i32,                     \
    [TS_I64] = arg##_i64, [TS_U8] = arg##_u8,   [TS_BOOL] = arg##_bool,                   \
    [TS_I8] = arg##_i8,   [TS_I16] = arg##_i16, [TS_U16] = arg##_u16,                     \
    [TS_U32] = arg##_u32, [TS_U64] = arg##_u64, [TS_F16] = arg##_f16,                     \
    [TS_BF16] = arg##_bf16,                                                               \
  };
DEF_ARG_FNS(argmax, MORE_F, MORE_I)
DEF_ARG_FNS(argmin, LESS_F, LESS_I)

/* The normalised axis, or -1 after an error (bad axis, empty axis). */
/* The one axis attribute of ArgMax, ArgMin and Cumsum in [0, rank), or -1
 * and the error. */
static int one_axis(ts_loc loc, const ts_op_def *def, ts_dtype dtype, ts_shape shape, int64_t axis)
{
  char buf[TS_INFO_STR];
  int ax;
  if (!ts__axis(axis, shape.rank, &ax))
    return ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT,
                       "axis %" PRId64 " is out of range for input %s (rank %d)", axis,
                       ts__info_str(buf, dtype, shape), shape.rank), -1;
  return ax;
}

static int arg_axis(ts_loc loc, const ts_op_def *def, ts_dtype dtype, ts_shape shape, int64_t axis)
{
  char buf[TS_INFO_STR];
  int ax = one_axis(loc, def, dtype, shape, axis);
  if (ax < 0)
    return -1;
  if (shape.dim[ax] == 0)
    return ts__op_fail(loc, def, TS_ERR_INVALID_ARGUMENT,
                       "attempt to get %s of an empty sequence: axis %" PRId64
                       " of input %s is empty",
                       def->api_name, axis, ts__info_str(buf, dtype, shape)), -1;
  return ax;
}

static bool arg_infer(ts_infer_ctx *c)
{
  ts_shape in = c->in[0].shape;
  int ax = arg_axis(c->loc, c->def, c->in[0].dtype, in, c->attrs[0].i);
  if (ax < 0)
    return false;
  ts_shape out = { .rank = in.rank - 1 };
  for (int d = 0, o = 0; d < in.rank; d++)
    if (d != ax)
      out.dim[o++] = in.dim[d];
  c->out[0] = (ts_info){ .dtype = TS_I64, .shape = out };
  return true;
}

static bool arg_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  int ax = arg_axis(k->loc, k->def, x->dtype, x->shape, k->attrs[0].i);
  if (ax < 0)
    return false;
  if (k->out[0]->size == 0) /* nothing to write: no loop over the (maybe huge) other dims */
    return true;
  int64_t outer = ts__dims_prod(x->shape, 0, ax), inner = ts__dims_prod(x->shape, ax + 1, x->shape.rank);
  void *best = g_try_malloc_n((gsize)MAX(inner, 1), 8);
  if (!best)
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "out of memory for %s over %" PRId64 " rows",
                           k->def->api_name, inner);
  const arg_fn *fns = k->def->op == TS_OP_ARGMIN ? argmin_fns : argmax_fns;
  fns[x->dtype](x->data, k->out[0]->data, best, outer, x->shape.dim[ax], inner);
  g_free(best);
  return true;
}

static const ts_attr_def ARG_ATTRS[] = { { "axis", TS_ATTR_INT } };

const ts_op_def ts__op_argmax = {
  .op = TS_OP_ARGMAX, .name = "ArgMax", .api_name = "argmax", .n_inputs = 1, .n_outputs = 1,
  .flags = TS_OPF_NOT_DIFFERENTIABLE,
  .n_attrs = 1, .attrs = ARG_ATTRS, .infer = arg_infer, .kernel[TS_DEVICE_CPU] = arg_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_reduce),
};

const ts_op_def ts__op_argmin = {
  .op = TS_OP_ARGMIN, .name = "ArgMin", .api_name = "argmin", .n_inputs = 1, .n_outputs = 1,
  .flags = TS_OPF_NOT_DIFFERENTIABLE,
  .n_attrs = 1, .attrs = ARG_ATTRS, .infer = arg_infer, .kernel[TS_DEVICE_CPU] = arg_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_reduce),
};

/* ---- Cumsum, Cumprod ------------------------------------------------------------------ */

/* x and y [outer, n, inner]: y along n the running sums (products) of x,
 * from the end when reverse, each before its own element's when
 * exclusive (the first then 0, or 1); acc holds `inner` of them in x's
 * dtype, each step as that dtype adds or multiplies (NumPy's np.cumsum and
 * np.cumprod, TensorFlow's CPU kernels): integers wrap, 16-bit floats
 * round at every step (their sum or product of two is exact in f64, so
 * rounded once).  The first is the first element itself, as NumPy's
 * (-0.0 stays -0.0). */
typedef void (*cum_fn)(const void *x, void *y, void *acc, int64_t outer, int64_t n,
                       int64_t inner, bool exclusive, bool reverse);

#define DEF_CUM(name, T, OP, ID)                                                          \
  static void name(const void *xv, void *yv, void *accv, int64_t outer, int64_t n,       \
                   int64_t inner, bool exclusive, bool reverse)                           \
  {                                                                                       \
    const T *restrict x = xv;                                                             \
    T *restrict y = yv, *restrict acc = accv;                                             \
    for (int64_t o = 0; o < outer; o++) {                                                 \
      for (int64_t i = 0; i < inner; i++)                                                 \
        acc[i] = (T){ ID };                                                               \
      for (int64_t k = 0; k < n; k++) {                                                   \
        int64_t at = (o * n + (reverse ? n - 1 - k : k)) * inner;                         \
        for (int64_t i = 0; i < inner; i++) {                                             \
          T v = k ? OP(acc[i], x[at + i]) : x[at + i];                                     \
          y[at + i] = exclusive ? acc[i] : v;                                             \
          acc[i] = v;                                                                     \
        }                                                                                 \
      }                                                                                   \
    }                                                                                     \
  }
/* floats, and unsigned ints as wide as int or wider: + and * round or wrap as the dtype;
 * narrower ones computed unsigned (no promotion to a signed int that could overflow) */
#define ADD(a, b) ((a) + (b))
#define ADD_WRAP_I8(a, b) ((int8_t)(uint8_t)((uint8_t)(a) + (uint8_t)(b)))
#define ADD_WRAP_I16(a, b) ((int16_t)(uint16_t)((uint16_t)(a) + (uint16_t)(b)))
#define ADD_WRAP_I32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
#define ADD_WRAP_I64(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define ADD_WRAP_U8(a, b) ((uint8_t)((a) + (b)))
#define ADD_WRAP_U16(a, b) ((uint16_t)((a) + (b)))
#define ADD_F16(a, b) ts__f64_to_f16((double)ts__f16_to_f32(a) + ts__f16_to_f32(b))
#define ADD_BF16(a, b) ts__f64_to_bf16((double)ts__bf16_to_f32(a) + ts__bf16_to_f32(b))
#define MUL(a, b) ((a) * (b))
#define MUL_WRAP_I8(a, b) ((int8_t)(uint8_t)((uint32_t)(uint8_t)(a) * (uint32_t)(uint8_t)(b)))
#define MUL_WRAP_I16(a, b) ((int16_t)(uint16_t)((uint32_t)(uint16_t)(a) * (uint32_t)(uint16_t)(b)))
#define MUL_WRAP_I32(a, b) ((int32_t)((uint32_t)(a) * (uint32_t)(b)))
#define MUL_WRAP_I64(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))
#define MUL_WRAP_U8(a, b) ((uint8_t)((uint32_t)(a) * (uint32_t)(b)))
#define MUL_WRAP_U16(a, b) ((uint16_t)((uint32_t)(a) * (uint32_t)(b)))
#define MUL_F16(a, b) ts__f64_to_f16((double)ts__f16_to_f32(a) * ts__f16_to_f32(b))
#define MUL_BF16(a, b) ts__f64_to_bf16((double)ts__bf16_to_f32(a) * ts__bf16_to_f32(b))
#define F16_ONE 0x3c00
#define BF16_ONE 0x3f80
/* pre: cumsum or cumprod; the op, its first (exclusive) value in each dtype */
#define DEF_CUM_FNS(pre, OP, ID, ID_F16, ID_BF16)                                         \
  DEF_CUM(pre##_f32, float, OP, ID)                                                       \
  DEF_CUM(pre##_f64, double, OP, ID)                                                      \
  DEF_CUM(pre##_i32, int32_t, OP##_WRAP_I32, ID)                                          \
  DEF_CUM(pre##_i64, int64_t, OP##_WRAP_I64, ID)                                          \
  DEF_CUM(pre##_u8, uint8_t, OP##_WRAP_U8, ID)                                            \
  DEF_CUM(pre##_i8, int8_t, OP##_WRAP_I8, ID)                                             \
  DEF_CUM(pre##_i16, int16_t, OP##_WRAP_I16, ID)                                          \
  DEF_CUM(pre##_u16, uint16_t, OP##_WRAP_U16, ID)                                         \
  DEF_CUM(pre##_u32, uint32_t, OP, ID)                                                    \
  DEF_CUM(pre##_u64, uint64_t, OP, ID)                                                    \
  DEF_CUM(pre##_f16, ts_f16, OP##_F16, ID_F16)                                            \
  DEF_CUM(pre##_bf16, ts_bf16, OP##_BF16, ID_BF16)                                        \
  static const cum_fn pre##_fns[TS_DTYPE_COUNT] = {                                       \
    [TS_F32] = pre##_f32, [TS_F64] = pre##_f64, [TS_I32] = pre##_i32,                     \
    [TS_I64] = pre##_i64, [TS_U8] = pre##_u8,   [TS_I8] = pre##_i8,                       \
    [TS_I16] = pre##_i16, [TS_U16] = pre##_u16, [TS_U32] = pre##_u32,                     \
    [TS_U64] = pre##_u64, [TS_F16] = pre##_f16, [TS_BF16] = pre##_bf16,                   \
  };
DEF_CUM_FNS(cumsum, ADD, 0, 0, 0)
DEF_CUM_FNS(cumprod, MUL, 1, F16_ONE, BF16_ONE)

static const cum_fn *cum_fns(const ts_op_def *def)
{
  return def->op == TS_OP_CUMPROD ? cumprod_fns : cumsum_fns;
}

/* The normalised axis, or -1 after an error (bad axis, a dtype without sums). */
static int cum_axis(ts_loc loc, const ts_op_def *def, ts_dtype dtype, ts_shape shape, int64_t axis)
{
  char buf[TS_INFO_STR];
  if (!cum_fns(def)[dtype])
    return ts__op_fail(loc, def, TS_ERR_DTYPE, "%s input %s is not supported; cast it to a number first",
                       ts_dtype_name(dtype), ts__info_str(buf, dtype, shape)), -1;
  return one_axis(loc, def, dtype, shape, axis);
}

static bool cum_infer(ts_infer_ctx *c)
{
  if (cum_axis(c->loc, c->def, c->in[0].dtype, c->in[0].shape, c->attrs[0].i) < 0)
    return false;
  c->out[0] = c->in[0];
  return true;
}

static bool cum_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  int ax = cum_axis(k->loc, k->def, x->dtype, x->shape, k->attrs[0].i);
  if (ax < 0)
    return false;
  if (x->size == 0)
    return true;
  int64_t outer = ts__dims_prod(x->shape, 0, ax), inner = ts__dims_prod(x->shape, ax + 1, x->shape.rank);
  void *acc = g_try_malloc_n((gsize)inner, ts_dtype_size(x->dtype));
  if (!acc)
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "out of memory for %s over %" PRId64 " rows",
                           k->def->api_name, inner);
  cum_fns(k->def)[x->dtype](x->data, k->out[0]->data, acc, outer, x->shape.dim[ax], inner,
                            k->attrs[1].b, k->attrs[2].b);
  g_free(acc);
  return true;
}

/* g summed the other way: each x[k] adds into y[j] for the j after it
 * (reverse: before it), exclusive or not alike (TensorFlow's CumsumGrad). */
static bool cumsum_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                        ts_tensor **gi)
{
  return (gi[0] = ts_cumsum_at(c->loc, g[0], (int)c->attrs[0].i, c->attrs[1].b, !c->attrs[2].b)) != NULL;
}

/* TensorFlow's CumprodGrad: the cumsum the other way of y * g, divided by
 * x, 0 where x is 0 (div_no_nan).  So TensorFlow has it, and so it is
 * wrong at a zero, whose true gradient is the product of the others: a
 * known gap TensorFlow keeps ("TODO This fails when x contains 0"). */
static bool cumprod_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                         ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *x = c->in[0];
  ts_tensor *zero = ts__grad_scalar(x->dtype, 0);
  ts_tensor *sums = ts_cumsum_at(l, ts_mul_at(l, out[0], g[0]), (int)c->attrs[0].i, c->attrs[1].b,
                                 !c->attrs[2].b);
  ts_tensor *at_zero = ts_equal_at(l, x, zero);
  ts_tensor *safe = ts_where_at(l, at_zero, ts__grad_scalar(x->dtype, 1), x);
  return (gi[0] = ts_where_at(l, at_zero, zero, ts_div_at(l, sums, safe))) != NULL;
}

static const ts_attr_def CUM_ATTRS[] = {
  { "axis", TS_ATTR_INT }, { "exclusive", TS_ATTR_BOOL }, { "reverse", TS_ATTR_BOOL }
};

const ts_op_def ts__op_cumsum = {
  .op = TS_OP_CUMSUM, .name = "Cumsum", .api_name = "cumsum", .n_inputs = 1, .n_outputs = 1,
  .n_attrs = 3, .attrs = CUM_ATTRS, .infer = cum_infer, .kernel[TS_DEVICE_CPU] = cum_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_cumulative), .grad = cumsum_grad,
};

const ts_op_def ts__op_cumprod = {
  .op = TS_OP_CUMPROD, .name = "Cumprod", .api_name = "cumprod", .n_inputs = 1, .n_outputs = 1,
  .n_attrs = 3, .attrs = CUM_ATTRS, .infer = cum_infer, .kernel[TS_DEVICE_CPU] = cum_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_cumulative), .grad = cumprod_grad,
};

ts_tensor *ts_cumsum_at(ts_loc loc, ts_tensor *x, int axis, bool exclusive, bool reverse)
{
  ts_attr attrs[] = { TS_ATTR_I(axis), TS_ATTR_B(exclusive), TS_ATTR_B(reverse) };
  return ts__dispatch1(loc, TS_OP_CUMSUM, &x, 1, attrs);
}

ts_tensor *ts_cumprod_at(ts_loc loc, ts_tensor *x, int axis, bool exclusive, bool reverse)
{
  ts_attr attrs[] = { TS_ATTR_I(axis), TS_ATTR_B(exclusive), TS_ATTR_B(reverse) };
  return ts__dispatch1(loc, TS_OP_CUMPROD, &x, 1, attrs);
}

ts_tensor *ts_argmax_at(ts_loc loc, ts_tensor *x, int axis)
{
  ts_attr attrs[] = { TS_ATTR_I(axis) };
  return ts__dispatch1(loc, TS_OP_ARGMAX, &x, 1, attrs);
}

ts_tensor *ts_argmin_at(ts_loc loc, ts_tensor *x, int axis)
{
  ts_attr attrs[] = { TS_ATTR_I(axis) };
  return ts__dispatch1(loc, TS_OP_ARGMIN, &x, 1, attrs);
}
