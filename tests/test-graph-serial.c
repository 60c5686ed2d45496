/* test-graph-serial.c — graphs in their serialized form: the concrete
 * graph of every seed export comes back the same (text, nodes, sites,
 * values, subgraphs, and the same bytes again), and damaged bytes of every
 * kind give a format error saying what was wrong, never a crash.
 *
 *   test-graph-serial --write-seeds DIR   writes the fuzz corpus seeds
 *                                         (fuzz/corpus/fuzz-graph-serial) */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>

#include "test-errors.h"
#include "test-quiet.h"
#include "test-serial-check.h"

/* Node fields by position (docs/graph-format.md). */
enum { F_NAME, F_OP, F_SCOPE, F_LOC, F_INPUTS, F_CONTROL, F_OUTPUTS, F_ATTRS, F_VALUE,
       F_SUBGRAPHS, F_INPUT_INDEX, F_STATEFUL, F_SITE, F_ORIGINS, F_GRADIENT_OF };

/* A seed export's index in the module. */
static int export_index(ts_module *m, const char *name)
{
  for (int i = 0; i < ts_module_n_functions(m); i++)
    if (strcmp(ts_function_name(ts_module_function(m, i)), name) == 0)
      return i;
  g_error("the seeds export no %s", name);
}

/* The concrete graph of seed export i for the example arguments the
 * module declares (borrowed from the module); NULL where it needs a
 * dataset this machine lacks. */
static const ts_graph *seed_graph(ts_module *m, int i)
{
  ts_function *fn = ts_module_function(m, i);
  const char *const *examples = ts_module_examples(m, i);
  int n = examples ? (int)g_strv_length((char **)examples) : 0;
  g_assert_true(n > 0 || ts_function_n_params(fn) == 0); /* every export can be traced */
  ts_value *args = g_new0(ts_value, MAX(n, 1));
  for (int k = 0; k < n; k++)
    g_assert_true(ts_value_parse(examples[k], &args[k]));
  int quiet = test_quiet_begin(); /* the seeds print while tracing */
  ts_concrete *cf = ts_function_get_concrete(fn, args, n);
  test_quiet_end(quiet);
  for (int k = 0; k < n; k++)
    ts_value_clear(&args[k]);
  g_free(args);
  if (!cf && take_missing_dataset(ts_function_name(fn)))
    return NULL;
  assert_no_error();
  return ts_concrete_graph(cf);
}

static void *serialize(const ts_graph *g, size_t *size)
{
  void *bytes = ts_graph_serialize(g, size);
  assert_no_error();
  g_assert_nonnull(bytes);
  return bytes;
}

static void assert_same_string(const char *a, const char *b)
{
  g_assert_true((a == NULL) == (b == NULL));
  if (a)
    g_assert_cmpstr(a, ==, b);
}

static void assert_same_value(const ts_tensor *a, const ts_tensor *b)
{
  if (!a || ts_tensor_dtype(a) == TS_VARIANT ||
      (size_t)ts_tensor_size(a) * ts_dtype_size(ts_tensor_dtype(a)) > ((size_t)1 << 20)) {
    g_assert_null(b); /* none, no serialized form, or too large: left out */
    return;
  }
  g_assert_nonnull(b);
  g_assert_cmpint(ts_tensor_dtype(a), ==, ts_tensor_dtype(b));
  g_assert_true(ts_shape_equal(ts_tensor_shape(a), ts_tensor_shape(b)));
  char *va = ts_tensor_to_string(a), *vb = ts_tensor_to_string(b);
  g_assert_cmpstr(va, ==, vb);
  free(va);
  free(vb);
}

static void assert_same_node(const ts_node *a, const ts_node *b);

