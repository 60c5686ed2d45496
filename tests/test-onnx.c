/* test-onnx.c — ONNX import (engine/io/onnx_*.c): models written here
 * byte by byte (a small protobuf encoder below) are imported, run eagerly
 * and as traced functions; hostile files (truncated, cyclic, nested too
 * deep, sizes that contradict their data, external data outside the
 * model's folder, random bytes) give errors naming the file and what was
 * wrong, never a crash (ASan/UBSan run this). */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope-onnx.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- a protobuf encoder ------------------------------------------------------ */

typedef GByteArray pb;

static void put_varint(pb *b, uint64_t v)
{
  do {
    guint8 byte = (guint8)(v & 0x7f);
    v >>= 7;
    if (v)
      byte |= 0x80;
    g_byte_array_append(b, &byte, 1);
  } while (v);
}

static void put_int(pb *b, int field, int64_t v)
{
  put_varint(b, (uint64_t)field << 3);
  put_varint(b, (uint64_t)v);
}

static void put_bytes(pb *b, int field, const void *data, size_t n)
{
  put_varint(b, ((uint64_t)field << 3) | 2);
  put_varint(b, n);
  g_byte_array_append(b, data, (guint)n);
}

static void put_str(pb *b, int field, const char *s)
{
  put_bytes(b, field, s, strlen(s));
}

/* Appends sub as field and frees it. */
static void put_msg(pb *b, int field, pb *sub)
{
  put_bytes(b, field, sub->data, sub->len);
  g_byte_array_unref(sub);
}

static pb *msg(void)
{
  return g_byte_array_new();
}

/* ValueInfoProto: name, a float tensor type with dims (-1: the symbolic "N"). */
static pb *value_info(const char *name, int elem_type, int rank, const int64_t *dims)
{
  pb *shape = msg();
  for (int i = 0; i < rank; i++) {
    pb *dim = msg();
    if (dims[i] < 0)
      put_str(dim, 2, "N");
    else
      put_int(dim, 1, dims[i]);
    put_msg(shape, 1, dim);
  }
  pb *tensor_type = msg();
  put_int(tensor_type, 1, elem_type);
  put_msg(tensor_type, 2, shape);
  pb *type = msg();
  put_msg(type, 1, tensor_type);
  pb *v = msg();
  put_str(v, 1, name);
  put_msg(v, 2, type);
  return v;
}

/* NodeProto: op, name, inputs and outputs ("a,b"), attributes already encoded. */
static pb *node(const char *op, const char *name, const char *inputs, const char *outputs, pb *attrs)
{
  pb *n = msg();
  char **in = g_strsplit(inputs, ",", -1), **out = g_strsplit(outputs, ",", -1);
  for (int i = 0; in[i] && *inputs; i++)
    put_str(n, 1, in[i]);
  for (int i = 0; out[i]; i++)
    put_str(n, 2, out[i]);
  g_strfreev(in);
  g_strfreev(out);
  put_str(n, 3, name);
  put_str(n, 4, op);
  if (attrs) {
    g_byte_array_append(n, attrs->data, attrs->len);
    g_byte_array_unref(attrs);
  }
  return n;
}

static pb *int_attr(const char *name, int64_t v)
{
  pb *a = msg();
  put_str(a, 1, name);
  put_int(a, 3, v);
  put_int(a, 20, 2); /* INT */
  pb *wrapped = msg();
  put_msg(wrapped, 5, a);
  return wrapped;
}

/* Two attributes (each a wrapped AttributeProto) of one node. */
static pb *concat_attrs(pb *a, pb *b)
{
  g_byte_array_append(a, b->data, b->len);
  g_byte_array_unref(b);
  return a;
}

/* TensorProto: float dims with raw data (n floats), or external data. */
static pb *float_tensor(const char *name, int rank, const int64_t *dims, const float *data, size_t n)
{
  pb *t = msg();
  for (int i = 0; i < rank; i++)
    put_int(t, 1, dims[i]);
  put_int(t, 2, 1);
  put_str(t, 8, name);
  if (data)
    put_bytes(t, 9, data, n * sizeof(float));
  return t;
}

static pb *model(int opset, pb *graph)
{
  pb *m = msg();
  put_int(m, 1, 8);
  pb *op = msg();
  put_str(op, 1, "");
  put_int(op, 2, opset);
  put_msg(m, 8, op);
  put_msg(m, 7, graph);
  return m;
}

static char *tmp_dir;

static char *write_file(const char *name, const pb *bytes)
{
  char *path = g_build_filename(tmp_dir, name, NULL);
  g_assert_true(g_file_set_contents(path, (const char *)bytes->data, bytes->len, NULL));
  return path;
}

/* y = x + w (w an initializer [3]) under the scope "block", then Relu. */
static pb *add_relu_model(bool symbolic)
{
  int64_t dims[] = { symbolic ? -1 : 2, 3 }, wdims[] = { 3 };
  float w[] = { 1, -2, 3 };
  pb *g = msg();
  put_msg(g, 1, node("Add", "/block/Add", "x,w", "s", NULL));
  put_msg(g, 1, node("Relu", "/block/Relu", "s", "y", NULL));
  put_str(g, 2, "add_relu");
  put_msg(g, 5, float_tensor("w", 1, wdims, w, 3));
  put_msg(g, 11, value_info("x", 1, 2, dims));
  put_msg(g, 12, value_info("y", 1, 2, dims));
  return model(13, g);
}

static ts_onnx_model *load_ok(const char *path)
{
  ts_onnx_model *m = ts_onnx_load(path);
  if (!m)
    g_error("%s", ts_error_peek() ? ts_error_peek()->message : "no error");
  return m;
}

/* Loading fails with code and a message holding every one of the words. */
static void assert_load_fails(const char *path, ts_error_code code, const char *const *words)
{
  ts_onnx_model *m = ts_onnx_load(path);
  g_assert_null(m);
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_test_message("%s", e->message);
  g_assert_cmpstr(ts_error_code_name(e->code), ==, ts_error_code_name(code));
  g_assert_nonnull(strstr(e->message, path));
  for (int i = 0; words && words[i]; i++)
    if (!strstr(e->message, words[i]))
      g_error("'%s' not in: %s", words[i], e->message);
  ts_error_free(e);
}
#define WORDS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* ---- import and run ----------------------------------------------------------- */

static void test_run_eager_and_graph(void)
{
  pb *bytes = add_relu_model(false);
  char *path = write_file("add_relu.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  g_assert_cmpstr(ts_onnx_model_name(m), ==, "add_relu");
  g_assert_cmpint(ts_onnx_model_opset(m), ==, 13);
  g_assert_cmpint(ts_onnx_model_n_inputs(m), ==, 1); /* the initializer is no input */
  g_assert_cmpstr(ts_onnx_model_input_name(m, 0), ==, "x");
  g_assert_cmpint(ts_onnx_model_n_outputs(m), ==, 1);

  ts_scope *scope = ts_scope_begin();
  float xv[] = { 0, 1, -5, -1, 3, 0 };
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(2, 3), xv);
  ts_tensor *y;
  g_assert_true(ts_onnx_model_run(m, &x, 1, &y));
  float want[] = { 1, 0, 0, 0, 1, 3 };
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, want[i]);

  ts_function *fn = ts_onnx_model_function(m, 0);
  g_assert_nonnull(fn);
  ts_value arg = TS_TENSOR_VALUE(x);
  ts_tensor *gy = ts_function_call(fn, &arg, 1);
  g_assert_nonnull(gy);
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(gy, i), ==, want[i]);
  g_assert_cmpint(ts_function_n_concrete(fn), ==, 1);
  /* the nodes fold under the name scope of their ONNX names */
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
  bool add_in_block = false;
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    add_in_block |= ts_node_op(n) == TS_OP_ADD && strcmp(ts_node_scope(n), "block") == 0;
  }
  g_assert_true(add_in_block);

  /* a wrong input is an error naming it */
  ts_tensor *bad = ts_zeros(TS_F32, TS_SHAPE(3, 3));
  g_assert_false(ts_onnx_model_run(m, &bad, 1, &y));
  ts_error *e = ts_error_take();
  g_assert_nonnull(strstr(e->message, "input 0 'x' must be f32[2,3]"));
  ts_error_free(e);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

static void test_symbolic_dims(void)
{
  pb *bytes = add_relu_model(true);
  char *path = write_file("add_relu_n.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_spec spec = ts_onnx_model_input_spec(m, 0);
  g_assert_cmpint(spec.shape.rank, ==, 2);
  g_assert_cmpint(spec.shape.dim[0], ==, -1);
  g_assert_cmpint(spec.shape.dim[1], ==, 3);
  ts_function *fn = ts_onnx_model_function(m, 0);
  ts_scope *scope = ts_scope_begin();
  for (int rows = 1; rows <= 4; rows++) {
    ts_value arg = TS_TENSOR_VALUE(ts_ones(TS_F32, TS_SHAPE(rows, 3)));
    ts_tensor *y = ts_function_call(fn, &arg, 1);
    g_assert_nonnull(y);
    g_assert_cmpint(ts_tensor_dim(y, 0), ==, rows);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 2), ==, 4);
  }
  g_assert_cmpint(ts_function_trace_count(fn), ==, 1); /* one concrete function for every N */
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

static void test_unsupported_op_named(void)
{
  int64_t dims[] = { 3 };
  pb *g = msg();
  put_msg(g, 1, node("Bernoulli", "my_bernoulli", "x", "y", NULL));
  put_msg(g, 11, value_info("x", 1, 1, dims));
  put_msg(g, 12, value_info("y", 1, 1, dims));
  pb *bytes = model(13, g);
  char *path = write_file("bernoulli.onnx", bytes);
  g_byte_array_unref(bytes);
  assert_load_fails(path, TS_ERR_UNIMPLEMENTED, WORDS("Bernoulli", "my_bernoulli", "opset 13"));
  char *missing = ts_onnx_unsupported(path);
  g_assert_cmpstr(missing, ==, "Bernoulli");
  free(missing);
  g_free(path);
}

static void test_unsupported_attribute_named(void)
{
  int64_t dims[] = { 3 };
  pb *g = msg();
  put_msg(g, 1, node("Relu", "r", "x", "y", int_attr("alpha", 2)));
  put_msg(g, 11, value_info("x", 1, 1, dims));
  put_msg(g, 12, value_info("y", 1, 1, dims));
  pb *bytes = model(14, g);
  char *path = write_file("relu_attr.onnx", bytes);
  g_byte_array_unref(bytes);
  assert_load_fails(path, TS_ERR_UNIMPLEMENTED, WORDS("Relu", "'r'", "attribute 'alpha'"));
  g_free(path);
}

/* Softmax before opset 13 flattens at axis 1; from 13 it is per axis. */
static void test_softmax_by_opset(void)
{
  int64_t dims[] = { 2, 2 };
  float xv[] = { 0, 1, 2, 3 };
  for (int opset = 11; opset <= 13; opset += 2) {
    pb *g = msg();
    put_msg(g, 1, node("Softmax", "sm", "x", "y", int_attr("axis", 0)));
    put_msg(g, 11, value_info("x", 1, 2, dims));
    put_msg(g, 12, value_info("y", 1, 2, dims));
    pb *bytes = model(opset, g);
    char *path = write_file("softmax.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *m = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(2, 2), xv), *y;
    g_assert_true(ts_onnx_model_run(m, &x, 1, &y));
    double total = 0;
    for (int i = 0; i < 4; i++)
      total += ts_tensor_get_f64(y, i);
    if (opset == 11) /* axis 0: the whole [1, 4] row sums to 1 */
      g_assert_cmpfloat(fabs(total - 1), <, 1e-6);
    else /* each column sums to 1 */
      g_assert_cmpfloat(fabs(ts_tensor_get_f64(y, 0) + ts_tensor_get_f64(y, 2) - 1), <, 1e-6);
    ts_scope_end(scope);
    ts_onnx_model_free(m);
    g_free(path);
  }
}

/* Opset 1 models load when each op meant the same since (Not); an op that
 * changed later (Relu: consumed_inputs until 6) is refused, by name. */
static void test_old_opsets(void)
{
  int64_t dims[] = { 2 };
  pb *g = msg();
  put_msg(g, 1, node("Not", "not", "x", "y", NULL));
  put_msg(g, 11, value_info("x", 9, 1, dims));
  put_msg(g, 12, value_info("y", 9, 1, dims));
  pb *bytes = model(1, g);
  char *path = write_file("not_opset1.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  uint8_t xv[] = { 1, 0 };
  ts_tensor *x = ts_constant(TS_BOOL, TS_SHAPE(2), xv), *y;
  g_assert_true(ts_onnx_model_run(m, &x, 1, &y));
  g_assert_cmpfloat(ts_tensor_get_f64(y, 0), ==, 0);
  g_assert_cmpfloat(ts_tensor_get_f64(y, 1), ==, 1);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);

  g = msg();
  put_msg(g, 1, node("Relu", "old_relu", "x", "y", NULL));
  put_msg(g, 11, value_info("x", 1, 1, dims));
  put_msg(g, 12, value_info("y", 1, 1, dims));
  bytes = model(5, g);
  path = write_file("relu_opset5.onnx", bytes);
  g_byte_array_unref(bytes);
  assert_load_fails(path, TS_ERR_UNIMPLEMENTED, WORDS("Relu", "old_relu", "from opset 6"));
  g_free(path);
}

/* Compress and NonZero: output shapes from values.  Known when the graph
 * is built (an initializer), they trace; from a graph input, they run
 * eagerly and the trace is refused, naming why. */
static void test_value_dependent_shapes(void)
{
  int64_t xdims[] = { 2, 3 }, ndims[] = { 2, -1 };
  uint8_t keep[] = { 0, 1 };
  pb *cond = msg();
  put_int(cond, 1, 2);
  put_int(cond, 2, 9); /* bool */
  put_str(cond, 8, "keep");
  put_bytes(cond, 9, keep, 2);
  pb *g = msg();
  put_msg(g, 1, node("Compress", "compress", "x,keep", "rows", int_attr("axis", 0)));
  put_msg(g, 1, node("NonZero", "nonzero", "rows", "where", NULL));
  put_str(g, 2, "value_shapes");
  put_msg(g, 5, cond);
  put_msg(g, 11, value_info("x", 1, 2, xdims));
  put_msg(g, 12, value_info("where", 7, 2, ndims));
  pb *bytes = model(13, g);
  char *path = write_file("value_shapes.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  float xv[] = { 1, 2, 3, 0, 5, 0 };
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(2, 3), xv), *y;
  g_assert_true(ts_onnx_model_run(m, &x, 1, &y));
  /* rows = [[0, 5, 0]]: its non-zero element is at (0, 1) */
  g_assert_cmpint(ts_tensor_dim(y, 0), ==, 2);
  g_assert_cmpint(ts_tensor_dim(y, 1), ==, 1);
  g_assert_cmpint(ts_tensor_get_i64(y, 0), ==, 0);
  g_assert_cmpint(ts_tensor_get_i64(y, 1), ==, 1);
  ts_value arg = TS_TENSOR_VALUE(x);
  g_assert_null(ts_function_call(ts_onnx_model_function(m, 0), &arg, 1));
  ts_error *e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_UNIMPLEMENTED);
  g_assert_nonnull(strstr(e->message, "nonzero"));
  g_assert_nonnull(strstr(e->message, "depends on its values"));
  ts_error_free(e);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

static pb *string_attr(const char *name, const char *v)
{
  pb *a = msg();
  put_str(a, 1, name);
  put_str(a, 4, v);
  put_int(a, 20, 3); /* STRING */
  pb *wrapped = msg();
  put_msg(wrapped, 5, a);
  return wrapped;
}

/* Einsum: an implicit equation's output is its letters met once, sorted
 * ("kj,ji" is "ik"); a diagonal of unequal dims is refused by name. */
static void test_einsum(void)
{
  int64_t adims[] = { 2, 3 }, bdims[] = { 3, 2 }, ydims[] = { 2, 2 };
  const char *equations[] = { "kj,ji", "ii,ji->i" };
  for (int e = 0; e < 2; e++) {
    pb *g = msg();
    put_msg(g, 1, node("Einsum", "ein", "a,b", "y", string_attr("equation", equations[e])));
    put_msg(g, 11, value_info("a", 1, 2, adims));
    put_msg(g, 11, value_info("b", 1, 2, bdims));
    put_msg(g, 12, value_info("y", 1, 2, ydims));
    pb *bytes = model(13, g);
    char *path = write_file("einsum.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *m = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    float av[] = { 1, 2, 3, 4, 5, 6 }, bv[] = { 1, 0, 0, 1, 1, 1 };
    ts_tensor *in[2] = { ts_constant(TS_F32, TS_SHAPE(2, 3), av), ts_constant(TS_F32, TS_SHAPE(3, 2), bv) }, *y;
    if (e == 0) {
      /* y[i,k] = sum_j a[k,j] b[j,i]: (a b) transposed */
      g_assert_true(ts_onnx_model_run(m, in, 2, &y));
      float want[] = { 4, 10, 5, 11 };
      for (int i = 0; i < 4; i++)
        g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, want[i]);
    } else {
      g_assert_false(ts_onnx_model_run(m, in, 2, &y));
      ts_error *err = ts_error_take();
      g_assert_cmpint(err->code, ==, TS_ERR_UNIMPLEMENTED);
      g_assert_nonnull(strstr(err->message, "'ii,ji->i'"));
      ts_error_free(err);
    }
    ts_scope_end(scope);
    ts_onnx_model_free(m);
    g_free(path);
  }
}

/* The window functions: a size known only when the model runs, the
 * periodic and symmetric forms, the output dtype; a negative size is
 * refused naming the node. */
static void test_windows(void)
{
  int64_t wdims[] = { -1 };
  pb *g = msg();
  put_msg(g, 1, node("HannWindow", "hann", "n", "hann", NULL));
  put_msg(g, 1, node("HammingWindow", "hamming", "n", "hamming", int_attr("periodic", 0)));
  put_msg(g, 1, node("BlackmanWindow", "blackman", "n", "blackman", int_attr("output_datatype", 11)));
  put_msg(g, 11, value_info("n", 7, 0, NULL));
  put_msg(g, 12, value_info("hann", 1, 1, wdims));
  put_msg(g, 12, value_info("hamming", 1, 1, wdims));
  put_msg(g, 12, value_info("blackman", 11, 1, wdims));
  pb *bytes = model(17, g);
  char *path = write_file("windows.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *n = ts_scalar_i64(4), *y[3];
  g_assert_true(ts_onnx_model_run(m, &n, 1, y));
  double hann[] = { 0, 0.5, 1, 0.5 };                         /* periodic: N = 4 */
  double hamming[] = { 4.0 / 46, 71.0 / 92, 71.0 / 92, 4.0 / 46 }; /* symmetric: N = 3 */
  double blackman[] = { 0, 0.34, 1, 0.34 };
  const double *want[] = { hann, hamming, blackman };
  for (int k = 0; k < 3; k++) {
    g_assert_cmpint(ts_tensor_dtype(y[k]), ==, k == 2 ? TS_F64 : TS_F32);
    g_assert_cmpint(ts_tensor_size(y[k]), ==, 4);
    for (int i = 0; i < 4; i++)
      g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y[k], i), want[k][i], 1e-6);
  }
  n = ts_scalar_i64(-1);
  g_assert_false(ts_onnx_model_run(m, &n, 1, y));
  ts_error *e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(e->message, "hann"));
  g_assert_nonnull(strstr(e->message, "size -1"));
  ts_error_free(e);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* Scatter (opsets 9 and 10) is ScatterElements under its old name. */
static void test_scatter_old_name(void)
{
  int64_t ddims[] = { 2, 3 }, idims[] = { 2, 1 };
  pb *g = msg();
  put_msg(g, 1, node("Scatter", "scatter", "data,indices,updates", "y", int_attr("axis", 1)));
  put_msg(g, 11, value_info("data", 1, 2, ddims));
  put_msg(g, 11, value_info("indices", 7, 2, idims));
  put_msg(g, 11, value_info("updates", 1, 2, idims));
  put_msg(g, 12, value_info("y", 1, 2, ddims));
  pb *bytes = model(10, g);
  char *path = write_file("scatter.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *in[3] = { ts_zeros(TS_F32, TS_SHAPE(2, 3)),
                       ts_constant(TS_I64, TS_SHAPE(2, 1), (int64_t[]){ 1, 0 }),
                       ts_constant(TS_F32, TS_SHAPE(2, 1), (float[]){ 5, 7 }) }, *y;
  g_assert_true(ts_onnx_model_run(m, in, 3, &y));
  float want[] = { 0, 5, 0, 7, 0, 0 };
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, want[i]);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* BitShift on uint8: wrapping left shifts, right shifts, 0 past the
 * width; a signed operand is refused naming the node. */
