/* test-cuda-kernels.c — the CUDA kernels, without a GPU: the launchers
 * the .cu files make from the elementwise rows (engine/ops/unary_rows.h,
 * binary_rows.h) exist for every row and dtype the CPU loops take, and
 * which op rows have a CUDA kernel at all (listed, so that a row without
 * one is seen; those listed below must have one).  Linked with the .cu
 * objects themselves: nothing here launches, so no device is needed. */
#include <glib.h>
#include <string.h>
#include <tracescope-backend.h>

#include "../engine/backend/cuda/kernels.h"
#include "../engine/ops/unary_rows.h"
#include "../engine/ops/binary_rows.h"

#define BIT(dt) (1u << (dt))
/* as the rows' dtypes say (unary_rows.h): the 16-bit floats with the
 * floats, the small and unsigned integers with the numeric */
#define DT_FLOAT (BIT(TS_F32) | BIT(TS_F64) | BIT(TS_F16) | BIT(TS_BF16))
#define DT_NUMERIC                                                                          \
  (DT_FLOAT | BIT(TS_I32) | BIT(TS_I64) | BIT(TS_U8) | BIT(TS_I8) | BIT(TS_I16) | BIT(TS_U16) | \
   BIT(TS_U32) | BIT(TS_U64))
#define DT_ALL (DT_NUMERIC | BIT(TS_BOOL))
#define DT_BOOL BIT(TS_BOOL)
#define DT_PREDICATE DT_FLOAT /* tests of a float, giving bool */
/* arithmetic rows (a float gives a float), in the FusedElementwise
 * interpreter; not comparisons, tests or logic */
#define ARITH_FLOAT true
#define ARITH_NUMERIC true
#define ARITH_ALL false
#define ARITH_BOOL false
#define ARITH_PREDICATE false

typedef struct row {
  ts_op op;
  const char *name;
  unsigned dtypes;
  bool binary;
  bool arithmetic;
} row;

