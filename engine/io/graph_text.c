/* graph_text.c — a graph as text (one line per node, subgraphs indented
 * under their node) and as Graphviz DOT (name scopes and subgraphs as
 * clusters).  Walks graphs through the public accessors; only a
 * variable's name comes from the tensor's private layout. */
#include "engine-private.h"

#include <stdio.h>

#define SMALL_CONST 8 /* Consts with at most this many elements show their value */

/* The label of a node's subgraph i (the op table names them). */
static const char *subgraph_label(const ts_node *n, int i, char *buf, size_t size)
{
  const char *label = ts_op_subgraph_name(ts_node_op(n), i);
  if (label)
    return label;
  snprintf(buf, size, "subgraph %d", i);
  return buf;
}

static const char *file_basename(const char *path)
{
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static void append_info(GString *s, ts_dtype dtype, ts_shape shape)
{
  char buf[TS_INFO_STR];
  g_string_append(s, ts__info_str(buf, dtype, shape));
}

/* "MatMul:0", or "?" for a port that names no node of g. */
static void append_port(GString *s, const ts_graph *g, ts_port p)
{
  if (p.node < 0 || p.node >= ts_graph_n_nodes(g))
    g_string_append(s, "?");
  else
    g_string_append_printf(s, "%s:%d", ts_node_name(ts_graph_node(g, p.node)), p.index);
}

/* A Const's value when small ("4", "[1 2]"), or NULL.  Owned. */
static char *small_value(const ts_node *n)
{
  const ts_tensor *v = ts_node_value(n);
  if (ts_node_op(n) != TS_OP_CONST || !v || ts_tensor_dtype(v) == TS_VARIANT ||
      ts_tensor_size(v) > SMALL_CONST)
    return NULL;
  char *text = ts_tensor_format_values(v);
  /* rows print on lines of their own: "[[1 2]\n [3 4]]" -> "[[1 2] [3 4]]" */
  char *w = text;
  for (const char *r = text; *r; r++)
    if (*r != '\n')
      *w++ = *r;
  *w = '\0';
  return text;
}

/* ---- text ----------------------------------------------------------------- */

static void text_graph(GString *s, const ts_graph *g, int indent);

/* "f(x: f32[1,2], y: f32[2,1]) -> (Add:0 f32[1,1])" */
static void text_header(GString *s, const ts_graph *g)
{
  g_string_append_printf(s, "graph %s(", ts_graph_name(g));
  for (int i = 0; i < ts_graph_n_inputs(g); i++) {
    const ts_node *p = ts_graph_node(g, ts_graph_input(g, i));
    g_string_append_printf(s, "%s%s: ", i ? ", " : "", ts_node_name(p));
    append_info(s, ts_node_output_dtype(p, 0), ts_node_output_shape(p, 0));
  }
  g_string_append(s, ") -> (");
  for (int i = 0; i < ts_graph_n_outputs(g); i++) {
    ts_port port = ts_graph_output(g, i);
    if (i)
      g_string_append(s, ", ");
    append_port(s, g, port);
    if (port.node >= 0 && port.node < ts_graph_n_nodes(g)) {
      const ts_node *n = ts_graph_node(g, port.node);
      g_string_append_c(s, ' ');
      append_info(s, ts_node_output_dtype(n, port.index), ts_node_output_shape(n, port.index));
    }
  }
  g_string_append(s, ")\n");
}

/* "{transpose_a=false, value=4}" (nothing when there are none). */
static void text_attrs(GString *s, const ts_node *n)
{
  int shown = 0;
  for (int i = 0; i < ts_node_n_attrs(n); i++) {
    const char *name = ts_node_attr_name(n, i);
    char *value = ts_node_attr_to_string(n, i);
    g_string_append_printf(s, "%s%s=%s", shown++ ? ", " : " {", name ? name : "?", value);
    free(value);
  }
  char *value = small_value(n);
  if (value)
    g_string_append_printf(s, "%svalue=%s", shown++ ? ", " : " {", value);
  free(value);
  const ts_tensor *v = ts_node_value(n);
  if (v && v->name) /* a variable's handle */
    g_string_append_printf(s, "%svariable=%s", shown++ ? ", " : " {", v->name);
  if (shown)
    g_string_append_c(s, '}');
}

/* "#4 Add = Add(MatMul:0, Const:0, ^Print) -> f32[1,1] {...} @ seeds.c:57 (f)" */
static void text_node(GString *s, const ts_graph *g, const ts_node *n, int indent, int id_width)
{
  g_string_append_printf(s, "%*s#%-*d %s = %s(", indent, "", id_width, ts_node_id(n),
                         ts_node_name(n), ts_op_name(ts_node_op(n)));
  int k = 0;
  for (int i = 0; i < ts_node_n_inputs(n); i++, k++) {
    if (k)
      g_string_append(s, ", ");
    append_port(s, g, ts_node_input(n, i));
  }
  for (int i = 0; i < ts_node_n_control_inputs(n); i++, k++) {
    int c = ts_node_control_input(n, i);
    g_string_append_printf(s, "%s^%s", k ? ", " : "",
                           c >= 0 && c < ts_graph_n_nodes(g) ? ts_node_name(ts_graph_node(g, c)) : "?");
  }
  g_string_append(s, ") -> ");
  int n_out = ts_node_n_outputs(n);
  if (n_out != 1)
    g_string_append_c(s, '(');
  for (int i = 0; i < n_out; i++) {
    if (i)
      g_string_append(s, ", ");
    append_info(s, ts_node_output_dtype(n, i), ts_node_output_shape(n, i));
  }
  if (n_out != 1)
    g_string_append_c(s, ')');
  text_attrs(s, n);
  ts_loc loc = ts_node_loc(n);
  if (loc.file) {
    g_string_append_printf(s, " @ %s:%d", file_basename(loc.file), loc.line);
    if (loc.func)
      g_string_append_printf(s, " (%s)", loc.func);
  }
  g_string_append_c(s, '\n');

  for (int i = 0; i < ts_node_n_subgraphs(n); i++) {
    char buf[32];
    g_string_append_printf(s, "%*s%s: ", indent + 2, "", subgraph_label(n, i, buf, sizeof buf));
    text_graph(s, ts_node_subgraph(n, i), indent + 4);
  }
}

/* The header (at the current column), then the nodes indented by `indent`. */
static void text_graph(GString *s, const ts_graph *g, int indent)
{
  text_header(s, g);
  int n_nodes = ts_graph_n_nodes(g);
  int id_width = snprintf(NULL, 0, "%d", n_nodes > 0 ? n_nodes - 1 : 0);
  for (int i = 0; i < n_nodes; i++)
    text_node(s, g, ts_graph_node(g, i), indent, id_width);
}

char *ts_graph_to_text(const ts_graph *g)
{
  TS_CHECK_ARG(g != NULL, NULL);
  GString *s = g_string_new(NULL);
  text_graph(s, g, 2);
  return g_string_free(s, FALSE);
}

/* ---- DOT ------------------------------------------------------------------- */

typedef struct dot_writer {
  GString *s;
  int n_graphs; /* graphs numbered in visiting order: node ids "g1_n4" */
} dot_writer;

/* s as a DOT quoted string, with quotes, backslashes and newlines escaped. */
static void dot_quoted(GString *s, const char *text)
{
  g_string_append_c(s, '"');
  for (const char *p = text; *p; p++) {
    if (*p == '"' || *p == '\\')
      g_string_append_c(s, '\\');
    if (*p == '\n')
      g_string_append(s, "\\n");
    else
      g_string_append_c(s, *p);
  }
  g_string_append_c(s, '"');
}

/* The name scopes of one graph as a tree: scope -> node ids directly in it,
 * scope -> child scopes, both in order of first appearance. */
typedef struct scope_tree {
  GHashTable *nodes;    /* char * -> GArray of int */
  GHashTable *children; /* char * -> GPtrArray of char * */
} scope_tree;

static void free_array(gpointer a)
{
  g_array_unref(a);
}

static void free_ptr_array(gpointer a)
{
  g_ptr_array_unref(a);
}

/* Adds scope and its ancestors ("a/b" -> "a" -> ""). */
static void scope_tree_add(scope_tree *t, const char *scope)
{
  if (g_hash_table_contains(t->nodes, scope))
    return;
  g_hash_table_insert(t->nodes, g_strdup(scope), g_array_new(FALSE, FALSE, sizeof(int)));
  g_hash_table_insert(t->children, g_strdup(scope), g_ptr_array_new());
  if (!*scope)
    return;
  const char *slash = strrchr(scope, '/');
  char *parent = g_strndup(scope, slash ? (size_t)(slash - scope) : 0);
  scope_tree_add(t, parent);
  /* the child's key string lives as long as the table */
  char *key;
  g_hash_table_lookup_extended(t->nodes, scope, (gpointer *)&key, NULL);
  g_ptr_array_add(g_hash_table_lookup(t->children, parent), key);
  g_free(parent);
}

static scope_tree scope_tree_build(const ts_graph *g)
{
  scope_tree t = {
    g_hash_table_new_full(g_str_hash, g_str_equal, g_free, free_array),
    g_hash_table_new_full(g_str_hash, g_str_equal, g_free, free_ptr_array),
  };
  scope_tree_add(&t, "");
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const char *scope = ts_node_scope(ts_graph_node(g, i));
    scope_tree_add(&t, scope ? scope : "");
    g_array_append_val(g_hash_table_lookup(t.nodes, scope ? scope : ""), i);
  }
  return t;
}

