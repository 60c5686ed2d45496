/* ts-graph-render.h — draws a ts_view_layout with Cairo and Pango: op
 * ellipses, group boxes, series stacks, containers, extracted dots, edges
 * with widths, arrowheads and labels; colour modes with their legend;
 * light and dark palettes; the selection and its neighbours highlighted.
 * No GTK: the graph view and the command-line renderer share it.
 *
 * Frames stay cheap on big graphs: a uniform grid built once per layout
 * finds what intersects the visible rectangle, and below a zoom threshold
 * labels, arrowheads and edge labels are left out.  Text layouts are
 * cached per label.
 *
 * Threads: a ts_render belongs to the thread that made it.  The layout
 * must be computed with ts_render_layout_options() so that labels fit
 * their shapes. */
#pragma once

#include <cairo.h>
#include <gio/gio.h>

#include "ts-graph-layout.h"

G_BEGIN_DECLS

/* ---- colouring data ------------------------------------------------------------ */

typedef enum ts_render_colouring {
  TS_RENDER_COLOUR_OP_TYPE,      /* a stable colour per op type (hashed name) */
  TS_RENDER_COLOUR_DEVICE,       /* categories: the device each node ran on (a profile's; no data without) */
  TS_RENDER_COLOUR_COMPUTE_TIME, /* heat scale from each node's value; groups sum theirs */
  TS_RENDER_COLOUR_FUNCTION,     /* categories: which compared function each node is in */
  TS_RENDER_COLOUR_COUNT
} ts_render_colouring;

/* A table from graph node to a value (compute time) or a category (device,
 * function).  Keys are nodes of the drawn graph or its subgraphs; for a node
 * id use ts_graph_node(graph, id).  Reference counted. */
typedef struct ts_render_values ts_render_values;

/* Owned.  unit names the values in the legend ("ms"; may be NULL). */
ts_render_values *ts_render_values_new(const char *unit);
ts_render_values *ts_render_values_ref(ts_render_values *values);
void ts_render_values_unref(ts_render_values *values);
void ts_render_values_set(ts_render_values *values, const ts_node *node, double value);
void ts_render_values_set_category(ts_render_values *values, const ts_node *node, const char *category);
/* false if the node has no value. */
bool ts_render_values_lookup(const ts_render_values *values, const ts_node *node, double *value);
/* A line of text about the node's value, for its tooltip ("12 runs ·
 * 1.2 ms"); copied.  NULL if none.  Borrowed. */
void ts_render_values_set_note(ts_render_values *values, const ts_node *node, const char *note);
const char *ts_render_values_note(const ts_render_values *values, const ts_node *node);
/* The node's category; NULL if none.  Borrowed. */
const char *ts_render_values_category(const ts_render_values *values, const ts_node *node);
/* The run copied input `input` of node to `device` (where node ran): in
 * the device colouring the edge that carries it is tagged "copy to
 * <device>" (edges are tagged from the copies a run recorded, never from
 * where their ends ran).  The device is a category too. */
void ts_render_values_add_copy(ts_render_values *values, const ts_node *node, int input,
                               const char *device);
int ts_render_values_n_copies(const ts_render_values *values);
/* Copy i: the node, its input copied (*input) and where to (*device,
 * borrowed); NULL out of range. */
const ts_node *ts_render_values_copy(const ts_render_values *values, int i, int *input,
                                     const char **device);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ts_render_values, ts_render_values_unref)

/* ---- the renderer -------------------------------------------------------------- */

typedef struct ts_render ts_render;

typedef struct ts_render_rect {
  double x, y, width, height;
} ts_render_rect;

/* What one ts_render_draw drew (culling and level of detail show here). */
typedef struct ts_render_stats {
  int boxes;       /* shapes, containers and dots */
  int paths;       /* edges */
  int labels;      /* text layouts shown, edge labels included */
  int copies;      /* device colouring: edges tagged as copies between devices */
  bool detailed;   /* labels and arrowheads were on */
} ts_render_stats;

/* Below this zoom, no labels, arrowheads or edge labels. */
#define TS_RENDER_DETAIL_ZOOM 0.45

/* Owned (ts_render_free).  Light palette, op-type colours, nothing selected. */
ts_render *ts_render_new(void);
void ts_render_free(ts_render *render);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ts_render, ts_render_free)

/* Draws layout (borrowed: keep it alive until replaced) of model (a
 * reference is taken).  NULL layout: nothing.  Clears the hover; keeps the
 * selection if it is still shown. */
void ts_render_set_layout(ts_render *render, ts_view_model *model, const ts_view_layout *layout);
const ts_view_layout *ts_render_get_layout(const ts_render *render);
void ts_render_set_dark(ts_render *render, bool dark);
bool ts_render_get_dark(const ts_render *render);
/* values: a reference is taken; NULL for none (compute time and function
 * colouring then show everything as "no data"). */
