/* Tests for MatMul, Conv2D and MaxPool (engine/ops/matmul.c, engine/ops/conv.c). */
#include <tracescope.h>

#include <glib.h>
#include <math.h>
#include <string.h>

/* ---- helpers ----------------------------------------------------------------- */

static void assert_values(ts_tensor *t, ts_dtype dtype, ts_shape shape, const double *want, double tol)
{
  g_assert_nonnull(t);
  g_assert_cmpint(ts_tensor_dtype(t), ==, dtype);
  g_assert_true(ts_shape_equal(ts_tensor_shape(t), shape));
  for (int64_t i = 0; i < ts_shape_size(shape); i++)
    g_assert_cmpfloat(fabs(ts_tensor_get_f64(t, i) - want[i]), <=, tol);
}

static void assert_ints(ts_tensor *t, ts_dtype dtype, ts_shape shape, const int64_t *want)
{
  g_assert_nonnull(t);
  g_assert_cmpint(ts_tensor_dtype(t), ==, dtype);
  g_assert_true(ts_shape_equal(ts_tensor_shape(t), shape));
  for (int64_t i = 0; i < ts_shape_size(shape); i++)
    g_assert_cmpint(ts_tensor_get_i64(t, i), ==, want[i]);
}

/* r must be NULL with an error of `code` from `op` whose message holds each needle. */
static void assert_error(ts_tensor *r, ts_error_code code, const char *op, const char *needle1,
                         const char *needle2)
{
  g_assert_null(r);
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_test_message("error: %s", e->message);
  g_assert_cmpint(e->code, ==, code);
  g_assert_cmpstr(e->op, ==, op);
  g_assert_nonnull(strstr(e->message, op));
  g_assert_nonnull(strstr(e->message, needle1));
  if (needle2)
    g_assert_nonnull(strstr(e->message, needle2));
  ts_error_free(e);
  g_assert_false(ts_failed());
}

static float *random_floats(int64_t n, uint32_t seed)
{
  float *v = g_new(float, n);
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)(seed >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
  }
  return v;
}

/* ---- MatMul ------------------------------------------------------------------------ */

static void test_matmul_2d(void)
{
  ts_scope *s = ts_scope_begin();
  const double want[] = { 58, 64, 139, 154 };
  ts_tensor *a = ts_constant(TS_F32, TS_SHAPE(2, 3), (float[]){ 1, 2, 3, 4, 5, 6 });
  ts_tensor *b = ts_constant(TS_F32, TS_SHAPE(3, 2), (float[]){ 7, 8, 9, 10, 11, 12 });
  assert_values(ts_matmul(a, b), TS_F32, TS_SHAPE(2, 2), want, 0);

  /* The same product from transposed storage: a^T stored [3,2], b^T stored [2,3]. */
  ts_tensor *at = ts_constant(TS_F32, TS_SHAPE(3, 2), (float[]){ 1, 4, 2, 5, 3, 6 });
  ts_tensor *bt = ts_constant(TS_F32, TS_SHAPE(2, 3), (float[]){ 7, 9, 11, 8, 10, 12 });
  assert_values(ts_matmul_t(at, b, true, false), TS_F32, TS_SHAPE(2, 2), want, 0);
  assert_values(ts_matmul_t(a, bt, false, true), TS_F32, TS_SHAPE(2, 2), want, 0);
  assert_values(ts_matmul_t(at, bt, true, true), TS_F32, TS_SHAPE(2, 2), want, 0);

  /* [1,3] x [3,1] and [3,1] x [1,3]: inner and outer products. */
  ts_tensor *row = ts_constant(TS_F32, TS_SHAPE(1, 3), (float[]){ 1, 2, 3 });
  ts_tensor *col = ts_constant(TS_F32, TS_SHAPE(3, 1), (float[]){ 4, 5, 6 });
  assert_values(ts_matmul(row, col), TS_F32, TS_SHAPE(1, 1), (double[]){ 32 }, 0);
  assert_values(ts_matmul(col, row), TS_F32, TS_SHAPE(3, 3),
                (double[]){ 4, 8, 12, 5, 10, 15, 6, 12, 18 }, 0);
  ts_scope_end(s);
}

static void test_matmul_f64_and_promotion(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *a = ts_constant(TS_F64, TS_SHAPE(2, 2), (double[]){ 1.5, 2, 3, 4 });
  ts_tensor *b = ts_constant(TS_F64, TS_SHAPE(2, 2), (double[]){ 5, 6, 7, 8.25 });
  assert_values(ts_matmul(a, b), TS_F64, TS_SHAPE(2, 2), (double[]){ 21.5, 25.5, 43, 51 }, 0);
  assert_values(ts_matmul_t(a, b, true, true), TS_F64, TS_SHAPE(2, 2),
                (double[]){ 25.5, 35.25, 34, 47 }, 0);

  /* i32 x f32 promotes to f32. */
  ts_tensor *ai = ts_constant(TS_I32, TS_SHAPE(1, 2), (int32_t[]){ 2, 3 });
  ts_tensor *bf = ts_constant(TS_F32, TS_SHAPE(2, 1), (float[]){ 0.5f, 0.25f });
  assert_values(ts_matmul(ai, bf), TS_F32, TS_SHAPE(1, 1), (double[]){ 1.75 }, 0);
  ts_scope_end(s);
}

