/* test-print-npy.c — the tensor printer and .npy files.
 *
 * Every expected string below is what NumPy 1.24 (Debian 12) prints for
 * str() of the same array, wrapped as TensorFlow prints an EagerTensor;
 * the .npy files under data/npy were written by numpy (generate.py). */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>

#include "engine-private.h" /* the tensor layout, for a symbolic tensor */

#define NPY_DIR TS_TEST_DATA "/npy"

/* ---- helpers ------------------------------------------------------------------ */

/* Stores element k of a tensor: floats from f, the other dtypes from i. */
static void store(ts_tensor *t, int64_t k, double f, int64_t i)
{
  void *d = ts_tensor_data(t);
  switch (ts_tensor_dtype(t)) {
  case TS_F32: ((float *)d)[k] = (float)f; break;
  case TS_F64: ((double *)d)[k] = f; break;
  case TS_I32: ((int32_t *)d)[k] = (int32_t)i; break;
  case TS_I64: ((int64_t *)d)[k] = i; break;
  case TS_U8: ((uint8_t *)d)[k] = (uint8_t)i; break;
  case TS_BOOL: ((bool *)d)[k] = i != 0; break;
  case TS_I8: ((int8_t *)d)[k] = (int8_t)i; break;
  case TS_I16: ((int16_t *)d)[k] = (int16_t)(i * 300); break;
  case TS_U16: ((uint16_t *)d)[k] = (uint16_t)(i * 300); break;
  case TS_U32: ((uint32_t *)d)[k] = (uint32_t)(i * 70000); break;
  case TS_U64: ((uint64_t *)d)[k] = (uint64_t)i << 40; break;
  case TS_F16: /* bits: every pattern is a float16, NaNs included */
  case TS_BF16: ((uint16_t *)d)[k] = (uint16_t)(i * 977); break;
  default: g_assert_not_reached();
  }
}

/* A tensor from a list of doubles (float dtypes) or int64s (the rest). */
static ts_tensor *make(ts_dtype dtype, ts_shape shape, const double *f, const int64_t *i)
{
  ts_tensor *t = ts_tensor_new(dtype, shape);
  g_assert_nonnull(t);
  for (int64_t k = 0; k < ts_tensor_size(t); k++)
    store(t, k, f ? f[k] : 0, i ? i[k] : 0);
  return t;
}

/* A tensor whose element k is fn(k). */
static ts_tensor *generated(ts_dtype dtype, ts_shape shape, double (*fn)(int64_t k))
{
  ts_tensor *t = ts_tensor_new(dtype, shape);
  g_assert_nonnull(t);
  for (int64_t k = 0; k < ts_tensor_size(t); k++)
    store(t, k, fn(k), (int64_t)fn(k));
  return t;
}

static double index_value(int64_t k) { return (double)k; }
static double half_index(int64_t k) { return (double)k / 2; }
static double thousands(int64_t k) { return (double)k * 1000; }
static double even(int64_t k) { return k % 2 == 0; }
/* Scattered signed values with many digits: ((37k mod 101) - 50) / 7. */
static double scattered(int64_t k) { return (double)((k * 37) % 101 - 50) / 7.0; }

static void check_string(const ts_tensor *t, const char *expected)
{
  char *s = ts_tensor_to_string(t);
  g_assert_cmpstr(s, ==, expected);
  free(s);
}

static void check_values(const ts_tensor *t, const char *expected)
{
  char *s = ts_tensor_format_values(t);
  g_assert_cmpstr(s, ==, expected);
  free(s);
}

/* Takes the pending error and checks its code and that its message holds
 * part (and part2 unless NULL); on failure the message is shown. */
static void assert_error(ts_error_code code, const char *part, const char *part2)
{
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_cmpstr(ts_error_code_name(e->code), ==, ts_error_code_name(code));
  g_assert_nonnull(e->message);
  g_assert_cmpstr(strstr(e->message, part) ? part : e->message, ==, part);
  if (part2)
    g_assert_cmpstr(strstr(e->message, part2) ? part2 : e->message, ==, part2);
  ts_error_free(e);
}

/* ---- the printer ------------------------------------------------------------------ */

static void test_print_examples(void)
{
  ts_scope *scope = ts_scope_begin();
  check_string(ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 3, 5, 7 }),
               "Tensor([3 5 7]"
               ", shape=(3,), dtype=int32)");
  check_string(ts_constant(TS_F32, TS_SHAPE(1, 1), (float[]){ 12 }),
               "Tensor([[12.]]"
               ", shape=(1, 1), dtype=float32)");
  check_string(ts_scalar_f32(1.0f), "Tensor(1.0, shape=(), dtype=float32)");
  check_string(ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 1, 1, 1 }),
               "Tensor([1. 1. 1.]"
               ", shape=(3,), dtype=float32)");
  check_string(ts_constant(TS_I32, TS_SHAPE(10), (int32_t[]){ -5, -4, -3, -2, -1, 0, 1, 4, 9, 16 }),
               "Tensor([-5 -4 -3 -2 -1  0  1  4  9 16]"
               ", shape=(10,), dtype=int32)");
  check_string(ts_scalar_f32(0.3469261f), "Tensor(0.3469261, shape=(), dtype=float32)");
  /* a newline goes before values that span lines */
  check_string(ts_constant(TS_I32, TS_SHAPE(2, 2), (int32_t[]){ 1, 2, 3, 4 }),
               "Tensor(\n[[1 2]\n [3 4]]"
               ", shape=(2, 2), dtype=int32)");
  check_string(ts_scalar_i32(42), "Tensor(42, shape=(), dtype=int32)");
  check_string(ts_scalar_bool(true), "Tensor(True, shape=(), dtype=bool)");
  check_string(ts_scalar_f64(2.5), "Tensor(2.5, shape=(), dtype=float64)");
  check_string(ts_constant(TS_U8, TS_SHAPE(2), (uint8_t[]){ 1, 200 }),
               "Tensor([  1 200]"
               ", shape=(2,), dtype=uint8)");
  ts_scope_end(scope);
}

typedef struct print_case {
  ts_dtype dtype;
  ts_shape shape;
  const double *f;    /* values of float dtypes */
  const int64_t *i;   /* values of the others */
  const char *values; /* NumPy's str() */
} print_case;

#define F(...) (const double[]){ __VA_ARGS__ }, NULL
#define I(...) NULL, (const int64_t[]){ __VA_ARGS__ }

