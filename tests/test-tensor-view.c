/* test-tensor-view.c — the tensor inspector: statistics, histograms,
 * slices and differences on known tensors of every dtype (no display
 * needed), then TsTensorView in a window (under Xvfb; skipped with no
 * display): the summary, statistics of a big tensor computed off the main
 * loop, a rank-4 slice in the table and under the heat map's pointer, the
 * histogram, a difference, .npy export read back, and bad input.
 * TS_INSPECTOR_SCREENSHOTS=DIR saves the inspector, light and dark. */
#include <float.h>
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>
#include <tracescope.h>
#include <unistd.h>

#include "test-wait.h"
#include "ts-tensor-view-private.h"

static gboolean have_display;

static ts_tensor *f32_tensor(ts_shape shape, const float *v)
{
  return ts_constant(TS_F32, shape, v);
}

static char *temp_path(const char *name)
{
  static int serial;
  return g_strdup_printf("%s/ts-inspector-%d-%d-%s", g_get_tmp_dir(), (int)getpid(), serial++, name);
}

/* ---- no display ------------------------------------------------------------------- */

static void test_stats_float(void)
{
  const float v[] = { 1, 0, -2, NAN, INFINITY, -INFINITY, 0, 3 };
  ts_inspector_stats s;
  ts_inspector_stats_compute(f32_tensor(TS_SHAPE(2, 4), v), &s);
  g_assert_true(s.numeric);
  g_assert_cmpint(s.n, ==, 8);
  g_assert_cmpint(s.n_finite, ==, 5);
  g_assert_cmpint(s.n_nan, ==, 1);
  g_assert_cmpint(s.n_pos_inf, ==, 1);
  g_assert_cmpint(s.n_neg_inf, ==, 1);
  g_assert_cmpint(s.n_zero, ==, 2);
  g_assert_cmpfloat(s.min, ==, -2);
  g_assert_cmpfloat(s.max, ==, 3);
  g_assert_cmpfloat_with_epsilon(s.mean, 0.4, 1e-12);
  /* deviations 0.6, -0.4, -2.4, -0.4, 2.6 */
  g_assert_cmpfloat_with_epsilon(s.std, sqrt(13.2 / 5), 1e-12);
}

static void test_stats_dtypes(void)
{
  ts_inspector_stats s;
  const double d[] = { 1e300, -1e300, 0.5 };
  ts_inspector_stats_compute(ts_constant(TS_F64, TS_SHAPE(3), d), &s);
  g_assert_cmpfloat(s.max, ==, 1e300);
  g_assert_cmpfloat(s.min, ==, -1e300);
  g_assert_cmpint(s.n_finite, ==, 3);

  /* the widest range there is: binned and coloured without overflow */
  const double wide[] = { -DBL_MAX, DBL_MAX, 0 };
  ts_tensor *tw = ts_constant(TS_F64, TS_SHAPE(3), wide);
  ts_inspector_stats_compute(tw, &s);
  ts_tensor_histogram hw;
  ts_tensor_histogram_compute(tw, &s, &hw);
  g_assert_cmpint(hw.n_bins, ==, 2);
  g_assert_cmpint(hw.counts[0], ==, 1); /* -max; 0 starts the upper half */
  g_assert_cmpint(hw.counts[1], ==, 2);
  ts_colour_scale wide_scale;
  ts_colour_scale_init(&wide_scale, -DBL_MAX, DBL_MAX);
  g_assert_cmphex(ts_colour_scale_rgb(&wide_scale, 0), ==, 0xf7f7f7);
  g_assert_cmphex(ts_colour_scale_rgb(&wide_scale, DBL_MAX), ==, 0xb2182b);

  const int32_t i[] = { -5, 0, 5, 10 };
  ts_inspector_stats_compute(ts_constant(TS_I32, TS_SHAPE(4), i), &s);
  g_assert_cmpfloat(s.mean, ==, 2.5);
  g_assert_cmpint(s.n_zero, ==, 1);

  const int64_t l[] = { INT64_C(1) << 40, 0 };
  ts_inspector_stats_compute(ts_constant(TS_I64, TS_SHAPE(2), l), &s);
  g_assert_cmpfloat(s.max, ==, (double)(INT64_C(1) << 40));

  const uint8_t u[] = { 255, 1 };
  ts_inspector_stats_compute(ts_constant(TS_U8, TS_SHAPE(2), u), &s);
  g_assert_cmpfloat(s.max, ==, 255);

  const bool b[] = { true, false, true, true };
  ts_inspector_stats_compute(ts_constant(TS_BOOL, TS_SHAPE(4), b), &s);
  g_assert_true(s.numeric);
  g_assert_cmpfloat(s.mean, ==, 0.75);
  g_assert_cmpint(s.n_zero, ==, 1);

  const char *str[] = { "a", "b" };
  ts_inspector_stats_compute(ts_constant(TS_STRING, TS_SHAPE(2), str), &s);
  g_assert_false(s.numeric);
  g_assert_cmpint(s.n, ==, 2);

  /* empty and all-NaN: no finite values, no crash */
  ts_inspector_stats_compute(ts_tensor_new(TS_F32, TS_SHAPE(0, 3)), &s);
  g_assert_cmpint(s.n_finite, ==, 0);
  g_assert_true(isnan(s.min));
  const float nan2[] = { NAN, NAN };
  ts_inspector_stats_compute(f32_tensor(TS_SHAPE(2), nan2), &s);
  g_assert_cmpint(s.n_nan, ==, 2);
  ts_tensor_histogram h;
  ts_tensor_histogram_compute(f32_tensor(TS_SHAPE(2), nan2), &s, &h);
  g_assert_cmpint(h.n_bins, ==, 0);
  g_assert_cmpint(h.n_nan, ==, 2);
}