#define UNARY_ROW(ID, id, NAME, DTYPES, GRAIN, FLAGS, F32, GRAD) \
  { TS_OP_##ID, NAME, DT_##DTYPES, false, ARITH_##DTYPES },
#define BINARY_ROW(ID, id, NAME, DTYPES, GRAIN, CHECK, FLAGS, GRAD) \
  { TS_OP_##ID, NAME, DT_##DTYPES, true, ARITH_##DTYPES },
static const row ROWS[] = { UNARY_ROWS(UNARY_ROW) BINARY_ROWS(BINARY_ROW) };

/* Every elementwise row has a launcher per dtype its formulas take (the
 * integer FloorDiv, FloorMod and Pow too: their operand checks run on the
 * host first); the arithmetic rows are in the FusedElementwise
 * interpreter. */
static void test_elementwise_launchers(void)
{
  for (size_t i = 0; i < G_N_ELEMENTS(ROWS); i++) {
    const row *r = &ROWS[i];
    for (ts_dtype dt = 0; dt < TS_NUMERIC_DTYPE_COUNT; dt++) {
      bool want = (r->dtypes & BIT(dt)) != 0;
      bool has = r->binary ? ts__cu_has_binary(r->op, dt) : ts__cu_has_unary(r->op, dt);
      if (has != want)
        g_error("%s on %s: a CUDA launcher %s, expected %s", r->name, ts_dtype_name(dt),
                has ? "exists" : "is missing", want ? "one" : "none");
    }
    if (ts__cu_has_fused(r->op) != r->arithmetic)
      g_error("%s: %s the FusedElementwise interpreter", r->name,
              r->arithmetic ? "missing from" : "unexpectedly in");
  }
  /* other ops are not elementwise rows */
  g_assert_false(ts__cu_has_unary(TS_OP_MATMUL, TS_F32));
  g_assert_false(ts__cu_has_binary(TS_OP_MATMUL, TS_F32));
  g_assert_false(ts__cu_has_fused(TS_OP_MATMUL));
}

/* A program the interpreter cannot run is refused before it launches. */
static void test_fused_refuses(void)
{
  ts_cu_program p = { .n = 1, .code = { { TS_OP_MATMUL, 0, 1 } } };
  ts_cu_bcast s = { .rank = 1, .n_in = 2, .dim = { 4 } };
  const void *in[2] = { NULL, NULL };
  g_assert_false(ts__cu_fused(&p, TS_F32, 4, &s, in, NULL, NULL));
  p.code[0].op = TS_OP_ADD;
  g_assert_false(ts__cu_fused(&p, TS_I32, 0, &s, in, NULL, NULL));
  p.n = 0;
  g_assert_false(ts__cu_fused(&p, TS_F32, 0, &s, in, NULL, NULL));
}

/* LSTMSequence's cell takes f32 and f64 only, refused before it
 * launches; no elements launch nothing. */
static void test_lstm_cell_dtypes(void)
{
  g_assert_false(ts__cu_lstm_cell(TS_I32, 2, 3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  g_assert_false(ts__cu_lstm_cell(TS_F16, 2, 3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  g_assert_true(ts__cu_lstm_cell(TS_F32, 0, 3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  g_assert_true(ts__cu_lstm_cell(TS_F64, 2, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
}

/* Which rows have a CUDA kernel, listed; these must. */
static const ts_op MUST[] = {
  TS_OP_CAST, TS_OP_FILL, TS_OP_ZEROS, TS_OP_ONES, TS_OP_ZEROS_LIKE, TS_OP_ONES_LIKE,
  TS_OP_EYE, TS_OP_IDENTITY, TS_OP_RANGE, TS_OP_RESHAPE, TS_OP_FLATTEN, TS_OP_TRANSPOSE, TS_OP_CONCAT, TS_OP_SPLIT, TS_OP_SLICE, TS_OP_WHERE,
  TS_OP_REDUCE_SUM, TS_OP_REDUCE_MEAN, TS_OP_REDUCE_MAX, TS_OP_REDUCE_MIN, TS_OP_REDUCE_PROD,
  TS_OP_ARGMAX, TS_OP_SOFTMAX, TS_OP_LOG_SOFTMAX, TS_OP_MATMUL, TS_OP_FUSED_ELEMENTWISE,
  TS_OP_FUSED_MATMUL, TS_OP_CONV2D, TS_OP_FUSED_CONV2D, TS_OP_MAX_POOL2D,
  TS_OP_GATHER, TS_OP_SPARSE_SOFTMAX_CROSS_ENTROPY, TS_OP_RANDOM_UNIFORM, TS_OP_RANDOM_NORMAL,
  TS_OP_CONV2D_BACKPROP_INPUT, TS_OP_CONV2D_BACKPROP_FILTER, TS_OP_MAX_POOL2D_GRAD,
  TS_OP_STATELESS_RANDOM_UNIFORM, TS_OP_SUM_TO, TS_OP_READ_VARIABLE, TS_OP_ASSIGN_VARIABLE,
  TS_OP_ASSIGN_ADD_VARIABLE, TS_OP_ASSIGN_SUB_VARIABLE, TS_OP_APPLY_ADAM, TS_OP_CONV_TRANSPOSE,
  TS_OP_LSTM_SEQUENCE, TS_OP_REVERSE, TS_OP_ONE_HOT, TS_OP_CUMSUM, TS_OP_CUMPROD,
  TS_OP_TOP_K, TS_OP_SORT, TS_OP_ARGSORT,
};

/* Rows that stay on the host on purpose: ShuffleIndices (tf.data's
 * shuffle, on the host in TensorFlow too: one sequential walk over its
 * buffer; its order feeds a Gather, whose CUDA kernel checks the indices
 * on the host anyway). */
static const ts_op HOST[] = { TS_OP_SHUFFLE_INDICES };

/* The reductions take every numeric dtype (sums and products wrapping,
 * integer means exact, as on the CPU), bool for Max and Min only. */
static void test_reduce_dtypes(void)
{
  static const ts_op ops[] = { TS_OP_REDUCE_SUM, TS_OP_REDUCE_MEAN, TS_OP_REDUCE_MAX,
                               TS_OP_REDUCE_MIN, TS_OP_REDUCE_PROD, TS_OP_ARGMAX };
  for (size_t i = 0; i < G_N_ELEMENTS(ops); i++) {
    for (ts_dtype dt = 0; dt < TS_NUMERIC_DTYPE_COUNT; dt++)
      if (dt != TS_BOOL)
        g_assert_true(ts__cu_has_reduce(ops[i], dt));
    g_assert_true(ts__cu_has_reduce(ops[i], TS_BOOL) ==
                  (ops[i] == TS_OP_REDUCE_MAX || ops[i] == TS_OP_REDUCE_MIN));
  }
  g_assert_false(ts__cu_has_reduce(TS_OP_ADD, TS_F32));
}

static void test_rows_listed(void)
{
  GString *with = g_string_new(NULL), *without = g_string_new(NULL);
  int n_with = 0;
  for (int op = 0; op < TS_OP_COUNT; op++) {
    bool has = ts_op_has_kernel(op, TS_DEVICE_CUDA);
    g_string_append_printf(has ? with : without, " %s", ts_op_name(op));
    n_with += has;
    g_assert_true(ts_op_has_kernel(op, TS_DEVICE_CPU) || !has); /* a CPU kernel first */
    if (ts_op_traits(op) & TS_OP_TRAIT_ELEMENTWISE)
      g_assert_true(has);
  }
  for (size_t i = 0; i < G_N_ELEMENTS(MUST); i++)
    if (!ts_op_has_kernel(MUST[i], TS_DEVICE_CUDA))
      g_error("%s has no CUDA kernel", ts_op_name(MUST[i]));
  for (size_t i = 0; i < G_N_ELEMENTS(HOST); i++)
    g_assert_false(ts_op_has_kernel(HOST[i], TS_DEVICE_CUDA));
  g_test_message("%d of %d rows have a CUDA kernel:%s", n_with, (int)TS_OP_COUNT, with->str);
  g_test_message("on the CPU only (they fall back, with a warning):%s", without->str);
  g_assert_false(ts_op_has_kernel(TS_OP_COUNT, TS_DEVICE_CUDA));
  g_assert_false(ts_op_has_kernel(TS_OP_ADD, TS_DEVICE_KIND_COUNT));
  g_string_free(with, TRUE);
  g_string_free(without, TRUE);
}

/* The launchers take every numeric dtype their rows take on the CPU, and
 * refuse the rest before launching (n = 0: nothing is queued). */
static void test_dtype_launchers(void)
{
  for (ts_dtype a = 0; a < TS_DTYPE_COUNT; a++) {
    bool numeric = a < TS_NUMERIC_DTYPE_COUNT, is_float = (DT_FLOAT & BIT(a)) != 0;
    for (ts_dtype b = 0; b < TS_DTYPE_COUNT; b++)
      g_assert_true(ts__cu_cast(a, b, 0, NULL, NULL, NULL) ==
                    (numeric && b < TS_NUMERIC_DTYPE_COUNT));
    g_assert_true(ts__cu_fill(a, 0, 1, NULL, NULL) == numeric);
    g_assert_true(ts__cu_eye(a, 0, 0, NULL, NULL) == numeric);
    ts_philox_params p = { 0 };
    g_assert_true(ts__cu_stateless_uniform(a, 0, &p, TS_I64, NULL, NULL, NULL) ==
                  (numeric && a != TS_BOOL));
    ts_cu_sum_to s = { 0 };
    g_assert_true(ts__cu_sum_to(a, &s, NULL, NULL, NULL) == is_float);
    ts_cu_adam adam = { 0 };
    g_assert_true(ts__cu_adam(a, 0, &adam, NULL) == (a == TS_F32 || a == TS_F64));
    ts_cu_col2im col2im = { 0 };
    g_assert_true(ts__cu_col2im(a, &col2im, NULL, NULL, NULL, NULL) == (a == TS_F32 || a == TS_F64));
    g_assert_true(ts__cu_one_hot(4, a, 0, 1, 1, NULL, NULL, NULL, NULL, NULL) ==
                  (a == TS_U8 || a == TS_I8 || a == TS_I32 || a == TS_I64)); /* OneHot's indices */
    for (int prod = 0; prod < 2; prod++) /* Cumsum, Cumprod: no bool, as the CPU's */
      g_assert_true(ts__cu_cumulative(prod, a, 0, 3, 2, true, true, NULL, NULL, NULL) ==
                    (numeric && a != TS_BOOL));
    int32_t *no_indices = NULL;
    g_assert_true(ts__cu_sort(a, 2, 0, 3, 0, true, NULL, NULL, no_indices, NULL) ==
                  (numeric && a != TS_BOOL)); /* TopKV2, Sort, ArgSort: no bool, as the CPU's */
    g_assert_true(ts__cu_sort(a, 2, 5, 3, 0, false, NULL, NULL, no_indices, NULL) ==
                  (numeric && a != TS_BOOL)); /* k = 0: nothing kept */
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cuda-kernels/elementwise-launchers", test_elementwise_launchers);
  g_test_add_func("/cuda-kernels/fused-refuses", test_fused_refuses);
  g_test_add_func("/cuda-kernels/rows-listed", test_rows_listed);
  g_test_add_func("/cuda-kernels/lstm-cell-dtypes", test_lstm_cell_dtypes);
  g_test_add_func("/cuda-kernels/reduce-dtypes", test_reduce_dtypes);
  g_test_add_func("/cuda-kernels/dtype-launchers", test_dtype_launchers);
  return g_test_run();
}
