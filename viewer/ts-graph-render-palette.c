/* ts-graph-render-palette.c — the colours: light and dark palettes, op
 * types by family, group tints, the tones of nested containers, the
 * categorical and heat scales.
 *
 * Op colours: a hue sector per family (control flow red, reductions
 * orange, comparisons yellow, arithmetic green, math and activations teal,
 * I/O cyan, matmul and conv blue, shape purple, state pink; creation and
 * constants near grey), lightness and chroma varied within it, so that
 * related ops look related.  Each colour was placed by a maximin search in
 * CIE Lab (L 60-93, chroma 20-50; creation ops chroma at most 14) inside
 * the sRGB gamut; the dark palette is the same colours 10 L darker, so any
 * two ops are about as far apart in both modes: ΔE76 >= 15.4 over the first 75
 * ops of the table, light and dark, >= 12 over all of them.  An op row newer
 * than the table gets its colour the same way when first drawn, inside its
 * family's sector, widened when full (test-graph-render measures every
 * pair); its colour then joins the table, so that no first draw searches. */
#include "ts-graph-render-private.h"

#include <math.h>

#define RGB(hex) { ((hex) >> 16 & 0xff) / 255.0, ((hex) >> 8 & 0xff) / 255.0, ((hex) & 0xff) / 255.0, 1 }
#define RGBA(hex, alpha) { ((hex) >> 16 & 0xff) / 255.0, ((hex) >> 8 & 0xff) / 255.0, ((hex) & 0xff) / 255.0, alpha }

static const _ts_palette PALETTES[2] = {
  { /* light */
    .background = RGB(0xffffff), .text = RGB(0x1e1e1e), .text_muted = RGB(0x5e5e5e),
    .text_light = RGB(0xf6f6f6), .text_dark = RGB(0x1e1e1e), .stroke = RGBA(0x000000, 0.45),
    .container_fill = { RGB(0xf5f6f8), RGB(0xe2e5ea), RGB(0xcfd4db) }, .container_stroke = RGB(0xa9afb8),
    .header = RGBA(0x8a94a3, 0.18), .edge = RGB(0x8b929c), .edge_control = RGB(0xb3b8bf),
    .edge_label_back = RGBA(0xffffff, 0.85), .accent = RGB(0xe66100), .accent_soft = RGB(0xf5a45d),
    .hover = RGB(0x3584e4), .no_data = RGB(0xe8e8e8), .legend_back = RGBA(0xffffff, 0.92),
    .legend_border = RGBA(0x000000, 0.18), .minimap_view = RGB(0x3584e4), .dark = false,
  },
  { /* dark: nested containers step up in lightness, ΔE76 >= 7.5 a step */
    .background = RGB(0x1e1e20), .text = RGB(0xeeeeee), .text_muted = RGB(0xa8a8a8),
    .text_light = RGB(0xf2f2f2), .text_dark = RGB(0x161616), .stroke = RGBA(0xffffff, 0.35),
    .container_fill = { RGB(0x2b2d33), RGB(0x3a3d46), RGB(0x4a4e59) }, .container_stroke = RGB(0x6b6f78),
    .header = RGBA(0x9aa4b3, 0.14), .edge = RGB(0x8d939b), .edge_control = RGB(0x62666d),
    .edge_label_back = RGBA(0x1e1e20, 0.85), .accent = RGB(0xff8c1a), .accent_soft = RGB(0xb86a24),
    .hover = RGB(0x78aeed), .no_data = RGB(0x3d3d42), .legend_back = RGBA(0x2a2a2e, 0.94),
    .legend_border = RGBA(0xffffff, 0.16), .minimap_view = RGB(0x78aeed), .dark = true,
  },
};

const _ts_palette *_ts_palette_get(bool dark)
{
  return &PALETTES[dark ? 1 : 0];
}

_ts_rgba _ts_text_on(const _ts_palette *palette, _ts_rgba fill)
{
  double luma = 0.299 * fill.r + 0.587 * fill.g + 0.114 * fill.b;
  return luma > 0.55 ? palette->text_dark : palette->text_light;
}

_ts_rgba _ts_container_fill(const _ts_palette *palette, int depth)
{
  return palette->container_fill[depth % TS_CONTAINER_TONES];
}

static _ts_rgba from_hex(guint32 hex)
{
  return (_ts_rgba)RGB(hex);
}

