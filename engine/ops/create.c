/* ops/create.c — tensors made from attributes: fill, zeros, ones, eye, range
 * and seeded random numbers.
 *
 * Random numbers: xoshiro256** (Blackman and Vigna) whose state is four
 * outputs of splitmix64 run from the op's seed, so one seed gives the same
 * stream on every run and machine (normals go through libm's log, sin and
 * cos).  Element i takes the i-th draw in row-major order.  Floats use the
 * top 53 bits (24 for f32) as a fraction in [0, 1); integers are drawn
 * without bias by rejection; normals come in pairs from Box-Muller.
 * StatelessRandomUniform and ShuffleIndices take their stream from an
 * input too (a counter a variable holds), so a graph can draw anew on each
 * run.  StatelessRandomUniform draws from Philox4x32-10 instead (ops/
 * philox.h): element i is a function of (seed, counter, i), so the CUDA
 * kernel draws the same bits in parallel, with the counter read on the
 * device.  ShuffleIndices has a CPU kernel only (on a GPU it falls back,
 * saying so), as tf.data's shuffle runs on the host in TensorFlow: its
 * buffer is one sequential walk, its output a few indices. */
#include "engine-private.h"
#include "ops/elementwise.h"
#include "ops/philox.h"

#include <float.h>
#include <math.h>

#define ATTRS(a) .n_attrs = (int)(sizeof(a) / sizeof((a)[0])), .attrs = (a)

/* Inclusive value range of each integer dtype (i64's top is 2^63 and u64's 2^64, exclusive). */
static const struct {
  double lo, hi;
} INT_RANGE[TS_DTYPE_COUNT] = {
  [TS_I32] = { INT32_MIN, INT32_MAX },
  [TS_I64] = { -0x1p63, 0x1p63 },
  [TS_U8] = { 0, UINT8_MAX },
  [TS_I8] = { INT8_MIN, INT8_MAX },
  [TS_I16] = { INT16_MIN, INT16_MAX },
  [TS_U16] = { 0, UINT16_MAX },
  [TS_U32] = { 0, UINT32_MAX },
  [TS_U64] = { 0, 0x1p64 },
};

static bool check_dtype(ts_infer_ctx *c, ts_dtype dt)
{
  if ((unsigned)dt < TS_DTYPE_COUNT)
    return true;
  return ts__infer_fail(c, TS_ERR_DTYPE, "unknown dtype %d", (int)dt);
}

/* A shape a user asked for: rank in range, no negative dims, and a byte
 * count that fits an int64, so [1e12, 1e12] fails here and not in malloc. */
static bool check_shape(ts_infer_ctx *c, ts_dtype dt, ts_shape s)
{
  if (s.rank < 0 || s.rank > TS_MAX_RANK)
    return ts__infer_fail(c, TS_ERR_SHAPE, "rank %d is not in [0, %d]", s.rank, TS_MAX_RANK);
  int64_t n, bytes;
  for (int i = 0; i < s.rank; i++) {
    if (s.dim[i] < 0)
      return ts__infer_fail(c, TS_ERR_SHAPE,
                            "dimension %d of the shape is %lld; dimensions must be >= 0", i,
                            (long long)s.dim[i]);
  }
  if (!ts__shape_product(s.dim, s.rank, &n) ||
      __builtin_mul_overflow(n, (int64_t)ts_dtype_size(dt), &bytes)) {
    char buf[TS_INFO_STR];
    return ts__infer_fail(c, TS_ERR_SHAPE, "shape %s is too large (2^63 bytes or more)",
                          ts__info_str(buf, dt, s));
  }
  return true;
}

/* Range and RandomUniform take every numeric dtype but bool. */
static bool refuse_bool(ts_infer_ctx *c)
{
  char ok[TS_DTYPE_NAMES_STR];
  return ts__infer_fail(c, TS_ERR_DTYPE, "takes %s, got dtype bool",
                        ts__dtype_names(ok, TS_NUMERIC_DTYPES & ~(1u << TS_BOOL)));
}