static void check_cases(const print_case *cases, size_t n)
{
  for (size_t c = 0; c < n; c++) {
    ts_scope *scope = ts_scope_begin();
    check_values(make(cases[c].dtype, cases[c].shape, cases[c].f, cases[c].i), cases[c].values);
    ts_scope_end(scope);
  }
}

/* Shortest round-trip digits per dtype, precision 8, padding so the points
 * align, the switch to scientific notation, nan/inf, negative zero. */
static void test_print_floats(void)
{
  const print_case cases[] = {
    { TS_F32, TS_SHAPE(2), F(0.1, 1.0),
      "[0.1 1. ]" },
    { TS_F64, TS_SHAPE(2), F(1.5, 2.25),
      "[1.5  2.25]" },
    { TS_F32, TS_SHAPE(3), F(-1.5, 0.0, 2.0),
      "[-1.5  0.   2. ]" },
    { TS_F32, TS_SHAPE(3), F(0.5, 0.25, 0.125),
      "[0.5   0.25  0.125]" },
    { TS_F64, TS_SHAPE(3), F(0.3333333333333333, 0.6666666666666666, 1.0),
      "[0.33333333 0.66666667 1.        ]" },
    { TS_F32, TS_SHAPE(3), F(0.3333333333333333, 0.6666666666666666, 1.0),
      "[0.33333334 0.6666667  1.        ]" },
    { TS_F64, TS_SHAPE(2), F(0.30000000000000004, -0.7),
      "[ 0.3 -0.7]" },
    { TS_F64, TS_SHAPE(2), F(0.123456785, 2.0),
      "[0.12345678 2.        ]" },
    { TS_F32, TS_SHAPE(2), F(16777217.0, 0.5),
      "[1.6777216e+07 5.0000000e-01]" },
    { TS_F64, TS_SHAPE(2), F(99999999.5, -12.25),
      "[ 9.99999995e+07 -1.22500000e+01]" },
    { TS_F64, TS_SHAPE(2), F(100000000.0, 1.0),
      "[1.e+08 1.e+00]" },
    { TS_F64, TS_SHAPE(2), F(1e-05, 1.0),
      "[1.e-05 1.e+00]" },
    { TS_F64, TS_SHAPE(2), F(1.0, 1001.0),
      "[1.000e+00 1.001e+03]" },
    { TS_F64, TS_SHAPE(2), F(1.0, 1000.0),
      "[   1. 1000.]" },
    { TS_F32, TS_SHAPE(2), F(0.0001, 0.5),
      "[1.e-04 5.e-01]" },
    { TS_F64, TS_SHAPE(2), F(0.0001, 0.5),
      "[1.e-04 5.e-01]" },
    { TS_F64, TS_SHAPE(3), F(1e-100, 1.0, -25000000000.0),
      "[ 1.0e-100  1.0e+000 -2.5e+010]" },
    { TS_F32, TS_SHAPE(2), F(1e-45, 1.0),
      "[1.e-45 1.e+00]" },
    { TS_F32, TS_SHAPE(2), F(3.4028234663852886e+38, -1.0),
      "[ 3.4028235e+38 -1.0000000e+00]" },
    { TS_F32, TS_SHAPE(1), F(123456789.0),
      "[1.2345679e+08]" },
    { TS_F32, TS_SHAPE(3), F(NAN, INFINITY, -INFINITY),
      "[ nan  inf -inf]" },
    { TS_F64, TS_SHAPE(3), F(NAN, 1.5, -INFINITY),
      "[ nan  1.5 -inf]" },
    { TS_F64, TS_SHAPE(1), F(INFINITY),
      "[inf]" },
    { TS_F32, TS_SHAPE(2), F(-0.0, 1.0),
      "[-0.  1.]" },
    { TS_F64, TS_SHAPE(2), F(0.0, 0.0),
      "[0. 0.]" },
    { TS_F32, TS_SHAPE(2, 2), F(1e-20, 2.0, NAN, -3.0),
      "[[ 1.e-20  2.e+00]\n"
      " [    nan -3.e+00]]" },
    { TS_F32, TS_SHAPE(2), F(99999990.0, 1000000.0),
      "[99999992.  1000000.]" },
    { TS_F32, TS_SHAPE(3), F(16777217.0, 16777218.0, 100000.0),
      "[16777216. 16777218.   100000.]" },
    /* rank 0: NumPy's scalar str() */
    { TS_F32, TS_SCALAR_SHAPE, F(1.1),
      "1.1" },
    { TS_F64, TS_SCALAR_SHAPE, F(0.30000000000000004),
      "0.30000000000000004" },
    { TS_F32, TS_SCALAR_SHAPE, F(0.0001),
      "1e-04" },
    { TS_F64, TS_SCALAR_SHAPE, F(0.0001),
      "0.0001" },
    { TS_F64, TS_SCALAR_SHAPE, F(1e+16),
      "1e+16" },
    { TS_F64, TS_SCALAR_SHAPE, F(1000000000000000.0),
      "1000000000000000.0" },
    { TS_F32, TS_SCALAR_SHAPE, F(NAN),
      "nan" },
    { TS_F64, TS_SCALAR_SHAPE, F(-INFINITY),
      "-inf" },
    { TS_F32, TS_SCALAR_SHAPE, F(-0.0),
      "-0.0" },
    { TS_F64, TS_SCALAR_SHAPE, F(5e-324),
      "5e-324" },
    { TS_F32, TS_SCALAR_SHAPE, F(123456789.0),
      "123456790.0" },
    { TS_F32, TS_SCALAR_SHAPE, F(3.4028234663852886e+38),
      "3.4028235e+38" },
    { TS_F64, TS_SCALAR_SHAPE, F(-2.5e-07),
      "-2.5e-07" },
  };
  check_cases(cases, G_N_ELEMENTS(cases));
}

