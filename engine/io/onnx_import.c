/* onnx_import.c — an ONNX model as a graph of the engine's public ops.
 *
 * Loading checks the whole model before anything runs: the opset, every
 * input's type, every node's op (onnx_ops.c has a row per op we map), its
 * input and output counts and attribute names, and that every value a node
 * reads was made earlier (so a cyclic or unsorted graph is an error, never
 * a loop).  Running builds the graph op by op: eagerly that computes it,
 * while tracing (ts_onnx_model_function) it records the concrete function.
 * Values that ops read as host numbers (Reshape's shape, Slice's starts)
 * are known while tracing when they come from initializers and constants:
 * such nodes are computed once more on the host, in an init scope. */
#include "onnx-private.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Functions made by ts_onnx_model_function: ts_fn has no user data, so
 * each takes one of these slots, whose trampoline finds its model. */
#define N_SLOTS 64

struct ts_onnx_model {
  onnx_file file;
  char *name;
  int n_inputs;
  const Onnx__ValueInfoProto **inputs; /* graph inputs that are not initializers */
  ts_spec *specs;
  int n_inits;
  ts_tensor **inits;                    /* references the model owns */
  GHashTable *rows;                     /* Onnx__NodeProto * -> its onnx_op_row, subgraphs' too */
  ts_function **functions;              /* per output, made on request */
  int *slots;                           /* per output: its slot, -1 */
};

/* ---- errors ------------------------------------------------------------------ */

void onnx_node_fail(const onnx_node_ctx *c, ts_error_code code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *detail = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  ts_error_set(code, (ts_loc){ 0 }, c->node->op_type, "node '%s' (opset %" PRId64 ") of %s: %s",
               c->name, c->opset, c->file->path, detail);
  g_free(detail);
}

/* An engine op failed inside a node's mapping: the error names the node.
 * A mapping that stopped without one found no tensor for an input it
 * needs: one the model left out (an empty name, which marks an optional
 * input absent). */
static void name_failed_node(const onnx_node_ctx *c)
{
  const ts_error *e = ts_error_peek();
  if (!e) {
    size_t i = 0;
    while (i < c->node->n_input && c->node->input[i] && *c->node->input[i])
      i++;
    if (i < c->node->n_input)
      onnx_node_fail(c, TS_ERR_FORMAT, "input %zu is left out (an empty name), but %s needs it", i,
                     c->node->op_type);
    else
      onnx_node_fail(c, TS_ERR_INTERNAL, "the mapping of %s failed without saying why", c->node->op_type);
    return;
  }
  if (e->op && strcmp(e->op, c->node->op_type) == 0)
    return; /* the row's own (onnx_node_fail) */
  ts_error *taken = ts_error_take();
  const char *op = taken->op ? taken->op : "";
  onnx_node_fail(c, taken->code, "%s%s%s", op, *op ? ": " : "", taken->detail ? taken->detail : taken->message);
  ts_error_free(taken);
}

static const char *node_name(const Onnx__NodeProto *n, int i, char *buf, size_t size)
{
  if (n->name && *n->name)
    return n->name;
  snprintf(buf, size, "#%d", i);
  return buf;
}

/* ---- checking a model --------------------------------------------------------- */

/* The spec of a graph input: its tensor type's dtype and dims (-1 where
 * symbolic or missing).  false + error. */
static bool input_spec(const onnx_file *f, const Onnx__ValueInfoProto *v, ts_spec *out)
{
  const Onnx__TypeProto *type = v->type;
  const char *what;
  int32_t data_type;
  bool is_variant = type && (type->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ||
                             type->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE);
  if (is_variant && onnx_type_supported(type, &what, &data_type)) {
    *out = (ts_spec){ TS_VARIANT, TS_SCALAR_SHAPE }; /* a TensorList or an optional */
    return true;
  }
  if (!type || type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !type->tensor_type ||
      !type->tensor_type->has_elem_type) {
    ts_error_set(TS_ERR_UNIMPLEMENTED, (ts_loc){ 0 }, NULL,
                 "%s: input '%s' is not a tensor, a sequence of tensors or an optional of either "
                 "(maps, sparse tensors and nested sequences are not supported)",
                 f->path, v->name);
    return false;
  }
  const Onnx__TypeProto__Tensor *tt = type->tensor_type;
  if (!onnx_dtype(tt->elem_type, &out->dtype)) {
    ts_error_set(TS_ERR_UNIMPLEMENTED, (ts_loc){ 0 }, NULL, "%s: input '%s': dtype %s is not one the engine has",
                 f->path, v->name, onnx_dtype_name(tt->elem_type));
    return false;
  }
  const Onnx__TensorShapeProto *shape = tt->shape;
  size_t rank = shape ? shape->n_dim : 0;
  if (!shape) {
    ts_error_set(TS_ERR_UNIMPLEMENTED, (ts_loc){ 0 }, NULL, "%s: input '%s' has no shape (unknown rank)",
                 f->path, v->name);
    return false;
  }
  if (rank > TS_MAX_RANK) {
    ts_error_set(TS_ERR_UNIMPLEMENTED, (ts_loc){ 0 }, NULL, "%s: input '%s': rank %zu is over the engine's %d",
                 f->path, v->name, rank, TS_MAX_RANK);
    return false;
  }
  out->shape.rank = (int)rank;
  for (size_t d = 0; d < rank; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = shape->dim[d];
    bool known = dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    if (known && dim->dim_value < 0) {
      ts_error_set(TS_ERR_FORMAT, (ts_loc){ 0 }, NULL, "%s: input '%s': dim %zu is negative", f->path,
                   v->name, d);
      return false;
    }
    out->shape.dim[d] = known ? dim->dim_value : -1;
  }
  return true;
}