static bool set_out(ts_infer_ctx *c, ts_dtype dt, ts_shape s)
{
  c->out[0] = (ts_info){ dt, s };
  return true;
}

/* Repeats element 0 over all of t by doubling copies. */
static void repeat_first(ts_tensor *t)
{
  char *d = t->data;
  size_t total = (size_t)t->size * ts_dtype_size(t->dtype), done = ts_dtype_size(t->dtype);
  while (done < total) {
    size_t n = done < total - done ? done : total - done;
    memcpy(d + done, d, n);
    done += n;
  }
}

/* ---- fill, zeros, ones ---------------------------------------------------- */

static bool fill_infer(ts_infer_ctx *c)
{
  ts_shape shape = c->attrs[0].shape;
  if (c->in[0].shape.rank != 0) {
    char buf[TS_INFO_STR];
    return ts__infer_fail(c, TS_ERR_SHAPE, "value must be a scalar, got %s",
                          ts__info_str(buf, c->in[0].dtype, c->in[0].shape));
  }
  return check_shape(c, c->in[0].dtype, shape) && set_out(c, c->in[0].dtype, shape);
}

static bool fill_cpu(ts_kernel_ctx *k)
{
  ts_tensor *y = k->out[0];
  if (y->size > 0) {
    memcpy(y->data, k->in[0]->data, ts_dtype_size(y->dtype));
    repeat_first(y);
  }
  return true;
}

static bool const_infer(ts_infer_ctx *c)
{
  ts_dtype dt = c->attrs[0].dtype;
  return check_dtype(c, dt) && check_shape(c, dt, c->attrs[1].shape) &&
         set_out(c, dt, c->attrs[1].shape);
}

static bool like_infer(ts_infer_ctx *c)
{
  return set_out(c, c->in[0].dtype, c->in[0].shape);
}

static bool zeros_cpu(ts_kernel_ctx *k)
{
  ts_tensor *y = k->out[0];
  if (y->size > 0)
    memset(y->data, 0, (size_t)y->size * ts_dtype_size(y->dtype));
  return true;
}

static bool ones_cpu(ts_kernel_ctx *k)
{
  ts_tensor *y = k->out[0];
  if (y->size > 0) {
    ts__store_f64(y->dtype, y->data, 0, 1);
    repeat_first(y);
  }
  return true;
}

static const ts_attr_def fill_attrs[] = { { "shape", TS_ATTR_SHAPE } };
static const ts_attr_def const_attrs[] = { { "dtype", TS_ATTR_DTYPE }, { "shape", TS_ATTR_SHAPE } };

/* Fill: the value gets every element's gradient. */
static bool fill_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                      ts_tensor **gi)
{
  return (gi[0] = ts_reduce_sum_at(c->loc, g[0], TS_ALL_AXES, false)) != NULL;
}

const ts_op_def ts__op_fill = {
  .op = TS_OP_FILL, .name = "Fill", .api_name = "fill", .n_inputs = 1, .n_outputs = 1,
  ATTRS(fill_attrs), .infer = fill_infer, .kernel[TS_DEVICE_CPU] = fill_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_fill), .grad = fill_grad,
};
const ts_op_def ts__op_zeros = {
  .op = TS_OP_ZEROS, .name = "Zeros", .api_name = "zeros", .n_inputs = 0, .n_outputs = 1,
  .flags = TS_OPF_NOT_DIFFERENTIABLE, ATTRS(const_attrs), .infer = const_infer, .kernel[TS_DEVICE_CPU] = zeros_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_fill),
};
const ts_op_def ts__op_ones = {
  .op = TS_OP_ONES, .name = "Ones", .api_name = "ones", .n_inputs = 0, .n_outputs = 1,
  .flags = TS_OPF_NOT_DIFFERENTIABLE, ATTRS(const_attrs), .infer = const_infer, .kernel[TS_DEVICE_CPU] = ones_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_fill),
};
const ts_op_def ts__op_zeros_like = {
  .op = TS_OP_ZEROS_LIKE, .name = "ZerosLike", .api_name = "zeros_like", .n_inputs = 1,
  .n_outputs = 1, .flags = TS_OPF_NOT_DIFFERENTIABLE, .infer = like_infer, .kernel[TS_DEVICE_CPU] = zeros_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_fill),
};
const ts_op_def ts__op_ones_like = {
  .op = TS_OP_ONES_LIKE, .name = "OnesLike", .api_name = "ones_like", .n_inputs = 1,
  .n_outputs = 1, .flags = TS_OPF_NOT_DIFFERENTIABLE, .infer = like_infer, .kernel[TS_DEVICE_CPU] = ones_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_fill),
};