static void test_print_ints_and_bools(void)
{
  const print_case cases[] = {
    { TS_I32, TS_SHAPE(2, 3), I(1, -20, 300, 4000, -5, 6),
      "[[   1  -20  300]\n"
      " [4000   -5    6]]" },
    { TS_I64, TS_SHAPE(3), I(INT64_MIN, INT64_MAX, 0),
      "[-9223372036854775808  9223372036854775807                    0]" },
    { TS_U8, TS_SHAPE(4), I(0, 7, 255, 128),
      "[  0   7 255 128]" },
    { TS_U8, TS_SHAPE(2, 2, 2), I(0, 30, 60, 90, 120, 150, 180, 210),
      "[[[  0  30]\n"
      "  [ 60  90]]\n"
      "\n"
      " [[120 150]\n"
      "  [180 210]]]" },
    { TS_BOOL, TS_SHAPE(2), I(1, 0),
      "[ True False]" },
    { TS_BOOL, TS_SHAPE(2, 3), I(1, 1, 0, 0, 1, 0),
      "[[ True  True False]\n"
      " [False  True False]]" },
    { TS_BOOL, TS_SCALAR_SHAPE, I(1),
      "True" },
    { TS_BOOL, TS_SCALAR_SHAPE, I(0),
      "False" },
    { TS_I64, TS_SCALAR_SHAPE, I(INT64_MIN),
      "-9223372036854775808" },
    { TS_U8, TS_SCALAR_SHAPE, I(255),
      "255" },
    { TS_I32, TS_SHAPE(1, 1, 1), I(-7),
      "[[[-7]]]" },
  };
  check_cases(cases, G_N_ELEMENTS(cases));
}

/* Lines wrap at 75 columns; continuation lines indent under the brackets. */
static void test_print_wrapping(void)
{
  ts_scope *scope = ts_scope_begin();
  check_string(generated(TS_F64, TS_SHAPE(30), scattered),
               "Tensor(\n"
               "[-7.14285714 -1.85714286  3.42857143 -5.71428571 -0.42857143  4.85714286\n"
               " -4.28571429  1.          6.28571429 -2.85714286  2.42857143 -6.71428571\n"
               " -1.42857143  3.85714286 -5.28571429  0.          5.28571429 -3.85714286\n"
               "  1.42857143  6.71428571 -2.42857143  2.85714286 -6.28571429 -1.\n"
               "  4.28571429 -4.85714286  0.42857143  5.71428571 -3.42857143  1.85714286]"
               ", shape=(30,), dtype=float64)");
  check_string(generated(TS_F32, TS_SHAPE(3, 12), scattered),
               "Tensor(\n"
               "[[-7.142857   -1.8571428   3.4285715  -5.714286   -0.42857143  4.857143\n"
               "  -4.285714    1.          6.285714   -2.857143    2.4285715  -6.714286  ]\n"
               " [-1.4285715   3.857143   -5.285714    0.          5.285714   -3.857143\n"
               "   1.4285715   6.714286   -2.4285715   2.857143   -6.285714   -1.        ]\n"
               " [ 4.285714   -4.857143    0.42857143  5.714286   -3.4285715   1.8571428\n"
               "   7.142857   -2.          3.2857144  -5.857143   -0.5714286   4.714286  ]]"
               ", shape=(3, 12), dtype=float32)");
  check_string(generated(TS_I32, TS_SHAPE(40), index_value),
               "Tensor(\n"
               "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n"
               " 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39]"
               ", shape=(40,), dtype=int32)");
  check_string(generated(TS_I64, TS_SHAPE(2, 30), thousands),
               "Tensor(\n"
               "[[    0  1000  2000  3000  4000  5000  6000  7000  8000  9000 10000 11000\n"
               "  12000 13000 14000 15000 16000 17000 18000 19000 20000 21000 22000 23000\n"
               "  24000 25000 26000 27000 28000 29000]\n"
               " [30000 31000 32000 33000 34000 35000 36000 37000 38000 39000 40000 41000\n"
               "  42000 43000 44000 45000 46000 47000 48000 49000 50000 51000 52000 53000\n"
               "  54000 55000 56000 57000 58000 59000]]"
               ", shape=(2, 30), dtype=int64)");
  ts_scope_end(scope);
}

/* Above 1000 elements only 3 items at each edge of every axis are shown. */
static void test_print_elision(void)
{
  ts_scope *scope = ts_scope_begin();
  check_string(generated(TS_I32, TS_SHAPE(2000), index_value),
               "Tensor([   0    1    2 ... 1997 1998 1999]"
               ", shape=(2000,), dtype=int32)");
  check_string(generated(TS_F32, TS_SHAPE(2000), index_value),
               "Tensor([0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]"
               ", shape=(2000,), dtype=float32)");
  check_string(generated(TS_I32, TS_SHAPE(100, 100), index_value),
               "Tensor(\n"
               "[[   0    1    2 ...   97   98   99]\n"
               " [ 100  101  102 ...  197  198  199]\n"
               " [ 200  201  202 ...  297  298  299]\n"
               " ...\n"
               " [9700 9701 9702 ... 9797 9798 9799]\n"
               " [9800 9801 9802 ... 9897 9898 9899]\n"
               " [9900 9901 9902 ... 9997 9998 9999]]"
               ", shape=(100, 100), dtype=int32)");
  check_string(generated(TS_I32, TS_SHAPE(1001), index_value),
               "Tensor([   0    1    2 ...  998  999 1000]"
               ", shape=(1001,), dtype=int32)");
  check_string(generated(TS_BOOL, TS_SHAPE(1001), even),
               "Tensor([ True False  True ...  True False  True]"
               ", shape=(1001,), dtype=bool)");
  check_string(generated(TS_I32, TS_SHAPE(2, 3, 200), index_value),
               "Tensor(\n"
               "[[[   0    1    2 ...  197  198  199]\n"
               "  [ 200  201  202 ...  397  398  399]\n"
               "  [ 400  401  402 ...  597  598  599]]\n"
               "\n"
               " [[ 600  601  602 ...  797  798  799]\n"
               "  [ 800  801  802 ...  997  998  999]\n"
               "  [1000 1001 1002 ... 1197 1198 1199]]]"
               ", shape=(2, 3, 200), dtype=int32)");
  check_string(generated(TS_I32, TS_SHAPE(8, 2, 70), index_value),
               "Tensor(\n"
               "[[[   0    1    2 ...   67   68   69]\n"
               "  [  70   71   72 ...  137  138  139]]\n"
               "\n"
               " [[ 140  141  142 ...  207  208  209]\n"
               "  [ 210  211  212 ...  277  278  279]]\n"
               "\n"
               " [[ 280  281  282 ...  347  348  349]\n"
               "  [ 350  351  352 ...  417  418  419]]\n"
               "\n"
               " ...\n"
               "\n"
               " [[ 700  701  702 ...  767  768  769]\n"
               "  [ 770  771  772 ...  837  838  839]]\n"
               "\n"
               " [[ 840  841  842 ...  907  908  909]\n"
               "  [ 910  911  912 ...  977  978  979]]\n"
               "\n"
               " [[ 980  981  982 ... 1047 1048 1049]\n"
               "  [1050 1051 1052 ... 1117 1118 1119]]]"
               ", shape=(8, 2, 70), dtype=int32)");
  /* widths come from the shown elements only */
  check_string(generated(TS_F64, TS_SHAPE(6, 200), scattered),
               "Tensor(\n"
               "[[-7.14285714 -1.85714286  3.42857143 ... -4.71428571  0.57142857\n"
               "   5.85714286]\n"
               " [-3.28571429  2.         -7.14285714 ... -0.85714286  4.42857143\n"
               "  -4.71428571]\n"
               " [ 0.57142857  5.85714286 -3.28571429 ...  3.         -6.14285714\n"
               "  -0.85714286]\n"
               " [ 4.42857143 -4.71428571  0.57142857 ...  6.85714286 -2.28571429\n"
               "   3.        ]\n"
               " [-6.14285714 -0.85714286  4.42857143 ... -3.71428571  1.57142857\n"
               "   6.85714286]\n"
               " [-2.28571429  3.         -6.14285714 ...  0.14285714  5.42857143\n"
               "  -3.71428571]]"
               ", shape=(6, 200), dtype=float64)");

  /* 1000 elements are all printed: 55 lines of numbers */
  char *s = ts_tensor_format_values(generated(TS_I32, TS_SHAPE(1000), index_value));
  g_assert_null(strstr(s, "..."));
  g_assert_true(g_str_has_prefix(s, "[  0   1   2") && g_str_has_suffix(s, " 998 999]"));
  int lines = 1;
  for (const char *c = s; *c; c++)
    lines += *c == '\n';
  g_assert_cmpint(lines, ==, 56);
  free(s);
  ts_scope_end(scope);
}

