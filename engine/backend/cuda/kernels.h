/* cuda/kernels.h — the CUDA kernels' launchers (the .cu files) as the C
 * side calls them: plain data only, so that nvcc never sees the engine's
 * private headers.  Each launcher queues its kernel on `stream` (a
 * cudaStream_t) and returns false when it has none for the op and dtype
 * asked (the `has` functions say so beforehand, for supports_op).
 * Launch errors are read by the caller (cudaGetLastError). */
#pragma once

#include "../../tracescope.h"
#include "../../ops/philox.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An output of up to TS_MAX_RANK dims and where each input is read for
 * each output index: element strides, 0 along the dims it broadcasts. */
#define TS_CU_MAX_IN 8

/* The kernels are built for every numeric dtype (f32 ... bfloat16,
 * TS_NUMERIC_DTYPE_COUNT) where the CPU's loops take it, the 16-bit floats
 * computed in f32 and rounded back as on the CPU (cuda/dtypes.cuh); the
 * `has` functions and ts__cuda_op_supported say which. */
typedef struct ts_cu_bcast {
  int rank;
  int n_in;
  int64_t dim[TS_MAX_RANK];
  int64_t stride[TS_CU_MAX_IN][TS_MAX_RANK];
} ts_cu_bcast;

/* Elementwise rows (ops/unary_rows.h, ops/binary_rows.h): op and the
 * inputs' dtype. */
bool ts__cu_has_unary(ts_op op, ts_dtype dtype);
bool ts__cu_unary(ts_op op, ts_dtype dtype, int64_t n, const void *x, void *out, void *stream);
bool ts__cu_has_binary(ts_op op, ts_dtype dtype);
bool ts__cu_binary(ts_op op, ts_dtype dtype, int64_t n, const ts_cu_bcast *s, const void *a,
                   const void *b, void *out, void *stream);

/* A FusedElementwise program (ops/fused.c) over float inputs: instruction
 * k is op (a fusible unary or binary row) on operands a and b (>= 0: input
 * index; < 0: -(j + 1), instruction j's result); the last is the output. */
#define TS_CU_FUSED_MAX 32
typedef struct ts_cu_instr {
  ts_op op;
  int a, b;
} ts_cu_instr;
typedef struct ts_cu_program {
  int n;
  ts_cu_instr code[TS_CU_FUSED_MAX];
} ts_cu_program;
bool ts__cu_has_fused(ts_op op);
bool ts__cu_fused(const ts_cu_program *p, ts_dtype dtype, int64_t n, const ts_cu_bcast *s,
                  const void *const *in, void *out, void *stream);

/* Cast: n elements of `from` to `to` (bool: nonzero is true). */
bool ts__cu_cast(ts_dtype from, ts_dtype to, int64_t n, const void *x, void *out, void *stream);
/* One thread setting a CUDA Graph conditional node's handle (a
 * cudaGraphConditionalHandle) from cond's element: nonzero, 1; zero, 0. */
bool ts__cu_set_condition(uint64_t handle, ts_dtype dtype, const void *cond, void *stream);
/* One thread setting an If's two nodes' handles: then's 1 where cond's
 * element is nonzero, else's 1 where it is zero. */
bool ts__cu_set_branches(uint64_t then_handle, uint64_t else_handle, ts_dtype dtype,
                         const void *cond, void *stream);
/* The graph's kernel node (a cudaGraphNode_t) one of the two above made
 * (branches: set_branches') changed to set nothing: the handles keep the
 * default they get at each launch.  False where it could not be (the
 * CUDA error, if any, left to cudaGetLastError). */
bool ts__cu_condition_off(void *node, bool branches, uint64_t handle, uint64_t else_handle,
                          ts_dtype dtype);

/* Every element of out (n of dtype) set to value, or to the element at
 * the device address value_at (Fill's value input). */
bool ts__cu_fill(ts_dtype dtype, int64_t n, double value, void *out, void *stream);
bool ts__cu_fill_from(ts_dtype dtype, int64_t n, const void *value_at, void *out, void *stream);
/* The identity matrix [rows, cols] of dtype. */
bool ts__cu_eye(ts_dtype dtype, int64_t rows, int64_t cols, void *out, void *stream);
/* out[i] = start + i * delta, n of dtype (integers: in wrapping 64-bit
 * arithmetic from start and delta truncated, as the CPU kernel). */
