/* Reductions (Any and All among them), ArgMax, ArgMin, Cumsum, Cumprod, TopKV2, Sort, ArgSort, Softmax, LogSoftmax, SparseSoftmaxCrossEntropyWithLogits and Dropout. */
#include <tracescope.h>

#include <glib.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#define SH TS_SHAPE

static ts_tensor *f32(ts_shape shape, const float *v)
{
  return ts_constant(TS_F32, shape, v);
}

/* 0, 1, 2, ... as f32 [2,3,4]. */
static ts_tensor *iota_234(void)
{
  float v[24];
  for (int i = 0; i < 24; i++)
    v[i] = (float)i;
  return f32(SH(2, 3, 4), v);
}

static void assert_shape(const ts_tensor *t, ts_dtype dtype, ts_shape shape)
{
  g_assert_nonnull(t);
  g_assert_cmpint(ts_tensor_dtype(t), ==, dtype);
  g_assert_true(ts_shape_equal(ts_tensor_shape(t), shape));
}

/* t has `shape` and `dtype` and holds the n values in `want` (within tol; 0: exactly). */
static void assert_values(const ts_tensor *t, ts_dtype dtype, ts_shape shape, const double *want,
                          int n, double tol)
{
  assert_shape(t, dtype, shape);
  g_assert_cmpint(ts_tensor_size(t), ==, n);
  for (int i = 0; i < n; i++) {
    if (isnan(want[i]))
      g_assert_true(isnan(ts_tensor_get_f64(t, i)));
    else if (tol == 0)
      g_assert_cmpfloat(ts_tensor_get_f64(t, i), ==, want[i]);
    else
      g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(t, i), want[i], tol);
  }
}

#define ASSERT_VALUES(t, dtype, shape, tol, ...)                                          \
  do {                                                                                    \
    const double want_[] = { __VA_ARGS__ };                                               \
    assert_values((t), (dtype), (shape), want_, G_N_ELEMENTS(want_), (tol));              \
  } while (0)

/* The pending error has `code`, names `op`, and its message holds every needle. */
static void assert_error(ts_error_code code, const char *op, ...)
{
  g_assert_true(ts_failed());
  ts_error *e = ts_error_take();
  g_assert_cmpstr(ts_error_code_name(e->code), ==, ts_error_code_name(code));
  g_assert_cmpstr(e->op, ==, op);
  g_assert_nonnull(strstr(e->message, op));
  va_list ap;
  va_start(ap, op);
  for (const char *s; (s = va_arg(ap, const char *));)
    if (!strstr(e->message, s))
      g_error("message \"%s\" lacks \"%s\"", e->message, s);
  va_end(ap);
  ts_error_free(e);
}
#define ASSERT_ERROR(code, op, ...) assert_error((code), (op), __VA_ARGS__, (const char *)NULL)

/* ---- Sum over the axis combinations ------------------------------------------ */