/* Node by node, subgraphs included (b read back from a's bytes). */
static void assert_same_graph(const ts_graph *a, const ts_graph *b)
{
  g_assert_cmpstr(ts_graph_name(a), ==, ts_graph_name(b));
  g_assert_cmpint(ts_graph_n_nodes(a), ==, ts_graph_n_nodes(b));
  g_assert_cmpint(ts_graph_n_inputs(a), ==, ts_graph_n_inputs(b));
  for (int i = 0; i < ts_graph_n_inputs(a); i++)
    g_assert_cmpint(ts_graph_input(a, i), ==, ts_graph_input(b, i));
  g_assert_cmpint(ts_graph_n_outputs(a), ==, ts_graph_n_outputs(b));
  for (int i = 0; i < ts_graph_n_outputs(a); i++) {
    g_assert_cmpint(ts_graph_output(a, i).node, ==, ts_graph_output(b, i).node);
    g_assert_cmpint(ts_graph_output(a, i).index, ==, ts_graph_output(b, i).index);
  }
  for (int id = 0; id < ts_graph_n_nodes(a); id++)
    assert_same_node(ts_graph_node(a, id), ts_graph_node(b, id));
}

static void assert_same_node(const ts_node *a, const ts_node *b)
{
  g_assert_cmpstr(ts_node_name(a), ==, ts_node_name(b));
  g_assert_cmpint(ts_node_op(a), ==, ts_node_op(b));
  g_assert_cmpstr(ts_node_scope(a), ==, ts_node_scope(b));
  assert_same_string(ts_node_loc(a).file, ts_node_loc(b).file);
  assert_same_string(ts_node_loc(a).func, ts_node_loc(b).func);
  g_assert_cmpint(ts_node_loc(a).line, ==, ts_node_loc(b).line);
  g_assert_cmpint(ts_node_n_inputs(a), ==, ts_node_n_inputs(b));
  for (int i = 0; i < ts_node_n_inputs(a); i++) {
    g_assert_cmpint(ts_node_input(a, i).node, ==, ts_node_input(b, i).node);
    g_assert_cmpint(ts_node_input(a, i).index, ==, ts_node_input(b, i).index);
  }
  g_assert_cmpint(ts_node_n_control_inputs(a), ==, ts_node_n_control_inputs(b));
  for (int i = 0; i < ts_node_n_control_inputs(a); i++)
    g_assert_cmpint(ts_node_control_input(a, i), ==, ts_node_control_input(b, i));
  g_assert_cmpint(ts_node_n_outputs(a), ==, ts_node_n_outputs(b));
  for (int i = 0; i < ts_node_n_outputs(a); i++) {
    g_assert_cmpint(ts_node_output_dtype(a, i), ==, ts_node_output_dtype(b, i));
    g_assert_true(ts_shape_equal(ts_node_output_shape(a, i), ts_node_output_shape(b, i)));
  }
  g_assert_cmpint(ts_node_n_attrs(a), ==, ts_node_n_attrs(b));
  for (int i = 0; i < ts_node_n_attrs(a); i++) {
    char *x = ts_node_attr_to_string(a, i), *y = ts_node_attr_to_string(b, i);
    g_assert_cmpstr(x, ==, y);
    free(x);
    free(y);
  }
  assert_same_value(ts_node_value(a), ts_node_value(b));
  g_assert_cmpint(ts_node_is_stateful(a), ==, ts_node_is_stateful(b));
  g_assert_cmpint(ts_node_has_eager_twin(a), ==, ts_node_has_eager_twin(b));
  g_assert_cmpint(ts_node_n_origins(a), ==, ts_node_n_origins(b));
  for (int i = 0; i < ts_node_n_origins(a); i++)
    g_assert_cmpint(ts_node_id(ts_node_origin(a, i)), ==, ts_node_id(ts_node_origin(b, i)));
  g_assert_cmpint(ts_node_n_subgraphs(a), ==, ts_node_n_subgraphs(b));
  for (int s = 0; s < ts_node_n_subgraphs(a); s++) {
    g_assert_true(ts_graph_parent(ts_node_subgraph(b, s)) == ts_node_graph(b));
    assert_same_graph(ts_node_subgraph(a, s), ts_node_subgraph(b, s));
  }
}

/* How many nodes of g (subgraphs included) have op. */
static int count_op(const ts_graph *g, ts_op op)
{
  int n = 0;
  for (int id = 0; id < ts_graph_n_nodes(g); id++) {
    const ts_node *node = ts_graph_node(g, id);
    n += ts_node_op(node) == op;
    for (int s = 0; s < ts_node_n_subgraphs(node); s++)
      n += count_op(ts_node_subgraph(node, s), op);
  }
  return n;
}

