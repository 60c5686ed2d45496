/* test-state.c — side effects and state: ts_print (tf.print formatting,
 * stdout and TS_EVENT_PRINT), variables (read, assign, assign_add,
 * assign_sub), TensorArrays, the printer for strings, variants and
 * symbolic tensors, and all of them inside traced functions. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <tracescope.h>
#include <unistd.h>
#include "test-serial-check.h"

/* ---- capturing prints ------------------------------------------------------ */

typedef struct {
  GPtrArray *lines;  /* TS_EVENT_PRINT texts */
  int n_with_node;   /* events that came from a graph node */
  int listener;
  int saved_stdout;  /* stdout goes to a file while capturing */
  char *path;
} capture;

static void on_print(const ts_event *ev, void *user_data)
{
  capture *c = user_data;
  g_ptr_array_add(c->lines, g_strdup(ev->print.text));
  c->n_with_node += ev->print.node != NULL;
}

static void capture_begin(capture *c)
{
  *c = (capture){ .lines = g_ptr_array_new_with_free_func(g_free) };
  c->listener = ts_listener_add(TS_EVENT_MASK(TS_EVENT_PRINT), on_print, c);
  g_assert_cmpint(c->listener, >, 0);
  int fd = g_file_open_tmp("test-state-XXXXXX", &c->path, NULL);
  g_assert_cmpint(fd, >=, 0);
  fflush(stdout);
  c->saved_stdout = dup(STDOUT_FILENO);
  dup2(fd, STDOUT_FILENO);
  close(fd);
}

/* Restores stdout; returns what was printed to it (owned). */
static char *capture_end(capture *c)
{
  fflush(stdout);
  dup2(c->saved_stdout, STDOUT_FILENO);
  close(c->saved_stdout);
  ts_listener_remove(c->listener);
  char *text = NULL;
  g_assert_true(g_file_get_contents(c->path, &text, NULL, NULL));
  g_unlink(c->path);
  g_free(c->path);
  return text;
}

static void capture_free(capture *c)
{
  g_ptr_array_unref(c->lines);
}

static const char *line(const capture *c, guint i)
{
  g_assert_cmpuint(i, <, c->lines->len);
  return c->lines->pdata[i];
}

/* Prints one item list and returns the event text (owned). */
#define PRINTED(...) printed_((ts_print(__VA_ARGS__)))
static capture pending;
static char *printed_(bool ok)
{
  g_assert_true(ok);
  g_assert_false(ts_failed());
  g_assert_cmpuint(pending.lines->len, ==, 1);
  return g_ptr_array_steal_index(pending.lines, 0);
}

static void assert_printed(char *got, const char *want)
{
  g_assert_cmpstr(got, ==, want);
  g_free(got);
}

static void assert_error(const char *op, const char *detail)
{
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  if (op)
    g_assert_cmpstr(e->op, ==, op);
  if (!strstr(e->detail, detail))
    g_error("error '%s' lacks '%s'", e->message, detail);
  ts_error_free(e);
}

static ts_tensor *i32_vector(int n, const int32_t *v)
{
  return ts_constant(TS_I32, TS_SHAPE(n), v);
}

/* ---- ts_print, eagerly ----------------------------------------------------- */

static void test_print_scalars(void)
{
  ts_scope *scope = ts_scope_begin();
  capture_begin(&pending);
  assert_printed(PRINTED(ts_scalar_i32(5)), "5");
  assert_printed(PRINTED(ts_scalar_i64(-12345678901)), "-12345678901");
  assert_printed(PRINTED(ts_scalar_f32(2.5f)), "2.5");
  assert_printed(PRINTED(ts_scalar_f32(1.0f)), "1");
  assert_printed(PRINTED(ts_scalar_f32(0.1f)), "0.1");
  /* %.6g does not read back as the same float: 9 digits, as tf.print shows */
  assert_printed(PRINTED(ts_scalar_f32(1.0f / 3.0f)), "0.333333343");
  assert_printed(PRINTED(ts_scalar_f32(1.83323669f)), "1.83323669");
  assert_printed(PRINTED(ts_scalar_f32(0.325f)), "0.325");
  assert_printed(PRINTED(ts_scalar_f32(1e20f)), "1e+20");
  assert_printed(PRINTED(ts_scalar_f64(0.1)), "0.1");
  assert_printed(PRINTED(ts_scalar_f64(1.0 / 3.0)), "0.33333333333333331");
  assert_printed(PRINTED(ts_scalar_f32(-INFINITY)), "-inf");
  assert_printed(PRINTED(ts_scalar_f64(NAN)), "nan");
  assert_printed(PRINTED(ts_scalar_bool(true)), "1");
  assert_printed(PRINTED(ts_constant(TS_U8, TS_SCALAR_SHAPE, (uint8_t[]){ 200 })), "200");
  char *out = capture_end(&pending);
  g_assert_true(g_str_has_prefix(out, "5\n-12345678901\n2.5\n1\n0.1\n0.333333343\n"));
  g_free(out);
  capture_free(&pending);
  ts_scope_end(scope);
}

static void test_print_arrays(void)
{
  ts_scope *scope = ts_scope_begin();
  capture_begin(&pending);
  assert_printed(PRINTED(i32_vector(3, (int32_t[]){ 1, 2, 3 })), "[1 2 3]");
  assert_printed(PRINTED(ts_range(TS_I32, 0, 10, 1)), "[0 1 2 ... 7 8 9]");
  assert_printed(PRINTED(ts_range(TS_I32, 0, 7, 1)), "[0 1 2 ... 4 5 6]");
  assert_printed(PRINTED(ts_range(TS_I32, 0, 6, 1)), "[0 1 2 3 4 5]");
  assert_printed(PRINTED(ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 1, 2.5f, 1.0f / 3 })),
                 "[1 2.5 0.333333343]");
  assert_printed(PRINTED(ts_constant(TS_BOOL, TS_SHAPE(2), (bool[]){ true, false })), "[1 0]");
  /* rows on lines of their own, indented by depth, as TensorFlow prints them */
  assert_printed(PRINTED(ts_reshape(ts_range(TS_I32, 1, 5, 1), TS_SHAPE(2, 2))),
                 "[[1 2]\n [3 4]]");
  assert_printed(PRINTED(ts_reshape(ts_range(TS_I32, 0, 8, 1), TS_SHAPE(2, 2, 2))),
                 "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
  assert_printed(PRINTED(ts_reshape(ts_range(TS_I32, 0, 100, 1), TS_SHAPE(10, 10))),
                 "[[0 1 2 ... 7 8 9]\n"
                 " [10 11 12 ... 17 18 19]\n"
                 " [20 21 22 ... 27 28 29]\n"
                 " ...\n"
                 " [70 71 72 ... 77 78 79]\n"
                 " [80 81 82 ... 87 88 89]\n"
                 " [90 91 92 ... 97 98 99]]");
  assert_printed(PRINTED(ts_zeros(TS_F32, TS_SHAPE(0))), "[]");
  assert_printed(PRINTED(ts_zeros(TS_I32, TS_SHAPE(1, 0))), "[[]]");
  /* empty, with inner dims whose product overflows int64: no stride arithmetic on them */
  assert_printed(PRINTED(ts_zeros(TS_F32, TS_SHAPE(0, INT64_C(1) << 62, 4))), "[]");
  char *out = capture_end(&pending);
  g_assert_true(g_str_has_prefix(out, "[1 2 3]\n[0 1 2 ... 7 8 9]\n"));
  g_free(out);
  capture_free(&pending);
  ts_scope_end(scope);
}

