/* test-core.c — dtypes, promotion, scopes and reference counts, errors,
 * the op registry and listener hooks. */
#include <math.h>
#include <glib.h>
#include <string.h>
#include <tracescope.h>

static void test_dtype_names(void)
{
  static const struct { ts_dtype dt; const char *name, *short_name; size_t size; } rows[] = {
    { TS_F32, "float32", "f32", 4 }, { TS_F64, "float64", "f64", 8 },
    { TS_I32, "int32", "i32", 4 },   { TS_I64, "int64", "i64", 8 },
    { TS_U8, "uint8", "u8", 1 },     { TS_BOOL, "bool", "bool", 1 },
    { TS_I8, "int8", "i8", 1 },      { TS_I16, "int16", "i16", 2 },
    { TS_U16, "uint16", "u16", 2 },  { TS_U32, "uint32", "u32", 4 },
    { TS_U64, "uint64", "u64", 8 },  { TS_F16, "float16", "f16", 2 },
    { TS_BF16, "bfloat16", "bf16", 2 },
    { TS_STRING, "string", "str", sizeof(char *) }, { TS_VARIANT, "variant", "variant", sizeof(void *) },
  };
  g_assert_cmpint(G_N_ELEMENTS(rows), ==, TS_DTYPE_COUNT);
  for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
    ts_dtype parsed;
    g_assert_cmpstr(ts_dtype_name(rows[i].dt), ==, rows[i].name);
    g_assert_cmpstr(ts_dtype_short_name(rows[i].dt), ==, rows[i].short_name);
    g_assert_cmpuint(ts_dtype_size(rows[i].dt), ==, rows[i].size);
    g_assert_true(ts_dtype_from_name(rows[i].name, &parsed) && parsed == rows[i].dt);
    g_assert_true(ts_dtype_from_name(rows[i].short_name, &parsed) && parsed == rows[i].dt);
  }
  ts_dtype unused;
  g_assert_false(ts_dtype_from_name("complex64", &unused));
  g_assert_false(ts_dtype_from_name(NULL, &unused));
  g_assert_true(ts_dtype_is_float(TS_F64) && !ts_dtype_is_float(TS_I32));
  g_assert_true(ts_dtype_is_float(TS_F16) && ts_dtype_is_float(TS_BF16));
  g_assert_true(ts_dtype_is_integer(TS_I8) && ts_dtype_is_integer(TS_U64));
  g_assert_true(ts_dtype_is_integer(TS_U8) && !ts_dtype_is_integer(TS_BOOL));
}

/* Argument specs give the newer dtypes: values in range, floats rounded. */
static void test_value_parse_new_dtypes(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_value v;
  g_assert_true(ts_value_parse("f16[3]=0.1,65520,-2", &v));
  g_assert_cmpint(ts_tensor_dtype(v.tensor), ==, TS_F16);
  const uint16_t *h = ts_tensor_data(v.tensor);
  g_assert_cmpuint(h[0], ==, 0x2e66); /* numpy: np.float16(0.1) */
  g_assert_cmpuint(h[1], ==, 0x7c00); /* rounds up past 65504: inf */
  g_assert_cmpfloat(ts_tensor_get_f64(v.tensor, 2), ==, -2);
  g_assert_true(ts_value_parse("bf16[2,2]:uniform", &v));
  g_assert_cmpint(ts_tensor_dtype(v.tensor), ==, TS_BF16);
  for (int i = 0; i < 4; i++) /* [0, 1): rounding to bfloat16 never reaches 1 */
    g_assert_true(ts_tensor_get_f64(v.tensor, i) >= 0 && ts_tensor_get_f64(v.tensor, i) < 1);
  g_assert_true(ts_value_parse("u16[2]=0,65535", &v));
  g_assert_cmpint(ts_tensor_get_i64(v.tensor, 1), ==, 65535);
  g_assert_true(ts_value_parse("i8[2]:range(-128)", &v));
  g_assert_cmpint(ts_tensor_get_i64(v.tensor, 0), ==, -128);
  g_assert_false(ts_value_parse("i8[1]=128", &v));
  g_assert_nonnull(strstr(ts_error_peek()->message, "128 is out of range for i8"));
  ts_error_clear();
  g_assert_false(ts_value_parse("u32[1]=-1", &v));
  g_assert_nonnull(strstr(ts_error_peek()->message, "out of range for u32"));
  ts_error_clear();
  ts_scope_end(scope);
}

