/* graph_serial.c — a graph's serialized form (docs/graph-format.md): a
 * GVariant "(suv)" in normal form, little-endian: the magic, the format
 * version, and a body whose type the version fixes.  The body lists the
 * graph and its subgraphs (If and While nodes name theirs by index) with
 * everything their nodes hold, Const and VarHandle values up to 1 MiB.
 *
 * The reader trusts nothing: the bytes must be a GVariant of the expected
 * type in normal form, and every name, id, port, dtype, shape, size and
 * count is checked before the graph is rebuilt through graph.c. */
#include "graph-private.h"

#include <stdio.h>
#include <stdlib.h>

#define MAGIC "tracescope-graph"
#define VERSION 2u
#define MAX_DEPTH 64                      /* subgraphs nested in subgraphs */
#define MAX_STRING 65536                  /* bytes of a name, path or string attribute */
#define MAX_VALUE_BYTES ((size_t)1 << 20) /* larger values are left out */

/* Every version begins so: magic, version, body. */
#define HEADER_TYPE "(suv)"
/* dtype, shape, data (numeric dtypes), strings (string dtype), variable name */
#define VALUE_TYPE "(saxayaayms)"
/* name, op, scope, (file, func, line), inputs, control inputs, outputs
 * (dtype, shape), attributes (name, value), value, subgraphs, input_index,
 * stateful, (has_site, site, occurrence), origins (id or -1, name), gradient of (id or -1) */
#define NODE_TYPE "(sss(msmsi)a(ii)aia(sax)a(sv)m" VALUE_TYPE "aiib(bti)a(is)i)"
/* name, inputs (Placeholder ids), outputs (ports), nodes */
#define GRAPH_TYPE "(saia(ii)a" NODE_TYPE ")"
/* the graph, then its subgraphs (each once, after the graph holding it) */
#define BODY_TYPE "a" GRAPH_TYPE

enum {
  F_NAME, F_OP, F_SCOPE, F_LOC, F_INPUTS, F_CONTROL, F_OUTPUTS, F_ATTRS, F_VALUE,
  F_SUBGRAPHS, F_INPUT_INDEX, F_STATEFUL, F_SITE, F_ORIGINS, F_GRADIENT_OF, N_FIELDS
};

static const ts_loc NO_LOC = { NULL, NULL, 0 };

/* ---- byte order: the format is little-endian, GVariant uses the host's ------------ */

static bool big_endian(void)
{
  return G_BYTE_ORDER == G_BIG_ENDIAN;
}

/* v in the other byte order on a big-endian host (either way); consumes v. */
static GVariant *in_format_order(GVariant *v)
{
  if (!big_endian())
    return v;
  GVariant *swapped = g_variant_ref_sink(g_variant_byteswap(v));
  g_variant_unref(v);
  return swapped;
}

/* Elements of `size` bytes, reversed on a big-endian host. */
static void swap_elements(uint8_t *p, size_t bytes, size_t size)
{
  if (!big_endian() || size < 2)
    return;
  for (size_t at = 0; at + size <= bytes; at += size)
    for (size_t i = 0; i < size / 2; i++) {
      uint8_t t = p[at + i];
      p[at + i] = p[at + size - 1 - i];
      p[at + size - 1 - i] = t;
    }
}

/* ---- writing ----------------------------------------------------------------- */

typedef struct writer {
  const ts_graph *top;
  GPtrArray *graphs;   /* const ts_graph *, by index: the top graph, then subgraphs as met */
  GArray *depths;      /* int per graph: how deeply it is nested */
  const ts_node *node; /* the node being written (errors name it) */
  bool failed;
} writer;

