/* test-passes.c — the optimizer's passes on small traced graphs: what each
 * must and must not rewrite, the provenance of what it makes, fused kernels
 * against the unfused ops, choosing passes, and ReadVariableOp's views. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "test-quiet.h"
#include "test-serial-check.h"

/* ---- helpers ---------------------------------------------------------------- */

static int count_op(const ts_graph *g, ts_op op)
{
  int n = 0;
  for (int id = 0; id < ts_graph_n_nodes(g); id++)
    n += ts_node_op(ts_graph_node(g, id)) == op;
  return n;
}

static const ts_node *find_op(const ts_graph *g, ts_op op)
{
  for (int id = 0; id < ts_graph_n_nodes(g); id++)
    if (ts_node_op(ts_graph_node(g, id)) == op)
      return ts_graph_node(g, id);
  g_error("no %s node", ts_op_name(op));
  return NULL;
}

/* The traced graph of fn for args (specs or values). */
static const ts_graph *trace(ts_function *fn, const ts_value *args, int n)
{
  ts_concrete *cf = ts_function_get_concrete(fn, args, n);
  assert_no_error();
  g_assert_nonnull(cf);
  return ts_concrete_graph(cf);
}

/* g after passes; the summary must hold `line` (when given). */
static ts_graph *optimize(const ts_graph *g, const char *passes, const char *line)
{
  char *summary = NULL;
  ts_graph *out = ts_graph_optimize(g, passes, &summary);
  assert_no_error();
  g_assert_nonnull(out);
  if (line && !strstr(summary, line))
    g_error("summary \"%s\" lacks \"%s\"", summary, line);
  free(summary);
  return out;
}

/* "MatMul, Add, Relu": the ops n stands for. */
static char *origin_ops(const ts_node *n)
{
  GString *s = g_string_new(NULL);
  for (int i = 0; i < ts_node_n_origins(n); i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", ts_op_name(ts_node_op(ts_node_origin(n, i))));
  return g_string_free(s, FALSE);
}

static void assert_origins(const ts_node *n, const char *expected)
{
  char *got = origin_ops(n);
  g_assert_cmpstr(got, ==, expected);
  g_free(got);
}

/* Calls fn on args with every pass off, then on, and compares the results
 * element by element (nan matches nan, inf inf; floats within rel_tol). */
static void assert_same_both_ways(ts_fn fn, const char *params, const ts_value *args, int n,
                                  double rel_tol)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *res[2];
  ts_function *f[2];
  const char *modes[2] = { "none", "all" };
  for (int m = 0; m < 2; m++) {
    g_assert_true(ts_set_passes(modes[m]));
    f[m] = ts_function_new("f", fn, params);
    res[m] = ts_function_call(f[m], args, n);
    assert_no_error();
    g_assert_nonnull(res[m]);
  }
  g_assert_true(ts_set_passes("all"));
  g_assert_cmpint(ts_tensor_dtype(res[0]), ==, ts_tensor_dtype(res[1]));
  g_assert_true(ts_shape_equal(ts_tensor_shape(res[0]), ts_tensor_shape(res[1])));
  for (int64_t i = 0; i < ts_tensor_size(res[0]); i++) {
    double a = ts_tensor_get_f64(res[0], i), b = ts_tensor_get_f64(res[1], i);
    if (isnan(a) && isnan(b))
      continue;
    if (!(a == b || fabs(a - b) <= rel_tol * fmax(1, fabs(a)))) /* a == b: infinities */
      g_error("element %" G_GINT64_FORMAT ": %.9g without passes, %.9g with", i, a, b);
  }
  ts_function_free(f[0]);
  ts_function_free(f[1]);
  ts_scope_end(scope);
}

static ts_tensor *ramp(ts_dtype dtype, ts_shape shape, double start, double step)
{
  int64_t n = ts_shape_size(shape);
  double *v = g_new(double, n ? n : 1);
  for (int64_t i = 0; i < n; i++)
    v[i] = start + step * (double)i;
  ts_tensor *t = ts_cast(ts_constant(TS_F64, shape, v), dtype);
  g_free(v);
  return t;
}

/* ---- choosing passes ------------------------------------------------------------- */

static void test_choose(void)
{
  g_assert_false(ts_set_passes("fold,bogus"));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_nonnull(strstr(e->message, "'bogus'"));
  ts_error_free(e);

  char *s;
  g_assert_true(ts_set_passes("dce, cse"));
  g_assert_cmpstr((s = ts_get_passes()), ==, "cse,dce"); /* in their running order */
  free(s);
  g_assert_true(ts_set_passes("none"));
  g_assert_cmpstr((s = ts_get_passes()), ==, "none");
  free(s);
  g_assert_true(ts_set_passes("all"));
  g_assert_cmpstr((s = ts_get_passes()), ==, "layout,fold,cse,simplify,dce,fuse");
  free(s);
}

static ts_tensor *square_twice(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  return ts_add(ts_mul(x, x), ts_mul(x, x));
}

/* Concrete functions keep the passes chosen when they were traced, and say
 * what each did. */
static void test_concrete_summary(void)
{
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(3));
  g_assert_true(ts_set_passes("cse"));
  ts_function *fn = ts_function_new("square_twice", square_twice, "x");
  ts_concrete *cf = ts_function_get_concrete(fn, &spec, 1);
  g_assert_cmpstr(ts_concrete_pass_summary(cf), ==, "cse: removed 1 node\n");
  g_assert_cmpint(count_op(ts_concrete_optimized_graph(cf), TS_OP_MUL), ==, 1);
  g_assert_cmpint(count_op(ts_concrete_graph(cf), TS_OP_MUL), ==, 2); /* traced: as it was */
  g_assert_true(ts_set_passes("none"));
  ts_function *plain = ts_function_new("square_twice", square_twice, "x");
  cf = ts_function_get_concrete(plain, &spec, 1);
  g_assert_cmpstr(ts_concrete_pass_summary(cf), ==, "");
  g_assert_true(ts_concrete_optimized_graph(cf) == ts_concrete_graph(cf)); /* no copy */
  g_assert_true(ts_set_passes("all"));
  ts_function_free(fn);
  ts_function_free(plain);
}

