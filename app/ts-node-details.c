/* ts-node-details.c — the node details panel: one node's op, attributes,
 * producers and consumers, source lines and provenance. */
#include "ts-node-details.h"

#include <adwaita.h>
#include <gtksourceview/gtksource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts-source-snippet.h"

struct _TsNodeDetails {
  GtkWidget parent_instance;
  GtkStack *stack;
  GtkScrolledWindow *scrolled;
  GtkLabel *op_label;
  GtkLabel *name_label;
  GtkLabel *where_label;
  GtkWidget *attrs_section;
  GtkGrid *attrs_grid;
  GtkBox *inputs_body;
  GtkBox *outputs_body;
  GtkWidget *subgraphs_section;
  GtkBox *subgraphs_body;
  GtkLabel *location_label;
  GtkWidget *source_scrolled;
  GtkTextView *source_view;
  GtkSourceGutterRendererText *line_numbers;
  GtkLabel *source_note;
  GtkLabel *provenance_label;
  GtkBox *provenance_body;
  GtkLabel *device_label;
  GtkLabel *time_label;
  GtkLabel *value_label;
  AdwBin *value_bin;

  const ts_node *node;
  int first_line;   /* the number of the snippet's first line */
  TsEngineWorker *engine;  /* reads the source lines (ts_node_details_set_source) */
  char *module_file;
  GCancellable *source_cancellable; /* the read under way, if any */
};

enum { PROP_0, PROP_BUSY, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_ACTIVATE_NODE, SIGNAL_ACTIVATE_SUBGRAPH, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TsNodeDetails, ts_node_details, GTK_TYPE_WIDGET)

#define NOT_PROFILED "not profiled yet"

/* ---- focus --------------------------------------------------------------------- */

/* Takes the window's focus off widget and what it holds (a row of the node
 * shown so far, about to go) while they are still in the window: GTK 4.8
 * leaves the focus on a widget whose ancestor was unparented, and the next
 * focus change then fails (gtk_widget_is_ancestor criticals).  True if
 * the focus was there. */
static gboolean drop_focus_within(GtkWidget *widget)
{
  GtkRoot *root = gtk_widget_get_root(widget);
  GtkWidget *focus = root ? gtk_root_get_focus(root) : NULL;
  if (!focus || (focus != widget && !gtk_widget_is_ancestor(focus, widget)))
    return FALSE;
  gtk_root_set_focus(root, NULL);
  return TRUE;
}

/* ---- rows ------------------------------------------------------------------------- */

static void remove_children(GtkWidget *box)
{
  for (GtkWidget *child; (child = gtk_widget_get_first_child(box));)
    gtk_widget_unparent(child);
}

static GtkWidget *note_label(const char *text)
{
  GtkWidget *label = gtk_label_new(text);
  gtk_label_set_xalign(GTK_LABEL(label), 0);
  gtk_label_set_wrap(GTK_LABEL(label), TRUE);
  gtk_label_set_wrap_mode(GTK_LABEL(label), PANGO_WRAP_WORD_CHAR);
  gtk_widget_add_css_class(label, "dim-label");
  return label;
}

static GtkListBox *boxed_list(GtkBox *into)
{
  GtkWidget *list = gtk_list_box_new();
  gtk_list_box_set_selection_mode(GTK_LIST_BOX(list), GTK_SELECTION_NONE);
  gtk_widget_add_css_class(list, "boxed-list");
  gtk_box_append(into, list);
  return GTK_LIST_BOX(list);
}

/* A row of plain text (rows take markup: names are escaped). */
static AdwActionRow *add_row(GtkListBox *list, const char *title, const char *subtitle)
{
  AdwActionRow *row = ADW_ACTION_ROW(adw_action_row_new());
  g_autofree char *escaped_title = g_markup_escape_text(title, -1);
  adw_preferences_row_set_title(ADW_PREFERENCES_ROW(row), escaped_title);
  if (subtitle) {
    g_autofree char *escaped = g_markup_escape_text(subtitle, -1);
    adw_action_row_set_subtitle(row, escaped);
  }
  gtk_list_box_append(list, GTK_WIDGET(row));
  return row;
}

static void on_node_row_activated(AdwActionRow *row, TsNodeDetails *self)
{
  g_signal_emit(self, signals[SIGNAL_ACTIVATE_NODE], 0, g_object_get_data(G_OBJECT(row), "node"));
}

