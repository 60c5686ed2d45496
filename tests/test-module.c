/* test-module.c — modules, calls, arguments and argument specs. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "test-quiet.h"
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------------- */

/* Takes the pending error, checks its code and that its message holds each
 * of the NULL-terminated fragments, frees it. */
static void expect_error(ts_error_code code, ...)
{
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_nonnull(e->message);
  if (e->code != code)
    g_error("expected %s, got %s: %s", ts_error_code_name(code), ts_error_code_name(e->code),
            e->message);
  va_list ap;
  va_start(ap, code);
  for (const char *s; (s = va_arg(ap, const char *));)
    if (!strstr(e->message, s))
      g_error("error message '%s' lacks '%s'", e->message, s);
  va_end(ap);
  ts_error_free(e);
}

static void assert_tensor_str(ts_tensor *t, const char *expected)
{
  assert_no_error();
  g_assert_nonnull(t);
  char *s = ts_tensor_to_string(t);
  g_assert_cmpstr(s, ==, expected);
  free(s);
}

static ts_value tensor_value(ts_tensor *t)
{
  return (ts_value){ .kind = TS_VALUE_TENSOR, .tensor = t };
}

static ts_value int_value(int64_t i)
{
  return (ts_value){ .kind = TS_VALUE_INT, .i = i };
}

/* Parses spec, which must succeed. */
static ts_value parse(const char *spec)
{
  ts_value v;
  if (!ts_value_parse(spec, &v))
    g_error("'%s' did not parse: %s", spec, ts_error_peek()->message);
  return v;
}

static ts_tensor *parse_tensor(const char *spec)
{
  ts_value v = parse(spec);
  g_assert_cmpint(v.kind, ==, TS_VALUE_TENSOR);
  return v.tensor;
}

static ts_module *open_seeds(void)
{
  ts_module *m = ts_module_open("seeds");
  assert_no_error();
  g_assert_nonnull(m);
  return m;
}

static char *test_module_path(const char *name)
{
  return g_test_build_filename(G_TEST_BUILT, "modules", name, NULL);
}

/* Calls module function `name` on argument specs. */
static ts_tensor *call_specs(ts_module *m, const char *name, const char *const *specs, int n)
{
  ts_function *fn = ts_module_lookup(m, name);
  g_assert_nonnull(fn);
  ts_value args[8];
  g_assert_cmpint(n, <=, 8);
  for (int i = 0; i < n; i++)
    args[i] = parse(specs[i]);
  ts_tensor *out = ts_function_call_eager(fn, args, n);
  for (int i = 0; i < n; i++)
    ts_value_clear(&args[i]);
  return out;
}

#define CALL(m, name, ...) \
  call_specs((m), (name), (const char *const[]){ __VA_ARGS__ }, \
             (int)(sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *)))

/* ---- seeds: loading and listing ---------------------------------------------- */

static void test_seeds_list(void)
{
  ts_module *m = open_seeds();
  g_assert_cmpstr(ts_module_title(m), ==, "seeds");
  g_assert_cmpstr(ts_module_path(m), ==, g_getenv("TRACESCOPE_SEEDS"));
  static const char *const names[] = {
    "simple_nn_layer", "linear_layer", "deep_net", "function_to_get_faster", "get_MSE",
    "square_if_positive_vectorized", "power", "dense_chain", "conv_layer", "outer_function",
    "square_if_positive", "sum_even", "fizzbuzz", "my_function", "simple_relu", "my_relu",
    "a_function_with_python_side_effect", "shape_retrace", "poly_func", "find_next_odd",
    "side_effect", "unused_return", "custom_model", "square_if_positive_naive",
    "sequential_model", "dense_128_model", "lstm_fn", "conv_fn", "train", "train_rate",
    "train_where_log",
  };
  g_assert_cmpint(ts_module_n_functions(m), ==, G_N_ELEMENTS(names));
  for (int i = 0; i < (int)G_N_ELEMENTS(names); i++) {
    ts_function *fn = ts_module_function(m, i);
    g_assert_cmpstr(ts_function_name(fn), ==, names[i]);
    g_assert_true(ts_module_lookup(m, names[i]) == fn);
  }
  g_assert_null(ts_module_lookup(m, "no_such_function"));

  ts_function *fn = ts_module_lookup(m, "simple_nn_layer");
  g_assert_cmpint(ts_function_n_params(fn), ==, 2);
  g_assert_cmpstr(ts_function_param_name(fn, 0), ==, "x");
  g_assert_cmpstr(ts_function_param_name(fn, 1), ==, "y");
  fn = ts_module_lookup(m, "get_MSE");
  g_assert_cmpint(ts_function_n_params(fn), ==, 2);
  g_assert_cmpstr(ts_function_param_name(fn, 0), ==, "y_true");
  g_assert_cmpstr(ts_function_param_name(fn, 1), ==, "y_pred");
  fn = ts_module_lookup(m, "function_to_get_faster");
  g_assert_cmpint(ts_function_n_params(fn), ==, 3);
  g_assert_cmpstr(ts_function_param_name(fn, 2), ==, "b");
  ts_module_free(m);
}

/* ---- seeds: the guides' documented results --------------------------------- */

static void test_seeds_deep_net(void)
{
  ts_module *m = open_seeds();
  ts_scope *s = ts_scope_begin();
  ts_function *fn = ts_module_lookup(m, "deep_net");
  int32_t data[] = { 1, 2, 3 };
  ts_value arg = tensor_value(ts_constant(TS_I32, TS_SHAPE(3), data));
  ts_tensor *out = ts_function_call_eager(fn, &arg, 1);
  assert_tensor_str(out, "Tensor([3 5 7], shape=(3,), dtype=int32)");
  /* the result lives in the caller's scope, the function's intermediates do not */
  g_assert_cmpint(ts_scope_n_tensors(), ==, 2);
  /* negative inputs go through relu */
  assert_tensor_str(CALL(m, "deep_net", "i32[3]=-3,-1,0"),
                    "Tensor([0 0 1], shape=(3,), dtype=int32)");
  assert_tensor_str(CALL(m, "linear_layer", "i32[3]=-3,-1,0"),
                    "Tensor([-5 -1  1], shape=(3,), dtype=int32)");
  assert_tensor_str(CALL(m, "linear_layer", "f32[2]=0.5,-1"),
                    "Tensor([ 2. -1.], shape=(2,), dtype=float32)");
  ts_scope_end(s);
  ts_module_free(m);
}