static void scope_tree_clear(scope_tree *t)
{
  g_hash_table_unref(t->nodes);
  g_hash_table_unref(t->children);
}

static void dot_graph(dot_writer *w, const ts_graph *g, const char *base_scope, int depth);

static bool is_small_node(ts_op op)
{
  return (ts_op_traits(op) & (TS_OP_TRAIT_VALUE | TS_OP_TRAIT_INPUT)) != 0;
}

static void dot_node(dot_writer *w, int gid, const ts_node *n, int depth)
{
  GString *s = w->s;
  g_string_append_printf(s, "%*sg%d_n%d [label=", depth * 2, "", gid, ts_node_id(n));
  /* the op, then the name unless it only repeats the op ("Add" / "Add") */
  const char *op = ts_op_name(ts_node_op(n));
  char *label = strcmp(op, ts_node_name(n)) == 0 ? g_strdup(op)
                                                : g_strdup_printf("%s\n%s", op, ts_node_name(n));
  dot_quoted(s, label);
  g_free(label);
  if (is_small_node(ts_node_op(n)))
    g_string_append(s, ", fontsize=8, height=0.25, style=filled, fillcolor=gray92");
  ts_loc loc = ts_node_loc(n);
  if (loc.file) {
    char *where = g_strdup_printf("%s:%d", file_basename(loc.file), loc.line);
    g_string_append(s, ", tooltip=");
    dot_quoted(s, where);
    g_free(where);
  }
  g_string_append(s, "];\n");

  for (int i = 0; i < ts_node_n_subgraphs(n); i++) {
    char buf[32], *title;
    const char *label_i = subgraph_label(n, i, buf, sizeof buf);
    title = g_strdup_printf("%s (%s)", label_i, ts_node_name(n));
    int sub_id = w->n_graphs;
    g_string_append_printf(s, "%*ssubgraph \"cluster_g%d\" {\n%*slabel=", depth * 2, "", sub_id,
                           depth * 2 + 2, "");
    dot_quoted(s, title);
    g_string_append_printf(s, "; style=\"dashed,rounded\"; color=steelblue;\n");
    g_free(title);
    const ts_graph *sub = ts_node_subgraph(n, i);
    dot_graph(w, sub, ts_node_scope(n), depth + 1);
    g_string_append_printf(s, "%*s}\n", depth * 2, "");
    /* the branch's results flow into the node's outputs */
    for (int k = 0; k < ts_graph_n_outputs(sub); k++) {
      ts_port out = ts_graph_output(sub, k);
      if (out.node >= 0 && out.node < ts_graph_n_nodes(sub))
        g_string_append_printf(s, "%*sg%d_n%d -> g%d_n%d [style=dotted, label=\"%s\"];\n",
                               depth * 2, "", sub_id, out.node, gid, ts_node_id(n), label_i);
    }
  }
}

