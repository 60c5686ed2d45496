/* test-app-graph.c — GUI tests of the graph pane and the node details: header, details, subgraphs, provenance, source lines, passes, walking. */
#include "test-app.h"
#include "ts-workspace.h"

static GtkWidget *button_for(GtkWidget *widget, const char *action)
{
  if (GTK_IS_ACTIONABLE(widget) && g_strcmp0(gtk_actionable_get_action_name(GTK_ACTIONABLE(widget)), action) == 0)
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child(widget); c; c = gtk_widget_get_next_sibling(c)) {
    GtkWidget *found = button_for(c, action);
    if (found)
      return found;
  }
  return NULL;
}

/* The label follows the zoom (after an idle: see ts-graph-pane.c). */
static void assert_zoom_shown(GtkWidget *zoom_button, TsViewport *vp)
{
  shown_viewport = vp;
  shown_zoom_button = zoom_button;
  test_wait_for(zoom_shown, NULL, "the zoom level to show");
}

static void assert_shows(const char *text, const char *const *wanted)
{
  for (; *wanted; wanted++)
    if (!strstr(text, *wanted))
      g_error("the node details do not show '%s':\n%s", *wanted, text);
}

/* The activatable row titled title under widget (a producer, consumer, origin or subgraph). */
static GtkWidget *row_titled(GtkWidget *widget, const char *title)
{
  if (ADW_IS_ACTION_ROW(widget) && gtk_widget_get_visible(widget) &&
      g_strcmp0(adw_preferences_row_get_title(ADW_PREFERENCES_ROW(widget)), title) == 0)
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child(widget); c; c = gtk_widget_get_next_sibling(c)) {
    GtkWidget *found = row_titled(c, title);
    if (found)
      return found;
  }
  return NULL;
}

static gboolean not_animating(gpointer data)
{
  return !ts_graph_view_get_animating(shown_view());
}

static gboolean item_visible(gpointer data)
{
  ts_view_model *model = ts_graph_view_get_model(shown_view());
  return ts_view_model_is_visible(model, NULL, GPOINTER_TO_INT(data));
}

/* g as it would read back if node `id` stood for the nodes `origins` (an
 * optimized node): its serialized form with that node's origins rewritten. */
static ts_graph *with_origins(const ts_graph *g, int id, const int *origins, int n_origins)
{
  size_t size = 0;
  void *bytes = ts_graph_serialize(g, &size);
  g_assert_nonnull(bytes);
  g_autoptr(GVariant) whole = g_variant_ref_sink(g_variant_new_from_data(G_VARIANT_TYPE("(suv)"), bytes, size,
                                                                          FALSE, free, bytes));
  const char *magic;
  guint32 version;
  g_autoptr(GVariant) body = NULL;
  g_variant_get(whole, "(&suv)", &magic, &version, &body);
  GVariantBuilder graphs;
  g_variant_builder_init(&graphs, g_variant_get_type(body));
  for (gsize gi = 0; gi < g_variant_n_children(body); gi++) {
    g_autoptr(GVariant) graph = g_variant_get_child_value(body, gi);
    if (gi > 0) {
      g_variant_builder_add_value(&graphs, graph);
      continue;
    }
    g_autoptr(GVariant) nodes = g_variant_get_child_value(graph, 3);
    GVariantBuilder new_nodes;
    g_variant_builder_init(&new_nodes, g_variant_get_type(nodes));
    for (gsize ni = 0; ni < g_variant_n_children(nodes); ni++) {
      g_autoptr(GVariant) node = g_variant_get_child_value(nodes, ni);
      if ((int)ni != id) {
        g_variant_builder_add_value(&new_nodes, node);
        continue;
      }
      enum { ORIGINS = 13 }; /* the node's field (docs/graph-format.md) */
      GVariant *fields[16];
      gsize n_fields = g_variant_n_children(node);
      g_assert_cmpuint(n_fields, <=, G_N_ELEMENTS(fields));
      for (gsize f = 0; f < n_fields; f++)
        fields[f] = f == ORIGINS ? NULL : g_variant_get_child_value(node, f);
      GVariantBuilder list;
      g_variant_builder_init(&list, G_VARIANT_TYPE("a(is)"));
      for (int o = 0; o < n_origins; o++)
        g_variant_builder_add(&list, "(is)", origins[o], "");
      fields[ORIGINS] = g_variant_builder_end(&list);
      g_variant_builder_add_value(&new_nodes, g_variant_new_tuple(fields, n_fields));
      for (gsize f = 0; f < n_fields; f++)
        if (f != ORIGINS)
          g_variant_unref(fields[f]);
    }
    GVariant *parts[4];
    for (gsize f = 0; f < 3; f++)
      parts[f] = g_variant_get_child_value(graph, f);
    parts[3] = g_variant_builder_end(&new_nodes);
    g_variant_builder_add_value(&graphs, g_variant_new_tuple(parts, 4));
    for (gsize f = 0; f < 3; f++)
      g_variant_unref(parts[f]);
  }
  g_autoptr(GVariant) rewritten =
    g_variant_ref_sink(g_variant_new("(suv)", magic, version, g_variant_builder_end(&graphs)));
  g_autoptr(GVariant) normal = g_variant_get_normal_form(rewritten);
  ts_graph *out = ts_graph_deserialize(g_variant_get_data(normal), g_variant_get_size(normal));
  g_assert_nonnull(out);
  return out;
}

static void on_activate_node(TsNodeDetails *details, gpointer node, gpointer data)
{
  *(const ts_node **)data = node;
}

/* A node standing for other nodes (as an optimized one does) lists them,
 * and their rows ask for them; timing and value rows take what they are
 * given and go back when the node changes. */
