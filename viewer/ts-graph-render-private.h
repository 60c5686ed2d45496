/* ts-graph-render-private.h — what the renderer's files share: palettes,
 * fonts and cached text, colouring state and its legend. */
#pragma once

#include <pango/pangocairo.h>

#include "ts-graph-render.h"

G_BEGIN_DECLS

typedef struct _ts_rgba {
  double r, g, b, a;
} _ts_rgba;

void _ts_set_source(cairo_t *cr, _ts_rgba c);

/* ---- palettes (ts-graph-render-palette.c) ------------------------------------- */

#define TS_CONTAINER_TONES 3

typedef struct _ts_palette {
  _ts_rgba background;
  _ts_rgba text, text_muted, text_light, text_dark;
  _ts_rgba stroke;               /* outlines of ops and boxes */
  _ts_rgba container_fill[TS_CONTAINER_TONES]; /* cycle with depth */
  _ts_rgba container_stroke, header;
  _ts_rgba edge, edge_control, edge_label_back;
  _ts_rgba accent, accent_soft, hover;
  _ts_rgba no_data;
  _ts_rgba legend_back, legend_border;
  _ts_rgba minimap_view;
  bool dark;
} _ts_palette;

const _ts_palette *_ts_palette_get(bool dark);
/* The palette's dark or light text, whichever reads better on fill. */
_ts_rgba _ts_text_on(const _ts_palette *palette, _ts_rgba fill);
/* The fill of an expanded container nested depth deep (0: top level). */
_ts_rgba _ts_container_fill(const _ts_palette *palette, int depth);
_ts_rgba _ts_mix(_ts_rgba a, _ts_rgba b, double t);

/* Op families, in the legend's order; each has a hue of its own. */
typedef enum _ts_op_family {
  TS_OP_FAMILY_OTHER, /* not in the palette's table */
  TS_OP_FAMILY_IO,
  TS_OP_FAMILY_LINALG,
  TS_OP_FAMILY_ARITH,
  TS_OP_FAMILY_MATH,
  TS_OP_FAMILY_COMPARE,
  TS_OP_FAMILY_REDUCE,
  TS_OP_FAMILY_SHAPE,
  TS_OP_FAMILY_CREATE,
  TS_OP_FAMILY_STATE,
  TS_OP_FAMILY_CONTROL,
  TS_OP_FAMILY_COUNT
} _ts_op_family;

/* op: a ts_op, or -1 for none (a neutral grey, as for ops newer than the table). */
_ts_rgba _ts_op_colour(const _ts_palette *palette, int op);
_ts_op_family _ts_op_family_of(int op);
/* An op name the engine does not know, by its hash: one of TS_FOREIGN_HUES
 * colours darker than every op's, so never an op's colour. */
#define TS_FOREIGN_HUES 18
_ts_rgba _ts_foreign_colour(const _ts_palette *palette, guint hash);
/* Collapsed groups, by structure (ts_view_item_template). */
_ts_rgba _ts_group_colour(const _ts_palette *palette, int template_id);
/* Categories (devices, functions): k from 0; compute time: t in [0, 1]. */
_ts_rgba _ts_category_colour(const _ts_palette *palette, int k);
_ts_rgba _ts_heat(const _ts_palette *palette, double t);

/* ---- fonts and text (ts-graph-render-text.c) -------------------------------------- */

typedef enum _ts_font {
  TS_FONT_LABEL,  /* shapes and headers; what layouts are measured with */
  TS_FONT_SMALL,  /* edge labels */
  TS_FONT_LEGEND, /* legend rows, in target units */
  TS_FONT_TITLE,  /* legend title */
  TS_FONT_COUNT
} _ts_font;

typedef struct _ts_label {
  PangoLayout *layout;
  double width, height; /* logical extents */
  double baseline;      /* from the top */
} _ts_label;

typedef struct _ts_text _ts_text;

