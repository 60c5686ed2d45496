/* ts-graph-view.c — TsGraphView: the object, its properties and signals,
 * and the graph it shows: display model, layouts requested off the main
 * loop and installed when they arrive, expansion, selection, export.
 * Drawing, input and search live in the ts-graph-view-*.c files. */
#include "ts-graph-view-private.h"

#include <glib/gi18n.h>
#include <stdlib.h>
#include <string.h>

#include "ts-viewer-resources.h"

G_DEFINE_FINAL_TYPE(TsGraphView, ts_graph_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_DARK,
  PROP_SHOW_LEGEND,
  PROP_SHOW_MINIMAP,
  PROP_LEGEND_COLLAPSED,
  PROP_LEGEND_CORNER,
  PROP_BUSY,
  PROP_SELECTED_ITEM,
  PROP_VIEWPORT,
  PROP_ANIMATING,
  PROP_DRAWN,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_NODE_SELECTED, SIGNAL_NODE_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

GtkWidget *ts_graph_view_new(void)
{
  return g_object_new(TS_TYPE_GRAPH_VIEW, NULL);
}

/* ---- layouts ------------------------------------------------------------------- */

/* One asynchronous request: the view may be gone or showing another graph
 * by the time it ends, so it holds a weak reference and its serial. */
typedef struct layout_request {
  GWeakRef view;
  ts_view_layouter *layouter; /* compared, never dereferenced here */
  guint serial;
} layout_request;

static void set_drawn(TsGraphView *self, gboolean drawn)
{
  if (!drawn)
    g_clear_handle_id(&self->drawn_idle, g_source_remove);
  if (self->drawn != drawn) {
    self->drawn = drawn;
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_DRAWN]);
  }
}

static gboolean drawn_idle(gpointer data)
{
  TsGraphView *self = data;
  self->drawn_idle = 0;
  if (self->layout && !self->busy)
    set_drawn(self, TRUE);
  return G_SOURCE_REMOVE;
}

/* Notified from the main loop, not from inside the snapshot. */
void _ts_graph_view_note_drawn(TsGraphView *self)
{
  if (!self->drawn && !self->drawn_idle && self->layout && !self->busy)
    self->drawn_idle = g_idle_add_full(G_PRIORITY_HIGH_IDLE, drawn_idle, self, NULL);
}

void _ts_graph_view_notify_animating(TsGraphView *self)
{
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_ANIMATING]);
}

/* The spinner shows until the first layout; a failure shows instead. */
static void set_busy(TsGraphView *self, gboolean busy, const char *failure)
{
  gtk_label_set_text(self->busy_label, failure ? failure : _("Laying out…"));
  gtk_widget_set_visible(GTK_WIDGET(self->spinner), failure == NULL);
  gtk_spinner_set_spinning(self->spinner, busy && !failure);
  gtk_widget_set_visible(self->busy_box, failure != NULL || (busy && !self->layout));
  if (busy || failure)
    set_drawn(self, FALSE);
  if (self->busy != busy) {
    self->busy = busy;
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
  }
}