/* g survives serialize -> deserialize whole; the graph read back is
 * returned (the caller frees it). */
static ts_graph *round_trip(const ts_graph *g)
{
  size_t size, size_again, size_back;
  void *bytes = serialize(g, &size);
  void *again = serialize(g, &size_again);
  g_assert_cmpmem(bytes, size, again, size_again); /* deterministic */
  ts_graph *back = ts_graph_deserialize(bytes, size);
  assert_no_error();
  g_assert_nonnull(back);
  g_assert_null(ts_graph_parent(back));
  char *text = ts_graph_to_text(g), *back_text = ts_graph_to_text(back);
  g_assert_cmpstr(text, ==, back_text);
  assert_same_graph(g, back);
  /* all it holds, sites and occurrences included, gives the same bytes */
  void *back_bytes = serialize(back, &size_back);
  g_assert_cmpmem(bytes, size, back_bytes, size_back);
  free(text);
  free(back_text);
  free(bytes);
  free(again);
  free(back_bytes);
  return back;
}

/* Shapes past int64 on unknown dims: the tracer refuses an output no tensor
 * can have, and the format takes every shape the tracer makes, among them
 * known dims multiplying past int64 beside an unknown one (which may be 0). */
static ts_tensor *reshape_to(ts_call *c)
{
  int64_t big = ts_arg_int(c, 1);
  return ts_reshape(ts_arg(c, 0), big ? TS_SHAPE(2, 1, big) : TS_SHAPE(-1, INT64_C(1) << 40,
                                                                      INT64_C(1) << 40));
}

static void test_shapes_past_int64(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *f = ts_function_new("reshape_to", reshape_to, "x, big");
  ts_value args[] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(-1)), { .kind = TS_VALUE_INT, .i = INT64_MAX } };
  g_assert_null(ts_function_get_concrete(f, args, 2));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_cmpstr(e->op, ==, "Reshape");
  g_assert_nonnull(strstr(e->message, "output 0 would be f32[2,1,9223372036854775807], more "
                                      "elements than int64 counts"));
  ts_error_free(e);
  args[1].i = 0;
  ts_concrete *cf = ts_function_get_concrete(f, args, 2);
  assert_no_error();
  const ts_graph *g = ts_concrete_graph(cf);
  g_assert_true(ts_shape_equal(ts_node_output_shape(ts_graph_node(g, ts_graph_output(g, 0).node), 0),
                               TS_SHAPE(-1, INT64_C(1) << 40, INT64_C(1) << 40)));
  ts_graph_free(round_trip(g));
  /* and it runs: the only size that fits is 0 */
  ts_value empty[] = { TS_TENSOR_VALUE(ts_tensor_new(TS_F32, TS_SHAPE(0))), args[1] };
  ts_tensor *y = ts_function_call(f, empty, 2);
  assert_no_error();
  g_assert_true(ts_shape_equal(ts_tensor_shape(y), TS_SHAPE(0, INT64_C(1) << 40, INT64_C(1) << 40)));
  ts_function_free(f);
  ts_scope_end(scope);
}

static void test_seeds(void)
{
  ts_module *m = ts_module_open("seeds");
  assert_no_error();
  int n_if = 0, n_while = 0, n_var = 0, n_print = 0, n_nodes = 0;
  for (int i = 0; i < ts_module_n_functions(m); i++) { /* every export */
    ts_scope *scope = ts_scope_begin();
    const ts_graph *g = seed_graph(m, i);
    if (!g) {
      ts_scope_end(scope);
      continue;
    }
    ts_graph_free(round_trip(g));
    n_if += count_op(g, TS_OP_IF);
    n_while += count_op(g, TS_OP_WHILE);
    n_var += count_op(g, TS_OP_VAR_HANDLE);
    n_print += count_op(g, TS_OP_PRINT);
    n_nodes += ts_graph_n_nodes(g);
    ts_scope_end(scope);
  }
  g_assert_cmpint(n_if, >, 0);
  g_assert_cmpint(n_while, >, 0);
  g_assert_cmpint(n_var, >, 0);
  g_assert_cmpint(n_print, >, 0);
  g_assert_cmpint(n_nodes, >, 300);
  ts_module_free(m);
}

