/* ts-graph-render-export.c — the graph (or a rectangle of it) with its
 * legend as a PNG, SVG or PDF file, drawn by the same code as the screen.
 * SVG gets each label as <text> as well, since Cairo draws glyphs. */
#include "ts-graph-render-private.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <math.h>
#include <string.h>

#define MARGIN TS_RENDER_EXPORT_MARGIN
#define PNG_MAX_SIDE 16384.0

static const char *const EXTENSIONS[TS_RENDER_FORMAT_COUNT] = {
  [TS_RENDER_PNG] = ".png",
  [TS_RENDER_SVG] = ".svg",
  [TS_RENDER_PDF] = ".pdf",
};

bool ts_render_format_for_path(const char *path, ts_render_format *format)
{
  g_return_val_if_fail(path != NULL, false);
  const char *dot = strrchr(path, '.');
  for (int f = 0; dot && f < TS_RENDER_FORMAT_COUNT; f++)
    if (g_ascii_strcasecmp(dot, EXTENSIONS[f]) == 0) {
      if (format)
        *format = (ts_render_format)f;
      return true;
    }
  return false;
}

static cairo_status_t to_bytes(void *closure, const unsigned char *data, unsigned int length)
{
  g_byte_array_append(closure, data, length);
  return CAIRO_STATUS_SUCCESS;
}

/* <text> elements for the SVG: invisible (the glyphs show), searchable. */
static void svg_text(const char *str, double x, double baseline, double size, void *data)
{
  GString *out = data;
  char *escaped = g_markup_escape_text(str, -1);
  char xs[G_ASCII_DTOSTR_BUF_SIZE], ys[G_ASCII_DTOSTR_BUF_SIZE], ss[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append_printf(out, "<text x=\"%s\" y=\"%s\" font-size=\"%s\">%s</text>\n",
                         g_ascii_formatd(xs, sizeof xs, "%.2f", x),
                         g_ascii_formatd(ys, sizeof ys, "%.2f", baseline),
                         g_ascii_formatd(ss, sizeof ss, "%.2f", size), escaped);
  g_free(escaped);
}

/* Puts the labels just before </svg>. */
static bool add_svg_text(GByteArray *svg, const GString *labels, GError **error)
{
  static const char close[] = "</svg>";
  for (gssize at = (gssize)svg->len - (gssize)strlen(close); at >= 0; at--) {
    if (memcmp(svg->data + at, close, strlen(close)) != 0)
      continue;
    GString *group = g_string_new("<g id=\"labels\" font-family=\"sans-serif\" fill-opacity=\"0\">\n");
    g_string_append_len(group, labels->str, (gssize)labels->len);
    g_string_append(group, "</g>\n");
    GByteArray *tail = g_byte_array_new();
    g_byte_array_append(tail, svg->data + at, svg->len - (guint)at);
    g_byte_array_set_size(svg, (guint)at);
    g_byte_array_append(svg, (const guint8 *)group->str, (guint)group->len);
    g_byte_array_append(svg, tail->data, tail->len);
    g_byte_array_unref(tail);
    g_string_free(group, TRUE);
    return true;
  }
  g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "Cairo wrote an SVG file without </svg>");
  return false;
}

static cairo_surface_t *surface_new(ts_render_format format, double width, double height, double scale,
                                    GByteArray *out)
{
  switch (format) {
  case TS_RENDER_SVG: {
    cairo_surface_t *s = cairo_svg_surface_create_for_stream(to_bytes, out, width, height);
    cairo_svg_surface_restrict_to_version(s, CAIRO_SVG_VERSION_1_1);
    return s;
  }
  case TS_RENDER_PDF:
    return cairo_pdf_surface_create_for_stream(to_bytes, out, width, height);
  default:
    return cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)ceil(width * scale),
                                      (int)ceil(height * scale));
  }
}