static void test_seeds_programs(void)
{
  ts_module *m = open_seeds();
  ts_scope *s = ts_scope_begin();
  /* relu([[1,-2],[3,4]] @ [[1,0],[0,-1]]) = relu([[1,2],[3,-4]]) */
  assert_tensor_str(CALL(m, "simple_nn_layer", "f32[2,2]=1,-2,3,4", "f32[2,2]=1,0,0,-1"),
                    "Tensor(\n[[1. 2.]\n [3. 0.]], shape=(2, 2), dtype=float32)");
  /* x=[[1,2]], y=[[2],[3]], b=4 -> [[12.]]; b as a host int and as a tensor */
  assert_tensor_str(CALL(m, "function_to_get_faster", "f32[1,2]=1,2", "f32[2,1]=2,3", "4"),
                    "Tensor([[12.]], shape=(1, 1), dtype=float32)");
  assert_tensor_str(CALL(m, "function_to_get_faster", "f32[1,2]=1,2", "f32[2,1]=2,3", "f32[]=4"),
                    "Tensor([[12.]], shape=(1, 1), dtype=float32)");
  /* ((1-0)^2 + (4-3)^2 + (3-8)^2 + (1-0)^2 + (3-6)^2) / 5 = 37 / 5 -> 7.  Its
   * "Calculating MSE!" must not reach stdout, which carries the TAP stream. */
  int quiet = test_quiet_begin();
  ts_tensor *mse = CALL(m, "get_MSE", "i32[5]=1,4,3,1,3", "i32[5]=0,3,8,0,6");
  test_quiet_end(quiet);
  assert_tensor_str(mse, "Tensor(7, shape=(), dtype=int32)");
  assert_tensor_str(CALL(m, "square_if_positive_vectorized", "i32[10]:range(-5)"),
                    "Tensor([-5 -4 -3 -2 -1  0  1  4  9 16], shape=(10,), dtype=int32)");
  ts_scope_end(s);
  ts_module_free(m);
}

static void test_seeds_power(void)
{
  ts_module *m = open_seeds();
  ts_scope *s = ts_scope_begin();
  /* ones(10,10)^n = 10^(n-1) * ones; ^0 is the identity */
  ts_tensor *p0 = CALL(m, "power", "i32[10,10]:ones", "0");
  ts_tensor *p3 = CALL(m, "power", "i32[10,10]:ones", "3");
  ts_tensor *p2f = CALL(m, "power", "f32[10,10]:ones", "2");
  assert_no_error();
  g_assert_cmpint(ts_tensor_dtype(p3), ==, TS_I32);
  g_assert_cmpint(ts_tensor_dtype(p2f), ==, TS_F32);
  for (int64_t i = 0; i < 100; i++) {
    g_assert_cmpint(ts_tensor_get_i64(p0, i), ==, i % 11 == 0);
    g_assert_cmpint(ts_tensor_get_i64(p3, i), ==, 100);
    g_assert_cmpfloat(ts_tensor_get_f64(p2f, i), ==, 10.0);
  }
  /* n must be a host int, and not negative */
  g_assert_null(CALL(m, "power", "i32[10,10]:ones", "-1"));
  expect_error(TS_ERR_INVALID_ARGUMENT, "power: argument 1 must be >= 0, got -1", NULL);
  g_assert_null(CALL(m, "power", "i32[10,10]:ones", "two"));
  expect_error(TS_ERR_INVALID_ARGUMENT, "power: argument 1 (n) must be an int, got a string", NULL);
  g_assert_null(CALL(m, "power", "i32[10,10]:ones", "i32[]=2"));
  expect_error(TS_ERR_INVALID_ARGUMENT, "power: argument 1 (n) must be an int, got a tensor i32[]", NULL);
  /* what was given is said, as the call's signature writes it */
  g_assert_null(CALL(m, "power", "i32[10,10]:ones", "2.5"));
  expect_error(TS_ERR_INVALID_ARGUMENT, "power: argument 1 (n) must be an int, got a float 2.5", NULL);
  g_assert_null(CALL(m, "power", "i32[10,10]:ones", "1e-05"));
  expect_error(TS_ERR_INVALID_ARGUMENT, "got a float 1e-05", NULL);
  g_assert_null(CALL(m, "power", "i32[10,10]:ones", "f32[2,3]:ones"));
  expect_error(TS_ERR_INVALID_ARGUMENT, "got a tensor f32[2,3]", NULL);
  /* not 10x10: the MatMul error comes through */
  g_assert_null(CALL(m, "power", "i32[3,3]:ones", "1"));
  expect_error(TS_ERR_SHAPE, "MatMul", NULL);
  ts_scope_end(s);
  ts_module_free(m);
}

