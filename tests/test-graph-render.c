/* test-graph-render.c — the viewer's renderer with no display: traced
 * graphs drawn to PNG, SVG and PDF and read back (sizes, pixels of shapes
 * and colours, every label in the SVG), no two drawn shapes overlapping,
 * culling and level of detail, colour modes, errors; edges and their
 * labels clear of nodes and title bars in every seed fully expanded; the
 * legend; and `tracescope-cli render`, which draws with the same code. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <tracescope.h>
#include <unistd.h>

#include "test-quiet.h"
#include "ts-graph-render-private.h"

/* Edges through nodes or title bars in the seeds fully expanded. */
#define EDGE_CROSSINGS_MAX 0

/* ---- the programs ------------------------------------------------------------------ */

static ts_tensor *nested_if(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  TS_NAME_SCOPE("encoder")
  {
    TS_NAME_SCOPE("layer_a") { x = ts_relu(ts_add(x, x)); }
    TS_NAME_SCOPE("layer_b") { x = ts_tanh(ts_mul(x, ts_sigmoid(x))); }
  }
  TS_NAME_SCOPE("gate")
  {
    TS_IF (ts_greater(ts_reduce_sum(x, TS_ALL_AXES, false), ts_scalar_f32(0)), &x) {
      x = ts_mul(x, x);
    } TS_ELSE {
      x = ts_neg(x);
    } TS_END_IF;
  }
  return ts_exp(x);
}

/* Twenty-six op types in one scope: a long legend. */
static ts_tensor *many_ops(ts_call *c)
{
  ts_tensor *x = ts_arg(c, 0);
  ts_tensor *a = ts_relu(ts_matmul(x, ts_transpose(x, TS_ALL_AXES)));
  ts_tensor *b = ts_tanh(ts_sub(a, ts_sigmoid(a)));
  ts_tensor *d = ts_exp(ts_neg(ts_abs(ts_mul(b, b))));
  ts_tensor *e = ts_sqrt(ts_add(d, ts_reduce_sum(d, TS_ALL_AXES, true)));
  ts_tensor *f = ts_maximum(ts_minimum(e, ts_reduce_max(e, TS_ALL_AXES, true)), ts_reduce_mean(e, TS_ALL_AXES, true));
  ts_tensor *g = ts_where(ts_greater(f, e), ts_softmax(f), ts_log(f));
  ts_tensor *h = ts_pow(g, ts_reduce_min(g, TS_ALL_AXES, true));
  return ts_div(h, ts_reduce_prod(h, TS_ALL_AXES, true));
}

/* Op types inside a scope that none outside it has. */
static ts_tensor *scoped_ops(ts_call *c)
{
  ts_tensor *x = ts_exp(ts_arg(c, 0));
  TS_NAME_SCOPE("block") { x = ts_tanh(ts_mul(x, ts_sigmoid(x))); }
  return ts_relu(x);
}

/* ---- fixtures ------------------------------------------------------------------------- */

typedef struct drawn {
  ts_function *fn;
  ts_module *module;
  ts_view_model *model;
  ts_view_layouter *layouter;
  ts_view_layout *layout;
  ts_render *render;
} drawn;

static void lay_out(drawn *d)
{
  GError *error = NULL;
  ts_view_layout_free(d->layout);
  ts_render_set_layout(d->render, NULL, NULL);
  d->layout = ts_view_layouter_run(d->layouter, NULL, &error);
  g_assert_no_error(error);
  ts_render_set_layout(d->render, d->model, d->layout);
}

static void drawn_init(drawn *d, const ts_graph *g)
{
  d->model = ts_view_model_new(g, NULL);
  ts_view_layout_options options = ts_render_layout_options();
  d->layouter = ts_view_layouter_new(d->model, &options);
  d->render = ts_render_new();
  lay_out(d);
}

static drawn draw_nested(void)
{
  drawn d = { .fn = ts_function_new("nested_if", nested_if, "x") };
  ts_value args[1] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(4, 8)) };
  ts_concrete *cf = ts_function_get_concrete(d.fn, args, 1);
  g_assert_nonnull(cf);
  drawn_init(&d, ts_concrete_graph(cf));
  return d;
}

/* The seeds' sequential_model: flatten, dense_1 ... dense_100, dense_101. */
static drawn draw_sequential(void)
{
  drawn d = { .module = ts_module_open("seeds") };
  g_assert_nonnull(d.module);
  ts_function *fn = ts_module_lookup(d.module, "sequential_model");
  g_assert_nonnull(fn);
  ts_value args[1] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(20, 28, 28)) };
  ts_concrete *cf = ts_function_get_concrete(fn, args, 1);
  g_assert_nonnull(cf);
  drawn_init(&d, ts_concrete_graph(cf));
  return d;
}

static drawn draw_many_ops(void)
{
  drawn d = { .fn = ts_function_new("many_ops", many_ops, "x") };
  ts_value args[1] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(4, 4)) };
  ts_concrete *cf = ts_function_get_concrete(d.fn, args, 1);
  g_assert_nonnull(cf);
  drawn_init(&d, ts_concrete_graph(cf));
  return d;
}

static drawn draw_scoped_ops(void)
{
  drawn d = { .fn = ts_function_new("scoped_ops", scoped_ops, "x") };
  ts_value args[1] = { TS_SPEC_VALUE(TS_F32, TS_SHAPE(4, 4)) };
  ts_concrete *cf = ts_function_get_concrete(d.fn, args, 1);
  g_assert_nonnull(cf);
  drawn_init(&d, ts_concrete_graph(cf));
  return d;
}

static void drawn_clear(drawn *d)
{
  ts_render_free(d->render);
  ts_view_layout_free(d->layout);
  ts_view_layouter_free(d->layouter);
  ts_view_model_unref(d->model);
  ts_function_free(d->fn);
  ts_module_free(d->module);
}

static int item_named(const ts_view_model *m, const char *name)
{
  for (int i = 0; i < ts_view_model_n_items(m); i++)
    if (strcmp(ts_view_item_name(m, i), name) == 0)
      return i;
  g_error("no item named '%s'", name);
}

static const ts_view_box *box_named(const drawn *d, const char *name)
{
  int b = ts_view_layout_box_for_item(d->layout, item_named(d->model, name));
  g_assert_cmpint(b, >=, 0);
  return ts_view_layout_box(d->layout, b);
}

static char *temp_path(const char *name)
{
  static int serial;
  return g_strdup_printf("%s/ts-render-%d-%d-%s", g_get_tmp_dir(), (int)getpid(), serial++, name);
}

/* ---- reading images back ------------------------------------------------------------------- */

typedef struct image {
  cairo_surface_t *surface;
  int width, height;
} image;

static image load_png(const char *path)
{
  image im = { .surface = cairo_image_surface_create_from_png(path) };
  g_assert_cmpint(cairo_surface_status(im.surface), ==, CAIRO_STATUS_SUCCESS);
  im.width = cairo_image_surface_get_width(im.surface);
  im.height = cairo_image_surface_get_height(im.surface);
  return im;
}

/* The pixel's colour as 0xRRGGBB (the images are opaque). */
static guint32 pixel(const image *im, double x, double y)
{
  int ix = (int)x, iy = (int)y;
  g_assert_true(ix >= 0 && iy >= 0 && ix < im->width && iy < im->height);
  cairo_surface_flush(im->surface);
  const guint8 *row = cairo_image_surface_get_data(im->surface) + iy * cairo_image_surface_get_stride(im->surface);
  return ((const guint32 *)row)[ix] & 0xffffff;
}

static void assert_colour_near(guint32 got, guint32 want, int tolerance)
{
  for (int shift = 0; shift < 24; shift += 8) {
    int a = (int)(got >> shift & 0xff), b = (int)(want >> shift & 0xff);
    if (abs(a - b) > tolerance)
      g_error("colour %06x is not near %06x", got, want);
  }
}

/* Where canvas point (x, y) lands in a whole-area export at scale 1 of an
 * area starting at (ax, ay). */
static double page(double canvas, double area_origin)
{
  return canvas - area_origin + TS_RENDER_EXPORT_MARGIN;
}

