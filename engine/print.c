/* print.c — tensors as TensorFlow prints them:
 * "Tensor([3 5 7], shape=(3,), dtype=int32)", where the values are NumPy
 * 1.24's str() of the array (array2string with the default print options).
 * Floats go through a port of NumPy's Dragon4 (shortest unique digits per
 * dtype, unbiased rounding), so every digit and pad matches NumPy's.
 * Strings print as bytes reprs ("[b'a' b'bc']"), variants by their kind
 * (<TensorList>, <Optional>), and symbolic tensors as TensorFlow prints
 * graph tensors:
 * Tensor("a:0", shape=(None, 3), dtype=float32). */
#include "engine-private.h"

#include <glib.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* NumPy's default print options. */
enum { PRECISION = 8, THRESHOLD = 1000, EDGE_ITEMS = 3, LINE_WIDTH = 75 };

/* ---- just enough big integers for Dragon4 on binary64 ------------------- */

#define BIG_BLOCKS 72 /* 2304 bits: 2^1078 scales times 10^340, with room */

typedef struct big {
  int n; /* used blocks, no leading zero blocks */
  uint32_t b[BIG_BLOCKS];
} big;

static void big_trim(big *x)
{
  while (x->n > 0 && x->b[x->n - 1] == 0)
    x->n--;
}

static void big_set(big *x, uint64_t v)
{
  x->b[0] = (uint32_t)v;
  x->b[1] = (uint32_t)(v >> 32);
  x->n = 2;
  big_trim(x);
}

static void big_shl(big *x, int shift)
{
  int blocks = shift / 32, bits = shift % 32;
  int n = x->n + blocks + 1;

  g_assert(shift >= 0 && n <= BIG_BLOCKS);
  for (int i = n - 1; i >= 0; i--) {
    int src = i - blocks;
    uint32_t hi = src >= 0 && src < x->n ? x->b[src] : 0;
    uint32_t lo = src >= 1 && src - 1 < x->n ? x->b[src - 1] : 0;
    x->b[i] = bits ? (hi << bits) | (lo >> (32 - bits)) : hi;
  }
  x->n = n;
  big_trim(x);
}

static void big_pow2(big *x, int e)
{
  big_set(x, 1);
  big_shl(x, e);
}

static void big_mul_small(big *x, uint32_t m)
{
  uint64_t carry = 0;
  for (int i = 0; i < x->n; i++) {
    uint64_t p = (uint64_t)x->b[i] * m + carry;
    x->b[i] = (uint32_t)p;
    carry = p >> 32;
  }
  if (carry) {
    g_assert(x->n < BIG_BLOCKS);
    x->b[x->n++] = (uint32_t)carry;
  }
}

static void big_mul_pow10(big *x, int e)
{
  static const uint32_t pow10[] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                    100000000, 1000000000 };
  for (; e >= 9; e -= 9)
    big_mul_small(x, pow10[9]);
  big_mul_small(x, pow10[e]);
}

static int big_cmp(const big *a, const big *b)
{
  if (a->n != b->n)
    return a->n < b->n ? -1 : 1;
  for (int i = a->n - 1; i >= 0; i--)
    if (a->b[i] != b->b[i])
      return a->b[i] < b->b[i] ? -1 : 1;
  return 0;
}

static void big_add(big *out, const big *a, const big *b)
{
  const big *lg = a->n >= b->n ? a : b, *sm = a->n >= b->n ? b : a;
  uint64_t carry = 0;
  for (int i = 0; i < lg->n; i++) {
    uint64_t s = (uint64_t)lg->b[i] + (i < sm->n ? sm->b[i] : 0) + carry;
    out->b[i] = (uint32_t)s;
    carry = s >> 32;
  }
  out->n = lg->n;
  if (carry) {
    g_assert(out->n < BIG_BLOCKS);
    out->b[out->n++] = (uint32_t)carry;
  }
}

/* a -= b, where a >= b. */
static void big_sub(big *a, const big *b)
{
  uint64_t borrow = 0;
  for (int i = 0; i < a->n; i++) {
    uint64_t d = (uint64_t)a->b[i] - (i < b->n ? b->b[i] : 0) - borrow;
    a->b[i] = (uint32_t)d;
    borrow = (d >> 32) & 1;
  }
  big_trim(a);
}