static void test_print_strings_and_mixed(void)
{
  ts_scope *scope = ts_scope_begin();
  capture_begin(&pending);
  /* the guides' lines */
  assert_printed(PRINTED(i32_vector(1, (int32_t[]){ 1 }), "Executing"), "[1] Executing");
  assert_printed(PRINTED(i32_vector(2, (int32_t[]){ 1, 2 }), "Executing"), "[1 2] Executing");
  assert_printed(PRINTED("Executed with", ts_scalar_i32(1)), "Executed with 1");
  assert_printed(PRINTED("Fizz"), "Fizz");
  assert_printed(PRINTED("Step", ts_scalar_i32(10), ": loss", ts_scalar_f32(1.83323669f),
                         "; accuracy", ts_scalar_f32(0.325f)),
                 "Step 10 : loss 1.83323669 ; accuracy 0.325");
  /* a lone scalar string tensor prints as itself; otherwise strings are quoted */
  assert_printed(PRINTED(ts_scalar_string("hello")), "hello");
  assert_printed(PRINTED("a", ts_scalar_string("b")), "a \"b\"");
  const char *words[] = { "a", "it's\n" };
  assert_printed(PRINTED(ts_constant(TS_STRING, TS_SHAPE(2), words)), "[\"a\" \"it\\'s\\n\"]");
  /* strings holding the placeholder itself */
  assert_printed(PRINTED("{}", ts_scalar_i32(1), "{{}}"), "{} 1 {{}}");
  assert_printed(PRINTED(""), "");
  char *out = capture_end(&pending);
  g_assert_true(g_str_has_prefix(out, "[1] Executing\n[1 2] Executing\nExecuted with 1\nFizz\n"));
  g_assert_cmpint(pending.n_with_node, ==, 0);
  g_free(out);
  capture_free(&pending);
  ts_scope_end(scope);
}

static void test_print_errors(void)
{
  ts_scope *scope = ts_scope_begin();
  capture_begin(&pending);
  ts_value bad[] = { TS_STRING_VALUE("x"), TS_INT_VALUE(3) };
  g_assert_false(ts_print_at(TS_HERE, bad, 2));
  assert_error("PrintV2", "item 1 is neither a string nor a tensor");
  g_assert_false(ts_print("x", (ts_tensor *)NULL));
  assert_error("PrintV2", "item 1 is NULL");
  /* a failed op's NULL keeps that op's error */
  g_assert_false(ts_print("x", ts_add(ts_scalar_i32(1), ts_scalar_string("s"))));
  assert_error("Add", "string");
  g_assert_cmpuint(pending.lines->len, ==, 0);
  char *out = capture_end(&pending);
  g_assert_cmpstr(out, ==, "");
  g_free(out);
  capture_free(&pending);
  ts_scope_end(scope);
}

/* ---- variables ---------------------------------------------------------------- */

static void test_variables(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *v = ts_variable_new(ts_scalar_i32(5), "v");
  ts_tensor *before = ts_read(v);
  g_assert_cmpint(ts_tensor_get_i64(before, 0), ==, 5);

  ts_tensor *r = ts_assign(v, ts_scalar_i32(7));
  g_assert_cmpint(ts_tensor_get_i64(r, 0), ==, 7);
  g_assert_cmpint(ts_tensor_get_i64(v, 0), ==, 7);
  g_assert_cmpint(ts_tensor_get_i64(before, 0), ==, 5); /* reads are copies */
  r = ts_assign_add(v, ts_scalar_i32(3));
  g_assert_cmpint(ts_tensor_get_i64(r, 0), ==, 10);
  r = ts_assign_sub(v, ts_scalar_i32(4));
  g_assert_cmpint(ts_tensor_get_i64(r, 0), ==, 6);
  /* the returned value is a copy too */
  ts_assign_add(v, ts_scalar_i32(1));
  g_assert_cmpint(ts_tensor_get_i64(r, 0), ==, 6);
  g_assert_cmpint(ts_tensor_get_i64(v, 0), ==, 7);
  /* v + 1 eagerly reads the current value */
  g_assert_cmpint(ts_tensor_get_i64(ts_add(v, ts_scalar_i32(1)), 0), ==, 8);
  g_assert_false(ts_failed());

  ts_tensor *w = ts_variable_new(ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 }), "w");
  ts_assign_add(w, ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 0.5f, -4 }));
  g_assert_cmpfloat(ts_tensor_get_f64(w, 0), ==, 1.5);
  g_assert_cmpfloat(ts_tensor_get_f64(w, 1), ==, -2);
  ts_assign(w, ts_mul(w, ts_scalar_f32(2))); /* a value computed from the variable */
  g_assert_cmpfloat(ts_tensor_get_f64(w, 1), ==, -4);
  ts_assign(w, w); /* the variable itself */
  g_assert_cmpfloat(ts_tensor_get_f64(w, 0), ==, 3);

  /* integers wrap around */
  ts_tensor *big = ts_variable_new(ts_scalar_i32(INT32_MAX), "big");
  ts_assign_add(big, ts_scalar_i32(1));
  g_assert_cmpint(ts_tensor_get_i64(big, 0), ==, INT32_MIN);
  ts_assign_sub(big, ts_scalar_i32(1));
  g_assert_cmpint(ts_tensor_get_i64(big, 0), ==, INT32_MAX);
  ts_tensor *byte = ts_variable_new(ts_constant(TS_U8, TS_SCALAR_SHAPE, (uint8_t[]){ 250 }), "b");
  ts_assign_add(byte, ts_constant(TS_U8, TS_SCALAR_SHAPE, (uint8_t[]){ 10 }));
  g_assert_cmpint(ts_tensor_get_i64(byte, 0), ==, 4);
  ts_assign_sub(byte, ts_constant(TS_U8, TS_SCALAR_SHAPE, (uint8_t[]){ 5 }));
  g_assert_cmpint(ts_tensor_get_i64(byte, 0), ==, 255);
  g_assert_false(ts_failed());

  ts_tensor_unref(v);
  ts_tensor_unref(w);
  ts_tensor_unref(big);
  ts_tensor_unref(byte);
  ts_scope_end(scope);
}

static void test_variable_errors(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *v = ts_variable_new(ts_constant(TS_I32, TS_SHAPE(2), (int32_t[]){ 1, 2 }), "v");

  g_assert_null(ts_assign(v, ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 })));
  assert_error("AssignVariableOp", "the value f32[2] does not match the variable i32[2]");
  g_assert_null(ts_assign_add(v, ts_constant(TS_I32, TS_SHAPE(3), (int32_t[]){ 1, 2, 3 })));
  assert_error("AssignAddVariableOp", "the value i32[3] does not match the variable i32[2]");
  g_assert_null(ts_assign_sub(v, ts_scalar_i32(1)));
  assert_error("AssignSubVariableOp", "the value i32[] does not match the variable i32[2]");
  g_assert_cmpint(ts_tensor_get_i64(v, 0), ==, 1); /* unchanged */
  g_assert_cmpint(ts_tensor_get_i64(v, 1), ==, 2);

  g_assert_null(ts_assign_add(ts_scalar_i32(1), ts_scalar_i32(1)));
  assert_error("AssignAddVariableOp", "input 0 is not a variable");
  g_assert_null(ts_read(ts_scalar_i32(1)));
  assert_error("ReadVariableOp", "input 0 is not a variable");
  g_assert_null(ts_assign(NULL, ts_scalar_i32(1)));
  assert_error("AssignVariableOp", "input 0 is NULL");

  ts_tensor *flag = ts_variable_new(ts_scalar_bool(false), "flag");
  g_assert_nonnull(ts_assign(flag, ts_scalar_bool(true)));
  g_assert_null(ts_assign_add(flag, ts_scalar_bool(true)));
  assert_error("AssignAddVariableOp", "bool variables");

  /* the error names where the user's call was */
  g_assert_null(ts_assign(v, ts_scalar_f32(1)));
  const ts_error *e = ts_error_peek();
  g_assert_nonnull(e);
  g_assert_true(g_str_has_suffix(e->file, "test-state.c"));
  g_assert_cmpint(e->line, ==, __LINE__ - 4);
  ts_error_clear();

  ts_tensor_unref(v);
  ts_tensor_unref(flag);
  ts_scope_end(scope);
}

/* ---- TensorArray, eagerly ----------------------------------------------------------- */

static ts_tensor *at(int64_t i)
{
  return ts_scalar_i32((int32_t)i);
}

static void assert_i32_values(ts_tensor *t, int n, const int32_t *want)
{
  g_assert_nonnull(t);
  g_assert_cmpint(ts_tensor_size(t), ==, n);
  for (int i = 0; i < n; i++)
    g_assert_cmpint(ts_tensor_get_i64(t, i), ==, want[i]);
}