/* A point inside a shape's fill, clear of its outline and its text. */
static void fill_point(const ts_view_box *b, double *x, double *y)
{
  *x = b->x + MAX(0.07 * b->width, 4);
  *y = b->y + b->height / 2;
}

/* Exports d's whole layout area (0, 0, width, height) as a PNG. */
static image export_area_png(const drawn *d)
{
  g_autofree char *path = temp_path("area.png");
  ts_render_rect area = { 0, 0, ts_view_layout_width(d->layout), ts_view_layout_height(d->layout) };
  GError *error = NULL;
  g_assert_true(ts_render_export(d->render, path, &area, 1, &error));
  g_assert_no_error(error);
  image im = load_png(path);
  g_unlink(path);
  return im;
}

/* ---- SVG text -------------------------------------------------------------------------------- */

typedef struct svg_scan {
  bool in_text;
  GString *text;
  GHashTable *texts; /* every <text> content */
  double width;      /* of the root <svg>, in pt */
  int depth;
} svg_scan;

static void svg_start(GMarkupParseContext *ctx, const char *element, const char **names, const char **values,
                      gpointer data, GError **error)
{
  svg_scan *s = data;
  if (s->depth++ == 0) {
    g_assert_cmpstr(element, ==, "svg");
    for (int i = 0; names[i]; i++)
      if (strcmp(names[i], "width") == 0)
        s->width = g_ascii_strtod(values[i], NULL);
  }
  if (strcmp(element, "text") == 0) {
    s->in_text = true;
    g_string_truncate(s->text, 0);
  }
}

static void svg_end(GMarkupParseContext *ctx, const char *element, gpointer data, GError **error)
{
  svg_scan *s = data;
  s->depth--;
  if (strcmp(element, "text") == 0) {
    s->in_text = false;
    g_hash_table_add(s->texts, g_strdup(s->text->str));
  }
}

static void svg_text(GMarkupParseContext *ctx, const char *text, gsize len, gpointer data, GError **error)
{
  svg_scan *s = data;
  if (s->in_text)
    g_string_append_len(s->text, text, (gssize)len);
}

/* Parses the file as XML (it must be valid) and gathers its <text>. */
static svg_scan scan_svg(const char *path)
{
  g_autofree char *contents = NULL;
  gsize len;
  g_assert_true(g_file_get_contents(path, &contents, &len, NULL));
  svg_scan s = { .text = g_string_new(NULL), .texts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL) };
  static const GMarkupParser parser = { svg_start, svg_end, svg_text, NULL, NULL };
  GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, &s, NULL);
  GError *error = NULL;
  g_assert_true(g_markup_parse_context_parse(ctx, contents, (gssize)len, &error));
  g_assert_true(g_markup_parse_context_end_parse(ctx, &error));
  g_assert_no_error(error);
  g_markup_parse_context_free(ctx);
  g_assert_cmpint(s.depth, ==, 0);
  return s;
}

static void svg_scan_clear(svg_scan *s)
{
  g_string_free(s->text, TRUE);
  g_hash_table_destroy(s->texts);
}

static void assert_has_text(const svg_scan *s, const char *text)
{
  if (text && !g_hash_table_contains(s->texts, text))
    g_error("the SVG has no text '%s'", text);
}

/* Every label a visible item or edge shows is in the SVG as text. */
static void check_svg_labels(const drawn *d, const char *path)
{
  svg_scan s = scan_svg(path);
  g_assert_cmpfloat(s.width, >=, ts_view_layout_width(d->layout));
  int n_labels = 0;
  for (int i = 0; i < ts_view_layout_n_boxes(d->layout); i++) {
    const ts_view_box *b = ts_view_layout_box(d->layout, i);
    if (b->shape == TS_VIEW_SHAPE_DOT)
      continue;
    assert_has_text(&s, b->line1);
    assert_has_text(&s, b->line2);
    n_labels++;
  }
  int n_edge_labels = 0;
  for (int p = 0; p < ts_view_layout_n_paths(d->layout); p++)
    if (ts_render_path_label_shown(d->render, p)) {
      assert_has_text(&s, ts_view_layout_path(d->layout, p)->label);
      n_edge_labels++;
    }
  g_assert_cmpint(n_labels, >, 0);
  g_assert_cmpint(n_edge_labels, >, 0);
  svg_scan_clear(&s);
}

/* ---- tests ------------------------------------------------------------------------------------- */

static void test_png(void)
{
  drawn d = draw_nested();
  ts_view_model_expand_all(d.model);
  lay_out(&d);
  double legend_w, legend_h;
  ts_render_legend_size(d.render, TS_RENDER_EXPORT_LEGEND_HEIGHT, false, &legend_w, &legend_h);
  g_assert_cmpfloat(legend_w, >, 50);

  g_autofree char *path = temp_path("graph.png");
  GError *error = NULL;
  g_assert_true(ts_render_export(d.render, path, NULL, 1, &error));
  g_assert_no_error(error);
  image im = load_png(path);
  double w = ts_view_layout_width(d.layout), h = ts_view_layout_height(d.layout);
  g_assert_cmpint(im.width, >=, (int)(w + legend_w + 2 * TS_RENDER_EXPORT_MARGIN));
  g_assert_cmpint(im.width, <=, (int)(w + legend_w + 3 * TS_RENDER_EXPORT_MARGIN + 120)); /* edge labels */
  g_assert_cmpint(im.height, >=, (int)(MAX(h, legend_h) + 2 * TS_RENDER_EXPORT_MARGIN));
  assert_colour_near(pixel(&im, 1, 1), 0xffffff, 0);
  cairo_surface_destroy(im.surface);

  /* twice the scale, twice the pixels */
  g_assert_true(ts_render_export(d.render, path, NULL, 2, &error));
  image big = load_png(path);
  g_assert_cmpint(abs(big.width - 2 * im.width), <=, 2);
  g_assert_cmpint(abs(big.height - 2 * im.height), <=, 2);
  cairo_surface_destroy(big.surface);
  g_unlink(path);

  /* the shapes are where the layout put them, filled */
  image area = export_area_png(&d);
  const char *ops[] = { "encoder/layer_a/Relu", "encoder/layer_b/Tanh", "Exp" };
  for (size_t i = 0; i < G_N_ELEMENTS(ops); i++) {
    double x, y;
    fill_point(box_named(&d, ops[i]), &x, &y);
    guint32 c = pixel(&area, page(x, 0), page(y, 0));
    g_assert_cmphex(c, !=, 0xffffff);
  }
  cairo_surface_destroy(area.surface);
  drawn_clear(&d);
}

static void test_svg_labels(void)
{
  drawn d = draw_nested();
  g_autofree char *path = temp_path("graph.svg");
  GError *error = NULL;
  /* collapsed, then all open */
  for (int round = 0; round < 2; round++) {
    g_assert_true(ts_render_export(d.render, path, NULL, 1, &error));
    g_assert_no_error(error);
    check_svg_labels(&d, path);
    ts_view_model_expand_all(d.model);
    lay_out(&d);
  }
  svg_scan s = scan_svg(path);
  assert_has_text(&s, "Tanh");
  assert_has_text(&s, "then");
  assert_has_text(&s, "else");
  assert_has_text(&s, "Op type"); /* the legend */
  svg_scan_clear(&s);
  g_unlink(path);

  drawn seq = draw_sequential();
  g_assert_true(ts_render_export(seq.render, path, NULL, 1, &error));
  check_svg_labels(&seq, path);
  s = scan_svg(path);
  assert_has_text(&s, "dense_[1-100]");
  assert_has_text(&s, "f32[20,784]");
  svg_scan_clear(&s);
  g_unlink(path);
  drawn_clear(&seq);
  drawn_clear(&d);
}

static void test_pdf(void)
{
  drawn d = draw_sequential();
  g_autofree char *path = temp_path("graph.pdf");
  GError *error = NULL;
  g_assert_true(ts_render_export(d.render, path, NULL, 1, &error));
  g_assert_no_error(error);
  g_autofree char *contents = NULL;
  gsize len;
  g_assert_true(g_file_get_contents(path, &contents, &len, NULL));
  g_assert_cmpuint(len, >, 1000);
  g_assert_true(g_str_has_prefix(contents, "%PDF-1."));
  g_assert_nonnull(g_strstr_len(contents + len - 32, 32, "%%EOF"));
  g_unlink(path);
  drawn_clear(&d);
}