/* ---- op types --------------------------------------------------------------------- */

/* Each op's family is its row's (TS_OP_LIST in tracescope.h). */
static const guint8 OP_FAMILIES[TS_OP_COUNT] = {
#define FAMILY_ENTRY(ID, id, family) [TS_OP_##ID] = TS_OP_FAMILY_##family,
  TS_OP_LIST(FAMILY_ENTRY)
#undef FAMILY_ENTRY
};

/* Each op's colour, placed in its family's sector.  An op newer than the
 * table ({ 0, 0 }) is placed when first drawn (place_new_ops). */
static const guint32 OP_COLOURS[TS_OP_COUNT][2] = {
  [TS_OP_IF] = { 0xce7974, 0xb15f5c },
  [TS_OP_WHILE] = { 0xfc828c, 0xdd6772 },
  [TS_OP_REDUCE_SUM] = { 0xed9e82, 0xd08369 },
  [TS_OP_REDUCE_MEAN] = { 0xffc08b, 0xe1a571 },
  [TS_OP_REDUCE_MAX] = { 0xd77753, 0xb95d3b },
  [TS_OP_REDUCE_MIN] = { 0xffc6b0, 0xe2aa95 },
  [TS_OP_REDUCE_PROD] = { 0xe59959, 0xc77f40 },
  [TS_OP_ARGMAX] = { 0xb98979, 0x9d7060 },
  [TS_OP_SPARSE_SOFTMAX_CROSS_ENTROPY] = { 0xbc8658, 0xa06d40 },
  [TS_OP_GREATER] = { 0xb2a160, 0x978747 },
  [TS_OP_GREATER_EQUAL] = { 0xcbc161, 0xafa647 },
  [TS_OP_LESS] = { 0xbcbb91, 0xa1a077 },
  [TS_OP_LESS_EQUAL] = { 0xb38b36, 0x96721c },
  [TS_OP_EQUAL] = { 0xfbcb74, 0xddaf5a },
  [TS_OP_NOT_EQUAL] = { 0xe6cd8e, 0xc9b274 },
  [TS_OP_LOGICAL_AND] = { 0x9f8f6c, 0x847654 },
  [TS_OP_LOGICAL_OR] = { 0xedeebc, 0xd0d2a1 },
  [TS_OP_LOGICAL_NOT] = { 0xeef096, 0xd1d47c },
  [TS_OP_WHERE] = { 0x959536, 0x7a7b1c },
  [TS_OP_ADD] = { 0xc0f8cc, 0xa4dcb0 },
  [TS_OP_SUB] = { 0x589f74, 0x3d855b },
  [TS_OP_MUL] = { 0x80d09a, 0x65b47f },
  [TS_OP_DIV] = { 0xb5d598, 0x9ab97d },
  [TS_OP_FLOORDIV] = { 0x809960, 0x667f48 },
  [TS_OP_MOD] = { 0xc4faa7, 0xa8dd8c },
  [TS_OP_POW] = { 0x5cac64, 0x40914b },
  [TS_OP_MAXIMUM] = { 0x88ac8d, 0x6e9274 },
  [TS_OP_MINIMUM] = { 0x93ffbe, 0x77e2a3 },
  [TS_OP_NEG] = { 0x759d46, 0x5b832d },
  [TS_OP_ABS] = { 0x95cd77, 0x7bb15d },
  [TS_OP_EXP] = { 0xa1f9fb, 0x84dcdf },
  [TS_OP_LOG] = { 0x54d1d4, 0x2fb5b8 },
  [TS_OP_SQRT] = { 0x8dfee1, 0x70e1c5 },
  [TS_OP_TANH] = { 0x38b49f, 0x029985 },
  [TS_OP_SIGMOID] = { 0x90d5bf, 0x75b9a4 },
  [TS_OP_RELU] = { 0x4afffe, 0x00e2e1 },
  [TS_OP_FUSED_ELEMENTWISE] = { 0x01f9c5, 0x00dda9 },
  [TS_OP_SOFTMAX] = { 0x3fdbb3, 0x00be99 },
  [TS_OP_LOG_SOFTMAX] = { 0x589c98, 0x3e827e },
  [TS_OP_PLACEHOLDER] = { 0x49d9ff, 0x0fbde2 },
  [TS_OP_PRINT] = { 0x3ba6c2, 0x078ba6 },
  [TS_OP_MATMUL] = { 0x5ba8ff, 0x368ee2 },
  [TS_OP_CONV2D] = { 0x8bcbfe, 0x6fafe1 },
  [TS_OP_FUSED_MATMUL] = { 0x2b8df3, 0x0f71d7 },
  [TS_OP_FUSED_CONV2D] = { 0x3070e0, 0x1454c4 },
  [TS_OP_MAX_POOL2D] = { 0x5097cd, 0x2e7db2 },
  [TS_OP_CAST] = { 0xb8b9df, 0x9d9ec3 },
  [TS_OP_RESHAPE] = { 0xf0b5ff, 0xd39ae2 },
  [TS_OP_FLATTEN] = { 0x8589e2, 0x6970c6 },
  [TS_OP_TRANSPOSE] = { 0xf2dbff, 0xd5bfe2 },
  [TS_OP_CONCAT] = { 0xc1a5ff, 0xa58ae2 },
  [TS_OP_SPLIT] = { 0x9399d7, 0x787fbc },
  [TS_OP_SLICE] = { 0xcabdff, 0xaea2e2 },
  [TS_OP_GATHER] = { 0xb47dcd, 0x9963b1 },
  [TS_OP_IDENTITY] = { 0x958db0, 0x7b7496 },
  [TS_OP_SHAPE] = { 0xbf94cb, 0xa37aaf },
  [TS_OP_VAR_HANDLE] = { 0xffc0ec, 0xe2a4cf },
  [TS_OP_READ_VARIABLE] = { 0xff9dd9, 0xe182bd },
  [TS_OP_ASSIGN_VARIABLE] = { 0xcf73b7, 0xb3589c },
  [TS_OP_ASSIGN_ADD_VARIABLE] = { 0xf2a1b9, 0xd5879f },
  [TS_OP_ASSIGN_SUB_VARIABLE] = { 0xffccda, 0xe2b0be },
  [TS_OP_TENSOR_LIST_RESERVE] = { 0xcd769c, 0xb05c82 },
  [TS_OP_TENSOR_LIST_SET_ITEM] = { 0xff88af, 0xe16d95 },
  [TS_OP_TENSOR_LIST_GET_ITEM] = { 0xcfa8c3, 0xb48ea8 },
  [TS_OP_TENSOR_LIST_STACK] = { 0xb98292, 0x9e6878 },
  [TS_OP_FILL] = { 0xb2c4b6, 0x98a89c },
  [TS_OP_ZEROS] = { 0xccf1ff, 0xb0d4e2 },
  [TS_OP_ONES] = { 0x899489, 0x707a6f },
  [TS_OP_ZEROS_LIKE] = { 0xcbb2a1, 0xaf9787 },
  [TS_OP_ONES_LIKE] = { 0xa0c2d2, 0x85a7b6 },
  [TS_OP_EYE] = { 0xd1c6cf, 0xb5abb4 },
  [TS_OP_RANGE] = { 0xa7959d, 0x8c7b82 },
  [TS_OP_RANDOM_UNIFORM] = { 0xfde6d9, 0xe1cabd },
  [TS_OP_RANDOM_NORMAL] = { 0xdaf1dc, 0xbfd4c0 },
  [TS_OP_CONST] = { 0x7a95a5, 0x617b8a },
  /* placed by place_new_op's search when they were added, kept here so
   * that no first draw searches for them */
  [TS_OP_SOFTPLUS] = { 0x4be2d2, 0x1cc5b6 },
  [TS_OP_CONV2D_BACKPROP_INPUT] = { 0x497dc7, 0x2664ab },
  [TS_OP_CONV2D_BACKPROP_FILTER] = { 0x46b7fc, 0x0b9cdf },
  [TS_OP_MAX_POOL2D_GRAD] = { 0x9cbbff, 0x80a0e2 },
  [TS_OP_SIN] = { 0x79bfc0, 0x5ea4a5 },
  [TS_OP_COS] = { 0x49ffe4, 0x06e2c8 },
  [TS_OP_TAN] = { 0xb8f5e2, 0x9cd8c6 },
  [TS_OP_ASIN] = { 0x3ab785, 0x099c6b },
  [TS_OP_ACOS] = { 0x43d998, 0x12bd7e },
  [TS_OP_ATAN] = { 0x70bd9b, 0x55a281 },
  [TS_OP_SINH] = { 0x39adb5, 0x03929a },
  [TS_OP_COSH] = { 0x65f0fd, 0x40d3e1 },
  [TS_OP_ASINH] = { 0x75f6a1, 0x56d986 },
  [TS_OP_ACOSH] = { 0x3bbc6e, 0x0ba055 },
  [TS_OP_ATANH] = { 0x80d9ea, 0x63bdcd },
  [TS_OP_ERF] = { 0x70d778, 0x53ba5e },
  [TS_OP_STATELESS_RANDOM_UNIFORM] = { 0xebe9f9, 0xcfcddd },
  [TS_OP_SHUFFLE_INDICES] = { 0xd8d2b9, 0xbcb69e },
  [TS_OP_SUM_TO] = { 0xd5a884, 0xb98d6a },
  [TS_OP_APPLY_ADAM] = { 0xe19bc8, 0xc481ad },
  [TS_OP_TENSOR_LIST_LENGTH] = { 0xdb6f87, 0xbd556e },
  [TS_OP_TENSOR_LIST_INSERT] = { 0xad84a7, 0x926a8c },
  [TS_OP_TENSOR_LIST_ERASE] = { 0xdea8ad, 0xc28e92 },
  [TS_OP_TENSOR_LIST_CONCAT] = { 0xe292e0, 0xc578c4 },
  [TS_OP_OPTIONAL_FROM_VALUE] = { 0xf69a9c, 0xd88082 },
  [TS_OP_OPTIONAL_NONE] = { 0xdbbbe9, 0xbfa0cd },
  [TS_OP_OPTIONAL_HAS_VALUE] = { 0xf95b55, 0xd93d3d },
  [TS_OP_OPTIONAL_GET_VALUE] = { 0xf552a6, 0xd6318b },
  [TS_OP_AS_STRING] = { 0x9fabff, 0x8390e2 },
  [TS_OP_STRING_TO_NUMBER] = { 0x9d85ca, 0x826bae },
  [TS_OP_STRING_LOWER] = { 0x8ca4d1, 0x718ab6 },
  [TS_OP_STRING_UPPER] = { 0xbfd9fe, 0xa3bde2 },
  [TS_OP_CONV_TRANSPOSE] = { 0x6d79b1, 0x536196 },
  [TS_OP_LSTM_SEQUENCE] = { 0x4783a3, 0x2a6a88 },
  [TS_OP_SIGN] = { 0xb9d7b3, 0x9ebb98 },
  [TS_OP_ROUND] = { 0x89b878, 0x6e9d5f },
  [TS_OP_ARGMIN] = { 0xff9d72, 0xe08359 },
  [TS_OP_CUMSUM] = { 0xf78a76, 0xd9705d },
  [TS_OP_FLOOR] = { 0x97e79b, 0x7cca81 },
  [TS_OP_CEIL] = { 0xa4b966, 0x899e4c },
  [TS_OP_SQUARE] = { 0xc2df80, 0xa6c366 },
  [TS_OP_RSQRT] = { 0xabfd91, 0x8ee077 },
  [TS_OP_RECIPROCAL] = { 0xdef4ad, 0xc1d792 },
  [TS_OP_LOG1P] = { 0x5aa842, 0x3e8d28 },
  [TS_OP_EXPM1] = { 0x8fd04e, 0x73b432 },
  [TS_OP_ELU] = { 0x3fba51, 0x159e37 },
  [TS_OP_SELU] = { 0xbafb76, 0x9dde5b },
  [TS_OP_RELU6] = { 0x78bcdb, 0x5ca1bf },
  [TS_OP_SOFTSIGN] = { 0x6bac2a, 0x4f9103 },
  [TS_OP_IS_NAN] = { 0xd4aa5e, 0xb79045 },
  [TS_OP_IS_INF] = { 0xffe1b5, 0xe1c59a },
  [TS_OP_IS_FINITE] = { 0xcdd186, 0xb1b56c },
  [TS_OP_GELU] = { 0x86ba50, 0x6b9f36 },
  [TS_OP_SQUARED_DIFFERENCE] = { 0xfeee5e, 0xe0d242 },
  [TS_OP_ATAN2] = { 0xb9dc61, 0x9dc046 },
  [TS_OP_TRUNCATEDIV] = { 0xdfb32d, 0xc19900 },
  [TS_OP_TRUNCATEMOD] = { 0xbebf2f, 0xa1a405 },
  [TS_OP_DIV_NO_NAN] = { 0x91a82a, 0x758d04 },
  [TS_OP_XLOGY] = { 0x42baea, 0x069fce },
  /* The IO sector (Placeholder, Print) has no third colour 12 apart from
   * every other op's: Assert takes a grey teal beside it. */
  [TS_OP_ASSERT] = { 0x8cacac, 0x729191 },
  /* placed by place_new_op's search (sectors widened: the table is
   * nearly full at ΔE76 12, so these stray from their families' hues) */
  [TS_OP_TOP_K] = { 0xfee484, 0xe1c86a },
  [TS_OP_SORT] = { 0xdfe06a, 0xc2c44f },
  [TS_OP_ARGSORT] = { 0xdff364, 0xc2d748 },
  [TS_OP_CUMPROD] = { 0xfe4f7e, 0xde2d65 },
  [TS_OP_REDUCE_ANY] = { 0xdf7323, 0xc05900 },
  [TS_OP_REDUCE_ALL] = { 0xfea539, 0xde8b1b },
  [TS_OP_PACK] = { 0xa97bf6, 0x8c62d9 },
  [TS_OP_UNPACK] = { 0xd266d7, 0xb54bbb },
  [TS_OP_TILE] = { 0xfe7dd9, 0xe061bd },
  [TS_OP_PAD] = { 0xfe794e, 0xde5e36 },
  [TS_OP_REVERSE] = { 0xda91fd, 0xbd76e0 },
  [TS_OP_ONE_HOT] = { 0xabdbda, 0x90bfbe },
};

