/* ts-tensor-view-histogram.c — TsTensorHistogramChart: the histogram of a
 * tensor's finite values as bars between their range's ends, the tallest
 * count on the left, NaN and infinities counted apart below.  Hovering a
 * bar shows its interval and count. */
#include "ts-tensor-view-private.h"

#include <glib/gi18n.h>
#include <math.h>

#define PAD 8
#define AXIS_H 20  /* the range's ends under the bars */
#define FOOT_H 22  /* the NaN/Inf line */
#define LEFT_W 56  /* the tallest count */

struct _TsTensorHistogramChart {
  GtkWidget parent_instance;
  gboolean have;
  ts_tensor_histogram h;
  char *note;
};

G_DEFINE_FINAL_TYPE(TsTensorHistogramChart, ts_tensor_histogram_chart, GTK_TYPE_WIDGET)

GtkWidget *ts_tensor_histogram_chart_new(void)
{
  return g_object_new(TS_TYPE_TENSOR_HISTOGRAM_CHART, NULL);
}

void ts_tensor_histogram_chart_set(TsTensorHistogramChart *self, const ts_tensor_histogram *h, const char *note)
{
  g_return_if_fail(TS_IS_TENSOR_HISTOGRAM_CHART(self));
  self->have = h != NULL;
  if (h)
    self->h = *h;
  g_free(self->note);
  self->note = g_strdup(note);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

/* The plot's rectangle; FALSE when there are no bars. */
static gboolean plot_area(TsTensorHistogramChart *self, graphene_rect_t *r)
{
  if (!self->have || self->h.n_bins == 0)
    return FALSE;
  double w = gtk_widget_get_width(GTK_WIDGET(self)) - LEFT_W - 2 * PAD;
  double h = gtk_widget_get_height(GTK_WIDGET(self)) - AXIS_H - FOOT_H - 2 * PAD;
  if (w < 1 || h < 1)
    return FALSE;
  graphene_rect_init(r, PAD + LEFT_W, PAD, (float)w, (float)h);
  return TRUE;
}

char *ts_tensor_histogram_chart_dup_tooltip_at(TsTensorHistogramChart *self, double x, double y)
{
  g_return_val_if_fail(TS_IS_TENSOR_HISTOGRAM_CHART(self), NULL);
  graphene_rect_t r;
  if (!plot_area(self, &r) || x < r.origin.x || x >= r.origin.x + r.size.width || y < r.origin.y ||
      y > r.origin.y + r.size.height)
    return NULL;
  int b = (int)((x - r.origin.x) / r.size.width * self->h.n_bins);
  b = CLAMP(b, 0, self->h.n_bins - 1);
  double width = (self->h.hi - self->h.lo) / self->h.n_bins;
  char lo[32], hi[32];
  ts_format_value(self->h.lo + b * width, lo, sizeof lo);
  ts_format_value(b == self->h.n_bins - 1 ? self->h.hi : self->h.lo + (b + 1) * width, hi, sizeof hi);
  return g_strdup_printf(_("[%s, %s%s · %" G_GINT64_FORMAT " values"), lo, hi,
                         b == self->h.n_bins - 1 ? "]" : ")", self->h.counts[b]);
}

static gboolean on_query_tooltip(GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                                 gpointer data)
{
  g_autofree char *text = ts_tensor_histogram_chart_dup_tooltip_at(TS_TENSOR_HISTOGRAM_CHART(widget), x, y);
  if (!text)
    return FALSE;
  gtk_tooltip_set_text(tooltip, text);
  return TRUE;
}

static void draw_text(GtkWidget *widget, cairo_t *cr, const char *text, double x, double y, double xalign,
                      double yalign)
{
  PangoLayout *layout = gtk_widget_create_pango_layout(widget, text);
  int tw, th;
  pango_layout_get_pixel_size(layout, &tw, &th);
  cairo_move_to(cr, x - tw * xalign, y - th * yalign);
  pango_cairo_show_layout(cr, layout);
  g_object_unref(layout);
}

static void ts_tensor_histogram_chart_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
  TsTensorHistogramChart *self = TS_TENSOR_HISTOGRAM_CHART(widget);
  int width = gtk_widget_get_width(widget), height = gtk_widget_get_height(widget);
  cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, width, height));
  GdkRGBA fg, accent = { 0.21f, 0.52f, 0.89f, 1 }; /* libadwaita's blue */
  gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
  GdkRGBA dim = fg;
  dim.alpha *= 0.6f;
  graphene_rect_t r;
  if (!plot_area(self, &r)) {
    const char *note = self->note ? self->note : self->have ? _("No finite values") : NULL;
    if (note) {
      gdk_cairo_set_source_rgba(cr, &dim);
      draw_text(widget, cr, note, PAD, PAD, 0, 0);
    }
    cairo_destroy(cr);
    return;
  }
  int64_t top = 1;
  for (int b = 0; b < self->h.n_bins; b++)
    top = MAX(top, self->h.counts[b]);
  double bw = r.size.width / self->h.n_bins;
  gdk_cairo_set_source_rgba(cr, &accent);
  for (int b = 0; b < self->h.n_bins; b++) {
    double bh = (double)self->h.counts[b] / (double)top * r.size.height;
    /* a nonzero count stays visible next to a huge one */
    if (self->h.counts[b] > 0)
      bh = MAX(bh, 1);
    cairo_rectangle(cr, r.origin.x + b * bw + (bw > 4 ? 1 : 0), r.origin.y + r.size.height - bh,
                    MAX(bw - (bw > 4 ? 2 : 0), 0.5), bh);
  }
  cairo_fill(cr);

  gdk_cairo_set_source_rgba(cr, &dim);
  cairo_set_line_width(cr, 1);
  double base = floor(r.origin.y + r.size.height) + 0.5;
  cairo_move_to(cr, r.origin.x, base);
  cairo_line_to(cr, r.origin.x + r.size.width, base);
  cairo_stroke(cr);

  char text[96];
  g_snprintf(text, sizeof text, "%" G_GINT64_FORMAT, top);
  draw_text(widget, cr, text, r.origin.x - 6, r.origin.y, 1, 0);
  draw_text(widget, cr, "0", r.origin.x - 6, base, 1, 1);
  gdk_cairo_set_source_rgba(cr, &fg);
  ts_format_value(self->h.lo, text, sizeof text);
  draw_text(widget, cr, text, r.origin.x, base + 3, 0, 0);
  ts_format_value(self->h.hi, text, sizeof text);
  draw_text(widget, cr, text, r.origin.x + r.size.width, base + 3, 1, 0);
  g_snprintf(text, sizeof text, _("%d bins · NaN %" G_GINT64_FORMAT " · +Inf %" G_GINT64_FORMAT
                                  " · −Inf %" G_GINT64_FORMAT),
             self->h.n_bins, self->h.n_nan, self->h.n_pos_inf, self->h.n_neg_inf);
  gdk_cairo_set_source_rgba(cr, &dim);
  draw_text(widget, cr, text, r.origin.x, height - PAD, 0, 1);
  cairo_destroy(cr);
}