static bool overlap(const ts_view_box *a, const ts_view_box *b)
{
  const double eps = 1e-6;
  return a->x + eps < b->x + b->width && b->x + eps < a->x + a->width && a->y + eps < b->y + b->height &&
         b->y + eps < a->y + a->height;
}

static bool inside(const ts_view_box *in, const ts_view_box *out)
{
  const double eps = 1e-6;
  return in->x >= out->x - eps && in->y >= out->y - eps && in->x + in->width <= out->x + out->width + eps &&
         in->y + in->height <= out->y + out->height + eps;
}

static double text_width(const char *text)
{
  double w = 0, h = 0;
  if (text)
    ts_render_measure(text, &w, &h, NULL);
  return w;
}

/* Drawn shapes never overlap (containers hold theirs whole) and every
 * label fits its shape. */
static void check_no_overlap(const drawn *d)
{
  int n = ts_view_layout_n_boxes(d->layout);
  for (int i = 0; i < n; i++) {
    const ts_view_box *a = ts_view_layout_box(d->layout, i);
    double text = a->shape == TS_VIEW_SHAPE_CONTAINER ? text_width(a->line1) + text_width(a->line2)
                                                      : MAX(text_width(a->line1), text_width(a->line2));
    if (a->shape != TS_VIEW_SHAPE_DOT)
      g_assert_cmpfloat(text, <=, a->width - 4);
    for (int j = i + 1; j < n; j++) {
      const ts_view_box *b = ts_view_layout_box(d->layout, j);
      bool nested = (a->shape == TS_VIEW_SHAPE_CONTAINER && inside(b, a)) ||
                    (b->shape == TS_VIEW_SHAPE_CONTAINER && inside(a, b));
      if (!nested && overlap(a, b))
        g_error("'%s' (%.1f,%.1f %.1fx%.1f) overlaps '%s' (%.1f,%.1f %.1fx%.1f)",
                ts_view_item_name(d->model, a->item), a->x, a->y, a->width, a->height,
                ts_view_item_name(d->model, b->item), b->x, b->y, b->width, b->height);
    }
  }
}

static void test_no_overlap(void)
{
  drawn d = draw_nested();
  check_no_overlap(&d);
  ts_view_model_expand_all(d.model);
  lay_out(&d);
  check_no_overlap(&d);
  drawn_clear(&d);

  drawn seq = draw_sequential();
  check_no_overlap(&seq);
  ts_view_model_set_expanded(seq.model, item_named(seq.model, "dense_[1-100]"), true);
  ts_view_model_set_expanded(seq.model, item_named(seq.model, "dense_7"), true);
  lay_out(&seq);
  check_no_overlap(&seq);
  drawn_clear(&seq);
}

/* ---- edges around boxes ---------------------------------------------------------------------- */

static bool segment_hits_rect(ts_view_point a, ts_view_point b, double x0, double y0, double x1, double y1)
{
  /* Liang-Barsky: does the segment a-b enter the open rectangle? */
  double t0 = 0, t1 = 1, dx = b.x - a.x, dy = b.y - a.y;
  double p[4] = { -dx, dx, -dy, dy }, q[4] = { a.x - x0, x1 - a.x, a.y - y0, y1 - a.y };
  for (int i = 0; i < 4; i++) {
    if (fabs(p[i]) < 1e-12) {
      if (q[i] <= 0)
        return false;
      continue;
    }
    double t = q[i] / p[i];
    if (p[i] < 0)
      t0 = MAX(t0, t);
    else
      t1 = MIN(t1, t);
  }
  return t0 < t1;
}

static ts_view_point bezier_at(const ts_view_point *s, double t)
{
  double u = 1 - t, a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, e = t * t * t;
  return (ts_view_point){ a * s[0].x + b * s[1].x + c * s[2].x + e * s[3].x,
                          a * s[0].y + b * s[1].y + c * s[2].y + e * s[3].y };
}

/* Whether the drawn path (its Beziers sampled) enters the rectangle shrunk by 1 px. */
static bool path_hits_rect(const ts_view_path *p, double x, double y, double w, double h)
{
  if (w <= 2 || h <= 2)
    return false;
  for (int s = 0; s + 3 < p->n_points; s += 3) {
    ts_view_point prev = p->points[s];
    for (int k = 1; k <= 16; k++) {
      ts_view_point q = bezier_at(p->points + s, k / 16.0);
      if (segment_hits_rect(prev, q, x + 1, y + 1, x + w - 1, y + h - 1))
        return true;
      prev = q;
    }
  }
  return false;
}

/* (path, box) pairs where a path runs through a node's shape (not its own
 * ends) or through any expanded group's title bar (its own end's too: an
 * edge out of an open If box starts at its border, never inside). */
static int count_edge_crossings(const ts_view_model *model, const ts_view_layout *layout, double header_height)
{
  int crossings = 0;
  for (int i = 0; i < ts_view_layout_n_paths(layout); i++) {
    const ts_view_path *p = ts_view_layout_path(layout, i);
    for (int j = 0; j < ts_view_layout_n_boxes(layout); j++) {
      const ts_view_box *b = ts_view_layout_box(layout, j);
      bool end = j == p->src_box || j == p->dst_box;
      if ((end && b->shape != TS_VIEW_SHAPE_CONTAINER) || b->shape == TS_VIEW_SHAPE_DOT)
        continue;
      double h = b->shape == TS_VIEW_SHAPE_CONTAINER ? header_height : b->height;
      if (!path_hits_rect(p, b->x, b->y, b->width, h))
        continue;
      crossings++;
      if (g_test_verbose())
        g_printerr("  %s -> %s crosses %s\n", ts_view_item_name(model, p->edge.src),
                   ts_view_item_name(model, p->edge.dst), ts_view_item_name(model, b->item));
    }
  }
  return crossings;
}

/* Edges into the If box go on to its branches' inputs, and the edge out
 * of it starts at their outputs. */
static void test_if_edges_inside(void)
{
  drawn d = draw_nested();
  ts_view_model_expand_all(d.model);
  lay_out(&d);
  int op = item_named(d.model, "gate/If");
  const ts_view_box *box = ts_view_layout_box(d.layout, ts_view_layout_box_for_item(d.layout, op));
  int into = 0, out_of = 0;
  for (int i = 0; i < ts_view_layout_n_paths(d.layout); i++) {
    const ts_view_path *p = ts_view_layout_path(d.layout, i);
    const ts_view_box *src = ts_view_layout_box(d.layout, p->src_box);
    const ts_view_box *dst = ts_view_layout_box(d.layout, p->dst_box);
    if (p->edge.dst == op && !p->edge.control && dst != box) {
      g_assert_cmpstr(ts_view_item_op_name(d.model, dst->item), ==, "Placeholder");
      g_assert_true(inside(dst, box));
      into++;
    }
    if (p->edge.src == op && src != box) {
      g_assert_true(inside(src, box));
      out_of++;
    }
  }
  g_assert_cmpint(into, ==, 2);   /* x into the then and the else branch */
  g_assert_cmpint(out_of, ==, 2); /* each branch's result into Exp */

  /* selecting the If box highlights its edges, inner ends and all */
  ts_render_set_selected(d.render, op);
  for (int i = 0; i < ts_view_layout_n_paths(d.layout); i++) {
    const ts_view_path *p = ts_view_layout_path(d.layout, i);
    if (p->edge.src == op || p->edge.dst == op)
      g_assert_cmpint(d.render->path_mark[i], ==, 1);
  }
  drawn_clear(&d);
}

/* Calls check on every seed export traced with its example arguments and
 * laid out fully expanded, with a renderer showing it. */
typedef void (*seed_check)(const char *name, const ts_view_model *model, const ts_view_layout *layout,
                           ts_render *render, void *data);