/* The names visible in a graph: its own, then its enclosing graphs' (a
 * subgraph reads outer values by name). */
typedef struct name_scope {
  GHashTable *made;
  const struct name_scope *outer;
} name_scope;

static bool name_visible(const name_scope *s, const char *name)
{
  for (; s; s = s->outer)
    if (g_hash_table_contains(s->made, name))
      return true;
  return false;
}

static const onnx_op_row *check_node(const onnx_file *f, const Onnx__NodeProto *n, int i);

/* Every name a node of g reads was made before it (g's inputs and
 * initializers, earlier nodes, or the enclosing graphs) and no name is
 * made twice in g; every node has a row (check_node), and the subgraphs
 * of its attributes check out the same way, `depth` graphs down. */
static bool check_graph(ts_onnx_model *m, const Onnx__GraphProto *g, const name_scope *outer, int depth)
{
  const onnx_file *f = &m->file;
  if (depth > TS_ONNX_MAX_DEPTH) {
    ts_error_set(TS_ERR_FORMAT, (ts_loc){ 0 }, NULL, "%s: subgraphs nest deeper than %d", f->path,
                 TS_ONNX_MAX_DEPTH);
    return false;
  }
  name_scope scope = { g_hash_table_new(g_str_hash, g_str_equal), outer };
  bool ok = true;
  for (size_t i = 0; i < g->n_input && ok; i++) {
    if (!(ok = g->input[i]->name && *g->input[i]->name))
      ts_error_set(TS_ERR_FORMAT, (ts_loc){ 0 }, NULL, "%s: graph input %zu has no name", f->path, i);
    else
      g_hash_table_add(scope.made, g->input[i]->name);
  }
  for (size_t i = 0; i < g->n_initializer && ok; i++) {
    if (!(ok = g->initializer[i]->name && *g->initializer[i]->name))
      ts_error_set(TS_ERR_FORMAT, (ts_loc){ 0 }, NULL, "%s: initializer %zu has no name", f->path, i);
    else
      g_hash_table_add(scope.made, g->initializer[i]->name);
  }
  char buf[32];
  for (size_t i = 0; i < g->n_node && ok; i++) {
    const Onnx__NodeProto *n = g->node[i];
    for (size_t k = 0; k < n->n_input && ok; k++)
      if (*n->input[k] && !name_visible(&scope, n->input[k])) {
        ts_error_set(TS_ERR_FORMAT, (ts_loc){ 0 }, NULL,
                     "%s: node '%s' (%s) reads '%s', which no input, initializer or earlier node "
                     "makes (the graph is cyclic, unsorted or incomplete)",
                     f->path, node_name(n, (int)i, buf, sizeof buf), n->op_type, n->input[k]);
        ok = false;
      }
    const onnx_op_row *row = ok ? check_node(f, n, (int)i) : NULL;
    ok = row != NULL;
    if (ok)
      g_hash_table_insert(m->rows, (gpointer)n, (gpointer)row);
    for (size_t a = 0; a < n->n_attribute && ok; a++)
      if (n->attribute[a]->g)
        ok = check_graph(m, n->attribute[a]->g, &scope, depth + 1);
    for (size_t k = 0; k < n->n_output && ok; k++)
      if (*n->output[k] && !g_hash_table_add(scope.made, n->output[k])) {
        ts_error_set(TS_ERR_FORMAT, (ts_loc){ 0 }, NULL, "%s: node '%s' (%s) makes '%s' a second time",
                     f->path, node_name(n, (int)i, buf, sizeof buf), n->op_type, n->output[k]);
        ok = false;
      }
  }
  for (size_t i = 0; i < g->n_output && ok; i++)
    if (!g->output[i] || !g->output[i]->name || !name_visible(&scope, g->output[i]->name)) {
      ts_error_set(TS_ERR_FORMAT, (ts_loc){ 0 }, NULL, "%s: graph output %zu '%s' is made by nothing",
                   f->path, i, g->output[i] && g->output[i]->name ? g->output[i]->name : "");
      ok = false;
    }
  g_hash_table_destroy(scope.made);
  return ok;
}

