/* ops/cast.c — Cast: any dtype to any dtype, one loop per pair.
 *
 * Float to integer truncates toward zero and wraps as NumPy's astype and
 * TensorFlow's CPU kernel do, with no value undefined behaviour
 * (ops/cast_formulas.h); integer to integer wraps as NumPy's astype;
 * anything to bool is x != 0. */
#include "elementwise.h"

#include "cast_formulas.h"

/* A value (a C number) to each dtype; 16-bit floats round from double. */
#define FROM_FLOAT(x, conv, T) _Generic((x), float: conv(x), double: conv(x), default: (T)(x))
#define TO_F32(x) ((float)(x))
#define TO_F64(x) ((double)(x))
#define TO_I32(x) FROM_FLOAT(x, float_to_i32, int32_t)
#define TO_I64(x) FROM_FLOAT(x, float_to_i64, int64_t)
#define TO_U8(x) FROM_FLOAT(x, float_to_u8, uint8_t)
#define TO_BOOL(x) ((x) != 0)
#define TO_I8(x) FROM_FLOAT(x, float_to_i8, int8_t)
#define TO_I16(x) FROM_FLOAT(x, float_to_i16, int16_t)
#define TO_U16(x) FROM_FLOAT(x, float_to_u16, uint16_t)
#define TO_U32(x) FROM_FLOAT(x, float_to_u32, uint32_t)
#define TO_U64(x) FROM_FLOAT(x, float_to_u64, uint64_t)
#define TO_F16(x) ts__f64_to_f16((double)(x))
#define TO_BF16(x) ts__f64_to_bf16((double)(x))

/* An element to a C number: 16-bit floats widen to float (exactly). */
#define AS_IS(x) (x)
#define F16_VALUE(x) ts__f16_to_f32(x)
#define BF16_VALUE(x) ts__bf16_to_f32(x)

typedef void (*cast_loop)(int64_t n, const void *x, void *out);

#define CAST_LOOP(fs, F, VALUE, ts, T, CONVERT)                                        \
  static void cast_##fs##_##ts(int64_t n, const void *restrict px, void *restrict po) \
  {                                                                                   \
    const F *x = px;                                                                  \
    T *o = po;                                                                        \
    TS_EW_FOR(n, i, o[i] = CONVERT(VALUE(x[i])));                                     \
  }

#define CAST_FROM(fs, F, V)                                                                      \
  CAST_LOOP(fs, F, V, f32, float, TO_F32) CAST_LOOP(fs, F, V, f64, double, TO_F64)               \
  CAST_LOOP(fs, F, V, i32, int32_t, TO_I32) CAST_LOOP(fs, F, V, i64, int64_t, TO_I64)            \
  CAST_LOOP(fs, F, V, u8, uint8_t, TO_U8) CAST_LOOP(fs, F, V, b, bool, TO_BOOL)                  \
  CAST_LOOP(fs, F, V, i8, int8_t, TO_I8) CAST_LOOP(fs, F, V, i16, int16_t, TO_I16)               \
  CAST_LOOP(fs, F, V, u16, uint16_t, TO_U16) CAST_LOOP(fs, F, V, u32, uint32_t, TO_U32)          \
  CAST_LOOP(fs, F, V, u64, uint64_t, TO_U64) CAST_LOOP(fs, F, V, f16, ts_f16, TO_F16)            \
  CAST_LOOP(fs, F, V, bf16, ts_bf16, TO_BF16)

CAST_FROM(f32, float, AS_IS)
CAST_FROM(f64, double, AS_IS)
CAST_FROM(i32, int32_t, AS_IS)
CAST_FROM(i64, int64_t, AS_IS)
CAST_FROM(u8, uint8_t, AS_IS)
CAST_FROM(b, bool, AS_IS)
CAST_FROM(i8, int8_t, AS_IS)
CAST_FROM(i16, int16_t, AS_IS)
CAST_FROM(u16, uint16_t, AS_IS)
CAST_FROM(u32, uint32_t, AS_IS)
CAST_FROM(u64, uint64_t, AS_IS)
CAST_FROM(f16, ts_f16, F16_VALUE)
CAST_FROM(bf16, ts_bf16, BF16_VALUE)

#define CAST_ROW(fs)                                                        \
  { [TS_F32] = cast_##fs##_f32, [TS_F64] = cast_##fs##_f64,                 \
    [TS_I32] = cast_##fs##_i32, [TS_I64] = cast_##fs##_i64,                 \
    [TS_U8] = cast_##fs##_u8, [TS_BOOL] = cast_##fs##_b,                    \
    [TS_I8] = cast_##fs##_i8, [TS_I16] = cast_##fs##_i16,                   \
    [TS_U16] = cast_##fs##_u16, [TS_U32] = cast_##fs##_u32,                 \
    [TS_U64] = cast_##fs##_u64, [TS_F16] = cast_##fs##_f16,                 \
    [TS_BF16] = cast_##fs##_bf16 }

/* Every pair of numeric dtypes; string and variant tensors cast to nothing. */
static const cast_loop cast_loops[TS_DTYPE_COUNT][TS_DTYPE_COUNT] = {
  [TS_F32] = CAST_ROW(f32), [TS_F64] = CAST_ROW(f64), [TS_I32] = CAST_ROW(i32),
  [TS_I64] = CAST_ROW(i64), [TS_U8] = CAST_ROW(u8),   [TS_BOOL] = CAST_ROW(b),
  [TS_I8] = CAST_ROW(i8),   [TS_I16] = CAST_ROW(i16), [TS_U16] = CAST_ROW(u16),
  [TS_U32] = CAST_ROW(u32), [TS_U64] = CAST_ROW(u64), [TS_F16] = CAST_ROW(f16),
  [TS_BF16] = CAST_ROW(bf16),
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
  if (!ts_dtype_is_float(dt))
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
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_cast),
  .grad = cast_grad,
};

ts_tensor *ts_cast_at(ts_loc loc, ts_tensor *x, ts_dtype dtype)
{
  ts_attr attrs[] = { TS_ATTR_DT(dtype) };
  return ts__dispatch1(loc, TS_OP_CAST, &x, 1, attrs);
}