/* The promotion chain bool < u8 < i32 < i64 < f32 < f64, written out. */
static void test_dtype_promotion(void)
{
  static const ts_dtype chain[] = { TS_BOOL, TS_U8, TS_I32, TS_I64, TS_F32, TS_F64 };
  for (size_t i = 0; i < G_N_ELEMENTS(chain); i++)
    for (size_t j = 0; j < G_N_ELEMENTS(chain); j++)
      g_assert_cmpint(ts_dtype_promote(chain[i], chain[j]), ==, chain[MAX(i, j)]);
  g_assert_cmpint(ts_dtype_promote(TS_I32, TS_F32), ==, TS_F32);
  g_assert_cmpint(ts_dtype_promote(TS_I64, TS_F32), ==, TS_F32);
  g_assert_cmpint(ts_dtype_promote(TS_U8, TS_I64), ==, TS_I64);
  /* the newer dtypes promote as NumPy's np.promote_types (checked there) */
  static const struct { ts_dtype a, b, want; } numpy[] = {
    { TS_I8, TS_U8, TS_I16 },    { TS_I8, TS_I16, TS_I16 },   { TS_U16, TS_I16, TS_I32 },
    { TS_U16, TS_I32, TS_I32 },  { TS_U32, TS_I32, TS_I64 },  { TS_U32, TS_U64, TS_U64 },
    { TS_U64, TS_I64, TS_F64 },  { TS_U64, TS_I8, TS_F64 },   { TS_U8, TS_U16, TS_U16 },
    { TS_F16, TS_F32, TS_F32 },  { TS_F16, TS_F64, TS_F64 },  { TS_BF16, TS_F32, TS_F32 },
    { TS_F16, TS_I8, TS_F16 },   { TS_BOOL, TS_U16, TS_U16 }, { TS_BOOL, TS_F16, TS_F16 },
    { TS_F16, TS_BF16, TS_F32 }, /* ml_dtypes: float16 with bfloat16 is float32 */
  };
  for (size_t i = 0; i < G_N_ELEMENTS(numpy); i++) {
    g_assert_cmpint(ts_dtype_promote(numpy[i].a, numpy[i].b), ==, numpy[i].want);
    g_assert_cmpint(ts_dtype_promote(numpy[i].b, numpy[i].a), ==, numpy[i].want);
  }
  g_assert_cmpint(ts_dtype_promote(TS_BOOL, TS_U8), ==, TS_U8);
}

