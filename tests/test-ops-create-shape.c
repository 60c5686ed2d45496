/* test-ops-create-shape.c — creation ops (fill, zeros, ones, eye, range,
 * seeded random numbers) and shape/layout ops (reshape, flatten, transpose,
 * concat, split, slice, gather) against hand-computed values, plus every
 * error path. */
#include <glib.h>
#include <math.h>
#include <string.h>
#include <tracescope.h>

#include "../engine/ops/philox.h"

static void assert_info(ts_tensor *t, ts_dtype dtype, ts_shape shape)
{
  g_assert_nonnull(t);
  g_assert_cmpint(ts_tensor_dtype(t), ==, dtype);
  g_assert_cmpint(ts_tensor_rank(t), ==, shape.rank);
  for (int i = 0; i < shape.rank; i++)
    g_assert_cmpint(ts_tensor_dim(t, i), ==, shape.dim[i]);
}

static void assert_values(ts_tensor *t, const double *want, int64_t n)
{
  g_assert_nonnull(t);
  g_assert_cmpint(ts_tensor_size(t), ==, n);
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(t, i), ==, want[i]);
}

#define ASSERT_VALUES(t, ...)                                                       \
  do {                                                                              \
    const double want_[] = { __VA_ARGS__ };                                         \
    assert_values((t), want_, G_N_ELEMENTS(want_));                                 \
  } while (0)

/* Takes the pending error and checks its code, op, location and that the
 * message holds each of the (NULL-terminated) needles. */
static void assert_error(ts_tensor *result, ts_error_code code, const char *op, ...)
{
  g_assert_null(result);
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  if (e->code != code || g_strcmp0(e->op, op) != 0)
    g_error("expected %s from %s, got %s: %s", ts_error_code_name(code), op,
            ts_error_code_name(e->code), e->message);
  g_assert_nonnull(e->file);
  g_assert_nonnull(strstr(e->file, "test-ops-create-shape.c"));
  va_list ap;
  va_start(ap, op);
  for (const char *needle; (needle = va_arg(ap, const char *));)
    if (!strstr(e->message, needle))
      g_error("message \"%s\" lacks \"%s\"", e->message, needle);
  va_end(ap);
  ts_error_free(e);
}

/* ---- creation ------------------------------------------------------------------ */

