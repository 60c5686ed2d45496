/* ts-console-view.c — the console's lines drawn row by row (ts-console-view.h). */
#include "ts-console-view.h"

#include <string.h>

#define PAD_X 4 /* a cell's padding, as the data tables' cells */
#define PAD_Y 2
#define CALL_WIDTH 260
#define DRAWN_MAX 1024 /* bytes of a cell's text laid out: more never fits a row */
#define TOOLTIP_MAX 4096

enum { COL_TIME, COL_CALL, COL_SOURCE, COL_OUTPUT, N_COLUMNS };

/* A column: its title, and what sets its width (a sample text, a width in
 * pixels, or neither: the rest of the row). */
static const struct {
  const char *title;
  const char *sample;
  int width;
  gboolean dim;
} COLUMNS[N_COLUMNS] = {
  [COL_TIME] = { "Time", "00:00:00.000", 0, TRUE },
  [COL_CALL] = { "Call", NULL, CALL_WIDTH, FALSE },
  [COL_SOURCE] = { "Source", "ts_print", 0, TRUE },
  [COL_OUTPUT] = { "Output", NULL, 0, FALSE },
};

enum { PROP_0, PROP_HADJUSTMENT, PROP_VADJUSTMENT, PROP_HSCROLL_POLICY, PROP_VSCROLL_POLICY, N_PROPS };

struct _TsConsoleView {
  GtkWidget parent_instance;
  TsConsoleLines *lines;
  GtkAdjustment *adjustment[2]; /* GTK_ORIENTATION_HORIZONTAL, _VERTICAL */
  GtkScrollablePolicy policy[2];
  PangoLayout *layout; /* every cell's, in turn */
  PangoAttrList *bold;
  int row_height;
  int x[N_COLUMNS + 1]; /* where the columns start; x[N_COLUMNS]: the width */
  gboolean at_end;
  guint n_drawn;
};

G_DEFINE_FINAL_TYPE_WITH_CODE(TsConsoleView, ts_console_view, GTK_TYPE_WIDGET,
                              G_IMPLEMENT_INTERFACE(GTK_TYPE_SCROLLABLE, NULL))

static PangoLayout *layout_of(TsConsoleView *self)
{
  if (!self->layout) {
    self->layout = gtk_widget_create_pango_layout(GTK_WIDGET(self), NULL);
    pango_layout_set_ellipsize(self->layout, PANGO_ELLIPSIZE_END);
    pango_layout_set_single_paragraph_mode(self->layout, TRUE);
  }
  return self->layout;
}

static int text_width(TsConsoleView *self, const char *text)
{
  PangoLayout *layout = layout_of(self);
  pango_layout_set_width(layout, -1);
  pango_layout_set_text(layout, text, -1);
  int width;
  pango_layout_get_pixel_size(layout, &width, NULL);
  return width;
}

/* The row height and where the columns start, for this font; the row's
 * width (x[N_COLUMNS]) is the allocation's. */
static void measure_columns(TsConsoleView *self)
{
  PangoLayout *layout = layout_of(self);
  pango_layout_set_text(layout, "Ag", -1);
  int height;
  pango_layout_get_pixel_size(layout, NULL, &height);
  self->row_height = height + 2 * PAD_Y;
  int x = 0;
  for (int c = 0; c < N_COLUMNS; c++) {
    self->x[c] = x;
    if (COLUMNS[c].sample)
      x += text_width(self, COLUMNS[c].sample) + 2 * PAD_X;
    else
      x += COLUMNS[c].width;
  }
}

static double page_height(TsConsoleView *self)
{
  return MAX(gtk_widget_get_height(GTK_WIDGET(self)) - self->row_height, 0); /* the header's row is not scrolled */
}

/* The adjustments for the lines there are, the view at `value` (at the
 * end, when it follows the end). */
static void update_adjustments(TsConsoleView *self, double value)
{
  guint n = self->lines ? g_list_model_get_n_items(G_LIST_MODEL(self->lines)) : 0;
  double page = page_height(self), upper = MAX((double)n * self->row_height, page);
  gboolean at_end = self->at_end;
  value = at_end ? upper - page : CLAMP(value, 0, upper - page);
  gtk_adjustment_configure(self->adjustment[GTK_ORIENTATION_VERTICAL], value, 0, upper, self->row_height,
                           page * 0.9, page);
  self->at_end = at_end || value >= upper - page;
  int width = gtk_widget_get_width(GTK_WIDGET(self));
  gtk_adjustment_configure(self->adjustment[GTK_ORIENTATION_HORIZONTAL], 0, 0, width, width * 0.1, width * 0.9,
                           width);
}