static void test_matmul_batched(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *a = ts_constant(TS_F32, TS_SHAPE(2, 2, 2), (float[]){ 1, 2, 3, 4, 1, 0, 0, 1 });
  ts_tensor *b = ts_constant(TS_F32, TS_SHAPE(2, 2, 2), (float[]){ 5, 6, 7, 8, 2, 3, 4, 5 });
  assert_values(ts_matmul(a, b), TS_F32, TS_SHAPE(2, 2, 2), (double[]){ 19, 22, 43, 50, 2, 3, 4, 5 }, 0);
  /* transpose_a per batch: [[1,3],[2,4]] and the identity */
  assert_values(ts_matmul_t(a, b, true, false), TS_F32, TS_SHAPE(2, 2, 2),
                (double[]){ 26, 30, 38, 44, 2, 3, 4, 5 }, 0);

  /* A batch of rows against one matrix, and one row against a batch. */
  ts_tensor *rows = ts_constant(TS_F32, TS_SHAPE(2, 1, 2), (float[]){ 1, 2, 3, 4 });
  ts_tensor *m = ts_constant(TS_F32, TS_SHAPE(2, 1), (float[]){ 5, 6 });
  assert_values(ts_matmul(rows, m), TS_F32, TS_SHAPE(2, 1, 1), (double[]){ 17, 39 }, 0);
  ts_tensor *row = ts_constant(TS_F32, TS_SHAPE(1, 2), (float[]){ 1, 2 });
  ts_tensor *ms = ts_constant(TS_F32, TS_SHAPE(2, 2, 1), (float[]){ 5, 6, 7, 8 });
  assert_values(ts_matmul(row, ms), TS_F32, TS_SHAPE(2, 1, 1), (double[]){ 17, 23 }, 0);
  /* A size-1 batch dim broadcasts against a batch of 2. */
  ts_tensor *one = ts_constant(TS_F32, TS_SHAPE(1, 1, 2), (float[]){ 1, 2 });
  assert_values(ts_matmul(one, ms), TS_F32, TS_SHAPE(2, 1, 1), (double[]){ 17, 23 }, 0);
  ts_scope_end(s);
}

static void test_matmul_broadcast_batch(void)
{
  ts_scope *s = ts_scope_begin();
  /* [2,1,3,4] x [5,4,6] -> [2,5,3,6], checked entry by entry. */
  float av[2 * 3 * 4], bv[5 * 4 * 6];
  for (int i = 0; i < 24; i++)
    av[i] = (float)(i % 7 - 3);
  for (int i = 0; i < 120; i++)
    bv[i] = (float)(i % 5 - 2);
  ts_tensor *a = ts_constant(TS_F32, TS_SHAPE(2, 1, 3, 4), av);
  ts_tensor *b = ts_constant(TS_F32, TS_SHAPE(5, 4, 6), bv);
  ts_tensor *c = ts_matmul(a, b);
  g_assert_nonnull(c);
  g_assert_true(ts_shape_equal(ts_tensor_shape(c), TS_SHAPE(2, 5, 3, 6)));
  for (int p = 0; p < 2; p++)
    for (int q = 0; q < 5; q++)
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 6; j++) {
          double want = 0;
          for (int k = 0; k < 4; k++)
            want += av[(p * 3 + i) * 4 + k] * bv[(q * 4 + k) * 6 + j];
          g_assert_cmpfloat(ts_tensor_get_f64(c, ((p * 5 + q) * 3 + i) * 6 + j), ==, want);
        }
  /* The same with both operands stored transposed. */
  ts_tensor *at = ts_transpose(a, TS_INTS(0, 1, 3, 2));
  ts_tensor *bt = ts_transpose(b, TS_INTS(0, 2, 1));
  ts_tensor *ct = ts_matmul_t(at, bt, true, true);
  g_assert_nonnull(ct);
  g_assert_true(ts_shape_equal(ts_tensor_shape(ct), TS_SHAPE(2, 5, 3, 6)));
  for (int64_t i = 0; i < ts_tensor_size(c); i++)
    g_assert_cmpfloat(ts_tensor_get_f64(ct, i), ==, ts_tensor_get_f64(c, i));
  ts_scope_end(s);
}

static void test_matmul_integers(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *a = ts_constant(TS_I32, TS_SHAPE(2, 2), (int32_t[]){ 1, 2, 3, 4 });
  ts_tensor *b = ts_constant(TS_I32, TS_SHAPE(2, 3), (int32_t[]){ 1, -1, 2, 0, 5, -3 });
  assert_ints(ts_matmul(a, b), TS_I32, TS_SHAPE(2, 3), (int64_t[]){ 1, 9, -4, 3, 17, -6 });
  assert_ints(ts_matmul_t(a, a, true, false), TS_I32, TS_SHAPE(2, 2), (int64_t[]){ 10, 14, 14, 20 });
  assert_ints(ts_matmul_t(a, a, false, true), TS_I32, TS_SHAPE(2, 2), (int64_t[]){ 5, 11, 11, 25 });

  /* Integer overflow wraps. */
  ts_tensor *big = ts_constant(TS_I32, TS_SHAPE(1, 2), (int32_t[]){ INT32_MAX, 65536 });
  ts_tensor *v = ts_constant(TS_I32, TS_SHAPE(2, 2), (int32_t[]){ 1, 0, 0, 65536 });
  assert_ints(ts_matmul(big, v), TS_I32, TS_SHAPE(1, 2), (int64_t[]){ INT32_MAX, 0 });
  ts_tensor *w = ts_constant(TS_I32, TS_SHAPE(2, 1), (int32_t[]){ 1, 32768 });
  assert_ints(ts_matmul(big, w), TS_I32, TS_SHAPE(1, 1), (int64_t[]){ -1 });
  ts_tensor *l = ts_constant(TS_I64, TS_SHAPE(1, 2), (int64_t[]){ INT64_MAX, 1 });
  ts_tensor *ones = ts_constant(TS_I64, TS_SHAPE(2, 1), (int64_t[]){ 1, 1 });
  assert_ints(ts_matmul(l, ones), TS_I64, TS_SHAPE(1, 1), (int64_t[]){ INT64_MIN });
  ts_tensor *u = ts_constant(TS_U8, TS_SHAPE(1, 2), (uint8_t[]){ 16, 200 });
  ts_tensor *uw = ts_constant(TS_U8, TS_SHAPE(2, 1), (uint8_t[]){ 16, 2 });
  assert_ints(ts_matmul(u, uw), TS_U8, TS_SHAPE(1, 1), (int64_t[]){ (256 + 400) % 256 });

  /* Batched integers with a broadcast operand. */
  ts_tensor *ab = ts_constant(TS_I64, TS_SHAPE(2, 1, 2), (int64_t[]){ 1, 2, 3, 4 });
  ts_tensor *bb = ts_constant(TS_I64, TS_SHAPE(2, 2), (int64_t[]){ 1, 10, 100, 1000 });
  assert_ints(ts_matmul(ab, bb), TS_I64, TS_SHAPE(2, 1, 2), (int64_t[]){ 201, 2010, 403, 4030 });
  ts_scope_end(s);
}

