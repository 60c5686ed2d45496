/* ts-tensor-view-heat-map.c — TsTensorHeatMap: a 2-D slice drawn as
 * coloured cells, fitted to the widget (square cells where they fit), a legend bar
 * (the scale's ends, 0 when diverging, swatches for NaN and infinities).
 * A slice larger than the pixels it gets is sampled: one element per
 * pixel, the image cached until the slice or the size changes.  The
 * colour scale spans the slice's own finite values (a channel of a conv
 * output keeps its contrast beside a louder one), found exactly up to
 * EXACT_RANGE_CELLS and on a grid of samples beyond.  Hovering shows the
 * cell's full index and value. */
#include "ts-tensor-view-private.h"

#include <glib/gi18n.h>
#include <math.h>

#define PAD 8
#define LEGEND_W 96 /* the bar, its labels and the swatches */
#define BAR_W 14
#define LEGEND_GAP 16
#define EXACT_RANGE_CELLS (4 << 20)
#define RANGE_SAMPLES 2048 /* per side, beyond EXACT_RANGE_CELLS */

/* What the slice holds: the scale's range and the legend's swatches. */
typedef struct {
  double min, max;
  int64_t n_nan, n_pos_inf, n_neg_inf;
} slice_range;

struct _TsTensorHeatMap {
  GtkWidget parent_instance;
  ts_tensor *tensor;
  ts_tensor_slice slice;
  slice_range range;
  ts_colour_scale scale;
  char *note;
  cairo_surface_t *image; /* the slice, one pixel per element or per sample */
  int image_for_w, image_for_h; /* the map size it was sampled for */
};

G_DEFINE_FINAL_TYPE(TsTensorHeatMap, ts_tensor_heat_map, GTK_TYPE_WIDGET)

GtkWidget *ts_tensor_heat_map_new(void)
{
  return g_object_new(TS_TYPE_TENSOR_HEAT_MAP, NULL);
}