/* x^T-free square: y = x x under "dense_3"; returns dsum(y)/dx from a tape. */
static ts_tensor *gradient_model(ts_call *call)
{
  ts_tensor *x = ts_arg(call, 0), *y = NULL, *g = NULL;
  ts_tape *tape = ts_tape_new(false);
  ts_tape_watch(tape, x);
  TS_NAME_SCOPE("dense_3") { y = ts_matmul(x, x); }
  ts_tape_gradient(tape, ts_reduce_sum(y, TS_ALL_AXES, false), &x, 1, &g, TS_UNCONNECTED_NONE);
  ts_tape_free(tape);
  return g;
}

/* The op of a graph's node, by name. */
static const char *op_of(const ts_node *n)
{
  return ts_op_name(ts_node_op(n));
}

static gboolean compare_selected_is(gpointer data)
{
  TsGraphView *view = TS_GRAPH_VIEW(ts_compare_pane_get_view(ts_window_get_compare_pane(window), FALSE));
  int item = ts_graph_view_get_selected_item(view);
  ts_view_model *model = ts_graph_view_get_model(view);
  return item >= 0 && model && ts_view_item_node(model, item) == data;
}

static gboolean not_animating_right(gpointer data)
{
  return !ts_graph_view_get_animating(TS_GRAPH_VIEW(ts_compare_pane_get_view(ts_window_get_compare_pane(window), TRUE)));
}

static const ts_node *view_selected_node(TsGraphView *view)
{
  int item = ts_graph_view_get_selected_item(view);
  return item >= 0 ? ts_view_item_node(ts_graph_view_get_model(view), item) : NULL;
}

/* The graph pane's header: zoom out, the zoom level (a click: 100 %), zoom
 * in, fit; its menu expands and collapses every group. */
static void test_graph_header(void)
{
  select_function("lstm_fn");
  run_with((const char *const[]){ "f32[10,10]:zeros", "f32[10,10]:zeros", "f32[10,10]:zeros", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  TsGraphPane *pane = ts_window_get_graph_pane(window);
  TsGraphView *view = TS_GRAPH_VIEW(ts_graph_pane_get_view(pane));
  g_assert_nonnull(ts_graph_view_get_graph(view));
  TsViewport *vp = ts_graph_view_get_viewport(view);
  GtkWidget *zoom_button = button_for(GTK_WIDGET(pane), "graph.zoom-reset");
  g_assert_nonnull(zoom_button);
  for (const char *const *a = (const char *const[]){ "graph.zoom-in", "graph.zoom-out", "graph.zoom-fit", NULL }; *a; a++)
    g_assert_true(gtk_widget_get_visible(button_for(GTK_WIDGET(pane), *a)));
  assert_zoom_shown(zoom_button, vp);

  double zoom = ts_viewport_get_zoom(vp);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(pane), "graph.zoom-in", NULL));
  g_assert_cmpfloat(fabs(ts_viewport_get_zoom(vp) - zoom * 1.25), <, 1e-9);
  assert_zoom_shown(zoom_button, vp);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(pane), "graph.zoom-out", NULL));
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(pane), "graph.zoom-reset", NULL));
  assert_zoom_shown(zoom_button, vp);
  g_assert_cmpstr(gtk_button_get_label(GTK_BUTTON(zoom_button)), ==, "100%");
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(pane), "graph.zoom-fit", NULL));
  g_assert_cmpfloat(fabs(ts_viewport_get_zoom(vp) - zoom), <, 1e-9);
  /* the graph menu's Show Minimap turns the view's minimap off and on */
  g_assert_true(ts_graph_view_get_show_minimap(view));
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(pane), "graph.show-minimap", NULL));
  g_assert_false(ts_graph_view_get_show_minimap(view));
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(pane), "graph.show-minimap", NULL));
  g_assert_true(ts_graph_view_get_show_minimap(view));

  /* lstm_cell opens with everything else, and closes again */
  ts_view_model *model = ts_graph_view_get_model(view);
  GArray *before = ts_view_model_visible_items(model, NULL);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(pane), "graph.expand-all", NULL));
  test_wait_for(pane_drawn, NULL, "the expanded graph");
  GArray *expanded = ts_view_model_visible_items(model, NULL);
  g_assert_cmpuint(expanded->len, >, before->len + 10);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(pane), "graph.collapse-all", NULL));
  test_wait_for(pane_drawn, NULL, "the collapsed graph");
  GArray *after = ts_view_model_visible_items(model, NULL);
  g_assert_cmpuint(after->len, ==, before->len);
  g_array_free(before, TRUE);
  g_array_free(expanded, TRUE);
  g_array_free(after, TRUE);
}

/* Selecting an op of lstm_fn shows what it is, where its tensors come from
 * and go, and the line that wrote it; a producer's row selects that
 * producer in the graph; Ctrl+I hides and shows the panel. */
/* The source snippet as tall as its lines: GTK lays a text view's lines
 * out in an idle, the view growing as it goes (a line not laid out yet
 * has no height). */
static gboolean snippet_laid_out(gpointer data)
{
  GtkWidget *view = find_widget(GTK_WIDGET(ts_window_get_node_details(window)), GTK_TYPE_TEXT_VIEW);
  GtkTextIter last;
  gtk_text_buffer_get_end_iter(gtk_text_view_get_buffer(GTK_TEXT_VIEW(view)), &last);
  int y = 0, height = 0;
  gtk_text_view_get_line_yrange(GTK_TEXT_VIEW(view), &last, &y, &height);
  return height > 0 && gtk_widget_get_height(view) >= y + height;
}