static void test_matmul_empty(void)
{
  ts_scope *s = ts_scope_begin();
  /* K = 0 gives zeros; M = 0 gives an empty result. */
  ts_tensor *a = ts_zeros(TS_F32, TS_SHAPE(2, 0));
  ts_tensor *b = ts_zeros(TS_F32, TS_SHAPE(0, 3));
  assert_values(ts_matmul(a, b), TS_F32, TS_SHAPE(2, 3), (double[]){ 0, 0, 0, 0, 0, 0 }, 0);
  ts_tensor *ai = ts_zeros(TS_I32, TS_SHAPE(2, 0));
  ts_tensor *bi = ts_zeros(TS_I32, TS_SHAPE(0, 2));
  assert_ints(ts_matmul(ai, bi), TS_I32, TS_SHAPE(2, 2), (int64_t[]){ 0, 0, 0, 0 });
  ts_tensor *e = ts_matmul(ts_zeros(TS_F64, TS_SHAPE(0, 3)), ts_zeros(TS_F64, TS_SHAPE(3, 2)));
  g_assert_nonnull(e);
  g_assert_true(ts_shape_equal(ts_tensor_shape(e), TS_SHAPE(0, 2)));
  ts_scope_end(s);
}

static void test_matmul_errors(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *v = ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 1, 2, 3 });
  ts_tensor *m23 = ts_zeros(TS_F32, TS_SHAPE(2, 3));
  ts_tensor *m33 = ts_zeros(TS_F32, TS_SHAPE(3, 3));
  assert_error(ts_matmul(v, m33), TS_ERR_SHAPE, "MatMul", "rank >= 2", "f32[3] x f32[3,3]");
  assert_error(ts_matmul(m33, v), TS_ERR_SHAPE, "MatMul", "rank >= 2", "f32[3,3] x f32[3]");
  assert_error(ts_matmul(m23, m23), TS_ERR_SHAPE, "MatMul",
               "inner dimensions differ: f32[2,3] x f32[2,3] (3 vs 2)", NULL);
  assert_error(ts_matmul_t(m23, m33, true, false), TS_ERR_SHAPE, "MatMul",
               "f32[2,3] x f32[3,3] (2 vs 3, transpose_a)", NULL);
  ts_tensor *b234 = ts_zeros(TS_F32, TS_SHAPE(2, 3, 4));
  ts_tensor *b546 = ts_zeros(TS_F32, TS_SHAPE(5, 4, 6));
  assert_error(ts_matmul(b234, b546), TS_ERR_SHAPE, "MatMul", "batch dimensions do not broadcast",
               "f32[2,3,4] x f32[5,4,6]");
  ts_tensor *bl = ts_constant(TS_BOOL, TS_SHAPE(1, 1), (bool[]){ true });
  assert_error(ts_matmul(bl, bl), TS_ERR_DTYPE, "MatMul", "bool", NULL);
  ts_scope_end(s);
}

/* ---- Conv2D ----------------------------------------------------------------------- */

/* Straight from the definition: TensorFlow's output sizes and padding. */
static float *conv_ref(const float *x, const float *f, int n, int h, int w, int c, int kh, int kw, int o,
                       int sh, int sw, bool same, int *oh_out, int *ow_out)
{
  int oh, ow, top = 0, left = 0;
  if (same) {
    oh = (h + sh - 1) / sh;
    ow = (w + sw - 1) / sw;
    top = MAX((oh - 1) * sh + kh - h, 0) / 2;
    left = MAX((ow - 1) * sw + kw - w, 0) / 2;
  } else {
    oh = (h - kh) / sh + 1;
    ow = (w - kw) / sw + 1;
  }
  float *y = g_new0(float, (gsize)n * oh * ow * o);
  for (int b = 0; b < n; b++)
    for (int oy = 0; oy < oh; oy++)
      for (int ox = 0; ox < ow; ox++)
        for (int oc = 0; oc < o; oc++) {
          double acc = 0;
          for (int ky = 0; ky < kh; ky++)
            for (int kx = 0; kx < kw; kx++)
              for (int ic = 0; ic < c; ic++) {
                int iy = oy * sh - top + ky, ix = ox * sw - left + kx;
                if (iy >= 0 && iy < h && ix >= 0 && ix < w)
                  acc += (double)x[((b * h + iy) * w + ix) * c + ic] * f[((ky * kw + kx) * c + ic) * o + oc];
              }
          y[((b * oh + oy) * ow + ox) * o + oc] = (float)acc;
        }
  *oh_out = oh;
  *ow_out = ow;
  return y;
}