static void test_shapes(void)
{
  g_assert_cmpint(ts_shape_size(TS_SCALAR_SHAPE), ==, 1);
  g_assert_cmpint(ts_shape_size(TS_SHAPE(2, 3, 4)), ==, 24);
  /* An empty list is NumPy's shape () and axis=(): rank 0, no axes (not
   * one dim of 0, as counting it as one argument gave). */
  g_assert_true(ts_shape_equal(TS_SHAPE(), TS_SCALAR_SHAPE));
  g_assert_cmpint(ts_shape_size(TS_SHAPE()), ==, 1);
  g_assert_cmpint(TS_AXES().n, ==, 0);
  g_assert_cmpint(TS_SHAPE(0).rank, ==, 1);
  g_assert_cmpint(TS_INTS(5, 6, 7).n, ==, 3);
  g_assert_cmpint(ts_shape_size(TS_SHAPE(2, 0)), ==, 0);
  g_assert_cmpint(ts_shape_size(TS_SHAPE(-1, 784)), ==, -1);
  g_assert_cmpint(ts_shape_size(TS_SHAPE(INT64_MAX, 2)), ==, TS_SHAPE_SIZE_INVALID);
  /* A zero dim makes it empty, however large the others multiply to. */
  g_assert_cmpint(ts_shape_size(TS_SHAPE(INT64_C(1) << 62, 4, 0)), ==, 0);
  g_assert_cmpint(ts_shape_size((ts_shape){ .rank = 9 }), ==, TS_SHAPE_SIZE_INVALID);
  g_assert_cmpint(ts_shape_size((ts_shape){ .rank = TS_RANK_UNKNOWN }), ==, -1);
  g_assert_cmpint(ts_shape_size((ts_shape){ .rank = -2 }), ==, TS_SHAPE_SIZE_INVALID);
  g_assert_true(ts_shape_equal(TS_SHAPE(2, 3), TS_SHAPE(2, 3)));
  g_assert_false(ts_shape_equal(TS_SHAPE(2, 3), TS_SHAPE(3, 2)));
  g_assert_false(ts_shape_equal(TS_SHAPE(2), TS_SHAPE(2, 1)));
  /* A rank past TS_MAX_RANK is no shape (and its dims past dim[7] are not read). */
  ts_shape nine = TS_SHAPE(1, 2, 3, 4, 5, 6, 7, 8);
  nine.rank = 9;
  g_assert_false(ts_shape_equal(nine, nine));
  nine.rank = -2;
  g_assert_false(ts_shape_equal(nine, nine));
  g_assert_true(ts_shape_equal((ts_shape){ .rank = TS_RANK_UNKNOWN }, (ts_shape){ .rank = TS_RANK_UNKNOWN }));
  g_assert_false(ts_shape_equal((ts_shape){ .rank = TS_RANK_UNKNOWN }, TS_SCALAR_SHAPE));
  char *unknown = ts_shape_dtype_string(TS_F32, (ts_shape){ .rank = TS_RANK_UNKNOWN });
  g_assert_cmpstr(unknown, ==, "f32[...]");
  free(unknown);

  char *s = ts_shape_dtype_string(TS_F32, TS_SHAPE(-1, 784));
  g_assert_cmpstr(s, ==, "f32[?,784]");
  free(s);
  s = ts_shape_dtype_string(TS_I32, TS_SCALAR_SHAPE);
  g_assert_cmpstr(s, ==, "i32[]");
  free(s);
}

static void test_tensor_basics(void)
{
  ts_scope *scope = ts_scope_begin();
  float v[] = { 1, 2, 3, 4, 5, 6 };
  ts_tensor *t = ts_constant(TS_F32, TS_SHAPE(2, 3), v);
  g_assert_nonnull(t);
  g_assert_cmpint(ts_tensor_dtype(t), ==, TS_F32);
  g_assert_cmpint(ts_tensor_rank(t), ==, 2);
  g_assert_cmpint(ts_tensor_dim(t, 0), ==, 2);
  g_assert_cmpint(ts_tensor_dim(t, -1), ==, 3);
  g_assert_cmpint(ts_tensor_dim(t, 2), ==, -1);
  g_assert_cmpint(ts_tensor_size(t), ==, 6);
  g_assert_cmpfloat(ts_tensor_get_f64(t, 5), ==, 6.0);
  g_assert_cmpint(ts_tensor_get_i64(t, 4), ==, 5);
  g_assert_true(((uintptr_t)ts_tensor_data(t) % 64) == 0);
  g_assert_true(memcmp(ts_tensor_data(t), v, sizeof v) == 0);

  ts_tensor *z = ts_tensor_new(TS_I64, TS_SHAPE(3));
  for (int i = 0; i < 3; i++)
    g_assert_cmpint(ts_tensor_get_i64(z, i), ==, 0);

  g_assert_cmpfloat(ts_tensor_get_f64(ts_scalar_f64(2.5), 0), ==, 2.5);
  g_assert_cmpint(ts_tensor_get_i64(ts_scalar_i64(-7), 0), ==, -7);
  g_assert_cmpint(ts_tensor_get_i64(ts_scalar_bool(true), 0), ==, 1);
  g_assert_cmpint(ts_tensor_rank(ts_scalar_i32(1)), ==, 0);

  /* a float read as an integer is truncated as Cast truncates it; NaN,
   * infinities and values past int64 give INT64_MIN (UBSan: no undefined
   * conversion) */
  float odd[] = { -2.7f, NAN, INFINITY, -INFINITY, 1e30f, 0x1p62f };
  ts_tensor *o = ts_constant(TS_F32, TS_SHAPE(6), odd);
  const int64_t want[] = { -2, INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, INT64_C(1) << 62 };
  for (int i = 0; i < 6; i++)
    g_assert_cmpint(ts_tensor_get_i64(o, i), ==, want[i]);
  g_assert_cmpint(ts_tensor_get_i64(ts_scalar_f64(-0x1p63), 0), ==, INT64_MIN);
  ts_scope_end(scope);
}