/* ---- graphs of this file's own functions ------------------------------------ */

static ts_tensor *big; /* 2 MiB, captured as a Const */

/* x * x + 2 */
static ts_tensor *small_fn(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  return ts_add(ts_mul(x, x), ts_scalar_f32(2));
}

/* A string constant, a print, and a captured value too large to keep. */
static ts_tensor *strings_fn(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_print(x, "caf\xc3\xa9 \xff");
  ts_tensor *s = ts_identity(ts_scalar_string("h\xc3\xa9llo \xfe"));
  (void)s;
  return ts_add(x, ts_reduce_sum(big, TS_ALL_AXES, false));
}

/* The concrete graph of fn for one f32 scalar.  fn is the caller's. */
static const ts_graph *own_graph(ts_function *fn)
{
  ts_value x = TS_SPEC_VALUE(TS_F32, TS_SCALAR_SHAPE);
  ts_concrete *cf = ts_function_get_concrete(fn, &x, 1);
  assert_no_error();
  return ts_concrete_graph(cf);
}

static void test_strings_and_large_values(void)
{
  big = ts_tensor_ref(ts_zeros(TS_F32, TS_SHAPE(512, 1024)));
  ts_function *fn = ts_function_new("strings_fn", strings_fn, "x");
  const ts_graph *g = own_graph(fn);
  ts_graph *back = round_trip(g);
  int left_out = 0, strings = 0;
  for (int id = 0; id < ts_graph_n_nodes(back); id++) {
    const ts_node *n = ts_graph_node(back, id);
    const ts_tensor *v = ts_node_value(n);
    if (ts_node_op(n) != TS_OP_CONST)
      continue;
    left_out += v == NULL; /* the 2 MiB one */
    if (v && ts_tensor_dtype(v) == TS_STRING) {
      g_assert_cmpstr(*(char **)ts_tensor_data(v), ==, "h\xc3\xa9llo \xfe"); /* bytes, not UTF-8 */
      strings++;
    }
  }
  g_assert_cmpint(left_out, ==, 1);
  g_assert_cmpint(strings, ==, 1);
  ts_graph_free(back);
  ts_graph_free(NULL);
  ts_function_free(fn);
  ts_tensor_unref(big);
}

/* A graph of the newer dtypes: an int8 input, a float16 constant, a
 * bfloat16 cast; the format names the dtypes and keeps the constant's bits. */
static ts_tensor *narrow_fn(ts_call *c)
{
  ts_tensor *half = ts_cast(ts_scalar_f32(0.1f), TS_F16);
  return ts_cast(ts_mul(ts_cast(ts_arg(c, 0), TS_F16), half), TS_BF16);
}

static void test_new_dtypes(void)
{
  ts_scope *scope = ts_scope_begin();
  ts_function *fn = ts_function_new("narrow_fn", narrow_fn, "x");
  ts_value x = TS_SPEC_VALUE(TS_I8, TS_SHAPE(3));
  ts_concrete *cf = ts_function_get_concrete(fn, &x, 1);
  assert_no_error();
  ts_graph *back = round_trip(ts_concrete_graph(cf));
  int halves = 0;
  for (int id = 0; id < ts_graph_n_nodes(back); id++) {
    const ts_tensor *v = ts_node_value(ts_graph_node(back, id));
    if (v && ts_tensor_dtype(v) == TS_F16) {
      g_assert_cmpuint(*(const uint16_t *)ts_tensor_data(v), ==, 0x2e66); /* np.float16(0.1) */
      halves++;
    }
  }
  g_assert_cmpint(halves, <=, 1); /* folded into the product, or kept */
  char *text = ts_graph_to_text(back);
  g_assert_nonnull(strstr(text, "i8[3]"));
  g_assert_nonnull(strstr(text, "bf16[3]"));
  free(text);
  ts_graph_free(back);
  ts_function_free(fn);
  ts_scope_end(scope);
}

