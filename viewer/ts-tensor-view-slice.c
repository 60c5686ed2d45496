/* ts-tensor-view-slice.c — TsTensorView's slice controls: which two axes
 * the table and heat map show as rows and columns (drop-downs), and the
 * index along each other axis (spin buttons); rebuilt for each tensor's
 * rank and whenever the shown axes change. */
#include "ts-tensor-view-private.h"

#include <glib/gi18n.h>
#include <string.h>

void _ts_tensor_view_refresh_slice(TsTensorView *self)
{
  ts_tensor_table_set_slice(self->table, self->shown, &self->slice);
  if (self->numeric && self->shown)
    ts_tensor_heat_map_set_slice(self->heat_map, self->shown, &self->slice);
}

/* Shown for a slice of rank 2 and up, on the pages that show a slice;
 * collapsed, a matrix needs none (the table shows it whole). */
void _ts_tensor_view_update_slice_box(TsTensorView *self)
{
  if (!self->stack || !self->slice_box)
    return; /* being disposed */
  const char *page = gtk_stack_get_visible_child_name(self->stack);
  int rank = self->slice.shape.rank;
  gboolean collapsed = !gtk_widget_get_visible(self->page_choice);
  gtk_widget_set_visible(self->slice_box,
                         g_strcmp0(page, "histogram") != 0 && (rank > 2 || (rank == 2 && !collapsed)));
}

void _ts_tensor_view_select_axes(TsTensorView *self, int row_axis, int col_axis)
{
  g_return_if_fail(TS_IS_TENSOR_VIEW(self));
  /* choosing the other drop-down's axis swaps the two */
  if (row_axis == col_axis)
    col_axis = row_axis == self->slice.row_axis ? self->slice.col_axis : self->slice.row_axis;
  if (!ts_tensor_slice_set_axes(&self->slice, row_axis, col_axis))
    return;
  _ts_tensor_view_build_slice_controls(self);
  _ts_tensor_view_refresh_slice(self);
}

void _ts_tensor_view_select_index(TsTensorView *self, int axis, int64_t index)
{
  g_return_if_fail(TS_IS_TENSOR_VIEW(self) && axis >= 0 && axis < self->slice.shape.rank);
  ts_tensor_slice_set_index(&self->slice, axis, index);
  if (self->index_spins[axis] && gtk_spin_button_get_value(self->index_spins[axis]) != (double)self->slice.index[axis]) {
    self->building_controls = TRUE;
    gtk_spin_button_set_value(self->index_spins[axis], (double)self->slice.index[axis]);
    self->building_controls = FALSE;
  }
  _ts_tensor_view_refresh_slice(self);
}

static void on_axis_selected(GtkDropDown *drop, GParamSpec *pspec, TsTensorView *self)
{
  if (self->building_controls)
    return;
  int axis = (int)gtk_drop_down_get_selected(drop);
  gboolean rows = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(drop), "rows"));
  _ts_tensor_view_select_axes(self, rows ? axis : self->slice.row_axis, rows ? self->slice.col_axis : axis);
}

static void on_index_changed(GtkSpinButton *spin, TsTensorView *self)
{
  if (self->building_controls)
    return;
  int axis = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(spin), "axis"));
  _ts_tensor_view_select_index(self, axis, gtk_spin_button_get_value_as_int(spin));
}

static GtkWidget *axis_drop_down(TsTensorView *self, const char *const *names, int selected, gboolean rows)
{
  GtkWidget *drop = gtk_drop_down_new_from_strings(names);
  gtk_drop_down_set_selected(GTK_DROP_DOWN(drop), (guint)selected);
  gtk_widget_set_tooltip_text(drop, rows ? _("The axis shown as rows") : _("The axis shown as columns"));
  g_object_set_data(G_OBJECT(drop), "rows", GINT_TO_POINTER(rows));
  g_signal_connect(drop, "notify::selected", G_CALLBACK(on_axis_selected), self);
  return drop;
}

/* "Rows [axis 1 (30)]": a label and its control, kept together when the
 * controls wrap onto more lines in a narrow view. */
static void append_control(TsTensorView *self, const char *text, GtkWidget *control)
{
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *label = gtk_label_new(text);
  gtk_widget_add_css_class(label, "dim-label");
  gtk_box_append(GTK_BOX(box), label);
  gtk_box_append(GTK_BOX(box), control);
  gtk_flow_box_insert(GTK_FLOW_BOX(self->slice_box), box, -1);
  gtk_widget_set_focusable(gtk_widget_get_parent(box), FALSE); /* the control takes the focus */
}

void _ts_tensor_view_build_slice_controls(TsTensorView *self)
{
  self->building_controls = TRUE;
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child(self->slice_box)))
    gtk_flow_box_remove(GTK_FLOW_BOX(self->slice_box), child);
  memset(self->index_spins, 0, sizeof self->index_spins);
  const ts_tensor_slice *s = &self->slice;
  int rank = s->shape.rank;
  _ts_tensor_view_update_slice_box(self);
  /* collapsed (compact): only which matrix, the axes stay the last two */
  gboolean collapsed = !gtk_widget_get_visible(self->page_choice);
  if (rank >= 2 && !collapsed) {
    char *names[TS_MAX_RANK + 1] = { 0 };
    for (int a = 0; a < rank; a++)
      names[a] = g_strdup_printf(_("axis %d (%" G_GINT64_FORMAT ")"), a, s->shape.dim[a]);
    append_control(self, _("Rows"), axis_drop_down(self, (const char *const *)names, s->row_axis, TRUE));
    append_control(self, _("Columns"), axis_drop_down(self, (const char *const *)names, s->col_axis, FALSE));
    for (int a = 0; a < rank; a++)
      g_free(names[a]);
  }
  for (int a = 0; a < rank; a++) {
    if (a == s->row_axis || a == s->col_axis)
      continue;
    g_autofree char *text = g_strdup_printf(_("axis %d"), a);
    GtkWidget *spin = gtk_spin_button_new_with_range(0, (double)MAX(s->shape.dim[a] - 1, 0), 1);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(spin), (double)s->index[a]);
    gtk_widget_set_tooltip_text(spin, _("The index along this axis"));
    g_object_set_data(G_OBJECT(spin), "axis", GINT_TO_POINTER(a));
    g_signal_connect(spin, "value-changed", G_CALLBACK(on_index_changed), self);
    append_control(self, text, spin);
    self->index_spins[a] = GTK_SPIN_BUTTON(spin);
  }
  self->building_controls = FALSE;
}
