/* ts-diff-table.c — a tsp_diff as a table: one row object per diff row,
 * sharing the diff. */
#include "ts-diff-table.h"

#include <adwaita.h>

#include "ts-profile-values.h"

typedef struct {
  tsp_diff *diff;
} DiffRef;

static void diff_ref_clear(gpointer p)
{
  tsp_diff_free(((DiffRef *)p)->diff);
}

#define TS_TYPE_DIFF_ROW (ts_diff_row_get_type())
G_DECLARE_FINAL_TYPE(TsDiffRow, ts_diff_row, TS, DIFF_ROW, GObject)

struct _TsDiffRow {
  GObject parent_instance;
  DiffRef *ref;
  int i;
};

G_DEFINE_FINAL_TYPE(TsDiffRow, ts_diff_row, G_TYPE_OBJECT)

static void ts_diff_row_finalize(GObject *object)
{
  g_rc_box_release_full(TS_DIFF_ROW(object)->ref, diff_ref_clear);
  G_OBJECT_CLASS(ts_diff_row_parent_class)->finalize(object);
}

static void ts_diff_row_class_init(TsDiffRowClass *klass)
{
  G_OBJECT_CLASS(klass)->finalize = ts_diff_row_finalize;
}

static void ts_diff_row_init(TsDiffRow *self) {}

/* ---- columns ------------------------------------------------------------------------- */

typedef enum { COL_KEY, COL_RUNS, COL_MEDIAN, COL_MIN, COL_RATIO, COL_DEVICE, COL_LAUNCH } ColumnKind;

static const struct {
  const char *title;
  ColumnKind kind;
  int side; /* 0: A (the baseline), 1: B */
} COLUMNS[] = {
  { "Key", COL_KEY, 0 },       { "A Runs", COL_RUNS, 0 }, { "B Runs", COL_RUNS, 1 },
  { "A Median", COL_MEDIAN, 0 }, { "B Median", COL_MEDIAN, 1 }, { "A Min", COL_MIN, 0 },
  { "B Min", COL_MIN, 1 },     { "B/A", COL_RATIO, 0 },
  /* where each ran; on a device the times above are its kernels', the host's launch here */
  { "A On", COL_DEVICE, 0 },   { "B On", COL_DEVICE, 1 },
  { "A Launch", COL_LAUNCH, 0 }, { "B Launch", COL_LAUNCH, 1 },
};

static void setup_cell(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  const ColumnKind kind = COLUMNS[GPOINTER_TO_INT(data)].kind;
  GtkWidget *label = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(label), kind == COL_KEY ? 0 : 1);
  if (kind == COL_KEY)
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
  else
    gtk_widget_add_css_class(label, "numeric");
  gtk_list_item_set_child(item, label);
}

static void bind_cell(GtkSignalListItemFactory *factory, GtkListItem *item, gpointer data)
{
  int c = GPOINTER_TO_INT(data), side = COLUMNS[c].side;
  TsDiffRow *row = gtk_list_item_get_item(item);
  const tsp_diff_row *r = &row->ref->diff->rows[row->i];
  GtkWidget *label = gtk_list_item_get_child(item);
  g_autofree char *text = NULL;
  gtk_widget_remove_css_class(label, "error");
  gtk_widget_remove_css_class(label, "success");
  switch (COLUMNS[c].kind) {
  case COL_KEY:
    text = g_strdup(r->key);
    gtk_widget_set_tooltip_text(label, r->key);
    break;
  case COL_RUNS: text = g_strdup_printf("%" G_GUINT64_FORMAT, r->count[side]); break;
  case COL_MEDIAN: text = r->count[side] ? ts_profile_format_ns(r->p50_ns[side]) : g_strdup(""); break;
  case COL_MIN: text = r->count[side] ? ts_profile_format_ns(r->min_ns[side]) : g_strdup(""); break;
  case COL_DEVICE: text = g_strdup(r->device[side] ? r->device[side] : ""); break;
  case COL_LAUNCH:
    text = r->device_ran[side] ? ts_profile_format_ns(r->host_p50_ns[side]) : g_strdup("");
    break;
  case COL_RATIO:
    text = r->only ? g_strdup(r->only) : g_strdup_printf("%.2f×", r->ratio);
    if (!r->only && r->ratio >= 1.1) /* slower in B */
      gtk_widget_add_css_class(label, "error");
    else if (!r->only && r->ratio <= 1 / 1.1)
      gtk_widget_add_css_class(label, "success");
    break;
  }
  gtk_label_set_label(GTK_LABEL(label), text);
}

/* ---- the widget ---------------------------------------------------------------------- */

struct _TsDiffTable {
  GtkWidget parent_instance;
  GtkStack *stack;
  GtkLabel *summary;
  GtkColumnView *view;
  GListStore *rows;
  DiffRef *ref;
};

G_DEFINE_FINAL_TYPE(TsDiffTable, ts_diff_table, GTK_TYPE_WIDGET)