static void install_layout(TsGraphView *self, ts_view_layout *layout)
{
  ts_view_layout *old = self->layout;
  self->layout = layout;
  ts_render_set_layout(self->render, self->model, layout);
  ts_render_set_hovered(self->render, -1);
  ts_view_layout_free(old);
  _ts_graph_view_invalidate_minimap(self);
  set_busy(self, FALSE, NULL);
  _ts_graph_view_update_zoom_limits(self);
  _ts_graph_view_place_layout(self);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void on_layout_ready(GObject *source, GAsyncResult *result, gpointer data)
{
  layout_request *request = data;
  GError *error = NULL;
  ts_view_layout *layout = ts_view_layouter_run_finish(request->layouter, result, &error);
  TsGraphView *self = g_weak_ref_get(&request->view);
  bool current = self && self->layouter == request->layouter && self->request_serial == request->serial;
  g_weak_ref_clear(&request->view);
  g_free(request);
  if (current && layout) {
    install_layout(self, g_steal_pointer(&layout));
  } else if (current && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
    g_autofree char *text = g_strdup_printf(_("The graph could not be laid out: %s"), error->message);
    set_busy(self, FALSE, text);
  }
  ts_view_layout_free(layout);
  g_clear_error(&error);
  g_clear_object(&self);
}

/* Lays out the model's current state; the old layout stays on screen. */
static void request_layout(TsGraphView *self)
{
  layout_request *request = g_new0(layout_request, 1);
  g_weak_ref_init(&request->view, self);
  request->layouter = self->layouter;
  request->serial = ++self->request_serial;
  set_busy(self, TRUE, NULL);
  ts_view_layouter_run_async(self->layouter, NULL, self->cancellable, on_layout_ready, request);
}

/* Keeps item where it is on screen through the next layout. */
static void anchor(TsGraphView *self, int item)
{
  self->anchor_item = -1;
  int b = self->layout ? ts_view_layout_box_for_item(self->layout, item) : -1;
  if (b < 0)
    return;
  const ts_view_box *box = ts_view_layout_box(self->layout, b);
  self->anchor_item = item;
  ts_viewport_canvas_to_widget(self->viewport, box->x + box->width / 2, box->y + box->height / 2,
                               &self->anchor_wx, &self->anchor_wy);
}

static void clear_graph(TsGraphView *self)
{
  g_cancellable_cancel(self->cancellable);
  g_clear_object(&self->cancellable);
  _ts_graph_view_stop_flight(self);
  ts_render_set_layout(self->render, NULL, NULL);
  g_clear_pointer(&self->layout, ts_view_layout_free);
  g_clear_pointer(&self->layouter, ts_view_layouter_free);
  g_clear_pointer(&self->model, ts_view_model_unref);
  g_array_set_size(self->matches, 0);
  self->match_index = -1;
  self->walk_from = NULL;
  self->graph = NULL;
  self->anchor_item = self->reveal_pending = -1;
  self->centre_pending = FALSE;
  self->hovered = -1;
  set_drawn(self, FALSE);
  _ts_graph_view_invalidate_minimap(self);
}

void ts_graph_view_set_graph(TsGraphView *self, const ts_graph *graph)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  if (graph == self->graph)
    return;
  ts_graph_view_select_item(self, -1);
  clear_graph(self);
  _ts_graph_view_close_search(self); /* its query was for the other graph */
  self->graph = graph;
  self->cancellable = g_cancellable_new();
  if (graph) {
    self->model = ts_view_model_new(graph, NULL);
    ts_view_layout_options options = ts_render_layout_options();
    self->layouter = ts_view_layouter_new(self->model, &options);
    self->fit_pending = TRUE;
    request_layout(self);
  } else {
    set_busy(self, FALSE, NULL);
  }
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

const ts_graph *ts_graph_view_get_graph(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), NULL);
  return self->graph;
}

ts_view_model *ts_graph_view_get_model(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), NULL);
  return self->model;
}

const ts_view_layout *ts_graph_view_get_layout(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), NULL);
  return self->layout;
}

TsViewport *ts_graph_view_get_viewport(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), NULL);
  return self->viewport;
}

gboolean ts_graph_view_get_busy(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), FALSE);
  return self->busy;
}

gboolean ts_graph_view_get_animating(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), FALSE);
  return self->fly_tick != 0;
}

gboolean ts_graph_view_get_drawn(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), FALSE);
  return self->drawn;
}

/* ---- expansion -------------------------------------------------------------------- */

static gboolean valid_item(TsGraphView *self, int item)
{
  return self->model && item >= 0 && item < ts_view_model_n_items(self->model);
}

gboolean ts_graph_view_set_expanded(TsGraphView *self, int item, gboolean expanded)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), FALSE);
  if (!valid_item(self, item) || !ts_view_item_is_expandable(self->model, item))
    return FALSE;
  anchor(self, item);
  gboolean changed = FALSE;
  if (expanded && ts_view_model_reveal(self->model, item) > 0)
    changed = TRUE;
  if (ts_view_model_set_expanded(self->model, item, expanded))
    changed = TRUE;
  if (changed)
    request_layout(self);
  return changed;
}

static int item_named(ts_view_model *model, const char *name)
{
  for (int i = 0; model && i < ts_view_model_n_items(model); i++)
    if (strcmp(ts_view_item_name(model, i), name) == 0)
      return i;
  return -1;
}

gboolean ts_graph_view_set_expanded_by_name(TsGraphView *self, const char *name, gboolean expanded)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), FALSE);
  g_return_val_if_fail(name != NULL, FALSE);
  return ts_graph_view_set_expanded(self, item_named(self->model, name), expanded);
}

