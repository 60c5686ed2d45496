/* ts-screenshot.c — widget paintable → render node → texture → PNG. */
#include "ts-screenshot.h"

gboolean ts_screenshot_save(GtkWidget *widget, const char *path, GError **error)
{
  g_return_val_if_fail(GTK_IS_WIDGET(widget) && path != NULL, FALSE);
  int width = gtk_widget_get_width(widget), height = gtk_widget_get_height(widget);
  GtkNative *native = gtk_widget_get_native(widget);
  GskRenderer *renderer = native ? gtk_native_get_renderer(native) : NULL;
  if (!renderer || width <= 0 || height <= 0) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "the window is not on screen yet");
    return FALSE;
  }
  /* The widget's paintable at its own size (a window's takes in the frame
   * around it), then the widget's rectangle of it pixel for pixel: squeezed
   * into the widget's size, every glyph was resampled. */
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new(widget);
  int paint_width = gdk_paintable_get_intrinsic_width(paintable);
  int paint_height = gdk_paintable_get_intrinsic_height(paintable);
  double x = 0, y = 0;
  if (paint_width < width || paint_height < height) {
    paint_width = width;
    paint_height = height;
  } else if (GTK_WIDGET(native) == widget) {
    gtk_native_get_surface_transform(native, &x, &y); /* where the frame ends */
  }
  GtkSnapshot *snapshot = gtk_snapshot_new();
  gdk_paintable_snapshot(paintable, GDK_SNAPSHOT(snapshot), paint_width, paint_height);
  g_autoptr(GskRenderNode) node = gtk_snapshot_free_to_node(snapshot);
  if (!node) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "the window drew nothing");
    return FALSE;
  }
  g_autoptr(GdkTexture) texture =
    gsk_renderer_render_texture(renderer, node, &GRAPHENE_RECT_INIT((float)x, (float)y, width, height));
  if (!gdk_texture_save_to_png(texture, path)) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot write '%s'", path);
    return FALSE;
  }
  return TRUE;
}