/* The node's row, its counts and its attribute names; NULL + error. */
static const onnx_op_row *check_node(const onnx_file *f, const Onnx__NodeProto *n, int i)
{
  char buf[32];
  onnx_node_ctx c = { .file = f, .node = n, .name = node_name(n, i, buf, sizeof buf),
                      .opset = onnx_domain_opset(f, n->domain) };
  if (!n->op_type) {
    ts_error_set(TS_ERR_FORMAT, (ts_loc){ 0 }, NULL, "%s: node '%s' has no op_type", f->path, c.name);
    return NULL;
  }
  const onnx_op_row *row = onnx_op_lookup(n->domain, n->op_type);
  if (!row) {
    onnx_node_fail(&c, TS_ERR_UNIMPLEMENTED, "the importer has no mapping for op %s%s%s", n->domain && *n->domain ? n->domain : "",
                   n->domain && *n->domain ? "." : "", n->op_type);
    return NULL;
  }
  if (c.opset == 0) {
    onnx_node_fail(&c, TS_ERR_FORMAT, "the model imports no opset of the domain '%s'",
                   n->domain && *n->domain ? n->domain : "ai.onnx");
    return NULL;
  }
  int since = row->since ? row->since : ONNX_ROW_MIN_OPSET;
  if (since > c.opset) {
    onnx_node_fail(&c, TS_ERR_UNIMPLEMENTED, "the importer maps %s from opset %d on", n->op_type, since);
    return NULL;
  }
  if ((int)n->n_input < row->min_in || (row->max_in >= 0 && (int)n->n_input > row->max_in)) {
    onnx_node_fail(&c, TS_ERR_FORMAT, "%zu inputs; %s takes %d to %d", n->n_input, n->op_type,
                   row->min_in, row->max_in);
    return NULL;
  }
  bool too_many = row->max_out >= 0 && (int)n->n_output > row->max_out;
  if ((int)n->n_output < row->min_out || too_many) {
    onnx_node_fail(&c, too_many ? TS_ERR_UNIMPLEMENTED : TS_ERR_FORMAT,
                   "%zu outputs; the importer computes %d to %d", n->n_output, row->min_out, row->max_out);
    return NULL;
  }
  for (size_t a = 0; a < n->n_attribute; a++) {
    const Onnx__AttributeProto *attr = n->attribute[a];
    if (!attr || !attr->name) {
      onnx_node_fail(&c, TS_ERR_FORMAT, "attribute %zu has no name", a);
      return NULL;
    }
    char *key = g_strdup_printf(",%s,", attr->name);
    bool known = strstr(row->attrs, key) != NULL;
    g_free(key);
    if (!known) {
      onnx_node_fail(&c, TS_ERR_UNIMPLEMENTED, "attribute '%s' is not supported", attr->name);
      return NULL;
    }
    if (attr->ref_attr_name && *attr->ref_attr_name) {
      onnx_node_fail(&c, TS_ERR_FORMAT, "attribute '%s' refers to a function's attribute outside a function",
                     attr->name);
      return NULL;
    }
  }
  return row;
}

static bool check_model(ts_onnx_model *m)
{
  const onnx_file *f = &m->file;
  /* opset 0: the model imports none of the default domain (it may use only
   * others, as the training ops do); a node of it is refused by check_node */
  if (f->opset != 0 && (f->opset < ONNX_MIN_OPSET || f->opset > ONNX_MAX_OPSET)) {
    ts_error_set(TS_ERR_UNIMPLEMENTED, (ts_loc){ 0 }, NULL,
                 "%s: opset %" PRId64 " of the default domain: the importer reads opsets %d to %d",
                 f->path, f->opset, ONNX_MIN_OPSET, ONNX_MAX_OPSET);
    return false;
  }
  const Onnx__GraphProto *g = f->model->graph;
  if (!check_graph(m, g, NULL, 0))
    return false;
  GHashTable *inits = g_hash_table_new(g_str_hash, g_str_equal);
  for (size_t i = 0; i < g->n_initializer; i++)
    g_hash_table_add(inits, g->initializer[i]->name);
  m->inputs = g_new0(const Onnx__ValueInfoProto *, g->n_input + 1);
  m->specs = g_new0(ts_spec, g->n_input + 1);
  bool ok = true;
  for (size_t i = 0; i < g->n_input && ok; i++) {
    if (g_hash_table_contains(inits, g->input[i]->name))
      continue; /* before IR 4 initializers are listed as inputs too */
    m->inputs[m->n_inputs] = g->input[i];
    ok = input_spec(f, g->input[i], &m->specs[m->n_inputs]);
    m->n_inputs++;
  }
  g_hash_table_destroy(inits);
  if (!ok)
    return false;
  /* initializers: decoded once, as constants every call shares */
  m->inits = g_new0(ts_tensor *, g->n_initializer + 1);
  ts_scope *scope = ts_scope_begin();
  for (size_t i = 0; i < g->n_initializer && ok; i++) {
    char *what = g_strdup_printf("initializer '%s'", g->initializer[i]->name ? g->initializer[i]->name : "");
    ts_tensor *t = onnx_tensor_decode(f, g->initializer[i], what);
    g_free(what);
    if (t)
      m->inits[m->n_inits++] = ts_tensor_ref(t);
    ok = t != NULL;
  }
  ts_scope_end(scope);
  return ok;
}

bool ts_onnx_available(void)
{
  return true;
}