static void test_element_text(void)
{
  char buf[64];
  const float f[] = { 0.25f, -INFINITY, NAN, -0.0f };
  ts_tensor *t = f32_tensor(TS_SHAPE(4), f);
  const char *want[] = { "0.25", "-inf", "nan", "0" };
  for (int i = 0; i < 4; i++) {
    ts_tensor_format_element(t, i, buf, sizeof buf);
    g_assert_cmpstr(buf, ==, want[i]);
  }
  const bool b[] = { true };
  ts_tensor_format_element(ts_constant(TS_BOOL, TS_SHAPE(1), b), 0, buf, sizeof buf);
  g_assert_cmpstr(buf, ==, "true");
  const int64_t l[] = { INT64_C(-9007199254740993) };
  ts_tensor_format_element(ts_constant(TS_I64, TS_SHAPE(1), l), 0, buf, sizeof buf);
  g_assert_cmpstr(buf, ==, "-9007199254740993");
  const char *s[] = { "hi" };
  ts_tensor_format_element(ts_constant(TS_STRING, TS_SHAPE(1), s), 0, buf, sizeof buf);
  g_assert_cmpstr(buf, ==, "\"hi\"");
}

static void test_histogram(void)
{
  /* 0 .. 99 and three values off the scale: ten bins of ten */
  float v[103];
  for (int i = 0; i < 100; i++)
    v[i] = (float)i;
  v[100] = NAN;
  v[101] = INFINITY;
  v[102] = -INFINITY;
  ts_tensor *t = f32_tensor(TS_SHAPE(103), v);
  ts_inspector_stats s;
  ts_tensor_histogram h;
  ts_inspector_stats_compute(t, &s);
  ts_tensor_histogram_compute(t, &s, &h);
  g_assert_cmpint(h.n_bins, ==, 10);
  g_assert_cmpfloat(h.lo, ==, 0);
  g_assert_cmpfloat(h.hi, ==, 99);
  int64_t total = 0;
  for (int b = 0; b < h.n_bins; b++)
    total += h.counts[b];
  g_assert_cmpint(total, ==, 100);
  g_assert_cmpint(h.counts[0], ==, 10);
  g_assert_cmpint(h.counts[9], ==, 10);
  g_assert_cmpint(h.n_nan, ==, 1);
  g_assert_cmpint(h.n_pos_inf, ==, 1);
  g_assert_cmpint(h.n_neg_inf, ==, 1);

  /* small integer ranges: one bin per value */
  const int32_t i[] = { 0, 1, 1, 2, 2, 2 };
  t = ts_constant(TS_I32, TS_SHAPE(6), i);
  ts_inspector_stats_compute(t, &s);
  ts_tensor_histogram_compute(t, &s, &h);
  g_assert_cmpint(h.n_bins, ==, 3);
  g_assert_cmpint(h.counts[0], ==, 1);
  g_assert_cmpint(h.counts[1], ==, 2);
  g_assert_cmpint(h.counts[2], ==, 3);

  /* all equal: one bin holding all */
  const float same[] = { 4, 4, 4 };
  t = f32_tensor(TS_SHAPE(3), same);
  ts_inspector_stats_compute(t, &s);
  ts_tensor_histogram_compute(t, &s, &h);
  g_assert_cmpint(h.n_bins, ==, 1);
  g_assert_cmpint(h.counts[0], ==, 3);
}

static void test_slice(void)
{
  ts_tensor_slice s;
  ts_tensor_slice_init(&s, TS_SHAPE(2, 3, 4, 5));
  g_assert_cmpint(s.row_axis, ==, 2);
  g_assert_cmpint(s.col_axis, ==, 3);
  g_assert_true(ts_tensor_slice_set_axes(&s, 1, 3));
  g_assert_false(ts_tensor_slice_set_axes(&s, 1, 1));
  g_assert_false(ts_tensor_slice_set_axes(&s, 0, 4));
  ts_tensor_slice_set_index(&s, 0, 1);
  ts_tensor_slice_set_index(&s, 2, 99); /* clamped to 3 */
  g_assert_cmpint(s.index[2], ==, 3);
  g_assert_cmpint(ts_tensor_slice_rows(&s), ==, 3);
  g_assert_cmpint(ts_tensor_slice_cols(&s), ==, 5);
  g_assert_cmpint(ts_tensor_slice_offset(&s, 2, 4), ==, ((1 * 3 + 2) * 4 + 3) * 5 + 4);
  g_autofree char *index = ts_tensor_slice_format_index(&s, 2, 4);
  g_assert_cmpstr(index, ==, "[1, 2, 3, 4]");
  g_autofree char *desc = ts_tensor_slice_describe(&s);
  g_assert_cmpstr(desc, ==, "[1, :, 3, :]");

  ts_tensor_slice_init(&s, TS_SHAPE(7));
  g_assert_cmpint(ts_tensor_slice_rows(&s), ==, 1);
  g_assert_cmpint(ts_tensor_slice_cols(&s), ==, 7);
  g_assert_cmpint(ts_tensor_slice_offset(&s, 0, 6), ==, 6);
  ts_tensor_slice_init(&s, TS_SCALAR_SHAPE);
  g_assert_cmpint(ts_tensor_slice_rows(&s) * ts_tensor_slice_cols(&s), ==, 1);
  g_assert_cmpint(ts_tensor_slice_offset(&s, 0, 0), ==, 0);
}