/* An op the table does not know yet: a neutral grey. */
static const guint32 UNKNOWN_OP[2] = { 0xc8c8c8, 0x8e8e8e };

/* ---- ops newer than the table ------------------------------------------------------
 * A new op row gets its colour here, as the table's were made: the point
 * of its family's sector (the hues, lightness and chroma its placed
 * colours span) farthest in CIE Lab from every colour placed so far, in
 * both palettes (dark: 10 L darker), inside the sRGB gamut; a sector
 * too full for ΔE76 12 widens (place_new_op). */

typedef struct lab {
  double l, a, b;
} lab;

static const double WHITE[3] = { 0.95047, 1.0, 1.08883 }; /* D65 */

static double lab_f(double t)
{
  return t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116;
}

static double lab_f_inv(double t)
{
  return t * t * t > 216.0 / 24389 ? t * t * t : (116 * t - 16) / (24389.0 / 27);
}

static lab lab_of(guint32 hex)
{
  double c[3];
  for (int i = 0; i < 3; i++) {
    double v = (hex >> (16 - 8 * i) & 0xff) / 255.0;
    c[i] = v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
  }
  double x = (0.4124 * c[0] + 0.3576 * c[1] + 0.1805 * c[2]) / WHITE[0];
  double y = (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]) / WHITE[1];
  double z = (0.0193 * c[0] + 0.1192 * c[1] + 0.9505 * c[2]) / WHITE[2];
  return (lab){ 116 * lab_f(y) - 16, 500 * (lab_f(x) - lab_f(y)), 200 * (lab_f(y) - lab_f(z)) };
}