static void for_each_seed_expanded(seed_check check, void *data)
{
  ts_module *module = ts_module_open("seeds");
  g_assert_nonnull(module);
  ts_view_layout_options options = ts_render_layout_options();
  for (int f = 0; f < ts_module_n_functions(module); f++) {
    ts_function *fn = ts_module_function(module, f);
    const char *const *examples = ts_module_examples(module, f);
    if (!examples && ts_function_n_params(fn) > 0) {
      g_test_message("%s: no example arguments, not traced", ts_function_name(fn));
      continue;
    }
    ts_value args[8];
    int n = 0;
    for (; examples && examples[n]; n++) {
      g_assert_cmpint(n, <, 8);
      g_assert_true(ts_value_parse(examples[n], &args[n]));
    }
    int saved = test_quiet_begin(); /* the seeds print while tracing */
    ts_concrete *cf = ts_function_get_concrete(fn, args, n);
    test_quiet_end(saved);
    for (int i = 0; i < n; i++)
      ts_value_clear(&args[i]);
    g_assert_nonnull(cf);
    ts_view_model *model = ts_view_model_new(ts_concrete_graph(cf), NULL);
    ts_view_model_expand_all(model);
    ts_view_layouter *layouter = ts_view_layouter_new(model, &options);
    GError *error = NULL;
    ts_view_layout *layout = ts_view_layouter_run(layouter, NULL, &error);
    g_assert_no_error(error);
    ts_render *render = ts_render_new();
    ts_render_set_layout(render, model, layout);
    check(ts_function_name(fn), model, layout, render, data);
    ts_render_free(render);
    ts_view_layout_free(layout);
    ts_view_layouter_free(layouter);
    ts_view_model_unref(model);
  }
  ts_module_free(module);
}

static void count_seed_crossings(const char *name, const ts_view_model *model, const ts_view_layout *layout,
                                 ts_render *render, void *data)
{
  int c = count_edge_crossings(model, layout, ts_render_layout_options().header_height);
  g_test_message("edge crossings %s: %d", name, c);
  if (g_test_verbose())
    g_printerr("edge crossings %-24s %d\n", name, c);
  *(int *)data += c;
}

/* Every seed export with its example arguments, fully expanded: no edge
 * crosses a node or a title bar. */
static void test_edge_crossings(void)
{
  int total = 0;
  for_each_seed_expanded(count_seed_crossings, &total);
  g_test_message("edge crossings in all: %d", total);
  g_assert_cmpint(total, <=, EDGE_CROSSINGS_MAX);
}

/* ---- edge labels ------------------------------------------------------------------------------- */

typedef struct label_count {
  int labels, shown, clashes, on_edges;
} label_count;

static bool rects_overlap(const ts_render_rect *a, double x, double y, double w, double h)
{
  return a->x < x + w && x < a->x + a->width && a->y < y + h && y < a->y + a->height;
}

/* Shown edge labels that overlap a node (dots too) or a group's title bar. */
static void count_label_clashes(const char *name, const ts_view_model *model, const ts_view_layout *layout,
                                ts_render *render, void *data)
{
  label_count *count = data, here = { 0 };
  double header = ts_render_layout_options().header_height;
  for (int i = 0; i < ts_view_layout_n_paths(layout); i++) {
    const ts_view_path *p = ts_view_layout_path(layout, i);
    if (!p->label || !*p->label)
      continue;
    here.labels++;
    double x, y;
    const _ts_label *label = _ts_edge_label_at(render, i, &x, &y);
    g_assert_true((label != NULL) == ts_render_path_label_shown(render, i));
    if (!label)
      continue;
    here.shown++;
    ts_render_rect rc = { x - 2, y, label->width + 4, label->height };
    for (int k = 0; k < ts_view_layout_n_paths(layout); k++)
      if (path_hits_rect(ts_view_layout_path(layout, k), rc.x, rc.y, rc.width, rc.height)) {
        if (g_test_verbose())
          g_printerr("  %s: label '%s' of %s -> %s covers an edge\n", name, p->label,
                     ts_view_item_name(model, p->edge.src), ts_view_item_name(model, p->edge.dst));
        here.on_edges++;
        break;
      }
    for (int j = 0; j < ts_view_layout_n_boxes(layout); j++) {
      const ts_view_box *b = ts_view_layout_box(layout, j);
      double h = b->shape == TS_VIEW_SHAPE_CONTAINER ? header : b->height;
      if (!rects_overlap(&rc, b->x, b->y, b->width, h))
        continue;
      here.clashes++;
      if (g_test_verbose())
        g_printerr("  %s: label '%s' of %s -> %s covers %s (shape %d)\n", name, p->label, ts_view_item_name(model, p->edge.src),
                   ts_view_item_name(model, p->edge.dst), ts_view_item_name(model, b->item), b->shape);
    }
  }
  g_test_message("edge labels %s: %d of %d shown, %d on nodes or title bars, %d on an edge", name, here.shown,
                 here.labels, here.clashes, here.on_edges);
  count->labels += here.labels;
  count->shown += here.shown;
  count->clashes += here.clashes;
  count->on_edges += here.on_edges;
}

/* Every seed fully expanded: no edge label shown covers a node or a
 * group's title bar, and labels move along their path rather than hide
 * (548 of 554 show, 45 of them touching an edge; labels kept at the
 * middle showed 499, 108 of them on title bars). */
static void test_edge_labels_clear(void)
{
  label_count count = { 0 };
  for_each_seed_expanded(count_label_clashes, &count);
  g_test_message("edge labels in all: %d of %d shown, %d on nodes or title bars, %d on an edge", count.shown,
                 count.labels, count.clashes, count.on_edges);
  g_assert_cmpint(count.clashes, ==, 0);
  g_assert_cmpint(count.shown, >=, count.labels * 9 / 10);
}

static void test_culling_and_detail(void)
{
  drawn d = draw_sequential();
  ts_view_model_set_expanded(d.model, item_named(d.model, "dense_[1-100]"), true);
  lay_out(&d);
  int n_boxes = ts_view_layout_n_boxes(d.layout), n_paths = ts_view_layout_n_paths(d.layout);
  g_assert_cmpint(n_boxes, >, 100);
  double h = ts_view_layout_height(d.layout);

  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 400, 300);
  cairo_t *cr = cairo_create(surface);
  ts_render_stats all, part, far;
  ts_render_draw(d.render, cr, NULL, 1, &all);
  g_assert_cmpint(all.boxes, ==, n_boxes);
  g_assert_cmpint(all.paths, ==, n_paths);
  g_assert_true(all.detailed);

  /* a 400 x 300 window at the bottom: a few layers, with labels */
  cairo_save(cr);
  cairo_translate(cr, 0, -(h - 300));
  ts_render_draw(d.render, cr, &(ts_render_rect){ 0, h - 300, 400, 300 }, 1, &part);
  cairo_restore(cr);
  g_assert_cmpint(part.boxes, >, 2);
  g_assert_cmpint(part.boxes, <, n_boxes / 10);
  g_assert_cmpint(part.paths, <, n_paths / 10);
  g_assert_cmpint(part.labels, >, 0);

  /* zoomed out: shapes only */
  cairo_save(cr);
  cairo_scale(cr, 0.05, 0.05);
  ts_render_draw(d.render, cr, NULL, 0.05, &far);
  cairo_restore(cr);
  g_assert_false(far.detailed);
  g_assert_cmpint(far.labels, ==, 0);
  g_assert_cmpint(far.boxes, ==, n_boxes);
  cairo_destroy(cr);
  cairo_surface_destroy(surface);
  drawn_clear(&d);
}

/* The nodes of an op item's ts_node, for the values tables. */
static const ts_node *node_named(const drawn *d, const char *name)
{
  const ts_node *n = ts_view_item_node(d->model, item_named(d->model, name));
  g_assert_nonnull(n);
  return n;
}