static void check_conv(int n, int h, int w, int c, int kh, int kw, int o, int sh, int sw, bool same)
{
  ts_scope *s = ts_scope_begin();
  float *xv = random_floats((int64_t)n * h * w * c, (uint32_t)(h * 31 + c));
  float *fv = random_floats((int64_t)kh * kw * c * o, (uint32_t)(kh * 7 + o));
  int oh, ow;
  float *want = conv_ref(xv, fv, n, h, w, c, kh, kw, o, sh, sw, same, &oh, &ow);
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(n, h, w, c), xv);
  ts_tensor *f = ts_constant(TS_F32, TS_SHAPE(kh, kw, c, o), fv);
  ts_tensor *y = ts_conv2d(x, f, sh, sw, same ? TS_PADDING_SAME : TS_PADDING_VALID);
  g_assert_nonnull(y);
  g_assert_cmpint(ts_tensor_dtype(y), ==, TS_F32);
  g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(n, oh, ow, o)));
  for (int64_t i = 0; i < ts_tensor_size(y); i++)
    g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y, i), want[i], 1e-4);

  /* f64 gives the same result. */
  ts_tensor *y64 = ts_conv2d(ts_cast(x, TS_F64), ts_cast(f, TS_F64), sh, sw,
                             same ? TS_PADDING_SAME : TS_PADDING_VALID);
  g_assert_nonnull(y64);
  g_assert_cmpint(ts_tensor_dtype(y64), ==, TS_F64);
  for (int64_t i = 0; i < ts_tensor_size(y64); i++)
    g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y64, i), want[i], 1e-4);
  g_free(xv);
  g_free(fv);
  g_free(want);
  ts_scope_end(s);
}

static void test_conv2d_reference(void)
{
  for (int same = 0; same < 2; same++) {
    check_conv(1, 5, 5, 2, 3, 3, 3, 1, 1, same);
    check_conv(2, 7, 6, 3, 3, 3, 4, 2, 2, same);
    check_conv(1, 8, 8, 2, 3, 3, 2, 2, 2, same);  /* SAME pads 0 before, 1 after */
    check_conv(2, 6, 9, 3, 2, 3, 2, 1, 2, same);  /* uneven kernel and strides */
    check_conv(3, 4, 5, 6, 1, 1, 7, 1, 1, same);  /* 1x1 stride 1: a plain product */
    check_conv(2, 5, 5, 3, 1, 1, 2, 2, 2, same);  /* 1x1 strided */
  }
  check_conv(1, 4, 4, 2, 5, 5, 3, 1, 1, true); /* a window larger than the input */
  /* Enough output pixels that the im2col scratch runs in several chunks. */
  check_conv(1, 128, 128, 64, 3, 3, 2, 1, 1, true);
}

static void test_conv2d_hand(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(1, 3, 3, 1), (float[]){ 1, 2, 3, 4, 5, 6, 7, 8, 9 });
  ts_tensor *diag = ts_constant(TS_F32, TS_SHAPE(2, 2, 1, 1), (float[]){ 1, 0, 0, 1 });
  assert_values(ts_conv2d(x, diag, 1, 1, TS_PADDING_VALID), TS_F32, TS_SHAPE(1, 2, 2, 1),
                (double[]){ 6, 8, 12, 14 }, 0);
  ts_tensor *box = ts_ones(TS_F32, TS_SHAPE(3, 3, 1, 1));
  assert_values(ts_conv2d(x, box, 1, 1, TS_PADDING_SAME), TS_F32, TS_SHAPE(1, 3, 3, 1),
                (double[]){ 12, 21, 16, 27, 45, 33, 24, 39, 28 }, 0);
  assert_values(ts_conv2d(x, box, 1, 1, TS_PADDING_VALID), TS_F32, TS_SHAPE(1, 1, 1, 1),
                (double[]){ 45 }, 0);

  /* 4x4, 3x3 window, stride 2, SAME: one padding row/column, all after. */
  float v16[16];
  for (int i = 0; i < 16; i++)
    v16[i] = (float)(i + 1);
  ts_tensor *x4 = ts_constant(TS_F32, TS_SHAPE(1, 4, 4, 1), v16);
  assert_values(ts_conv2d(x4, box, 2, 2, TS_PADDING_SAME), TS_F32, TS_SHAPE(1, 2, 2, 1),
                (double[]){ 54, 45, 72, 54 }, 0);

  /* Two channels in, two out: out0 = ch0 + ch1, out1 = ch0 - ch1 (1x1). */
  ts_tensor *x2 = ts_constant(TS_F64, TS_SHAPE(1, 1, 2, 2), (double[]){ 3, 1, 5, 2 });
  ts_tensor *f2 = ts_constant(TS_F64, TS_SHAPE(1, 1, 2, 2), (double[]){ 1, 1, 1, -1 });
  assert_values(ts_conv2d(x2, f2, 1, 1, TS_PADDING_VALID), TS_F64, TS_SHAPE(1, 1, 2, 2),
                (double[]){ 4, 2, 7, 3 }, 0);

  /* Zero input channels give zeros; an empty batch gives an empty result. */
  ts_tensor *y0 = ts_conv2d(ts_zeros(TS_F32, TS_SHAPE(1, 2, 2, 0)), ts_zeros(TS_F32, TS_SHAPE(2, 2, 0, 3)), 1,
                            1, TS_PADDING_SAME);
  assert_values(y0, TS_F32, TS_SHAPE(1, 2, 2, 3), (double[12]){ 0 }, 0);
  ts_tensor *ye = ts_conv2d(ts_zeros(TS_F32, TS_SHAPE(0, 3, 3, 1)), box, 1, 1, TS_PADDING_SAME);
  g_assert_nonnull(ye);
  g_assert_true(ts_shape_equal(ts_tensor_shape(ye), TS_SHAPE(0, 3, 3, 1)));
  ts_scope_end(s);
}