static void test_diff(void)
{
  const float a[] = { 1, 2, NAN, INFINITY, 5, 0 };
  const double b[] = { 1, 2.5, NAN, INFINITY, 4, 0.5 };
  double max_abs, max_rel;
  GError *error = NULL;
  ts_tensor *d = ts_tensor_diff(f32_tensor(TS_SHAPE(2, 3), a), ts_constant(TS_F64, TS_SHAPE(2, 3), b), &max_abs,
                                &max_rel, &error);
  g_assert_no_error(error);
  g_assert_cmpint(ts_tensor_dtype(d), ==, TS_F64);
  const double want[] = { 0, -0.5, 0, 0, 1, -0.5 };
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat(ts_tensor_get_f64(d, i), ==, want[i]);
  g_assert_cmpfloat(max_abs, ==, 1);
  g_assert_cmpfloat(max_rel, ==, 1); /* 0.5 against 0.5 */
  ts_tensor_unref(d);

  d = ts_tensor_diff(ts_tensor_new(TS_F32, TS_SHAPE(2, 3)), ts_tensor_new(TS_F32, TS_SHAPE(3, 2)), &max_abs,
                     &max_rel, &error);
  g_assert_null(d);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(error->message, "f32[2,3]"));
  g_assert_nonnull(strstr(error->message, "f32[3,2]"));
  g_clear_error(&error);

  const char *s[] = { "x" };
  g_assert_false(ts_tensor_diff_check(ts_constant(TS_STRING, TS_SHAPE(1), s), ts_tensor_new(TS_F32, TS_SHAPE(1)),
                                      &error));
  g_assert_nonnull(strstr(error->message, "no numeric values"));
  g_clear_error(&error);
}

static void test_colour_scale(void)
{
  ts_colour_scale s;
  ts_colour_scale_init(&s, -1, 3);
  g_assert_true(s.diverging);
  g_assert_cmpfloat(s.lo, ==, -3);
  g_assert_cmphex(ts_colour_scale_rgb(&s, 0), ==, 0xf7f7f7);
  g_assert_cmphex(ts_colour_scale_rgb(&s, 3), ==, 0xb2182b);
  ts_colour_scale_init(&s, 2, 3);
  g_assert_false(s.diverging);
  g_assert_cmphex(ts_colour_scale_rgb(&s, 2), ==, 0x440154);
  g_assert_cmphex(ts_colour_scale_rgb(&s, NAN), ==, TS_COLOUR_NAN);
  g_assert_cmphex(ts_colour_scale_rgb(&s, -INFINITY), ==, TS_COLOUR_NEG_INF);
  g_assert_cmphex(ts_colour_scale_rgb(&s, INFINITY), ==, TS_COLOUR_POS_INF);
}

/* ---- the widget in a window --------------------------------------------------------- */

typedef struct {
  GtkWindow *window;
  TsTensorView *view;
} fixture;

static void fixture_init(fixture *f, int width, int height)
{
  f->window = GTK_WINDOW(gtk_window_new());
  gtk_window_set_default_size(f->window, width, height);
  f->view = TS_TENSOR_VIEW(ts_tensor_view_new());
  g_object_ref(f->view); /* to check it is finalized at the end */
  gtk_widget_set_margin_start(GTK_WIDGET(f->view), 12);
  gtk_widget_set_margin_end(GTK_WIDGET(f->view), 12);
  gtk_widget_set_margin_top(GTK_WIDGET(f->view), 12);
  gtk_widget_set_margin_bottom(GTK_WIDGET(f->view), 12);
  gtk_window_set_child(f->window, GTK_WIDGET(f->view));
  gtk_window_present(f->window);
}

static void fixture_clear(fixture *f)
{
  gtk_window_destroy(f->window);
  g_assert_finalize_object(f->view);
  while (g_main_context_iteration(NULL, FALSE))
    ;
}

static gboolean not_busy(gpointer view)
{
  return !ts_tensor_view_get_busy(view);
}

typedef struct {
  GtkWidget *widget;
  int min_width;
} shown_wait;

static gboolean widget_shown(gpointer data)
{
  shown_wait *w = data;
  return gtk_widget_get_mapped(w->widget) && gtk_widget_get_width(w->widget) >= w->min_width;
}

static void wait_shown(GtkWidget *widget, int min_width)
{
  shown_wait w = { widget, min_width };
  test_wait_for(widget_shown, &w, "the widget to be shown");
}

typedef struct {
  GtkWidget *widget;
  GskRenderNode *node;
} snapshot_wait;

/* The widget's drawing, once it has one (after a change it has none until
 * it is allocated again). */
static gboolean snapshot_taken(gpointer data)
{
  snapshot_wait *s = data;
  int w = gtk_widget_get_width(s->widget), h = gtk_widget_get_height(s->widget);
  GdkPaintable *paintable = gtk_widget_paintable_new(s->widget);
  GtkSnapshot *snapshot = gtk_snapshot_new();
  gdk_paintable_snapshot(paintable, snapshot, w, h);
  s->node = gtk_snapshot_free_to_node(snapshot);
  g_object_unref(paintable);
  return s->node != NULL;
}

static GdkTexture *render_widget(GtkWidget *widget)
{
  snapshot_wait s = { widget, NULL };
  test_wait_for(snapshot_taken, &s, "the widget's drawing");
  GskRenderer *renderer = gsk_cairo_renderer_new();
  GError *error = NULL;
  g_assert_true(gsk_renderer_realize(renderer, NULL, &error));
  g_assert_no_error(error);
  GdkTexture *texture = gsk_renderer_render_texture(
    renderer, s.node, &GRAPHENE_RECT_INIT(0, 0, gtk_widget_get_width(widget), gtk_widget_get_height(widget)));
  gsk_renderer_unrealize(renderer);
  g_object_unref(renderer);
  gsk_render_node_unref(s.node);
  return texture;
}

static guint32 pixel_at(GtkWidget *widget, double x, double y)
{
  GdkTexture *texture = render_widget(widget);
  int w = gdk_texture_get_width(texture), h = gdk_texture_get_height(texture);
  guint8 *data = g_malloc((gsize)w * (gsize)h * 4);
  gdk_texture_download(texture, data, (gsize)w * 4);
  g_assert_true(x >= 0 && y >= 0 && x < w && y < h);
  guint32 p = ((const guint32 *)(data + (gsize)y * 4 * (gsize)w))[(int)x] & 0xffffff;
  g_free(data);
  g_object_unref(texture);
  return p;
}