ts_onnx_model *ts_onnx_load(const char *path)
{
  ts_onnx_model *m = g_new0(ts_onnx_model, 1);
  if (!onnx_file_read(path, &m->file)) {
    g_free(m);
    return NULL;
  }
  const Onnx__GraphProto *g = m->file.model->graph;
  if (g->name && *g->name)
    m->name = g_strdup(g->name);
  else {
    char *base = g_path_get_basename(path);
    char *dot = strrchr(base, '.');
    if (dot && dot != base)
      *dot = '\0';
    m->name = base;
  }
  m->functions = g_new0(ts_function *, g->n_output + 1);
  m->rows = g_hash_table_new(g_direct_hash, g_direct_equal);
  m->slots = g_new(int, g->n_output + 1);
  for (size_t i = 0; i < g->n_output; i++)
    m->slots[i] = -1;
  if (!check_model(m)) {
    ts_onnx_model_free(m);
    return NULL;
  }
  return m;
}

/* ---- the trampolines ------------------------------------------------------------ */

static GMutex slot_lock;
static struct {
  ts_onnx_model *model;
  int output;
} slots[N_SLOTS];

static void release_slots(ts_onnx_model *m)
{
  g_mutex_lock(&slot_lock);
  for (int i = 0; i < N_SLOTS; i++)
    if (slots[i].model == m)
      slots[i].model = NULL;
  g_mutex_unlock(&slot_lock);
}

void ts_onnx_model_free(ts_onnx_model *m)
{
  if (!m)
    return;
  release_slots(m);
  int n_out = m->file.model ? (int)m->file.model->graph->n_output : 0;
  for (int i = 0; i < n_out; i++)
    ts_function_free(m->functions[i]);
  for (int i = 0; i < m->n_inits; i++)
    ts_tensor_unref(m->inits[i]);
  g_free(m->inits);
  g_free(m->functions);
  g_free(m->slots);
  if (m->rows)
    g_hash_table_destroy(m->rows);
  g_free(m->inputs);
  g_free(m->specs);
  g_free(m->name);
  onnx_file_clear(&m->file);
  g_free(m);
}

/* ---- building the graph ------------------------------------------------------------ */

static void push_scopes(const char *name, int *n)
{
  /* "/encoder/layer.0/Add": scopes encoder and layer.0; the last part is the node */
  *n = 0;
  if (!name || !strchr(name, '/'))
    return;
  char **parts = g_strsplit(name, "/", -1);
  int count = (int)g_strv_length(parts);
  for (int i = 0; i < count - 1; i++)
    if (*parts[i]) {
      ts__name_scope_reenter(parts[i]); /* one module's nodes share its scope */
      (*n)++;
    }
  g_strfreev(parts);
}

static void pop_scopes(int n)
{
  while (n-- > 0)
    ts_name_scope_end();
}

static ts_tensor *host_of(ts_tensor *t)
{
  return t && ts_tensor_data(t) ? t : NULL;
}

/* The values of a graph being built, and of the graphs around it. */
struct onnx_values {
  GHashTable *map;                /* name -> onnx_value (g_free) */
  const struct onnx_values *outer;
};

static const onnx_value *value_lookup(const onnx_values *vals, const char *name)
{
  for (; vals; vals = vals->outer) {
    const onnx_value *v = g_hash_table_lookup(vals->map, name);
    if (v)
      return v;
  }
  return NULL;
}

static void value_bind(onnx_values *vals, const char *name, ts_tensor *t, ts_tensor *host,
                       const Onnx__TypeProto *type)
{
  onnx_value *v = g_new(onnx_value, 1);
  *v = (onnx_value){ t, host, type };
  g_hash_table_insert(vals->map, (char *)name, v);
}

/* The type g states for its value `name` (an output or value_info); NULL. */
static const Onnx__TypeProto *declared_type(const Onnx__GraphProto *g, const char *name)
{
  for (size_t i = 0; i < g->n_output; i++)
    if (g->output[i]->name && strcmp(g->output[i]->name, name) == 0 && g->output[i]->type)
      return g->output[i]->type;
  for (size_t i = 0; i < g->n_value_info; i++)
    if (g->value_info[i]->name && strcmp(g->value_info[i]->name, name) == 0 && g->value_info[i]->type)
      return g->value_info[i]->type;
  return NULL;
}

static const Onnx__GraphProto *graph_attr(const Onnx__NodeProto *n, const char *name)
{
  for (size_t i = 0; i < n->n_attribute; i++)
    if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0)
      return n->attribute[i]->g;
  return NULL;
}

/* The type of a sequence or optional output k of node n that the graph
 * does not state: as its input's through the ops that keep it, an
 * optional's value's, or what the subgraph says of its output. */
static const Onnx__TypeProto *derived_type(const Onnx__NodeProto *n, size_t k, const onnx_value *in)
{
  const char *op = n->op_type;
  if (!onnx_is_default_domain(n->domain))
    return NULL;
  if (strcmp(op, "Identity") == 0 || strcmp(op, "SequenceInsert") == 0 || strcmp(op, "SequenceErase") == 0)
    return n->n_input ? in[0].type : NULL;
  if (strcmp(op, "OptionalGetElement") == 0) {
    const Onnx__TypeProto *t = n->n_input ? in[0].type : NULL;
    return t && t->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && t->optional_type
             ? t->optional_type->elem_type : NULL;
  }
  const Onnx__GraphProto *g = strcmp(op, "If") == 0 ? graph_attr(n, "then_branch")
                              : strcmp(op, "Loop") == 0 ? graph_attr(n, "body") : NULL;
  size_t at = strcmp(op, "Loop") == 0 ? k + 1 : k; /* a Loop body's output 0 is its condition */
  return g && at < g->n_output ? g->output[at]->type : NULL;
}