bool ts__cu_range(ts_dtype dtype, int64_t n, double start, double delta, void *out, void *stream);

/* Reductions over x viewed as [outer, len, inner], reducing the middle:
 * op REDUCE_SUM/MEAN/MAX/MIN/PROD (out: x's dtype) or ARGMAX/ARGMIN (out: i64),
 * every numeric dtype (bool: Max and Min). */
bool ts__cu_has_reduce(ts_op op, ts_dtype dtype);
bool ts__cu_reduce(ts_op op, ts_dtype dtype, int64_t outer, int64_t len, int64_t inner,
                   const void *x, void *out, void *stream);

/* Cumsum (prod false) and Cumprod (cuda/cumulative.cu): x and y [outer,
 * n, inner], y along n the running sums or products of x in x's dtype,
 * from the end when reverse, each before its own element's when
 * exclusive, as ops/reduce.c.  Every numeric dtype but bool. */
bool ts__cu_cumulative(bool prod, ts_dtype dtype, int64_t outer, int64_t n, int64_t inner,
                       bool exclusive, bool reverse, const void *x, void *y, void *stream);

/* TopKV2, Sort and ArgSort (cuda/sort.cu): each row of x [outer, n,
 * inner] along n ordered as ops/sort.c orders it (by key, a NaN above
 * every number, -0.0 equal to 0.0, then by index), the first n_out of
 * each into values (x's dtype; NULL: none) and indices (NULL: none),
 * [outer, n_out, inner].  Every numeric dtype but bool.  O(n^2) per
 * row: rows longer than TS_CU_SORT_MAX_ROW fall back to the CPU's sort
 * (visibly, ts__cuda_op_supported) rather than crawl. */
#define TS_CU_SORT_MAX_ROW 8192
bool ts__cu_sort(ts_dtype dtype, int64_t outer, int64_t n, int64_t inner, int64_t n_out,
                 bool descending, const void *x, void *values, int32_t *indices, void *stream);

/* LSTMSequence's cell (cuda/rnn.cu), f32 or f64: rows x hidden elements
 * from the step's projection and recurrent product ([rows, 4H], gate
 * blocks i, o, f, c), peepholes [3, H] or NULL, c_in -> c_out and h_out
 * (and h_last when not NULL), as kernels/lstm.c. */
bool ts__cu_lstm_cell(ts_dtype dtype, int64_t rows, int64_t hidden, const void *proj, const void *hr,
                      const void *peep, const void *c_in, void *c_out, void *h_out, void *h_last,
                      void *stream);

/* Softmax / LogSoftmax over the last dim of x viewed as [rows, len]. */
bool ts__cu_softmax(bool log, ts_dtype dtype, int64_t rows, int64_t len, const void *x, void *out,
                    void *stream);

/* Layout (cuda/layout.cu): out[i] = x[base + offset of i through s's
 * stride[0]] for elements of elem_size bytes (Transpose, Slice); Where's
 * select, s holding cond's, x's and y's strides. */
bool ts__cu_strided(size_t elem_size, int64_t n, const ts_cu_bcast *s, int64_t base,
                    const void *x, void *out, void *stream);
bool ts__cu_where(size_t elem_size, int64_t n, const ts_cu_bcast *s, const void *cond,
                  const void *x, const void *y, void *out, void *stream);

/* Tile, Pad and ReverseV2 (cuda/layout.cu): out[i] (n elements of
 * elem_size bytes, dims out_dim) = x at, per dim, the index i's maps to:
 * Tile its index modulo in_dim; Pad its index less before, outside
 * [0, in_dim) the element at value_at (CONSTANT; NULL: zero) or reflected
 * back in (REFLECT without the edge, SYMMETRIC with it; the paddings
 * checked to need one reflection); ReverseV2 in_dim - 1 - its index in
 * the dims whose bit is set in flip, its index in the others. */
typedef enum ts_cu_map_mode { TS_CU_MAP_TILE, TS_CU_MAP_PAD_CONSTANT, TS_CU_MAP_PAD_REFLECT,
                              TS_CU_MAP_PAD_SYMMETRIC, TS_CU_MAP_REVERSE } ts_cu_map_mode;