static void test_view_summary(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f;
  fixture_init(&f, 700, 500);
  const float v[] = { 1, 0, -2, NAN, INFINITY, -INFINITY, 0, 3 };
  ts_tensor *t = f32_tensor(TS_SHAPE(2, 4), v);
  ts_tensor_view_set_tensor(f.view, t, "logits");
  g_assert_true(ts_tensor_view_get_tensor(f.view) == t);
  g_assert_false(ts_tensor_view_get_busy(f.view)); /* small: computed at once */
  g_assert_nonnull(strstr(_ts_tensor_view_get_summary(f.view), "f32[2,4]"));
  g_assert_nonnull(strstr(_ts_tensor_view_get_summary(f.view), "CPU"));
  g_assert_nonnull(strstr(_ts_tensor_view_get_summary(f.view), "8\u00a0elements"));
  const char *stats = _ts_tensor_view_get_stats_text(f.view);
  g_assert_nonnull(strstr(stats, "min\u00a0-2 · max\u00a03 · mean\u00a00.4"));
  g_assert_nonnull(strstr(stats, "NaN\u00a01 · +Inf\u00a01 · −Inf\u00a01 · zeros\u00a02"));
  g_assert_cmpint(_ts_tensor_view_get_stats(f.view)->n_zero, ==, 2);
  /* floats with no NaN or Inf say so in one item; integers say nothing of them */
  const float finite[] = { 1, 0, -2, 3 };
  ts_tensor_view_set_tensor(f.view, f32_tensor(TS_SHAPE(4), finite), "finite");
  stats = _ts_tensor_view_get_stats_text(f.view);
  g_assert_nonnull(strstr(stats, "std\u00a01.80278 · no\u00a0NaN\u00a0or\u00a0Inf · zeros\u00a01"));
  g_assert_null(strstr(stats, "+Inf"));
  const int32_t ints[] = { 4, 0, 0 };
  ts_tensor_view_set_tensor(f.view, ts_constant(TS_I32, TS_SHAPE(3), ints), "ints");
  stats = _ts_tensor_view_get_stats_text(f.view);
  g_assert_nonnull(strstr(stats, "max\u00a04"));
  g_assert_nonnull(strstr(stats, " · zeros\u00a02"));
  g_assert_null(strstr(stats, "NaN"));
  /* a host copy of a device's tensor (a worker's result) names the device,
   * until the next tensor */
  ts_tensor_view_set_copy(f.view, t, "result", "SIM:0");
  g_assert_cmpstr(_ts_tensor_view_get_summary(f.view), ==, "f32[2,4] · SIM:0 · 8\u00a0elements");
  ts_tensor_view_set_tensor(f.view, t, "result");
  g_assert_cmpstr(_ts_tensor_view_get_summary(f.view), ==, "f32[2,4] · CPU · 8\u00a0elements");

  /* the view holds its own reference: the scope's going does not matter */
  ts_scope *scope = ts_scope_begin();
  ts_tensor *scoped = ts_scalar_i32(42);
  ts_tensor_view_set_tensor(f.view, scoped, NULL);
  ts_scope_end(scope);
  g_autofree char *cell = _ts_tensor_table_dup_cell_text(_ts_tensor_view_get_table(f.view), 0, 0);
  g_assert_cmpstr(cell, ==, "42");

  /* strings: the values, no statistics */
  const char *words[] = { "to", "be" };
  ts_tensor_view_set_tensor(f.view, ts_constant(TS_STRING, TS_SHAPE(2), words), "words");
  g_assert_nonnull(strstr(_ts_tensor_view_get_stats_text(f.view), "not numeric"));
  g_assert_null(_ts_tensor_view_get_stats(f.view));
  g_free(cell);
  cell = _ts_tensor_table_dup_cell_text(_ts_tensor_view_get_table(f.view), 1, 0);
  g_assert_cmpstr(cell, ==, "\"be\"");

  /* a vector reads down one column, a page of rows at a time; its heat map is a strip */
  float ramp[450];
  for (int i = 0; i < 450; i++)
    ramp[i] = (float)i / 10;
  ts_tensor_view_set_tensor(f.view, f32_tensor(TS_SHAPE(450), ramp), "ramp");
  TsTensorTable *table = _ts_tensor_view_get_table(f.view);
  guint nr, nc;
  ts_tensor_table_get_pages(table, &nr, &nc);
  g_assert_cmpuint(nr, ==, (450 + TS_TENSOR_TABLE_PAGE_ROWS - 1) / TS_TENSOR_TABLE_PAGE_ROWS);
  g_assert_cmpuint(nc, ==, 1);
  g_assert_cmpuint(ts_tensor_table_get_n_columns(table), ==, 2);
  ts_tensor_table_set_page(table, nr - 1, 0);
  g_free(cell);
  cell = _ts_tensor_table_dup_cell_text(table, 449, 0);
  g_assert_cmpstr(cell, ==, "44.9");
  _ts_tensor_view_show_page(f.view, "heat-map");
  TsTensorHeatMap *map = _ts_tensor_view_get_heat_map(f.view);
  wait_shown(GTK_WIDGET(map), 200);
  double x0, y0, x1, y1;
  g_assert_true(ts_tensor_heat_map_cell_centre(map, 0, 0, &x0, &y0));
  g_assert_true(ts_tensor_heat_map_cell_centre(map, 0, 449, &x1, &y1));
  int64_t row, col;
  g_assert_true(ts_tensor_heat_map_cell_at(map, x1, y1 + 10, &row, &col)); /* 32 px tall */
  g_assert_cmpint(col, ==, 449);
  g_autofree char *tip = ts_tensor_heat_map_dup_tooltip_at(map, x1, y1);
  g_assert_cmpstr(tip, ==, "[449] = 44.9");

  ts_tensor_view_set_tensor(f.view, NULL, NULL);
  g_assert_null(ts_tensor_view_get_tensor(f.view));
  fixture_clear(&f);
}

