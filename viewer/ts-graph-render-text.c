/* ts-graph-render-text.c — the renderer's fonts: one measurement that the
 * layout worker and the drawing agree on, and Pango layouts cached per
 * label so that a frame does not shape text again. */
#include "ts-graph-render-private.h"

#include <math.h>

/* Absolute sizes: canvas units at zoom 1, whatever the screen.  The
 * legend's fonts are drawn in screen pixels, never zoomed: hinted. */
static const struct {
  const char *description;
  double size;
  bool screen;
} FONTS[TS_FONT_COUNT] = {
  [TS_FONT_LABEL] = { "Sans 11px", 11, false },
  [TS_FONT_SMALL] = { "Sans 9px", 9, false },
  [TS_FONT_LEGEND] = { "Sans 11px", 11, true },
  [TS_FONT_TITLE] = { "Sans Bold 11px", 11, true },
};

/* Too many layouts cost memory for little: past this the cache starts over. */
#define TEXT_CACHE_MAX 8192

double _ts_font_size(_ts_font font)
{
  return FONTS[font].size;
}

/* Unhinted metrics and unrounded positions: text scales with the zoom
 * and measures the same on every surface. */
static PangoContext *context_new(PangoFontMap *map)
{
  PangoContext *ctx = pango_font_map_create_context(map);
  cairo_font_options_t *fo = cairo_font_options_create();
  cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
  cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
  pango_cairo_context_set_font_options(ctx, fo);
  cairo_font_options_destroy(fo);
  pango_cairo_context_set_resolution(ctx, 96);
  pango_context_set_round_glyph_positions(ctx, FALSE);
  return ctx;
}

/* Text that stays at one size on screen (the legend): glyphs hinted to the
 * pixel grid at whole-pixel positions, as GTK draws its labels.  Unhinted
 * at 11 px, a light stem on a dark ground fell between two pixel columns
 * and all but vanished (the "u" of "input"). */
static PangoContext *screen_context_new(PangoFontMap *map)
{
  PangoContext *ctx = pango_font_map_create_context(map);
  cairo_font_options_t *fo = cairo_font_options_create();
  cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_SLIGHT);
  cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_ON);
  cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
  pango_cairo_context_set_font_options(ctx, fo);
  cairo_font_options_destroy(fo);
  pango_cairo_context_set_resolution(ctx, 96);
  return ctx;
}

static PangoLayout *layout_new(PangoContext *ctx, const PangoFontDescription *font, const char *str)
{
  PangoLayout *layout = pango_layout_new(ctx);
  pango_layout_set_font_description(layout, font);
  pango_layout_set_text(layout, str, -1);
  return layout;
}

static void logical_size(PangoLayout *layout, double *width, double *height)
{
  PangoRectangle logical;
  pango_layout_get_extents(layout, NULL, &logical);
  *width = (double)logical.width / PANGO_SCALE;
  *height = (double)logical.height / PANGO_SCALE;
}

/* ---- measuring, on any thread ------------------------------------------------------ */

/* A font map of its own behind a lock: the layout worker measures while
 * the GUI thread draws with its thread's default map. */
static GMutex measure_lock;
static PangoContext *measure_ctx;
static PangoLayout *measure_layout;
static GHashTable *measure_widths; /* text -> double[2] */

void ts_render_measure(const char *text, double *width, double *height, void *user_data)
{
  g_mutex_lock(&measure_lock);
  if (!measure_ctx) {
    PangoFontMap *map = pango_cairo_font_map_new();
    measure_ctx = context_new(map);
    g_object_unref(map);
    PangoFontDescription *font = pango_font_description_from_string(FONTS[TS_FONT_LABEL].description);
    measure_layout = layout_new(measure_ctx, font, "");
    pango_font_description_free(font);
    measure_widths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  }
  const double *known = g_hash_table_lookup(measure_widths, text ? text : "");
  if (known) {
    *width = known[0];
    *height = known[1];
  } else {
    pango_layout_set_text(measure_layout, text ? text : "", -1);
    double *size = g_new(double, 2);
    logical_size(measure_layout, &size[0], &size[1]);
    if (g_hash_table_size(measure_widths) >= 4 * TEXT_CACHE_MAX)
      g_hash_table_remove_all(measure_widths);
    g_hash_table_insert(measure_widths, g_strdup(text ? text : ""), size);
    *width = size[0];
    *height = size[1];
  }
  g_mutex_unlock(&measure_lock);
}

