/* Elementwise ops: cast, binary arithmetic and comparisons with broadcasting
 * and promotion, unary math, where; their errors and NULL propagation. */
#include <tracescope.h>

#include <float.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#define N_OF(type, ...) ((int)(sizeof((type[]){ __VA_ARGS__ }) / sizeof(type)))
#define CONST(dtype, ctype, shape, ...) ts_constant((dtype), (shape), (const ctype[]){ __VA_ARGS__ })
#define F32(shape, ...) CONST(TS_F32, float, shape, __VA_ARGS__)
#define F64(shape, ...) CONST(TS_F64, double, shape, __VA_ARGS__)
#define I32(shape, ...) CONST(TS_I32, int32_t, shape, __VA_ARGS__)
#define I64(shape, ...) CONST(TS_I64, int64_t, shape, __VA_ARGS__)
#define U8(shape, ...) CONST(TS_U8, uint8_t, shape, __VA_ARGS__)
#define BOOL(shape, ...) CONST(TS_BOOL, bool, shape, __VA_ARGS__)

/* Exact checks: dtype, shape and values (NaN matches NaN, 0.0 matches -0.0). */
#define CHECK(t, dtype, shape, ...) \
  check_f64((t), (dtype), (shape), (const double[]){ __VA_ARGS__ }, N_OF(double, __VA_ARGS__), 0)
#define CHECK_CLOSE(t, dtype, shape, ...) \
  check_f64((t), (dtype), (shape), (const double[]){ __VA_ARGS__ }, N_OF(double, __VA_ARGS__), 1e-6)
#define CHECK_I64(t, dtype, shape, ...) \
  check_i64((t), (dtype), (shape), (const int64_t[]){ __VA_ARGS__ }, N_OF(int64_t, __VA_ARGS__))

static void check_header(const ts_tensor *t, ts_dtype dtype, ts_shape shape, int n)
{
  g_assert_nonnull(t);
  g_assert_false(ts_failed());
  g_assert_cmpstr(ts_dtype_name(ts_tensor_dtype(t)), ==, ts_dtype_name(dtype));
  g_assert_true(ts_shape_equal(ts_tensor_shape(t), shape));
  g_assert_cmpint(ts_tensor_size(t), ==, n);
}

static void check_f64(const ts_tensor *t, ts_dtype dtype, ts_shape shape, const double *want, int n,
                      double rel_tol)
{
  check_header(t, dtype, shape, n);
  for (int i = 0; i < n; i++) {
    double got = ts_tensor_get_f64(t, i);
    if (isnan(want[i]))
      g_assert_true(isnan(got));
    else if (rel_tol > 0 && isfinite(want[i]))
      g_assert_cmpfloat_with_epsilon(got, want[i], rel_tol * fmax(1, fabs(want[i])));
    else
      g_assert_cmpfloat(got, ==, want[i]);
  }
}

static void check_i64(const ts_tensor *t, ts_dtype dtype, ts_shape shape, const int64_t *want, int n)
{
  check_header(t, dtype, shape, n);
  for (int i = 0; i < n; i++)
    g_assert_cmpint(ts_tensor_get_i64(t, i), ==, want[i]);
}

/* Takes the pending error and checks its code, op and that the message holds
 * each of the NULL-terminated needles. */
static void expect_error(ts_error_code code, const char *op, ...)
{
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_cmpstr(ts_error_code_name(e->code), ==, ts_error_code_name(code));
  g_assert_cmpstr(e->op, ==, op);
  g_assert_nonnull(e->message);
  g_assert_nonnull(strstr(e->message, op));
  va_list ap;
  va_start(ap, op);
  for (const char *needle; (needle = va_arg(ap, const char *));)
    if (!strstr(e->message, needle))
      g_error("message \"%s\" lacks \"%s\"", e->message, needle);
  va_end(ap);
  ts_error_free(e);
}

static ts_tensor *u8_scalar(uint8_t v)
{
  return ts_constant(TS_U8, TS_SCALAR_SHAPE, &v);
}

/* The pending error names exactly what the op takes, never string or variant. */
static void expect_dtype_error(const char *op, const char *takes, const char *got)
{
  const ts_error *e = ts_error_peek();
  g_assert_nonnull(e);
  if (strstr(e->message, "variant") || (strstr(e->message, "string") && strcmp(got, "string")))
    g_error("message \"%s\" offers string or variant", e->message);
  expect_error(TS_ERR_DTYPE, op, takes, got, NULL);
}

static void test_dtype_messages(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *b = ts_scalar_bool(true), *str = ts_scalar_string("a");
  g_assert_null(ts_add(b, b));
  expect_dtype_error("Add", "expected float32, float64, int32, int64, uint8, int8, int16, uint16, uint32, uint64, float16 or bfloat16, got bool", "bool");
  g_assert_null(ts_neg(b));
  expect_dtype_error("Neg", "expected float32, float64, int32, int64, uint8, int8, int16, uint16, uint32, uint64, float16 or bfloat16, got bool", "bool");
  g_assert_null(ts_add(str, ts_scalar_i32(1)));
  expect_dtype_error("Add", "takes numeric tensors (float32, float64, int32, int64, uint8, bool, "
                            "int8, int16, uint16, uint32, uint64, float16 or bfloat16), got string", "string");
  g_assert_null(ts_greater(str, str));
  expect_dtype_error("Greater", "takes numeric tensors", "string");
  g_assert_null(ts_matmul(ts_ones(TS_BOOL, TS_SHAPE(2, 2)), ts_ones(TS_BOOL, TS_SHAPE(2, 2))));
  expect_dtype_error("MatMul", "takes float32, float64, int32, int64, uint8, int8, int16, uint16, uint32, uint64, float16 or bfloat16 tensors, got bool",
                     "bool");
  g_assert_null(ts_max_pool2d(ts_ones(TS_BOOL, TS_SHAPE(1, 2, 2, 1)), 1, 1, 1, 1,
                              TS_PADDING_VALID));
  expect_dtype_error("MaxPool", "takes float32, float64, int32, int64, uint8, int8, int16, uint16, float16 or bfloat16 tensors, got bool",
                     "bool");
  g_assert_null(ts_range(TS_BOOL, 0, 2, 1));
  expect_dtype_error("Range", "takes float32, float64, int32, int64, uint8, int8, int16, uint16, uint32, uint64, float16 or bfloat16, got dtype bool",
                     "bool");
  g_assert_null(ts_zeros(TS_STRING, TS_SHAPE(2)));
  expect_dtype_error("Zeros", "takes a numeric dtype (float32, float64, int32, int64, uint8, bool, "
                              "int8, int16, uint16, uint32, uint64, float16 or bfloat16), got string", "string");
  ts_scope_end(scope);
}

/* ---- arithmetic --------------------------------------------------------------- */

static void test_arith(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s3 = TS_SHAPE(3);
  CHECK(ts_add(F32(s3, 1.5f, -2, 0), F32(s3, 1, 2, -0.25f)), TS_F32, s3, 2.5, 0, -0.25);
  CHECK(ts_sub(F64(s3, 1.5, -2, 0), F64(s3, 1, 2, -0.25)), TS_F64, s3, 0.5, -4, 0.25);
  CHECK(ts_mul(I32(s3, 3, -4, 0), I32(s3, 5, 6, 7)), TS_I32, s3, 15, -24, 0);
  CHECK(ts_add(I64(s3, 3, -4, 0), I64(s3, 5, 6, 7)), TS_I64, s3, 8, 2, 7);
  CHECK(ts_sub(U8(s3, 9, 4, 0), U8(s3, 5, 4, 0)), TS_U8, s3, 4, 0, 0);
  CHECK(ts_maximum(I32(s3, 1, 5, -3), I32(s3, 2, 4, -3)), TS_I32, s3, 2, 5, -3);
  CHECK(ts_minimum(F64(s3, 1, 5, -3), F64(s3, 2, 4, -3)), TS_F64, s3, 1, 4, -3);
  CHECK(ts_maximum(F32(s3, NAN, 1, 2), F32(s3, 0, NAN, 1)), TS_F32, s3, NAN, NAN, 2);
  CHECK(ts_minimum(F32(s3, NAN, 1, 2), F32(s3, 0, NAN, 1)), TS_F32, s3, NAN, NAN, 1);
  CHECK(ts_minimum(U8(s3, 1, 200, 3), U8(s3, 2, 100, 3)), TS_U8, s3, 1, 100, 3);

  /* scalar on either side: order matters for sub */
  CHECK(ts_sub(ts_scalar_i32(10), I32(s3, 1, 2, 3)), TS_I32, s3, 9, 8, 7);
  CHECK(ts_sub(I32(s3, 1, 2, 3), ts_scalar_i32(10)), TS_I32, s3, -9, -8, -7);
  CHECK(ts_sub(ts_scalar_f64(1), ts_scalar_f64(3)), TS_F64, TS_SCALAR_SHAPE, -2);
  ts_scope_end(s);
}

static void test_wrapping(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s2 = TS_SHAPE(2);
  CHECK_I64(ts_add(I32(s2, INT32_MAX, INT32_MIN), I32(s2, 1, -1)), TS_I32, s2, INT32_MIN, INT32_MAX);
  CHECK_I64(ts_sub(ts_scalar_i32(INT32_MIN), ts_scalar_i32(1)), TS_I32, TS_SCALAR_SHAPE, INT32_MAX);
  CHECK_I64(ts_mul(I32(s2, 65536, -65536), ts_scalar_i32(65536)), TS_I32, s2, 0, 0);
  CHECK_I64(ts_mul(I64(s2, INT64_MAX, INT64_MIN), ts_scalar_i64(2)), TS_I64, s2, -2, 0);
  CHECK_I64(ts_add(I64(s2, INT64_MAX, 0), ts_scalar_i64(1)), TS_I64, s2, INT64_MIN, 1);
  CHECK_I64(ts_add(U8(s2, 200, 255), U8(s2, 100, 1)), TS_U8, s2, 44, 0);
  CHECK_I64(ts_sub(U8(s2, 1, 0), U8(s2, 2, 1)), TS_U8, s2, 255, 255);
  CHECK_I64(ts_mul(U8(s2, 16, 255), U8(s2, 16, 255)), TS_U8, s2, 0, 1);
  ts_scope_end(s);
}

static void test_div(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s4 = TS_SHAPE(4);
  CHECK(ts_div(F32(s4, 1, -3, 1, 0), F32(s4, 4, 2, 0, 0)), TS_F32, s4, 0.25, -1.5, INFINITY, NAN);
  /* integers divide in f64 */
  CHECK(ts_div(I32(s4, 7, -7, 1, 0), I32(s4, 2, 2, 0, 5)), TS_F64, s4, 3.5, -3.5, INFINITY, 0);
  CHECK(ts_div(U8(s4, 1, 2, 3, 4), ts_scalar_i64(8)), TS_F64, s4, 0.125, 0.25, 0.375, 0.5);
  CHECK(ts_div(ts_scalar_i32(1), ts_scalar_f32(4)), TS_F32, TS_SCALAR_SHAPE, 0.25);
  g_assert_null(ts_div(ts_scalar_bool(true), ts_scalar_bool(true)));
  expect_error(TS_ERR_DTYPE, "RealDiv", "bool", NULL);
  ts_scope_end(s);
}

static void test_floor_int(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s6 = TS_SHAPE(6);
  CHECK(ts_floordiv(I32(s6, -7, 7, 7, -7, 6, 0), I32(s6, 2, -2, 2, -2, 3, 5)), TS_I32, s6,
        -4, -4, 3, 3, 2, 0);
  CHECK(ts_mod(I32(s6, -7, 7, 7, -7, 6, 0), I32(s6, 2, -2, 2, -2, 3, 5)), TS_I32, s6,
        1, -1, 1, -1, 0, 0);
  CHECK(ts_floordiv(I64(s6, -7, 7, 7, -7, 6, 0), I64(s6, 2, -2, 2, -2, 3, 5)), TS_I64, s6,
        -4, -4, 3, 3, 2, 0);
  CHECK(ts_mod(I64(s6, -7, 7, 7, -7, 6, 0), I64(s6, 2, -2, 2, -2, 3, 5)), TS_I64, s6,
        1, -1, 1, -1, 0, 0);
  ts_shape s2 = TS_SHAPE(2);
  CHECK(ts_floordiv(U8(s2, 7, 255), U8(s2, 2, 16)), TS_U8, s2, 3, 15);
  CHECK(ts_mod(U8(s2, 7, 255), U8(s2, 2, 16)), TS_U8, s2, 1, 15);
  /* MIN // -1 wraps; MIN % -1 is 0 */
  CHECK_I64(ts_floordiv(I32(s2, INT32_MIN, 5), ts_scalar_i32(-1)), TS_I32, s2, INT32_MIN, -5);
  CHECK_I64(ts_mod(I32(s2, INT32_MIN, 5), ts_scalar_i32(-1)), TS_I32, s2, 0, 0);
  CHECK_I64(ts_floordiv(ts_scalar_i64(INT64_MIN), ts_scalar_i64(-1)), TS_I64, TS_SCALAR_SHAPE,
            INT64_MIN);
  ts_scope_end(s);
}