static void test_node_details(void)
{
  select_function("lstm_fn");
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  TsNodeDetails *details = ts_window_get_node_details(window);
  const ts_graph *g = ts_graph_view_get_graph(shown_view());
  g_assert_nonnull(g);
  g_assert_false(gtk_widget_get_visible(GTK_WIDGET(details))); /* nothing selected */

  const ts_node *matmul = node_named(g, "lstm_cell/MatMul_1");
  select_node(matmul);
  g_autofree char *text = details_text();
  ts_loc loc = ts_node_loc(matmul);
  g_autofree char *where = g_strdup_printf("seeds_models.c:%d in lstm_fn()", loc.line);
  assert_shows(text, (const char *const[]){
    "MatMul\n", "lstm_cell/MatMul_1\n", "scope lstm_cell · node ", "transpose_a\nfalse\n",
    "input\n", "input 0 · Placeholder · f32[10,10]\n", "lstm_cell/ReadVariableOp_2\n",
    "input 1 · ReadVariableOp · f32[10,40]\n", "Output 0 · f32[10,40]\n", "lstm_cell/Add\n",
    "its input 0 · Add\n", where, "eager twin", "not profiled yet", "no value recorded", NULL });
  g_assert_null(strstr(text, "Subgraphs"));

  /* the snippet: five lines either side, the node's own highlighted */
  int index = 0, n_lines = 0;
  g_autofree char *line = highlighted_line(&index, &n_lines);
  g_autofree char *want = seeds_line(loc.line);
  g_assert_cmpstr(g_strstrip(line), ==, g_strstrip(want)); /* dedented */
  g_assert_cmpint(index, ==, TS_NODE_DETAILS_CONTEXT);
  g_assert_cmpint(n_lines, ==, 2 * TS_NODE_DETAILS_CONTEXT + 1);
  if (g_getenv("TS_TEST_SCREENSHOTS")) { /* for the README, at the default size: the panel given room down to its source lines */
    gtk_paned_set_position(GTK_PANED(gtk_widget_get_parent(GTK_WIDGET(details))), 170);
    test_wait_for(pane_drawn, NULL, "the opened group to be drawn");
    test_wait_for(not_animating, NULL, "the fly-to the node");
    test_wait_for(snippet_laid_out, NULL, "every line of the snippet to be laid out");
    wait_drawn(GTK_WIDGET(window));
    save_test_screenshot(GTK_WIDGET(window), "node-details.png");
  }

  /* a producer's row selects it in the graph, and the panel follows */
  const ts_node *input = node_named(g, "input");
  GtkWidget *row = row_titled(GTK_WIDGET(details), "input");
  g_assert_nonnull(row);
  gtk_widget_activate(row);
  test_wait_for(selected_node_is, (gpointer)input, "the producer to be selected");
  g_assert_true(ts_node_details_get_node(details) == input);
  test_wait_for(details_read, NULL, "the panel to settle");
  g_autofree char *placeholder = details_text();
  assert_shows(placeholder, (const char *const[]){
    "Placeholder\n", "None: an input of graph lstm_fn\n", "lstm_cell/MatMul_1\n", "No source location\n",
    "Made by the engine while tracing", NULL });

  /* hidden and shown again with the selection kept */
  activate("win.show-node-details", NULL);
  g_assert_false(gtk_widget_get_visible(GTK_WIDGET(details)));
  activate("win.show-node-details", NULL);
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(details)));
  ts_graph_view_select_item(shown_view(), -1);
  g_assert_false(gtk_widget_get_visible(GTK_WIDGET(details)));
  g_assert_null(ts_node_details_get_node(details));
}