static void test_bit_shift(void)
{
  int64_t dims[] = { 4 };
  const char *directions[] = { "LEFT", "RIGHT" };
  uint8_t want[2][4] = { { 32, 16, 0, 128 }, { 8, 1, 0, 0 } };
  for (int k = 0; k < 2; k++) {
    pb *g = msg();
    put_msg(g, 1, node("BitShift", "shift", "x,s", "y", string_attr("direction", directions[k])));
    put_msg(g, 11, value_info("x", 2, 1, dims));
    put_msg(g, 11, value_info("s", 2, 1, dims));
    put_msg(g, 12, value_info("y", 2, 1, dims));
    pb *bytes = model(11, g);
    char *path = write_file("bitshift.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *m = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    ts_tensor *in[2] = { ts_constant(TS_U8, TS_SHAPE(4), (uint8_t[]){ 16, 4, 1, 3 }),
                         ts_constant(TS_U8, TS_SHAPE(4), (uint8_t[]){ 1, 2, 8, 7 }) }, *y;
    g_assert_true(ts_onnx_model_run(m, in, 2, &y));
    g_assert_cmpint(ts_tensor_dtype(y), ==, TS_U8);
    for (int i = 0; i < 4; i++)
      g_assert_cmpint(ts_tensor_get_i64(y, i), ==, want[k][i]);
    ts_scope_end(scope);
    ts_onnx_model_free(m);
    g_free(path);
  }
  pb *g = msg();
  put_msg(g, 1, node("Cast", "signed", "x", "xi", int_attr("to", 6)));
  put_msg(g, 1, node("BitShift", "shift", "xi,s", "y", string_attr("direction", "LEFT")));
  put_msg(g, 11, value_info("x", 2, 1, dims));
  put_msg(g, 11, value_info("s", 2, 1, dims));
  put_msg(g, 12, value_info("y", 6, 1, dims));
  pb *bytes = model(11, g);
  char *path = write_file("bitshift_signed.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *in[2] = { ts_zeros(TS_U8, TS_SHAPE(4)), ts_zeros(TS_U8, TS_SHAPE(4)) }, *y;
  g_assert_false(ts_onnx_model_run(m, in, 2, &y));
  ts_error *e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_DTYPE);
  g_assert_nonnull(strstr(e->message, "'shift'"));
  g_assert_nonnull(strstr(e->message, "unsigned integers, got int32"));
  ts_error_free(e);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* ReverseSequence: each batch entry's first sequence_lens steps
 * reversed (time on axis 0, batch on axis 1); a length past the
 * sequence is refused naming the node. */
static void test_reverse_sequence(void)
{
  int64_t xdims[] = { 3, 2 }, ldims[] = { 2 };
  pb *g = msg();
  put_msg(g, 1, node("ReverseSequence", "reverse", "x,lens", "y", NULL));
  put_msg(g, 11, value_info("x", 1, 2, xdims));
  put_msg(g, 11, value_info("lens", 7, 1, ldims));
  put_msg(g, 12, value_info("y", 1, 2, xdims));
  pb *bytes = model(10, g);
  char *path = write_file("reverse_sequence.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *in[2] = { ts_constant(TS_F32, TS_SHAPE(3, 2), (float[]){ 0, 1, 10, 11, 20, 21 }),
                       ts_constant(TS_I64, TS_SHAPE(2), (int64_t[]){ 2, 3 }) }, *y;
  g_assert_true(ts_onnx_model_run(m, in, 2, &y));
  float want[] = { 10, 21, 0, 11, 20, 1 };
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, want[i]);
  in[1] = ts_constant(TS_I64, TS_SHAPE(2), (int64_t[]){ 4, 1 });
  g_assert_false(ts_onnx_model_run(m, in, 2, &y));
  ts_error *e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(e->message, "'reverse'"));
  g_assert_nonnull(strstr(e->message, "sequence_lens[0] = 4 is outside 0..3"));
  ts_error_free(e);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* An int64 initializer of rank 0 (n 1, dims NULL) or 1. */
static pb *i64_tensor(const char *name, int rank, const int64_t *v, size_t n)
{
  pb *t = msg();
  if (rank == 1)
    put_int(t, 1, (int64_t)n);
  put_int(t, 2, 7); /* INT64 */
  put_str(t, 8, name);
  put_bytes(t, 9, v, n * sizeof *v);
  return t;
}

/* Slice with step -1 (the ReverseV2 row, then a slice): part of axis 0
 * and all of axis 1 (an end below -dim), as numpy's x[2:0:-1, ::-1]. */
static void test_slice_negative_steps(void)
{
  int64_t xdims[] = { 3, 4 }, starts[] = { 2, -1 }, ends[] = { 0, INT64_MIN }, axes[] = { 0, 1 },
          steps[] = { -1, -1 };
  pb *g = msg();
  put_msg(g, 1, node("Slice", "flip", "x,starts,ends,axes,steps", "y", NULL));
  put_msg(g, 5, i64_tensor("starts", 1, starts, 2));
  put_msg(g, 5, i64_tensor("ends", 1, ends, 2));
  put_msg(g, 5, i64_tensor("axes", 1, axes, 2));
  put_msg(g, 5, i64_tensor("steps", 1, steps, 2));
  put_msg(g, 11, value_info("x", 1, 2, xdims));
  put_msg(g, 12, value_info("y", 1, 0, NULL));
  pb *bytes = model(13, g);
  char *path = write_file("slice_negative_steps.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_reshape(ts_range(TS_F32, 0, 12, 1), TS_SHAPE(3, 4)), *y;
  g_assert_true(ts_onnx_model_run(m, &x, 1, &y));
  g_assert_cmpint(ts_tensor_dim(y, 0), ==, 2);
  g_assert_cmpint(ts_tensor_dim(y, 1), ==, 4);
  float want[] = { 11, 10, 9, 8, 7, 6, 5, 4 };
  for (int i = 0; i < 8; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, want[i]);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* The model at path loads, and running it on x fails with code and words. */
static void assert_run_fails(const char *path, ts_tensor *x, ts_error_code code, const char *const *words)
{
  ts_onnx_model *m = load_ok(path);
  ts_tensor *y[1];
  g_assert_false(ts_onnx_model_run(m, &x, 1, y));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_test_message("%s", e->message);
  g_assert_cmpstr(ts_error_code_name(e->code), ==, ts_error_code_name(code));
  for (int i = 0; words[i]; i++)
    if (!strstr(e->message, words[i]))
      g_error("'%s' not in: %s", words[i], e->message);
  ts_error_free(e);
  ts_onnx_model_free(m);
}

/* Opset 18: the reductions take their axes as an input (and
 * noop_with_empty_axes), Split num_outputs (uneven: the last part
 * smaller), Pad axes, OptionalHasElement and OptionalGetElement a plain
 * tensor (or none); the same reduction at opset 17 with an axes input is
 * refused, and so is Resize's antialias. */
static void test_opset_18(void)
{
  int64_t xdims[] = { 2, 5 }, one[] = { 1 }, pads[] = { 1, 2 };
  pb *g = msg();
  put_msg(g, 1, node("ReduceMean", "mean", "x,axes", "r", int_attr("keepdims", 0)));
  put_msg(g, 1, node("ReduceMax", "noop", "x", "nm", int_attr("noop_with_empty_axes", 1)));
  put_msg(g, 1, node("Split", "split", "x", "a,b", concat_attrs(int_attr("axis", 1), int_attr("num_outputs", 2))));
  put_msg(g, 1, node("Pad", "pad", "x,pads,,axes", "p", NULL));
  put_msg(g, 1, node("OptionalHasElement", "has", "x", "h1", NULL));
  put_msg(g, 1, node("OptionalHasElement", "has_none", "", "h0", NULL));
  put_msg(g, 1, node("OptionalGetElement", "get", "x", "ge", NULL));
  put_msg(g, 5, i64_tensor("axes", 1, one, 1));
  put_msg(g, 5, i64_tensor("pads", 1, pads, 2));
  put_msg(g, 11, value_info("x", 1, 2, xdims));
  const char *outs[] = { "r", "nm", "a", "b", "p", "h1", "h0", "ge" };
  for (int i = 0; i < 8; i++)
    put_msg(g, 12, value_info(outs[i], 1, 0, NULL));
  pb *bytes = model(18, g);
  char *path = write_file("opset18.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_reshape(ts_range(TS_F32, 0, 10, 1), TS_SHAPE(2, 5)), *y[8];
  g_assert_true(ts_onnx_model_run(m, &x, 1, y));
  const struct { int rank; int64_t d0, d1; double v[16]; } want[] = {
    { 1, 2, 0, { 2, 7 } },
    { 2, 2, 5, { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
    { 2, 2, 3, { 0, 1, 2, 5, 6, 7 } },
    { 2, 2, 2, { 3, 4, 8, 9 } },
    { 2, 2, 8, { 0, 0, 1, 2, 3, 4, 0, 0, 0, 5, 6, 7, 8, 9, 0, 0 } },
    { 0, 0, 0, { 1 } },
    { 0, 0, 0, { 0 } },
    { 2, 2, 5, { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 } },
  };
  for (int k = 0; k < 8; k++) {
    g_assert_cmpint(ts_tensor_rank(y[k]), ==, want[k].rank);
    if (want[k].rank > 0)
      g_assert_cmpint(ts_tensor_dim(y[k], 0), ==, want[k].d0);
    if (want[k].rank == 2)
      g_assert_cmpint(ts_tensor_dim(y[k], 1), ==, want[k].d1);
    for (int64_t i = 0; i < ts_tensor_size(y[k]); i++)
      g_assert_cmpfloat(ts_tensor_get_f64(y[k], i), ==, want[k].v[i]);
  }
  ts_onnx_model_free(m);
  g_free(path);

  g = msg();
  put_msg(g, 1, node("ReduceMean", "mean", "x,axes", "r", NULL));
  put_msg(g, 5, i64_tensor("axes", 1, one, 1));
  put_msg(g, 11, value_info("x", 1, 2, xdims));
  put_msg(g, 12, value_info("r", 1, 0, NULL));
  bytes = model(17, g);
  path = write_file("opset17_axes_input.onnx", bytes);
  g_byte_array_unref(bytes);
  assert_run_fails(path, x, TS_ERR_FORMAT, (const char *const[]){ "mean", "opset 18", NULL });
  g_free(path);

  int64_t sdims[] = { 4 };
  float scales[] = { 1, 1, 2, 2 };
  int64_t idims[] = { 1, 1, 2, 2 };
  g = msg();
  put_msg(g, 1, node("Resize", "resize", "x,,scales", "y",
                     concat_attrs(int_attr("antialias", 1), string_attr("mode", "linear"))));
  put_msg(g, 5, float_tensor("scales", 1, sdims, scales, 4));
  put_msg(g, 11, value_info("x", 1, 4, idims));
  put_msg(g, 12, value_info("y", 1, 0, NULL));
  bytes = model(18, g);
  path = write_file("resize_antialias.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_tensor *image = ts_ones(TS_F32, TS_SHAPE(1, 1, 2, 2));
  assert_run_fails(path, image, TS_ERR_UNIMPLEMENTED, (const char *const[]){ "resize", "antialias", NULL });
  g_free(path);
  ts_scope_end(scope);
}

/* OneHot counts a negative index from the end (-1 is depth - 1) and gives
 * off values for one outside [-depth, depth); values are [off, on]. */
static void test_one_hot(void)
{
  int64_t idims[] = { 4 }, depth = 3;
  int64_t two[] = { 2 };
  float values[] = { -1, 5 };
  pb *g = msg();
  put_msg(g, 1, node("OneHot", "hot", "indices,depth,values", "y", int_attr("axis", 0)));
  put_msg(g, 5, i64_tensor("depth", 0, &depth, 1));
  put_msg(g, 5, float_tensor("values", 1, two, values, 2));
  put_msg(g, 11, value_info("indices", 7, 1, idims));
  put_msg(g, 12, value_info("y", 1, 0, NULL));
  pb *bytes = model(11, g);
  char *path = write_file("one_hot.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *idx = ts_constant(TS_I64, TS_SHAPE(4), (int64_t[]){ 0, -1, 3, -4 }), *y;
  g_assert_true(ts_onnx_model_run(m, &idx, 1, &y));
  g_assert_cmpint(ts_tensor_rank(y), ==, 2);
  g_assert_cmpint(ts_tensor_dim(y, 0), ==, 3);
  g_assert_cmpint(ts_tensor_dim(y, 1), ==, 4);
  float want[] = { 5, -1, -1, -1, -1, -1, -1, -1, -1, 5, -1, -1 };
  for (int i = 0; i < 12; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, want[i]);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* BatchNormalization in training mode normalizes by the batch's own
 * statistics and updates the running ones by momentum; asking for them
 * outside training mode is refused naming the node. */
static void test_batch_norm_training(void)
{
  int64_t xdims[] = { 2, 2 }, cdims[] = { 2 };
  for (int training = 1; training >= 0; training--) {
    pb *g = msg();
    put_msg(g, 1, node("BatchNormalization", "bn", "x,scale,bias,mean,var", "y,running_mean,running_var",
                       int_attr("training_mode", training)));
    put_msg(g, 11, value_info("x", 1, 2, xdims));
    const char *channel_inputs[] = { "scale", "bias", "mean", "var" };
    for (int k = 0; k < 4; k++)
      put_msg(g, 11, value_info(channel_inputs[k], 1, 1, cdims));
    put_msg(g, 12, value_info("y", 1, 2, xdims));
    put_msg(g, 12, value_info("running_mean", 1, 1, cdims));
    put_msg(g, 12, value_info("running_var", 1, 1, cdims));
    pb *bytes = model(15, g);
    char *path = write_file("bn_training.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *m = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    ts_tensor *in[5] = { ts_constant(TS_F32, TS_SHAPE(2, 2), (float[]){ 1, 2, 3, 6 }),
                         ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 1 }),
                         ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 0, 0 }),
                         ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 0, 0 }),
                         ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 1 }) }, *y[3];
    if (training) {
      /* channel 0: mean 2, variance 1; channel 1: mean 4, variance 4 */
      g_assert_true(ts_onnx_model_run(m, in, 5, y));
      double want_y[] = { -1, -1, 1, 1 }, want_mean[] = { 0.2, 0.4 }, want_var[] = { 1.0, 1.3 };
      for (int i = 0; i < 4; i++)
        g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y[0], i), want_y[i], 1e-4);
      for (int i = 0; i < 2; i++) {
        g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y[1], i), want_mean[i], 1e-6);
        g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y[2], i), want_var[i], 1e-6);
      }
    } else {
      g_assert_false(ts_onnx_model_run(m, in, 5, y));
      ts_error *e = ts_error_take();
      g_assert_cmpint(e->code, ==, TS_ERR_UNIMPLEMENTED);
      g_assert_nonnull(strstr(e->message, "'bn'"));
      g_assert_nonnull(strstr(e->message, "training_mode only"));
      ts_error_free(e);
    }
    ts_scope_end(scope);
    ts_onnx_model_free(m);
    g_free(path);
  }
}

/* Unique: sorted and in order of first occurrence, of the flattened
 * input and of slices along an axis, with all four outputs. */
static void check_i64s(ts_tensor *t, const int64_t *want, int n)
{
  g_assert_cmpint(ts_tensor_size(t), ==, n);
  for (int i = 0; i < n; i++)
    g_assert_cmpint(ts_tensor_get_i64(t, i), ==, want[i]);
}

static void test_unique(void)
{
  static const struct {
    int sorted, axis; /* axis -1: none */
    int64_t rank, dims[2];
    float x[6];
    int n_unique;
    float y[6];
    int64_t indices[4], inverse[6], counts[4];
  } CASES[] = {
    { 1, -1, 1, { 6 }, { 2, 1, 1, 3, 4, 3 }, 4, { 1, 2, 3, 4 }, { 1, 0, 3, 4 }, { 1, 0, 0, 2, 3, 2 }, { 2, 1, 2, 1 } },
    { 0, -1, 1, { 6 }, { 2, 1, 1, 3, 4, 3 }, 4, { 2, 1, 3, 4 }, { 0, 1, 3, 4 }, { 0, 1, 1, 2, 3, 2 }, { 1, 2, 2, 1 } },
    { 1, 0, 2, { 3, 2 }, { 1, 0, 0, 1, 1, 0 }, 2, { 0, 1, 1, 0 }, { 1, 0 }, { 1, 0, 1 }, { 1, 2 } },
  };
  for (size_t k = 0; k < G_N_ELEMENTS(CASES); k++) {
    pb *attrs = int_attr("sorted", CASES[k].sorted);
    if (CASES[k].axis >= 0) {
      pb *axis = int_attr("axis", CASES[k].axis);
      g_byte_array_append(attrs, axis->data, axis->len);
      g_byte_array_unref(axis);
    }
    pb *g = msg();
    put_msg(g, 1, node("Unique", "unique", "x", "y,indices,inverse,counts", attrs));
    put_msg(g, 11, value_info("x", 1, (int)CASES[k].rank, CASES[k].dims));
    const char *outputs[] = { "y", "indices", "inverse", "counts" };
    for (int o = 0; o < 4; o++)
      put_msg(g, 12, value_info(outputs[o], o ? 7 : 1, 0, NULL));
    pb *bytes = model(11, g);
    char *path = write_file("unique.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *m = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    ts_shape shape = { .rank = (int)CASES[k].rank, .dim = { CASES[k].dims[0], CASES[k].dims[1] } };
    ts_tensor *x = ts_constant(TS_F32, shape, CASES[k].x), *y[4];
    g_assert_true(ts_onnx_model_run(m, &x, 1, y));
    int n = CASES[k].n_unique, slice = CASES[k].axis >= 0 ? (int)CASES[k].dims[1] : 1;
    g_assert_cmpint(ts_tensor_size(y[0]), ==, n * slice);
    for (int i = 0; i < n * slice; i++)
      g_assert_cmpfloat(ts_tensor_get_f64(y[0], i), ==, CASES[k].y[i]);
    check_i64s(y[1], CASES[k].indices, n);
    check_i64s(y[2], CASES[k].inverse, (int)CASES[k].dims[0]);
    check_i64s(y[3], CASES[k].counts, n);
    ts_scope_end(scope);
    ts_onnx_model_free(m);
    g_free(path);
  }
}

/* TopK's smallest: the least first, INT32_MIN included (it was found as
 * the largest of the negated values, and -INT32_MIN overflows). */
static void test_topk_smallest_int(void)
{
  int64_t xdims[] = { 5 }, kdims[] = { 1 }, ydims[] = { 3 };
  pb *g = msg();
  put_msg(g, 1, node("TopK", "top", "x,k", "y,i", int_attr("largest", 0)));
  put_msg(g, 11, value_info("x", 6, 1, xdims));
  put_msg(g, 11, value_info("k", 7, 1, kdims));
  put_msg(g, 12, value_info("y", 6, 1, ydims));
  put_msg(g, 12, value_info("i", 7, 1, ydims));
  pb *bytes = model(11, g);
  char *path = write_file("topk_smallest.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *in[2] = { ts_constant(TS_I32, TS_SHAPE(5), (int32_t[]){ 5, INT32_MIN + 1, 7, INT32_MIN, 2 }),
                       ts_constant(TS_I64, TS_SHAPE(1), (int64_t[]){ 3 }) }, *y[2];
  g_assert_true(ts_onnx_model_run(m, in, 2, y));
  check_i64s(y[0], (int64_t[]){ INT32_MIN, INT32_MIN + 1, 2 }, 3);
  check_i64s(y[1], (int64_t[]){ 3, 1, 4 }, 3);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* Det over a batch of 3x3 matrices (an odd permutation's sign, a
 * singular matrix); a matrix past the cap is refused naming the node. */
static void test_det(void)
{
  for (int n = 3; n <= 7; n += 4) {
    int64_t xdims[] = { 2, n, n }, ydims[] = { 2 };
    pb *g = msg();
    put_msg(g, 1, node("Det", "det", "x", "y", NULL));
    put_msg(g, 11, value_info("x", 1, 3, xdims));
    put_msg(g, 12, value_info("y", 1, 1, ydims));
    pb *bytes = model(11, g);
    char *path = write_file("det.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *m = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    ts_tensor *y;
    if (n == 3) {
      /* a row swap of diag(2, 3, 4): -24; rows 1 and 3 equal: 0 */
      float xv[] = { 0, 3, 0, 2, 0, 0, 0, 0, 4, 1, 2, 3, 4, 5, 6, 1, 2, 3 };
      ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(2, 3, 3), xv);
      g_assert_true(ts_onnx_model_run(m, &x, 1, &y));
      g_assert_cmpfloat(ts_tensor_get_f64(y, 0), ==, -24);
      g_assert_cmpfloat(ts_tensor_get_f64(y, 1), ==, 0);
    } else {
      ts_tensor *x = ts_zeros(TS_F32, TS_SHAPE(2, 7, 7));
      g_assert_false(ts_onnx_model_run(m, &x, 1, &y));
      ts_error *e = ts_error_take();
      g_assert_cmpint(e->code, ==, TS_ERR_UNIMPLEMENTED);
      g_assert_nonnull(strstr(e->message, "'det'"));
      g_assert_nonnull(strstr(e->message, "at most 6"));
      ts_error_free(e);
    }
    ts_scope_end(scope);
    ts_onnx_model_free(m);
    g_free(path);
  }
}

/* DFT of a real impulse at 1: e^(-2 pi i k / 4) = 1, -i, -1, i; onesided
 * keeps three frequencies; a last dim other than 1 or 2 is refused. */
static void test_dft(void)
{
  for (int k = 0; k < 3; k++) {
    int64_t xdims[] = { 1, 4, k == 2 ? 3 : 1 }, ydims[] = { 1, k == 1 ? 3 : 4, 2 };
    pb *g = msg();
    put_msg(g, 1, node("DFT", "dft", "x", "y", k == 1 ? int_attr("onesided", 1) : NULL));
    put_msg(g, 11, value_info("x", 1, 3, xdims));
    put_msg(g, 12, value_info("y", 1, 3, ydims));
    pb *bytes = model(17, g);
    char *path = write_file("dft.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *m = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    ts_tensor *y, *x = k == 2 ? ts_zeros(TS_F32, TS_SHAPE(1, 4, 3))
                              : ts_constant(TS_F32, TS_SHAPE(1, 4, 1), (float[]){ 0, 1, 0, 0 });
    if (k < 2) {
      g_assert_true(ts_onnx_model_run(m, &x, 1, &y));
      double want[] = { 1, 0, 0, -1, -1, 0, 0, 1 }; /* re, im per frequency */
      g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(1, k == 1 ? 3 : 4, 2)));
      for (int i = 0; i < (k == 1 ? 6 : 8); i++)
        g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y, i), want[i], 1e-6);
    } else {
      g_assert_false(ts_onnx_model_run(m, &x, 1, &y));
      ts_error *e = ts_error_take();
      g_assert_cmpint(e->code, ==, TS_ERR_SHAPE);
      g_assert_nonnull(strstr(e->message, "'dft'"));
      ts_error_free(e);
    }
    ts_scope_end(scope);
    ts_onnx_model_free(m);
    g_free(path);
  }
}