static void test_floor_float(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s6 = TS_SHAPE(6);
  CHECK(ts_floordiv(F32(s6, -7, 7, 7.5f, -7.5f, 1, -1), F32(s6, 2, -2, 2, 2, 0, 0)), TS_F32, s6,
        -4, -4, 3, -4, INFINITY, -INFINITY);
  CHECK(ts_mod(F32(s6, -7, 7, 7.5f, -7.5f, 1, 6), F32(s6, 2, -2, 2, 2, 0, -3)), TS_F32, s6,
        1, -1, 1.5, 0.5, NAN, 0);
  CHECK(ts_floordiv(F64(s6, -7, 7, 7.5, -7.5, 0, 5), F64(s6, 2, -2, 2, 2, 0, INFINITY)), TS_F64,
        s6, -4, -4, 3, -4, NAN, 0);
  CHECK(ts_mod(F64(s6, -7, 7, 7.5, -7.5, 5, -5), F64(s6, 2, -2, 2, 2, INFINITY, 3)), TS_F64, s6,
        1, -1, 1.5, 0.5, 5, 1);
  /* the remainder takes the divisor's sign, zero included; the quotient
   * is NumPy's and PyTorch's (divmod's: 1 // 0.1 is 9, its remainder
   * 0.0999...), where TensorFlow's floor(x / y) gives 10 */
  ts_tensor *m = ts_mod(ts_scalar_f64(4), ts_scalar_f64(-2));
  CHECK(m, TS_F64, TS_SCALAR_SHAPE, 0);
  g_assert_true(signbit(ts_tensor_get_f64(m, 0)));
  CHECK(ts_floordiv(F64(TS_SHAPE(2), 1, -1), ts_scalar_f64(0.1)), TS_F64, TS_SHAPE(2), 9, -10);
  /* mixed int and float promote to float */
  CHECK(ts_floordiv(ts_scalar_i32(-7), ts_scalar_f32(2)), TS_F32, TS_SCALAR_SHAPE, -4);
  ts_scope_end(s);
}

static void test_division_by_zero(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s2 = TS_SHAPE(2);
  g_assert_null(ts_floordiv(I32(s2, 1, 2), I32(s2, 1, 0)));
  expect_error(TS_ERR_INVALID_ARGUMENT, "FloorDiv", "Integer division by zero", NULL);
  g_assert_null(ts_mod(I64(s2, 1, 2), ts_scalar_i64(0)));
  expect_error(TS_ERR_INVALID_ARGUMENT, "FloorMod", "Integer division by zero", NULL);
  g_assert_null(ts_floordiv(U8(s2, 1, 2), u8_scalar(0)));
  expect_error(TS_ERR_INVALID_ARGUMENT, "FloorDiv", "Integer division by zero", NULL);
  /* a bool divisor promotes to the integer dtype: still an error */
  g_assert_null(ts_mod(I32(s2, 1, 2), ts_scalar_bool(false)));
  expect_error(TS_ERR_INVALID_ARGUMENT, "FloorMod", "Integer division by zero", NULL);
  /* nothing is divided when the output is empty */
  ts_shape empty = TS_SHAPE(2, 0);
  check_header(ts_floordiv(ts_tensor_new(TS_I32, empty), ts_scalar_i32(0)), TS_I32, empty, 0);
  ts_scope_end(s);
}

static void test_pow(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s5 = TS_SHAPE(5);
  CHECK_I64(ts_pow(I32(s5, 2, 2, 3, -2, 0), I32(s5, 10, 31, 4, 3, 0)), TS_I32, s5,
            1024, INT32_MIN, 81, -8, 1);
  CHECK_I64(ts_pow(I64(s5, 2, 2, 3, -1, 7), I64(s5, 62, 64, 0, 7, 1)), TS_I64, s5,
            INT64_C(1) << 62, 0, 1, -1, 7);
  CHECK_I64(ts_pow(U8(s5, 2, 3, 0, 1, 255), U8(s5, 8, 5, 3, 200, 2)), TS_U8, s5, 0, 243, 0, 1, 1);
  CHECK_CLOSE(ts_pow(F32(s5, 2, 2, 4, -8, 0), F32(s5, 0.5f, -1, 0.5f, 1.0f / 3, 0)), TS_F32, s5,
              M_SQRT2, 0.5, 2, NAN, 1);
  CHECK(ts_pow(ts_scalar_f64(2), ts_scalar_i32(-2)), TS_F64, TS_SCALAR_SHAPE, 0.25);
  /* a uint64 exponent past INT64_MAX is no negative power: NumPy's
   * np.power(np.uint64([2, 3]), np.uint64(2**63 + 1)) is [0, 3] (wrapped) */
  const uint64_t big = (UINT64_C(1) << 63) + 1;
  ts_shape s2 = TS_SHAPE(2);
  CHECK_I64(ts_pow(CONST(TS_U64, uint64_t, s2, 2, 3), CONST(TS_U64, uint64_t, s2, big, big)), TS_U64, s2, 0, 3);

  g_assert_null(ts_pow(I32(TS_SHAPE(2), 2, 3), I32(TS_SHAPE(2), 1, -1)));
  expect_error(TS_ERR_INVALID_ARGUMENT, "Pow", "Integers to negative integer powers are not allowed",
               NULL);
  g_assert_null(ts_pow(ts_scalar_i64(2), ts_scalar_i64(-3)));
  expect_error(TS_ERR_INVALID_ARGUMENT, "Pow", "negative integer powers", NULL);
  ts_scope_end(s);
}

static void test_bool_arithmetic_rejected(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *t = BOOL(TS_SHAPE(2), true, false);
  g_assert_null(ts_add(t, t));
  expect_error(TS_ERR_DTYPE, "Add", "bool[2]", "got bool", NULL);
  g_assert_null(ts_maximum(t, ts_scalar_bool(true)));
  expect_error(TS_ERR_DTYPE, "Maximum", "bool", NULL);
  g_assert_null(ts_pow(t, t));
  expect_error(TS_ERR_DTYPE, "Pow", "bool", NULL);
  ts_scope_end(s);
}

/* ---- promotion ------------------------------------------------------------------ */

static void test_promotion(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s2 = TS_SHAPE(2);
  CHECK(ts_add(I32(s2, 1, 2), F32(s2, 0.5f, 0.25f)), TS_F32, s2, 1.5, 2.25);
  CHECK(ts_add(F32(s2, 0.5f, 0.25f), ts_scalar_i32(1)), TS_F32, s2, 1.5, 1.25);
  CHECK(ts_mul(U8(s2, 200, 3), I64(s2, 1000, -1)), TS_I64, s2, 200000, -3);
  CHECK(ts_add(ts_scalar_bool(true), U8(s2, 1, 255)), TS_U8, s2, 2, 0);
  CHECK(ts_sub(F32(s2, 1, 2), F64(s2, 0.5, 0.25)), TS_F64, s2, 0.5, 1.75);
  /* comparisons compare in the promoted dtype and return bool */
  CHECK(ts_greater(BOOL(s2, true, false), U8(s2, 0, 0)), TS_BOOL, s2, 1, 0);
  CHECK(ts_equal(BOOL(s2, true, false), U8(s2, 1, 2)), TS_BOOL, s2, 1, 0);
  CHECK(ts_less(I32(s2, 1, 2), F32(s2, 1.5f, 1.5f)), TS_BOOL, s2, 1, 0);
  CHECK(ts_equal(I64(s2, INT64_MAX, 3), ts_scalar_i32(3)), TS_BOOL, s2, 0, 1);
  ts_scope_end(s);
}

/* ---- comparisons and logic --------------------------------------------------------- */

static void test_compare(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s4 = TS_SHAPE(4);
  ts_tensor *a = F32(s4, 1, 2, 3, NAN), *b = F32(s4, 2, 2, 2, NAN);
  CHECK(ts_greater(a, b), TS_BOOL, s4, 0, 0, 1, 0);
  CHECK(ts_greater_equal(a, b), TS_BOOL, s4, 0, 1, 1, 0);
  CHECK(ts_less(a, b), TS_BOOL, s4, 1, 0, 0, 0);
  CHECK(ts_less_equal(a, b), TS_BOOL, s4, 1, 1, 0, 0);
  CHECK(ts_equal(a, b), TS_BOOL, s4, 0, 1, 0, 0);
  CHECK(ts_not_equal(a, b), TS_BOOL, s4, 1, 0, 1, 1);

  ts_tensor *i = I64(s4, -5, 0, 5, INT64_MIN);
  CHECK(ts_greater(i, ts_scalar_i64(0)), TS_BOOL, s4, 0, 0, 1, 0);
  CHECK(ts_less_equal(ts_scalar_i64(0), i), TS_BOOL, s4, 0, 1, 1, 0);
  CHECK(ts_not_equal(U8(s4, 1, 2, 3, 4), u8_scalar(3)), TS_BOOL, s4, 1, 1, 0, 1);
  CHECK(ts_equal(F64(s4, 0, -0.0, 1, 2), ts_scalar_f64(0)), TS_BOOL, s4, 1, 1, 0, 0);
  ts_tensor *p = BOOL(s4, false, false, true, true), *q = BOOL(s4, false, true, false, true);
  CHECK(ts_equal(p, q), TS_BOOL, s4, 1, 0, 0, 1);
  CHECK(ts_greater(p, q), TS_BOOL, s4, 0, 0, 1, 0);
  ts_scope_end(s);
}

static void test_logical(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s4 = TS_SHAPE(4);
  ts_tensor *p = BOOL(s4, false, false, true, true), *q = BOOL(s4, false, true, false, true);
  CHECK(ts_logical_and(p, q), TS_BOOL, s4, 0, 0, 0, 1);
  CHECK(ts_logical_or(p, q), TS_BOOL, s4, 0, 1, 1, 1);
  CHECK(ts_logical_not(p), TS_BOOL, s4, 1, 1, 0, 0);
  CHECK(ts_logical_and(p, ts_scalar_bool(true)), TS_BOOL, s4, 0, 0, 1, 1);

  ts_tensor *n = I32(TS_SHAPE(2), 0, 1);
  g_assert_null(ts_logical_and(n, n));
  expect_error(TS_ERR_DTYPE, "LogicalAnd", "expected bool", "int32", "i32[2]", NULL);
  /* no promotion: bool with int32 is an error naming the int32 operand */
  g_assert_null(ts_logical_or(ts_scalar_bool(true), n));
  expect_error(TS_ERR_DTYPE, "LogicalOr", "got int32", "bool[], i32[2]", NULL);
  g_assert_null(ts_logical_not(ts_scalar_f32(1)));
  expect_error(TS_ERR_DTYPE, "LogicalNot", "float32", "f32[]", NULL);
  ts_scope_end(s);
}

/* ---- unary ----------------------------------------------------------------------- */

static void test_unary_numeric(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s4 = TS_SHAPE(4);
  CHECK(ts_neg(F32(s4, 1, -2, 0, NAN)), TS_F32, s4, -1, 2, 0, NAN);
  CHECK(ts_abs(F64(s4, 1, -2, -0.0, -INFINITY)), TS_F64, s4, 1, 2, 0, INFINITY);
  g_assert_false(signbit(ts_tensor_get_f64(ts_abs(ts_scalar_f64(-0.0)), 0)));
  CHECK(ts_relu(F32(s4, 1, -2, 0, NAN)), TS_F32, s4, 1, 0, 0, NAN);
  CHECK_I64(ts_neg(I32(s4, 1, -2, 0, INT32_MIN)), TS_I32, s4, -1, 2, 0, INT32_MIN);
  CHECK_I64(ts_abs(I32(s4, 1, -2, 0, INT32_MIN)), TS_I32, s4, 1, 2, 0, INT32_MIN);
  CHECK_I64(ts_relu(I64(s4, 1, -2, 0, INT64_MIN)), TS_I64, s4, 1, 0, 0, 0);
  CHECK_I64(ts_abs(I64(s4, 1, -2, 0, INT64_MIN)), TS_I64, s4, 1, 2, 0, INT64_MIN);
  CHECK(ts_neg(U8(s4, 0, 1, 128, 255)), TS_U8, s4, 0, 255, 128, 1);
  CHECK(ts_abs(U8(s4, 0, 1, 128, 255)), TS_U8, s4, 0, 1, 128, 255);
  CHECK(ts_relu(U8(s4, 0, 1, 128, 255)), TS_U8, s4, 0, 1, 128, 255);

  g_assert_null(ts_neg(ts_scalar_bool(true)));
  expect_error(TS_ERR_DTYPE, "Neg", "bool", NULL);
  g_assert_null(ts_relu(BOOL(TS_SHAPE(1), true)));
  expect_error(TS_ERR_DTYPE, "Relu", "bool[1]", NULL);
  ts_scope_end(s);
}