/* ---- cse ------------------------------------------------------------------------- */

static void test_cse_merges(void)
{
  ts_function *fn = ts_function_new("square_twice", square_twice, "x");
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(3));
  ts_graph *g = optimize(trace(fn, &spec, 1), "cse", "cse: removed 1 node");
  g_assert_cmpint(count_op(g, TS_OP_MUL), ==, 1);
  assert_origins(find_op(g, TS_OP_MUL), "Mul, Mul"); /* it stands for both */
  const ts_node *add = find_op(g, TS_OP_ADD);
  g_assert_cmpint(ts_node_input(add, 0).node, ==, ts_node_input(add, 1).node);
  ts_graph_free(g);
  ts_value x = TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(3), -1, 0.5));
  assert_same_both_ways(square_twice, "x", &x, 1, 0);
  ts_function_free(fn);
}

static ts_tensor *two_randoms(ts_call *c)
{
  ts_tensor *a = ts_random_uniform(TS_F32, TS_SHAPE(4), 0, 1, 7);
  ts_tensor *b = ts_random_uniform(TS_F32, TS_SHAPE(4), 0, 1, 7);
  return ts_add(ts_add(a, b), ts_arg(c, 0));
}

static ts_tensor *counter;

static ts_tensor *two_reads_and_prints(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_print("x", x);
  ts_print("x", x);
  ts_tensor *a = ts_read(counter);
  ts_assign_add(counter, ts_scalar_i32(1));
  ts_tensor *b = ts_read(counter);
  return ts_add(ts_add(a, b), x);
}

static void test_cse_keeps(void)
{
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(4));
  ts_function *fn = ts_function_new("two_randoms", two_randoms, "x");
  ts_graph *g = optimize(trace(fn, &spec, 1), "cse", "cse: removed 0 nodes");
  g_assert_cmpint(count_op(g, TS_OP_RANDOM_UNIFORM), ==, 2);
  ts_graph_free(g);
  ts_function_free(fn);

  counter = ts_variable_new(ts_scalar_i32(0), "counter");
  ts_value ispec = TS_SPEC_VALUE(TS_I32, TS_SCALAR_SHAPE);
  fn = ts_function_new("two_reads_and_prints", two_reads_and_prints, "x");
  g = optimize(trace(fn, &ispec, 1), "cse", "cse: removed 0 nodes");
  g_assert_cmpint(count_op(g, TS_OP_PRINT), ==, 2);
  g_assert_cmpint(count_op(g, TS_OP_READ_VARIABLE), ==, 2);
  ts_graph_free(g);
  /* and they run: reads before and after the assign differ */
  ts_value x = TS_TENSOR_VALUE(ts_scalar_i32(10));
  int out = test_quiet_begin(); /* the prints would break the TAP stream */
  ts_tensor *r = ts_function_call(fn, &x, 1);
  test_quiet_end(out);
  assert_no_error();
  g_assert_cmpint(ts_tensor_get_i64(r, 0), ==, 0 + 1 + 10);
  ts_function_free(fn);
  ts_tensor_unref(counter);
}

/* ---- simplify -------------------------------------------------------------------- */

static ts_tensor *units(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *y = ts_mul(ts_scalar_f32(1), ts_mul(x, ts_ones(TS_F32, TS_SHAPE(3))));
  y = ts_sub(ts_add(ts_scalar_f32(0), ts_add(y, ts_zeros(TS_F32, TS_SHAPE(3)))), ts_scalar_f32(0));
  return ts_cast(y, TS_F32);
}

static void test_simplify_units(void)
{
  ts_function *fn = ts_function_new("units", units, "x");
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(2, 3));
  ts_graph *g = optimize(trace(fn, &spec, 1), "fold,simplify,dce", "simplify: simplified 6 nodes");
  g_assert_cmpint(ts_graph_n_nodes(g), ==, 1); /* the placeholder, returned */
  ts_graph_free(g);
  ts_value x = TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(2, 3), -2, 1.25));
  assert_same_both_ways(units, "x", &x, 1, 0);
  ts_function_free(fn);
}

/* x * ones that broadcast x to a larger shape is not x. */
static ts_tensor *broadcasting_one(ts_call *c)
{
  return ts_mul(ts_arg(c, 0), ts_ones(TS_F32, TS_SHAPE(2, 3)));
}

static ts_tensor *self_sub(ts_call *c)
{
  return ts_sub(ts_arg(c, 0), ts_arg(c, 0));
}

/* [2,0] as [0,5], then [-1,0]: the -1 beside a 0 reads the dims it is
 * given (5), not the first input's (2), so the reshapes stay two. */
static ts_tensor *reshape_beside_zero(ts_call *c)
{
  return ts_reshape(ts_reshape(ts_arg(c, 0), TS_SHAPE(0, 5)), TS_SHAPE(-1, 0));
}

static void test_simplify_keeps(void)
{
  ts_function *fn = ts_function_new("broadcasting_one", broadcasting_one, "x");
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(3));
  ts_graph *g = optimize(trace(fn, &spec, 1), "simplify", "simplify: simplified 0 nodes");
  g_assert_cmpint(count_op(g, TS_OP_MUL), ==, 1);
  ts_graph_free(g);
  ts_function_free(fn);

  /* x - x: 0 for integers, kept for floats (inf - inf and nan - nan are nan) */
  fn = ts_function_new("self_sub", self_sub, "x");
  ts_value fspec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(3));
  g = optimize(trace(fn, &fspec, 1), "simplify", "simplify: simplified 0 nodes");
  g_assert_cmpint(count_op(g, TS_OP_SUB), ==, 1);
  ts_graph_free(g);
  ts_value ispec = TS_SPEC_VALUE(TS_I32, TS_SHAPE(3));
  g = optimize(trace(fn, &ispec, 1), "simplify,dce", "simplify: simplified 1 node");
  g_assert_cmpint(count_op(g, TS_OP_SUB), ==, 0);
  const ts_node *zeros = find_op(g, TS_OP_CONST);
  assert_origins(zeros, "Sub");
  g_assert_cmpint(ts_tensor_get_i64(ts_node_value(zeros), 2), ==, 0);
  ts_graph_free(g);
  ts_function_free(fn);
  float special[] = { INFINITY, NAN, 2 };
  ts_value fx = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(3), special));
  assert_same_both_ways(self_sub, "x", &fx, 1, 0);
  ts_value ix = TS_TENSOR_VALUE(ramp(TS_I32, TS_SHAPE(3), -5, 7));
  assert_same_both_ways(self_sub, "x", &ix, 1, 0);

  fn = ts_function_new("reshape_beside_zero", reshape_beside_zero, "x");
  ts_value espec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(2, 0));
  g = optimize(trace(fn, &espec, 1), "simplify", "simplify: simplified 0 nodes");
  g_assert_cmpint(count_op(g, TS_OP_RESHAPE), ==, 2);
  ts_graph_free(g);
  ts_value e = TS_TENSOR_VALUE(ts_zeros(TS_F32, TS_SHAPE(2, 0)));
  ts_tensor *y = ts_function_call(fn, &e, 1);
  g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(5, 0)));
  ts_function_free(fn);
  assert_same_both_ways(reshape_beside_zero, "x", &e, 1, 0);
}