/* A row that selects `node` in the graph when activated. */
static AdwActionRow *add_node_row(TsNodeDetails *self, GtkListBox *list, const ts_node *node, const char *title,
                                  const char *subtitle)
{
  AdwActionRow *row = add_row(list, title, subtitle);
  gtk_list_box_row_set_activatable(GTK_LIST_BOX_ROW(row), TRUE);
  gtk_widget_set_tooltip_text(GTK_WIDGET(row), "Select it in the graph");
  adw_action_row_add_suffix(row, gtk_image_new_from_icon_name("go-next-symbolic"));
  g_object_set_data(G_OBJECT(row), "node", (gpointer)node);
  g_signal_connect(row, "activated", G_CALLBACK(on_node_row_activated), self);
  return row;
}

static char *port_type(const ts_node *n, int output)
{
  char *s = ts_shape_dtype_string(ts_node_output_dtype(n, output), ts_node_output_shape(n, output));
  char *text = g_strdup(s ? s : "?");
  free(s);
  return text;
}

/* "lstm_cell/Split:2"; a node of one output is named alone. */
static char *port_name(const ts_node *n, int output)
{
  return ts_node_n_outputs(n) == 1 ? g_strdup(ts_node_name(n)) : g_strdup_printf("%s:%d", ts_node_name(n), output);
}

/* ---- sections --------------------------------------------------------------------- */

static void show_header(TsNodeDetails *self, const ts_node *n)
{
  const ts_graph *g = ts_node_graph(n);
  gtk_label_set_label(self->op_label, ts_op_name(ts_node_op(n)));
  gtk_label_set_label(self->name_label, ts_node_name(n));
  const char *scope = ts_node_scope(n);
  const ts_node *of = ts_node_gradient_of(n);
  /* a subgraph's node without a scope is not at the top level: its graph says where */
  const char *level = *scope ? "scope " : ts_graph_parent(g) ? NULL : "top level";
  g_autofree char *where =
    g_strdup_printf("%s%s%snode %d of graph %s%s%s%s", level ? level : "", scope, level ? " · " : "",
                    ts_node_id(n), ts_graph_name(g),
                    ts_node_is_stateful(n) ? " · stateful: runs in program order" : "", of ? " · gradient of " : "",
                    of ? ts_node_name(of) : "");
  gtk_label_set_label(self->where_label, where);
}

static void show_attrs(TsNodeDetails *self, const ts_node *n)
{
  remove_children(GTK_WIDGET(self->attrs_grid));
  int count = ts_node_n_attrs(n);
  for (int i = 0; i < count; i++) {
    char *value = ts_node_attr_to_string(n, i);
    GtkWidget *key = gtk_label_new(ts_node_attr_name(n, i));
    gtk_label_set_xalign(GTK_LABEL(key), 0);
    gtk_label_set_yalign(GTK_LABEL(key), 0);
    gtk_widget_add_css_class(key, "dim-label");
    GtkWidget *val = gtk_label_new(value);
    free(value);
    gtk_label_set_xalign(GTK_LABEL(val), 0);
    gtk_label_set_selectable(GTK_LABEL(val), TRUE);
    gtk_label_set_wrap(GTK_LABEL(val), TRUE);
    gtk_label_set_wrap_mode(GTK_LABEL(val), PANGO_WRAP_WORD_CHAR);
    gtk_widget_set_hexpand(val, TRUE);
    gtk_widget_add_css_class(val, "monospace");
    gtk_grid_attach(self->attrs_grid, key, 0, i, 1, 1);
    gtk_grid_attach(self->attrs_grid, val, 1, i, 1, 1);
  }
  gtk_widget_set_visible(self->attrs_section, count > 0);
}

