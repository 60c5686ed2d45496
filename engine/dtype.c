/* dtype.c — dtypes, shapes and their names. */
#include "engine-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const struct {
  const char *name;       /* NumPy's (bfloat16: ml_dtypes', as TensorFlow's) */
  const char *short_name; /* ours */
  size_t size;
  bool is_float;
  bool is_integer;
  bool is_signed;
} dtype_info[TS_DTYPE_COUNT] = {
  [TS_F32] = { "float32", "f32", 4, true, false, true },
  [TS_F64] = { "float64", "f64", 8, true, false, true },
  [TS_I32] = { "int32", "i32", 4, false, true, true },
  [TS_I64] = { "int64", "i64", 8, false, true, true },
  [TS_U8] = { "uint8", "u8", 1, false, true, false },
  [TS_BOOL] = { "bool", "bool", sizeof(bool), false, false, false },
  [TS_I8] = { "int8", "i8", 1, false, true, true },
  [TS_I16] = { "int16", "i16", 2, false, true, true },
  [TS_U16] = { "uint16", "u16", 2, false, true, false },
  [TS_U32] = { "uint32", "u32", 4, false, true, false },
  [TS_U64] = { "uint64", "u64", 8, false, true, false },
  [TS_F16] = { "float16", "f16", 2, true, false, true },
  [TS_BF16] = { "bfloat16", "bf16", 2, true, false, true },
  [TS_STRING] = { "string", "str", sizeof(char *), false, false, false },
  [TS_VARIANT] = { "variant", "variant", sizeof(void *), false, false, false },
};

_Static_assert(TS_DTYPE_COUNT == 15, "dtype_info needs a row for every dtype");
_Static_assert(sizeof(bool) == 1, "bool tensors are stored one byte per element");

static bool dtype_valid(ts_dtype dtype)
{
  return (unsigned)dtype < TS_DTYPE_COUNT;
}

char *ts__dtype_names(char *buf, unsigned mask)
{
  int n = __builtin_popcount(mask & ((1u << TS_DTYPE_COUNT) - 1)), k = 0;
  buf[0] = '\0';
  for (int d = 0; d < TS_DTYPE_COUNT; d++) {
    if (!(mask & (1u << d)))
      continue;
    size_t len = strlen(buf);
    snprintf(buf + len, TS_DTYPE_NAMES_STR - len, "%s%s",
             k == 0 ? "" : k == n - 1 ? " or " : ", ", dtype_info[d].name);
    k++;
  }
  return buf;
}

char *ts__takes_str(char *buf, unsigned mask, ts_dtype got)
{
  char ok[TS_DTYPE_NAMES_STR];
  snprintf(buf, TS_TAKES_STR, "takes %s tensors, got %s", ts__dtype_names(ok, mask),
           ts_dtype_name(got));
  return buf;
}

bool ts__dtype_valid(ts_dtype dtype)
{
  return dtype_valid(dtype);
}

bool ts__shape_valid(ts_shape shape, bool unknown_ok)
{
  if (shape.rank < 0 || shape.rank > TS_MAX_RANK)
    return false;
  for (int i = 0; i < shape.rank; i++)
    if (shape.dim[i] < (unknown_ok ? -1 : 0))
      return false;
  return true;
}

const char *ts_dtype_name(ts_dtype dtype)
{
  return dtype_valid(dtype) ? dtype_info[dtype].name : "invalid";
}

const char *ts_dtype_short_name(ts_dtype dtype)
{
  return dtype_valid(dtype) ? dtype_info[dtype].short_name : "invalid";
}

size_t ts_dtype_size(ts_dtype dtype)
{
  return dtype_valid(dtype) ? dtype_info[dtype].size : 0;
}

bool ts_dtype_is_float(ts_dtype dtype)
{
  return dtype_valid(dtype) && dtype_info[dtype].is_float;
}

bool ts_dtype_is_integer(ts_dtype dtype)
{
  return dtype_valid(dtype) && dtype_info[dtype].is_integer;
}

bool ts_dtype_from_name(const char *name, ts_dtype *out)
{
  if (!name)
    return false;
  for (int d = 0; d < TS_DTYPE_COUNT; d++) {
    if (strcmp(name, dtype_info[d].name) == 0 || strcmp(name, dtype_info[d].short_name) == 0) {
      *out = (ts_dtype)d;
      return true;
    }
  }
  return false;
}

