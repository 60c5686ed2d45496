/* ops/cast.c — Cast: any dtype to any dtype, one loop per pair.
 *
 * Float to integer truncates toward zero and saturates (NaN gives 0), so no
 * value is undefined behaviour; integer to integer wraps as NumPy's astype;
 * anything to bool is x != 0. */
#include "elementwise.h"

#include <math.h>

static inline int32_t saturate_i32(double v)
{
  return isnan(v) ? 0 : v <= INT32_MIN ? INT32_MIN : v >= INT32_MAX ? INT32_MAX : (int32_t)v;
}

static inline int64_t saturate_i64(double v)
{
  return isnan(v) ? 0 : v <= -0x1p63 ? INT64_MIN : v >= 0x1p63 ? INT64_MAX : (int64_t)v;
}

static inline uint8_t saturate_u8(double v)
{
  return isnan(v) ? 0 : v <= 0 ? 0 : v >= UINT8_MAX ? UINT8_MAX : (uint8_t)v;
}

#define TO_F32(x) ((float)(x))
#define TO_F64(x) ((double)(x))
#define TO_I32(x) _Generic((x), float: saturate_i32(x), double: saturate_i32(x), default: (int32_t)(x))
#define TO_I64(x) _Generic((x), float: saturate_i64(x), double: saturate_i64(x), default: (int64_t)(x))
#define TO_U8(x) _Generic((x), float: saturate_u8(x), double: saturate_u8(x), default: (uint8_t)(x))
#define TO_BOOL(x) ((x) != 0)

typedef void (*cast_loop)(int64_t n, const void *x, void *out);

#define CAST_LOOP(fs, F, ts, T, CONVERT)                                               \
  static void cast_##fs##_##ts(int64_t n, const void *restrict px, void *restrict po) \
  {                                                                                   \
    const F *x = px;                                                                  \
    T *o = po;                                                                        \
    TS_EW_FOR(n, i, o[i] = CONVERT(x[i]));                                            \
  }

#define CAST_FROM(fs, F)                                                         \
  CAST_LOOP(fs, F, f32, float, TO_F32) CAST_LOOP(fs, F, f64, double, TO_F64)     \
  CAST_LOOP(fs, F, i32, int32_t, TO_I32) CAST_LOOP(fs, F, i64, int64_t, TO_I64)  \
  CAST_LOOP(fs, F, u8, uint8_t, TO_U8) CAST_LOOP(fs, F, b, bool, TO_BOOL)

CAST_FROM(f32, float)
CAST_FROM(f64, double)
CAST_FROM(i32, int32_t)
CAST_FROM(i64, int64_t)
CAST_FROM(u8, uint8_t)
CAST_FROM(b, bool)

#define CAST_ROW(fs)                                                        \
  { [TS_F32] = cast_##fs##_f32, [TS_F64] = cast_##fs##_f64,                 \
    [TS_I32] = cast_##fs##_i32, [TS_I64] = cast_##fs##_i64,                 \
    [TS_U8] = cast_##fs##_u8, [TS_BOOL] = cast_##fs##_b }

static const cast_loop cast_loops[TS_DTYPE_COUNT][TS_DTYPE_COUNT] = {
  [TS_F32] = CAST_ROW(f32), [TS_F64] = CAST_ROW(f64), [TS_I32] = CAST_ROW(i32),
  [TS_I64] = CAST_ROW(i64), [TS_U8] = CAST_ROW(u8),   [TS_BOOL] = CAST_ROW(b),
};

static bool cast_infer(ts_infer_ctx *c)
{
  ts_dtype dtype = c->attrs[0].dtype;
  if ((unsigned)dtype >= TS_DTYPE_COUNT)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "invalid target dtype %d", (int)dtype);
  c->out[0] = (ts_info){ dtype, c->in[0].shape };
  return true;
}

typedef struct cast_job {
  cast_loop loop;
  const char *x;
  char *out;
  size_t size_in, size_out;
} cast_job;

static void cast_range(void *ctx, int64_t begin, int64_t end)
{
  const cast_job *j = ctx;
  j->loop(end - begin, j->x + begin * j->size_in, j->out + begin * j->size_out);
}

static bool cast_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  ts_tensor *o = k->out[0];
  cast_job j = { cast_loops[x->dtype][o->dtype], x->data, o->data, ts_dtype_size(x->dtype),
                 ts_dtype_size(o->dtype) };
  ts__parallel_range(x->size, TS_EW_GRAIN, cast_range, &j);
  return true;
}

/* Back to the input's dtype; none flows to an integer or bool input. */
static bool cast_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                      ts_tensor **gi)
{
  ts_dtype dt = c->in[0]->dtype;
  if (dt != TS_F32 && dt != TS_F64)
    return true;
  return (gi[0] = ts_cast_at(c->loc, g[0], dt)) != NULL;
}

static const ts_attr_def cast_attrs[] = { { "dtype", TS_ATTR_DTYPE } };

const ts_op_def ts__op_cast = {
  .op = TS_OP_CAST,
  .name = "Cast",
  .api_name = "cast",
  .n_inputs = 1,
  .n_outputs = 1,
  .n_attrs = 1,
  .attrs = cast_attrs,
  .infer = cast_infer,
  .kernel[TS_DEVICE_CPU] = cast_cpu,
  .grad = cast_grad,
};

ts_tensor *ts_cast_at(ts_loc loc, ts_tensor *x, ts_dtype dtype)
{
  ts_attr attrs[] = { TS_ATTR_DT(dtype) };
  return ts__dispatch1(loc, TS_OP_CAST, &x, 1, attrs);
}