/* false outside the sRGB gamut */
static bool hex_of(lab p, guint32 *hex)
{
  double fy = (p.l + 16) / 116, fx = fy + p.a / 500, fz = fy - p.b / 200;
  double x = lab_f_inv(fx) * WHITE[0], y = lab_f_inv(fy) * WHITE[1], z = lab_f_inv(fz) * WHITE[2];
  double c[3] = { 3.2406 * x - 1.5372 * y - 0.4986 * z, -0.9689 * x + 1.8758 * y + 0.0415 * z,
                  0.0557 * x - 0.2040 * y + 1.0570 * z };
  *hex = 0;
  for (int i = 0; i < 3; i++) {
    double v = c[i] <= 0.0031308 ? 12.92 * c[i] : 1.055 * pow(c[i], 1 / 2.4) - 0.055;
    if (v < -0.001 || v > 1.001)
      return false;
    *hex = *hex << 8 | (guint32)lround(CLAMP(v, 0, 1) * 255);
  }
  return true;
}

static double lab_distance(lab p, lab q)
{
  return sqrt((p.l - q.l) * (p.l - q.l) + (p.a - q.a) * (p.a - q.a) + (p.b - q.b) * (p.b - q.b));
}

static guint32 colours[TS_OP_COUNT][2]; /* OP_COLOURS, new ops placed */

