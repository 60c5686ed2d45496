/* ops/fused.c — the ops only the fusion pass makes (exec/fuse.c): never
 * written by user code, they exist as graph nodes standing for the nodes
 * they replace (their provenance).
 *
 * FusedElementwise runs a small program of float elementwise ops over its
 * inputs (broadcast NumPy-style) in one pass over the data, a block of
 * elements at a time: the op rows flagged TS_OPF_FUSIBLE, each run by its
 * own loops.  The program is its "program" attribute, one
 * instruction per op, e.g. "Mul x0 x1; Add t0 x2; Relu t1": operand xI is
 * input I, tK the result of instruction K; the last result is the output.
 *
 * _FusedMatMul is MatMul (rank 2, f32/f64) + an optional bias added along
 * the last dim + an optional activation: one kernels/gemm.c call, which
 * adds the bias and applies the activation as it stores each tile (or,
 * when OpenBLAS wins for the shape, multiplies into the bias and applies
 * the activation in place). */
#include "elementwise.h"
#include "kernels/kernels.h"

#include <limits.h>

#ifdef TS_HAVE_CUDA
#include "backend/cuda/kernels.h"
#endif

#define ATTRS(a) .n_attrs = (int)(sizeof(a) / sizeof((a)[0])), .attrs = (a)

/* ---- the program ------------------------------------------------------------ */

#define FUSED_MAX_INSTRS 32
#define FUSED_BLOCK 256

/* An instruction runs its op's own loops (ts_op_def.formula), as the
 * unfused op does, so fusing changes no bit. */
typedef struct instr {
  ts_op op;
  const ts_ew_formula *f;
  int arity;
  int a, b; /* >= 0: input index; < 0: -(k + 1), instruction k's result */
} instr;

typedef struct program {
  int n;
  int n_inputs; /* the inputs it reads: 1 + the highest xI */
  instr code[FUSED_MAX_INSTRS];
} program;

static bool parse_operand(const char **p, int k, int *out)
{
  while (**p == ' ')
    (*p)++;
  char kind = **p;
  if (kind != 'x' && kind != 't')
    return false;
  char *end;
  long v = strtol(*p + 1, &end, 10);
  if (end == *p + 1 || v < 0 || (kind == 'x' ? v >= TS_MAX_INPUTS : v >= k))
    return false;
  *p = end;
  *out = kind == 'x' ? (int)v : -(int)v - 1;
  return true;
}

/* Parses text into prog; false if it is not a program. */
static bool parse_program(const char *text, program *prog)
{
  prog->n = 0;
  prog->n_inputs = 0;
  const char *p = text;
  while (*p) {
    while (*p == ' ' || *p == ';')
      p++;
    if (!*p)
      break;
    if (prog->n == FUSED_MAX_INSTRS)
      return false;
    size_t len = strcspn(p, " ;");
    char name[32];
    if (len >= sizeof name)
      return false;
    memcpy(name, p, len);
    name[len] = '\0';
    p += len;
    instr *in = &prog->code[prog->n];
    const ts_op_def *def = ts__op_def(ts_op_from_name(name));
    if (!def || !(def->flags & TS_OPF_FUSIBLE) || !parse_operand(&p, prog->n, &in->a))
      return false;
    in->op = def->op;
    in->f = def->formula;
    in->arity = def->n_inputs;
    in->b = in->a;
    if (in->arity == 2 && !parse_operand(&p, prog->n, &in->b))
      return false;
    prog->n_inputs = MAX(prog->n_inputs, MAX(in->a, in->b) + 1);
    prog->n++;
  }
  return prog->n > 0;
}

/* Programs are parsed once per distinct text (a handful per process) and
 * never freed.  Each thread remembers the last few it looked up: a graph
 * runs the same ones on every call, and comparing a short text is cheaper
 * than the shared table's hash and lock. */
#define RECENT_PROGRAMS 4