/* What the format cannot hold is an error, not a crash. */
static void test_unwritable(void)
{
  ts_function *fn = ts_function_new("not\xffutf8", small_fn, "x");
  size_t size = 0;
  g_assert_null(ts_graph_serialize(own_graph(fn), &size));
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_cmpint(e->code, ==, TS_ERR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(e->message, "a graph's name is not valid UTF-8"));
  ts_error_free(e);
  ts_function_free(fn);
}

/* ---- damaged bytes ------------------------------------------------------------ */

/* Deserializing fails with a format error whose message holds fragment. */
static void expect_bad(const void *data, size_t size, const char *fragment)
{
  ts_graph *g = ts_graph_deserialize(data, size);
  if (g)
    g_error("damaged bytes read as a graph (expected '%s')", fragment);
  ts_error *e = ts_error_take();
  g_assert_nonnull(e);
  g_assert_cmpint(e->code, ==, TS_ERR_FORMAT);
  if (!strstr(e->message, fragment))
    g_error("error message '%s' lacks '%s'", e->message, fragment);
  ts_error_free(e);
}

static GVariant *parse_bytes(const void *bytes, size_t size)
{
  void *copy = g_memdup2(bytes, size);
  return g_variant_ref_sink(
    g_variant_new_from_data(G_VARIANT_TYPE("(suv)"), copy, size, TRUE, g_free, copy));
}

/* v (any container) with child i replaced. */
static GVariant *with_child(GVariant *v, gsize i, GVariant *child)
{
  if (g_variant_is_of_type(v, G_VARIANT_TYPE_VARIANT))
    return g_variant_new_variant(child);
  gsize n = g_variant_n_children(v);
  GVariant **c = g_new(GVariant *, n);
  for (gsize k = 0; k < n; k++)
    c[k] = k == i ? child : g_variant_get_child_value(v, k);
  GVariant *out = g_variant_is_of_type(v, G_VARIANT_TYPE_TUPLE)
                    ? g_variant_new_tuple(c, n)
                    : g_variant_new_array(g_variant_type_element(g_variant_get_type(v)), c, n);
  for (gsize k = 0; k < n; k++)
    if (k != i)
      g_variant_unref(c[k]);
  g_free(c);
  return out;
}

/* v with the value at path (child indices) replaced by leaf. */
static GVariant *with_path(GVariant *v, const int *path, int depth, GVariant *leaf)
{
  if (depth == 0)
    return leaf;
  GVariant *child = g_variant_get_child_value(v, (gsize)path[0]);
  GVariant *changed = with_path(child, path + 1, depth - 1, leaf);
  g_variant_unref(child);
  return with_child(v, (gsize)path[0], changed);
}

/* The bytes of top with field f of node `node` of graph `graph` replaced;
 * f < 0: the graph's field -f - 1 instead. */
static void *edited(GVariant *top, int graph, int node, int f, GVariant *leaf, size_t *size)
{
  int node_path[] = { 2, 0, graph, 3, node, f }, graph_path[] = { 2, 0, graph, -f - 1 };
  GVariant *v = g_variant_ref_sink(f >= 0 ? with_path(top, node_path, 6, leaf)
                                          : with_path(top, graph_path, 4, leaf));
  *size = g_variant_get_size(v);
  void *bytes = g_memdup2(g_variant_get_data(v), *size);
  g_variant_unref(v);
  return bytes;
}

static void expect_bad_edit(GVariant *top, int graph, int node, int f, GVariant *leaf,
                            const char *fragment)
{
  size_t size;
  void *bytes = edited(top, graph, node, f, leaf, &size);
  expect_bad(bytes, size, fragment);
  g_free(bytes);
}

static GVariant *ports(int node, int index)
{
  return g_variant_new_parsed("[(%i, %i)]", node, index);
}

static GVariant *output(const char *dtype, const int64_t *dims, gsize rank)
{
  GVariant *shape = g_variant_new_fixed_array(G_VARIANT_TYPE_INT64, dims, rank, sizeof *dims);
  return g_variant_new_parsed("[(%s, %@ax)]", dtype, shape);
}