/* Other tools' ops take the band at L 42 (dark 32, below); a new op's
 * colour stays 10 lighter, so that no name can take its colour either. */
#define FOREIGN_L 42
#define FOREIGN_CHROMA 36
#define FOREIGN_CLEARANCE 10

typedef struct placed {
  int n;
  lab light[TS_OP_COUNT], dark[TS_OP_COUNT];
} placed;

/* The least distance from p (light) and its dark twin to every colour placed. */
static double clearance(const placed *all, lab p, lab dark)
{
  double least = G_MAXDOUBLE;
  for (int k = 0; k < all->n; k++)
    least = MIN(least, MIN(lab_distance(p, all->light[k]), lab_distance(dark, all->dark[k])));
  return least;
}

static void place_new_op(int op, placed *all)
{
  /* the sector: around the mean hue of the family's placed colours, as far
   * as the farthest of them; their spans of L and C */
  double sa = 0, sb = 0, l0 = 60, l1 = 93, c0 = 20, c1 = 50, spread = 180;
  int n = 0;
  for (int k = 0; k < TS_OP_COUNT; k++)
    if (OP_COLOURS[k][0] && OP_FAMILIES[k] == OP_FAMILIES[op]) {
      lab p = lab_of(OP_COLOURS[k][0]);
      double c = hypot(p.a, p.b);
      sa += p.a / c;
      sb += p.b / c;
      if (n++ == 0)
        l0 = l1 = p.l, c0 = c1 = c;
      l0 = MIN(l0, p.l), l1 = MAX(l1, p.l), c0 = MIN(c0, c), c1 = MAX(c1, c);
    }
  double mean = atan2(sb, sa);
  if (n > 0) {
    spread = 0;
    for (int k = 0; k < TS_OP_COUNT; k++)
      if (OP_COLOURS[k][0] && OP_FAMILIES[k] == OP_FAMILIES[op]) {
        lab p = lab_of(OP_COLOURS[k][0]);
        spread = MAX(spread, fabs(remainder(atan2(p.b, p.a) - mean, 2 * G_PI)) * 180 / G_PI);
      }
  }
  /* a sector too full to hold the new colour 12 apart (the maths
   * family's, with the trigonometric rows) widens until it can: the
   * lightness and chroma to the table's bounds, the hues by half its
   * spread a step, up to sixteen times it (the whole circle at most), and
   * past three times the chroma to 70 */
  double best = -1;
  guint32 pick[2] = { 0 };
  for (double widen = 1; best < 12 && widen <= 16; widen += 0.5) {
    double lo = widen > 1 ? MIN(l0, 60) : l0, hi = widen > 1 ? MAX(l1, 93) : l1;
    double clo = widen > 1 ? MIN(c0, 20) : c0, chi = widen > 1 ? MAX(c1, widen > 3 ? 70 : 50) : c1;
    for (double l = ceil(MAX(lo, FOREIGN_L + FOREIGN_CLEARANCE)); l <= hi; l += 1)
      for (double c = clo; c <= chi; c += 1)
        for (double h = -MIN(spread * widen, 180); h <= MIN(spread * widen, 180); h += 1) {
          double t = mean + h * G_PI / 180;
          lab p = { l, c * cos(t), c * sin(t) }, dark = { l - 10, p.a, p.b };
          guint32 hex[2];
          if (!hex_of(p, &hex[0]) || !hex_of(dark, &hex[1]))
            continue;
          double d = clearance(all, lab_of(hex[0]), lab_of(hex[1]));
          if (d > best) {
            best = d;
            pick[0] = hex[0], pick[1] = hex[1];
          }
        }
  }
  colours[op][0] = pick[0];
  colours[op][1] = pick[1];
  all->light[all->n] = lab_of(pick[0]);
  all->dark[all->n++] = lab_of(pick[1]);
}