static ts_tensor *layout(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0); /* [2, 3, 4] */
  ts_tensor *back = ts_transpose(ts_transpose(x, TS_INTS(2, 0, 1)), TS_INTS(1, 2, 0));
  ts_tensor *turned = ts_transpose(ts_transpose(x, TS_INTS(1, 0, 2)), TS_INTS(0, 2, 1));
  ts_tensor *flat = ts_reshape(ts_reshape(back, TS_SHAPE(6, 4)), TS_SHAPE(4, 6));
  return ts_add(ts_reshape(turned, TS_SHAPE(4, 6)), flat);
}

static void test_simplify_layout(void)
{
  ts_function *fn = ts_function_new("layout", layout, "x");
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(2, 3, 4));
  ts_graph *g = optimize(trace(fn, &spec, 1), "simplify,dce", "simplify: simplified 3 nodes");
  g_assert_cmpint(count_op(g, TS_OP_TRANSPOSE), ==, 1); /* the pair that is not the identity */
  assert_origins(find_op(g, TS_OP_TRANSPOSE), "Transpose, Transpose");
  g_assert_cmpint(count_op(g, TS_OP_RESHAPE), ==, 2);
  ts_graph_free(g);
  ts_value x = TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(2, 3, 4), 0, 1));
  assert_same_both_ways(layout, "x", &x, 1, 0);
  ts_function_free(fn);
}

static ts_tensor *powers(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_dtype dt = ts_tensor_dtype(x);
  ts_tensor *sum = ts_pow(x, ts_cast(ts_scalar_i32(1), dt));
  for (int k = 2; k <= 5; k++)
    sum = ts_add(sum, ts_pow(x, ts_cast(ts_scalar_i32(k), dt)));
  return sum;
}

static void test_simplify_pow(void)
{
  ts_function *fn = ts_function_new("powers", powers, "x");
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(4));
  ts_graph *g = optimize(trace(fn, &spec, 1), "fold,simplify,dce", "simplify: simplified 4 nodes");
  g_assert_cmpint(count_op(g, TS_OP_POW), ==, 1); /* x ** 5 stays */
  g_assert_cmpint(count_op(g, TS_OP_MUL), ==, 1 + 2 + 2);
  assert_origins(find_op(g, TS_OP_MUL), "Pow");
  ts_graph_free(g);
  ts_function_free(fn);
  ts_value x = TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(4), -1.5, 0.75));
  assert_same_both_ways(powers, "x", &x, 1, 1e-6);
  ts_value xi = TS_TENSOR_VALUE(ramp(TS_I32, TS_SHAPE(4), -3, 2));
  assert_same_both_ways(powers, "x", &xi, 1, 0); /* integers: exact */
}

/* Identities go (Keras's Dropout at inference is one), even as the output. */
static ts_tensor *identities(ts_call *c)
{
  ts_tensor *h = ts_identity(ts_relu(ts_arg(c, 0)));
  return ts_identity(ts_add(h, ts_identity(h)));
}

static void test_simplify_identity(void)
{
  ts_function *fn = ts_function_new("identities", identities, "x");
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(4));
  ts_graph *g = optimize(trace(fn, &spec, 1), "simplify,dce", "simplify: simplified 3 nodes");
  g_assert_cmpint(count_op(g, TS_OP_IDENTITY), ==, 0);
  g_assert_cmpint(count_op(g, TS_OP_ADD), ==, 1);
  ts_graph_free(g);
  ts_function_free(fn);
  ts_value x = TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(4), -1.5, 0.75));
  assert_same_both_ways(identities, "x", &x, 1, 0);
}

/* ---- layout ---------------------------------------------------------------------- */

/* The ONNX importer's convolution block: x [2, 4, 5, 3] (NHWC) to NCHW, a
 * bias along C (b [1, 3, 1, 1], an argument), a constant scale along C and
 * H ([3, 4, 1]: its dims change order in NHWC), relu, a cast, and back to
 * NHWC; and two transposes of one perm meeting in a subtraction. */
static ts_tensor *nchw_block(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *b = ts_arg(c, 1);
  ts_tensor *y = ts_transpose(x, TS_INTS(0, 3, 1, 2));
  y = ts_relu(ts_mul(ts_add(y, b), ramp(TS_F32, TS_SHAPE(3, 4, 1), -0.5, 0.125)));
  y = ts_transpose(ts_cast(y, TS_F64), TS_INTS(0, 2, 3, 1));
  ts_tensor *z = ts_sub(ts_transpose(x, TS_INTS(0, 3, 1, 2)), ts_transpose(ts_exp(x), TS_INTS(0, 3, 1, 2)));
  return ts_add(y, ts_cast(ts_transpose(z, TS_INTS(0, 2, 3, 1)), TS_F64));
}