static void test_seeds_dense_conv(void)
{
  ts_module *m = open_seeds();
  ts_scope *s = ts_scope_begin();
  ts_tensor *a = CALL(m, "dense_chain", "f32[2,4,4]:uniform", "3");
  ts_tensor *b = CALL(m, "dense_chain", "f32[2,4,4]:uniform", "3");
  assert_no_error();
  g_assert_true(ts_shape_equal(ts_tensor_shape(a), TS_SHAPE(2, 64)));
  bool any_positive = false;
  for (int64_t i = 0; i < ts_tensor_size(a); i++) {
    g_assert_cmpfloat(ts_tensor_get_f64(a, i), >=, 0); /* relu */
    g_assert_cmpfloat(ts_tensor_get_f64(a, i), ==, ts_tensor_get_f64(b, i)); /* seeded */
    any_positive |= ts_tensor_get_f64(a, i) > 0;
  }
  g_assert_true(any_positive);
  /* no layers: just the flatten */
  assert_tensor_str(CALL(m, "dense_chain", "f32[2,1,2]=1,2,3,4", "0"),
                    "Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)");

  ts_tensor *c = CALL(m, "conv_layer", "f32[1,5,6,3]:uniform");
  ts_tensor *z = CALL(m, "conv_layer", "f32[1,5,6,3]:zeros");
  assert_no_error();
  g_assert_true(ts_shape_equal(ts_tensor_shape(c), TS_SHAPE(1, 3, 4, 100)));
  bool any_nonzero = false;
  for (int64_t i = 0; i < ts_tensor_size(z); i++) {
    g_assert_cmpfloat(ts_tensor_get_f64(z, i), ==, 0); /* zero bias */
    any_nonzero |= ts_tensor_get_f64(c, i) != 0;
  }
  g_assert_true(any_nonzero);
  g_assert_null(CALL(m, "conv_layer", "f32[5,6]:zeros"));
  expect_error(TS_ERR_SHAPE, "Conv2D", NULL);
  ts_scope_end(s);
  ts_module_free(m);
}

static void test_seeds_errors(void)
{
  ts_module *m = open_seeds();
  ts_scope *s = ts_scope_begin();
  /* a missing argument names the function, the index and the parameter */
  g_assert_null(CALL(m, "simple_nn_layer", "f32[2,2]:ones"));
  expect_error(TS_ERR_INVALID_ARGUMENT, "simple_nn_layer: missing argument 1 (y)", NULL);
  /* an op error inside is kept, not replaced */
  g_assert_null(CALL(m, "simple_nn_layer", "f32[2,3]:ones", "f32[2,3]:ones"));
  expect_error(TS_ERR_SHAPE, "MatMul", "f32[2,3]", NULL);
  g_assert_null(CALL(m, "deep_net", "a"));
  expect_error(TS_ERR_INVALID_ARGUMENT, "deep_net: argument 0 (x) must be a tensor or a number, got a string", NULL);
  ts_scope_end(s);
  ts_module_free(m);
}

/* ---- the tiny test module: calls and arguments ------------------------------- */

static ts_module *open_tiny(void)
{
  char *path = test_module_path("tiny.so");
  ts_module *m = ts_module_open(path);
  assert_no_error();
  g_assert_nonnull(m);
  g_assert_cmpstr(ts_module_path(m), ==, path);
  g_free(path);
  g_assert_cmpstr(ts_module_title(m), ==, "tiny test module");
  return m;
}