static void show_inputs(TsNodeDetails *self, const ts_node *n)
{
  remove_children(GTK_WIDGET(self->inputs_body));
  const ts_graph *g = ts_node_graph(n);
  int count = ts_node_n_inputs(n), controls = ts_node_n_control_inputs(n);
  if (count + controls == 0) {
    g_autofree char *text = ts_op_traits(ts_node_op(n)) & TS_OP_TRAIT_INPUT
                              ? g_strdup_printf("None: an input of graph %s", ts_graph_name(g))
                              : g_strdup("None");
    gtk_box_append(self->inputs_body, note_label(text));
    return;
  }
  GtkListBox *list = boxed_list(self->inputs_body);
  for (int i = 0; i < count; i++) {
    ts_port port = ts_node_input(n, i);
    const ts_node *producer = ts_graph_node(g, port.node);
    g_autofree char *title = port_name(producer, port.index);
    g_autofree char *type = port_type(producer, port.index);
    g_autofree char *subtitle = g_strdup_printf("input %d · %s · %s", i, ts_op_name(ts_node_op(producer)), type);
    add_node_row(self, list, producer, title, subtitle);
  }
  for (int i = 0; i < controls; i++) {
    const ts_node *producer = ts_graph_node(g, ts_node_control_input(n, i));
    g_autofree char *subtitle = g_strdup_printf("control dependency · %s", ts_op_name(ts_node_op(producer)));
    add_node_row(self, list, producer, ts_node_name(producer), subtitle);
  }
}

/* Each output with its type and what takes it: consumers (rows), the
 * graph's outputs, or nothing. */
static void show_outputs(TsNodeDetails *self, const ts_node *n)
{
  remove_children(GTK_WIDGET(self->outputs_body));
  const ts_graph *g = ts_node_graph(n);
  int id = ts_node_id(n), n_nodes = ts_graph_n_nodes(g);
  for (int out = 0; out < ts_node_n_outputs(n); out++) {
    g_autofree char *type = port_type(n, out);
    g_autofree char *heading = g_strdup_printf("Output %d · %s", out, type);
    GtkWidget *label = gtk_label_new(heading);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_widget_add_css_class(label, "monospace");
    gtk_box_append(self->outputs_body, label);
    GtkListBox *list = NULL;
    for (int k = 0; k < ts_graph_n_outputs(g); k++) {
      ts_port port = ts_graph_output(g, k);
      if (port.node == id && port.index == out) {
        list = list ? list : boxed_list(self->outputs_body);
        g_autofree char *title = g_strdup_printf("output %d of graph %s", k, ts_graph_name(g));
        add_row(list, title, "returned to the caller");
      }
    }
    for (int c = id + 1; c < n_nodes; c++) { /* node order is topological */
      const ts_node *consumer = ts_graph_node(g, c);
      for (int j = 0; j < ts_node_n_inputs(consumer); j++) {
        ts_port port = ts_node_input(consumer, j);
        if (port.node != id || port.index != out)
          continue;
        list = list ? list : boxed_list(self->outputs_body);
        g_autofree char *subtitle = g_strdup_printf("its input %d · %s", j, ts_op_name(ts_node_op(consumer)));
        add_node_row(self, list, consumer, ts_node_name(consumer), subtitle);
      }
    }
    if (!list)
      gtk_box_append(self->outputs_body, note_label("Not used"));
  }
  GtkListBox *list = NULL;
  for (int c = id + 1; c < n_nodes; c++) {
    const ts_node *consumer = ts_graph_node(g, c);
    for (int j = 0; j < ts_node_n_control_inputs(consumer); j++)
      if (ts_node_control_input(consumer, j) == id) {
        if (!list) {
          GtkWidget *label = gtk_label_new("Runs before");
          gtk_label_set_xalign(GTK_LABEL(label), 0);
          gtk_box_append(self->outputs_body, label);
          list = boxed_list(self->outputs_body);
        }
        g_autofree char *subtitle = g_strdup_printf("control dependency · %s", ts_op_name(ts_node_op(consumer)));
        add_node_row(self, list, consumer, ts_node_name(consumer), subtitle);
      }
  }
  if (ts_node_n_outputs(n) == 0 && !list)
    gtk_box_append(self->outputs_body, note_label("None"));
}

static void on_subgraph_row_activated(AdwActionRow *row, TsNodeDetails *self)
{
  int index = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(row), "subgraph"));
  g_signal_emit(self, signals[SIGNAL_ACTIVATE_SUBGRAPH], 0, (gpointer)self->node, index);
}

