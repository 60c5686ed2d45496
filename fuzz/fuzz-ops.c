/* fuzz-ops.c — a random op fuzzer over the public C API (tracescope.h).
 *
 * The input drives a small interpreter.  Its header makes 1-3 input tensors
 * and 0-2 variables; the rest is a program of up to MAX_OPS instructions,
 * each an op (creation, cast, reshape, transpose, concat, split, slice,
 * gather, tile, pad, pack, unpack, top_k, sort, argsort, cumsum, cumprod,
 * reverse, one_hot,
 * every binary and unary op, where, reductions, argmax, matmul,
 * softmax, cross entropy, conv2d, conv_transpose, max_pool2d, print,
 * variables, tensor arrays and their sequence ops, optionals, cond, while)
 * on registers, with random attributes: dtypes including invalid numbers,
 * ranks 0-8 and invalid, dims 0-5 and huge, strides, axes, NULL inputs.
 *
 * Every program runs eagerly; then (chosen by the header) as the body of a
 * ts_function called in graph mode, traced with an input signature whose
 * dims are unknown (-1), or both.  After every op the result must be a
 * tensor, or NULL with an error that has a message; anything else, a crash,
 * a sanitizer report, a leak or a hang is a finding.
 *
 * Work is bounded: an op whose output would hold more than MAX_ELEMENTS
 * (or do more than MAX_WORK multiply-adds) when the engine would
 * legitimately compute it is skipped; requests the engine must refuse
 * (more than 64 GiB, overflowing shapes) still run.  The eager run decides
 * which ops run, and the traced runs follow its decisions, so a graph runs
 * the same ops on the same concrete shapes. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N_REGS 12
#define MAX_INPUTS 3
#define MAX_VARS 2
#define MAX_OPS 48
#define MAX_ELEMENTS ((int64_t)1 << 20)
#define MAX_WORK ((int64_t)1 << 26)
#define MAX_TOTAL ((int64_t)1 << 23)             /* elements made per run */
#define ALWAYS_REFUSED_BYTES ((int64_t)1 << 36)  /* tensor.c refuses more */
#define TA_MAX_INDEX 31

/* ---- reading the input --------------------------------------------------- */

typedef struct reader {
  const uint8_t *p;
  size_t n, pos;
} reader;

static uint8_t rd_u8(reader *r)
{
  return r->pos < r->n ? r->p[r->pos++] : 0;
}

static uint64_t rd_u64(reader *r)
{
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v = v << 8 | rd_u8(r);
  return v;
}

static bool rd_bool(reader *r)
{
  return rd_u8(r) & 1;
}

/* Mostly numeric dtypes, sometimes string, variant or an invalid number. */
static ts_dtype rd_dtype(reader *r)
{
  static const int invalid[] = { TS_DTYPE_COUNT, -1, 100, 0x7fffffff };
  uint8_t b = rd_u8(r);
  if (b < 200)
    return (ts_dtype)(b % TS_NUMERIC_DTYPE_COUNT);
  if (b < 220)
    return b & 1 ? TS_STRING : TS_VARIANT;
  return (ts_dtype)invalid[b % 4];
}

static int64_t rd_dim(reader *r)
{
  static const int64_t odd[] = { 1 << 20, (int64_t)1 << 31, (int64_t)1 << 40, INT64_MAX,
                                 -1, -2, INT64_MIN, 6, 64, 1000, (int64_t)1 << 32, 7 };
  uint8_t b = rd_u8(r);
  if (b < 224)
    return b % 6;
  return odd[b % 12];
}

/* Ranks 0..8, sometimes invalid ones. */
static ts_shape rd_shape(reader *r)
{
  ts_shape s = { 0 };
  uint8_t b = rd_u8(r);
  int rank = b % 16;
  s.rank = rank <= 4 ? rank : rank <= 8 ? rank - 4 : rank <= 12 ? rank - 4 : rank == 13 ? 9 : rank == 14 ? -1 : 0x7fffffff;
  int n = s.rank < 0 ? 0 : s.rank > TS_MAX_RANK ? TS_MAX_RANK : s.rank;
  for (int i = 0; i < n; i++)
    s.dim[i] = rd_dim(r);
  return s;
}

/* A valid, small shape (for inputs and constants). */
static ts_shape rd_small_shape(reader *r)
{
  ts_shape s = { .rank = rd_u8(r) % 5 };
  for (int i = 0; i < s.rank; i++)
    s.dim[i] = rd_u8(r) % 6;
  return s;
}

static int64_t rd_index(reader *r)
{
  static const int64_t v[] = { -9, -3, -2, -1, 0, 1, 2, 3, 4, 5, 7, 8, INT64_MAX, INT64_MIN,
                               (int64_t)1 << 40, 0x7fffffff };
  uint8_t b = rd_u8(r);
  return b < 192 ? (int64_t)(b % 9) - 2 : v[b % 16];
}

static int rd_int(reader *r)
{
  static const int v[] = { -1, 0, 1, 2, 3, 4, 5, -2, 8, 9, 0x7fffffff, -0x7fffffff - 1 };
  return v[rd_u8(r) % 12];
}

static ts_ints rd_ints(reader *r)
{
  ts_ints s = { 0 };
  uint8_t b = rd_u8(r) % 16;
  s.n = b <= 8 ? b : b == 9 ? -1 : b == 10 ? 9 : b == 11 ? -5 : b % 4;
  int n = s.n < 0 ? 0 : s.n > TS_MAX_RANK ? TS_MAX_RANK : s.n;
  for (int i = 0; i < n; i++)
    s.v[i] = rd_index(r);
  return s;
}

static double rd_double(reader *r)
{
  static const double v[] = { 0, 1, -1, 0.5, 2, 3, 10, -7, 1e6, 1e300, -1e300, NAN, INFINITY,
                              -INFINITY, 1e-9, -0.0, 0.25, 5, 1e-300, 4.5 };
  uint8_t b = rd_u8(r);
  if (b == 255) {
    uint64_t bits = rd_u64(r);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
  }
  return v[b % 20];
}