static void test_fill(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *t = ts_fill(TS_SHAPE(2, 3), ts_scalar_f32(2.5f));
  assert_info(t, TS_F32, TS_SHAPE(2, 3));
  ASSERT_VALUES(t, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5);

  t = ts_fill(TS_SHAPE(5), ts_scalar_i64(-7));
  assert_info(t, TS_I64, TS_SHAPE(5));
  ASSERT_VALUES(t, -7, -7, -7, -7, -7);

  t = ts_fill(TS_SHAPE(3, 1), ts_scalar_bool(true));
  assert_info(t, TS_BOOL, TS_SHAPE(3, 1));
  ASSERT_VALUES(t, 1, 1, 1);

  uint8_t u = 200;
  t = ts_fill(TS_SCALAR_SHAPE, ts_constant(TS_U8, TS_SCALAR_SHAPE, &u));
  assert_info(t, TS_U8, TS_SCALAR_SHAPE);
  ASSERT_VALUES(t, 200);

  t = ts_fill(TS_SHAPE(0, 3), ts_scalar_f64(1));
  assert_info(t, TS_F64, TS_SHAPE(0, 3));
  g_assert_cmpint(ts_tensor_size(t), ==, 0);

  float v[] = { 1, 2 };
  assert_error(ts_fill(TS_SHAPE(2), ts_constant(TS_F32, TS_SHAPE(2), v)), TS_ERR_SHAPE, "Fill",
               "value must be a scalar", "f32[2]", NULL);
  assert_error(ts_fill(TS_SHAPE(2, -3), ts_scalar_f32(1)), TS_ERR_SHAPE, "Fill", "-3", NULL);

  /* A failed input passes its error on. */
  ts_tensor *bad = ts_fill(TS_SHAPE(-1), ts_scalar_f32(1));
  assert_error(ts_fill(TS_SHAPE(2), bad), TS_ERR_SHAPE, "Fill", NULL);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static void test_zeros_ones(void)
{
  ts_scope *scope = ts_scope_begin();
  for (int dt = 0; dt < TS_NUMERIC_DTYPE_COUNT; dt++) {
    ts_tensor *z = ts_zeros((ts_dtype)dt, TS_SHAPE(2, 2));
    ts_tensor *o = ts_ones((ts_dtype)dt, TS_SHAPE(3));
    assert_info(z, (ts_dtype)dt, TS_SHAPE(2, 2));
    assert_info(o, (ts_dtype)dt, TS_SHAPE(3));
    ASSERT_VALUES(z, 0, 0, 0, 0);
    ASSERT_VALUES(o, 1, 1, 1);

    ts_tensor *zl = ts_zeros_like(o), *ol = ts_ones_like(z);
    assert_info(zl, (ts_dtype)dt, TS_SHAPE(3));
    assert_info(ol, (ts_dtype)dt, TS_SHAPE(2, 2));
    ASSERT_VALUES(zl, 0, 0, 0);
    ASSERT_VALUES(ol, 1, 1, 1, 1);
  }
  /* The bytes, not just the values: f32 1.0 and a bool true. */
  float one = 1;
  ts_tensor *o = ts_ones(TS_F32, TS_SCALAR_SHAPE);
  g_assert_cmpmem(ts_tensor_data(o), sizeof one, &one, sizeof one);
  ts_tensor *b = ts_ones(TS_BOOL, TS_SHAPE(1));
  g_assert_cmpint(*(uint8_t *)ts_tensor_data(b), ==, 1);

  assert_info(ts_zeros(TS_I32, TS_SHAPE(4, 0)), TS_I32, TS_SHAPE(4, 0));
  assert_error(ts_zeros((ts_dtype)42, TS_SHAPE(2)), TS_ERR_DTYPE, "Zeros", "42", NULL);
  assert_error(ts_ones(TS_F32, TS_SHAPE(3, -1)), TS_ERR_SHAPE, "Ones", "-1", NULL);
  ts_shape deep = { .rank = 9 };
  assert_error(ts_zeros(TS_F32, deep), TS_ERR_SHAPE, "Zeros", "rank 9", NULL);
  assert_error(ts_zeros_like(NULL), TS_ERR_INVALID_ARGUMENT, "ZerosLike", NULL);
  ts_scope_end(scope);
}

static void test_eye(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *t = ts_eye(TS_F32, 2, 3);
  assert_info(t, TS_F32, TS_SHAPE(2, 3));
  ASSERT_VALUES(t, 1, 0, 0, 0, 1, 0);

  t = ts_eye(TS_I32, 3, 2);
  assert_info(t, TS_I32, TS_SHAPE(3, 2));
  ASSERT_VALUES(t, 1, 0, 0, 1, 0, 0);

  t = ts_eye(TS_BOOL, 2, 2);
  ASSERT_VALUES(t, 1, 0, 0, 1);

  t = ts_eye(TS_F64, 0, 4);
  assert_info(t, TS_F64, TS_SHAPE(0, 4));

  assert_error(ts_eye(TS_F32, -2, 3), TS_ERR_SHAPE, "Eye", "-2", NULL);
  ts_scope_end(scope);
}

static void test_range(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *t = ts_range(TS_I32, 0, 5, 1);
  assert_info(t, TS_I32, TS_SHAPE(5));
  ASSERT_VALUES(t, 0, 1, 2, 3, 4);

  t = ts_range(TS_I64, 10, 2, -3);
  assert_info(t, TS_I64, TS_SHAPE(3));
  ASSERT_VALUES(t, 10, 7, 4);

  t = ts_range(TS_U8, 250, 256, 2);
  assert_info(t, TS_U8, TS_SHAPE(3));
  ASSERT_VALUES(t, 250, 252, 254);

  t = ts_range(TS_F32, 0, 1, 0.25);
  assert_info(t, TS_F32, TS_SHAPE(4));
  ASSERT_VALUES(t, 0, 0.25, 0.5, 0.75);

  /* ceil((2 - 1) / 0.3) = 4 values, each start + i * delta. */
  t = ts_range(TS_F64, 1, 2, 0.3);
  assert_info(t, TS_F64, TS_SHAPE(4));
  ASSERT_VALUES(t, 1, 1 + 0.3, 1 + 2 * 0.3, 1 + 3 * 0.3);

  t = ts_range(TS_F64, 0, -1, -0.5);
  ASSERT_VALUES(t, 0, -0.5);

  /* Empty when the step points away from the limit. */
  assert_info(ts_range(TS_I32, 5, 0, 1), TS_I32, TS_SHAPE(0));
  assert_info(ts_range(TS_F32, 0, 5, -1), TS_F32, TS_SHAPE(0));

  /* Integers are exact beyond 2^53, where doubles skip odd numbers. */
  t = ts_range(TS_I64, 0x1p53, 0x1p53 + 4, 1);
  assert_info(t, TS_I64, TS_SHAPE(4));
  int64_t *p = ts_tensor_data(t);
  for (int i = 0; i < 4; i++)
    g_assert_cmpint(p[i], ==, ((int64_t)1 << 53) + i);

  /* Steps of 2^62 from -2^63: the span 3 * 2^62 overflows int64 but not the count. */
  t = ts_range(TS_I64, -0x1p63, 0x1p62, 0x1p62);
  assert_info(t, TS_I64, TS_SHAPE(3));
  p = ts_tensor_data(t);
  g_assert_cmpint(p[0], ==, INT64_MIN);
  g_assert_cmpint(p[1], ==, -((int64_t)1 << 62));
  g_assert_cmpint(p[2], ==, 0);

  /* the trip count TS_FOR (TS_RANGE) uses too: u8 2..255 by 2 has 127 values */
  ts_tensor *r8 = ts_range(TS_U8, 2, 255, 2);
  g_assert_nonnull(r8);
  g_assert_cmpint(ts_tensor_size(r8), ==, 127);
  g_assert_cmpint(ts_tensor_get_i64(r8, 126), ==, 254);
  g_assert_cmpint(ts_tensor_size(ts_range(TS_I64, -0x1p62, 0x1p62, 0x1p62)),
                  ==, 2);
  assert_error(ts_range(TS_F32, 0, 5, 0), TS_ERR_INVALID_ARGUMENT, "Range", "delta != 0", NULL);
  assert_error(ts_range(TS_I32, 0, 5, 0.5), TS_ERR_INVALID_ARGUMENT, "Range", "integers",
               "int32", NULL);
  assert_error(ts_range(TS_U8, 250, 260, 1), TS_ERR_OUT_OF_RANGE, "Range", "250 to 259",
               "uint8", NULL);
  assert_error(ts_range(TS_U8, -1, 2, 1), TS_ERR_OUT_OF_RANGE, "Range", "uint8", NULL);
  assert_error(ts_range(TS_F64, 0, NAN, 1), TS_ERR_INVALID_ARGUMENT, "Range", "finite", NULL);
  assert_error(ts_range(TS_BOOL, 0, 2, 1), TS_ERR_DTYPE, "Range", "bool", NULL);
  assert_error(ts_range(TS_F64, 0, 1e300, 1e-300), TS_ERR_SHAPE, "Range", "too large", NULL);
  assert_error(ts_range(TS_I64, -0x1p62, 0x1p62, 1), TS_ERR_SHAPE, "Range", "too large", NULL);
  ts_scope_end(scope);
}

static int64_t count_differences(ts_tensor *a, ts_tensor *b)
{
  int64_t n = 0;
  for (int64_t i = 0; i < ts_tensor_size(a); i++)
    n += ts_tensor_get_f64(a, i) != ts_tensor_get_f64(b, i);
  return n;
}

static void assert_within(ts_tensor *t, double lo, double hi)
{
  for (int64_t i = 0; i < ts_tensor_size(t); i++) {
    double v = ts_tensor_get_f64(t, i);
    if (!(v >= lo && v < hi))
      g_error("element %" G_GINT64_FORMAT " = %.17g is not in [%g, %g)", i, v, lo, hi);
  }
}

static void test_random_uniform(void)
{
  ts_scope *scope = ts_scope_begin();
  static const ts_dtype floats[] = { TS_F32, TS_F64 };
  for (size_t d = 0; d < G_N_ELEMENTS(floats); d++) {
    ts_tensor *a = ts_random_uniform(floats[d], TS_SHAPE(50, 20), -2, 3, 42);
    ts_tensor *b = ts_random_uniform(floats[d], TS_SHAPE(50, 20), -2, 3, 42);
    ts_tensor *c = ts_random_uniform(floats[d], TS_SHAPE(50, 20), -2, 3, 43);
    assert_info(a, floats[d], TS_SHAPE(50, 20));
    g_assert_cmpmem(ts_tensor_data(a), 1000 * 4 * (int)(d + 1), ts_tensor_data(b),
                    1000 * 4 * (int)(d + 1));
    g_assert_cmpint(count_differences(a, c), >, 990);
    assert_within(a, -2, 3);
    /* Spread over the interval, not bunched: both ends are reached. */
    double lo = 3, hi = -2;
    for (int64_t i = 0; i < 1000; i++) {
      lo = MIN(lo, ts_tensor_get_f64(a, i));
      hi = MAX(hi, ts_tensor_get_f64(a, i));
    }
    g_assert_cmpfloat(lo, <, -1.9);
    g_assert_cmpfloat(hi, >, 2.9);
  }

  /* Integers: every value of [-3, 4) turns up, nothing else does. */
  ts_tensor *t = ts_random_uniform(TS_I32, TS_SHAPE(1000), -3, 4, 7);
  assert_info(t, TS_I32, TS_SHAPE(1000));
  assert_within(t, -3, 4);
  int seen[7] = { 0 };
  for (int64_t i = 0; i < 1000; i++)
    seen[ts_tensor_get_i64(t, i) + 3]++;
  for (int i = 0; i < 7; i++)
    g_assert_cmpint(seen[i], >, 50);
  t = ts_random_uniform(TS_U8, TS_SHAPE(500), 0, 256, 7);
  assert_within(t, 0, 256);
  t = ts_random_uniform(TS_I64, TS_SHAPE(500), -0x1p63, 0x1p63, 7);
  assert_info(t, TS_I64, TS_SHAPE(500));
  t = ts_random_uniform(TS_I64, TS_SHAPE(100), 5, 6, 99);
  assert_within(t, 5, 6);

  /* The stream is pinned (checked against a Python model of splitmix64 +
   * xoshiro256** + rejection): the same values on every machine. */
  t = ts_random_uniform(TS_I64, TS_SHAPE(4), 0, 1000000, 1);
  ASSERT_VALUES(t, 79557, 540522, 690900, 545383);
  ts_tensor *u = ts_random_uniform(TS_I64, TS_SHAPE(4), 0, 1000000, UINT64_MAX);
  g_assert_cmpint(count_differences(t, u), ==, 4);

  /* f32 has no value in [1 + 1e-12, 1 + 2e-12), but 1 is in [1, 1 + 1e-12). */
  ASSERT_VALUES(ts_random_uniform(TS_F32, TS_SHAPE(2), 1, 1 + 1e-12, 0), 1, 1);
  assert_error(ts_random_uniform(TS_F32, TS_SHAPE(2), 1 + 1e-12, 1 + 2e-12, 0),
               TS_ERR_INVALID_ARGUMENT,
               "RandomUniform", "float32", NULL);
  assert_error(ts_random_uniform(TS_F32, TS_SHAPE(2), 3, 1, 0), TS_ERR_INVALID_ARGUMENT,
               "RandomUniform", "minval < maxval", NULL);
  assert_error(ts_random_uniform(TS_I32, TS_SHAPE(2), 1, 1, 0), TS_ERR_INVALID_ARGUMENT,
               "RandomUniform", "minval < maxval", NULL);
  assert_error(ts_random_uniform(TS_I32, TS_SHAPE(2), 0.5, 3, 0), TS_ERR_INVALID_ARGUMENT,
               "RandomUniform", "integers", NULL);
  assert_error(ts_random_uniform(TS_U8, TS_SHAPE(2), 0, 257, 0), TS_ERR_INVALID_ARGUMENT,
               "RandomUniform", "uint8", NULL);
  assert_error(ts_random_uniform(TS_F64, TS_SHAPE(2), -INFINITY, 0, 0), TS_ERR_INVALID_ARGUMENT,
               "RandomUniform", "finite", NULL);
  assert_error(ts_random_uniform(TS_BOOL, TS_SHAPE(2), 0, 1, 0), TS_ERR_DTYPE, "RandomUniform",
               "bool", NULL);
  assert_error(ts_random_uniform(TS_F32, TS_SHAPE(-2), 0, 1, 0), TS_ERR_SHAPE, "RandomUniform",
               NULL);
  ts_scope_end(scope);
}

/* StatelessRandomUniform draws element i from Philox4x32-10 block i of
 * (seed, counter), the bits the CUDA kernel draws too: the generator is
 * Random123's (its known answers), and every element is the formula's. */
static void test_stateless_uniform(void)
{
  static const struct {
    uint64_t seed, counter, i;
    uint32_t want[4];
  } KAT[] = { /* Random123's kat_vectors, philox4x32_10 (key, counter) */
    { 0, 0, 0, { 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 } },
    { UINT64_MAX, UINT64_MAX, UINT64_MAX, { 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd } },
    { 0x299f31d0a4093822, 0x0370734413198a2e, 0x85a308d3243f6a88,
      { 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 } },
  };
  for (size_t k = 0; k < G_N_ELEMENTS(KAT); k++) {
    uint32_t w[4];
    ts_philox_block(KAT[k].seed, KAT[k].counter, KAT[k].i, w);
    g_assert_cmpmem(w, sizeof w, KAT[k].want, sizeof w);
  }

  ts_scope *scope = ts_scope_begin();
  ts_tensor *counter = ts_scalar_i64(5), *other = ts_scalar_i64(6);
  const uint64_t seed = 0x123456789;
  ts_tensor *f32 = ts_stateless_random_uniform(TS_F32, TS_SHAPE(5000), -2, 3, seed, counter);
  ts_tensor *f64 = ts_stateless_random_uniform(TS_F64, TS_SHAPE(5000), -2, 3, seed, counter);
  ts_tensor *i32 = ts_stateless_random_uniform(TS_I32, TS_SHAPE(5000), -3, 4, seed, counter);
  ts_tensor *u64 = ts_stateless_random_uniform(TS_U64, TS_SHAPE(5000), 10, 1000, seed, counter);
  g_assert_true(f32 && f64 && i32 && u64);
  for (int64_t i = 0; i < 5000; i++) {
    uint32_t w[4];
    ts_philox_block(seed, 5, (uint64_t)i, w);
    g_assert_cmpfloat(ts_tensor_get_f64(f32, i), ==, ts_philox_f32(w, -2, 3, -2.0f));
    g_assert_cmpfloat(ts_tensor_get_f64(f64, i), ==, ts_philox_f64(w, -2, 3));
    g_assert_cmpint(ts_tensor_get_i64(i32, i), ==, (int32_t)ts_philox_int(w, (uint64_t)-3, 7));
    g_assert_cmpuint(((const uint64_t *)ts_tensor_data(u64))[i], ==, ts_philox_int(w, 10, 990));
  }
  assert_within(f32, -2, 3);
  assert_within(i32, -3, 4);
  /* another counter, another stream; the same one, the same numbers */
  g_assert_cmpint(count_differences(f32, ts_stateless_random_uniform(TS_F32, TS_SHAPE(5000), -2,
                                                                     3, seed, other)), >, 4990);
  g_assert_cmpint(count_differences(f64, ts_stateless_random_uniform(TS_F64, TS_SHAPE(5000), -2,
                                                                     3, seed, counter)), ==, 0);
  /* 16-bit floats: rounded from the double, never up to maxval (1 - 2^-12
   * and above round to 1 in f16, to 1 in bf16 from 1 - 2^-9) */
  static const ts_dtype halves[] = { TS_F16, TS_BF16 };
  for (size_t d = 0; d < G_N_ELEMENTS(halves); d++) {
    ts_tensor *h = ts_stateless_random_uniform(halves[d], TS_SHAPE(20000), 0, 1, seed, counter);
    assert_within(h, 0, 1);
    double top = 0;
    for (int64_t i = 0; i < 20000; i++)
      top = MAX(top, ts_tensor_get_f64(h, i));
    g_assert_cmpfloat(top, >, 0.99);
  }
  ts_scope_end(scope);
}

static void moments(ts_tensor *t, double *mean, double *std)
{
  double sum = 0, sq = 0;
  int64_t n = ts_tensor_size(t);
  for (int64_t i = 0; i < n; i++)
    sum += ts_tensor_get_f64(t, i);
  *mean = sum / (double)n;
  for (int64_t i = 0; i < n; i++) {
    double d = ts_tensor_get_f64(t, i) - *mean;
    sq += d * d;
  }
  *std = sqrt(sq / (double)n);
}

static void test_random_normal(void)
{
  ts_scope *scope = ts_scope_begin();
  static const ts_dtype floats[] = { TS_F32, TS_F64 };
  for (size_t d = 0; d < G_N_ELEMENTS(floats); d++) {
    ts_tensor *a = ts_random_normal(floats[d], TS_SHAPE(100, 100), 1.5, 2, 11);
    ts_tensor *b = ts_random_normal(floats[d], TS_SHAPE(100, 100), 1.5, 2, 11);
    ts_tensor *c = ts_random_normal(floats[d], TS_SHAPE(100, 100), 1.5, 2, 12);
    assert_info(a, floats[d], TS_SHAPE(100, 100));
    g_assert_cmpint(count_differences(a, b), ==, 0);
    g_assert_cmpint(count_differences(a, c), >, 9900);
    /* 10000 samples: the mean's standard error is 0.02, the std's about 0.014. */
    double mean, std;
    moments(a, &mean, &std);
    g_assert_cmpfloat_with_epsilon(mean, 1.5, 0.1);
    g_assert_cmpfloat_with_epsilon(std, 2, 0.1);
    /* Roughly 68% within one standard deviation. */
    int64_t inside = 0;
    for (int64_t i = 0; i < 10000; i++)
      inside += fabs(ts_tensor_get_f64(a, i) - 1.5) < 2;
    g_assert_cmpint(inside, >, 6500);
    g_assert_cmpint(inside, <, 7100);
  }
  /* An odd count uses half of the last Box-Muller pair. */
  ts_tensor *t = ts_random_normal(TS_F64, TS_SHAPE(3), 0, 1, 5);
  assert_info(t, TS_F64, TS_SHAPE(3));
  for (int i = 0; i < 3; i++)
    g_assert_true(isfinite(ts_tensor_get_f64(t, i)));
  t = ts_random_normal(TS_F32, TS_SHAPE(4), 3, 0, 5);
  ASSERT_VALUES(t, 3, 3, 3, 3);

  assert_error(ts_random_normal(TS_I32, TS_SHAPE(2), 0, 1, 0), TS_ERR_DTYPE, "RandomNormal",
               "int32", NULL);
  assert_error(ts_random_normal(TS_F32, TS_SHAPE(2), 0, -1, 0), TS_ERR_INVALID_ARGUMENT,
               "RandomNormal", "stddev", NULL);
  ts_scope_end(scope);
}

static void test_huge_shapes(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_shape huge = TS_SHAPE(1000000000000, 1000000000000);
  assert_error(ts_zeros(TS_F32, huge), TS_ERR_SHAPE, "Zeros", "too large",
               "f32[1000000000000,1000000000000]", NULL);
  assert_error(ts_ones(TS_U8, huge), TS_ERR_SHAPE, "Ones", "too large", NULL);
  assert_error(ts_fill(huge, ts_scalar_i32(1)), TS_ERR_SHAPE, "Fill", "too large", NULL);
  assert_error(ts_eye(TS_F64, 1000000000000, 1000000000000), TS_ERR_SHAPE, "Eye", "too large",
               NULL);
  assert_error(ts_random_uniform(TS_F32, huge, 0, 1, 0), TS_ERR_SHAPE, "RandomUniform",
               "too large", NULL);
  assert_error(ts_random_normal(TS_F64, huge, 0, 1, 0), TS_ERR_SHAPE, "RandomNormal",
               "too large", NULL);
  assert_error(ts_zeros(TS_F64, TS_SHAPE(INT64_MAX, 2)), TS_ERR_SHAPE, "Zeros", "too large",
               NULL);
  g_assert_cmpint(ts_scope_n_tensors(), ==, 1); /* only Fill's value */
  ts_scope_end(scope);
}

/* Empty tensors whose other dims multiply past int64: every shape op either
 * works (the result is empty too) or fails cleanly naming the op and shape. */
static void test_overflowing_empty_shapes(void)
{
  ts_scope *scope = ts_scope_begin();
  const int64_t big = INT64_C(1) << 62;
  ts_tensor *x = ts_zeros(TS_F32, TS_SHAPE(0, big, 3));
  assert_info(x, TS_F32, TS_SHAPE(0, big, 3));
  ts_tensor *y = ts_zeros(TS_F32, TS_SHAPE(big, 4, 0));
  assert_info(y, TS_F32, TS_SHAPE(big, 4, 0));
  const int64_t tera = INT64_C(1) << 40; /* issue 22: [2^40, 2^40, 0] is empty, not too large */
  assert_info(ts_zeros(TS_F32, TS_SHAPE(tera, tera, 0)), TS_F32, TS_SHAPE(tera, tera, 0));
  assert_info(ts_ones(TS_I64, TS_SHAPE(tera, tera, 0)), TS_I64, TS_SHAPE(tera, tera, 0));
  assert_error(ts_flatten(x), TS_ERR_SHAPE, "Flatten", "cannot flatten",
               "f32[0,4611686018427387904,3]", "overflows", NULL);
  assert_info(ts_flatten(y), TS_F32, TS_SHAPE(big, 0));
  assert_info(ts_reshape(x, TS_SHAPE(-1, 12)), TS_F32, TS_SHAPE(0, 12));
  assert_error(ts_reshape(x, TS_SHAPE(big, 8, 0, -1)), TS_ERR_SHAPE, "Reshape",
               "cannot reshape", NULL);
  assert_info(ts_reshape(x, TS_SHAPE(0, 5)), TS_F32, TS_SHAPE(0, 5));
  assert_info(ts_reshape(y, TS_SHAPE(big, big, 0)), TS_F32, TS_SHAPE(big, big, 0));
  assert_info(ts_transpose(y, TS_ALL_AXES), TS_F32, TS_SHAPE(0, 4, big));
  ts_tensor *parts[2];
  g_assert_cmpint(ts_split(x, 2, 1, parts), ==, 2);
  assert_info(parts[1], TS_F32, TS_SHAPE(0, big / 2, 3));
  assert_info(ts_slice(y, TS_INTS(1, 0, 0), TS_INTS(-1, -1, -1)), TS_F32,
              TS_SHAPE(big - 1, 4, 0));
  ts_tensor *two[] = { x, x };
  assert_info(ts_concat(two, 2, 0), TS_F32, TS_SHAPE(0, big, 3));
  ts_tensor *z = ts_zeros(TS_F32, TS_SHAPE(0, INT64_MAX - 1));
  ts_tensor *three[] = { z, z, z };
  assert_error(ts_concat(three, 3, 1), TS_ERR_SHAPE, "Concat", "overflows int64", NULL);
  ts_scope_end(scope);
}

/* ---- reshape and flatten ----------------------------------------------------------- */

static void test_reshape(void)
{
  ts_scope *scope = ts_scope_begin();
  int32_t v[] = { 1, 2, 3, 4, 5, 6 };
  ts_tensor *x = ts_constant(TS_I32, TS_SHAPE(2, 3), v);

  ts_tensor *y = ts_reshape(x, TS_SHAPE(3, 2));
  assert_info(y, TS_I32, TS_SHAPE(3, 2));
  ASSERT_VALUES(y, 1, 2, 3, 4, 5, 6);
  g_assert_true(ts_tensor_data(y) == ts_tensor_data(x));

  assert_info(ts_reshape(x, TS_SHAPE(-1)), TS_I32, TS_SHAPE(6));
  assert_info(ts_reshape(x, TS_SHAPE(-1, 2)), TS_I32, TS_SHAPE(3, 2));
  assert_info(ts_reshape(x, TS_SHAPE(1, -1, 3)), TS_I32, TS_SHAPE(1, 2, 3));
  /* A view of a view still shares the first tensor's data. */
  ts_tensor *z = ts_reshape(ts_reshape(x, TS_SHAPE(6)), TS_SHAPE(2, 1, 3));
  assert_info(z, TS_I32, TS_SHAPE(2, 1, 3));
  g_assert_true(ts_tensor_data(z) == ts_tensor_data(x));

  assert_info(ts_reshape(ts_scalar_f32(4), TS_SHAPE(1, 1)), TS_F32, TS_SHAPE(1, 1));
  double one = 9;
  ts_tensor *s = ts_reshape(ts_constant(TS_F64, TS_SHAPE(1), &one), TS_SCALAR_SHAPE);
  assert_info(s, TS_F64, TS_SCALAR_SHAPE);
  ASSERT_VALUES(s, 9);
  assert_info(ts_reshape(ts_zeros(TS_F32, TS_SHAPE(0, 3)), TS_SHAPE(-1, 3)), TS_F32,
              TS_SHAPE(0, 3));

  assert_error(ts_reshape(x, TS_SHAPE(4, 2)), TS_ERR_SHAPE, "Reshape", "i32[2,3]", "[4,2]",
               "6 elements", NULL);
  assert_error(ts_reshape(x, TS_SHAPE(4, -1)), TS_ERR_SHAPE, "Reshape", "i32[2,3]", "[4,-1]",
               NULL);
  assert_error(ts_reshape(x, TS_SHAPE(-1, -1)), TS_ERR_SHAPE, "Reshape", "[-1,-1]", NULL);
  assert_error(ts_reshape(x, TS_SHAPE(-2, -3)), TS_ERR_SHAPE, "Reshape", "[-2,-3]", NULL);
  /* A -1 beside a 0 takes the input's nonzero dims over the other nonzero
   * dims, as TensorFlow's Reshape ([0,3] into [0,-1] is [0,3], into
   * [-1,0] is [3,0]); NumPy refuses both as ambiguous. */
  ts_tensor *e03 = ts_zeros(TS_F32, TS_SHAPE(0, 3));
  assert_info(ts_reshape(e03, TS_SHAPE(0, -1)), TS_F32, TS_SHAPE(0, 3));
  assert_info(ts_reshape(e03, TS_SHAPE(-1, 0)), TS_F32, TS_SHAPE(3, 0));
  assert_info(ts_reshape(ts_zeros(TS_F32, TS_SHAPE(2, 0, 6)), TS_SHAPE(4, -1, 0)), TS_F32,
              TS_SHAPE(4, 3, 0));
  /* the input must still be empty */
  assert_error(ts_reshape(x, TS_SHAPE(-1, 0)), TS_ERR_SHAPE, "Reshape", "i32[2,3]", "[-1,0]",
               NULL);
  assert_error(ts_reshape(x, TS_SHAPE(INT64_MAX, 4)), TS_ERR_SHAPE, "Reshape", "i32[2,3]",
               NULL);
  ts_scope_end(scope);
}

static void test_flatten(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_range(TS_F32, 0, 24, 1);
  ts_tensor *x3 = ts_reshape(x, TS_SHAPE(2, 3, 4));
  ts_tensor *y = ts_flatten(x3);
  assert_info(y, TS_F32, TS_SHAPE(2, 12));
  g_assert_true(ts_tensor_data(y) == ts_tensor_data(x));
  g_assert_cmpfloat(ts_tensor_get_f64(y, 13), ==, 13);

  assert_info(ts_flatten(ts_range(TS_I64, 0, 5, 1)), TS_I64, TS_SHAPE(5, 1));
  assert_info(ts_flatten(ts_zeros(TS_U8, TS_SHAPE(3, 0, 2))), TS_U8, TS_SHAPE(3, 0));
  assert_error(ts_flatten(ts_scalar_f32(1)), TS_ERR_SHAPE, "Flatten", "f32[]", NULL);
  ts_scope_end(scope);

  /* The view keeps its base alive after the base's scope ends. */
  ts_scope *outer = ts_scope_begin();
  int before = ts_scope_n_tensors();
  ts_scope *inner = ts_scope_begin();
  int32_t v[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
  ts_tensor *base = ts_constant(TS_I32, TS_SHAPE(2, 2, 2), v);
  ts_tensor *view = ts_flatten(base);
  g_assert_true(ts_tensor_data(view) == ts_tensor_data(base));
  g_assert_true(ts_scope_end_keep(inner, view) == view);
  g_assert_cmpint(ts_scope_n_tensors(), ==, before + 1);
  assert_info(view, TS_I32, TS_SHAPE(2, 4));
  ASSERT_VALUES(view, 1, 2, 3, 4, 5, 6, 7, 8);
  ts_scope_end(outer);
  g_assert_false(ts_failed());
}

/* ---- transpose ------------------------------------------------------------------- */

static void test_transpose_2d(void)
{
  ts_scope *scope = ts_scope_begin();
  int32_t v[] = { 1, 2, 3, 4, 5, 6 };
  ts_tensor *t = ts_transpose(ts_constant(TS_I32, TS_SHAPE(2, 3), v), TS_INTS(1, 0));
  assert_info(t, TS_I32, TS_SHAPE(3, 2));
  ASSERT_VALUES(t, 1, 4, 2, 5, 3, 6);

  double w[] = { 1.5, -2, 3, 0.25 };
  t = ts_transpose(ts_constant(TS_F64, TS_SHAPE(2, 2), w), TS_ALL_AXES);
  ASSERT_VALUES(t, 1.5, 3, -2, 0.25);

  bool b[] = { true, false, false, false, true, true };
  t = ts_transpose(ts_constant(TS_BOOL, TS_SHAPE(3, 2), b), TS_INTS(-1, -2));
  assert_info(t, TS_BOOL, TS_SHAPE(2, 3));
  ASSERT_VALUES(t, 1, 0, 1, 0, 0, 1);

  /* Larger than a tile, odd sizes: out[j][i] = in[i][j] = 100 i + j. */
  static int64_t in[70 * 45];
  for (int i = 0; i < 70; i++)
    for (int j = 0; j < 45; j++)
      in[i * 45 + j] = 100 * i + j;
  ts_tensor *big = ts_transpose(ts_constant(TS_I64, TS_SHAPE(70, 45), in), TS_ALL_AXES);
  assert_info(big, TS_I64, TS_SHAPE(45, 70));
  for (int j = 0; j < 45; j++)
    for (int i = 0; i < 70; i++)
      g_assert_cmpint(ts_tensor_get_i64(big, j * 70 + i), ==, 100 * i + j);

  ts_tensor *s = ts_transpose(ts_scalar_f32(3), TS_ALL_AXES);
  assert_info(s, TS_F32, TS_SCALAR_SHAPE);
  ASSERT_VALUES(s, 3);
  ts_scope_end(scope);
}

/* Every permutation of [2, 1, 3, 4, 5] (a dim of 1 to drop, runs of dims
 * that stay together to merge, batches of 2-D transposes such as NCHW ->
 * NHWC) against index arithmetic. */
static void test_transpose_merged_dims(void)
{
  ts_scope *scope = ts_scope_begin();
  enum { R = 5 };
  static const int64_t dims[R] = { 2, 1, 3, 4, 5 };
  float v[120];
  for (int i = 0; i < 120; i++)
    v[i] = (float)i;
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(2, 1, 3, 4, 5), v);
  int pm[R] = { 0, 1, 2, 3, 4 };
  for (int n = 0; n < 120; n++) {
    /* the next permutation in lexicographic order (the first is the identity) */
    if (n > 0) {
      int i = R - 2;
      while (pm[i] > pm[i + 1])
        i--;
      int j = R - 1;
      while (pm[j] < pm[i])
        j--;
      int t = pm[i];
      pm[i] = pm[j];
      pm[j] = t;
      for (int a = i + 1, b = R - 1; a < b; a++, b--) {
        t = pm[a];
        pm[a] = pm[b];
        pm[b] = t;
      }
    }
    ts_tensor *y = ts_transpose(x, TS_INTS(pm[0], pm[1], pm[2], pm[3], pm[4]));
    assert_info(y, TS_F32, TS_SHAPE(dims[pm[0]], dims[pm[1]], dims[pm[2]], dims[pm[3]], dims[pm[4]]));
    for (int64_t at = 0; at < 120; at++) {
      int64_t idx[R], rest = at, src = 0;
      for (int d = R - 1; d >= 0; d--) {
        idx[pm[d]] = rest % dims[pm[d]];
        rest /= dims[pm[d]];
      }
      for (int d = 0; d < R; d++)
        src = src * dims[d] + idx[d];
      if (ts_tensor_get_f64(y, at) != (double)src)
        g_error("perm [%d,%d,%d,%d,%d], element %" G_GINT64_FORMAT ": %g, want %" G_GINT64_FORMAT,
                pm[0], pm[1], pm[2], pm[3], pm[4], at, ts_tensor_get_f64(y, at), src);
    }
  }
  ts_scope_end(scope);
}

static void test_transpose_3d(void)
{
  ts_scope *scope = ts_scope_begin();
  /* x[i][j][k] = 100 i + 10 j + k over [2, 3, 4]. */
  uint8_t u8[24];
  float f32[24];
  for (int i = 0; i < 24; i++) {
    f32[i] = (float)(100 * (i / 12) + 10 * (i / 4 % 3) + i % 4);
    u8[i] = (uint8_t)i;
  }
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(2, 3, 4), f32);
  static const int perms[6][3] = {
    { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
  };
  static const int64_t dims[3] = { 2, 3, 4 };
  for (int p = 0; p < 6; p++) {
    const int *pm = perms[p];
    ts_tensor *t = ts_transpose(x, TS_INTS(pm[0], pm[1], pm[2]));
    assert_info(t, TS_F32, TS_SHAPE(dims[pm[0]], dims[pm[1]], dims[pm[2]]));
    int64_t at = 0;
    for (int a = 0; a < dims[pm[0]]; a++)
      for (int b = 0; b < dims[pm[1]]; b++)
        for (int c = 0; c < dims[pm[2]]; c++) {
          int idx[3];
          idx[pm[0]] = a;
          idx[pm[1]] = b;
          idx[pm[2]] = c;
          g_assert_cmpfloat(ts_tensor_get_f64(t, at++), ==, 100 * idx[0] + 10 * idx[1] + idx[2]);
        }
  }
  /* Written out: u8 [2,3,4] with perm (2, 0, 1) -> [4, 2, 3]. */
  ts_tensor *t = ts_transpose(ts_constant(TS_U8, TS_SHAPE(2, 3, 4), u8), TS_INTS(2, 0, 1));
  assert_info(t, TS_U8, TS_SHAPE(4, 2, 3));
  ASSERT_VALUES(t, 0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11,
                15, 19, 23);
  t = ts_transpose(ts_constant(TS_U8, TS_SHAPE(2, 3, 4), u8), TS_ALL_AXES);
  assert_info(t, TS_U8, TS_SHAPE(4, 3, 2));
  ASSERT_VALUES(t, 0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7,
                19, 11, 23);
  assert_info(ts_transpose(ts_zeros(TS_I32, TS_SHAPE(2, 0, 3)), TS_INTS(2, 0, 1)), TS_I32,
              TS_SHAPE(3, 2, 0));

  assert_error(ts_transpose(x, TS_INTS(0, 0, 1)), TS_ERR_INVALID_ARGUMENT, "Transpose",
               "[0,0,1]", "f32[2,3,4]", NULL);
  assert_error(ts_transpose(x, TS_INTS(1, 0)), TS_ERR_INVALID_ARGUMENT, "Transpose", "[1,0]",
               NULL);
  assert_error(ts_transpose(x, TS_INTS(0, 1, 3)), TS_ERR_INVALID_ARGUMENT, "Transpose",
               "[0,1,3]", NULL);
  ts_scope_end(scope);
}

/* ---- concat and split --------------------------------------------------------------- */

static void test_concat(void)
{
  ts_scope *scope = ts_scope_begin();
  int32_t a_v[] = { 1, 2, 3, 4 }, b_v[] = { 5, 6, 7, 8, 9, 10 };
  ts_tensor *a = ts_constant(TS_I32, TS_SHAPE(2, 2), a_v);
  ts_tensor *b = ts_constant(TS_I32, TS_SHAPE(3, 2), b_v);
  ts_tensor *xs[] = { a, b };
  ts_tensor *t = ts_concat(xs, 2, 0);
  assert_info(t, TS_I32, TS_SHAPE(5, 2));
  ASSERT_VALUES(t, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);

  ts_tensor *c = ts_constant(TS_I32, TS_SHAPE(2, 3), b_v);
  ts_tensor *ys[] = { a, c, a };
  t = ts_concat(ys, 3, 1);
  assert_info(t, TS_I32, TS_SHAPE(2, 7));
  ASSERT_VALUES(t, 1, 2, 5, 6, 7, 1, 2, 3, 4, 8, 9, 10, 3, 4);
  t = ts_concat(ys, 3, -1);
  assert_info(t, TS_I32, TS_SHAPE(2, 7));

  /* Each axis of a 3-D f64 pair, p = [1,2,2] of 0..3 and q = 4..7 reshaped. */
  ts_tensor *p = ts_reshape(ts_range(TS_F64, 0, 4, 1), TS_SHAPE(1, 2, 2));
  ts_tensor *q = ts_reshape(ts_range(TS_F64, 4, 8, 1), TS_SHAPE(1, 2, 2));
  ts_tensor *pq[] = { p, q };
  t = ts_concat(pq, 2, 0);
  assert_info(t, TS_F64, TS_SHAPE(2, 2, 2));
  ASSERT_VALUES(t, 0, 1, 2, 3, 4, 5, 6, 7);
  t = ts_concat(pq, 2, 1);
  assert_info(t, TS_F64, TS_SHAPE(1, 4, 2));
  ASSERT_VALUES(t, 0, 1, 2, 3, 4, 5, 6, 7);
  t = ts_concat(pq, 2, 2);
  assert_info(t, TS_F64, TS_SHAPE(1, 2, 4));
  ASSERT_VALUES(t, 0, 1, 4, 5, 2, 3, 6, 7);

  /* Mixed dtypes promote: i32 with f32 gives f32; bool with u8 gives u8. */
  float f_v[] = { 0.5f, 1.5f };
  ts_tensor *mixed[] = { ts_constant(TS_F32, TS_SHAPE(1, 2), f_v), a };
  t = ts_concat(mixed, 2, 0);
  assert_info(t, TS_F32, TS_SHAPE(3, 2));
  ASSERT_VALUES(t, 0.5, 1.5, 1, 2, 3, 4);
  ts_tensor *bu[] = { ts_ones(TS_BOOL, TS_SHAPE(2)), ts_range(TS_U8, 7, 9, 1) };
  t = ts_concat(bu, 2, 0);
  assert_info(t, TS_U8, TS_SHAPE(4));
  ASSERT_VALUES(t, 1, 1, 7, 8);

  /* One input, and an empty one beside a full one. */
  t = ts_concat(&a, 1, 0);
  ASSERT_VALUES(t, 1, 2, 3, 4);
  g_assert_true(ts_tensor_data(t) != ts_tensor_data(a));
  ts_tensor *with_empty[] = { ts_zeros(TS_I32, TS_SHAPE(2, 0)), a };
  t = ts_concat(with_empty, 2, 1);
  assert_info(t, TS_I32, TS_SHAPE(2, 2));
  ASSERT_VALUES(t, 1, 2, 3, 4);

  ts_tensor *rank_bad[] = { a, ts_range(TS_I32, 0, 2, 1) };
  assert_error(ts_concat(rank_bad, 2, 0), TS_ERR_SHAPE, "Concat", "i32[2,2]", "i32[2]", NULL);
  assert_error(ts_concat(xs, 2, 1), TS_ERR_SHAPE, "Concat", "dimension 0", "i32[2,2]",
               "i32[3,2]", NULL);
  assert_error(ts_concat(xs, 2, 2), TS_ERR_INVALID_ARGUMENT, "Concat", "axis 2", NULL);
  ts_tensor *scalars[] = { ts_scalar_f32(1), ts_scalar_f32(2) };
  assert_error(ts_concat(scalars, 2, 0), TS_ERR_SHAPE, "Concat", "scalars", NULL);
  assert_error(ts_concat(xs, 0, 0), TS_ERR_INVALID_ARGUMENT, "Concat", "got 0", NULL);
  ts_tensor *many[65];
  for (int i = 0; i < 65; i++)
    many[i] = a;
  assert_error(ts_concat(many, 65, 0), TS_ERR_INVALID_ARGUMENT, "Concat", "got 65", NULL);
  t = ts_concat(many, 64, 0);
  assert_info(t, TS_I32, TS_SHAPE(128, 2));
  ts_tensor *with_null[] = { a, NULL };
  assert_error(ts_concat(with_null, 2, 0), TS_ERR_INVALID_ARGUMENT, "Concat", NULL);
  ts_scope_end(scope);
}

static void test_split(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_reshape(ts_range(TS_I64, 0, 24, 1), TS_SHAPE(4, 6));
  ts_tensor *out[64];
  g_assert_cmpint(ts_split(x, 2, 0, out), ==, 2);
  assert_info(out[0], TS_I64, TS_SHAPE(2, 6));
  assert_info(out[1], TS_I64, TS_SHAPE(2, 6));
  ASSERT_VALUES(out[0], 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
  ASSERT_VALUES(out[1], 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23);

  g_assert_cmpint(ts_split(x, 3, -1, out), ==, 3);
  for (int i = 0; i < 3; i++)
    assert_info(out[i], TS_I64, TS_SHAPE(4, 2));
  ASSERT_VALUES(out[0], 0, 1, 6, 7, 12, 13, 18, 19);
  ASSERT_VALUES(out[1], 2, 3, 8, 9, 14, 15, 20, 21);
  ASSERT_VALUES(out[2], 4, 5, 10, 11, 16, 17, 22, 23);

  float f[] = { 1, 2, 3, 4 };
  g_assert_cmpint(ts_split(ts_constant(TS_F32, TS_SHAPE(4), f), 4, 0, out), ==, 4);
  for (int i = 0; i < 4; i++) {
    assert_info(out[i], TS_F32, TS_SHAPE(1));
    ASSERT_VALUES(out[i], i + 1);
  }
  g_assert_cmpint(ts_split(ts_zeros(TS_U8, TS_SHAPE(0, 4)), 2, 1, out), ==, 2);
  assert_info(out[1], TS_U8, TS_SHAPE(0, 2));

  g_assert_cmpint(ts_split(x, 4, 1, out), ==, -1);
  g_assert_null(out[0]);
  assert_error(NULL, TS_ERR_SHAPE, "Split", "evenly divide", "size = 6", "i64[4,6]", NULL);
  g_assert_cmpint(ts_split(x, 0, 0, out), ==, -1);
  assert_error(NULL, TS_ERR_INVALID_ARGUMENT, "Split", "got 0", NULL);
  g_assert_cmpint(ts_split(x, 65, 0, out), ==, -1);
  assert_error(NULL, TS_ERR_INVALID_ARGUMENT, "Split", "got 65", NULL);
  g_assert_cmpint(ts_split(x, 2, 2, out), ==, -1);
  assert_error(NULL, TS_ERR_INVALID_ARGUMENT, "Split", "axis 2", NULL);
  g_assert_cmpint(ts_split(ts_scalar_i32(1), 1, 0, out), ==, -1);
  assert_error(NULL, TS_ERR_INVALID_ARGUMENT, "Split", "i32[]", NULL);
  ts_scope_end(scope);
}

/* tf.stack and tf.unstack, their values worked out by hand. */
static void test_pack_unpack(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *a = ts_reshape(ts_range(TS_F32, 1, 7, 1), TS_SHAPE(2, 3));
  ts_tensor *b = ts_reshape(ts_range(TS_F32, 7, 13, 1), TS_SHAPE(2, 3));
  ts_tensor *ab[] = { a, b }, *out[64];
  ts_tensor *y = ts_pack(ab, 2, 0);
  assert_info(y, TS_F32, TS_SHAPE(2, 2, 3));
  ASSERT_VALUES(y, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
  ASSERT_VALUES(ts_pack(ab, 2, -3), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
  y = ts_pack(ab, 2, 1);
  assert_info(y, TS_F32, TS_SHAPE(2, 2, 3));
  ASSERT_VALUES(y, 1, 2, 3, 7, 8, 9, 4, 5, 6, 10, 11, 12);
  y = ts_pack(ab, 2, -1);
  assert_info(y, TS_F32, TS_SHAPE(2, 3, 2));
  ASSERT_VALUES(y, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11, 6, 12);
  y = ts_pack(((ts_tensor *[]){ ts_scalar_i64(INT64_MAX), ts_scalar_i64(-3), ts_scalar_i64(INT64_MIN) }), 3, 0);
  assert_info(y, TS_I64, TS_SHAPE(3));
  g_assert_cmpint(ts_tensor_get_i64(y, 0), ==, INT64_MAX);
  g_assert_cmpint(ts_tensor_get_i64(y, 2), ==, INT64_MIN);
  bool bv[] = { true, false };
  y = ts_pack(((ts_tensor *[]){ ts_constant(TS_BOOL, TS_SHAPE(2), bv), ts_logical_not(ts_constant(TS_BOOL, TS_SHAPE(2), bv)) }), 2, 1);
  assert_info(y, TS_BOOL, TS_SHAPE(2, 2));
  ASSERT_VALUES(y, 1, 0, 0, 1);
  assert_info(ts_pack(((ts_tensor *[]){ ts_zeros(TS_F16, TS_SHAPE(0, 2)) }), 1, 1), TS_F16, TS_SHAPE(0, 1, 2));

  g_assert_cmpint(ts_unpack(a, -1, 0, out), ==, 2);
  assert_info(out[1], TS_F32, TS_SHAPE(3));
  ASSERT_VALUES(out[0], 1, 2, 3);
  ASSERT_VALUES(out[1], 4, 5, 6);
  g_assert_cmpint(ts_unpack(a, 3, -1, out), ==, 3);
  assert_info(out[2], TS_F32, TS_SHAPE(2));
  ASSERT_VALUES(out[0], 1, 4);
  ASSERT_VALUES(out[1], 2, 5);
  ASSERT_VALUES(out[2], 3, 6);
  g_assert_cmpint(ts_unpack(ts_reshape(ts_range(TS_U16, 0, 4, 1), TS_SHAPE(4)), -1, 0, out), ==, 4);
  assert_info(out[3], TS_U16, TS_SCALAR_SHAPE);
  ASSERT_VALUES(out[3], 3);
  g_assert_cmpint(ts_unpack(ts_zeros(TS_I8, TS_SHAPE(0, 2)), -1, 1, out), ==, 2);
  assert_info(out[1], TS_I8, TS_SHAPE(0));
  g_assert_false(ts_failed());

  assert_error(ts_pack(((ts_tensor *[]){ a, ts_transpose(b, TS_ALL_AXES) }), 2, 0), TS_ERR_SHAPE, "Pack",
               "values[1].shape = f32[3,2]", NULL);
  assert_error(ts_pack(ab, 2, 3), TS_ERR_INVALID_ARGUMENT, "Pack", "axis 3", "[-3, 2]", NULL);
  assert_error(ts_pack(ab, 2, -4), TS_ERR_INVALID_ARGUMENT, "Pack", "axis -4", NULL);
  assert_error(ts_pack(ab, 0, 0), TS_ERR_INVALID_ARGUMENT, "Pack", "got 0", NULL);
  assert_error(ts_pack(((ts_tensor *[]){ ts_zeros(TS_F32, TS_SHAPE(1, 1, 1, 1, 1, 1, 1, 1)) }), 1, 0),
               TS_ERR_SHAPE, "Pack", "rank 9", NULL);
  g_assert_cmpint(ts_unpack(a, 2, 1, out), ==, -1);
  g_assert_null(out[0]);
  assert_error(NULL, TS_ERR_INVALID_ARGUMENT, "Unpack", "num 2", "axis 1", "f32[2,3]", NULL);
  g_assert_cmpint(ts_unpack(a, 2, 2, out), ==, -1);
  assert_error(NULL, TS_ERR_INVALID_ARGUMENT, "Unpack", "axis 2", NULL);
  g_assert_cmpint(ts_unpack(ts_scalar_f32(1), 1, 0, out), ==, -1);
  assert_error(NULL, TS_ERR_SHAPE, "Unpack", "scalar", NULL);
  g_assert_cmpint(ts_unpack(ts_zeros(TS_F32, TS_SHAPE(0, 2)), -1, 0, out), ==, -1);
  assert_error(NULL, TS_ERR_INVALID_ARGUMENT, "Unpack", "0 slices", NULL);
  g_assert_cmpint(ts_unpack(ts_zeros(TS_F32, TS_SHAPE(65)), -1, 0, out), ==, -1);
  assert_error(NULL, TS_ERR_INVALID_ARGUMENT, "Unpack", "65 slices", NULL);
  ts_scope_end(scope);
}

/* tf.tile, its values worked out by hand; huge multiples are errors before
 * any allocation. */
static void test_tile(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_constant(TS_I32, TS_SHAPE(2, 2), ((int32_t[]){ 1, 2, 3, 4 }));
  ts_tensor *y = ts_tile(x, TS_INTS(2, 3));
  assert_info(y, TS_I32, TS_SHAPE(4, 6));
  ASSERT_VALUES(y, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4);
  ASSERT_VALUES(ts_tile(x, TS_INTS(1, 2)), 1, 2, 1, 2, 3, 4, 3, 4);
  ASSERT_VALUES(ts_tile(x, TS_INTS(2, 1)), 1, 2, 3, 4, 1, 2, 3, 4);
  assert_info(ts_tile(x, TS_INTS(1, 0)), TS_I32, TS_SHAPE(2, 0));
  y = ts_tile(ts_cast(ts_constant(TS_F32, TS_SHAPE(2), ((float[]){ 0.5f, -1 })), TS_F16), TS_INTS(3));
  assert_info(y, TS_F16, TS_SHAPE(6));
  ASSERT_VALUES(y, 0.5, -1, 0.5, -1, 0.5, -1);
  y = ts_tile(ts_constant(TS_BOOL, TS_SHAPE(1, 2, 1), ((bool[]){ true, false })), TS_INTS(2, 1, 2));
  assert_info(y, TS_BOOL, TS_SHAPE(2, 2, 2));
  ASSERT_VALUES(y, 1, 1, 0, 0, 1, 1, 0, 0);
  y = ts_tile(ts_scalar_i64(INT64_MIN), (ts_ints){ .n = 0 });
  assert_info(y, TS_I64, TS_SCALAR_SHAPE);
  g_assert_cmpint(ts_tensor_get_i64(y, 0), ==, INT64_MIN);
  assert_info(ts_tile(ts_zeros(TS_U64, TS_SHAPE(0, 3)), TS_INTS(5, 2)), TS_U64, TS_SHAPE(0, 6));
  g_assert_false(ts_failed());

  assert_error(ts_tile(x, TS_INTS(2)), TS_ERR_INVALID_ARGUMENT, "Tile", "length 2 but got length 1", "i32[2,2]",
               NULL);
  assert_error(ts_tile(x, TS_INTS(1, -1)), TS_ERR_INVALID_ARGUMENT, "Tile", "multiples[1] >= 0, but got -1",
               NULL);
  assert_error(ts_tile(x, TS_INTS(INT64_MAX, 1)), TS_ERR_SHAPE, "Tile", "multiples[0]", "overflow", NULL);
  assert_error(ts_tile(x, TS_INTS((int64_t)1 << 40, (int64_t)1 << 40)), TS_ERR_SHAPE, "Tile",
               "overflow int64", NULL);
  assert_error(ts_tile(x, TS_INTS(1000000, 1000000)), TS_ERR_NO_MEMORY, "Tile",
               "Tile: i32[2000000,2000000] is too large", NULL);
  ts_scope_end(scope);
}

/* tf.pad in its three modes, the values of TensorFlow's documented example
 * and others worked out by hand; TensorFlow's errors. */
static void test_pad(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_constant(TS_I32, TS_SHAPE(2, 3), ((int32_t[]){ 1, 2, 3, 4, 5, 6 }));
  ts_tensor *y = ts_pad(x, TS_INTS(1, 2), TS_INTS(1, 2), TS_PAD_CONSTANT, NULL);
  assert_info(y, TS_I32, TS_SHAPE(4, 7));
  ASSERT_VALUES(y, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 0, 4, 5, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  y = ts_pad(x, TS_INTS(1, 2), TS_INTS(1, 2), TS_PAD_REFLECT, NULL);
  assert_info(y, TS_I32, TS_SHAPE(4, 7));
  ASSERT_VALUES(y, 6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1);
  y = ts_pad(x, TS_INTS(1, 2), TS_INTS(1, 2), TS_PAD_SYMMETRIC, NULL);
  ASSERT_VALUES(y, 2, 1, 1, 2, 3, 3, 2, 2, 1, 1, 2, 3, 3, 2, 5, 4, 4, 5, 6, 6, 5, 5, 4, 4, 5, 6, 6, 5);
  y = ts_pad(x, TS_INTS(1, 0), TS_INTS(0, 2), TS_PAD_CONSTANT, ts_scalar_i32(9));
  assert_info(y, TS_I32, TS_SHAPE(3, 5));
  ASSERT_VALUES(y, 9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9);
  y = ts_pad(x, TS_INTS(0, 0), TS_INTS(1, 3), TS_PAD_SYMMETRIC, NULL); /* as far as the dim */
  ASSERT_VALUES(y, 1, 2, 3, 3, 2, 1, 4, 5, 6, 6, 5, 4, 4, 5, 6, 6, 5, 4);
  y = ts_pad(ts_cast(ts_constant(TS_F32, TS_SHAPE(3), ((float[]){ 0.5f, -1, 2 })), TS_F16), TS_INTS(2), TS_INTS(1),
             TS_PAD_REFLECT, NULL);
  assert_info(y, TS_F16, TS_SHAPE(6));
  ASSERT_VALUES(y, 2, -1, 0.5, -1, 2, -1);
  y = ts_pad(ts_constant(TS_BOOL, TS_SHAPE(1), ((bool[]){ false })), TS_INTS(1), TS_INTS(0), TS_PAD_CONSTANT,
             ts_constant(TS_BOOL, TS_SCALAR_SHAPE, ((bool[]){ true })));
  ASSERT_VALUES(y, 1, 0);
  y = ts_pad(ts_zeros(TS_I64, TS_SHAPE(0, 2)), TS_INTS(1, 0), TS_INTS(0, 1), TS_PAD_CONSTANT, ts_scalar_i64(INT64_MIN));
  assert_info(y, TS_I64, TS_SHAPE(1, 3));
  g_assert_cmpint(ts_tensor_get_i64(y, 2), ==, INT64_MIN);
  ASSERT_VALUES(ts_pad(ts_scalar_f32(3), (ts_ints){ .n = 0 }, (ts_ints){ .n = 0 }, TS_PAD_REFLECT, NULL), 3);
  g_assert_false(ts_failed());

  assert_error(ts_pad(x, TS_INTS(1, 3), TS_INTS(0, 0), TS_PAD_REFLECT, NULL), TS_ERR_INVALID_ARGUMENT, "Pad",
               "REFLECT paddings must be no greater than the dimension size: 3, 0 greater than 2", "i32[2,3]", NULL);
  assert_error(ts_pad(x, TS_INTS(0, 0), TS_INTS(0, 4), TS_PAD_SYMMETRIC, NULL), TS_ERR_INVALID_ARGUMENT, "Pad",
               "0, 4 greater than 3 (SYMMETRIC pads each side by at most the dim; dim 1 of i32[2,3])", NULL);
  /* np.pad(np.zeros(0), 0, mode='reflect') is a copy; TensorFlow refuses REFLECT on an empty dim */
  assert_error(ts_pad(ts_zeros(TS_F32, TS_SHAPE(0)), TS_INTS(0), TS_INTS(0), TS_PAD_REFLECT, NULL),
               TS_ERR_INVALID_ARGUMENT, "Pad", "0, 0 greater than -1 (REFLECT pads each side by at most the dim - 1, "
               "an empty dim not at all; dim 0 of f32[0])", NULL);
  assert_error(ts_pad(x, TS_INTS(0, -1), TS_INTS(0, 0), TS_PAD_CONSTANT, NULL), TS_ERR_INVALID_ARGUMENT, "Pad",
               "non-negative: -1 0", NULL);
  assert_error(ts_pad(x, TS_INTS(0), TS_INTS(0), TS_PAD_CONSTANT, NULL), TS_ERR_INVALID_ARGUMENT, "Pad",
               "rank of inputs", NULL);
  assert_error(ts_pad(x, TS_INTS(0, 0), TS_INTS(0, 0), TS_PAD_CONSTANT, ts_scalar_f32(1)), TS_ERR_INVALID_ARGUMENT,
               "Pad", "constant_values", "f32[]", NULL);
  assert_error(ts_pad(x, TS_INTS(0, 0), TS_INTS(0, 0), TS_PAD_REFLECT, ts_scalar_i32(1)), TS_ERR_INVALID_ARGUMENT,
               "Pad", "CONSTANT mode, not REFLECT", NULL);
  assert_error(ts_pad(x, TS_INTS(0, INT64_MAX), TS_INTS(0, 0), TS_PAD_CONSTANT, NULL), TS_ERR_SHAPE, "Pad",
               "overflow int64", NULL);
  assert_error(ts_pad(x, TS_INTS(0, 0), TS_INTS(0, 0), (ts_pad_mode)7, NULL), TS_ERR_INVALID_ARGUMENT, "Pad",
               "mode 7", NULL);
  ts_scope_end(scope);
}

/* tf.reverse against np.flip(x, axes) of x = np.arange(24).reshape(2, 3, 4)
 * (the values below are np.flip's, flattened); TensorFlow's errors. */
static void test_reverse(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_reshape(ts_range(TS_I32, 0, 24, 1), TS_SHAPE(2, 3, 4));
  ts_tensor *y = ts_reverse(x, TS_INTS(1)); /* np.flip(x, 1) */
  assert_info(y, TS_I32, TS_SHAPE(2, 3, 4));
  ASSERT_VALUES(y, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3, 20, 21, 22, 23, 16, 17, 18, 19, 12, 13, 14, 15);
  y = ts_reverse(x, TS_INTS(-1, 0)); /* np.flip(x, (2, 0)) */
  ASSERT_VALUES(y, 15, 14, 13, 12, 19, 18, 17, 16, 23, 22, 21, 20, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8);
  y = ts_reverse(ts_cast(x, TS_F16), TS_INTS(2, 0, 1)); /* np.flip(x) */
  assert_info(y, TS_F16, TS_SHAPE(2, 3, 4));
  ASSERT_VALUES(y, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  y = ts_reverse(x, (ts_ints){ .n = 0 });
  ASSERT_VALUES(ts_reshape(ts_sub(y, x), TS_SHAPE(-1)), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0);
  y = ts_reverse(ts_constant(TS_BOOL, TS_SHAPE(3), ((bool[]){ true, false, false })), TS_INTS(0));
  ASSERT_VALUES(y, 0, 0, 1);
  y = ts_reverse(ts_constant(TS_U64, TS_SHAPE(2), ((uint64_t[]){ UINT64_MAX, 1 })), TS_INTS(-1));
  g_assert_cmpuint(((const uint64_t *)ts_tensor_data(y))[0], ==, 1);
  g_assert_cmpuint(((const uint64_t *)ts_tensor_data(y))[1], ==, UINT64_MAX);
  ASSERT_VALUES(ts_reverse(ts_scalar_f64(2.5), (ts_ints){ .n = 0 }), 2.5); /* rank 0, axis [] */
  y = ts_reverse(ts_zeros(TS_F32, TS_SHAPE(0, 3)), TS_INTS(1, 0)); /* empty */
  assert_info(y, TS_F32, TS_SHAPE(0, 3));
  y = ts_reverse(ts_reshape(ts_range(TS_I64, 0, 8, 1), TS_SHAPE(1, 1, 1, 1, 2, 1, 2, 2)), TS_INTS(4, 7, 0));
  assert_info(y, TS_I64, TS_SHAPE(1, 1, 1, 1, 2, 1, 2, 2)); /* rank 8: np.flip(x, (4, 7, 0)) */
  ASSERT_VALUES(y, 5, 4, 7, 6, 1, 0, 3, 2);
  g_assert_false(ts_failed());

  assert_error(ts_reverse(x, TS_INTS(3)), TS_ERR_INVALID_ARGUMENT, "ReverseV2",
               "'axis'[0] = 3 is out of valid range [-3, 3)", "i32[2,3,4]", NULL);
  assert_error(ts_reverse(x, TS_INTS(0, -4)), TS_ERR_INVALID_ARGUMENT, "ReverseV2", "'axis'[1] = -4", NULL);
  assert_error(ts_reverse(x, TS_INTS(1, -2)), TS_ERR_INVALID_ARGUMENT, "ReverseV2",
               "axis 1 specified more than once", "[1,-2]", NULL);
  assert_error(ts_reverse(ts_scalar_f32(1), TS_INTS(0)), TS_ERR_INVALID_ARGUMENT, "ReverseV2",
               "'axis'[0] = 0 is out of valid range [0, 0)", NULL);
  assert_error(ts_reverse(x, TS_ALL_AXES), TS_ERR_INVALID_ARGUMENT, "ReverseV2", "axis must list", NULL);
  ts_scope_end(scope);
}

/* tf.one_hot against np.eye(depth)[indices] with the rows of indices
 * outside [0, depth) all off_value (moved with np.moveaxis for axis);
 * TensorFlow's errors. */
static void test_one_hot(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *idx = ts_constant(TS_I32, TS_SHAPE(5), ((int32_t[]){ 0, 2, -1, 5, 1 }));
  ts_tensor *y = ts_one_hot(idx, 3, NULL, NULL, -1, TS_F32);
  assert_info(y, TS_F32, TS_SHAPE(5, 3));
  ASSERT_VALUES(y, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0);
  y = ts_one_hot(idx, 3, NULL, NULL, 0, TS_F32); /* the same transposed */
  assert_info(y, TS_F32, TS_SHAPE(3, 5));
  ASSERT_VALUES(y, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0);
  y = ts_one_hot(idx, 3, ts_scalar_i64(5), ts_scalar_i64(-1), 1, TS_I64);
  assert_info(y, TS_I64, TS_SHAPE(5, 3));
  ASSERT_VALUES(y, 5, -1, -1, -1, -1, 5, -1, -1, -1, -1, -1, -1, -1, 5, -1);

  ts_tensor *idx2 = ts_constant(TS_I64, TS_SHAPE(2, 2), ((int64_t[]){ 0, 2, 1, -1 }));
  y = ts_one_hot(idx2, 3, NULL, NULL, 1, TS_F64); /* the new dim in the middle */
  assert_info(y, TS_F64, TS_SHAPE(2, 3, 2));
  ASSERT_VALUES(y, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0);
  y = ts_one_hot(idx2, 3, NULL, NULL, 0, TS_BF16);
  assert_info(y, TS_BF16, TS_SHAPE(3, 2, 2));
  ASSERT_VALUES(y, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0);
  y = ts_one_hot(ts_constant(TS_U8, TS_SHAPE(3), ((uint8_t[]){ 255, 1, 0 })), 2, NULL, NULL, -1, TS_BOOL);
  assert_info(y, TS_BOOL, TS_SHAPE(3, 2));
  ASSERT_VALUES(y, 0, 0, 0, 1, 1, 0);
  y = ts_one_hot(ts_constant(TS_I8, TS_SHAPE(2), ((int8_t[]){ -128, 2 })), 3,
                 ts_cast(ts_scalar_f32(0.5f), TS_F16), NULL, -1, TS_F16);
  ASSERT_VALUES(y, 0, 0, 0, 0, 0, 0.5);
  y = ts_one_hot(ts_scalar_i32(1), 4, NULL, NULL, -1, TS_U16); /* a scalar: a vector of depth */
  assert_info(y, TS_U16, TS_SHAPE(4));
  ASSERT_VALUES(y, 0, 1, 0, 0);
  assert_info(ts_one_hot(idx, 0, NULL, NULL, -1, TS_F32), TS_F32, TS_SHAPE(5, 0)); /* depth 0 */
  assert_info(ts_one_hot(ts_zeros(TS_I32, TS_SHAPE(0, 2)), 3, NULL, NULL, 1, TS_I8), TS_I8, TS_SHAPE(0, 3, 2));
  g_assert_false(ts_failed());

  assert_error(ts_one_hot(idx, -1, NULL, NULL, -1, TS_F32), TS_ERR_INVALID_ARGUMENT, "OneHot",
               "depth must be non-negative, got: -1", NULL);
  assert_error(ts_one_hot(idx, 3, NULL, NULL, 2, TS_F32), TS_ERR_INVALID_ARGUMENT, "OneHot",
               "Expected axis to be -1 or between [0, 2).  But received: 2", NULL);
  assert_error(ts_one_hot(idx, 3, NULL, NULL, -2, TS_F32), TS_ERR_INVALID_ARGUMENT, "OneHot", "received: -2", NULL);
  assert_error(ts_one_hot(ts_cast(idx, TS_F32), 3, NULL, NULL, -1, TS_F32), TS_ERR_INVALID_ARGUMENT, "OneHot",
               "indices must be uint8, int8, int32 or int64, got f32[5]", NULL);
  assert_error(ts_one_hot(ts_cast(idx, TS_I16), 3, NULL, NULL, -1, TS_F32), TS_ERR_INVALID_ARGUMENT, "OneHot",
               "got i16[5]", NULL);
  assert_error(ts_one_hot(idx, 3, ts_scalar_f64(1), NULL, -1, TS_F32), TS_ERR_INVALID_ARGUMENT, "OneHot",
               "dtype float64 of on_value does not match dtype parameter float32", NULL);
  assert_error(ts_one_hot(idx, 3, NULL, ts_scalar_i32(0), -1, TS_F32), TS_ERR_INVALID_ARGUMENT, "OneHot",
               "of off_value", NULL);
  assert_error(ts_one_hot(idx, 3, ts_ones(TS_F32, TS_SHAPE(1)), NULL, -1, TS_F32), TS_ERR_INVALID_ARGUMENT,
               "OneHot", "on_value must be a scalar, but got: f32[1]", NULL);
  assert_error(ts_one_hot(idx, 3, NULL, NULL, -1, TS_STRING), TS_ERR_INVALID_ARGUMENT, "OneHot", "numeric or bool",
               NULL);
  assert_error(ts_one_hot(idx, INT64_MAX, NULL, NULL, -1, TS_F32), TS_ERR_SHAPE, "OneHot", "exceeds 2**63 - 1",
               NULL);
  assert_error(ts_one_hot(ts_zeros(TS_I32, TS_SHAPE(1, 1, 1, 1, 1, 1, 1, 1)), 2, NULL, NULL, -1, TS_F32),
               TS_ERR_INVALID_ARGUMENT, "OneHot", "rank 9 (at most 8)", NULL);
  ts_scope_end(scope);
}

/* ---- slice and gather -------------------------------------------------------------- */

static void test_slice(void)
{
  ts_scope *scope = ts_scope_begin();
  /* [3,4] of 0..11 */
  ts_tensor *x = ts_reshape(ts_range(TS_I32, 0, 12, 1), TS_SHAPE(3, 4));
  ts_tensor *t = ts_slice(x, TS_INTS(1, 1), TS_INTS(2, -1));
  assert_info(t, TS_I32, TS_SHAPE(2, 3));
  ASSERT_VALUES(t, 5, 6, 7, 9, 10, 11);
  t = ts_slice(x, TS_INTS(0, 2), TS_INTS(-1, 1));
  assert_info(t, TS_I32, TS_SHAPE(3, 1));
  ASSERT_VALUES(t, 2, 6, 10);
  t = ts_slice(x, TS_INTS(1, 0), TS_INTS(1, 4));
  ASSERT_VALUES(t, 4, 5, 6, 7);
  assert_info(ts_slice(x, TS_INTS(3, 4), TS_INTS(-1, 0)), TS_I32, TS_SHAPE(0, 0));

  /* [2,3,4] f64 of 0..23: a middle block, then whole trailing rows. */
  ts_tensor *y = ts_reshape(ts_range(TS_F64, 0, 24, 1), TS_SHAPE(2, 3, 4));
  t = ts_slice(y, TS_INTS(1, 1, 1), TS_INTS(1, 2, 2));
  assert_info(t, TS_F64, TS_SHAPE(1, 2, 2));
  ASSERT_VALUES(t, 17, 18, 21, 22);
  t = ts_slice(y, TS_INTS(0, 1, 0), TS_INTS(2, 2, -1));
  assert_info(t, TS_F64, TS_SHAPE(2, 2, 4));
  ASSERT_VALUES(t, 4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23);
  bool b[] = { false, true, true };
  t = ts_slice(ts_constant(TS_BOOL, TS_SHAPE(3), b), TS_INTS(1), TS_INTS(2));
  ASSERT_VALUES(t, 1, 1);
  t = ts_slice(ts_scalar_f32(2), (ts_ints){ 0 }, (ts_ints){ 0 });
  assert_info(t, TS_F32, TS_SCALAR_SHAPE);
  ASSERT_VALUES(t, 2);

  assert_error(ts_slice(x, TS_INTS(4, 0), TS_INTS(-1, -1)), TS_ERR_OUT_OF_RANGE, "Slice",
               "begin[0]", "[0, 3]", "got 4", "i32[3,4]", NULL);
  assert_error(ts_slice(x, TS_INTS(-1, 0), TS_INTS(1, 1)), TS_ERR_OUT_OF_RANGE, "Slice",
               "begin[0]", NULL);
  assert_error(ts_slice(x, TS_INTS(1, 2), TS_INTS(1, 3)), TS_ERR_OUT_OF_RANGE, "Slice",
               "size[1]", "[0, 2]", "got 3", NULL);
  assert_error(ts_slice(x, TS_INTS(0, 0), TS_INTS(-2, 1)), TS_ERR_OUT_OF_RANGE, "Slice",
               "size[0]", NULL);
  assert_error(ts_slice(x, TS_INTS(0), TS_INTS(1)), TS_ERR_INVALID_ARGUMENT, "Slice",
               "i32[3,4]", NULL);
  assert_error(ts_slice(x, TS_INTS(INT64_MAX, 0), TS_INTS(1, 1)), TS_ERR_OUT_OF_RANGE, "Slice",
               NULL);
  ts_scope_end(scope);
}

static void test_gather(void)
{
  ts_scope *scope = ts_scope_begin();
  float pv[] = { 1, 2, 3, 4, 5, 6 }; /* [3,2] */
  ts_tensor *params = ts_constant(TS_F32, TS_SHAPE(3, 2), pv);
  int32_t i32[] = { 2, 0, 2 };
  ts_tensor *t = ts_gather(params, ts_constant(TS_I32, TS_SHAPE(3), i32), 0);
  assert_info(t, TS_F32, TS_SHAPE(3, 2));
  ASSERT_VALUES(t, 5, 6, 1, 2, 5, 6);

  int64_t i64[] = { 1, 0, 1, 1 };
  t = ts_gather(params, ts_constant(TS_I64, TS_SHAPE(2, 2), i64), 1);
  assert_info(t, TS_F32, TS_SHAPE(3, 2, 2));
  ASSERT_VALUES(t, 2, 1, 2, 2, 4, 3, 4, 4, 6, 5, 6, 6);
  t = ts_gather(params, ts_constant(TS_I64, TS_SHAPE(2, 2), i64), -1);
  assert_info(t, TS_F32, TS_SHAPE(3, 2, 2));

  t = ts_gather(params, ts_scalar_i64(1), 0);
  assert_info(t, TS_F32, TS_SHAPE(2));
  ASSERT_VALUES(t, 3, 4);

  /* An embedding lookup: i64 params [4,3] by i32 [2,2] -> [2,2,3]. */
  ts_tensor *table = ts_reshape(ts_range(TS_I64, 0, 12, 1), TS_SHAPE(4, 3));
  int32_t ids[] = { 3, 1, 0, 3 };
  t = ts_gather(table, ts_constant(TS_I32, TS_SHAPE(2, 2), ids), 0);
  assert_info(t, TS_I64, TS_SHAPE(2, 2, 3));
  ASSERT_VALUES(t, 9, 10, 11, 3, 4, 5, 0, 1, 2, 9, 10, 11);
  assert_info(ts_gather(table, ts_zeros(TS_I32, TS_SHAPE(0)), 1), TS_I64, TS_SHAPE(4, 0));

  int32_t bad[] = { 0, 7 };
  assert_error(ts_gather(params, ts_constant(TS_I32, TS_SHAPE(2), bad), 0), TS_ERR_OUT_OF_RANGE,
               "Gather", "indices[1] = 7 is not in [0, 3)", NULL);
  int64_t neg[] = { 1, 0, 0, -1 };
  assert_error(ts_gather(params, ts_constant(TS_I64, TS_SHAPE(2, 2), neg), 1),
               TS_ERR_OUT_OF_RANGE, "Gather", "indices[3] = -1 is not in [0, 2)", NULL);
  float fi[] = { 0 };
  assert_error(ts_gather(params, ts_constant(TS_F32, TS_SHAPE(1), fi), 0), TS_ERR_DTYPE,
               "Gather", "f32[1]", NULL);
  assert_error(ts_gather(params, ts_scalar_i32(0), 2), TS_ERR_INVALID_ARGUMENT, "Gather",
               "axis 2", "f32[3,2]", NULL);
  assert_error(ts_gather(ts_scalar_f32(1), ts_scalar_i32(0), 0), TS_ERR_SHAPE, "Gather",
               "f32[]", NULL);
  ts_tensor *deep = ts_zeros(TS_F32, TS_SHAPE(1, 1, 1, 1, 1, 1));
  assert_error(ts_gather(deep, ts_zeros(TS_I32, TS_SHAPE(1, 1, 1, 1)), 0), TS_ERR_SHAPE,
               "Gather", "rank 9", NULL);
  ts_scope_end(scope);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/create/fill", test_fill);
  g_test_add_func("/create/zeros-ones", test_zeros_ones);
  g_test_add_func("/create/eye", test_eye);
  g_test_add_func("/create/range", test_range);
  g_test_add_func("/create/random-uniform", test_random_uniform);
  g_test_add_func("/create/random-normal", test_random_normal);
  g_test_add_func("/create/stateless-uniform", test_stateless_uniform);
  g_test_add_func("/create/huge-shapes", test_huge_shapes);
  g_test_add_func("/shape/overflowing-empty", test_overflowing_empty_shapes);
  g_test_add_func("/shape/reshape", test_reshape);
  g_test_add_func("/shape/flatten", test_flatten);
  g_test_add_func("/shape/transpose-2d", test_transpose_2d);
  g_test_add_func("/shape/transpose-3d", test_transpose_3d);
  g_test_add_func("/shape/transpose-merged-dims", test_transpose_merged_dims);
  g_test_add_func("/shape/concat", test_concat);
  g_test_add_func("/shape/split", test_split);
  g_test_add_func("/shape/pack-unpack", test_pack_unpack);
  g_test_add_func("/shape/tile", test_tile);
  g_test_add_func("/shape/pad", test_pad);
  g_test_add_func("/shape/reverse", test_reverse);
  g_test_add_func("/shape/one-hot", test_one_hot);
  g_test_add_func("/shape/slice", test_slice);
  g_test_add_func("/shape/gather", test_gather);
  return g_test_run();
}