/* ---- eye ---------------------------------------------------------------------- */

static bool eye_infer(ts_infer_ctx *c)
{
  ts_dtype dt = c->attrs[0].dtype;
  ts_shape shape = TS_SHAPE(c->attrs[1].i, c->attrs[2].i);
  return check_dtype(c, dt) && check_shape(c, dt, shape) && set_out(c, dt, shape);
}

static bool eye_cpu(ts_kernel_ctx *k)
{
  ts_tensor *y = k->out[0];
  int64_t rows = y->shape.dim[0], cols = y->shape.dim[1];
  zeros_cpu(k);
  for (int64_t i = 0; i < rows && i < cols; i++)
    ts__store_f64(y->dtype, y->data, i * cols + i, 1);
  return true;
}

static const ts_attr_def eye_attrs[] = {
  { "dtype", TS_ATTR_DTYPE }, { "rows", TS_ATTR_INT }, { "cols", TS_ATTR_INT },
};

const ts_op_def ts__op_eye = {
  .op = TS_OP_EYE, .name = "Eye", .api_name = "eye", .n_inputs = 0, .n_outputs = 1,
  .flags = TS_OPF_NOT_DIFFERENTIABLE, ATTRS(eye_attrs), .infer = eye_infer, .kernel[TS_DEVICE_CPU] = eye_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_eye),
};

/* ---- range -------------------------------------------------------------------- */

static bool is_int64(double v)
{
  return v >= -0x1p63 && v < 0x1p63 && v == floor(v);
}

/* Integer ranges count and step in int64, exactly. */
static bool range_int_size(ts_infer_ctx *c, ts_dtype dt, int64_t *n)
{
  const ts_attr *a = c->attrs;
  if (!is_int64(a[1].f) || !is_int64(a[2].f) || !is_int64(a[3].f))
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "start, limit and delta must be integers for %s, got %g, %g, %g",
                          ts_dtype_name(dt), a[1].f, a[2].f, a[3].f);
  int64_t start = (int64_t)a[1].f, limit = (int64_t)a[2].f, delta = (int64_t)a[3].f;
  if (ts__range_count_i64(start, limit, delta, n) == TS_RANGE_TOO_LARGE)
    return ts__infer_fail(c, TS_ERR_SHAPE, "range from %lld to %lld by %lld is too large",
                          (long long)start, (long long)limit, (long long)delta);
  if (*n == 0)
    return true;
  uint64_t q = (uint64_t)*n;
  int64_t last = (int64_t)((uint64_t)start + (q - 1) * (uint64_t)delta);
  if (start < INT_RANGE[dt].lo || start > INT_RANGE[dt].hi || last < INT_RANGE[dt].lo ||
      last > INT_RANGE[dt].hi)
    return ts__infer_fail(c, TS_ERR_OUT_OF_RANGE, "values from %lld to %lld do not fit in %s",
                          (long long)start, (long long)last, ts_dtype_name(dt));
  return true;
}

static bool range_float_size(ts_infer_ctx *c, ts_dtype dt, int64_t *n)
{
  double start = c->attrs[1].f, limit = c->attrs[2].f, delta = c->attrs[3].f;
  if (ts__range_count_f64(start, limit, delta, n) == TS_RANGE_TOO_LARGE)
    return ts__infer_fail(c, TS_ERR_SHAPE, "range from %g to %g by %g is too large", start,
                          limit, delta);
  if (*n == 0)
    return true;
  double q = (double)*n;
  double last = start + (q - 1) * delta;
  if (dt == TS_F32 && (fabs(start) > FLT_MAX || fabs(last) > FLT_MAX))
    return ts__infer_fail(c, TS_ERR_OUT_OF_RANGE, "values from %g to %g do not fit in float32",
                          start, last);
  return true;
}