/* Builds g's nodes on the values bound in vals (and those around it);
 * outputs[0 .. g->n_output-1] get g's outputs. */
/* Adds every name node n reads to names: its inputs, and those its
 * subgraphs' nodes read (from around them too). */
static void add_read_names(const Onnx__NodeProto *n, GHashTable *names)
{
  for (size_t k = 0; k < n->n_input; k++)
    if (*n->input[k])
      g_hash_table_add(names, n->input[k]);
  for (size_t a = 0; a < n->n_attribute; a++)
    for (size_t i = 0; n->attribute[a]->g && i < n->attribute[a]->g->n_node; i++)
      add_read_names(n->attribute[a]->g->node[i], names);
}

/* The nodes of g that its output `output` needs (true), walking back from
 * the last (nodes come in dataflow order): one whose output is needed
 * needs its inputs and the names its subgraphs read from around them. */
static bool *nodes_needed(const Onnx__GraphProto *g, const char *output)
{
  GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal); /* borrowed from g */
  g_hash_table_add(names, (char *)output);
  bool *need = g_new0(bool, g->n_node + 1);
  for (size_t i = g->n_node; i-- > 0;) {
    const Onnx__NodeProto *n = g->node[i];
    for (size_t k = 0; k < n->n_output && !need[i]; k++)
      need[i] = *n->output[k] && g_hash_table_contains(names, n->output[k]);
    if (need[i])
      add_read_names(n, names);
  }
  g_hash_table_unref(names);
  return need;
}

/* Builds g's nodes (those need says, all without it) and gives its
 * outputs (NULL: one not built). */
static bool build_nodes(ts_onnx_model *m, const Onnx__GraphProto *g, onnx_values *vals, const bool *need,
                        ts_tensor **outputs)
{
  const onnx_file *f = &m->file;
  bool ok = true;
  char buf[32];
  for (size_t i = 0; i < g->n_node && ok; i++) {
    const Onnx__NodeProto *n = g->node[i];
    if (need && !need[i])
      continue;
    const onnx_op_row *row = g_hash_table_lookup(m->rows, n);
    onnx_value *in = g_new0(onnx_value, n->n_input + 1);
    ts_tensor **out = g_new0(ts_tensor *, n->n_output + 1);
    ts_tensor **host = g_new0(ts_tensor *, n->n_output + 1);
    bool all_host = true;
    for (size_t k = 0; k < n->n_input; k++) {
      const onnx_value *v = *n->input[k] ? value_lookup(vals, n->input[k]) : NULL;
      in[k] = v ? *v : (onnx_value){ 0 };
      all_host = all_host && (!v || v->host);
    }
    onnx_node_ctx c = { f, n, node_name(n, (int)i, buf, sizeof buf), onnx_domain_opset(f, n->domain), (int)n->n_input, in,
                        (int)n->n_output, out, { f->path, NULL, (int)i + 1 }, m, vals };
    c.loc.func = c.name;
    int n_scopes;
    push_scopes(n->name, &n_scopes);
    ok = onnx_op_build(row, &c) && !ts_failed();
    pop_scopes(n_scopes);
    if (!ok)
      name_failed_node(&c);
    for (size_t k = 0; k < n->n_output && ok; k++)
      if (*n->output[k] && !out[k]) {
        onnx_node_fail(&c, TS_ERR_INTERNAL, "output %zu was not computed", k);
        ok = false;
      }
    bool need_host = false;
    for (size_t k = 0; k < n->n_output && ok; k++)
      need_host |= !(host[k] = host_of(out[k]));
    if (ok && need_host && !all_host && ts_tracing() && n->n_output == 1) {
      ts_init_scope_begin();
      host[0] = onnx_shape_host(&c); /* Shape and Size of a known shape */
      ts_init_scope_end();
    } else if (ok && need_host && all_host && row->foldable && ts_tracing()) {
      /* the same node on the host values, so that later shape inputs are known */
      for (size_t k = 0; k < n->n_input; k++)
        in[k].t = in[k].host;
      onnx_node_ctx hc = c;
      hc.out = host;
      ts_init_scope_begin();
      ok = onnx_op_build(row, &hc);
      ts_init_scope_end();
    }
    for (size_t k = 0; k < n->n_output && ok; k++) {
      if (!*n->output[k])
        continue;
      const Onnx__TypeProto *type = NULL;
      if (ts_tensor_dtype(out[k]) == TS_VARIANT && !(type = declared_type(g, n->output[k])))
        type = derived_type(n, k, in);
      value_bind(vals, n->output[k], out[k], host[k], type);
    }
    g_free(in);
    g_free(out);
    g_free(host);
  }
  for (size_t i = 0; i < g->n_output && ok; i++) {
    const onnx_value *v = value_lookup(vals, g->output[i]->name);
    outputs[i] = v ? v->t : NULL;
  }
  return ok && !ts_failed();
}