static void test_view_big_async(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f;
  fixture_init(&f, 700, 500);
  /* 2^21 + 3 elements: over the threshold, computed on a thread */
  ts_scope *scope = ts_scope_begin();
  ts_tensor *t = ts_fill(TS_SHAPE(3, 1024, 683), ts_scalar_f32(0.5f));
  ts_tensor_view_set_tensor(f.view, t, "big");
  ts_scope_end(scope);
  g_assert_true(ts_tensor_view_get_busy(f.view));
  g_assert_null(_ts_tensor_view_get_stats(f.view));
  /* the table does not wait for them */
  g_autofree char *cell = _ts_tensor_table_dup_cell_text(_ts_tensor_view_get_table(f.view), 3, 5);
  g_assert_cmpstr(cell, ==, "0.5");
  test_wait_for(not_busy, f.view, "the statistics of a big tensor");
  const ts_inspector_stats *s = _ts_tensor_view_get_stats(f.view);
  g_assert_nonnull(s);
  g_assert_cmpint(s->n, ==, 3 * 1024 * 683);
  g_assert_cmpfloat(s->mean, ==, 0.5);
  g_assert_cmpfloat(s->std, ==, 0);
  /* a page of rows and columns at a time */
  guint nr, nc;
  ts_tensor_table_get_pages(_ts_tensor_view_get_table(f.view), &nr, &nc);
  g_assert_cmpuint(nr, ==, (1024 + TS_TENSOR_TABLE_PAGE_ROWS - 1) / TS_TENSOR_TABLE_PAGE_ROWS);
  g_assert_cmpuint(nc, ==, (683 + TS_TENSOR_TABLE_PAGE_COLS - 1) / TS_TENSOR_TABLE_PAGE_COLS);
  g_assert_cmpuint(ts_tensor_table_get_n_columns(_ts_tensor_view_get_table(f.view)), ==,
                   TS_TENSOR_TABLE_PAGE_COLS + 1);
  /* past the end: the last page, its last cell there and the first not */
  ts_tensor_table_set_page(_ts_tensor_view_get_table(f.view), 99, 99);
  g_free(cell);
  cell = _ts_tensor_table_dup_cell_text(_ts_tensor_view_get_table(f.view), 1023, 682);
  g_assert_cmpstr(cell, ==, "0.5");
  g_assert_null(_ts_tensor_table_dup_cell_text(_ts_tensor_view_get_table(f.view), 0, 0));
  g_assert_cmpuint(ts_tensor_table_get_n_columns(_ts_tensor_view_get_table(f.view)), ==, 1 + 683 % 16);

  /* replaced while computing: the late result is dropped, nothing leaks */
  scope = ts_scope_begin();
  ts_tensor_view_set_tensor(f.view, ts_fill(TS_SHAPE(2, 1024, 1024), ts_scalar_f32(1)), "big 2");
  ts_scope_end(scope);
  g_assert_true(ts_tensor_view_get_busy(f.view));
  const float small[] = { 7 };
  ts_tensor_view_set_tensor(f.view, f32_tensor(TS_SHAPE(1), small), "small");
  g_assert_false(ts_tensor_view_get_busy(f.view));
  g_assert_cmpfloat(_ts_tensor_view_get_stats(f.view)->mean, ==, 7);
  fixture_clear(&f);
}

static int n_children(GtkWidget *w)
{
  int n = 0;
  for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c))
    n++;
  return n;
}

/* A rank-4 tensor [2, 3, 4, 5] holding its flat index, NaN at [1, 2, 2, 3]. */
static ts_tensor *rank4(void)
{
  float v[120];
  for (int i = 0; i < 120; i++)
    v[i] = (float)i;
  v[((1 * 3 + 2) * 4 + 2) * 5 + 3] = NAN;
  return f32_tensor(TS_SHAPE(2, 3, 4, 5), v);
}