static void test_sum_axes(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = iota_234();

  ASSERT_VALUES(ts_reduce_sum(x, TS_AXES(1), false), TS_F32, SH(2, 4), 0,
                12, 15, 18, 21, 48, 51, 54, 57);
  ASSERT_VALUES(ts_reduce_sum(x, TS_AXES(-1), false), TS_F32, SH(2, 3), 0,
                6, 22, 38, 54, 70, 86);
  ASSERT_VALUES(ts_reduce_sum(x, TS_AXES(0), false), TS_F32, SH(3, 4), 0,
                12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34);
  /* contiguous pair, given in either order and with a negative axis */
  ASSERT_VALUES(ts_reduce_sum(x, TS_AXES(0, 1), false), TS_F32, SH(4), 0, 60, 66, 72, 78);
  ASSERT_VALUES(ts_reduce_sum(x, TS_AXES(1, -3), false), TS_F32, SH(4), 0, 60, 66, 72, 78);
  ASSERT_VALUES(ts_reduce_sum(x, TS_AXES(-2, -1), true), TS_F32, SH(2, 1, 1), 0, 66, 210);
  /* non-contiguous axes */
  ASSERT_VALUES(ts_reduce_sum(x, TS_AXES(0, 2), false), TS_F32, SH(3), 0, 60, 92, 124);
  ASSERT_VALUES(ts_reduce_sum(x, TS_AXES(2, 0), true), TS_F32, SH(1, 3, 1), 0, 60, 92, 124);
  /* all axes, explicitly or with TS_ALL_AXES */
  ASSERT_VALUES(ts_reduce_sum(x, TS_ALL_AXES, false), TS_F32, TS_SCALAR_SHAPE, 0, 276);
  ASSERT_VALUES(ts_reduce_sum(x, TS_ALL_AXES, true), TS_F32, SH(1, 1, 1), 0, 276);
  ASSERT_VALUES(ts_reduce_sum(x, TS_AXES(0, 1, 2), false), TS_F32, TS_SCALAR_SHAPE, 0, 276);
  /* no axes (tf.reduce_sum(x, axis=[]), np.sum(x, axis=())): a copy */
  ts_tensor *same = ts_reduce_sum(x, TS_AXES(), false);
  assert_shape(same, TS_F32, SH(2, 3, 4));
  for (int i = 0; i < 24; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(same, i), ==, i);
  /* a scalar reduces to itself */
  ASSERT_VALUES(ts_reduce_sum(ts_scalar_f32(2.5f), TS_ALL_AXES, true), TS_F32,
                TS_SCALAR_SHAPE, 0, 2.5);
  ASSERT_VALUES(ts_reduce_sum(ts_scalar_f32(2.5f), TS_AXES(), false), TS_F32, SH(), 0, 2.5);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* A naive reference for every subset of axes of an i64 [3,1,2,4,2] tensor:
 * covers dropped size-1 dims, merged runs, and reduced runs that are not
 * adjacent with and without a trailing kept run. */
static void test_reduce_matches_reference(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_shape shape = SH(3, 1, 2, 4, 2);
  int64_t v[48];
  for (int i = 0; i < 48; i++)
    v[i] = (i * 37) % 23 - 11;
  ts_tensor *x = ts_constant(TS_I64, shape, v);

  for (unsigned mask = 0; mask < 32; mask++) {
    ts_ints axes = { .n = 0 };
    for (int d = 0; d < 5; d++)
      if (mask & (1u << d))
        axes.v[axes.n++] = d;
    int64_t sum[48] = { 0 }, max[48];
    for (int i = 0; i < 48; i++)
      max[i] = INT64_MIN;
    int64_t out_size = 1;
    for (int d = 0; d < 5; d++)
      if (!(mask & (1u << d)))
        out_size *= shape.dim[d];
    for (int i = 0; i < 48; i++) {
      int64_t rest = i, o = 0, scale = 1;
      for (int d = 4; d >= 0; d--) {
        int64_t idx = rest % shape.dim[d];
        rest /= shape.dim[d];
        if (!(mask & (1u << d))) {
          o += idx * scale;
          scale *= shape.dim[d];
        }
      }
      sum[o] += v[i];
      max[o] = MAX(max[o], v[i]);
    }
    ts_tensor *s = ts_reduce_sum(x, axes, true), *m = ts_reduce_max(x, axes, false);
    g_assert_cmpint(ts_tensor_size(s), ==, out_size);
    g_assert_cmpint(ts_tensor_rank(s), ==, 5);
    g_assert_cmpint(ts_tensor_rank(m), ==, 5 - axes.n);
    for (int64_t i = 0; i < out_size; i++) {
      g_assert_cmpint(ts_tensor_get_i64(s, i), ==, sum[i]);
      g_assert_cmpint(ts_tensor_get_i64(m, i), ==, max[i]);
    }
  }
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* ---- dtypes and integer semantics ---------------------------------------------- */

static void test_sum_dtypes_wrap(void)
{
  ts_scope *scope = ts_scope_begin();
  int32_t i32[] = { INT32_MAX, 1 };
  ASSERT_VALUES(ts_reduce_sum(ts_constant(TS_I32, SH(2), i32), TS_ALL_AXES, false), TS_I32,
                TS_SCALAR_SHAPE, 0, INT32_MIN);
  int64_t i64[] = { INT64_MAX, 2 };
  ts_tensor *s64 = ts_reduce_sum(ts_constant(TS_I64, SH(2), i64), TS_ALL_AXES, false);
  assert_shape(s64, TS_I64, TS_SCALAR_SHAPE);
  g_assert_cmpint(ts_tensor_get_i64(s64, 0), ==, INT64_MIN + 1);
  uint8_t u8[] = { 200, 100, 3 };
  ASSERT_VALUES(ts_reduce_sum(ts_constant(TS_U8, SH(3), u8), TS_ALL_AXES, false), TS_U8,
                TS_SCALAR_SHAPE, 0, 47);
  double f64[] = { 0.5, 0.25, 0.125 };
  ASSERT_VALUES(ts_reduce_sum(ts_constant(TS_F64, SH(3), f64), TS_ALL_AXES, false), TS_F64,
                TS_SCALAR_SHAPE, 0, 0.875);
  /* f32 sums accumulate in f64: an f32 accumulator would lose the 1 */
  float cancel[] = { 1e8f, 1, -1e8f };
  ASSERT_VALUES(ts_reduce_sum(f32(SH(3), cancel), TS_ALL_AXES, false), TS_F32,
                TS_SCALAR_SHAPE, 0, 1);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static void test_mean(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[] = { 1, 2, 3, 4, 5, 6 };
  ts_tensor *x = f32(SH(2, 3), v);
  ASSERT_VALUES(ts_reduce_mean(x, TS_AXES(1), false), TS_F32, SH(2), 1e-6, 2, 5);
  ASSERT_VALUES(ts_reduce_mean(x, TS_AXES(0), true), TS_F32, SH(1, 3), 1e-6, 2.5, 3.5, 4.5);
  ASSERT_VALUES(ts_reduce_mean(x, TS_ALL_AXES, false), TS_F32, TS_SCALAR_SHAPE, 1e-6, 3.5);
  ASSERT_VALUES(ts_reduce_mean(iota_234(), TS_AXES(0, 2), false), TS_F32, SH(3), 1e-6,
                7.5, 11.5, 15.5);

  /* get_MSE: integer mean sums, then truncates toward zero */
  int32_t se[] = { 1, 1, 25, 1, 9 };
  ASSERT_VALUES(ts_reduce_mean(ts_constant(TS_I32, SH(5), se), TS_ALL_AXES, false), TS_I32,
                TS_SCALAR_SHAPE, 0, 7);
  int32_t neg[] = { -7, 0, 1, 2 };
  ASSERT_VALUES(ts_reduce_mean(ts_constant(TS_I32, SH(2, 2), neg), TS_AXES(1), false), TS_I32,
                SH(2), 0, -3, 1);
  int64_t big[] = { INT64_MAX, INT64_MAX - 1, -5 };
  ts_tensor *m64 = ts_reduce_mean(ts_constant(TS_I64, SH(3), big), TS_AXES(0), false);
  assert_shape(m64, TS_I64, TS_SCALAR_SHAPE);
  /* the sum is exact (2^64 - 8, past int64), then divided: no wrapping */
  g_assert_cmpint(ts_tensor_get_i64(m64, 0), ==, INT64_C(6148914691236517202));
  uint8_t u8[] = { 200, 100 };
  ASSERT_VALUES(ts_reduce_mean(ts_constant(TS_U8, SH(2), u8), TS_ALL_AXES, false), TS_U8,
                TS_SCALAR_SHAPE, 0, 150);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* Integer means accumulate wider than the dtype; sums and products still wrap. */
static void test_mean_integer_wide(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_fill(SH(200, 200), ts_constant(TS_U8, TS_SCALAR_SHAPE, &(uint8_t){ 255 }));
  ASSERT_VALUES(ts_reduce_mean(x, TS_ALL_AXES, false), TS_U8, TS_SCALAR_SHAPE, 0, 255);
  ts_tensor *rows = ts_reduce_mean(x, TS_AXES(1), false);
  assert_shape(rows, TS_U8, SH(200));
  for (int i = 0; i < 200; i++)
    g_assert_cmpint(ts_tensor_get_i64(rows, i), ==, 255);
  /* 40000 * 255 = 10200000 = 192 (mod 256): NumPy's uint8 sum wraps the same way */
  ASSERT_VALUES(ts_reduce_sum(x, TS_ALL_AXES, false), TS_U8, TS_SCALAR_SHAPE, 0, 192);
  /* 255^3 mod 256 = 255 */
  ASSERT_VALUES(ts_reduce_prod(ts_fill(SH(3), ts_constant(TS_U8, TS_SCALAR_SHAPE,
                                                           &(uint8_t){ 255 })),
                               TS_ALL_AXES, false), TS_U8, TS_SCALAR_SHAPE, 0, 255);

  int32_t i32[] = { 1 << 30, 1 << 30, 1 << 30, 1 << 30, -3 };
  ts_tensor *xi = ts_constant(TS_I32, SH(5), i32);
  /* (2^32 - 3) / 5, truncated */
  ASSERT_VALUES(ts_reduce_mean(xi, TS_ALL_AXES, false), TS_I32, TS_SCALAR_SHAPE, 0, 858993458);
  ASSERT_VALUES(ts_reduce_sum(xi, TS_ALL_AXES, false), TS_I32, TS_SCALAR_SHAPE, 0, -3);
  int32_t negs[] = { INT32_MIN, INT32_MIN, -1 };
  ASSERT_VALUES(ts_reduce_mean(ts_constant(TS_I32, SH(3), negs), TS_ALL_AXES, false), TS_I32,
                TS_SCALAR_SHAPE, 0, -1431655765);
  int64_t i64[] = { INT64_MIN, INT64_MIN, INT64_MIN + 3 };
  ts_tensor *m = ts_reduce_mean(ts_constant(TS_I64, SH(3), i64), TS_ALL_AXES, false);
  g_assert_cmpint(ts_tensor_get_i64(m, 0), ==, INT64_MIN + 1);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static void test_max_min(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[] = { -1, 5, -3, 2, -8, 4 };
  ts_tensor *x = f32(SH(2, 3), v);
  ASSERT_VALUES(ts_reduce_max(x, TS_AXES(1), false), TS_F32, SH(2), 0, 5, 4);
  ASSERT_VALUES(ts_reduce_min(x, TS_AXES(1), false), TS_F32, SH(2), 0, -3, -8);
  ASSERT_VALUES(ts_reduce_max(x, TS_AXES(0), true), TS_F32, SH(1, 3), 0, 2, 5, 4);
  ASSERT_VALUES(ts_reduce_min(x, TS_AXES(-2), false), TS_F32, SH(3), 0, -1, -8, -3);
  ASSERT_VALUES(ts_reduce_max(x, TS_ALL_AXES, false), TS_F32, TS_SCALAR_SHAPE, 0, 5);
  ASSERT_VALUES(ts_reduce_min(iota_234(), TS_AXES(0, 2), false), TS_F32, SH(3), 0, 0, 4, 8);
  ASSERT_VALUES(ts_reduce_max(iota_234(), TS_AXES(0, 2), false), TS_F32, SH(3), 0, 15, 19, 23);

  float withnan[] = { 1, NAN, 3, 4 };
  ASSERT_VALUES(ts_reduce_max(f32(SH(2, 2), withnan), TS_AXES(1), false), TS_F32, SH(2), 0,
                NAN, 4);
  ASSERT_VALUES(ts_reduce_min(f32(SH(2, 2), withnan), TS_AXES(0), false), TS_F32, SH(2), 0,
                1, NAN);

  /* NaN in any lane of a long row */
  float longnan[] = { 1, NAN, 3, 4, 5, 6, 7, 8, 9, -1, 0, 2, 3, 4, 5, 6, 7, 8 };
  ASSERT_VALUES(ts_reduce_max(f32(SH(2, 9), longnan), TS_AXES(1), false), TS_F32, SH(2), 0,
                NAN, 8);
  ASSERT_VALUES(ts_reduce_min(f32(SH(2, 9), longnan), TS_AXES(1), false), TS_F32, SH(2), 0,
                NAN, -1);

  int32_t i32[] = { INT32_MIN, -2, INT32_MAX };
  ts_tensor *xi = ts_constant(TS_I32, SH(3), i32);
  ASSERT_VALUES(ts_reduce_max(xi, TS_ALL_AXES, false), TS_I32, TS_SCALAR_SHAPE, 0, INT32_MAX);
  ASSERT_VALUES(ts_reduce_min(xi, TS_ALL_AXES, false), TS_I32, TS_SCALAR_SHAPE, 0, INT32_MIN);
  uint8_t u8[] = { 7, 255, 0 };
  ASSERT_VALUES(ts_reduce_max(ts_constant(TS_U8, SH(3), u8), TS_ALL_AXES, false), TS_U8,
                TS_SCALAR_SHAPE, 0, 255);
  /* Max/Min of bool are "any" and "all" */
  bool b[] = { false, true, false, false };
  ts_tensor *xb = ts_constant(TS_BOOL, SH(2, 2), b);
  ASSERT_VALUES(ts_reduce_max(xb, TS_AXES(1), false), TS_BOOL, SH(2), 0, 1, 0);
  ASSERT_VALUES(ts_reduce_min(xb, TS_AXES(0), false), TS_BOOL, SH(2), 0, 0, 0);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static void test_prod(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[] = { 1, 2, 3, 4, 5, 6 };
  ts_tensor *x = f32(SH(2, 3), v);
  ASSERT_VALUES(ts_reduce_prod(x, TS_AXES(1), false), TS_F32, SH(2), 0, 6, 120);
  ASSERT_VALUES(ts_reduce_prod(x, TS_AXES(0), false), TS_F32, SH(3), 0, 4, 10, 18);
  ASSERT_VALUES(ts_reduce_prod(x, TS_ALL_AXES, true), TS_F32, SH(1, 1), 0, 720);
  int32_t i32[] = { 2, -3, 4, 65536, 65536, 1 };
  ts_tensor *xi = ts_constant(TS_I32, SH(2, 3), i32);
  /* 2^32 wraps to 0 */
  ASSERT_VALUES(ts_reduce_prod(xi, TS_AXES(-1), false), TS_I32, SH(2), 0, -24, 0);
  uint8_t u8[] = { 16, 17 };
  ASSERT_VALUES(ts_reduce_prod(ts_constant(TS_U8, SH(2), u8), TS_ALL_AXES, false), TS_U8,
                TS_SCALAR_SHAPE, 0, 16);
  int64_t i64[] = { 3, 5, 7 };
  ASSERT_VALUES(ts_reduce_prod(ts_constant(TS_I64, SH(3), i64), TS_ALL_AXES, false), TS_I64,
                TS_SCALAR_SHAPE, 0, 105);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static void test_empty(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *e = ts_tensor_new(TS_F32, SH(0));
  ASSERT_VALUES(ts_reduce_sum(e, TS_ALL_AXES, false), TS_F32, TS_SCALAR_SHAPE, 0, 0);
  ASSERT_VALUES(ts_reduce_prod(e, TS_ALL_AXES, false), TS_F32, TS_SCALAR_SHAPE, 0, 1);
  ASSERT_VALUES(ts_reduce_mean(e, TS_AXES(0), true), TS_F32, SH(1), 0, NAN);
  ts_tensor *e23 = ts_tensor_new(TS_I32, SH(2, 0));
  ASSERT_VALUES(ts_reduce_sum(e23, TS_AXES(1), false), TS_I32, SH(2), 0, 0, 0);
  ASSERT_VALUES(ts_reduce_prod(e23, TS_AXES(1), true), TS_I32, SH(2, 1), 0, 1, 1);
  /* reducing the non-empty axis leaves an empty result */
  assert_shape(ts_reduce_sum(e23, TS_AXES(0), false), TS_I32, SH(0));
  assert_shape(ts_reduce_max(ts_tensor_new(TS_F64, SH(0, 3)), TS_AXES(1), false), TS_F64, SH(0));
  g_assert_false(ts_failed());

  /* Max and Min of nothing give the reducer's identity, as TensorFlow's
   * (tf.reduce_max of [] is -inf; NumPy refuses): -inf and inf for
   * floats, the lowest and highest value for integers, false and true for
   * bool (Any and All). */
  ASSERT_VALUES(ts_reduce_max(e, TS_ALL_AXES, false), TS_F32, TS_SCALAR_SHAPE, 0, -INFINITY);
  ASSERT_VALUES(ts_reduce_min(ts_tensor_new(TS_F64, SH(0, 2)), TS_AXES(0), false), TS_F64, SH(2),
                0, INFINITY, INFINITY);
  ASSERT_VALUES(ts_reduce_max(e23, TS_AXES(1), false), TS_I32, SH(2), 0, INT32_MIN, INT32_MIN);
  ASSERT_VALUES(ts_reduce_min(e23, TS_AXES(1), true), TS_I32, SH(2, 1), 0, INT32_MAX, INT32_MAX);
  ASSERT_VALUES(ts_reduce_min(ts_tensor_new(TS_U8, SH(2, 0)), TS_AXES(1), false), TS_U8, SH(2), 0,
                255, 255);
  ASSERT_VALUES(ts_reduce_max(ts_tensor_new(TS_U8, SH(0)), TS_ALL_AXES, false), TS_U8,
                TS_SCALAR_SHAPE, 0, 0);
  ts_tensor *i64_max = ts_reduce_max(ts_tensor_new(TS_I64, SH(0)), TS_ALL_AXES, false);
  assert_shape(i64_max, TS_I64, TS_SCALAR_SHAPE);
  g_assert_cmpint(ts_tensor_get_i64(i64_max, 0), ==, INT64_MIN);
  ASSERT_VALUES(ts_reduce_max(ts_tensor_new(TS_F16, SH(0)), TS_ALL_AXES, false), TS_F16,
                TS_SCALAR_SHAPE, 0, -INFINITY);
  ASSERT_VALUES(ts_reduce_min(ts_tensor_new(TS_BF16, SH(0)), TS_ALL_AXES, false), TS_BF16,
                TS_SCALAR_SHAPE, 0, INFINITY);
  ASSERT_VALUES(ts_reduce_max(ts_tensor_new(TS_BOOL, SH(2, 0)), TS_AXES(1), false), TS_BOOL,
                SH(2), 0, 0, 0);
  ASSERT_VALUES(ts_reduce_min(ts_tensor_new(TS_BOOL, SH(0)), TS_ALL_AXES, false), TS_BOOL,
                TS_SCALAR_SHAPE, 0, 1);
  g_assert_false(ts_failed());

  /* an integer Mean of nothing divides by zero; with an empty output it divides nothing */
  g_assert_null(ts_reduce_mean(e23, TS_AXES(-1), false));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "Mean", "i32[2,0]", "division by zero");
  assert_shape(ts_reduce_mean(ts_tensor_new(TS_I32, SH(0, 0)), TS_AXES(1), false), TS_I32, SH(0));
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static void test_reduce_errors(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = iota_234();
  g_assert_null(ts_reduce_sum(x, TS_AXES(3), false));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "Sum", "axis 3", "f32[2,3,4]");
  g_assert_null(ts_reduce_mean(x, TS_AXES(0, -4), false));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "Mean", "axis -4", "f32[2,3,4]");
  g_assert_null(ts_reduce_max(x, TS_AXES(1, -2), false));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "Max", "axis -2", "repeated", "f32[2,3,4]");
  g_assert_null(ts_reduce_min(x, TS_AXES(2, 2), true));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "Min", "axis 2", "repeated");
  g_assert_null(ts_reduce_prod(ts_scalar_i32(3), TS_AXES(0), false));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "Prod", "axis 0", "i32[]");
  ts_ints too_many = { .n = TS_MAX_RANK + 1 };
  g_assert_null(ts_reduce_sum(x, too_many, false));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "Sum", "9 axes", "f32[2,3,4]");

  bool b[] = { true, false, true };
  ts_tensor *xb = ts_constant(TS_BOOL, SH(3), b);
  g_assert_null(ts_reduce_sum(xb, TS_ALL_AXES, false));
  ASSERT_ERROR(TS_ERR_DTYPE, "Sum", "bool[3]");
  g_assert_null(ts_reduce_prod(xb, TS_ALL_AXES, false));
  ASSERT_ERROR(TS_ERR_DTYPE, "Prod", "bool[3]");
  g_assert_null(ts_reduce_mean(xb, TS_ALL_AXES, false));
  ASSERT_ERROR(TS_ERR_DTYPE, "Mean", "bool[3]");
  ts_scope_end(scope);
}

/* ---- ArgMax ------------------------------------------------------------------------ */

static void test_argmax(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[] = { 1, 5, 5, 7, 2, 7 };
  ts_tensor *x = f32(SH(2, 3), v);
  /* ties pick the first index */
  ASSERT_VALUES(ts_argmax(x, 1), TS_I64, SH(2), 0, 1, 0);
  ASSERT_VALUES(ts_argmax(x, -1), TS_I64, SH(2), 0, 1, 0);
  ASSERT_VALUES(ts_argmax(x, 0), TS_I64, SH(3), 0, 1, 0, 1);
  ASSERT_VALUES(ts_argmax(iota_234(), 1), TS_I64, SH(2, 4), 0, 2, 2, 2, 2, 2, 2, 2, 2);
  int32_t i32[] = { 3, 9, 9, 5, 9, 10, 4, 4, 4, 4, 4, 4 };
  ASSERT_VALUES(ts_argmax(ts_constant(TS_I32, SH(2, 2, 3), i32), 1), TS_I64, SH(2, 3), 0,
                1, 0, 1, 0, 0, 0);
  float withnan[] = { 1, NAN, 3, NAN };
  ASSERT_VALUES(ts_argmax(f32(SH(4), withnan), 0), TS_I64, TS_SCALAR_SHAPE, 0, 1);
  bool b[] = { false, true, true };
  ASSERT_VALUES(ts_argmax(ts_constant(TS_BOOL, SH(3), b), 0), TS_I64, TS_SCALAR_SHAPE, 0, 1);
  uint8_t u8[] = { 0, 0, 0 };
  ASSERT_VALUES(ts_argmax(ts_constant(TS_U8, SH(3), u8), 0), TS_I64, TS_SCALAR_SHAPE, 0, 0);
  assert_shape(ts_argmax(ts_tensor_new(TS_F64, SH(3, 0)), 0), TS_I64, SH(0));
  g_assert_false(ts_failed());

  g_assert_null(ts_argmax(ts_tensor_new(TS_F32, SH(3, 0)), 1));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "ArgMax", "argmax of an empty sequence", "f32[3,0]");
  /* a huge dim next to an empty one: no loop over the huge one, no memory */
  ts_tensor *huge = ts_tensor_new(TS_F32, SH(INT64_C(1) << 40, 0));
  assert_shape(ts_argmax(huge, 0), TS_I64, SH(0));
  g_assert_null(ts_argmax(huge, 1));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "ArgMax", "argmax of an empty sequence");
  ts_tensor *huge3 = ts_tensor_new(TS_F32, SH(INT64_C(1) << 40, 4, 0));
  assert_shape(ts_argmax(huge3, 1), TS_I64, SH(INT64_C(1) << 40, 0));
  /* reductions of an empty tensor whose other dims multiply past int64 */
  ts_tensor *over = ts_tensor_new(TS_F32, SH(INT64_C(1) << 62, 4, 0));
  assert_shape(ts_reduce_sum(over, TS_AXES(0, 1), false), TS_F32, SH(0));
  assert_shape(ts_reduce_mean(over, TS_AXES(0), true), TS_F32, SH(1, 4, 0));
  g_assert_null(ts_argmax(x, 2));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "ArgMax", "axis 2", "f32[2,3]");
  g_assert_null(ts_argmax(x, -3));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "ArgMax", "axis -3", "f32[2,3]");
  g_assert_null(ts_argmax(ts_scalar_f32(1), 0));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "ArgMax", "axis 0", "f32[]");
  ts_scope_end(scope);
}

