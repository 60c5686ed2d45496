/* Tests for LSTMSequence (engine/ops/rnn.c, engine/kernels/lstm.c): a whole
 * LSTM direction in one op, against the same LSTM written with the unfused
 * ops (MatMul, Add, Split, Sigmoid, Tanh, Mul) step by step. */
#include <tracescope.h>

#include <glib.h>
#include <math.h>
#include <string.h>

typedef struct lstm_out {
  ts_tensor *y, *h, *c;
} lstm_out;

/* The unfused LSTM: x [S, B, I], w [I, 4H], r [H, 4H], b [4H], h0 and c0
 * [B, H], peep NULL or [3, H]. */
static lstm_out unfused(ts_tensor *x, ts_tensor *w, ts_tensor *r, ts_tensor *b, ts_tensor *h, ts_tensor *c,
                        ts_tensor *peep, bool reverse)
{
  ts_shape xs = ts_tensor_shape(x);
  int64_t steps = xs.dim[0], batch = xs.dim[1], input = xs.dim[2];
  ts_tensor **ys = g_new0(ts_tensor *, steps), *p[3] = { NULL, NULL, NULL };
  if (peep)
    g_assert_cmpint(ts_split(ts_reshape(peep, TS_SHAPE(-1)), 3, 0, p), ==, 3);
  for (int64_t k = 0; k < steps; k++) {
    int64_t t = reverse ? steps - 1 - k : k;
    ts_tensor *xt = ts_reshape(ts_slice(x, TS_INTS(t, 0, 0), TS_INTS(1, batch, input)), TS_SHAPE(batch, input));
    ts_tensor *g = ts_add(ts_add(ts_matmul(xt, w), b), ts_matmul(h, r)), *gk[4];
    g_assert_cmpint(ts_split(g, 4, 1, gk), ==, 4);
    if (peep) {
      gk[0] = ts_add(gk[0], ts_mul(p[0], c));
      gk[2] = ts_add(gk[2], ts_mul(p[2], c));
    }
    ts_tensor *i = ts_sigmoid(gk[0]), *f = ts_sigmoid(gk[2]);
    c = ts_add(ts_mul(f, c), ts_mul(i, ts_tanh(gk[3])));
    if (peep)
      gk[1] = ts_add(gk[1], ts_mul(p[1], c));
    h = ts_mul(ts_sigmoid(gk[1]), ts_tanh(c));
    ys[t] = ts_reshape(h, TS_SHAPE(1, batch, -1));
  }
  lstm_out o = { steps ? ts_concat(ys, (int)steps, 0) : NULL, h, c };
  g_free(ys);
  return o;
}

typedef struct inputs {
  ts_tensor *x, *w, *r, *b, *h0, *c0, *peep;
} inputs;

static lstm_out fused(const inputs *in, bool with_peep, bool reverse)
{
  lstm_out o;
  g_assert_true(ts_lstm_sequence(in->x, in->w, in->r, in->b, in->h0, in->c0, with_peep ? in->peep : NULL, reverse,
                                 &o.y, &o.h, &o.c));
  return o;
}

static lstm_out ops(const inputs *in, bool with_peep, bool reverse)
{
  return unfused(in->x, in->w, in->r, in->b, in->h0, in->c0, with_peep ? in->peep : NULL, reverse);
}

static void assert_close(ts_tensor *got, ts_tensor *want, double tol)
{
  g_assert_nonnull(got);
  g_assert_nonnull(want);
  g_assert_cmpint(ts_tensor_dtype(got), ==, ts_tensor_dtype(want));
  g_assert_true(ts_shape_equal(ts_tensor_shape(got), ts_tensor_shape(want)));
  for (int64_t i = 0; i < ts_tensor_size(want); i++)
    g_assert_cmpfloat(fabs(ts_tensor_get_f64(got, i) - ts_tensor_get_f64(want, i)), <=, tol);
}

static void assert_same_bits(ts_tensor *a, ts_tensor *b)
{
  g_assert_true(ts_shape_equal(ts_tensor_shape(a), ts_tensor_shape(b)));
  size_t bytes = (size_t)ts_tensor_size(a) * ts_dtype_size(ts_tensor_dtype(a));
  g_assert_cmpint(memcmp(ts_tensor_data(a), ts_tensor_data(b), bytes), ==, 0);
}

