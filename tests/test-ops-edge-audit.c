/* test-ops-edge-audit.c — the edge-case audit of the ops against NumPy and
 * PyTorch (2026-11-29): what it fixed (Relu fused into a MatMul keeps NaN
 * as the Relu op does; an output too large to allocate names its op, in a
 * graph too, whose memory planner no longer overflows on it) and the
 * values it pinned down where the two agree with TensorFlow: NaN and inf
 * through Softmax, LogSoftmax and ArgMax, integers wrapping, Cast of NaN
 * to int and bool, empty operands, broadcasting against 0, Range's
 * length.  Each expected value says what NumPy (or PyTorch) gives.
 *
 * meson runs it with TRACESCOPE_BLAS=off (OpenBLAS is loaded as the engine
 * loads, before main) so that a _FusedMatMul runs on our tiles and their
 * epilogue; with OpenBLAS its Relu runs after the product, and the values
 * must be the same. */
#include <tracescope.h>

#include <glib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "test-errors.h"

#define N_OF(type, ...) ((int)(sizeof((type[]){ __VA_ARGS__ }) / sizeof(type)))
#define CONST(dtype, ctype, shape, ...) ts_constant((dtype), (shape), (const ctype[]){ __VA_ARGS__ })
#define F32(shape, ...) CONST(TS_F32, float, shape, __VA_ARGS__)
#define F64(shape, ...) CONST(TS_F64, double, shape, __VA_ARGS__)
#define I32(shape, ...) CONST(TS_I32, int32_t, shape, __VA_ARGS__)
/* dtype, shape and values: NaN matches NaN, 0.0 matches -0.0, others within rel_tol */
#define CHECK(t, dtype, shape, rel_tol, ...) \
  check((t), (dtype), (shape), (const double[]){ __VA_ARGS__ }, N_OF(double, __VA_ARGS__), (rel_tol))

static void check(const ts_tensor *t, ts_dtype dtype, ts_shape shape, const double *want, int n, double rel_tol)
{
  assert_no_error();
  g_assert_nonnull(t);
  g_assert_cmpstr(ts_dtype_name(ts_tensor_dtype(t)), ==, ts_dtype_name(dtype));
  g_assert_true(ts_shape_equal(ts_tensor_shape(t), shape));
  g_assert_cmpint(ts_tensor_size(t), ==, n);
  for (int i = 0; i < n; i++) {
    double got = ts_tensor_get_f64(t, i);
    if (isnan(want[i]))
      g_assert_true(isnan(got));
    else if (isfinite(want[i]) && rel_tol > 0)
      g_assert_cmpfloat_with_epsilon(got, want[i], rel_tol * fmax(1, fabs(want[i])));
    else
      g_assert_cmpfloat(got, ==, want[i]);
  }
}

/* Takes the pending error: its code, its op, and the message's fragment. */
static void expect_op_error(ts_error_code code, const char *op, const char *fragment)
{
  const ts_error *e = ts_error_peek();
  g_assert_nonnull(e);
  g_assert_cmpstr(ts_error_code_name(e->code), ==, ts_error_code_name(code));
  g_assert_cmpstr(e->op, ==, op);
  expect_error_containing(fragment);
}

/* ---- the fixes ------------------------------------------------------------------ */

static ts_tensor *dense_relu(ts_call *c)
{
  return ts_relu(ts_add(ts_matmul(ts_arg(c, 0), ts_arg(c, 1)), ts_arg(c, 2)));
}

/* relu(x w + b) as a graph whose fusion pass makes one _FusedMatMul: a
 * NaN in x's first row and in b's column 2 stays NaN (np.maximum(nan, 0)
 * and torch.relu(nan) are nan, as the eager Relu); before, the AVX-512 and
 * AVX2 epilogues' max(v, 0) gave 0 there. */