/* An If node lists its branches; a branch's row opens it in the graph. */
static void test_node_details_subgraphs(void)
{
  select_function("square_if_positive");
  run_with((const char *const[]){ "i32[]=2", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  const ts_graph *g = ts_graph_view_get_graph(shown_view());
  const ts_node *cond = NULL;
  for (int i = 0; i < ts_graph_n_nodes(g) && !cond; i++)
    if (ts_node_op(ts_graph_node(g, i)) == TS_OP_IF)
      cond = ts_graph_node(g, i);
  g_assert_nonnull(cond);
  select_node(cond);
  g_autofree char *text = details_text();
  assert_shows(text, (const char *const[]){ "Subgraphs\n", "then\n", "else\n", NULL });
  g_autofree char *where = g_strdup_printf("top level · node %d of graph %s\n", ts_node_id(cond), ts_graph_name(g));
  assert_shows(text, (const char *const[]){ where, NULL });
  ts_view_model *model = ts_graph_view_get_model(shown_view());
  int op = ts_view_model_item_for_node(model, g, ts_node_id(cond));
  int else_item = -1;
  for (int i = 0; i < ts_view_item_n_children(model, op); i++)
    if (g_strcmp0(ts_view_item_label(model, ts_view_item_child(model, op, i)), "else") == 0)
      else_item = ts_view_item_child(model, op, i);
  g_assert_cmpint(else_item, >=, 0);
  g_assert_false(item_visible(GINT_TO_POINTER(else_item))); /* the If is closed */
  gtk_widget_activate(row_titled(GTK_WIDGET(ts_window_get_node_details(window)), "else"));
  test_wait_for(item_visible, GINT_TO_POINTER(else_item), "the else branch to open");
  test_wait_for(pane_drawn, NULL, "the opened branch to be drawn");

  /* a node of the branch is not at the top level: its graph says where */
  const ts_graph *branch = ts_node_subgraph(cond, 1);
  const ts_node *inner = NULL;
  for (int i = 0; i < ts_graph_n_nodes(branch) && !inner; i++)
    if (ts_node_op(ts_graph_node(branch, i)) != TS_OP_PLACEHOLDER)
      inner = ts_graph_node(branch, i);
  g_assert_nonnull(inner);
  select_node(inner);
  g_autofree char *inner_text = details_text();
  g_autofree char *inner_where = g_strdup_printf("\nnode %d of graph If/else", ts_node_id(inner));
  assert_shows(inner_text, (const char *const[]){ inner_where, NULL });
  g_assert_null(strstr(inner_text, "top level"));
}

static void test_node_details_provenance(void)
{
  TsModuleFunction *fn = ts_loaded_module_lookup(ts_window_get_module(window), "lstm_fn");
  g_assert_nonnull(fn);
  const ts_graph *traced = ts_module_function_concrete(fn, 0)->graph;
  const int add = ts_node_id(node_named(traced, "lstm_cell/Add"));
  const int origins[] = { ts_node_id(node_named(traced, "lstm_cell/MatMul")),
                          ts_node_id(node_named(traced, "lstm_cell/MatMul_1")) };
  ts_graph *g = with_origins(traced, add, origins, G_N_ELEMENTS(origins));
  GtkWindow *holder = GTK_WINDOW(gtk_window_new()); /* rows take focus when activated: a root */
  TsNodeDetails *details = TS_NODE_DETAILS(g_object_ref(ts_node_details_new()));
  gtk_window_set_child(holder, GTK_WIDGET(details));
  const ts_node *asked = NULL;
  g_signal_connect(details, "activate-node", G_CALLBACK(on_activate_node), &asked);
  ts_node_details_set_node(details, ts_graph_node(g, add));
  g_autoptr(GString) text = g_string_new(NULL);
  collect_text(GTK_WIDGET(details), text);
  assert_shows(text->str, (const char *const[]){ "Made by an optimization, fused from MatMul, MatMul: it stands for 2 traced nodes.\n",
                                                 "MatMul in graph lstm_fn\n", NULL });
  gtk_widget_activate(row_titled(GTK_WIDGET(details), "lstm_cell/MatMul_1"));
  g_assert_true(asked == ts_graph_node(g, origins[1]));

  GtkWidget *value = gtk_label_new("a tensor inspector");
  ts_node_details_set_timing(details, "CPU", 1500000);
  ts_node_details_set_value_view(details, value);
  g_string_truncate(text, 0);
  collect_text(GTK_WIDGET(details), text);
  assert_shows(text->str, (const char *const[]){ "Device\nCPU\nTime\n1.500 ms\n", "a tensor inspector\n", NULL });
  g_assert_null(strstr(text->str, "not profiled yet"));
  ts_node_details_set_node(details, ts_graph_node(g, origins[0]));
  g_string_truncate(text, 0);
  collect_text(GTK_WIDGET(details), text);
  assert_shows(text->str, (const char *const[]){ "Device\nnot profiled yet\n", "no value recorded\n", NULL });
  g_assert_null(strstr(text->str, "a tensor inspector"));

  ts_node_details_set_node(details, NULL);
  gtk_window_destroy(holder);
  g_assert_finalize_object(details);
  ts_graph_free(g);
}

/* A gradient node's details name the forward node it is the gradient of. */
static void test_node_details_gradient(void)
{
  ts_function *fn = ts_function_new("gradient_model", gradient_model, "x");
  ts_concrete *cf = ts_function_get_concrete(fn, (ts_value[]){ TS_SPEC_VALUE(TS_F32, TS_SHAPE(2, 2)) }, 1);
  g_assert_nonnull(cf);
  const ts_graph *g = ts_concrete_graph(cf);
  const ts_node *grad = NULL;
  for (int i = 0; !grad && i < ts_graph_n_nodes(g); i++)
    if (ts_node_op(ts_graph_node(g, i)) == TS_OP_MATMUL && ts_node_gradient_of(ts_graph_node(g, i)))
      grad = ts_graph_node(g, i);
  g_assert_nonnull(grad);
  GtkWindow *holder = GTK_WINDOW(gtk_window_new());
  TsNodeDetails *details = TS_NODE_DETAILS(g_object_ref(ts_node_details_new()));
  gtk_window_set_child(holder, GTK_WIDGET(details));
  ts_node_details_set_node(details, grad);
  g_autoptr(GString) text = g_string_new(NULL);
  collect_text(GTK_WIDGET(details), text);
  assert_shows(text->str, (const char *const[]){ "scope gradients · node ", " · gradient of dense_3/MatMul\n", NULL });
  ts_node_details_set_node(details, ts_node_gradient_of(grad));
  g_string_truncate(text, 0);
  collect_text(GTK_WIDGET(details), text);
  g_assert_null(strstr(text->str, "gradient of"));
  ts_node_details_set_node(details, NULL);
  gtk_window_destroy(holder);
  g_assert_finalize_object(details);
  ts_function_free(fn);
}

/* Source files: found under the directories given, by name or by base
 * name; a line past the end, a binary file and a missing file are said so. */
static void test_source_snippet(void)
{
  g_autofree char *dir = g_build_filename(tmp_dir, "src", NULL);
  g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
  g_autofree char *path = g_build_filename(dir, "model.c", NULL);
  g_assert_true(g_file_set_contents(path, "one\ntwo\r\nthree\n", -1, NULL));
  const char *const dirs[] = { tmp_dir, dir, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(TsSourceSnippet) s = ts_source_snippet_read("src/model.c", 2, 5, dirs, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(s->path, ==, path);
  g_assert_cmpint(s->first_line, ==, 1);
  g_assert_cmpint(s->line, ==, 2);
  g_assert_cmpstrv(s->lines, ((const char *const[]){ "one", "two", "three", NULL }));
  g_autoptr(TsSourceSnippet) moved = ts_source_snippet_read("/built/elsewhere/model.c", 3, 1, dirs, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(moved->path, ==, path); /* by its base name, beside the module */
  g_assert_cmpstrv(moved->lines, ((const char *const[]){ "two", "three", NULL }));

  g_assert_null(ts_source_snippet_read("model.c", 9, 5, dirs, NULL, &error));
  g_autofree char *past = g_strdup_printf("%s has 3 lines, so no line 9: it changed since the module was built", path);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_cmpstr(error->message, ==, past);
  g_clear_error(&error);
  g_assert_null(ts_source_snippet_read("gone.c", 1, 5, dirs, NULL, &error));
  g_autofree char *missing = g_strdup_printf("gone.c is not on this machine (looked in %s, %s)", tmp_dir, dir);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_cmpstr(error->message, ==, missing);
  g_clear_error(&error);
  g_assert_null(ts_source_snippet_read("gone.c", 1, 5, NULL, NULL, &error));
  g_assert_cmpstr(error->message, ==, "gone.c is not on this machine (no directory to look in)");
  g_clear_error(&error);
  g_assert_true(g_file_set_contents(path, "a\0b\n", 4, NULL));
  g_assert_null(ts_source_snippet_read(path, 1, 5, NULL, NULL, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_clear_error(&error);
  g_unlink(path);
  g_rmdir(dir);

  /* the module's directory, its parents, then the current one */
  g_auto(GStrv) search = ts_source_search_dirs("/a/b/c/d/e/m.so");
  g_autofree char *cwd = g_get_current_dir();
  g_assert_cmpstrv(search, ((const char *const[]){ "/a/b/c/d/e", "/a/b/c/d", "/a/b/c", "/a/b", cwd, NULL }));
}

/* A module whose source file is not on this machine: the panel says so
 * and where it looked. */
static void test_node_details_source_missing(void)
{
  g_autofree char *path = g_build_filename(TS_TEST_MODULES_DIR, "moved.so", NULL);
  activate("win.open-module", "s", path);
  wait_idle();
  select_function("double_it");
  run_with((const char *const[]){ "f32[2]:ones", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  const ts_graph *g = ts_graph_view_get_graph(shown_view());
  const ts_node *add = NULL;
  for (int i = 0; i < ts_graph_n_nodes(g); i++)
    if (ts_node_op(ts_graph_node(g, i)) == TS_OP_ADD)
      add = ts_graph_node(g, i);
  g_assert_nonnull(add);
  select_node(add);
  g_autofree char *text = details_text();
  g_autofree char *note = g_strdup_printf("model.c is not on this machine (looked in %s, ", TS_TEST_MODULES_DIR);
  assert_shows(text, (const char *const[]){ "Add\n", "model.c:3 in double_it()\n", note, NULL });
  g_assert_false(gtk_widget_get_visible(
    gtk_widget_get_parent(find_widget(GTK_WIDGET(ts_window_get_node_details(window)), GTK_TYPE_TEXT_VIEW))));
}

/* Issue 10: a row of the node details activated takes the focus, and the
 * panel is rebuilt for the node it names: the focus stays in the window
 * (GTK 4.8 left it on the row gone with the old panel), and reopening the
 * module then is quiet (G_DEBUG=fatal-warnings: a critical fails). */
static void test_reopen_after_details_row(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.mode", "s", "graph");
  select_function("lstm_fn");
  run_with((const char *const[]){ "f32[10,10]:zeros", "f32[10,10]:zeros", "f32[10,10]:zeros", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  const ts_graph *g = ts_graph_view_get_graph(shown_view());
  select_node(node_named(g, "lstm_cell/MatMul_1"));
  const ts_node *input = node_named(g, "input");
  GtkWidget *row = row_titled(GTK_WIDGET(ts_window_get_node_details(window)), "input");
  g_assert_nonnull(row);
  gtk_widget_activate(row);
  test_wait_for(selected_node_is, (gpointer)input, "the producer to be selected");
  GtkWidget *focus = gtk_root_get_focus(GTK_ROOT(window));
  g_assert_true(focus == NULL || gtk_widget_get_root(focus) == GTK_ROOT(window));
  /* the panel hidden and shown, the selection cleared, the module reopened */
  activate("win.show-node-details", NULL);
  activate("win.show-node-details", NULL);
  ts_graph_view_select_item(shown_view(), -1);
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  g_assert_null(ts_node_details_get_node(ts_window_get_node_details(window)));
}

/* Compare with Optimized Graph (issue 14): sequential_model's traced graph
 * beside the graph it runs after the passes, the passes' lines above; a
 * fused kernel selected on the right colours the MatMul, Add and Relu it
 * stands for on the left and the details say what it was fused from; an
 * origin's row selects it on the left, which colours its kernel. */
static void test_compare_passes(void)
{
  activate("win.mode", "s", "graph");
  select_function("sequential_model");
  run_with((const char *const[]){ "f32[4,28,28]:uniform", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  TsGraphPane *graph_pane = ts_window_get_graph_pane(window);
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(graph_pane);
  g_assert_nonnull(cf);
  g_assert_null(cf->optimized); /* asked for when wanted */
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(graph_pane), "graph.compare-passes", NULL));
  wait_idle(); /* the worker sends the optimized graph */
  g_assert_true(ts_window_get_comparing(window));
  TsComparePane *pane = ts_window_get_compare_pane(window);
  g_assert_true(ts_compare_pane_get_passes_concrete(pane) == cf);
  g_assert_nonnull(cf->optimized);
  TsGraphView *left = TS_GRAPH_VIEW(ts_compare_pane_get_view(pane, FALSE));
  TsGraphView *right = TS_GRAPH_VIEW(ts_compare_pane_get_view(pane, TRUE));
  g_assert_true(ts_graph_view_get_graph(left) == cf->graph);
  g_assert_true(ts_graph_view_get_graph(right) == cf->optimized);
  g_assert_nonnull(strstr(ts_compare_pane_get_passes(pane), "fold: folded 0 nodes into 0 constants\n"));
  g_assert_nonnull(strstr(ts_compare_pane_get_passes(pane), "\nfuse: fused 302 nodes into 101 kernels"));
  /* 1 removed: the inactive Dropout's Identity (simplify) */
  g_autofree char *want = g_strdup_printf("%d traced nodes, %d after the passes: 101 fused, 1 removed",
                                          ts_graph_n_nodes(cf->graph), ts_graph_n_nodes(cf->optimized));
  g_assert_cmpstr(ts_compare_pane_get_summary(pane), ==, want);
  test_wait_for(compare_laid_out, NULL, "both graphs to be laid out");

  /* dense_2's kernel on the right: its MatMul, Add and Relu on the left */
  const ts_node *kernel = NULL;
  int n = 0;
  for (int i = 0; i < ts_graph_n_nodes(cf->optimized) && !kernel; i++) {
    const ts_node *node = ts_graph_node(cf->optimized, i);
    if (g_str_equal(ts_node_scope(node), "dense_2") && ts_compare_pane_get_matches(pane, node, &n) && n > 1)
      kernel = node;
  }
  g_assert_nonnull(kernel);
  g_assert_true(ts_graph_view_reveal(right, kernel));
  const ts_node *const *origins = ts_compare_pane_get_matches(pane, kernel, &n);
  g_assert_cmpint(n, ==, 3);
  g_assert_cmpstr(op_of(origins[0]), ==, "MatMul");
  g_assert_cmpstr(op_of(origins[1]), ==, "Add");
  g_assert_cmpstr(op_of(origins[2]), ==, "Relu");
  ts_render_values *colours = ts_compare_pane_get_colours(pane, FALSE);
  for (int i = 0; i < n; i++) {
    g_assert_true(ts_node_graph(origins[i]) == cf->graph);
    g_assert_cmpstr(ts_render_values_category(colours, origins[i]), ==, "matches the selection");
  }
  g_assert_cmpstr(ts_render_values_category(colours, node_named(cf->graph, "dense_3/MatMul")), ==, "fused");
  TsNodeDetails *details = ts_window_get_node_details(window);
  g_assert_true(ts_node_details_get_node(details) == kernel);
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(details)));
  g_autofree char *text = details_text();
  assert_shows(text, (const char *const[]){
    "Made by an optimization, fused from MatMul, Add, Relu: it stands for 3 traced nodes.\n",
    "dense_2/MatMul\n", "MatMul in graph sequential_model\n", NULL });
  test_wait_for(details_read, NULL, "the kernel's source to be read");

  /* an origin's row selects it on the left, which colours its kernel on the right */
  const ts_node *add = origins[1];
  GtkWidget *row = row_titled(GTK_WIDGET(details), ts_node_name(add));
  g_assert_nonnull(row);
  gtk_widget_activate(row);
  test_wait_for(compare_selected_is, (gpointer)add, "the Add to be selected on the left");
  g_assert_true(ts_node_details_get_node(details) == add);
  g_assert_cmpstr(ts_render_values_category(ts_compare_pane_get_colours(pane, TRUE), kernel), ==,
                  "matches the selection");
  g_assert_cmpstr(ts_render_values_category(ts_compare_pane_get_colours(pane, FALSE), add), ==, "fused");
  g_autofree char *traced = details_text();
  assert_shows(traced, (const char *const[]){ "Add\n", "dense_2/Add\n", "eager twin", NULL });

  /* lstm_fn's gates: one elementwise kernel for nine ops */
  activate("win.close-compare", NULL);
  select_function("lstm_fn");
  run_with((const char *const[]){ "f32[10,10]:zeros", "f32[10,10]:zeros", "f32[10,10]:zeros", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(graph_pane), "graph.compare-passes", NULL));
  wait_idle(); /* the worker sends the optimized graph */
  TsConcreteInfo *lstm = ts_compare_pane_get_passes_concrete(pane);
  g_assert_nonnull(strstr(ts_compare_pane_get_passes(pane), "fuse: fused 11 nodes into 2 kernels"));
  test_wait_for(compare_laid_out, NULL, "both graphs to be laid out");
  const ts_node *gates = node_named(lstm->optimized, "lstm_cell/Mul_2");
  g_assert_true(ts_graph_view_reveal(right, gates));
  g_assert_nonnull(ts_compare_pane_get_matches(pane, gates, &n));
  g_assert_cmpint(n, ==, 9);
  g_autofree char *gate_text = details_text();
  assert_shows(gate_text, (const char *const[]){
    "Made by an optimization, fused from Sigmoid, Sigmoid, Sigmoid, Tanh, Mul, Mul, Add, Tanh, Mul: it stands "
    "for 9 traced nodes.\n", NULL });
  test_wait_for(details_read, NULL, "the kernel's source to be read");
  test_wait_for(graph_drawn, window, "both graphs to be drawn");
  test_wait_for(not_animating_right, NULL, "the fly-to the kernel");
  if (g_getenv("TS_TEST_SCREENSHOTS")) { /* for the README, at the default size: both graphs, each fitted */
    wait_drawn(GTK_WIDGET(window));
    ts_graph_view_zoom_to_fit(left);
    ts_graph_view_zoom_to_fit(right);
    test_wait_for(graph_drawn, window, "both graphs to be drawn");
    wait_drawn(GTK_WIDGET(window));
    save_test_screenshot(GTK_WIDGET(window), "passes-compare.png");
  }

  /* back to one graph, its selection in the details again */
  activate("win.close-compare", NULL);
  g_assert_false(ts_window_get_comparing(window));
  g_assert_null(ts_compare_pane_get_passes_concrete(pane));
  g_assert_cmpstr(ts_compare_pane_get_passes(pane), ==, "");
  g_assert_null(ts_graph_view_get_graph(right));

  /* the module reopened (a new worker): lstm_fn's graph from the trace log
   * compares as before, its optimized graph kept with it */
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  GListModel *log = ts_trace_log_get_entries(ts_window_get_trace_log(window));
  g_autoptr(TsTraceEntry) last = g_list_model_get_item(log, g_list_model_get_n_items(log) - 1);
  g_assert_true(ts_trace_entry_get_concrete(last) == lstm);
  ts_graph_pane_show_concrete(graph_pane, ts_trace_entry_get_module(last), lstm);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(graph_pane), "graph.compare-passes", NULL));
  g_assert_true(ts_window_get_comparing(window));
  g_assert_true(ts_compare_pane_get_passes_concrete(pane) == lstm);
  activate("win.close-compare", NULL);
}

/* Issue 23: the keyboard walks the graph's edges: Alt+Up to the selected
 * node's producer, Alt+Right to its other producers, Alt+Down to a
 * consumer; Find's bar closes when another function's graph is shown. */
static void test_graph_walk(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.mode", "s", "graph");
  select_function("lstm_fn");
  run_with((const char *const[]){ "f32[10,10]:zeros", "f32[10,10]:zeros", "f32[10,10]:zeros", NULL });
  test_wait_for(pane_drawn, NULL, "the graph to be drawn");
  TsGraphView *view = shown_view();
  const ts_graph *g = ts_graph_view_get_graph(view);
  const ts_node *matmul = node_named(g, "lstm_cell/MatMul_1");
  g_assert_cmpint(ts_node_n_inputs(matmul), ==, 2);
  const ts_node *in0 = ts_graph_node(g, ts_node_input(matmul, 0).node);
  const ts_node *in1 = ts_graph_node(g, ts_node_input(matmul, 1).node);
  g_assert_true(in0 != in1);
  g_assert_true(ts_graph_view_reveal(view, matmul));
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(view), "view.walk-up", NULL));
  g_assert_true(view_selected_node(view) == in0);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(view), "view.walk-next", NULL));
  g_assert_true(view_selected_node(view) == in1);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(view), "view.walk-previous", NULL));
  g_assert_true(view_selected_node(view) == in0);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(view), "view.walk-down", NULL));
  g_assert_true(reads(view_selected_node(view), in0));
  /* the keys are the view's */
  GtkWidget *probe = GTK_WIDGET(view);
  g_assert_true(gtk_widget_activate_action(probe, "view.search", NULL));
  GtkWidget *bar = find_widget(probe, GTK_TYPE_REVEALER);
  g_assert_true(gtk_revealer_get_reveal_child(GTK_REVEALER(bar)));
  /* another function's graph: the bar and its query go */
  select_function("power");
  run_with((const char *const[]){ "f32[2,2]:ones", "2", NULL });
  test_wait_for(pane_drawn, NULL, "power's graph");
  g_assert_false(gtk_revealer_get_reveal_child(GTK_REVEALER(find_widget(GTK_WIDGET(shown_view()), GTK_TYPE_REVEALER))));
}