/* The digit value / scale (< 10) and value %= scale. */
static unsigned big_divmod_digit(big *value, const big *scale)
{
  unsigned q = 0;
  while (big_cmp(value, scale) >= 0) {
    big_sub(value, scale);
    q++;
  }
  return q;
}

/* ---- Dragon4 -------------------------------------------------------------- */

#define DIGITS_MAX 64

typedef enum { CUT_TOTAL, CUT_FRACTION } cut_mode;

/* The value mantissa * 2^exponent of a finite float, as Dragon4 wants it. */
typedef struct fparts {
  uint64_t mantissa;
  int exponent;
  int mantissa_bit;     /* index of the highest set bit */
  bool unequal_margins; /* the gap above is twice the gap below */
  bool negative;
  bool nan, inf;
} fparts;

static int log2_u64(uint64_t v)
{
  return 63 - __builtin_clzll(v);
}

static fparts fparts_from(uint64_t bits, int mant_bits, int exp_bits, int bias)
{
  uint64_t frac = bits & ((UINT64_C(1) << mant_bits) - 1);
  unsigned fexp = (unsigned)(bits >> mant_bits) & ((1u << exp_bits) - 1);
  fparts p = { .negative = (bits >> (mant_bits + exp_bits)) & 1 };

  if (fexp == (1u << exp_bits) - 1) {
    p.nan = frac != 0;
    p.inf = frac == 0;
  } else if (fexp != 0) {
    p.mantissa = (UINT64_C(1) << mant_bits) | frac;
    p.exponent = (int)fexp - bias - mant_bits;
    p.mantissa_bit = mant_bits;
    p.unequal_margins = fexp != 1 && frac == 0;
  } else {
    p.mantissa = frac;
    p.exponent = 1 - bias - mant_bits;
    p.mantissa_bit = frac ? log2_u64(frac) : 0;
  }
  return p;
}

static fparts fparts_f32(float v)
{
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  return fparts_from(bits, 23, 8, 127);
}

/* float16 (NumPy's Dragon4 has it) and bfloat16 (as ml_dtypes prints it:
 * the shortest digits among bfloat16s) */
static fparts fparts_f16(ts_f16 v)
{
  return fparts_from(v.bits, 10, 5, 15);
}

static fparts fparts_bf16(ts_bf16 v)
{
  return fparts_from(v.bits, 7, 8, 127);
}

static fparts fparts_f64(double v)
{
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  return fparts_from(bits, 52, 11, 1023);
}

/* NumPy's Dragon4 in unique mode: the shortest digits that identify the
 * value among its neighbours (ties between margins resolved IEEE-style),
 * at least down to the cutoff_min digit and at most down to cutoff_max.
 * Writes the digits (no NUL) to buf[DIGITS_MAX] and the decimal exponent of
 * the first one to *exp10; returns the number of digits. */