static void test_tensor_array(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *ta = ts_tensor_array(TS_I32, at(3));
  g_assert_cmpint(ts_tensor_dtype(ta), ==, TS_VARIANT);
  g_assert_cmpint(ts_tensor_rank(ta), ==, 0);
  for (int i = 0; i < 3; i++)
    ta = ts_tensor_array_write(ta, at(i), at(10 * i));
  g_assert_cmpint(ts_tensor_get_i64(ts_tensor_array_read(ta, at(1)), 0), ==, 10);
  ts_tensor *s = ts_tensor_array_stack(ta);
  g_assert_true(ts_shape_equal(ts_tensor_shape(s), TS_SHAPE(3)));
  assert_i32_values(s, 3, (int32_t[]){ 0, 10, 20 });

  /* vector elements; an i64 index */
  ts_tensor *tv = ts_tensor_array(TS_F32, ts_scalar_i64(2));
  ts_tensor *row0 = ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 });
  ts_tensor *row1 = ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 3, 4 });
  tv = ts_tensor_array_write(tv, ts_scalar_i64(1), row1);
  tv = ts_tensor_array_write(tv, ts_scalar_i64(0), row0);
  s = ts_tensor_array_stack(tv);
  g_assert_true(ts_shape_equal(ts_tensor_shape(s), TS_SHAPE(2, 2)));
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(s, i), ==, i + 1);

  /* writes past the end grow the array */
  ts_tensor *grown = ts_tensor_array_write(ta, at(5), at(50));
  g_assert_cmpint(ts_tensor_get_i64(ts_tensor_array_read(grown, at(5)), 0), ==, 50);
  g_assert_null(ts_tensor_array_read(grown, at(4)));
  assert_error("TensorListGetItem", "element 4 of the TensorArray (size 6) was never written");
  g_assert_null(ts_tensor_array_stack(grown));
  assert_error("TensorListStack", "element 3 of the TensorArray (size 6) was never written");
  grown = ts_tensor_array_write(ts_tensor_array_write(grown, at(3), at(30)), at(4), at(40));
  assert_i32_values(ts_tensor_array_stack(grown), 6, (int32_t[]){ 0, 10, 20, 30, 40, 50 });

  /* an empty array stacks to nothing */
  s = ts_tensor_array_stack(ts_tensor_array(TS_F32, at(0)));
  g_assert_true(ts_shape_equal(ts_tensor_shape(s), TS_SHAPE(0)));
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static void test_tensor_array_copy_on_write(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *t0 = ts_tensor_array(TS_I32, at(2));
  ts_tensor *t1 = ts_tensor_array_write(t0, at(0), at(1));
  ts_tensor *t2 = ts_tensor_array_write(t1, at(0), at(2));
  ts_tensor *t3 = ts_tensor_array_write(t1, at(1), at(3));
  g_assert_cmpint(ts_tensor_get_i64(ts_tensor_array_read(t1, at(0)), 0), ==, 1);
  g_assert_cmpint(ts_tensor_get_i64(ts_tensor_array_read(t2, at(0)), 0), ==, 2);
  g_assert_cmpint(ts_tensor_get_i64(ts_tensor_array_read(t3, at(0)), 0), ==, 1);
  g_assert_null(ts_tensor_array_read(t0, at(0)));
  assert_error(NULL, "was never written");
  g_assert_null(ts_tensor_array_read(t2, at(1)));
  assert_error(NULL, "element 1 of the TensorArray (size 2) was never written");

  /* an item read from a variable keeps the value it had when written */
  ts_tensor *v = ts_variable_new(ts_scalar_i32(7), "v");
  ts_tensor *tv = ts_tensor_array_write(t0, at(0), v);
  ts_assign(v, ts_scalar_i32(8));
  g_assert_cmpint(ts_tensor_get_i64(ts_tensor_array_read(tv, at(0)), 0), ==, 7);
  ts_tensor_unref(v);

  /* a list outlives the scope that made it when its tensor is kept */
  ts_scope *inner = ts_scope_begin();
  ts_tensor *kept =
    ts_scope_end_keep(inner, ts_tensor_array_write(t3, at(1), ts_add(at(4), at(5))));
  g_assert_cmpint(ts_tensor_get_i64(ts_tensor_array_read(kept, at(1)), 0), ==, 9);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static void test_tensor_array_errors(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *ta = ts_tensor_array_write(ts_tensor_array(TS_I32, at(2)), at(0), at(1));
  g_assert_null(ts_tensor_array_write(ta, at(-1), at(1)));
  assert_error("TensorListSetItem", "index -1 is negative");
  g_assert_null(ts_tensor_array_read(ta, at(-2)));
  assert_error("TensorListGetItem", "index -2 is negative");
  g_assert_null(ts_tensor_array_read(ta, at(2)));
  assert_error("TensorListGetItem", "index 2 is out of range for a TensorArray of size 2");
  g_assert_null(ts_tensor_array_write(ta, at(1), ts_scalar_f32(1)));
  assert_error("TensorListSetItem", "cannot write a float32 tensor to a TensorArray of int32");
  g_assert_null(ts_tensor_array_write(ta, ts_scalar_f32(1), at(1)));
  assert_error("TensorListSetItem", "the index must be an int32 or int64 scalar, got f32[]");
  g_assert_null(ts_tensor_array_read(at(1), at(0)));
  assert_error("TensorListGetItem", "input 0 is i32[], not a TensorArray");
  g_assert_null(ts_tensor_array(TS_I32, at(-3)));
  assert_error("TensorListReserve", "size -3 is not in [0,");
  g_assert_null(ts_tensor_array(TS_I32, ts_scalar_f32(3)));
  assert_error("TensorListReserve", "the size must be an int32 or int64 scalar");
  g_assert_null(ts_tensor_array(TS_VARIANT, at(3)));
  assert_error("TensorListReserve", "TensorArrays of TensorArrays");
  g_assert_null(ts_tensor_array((ts_dtype)77, at(3)));
  assert_error("TensorListReserve", "invalid dtype 77 for attribute element_dtype");
  g_assert_null(ts_tensor_array((ts_dtype)-1, at(3)));
  assert_error("TensorListReserve", "invalid dtype -1 for attribute element_dtype");
  g_assert_null(ts_tensor_array_stack(ts_tensor_new(TS_VARIANT, TS_SCALAR_SHAPE)));
  assert_error("TensorListStack", "a variant that holds no TensorArray");

  ts_tensor *mixed = ts_tensor_array_write(ta, at(1), i32_vector(2, (int32_t[]){ 1, 2 }));
  g_assert_nonnull(mixed); /* elements may differ until stacked */
  g_assert_null(ts_tensor_array_stack(mixed));
  assert_error("TensorListStack", "element 1 has shape (2,) but element 0 has ()");
  g_assert_null(ts_tensor_array_write(NULL, at(0), at(0)));
  assert_error("TensorListSetItem", "input 0 is NULL");
  ts_scope_end(scope);
}

/* ---- the printer ------------------------------------------------------------------- */

static void assert_string(char *got, const char *want)
{
  g_assert_cmpstr(got, ==, want);
  free(got);
}

static void test_printer_strings_and_variants(void)
{
  ts_scope *scope = ts_scope_begin();
  assert_string(ts_tensor_to_string(ts_scalar_string("a")), "Tensor(b'a', shape=(), dtype=string)");
  const char *two[] = { "a", "bc" };
  assert_string(ts_tensor_to_string(ts_constant(TS_STRING, TS_SHAPE(2), two)),
                "Tensor([b'a' b'bc'], shape=(2,), dtype=string)");
  const char *odd[] = { "it's", "say \"hi\"", "tab\tnew\nline\\", "\x01\x7f" };
  assert_string(ts_tensor_format_values(ts_constant(TS_STRING, TS_SHAPE(2, 2), odd)),
                "[[b\"it's\" b'say \"hi\"']\n [b'tab\\tnew\\nline\\\\' b'\\x01\\x7f']]");
  assert_string(ts_tensor_format_values(ts_scalar_string("")), "b''");

  ts_tensor *ta = ts_tensor_array(TS_STRING, at(2));
  assert_string(ts_tensor_to_string(ta), "Tensor(<TensorList>, shape=(), dtype=variant)");
  ta = ts_tensor_array_write(ta, at(0), ts_scalar_string("x"));
  ta = ts_tensor_array_write(ta, at(1), ts_scalar_string("yz"));
  assert_string(ts_tensor_to_string(ts_tensor_array_read(ta, at(1))),
                "Tensor(b'yz', shape=(), dtype=string)");
  assert_string(ts_tensor_to_string(ts_tensor_array_stack(ta)),
                "Tensor([b'x' b'yz'], shape=(2,), dtype=string)");
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* ---- inside traced functions ------------------------------------------------------- */

static int host_runs;
static char *traced_text;

/* poly_func: the printer shows the symbolic argument as the guide does */
static ts_tensor *poly_func(ts_call *c)
{
  ts_tensor *a = ts_arg(c, 0);
  host_runs++;
  g_free(traced_text);
  char *s = ts_tensor_to_string(a);
  traced_text = g_strdup_printf("Tracing with %s", s);
  free(s);
  return a;
}

static ts_tensor *call1(ts_function *fn, ts_tensor *x)
{
  return ts_function_call(fn, (ts_value[]){ TS_TENSOR_VALUE(x) }, 1);
}

static void test_printer_symbolic(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("poly_func", poly_func, "a");
  g_assert_nonnull(call1(fn, ts_scalar_i32(1)));
  g_assert_cmpstr(traced_text, ==, "Tracing with Tensor(\"a:0\", shape=(), dtype=int32)");
  call1(fn, ts_scalar_f32(1.1f));
  g_assert_cmpstr(traced_text, ==, "Tracing with Tensor(\"a:0\", shape=(), dtype=float32)");
  ts_tensor *out = call1(fn, ts_scalar_string("a"));
  g_assert_cmpstr(traced_text, ==, "Tracing with Tensor(\"a:0\", shape=(), dtype=string)");
  assert_string(ts_tensor_to_string(out), "Tensor(b'a', shape=(), dtype=string)");
  ts_function_free(fn);

  fn = ts_function_new("poly_func", poly_func, "a");
  ts_spec spec = { TS_F32, TS_SHAPE(-1, 3) };
  g_assert_true(ts_function_set_input_signature(fn, &spec, 1));
  call1(fn, ts_zeros(TS_F32, TS_SHAPE(2, 3)));
  g_assert_cmpstr(traced_text, ==, "Tracing with Tensor(\"a:0\", shape=(None, 3), dtype=float32)");
  ts_function_free(fn);
  g_clear_pointer(&traced_text, g_free);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* The guide's f(x): print(x.shape, 'Tracing!'); tf.print(x, 'Executing') */
static ts_tensor *print_each_call(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  host_runs++;
  ts_print(x, "Executing");
  return x;
}

static void test_print_in_function(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("f", print_each_call, "x");
  host_runs = 0;
  capture_begin(&pending);
  call1(fn, i32_vector(1, (int32_t[]){ 1 }));
  call1(fn, i32_vector(1, (int32_t[]){ 2 }));
  g_assert_cmpint(host_runs, ==, 1);
  call1(fn, i32_vector(2, (int32_t[]){ 1, 2 }));
  call1(fn, i32_vector(2, (int32_t[]){ 3, 4 }));
  g_assert_cmpint(host_runs, ==, 2);
  char *out = capture_end(&pending);
  g_assert_cmpstr(out, ==, "[1] Executing\n[2] Executing\n[1 2] Executing\n[3 4] Executing\n");
  g_assert_cmpuint(pending.lines->len, ==, 4);
  g_assert_cmpstr(line(&pending, 3), ==, "[3 4] Executing");
  g_assert_cmpint(pending.n_with_node, ==, 4); /* printed by graph nodes */
  g_free(out);
  capture_free(&pending);

  /* the Print node is stateful and never pruned, though nothing uses it */
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
  int n_print = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (ts_node_op(n) != TS_OP_PRINT)
      continue;
    n_print++;
    g_assert_true(ts_node_is_stateful(n));
    g_assert_cmpint(ts_node_n_outputs(n), ==, 0);
    g_assert_cmpstr(ts_node_attr_name(n, 0), ==, "template");
    char *tmpl = ts_node_attr_to_string(n, 0);
    g_assert_nonnull(strstr(tmpl, "{} Executing"));
    free(tmpl);
  }
  g_assert_cmpint(n_print, ==, 1);

  /* run eagerly, the host code runs on every call */
  ts_run_functions_eagerly(true);
  host_runs = 0;
  capture_begin(&pending);
  call1(fn, i32_vector(1, (int32_t[]){ 5 }));
  call1(fn, i32_vector(1, (int32_t[]){ 6 }));
  out = capture_end(&pending);
  ts_run_functions_eagerly(false);
  g_assert_cmpint(host_runs, ==, 2);
  g_assert_cmpstr(out, ==, "[5] Executing\n[6] Executing\n");
  g_assert_cmpint(pending.n_with_node, ==, 0);
  g_free(out);
  capture_free(&pending);
  ts_function_free(fn);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* The guide's print('Final step', step, ': loss', loss) of a traced
 * function's results: ts_print_python prints tensors as Python's str()
 * does, at run time, the same in a graph and eagerly. */
static ts_tensor *print_python_results(ts_call *c)
{
  ts_tensor *step = ts_add(ts_arg(c, 0), ts_scalar_i32(1));
  ts_tensor *m = ts_constant(TS_I32, TS_SHAPE(2, 2), (int32_t[]){ 1, 2, 3, 4 });
  ts_print_python("Final step", step, ": loss", ts_scalar_f32(0.3469261f), "; m", m);
  return step;
}

static void test_print_python(void)
{
  static const char WANT[] =
    "Final step tf.Tensor(200, shape=(), dtype=int32) : loss tf.Tensor(0.3469261, shape=(), "
    "dtype=float32) ; m tf.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)\n";
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("f", print_python_results, "step");
  for (int eager = 0; eager < 2; eager++) {
    ts_run_functions_eagerly(eager);
    capture_begin(&pending);
    g_assert_nonnull(call1(fn, ts_scalar_i32(199)));
    char *out = capture_end(&pending);
    ts_run_functions_eagerly(false);
    g_assert_cmpstr(out, ==, WANT);
    g_assert_cmpint(pending.n_with_node, ==, eager ? 0 : 1); /* traced: a Print node's */
    g_free(out);
    capture_free(&pending);
  }
  ts_function_free(fn);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* Strings alone, and prints in program order with a variable's value. */
static ts_tensor *var_;

static ts_tensor *ordered_updates(ts_call *c)
{
  ts_print("start");
  ts_assign(var_, ts_mul(var_, ts_scalar_i32(2)));
  ts_print("doubled", var_);
  ts_assign_add(var_, ts_scalar_i32(1));
  ts_print("plus one", var_);
  return ts_read(var_);
}

static void test_variables_in_function(void)
{
  ts_scope *scope = ts_scope_begin();
  var_ = ts_variable_new(ts_scalar_i32(1), "v");
  ts_function *fn = ts_function_new("ordered_updates", ordered_updates, NULL);
  capture_begin(&pending);
  int32_t want[] = { 3, 7, 15 };
  for (int i = 0; i < 3; i++) {
    ts_tensor *r = ts_function_call(fn, NULL, 0);
    g_assert_nonnull(r);
    g_assert_cmpint(ts_tensor_get_i64(r, 0), ==, want[i]);
  }
  char *out = capture_end(&pending);
  g_assert_cmpstr(out, ==,
                  "start\ndoubled 2\nplus one 3\n"
                  "start\ndoubled 6\nplus one 7\n"
                  "start\ndoubled 14\nplus one 15\n");
  g_assert_cmpint(ts_function_trace_count(fn), ==, 1);
  g_assert_cmpint(ts_tensor_get_i64(var_, 0), ==, 15);
  g_free(out);
  capture_free(&pending);

  /* the stateful nodes are chained by control edges in program order */
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
  int last = -1, n_stateful = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (!ts_node_is_stateful(n))
      continue;
    if (last >= 0) {
      g_assert_cmpint(ts_node_n_control_inputs(n), ==, 1);
      g_assert_cmpint(ts_node_control_input(n, 0), ==, last);
    }
    last = i;
    n_stateful++;
  }
  /* 3 prints, 2 assigns, 4 reads: ts_read and one where each op takes var_ */
  g_assert_cmpint(n_stateful, ==, 9);

  ts_function_free(fn);
  ts_tensor_unref(var_);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* A read the graph uses after an assign: it keeps the value it read. */
static ts_tensor *read_then_assign(ts_call *c)
{
  ts_tensor *r = ts_read(var_);
  ts_assign(var_, ts_add(r, ts_scalar_f32(1)));
  return ts_mul(ts_arg(c, 0), r);
}

static void count_event(const ts_event *ev, void *user_data)
{
  (*(int *)user_data)++;
}

/* Reads whose values only compute ops take are the run's own references
 * to the variable's storage when nothing watches (exec/executable.c), ops
 * otherwise: an assign copies on write either way, every mode agrees. */
static void test_read_then_assign(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("read_then_assign", read_then_assign, "x");
  ts_value x = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 1, 10, 100 }));
  /* the graph holds this variable (captured when traced): v[i] = i + 1 + calls so far */
  var_ = ts_variable_new(ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 1, 2, 3 }), "v");
  int calls = 0;
  for (int mode = 0; mode < 3; mode++) { /* graph, graph with a listener, eager */
    int events = 0, id = mode == 1 ? ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_END), count_event, &events) : 0;
    ts_run_functions_eagerly(mode == 2);
    for (int k = 0; k < 3; k++, calls++) {
      ts_tensor *r = ts_function_call(fn, &x, 1);
      g_assert_nonnull(r);
      for (int i = 0; i < 3; i++) {
        g_assert_cmpfloat(ts_tensor_get_f64(r, i), ==, (i + 1 + calls) * ts_tensor_get_f64(x.tensor, i));
        g_assert_cmpfloat(ts_tensor_get_f64(var_, i), ==, i + 2 + calls);
      }
    }
    ts_run_functions_eagerly(false);
    if (id) {
      ts_listener_remove(id);
      g_assert_cmpint(events, >, 0);
    }
  }
  ts_tensor_unref(var_);
  ts_function_free(fn);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* The iterator side effect: host state advances only while tracing. */