/* Builds the model's ops on inputs: those of output `only` (its function's
 * graph holds them alone), or every one (-1); outputs[0 .. n_output-1]. */
static bool build(ts_onnx_model *m, ts_tensor *const *inputs, int only, ts_tensor **outputs)
{
  const Onnx__GraphProto *g = m->file.model->graph;
  onnx_values vals = { g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free), NULL };
  for (int i = 0; i < m->n_inputs; i++)
    value_bind(&vals, m->inputs[i]->name, inputs[i], host_of(inputs[i]), m->inputs[i]->type);
  for (int i = 0; i < m->n_inits; i++)
    value_bind(&vals, g->initializer[i]->name, m->inits[i], m->inits[i], NULL);
  bool *need = only >= 0 ? nodes_needed(g, g->output[only]->name) : NULL;
  bool ok = build_nodes(m, g, &vals, need, outputs);
  g_free(need);
  g_hash_table_destroy(vals.map);
  return ok;
}

bool onnx_build_subgraph(const onnx_node_ctx *c, const Onnx__GraphProto *g, ts_tensor *const *inputs,
                         int n_inputs, ts_tensor **outputs)
{
  if ((int)g->n_input != n_inputs) {
    onnx_node_fail(c, TS_ERR_FORMAT, "subgraph '%s' has %zu inputs, the node gives it %d",
                   g->name ? g->name : "", g->n_input, n_inputs);
    return false;
  }
  onnx_values vals = { g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free), c->values };
  for (int i = 0; i < n_inputs; i++)
    value_bind(&vals, g->input[i]->name, inputs[i], host_of(inputs[i]), g->input[i]->type);
  bool ok = true;
  for (size_t i = 0; i < g->n_initializer && ok; i++) {
    char *what = g_strdup_printf("initializer '%s' of subgraph '%s'", g->initializer[i]->name,
                                 g->name ? g->name : "");
    ts_tensor *t = onnx_tensor_decode(c->file, g->initializer[i], what);
    g_free(what);
    if ((ok = t != NULL))
      value_bind(&vals, g->initializer[i]->name, t, t, NULL);
  }
  ok = ok && build_nodes(c->model, g, &vals, NULL, outputs);
  g_hash_table_destroy(vals.map);
  return ok;
}

/* ---- running it -------------------------------------------------------------------- */

static bool check_inputs(const ts_onnx_model *m, ts_tensor *const *inputs, int n)
{
  if (n != m->n_inputs) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL, "%s: the model takes %d inputs, %d given",
                 m->file.path, m->n_inputs, n);
    return false;
  }
  for (int i = 0; i < n; i++) {
    const ts_spec *s = &m->specs[i];
    ts_shape shape = inputs[i] ? ts_tensor_shape(inputs[i]) : (ts_shape){ 0 };
    bool fits = inputs[i] && ts_tensor_dtype(inputs[i]) == s->dtype && shape.rank == s->shape.rank;
    for (int d = 0; fits && d < shape.rank; d++)
      fits = s->shape.dim[d] < 0 || s->shape.dim[d] == shape.dim[d];
    if (!fits) {
      char *want = ts_shape_dtype_string(s->dtype, s->shape);
      char *got = inputs[i] ? ts_shape_dtype_string(ts_tensor_dtype(inputs[i]), shape) : g_strdup("nothing");
      ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL, "%s: input %d '%s' must be %s, got %s",
                   m->file.path, i, m->inputs[i]->name, want, got);
      free(want);
      free(got);
      return false;
    }
  }
  return true;
}

bool ts_onnx_model_run(ts_onnx_model *m, ts_tensor *const *inputs, int n_inputs, ts_tensor **outputs)
{
  if (!check_inputs(m, inputs, n_inputs))
    return false;
  int n_out = ts_onnx_model_n_outputs(m);
  ts_tensor **out = g_new0(ts_tensor *, n_out + 1);
  ts_scope *scope = ts_scope_begin();
  bool ok = build(m, inputs, -1, out);
  for (int i = 0; i < n_out && ok; i++)
    ts_tensor_ref(out[i]);
  ts_scope_end(scope);
  for (int i = 0; i < n_out && ok; i++) {
    /* hand each output to the caller's scope */
    outputs[i] = ts_identity_at((ts_loc){ 0 }, out[i]);
    ts_tensor_unref(out[i]);
  }
  g_free(out);
  return ok && !ts_failed();
}

static ts_tensor *slot_call(int slot, ts_call *call)
{
  g_mutex_lock(&slot_lock);
  ts_onnx_model *m = slots[slot].model;
  int output = slots[slot].output;
  g_mutex_unlock(&slot_lock);
  if (!m) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL, "ONNX model function called after its model was freed");
    return NULL;
  }
  int n = ts_call_n_args(call);
  ts_tensor **in = g_new0(ts_tensor *, n + 1);
  ts_tensor **out = g_new0(ts_tensor *, ts_onnx_model_n_outputs(m) + 1);
  for (int i = 0; i < n; i++)
    in[i] = ts_arg_at((ts_loc){ 0 }, call, i);
  ts_tensor *ret = !ts_failed() && check_inputs(m, in, n) && build(m, in, output, out) ? out[output] : NULL;
  g_free(in);
  g_free(out);
  return ret;
}