/* ArgMin as np.argmin (values from NumPy 1.24): ties take the first index,
 * the first NaN wins (NaN counts as the smallest, as ArgMax counts it the
 * largest), -0.0 ties 0.0, every dtype's extremes; the errors name ArgMin. */
static void test_argmin(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[] = { 1, 5, 5, 7, 2, 7 };
  ts_tensor *x = f32(SH(2, 3), v);
  ASSERT_VALUES(ts_argmin(x, 1), TS_I64, SH(2), 0, 0, 1);
  ASSERT_VALUES(ts_argmin(x, -1), TS_I64, SH(2), 0, 0, 1);
  ASSERT_VALUES(ts_argmin(x, 0), TS_I64, SH(3), 0, 0, 1, 0);
  ASSERT_VALUES(ts_argmin(iota_234(), 1), TS_I64, SH(2, 4), 0, 0, 0, 0, 0, 0, 0, 0, 0);
  int32_t i32[] = { 3, 1, 9, 5, 1, 10, 4, -4, 4, -4, 4, 4 };
  ts_tensor *xi = ts_constant(TS_I32, SH(2, 2, 3), i32);
  ASSERT_VALUES(ts_argmin(xi, 1), TS_I64, SH(2, 3), 0, 0, 0, 0, 1, 0, 0);
  ASSERT_VALUES(ts_argmin(xi, 2), TS_I64, SH(2, 2), 0, 1, 1, 1, 0);
  for (ts_dtype dt = TS_F32; dt <= TS_BF16; dt++) {
    if (!ts_dtype_is_float(dt))
      continue;
    float withnan[] = { 2, NAN, -3, NAN };
    ASSERT_VALUES(ts_argmin(ts_cast(f32(SH(4), withnan), dt), 0), TS_I64, TS_SCALAR_SHAPE, 0, 1);
    float infs[] = { INFINITY, INFINITY, -INFINITY, -INFINITY, -0.0f, 0.0f, 0.0f, -0.0f };
    ASSERT_VALUES(ts_argmin(ts_cast(f32(SH(4, 2), infs), dt), 1), TS_I64, SH(4), 0, 0, 0, 0, 0);
  }
  float nan_first[] = { NAN, -1 };
  ASSERT_VALUES(ts_argmin(f32(SH(2), nan_first), 0), TS_I64, TS_SCALAR_SHAPE, 0, 0);
  bool b[] = { true, false, false };
  ASSERT_VALUES(ts_argmin(ts_constant(TS_BOOL, SH(3), b), 0), TS_I64, TS_SCALAR_SHAPE, 0, 1);
  uint8_t u8[] = { 255, 0, 0 };
  ASSERT_VALUES(ts_argmin(ts_constant(TS_U8, SH(3), u8), 0), TS_I64, TS_SCALAR_SHAPE, 0, 1);
  int8_t i8[] = { 0, -128, -128 };
  ASSERT_VALUES(ts_argmin(ts_constant(TS_I8, SH(3), i8), 0), TS_I64, TS_SCALAR_SHAPE, 0, 1);
  uint64_t u64[] = { UINT64_MAX, UINT64_C(1) << 63 };
  ASSERT_VALUES(ts_argmin(ts_constant(TS_U64, SH(2), u64), 0), TS_I64, TS_SCALAR_SHAPE, 0, 1);
  int64_t i64[] = { INT64_MAX, INT64_MIN, INT64_MIN };
  ASSERT_VALUES(ts_argmin(ts_constant(TS_I64, SH(3), i64), 0), TS_I64, TS_SCALAR_SHAPE, 0, 1);
  assert_shape(ts_argmin(ts_tensor_new(TS_F64, SH(3, 0)), 0), TS_I64, SH(0));
  g_assert_false(ts_failed());

  g_assert_null(ts_argmin(ts_tensor_new(TS_F32, SH(3, 0)), 1));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "ArgMin", "attempt to get argmin of an empty sequence", "f32[3,0]");
  g_assert_null(ts_argmin(x, 2));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "ArgMin", "axis 2", "f32[2,3]");
  g_assert_null(ts_argmin(ts_scalar_f32(1), 0));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "ArgMin", "axis 0", "f32[]");
  ts_scope_end(scope);
}