static void test_colouring(void)
{
  drawn d = draw_nested();
  ts_view_model_expand_all(d.model);
  lay_out(&d);
  double x, y;

  /* compute time: a heat scale against the largest, grey without data */
  ts_render_values *times = ts_render_values_new("ms");
  ts_render_values_set(times, node_named(&d, "encoder/layer_b/Tanh"), 10);
  ts_render_values_set(times, node_named(&d, "encoder/layer_a/Relu"), 0);
  ts_render_set_colouring(d.render, TS_RENDER_COLOUR_COMPUTE_TIME, times);
  g_assert_cmpint(ts_render_get_colouring(d.render), ==, TS_RENDER_COLOUR_COMPUTE_TIME);
  image im = export_area_png(&d);
  fill_point(box_named(&d, "encoder/layer_b/Tanh"), &x, &y);
  assert_colour_near(pixel(&im, page(x, 0), page(y, 0)), 0xbd0026, 4); /* the hottest */
  fill_point(box_named(&d, "encoder/layer_a/Relu"), &x, &y);
  assert_colour_near(pixel(&im, page(x, 0), page(y, 0)), 0xffffb2, 4); /* the coolest */
  fill_point(box_named(&d, "Exp"), &x, &y);
  assert_colour_near(pixel(&im, page(x, 0), page(y, 0)), 0xe8e8e8, 4); /* no data */
  cairo_surface_destroy(im.surface);
  g_autofree char *svg = temp_path("time.svg");
  g_assert_true(ts_render_export(d.render, svg, NULL, 1, NULL));
  svg_scan s = scan_svg(svg);
  assert_has_text(&s, "Compute time");
  assert_has_text(&s, "10 ms");
  assert_has_text(&s, "no data");
  svg_scan_clear(&s);
  g_unlink(svg);

  /* collapsed, a group sums its ops: encoder (10) is the hottest */
  ts_view_model_collapse_all(d.model);
  lay_out(&d);
  im = export_area_png(&d);
  fill_point(box_named(&d, "encoder"), &x, &y);
  assert_colour_near(pixel(&im, page(x, 0), page(y, 0)), 0xbd0026, 4);
  cairo_surface_destroy(im.surface);
  /* what the tooltip shows: a node's note, a group's summed value */
  ts_render_values_set_note(times, node_named(&d, "encoder/layer_b/Tanh"), "3 runs · 10 ms total");
  g_assert_cmpstr(ts_render_values_note(times, node_named(&d, "encoder/layer_b/Tanh")), ==, "3 runs · 10 ms total");
  g_assert_null(ts_render_values_note(times, node_named(&d, "Exp")));
  g_assert_true(ts_render_get_values(d.render) == times);
  double sum;
  const char *unit;
  g_assert_true(ts_render_item_value(d.render, item_named(d.model, "encoder"), &sum, &unit));
  g_assert_cmpfloat(sum, ==, 10);
  g_assert_cmpstr(unit, ==, "ms");
  g_assert_false(ts_render_item_value(d.render, item_named(d.model, "Exp"), &sum, NULL));

  /* device without data (no profile: where ops ran is not known): no data */
  ts_render_set_colouring(d.render, TS_RENDER_COLOUR_DEVICE, NULL);
  g_assert_false(ts_render_item_value(d.render, item_named(d.model, "encoder"), &sum, NULL));
  im = export_area_png(&d);
  fill_point(box_named(&d, "Exp"), &x, &y);
  assert_colour_near(pixel(&im, page(x, 0), page(y, 0)), 0xe8e8e8, 4);
  cairo_surface_destroy(im.surface);

  /* functions compared: a group split between two shows both, in proportion */
  ts_render_values *functions = ts_render_values_new(NULL);
  ts_render_values_set_category(functions, node_named(&d, "encoder/layer_a/Add"), "f");
  ts_render_values_set_category(functions, node_named(&d, "encoder/layer_a/Relu"), "f");
  ts_render_values_set_category(functions, node_named(&d, "encoder/layer_b/Mul"), "g");
  ts_render_values_set_category(functions, node_named(&d, "encoder/layer_b/Sigmoid"), "g");
  ts_render_values_set_category(functions, node_named(&d, "encoder/layer_b/Tanh"), "g");
  g_assert_cmpstr(ts_render_values_category(functions, node_named(&d, "encoder/layer_b/Tanh")), ==, "g");
  g_assert_null(ts_render_values_category(functions, node_named(&d, "Exp")));
  ts_render_set_colouring(d.render, TS_RENDER_COLOUR_FUNCTION, functions);
  im = export_area_png(&d);
  const ts_view_box *enc = box_named(&d, "encoder");
  assert_colour_near(pixel(&im, page(enc->x + 3, 0), page(enc->y + enc->height / 2, 0)), 0x4e79a7, 4);
  assert_colour_near(pixel(&im, page(enc->x + enc->width - 3, 0), page(enc->y + enc->height / 2, 0)), 0xf28e2b, 4);
  cairo_surface_destroy(im.surface);

  ts_render_values_unref(functions);
  ts_render_values_unref(times);
  drawn_clear(&d);
}

/* Edges tagged "copy to ..." in the device colouring: drawn at 1:1 over the
 * whole layout, the stats' count. */
static int count_copies(drawn *d)
{
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 64, 64);
  cairo_t *cr = cairo_create(surface);
  ts_render_stats stats;
  ts_render_draw(d->render, cr, NULL, 1, &stats);
  cairo_destroy(cr);
  cairo_surface_destroy(surface);
  return stats.copies;
}

/* The consumer of a value whose producer's name starts with `from` and
 * whose own name starts with `to`, and which input it is. */
static const ts_node *consumer_of(const ts_graph *g, const char *from, const char *to, int *input)
{
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (!g_str_has_prefix(ts_node_name(n), to))
      continue;
    for (int k = 0; k < ts_node_n_inputs(n); k++) {
      const ts_node *p = ts_graph_node(g, ts_node_input(n, k).node);
      if (g_str_has_prefix(ts_node_name(p), from)) {
        *input = k;
        return n;
      }
    }
  }
  g_assert_not_reached();
}

/* The device colouring tags an edge with the copy a run recorded of an
 * input it carries ("copy to SIM:0"), not from where its ends ran: the
 * call's argument copied into flatten is the one tag while every op ran on
 * SIM:0; with flatten on the CPU its output copied into dense_1 is, even
 * where the ends' groups ran on both devices; nothing is tagged without a
 * recorded copy, or in the other colourings. */
static void test_device_copies(void)
{
  drawn d = draw_sequential();
  const ts_graph *g = ts_view_model_graph(d.model);
  ts_render_values *devices = ts_render_values_new(NULL);
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (!(ts_op_traits(ts_node_op(n)) & TS_OP_TRAIT_INPUT))
      ts_render_values_set_category(devices, n, "SIM:0");
  }
  /* where ops ran alone tags nothing */
  ts_render_set_colouring(d.render, TS_RENDER_COLOUR_DEVICE, devices);
  g_assert_cmpint(count_copies(&d), ==, 0);
  int input;
  const ts_node *flatten = consumer_of(g, "x", "flatten/", &input);
  ts_render_values_add_copy(devices, flatten, input, "SIM:0");
  g_assert_cmpint(ts_render_values_n_copies(devices), ==, 1);
  ts_render_set_colouring(d.render, TS_RENDER_COLOUR_DEVICE, devices);
  /* collapsed: x -> flatten carries it */
  g_assert_cmpint(count_copies(&d), ==, 1);
  g_autofree char *svg = temp_path("copies.svg");
  g_assert_true(ts_render_export(d.render, svg, NULL, 1, NULL));
  svg_scan s = scan_svg(svg);
  assert_has_text(&s, "copy to SIM:0");
  svg_scan_clear(&s);
  g_unlink(svg);
  /* expanded, the edge into the op itself */
  ts_view_model_expand_all(d.model);
  lay_out(&d);
  g_assert_cmpint(count_copies(&d), ==, 1);
  ts_view_model_collapse_all(d.model);
  lay_out(&d);

  /* flatten on the CPU, its output copied into dense_1 (and the argument
   * copied nowhere): one tag, on flatten -> dense_1 */
  ts_render_values_unref(devices);
  devices = ts_render_values_new(NULL);
  for (int i = 0; i < ts_graph_n_nodes(g); i++) {
    const ts_node *n = ts_graph_node(g, i);
    if (!(ts_op_traits(ts_node_op(n)) & TS_OP_TRAIT_INPUT))
      ts_render_values_set_category(devices, n, g_str_has_prefix(ts_node_name(n), "flatten/") ||
                                                        ts_node_op(n) == TS_OP_READ_VARIABLE
                                                      ? "CPU" : "SIM:0");
  }
  const ts_node *dense = consumer_of(g, "flatten/", "dense_1/", &input);
  ts_render_values_add_copy(devices, dense, input, "SIM:0");
  ts_render_set_colouring(d.render, TS_RENDER_COLOUR_DEVICE, devices);
  g_assert_cmpint(count_copies(&d), ==, 1);

  ts_render_set_colouring(d.render, TS_RENDER_COLOUR_OP_TYPE, devices);
  g_assert_cmpint(count_copies(&d), ==, 0);
  ts_render_values_unref(devices);
  drawn_clear(&d);
}