static void test_fused_relu_keeps_nan(void)
{
  ts_scope *s = ts_scope_begin();
  g_assert_true(ts_set_passes("fuse"));
  ts_tensor *x = F32(TS_SHAPE(2, 3), NAN, 1, 2, -1, 0.5f, 2);
  ts_tensor *w = F32(TS_SHAPE(3, 3), 1, 0, 0, 0, 1, 0, 0, 0, 1);
  ts_tensor *b = F32(TS_SHAPE(3), 0, -3, NAN);
  ts_value args[] = { TS_TENSOR_VALUE(x), TS_TENSOR_VALUE(w), TS_TENSOR_VALUE(b) };
  ts_function *fn = ts_function_new("dense_relu", dense_relu, NULL);
  ts_function_set_run_eagerly(fn, 0);
  ts_tensor *y = ts_function_call(fn, args, 3);
  CHECK(y, TS_F32, TS_SHAPE(2, 3), 0, NAN, NAN, NAN, 0, 0, NAN);
  const ts_graph *g = ts_concrete_optimized_graph(ts_function_concrete(fn, 0));
  bool fused = false;
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    fused |= !strcmp(ts_op_name(ts_node_op(ts_graph_node(g, i))), "_FusedMatMul");
  g_assert_true(fused);
  ts_function_free(fn);
  g_assert_true(ts_set_passes("all"));
  ts_scope_end(s);
}

static ts_tensor *one_hot_huge(ts_call *c)
{
  return ts_one_hot(ts_arg(c, 0), INT64_MAX, NULL, NULL, -1, TS_F32);
}

/* An output no allocation can hold (f32[2^63 - 1]): an error naming the
 * op eagerly and in a graph, whose memory planner computed its bytes
 * with a signed overflow (UBSan) before. */
static void test_output_too_large(void)
{
  ts_scope *s = ts_scope_begin();
  ts_value arg = TS_TENSOR_VALUE(ts_scalar_i32(1));
  for (int graph = 0; graph < 2; graph++) {
    ts_function *fn = ts_function_new("one_hot_huge", one_hot_huge, NULL);
    ts_function_set_run_eagerly(fn, !graph);
    g_assert_null(ts_function_call(fn, &arg, 1));
    expect_op_error(TS_ERR_NO_MEMORY, "OneHot", "OneHot: f32[9223372036854775807] is too large to allocate");
    ts_function_free(fn);
  }
  g_assert_null(ts_range(TS_F64, 0, 1e-300, 1e-310)); /* 10^10 + 1 doubles: over 64 GiB */
  expect_op_error(TS_ERR_NO_MEMORY, "Range", "Range: f64[10000000001] is too large to allocate");
  ts_scope_end(s);
}

/* ---- values pinned ------------------------------------------------------------------ */

static void test_softmax_inf_rows(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s23 = TS_SHAPE(2, 3);
  /* scipy.special.softmax and torch.softmax: a -inf logit gives 0; a row of
   * -inf is nan (0 / 0), as is a row holding +inf (inf - inf) */
  ts_tensor *x = F32(s23, -INFINITY, 0, 1, -INFINITY, -INFINITY, -INFINITY);
  CHECK(ts_softmax(x), TS_F32, s23, 1e-6, 0, 0.2689414, 0.7310586, NAN, NAN, NAN);
  CHECK(ts_log_softmax(x), TS_F32, s23, 1e-6, -INFINITY, -1.3132616, -0.31326166, NAN, NAN, NAN);
  ts_tensor *d = F64(s23, INFINITY, 0, 1, -INFINITY, 0, 0);
  CHECK(ts_softmax(d), TS_F64, s23, 1e-12, NAN, NAN, NAN, 0, 0.5, 0.5);
  CHECK(ts_log_softmax(d), TS_F64, s23, 1e-12, NAN, NAN, NAN, -INFINITY, -M_LN2, -M_LN2);
  ts_scope_end(s);
}

