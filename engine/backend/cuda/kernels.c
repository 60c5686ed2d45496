/* cuda/kernels.c — the op rows' kernels for TS_DEVICE_CUDA: each takes
 * what the op was handed (ts_kernel_ctx) and queues the .cu launcher of
 * cuda/kernels.h on the device's stream.  ts__cuda_op_supported says
 * beforehand which dtypes and shapes a kernel takes, so that the others
 * fall back to the CPU visibly (the dispatcher's DEVICE_FALLBACK warning)
 * instead of failing here. */
#include "../../engine-private.h"
#include "../../ops/elementwise.h"
#include "../../kernels/kernels.h"
#include "cuda_backend.h"
#include "kernels.h"

static void *stream_of(ts_kernel_ctx *k)
{
  return ts__cuda_stream(k->backend);
}

/* What supports_op should have refused: the inputs' dtype (or, for ops
 * of none, the output's). */
static bool no_launcher(ts_kernel_ctx *k)
{
  const ts_tensor *t = k->n_in > 0 ? k->in[0] : k->out[0];
  return ts__kernel_fail(k, TS_ERR_UNIMPLEMENTED, "no CUDA kernel for %s",
                         ts_dtype_name(t->dtype));
}

/* Where each input is read for each output index (the broadcast
 * iterator's merged dims, so equal shapes are one flat run). */
static void bcast_of(ts_cu_bcast *s, ts_shape out, int n_in, ts_tensor *const *in)
{
  ts_ew_iter it;
  ts__ew_iter_init(&it, out, n_in, in);
  *s = (ts_cu_bcast){ .rank = it.rank, .n_in = n_in };
  for (int d = 0; d < it.rank; d++) {
    s->dim[d] = it.dim[d];
    for (int i = 0; i < n_in; i++)
      s->stride[i][d] = it.stride[i][d];
  }
}

bool ts__cuda_unary(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  return ts__cu_unary(k->def->op, x->dtype, x->size, x->data, k->out[0]->data, stream_of(k)) ||
         no_launcher(k);
}

bool ts__cuda_binary(ts_kernel_ctx *k)
{
  ts_tensor *o = k->out[0];
  ts_cu_bcast s;
  bcast_of(&s, o->shape, 2, k->in);
  return ts__cu_binary(k->def->op, k->in[0]->dtype, o->size, &s, k->in[0]->data, k->in[1]->data,
                       o->data, stream_of(k)) ||
         no_launcher(k);
}

bool ts__cuda_fused(ts_kernel_ctx *k, const ts_cu_program *p)
{
  ts_tensor *o = k->out[0];
  if (k->n_in > TS_CU_MAX_IN)
    return no_launcher(k);
  ts_cu_bcast s;
  /* the broadcast iterator takes up to TS_EW_MAX_IN inputs: strides here */
  s = (ts_cu_bcast){ .rank = o->shape.rank, .n_in = k->n_in };
  for (int d = 0; d < o->shape.rank; d++)
    s.dim[d] = o->shape.dim[d];
  for (int i = 0; i < k->n_in; i++) {
    const ts_tensor *t = k->in[i];
    int off = o->shape.rank - t->shape.rank;
    int64_t step = 1;
    for (int d = o->shape.rank - 1; d >= 0; d--) {
      int64_t dim = d >= off ? t->shape.dim[d - off] : 1;
      s.stride[i][d] = dim == 1 ? 0 : step;
      step *= dim;
    }
  }
  const void *in[TS_CU_MAX_IN];
  for (int i = 0; i < k->n_in; i++)
    in[i] = k->in[i]->data;
  return ts__cu_fused(p, o->dtype, o->size, &s, in, o->data, stream_of(k)) || no_launcher(k);
}

bool ts__cuda_cast(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  ts_tensor *o = k->out[0];
  return ts__cu_cast(x->dtype, o->dtype, x->size, x->data, o->data, stream_of(k)) ||
         no_launcher(k);
}

bool ts__cuda_fill(ts_kernel_ctx *k)
{
  ts_tensor *o = k->out[0];
  void *s = stream_of(k);
  bool ok;
  switch (k->def->op) {
  case TS_OP_FILL: ok = ts__cu_fill_from(o->dtype, o->size, k->in[0]->data, o->data, s); break;
  case TS_OP_ONES: case TS_OP_ONES_LIKE: ok = ts__cu_fill(o->dtype, o->size, 1, o->data, s); break;
  default: ok = ts__cu_fill(o->dtype, o->size, 0, o->data, s); break;
  }
  return ok || no_launcher(k);
}