/* A graph pane bound to a workspace: an untraced function's page follows
 * the workspace's mode (its failed trace in graph and debug mode, "not
 * traced" in eager mode, where no graph is made); another page does not. */
static void test_graph_pane_follows_mode(void)
{
  g_autoptr(TsWorkspace) workspace = ts_workspace_new();
  GtkWidget *pane = g_object_ref_sink(g_object_new(TS_TYPE_GRAPH_PANE, "workspace", workspace, NULL));
  ts_graph_pane_show_untraced(TS_GRAPH_PANE(pane), "f", "no op named 'x'");
  g_assert_cmpstr(ts_graph_pane_get_status_title(TS_GRAPH_PANE(pane)), ==, "Tracing f Failed");
  ts_workspace_set_mode(workspace, "eager");
  g_assert_cmpstr(ts_graph_pane_get_status_title(TS_GRAPH_PANE(pane)), ==, "f Is Not Traced Yet");
  ts_workspace_set_mode(workspace, "debug");
  g_assert_cmpstr(ts_graph_pane_get_status_title(TS_GRAPH_PANE(pane)), ==, "Tracing f Failed");
  ts_graph_pane_show_status(TS_GRAPH_PANE(pane), NULL, NULL, NULL);
  ts_workspace_set_mode(workspace, "eager");
  g_assert_cmpstr(ts_graph_pane_get_status_title(TS_GRAPH_PANE(pane)), ==, "No Function Selected");
  g_object_unref(pane);
}