static void show_subgraphs(TsNodeDetails *self, const ts_node *n)
{
  remove_children(GTK_WIDGET(self->subgraphs_body));
  int count = ts_node_n_subgraphs(n);
  gtk_widget_set_visible(self->subgraphs_section, count > 0);
  if (count == 0)
    return;
  GtkListBox *list = boxed_list(self->subgraphs_body);
  for (int i = 0; i < count; i++) {
    const ts_graph *sub = ts_node_subgraph(n, i);
    const char *name = ts_op_subgraph_name(ts_node_op(n), i);
    g_autofree char *subtitle = g_strdup_printf("graph %s · %d nodes", ts_graph_name(sub), ts_graph_n_nodes(sub));
    AdwActionRow *row = add_row(list, name ? name : ts_graph_name(sub), subtitle);
    gtk_list_box_row_set_activatable(GTK_LIST_BOX_ROW(row), TRUE);
    gtk_widget_set_tooltip_text(GTK_WIDGET(row), "Open it in the graph");
    adw_action_row_add_suffix(row, gtk_image_new_from_icon_name("go-next-symbolic"));
    g_object_set_data(G_OBJECT(row), "subgraph", GINT_TO_POINTER(i));
    g_signal_connect(row, "activated", G_CALLBACK(on_subgraph_row_activated), self);
  }
}

/* "fused from MatMul, Add, Relu": what the passes made of the nodes an
 * optimized node stands for (as tracescope-cli graph --passes says it). */
static char *made_from(const ts_node *n, const ts_node *const *origins, int count)
{
  GString *s = g_string_new(ts_node_op(n) == TS_OP_CONST ? "folded" : count > 1 ? "fused" : "made");
  g_string_append(s, " from ");
  for (int i = 0; i < count; i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", ts_op_name(ts_node_op(origins[i])));
  return g_string_free(s, FALSE);
}

/* n stands for origins: n itself (a traced node), or the nodes an
 * optimization replaced with it. */
static void show_origins(TsNodeDetails *self, const ts_node *n, const ts_node *const *origins, int count)
{
  remove_children(GTK_WIDGET(self->provenance_body));
  if (count == 1 && origins[0] == n) {
    gtk_label_set_label(self->provenance_label,
                        ts_node_has_eager_twin(n)
                          ? "Traced from the code: run eagerly, the op written there is this node's eager "
                            "twin (profiles and the debugger match the two)."
                          : "Made by the engine while tracing (a graph input, a lifted constant, a "
                            "variable handle or read, or a loop counter): no eager op matches it.");
    return;
  }
  g_autofree char *from = count > 0 ? made_from(n, origins, count) : NULL;
  g_autofree char *text =
    count == 0 ? g_strdup("Made by an optimization: it stands for no traced node.")
               : g_strdup_printf("Made by an optimization, %s: it stands for %d traced node%s.", from, count,
                                 count == 1 ? "" : "s");
  gtk_label_set_label(self->provenance_label, text);
  if (count == 0)
    return;
  GtkListBox *list = boxed_list(self->provenance_body);
  for (int i = 0; i < count; i++) {
    g_autofree char *subtitle =
      g_strdup_printf("%s in graph %s", ts_op_name(ts_node_op(origins[i])), ts_graph_name(ts_node_graph(origins[i])));
    add_node_row(self, list, origins[i], ts_node_name(origins[i]), subtitle);
  }
}

static void show_provenance(TsNodeDetails *self, const ts_node *n)
{
  int count = ts_node_n_origins(n);
  g_autofree const ts_node **origins = g_new(const ts_node *, MAX(count, 1));
  for (int i = 0; i < count; i++)
    origins[i] = ts_node_origin(n, i);
  show_origins(self, n, origins, count);
}

/* ---- source ----------------------------------------------------------------------- */

static void set_busy(TsNodeDetails *self, GCancellable *cancellable)
{
  gboolean was = self->source_cancellable != NULL;
  if (self->source_cancellable)
    g_cancellable_cancel(self->source_cancellable);
  g_clear_object(&self->source_cancellable);
  self->source_cancellable = cancellable;
  if (was != (cancellable != NULL))
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
}

static void show_source_note(TsNodeDetails *self, const char *text)
{
  gtk_label_set_label(self->source_note, text);
  gtk_widget_set_visible(GTK_WIDGET(self->source_note), text != NULL);
  gtk_widget_set_visible(self->source_scrolled, FALSE);
}

/* The indentation all non-blank lines share, in bytes (spaces and tabs). */
static size_t common_indent(char **lines)
{
  size_t indent = G_MAXSIZE;
  for (char **l = lines; *l; l++) {
    size_t n = strspn(*l, " \t");
    if ((*l)[n])
      indent = MIN(indent, n);
  }
  return indent == G_MAXSIZE ? 0 : indent;
}

/* The snippet dedented, its lines numbered in the gutter as in the file,
 * the node's line highlighted. */
static void show_snippet(TsNodeDetails *self, const TsSourceSnippet *snippet)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer(self->source_view);
  gtk_text_buffer_set_text(buffer, "", 0);
  self->first_line = snippet->first_line;
  char widest[16];
  snprintf(widest, sizeof widest, "%d", snippet->first_line + (int)g_strv_length(snippet->lines) - 1);
  int width = 0;
  gtk_source_gutter_renderer_text_measure(self->line_numbers, widest, &width, NULL);
  gtk_widget_set_size_request(GTK_WIDGET(self->line_numbers),
                              width + 2 * gtk_source_gutter_renderer_get_xpad(GTK_SOURCE_GUTTER_RENDERER(self->line_numbers)),
                              -1);
  size_t indent = common_indent(snippet->lines);
  GtkTextIter end;
  for (int i = 0; snippet->lines[i]; i++) {
    const char *code = strlen(snippet->lines[i]) > indent ? snippet->lines[i] + indent : "";
    g_autofree char *text = g_strconcat(code, snippet->lines[i + 1] ? "\n" : "", NULL);
    gtk_text_buffer_get_end_iter(buffer, &end);
    gtk_text_buffer_insert_with_tags_by_name(buffer, &end, text, -1, "code",
                                             snippet->first_line + i == snippet->line ? "current" : NULL, NULL);
  }
  gtk_widget_set_tooltip_text(self->source_scrolled, snippet->path);
  gtk_widget_set_visible(GTK_WIDGET(self->source_note), FALSE);
  gtk_widget_set_visible(self->source_scrolled, TRUE);
}