ts_view_layout_options ts_render_layout_options(void)
{
  ts_view_layout_options o = TS_VIEW_LAYOUT_OPTIONS_DEFAULT;
  double w, h;
  ts_render_measure("abcdefghijklmnopqrstuvwxyz", &w, &h, NULL);
  o.char_width = w / 26;
  o.line_height = ceil(h);
  o.header_height = ceil(h) + 6;
  o.measure = ts_render_measure;
  o.measure_data = NULL;
  return o;
}

/* ---- cached layouts for drawing ------------------------------------------------------ */

struct _ts_text {
  PangoContext *ctx;
  PangoContext *screen_ctx; /* the FONTS[].screen ones' */
  PangoFontDescription *fonts[TS_FONT_COUNT];
  GHashTable *cache[TS_FONT_COUNT]; /* text -> _ts_label */
  int n_cached;
  _ts_text_sink sink;
  void *sink_data;
};

static void label_free(gpointer p)
{
  _ts_label *label = p;
  g_object_unref(label->layout);
  g_free(label);
}

_ts_text *_ts_text_new(void)
{
  _ts_text *t = g_new0(_ts_text, 1);
  t->ctx = context_new(pango_cairo_font_map_get_default());
  t->screen_ctx = screen_context_new(pango_cairo_font_map_get_default());
  for (int f = 0; f < TS_FONT_COUNT; f++) {
    t->fonts[f] = pango_font_description_from_string(FONTS[f].description);
    t->cache[f] = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, label_free);
  }
  return t;
}

void _ts_text_free(_ts_text *text)
{
  if (!text)
    return;
  for (int f = 0; f < TS_FONT_COUNT; f++) {
    g_hash_table_destroy(text->cache[f]);
    pango_font_description_free(text->fonts[f]);
  }
  g_object_unref(text->ctx);
  g_object_unref(text->screen_ctx);
  g_free(text);
}

const _ts_label *_ts_text_get(_ts_text *text, _ts_font font, const char *str)
{
  _ts_label *label = g_hash_table_lookup(text->cache[font], str);
  if (label)
    return label;
  if (text->n_cached >= TEXT_CACHE_MAX) {
    for (int f = 0; f < TS_FONT_COUNT; f++)
      g_hash_table_remove_all(text->cache[f]);
    text->n_cached = 0;
  }
  label = g_new0(_ts_label, 1);
  label->layout = layout_new(FONTS[font].screen ? text->screen_ctx : text->ctx, text->fonts[font], str);
  logical_size(label->layout, &label->width, &label->height);
  label->baseline = (double)pango_layout_get_baseline(label->layout) / PANGO_SCALE;
  g_hash_table_insert(text->cache[font], g_strdup(str), label);
  text->n_cached++;
  return label;
}

void _ts_text_draw(_ts_text *text, cairo_t *cr, _ts_font font, const char *str, double x, double y)
{
  const _ts_label *label = _ts_text_get(text, font, str);
  cairo_move_to(cr, x, y);
  pango_cairo_show_layout(cr, label->layout);
  if (text->sink) {
    double bx = x, by = y + label->baseline, dx = 0, dy = FONTS[font].size;
    cairo_user_to_device(cr, &bx, &by);
    cairo_user_to_device_distance(cr, &dx, &dy);
    text->sink(str, bx, by, hypot(dx, dy), text->sink_data);
  }
}

void _ts_text_set_sink(_ts_text *text, _ts_text_sink sink, void *data)
{
  text->sink = sink;
  text->sink_data = data;
}