static const program *program_of(const char *text)
{
  static _Thread_local struct {
    const char *text; /* the cache's key */
    const program *prog;
  } recent[RECENT_PROGRAMS];
  static _Thread_local unsigned next_recent;
  for (int i = 0; i < RECENT_PROGRAMS; i++)
    if (recent[i].text && strcmp(recent[i].text, text) == 0)
      return recent[i].prog;
  static GMutex lock;
  static GHashTable *cache;
  g_mutex_lock(&lock);
  if (!cache)
    cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  const char *key = NULL;
  program *prog = NULL;
  if (!g_hash_table_lookup_extended(cache, text, (gpointer *)&key, (gpointer *)&prog)) {
    prog = g_new(program, 1);
    if (parse_program(text, prog))
      g_hash_table_insert(cache, (gpointer)(key = g_strdup(text)), prog);
    else
      g_clear_pointer(&prog, g_free);
  }
  g_mutex_unlock(&lock);
  if (prog) {
    recent[next_recent % RECENT_PROGRAMS].text = key;
    recent[next_recent++ % RECENT_PROGRAMS].prog = prog;
  }
  return prog;
}

/* ---- FusedElementwise ------------------------------------------------------- */

static const ts_attr_def fused_ew_attrs[] = { { "program", TS_ATTR_STRING } };

static bool fused_ew_infer(ts_infer_ctx *c)
{
  const program *prog = c->attrs[0].s ? program_of(c->attrs[0].s) : NULL;
  if (!prog)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "bad program \"%s\"",
                          c->attrs[0].s ? c->attrs[0].s : "");
  if (prog->n_inputs != c->n_in)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "the program reads %d inputs, got %d",
                          prog->n_inputs, c->n_in);
  if (!ts__ew_check_dtypes(c, TS_DTYPES_C_FLOAT))
    return false;
  ts_shape out = c->in[0].shape;
  for (int i = 0; i < c->n_in; i++) {
    if (c->in[i].dtype != c->in[0].dtype)
      return ts__infer_fail(c, TS_ERR_DTYPE, "inputs of different dtypes");
    if (!ts__broadcast_shapes(out, c->in[i].shape, &out))
      return ts__infer_fail(c, TS_ERR_SHAPE, "input %d does not broadcast", i);
  }
  c->out[0] = (ts_info){ c->in[0].dtype, out };
  return true;
}

/* Where input i is read along a row of the output: its element offset for
 * each output index, with stride 0 on the dims it broadcasts along. */
typedef struct operand {
  int64_t stride[TS_MAX_RANK];
  bool inner; /* varies along the last output dim (else one value per row) */
} operand;

static void operand_of(const ts_tensor *t, ts_shape out, operand *o)
{
  int off = out.rank - t->shape.rank;
  int64_t step = 1;
  for (int d = out.rank - 1; d >= 0; d--) {
    int64_t dim = d >= off ? t->shape.dim[d - off] : 1;
    o->stride[d] = dim == 1 ? 0 : step;
    step *= dim;
  }
  o->inner = out.rank > 0 && o->stride[out.rank - 1] != 0;
}

/* prog over the output: a row (of the last dim) at a time, in blocks of
 * FUSED_BLOCK elements; an input the same shape as the output (or a
 * scalar) everywhere makes the whole output one row.  The pool runs
 * ranges of output elements (a range may start and end inside a row).
 *
 * An operand "varies" when it differs along a row: an input that does
 * not (a per-row mean, a scalar) is read as its one element, and an
 * instruction reading only such operands (a layer norm's add, sqrt and
 * div of the row's variance) runs once per block on that element; an
 * instruction mixing the two runs its op's vector-scalar loop.  Each
 * element still comes from the op's own formula, so the bits are those of
 * the unfused ops. */
typedef struct fused_job {
  const program *prog;
  ts_tensor *const *in;
  int n_in;
  ts_tensor *y;
  bool flat;
  int64_t row;
  operand ops[TS_MAX_INPUTS];           /* unless flat */
  bool in_varies[TS_MAX_INPUTS];        /* per input */
  bool varies[FUSED_MAX_INSTRS];        /* per instruction's result */
} fused_job;

