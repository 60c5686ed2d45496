/* ts-tensor-view-table.c — TsTensorTable: the inspector's value table.  A
 * GtkColumnView over one page of a 2-D slice (TS_TENSOR_TABLE_PAGE_ROWS
 * rows × TS_TENSOR_TABLE_PAGE_COLS columns), an index column first, and a
 * bar to move between pages.  Rows are made only when the view asks for
 * them (a list model with no storage) and recycled as it scrolls: no
 * widget per element, whatever the tensor's size. */
#include "ts-tensor-view-private.h"

#include <glib/gi18n.h>

/* ---- rows: a list model of row numbers, items made on demand ---------- */

#define TS_TYPE_TENSOR_ROW (ts_tensor_row_get_type())
G_DECLARE_FINAL_TYPE(TsTensorRow, ts_tensor_row, TS, TENSOR_ROW, GObject)
struct _TsTensorRow {
  GObject parent_instance;
  int64_t row; /* in the slice */
};
G_DEFINE_FINAL_TYPE(TsTensorRow, ts_tensor_row, G_TYPE_OBJECT)
static void ts_tensor_row_class_init(TsTensorRowClass *klass) {}
static void ts_tensor_row_init(TsTensorRow *self) {}

#define TS_TYPE_TENSOR_ROWS (ts_tensor_rows_get_type())
G_DECLARE_FINAL_TYPE(TsTensorRows, ts_tensor_rows, TS, TENSOR_ROWS, GObject)
struct _TsTensorRows {
  GObject parent_instance;
  int64_t first;
  guint n;
};

static GType rows_get_item_type(GListModel *model) { return TS_TYPE_TENSOR_ROW; }
static guint rows_get_n_items(GListModel *model) { return TS_TENSOR_ROWS(model)->n; }

static gpointer rows_get_item(GListModel *model, guint position)
{
  TsTensorRows *self = TS_TENSOR_ROWS(model);
  if (position >= self->n)
    return NULL;
  TsTensorRow *row = g_object_new(TS_TYPE_TENSOR_ROW, NULL);
  row->row = self->first + position;
  return row;
}

static void rows_list_model_init(GListModelInterface *iface)
{
  iface->get_item_type = rows_get_item_type;
  iface->get_n_items = rows_get_n_items;
  iface->get_item = rows_get_item;
}

G_DEFINE_FINAL_TYPE_WITH_CODE(TsTensorRows, ts_tensor_rows, G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_LIST_MODEL, rows_list_model_init))
static void ts_tensor_rows_class_init(TsTensorRowsClass *klass) {}
static void ts_tensor_rows_init(TsTensorRows *self) {}

static GListModel *rows_new(int64_t first, guint n)
{
  TsTensorRows *rows = g_object_new(TS_TYPE_TENSOR_ROWS, NULL);
  rows->first = first;
  rows->n = n;
  return G_LIST_MODEL(rows);
}

/* ---- the table ------------------------------------------------------- */

struct _TsTensorTable {
  GtkWidget parent_instance;
  GtkColumnView *columns;
  GtkWidget *page_bar;
  GtkLabel *page_label;
  GtkWidget *prev_rows, *next_rows, *prev_cols, *next_cols;
  ts_tensor *tensor;
  ts_tensor_slice slice;
  guint row_page, col_page;
};

G_DEFINE_FINAL_TYPE(TsTensorTable, ts_tensor_table, GTK_TYPE_WIDGET)

GtkWidget *ts_tensor_table_new(void)
{
  return g_object_new(TS_TYPE_TENSOR_TABLE, NULL);
}

static guint n_pages(int64_t n, int per_page)
{
  return (guint)MAX((n + per_page - 1) / per_page, 1);
}

void ts_tensor_table_get_pages(TsTensorTable *self, guint *n_row_pages, guint *n_col_pages)
{
  g_return_if_fail(TS_IS_TENSOR_TABLE(self));
  gboolean any = self->tensor != NULL;
  *n_row_pages = any ? n_pages(ts_tensor_slice_rows(&self->slice), TS_TENSOR_TABLE_PAGE_ROWS) : 0;
  *n_col_pages = any ? n_pages(ts_tensor_slice_cols(&self->slice), TS_TENSOR_TABLE_PAGE_COLS) : 0;
}

guint ts_tensor_table_get_n_columns(TsTensorTable *self)
{
  g_return_val_if_fail(TS_IS_TENSOR_TABLE(self), 0);
  return g_list_model_get_n_items(gtk_column_view_get_columns(self->columns));
}