static int iterator_pos;

static ts_tensor *side_effect(ts_call *c)
{
  static const int32_t items[] = { 0, 1, 2, 3 };
  ts_assign_add(var_, ts_scalar_i32(items[iterator_pos++]));
  ts_print("Value of variable:", var_);
  return ts_read(var_);
}

static void test_side_effect_seed(void)
{
  ts_scope *scope = ts_scope_begin();
  for (int eager = 0; eager < 2; eager++) {
    var_ = ts_variable_new(ts_scalar_i32(0), "var");
    iterator_pos = 0;
    ts_function *fn = ts_function_new("side_effect", side_effect, NULL);
    ts_function_set_run_eagerly(fn, eager);
    capture_begin(&pending);
    for (int i = 0; i < 3; i++)
      g_assert_nonnull(ts_function_call(fn, NULL, 0));
    char *out = capture_end(&pending);
    g_assert_cmpstr(out, ==,
                    eager ? "Value of variable: 0\nValue of variable: 1\nValue of variable: 3\n"
                          : "Value of variable: 0\nValue of variable: 0\nValue of variable: 0\n");
    g_free(out);
    capture_free(&pending);
    ts_function_free(fn);
    ts_tensor_unref(var_);
  }
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static ts_tensor *assign_mismatch(ts_call *c)
{
  ts_assign(var_, ts_arg(c, 0));
  return ts_read(var_);
}

static ts_tensor *assign_to_arg(ts_call *c)
{
  return ts_assign_add(ts_arg(c, 0), ts_scalar_i32(1));
}

static void test_variable_errors_while_tracing(void)
{
  ts_scope *scope = ts_scope_begin();
  var_ = ts_variable_new(ts_scalar_i32(0), "var");
  ts_function *fn = ts_function_new("assign_mismatch", assign_mismatch, "x");
  g_assert_null(call1(fn, ts_scalar_f32(1)));
  assert_error("AssignVariableOp", "the value f32[] does not match the variable i32[]");
  /* an unknown dim fits while tracing; the run checks the real size */
  ts_tensor_unref(var_);
  var_ = ts_variable_new(ts_zeros(TS_I32, TS_SHAPE(2)), "var");
  ts_spec spec = { TS_I32, TS_SHAPE(-1) };
  g_assert_true(ts_function_set_input_signature(fn, &spec, 1));
  assert_i32_values(call1(fn, i32_vector(2, (int32_t[]){ 4, 5 })), 2, (int32_t[]){ 4, 5 });
  g_assert_null(call1(fn, i32_vector(3, (int32_t[]){ 4, 5, 6 })));
  assert_error("AssignVariableOp", "the value i32[3] does not match the variable i32[2]");
  ts_function_free(fn);

  fn = ts_function_new("assign_to_arg", assign_to_arg, "x");
  g_assert_null(call1(fn, ts_scalar_i32(1)));
  assert_error("AssignAddVariableOp", "input 0 is not a variable");
  ts_function_free(fn);
  ts_tensor_unref(var_);
  ts_scope_end(scope);
}

/* A TensorArray filled by a host loop while tracing (unrolled). */
static ts_tensor *squares_unrolled(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  int64_t n = ts_tensor_dim(x, 0);
  ts_tensor *ta = ts_tensor_array(TS_I32, ts_scalar_i32((int32_t)n));
  for (int64_t i = 0; i < n; i++) {
    ts_tensor *xi = ts_gather(x, at(i), 0);
    ta = ts_tensor_array_write(ta, at(i), ts_mul(xi, xi));
  }
  ts_tensor *first = ts_tensor_array_read(ta, at(0));
  ts_print("first", first);
  return ts_tensor_array_stack(ta);
}

/* ---- lists as sequences, optionals ------------------------------------------------ */

static void test_sequence_ops(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *seq = ts_tensor_array(TS_I32, at(0));
  g_assert_cmpint(ts_tensor_get_i64(ts_tensor_list_length(seq), 0), ==, 0);
  seq = ts_tensor_list_insert(seq, at(0), i32_vector(2, (int32_t[]){ 1, 2 }));     /* [1 2] */
  seq = ts_tensor_list_insert(seq, ts_scalar_i64(1), i32_vector(1, (int32_t[]){ 3 })); /* append */
  seq = ts_tensor_list_insert(seq, at(-1), i32_vector(3, (int32_t[]){ 4, 5, 6 })); /* before the last */
  seq = ts_tensor_list_insert(seq, at(-3), i32_vector(1, (int32_t[]){ 0 }));       /* the front */
  ts_tensor *n = ts_tensor_list_length(seq);
  g_assert_cmpint(ts_tensor_dtype(n), ==, TS_I64);
  g_assert_cmpint(ts_tensor_get_i64(n, 0), ==, 4);
  g_assert_cmpint(ts_tensor_list_size(seq), ==, 4);
  assert_i32_values(ts_tensor_list_concat(seq, 0), 7, (int32_t[]){ 0, 1, 2, 4, 5, 6, 3 });
  ts_tensor *erased = ts_tensor_list_erase(ts_tensor_list_erase(seq, at(-1)), at(1));
  assert_i32_values(ts_tensor_list_concat(erased, -1), 4, (int32_t[]){ 0, 4, 5, 6 });
  /* the list erased from is unchanged */
  g_assert_cmpint(ts_tensor_list_size(seq), ==, 4);
  assert_i32_values(ts_tensor_list_item(seq, 3), 1, (int32_t[]){ 3 });
  g_assert_null(ts_tensor_list_item(seq, 4));
  g_assert_cmpint(ts_tensor_list_size(at(1)), ==, -1);

  /* concat along an inner axis; an empty list by its element shape */
  ts_tensor *rows = ts_tensor_array(TS_F32, at(0));
  rows = ts_tensor_list_insert(rows, at(0), ts_constant(TS_F32, TS_SHAPE(2, 1), (float[]){ 1, 2 }));
  rows = ts_tensor_list_insert(rows, at(1), ts_constant(TS_F32, TS_SHAPE(2, 2), (float[]){ 3, 4, 5, 6 }));
  ts_tensor *joined = ts_tensor_list_concat(rows, 1);
  g_assert_true(ts_shape_equal(ts_tensor_shape(joined), TS_SHAPE(2, 3)));
  float want[] = { 1, 3, 4, 2, 5, 6 };
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(joined, i), ==, want[i]);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static void test_sequence_errors(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *seq = ts_tensor_list_insert(ts_tensor_array(TS_I32, at(0)), at(0), at(1));
  g_assert_null(ts_tensor_list_insert(seq, at(2), at(2)));
  assert_error("TensorListInsert", "index 2 is out of range for a list of 1 elements (from -1 to 1)");
  g_assert_null(ts_tensor_list_insert(seq, at(0), ts_scalar_f32(2)));
  assert_error("TensorListInsert", "cannot write a float32 tensor to a TensorArray of int32");
  g_assert_null(ts_tensor_list_erase(seq, at(-2)));
  assert_error("TensorListErase", "index -2 is out of range for a list of 1 elements (from -1 to 0)");
  g_assert_null(ts_tensor_list_erase(ts_tensor_array(TS_I32, at(0)), at(0)));
  assert_error("TensorListErase", "index 0 is out of range: the list is empty");
  g_assert_null(ts_tensor_list_length(at(1)));
  assert_error("TensorListLength", "input 0 is i32[], not a TensorArray");
  g_assert_null(ts_tensor_list_concat(seq, 0));
  assert_error("TensorListConcat", "axis 0 is out of range for elements of rank 0");
  ts_tensor *mixed = ts_tensor_list_insert(ts_tensor_list_insert(ts_tensor_array(TS_I32, at(0)), at(0),
                                                                 i32_vector(2, (int32_t[]){ 1, 2 })),
                                           at(1), ts_constant(TS_I32, TS_SHAPE(1, 1), (int32_t[]){ 3 }));
  g_assert_null(ts_tensor_list_concat(mixed, 0));
  assert_error("TensorListConcat", "element 1 has shape (1, 1) but element 0 has (2,)");
  g_assert_null(ts_tensor_list_concat(
    ts_tensor_array_write(ts_tensor_array(TS_I32, at(2)), at(1), i32_vector(1, (int32_t[]){ 1 })), 0));
  assert_error("TensorListConcat", "element 0 of the TensorArray (size 2) was never written");
  /* elements of no size, their dims huge: the concatenated dim would overflow */
  ts_tensor *huge = ts_zeros(TS_F32, TS_SHAPE(0, (int64_t)1 << 62)), *big = ts_tensor_array(TS_F32, at(0));
  for (int k = 0; k < 2; k++)
    big = ts_tensor_list_insert(big, at(0), huge);
  g_assert_null(ts_tensor_list_concat(big, 1));
  assert_error("TensorListConcat", "the concatenated axis 1 overflows");
  ts_scope_end(scope);
}

static void test_optional_ops(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *some = ts_optional_from_value(i32_vector(2, (int32_t[]){ 7, 8 })), *none = ts_optional_none();
  g_assert_cmpint(ts_tensor_get_i64(ts_optional_has_value(some), 0), ==, 1);
  g_assert_cmpint(ts_tensor_get_i64(ts_optional_has_value(none), 0), ==, 0);
  assert_i32_values(ts_optional_get_value(some), 2, (int32_t[]){ 7, 8 });
  ts_tensor *value = NULL;
  g_assert_cmpint(ts_optional_value(some, &value), ==, 1);
  assert_i32_values(value, 2, (int32_t[]){ 7, 8 });
  g_assert_cmpint(ts_optional_value(none, &value), ==, 0);
  g_assert_cmpint(ts_optional_value(at(1), &value), ==, -1);
  assert_string(ts_tensor_to_string(some), "Tensor(<Optional>, shape=(), dtype=variant)");

  /* an optional of a list; a variable's value as it was */
  ts_tensor *seq = ts_tensor_list_insert(ts_tensor_array(TS_I32, at(0)), at(0), at(5));
  ts_tensor *inner = ts_optional_get_value(ts_optional_from_value(seq));
  g_assert_cmpint(ts_tensor_list_size(inner), ==, 1);
  ts_tensor *v = ts_variable_new(ts_scalar_i32(1), "v");
  ts_tensor *held = ts_optional_from_value(v);
  ts_assign(v, ts_scalar_i32(2));
  g_assert_cmpint(ts_tensor_get_i64(ts_optional_get_value(held), 0), ==, 1);
  ts_tensor_unref(v);

  g_assert_null(ts_optional_get_value(none));
  assert_error("OptionalGetValue", "the optional holds no value");
  g_assert_null(ts_optional_has_value(seq));
  assert_error("OptionalHasValue", "a variant that holds no optional");
  g_assert_null(ts_optional_has_value(at(1)));
  assert_error("OptionalHasValue", "input 0 is i32[], not an optional");
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* ---- strings ------------------------------------------------------------------------ */

static void assert_strings(ts_tensor *t, int n, const char *const *want)
{
  g_assert_nonnull(t);
  g_assert_cmpint(ts_tensor_dtype(t), ==, TS_STRING);
  g_assert_cmpint(ts_tensor_size(t), ==, n);
  char *const *got = ts_tensor_data(t);
  for (int i = 0; i < n; i++)
    g_assert_cmpstr(got[i], ==, want[i]);
}

static void test_string_ops(void)
{
  ts_scope *scope = ts_scope_begin();
  /* floats: the shortest text that reads back the same, as NumPy's str() */
  float f[] = { 0.1f, 1, -2.5f, 0.039187793f, 1e-5f, NAN, INFINITY, -INFINITY };
  ts_tensor *text = ts_as_string(ts_constant(TS_F32, TS_SHAPE(8), f));
  assert_strings(text, 8, (const char *const[]){ "0.1", "1.0", "-2.5", "0.039187793", "1e-05", "nan", "inf", "-inf" });
  ts_tensor *back = ts_string_to_number(text, TS_F32);
  for (int i = 0; i < 8; i++)
    g_assert_true(isnan(f[i]) ? isnan(ts_tensor_get_f64(back, i)) : ts_tensor_get_f64(back, i) == f[i]);
  assert_strings(ts_as_string(ts_constant(TS_F64, TS_SHAPE(1), (double[]){ 0.1 })), 1, (const char *const[]){ "0.1" });
  /* NumPy's str(): positional from 1e-4 up to 1e16, the shortest digits
   * padded with zeros; scientific outside (float32's 1e-4 is below it) */
  float f2[] = { 100, 1e15f, 25e9f, 1e-4f, 1e16f, 16777216.0f };
  assert_strings(ts_as_string(ts_constant(TS_F32, TS_SHAPE(6), f2)), 6,
                 (const char *const[]){ "100.0", "1000000000000000.0", "25000000000.0", "1e-04", "1e+16",
                                        "16777216.0" });
  double d2[] = { 0.0001, 123456789012345.6, 9.9e-5, 1e22, -250, -0.0 };
  assert_strings(ts_as_string(ts_constant(TS_F64, TS_SHAPE(6), d2)), 6,
                 (const char *const[]){ "0.0001", "123456789012345.6", "9.9e-05", "1e+22", "-250.0", "-0.0" });
  /* float16 in its own digits: str(np.float16(x)) for 0.1, 65504, 1e-5 */
  ts_tensor *h = ts_cast(ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 0.1f, 65504, 1e-5f }), TS_F16);
  assert_strings(ts_as_string(h), 3, (const char *const[]){ "0.1", "65500.0", "1e-05" });
  assert_strings(ts_as_string(i32_vector(2, (int32_t[]){ -7, 12 })), 2, (const char *const[]){ "-7", "12" });
  assert_strings(ts_as_string(ts_constant(TS_BOOL, TS_SHAPE(2), (bool[]){ true, false })), 2,
                 (const char *const[]){ "True", "False" });

  /* text to numbers: strtod's forms, the whole string */
  const char *in[] = { "NaN", "INF", "+INF", "-INF", "2.5e1" };
  ts_tensor *parsed = ts_string_to_number(ts_constant(TS_STRING, TS_SHAPE(5), in), TS_F64);
  g_assert_true(isnan(ts_tensor_get_f64(parsed, 0)));
  g_assert_cmpfloat(ts_tensor_get_f64(parsed, 1), ==, INFINITY);
  g_assert_cmpfloat(ts_tensor_get_f64(parsed, 2), ==, INFINITY);
  g_assert_cmpfloat(ts_tensor_get_f64(parsed, 3), ==, -INFINITY);
  g_assert_cmpfloat(ts_tensor_get_f64(parsed, 4), ==, 25);
  ts_tensor *words = ts_constant(TS_STRING, TS_SHAPE(2), (const char *[]){ "Monday", "ÉTÉ" });
  assert_strings(ts_string_upper(words), 2, (const char *const[]){ "MONDAY", "ÉTÉ" });
  assert_strings(ts_string_lower(words), 2, (const char *const[]){ "monday", "été" });

  g_assert_null(ts_string_to_number(ts_constant(TS_STRING, TS_SHAPE(2), (const char *[]){ "1", "1x" }), TS_F32));
  assert_error("StringToNumber", "element 1 '1x' is not a float32");
  g_assert_null(ts_string_to_number(ts_constant(TS_STRING, TS_SHAPE(1), (const char *[]){ "300" }), TS_U8));
  assert_error("StringToNumber", "element 0 '300' is not a uint8");
  g_assert_null(ts_string_lower(ts_constant(TS_STRING, TS_SHAPE(1), (const char *[]){ "\xff" })));
  assert_error("StringLower", "element 0 is not UTF-8 text");
  g_assert_null(ts_as_string(words));
  assert_error("AsString", "not numbers");
  g_assert_null(ts_string_upper(i32_vector(1, (int32_t[]){ 1 })));
  assert_error("StringUpper", "not strings");
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* Traced: the element types come from what made the list or the optional. */
static ts_tensor *sequence_and_optional(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *seq = ts_tensor_list_insert(ts_tensor_array(TS_F32, at(0)), at(0), x);
  seq = ts_tensor_list_insert(seq, at(0), ts_neg(x));
  ts_tensor *opt = ts_optional_from_value(ts_tensor_list_erase(seq, at(0)));
  ts_tensor *first = ts_tensor_array_read(ts_optional_get_value(opt), at(0));
  return ts_add(ts_add(ts_tensor_list_concat(seq, 0), ts_concat(((ts_tensor *[]){ first, first }), 2, 0)),
                ts_cast(ts_tensor_list_length(seq), TS_F32));
}

static void test_sequence_in_function(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("seq", sequence_and_optional, "x");
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 });
  ts_value arg = TS_TENSOR_VALUE(x);
  ts_tensor *r = ts_function_call(fn, &arg, 1);
  g_assert_nonnull(r);
  g_assert_true(ts_shape_equal(ts_tensor_shape(r), TS_SHAPE(4)));
  float want[] = { -1 + 1 + 2, -2 + 2 + 2, 1 + 1 + 2, 2 + 2 + 2 };
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(r, i), ==, want[i]);
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (ts_node_op(n) == TS_OP_TENSOR_LIST_CONCAT || ts_node_op(n) == TS_OP_TENSOR_LIST_GET_ITEM)
      g_assert_cmpint(ts_node_output_dtype(n, 0), ==, TS_F32);
    if (ts_node_op(n) == TS_OP_OPTIONAL_GET_VALUE)
      g_assert_cmpint(ts_node_output_dtype(n, 0), ==, TS_VARIANT);
  }
  ts_function_free(fn);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static void test_tensor_array_in_function(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("squares", squares_unrolled, "x");
  capture_begin(&pending);
  ts_tensor *r = call1(fn, i32_vector(3, (int32_t[]){ -2, 3, 4 }));
  assert_i32_values(r, 3, (int32_t[]){ 4, 9, 16 });
  r = call1(fn, i32_vector(3, (int32_t[]){ 1, 2, 3 }));
  assert_i32_values(r, 3, (int32_t[]){ 1, 4, 9 });
  g_assert_true(ts_shape_equal(ts_tensor_shape(r), TS_SHAPE(3)));
  char *out = capture_end(&pending);
  g_assert_cmpstr(out, ==, "first 4\nfirst 1\n");
  g_free(out);
  capture_free(&pending);
  g_assert_cmpint(ts_function_trace_count(fn), ==, 1);

  /* the read and the stack know the element dtype and shape at trace time */
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (ts_node_op(n) == TS_OP_TENSOR_LIST_GET_ITEM) {
      g_assert_cmpint(ts_node_output_dtype(n, 0), ==, TS_I32);
      g_assert_true(ts_shape_equal(ts_node_output_shape(n, 0), TS_SCALAR_SHAPE));
    } else if (ts_node_op(n) == TS_OP_TENSOR_LIST_STACK) {
      g_assert_cmpint(ts_node_output_dtype(n, 0), ==, TS_I32);
      g_assert_true(ts_shape_equal(ts_node_output_shape(n, 0), TS_SHAPE(-1)));
    }
  }

  ts_function_free(fn);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static ts_tensor *write_wrong_dtype(ts_call *c)
{
  ts_tensor *ta = ts_tensor_array(TS_I32, at(1));
  return ts_tensor_array_stack(ts_tensor_array_write(ta, at(0), ts_arg(c, 0)));
}

