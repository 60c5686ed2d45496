/* ts-graph-render.c — the renderer's state (layout, palette, colouring,
 * selection) and a frame: what the grid says is visible, drawn as
 * containers, edges, edge labels and shapes in that order, with the
 * selection and its neighbours on top. */
#include "ts-graph-render-private.h"

#include <math.h>
#include <string.h>

ts_render *ts_render_new(void)
{
  ts_render *r = g_new0(ts_render, 1);
  r->opts = ts_render_layout_options();
  r->text = _ts_text_new();
  r->colours = _ts_colours_new();
  r->selected = r->hovered = -1;
  r->containers = g_array_new(FALSE, FALSE, sizeof(int));
  r->hit_boxes = g_array_new(FALSE, FALSE, sizeof(int));
  r->hit_paths = g_array_new(FALSE, FALSE, sizeof(int));
  return r;
}

void ts_render_free(ts_render *render)
{
  if (!render)
    return;
  _ts_render_index_drop(render);
  g_array_free(render->containers, TRUE);
  g_array_free(render->hit_boxes, TRUE);
  g_array_free(render->hit_paths, TRUE);
  _ts_colours_free(render->colours);
  _ts_text_free(render->text);
  if (render->model)
    ts_view_model_unref(render->model);
  g_free(render);
}

/* ---- state ------------------------------------------------------------------------------ */

static void compute_marks(ts_render *r)
{
  if (!r->layout)
    return;
  memset(r->box_mark, 0, (gsize)MAX(r->n_boxes, 1));
  memset(r->path_mark, 0, (gsize)MAX(r->n_paths, 1));
  if (r->selected < 0 || r->selected >= ts_view_model_n_items(r->model))
    return;
  int rep = ts_view_model_representative(r->model, ts_view_layout_state(r->layout), r->selected);
  for (int i = 0; i < r->n_boxes; i++) {
    const ts_view_box *b = ts_view_layout_box(r->layout, i);
    if (b->item != rep)
      continue;
    r->box_mark[i] = MARK_SELECTED;
    if (b->owner >= 0 && r->box_mark[b->owner] == MARK_NONE)
      r->box_mark[b->owner] = MARK_NEIGHBOUR; /* a dot's consumer */
  }
  for (int p = 0; p < r->n_paths; p++) {
    const ts_view_path *path = ts_view_layout_path(r->layout, p);
    /* a path into an open If/While box is drawn to an input inside it:
     * it belongs to the box as much as to that input */
    bool from = r->box_mark[path->src_box] == MARK_SELECTED ||
                r->box_mark[ts_view_layout_box_for_item(r->layout, path->edge.src)] == MARK_SELECTED;
    bool to = r->box_mark[path->dst_box] == MARK_SELECTED ||
              r->box_mark[ts_view_layout_box_for_item(r->layout, path->edge.dst)] == MARK_SELECTED;
    if (!from && !to)
      continue;
    r->path_mark[p] = 1;
    int other = from ? path->dst_box : path->src_box;
    if (r->box_mark[other] == MARK_NONE)
      r->box_mark[other] = MARK_NEIGHBOUR;
  }
  /* the dots beside the selection are its inputs too */
  for (int i = 0; i < r->n_boxes; i++) {
    const ts_view_box *b = ts_view_layout_box(r->layout, i);
    if (b->owner >= 0 && r->box_mark[b->owner] == MARK_SELECTED && r->box_mark[i] == MARK_NONE)
      r->box_mark[i] = MARK_NEIGHBOUR;
  }
}

void ts_render_set_layout(ts_render *render, ts_view_model *model, const ts_view_layout *layout)
{
  g_return_if_fail(render != NULL);
  g_return_if_fail(layout == NULL || model != NULL);
  if (model)
    ts_view_model_ref(model);
  if (render->model)
    ts_view_model_unref(render->model);
  render->model = model;
  render->layout = layout;
  render->hovered = -1;
  _ts_render_index_drop(render);
  if (!layout) {
    render->selected = -1;
    return;
  }
  _ts_render_index_build(render);
  compute_marks(render);
  _ts_colours_update(render->colours, model, layout);
}

const ts_view_layout *ts_render_get_layout(const ts_render *render)
{
  g_return_val_if_fail(render != NULL, NULL);
  return render->layout;
}

void ts_render_set_dark(ts_render *render, bool dark)
{
  g_return_if_fail(render != NULL);
  render->dark = dark;
}

bool ts_render_get_dark(const ts_render *render)
{
  g_return_val_if_fail(render != NULL, false);
  return render->dark;
}

void ts_render_set_colouring(ts_render *render, ts_render_colouring mode, ts_render_values *values)
{
  g_return_if_fail(render != NULL && (unsigned)mode < TS_RENDER_COLOUR_COUNT);
  _ts_colours_set_mode(render->colours, mode, values);
  if (render->layout)
    _ts_colours_update(render->colours, render->model, render->layout);
}

ts_render_colouring ts_render_get_colouring(const ts_render *render)
{
  g_return_val_if_fail(render != NULL, TS_RENDER_COLOUR_OP_TYPE);
  return _ts_colours_mode(render->colours);
}

ts_render_values *ts_render_get_values(const ts_render *render)
{
  g_return_val_if_fail(render != NULL, NULL);
  return render->colours->values;
}

bool ts_render_item_value(const ts_render *render, int item, double *value, const char **unit)
{
  g_return_val_if_fail(render != NULL, false);
  const _ts_colours *c = render->colours;
  if (c->mode != TS_RENDER_COLOUR_COMPUTE_TIME || !c->sum || item < 0 || item >= c->n_items ||
      isnan(c->sum[item]))
    return false;
  *value = c->sum[item];
  if (unit)
    *unit = _ts_render_values_unit(c->values);
  return true;
}