/* The integer dtype of a signedness and width in bytes (1, 2, 4, 8). */
static ts_dtype int_dtype(bool is_signed, size_t size)
{
  static const ts_dtype sint[] = { TS_I8, TS_I16, TS_I32, TS_I64 }, uint[] = { TS_U8, TS_U16, TS_U32, TS_U64 };
  int k = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
  return is_signed ? sint[k] : uint[k];
}

/* NumPy's promotion, where the engine promotes at all (TS_OPF_PROMOTE):
 * string and variant win, then floats over integers (the engine's one
 * departure, PyTorch's rule: an integer with a float gives that float,
 * int32 with float32 float32, where NumPy widens), the wider of two floats
 * (float16 with bfloat16: float32), the wider of two integers of a
 * signedness, a signed integer wider than the unsigned one, else the next
 * wider signed one (uint64 with a signed integer: float64); bool loses. */
ts_dtype ts_dtype_promote(ts_dtype a, ts_dtype b)
{
  if (!dtype_valid(a))
    return b;
  if (!dtype_valid(b) || a == b)
    return a;
  if (a == TS_VARIANT || b == TS_VARIANT)
    return TS_VARIANT;
  if (a == TS_STRING || b == TS_STRING)
    return TS_STRING;
  if (a == TS_BOOL || b == TS_BOOL)
    return a == TS_BOOL ? b : a;
  bool fa = dtype_info[a].is_float, fb = dtype_info[b].is_float;
  size_t sa = dtype_info[a].size, sb = dtype_info[b].size;
  if (fa != fb)
    return fa ? a : b;
  if (fa)
    return sa != sb ? (sa > sb ? a : b) : TS_F32; /* f16 and bf16 */
  bool ia = dtype_info[a].is_signed, ib = dtype_info[b].is_signed;
  if (ia == ib)
    return sa >= sb ? a : b;
  size_t s_signed = ia ? sa : sb, s_unsigned = ia ? sb : sa;
  if (s_signed > s_unsigned)
    return ia ? a : b;
  return s_unsigned == 8 ? TS_F64 : int_dtype(true, 2 * s_unsigned);
}

float ts_f16_bits_to_float(uint16_t bits)
{
  return ts__f16_to_f32((ts_f16){ bits });
}

float ts_bf16_bits_to_float(uint16_t bits)
{
  return ts__bf16_to_f32((ts_bf16){ bits });
}

bool ts__shape_product(const int64_t *dims, int n, int64_t *out)
{
  int64_t p = 1;
  bool overflow = false;
  for (int i = 0; i < n; i++) {
    if (dims[i] < 0)
      return false;
    if (dims[i] == 0) { /* zero wins over any overflow of the other dims */
      *out = 0;
      return true;
    }
    overflow = overflow || __builtin_mul_overflow(p, dims[i], &p);
  }
  if (overflow)
    return false;
  *out = p;
  return true;
}

int64_t ts__dims_prod(ts_shape s, int from, int to)
{
  int64_t n = 0;
  bool ok = ts__shape_product(s.dim + from, to - from, &n);
  g_assert(ok); /* an allocated tensor's shape is known and fits */
  return n;
}

ts_range_status ts__range_count_i64(int64_t start, int64_t limit, int64_t delta, int64_t *n)
{
  __extension__ typedef __int128 wide;
  *n = 0;
  if (delta == 0)
    return TS_RANGE_ZERO_DELTA;
  wide span = (wide)limit - start; /* exact: no wrapping, whatever the dtype */
  if (delta > 0 ? span <= 0 : span >= 0)
    return TS_RANGE_OK;
  wide q = span / delta + (span % delta != 0); /* same signs: the ceiling */
  if (q > INT64_MAX)
    return TS_RANGE_TOO_LARGE;
  *n = (int64_t)q;
  return TS_RANGE_OK;
}

ts_range_status ts__range_count_f64(double start, double limit, double delta, int64_t *n)
{
  *n = 0;
  if (!isfinite(start) || !isfinite(limit) || !isfinite(delta))
    return TS_RANGE_NOT_FINITE;
  if (delta == 0)
    return TS_RANGE_ZERO_DELTA;
  double q = ceil((limit - start) / delta);
  if (!(q > 0))
    return TS_RANGE_OK;
  if (!(q < 0x1p62))
    return TS_RANGE_TOO_LARGE;
  *n = (int64_t)q;
  return TS_RANGE_OK;
}