void ts_diff_table_set_diff(TsDiffTable *self, tsp_diff *diff, const char *label_a, const char *label_b)
{
  g_return_if_fail(TS_IS_DIFF_TABLE(self));
  g_list_store_remove_all(self->rows);
  if (self->ref)
    g_rc_box_release_full(g_steal_pointer(&self->ref), diff_ref_clear);
  gtk_stack_set_visible_child_name(self->stack, diff ? "table" : "empty");
  if (!diff)
    return;
  self->ref = g_rc_box_new0(DiffRef);
  self->ref->diff = diff;
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func(g_object_unref);
  for (int i = 0; i < diff->n; i++) {
    TsDiffRow *r = g_object_new(TS_TYPE_DIFF_ROW, NULL);
    r->ref = g_rc_box_acquire(self->ref);
    r->i = i;
    g_ptr_array_add(rows, r);
  }
  g_list_store_splice(self->rows, 0, 0, rows->pdata, rows->len);
  /* where each side ran, and the launches: when a side ran on a device (a CPU against a CPU
   * keeps the table as it was) */
  gboolean devices = FALSE;
  for (int i = 0; i < diff->n && !devices; i++)
    devices = diff->rows[i].device_ran[0] || diff->rows[i].device_ran[1];
  GListModel *cols = gtk_column_view_get_columns(self->view);
  for (guint i = 0; i < g_list_model_get_n_items(cols); i++) {
    g_autoptr(GtkColumnViewColumn) col = g_list_model_get_item(cols, i);
    if (COLUMNS[i].kind == COL_DEVICE || COLUMNS[i].kind == COL_LAUNCH)
      gtk_column_view_column_set_visible(col, devices);
  }
  g_autofree char *ops_a = ts_profile_format_ns(diff->self_ns[0]), *wall_a = ts_profile_format_ns(diff->wall_ns[0]);
  g_autofree char *ops_b = ts_profile_format_ns(diff->self_ns[1]), *wall_b = ts_profile_format_ns(diff->wall_ns[1]);
  g_autofree char *text = g_strdup_printf("A (baseline): %s · %s in ops over %s\nB: %s · %s in ops over %s\n"
                                          "By one op's time (median and min), the largest change first; "
                                          "B/A above 1: slower in B",
                                          label_a ? label_a : "", ops_a, wall_a, label_b ? label_b : "", ops_b, wall_b);
  gtk_label_set_label(self->summary, text);
  gtk_widget_set_tooltip_text(GTK_WIDGET(self->summary),
                              devices ? "On a device an op's time is its kernels' time there; the host's "
                                        "launch is in the Launch columns"
                                      : NULL);
}

const tsp_diff *ts_diff_table_get_diff(TsDiffTable *self)
{
  g_return_val_if_fail(TS_IS_DIFF_TABLE(self), NULL);
  return self->ref ? self->ref->diff : NULL;
}

static void ts_diff_table_dispose(GObject *object)
{
  TsDiffTable *self = TS_DIFF_TABLE(object);
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  g_clear_object(&self->rows);
  if (self->ref)
    g_rc_box_release_full(g_steal_pointer(&self->ref), diff_ref_clear);
  G_OBJECT_CLASS(ts_diff_table_parent_class)->dispose(object);
}

static void ts_diff_table_class_init(TsDiffTableClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = ts_diff_table_dispose;
  gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "tsdifftable");
}

static void ts_diff_table_init(TsDiffTable *self)
{
  self->rows = g_list_store_new(TS_TYPE_DIFF_ROW);
  self->stack = GTK_STACK(gtk_stack_new());
  GtkWidget *empty = adw_status_page_new();
  adw_status_page_set_icon_name(ADW_STATUS_PAGE(empty), "view-dual-symbolic");
  adw_status_page_set_title(ADW_STATUS_PAGE(empty), "No Baseline Yet");
  adw_status_page_set_description(ADW_STATUS_PAGE(empty),
                                  "Run again to compare with the Run before, op by op: which got "
                                  "slower; or read a baseline with Compare with Trace… in the main menu.");
  gtk_widget_add_css_class(empty, "compact");
  gtk_stack_add_named(self->stack, empty, "empty");

  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
  self->summary = GTK_LABEL(gtk_label_new(NULL));
  gtk_label_set_xalign(self->summary, 0);
  gtk_label_set_wrap(self->summary, TRUE);
  gtk_label_set_selectable(self->summary, TRUE);
  gtk_widget_set_margin_start(GTK_WIDGET(self->summary), 8);
  gtk_widget_set_margin_end(GTK_WIDGET(self->summary), 8);
  gtk_widget_set_margin_top(GTK_WIDGET(self->summary), 4);
  gtk_widget_set_margin_bottom(GTK_WIDGET(self->summary), 4);
  gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->summary));
  GtkNoSelection *none = gtk_no_selection_new(G_LIST_MODEL(g_object_ref(self->rows)));
  GtkColumnView *view = GTK_COLUMN_VIEW(gtk_column_view_new(GTK_SELECTION_MODEL(none)));
  self->view = view;
  gtk_widget_add_css_class(GTK_WIDGET(view), "data-table");
  for (size_t i = 0; i < G_N_ELEMENTS(COLUMNS); i++) {
    GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
    g_signal_connect(factory, "setup", G_CALLBACK(setup_cell), GINT_TO_POINTER((int)i));
    g_signal_connect(factory, "bind", G_CALLBACK(bind_cell), GINT_TO_POINTER((int)i));
    GtkColumnViewColumn *col = gtk_column_view_column_new(COLUMNS[i].title, factory);
    gtk_column_view_column_set_expand(col, COLUMNS[i].kind == COL_KEY);
    gtk_column_view_column_set_resizable(col, TRUE);
    gtk_column_view_column_set_visible(col, COLUMNS[i].kind != COL_DEVICE && COLUMNS[i].kind != COL_LAUNCH);
    gtk_column_view_append_column(view, col);
    g_object_unref(col);
  }
  GtkWidget *scroller = gtk_scrolled_window_new();
  gtk_widget_set_vexpand(scroller, TRUE);
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroller), GTK_WIDGET(view));
  gtk_box_append(GTK_BOX(box), scroller);
  gtk_stack_add_named(self->stack, box, "table");
  gtk_stack_set_visible_child_name(self->stack, "empty");
  gtk_widget_set_parent(GTK_WIDGET(self->stack), GTK_WIDGET(self));
}