static void test_view_rank4_slice(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f;
  fixture_init(&f, 800, 600);
  ts_tensor_view_set_tensor(f.view, rank4(), "rank 4");
  /* compact: the table alone, and only which matrix to show; Inspect opens the rest */
  g_assert_cmpint(n_children(f.view->slice_box), ==, 4); /* rows, columns, axis 0, axis 1 */
  ts_tensor_view_set_compact(f.view, TRUE);
  g_assert_cmpint(n_children(f.view->slice_box), ==, 2);
  g_assert_false(gtk_widget_get_visible(f.view->page_choice));
  _ts_tensor_view_show_page(f.view, "histogram"); /* as Inspect does */
  g_assert_true(gtk_widget_get_visible(f.view->page_choice));
  g_assert_cmpint(n_children(f.view->slice_box), ==, 4);
  gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(f.view->expand_button), FALSE);
  g_assert_cmpstr(gtk_stack_get_visible_child_name(f.view->stack), ==, "table");
  ts_tensor_view_set_compact(f.view, FALSE);
  /* axes 1 and 3 as rows and columns, index 1 along axis 0 and 2 along axis 2 */
  _ts_tensor_view_select_axes(f.view, 1, 3);
  _ts_tensor_view_select_index(f.view, 0, 1);
  _ts_tensor_view_select_index(f.view, 2, 2);
  const ts_tensor_slice *s = _ts_tensor_view_get_slice(f.view);
  g_assert_cmpint(s->row_axis, ==, 1);
  g_assert_cmpint(s->col_axis, ==, 3);
  TsTensorTable *table = _ts_tensor_view_get_table(f.view);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 5; c++) {
      g_autofree char *text = _ts_tensor_table_dup_cell_text(table, r, c);
      int flat = ((1 * 3 + r) * 4 + 2) * 5 + c;
      g_autofree char *want = r == 2 && c == 3 ? g_strdup("nan") : g_strdup_printf("%d", flat);
      g_assert_cmpstr(text, ==, want);
    }
  g_assert_null(_ts_tensor_table_dup_cell_text(table, 3, 0)); /* no row 3 on this slice */
  g_assert_cmpuint(ts_tensor_table_get_n_columns(table), ==, 6);
  /* picking the columns' axis for the rows swaps them */
  _ts_tensor_view_select_axes(f.view, 3, 3);
  g_assert_cmpint(s->row_axis, ==, 3);
  g_assert_cmpint(s->col_axis, ==, 1);
  _ts_tensor_view_select_axes(f.view, 1, 3);

  /* the heat map: hover shows the full index and value, NaN in its own colour */
  _ts_tensor_view_show_page(f.view, "heat-map");
  TsTensorHeatMap *map = _ts_tensor_view_get_heat_map(f.view);
  wait_shown(GTK_WIDGET(map), 200);
  double x, y;
  g_assert_true(ts_tensor_heat_map_cell_centre(map, 1, 4, &x, &y));
  int64_t row, col;
  g_assert_true(ts_tensor_heat_map_cell_at(map, x, y, &row, &col));
  g_assert_cmpint(row, ==, 1);
  g_assert_cmpint(col, ==, 4);
  g_autofree char *tip = ts_tensor_heat_map_dup_tooltip_at(map, x, y);
  g_assert_cmpstr(tip, ==, "[1, 1, 2, 4] = 94");
  g_assert_null(ts_tensor_heat_map_dup_tooltip_at(map, 1, 1)); /* the margin */
  g_assert_true(ts_tensor_heat_map_cell_centre(map, 2, 3, &x, &y));
  g_free(tip);
  tip = ts_tensor_heat_map_dup_tooltip_at(map, x, y);
  g_assert_cmpstr(tip, ==, "[1, 2, 2, 3] = nan");
  g_assert_cmphex(pixel_at(GTK_WIDGET(map), x, y), ==, TS_COLOUR_NAN);
  /* all positive: sequential over the slice's finite values, 70 to 114 */
  const ts_colour_scale *scale = ts_tensor_heat_map_get_scale(map);
  g_assert_false(scale->diverging);
  g_assert_cmpfloat(scale->lo, ==, 70);
  g_assert_cmpfloat(scale->hi, ==, 114);
  g_assert_true(ts_tensor_heat_map_cell_centre(map, 0, 0, &x, &y));
  g_assert_cmphex(pixel_at(GTK_WIDGET(map), x, y), ==, 0x440154); /* viridis' first colour */
  g_assert_true(ts_tensor_heat_map_cell_centre(map, 2, 4, &x, &y));
  g_assert_cmphex(pixel_at(GTK_WIDGET(map), x, y), ==, 0xfde725); /* and its last */
  /* another index along axis 0: [0, :, 2, :] from 10 */
  _ts_tensor_view_select_index(f.view, 0, 0);
  g_assert_cmpfloat(scale->lo, ==, 10);
  g_free(tip);
  tip = ts_tensor_heat_map_dup_tooltip_at(map, x, y);
  g_assert_cmpstr(tip, ==, "[0, 2, 2, 4] = 54");
  fixture_clear(&f);
}

/* A slice far larger than the widget: drawn sampled, one element per
 * pixel, and the pointer still finds the element under it. */
static void test_view_big_slice(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f;
  fixture_init(&f, 800, 600);
  ts_scope *scope = ts_scope_begin();
  ts_tensor *t = ts_reshape(ts_range(TS_F32, 0, 1500 * 2000, 1), TS_SHAPE(1500, 2000));
  ts_tensor_view_set_tensor(f.view, t, "big slice");
  ts_scope_end(scope);
  g_assert_true(ts_tensor_view_get_busy(f.view)); /* the heat map does not wait for statistics */
  _ts_tensor_view_show_page(f.view, "heat-map");
  TsTensorHeatMap *map = _ts_tensor_view_get_heat_map(f.view);
  wait_shown(GTK_WIDGET(map), 200);
  g_assert_cmpint(gtk_widget_get_width(GTK_WIDGET(map)), <, 2000);
  double x0, y0, x1, y1;
  g_assert_true(ts_tensor_heat_map_cell_centre(map, 0, 0, &x0, &y0));
  g_assert_true(ts_tensor_heat_map_cell_centre(map, 1499, 1999, &x1, &y1));
  for (double fx = 0.1; fx < 1; fx += 0.2) {
    double x = x0 + (x1 - x0) * fx, y = y0 + (y1 - y0) * (1 - fx);
    int64_t row, col;
    g_assert_true(ts_tensor_heat_map_cell_at(map, x, y, &row, &col));
    g_autofree char *tip = ts_tensor_heat_map_dup_tooltip_at(map, x, y);
    char value[32];
    ts_format_value((double)(float)(row * 2000 + col), value, sizeof value);
    g_autofree char *want = g_strdup_printf("[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "] = %s", row, col, value);
    g_assert_cmpstr(tip, ==, want);
  }
  /* the first pixel is the smallest value; the last samples an element
   * within a pixel of the largest, at the scale's far end */
  g_assert_cmphex(pixel_at(GTK_WIDGET(map), x0, y0), ==, 0x440154);
  guint32 last = pixel_at(GTK_WIDGET(map), x1, y1);
  for (int shift = 0; shift <= 16; shift += 8)
    g_assert_cmpint(ABS((int)((last >> shift) & 0xff) - (int)((0xfde725u >> shift) & 0xff)), <=, 2);
  test_wait_for(not_busy, f.view, "the statistics");
  fixture_clear(&f);
}

static void test_view_histogram(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f;
  fixture_init(&f, 700, 500);
  const int32_t v[] = { 0, 1, 1, 2, 2, 2 };
  ts_tensor_view_set_tensor(f.view, ts_constant(TS_I32, TS_SHAPE(2, 3), v), "counts");
  const ts_tensor_histogram *h = _ts_tensor_view_get_histogram(f.view);
  g_assert_cmpint(h->n_bins, ==, 3);
  g_assert_cmpint(h->counts[2], ==, 3);
  _ts_tensor_view_show_page(f.view, "histogram");
  TsTensorHistogramChart *chart = _ts_tensor_view_get_histogram_chart(f.view);
  wait_shown(GTK_WIDGET(chart), 300);
  /* the right-most bar: [1.5, 2.5] holds the three 2s */
  int w = gtk_widget_get_width(GTK_WIDGET(chart)), ht = gtk_widget_get_height(GTK_WIDGET(chart));
  g_autofree char *tip = ts_tensor_histogram_chart_dup_tooltip_at(chart, w - 20, ht / 2);
  g_assert_cmpstr(tip, ==, "[1.5, 2.5] · 3 values");
  fixture_clear(&f);
}

