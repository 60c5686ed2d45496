/* ts-tensor-colour.c — the heat map's colour scales (ts-tensor-colour.h):
 * piecewise-linear between stops. */
#include "ts-tensor-colour.h"

#include <math.h>

typedef struct {
  int n;
  guint32 stop[9];
} ramp;

/* ColorBrewer RdBu, reversed: negative blue, zero near-white, positive red */
static const ramp DIVERGING = { 9, { 0x2166ac, 0x4393c3, 0x92c5de, 0xd1e5f0, 0xf7f7f7, 0xfddbc7,
                                     0xf4a582, 0xd6604d, 0xb2182b } };
/* matplotlib's viridis, nine samples */
static const ramp SEQUENTIAL = { 9, { 0x440154, 0x472d7b, 0x3b528b, 0x2c728e, 0x21918c, 0x28ae80,
                                      0x5ec962, 0xaddc30, 0xfde725 } };

static guint32 lerp_rgb(guint32 a, guint32 b, double t)
{
  guint32 out = 0;
  for (int shift = 0; shift <= 16; shift += 8) {
    double ca = (a >> shift) & 0xff, cb = (b >> shift) & 0xff;
    out |= (guint32)lround(ca + (cb - ca) * t) << shift;
  }
  return out;
}

static guint32 ramp_at(const ramp *r, double f)
{
  f = (f >= 0 ? MIN(f, 1) : 0) * (r->n - 1); /* NaN to the low end */
  int i = MIN((int)f, r->n - 2);
  return lerp_rgb(r->stop[i], r->stop[i + 1], f - i);
}

void ts_colour_scale_init(ts_colour_scale *s, double min, double max)
{
  if (isnan(min) || isnan(max))
    min = max = 0;
  s->diverging = min < 0 && max > 0;
  if (s->diverging) {
    double m = MAX(-min, max);
    s->lo = -m;
    s->hi = m;
  } else {
    s->lo = min;
    s->hi = max;
  }
}

guint32 ts_colour_scale_at(const ts_colour_scale *s, double f)
{
  return ramp_at(s->diverging ? &DIVERGING : &SEQUENTIAL, f);
}

guint32 ts_colour_scale_rgb(const ts_colour_scale *s, double v)
{
  if (isnan(v))
    return TS_COLOUR_NAN;
  if (isinf(v))
    return v > 0 ? TS_COLOUR_POS_INF : TS_COLOUR_NEG_INF;
  /* all values equal: the middle of the scale */
  double f = s->hi > s->lo ? (v / 2 - s->lo / 2) / (s->hi / 2 - s->lo / 2) : 0.5;
  return ts_colour_scale_at(s, f);
}