static void test_layout_cancels(void)
{
  ts_function *fn = ts_function_new("nchw_block", nchw_block, "x, b");
  ts_value spec[2] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(2, 4, 5, 3)), TS_SPEC_VALUE(TS_F32, TS_SHAPE(1, 3, 1, 1)) };
  const ts_graph *traced = trace(fn, spec, 2);
  g_assert_cmpint(count_op(traced, TS_OP_TRANSPOSE), ==, 5);
  /* add, mul, relu and cast take the first transpose to its inverse, sub
   * takes both of the second pair to theirs */
  ts_graph *g = optimize(traced, "layout,fold,dce", "layout: rewrote 7 nodes");
  g_assert_cmpint(count_op(g, TS_OP_TRANSPOSE), ==, 0);
  g_assert_cmpint(ts_graph_n_nodes(g), ==, ts_graph_n_nodes(traced) - 5); /* the bias reshaped, the scale folded */
  assert_origins(find_op(g, TS_OP_RELU), "Relu");
  assert_origins(find_op(g, TS_OP_SUB), "Sub");
  const ts_node *relu = find_op(g, TS_OP_RELU); /* computed in NHWC now */
  g_assert_true(ts_shape_equal(ts_node_output_shape(relu, 0), TS_SHAPE(2, 4, 5, 3)));
  ts_graph_free(g);
  ts_function_free(fn);
  ts_value args[2] = { TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(2, 4, 5, 3), -3, 0.05)),
                       TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(1, 3, 1, 1), -1, 1)) };
  assert_same_both_ways(nchw_block, "x, b", args, 2, 0);
}

/* A transpose past exp meets one that is not its inverse: one transpose. */
static ts_tensor *turn_twice(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0); /* [2, 3, 4] */
  return ts_transpose(ts_exp(ts_transpose(x, TS_INTS(1, 2, 0))), TS_INTS(1, 2, 0));
}

static void test_layout_composes(void)
{
  ts_function *fn = ts_function_new("turn_twice", turn_twice, "x");
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(2, 3, 4));
  ts_graph *g = optimize(trace(fn, &spec, 1), "layout,dce", "layout: rewrote 2 nodes");
  g_assert_cmpint(count_op(g, TS_OP_TRANSPOSE), ==, 1);
  const ts_node *t = find_op(g, TS_OP_TRANSPOSE);
  g_assert_cmpint(ts_node_op(ts_graph_node(g, ts_node_input(t, 0).node)), ==, TS_OP_EXP);
  assert_origins(t, "Transpose, Transpose");
  ts_graph_free(g);
  ts_function_free(fn);
  ts_value x = TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(2, 3, 4), -2, 0.125));
  assert_same_both_ways(turn_twice, "x", &x, 1, 0);
}

/* Transposes that must stay where they are: one read twice, one whose
 * other operand is not a constant and would need a transpose of its own
 * (m [5, 4]), one that the other operand broadcasts to a larger shape. */
static ts_tensor *layout_stays(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *m = ts_arg(c, 1), *v = ts_arg(c, 2); /* [4, 5], [5, 4], [1, 5] */
  ts_tensor *twice = ts_transpose(x, TS_INTS(1, 0));
  ts_tensor *a = ts_add(ts_relu(twice), ts_reduce_sum(twice, TS_INTS(0), false)); /* [5, 4] + [4] */
  ts_tensor *b = ts_mul(ts_transpose(x, TS_INTS(1, 0)), m);
  ts_tensor *d = ts_add(ts_transpose(v, TS_INTS(1, 0)), m); /* [5, 1] + [5, 4] */
  ts_tensor *parts[3] = { a, b, d };
  return ts_concat(parts, 3, 0);
}

static void test_layout_stays(void)
{
  ts_function *fn = ts_function_new("layout_stays", layout_stays, "x, m, v");
  ts_value spec[3] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(4, 5)), TS_SPEC_VALUE(TS_F32, TS_SHAPE(5, 4)),
                       TS_SPEC_VALUE(TS_F32, TS_SHAPE(1, 5)) };
  const ts_graph *traced = trace(fn, spec, 3);
  ts_graph *g = optimize(traced, "layout,dce", "layout: rewrote 0 nodes");
  g_assert_cmpint(count_op(g, TS_OP_TRANSPOSE), ==, 3);
  ts_graph_free(g);
  ts_function_free(fn);
  ts_value args[3] = { TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(4, 5), -2, 0.25)),
                       TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(5, 4), 1, -0.5)),
                       TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(1, 5), 3, 1)) };
  assert_same_both_ways(layout_stays, "x, m, v", args, 3, 0);
}

/* Products by weights stored [N, K]: x [3, 4] by a constant w [5, 4] twice
 * (one transpose of w serves both), and by an argument v [5, 4], which stays. */
static ts_tensor *dense_tb(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *v = ts_arg(c, 1), *w = ramp(TS_F32, TS_SHAPE(5, 4), -1, 0.125);
  ts_tensor *y = ts_add(ts_matmul_t(x, w, false, true), ts_matmul_t(ts_neg(x), w, false, true));
  return ts_add(y, ts_matmul_t(x, v, false, true));
}

static void test_layout_weights(void)
{
  ts_function *fn = ts_function_new("dense_tb", dense_tb, "x, v");
  ts_value spec[2] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(3, 4)), TS_SPEC_VALUE(TS_F32, TS_SHAPE(5, 4)) };
  ts_graph *g = optimize(trace(fn, spec, 2), "layout,fold,dce", "layout: rewrote 2 nodes");
  g_assert_cmpint(count_op(g, TS_OP_MATMUL), ==, 3);
  g_assert_cmpint(count_op(g, TS_OP_TRANSPOSE), ==, 0);
  int plain = 0, weights = 0;
  for (int id = 0; id < ts_graph_n_nodes(g); id++) {
    const ts_node *n = ts_graph_node(g, id);
    if (ts_node_op(n) == TS_OP_MATMUL) {
      char *tb = ts_node_attr_to_string(n, 1);
      plain += strcmp(tb, "false") == 0;
      free(tb);
    }
    weights += ts_node_op(n) == TS_OP_CONST && ts_shape_equal(ts_node_output_shape(n, 0), TS_SHAPE(4, 5));
  }
  g_assert_cmpint(plain, ==, 2);
  g_assert_cmpint(weights, ==, 1);
  ts_graph_free(g);
  ts_function_free(fn);
  ts_value args[2] = { TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(3, 4), -2, 0.25)),
                       TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(5, 4), 1, -0.125)) };
  assert_same_both_ways(dense_tb, "x, v", args, 2, 1e-6);
}