bool ts__cuda_eye(ts_kernel_ctx *k)
{
  ts_tensor *o = k->out[0];
  return ts__cu_eye(o->dtype, o->shape.dim[0], o->shape.dim[1], o->data, stream_of(k)) ||
         no_launcher(k);
}

/* A view, except of a variable (whose assignments would change it): a
 * copy on the stream. */
bool ts__cuda_identity(ts_kernel_ctx *k)
{
  ts_tensor *x = k->in[0];
  if (!x->is_variable)
    return (k->out[0] = ts__tensor_view(x, x->shape)) != NULL;
  ts_tensor *y = ts__tensor_alloc_on(k->loc, k->backend, x->dtype, x->shape);
  size_t bytes = (size_t)x->size * ts_dtype_size(x->dtype);
  if (!y || (bytes && !ts__cuda_copy_2d(k->backend, y->data, bytes, x->data, bytes, bytes, 1)))
    return false; /* the scope releases y (ts__tensor_alloc_on adopts it) */
  k->out[0] = y;
  return true;
}

bool ts__cuda_range(ts_kernel_ctx *k)
{
  ts_tensor *o = k->out[0];
  return ts__cu_range(o->dtype, o->size, k->attrs[1].f, k->attrs[3].f, o->data, stream_of(k)) ||
         no_launcher(k);
}

/* x as [outer, len, inner] around its reduced axes; false when they are
 * not one run (the CPU kernel reorders such inputs first). */
static bool reduce_layout(const ts_kernel_ctx *k, int64_t *outer, int64_t *len, int64_t *inner)
{
  const ts_tensor *x = k->in[0];
  int rank = x->shape.rank;
  bool reduced[TS_MAX_RANK] = { false };
  if (k->def->op == TS_OP_ARGMAX || k->def->op == TS_OP_ARGMIN) {
    int64_t a = k->attrs[0].i;
    if (a < -rank || a >= rank)
      return false;
    reduced[a < 0 ? a + rank : a] = true;
  } else {
    ts_ints axes = k->attrs[0].ints;
    for (int d = 0; d < rank; d++)
      reduced[d] = axes.n < 0;
    for (int i = 0; i < axes.n; i++) {
      int64_t a = axes.v[i];
      if (a < -rank || a >= rank)
        return false;
      reduced[a < 0 ? a + rank : a] = true;
    }
  }
  int first = rank, last = -1;
  for (int d = 0; d < rank; d++)
    if (reduced[d] && x->shape.dim[d] != 1) {
      first = MIN(first, d);
      last = d;
    }
  *outer = *len = *inner = 1;
  for (int d = 0; d < rank; d++) {
    int64_t n = x->shape.dim[d];
    if (d >= first && d <= last) {
      if (!reduced[d] && n != 1)
        return false;
      *len *= n;
    } else if (d < first) {
      *outer *= n;
    } else {
      *inner *= n;
    }
  }
  return true;
}

bool ts__cuda_reduce(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  int64_t outer, len, inner;
  if (!reduce_layout(k, &outer, &len, &inner))
    return no_launcher(k);
  return ts__cu_reduce(k->def->op, x->dtype, outer, len, inner, x->data, k->out[0]->data,
                       stream_of(k)) ||
         no_launcher(k);
}

bool ts__cuda_softmax(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  int64_t len = x->shape.dim[x->shape.rank - 1];
  return ts__cu_softmax(k->def->op == TS_OP_LOG_SOFTMAX, x->dtype, len ? x->size / len : 0, len,
                        x->data, k->out[0]->data, stream_of(k)) ||
         no_launcher(k);
}

/* Cumsum and Cumprod: x as [outer, n, inner] around the axis. */
bool ts__cuda_cumulative(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  int ax = 0;
  ts__axis(k->attrs[0].i, x->shape.rank, &ax); /* inference checked it */
  int64_t outer = ts__dims_prod(x->shape, 0, ax), inner = ts__dims_prod(x->shape, ax + 1, x->shape.rank);
  return ts__cu_cumulative(k->def->op == TS_OP_CUMPROD, x->dtype, outer, x->shape.dim[ax], inner,
                           k->attrs[1].b, k->attrs[2].b, x->data, k->out[0]->data, stream_of(k)) ||
         no_launcher(k);
}

/* The axis TopKV2 (the last), Sort or ArgSort (their attribute) orders x along. */
static int sort_axis(const ts_kernel_ctx *k)
{
  int rank = k->in[0]->shape.rank, ax = rank - 1;
  if (k->def->op != TS_OP_TOP_K)
    ts__axis(k->attrs[0].i, rank, &ax); /* inference checked it */
  return ax;
}