static void test_nan_first_index(void)
{
  ts_scope *s = ts_scope_begin();
  /* np.argmax and np.argmin: the first NaN's index; ties the first */
  ts_tensor *x = F32(TS_SHAPE(4), 1, NAN, 3, NAN);
  CHECK(ts_argmax(x, 0), TS_I64, TS_SCALAR_SHAPE, 0, 1);
  CHECK(ts_argmin(x, 0), TS_I64, TS_SCALAR_SHAPE, 0, 1);
  CHECK(ts_argmax(F64(TS_SHAPE(4), -INFINITY, 2, 2, -INFINITY), 0), TS_I64, TS_SCALAR_SHAPE, 0, 1);
  CHECK(ts_argmin(F64(TS_SHAPE(4), -INFINITY, 2, 2, -INFINITY), 0), TS_I64, TS_SCALAR_SHAPE, 0, 0);
  ts_scope_end(s);
}

static void test_integer_wrap(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s3 = TS_SHAPE(3);
  /* NumPy wraps: np.cumsum(np.int32([2**31-1, 1, 1]), dtype=np.int32),
   * np.prod(np.int32([65536, 65536, 3]), dtype=np.int32) == 0,
   * np.abs(np.int8(-128)) == -128, -np.int16(-32768) == -32768 */
  CHECK(ts_cumsum(I32(s3, INT32_MAX, 1, 1), 0, false, false), TS_I32, s3, 0, INT32_MAX, INT32_MIN, -INT32_MAX);
  CHECK(ts_reduce_prod(I32(s3, 65536, 65536, 3), TS_ALL_AXES, false), TS_I32, TS_SCALAR_SHAPE, 0, 0);
  CHECK(ts_reduce_sum(ts_cast(I32(s3, 127, 1, 1), TS_I8), TS_ALL_AXES, false), TS_I8, TS_SCALAR_SHAPE, 0, -127);
  CHECK(ts_abs(ts_cast(I32(TS_SHAPE(2), -128, -3), TS_I8)), TS_I8, TS_SHAPE(2), 0, -128, 3);
  CHECK(ts_neg(ts_cast(I32(TS_SHAPE(2), -32768, 3), TS_I16)), TS_I16, TS_SHAPE(2), 0, -32768, -3);
  CHECK(ts_abs(I32(TS_SHAPE(1), INT32_MIN)), TS_I32, TS_SHAPE(1), 0, INT32_MIN);
  ts_scope_end(s);
}

static void test_cast_nan_inf(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s4 = TS_SHAPE(4);
  /* np.float32([nan, inf, -inf, 3e9]).astype(np.int32) on x86: all the lowest */
  CHECK(ts_cast(F32(s4, NAN, INFINITY, -INFINITY, 3e9f), TS_I32), TS_I32, s4, 0, INT32_MIN, INT32_MIN,
        INT32_MIN, INT32_MIN);
  /* np.float32([nan, -0.0, 0.1, -inf]).astype(bool): nan is true, -0.0 false */
  CHECK(ts_cast(F32(s4, NAN, -0.0f, 0.1f, -INFINITY), TS_BOOL), TS_BOOL, s4, 0, 1, 0, 1, 1);
  CHECK(ts_cast(I32(TS_SHAPE(3), 0, -1, 256), TS_BOOL), TS_BOOL, TS_SHAPE(3), 0, 0, 1, 1);
  ts_scope_end(s);
}