/* Inspected, the pages are a drop-down that follows the page shown and
 * shows the page chosen; it keeps the view narrow (the debugger's
 * inspector shares its row with the source): the view, its controls
 * shown, needs no more than 220 px. */
static void test_view_page_choice(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f;
  fixture_init(&f, 700, 500);
  const float v[] = { 1, 2, 3, 4, 5, 6 };
  ts_tensor_view_set_tensor(f.view, f32_tensor(TS_SHAPE(2, 3), v), "in 0: f32[2,3]");
  ts_tensor_view_set_compact(f.view, TRUE);
  GtkDropDown *choice = GTK_DROP_DOWN(f.view->page_choice);
  g_assert_false(gtk_widget_get_visible(GTK_WIDGET(choice)));
  gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(f.view->expand_button), TRUE);
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(choice)));
  g_assert_cmpuint(gtk_drop_down_get_selected(choice), ==, 0);
  _ts_tensor_view_show_page(f.view, "histogram");
  g_assert_cmpuint(gtk_drop_down_get_selected(choice), ==, 2);
  GtkStackPage *page = gtk_drop_down_get_selected_item(choice);
  g_assert_cmpstr(gtk_stack_page_get_title(page), ==, "Histogram");
  gtk_drop_down_set_selected(choice, 1);
  g_assert_cmpstr(gtk_stack_get_visible_child_name(f.view->stack), ==, "heat-map");
  g_assert_true(gtk_widget_get_visible(f.view->slice_box)); /* a matrix's axes, on the heat map */
  int min = 0;
  gtk_widget_measure(GTK_WIDGET(f.view), GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
  g_assert_cmpint(min, <=, 220 + 24); /* and its margins */
  fixture_clear(&f);
}

static void test_view_diff(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f;
  fixture_init(&f, 700, 500);
  const float a[] = { 1, 2, 3, 4, 5, 6 };
  const float b[] = { 1, 2, 3.5f, 4, 5, 3 };
  ts_tensor *ta = f32_tensor(TS_SHAPE(2, 3), a);
  GError *error = NULL;
  g_assert_true(ts_tensor_view_set_diff(f.view, ta, f32_tensor(TS_SHAPE(2, 3), b), &error));
  g_assert_no_error(error);
  g_assert_true(ts_tensor_view_get_tensor(f.view) == ta);
  g_assert_nonnull(strstr(_ts_tensor_view_get_stats_text(f.view), "max\u00a0|a−b|\u00a03 · max\u00a0rel\u00a01\n"));
  g_assert_nonnull(strstr(_ts_tensor_view_get_summary(f.view), "a − b"));
  g_autofree char *cell = _ts_tensor_table_dup_cell_text(_ts_tensor_view_get_table(f.view), 0, 2);
  g_assert_cmpstr(cell, ==, "-0.5");
  /* shown as a heat map, diverging about 0: 0 is the scale's middle */
  TsTensorHeatMap *map = _ts_tensor_view_get_heat_map(f.view);
  wait_shown(GTK_WIDGET(map), 200);
  double x, y;
  g_assert_true(ts_tensor_heat_map_cell_centre(map, 0, 0, &x, &y));
  g_assert_cmphex(pixel_at(GTK_WIDGET(map), x, y), ==, 0xf7f7f7);

  /* different shapes: FALSE, a message naming both, in the view too */
  g_assert_false(ts_tensor_view_set_diff(f.view, ta, ts_tensor_new(TS_F32, TS_SHAPE(3, 2)), &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(error->message, "f32[2,3] and f32[3,2]"));
  g_assert_cmpstr(_ts_tensor_view_get_message(f.view), ==, error->message);
  g_clear_error(&error);
  g_autofree char *path = temp_path("nothing.npy");
  g_assert_false(ts_tensor_view_export_npy(f.view, path, &error));
  g_assert_nonnull(strstr(error->message, "cannot export"));
  g_clear_error(&error);
  fixture_clear(&f);
}

static ts_tensor *captured;

/* Keeps its argument: traced, a symbolic tensor with no values. */
static ts_tensor *capture(ts_call *c)
{
  captured = ts_tensor_ref(ts_arg(c, 0));
  return ts_arg(c, 0);
}

/* Bad input says what is wrong: no values, nothing to export, no difference. */
static void test_view_symbolic(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f;
  fixture_init(&f, 700, 500);
  ts_function *fn = ts_function_new("capture", capture, "x");
  ts_value args[1] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(2, 2)) };
  g_assert_nonnull(ts_function_get_concrete(fn, args, 1));
  g_assert_nonnull(captured);
  g_assert_null(ts_tensor_data(captured));
  ts_tensor_view_set_tensor(f.view, captured, "traced x");
  g_assert_nonnull(strstr(_ts_tensor_view_get_message(f.view), "symbolic"));
  g_assert_nonnull(strstr(_ts_tensor_view_get_summary(f.view), "f32[2,2]"));
  GError *error = NULL;
  g_autofree char *path = temp_path("symbolic.npy");
  g_assert_false(ts_tensor_view_export_npy(f.view, path, &error));
  g_assert_nonnull(strstr(error->message, "no tensor with values"));
  g_clear_error(&error);
  g_assert_false(ts_tensor_view_set_diff(f.view, captured, ts_tensor_new(TS_F32, TS_SHAPE(2, 2)), &error));
  g_assert_nonnull(strstr(error->message, "symbolic"));
  g_clear_error(&error);
  g_assert_null(ts_error_peek()); /* nothing left pending on the engine's side */
  ts_tensor_unref(captured);
  fixture_clear(&f);
  ts_function_free(fn);
}