/* TopKV2 (the k largest along the last axis, values and indices), Sort
 * and ArgSort (along their axis, either way): x as [outer, n, inner]. */
bool ts__cuda_sort(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  bool top_k = k->def->op == TS_OP_TOP_K, arg = k->def->op == TS_OP_ARGSORT;
  int ax = sort_axis(k);
  int64_t n = x->shape.dim[ax];
  return ts__cu_sort(x->dtype, ts__dims_prod(x->shape, 0, ax), n,
                     ts__dims_prod(x->shape, ax + 1, x->shape.rank), top_k ? k->attrs[0].i : n,
                     top_k || k->attrs[1].b, x->data, arg ? NULL : k->out[0]->data,
                     top_k ? k->out[1]->data : arg ? k->out[0]->data : NULL, stream_of(k)) ||
         no_launcher(k);
}

/* ---- layout ------------------------------------------------------------------------ */

static void contiguous_strides(ts_shape s, int64_t *stride)
{
  int64_t step = 1;
  for (int d = s.rank - 1; d >= 0; d--) {
    stride[d] = step;
    step *= s.dim[d];
  }
}

bool ts__cuda_transpose(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  ts_tensor *y = k->out[0];
  int rank = x->shape.rank;
  int64_t in_stride[TS_MAX_RANK];
  contiguous_strides(x->shape, in_stride);
  ts_cu_bcast s = { .rank = rank, .n_in = 1 };
  for (int i = 0; i < rank; i++) {
    int p = rank - 1 - i;
    if (k->attrs[0].ints.n >= 0)
      ts__axis(k->attrs[0].ints.v[i], rank, &p); /* inference checked it */
    s.dim[i] = y->shape.dim[i];
    s.stride[0][i] = in_stride[p];
  }
  return ts__cu_strided(ts_dtype_size(x->dtype), y->size, &s, 0, x->data, y->data,
                        stream_of(k)) ||
         no_launcher(k);
}

bool ts__cuda_slice(ts_kernel_ctx *k)
{
  const ts_tensor *x = k->in[0];
  ts_tensor *y = k->out[0];
  int rank = x->shape.rank;
  int64_t stride[TS_MAX_RANK], base = 0;
  contiguous_strides(x->shape, stride);
  ts_cu_bcast s = { .rank = rank, .n_in = 1 };
  for (int i = 0; i < rank; i++) {
    base += k->attrs[0].ints.v[i] * stride[i];
    s.dim[i] = y->shape.dim[i];
    s.stride[0][i] = stride[i];
  }
  return ts__cu_strided(ts_dtype_size(x->dtype), y->size, &s, base, x->data, y->data,
                        stream_of(k)) ||
         no_launcher(k);
}

/* Tile (x's index modulo its dim per dim), Pad (x's index shifted by
 * the padding before, the constant, or reflected) and ReverseV2 (x's
 * index mirrored in the dims of flip): one index map each. */
static bool index_map(ts_kernel_ctx *k, ts_cu_map_mode mode, const int64_t *before, const void *value_at,
                      unsigned flip)
{
  const ts_tensor *x = k->in[0];
  ts_tensor *y = k->out[0];
  ts_cu_map m = { .rank = x->shape.rank, .mode = mode, .flip = flip };
  contiguous_strides(x->shape, m.in_stride);
  for (int d = 0; d < m.rank; d++) {
    m.out_dim[d] = y->shape.dim[d];
    m.in_dim[d] = x->shape.dim[d];
    m.before[d] = before ? before[d] : 0;
  }
  if (y->size > 0 && x->size == 0) /* a CONSTANT pad of nothing: all the constant */
    return (value_at ? ts__cu_fill_from(y->dtype, y->size, value_at, y->data, stream_of(k))
                     : ts__cu_fill(y->dtype, y->size, 0, y->data, stream_of(k))) ||
           no_launcher(k);
  return ts__cu_index_map(ts_dtype_size(x->dtype), y->size, &m, x->data, value_at, y->data,
                          stream_of(k)) ||
         no_launcher(k);
}

bool ts__cuda_tile(ts_kernel_ctx *k)
{
  return index_map(k, TS_CU_MAP_TILE, NULL, NULL, 0);
}