/* Cumsum as tf.math.cumsum, its values from NumPy 1.24 (np.cumsum in the
 * input's dtype; exclusive and reverse through flips and a difference):
 * every axis and flag, integers wrapping, NaN carried on, -0.0 kept as
 * the first sum, 16-bit floats rounded at every step, rank 0 and size 0
 * refused or empty, bool refused. */
static void test_cumsum(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[] = { 1, 2, 3, 4, 5, 6 };
  ts_tensor *x = f32(SH(2, 3), v);
  ASSERT_VALUES(ts_cumsum(x, 1, false, false), TS_F32, SH(2, 3), 0, 1, 3, 6, 4, 9, 15);
  ASSERT_VALUES(ts_cumsum(x, -1, false, false), TS_F32, SH(2, 3), 0, 1, 3, 6, 4, 9, 15);
  ASSERT_VALUES(ts_cumsum(x, 0, false, false), TS_F32, SH(2, 3), 0, 1, 2, 3, 5, 7, 9);
  ASSERT_VALUES(ts_cumsum(x, 1, true, false), TS_F32, SH(2, 3), 0, 0, 1, 3, 0, 4, 9);
  ASSERT_VALUES(ts_cumsum(x, 1, false, true), TS_F32, SH(2, 3), 0, 6, 5, 3, 15, 11, 6);
  ASSERT_VALUES(ts_cumsum(x, 1, true, true), TS_F32, SH(2, 3), 0, 5, 3, 0, 11, 6, 0);
  ASSERT_VALUES(ts_cumsum(x, 0, true, true), TS_F32, SH(2, 3), 0, 4, 5, 6, 0, 0, 0);
  ASSERT_VALUES(ts_cumsum(iota_234(), 1, false, false), TS_F32, SH(2, 3, 4), 0,
                0, 1, 2, 3, 4, 6, 8, 10, 12, 15, 18, 21,
                12, 13, 14, 15, 28, 30, 32, 34, 48, 51, 54, 57);
  int8_t i8[] = { 100, 100, 100 };
  ASSERT_VALUES(ts_cumsum(ts_constant(TS_I8, SH(3), i8), 0, false, false), TS_I8, SH(3), 0, 100, -56, 44);
  int32_t i32[] = { INT32_MAX, 1 };
  ASSERT_VALUES(ts_cumsum(ts_constant(TS_I32, SH(2), i32), 0, false, false), TS_I32, SH(2), 0,
                INT32_MAX, INT32_MIN);
  uint8_t u8[] = { 200, 100 };
  ASSERT_VALUES(ts_cumsum(ts_constant(TS_U8, SH(2), u8), 0, false, false), TS_U8, SH(2), 0, 200, 44);
  int64_t i64[] = { INT64_MIN, -1 };
  ts_tensor *w = ts_cumsum(ts_constant(TS_I64, SH(2), i64), 0, false, false);
  g_assert_cmpint(ts_tensor_get_i64(w, 1), ==, INT64_MAX);
  double nan_at[] = { 1, NAN, 2 };
  ASSERT_VALUES(ts_cumsum(ts_constant(TS_F64, SH(3), nan_at), 0, false, false), TS_F64, SH(3), 0, 1, NAN, NAN);
  double zeros[] = { -0.0, -0.0 };
  ts_tensor *z = ts_cumsum(ts_constant(TS_F64, SH(2), zeros), 0, false, false);
  g_assert_true(signbit(ts_tensor_get_f64(z, 0)) && signbit(ts_tensor_get_f64(z, 1)));
  /* float16 rounds every sum: 2048 + 1 is 2048 again */
  float h[] = { 2048, 1, 1, 1 };
  ASSERT_VALUES(ts_cumsum(ts_cast(f32(SH(4), h), TS_F16), 0, false, false), TS_F16, SH(4), 0, 2048, 2048,
                2048, 2048);
  float big[] = { 1e8f, 1, 1, 1, 1 };
  ASSERT_VALUES(ts_cumsum(f32(SH(5), big), 0, false, false), TS_F32, SH(5), 0, 1e8, 1e8, 1e8, 1e8, 1e8);
  assert_shape(ts_cumsum(ts_tensor_new(TS_F32, SH(3, 0)), 1, true, true), TS_F32, SH(3, 0));
  assert_shape(ts_cumsum(ts_tensor_new(TS_I32, SH(0, 2)), 0, false, false), TS_I32, SH(0, 2));
  g_assert_false(ts_failed());

  g_assert_null(ts_cumsum(ts_scalar_f32(1), 0, false, false));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "Cumsum", "axis 0", "f32[]");
  g_assert_null(ts_cumsum(x, 2, false, false));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "Cumsum", "axis 2", "f32[2,3]");
  bool b[] = { true, false };
  g_assert_null(ts_cumsum(ts_constant(TS_BOOL, SH(2), b), 0, false, false));
  ASSERT_ERROR(TS_ERR_DTYPE, "Cumsum", "bool");
  ts_scope_end(scope);
}

/* Any and All as tf.reduce_any and tf.reduce_all, by hand: each axis,
 * several, all, keepdims; over nothing false and true; non-bool refused
 * (TensorFlow takes bool alone), bad and repeated axes refused. */