static bool range_infer(ts_infer_ctx *c)
{
  ts_dtype dt = c->attrs[0].dtype;
  double start = c->attrs[1].f, limit = c->attrs[2].f, delta = c->attrs[3].f;
  int64_t n;
  if (!check_dtype(c, dt))
    return false;
  if (dt == TS_BOOL)
    return refuse_bool(c);
  if (!isfinite(start) || !isfinite(limit) || !isfinite(delta))
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "start, limit and delta must be finite, got %g, %g, %g", start, limit,
                          delta);
  if (delta == 0)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "Requires delta != 0: %g", delta);
  bool ok = ts_dtype_is_float(dt) ? range_float_size(c, dt, &n) : range_int_size(c, dt, &n);
  return ok && check_shape(c, dt, TS_SHAPE(n)) && set_out(c, dt, TS_SHAPE(n));
}

static bool range_cpu(ts_kernel_ctx *k)
{
  ts_tensor *y = k->out[0];
  double start = k->attrs[1].f, delta = k->attrs[3].f;
  if (ts_dtype_is_float(y->dtype)) {
    for (int64_t i = 0; i < y->size; i++)
      ts__store_f64(y->dtype, y->data, i, start + (double)i * delta);
    return true;
  }
  uint64_t s = (uint64_t)(int64_t)start, d = (uint64_t)(int64_t)delta;
  for (int64_t i = 0; i < y->size; i++)
    ts__store_i64(y->dtype, y->data, i, (int64_t)(s + (uint64_t)i * d));
  return true;
}

static const ts_attr_def range_attrs[] = {
  { "dtype", TS_ATTR_DTYPE }, { "start", TS_ATTR_FLOAT },
  { "limit", TS_ATTR_FLOAT }, { "delta", TS_ATTR_FLOAT },
};

const ts_op_def ts__op_range = {
  .op = TS_OP_RANGE, .name = "Range", .api_name = "range", .n_inputs = 0, .n_outputs = 1,
  .flags = TS_OPF_NOT_DIFFERENTIABLE, ATTRS(range_attrs), .infer = range_infer, .kernel[TS_DEVICE_CPU] = range_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_range),
};

/* ---- random --------------------------------------------------------------------- */

typedef struct rng {
  uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
  uint64_t z = (*x += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static void rng_seed(rng *r, int64_t seed)
{
  uint64_t x = (uint64_t)seed;
  for (int i = 0; i < 4; i++)
    r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
  return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(rng *r)
{
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

static bool uniform_infer(ts_infer_ctx *c)
{
  ts_dtype dt = c->attrs[0].dtype;
  double lo = c->attrs[2].f, hi = c->attrs[3].f;
  if (!check_dtype(c, dt) || !check_shape(c, dt, c->attrs[1].shape))
    return false;
  if (dt == TS_BOOL)
    return refuse_bool(c);
  if (!isfinite(lo) || !isfinite(hi) || !isfinite(hi - lo))
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "minval and maxval must be finite, got %g and %g", lo, hi);
  if (hi <= lo)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "Need minval < maxval: %g >= %g", lo, hi);
  if (ts_dtype_is_integer(dt) &&
      (lo != floor(lo) || hi != floor(hi) || lo < INT_RANGE[dt].lo || hi - 1 > INT_RANGE[dt].hi))
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "minval and maxval must be integers with [%g, %g) inside %s", lo, hi,
                          ts_dtype_name(dt));
  if (dt == TS_F32 && (fabs(lo) > FLT_MAX || fabs(hi) > FLT_MAX || !(ts_f32_ceil(lo) < hi)))
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "no float32 value in [%g, %g)", lo, hi);
  return set_out(c, dt, c->attrs[1].shape);
}