char **ts_graph_view_dup_expanded(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), NULL);
  g_autoptr(GStrvBuilder) names = g_strv_builder_new();
  for (int i = 0; self->model && i < ts_view_model_n_items(self->model); i++)
    if (ts_view_item_is_expandable(self->model, i) && ts_view_model_is_expanded(self->model, i))
      g_strv_builder_add(names, ts_view_item_name(self->model, i));
  return g_strv_builder_end(names);
}

void ts_graph_view_get_centre(TsGraphView *self, double *zoom, double *cx, double *cy)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  *zoom = ts_viewport_get_zoom(self->viewport);
  ts_viewport_widget_to_canvas(self->viewport, gtk_widget_get_width(GTK_WIDGET(self)) / 2.0,
                               gtk_widget_get_height(GTK_WIDGET(self)) / 2.0, cx, cy);
}

void ts_graph_view_restore(TsGraphView *self, const char *const *expanded, double zoom, double cx,
                           double cy)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  if (!self->model)
    return;
  for (int i = 0; i < ts_view_model_n_items(self->model); i++)
    if (ts_view_item_is_expandable(self->model, i))
      ts_view_model_set_expanded(self->model, i,
                                 expanded && g_strv_contains(expanded, ts_view_item_name(self->model, i)));
  self->anchor_item = self->reveal_pending = -1;
  self->fit_pending = FALSE;
  self->centre_pending = TRUE;
  self->centre[0] = zoom;
  self->centre[1] = cx;
  self->centre[2] = cy;
  request_layout(self);
}

void ts_graph_view_expand_all(TsGraphView *self)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  if (!self->model)
    return;
  ts_view_model_expand_all(self->model);
  self->fit_pending = TRUE;
  request_layout(self);
}

void ts_graph_view_collapse_all(TsGraphView *self)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  if (!self->model)
    return;
  ts_view_model_collapse_all(self->model);
  self->fit_pending = TRUE;
  request_layout(self);
}

void _ts_graph_view_activate(TsGraphView *self, int item)
{
  if (!valid_item(self, item))
    return;
  if (ts_view_item_is_expandable(self->model, item)) {
    anchor(self, item);
    ts_view_model_toggle(self->model, item);
    request_layout(self);
  }
  g_signal_emit(self, signals[SIGNAL_NODE_ACTIVATED], 0, item, (gpointer)ts_view_item_node(self->model, item));
}

/* ---- selection and reveal ------------------------------------------------------------ */

void ts_graph_view_select_item(TsGraphView *self, int item)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  if (!valid_item(self, item))
    item = -1;
  if (item == self->selected)
    return;
  self->selected = item;
  ts_render_set_selected(self->render, item);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SELECTED_ITEM]);
  g_signal_emit(self, signals[SIGNAL_NODE_SELECTED], 0, item,
                item >= 0 ? (gpointer)ts_view_item_node(self->model, item) : NULL);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

int ts_graph_view_get_selected_item(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), -1);
  return self->selected;
}

void ts_graph_view_reveal_item(TsGraphView *self, int item)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  if (!valid_item(self, item))
    return;
  ts_graph_view_select_item(self, item);
  self->anchor_item = -1;
  if (ts_view_model_reveal(self->model, item) > 0) {
    self->reveal_pending = item;
    request_layout(self);
  } else if (self->layout && !self->busy) {
    _ts_graph_view_fly_to(self, item);
  } else {
    self->reveal_pending = item;
  }
}

gboolean ts_graph_view_reveal(TsGraphView *self, const ts_node *node)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), FALSE);
  g_return_val_if_fail(node != NULL, FALSE);
  if (!self->model)
    return FALSE;
  int item = ts_view_model_item_for_node(self->model, ts_node_graph(node), ts_node_id(node));
  if (item < 0)
    return FALSE;
  ts_graph_view_reveal_item(self, item);
  return TRUE;
}

int ts_graph_view_item_at(TsGraphView *self, double x, double y)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), -1);
  return _ts_graph_view_item_at(self, x, y);
}

int _ts_graph_view_item_at(TsGraphView *self, double wx, double wy)
{
  if (!self->layout)
    return -1;
  double cx, cy;
  ts_viewport_widget_to_canvas(self->viewport, wx, wy, &cx, &cy);
  int b = ts_view_layout_box_at(self->layout, cx, cy);
  return b < 0 ? -1 : ts_view_layout_box(self->layout, b)->item;
}