static void invalidate(TsTensorHeatMap *self)
{
  g_clear_pointer(&self->image, cairo_surface_destroy);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

/* The slice's range, over every cell or a grid of samples. */
static void find_range(const ts_tensor *t, const ts_tensor_slice *s, slice_range *out)
{
  *out = (slice_range){ .min = INFINITY, .max = -INFINITY };
  ts_element_loader load = ts_tensor_element_loader(ts_tensor_dtype(t));
  const void *data = ts_tensor_data(t);
  int64_t rows = ts_tensor_slice_rows(s), cols = ts_tensor_slice_cols(s);
  gboolean exact = rows * cols <= EXACT_RANGE_CELLS;
  int64_t nr = exact ? rows : MIN(rows, RANGE_SAMPLES), nc = exact ? cols : MIN(cols, RANGE_SAMPLES);
  for (int64_t i = 0; i < nr; i++)
    for (int64_t j = 0; j < nc; j++) {
      double v = load(data, ts_tensor_slice_offset(s, i * rows / nr, j * cols / nc));
      if (isnan(v))
        out->n_nan++;
      else if (isinf(v))
        *(v > 0 ? &out->n_pos_inf : &out->n_neg_inf) += 1;
      else {
        out->min = MIN(out->min, v);
        out->max = MAX(out->max, v);
      }
    }
  if (out->min > out->max)
    out->min = out->max = NAN;
}

void ts_tensor_heat_map_set_slice(TsTensorHeatMap *self, ts_tensor *t, const ts_tensor_slice *s)
{
  g_return_if_fail(TS_IS_TENSOR_HEAT_MAP(self) && (!t || s));
  g_return_if_fail(!t || (ts_tensor_data(t) && ts_tensor_element_loader(ts_tensor_dtype(t))));
  if (t && t == self->tensor && !self->note && ts_tensor_slice_equal(s, &self->slice))
    return;
  ts_tensor_ref(t);
  ts_tensor_unref(self->tensor);
  self->tensor = t;
  if (s)
    self->slice = *s;
  if (t) {
    find_range(t, &self->slice, &self->range);
    ts_colour_scale_init(&self->scale, self->range.min, self->range.max);
  }
  g_clear_pointer(&self->note, g_free);
  invalidate(self);
}

void ts_tensor_heat_map_set_note(TsTensorHeatMap *self, const char *note)
{
  g_return_if_fail(TS_IS_TENSOR_HEAT_MAP(self));
  g_free(self->note);
  self->note = g_strdup(note);
  invalidate(self);
}

/* Where the map goes: cells cw × ch, square where they can be, fitted to
 * the space left of the legend and centred in it.  A thin slice (a row
 * of a vector) is stretched to MIN_SIDE across rather than drawn as a
 * hairline.  FALSE when there is nothing to draw. */
#define MIN_SIDE 32
static gboolean map_geometry(TsTensorHeatMap *self, double *x0, double *y0, double *cw, double *ch)
{
  if (!self->tensor || self->note)
    return FALSE;
  int64_t rows = ts_tensor_slice_rows(&self->slice), cols = ts_tensor_slice_cols(&self->slice);
  double aw = gtk_widget_get_width(GTK_WIDGET(self)) - LEGEND_GAP - LEGEND_W - 2 * PAD;
  double ah = gtk_widget_get_height(GTK_WIDGET(self)) - 2 * PAD;
  if (rows <= 0 || cols <= 0 || aw < 1 || ah < 1)
    return FALSE;
  double cell = MIN(aw / (double)cols, ah / (double)rows);
  /* on whole pixels, from and to: a map edge mid-pixel has its first or
   * last row and column blended into the background */
  *cw = floor(MAX(cell, MIN(aw, MIN_SIDE) / (double)cols) * (double)cols) / (double)cols;
  *ch = floor(MAX(cell, MIN(ah, MIN_SIDE) / (double)rows) * (double)rows) / (double)rows;
  if (*cw <= 0 || *ch <= 0)
    return FALSE;
  *x0 = PAD + floor((aw - *cw * (double)cols) / 2);
  *y0 = PAD + floor((ah - *ch * (double)rows) / 2);
  return TRUE;
}

gboolean ts_tensor_heat_map_cell_at(TsTensorHeatMap *self, double x, double y, int64_t *row, int64_t *col)
{
  g_return_val_if_fail(TS_IS_TENSOR_HEAT_MAP(self), FALSE);
  double x0, y0, cw, ch;
  if (!map_geometry(self, &x0, &y0, &cw, &ch))
    return FALSE;
  double c = floor((x - x0) / cw), r = floor((y - y0) / ch);
  if (c < 0 || r < 0 || c >= (double)ts_tensor_slice_cols(&self->slice) ||
      r >= (double)ts_tensor_slice_rows(&self->slice))
    return FALSE;
  *row = (int64_t)r;
  *col = (int64_t)c;
  return TRUE;
}

gboolean ts_tensor_heat_map_cell_centre(TsTensorHeatMap *self, int64_t row, int64_t col, double *x,
                                        double *y)
{
  g_return_val_if_fail(TS_IS_TENSOR_HEAT_MAP(self), FALSE);
  double x0, y0, cw, ch;
  if (!map_geometry(self, &x0, &y0, &cw, &ch))
    return FALSE;
  *x = x0 + ((double)col + 0.5) * cw;
  *y = y0 + ((double)row + 0.5) * ch;
  return TRUE;
}

char *ts_tensor_heat_map_dup_tooltip_at(TsTensorHeatMap *self, double x, double y)
{
  g_return_val_if_fail(TS_IS_TENSOR_HEAT_MAP(self), NULL);
  int64_t row, col;
  if (!ts_tensor_heat_map_cell_at(self, x, y, &row, &col))
    return NULL;
  char value[256];
  ts_tensor_format_element(self->tensor, ts_tensor_slice_offset(&self->slice, row, col), value,
                           sizeof value);
  g_autofree char *index = ts_tensor_slice_format_index(&self->slice, row, col);
  return g_strdup_printf("%s = %s", index, value);
}

static gboolean on_query_tooltip(GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                                 gpointer data)
{
  g_autofree char *text = ts_tensor_heat_map_dup_tooltip_at(TS_TENSOR_HEAT_MAP(widget), x, y);
  if (!text)
    return FALSE;
  gtk_tooltip_set_text(tooltip, text);
  return TRUE;
}

/* The slice as an image of w × h pixels (the whole slice when it fits,
 * else sampled: each pixel the element under its top-left corner). */
static cairo_surface_t *make_image(TsTensorHeatMap *self, int w, int h)
{
  int64_t rows = ts_tensor_slice_rows(&self->slice), cols = ts_tensor_slice_cols(&self->slice);
  ts_element_loader load = ts_tensor_element_loader(ts_tensor_dtype(self->tensor));
  const void *data = ts_tensor_data(self->tensor);
  cairo_surface_t *image = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
  guint8 *pixels = cairo_image_surface_get_data(image);
  int stride = cairo_image_surface_get_stride(image);
  for (int py = 0; py < h; py++) {
    int64_t r = (int64_t)py * rows / h;
    guint32 *line = (guint32 *)(pixels + (size_t)py * (size_t)stride);
    for (int px = 0; px < w; px++) {
      int64_t c = (int64_t)px * cols / w;
      line[px] = ts_colour_scale_rgb(&self->scale, load(data, ts_tensor_slice_offset(&self->slice, r, c)));
    }
  }
  cairo_surface_mark_dirty(image);
  return image;
}

static void draw_text(GtkWidget *widget, cairo_t *cr, const char *text, double x, double y, double yalign)
{
  PangoLayout *layout = gtk_widget_create_pango_layout(widget, text);
  int tw, th;
  pango_layout_get_pixel_size(layout, &tw, &th);
  cairo_move_to(cr, x, y - th * yalign);
  pango_cairo_show_layout(cr, layout);
  g_object_unref(layout);
}

static void draw_legend(TsTensorHeatMap *self, cairo_t *cr, double x, double y0, double height,
                        const GdkRGBA *fg)
{
  GtkWidget *widget = GTK_WIDGET(self);
  /* room below the bar for the slice's ends and the swatches */
  int n_swatches = (self->range.n_nan > 0) + (self->range.n_pos_inf > 0) + (self->range.n_neg_inf > 0);
  double room = gtk_widget_get_height(widget) - PAD - y0 - 48 - 18 * n_swatches;
  height = MAX(MIN(height, room), 60);
  cairo_pattern_t *ramp = cairo_pattern_create_linear(0, y0 + height, 0, y0);
  for (int i = 0; i <= 16; i++) {
    guint32 rgb = ts_colour_scale_at(&self->scale, i / 16.0);
    cairo_pattern_add_color_stop_rgb(ramp, i / 16.0, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                                     (rgb & 0xff) / 255.0);
  }
  cairo_rectangle(cr, x, y0, BAR_W, height);
  cairo_set_source(cr, ramp);
  cairo_fill_preserve(cr);
  cairo_pattern_destroy(ramp);
  gdk_cairo_set_source_rgba(cr, fg);
  cairo_set_line_width(cr, 1);
  cairo_stroke(cr);

  char text[64];
  double tx = x + BAR_W + 4;
  ts_format_value(self->scale.hi, text, sizeof text);
  draw_text(widget, cr, text, tx, y0, 0);
  ts_format_value(self->scale.lo, text, sizeof text);
  draw_text(widget, cr, text, tx, y0 + height, 1);
  if (self->scale.diverging)
    draw_text(widget, cr, "0", tx, y0 + height / 2, 0.5);

  /* swatches for the values off the scale, when there are any */
  const struct { int64_t n; guint32 rgb; const char *name; } off[] = {
    { self->range.n_nan, TS_COLOUR_NAN, "NaN" },
    { self->range.n_pos_inf, TS_COLOUR_POS_INF, "+Inf" },
    { self->range.n_neg_inf, TS_COLOUR_NEG_INF, "−Inf" },
  };
  /* the slice's own ends (a diverging bar is symmetric about 0) */
  double sy = y0 + height + 8;
  char lo[32], hi[32];
  ts_format_value(self->range.min, lo, sizeof lo);
  ts_format_value(self->range.max, hi, sizeof hi);
  g_autofree char *ends = g_strdup_printf(_("min %s\nmax %s"), lo, hi);
  PangoLayout *layout = gtk_widget_create_pango_layout(widget, ends);
  int tw, th;
  pango_layout_get_pixel_size(layout, &tw, &th);
  cairo_move_to(cr, x, sy);
  pango_cairo_show_layout(cr, layout);
  g_object_unref(layout);
  sy += th + 8;
  for (size_t i = 0; i < G_N_ELEMENTS(off); i++) {
    if (off[i].n == 0)
      continue;
    cairo_rectangle(cr, x + 0.5, sy + 0.5, BAR_W - 1, 11);
    cairo_set_source_rgb(cr, ((off[i].rgb >> 16) & 0xff) / 255.0, ((off[i].rgb >> 8) & 0xff) / 255.0,
                         (off[i].rgb & 0xff) / 255.0);
    cairo_fill_preserve(cr);
    gdk_cairo_set_source_rgba(cr, fg);
    cairo_stroke(cr);
    draw_text(widget, cr, off[i].name, tx, sy + 6, 0.5);
    sy += 18;
  }
}

static void ts_tensor_heat_map_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
  TsTensorHeatMap *self = TS_TENSOR_HEAT_MAP(widget);
  int width = gtk_widget_get_width(widget), height = gtk_widget_get_height(widget);
  cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, width, height));
  GdkRGBA fg;
  gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
  double x0, y0, cw, ch;
  if (!map_geometry(self, &x0, &y0, &cw, &ch)) {
    const char *note = self->note;
    if (note) {
      GdkRGBA dim = fg;
      dim.alpha *= 0.6f;
      gdk_cairo_set_source_rgba(cr, &dim);
      draw_text(widget, cr, note, PAD, PAD, 0);
    }
    cairo_destroy(cr);
    return;
  }
  int64_t rows = ts_tensor_slice_rows(&self->slice), cols = ts_tensor_slice_cols(&self->slice);
  double mw = cw * (double)cols, mh = ch * (double)rows;
  int iw = (int)MIN((double)cols, ceil(mw)), ih = (int)MIN((double)rows, ceil(mh));
  iw = MAX(iw, 1);
  ih = MAX(ih, 1);
  if (self->image && (self->image_for_w != iw || self->image_for_h != ih))
    g_clear_pointer(&self->image, cairo_surface_destroy);
  if (!self->image) {
    self->image = make_image(self, iw, ih);
    self->image_for_w = iw;
    self->image_for_h = ih;
  }
  cairo_save(cr);
  cairo_translate(cr, x0, y0);
  cairo_scale(cr, mw / iw, mh / ih);
  cairo_set_source_surface(cr, self->image, 0, 0);
  cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
  cairo_rectangle(cr, 0, 0, iw, ih);
  cairo_fill(cr);
  cairo_restore(cr);
  GdkRGBA frame = fg;
  frame.alpha *= 0.4f;
  gdk_cairo_set_source_rgba(cr, &frame);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, floor(x0) - 0.5, floor(y0) - 0.5, ceil(mw) + 1, ceil(mh) + 1);
  cairo_stroke(cr);
  draw_legend(self, cr, x0 + mw + LEGEND_GAP, y0, mh, &fg);
  cairo_destroy(cr);
}