/* The id of the first node of g with op. */
static int find_op(const ts_graph *g, ts_op op)
{
  for (int id = 0; id < ts_graph_n_nodes(g); id++)
    if (ts_node_op(ts_graph_node(g, id)) == op)
      return id;
  g_error("no %s node", ts_op_name(op));
}

static void test_damaged_header(void)
{
  ts_function *fn = ts_function_new("small_fn", small_fn, "x");
  size_t size;
  void *bytes = serialize(own_graph(fn), &size);
  GVariant *top = parse_bytes(bytes, size);
  GVariant *body = g_variant_get_child_value(top, 2);

  GVariant *v = g_variant_ref_sink(g_variant_new("(su@v)", "tracescope-grapf", 1, body));
  expect_bad(g_variant_get_data(v), g_variant_get_size(v),
             "not a Tracescope graph (magic 'tracescope-grapf', expected 'tracescope-graph')");
  g_variant_unref(v);
  v = g_variant_ref_sink(g_variant_new("(su@v)", "tracescope-graph", 3, body));
  expect_bad(g_variant_get_data(v), g_variant_get_size(v),
             "format version 3; this reader reads version 2 only");
  g_variant_unref(v);
  v = g_variant_ref_sink(g_variant_new("(suv)", "tracescope-graph", 2, g_variant_new_int32(5)));
  expect_bad(g_variant_get_data(v), g_variant_get_size(v), "the body has type i, not that of version 2");
  g_variant_unref(v);
  expect_bad(NULL, 0, "not a GVariant of type (suv) in normal form");
  expect_bad("tracescope-graph", 16, "not a GVariant");

  /* every prefix is truncated */
  for (size_t len = 0; len < size; len++)
    expect_bad(bytes, len, "serialized graph: ");
  /* every byte flipped: an error or a graph, never a crash or a leak */
  int refused = 0;
  unsigned char *copy = g_memdup2(bytes, size);
  for (size_t i = 0; i < size; i++) {
    copy[i] ^= 0xff;
    ts_graph *g = ts_graph_deserialize(copy, size);
    if (!g) {
      ts_error *e = ts_error_take();
      g_assert_nonnull(e);
      g_assert_cmpint(e->code, ==, TS_ERR_FORMAT);
      ts_error_free(e);
      refused++;
    }
    ts_graph_free(g);
    copy[i] ^= 0xff;
  }
  g_assert_cmpint(refused, >, (int)size / 2);
  /* and misaligned bytes read as well as aligned ones */
  unsigned char *shifted = g_malloc(size + 1);
  memcpy(shifted + 1, bytes, size);
  ts_graph *g = ts_graph_deserialize(shifted + 1, size);
  assert_no_error();
  ts_graph_free(g);
  g_free(shifted);
  g_free(copy);
  g_variant_unref(body);
  g_variant_unref(top);
  free(bytes);
  ts_function_free(fn);
}