#define SLOT_FN(i) \
  static ts_tensor *slot_##i(ts_call *call) { return slot_call(i, call); }
#define SLOTS8(X, a) X(a##0) X(a##1) X(a##2) X(a##3) X(a##4) X(a##5) X(a##6) X(a##7)
SLOTS8(SLOT_FN, 0) SLOTS8(SLOT_FN, 1) SLOTS8(SLOT_FN, 2) SLOTS8(SLOT_FN, 3)
SLOTS8(SLOT_FN, 4) SLOTS8(SLOT_FN, 5) SLOTS8(SLOT_FN, 6) SLOTS8(SLOT_FN, 7)
#define SLOT_REF(i) slot_##i,
static const ts_fn SLOT_FNS[N_SLOTS] = {
  SLOTS8(SLOT_REF, 0) SLOTS8(SLOT_REF, 1) SLOTS8(SLOT_REF, 2) SLOTS8(SLOT_REF, 3)
  SLOTS8(SLOT_REF, 4) SLOTS8(SLOT_REF, 5) SLOTS8(SLOT_REF, 6) SLOTS8(SLOT_REF, 7)
};

/* s as a C identifier (what module exports and parameter lists take). */
static char *identifier(const char *s)
{
  char *id = g_strdup_printf("%s%s", g_ascii_isdigit(*s) || !*s ? "_" : "", s);
  g_strcanon(id, G_CSET_a_2_z G_CSET_A_2_Z G_CSET_DIGITS "_", '_');
  return id;
}

/* "model" for a model of one output, "model_out" for each of several. */
static char *function_name(const ts_onnx_model *m, int output)
{
  char *raw = ts_onnx_model_n_outputs(m) > 1
                ? g_strdup_printf("%s_%s", m->name, ts_onnx_model_output_name(m, output))
                : g_strdup(m->name);
  char *id = identifier(raw);
  g_free(raw);
  return id;
}

/* "x, y": the inputs' names as identifiers. */
static char *param_list(const ts_onnx_model *m)
{
  GString *params = g_string_new(NULL);
  for (int i = 0; i < m->n_inputs; i++) {
    char *p = identifier(m->inputs[i]->name);
    g_string_append_printf(params, "%s%s", i ? ", " : "", p);
    g_free(p);
  }
  return g_string_free(params, FALSE);
}

/* The slot whose trampoline runs output of m; -1 + error when all are taken. */
static int slot_for(ts_onnx_model *m, int output)
{
  if (m->slots[output] >= 0)
    return m->slots[output];
  g_mutex_lock(&slot_lock);
  for (int i = 0; i < N_SLOTS && m->slots[output] < 0; i++)
    if (!slots[i].model) {
      slots[i].model = m;
      slots[i].output = output;
      m->slots[output] = i;
    }
  g_mutex_unlock(&slot_lock);
  if (m->slots[output] < 0)
    ts_error_set(TS_ERR_OUT_OF_RANGE, (ts_loc){ 0 }, NULL,
                 "%s: more than %d ONNX model functions at once (free a model first)", m->file.path, N_SLOTS);
  return m->slots[output];
}

static bool check_output_index(const ts_onnx_model *m, int output)
{
  if (output >= 0 && output < ts_onnx_model_n_outputs(m))
    return true;
  ts_error_set(TS_ERR_OUT_OF_RANGE, (ts_loc){ 0 }, NULL, "%s: output %d of %d", m->file.path, output,
               ts_onnx_model_n_outputs(m));
  return false;
}

ts_function *ts_onnx_model_function(ts_onnx_model *m, int output)
{
  if (!check_output_index(m, output))
    return NULL;
  if (m->functions[output])
    return m->functions[output];
  int slot = slot_for(m, output);
  if (slot < 0)
    return NULL;
  char *name = function_name(m, output), *params = param_list(m);
  ts_function *fn = ts_function_new(name, SLOT_FNS[slot], params);
  g_free(name);
  g_free(params);
  if (fn && m->n_inputs > 0 && !ts_function_set_input_signature(fn, m->specs, m->n_inputs)) {
    ts_function_free(fn);
    fn = NULL;
  }
  m->functions[output] = fn;
  return fn;
}