static void test_any_all(void)
{
  ts_scope *scope = ts_scope_begin();
  bool v[] = { true, false, true, false, false, false }, w[] = { true, true, true, true, false, true };
  ts_tensor *b = ts_constant(TS_BOOL, SH(2, 3), v), *c = ts_constant(TS_BOOL, SH(2, 3), w);
  ASSERT_VALUES(ts_reduce_any(b, TS_AXES(1), false), TS_BOOL, SH(2), 0, 1, 0);
  ASSERT_VALUES(ts_reduce_all(b, TS_AXES(1), false), TS_BOOL, SH(2), 0, 0, 0);
  ASSERT_VALUES(ts_reduce_any(b, TS_AXES(0), false), TS_BOOL, SH(3), 0, 1, 0, 1);
  ASSERT_VALUES(ts_reduce_all(c, TS_AXES(-1), true), TS_BOOL, SH(2, 1), 0, 1, 0);
  ASSERT_VALUES(ts_reduce_all(c, TS_AXES(0), false), TS_BOOL, SH(3), 0, 1, 0, 1);
  ASSERT_VALUES(ts_reduce_any(b, TS_AXES(0, 1), false), TS_BOOL, TS_SCALAR_SHAPE, 0, 1);
  ASSERT_VALUES(ts_reduce_all(c, TS_ALL_AXES, true), TS_BOOL, SH(1, 1), 0, 0);
  ASSERT_VALUES(ts_reduce_all(ts_logical_not(ts_logical_and(b, ts_logical_not(b))), TS_ALL_AXES, false), TS_BOOL,
                TS_SCALAR_SHAPE, 0, 1);
  ts_tensor *none = ts_tensor_new(TS_BOOL, SH(2, 0));
  ASSERT_VALUES(ts_reduce_any(none, TS_AXES(1), false), TS_BOOL, SH(2), 0, 0, 0);
  ASSERT_VALUES(ts_reduce_all(none, TS_AXES(1), false), TS_BOOL, SH(2), 0, 1, 1);
  ASSERT_VALUES(ts_reduce_all(none, TS_ALL_AXES, false), TS_BOOL, TS_SCALAR_SHAPE, 0, 1);
  assert_shape(ts_reduce_any(none, TS_AXES(0), false), TS_BOOL, SH(0));
  g_assert_false(ts_failed());

  float f[] = { 1, 0 };
  g_assert_null(ts_reduce_any(f32(SH(2), f), TS_ALL_AXES, false));
  ASSERT_ERROR(TS_ERR_DTYPE, "Any", "f32[2]", "takes bool");
  g_assert_null(ts_reduce_all(b, TS_AXES(2), false));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "All", "axis 2", "bool[2,3]");
  g_assert_null(ts_reduce_all(b, TS_AXES(1, -1), false));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "All", "repeated");
  ts_scope_end(scope);
}

/* Cumprod as tf.math.cumprod, by hand: every flag (exclusive starts from
 * 1), integers wrapping (uint16 computed unsigned: 65535 * 65535 wraps to
 * 1), float16 rounded at every step and overflowing to inf, NaN and zeros
 * carried on, size 0, bool refused. */
static void test_cumprod(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[] = { 1, 2, 3, 4, 5, 6 };
  ts_tensor *x = f32(SH(2, 3), v);
  ASSERT_VALUES(ts_cumprod(x, 1, false, false), TS_F32, SH(2, 3), 0, 1, 2, 6, 4, 20, 120);
  ASSERT_VALUES(ts_cumprod(x, 1, true, false), TS_F32, SH(2, 3), 0, 1, 1, 2, 1, 4, 20);
  ASSERT_VALUES(ts_cumprod(x, -1, false, true), TS_F32, SH(2, 3), 0, 6, 6, 3, 120, 30, 6);
  ASSERT_VALUES(ts_cumprod(x, 1, true, true), TS_F32, SH(2, 3), 0, 6, 3, 1, 30, 6, 1);
  ASSERT_VALUES(ts_cumprod(x, 0, false, false), TS_F32, SH(2, 3), 0, 1, 2, 3, 4, 10, 18);
  ASSERT_VALUES(ts_cumprod(x, 0, true, true), TS_F32, SH(2, 3), 0, 4, 5, 6, 1, 1, 1);
  int8_t i8[] = { 100, 3, -1 }; /* 300 wraps to 44, then -44 */
  ASSERT_VALUES(ts_cumprod(ts_constant(TS_I8, SH(3), i8), 0, false, false), TS_I8, SH(3), 0, 100, 44, -44);
  uint16_t u16[] = { 65535, 65535 };
  ASSERT_VALUES(ts_cumprod(ts_constant(TS_U16, SH(2), u16), 0, false, false), TS_U16, SH(2), 0, 65535, 1);
  int32_t i32[] = { INT32_MAX, 2 };
  ASSERT_VALUES(ts_cumprod(ts_constant(TS_I32, SH(2), i32), 0, false, false), TS_I32, SH(2), 0, INT32_MAX, -2);
  float h[] = { 1.1f, 1.1f, 300, 300 }; /* 1.099609375 squared rounds to 1.208984375 */
  ASSERT_VALUES(ts_cumprod(ts_cast(f32(SH(4), h), TS_F16), 0, false, false), TS_F16, SH(4), 0, 1.099609375,
                1.208984375, 362.75, INFINITY);
  float b16[] = { 3, 0.5f };
  ASSERT_VALUES(ts_cumprod(ts_cast(f32(SH(2), b16), TS_BF16), 0, true, false), TS_BF16, SH(2), 0, 1, 3);
  double holes[] = { 2, NAN, 0, 2, 0, 5 };
  ASSERT_VALUES(ts_cumprod(ts_constant(TS_F64, SH(2, 3), holes), 1, false, false), TS_F64, SH(2, 3), 0, 2, NAN,
                NAN, 2, 0, 0);
  ASSERT_VALUES(ts_cumprod(ts_constant(TS_F64, SH(2, 3), holes), 1, true, false), TS_F64, SH(2, 3), 0, 1, 2, NAN,
                1, 2, 0);
  assert_shape(ts_cumprod(ts_tensor_new(TS_F32, SH(3, 0)), 1, true, true), TS_F32, SH(3, 0));
  g_assert_false(ts_failed());

  g_assert_null(ts_cumprod(x, -3, false, false));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "Cumprod", "axis -3", "f32[2,3]");
  bool b[] = { true, false };
  g_assert_null(ts_cumprod(ts_constant(TS_BOOL, SH(2), b), 0, false, false));
  ASSERT_ERROR(TS_ERR_DTYPE, "Cumprod", "bool");
  ts_scope_end(scope);
}

/* The gradient of sum(cumprod(x)) as TensorFlow's CumprodGrad gives it:
 * cumsum(y * g) the other way, over x, 0 where x is 0 (div_no_nan).
 * x = 2, 3, 4: 1 + 3 + 12 = 16, 2 + 8 = 10, 6 (exclusive: 4, 2, 0);
 * x = 2, 0, 4: 1, then 0 at the zero and after it, as TensorFlow (the
 * true gradient there is 10: its own gap). */
static void test_cumprod_gradient(void)
{
  ts_scope *scope = ts_scope_begin();
  const double cases[][3] = { { 2, 3, 4 }, { 2, 0, 4 } };
  const double want[][2][3] = { { { 16, 10, 6 }, { 4, 2, 0 } }, { { 1, 0, 0 }, { 1, 0, 0 } } };
  for (int k = 0; k < 2; k++)
    for (int exclusive = 0; exclusive < 2; exclusive++) {
      ts_tensor *x = ts_constant(TS_F64, SH(3), cases[k]), *g;
      ts_tape *tape = ts_tape_new(false);
      ts_tape_watch(tape, x);
      ts_tensor *y = ts_reduce_sum(ts_cumprod(x, 0, exclusive, false), TS_ALL_AXES, false);
      g_assert_true(ts_tape_gradient(tape, y, &x, 1, &g, TS_UNCONNECTED_NONE));
      ts_tape_free(tape);
      ASSERT_VALUES(g, TS_F64, SH(3), 0, want[k][exclusive][0], want[k][exclusive][1], want[k][exclusive][2]);
    }
  ts_scope_end(scope);
}

/* TopKV2 as tf.math.top_k, worked out by hand: the k largest of each row
 * in order, equal values the lower index first, NaN above every number
 * (TensorFlow leaves its place to std::sort: ops/sort.c), -0.0 equal to
 * 0.0; integers compared exactly at their extremes; k = 0, empty rows;
 * k past the last dim, k < 0, rank 0 and bool refused. */
static void test_top_k(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[] = { 1, 3, 2, 3, -1, NAN, 0, -0.0f, NAN, 5 };
  ts_tensor *x = f32(SH(2, 5), v), *values, *indices;
  g_assert_true(ts_top_k(x, 3, &values, &indices));
  ASSERT_VALUES(values, TS_F32, SH(2, 3), 0, 3, 3, 2, NAN, NAN, 5);
  ASSERT_VALUES(indices, TS_I32, SH(2, 3), 0, 1, 3, 2, 0, 3, 4);
  g_assert_true(ts_top_k(x, 5, &values, &indices));
  ASSERT_VALUES(values, TS_F32, SH(2, 5), 0, 3, 3, 2, 1, -1, NAN, NAN, 5, 0, 0);
  ASSERT_VALUES(indices, TS_I32, SH(2, 5), 0, 1, 3, 2, 0, 4, 0, 3, 4, 1, 2);
  g_assert_true(signbit(ts_tensor_get_f64(values, 9)) && !signbit(ts_tensor_get_f64(values, 8)));
  g_assert_true(ts_top_k(x, 1, &values, &indices));
  ASSERT_VALUES(indices, TS_I32, SH(2, 1), 0, 1, 0);
  g_assert_true(ts_top_k(x, 0, &values, &indices));
  assert_shape(values, TS_F32, SH(2, 0));
  assert_shape(indices, TS_I32, SH(2, 0));
  g_assert_true(ts_top_k(ts_tensor_new(TS_F32, SH(0, 3)), 2, &values, &indices));
  assert_shape(values, TS_F32, SH(0, 2));
  g_assert_true(ts_top_k(ts_tensor_new(TS_I64, SH(2, 0)), 0, &values, &indices));
  assert_shape(indices, TS_I32, SH(2, 0));

  int32_t i32[] = { INT32_MIN, 5, INT32_MAX, 5 };
  g_assert_true(ts_top_k(ts_constant(TS_I32, SH(4), i32), 3, &values, &indices));
  ASSERT_VALUES(values, TS_I32, SH(3), 0, INT32_MAX, 5, 5);
  ASSERT_VALUES(indices, TS_I32, SH(3), 0, 2, 1, 3);
  int64_t i64[] = { INT64_MIN, -1, INT64_MAX, 0 };
  g_assert_true(ts_top_k(ts_constant(TS_I64, SH(4), i64), 4, &values, &indices));
  g_assert_cmpint(ts_tensor_get_i64(values, 0), ==, INT64_MAX);
  g_assert_cmpint(ts_tensor_get_i64(values, 3), ==, INT64_MIN);
  ASSERT_VALUES(indices, TS_I32, SH(4), 0, 2, 3, 1, 0);
  uint8_t u8[] = { 200, 7, 255 };
  g_assert_true(ts_top_k(ts_constant(TS_U8, SH(3), u8), 2, &values, &indices));
  ASSERT_VALUES(values, TS_U8, SH(2), 0, 255, 200);
  float h[] = { 1, 2.0004f, 2 }; /* 2.0004 is 2 in float16: a tie */
  g_assert_true(ts_top_k(ts_cast(f32(SH(3), h), TS_F16), 2, &values, &indices));
  ASSERT_VALUES(values, TS_F16, SH(2), 0, 2, 2);
  ASSERT_VALUES(indices, TS_I32, SH(2), 0, 1, 2);
  g_assert_false(ts_failed());

  g_assert_false(ts_top_k(x, 6, &values, &indices));
  g_assert_null(values);
  g_assert_null(indices);
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "TopKV2", "k 6", "last dim 5", "f32[2,5]");
  g_assert_false(ts_top_k(x, -1, &values, &indices));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "TopKV2", "k must be at least 0, got -1");
  g_assert_false(ts_top_k(ts_scalar_f32(1), 0, &values, &indices));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "TopKV2", "f32[]", "at least 1-D");
  bool b[] = { true, false };
  g_assert_false(ts_top_k(ts_constant(TS_BOOL, SH(2), b), 1, NULL, NULL));
  ASSERT_ERROR(TS_ERR_DTYPE, "TopKV2", "bool");
  ts_scope_end(scope);
}

