/* ts-graph-render-legend.c — the legend of the active colour mode: a
 * header (a disclosure triangle and the mode's name), then every op type
 * the layout shows, in view or not (or the categories, or the heat scale)
 * and the shapes, in columns no taller than asked.  Collapsed, only the
 * header shows. */
#include "ts-graph-render-private.h"

#include <math.h>

enum { LEGEND_PAD = 8, SWATCH = 12, ROW = 17, GAP = 4, COLUMN_GAP = 14, HEAT_WIDTH = 128, ARROW = 14 };

typedef enum swatch_kind { SWATCH_ELLIPSE, SWATCH_BOX, SWATCH_SERIES, SWATCH_DOT, SWATCH_HEAT } swatch_kind;

typedef struct entry {
  swatch_kind kind;
  _ts_rgba fill;
  const char *text; /* borrowed */
  bool gap;         /* a gap above it, unless it starts a column */
  double x, y;      /* placed: its top-left */
} entry;

static const char *const TITLES[TS_RENDER_COLOUR_COUNT] = {
  [TS_RENDER_COLOUR_OP_TYPE] = "Op type",
  [TS_RENDER_COLOUR_DEVICE] = "Device",
  [TS_RENDER_COLOUR_COMPUTE_TIME] = "Compute time",
  [TS_RENDER_COLOUR_FUNCTION] = "Function",
};

static void add(GArray *entries, swatch_kind kind, _ts_rgba fill, const char *text)
{
  g_array_append_val(entries, ((entry){ .kind = kind, .fill = fill, .text = text }));
}

/* What the legend lists for the active mode, then the shapes. */
static void list_entries(_ts_colours *c, const _ts_palette *palette, GArray *entries)
{
  if (c->mode == TS_RENDER_COLOUR_OP_TYPE) {
    for (guint i = 0; i < c->ops->len; i++) {
      const _ts_op_count *oc = &g_array_index(c->ops, _ts_op_count, i);
      add(entries, SWATCH_ELLIPSE, _ts_op_colour(palette, oc->op), oc->name);
    }
  } else if (c->mode == TS_RENDER_COLOUR_COMPUTE_TIME) {
    add(entries, SWATCH_HEAT, palette->no_data, NULL);
    if (c->shown_no_data)
      add(entries, SWATCH_BOX, palette->no_data, "no data");
  } else {
    for (int k = 0; k < c->n_cat; k++)
      add(entries, SWATCH_BOX, _ts_category_colour(palette, k), c->cat_name[k]);
    if (c->shown_no_data || c->n_cat == 0)
      add(entries, SWATCH_BOX, palette->no_data, "no data");
  }
  guint first_shape = entries->len;
  _ts_rgba shape_fill = palette->container_fill[1];
  add(entries, SWATCH_BOX, shape_fill, "name scope");
  add(entries, SWATCH_SERIES, shape_fill, "series of alike scopes");
  add(entries, SWATCH_DOT, palette->text_muted, "constant or shared input");
  g_array_index(entries, entry, first_shape).gap = first_shape > 0;
}

static double entry_height(const entry *e)
{
  return e->kind == SWATCH_HEAT ? SWATCH + GAP + ROW : ROW;
}

static void swatch_path(cairo_t *cr, swatch_kind kind, double x, double y)
{
  double s = SWATCH;
  cairo_new_path(cr);
  switch (kind) {
  case SWATCH_ELLIPSE:
    cairo_save(cr);
    cairo_translate(cr, x + s / 2, y + s / 2);
    cairo_scale(cr, s / 2, s * 0.38);
    cairo_arc(cr, 0, 0, 1, 0, 2 * G_PI);
    cairo_restore(cr);
    break;
  case SWATCH_DOT:
    cairo_arc(cr, x + s / 2, y + s / 2, s / 4, 0, 2 * G_PI);
    break;
  case SWATCH_SERIES:
    cairo_rectangle(cr, x + 3, y, s - 3, s - 3);
    cairo_rectangle(cr, x, y + 3, s - 3, s - 3);
    break;
  case SWATCH_BOX:
  case SWATCH_HEAT:
    cairo_rectangle(cr, x, y + 1, s, s - 2);
    break;
  }
}

/* On whole pixels of the target, where the legend is drawn unzoomed: its
 * hinted glyphs stay sharp. */
static void text_at(_ts_text *text, cairo_t *cr, _ts_font font, const char *str, double x, double y_row,
                    _ts_rgba colour)
{
  const _ts_label *label = _ts_text_get(text, font, str);
  double dx = x, dy = y_row + (ROW - label->height) / 2;
  cairo_user_to_device(cr, &dx, &dy);
  dx = round(dx);
  dy = round(dy);
  cairo_device_to_user(cr, &dx, &dy);
  _ts_set_source(cr, colour);
  _ts_text_draw(text, cr, font, str, dx, dy);
}