static void test_unary_float(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s4 = TS_SHAPE(4);
  for (ts_dtype dt = TS_F32; dt <= TS_F64; dt++) {
    ts_tensor *x = ts_cast(F64(s4, 0, 1, -1, 2), dt);
    CHECK_CLOSE(ts_exp(x), dt, s4, 1, M_E, 1 / M_E, M_E * M_E);
    CHECK_CLOSE(ts_log(ts_cast(F64(s4, 1, M_E, 0, -1), dt)), dt, s4, 0, 1, -INFINITY, NAN);
    CHECK_CLOSE(ts_sqrt(ts_cast(F64(s4, 4, 2, 0, -1), dt)), dt, s4, 2, M_SQRT2, 0, NAN);
    CHECK_CLOSE(ts_tanh(x), dt, s4, 0, tanh(1), -tanh(1), tanh(2));
    CHECK_CLOSE(ts_sigmoid(x), dt, s4, 0.5, 1 / (1 + exp(-1)), 1 / (1 + exp(1)), 1 / (1 + exp(-2)));
    /* saturates instead of overflowing to nan */
    CHECK(ts_sigmoid(ts_cast(F64(TS_SHAPE(2), -1000, 1000), dt)), dt, TS_SHAPE(2), 0, 1);
    CHECK_CLOSE(ts_softplus(x), dt, s4, M_LN2, log1p(M_E), log1p(1 / M_E), log1p(M_E * M_E));
    /* no overflow: log(1 + exp(1000)) is 1000, of -1000 a tiny positive (0 in f32) */
    CHECK_CLOSE(ts_softplus(ts_cast(F64(s4, 1000, -1000, -50, INFINITY), dt)), dt, s4, 1000,
                0, exp(-50.0), INFINITY);
    CHECK_CLOSE(ts_softplus(ts_cast(F64(TS_SHAPE(2), NAN, -INFINITY), dt)), dt, TS_SHAPE(2), NAN, 0);
  }

  g_assert_null(ts_exp(I32(TS_SHAPE(2, 3), 1, 2, 3, 4, 5, 6)));
  expect_error(TS_ERR_DTYPE, "Exp", "expected float32, float64, float16 or bfloat16, got int32", "i32[2,3]", NULL);
  g_assert_null(ts_sqrt(u8_scalar(4)));
  expect_error(TS_ERR_DTYPE, "Sqrt", "uint8", NULL);
  g_assert_null(ts_sigmoid(ts_scalar_bool(true)));
  expect_error(TS_ERR_DTYPE, "Sigmoid", "bool", NULL);
  g_assert_null(ts_log(ts_scalar_i64(1)));
  expect_error(TS_ERR_DTYPE, "Log", "int64", NULL);
  g_assert_null(ts_tanh(ts_scalar_i32(1)));
  expect_error(TS_ERR_DTYPE, "Tanh", "int32", NULL);
  g_assert_null(ts_softplus(ts_scalar_i32(1)));
  expect_error(TS_ERR_DTYPE, "Softplus", "int32", NULL);
  ts_scope_end(s);
}

/* Trigonometry, hyperbolic functions, their inverses and erf: values
 * known in closed form, the domains' edges (nan outside, infinities at
 * the poles) and nan carried through. */
static void test_unary_trig(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s4 = TS_SHAPE(4);
  for (ts_dtype dt = TS_F32; dt <= TS_F64; dt++) {
#define X4(a, b, c, d) ts_cast(F64(s4, a, b, c, d), dt)
    CHECK_CLOSE(ts_sin(X4(0, M_PI / 2, M_PI / 6, -M_PI / 6)), dt, s4, 0, 1, 0.5, -0.5);
    CHECK_CLOSE(ts_cos(X4(0, M_PI / 3, M_PI, -M_PI / 3)), dt, s4, 1, 0.5, -1, 0.5);
    CHECK_CLOSE(ts_tan(X4(0, M_PI / 4, -M_PI / 4, M_PI / 3)), dt, s4, 0, 1, -1, sqrt(3));
    CHECK_CLOSE(ts_asin(X4(1, 0.5, -1, 2)), dt, s4, M_PI / 2, M_PI / 6, -M_PI / 2, NAN);
    CHECK_CLOSE(ts_acos(X4(1, 0.5, -1, -2)), dt, s4, 0, M_PI / 3, M_PI, NAN);
    CHECK_CLOSE(ts_atan(X4(0, 1, -1, INFINITY)), dt, s4, 0, M_PI / 4, -M_PI / 4, M_PI / 2);
    CHECK_CLOSE(ts_sinh(X4(0, M_LN2, -M_LN2, 1000)), dt, s4, 0, 0.75, -0.75, INFINITY);
    CHECK_CLOSE(ts_cosh(X4(0, M_LN2, -M_LN2, -1000)), dt, s4, 1, 1.25, 1.25, INFINITY);
    CHECK_CLOSE(ts_asinh(X4(0, 0.75, -0.75, -INFINITY)), dt, s4, 0, M_LN2, -M_LN2, -INFINITY);
    CHECK_CLOSE(ts_acosh(X4(1, 1.25, 0.5, INFINITY)), dt, s4, 0, M_LN2, NAN, INFINITY);
    CHECK_CLOSE(ts_atanh(X4(0, 0.6, 1, -1)), dt, s4, 0, M_LN2, INFINITY, -INFINITY);
    CHECK_CLOSE(ts_erf(X4(0, 1, -0.5, INFINITY)), dt, s4, 0, 0.8427007929497149, -0.5204998778130465, 1);
    CHECK_CLOSE(ts_erf(X4(-INFINITY, 6, NAN, 0)), dt, s4, -1, 1, NAN, 0);
    CHECK_CLOSE(ts_sin(X4(INFINITY, NAN, 0, 0)), dt, s4, NAN, NAN, 0, 0);
#undef X4
  }

  g_assert_null(ts_sin(I32(TS_SHAPE(2), 1, 2)));
  expect_error(TS_ERR_DTYPE, "Sin", "expected float32, float64, float16 or bfloat16, got int32", "i32[2]", NULL);
  g_assert_null(ts_acosh(ts_scalar_i64(1)));
  expect_error(TS_ERR_DTYPE, "Acosh", "int64", NULL);
  g_assert_null(ts_erf(u8_scalar(1)));
  expect_error(TS_ERR_DTYPE, "Erf", "uint8", NULL);
  g_assert_null(ts_atanh(ts_scalar_bool(true)));
  expect_error(TS_ERR_DTYPE, "Atanh", "bool", NULL);
  ts_scope_end(s);
}

/* ---- broadcasting ----------------------------------------------------------------- */

/* Sign as np.sign (values from NumPy 1.24): -1, 0 or 1 in the input's
 * dtype, nan kept, -0.0 giving +0.0; every float width, the integers
 * (unsigned: 0 or 1), rank 0 and size 0; bool refused. */
static void test_sign(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s8 = TS_SHAPE(8);
  for (ts_dtype dt = TS_F32; dt <= TS_BF16; dt++) {
    if (!ts_dtype_is_float(dt))
      continue;
    ts_tensor *y = ts_sign(ts_cast(F64(s8, -2.5, -0.5, -0.0, 0.0, 0.5, NAN, INFINITY, -INFINITY), dt));
    CHECK(y, dt, s8, -1, -1, 0, 0, 1, NAN, 1, -1);
    g_assert_false(signbit(ts_tensor_get_f64(y, 2))); /* np.sign(-0.0) is 0.0 */
  }
  CHECK(ts_sign(ts_scalar_f64(-1e-300)), TS_F64, TS_SCALAR_SHAPE, -1);
  ts_shape s4 = TS_SHAPE(4);
  CHECK_I64(ts_sign(I32(s4, INT32_MIN, -7, 0, INT32_MAX)), TS_I32, s4, -1, -1, 0, 1);
  CHECK_I64(ts_sign(I64(s4, INT64_MIN, -1, 0, 3)), TS_I64, s4, -1, -1, 0, 1);
  CHECK_I64(ts_sign(ts_cast(I32(s4, -128, -1, 0, 127), TS_I8)), TS_I8, s4, -1, -1, 0, 1);
  CHECK_I64(ts_sign(ts_cast(I32(s4, -32768, -1, 0, 5), TS_I16)), TS_I16, s4, -1, -1, 0, 1);
  CHECK(ts_sign(U8(s4, 0, 1, 128, 255)), TS_U8, s4, 0, 1, 1, 1);
  CHECK_I64(ts_sign(ts_cast(I64(s4, 0, 1, 65535, 7), TS_U16)), TS_U16, s4, 0, 1, 1, 1);
  CHECK_I64(ts_sign(ts_cast(I64(s4, 0, 1, 4294967295, 7), TS_U32)), TS_U32, s4, 0, 1, 1, 1);
  CHECK_I64(ts_sign(ts_cast(I64(s4, 0, 1, INT64_MAX, -1), TS_U64)), TS_U64, s4, 0, 1, 1, 1);
  CHECK_I64(ts_sign(ts_scalar_i32(-3)), TS_I32, TS_SCALAR_SHAPE, -1);
  ts_shape empty = TS_SHAPE(2, 0);
  check_header(ts_sign(ts_tensor_new(TS_F32, empty)), TS_F32, empty, 0);
  g_assert_null(ts_sign(ts_scalar_bool(true)));
  expect_error(TS_ERR_DTYPE, "Sign", "bool", NULL);
  ts_scope_end(s);
}

/* Round as np.round (values from NumPy 1.24): half to even, -0.5 and
 * -0.0 giving -0.0, 0.49999997 giving 0 (where floor(x + 0.5) gives 1),
 * nan and inf kept, halves near the last integer bits; integers
 * unchanged; rank 0 and size 0; bool refused. */
static void test_round(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s12 = TS_SHAPE(12);
  for (ts_dtype dt = TS_F32; dt <= TS_BF16; dt++) {
    if (!ts_dtype_is_float(dt))
      continue;
    ts_tensor *y = ts_round(ts_cast(F64(s12, -2.5, -1.5, -0.5, -0.0, 0.5, 1.5, 2.5, 3.5, -3.7,
                                        0.49999997, NAN, INFINITY), dt));
    CHECK(y, dt, s12, -2, -2, -0.0, -0.0, 0, 2, 2, 4, -4, 0, NAN, INFINITY);
    g_assert_true(signbit(ts_tensor_get_f64(y, 2)) && signbit(ts_tensor_get_f64(y, 3)));
    g_assert_false(signbit(ts_tensor_get_f64(y, 4)));
  }
  ts_shape s3 = TS_SHAPE(3);
  CHECK(ts_round(F32(s3, 8388607.5f, 16777216, -1e30f)), TS_F32, s3, 8388608, 16777216, -1e30f);
  CHECK(ts_round(F64(s3, 2.5000000000000004, 4503599627370495.5, -0.5000000000000001)), TS_F64, s3, 3,
        4503599627370496.0, -1);
  CHECK(ts_round(ts_scalar_f64(-1.5)), TS_F64, TS_SCALAR_SHAPE, -2);
  ts_shape s2 = TS_SHAPE(2);
  CHECK_I64(ts_round(I64(s2, INT64_MAX, INT64_MIN)), TS_I64, s2, INT64_MAX, INT64_MIN);
  CHECK_I64(ts_round(I32(s2, -7, INT32_MAX)), TS_I32, s2, -7, INT32_MAX);
  CHECK_I64(ts_round(ts_cast(I32(s2, -128, 127), TS_I8)), TS_I8, s2, -128, 127);
  CHECK(ts_round(U8(s2, 0, 255)), TS_U8, s2, 0, 255);
  CHECK_I64(ts_round(ts_cast(I64(s2, 0, INT64_MAX), TS_U64)), TS_U64, s2, 0, INT64_MAX);
  ts_shape empty = TS_SHAPE(0, 3);
  check_header(ts_round(ts_tensor_new(TS_F64, empty)), TS_F64, empty, 0);
  g_assert_null(ts_round(ts_scalar_bool(true)));
  expect_error(TS_ERR_DTYPE, "Round", "bool", NULL);
  ts_scope_end(s);
}