static void test_damaged_nodes(void)
{
  ts_function *fn = ts_function_new("small_fn", small_fn, "x");
  const ts_graph *g = own_graph(fn);
  size_t size;
  void *bytes = serialize(g, &size);
  GVariant *top = parse_bytes(bytes, size);
  int mul = find_op(g, TS_OP_MUL), cnst = find_op(g, TS_OP_CONST), n = ts_graph_n_nodes(g);
  char *fragment = g_strdup_printf("node %d (Mul): input 0 names node 40 of %d", mul, n);
  expect_bad_edit(top, 0, mul, F_INPUTS, ports(40, 0), fragment);
  g_free(fragment);
  expect_bad_edit(top, 0, mul, F_INPUTS, ports(-1, 0), "input 0 names node -1 of");
  expect_bad_edit(top, 0, mul, F_INPUTS, ports(0, 7), "input 0 names output 7 of node 0 (x), which has 1");
  expect_bad_edit(top, 0, 0, F_INPUTS, ports(0, 0), "input 0 names node 0, which is not before it");
  expect_bad_edit(top, 0, mul, F_OP, g_variant_new_string("NoSuchOp"), "unknown op 'NoSuchOp'");
  expect_bad_edit(top, 0, mul, F_NAME, g_variant_new_string("x"), "another node has this name");
  expect_bad_edit(top, 0, mul, F_GRADIENT_OF, g_variant_new_int32(99), "it is the gradient of node 99 of");
  expect_bad_edit(top, 0, mul, F_CONTROL, g_variant_new_parsed("[%i]", mul), "control input 0 names node");
  expect_bad_edit(top, 0, mul, F_SUBGRAPHS, g_variant_new_parsed("[1]"), "1 subgraphs, Mul takes 0");
  expect_bad_edit(top, 0, mul, F_OUTPUTS, output("float32", (int64_t[]){ INT64_MAX, 4 }, 2),
                  "output 0 has more elements than int64 counts");
  expect_bad_edit(top, 0, mul, F_OUTPUTS, output("float32", (int64_t[]){ -5 }, 1),
                  "output 0 has dimension 0 of -5");
  expect_bad_edit(top, 0, mul, F_OUTPUTS, output("float32", (int64_t[]){ 1, 1, 1, 1, 1, 1, 1, 1, 1 }, 9),
                  "output 0 has rank 9, at most 8");
  expect_bad_edit(top, 0, mul, F_OUTPUTS, output("float128", NULL, 0), "output 0 has unknown dtype 'float128'");
  expect_bad_edit(top, 0, mul, F_OUTPUTS, g_variant_new_parsed("@a(sax) []"), "0 outputs, Mul takes 1");
  expect_bad_edit(top, 0, mul, F_ATTRS, g_variant_new_parsed("[('axis', <int64 1>)]"),
                  "1 attributes, Mul takes 0");
  /* the Const's value: bytes that do not fit its dtype and shape */
  expect_bad_edit(top, 0, cnst, F_VALUE,
                  g_variant_new_parsed("@m(saxayaayms) just ('float32', @ax [], b'ab', @aay [], @ms nothing)"),
                  "the float32 value of 1 elements holds 3 bytes");
  expect_bad_edit(top, 0, cnst, F_VALUE,
                  g_variant_new_parsed("@m(saxayaayms) just ('int32', @ax [], b'abc', @aay [], @ms nothing)"),
                  "the value is i32[], the output f32[]");
  expect_bad_edit(top, 0, mul, F_VALUE,
                  g_variant_new_parsed("@m(saxayaayms) just ('float32', @ax [2], b'1234567', @aay [], @ms nothing)"),
                  "Mul nodes hold no value");
  /* the graph's own fields: inputs, outputs */
  expect_bad_edit(top, 0, 0, -2, g_variant_new_parsed("[5]"), "graph input 0 names node 5 of");
  expect_bad_edit(top, 0, 0, -2, g_variant_new_parsed("[0, 0]"), "graph input 1 names node 0, as input 0 does");
  expect_bad_edit(top, 0, 0, -2, g_variant_new_parsed("@ai []"), "input_index is 0, but it is no graph input");
  expect_bad_edit(top, 0, 0, -3, ports(1, 3), "graph output 0 names output 3 of node 1");
  g_variant_unref(top);
  free(bytes);
  ts_function_free(fn);
}

/* A body of graphs: `count` copies of top's graph 0 with their If's
 * subgraphs re-pointed by subgraphs(k), then top's other graphs. */
static void *with_graphs(GVariant *top, int if_id, int count, GVariant *(*subgraphs)(int k),
                         size_t *size)
{
  GVariant *body = g_variant_get_child_value(g_variant_get_child_value(top, 2), 0);
  gsize n_orig = g_variant_n_children(body);
  GVariant **graphs = g_new(GVariant *, (gsize)count + n_orig);
  GVariant *graph0 = g_variant_get_child_value(body, 0);
  int path[] = { 3, if_id, F_SUBGRAPHS };
  for (int k = 0; k < count; k++)
    graphs[k] = with_path(graph0, path, 3, subgraphs(k));
  for (gsize k = 1; k < n_orig; k++)
    graphs[count - 1 + k] = g_variant_get_child_value(body, k);
  GVariant *v = g_variant_ref_sink(g_variant_new("(suv)", "tracescope-graph", 2,
    g_variant_new_array(NULL, graphs, (gsize)count - 1 + n_orig)));
  *size = g_variant_get_size(v);
  void *bytes = g_memdup2(g_variant_get_data(v), *size);
  g_variant_unref(v);
  g_variant_unref(graph0);
  g_variant_unref(body);
  g_free(graphs);
  return bytes;
}