static void on_value_changed(GtkAdjustment *adjustment, TsConsoleView *self)
{
  if (adjustment == self->adjustment[GTK_ORIENTATION_VERTICAL])
    self->at_end = gtk_adjustment_get_value(adjustment) >= gtk_adjustment_get_upper(adjustment) -
                                                                gtk_adjustment_get_page_size(adjustment) - 0.5;
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

/* Lines came or went: only the adjustments change, and the frame. */
static void on_items_changed(GListModel *model, guint position, guint removed, guint added, TsConsoleView *self)
{
  double value = gtk_adjustment_get_value(self->adjustment[GTK_ORIENTATION_VERTICAL]);
  if (position == 0 && removed > added) /* the oldest went: the lines in view stay */
    value -= (double)(removed - added) * self->row_height;
  update_adjustments(self, value);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

void ts_console_view_set_lines(TsConsoleView *self, TsConsoleLines *lines)
{
  g_return_if_fail(TS_IS_CONSOLE_VIEW(self));
  if (self->lines)
    g_signal_handlers_disconnect_by_func(self->lines, on_items_changed, self);
  g_set_object(&self->lines, lines);
  if (lines)
    g_signal_connect_object(lines, "items-changed", G_CALLBACK(on_items_changed), self, 0);
  self->at_end = TRUE;
  update_adjustments(self, 0);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

guint ts_console_view_get_n_drawn(TsConsoleView *self)
{
  g_return_val_if_fail(TS_IS_CONSOLE_VIEW(self), 0);
  return self->n_drawn;
}

gboolean ts_console_view_get_at_end(TsConsoleView *self)
{
  g_return_val_if_fail(TS_IS_CONSOLE_VIEW(self), FALSE);
  return self->at_end;
}

/* ---- drawing -------------------------------------------------------------------------------- */

static void draw_cell(TsConsoleView *self, GtkSnapshot *snapshot, int column, int y, const char *text,
                      const GdkRGBA *color)
{
  int width = self->x[column + 1] - self->x[column] - 2 * PAD_X;
  if (width <= 0)
    return;
  gsize len = strnlen(text, DRAWN_MAX + 1);
  if (len > DRAWN_MAX) /* cut at a character's start (the text is valid UTF-8) */
    for (len = DRAWN_MAX; len > 0 && (text[len] & 0xc0) == 0x80; len--)
      ;
  PangoLayout *layout = layout_of(self);
  pango_layout_set_text(layout, text, (int)len);
  pango_layout_set_width(layout, width * PANGO_SCALE);
  gtk_snapshot_save(snapshot);
  gtk_snapshot_translate(snapshot, &GRAPHENE_POINT_INIT(self->x[column] + PAD_X, y + PAD_Y));
  gtk_snapshot_append_layout(snapshot, layout, color);
  gtk_snapshot_restore(snapshot);
}

static const char *cell_text(const TsConsoleRow *row, int column, char time[16])
{
  switch (column) {
  case COL_TIME: ts_console_format_time(row->time_us, time); return time;
  case COL_CALL: return row->call_label;
  case COL_SOURCE: return ts_console_source_name(row->source);
  default: return row->text;
  }
}

static void ts_console_view_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
  TsConsoleView *self = TS_CONSOLE_VIEW(widget);
  int width = gtk_widget_get_width(widget), height = gtk_widget_get_height(widget), h = self->row_height;
  GdkRGBA fg, dim, rule;
  gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
  dim = rule = fg;
  dim.alpha *= 0.55f;
  rule.alpha *= 0.15f;

  /* the lines in view, below the header */
  self->n_drawn = 0;
  guint n = self->lines ? g_list_model_get_n_items(G_LIST_MODEL(self->lines)) : 0;
  double top = gtk_adjustment_get_value(self->adjustment[GTK_ORIENTATION_VERTICAL]);
  guint first = h > 0 ? (guint)(top / h) : n;
  gtk_snapshot_push_clip(snapshot, &GRAPHENE_RECT_INIT(0, h, width, MAX(height - h, 0)));
  for (guint i = first; i < n; i++) {
    int y = h + (int)((double)i * h - top);
    if (y >= height)
      break;
    TsConsoleRow row;
    if (!ts_console_lines_peek(self->lines, i, &row))
      break;
    char time[16];
    for (int c = 0; c < N_COLUMNS; c++)
      draw_cell(self, snapshot, c, y, cell_text(&row, c, time), COLUMNS[c].dim ? &dim : &fg);
    self->n_drawn++;
  }
  gtk_snapshot_pop(snapshot);

  /* the header, and the rules between columns */
  pango_layout_set_attributes(layout_of(self), self->bold);
  for (int c = 0; c < N_COLUMNS; c++)
    draw_cell(self, snapshot, c, 0, COLUMNS[c].title, &dim);
  pango_layout_set_attributes(self->layout, NULL);
  gtk_snapshot_append_color(snapshot, &rule, &GRAPHENE_RECT_INIT(0, h - 1, width, 1));
  for (int c = 1; c < N_COLUMNS; c++)
    gtk_snapshot_append_color(snapshot, &rule, &GRAPHENE_RECT_INIT(self->x[c], 0, 1, height));
}

/* The whole text of the cell under the pointer. */
static gboolean ts_console_view_query_tooltip(GtkWidget *widget, int x, int y, gboolean keyboard,
                                              GtkTooltip *tooltip)
{
  TsConsoleView *self = TS_CONSOLE_VIEW(widget);
  int h = self->row_height;
  if (keyboard || !self->lines || h <= 0 || y < h)
    return FALSE;
  double top = gtk_adjustment_get_value(self->adjustment[GTK_ORIENTATION_VERTICAL]);
  guint i = (guint)((y - h + top) / h);
  TsConsoleRow row;
  if (!ts_console_lines_peek(self->lines, i, &row))
    return FALSE;
  int c = 0;
  while (c + 1 < N_COLUMNS && x >= self->x[c + 1])
    c++;
  char time[16];
  const char *text = cell_text(&row, c, time);
  if (!*text)
    return FALSE;
  gsize len = strnlen(text, TOOLTIP_MAX + 1);
  if (len > TOOLTIP_MAX) {
    for (len = TOOLTIP_MAX; len > 0 && (text[len] & 0xc0) == 0x80; len--)
      ;
    g_autofree char *cut = g_strdup_printf("%.*s…", (int)len, text);
    gtk_tooltip_set_text(tooltip, cut);
  } else {
    gtk_tooltip_set_text(tooltip, text);
  }
  int y_row = h + (int)((double)i * h - top);
  gtk_tooltip_set_tip_area(tooltip, &(GdkRectangle){ self->x[c], y_row, self->x[c + 1] - self->x[c], h });
  return TRUE;
}

/* ---- size ------------------------------------------------------------------------------------ */

static void ts_console_view_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                                    int *natural, int *minimum_baseline, int *natural_baseline)
{
  TsConsoleView *self = TS_CONSOLE_VIEW(widget);
  measure_columns(self);
  if (orientation == GTK_ORIENTATION_HORIZONTAL) { /* narrower, the last columns are cut */
    *minimum = self->x[COL_CALL];
    *natural = self->x[COL_OUTPUT] + CALL_WIDTH;
  } else {
    *minimum = *natural = 4 * self->row_height;
  }
}

static void ts_console_view_size_allocate(GtkWidget *widget, int width, int height, int baseline)
{
  TsConsoleView *self = TS_CONSOLE_VIEW(widget);
  measure_columns(self);
  self->x[N_COLUMNS] = MAX(width, self->x[COL_OUTPUT]);
  update_adjustments(self, gtk_adjustment_get_value(self->adjustment[GTK_ORIENTATION_VERTICAL]));
}

/* ---- GtkScrollable ----------------------------------------------------------------------------- */

static void set_adjustment(TsConsoleView *self, GtkOrientation orientation, GtkAdjustment *adjustment)
{
  if (self->adjustment[orientation] == adjustment && adjustment)
    return;
  if (self->adjustment[orientation]) {
    g_signal_handlers_disconnect_by_func(self->adjustment[orientation], on_value_changed, self);
    g_object_unref(self->adjustment[orientation]);
  }
  if (!adjustment)
    adjustment = gtk_adjustment_new(0, 0, 0, 0, 0, 0);
  self->adjustment[orientation] = g_object_ref_sink(adjustment);
  g_signal_connect(adjustment, "value-changed", G_CALLBACK(on_value_changed), self);
  gtk_widget_queue_allocate(GTK_WIDGET(self));
}

static void ts_console_view_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  TsConsoleView *self = TS_CONSOLE_VIEW(object);
  switch (prop_id) {
  case PROP_HADJUSTMENT: set_adjustment(self, GTK_ORIENTATION_HORIZONTAL, g_value_get_object(value)); break;
  case PROP_VADJUSTMENT: set_adjustment(self, GTK_ORIENTATION_VERTICAL, g_value_get_object(value)); break;
  case PROP_HSCROLL_POLICY: self->policy[GTK_ORIENTATION_HORIZONTAL] = g_value_get_enum(value); break;
  case PROP_VSCROLL_POLICY: self->policy[GTK_ORIENTATION_VERTICAL] = g_value_get_enum(value); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_console_view_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TsConsoleView *self = TS_CONSOLE_VIEW(object);
  switch (prop_id) {
  case PROP_HADJUSTMENT: g_value_set_object(value, self->adjustment[GTK_ORIENTATION_HORIZONTAL]); break;
  case PROP_VADJUSTMENT: g_value_set_object(value, self->adjustment[GTK_ORIENTATION_VERTICAL]); break;
  case PROP_HSCROLL_POLICY: g_value_set_enum(value, self->policy[GTK_ORIENTATION_HORIZONTAL]); break;
  case PROP_VSCROLL_POLICY: g_value_set_enum(value, self->policy[GTK_ORIENTATION_VERTICAL]); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void ts_console_view_dispose(GObject *object)
{
  TsConsoleView *self = TS_CONSOLE_VIEW(object);
  ts_console_view_set_lines(self, NULL);
  for (int o = 0; o < 2; o++) {
    if (self->adjustment[o])
      g_signal_handlers_disconnect_by_func(self->adjustment[o], on_value_changed, self);
    g_clear_object(&self->adjustment[o]);
  }
  g_clear_object(&self->layout);
  g_clear_pointer(&self->bold, pango_attr_list_unref);
  G_OBJECT_CLASS(ts_console_view_parent_class)->dispose(object);
}

static void ts_console_view_class_init(TsConsoleViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = ts_console_view_dispose;
  object_class->set_property = ts_console_view_set_property;
  object_class->get_property = ts_console_view_get_property;
  widget_class->snapshot = ts_console_view_snapshot;
  widget_class->measure = ts_console_view_measure;
  widget_class->size_allocate = ts_console_view_size_allocate;
  widget_class->query_tooltip = ts_console_view_query_tooltip;
  g_object_class_override_property(object_class, PROP_HADJUSTMENT, "hadjustment");
  g_object_class_override_property(object_class, PROP_VADJUSTMENT, "vadjustment");
  g_object_class_override_property(object_class, PROP_HSCROLL_POLICY, "hscroll-policy");
  g_object_class_override_property(object_class, PROP_VSCROLL_POLICY, "vscroll-policy");
  gtk_widget_class_set_css_name(widget_class, "tsconsoleview");
}

static void ts_console_view_init(TsConsoleView *self)
{
  for (int o = 0; o < 2; o++)
    set_adjustment(self, o, NULL);
  self->bold = pango_attr_list_new();
  pango_attr_list_insert(self->bold, pango_attr_weight_new(PANGO_WEIGHT_BOLD));
  self->at_end = TRUE;
  gtk_widget_set_has_tooltip(GTK_WIDGET(self), TRUE);
  gtk_widget_set_overflow(GTK_WIDGET(self), GTK_OVERFLOW_HIDDEN);
  gtk_widget_add_css_class(GTK_WIDGET(self), "monospace");
}

GtkWidget *ts_console_view_new(void)
{
  return g_object_new(TS_TYPE_CONSOLE_VIEW, NULL);
}