/* STFT: frames of 2 every 2 samples, without and with a window; a step
 * of 0 is refused naming the node. */
static void test_stft(void)
{
  int64_t xdims[] = { 1, 4, 1 }, wdims[] = { 2 }, ydims[] = { 1, 2, 2, 2 };
  pb *g = msg();
  put_msg(g, 1, node("STFT", "stft", "x,step,window,length", "y", NULL));
  put_msg(g, 11, value_info("x", 1, 3, xdims));
  put_msg(g, 11, value_info("step", 7, 0, NULL));
  put_msg(g, 11, value_info("window", 1, 1, wdims));
  put_msg(g, 11, value_info("length", 7, 0, NULL));
  put_msg(g, 12, value_info("y", 1, 4, ydims));
  pb *bytes = model(17, g);
  char *path = write_file("stft.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *in[4] = { ts_constant(TS_F32, TS_SHAPE(1, 4, 1), (float[]){ 1, 2, 3, 4 }), ts_scalar_i64(2),
                       ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 1 }), ts_scalar_i64(2) }, *y;
  /* frames [1, 2] and [3, 4]: sums 3 and 7, differences -1 */
  double plain[] = { 3, 0, -1, 0, 7, 0, -1, 0 }, windowed[] = { 1, 0, 1, 0, 3, 0, 3, 0 };
  for (int k = 0; k < 2; k++) {
    if (k == 1)
      in[2] = ts_constant(TS_F32, TS_SHAPE(2), (float[]){ 1, 0 });
    g_assert_true(ts_onnx_model_run(m, in, 4, &y));
    g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(1, 2, 2, 2)));
    for (int i = 0; i < 8; i++)
      g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y, i), k ? windowed[i] : plain[i], 1e-6);
  }
  in[1] = ts_scalar_i64(0);
  g_assert_false(ts_onnx_model_run(m, in, 4, &y));
  ts_error *e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(e->message, "'stft'"));
  g_assert_nonnull(strstr(e->message, "frame_step 0"));
  ts_error_free(e);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* MelWeightMatrix: one mel bin over 0..3 Hz of an 8-point DFT at 8 Hz
 * is the triangle on spectrogram bins 0, 1, 2; edges past the spectrogram
 * are refused naming the node. */
static void test_mel_weight_matrix(void)
{
  pb *g = msg();
  put_msg(g, 1, node("MelWeightMatrix", "mel", "mels,dft,rate,lo,hi", "w", NULL));
  const char *names[] = { "mels", "dft", "rate", "lo", "hi" };
  for (int k = 0; k < 5; k++)
    put_msg(g, 11, value_info(names[k], k < 3 ? 7 : 1, 0, NULL));
  int64_t wdims[] = { 5, 1 };
  put_msg(g, 12, value_info("w", 1, 2, wdims));
  pb *bytes = model(17, g);
  char *path = write_file("mel.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *in[5] = { ts_scalar_i64(1), ts_scalar_i64(8), ts_scalar_i64(8), ts_scalar_f32(0), ts_scalar_f32(3) }, *w;
  g_assert_true(ts_onnx_model_run(m, in, 5, &w));
  g_assert_true(ts_shape_equal(ts_tensor_shape(w), TS_SHAPE(5, 1)));
  double want[] = { 0, 1, 0, 0, 0 };
  for (int i = 0; i < 5; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(w, i), ==, want[i]);
  in[4] = ts_scalar_f32(1000);
  g_assert_false(ts_onnx_model_run(m, in, 5, &w));
  ts_error *e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(e->message, "'mel'"));
  g_assert_nonnull(strstr(e->message, "past the spectrogram"));
  ts_error_free(e);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* NonMaxSuppression: the best box first, one overlapping it by IoU 0.82
 * suppressed at a threshold of 0.5 and kept at 0.9, none without a
 * maximum; boxes not [batch, boxes, 4] are refused naming the node. */
static void test_non_max_suppression(void)
{
  int64_t bdims[] = { 1, 3, 4 }, sdims[] = { 1, 1, 3 };
  pb *g = msg();
  put_msg(g, 1, node("NonMaxSuppression", "nms", "boxes,scores,max,iou", "selected", NULL));
  put_msg(g, 11, value_info("boxes", 1, 3, bdims));
  put_msg(g, 11, value_info("scores", 1, 3, sdims));
  put_msg(g, 11, value_info("max", 7, 0, NULL));
  put_msg(g, 11, value_info("iou", 1, 0, NULL));
  put_msg(g, 12, value_info("selected", 7, 0, NULL));
  pb *bytes = model(11, g);
  char *path = write_file("nms.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *in[4] = { ts_constant(TS_F32, TS_SHAPE(1, 3, 4), (float[]){ 0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 10, 1, 11 }),
                       ts_constant(TS_F32, TS_SHAPE(1, 1, 3), (float[]){ 0.9f, 0.95f, 0.5f }), ts_scalar_i64(3),
                       ts_scalar_f32(0.5f) }, *y;
  int64_t at_half[] = { 0, 0, 1, 0, 0, 2 }, at_09[] = { 0, 0, 1, 0, 0, 0, 0, 0, 2 };
  g_assert_true(ts_onnx_model_run(m, in, 4, &y));
  g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(2, 3)));
  check_i64s(y, at_half, 6);
  in[3] = ts_scalar_f32(0.9f);
  g_assert_true(ts_onnx_model_run(m, in, 4, &y));
  check_i64s(y, at_09, 9);
  in[2] = ts_scalar_i64(0);
  g_assert_true(ts_onnx_model_run(m, in, 4, &y));
  g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(0, 3)));
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);

  int64_t bad[] = { 1, 3, 3 };
  g = msg();
  put_msg(g, 1, node("NonMaxSuppression", "nms", "boxes,scores", "selected", NULL));
  put_msg(g, 11, value_info("boxes", 1, 3, bad));
  put_msg(g, 11, value_info("scores", 1, 3, sdims));
  put_msg(g, 12, value_info("selected", 7, 0, NULL));
  bytes = model(11, g);
  path = write_file("nms_bad.onnx", bytes);
  g_byte_array_unref(bytes);
  m = load_ok(path);
  scope = ts_scope_begin();
  ts_tensor *bad_in[2] = { ts_zeros(TS_F32, TS_SHAPE(1, 3, 3)), ts_zeros(TS_F32, TS_SHAPE(1, 1, 3)) };
  g_assert_false(ts_onnx_model_run(m, bad_in, 2, &y));
  ts_error *e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_SHAPE);
  g_assert_nonnull(strstr(e->message, "'nms'"));
  ts_error_free(e);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* GridSample with align_corners on [[1, 2], [3, 4]]: the corners, the
 * centre (bilinear: the mean; nearest: half to even, pixel (0, 0)) and a
 * point outside (zeros); an unknown mode is refused naming the node. */
static void test_grid_sample(void)
{
  const char *modes[] = { "bilinear", "nearest", "cubic" };
  double want[2][4] = { { 1, 4, 2.5, 0 }, { 1, 4, 1, 0 } };
  for (int k = 0; k < 3; k++) {
    int64_t xdims[] = { 1, 1, 2, 2 }, gdims[] = { 1, 1, 4, 2 }, ydims[] = { 1, 1, 1, 4 };
    pb *attrs = int_attr("align_corners", 1), *mode = string_attr("mode", modes[k]);
    g_byte_array_append(attrs, mode->data, mode->len);
    g_byte_array_unref(mode);
    pb *g = msg();
    put_msg(g, 1, node("GridSample", "sample", "x,grid", "y", attrs));
    put_msg(g, 11, value_info("x", 1, 4, xdims));
    put_msg(g, 11, value_info("grid", 1, 4, gdims));
    put_msg(g, 12, value_info("y", 1, 4, ydims));
    pb *bytes = model(16, g);
    char *path = write_file("grid_sample.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *m = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    ts_tensor *in[2] = { ts_constant(TS_F32, TS_SHAPE(1, 1, 2, 2), (float[]){ 1, 2, 3, 4 }),
                         ts_constant(TS_F32, TS_SHAPE(1, 1, 4, 2), (float[]){ -1, -1, 1, 1, 0, 0, 3, 0 }) }, *y;
    if (k < 2) {
      g_assert_true(ts_onnx_model_run(m, in, 2, &y));
      g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(1, 1, 1, 4)));
      for (int i = 0; i < 4; i++)
        g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y, i), want[k][i], 1e-6);
    } else {
      g_assert_false(ts_onnx_model_run(m, in, 2, &y));
      ts_error *e = ts_error_take();
      g_assert_cmpint(e->code, ==, TS_ERR_INVALID_ARGUMENT);
      g_assert_nonnull(strstr(e->message, "'sample'"));
      g_assert_nonnull(strstr(e->message, "mode 'cubic'"));
      ts_error_free(e);
    }
    ts_scope_end(scope);
    ts_onnx_model_free(m);
    g_free(path);
  }
}

/* ---- If and Loop ------------------------------------------------------------------ */

/* AttributeProto of type GRAPH, wrapped as a node's field 5; frees graph. */
static pb *graph_attr(const char *name, pb *graph)
{
  pb *a = msg();
  put_str(a, 1, name);
  put_msg(a, 6, graph);
  put_int(a, 20, 5); /* GRAPH */
  pb *wrapped = msg();
  put_msg(wrapped, 5, a);
  return wrapped;
}

static ts_tensor *run1(ts_onnx_model *m, ts_tensor **inputs, int n, bool graph)
{
  ts_tensor *y = NULL, *outs[4];
  g_assert_cmpint(ts_onnx_model_n_outputs(m), <=, 4);
  if (!graph) {
    if (!ts_onnx_model_run(m, inputs, n, outs))
      g_error("%s", ts_error_peek()->message);
    return outs[0];
  }
  ts_value args[4];
  for (int i = 0; i < n; i++)
    args[i] = TS_TENSOR_VALUE(inputs[i]);
  y = ts_function_call(ts_onnx_model_function(m, 0), args, n);
  if (!y)
    g_error("%s", ts_error_peek()->message);
  return y;
}

/* The first output of m on inputs, eagerly or through its function. */
/* y = If(c) then r + r (r = Relu(x), an outer value) else -x; eagerly
 * and as one traced If, both ways. */
static void test_if_reads_outer_values(void)
{
  int64_t dims[] = { 3 };
  pb *then_g = msg();
  put_msg(then_g, 1, node("Add", "/then/Add", "r,r", "t", NULL));
  put_str(then_g, 2, "then");
  put_msg(then_g, 12, value_info("t", 1, 1, dims));
  pb *else_g = msg();
  put_msg(else_g, 1, node("Neg", "/else/Neg", "x", "e", NULL));
  put_str(else_g, 2, "else");
  put_msg(else_g, 12, value_info("e", 1, 1, dims));
  pb *g = msg();
  put_msg(g, 1, node("Relu", "relu", "x", "r", NULL));
  put_msg(g, 1, node("If", "choose", "c", "y",
                     concat_attrs(graph_attr("then_branch", then_g), graph_attr("else_branch", else_g))));
  put_str(g, 2, "if_outer");
  put_msg(g, 11, value_info("c", 9, 0, NULL));
  put_msg(g, 11, value_info("x", 1, 1, dims));
  put_msg(g, 12, value_info("y", 1, 1, dims));
  pb *bytes = model(16, g);
  char *path = write_file("if_outer.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  float xv[] = { -1, 2, 3 };
  for (int graph = 0; graph < 2; graph++)
    for (int which = 0; which < 2; which++) {
      uint8_t cv = which == 0;
      ts_tensor *in[2] = { ts_constant(TS_BOOL, TS_SCALAR_SHAPE, &cv), ts_constant(TS_F32, TS_SHAPE(3), xv) };
      ts_tensor *y = run1(m, in, 2, graph);
      for (int i = 0; i < 3; i++)
        g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, which == 0 ? 2 * fmax(xv[i], 0) : -xv[i]);
    }
  /* one concrete function, holding an If node */
  ts_function *fn = ts_onnx_model_function(m, 0);
  g_assert_cmpint(ts_function_n_concrete(fn), ==, 1);
  const ts_graph *traced = ts_concrete_graph(ts_function_concrete(fn, 0));
  bool has_if = false;
  for (int i = 0; i < ts_graph_n_nodes(traced); i++)
    has_if |= ts_node_op(ts_graph_node(traced, i)) == TS_OP_IF;
  g_assert_true(has_if);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* A model of two outputs is a function per output, each building the
 * nodes its output needs alone: y = Relu(x) runs and its graph holds no
 * Reshape though z = Reshape(x, [7]) (x is [3]) fails, in its own
 * function and in a run of the whole model. */
static void test_function_builds_its_output_alone(void)
{
  int64_t dims[] = { 3 }, seven[] = { 7 };
  pb *g = msg();
  put_msg(g, 1, node("Relu", "relu", "x", "y", NULL));
  put_msg(g, 1, node("Reshape", "bad_reshape", "x,shape", "z", NULL));
  put_msg(g, 5, i64_tensor("shape", 1, seven, 1));
  put_msg(g, 11, value_info("x", 1, 1, dims));
  put_msg(g, 12, value_info("y", 1, 1, dims));
  put_msg(g, 12, value_info("z", 1, 0, NULL));
  pb *bytes = model(13, g);
  char *path = write_file("two_outputs.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  float xv[] = { -1, 2, 3 };
  ts_value arg = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(3), xv));
  for (int eager = 0; eager < 2; eager++) {
    ts_run_functions_eagerly(eager);
    ts_tensor *y = ts_function_call(ts_onnx_model_function(m, 0), &arg, 1);
    if (!y)
      g_error("%s", ts_error_peek()->message);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 0), ==, 0);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 2), ==, 3);
    g_assert_null(ts_function_call(ts_onnx_model_function(m, 1), &arg, 1));
    ts_error *e = ts_error_take();
    g_test_message("%s", e->message);
    g_assert_nonnull(strstr(e->message, "two_outputs.onnx:2: Reshape"));
    ts_error_free(e);
  }
  ts_run_functions_eagerly(false);
  const ts_graph *traced = ts_concrete_graph(ts_function_concrete(ts_onnx_model_function(m, 0), 0));
  for (int i = 0; i < ts_graph_n_nodes(traced); i++)
    g_assert_cmpint(ts_node_op(ts_graph_node(traced, i)), !=, TS_OP_RESHAPE);
  ts_tensor *outs[2];
  g_assert_false(ts_onnx_model_run(m, &arg.tensor, 1, outs));
  ts_error_free(ts_error_take());
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* Loop(M, cond, v): the body adds `one` (an outer initializer) to v and
 * scans each new v out; stops after M iterations or when v[0] >= limit. */
/* ValueInfoProto of a name only (no type). */
static pb *untyped(const char *name)
{
  pb *v = msg();
  put_str(v, 1, name);
  return v;
}

/* v_final = v + M ones, scan = each iteration's v; typed: the body's
 * carried value and scan output have types (else the loop's input's
 * dtype is followed through Add and Identity). */
static pb *loop_model(bool with_trip_count, bool with_cond, bool typed)
{
  int64_t vdims[] = { 2 };
  float one[] = { 1, 1 };
  pb *body = msg();
  put_msg(body, 1, node("Add", "/body/Add", "v_in,one", "v_out", NULL));
  put_msg(body, 1, node("Identity", "/body/Scan", "v_out", "s", NULL));
  put_msg(body, 1, node("Identity", "/body/Cond", "cond_in", "cond_out", NULL));
  put_str(body, 2, "body");
  put_msg(body, 11, value_info("i", 7, 0, NULL));
  put_msg(body, 11, value_info("cond_in", 9, 0, NULL));
  put_msg(body, 11, typed ? value_info("v_in", 1, 1, vdims) : untyped("v_in"));
  put_msg(body, 12, value_info("cond_out", 9, 0, NULL));
  put_msg(body, 12, typed ? value_info("v_out", 1, 1, vdims) : untyped("v_out"));
  put_msg(body, 12, typed ? value_info("s", 1, 1, vdims) : untyped("s"));
  pb *g = msg();
  char *inputs = g_strdup_printf("%s,%s,v", with_trip_count ? "M" : "", with_cond ? "c" : "");
  put_msg(g, 1, node("Loop", "/loop/Loop", inputs, "v_final,scan", graph_attr("body", body)));
  g_free(inputs);
  put_str(g, 2, "loop");
  put_msg(g, 5, float_tensor("one", 1, vdims, one, 2));
  if (with_trip_count)
    put_msg(g, 11, value_info("M", 7, 0, NULL));
  if (with_cond)
    put_msg(g, 11, value_info("c", 9, 0, NULL));
  put_msg(g, 11, value_info("v", 1, 1, vdims));
  put_msg(g, 12, value_info("v_final", 1, 1, vdims));
  int64_t sdims[] = { -1, 2 };
  put_msg(g, 12, value_info("scan", 1, 2, sdims));
  return model(16, g);
}

static void test_loop_carried_and_scanned(gconstpointer typed)
{
  pb *bytes = loop_model(true, true, GPOINTER_TO_INT(typed));
  char *path = write_file("loop.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  g_assert_cmpint(ts_onnx_model_n_outputs(m), ==, 2);
  ts_scope *scope = ts_scope_begin();
  for (int graph = 0; graph < 2; graph++) {
    int64_t trips = 3;
    uint8_t go = 1;
    float v[] = { 10, 20 };
    ts_tensor *in[3] = { ts_constant(TS_I64, TS_SCALAR_SHAPE, &trips), ts_constant(TS_BOOL, TS_SCALAR_SHAPE, &go),
                         ts_constant(TS_F32, TS_SHAPE(2), v) };
    ts_tensor *y = run1(m, in, 3, graph);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 0), ==, 13);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 1), ==, 23);
    if (!graph) { /* the scan output: every iteration's v, stacked */
      ts_tensor *out[2];
      g_assert_true(ts_onnx_model_run(m, in, 3, out));
      g_assert_cmpint(ts_tensor_rank(out[1]), ==, 2);
      g_assert_cmpint(ts_tensor_dim(out[1], 0), ==, 3);
      float want[] = { 11, 21, 12, 22, 13, 23 };
      for (int i = 0; i < 6; i++)
        g_assert_cmpfloat(ts_tensor_get_f64(out[1], i), ==, want[i]);
    }
    go = 0; /* a false condition: no iteration */
    in[1] = ts_constant(TS_BOOL, TS_SCALAR_SHAPE, &go);
    y = run1(m, in, 3, graph);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 0), ==, 10);
  }
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

static void test_loop_without_bounds(void)
{
  pb *bytes = loop_model(false, false, true);
  char *path = write_file("loop_forever.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  float v[] = { 1, 2 };
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(2), v), *out[2];
  g_assert_false(ts_onnx_model_run(m, &x, 1, out));
  ts_error *e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_UNIMPLEMENTED);
  g_assert_nonnull(strstr(e->message, "never ends"));
  g_assert_nonnull(strstr(e->message, "/loop/Loop"));
  ts_error_free(e);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* An op the importer lacks inside a branch is found at load, by name. */