void _ts_graph_view_set_hovered(TsGraphView *self, int item)
{
  if (item == self->hovered)
    return;
  self->hovered = item;
  ts_render_set_hovered(self->render, item);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

/* ---- appearance ----------------------------------------------------------------------- */

void _ts_graph_view_invalidate_minimap(TsGraphView *self)
{
  g_clear_pointer(&self->minimap, cairo_surface_destroy);
}

void ts_graph_view_set_colouring(TsGraphView *self, ts_render_colouring mode, ts_render_values *values)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  g_return_if_fail((unsigned)mode < TS_RENDER_COLOUR_COUNT);
  ts_render_set_colouring(self->render, mode, values);
  _ts_graph_view_invalidate_minimap(self);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

ts_render_colouring ts_graph_view_get_colouring(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), TS_RENDER_COLOUR_OP_TYPE);
  return ts_render_get_colouring(self->render);
}

static void apply_dark(TsGraphView *self, gboolean dark)
{
  if (dark == self->dark)
    return;
  self->dark = dark;
  ts_render_set_dark(self->render, dark);
  _ts_graph_view_invalidate_minimap(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_DARK]);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

void ts_graph_view_set_dark(TsGraphView *self, gboolean dark)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  self->dark_set = TRUE;
  apply_dark(self, !!dark);
}

gboolean ts_graph_view_get_dark(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), FALSE);
  return self->dark;
}

/* Until "dark" is set, the theme decides: light text means a dark theme,
 * whether GtkSettings or libadwaita's style manager chose it. */
static void ts_graph_view_css_changed(GtkWidget *widget, GtkCssStyleChange *change)
{
  TsGraphView *self = TS_GRAPH_VIEW(widget);
  GTK_WIDGET_CLASS(ts_graph_view_parent_class)->css_changed(widget, change);
  if (self->dark_set)
    return;
  GdkRGBA fg;
  gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
  apply_dark(self, 0.299 * fg.red + 0.587 * fg.green + 0.114 * fg.blue > 0.5);
}

void ts_graph_view_set_show_legend(TsGraphView *self, gboolean show)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  if (!!show == self->show_legend)
    return;
  self->show_legend = !!show;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SHOW_LEGEND]);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

gboolean ts_graph_view_get_show_legend(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), FALSE);
  return self->show_legend;
}

void ts_graph_view_set_show_minimap(TsGraphView *self, gboolean show)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  if (!!show == self->show_minimap)
    return;
  self->show_minimap = !!show;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SHOW_MINIMAP]);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

gboolean ts_graph_view_get_show_minimap(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), FALSE);
  return self->show_minimap;
}

void _ts_graph_view_set_legend_collapsed(TsGraphView *self, gboolean collapsed, gboolean chosen)
{
  self->legend_collapse_chosen = self->legend_collapse_chosen || chosen;
  if (!!collapsed == self->legend_collapsed)
    return;
  self->legend_collapsed = !!collapsed;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_LEGEND_COLLAPSED]);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

void ts_graph_view_set_legend_collapsed(TsGraphView *self, gboolean collapsed)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  _ts_graph_view_set_legend_collapsed(self, collapsed, TRUE);
}

gboolean ts_graph_view_get_legend_collapsed(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), FALSE);
  return self->legend_collapsed;
}

void ts_graph_view_set_legend_corner(TsGraphView *self, TsLegendCorner corner)
{
  g_return_if_fail(TS_IS_GRAPH_VIEW(self));
  g_return_if_fail(corner >= TS_LEGEND_CORNER_AUTO && corner <= TS_LEGEND_CORNER_BOTTOM_RIGHT);
  if (corner != TS_LEGEND_CORNER_AUTO)
    _ts_graph_view_move_legend(self, corner);
  if (corner == self->legend_corner)
    return;
  self->legend_corner = corner;
  _ts_graph_view_place_legend(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_LEGEND_CORNER]);
}

TsLegendCorner ts_graph_view_get_legend_corner(TsGraphView *self)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), TS_LEGEND_CORNER_AUTO);
  return self->legend_corner;
}

/* ---- export ---------------------------------------------------------------------------- */