static int dragon4(const fparts *v, cut_mode mode, int cutoff_max, int cutoff_min, char *buf,
                   int *exp10)
{
  big scale, value, mlow, mhigh, value_high;
  bool even = (v->mantissa & 1) == 0;
  int unequal = v->unequal_margins;

  if (v->mantissa == 0) {
    buf[0] = '0';
    *exp10 = 0;
    return 1;
  }

  /* value = scaled_value / scale, margins = half the gaps to the neighbours */
  big_set(&value, v->mantissa);
  if (v->exponent > 0) {
    big_shl(&value, v->exponent + 1 + unequal);
    big_set(&scale, unequal ? 4 : 2);
    big_pow2(&mlow, v->exponent);
  } else {
    big_shl(&value, 1 + unequal);
    big_pow2(&scale, -v->exponent + 1 + unequal);
    big_set(&mlow, 1);
  }
  mhigh = mlow;
  if (unequal)
    big_shl(&mhigh, 1);

  /* an estimate of floor(log10(v)) + 1 that is right or one too low */
  const double log10_2 = 0.30102999566398119521;
  int digit_exp = (int)ceil((double)(v->mantissa_bit + v->exponent) * log10_2 - 0.69);
  if (cutoff_max >= 0 && mode == CUT_FRACTION && digit_exp <= -cutoff_max)
    digit_exp = -cutoff_max + 1;
  if (digit_exp > 0) {
    big_mul_pow10(&scale, digit_exp);
  } else if (digit_exp < 0) {
    big_mul_pow10(&value, -digit_exp);
    big_mul_pow10(&mlow, -digit_exp);
    big_mul_pow10(&mhigh, -digit_exp);
  }
  if (big_cmp(&value, &scale) >= 0) {
    digit_exp++;
  } else {
    big_mul_small(&value, 10);
    big_mul_small(&mlow, 10);
    big_mul_small(&mhigh, 10);
  }

  int cut_max_exp = digit_exp - DIGITS_MAX;
  if (cutoff_max >= 0) {
    int want = mode == CUT_TOTAL ? digit_exp - cutoff_max : -cutoff_max;
    cut_max_exp = MAX(cut_max_exp, want);
  }
  int cut_min_exp = digit_exp;
  if (cutoff_min >= 0) {
    int want = mode == CUT_TOTAL ? digit_exp - cutoff_min : -cutoff_min;
    cut_min_exp = MIN(cut_min_exp, want);
  }
  *exp10 = digit_exp - 1;

  int n = 0;
  unsigned digit;
  bool low, high;
  for (;;) {
    digit_exp--;
    digit = big_divmod_digit(&value, &scale);
    big_add(&value_high, &value, &mhigh);
    int c = big_cmp(&value, &mlow);
    low = even ? c <= 0 : c < 0;
    c = big_cmp(&value_high, &scale);
    high = even ? c >= 0 : c > 0;
    if (((low || high) && digit_exp <= cut_min_exp) || digit_exp <= cut_max_exp)
      break;
    buf[n++] = (char)('0' + digit);
    big_mul_small(&value, 10);
    big_mul_small(&mlow, 10);
    big_mul_small(&mhigh, 10);
  }

  /* round the last digit: towards the side that stays unique, else to nearest, ties to even */
  bool round_down = low;
  if (low == high) {
    big_shl(&value, 1);
    int c = big_cmp(&value, &scale);
    round_down = c < 0 || (c == 0 && (digit & 1) == 0);
  }
  if (round_down) {
    buf[n++] = (char)('0' + digit);
  } else if (digit < 9) {
    buf[n++] = (char)('0' + digit + 1);
  } else {
    for (;;) {
      if (n == 0) {
        buf[n++] = '1';
        (*exp10)++;
        break;
      }
      if (buf[--n] != '9') {
        buf[n++]++;
        break;
      }
    }
  }
  return n;
}

/* ---- Dragon4_Positional / Dragon4_Scientific --------------------------------- */

/* NumPy's trim modes: 'k', '.', '0', '-'. */
typedef enum { TRIM_NONE, TRIM_ZEROS, TRIM_LEAVE_ONE_ZERO, TRIM_DPT_ZEROS } trim_mode;

typedef struct fopts {
  bool scientific;
  cut_mode mode;  /* positional only: precision counts fraction digits or all digits */
  int precision;  /* -1: none */
  int min_digits; /* -1: none */
  trim_mode trim;
  int pad_left, pad_right, exp_digits; /* -1: none */
} fopts;

#define FMT_MAX 512 /* enough for any positional double */

typedef struct out {
  char s[FMT_MAX];
  int len;
} out;

static void out_c(out *o, char c)
{
  if (o->len < FMT_MAX - 1)
    o->s[o->len++] = c;
}

static void out_n(out *o, char c, int n)
{
  for (int i = 0; i < n; i++)
    out_c(o, c);
}

/* Strips trailing zeros of the fraction as the trim mode says. */
static void trim_fraction(out *o, int *n_frac, trim_mode trim, bool positional)
{
  if (trim == TRIM_NONE || *n_frac == 0)
    return;
  while (o->s[o->len - 1] == '0') {
    o->len--;
    (*n_frac)--;
  }
  if (o->s[o->len - 1] == '.') {
    if (trim == TRIM_LEAVE_ONE_ZERO) {
      out_c(o, '0');
      (*n_frac)++;
    } else if (trim == TRIM_DPT_ZEROS && positional) {
      o->len--;
    }
  }
}