static void uniform_int(ts_tensor *y, rng *r, double lo_f, double hi_f)
{
  uint64_t lo, span; /* span 0 means all 2^64 values */
  ts_uniform_int_span(lo_f, hi_f, &lo, &span);
  uint64_t reject_below = span ? (0 - span) % span : 0;
  for (int64_t i = 0; i < y->size; i++) {
    uint64_t x = rng_next(r);
    while (x < reject_below)
      x = rng_next(r);
    ts__store_i64(y->dtype, y->data, i, (int64_t)(lo + (span ? x % span : x)));
  }
}

/* y filled with uniform numbers in [lo, hi) from stream `seed`. */
static void uniform_fill(ts_tensor *y, double lo, double hi, int64_t seed)
{
  rng r;
  rng_seed(&r, seed);
  if (y->dtype == TS_F64) {
    double *p = y->data;
    for (int64_t i = 0; i < y->size; i++) {
      double v = lo + (double)(rng_next(&r) >> 11) * 0x1p-53 * (hi - lo);
      while (v >= hi) /* rounding can reach hi */
        v = nextafter(v, -INFINITY);
      p[i] = v;
    }
  } else if (y->dtype == TS_F32) {
    float *p = y->data, lo32 = ts_f32_ceil(lo);
    for (int64_t i = 0; i < y->size; i++) {
      float v = (float)(lo + (double)(rng_next(&r) >> 40) * 0x1p-24 * (hi - lo));
      v = v < lo32 ? lo32 : v;
      while (v >= hi)
        v = nextafterf(v, -INFINITY);
      p[i] = v;
    }
  } else if (ts_dtype_is_float(y->dtype)) { /* 16-bit: rounded from double, kept below hi */
    for (int64_t i = 0; i < y->size; i++) {
      double v = lo + (double)(rng_next(&r) >> 11) * 0x1p-53 * (hi - lo);
      ts__store_f64(y->dtype, y->data, i, v);
      uint16_t *bits = (uint16_t *)y->data + i;
      while (ts__load_f64(y->dtype, y->data, i) >= hi) /* the next 16-bit float down */
        *bits = *bits == 0 ? 0x8001 : *bits & 0x8000 ? *bits + 1 : *bits - 1;
    }
  } else {
    uniform_int(y, &r, lo, hi);
  }
}

static bool uniform_cpu(ts_kernel_ctx *k)
{
  uniform_fill(k->out[0], k->attrs[2].f, k->attrs[3].f, k->attrs[4].i);
  return true;
}

/* The stream of (seed, counter): seed itself at counter 0. */
static int64_t stream_seed(int64_t seed, const ts_tensor *counter)
{
  uint64_t n = (uint64_t)ts__load_i64(counter->dtype, counter->data, 0);
  return (int64_t)((uint64_t)seed ^ (n * 0x9e3779b97f4a7c15u));
}

/* The counter: an integer scalar. */
static bool check_counter(ts_infer_ctx *c)
{
  const ts_info *in = &c->in[0];
  if (ts_dtype_is_integer(in->dtype) && in->shape.rank == 0)
    return true;
  char buf[TS_INFO_STR];
  return ts__infer_fail(c, TS_ERR_DTYPE, "the counter must be an integer scalar, got %s",
                        ts__info_str(buf, in->dtype, in->shape));
}

static bool stateless_uniform_infer(ts_infer_ctx *c)
{
  return check_counter(c) && uniform_infer(c);
}

/* Elements [begin, end) of the Philox stream (seed, counter) (ops/philox.h). */
typedef struct stateless_job {
  ts_tensor *y;
  uint64_t counter;
  ts_philox_params p;
} stateless_job;