/* Sort and ArgSort as tf.sort and tf.argsort, by hand: along either axis,
 * both directions, stable (equal values keep their order both ways), NaN
 * last ascending and first descending, -0.0 and 0.0 equal (their signs
 * kept), unsigned and 16-bit dtypes, empty, errors. */
static void test_sort(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[] = { 3, NAN, -1, 2, 2, 0 };
  ts_tensor *x = f32(SH(2, 3), v);
  ASSERT_VALUES(ts_sort(x, 1, false), TS_F32, SH(2, 3), 0, -1, 3, NAN, 0, 2, 2);
  ASSERT_VALUES(ts_argsort(x, -1, false), TS_I32, SH(2, 3), 0, 2, 0, 1, 2, 0, 1);
  ASSERT_VALUES(ts_sort(x, 1, true), TS_F32, SH(2, 3), 0, NAN, 3, -1, 2, 2, 0);
  ASSERT_VALUES(ts_argsort(x, 1, true), TS_I32, SH(2, 3), 0, 1, 0, 2, 0, 1, 2);
  ASSERT_VALUES(ts_sort(x, 0, false), TS_F32, SH(2, 3), 0, 2, 2, -1, 3, NAN, 0);
  ASSERT_VALUES(ts_argsort(x, 0, false), TS_I32, SH(2, 3), 0, 1, 1, 0, 0, 0, 1);
  ASSERT_VALUES(ts_sort(x, -2, true), TS_F32, SH(2, 3), 0, 3, NAN, 0, 2, 2, -1);
  ASSERT_VALUES(ts_argsort(x, 0, true), TS_I32, SH(2, 3), 0, 0, 0, 1, 1, 1, 0);
  int32_t ties[] = { 5, 1, 5, 1 };
  ts_tensor *t = ts_constant(TS_I32, SH(4), ties);
  ASSERT_VALUES(ts_argsort(t, 0, false), TS_I32, SH(4), 0, 1, 3, 0, 2);
  ASSERT_VALUES(ts_argsort(t, 0, true), TS_I32, SH(4), 0, 0, 2, 1, 3);
  float zeros[] = { 0.0f, -0.0f, -0.0f, 0.0f };
  ts_tensor *z = ts_sort(f32(SH(4), zeros), 0, false);
  ASSERT_VALUES(ts_argsort(f32(SH(4), zeros), 0, true), TS_I32, SH(4), 0, 0, 1, 2, 3);
  g_assert_true(!signbit(ts_tensor_get_f64(z, 0)) && signbit(ts_tensor_get_f64(z, 1)));
  uint8_t u8[] = { 255, 0, 128 };
  ASSERT_VALUES(ts_sort(ts_constant(TS_U8, SH(3), u8), 0, false), TS_U8, SH(3), 0, 0, 128, 255);
  int64_t i64[] = { INT64_MAX, INT64_MIN, 0 };
  ASSERT_VALUES(ts_argsort(ts_constant(TS_I64, SH(3), i64), 0, false), TS_I32, SH(3), 0, 1, 2, 0);
  float h[] = { 0.5f, -INFINITY, NAN, INFINITY };
  ASSERT_VALUES(ts_sort(ts_cast(f32(SH(4), h), TS_BF16), 0, false), TS_BF16, SH(4), 0, -INFINITY, 0.5,
                INFINITY, NAN);
  assert_shape(ts_sort(ts_tensor_new(TS_F32, SH(0)), 0, false), TS_F32, SH(0));
  assert_shape(ts_argsort(ts_tensor_new(TS_F64, SH(3, 0)), 0, true), TS_I32, SH(3, 0));
  g_assert_false(ts_failed());

  g_assert_null(ts_sort(x, 2, false));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "Sort", "axis 2", "f32[2,3]");
  g_assert_null(ts_argsort(ts_scalar_f32(1), 0, false));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "ArgSort", "f32[]", "at least 1-D");
  bool b[] = { true, false };
  g_assert_null(ts_sort(ts_constant(TS_BOOL, SH(2), b), 0, false));
  ASSERT_ERROR(TS_ERR_DTYPE, "Sort", "bool");
  ts_scope_end(scope);
}

/* The gradients of TopKV2 and Sort, by hand: each value's weight back at
 * the index it came from, nothing to the elements TopKV2 left out, an
 * infinite weight at its own place only (TensorFlow's scatter). */
static void test_sort_gradients(void)
{
  ts_scope *scope = ts_scope_begin();
  double v[] = { 1, 3, 2, 3 }, w2[] = { 10, 100 }, w4[] = { 1, 10, 100, 1000 }, inf[] = { INFINITY, 1 };
  ts_tensor *x = ts_constant(TS_F64, SH(4), v), *g, *values;
  ts_tape *tape = ts_tape_new(true);
  ts_tape_watch(tape, x);
  g_assert_true(ts_top_k(x, 2, &values, NULL)); /* 3 (1), 3 (3) */
  ts_tensor *top = ts_reduce_sum(ts_mul(values, ts_constant(TS_F64, SH(2), w2)), TS_ALL_AXES, false);
  ts_tensor *top_inf = ts_reduce_sum(ts_mul(values, ts_constant(TS_F64, SH(2), inf)), TS_ALL_AXES, false);
  /* descending: 3 (1), 3 (3), 2 (2), 1 (0) */
  ts_tensor *sorted = ts_reduce_sum(ts_mul(ts_sort(x, 0, true), ts_constant(TS_F64, SH(4), w4)), TS_ALL_AXES, false);
  g_assert_true(ts_tape_gradient(tape, top, &x, 1, &g, TS_UNCONNECTED_NONE));
  ASSERT_VALUES(g, TS_F64, SH(4), 0, 0, 10, 0, 100);
  g_assert_true(ts_tape_gradient(tape, top_inf, &x, 1, &g, TS_UNCONNECTED_NONE));
  ASSERT_VALUES(g, TS_F64, SH(4), 0, 0, INFINITY, 0, 1);
  g_assert_true(ts_tape_gradient(tape, sorted, &x, 1, &g, TS_UNCONNECTED_NONE));
  ASSERT_VALUES(g, TS_F64, SH(4), 0, 1000, 1, 100, 10);
  ts_tape_free(tape);
  ts_scope_end(scope);
}

/* ---- Softmax family ------------------------------------------------------------------ */