/* Layouts cached per (font, text) for the calling thread's font map. */
_ts_text *_ts_text_new(void);
void _ts_text_free(_ts_text *text);
/* Borrowed; valid until the cache is cleared (it is when it grows large). */
const _ts_label *_ts_text_get(_ts_text *text, _ts_font font, const char *str);
/* Draws str with its top-left at (x, y); the sink, if set, hears of it. */
void _ts_text_draw(_ts_text *text, cairo_t *cr, _ts_font font, const char *str, double x, double y);

/* Told of every label drawn: baseline start in target units, size in px. */
typedef void (*_ts_text_sink)(const char *str, double x, double baseline, double size, void *data);
void _ts_text_set_sink(_ts_text *text, _ts_text_sink sink, void *data);

double _ts_font_size(_ts_font font);

/* ---- colouring (ts-graph-render-colour.c) ------------------------------------------ */

#define TS_MAX_STRIPES 8

/* A fill: one colour, or proportions of categories side by side. */
typedef struct _ts_fill {
  int n;
  _ts_rgba colour[TS_MAX_STRIPES];
  double share[TS_MAX_STRIPES];
} _ts_fill;

/* An op type shown, and how many times. */
typedef struct _ts_op_count {
  const char *name;
  int op; /* ts_op */
  int count;
} _ts_op_count;

/* A copied input between the items holding its two ends (device colouring). */
typedef struct _ts_copy {
  int src, dst;   /* the producer's item and the consumer's */
  int category;   /* the device copied to */
} _ts_copy;

typedef struct _ts_colours {
  ts_render_colouring mode;
  ts_render_values *values;
  ts_view_model *model;       /* a reference */
  int n_items;
  int *op;                    /* per item: its ts_op, -1 if not an op */
  double *sum;                /* per item: its ops' values summed; NAN: none */
  int n_cat;                  /* named categories (the last may be "other") */
  const char *cat_name[TS_MAX_STRIPES];
  int *counts;                /* per item: ops per category, then ops without one */
  double max;                 /* the largest value shown */
  bool shown_no_data;         /* some shown item has no value or category */
  GArray *ops;                /* _ts_op_count of the shown ops, by family then name */
  GArray *copies;             /* _ts_copy: the values' copied inputs (device colouring) */
} _ts_colours;

_ts_colours *_ts_colours_new(void);
void _ts_colours_free(_ts_colours *c);
void _ts_colours_set_mode(_ts_colours *c, ts_render_colouring mode, ts_render_values *values);
ts_render_colouring _ts_colours_mode(const _ts_colours *c);
/* Rolls the values up the model's items and scales to what layout shows. */
void _ts_colours_update(_ts_colours *c, ts_view_model *model, const ts_view_layout *layout);
void _ts_colours_fill(const _ts_colours *c, const _ts_palette *palette, const ts_view_box *box,
                      _ts_fill *out);
/* In the device colouring: the category of the device an edge's tensors
 * were copied to, when the run recorded a copy of an input it carries
 * (ts_render_values_add_copy); -1 when none was recorded, whatever
 * devices its ends ran on. */
int _ts_colours_copy_to(const _ts_colours *c, const ts_view_edge *edge);
/* The unit values are in ("ms"), or NULL. */
const char *_ts_render_values_unit(const ts_render_values *values);

/* ---- the legend (ts-graph-render-legend.c) ----------------------------------------------- */

/* Measures (cr NULL) or draws the legend with its top-left at (x, y); see
 * ts_render_legend_size. */
void _ts_legend_run(_ts_colours *c, _ts_text *text, const _ts_palette *palette, cairo_t *cr, double x,
                    double y, double max_height, bool collapsed, double *width, double *height);

/* ---- the renderer (ts-graph-render.c) ---------------------------------------------- */

/* Edge labels need more zoom than node labels: they are smaller. */
#define EDGE_LABEL_ZOOM 0.7
/* Below this, shapes are a few pixels: rectangles, no dots, no outlines. */
#define TINY_ZOOM 0.12
/* How far strokes, arrowheads and edge labels reach past their geometry. */
#define CULL_MARGIN 64.0