static void stateless_range(void *ctx, int64_t begin, int64_t end)
{
  const stateless_job *j = ctx;
  const ts_philox_params *p = &j->p;
  ts_tensor *y = j->y;
  for (int64_t i = begin; i < end; i++) {
    uint32_t w[4];
    ts_philox_block(p->seed, j->counter, (uint64_t)i, w);
    if (y->dtype == TS_F32) {
      ((float *)y->data)[i] = ts_philox_f32(w, p->lo, p->hi, p->lo32);
    } else if (y->dtype == TS_F64) {
      ((double *)y->data)[i] = ts_philox_f64(w, p->lo, p->hi);
    } else if (ts_dtype_is_float(y->dtype)) { /* 16-bit: rounded, kept below hi */
      ts__store_f64(y->dtype, y->data, i, ts_philox_f64(w, p->lo, p->hi));
      uint16_t *bits = (uint16_t *)y->data + i;
      while (ts__load_f64(y->dtype, y->data, i) >= p->hi) /* the next 16-bit float down */
        *bits = *bits == 0 ? 0x8001 : *bits & 0x8000 ? *bits + 1 : *bits - 1;
    } else {
      ts__store_i64(y->dtype, y->data, i, (int64_t)ts_philox_int(w, p->ilo, p->span));
    }
  }
}

static bool stateless_uniform_cpu(ts_kernel_ctx *k)
{
  stateless_job j = {
    .y = k->out[0], .counter = (uint64_t)ts__load_i64(k->in[0]->dtype, k->in[0]->data, 0),
    .p = ts_philox_params_of((uint64_t)k->attrs[4].i, k->attrs[2].f, k->attrs[3].f,
                             ts_dtype_is_integer(k->out[0]->dtype)),
  };
  ts__parallel_range(j.y->size, TS_EW_GRAIN_COSTLY, stateless_range, &j);
  return true;
}

/* ---- ShuffleIndices: tf.data's shuffle order ----------------------------------- */

static const ts_attr_def shuffle_attrs[] = {
  { "n", TS_ATTR_INT }, { "buffer_size", TS_ATTR_INT }, { "seed", TS_ATTR_INT },
};

static bool shuffle_infer(ts_infer_ctx *c)
{
  int64_t n = c->attrs[0].i, buffer = c->attrs[1].i;
  if (!check_counter(c))
    return false;
  if (n < 0 || buffer < 1)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "n must be >= 0 and buffer_size >= 1, got %lld and %lld", (long long)n,
                          (long long)buffer);
  return check_shape(c, TS_I64, TS_SHAPE(n)) && set_out(c, TS_I64, TS_SHAPE(n));
}

/* A buffer of the first buffer_size indices; each output drawn from it
 * uniformly and replaced by the next index (or, the input spent, by the
 * buffer's last). */
static bool shuffle_cpu(ts_kernel_ctx *k)
{
  int64_t n = k->attrs[0].i, buffer_size = MIN(k->attrs[1].i, MAX(n, 1));
  int64_t *order = k->out[0]->data;
  int64_t *buf = g_try_new(int64_t, buffer_size);
  if (!buf)
    return ts__kernel_fail(k, TS_ERR_NO_MEMORY, "no memory for a buffer of %lld indices",
                           (long long)buffer_size);
  uint64_t seed = (uint64_t)stream_seed(k->attrs[2].i, k->in[0]);
  guint32 seeds[2] = { (guint32)seed, (guint32)(seed >> 32) };
  GRand *rand = g_rand_new_with_seed_array(seeds, 2);
  int64_t filled = 0, next = 0;
  for (; next < n && filled < buffer_size; next++)
    buf[filled++] = next;
  for (int64_t i = 0; i < n; i++) {
    int64_t pick = filled > 1 ? (int64_t)g_rand_double_range(rand, 0, (double)filled) : 0;
    if (pick >= filled)
      pick = filled - 1;
    order[i] = buf[pick];
    if (next < n)
      buf[pick] = next++;
    else
      buf[pick] = buf[--filled];
  }
  g_rand_free(rand);
  g_free(buf);
  return true;
}