static ts_tensor *read_out_of_range(ts_call *c)
{
  ts_tensor *ta = ts_tensor_array_write(ts_tensor_array(TS_I32, at(1)), at(0), at(1));
  return ts_tensor_array_read(ta, ts_arg(c, 0));
}

/* An array made eagerly and captured by a function (as a constant). */
static ts_tensor *global_ta;

static ts_tensor *read_global(ts_call *c)
{
  return ts_mul(ts_tensor_array_read(global_ta, ts_arg(c, 0)), ts_scalar_f32(2));
}

static void test_tensor_array_captured(void)
{
  ts_scope *scope = ts_scope_begin();
  global_ta = ts_tensor_array(TS_F32, at(2));
  ts_tensor *row0 = ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 2 });
  ts_tensor *row1 = ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 3, 4 });
  global_ta = ts_tensor_array_write(global_ta, at(0), row0);
  global_ta = ts_tensor_array_write(global_ta, at(1), row1);
  ts_function *fn = ts_function_new("read_global", read_global, "i");
  ts_tensor *r = call1(fn, at(1));
  g_assert_nonnull(r);
  g_assert_cmpfloat(ts_tensor_get_f64(r, 0), ==, 6);
  g_assert_cmpfloat(ts_tensor_get_f64(r, 1), ==, 8);
  r = call1(fn, at(0));
  g_assert_cmpfloat(ts_tensor_get_f64(r, 1), ==, 4);
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
  const ts_node *mul = ts_graph_node(g, ts_graph_output(g, 0).node);
  g_assert_true(ts_shape_equal(ts_node_output_shape(mul, 0), TS_SHAPE(2)));
  ts_function_free(fn);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