/* Is scope one of base's ancestors (or base)?  Those scopes get no
 * cluster of their own inside a subgraph: its owner's cluster holds it. */
static bool scope_contains(const char *scope, const char *base)
{
  size_t len = strlen(scope);
  return !*scope || (strncmp(base, scope, len) == 0 && (base[len] == '\0' || base[len] == '/'));
}

static void dot_scope(dot_writer *w, int gid, const ts_graph *g, const scope_tree *t,
                      const char *scope, const char *base_scope, int depth)
{
  GString *s = w->s;
  bool cluster = !scope_contains(scope, base_scope);
  if (cluster) {
    const char *slash = strrchr(scope, '/');
    g_string_append_printf(s, "%*ssubgraph ", depth * 2, "");
    char *id = g_strdup_printf("cluster_g%d_%s", gid, scope);
    dot_quoted(s, id);
    g_free(id);
    g_string_append_printf(s, " {\n%*slabel=", depth * 2 + 2, "");
    dot_quoted(s, slash ? slash + 1 : scope);
    g_string_append(s, "; style=rounded; color=gray60;\n");
    depth++;
  }
  GArray *ids = g_hash_table_lookup(t->nodes, scope);
  for (guint i = 0; i < ids->len; i++)
    dot_node(w, gid, ts_graph_node(g, g_array_index(ids, int, i)), depth);
  GPtrArray *children = g_hash_table_lookup(t->children, scope);
  for (guint i = 0; i < children->len; i++)
    dot_scope(w, gid, g, t, children->pdata[i], base_scope, depth);
  if (cluster)
    g_string_append_printf(s, "%*s}\n", (depth - 1) * 2, "");
}