/* A failed trace's message shows as written: the engine's messages hold
 * "&x" and "<" (a TS_IF's listed variables), which are not markup. */
static void test_graph_pane_failure_text(void)
{
  GtkWidget *pane = g_object_ref_sink(g_object_new(TS_TYPE_GRAPH_PANE, NULL));
  const char *failure = "f.c:10: 'Add' was made inside a TS_IF block (If/then) and is used after it; "
                        "a value that leaves a block must be one of the block's listed variables (&x, ...) "
                        "<or none>";
  ts_graph_pane_show_untraced(TS_GRAPH_PANE(pane), "f", failure);
  g_assert_true(find_label(pane, failure));
  ts_graph_pane_show_status(TS_GRAPH_PANE(pane), NULL, "A & B", "x < y & z");
  g_assert_true(find_label(pane, "x < y & z"));
  g_object_unref(pane);
}

/* A module that exports no function: the page says so and how to export
 * one, rather than "pick a function in the sidebar" beside an empty one. */
static void test_graph_pane_module_without_functions(void)
{
  g_autoptr(TsWorkspace) workspace = ts_workspace_new();
  GtkWidget *pane = g_object_ref_sink(g_object_new(TS_TYPE_GRAPH_PANE, "workspace", workspace, NULL));
  g_assert_cmpstr(ts_graph_pane_get_status_title(TS_GRAPH_PANE(pane)), ==, "No Function Selected");
  g_autoptr(GPtrArray) none = g_ptr_array_new();
  g_autoptr(TsLoadedModule) module = ts_loaded_module_new("/tmp/my_module.so", "/tmp/my_module.so", "mine", none);
  ts_workspace_set_module(workspace, module);
  g_assert_cmpstr(ts_graph_pane_get_status_title(TS_GRAPH_PANE(pane)), ==, "No Functions");
  g_assert_true(find_label(pane, "my_module.so exports no functions: name them in its TS_MODULE(...) with "
                                 "TS_EXPORT(fn, x, ...)."));
  ts_workspace_set_module(workspace, NULL);
  g_assert_cmpstr(ts_graph_pane_get_status_title(TS_GRAPH_PANE(pane)), ==, "No Function Selected");
  g_object_unref(pane);
}