gboolean ts_graph_view_export(TsGraphView *self, const char *path, gboolean whole, GError **error)
{
  g_return_val_if_fail(TS_IS_GRAPH_VIEW(self), FALSE);
  g_return_val_if_fail(path != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  if (!self->graph) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED, "no graph to export to '%s'", path);
    return FALSE;
  }
  if (g_str_has_suffix(path, ".dot") || g_str_has_suffix(path, ".gv")) {
    char *dot = ts_graph_to_dot(self->graph);
    gboolean ok = ts_render_write_file(path, dot, dot ? strlen(dot) : 0, error);
    free(dot);
    return ok;
  }
  double w = gtk_widget_get_width(GTK_WIDGET(self)), h = gtk_widget_get_height(GTK_WIDGET(self));
  double zoom = ts_viewport_get_zoom(self->viewport);
  ts_render_rect view = { ts_viewport_get_x(self->viewport), ts_viewport_get_y(self->viewport), w / zoom,
                          h / zoom };
  /* what the screen shows, without the pointer's hover */
  ts_render_set_hovered(self->render, -1);
  gboolean ok = ts_render_export(self->render, path, whole || w <= 0 ? NULL : &view, whole ? 1 : zoom, error);
  ts_render_set_hovered(self->render, self->hovered);
  return ok;
}

/* ---- GObject and GtkWidget ------------------------------------------------------------------ */

/* The canvas can be as narrow as its container wants: the overlays (the
 * search bar is the widest) keep their own minimum and are clipped, so two
 * views fit side by side. */
static void ts_graph_view_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                                  int *natural, int *minimum_baseline, int *natural_baseline)
{
  *minimum = 0;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 480 : 360;
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child)) {
    int min, nat;
    gtk_widget_measure(child, orientation, -1, &min, &nat, NULL, NULL);
    if (orientation == GTK_ORIENTATION_VERTICAL)
      *minimum = MAX(*minimum, min);
    *natural = MAX(*natural, nat);
  }
}

/* The overlays align themselves (halign, valign) in the whole area, never
 * below their own minimum width. */
static void ts_graph_view_size_allocate(GtkWidget *widget, int width, int height, int baseline)
{
  TsGraphView *self = TS_GRAPH_VIEW(widget);
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child)) {
    int min_width;
    gtk_widget_measure(child, GTK_ORIENTATION_HORIZONTAL, -1, &min_width, NULL, NULL, NULL);
    gtk_widget_allocate(child, MAX(width, min_width), height, -1, NULL);
  }
  _ts_graph_view_update_zoom_limits(self);
  if ((self->fit_pending || self->centre_pending) && self->layout)
    _ts_graph_view_place_layout(self);
  else
    _ts_graph_view_refit_on_resize(self);
}