/* The ONNX importer's classifier head: NHWC x [2, 4, 5, 3] back to NCHW,
 * flattened, by constant weights stored [N, K] (a Gemm with transB) and
 * [K, N]; the transposes go into the weights' rows.  One whose perm moves
 * the batch dim (y [3, 2, 4] to [2, 3, 4], flattened to [2, 12]) stays. */
static ts_tensor *flatten_head(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *y = ts_arg(c, 1);
  ts_tensor *a = ts_reshape(ts_transpose(x, TS_INTS(0, 3, 1, 2)), TS_SHAPE(2, 60));
  ts_tensor *b = ts_reshape(ts_transpose(ts_exp(x), TS_INTS(0, 3, 1, 2)), TS_SHAPE(2, 60));
  ts_tensor *d = ts_reshape(ts_transpose(y, TS_INTS(1, 0, 2)), TS_SHAPE(2, 12));
  ts_tensor *ya = ts_matmul_t(a, ramp(TS_F32, TS_SHAPE(7, 60), -1, 0.03125), false, true);
  ts_tensor *yb = ts_matmul(b, ramp(TS_F32, TS_SHAPE(60, 7), 1, -0.0078125));
  ts_tensor *yd = ts_matmul(d, ramp(TS_F32, TS_SHAPE(12, 7), -2, 0.25));
  return ts_add(ts_add(ya, yb), yd);
}

static void test_layout_flatten(void)
{
  ts_function *fn = ts_function_new("flatten_head", flatten_head, "x, y");
  ts_value spec[2] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(2, 4, 5, 3)), TS_SPEC_VALUE(TS_F32, TS_SHAPE(3, 2, 4)) };
  const ts_graph *traced = trace(fn, spec, 2);
  g_assert_cmpint(count_op(traced, TS_OP_TRANSPOSE), ==, 3);
  ts_graph *g = optimize(traced, "layout,fold,dce", "layout: rewrote 2 nodes");
  g_assert_cmpint(count_op(g, TS_OP_TRANSPOSE), ==, 1); /* y's */
  const ts_node *t = find_op(g, TS_OP_TRANSPOSE);
  g_assert_cmpint(ts_node_op(ts_graph_node(g, ts_node_input(t, 0).node)), ==, TS_OP_PLACEHOLDER);
  g_assert_true(ts_shape_equal(ts_node_output_shape(t, 0), TS_SHAPE(2, 3, 4)));
  ts_graph_free(g);
  ts_function_free(fn);
  ts_value args[2] = { TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(2, 4, 5, 3), -1, 0.017)),
                       TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(3, 2, 4), 2, -0.125)) };
  assert_same_both_ways(flatten_head, "x, y", args, 2, 1e-5);
}

/* The Flatten rule alone (no product with transpose_b to make the pass
 * run): the scan that decides whether layout runs sees it. */
static ts_tensor *flatten_only(ts_call *c)
{
  ts_tensor *a = ts_reshape(ts_transpose(ts_arg(c, 0), TS_INTS(0, 3, 1, 2)), TS_SHAPE(2, 60));
  return ts_matmul(a, ramp(TS_F32, TS_SHAPE(60, 3), 0.5, -0.015625));
}

static void test_layout_flatten_only(void)
{
  ts_function *fn = ts_function_new("flatten_only", flatten_only, "x");
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(2, 4, 5, 3));
  ts_graph *g = optimize(trace(fn, &spec, 1), "layout,fold,dce", "layout: rewrote 1 node");
  g_assert_cmpint(count_op(g, TS_OP_TRANSPOSE), ==, 0);
  ts_graph_free(g);
  ts_function_free(fn);
  ts_value x = TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(2, 4, 5, 3), 1, -0.02));
  assert_same_both_ways(flatten_only, "x", &x, 1, 1e-5);
}

/* ---- what a pass finds only inside a branch ------------------------------------------ */

/* Passes are skipped when a scan says they could change nothing; the
 * scans must look inside If branches as the passes do. */
static ts_tensor *work_in_branch(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0)), &x) {
    ts_tensor *three = ts_add(ts_scalar_f32(1), ts_scalar_f32(2)); /* folds */
    x = ts_add(ts_mul(x, three), ts_mul(x, three));                /* one Mul merges */
  } TS_ELSE {
    x = ts_neg(x);
  } TS_END_IF;
  return x;
}

static void test_inside_branches(void)
{
  ts_function *fn = ts_function_new("work_in_branch", work_in_branch, "x");
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(3));
  const ts_graph *traced = trace(fn, &spec, 1);
  ts_graph *g = optimize(traced, "fold", "fold: folded 1 node into 1 constants");
  ts_graph_free(g);
  g = optimize(traced, "cse", "cse: removed 1 node");
  ts_graph_free(g);
  g = optimize(traced, "fold,cse", "cse: removed 1 node");
  ts_graph_free(g);
  /* nothing to do at all: the summary says so, and the graph is the same */
  g = optimize(traced, "fold,cse,dce", NULL);
  ts_graph *again = optimize(g, "fold,cse,dce", "fold: folded 0 nodes into 0 constants\ncse: removed 0 nodes\ndce: removed 0 nodes");
  g_assert_cmpint(ts_graph_n_nodes(again), ==, ts_graph_n_nodes(g));
  ts_graph_free(again);
  ts_graph_free(g);
  ts_value x = TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(3), 1, 1));
  assert_same_both_ways(work_in_branch, "x", &x, 1, 0);
  ts_function_free(fn);
}

/* ---- dce ------------------------------------------------------------------------- */

static ts_tensor *state;

static ts_tensor *side_effects(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *unused = ts_exp(ts_mul(x, x));
  ts_print("value", ts_neg(x));           /* Neg feeds a print: kept */
  ts_assign(state, ts_add(x, x));         /* Add feeds an assign: kept */
  (void)unused;
  return ts_sqrt(ts_abs(x));
}