bool ts_render_write_file(const char *path, const void *data, gsize len, GError **error)
{
  g_return_val_if_fail(path != NULL && (data != NULL || len == 0), false);
  GError *local = NULL;
  if (g_file_set_contents(path, data ? data : "", (gssize)len, &local))
    return true;
  /* GLib names the temporary file ("g.svg.X1OAZ3"); its reason ends the
   * message, after the last ": " (g_strerror's text has none). */
  const char *reason = local->message ? g_strrstr(local->message, ": ") : NULL;
  g_set_error(error, G_FILE_ERROR, local->code, "cannot write '%s': %s", path,
              reason ? reason + 2 : "the file could not be written");
  g_error_free(local);
  return false;
}

bool ts_render_export(ts_render *render, const char *path, const ts_render_rect *area, double scale,
                      GError **error)
{
  g_return_val_if_fail(render != NULL && path != NULL, false);
  g_return_val_if_fail(error == NULL || *error == NULL, false);
  ts_render_format format;
  if (!ts_render_format_for_path(path, &format)) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                "cannot tell the image format of '%s': name it .png, .svg or .pdf", path);
    return false;
  }
  const ts_view_layout *layout = ts_render_get_layout(render);
  if (!layout) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                "nothing to export to '%s': the graph has no layout yet", path);
    return false;
  }
  ts_render_rect rect;
  if (area)
    rect = *area;
  else
    _ts_render_bounds(render, &rect);
  if (!(rect.width > 0 && rect.height > 0 && isfinite(rect.x) && isfinite(rect.y))) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                "cannot export an empty area (%g x %g) to '%s'", rect.width, rect.height, path);
    return false;
  }
  double legend_w, legend_h, legend_max = MAX(rect.height, TS_RENDER_EXPORT_LEGEND_HEIGHT);
  ts_render_legend_size(render, legend_max, false, &legend_w, &legend_h);
  double width = rect.width + legend_w + 3 * MARGIN;
  double height = MAX(rect.height, legend_h) + 2 * MARGIN;
  if (format != TS_RENDER_PNG || !(scale > 0))
    scale = 1;
  scale = MIN(scale, PNG_MAX_SIDE / MAX(width, height));

  GByteArray *bytes = g_byte_array_new();
  GString *labels = g_string_new(NULL);
  cairo_surface_t *surface = surface_new(format, width, height, scale, bytes);
  cairo_t *cr = cairo_create(surface);
  if (format == TS_RENDER_SVG)
    _ts_render_set_text_sink(render, svg_text, labels);
  cairo_scale(cr, scale, scale);
  _ts_set_source(cr, _ts_palette_get(ts_render_get_dark(render))->background);
  cairo_paint(cr);
  cairo_save(cr);
  cairo_translate(cr, MARGIN - rect.x, MARGIN - rect.y);
  cairo_rectangle(cr, rect.x, rect.y, rect.width, rect.height);
  cairo_clip(cr);
  /* vectors keep every label whatever the size; pixels drop what would not read */
  ts_render_draw(render, cr, &rect, format == TS_RENDER_PNG ? scale : 1, NULL);
  cairo_restore(cr);
  ts_render_draw_legend(render, cr, rect.width + 2 * MARGIN, MARGIN, legend_max, false);
  _ts_render_set_text_sink(render, NULL, NULL);
  cairo_destroy(cr);
  if (format == TS_RENDER_PNG)
    cairo_surface_write_to_png_stream(surface, to_bytes, bytes);
  cairo_surface_finish(surface);
  cairo_status_t status = cairo_surface_status(surface);
  cairo_surface_destroy(surface);

  bool ok = status == CAIRO_STATUS_SUCCESS;
  if (!ok)
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "cannot draw '%s': %s", path,
                cairo_status_to_string(status));
  if (ok && format == TS_RENDER_SVG)
    ok = add_svg_text(bytes, labels, error);
  if (ok)
    ok = ts_render_write_file(path, bytes->data, bytes->len, error);
  g_string_free(labels, TRUE);
  g_byte_array_unref(bytes);
  return ok;
}