int64_t ts_shape_size(ts_shape shape)
{
  if (shape.rank == TS_RANK_UNKNOWN)
    return -1;
  if (shape.rank < 0 || shape.rank > TS_MAX_RANK)
    return TS_SHAPE_SIZE_INVALID;
  for (int i = 0; i < shape.rank; i++)
    if (shape.dim[i] < 0)
      return -1;
  int64_t n;
  return ts__shape_product(shape.dim, shape.rank, &n) ? n : TS_SHAPE_SIZE_INVALID;
}

bool ts_shape_equal(ts_shape a, ts_shape b)
{
  /* a rank outside [TS_RANK_UNKNOWN, TS_MAX_RANK] is no shape: equal to none */
  if (a.rank != b.rank || a.rank < TS_RANK_UNKNOWN || a.rank > TS_MAX_RANK)
    return false;
  for (int i = 0; i < a.rank; i++)
    if (a.dim[i] != b.dim[i])
      return false;
  return true;
}

/* Appends s at buf[n] (buf holds TS_INFO_STR); returns the new length.
 * Hand written, not snprintf: signatures are spelled on every graph call. */
static int put(char *buf, int n, const char *s)
{
  while (*s && n < TS_INFO_STR - 1)
    buf[n++] = *s++;
  buf[n] = '\0';
  return n;
}

static int put_int(char *buf, int n, int64_t v)
{
  char digits[24];
  int k = (int)sizeof digits - 1;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  digits[k] = '\0';
  do
    digits[--k] = (char)('0' + u % 10);
  while ((u /= 10) && k > 1);
  if (v < 0)
    digits[--k] = '-';
  return put(buf, n, digits + k);
}

/* Writes open and open2, the dims of shape separated by sep (unknown ones
 * as `unknown`), then close. */
static char *dims_str(char *buf, const char *open, const char *open2, ts_shape shape,
                      const char *sep, const char *unknown, const char *close)
{
  if (shape.rank == TS_RANK_UNKNOWN) { /* f32[...], (...) */
    put(buf, put(buf, put(buf, put(buf, 0, open), open2), "..."), close);
    return buf;
  }
  int rank = shape.rank < 0 ? 0 : shape.rank > TS_MAX_RANK ? TS_MAX_RANK : shape.rank;
  int n = put(buf, put(buf, 0, open), open2);
  for (int i = 0; i < rank; i++) {
    if (i)
      n = put(buf, n, sep);
    n = shape.dim[i] < 0 ? put(buf, n, unknown) : put_int(buf, n, shape.dim[i]);
  }
  put(buf, n, close);
  return buf;
}

char *ts__info_str(char *buf, ts_dtype dtype, ts_shape shape)
{
  return dims_str(buf, ts_dtype_short_name(dtype), "[", shape, ",", "?", "]");
}

/* TensorFlow's spelling: (2, 3), (3,), (), (None, 784), <unknown>. */
char *ts__shape_str(char *buf, ts_shape shape)
{
  if (shape.rank == TS_RANK_UNKNOWN) {
    put(buf, 0, "<unknown>");
    return buf;
  }
  return dims_str(buf, "(", "", shape, ", ", "None", shape.rank == 1 ? ",)" : ")");
}

/* Our spelling in messages, unknown dims as everywhere else: (?, 784). */
char *ts__shape_msg_str(char *buf, ts_shape shape)
{
  return dims_str(buf, "(", "", shape, ", ", "?", shape.rank == 1 ? ",)" : ")");
}

char *ts_shape_dtype_string(ts_dtype dtype, ts_shape shape)
{
  char buf[TS_INFO_STR];
  return strdup(ts__info_str(buf, dtype, shape));
}

bool ts__axis(int64_t axis, int rank, int *out)
{
  if (axis < -rank || axis >= rank)
    return false;
  *out = (int)(axis < 0 ? axis + rank : axis);
  return true;
}

bool ts__broadcast_shapes(ts_shape a, ts_shape b, ts_shape *out)
{
  ts_shape r = { .rank = a.rank > b.rank ? a.rank : b.rank };
  for (int i = 0; i < r.rank; i++) {
    int ia = i - (r.rank - a.rank), ib = i - (r.rank - b.rank);
    int64_t da = ia >= 0 ? a.dim[ia] : 1;
    int64_t db = ib >= 0 ? b.dim[ib] : 1;
    if (da == db)
      r.dim[i] = da;
    else if (da == 1)
      r.dim[i] = db;
    else if (db == 1)
      r.dim[i] = da;
    else if (da < 0 || db < 0)
      r.dim[i] = da < 0 ? db : da; /* unknown vs n: n (or an error at run time) */
    else
      return false;
  }
  *out = r;
  return true;
}