static void test_conv2d_errors(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = ts_zeros(TS_F32, TS_SHAPE(1, 4, 4, 2));
  ts_tensor *f = ts_zeros(TS_F32, TS_SHAPE(3, 3, 2, 1));
  assert_error(ts_conv2d(ts_zeros(TS_F32, TS_SHAPE(4, 4, 2)), f, 1, 1, TS_PADDING_VALID), TS_ERR_SHAPE,
               "Conv2D", "rank 4", "f32[4,4,2]");
  assert_error(ts_conv2d(x, ts_zeros(TS_F32, TS_SHAPE(3, 3, 2)), 1, 1, TS_PADDING_VALID), TS_ERR_SHAPE,
               "Conv2D", "rank 4", "f32[3,3,2]");
  assert_error(ts_conv2d(x, ts_zeros(TS_F32, TS_SHAPE(3, 3, 3, 1)), 1, 1, TS_PADDING_VALID),
               TS_ERR_SHAPE, "Conv2D", "channels", "input f32[1,4,4,2], filter f32[3,3,3,1] (2 vs 3)");
  assert_error(ts_conv2d(x, f, 0, 1, TS_PADDING_VALID), TS_ERR_INVALID_ARGUMENT, "Conv2D", "strides",
               "{0, 1}");
  assert_error(ts_conv2d(x, f, 1, -2, TS_PADDING_SAME), TS_ERR_INVALID_ARGUMENT, "Conv2D", "strides",
               "{1, -2}");
  assert_error(ts_conv2d(x, f, 1, 1, (ts_padding)7), TS_ERR_INVALID_ARGUMENT, "Conv2D", "padding", "7");
  assert_error(ts_conv2d(ts_zeros(TS_F32, TS_SHAPE(1, 2, 5, 2)), f, 1, 1, TS_PADDING_VALID), TS_ERR_SHAPE,
               "Conv2D", "larger than the input", "f32[1,2,5,2]");
  assert_error(ts_conv2d(x, ts_zeros(TS_F32, TS_SHAPE(0, 3, 2, 1)), 1, 1, TS_PADDING_SAME), TS_ERR_SHAPE,
               "Conv2D", "positive", "filter f32[0,3,2,1]");
  assert_error(ts_conv2d(ts_zeros(TS_I32, TS_SHAPE(1, 4, 4, 2)), ts_zeros(TS_I32, TS_SHAPE(3, 3, 2, 1)), 1, 1,
                         TS_PADDING_VALID),
               TS_ERR_DTYPE, "Conv2D", "f32", "i32[1,4,4,2]");
  assert_error(ts_conv2d(x, ts_zeros(TS_F64, TS_SHAPE(3, 3, 2, 1)), 1, 1, TS_PADDING_VALID), TS_ERR_DTYPE,
               "Conv2D", "input f32[1,4,4,2], filter f64[3,3,2,1]", NULL);
  ts_scope_end(s);
}

/* float16 and bfloat16, as TensorFlow's Conv2D takes them: each output is
 * NumPy's float64 convolution of the rounded inputs, rounded to the dtype. */
static void test_conv2d_half(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = ts_constant(TS_F64, TS_SHAPE(1, 3, 3, 1),
                             (double[]){ 0.1, -0.2, 0.3, 1.5, 2.25, -3.0, 100.0, 0.01, -7.5 });
  ts_tensor *f = ts_constant(TS_F64, TS_SHAPE(2, 2, 1, 2), (double[]){ 1.0, 0.5, -0.25, 2.0, 0.125, -1.0, 3.0, 0.75 });
  assert_values(ts_conv2d(ts_cast(x, TS_F16), ts_cast(f, TS_F16), 1, 1, TS_PADDING_VALID), TS_F16,
                TS_SHAPE(1, 2, 2, 2),
                (double[]){ 7.0859375, -0.162353515625, -8.9921875, -4.0, 13.46875, -94.75, -19.5, -10.5078125 }, 0);
  assert_values(ts_conv2d(ts_cast(x, TS_BF16), ts_cast(f, TS_BF16), 1, 1, TS_PADDING_VALID), TS_BF16,
                TS_SHAPE(1, 2, 2, 2), (double[]){ 7.09375, -0.1630859375, -9.0, -4.0, 13.4375, -94.5, -19.5, -10.5 },
                0);
  /* past float16's range: inf, as NumPy's float16 (9 x 300 x 30 = 81000) */
  ts_tensor *big = ts_conv2d(ts_cast(ts_mul(ts_ones(TS_F64, TS_SHAPE(1, 3, 3, 1)), ts_scalar_f64(300)), TS_F16),
                             ts_cast(ts_mul(ts_ones(TS_F64, TS_SHAPE(3, 3, 1, 1)), ts_scalar_f64(30)), TS_F16), 1,
                             1, TS_PADDING_VALID);
  g_assert_nonnull(big);
  g_assert_cmpfloat(ts_tensor_get_f64(big, 0), ==, INFINITY);
  /* the dtypes must still agree */
  assert_error(ts_conv2d(ts_cast(x, TS_F16), ts_cast(f, TS_BF16), 1, 1, TS_PADDING_VALID), TS_ERR_DTYPE,
               "Conv2D", "input f16[1,3,3,1], filter bf16[2,2,1,2]", NULL);
  ts_scope_end(s);
}

/* ConvTranspose in float16 and bfloat16 (PyTorch's conv_transpose2d and
 * ONNX take them): NumPy's float64 result from the rounded input, filter
 * and bias, rounded to the dtype. */