static void test_view_export(void)
{
  if (!have_display) {
    g_test_skip("no display");
    return;
  }
  fixture f;
  fixture_init(&f, 700, 500);
  const int64_t v[] = { -3, 0, INT64_C(1) << 50, 7 };
  ts_tensor *t = ts_constant(TS_I64, TS_SHAPE(2, 2), v);
  ts_tensor_view_set_tensor(f.view, t, "ints");
  g_autofree char *path = temp_path("ints.npy");
  GError *error = NULL;
  g_assert_true(ts_tensor_view_export_npy(f.view, path, &error));
  g_assert_no_error(error);
  ts_tensor *back = ts_npy_load(path);
  g_assert_nonnull(back);
  g_assert_cmpint(ts_tensor_dtype(back), ==, TS_I64);
  g_assert_true(ts_shape_equal(ts_tensor_shape(back), TS_SHAPE(2, 2)));
  g_assert_cmpmem(ts_tensor_data(back), sizeof v, v, sizeof v);
  g_unlink(path);

  /* a difference exports the difference */
  const float a[] = { 1, 2 }, b[] = { 0.5f, 4 };
  g_assert_true(ts_tensor_view_set_diff(f.view, f32_tensor(TS_SHAPE(2), a), f32_tensor(TS_SHAPE(2), b), NULL));
  g_assert_true(ts_tensor_view_export_npy(f.view, path, &error));
  back = ts_npy_load(path);
  g_assert_cmpint(ts_tensor_dtype(back), ==, TS_F64);
  g_assert_cmpfloat(ts_tensor_get_f64(back, 0), ==, 0.5);
  g_assert_cmpfloat(ts_tensor_get_f64(back, 1), ==, -2);
  g_unlink(path);

  /* a directory that is not there: the writer's message */
  g_assert_false(ts_tensor_view_export_npy(f.view, "/nonexistent-dir/x.npy", &error));
  g_assert_nonnull(strstr(error->message, "/nonexistent-dir/x.npy"));
  g_clear_error(&error);
  fixture_clear(&f);
}

/* An image-like batch through a real conv2d: [1, 32, 32, 3] → [1, 30, 30, 8]. */
static ts_tensor *conv_output(void)
{
  float img[32 * 32 * 3];
  for (int y = 0; y < 32; y++)
    for (int x = 0; x < 32; x++)
      for (int c = 0; c < 3; c++)
        img[(y * 32 + x) * 3 + c] = sinf(x * 0.3f + c) * cosf(y * 0.2f) + (x == 16 && y == 16 ? 3.0f : 0.0f);
  ts_tensor *input = f32_tensor(TS_SHAPE(1, 32, 32, 3), img);
  ts_tensor *filter = ts_random_normal(TS_F32, TS_SHAPE(3, 3, 3, 8), 0, 0.5, 7);
  ts_tensor *out = ts_conv2d(input, filter, 1, 1, TS_PADDING_VALID);
  g_assert_nonnull(out);
  return out;
}

static void screenshot(gboolean dark, const char *dir)
{
  g_object_set(gtk_settings_get_default(), "gtk-application-prefer-dark-theme", dark, NULL);
  fixture f;
  fixture_init(&f, 900, 640);
  ts_tensor_view_set_tensor(f.view, conv_output(), "conv2d output · [1, 30, 30, 8]");
  _ts_tensor_view_select_index(f.view, 0, 0);
  _ts_tensor_view_select_axes(f.view, 1, 2);
  _ts_tensor_view_select_index(f.view, 3, 5);
  _ts_tensor_view_show_page(f.view, "heat-map");
  wait_shown(GTK_WIDGET(_ts_tensor_view_get_heat_map(f.view)), 300);
  GdkTexture *texture = render_widget(GTK_WIDGET(f.window));
  g_autofree char *path = g_build_filename(dir, dark ? "inspector-dark.png" : "inspector-light.png", NULL);
  g_assert_true(gdk_texture_save_to_png(texture, path));
  g_object_unref(texture);
  fixture_clear(&f);
  g_object_set(gtk_settings_get_default(), "gtk-application-prefer-dark-theme", FALSE, NULL);
}

static void test_view_screenshots(void)
{
  const char *dir = g_getenv("TS_INSPECTOR_SCREENSHOTS");
  if (!have_display || !dir) {
    g_test_skip(have_display ? "TS_INSPECTOR_SCREENSHOTS not set" : "no display");
    return;
  }
  screenshot(FALSE, dir);
  screenshot(TRUE, dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  have_display = gtk_init_check();
  if (have_display)
    g_object_set(gtk_settings_get_default(), "gtk-enable-animations", FALSE, NULL);
  g_test_add_func("/tensor-stats/float", test_stats_float);
  g_test_add_func("/tensor-stats/dtypes", test_stats_dtypes);
  g_test_add_func("/tensor-stats/element-text", test_element_text);
  g_test_add_func("/tensor-stats/histogram", test_histogram);
  g_test_add_func("/tensor-stats/slice", test_slice);
  g_test_add_func("/tensor-stats/diff", test_diff);
  g_test_add_func("/tensor-stats/colour-scale", test_colour_scale);
  g_test_add_func("/tensor-view/summary", test_view_summary);
  g_test_add_func("/tensor-view/big-async", test_view_big_async);
  g_test_add_func("/tensor-view/rank4-slice", test_view_rank4_slice);
  g_test_add_func("/tensor-view/big-slice", test_view_big_slice);
  g_test_add_func("/tensor-view/histogram", test_view_histogram);
  g_test_add_func("/tensor-view/page-choice", test_view_page_choice);
  g_test_add_func("/tensor-view/diff", test_view_diff);
  g_test_add_func("/tensor-view/export", test_view_export);
  g_test_add_func("/tensor-view/symbolic", test_view_symbolic);
  g_test_add_func("/tensor-view/screenshots", test_view_screenshots);
  int ret = g_test_run();
  ts_release_all();
  return ret;
}