static void on_viewport_notify(TsGraphView *self)
{
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void ts_graph_view_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  TsGraphView *self = TS_GRAPH_VIEW(object);
  switch (id) {
  case PROP_DARK:
    g_value_set_boolean(value, self->dark);
    break;
  case PROP_SHOW_LEGEND:
    g_value_set_boolean(value, self->show_legend);
    break;
  case PROP_SHOW_MINIMAP:
    g_value_set_boolean(value, self->show_minimap);
    break;
  case PROP_LEGEND_COLLAPSED:
    g_value_set_boolean(value, self->legend_collapsed);
    break;
  case PROP_LEGEND_CORNER:
    g_value_set_enum(value, self->legend_corner);
    break;
  case PROP_BUSY:
    g_value_set_boolean(value, self->busy);
    break;
  case PROP_SELECTED_ITEM:
    g_value_set_int(value, self->selected);
    break;
  case PROP_VIEWPORT:
    g_value_set_object(value, self->viewport);
    break;
  case PROP_ANIMATING:
    g_value_set_boolean(value, self->fly_tick != 0);
    break;
  case PROP_DRAWN:
    g_value_set_boolean(value, self->drawn);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void ts_graph_view_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
  TsGraphView *self = TS_GRAPH_VIEW(object);
  switch (id) {
  case PROP_DARK:
    ts_graph_view_set_dark(self, g_value_get_boolean(value));
    break;
  case PROP_SHOW_LEGEND:
    ts_graph_view_set_show_legend(self, g_value_get_boolean(value));
    break;
  case PROP_SHOW_MINIMAP:
    ts_graph_view_set_show_minimap(self, g_value_get_boolean(value));
    break;
  case PROP_LEGEND_COLLAPSED:
    ts_graph_view_set_legend_collapsed(self, g_value_get_boolean(value));
    break;
  case PROP_LEGEND_CORNER:
    ts_graph_view_set_legend_corner(self, g_value_get_enum(value));
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void ts_graph_view_dispose(GObject *object)
{
  TsGraphView *self = TS_GRAPH_VIEW(object);
  clear_graph(self);
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_GRAPH_VIEW);
  if (self->viewport)
    g_signal_handlers_disconnect_by_data(self->viewport, self);
  g_clear_object(&self->viewport);
  G_OBJECT_CLASS(ts_graph_view_parent_class)->dispose(object);
}

static void ts_graph_view_finalize(GObject *object)
{
  TsGraphView *self = TS_GRAPH_VIEW(object);
  ts_render_free(self->render);
  g_array_free(self->matches, TRUE);
  G_OBJECT_CLASS(ts_graph_view_parent_class)->finalize(object);
}

static void ts_graph_view_class_init(TsGraphViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->get_property = ts_graph_view_get_property;
  object_class->set_property = ts_graph_view_set_property;
  object_class->dispose = ts_graph_view_dispose;
  object_class->finalize = ts_graph_view_finalize;
  widget_class->measure = ts_graph_view_measure;
  widget_class->size_allocate = ts_graph_view_size_allocate;
  widget_class->snapshot = _ts_graph_view_snapshot;
  widget_class->css_changed = ts_graph_view_css_changed;

  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;
  properties[PROP_DARK] = g_param_spec_boolean("dark", NULL, NULL, FALSE, rw);
  properties[PROP_SHOW_LEGEND] = g_param_spec_boolean("show-legend", NULL, NULL, TRUE, rw);
  properties[PROP_SHOW_MINIMAP] = g_param_spec_boolean("show-minimap", NULL, NULL, TRUE, rw);
  properties[PROP_LEGEND_COLLAPSED] = g_param_spec_boolean("legend-collapsed", NULL, NULL, FALSE, rw);
  properties[PROP_LEGEND_CORNER] = g_param_spec_enum("legend-corner", NULL, NULL, TS_TYPE_LEGEND_CORNER,
                                                     TS_LEGEND_CORNER_AUTO, rw);
  properties[PROP_BUSY] = g_param_spec_boolean("busy", NULL, NULL, FALSE, ro);
  properties[PROP_SELECTED_ITEM] = g_param_spec_int("selected-item", NULL, NULL, -1, G_MAXINT, -1, ro);
  properties[PROP_VIEWPORT] = g_param_spec_object("viewport", NULL, NULL, TS_TYPE_VIEWPORT, ro);
  properties[PROP_ANIMATING] = g_param_spec_boolean("animating", NULL, NULL, FALSE, ro | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_DRAWN] = g_param_spec_boolean("drawn", NULL, NULL, FALSE, ro | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  signals[SIGNAL_NODE_SELECTED] = g_signal_new("node-selected", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                               NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_POINTER);
  signals[SIGNAL_NODE_ACTIVATED] = g_signal_new("node-activated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                                0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_POINTER);

  ts_viewer_register_resource();
  gtk_widget_class_set_template_from_resource(widget_class, "/io/github/tracescope/viewer/ts-graph-view.ui");
  gtk_widget_class_bind_template_child(widget_class, TsGraphView, busy_box);
  gtk_widget_class_bind_template_child(widget_class, TsGraphView, spinner);
  gtk_widget_class_bind_template_child(widget_class, TsGraphView, busy_label);
  gtk_widget_class_bind_template_child(widget_class, TsGraphView, search_revealer);
  gtk_widget_class_bind_template_child(widget_class, TsGraphView, search_entry);
  gtk_widget_class_bind_template_child(widget_class, TsGraphView, search_kind);
  gtk_widget_class_bind_template_child(widget_class, TsGraphView, search_status);
  _ts_graph_view_class_init_input(widget_class);
  _ts_graph_view_class_init_search(widget_class);
  gtk_widget_class_set_css_name(widget_class, "tsgraphview");
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void ts_graph_view_init(TsGraphView *self)
{
  self->selected = self->hovered = -1;
  self->anchor_item = self->reveal_pending = -1;
  self->match_index = -1;
  self->show_legend = self->show_minimap = TRUE;
  self->legend_corner = TS_LEGEND_CORNER_AUTO;
  self->legend_placed = TS_LEGEND_CORNER_TOP_LEFT;
  self->matches = g_array_new(FALSE, FALSE, sizeof(int));
  self->render = ts_render_new();
  self->viewport = ts_viewport_new();
  self->cancellable = g_cancellable_new();
  g_signal_connect_swapped(self->viewport, "notify", G_CALLBACK(on_viewport_notify), self);
  gtk_widget_init_template(GTK_WIDGET(self));
  _ts_graph_view_init_search(self);
}