static void format_positional(const fparts *v, const fopts *f, out *o)
{
  char digits[DIGITS_MAX];
  int exp10, n_whole, n_frac = 0;
  int n = dragon4(v, f->mode, f->precision, f->min_digits, digits, &exp10);
  int has_sign = v->negative;

  if (has_sign)
    out_c(o, '-');
  if (exp10 >= 0) {
    n_whole = exp10 + 1;
    for (int i = 0; i < MIN(n, n_whole); i++)
      out_c(o, digits[i]);
    out_n(o, '0', n_whole - n);
    if (n > n_whole) {
      out_c(o, '.');
      for (int i = n_whole; i < n; i++)
        out_c(o, digits[i]);
      n_frac = n - n_whole;
    }
  } else {
    n_whole = 1;
    out_c(o, '0');
    out_c(o, '.');
    out_n(o, '0', -(exp10 + 1));
    for (int i = 0; i < n; i++)
      out_c(o, digits[i]);
    n_frac = n - (exp10 + 1);
  }
  if (f->trim != TRIM_DPT_ZEROS && n_frac == 0)
    out_c(o, '.');

  int want_frac = f->min_digits < 0 ? 0 : f->min_digits;
  if (f->mode == CUT_TOTAL)
    want_frac = f->min_digits - n_whole;
  if (f->trim == TRIM_LEAVE_ONE_ZERO && n_frac == 0) {
    out_c(o, '0');
    n_frac++;
  } else if (f->trim == TRIM_NONE && want_frac > n_frac) {
    out_n(o, '0', want_frac - n_frac);
    n_frac = want_frac;
  }
  trim_fraction(o, &n_frac, f->trim, true);

  if (f->pad_right >= n_frac) {
    if (f->trim == TRIM_DPT_ZEROS && n_frac == 0)
      out_c(o, ' ');
    out_n(o, ' ', f->pad_right - n_frac);
  }
  int shift = f->pad_left - (n_whole + has_sign);
  if (shift > 0 && o->len + shift < FMT_MAX) {
    memmove(o->s + shift, o->s, (size_t)o->len);
    memset(o->s, ' ', (size_t)shift);
    o->len += shift;
  }
}

static void format_scientific(const fparts *v, const fopts *f, out *o)
{
  char digits[DIGITS_MAX];
  int exp10;

  out_n(o, ' ', f->pad_left - (1 + v->negative));
  if (v->negative)
    out_c(o, '-');
  int n = dragon4(v, CUT_TOTAL, f->precision < 0 ? -1 : f->precision + 1,
                  f->min_digits < 0 ? -1 : f->min_digits + 1, digits, &exp10);
  out_c(o, digits[0]);
  int n_frac = n - 1;
  if (n_frac > 0) {
    out_c(o, '.');
    for (int i = 1; i < n; i++)
      out_c(o, digits[i]);
  }
  if (f->trim != TRIM_DPT_ZEROS && n_frac == 0)
    out_c(o, '.');

  int add = f->min_digits < 0 ? 0 : f->min_digits;
  if (f->trim == TRIM_LEAVE_ONE_ZERO && n_frac == 0) {
    out_c(o, '0');
    n_frac++;
  } else if (f->trim == TRIM_NONE && add > n_frac) {
    out_n(o, '0', add - n_frac);
    n_frac = add;
  }
  trim_fraction(o, &n_frac, f->trim, false);

  int e = exp10 < 0 ? -exp10 : exp10;
  int exp_digits = f->exp_digits < 0 ? 2 : MIN(f->exp_digits, 5);
  char ebuf[16];
  snprintf(ebuf, sizeof ebuf, "e%c%0*d", exp10 < 0 ? '-' : '+', exp_digits, e);
  for (const char *c = ebuf; *c; c++)
    out_c(o, *c);
}

/* Dragon4_Positional / Dragon4_Scientific, NUL-terminated in o. */
static void format_float(const fparts *v, const fopts *f, out *o)
{
  o->len = 0;
  if (v->nan || v->inf) {
    if (v->inf && v->negative)
      out_c(o, '-');
    for (const char *c = v->nan ? "nan" : "inf"; *c; c++)
      out_c(o, *c);
  } else if (f->scientific) {
    format_scientific(v, f, o);
  } else {
    format_positional(v, f, o);
  }
  o->s[o->len] = '\0';
}

/* ---- element access ------------------------------------------------------------ */

