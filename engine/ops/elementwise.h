/* ops/elementwise.h — what the elementwise op files share: the blocked loop,
 * the broadcast iterator and the dtype check of their inference. */
#pragma once

#include "engine-private.h"

#include <stdio.h>

/* GCC 12 at -O2 vectorises only loops with a known trip count, so the
 * elementwise loops run in blocks of 16 plus a scalar tail.  BODY uses i.
 * The loops' pointers are not restrict: the memory planner runs them in
 * place (the output over an input), reading each element before writing it. */
#define TS_EW_BLOCK 16
#define TS_EW_FOR(n, i, ...)                                            \
  do {                                                                  \
    int64_t i##_block = 0;                                              \
    for (; i##_block + TS_EW_BLOCK <= (n); i##_block += TS_EW_BLOCK)    \
      for (int i##_j = 0; i##_j < TS_EW_BLOCK; i##_j++) {               \
        int64_t i = i##_block + i##_j;                                  \
        __VA_ARGS__;                                                    \
      }                                                                 \
    for (int64_t i = i##_block; i < (n); i++) {                         \
      __VA_ARGS__;                                                      \
    }                                                                   \
  } while (0)

/* Elementwise ops split across the pool (pool.c) in ranges of at least this
 * many output elements; smaller outputs run on the calling thread.  Ops
 * costing far more per element (exp, tanh, a fused program) take a
 * smaller grain.  bench-threads measures where splitting starts to pay. */
#define TS_EW_GRAIN ((int64_t)1 << 15)
#define TS_EW_GRAIN_COSTLY ((int64_t)1 << 12)

/* The flags of most elementwise rows: FusedElementwise programs hold them
 * and the planner runs them in place. */
#define TS_EW_FUSE (TS_OPF_FUSIBLE | TS_OPF_INPLACE)

#define TS_DTYPE_BIT(dt) (1u << (dt))
/* float and double, what kernels written in C floats take (fused programs) */
#define TS_DTYPES_C_FLOAT (TS_DTYPE_BIT(TS_F32) | TS_DTYPE_BIT(TS_F64))
/* every float: the 16-bit ones computed in float and rounded back */
#define TS_DTYPES_FLOAT (TS_DTYPES_C_FLOAT | TS_DTYPE_BIT(TS_F16) | TS_DTYPE_BIT(TS_BF16))
/* Every numeric dtype (f32 ... bf16): string and variant tensors never reach
 * elementwise ops, and messages must not offer them. */
#define TS_DTYPES_ALL ((1u << TS_NUMERIC_DTYPE_COUNT) - 1)
#define TS_DTYPES_NUMERIC (TS_DTYPES_ALL & ~TS_DTYPE_BIT(TS_BOOL))
#define TS_DTYPES_BOOL TS_DTYPE_BIT(TS_BOOL)
/* the unary rows testing a float (IsNan ...): they take the floats, giving bool */
#define TS_DTYPES_PREDICATE TS_DTYPES_FLOAT

/* Fails inference with TS_ERR_DTYPE unless every input's dtype is in mask:
 * "expected float32 or float64, got int32 (i32[2,3])". */
static inline bool ts__ew_check_dtypes(ts_infer_ctx *c, unsigned mask)
{
  int bad = -1;
  for (int i = 0; i < c->n_in && bad < 0; i++)
    if (!(mask & TS_DTYPE_BIT(c->in[i].dtype)))
      bad = i;
  if (bad < 0)
    return true;

  char expected[TS_DTYPE_NAMES_STR], got[3 * TS_INFO_STR + 8] = "", info[TS_INFO_STR];
  ts__dtype_names(expected, mask);
  for (int i = 0; i < c->n_in; i++) {
    size_t len = strlen(got);
    snprintf(got + len, sizeof got - len, "%s%s", i ? ", " : "",
             ts__info_str(info, c->in[i].dtype, c->in[i].shape));
  }
  return ts__infer_fail(c, TS_ERR_DTYPE, "expected %s, got %s (%s)", expected,
                        ts_dtype_name(c->in[bad].dtype), got);
}

/* Walks an output of broadcast inputs row by row.  Dims of size 1 are dropped
 * and neighbours that broadcast alike are merged, so equal shapes become one
 * row and [20,64] + [64] becomes 20 rows of 64.  Along a row every input
 * advances by stride 0 or 1 (inner_stride); off[] is each input's element
 * offset at the start of the current row. */
#define TS_EW_MAX_IN 3

typedef struct ts_ew_iter {
  int n_in;
  int rank; /* merged dims, >= 1; the last is the row */
  int64_t dim[TS_MAX_RANK];
  int64_t stride[TS_EW_MAX_IN][TS_MAX_RANK];
  int64_t idx[TS_MAX_RANK];
  int64_t off[TS_EW_MAX_IN];
  int64_t rows, inner;
} ts_ew_iter;

static inline void ts__ew_iter_init(ts_ew_iter *it, ts_shape out, int n_in,
                                    ts_tensor *const *in)
{
  unsigned bcast[TS_MAX_RANK]; /* bit i: input i broadcasts along the dim */
  *it = (ts_ew_iter){ .n_in = n_in };
  for (int d = 0; d < out.rank; d++) {
    if (out.dim[d] == 1)
      continue;
    unsigned mask = 0;
    for (int i = 0; i < n_in; i++) {
      int ad = d - (out.rank - in[i]->shape.rank);
      if (ad < 0 || in[i]->shape.dim[ad] == 1)
        mask |= 1u << i;
    }
    if (it->rank > 0 && bcast[it->rank - 1] == mask) {
      it->dim[it->rank - 1] *= out.dim[d];
    } else {
      bcast[it->rank] = mask;
      it->dim[it->rank++] = out.dim[d];
    }
  }
  if (it->rank == 0) {
    bcast[0] = 0;
    it->dim[it->rank++] = 1;
  }
  for (int i = 0; i < n_in; i++) {
    int64_t step = 1;
    for (int d = it->rank - 1; d >= 0; d--) {
      bool b = bcast[d] >> i & 1;
      it->stride[i][d] = b ? 0 : step;
      step *= b ? 1 : it->dim[d];
    }
  }
  it->inner = it->dim[it->rank - 1];
  it->rows = 1;
  for (int d = 0; d < it->rank - 1; d++)
    it->rows *= it->dim[d];
}

static inline int64_t ts__ew_inner_stride(const ts_ew_iter *it, int i)
{
  return it->stride[i][it->rank - 1];
}

/* Moves off[] to the start of row `row` (a range of the output starting
 * there: the ops split across threads). */
static inline void ts__ew_iter_seek(ts_ew_iter *it, int64_t row)
{
  for (int i = 0; i < it->n_in; i++)
    it->off[i] = 0;
  for (int d = it->rank - 2; d >= 0; d--) {
    it->idx[d] = row % it->dim[d];
    row /= it->dim[d];
    for (int i = 0; i < it->n_in; i++)
      it->off[i] += it->idx[d] * it->stride[i][d];
  }
}

/* Moves off[] to the start of the next row. */
static inline void ts__ew_iter_next(ts_ew_iter *it)
{
  for (int d = it->rank - 2; d >= 0; d--) {
    for (int i = 0; i < it->n_in; i++)
      it->off[i] += it->stride[i][d];
    if (++it->idx[d] < it->dim[d])
      return;
    it->idx[d] = 0;
    for (int i = 0; i < it->n_in; i++)
      it->off[i] -= it->stride[i][d] * it->dim[d];
  }
}