typedef struct ts_cu_map {
  int rank;
  ts_cu_map_mode mode;
  unsigned flip; /* ReverseV2: bit d, dim d reversed */
  int64_t out_dim[TS_MAX_RANK], in_dim[TS_MAX_RANK], in_stride[TS_MAX_RANK], before[TS_MAX_RANK];
} ts_cu_map;
bool ts__cu_index_map(size_t elem_size, int64_t n, const ts_cu_map *m, const void *x, const void *value_at,
                      void *out, void *stream);

/* OneHot (cuda/layout.cu): out [outer, depth, inner] (n elements of
 * elem_size bytes) = *on where indices [outer, inner] (index_dtype uint8,
 * int8, int32 or int64) is the middle index, *off elsewhere (an index
 * outside [0, depth) too); on and off on the device. */
bool ts__cu_one_hot(size_t elem_size, ts_dtype index_dtype, int64_t n, int64_t depth, int64_t inner,
                    const void *indices, const void *on, const void *off, void *out, void *stream);

/* The first index out of range a launch met, recorded on the device by
 * the kernels that index when their indices were not checked on the host
 * (while a CUDA Graph is captured: cuda.c's index faults).  One thread
 * claims flag, then writes the rest; the host reads it after the stream
 * is idle. */
typedef struct ts_cu_index_fault {
  unsigned int flag;    /* 0: none yet */
  unsigned int pad;
  long long at, value;  /* the index's position among the indices, its value */
  unsigned long long correlation; /* the launching op's */
} ts_cu_index_fault;

/* Gather: out [outer, n_idx, row] = params [outer, n, row] at the rows
 * indices (int32 or int64, n_idx of them) name; elements of elem_size
 * bytes.  Indices outside [0, n) give zeros and, with fault, are recorded
 * there under correlation (NULL: checked on the host before). */
bool ts__cu_gather(size_t elem_size, ts_dtype index_dtype, int64_t outer, int64_t n,
                   int64_t n_idx, int64_t row, const void *params, const void *indices,
                   void *out, ts_cu_index_fault *fault, uint64_t correlation, void *stream);
/* An integer FloorDiv, FloorMod or Pow (the rows whose check column in
 * ops/binary_rows.h is not NULL) as ts__cu_binary, except that an element
 * of b the row's check refuses (a zero divisor, a negative exponent)
 * gives 0 and is recorded in fault under correlation, its position in b
 * and its value. */
bool ts__cu_binary_checked(ts_op op, ts_dtype dtype, int64_t n, const ts_cu_bcast *s,
                           const void *a, const void *b, void *out, ts_cu_index_fault *fault,
                           uint64_t correlation, void *stream);
/* SparseSoftmaxCrossEntropyWithLogits: out[r] = the loss of logits row r
 * ([rows, len], f32 or f64) at labels[r] (int32 or int64); a label
 * outside [0, len) gives NaN and is recorded as Gather's are. */
bool ts__cu_xent(ts_dtype dtype, ts_dtype label_dtype, int64_t rows, int64_t len, const void *x,
                 const void *labels, void *out, ts_cu_index_fault *fault, uint64_t correlation,
                 void *stream);

/* StatelessRandomUniform (cuda/random.cu): n elements of dtype from the
 * Philox stream (p->seed, the counter scalar of counter_dtype at the
 * device address counter), as the CPU draws them. */
bool ts__cu_stateless_uniform(ts_dtype dtype, int64_t n, const ts_philox_params *p,
                              ts_dtype counter_dtype, const void *counter, void *out,
                              void *stream);

/* SumTo (cuda/sum_to.cu): y [n_out, row-major over the kept dims] = the sum
 * of g over the summed dims; both lists give g's element strides.  Float
 * dtypes (f32, f64, f16, bf16). */
typedef struct ts_cu_sum_to {
  int n_kept, n_summed;
  int64_t n_out, n_summed_elems;
  int64_t kept_dim[TS_MAX_RANK], kept_stride[TS_MAX_RANK];
  int64_t summed_dim[TS_MAX_RANK], summed_stride[TS_MAX_RANK];
} ts_cu_sum_to;
bool ts__cu_sum_to(ts_dtype dtype, const ts_cu_sum_to *s, const void *g, void *y, void *stream);