static fparts elem_fparts(const ts_tensor *t, int64_t i)
{
  switch (t->dtype) {
  case TS_F32: return fparts_f32(((const float *)t->data)[i]);
  case TS_F16: return fparts_f16(((const ts_f16 *)t->data)[i]);
  case TS_BF16: return fparts_bf16(((const ts_bf16 *)t->data)[i]);
  default: return fparts_f64(((const double *)t->data)[i]);
  }
}

/* The float as a double (exact for f32). */
static double elem_f64(const ts_tensor *t, int64_t i)
{
  return ts__load_f64(t->dtype, t->data, i);
}

/* An integer element right-aligned in width (uint64 past INT64_MAX too). */
static int format_int(char *buf, size_t size, int width, const ts_tensor *t, int64_t i)
{
  if (t->dtype == TS_U64)
    return snprintf(buf, size, "%*" PRIu64, width, ((const uint64_t *)t->data)[i]);
  return snprintf(buf, size, "%*" PRId64, width, ts__load_i64(t->dtype, t->data, i));
}

/* ---- strings and variants ------------------------------------------------------ */

/* Python's repr() of a bytes object: b'a', b"it's", b'\x00'. */
static void append_bytes_repr(GString *s, const char *str)
{
  const char *bytes = str ? str : "";
  char quote = strchr(bytes, '\'') && !strchr(bytes, '"') ? '"' : '\'';
  g_string_append_c(s, 'b');
  g_string_append_c(s, quote);
  for (const unsigned char *c = (const unsigned char *)bytes; *c; c++) {
    if (*c == quote || *c == '\\') {
      g_string_append_c(s, '\\');
      g_string_append_c(s, (char)*c);
    } else if (*c == '\t') {
      g_string_append(s, "\\t");
    } else if (*c == '\n') {
      g_string_append(s, "\\n");
    } else if (*c == '\r') {
      g_string_append(s, "\\r");
    } else if (*c < ' ' || *c >= 0x7f) {
      g_string_append_printf(s, "\\x%02x", *c);
    } else {
      g_string_append_c(s, (char)*c);
    }
  }
  g_string_append_c(s, quote);
}

/* A string or variant element as NumPy would show it (no padding). */
static void append_object(GString *s, const ts_tensor *t, int64_t i)
{
  if (t->dtype == TS_STRING)
    append_bytes_repr(s, ((char *const *)t->data)[i]);
  else
    ts__variant_append_name(s, t, i);
}

static bool is_object(ts_dtype dt)
{
  return dt == TS_STRING || dt == TS_VARIANT;
}

/* ---- NumPy scalar str() -------------------------------------------------------- */

static char *scalar_str(const ts_tensor *t)
{
  if (is_object(t->dtype)) {
    GString *s = g_string_new(NULL);
    append_object(s, t, 0);
    return g_string_free(s, FALSE);
  }
  switch (t->dtype) {
  case TS_F32:
  case TS_F64:
  case TS_F16:
  case TS_BF16: {
    long double a = fabsl((long double)elem_f64(t, 0));
    bool positional = a == 0 || (1.e-4L <= a && a < 1.e16L);
    fopts f = { .scientific = !positional, .mode = CUT_TOTAL, .precision = -1, .min_digits = -1,
                .trim = positional ? TRIM_LEAVE_ONE_ZERO : TRIM_DPT_ZEROS,
                .pad_left = -1, .pad_right = -1, .exp_digits = -1 };
    fparts v = elem_fparts(t, 0);
    out o;
    format_float(&v, &f, &o);
    return g_strdup(o.s);
  }
  case TS_BOOL:
    return g_strdup(((const bool *)t->data)[0] ? "True" : "False");
  default:
  {
    char buf[32];
    format_int(buf, sizeof buf, 0, t, 0);
    return g_strdup(buf);
  }
  }
}

/* ---- array2string ------------------------------------------------------------------ */

/* NumPy's FloatingFormat, filled from the printed elements. */
typedef struct float_format {
  bool exp_format;
  int pad_left, pad_right;
  int precision, min_digits, exp_size;
  trim_mode trim;
} float_format;

typedef struct printer {
  const ts_tensor *t;
  bool summarize;
  int64_t stride[TS_MAX_RANK];
  int int_width;
  float_format ff;
  /* scan state */
  bool any_finite, any_nonzero, any_nonfinite, neg_inf;
  double max_abs, min_abs;
} printer;

typedef void (*visit_fn)(printer *p, int64_t i);