static void test_subgraph_unsupported_op(void)
{
  int64_t dims[] = { 3 };
  pb *then_g = msg();
  put_msg(then_g, 1, node("Bernoulli", "inner_bernoulli", "x", "t", NULL));
  put_msg(then_g, 12, value_info("t", 1, 1, dims));
  pb *else_g = msg();
  put_msg(else_g, 1, node("Neg", "n", "x", "e", NULL));
  put_msg(else_g, 12, value_info("e", 1, 1, dims));
  pb *g = msg();
  put_msg(g, 1, node("If", "choose", "c", "y",
                     concat_attrs(graph_attr("then_branch", then_g), graph_attr("else_branch", else_g))));
  put_msg(g, 11, value_info("c", 9, 0, NULL));
  put_msg(g, 11, value_info("x", 1, 1, dims));
  put_msg(g, 12, value_info("y", 1, 1, dims));
  pb *bytes = model(16, g);
  char *path = write_file("if_bernoulli.onnx", bytes);
  g_byte_array_unref(bytes);
  assert_load_fails(path, TS_ERR_UNIMPLEMENTED, WORDS("Bernoulli", "inner_bernoulli"));
  char *missing = ts_onnx_unsupported(path);
  g_assert_cmpstr(missing, ==, "Bernoulli");
  free(missing);
  g_free(path);
}

/* Branches within branches, each reading the top graph's input: one level
 * more than TS_ONNX_MAX_DEPTH is refused (within the wire's limit). */
static void test_subgraphs_too_deep(void)
{
  pb *g = msg();
  put_msg(g, 12, value_info("c", 9, 0, NULL));
  for (int level = TS_ONNX_MAX_DEPTH + 1; level > 0; level--) {
    char out[16];
    snprintf(out, sizeof out, "o%d", level);
    pb *outer = msg();
    put_msg(outer, 1, node("If", out, "c", out, graph_attr("then_branch", g)));
    put_msg(outer, 12, value_info(out, 9, 0, NULL));
    g = outer;
  }
  put_msg(g, 11, value_info("c", 9, 0, NULL));
  pb *bytes = model(16, g);
  char *path = write_file("if_deep.onnx", bytes);
  g_byte_array_unref(bytes);
  assert_load_fails(path, TS_ERR_FORMAT, WORDS("subgraphs nest deeper than"));
  g_free(path);
}

/* AttributeProto of type STRINGS holding one string, wrapped as a node's field 5. */
static pb *strings_attr(const char *name, const char *v)
{
  pb *a = msg();
  put_str(a, 1, name);
  put_str(a, 9, v);
  put_int(a, 20, 8); /* STRINGS */
  pb *wrapped = msg();
  put_msg(wrapped, 5, a);
  return wrapped;
}

/* RNN step by step: h_t = tanh(x_t W^T + h_{t-1} R^T), forward and
 * reverse (Y in time order either way, Y_h the last step run); what the
 * importer does not compute (clip) is refused naming the node. */
static void test_rnn(void)
{
  int64_t xdims[] = { 2, 1, 1 }, wdims[] = { 1, 1, 1 }, ydims[] = { 2, 1, 1, 1 };
  const char *directions[] = { "forward", "reverse" };
  double t1 = tanh(1), t2 = tanh(2);
  double want[2][3] = { { t1, tanh(2 + 0.5 * t1), tanh(2 + 0.5 * t1) },
                        { tanh(1 + 0.5 * t2), t2, tanh(1 + 0.5 * t2) } };
  for (int k = 0; k < 3; k++) {
    pb *attrs = k < 2 ? string_attr("direction", directions[k]) : strings_attr("activations", "Relu");
    pb *g = msg();
    put_msg(g, 1, node("RNN", "rnn", "x,w,r", "y,y_h", attrs));
    put_msg(g, 11, value_info("x", 1, 3, xdims));
    put_msg(g, 11, value_info("w", 1, 3, wdims));
    put_msg(g, 11, value_info("r", 1, 3, wdims));
    put_msg(g, 12, value_info("y", 1, 4, ydims));
    put_msg(g, 12, value_info("y_h", 1, 3, wdims));
    pb *bytes = model(14, g);
    char *path = write_file("rnn.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *m = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    ts_tensor *in[3] = { ts_constant(TS_F32, TS_SHAPE(2, 1, 1), (float[]){ 1, 2 }),
                         ts_constant(TS_F32, TS_SHAPE(1, 1, 1), (float[]){ 1 }),
                         ts_constant(TS_F32, TS_SHAPE(1, 1, 1), (float[]){ 0.5f }) }, *y[2];
    if (k < 2) {
      g_assert_true(ts_onnx_model_run(m, in, 3, y));
      g_assert_true(ts_shape_equal(ts_tensor_shape(y[0]), TS_SHAPE(2, 1, 1, 1)));
      g_assert_true(ts_shape_equal(ts_tensor_shape(y[1]), TS_SHAPE(1, 1, 1)));
      g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y[0], 0), want[k][0], 1e-6);
      g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y[0], 1), want[k][1], 1e-6);
      g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y[1], 0), want[k][2], 1e-6);
    } else {
      g_assert_false(ts_onnx_model_run(m, in, 3, y));
      ts_error *e = ts_error_take();
      g_assert_cmpint(e->code, ==, TS_ERR_UNIMPLEMENTED);
      g_assert_nonnull(strstr(e->message, "rnn"));
      g_assert_nonnull(strstr(e->message, "activations"));
      ts_error_free(e);
    }
    ts_scope_end(scope);
    ts_onnx_model_free(m);
    g_free(path);
  }
}

/* A sequence longer than one Split or Concat takes (TS_MAX_OUTPUTS,
 * TS_MAX_INPUTS): h_t = tanh(x_t + 0.5 h_{t-1}) over 150 steps. */
static void test_rnn_long_sequence(void)
{
  enum { STEPS = 150 };
  int64_t xdims[] = { STEPS, 1, 1 }, wdims[] = { 1, 1, 1 }, ydims[] = { STEPS, 1, 1, 1 };
  pb *g = msg();
  put_msg(g, 1, node("RNN", "rnn", "x,w,r", "y", NULL));
  put_msg(g, 11, value_info("x", 1, 3, xdims));
  put_msg(g, 11, value_info("w", 1, 3, wdims));
  put_msg(g, 11, value_info("r", 1, 3, wdims));
  put_msg(g, 12, value_info("y", 1, 4, ydims));
  pb *bytes = model(14, g);
  char *path = write_file("rnn_long.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  float x[STEPS];
  for (int t = 0; t < STEPS; t++)
    x[t] = (float)((t % 7) - 3) / 3;
  ts_tensor *in[3] = { ts_constant(TS_F32, TS_SHAPE(STEPS, 1, 1), x),
                       ts_constant(TS_F32, TS_SHAPE(1, 1, 1), (float[]){ 1 }),
                       ts_constant(TS_F32, TS_SHAPE(1, 1, 1), (float[]){ 0.5f }) }, *y;
  g_assert_true(ts_onnx_model_run(m, in, 3, &y));
  g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(STEPS, 1, 1, 1)));
  double h = 0;
  for (int t = 0; t < STEPS; t++) {
    h = tanh(x[t] + 0.5 * h);
    g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y, t), h, 1e-5);
  }
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* ---- hostile files ------------------------------------------------------------- */

static void test_truncated(void)
{
  pb *bytes = add_relu_model(false);
  int failed = 0;
  for (guint len = 0; len < bytes->len; len++) {
    pb *part = g_byte_array_sized_new(len);
    g_byte_array_append(part, bytes->data, len);
    char *path = write_file("truncated.onnx", part);
    ts_onnx_model *m = ts_onnx_load(path);
    if (!m) {
      failed++;
      g_assert_true(ts_failed());
      g_assert_nonnull(strstr(ts_error_peek()->message, path));
      ts_error_clear();
    }
    ts_onnx_model_free(m);
    g_byte_array_unref(part);
    g_free(path);
  }
  /* every cut but those that end between whole fields of the model fails */
  g_assert_cmpint(failed, >, (int)bytes->len * 9 / 10);
  g_byte_array_unref(bytes);
}

static void test_random_bytes(void)
{
  GRand *rand = g_rand_new_with_seed(28);
  pb *good = add_relu_model(false);
  for (int round = 0; round < 500; round++) {
    pb *b = g_byte_array_new();
    g_byte_array_append(b, good->data, good->len);
    int flips = 1 + g_rand_int_range(rand, 0, 4);
    for (int i = 0; i < flips; i++)
      b->data[g_rand_int_range(rand, 0, (gint32)b->len)] = (guint8)g_rand_int_range(rand, 0, 256);
    char *path = write_file("random.onnx", b);
    ts_onnx_model *m = ts_onnx_load(path);
    if (m) { /* still a model: it must run or fail cleanly */
      ts_scope *scope = ts_scope_begin();
      int n = ts_onnx_model_n_inputs(m);
      ts_tensor *in[8] = { NULL }, *out[8] = { NULL };
      for (int i = 0; i < n && i < 8; i++) {
        ts_spec s = ts_onnx_model_input_spec(m, i);
        for (int d = 0; d < s.shape.rank; d++)
          s.shape.dim[d] = s.shape.dim[d] < 0 || s.shape.dim[d] > 16 ? 1 : s.shape.dim[d];
        in[i] = ts_zeros(s.dtype, s.shape);
      }
      if (n <= 8 && ts_onnx_model_n_outputs(m) <= 8)
        ts_onnx_model_run(m, in, n, out);
      ts_scope_end(scope);
    }
    ts_error_clear();
    ts_onnx_model_free(m);
    g_free(path);
    g_byte_array_unref(b);
  }
  g_byte_array_unref(good);
  g_rand_free(rand);
}

static void test_cyclic(void)
{
  int64_t dims[] = { 3 };
  pb *g = msg();
  put_msg(g, 1, node("Add", "a", "x,b_out", "a_out", NULL));
  put_msg(g, 1, node("Relu", "b", "a_out", "b_out", NULL));
  put_msg(g, 11, value_info("x", 1, 1, dims));
  put_msg(g, 12, value_info("b_out", 1, 1, dims));
  pb *bytes = model(13, g);
  char *path = write_file("cyclic.onnx", bytes);
  g_byte_array_unref(bytes);
  assert_load_fails(path, TS_ERR_FORMAT, WORDS("'a'", "reads 'b_out'", "cyclic"));
  g_free(path);
}

static void test_nested_too_deep(void)
{
  /* a graph in an If node's attribute, in a graph in an attribute, ... */
  pb *g = msg();
  put_str(g, 2, "innermost");
  for (int depth = 0; depth < TS_ONNX_MAX_DEPTH + 8; depth++) {
    pb *a = msg();
    put_str(a, 1, "then_branch");
    put_int(a, 20, 5);
    put_msg(a, 6, g);
    pb *n = msg();
    put_str(n, 4, "If");
    put_msg(n, 5, a);
    g = msg();
    put_msg(g, 1, n);
  }
  pb *bytes = model(13, g);
  char *path = write_file("deep.onnx", bytes);
  g_byte_array_unref(bytes);
  assert_load_fails(path, TS_ERR_FORMAT, WORDS("nested deeper"));
  g_free(path);
}

static void test_data_against_dims(void)
{
  int64_t dims[] = { 3 };
  const struct {
    int rank;
    int64_t dims[3];
    size_t n;
    const char *word;
  } cases[] = {
    { 1, { 4 }, 3, "needs 16 bytes" },                   /* raw data too short */
    { 1, { 2 }, 3, "8 bytes of raw data, it has 12" }, /* too long */
    { 3, { INT64_MAX / 2, 4, 4 }, 3, "overflows" },   /* product overflows */
    { 2, { 1 << 30, 1 << 30 }, 3, "exceeds" },        /* 4 EiB of floats */
    { 1, { -3 }, 3, "negative" },
  };
  float data[3] = { 1, 2, 3 };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    pb *g = msg();
    put_msg(g, 1, node("Add", "a", "x,w", "y", NULL));
    put_msg(g, 5, float_tensor("w", cases[i].rank, cases[i].dims, data, cases[i].n));
    put_msg(g, 11, value_info("x", 1, 1, dims));
    put_msg(g, 12, value_info("y", 1, 1, dims));
    pb *bytes = model(13, g);
    char *path = write_file("sizes.onnx", bytes);
    g_byte_array_unref(bytes);
    assert_load_fails(path, TS_ERR_FORMAT, WORDS("initializer 'w'", cases[i].word));
    g_free(path);
  }
}

/* An initializer in an external file: inside the folder it loads, a path
 * out of the folder (.., absolute, a link) is refused. */
static void test_external_data(void)
{
  float w[] = { 1, 2, 3 };
  char *data_path = g_build_filename(tmp_dir, "weights.bin", NULL);
  g_assert_true(g_file_set_contents(data_path, (const char *)w, sizeof w, NULL));
  char *outside_dir = g_dir_make_tmp("tracescope-onnx-outside-XXXXXX", NULL);
  char *outside = g_build_filename(outside_dir, "secret.bin", NULL);
  g_assert_true(g_file_set_contents(outside, (const char *)w, sizeof w, NULL));
  char *link = g_build_filename(tmp_dir, "link.bin", NULL);
  g_assert_cmpint(symlink(outside, link), ==, 0);
  char *escape = g_strdup_printf("../%s/secret.bin", strrchr(outside_dir, '/') + 1);
  const char *locations[] = { "weights.bin", escape, outside, "link.bin", "missing.bin" };
  for (size_t i = 0; i < G_N_ELEMENTS(locations); i++) {
    int64_t dims[] = { 3 };
    pb *t = float_tensor("w", 1, dims, NULL, 0);
    pb *entry = msg();
    put_str(entry, 1, "location");
    put_str(entry, 2, locations[i]);
    put_msg(t, 13, entry);
    put_int(t, 14, 1); /* EXTERNAL */
    pb *g = msg();
    put_msg(g, 1, node("Add", "a", "x,w", "y", NULL));
    put_msg(g, 5, t);
    put_msg(g, 11, value_info("x", 1, 1, dims));
    put_msg(g, 12, value_info("y", 1, 1, dims));
    pb *bytes = model(13, g);
    char *path = write_file("external.onnx", bytes);
    g_byte_array_unref(bytes);
    if (i == 0) {
      ts_onnx_model *m = load_ok(path);
      ts_scope *scope = ts_scope_begin();
      ts_tensor *x = ts_zeros(TS_F32, TS_SHAPE(3)), *y;
      g_assert_true(ts_onnx_model_run(m, &x, 1, &y));
      g_assert_cmpfloat(ts_tensor_get_f64(y, 2), ==, 3);
      ts_scope_end(scope);
      ts_onnx_model_free(m);
    } else if (i < 4)
      assert_load_fails(path, TS_ERR_FORMAT, WORDS("leaves the model's folder"));
    else
      assert_load_fails(path, TS_ERR_IO, WORDS("missing.bin"));
    g_free(path);
  }
  g_unlink(link);
  g_unlink(outside);
  g_rmdir(outside_dir);
  g_unlink(data_path);
  g_free(escape);
  g_free(link);
  g_free(outside);
  g_free(outside_dir);
  g_free(data_path);
}

/* A file over the size cap is refused before it is read (a sparse file: no disk used). */
static void test_oversized(void)
{
  char *path = g_build_filename(tmp_dir, "huge.onnx", NULL);
  FILE *fp = fopen(path, "wb");
  g_assert_nonnull(fp);
  g_assert_cmpint(ftruncate(fileno(fp), TS_ONNX_MAX_FILE_BYTES + 1), ==, 0);
  fclose(fp);
  assert_load_fails(path, TS_ERR_FORMAT, WORDS("over the importer's limit"));
  g_unlink(path);
  g_free(path);
}

static void test_not_a_file(void)
{
  assert_load_fails(tmp_dir, TS_ERR_IO, WORDS("not a regular file"));
  char *missing = g_build_filename(tmp_dir, "nothing.onnx", NULL);
  assert_load_fails(missing, TS_ERR_IO, WORDS("cannot open"));
  g_free(missing);
}

/* ---- ONNX's own test data ------------------------------------------------------ */

/* The folder of one of ONNX's node tests, or NULL (the test skipped)
 * where libonnx-testdata is not installed. */
static char *testdata_node_or_skip(const char *node)
{
  char *dir = g_build_filename(TS_ONNX_TESTDATA, "node", node, NULL);
  if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    g_test_skip("libonnx-testdata is not installed");
    g_clear_pointer(&dir, g_free);
  }
  return dir;
}

/* ONNX's LSTM (test_lstm_defaults of the test data) is one LSTMSequence,
 * its steps and their products inside the op (no MatMul), and gives ONNX's
 * expected output as a graph. */
static void test_lstm_one_op(void)
{
  char *dir = testdata_node_or_skip("test_lstm_defaults");
  if (!dir)
    return;
  char *model_path = g_build_filename(dir, "model.onnx", NULL);
  ts_onnx_model *m = load_ok(model_path);
  ts_scope *scope = ts_scope_begin();
  int n = ts_onnx_model_n_inputs(m);
  g_assert_cmpint(n, <=, 8);
  ts_value args[8];
  for (int i = 0; i < n; i++) {
    char *name = g_strdup_printf("input_%d.pb", i);
    char *path = g_build_filename(dir, "test_data_set_0", name, NULL);
    ts_tensor *t = ts_onnx_tensor_load(path);
    g_assert_nonnull(t);
    args[i] = TS_TENSOR_VALUE(t);
    g_free(path);
    g_free(name);
  }
  char *out0 = g_build_filename(dir, "test_data_set_0", "output_0.pb", NULL);
  ts_tensor *want = ts_onnx_tensor_load(out0);
  ts_function *fn = ts_onnx_model_function(m, 0);
  ts_tensor *y = ts_function_call(fn, args, n);
  if (!y)
    g_error("%s", ts_error_peek()->message);
  g_assert_true(ts_shape_equal(ts_tensor_shape(y), ts_tensor_shape(want)));
  for (int64_t i = 0; i < ts_tensor_size(want); i++)
    g_assert_cmpfloat(fabs(ts_tensor_get_f64(y, i) - ts_tensor_get_f64(want, i)), <=,
                      1e-7 + 1e-3 * fabs(ts_tensor_get_f64(want, i)));
  const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, 0));
  int lstm = 0, matmul = 0;
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    ts_op op = ts_node_op(ts_graph_node(g, i));
    lstm += op == TS_OP_LSTM_SEQUENCE;
    matmul += op == TS_OP_MATMUL;
  }
  g_assert_cmpint(lstm, ==, 1);
  g_assert_cmpint(matmul, ==, 0);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(out0);
  g_free(model_path);
  g_free(dir);
}


static void test_backend_tensor_files(void)
{
  char *dir = testdata_node_or_skip("test_add");
  if (!dir)
    return;
  char *model_path = g_build_filename(dir, "model.onnx", NULL);
  char *in0 = g_build_filename(dir, "test_data_set_0", "input_0.pb", NULL);
  char *in1 = g_build_filename(dir, "test_data_set_0", "input_1.pb", NULL);
  char *out0 = g_build_filename(dir, "test_data_set_0", "output_0.pb", NULL);
  ts_onnx_model *m = load_ok(model_path);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *in[2] = { ts_onnx_tensor_load(in0), ts_onnx_tensor_load(in1) }, *want = ts_onnx_tensor_load(out0), *y;
  g_assert_nonnull(in[0]);
  g_assert_nonnull(want);
  g_assert_true(ts_onnx_model_run(m, in, 2, &y));
  g_assert_true(ts_shape_equal(ts_tensor_shape(y), ts_tensor_shape(want)));
  for (int64_t i = 0; i < ts_tensor_size(want); i++)
    g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, ts_tensor_get_f64(want, i));
  /* a model is not a TensorProto of the right shape */
  ts_tensor *bad = ts_onnx_tensor_load(model_path);
  if (!bad)
    ts_error_clear();
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(model_path);
  g_free(in0);
  g_free(in1);
  g_free(out0);
  g_free(dir);
}

/* ---- the command line ------------------------------------------------------------ */

/* Runs tracescope-cli with args; its stdout (owned), *status its exit status. */
static pb *float_attr(const char *name, float v)
{
  pb *a = msg();
  put_str(a, 1, name);
  put_varint(a, (2 << 3) | 5); /* f: a fixed32 */
  g_byte_array_append(a, (const guint8 *)&v, sizeof v);
  put_int(a, 20, 1); /* FLOAT */
  pb *wrapped = msg();
  put_msg(wrapped, 5, a);
  return wrapped;
}

static pb *ints_attr(const char *name, const int64_t *v, int n)
{
  pb *a = msg();
  put_str(a, 1, name);
  for (int i = 0; i < n; i++)
    put_int(a, 8, v[i]);
  put_int(a, 20, 7); /* INTS */
  pb *wrapped = msg();
  put_msg(wrapped, 5, a);
  return wrapped;
}

/* y's values against want (n of them), within tol. */
static void assert_values(ts_tensor *y, const double *want, int64_t n, double tol, const char *what)
{
  g_assert_cmpint(ts_tensor_size(y), ==, n);
  for (int64_t i = 0; i < n; i++)
    if (fabs(ts_tensor_get_f64(y, i) - want[i]) > tol)
      g_error("%s[%" G_GINT64_FORMAT "] = %.7g, not %.7g", what, i, ts_tensor_get_f64(y, i), want[i]);
}