#define CHAIN 66 /* graphs in a chain of subgraphs: nested 65 deep */

/* Graph k holds graph k + 1 (the chain) and a copy of a branch at the end. */
static GVariant *chain_subgraphs(int k)
{
  return g_variant_new_parsed("[%i, %i]", k + 1 < CHAIN ? k + 1 : CHAIN, CHAIN);
}

/* Graph 0 holds the branches (2, 3): its copy, graph 1, hangs nowhere. */
static GVariant *unclaimed_subgraphs(int k)
{
  return g_variant_new_parsed("[%i, %i]", 2, 3);
}

static void test_damaged_subgraphs(void)
{
  ts_module *m = ts_module_open("seeds");
  const ts_graph *g = seed_graph(m, export_index(m, "square_if_positive"));
  int if_id = find_op(g, TS_OP_IF);
  size_t size;
  void *bytes = serialize(g, &size);
  GVariant *top = parse_bytes(bytes, size);
  expect_bad_edit(top, 0, if_id, F_SUBGRAPHS, g_variant_new_parsed("[0, 1]"),
                  "subgraph 0 is graph 0; it must be one of graphs 1 to 2");
  expect_bad_edit(top, 0, if_id, F_SUBGRAPHS, g_variant_new_parsed("[1, 1]"),
                  "subgraph 1 is graph 1, which another node holds");
  expect_bad_edit(top, 0, if_id, F_SUBGRAPHS, g_variant_new_parsed("[1]"), "1 subgraphs, If takes 2");
  /* errors inside a subgraph say where it hangs */
  char *fragment = g_strdup_printf("node %d (%s): then: node 0 (", if_id,
                                   ts_node_name(ts_graph_node(g, if_id)));
  expect_bad_edit(top, 1, 0, F_OP, g_variant_new_string("Nope"), fragment);
  g_free(fragment);
  void *body = with_graphs(top, if_id, 2, unclaimed_subgraphs, &size);
  expect_bad(body, size, "graph 1 is no node's subgraph");
  g_free(body);
  body = with_graphs(top, if_id, CHAIN, chain_subgraphs, &size);
  expect_bad(body, size, "subgraphs are nested deeper than 64");
  g_free(body);
  g_variant_unref(top);
  free(bytes);
  ts_module_free(m);
}

/* Serialized small graphs as fuzz seeds: seed-<export> in dir. */
static int write_seeds(const char *dir)
{
  static const char *const names[] = { "square_if_positive", "sum_even", "my_function",
                                       "get_MSE", "find_next_odd", "side_effect" };
  ts_module *m = ts_module_open("seeds");
  for (size_t i = 0; m && i < G_N_ELEMENTS(names); i++) {
    size_t size;
    void *bytes = serialize(seed_graph(m, export_index(m, names[i])), &size);
    char *path = g_strdup_printf("%s/seed-%s", dir, names[i]);
    if (!g_file_set_contents(path, bytes, (gssize)size, NULL))
      g_error("cannot write %s", path);
    g_free(path);
    free(bytes);
  }
  ts_module_free(m);
  return m ? 0 : 1;
}

int main(int argc, char **argv)
{
  if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0)
    return write_seeds(argv[2]);
  g_test_init(&argc, &argv, NULL);
  serial_check_install();
  g_test_add_func("/graph-serial/seeds", test_seeds);
  g_test_add_func("/graph-serial/shapes-past-int64", test_shapes_past_int64);
  g_test_add_func("/graph-serial/strings-and-large-values", test_strings_and_large_values);
  g_test_add_func("/graph-serial/new-dtypes", test_new_dtypes);
  g_test_add_func("/graph-serial/unwritable", test_unwritable);
  g_test_add_func("/graph-serial/damaged-header", test_damaged_header);
  g_test_add_func("/graph-serial/damaged-nodes", test_damaged_nodes);
  g_test_add_func("/graph-serial/damaged-subgraphs", test_damaged_subgraphs);
  return g_test_run();
}