static void test_empty_operands(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *e = ts_zeros(TS_F32, TS_SHAPE(2, 0));
  ts_shape s2 = TS_SHAPE(2);
  /* np.sum, np.prod over an empty axis: 0 and 1; np.mean: nan; np.max
   * refuses where TensorFlow's identity, -inf, is ours */
  CHECK(ts_reduce_sum(e, TS_AXES(1), false), TS_F32, s2, 0, 0, 0);
  CHECK(ts_reduce_prod(e, TS_AXES(1), false), TS_F32, s2, 0, 1, 1);
  CHECK(ts_reduce_mean(e, TS_AXES(1), false), TS_F32, s2, 0, NAN, NAN);
  CHECK(ts_reduce_max(e, TS_AXES(1), false), TS_F32, s2, 0, -INFINITY, -INFINITY);
  g_assert_null(ts_argmax(e, 1)); /* np.argmax: "attempt to get argmax of an empty sequence" */
  expect_op_error(TS_ERR_INVALID_ARGUMENT, "ArgMax", "axis 1 of input f32[2,0] is empty");
  /* np.ones((2, 0)) @ np.ones((0, 3)): zeros; a batch of 0 convolves to nothing */
  CHECK(ts_matmul(ts_ones(TS_F32, TS_SHAPE(2, 0)), ts_ones(TS_F32, TS_SHAPE(0, 3))), TS_F32, TS_SHAPE(2, 3), 0,
        0, 0, 0, 0, 0, 0);
  CHECK(ts_matmul(ts_ones(TS_I32, TS_SHAPE(1, 0)), ts_ones(TS_I32, TS_SHAPE(0, 2))), TS_I32, TS_SHAPE(1, 2), 0, 0, 0);
  ts_tensor *y = ts_conv2d(ts_ones(TS_F32, TS_SHAPE(0, 4, 4, 2)), ts_ones(TS_F32, TS_SHAPE(3, 3, 2, 5)), 1, 1,
                           TS_PADDING_SAME);
  assert_no_error();
  g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(0, 4, 4, 5)));
  /* np.zeros((1, 3)) + np.zeros((0, 1)) has shape (0, 3); [2] against [0] is refused */
  ts_tensor *z = ts_add(ts_ones(TS_F32, TS_SHAPE(1, 3)), ts_zeros(TS_F32, TS_SHAPE(0, 1)));
  assert_no_error();
  g_assert_true(ts_shape_equal(ts_tensor_shape(z), TS_SHAPE(0, 3)));
  g_assert_null(ts_add(ts_ones(TS_F32, s2), ts_zeros(TS_F32, TS_SHAPE(0))));
  expect_op_error(TS_ERR_SHAPE, "Add", "incompatible shapes for broadcasting: f32[2] and f32[0]");
  ts_scope_end(s);
}

static void test_range_length(void)
{
  ts_scope *s = ts_scope_begin();
  /* np.arange and torch.arange: ceil((limit - start) / delta) values, so
   * np.arange(1, 1.3, 0.1) holds 1.3 itself; a negative delta counts down */
  CHECK(ts_range(TS_F64, 1, 1.3, 0.1), TS_F64, TS_SHAPE(4), 1e-12, 1, 1.1, 1.2, 1.3);
  CHECK(ts_range(TS_F32, 0, 0.3, 0.1), TS_F32, TS_SHAPE(3), 1e-6, 0, 0.1, 0.2);
  CHECK(ts_range(TS_I32, 5, 0, -2), TS_I32, TS_SHAPE(3), 0, 5, 3, 1);
  ts_tensor *none = ts_range(TS_I32, 0, 5, -1); /* np.arange(0, 5, -1): empty */
  assert_no_error();
  g_assert_cmpint(ts_tensor_size(none), ==, 0);
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/edge-audit/fused-relu-keeps-nan", test_fused_relu_keeps_nan);
  g_test_add_func("/edge-audit/output-too-large", test_output_too_large);
  g_test_add_func("/edge-audit/softmax-inf-rows", test_softmax_inf_rows);
  g_test_add_func("/edge-audit/nan-first-index", test_nan_first_index);
  g_test_add_func("/edge-audit/integer-wrap", test_integer_wrap);
  g_test_add_func("/edge-audit/cast-nan-inf", test_cast_nan_inf);
  g_test_add_func("/edge-audit/empty-operands", test_empty_operands);
  g_test_add_func("/edge-audit/range-length", test_range_length);
  return g_test_run();
}