#define FUSED_RUN(T, DT, sfx)                                                                \
  static void run_##sfx(void *ctx, int64_t begin, int64_t end)                             \
  {                                                                                        \
    const fused_job *j = ctx;                                                              \
    const program *prog = j->prog;                                                         \
    const operand *ops = j->ops;                                                           \
    ts_tensor *const *in = j->in;                                                          \
    ts_shape s = j->y->shape;                                                              \
    int n_in = j->n_in;                                                                    \
    bool flat = j->flat;                                                                   \
    int64_t row = j->row, r = begin / row, at = begin % row;                               \
    T *regs = g_new(T, (size_t)prog->n * FUSED_BLOCK);                                     \
    int64_t idx[TS_MAX_RANK] = { 0 }, base[TS_MAX_INPUTS] = { 0 };                         \
    const T *src[TS_MAX_INPUTS];                                                           \
    for (int64_t d = s.rank - 2, q = r; d >= 0 && !flat; d--) {                            \
      idx[d] = q % s.dim[d];                                                               \
      q /= s.dim[d];                                                                       \
      for (int i = 0; i < n_in; i++)                                                       \
        base[i] += idx[d] * ops[i].stride[d];                                              \
    }                                                                                      \
    while (begin < end) {                                                                  \
      int64_t stop = MIN(row, at + (end - begin));                                         \
      begin += stop - at;                                                                  \
      for (; at < stop; at += FUSED_BLOCK) {                                               \
        int n = (int)MIN(FUSED_BLOCK, stop - at);                                          \
        for (int i = 0; i < n_in; i++)                                                     \
          src[i] = (const T *)in[i]->data + (flat ? 0 : base[i]) + (j->in_varies[i] ? at : 0); \
        for (int k = 0; k < prog->n; k++) {                                                \
          const instr *c = &prog->code[k];                                                 \
          const T *a = c->a >= 0 ? src[c->a] : regs + (size_t)(-c->a - 1) * FUSED_BLOCK;   \
          const T *b = c->b >= 0 ? src[c->b] : regs + (size_t)(-c->b - 1) * FUSED_BLOCK;   \
          bool last = k == prog->n - 1;                                                    \
          T *res = last && j->varies[k] ? (T *)j->y->data + r * row + at                   \
                                        : regs + (size_t)k * FUSED_BLOCK;                  \
          if (!j->varies[k]) {                                                             \
            c->f->loop[DT][TS_EW_VV](1, a, b, res);                                        \
            for (int e = 0; last && e < n; e++)                                            \
              ((T *)j->y->data)[r * row + at + e] = res[0];                                \
            continue;                                                                      \
          }                                                                                \
          bool av = c->a >= 0 ? j->in_varies[c->a] : j->varies[-c->a - 1];                 \
          bool bv = c->b >= 0 ? j->in_varies[c->b] : j->varies[-c->b - 1];                 \
          int form = c->arity == 1 || (av && bv) ? TS_EW_VV : av ? TS_EW_VS : TS_EW_SV;    \
          c->f->loop[DT][form](n, a, b, res);                                              \
        }                                                                                  \
      }                                                                                    \
      /* the next row: each input's offset follows the output's index */                   \
      at = 0;                                                                              \
      r++;                                                                                 \
      for (int d = s.rank - 2; d >= 0 && !flat; d--) {                                     \
        for (int i = 0; i < n_in; i++)                                                     \
          base[i] += ops[i].stride[d];                                                     \
        if (++idx[d] < s.dim[d])                                                           \
          break;                                                                           \
        for (int i = 0; i < n_in; i++)                                                     \
          base[i] -= ops[i].stride[d] * s.dim[d];                                          \
        idx[d] = 0;                                                                        \
      }                                                                                    \
    }                                                                                      \
    g_free(regs);                                                                          \
  }
FUSED_RUN(float, TS_F32, f32)
FUSED_RUN(double, TS_F64, f64)