static void test_dce(void)
{
  state = ts_variable_new(ts_zeros(TS_F32, TS_SHAPE(3)), "state");
  ts_function *fn = ts_function_new("side_effects", side_effects, "x");
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(3));
  const ts_graph *traced = trace(fn, &spec, 1);
  ts_graph *g = optimize(traced, "dce", "dce: removed 2 nodes");
  g_assert_cmpint(count_op(g, TS_OP_EXP), ==, 0);
  g_assert_cmpint(count_op(g, TS_OP_PRINT), ==, 1);
  g_assert_cmpint(count_op(g, TS_OP_NEG), ==, 1);
  g_assert_cmpint(count_op(g, TS_OP_ASSIGN_VARIABLE), ==, 1);
  g_assert_cmpint(count_op(g, TS_OP_ADD), ==, 1);
  g_assert_cmpint(ts_graph_n_nodes(g), ==, ts_graph_n_nodes(traced) - 2);
  ts_graph_free(g);
  /* without dce the unused nodes still never run (they are pruned) */
  g = optimize(traced, "none", NULL);
  g_assert_cmpint(count_op(g, TS_OP_EXP), ==, 0);
  ts_graph_free(g);
  ts_function_free(fn);
  ts_tensor_unref(state);
}

/* ---- fuse ------------------------------------------------------------------------ */

static ts_tensor *ew_chain(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *b = ts_arg(c, 1), *s = ts_arg(c, 2); /* [4,3], [3], [] */
  ts_tensor *y = ts_tanh(ts_relu(ts_add(ts_mul(x, b), s)));
  ts_tensor *z = ts_sigmoid(ts_div(b, ts_maximum(s, ts_abs(x))));
  return ts_sub(y, z);
}

static ts_tensor *outer_sum(ts_call *c)
{
  return ts_exp(ts_neg(ts_add(ts_arg(c, 0), ts_arg(c, 1)))); /* [5,1] + [1,700] */
}

static void test_fuse_elementwise(void)
{
  ts_function *fn = ts_function_new("ew_chain", ew_chain, "x, b, s");
  ts_value specs[] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(4, 3)), TS_SPEC_VALUE(TS_F32, TS_SHAPE(3)),
                       TS_SPEC_VALUE(TS_F32, TS_SCALAR_SHAPE) };
  ts_graph *g = optimize(trace(fn, specs, 3), "fuse", "fuse: fused 9 nodes into 1 kernels");
  const ts_node *f = find_op(g, TS_OP_FUSED_ELEMENTWISE);
  assert_origins(f, "Mul, Add, Relu, Tanh, Abs, Maximum, RealDiv, Sigmoid, Sub");
  g_assert_cmpint(ts_node_n_inputs(f), ==, 3);
  g_assert_true(ts_shape_equal(ts_node_output_shape(f, 0), TS_SHAPE(4, 3)));
  ts_graph_free(g);
  ts_value args[] = { TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(4, 3), -3, 0.5)),
                      TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(3), 0.5, 1)),
                      TS_TENSOR_VALUE(ts_scalar_f32(0.25f)) };
  assert_same_both_ways(ew_chain, "x, b, s", args, 3, 1e-6);
  ts_function_free(fn);

  /* broadcasting both ways, rows longer than a block */
  ts_value outer[] = { TS_TENSOR_VALUE(ramp(TS_F64, TS_SHAPE(5, 1), -1, 0.3)),
                       TS_TENSOR_VALUE(ramp(TS_F64, TS_SHAPE(1, 700), -2, 0.01)) };
  fn = ts_function_new("outer_sum", outer_sum, "a, b");
  g = optimize(trace(fn, outer, 2), "fuse", "fuse: fused 3 nodes into 1 kernels");
  g_assert_true(ts_shape_equal(ts_node_output_shape(find_op(g, TS_OP_FUSED_ELEMENTWISE), 0),
                               TS_SHAPE(5, 700)));
  ts_graph_free(g);
  assert_same_both_ways(outer_sum, "a, b", outer, 2, 1e-12);
  ts_function_free(fn);
}

/* Every fusible unary row after Round, in one chain (Rsqrt and Log1p of
 * values kept positive): fused into one FusedElementwise, the same bits as
 * the ops one by one. */
static ts_tensor *new_rows_chain(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *lo = ts_floor(x);
  ts_tensor *hi = ts_ceil(x);
  ts_tensor *sum = ts_add(lo, hi);
  ts_tensor *clipped = ts_relu6(ts_square(sum));
  ts_tensor *act = ts_softsign(ts_gelu(ts_selu(ts_elu(x))));
  ts_tensor *y = ts_mul(clipped, act);
  ts_tensor *r = ts_log1p(ts_rsqrt(ts_add(ts_square(y), x)));
  return ts_reciprocal(ts_expm1(r));
}

/* The fusible binary rows after Maximum and Minimum, x with zeros in it */
static ts_tensor *new_binary_chain(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0), *y = ts_arg(c, 1);
  ts_tensor *d = ts_squared_difference(x, y);
  ts_tensor *a = ts_atan2(d, ts_neg(y));
  ts_tensor *q = ts_div_no_nan(a, x);
  return ts_xlogy(q, ts_square(y)); /* y^2 0 at y 0: -inf where q is not 0 */
}