/* Blocks of rank >= 2 are separated by rank - 1 newlines. */
static void test_print_blocks(void)
{
  ts_scope *scope = ts_scope_begin();
  check_string(generated(TS_I32, TS_SHAPE(2, 3, 4), index_value),
               "Tensor(\n"
               "[[[ 0  1  2  3]\n"
               "  [ 4  5  6  7]\n"
               "  [ 8  9 10 11]]\n"
               "\n"
               " [[12 13 14 15]\n"
               "  [16 17 18 19]\n"
               "  [20 21 22 23]]]"
               ", shape=(2, 3, 4), dtype=int32)");
  check_string(generated(TS_F32, TS_SHAPE(2, 2, 2, 2), half_index),
               "Tensor(\n"
               "[[[[0.  0.5]\n"
               "   [1.  1.5]]\n"
               "\n"
               "  [[2.  2.5]\n"
               "   [3.  3.5]]]\n"
               "\n"
               "\n"
               " [[[4.  4.5]\n"
               "   [5.  5.5]]\n"
               "\n"
               "  [[6.  6.5]\n"
               "   [7.  7.5]]]]"
               ", shape=(2, 2, 2, 2), dtype=float32)");
  ts_scope_end(scope);
}

static void test_print_empty_and_symbolic(void)
{
  ts_scope *scope = ts_scope_begin();
  check_string(ts_tensor_new(TS_F32, TS_SHAPE(0)), "Tensor([]"
               ", shape=(0,), dtype=float32)");
  check_string(ts_tensor_new(TS_I32, TS_SHAPE(2, 0)), "Tensor([]"
               ", shape=(2, 0), dtype=int32)");
  check_string(ts_tensor_new(TS_BOOL, TS_SHAPE(0, 3, 2)), "Tensor([]"
               ", shape=(0, 3, 2), dtype=bool)");
  /* empty with dims whose product overflows: no stride arithmetic on them */
  check_string(ts_tensor_new(TS_U8, TS_SHAPE(0, INT64_C(1) << 62, 4)), "Tensor([]"
               ", shape=(0, 4611686018427387904, 4), dtype=uint8)");
  ts_scope_end(scope);

  ts_tensor sym = { .refcount = 1, .dtype = TS_F32, .shape = TS_SHAPE(-1, 784), .size = -1 };
  check_string(&sym, "Tensor(<symbolic>, shape=(None, 784), dtype=float32)");
  check_values(&sym, "<symbolic>");
  sym = (ts_tensor){ .refcount = 1, .dtype = TS_I32, .shape = TS_SHAPE(2), .size = 2 };
  check_string(&sym, "Tensor(<symbolic>, shape=(2,), dtype=int32)");

  g_assert_null(ts_tensor_to_string(NULL));
  g_assert_null(ts_tensor_format_values(NULL));
}

/* Python's str() of an EagerTensor, as print() shows a traced function's
 * results: "tf.Tensor(", NumPy's str() of the values (after a newline when
 * it takes several lines), the shape and the dtype.  Each string is what
 * TensorFlow's numpy_text makes of NumPy 1.24's str() of the same array. */
static void check_str(ts_tensor *t, const char *want)
{
  char *got = ts_tensor_str(t);
  g_assert_cmpstr(got, ==, want);
  free(got);
}