static bool fused_ew_cpu(ts_kernel_ctx *k)
{
  ts_tensor *y = k->out[0];
  if (y->size == 0)
    return true;
  fused_job j = { .prog = program_of(k->attrs[0].s), .in = k->in, .n_in = k->n_in, .y = y,
                  .flat = true };
  for (int i = 0; i < k->n_in; i++)
    j.flat &= k->in[i]->size == y->size || k->in[i]->size == 1;
  j.row = j.flat || y->shape.rank == 0 ? y->size : y->shape.dim[y->shape.rank - 1];
  for (int i = 0; i < k->n_in; i++) {
    if (!j.flat)
      operand_of(k->in[i], y->shape, &j.ops[i]);
    j.in_varies[i] = j.flat ? k->in[i]->size != 1 : j.ops[i].inner;
  }
  /* The grain follows the work per element: the instructions that run on
   * every element, each weighed by its op's own grain (an exp counts
   * TS_EW_GRAIN / TS_EW_GRAIN_COSTLY adds). */
  int64_t cost = 0;
  for (int i = 0; i < j.prog->n; i++) {
    const instr *c = &j.prog->code[i];
    j.varies[i] = (c->a >= 0 ? j.in_varies[c->a] : j.varies[-c->a - 1]) ||
                  (c->b >= 0 ? j.in_varies[c->b] : j.varies[-c->b - 1]);
    if (j.varies[i])
      cost += TS_EW_GRAIN / c->f->grain;
  }
  int64_t grain = MAX(TS_EW_GRAIN / MAX(cost, 1), TS_EW_GRAIN_COSTLY);
  ts__parallel_range(y->size, grain, y->dtype == TS_F32 ? run_f32 : run_f64, &j);
  return true;
}

#ifdef TS_HAVE_CUDA
/* The program as the CUDA interpreter (backend/cuda/elementwise.cu) takes
 * it: the rows' ops, run there by the same formulas. */
_Static_assert(FUSED_MAX_INSTRS <= TS_CU_FUSED_MAX, "a program fits the CUDA interpreter");
static bool fused_ew_cuda(ts_kernel_ctx *k)
{
  const program *prog = program_of(k->attrs[0].s);
  ts_cu_program p = { .n = prog->n };
  for (int i = 0; i < prog->n; i++)
    p.code[i] = (ts_cu_instr){ prog->code[i].op, prog->code[i].a, prog->code[i].b };
  return ts__cuda_fused(k, &p);
}
#endif

const ts_op_def ts__op_fused_elementwise = {
  .op = TS_OP_FUSED_ELEMENTWISE, .name = "FusedElementwise", .api_name = "fused_elementwise",
  .n_inputs = -1, .min_inputs = 1, .n_outputs = 1, ATTRS(fused_ew_attrs),
  .flags = TS_OPF_INPLACE, .infer = fused_ew_infer, .kernel[TS_DEVICE_CPU] = fused_ew_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(fused_ew_cuda),
};

/* ---- _FusedMatMul ----------------------------------------------------------- */

enum { ATTR_TRANSPOSE_A, ATTR_TRANSPOSE_B, ATTR_ACTIVATION };

static const ts_attr_def fused_mm_attrs[] = {
  [ATTR_TRANSPOSE_A] = { "transpose_a", TS_ATTR_BOOL },
  [ATTR_TRANSPOSE_B] = { "transpose_b", TS_ATTR_BOOL },
  [ATTR_ACTIVATION] = { "activation", TS_ATTR_STRING }, /* "", "Relu", "Sigmoid", "Tanh" */
};