void ts_render_set_selected(ts_render *render, int item)
{
  g_return_if_fail(render != NULL);
  render->selected = item < 0 ? -1 : item;
  compute_marks(render);
}

int ts_render_get_selected(const ts_render *render)
{
  g_return_val_if_fail(render != NULL, -1);
  return render->selected;
}

void ts_render_set_hovered(ts_render *render, int item)
{
  g_return_if_fail(render != NULL);
  render->hovered = item < 0 ? -1 : item;
}

void _ts_render_set_text_sink(ts_render *render, _ts_text_sink sink, void *data)
{
  _ts_text_set_sink(render->text, sink, data);
}

/* ---- a frame ----------------------------------------------------------------------------------- */

void ts_render_draw(ts_render *render, cairo_t *cr, const ts_render_rect *visible, double zoom,
                    ts_render_stats *stats)
{
  g_return_if_fail(render != NULL && cr != NULL);
  ts_render_stats local = { 0 };
  ts_render *r = render;
  const _ts_palette *pal = _ts_palette_get(r->dark);
  zoom = zoom > 0 ? zoom : 1;
  local.detailed = zoom >= TS_RENDER_DETAIL_ZOOM;
  bool detailed = local.detailed;
  cairo_save(cr);
  _ts_set_source(cr, pal->background);
  cairo_paint(cr);
  if (!r->layout) {
    cairo_restore(cr);
    if (stats)
      *stats = local;
    return;
  }
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  _ts_render_query(r, visible);

  GArray *open = g_array_new(FALSE, FALSE, sizeof(int)); /* the containers in sight */
  for (guint k = 0; k < r->containers->len; k++) {
    int i = g_array_index(r->containers, int, k);
    const ts_view_box *b = ts_view_layout_box(r->layout, i);
    ts_render_rect rc;
    _ts_box_bounds(b, &rc);
    if (visible && !_ts_rects_intersect(&rc, visible))
      continue;
    _ts_draw_container(r, cr, b, zoom < TINY_ZOOM, &local);
    g_array_append_val(open, i);
  }
  /* edges: plain ones, then the highlighted ones over them */
  if (!detailed)
    local.paths += _ts_draw_edges_coarse(r, cr, pal, zoom);
  for (int pass = detailed ? 0 : 1; pass < 2; pass++)
    for (guint k = 0; k < r->hit_paths->len; k++) {
      int p = g_array_index(r->hit_paths, int, k);
      if ((r->path_mark[p] != 0) != (pass == 1))
        continue;
      _ts_draw_edge(cr, pal, ts_view_layout_path(r->layout, p), pass == 1, detailed, zoom);
      local.paths++;
    }
  if (zoom >= EDGE_LABEL_ZOOM)
    for (guint k = 0; k < r->hit_paths->len; k++) {
      int p = g_array_index(r->hit_paths, int, k);
      if (!r->label_shown[p])
        continue;
      _ts_draw_edge_label(r, cr, pal, p, r->path_mark[p] != 0);
      local.labels++;
    }
  /* device boundaries (the device colouring): where tensors are copied */
  for (guint k = 0; detailed && k < r->hit_paths->len; k++) {
    int p = g_array_index(r->hit_paths, int, k);
    int to = _ts_colours_copy_to(r->colours, &ts_view_layout_path(r->layout, p)->edge);
    if (to < 0)
      continue;
    _ts_draw_copy_tag(r, cr, pal, p, to, r->colours->cat_name[to]);
    local.copies++;
  }
  for (guint k = 0; detailed && k < open->len; k++)
    _ts_draw_container_header(r, cr, ts_view_layout_box(r->layout, g_array_index(open, int, k)), &local);
  g_array_free(open, TRUE);
  if (zoom < TINY_ZOOM)
    _ts_draw_shapes_tiny(r, cr, pal, &local);
  else
    for (guint k = 0; k < r->hit_boxes->len; k++)
      _ts_draw_shape(r, cr, ts_view_layout_box(r->layout, g_array_index(r->hit_boxes, int, k)), detailed, &local);

  /* outlines on top: neighbours, the selection, the hover */
  double unit = 1 / zoom;
  for (int i = 0; i < r->n_boxes; i++) {
    const ts_view_box *b = ts_view_layout_box(r->layout, i);
    if (r->box_mark[i] == MARK_NEIGHBOUR)
      _ts_draw_outline(cr, b, pal->accent_soft, MAX(2, 1.5 * unit));
    else if (r->box_mark[i] == MARK_SELECTED)
      _ts_draw_outline(cr, b, pal->accent, MAX(3, 2.5 * unit));
    else if (r->hovered >= 0 && b->item == r->hovered)
      _ts_draw_outline(cr, b, pal->hover, MAX(2, 1.5 * unit));
  }
  cairo_restore(cr);
  if (stats)
    *stats = local;
}

void ts_render_legend_size(ts_render *render, double max_height, bool collapsed, double *width,
                           double *height)
{
  g_return_if_fail(render != NULL && width != NULL && height != NULL);
  _ts_legend_run(render->colours, render->text, _ts_palette_get(render->dark), NULL, 0, 0, max_height,
                 collapsed, width, height);
}

void ts_render_draw_legend(ts_render *render, cairo_t *cr, double x, double y, double max_height,
                           bool collapsed)
{
  g_return_if_fail(render != NULL && cr != NULL);
  double width, height;
  _ts_legend_run(render->colours, render->text, _ts_palette_get(render->dark), cr, x, y, max_height,
                 collapsed, &width, &height);
}