/* The float dtypes, widest first: a loop's values must be exact in each. */
static const ts_dtype FLOATS[] = { TS_F64, TS_F32, TS_F16, TS_BF16 };

/* Floor and Ceil as tf.math.floor/ceil (np.floor/np.ceil): -0.0, nan and
 * inf kept, ceil(-0.5) is -0.0; floats only, as TensorFlow registers them. */
static void test_floor_ceil(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s9 = TS_SHAPE(9);
  for (size_t k = 0; k < G_N_ELEMENTS(FLOATS); k++) {
    ts_dtype dt = FLOATS[k];
    ts_tensor *x = ts_cast(F64(s9, -2.5, -0.5, -0.0, 0.5, 1, 2.75, NAN, INFINITY, -INFINITY), dt);
    ts_tensor *f = ts_floor(x), *c = ts_ceil(x);
    CHECK(f, dt, s9, -3, -1, -0.0, 0, 1, 2, NAN, INFINITY, -INFINITY);
    CHECK(c, dt, s9, -2, -0.0, -0.0, 1, 1, 3, NAN, INFINITY, -INFINITY);
    g_assert_true(signbit(ts_tensor_get_f64(f, 2)));
    g_assert_false(signbit(ts_tensor_get_f64(f, 3)));
    g_assert_true(signbit(ts_tensor_get_f64(c, 1)) && signbit(ts_tensor_get_f64(c, 2)));
  }
  ts_shape s3 = TS_SHAPE(3);
  CHECK(ts_floor(F64(s3, -1e-300, 4503599627370495.5, -4503599627370495.5)), TS_F64, s3, -1,
        4503599627370495.0, -4503599627370496.0);
  CHECK(ts_ceil(F64(s3, 1e-300, 4503599627370495.5, -4503599627370495.5)), TS_F64, s3, 1,
        4503599627370496.0, -4503599627370495.0);
  CHECK(ts_floor(ts_scalar_f32(-0.25f)), TS_F32, TS_SCALAR_SHAPE, -1);
  ts_shape empty = TS_SHAPE(0, 2);
  check_header(ts_ceil(ts_tensor_new(TS_F32, empty)), TS_F32, empty, 0);
  g_assert_null(ts_floor(ts_scalar_i32(3)));
  expect_error(TS_ERR_DTYPE, "Floor", "int32", NULL);
  g_assert_null(ts_ceil(ts_scalar_bool(true)));
  expect_error(TS_ERR_DTYPE, "Ceil", "bool", NULL);
  ts_scope_end(s);
}

/* Square in every numeric dtype, integers wrapping as TensorFlow's and
 * NumPy's (46341^2 = 2147488281 is -2147479015 in int32); -0.0 squares to
 * 0.0; float32 overflows to inf. */
static void test_square(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s6 = TS_SHAPE(6);
  for (size_t k = 0; k < G_N_ELEMENTS(FLOATS); k++) {
    ts_tensor *y = ts_square(ts_cast(F64(s6, -3, -0.0, 0.5, NAN, -INFINITY, 12), FLOATS[k]));
    CHECK(y, FLOATS[k], s6, 9, 0, 0.25, NAN, INFINITY, 144);
    g_assert_false(signbit(ts_tensor_get_f64(y, 1)));
  }
  ts_shape s2 = TS_SHAPE(2), s4 = TS_SHAPE(4);
  CHECK(ts_square(F32(s2, 1e20f, -1e-30f)), TS_F32, s2, INFINITY, 0);
  CHECK(ts_square(F64(s2, 1e20, -1e200)), TS_F64, s2, 1e40, INFINITY);
  CHECK_I64(ts_square(I32(s4, INT32_MIN, 46341, -7, 0)), TS_I32, s4, 0, -2147479015, 49, 0);
  CHECK_I64(ts_square(I64(s4, INT64_MIN, 3037000500, -3037000499, 5)), TS_I64, s4, 0,
            -9223372036709301616, 9223372030926249001, 25);
  CHECK_I64(ts_square(ts_cast(I32(s4, 16, -12, 11, -128), TS_I8)), TS_I8, s4, 0, -112, 121, 0);
  CHECK_I64(ts_square(ts_cast(I32(s4, 256, 200, -181, -32768), TS_I16)), TS_I16, s4, 0, -25536, 32761, 0);
  CHECK(ts_square(U8(s4, 16, 255, 15, 0)), TS_U8, s4, 0, 1, 225, 0);
  CHECK_I64(ts_square(ts_cast(I64(s4, 65535, 256, 255, 3), TS_U16)), TS_U16, s4, 1, 0, 65025, 9);
  CHECK_I64(ts_square(ts_cast(I64(s4, 4294967295, 65536, 65535, 2), TS_U32)), TS_U32, s4, 1, 0,
            4294836225, 4);
  CHECK_I64(ts_square(ts_cast(I64(s4, 4294967296, 4294967297, 3, 0), TS_U64)), TS_U64, s4, 0,
            8589934593, 9, 0);
  g_assert_null(ts_square(ts_scalar_bool(true)));
  expect_error(TS_ERR_DTYPE, "Square", "bool", NULL);
  ts_scope_end(s);
}

/* Rsqrt and Reciprocal: 1 / sqrt(x) and 1 / x, so the signed zero picks
 * the infinity's sign; floats only. */
static void test_rsqrt_reciprocal(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s7 = TS_SHAPE(7);
  for (size_t k = 0; k < G_N_ELEMENTS(FLOATS); k++) {
    ts_dtype dt = FLOATS[k];
    ts_tensor *x = ts_cast(F64(s7, 4, 0.25, 0, -0.0, -1, INFINITY, NAN), dt);
    CHECK(ts_rsqrt(x), dt, s7, 0.5, 2, INFINITY, -INFINITY, NAN, 0, NAN);
    ts_tensor *r = ts_reciprocal(ts_cast(F64(s7, 2, -4, 0, -0.0, INFINITY, -INFINITY, NAN), dt));
    CHECK(r, dt, s7, 0.5, -0.25, INFINITY, -INFINITY, 0, -0.0, NAN);
    g_assert_true(signbit(ts_tensor_get_f64(r, 5)));
  }
  CHECK(ts_rsqrt(ts_scalar_f64(2)), TS_F64, TS_SCALAR_SHAPE, 1 / sqrt(2.0));
  CHECK(ts_reciprocal(ts_scalar_f32(3)), TS_F32, TS_SCALAR_SHAPE, 1.0f / 3.0f);
  g_assert_null(ts_rsqrt(ts_scalar_i32(4)));
  expect_error(TS_ERR_DTYPE, "Rsqrt", "int32", NULL);
  g_assert_null(ts_reciprocal(ts_scalar_i64(4)));
  expect_error(TS_ERR_DTYPE, "Reciprocal", "int64", NULL);
  ts_scope_end(s);
}

/* Log1p and Expm1 keep their precision near 0 (log(1 + 1e-10) is off in
 * the eighth digit), -0.0 gives -0.0, and the ends of their domains. */
static void test_log1p_expm1(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s6 = TS_SHAPE(6);
  for (size_t k = 0; k < G_N_ELEMENTS(FLOATS); k++) {
    ts_dtype dt = FLOATS[k];
    ts_tensor *l = ts_log1p(ts_cast(F64(s6, 0, -0.0, -1, -2, INFINITY, NAN), dt));
    CHECK(l, dt, s6, 0, -0.0, -INFINITY, NAN, INFINITY, NAN);
    g_assert_true(signbit(ts_tensor_get_f64(l, 1)));
    ts_tensor *e = ts_expm1(ts_cast(F64(s6, 0, -0.0, -INFINITY, INFINITY, NAN, -100), dt));
    CHECK(e, dt, s6, 0, -0.0, -1, INFINITY, NAN, -1);
    g_assert_true(signbit(ts_tensor_get_f64(e, 1)));
  }
  ts_shape s2 = TS_SHAPE(2);
  CHECK(ts_log1p(F64(s2, 1e-10, 1)), TS_F64, s2, 9.999999999500001e-11, M_LN2);
  CHECK(ts_expm1(F64(s2, 1e-10, 1)), TS_F64, s2, 1.00000000005e-10, M_E - 1);
  CHECK_CLOSE(ts_log1p(F32(s2, 1e-10f, 1e-30f)), TS_F32, s2, 1e-10f, 1e-30f);
  g_assert_true(ts_tensor_get_f64(ts_log1p(ts_scalar_f32(1e-10f)), 0) > 0);
  g_assert_null(ts_log1p(ts_scalar_i32(1)));
  expect_error(TS_ERR_DTYPE, "Log1p", "int32", NULL);
  ts_scope_end(s);
}

/* Elu, Selu and Gelu as tf.nn's: exp(x) - 1 below 0 (-inf gives -1, and
 * Selu's -scale * alpha), -0.0 and nan through the other side, Selu's
 * constants rounded to the dtype (float32's scale 1.0507010221481323);
 * exact Gelu 0.5 x (1 + erf(x / sqrt(2))), nan at -inf as TensorFlow's
 * (-inf * 0). */
static void test_elu_selu_gelu(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s6 = TS_SHAPE(6);
  for (size_t k = 0; k < G_N_ELEMENTS(FLOATS); k++) {
    ts_dtype dt = FLOATS[k];
    ts_tensor *x = ts_cast(F64(s6, -INFINITY, -0.0, 0.5, 3, NAN, INFINITY), dt);
    ts_tensor *y = ts_elu(x);
    CHECK(y, dt, s6, -1, -0.0, 0.5, 3, NAN, INFINITY);
    g_assert_true(signbit(ts_tensor_get_f64(y, 1)));
    y = ts_gelu(x);
    g_assert_true(isnan(ts_tensor_get_f64(y, 0)));
    g_assert_true(ts_tensor_get_f64(y, 1) == 0 && signbit(ts_tensor_get_f64(y, 1)));
    g_assert_true(isnan(ts_tensor_get_f64(y, 4)) && ts_tensor_get_f64(y, 5) == INFINITY);
    g_assert_true(signbit(ts_tensor_get_f64(ts_selu(x), 1)));
  }
  CHECK(ts_selu(F64(s6, -INFINITY, -0.0, 1, 2, NAN, INFINITY)), TS_F64, s6, -1.7580993408473768, -0.0,
        1.0507009873554805, 2.101401974710961, NAN, INFINITY);
  CHECK(ts_selu(F32(s6, -INFINITY, -0.0, 1, 2, NAN, INFINITY)), TS_F32, s6, -1.7580993175506592, -0.0,
        1.0507010221481323, 2.1014020442962646, NAN, INFINITY);
  ts_shape s3 = TS_SHAPE(3);
  ts_tensor *x = F64(s3, -1, 1, 3);
  CHECK_CLOSE(ts_elu(x), TS_F64, s3, -0.6321205588285577, 1, 3);
  CHECK_CLOSE(ts_selu(x), TS_F64, s3, -1.1113307378125628, 1.0507009873554805, 3.1521029620664414);
  CHECK_CLOSE(ts_gelu(x), TS_F64, s3, -0.15865525393145707, 0.8413447460685429, 2.99595030590511);
  CHECK_CLOSE(ts_gelu(ts_cast(x, TS_F32)), TS_F32, s3, -0.15865525393145707, 0.8413447460685429,
              2.99595030590511);
  g_assert_null(ts_elu(ts_scalar_i32(1)));
  expect_error(TS_ERR_DTYPE, "Elu", "int32", NULL);
  g_assert_null(ts_selu(ts_scalar_i64(1)));
  expect_error(TS_ERR_DTYPE, "Selu", "int64", NULL);
  g_assert_null(ts_gelu(ts_scalar_bool(false)));
  expect_error(TS_ERR_DTYPE, "Gelu", "bool", NULL);
  ts_scope_end(s);
}

/* Relu6 clips to [0, 6] keeping nan and -0.0 (as Relu), in every numeric
 * dtype; Softsign x / (|x| + 1), so +-inf gives nan as TensorFlow's. */