static void ts_tensor_histogram_chart_measure(GtkWidget *widget, GtkOrientation orientation, int for_size,
                                              int *min, int *nat, int *min_baseline, int *nat_baseline)
{
  *min = orientation == GTK_ORIENTATION_HORIZONTAL ? 200 : 120;
  *nat = orientation == GTK_ORIENTATION_HORIZONTAL ? 480 : 240;
}

static void ts_tensor_histogram_chart_finalize(GObject *object)
{
  g_free(TS_TENSOR_HISTOGRAM_CHART(object)->note);
  G_OBJECT_CLASS(ts_tensor_histogram_chart_parent_class)->finalize(object);
}

static void ts_tensor_histogram_chart_class_init(TsTensorHistogramChartClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  G_OBJECT_CLASS(klass)->finalize = ts_tensor_histogram_chart_finalize;
  widget_class->snapshot = ts_tensor_histogram_chart_snapshot;
  widget_class->measure = ts_tensor_histogram_chart_measure;
  gtk_widget_class_set_css_name(widget_class, "tshistogram");
}

static void ts_tensor_histogram_chart_init(TsTensorHistogramChart *self)
{
  gtk_widget_set_has_tooltip(GTK_WIDGET(self), TRUE);
  g_signal_connect(self, "query-tooltip", G_CALLBACK(on_query_tooltip), NULL);
}