/* Opsets 19 to 22: Gelu (20, erf and tanh), GroupNormalization (scale and
 * bias per channel at 21, per group at 18), ReduceMax/ReduceMin of bools
 * (20: any, all), Pad's wrap (19), DFT's axis as an input (20, -2 when
 * omitted), GridSample's renamed modes (20), QuantizeLinear's
 * output_dtype (21) and Resize's half_pixel_symmetric (19), against
 * values worked by hand; blocked quantization and GridSample's bilinear
 * at 20 are refused by name. */
static void test_opsets_19_to_22(void)
{
  int64_t xdims[] = { 2, 3 }, gdims[] = { 1, 4, 2 }, sdims[] = { 5 }, idims[] = { 1, 1, 2, 2 },
          griddims[] = { 1, 1, 1, 2 }, cdims[] = { 4 }, pads[] = { 0, 1, 0, 2 }, one[] = { 1 };
  float scale[] = { 1, 2, 3, 4 }, bias[] = { 0, 0, 0, 1 }, half = 0.5f, centre[] = { 0, 0 };
  pb *g = msg();
  put_msg(g, 1, node("Gelu", "gelu", "x", "g0", NULL));
  put_msg(g, 1, node("Gelu", "gelu_tanh", "x", "g1", string_attr("approximate", "tanh")));
  put_msg(g, 1, node("GroupNormalization", "gn", "x4,gn_scale,gn_bias", "gn", int_attr("num_groups", 2)));
  put_msg(g, 1, node("Greater", "positive", "x,zero", "b", NULL));
  put_msg(g, 1, node("ReduceMax", "any", "b", "rmax", int_attr("keepdims", 0)));
  put_msg(g, 1, node("ReduceMin", "all", "b", "rmin", int_attr("keepdims", 0)));
  put_msg(g, 1, node("Pad", "wrap", "x,pads", "pw", string_attr("mode", "wrap")));
  put_msg(g, 1, node("DFT", "dft", "signal,,axis", "dft_given", NULL));
  put_msg(g, 1, node("DFT", "dft_default", "signal", "dft_default", NULL));
  put_msg(g, 1, node("GridSample", "sample", "image,grid", "gs", string_attr("mode", "linear")));
  put_msg(g, 1, node("QuantizeLinear", "quantize", "x,q_scale", "q", int_attr("output_dtype", 3 /* INT8 */)));
  put_msg(g, 5, float_tensor("gn_scale", 1, cdims, scale, 4));
  put_msg(g, 5, float_tensor("gn_bias", 1, cdims, bias, 4));
  put_msg(g, 5, float_tensor("zero", 0, NULL, centre, 1));
  put_msg(g, 5, i64_tensor("pads", 1, pads, 4));
  put_msg(g, 5, i64_tensor("axis", 0, one, 1));
  put_msg(g, 5, float_tensor("grid", 4, griddims, centre, 2));
  put_msg(g, 5, float_tensor("q_scale", 0, NULL, &half, 1));
  put_msg(g, 11, value_info("x", 1, 2, xdims));
  put_msg(g, 11, value_info("x4", 1, 3, gdims));
  int64_t sigdims[] = { 1, 4, 1 };
  put_msg(g, 11, value_info("signal", 1, 3, sigdims));
  put_msg(g, 11, value_info("image", 1, 4, idims));
  const char *outs[] = { "g0", "g1", "gn", "rmax", "rmin", "pw", "dft_given", "dft_default", "gs", "q" };
  for (guint i = 0; i < G_N_ELEMENTS(outs); i++)
    put_msg(g, 12, value_info(outs[i], 1, 0, NULL));
  pb *bytes = model(21, g);
  char *path = write_file("opset21.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  const float xv[] = { -2, -0.5f, 0, 0.5f, 1.5f, 3 };
  ts_tensor *in[4] = { ts_constant(TS_F32, TS_SHAPE(2, 3), xv),
                       ts_reshape(ts_range(TS_F32, 0, 8, 1), TS_SHAPE(1, 4, 2)),
                       ts_reshape(ts_range(TS_F32, 1, 5, 1), TS_SHAPE(1, 4, 1)),
                       ts_reshape(ts_range(TS_F32, 1, 5, 1), TS_SHAPE(1, 1, 2, 2)) };
  ts_tensor *y[10];
  g_assert_true(ts_onnx_model_run(m, in, 4, y));
  double gelu[6], gelu_tanh[6];
  for (int i = 0; i < 6; i++) {
    gelu[i] = 0.5 * xv[i] * (1 + erf(xv[i] / sqrt(2)));
    gelu_tanh[i] = 0.5 * xv[i] * (1 + tanh(sqrt(2 / G_PI) * (xv[i] + 0.044715 * pow(xv[i], 3))));
  }
  assert_values(y[0], gelu, 6, 1e-5, "gelu");
  assert_values(y[1], gelu_tanh, 6, 1e-5, "gelu tanh");
  g_assert_cmpfloat(fabs(gelu[0] - gelu_tanh[0]), >, 1e-5); /* the two differ */
  /* each group of two channels is 0..3 (+4): (v - 1.5) / sqrt(1.25 + 1e-5) */
  double n[4], gn[8];
  for (int i = 0; i < 4; i++)
    n[i] = (i - 1.5) / sqrt(1.25 + 1e-5);
  for (int ch = 0; ch < 4; ch++)
    for (int l = 0; l < 2; l++)
      gn[2 * ch + l] = n[2 * (ch % 2) + l] * scale[ch] + bias[ch];
  assert_values(y[2], gn, 8, 1e-5, "group norm (21)");
  g_assert_cmpint(ts_tensor_dtype(y[3]), ==, TS_BOOL);
  assert_values(y[3], (const double[]){ 1 }, 1, 0, "max of bools");
  assert_values(y[4], (const double[]){ 0 }, 1, 0, "min of bools");
  /* np.pad(x, ((0, 0), (1, 2)), mode="wrap") */
  assert_values(y[5], (const double[]){ 0, -2, -0.5, 0, -2, -0.5, 3, 0.5, 1.5, 3, 0.5, 1.5 }, 12, 0, "wrap");
  /* DFT of 1 2 3 4: 10, -2+2i, -2, -2-2i */
  const double dft[] = { 10, 0, -2, 2, -2, 0, -2, -2 };
  assert_values(y[6], dft, 8, 1e-5, "dft (axis 1)");
  assert_values(y[7], dft, 8, 1e-5, "dft (axis -2)");
  assert_values(y[8], (const double[]){ 2.5 }, 1, 1e-6, "grid sample (linear)");
  g_assert_cmpint(ts_tensor_dtype(y[9]), ==, TS_I8);
  assert_values(y[9], (const double[]){ -4, -1, 0, 1, 3, 6 }, 6, 0, "quantized");
  ts_onnx_model_free(m);
  g_free(path);

  /* opset 18: GroupNormalization's scale and bias per group */
  float gscale[] = { 2, -1 }, gbias[] = { 0.5f, 0 };
  int64_t two[] = { 2 };
  g = msg();
  put_msg(g, 1, node("GroupNormalization", "gn", "x4,gn_scale,gn_bias", "gn", int_attr("num_groups", 2)));
  put_msg(g, 5, float_tensor("gn_scale", 1, two, gscale, 2));
  put_msg(g, 5, float_tensor("gn_bias", 1, two, gbias, 2));
  put_msg(g, 11, value_info("x4", 1, 3, gdims));
  put_msg(g, 12, value_info("gn", 1, 0, NULL));
  bytes = model(18, g);
  path = write_file("opset18_group_norm.onnx", bytes);
  g_byte_array_unref(bytes);
  m = load_ok(path);
  g_assert_true(ts_onnx_model_run(m, &in[1], 1, y));
  for (int ch = 0; ch < 4; ch++)
    for (int l = 0; l < 2; l++)
      gn[2 * ch + l] = n[2 * (ch % 2) + l] * gscale[ch / 2] + gbias[ch / 2];
  assert_values(y[0], gn, 8, 1e-5, "group norm (18)");
  ts_onnx_model_free(m);
  g_free(path);

  /* opset 19: Resize's half_pixel_symmetric, 4 to 2 (a scale of 0.6:
   * 2.4 wide, the output 2); half_pixel would give 4/3 and 3 */
  float scales[] = { 1, 1, 1, 0.6f };
  int64_t rdims[] = { 1, 1, 1, 4 }, four[] = { 4 };
  g = msg();
  put_msg(g, 1, node("Resize", "resize", "x,,scales", "y",
                     concat_attrs(string_attr("mode", "linear"),
                                  string_attr("coordinate_transformation_mode", "half_pixel_symmetric"))));
  put_msg(g, 5, float_tensor("scales", 1, four, scales, 4));
  put_msg(g, 11, value_info("x", 1, 4, rdims));
  put_msg(g, 12, value_info("y", 1, 0, NULL));
  bytes = model(19, g);
  path = write_file("resize_half_pixel_symmetric.onnx", bytes);
  g_byte_array_unref(bytes);
  m = load_ok(path);
  ts_tensor *row = ts_reshape(ts_range(TS_F32, 1, 5, 1), TS_SHAPE(1, 1, 1, 4));
  g_assert_true(ts_onnx_model_run(m, &row, 1, y));
  assert_values(y[0], (const double[]){ 5.0 / 3, 10.0 / 3 }, 2, 1e-5, "half_pixel_symmetric");
  ts_onnx_model_free(m);
  g_free(path);

  /* opset 19: AveragePool's dilations (a 2 x 2 window two apart) */
  int64_t pdims[] = { 1, 1, 4, 4 }, twos[] = { 2, 2 };
  g = msg();
  put_msg(g, 1, node("AveragePool", "pool", "x", "y",
                     concat_attrs(ints_attr("kernel_shape", twos, 2), ints_attr("dilations", twos, 2))));
  put_msg(g, 11, value_info("x", 1, 4, pdims));
  put_msg(g, 12, value_info("y", 1, 0, NULL));
  bytes = model(19, g);
  path = write_file("average_pool_dilations.onnx", bytes);
  g_byte_array_unref(bytes);
  m = load_ok(path);
  ts_tensor *square = ts_reshape(ts_range(TS_F32, 0, 16, 1), TS_SHAPE(1, 1, 4, 4));
  if (!ts_onnx_model_run(m, &square, 1, y))
    g_error("%s", ts_error_peek()->message);
  assert_values(y[0], (const double[]){ 5, 6, 9, 10 }, 4, 1e-6, "dilated average pool");
  ts_onnx_model_free(m);
  g_free(path);

  /* opset 22 (bfloat16 added to ops) loads as 21 does */
  g = msg();
  put_msg(g, 1, node("Gelu", "gelu", "x", "y", NULL));
  put_msg(g, 11, value_info("x", 1, 2, xdims));
  put_msg(g, 12, value_info("y", 1, 0, NULL));
  bytes = model(22, g);
  path = write_file("opset22.onnx", bytes);
  g_byte_array_unref(bytes);
  m = load_ok(path);
  g_assert_true(ts_onnx_model_run(m, in, 1, y));
  assert_values(y[0], gelu, 6, 1e-5, "gelu (22)");
  ts_onnx_model_free(m);
  g_free(path);

  /* refused by name: blocked quantization, GridSample's bilinear at 20 */
  g = msg();
  put_msg(g, 1, node("DequantizeLinear", "blocked", "x,s", "y", int_attr("block_size", 2)));
  put_msg(g, 5, float_tensor("s", 1, two, gscale, 2));
  put_msg(g, 11, value_info("x", 1, 1, sdims));
  put_msg(g, 12, value_info("y", 1, 0, NULL));
  bytes = model(21, g);
  path = write_file("blocked_dequantize.onnx", bytes);
  g_byte_array_unref(bytes);
  assert_run_fails(path, ts_ones(TS_F32, TS_SHAPE(5)), TS_ERR_UNIMPLEMENTED,
                   (const char *const[]){ "blocked", "block_size 2", NULL });
  g_free(path);
  g = msg();
  put_msg(g, 1, node("GridSample", "sample", "image,grid", "y", string_attr("mode", "bilinear")));
  put_msg(g, 5, float_tensor("grid", 4, griddims, centre, 2));
  put_msg(g, 11, value_info("image", 1, 4, idims));
  put_msg(g, 12, value_info("y", 1, 0, NULL));
  bytes = model(20, g);
  path = write_file("grid_sample_bilinear_20.onnx", bytes);
  g_byte_array_unref(bytes);
  assert_run_fails(path, in[3], TS_ERR_INVALID_ARGUMENT, (const char *const[]){ "sample", "'bilinear'", "opset 20", NULL });
  g_free(path);
  ts_scope_end(scope);
}

/* A model that imports only the opset `version` of `domain`. */
static pb *model_of_domain(const char *domain, int version, pb *graph)
{
  pb *m = msg();
  put_int(m, 1, 8);
  pb *op = msg();
  put_str(op, 1, domain);
  put_int(op, 2, version);
  put_msg(m, 8, op);
  put_msg(m, 7, graph);
  return m;
}

/* ai.onnx.preview.training in a model that imports no default opset:
 * Adagrad with a decaying rate, Nesterov Momentum at its first update
 * (beta taken as 1), both against values worked by hand; a default-domain
 * node in such a model is refused naming the domain. */
static void test_training_optimizers(void)
{
  int64_t dims[] = { 2 };
  pb *g = msg();
  pb *adagrad = node("Adagrad", "ada", "r,t1,x,g,s", "xa,ha", float_attr("decay_factor", 0.5f));
  put_str(adagrad, 7, "ai.onnx.preview.training");
  put_msg(g, 1, adagrad);
  pb *attrs = concat_attrs(concat_attrs(float_attr("alpha", 0.9f), float_attr("beta", 0.5f)),
                           concat_attrs(float_attr("norm_coefficient", 0.01f), string_attr("mode", "nesterov")));
  pb *momentum = node("Momentum", "mom", "r,t0,x,g,s", "xm,vm", attrs);
  put_str(momentum, 7, "ai.onnx.preview.training");
  put_msg(g, 1, momentum);
  put_msg(g, 11, value_info("r", 1, 0, NULL));
  put_msg(g, 11, value_info("t1", 7, 0, NULL));
  put_msg(g, 11, value_info("t0", 7, 0, NULL));
  put_msg(g, 11, value_info("x", 1, 1, dims));
  put_msg(g, 11, value_info("g", 1, 1, dims));
  put_msg(g, 11, value_info("s", 1, 1, dims));
  put_msg(g, 12, value_info("xa", 1, 1, dims));
  put_msg(g, 12, value_info("xm", 1, 1, dims));
  pb *bytes = model_of_domain("ai.onnx.preview.training", 1, g);
  char *path = write_file("optimizers.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  float r = 0.1f, x[] = { 1, 2 }, gv[] = { -1, 0.5f }, sv[] = { 0.5f, 0 };
  int64_t one = 1, zero = 0;
  ts_tensor *in[6] = { ts_constant(TS_F32, TS_SCALAR_SHAPE, &r), ts_constant(TS_I64, TS_SCALAR_SHAPE, &one),
                       ts_constant(TS_I64, TS_SCALAR_SHAPE, &zero), ts_constant(TS_F32, TS_SHAPE(2), x),
                       ts_constant(TS_F32, TS_SHAPE(2), gv), ts_constant(TS_F32, TS_SHAPE(2), sv) };
  ts_tensor *out[2];
  g_assert_true(ts_onnx_model_run(m, in, 6, out));
  /* Adagrad: rate 0.1 / 1.5, H_new = {1.5, 0.25}, epsilon 1e-6 */
  double rate = 0.1 / 1.5;
  g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(out[0], 0), 1 + rate / (sqrt(1.5) + 1e-6), 1e-6);
  g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(out[0], 1), 2 - rate * 0.5 / (0.5 + 1e-6), 1e-6);
  /* Momentum: g = 0.01 x + G = {-0.99, 0.52}, V_new = 0.9 V + g = {-0.54, 0.52},
   * X_new = X - 0.1 (g + 0.9 V_new) */
  g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(out[1], 0), 1.1476, 1e-6);
  g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(out[1], 1), 1.9012, 1e-6);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);

  g = msg();
  put_msg(g, 1, node("Relu", "relu", "x", "y", NULL));
  put_msg(g, 11, value_info("x", 1, 1, dims));
  put_msg(g, 12, value_info("y", 1, 1, dims));
  bytes = model_of_domain("ai.onnx.preview.training", 1, g);
  path = write_file("no-default-opset.onnx", bytes);
  g_byte_array_unref(bytes);
  assert_load_fails(path, TS_ERR_FORMAT, WORDS("relu", "imports no opset", "'ai.onnx'"));
  g_free(path);
}

/* The outputs of a one-node pooling model over x (1x1x3x3), eagerly. */
static void run_pool(const char *op, pb *attrs, int n_out, const float *x, ts_tensor **out)
{
  int64_t dims[] = { 1, 1, 3, 3 };
  pb *g = msg();
  put_msg(g, 1, node(op, "pool", "x", n_out > 1 ? "y,i" : "y", attrs));
  put_msg(g, 11, value_info("x", 1, 4, dims));
  put_msg(g, 12, value_info("y", 1, 0, NULL));
  if (n_out > 1)
    put_msg(g, 12, value_info("i", 7, 0, NULL));
  pb *bytes = model(12, g);
  char *path = write_file("pool.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_tensor *in = ts_constant(TS_F32, TS_SHAPE(1, 1, 3, 3), x);
  if (!ts_onnx_model_run(m, &in, 1, out))
    g_error("%s", ts_error_peek()->message);
  ts_onnx_model_free(m);
  g_free(path);
}

/* MaxPool's Indices (row- and column-major), dilations; AveragePool's
 * ceil_mode windows with count_include_pad count the pads, not what lies
 * past them. */
static void test_pool_variants(void)
{
  ts_scope *scope = ts_scope_begin();
  float x[] = { 1, 5, 2, 4, 3, 9, 0, 8, 7 };
  int64_t k2[] = { 2, 2 }, k3[] = { 3, 3 }, s2[] = { 2, 2 }, d2[] = { 2, 2 }, pads[] = { 1, 1, 0, 0 };
  ts_tensor *out[2];
  for (int order = 0; order < 2; order++) {
    run_pool("MaxPool", concat_attrs(ints_attr("kernel_shape", k2, 2), int_attr("storage_order", order)), 2, x, out);
    float want[] = { 5, 9, 8, 9 };
    for (int i = 0; i < 4; i++)
      g_assert_cmpfloat(ts_tensor_get_f64(out[0], i), ==, want[i]);
    check_i64s(out[1], order ? (const int64_t[]){ 3, 7, 5, 7 } : (const int64_t[]){ 1, 5, 7, 5 }, 4);
  }
  /* a 2x2 window dilated by 2 covers the corners */
  run_pool("MaxPool", concat_attrs(ints_attr("kernel_shape", k2, 2), ints_attr("dilations", d2, 2)), 1, x, out);
  g_assert_cmpint(ts_tensor_size(out[0]), ==, 1);
  g_assert_cmpfloat(ts_tensor_get_f64(out[0], 0), ==, 7);
  float y[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
  pb *attrs = concat_attrs(concat_attrs(ints_attr("kernel_shape", k3, 2), ints_attr("strides", s2, 2)),
                           concat_attrs(ints_attr("pads", pads, 4),
                                        concat_attrs(int_attr("ceil_mode", 1), int_attr("count_include_pad", 1))));
  run_pool("AveragePool", attrs, 1, y, out);
  double want[] = { 12.0 / 9, 16.0 / 6, 24.0 / 6, 28.0 / 4 };
  g_assert_cmpint(ts_tensor_size(out[0]), ==, 4);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(out[0], i), want[i], 1e-6);
  ts_scope_end(scope);
}

/* Upsample before opset 9: scales an attribute; nearest rounds down,
 * linear maps output i to input i / scale (asymmetric), clamped. */
static void test_upsample_attribute(void)
{
  int64_t dims[] = { 1, 1, 2, 2 };
  const char *modes[] = { "nearest", "linear" };
  float want[2][8] = { { 1, 1, 2, 2, 3, 3, 4, 4 }, { 1, 1.5f, 2, 2, 3, 3.5f, 4, 4 } };
  for (int m = 0; m < 2; m++) {
    pb *scales = msg();
    put_str(scales, 1, "scales");
    float v[] = { 1, 1, 1, 2 };
    for (int i = 0; i < 4; i++) {
      put_varint(scales, (7 << 3) | 5); /* floats: fixed32 each */
      g_byte_array_append(scales, (const guint8 *)&v[i], sizeof v[i]);
    }
    put_int(scales, 20, 6); /* FLOATS */
    pb *attrs = msg();
    put_msg(attrs, 5, scales);
    pb *g = msg();
    put_msg(g, 1, node("Upsample", "up", "x", "y", concat_attrs(attrs, string_attr("mode", modes[m]))));
    put_msg(g, 11, value_info("x", 1, 4, dims));
    put_msg(g, 12, value_info("y", 1, 0, NULL));
    pb *bytes = model(8, g);
    char *path = write_file("upsample.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *model_ = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    float x[] = { 1, 2, 3, 4 };
    ts_tensor *in = ts_constant(TS_F32, TS_SHAPE(1, 1, 2, 2), x), *y;
    if (!ts_onnx_model_run(model_, &in, 1, &y))
      g_error("%s", ts_error_peek()->message);
    g_assert_cmpint(ts_tensor_dim(y, 3), ==, 4);
    for (int i = 0; i < 8; i++)
      g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y, i), want[m][i], 1e-6);
    ts_scope_end(scope);
    ts_onnx_model_free(model_);
    g_free(path);
  }
}