/* Calls fn on every element that is printed (the corners when summarising). */
static void visit_shown(printer *p, int axis, int64_t offset, visit_fn fn)
{
  if (axis == p->t->shape.rank) {
    fn(p, offset);
    return;
  }
  int64_t n = p->t->shape.dim[axis];
  bool summary = p->summarize && n > 2 * EDGE_ITEMS;
  for (int64_t k = 0; k < n; k++) {
    if (summary && k == EDGE_ITEMS)
      k = n - EDGE_ITEMS;
    visit_shown(p, axis + 1, offset + k * p->stride[axis], fn);
  }
}

static void scan_int(printer *p, int64_t i)
{
  char buf[32];
  int len = format_int(buf, sizeof buf, 0, p->t, i);
  p->int_width = MAX(p->int_width, len);
}

static void scan_float_range(printer *p, int64_t i)
{
  double x = elem_f64(p->t, i);
  if (!isfinite(x)) {
    p->any_nonfinite = true;
    p->neg_inf |= isinf(x) && x < 0;
    return;
  }
  p->any_finite = true;
  if (x == 0)
    return;
  double a = fabs(x);
  if (!p->any_nonzero || a > p->max_abs)
    p->max_abs = a;
  if (!p->any_nonzero || a < p->min_abs)
    p->min_abs = a;
  p->any_nonzero = true;
}

static void scan_float_widths(printer *p, int64_t i)
{
  fparts v = elem_fparts(p->t, i);
  if (v.nan || v.inf)
    return;
  fopts f = { .scientific = p->ff.exp_format, .mode = CUT_FRACTION, .precision = PRECISION,
              .min_digits = -1, .trim = TRIM_ZEROS, .pad_left = -1, .pad_right = -1,
              .exp_digits = -1 };
  out o;
  format_float(&v, &f, &o);

  const char *dot = strchr(o.s, '.');
  int n_int = (int)(dot - o.s);
  if (p->ff.exp_format) {
    const char *e = strchr(dot, 'e');
    p->ff.precision = MAX(p->ff.precision, (int)(e - dot - 1));
    p->ff.exp_size = MAX(p->ff.exp_size, (int)strlen(e + 1) - 1);
  } else {
    p->ff.pad_right = MAX(p->ff.pad_right, (int)strlen(dot + 1));
  }
  p->ff.pad_left = MAX(p->ff.pad_left, n_int);
}

/* max / min in the array's dtype, as NumPy divides */
static double dtype_ratio(ts_dtype dt, double max, double min)
{
  if (dt == TS_F64)
    return max / min;
  if (dt == TS_F32)
    return (double)((float)max / (float)min);
  double q = (float)max / (float)min;
  return dt == TS_F16 ? ts__f16_to_f32(ts__f64_to_f16(q)) : ts__bf16_to_f32(ts__f64_to_bf16(q));
}

static void float_format_fill(printer *p)
{
  float_format *ff = &p->ff;
  bool exp_format = false;
  visit_shown(p, 0, 0, scan_float_range);
  if (p->any_nonzero) {
    /* NumPy divides in the array's dtype */
    double ratio = dtype_ratio(p->t->dtype, p->max_abs, p->min_abs);
    exp_format = p->max_abs >= 1.e8 || p->min_abs < 0.0001 || ratio > 1000.;
  }
  *ff = (float_format){ .exp_format = exp_format, .exp_size = -1, .trim = TRIM_ZEROS,
                        .precision = PRECISION };
  if (p->any_finite) {
    if (ff->exp_format)
      ff->precision = 0;
    visit_shown(p, 0, 0, scan_float_widths);
    if (ff->exp_format) {
      ff->trim = TRIM_NONE;
      ff->min_digits = ff->precision;
      ff->pad_right = ff->exp_size + 2 + ff->precision;
    }
  }
  if (p->any_nonfinite) {
    int offset = ff->pad_right + 1;
    ff->pad_left = MAX(ff->pad_left, MAX(3 - offset, 3 + p->neg_inf - offset));
  }
}

