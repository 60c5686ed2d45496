/* ts-call-tree.c — the Call Tree page: a GtkColumnView over a
 * GtkTreeListModel whose items are nodes of a shared tsp_tree (each
 * node's children made when it is first expanded). */
#include "ts-call-tree.h"

#include "ts-profile-values.h"

/* The tree, shared by the widget and the rows GTK may still hold. */
typedef struct {
  tsp_tree *tree;
} TreeRef;

static void tree_ref_clear(gpointer p)
{
  tsp_tree_free(((TreeRef *)p)->tree);
}

#define TS_TYPE_CALL_TREE_ROW (ts_call_tree_row_get_type())
G_DECLARE_FINAL_TYPE(TsCallTreeRow, ts_call_tree_row, TS, CALL_TREE_ROW, GObject)

struct _TsCallTreeRow {
  GObject parent_instance;
  TreeRef *ref;
  int node;
};

G_DEFINE_FINAL_TYPE(TsCallTreeRow, ts_call_tree_row, G_TYPE_OBJECT)

static void ts_call_tree_row_finalize(GObject *object)
{
  g_rc_box_release_full(TS_CALL_TREE_ROW(object)->ref, tree_ref_clear);
  G_OBJECT_CLASS(ts_call_tree_row_parent_class)->finalize(object);
}

static void ts_call_tree_row_class_init(TsCallTreeRowClass *klass)
{
  G_OBJECT_CLASS(klass)->finalize = ts_call_tree_row_finalize;
}

static void ts_call_tree_row_init(TsCallTreeRow *self) {}

static const tsp_tree_node *row_node(const TsCallTreeRow *r)
{
  return &r->ref->tree->nodes[r->node];
}

/* The rows of the nodes linked from first (by next_sibling); NULL if none. */
static GListModel *rows_from(TreeRef *ref, int first)
{
  if (first < 0)
    return NULL;
  GListStore *store = g_list_store_new(TS_TYPE_CALL_TREE_ROW);
  for (int i = first; i >= 0; i = ref->tree->nodes[i].next_sibling) {
    TsCallTreeRow *r = g_object_new(TS_TYPE_CALL_TREE_ROW, NULL);
    r->ref = g_rc_box_acquire(ref);
    r->node = i;
    g_list_store_append(store, r);
    g_object_unref(r);
  }
  return G_LIST_MODEL(store);
}

static GListModel *children_of(gpointer item, gpointer data)
{
  TsCallTreeRow *r = item;
  return rows_from(r->ref, row_node(r)->first_child);
}

/* ---- columns ------------------------------------------------------------------------- */

typedef enum { COL_NAME, COL_RUNS, COL_TOTAL, COL_SELF, COL_SHARE } ColumnKind;

static const struct {
  const char *title;
  ColumnKind kind;
} COLUMNS[] = {
  { "Name", COL_NAME }, { "Runs", COL_RUNS }, { "Total", COL_TOTAL }, { "Self", COL_SELF },
  { "Total of Wall", COL_SHARE },
};

static TsCallTreeRow *item_row(GtkListItem *item)
{
  GtkTreeListRow *row = gtk_list_item_get_item(item);
  return row ? gtk_tree_list_row_get_item(row) : NULL; /* a new reference */
}

static void setup_cell(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  ColumnKind kind = GPOINTER_TO_INT(data);
  GtkWidget *label = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(label), kind == COL_NAME ? 0 : 1);
  if (kind == COL_NAME) {
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
    GtkWidget *expander = gtk_tree_expander_new();
    gtk_tree_expander_set_child(GTK_TREE_EXPANDER(expander), label);
    gtk_list_item_set_child(item, expander);
  } else {
    gtk_widget_add_css_class(label, "numeric");
    gtk_list_item_set_child(item, label);
  }
}

static void bind_cell(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  ColumnKind kind = GPOINTER_TO_INT(data);
  g_autoptr(TsCallTreeRow) r = item_row(item);
  GtkWidget *child = gtk_list_item_get_child(item);
  if (!r)
    return;
  const tsp_tree_node *n = row_node(r);
  g_autofree char *text = NULL;
  switch (kind) {
  case COL_NAME:
    gtk_tree_expander_set_list_row(GTK_TREE_EXPANDER(child), gtk_list_item_get_item(item));
    child = gtk_tree_expander_get_child(GTK_TREE_EXPANDER(child));
    text = g_strdup(n->name);
    gtk_widget_set_tooltip_text(child, n->name);
    break;
  case COL_RUNS: text = g_strdup_printf("%" G_GUINT64_FORMAT, n->count); break;
  case COL_TOTAL: text = ts_profile_format_ns(n->total_ns); break;
  case COL_SELF: text = ts_profile_format_ns(n->self_ns); break;
  case COL_SHARE:
    text = g_strdup_printf("%.1f %%", r->ref->tree->wall_ns > 0 ? 100 * n->total_ns / r->ref->tree->wall_ns : 0);
    break;
  }
  gtk_label_set_label(GTK_LABEL(child), text);
}