static inputs random_inputs(ts_dtype dt, int64_t steps, int64_t batch, int64_t input, int64_t hidden,
                            uint64_t seed)
{
  return (inputs){
    ts_random_uniform(dt, TS_SHAPE(steps, batch, input), -2, 2, seed),
    ts_random_uniform(dt, TS_SHAPE(input, 4 * hidden), -0.5, 0.5, seed + 1),
    ts_random_uniform(dt, TS_SHAPE(hidden, 4 * hidden), -0.5, 0.5, seed + 2),
    ts_random_uniform(dt, TS_SHAPE(4 * hidden), -1, 1, seed + 3),
    ts_random_uniform(dt, TS_SHAPE(batch, hidden), -1, 1, seed + 4),
    ts_random_uniform(dt, TS_SHAPE(batch, hidden), -1, 1, seed + 5),
    ts_random_uniform(dt, TS_SHAPE(3, hidden), -1, 1, seed + 6),
  };
}

/* Every combination of dtype, direction and peepholes: the fused op gives
 * what the ops give (f32: the products may run on different kernels). */
static void test_matches_unfused(void)
{
  const ts_dtype dts[] = { TS_F32, TS_F64 };
  for (size_t d = 0; d < G_N_ELEMENTS(dts); d++)
    for (int reverse = 0; reverse < 2; reverse++)
      for (int with_peep = 0; with_peep < 2; with_peep++) {
        ts_scope *s = ts_scope_begin();
        inputs in = random_inputs(dts[d], 5, 3, 4, 7, 11 + 10 * d);
        lstm_out a = fused(&in, with_peep, reverse), b = ops(&in, with_peep, reverse);
        double tol = dts[d] == TS_F32 ? 1e-5 : 1e-13;
        assert_close(a.y, b.y, tol);
        assert_close(a.h, b.h, tol);
        assert_close(a.c, b.c, tol);
        ts_scope_end(s);
      }
}

/* A batch large enough to be split across the pool: the same bits at 1
 * and 2 threads, and as the unfused ops give. */
static void test_threads(void)
{
  int threads = ts_get_threads();
  ts_scope *s = ts_scope_begin();
  inputs in = random_inputs(TS_F32, 8, 5, 16, 64, 7);
  g_assert_true(ts_set_threads(1));
  lstm_out one = fused(&in, true, false);
  g_assert_true(ts_set_threads(2));
  lstm_out two = fused(&in, true, false);
  g_assert_true(ts_set_threads(threads));
  assert_same_bits(one.y, two.y);
  assert_same_bits(one.h, two.h);
  assert_same_bits(one.c, two.c);
  assert_close(two.y, ops(&in, true, false).y, 1e-5);
  ts_scope_end(s);
}

/* No steps: y empty, the states as given. */
static void test_no_steps(void)
{
  ts_scope *s = ts_scope_begin();
  inputs in = random_inputs(TS_F32, 0, 2, 4, 3, 5);
  lstm_out o = fused(&in, false, false);
  g_assert_true(ts_shape_equal(ts_tensor_shape(o.y), TS_SHAPE(0, 2, 3)));
  assert_same_bits(o.h, in.h0);
  assert_same_bits(o.c, in.c0);
  ts_scope_end(s);
}

static void assert_refused(inputs in, ts_error_code code, const char *needle)
{
  ts_tensor *y = in.x, *h = in.x, *c = in.x;
  g_assert_false(ts_lstm_sequence(in.x, in.w, in.r, in.b, in.h0, in.c0, in.peep, false, &y, &h, &c));
  g_assert_null(y);
  g_assert_null(h);
  g_assert_null(c);
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_test_message("error: %s", e->message);
  g_assert_cmpint(e->code, ==, code);
  g_assert_cmpstr(e->op, ==, "LSTMSequence");
  g_assert_nonnull(strstr(e->message, needle));
  ts_error_free(e);
}

/* Shapes that do not fit each other and dtypes it does not take are
 * refused, saying what was given. */