static void test_print_tensor_str(void)
{
  ts_scope *scope = ts_scope_begin();
  check_str(ts_scalar_i32(200), "tf.Tensor(200, shape=(), dtype=int32)");
  check_str(ts_scalar_f32(0.3469261f), "tf.Tensor(0.3469261, shape=(), dtype=float32)");
  check_str(ts_scalar_f32(0.8477f), "tf.Tensor(0.8477, shape=(), dtype=float32)");
  check_str(ts_scalar_f32(1e8f), "tf.Tensor(100000000.0, shape=(), dtype=float32)");
  check_str(ts_scalar_f32(NAN), "tf.Tensor(nan, shape=(), dtype=float32)");
  check_str(ts_scalar_f32(-INFINITY), "tf.Tensor(-inf, shape=(), dtype=float32)");
  check_str(ts_scalar_f64(0.1), "tf.Tensor(0.1, shape=(), dtype=float64)");
  check_str(ts_scalar_bool(true), "tf.Tensor(True, shape=(), dtype=bool)");
  check_str(ts_ones(TS_F32, TS_SHAPE(3)), "tf.Tensor([1. 1. 1.], shape=(3,), dtype=float32)");
  check_str(make(TS_BOOL, TS_SHAPE(2), NULL, (int64_t[]){ 1, 0 }),
            "tf.Tensor([ True False], shape=(2,), dtype=bool)");
  check_str(ts_tensor_new(TS_F32, TS_SHAPE(0)), "tf.Tensor([], shape=(0,), dtype=float32)");
  check_str(make(TS_I32, TS_SHAPE(2, 2), NULL, (int64_t[]){ 1, 2, 3, 4 }),
            "tf.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)");
  check_str(generated(TS_I64, TS_SHAPE(2, 2, 3), index_value),
            "tf.Tensor(\n[[[ 0  1  2]\n  [ 3  4  5]]\n\n [[ 6  7  8]\n  [ 9 10 11]]], "
            "shape=(2, 2, 3), dtype=int64)");
  check_str(generated(TS_I32, TS_SHAPE(30), index_value),
            "tf.Tensor(\n[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n"
            " 24 25 26 27 28 29], shape=(30,), dtype=int32)");
  check_str(ts_div(generated(TS_F32, TS_SHAPE(2, 12), index_value), ts_scalar_f32(7)),
            "tf.Tensor(\n"
            "[[0.         0.14285715 0.2857143  0.42857143 0.5714286  0.71428573\n"
            "  0.85714287 1.         1.1428572  1.2857143  1.4285715  1.5714285 ]\n"
            " [1.7142857  1.8571428  2.         2.142857   2.2857144  2.4285715\n"
            "  2.5714285  2.7142856  2.857143   3.         3.142857   3.2857144 ]], "
            "shape=(2, 12), dtype=float32)");
  g_assert_null(ts_tensor_str(NULL));
  ts_scope_end(scope);
}

/* Inside a trace: the values of a graph's tensors, empty ones too, are symbolic. */
static char *traced_values[2];

static ts_tensor *format_while_traced(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *empty = ts_zeros(TS_F32, TS_SHAPE(2, 0));
  traced_values[0] = ts_tensor_format_values(x);
  traced_values[1] = ts_tensor_format_values(empty);
  return ts_add(x, ts_reduce_sum(empty, TS_ALL_AXES, false));
}

static void test_print_traced_empty(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *f = ts_function_new("format_while_traced", format_while_traced, "x");
  ts_value arg = TS_TENSOR_VALUE(ts_tensor_new(TS_F32, TS_SHAPE(0)));
  ts_tensor *y = ts_function_call(f, &arg, 1);
  g_assert_nonnull(y);
  for (int i = 0; i < 2; i++) {
    g_assert_cmpstr(traced_values[i], ==, "<symbolic>");
    g_free(traced_values[i]);
  }
  char *s = ts_tensor_to_string(y);
  g_assert_cmpstr(s, ==, "Tensor([], shape=(0,), dtype=float32)");
  g_free(s);
  ts_function_free(f);
  ts_scope_end(scope);
}

/* ---- .npy -------------------------------------------------------------------------- */

static char *make_tmp_dir(void)
{
  GError *error = NULL;
  char *dir = g_dir_make_tmp("ts-npy-XXXXXX", &error);
  g_assert_no_error(error);
  return dir;
}

static void remove_tmp_dir(char *dir)
{
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *name;
  g_assert_nonnull(d);
  while ((name = g_dir_read_name(d))) {
    char *path = g_build_filename(dir, name, NULL);
    g_assert_cmpint(g_file_test(path, G_FILE_TEST_IS_DIR) ? g_rmdir(path) : g_remove(path), ==, 0);
    g_free(path);
  }
  g_dir_close(d);
  g_assert_cmpint(g_rmdir(dir), ==, 0);
  g_free(dir);
}

static void assert_same_tensor(const ts_tensor *a, const ts_tensor *b)
{
  g_assert_cmpint(ts_tensor_dtype(a), ==, ts_tensor_dtype(b));
  g_assert_true(ts_shape_equal(ts_tensor_shape(a), ts_tensor_shape(b)));
  size_t n = (size_t)ts_tensor_size(a) * ts_dtype_size(ts_tensor_dtype(a));
  g_assert_true(n == 0 || memcmp(ts_tensor_data(a), ts_tensor_data(b), n) == 0);
}

static void assert_same_file(const char *a, const char *b)
{
  char *da, *db;
  gsize la, lb;
  g_assert_true(g_file_get_contents(a, &da, &la, NULL));
  g_assert_true(g_file_get_contents(b, &db, &lb, NULL));
  g_assert_cmpmem(da, la, db, lb);
  g_free(da);
  g_free(db);
}

/* Every dtype at ranks 0 to 4, and empty shapes, survives save and load;
 * the header is version 1.0 and the data starts at a multiple of 64. */
static void test_npy_round_trip(void)
{
  static const double floats[] = { 0.5, -1.25, NAN, INFINITY, -0.0, 1e-30, 3e38, -7 };
  const ts_shape shapes[] = { TS_SCALAR_SHAPE,      TS_SHAPE(3), TS_SHAPE(2, 3), TS_SHAPE(2, 1, 3),
                              TS_SHAPE(1, 2, 2, 2), TS_SHAPE(0), TS_SHAPE(2, 0) };
  char *dir = make_tmp_dir();
  char *path = g_build_filename(dir, "t.npy", NULL);

  for (int dt = 0; dt < TS_NUMERIC_DTYPE_COUNT; dt++) {
    if (dt == TS_BF16)
      continue; /* no .npy type: test_npy_bfloat16_refused */
    for (size_t s = 0; s < G_N_ELEMENTS(shapes); s++) {
      ts_scope *scope = ts_scope_begin();
      ts_tensor *t = ts_tensor_new((ts_dtype)dt, shapes[s]);
      g_assert_cmpint(ts_tensor_size(t), <=, (int64_t)G_N_ELEMENTS(floats));
      for (int64_t k = 0; k < ts_tensor_size(t); k++)
        store(t, k, floats[k], (k * 7919) % 251 - 100 + k % 2);
      g_assert_true(ts_npy_save(path, t));
      ts_tensor *back = ts_npy_load(path);
      g_assert_nonnull(back);
      assert_same_tensor(t, back);

      char *bytes;
      gsize len;
      size_t data_len = (size_t)ts_tensor_size(t) * ts_dtype_size((ts_dtype)dt);
      g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
      g_assert_cmpmem(bytes, 8, "\x93NUMPY\x01\x00", 8);
      g_assert_cmpuint((len - data_len) % 64, ==, 0);
      g_assert_cmpint(bytes[len - data_len - 1], ==, '\n');
      g_free(bytes);
      ts_scope_end(scope);
    }
  }
  g_assert_false(ts_failed());
  g_free(path);
  remove_tmp_dir(dir);
}