/* One element as NumPy's format function prints it, into o. */
static void format_number(const printer *p, int64_t i, out *o)
{
  const ts_tensor *t = p->t;
  if (t->dtype == TS_BOOL) {
    o->len = snprintf(o->s, FMT_MAX, "%s", ((const bool *)t->data)[i] ? " True" : "False");
  } else if (!ts_dtype_is_float(t->dtype)) {
    o->len = format_int(o->s, FMT_MAX, p->int_width, t, i);
  } else {
    const float_format *ff = &p->ff;
    fparts v = elem_fparts(t, i);
    if (v.nan || v.inf) {
      const char *s = v.nan ? "nan" : v.negative ? "-inf" : "inf";
      int pad = ff->pad_left + ff->pad_right + 1 - (int)strlen(s);
      o->len = snprintf(o->s, FMT_MAX, "%*s%s", MAX(pad, 0), "", s);
      return;
    }
    fopts f = { .scientific = ff->exp_format, .mode = CUT_FRACTION, .precision = ff->precision,
                .min_digits = ff->min_digits, .trim = ff->trim, .pad_left = ff->pad_left,
                .pad_right = ff->exp_format ? -1 : ff->pad_right,
                .exp_digits = ff->exp_format ? ff->exp_size : -1 };
    format_float(&v, &f, o);
  }
}

static void format_elem(const printer *p, int64_t i, GString *word)
{
  g_string_truncate(word, 0);
  if (is_object(p->t->dtype)) {
    append_object(word, p->t, i);
    return;
  }
  out o;
  format_number(p, i, &o);
  g_string_append_len(word, o.s, o.len);
}

static void append_spaces(GString *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    g_string_append_c(s, ' ');
}

/* _extendLine: wraps before word if the line would pass width. */
static void extend_line(GString *s, GString *line, const char *word, size_t width, size_t indent)
{
  if (line->len + strlen(word) > width && line->len > indent) {
    size_t end = line->len;
    while (end > 0 && line->str[end - 1] == ' ')
      end--;
    g_string_append_len(s, line->str, (gssize)end);
    g_string_append_c(s, '\n');
    g_string_truncate(line, 0);
    append_spaces(line, indent);
  }
  g_string_append(line, word);
}

/* _formatArray's recurser for the block at axis starting at element offset;
 * the hanging indent is one space per open bracket. */
static GString *format_block(const printer *p, int axis, int64_t offset)
{
  int rank = p->t->shape.rank;
  size_t indent = (size_t)axis + 1;
  size_t width = (size_t)(LINE_WIDTH - axis);
  int64_t n = p->t->shape.dim[axis];
  bool summary = p->summarize && n > 2 * EDGE_ITEMS;
  GString *s = g_string_new(NULL);

  if (axis == rank - 1) {
    size_t elem_width = width - 1;
    GString *line = g_string_new(NULL);
    GString *word = g_string_new(NULL);
    append_spaces(line, indent);
    for (int64_t k = 0; k < n; k++) {
      if (summary && k == EDGE_ITEMS) {
        extend_line(s, line, "...", elem_width, indent);
        g_string_append_c(line, ' ');
        k = n - EDGE_ITEMS;
      }
      format_elem(p, offset + k * p->stride[axis], word);
      extend_line(s, line, word->str, elem_width, indent);
      if (k < n - 1)
        g_string_append_c(line, ' ');
    }
    g_string_append_len(s, line->str, (gssize)line->len);
    g_string_free(line, TRUE);
    g_string_free(word, TRUE);
  } else {
    int n_newlines = rank - axis - 1;
    for (int64_t k = 0; k < n; k++) {
      if (summary && k == EDGE_ITEMS) {
        append_spaces(s, indent);
        g_string_append(s, "...");
        for (int j = 0; j < n_newlines; j++)
          g_string_append_c(s, '\n');
        k = n - EDGE_ITEMS;
      }
      GString *nested = format_block(p, axis + 1, offset + k * p->stride[axis]);
      append_spaces(s, indent);
      g_string_append_len(s, nested->str, (gssize)nested->len);
      g_string_free(nested, TRUE);
      for (int j = 0; k < n - 1 && j < n_newlines; j++)
        g_string_append_c(s, '\n');
    }
  }

  /* the first line's hanging indent becomes the opening bracket */
  g_string_erase(s, 0, (gssize)indent);
  g_string_prepend_c(s, '[');
  g_string_append_c(s, ']');
  return s;
}

/* A graph's tensor: no values, whatever its size (an empty one has no backend). */
static bool is_symbolic(const ts_tensor *t)
{
  return t->node != NULL || t->backend == NULL;
}