static void test_refused(void)
{
  ts_scope *s = ts_scope_begin();
  const inputs ok = random_inputs(TS_F32, 2, 2, 4, 3, 5);
  inputs in = ok;
  in.r = ts_random_uniform(TS_F32, TS_SHAPE(3, 13), -1, 1, 1);
  assert_refused(in, TS_ERR_SHAPE, "r f32[3,13]");
  in = ok;
  in.w = ts_random_uniform(TS_F32, TS_SHAPE(5, 12), -1, 1, 1);
  assert_refused(in, TS_ERR_SHAPE, "w f32[5,12]");
  in = ok;
  in.b = ts_random_uniform(TS_F32, TS_SHAPE(8), -1, 1, 1);
  assert_refused(in, TS_ERR_SHAPE, "b f32[8]");
  in = ok;
  in.h0 = ts_random_uniform(TS_F32, TS_SHAPE(1, 3), -1, 1, 1);
  assert_refused(in, TS_ERR_SHAPE, "h0 f32[1,3]");
  in = ok;
  in.peep = ts_random_uniform(TS_F32, TS_SHAPE(2, 3), -1, 1, 1);
  assert_refused(in, TS_ERR_SHAPE, "peepholes f32[2,3]");
  in = ok;
  in.c0 = ts_cast(ok.c0, TS_F64);
  assert_refused(in, TS_ERR_DTYPE, "f64[2,3]");
  in = (inputs){ ts_cast(ok.x, TS_I32), ts_cast(ok.w, TS_I32), ts_cast(ok.r, TS_I32), ts_cast(ok.b, TS_I32),
                 ts_cast(ok.h0, TS_I32), ts_cast(ok.c0, TS_I32), NULL };
  assert_refused(in, TS_ERR_DTYPE, "i32");
  ts_scope_end(s);
}

static inputs grad_in;

/* The gradient of sum(y) for w, through LSTMSequence; x the argument. */
static ts_tensor *w_gradient(ts_call *call)
{
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, grad_in.w);
  ts_tensor *y = NULL, *g = NULL;
  if (ts_lstm_sequence(ts_arg(call, 0), grad_in.w, grad_in.r, grad_in.b, grad_in.h0, grad_in.c0, NULL, false,
                       &y, NULL, NULL))
    ts_tape_gradient(tape, ts_reduce_sum(y, TS_ALL_AXES, false), &grad_in.w, 1, &g, TS_UNCONNECTED_ZERO);
  ts_tape_free(tape);
  return g;
}

/* The gradient runs the steps again as ops, unrolled: eagerly, and traced
 * with the steps known, it is the unfused LSTM's; traced with their number
 * unknown it is an error saying so, not a crash. */
static void test_gradient_steps(void)
{
  ts_scope *s = ts_scope_begin();
  grad_in = random_inputs(TS_F64, 3, 2, 4, 3, 9);
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, grad_in.w);
  ts_tensor *want = NULL;
  ts_tape_gradient(tape, ts_reduce_sum(ops(&grad_in, false, false).y, TS_ALL_AXES, false), &grad_in.w, 1,
                   &want, TS_UNCONNECTED_ZERO);
  ts_tape_free(tape);
  ts_value x = TS_TENSOR_VALUE(grad_in.x);
  for (int eager = 1; eager >= 0; eager--) {
    ts_function *fn = ts_function_new("w_gradient", w_gradient, "x");
    ts_function_set_run_eagerly(fn, eager);
    assert_close(ts_function_call(fn, &x, 1), want, 1e-12);
    ts_function_free(fn);
  }
  ts_function *fn = ts_function_new("w_gradient", w_gradient, "x");
  ts_spec spec = { TS_F64, TS_SHAPE(-1, 2, 4) };
  g_assert_true(ts_function_set_input_signature(fn, &spec, 1));
  g_assert_null(ts_function_call(fn, &x, 1));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_cmpint(e->code, ==, TS_ERR_SHAPE);
  if (!strstr(e->message, "LSTMSequence: its gradient unrolls the steps: their number (x's first dim) "
                           "must be known, got x (None, 2, 4)"))
    g_error("unexpected message: %s", e->message);
  ts_error_free(e);
  ts_function_free(fn);
  ts_scope_end(s);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/lstm/matches-unfused", test_matches_unfused);
  g_test_add_func("/lstm/threads", test_threads);
  g_test_add_func("/lstm/no-steps", test_no_steps);
  g_test_add_func("/lstm/refused", test_refused);
  g_test_add_func("/lstm/gradient-steps", test_gradient_steps);
  return g_test_run();
}