static void test_selection_and_dark(void)
{
  drawn d = draw_nested();
  ts_view_model_expand_all(d.model);
  lay_out(&d);
  int tanh = item_named(d.model, "encoder/layer_b/Tanh");
  ts_render_set_selected(d.render, tanh);
  g_assert_cmpint(ts_render_get_selected(d.render), ==, tanh);
  image im = export_area_png(&d);
  const ts_view_box *b = box_named(&d, "encoder/layer_b/Tanh");
  /* the outline of the selection, and of its input Mul */
  assert_colour_near(pixel(&im, page(b->x + 0.5, 0), page(b->y + b->height / 2, 0)), 0xe66100, 8);
  const ts_view_box *mul = box_named(&d, "encoder/layer_b/Mul");
  assert_colour_near(pixel(&im, page(mul->x + 0.5, 0), page(mul->y + mul->height / 2, 0)), 0xf5a45d, 8);
  cairo_surface_destroy(im.surface);

  ts_render_set_dark(d.render, true);
  g_assert_true(ts_render_get_dark(d.render));
  im = export_area_png(&d);
  assert_colour_near(pixel(&im, 1, 1), 0x1e1e20, 0);
  cairo_surface_destroy(im.surface);
  drawn_clear(&d);
}

static void test_errors(void)
{
  drawn d = draw_nested();
  GError *error = NULL;
  g_autofree char *bmp = temp_path("graph.bmp");
  g_assert_false(ts_render_export(d.render, bmp, NULL, 1, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(error->message, ".png, .svg or .pdf"));
  g_clear_error(&error);
  g_assert_false(g_file_test(bmp, G_FILE_TEST_EXISTS));

  g_assert_false(ts_render_export(d.render, "/nonexistent-dir/graph.svg", NULL, 1, &error));
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_clear_error(&error);

  g_autofree char *png = temp_path("empty.png");
  g_assert_false(ts_render_export(d.render, png, &(ts_render_rect){ 0, 0, 0, 10 }, 1, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error(&error);

  ts_render *blank = ts_render_new();
  g_assert_false(ts_render_export(blank, png, NULL, 1, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED);
  g_clear_error(&error);
  ts_render_free(blank);

  ts_render_format format;
  g_assert_true(ts_render_format_for_path("a/b.PDF", &format));
  g_assert_cmpint(format, ==, TS_RENDER_PDF);
  g_assert_false(ts_render_format_for_path("svg", &format));
  drawn_clear(&d);
}

/* ---- the command line ---------------------------------------------------------------------------- */

typedef struct cli_result {
  int status;
  char *out, *err;
} cli_result;

static cli_result cli(const char *first, ...)
{
  const char *exe = g_getenv("TRACESCOPE_CLI");
  g_assert_nonnull(exe);
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (char *)exe);
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a; a = va_arg(ap, const char *))
    g_ptr_array_add(argv, (char *)a);
  va_end(ap);
  g_ptr_array_add(argv, NULL);
  cli_result r = { 0 };
  int wait_status;
  GError *error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &r.out, &r.err,
                             &wait_status, &error));
  g_assert_no_error(error);
  g_ptr_array_unref(argv);
  if (!g_spawn_check_wait_status(wait_status, &error)) {
    g_assert_true(error->domain == G_SPAWN_EXIT_ERROR);
    r.status = error->code;
    g_error_free(error);
  }
  return r;
}

static void expect_success(cli_result r)
{
  if (r.status != 0)
    g_error("tracescope-cli failed (%d): %s", r.status, r.err);
  g_assert_cmpstr(r.out, ==, "");
  g_free(r.out);
  g_free(r.err);
}

static void expect_usage_error(cli_result r, const char *fragment)
{
  g_assert_cmpint(r.status, ==, 2);
  g_assert_true(g_str_has_prefix(r.err, "tracescope-cli: error: "));
  if (!strstr(r.err, fragment))
    g_error("stderr '%s' lacks '%s'", r.err, fragment);
  g_free(r.out);
  g_free(r.err);
}

static void test_cli_render(void)
{
  const char *arg = "f32[20,28,28]:uniform";
  g_autofree char *svg = temp_path("cli.svg");
  expect_success(cli("render", "seeds", "sequential_model", "--arg", arg, "--out", svg, NULL));
  svg_scan s = scan_svg(svg);
  assert_has_text(&s, "dense_[1-100]");
  assert_has_text(&s, "dense_101");
  assert_has_text(&s, "flatten");
  g_assert_false(g_hash_table_contains(s.texts, "MatMul")); /* closed */
  svg_scan_clear(&s);

  expect_success(cli("render", "seeds", "sequential_model", "--arg", arg, "--out", svg, "--expand", "dense_101", NULL));
  s = scan_svg(svg);
  assert_has_text(&s, "MatMul");
  assert_has_text(&s, "dense_[1-100]");
  svg_scan_clear(&s);
  g_unlink(svg);

  g_autofree char *png = temp_path("cli.png");
  expect_success(cli("render", "seeds", "square_if_positive", "--arg", "i32[]=2", "--out", png, "--expand", "all",
                     "--style", "dark", "--scale", "2", NULL));
  image im = load_png(png);
  g_assert_cmpint(im.width, >, 400);
  assert_colour_near(pixel(&im, 1, 1), 0x1e1e20, 0);
  cairo_surface_destroy(im.surface);
  g_unlink(png);

  g_autofree char *pdf = temp_path("cli.pdf");
  expect_success(cli("render", "seeds", "deep_net", "--arg", "i32[3]=1,2,3", "--out", pdf, NULL));
  g_autofree char *contents = NULL;
  g_assert_true(g_file_get_contents(pdf, &contents, NULL, NULL));
  g_assert_true(g_str_has_prefix(contents, "%PDF-"));
  g_unlink(pdf);

  g_autofree char *dot = temp_path("cli.dot");
  expect_success(cli("render", "seeds", "square_if_positive", "--arg", "i32[]=2", "--out", dot, NULL));
  g_autofree char *dot_text = NULL;
  g_assert_true(g_file_get_contents(dot, &dot_text, NULL, NULL));
  g_assert_true(g_str_has_prefix(dot_text, "digraph \""));
  g_unlink(dot);

  expect_usage_error(cli("render", "seeds", "sequential_model", "--arg", arg, NULL), "render needs --out FILE");
  expect_usage_error(cli("render", "seeds", "sequential_model", "--arg", arg, "--out", "graph.bmp", NULL),
                     "--out must name a .svg, .png, .pdf or .dot file, not 'graph.bmp'");
  expect_usage_error(cli("render", "seeds", "sequential_model", "--arg", arg, "--out", svg, "--expand", "dense_999", NULL),
                     "--expand: no scope 'dense_999' in the graph of sequential_model (top-level scopes: flatten, "
                     "dense_[1-100], dropout, dense_101)");
  expect_usage_error(cli("render", "seeds", "sequential_model", "--arg", arg, "--out", svg, "--style", "sepia", NULL),
                     "--style must be light or dark, not 'sepia'");
  expect_usage_error(cli("render", "seeds", "sequential_model", "--call", "--arg", arg, "--call", "--arg", arg,
                         "--out", svg, NULL),
                     "render traces one call");
  g_assert_false(g_file_test(svg, G_FILE_TEST_EXISTS));
  /* without --arg: the example arguments the seeds declare */
  expect_success(cli("render", "seeds", "sequential_model", "--out", svg, NULL));
  g_assert_true(g_file_test(svg, G_FILE_TEST_EXISTS));
  g_unlink(svg);
}

/* ---- colour distance ------------------------------------------------------------------------ */