bool ts__cuda_pad(ts_kernel_ctx *k)
{
  const char *mode = k->attrs[2].s;
  ts_cu_map_mode m = strcmp(mode, "REFLECT") == 0     ? TS_CU_MAP_PAD_REFLECT
                     : strcmp(mode, "SYMMETRIC") == 0 ? TS_CU_MAP_PAD_SYMMETRIC
                                                      : TS_CU_MAP_PAD_CONSTANT; /* inference checked it */
  return index_map(k, m, k->attrs[0].ints.v, k->n_in == 2 ? k->in[1]->data : NULL, 0);
}

bool ts__cuda_reverse(ts_kernel_ctx *k)
{
  ts_ints axis = k->attrs[0].ints;
  unsigned flip = 0;
  for (int i = 0; i < axis.n; i++) {
    int d;
    if (ts__axis(axis.v[i], k->in[0]->shape.rank, &d)) /* inference checked it */
      flip |= 1u << d;
  }
  return index_map(k, TS_CU_MAP_REVERSE, NULL, NULL, flip);
}

static int64_t dims_prod(ts_shape s, int from, int to)
{
  int64_t n = 1;
  for (int d = from; d < to; d++)
    n *= s.dim[d];
  return n;
}

bool ts__cuda_one_hot(ts_kernel_ctx *k)
{
  const ts_tensor *ix = k->in[0];
  ts_tensor *y = k->out[0];
  int64_t axis = k->attrs[1].i;
  int rank = ix->shape.rank, at = axis == -1 ? rank : (int)axis;
  return ts__cu_one_hot(ts_dtype_size(y->dtype), ix->dtype, y->size, k->attrs[0].i,
                        dims_prod(ix->shape, at, rank), ix->data, k->in[1]->data, k->in[2]->data, y->data,
                        stream_of(k)) ||
         no_launcher(k);
}

/* Concat and Split (and Pack and Unpack, their parts without the axis of
 * 1): each operand's chunks are one 2-D copy on the stream. */
bool ts__cuda_concat(ts_kernel_ctx *k)
{
  ts_tensor *y = k->out[0];
  bool concat = k->def->op == TS_OP_CONCAT || k->def->op == TS_OP_PACK;
  const ts_tensor *whole = concat ? y : k->in[0];
  int axis = 0;
  ts__axis(k->attrs[concat ? 0 : 1].i, whole->shape.rank, &axis); /* inference checked it */
  if (whole->size == 0)
    return true;
  size_t es = ts_dtype_size(whole->dtype);
  size_t height = (size_t)dims_prod(whole->shape, 0, axis);
  size_t pitch = (size_t)dims_prod(whole->shape, axis, whole->shape.rank) * es;
  size_t at = 0;
  int n = concat ? k->n_in : k->n_out;
  for (int i = 0; i < n; i++) {
    const ts_tensor *part = concat ? k->in[i] : k->out[i];
    size_t width = (size_t)dims_prod(part->shape, axis, part->shape.rank) * es;
    if (width && !ts__cuda_copy_2d(k->backend, concat ? (char *)y->data + at : part->data,
                                   concat ? pitch : width,
                                   concat ? part->data : (const char *)k->in[0]->data + at,
                                   concat ? width : pitch, width, height))
      return false;
    at += width;
  }
  return true;
}

bool ts__cuda_where(ts_kernel_ctx *k)
{
  ts_tensor *o = k->out[0];
  ts_cu_bcast s;
  bcast_of(&s, o->shape, 3, k->in);
  return ts__cu_where(ts_dtype_size(o->dtype), o->size, &s, k->in[0]->data, k->in[1]->data,
                      k->in[2]->data, o->data, stream_of(k)) ||
         no_launcher(k);
}

/* ---- rows that index: an index out of range is an error ------------------------------
 * As the CPU kernels, an index out of range is an error naming it (TF's
 * GPU kernels instead give zeros, or NaN losses).  Eagerly the indices
 * are read on a host copy first, which waits for them; while a CUDA Graph
 * is captured (a host read would break it) the kernel records the first
 * it meets and the next host copy or synchronize fails with the same
 * error (cuda.c's index faults): docs/engine.md, "Placement". */