char *_ts_tensor_table_dup_cell_text(TsTensorTable *self, int64_t row, int64_t col)
{
  g_return_val_if_fail(TS_IS_TENSOR_TABLE(self), NULL);
  int64_t r0 = (int64_t)self->row_page * TS_TENSOR_TABLE_PAGE_ROWS;
  int64_t c0 = (int64_t)self->col_page * TS_TENSOR_TABLE_PAGE_COLS;
  if (!self->tensor || row < r0 || row >= MIN(r0 + TS_TENSOR_TABLE_PAGE_ROWS, ts_tensor_slice_rows(&self->slice)) ||
      col < c0 || col >= MIN(c0 + TS_TENSOR_TABLE_PAGE_COLS, ts_tensor_slice_cols(&self->slice)))
    return NULL;
  char buf[256];
  ts_tensor_format_element(self->tensor, ts_tensor_slice_offset(&self->slice, row, col), buf, sizeof buf);
  return g_strdup(buf);
}

static void on_cell_setup(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  GtkWidget *label = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(label), 1);
  gtk_widget_add_css_class(label, "numeric");
  if (GPOINTER_TO_INT(g_object_get_data(G_OBJECT(factory), "col")) < 0)
    gtk_widget_add_css_class(label, "dim-label");
  gtk_list_item_set_child(item, label);
}

/* Column "col" of the factory: the slice column, or -1 for the index. */
static void on_cell_bind(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  TsTensorTable *self = data;
  TsTensorRow *row = gtk_list_item_get_item(item);
  int col = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(factory), "col"));
  GtkLabel *label = GTK_LABEL(gtk_list_item_get_child(item));
  if (col < 0) {
    char buf[32];
    g_snprintf(buf, sizeof buf, "%" G_GINT64_FORMAT, row->row);
    gtk_label_set_label(label, buf);
    return;
  }
  g_autofree char *text = _ts_tensor_table_dup_cell_text(self, row->row, col);
  gtk_label_set_label(label, text ? text : "");
}

static void add_column(TsTensorTable *self, const char *title, int col)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
  g_object_set_data(G_OBJECT(factory), "col", GINT_TO_POINTER(col));
  g_signal_connect(factory, "setup", G_CALLBACK(on_cell_setup), NULL);
  g_signal_connect(factory, "bind", G_CALLBACK(on_cell_bind), self);
  GtkColumnViewColumn *column = gtk_column_view_column_new(title, factory);
  gtk_column_view_append_column(self->columns, column);
  g_object_unref(column);
}

static void clear_columns(TsTensorTable *self)
{
  GListModel *columns = gtk_column_view_get_columns(self->columns);
  while (g_list_model_get_n_items(columns) > 0) {
    g_autoptr(GtkColumnViewColumn) column = g_list_model_get_item(columns, 0);
    gtk_column_view_remove_column(self->columns, column);
  }
}