static char *format_values(const ts_tensor *t);

char *ts_tensor_format_values(const ts_tensor *t)
{
  if (!t)
    return NULL;
  if (is_symbolic(t))
    return g_strdup("<symbolic>");
  if (ts__host_visible(t->backend))
    return format_values(t);
  /* on a device the host cannot read: print a host copy */
  ts_scope *scope = ts_scope_begin();
  const ts_tensor *host = ts__tensor_host((ts_loc){ 0 }, t);
  char *s = host ? format_values(host) : g_strdup("<unreadable>");
  ts_scope_end(scope);
  return s;
}

static char *format_values(const ts_tensor *t)
{
  if (t->shape.rank == 0)
    return scalar_str(t);
  if (t->size == 0)
    return g_strdup("[]");

  printer p = { .t = t, .summarize = t->size > THRESHOLD };
  for (int axis = t->shape.rank - 1; axis >= 0; axis--) /* bounded by t->size > 0 */
    ts__shape_product(t->shape.dim + axis + 1, t->shape.rank - axis - 1, &p.stride[axis]);
  if (ts_dtype_is_float(t->dtype))
    float_format_fill(&p);
  else if (t->dtype != TS_BOOL && !is_object(t->dtype))
    visit_shown(&p, 0, 0, scan_int);
  return g_string_free(format_block(&p, 0, 0), FALSE);
}

/* PREFIX(values, shape=..., dtype=...), the values on a line of their own
 * when they take several (as TensorFlow's numpy_text does). */
static char *tensor_string(const ts_tensor *t, const char *prefix)
{
  if (!t)
    return NULL;
  if (ts__is_none(t))
    return g_strdup("None");
  char shape[TS_INFO_STR];
  if (t->node) /* as TensorFlow prints graph tensors: the node's name and output */
    return g_strdup_printf("Tensor(\"%s:%d\", shape=%s, dtype=%s)", t->name,
                           t->node_output, ts__shape_str(shape, t->shape),
                           ts_dtype_name(t->dtype));
  char *values = ts_tensor_format_values(t);
  GString *s = g_string_new(prefix);
  g_string_append_c(s, '(');
  if (strchr(values, '\n'))
    g_string_append_c(s, '\n');
  g_string_append(s, values);
  g_string_append_printf(s, ", shape=%s, dtype=%s)", ts__shape_str(shape, t->shape),
                         ts_dtype_name(t->dtype));
  g_free(values);
  return g_string_free(s, FALSE);
}

char *ts_tensor_to_string(const ts_tensor *t)
{
  return tensor_string(t, "Tensor");
}

char *ts_tensor_str(const ts_tensor *t)
{
  return tensor_string(t, "tf.Tensor");
}

/* Each result's text by `one`, as a Python tuple when there are several;
 * none: None. */
static char *results_string(ts_tensor *const *results, int n, bool tuple,
                            char *(*one)(const ts_tensor *))
{
  if (n == 0)
    return strdup("None");
  if (n == 1 && !tuple)
    return one(results[0]);
  GString *s = g_string_new("(");
  for (int i = 0; i < n; i++) {
    char *text = one(results[i]);
    g_string_append_printf(s, "%s%s", i ? ", " : "", text);
    free(text);
  }
  g_string_append(s, n == 1 ? ",)" : ")"); /* Python's tuple of one */
  char *text = strdup(s->str);
  g_string_free(s, TRUE);
  return text;
}

/* The index of the first NULL result, or n. */
static int first_null(ts_tensor *const *results, int n)
{
  int i = 0;
  while (i < n && results[i])
    i++;
  return i;
}

static char *type_string(const ts_tensor *t)
{
  return ts_shape_dtype_string(t->dtype, t->shape);
}

char *ts_results_to_string(ts_tensor *const *results, int n, bool tuple)
{
  TS_CHECK_ARG((results != NULL || n == 0) && n >= 0 && first_null(results, n) == n, NULL);
  return results_string(results, n, tuple, ts_tensor_to_string);
}

char *ts_results_type_string(ts_tensor *const *results, int n, bool tuple)
{
  TS_CHECK_ARG((results != NULL || n == 0) && n >= 0 && first_null(results, n) == n, NULL);
  return results_string(results, n, tuple, type_string);
}