bool ts__cuda_index_fail(const ts_cuda_index_check *c, int64_t at, int64_t value)
{
  if (c->check) { /* the row's own check on the element refused: the CPU's error */
    uint64_t element = 0;
    ts__store_i64(c->dtype, &element, 0, value);
    ts_tensor refused = { .dtype = c->dtype, .size = 1, .data = &element };
    ts_tensor *in[2] = { NULL, &refused };
    ts_kernel_ctx k = { .def = c->def, .loc = c->loc, .n_in = 2, .in = in };
    if (!c->check(&k))
      return false;
    return ts__op_fail(c->loc, c->def, TS_ERR_INTERNAL,
                       "the CUDA kernel refused element %lld (%lld) of its second operand",
                       (long long)at, (long long)value),
           false;
  }
  if (c->def->op == TS_OP_GATHER)
    return ts__op_fail(c->loc, c->def, TS_ERR_OUT_OF_RANGE, "indices[%lld] = %lld is not in [0, %lld)",
                       (long long)at, (long long)value, (long long)c->limit),
           false;
  char buf[TS_INFO_STR];
  return ts__op_fail(c->loc, c->def, TS_ERR_OUT_OF_RANGE,
                     "Received a label value of %lld which is outside the valid range of "
                     "[0, %lld) (element %lld of labels %s)",
                     (long long)value, (long long)c->limit, (long long)at,
                     ts__info_str(buf, c->dtype, c->shape)),
         false;
}

/* Where k's kernel records a fault (NULL: none, the indices t were all in
 * [0, limit) on the host); false + error when one was out of range or
 * could not be read. */
static bool index_check(ts_kernel_ctx *k, const ts_tensor *t, int64_t limit,
                        ts_cu_index_fault **fault)
{
  ts_cuda_index_check c = { k->def, k->loc, limit, t->dtype, t->shape, NULL };
  if ((*fault = ts__cuda_index_fault(k->backend, k->correlation, &c)))
    return true;
  const ts_tensor *h = ts__tensor_host(k->loc, t);
  if (!h)
    return false;
  for (int64_t j = 0; j < h->size; j++) {
    int64_t v = ts__load_i64(h->dtype, h->data, j);
    if (v < 0 || v >= limit)
      return ts__cuda_index_fail(&c, j, v);
  }
  return true;
}

bool ts__cuda_gather(ts_kernel_ctx *k)
{
  const ts_tensor *p = k->in[0], *ix = k->in[1];
  ts_tensor *y = k->out[0];
  int axis = 0;
  ts__axis(k->attrs[0].i, p->shape.rank, &axis); /* inference checked it */
  int64_t n = p->shape.dim[axis];
  ts_cu_index_fault *fault;
  if (!index_check(k, ix, n, &fault))
    return false;
  return ts__cu_gather(ts_dtype_size(p->dtype), ix->dtype, dims_prod(p->shape, 0, axis), n,
                       ix->size, dims_prod(p->shape, axis + 1, p->shape.rank), p->data, ix->data,
                       y->data, fault, k->correlation, stream_of(k)) ||
         no_launcher(k);
}

/* Integer FloorDiv, FloorMod and Pow while a CUDA Graph is captured: the
 * kernel records the first divisor or exponent that check refuses, and
 * the next host copy or synchronize fails with check's error. */
int ts__cuda_binary_captured(ts_kernel_ctx *k, bool (*check)(ts_kernel_ctx *k))
{
  const ts_tensor *b = k->in[1];
  ts_tensor *o = k->out[0];
  ts_cuda_index_check c = { k->def, k->loc, 0, b->dtype, b->shape, check };
  ts_cu_index_fault *fault = ts__cuda_index_fault(k->backend, k->correlation, &c);
  if (!fault)
    return -1;
  ts_cu_bcast s;
  bcast_of(&s, o->shape, 2, k->in);
  return ts__cu_binary_checked(k->def->op, b->dtype, o->size, &s, k->in[0]->data, b->data,
                               o->data, fault, k->correlation, stream_of(k)) ||
         no_launcher(k);
}

bool ts__cuda_xent(ts_kernel_ctx *k)
{
  const ts_tensor *labels = k->in[0], *logits = k->in[1];
  ts_cu_index_fault *fault;
  if (!index_check(k, labels, logits->shape.dim[logits->shape.rank - 1], &fault))
    return false;
  return ts__cu_xent(logits->dtype, labels->dtype, labels->size,
                     logits->shape.dim[logits->shape.rank - 1], logits->data, labels->data,
                     k->out[0]->data, fault, k->correlation, stream_of(k)) ||
         no_launcher(k);
}

/* ---- random: the CPU's numbers, uploaded ----------------------------------------
 * The CPU draws from xoshiro256**, one sequential stream per op (ops/
 * create.c), which has no counter form to split across threads; so that a
 * seed gives the same numbers on every device, the row's CPU kernel fills
 * a host buffer and it is uploaded (in a capture, a node copying from the
 * plan's pinned staging, cuda.c: its values are fixed by the seed, so a
 * replay of the graph uploads what the op would draw again). */