/* ResourceApplyAdam's update (cuda/adam.cu): var, m and v (n elements of
 * f32 or f64) updated in place from grad, the scalars read on the device. */
typedef struct ts_cu_adam {
  void *var, *m, *v;
  const void *grad, *beta1_power, *beta2_power, *lr, *beta1, *beta2, *epsilon;
} ts_cu_adam;
bool ts__cu_adam(ts_dtype dtype, int64_t n, const ts_cu_adam *a, void *stream);

/* A 2-D window over an NHWC input (cuda/conv.cu): input [n, h, w, c],
 * window kh x kw, strides, output oh x ow, padding before the first row
 * and column. */
typedef struct ts_cu_window {
  int64_t n, h, w, c, kh, kw, sh, sw, oh, ow, top, left;
} ts_cu_window;
/* col [n * oh * ow, kh * kw * c]: each output position's patch (f32, f64). */
bool ts__cu_im2col(ts_dtype dtype, const ts_cu_window *g, const void *x, void *col, void *stream);
/* y [n, oh, ow, c]: each window's largest element (numeric dtypes but bool). */
bool ts__cu_max_pool(ts_dtype dtype, const ts_cu_window *g, const void *x, void *y, void *stream);
/* MaxPoolGrad: dx [n, h, w, c] = the sum of dy [n, oh, ow, c] over the
 * windows whose max y came from that cell (the first of equal ones, as
 * the CPU picks).  f32 and f64. */
bool ts__cu_max_pool_grad(ts_dtype dtype, const ts_cu_window *g, const void *x, const void *y,
                          const void *dy, void *dx, void *stream);
/* Conv2DBackpropInput (dx [n, h, w, c] from the HWIO filter f [kh, kw, c,
 * o] and dy [n, oh, ow, o]) and Conv2DBackpropFilter (df from x and dy):
 * each output element summed in f64 over the windows, as the CPU does.
 * f32 and f64. */
bool ts__cu_conv_backprop_input(ts_dtype dtype, const ts_cu_window *g, int64_t o, const void *f,
                                const void *dy, void *dx, void *stream);
bool ts__cu_conv_backprop_filter(ts_dtype dtype, const ts_cu_window *g, int64_t o,
                                 const void *x, const void *dy, void *df, void *stream);

/* ConvTranspose's col2im (cuda/conv.cu), over n images of NC + 3 spatial
 * dims (leading ones of 1 where the op has fewer): col holds, per image
 * and group, the rows [mg * taps, pixels] of W_g^T X (taps row-major over
 * k, pixels over in); y [n, group * mg, out] = bias [group * mg] (or 0)
 * + at each output position, the entries of the taps i * s + k * d - p
 * places there.  col NULL: no taps (y is the bias).  f32 and f64. */
typedef struct ts_cu_col2im {
  int64_t n, group, mg;
  int64_t in[3], k[3], out[3], s[3], d[3], p[3];
} ts_cu_col2im;
bool ts__cu_col2im(ts_dtype dtype, const ts_cu_col2im *g, const void *col, const void *bias,
                   void *y, void *stream);

/* A product (cuda/gemm.c, cuBLASLt): row-major c [batch, m, n] =
 * op(a) op(b), a [m, k] ([k, m] when ta), b [k, n] ([n, k] when tb),
 * batch matrices stride_a / stride_b elements apart (0: one for all),
 * + bias [n] (or NULL), then act (ts_act: 0 none, 1 Relu, 2 Sigmoid,
 * 3 Tanh).  f32 or f64.  False + error when it cannot. */
typedef struct ts_cu_gemm {
  ts_dtype dtype;
  int64_t m, n, k, batch, stride_a, stride_b;
  bool ta, tb;
  int act;
  const void *a, *b, *bias;
  void *c;
} ts_cu_gemm;
bool ts__cuda_gemm(const ts_cu_gemm *g, void *stream);
/* Whether cuBLASLt could be loaded (it is on first use); why not. */
bool ts__cuda_gemm_available(const char **why);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
/* What a kernel records once it claimed fault->flag (atomicCAS 0 -> 1). */
static __device__ inline void index_fault_fill(ts_cu_index_fault *f, int64_t at, int64_t value,
                                               unsigned long long correlation)
{
  f->at = at;
  f->value = value;
  f->correlation = correlation;
}
#endif