static void draw_heat(_ts_text *text, const _ts_palette *palette, cairo_t *cr, const char *hi,
                      double x, double y)
{
  cairo_pattern_t *grad = cairo_pattern_create_linear(x, 0, x + HEAT_WIDTH, 0);
  for (int i = 0; i <= 4; i++) {
    _ts_rgba h = _ts_heat(palette, i / 4.0);
    cairo_pattern_add_color_stop_rgb(grad, i / 4.0, h.r, h.g, h.b);
  }
  cairo_rectangle(cr, x, y + 3, HEAT_WIDTH, SWATCH - 2);
  cairo_set_source(cr, grad);
  cairo_fill(cr);
  cairo_pattern_destroy(grad);
  const _ts_label *label = _ts_text_get(text, TS_FONT_LEGEND, hi);
  text_at(text, cr, TS_FONT_LEGEND, "0", x, y + SWATCH + GAP, palette->text);
  text_at(text, cr, TS_FONT_LEGEND, hi, x + MAX(HEAT_WIDTH - label->width, 16), y + SWATCH + GAP, palette->text);
}

/* The disclosure triangle: pointing right when collapsed, down when open. */
static void draw_arrow(cairo_t *cr, const _ts_palette *palette, double x, double y, bool collapsed)
{
  double cx = x + ARROW / 2.0 - 2, cy = y + ROW / 2.0;
  cairo_new_path(cr);
  if (collapsed) {
    cairo_move_to(cr, cx - 2.5, cy - 4.5);
    cairo_line_to(cr, cx + 3, cy);
    cairo_line_to(cr, cx - 2.5, cy + 4.5);
  } else {
    cairo_move_to(cr, cx - 4.5, cy - 2.5);
    cairo_line_to(cr, cx + 4.5, cy - 2.5);
    cairo_line_to(cr, cx, cy + 3);
  }
  cairo_close_path(cr);
  _ts_set_source(cr, palette->text_muted);
  cairo_fill(cr);
}

void _ts_legend_run(_ts_colours *c, _ts_text *text, const _ts_palette *palette, cairo_t *cr, double x,
                    double y, double max_height, bool collapsed, double *width, double *height)
{
  const char *title = TITLES[c->mode];
  double title_w = ARROW + _ts_text_get(text, TS_FONT_TITLE, title)->width;
  double top = y + LEGEND_PAD + ROW + 2; /* the first row, below the header */
  double w = title_w, bottom = y + LEGEND_PAD + ROW;
  GArray *entries = g_array_new(FALSE, FALSE, sizeof(entry));
  char hi[64];
  const char *unit = _ts_render_values_unit(c->values);
  g_snprintf(hi, sizeof hi, "%.3g%s%s", c->max, unit && *unit ? " " : "", unit && *unit ? unit : "");
  if (!collapsed) {
    list_entries(c, palette, entries);
    /* one width for every column: the widest entry */
    double column_w = 0;
    for (guint i = 0; i < entries->len; i++) {
      const entry *e = &g_array_index(entries, entry, i);
      double ew = e->kind == SWATCH_HEAT ? HEAT_WIDTH : SWATCH + 6 + _ts_text_get(text, TS_FONT_LEGEND, e->text)->width;
      column_w = MAX(column_w, ew);
    }
    /* rows top to bottom, a new column where the next would pass the limit */
    double limit = max_height > 0 ? y + max_height - LEGEND_PAD : INFINITY;
    double col_x = x + LEGEND_PAD, row_y = top;
    for (guint i = 0; i < entries->len; i++) {
      entry *e = &g_array_index(entries, entry, i);
      double gap = e->gap && row_y > top ? GAP : 0;
      if (row_y > top && row_y + gap + entry_height(e) > limit) {
        col_x += column_w + COLUMN_GAP;
        row_y = top;
        gap = 0;
      }
      e->x = col_x;
      e->y = row_y + gap;
      row_y = e->y + entry_height(e);
      bottom = MAX(bottom, row_y);
      w = MAX(w, col_x + column_w - x - LEGEND_PAD);
    }
  }
  *width = w + 2 * LEGEND_PAD;
  *height = ceil(bottom - y + LEGEND_PAD);
  if (cr) {
    cairo_save(cr);
    cairo_rectangle(cr, x + 0.5, y + 0.5, *width - 1, *height - 1);
    _ts_set_source(cr, palette->legend_back);
    cairo_fill_preserve(cr);
    _ts_set_source(cr, palette->legend_border);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
    draw_arrow(cr, palette, x + LEGEND_PAD, y + LEGEND_PAD, collapsed);
    text_at(text, cr, TS_FONT_TITLE, title, x + LEGEND_PAD + ARROW, y + LEGEND_PAD, palette->text);
    for (guint i = 0; i < entries->len; i++) {
      const entry *e = &g_array_index(entries, entry, i);
      if (e->kind == SWATCH_HEAT) {
        draw_heat(text, palette, cr, hi, e->x, e->y);
        continue;
      }
      swatch_path(cr, e->kind, e->x, e->y + (ROW - SWATCH) / 2.0);
      _ts_set_source(cr, e->fill);
      cairo_fill_preserve(cr);
      _ts_set_source(cr, palette->stroke);
      cairo_set_line_width(cr, 1);
      cairo_stroke(cr);
      /* the theme's foreground: a muted grey was faint on the dark ground */
      text_at(text, cr, TS_FONT_LEGEND, e->text, e->x + SWATCH + 6, e->y, palette->text);
    }
    cairo_restore(cr);
  }
  g_array_free(entries, TRUE);
}