static void test_conv_transpose_half(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = ts_constant(TS_F64, TS_SHAPE(1, 1, 2, 2), (double[]){ 1.5, -2, 0.25, 3 });
  ts_tensor *w = ts_constant(TS_F64, TS_SHAPE(1, 2, 2, 2), (double[]){ 0.5, -1, 2, 0.125, 1.1, 0.3, -0.7, 4 });
  ts_tensor *b = ts_constant(TS_F64, TS_SHAPE(2), (double[]){ 0.1, -0.2 });
  static const double want_f16[] = { 0.85009765625, -2.400390625, 2.099609375, 3.224609375, -2.462890625,
                                     -3.150390625, 0.60009765625, 6.1328125, 0.47509765625, 1.44921875,
                                     -1.94921875, -0.7998046875, -0.9755859375, 10.578125, -7.30078125,
                                     -0.375, -1.30078125, 11.796875 };
  static const double want_bf16[] = { 0.8515625, -2.40625, 2.09375, 3.21875, -2.46875, -3.15625,
                                      0.6015625, 6.125, 0.474609375, 1.453125, -1.953125, -0.80078125,
                                      -0.97265625, 10.5625, -7.3125, -0.375, -1.296875, 11.8125 };
  static const ts_dtype dts[] = { TS_F16, TS_BF16 };
  for (int i = 0; i < 2; i++)
    assert_values(ts_conv_transpose(ts_cast(x, dts[i]), ts_cast(w, dts[i]), ts_cast(b, dts[i]), TS_INTS(1, 1),
                                    TS_INTS(1, 1), TS_INTS(0, 0), TS_INTS(3, 3), 1),
                  dts[i], TS_SHAPE(1, 2, 3, 3), i == 0 ? want_f16 : want_bf16, 0);
  ts_scope_end(s);
}

/* ---- MaxPool --------------------------------------------------------------------------- */

static void test_max_pool2d(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(1, 4, 4, 1),
                             (float[]){ 1, 5, 2, 0, 3, 4, 8, 7, 9, -1, 6, 6, 0, 2, 3, 10 });
  assert_values(ts_max_pool2d(x, 2, 2, 2, 2, TS_PADDING_VALID), TS_F32, TS_SHAPE(1, 2, 2, 1),
                (double[]){ 5, 8, 9, 10 }, 0);
  assert_values(ts_max_pool2d(x, 3, 3, 1, 1, TS_PADDING_VALID), TS_F32, TS_SHAPE(1, 2, 2, 1),
                (double[]){ 9, 8, 9, 10 }, 0);
  assert_values(ts_max_pool2d(x, 3, 2, 1, 2, TS_PADDING_VALID), TS_F32, TS_SHAPE(1, 2, 2, 1),
                (double[]){ 9, 8, 9, 10 }, 0);

  /* SAME ignores the padded cells: all-negative input stays negative. */
  ts_tensor *neg = ts_constant(TS_F64, TS_SHAPE(1, 3, 3, 1), (double[]){ -1, -2, -3, -4, -5, -6, -7, -8, -9 });
  assert_values(ts_max_pool2d(neg, 2, 2, 2, 2, TS_PADDING_SAME), TS_F64, TS_SHAPE(1, 2, 2, 1),
                (double[]){ -1, -3, -7, -9 }, 0);
  assert_values(ts_max_pool2d(neg, 3, 3, 1, 1, TS_PADDING_SAME), TS_F64, TS_SHAPE(1, 3, 3, 1),
                (double[]){ -1, -1, -2, -1, -1, -2, -4, -4, -5 }, 0);

  /* Channels pool independently; integers and a batch of two. */
  ts_tensor *xi = ts_constant(TS_I32, TS_SHAPE(2, 2, 2, 2),
                              (int32_t[]){ 1, -8, 4, -5, 2, -6, 3, -7, 0, 0, -1, 9, INT32_MIN, 1, 5, 2 });
  assert_ints(ts_max_pool2d(xi, 2, 2, 1, 1, TS_PADDING_VALID), TS_I32, TS_SHAPE(2, 1, 1, 2),
              (int64_t[]){ 4, -5, 5, 9 });
  assert_ints(ts_max_pool2d(xi, 1, 2, 1, 1, TS_PADDING_SAME), TS_I32, TS_SHAPE(2, 2, 2, 2),
              (int64_t[]){ 4, -5, 4, -5, 3, -6, 3, -7, 0, 9, -1, 9, 5, 2, 5, 2 });
  ts_tensor *xu = ts_constant(TS_U8, TS_SHAPE(1, 1, 3, 1), (uint8_t[]){ 200, 7, 255 });
  assert_ints(ts_max_pool2d(xu, 1, 2, 1, 2, TS_PADDING_SAME), TS_U8, TS_SHAPE(1, 1, 2, 1),
              (int64_t[]){ 200, 255 });
  ts_tensor *xl = ts_constant(TS_I64, TS_SHAPE(1, 1, 2, 1), (int64_t[]){ INT64_MIN, INT64_MIN + 1 });
  assert_ints(ts_max_pool2d(xl, 1, 2, 1, 1, TS_PADDING_VALID), TS_I64, TS_SHAPE(1, 1, 1, 1),
              (int64_t[]){ INT64_MIN + 1 });

  /* NaN propagates. */
  ts_tensor *xn = ts_constant(TS_F32, TS_SHAPE(1, 1, 3, 1), (float[]){ 1, NAN, 2 });
  ts_tensor *yn = ts_max_pool2d(xn, 1, 2, 1, 1, TS_PADDING_VALID);
  g_assert_nonnull(yn);
  g_assert_true(isnan(ts_tensor_get_f64(yn, 0)));
  g_assert_true(isnan(ts_tensor_get_f64(yn, 1)));

  /* Window larger than the input is fine with SAME. */
  assert_values(ts_max_pool2d(x, 5, 5, 3, 3, TS_PADDING_SAME), TS_F32, TS_SHAPE(1, 2, 2, 1),
                (double[]){ 9, 8, 9, 10 }, 0);
  ts_scope_end(s);
}