static void test_relu6_softsign(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s8 = TS_SHAPE(8);
  for (size_t k = 0; k < G_N_ELEMENTS(FLOATS); k++) {
    ts_dtype dt = FLOATS[k];
    ts_tensor *x = ts_cast(F64(s8, -3, -0.0, 2.5, 6, 7, INFINITY, -INFINITY, NAN), dt);
    CHECK(ts_relu6(x), dt, s8, 0, -0.0, 2.5, 6, 6, 6, 0, NAN);
    g_assert_true(signbit(ts_tensor_get_f64(ts_relu6(x), 1)));
    ts_tensor *y = ts_softsign(x);
    CHECK(ts_slice(y, TS_INTS(1), TS_INTS(1)), dt, TS_SHAPE(1), -0.0);
    g_assert_true(signbit(ts_tensor_get_f64(y, 1)));
    CHECK(ts_slice(y, TS_INTS(5), TS_INTS(3)), dt, TS_SHAPE(3), NAN, NAN, NAN);
  }
  ts_shape s4 = TS_SHAPE(4);
  CHECK(ts_softsign(F64(s4, 1, -3, 0.5, 1e300)), TS_F64, s4, 0.5, -0.75, 1.0 / 3.0, 1);
  CHECK_I64(ts_relu6(I32(s4, INT32_MIN, 3, 100, -1)), TS_I32, s4, 0, 3, 6, 0);
  CHECK_I64(ts_relu6(I64(s4, INT64_MAX, 6, 7, INT64_MIN)), TS_I64, s4, 6, 6, 6, 0);
  CHECK_I64(ts_relu6(ts_cast(I32(s4, -128, 127, 5, 0), TS_I8)), TS_I8, s4, 0, 6, 5, 0);
  CHECK(ts_relu6(U8(s4, 255, 0, 5, 7)), TS_U8, s4, 6, 0, 5, 6);
  CHECK_I64(ts_relu6(ts_cast(I64(s4, INT64_MAX, 0, 6, 1), TS_U64)), TS_U64, s4, 6, 0, 6, 1);
  g_assert_null(ts_relu6(ts_scalar_bool(true)));
  expect_error(TS_ERR_DTYPE, "Relu6", "bool", NULL);
  g_assert_null(ts_softsign(ts_scalar_i32(1)));
  expect_error(TS_ERR_DTYPE, "Softsign", "int32", NULL);
  ts_scope_end(s);
}

/* IsNan, IsInf and IsFinite: bool of the input's shape for every float
 * (float16's 1e5 is inf), the sign of zero and of nan ignored; other
 * dtypes refused, as TensorFlow's. */
static void test_is_nan_inf_finite(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s7 = TS_SHAPE(7);
  for (size_t k = 0; k < G_N_ELEMENTS(FLOATS); k++) {
    ts_tensor *x = ts_cast(F64(s7, NAN, -NAN, INFINITY, -INFINITY, -0.0, 1e-300, 1e5), FLOATS[k]);
    bool big_inf = FLOATS[k] == TS_F16;
    CHECK(ts_is_nan(x), TS_BOOL, s7, 1, 1, 0, 0, 0, 0, 0);
    CHECK(ts_is_inf(x), TS_BOOL, s7, 0, 0, 1, 1, 0, 0, big_inf);
    CHECK(ts_is_finite(x), TS_BOOL, s7, 0, 0, 0, 0, 1, 1, !big_inf);
  }
  ts_shape s2x3 = TS_SHAPE(2, 3);
  ts_tensor *m = ts_div(ts_cast(I32(s2x3, 0, 1, -1, 2, 0, 3), TS_F32), ts_zeros(TS_F32, TS_SHAPE(3)));
  CHECK(ts_is_nan(m), TS_BOOL, s2x3, 1, 0, 0, 0, 1, 0);
  CHECK(ts_is_inf(m), TS_BOOL, s2x3, 0, 1, 1, 1, 0, 1);
  CHECK(ts_is_finite(ts_scalar_f64(DBL_MAX)), TS_BOOL, TS_SCALAR_SHAPE, 1);
  ts_shape empty = TS_SHAPE(0);
  check_header(ts_is_nan(ts_tensor_new(TS_F64, empty)), TS_BOOL, empty, 0);
  g_assert_null(ts_is_nan(ts_scalar_i32(1)));
  expect_error(TS_ERR_DTYPE, "IsNan", "int32", NULL);
  g_assert_null(ts_is_inf(ts_scalar_bool(true)));
  expect_error(TS_ERR_DTYPE, "IsInf", "bool", NULL);
  g_assert_null(ts_is_finite(U8(TS_SHAPE(1), 1)));
  expect_error(TS_ERR_DTYPE, "IsFinite", "uint8", NULL);
  ts_scope_end(s);
}

/* SquaredDifference: (a - b)^2 in every numeric dtype, the difference and
 * the product wrapping in integers (MIN - 1 is MAX, whose square is 1
 * mod 2^32; uint8 3 - 5 is 254, squared 4); inf - inf is nan. */
static void test_squared_difference(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s5 = TS_SHAPE(5);
  for (size_t k = 0; k < G_N_ELEMENTS(FLOATS); k++) {
    ts_dtype dt = FLOATS[k];
    ts_tensor *a = ts_cast(F64(s5, 3, -0.0, INFINITY, INFINITY, NAN), dt);
    ts_tensor *b = ts_cast(F64(s5, 5, 0.0, INFINITY, 1, 1), dt);
    ts_tensor *y = ts_squared_difference(a, b);
    CHECK(y, dt, s5, 4, 0, NAN, INFINITY, NAN);
    g_assert_false(signbit(ts_tensor_get_f64(y, 1)));
  }
  ts_shape s3 = TS_SHAPE(3), s2x3 = TS_SHAPE(2, 3);
  CHECK(ts_squared_difference(F32(s3, 1e20f, 0.5f, -2), F32(s3, -1e20f, 0.25f, 2)), TS_F32, s3, INFINITY,
        0.0625, 16);
  CHECK_I64(ts_squared_difference(I32(s3, INT32_MIN, 3, 46341), I32(s3, 1, -4, 0)), TS_I32, s3, 1, 49,
            -2147479015);
  CHECK_I64(ts_squared_difference(I64(s3, INT64_MIN, -5, 7), I64(s3, INT64_MAX, 5, 7)), TS_I64, s3, 1, 100, 0);
  CHECK(ts_squared_difference(U8(s3, 3, 0, 200), U8(s3, 5, 255, 100)), TS_U8, s3, 4, 1, 16);
  CHECK_I64(ts_squared_difference(ts_cast(I32(s3, -128, 100, -100), TS_I8), ts_cast(I32(s3, 127, -100, 0), TS_I8)),
            TS_I8, s3, 1, 64, 16);
  /* broadcasting: a row against a column */
  CHECK(ts_squared_difference(F64(TS_SHAPE(2, 1), 1, -1), F64(s3, 0, 1, 2)), TS_F64, s2x3, 1, 0, 1, 1, 4, 9);
  g_assert_null(ts_squared_difference(ts_scalar_bool(true), ts_scalar_bool(false)));
  expect_error(TS_ERR_DTYPE, "SquaredDifference", "bool", NULL);
  ts_scope_end(s);
}

/* Atan2(y, x) as C's and TensorFlow's: the quadrant from both signs, the
 * signed zeros (atan2(0, -0) is pi, atan2(-0, -0) -pi, atan2(-0, 0) -0),
 * the infinities; floats only. */
static void test_atan2(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s11 = TS_SHAPE(11);
  for (size_t k = 0; k < G_N_ELEMENTS(FLOATS); k++) {
    ts_dtype dt = FLOATS[k];
    ts_tensor *y = ts_cast(F64(s11, 1, 1, -1, 0.0, -0.0, 0.0, -0.0, INFINITY, 1, NAN, 1), dt);
    ts_tensor *x = ts_cast(F64(s11, 1, -1, -1, -0.0, -0.0, 0.0, 0.0, INFINITY, -INFINITY, 1, 0), dt);
    ts_tensor *r = ts_cast(ts_atan2(y, x), TS_F64);
    g_assert_cmpint(ts_tensor_dtype(ts_atan2(y, x)), ==, dt);
    /* each within the dtype's rounding of the exact angle */
    double tol = dt == TS_F64 ? 1e-15 : dt == TS_F32 ? 1e-7 : dt == TS_F16 ? 1e-3 : 1e-2;
    const double want[11] = { M_PI_4, 3 * M_PI_4, -3 * M_PI_4, M_PI, -M_PI, 0, -0.0, M_PI_4, M_PI, NAN, M_PI_2 };
    for (int i = 0; i < 11; i++) {
      double got = ts_tensor_get_f64(r, i);
      if (isnan(want[i]))
        g_assert_true(isnan(got));
      else
        g_assert_cmpfloat_with_epsilon(got, want[i], tol * 4);
    }
    g_assert_true(signbit(ts_tensor_get_f64(r, 6)) && !signbit(ts_tensor_get_f64(r, 5)));
  }
  CHECK(ts_atan2(F64(TS_SHAPE(2), 0.0, -0.0), F64(TS_SHAPE(2), -0.0, -0.0)), TS_F64, TS_SHAPE(2), M_PI, -M_PI);
  g_assert_null(ts_atan2(ts_scalar_i32(1), ts_scalar_i32(1)));
  expect_error(TS_ERR_DTYPE, "Atan2", "int32", NULL);
  ts_scope_end(s);
}

/* TruncateDiv and TruncateMod as C's / and % (tf.truncatediv,
 * tf.truncatemod): toward zero, the remainder the dividend's sign; MIN / -1
 * wraps to MIN and MIN % -1 is 0 (NumPy's wrap, where C's is undefined);
 * an integer divisor of 0 is an error.  Floats: the quotient truncated
 * (-0.5 gives -0.0, x / 0 inf or nan) and fmod (x % 0 nan, x % inf x). */
static void test_truncate_div_mod(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s7 = TS_SHAPE(7);
  ts_tensor *a = I32(s7, 7, -7, 7, -7, INT32_MIN, 0, -1), *b = I32(s7, 2, 2, -2, -2, -1, 5, 3);
  CHECK_I64(ts_truncatediv(a, b), TS_I32, s7, 3, -3, -3, 3, INT32_MIN, 0, 0);
  CHECK_I64(ts_truncatemod(a, b), TS_I32, s7, 1, -1, 1, -1, 0, 0, -1);
  ts_shape s2 = TS_SHAPE(2);
  CHECK_I64(ts_truncatediv(I64(s2, INT64_MIN, INT64_MIN), I64(s2, -1, 2)), TS_I64, s2, INT64_MIN, INT64_MIN / 2);
  CHECK_I64(ts_truncatemod(I64(s2, INT64_MIN, INT64_MAX), I64(s2, -1, -10)), TS_I64, s2, 0, 7);
  ts_tensor *a8 = ts_cast(I32(s2, -128, -127), TS_I8), *b8 = ts_cast(I32(s2, -1, 10), TS_I8);
  CHECK_I64(ts_truncatediv(a8, b8), TS_I8, s2, -128, -12);
  CHECK_I64(ts_truncatemod(a8, b8), TS_I8, s2, 0, -7);
  CHECK(ts_truncatediv(U8(s2, 255, 7), U8(s2, 2, 9)), TS_U8, s2, 127, 0);
  CHECK(ts_truncatemod(U8(s2, 255, 7), U8(s2, 7, 9)), TS_U8, s2, 3, 7);
  g_assert_null(ts_truncatediv(I32(s2, 1, 2), I32(s2, 1, 0)));
  expect_error(TS_ERR_INVALID_ARGUMENT, "TruncateDiv", "Integer division by zero", NULL);
  g_assert_null(ts_truncatemod(ts_cast(I32(s2, 1, 2), TS_U16), ts_cast(I32(s2, 0, 1), TS_U16)));
  expect_error(TS_ERR_INVALID_ARGUMENT, "TruncateMod", "Integer division by zero", NULL);

  ts_shape s8 = TS_SHAPE(8);
  for (size_t k = 0; k < G_N_ELEMENTS(FLOATS); k++) {
    ts_dtype dt = FLOATS[k];
    ts_tensor *fa = ts_cast(F64(s8, 7.5, -7.5, 7.5, -0.5, 1, -1, 0, INFINITY), dt);
    ts_tensor *fb = ts_cast(F64(s8, 2, 2, -2, 1, 0, 0, 0, 2), dt);
    ts_tensor *q = ts_truncatediv(fa, fb);
    CHECK(q, dt, s8, 3, -3, -3, -0.0, INFINITY, -INFINITY, NAN, INFINITY);
    g_assert_true(signbit(ts_tensor_get_f64(q, 3)));
    ts_tensor *m = ts_truncatemod(ts_cast(F64(s8, 7.5, -7.5, 7.5, -0.0, 1, INFINITY, 5, -6), dt),
                                  ts_cast(F64(s8, 2, 2, -2, 3, 0, 1, INFINITY, 3), dt));
    CHECK(m, dt, s8, 1.5, -1.5, 1.5, -0.0, NAN, NAN, 5, -0.0);
    g_assert_true(signbit(ts_tensor_get_f64(m, 3)) && signbit(ts_tensor_get_f64(m, 7)));
  }
  g_assert_null(ts_truncatediv(ts_scalar_bool(true), ts_scalar_bool(true)));
  expect_error(TS_ERR_DTYPE, "TruncateDiv", "bool", NULL);
  ts_scope_end(s);
}