/* Einsum's ellipses (broadcast dims named by the equation's unused
 * letters, first in an implicit output) and repeated letters (diagonals). */
static void test_einsum_ellipsis_diagonal(void)
{
  const char *equations[] = { "...ii->...i", "...j,j", "bij,b...j->b...i" };
  int64_t adims[3][3] = { { 2, 2, 2 }, { 1, 2, 3 }, { 1, 2, 3 } }, bdims[3][3] = { { 0 }, { 3 }, { 1, 2, 3 } };
  int brank[] = { 0, 1, 3 };
  float av[] = { 1, 2, 3, 4, 5, 6, 7, 8 }, bv[] = { 1, 0, 2, 1, 1, 1 };
  /* the diagonals of a's two 2x2 blocks; a [1, 2, 3] times b [3]; y[b, e, i] = a[b, i, :] . b[b, e, :] */
  float want[3][4] = { { 1, 4, 5, 8 }, { 7, 16 }, { 7, 16, 6, 15 } };
  int64_t want_size[] = { 4, 2, 4 };
  for (int e = 0; e < 3; e++) {
    pb *g = msg();
    put_msg(g, 1, node("Einsum", "ein", brank[e] ? "a,b" : "a", "y", string_attr("equation", equations[e])));
    put_msg(g, 11, value_info("a", 1, 3, adims[e]));
    if (brank[e])
      put_msg(g, 11, value_info("b", 1, brank[e], bdims[e]));
    put_msg(g, 12, value_info("y", 1, 0, NULL));
    pb *bytes = model(13, g);
    char *path = write_file("einsum2.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *m = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    ts_shape as = { .rank = 3 }, bs = { .rank = brank[e] };
    for (int d = 0; d < 3; d++)
      as.dim[d] = adims[e][d];
    for (int d = 0; d < brank[e]; d++)
      bs.dim[d] = bdims[e][d];
    ts_tensor *in[2] = { ts_constant(TS_F32, as, av), brank[e] ? ts_constant(TS_F32, bs, bv) : NULL }, *y;
    if (!ts_onnx_model_run(m, in, brank[e] ? 2 : 1, &y))
      g_error("%s: %s", equations[e], ts_error_peek()->message);
    g_assert_cmpint(ts_tensor_size(y), ==, want_size[e]);
    for (int i = 0; i < want_size[e]; i++)
      g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, want[e][i]);
    ts_scope_end(scope);
    ts_onnx_model_free(m);
    g_free(path);
  }
}

/* Scan (opset 11) along axis 1 of its input, backwards, its output
 * stacked on axis 1: a running sum of x's columns from the last, eagerly
 * and as a traced graph. */