enum { MARK_NONE, MARK_NEIGHBOUR, MARK_SELECTED };

struct ts_render {
  ts_view_model *model; /* a reference */
  const ts_view_layout *layout;
  ts_view_layout_options opts;
  bool dark;
  _ts_text *text;
  _ts_colours *colours;
  int selected, hovered;
  /* per layout: a uniform grid of shapes and paths (containers apart) */
  int n_boxes, n_paths;
  double cell;
  int cols, rows;
  int *cell_start;  /* cols * rows + 1 offsets into entries */
  int *entries;     /* box i as i, path p as -(p + 1) */
  ts_render_rect *path_rect;     /* per path: its hull and its label */
  GArray *containers;
  guint *box_stamp, *path_stamp;
  guint stamp;
  guint8 *box_mark, *path_mark;
  guint8 *label_shown;           /* per path: its label found a place clear of shapes, title bars, labels */
  ts_view_point *label_pos;      /* per path: the top-left of its label's text, where shown */
  GArray *hit_boxes, *hit_paths; /* one frame's _ts_render_query */
};

void _ts_render_set_text_sink(ts_render *render, _ts_text_sink sink, void *data);

/* ---- the grid and edge labels (ts-graph-render-index.c) ----------------------------- */

/* Builds the grid and places the edge labels for render->layout. */
void _ts_render_index_build(ts_render *r);
void _ts_render_index_drop(ts_render *r);
/* Fills hit_boxes and hit_paths with what intersects visible (NULL: all). */
void _ts_render_query(ts_render *r, const ts_render_rect *visible);
void _ts_box_bounds(const ts_view_box *b, ts_render_rect *out);
bool _ts_rects_intersect(const ts_render_rect *a, const ts_render_rect *b);
/* The layout's rectangle grown to hold the edge labels shown (needs a layout). */
void _ts_render_bounds(ts_render *render, ts_render_rect *out);

/* ---- drawing one thing (ts-graph-render-shapes.c) ----------------------------------- */

void _ts_draw_container(ts_render *r, cairo_t *cr, const ts_view_box *b, bool tiny, ts_render_stats *stats);
/* The label and op count in its header, drawn over the edges that cross it. */
void _ts_draw_container_header(ts_render *r, cairo_t *cr, const ts_view_box *b, ts_render_stats *stats);
void _ts_draw_shape(ts_render *r, cairo_t *cr, const ts_view_box *b, bool detailed, ts_render_stats *stats);
/* Shapes a few pixels big: rectangles, one fill per colour; no dots. */
void _ts_draw_shapes_tiny(ts_render *r, cairo_t *cr, const _ts_palette *pal, ts_render_stats *stats);
/* An outline around a box: the selection, its neighbours, the hover. */
void _ts_draw_outline(cairo_t *cr, const ts_view_box *b, _ts_rgba colour, double width);
void _ts_draw_edge(cairo_t *cr, const _ts_palette *pal, const ts_view_path *p, bool marked, bool detailed,
                   double zoom);
/* Unmarked edges below the detail zoom, in a few strokes; how many. */
int _ts_draw_edges_coarse(ts_render *r, cairo_t *cr, const _ts_palette *pal, double zoom);
void _ts_draw_edge_label(ts_render *r, cairo_t *cr, const _ts_palette *pal, int path, bool marked);
/* A tag on an edge whose tensors are copied between devices: "copy to
 * SIM:0" in the destination device's colour, near its head. */
void _ts_draw_copy_tag(ts_render *r, cairo_t *cr, const _ts_palette *pal, int path, int category,
                       const char *device);
/* Where the layout's path's label is drawn (its text's top-left); NULL if
 * it has none or it is hidden. */
const _ts_label *_ts_edge_label_at(ts_render *r, int path, double *x, double *y);

G_END_DECLS