ts_module *ts_onnx_model_module(ts_onnx_model *m)
{
  int n = ts_onnx_model_n_outputs(m);
  ts_export *exports = g_new0(ts_export, n + 1);
  char **specs = g_new0(char *, n + 1);
  /* example arguments: uniform values of each input's dtype and shape, unknown dims 1;
   * none where an input is a sequence or an optional (no argument spec makes one) */
  char **examples = g_new0(char *, m->n_inputs + 1);
  bool has_examples = true;
  for (int i = 0; i < m->n_inputs; i++)
    has_examples &= m->specs[i].dtype != TS_VARIANT;
  for (int i = 0; i < m->n_inputs && has_examples; i++) {
    ts_shape shape = m->specs[i].shape;
    for (int d = 0; d < shape.rank; d++)
      shape.dim[d] = shape.dim[d] < 0 ? 1 : shape.dim[d];
    char *type = ts_shape_dtype_string(m->specs[i].dtype, shape);
    examples[i] = g_strdup_printf("%s:uniform", type);
    free(type);
  }
  bool ok = true;
  char *params = param_list(m);
  for (int i = 0; i < n && ok; i++) {
    int slot = slot_for(m, i);
    ok = slot >= 0;
    char *name = function_name(m, i);
    specs[i] = g_strdup_printf("%s%s%s", name, *params ? ", " : "", params);
    g_free(name);
    exports[i] = (ts_export){ ok ? SLOT_FNS[slot] : NULL, specs[i], has_examples ? (const char *const *)examples : NULL };
  }
  char *title = g_strdup_printf("ONNX model %s (opset %" PRId64 ")", m->name, m->file.opset);
  ts_module_info info = { TS_ABI_VERSION, title, exports, n };
  ts_module *module = ok ? ts_module_new_static(&info, m->file.path) : NULL;
  g_free(title);
  g_free(params);
  g_strfreev(specs);
  g_strfreev(examples);
  g_free(exports);
  return module;
}

/* ---- what the model is ---------------------------------------------------------------- */

const char *ts_onnx_model_name(const ts_onnx_model *m) { return m->name; }
int64_t ts_onnx_model_opset(const ts_onnx_model *m) { return m->file.opset; }
int ts_onnx_model_n_inputs(const ts_onnx_model *m) { return m->n_inputs; }

const char *ts_onnx_model_input_name(const ts_onnx_model *m, int i)
{
  return i >= 0 && i < m->n_inputs ? m->inputs[i]->name : NULL;
}

ts_spec ts_onnx_model_input_spec(const ts_onnx_model *m, int i)
{
  return i >= 0 && i < m->n_inputs ? m->specs[i] : (ts_spec){ 0 };
}

int ts_onnx_model_n_outputs(const ts_onnx_model *m)
{
  return (int)m->file.model->graph->n_output;
}

const char *ts_onnx_model_output_name(const ts_onnx_model *m, int i)
{
  return i >= 0 && i < ts_onnx_model_n_outputs(m) ? m->file.model->graph->output[i]->name : NULL;
}

const Onnx__TypeProto *onnx_model_value_type(const ts_onnx_model *m, bool output, int i)
{
  const Onnx__ValueInfoProto *v = output ? m->file.model->graph->output[i] : m->inputs[i];
  return v ? v->type : NULL;
}

static void add_missing(GPtrArray *missing, const char *what)
{
  for (guint i = 0; i < missing->len; i++)
    if (strcmp(missing->pdata[i], what) == 0)
      return;
  g_ptr_array_add(missing, g_strdup(what));
}

static void type_missing(GPtrArray *missing, const Onnx__ValueInfoProto *v)
{
  const char *what;
  int32_t data_type;
  if (!v || !v->type)
    add_missing(missing, "non-tensor type");
  else if (!onnx_type_supported(v->type, &what, &data_type)) {
    char *item = data_type ? g_strdup_printf("%s %s", what, onnx_dtype_name(data_type)) : g_strdup(what);
    add_missing(missing, item);
    g_free(item);
  }
}

/* The ops of g's nodes, and of their subgraphs (nested no deeper than
 * onnx_file_read lets them), that have no row. */
static void nodes_missing(GPtrArray *missing, const Onnx__GraphProto *g)
{
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    if (n->op_type && !onnx_op_lookup(n->domain, n->op_type))
      add_missing(missing, n->op_type);
    for (size_t a = 0; a < n->n_attribute; a++)
      if (n->attribute[a] && n->attribute[a]->g)
        nodes_missing(missing, n->attribute[a]->g);
  }
}

char *ts_onnx_unsupported(const char *path)
{
  onnx_file f;
  if (!onnx_file_read(path, &f))
    return NULL;
  GPtrArray *missing = g_ptr_array_new_with_free_func(g_free);
  const Onnx__GraphProto *g = f.model->graph;
  if (f.opset != 0 && (f.opset < ONNX_MIN_OPSET || f.opset > ONNX_MAX_OPSET)) {
    char *what = g_strdup_printf("opset %" PRId64, f.opset);
    add_missing(missing, what);
    g_free(what);
  }
  for (size_t i = 0; i < g->n_input; i++)
    type_missing(missing, g->input[i]);
  for (size_t i = 0; i < g->n_output; i++)
    type_missing(missing, g->output[i]);
  for (size_t i = 0; i < g->n_initializer; i++) {
    ts_dtype dtype;
    if (!onnx_dtype(g->initializer[i]->data_type, &dtype)) {
      char *what = g_strdup_printf("dtype %s", onnx_dtype_name(g->initializer[i]->data_type));
      add_missing(missing, what);
      g_free(what);
    }
  }
  nodes_missing(missing, g);
  g_ptr_array_add(missing, NULL);
  char *out = g_strjoinv(",", (char **)missing->pdata);
  g_ptr_array_free(missing, TRUE);
  onnx_file_clear(&f);
  /* a malloc'd string, as the header promises */
  char *ret = strdup(out);
  g_free(out);
  return ret;
}