static bool fused_mm_infer(ts_infer_ctx *c)
{
  if (c->n_in > 3)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "takes a, b and a bias, got %d inputs",
                          c->n_in);
  if (ts__act_from_name(c->attrs[ATTR_ACTIVATION].s) < 0)
    return ts__infer_fail(c, TS_ERR_INVALID_ARGUMENT, "unknown activation \"%s\"",
                          c->attrs[ATTR_ACTIVATION].s);
  if (!ts__ew_check_dtypes(c, TS_DTYPES_C_FLOAT))
    return false;
  const ts_info *a = &c->in[0], *b = &c->in[1];
  bool ta = c->attrs[ATTR_TRANSPOSE_A].b, tb = c->attrs[ATTR_TRANSPOSE_B].b;
  if (a->shape.rank != 2 || b->shape.rank != 2 || a->dtype != b->dtype)
    return ts__infer_fail(c, TS_ERR_SHAPE, "takes two matrices of one dtype");
  int64_t m = a->shape.dim[ta ? 1 : 0], ka = a->shape.dim[ta ? 0 : 1];
  int64_t kb = b->shape.dim[tb ? 1 : 0], n = b->shape.dim[tb ? 0 : 1];
  if (ka >= 0 && kb >= 0 && ka != kb)
    return ts__infer_fail(c, TS_ERR_SHAPE, "inner dimensions differ (%" G_GINT64_FORMAT
                          " vs %" G_GINT64_FORMAT ")", ka, kb);
  if (c->n_in == 3) {
    const ts_info *bias = &c->in[2];
    int64_t bn = bias->shape.rank ? bias->shape.dim[bias->shape.rank - 1] : -2;
    bool vector = bias->dtype == a->dtype && bias->shape.rank >= 1 && bias->shape.rank <= 2 &&
                  (bias->shape.rank == 1 || bias->shape.dim[0] == 1);
    if (!vector || (bn >= 0 && n >= 0 && bn != n))
      return ts__infer_fail(c, TS_ERR_SHAPE, "the bias must be a vector of the %" G_GINT64_FORMAT
                            " output columns", n);
  }
  c->out[0] = (ts_info){ a->dtype, TS_SHAPE(m, n) };
  return true;
}


static bool fused_mm_cpu(ts_kernel_ctx *k)
{
  const ts_tensor *a = k->in[0], *b = k->in[1];
  if (k->n_in == 3 && k->in[2]->size != k->out[0]->shape.dim[1])
    return ts__kernel_fail(k, TS_ERR_SHAPE, "the bias has %" G_GINT64_FORMAT
                           " elements for %" G_GINT64_FORMAT " columns", k->in[2]->size,
                           k->out[0]->shape.dim[1]);
  int64_t dims[] = { a->shape.dim[0], a->shape.dim[1], b->shape.dim[0], b->shape.dim[1] };
  for (size_t i = 0; i < G_N_ELEMENTS(dims); i++)
    if (dims[i] > INT_MAX)
      return ts__kernel_fail(k, TS_ERR_INVALID_ARGUMENT, "matrix dimensions exceed the BLAS "
                             "limit of %d", INT_MAX);
  if (k->out[0]->size == 0)
    return true;
  int act = ts__act_from_name(k->attrs[ATTR_ACTIVATION].s);
  bool ta = k->attrs[ATTR_TRANSPOSE_A].b, tb = k->attrs[ATTR_TRANSPOSE_B].b;
  ts_gemm g = { k->out[0]->shape.dim[0], k->out[0]->shape.dim[1], a->shape.dim[ta ? 0 : 1], ta, tb,
                a->data, b->data, k->n_in == 3 ? k->in[2]->data : NULL, k->out[0]->data,
                (ts_act)act };
  if (a->dtype == TS_F32)
    ts__gemm_f32(&g);
  else
    ts__gemm_f64(&g);
  return true;
}

const ts_op_def ts__op_fused_matmul = {
  .op = TS_OP_FUSED_MATMUL, .name = "_FusedMatMul", .api_name = "fused_matmul",
  .n_inputs = -1, .min_inputs = 2, .n_outputs = 1, ATTRS(fused_mm_attrs),
  .infer = fused_mm_infer, .kernel[TS_DEVICE_CPU] = fused_mm_cpu,
  .kernel[TS_DEVICE_CUDA] = TS_CUDA_KERNEL(ts__cuda_fused_matmul),
};