/* Each window's max by its definition: the in-bounds cells of an NHWC
 * input (SAME pads as TensorFlow splits them), NaN winning. */
static double pool_ref(const float *x, ts_shape xs, int kh, int kw, int sh, int sw, int64_t top,
                       int64_t left, int64_t n, int64_t oy, int64_t ox, int64_t ch)
{
  double m = -INFINITY;
  bool nan = false;
  for (int64_t iy = oy * sh - top; iy < oy * sh - top + kh; iy++)
    for (int64_t ix = ox * sw - left; ix < ox * sw - left + kw; ix++)
      if (iy >= 0 && iy < xs.dim[1] && ix >= 0 && ix < xs.dim[2]) {
        double v = x[((n * xs.dim[1] + iy) * xs.dim[2] + ix) * xs.dim[3] + ch];
        nan |= isnan(v);
        m = fmax(m, v);
      }
  return nan ? NAN : m;
}

/* The kernel's paths (2x2 and 3x3 windows unrolled, any other, windows
 * clipped by SAME's padding) on odd sizes and channel counts, against the
 * definition, and split between 2 threads the same bits as on 1. */
/* The rest of TensorFlow's MaxPool dtypes: 8- and 16-bit integers at their
 * extremes, and float16 and bfloat16 (compared as floats, NaN winning as
 * in NumPy's max; SAME padding never adds a value). */
static void test_max_pool2d_dtypes(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x8 = ts_constant(TS_I8, TS_SHAPE(1, 2, 3, 1), (int8_t[]){ -128, -100, 127, -128, -1, 0 });
  assert_ints(ts_max_pool2d(x8, 2, 2, 2, 2, TS_PADDING_SAME), TS_I8, TS_SHAPE(1, 1, 2, 1),
              (int64_t[]){ -1, 127 });
  ts_tensor *x16 = ts_constant(TS_I16, TS_SHAPE(1, 1, 3, 1), (int16_t[]){ INT16_MIN, -32767, -5 });
  assert_ints(ts_max_pool2d(x16, 1, 2, 1, 2, TS_PADDING_SAME), TS_I16, TS_SHAPE(1, 1, 2, 1),
              (int64_t[]){ -32767, -5 });
  ts_tensor *xu16 = ts_constant(TS_U16, TS_SHAPE(1, 1, 3, 1), (uint16_t[]){ 65535, 0, 40000 });
  assert_ints(ts_max_pool2d(xu16, 1, 2, 1, 1, TS_PADDING_VALID), TS_U16, TS_SHAPE(1, 1, 2, 1),
              (int64_t[]){ 65535, 40000 });

  /* [[1, nan, 3, 4], [-inf, -inf, 2, 5], [-1, -2, -3, -0.5]] */
  static const double h[] = { 1, NAN, 3, 4, -INFINITY, -INFINITY, 2, 5, -1, -2, -3, -0.5 };
  static const ts_dtype halves[] = { TS_F16, TS_BF16 };
  for (size_t i = 0; i < G_N_ELEMENTS(halves); i++) {
    ts_tensor *x = ts_cast(ts_constant(TS_F64, TS_SHAPE(1, 3, 4, 1), h), halves[i]);
    ts_tensor *y = ts_max_pool2d(x, 2, 2, 2, 2, TS_PADDING_SAME);
    g_assert_nonnull(y);
    g_assert_cmpint(ts_tensor_dtype(y), ==, halves[i]);
    g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(1, 2, 2, 1)));
    g_assert_true(isnan(ts_tensor_get_f64(y, 0)));
    g_assert_cmpfloat(ts_tensor_get_f64(y, 1), ==, 5);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 2), ==, -1);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 3), ==, -0.5);
    /* a window of -inf alone is -inf */
    ts_tensor *yi = ts_max_pool2d(ts_slice(x, TS_INTS(0, 1, 0, 0), TS_INTS(1, 1, 2, 1)), 1, 2, 1, 1,
                                  TS_PADDING_VALID);
    g_assert_nonnull(yi);
    g_assert_cmpfloat(ts_tensor_get_f64(yi, 0), ==, -INFINITY);
  }
  ts_scope_end(s);
}