static void dot_edges(dot_writer *w, int gid, const ts_graph *g, int depth)
{
  GString *s = w->s;
  int n_nodes = ts_graph_n_nodes(g);
  for (int i = 0; i < n_nodes; i++) {
    const ts_node *n = ts_graph_node(g, i);
    for (int k = 0; k < ts_node_n_inputs(n); k++) {
      ts_port p = ts_node_input(n, k);
      if (p.node < 0 || p.node >= n_nodes)
        continue;
      const ts_node *src = ts_graph_node(g, p.node);
      char info[TS_INFO_STR];
      ts__info_str(info, ts_node_output_dtype(src, p.index), ts_node_output_shape(src, p.index));
      g_string_append_printf(s, "%*sg%d_n%d -> g%d_n%d [label=", depth * 2, "", gid, p.node, gid, i);
      dot_quoted(s, info);
      g_string_append(s, "];\n");
    }
    for (int k = 0; k < ts_node_n_control_inputs(n); k++) {
      int c = ts_node_control_input(n, k);
      if (c >= 0 && c < n_nodes)
        g_string_append_printf(s, "%*sg%d_n%d -> g%d_n%d [style=dashed];\n", depth * 2, "", gid, c,
                               gid, i);
    }
  }
}

/* One graph's nodes (in scope clusters) and edges at `depth`. */
static void dot_graph(dot_writer *w, const ts_graph *g, const char *base_scope, int depth)
{
  int gid = w->n_graphs++;
  scope_tree t = scope_tree_build(g);
  dot_scope(w, gid, g, &t, "", base_scope, depth);
  scope_tree_clear(&t);
  dot_edges(w, gid, g, depth);
}

char *ts_graph_to_dot(const ts_graph *g)
{
  TS_CHECK_ARG(g != NULL, NULL);
  dot_writer w = { g_string_new("digraph "), 0 };
  dot_quoted(w.s, ts_graph_name(g));
  g_string_append(w.s, " {\n"
                       "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=10];\n"
                       "  node [shape=ellipse, fontname=\"Helvetica\", fontsize=11];\n"
                       "  edge [fontname=\"Helvetica\", fontsize=8];\n");
  dot_graph(&w, g, "", 1);
  g_string_append(w.s, "}\n");
  return g_string_free(w.s, FALSE);
}