/* DivNoNan: 0 (positive) wherever the divisor is 0, even of nan or inf,
 * else a / b; Xlogy: 0 wherever x is 0, even for y 0, nan or inf, else
 * x log(y); floats only, as TensorFlow's. */
static void test_div_no_nan_xlogy(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s9 = TS_SHAPE(9);
  for (size_t k = 0; k < G_N_ELEMENTS(FLOATS); k++) {
    ts_dtype dt = FLOATS[k];
    ts_tensor *a = ts_cast(F64(s9, 1, NAN, INFINITY, 1, 1, -3, 0, 1, NAN), dt);
    ts_tensor *b = ts_cast(F64(s9, 0, 0, 0, -0.0, 2, 4, 0, INFINITY, 1), dt);
    ts_tensor *y = ts_div_no_nan(a, b);
    CHECK(y, dt, s9, 0, 0, 0, 0, 0.5, -0.75, 0, 0, NAN);
    g_assert_false(signbit(ts_tensor_get_f64(y, 3)));
    ts_tensor *x = ts_cast(F64(s9, 0, 0, 0, -0.0, 1, -1, 1, NAN, 3), dt);
    ts_tensor *z = ts_cast(F64(s9, 0, NAN, INFINITY, -1, 0, 0, -1, 1, 1), dt);
    CHECK(ts_xlogy(x, z), dt, s9, 0, 0, 0, 0, -INFINITY, INFINITY, NAN, NAN, 0);
  }
  CHECK_CLOSE(ts_xlogy(F64(TS_SHAPE(2), 2, 0.5), F64(TS_SHAPE(2), M_E, 4)), TS_F64, TS_SHAPE(2), 2, M_LN2);
  /* broadcasting: the divisor a scalar 0 */
  CHECK(ts_div_no_nan(F32(TS_SHAPE(3), 1, NAN, -2), ts_scalar_f32(0)), TS_F32, TS_SHAPE(3), 0, 0, 0);
  g_assert_null(ts_div_no_nan(ts_scalar_i32(1), ts_scalar_i32(0)));
  expect_error(TS_ERR_DTYPE, "DivNoNan", "int32", NULL);
  g_assert_null(ts_xlogy(ts_scalar_i64(1), ts_scalar_i64(1)));
  expect_error(TS_ERR_DTYPE, "Xlogy", "int64", NULL);
  ts_scope_end(s);
}

static void test_broadcast_basic(void)
{
  ts_scope *s = ts_scope_begin();
  CHECK(ts_add(F32(TS_SHAPE(3, 1), 0, 10, 20), F32(TS_SHAPE(1, 4), 1, 2, 3, 4)), TS_F32,
        TS_SHAPE(3, 4), 1, 2, 3, 4, 11, 12, 13, 14, 21, 22, 23, 24);
  CHECK(ts_sub(I32(TS_SHAPE(1, 4), 1, 2, 3, 4), I32(TS_SHAPE(3, 1), 0, 10, 20)), TS_I32,
        TS_SHAPE(3, 4), 1, 2, 3, 4, -9, -8, -7, -6, -19, -18, -17, -16);
  CHECK(ts_mul(ts_scalar_f64(2), F64(TS_SHAPE(2, 3), 1, 2, 3, 4, 5, 6)), TS_F64, TS_SHAPE(2, 3),
        2, 4, 6, 8, 10, 12);
  CHECK(ts_sub(F64(TS_SHAPE(2, 3), 1, 2, 3, 4, 5, 6), ts_scalar_f64(1)), TS_F64, TS_SHAPE(2, 3),
        0, 1, 2, 3, 4, 5);
  CHECK(ts_add(I64(TS_SHAPE(2, 3), 1, 2, 3, 4, 5, 6), I64(TS_SHAPE(3), 10, 20, 30)), TS_I64,
        TS_SHAPE(2, 3), 11, 22, 33, 14, 25, 36);
  CHECK(ts_less(I32(TS_SHAPE(2, 1), 2, 5), I32(TS_SHAPE(3), 1, 3, 6)), TS_BOOL, TS_SHAPE(2, 3),
        0, 1, 1, 0, 0, 1);
  /* [2,1,3] with [2,1]: the middle dim of the second broadcasts the first */
  CHECK(ts_add(I32(TS_SHAPE(2, 1, 3), 0, 1, 2, 3, 4, 5), I32(TS_SHAPE(2, 1), 10, 20)), TS_I32,
        TS_SHAPE(2, 2, 3), 10, 11, 12, 20, 21, 22, 13, 14, 15, 23, 24, 25);
  /* size-1 dims everywhere */
  CHECK(ts_add(F32(TS_SHAPE(1, 1), 1), F32(TS_SHAPE(1), 2)), TS_F32, TS_SHAPE(1, 1), 3);
  CHECK(ts_add(ts_scalar_f32(1), ts_scalar_f32(2)), TS_F32, TS_SCALAR_SHAPE, 3);
  ts_scope_end(s);
}

static void test_broadcast_empty(void)
{
  ts_scope *s = ts_scope_begin();
  check_header(ts_add(ts_tensor_new(TS_F32, TS_SHAPE(2, 0)), F32(TS_SHAPE(1), 1)), TS_F32,
               TS_SHAPE(2, 0), 0);
  check_header(ts_greater(ts_tensor_new(TS_I32, TS_SHAPE(0)), ts_scalar_i32(1)), TS_BOOL,
               TS_SHAPE(0), 0);
  check_header(ts_mul(ts_tensor_new(TS_F64, TS_SHAPE(3, 1, 2)), ts_tensor_new(TS_F64, TS_SHAPE(0, 1))),
               TS_F64, TS_SHAPE(3, 0, 2), 0);
  check_header(ts_neg(ts_tensor_new(TS_I64, TS_SHAPE(0, 5))), TS_I64, TS_SHAPE(0, 5), 0);
  ts_scope_end(s);
}

static void test_broadcast_errors(void)
{
  ts_scope *s = ts_scope_begin();
  g_assert_null(ts_add(ts_tensor_new(TS_F32, TS_SHAPE(2, 3)), ts_tensor_new(TS_F32, TS_SHAPE(3, 2))));
  expect_error(TS_ERR_SHAPE, "Add", "f32[2,3]", "f32[3,2]", NULL);
  g_assert_null(ts_equal(ts_tensor_new(TS_I32, TS_SHAPE(2, 0)), ts_tensor_new(TS_I32, TS_SHAPE(3))));
  expect_error(TS_ERR_SHAPE, "Equal", "i32[2,0]", "i32[3]", NULL);
  /* the message shows the dtypes after promotion */
  g_assert_null(ts_mul(ts_tensor_new(TS_I32, TS_SHAPE(4)), ts_tensor_new(TS_F32, TS_SHAPE(5))));
  expect_error(TS_ERR_SHAPE, "Mul", "f32[4]", "f32[5]", NULL);
  ts_scope_end(s);
}

/* Larger shapes run the blocked loops, their tails and many broadcast rows;
 * expected values come from index arithmetic. */
static void test_broadcast_large(void)
{
  ts_scope *s = ts_scope_begin();
  enum { R = 5, C = 37 };
  float a[R * C], b[C], col[R];
  for (int i = 0; i < R * C; i++)
    a[i] = (float)i;
  for (int j = 0; j < C; j++)
    b[j] = (float)(1000 * j);
  for (int i = 0; i < R; i++)
    col[i] = (float)(-100000 * i);
  ts_tensor *ta = ts_constant(TS_F32, TS_SHAPE(R, C), a);
  ts_tensor *tb = ts_constant(TS_F32, TS_SHAPE(C), b);
  ts_tensor *tc = ts_constant(TS_F32, TS_SHAPE(R, 1), col);

  ts_tensor *sum = ts_add(ta, tb);
  ts_tensor *outer = ts_add(tc, tb);
  ts_tensor *three = ts_add(ts_add(tc, ta), tb);
  ts_tensor *same = ts_sub(ta, ta);
  ts_tensor *scal = ts_mul(ta, ts_scalar_f32(2));
  ts_tensor *relu = ts_relu(ts_add(ta, ts_scalar_f32(-100)));
  ts_tensor *all[] = { sum, outer, three, same, scal, relu };
  for (int i = 0; i < (int)G_N_ELEMENTS(all); i++)
    check_header(all[i], TS_F32, TS_SHAPE(R, C), R * C);
  for (int i = 0; i < R; i++) {
    for (int j = 0; j < C; j++) {
      int k = i * C + j;
      g_assert_cmpfloat(ts_tensor_get_f64(sum, k), ==, k + 1000 * j);
      g_assert_cmpfloat(ts_tensor_get_f64(outer, k), ==, -100000 * i + 1000 * j);
      g_assert_cmpfloat(ts_tensor_get_f64(three, k), ==, -100000 * i + k + 1000 * j);
      g_assert_cmpfloat(ts_tensor_get_f64(same, k), ==, 0);
      g_assert_cmpfloat(ts_tensor_get_f64(scal, k), ==, 2 * k);
      g_assert_cmpfloat(ts_tensor_get_f64(relu, k), ==, k > 100 ? k - 100 : 0);
    }
  }

  /* rank 4 with alternating broadcast dims: [2,1,3,1] + [4,1,5] -> [2,4,3,5] */
  int32_t x[6] = { 0, 1, 2, 3, 4, 5 }, y[20];
  for (int i = 0; i < 20; i++)
    y[i] = 100 * i;
  ts_tensor *z = ts_add(ts_constant(TS_I32, TS_SHAPE(2, 1, 3, 1), x),
                        ts_constant(TS_I32, TS_SHAPE(4, 1, 5), y));
  check_header(z, TS_I32, TS_SHAPE(2, 4, 3, 5), 120);
  for (int i0 = 0, k = 0; i0 < 2; i0++)
    for (int i1 = 0; i1 < 4; i1++)
      for (int i2 = 0; i2 < 3; i2++)
        for (int i3 = 0; i3 < 5; i3++, k++)
          g_assert_cmpint(ts_tensor_get_i64(z, k), ==, x[i0 * 3 + i2] + y[i1 * 5 + i3]);
  ts_scope_end(s);
}

/* ---- where --------------------------------------------------------------------------- */