static void test_softmax(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[] = { 0, (float)G_LN2, (float)log(3), 1000, 1001, 1002 };
  ts_tensor *x = f32(SH(2, 3), v);
  ts_tensor *s = ts_softmax(x);
  double e = exp(1), z = 1 + e + e * e;
  ASSERT_VALUES(s, TS_F32, SH(2, 3), 1e-6, 1.0 / 6, 1.0 / 3, 0.5, 1 / z, e / z, e * e / z);
  ts_tensor *rows = ts_reduce_sum(s, TS_AXES(-1), false);
  ASSERT_VALUES(rows, TS_F32, SH(2), 1e-6, 1, 1);

  /* large logits do not overflow, in f64 either */
  double big[] = { 1e300, 1e300, -1e300, 710, 709, 0 };
  ts_tensor *sb = ts_softmax(ts_constant(TS_F64, SH(2, 3), big));
  double d = 1 + exp(-1) + exp(-710);
  ASSERT_VALUES(sb, TS_F64, SH(2, 3), 1e-12, 0.5, 0.5, 0, 1 / d, exp(-1) / d, exp(-710) / d);

  /* over the last axis of a rank-3 tensor */
  float r3[] = { 1, 1, 2, 2, 3, 3, 0, 100 };
  ASSERT_VALUES(ts_softmax(f32(SH(2, 2, 2), r3)), TS_F32, SH(2, 2, 2), 1e-6,
                0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0, 1);
  assert_shape(ts_softmax(ts_tensor_new(TS_F32, SH(2, 0))), TS_F32, SH(2, 0));
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* float16 and bfloat16 logits, as TensorFlow takes them: computed in float
 * and rounded once, so each value is NumPy's (float64 softmax rounded to
 * the dtype; ml_dtypes' rounding for bfloat16) to the last bit. */
static void test_softmax_half(void)
{
  ts_scope *scope = ts_scope_begin();
  /* f16 [[0, ln 2, ln 3], [60000, 0, -60000], [-inf, 0, 1]] as rounded */
  double h[] = { 0, 0.69287109375, 1.0986328125, 60000, 0, -60000, -INFINITY, 0, 1 };
  ts_tensor *xh = ts_cast(ts_constant(TS_F64, SH(3, 3), h), TS_F16);
  ASSERT_VALUES(ts_softmax(xh), TS_F16, SH(3, 3), 0,
                0.1666259765625, 0.333251953125, 0.5, 1, 0, 0, 0, 0.26904296875, 0.73095703125);
  ASSERT_VALUES(ts_log_softmax(xh), TS_F16, SH(3, 3), 0,
                -1.7919921875, -1.0986328125, -0.69287109375, 0, -60000, -INFINITY,
                -INFINITY, -1.3134765625, -0.313232421875);
  ASSERT_VALUES(ts_sparse_softmax_cross_entropy(ts_constant(TS_I32, SH(3), (int32_t[]){ 2, 0, 0 }), xh),
                TS_F16, SH(3), 0, 0.69287109375, 0, INFINITY);

  /* bf16 [[0, ln 2, ln 3], [1e30, 0, -1e30]] as rounded */
  double b[] = { 0, 0.69140625, 1.1015625, 1.0002555517425873e+30, 0, -1.0002555517425873e+30 };
  ts_tensor *xb = ts_cast(ts_constant(TS_F64, SH(2, 3), b), TS_BF16);
  ASSERT_VALUES(ts_softmax(xb), TS_BF16, SH(2, 3), 0, 0.1669921875, 0.33203125, 0.5, 1, 0, 0);
  ASSERT_VALUES(ts_log_softmax(xb), TS_BF16, SH(2, 3), 0, -1.7890625, -1.1015625, -0.69140625,
                0, -1.0002555517425873e+30, -2.0005111034851745e+30);
  ASSERT_VALUES(ts_sparse_softmax_cross_entropy(ts_constant(TS_I64, SH(2), (int64_t[]){ 2, 1 }), xb),
                TS_BF16, SH(2), 0, 0.69140625, 1.0002555517425873e+30);

  /* a label out of range is still an error */
  g_assert_null(ts_sparse_softmax_cross_entropy(ts_constant(TS_I32, SH(3), (int32_t[]){ 0, 3, 0 }), xh));
  ASSERT_ERROR(TS_ERR_OUT_OF_RANGE, "SparseSoftmaxCrossEntropyWithLogits", "label value of 3");
  ts_scope_end(scope);
}

/* Rows enough to split across the pool: the same bits at 1 and 2 threads,
 * softmax and log-softmax, rows long and short. */
/* Rows reduced several at once (ops/reduce.c's rows()) give each row the
 * bits it has reduced alone: every kind on [11, 67] (a group of 8 rows and
 * 3 left over) of values over 40 binades, against each row as [1, 67]. */
static void test_rows_at_once(void)
{
  typedef ts_tensor *(*reduce_fn)(ts_loc, ts_tensor *, ts_ints, bool);
  static const reduce_fn kinds[] = { ts_reduce_sum_at, ts_reduce_mean_at, ts_reduce_max_at,
                                     ts_reduce_min_at, ts_reduce_prod_at };
  static const ts_dtype dtypes[] = { TS_F32, TS_F64, TS_F16, TS_I32 };
  ts_scope *scope = ts_scope_begin();
  ts_tensor *wide = ts_mul(ts_exp(ts_random_uniform(TS_F64, SH(11, 67), -14, 14, 21)),
                           ts_random_uniform(TS_F64, SH(11, 67), -1, 1, 22));
  for (size_t d = 0; d < G_N_ELEMENTS(dtypes); d++) {
    ts_tensor *x = ts_cast(dtypes[d] == TS_I32 ? ts_mul(wide, ts_scalar_f64(100)) : wide, dtypes[d]);
    for (size_t k = 0; k < G_N_ELEMENTS(kinds); k++) {
      ts_tensor *all = kinds[k](TS_HERE, x, TS_AXES(-1), false);
      g_assert_nonnull(all);
      size_t es = ts_dtype_size(dtypes[d]);
      for (int64_t r = 0; r < 11; r++) {
        ts_tensor *one = kinds[k](TS_HERE, ts_slice(x, TS_INTS(r, 0), TS_INTS(1, -1)), TS_AXES(-1), false);
        g_assert_nonnull(one);
        g_assert_cmpmem((const char *)ts_tensor_data(all) + r * es, es, ts_tensor_data(one), es);
      }
    }
  }
  ts_scope_end(scope);
}

static void test_softmax_threads(void)
{
  int threads = ts_get_threads();
  static const int64_t shapes[][2] = { { 512, 32 }, { 64, 1000 }, { 5000, 3 } };
  for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++)
    for (int log_out = 0; log_out < 2; log_out++) {
      ts_scope *scope = ts_scope_begin();
      ts_tensor *x = ts_random_uniform(TS_F32, TS_SHAPE(shapes[i][0], shapes[i][1]), -8, 8, 5 + i);
      ts_tensor *y[2];
      for (int t = 0; t < 2; t++) {
        g_assert_true(ts_set_threads(t + 1));
        y[t] = log_out ? ts_log_softmax(x) : ts_softmax(x);
        g_assert_nonnull(y[t]);
      }
      g_assert_true(ts_set_threads(threads));
      g_assert_cmpint(memcmp(ts_tensor_data(y[0]), ts_tensor_data(y[1]),
                             (size_t)ts_tensor_size(x) * sizeof(float)), ==, 0);
      ts_scope_end(scope);
    }
}

static void test_log_softmax(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[24];
  for (int i = 0; i < 24; i++)
    v[i] = (float)((i * 7) % 11) - 4.5f;
  ts_tensor *x = f32(SH(2, 3, 4), v);
  ts_tensor *ls = ts_log_softmax(x), *s = ts_softmax(x);
  assert_shape(ls, TS_F32, SH(2, 3, 4));
  for (int i = 0; i < 24; i++)
    g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(ls, i), log(ts_tensor_get_f64(s, i)), 1e-5);

  /* where softmax underflows to 0, log_softmax stays finite */
  float wide[] = { 1000, 0 };
  ASSERT_VALUES(ts_log_softmax(f32(SH(2), wide)), TS_F32, SH(2), 1e-3, 0, -1000);
  double f64[] = { 0, G_LN2, log(3) };
  ASSERT_VALUES(ts_log_softmax(ts_constant(TS_F64, SH(1, 3), f64)), TS_F64, SH(1, 3), 1e-12,
                -log(6), -log(3), -G_LN2);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static void test_softmax_errors(void)
{
  ts_scope *scope = ts_scope_begin();
  int32_t i32[] = { 1, 2, 3 };
  ts_tensor *xi = ts_constant(TS_I32, SH(3), i32);
  g_assert_null(ts_softmax(xi));
  ASSERT_ERROR(TS_ERR_DTYPE, "Softmax", "i32[3]");
  g_assert_null(ts_log_softmax(xi));
  ASSERT_ERROR(TS_ERR_DTYPE, "LogSoftmax", "i32[3]");
  g_assert_null(ts_log_softmax(ts_scalar_f64(1)));
  ASSERT_ERROR(TS_ERR_SHAPE, "LogSoftmax", "f64[]");
  ts_scope_end(scope);
}

static const char XENT[] = "SparseSoftmaxCrossEntropyWithLogits";