static void on_query_line_number(GtkSourceGutterRendererText *renderer, GObject *lines, guint line,
                                 TsNodeDetails *self)
{
  char text[16];
  int n = snprintf(text, sizeof text, "%d", self->first_line + (int)line);
  gtk_source_gutter_renderer_text_set_text(renderer, text, n);
}

/* C highlighting in the style scheme that matches the app's style. */
static void update_style_scheme(TsNodeDetails *self)
{
  gboolean dark = adw_style_manager_get_dark(adw_style_manager_get_default());
  GtkSourceStyleScheme *scheme = gtk_source_style_scheme_manager_get_scheme(
    gtk_source_style_scheme_manager_get_default(), dark ? "Adwaita-dark" : "Adwaita");
  gtk_source_buffer_set_style_scheme(GTK_SOURCE_BUFFER(gtk_text_view_get_buffer(self->source_view)), scheme);
}

static void on_source_read(GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TsSourceSnippet) snippet = source ? ts_engine_worker_read_source_finish(TS_ENGINE_WORKER(source), result,
                                                                                    &error)
                                             : ts_source_snippet_read_finish(result, &error);
  if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) /* another node since, or disposed */
    return;
  TsNodeDetails *self = user_data;
  if (snippet)
    show_snippet(self, snippet);
  else
    show_source_note(self, error->message);
  set_busy(self, NULL);
}

static void show_source(TsNodeDetails *self, const ts_node *n)
{
  ts_loc loc = ts_node_loc(n);
  set_busy(self, NULL);
  if (!loc.file) {
    gtk_label_set_label(self->location_label, "No source location");
    gtk_widget_set_tooltip_text(GTK_WIDGET(self->location_label), NULL);
    show_source_note(self, "The engine made this node itself: no line of code wrote it.");
    return;
  }
  g_autofree char *base = g_path_get_basename(loc.file);
  g_autofree char *where = g_strdup_printf("%s:%d%s%s%s", base, loc.line, loc.func ? " in " : "",
                                           loc.func ? loc.func : "", loc.func ? "()" : "");
  gtk_label_set_label(self->location_label, where);
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->location_label), loc.file);
  if (loc.line <= 0) {
    show_source_note(self, "The location has no line number.");
    return;
  }
  g_autofree char *reading = g_strdup_printf("Reading %s…", base);
  show_source_note(self, reading);
  GCancellable *cancellable = g_cancellable_new();
  set_busy(self, cancellable);
  /* a read cancelled (another node, or dispose) reports so even if it had finished, and the
   * callback then returns at once: when it goes on, self is alive */
  if (self->engine) {
    ts_engine_worker_read_source_async(self->engine, self->module_file, loc.file, loc.line, TS_NODE_DETAILS_CONTEXT,
                                       cancellable, on_source_read, self);
    return;
  }
  g_auto(GStrv) dirs = ts_source_search_dirs(self->module_file); /* no worker given: here */
  ts_source_snippet_read_async(loc.file, loc.line, TS_NODE_DETAILS_CONTEXT, (const char *const *)dirs, cancellable,
                               on_source_read, self);
}