static void test_where(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s3 = TS_SHAPE(3);
  ts_tensor *c = BOOL(s3, true, false, true);
  CHECK(ts_where(c, F32(s3, 1, 2, 3), F32(s3, -1, -2, -3)), TS_F32, s3, 1, -2, 3);
  CHECK_I64(ts_where(c, I64(s3, INT64_MAX, 2, 3), ts_scalar_i64(INT64_MIN)), TS_I64, s3,
            INT64_MAX, INT64_MIN, 3);
  CHECK(ts_where(c, U8(s3, 1, 2, 3), u8_scalar(9)), TS_U8, s3, 1, 9, 3);
  CHECK(ts_where(c, ts_scalar_bool(false), ts_scalar_bool(true)), TS_BOOL, s3, 0, 1, 0);
  /* all three broadcast: [2,1] cond, [1,3] x, [] y */
  CHECK(ts_where(BOOL(TS_SHAPE(2, 1), true, false), I32(TS_SHAPE(1, 3), 1, 2, 3), ts_scalar_i32(0)),
        TS_I32, TS_SHAPE(2, 3), 1, 2, 3, 0, 0, 0);
  CHECK(ts_where(BOOL(TS_SHAPE(3), true, false, true), F64(TS_SHAPE(2, 1), 1, 2),
                 F64(TS_SHAPE(2, 3), 10, 20, 30, 40, 50, 60)),
        TS_F64, TS_SHAPE(2, 3), 1, 20, 1, 2, 50, 2);
  check_header(ts_where(ts_scalar_bool(true), ts_tensor_new(TS_F32, TS_SHAPE(0, 2)), ts_scalar_f32(1)),
               TS_F32, TS_SHAPE(0, 2), 0);
  /* x and y promote together; the condition stays bool */
  CHECK(ts_where(c, I32(s3, 1, 2, 3), ts_scalar_f32(0.5f)), TS_F32, s3, 1, 0.5, 3);
  CHECK(ts_where(c, ts_scalar_bool(true), U8(s3, 7, 8, 9)), TS_U8, s3, 1, 8, 1);
  CHECK(ts_where(c, F64(s3, 1, 2, 3), I64(s3, 4, 5, 6)), TS_F64, s3, 1, 5, 3);

  g_assert_null(ts_where(I32(s3, 1, 0, 1), ts_scalar_f32(1), ts_scalar_f32(2)));
  expect_error(TS_ERR_DTYPE, "Select", "condition must be bool", "i32[3]", NULL);
  g_assert_null(ts_where(c, ts_tensor_new(TS_F32, TS_SHAPE(2)), ts_scalar_f32(2)));
  expect_error(TS_ERR_SHAPE, "Select", "bool[3]", "f32[2]", "f32[]", NULL);
  g_assert_null(ts_where(c, ts_scalar_f32(2), ts_tensor_new(TS_I32, TS_SHAPE(4))));
  expect_error(TS_ERR_SHAPE, "Select", "bool[3]", "f32[]", "f32[4]", NULL);
  ts_scope_end(s);
}

/* ---- cast ------------------------------------------------------------------------------ */

/* As NumPy's astype (and TensorFlow's Cast on a CPU): truncated toward
 * zero and wrapped modulo 2^bits, through int32 for the types of 32 bits
 * or fewer but uint32, through int64 for uint32 and int64; where NumPy
 * warns of an invalid value (NaN, inf, out of the intermediate's range)
 * the x86 conversion's INT_MIN, wrapped.  Every value below is NumPy's. */
static void test_cast_float_to_int(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s8 = TS_SHAPE(8);
  ts_tensor *f = F32(s8, 1.9f, -1.9f, 3e9f, -3e9f, NAN, INFINITY, -INFINITY, -0.5f);
  CHECK_I64(ts_cast(f, TS_I32), TS_I32, s8, 1, -1, INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN, 0);
  CHECK_I64(ts_cast(f, TS_I64), TS_I64, s8, 1, -1, 3000000000, -3000000000, INT64_MIN, INT64_MIN, INT64_MIN,
            0);
  CHECK_I64(ts_cast(f, TS_U8), TS_U8, s8, 1, 255, 0, 0, 0, 0, 0, 0);
  ts_shape s5 = TS_SHAPE(5);
  ts_tensor *d = F64(s5, 0x1p63, -0x1p63, 1e19, 2147483647.9, 255.9);
  CHECK_I64(ts_cast(d, TS_I64), TS_I64, s5, INT64_MIN, INT64_MIN, INT64_MIN, 2147483647, 255);
  CHECK_I64(ts_cast(d, TS_I32), TS_I32, s5, INT32_MIN, INT32_MIN, INT32_MIN, INT32_MAX, 255);
  CHECK_I64(ts_cast(d, TS_U8), TS_U8, s5, 0, 0, 0, 255, 255);

  /* negative values to unsigned types, and values past a narrow type, wrap */
  ts_tensor *w = F64(s5, -1, -1.5, -200, 300, 70000);
  CHECK_I64(ts_cast(w, TS_U8), TS_U8, s5, 255, 255, 56, 44, 112);
  CHECK_I64(ts_cast(w, TS_I8), TS_I8, s5, -1, -1, 56, 44, 112);
  CHECK_I64(ts_cast(w, TS_I16), TS_I16, s5, -1, -1, -200, 300, 4464);
  CHECK_I64(ts_cast(w, TS_U16), TS_U16, s5, 65535, 65535, 65336, 300, 4464);
  CHECK_I64(ts_cast(ts_cast(w, TS_F32), TS_U32), TS_U32, s5, 4294967295, 4294967295, 4294967096, 300, 70000);
  ts_tensor *u64 = ts_cast(F64(TS_SHAPE(6), -1, -200, 5e9, 1e19, NAN, 0x1p64), TS_U64);
  check_header(u64, TS_U64, TS_SHAPE(6), 6);
  const uint64_t want_u64[] = { UINT64_MAX, UINT64_MAX - 199, 5000000000, 10000000000000000000u,
                                UINT64_C(1) << 63, 0 };
  g_assert_cmpmem(ts_tensor_data(u64), sizeof want_u64, want_u64, sizeof want_u64);
  ts_scope_end(s);
}

static void test_cast_other(void)
{
  ts_scope *s = ts_scope_begin();
  ts_shape s4 = TS_SHAPE(4);
  /* integers wrap like NumPy's astype */
  CHECK_I64(ts_cast(I64(s4, 4294967297, -1, INT64_MIN, 7), TS_I32), TS_I32, s4, 1, -1, 0, 7);
  CHECK_I64(ts_cast(I32(s4, 259, -1, 128, 7), TS_U8), TS_U8, s4, 3, 255, 128, 7);
  CHECK_I64(ts_cast(U8(s4, 0, 1, 128, 255), TS_I32), TS_I32, s4, 0, 1, 128, 255);
  /* to bool is x != 0 (NaN is true); from bool is 0 or 1 */
  CHECK(ts_cast(F32(s4, 0, -0.0f, 0.5f, NAN), TS_BOOL), TS_BOOL, s4, 0, 0, 1, 1);
  CHECK(ts_cast(I64(s4, 0, INT64_MIN, 1, 256), TS_BOOL), TS_BOOL, s4, 0, 1, 1, 1);
  CHECK(ts_cast(U8(s4, 0, 2, 0, 1), TS_BOOL), TS_BOOL, s4, 0, 1, 0, 1);
  ts_tensor *b = BOOL(s4, true, false, true, false);
  CHECK(ts_cast(b, TS_F32), TS_F32, s4, 1, 0, 1, 0);
  CHECK(ts_cast(b, TS_I64), TS_I64, s4, 1, 0, 1, 0);
  CHECK(ts_cast(b, TS_BOOL), TS_BOOL, s4, 1, 0, 1, 0);
  /* floats widen and narrow */
  CHECK(ts_cast(F64(s4, 0.1, 1e300, -1e300, NAN), TS_F32), TS_F32, s4, (float)0.1, INFINITY,
        -INFINITY, NAN);
  CHECK(ts_cast(F32(s4, 0.5f, -2, 0, 1e30f), TS_F64), TS_F64, s4, 0.5, -2, 0, (double)1e30f);
  CHECK(ts_cast(I64(s4, 3, -3, INT64_C(1) << 53, 0), TS_F64), TS_F64, s4, 3, -3, 0x1p53, 0);
  CHECK(ts_cast(I32(s4, 3, -3, 16777217, 0), TS_F32), TS_F32, s4, 3, -3, 16777216, 0);
  /* empty and rank 0 */
  check_header(ts_cast(ts_tensor_new(TS_I32, TS_SHAPE(0, 3)), TS_F64), TS_F64, TS_SHAPE(0, 3), 0);
  CHECK(ts_cast(ts_scalar_f64(-7.5), TS_I32), TS_I32, TS_SCALAR_SHAPE, -7);

  g_assert_null(ts_cast(ts_scalar_f32(1), (ts_dtype)42));
  expect_error(TS_ERR_DTYPE, "Cast", "42", NULL);
  ts_scope_end(s);
}

/* Every cast pair on the values 0..3 (representable everywhere) round-trips. */
static void test_cast_all_pairs(void)
{
  ts_scope *s = ts_scope_begin();
  for (int from = 0; from < TS_NUMERIC_DTYPE_COUNT; from++) {
    for (int to = 0; to < TS_NUMERIC_DTYPE_COUNT; to++) {
      ts_tensor *x = ts_cast(F64(TS_SHAPE(2, 2), 0, 1, 2, 3), (ts_dtype)from);
      ts_tensor *y = ts_cast(x, (ts_dtype)to);
      check_header(y, (ts_dtype)to, TS_SHAPE(2, 2), 4);
      for (int i = 0; i < 4; i++) {
        double v = ts_tensor_get_f64(x, i);
        g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, to == TS_BOOL ? v != 0 : v);
      }
    }
  }
  ts_scope_end(s);
}

/* ---- the 8- to 64-bit integers and the 16-bit floats -------------------------------------- */

/* The bits of a 16-bit float tensor's elements. */
static void check_bits(const ts_tensor *t, ts_dtype dtype, const uint16_t *want, int n)
{
  g_assert_nonnull(t);
  g_assert_cmpint(ts_tensor_dtype(t), ==, dtype);
  g_assert_cmpint(ts_tensor_size(t), ==, n);
  const uint16_t *got = ts_tensor_data(t);
  for (int i = 0; i < n; i++)
    if (got[i] != want[i])
      g_error("%s element %d: bits 0x%04x, expected 0x%04x", ts_dtype_name(dtype), i, got[i], want[i]);
}

/* float32 to float16 and bfloat16 round to nearest, ties to even: the bits
 * numpy 1.24 gives (bfloat16: float32's bits rounded as ml_dtypes does),
 * overflow to Inf, underflow through subnormals to a signed zero. */
static void test_cast_half_rounding(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = F32(TS_SHAPE(16), 0.1f, 1.0f / 3, 65504, 65520, 65519.99f, 6e-8f, 2.98e-8f, 2.99e-8f,
                     1e-9f, -0.0f, 1.00048828125f, 1.00146484375f, 3.14159f, 1.00390625f,
                     1.01171875f, -INFINITY);
  check_bits(ts_cast(x, TS_F16), TS_F16,
             (const uint16_t[]){ 0x2e66, 0x3555, 0x7bff, 0x7c00, 0x7bff, 0x0001, 0x0000, 0x0001, 0x0000,
                                 0x8000, 0x3c00, 0x3c02, 0x4248, 0x3c04, 0x3c0c, 0xfc00 }, 16);
  check_bits(ts_cast(x, TS_BF16), TS_BF16,
             (const uint16_t[]){ 0x3dcd, 0x3eab, 0x4780, 0x4780, 0x4780, 0x3381, 0x3300, 0x3300, 0x3089,
                                 0x8000, 0x3f80, 0x3f80, 0x4049, 0x3f80, 0x3f82, 0xff80 }, 16);
  /* NaN stays NaN, its sign kept */
  ts_tensor *nan = F32(TS_SHAPE(2), NAN, -NAN);
  for (int k = 0; k < 2; k++) {
    ts_tensor *h = ts_cast(nan, k ? TS_BF16 : TS_F16);
    g_assert_true(isnan(ts_tensor_get_f64(h, 0)) && isnan(ts_tensor_get_f64(h, 1)));
    g_assert_false(signbit(ts_tensor_get_f64(h, 0)));
    g_assert_true(signbit(ts_tensor_get_f64(ts_cast(h, TS_F32), 1)));
  }
  /* float64 rounds once: 1 + 2^-11 + 2^-40 is above the tie, so it rounds up */
  check_bits(ts_cast(F64(TS_SHAPE(1), 1 + 0x1p-11 + 0x1p-40), TS_F16), TS_F16, (const uint16_t[]){ 0x3c01 }, 1);
  ts_scope_end(s);
}