static void test_xent(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[] = { 0, (float)G_LN2, (float)log(3), 1000, 1000, 1000 };
  ts_tensor *logits = f32(SH(2, 3), v);
  int32_t l32[] = { 2, 0 };
  ts_tensor *loss = ts_sparse_softmax_cross_entropy(ts_constant(TS_I32, SH(2), l32), logits);
  ASSERT_VALUES(loss, TS_F32, SH(2), 1e-6, G_LN2, log(3));
  int64_t l64[] = { 0, 1 };
  ASSERT_VALUES(ts_sparse_softmax_cross_entropy(ts_constant(TS_I64, SH(2), l64), logits),
                TS_F32, SH(2), 1e-5, log(6), log(3));

  /* f64 logits with two leading dims */
  double d[] = { 0, 0, 1, 0, 0, 1, -1e300, 0 };
  int64_t ld[] = { 0, 1, 0, 0 };
  ts_tensor *l4 = ts_sparse_softmax_cross_entropy(ts_constant(TS_I64, SH(2, 2), ld),
                                                   ts_constant(TS_F64, SH(2, 2, 2), d));
  ASSERT_VALUES(l4, TS_F64, SH(2, 2), 1e-12, G_LN2, log1p(exp(-1)) + 1,
                log1p(exp(-1)) + 1, 1e300);
  assert_shape(ts_sparse_softmax_cross_entropy(ts_tensor_new(TS_I32, SH(0)),
                                               ts_tensor_new(TS_F32, SH(0, 3))),
               TS_F32, SH(0));
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static void test_xent_errors(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[] = { 1, 2, 3, 4, 5, 6 };
  ts_tensor *logits = f32(SH(2, 3), v);
  int32_t bad[] = { 0, 7 };
  g_assert_null(ts_sparse_softmax_cross_entropy(ts_constant(TS_I32, SH(2), bad), logits));
  ASSERT_ERROR(TS_ERR_OUT_OF_RANGE, XENT,
               "Received a label value of 7 which is outside the valid range of [0, 3)");
  int64_t neg[] = { -1, 0 };
  g_assert_null(ts_sparse_softmax_cross_entropy(ts_constant(TS_I64, SH(2), neg), logits));
  ASSERT_ERROR(TS_ERR_OUT_OF_RANGE, XENT, "label value of -1", "[0, 3)");
  g_assert_null(ts_sparse_softmax_cross_entropy(ts_tensor_new(TS_I32, SH(1)),
                                                ts_tensor_new(TS_F32, SH(1, 0))));
  ASSERT_ERROR(TS_ERR_OUT_OF_RANGE, XENT, "label value of 0", "[0, 0)");

  float fl[] = { 0, 1 };
  g_assert_null(ts_sparse_softmax_cross_entropy(f32(SH(2), fl), logits));
  ASSERT_ERROR(TS_ERR_DTYPE, XENT, "labels", "f32[2]");
  /* labels are not promoted: u8 is refused, not widened */
  uint8_t u8[] = { 0, 1 };
  g_assert_null(ts_sparse_softmax_cross_entropy(ts_constant(TS_U8, SH(2), u8), logits));
  ASSERT_ERROR(TS_ERR_DTYPE, XENT, "labels", "u8[2]");
  int32_t ok[] = { 0, 1, 2 };
  ts_tensor *labels3 = ts_constant(TS_I32, SH(3), ok);
  g_assert_null(ts_sparse_softmax_cross_entropy(labels3, ts_tensor_new(TS_I32, SH(3, 2))));
  ASSERT_ERROR(TS_ERR_DTYPE, XENT, "logits", "i32[3,2]");
  g_assert_null(ts_sparse_softmax_cross_entropy(labels3, logits));
  ASSERT_ERROR(TS_ERR_SHAPE, XENT, "i32[3]", "f32[2,3]");
  g_assert_null(ts_sparse_softmax_cross_entropy(labels3, ts_tensor_new(TS_F32, SH(3))));
  ASSERT_ERROR(TS_ERR_SHAPE, XENT, "i32[3]", "f32[3]");
  g_assert_null(ts_sparse_softmax_cross_entropy(ts_scalar_i32(0), ts_scalar_f32(0)));
  ASSERT_ERROR(TS_ERR_SHAPE, XENT, "f32[]");
  ts_scope_end(scope);
}

/* ---- Dropout --------------------------------------------------------------------- */

/* ts_dropout(x, 0.25, training, 7) as a function of x. */
static ts_tensor *dropout_fn(ts_call *c)
{
  return ts_dropout(ts_arg(c, 0), 0.25, ts_arg_int(c, 1) != 0, 7);
}

static int count_nodes(const ts_graph *g, ts_op op)
{
  int n = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    n += ts_node_op(ts_graph_node(g, i)) == op;
  return n;
}

static void test_dropout_inactive(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[] = { 1, -2, 3.5f, 0 };
  ts_tensor *x = f32(SH(2, 2), v);
  ASSERT_VALUES(ts_dropout(x, 0.2, false, 1), TS_F32, SH(2, 2), 0, 1, -2, 3.5, 0);
  /* rate 0 keeps everything, training or not */
  ASSERT_VALUES(ts_dropout(x, 0, true, 1), TS_F32, SH(2, 2), 0, 1, -2, 3.5, 0);

  /* traced at inference: one Identity, no random numbers (as Keras' tf.identity) */
  ts_function *fn = ts_function_new("dropout", dropout_fn, "x, training");
  ts_tensor *out = ts_function_call(fn, (ts_value[]){ TS_TENSOR_VALUE(x), TS_INT_VALUE(0) }, 2);
  ASSERT_VALUES(out, TS_F32, SH(2, 2), 0, 1, -2, 3.5, 0);
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
  g_assert_cmpint(count_nodes(g, TS_OP_IDENTITY), ==, 1);
  g_assert_cmpint(count_nodes(g, TS_OP_RANDOM_UNIFORM), ==, 0);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* Training on ones: kept elements are 1 / (1 - rate), the others 0; the
 * zero fraction is about rate and the mean stays about 1. */
static void assert_dropped(const ts_tensor *y, double rate)
{
  int64_t n = ts_tensor_size(y), zeros = 0;
  double sum = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = ts_tensor_get_f64(y, i);
    if (v == 0)
      zeros++;
    else
      g_assert_cmpfloat_with_epsilon(v, 1 / (1 - rate), 1e-6);
    sum += v;
  }
  g_assert_cmpfloat_with_epsilon((double)zeros / (double)n, rate, 0.01);
  g_assert_cmpfloat_with_epsilon(sum / (double)n, 1.0, 0.02);
}

static void test_dropout_training(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_dtype dtypes[] = { TS_F32, TS_F64 };
  for (size_t d = 0; d < G_N_ELEMENTS(dtypes); d++) {
    ts_tensor *x = ts_ones(dtypes[d], SH(200, 300));
    ts_tensor *a = ts_dropout(x, 0.25, true, 3);
    assert_shape(a, dtypes[d], SH(200, 300));
    assert_dropped(a, 0.25);
    assert_dropped(ts_dropout(x, 0.6, true, 3), 0.6);
    /* the same seed gives the same mask, another seed another one */
    ts_tensor *same = ts_dropout(x, 0.25, true, 3), *other = ts_dropout(x, 0.25, true, 4);
    int64_t differ = 0;
    for (int64_t i = 0; i < ts_tensor_size(a); i++) {
      g_assert_cmpfloat(ts_tensor_get_f64(same, i), ==, ts_tensor_get_f64(a, i));
      differ += ts_tensor_get_f64(other, i) != ts_tensor_get_f64(a, i);
    }
    g_assert_cmpint(differ, >, ts_tensor_size(a) / 10);
  }

  /* in a graph: the same mask as eagerly */
  ts_tensor *x = ts_ones(TS_F32, SH(100, 100));
  ts_function *fn = ts_function_new("dropout", dropout_fn, "x, training");
  ts_tensor *graph = ts_function_call(fn, (ts_value[]){ TS_TENSOR_VALUE(x), TS_INT_VALUE(1) }, 2);
  ts_tensor *eager = ts_dropout(x, 0.25, true, 7);
  g_assert_nonnull(graph);
  for (int64_t i = 0; i < ts_tensor_size(x); i++)
    g_assert_cmpfloat(ts_tensor_get_f64(graph, i), ==, ts_tensor_get_f64(eager, i));
  ts_function_free(fn);
  ts_scope_end(scope);
}

static void test_dropout_errors(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_ones(TS_F32, SH(4));
  g_assert_null(ts_dropout(x, 1, true, 1));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "Dropout", "rate must be in [0, 1), got 1");
  g_assert_null(ts_dropout(x, -0.5, false, 1));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "Dropout", "got -0.5");
  g_assert_null(ts_dropout(x, NAN, true, 1));
  ASSERT_ERROR(TS_ERR_INVALID_ARGUMENT, "Dropout", "got nan");
  g_assert_null(ts_dropout(ts_ones(TS_I32, SH(3)), 0.5, true, 1));
  ASSERT_ERROR(TS_ERR_DTYPE, "Dropout", "x must be float32 or float64, got i32[3]");

  /* training needs the mask's shape while tracing */
  ts_function *fn = ts_function_new("dropout", dropout_fn, "x, training");
  ts_value spec[] = { TS_SPEC_VALUE(TS_F32, SH(-1, 3)), TS_INT_VALUE(1) };
  g_assert_null(ts_function_get_concrete(fn, spec, 2));
  ASSERT_ERROR(TS_ERR_SHAPE, "Dropout", "training needs a fully known shape, got f32[?,3]");
  spec[1] = TS_INT_VALUE(0); /* not training: any shape */
  g_assert_nonnull(ts_function_get_concrete(fn, spec, 2));
  ts_function_free(fn);
  ts_scope_end(scope);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/reduce/sum-axes", test_sum_axes);
  g_test_add_func("/reduce/matches-reference", test_reduce_matches_reference);
  g_test_add_func("/reduce/sum-dtypes-wrap", test_sum_dtypes_wrap);
  g_test_add_func("/reduce/mean", test_mean);
  g_test_add_func("/reduce/mean-integer-wide", test_mean_integer_wide);
  g_test_add_func("/reduce/max-min", test_max_min);
  g_test_add_func("/reduce/prod", test_prod);
  g_test_add_func("/reduce/empty", test_empty);
  g_test_add_func("/reduce/errors", test_reduce_errors);
  g_test_add_func("/reduce/argmax", test_argmax);
  g_test_add_func("/reduce/argmin", test_argmin);
  g_test_add_func("/reduce/cumsum", test_cumsum);
  g_test_add_func("/reduce/any-all", test_any_all);
  g_test_add_func("/reduce/cumprod", test_cumprod);
  g_test_add_func("/reduce/cumprod-gradient", test_cumprod_gradient);
  g_test_add_func("/reduce/top-k", test_top_k);
  g_test_add_func("/reduce/sort", test_sort);
  g_test_add_func("/reduce/sort-gradients", test_sort_gradients);
  g_test_add_func("/reduce/rows-at-once", test_rows_at_once);
  g_test_add_func("/nn/softmax", test_softmax);
  g_test_add_func("/nn/log-softmax", test_log_softmax);
  g_test_add_func("/nn/softmax-half", test_softmax_half);
  g_test_add_func("/nn/softmax-errors", test_softmax_errors);
  g_test_add_func("/nn/sparse-softmax-cross-entropy", test_xent);
  g_test_add_func("/nn/sparse-softmax-cross-entropy-errors", test_xent_errors);
  g_test_add_func("/nn/softmax-threads", test_softmax_threads);
  g_test_add_func("/nn/dropout-inactive", test_dropout_inactive);
  g_test_add_func("/nn/dropout-training", test_dropout_training);
  g_test_add_func("/nn/dropout-errors", test_dropout_errors);
  int rc = g_test_run();
  ts_release_all();
  return rc;
}