/* ---- public ----------------------------------------------------------------------- */

GtkWidget *ts_node_details_new(void)
{
  return g_object_new(TS_TYPE_NODE_DETAILS, NULL);
}

void ts_node_details_set_timing(TsNodeDetails *self, const char *device, gint64 last_ns)
{
  g_return_if_fail(TS_IS_NODE_DETAILS(self));
  gboolean known = device != NULL && last_ns >= 0;
  gtk_label_set_label(self->device_label, known ? device : NOT_PROFILED);
  g_autofree char *time = known ? g_strdup_printf("%.3f ms", (double)last_ns / 1e6) : g_strdup(NOT_PROFILED);
  gtk_label_set_label(self->time_label, time);
  gtk_widget_set_css_classes(GTK_WIDGET(self->device_label), known ? NULL : (const char *[]){ "dim-label", NULL });
  gtk_widget_set_css_classes(GTK_WIDGET(self->time_label), known ? NULL : (const char *[]){ "dim-label", NULL });
}

void ts_node_details_set_value_view(TsNodeDetails *self, GtkWidget *view)
{
  g_return_if_fail(TS_IS_NODE_DETAILS(self));
  g_return_if_fail(view == NULL || GTK_IS_WIDGET(view));
  adw_bin_set_child(self->value_bin, view);
  gtk_widget_set_visible(GTK_WIDGET(self->value_bin), view != NULL);
  gtk_widget_set_visible(GTK_WIDGET(self->value_label), view == NULL);
}

void ts_node_details_set_node(TsNodeDetails *self, const ts_node *node)
{
  g_return_if_fail(TS_IS_NODE_DETAILS(self));
  /* a row activated (a producer asked for) has the focus: it goes on to the new node's first row */
  gboolean had_focus = drop_focus_within(GTK_WIDGET(self->stack));
  self->node = node;
  ts_node_details_set_timing(self, NULL, -1);
  ts_node_details_set_value_view(self, NULL);
  if (!node) {
    set_busy(self, NULL);
    gtk_stack_set_visible_child_name(self->stack, "empty");
    return;
  }
  show_header(self, node);
  show_attrs(self, node);
  show_inputs(self, node);
  show_outputs(self, node);
  show_subgraphs(self, node);
  show_provenance(self, node);
  show_source(self, node);
  gtk_adjustment_set_value(gtk_scrolled_window_get_vadjustment(self->scrolled), 0);
  gtk_stack_set_visible_child_name(self->stack, "node");
  if (had_focus)
    gtk_widget_child_focus(GTK_WIDGET(self->scrolled), GTK_DIR_TAB_FORWARD);
}

void ts_node_details_set_origins(TsNodeDetails *self, const ts_node *const *origins, int n_origins)
{
  g_return_if_fail(TS_IS_NODE_DETAILS(self) && self->node != NULL);
  g_return_if_fail(n_origins >= 0 && (origins != NULL || n_origins == 0));
  drop_focus_within(GTK_WIDGET(self->provenance_body));
  show_origins(self, self->node, origins, n_origins);
}

const ts_node *ts_node_details_get_node(TsNodeDetails *self)
{
  g_return_val_if_fail(TS_IS_NODE_DETAILS(self), NULL);
  return self->node;
}

void ts_node_details_set_source(TsNodeDetails *self, TsEngineWorker *engine, const char *module_file)
{
  g_return_if_fail(TS_IS_NODE_DETAILS(self));
  g_set_object(&self->engine, engine);
  g_free(self->module_file);
  self->module_file = g_strdup(module_file);
}