/* sRGB (0..1) to CIE Lab, D65. */
static void to_lab(_ts_rgba c, double lab[3])
{
  double rgb[3] = { c.r, c.g, c.b }, lin[3];
  for (int i = 0; i < 3; i++)
    lin[i] = rgb[i] <= 0.04045 ? rgb[i] / 12.92 : pow((rgb[i] + 0.055) / 1.055, 2.4);
  double xyz[3] = {
    (0.4124564 * lin[0] + 0.3575761 * lin[1] + 0.1804375 * lin[2]) / 0.95047,
    0.2126729 * lin[0] + 0.7151522 * lin[1] + 0.0721750 * lin[2],
    (0.0193339 * lin[0] + 0.1191920 * lin[1] + 0.9503041 * lin[2]) / 1.08883,
  };
  double f[3];
  for (int i = 0; i < 3; i++)
    f[i] = xyz[i] > 216.0 / 24389 ? cbrt(xyz[i]) : (24389.0 / 27 * xyz[i] + 16) / 116;
  lab[0] = 116 * f[1] - 16;
  lab[1] = 500 * (f[0] - f[1]);
  lab[2] = 200 * (f[1] - f[2]);
}

/* CIE76 colour difference: about 2.3 is just noticeable; 10 and more is
 * a different colour at a glance, even on small swatches. */
static double delta_e(_ts_rgba a, _ts_rgba b)
{
  double x[3], y[3];
  to_lab(a, x);
  to_lab(b, y);
  return sqrt((x[0] - y[0]) * (x[0] - y[0]) + (x[1] - y[1]) * (x[1] - y[1]) + (x[2] - y[2]) * (x[2] - y[2]));
}

/* Every op of the engine's table has a colour of its family, and any two
 * differ by ΔE76 >= 12 in both modes (the palette measures 15.4;
 * 12 leaves room for edits while staying well above "at a glance"). */
static void test_op_palette(void)
{
  for (int dark = 0; dark < 2; dark++) {
    const _ts_palette *pal = _ts_palette_get(dark);
    double least = G_MAXDOUBLE;
    int pair[2] = { -1, -1 };
    for (int a = 0; a < TS_OP_COUNT; a++) {
      g_assert_cmpint(_ts_op_family_of(a), !=, TS_OP_FAMILY_OTHER);
      for (int b = a + 1; b < TS_OP_COUNT; b++) {
        double d = delta_e(_ts_op_colour(pal, a), _ts_op_colour(pal, b));
        if (d < least) {
          least = d;
          pair[0] = a, pair[1] = b;
        }
      }
    }
    g_test_message("%s: least ΔE76 %.2f (%s, %s) over %d op types", dark ? "dark" : "light", least,
                   ts_op_name(pair[0]), ts_op_name(pair[1]), (int)TS_OP_COUNT);
    g_assert_cmpfloat(least, >=, 12);
    /* the pairs users complained of */
    g_assert_cmpfloat(delta_e(_ts_op_colour(pal, TS_OP_CONST), _ts_op_colour(pal, TS_OP_PRINT)), >=, 12);
    g_assert_cmpfloat(delta_e(_ts_op_colour(pal, TS_OP_MATMUL), _ts_op_colour(pal, TS_OP_FLATTEN)), >=, 12);
    g_assert_cmpfloat(delta_e(_ts_op_colour(pal, TS_OP_PLACEHOLDER), _ts_op_colour(pal, TS_OP_SIGMOID)), >=, 12);
    /* an op the table does not know is drawn, in grey */
    _ts_rgba unknown = _ts_op_colour(pal, TS_OP_COUNT);
    g_assert_cmpfloat(fabs(unknown.r - unknown.g), <, 1e-9);
  }
}

/* Another tool's op names take colours of their own: each of them at
 * least ΔE76 10 from every engine op's colour, in both modes, however the
 * name hashes; neighbouring hues tell apart side by side (>= 6). */
static void test_foreign_palette(void)
{
  for (int dark = 0; dark < 2; dark++) {
    const _ts_palette *pal = _ts_palette_get(dark);
    double least = G_MAXDOUBLE;
    for (guint k = 0; k < TS_FOREIGN_HUES; k++) {
      _ts_rgba c = _ts_foreign_colour(pal, k);
      for (int op = 0; op < TS_OP_COUNT; op++)
        least = MIN(least, delta_e(c, _ts_op_colour(pal, op)));
      g_assert_cmpfloat(delta_e(c, _ts_foreign_colour(pal, k + 1)), >=, 6);
      g_assert_cmpfloat(delta_e(c, _ts_foreign_colour(pal, k + TS_FOREIGN_HUES)), ==, 0);
    }
    g_test_message("%s: foreign names at least ΔE76 %.2f from every op", dark ? "dark" : "light", least);
    g_assert_cmpfloat(least, >=, 10);
  }
}

/* Nested group boxes step visibly (ΔE76 >= 6) from each other and stand
 * apart from the background (>= 3: they have an outline too), in both
 * modes; collapsed groups stand out of them (>= 10). */
static void test_group_tones(void)
{
  for (int dark = 0; dark < 2; dark++) {
    const _ts_palette *pal = _ts_palette_get(dark);
    for (int depth = 0; depth < TS_CONTAINER_TONES; depth++) {
      _ts_rgba fill = _ts_container_fill(pal, depth);
      g_test_message("%s depth %d: ΔE76 %.1f from the background, %.1f from the next level", dark ? "dark" : "light",
                     depth, delta_e(fill, pal->background), delta_e(fill, _ts_container_fill(pal, depth + 1)));
      g_assert_cmpfloat(delta_e(fill, pal->background), >=, 3);
      g_assert_cmpfloat(delta_e(fill, _ts_container_fill(pal, depth + 1)), >=, 6);
      for (int t = 0; t < 6; t++)
        g_assert_cmpfloat(delta_e(_ts_group_colour(pal, t), fill), >=, 10);
    }
  }
}

/* ---- the legend -------------------------------------------------------------------------------- */

/* A text the legend wrote, and where. */
typedef struct legend_text {
  char *str;
  double x, baseline, size;
} legend_text;

static void legend_text_free(gpointer p)
{
  g_free(((legend_text *)p)->str);
  g_free(p);
}

static void collect_text(const char *str, double x, double baseline, double size, void *data)
{
  legend_text t = { g_strdup(str), x, baseline, size };
  g_ptr_array_add(data, g_memdup2(&t, sizeof t));
}

/* What the legend writes, drawn at (0, 0) no taller than max_height. */
static GPtrArray *legend_texts(drawn *d, double max_height, bool collapsed)
{
  double w, h;
  ts_render_legend_size(d->render, max_height, collapsed, &w, &h);
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)w + 1, (int)h + 1);
  cairo_t *cr = cairo_create(surface);
  GPtrArray *written = g_ptr_array_new_with_free_func(legend_text_free);
  _ts_render_set_text_sink(d->render, collect_text, written);
  ts_render_draw_legend(d->render, cr, 0, 0, max_height, collapsed);
  _ts_render_set_text_sink(d->render, NULL, NULL);
  cairo_destroy(cr);
  cairo_surface_destroy(surface);
  return written;
}

static bool legend_has(const GPtrArray *written, const char *str)
{
  for (guint i = 0; i < written->len; i++)
    if (strcmp(((const legend_text *)g_ptr_array_index(written, i))->str, str) == 0)
      return true;
  return false;
}

/* The op types of the shapes the layout shows (dots too, containers not). */
static GHashTable *shown_op_types(const drawn *d)
{
  GHashTable *types = g_hash_table_new(g_str_hash, g_str_equal);
  for (int i = 0; i < ts_view_layout_n_boxes(d->layout); i++) {
    const ts_view_box *b = ts_view_layout_box(d->layout, i);
    const char *op = ts_view_item_op_name(d->model, b->item);
    if (op && b->shape != TS_VIEW_SHAPE_CONTAINER)
      g_hash_table_add(types, (gpointer)op);
  }
  return types;
}

/* The legend's op types are exactly the types shown: its rows less the
 * title and the shapes' rows. */