/* Files numpy wrote: other byte orders, versions 2.0 and 3.0, Fortran order.
 * Saving what numpy.save wrote gives back the same bytes. */
/* NumPy has no bfloat16: saving one is refused, naming the dtype and the way out. */
static void test_npy_bfloat16_refused(void)
{
  char *dir = make_tmp_dir();
  char *path = g_build_filename(dir, "b.npy", NULL);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *t = ts_cast(ts_scalar_f32(1.5f), TS_BF16);
  g_assert_false(ts_npy_save(path, t));
  assert_error(TS_ERR_DTYPE, "cannot save a bfloat16 tensor", "cast to float32 first");
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
  ts_scope_end(scope);
  g_free(path);
  remove_tmp_dir(dir);
}

static void test_npy_numpy_files(void)
{
  const struct {
    const char *name;
    const char *string;
    bool resave_same; /* written by numpy.save (1.0, little-endian, C order) */
  } files[] = {
    { "f4_2x3.npy",
      "Tensor(\n"
      "[[ 5.00e-01 -1.25e+00  3.00e+00]\n"
      " [ 1.00e-03  1.00e+02 -0.00e+00]], shape=(2, 3), dtype=float32)", true },
    { "f8_scalar.npy", "Tensor(0.1, shape=(), dtype=float64)", true },
    { "i8_1x2x1x2.npy",
      "Tensor(\n"
      "[[[[                   1                   -2]]\n"
      "\n"
      "  [[       1099511627776 -4611686018427387904]]]], shape=(1, 2, 1, 2), dtype=int64)", true },
    { "b1_2x2.npy", "Tensor(\n[[ True False]\n [False  True]], shape=(2, 2), dtype=bool)", true },
    { "f4_0x3.npy", "Tensor([], shape=(0, 3), dtype=float32)", true },
    { "u1_1000.npy", NULL, true },
    { "f8_be_3.npy", "Tensor([ 1.5e+000 -2.0e+000  1.0e+300], shape=(3,), dtype=float64)", false },
    { "i4_be_2x2.npy", "Tensor(\n[[ 1  2]\n [ 3 -4]], shape=(2, 2), dtype=int32)", false },
    { "i4_v2_2x2.npy",
      "Tensor(\n"
      "[[          1          -2]\n"
      " [ 2147483647 -2147483648]], shape=(2, 2), dtype=int32)", false },
    { "i8_v3_4.npy",
      "Tensor(\n"
      "[                   0                   -1  4611686018427387904\n"
      " -9223372036854775808], shape=(4,), dtype=int64)", false },
    { "f4_fortran_2x3x2.npy",
      "Tensor(\n"
      "[[[ 0.  1.]\n"
      "  [ 2.  3.]\n"
      "  [ 4.  5.]]\n"
      "\n"
      " [[ 6.  7.]\n"
      "  [ 8.  9.]\n"
      "  [10. 11.]]], shape=(2, 3, 2), dtype=float32)", false },
    /* the narrower integers and float16: values and text from numpy 1.24 */
    { "f2_2x3.npy",
      "Tensor(\n"
      "[[ 9.998e-02 -6.550e+04  5.960e-08]\n"
      " [       inf        nan  3.333e-01]], shape=(2, 3), dtype=float16)", true },
    { "i1_4.npy", "Tensor([-128   -1    0  127], shape=(4,), dtype=int8)", true },
    { "i2_2x2.npy", "Tensor(\n[[-32768    300]\n [    -1  32767]], shape=(2, 2), dtype=int16)", true },
    { "u2_3.npy", "Tensor([    0   300 65535], shape=(3,), dtype=uint16)", true },
    { "u4_3.npy", "Tensor([         0      70000 4294967295], shape=(3,), dtype=uint32)", true },
    { "u8_3.npy",
      "Tensor([                   0        1099511627776 18446744073709551615], shape=(3,), "
      "dtype=uint64)", true },
  };
  char *dir = make_tmp_dir();
  char *copy = g_build_filename(dir, "copy.npy", NULL);

  for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
    ts_scope *scope = ts_scope_begin();
    char *path = g_build_filename(NPY_DIR, files[i].name, NULL);
    ts_tensor *t = ts_npy_load(path);
    g_assert_nonnull(t);
    if (files[i].string)
      check_string(t, files[i].string);
    if (files[i].resave_same) {
      g_assert_true(ts_npy_save(copy, t));
      assert_same_file(path, copy);
    }
    g_free(path);
    ts_scope_end(scope);
  }

  ts_scope *scope = ts_scope_begin();
  ts_tensor *t = ts_npy_load(NPY_DIR "/u1_1000.npy");
  g_assert_cmpint(ts_tensor_dtype(t), ==, TS_U8);
  g_assert_cmpint(ts_tensor_size(t), ==, 1000);
  for (int64_t k = 0; k < 1000; k++)
    g_assert_cmpint(ts_tensor_get_i64(t, k), ==, k % 256);
  t = ts_npy_load(NPY_DIR "/f8_be_3.npy");
  g_assert_cmpfloat(ts_tensor_get_f64(t, 2), ==, 1e300);
  t = ts_npy_load(NPY_DIR "/f4_fortran_2x3x2.npy");
  for (int64_t k = 0; k < 12; k++)
    g_assert_cmpfloat(ts_tensor_get_f64(t, k), ==, (double)k);
  t = ts_npy_load(NPY_DIR "/i8_v3_4.npy");
  g_assert_cmpint(ts_tensor_get_i64(t, 3), ==, INT64_MIN);
  ts_scope_end(scope);

  g_assert_null(ts_npy_load(NPY_DIR "/c8.npy"));
  assert_error(TS_ERR_FORMAT, NPY_DIR "/c8.npy", "unsupported dtype '<c8'");
  g_free(copy);
  remove_tmp_dir(dir);
}