gboolean ts_node_details_get_busy(TsNodeDetails *self)
{
  g_return_val_if_fail(TS_IS_NODE_DETAILS(self), FALSE);
  return self->source_cancellable != NULL;
}

/* ---- life cycle ------------------------------------------------------------------- */

static void ts_node_details_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TsNodeDetails *self = TS_NODE_DETAILS(object);
  switch (prop_id) {
  case PROP_BUSY: g_value_set_boolean(value, ts_node_details_get_busy(self)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_node_details_dispose(GObject *object)
{
  TsNodeDetails *self = TS_NODE_DETAILS(object);
  g_clear_object(&self->engine);
  if (self->source_cancellable)
    g_cancellable_cancel(self->source_cancellable);
  g_clear_object(&self->source_cancellable);
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_NODE_DETAILS);
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  G_OBJECT_CLASS(ts_node_details_parent_class)->dispose(object);
}

static void ts_node_details_finalize(GObject *object)
{
  g_free(TS_NODE_DETAILS(object)->module_file);
  G_OBJECT_CLASS(ts_node_details_parent_class)->finalize(object);
}

static void ts_node_details_class_init(TsNodeDetailsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = ts_node_details_dispose;
  object_class->finalize = ts_node_details_finalize;
  object_class->get_property = ts_node_details_get_property;

  properties[PROP_BUSY] = g_param_spec_boolean("busy", NULL, NULL, FALSE,
                                               G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
  signals[SIGNAL_ACTIVATE_NODE] = g_signal_new("activate-node", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                               NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
  signals[SIGNAL_ACTIVATE_SUBGRAPH] = g_signal_new("activate-subgraph", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                                   0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_POINTER, G_TYPE_INT);

  gtk_source_init();
  g_type_ensure(GTK_SOURCE_TYPE_VIEW);
  gtk_widget_class_set_template_from_resource(widget_class, "/io/github/tracescope/Tracescope/ts-node-details.ui");
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, stack);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, scrolled);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, op_label);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, name_label);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, where_label);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, attrs_section);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, attrs_grid);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, inputs_body);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, outputs_body);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, subgraphs_section);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, subgraphs_body);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, location_label);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, source_scrolled);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, source_view);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, source_note);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, provenance_label);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, provenance_body);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, device_label);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, time_label);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, value_label);
  gtk_widget_class_bind_template_child(widget_class, TsNodeDetails, value_bin);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "tsnodedetails");
}

static void ts_node_details_init(TsNodeDetails *self)
{
  gtk_widget_init_template(GTK_WIDGET(self));
  GtkTextBuffer *buffer = gtk_text_view_get_buffer(self->source_view);
  gtk_text_buffer_create_tag(buffer, "code", "insert-hyphens", FALSE, NULL); /* a '-' would read as code */
  gtk_text_buffer_create_tag(buffer, "current", "paragraph-background", "rgba(53,132,228,0.22)", NULL);
  GtkSourceLanguage *c = gtk_source_language_manager_get_language(gtk_source_language_manager_get_default(), "c");
  gtk_source_buffer_set_language(GTK_SOURCE_BUFFER(buffer), c);
  gtk_source_buffer_set_highlight_matching_brackets(GTK_SOURCE_BUFFER(buffer), FALSE);
  g_signal_connect_object(adw_style_manager_get_default(), "notify::dark", G_CALLBACK(update_style_scheme), self,
                          G_CONNECT_SWAPPED);
  update_style_scheme(self);
  self->line_numbers = GTK_SOURCE_GUTTER_RENDERER_TEXT(gtk_source_gutter_renderer_text_new());
  gtk_source_gutter_renderer_set_xpad(GTK_SOURCE_GUTTER_RENDERER(self->line_numbers), 6);
  gtk_source_gutter_renderer_set_xalign(GTK_SOURCE_GUTTER_RENDERER(self->line_numbers), 1.0);
  gtk_widget_add_css_class(GTK_WIDGET(self->line_numbers), "dim-label");
  g_signal_connect(self->line_numbers, "query-data", G_CALLBACK(on_query_line_number), self);
  gtk_source_gutter_insert(gtk_source_view_get_gutter(GTK_SOURCE_VIEW(self->source_view), GTK_TEXT_WINDOW_LEFT),
                           GTK_SOURCE_GUTTER_RENDERER(self->line_numbers), 0);
  ts_node_details_set_node(self, NULL);
}