/* Every float16 and bfloat16 widens exactly and narrows back to itself. */
static void test_cast_half_round_trip(void)
{
  ts_scope *s = ts_scope_begin();
  uint16_t *bits = g_new(uint16_t, 65536);
  for (int i = 0; i < 65536; i++)
    bits[i] = (uint16_t)i;
  for (int k = 0; k < 2; k++) {
    ts_dtype dt = k ? TS_BF16 : TS_F16;
    ts_tensor *h = ts_constant(dt, TS_SHAPE(65536), bits);
    ts_tensor *back = ts_cast(ts_cast(h, TS_F32), dt), *back64 = ts_cast(ts_cast(h, TS_F64), dt);
    const uint16_t *b = ts_tensor_data(back), *b64 = ts_tensor_data(back64);
    for (int i = 0; i < 65536; i++) {
      bool is_nan = isnan(ts_tensor_get_f64(h, i));
      g_assert_true(is_nan ? isnan(ts_tensor_get_f64(back, i)) : b[i] == i);
      g_assert_true(is_nan ? isnan(ts_tensor_get_f64(back64, i)) : b64[i] == i);
    }
    /* two values (numpy: bits viewed as float16, or shifted into float32's) */
    g_assert_cmpfloat(ts_tensor_get_f64(h, 1), ==, k ? 0x1p-133 : 0x1p-24);
    g_assert_cmpfloat(ts_tensor_get_f64(h, 0x3c00), ==, k ? 0.0078125 : 1.0);
  }
  g_free(bits);
  ts_scope_end(s);
}
/* The integer rows wrap as NumPy's (int8 127 + 1 is -128), the 16-bit
 * floats compute in float32 and round back, reductions, ArgMax, MatMul and
 * Where take the new dtypes; a row that does not take one says so. */
static void test_new_dtypes_ops(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *i8 = ts_cast(I32(TS_SHAPE(3), 127, -128, 5), TS_I8);
  CHECK_I64(ts_add(i8, ts_cast(I32(TS_SHAPE(3), 1, -1, 3), TS_I8)), TS_I8, TS_SHAPE(3), -128, 127, 8);
  CHECK_I64(ts_neg(i8), TS_I8, TS_SHAPE(3), -127, -128, -5);
  ts_tensor *u16 = ts_cast(I32(TS_SHAPE(2), 300, 65535), TS_U16);
  CHECK_I64(ts_mul(u16, u16), TS_U16, TS_SHAPE(2), 24464, 1); /* (300 * 300) % 65536 */
  CHECK_I64(ts_floordiv(u16, ts_cast(I32(TS_SHAPE(2), 7, 2), TS_U16)), TS_U16, TS_SHAPE(2), 42, 32767);
  ts_tensor *u64 = ts_cast(F64(TS_SHAPE(2), 0x1p63, 1), TS_U64);
  ts_tensor *sum = ts_add(u64, u64); /* 2^64 wraps to 0 */
  g_assert_cmpuint(((const uint64_t *)ts_tensor_data(sum))[0], ==, 0);
  g_assert_cmpuint(((const uint64_t *)ts_tensor_data(sum))[1], ==, 2);
  g_assert_cmpuint(((const uint64_t *)ts_tensor_data(ts_cast(F64(TS_SHAPE(1), 0x1p63), TS_U64)))[0], ==,
                   UINT64_C(1) << 63);
  CHECK_I64(ts_greater(ts_cast(I32(TS_SHAPE(2), -1, 2), TS_I16), ts_cast(I32(TS_SHAPE(2), 0, 1), TS_I16)),
            TS_BOOL, TS_SHAPE(2), 0, 1);

  /* float16: 2048 + 1 is 2049 in float32, a tie between 2048 and 2050: 2048 */
  ts_tensor *h = ts_cast(F32(TS_SHAPE(3), 2048, 0.5f, -3), TS_F16);
  CHECK(ts_add(h, ts_cast(F32(TS_SHAPE(3), 1, 0.25f, 1), TS_F16)), TS_F16, TS_SHAPE(3), 2048, 0.75, -2);
  CHECK(ts_sqrt(ts_cast(F32(TS_SHAPE(1), 2), TS_BF16)), TS_BF16, TS_SHAPE(1), 1.4140625);
  CHECK(ts_reduce_sum(h, TS_INTS(0), false), TS_F16, TS_SCALAR_SHAPE, 2046);
  CHECK(ts_reduce_max(h, TS_INTS(0), false), TS_F16, TS_SCALAR_SHAPE, 2048);
  CHECK_I64(ts_argmax(ts_cast(F32(TS_SHAPE(3), 1, NAN, 2), TS_BF16), 0), TS_I64, TS_SCALAR_SHAPE, 1);
  CHECK_I64(ts_reduce_sum(ts_cast(I32(TS_SHAPE(3), 100, 100, 100), TS_I8), TS_INTS(0), false), TS_I8,
            TS_SCALAR_SHAPE, 44);
  ts_tensor *a = ts_cast(F32(TS_SHAPE(2, 2), 1, 2, 3, 4), TS_F16);
  CHECK(ts_matmul(a, a), TS_F16, TS_SHAPE(2, 2), 7, 10, 15, 22);
  CHECK_I64(ts_matmul(ts_cast(a, TS_U32), ts_cast(a, TS_U32)), TS_U32, TS_SHAPE(2, 2), 7, 10, 15, 22);
  CHECK(ts_where(BOOL(TS_SHAPE(2), true, false), ts_cast(F32(TS_SHAPE(2), 1, 2), TS_BF16),
                 ts_cast(F32(TS_SHAPE(2), 3, 4), TS_BF16)), TS_BF16, TS_SHAPE(2), 1, 4);
  CHECK(ts_reshape(a, TS_SHAPE(4)), TS_F16, TS_SHAPE(4), 1, 2, 3, 4);
  CHECK(ts_transpose(a, TS_INTS(1, 0)), TS_F16, TS_SHAPE(2, 2), 1, 3, 2, 4);

  /* rows that do not take a dtype say so */
  g_assert_null(ts_exp(i8));
  expect_error(TS_ERR_DTYPE, "Exp", "expected float32, float64, float16 or bfloat16, got int8", "i8[3]", NULL);
  g_assert_null(ts_logical_not(h));
  expect_error(TS_ERR_DTYPE, "LogicalNot", "expected bool, got float16", "f16[3]", NULL);
  /* float16 with bfloat16 promotes to float32 (ml_dtypes' rule) */
  CHECK(ts_add(ts_cast(F32(TS_SHAPE(1), 1), TS_F16), ts_cast(F32(TS_SHAPE(1), 2), TS_BF16)), TS_F32,
        TS_SHAPE(1), 3);
  ts_scope_end(s);
}

/* ---- NULL propagation ---------------------------------------------------------------------- */

static void test_null_propagation(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = I32(TS_SHAPE(2), 1, 2);
  ts_tensor *bad = ts_add(ts_tensor_new(TS_F32, TS_SHAPE(2)), ts_tensor_new(TS_F32, TS_SHAPE(3)));
  g_assert_null(bad);
  g_assert_null(ts_add(bad, x));
  g_assert_null(ts_mul(x, bad));
  g_assert_null(ts_div(x, bad));
  g_assert_null(ts_div(bad, x));
  g_assert_null(ts_pow(bad, bad));
  g_assert_null(ts_logical_and(bad, ts_scalar_bool(true)));
  g_assert_null(ts_exp(bad));
  g_assert_null(ts_relu(bad));
  g_assert_null(ts_cast(bad, TS_I32));
  g_assert_null(ts_where(bad, x, ts_scalar_f32(1)));
  g_assert_null(ts_where(ts_scalar_bool(true), x, bad));
  g_assert_null(ts_where(ts_scalar_bool(true), bad, ts_scalar_f64(1)));
  g_assert_null(ts_relu(ts_exp(ts_add(bad, x))));
  expect_error(TS_ERR_SHAPE, "Add", "f32[2]", "f32[3]", NULL);
  g_assert_false(ts_failed());
  ts_scope_end(s);
}

/* The 16-bit floats are floats, but the rows whose loops exist only for
 * f32 and f64 (LSTMSequence) refuse them by name, never run a loop of the
 * wrong width (a float16 Conv2D wrote f64 results past its output:
 * fuzz-onnx, through AveragePool).  Conv2D, ConvTranspose and Softmax take
 * them now, through float32 (test-ops-linalg, test-ops-reduce-nn): the
 * right width. */
static void test_f16_refused_by_f32_f64_rows(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = ts_cast(ts_ones(TS_F32, TS_SHAPE(2, 1, 3)), TS_F16);
  ts_tensor *w = ts_cast(ts_ones(TS_F32, TS_SHAPE(3, 8)), TS_F16), *r = ts_cast(ts_ones(TS_F32, TS_SHAPE(2, 8)), TS_F16);
  ts_tensor *b = ts_cast(ts_ones(TS_F32, TS_SHAPE(8)), TS_F16), *h0 = ts_cast(ts_ones(TS_F32, TS_SHAPE(1, 2)), TS_F16);
  ts_tensor *y = NULL, *h = NULL, *c = NULL;
  g_assert_false(ts_lstm_sequence(x, w, r, b, h0, h0, NULL, false, &y, &h, &c));
  expect_error(TS_ERR_DTYPE, "LSTMSequence", "f32 or f64", "f16", NULL);
  ts_tensor *conv = ts_conv2d(ts_cast(ts_ones(TS_F32, TS_SHAPE(1, 4, 4, 1)), TS_F16),
                              ts_cast(ts_ones(TS_F32, TS_SHAPE(3, 3, 1, 1)), TS_F16), 1, 1, TS_PADDING_VALID);
  g_assert_nonnull(conv);
  g_assert_cmpint(ts_tensor_size(conv), ==, 4);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(conv, i), ==, 9);
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/ops/elementwise/arith", test_arith);
  g_test_add_func("/ops/elementwise/wrapping", test_wrapping);
  g_test_add_func("/ops/elementwise/div", test_div);
  g_test_add_func("/ops/elementwise/floor-int", test_floor_int);
  g_test_add_func("/ops/elementwise/floor-float", test_floor_float);
  g_test_add_func("/ops/elementwise/division-by-zero", test_division_by_zero);
  g_test_add_func("/ops/elementwise/pow", test_pow);
  g_test_add_func("/ops/elementwise/bool-arithmetic", test_bool_arithmetic_rejected);
  g_test_add_func("/ops/elementwise/promotion", test_promotion);
  g_test_add_func("/ops/elementwise/compare", test_compare);
  g_test_add_func("/ops/elementwise/logical", test_logical);
  g_test_add_func("/ops/elementwise/unary-numeric", test_unary_numeric);
  g_test_add_func("/ops/elementwise/unary-float", test_unary_float);
  g_test_add_func("/ops/elementwise/unary-trig", test_unary_trig);
  g_test_add_func("/ops/elementwise/sign", test_sign);
  g_test_add_func("/ops/elementwise/round", test_round);
  g_test_add_func("/ops/elementwise/floor-ceil", test_floor_ceil);
  g_test_add_func("/ops/elementwise/square", test_square);
  g_test_add_func("/ops/elementwise/rsqrt-reciprocal", test_rsqrt_reciprocal);
  g_test_add_func("/ops/elementwise/log1p-expm1", test_log1p_expm1);
  g_test_add_func("/ops/elementwise/elu-selu-gelu", test_elu_selu_gelu);
  g_test_add_func("/ops/elementwise/relu6-softsign", test_relu6_softsign);
  g_test_add_func("/ops/elementwise/is-nan-inf-finite", test_is_nan_inf_finite);
  g_test_add_func("/ops/elementwise/squared-difference", test_squared_difference);
  g_test_add_func("/ops/elementwise/atan2", test_atan2);
  g_test_add_func("/ops/elementwise/truncate-div-mod", test_truncate_div_mod);
  g_test_add_func("/ops/elementwise/div-no-nan-xlogy", test_div_no_nan_xlogy);
  g_test_add_func("/ops/elementwise/broadcast", test_broadcast_basic);
  g_test_add_func("/ops/elementwise/broadcast-empty", test_broadcast_empty);
  g_test_add_func("/ops/elementwise/broadcast-errors", test_broadcast_errors);
  g_test_add_func("/ops/elementwise/broadcast-large", test_broadcast_large);
  g_test_add_func("/ops/elementwise/where", test_where);
  g_test_add_func("/ops/elementwise/cast-float-to-int", test_cast_float_to_int);
  g_test_add_func("/ops/elementwise/cast-other", test_cast_other);
  g_test_add_func("/ops/elementwise/cast-all-pairs", test_cast_all_pairs);
  g_test_add_func("/ops/elementwise/cast-half-rounding", test_cast_half_rounding);
  g_test_add_func("/ops/elementwise/cast-half-round-trip", test_cast_half_round_trip);
  g_test_add_func("/ops/elementwise/new-dtypes", test_new_dtypes_ops);
  g_test_add_func("/ops/elementwise/null-propagation", test_null_propagation);
  g_test_add_func("/ops/elementwise/dtype-messages", test_dtype_messages);
  g_test_add_func("/ops/elementwise/f16-refused-by-f32-f64-rows", test_f16_refused_by_f32_f64_rows);
  int rc = g_test_run();
  ts_release_all();
  return rc;
}