/* A .npy file: magic, version major.0, the header's length, the header,
 * then data_len bytes of data. */
static GByteArray *npy_file(int major, const char *header, size_t data_len)
{
  GByteArray *b = g_byte_array_new();
  uint32_t len = (uint32_t)strlen(header);
  const guint8 len_bytes[4] = { len & 0xff, (len >> 8) & 0xff, (len >> 16) & 0xff, len >> 24 };
  g_byte_array_append(b, (const guint8 *)"\x93NUMPY", 6);
  g_byte_array_append(b, (const guint8[]){ (guint8)major, 0 }, 2);
  g_byte_array_append(b, len_bytes, major == 1 ? 2 : 4);
  g_byte_array_append(b, (const guint8 *)header, len);
  for (size_t i = 0; i < data_len; i++)
    g_byte_array_append(b, (const guint8[]){ (guint8)i }, 1);
  return b;
}

static char *write_file(const char *dir, const char *name, const GByteArray *bytes)
{
  char *path = g_build_filename(dir, name, NULL);
  GError *error = NULL;
  g_file_set_contents(path, (const char *)bytes->data, (gssize)bytes->len, &error);
  g_assert_no_error(error);
  return path;
}

#define DICT(descr, shape) "{'descr': '" descr "', 'fortran_order': False, 'shape': " shape ", }"

/* Each broken file fails with TS_ERR_FORMAT, a message naming the file and
 * what is wrong, and no allocation sized from the file. */
static void test_npy_corrupt(void)
{
  const struct {
    const char *name;
    const char *raw; /* the whole file, or NULL for npy_file(major, header, data_len) */
    size_t raw_len;
    int major;
    const char *header;
    size_t data_len;
    const char *error;
  } cases[] = {
    { "empty.npy", "", 0, 0, NULL, 0, "bad magic" },
    { "text.npy", "hello, not numpy", 16, 0, NULL, 0, "bad magic" },
    { "magic.npy", "\x93NUMPX\x01\x00\x02\x00{}", 12, 0, NULL, 0, "bad magic" },
    { "short.npy", "\x93NUMPY\x01", 7, 0, NULL, 0, "truncated header" },
    { "no-length.npy", "\x93NUMPY\x02\x00\x10", 9, 0, NULL, 0, "truncated header" },
    { "version.npy", "\x93NUMPY\x04\x00\x02\x00{}", 12, 0, NULL, 0,
      "unsupported .npy format version 4.0" },
    { "minor.npy", "\x93NUMPY\x01\x05\x02\x00{}", 12, 0, NULL, 0,
      "unsupported .npy format version 1.5" },
    { "header-length.npy", "\x93NUMPY\x01\x00\xc8\x00{'descr'", 18, 0, NULL, 0,
      "truncated header" },
    { "header-huge.npy", "\x93NUMPY\x02\x00\xff\xff\xff\xff{", 13, 0, NULL, 0,
      "larger than 10000" },
    { "not-dict.npy", NULL, 0, 1, "[1, 2]", 0, "cannot parse the header: expected '{'" },
    { "unclosed.npy", NULL, 0, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ", 8,
      "cannot parse the header" },
    { "unquoted.npy", NULL, 0, 1, "{descr: '<f4', 'fortran_order': False, 'shape': (2,)}", 8,
      "cannot parse the header: bad key" },
    { "missing.npy", NULL, 0, 1, "{'descr': '<f4', 'shape': (2,), }", 8, "lacks 'fortran_order'" },
    { "extra-key.npy", NULL, 0, 2,
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8, "unexpected key 'x'" },
    { "fortran.npy", NULL, 0, 1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", 8,
      "fortran_order is not True or False" },
    { "after.npy", NULL, 0, 1, DICT("<f4", "(2,)") " junk", 8, "text after the closing '}'" },
    { "c8.npy", NULL, 0, 1, DICT("<c8", "(2,)"), 16, "unsupported dtype '<c8'" },
    { "f16.npy", NULL, 0, 3, DICT("<f16", "(2,)"), 32, "unsupported dtype '<f16'" },
    { "object.npy", NULL, 0, 1, DICT("|O", "(2,)"), 16, "unsupported dtype '|O'" },
    { "structured.npy", NULL, 0, 1,
      "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", 8,
      "structured arrays are not supported" },
    { "negative.npy", NULL, 0, 1, DICT("<f4", "(-1, 3)"), 12, "negative dimension" },
    { "bad-shape.npy", NULL, 0, 1, DICT("<f4", "(2, x)"), 8, "bad shape" },
    { "overflow.npy", NULL, 0, 1, DICT("<f4", "(99999999999999999999,)"), 8, "overflows 64 bits" },
    { "overflow2.npy", NULL, 0, 1, DICT("<f4", "(2, 20000000000000000000)"), 8,
      "overflows 64 bits" },
    { "overflow3.npy", NULL, 0, 1, DICT("<f4", "(9223372036854775808,)"), 8, "overflows 64 bits" },
    { "bytes-overflow.npy", NULL, 0, 1, DICT("<f4", "(9223372036854775807,)"), 8, "is too large" },
    { "product.npy", NULL, 0, 1, DICT("<f4", "(4294967296, 4294967296)"), 8,
      "f32[4294967296,4294967296] is too large" },
    { "rank9.npy", NULL, 0, 1, DICT("<f4", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), 4,
      "more than 8 dimensions" },
    { "short-data.npy", NULL, 0, 1, DICT("<f4", "(2, 3)"), 20,
      "data is truncated: f32[2,3] needs 24 bytes, the file has 20" },
    { "huge.npy", NULL, 0, 1, DICT("<f8", "(1000000000000,)"), 8,
      "f64[1000000000000] needs 8000000000000 bytes, the file has 8" },
    { "v2-short-data.npy", NULL, 0, 2, DICT(">i8", "(5,)"), 16, "data is truncated" },
  };
  char *dir = make_tmp_dir();

  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    GByteArray *bytes = cases[i].raw ? g_byte_array_new()
                                     : npy_file(cases[i].major, cases[i].header, cases[i].data_len);
    if (cases[i].raw)
      g_byte_array_append(bytes, (const guint8 *)cases[i].raw, (guint)cases[i].raw_len);
    char *path = write_file(dir, cases[i].name, bytes);
    g_assert_null(ts_npy_load(path));
    assert_error(TS_ERR_FORMAT, path, cases[i].error);
    g_assert_cmpint(ts_scope_n_tensors(), ==, 0);
    g_free(path);
    g_byte_array_unref(bytes);
  }
  remove_tmp_dir(dir);
}

