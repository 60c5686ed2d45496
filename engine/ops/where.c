/* ops/where.c — Select (ts_where): cond ? x : y with cond, x and y broadcast
 * together.
 *
 * The node keeps the input order of TensorFlow's Select and ONNX's Where
 * (cond, x, y) and takes x and y of one dtype.  The wrapper promotes x and y
 * with ordinary Cast ops when they differ, as the dispatcher's promotion
 * would have to skip cond; a traced graph shows those casts. */
#include "elementwise.h"

/* The select copies elements, so one loop per element size serves every
 * dtype.  Strides are 0 (broadcast) or 1; all 1 gets a loop that vectorises. */
typedef void (*where_loop)(int64_t n, const bool *c, int64_t sc, const void *x, int64_t sx,
                           const void *y, int64_t sy, void *out);

#define WHERE_LOOP(T)                                                                      \
  static void where_##T(int64_t n, const bool *restrict c, int64_t sc,                     \
                        const void *restrict px, int64_t sx, const void *restrict py,      \
                        int64_t sy, void *restrict po)                                     \
  {                                                                                        \
    const T *x = px, *y = py;                                                              \
    T *o = po;                                                                             \
    if (sc == 1 && sx == 1 && sy == 1)                                                     \
      TS_EW_FOR(n, i, o[i] = c[i] ? x[i] : y[i]);                                          \
    else                                                                                   \
      for (int64_t i = 0; i < n; i++)                                                      \
        o[i] = c[i * sc] ? x[i * sx] : y[i * sy];                                          \
  }

WHERE_LOOP(uint8_t)
WHERE_LOOP(uint16_t)
WHERE_LOOP(uint32_t)
WHERE_LOOP(uint64_t)

static const where_loop where_loops[TS_DTYPE_COUNT] = {
  [TS_F32] = where_uint32_t, [TS_F64] = where_uint64_t, [TS_I32] = where_uint32_t,
  [TS_I64] = where_uint64_t, [TS_U8] = where_uint8_t,   [TS_BOOL] = where_uint8_t,
  [TS_I8] = where_uint8_t,   [TS_I16] = where_uint16_t, [TS_U16] = where_uint16_t,
  [TS_U32] = where_uint32_t, [TS_U64] = where_uint64_t, [TS_F16] = where_uint16_t,
  [TS_BF16] = where_uint16_t,
};

static bool where_infer(ts_infer_ctx *c)
{
  const ts_info *cond = &c->in[0], *x = &c->in[1], *y = &c->in[2];
  char sc[TS_INFO_STR], sx[TS_INFO_STR], sy[TS_INFO_STR];
  ts_shape shape;

  if (cond->dtype != TS_BOOL)
    return ts__infer_fail(c, TS_ERR_DTYPE, "condition must be bool, got %s",
                          ts__info_str(sc, cond->dtype, cond->shape));
  if (x->dtype != y->dtype)
    return ts__infer_fail(c, TS_ERR_DTYPE, "x and y differ in dtype: %s and %s",
                          ts__info_str(sx, x->dtype, x->shape),
                          ts__info_str(sy, y->dtype, y->shape));
  if (!ts__broadcast_shapes(cond->shape, x->shape, &shape) ||
      !ts__broadcast_shapes(shape, y->shape, &shape))
    return ts__infer_fail(c, TS_ERR_SHAPE, "incompatible shapes for broadcasting: %s, %s and %s",
                          ts__info_str(sc, cond->dtype, cond->shape),
                          ts__info_str(sx, x->dtype, x->shape),
                          ts__info_str(sy, y->dtype, y->shape));
  c->out[0] = (ts_info){ x->dtype, shape };
  return true;
}

/* The output split into ranges for the pool: one flat row when every
 * operand has its shape, else rows of the broadcast iterator. */
typedef struct where_job {
  where_loop loop;
  const bool *c;
  const char *x, *y;
  char *out;
  size_t size;
  bool flat;
  ts_ew_iter it; /* unless flat */
} where_job;

static void where_range(void *ctx, int64_t begin, int64_t end)
{
  const where_job *j = ctx;
  size_t size = j->size;
  if (j->flat) {
    j->loop(end - begin, j->c + begin, 1, j->x + begin * size, 1, j->y + begin * size, 1,
            j->out + begin * size);
    return;
  }
  ts_ew_iter it = j->it;
  int64_t sc = ts__ew_inner_stride(&it, 0), sx = ts__ew_inner_stride(&it, 1),
          sy = ts__ew_inner_stride(&it, 2);
  int64_t col = begin % it.inner;
  ts__ew_iter_seek(&it, begin / it.inner);
  while (begin < end) {
    int64_t n = MIN(it.inner - col, end - begin);
    j->loop(n, j->c + it.off[0] + col * sc, sc, j->x + (it.off[1] + col * sx) * size, sx,
            j->y + (it.off[2] + col * sy) * size, sy, j->out + begin * size);
    begin += n;
    col = 0;
    ts__ew_iter_next(&it);
  }
}

static bool where_cpu(ts_kernel_ctx *k)
{
  ts_tensor *o = k->out[0];
  if (o->size == 0)
    return true;

  where_job j = { .loop = where_loops[o->dtype], .c = k->in[0]->data, .x = k->in[1]->data,
                  .y = k->in[2]->data, .out = o->data, .size = ts_dtype_size(o->dtype) };
  j.flat = k->in[0]->size == o->size && k->in[1]->size == o->size && k->in[2]->size == o->size;
  if (!j.flat)
    ts__ew_iter_init(&j.it, o->shape, 3, k->in);
  ts__parallel_range(o->size, TS_EW_GRAIN, where_range, &j);
  return true;
}

/* To x where cond holds, to y elsewhere; none to cond. */
static bool where_grad(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                       ts_tensor **gi)
{
  ts_loc l = c->loc;
  ts_tensor *zero = ts__grad_scalar(g[0]->dtype, 0);
  gi[1] = ts__grad_unbroadcast(l, ts_where_at(l, c->in[0], g[0], zero), c->in[1], 0);
  gi[2] = ts__grad_unbroadcast(l, ts_where_at(l, c->in[0], zero, g[0]), c->in[2], 0);
  return gi[1] && gi[2];
}

const ts_op_def ts__op_where = {
  .op = TS_OP_WHERE,
  .name = "Select",
  .api_name = "where",
  .n_inputs = 3,
  .n_outputs = 1,
  .infer = where_infer,
  .kernel[TS_DEVICE_CPU] = where_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_where),
  .grad = where_grad,
};

ts_tensor *ts_where_at(ts_loc loc, ts_tensor *cond, ts_tensor *x, ts_tensor *y)
{
  if (cond && x && y && x->dtype != y->dtype) {
    ts_dtype dtype = ts_dtype_promote(x->dtype, y->dtype);
    if (x->dtype != dtype)
      x = ts_cast_at(loc, x, dtype);
    if (y->dtype != dtype)
      y = ts_cast_at(loc, y, dtype);
  }
  ts_tensor *in[3] = { cond, x, y };
  return ts__dispatch1(loc, TS_OP_WHERE, in, 3, NULL);
}