/* ---- the widget ---------------------------------------------------------------------- */

struct _TsCallTree {
  GtkWidget parent_instance;
  GtkWidget *scroller;
  GtkColumnView *view;
  GtkSingleSelection *selection;
  TreeRef *ref; /* NULL: no tree */
};

G_DEFINE_FINAL_TYPE(TsCallTree, ts_call_tree, GTK_TYPE_WIDGET)

void ts_call_tree_set_tree(TsCallTree *self, tsp_tree *tree)
{
  g_return_if_fail(TS_IS_CALL_TREE(self));
  if (self->ref)
    g_rc_box_release_full(g_steal_pointer(&self->ref), tree_ref_clear);
  GListModel *roots = NULL;
  if (tree) {
    self->ref = g_rc_box_new0(TreeRef);
    self->ref->tree = tree;
    roots = rows_from(self->ref, tree->first_root);
  }
  if (!roots)
    roots = G_LIST_MODEL(g_list_store_new(TS_TYPE_CALL_TREE_ROW));
  GtkTreeListModel *model = gtk_tree_list_model_new(roots, FALSE, FALSE, children_of, NULL, NULL);
  gtk_single_selection_set_model(self->selection, G_LIST_MODEL(model));
  /* the heaviest path open: each level's largest child, a few levels down */
  for (guint i = 0, depth = 0; depth < 6; depth++) {
    g_autoptr(GtkTreeListRow) row = gtk_tree_list_model_get_row(model, i);
    if (!row || !gtk_tree_list_row_is_expandable(row))
      break;
    gtk_tree_list_row_set_expanded(row, TRUE);
    i++; /* its first child: the largest */
  }
  g_object_unref(model);
}

const tsp_tree *ts_call_tree_get_tree(TsCallTree *self)
{
  g_return_val_if_fail(TS_IS_CALL_TREE(self), NULL);
  return self->ref ? self->ref->tree : NULL;
}

guint ts_call_tree_get_n_rows(TsCallTree *self)
{
  g_return_val_if_fail(TS_IS_CALL_TREE(self), 0);
  return g_list_model_get_n_items(G_LIST_MODEL(self->selection));
}

int ts_call_tree_get_node(TsCallTree *self, guint i)
{
  g_return_val_if_fail(TS_IS_CALL_TREE(self), -1);
  g_autoptr(GtkTreeListRow) row = g_list_model_get_item(G_LIST_MODEL(self->selection), i);
  g_autoptr(TsCallTreeRow) r = row ? gtk_tree_list_row_get_item(row) : NULL;
  return r ? r->node : -1;
}

static void ts_call_tree_dispose(GObject *object)
{
  TsCallTree *self = TS_CALL_TREE(object);
  g_clear_pointer(&self->scroller, gtk_widget_unparent);
  if (self->ref)
    g_rc_box_release_full(g_steal_pointer(&self->ref), tree_ref_clear);
  G_OBJECT_CLASS(ts_call_tree_parent_class)->dispose(object);
}

static void ts_call_tree_class_init(TsCallTreeClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = ts_call_tree_dispose;
  gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "tscalltree");
}

static void ts_call_tree_init(TsCallTree *self)
{
  self->selection = gtk_single_selection_new(NULL);
  gtk_single_selection_set_autoselect(self->selection, FALSE);
  gtk_single_selection_set_can_unselect(self->selection, TRUE);
  self->view = GTK_COLUMN_VIEW(gtk_column_view_new(GTK_SELECTION_MODEL(self->selection)));
  gtk_widget_add_css_class(GTK_WIDGET(self->view), "data-table");
  for (size_t i = 0; i < G_N_ELEMENTS(COLUMNS); i++) {
    GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
    g_signal_connect(factory, "setup", G_CALLBACK(setup_cell), GINT_TO_POINTER(COLUMNS[i].kind));
    g_signal_connect(factory, "bind", G_CALLBACK(bind_cell), GINT_TO_POINTER(COLUMNS[i].kind));
    GtkColumnViewColumn *col = gtk_column_view_column_new(COLUMNS[i].title, factory);
    gtk_column_view_column_set_expand(col, COLUMNS[i].kind == COL_NAME);
    gtk_column_view_column_set_resizable(col, TRUE);
    gtk_column_view_append_column(self->view, col);
    g_object_unref(col);
  }
  self->scroller = gtk_scrolled_window_new();
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(self->scroller), GTK_WIDGET(self->view));
  gtk_widget_set_parent(self->scroller, GTK_WIDGET(self));
  ts_call_tree_set_tree(self, NULL);
}

TsCallTree *ts_call_tree_new(void)
{
  return g_object_new(TS_TYPE_CALL_TREE, NULL);
}