static void test_call_args(void)
{
  ts_module *m = open_tiny();
  ts_scope *s = ts_scope_begin();
  ts_function *identity = ts_module_lookup(m, "identity");

  /* a tensor argument passes through, and stays valid in the caller's scope */
  ts_tensor *x = ts_scalar_i32(5);
  ts_value v = tensor_value(x);
  g_assert_true(ts_function_call_eager(identity, &v, 1) == x);

  /* host values become scalar tensors as TensorFlow converts Python values */
  assert_tensor_str(ts_function_call_eager(identity, &(ts_value){ .kind = TS_VALUE_INT, .i = 7 }, 1),
                    "Tensor(7, shape=(), dtype=int32)");
  assert_tensor_str(
    ts_function_call_eager(identity, &(ts_value){ .kind = TS_VALUE_INT, .i = 5000000000 }, 1),
    "Tensor(5000000000, shape=(), dtype=int64)");
  assert_tensor_str(
    ts_function_call_eager(identity, &(ts_value){ .kind = TS_VALUE_FLOAT, .f = -2.5 }, 1),
    "Tensor(-2.5, shape=(), dtype=float32)");
  assert_tensor_str(
    ts_function_call_eager(identity, &(ts_value){ .kind = TS_VALUE_BOOL, .b = true }, 1),
    "Tensor(True, shape=(), dtype=bool)");

  /* host lists become tensors like tf.constant([...]) */
  static const struct {
    const char *spec, *expected;
  } lists[] = {
    { "[1,-1]", "Tensor([ 1 -1], shape=(2,), dtype=int32)" },
    { "[[1,2],[3,4]]", "Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)" },
    { "[1,2.5]", "Tensor([1.  2.5], shape=(2,), dtype=float32)" },
    { "[5000000000,1]", "Tensor([5000000000          1], shape=(2,), dtype=int64)" },
    { "[true,false]", "Tensor([ True False], shape=(2,), dtype=bool)" },
    { "[]", "Tensor([], shape=(0,), dtype=float32)" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(lists); i++) {
    ts_value list = parse(lists[i].spec);
    assert_tensor_str(ts_function_call_eager(identity, &list, 1), lists[i].expected);
    ts_value_clear(&list);
  }
  static const char *const bad_lists[] = { "[[1,2],[3]]", "[1,[2]]", "[[1],2]", "[1,true]", "[1,a]" };
  for (size_t i = 0; i < G_N_ELEMENTS(bad_lists); i++) {
    ts_value list = parse(bad_lists[i]);
    g_assert_null(ts_function_call_eager(identity, &list, 1));
    expect_error(TS_ERR_INVALID_ARGUMENT,
                 "identity: argument 0 (x) must be a rectangular list of numbers or of bools, got a list",
                 NULL);
    ts_value_clear(&list);
  }

  /* host float (an int does as well), host string and int */
  ts_value scale_args[] = { parse("f32[2]=1,2"), parse("1.5") };
  assert_tensor_str(ts_function_call_eager(ts_module_lookup(m, "scale"), scale_args, 2),
                    "Tensor([1.5 3. ], shape=(2,), dtype=float32)");
  scale_args[1] = int_value(2);
  assert_tensor_str(ts_function_call_eager(ts_module_lookup(m, "scale"), scale_args, 2),
                    "Tensor([2. 4.], shape=(2,), dtype=float32)");
  scale_args[1] = parse("f32[]=2");
  g_assert_null(ts_function_call_eager(ts_module_lookup(m, "scale"), scale_args, 2));
  expect_error(TS_ERR_INVALID_ARGUMENT, "scale: argument 1 (k) must be a float, got a tensor f32[]", NULL);
  scale_args[1] = parse("true");
  assert_tensor_str(ts_function_call_eager(ts_module_lookup(m, "scale"), scale_args, 2),
                    "Tensor([1. 2.], shape=(2,), dtype=float32)"); /* True is 1.0, as in Python */

  ts_value fill_args[] = { parse("ones"), parse("3") };
  assert_tensor_str(ts_function_call_eager(ts_module_lookup(m, "fill_named"), fill_args, 2),
                    "Tensor([1 1 1], shape=(3,), dtype=int32)");
  ts_value swapped[] = { fill_args[1], fill_args[0] };
  g_assert_null(ts_function_call_eager(ts_module_lookup(m, "fill_named"), swapped, 2));
  expect_error(TS_ERR_INVALID_ARGUMENT, "fill_named: argument 0 (what) must be a string, got an int",
               NULL);
  g_assert_null(ts_function_call_eager(ts_module_lookup(m, "fill_named"), fill_args, 1));
  expect_error(TS_ERR_INVALID_ARGUMENT, "fill_named: missing argument 1 (n)", NULL);
  ts_value_clear(&fill_args[0]);

  /* a NONE value counts as missing; a NULL tensor is refused */
  ts_value none = { .kind = TS_VALUE_NONE };
  g_assert_null(ts_function_call_eager(identity, &none, 1));
  expect_error(TS_ERR_INVALID_ARGUMENT, "identity: missing argument 0 (x)", NULL);
  ts_value null_tensor = tensor_value(NULL);
  g_assert_null(ts_function_call_eager(identity, &null_tensor, 1));
  expect_error(TS_ERR_INVALID_ARGUMENT, "identity: argument 0 is a NULL tensor", NULL);
  g_assert_null(ts_function_call_eager(identity, NULL, 0));
  expect_error(TS_ERR_INVALID_ARGUMENT, "identity: missing argument 0 (x)", NULL);

  /* unnamed parameters */
  ts_function *n_args = ts_module_lookup(m, "n_args");
  g_assert_cmpint(ts_function_n_params(n_args), ==, 0);
  ts_value three[] = { int_value(1), int_value(2), int_value(3) };
  assert_tensor_str(ts_function_call_eager(n_args, three, 3), "Tensor(3, shape=(), dtype=int32)");

  ts_scope_end(s);
  ts_module_free(m);
}

static void test_call_failures(void)
{
  ts_module *m = open_tiny();
  ts_scope *s = ts_scope_begin();
  /* NULL without an error is reported as such */
  g_assert_null(ts_function_call_eager(ts_module_lookup(m, "nothing"), NULL, 0));
  expect_error(TS_ERR_INVALID_ARGUMENT, "nothing: returned NULL without an error", "ts_none", NULL);
  /* an op's error is kept, with its source location in the module */
  ts_value x = parse("f32[2,3]:zeros");
  g_assert_null(ts_function_call_eager(ts_module_lookup(m, "self_matmul"), &x, 1));
  expect_error(TS_ERR_SHAPE, "tiny.c:", "MatMul", NULL);
  /* an error pending before the call fails the call and stays the first one */
  ts_error_set(TS_ERR_IO, (ts_loc){ 0 }, NULL, "earlier failure");
  g_assert_null(ts_function_call_eager(ts_module_lookup(m, "identity"), &x, 1));
  expect_error(TS_ERR_IO, "earlier failure", NULL);
  g_assert_cmpint(ts_scope_n_tensors(), ==, 1);
  ts_scope_end(s);
  ts_module_free(m);
}

/* ---- modules refused ----------------------------------------------------------- */

static void test_refused_modules(void)
{
  char *path = test_module_path("wrong-abi.so");
  g_assert_null(ts_module_open(path));
  g_autofree char *wrong = g_strdup_printf("was built for Tracescope ABI %d, this is ABI %d",
                                            TS_ABI_VERSION + 1, TS_ABI_VERSION);
  expect_error(TS_ERR_FORMAT, path, wrong, NULL);
  g_free(path);

  path = test_module_path("no-symbol.so");
  g_assert_null(ts_module_open(path));
  expect_error(TS_ERR_FORMAT, path, "is not a Tracescope module: symbol tracescope_module not found",
               "with TS_MODULE(...) from tracescope.h", NULL);
  g_free(path);

  /* garbage written to a .so */
  char *dir = g_dir_make_tmp("ts-module-XXXXXX", NULL);
  g_assert_nonnull(dir);
  path = g_build_filename(dir, "corrupt.so", NULL);
  g_assert_true(g_file_set_contents(path, "this is not an ELF file\n", -1, NULL));
  g_assert_null(ts_module_open(path));
  expect_error(TS_ERR_IO, "cannot open module '", path, NULL);
  g_assert_cmpint(g_unlink(path), ==, 0);
  g_free(path);

  path = g_build_filename(dir, "missing.so", NULL);
  g_assert_null(ts_module_open(path));
  expect_error(TS_ERR_NOT_FOUND, "cannot open module '", path, "': no such file", NULL);
  g_free(path);
  g_assert_cmpint(g_rmdir(dir), ==, 0);
  g_free(dir);

  /* a relative name means a file here, not a library on the search path */
  g_assert_null(ts_module_open("libglib-2.0.so.0"));
  expect_error(TS_ERR_NOT_FOUND, "cannot open module 'libglib-2.0.so.0': no such file", NULL);
}

/* A module that will not open says what to do: the file meant, or how
 * to build a shared object from the C source given in its place. */
static void test_open_says_what_to_do(void)
{
  char *dir = g_dir_make_tmp("ts-module-XXXXXX", NULL);
  g_assert_nonnull(dir);
  g_autofree char *source = g_build_filename(dir, "mine.c", NULL);
  g_autofree char *built = g_build_filename(dir, "mine.so", NULL);
  g_autofree char *stem = g_build_filename(dir, "mine", NULL);
  g_assert_true(g_file_set_contents(source, "#include <tracescope.h>\n", -1, NULL));
  g_assert_true(g_file_set_contents(built, "", -1, NULL));

  /* C source: the command that builds it */
  g_assert_null(ts_module_open(source));
  g_autofree char *cc = g_strdup_printf("not a shared object (build a shared object: cc -shared -fPIC %s "
                                        "-o %s $(pkg-config --cflags --libs tracescope))", source, built);
  expect_error(TS_ERR_IO, cc, NULL);
  /* an executable: the same advice */
  g_assert_null(ts_module_open("/proc/self/exe"));
  expect_error(TS_ERR_IO, "executable (build a shared object: cc -shared -fPIC", NULL);
  /* the name without .so, where NAME.so is there */
  g_assert_null(ts_module_open(stem));
  g_autofree char *meant = g_strdup_printf("no such file (did you mean '%s'?)", built);
  expect_error(TS_ERR_NOT_FOUND, meant, NULL);
  /* a near miss of the bundled examples' name */
  g_assert_null(ts_module_open("seed"));
  expect_error(TS_ERR_NOT_FOUND, "cannot open module 'seed': no such file (did you mean 'seeds', the bundled examples?)", NULL);
  g_assert_null(ts_module_open("./seeds"));
  expect_error(TS_ERR_NOT_FOUND, "(did you mean 'seeds', the bundled examples?)", NULL);
  /* nothing near: what a module is */
  g_assert_null(ts_module_open("no_such_model.so"));
  expect_error(TS_ERR_NOT_FOUND, "no such file (a module is the path of a .so built against libtracescope, "
                                 "or seeds for the bundled examples)", NULL);
  /* seeds where TRACESCOPE_SEEDS names no file */
  g_autofree char *seeds = g_strdup(g_getenv("TRACESCOPE_SEEDS"));
  g_setenv("TRACESCOPE_SEEDS", stem, TRUE);
  g_assert_null(ts_module_open("seeds"));
  expect_error(TS_ERR_NOT_FOUND, "(TRACESCOPE_SEEDS names it: set it to the bundled examples' seeds.so, or unset it)", NULL);
  if (seeds)
    g_setenv("TRACESCOPE_SEEDS", seeds, TRUE);
  else
    g_unsetenv("TRACESCOPE_SEEDS");

  g_assert_cmpint(g_unlink(source), ==, 0);
  g_assert_cmpint(g_unlink(built), ==, 0);
  g_assert_cmpint(g_rmdir(dir), ==, 0);
  g_free(dir);
}

static ts_tensor *static_fn(ts_call *c)
{
  return ts_arg(c, 0);
}

static void test_static_modules(void)
{
  /* automatic: a compound literal in a function is not a constant */
  const ts_export good[] = { { static_fn, "first,a", NULL },
                             { static_fn, "  second ,  b , c ", TS_EXAMPLE("1", "f32[2]:ones") } };
  ts_module *m = ts_module_new_static(&(ts_module_info){ TS_ABI_VERSION, NULL, good, 2 }, "here");
  assert_no_error();
  g_assert_cmpstr(ts_module_path(m), ==, "here");
  g_assert_cmpstr(ts_module_title(m), ==, "");
  ts_function *fn = ts_module_lookup(m, "second");
  g_assert_cmpint(ts_function_n_params(fn), ==, 2);
  g_assert_cmpstr(ts_function_param_name(fn, 1), ==, "c");
  g_assert_null(ts_module_examples(m, 0));
  g_assert_cmpstrv(ts_module_examples(m, 1), ((const char *const[]){ "1", "f32[2]:ones", NULL }));
  g_assert_null(ts_module_examples(m, 2));
  ts_module_free(m);

  const struct {
    ts_export e[2];
    int n;
    const char *error;
  } bad[] = {
    { { { NULL, "f, x", NULL } }, 1, "'here': export 0 has a malformed spec 'f, x'" },
    { { { static_fn, NULL, NULL } }, 1, "'here': export 0 has a malformed spec '(null)'" },
    { { { static_fn, "f,", NULL } }, 1, "export 0 has a malformed spec 'f,'" },
    { { { static_fn, "", NULL } }, 1, "export 0 has a malformed spec ''" },
    { { { static_fn, "f, x y", NULL } }, 1, "export 0 has a malformed spec 'f, x y'" },
    { { { static_fn, "f", NULL }, { static_fn, "f, x", NULL } }, 2, "'here' exports function 'f' twice" },
    { { { static_fn, "f, x", TS_EXAMPLE("1", "2") } }, 1, "'here': the examples of 'f' give 2 arguments; it takes 1" },
    { { { static_fn, "f, x, y", TS_EXAMPLE("1") } }, 1, "'here': the examples of 'f' give 1 argument; it takes 2" },
    { { { static_fn, "f, x", TS_EXAMPLE("f32[2,x]:ones") } }, 1,
      "'here': example argument 0 of 'f': argument 'f32[2,x]:ones': malformed shape [2,x]: 'x' is not a dimension" },
    { { { 0 } }, -1, "'here' has a malformed export table (-1 exports)" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    ts_module_info info = { TS_ABI_VERSION, "bad", bad[i].e, bad[i].n };
    g_assert_null(ts_module_new_static(&info, "here"));
    expect_error(TS_ERR_FORMAT, bad[i].error, NULL);
  }
  g_assert_null(ts_module_new_static(&(ts_module_info){ 1, "t", good, 2 }, "here"));
  expect_error(TS_ERR_FORMAT, "'here' was built for Tracescope ABI 1, this is ABI " G_STRINGIFY(TS_ABI_VERSION), NULL);
  /* no exports at all is a valid, empty module */
  m = ts_module_new_static(&(ts_module_info){ TS_ABI_VERSION, "empty", NULL, 0 }, NULL);
  g_assert_cmpint(ts_module_n_functions(m), ==, 0);
  ts_module_free(m);
}

/* ---- argument specs -------------------------------------------------------------- */

static void test_spec_tensors(void)
{
  ts_scope *s = ts_scope_begin();
  assert_tensor_str(parse_tensor("f32[2,3]=1,2,3,4,5,6"),
                    "Tensor(\n[[1. 2. 3.]\n [4. 5. 6.]], shape=(2, 3), dtype=float32)");
  assert_tensor_str(parse_tensor("i32[4]=10,12,15,20"),
                    "Tensor([10 12 15 20], shape=(4,), dtype=int32)");
  assert_tensor_str(parse_tensor("f32[]=2.5"), "Tensor(2.5, shape=(), dtype=float32)");
  assert_tensor_str(parse_tensor("float64[ 2 ]= -1e3 , inf"),
                    "Tensor([-1000.    inf], shape=(2,), dtype=float64)");
  assert_tensor_str(parse_tensor("i64[2]=-9223372036854775808,9223372036854775807"),
                    "Tensor([-9223372036854775808  9223372036854775807], shape=(2,), dtype=int64)");
  assert_tensor_str(parse_tensor("u8[2]=0,255"), "Tensor([  0 255], shape=(2,), dtype=uint8)");
  assert_tensor_str(parse_tensor("bool[3]=true,false,1"),
                    "Tensor([ True False  True], shape=(3,), dtype=bool)");
  assert_tensor_str(parse_tensor("f32[0]="), "Tensor([], shape=(0,), dtype=float32)");
  assert_tensor_str(parse_tensor("i32[2,0]="), "Tensor([], shape=(2, 0), dtype=int32)");
  ts_scope_end(s);
}

static void test_spec_generators(void)
{
  ts_scope *s = ts_scope_begin();
  assert_tensor_str(parse_tensor("i32[10]:range(-5)"),
                    "Tensor([-5 -4 -3 -2 -1  0  1  2  3  4], shape=(10,), dtype=int32)");
  assert_tensor_str(parse_tensor("f32[2,3]:range"),
                    "Tensor(\n[[0. 1. 2.]\n [3. 4. 5.]], shape=(2, 3), dtype=float32)");
  assert_tensor_str(parse_tensor("f64[2]:range( 0.5 )"),
                    "Tensor([0.5 1.5], shape=(2,), dtype=float64)");
  assert_tensor_str(parse_tensor("i32[3]:zeros"), "Tensor([0 0 0], shape=(3,), dtype=int32)");
  assert_tensor_str(parse_tensor("f32[2]:ones"), "Tensor([1. 1.], shape=(2,), dtype=float32)");

  /* seeded uniform: [0,1) for floats, [0,10) for integers, reproducible */
  ts_tensor *u = parse_tensor("f32[20,28,28]:uniform");
  ts_tensor *again = parse_tensor("f32[20,28,28]:uniform");
  ts_tensor *other = parse_tensor("f32[20,28,28]:uniform@7");
  g_assert_true(ts_shape_equal(ts_tensor_shape(u), TS_SHAPE(20, 28, 28)));
  bool differs = false;
  for (int64_t i = 0; i < ts_tensor_size(u); i++) {
    double v = ts_tensor_get_f64(u, i);
    g_assert_cmpfloat(v, >=, 0);
    g_assert_cmpfloat(v, <, 1);
    g_assert_cmpfloat(v, ==, ts_tensor_get_f64(again, i));
    differs |= v != ts_tensor_get_f64(other, i);
  }
  g_assert_true(differs);
  ts_tensor *ui = parse_tensor("i32[1000]:uniform");
  g_assert_cmpint(ts_tensor_dtype(ui), ==, TS_I32);
  for (int64_t i = 0; i < 1000; i++) {
    g_assert_cmpint(ts_tensor_get_i64(ui, i), >=, 0);
    g_assert_cmpint(ts_tensor_get_i64(ui, i), <, 10);
  }
  ts_tensor *n = parse_tensor("f64[1000]:normal@3");
  double sum = 0;
  for (int64_t i = 0; i < 1000; i++)
    sum += ts_tensor_get_f64(n, i);
  g_assert_cmpfloat(fabs(sum / 1000), <, 0.2);
  ts_scope_end(s);
}

static void test_spec_npy(void)
{
  ts_scope *s = ts_scope_begin();
  char *dir = g_dir_make_tmp("ts-spec-XXXXXX", NULL);
  char *path = g_build_filename(dir, "x.npy", NULL);
  g_assert_true(ts_npy_save(path, parse_tensor("i32[2,2]=1,2,3,4")));
  char *spec = g_strconcat("npy:", path, NULL);
  assert_tensor_str(parse_tensor(spec), "Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)");
  g_free(spec);
  g_assert_cmpint(g_unlink(path), ==, 0);
  ts_value v;
  spec = g_strconcat("npy:", path, NULL);
  g_assert_false(ts_value_parse(spec, &v));
  g_assert_cmpint(v.kind, ==, TS_VALUE_NONE);
  expect_error(TS_ERR_IO, "x.npy", NULL);
  g_free(spec);
  g_assert_false(ts_value_parse("npy:", &v));
  expect_error(TS_ERR_INVALID_ARGUMENT, "argument 'npy:': npy: needs a file name", NULL);
  g_free(path);
  g_assert_cmpint(g_rmdir(dir), ==, 0);
  g_free(dir);
  ts_scope_end(s);
}

static void test_spec_host(void)
{
  ts_value v = parse("100");
  g_assert_cmpint(v.kind, ==, TS_VALUE_INT);
  g_assert_cmpint(v.i, ==, 100);
  v = parse("-9223372036854775808");
  g_assert_cmpint(v.kind, ==, TS_VALUE_INT);
  g_assert_cmpint(v.i, ==, INT64_MIN);
  v = parse("-2.5");
  g_assert_cmpint(v.kind, ==, TS_VALUE_FLOAT);
  g_assert_cmpfloat(v.f, ==, -2.5);
  v = parse("1e3");
  g_assert_cmpint(v.kind, ==, TS_VALUE_FLOAT);
  g_assert_cmpfloat(v.f, ==, 1000);
  v = parse(".5");
  g_assert_cmpfloat(v.f, ==, 0.5);
  v = parse("true");
  g_assert_cmpint(v.kind, ==, TS_VALUE_BOOL);
  g_assert_true(v.b);
  v = parse("false");
  g_assert_false(v.b);

  static const char *const strings[] = { "a", "", "12abc", "-", "True", "f32", "nan", "a,b" };
  for (size_t i = 0; i < G_N_ELEMENTS(strings); i++) {
    v = parse(strings[i]);
    g_assert_cmpint(v.kind, ==, TS_VALUE_STRING);
    g_assert_cmpstr(v.s, ==, strings[i]);
    ts_value_clear(&v);
    g_assert_cmpint(v.kind, ==, TS_VALUE_NONE);
  }

  v = parse("[1,-1]");
  g_assert_cmpint(v.kind, ==, TS_VALUE_LIST);
  g_assert_cmpint(v.list.n, ==, 2);
  g_assert_cmpint(v.list.items[0].i, ==, 1);
  g_assert_cmpint(v.list.items[1].i, ==, -1);
  ts_value_clear(&v);
  v = parse("[ [1, 2.5], [], word, [true] ]");
  g_assert_cmpint(v.list.n, ==, 4);
  g_assert_cmpint(v.list.items[0].kind, ==, TS_VALUE_LIST);
  g_assert_cmpfloat(v.list.items[0].list.items[1].f, ==, 2.5);
  g_assert_cmpint(v.list.items[1].list.n, ==, 0);
  g_assert_cmpstr(v.list.items[2].s, ==, "word");
  g_assert_true(v.list.items[3].list.items[0].b);
  ts_value_clear(&v);
  v = parse("[]");
  g_assert_cmpint(v.kind, ==, TS_VALUE_LIST);
  g_assert_cmpint(v.list.n, ==, 0);
  ts_value_clear(&v);
  ts_value_clear(NULL);
}

static void test_spec_errors(void)
{
  static const struct {
    const char *spec, *error;
  } bad[] = {
    { "f32[2]=1", "argument 'f32[2]=1': 2 values expected for f32[2], got 1" },
    { "f32[1]=1,2", "1 value expected for f32[1], got 2" },
    { "f32[2]=", "2 values expected for f32[2], got 0" },
    { "f32[]=", "1 value expected for f32[], got 0" },
    { "q32[2]=1,2", "argument 'q32[2]=1,2': unknown dtype 'q32'" },
    { "f32[2,x]=1,2", "malformed shape [2,x]: 'x' is not a dimension" },
    { "f32[2,,3]:zeros", "malformed shape [2,,3]" },
    { "f32[-1]:zeros", "malformed shape [-1]: negative dimension -1" },
    { "f32[2=1,2", "malformed shape: missing ']'" },
    { "f32[1,1,1,1,1,1,1,1,1]:zeros", "more than 8 dimensions" },
    { "f32[4294967296,4294967296]:zeros", "has too many elements" },
    { "f32[2]=1,x", "argument 'f32[2]=1,x': bad number 'x' for f32" },
    { "i32[1]=1.5", "bad number '1.5' for i32" },
    { "i32[1]=2147483648", "2147483648 is out of range for i32" },
    { "u8[1]=-1", "-1 is out of range for u8" },
    { "bool[1]=2", "2 is out of range for bool" },
    { "f32[2]", "expected '=VALUES' or ':GENERATOR' after the shape" },
    { "f32[2]x", "expected '=VALUES' or ':GENERATOR' after the shape" },
    { "f32[2]:foo", "unknown generator 'foo'" },
    { "f32[2]:", "unknown generator ''" },
    { "f32[2]:zeros@3", "only uniform and normal take a @SEED" },
    { "f32[2]:uniform@x", "bad seed 'x'" },
    { "f32[2]:uniform(1)", "only range takes a (START)" },
    { "f32[2]:range(1", "missing ')'" },
    { "f32[2]:range(x)", "bad range start 'x'" },
    { "99999999999999999999", "integer 99999999999999999999 is out of range" },
    { "[1,2", "list '[1,2' is missing its closing ']'" },
    { "[1,,2]", "empty item 1 in list '[1,,2]'" },
    { "[[1],2]]", "unbalanced brackets" },
    { "string[1]=a", "a spec cannot give dtype 'string'" },
    { "bool[2]:range", "argument 'bool[2]:range': Range: " },
    { "f32[2]:uniform@99999999999999999999", "bad seed" },
  };
  ts_scope *s = ts_scope_begin();
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    ts_value v = { .kind = TS_VALUE_INT, .i = 1 };
    if (ts_value_parse(bad[i].spec, &v))
      g_error("'%s' parsed", bad[i].spec);
    g_assert_cmpint(v.kind, ==, TS_VALUE_NONE);
    /* one message naming the spec once, without a source location */
    const char *message = ts_error_peek()->message;
    g_assert_true(g_str_has_prefix(message, "argument '"));
    g_assert_null(strstr(message + 1, "argument '"));
    expect_error(TS_ERR_INVALID_ARGUMENT, bad[i].error, NULL);
  }
  g_assert_cmpint(ts_scope_n_tensors(), ==, 0);
  ts_scope_end(s);
}

/* The dtypes an unknown one's error lists are those a spec can give (the
 * engine's dtype table, one list): each that parses, none that does not. */
static void test_spec_dtype_list(void)
{
  g_autofree char *dtypes = ts_value_spec_dtypes(", ");
  g_auto(GStrv) listed = g_strsplit(dtypes, ", ", -1);
  ts_scope *s = ts_scope_begin();
  for (int d = 0; d < TS_DTYPE_COUNT; d++) {
    const char *name = ts_dtype_short_name((ts_dtype)d);
    g_autofree char *spec = g_strdup_printf("%s[]:zeros", name);
    ts_value v;
    bool takes = ts_value_parse(spec, &v);
    if (takes)
      ts_value_clear(&v);
    else
      ts_error_clear();
    if (takes != g_strv_contains((const char *const *)listed, name))
      g_error("the spec dtypes (%s) %s %s, which a spec %s", dtypes, takes ? "lack" : "list", name,
              takes ? "takes" : "cannot give");
  }
  g_assert_cmpstr(listed[0], ==, "f16"); /* floats first, smaller first */
  g_assert_cmpstr(listed[g_strv_length(listed) - 1], ==, "bool");
  ts_value v;
  g_assert_false(ts_value_parse("q32[2]=1,2", &v));
  g_autofree char *expected = g_strdup_printf("unknown dtype 'q32' (%s)", dtypes);
  expect_error(TS_ERR_INVALID_ARGUMENT, expected, NULL);
  ts_scope_end(s);
}

/* "[[[...]]]" n deep around `leaf`. */
static char *nested_list(int n, const char *leaf)
{
  GString *t = g_string_new(NULL);
  for (int i = 0; i < n; i++)
    g_string_append_c(t, '[');
  g_string_append(t, leaf);
  for (int i = 0; i < n; i++)
    g_string_append_c(t, ']');
  return g_string_free(t, FALSE);
}

/* Lists parse in one pass (no copy per level) and nest at most 32 deep. */
static void test_spec_nesting(void)
{
  ts_value v;
  char *ok = nested_list(32, "7");
  g_assert_true(ts_value_parse(ok, &v));
  const ts_value *at = &v;
  for (int i = 0; i < 32; i++) {
    g_assert_cmpint(at->kind, ==, TS_VALUE_LIST);
    g_assert_cmpint(at->list.n, ==, 1);
    at = &at->list.items[0];
  }
  g_assert_cmpint(at->kind, ==, TS_VALUE_INT);
  g_assert_cmpint(at->i, ==, 7);
  ts_value_clear(&v);
  g_free(ok);

  /* 40,000 deep took 1.6 GB and 12 s: now an error at the 33rd '[' */
  char *deep = nested_list(40000, "1");
  g_assert_false(ts_value_parse(deep, &v));
  g_assert_cmpint(v.kind, ==, TS_VALUE_NONE);
  expect_error(TS_ERR_INVALID_ARGUMENT, "lists nest more than 32 deep (at position 32)", NULL);
  g_free(deep);

  /* a long flat list parses item by item */
  GString *flat = g_string_new("[");
  for (int i = 0; i < 100000; i++)
    g_string_append_printf(flat, i ? ", [%d]" : "[%d]", i);
  g_string_append(flat, "]");
  g_assert_true(ts_value_parse(flat->str, &v));
  g_assert_cmpint(v.list.n, ==, 100000);
  g_assert_cmpint(v.list.items[99999].list.items[0].i, ==, 99999);
  ts_value_clear(&v);
  g_string_free(flat, TRUE);

  /* items around nested lists */
  g_assert_true(ts_value_parse("[ x[1] , [ ] ,[2 ,3]]  ", &v));
  g_assert_cmpint(v.list.n, ==, 3);
  g_assert_cmpstr(v.list.items[0].s, ==, "x[1]");
  g_assert_cmpint(v.list.items[1].list.n, ==, 0);
  g_assert_cmpint(v.list.items[2].list.items[1].i, ==, 3);
  ts_value_clear(&v);
  g_assert_false(ts_value_parse("[[1] x]", &v));
  expect_error(TS_ERR_INVALID_ARGUMENT, "unexpected 'x' after a list at position 5", NULL);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/module/seeds/list", test_seeds_list);
  g_test_add_func("/module/seeds/deep-net", test_seeds_deep_net);
  g_test_add_func("/module/seeds/programs", test_seeds_programs);
  g_test_add_func("/module/seeds/power", test_seeds_power);
  g_test_add_func("/module/seeds/dense-conv", test_seeds_dense_conv);
  g_test_add_func("/module/seeds/errors", test_seeds_errors);
  g_test_add_func("/module/call/args", test_call_args);
  g_test_add_func("/module/call/failures", test_call_failures);
  g_test_add_func("/module/open/refused", test_refused_modules);
  g_test_add_func("/module/open/says-what-to-do", test_open_says_what_to_do);
  g_test_add_func("/module/static", test_static_modules);
  g_test_add_func("/arg-spec/tensors", test_spec_tensors);
  g_test_add_func("/arg-spec/generators", test_spec_generators);
  g_test_add_func("/arg-spec/npy", test_spec_npy);
  g_test_add_func("/arg-spec/host", test_spec_host);
  g_test_add_func("/arg-spec/errors", test_spec_errors);
  g_test_add_func("/arg-spec/dtype-list", test_spec_dtype_list);
  g_test_add_func("/arg-spec/nesting", test_spec_nesting);
  int ret = g_test_run();
  ts_release_all();
  return ret;
}