static gboolean pane_shows_graph(gpointer data)
{
  return ts_graph_pane_get_concrete(ts_window_get_graph_pane(window)) && pane_drawn(NULL);
}

static const char *pane_title(GtkWidget *pane)
{
  return ts_graph_pane_get_status_title(TS_GRAPH_PANE(pane));
}

/* A graph pane shows its workspace's selection: nothing, an untraced
 * function, its failed trace once the workspace has it (another
 * function's does not change the page), its graph once traced; setting a
 * row sets the workspace's function.  The window's template binds its
 * workspace's selection to the function list's. */
static void test_graph_pane_follows_selection(void)
{
  select_function("power");
  TsSidebarItem *item = ts_function_list_get_selected(ts_window_get_function_list(window));
  g_assert_nonnull(item);
  g_assert_cmpstr(pane_title(GTK_WIDGET(ts_window_get_graph_pane(window))), ==, "power Is Not Traced Yet");

  g_autoptr(TsWorkspace) workspace = ts_workspace_new();
  GtkWidget *pane = g_object_ref_sink(g_object_new(TS_TYPE_GRAPH_PANE, "workspace", workspace, NULL));
  g_assert_cmpstr(pane_title(pane), ==, "No Function Selected");
  ts_workspace_set_selected(workspace, item);
  g_assert_cmpstr(ts_workspace_get_function(workspace), ==, "power");
  g_assert_cmpstr(pane_title(pane), ==, "power Is Not Traced Yet");
  ts_workspace_set_trace_error(workspace, "power", "no op named 'x'");
  g_assert_cmpstr(pane_title(pane), ==, "Tracing power Failed");
  g_assert_cmpstr(ts_workspace_get_trace_error(workspace, "power"), ==, "no op named 'x'");
  ts_workspace_set_trace_error(workspace, "power", NULL);
  ts_workspace_set_trace_error(workspace, "lstm_fn", "no op named 'y'");
  g_assert_cmpstr(pane_title(pane), ==, "Tracing power Failed"); /* another function's: not shown again */
  ts_workspace_selection_changed(workspace);
  g_assert_cmpstr(pane_title(pane), ==, "power Is Not Traced Yet");

  /* the window's: a failed trace (power's matrix does not fit the variable it multiplies) says why */
  run_with((const char *const[]){ "f32[2,2]:ones", "2", NULL });
  g_assert_cmpstr(pane_title(GTK_WIDGET(ts_window_get_graph_pane(window))), ==, "Tracing power Failed");
  /* traced: the window's pane shows its graph, and this one once told the row's graph changed */
  run_with((const char *const[]){ "f32[10,10]:ones", "2", NULL });
  test_wait_for(pane_shows_graph, NULL, "power's graph");
  TsConcreteInfo *cf = ts_graph_pane_get_concrete(ts_window_get_graph_pane(window));
  g_assert_nonnull(cf);
  ts_workspace_set_selected(workspace, ts_function_list_get_selected(ts_window_get_function_list(window)));
  g_assert_null(pane_title(pane));
  g_assert_true(ts_graph_pane_get_concrete(TS_GRAPH_PANE(pane)) == cf);
  ts_workspace_set_selected(workspace, NULL);
  g_assert_cmpstr(pane_title(pane), ==, "No Function Selected");
  g_object_unref(pane);
}

int main(int argc, char **argv)
{
  return test_app_run(&argc, &argv, TRUE, (const TestAppCase[]){
    { "/app/graph-header", test_graph_header },
    { "/app/graph-pane-follows-mode", test_graph_pane_follows_mode },
    { "/app/graph-pane-failure-text", test_graph_pane_failure_text },
    { "/app/graph-pane-module-without-functions", test_graph_pane_module_without_functions },
    { "/app/graph-pane-follows-selection", test_graph_pane_follows_selection },
    { "/app/node-details", test_node_details },
    { "/app/node-details-subgraphs", test_node_details_subgraphs },
    { "/app/node-details-provenance", test_node_details_provenance },
    { "/app/node-details-gradient", test_node_details_gradient },
    { "/app/source-snippet", test_source_snippet },
    { "/app/node-details-source-missing", test_node_details_source_missing },
    { "/app/reopen-after-details-row", test_reopen_after_details_row },
    { "/app/compare-passes", test_compare_passes },
    { "/app/graph-walk", test_graph_walk },
    { NULL, NULL },
  });
}