static void test_tensor_bad_shapes(void)
{
  ts_scope *scope = ts_scope_begin();
  g_assert_null(ts_tensor_new(TS_F32, TS_SHAPE(-3, 2)));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_cmpint(e->code, ==, TS_ERR_SHAPE);
  g_assert_nonnull(strstr(e->message, "f32[?,2]"));
  ts_error_free(e);

  g_assert_null(ts_tensor_new(TS_F64, TS_SHAPE(1000000000, 1000000000)));
  e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_NO_MEMORY);
  g_assert_nonnull(strstr(e->message, "too large"));
  ts_error_free(e);

  g_assert_null(ts_tensor_new((ts_dtype)42, TS_SHAPE(2)));
  e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_DTYPE);
  ts_error_free(e);
  ts_scope_end(scope);
}

/* Bad arguments of public functions record an error naming the function and
 * the argument (no GLib critical, which G_DEBUG=fatal-warnings would make fatal). */
static void expect_arg_error(const char *func, const char *what)
{
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_cmpint(e->code, ==, TS_ERR_INVALID_ARGUMENT);
  if (!strstr(e->message, func) || !strstr(e->message, what))
    g_error("error '%s' lacks '%s' or '%s'", e->message, func, what);
  ts_error_free(e);
}

static void test_public_argument_checks(void)
{
  ts_scope *scope = ts_scope_begin();
  g_assert_null(ts_constant(TS_F32, TS_SHAPE(2), NULL));
  expect_arg_error("ts_constant", "data");
  g_assert_nonnull(ts_constant(TS_F32, TS_SHAPE(0, 3), NULL)); /* nothing to copy */
  g_assert_null(ts_constant(TS_F32, (ts_shape){ .rank = 9 }, (float[]){ 1 }));
  g_assert_nonnull(strstr(ts_error_peek()->message, "rank 9"));
  ts_error_clear();
  g_assert_null(ts_constant(TS_F32, (ts_shape){ .rank = -1 }, (float[]){ 1 }));
  g_assert_nonnull(strstr(ts_error_peek()->message, "rank -1"));
  ts_error_clear();
  g_assert_null(ts_constant((ts_dtype)-1, TS_SHAPE(1), (float[]){ 1 }));
  g_assert_cmpint(ts_error_peek()->code, ==, TS_ERR_DTYPE);
  ts_error_clear();
  g_assert_cmpfloat(ts_tensor_get_f64(ts_scalar_f32(1), 3), ==, 0);
  expect_arg_error("ts_tensor_get_f64", "i < t->size");
  g_assert_cmpint(ts_tensor_get_i64(NULL, 0), ==, 0);
  expect_arg_error("ts_tensor_get_i64", "t");
  g_assert_false(ts_value_parse(NULL, &(ts_value){ 0 }));
  expect_arg_error("ts_value_parse", "spec != NULL");
  g_assert_cmpint(ts_tensor_rank(NULL), ==, -1);
  expect_arg_error("ts_tensor_rank", "t != NULL");
  g_assert_cmpint(ts_tensor_size(NULL), ==, -1);
  expect_arg_error("ts_tensor_size", "t != NULL");
  g_assert_null(ts_arg(NULL, 0));
  expect_arg_error("ts_arg_at", "call != NULL");
  g_assert_cmpint(ts_listener_add(1u << TS_EVENT_KIND_COUNT, NULL, NULL), ==, 0);
  expect_arg_error("ts_listener_add", "mask");
  ts_scope_end(scope);
}

