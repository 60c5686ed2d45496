/* ts-tensor-colour.h — the heat map's colour scale: diverging (blue, white,
 * red, symmetric about 0) when the values span 0, sequential (viridis)
 * otherwise; NaN and the infinities in colours of their own.  No GTK. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct ts_colour_scale {
  gboolean diverging;
  double lo, hi; /* the values at the two ends (diverging: -m and m) */
} ts_colour_scale;

/* The scale for finite values in [min, max] (NaN when there are none). */
void ts_colour_scale_init(ts_colour_scale *s, double min, double max);
/* v's colour as 0xRRGGBB. */
guint32 ts_colour_scale_rgb(const ts_colour_scale *s, double v);
/* The colour at fraction f in [0, 1] along the scale (the legend bar). */
guint32 ts_colour_scale_at(const ts_colour_scale *s, double f);

#define TS_COLOUR_NAN 0xff00ffu     /* magenta: in neither scale */
#define TS_COLOUR_POS_INF 0x000000u /* black */
#define TS_COLOUR_NEG_INF 0x808080u /* mid grey */

G_END_DECLS