/* "rows 200–399 of 1000 · columns 0–15 of 64" */
static void update_page_bar(TsTensorTable *self)
{
  guint nr, nc;
  ts_tensor_table_get_pages(self, &nr, &nc);
  gtk_widget_set_visible(self->page_bar, nr > 1 || nc > 1);
  if (nr <= 1 && nc <= 1)
    return;
  int64_t rows = ts_tensor_slice_rows(&self->slice), cols = ts_tensor_slice_cols(&self->slice);
  int64_t r0 = (int64_t)self->row_page * TS_TENSOR_TABLE_PAGE_ROWS;
  int64_t c0 = (int64_t)self->col_page * TS_TENSOR_TABLE_PAGE_COLS;
  g_autofree char *text = g_strdup_printf(
    _("rows %" G_GINT64_FORMAT "–%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " · columns %" G_GINT64_FORMAT
      "–%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT),
    r0, MIN(r0 + TS_TENSOR_TABLE_PAGE_ROWS, rows) - 1, rows, c0, MIN(c0 + TS_TENSOR_TABLE_PAGE_COLS, cols) - 1,
    cols);
  gtk_label_set_label(self->page_label, text);
  gtk_widget_set_sensitive(self->prev_rows, self->row_page > 0);
  gtk_widget_set_sensitive(self->next_rows, self->row_page + 1 < nr);
  gtk_widget_set_sensitive(self->prev_cols, self->col_page > 0);
  gtk_widget_set_sensitive(self->next_cols, self->col_page + 1 < nc);
}

/* Columns and rows of the page shown. */
static void rebuild(TsTensorTable *self)
{
  clear_columns(self);
  update_page_bar(self);
  if (!self->tensor) {
    gtk_column_view_set_model(self->columns, NULL);
    return;
  }
  int64_t rows = ts_tensor_slice_rows(&self->slice), cols = ts_tensor_slice_cols(&self->slice);
  int64_t r0 = (int64_t)self->row_page * TS_TENSOR_TABLE_PAGE_ROWS;
  int64_t c0 = (int64_t)self->col_page * TS_TENSOR_TABLE_PAGE_COLS;
  add_column(self, "", -1);
  for (int64_t c = c0; c < MIN(c0 + TS_TENSOR_TABLE_PAGE_COLS, cols); c++) {
    char title[32];
    g_snprintf(title, sizeof title, "%" G_GINT64_FORMAT, c);
    add_column(self, self->slice.col_axis < 0 ? _("value") : title, (int)c);
  }
  guint n = (guint)CLAMP(rows - r0, 0, TS_TENSOR_TABLE_PAGE_ROWS);
  GtkNoSelection *model = gtk_no_selection_new(rows_new(r0, n));
  gtk_column_view_set_model(self->columns, GTK_SELECTION_MODEL(model));
  g_object_unref(model);
}

void ts_tensor_table_set_page(TsTensorTable *self, guint row_page, guint col_page)
{
  g_return_if_fail(TS_IS_TENSOR_TABLE(self));
  guint nr, nc;
  ts_tensor_table_get_pages(self, &nr, &nc);
  self->row_page = MIN(row_page, MAX(nr, 1) - 1);
  self->col_page = MIN(col_page, MAX(nc, 1) - 1);
  rebuild(self);
}

void ts_tensor_table_set_slice(TsTensorTable *self, ts_tensor *t, const ts_tensor_slice *s)
{
  g_return_if_fail(TS_IS_TENSOR_TABLE(self) && (!t || s));
  ts_tensor_ref(t);
  ts_tensor_unref(self->tensor);
  self->tensor = t;
  if (s)
    self->slice = *s;
  self->row_page = self->col_page = 0;
  rebuild(self);
}

static void on_prev_rows(TsTensorTable *self) { ts_tensor_table_set_page(self, self->row_page - 1, self->col_page); }
static void on_next_rows(TsTensorTable *self) { ts_tensor_table_set_page(self, self->row_page + 1, self->col_page); }
static void on_prev_cols(TsTensorTable *self) { ts_tensor_table_set_page(self, self->row_page, self->col_page - 1); }
static void on_next_cols(TsTensorTable *self) { ts_tensor_table_set_page(self, self->row_page, self->col_page + 1); }

static GtkWidget *page_button(TsTensorTable *self, const char *icon, const char *tooltip, GCallback cb)
{
  GtkWidget *b = gtk_button_new_from_icon_name(icon);
  gtk_widget_set_tooltip_text(b, tooltip);
  gtk_widget_add_css_class(b, "flat");
  g_signal_connect_swapped(b, "clicked", cb, self);
  gtk_box_append(GTK_BOX(self->page_bar), b);
  return b;
}

static void ts_tensor_table_dispose(GObject *object)
{
  TsTensorTable *self = TS_TENSOR_TABLE(object);
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  g_clear_pointer(&self->tensor, ts_tensor_unref);
  G_OBJECT_CLASS(ts_tensor_table_parent_class)->dispose(object);
}

static void ts_tensor_table_class_init(TsTensorTableClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = ts_tensor_table_dispose;
  gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BOX_LAYOUT);
  gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "tstensortable");
}

static void ts_tensor_table_init(TsTensorTable *self)
{
  GtkWidget *widget = GTK_WIDGET(self);
  gtk_orientable_set_orientation(GTK_ORIENTABLE(gtk_widget_get_layout_manager(widget)),
                                 GTK_ORIENTATION_VERTICAL);
  self->page_bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 2);
  self->prev_rows = page_button(self, "go-up-symbolic", _("Previous rows"), G_CALLBACK(on_prev_rows));
  self->next_rows = page_button(self, "go-down-symbolic", _("Next rows"), G_CALLBACK(on_next_rows));
  self->prev_cols = page_button(self, "go-previous-symbolic", _("Previous columns"), G_CALLBACK(on_prev_cols));
  self->next_cols = page_button(self, "go-next-symbolic", _("Next columns"), G_CALLBACK(on_next_cols));
  self->page_label = GTK_LABEL(gtk_label_new(NULL));
  gtk_widget_add_css_class(GTK_WIDGET(self->page_label), "dim-label");
  gtk_widget_add_css_class(GTK_WIDGET(self->page_label), "caption");
  gtk_box_append(GTK_BOX(self->page_bar), GTK_WIDGET(self->page_label));
  gtk_widget_set_visible(self->page_bar, FALSE);
  gtk_widget_set_parent(self->page_bar, widget);

  GtkWidget *scrolled = gtk_scrolled_window_new();
  gtk_widget_set_vexpand(scrolled, TRUE);
  gtk_widget_set_hexpand(scrolled, TRUE);
  self->columns = GTK_COLUMN_VIEW(gtk_column_view_new(NULL));
  gtk_column_view_set_show_column_separators(self->columns, TRUE);
  gtk_widget_add_css_class(GTK_WIDGET(self->columns), "data-table");
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scrolled), GTK_WIDGET(self->columns));
  gtk_widget_set_parent(scrolled, widget);
}