static void test_scopes(void)
{
  int before = ts_scope_n_tensors();
  ts_scope *outer = ts_scope_begin();
  g_assert_cmpint(ts_scope_n_tensors(), ==, 0);
  ts_tensor *a = ts_scalar_i32(1);
  ts_scope *inner = ts_scope_begin();
  ts_tensor *b = ts_scalar_i32(2);
  ts_tensor *c = ts_scalar_i32(3);
  g_assert_cmpint(ts_scope_n_tensors(), ==, 2);
  g_assert_true(ts_scope_end_keep(inner, c) == c);
  (void)b;
  /* c moved to the outer scope beside a; b is gone. */
  g_assert_cmpint(ts_scope_n_tensors(), ==, 2);
  g_assert_cmpint(ts_tensor_get_i64(c, 0), ==, 3);

  /* A reference the caller owns outlives the scope. */
  ts_tensor *kept = ts_tensor_ref(a);
  ts_scope_end(outer);
  g_assert_cmpint(ts_scope_n_tensors(), ==, before);
  g_assert_cmpint(ts_tensor_get_i64(kept, 0), ==, 1);
  ts_tensor_unref(kept);
}

static void test_scope_forgotten_inner(void)
{
  ts_scope *outer = ts_scope_begin();
  ts_scope_begin();
  ts_scalar_f32(1);
  /* Ending the outer scope also ends the inner one a caller forgot. */
  ts_scope_end(outer);
  g_assert_false(ts_failed());
}

static void test_errors_first_wins(void)
{
  ts_scope *scope = ts_scope_begin();
  g_assert_false(ts_failed());
  ts_tensor *a = ts_constant(TS_F32, TS_SHAPE(2, 3), (float[6]){ 0 });
  ts_tensor *b = ts_constant(TS_F32, TS_SHAPE(2, 3), (float[6]){ 0 });
  int line = __LINE__ + 1;
  ts_tensor *bad = ts_matmul(a, b);
  g_assert_null(bad);
  g_assert_true(ts_failed());
  /* Later ops on the NULL pass the first error on. */
  g_assert_null(ts_relu(ts_add(bad, a)));
  const ts_error *peek = ts_error_peek();
  g_assert_cmpstr(peek->op, ==, "MatMul");

  ts_error *e = ts_error_take();
  g_assert_false(ts_failed());
  g_assert_cmpint(e->code, ==, TS_ERR_SHAPE);
  g_assert_cmpint(e->line, ==, line);
  g_assert_cmpstr(e->func, ==, "test_errors_first_wins");
  g_assert_true(g_str_has_suffix(e->file, "test-core.c"));
  char *prefix = g_strdup_printf("test-core.c:%d: MatMul: ", line);
  g_assert_true(g_str_has_prefix(e->message, prefix));
  g_assert_nonnull(strstr(e->message, "f32[2,3]"));
  g_free(prefix);
  ts_error_free(e);

  /* A NULL input with no pending error is itself reported. */
  g_assert_null(ts_neg(NULL));
  e = ts_error_take();
  g_assert_cmpstr(e->op, ==, "Neg");
  g_assert_nonnull(strstr(e->message, "input 0 is NULL"));
  ts_error_free(e);

  ts_error_set(TS_ERR_IO, (ts_loc){ 0 }, NULL, "first %d", 1);
  ts_error_set(TS_ERR_IO, (ts_loc){ 0 }, NULL, "second %d", 2);
  g_assert_cmpstr(ts_error_peek()->message, ==, "first 1");
  ts_error_clear();
  g_assert_null(ts_error_peek());
  g_assert_cmpstr(ts_error_code_name(TS_ERR_SHAPE), ==, "shape error");
  ts_scope_end(scope);
}

static void test_registry(void)
{
  for (int op = 0; op < TS_OP_COUNT; op++) {
    const char *name = ts_op_name((ts_op)op);
    g_assert_nonnull(name);
    g_assert_cmpint(ts_op_from_name(name), ==, op);
    for (int other = 0; other < op; other++)
      g_assert_cmpstr(ts_op_name((ts_op)other), !=, name);
  }
  g_assert_cmpint(ts_op_from_name("MatMul"), ==, TS_OP_MATMUL);
  g_assert_cmpint(ts_op_from_name("matmul"), ==, TS_OP_MATMUL);
  g_assert_cmpint(ts_op_from_name("Relu"), ==, TS_OP_RELU);
  g_assert_cmpint(ts_op_from_name("NoSuchOp"), ==, -1);
  g_assert_cmpstr(ts_op_name((ts_op)-1), ==, "invalid");
}