static void place_new_ops(void)
{
  static gsize done;
  if (!g_once_init_enter(&done))
    return;
  placed *all = g_new0(placed, 1);
  for (int op = 0; op < TS_OP_COUNT; op++) {
    colours[op][0] = OP_COLOURS[op][0];
    colours[op][1] = OP_COLOURS[op][1];
    if (OP_COLOURS[op][0]) {
      all->light[all->n] = lab_of(OP_COLOURS[op][0]);
      all->dark[all->n++] = lab_of(OP_COLOURS[op][1]);
    }
  }
  for (int op = 0; op < TS_OP_COUNT; op++)
    if (!OP_COLOURS[op][0])
      place_new_op(op, all);
  g_free(all);
  g_once_init_leave(&done, 1);
}

_ts_rgba _ts_op_colour(const _ts_palette *palette, int op)
{
  if (op < 0 || op >= TS_OP_COUNT)
    return from_hex(UNKNOWN_OP[palette->dark]);
  place_new_ops();
  return from_hex(colours[op][palette->dark]);
}

_ts_op_family _ts_op_family_of(int op)
{
  return op < 0 || op >= TS_OP_COUNT ? TS_OP_FAMILY_OTHER : (_ts_op_family)OP_FAMILIES[op];
}

/* ---- other tools' ops --------------------------------------------------------------
 * Names the engine does not know (a PyTorch trace's aten::addmm) take a
 * colour by name from a band of their own: TS_FOREIGN_HUES hues around the
 * circle at L 42 (dark 32), below every op colour (L 60-93, dark 50-83),
 * so that no name can take an engine op's colour whatever the op rows. */