static void test_max_pool2d_shapes(void)
{
  static const struct {
    int64_t n, h, w, c;
    int kh, kw, sh, sw, padding;
  } cases[] = {
    { 4, 64, 61, 17, 2, 2, 2, 2, TS_PADDING_VALID }, { 4, 63, 61, 16, 2, 2, 2, 2, TS_PADDING_SAME },
    { 3, 33, 35, 5, 3, 3, 2, 2, TS_PADDING_SAME },   { 2, 31, 30, 33, 3, 3, 1, 1, TS_PADDING_VALID },
    { 2, 29, 40, 3, 2, 3, 1, 2, TS_PADDING_SAME },   { 1, 7, 9, 1, 5, 4, 3, 2, TS_PADDING_SAME },
    { 3, 40, 41, 32, 1, 1, 2, 2, TS_PADDING_VALID },
  };
  int threads = ts_get_threads();
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    ts_scope *s = ts_scope_begin();
    ts_shape xs = TS_SHAPE(cases[i].n, cases[i].h, cases[i].w, cases[i].c);
    int64_t size = ts_shape_size(xs);
    float *v = g_new(float, size);
    guint32 r = 12345 + (guint32)i;
    for (int64_t j = 0; j < size; j++) {
      r = r * 1664525u + 1013904223u;
      v[j] = j % 997 == 3 ? NAN : (float)(r >> 8) / (float)(1 << 24) * 4 - 2;
    }
    ts_tensor *x = ts_constant(TS_F32, xs, v);
    ts_tensor *y[2];
    for (int t = 0; t < 2; t++) {
      g_assert_true(ts_set_threads(t + 1));
      y[t] = ts_max_pool2d(x, cases[i].kh, cases[i].kw, cases[i].sh, cases[i].sw, cases[i].padding);
      g_assert_nonnull(y[t]);
    }
    ts_shape ys = ts_tensor_shape(y[0]);
    bool same = cases[i].padding == TS_PADDING_SAME;
    int64_t top = same ? MAX((ys.dim[1] - 1) * cases[i].sh + cases[i].kh - xs.dim[1], 0) / 2 : 0;
    int64_t left = same ? MAX((ys.dim[2] - 1) * cases[i].sw + cases[i].kw - xs.dim[2], 0) / 2 : 0;
    const float *got = ts_tensor_data(y[0]);
    for (int64_t n = 0, j = 0; n < ys.dim[0]; n++)
      for (int64_t oy = 0; oy < ys.dim[1]; oy++)
        for (int64_t ox = 0; ox < ys.dim[2]; ox++)
          for (int64_t ch = 0; ch < ys.dim[3]; ch++, j++) {
            double want = pool_ref(v, xs, cases[i].kh, cases[i].kw, cases[i].sh, cases[i].sw, top, left, n, oy,
                                   ox, ch);
            if (!(isnan(want) ? isnan(got[j]) : got[j] == want))
              g_error("case %zu, output %" G_GINT64_FORMAT ": %g, want %g", i, j, got[j], want);
          }
    g_assert_cmpmem(ts_tensor_data(y[1]), ts_tensor_size(y[1]) * 4, got, ts_tensor_size(y[0]) * 4);
    g_free(v);
    ts_scope_end(s);
  }
  g_assert_true(ts_set_threads(threads));

  /* SAME windows of INT_MAX a side (as TensorFlow takes them) cover the
   * whole input from every output: each the max of its channel, and the
   * work of a row counted without overflow (UBSan). */
  ts_scope *s = ts_scope_begin();
  float v[] = { 1, -1, 5, -2, 3, -3, 2, -4, 4, -5, 0, -6 };
  ts_tensor *y = ts_max_pool2d(ts_constant(TS_F32, TS_SHAPE(1, 2, 3, 2), v), INT_MAX, INT_MAX, 1, 2,
                               TS_PADDING_SAME);
  g_assert_nonnull(y);
  g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(1, 2, 2, 2)));
  for (int64_t j = 0; j < ts_tensor_size(y); j++)
    g_assert_cmpfloat(ts_tensor_get_f64(y, j), ==, j % 2 ? -1 : 5);
  ts_scope_end(s);
}

static void test_max_pool2d_errors(void)
{
  ts_scope *s = ts_scope_begin();
  ts_tensor *x = ts_zeros(TS_F32, TS_SHAPE(1, 4, 4, 2));
  assert_error(ts_max_pool2d(ts_zeros(TS_F32, TS_SHAPE(4, 4, 2)), 2, 2, 2, 2, TS_PADDING_VALID), TS_ERR_SHAPE,
               "MaxPool", "rank 4", "f32[4,4,2]");
  assert_error(ts_max_pool2d(ts_zeros(TS_BOOL, TS_SHAPE(1, 2, 2, 1)), 2, 2, 2, 2, TS_PADDING_VALID),
               TS_ERR_DTYPE, "MaxPool", "bool", "bool[1,2,2,1]");
  assert_error(ts_max_pool2d(x, 0, 2, 2, 2, TS_PADDING_VALID), TS_ERR_INVALID_ARGUMENT, "MaxPool", "ksize",
               "{0, 2}");
  assert_error(ts_max_pool2d(x, 2, 2, 2, 0, TS_PADDING_VALID), TS_ERR_INVALID_ARGUMENT, "MaxPool", "strides",
               "{2, 0}");
  assert_error(ts_max_pool2d(x, 2, 2, 2, 2, (ts_padding)2), TS_ERR_INVALID_ARGUMENT, "MaxPool", "padding",
               "got 2");
  assert_error(ts_max_pool2d(x, 2, 5, 1, 1, TS_PADDING_VALID), TS_ERR_SHAPE, "MaxPool",
               "larger than the input", "input f32[1,4,4,2], ksize {2, 5}");
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/matmul/2d", test_matmul_2d);
  g_test_add_func("/matmul/f64-promotion", test_matmul_f64_and_promotion);
  g_test_add_func("/matmul/batched", test_matmul_batched);
  g_test_add_func("/matmul/broadcast-batch", test_matmul_broadcast_batch);
  g_test_add_func("/matmul/integers", test_matmul_integers);
  g_test_add_func("/matmul/empty", test_matmul_empty);
  g_test_add_func("/matmul/errors", test_matmul_errors);
  g_test_add_func("/conv2d/reference", test_conv2d_reference);
  g_test_add_func("/conv2d/hand", test_conv2d_hand);
  g_test_add_func("/conv2d/errors", test_conv2d_errors);
  g_test_add_func("/conv2d/half", test_conv2d_half);
  g_test_add_func("/conv-transpose/half", test_conv_transpose_half);
  g_test_add_func("/max-pool2d/values", test_max_pool2d);
  g_test_add_func("/max-pool2d/errors", test_max_pool2d_errors);
  g_test_add_func("/max-pool2d/dtypes", test_max_pool2d_dtypes);
  g_test_add_func("/max-pool2d/shapes", test_max_pool2d_shapes);
  int rc = g_test_run();
  ts_release_all();
  return rc;
}