bool ts__cuda_random(ts_kernel_ctx *k)
{
  ts_tensor *y = k->out[0];
  size_t bytes = (size_t)y->size * ts_dtype_size(y->dtype);
  if (bytes == 0)
    return true;
  ts_tensor *host = ts__tensor_alloc(k->loc, y->dtype, y->shape);
  if (!host)
    return false;
  ts_kernel_ctx on_host = *k;
  ts_tensor *out[1] = { host };
  on_host.out = out;
  on_host.backend = ts_backend_cpu();
  return k->def->kernel[TS_DEVICE_CPU](&on_host) &&
         ts__data_copy(y, host, bytes);
}

/* StatelessRandomUniform: the CPU's Philox stream, drawn on the device from
 * the counter there (ops/philox.h). */
bool ts__cuda_stateless_uniform(ts_kernel_ctx *k)
{
  ts_tensor *y = k->out[0];
  const ts_tensor *counter = k->in[0];
  ts_philox_params p = ts_philox_params_of((uint64_t)k->attrs[4].i, k->attrs[2].f,
                                           k->attrs[3].f, ts_dtype_is_integer(y->dtype));
  return ts__cu_stateless_uniform(y->dtype, y->size, &p, counter->dtype, counter->data, y->data,
                                  stream_of(k)) ||
         no_launcher(k);
}

/* SumTo: g's dims split into those y keeps (x's dim equal to g's) and
 * those summed (leading, or 1 in x), as the CPU's ystride does. */
bool ts__cuda_sum_to(ts_kernel_ctx *k)
{
  const ts_tensor *g = k->in[0], *x = k->in[1];
  ts_tensor *y = k->out[0];
  int rank = g->shape.rank, lead = rank - x->shape.rank;
  for (int d = 0; d < x->shape.rank; d++)
    if (x->shape.dim[d] != g->shape.dim[lead + d] && x->shape.dim[d] != 1)
      return ts__kernel_fail(k, TS_ERR_SHAPE, "dim %d: %lld does not broadcast to %lld", d,
                             (long long)x->shape.dim[d], (long long)g->shape.dim[lead + d]);
  int64_t stride[TS_MAX_RANK];
  contiguous_strides(g->shape, stride);
  ts_cu_sum_to s = { .n_out = y->size, .n_summed_elems = 1 };
  for (int d = 0; d < rank; d++) {
    int64_t gd = g->shape.dim[d];
    if (d >= lead && x->shape.dim[d - lead] == gd) {
      s.kept_dim[s.n_kept] = gd;
      s.kept_stride[s.n_kept++] = stride[d];
    } else {
      s.summed_dim[s.n_summed] = gd;
      s.summed_stride[s.n_summed++] = stride[d];
      s.n_summed_elems *= gd;
    }
  }
  return ts__cu_sum_to(g->dtype, &s, g->data, y->data, stream_of(k)) || no_launcher(k);
}

/* The variables' storage was made writable on the caller's thread
 * (ops/apply.c); grad may be a read of one of them. */
bool ts__cuda_apply_adam_update(ts_kernel_ctx *k)
{
  ts_tensor *const *in = k->in;
  ts_cu_adam a = { in[0]->data, in[1]->data, in[2]->data, in[9]->data, in[3]->data, in[4]->data,
                   in[5]->data, in[6]->data, in[7]->data, in[8]->data };
  return ts__cu_adam(in[0]->dtype, in[0]->size, &a, stream_of(k)) || no_launcher(k);
}

/* ---- products (cuda/gemm.c) ------------------------------------------------------ */

static int64_t batch_of(const ts_tensor *t)
{
  int64_t n = 1;
  for (int d = 0; d < t->shape.rank - 2; d++)
    n *= t->shape.dim[d];
  return n;
}

/* MatMul's batches as one strided product: both operands with the same
 * batch dims, or a batch of a's against one b (stacked on rows).  Other
 * broadcasts run on the CPU. */
static bool matmul_batch(const ts_kernel_ctx *k, int64_t *batch, bool *stack)
{
  const ts_tensor *a = k->in[0], *b = k->in[1];
  if (a->shape.rank < 2 || b->shape.rank < 2)
    return false;
  *batch = batch_of(a);
  *stack = false;
  if (b->shape.rank == 2 || batch_of(b) == 1) {
    *stack = *batch > 1;
    return !*stack || !k->attrs[0].b; /* a transposed is not stacked rows */
  }
  if (a->shape.rank != b->shape.rank)
    return false;
  for (int d = 0; d < a->shape.rank - 2; d++)
    if (a->shape.dim[d] != b->shape.dim[d])
      return false;
  return true;
}