static void assert_legend_lists(drawn *d, GHashTable *types)
{
  static const char *const NOT_TYPES[] = { "Op type", "name scope", "series of alike scopes",
                                           "constant or shared input" };
  GPtrArray *written = legend_texts(d, 0, false);
  guint n_types = 0;
  for (guint i = 0; i < written->len; i++) {
    const char *str = ((const legend_text *)g_ptr_array_index(written, i))->str;
    bool fixed = false;
    for (guint k = 0; k < G_N_ELEMENTS(NOT_TYPES); k++)
      fixed = fixed || strcmp(str, NOT_TYPES[k]) == 0;
    if (fixed)
      continue;
    if (!g_hash_table_contains(types, str))
      g_error("the legend lists '%s', which is not shown", str);
    n_types++;
  }
  g_assert_cmpuint(n_types, ==, g_hash_table_size(types));
  g_ptr_array_unref(written);
}

/* Every op type shown is listed, in columns when tall, no two rows on
 * each other; collapsed, only the header; the export lists them all too. */
static void test_legend(void)
{
  drawn d = draw_many_ops();
  GHashTable *types = shown_op_types(&d);
  g_assert_cmpuint(g_hash_table_size(types), >=, 25);
  assert_legend_lists(&d, types);

  double w1, h1, w2, h2, wc, hc;
  ts_render_legend_size(d.render, 0, false, &w1, &h1);
  ts_render_legend_size(d.render, 160, false, &w2, &h2);
  ts_render_legend_size(d.render, 160, true, &wc, &hc);
  g_assert_cmpfloat(h2, <=, 160);
  g_assert_cmpfloat(h2, <, h1 / 2 + 40);
  g_assert_cmpfloat(w2, >, 1.8 * w1 - 40); /* columns */
  g_assert_cmpfloat(hc, <, 40);          /* the header: one row */
  g_assert_cmpfloat(wc, <, w1);

  /* in columns, every type is written inside the legend, clear of the others */
  GPtrArray *written = legend_texts(&d, 160, false);
  GHashTableIter it;
  gpointer op;
  g_hash_table_iter_init(&it, types);
  while (g_hash_table_iter_next(&it, &op, NULL))
    g_assert_true(legend_has(written, op));
  g_assert_true(legend_has(written, "Op type"));
  for (guint i = 0; i < written->len; i++) {
    const legend_text *a = g_ptr_array_index(written, i);
    double aw = _ts_text_get(d.render->text, TS_FONT_LEGEND, a->str)->width;
    g_assert_cmpfloat(a->x, >=, 0);
    g_assert_cmpfloat(a->x + aw, <=, w2);
    g_assert_cmpfloat(a->baseline - a->size, >=, 0);
    g_assert_cmpfloat(a->baseline, <=, h2);
    for (guint j = i + 1; j < written->len; j++) {
      const legend_text *b = g_ptr_array_index(written, j);
      double bw = _ts_text_get(d.render->text, TS_FONT_LEGEND, b->str)->width;
      bool apart = a->x + aw <= b->x || b->x + bw <= a->x || fabs(a->baseline - b->baseline) >= a->size;
      if (!apart)
        g_error("legend rows '%s' and '%s' overlap", a->str, b->str);
    }
  }
  g_ptr_array_unref(written);
  written = legend_texts(&d, 160, true);
  g_assert_cmpuint(written->len, ==, 1); /* the title alone */
  g_ptr_array_unref(written);

  g_autofree char *path = temp_path("many.svg");
  GError *error = NULL;
  g_assert_true(ts_render_export(d.render, path, NULL, 1, &error));
  g_assert_no_error(error);
  svg_scan scan = scan_svg(path);
  g_hash_table_iter_init(&it, types);
  while (g_hash_table_iter_next(&it, &op, NULL))
    assert_has_text(&scan, op);
  svg_scan_clear(&scan);
  g_unlink(path);
  g_hash_table_destroy(types);
  drawn_clear(&d);
}

/* The legend follows what is shown: expanding a group lists the types
 * inside it, collapsing it again drops them. */
static void test_legend_follows_expansion(void)
{
  static const char *const INSIDE[] = { "Tanh", "Mul", "Sigmoid" };
  drawn d = draw_scoped_ops();
  int block = item_named(d.model, "block");
  for (int round = 0; round < 3; round++) {
    bool open = round == 1;
    ts_view_model_set_expanded(d.model, block, open);
    lay_out(&d);
    GHashTable *types = shown_op_types(&d);
    assert_legend_lists(&d, types);
    g_assert_true(g_hash_table_contains(types, "Exp"));
    g_assert_true(g_hash_table_contains(types, "Relu"));
    for (guint k = 0; k < G_N_ELEMENTS(INSIDE); k++)
      g_assert_true(g_hash_table_contains(types, INSIDE[k]) == open);
    g_hash_table_destroy(types);
  }
  drawn_clear(&d);
}

/* In the dark palette every text of the legend is drawn in the theme's
 * foreground (#eeeeee) with sharp strokes: along the text's x-height band,
 * every run of inked pixel columns (a glyph, or a stroke of one) reaches
 * close to it.  The shapes' rows were a muted grey, and unhinted at
 * fractional positions the left stem of the "u" of "input" fell between
 * two pixel columns and all but vanished. */
static void test_legend_text_contrast(void)
{
  drawn d = draw_many_ops();
  ts_render_set_dark(d.render, true);
  double w, h;
  ts_render_legend_size(d.render, 0, false, &w, &h);
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)w + 1, (int)h + 1);
  cairo_t *cr = cairo_create(surface);
  GPtrArray *written = g_ptr_array_new_with_free_func(legend_text_free);
  _ts_render_set_text_sink(d.render, collect_text, written);
  ts_render_draw_legend(d.render, cr, 0, 0, 0, false);
  _ts_render_set_text_sink(d.render, NULL, NULL);
  cairo_surface_flush(surface);
  const unsigned char *px = cairo_image_surface_get_data(surface);
  int stride = cairo_image_surface_get_stride(surface), width = cairo_image_surface_get_width(surface);
  enum { INK = 0x50, SHARP = 0xb0 }; /* the ground is about 0x28, the old muted grey 0xa8 */
  for (guint i = 0; i < written->len; i++) {
    const legend_text *t = g_ptr_array_index(written, i);
    int runs = 0, run_peak = 0;
    for (int x = (int)t->x; x <= width; x++) {
      int peak = 0;
      for (int y = (int)(t->baseline - t->size * 0.45); x < width && y < (int)t->baseline; y++)
        peak = MAX(peak, px[y * stride + x * 4 + 1]); /* green: the text's grey */
      if (peak >= INK) {
        run_peak = MAX(run_peak, peak);
        continue;
      }
      if (run_peak > 0 && run_peak < SHARP)
        g_error("the legend's '%s' has a faint stroke at x=%d (%#x)", t->str, x, run_peak);
      runs += run_peak > 0;
      run_peak = 0;
      if (x > t->x + t->size * (double)strlen(t->str))
        break; /* past its end */
    }
    g_assert_cmpint(runs, >, 0);
  }
  g_ptr_array_unref(written);
  cairo_destroy(cr);
  cairo_surface_destroy(surface);
  drawn_clear(&d);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/render/png", test_png);
  g_test_add_func("/render/svg-labels", test_svg_labels);
  g_test_add_func("/render/pdf", test_pdf);
  g_test_add_func("/render/no-overlap", test_no_overlap);
  g_test_add_func("/render/culling-and-detail", test_culling_and_detail);
  g_test_add_func("/render/colouring", test_colouring);
  g_test_add_func("/render/device-copies", test_device_copies);
  g_test_add_func("/render/selection-and-dark", test_selection_and_dark);
  g_test_add_func("/render/errors", test_errors);
  g_test_add_func("/render/cli", test_cli_render);
  g_test_add_func("/render/op-palette", test_op_palette);
  g_test_add_func("/render/foreign-palette", test_foreign_palette);
  g_test_add_func("/render/group-tones", test_group_tones);
  g_test_add_func("/render/legend", test_legend);
  g_test_add_func("/render/legend-text-contrast", test_legend_text_contrast);
  g_test_add_func("/render/legend-follows-expansion", test_legend_follows_expansion);
  g_test_add_func("/render/edge-crossings", test_edge_crossings);
  g_test_add_func("/render/if-edges-inside", test_if_edges_inside);
  g_test_add_func("/render/edge-labels-clear", test_edge_labels_clear);
  int ret = g_test_run();
  ts_release_all();
  return ret;
}