static void test_fuse_new_rows(void)
{
  ts_value specs[] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(5, 7)), TS_SPEC_VALUE(TS_F64, TS_SHAPE(5, 7)) };
  for (int k = 0; k < 2; k++) {
    ts_function *fn = ts_function_new("new_rows_chain", new_rows_chain, "x");
    ts_graph *g = optimize(trace(fn, &specs[k], 1), "fuse", "fuse: fused 16 nodes into 1 kernels");
    assert_origins(find_op(g, TS_OP_FUSED_ELEMENTWISE), "Floor, Ceil, Add, Square, Relu6, Elu, Selu, Gelu, "
                   "Softsign, Mul, Square, Add, Rsqrt, Log1p, Expm1, Reciprocal");
    ts_graph_free(g);
    ts_value arg = TS_TENSOR_VALUE(ramp(specs[k].spec.dtype, TS_SHAPE(5, 7), 0.05, 0.3));
    assert_same_both_ways(new_rows_chain, "x", &arg, 1, 0);
    ts_function_free(fn);

    ts_function *bin = ts_function_new("new_binary_chain", new_binary_chain, "x, y");
    ts_value pair[2] = { specs[k], TS_SPEC_VALUE(specs[k].spec.dtype, TS_SHAPE(7)) };
    g = optimize(trace(bin, pair, 2), "fuse", "fuse: fused 6 nodes into 1 kernels");
    assert_origins(find_op(g, TS_OP_FUSED_ELEMENTWISE), "SquaredDifference, Neg, Atan2, DivNoNan, Square, Xlogy");
    ts_graph_free(g);
    ts_tensor *x = ts_floor(ramp(specs[k].spec.dtype, TS_SHAPE(5, 7), -2, 0.15)); /* zeros among them */
    ts_value args[2] = { TS_TENSOR_VALUE(x), TS_TENSOR_VALUE(ramp(specs[k].spec.dtype, TS_SHAPE(7), -1.5, 0.5)) };
    assert_same_both_ways(new_binary_chain, "x, y", args, 2, 0);
    ts_function_free(bin);
  }
}

static ts_tensor *shared_middle(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *m = ts_exp(x);           /* two users: the chains end here */
  return ts_add(ts_neg(m), ts_abs(m));
}

static ts_tensor *int_chain(ts_call *c)
{
  return ts_neg(ts_add(ts_arg(c, 0), ts_arg(c, 0)));
}

static void test_fuse_keeps(void)
{
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(3));
  ts_function *fn = ts_function_new("shared_middle", shared_middle, "x");
  ts_graph *g = optimize(trace(fn, &spec, 1), "fuse", "fuse: fused 3 nodes into 1 kernels");
  g_assert_cmpint(count_op(g, TS_OP_EXP), ==, 1); /* computed once, not per user */
  ts_graph_free(g);
  ts_function_free(fn);
  ts_value ispec = TS_SPEC_VALUE(TS_I32, TS_SHAPE(3));
  fn = ts_function_new("int_chain", int_chain, "x");
  g = optimize(trace(fn, &ispec, 1), "fuse", "fuse: fused 0 nodes into 0 kernels");
  ts_graph_free(g);
  ts_function_free(fn);
}

/* A chain of chain_len ops, its second reading the first twice. */
static int chain_len;

static ts_tensor *long_chain(ts_call *c)
{
  ts_tensor *y = ts_neg(ts_arg(c, 0));
  y = ts_mul(y, y);
  for (int i = 2; i < chain_len; i++)
    y = ts_tanh(y);
  return y;
}

/* A fused kernel runs at most 32 ops: a longer chain stays as it is, and a
 * node read twice counts once. */
static void test_fuse_limit(void)
{
  static const struct {
    int len;
    const char *summary;
  } CASES[] = {
    { 32, "fuse: fused 32 nodes into 1 kernels" },
    { 33, "fuse: fused 0 nodes into 0 kernels" },
    { 5000, "fuse: fused 0 nodes into 0 kernels" },
  };
  ts_value spec = TS_SPEC_VALUE(TS_F32, TS_SHAPE(3));
  for (size_t k = 0; k < G_N_ELEMENTS(CASES); k++) {
    chain_len = CASES[k].len;
    ts_function *fn = ts_function_new("long_chain", long_chain, "x");
    ts_graph *g = optimize(trace(fn, &spec, 1), "fuse", CASES[k].summary);
    g_assert_cmpint(count_op(g, TS_OP_TANH), ==, CASES[k].len > 32 ? CASES[k].len - 2 : 0);
    ts_graph_free(g);
    ts_function_free(fn);
  }
}

static ts_tensor *dense_relu(ts_call *c)
{
  return ts_relu(ts_add(ts_matmul(ts_arg(c, 0), ts_arg(c, 1)), ts_arg(c, 2)));
}

static ts_tensor *dense_sigmoid_row_bias(ts_call *c)
{
  /* the bias first and as a [1, N] row; b transposed */
  return ts_sigmoid(ts_add(ts_arg(c, 2), ts_matmul_t(ts_arg(c, 0), ts_arg(c, 1), false, true)));
}

static ts_tensor *matmul_used_twice(ts_call *c)
{
  ts_tensor *m = ts_matmul(ts_arg(c, 0), ts_arg(c, 1));
  return ts_add(ts_relu(ts_add(m, ts_arg(c, 2))), m);
}

/* a scalar is not a bias along the columns (the Add then Relu fuse instead) */
static ts_tensor *matmul_plus_scalar(ts_call *c)
{
  return ts_relu(ts_add(ts_matmul(ts_arg(c, 0), ts_arg(c, 1)), ts_scalar_f32(0.5f)));
}

static void test_fuse_matmul(void)
{
  ts_value args[] = { TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(5, 7), -1, 0.07)),
                      TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(7, 6), 0.5, -0.03)),
                      TS_TENSOR_VALUE(ramp(TS_F32, TS_SHAPE(6), -0.5, 0.2)) };
  ts_function *fn = ts_function_new("dense_relu", dense_relu, "x, w, b");
  ts_graph *g = optimize(trace(fn, args, 3), "fuse", "fuse: fused 3 nodes into 1 kernels");
  g_assert_cmpint(ts_graph_n_nodes(g), ==, 4);
  assert_origins(find_op(g, TS_OP_FUSED_MATMUL), "MatMul, Add, Relu");
  ts_graph_free(g);
  assert_same_both_ways(dense_relu, "x, w, b", args, 3, 1e-6);
  ts_function_free(fn);

  ts_value targs[] = { TS_TENSOR_VALUE(ramp(TS_F64, TS_SHAPE(5, 7), -1, 0.07)),
                       TS_TENSOR_VALUE(ramp(TS_F64, TS_SHAPE(6, 7), 0.5, -0.03)),
                       TS_TENSOR_VALUE(ramp(TS_F64, TS_SHAPE(1, 6), -0.5, 0.2)) };
  fn = ts_function_new("dense_sigmoid_row_bias", dense_sigmoid_row_bias, "x, w, b");
  g = optimize(trace(fn, targs, 3), "fuse", "fuse: fused 3 nodes into 1 kernels");
  assert_origins(find_op(g, TS_OP_FUSED_MATMUL), "MatMul, Add, Sigmoid");
  ts_graph_free(g);
  assert_same_both_ways(dense_sigmoid_row_bias, "x, w, b", targs, 3, 1e-12);
  ts_function_free(fn);

  fn = ts_function_new("matmul_plus_scalar", matmul_plus_scalar, "x, w");
  g = optimize(trace(fn, args, 2), "fuse", NULL);
  g_assert_cmpint(count_op(g, TS_OP_FUSED_MATMUL), ==, 0);
  g_assert_cmpint(count_op(g, TS_OP_FUSED_ELEMENTWISE), ==, 1);
  ts_graph_free(g);
  assert_same_both_ways(matmul_plus_scalar, "x, w", args, 2, 1e-6);
  ts_function_free(fn);

  fn = ts_function_new("matmul_used_twice", matmul_used_twice, "x, w, b");
  g = optimize(trace(fn, args, 3), "fuse", NULL);
  g_assert_cmpint(count_op(g, TS_OP_MATMUL), ==, 1);
  g_assert_cmpint(count_op(g, TS_OP_FUSED_MATMUL), ==, 0);
  ts_graph_free(g);
  assert_same_both_ways(matmul_used_twice, "x, w, b", args, 3, 1e-6);
  ts_function_free(fn);
}