static void test_scan_axes_directions(void)
{
  int64_t two[] = { 2 }, xdims[] = { 2, 3 }, one[] = { 1 };
  pb *body = msg();
  put_msg(body, 1, node("Add", "add", "s,xt", "s_out", NULL));
  put_msg(body, 1, node("Identity", "id", "s_out", "y_out", NULL));
  put_msg(body, 11, value_info("s", 1, 1, two));
  put_msg(body, 11, value_info("xt", 1, 1, two));
  put_msg(body, 12, value_info("s_out", 1, 1, two));
  put_msg(body, 12, value_info("y_out", 1, 1, two));
  pb *attrs = concat_attrs(concat_attrs(graph_attr("body", body), int_attr("num_scan_inputs", 1)),
                           concat_attrs(concat_attrs(ints_attr("scan_input_axes", one, 1),
                                                     ints_attr("scan_input_directions", one, 1)),
                                        ints_attr("scan_output_axes", one, 1)));
  pb *g = msg();
  put_msg(g, 1, node("Scan", "scan", "s0,x", "s_final,y", attrs));
  put_msg(g, 11, value_info("s0", 1, 1, two));
  put_msg(g, 11, value_info("x", 1, 2, xdims));
  put_msg(g, 12, value_info("s_final", 1, 1, two));
  put_msg(g, 12, value_info("y", 1, 2, xdims));
  pb *bytes = model(11, g);
  char *path = write_file("scan.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  float s0[] = { 0, 0 }, x[] = { 1, 2, 3, 4, 5, 6 };
  float want_final[] = { 6, 15 }, want_y[] = { 3, 5, 6, 6, 11, 15 }; /* in iteration order: columns 2, 1, 0 */
  for (int graph = 0; graph < 2; graph++) {
    ts_scope *scope = ts_scope_begin();
    ts_tensor *in[2] = { ts_constant(TS_F32, TS_SHAPE(2), s0), ts_constant(TS_F32, TS_SHAPE(2, 3), x) };
    ts_tensor *out[2];
    if (graph) {
      ts_value args[2] = { TS_TENSOR_VALUE(in[0]), TS_TENSOR_VALUE(in[1]) };
      for (int i = 0; i < 2; i++) {
        out[i] = ts_function_call(ts_onnx_model_function(m, i), args, 2);
        if (!out[i])
          g_error("%s", ts_error_peek()->message);
      }
    } else if (!ts_onnx_model_run(m, in, 2, out))
      g_error("%s", ts_error_peek()->message);
    for (int i = 0; i < 2; i++)
      g_assert_cmpfloat(ts_tensor_get_f64(out[0], i), ==, want_final[i]);
    g_assert_cmpint(ts_tensor_dim(out[1], 0), ==, 2);
    g_assert_cmpint(ts_tensor_dim(out[1], 1), ==, 3);
    for (int i = 0; i < 6; i++)
      g_assert_cmpfloat(ts_tensor_get_f64(out[1], i), ==, want_y[i]);
    ts_scope_end(scope);
  }
  ts_onnx_model_free(m);
  g_free(path);
}

/* Resize's tf_crop_and_resize: the region of roi (fractions of in - 1)
 * sampled at the output size, linear; samples past the input take
 * extrapolation_value. */
static void test_resize_crop(void)
{
  int64_t xdims[] = { 1, 4 }, four[] = { 4 };
  float roi[] = { 0, 0.5f, 1, 1.5f };
  int64_t sizes[] = { 1, 3 };
  pb *g = msg();
  pb *attrs = concat_attrs(concat_attrs(string_attr("coordinate_transformation_mode", "tf_crop_and_resize"),
                                        string_attr("mode", "linear")),
                           float_attr("extrapolation_value", -1));
  put_msg(g, 1, node("Resize", "crop", "x,roi,,sizes", "y", attrs));
  put_msg(g, 5, float_tensor("roi", 1, four, roi, 4));
  pb *st = msg();
  put_int(st, 1, 2);
  put_int(st, 2, 7); /* INT64 */
  put_str(st, 8, "sizes");
  put_bytes(st, 9, sizes, sizeof sizes);
  put_msg(g, 5, st);
  put_msg(g, 11, value_info("x", 1, 2, xdims));
  put_msg(g, 12, value_info("y", 1, 0, NULL));
  pb *bytes = model(13, g);
  char *path = write_file("crop.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  float x[] = { 0, 10, 20, 30 };
  ts_tensor *in = ts_constant(TS_F32, TS_SHAPE(1, 4), x), *y;
  if (!ts_onnx_model_run(m, &in, 1, &y))
    g_error("%s", ts_error_peek()->message);
  /* axis 1 samples 1.5, 3 and 4.5 (past the last element, 3) */
  float want[] = { 15, 30, -1 };
  g_assert_cmpint(ts_tensor_size(y), ==, 3);
  for (int i = 0; i < 3; i++)
    g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y, i), want[i], 1e-5);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* MaxUnpool as ONNX's reference: the last of equal indices wins, in the
 * inferred shape, which sits at the start of output_shape's zeros. */
static void test_max_unpool(void)
{
  int64_t xdims[] = { 1, 1, 1, 2 }, k[] = { 1, 2 };
  int64_t shape[] = { 1, 1, 2, 5 };
  for (int with_shape = 0; with_shape < 2; with_shape++) {
    pb *g = msg();
    pb *attrs = concat_attrs(ints_attr("kernel_shape", k, 2), ints_attr("strides", k, 2));
    put_msg(g, 1, node("MaxUnpool", "unpool", with_shape ? "x,i,shape" : "x,i", "y", attrs));
    if (with_shape) {
      pb *st = msg();
      put_int(st, 1, 4);
      put_int(st, 2, 7); /* INT64 */
      put_str(st, 8, "shape");
      put_bytes(st, 9, shape, sizeof shape);
      put_msg(g, 5, st);
    }
    put_msg(g, 11, value_info("x", 1, 4, xdims));
    put_msg(g, 11, value_info("i", 7, 4, xdims));
    put_msg(g, 12, value_info("y", 1, 0, NULL));
    pb *bytes = model(11, g);
    char *path = write_file("unpool.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *m = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    float x[] = { 3, 4 };
    int64_t idx[] = { 1, 1 };
    ts_tensor *in[2] = { ts_constant(TS_F32, TS_SHAPE(1, 1, 1, 2), x), ts_constant(TS_I64, TS_SHAPE(1, 1, 1, 2), idx) }, *y;
    if (!ts_onnx_model_run(m, in, 2, &y))
      g_error("%s", ts_error_peek()->message);
    float want[10] = { 0, 4 };
    g_assert_cmpint(ts_tensor_size(y), ==, with_shape ? 10 : 4);
    g_assert_cmpint(ts_tensor_dim(y, 3), ==, with_shape ? 5 : 4);
    for (int i = 0; i < ts_tensor_size(y); i++)
      g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, want[i]);
    ts_scope_end(scope);
    ts_onnx_model_free(m);
    g_free(path);
  }
}

/* RoiAlign (opset 10: output_half_pixel) with an adaptive 2x2 grid over a
 * 2x2 image: avg is the mean of the four bilinear samples, max the
 * largest weighted tap. */
static void test_roi_align(void)
{
  int64_t xdims[] = { 1, 1, 2, 2 }, rdims[] = { 1, 4 }, bdims[] = { 1 };
  const char *modes[] = { "avg", "max" };
  double want[] = { 3.25, 4 };
  for (int m = 0; m < 2; m++) {
    pb *g = msg();
    put_msg(g, 1, node("RoiAlign", "roi", "x,rois,b", "y", string_attr("mode", modes[m])));
    put_msg(g, 11, value_info("x", 1, 4, xdims));
    put_msg(g, 11, value_info("rois", 1, 2, rdims));
    put_msg(g, 11, value_info("b", 7, 1, bdims));
    put_msg(g, 12, value_info("y", 1, 0, NULL));
    pb *bytes = model(10, g);
    char *path = write_file("roi.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *model_ = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    float x[] = { 1, 2, 3, 4 }, box[] = { 0, 0, 2, 2 };
    int64_t b = 0;
    ts_tensor *in[3] = { ts_constant(TS_F32, TS_SHAPE(1, 1, 2, 2), x), ts_constant(TS_F32, TS_SHAPE(1, 4), box),
                         ts_constant(TS_I64, TS_SHAPE(1), &b) }, *y;
    if (!ts_onnx_model_run(model_, in, 3, &y))
      g_error("%s", ts_error_peek()->message);
    g_assert_cmpint(ts_tensor_size(y), ==, 1);
    g_assert_cmpfloat_with_epsilon(ts_tensor_get_f64(y, 0), want[m], 1e-6);
    ts_scope_end(scope);
    ts_onnx_model_free(model_);
    g_free(path);
  }
}

/* 3-D MaxPool and AveragePool: ceil_mode's last window takes the input
 * past the last full one, and AveragePool (even with count_include_pad)
 * divides by what lies in the input. */
static void test_pool_3d(void)
{
  int64_t xdims[] = { 1, 1, 1, 1, 3 }, k[] = { 1, 1, 2 };
  const char *ops[] = { "MaxPool", "AveragePool" };
  float want[2][2] = { { 2, 3 }, { 1.5f, 3 } };
  for (int o = 0; o < 2; o++) {
    pb *attrs = concat_attrs(concat_attrs(ints_attr("kernel_shape", k, 3), ints_attr("strides", k, 3)),
                             concat_attrs(int_attr("ceil_mode", 1), o ? int_attr("count_include_pad", 1) : msg()));
    pb *g = msg();
    put_msg(g, 1, node(ops[o], "pool", "x", "y", attrs));
    put_msg(g, 11, value_info("x", 1, 5, xdims));
    put_msg(g, 12, value_info("y", 1, 0, NULL));
    pb *bytes = model(12, g);
    char *path = write_file("pool3d.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *m = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    float x[] = { 1, 2, 3 };
    ts_tensor *in = ts_constant(TS_F32, TS_SHAPE(1, 1, 1, 1, 3), x), *y;
    if (!ts_onnx_model_run(m, &in, 1, &y))
      g_error("%s", ts_error_peek()->message);
    g_assert_cmpint(ts_tensor_rank(y), ==, 5);
    g_assert_cmpint(ts_tensor_size(y), ==, 2);
    for (int i = 0; i < 2; i++)
      g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, want[o][i]);
    ts_scope_end(scope);
    ts_onnx_model_free(m);
    g_free(path);
  }
}

/* A 3-D Conv: dilated along D, and padded with a stride of 2 (plus a bias). */
static void test_conv_3d(void)
{
  int64_t xdims[] = { 1, 1, 3, 1, 1 }, wdims[] = { 1, 1, 2, 1, 1 }, one[] = { 1 };
  int64_t dil[] = { 2, 1, 1 }, strides[] = { 2, 1, 1 }, pads[] = { 1, 0, 0, 1, 0, 0 };
  float w[] = { 1, 10 }, bias[] = { 100 };
  float want[2][2] = { { 31 }, { 110, 132 } };
  for (int v = 0; v < 2; v++) {
    pb *g = msg();
    pb *attrs = v ? concat_attrs(ints_attr("strides", strides, 3), ints_attr("pads", pads, 6))
                  : ints_attr("dilations", dil, 3);
    put_msg(g, 1, node("Conv", "conv", v ? "x,w,b" : "x,w", "y", attrs));
    put_msg(g, 5, float_tensor("w", 5, wdims, w, 2));
    if (v)
      put_msg(g, 5, float_tensor("b", 1, one, bias, 1));
    put_msg(g, 11, value_info("x", 1, 5, xdims));
    put_msg(g, 12, value_info("y", 1, 0, NULL));
    pb *bytes = model(11, g);
    char *path = write_file("conv3d.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *m = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    float x[] = { 1, 2, 3 };
    ts_tensor *in = ts_constant(TS_F32, TS_SHAPE(1, 1, 3, 1, 1), x), *y;
    if (!ts_onnx_model_run(m, &in, 1, &y))
      g_error("%s", ts_error_peek()->message);
    g_assert_cmpint(ts_tensor_rank(y), ==, 5);
    g_assert_cmpint(ts_tensor_size(y), ==, v ? 2 : 1);
    for (int i = 0; i < ts_tensor_size(y); i++)
      g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, want[v][i]);
    ts_scope_end(scope);
    ts_onnx_model_free(m);
    g_free(path);
  }
}

/* Conv and MaxPool with TensorFlow's SAME pads (3x3, stride 1, pads of 1)
 * run as the ops' own SAME padding, with no Concat of fills in the graph;
 * the results are the padded window's: zeros count in the sum, never in
 * the max (x is negative). */
static void test_conv_same_pads(void)
{
  int64_t xdims[] = { 1, 1, 3, 3 }, wdims[] = { 1, 1, 3, 3 }, k[] = { 3, 3 }, pads[] = { 1, 1, 1, 1 };
  float w[9], x[9];
  for (int i = 0; i < 9; i++) {
    w[i] = 1;
    x[i] = -(float)(i + 1);
  }
  pb *g = msg();
  put_msg(g, 1, node("Conv", "conv", "x,w", "sum", ints_attr("pads", pads, 4)));
  put_msg(g, 1, node("MaxPool", "pool", "x", "max", concat_attrs(ints_attr("kernel_shape", k, 2), ints_attr("pads", pads, 4))));
  put_msg(g, 5, float_tensor("w", 4, wdims, w, 9));
  put_msg(g, 11, value_info("x", 1, 4, xdims));
  put_msg(g, 12, value_info("sum", 1, 0, NULL));
  put_msg(g, 12, value_info("max", 1, 0, NULL));
  pb *bytes = model(13, g);
  char *path = write_file("same_pads.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  ts_value arg = TS_TENSOR_VALUE(ts_constant(TS_F32, TS_SHAPE(1, 1, 3, 3), x));
  for (int out = 0; out < 2; out++) {
    ts_function *fn = ts_onnx_model_function(m, out);
    ts_tensor *y = ts_function_call(fn, &arg, 1);
    g_assert_nonnull(y);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double want = out ? -INFINITY : 0;
        for (int a = i - 1; a <= i + 1; a++)
          for (int b = j - 1; b <= j + 1; b++)
            if (a >= 0 && a < 3 && b >= 0 && b < 3)
              want = out ? fmax(want, x[a * 3 + b]) : want + x[a * 3 + b];
        g_assert_cmpfloat(ts_tensor_get_f64(y, i * 3 + j), ==, want);
      }
    const ts_graph *traced = ts_concrete_graph(ts_function_concrete(fn, 0));
    bool same = false;
    for (int i = 0; i < ts_graph_n_nodes(traced); i++) {
      const ts_node *n = ts_graph_node(traced, i);
      g_assert_cmpint(ts_node_op(n), !=, TS_OP_CONCAT);
      if (ts_node_op(n) == TS_OP_CONV2D || ts_node_op(n) == TS_OP_MAX_POOL2D) {
        char *padding = ts_node_attr_to_string(n, ts_node_op(n) == TS_OP_CONV2D ? 1 : 2);
        same = strcmp(padding, "1") == 0; /* TS_PADDING_SAME */
        free(padding);
      }
    }
    g_assert_true(same);
  }
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* A 3-D ConvTranspose along D: each input element spreads the filter at
 * stride 2; pads crop the start, output_padding adds at the end. */
static void test_conv_transpose_3d(void)
{
  int64_t xdims[] = { 1, 1, 2, 1, 1 }, wdims[] = { 1, 1, 2, 1, 1 };
  int64_t strides[] = { 2, 1, 1 }, pads[] = { 1, 0, 0, 0, 0, 0 }, outpad[] = { 1, 0, 0 };
  float w[] = { 1, 10 };
  float want[2][4] = { { 1, 10, 2, 20 }, { 10, 2, 20, 0 } };
  for (int v = 0; v < 2; v++) {
    pb *g = msg();
    pb *attrs = ints_attr("strides", strides, 3);
    if (v)
      attrs = concat_attrs(attrs, concat_attrs(ints_attr("pads", pads, 6), ints_attr("output_padding", outpad, 3)));
    put_msg(g, 1, node("ConvTranspose", "deconv", "x,w", "y", attrs));
    put_msg(g, 5, float_tensor("w", 5, wdims, w, 2));
    put_msg(g, 11, value_info("x", 1, 5, xdims));
    put_msg(g, 12, value_info("y", 1, 0, NULL));
    pb *bytes = model(11, g);
    char *path = write_file("deconv3d.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *m = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    float x[] = { 1, 2 };
    ts_tensor *in = ts_constant(TS_F32, TS_SHAPE(1, 1, 2, 1, 1), x), *y;
    if (!ts_onnx_model_run(m, &in, 1, &y))
      g_error("%s", ts_error_peek()->message);
    g_assert_cmpint(ts_tensor_rank(y), ==, 5);
    g_assert_cmpint(ts_tensor_size(y), ==, 4);
    for (int i = 0; i < 4; i++)
      g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, want[v][i]);
    ts_scope_end(scope);
    ts_onnx_model_free(m);
    g_free(path);
  }
}

/* ConvTranspose against its definition, a naive loop: each input pixel i
 * and tap k add x * w into the output at i * stride + k * dilation - pad.
 * The first case is the model fuzz-onnx found (a 3x3 input, a 49x67 kernel,
 * strides 8x2: 200 bytes), which the old lowering, a convolution over the
 * input spread by the strides, refused (470 times the op's own
 * multiply-adds); the others add groups, batches, dilations, pads,
 * output_padding, output_shape, 1-D and a bias.  Eagerly and as a graph. */
typedef struct ct_case {
  int n_sp;                               /* spatial dims: 1 or 2 (a 1-D case uses index 1) */
  int64_t n, c, mg, group, in[2], k[2], s[2], d[2], pads[4], outpad[2], oshape[2];
  bool bias;
} ct_case;

static float ct_value(uint32_t *state)
{
  *state = *state * 1664525u + 1013904223u;
  return (float)((*state >> 8) % 2001) / 1000.0f - 1.0f;
}

static void test_conv_transpose_large(void)
{
  static const ct_case cases[] = {
    { 2, 1, 1, 2, 1, { 3, 3 }, { 49, 67 }, { 8, 2 }, { 1, 1 }, { 1, 2, 1, 2 }, { 0, 0 }, { 0, 0 }, false },
    { 2, 2, 4, 3, 2, { 5, 4 }, { 9, 11 }, { 8, 3 }, { 2, 3 }, { 1, 2, 3, 0 }, { 1, 2 }, { 0, 0 }, true },
    { 2, 2, 6, 2, 3, { 4, 7 }, { 3, 5 }, { 2, 4 }, { 1, 2 }, { 0, 0, 0, 0 }, { 0, 0 }, { 11, 30 }, true },
    { 1, 3, 2, 5, 1, { 1, 17 }, { 1, 33 }, { 1, 5 }, { 1, 4 }, { 0, 7, 0, 9 }, { 0, 3 }, { 0, 0 }, true },
  };
  for (size_t v = 0; v < G_N_ELEMENTS(cases); v++) {
    const ct_case *cc = &cases[v];
    int lead = 2 - cc->n_sp, rank = 2 + cc->n_sp;
    int64_t m = cc->mg * cc->group, cg = cc->c / cc->group, out[2] = { 1, 1 }, begin[2] = { 0, 0 };
    for (int i = lead; i < 2; i++) {
      int64_t extent = cc->s[i] * (cc->in[i] - 1) + (cc->k[i] - 1) * cc->d[i] + 1 + cc->outpad[i];
      if (cc->oshape[i]) { /* the total padding split, the odd one at the end */
        out[i] = cc->oshape[i];
        begin[i] = MAX(extent - out[i], 0) / 2;
      } else {
        out[i] = extent - cc->pads[i - lead] - cc->pads[i - lead + cc->n_sp];
        begin[i] = cc->pads[i - lead];
      }
    }
    int64_t xdims[4] = { cc->n, cc->c, cc->in[lead], cc->in[1] }, wdims[4] = { cc->c, cc->mg, cc->k[lead], cc->k[1] };
    int64_t ydims[4] = { cc->n, m, out[lead], out[1] }, bdims[1] = { m };
    size_t nx = (size_t)(cc->n * cc->c * cc->in[0] * cc->in[1]), nw = (size_t)(cc->c * cc->mg * cc->k[0] * cc->k[1]);
    size_t ny = (size_t)(cc->n * m * out[0] * out[1]);
    float *x = g_new(float, nx), *w = g_new(float, nw), *b = g_new(float, (size_t)m);
    uint32_t state = (uint32_t)v + 1;
    for (size_t i = 0; i < nx; i++)
      x[i] = ct_value(&state);
    for (size_t i = 0; i < nw; i++)
      w[i] = ct_value(&state);
    for (int64_t i = 0; i < m; i++)
      b[i] = ct_value(&state);
    double *want = g_new0(double, ny);
    for (int64_t n = 0; n < cc->n; n++)
      for (int64_t o = 0; o < m; o++)
        for (int64_t p = 0; p < out[0] * out[1]; p++)
          want[(n * m + o) * out[0] * out[1] + p] = cc->bias ? b[o] : 0;
    for (int64_t n = 0; n < cc->n; n++)
      for (int64_t ci = 0; ci < cc->c; ci++)
        for (int64_t iy = 0; iy < cc->in[0]; iy++)
          for (int64_t ix = 0; ix < cc->in[1]; ix++)
            for (int64_t mo = 0; mo < cc->mg; mo++)
              for (int64_t ky = 0; ky < cc->k[0]; ky++)
                for (int64_t kx = 0; kx < cc->k[1]; kx++) {
                  int64_t oy = iy * cc->s[0] + ky * cc->d[0] - begin[0];
                  int64_t ox = ix * cc->s[1] + kx * cc->d[1] - begin[1];
                  if (oy < 0 || oy >= out[0] || ox < 0 || ox >= out[1])
                    continue;
                  int64_t o = ci / cg * cc->mg + mo;
                  want[((n * m + o) * out[0] + oy) * out[1] + ox] +=
                    (double)x[((n * cc->c + ci) * cc->in[0] + iy) * cc->in[1] + ix] *
                    w[((ci * cc->mg + mo) * cc->k[0] + ky) * cc->k[1] + kx];
                }
    pb *attrs = concat_attrs(ints_attr("strides", cc->s + lead, cc->n_sp), ints_attr("dilations", cc->d + lead, cc->n_sp));
    attrs = concat_attrs(attrs, int_attr("group", cc->group));
    if (cc->oshape[1])
      attrs = concat_attrs(attrs, ints_attr("output_shape", cc->oshape + lead, cc->n_sp));
    else
      attrs = concat_attrs(concat_attrs(attrs, ints_attr("pads", cc->pads, 2 * cc->n_sp)),
                           ints_attr("output_padding", cc->outpad + lead, cc->n_sp));
    pb *g = msg();
    put_msg(g, 1, node("ConvTranspose", "deconv", cc->bias ? "x,w,b" : "x,w", "y", attrs));
    if (cc->n_sp == 1) { /* [N, C, W]: the 2-D dims less the first spatial one */
      xdims[2] = xdims[3];
      wdims[2] = wdims[3];
      ydims[2] = ydims[3];
    }
    put_msg(g, 5, float_tensor("w", rank, wdims, w, nw));
    if (cc->bias)
      put_msg(g, 5, float_tensor("b", 1, bdims, b, (size_t)m));
    put_msg(g, 11, value_info("x", 1, rank, xdims));
    put_msg(g, 12, value_info("y", 1, rank, ydims));
    pb *bytes = model(11, g);
    char *path = write_file("deconv.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *model_ = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    ts_shape xs = { .rank = rank };
    memcpy(xs.dim, xdims, sizeof(int64_t) * (size_t)rank);
    ts_tensor *in = ts_constant(TS_F32, xs, x);
    for (int graph = 0; graph < 2; graph++) {
      ts_tensor *y = run1(model_, &in, 1, graph);
      g_assert_cmpint(ts_tensor_rank(y), ==, rank);
      for (int d = 0; d < rank; d++)
        g_assert_cmpint(ts_tensor_dim(y, d), ==, ydims[d]);
      double taps = (double)(cg * cc->k[0] * cc->k[1]);
      for (size_t i = 0; i < ny; i++)
        if (!(fabs(ts_tensor_get_f64(y, (int64_t)i) - want[i]) <= 1e-6 * (taps + 4)))
          g_error("case %zu (%s): element %zu: got %.9g, want %.9g", v, graph ? "graph" : "eager", i,
                  ts_tensor_get_f64(y, (int64_t)i), want[i]);
    }
    ts_scope_end(scope);
    ts_onnx_model_free(model_);
    g_free(path);
    g_free(want);
    g_free(x);
    g_free(w);
    g_free(b);
  }
}

/* ConvTranspose's output_shape may ask for any size: past the importer's
 * cap on sizes a model computes, the node is refused by name. */
static void test_conv_transpose_output_capped(void)
{
  int64_t xdims[] = { 1, 1, 2, 2 }, wdims[] = { 1, 1, 2, 2 }, oshape[] = { 100000, 100000 };
  float w[4] = { 1, 2, 3, 4 }, x[4] = { 1, 1, 1, 1 };
  pb *g = msg();
  put_msg(g, 1, node("ConvTranspose", "deconv", "x,w", "y", ints_attr("output_shape", oshape, 2)));
  put_msg(g, 5, float_tensor("w", 4, wdims, w, 4));
  put_msg(g, 11, value_info("x", 1, 4, xdims));
  put_msg(g, 12, value_info("y", 1, 0, NULL));
  pb *bytes = model(11, g);
  char *path = write_file("deconv_huge.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = ts_onnx_load(path);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *in = ts_constant(TS_F32, TS_SHAPE(1, 1, 2, 2), x), *y = NULL;
  g_assert_false(m && ts_onnx_model_run(m, &in, 1, &y));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_test_message("%s", e->message);
  const char *const *words = WORDS("ConvTranspose", "'deconv'", "10000000000 elements");
  for (int i = 0; words[i]; i++)
    if (!strstr(e->message, words[i]))
      g_error("'%s' not in: %s", words[i], e->message);
  ts_error_free(e);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* TfIdfVectorizer over int64: unigrams count once, the bigram (1, 2) at
 * each skip distance; TF counts, IDF gives the weight where counted,
 * TFIDF the weight times the count. */
static void test_tfidf_vectorizer(void)
{
  int64_t xdims[] = { 1, 5 }, pool[] = { 1, 2, 1, 2 }, counts[] = { 0, 2 }, indexes[] = { 0, 1, 2 };
  const char *modes[] = { "TF", "IDF", "TFIDF" };
  /* x = 1 2 1 3 2: unigrams 1 and 2 twice each; (1, 2) once adjacent, once two apart */
  float want[3][3] = { { 2, 2, 2 }, { 0.5f, 1, 2 }, { 1, 2, 4 } };
  for (int m = 0; m < 3; m++) {
    pb *weights = msg();
    put_str(weights, 1, "weights");
    float wv[] = { 0.5f, 1, 2 };
    for (int i = 0; i < 3; i++) {
      put_varint(weights, (7 << 3) | 5); /* floats: fixed32 each */
      g_byte_array_append(weights, (const guint8 *)&wv[i], sizeof wv[i]);
    }
    put_int(weights, 20, 6); /* FLOATS */
    pb *attrs = msg();
    put_msg(attrs, 5, weights);
    attrs = concat_attrs(attrs, concat_attrs(ints_attr("pool_int64s", pool, 4), ints_attr("ngram_counts", counts, 2)));
    attrs = concat_attrs(attrs, concat_attrs(ints_attr("ngram_indexes", indexes, 3), string_attr("mode", modes[m])));
    attrs = concat_attrs(attrs, concat_attrs(int_attr("min_gram_length", 1), int_attr("max_gram_length", 2)));
    attrs = concat_attrs(attrs, int_attr("max_skip_count", 2));
    pb *g = msg();
    put_msg(g, 1, node("TfIdfVectorizer", "tfidf", "x", "y", attrs));
    put_msg(g, 11, value_info("x", 7, 2, xdims));
    put_msg(g, 12, value_info("y", 1, 0, NULL));
    pb *bytes = model(9, g);
    char *path = write_file("tfidf.onnx", bytes);
    g_byte_array_unref(bytes);
    ts_onnx_model *model_ = load_ok(path);
    ts_scope *scope = ts_scope_begin();
    int64_t x[] = { 1, 2, 1, 3, 2 };
    ts_tensor *in = ts_constant(TS_I64, TS_SHAPE(1, 5), x), *y;
    if (!ts_onnx_model_run(model_, &in, 1, &y))
      g_error("%s", ts_error_peek()->message);
    g_assert_cmpint(ts_tensor_dtype(y), ==, TS_F32);
    g_assert_cmpint(ts_tensor_size(y), ==, 3);
    for (int i = 0; i < 3; i++)
      g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, want[m][i]);
    ts_scope_end(scope);
    ts_onnx_model_free(model_);
    g_free(path);
  }
}

static char *run_cli(const char *const *args, int *status)
{
  const char *cli = g_getenv("TRACESCOPE_CLI");
  g_assert_nonnull(cli);
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (gpointer)cli);
  for (int i = 0; args[i]; i++)
    g_ptr_array_add(argv, (gpointer)args[i]);
  g_ptr_array_add(argv, NULL);
  char *out = NULL, *err = NULL;
  int wait = 0;
  GError *error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &wait, &error));
  g_assert_no_error(error);
  *status = WIFEXITED(wait) ? WEXITSTATUS(wait) : -1;
  g_test_message("stdout: %s\nstderr: %s", out, err);
  g_free(err);
  g_ptr_array_free(argv, TRUE);
  return out;
}

/* A backend-test folder dir/name: model, one data set of x and its expected y. */
static char *write_backend_test(const char *name, pb *model_bytes, const float *x, const float *y, int n)
{
  char *dir = g_build_filename(tmp_dir, "suite", name, "test_data_set_0", NULL);
  g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
  int64_t dims[] = { 2, n / 2 };
  const float *data[2] = { x, y };
  const char *files[2] = { "input_0.pb", "output_0.pb" };
  for (int i = 0; i < 2; i++) {
    pb *t = float_tensor(i ? "y" : "x", 2, dims, data[i], (size_t)n);
    char *path = g_build_filename(dir, files[i], NULL);
    g_assert_true(g_file_set_contents(path, (const char *)t->data, t->len, NULL));
    g_free(path);
    g_byte_array_unref(t);
  }
  char *test_dir = g_path_get_dirname(dir);
  char *model_path = g_build_filename(test_dir, "model.onnx", NULL);
  g_assert_true(g_file_set_contents(model_path, (const char *)model_bytes->data, model_bytes->len, NULL));
  g_byte_array_unref(model_bytes);
  g_free(model_path);
  g_free(dir);
  return test_dir;
}

static void test_cli_onnx_test(void)
{
  float x[] = { 0, 1, -5, -1, 3, 0 }, right[] = { 1, 0, 0, 0, 1, 3 }, wrong[] = { 1, 0, 0, 0, 1, 4 };
  char *good = write_backend_test("test_good", add_relu_model(false), x, right, 6);
  char *bad = write_backend_test("test_bad", add_relu_model(false), x, wrong, 6);
  int64_t dims[] = { 2, 3 };
  pb *g = msg();
  put_msg(g, 1, node("Bernoulli", "e", "x", "y", NULL));
  put_msg(g, 11, value_info("x", 1, 2, dims));
  put_msg(g, 12, value_info("y", 1, 2, dims));
  char *skip = write_backend_test("test_bernoulli", model(13, g), x, right, 6);
  char *suite = g_path_get_dirname(good);
  int status;

  char *out = run_cli(WORDS("onnx-test", good, skip), &status);
  g_assert_cmpint(status, ==, 0);
  g_assert_true(g_str_has_suffix(out, "\n1 passed, 0 failed, 1 skipped\n"));
  g_assert_nonnull(strstr(out, "skipped by op: Bernoulli 1\n"));
  g_free(out);

  /* a folder of tests; the wrong one fails (exit 1) with a line naming it */
  out = run_cli(WORDS("onnx-test", suite), &status);
  g_assert_cmpint(status, ==, 1);
  g_assert_nonnull(strstr(out, "FAIL suite/test_bad: "));
  g_assert_nonnull(strstr(out, "element 5 is 3, expected 4"));
  g_assert_true(g_str_has_suffix(out, "\n1 passed, 1 failed, 1 skipped\n"));
  g_free(out);

  /* a test on the expected list that does not pass fails the run */
  char *list = g_build_filename(tmp_dir, "expected.txt", NULL);
  g_assert_true(g_file_set_contents(list, "# comment\nsuite/test_good\nsuite/test_bernoulli\n", -1, NULL));
  out = run_cli(WORDS("onnx-test", "--expected", list, good, skip), &status);
  g_assert_cmpint(status, ==, 1);
  g_assert_nonnull(strstr(out, "EXPECTED PASS did not pass: suite/test_bernoulli"));
  g_free(out);

  /* a test listed as having wrong reference data is skipped when it fails */
  char *wrong_list = g_build_filename(tmp_dir, "wrong.txt", NULL);
  g_assert_true(g_file_set_contents(wrong_list, "# why\nsuite/test_bad  its y is not relu(x + x)\n", -1, NULL));
  out = run_cli(WORDS("onnx-test", "--wrong-data", wrong_list, suite), &status);
  g_assert_cmpint(status, ==, 0);
  g_assert_null(strstr(out, "FAIL"));
  g_assert_nonnull(strstr(out, "wrong reference data 1"));
  g_assert_true(g_str_has_suffix(out, "\n1 passed, 0 failed, 2 skipped\n"));
  g_free(out);
  g_free(wrong_list);

  /* a model runs as a module function */
  char *model_path = g_build_filename(good, "model.onnx", NULL);
  out = run_cli(WORDS("run", model_path, "add_relu", "--arg", "f32[2,3]=0,1,-5,-1,3,0"), &status);
  g_assert_cmpint(status, ==, 0);
  g_assert_nonnull(strstr(out, "[[1. 0. 0.]"));
  g_free(out);
  out = run_cli(WORDS("list", model_path), &status);
  g_assert_cmpint(status, ==, 0);
  g_assert_nonnull(strstr(out, "add_relu(x)"));
  g_free(out);

  g_free(model_path);
  g_free(list);
  g_free(suite);
  g_free(good);
  g_free(bad);
  g_free(skip);
}

/* m's one output on x = zeros [2, 3], eagerly and as a graph: five
 * everywhere, of shape want. */
static void expect_fives(ts_onnx_model *m, ts_shape want)
{
  for (int graph = 0; graph < 2; graph++) {
    ts_scope *scope = ts_scope_begin();
    ts_tensor *x = ts_zeros(TS_F32, TS_SHAPE(2, 3));
    ts_tensor *y = run1(m, &x, 1, graph);
    g_assert_true(ts_shape_equal(ts_tensor_shape(y), want));
    for (int64_t i = 0; i < ts_tensor_size(y); i++)
      g_assert_cmpfloat(ts_tensor_get_f64(y, i), ==, 5);
    ts_scope_end(scope);
  }
}

/* A value expanded to the shape of an input (PyTorch's exports make an
 * LSTM's zero state this way): Shape of a known shape is known when the
 * graph is built, so Expand, which needs its shape then, traces.
 * Eagerly and as a graph. */
static void test_shape_known_when_built(void)
{
  int64_t dims[] = { 2, 3 }, one = 1;
  float five = 5;
  pb *g = msg();
  put_msg(g, 1, node("Shape", "shape", "x", "s", NULL));
  put_msg(g, 1, node("Expand", "expand", "c,s", "y", NULL));
  put_msg(g, 5, float_tensor("c", 1, &one, &five, 1));
  put_msg(g, 11, value_info("x", 1, 2, dims));
  put_msg(g, 12, value_info("y", 1, 0, NULL));
  pb *bytes = model(13, g);
  char *path = write_file("shape-known.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  expect_fives(m, TS_SHAPE(2, 3));
  ts_onnx_model_free(m);
  g_free(path);
}

/* Size of a known shape is a known scalar when the graph is built (not
 * an empty tensor): reshaped to [1], it is the shape Expand needs then.
 * x [2,3] has 6 elements, so y is [6] fives.  Eagerly and as a graph. */
static void test_size_known_when_built(void)
{
  int64_t dims[] = { 2, 3 }, one = 1;
  float five = 5;
  pb *g = msg();
  put_msg(g, 1, node("Size", "size", "x", "n", NULL));
  put_msg(g, 1, node("Reshape", "reshape", "n,one", "s", NULL));
  put_msg(g, 1, node("Expand", "expand", "c,s", "y", NULL));
  put_msg(g, 5, float_tensor("c", 1, &one, &five, 1));
  put_msg(g, 5, i64_tensor("one", 1, &one, 1));
  put_msg(g, 11, value_info("x", 1, 2, dims));
  put_msg(g, 12, value_info("y", 1, 0, NULL));
  pb *bytes = model(13, g);
  char *path = write_file("size-known.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  expect_fives(m, TS_SHAPE(6));
  ts_onnx_model_free(m);
  g_free(path);
}

/* ---- sequences and optionals ------------------------------------------------------- */

/* ValueInfoProto of a sequence of tensors of elem_type (optional: of an optional of one). */
static pb *sequence_info_of(const char *name, int elem_type, bool optional)
{
  pb *tensor_type = msg();
  put_int(tensor_type, 1, elem_type); /* no shape */
  pb *elem = msg();
  put_msg(elem, 1, tensor_type);
  pb *seq = msg();
  put_msg(seq, 1, elem);
  pb *type = msg();
  put_msg(type, 4, seq);
  if (optional) {
    pb *opt = msg();
    put_msg(opt, 1, type);
    type = msg();
    put_msg(type, 9, opt);
  }
  pb *v = msg();
  put_str(v, 1, name);
  put_msg(v, 2, type);
  return v;
}

static pb *msg_copy(const pb *b)
{
  pb *c = msg();
  g_byte_array_append(c, b->data, b->len);
  return c;
}

static pb *sequence_info(const char *name, bool optional)
{
  return sequence_info_of(name, 1 /* FLOAT */, optional);
}

/* A Loop carrying a sequence (the iteration numbers appended) and an
 * optional whose body gives the sequence it holds with the number
 * appended (ONNX reads that as the optional holding it): eagerly and as
 * one traced While, the carried values variants. */
static void test_loop_carries_sequences(void)
{
  pb *body = msg();
  put_msg(body, 1, node("Identity", "/body/Cond", "cond_in", "cond_out", NULL));
  put_msg(body, 1, node("SequenceInsert", "/body/Append", "s_in,i", "s_out", NULL));
  put_msg(body, 1, node("OptionalGetElement", "/body/Get", "o_in", "held", NULL));
  put_msg(body, 1, node("SequenceInsert", "/body/AppendHeld", "held,i", "o_out", NULL));
  put_str(body, 2, "body");
  put_msg(body, 11, value_info("i", 7, 0, NULL));
  put_msg(body, 11, value_info("cond_in", 9, 0, NULL));
  put_msg(body, 11, sequence_info_of("s_in", 7, false));
  put_msg(body, 11, sequence_info_of("o_in", 7, true));
  put_msg(body, 12, value_info("cond_out", 9, 0, NULL));
  put_msg(body, 12, sequence_info_of("s_out", 7, false));
  put_msg(body, 12, sequence_info_of("o_out", 7, false));
  pb *g = msg();
  put_msg(g, 1, node("SequenceEmpty", "empty", "", "e", int_attr("dtype", 7)));
  put_msg(g, 1, node("Optional", "wrap", "e", "o", NULL));
  /* the optional given as it is, and the sequence given where the body takes an optional */
  pb *body2 = msg_copy(body);
  put_msg(g, 1, node("Loop", "loop", "M,,e,o", "s_final,o_final", graph_attr("body", body)));
  put_msg(g, 1, node("Loop", "loop_plain", "M,,e,e", "s_final2,o_final2", graph_attr("body", body2)));
  put_msg(g, 1, node("ConcatFromSequence", "join2", "o_final2", "z2",
                     concat_attrs(int_attr("axis", 0), int_attr("new_axis", 1))));
  put_msg(g, 13, sequence_info_of("e", 7, false));
  put_msg(g, 1, node("ConcatFromSequence", "join", "s_final", "y",
                     concat_attrs(int_attr("axis", 0), int_attr("new_axis", 1))));
  put_msg(g, 1, node("ConcatFromSequence", "join_held", "o_final", "z",
                     concat_attrs(int_attr("axis", -1), int_attr("new_axis", 1))));
  put_msg(g, 1, node("Add", "sum", "y,z", "yz", NULL));
  put_msg(g, 1, node("Add", "sum2", "yz,z2", "w", NULL));
  put_msg(g, 11, value_info("M", 7, 0, NULL));
  int64_t n = -1;
  put_msg(g, 12, value_info("w", 7, 1, &n));
  pb *bytes = model(16, g);
  char *path = write_file("loop-sequences.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  for (int graph = 0; graph < 2; graph++) {
    ts_scope *scope = ts_scope_begin();
    ts_tensor *trips = ts_scalar_i64(4);
    ts_tensor *w = run1(m, &trips, 1, graph);
    g_assert_true(ts_shape_equal(ts_tensor_shape(w), TS_SHAPE(4)));
    for (int i = 0; i < 4; i++)
      g_assert_cmpint(ts_tensor_get_i64(w, i), ==, 3 * i);
    ts_scope_end(scope);
  }
  ts_onnx_model_free(m);
  g_free(path);
}

/* x [4,2] split into rows; y = row i (from the end when negative), z the
 * rows stacked on axis 1 (x transposed), n the length after an erase:
 * eagerly and as traced functions; a position out of range names its node. */
static void test_sequences(void)
{
  int64_t xdims[] = { 4, 2 }, ydims[] = { 2 }, zdims[] = { 2, 4 };
  pb *g = msg();
  put_msg(g, 1, node("SplitToSequence", "split", "x", "seq", int_attr("keepdims", 0)));
  put_msg(g, 1, node("SequenceAt", "at", "seq,i", "y", NULL));
  put_msg(g, 1, node("ConcatFromSequence", "stack", "seq", "z",
                     concat_attrs(int_attr("axis", 1), int_attr("new_axis", 1))));
  put_msg(g, 1, node("SequenceErase", "erase", "seq", "shorter", NULL));
  put_msg(g, 1, node("SequenceLength", "len", "shorter", "n", NULL));
  put_msg(g, 11, value_info("x", 1, 2, xdims));
  put_msg(g, 11, value_info("i", 7, 0, NULL));
  put_msg(g, 12, value_info("y", 1, 1, ydims));
  put_msg(g, 12, value_info("z", 1, 2, zdims));
  put_msg(g, 12, value_info("n", 7, 0, NULL));
  pb *bytes = model(13, g);
  char *path = write_file("sequences.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  float x[] = { 0, 1, 10, 11, 20, 21, 30, 31 };
  for (int graph = 0; graph < 2; graph++) {
    ts_scope *scope = ts_scope_begin();
    ts_tensor *in[2] = { ts_constant(TS_F32, TS_SHAPE(4, 2), x), ts_scalar_i64(graph ? -4 : -1) };
    ts_tensor *y = run1(m, in, 2, graph);
    int row = graph ? 0 : 3;
    g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(2)));
    g_assert_cmpfloat(ts_tensor_get_f64(y, 0), ==, x[2 * row]);
    g_assert_cmpfloat(ts_tensor_get_f64(y, 1), ==, x[2 * row + 1]);
    ts_tensor *outs[3];
    g_assert_true(ts_onnx_model_run(m, in, 2, outs));
    ts_tensor *z = graph ? ts_function_call(ts_onnx_model_function(m, 1),
                                            (ts_value[]){ TS_TENSOR_VALUE(in[0]), TS_TENSOR_VALUE(in[1]) }, 2)
                         : outs[1];
    g_assert_true(ts_shape_equal(ts_tensor_shape(z), TS_SHAPE(2, 4)));
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 4; c++)
        g_assert_cmpfloat(ts_tensor_get_f64(z, r * 4 + c), ==, x[c * 2 + r]);
    g_assert_cmpint(ts_tensor_get_i64(outs[2], 0), ==, 3);
    ts_scope_end(scope);
  }
  ts_scope *scope = ts_scope_begin();
  ts_tensor *in[2] = { ts_constant(TS_F32, TS_SHAPE(4, 2), x), ts_scalar_i64(4) }, *outs[3];
  g_assert_false(ts_onnx_model_run(m, in, 2, outs));
  ts_error *e = ts_error_take();
  g_test_message("%s", e->message);
  g_assert_cmpint(e->code, ==, TS_ERR_OUT_OF_RANGE);
  g_assert_nonnull(strstr(e->message, "node 'at'"));
  g_assert_nonnull(strstr(e->message, "index 4 is out of range for a TensorArray of size 4"));
  ts_error_free(e);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

/* A model of a sequence input and an optional one reads its backend test
 * data (SequenceProto, OptionalProto) as the model declares them; a
 * truncated one is an error naming the file. */
static void test_sequence_data(void)
{
  pb *g = msg();
  put_msg(g, 1, node("SequenceInsert", "insert", "seq,t", "out", NULL));
  put_msg(g, 1, node("OptionalHasElement", "has", "opt", "has_value", NULL));
  int64_t one = 1;
  put_msg(g, 11, sequence_info("seq", false));
  put_msg(g, 11, value_info("t", 1, 1, &one));
  put_msg(g, 11, sequence_info("opt", true));
  put_msg(g, 12, sequence_info("out", false));
  put_msg(g, 12, value_info("has_value", 9, 0, NULL));
  pb *bytes = model(16, g);
  char *path = write_file("sequence-data.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  g_assert_cmpint(ts_onnx_model_input_spec(m, 0).dtype, ==, TS_VARIANT);
  /* a module of it has no example arguments (no spec makes a sequence) */
  ts_module *module = ts_onnx_model_module(m);
  if (!module)
    g_error("%s", ts_error_peek()->message);
  ts_module_free(module);

  float a[] = { 1, 2 }, b[] = { 3 };
  int64_t two = 2;
  pb *seq = msg();
  put_str(seq, 1, "seq");
  put_int(seq, 2, 1); /* TENSOR */
  put_msg(seq, 3, float_tensor("", 1, &two, a, 2));
  put_msg(seq, 3, float_tensor("", 1, &one, b, 1));
  char *seq_path = write_file("seq.pb", seq);
  pb *truncated = g_byte_array_new();
  g_byte_array_append(truncated, seq->data, seq->len - 3);
  char *truncated_path = write_file("truncated.pb", truncated);
  pb *none = msg();
  put_str(none, 1, "opt");
  put_int(none, 2, 0); /* UNDEFINED: holds nothing */
  char *none_path = write_file("none.pb", none);
  g_byte_array_unref(seq);
  g_byte_array_unref(truncated);
  g_byte_array_unref(none);

  ts_scope *scope = ts_scope_begin();
  ts_tensor *in[3] = { ts_onnx_model_value_load(m, false, 0, seq_path),
                       ts_constant(TS_F32, TS_SHAPE(1), (float[]){ 4 }),
                       ts_onnx_model_value_load(m, false, 2, none_path) }, *outs[2];
  g_assert_nonnull(in[0]);
  g_assert_nonnull(in[2]);
  g_assert_cmpint(ts_tensor_list_size(in[0]), ==, 2);
  g_assert_cmpint(ts_optional_value(in[2], NULL), ==, 0);
  for (int graph = 0; graph < 2; graph++) {
    ts_tensor *out = NULL, *has = NULL;
    if (graph) {
      ts_value args[3] = { TS_TENSOR_VALUE(in[0]), TS_TENSOR_VALUE(in[1]), TS_TENSOR_VALUE(in[2]) };
      out = ts_function_call(ts_onnx_model_function(m, 0), args, 3);
      has = ts_function_call(ts_onnx_model_function(m, 1), args, 3);
    } else {
      g_assert_true(ts_onnx_model_run(m, in, 3, outs));
      out = outs[0];
      has = outs[1];
    }
    g_assert_nonnull(out);
    g_assert_cmpint(ts_tensor_list_size(out), ==, 3);
    g_assert_cmpfloat(ts_tensor_get_f64(ts_tensor_list_item(out, 2), 0), ==, 4);
    g_assert_cmpint(ts_tensor_get_i64(has, 0), ==, 0);
  }
  g_assert_null(ts_onnx_model_value_load(m, false, 0, truncated_path));
  ts_error *e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_FORMAT);
  g_assert_nonnull(strstr(e->message, truncated_path));
  ts_error_free(e);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
  g_free(seq_path);
  g_free(truncated_path);
  g_free(none_path);
}

/* Strings: x (floats) as text, joined by the initializer w's words, the
 * stopword "b" dropped whatever its case, the rest upper case; a NUL byte
 * inside a string tensor is refused naming it. */
static void test_strings(void)
{
  int64_t three = 3, two = 2;
  pb *w = msg();
  put_int(w, 1, 2);
  put_int(w, 2, 8); /* STRING */
  put_str(w, 6, "B");
  put_str(w, 6, "d\xc3\xa9j\xc3\xa0");
  put_str(w, 8, "w");
  pb *g = msg();
  put_msg(g, 1, node("Cast", "text", "x", "t", int_attr("to", 8)));
  put_msg(g, 1, node("Concat", "join", "t,w", "all", int_attr("axis", 0)));
  put_msg(g, 1, node("StringNormalizer", "norm", "all", "y",
                     concat_attrs(string_attr("case_change_action", "UPPER"), strings_attr("stopwords", "b"))));
  put_msg(g, 5, w);
  put_msg(g, 11, value_info("x", 1, 1, &three));
  put_msg(g, 12, value_info("y", 8, 1, &two));
  pb *bytes = model(13, g);
  char *path = write_file("strings.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = ts_onnx_load(path);
  /* Concat takes no strings: the error says where (the node's index) and why */
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 0.5f, 2, -1e-5f }), *y;
  g_assert_nonnull(m);
  g_assert_false(ts_onnx_model_run(m, &x, 1, &y));
  ts_error *e = ts_error_take();
  g_test_message("%s", e->message);
  g_assert_nonnull(strstr(e->message, "strings.onnx:2"));
  g_assert_nonnull(strstr(e->message, "got string"));
  ts_error_free(e);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);

  /* the words alone: Cast's text, then the normalizer */
  g = msg();
  put_msg(g, 1, node("Cast", "text", "x", "t", int_attr("to", 8)));
  put_msg(g, 1, node("StringNormalizer", "norm", "t", "y",
                     concat_attrs(string_attr("case_change_action", "UPPER"), strings_attr("stopwords", "inf"))));
  put_msg(g, 1, node("Cast", "number", "y", "z", int_attr("to", 1)));
  put_msg(g, 11, value_info("x", 1, 1, &three));
  put_msg(g, 12, value_info("z", 1, 1, &two));
  bytes = model(13, g);
  path = write_file("strings2.onnx", bytes);
  g_byte_array_unref(bytes);
  m = load_ok(path);
  scope = ts_scope_begin();
  x = ts_constant(TS_F32, TS_SHAPE(3), (float[]){ 0.5f, INFINITY, -1e-5f });
  g_assert_true(ts_onnx_model_run(m, &x, 1, &y));
  g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(2)));
  g_assert_cmpfloat(ts_tensor_get_f64(y, 0), ==, 0.5f);
  g_assert_cmpfloat(ts_tensor_get_f64(y, 1), ==, -1e-5f); /* "-1E-05" reads back */
  /* which strings stay depends on x: a trace of it is refused, naming the node */
  ts_value arg = TS_TENSOR_VALUE(x);
  g_assert_null(ts_function_call(ts_onnx_model_function(m, 0), &arg, 1));
  e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_UNIMPLEMENTED);
  g_assert_nonnull(strstr(e->message, "node 'norm'"));
  ts_error_free(e);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);

  /* a NUL byte inside a string */
  pb *t = msg();
  put_int(t, 1, 1);
  put_int(t, 2, 8);
  put_bytes(t, 6, "a\0b", 3);
  char *tpath = write_file("nul.pb", t);
  g_byte_array_unref(t);
  g_assert_null(ts_onnx_tensor_load(tpath));
  e = ts_error_take();
  g_assert_cmpint(e->code, ==, TS_ERR_FORMAT);
  g_assert_nonnull(strstr(e->message, "string element 0 holds a NUL byte"));
  ts_error_free(e);
  g_free(tpath);
}