static bool normal_infer(ts_infer_ctx *c)
{
  ts_dtype dt = c->attrs[0].dtype;
  double mean = c->attrs[2].f, stddev = c->attrs[3].f;
  if (!check_dtype(c, dt) || !check_shape(c, dt, c->attrs[1].shape))
    return false;
  if (!ts_dtype_is_float(dt))
    return ts__infer_fail(c, TS_ERR_DTYPE, "dtype must be float32 or float64, got %s",
                          ts_dtype_name(dt));
  if (!isfinite(mean) || !isfinite(stddev) || stddev < 0)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT,
                          "mean must be finite and stddev finite and >= 0, got %g and %g", mean,
                          stddev);
  return set_out(c, dt, c->attrs[1].shape);
}

static bool normal_cpu(ts_kernel_ctx *k)
{
  ts_tensor *y = k->out[0];
  double mean = k->attrs[2].f, stddev = k->attrs[3].f;
  rng r;
  rng_seed(&r, k->attrs[4].i);
  for (int64_t i = 0; i < y->size; i += 2) {
    double u1 = (double)((rng_next(&r) >> 11) + 1) * 0x1p-53; /* (0, 1]: log stays finite */
    double u2 = (double)(rng_next(&r) >> 11) * 0x1p-53;
    double radius = sqrt(-2 * log(u1)), angle = 2 * M_PI * u2;
    ts__store_f64(y->dtype, y->data, i, mean + stddev * radius * cos(angle));
    if (i + 1 < y->size)
      ts__store_f64(y->dtype, y->data, i + 1, mean + stddev * radius * sin(angle));
  }
  return true;
}

static const ts_attr_def uniform_attrs[] = {
  { "dtype", TS_ATTR_DTYPE }, { "shape", TS_ATTR_SHAPE }, { "minval", TS_ATTR_FLOAT },
  { "maxval", TS_ATTR_FLOAT }, { "seed", TS_ATTR_INT },
};
static const ts_attr_def normal_attrs[] = {
  { "dtype", TS_ATTR_DTYPE }, { "shape", TS_ATTR_SHAPE }, { "mean", TS_ATTR_FLOAT },
  { "stddev", TS_ATTR_FLOAT }, { "seed", TS_ATTR_INT },
};

const ts_op_def ts__op_random_uniform = {
  .op = TS_OP_RANDOM_UNIFORM, .name = "RandomUniform", .api_name = "random_uniform",
  .n_inputs = 0, .n_outputs = 1, .flags = TS_OPF_RANDOM | TS_OPF_NOT_DIFFERENTIABLE, ATTRS(uniform_attrs), .infer = uniform_infer,
  .kernel[TS_DEVICE_CPU] = uniform_cpu, .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_random),
};
const ts_op_def ts__op_stateless_random_uniform = {
  .op = TS_OP_STATELESS_RANDOM_UNIFORM, .name = "StatelessRandomUniform",
  .api_name = "stateless_random_uniform", .n_inputs = 1, .n_outputs = 1,
  .flags = TS_OPF_NOT_DIFFERENTIABLE, ATTRS(uniform_attrs), .infer = stateless_uniform_infer,
  .kernel[TS_DEVICE_CPU] = stateless_uniform_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_stateless_uniform),
};
const ts_op_def ts__op_shuffle_indices = {
  .op = TS_OP_SHUFFLE_INDICES, .name = "ShuffleIndices", .api_name = "shuffle_indices",
  .n_inputs = 1, .n_outputs = 1, .flags = TS_OPF_NOT_DIFFERENTIABLE, ATTRS(shuffle_attrs),
  .infer = shuffle_infer, .kernel[TS_DEVICE_CPU] = shuffle_cpu,
};
const ts_op_def ts__op_random_normal = {
  .op = TS_OP_RANDOM_NORMAL, .name = "RandomNormal", .api_name = "random_normal",
  .n_inputs = 0, .n_outputs = 1, .flags = TS_OPF_RANDOM | TS_OPF_NOT_DIFFERENTIABLE, ATTRS(normal_attrs), .infer = normal_infer,
  .kernel[TS_DEVICE_CPU] = normal_cpu, .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_random),
};

/* ---- public wrappers ------------------------------------------------------------ */