void ts_render_set_colouring(ts_render *render, ts_render_colouring mode, ts_render_values *values);
ts_render_colouring ts_render_get_colouring(const ts_render *render);
/* The values colouring uses (borrowed; NULL for none). */
ts_render_values *ts_render_get_values(const ts_render *render);
/* Compute time: the item's value, its ops' summed for a group; false if
 * none (or in another mode).  The unit is the values' (may be NULL). */
bool ts_render_item_value(const ts_render *render, int item, double *value, const char **unit);
/* The selected item (-1: none): its box, the edges into and out of it and
 * the boxes at their other ends are highlighted. */
void ts_render_set_selected(ts_render *render, int item);
int ts_render_get_selected(const ts_render *render);
void ts_render_set_hovered(ts_render *render, int item);
/* Whether the label of the layout's path i is drawn.  A label goes beside
 * its path, at the place nearest the path's middle where it covers no
 * shape, no group's title bar and no wider edge's label; one with no such
 * place is left out (the nodes' tooltips give every shape). */
bool ts_render_path_label_shown(const ts_render *render, int path);
/* The rectangle of that label's background in canvas coordinates; false
 * if it is not drawn. */
bool ts_render_path_label_rect(ts_render *render, int path, ts_render_rect *out);

/* Draws what intersects `visible` (canvas coordinates; NULL: everything)
 * onto cr, whose transformation maps canvas coordinates to the target;
 * zoom is its scale, for the level of detail.  Paints the background.
 * stats may be NULL. */
void ts_render_draw(ts_render *render, cairo_t *cr, const ts_render_rect *visible, double zoom,
                    ts_render_stats *stats);

/* The legend of the active colour mode, in target units (not zoomed): a
 * header (a disclosure triangle and the mode's name), then every op type
 * shown (by family), or the categories or heat scale, and the shapes.
 * "Shown" is the layout's shapes, groups open or closed as they are,
 * whether or not they are in the viewport (as TensorBoard lists the types
 * of the graph as drawn): expanding a group adds the types inside it, and
 * panning never reflows the legend.  Rows wrap into more columns to stay
 * within max_height (0: one column); collapsed, the header alone, which is
 * also the legend's top part. */
void ts_render_legend_size(ts_render *render, double max_height, bool collapsed, double *width,
                           double *height);
void ts_render_draw_legend(ts_render *render, cairo_t *cr, double x, double y, double max_height,
                           bool collapsed);

/* ---- export ---------------------------------------------------------------------- */

typedef enum ts_render_format {
  TS_RENDER_PNG,
  TS_RENDER_SVG,
  TS_RENDER_PDF,
  TS_RENDER_FORMAT_COUNT
} ts_render_format;

/* Blank space around the graph, and between it and the legend, in an export. */
#define TS_RENDER_EXPORT_MARGIN 16.0
#define TS_RENDER_EXPORT_LEGEND_HEIGHT 400.0

/* The format a file name's extension names (.png .svg .pdf, any case). */
bool ts_render_format_for_path(const char *path, ts_render_format *format);
/* Writes len bytes of data to path (through a temporary file beside it, as
 * g_file_set_contents does); the error names path, never the temporary
 * file: "cannot write 'g.svg': No such file or directory". */
bool ts_render_write_file(const char *path, const void *data, gsize len, GError **error);

/* Writes area (canvas coordinates; NULL: the whole graph and its edge
 * labels) with the legend right of it (its columns as tall as the area, or
 * TS_RENDER_EXPORT_LEGEND_HEIGHT if more) to path, in the format its extension
 * names.  Canvas point (x, y) lands at ((x - area.x + margin) * scale,
 * (y - area.y + margin) * scale).  scale: pixels per
 * canvas unit for PNG (reduced so that no side exceeds 16384 px); vectors
 * ignore it.  SVG files carry each label as a <text> element too (drawn
 * glyphs show; the text is there to search, select and check).  false with
 * a G_IO_ERROR (bad name, no layout, drawing failed) or G_FILE_ERROR. */
bool ts_render_export(ts_render *render, const char *path, const ts_render_rect *area, double scale,
                      GError **error);

/* ---- text -------------------------------------------------------------------------- */

/* Layout options whose text measurement and line height are this
 * renderer's font; safe on any thread (the layout worker calls it). */
ts_view_layout_options ts_render_layout_options(void);
/* The size of a label as drawn; a ts_view_measure_fn (user_data unused). */
void ts_render_measure(const char *text, double *width, double *height, void *user_data);

G_END_DECLS