static void ts_tensor_heat_map_size_allocate(GtkWidget *widget, int width, int height, int baseline)
{
  gtk_widget_queue_draw(widget);
}

static void ts_tensor_heat_map_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *min,
                                       int *nat, int *min_baseline, int *nat_baseline)
{
  *min = orientation == GTK_ORIENTATION_HORIZONTAL ? LEGEND_GAP + LEGEND_W + 2 * PAD + 40 : 120;
  *nat = orientation == GTK_ORIENTATION_HORIZONTAL ? 480 : 320;
}

static void ts_tensor_heat_map_dispose(GObject *object)
{
  TsTensorHeatMap *self = TS_TENSOR_HEAT_MAP(object);
  g_clear_pointer(&self->tensor, ts_tensor_unref);
  g_clear_pointer(&self->image, cairo_surface_destroy);
  g_clear_pointer(&self->note, g_free);
  G_OBJECT_CLASS(ts_tensor_heat_map_parent_class)->dispose(object);
}

static void ts_tensor_heat_map_class_init(TsTensorHeatMapClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  G_OBJECT_CLASS(klass)->dispose = ts_tensor_heat_map_dispose;
  widget_class->snapshot = ts_tensor_heat_map_snapshot;
  widget_class->measure = ts_tensor_heat_map_measure;
  widget_class->size_allocate = ts_tensor_heat_map_size_allocate;
  gtk_widget_class_set_css_name(widget_class, "tsheatmap");
}

static void ts_tensor_heat_map_init(TsTensorHeatMap *self)
{
  gtk_widget_set_has_tooltip(GTK_WIDGET(self), TRUE);
  g_signal_connect(self, "query-tooltip", G_CALLBACK(on_query_tooltip), NULL);
}

const ts_colour_scale *ts_tensor_heat_map_get_scale(TsTensorHeatMap *self)
{
  g_return_val_if_fail(TS_IS_TENSOR_HEAT_MAP(self), NULL);
  return &self->scale;
}