/* MaxPool of unsigned integers pads with 0, their least value (the pad
 * was the signed least, -32768, which a uint16 holds as 32768 and the
 * window at the edge took). */
static void test_max_pool_unsigned_pads(void)
{
  int64_t dims[] = { 1, 1, 1, 3 }, kernel[] = { 1, 2 }, pads[] = { 0, 1, 0, 0 };
  pb *g = msg();
  put_msg(g, 1, node("MaxPool", "pool", "x", "y",
                     concat_attrs(ints_attr("kernel_shape", kernel, 2), ints_attr("pads", pads, 4))));
  put_msg(g, 11, value_info("x", 4, 4, dims));
  put_msg(g, 12, value_info("y", 4, 4, dims));
  pb *bytes = model(12, g);
  char *path = write_file("maxpool_u16.onnx", bytes);
  g_byte_array_unref(bytes);
  ts_onnx_model *m = load_ok(path);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *x = ts_constant(TS_U16, TS_SHAPE(1, 1, 1, 3), (uint16_t[]){ 1, 2, 3 }), *y;
  g_assert_true(ts_onnx_model_run(m, &x, 1, &y));
  g_assert_cmpint(ts_tensor_dtype(y), ==, TS_U16);
  check_i64s(y, (int64_t[]){ 1, 2, 3 }, 3);
  ts_scope_end(scope);
  ts_onnx_model_free(m);
  g_free(path);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("tracescope-onnx-XXXXXX", NULL);
  g_test_add_func("/onnx/import/run-eager-and-graph", test_run_eager_and_graph);
  g_test_add_func("/onnx/import/sequences", test_sequences);
  g_test_add_func("/onnx/import/loop-carries-sequences", test_loop_carries_sequences);
  g_test_add_func("/onnx/import/sequence-data", test_sequence_data);
  g_test_add_func("/onnx/import/strings", test_strings);
  g_test_add_func("/onnx/import/symbolic-dims", test_symbolic_dims);
  g_test_add_func("/onnx/import/unsupported-op-named", test_unsupported_op_named);
  g_test_add_func("/onnx/import/unsupported-attribute-named", test_unsupported_attribute_named);
  g_test_add_func("/onnx/import/softmax-by-opset", test_softmax_by_opset);
  g_test_add_func("/onnx/import/backend-tensor-files", test_backend_tensor_files);
  g_test_add_func("/onnx/import/old-opsets", test_old_opsets);
  g_test_add_func("/onnx/import/value-dependent-shapes", test_value_dependent_shapes);
  g_test_add_func("/onnx/import/einsum", test_einsum);
  g_test_add_func("/onnx/import/einsum-ellipsis-diagonal", test_einsum_ellipsis_diagonal);
  g_test_add_func("/onnx/import/windows", test_windows);
  g_test_add_func("/onnx/import/scatter-old-name", test_scatter_old_name);
  g_test_add_func("/onnx/import/rnn", test_rnn);
  g_test_add_func("/onnx/import/rnn-long-sequence", test_rnn_long_sequence);
  g_test_add_func("/onnx/import/bit-shift", test_bit_shift);
  g_test_add_func("/onnx/import/reverse-sequence", test_reverse_sequence);
  g_test_add_func("/onnx/import/slice-negative-steps", test_slice_negative_steps);
  g_test_add_func("/onnx/import/opset-18", test_opset_18);
  g_test_add_func("/onnx/import/function-builds-its-output-alone", test_function_builds_its_output_alone);
  g_test_add_func("/onnx/import/opsets-19-to-22", test_opsets_19_to_22);
  g_test_add_func("/onnx/import/one-hot", test_one_hot);
  g_test_add_func("/onnx/import/batch-norm-training", test_batch_norm_training);
  g_test_add_func("/onnx/import/unique", test_unique);
  g_test_add_func("/onnx/import/topk-smallest-int", test_topk_smallest_int);
  g_test_add_func("/onnx/import/max-pool-unsigned-pads", test_max_pool_unsigned_pads);
  g_test_add_func("/onnx/import/det", test_det);
  g_test_add_func("/onnx/import/dft", test_dft);
  g_test_add_func("/onnx/import/stft", test_stft);
  g_test_add_func("/onnx/import/mel-weight-matrix", test_mel_weight_matrix);
  g_test_add_func("/onnx/import/non-max-suppression", test_non_max_suppression);
  g_test_add_func("/onnx/import/grid-sample", test_grid_sample);
  g_test_add_func("/onnx/import/if-reads-outer-values", test_if_reads_outer_values);
  g_test_add_data_func("/onnx/import/loop-carried-and-scanned", GINT_TO_POINTER(1), test_loop_carried_and_scanned);
  g_test_add_data_func("/onnx/import/loop-untyped-body-values", GINT_TO_POINTER(0), test_loop_carried_and_scanned);
  g_test_add_func("/onnx/import/loop-without-bounds", test_loop_without_bounds);
  g_test_add_func("/onnx/import/scan-axes-directions", test_scan_axes_directions);
  g_test_add_func("/onnx/import/subgraph-unsupported-op", test_subgraph_unsupported_op);
  g_test_add_func("/onnx/import/training-optimizers", test_training_optimizers);
  g_test_add_func("/onnx/import/pool-variants", test_pool_variants);
  g_test_add_func("/onnx/import/pool-3d", test_pool_3d);
  g_test_add_func("/onnx/import/conv-3d", test_conv_3d);
  g_test_add_func("/onnx/import/conv-same-pads", test_conv_same_pads);
  g_test_add_func("/onnx/import/conv-transpose-3d", test_conv_transpose_3d);
  g_test_add_func("/onnx/import/upsample-attribute", test_upsample_attribute);
  g_test_add_func("/onnx/import/resize-crop", test_resize_crop);
  g_test_add_func("/onnx/import/max-unpool", test_max_unpool);
  g_test_add_func("/onnx/import/roi-align", test_roi_align);
  g_test_add_func("/onnx/import/tfidf-vectorizer", test_tfidf_vectorizer);
  g_test_add_func("/onnx/hostile/subgraphs-too-deep", test_subgraphs_too_deep);
  g_test_add_func("/onnx/hostile/truncated", test_truncated);
  g_test_add_func("/onnx/hostile/random-bytes", test_random_bytes);
  g_test_add_func("/onnx/hostile/cyclic", test_cyclic);
  g_test_add_func("/onnx/hostile/nested-too-deep", test_nested_too_deep);
  g_test_add_func("/onnx/hostile/data-against-dims", test_data_against_dims);
  g_test_add_func("/onnx/hostile/external-data", test_external_data);
  g_test_add_func("/onnx/hostile/not-a-file", test_not_a_file);
  g_test_add_func("/onnx/hostile/oversized", test_oversized);
  g_test_add_func("/onnx/conv-transpose-large", test_conv_transpose_large);
  g_test_add_func("/onnx/hostile/conv-transpose-output-capped", test_conv_transpose_output_capped);
  g_test_add_func("/onnx/cli/onnx-test-run-list", test_cli_onnx_test);
  g_test_add_func("/onnx/shape-known-when-built", test_shape_known_when_built);
  g_test_add_func("/onnx/size-known-when-built", test_size_known_when_built);
  g_test_add_func("/onnx/lstm-one-op", test_lstm_one_op);
  int ret = g_test_run();
  char *cmd = g_strdup_printf("rm -rf '%s'", tmp_dir);
  g_assert_cmpint(system(cmd), ==, 0);
  g_free(cmd);
  g_free(tmp_dir);
  ts_release_all();
  return ret;
}