/* What numpy accepts and numpy.save never writes: bytes after the data,
 * bool bytes other than 0 and 1, double quotes, any key order, Python 2
 * longs, '=' and '|' byte orders. */
static void test_npy_lenient(void)
{
  const struct {
    int major;
    const char *header;
    const guint8 *data;
    size_t data_len;
    const char *string;
  } cases[] = {
    { 1, DICT("<f4", "(2,)"), (const guint8[]){ 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 1, 2, 3, 4 }, 12,
      "Tensor([1. 2.], shape=(2,), dtype=float32)" },
    { 1, DICT("|b1", "(4,)"), (const guint8[]){ 0, 1, 2, 255 }, 4,
      "Tensor([False  True  True  True], shape=(4,), dtype=bool)" },
    { 2, "{\"shape\": (2L, 1L), \"fortran_order\": False, \"descr\": \"<i4\"}",
      (const guint8[]){ 7, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff }, 8,
      "Tensor(\n[[ 7]\n [-2]], shape=(2, 1), dtype=int32)" },
    { 1, DICT("=i8", "(1,)"), (const guint8[]){ 5, 0, 0, 0, 0, 0, 0, 0 }, 8,
      "Tensor([5], shape=(1,), dtype=int64)" },
    { 1, DICT("|u1", "()"), (const guint8[]){ 200 }, 1, "Tensor(200, shape=(), dtype=uint8)" },
    { 3, DICT("<f4", "(0, 3, 5)"), NULL, 0, "Tensor([], shape=(0, 3, 5), dtype=float32)" },
    { 1, "{'descr':'>f8','fortran_order':True,'shape':(2,2)}",
      (const guint8[]){ 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0,
                        0x40, 0x08, 0, 0, 0, 0, 0, 0, 0x40, 0x10, 0, 0, 0, 0, 0, 0 }, 32,
      "Tensor(\n[[1. 3.]\n [2. 4.]], shape=(2, 2), dtype=float64)" },
    /* empty, with dims whose product overflows int64, in either order */
    { 1, "{'descr':'<f4','fortran_order':True,'shape':(4611686018427387904, 4, 0)}", NULL, 0,
      "Tensor([], shape=(4611686018427387904, 4, 0), dtype=float32)" },
    { 1, DICT("<f4", "(0, 4611686018427387904, 4)"), NULL, 0,
      "Tensor([], shape=(0, 4611686018427387904, 4), dtype=float32)" },
  };
  char *dir = make_tmp_dir();

  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    ts_scope *scope = ts_scope_begin();
    GByteArray *bytes = npy_file(cases[i].major, cases[i].header, 0);
    g_byte_array_append(bytes, cases[i].data, (guint)cases[i].data_len);
    char *path = write_file(dir, "lenient.npy", bytes);
    ts_tensor *t = ts_npy_load(path);
    g_assert_nonnull(t);
    check_string(t, cases[i].string);
    g_free(path);
    g_byte_array_unref(bytes);
    ts_scope_end(scope);
  }
  remove_tmp_dir(dir);
}

static void test_npy_io_errors(void)
{
  g_assert_null(ts_npy_load(NPY_DIR "/missing.npy"));
  assert_error(TS_ERR_IO, "cannot open '" NPY_DIR "/missing.npy'", g_strerror(ENOENT));
  g_assert_null(ts_npy_load(NPY_DIR));
  assert_error(TS_ERR_IO, "cannot read '" NPY_DIR "'", g_strerror(EISDIR));
  g_assert_null(ts_npy_load(NULL));
  assert_error(TS_ERR_INVALID_ARGUMENT, "path is NULL", NULL);

  ts_scope *scope = ts_scope_begin();
  char *dir = make_tmp_dir();
  char *path = g_build_filename(dir, "no", "such", "dir.npy", NULL);
  g_assert_false(ts_npy_save(path, ts_scalar_i32(1)));
  assert_error(TS_ERR_IO, path, g_strerror(ENOENT));
  g_free(path);

  path = g_build_filename(dir, "x.npy", NULL);
  g_assert_false(ts_npy_save(NULL, ts_scalar_i32(1)));
  assert_error(TS_ERR_INVALID_ARGUMENT, "path is NULL", NULL);
  g_assert_false(ts_npy_save(path, NULL));
  assert_error(TS_ERR_INVALID_ARGUMENT, "tensor is NULL", NULL);
  /* a NULL tensor from a failed op keeps that op's error */
  ts_error_set(TS_ERR_SHAPE, TS_HERE, "MatMul", "inner dimensions differ");
  g_assert_false(ts_npy_save(path, NULL));
  assert_error(TS_ERR_SHAPE, "MatMul: inner dimensions differ", NULL);

  ts_tensor sym = { .refcount = 1, .dtype = TS_F32, .shape = TS_SHAPE(-1, 3), .size = -1 };
  g_assert_false(ts_npy_save(path, &sym));
  assert_error(TS_ERR_INVALID_ARGUMENT, "cannot save a symbolic tensor", path);
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
  g_free(path);
  remove_tmp_dir(dir);
  ts_scope_end(scope);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/print/examples", test_print_examples);
  g_test_add_func("/print/floats", test_print_floats);
  g_test_add_func("/print/ints-and-bools", test_print_ints_and_bools);
  g_test_add_func("/print/wrapping", test_print_wrapping);
  g_test_add_func("/print/elision", test_print_elision);
  g_test_add_func("/print/blocks", test_print_blocks);
  g_test_add_func("/print/empty-and-symbolic", test_print_empty_and_symbolic);
  g_test_add_func("/print/traced-empty", test_print_traced_empty);
  g_test_add_func("/print/tensor-str", test_print_tensor_str);
  g_test_add_func("/npy/round-trip", test_npy_round_trip);
  g_test_add_func("/npy/numpy-files", test_npy_numpy_files);
  g_test_add_func("/npy/bfloat16-refused", test_npy_bfloat16_refused);
  g_test_add_func("/npy/corrupt", test_npy_corrupt);
  g_test_add_func("/npy/lenient", test_npy_lenient);
  g_test_add_func("/npy/io-errors", test_npy_io_errors);
  return g_test_run();
}