bool ts__cuda_matmul(ts_kernel_ctx *k)
{
  const ts_tensor *a = k->in[0], *b = k->in[1];
  ts_tensor *c = k->out[0];
  bool ta = k->attrs[0].b, tb = k->attrs[1].b;
  int64_t batch;
  bool stack;
  if (!matmul_batch(k, &batch, &stack))
    return no_launcher(k);
  ts_cu_gemm g = { .dtype = a->dtype, .m = c->shape.dim[c->shape.rank - 2],
                   .n = c->shape.dim[c->shape.rank - 1],
                   .k = a->shape.dim[a->shape.rank - (ta ? 2 : 1)], .batch = batch,
                   .ta = ta, .tb = tb, .a = a->data, .b = b->data, .c = c->data };
  if (c->size == 0)
    return true;
  if (g.k == 0)
    return ts__cu_fill(c->dtype, c->size, 0, c->data, stream_of(k)) || no_launcher(k);
  if (stack) {
    g.m *= batch;
    g.batch = 1;
  }
  g.stride_a = g.m * g.k;
  g.stride_b = g.k * g.n;
  return ts__cuda_gemm(&g, stream_of(k));
}

bool ts__cuda_fused_matmul(ts_kernel_ctx *k)
{
  const ts_tensor *a = k->in[0], *b = k->in[1];
  ts_tensor *c = k->out[0];
  bool ta = k->attrs[0].b, tb = k->attrs[1].b;
  if (k->n_in == 3 && k->in[2]->size != c->shape.dim[1])
    return ts__kernel_fail(k, TS_ERR_SHAPE, "the bias has %" G_GINT64_FORMAT
                           " elements for %" G_GINT64_FORMAT " columns", k->in[2]->size,
                           c->shape.dim[1]);
  if (c->size == 0)
    return true;
  ts_cu_gemm g = { .dtype = a->dtype, .m = c->shape.dim[0], .n = c->shape.dim[1],
                   .k = a->shape.dim[ta ? 0 : 1], .batch = 1, .ta = ta, .tb = tb,
                   .act = ts__act_from_name(k->attrs[2].s), .a = a->data, .b = b->data,
                   .bias = k->n_in == 3 ? k->in[2]->data : NULL, .c = c->data };
  if (g.k == 0) /* the bias and activation of a zero product: the CPU's */
    return no_launcher(k);
  return ts__cuda_gemm(&g, stream_of(k));
}

/* ---- what each kernel takes ----------------------------------------------------- */

/* a dtype the kernels are built for */
static bool numeric(ts_dtype dt)
{
  return (unsigned)dt < TS_NUMERIC_DTYPE_COUNT;
}

/* the dtypes conv.cu's MaxPool is built for (16-bit floats: the CPU's) */
static bool max_pool_dtype(ts_dtype dt)
{
  return dt == TS_F32 || dt == TS_F64 || dt == TS_I32 || dt == TS_I64 || dt == TS_U8 ||
         dt == TS_I8 || dt == TS_I16 || dt == TS_U16;
}