static void test_tensor_array_errors_in_function(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("write_wrong_dtype", write_wrong_dtype, "x");
  g_assert_null(call1(fn, ts_scalar_f32(1)));
  assert_error("TensorListSetItem", "cannot write a float32 tensor to a TensorArray of int32");
  g_assert_cmpint(ts_function_n_concrete(fn), ==, 0);
  ts_function_free(fn);

  fn = ts_function_new("read_out_of_range", read_out_of_range, "i");
  g_assert_cmpint(ts_tensor_get_i64(call1(fn, at(0)), 0), ==, 1);
  g_assert_null(call1(fn, at(3)));
  assert_error("TensorListGetItem", "index 3 is out of range for a TensorArray of size 1");
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* ---- with AutoGraph control flow ------------------------------------------------ */

/* The guide's find_next_odd: v.assign(v + 1); if v % 2 == 0: v.assign(v + 1) */
static ts_tensor *find_next_odd(ts_call *c)
{
  ts_tensor *one = ts_scalar_i32(1);
  ts_assign(var_, ts_add(var_, one));
  TS_IF (ts_equal(ts_mod(var_, ts_scalar_i32(2)), ts_scalar_i32(0))) {
    ts_assign(var_, ts_add(var_, one));
  } TS_END_IF;
  return ts_read(var_);
}

static void test_find_next_odd(void)
{
  ts_scope *scope = ts_scope_begin();
  for (int eager = 0; eager < 2; eager++) {
    var_ = ts_variable_new(ts_scalar_i32(5), "v");
    ts_function *fn = ts_function_new("find_next_odd", find_next_odd, NULL);
    ts_function_set_run_eagerly(fn, eager);
    ts_tensor *r = ts_function_call(fn, NULL, 0);
    g_assert_nonnull(r);
    g_assert_cmpint(ts_tensor_get_i64(r, 0), ==, 7);
    g_assert_cmpint(ts_tensor_get_i64(var_, 0), ==, 7);
    /* 7 + 1 = 8 is even: 9 */
    g_assert_cmpint(ts_tensor_get_i64(ts_function_call(fn, NULL, 0), 0), ==, 9);
    g_assert_cmpint(ts_function_trace_count(fn), ==, eager ? 0 : 1);
    ts_function_free(fn);
    ts_tensor_unref(var_);
  }
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* The guide's square_if_positive_naive: a TensorArray filled in a loop. */
static ts_tensor *square_if_positive_naive(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *n = ts_gather(ts_shape(x), at(0), 0);
  ts_tensor *ta = ts_tensor_array(TS_I32, n);
  ts_tensor *i = NULL;
  TS_FOR (i, TS_RANGE(at(0), n, at(1)), &ta) {
    ts_tensor *xi = ts_gather(x, i, 0);
    TS_IF (ts_greater(xi, at(0)), &ta) {
      ta = ts_tensor_array_write(ta, i, ts_mul(xi, xi));
    } TS_ELSE {
      ta = ts_tensor_array_write(ta, i, xi);
    } TS_END_IF;
  }
  return ts_tensor_array_stack(ta);
}

static void test_tensor_array_in_loop(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_range(TS_I32, -5, 5, 1);
  ts_tensor *vectorized = ts_where(ts_greater(x, at(0)), ts_mul(x, x), x);
  for (int eager = 0; eager < 2; eager++) {
    ts_function *fn = ts_function_new("square_if_positive_naive", square_if_positive_naive, "x");
    ts_function_set_run_eagerly(fn, eager);
    ts_tensor *r = call1(fn, x);
    assert_i32_values(r, 10, (int32_t[]){ -5, -4, -3, -2, -1, 0, 1, 4, 9, 16 });
    g_assert_true(ts_shape_equal(ts_tensor_shape(r), TS_SHAPE(10)));
    g_assert_true(ts_tensor_get_i64(ts_reduce_min(ts_cast(ts_equal(r, vectorized), TS_I32),
                                                  TS_ALL_AXES, false), 0) == 1);
    if (!eager) {
      /* the stack after the While loop knows its dtype and element shape */
      const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
      ts_port out = ts_graph_output(g, 0);
      const ts_node *stack = ts_graph_node(g, out.node);
      g_assert_cmpint(ts_node_op(stack), ==, TS_OP_TENSOR_LIST_STACK);
      g_assert_cmpint(ts_node_output_dtype(stack, 0), ==, TS_I32);
      g_assert_true(ts_shape_equal(ts_node_output_shape(stack, 0), TS_SHAPE(-1)));
      assert_i32_values(call1(fn, i32_vector(3, (int32_t[]){ 3, -3, 0 })), 3,
                        (int32_t[]){ 9, -3, 0 });
    }
    ts_function_free(fn);
  }
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

/* Reads the list inside the loop, where it is a loop variable. */
static ts_tensor *running_sum(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *n = ts_gather(ts_shape(x), at(0), 0);
  ts_tensor *ta = ts_tensor_array(TS_F32, n);
  ta = ts_tensor_array_write(ta, at(0), ts_gather(x, at(0), 0));
  ts_tensor *i = NULL;
  TS_FOR (i, TS_RANGE(at(1), n, at(1)), &ta) {
    ts_tensor *prev = ts_tensor_array_read(ta, ts_sub(i, at(1)));
    ta = ts_tensor_array_write(ta, i, ts_add(prev, ts_gather(x, i, 0)));
  }
  return ts_tensor_array_stack(ta);
}

/* Two arrays of different dtypes as loop variables: a read inside the loop
 * cannot tell which dtype it gets. */
static ts_tensor *two_arrays(ts_call *c)
{
  ts_tensor *n = ts_gather(ts_shape(ts_arg(c, 0)), at(0), 0);
  ts_tensor *a = ts_tensor_array_write(ts_tensor_array(TS_F32, n), at(0), ts_scalar_f32(1));
  ts_tensor *b = ts_tensor_array_write(ts_tensor_array(TS_I32, n), at(0), at(1));
  ts_tensor *i = NULL;
  TS_FOR (i, TS_RANGE(at(1), n, at(1)), &a, &b) {
    b = ts_tensor_array_write(b, i, ts_tensor_array_read(b, ts_sub(i, at(1))));
  }
  return ts_tensor_array_stack(b);
}

static void test_tensor_array_loop_variable(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("running_sum", running_sum, "x");
  ts_tensor *r = call1(fn, ts_constant(TS_F32, TS_SHAPE(4), (float[]){ 1, 2, 3, 4.5f }));
  g_assert_nonnull(r);
  g_assert_cmpint(ts_tensor_dtype(r), ==, TS_F32);
  float want[] = { 1, 3, 6, 10.5f };
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(r, i), ==, want[i]);
  ts_function_free(fn);

  fn = ts_function_new("two_arrays", two_arrays, "x");
  g_assert_null(call1(fn, ts_zeros(TS_F32, TS_SHAPE(3))));
  assert_error("TensorListGetItem", "cannot tell the element dtype of this TensorArray");
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* Prints inside a loop run on every iteration of every call. */
static ts_tensor *count_up(ts_call *c)
{
  ts_tensor *n = ts_arg(c, 0);
  ts_tensor *i = NULL;
  TS_FOR (i, TS_RANGE(at(1), ts_add(n, at(1)), at(1))) {
    TS_IF (ts_equal(ts_mod(i, at(3)), at(0))) {
      ts_print("Fizz");
    } TS_ELSE {
      ts_print(i);
    } TS_END_IF;
  }
  return n;
}

static void test_print_in_loop(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("count_up", count_up, "n");
  capture_begin(&pending);
  call1(fn, at(4));
  call1(fn, at(3));
  char *out = capture_end(&pending);
  g_assert_cmpstr(out, ==, "1\n2\nFizz\n4\n1\n2\nFizz\n");
  g_assert_cmpint(pending.n_with_node, ==, 7);
  g_assert_cmpint(ts_function_trace_count(fn), ==, 1);
  g_free(out);
  capture_free(&pending);
  ts_function_free(fn);
  g_assert_false(ts_failed());
  ts_scope_end(scope);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  serial_check_install();
  g_test_add_func("/state/print/scalars", test_print_scalars);
  g_test_add_func("/state/print/arrays", test_print_arrays);
  g_test_add_func("/state/print/strings-and-mixed", test_print_strings_and_mixed);
  g_test_add_func("/state/print/errors", test_print_errors);
  g_test_add_func("/state/variables/ops", test_variables);
  g_test_add_func("/state/variables/errors", test_variable_errors);
  g_test_add_func("/state/tensor-array/ops", test_tensor_array);
  g_test_add_func("/state/tensor-array/copy-on-write", test_tensor_array_copy_on_write);
  g_test_add_func("/state/tensor-array/errors", test_tensor_array_errors);
  g_test_add_func("/state/sequence/ops", test_sequence_ops);
  g_test_add_func("/state/sequence/errors", test_sequence_errors);
  g_test_add_func("/state/optional/ops", test_optional_ops);
  g_test_add_func("/state/strings/ops", test_string_ops);
  g_test_add_func("/state/traced/sequence-and-optional", test_sequence_in_function);
  g_test_add_func("/state/printer/strings-and-variants", test_printer_strings_and_variants);
  g_test_add_func("/state/printer/symbolic", test_printer_symbolic);
  g_test_add_func("/state/traced/print", test_print_in_function);
  g_test_add_func("/state/traced/print-python", test_print_python);
  g_test_add_func("/state/traced/variables", test_variables_in_function);
  g_test_add_func("/state/traced/side-effect-seed", test_side_effect_seed);
  g_test_add_func("/state/traced/read-then-assign", test_read_then_assign);
  g_test_add_func("/state/traced/variable-errors", test_variable_errors_while_tracing);
  g_test_add_func("/state/traced/tensor-array", test_tensor_array_in_function);
  g_test_add_func("/state/traced/tensor-array-captured", test_tensor_array_captured);
  g_test_add_func("/state/traced/tensor-array-errors", test_tensor_array_errors_in_function);
  g_test_add_func("/state/autograph/find-next-odd", test_find_next_odd);
  g_test_add_func("/state/autograph/tensor-array-in-loop", test_tensor_array_in_loop);
  g_test_add_func("/state/autograph/tensor-array-loop-variable", test_tensor_array_loop_variable);
  g_test_add_func("/state/autograph/print-in-loop", test_print_in_loop);
  int rc = g_test_run();
  ts_release_all();
  return rc;
}