/* ---- ReadVariableOp: a view, copy on write ------------------------------------------ */

static void test_read_is_a_view(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *v = ts_variable_new(ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 1, 2, 3 }), "v");
  ts_tensor *r1 = ts_read(v), *r2 = ts_read(v);
  assert_no_error();
  const void *data = ts_tensor_data(v);
  g_assert_true(ts_tensor_data(r1) == data); /* no copy */
  g_assert_true(ts_tensor_data(r2) == data);
  ts_assign(v, ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 7, 8, 9 }));
  g_assert_true(ts_tensor_data(v) != data); /* moved: r1 and r2 still hold the old value */
  g_assert_cmpfloat(ts_tensor_get_f64(r1, 0), ==, 1);
  g_assert_cmpfloat(ts_tensor_get_f64(r2, 2), ==, 3);
  g_assert_cmpfloat(ts_tensor_get_f64(v, 0), ==, 7);
  ts_assign_add(v, ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 1, 1, 1 }));
  g_assert_cmpfloat(ts_tensor_get_f64(v, 2), ==, 10);
  g_assert_cmpfloat(ts_tensor_get_f64(r1, 2), ==, 3);
  ts_scope_end(scope);

  /* with no read held, an assign writes in place */
  const void *now = ts_tensor_data(v);
  scope = ts_scope_begin();
  ts_assign(v, ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 4, 5, 6 }));
  ts_scope_end(scope);
  g_assert_true(ts_tensor_data(v) == now);
  scope = ts_scope_begin();
  ts_assign_sub(v, ts_read(v)); /* a read of itself */
  ts_scope_end(scope);
  g_assert_cmpfloat(ts_tensor_get_f64(v, 1), ==, 0);
  ts_tensor_unref(v);
}

static ts_tensor *weight;

static ts_tensor *read_then_assign(ts_call *c)
{
  ts_tensor *before = ts_read(weight);
  ts_assign_add(weight, ts_arg(c, 0));
  return ts_sub(ts_read(weight), before);
}

/* In a graph: the read before the assign keeps the old value. */
static void test_read_in_graph(void)
{
  weight = ts_variable_new(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 }), "weight");
  ts_function *fn = ts_function_new("read_then_assign", read_then_assign, "d");
  for (int call = 0; call < 3; call++) {
    ts_scope *scope = ts_scope_begin();
    ts_value d = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 0.5f, -1 }));
    ts_tensor *r = ts_function_call(fn, &d, 1);
    assert_no_error();
    g_assert_cmpfloat(ts_tensor_get_f64(r, 0), ==, 0.5);
    g_assert_cmpfloat(ts_tensor_get_f64(r, 1), ==, -1);
    ts_scope_end(scope);
  }
  g_assert_cmpfloat(ts_tensor_get_f64(weight, 0), ==, 2.5);
  ts_function_free(fn);
  ts_tensor_unref(weight);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  serial_check_install();
  g_test_add_func("/passes/choose", test_choose);
  g_test_add_func("/passes/concrete-summary", test_concrete_summary);
  g_test_add_func("/passes/cse/merges", test_cse_merges);
  g_test_add_func("/passes/cse/keeps", test_cse_keeps);
  g_test_add_func("/passes/simplify/units", test_simplify_units);
  g_test_add_func("/passes/simplify/keeps", test_simplify_keeps);
  g_test_add_func("/passes/simplify/layout", test_simplify_layout);
  g_test_add_func("/passes/simplify/pow", test_simplify_pow);
  g_test_add_func("/passes/simplify/identity", test_simplify_identity);
  g_test_add_func("/passes/layout/cancels", test_layout_cancels);
  g_test_add_func("/passes/layout/composes", test_layout_composes);
  g_test_add_func("/passes/layout/stays", test_layout_stays);
  g_test_add_func("/passes/layout/weights", test_layout_weights);
  g_test_add_func("/passes/layout/flatten", test_layout_flatten);
  g_test_add_func("/passes/layout/flatten-only", test_layout_flatten_only);
  g_test_add_func("/passes/inside-branches", test_inside_branches);
  g_test_add_func("/passes/dce", test_dce);
  g_test_add_func("/passes/fuse/elementwise", test_fuse_elementwise);
  g_test_add_func("/passes/fuse/new-rows", test_fuse_new_rows);
  g_test_add_func("/passes/fuse/keeps", test_fuse_keeps);
  g_test_add_func("/passes/fuse/limit", test_fuse_limit);
  g_test_add_func("/passes/fuse/matmul", test_fuse_matmul);
  g_test_add_func("/passes/read-variable/view", test_read_is_a_view);
  g_test_add_func("/passes/read-variable/graph", test_read_in_graph);
  ts_scope *scope = ts_scope_begin();
  int status = g_test_run();
  ts_scope_end(scope);
  return status;
}