bool ts__cuda_op_supported(const ts_kernel_ctx *k)
{
  ts_op op = k->def->op;
  ts_dtype dt = k->n_in > 0 ? k->in[0]->dtype : TS_F32;
  for (int i = 0; i < k->n_in; i++)
    if (!numeric(k->in[i]->dtype))
      return false;
  switch (op) {
  case TS_OP_REDUCE_SUM: case TS_OP_REDUCE_MEAN: case TS_OP_REDUCE_MAX: case TS_OP_REDUCE_MIN:
  case TS_OP_REDUCE_PROD: case TS_OP_ARGMAX: case TS_OP_ARGMIN: case TS_OP_REDUCE_ANY:
  case TS_OP_REDUCE_ALL: {
    int64_t outer, len, inner;
    return ts__cu_has_reduce(op, dt) && k->in[0]->size > 0 &&
           reduce_layout(k, &outer, &len, &inner);
  }
  case TS_OP_SOFTMAX: case TS_OP_LOG_SOFTMAX:
    return dt == TS_F32 || dt == TS_F64;
  case TS_OP_CUMSUM: case TS_OP_CUMPROD:
    /* bool: refused by inference, wherever it lives */
    return dt != TS_BOOL;
  case TS_OP_TOP_K: case TS_OP_SORT: case TS_OP_ARGSORT:
    return dt != TS_BOOL && k->in[0]->shape.rank > 0 &&
           k->in[0]->shape.dim[sort_axis(k)] <= TS_CU_SORT_MAX_ROW;
  case TS_OP_WHERE:
    return dt == TS_BOOL;
  case TS_OP_RESHAPE: case TS_OP_FLATTEN:
  case TS_OP_TRANSPOSE: case TS_OP_SLICE: case TS_OP_CONCAT: case TS_OP_SPLIT: case TS_OP_PACK: case TS_OP_UNPACK:
  case TS_OP_TILE: case TS_OP_PAD: case TS_OP_REVERSE: case TS_OP_ONE_HOT:
  case TS_OP_FILL: case TS_OP_ZEROS_LIKE: case TS_OP_ONES_LIKE:
    return true;
  case TS_OP_CAST:
    return numeric(k->attrs[0].dtype);
  case TS_OP_IDENTITY:
    return true; /* numeric, checked above */
  case TS_OP_ZEROS: case TS_OP_ONES: case TS_OP_RANGE: case TS_OP_EYE:
    return numeric(k->attrs[0].dtype);
  case TS_OP_MATMUL: {
    int64_t batch;
    bool stack;
    return (dt == TS_F32 || dt == TS_F64) && ts__cuda_gemm_available(NULL) &&
           matmul_batch(k, &batch, &stack);
  }
  case TS_OP_CONV2D: case TS_OP_FUSED_CONV2D:
    return (dt == TS_F32 || dt == TS_F64) && ts__cuda_gemm_available(NULL) &&
           k->in[1]->shape.rank == 4 && k->in[1]->shape.dim[0] * k->in[1]->shape.dim[1] *
                                          k->in[1]->shape.dim[2] > 0;
  case TS_OP_MAX_POOL2D:
    return max_pool_dtype(dt);
  case TS_OP_LSTM_SEQUENCE: /* a product over inputs of width 0 stays the CPU's */
    return (dt == TS_F32 || dt == TS_F64) && ts__cuda_gemm_available(NULL) &&
           k->in[0]->shape.rank == 3 && k->in[0]->shape.dim[2] > 0;
  case TS_OP_STATELESS_RANDOM_UNIFORM:
    return k->attrs[0].dtype != TS_BOOL && numeric(k->attrs[0].dtype);
  case TS_OP_SUM_TO:
    return dt == TS_F32 || dt == TS_F64 || dt == TS_F16 || dt == TS_BF16;
  /* the variable rows keep their bookkeeping on the caller's thread and
   * write through the device's copies and kernels (ops/state.c): an add
   * or subtract in place, ResourceApplyAdam's update (cuda/adam.cu) */
  case TS_OP_READ_VARIABLE: case TS_OP_ASSIGN_VARIABLE:
    return true;
  case TS_OP_ASSIGN_ADD_VARIABLE: /* bool: refused by inference, wherever it lives */
    return dt == TS_BOOL || ts__cu_has_binary(TS_OP_ADD, dt);
  case TS_OP_ASSIGN_SUB_VARIABLE:
    return dt == TS_BOOL || ts__cu_has_binary(TS_OP_SUB, dt);
  case TS_OP_APPLY_ADAM:
    return dt == TS_F32 || dt == TS_F64;
  case TS_OP_FUSED_MATMUL:
    return (dt == TS_F32 || dt == TS_F64) && ts__cuda_gemm_available(NULL) &&
           k->in[0]->shape.dim[k->attrs[0].b ? 0 : 1] > 0;
  case TS_OP_FUSED_ELEMENTWISE: /* the program's rows: checked as it launches */
    return k->n_in <= TS_CU_MAX_IN &&
           (dt == TS_F32 || dt == TS_F64 || dt == TS_F16 || dt == TS_BF16);
  case TS_OP_SPARSE_SOFTMAX_CROSS_ENTROPY:
    return k->in[1]->dtype == TS_F32 || k->in[1]->dtype == TS_F64;
  case TS_OP_CONV2D_BACKPROP_INPUT: case TS_OP_CONV2D_BACKPROP_FILTER: case TS_OP_MAX_POOL2D_GRAD:
    return dt == TS_F32 || dt == TS_F64;
  case TS_OP_CONV_TRANSPOSE: /* its columns by cuBLASLt (ops/conv_transpose.c) */
    return (dt == TS_F32 || dt == TS_F64) && ts__cuda_gemm_available(NULL);
  default:
    if (k->def->n_inputs == 1 && (k->def->flags & TS_OPF_ELEMENTWISE))
      return ts__cu_has_unary(op, dt);
    if (k->def->n_inputs == 2 && (k->def->flags & TS_OPF_ELEMENTWISE))
      return ts__cu_has_binary(op, dt);
    return true;
  }
}