/* ---- shape arithmetic for the work bounds --------------------------------- */

#define UNKNOWN (-1)

static int64_t mul_sat(int64_t a, int64_t b)
{
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* a + b for element counts: UNKNOWN if either is, saturating (traced
 * tensors may be huge). */
static int64_t add_sat(int64_t a, int64_t b)
{
  int64_t r;
  if (a == UNKNOWN || b == UNKNOWN)
    return UNKNOWN;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/* Elements of a tensor shape: UNKNOWN for unknown dims. */
static int64_t shape_elements(ts_shape s)
{
  if (s.rank < 0 || s.rank > TS_MAX_RANK)
    return 0;
  int64_t n = 1;
  for (int i = 0; i < s.rank; i++) {
    if (s.dim[i] < 0)
      return UNKNOWN;
    n = mul_sat(n, s.dim[i]);
  }
  return n;
}

/* Elements a creation op asked for dtype and shape would make: 0 if the
 * engine must refuse the request (bad shape or dtype, overflow, too big). */
static int64_t request_elements(ts_dtype dtype, ts_shape s)
{
  if ((unsigned)dtype >= TS_DTYPE_COUNT || s.rank < 0 || s.rank > TS_MAX_RANK)
    return 0;
  int64_t n = 1;
  for (int i = 0; i < s.rank; i++) {
    if (s.dim[i] < 0)
      return 0;
    if (__builtin_mul_overflow(n, s.dim[i], &n))
      return 0;
  }
  int64_t bytes;
  if (__builtin_mul_overflow(n, (int64_t)ts_dtype_size(dtype), &bytes) ||
      bytes > ALWAYS_REFUSED_BYTES)
    return 0;
  return n;
}

/* Elements of the NumPy broadcast of shapes (0 if they do not broadcast,
 * UNKNOWN if a dim is unknown). */
static int64_t broadcast_elements(const ts_shape *s, int n)
{
  int rank = 0;
  for (int i = 0; i < n; i++) {
    if (s[i].rank < 0 || s[i].rank > TS_MAX_RANK)
      return 0;
    rank = s[i].rank > rank ? s[i].rank : rank;
  }
  int64_t total = 1;
  for (int a = 0; a < rank; a++) {
    int64_t d = 1;
    for (int i = 0; i < n; i++) {
      int k = s[i].rank - rank + a;
      int64_t e = k >= 0 ? s[i].dim[k] : 1;
      if (e < 0)
        return UNKNOWN;
      if (e != 1 && d != 1 && e != d)
        return 0;
      d = e != 1 ? e : d;
    }
    total = mul_sat(total, d);
  }
  return total;
}

/* ---- the interpreter ------------------------------------------------------- */

enum { MODE_EAGER, MODE_GRAPH, MODE_SIGNATURE };
enum { DECIDE_NONE, DECIDE_RUN, DECIDE_SKIP };

typedef struct fuzz_state {
  const uint8_t *program;
  size_t program_len;
  int mode;
  ts_tensor *inputs[MAX_INPUTS];
  int n_inputs;
  ts_tensor *vars[MAX_VARS];
  int n_vars;
  uint8_t decision[MAX_OPS];
  int n_ops; /* ops the eager run got through; traced runs stop there too */
  /* per run */
  ts_tensor *reg[N_REGS];
  int op_index;
  int64_t made;
} fuzz_state;

static fuzz_state *current;

/* Whether op number st->op_index runs.  Eagerly: when its output (elements)
 * and work fit, or when an input is missing (the cheap error path).
 * Traced: as the eager run decided, else by the symbolic shapes. */
static bool fits(fuzz_state *st, bool have_inputs, int64_t elements, int64_t work)
{
  /* negative: unknown (or derived from an unknown count) */
  bool small = elements >= 0 && elements <= MAX_ELEMENTS && work >= 0 && work <= MAX_WORK;
  uint8_t *d = &st->decision[st->op_index];
  if (st->mode == MODE_EAGER) {
    *d = !have_inputs ? DECIDE_NONE : small ? DECIDE_RUN : DECIDE_SKIP;
    return !have_inputs || small;
  }
  if (*d != DECIDE_NONE)
    return *d == DECIDE_RUN;
  return !have_inputs || small;
}

static ts_tensor *reg_get(fuzz_state *st, reader *r)
{
  uint8_t b = rd_u8(r);
  return b < 240 ? st->reg[b % N_REGS] : NULL;
}

static void reg_set(fuzz_state *st, reader *r, ts_tensor *t)
{
  uint8_t b = rd_u8(r);
  st->reg[b % N_REGS] = t;
  if (t) {
    int64_t n = ts_tensor_size(t); /* symbolic: may be huge, or -1 */
    st->made += n <= 0 ? 1 : n > MAX_TOTAL ? MAX_TOTAL : n;
  }
}

static int64_t elements_of(const ts_tensor *t)
{
  return t ? shape_elements(ts_tensor_shape(t)) : 0;
}

/* A fresh numeric constant of dtype and shape with bytes from the program. */
static ts_tensor *make_constant(reader *r, ts_dtype dtype, ts_shape shape)
{
  int64_t n = shape_elements(shape);
  size_t esize = ts_dtype_size(dtype);
  size_t bytes = (size_t)n * esize;
  uint8_t *buf = malloc(bytes ? bytes : 1);
  if (!buf)
    return NULL;
  uint8_t pattern[16];
  for (int i = 0; i < 16; i++)
    pattern[i] = rd_u8(r);
  for (size_t i = 0; i < bytes; i++)
    buf[i] = pattern[i % 16];
  if (dtype == TS_BOOL)
    for (size_t i = 0; i < bytes; i++)
      buf[i] &= 1;
  ts_tensor *t = ts_constant(dtype, shape, buf);
  free(buf);
  return t;
}

static ts_tensor *creation_op(fuzz_state *st, reader *r)
{
  uint8_t which = rd_u8(r) % 16;
  ts_dtype dtype = rd_dtype(r);
  ts_shape shape = rd_shape(r);
  ts_tensor *x = reg_get(st, r);
  double a = rd_double(r), b = rd_double(r), c = rd_double(r);
  int64_t rows = rd_dim(r), cols = rd_dim(r);
  uint64_t seed = rd_u8(r);
  int64_t n = request_elements(dtype, shape);
  switch (which) {
  case 0:
    return fits(st, true, n, n) ? fuzz_check(ts_zeros(dtype, shape), "zeros") : NULL;
  case 1:
    return fits(st, true, n, n) ? fuzz_check(ts_ones(dtype, shape), "ones") : NULL;
  case 2:
    return fits(st, true, n, n) ? fuzz_check(ts_tensor_new(dtype, shape), "tensor_new") : NULL;
  case 3: {
    ts_dtype numeric = (ts_dtype)((unsigned)dtype % TS_NUMERIC_DTYPE_COUNT);
    ts_shape small = { .rank = shape.rank < 0 ? 0 : shape.rank > 4 ? 4 : shape.rank };
    for (int i = 0; i < small.rank; i++)
      small.dim[i] = shape.dim[i] < 0 ? 0 : shape.dim[i] % 6;
    return fits(st, true, 0, 0) ? fuzz_check(make_constant(r, numeric, small), "constant") : NULL;
  }
  case 4: {
    uint64_t bits = seed * 0x9e3779b97f4a7c15u;
    switch (rows & 7) {
    case 0: return fuzz_check(ts_scalar_f32((float)a), "scalar_f32");
    case 1: return fuzz_check(ts_scalar_f64(b), "scalar_f64");
    case 2: return fuzz_check(ts_scalar_i32((int32_t)bits), "scalar_i32");
    case 3: return fuzz_check(ts_scalar_i64((int64_t)bits), "scalar_i64");
    case 4: return fuzz_check(ts_scalar_bool(bits & 1), "scalar_bool");
    case 5: return fuzz_check(ts_scalar_string(seed & 1 ? "" : "fuzz %s %n"), "scalar_string");
    default: return fuzz_check(ts_scalar_i32(rd_int(r)), "scalar_i32");
    }
  }
  case 5:
    return fits(st, true, n, n)
             ? fuzz_check(ts_random_uniform(dtype, shape, a, b, seed), "random_uniform")
             : NULL;
  case 6:
    return fits(st, true, n, n)
             ? fuzz_check(ts_random_normal(dtype, shape, a, b, seed), "random_normal")
             : NULL;
  case 7: {
    ts_shape s2 = TS_SHAPE(rows, cols);
    int64_t e = request_elements(dtype, s2);
    return fits(st, true, e, e) ? fuzz_check(ts_eye(dtype, rows, cols), "eye") : NULL;
  }
  case 8: {
    double count = ceil((b - a) / c);
    int64_t e = 0;
    if (isfinite(count) && count > 0 && count < 0x1p62) {
      e = request_elements(dtype, TS_SHAPE((int64_t)count));
      /* the engine may make i64 ranges of any float count; f32 rounds */
    }
    return fits(st, true, e, e) ? fuzz_check(ts_range(dtype, a, b, c), "range") : NULL;
  }
  case 9:
    return fits(st, x != NULL, n, n) ? fuzz_check(ts_fill(shape, x), "fill") : NULL;
  case 10:
    return fits(st, x != NULL, elements_of(x), elements_of(x))
             ? fuzz_check(ts_zeros_like(x), "zeros_like")
             : NULL;
  case 11:
    return fits(st, x != NULL, elements_of(x), elements_of(x))
             ? fuzz_check(ts_ones_like(x), "ones_like")
             : NULL;
  default: {
    ts_dtype numeric = (ts_dtype)((unsigned)dtype % TS_NUMERIC_DTYPE_COUNT);
    ts_shape small = { .rank = (int)(rows & 3) };
    for (int i = 0; i < small.rank; i++)
      small.dim[i] = (int64_t)(((uint64_t)cols + (uint64_t)i) % 6);
    return fits(st, true, 0, 0) ? fuzz_check(make_constant(r, numeric, small), "constant") : NULL;
  }
  }
}

typedef ts_tensor *(*binary_fn)(ts_loc, ts_tensor *, ts_tensor *);
typedef ts_tensor *(*unary_fn)(ts_loc, ts_tensor *);
typedef ts_tensor *(*reduce_fn)(ts_loc, ts_tensor *, ts_ints, bool);

static const struct {
  binary_fn fn;
  const char *name;
} binary_ops[] = {
#define X(name) { ts_##name##_at, #name },
  TS__BINARY(X)
#undef X
};

static const struct {
  unary_fn fn;
  const char *name;
} unary_ops[] = {
#define X(name) { ts_##name##_at, #name },
  TS__UNARY(X)
  X(identity) X(softmax) X(log_softmax) X(flatten) X(shape)
#undef X
};

static const struct {
  reduce_fn fn;
  const char *name;
} reduce_ops[] = {
  { ts_reduce_sum_at, "reduce_sum" },   { ts_reduce_mean_at, "reduce_mean" },
  { ts_reduce_max_at, "reduce_max" },   { ts_reduce_min_at, "reduce_min" },
  { ts_reduce_prod_at, "reduce_prod" }, { ts_reduce_any_at, "reduce_any" },
  { ts_reduce_all_at, "reduce_all" },
};

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int64_t matmul_work(ts_shape a, ts_shape b, bool ta, bool tb, int64_t *elements)
{
  *elements = 0;
  if (a.rank < 2 || b.rank < 2 || a.rank > TS_MAX_RANK || b.rank > TS_MAX_RANK)
    return 0;
  int64_t m = a.dim[a.rank - (ta ? 1 : 2)], k = a.dim[a.rank - (ta ? 2 : 1)];
  int64_t n = b.dim[b.rank - (tb ? 2 : 1)];
  if (m < 0 || k < 0 || n < 0)
    return *elements = UNKNOWN;
  ts_shape batch[2] = { a, b };
  batch[0].rank -= 2;
  batch[1].rank -= 2;
  int64_t nb = broadcast_elements(batch, 2);
  if (nb == UNKNOWN)
    return *elements = UNKNOWN;
  *elements = mul_sat(mul_sat(nb, m), n);
  return mul_sat(*elements, k > 0 ? k : 1);
}

/* Output size of a 2-D window op over NHWC input; work in *work. */
static int64_t window_elements(ts_shape in, int64_t kh, int64_t kw, int64_t channels_out,
                               int64_t per_window, int sh, int sw, ts_padding padding,
                               int64_t *work)
{
  *work = 0;
  if (in.rank != 4 || sh <= 0 || sw <= 0 || kh <= 0 || kw <= 0 ||
      (padding != TS_PADDING_SAME && padding != TS_PADDING_VALID))
    return 0;
  for (int i = 0; i < 4; i++)
    if (in.dim[i] < 0)
      return *work = UNKNOWN;
  if (channels_out < 0)
    return *work = UNKNOWN;
  int64_t oh, ow;
  if (padding == TS_PADDING_SAME) {
    oh = (in.dim[1] + sh - 1) / sh;
    ow = (in.dim[2] + sw - 1) / sw;
  } else {
    oh = in.dim[1] >= kh ? (in.dim[1] - kh) / sh + 1 : 0;
    ow = in.dim[2] >= kw ? (in.dim[2] - kw) / sw + 1 : 0;
  }
  int64_t e = mul_sat(mul_sat(mul_sat(in.dim[0], oh), ow), channels_out);
  *work = mul_sat(e, mul_sat(per_window, 1));
  return e;
}

static ts_padding rd_padding(reader *r)
{
  uint8_t b = rd_u8(r) % 8;
  return b < 6 ? (ts_padding)(b & 1) : b == 6 ? (ts_padding)2 : (ts_padding)-1;
}

static void then_branch(ts_tensor **vars, int n, void *user_data)
{
  for (int i = 0; i < n; i++)
    vars[i] = ts_neg(vars[i]);
}

static void else_branch(ts_tensor **vars, int n, void *user_data)
{
  for (int i = 0; i < n; i++)
    vars[i] = ts_abs(vars[i]);
}

static ts_tensor *loop_cond(ts_tensor *const *vars, int n, void *user_data)
{
  return ts_less(vars[0], ts_scalar_i32(*(const int *)user_data));
}

static void loop_body(ts_tensor **vars, int n, void *user_data)
{
  vars[0] = ts_add(vars[0], ts_scalar_i32(1));
  for (int i = 1; i < n; i++)
    vars[i] = ts_maximum(vars[i], ts_sub(vars[i], vars[i]));
}

/* Index and size arguments of tensor arrays: small host scalars, or a
 * register when that can only be an error (not an integer scalar). */
static ts_tensor *ta_index(fuzz_state *st, reader *r)
{
  uint8_t b = rd_u8(r);
  ts_tensor *x = reg_get(st, r);
  if (b >= 224 && x &&
      (ts_tensor_rank(x) != 0 || !ts_dtype_is_integer(ts_tensor_dtype(x))))
    return x;
  if (b >= 248)
    return NULL;
  return ts_scalar_i32((int32_t)(b % (TA_MAX_INDEX + 2)) - 1);
}

/* Runs one instruction.  Every argument is read before anything runs, so
 * the eager and the traced runs read the program the same way. */
/* ConvTranspose of x [N, C, spatial], filter y [C, M/group, taps] and
 * bias z (or none), with random strides, dilations, pads, output shape and
 * group: bounded by its output's elements and its multiply-adds
 * (N x C x M/group x input pixels x taps). */
static ts_tensor *conv_transpose_op(fuzz_state *st, reader *r, ts_tensor *x, ts_tensor *y, ts_tensor *z)
{
  ts_ints strides = rd_ints(r), dilations = rd_ints(r), pads = rd_ints(r), out_shape = rd_ints(r);
  int group = rd_int(r);
  uint8_t how = rd_u8(r);
  bool bias = how & 1;
  if (x && how & 6) { /* mostly: one value per spatial dim of x, the missing ones plain */
    int n = ts_tensor_rank(x) - 2;
    ts_ints *each[] = { &strides, &dilations, &pads, &out_shape };
    static const int64_t plain[] = { 1, 1, 0, 3 };
    for (int a = 0; a < 4 && n >= 1 && n <= 3; a++) {
      for (int i = each[a]->n < 0 ? 0 : each[a]->n; i < n; i++)
        each[a]->v[i] = plain[a];
      each[a]->n = n;
    }
  }
  int64_t e = 0, work = 0;
  if (x && y) {
    ts_shape xs = ts_tensor_shape(x), ws = ts_tensor_shape(y);
    if (xs.rank >= 3 && xs.rank == ws.rank && out_shape.n == xs.rank - 2) {
      e = mul_sat(xs.dim[0] < 0 ? UNKNOWN : xs.dim[0], mul_sat(ws.dim[1], group > 0 ? group : 1));
      work = mul_sat(mul_sat(xs.dim[0], xs.dim[1]), ws.dim[1]);
      for (int i = 2; i < xs.rank; i++) {
        e = mul_sat(e, out_shape.v[i - 2] < 0 ? 0 : out_shape.v[i - 2]);
        work = mul_sat(work, mul_sat(xs.dim[i], ws.dim[i]));
      }
      for (int d = 0; d < xs.rank; d++)
        if (xs.dim[d] < 0 || ws.dim[d] < 0)
          e = work = UNKNOWN;
    }
  }
  if (!fits(st, x && y, e, work))
    return NULL;
  return fuzz_check(ts_conv_transpose(x, y, bias ? z : NULL, strides, dilations, pads, out_shape, group),
                    "conv_transpose");
}

/* Elements of x padded by before and after, or tiled by multiples
 * (after NULL): 0 when the engine must refuse, UNKNOWN if a dim is. */
static int64_t arranged_elements(const ts_tensor *x, ts_ints a, const ts_ints *after)
{
  ts_shape s = ts_tensor_shape(x);
  if (s.rank < 0 || a.n != s.rank || (after && after->n != s.rank))
    return 0;
  int64_t n = 1;
  for (int i = 0; i < s.rank; i++) {
    if (s.dim[i] < 0)
      return UNKNOWN;
    if (a.v[i] < 0 || (after && after->v[i] < 0))
      return 0;
    n = mul_sat(n, after ? add_sat(add_sat(s.dim[i], a.v[i]), after->v[i]) : mul_sat(s.dim[i], a.v[i]));
  }
  return n;
}

/* Tile, Pad, Pack and Unpack, TopKV2, Sort and ArgSort, ReverseV2, OneHot,
 * Cumsum and Cumprod. */
static ts_tensor *arrange_op(fuzz_state *st, reader *r, ts_tensor *x, ts_tensor *y, ts_tensor *z,
                             uint8_t sub)
{
  int64_t ex = elements_of(x), work = ex == UNKNOWN ? UNKNOWN : mul_sat(ex, 64);
  int axis = rd_int(r);
  ts_ints a = rd_ints(r), b = rd_ints(r);
  switch (sub % 10) {
  case 0: {
    int64_t e = x ? arranged_elements(x, a, NULL) : 0;
    return fits(st, x != NULL, e, e) ? fuzz_check(ts_tile(x, a), "tile") : NULL;
  }
  case 1: {
    int64_t e = x ? arranged_elements(x, a, &b) : 0;
    ts_pad_mode mode = (ts_pad_mode)(sub / 8 % 4); /* 3: not a mode */
    return fits(st, x != NULL, e, e) ? fuzz_check(ts_pad(x, a, b, mode, sub & 32 ? y : NULL), "pad") : NULL;
  }
  case 2: {
    ts_tensor *xs[3] = { x, y, z };
    int n = (int)(sub / 8 % 5) - 1; /* -1 .. 3 */
    int64_t e = add_sat(add_sat(elements_of(x), elements_of(y)), elements_of(z));
    return fits(st, x && y && z, e, e) ? fuzz_check(ts_pack(n < 0 ? NULL : xs, n, axis), "pack") : NULL;
  }
  case 3: {
    ts_tensor *parts[8] = { 0 };
    int num = (int)(sub / 8 % 10) - 2; /* -2 .. 7: -1 takes the dim, if out can hold it */
    if (num == -1 && x) {
      ts_shape s = ts_tensor_shape(x);
      int k = axis < 0 && s.rank >= 0 ? axis + s.rank : axis;
      if (k < 0 || k >= s.rank || s.dim[k] < 0 || s.dim[k] > 8)
        num = 2;
    }
    if (!fits(st, x != NULL, ex, ex))
      return NULL;
    int got = ts_unpack(x, num, axis, parts);
    if (!fuzz_check_ok(got >= 0, "unpack") || got == 0)
      return NULL;
    return parts[sub / 80 % got];
  }
  case 4: {
    ts_tensor *values = NULL, *indices = NULL;
    if (fits(st, x != NULL, ex, work) &&
        fuzz_check_ok(ts_top_k(x, axis, &values, sub & 8 ? &indices : NULL), "top_k"))
      return indices ? indices : values;
    return NULL;
  }
  case 5:
    if (!fits(st, x != NULL, ex, work))
      return NULL;
    return sub & 8 ? fuzz_check(ts_argsort(x, axis, sub & 16), "argsort")
                   : fuzz_check(ts_sort(x, axis, sub & 16), "sort");
  case 6:
    return fits(st, x != NULL, ex, ex) ? fuzz_check(ts_reverse(x, a), "reverse") : NULL;
  case 7: {
    int64_t depth = rd_dim(r), e = depth < 0 ? 0 : ex == UNKNOWN ? UNKNOWN : mul_sat(ex, depth);
    ts_dtype dtype = rd_dtype(r);
    return fits(st, x != NULL, e, e) ? fuzz_check(ts_one_hot(x, depth, sub & 16 ? y : NULL, sub & 32 ? z : NULL,
                                                             axis, dtype), "one_hot")
                                     : NULL;
  }
  default:
    if (!fits(st, x != NULL, ex, ex))
      return NULL;
    return sub & 1 ? fuzz_check(ts_cumprod(x, axis, sub & 8, sub & 16), "cumprod")
                   : fuzz_check(ts_cumsum(x, axis, sub & 8, sub & 16), "cumsum");
  }
}

static void run_op(fuzz_state *st, reader *r)
{
  uint8_t code = rd_u8(r) % 33;
  ts_tensor *x = reg_get(st, r), *y = reg_get(st, r), *z = reg_get(st, r);
  uint8_t sub = rd_u8(r);
  ts_tensor *out = NULL;
  int64_t ex = elements_of(x);
  switch (code) {
  case 0: case 1: case 2: case 3:
    out = creation_op(st, r);
    break;
  case 4: {
    ts_dtype dtype = rd_dtype(r);
    if (fits(st, x != NULL, ex, ex))
      out = fuzz_check(ts_cast(x, dtype), "cast");
    break;
  }
  case 5: {
    ts_shape shape = rd_shape(r);
    if (sub & 1 && shape.rank > 0 && shape.rank <= TS_MAX_RANK)
      shape.dim[sub % shape.rank] = -1;
    if (fits(st, x != NULL, ex, ex)) {
      if (getenv("FUZZ_TRACE") && x) {
        char *from = ts_shape_dtype_string(ts_tensor_dtype(x), ts_tensor_shape(x));
        char *to = ts_shape_dtype_string(TS_F32, shape);
        fprintf(stderr, "trace: reshape %s to %s (rank %d)\n", from, to, shape.rank);
        free(from);
        free(to);
      }
      out = fuzz_check(ts_reshape(x, shape), "reshape");
    }
    break;
  }
  case 6: {
    ts_ints perm = rd_ints(r);
    if (fits(st, x != NULL, ex, ex))
      out = fuzz_check(ts_transpose(x, perm), "transpose");
    break;
  }
  case 7: {
    ts_tensor *xs[4] = { x, y, z, x };
    int n = (int)(sub % 6) - 1;
    int axis = rd_int(r);
    int64_t e = 0;
    bool have = true;
    for (int i = 0; i < (n > 0 ? n : 0); i++) {
      have &= xs[i] != NULL;
      int64_t k = elements_of(xs[i]);
      e = add_sat(e, k);
    }
    if (fits(st, have, e, e))
      out = fuzz_check(ts_concat(n == 0 && sub & 64 ? NULL : xs, n, axis), "concat");
    break;
  }
  case 8: {
    ts_tensor *parts[16] = { 0 };
    int n = rd_int(r);
    int axis = rd_int(r);
    if (n > 16 || n < -1)
      n = (int)(sub % 18) - 1;
    if (fits(st, x != NULL, ex, ex)) {
      int got = ts_split(x, n, axis, parts);
      if (got < 0) {
        fuzz_expect_error("split");
      } else {
        if (got != n || ts_failed())
          fuzz_finding("split into %d gave %d parts%s", n, got, ts_failed() ? " and an error" : "");
        for (int i = 0; i < got; i++)
          if (!parts[i])
            fuzz_finding("split gave a NULL part %d of %d", i, got);
        out = got > 0 ? parts[sub % got] : NULL;
      }
    }
    break;
  }
  case 9: {
    ts_ints begin = rd_ints(r), sizes = rd_ints(r);
    if (fits(st, x != NULL, ex, ex))
      out = fuzz_check(ts_slice(x, begin, sizes), "slice");
    break;
  }
  case 10: {
    int axis = rd_int(r);
    int64_t e = 0;
    if (x && y) {
      ts_shape p = ts_tensor_shape(x);
      int a = axis < 0 ? axis + p.rank : axis;
      e = elements_of(y);
      if (a >= 0 && a < p.rank && e != UNKNOWN)
        for (int i = 0; i < p.rank; i++)
          e = i == a ? e : p.dim[i] < 0 ? UNKNOWN : mul_sat(e, p.dim[i]);
      if (e == UNKNOWN)
        e = UNKNOWN;
    }
    if (fits(st, x && y, e, e))
      out = fuzz_check(ts_gather(x, y, axis), "gather");
    break;
  }
  case 11: case 12: case 13: {
    int k = sub % N_OF(binary_ops);
    int64_t e = 0;
    if (x && y) {
      ts_shape s[2] = { ts_tensor_shape(x), ts_tensor_shape(y) };
      e = broadcast_elements(s, 2);
    }
    if (fits(st, x && y, e, e))
      out = fuzz_check(binary_ops[k].fn(TS_HERE, x, y), binary_ops[k].name);
    break;
  }
  case 14: case 15: {
    int k = sub % N_OF(unary_ops);
    if (fits(st, x != NULL, ex, ex))
      out = fuzz_check(unary_ops[k].fn(TS_HERE, x), unary_ops[k].name);
    break;
  }
  case 16: {
    int64_t e = 0;
    if (x && y && z) {
      ts_shape s[3] = { ts_tensor_shape(x), ts_tensor_shape(y), ts_tensor_shape(z) };
      e = broadcast_elements(s, 3);
    }
    if (fits(st, x && y && z, e, e))
      out = fuzz_check(ts_where(x, y, z), "where");
    break;
  }
  case 17: case 18: {
    int k = sub % N_OF(reduce_ops);
    ts_ints axes = rd_ints(r);
    bool keepdims = rd_bool(r);
    if (fits(st, x != NULL, ex, ex))
      out = fuzz_check(reduce_ops[k].fn(TS_HERE, x, axes, keepdims), reduce_ops[k].name);
    break;
  }
  case 19: {
    int axis = rd_int(r);
    if (fits(st, x != NULL, ex, ex))
      out = fuzz_check(ts_argmax(x, axis), "argmax");
    break;
  }
  case 20: {
    bool ta = sub & 1, tb = sub & 2;
    int64_t e = 0, work = 0;
    if (x && y)
      work = matmul_work(ts_tensor_shape(x), ts_tensor_shape(y), ta, tb, &e);
    if (fits(st, x && y, e, work))
      out = fuzz_check(ts_matmul_t(x, y, ta, tb), "matmul");
    break;
  }
  case 21: {
    int64_t e = x && y ? elements_of(y) : 0;
    if (fits(st, x && y, e, e))
      out = fuzz_check(ts_sparse_softmax_cross_entropy(x, y), "sparse_softmax_cross_entropy");
    break;
  }
  case 22: {
    if (sub % 4 == 3) {
      out = conv_transpose_op(st, r, x, y, z);
      break;
    }
    int sh = rd_int(r), sw = rd_int(r);
    ts_padding padding = rd_padding(r);
    int64_t e = 0, work = 0;
    if (x && y) {
      ts_shape f = ts_tensor_shape(y);
      if (f.rank == 4)
        e = window_elements(ts_tensor_shape(x), f.dim[0], f.dim[1], f.dim[3],
                            f.dim[0] < 0 || f.dim[1] < 0 || f.dim[2] < 0
                              ? UNKNOWN
                              : mul_sat(mul_sat(f.dim[0], f.dim[1]), f.dim[2]),
                            sh, sw, padding, &work);
      if (work < 0)
        e = work = UNKNOWN;
    }
    if (fits(st, x && y, e, work))
      out = fuzz_check(ts_conv2d(x, y, sh, sw, padding), "conv2d");
    break;
  }
  case 23: {
    int kh = rd_int(r), kw = rd_int(r), sh = rd_int(r), sw = rd_int(r);
    ts_padding padding = rd_padding(r);
    int64_t e = 0, work = 0;
    if (x) {
      ts_shape in = ts_tensor_shape(x);
      e = window_elements(in, kh, kw, in.rank == 4 ? in.dim[3] : 0, mul_sat(kh, kw), sh, sw,
                          padding, &work);
      if (work < 0)
        e = work = UNKNOWN;
    }
    if (fits(st, x != NULL, e, work))
      out = fuzz_check(ts_max_pool2d(x, kh, kw, sh, sw, padding), "max_pool2d");
    break;
  }
  case 24: {
    static const char *strings[] = { "", "Executing", "%s%n", "x" };
    ts_value items[12];
    ts_tensor *regs[3] = { x, y, z };
    for (int i = 0; i < 12; i++) {
      uint8_t b = rd_u8(r);
      items[i] = b & 1 ? ts__print_string(strings[b / 2 % 4]) : TS_TENSOR_VALUE(regs[b / 2 % 3]);
    }
    int n = (int)(sub % 13) - 1; /* -1 .. 11: "at most 8" */
    bool have = x && y && z;
    int64_t e = add_sat(add_sat(elements_of(x), elements_of(y)), elements_of(z));
    if (fits(st, have, e, e))
      fuzz_check_ok(ts_print_at(TS_HERE, n == 0 && sub & 16 ? NULL : items, n), "print");
    break;
  }
  case 25: {
    /* variables: a real one, or a register (not a variable: an error) */
    ts_tensor *var = st->n_vars && sub < 224 ? st->vars[sub % st->n_vars] : x;
    uint8_t k = rd_u8(r) % 4;
    int64_t e = x && y ? elements_of(var) : 0;
    if (!fits(st, var && y, e, e))
      break;
    switch (k) {
    case 0: out = fuzz_check(ts_read(var), "read"); break;
    case 1: out = fuzz_check(ts_assign(var, y), "assign"); break;
    case 2: out = fuzz_check(ts_assign_add(var, y), "assign_add"); break;
    default: out = fuzz_check(ts_assign_sub(var, y), "assign_sub"); break;
    }
    break;
  }
  case 26: {
    ts_dtype dtype = rd_dtype(r);
    ts_tensor *n = ta_index(st, r);
    if (fits(st, true, 0, 0))
      out = fuzz_check(ts_tensor_array(dtype, n), "tensor_array");
    break;
  }
  case 27: { /* a write, or (odd sub) an insert: a list grows by one per instruction */
    ts_tensor *index = ta_index(st, r);
    int64_t e = mul_sat(elements_of(y), TA_MAX_INDEX + 1);
    if (fits(st, x && y, e, e))
      out = sub & 1 ? fuzz_check(ts_tensor_list_insert(x, index, y), "tensor_list_insert")
                    : fuzz_check(ts_tensor_array_write(x, index, y), "tensor_array_write");
    break;
  }
  case 28: { /* a read, an erase, or an optional made, tested or read */
    ts_tensor *index = ta_index(st, r);
    if (!fits(st, x != NULL, 0, 0))
      break;
    switch (sub % 6) {
    case 1: out = fuzz_check(ts_tensor_list_erase(x, index), "tensor_list_erase"); break;
    case 2: out = fuzz_check(ts_optional_from_value(x), "optional_from_value"); break;
    case 3: out = fuzz_check(ts_optional_has_value(x), "optional_has_value"); break;
    case 4: out = fuzz_check(ts_optional_get_value(sub & 8 ? ts_optional_none() : x), "optional_get_value"); break;
    default: out = fuzz_check(ts_tensor_array_read(x, index), "tensor_array_read"); break;
    }
    break;
  }
  case 29: /* a stack, a concat along an axis (-2 .. 5), or the length */
    if (fits(st, x != NULL, 0, 0))
      out = sub % 3 == 1 ? fuzz_check(ts_tensor_list_concat(x, (int)(sub / 3 % 8) - 2), "tensor_list_concat")
            : sub % 3 == 2 ? fuzz_check(ts_tensor_list_length(x), "tensor_list_length")
                           : fuzz_check(ts_tensor_array_stack(x), "tensor_array_stack");
    break;
  case 30: {
    ts_tensor *vars[3] = { y, z, x };
    int n = (int)(sub % 5) - 1;
    int64_t e = add_sat(add_sat(elements_of(y), elements_of(z)), elements_of(x));
    if (fits(st, x && y && z, e, e)) {
      if (fuzz_check_ok(ts_cond(x, then_branch, else_branch, n < 0 ? NULL : vars, n, NULL),
                        "cond"))
        out = n > 0 ? vars[0] : NULL;
    }
    break;
  }
  case 31:
    out = arrange_op(st, r, x, y, z, sub);
    break;
  default: {
    int limit = (int)(sub % 10) - 1;
    ts_tensor *vars[3] = { ts_scalar_i32(0), y, z };
    int n = 1 + (int)(sub / 16 % 3);
    int64_t e = add_sat(elements_of(y), elements_of(z));
    e = e == UNKNOWN ? UNKNOWN : mul_sat(e, 10);
    if (fits(st, y && z, e, e)) {
      if (fuzz_check_ok(ts_while_loop(loop_cond, loop_body, vars, n, &limit), "while_loop"))
        out = vars[n - 1];
    }
    break;
  }
  }
  if (out)
    fuzz_inspect(out);
  reg_set(st, r, out);
}

/* Runs the program on the registers; the result is a register's tensor. */
static ts_tensor *run_program(fuzz_state *st, ts_tensor *const *args)
{
  for (int i = 0; i < N_REGS; i++)
    st->reg[i] = args[i % st->n_inputs];
  st->made = 0;
  reader r = { st->program, st->program_len, 0 };
  int limit = st->mode == MODE_EAGER ? MAX_OPS : st->n_ops;
  int i = 0;
  for (; i < limit && r.pos < r.n && st->made <= MAX_TOTAL; i++) {
    st->op_index = i;
    run_op(st, &r);
  }
  if (st->mode == MODE_EAGER)
    st->n_ops = i;
  ts_tensor *result = st->reg[st->program_len ? st->program[st->program_len - 1] % N_REGS : 0];
  for (int k = 0; !result && k < N_REGS; k++)
    result = st->reg[k];
  return result;
}

static ts_tensor *traced_body(ts_call *call)
{
  fuzz_state *st = current;
  ts_tensor *args[MAX_INPUTS];
  for (int i = 0; i < st->n_inputs; i++)
    args[i] = fuzz_check(ts_arg(call, i), "ts_arg");
  ts_tensor *result = run_program(st, args);
  if (!result)
    ts_error_set(TS_ERR_INVALID_ARGUMENT, TS_HERE, NULL, "the fuzz program made no tensor");
  return result;
}

static void run_traced(fuzz_state *st, int mode, reader *r)
{
  st->mode = mode;
  ts_function *fn = ts_function_new("fuzz_program", traced_body, "a, b, c");
  ts_function_set_run_eagerly(fn, 0);
  if (mode == MODE_SIGNATURE) {
    ts_spec specs[MAX_INPUTS + 1];
    for (int i = 0; i < st->n_inputs; i++) {
      specs[i] = (ts_spec){ ts_tensor_dtype(st->inputs[i]), ts_tensor_shape(st->inputs[i]) };
      uint8_t unknown = rd_u8(r);
      for (int a = 0; a < specs[i].shape.rank; a++)
        if (unknown >> a & 1)
          specs[i].shape.dim[a] = -1;
    }
    specs[st->n_inputs] = specs[0];
    uint8_t b = rd_u8(r);
    int n = st->n_inputs;
    if (b >= 240) {
      /* a signature that does not fit the call, or is malformed */
      n += b & 1;
      if (b & 2)
        specs[0].dtype = (ts_dtype)(b & 4 ? TS_DTYPE_COUNT + (b & 8) : -1);
      if (b & 4)
        specs[0].shape.rank = b & 8 ? TS_MAX_RANK + 1 : -1;
      else
        specs[0].shape.rank = (specs[0].shape.rank + 1) % (TS_MAX_RANK + 1);
    }
    fuzz_check_ok(ts_function_set_input_signature(fn, specs, n), "set_input_signature");
  }
  ts_value args[MAX_INPUTS];
  for (int i = 0; i < st->n_inputs; i++)
    args[i] = TS_TENSOR_VALUE(st->inputs[i]);
  for (int call = 0; call < 2; call++) {
    ts_scope *scope = ts_scope_begin();
    ts_tensor *t = fuzz_check(ts_function_call(fn, args, st->n_inputs), "ts_function_call");
    if (t)
      fuzz_inspect(t);
    ts_scope_end(scope);
  }
  for (int i = 0; i < ts_function_n_concrete(fn); i++) {
    const ts_graph *g = ts_concrete_graph(ts_function_concrete(fn, i));
    free(ts_graph_to_text(g));
    free(ts_graph_to_dot(g));
  }
  free(ts_function_pretty_printed_concrete_signatures(fn));
  ts_function_free(fn);
  ts_error_clear();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_begin_input();
  reader r = { data, size, 0 };
  fuzz_state st = { .mode = MODE_EAGER };
  current = &st;
  ts_scope *scope = ts_scope_begin();

  uint8_t header = rd_u8(&r);
  st.n_inputs = 1 + header % MAX_INPUTS;
  st.n_vars = header / 4 % (MAX_VARS + 1);
  int traced = header / 16 % 4; /* 0 eager only, 1 graph, 2 signature, 3 both */
  for (int i = 0; i < st.n_inputs; i++) {
    uint8_t kind = rd_u8(&r);
    ts_shape shape = rd_small_shape(&r);
    ts_tensor *t = kind % 8 == 7 ? ts_scalar_string("in")
                                 : make_constant(&r, (ts_dtype)(kind % TS_NUMERIC_DTYPE_COUNT), shape);
    st.inputs[i] = t ? t : ts_scalar_f32(1);
    ts_error_clear();
  }
  for (int i = 0; i < st.n_vars; i++) {
    ts_tensor *init = st.inputs[rd_u8(&r) % st.n_inputs];
    st.vars[i] = ts_variable_new(init, i ? "v1" : "v0");
    if (!st.vars[i]) {
      fuzz_expect_error("ts_variable_new");
      st.n_vars = i;
      break;
    }
  }
  size_t program_start = r.pos;
  /* the signature's unknown dims come from the end of the input */
  st.program = data + program_start;
  st.program_len = size - program_start;

  ts_scope *eager = ts_scope_begin();
  run_program(&st, st.inputs);
  ts_scope_end(eager);
  ts_error_clear();

  reader tail = { data, size, size > 8 ? size - 8 : 0 };
  if (traced == 1 || traced == 3)
    run_traced(&st, MODE_GRAPH, &tail);
  if (traced == 2 || traced == 3)
    run_traced(&st, MODE_SIGNATURE, &tail);

  for (int i = 0; i < st.n_vars; i++)
    ts_tensor_unref(st.vars[i]);
  ts_scope_end(scope);
  ts_release_all();
  ts_error_clear();
  current = NULL;
  return 0;
}