typedef struct {
  int begins, ends;
  ts_op last_op;
  int last_n_outputs;
  uint64_t last_start, last_end;
  int last_line;
} recorder;

static void record(const ts_event *ev, void *user_data)
{
  recorder *r = user_data;
  if (ev->kind == TS_EVENT_OP_BEGIN) {
    r->begins++;
    g_assert_cmpint(ev->op.n_outputs, ==, 0);
  } else {
    r->ends++;
    r->last_op = ev->op.op;
    r->last_n_outputs = ev->op.n_outputs;
    r->last_start = ev->op.start_ns;
    r->last_end = ev->op.end_ns;
    r->last_line = ev->op.loc.line;
    g_assert_cmpstr(ev->op.device, ==, "CPU");
    g_assert_cmpstr(ev->op.op_name, ==, ts_op_name(ev->op.op));
  }
}

static void test_listener_hooks(void)
{
  ts_scope *scope = ts_scope_begin();
  recorder r = { 0 };
  int id = ts_listener_add(TS_EVENT_MASK(TS_EVENT_OP_BEGIN) | TS_EVENT_MASK(TS_EVENT_OP_END),
                           record, &r);
  g_assert_cmpint(id, >, 0);
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(2, 2), (float[]){ 1, -2, 3, -4 });
  int line = __LINE__ + 1;
  ts_tensor *y = ts_relu(ts_neg(x));
  g_assert_nonnull(y);
  g_assert_cmpint(r.begins, ==, 2);
  g_assert_cmpint(r.ends, ==, 2);
  g_assert_cmpint(r.last_op, ==, TS_OP_RELU);
  g_assert_cmpint(r.last_n_outputs, ==, 1);
  g_assert_cmpint(r.last_line, ==, line);
  g_assert_cmpuint(r.last_start, >, 0);
  g_assert_cmpuint(r.last_end, >=, r.last_start);

  /* A failing op still ends, with no outputs. */
  ts_tensor *bad_idx = ts_constant(TS_I32, TS_SHAPE(1), (int32_t[]){ 9 });
  g_assert_null(ts_gather(x, bad_idx, 0));
  ts_error_clear();
  g_assert_cmpint(r.begins, ==, r.ends);
  g_assert_cmpint(r.last_n_outputs, ==, 0);

  ts_listener_remove(id);
  ts_relu(x);
  g_assert_cmpint(r.ends, ==, 3);
  ts_scope_end(scope);
}

static void test_cancel_flag(void)
{
  ts_scope *scope = ts_scope_begin();
  int flag = 0;
  ts_tensor *x = ts_scalar_f32(2);
  ts_watch_cancel_flag(&flag);
  g_assert_nonnull(ts_neg(x));
  __atomic_store_n(&flag, 1, __ATOMIC_RELAXED);
  g_assert_null(ts_neg(x));
  ts_error *e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_CANCELLED);
  g_assert_cmpstr(e->op, ==, "Neg");
  ts_error_free(e);
  ts_watch_cancel_flag(NULL);
  g_assert_nonnull(ts_neg(x));
  ts_scope_end(scope);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/core/dtype/names", test_dtype_names);
  g_test_add_func("/core/value-parse/new-dtypes", test_value_parse_new_dtypes);
  g_test_add_func("/core/dtype/promotion", test_dtype_promotion);
  g_test_add_func("/core/shape/basics", test_shapes);
  g_test_add_func("/core/tensor/basics", test_tensor_basics);
  g_test_add_func("/core/tensor/bad-shapes", test_tensor_bad_shapes);
  g_test_add_func("/core/public-argument-checks", test_public_argument_checks);
  g_test_add_func("/core/scope/nesting", test_scopes);
  g_test_add_func("/core/scope/forgotten-inner", test_scope_forgotten_inner);
  g_test_add_func("/core/error/first-wins", test_errors_first_wins);
  g_test_add_func("/core/registry/complete", test_registry);
  g_test_add_func("/core/listener/hooks", test_listener_hooks);
  g_test_add_func("/core/cancel-flag", test_cancel_flag);
  return g_test_run();
}