static void write_error(writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void write_error(writer *w, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (w->node)
    ts_error_set(TS_ERR_INVALID_ARGUMENT, NO_LOC, NULL,
                 "cannot serialize graph '%s': node %d (%s) of '%s': %s", w->top->name,
                 w->node->id, w->node->name, w->node->graph->name, what);
  else
    ts_error_set(TS_ERR_INVALID_ARGUMENT, NO_LOC, NULL, "cannot serialize graph '%s': %s",
                 w->top->name, what);
  g_free(what);
  w->failed = true;
}

/* A name, scope or path: UTF-8 and at most MAX_STRING bytes. */
static GVariant *string_variant(writer *w, const char *s, const char *what)
{
  size_t len = strlen(s);
  if (len > MAX_STRING)
    write_error(w, "%s is %zu bytes long, at most %d", what, len, MAX_STRING);
  else if (!g_utf8_validate(s, (gssize)len, NULL))
    write_error(w, "%s is not valid UTF-8", what);
  else
    return g_variant_new_string(s);
  return g_variant_new_string("");
}

static GVariant *maybe_string_variant(writer *w, const char *s, const char *what)
{
  return g_variant_new_maybe(G_VARIANT_TYPE_STRING, s ? string_variant(w, s, what) : NULL);
}

static GVariant *ports_variant(const ts_port *ports, int n)
{
  return g_variant_new_fixed_array(G_VARIANT_TYPE("(ii)"), ports, (gsize)n, sizeof *ports);
}

static GVariant *ids_variant(const int *ids, int n)
{
  return g_variant_new_fixed_array(G_VARIANT_TYPE_INT32, ids, (gsize)n, sizeof *ids);
}

/* A shape's dims; an unknown rank as the one dim UNKNOWN_RANK_DIM. */
#define UNKNOWN_RANK_DIM (-2)
static GVariant *dims_variant(const int64_t *dims, int n)
{
  static const int64_t unknown_rank = UNKNOWN_RANK_DIM;
  if (n == TS_RANK_UNKNOWN)
    return g_variant_new_fixed_array(G_VARIANT_TYPE_INT64, &unknown_rank, 1, sizeof unknown_rank);
  return g_variant_new_fixed_array(G_VARIANT_TYPE_INT64, dims, (gsize)n, sizeof *dims);
}

static GVariant *outputs_variant(const ts_node *n)
{
  GVariantBuilder b;
  g_variant_builder_init(&b, G_VARIANT_TYPE("a(sax)"));
  for (int i = 0; i < n->n_outputs; i++)
    g_variant_builder_add(&b, "(s@ax)", ts_dtype_name(n->outputs[i].dtype),
                          dims_variant(n->outputs[i].shape.dim, n->outputs[i].shape.rank));
  return g_variant_builder_end(&b);
}

/* An attribute's value, of the type its kind has in the format. */
static GVariant *attr_value(writer *w, const ts_attr *a)
{
  switch (a->type) {
  case TS_ATTR_INT: return g_variant_new_int64(a->i);
  case TS_ATTR_FLOAT: return g_variant_new_double(a->f);
  case TS_ATTR_BOOL: return g_variant_new_boolean(a->b);
  case TS_ATTR_DTYPE: return g_variant_new_string(ts_dtype_name(a->dtype));
  case TS_ATTR_INTS:
    return g_variant_new_maybe(G_VARIANT_TYPE("ax"),
                               a->ints.n < 0 ? NULL : dims_variant(a->ints.v, a->ints.n));
  case TS_ATTR_SHAPE: return dims_variant(a->shape.dim, a->shape.rank);
  case TS_ATTR_STRING: {
    const char *s = a->s ? a->s : "";
    if (strlen(s) > MAX_STRING)
      write_error(w, "a string attribute is %zu bytes long, at most %d", strlen(s), MAX_STRING);
    return g_variant_new_bytestring(s);
  }
  case TS_ATTR_TYPE_COUNT: break;
  }
  write_error(w, "an attribute of unknown type %d", (int)a->type);
  return g_variant_new_int64(0);
}

static GVariant *attrs_variant(writer *w, const ts_node *n)
{
  const ts_op_def *def = ts__op_def(n->op);
  GVariantBuilder b;
  g_variant_builder_init(&b, G_VARIANT_TYPE("a(sv)"));
  for (int i = 0; i < n->n_attrs && i < def->n_attrs; i++)
    g_variant_builder_add(&b, "(sv)", def->attrs[i].name, attr_value(w, &n->attrs[i]));
  if (n->n_attrs != def->n_attrs)
    write_error(w, "%d attributes, %s takes %d", n->n_attrs, def->name, def->n_attrs);
  return g_variant_builder_end(&b);
}

/* Bytes the value takes in the format (strings with their terminators). */
static size_t value_bytes(const ts_tensor *host)
{
  if (host->dtype != TS_STRING)
    return (size_t)host->size * ts_dtype_size(host->dtype);
  size_t bytes = 0;
  for (int64_t i = 0; i < host->size; i++) {
    const char *s = ((char *const *)host->data)[i];
    bytes += (s ? strlen(s) : 0) + 1;
  }
  return bytes;
}

/* Elements as little-endian bytes ("ay"). */
static GVariant *data_variant(const void *data, size_t bytes, size_t size)
{
  uint8_t *copy = g_memdup2(data, bytes);
  swap_elements(copy, bytes, size);
  return g_variant_new_from_data(G_VARIANT_TYPE_BYTESTRING, copy, bytes, TRUE, g_free, copy);
}

/* Const and VarHandle values; nothing for none, variants (no host form)
 * and values over MAX_VALUE_BYTES. */
static GVariant *value_variant(writer *w, const ts_node *n)
{
  const GVariantType *type = G_VARIANT_TYPE(VALUE_TYPE);
  if (!n->value || n->value->dtype == TS_VARIANT)
    return g_variant_new_maybe(type, NULL);
  ts_tensor *host = ts__tensor_host(NO_LOC, n->value); /* in serialize's scope */
  if (!host) {
    w->failed = true;
    return g_variant_new_maybe(type, NULL);
  }
  size_t bytes = value_bytes(host);
  if (bytes > MAX_VALUE_BYTES)
    return g_variant_new_maybe(type, NULL);
  bool strings = host->dtype == TS_STRING;
  GVariantBuilder elements;
  g_variant_builder_init(&elements, G_VARIANT_TYPE_BYTESTRING_ARRAY);
  for (int64_t i = 0; strings && i < host->size; i++) {
    const char *s = ((char *const *)host->data)[i];
    g_variant_builder_add_value(&elements, g_variant_new_bytestring(s ? s : ""));
  }
  size_t size = ts_dtype_size(host->dtype);
  GVariant *value = g_variant_new(
    "(s@ax@ay@aay@ms)", ts_dtype_name(host->dtype), dims_variant(host->shape.dim, host->shape.rank),
    data_variant(host->data, strings ? 0 : (size_t)host->size * size, size),
    g_variant_builder_end(&elements),
    maybe_string_variant(w, n->value->is_variable ? n->value->name : NULL, "the variable's name"));
  return g_variant_new_maybe(type, value);
}

/* Subgraphs get the next indices; they are written after the graphs before them. */
static GVariant *subgraphs_variant(writer *w, const ts_node *n, int depth)
{
  GVariantBuilder b;
  g_variant_builder_init(&b, G_VARIANT_TYPE("ai"));
  if (n->n_subgraphs && depth >= MAX_DEPTH)
    write_error(w, "subgraphs are nested deeper than %d", MAX_DEPTH);
  for (int s = 0; s < n->n_subgraphs; s++) {
    int sub_depth = depth + 1;
    g_variant_builder_add(&b, "i", (int)w->graphs->len);
    g_ptr_array_add(w->graphs, n->subgraphs[s]);
    g_array_append_val(w->depths, sub_depth);
  }
  return g_variant_builder_end(&b);
}

/* Origins in n's graph by id; those in another graph (an optimized graph
 * standing for traced nodes) by name, which readers drop. */
static GVariant *origins_variant(writer *w, const ts_node *n)
{
  GVariantBuilder b;
  g_variant_builder_init(&b, G_VARIANT_TYPE("a(is)"));
  for (int i = 0; i < n->n_origins; i++) {
    const ts_node *o = n->origins[i];
    bool here = o->graph == n->graph;
    g_variant_builder_add(&b, "(i@s)", here ? o->id : -1,
                          string_variant(w, here ? "" : o->name, "an origin's name"));
  }
  return g_variant_builder_end(&b);
}

static GVariant *node_variant(writer *w, const ts_node *n, int depth)
{
  w->node = n;
  GVariant *f[N_FIELDS];
  f[F_NAME] = string_variant(w, n->name, "the name");
  f[F_OP] = g_variant_new_string(ts_op_name(n->op));
  f[F_SCOPE] = string_variant(w, n->scope, "the scope");
  GVariant *file = maybe_string_variant(w, n->loc.file, "the file name");
  GVariant *func = maybe_string_variant(w, n->loc.func, "the function name");
  f[F_LOC] = g_variant_new("(@ms@msi)", file, func, n->loc.line);
  f[F_INPUTS] = ports_variant(n->inputs, n->n_inputs);
  f[F_CONTROL] = ids_variant(n->control, n->n_control);
  f[F_OUTPUTS] = outputs_variant(n);
  f[F_ATTRS] = attrs_variant(w, n);
  f[F_VALUE] = value_variant(w, n);
  f[F_SUBGRAPHS] = subgraphs_variant(w, n, depth);
  f[F_INPUT_INDEX] = g_variant_new_int32(n->input_index);
  f[F_STATEFUL] = g_variant_new_boolean(n->stateful);
  f[F_SITE] = g_variant_new("(bti)", n->has_site, (guint64)n->site, n->occurrence);
  f[F_ORIGINS] = origins_variant(w, n);
  /* the forward node of a gradient node, when in the same graph (as the tape makes them) */
  f[F_GRADIENT_OF] = g_variant_new_int32(n->gradient_of && n->gradient_of->graph == n->graph
                                           ? n->gradient_of->id : -1);
  w->node = NULL;
  return g_variant_new_tuple(f, N_FIELDS);
}

static GVariant *graph_variant(writer *w, guint index)
{
  const ts_graph *g = w->graphs->pdata[index];
  int depth = g_array_index(w->depths, int, index);
  GVariant *name = string_variant(w, g->name, "a graph's name");
  GVariantBuilder nodes;
  g_variant_builder_init(&nodes, G_VARIANT_TYPE("a" NODE_TYPE));
  for (guint id = 0; id < g->nodes->len; id++)
    g_variant_builder_add_value(&nodes, node_variant(w, ts__graph_node(g, (int)id), depth));
  return g_variant_new("(@s@ai@a(ii)@a" NODE_TYPE ")", name,
                       ids_variant((const int *)(void *)g->inputs->data, (int)g->inputs->len),
                       ports_variant((const ts_port *)(void *)g->outputs->data,
                                     (int)g->outputs->len),
                       g_variant_builder_end(&nodes));
}

/* Everything in one GVariant (floating references sunk), or NULL + error. */
static GVariant *graph_to_variant(const ts_graph *g)
{
  writer w = { g, g_ptr_array_new(), g_array_new(FALSE, FALSE, sizeof(int)), NULL, false };
  int top_depth = 0;
  g_ptr_array_add(w.graphs, (gpointer)g);
  g_array_append_val(w.depths, top_depth);
  GVariantBuilder body;
  g_variant_builder_init(&body, G_VARIANT_TYPE(BODY_TYPE));
  for (guint i = 0; i < w.graphs->len; i++) /* grows as subgraphs are met */
    g_variant_builder_add_value(&body, graph_variant(&w, i));
  GVariant *v = g_variant_ref_sink(
    g_variant_new("(suv)", MAGIC, VERSION, g_variant_builder_end(&body)));
  g_ptr_array_unref(w.graphs);
  g_array_unref(w.depths);
  if (w.failed)
    g_clear_pointer(&v, g_variant_unref);
  return v;
}

void *ts_graph_serialize(const ts_graph *g, size_t *size)
{
  TS_CHECK_ARG(g != NULL && size != NULL, NULL);
  ts_scope *scope = ts_scope_begin(); /* host copies of values on devices */
  GVariant *v = graph_to_variant(g);
  ts_scope_end(scope);
  if (!v)
    return NULL;
  v = in_format_order(v);
  *size = g_variant_get_size(v);
  void *bytes = malloc(*size);
  if (bytes)
    memcpy(bytes, g_variant_get_data(v), *size);
  else
    ts_error_set(TS_ERR_NO_MEMORY, NO_LOC, NULL, "out of memory serializing graph '%s' (%zu bytes)",
                 g->name, *size);
  g_variant_unref(v);
  return bytes;
}

/* ---- reading ------------------------------------------------------------------ */

typedef struct reader {
  GVariant *graphs; /* the body: a(GRAPH_TYPE) */
  gsize n_graphs;
  bool *claimed;    /* per graph: the top one, or a node's subgraph already */
  GString *where;   /* where the reader is, for errors: "node 5 (cond/If): then: " */
} reader;

static bool bad(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records what is wrong, and where; returns false. */
static bool bad(reader *r, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  ts_error_set(TS_ERR_FORMAT, NO_LOC, NULL, "serialized graph: %s%s", r->where->str, what);
  g_free(what);
  return false;
}

static bool read_string(reader *r, GVariant *v, const char *what, const char **out)
{
  gsize len;
  const char *s = g_variant_get_string(v, &len);
  if (len > MAX_STRING)
    return bad(r, "%s is %zu bytes long, at most %d", what, (size_t)len, MAX_STRING);
  *out = s;
  return true;
}

/* A maybe string: NULL when nothing. */
static bool read_maybe_string(reader *r, GVariant *v, const char *what, const char **out)
{
  GVariant *s = g_variant_get_maybe(v);
  *out = NULL;
  bool ok = !s || read_string(r, s, what, out);
  if (s)
    g_variant_unref(s); /* *out lives in v's data */
  return ok;
}

/* A byte string ("ay" with its terminator, no other NUL). */
static bool read_bytestring(reader *r, GVariant *v, size_t max, const char *what,
                            const char **out)
{
  gsize len;
  const char *s = g_variant_get_fixed_array(v, &len, 1);
  if (len == 0 || s[len - 1] != '\0' || strlen(s) != len - 1)
    return bad(r, "%s is not a NUL-terminated byte string", what);
  if (len - 1 > max)
    return bad(r, "%s is %zu bytes long, at most %zu", what, (size_t)len - 1, max);
  *out = s;
  return true;
}

static bool read_dtype(reader *r, const char *name, const char *what, ts_dtype *out)
{
  if (!ts_dtype_from_name(name, out))
    return bad(r, "%s has unknown dtype '%.64s'", what, name);
  return true;
}

/* Rank within TS_MAX_RANK, dims >= 0 (or -1, unknown, where allowed), and
 * when every dim is known a product that int64 holds: an unknown dim may
 * be 0, so [?, 2^40, 2^40] can hold a tensor, as the tracer allows. */
static bool read_shape(reader *r, GVariant *v, bool unknown_ok, const char *what, ts_shape *out)
{
  gsize rank;
  const int64_t *dims = g_variant_get_fixed_array(v, &rank, sizeof *dims);
  if (rank > TS_MAX_RANK)
    return bad(r, "%s has rank %zu, at most %d", what, (size_t)rank, TS_MAX_RANK);
  if (unknown_ok && rank == 1 && dims[0] == UNKNOWN_RANK_DIM) {
    *out = (ts_shape){ .rank = TS_RANK_UNKNOWN };
    return true;
  }
  *out = (ts_shape){ .rank = (int)rank };
  for (gsize d = 0; d < rank; d++) {
    if (dims[d] < (unknown_ok ? -1 : 0))
      return bad(r, "%s has dimension %zu of %" G_GINT64_FORMAT, what, (size_t)d, dims[d]);
    out->dim[d] = dims[d];
  }
  if (ts_shape_size(*out) == TS_SHAPE_SIZE_INVALID)
    return bad(r, "%s has more elements than int64 counts", what);
  return true;
}

/* Ports naming outputs of nodes 0 .. n_before-1 of g (all built). */
static bool read_ports(reader *r, GVariant *v, const ts_graph *g, int n_before, int n_nodes,
                       const char *what, const ts_port **out, gsize *n)
{
  const ts_port *ports = g_variant_get_fixed_array(v, n, sizeof *ports);
  for (gsize i = 0; i < *n; i++) {
    ts_port p = ports[i];
    if (p.node < 0 || p.node >= n_nodes)
      return bad(r, "%s %zu names node %d of %d", what, (size_t)i, p.node, n_nodes);
    if (p.node >= n_before)
      return bad(r, "%s %zu names node %d, which is not before it (nodes are in topological order)",
                 what, (size_t)i, p.node);
    const ts_node *src = ts__graph_node(g, p.node);
    if (p.index < 0 || p.index >= src->n_outputs)
      return bad(r, "%s %zu names output %d of node %d (%s), which has %d", what, (size_t)i,
                 p.index, p.node, src->name, src->n_outputs);
  }
  *out = ports;
  return true;
}

static int compare_ints(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Control inputs: distinct nodes before node `id`. */
static bool read_control(reader *r, GVariant *v, int id, ts_node *n)
{
  gsize count;
  const int *ids = g_variant_get_fixed_array(v, &count, sizeof *ids);
  for (gsize i = 0; i < count; i++)
    if (ids[i] < 0 || ids[i] >= id)
      return bad(r, "control input %zu names node %d; only nodes 0 to %d come before it",
                 (size_t)i, ids[i], id - 1);
  if (count == 0)
    return true;
  int *sorted = g_memdup2(ids, count * sizeof *ids);
  qsort(sorted, count, sizeof *sorted, compare_ints);
  gsize dup = 1;
  while (dup < count && sorted[dup] != sorted[dup - 1])
    dup++;
  bool ok = dup >= count || bad(r, "control input node %d is listed twice", sorted[dup]);
  g_free(sorted);
  if (ok)
    ts__node_set_control(n, ids, (int)count);
  return ok;
}

/* How many inputs (or outputs) the op takes: `fixed`, or any up to max
 * when fixed is -1 (at least min). */
static bool check_count(reader *r, gsize n, int fixed, int min, int max, const char *op,
                        const char *what)
{
  if (fixed >= 0)
    return n == (gsize)fixed || bad(r, "%zu %s, %s takes %d", (size_t)n, what, op, fixed);
  if (n < (gsize)min || n > (gsize)max)
    return bad(r, "%zu %s, %s takes %d to %d", (size_t)n, what, op, min, max);
  return true;
}

static bool read_outputs(reader *r, GVariant *v, const ts_op_def *def, ts_info *out, gsize *n)
{
  *n = g_variant_n_children(v);
  if (!check_count(r, *n, def->n_outputs, 0, TS_MAX_OUTPUTS, def->name, "outputs"))
    return false;
  bool ok = true;
  for (gsize i = 0; ok && i < *n; i++) {
    char what[32];
    snprintf(what, sizeof what, "output %zu", (size_t)i);
    const char *dtype;
    GVariant *dims;
    g_variant_get_child(v, i, "(&s@ax)", &dtype, &dims);
    ok = read_dtype(r, dtype, what, &out[i].dtype) && read_shape(r, dims, true, what, &out[i].shape);
    g_variant_unref(dims);
  }
  return ok;
}

/* The format's type for an attribute kind. */
static const char *attr_type_string(ts_attr_type type)
{
  switch (type) {
  case TS_ATTR_INT: return "x";
  case TS_ATTR_FLOAT: return "d";
  case TS_ATTR_BOOL: return "b";
  case TS_ATTR_DTYPE: return "s";
  case TS_ATTR_INTS: return "max";
  case TS_ATTR_SHAPE: return "ax";
  case TS_ATTR_STRING: return "ay";
  case TS_ATTR_TYPE_COUNT: break;
  }
  return "";
}

/* One attribute's value (strings borrowed from v). */
static bool read_attr_value(reader *r, const ts_attr_def *def, GVariant *v, ts_attr *out)
{
  char what[80];
  snprintf(what, sizeof what, "attribute '%s'", def->name);
  if (!g_variant_is_of_type(v, G_VARIANT_TYPE(attr_type_string(def->type))))
    return bad(r, "%s has type %.32s, expected %s", what, g_variant_get_type_string(v),
               attr_type_string(def->type));
  *out = (ts_attr){ .type = def->type };
  switch (def->type) {
  case TS_ATTR_INT: out->i = g_variant_get_int64(v); return true;
  case TS_ATTR_FLOAT: out->f = g_variant_get_double(v); return true;
  case TS_ATTR_BOOL: out->b = g_variant_get_boolean(v); return true;
  case TS_ATTR_DTYPE: return read_dtype(r, g_variant_get_string(v, NULL), what, &out->dtype);
  case TS_ATTR_INTS: {
    GVariant *ints = g_variant_get_maybe(v);
    gsize n = 0;
    const int64_t *ints_v = ints ? g_variant_get_fixed_array(ints, &n, sizeof *ints_v) : NULL;
    bool ok = n <= TS_MAX_RANK || bad(r, "%s has %zu integers, at most %d", what, (size_t)n,
                                      TS_MAX_RANK);
    out->ints.n = ints ? (int)n : -1;
    if (ok && n)
      memcpy(out->ints.v, ints_v, n * sizeof *ints_v);
    if (ints)
      g_variant_unref(ints);
    return ok;
  }
  case TS_ATTR_SHAPE: return read_shape(r, v, true, what, &out->shape);
  case TS_ATTR_STRING: return read_bytestring(r, v, MAX_STRING, what, &out->s);
  case TS_ATTR_TYPE_COUNT: break;
  }
  return bad(r, "%s is of no known kind", what);
}

/* Attributes by name, each of the op's exactly once, into the op's order. */
static bool read_attrs(reader *r, GVariant *v, const ts_op_def *def, ts_attr *out)
{
  gsize n = g_variant_n_children(v);
  if (n != (gsize)def->n_attrs)
    return bad(r, "%zu attributes, %s takes %d", (size_t)n, def->name, def->n_attrs);
  bool seen[TS_MAX_ATTRS] = { false }, ok = true;
  for (gsize i = 0; ok && i < n; i++) {
    const char *name;
    GVariant *value;
    g_variant_get_child(v, i, "(&sv)", &name, &value);
    int k = 0;
    while (k < def->n_attrs && strcmp(def->attrs[k].name, name) != 0)
      k++;
    if (k == def->n_attrs)
      ok = bad(r, "%s has no attribute '%.64s'", def->name, name);
    else if (seen[k])
      ok = bad(r, "attribute '%s' is given twice", name);
    else
      ok = read_attr_value(r, &def->attrs[k], value, &out[k]);
    if (k < def->n_attrs)
      seen[k] = true;
    g_variant_unref(value);
  }
  return ok;
}

/* The tensor a value holds, in the caller's scope.  Sizes are checked
 * against the data before anything is allocated. */
static ts_tensor *value_tensor(reader *r, ts_dtype dtype, ts_shape shape, GVariant *data,
                               GVariant *strings)
{
  int64_t n = ts_shape_size(shape); /* known dims, no overflow: read_shape */
  size_t size = ts_dtype_size(dtype);
  gsize n_bytes, n_strings = g_variant_n_children(strings);
  const uint8_t *bytes = g_variant_get_fixed_array(data, &n_bytes, 1);
  if (dtype == TS_STRING) {
    if (n_bytes || n_strings != (guint64)n)
      return bad(r, "the string value of %" G_GINT64_FORMAT " elements holds %zu strings and %zu "
                    "bytes", n, (size_t)n_strings, (size_t)n_bytes), NULL;
    const char **elements = g_new(const char *, n_strings + 1);
    size_t total = 0;
    bool ok = true;
    for (gsize i = 0; ok && i < n_strings; i++) {
      GVariant *s = g_variant_get_child_value(strings, i);
      ok = read_bytestring(r, s, MAX_VALUE_BYTES, "a string element", &elements[i]);
      total += ok ? strlen(elements[i]) + 1 : 0;
      g_variant_unref(s); /* the element lives in strings' data */
    }
    if (ok && total > MAX_VALUE_BYTES)
      ok = bad(r, "the value is %zu bytes, at most %zu", total, MAX_VALUE_BYTES);
    ts_tensor *t = ok ? ts_constant(dtype, shape, elements) : NULL;
    g_free(elements);
    return t;
  }
  if (n_strings || (uint64_t)n > MAX_VALUE_BYTES / size || n_bytes != (size_t)n * size)
    return bad(r, "the %s value of %" G_GINT64_FORMAT " elements holds %zu bytes and %zu strings",
               ts_dtype_name(dtype), n, (size_t)n_bytes, (size_t)n_strings), NULL;
  for (gsize i = 0; dtype == TS_BOOL && i < n_bytes; i++)
    if (bytes[i] > 1)
      return bad(r, "bool element %zu is %d, not 0 or 1", (size_t)i, bytes[i]), NULL;
  ts_tensor *t = ts_constant(dtype, shape, bytes);
  if (t)
    swap_elements(t->data, n_bytes, size);
  return t;
}

/* A Const's or VarHandle's value (a reference the caller owns), NULL
 * (and true) when the node has none. */
static bool read_value(reader *r, GVariant *maybe, const ts_op_def *def, const ts_info *output,
                       ts_tensor **out)
{
  *out = NULL;
  GVariant *v = g_variant_get_maybe(maybe);
  if (!v)
    return true;
  const char *dtype_name;
  GVariant *dims, *data, *strings, *variable;
  g_variant_get(v, "(&s@ax@ay@aay@ms)", &dtype_name, &dims, &data, &strings, &variable);
  ts_dtype dtype;
  ts_shape shape;
  const char *name;
  char buf[TS_INFO_STR], out_buf[TS_INFO_STR];
  bool ok = read_dtype(r, dtype_name, "the value", &dtype) &&
            read_shape(r, dims, false, "the value", &shape) &&
            read_maybe_string(r, variable, "the variable's name", &name);
  if (ok && !(def->flags & TS_OPF_VALUE))
    ok = bad(r, "%s nodes hold no value", def->name);
  else if (ok && (dtype != output->dtype || !ts_shape_equal(shape, output->shape)))
    ok = bad(r, "the value is %s, the output %s", ts__info_str(buf, dtype, shape),
             ts__info_str(out_buf, output->dtype, output->shape));
  else if (ok && dtype == TS_VARIANT)
    ok = bad(r, "a variant value has no serialized form");
  else if (ok && (def->op == TS_OP_VAR_HANDLE) != (name != NULL))
    ok = bad(r, name ? "a Const holds a variable" : "a VarHandleOp's variable has no name");
  else if (ok && name && dtype == TS_STRING)
    ok = bad(r, "a variable holds strings");
  if (ok) {
    ts_scope *scope = ts_scope_begin();
    *out = ts_tensor_ref(value_tensor(r, dtype, shape, data, strings));
    ts_scope_end(scope);
    ok = *out != NULL;
  }
  if (*out && name) { /* as ts_variable_new makes them */
    (*out)->is_variable = true;
    (*out)->name = strdup(name);
  }
  g_variant_unref(dims);
  g_variant_unref(data);
  g_variant_unref(strings);
  g_variant_unref(variable);
  g_variant_unref(v);
  return ok;
}

static bool read_loc(reader *r, GVariant *v, ts_loc *loc)
{
  GVariant *file, *func;
  g_variant_get(v, "(@ms@msi)", &file, &func, &loc->line);
  bool ok = read_maybe_string(r, file, "the file name", &loc->file) &&
            read_maybe_string(r, func, "the function name", &loc->func);
  g_variant_unref(file);
  g_variant_unref(func);
  return ok;
}

/* Where node `id` stands among the graph's inputs (input_pos[id], -1 if
 * none) must be its input_index, and graph inputs are Placeholders. */
static bool check_input_index(reader *r, GVariant *v, ts_op op, int pos)
{
  int input_index = g_variant_get_int32(v);
  if (pos >= 0 && op != TS_OP_PLACEHOLDER)
    return bad(r, "graph input %d is a %s, not a Placeholder", pos, ts_op_name(op));
  if (input_index != pos)
    return pos >= 0 ? bad(r, "input_index is %d, but it is graph input %d", input_index, pos)
                    : bad(r, "input_index is %d, but it is no graph input (-1)", input_index);
  return true;
}

/* A node's own fields (subgraphs, stateful and origins come after), added
 * to g; r->where names it.  NULL + error. */
static ts_node *read_node(reader *r, ts_graph *g, GVariant *const *f, int n_nodes,
                          const int *input_pos)
{
  int id = (int)g->nodes->len;
  const char *name = NULL, *op_name, *scope = NULL;
  g_string_append_printf(r->where, "node %d: ", id);
  if (!read_string(r, f[F_NAME], "the name", &name))
    return NULL;
  g_string_truncate(r->where, r->where->len - 2);
  g_string_append_printf(r->where, " (%s): ", name);
  op_name = g_variant_get_string(f[F_OP], NULL);
  int op = ts_op_from_name(op_name);
  if (op < 0)
    return bad(r, "unknown op '%.64s'", op_name), NULL;
  const ts_op_def *def = ts__op_def((ts_op)op);
  ts_loc loc;
  const ts_port *inputs = NULL;
  gsize n_inputs, n_outputs;
  ts_info outputs[TS_MAX_OUTPUTS];
  ts_attr attrs[TS_MAX_ATTRS];
  ts_tensor *value = NULL;
  gsize n_subgraphs = g_variant_n_children(f[F_SUBGRAPHS]);
  bool ok = read_string(r, f[F_SCOPE], "the scope", &scope) && read_loc(r, f[F_LOC], &loc) &&
            read_ports(r, f[F_INPUTS], g, id, n_nodes, "input", &inputs, &n_inputs) &&
            check_count(r, n_inputs, def->n_inputs, def->n_inputs < 0 ? def->min_inputs : 0,
                        TS_MAX_INPUTS, def->name, "inputs") &&
            read_outputs(r, f[F_OUTPUTS], def, outputs, &n_outputs) &&
            read_attrs(r, f[F_ATTRS], def, attrs) &&
            check_count(r, n_subgraphs, def->n_subgraphs, 0, 0, def->name, "subgraphs") &&
            check_input_index(r, f[F_INPUT_INDEX], def->op, input_pos[id]) &&
            read_value(r, f[F_VALUE], def, outputs, &value);
  ts_node *n = NULL;
  if (ok) {
    n = ts__graph_add_named_node(g, def->op, name, scope, loc, inputs, (int)n_inputs, attrs,
                                 def->n_attrs, outputs, (int)n_outputs);
    if (!n)
      bad(r, "another node has this name");
  }
  if (n && !read_control(r, f[F_CONTROL], id, n))
    n = NULL; /* g owns it: freed with g */
  if (n) {
    gboolean has_site;
    guint64 site;
    int occurrence;
    g_variant_get(f[F_SITE], "(bti)", &has_site, &site, &occurrence);
    ts__node_set_site(n, has_site, site, occurrence);
    if (value)
      ts__node_set_value(n, value);
  }
  ts_tensor_unref(value);
  return n;
}

static ts_graph *read_graph(reader *r, gsize index, ts_graph *parent, int depth);

/* n's subgraphs: graphs after `self` that no other node holds. */
static bool read_subgraphs(reader *r, ts_node *n, GVariant *v, gsize self, int depth)
{
  gsize count;
  const int *indices = g_variant_get_fixed_array(v, &count, sizeof *indices);
  for (gsize s = 0; s < count; s++) {
    int k = indices[s];
    if (k < 0 || (gsize)k >= r->n_graphs || (gsize)k <= self)
      return bad(r, "subgraph %zu is graph %d; it must be one of graphs %zu to %zu",
                 (size_t)s, k, (size_t)self + 1, (size_t)r->n_graphs - 1);
    if (r->claimed[k])
      return bad(r, "subgraph %zu is graph %d, which another node holds", (size_t)s, k);
    r->claimed[k] = true;
    size_t mark = r->where->len;
    const char *label = ts_op_subgraph_name(n->op, (int)s);
    g_string_append_printf(r->where, "%s: ", label ? label : "subgraph");
    ts_graph *sub = read_graph(r, (gsize)k, n->graph, depth + 1);
    if (!sub)
      return false;
    g_string_truncate(r->where, mark);
    ts__node_add_subgraph(n, sub);
  }
  return true;
}

/* The provenance of every node of g (ids may name later nodes too); origins
 * in other graphs, stored by name, cannot be resolved here: dropped.  And
 * the forward node each gradient node is for. */
static bool read_origins(reader *r, ts_graph *g, GVariant *nodes)
{
  int n_nodes = (int)g->nodes->len;
  bool ok = true;
  for (int id = 0; ok && id < n_nodes; id++) {
    GVariant *node = g_variant_get_child_value(nodes, (gsize)id);
    GVariant *origins = g_variant_get_child_value(node, F_ORIGINS);
    gsize count = g_variant_n_children(origins);
    const ts_node **found = g_new(const ts_node *, count + 1);
    int n_found = 0;
    for (gsize i = 0; ok && i < count; i++) {
      int o;
      const char *name;
      g_variant_get_child(origins, i, "(i&s)", &o, &name);
      if (o >= n_nodes || o < -1)
        ok = bad(r, "node %d (%s): origin %zu names node %d of %d", id, ts__graph_node(g, id)->name,
                 (size_t)i, o, n_nodes);
      else if (o >= 0)
        found[n_found++] = ts__graph_node(g, o);
    }
    if (ok && n_found)
      ts__node_set_origins(ts__graph_node(g, id), found, n_found);
    g_free(found);
    g_variant_unref(origins);
    GVariant *of_v = g_variant_get_child_value(node, F_GRADIENT_OF);
    int of = g_variant_get_int32(of_v);
    g_variant_unref(of_v);
    if (ok && (of >= n_nodes || of < -1))
      ok = bad(r, "node %d (%s): it is the gradient of node %d of %d", id,
               ts__graph_node(g, id)->name, of, n_nodes);
    else if (ok && of >= 0)
      ts__graph_node(g, id)->gradient_of = ts__graph_node(g, of);
    g_variant_unref(node);
  }
  return ok;
}

/* The nodes of graph `self` into g, each with its subgraphs. */
static bool read_nodes(reader *r, ts_graph *g, GVariant *nodes, const int *input_pos, gsize self,
                       int depth)
{
  int n_nodes = (int)g_variant_n_children(nodes);
  bool ok = true;
  for (int id = 0; ok && id < n_nodes; id++) {
    GVariant *node = g_variant_get_child_value(nodes, (gsize)id);
    GVariant *f[N_FIELDS];
    for (int i = 0; i < N_FIELDS; i++)
      f[i] = g_variant_get_child_value(node, (gsize)i);
    size_t mark = r->where->len;
    ts_node *n = read_node(r, g, f, n_nodes, input_pos);
    ok = n && read_subgraphs(r, n, f[F_SUBGRAPHS], self, depth);
    if (ok) {
      ts__node_set_stateful(n, g_variant_get_boolean(f[F_STATEFUL]));
      g_string_truncate(r->where, mark);
    }
    for (int i = 0; i < N_FIELDS; i++)
      g_variant_unref(f[i]);
    g_variant_unref(node);
  }
  return ok;
}

/* The graph's inputs, distinct node ids: input_pos[id] is where node id
 * stands among them (-1: nowhere).  Owned; NULL + error. */
static int *read_inputs(reader *r, GVariant *v, int n_nodes)
{
  gsize count;
  const int *ids = g_variant_get_fixed_array(v, &count, sizeof *ids);
  int *pos = g_new(int, n_nodes + 1);
  for (int id = 0; id < n_nodes; id++)
    pos[id] = -1;
  for (gsize k = 0; k < count; k++) {
    int id = ids[k];
    if (id < 0 || id >= n_nodes)
      bad(r, "graph input %zu names node %d of %d", (size_t)k, id, n_nodes);
    else if (pos[id] >= 0)
      bad(r, "graph input %zu names node %d, as input %d does", (size_t)k, id, pos[id]);
    else {
      pos[id] = (int)k;
      continue;
    }
    g_free(pos);
    return NULL;
  }
  return pos;
}

static bool read_graph_outputs(reader *r, ts_graph *g, GVariant *v)
{
  int n_nodes = (int)g->nodes->len;
  const ts_port *ports;
  gsize count;
  if (!read_ports(r, v, g, n_nodes, n_nodes, "graph output", &ports, &count))
    return false;
  for (gsize i = 0; i < count; i++)
    ts__graph_add_output(g, ports[i]);
  return true;
}

/* Graph `index` of the body, nested `depth` deep under parent.  NULL + error. */
static ts_graph *read_graph(reader *r, gsize index, ts_graph *parent, int depth)
{
  if (depth > MAX_DEPTH)
    return bad(r, "subgraphs are nested deeper than %d", MAX_DEPTH), NULL;
  enum { G_NAME, G_INPUTS, G_OUTPUTS, G_NODES, N_GRAPH_FIELDS };
  GVariant *v = g_variant_get_child_value(r->graphs, index), *f[N_GRAPH_FIELDS];
  for (int i = 0; i < N_GRAPH_FIELDS; i++)
    f[i] = g_variant_get_child_value(v, (gsize)i);
  gsize n_nodes = g_variant_n_children(f[G_NODES]);
  const char *name = NULL;
  int *input_pos = NULL;
  ts_graph *g = NULL;
  if (n_nodes > INT_MAX)
    bad(r, "%zu nodes, at most %d", (size_t)n_nodes, INT_MAX);
  else if (read_string(r, f[G_NAME], "the graph's name", &name) &&
           (input_pos = read_inputs(r, f[G_INPUTS], (int)n_nodes))) {
    g = ts__graph_new(name, parent);
    if (read_nodes(r, g, f[G_NODES], input_pos, index, depth) &&
        read_origins(r, g, f[G_NODES]) && read_graph_outputs(r, g, f[G_OUTPUTS])) {
      gsize count;
      const int *ids = g_variant_get_fixed_array(f[G_INPUTS], &count, sizeof *ids);
      for (gsize k = 0; k < count; k++)
        ts__graph_add_input(g, ts__graph_node(g, ids[k]));
    } else {
      g_clear_pointer(&g, ts__graph_free);
    }
  }
  g_free(input_pos);
  for (int i = 0; i < N_GRAPH_FIELDS; i++)
    g_variant_unref(f[i]);
  g_variant_unref(v);
  return g;
}

/* The header: magic, version, and the body's type for that version; sets
 * r->graphs.  top is in normal form. */
static bool read_header(reader *r, GVariant *top)
{
  const char *magic;
  guint32 version;
  GVariant *body;
  g_variant_get(top, "(&suv)", &magic, &version, &body);
  bool ok = false;
  if (strcmp(magic, MAGIC) != 0)
    bad(r, "not a Tracescope graph (magic '%.32s', expected '%s')", magic, MAGIC);
  else if (version != VERSION)
    bad(r, "format version %u; this reader reads version %u only", version, VERSION);
  else if (!g_variant_is_of_type(body, G_VARIANT_TYPE(BODY_TYPE)))
    bad(r, "the body has type %.64s, not that of version %u", g_variant_get_type_string(body),
        VERSION);
  else if (g_variant_n_children(body) == 0)
    bad(r, "the body holds no graph");
  else
    ok = true;
  if (ok)
    r->graphs = body;
  else
    g_variant_unref(body);
  return ok;
}

/* The top graph (graph 0); every other graph must be some node's subgraph. */
static ts_graph *read_body(reader *r)
{
  r->n_graphs = g_variant_n_children(r->graphs);
  r->claimed = g_new0(bool, r->n_graphs);
  r->claimed[0] = true;
  ts_graph *g = read_graph(r, 0, NULL, 0);
  for (gsize k = 1; g && k < r->n_graphs; k++)
    if (!r->claimed[k]) {
      bad(r, "graph %zu is no node's subgraph", (size_t)k);
      g_clear_pointer(&g, ts__graph_free);
    }
  g_free(r->claimed);
  return g;
}

ts_graph *ts_graph_deserialize(const void *data, size_t size)
{
  TS_CHECK_ARG(data != NULL || size == 0, NULL);
  reader r = { .where = g_string_new(NULL) };
  /* copied only if misaligned for the type; the caller's data outlives top */
  GBytes *bytes = g_bytes_new_static(data, size);
  GVariant *top =
    g_variant_ref_sink(g_variant_new_from_bytes(G_VARIANT_TYPE(HEADER_TYPE), bytes, FALSE));
  g_bytes_unref(bytes);
  ts_graph *g = NULL;
  if (!g_variant_is_normal_form(top)) {
    bad(&r, "not a GVariant of type %s in normal form (truncated or corrupt)", HEADER_TYPE);
  } else {
    top = in_format_order(top);
    if (read_header(&r, top)) {
      g = read_body(&r);
      g_variant_unref(r.graphs);
    }
  }
  g_variant_unref(top);
  g_string_free(r.where, TRUE);
  return g;
}