ts_tensor *ts_fill_at(ts_loc loc, ts_shape shape, ts_tensor *value)
{
  ts_attr attrs[] = { TS_ATTR_SH(shape) };
  return ts__dispatch1(loc, TS_OP_FILL, &value, 1, attrs);
}

ts_tensor *ts_zeros_at(ts_loc loc, ts_dtype dtype, ts_shape shape)
{
  ts_attr attrs[] = { TS_ATTR_DT(dtype), TS_ATTR_SH(shape) };
  return ts__dispatch1(loc, TS_OP_ZEROS, NULL, 0, attrs);
}

ts_tensor *ts_ones_at(ts_loc loc, ts_dtype dtype, ts_shape shape)
{
  ts_attr attrs[] = { TS_ATTR_DT(dtype), TS_ATTR_SH(shape) };
  return ts__dispatch1(loc, TS_OP_ONES, NULL, 0, attrs);
}

ts_tensor *ts_zeros_like_at(ts_loc loc, ts_tensor *x)
{
  return ts__dispatch1(loc, TS_OP_ZEROS_LIKE, &x, 1, NULL);
}

ts_tensor *ts_ones_like_at(ts_loc loc, ts_tensor *x)
{
  return ts__dispatch1(loc, TS_OP_ONES_LIKE, &x, 1, NULL);
}

ts_tensor *ts_eye_at(ts_loc loc, ts_dtype dtype, int64_t rows, int64_t cols)
{
  ts_attr attrs[] = { TS_ATTR_DT(dtype), TS_ATTR_I(rows), TS_ATTR_I(cols) };
  return ts__dispatch1(loc, TS_OP_EYE, NULL, 0, attrs);
}

ts_tensor *ts_range_at(ts_loc loc, ts_dtype dtype, double start, double limit, double delta)
{
  ts_attr attrs[] = { TS_ATTR_DT(dtype), TS_ATTR_F(start), TS_ATTR_F(limit), TS_ATTR_F(delta) };
  return ts__dispatch1(loc, TS_OP_RANGE, NULL, 0, attrs);
}

ts_tensor *ts_random_uniform_at(ts_loc loc, ts_dtype dtype, ts_shape shape, double minval,
                                double maxval, uint64_t seed)
{
  ts_attr attrs[] = { TS_ATTR_DT(dtype), TS_ATTR_SH(shape), TS_ATTR_F(minval),
                      TS_ATTR_F(maxval), TS_ATTR_I((int64_t)seed) };
  return ts__dispatch1(loc, TS_OP_RANDOM_UNIFORM, NULL, 0, attrs);
}

ts_tensor *ts_random_normal_at(ts_loc loc, ts_dtype dtype, ts_shape shape, double mean,
                               double stddev, uint64_t seed)
{
  ts_attr attrs[] = { TS_ATTR_DT(dtype), TS_ATTR_SH(shape), TS_ATTR_F(mean), TS_ATTR_F(stddev),
                      TS_ATTR_I((int64_t)seed) };
  return ts__dispatch1(loc, TS_OP_RANDOM_NORMAL, NULL, 0, attrs);
}

ts_tensor *ts_stateless_random_uniform_at(ts_loc loc, ts_dtype dtype, ts_shape shape,
                                          double minval, double maxval, uint64_t seed,
                                          ts_tensor *counter)
{
  ts_attr attrs[] = { TS_ATTR_DT(dtype), TS_ATTR_SH(shape), TS_ATTR_F(minval),
                      TS_ATTR_F(maxval), TS_ATTR_I((int64_t)seed) };
  return ts__dispatch1(loc, TS_OP_STATELESS_RANDOM_UNIFORM, &counter, 1, attrs);
}

ts_tensor *ts_shuffle_indices_at(ts_loc loc, int64_t n, int64_t buffer_size, uint64_t seed,
                                 ts_tensor *counter)
{
  ts_attr attrs[] = { TS_ATTR_I(n), TS_ATTR_I(buffer_size), TS_ATTR_I((int64_t)seed) };
  return ts__dispatch1(loc, TS_OP_SHUFFLE_INDICES, &counter, 1, attrs);
}