_ts_rgba _ts_foreign_colour(const _ts_palette *palette, guint hash)
{
  double t = (hash % TS_FOREIGN_HUES) * 2 * G_PI / TS_FOREIGN_HUES;
  guint32 hex = 0;
  for (double c = FOREIGN_CHROMA; c > 0; c -= 1) /* less chroma where the hue is out of gamut */
    if (hex_of((lab){ FOREIGN_L - (palette->dark ? 10 : 0), c * cos(t), c * sin(t) }, &hex))
      break;
  return from_hex(hex);
}

/* ---- groups, categories, heat ------------------------------------------------------ */

/* Tints for collapsed groups, picked by structure: alike groups look
 * alike.  Each stands out of every container tone by ΔE76 >= 10. */
static const guint32 GROUP_TINTS[][2] = {
  { 0xc6d8f2, 0x40567a }, { 0xdccbf2, 0x58487a }, { 0xc6e8c4, 0x3f634b },
  { 0xf4dbb8, 0x6c5436 }, { 0xf2caca, 0x6e414b }, { 0xc0e6e6, 0x38646b },
};

_ts_rgba _ts_group_colour(const _ts_palette *palette, int template_id)
{
  return from_hex(GROUP_TINTS[(guint)template_id % G_N_ELEMENTS(GROUP_TINTS)][palette->dark]);
}

/* Tableau 10: categories (devices, functions), in the order they appear. */
static const guint32 CATEGORY_COLOURS[TS_MAX_STRIPES] = {
  0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f, 0xedc948, 0xb07aa1, 0x9c755f,
};
/* ColorBrewer YlOrRd: compute time, low to high. */
static const guint32 HEAT[] = { 0xffffb2, 0xfecc5c, 0xfd8d3c, 0xf03b20, 0xbd0026 };

_ts_rgba _ts_mix(_ts_rgba a, _ts_rgba b, double t)
{
  return (_ts_rgba){ a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t,
                     a.a + (b.a - a.a) * t };
}

/* Categories and heat keep their published colours, a little darker in
 * the dark palette. */
static _ts_rgba tone(const _ts_palette *palette, _ts_rgba c)
{
  return palette->dark ? _ts_mix(c, palette->background, 0.2) : c;
}

_ts_rgba _ts_category_colour(const _ts_palette *palette, int k)
{
  return tone(palette, from_hex(CATEGORY_COLOURS[k % TS_MAX_STRIPES]));
}

_ts_rgba _ts_heat(const _ts_palette *palette, double t)
{
  int n = G_N_ELEMENTS(HEAT) - 1;
  t = CLAMP(t, 0.0, 1.0) * n;
  int i = MIN((int)t, n - 1);
  return tone(palette, _ts_mix(from_hex(HEAT[i]), from_hex(HEAT[i + 1]), t - i));
}
