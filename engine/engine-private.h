/* engine-private.h — what the engine's own files share: the tensor layout,
 * op definitions, attributes and the dispatcher.  Not installed. */
#pragma once

#include "tracescope.h"
#include "tracescope-backend.h"
#include "phase.h"
#include "half.h"

#include <glib.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>

#define TS_MAX_INPUTS 64   /* concat takes at most this many */
#define TS_MAX_OUTPUTS 64  /* split makes at most this many */
#define TS_MAX_ATTRS 8
/* Single tensors above 64 GiB are refused before asking malloc. */
#define TS_MAX_TENSOR_BYTES ((int64_t)1 << 36)

/* CPU tensors below this many bytes live inline after their header; larger
 * ones come from the CPU backend's buffer cache. */
#define TS_CPU_CACHE_MIN ((size_t)64 << 10)

/* A backend's buffer type (backend/buffer.c): its table is the backend's. */
struct ts_buffer_type {
  const ts_buffer_type_i *iface;
  const struct ts_backend *backend;
};

/* A registered backend (backend/backend.c); its table read inline on hot paths. */
struct ts_backend {
  ts_backend_i iface;
  ts_buffer_type buffer_type;
};

/* An allocation of a backend's memory (backend/buffer.c). */
struct ts_buffer {
  const ts_buffer_i *iface;
  const ts_buffer_type *type;
  char *base;
  size_t size;
  ts_buffer_usage usage;
  void *context;
};

/* Can the host read and write b's buffers directly? */
static inline bool ts__host_visible(const struct ts_backend *b)
{
  return b->iface.buffer_type.is_host;
}

typedef struct ts_op_call ts_op_call;
typedef struct ts_run_site ts_run_site;

/* ---- tensors -------------------------------------------------------------- */

struct ts_tensor {
  int refcount;          /* atomic */
  ts_dtype dtype;
  ts_shape shape;
  int64_t size;          /* elements; -1 if a dim is unknown (symbolic only) */
  void *data;            /* row-major, in backend's memory; NULL when symbolic */
  const ts_backend *backend; /* where data lives; NULL when symbolic */
  /* The buffer data is in (data - buffer->base its offset), or NULL where
   * data is host memory of the tensor's own (inline) or it has none. */
  ts_buffer *buffer;
  bool owns_buffer;      /* buffer is its own (else inline, a view's or an arena's) */
  bool counted;          /* its storage is in the live bytes of TS_EVENT_MEMORY */
  ts_tensor *base;       /* a view shares base's data and holds a ref on it */
  struct ts_node *node;  /* symbolic tensors: the graph node making them */
  int node_output;
  bool is_variable;      /* assign ops write into it (ts_variable_new) */
  /* A graph's constant (exec/executable.c marks its Const values; set and
   * read atomically): its data never changes, so the copy that an op on
   * another backend needs is made once and kept in `kept` (one backend's;
   * under tensor.c's lock), not made again on every call
   * (ts__tensor_on_kept). */
  bool constant;
  struct ts_tensor *kept;
  char *name;            /* variables: their name; symbolic tensors: their node's; else NULL */
  /* Made by an iteration of an eager TS_WHILE/TS_FOR (the statement at
   * carried_loop) that has ended while the loop goes on: an op given it is
   * refused (a value carried around a loop must be listed).  file NULL if not. */
  ts_loc carried_loop;
  const char *carried_kind;
  /* A tuple (ts_tuple): a function's several results, no data of its own;
   * it holds a reference on each.  NULL for a tensor.  None (ts_none, a
   * function's result of nothing) is a tuple of no items. */
  struct ts_tensor **items;
  int n_items;
};

static inline bool ts__is_tuple(const ts_tensor *t)
{
  return t && t->items && t->n_items > 0;
}

static inline bool ts__is_none(const ts_tensor *t)
{
  return t && t->items && t->n_items == 0;
}

/* A TS_VARIANT element: a reference-counted object (a TensorArray's list,
 * an optional, a traced statement's state); `kind` is how it prints
 * ("TensorList": <TensorList>). */
typedef struct ts_variant {
  int refcount;
  void (*destroy)(struct ts_variant *v);
  const char *kind;
} ts_variant;
/* "<KIND>" for variant element i of t ("<variant>" when it holds none). */
void ts__variant_append_name(GString *s, const ts_tensor *t, int64_t i);
ts_variant *ts__variant_ref(ts_variant *v);
void ts__variant_unref(ts_variant *v);

/* A new tensor with room for its elements, owned by the current scope.
 * Contents are uninitialised.  NULL (and an error at loc) on a bad shape
 * or out of memory.  ts__tensor_alloc places it on the CPU. */
ts_tensor *ts__tensor_alloc(ts_loc loc, ts_dtype dtype, ts_shape shape);
ts_tensor *ts__tensor_alloc_on(ts_loc loc, const ts_backend *backend, ts_dtype dtype,
                               ts_shape shape);
/* t itself when its data is on backend, else a copy there (current scope).
 * NULL + error. */
ts_tensor *ts__tensor_on(ts_loc loc, ts_tensor *t, const ts_backend *backend);
/* t on backend as ts__tensor_on, but a constant (ts_tensor.constant)
 * reuses the copy it keeps there, and keeps the one made now (once the
 * run that made it settles, when a device plan was recording); *copied
 * says whether this call copied.  The result is in the current scope. */
ts_tensor *ts__tensor_on_kept(ts_loc loc, ts_tensor *t, const ts_backend *backend, bool *copied);
/* t itself when the host can read its data, else a host copy (current scope). */
ts_tensor *ts__tensor_host(ts_loc loc, const ts_tensor *t);
/* A tensor of `shape` sharing x's data (sizes must match), in the current scope. */
ts_tensor *ts__tensor_view(ts_tensor *x, ts_shape shape);
/* Gives t (a host tensor, or a view of one) a buffer of its own holding
 * its current elements, so that the memory it shared can be reused; a view
 * drops its base.  false if out of memory (t is unchanged). */
bool ts__tensor_own_copy(ts_tensor *t);
/* Copies `bytes` from src's data to dst's, tensors of any backends:
 * through their buffers (backend/buffer.c), host memory directly.  false +
 * error. */
bool ts__data_copy(const ts_tensor *dst, const ts_tensor *src, size_t bytes);
/* Reports delta bytes of storage on b (a tensor's, or a memory planner's
 * arena) to the live count of that kind and TS_EVENT_MEMORY listeners. */
void ts__memory_count(const struct ts_backend *b, ts_memory_kind what, int64_t delta, ts_loc loc);
/* Hands a reference the caller owns to the current scope. */
void ts__scope_adopt(ts_tensor *t);
/* A scope entered and left many times without allocating (the executor's
 * steps): leave releases what it owns and keeps its storage. */
ts_scope *ts__scope_new(void);
void ts__scope_free(ts_scope *s);
void ts__scope_enter(ts_scope *s);
void ts__scope_leave(ts_scope *s);
/* Leaves s (the innermost scope) keeping what it owns. */
void ts__scope_leave_keep(ts_scope *s);
void ts__scope_clear(ts_scope *s);
ts_scope *ts__scope_parent(const ts_scope *s);
/* Moves what s owns (s is off the stack) to the current scope; frees s. */
void ts__scope_hand_over(ts_scope *s);
/* Marks what s owns, but keep[0..n_keep), as made by an ended iteration of
 * the `kind` loop at `loop` (ts_tensor.carried_loop). */
void ts__scope_mark_carried(ts_scope *s, ts_loc loop, const char *kind, ts_tensor *const *keep,
                            int n_keep);

/* Dtype and shape, where shape dims may be -1 (unknown) while tracing. */
typedef struct ts_info {
  ts_dtype dtype;
  ts_shape shape;
} ts_info;

/* "f32[2,3]" into buf (at least TS_INFO_STR bytes); returns buf. */
#define TS_INFO_STR 128
char *ts__info_str(char *buf, ts_dtype dtype, ts_shape shape);
/* "(2, 3)" / "()" / "(3,)" / "(None, 3)" as TensorFlow prints shapes
 * (tensors, pretty signatures); returns buf. */
char *ts__shape_str(char *buf, ts_shape shape);
/* The same with unknown dims as "?", as the rest of Tracescope writes them
 * (messages, trace reasons). */
char *ts__shape_msg_str(char *buf, ts_shape shape);

/* The product of dims[0..n-1] into *out: 0 if any dim is 0 (whatever the
 * others), false if a dim is negative (unknown) or the product overflows
 * int64.  Every product of dims goes through here. */
bool ts__shape_product(const int64_t *dims, int n, int64_t *out);
/* The product of an allocated tensor's dims [from, to): the elements
 * before an axis (0, axis) or after it (axis + 1, rank), in a kernel. */
int64_t ts__dims_prod(ts_shape s, int from, int to);

/* The one definition of a range's trip count, shared by ts_range, eager
 * TS_FOR (TS_RANGE(...)) and traced ones with constant bounds:
 * ceil((limit - start) / delta), 0 when that is negative.  Integers are
 * counted exactly (in 128 bits, so u8 2..255 by 2 is 127, never wrapping);
 * floats in double, below 2^62. */
typedef enum ts_range_status {
  TS_RANGE_OK,
  TS_RANGE_ZERO_DELTA,
  TS_RANGE_NOT_FINITE,
  TS_RANGE_TOO_LARGE,
} ts_range_status;
ts_range_status ts__range_count_i64(int64_t start, int64_t limit, int64_t delta, int64_t *n);
ts_range_status ts__range_count_f64(double start, double limit, double delta, int64_t *n);

/* Does a Reshape into `shape` infer its -1 from the input's dims rather
 * than its size alone (a -1 beside a 0, as TensorFlow's; ops/shape.c)?
 * Then reshape(reshape(x, a), shape) is not reshape(x, shape). */
bool ts__reshape_reads_dims(ts_shape shape);

/* Normalises a possibly negative axis against rank (-1 is the last); false
 * if out of range.  The one place axes are normalised. */
bool ts__axis(int64_t axis, int rank, int *out);

/* ---- argument checks of public functions ---------------------------------- */

/* Rejects a bad argument of a public function: records a ts_error naming the
 * function and the failed condition ("ts_function_call: invalid argument:
 * f != NULL"), then returns `val` (leave it empty in void functions).
 * A GLib critical alone would leave the caller no error to read. */
#define TS_CHECK_ARG(cond, val)                                                      \
  do {                                                                               \
    if (G_UNLIKELY(!(cond))) {                                                       \
      ts__arg_error(__func__, #cond);                                                \
      return val;                                                                    \
    }                                                                                \
  } while (0)
void ts__arg_error(const char *func, const char *what);

/* The dtypes whose bits (1 << dtype) are set in mask, as messages list what
 * an op takes: "float32, float64 or int32".  Into buf; returns buf. */
#define TS_DTYPE_NAMES_STR 160
char *ts__dtype_names(char *buf, unsigned mask);
/* "takes float32 or float64 tensors, got int32" into buf; returns buf. */
#define TS_TAKES_STR (TS_DTYPE_NAMES_STR + 48)
char *ts__takes_str(char *buf, unsigned mask, ts_dtype got);
/* Mask of the numeric dtypes, the ones ops take unless they say otherwise. */
#define TS_NUMERIC_DTYPES ((1u << TS_NUMERIC_DTYPE_COUNT) - 1)

/* True for a dtype the enum defines (TS_F32 ... TS_VARIANT). */
bool ts__dtype_valid(ts_dtype dtype);
/* A shape with rank in [0, TS_MAX_RANK] and dims >= 0 (or -1 where unknown_ok). */
bool ts__shape_valid(ts_shape shape, bool unknown_ok);

/* ---- attributes ----------------------------------------------------------- */

typedef enum ts_attr_type {
  TS_ATTR_INT,
  TS_ATTR_FLOAT,
  TS_ATTR_BOOL,
  TS_ATTR_DTYPE,
  TS_ATTR_INTS,
  TS_ATTR_SHAPE,
  TS_ATTR_STRING,
  TS_ATTR_TYPE_COUNT
} ts_attr_type;

typedef struct ts_attr {
  ts_attr_type type;
  union {
    int64_t i;
    double f;
    bool b;
    ts_dtype dtype;
    ts_ints ints;
    ts_shape shape;
    const char *s; /* borrowed during the call; graphs copy it */
  };
} ts_attr;

typedef struct ts_attr_def {
  const char *name;
  ts_attr_type type;
} ts_attr_def;

#define TS_ATTR_I(v) ((ts_attr){ .type = TS_ATTR_INT, .i = (v) })
#define TS_ATTR_F(v) ((ts_attr){ .type = TS_ATTR_FLOAT, .f = (v) })
#define TS_ATTR_B(v) ((ts_attr){ .type = TS_ATTR_BOOL, .b = (v) })
#define TS_ATTR_DT(v) ((ts_attr){ .type = TS_ATTR_DTYPE, .dtype = (v) })
#define TS_ATTR_INTS_(v) ((ts_attr){ .type = TS_ATTR_INTS, .ints = (v) })
#define TS_ATTR_SH(v) ((ts_attr){ .type = TS_ATTR_SHAPE, .shape = (v) })

/* "true", "[0, 2]": an attribute's value as the graph view shows it (owned). */
char *ts__attr_to_string(const ts_attr *a);

/* ---- op definitions -------------------------------------------------------- */

typedef struct ts_op_def ts_op_def;

/* Shape and dtype inference: fills out[0..n_out-1] (and n_out when the def's
 * n_outputs is -1).  Input shapes may hold -1 dims while tracing.  Returns
 * false after ts__op_fail. */
typedef struct ts_infer_ctx {
  const ts_op_def *def;
  ts_loc loc;
  const ts_run_site *site; /* the graph node being run; NULL eagerly and while tracing */
  int n_in;
  const ts_info *in;
  const ts_attr *attrs;
  int n_out;
  ts_info *out;
} ts_infer_ctx;

/* A CPU kernel: inputs are concrete, outputs allocated with the inferred
 * dtypes and shapes.  Returns false after ts__op_fail (e.g. a bad index). */
typedef struct ts_kernel_ctx {
  const ts_op_def *def;
  ts_loc loc;
  const ts_run_site *site;    /* the graph node being run; NULL eagerly */
  const ts_backend *backend;  /* where inputs and outputs live */
  uint64_t seq;               /* the op's sequence number in the run (subgraph parents) */
  int n_in;
  ts_tensor *const *in;
  const ts_attr *attrs;
  int n_out;
  ts_tensor **out;
  uint64_t correlation;       /* ts_kernel_correlation */
} ts_kernel_ctx;

typedef bool (*ts_infer_fn)(ts_infer_ctx *c);
typedef bool (*ts_kernel_fn)(ts_kernel_ctx *k);

/* Op flags: the public traits (TS_OP_TRAIT_*, tracescope.h) in the low
 * bits, the dispatcher's own above them. */
enum {
  TS_OPF_STATEFUL = TS_OP_TRAIT_STATEFUL,   /* side effects: never pruned, ordered (tracing) */
  TS_OPF_INPUT = TS_OP_TRAIT_INPUT,         /* a graph input (Placeholder): the executor feeds it */
  TS_OPF_VALUE = TS_OP_TRAIT_VALUE,         /* holds its value (Const, VarHandle): never dispatched */
  TS_OPF_AUXILIARY = TS_OP_TRAIT_AUXILIARY, /* drawn beside its consumers (constants, reads) */
  TS_OPF_CONTROL_FLOW = TS_OP_TRAIT_CONTROL_FLOW, /* runs subgraphs (If, While) */
  TS_OPF_PROMOTE = 1 << 8,   /* cast the first `n_promote` inputs to their promoted dtype */
  TS_OPF_ALIAS = 1 << 9,     /* the kernel makes its outputs itself (views, no copy) */
  TS_OPF_ANY_DTYPE = 1 << 10, /* accepts string and variant tensors (others never see them) */
  TS_OPF_VARIABLE = 1 << 11,  /* input 0 is a variable itself, not its value (read, assign) */
  TS_OPF_RANDOM = 1 << 12,    /* random numbers: never merged by the optimizer (exec/cse.c) */
  TS_OPF_ELEMENTWISE = TS_OP_TRAIT_ELEMENTWISE, /* out[i] from in[j][i] (broadcast): def->formula */
  TS_OPF_FUSIBLE = 1 << 13,  /* a FusedElementwise program may hold it (exec/fuse.c, ops/fused.c) */
  TS_OPF_INPLACE = 1 << 14,  /* its output may take the buffer of an input that dies there
                              * (exec/planner.c): its loops read each element before writing it */
  TS_OPF_VIEW = 1 << 15,     /* its output is a view of input 0 (Reshape, Flatten) */
  TS_OPF_NOT_DIFFERENTIABLE = 1 << 16, /* no gradient flows through it (compares, ArgMax,
                                        * integer ops): gradient tapes do not record it */
};

/* An elementwise op's formula over arrays (ops/unary.c, ops/binary.c): one
 * loop per dtype it takes, over n contiguous elements.  [TS_EW_VV] reads
 * n elements of a (and of b); binary ops also have [TS_EW_SV] (a is one
 * element) and [TS_EW_VS] (b is one element).  The loops are not restrict:
 * out may be a or b (in place).  FusedElementwise (ops/fused.c) runs the
 * same loops over its blocks, so fusing changes no bit. */
typedef void (*ts_ew_loop)(int64_t n, const void *a, const void *b, void *out);
enum { TS_EW_VV, TS_EW_SV, TS_EW_VS, TS_EW_FORMS };
typedef struct ts_ew_formula {
  int64_t grain; /* output elements per thread at least (ops/elementwise.h) */
  ts_ew_loop loop[TS_DTYPE_COUNT][TS_EW_FORMS];
} ts_ew_formula;

/* The op rows' kernels for TS_DEVICE_CUDA (backend/cuda/kernels.c, over
 * the .cu launchers); TS_CUDA_KERNEL(fn) is NULL in a build without CUDA,
 * so a row names its CUDA kernel the same way in both. */
#ifdef TS_HAVE_CUDA
#define TS_CUDA_KERNEL(fn) fn
struct ts_cu_program;
bool ts__cuda_unary(ts_kernel_ctx *k);
bool ts__cuda_binary(ts_kernel_ctx *k);
/* An integer FloorDiv, FloorMod or Pow (ops/binary.c) while its device
 * captures a CUDA Graph, which a host read of the operand would break:
 * launched with the operand check refuses recorded on the device, the
 * op's error then raised by the next host copy or synchronize (1; 0 +
 * error if it could not be launched); -1 when the device is not
 * capturing: the caller checks on a host copy first. */
int ts__cuda_binary_captured(ts_kernel_ctx *k, bool (*check)(ts_kernel_ctx *k));
bool ts__cuda_fused(ts_kernel_ctx *k, const struct ts_cu_program *p);
bool ts__cuda_cast(ts_kernel_ctx *k);
bool ts__cuda_fill(ts_kernel_ctx *k);
bool ts__cuda_range(ts_kernel_ctx *k);
bool ts__cuda_eye(ts_kernel_ctx *k);
bool ts__cuda_identity(ts_kernel_ctx *k);
bool ts__cuda_reduce(ts_kernel_ctx *k);
bool ts__cuda_softmax(ts_kernel_ctx *k);
bool ts__cuda_cumulative(ts_kernel_ctx *k); /* Cumsum, Cumprod */
bool ts__cuda_sort(ts_kernel_ctx *k); /* TopKV2, Sort, ArgSort */
bool ts__cuda_transpose(ts_kernel_ctx *k);
bool ts__cuda_slice(ts_kernel_ctx *k);
bool ts__cuda_tile(ts_kernel_ctx *k);
bool ts__cuda_pad(ts_kernel_ctx *k);
bool ts__cuda_reverse(ts_kernel_ctx *k);
bool ts__cuda_one_hot(ts_kernel_ctx *k);
bool ts__cuda_concat(ts_kernel_ctx *k); /* and Split, Pack, Unpack */
bool ts__cuda_where(ts_kernel_ctx *k);
bool ts__cuda_matmul(ts_kernel_ctx *k);
bool ts__cuda_fused_matmul(ts_kernel_ctx *k);
bool ts__cuda_gather(ts_kernel_ctx *k);
bool ts__cuda_xent(ts_kernel_ctx *k);
bool ts__cuda_random(ts_kernel_ctx *k);
bool ts__cuda_stateless_uniform(ts_kernel_ctx *k);
bool ts__cuda_sum_to(ts_kernel_ctx *k);
/* ResourceApplyAdam's update where its variables live (ops/apply.c). */
bool ts__cuda_apply_adam_update(ts_kernel_ctx *k);
/* Does the op's CUDA kernel take these inputs (dtypes, axes)? */
bool ts__cuda_op_supported(const ts_kernel_ctx *k);
#else
#define TS_CUDA_KERNEL(fn) NULL
#endif

/* A gradient: given the op's inputs, outputs and the gradients of its
 * outputs (every one set: zeros where nothing flows), the gradients of its
 * inputs (grad_in[] starts NULL; left NULL where none flows, e.g. integer
 * inputs), each of its input's dtype and shape.  Written with the
 * engine's own ops, so that it runs eagerly and records graph nodes while
 * tracing (trace/tape.c).  false + error.  A row with none either is
 * TS_OPF_NOT_DIFFERENTIABLE or still lacks it (ts_op_gradient_kind). */
typedef bool (*ts_grad_fn)(const ts_op_call *call, ts_tensor *const *outputs,
                           ts_tensor *const *grad_out, ts_tensor **grad_in);

struct ts_op_def {
  ts_op op;
  const char *name;          /* display name: "MatMul" */
  const char *api_name;      /* C name: "matmul" */
  int n_inputs;              /* -1: variadic, at least min_inputs */
  int min_inputs;            /* variadic ops only */
  int n_outputs;             /* -1: inference decides */
  int n_promote;             /* with TS_OPF_PROMOTE: how many leading inputs; -1 all */
  unsigned flags;
  int n_attrs;
  const ts_attr_def *attrs;
  const char *const *subgraphs; /* names of the subgraphs a node holds (If: then, else) */
  int n_subgraphs;
  ts_infer_fn infer;
  ts_kernel_fn kernel[TS_DEVICE_KIND_COUNT]; /* one per kind of backend; NULL: none */
  ts_grad_fn grad;           /* NULL: none (see ts_grad_fn) */
  unsigned dtypes;           /* elementwise: the input dtypes it takes (bits 1 << dtype) */
  const ts_ew_formula *formula; /* elementwise: its loops; NULL otherwise */
};

/* Every op's definition, indexed by ts_op.  Each op family file defines
 * `const ts_op_def ts__op_<id>` for its ops; the registry links them.  The
 * table is how lower layers reach ops (data, not calls: see
 * tests/check-layers.sh). */
extern const ts_op_def *const ts__op_table[TS_OP_COUNT];
static inline const ts_op_def *ts__op_def(ts_op op)
{
  return (unsigned)op < TS_OP_COUNT ? ts__op_table[op] : NULL;
}
#define TS__OP_EXTERN(ID, id, family) extern const ts_op_def ts__op_##id;
TS_OP_LIST(TS__OP_EXTERN)
#undef TS__OP_EXTERN

/* ---- dispatch ---------------------------------------------------------------- */

/* Runs op on inputs with attrs (in the def's schema order): validates through
 * the def, infers, allocates, fires listeners, runs the kernel.  Writes
 * outputs to out[] and returns their number, or -1 with an error recorded
 * (NULL inputs just pass the pending error on). */
int ts__dispatch(ts_loc loc, ts_op op, ts_tensor *const *in, int n_in, const ts_attr *attrs,
                 ts_tensor **out);
/* The common single-output case: returns the output or NULL. */
ts_tensor *ts__dispatch1(ts_loc loc, ts_op op, ts_tensor *const *in, int n_in,
                         const ts_attr *attrs);

/* Records an op error (unless one is pending): "Op: detail" at loc. */
/* What a read of variable var would view (ops/state.c): its storage, or
 * NULL when var is not a variable or has no storage of its own yet (the
 * ReadVariableOp then runs, and makes it or says what is wrong).  A
 * reference to it holds the value read as the read's view would: an
 * assign meanwhile moves the variable to a copy. */
ts_tensor *ts__variable_read_storage(ts_tensor *var);
/* Before a kernel changes var's value (ops/state.c): var gets a storage of
 * its own that no read holds (a read keeps the value it read), holding the
 * old value when copy_old.  false + error (out of memory). */
bool ts__variable_writable(ts_kernel_ctx *k, ts_tensor *var, bool copy_old);
/* Makes e (taken on another thread: ts_error_take) this thread's error. */
void ts__error_put(ts_error *e);
/* Gives the pending error the caller's location loc where it has none
 * (a buffer's error, reported by the op that allocated). */
void ts__error_locate(ts_loc loc);
/* Names op in the pending error when it names none (an op's output
 * that could not be allocated). */
void ts__error_name_op(const char *op);
void ts__op_fail(ts_loc loc, const ts_op_def *def, ts_error_code code, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
#define ts__infer_fail(c, code, ...) (ts__op_fail((c)->loc, (c)->def, (code), __VA_ARGS__), false)
#define ts__kernel_fail(k, code, ...) (ts__op_fail((k)->loc, (k)->def, (code), __VA_ARGS__), false)

/* A float16 or bfloat16 kernel computing in float32 (ops/widen.c): its
 * operands widened into one buffer (a NULL one stays NULL), then room for
 * the float32 result; ts__narrow_f32 rounds that back once. */
#define TS_WIDEN_MAX 4
typedef struct ts_widened {
  float *buf; /* g_free */
  float *in[TS_WIDEN_MAX];
  float *out;
} ts_widened;
/* false (no error set) when the buffer cannot be had */
bool ts__widen_f32(ts_dtype dt, int n, const void *const *src, const int64_t *size, int64_t out_size,
                   ts_widened *w);
void ts__narrow_f32(ts_dtype dt, void *dst, const float *src, int64_t n);

/* Broadcasts two shapes NumPy-style (unknown dims allowed); false if incompatible. */
bool ts__broadcast_shapes(ts_shape a, ts_shape b, ts_shape *out);

/* What a TensorArray holds, as far as is known (ops/list.c). */
typedef struct ts_list_elem {
  bool has_dtype, has_shape;
  ts_dtype dtype;
  ts_shape shape;
} ts_list_elem;
/* Adds what one item says: its dtype (the first wins) and shape (dims that
 * differ become unknown); shape may be NULL. */
void ts__list_elem_merge(ts_list_elem *e, ts_dtype dtype, const ts_shape *shape);
/* From a concrete list value (or an optional's: its value's dtype and
 * shape); false if it is neither. */
bool ts__list_elem_of_value(const ts_tensor *list, ts_list_elem *e);
bool ts__optional_elem_of_value(const ts_tensor *opt, ts_list_elem *e); /* ops/optional.c */
/* What a list's elements or an optional's value are, as far as is known:
 * from the value itself, or while tracing from the handler that knows the
 * graph (the tracer). */
ts_list_elem ts__variant_elem_type(const ts_tensor *v);
/* Dispatches op (TensorListGetItem, TensorListStack, TensorListConcat with
 * axis, OptionalGetValue) with its element type as attributes: what the
 * graph says, hint (NULL: none) filling in what it does not. */
ts_tensor *ts__element_op(ts_loc loc, ts_op op, ts_tensor *const *in, int n_in,
                          const ts_list_elem *hint, int64_t axis);

/* ---- op handlers ------------------------------------------------------------------
 * Dispatch validates and promotes, then hands the op to the calling thread's
 * innermost handler.  Eager execution is the bottom of the stack (no entry);
 * the tracer pushes one per traced graph, ts_init_scope pushes an eager one,
 * and the debugger or a gradient tape push theirs.  A handler may do its own
 * thing (record a node) or pass the op on with ts__handler_next. */

struct ts_op_call {
  ts_loc loc;
  const ts_op_def *def;
  ts_tensor *const *in;
  int n_in;
  const ts_attr *attrs;
};

typedef struct ts_op_handler ts_op_handler;
struct ts_op_handler {
  const char *name;
  /* Runs or records call; writes out[] and returns the number of outputs,
   * or -1 with an error recorded. */
  int (*run)(ts_op_handler *self, const ts_op_call *call, ts_tensor **out);
  /* (optional) The element dtype/shape of a symbolic TensorArray it made. */
  bool (*list_elem)(ts_op_handler *self, const ts_tensor *list, struct ts_list_elem *e);
  void *data;
  ts_op_handler *below; /* set by ts__handler_push */
};

void ts__handler_push(ts_op_handler *h);
/* Pops h, which must be the innermost handler. */
void ts__handler_pop(ts_op_handler *h);
/* The innermost handler; NULL when ops run eagerly. */
ts_op_handler *ts__handler_top(void);
/* What the handlers below self do with call (eager execution at the bottom). */
int ts__handler_next(ts_op_handler *self, const ts_op_call *call, ts_tensor **out);
/* Eager execution of call on the current device, whatever handlers are pushed. */
int ts__run_eager(const ts_op_call *call, ts_tensor **out);
/* Sets the calling thread's ts_activity_correlation; returns the one it
 * replaces (activity.c). */
uint64_t ts__activity_correlation_set(uint64_t correlation);
/* Sets the calling thread's ts_activity_operand (activity.c). */
void ts__activity_operand_set(uint32_t operand);
/* A correlation for copies whose op is not known yet, each copy keyed by
 * the operand it is made under; ts__activity_recharge later names the op
 * (and its input) the copy of that key was for, and ts__activity_settle
 * says no more will come: the records held back meanwhile go out
 * (activity.c).  Every placeholder is settled. */
uint64_t ts__activity_placeholder(void);
void ts__activity_recharge(uint64_t placeholder, uint32_t key, uint64_t correlation,
                           uint32_t operand);
void ts__activity_settle(uint64_t placeholder);
/* Can b run def on these inputs (a kernel for its kind, and its
 * supports_op)?  backend.c */
bool ts__backend_runs(const ts_backend *b, const ts_op_def *def, ts_tensor *const *in, int n_in,
                      const ts_attr *attrs);

/* ---- running one op -------------------------------------------------------------- */

/* Where an op runs: as a graph node (node set), or eagerly.  The executor
 * fills it for nodes; If and While reach their subgraphs through
 * run_subgraph, so ops never call the executor themselves. */
struct ts_run_site {
  const struct ts_node *node;    /* the node being run; NULL eagerly */
  const char *node_name;         /* its name, for a kernel's messages (Assert's) */
  const struct ts_node *traced;  /* the traced node this op is; NULL if none */
  const struct ts_node *parent;  /* the If/While node whose subgraph runs it; NULL at the top */
  uint64_t parent_seq;           /* that If/While op's sequence number in the run */
  const ts_info *recorded;       /* the outputs recorded in the graph (If) */
  int n_recorded;
  /* Per input: the info its producer recorded, when those and the outputs'
   * dims are all known (NULL otherwise).  Inputs that match them are what
   * inference saw when the graph was traced: the recorded outputs stand for
   * its answer (execute.c skips it). */
  const ts_info *const *in_recorded;
  int n_subgraphs;
  /* Runs subgraph i on in[] (n_in values); its outputs go to out[] (at most
   * max_out, their number in *n_out), in the current scope.  false + error. */
  bool (*run_subgraph)(const ts_run_site *site, uint64_t seq, int i, ts_tensor *const *in,
                       int n_in, ts_tensor **out, int max_out, int *n_out);
  const void *exec;              /* the executor's state for run_subgraph */
  /* A While whose loop the device runs inside the capture going on
   * (exec/device_cf.c; an If likewise): the op stays on the device, its inputs where
   * they are, and its kernel hands the loop over: 1 done, 0 failed (+
   * error), -1 run it as usual, on the host, from the same inputs.  NULL
   * otherwise. */
  int (*on_device)(struct ts_kernel_ctx *k);
};

/* Buffers the memory planner holds for the outputs of the step about to
 * run (exec/planner.c): the executor sets the context's `planned` just
 * before ts__execute, which takes it (and clears it) before allocating.
 * Pointers, since exec/ is a layer above dispatch (tests/check-layers.sh). */
typedef struct ts_planned ts_planned;
struct ts_planned {
  /* The planned tensor for output i of the step (a reference in the
   * current scope), or NULL: allocate as usual (not planned, another
   * backend, or a size other than the plan's). */
  ts_tensor *(*take)(ts_planned *p, int i, const struct ts_backend *b, const ts_info *info);
  /* For a view op (Reshape, Flatten, ReadVariableOp): the header its
   * kernel's ts__tensor_view fills instead of allocating one (the
   * context's `planned_view`), or NULL. */
  ts_tensor *(*view)(ts_planned *p);
};

/* Runs one op on concrete inputs (no promotion, no handlers): placement on
 * the current device, infer, allocate, listeners, kernel.  site is NULL
 * eagerly. */
int ts__execute(const ts_op_call *call, const ts_run_site *site, ts_tensor **out);
/* Steps the executor did itself (variable reads taken from the
 * variable's storage), told to listeners and the observer as ops of no
 * time with outputs out, so watching a run sees every step without making
 * it dispatch ops it does not.  Each is numbered when it is made and told
 * with the others made since (ts__announce_flush, before the thread tells
 * or runs anything else): a model's reads, two thirds of its events,
 * reach each listener in one go instead of one entry into its slot
 * apiece.  A step's event is made once, when the plan is (its op, name,
 * location, node and traced node: ts__announce_template), and queued as
 * a copy that gets what each run gives it (run, seq, parent, tensors,
 * device), in the queue that delivers it; only its times are left for the
 * flush.  Building it afresh, from a call and a site built for it, was
 * most of what telling a read cost. */
#define TS_ANNOUNCE_BATCH 16

/* Whom a queue tells: a row run's reads reach the listeners from the
 * parts, each its share, and the observer from the calling thread
 * (exec/parallel.c). */
enum { TS_TELL_LISTENERS = 1, TS_TELL_OBSERVER = 2, TS_TELL_ALL = 3 };

typedef struct ts_announcements {
  int n;
  int to; /* TS_TELL_* */
  ts_event ev[TS_ANNOUNCE_BATCH]; /* OP_END events, told as they are (times set when told) */
  ts_tensor *in[TS_ANNOUNCE_BATCH], *out[TS_ANNOUNCE_BATCH]; /* what their events point at */
} ts_announcements;

static inline void ts__announce_init(ts_announcements *q, int to)
{
  q->n = 0;
  q->to = to;
}

/* The OP_END event of a step of one input and one output that the
 * executor makes itself (call: its op and location; node and traced as in
 * ts_run_site), as every run tells it. */
void ts__announce_template(ts_event *ev, const ts_op_call *call, const struct ts_node *node,
                           const struct ts_node *traced);
/* Queues a step made from its template: input in, output out, sequence
 * number seq in the thread's run, inside parent (its op's parent_seq) or
 * at the top. */
void ts__announce(ts_announcements *q, const ts_event *tmpl, ts_tensor *in, ts_tensor *out,
                  uint64_t seq, const struct ts_node *parent, uint64_t parent_seq);
void ts__announce_flush(ts_announcements *q);

/* ---- a device plan's capture, recorded for replaying it as is ------------------------
 * While a run of a graph without If or While captures its launches on a
 * device (exec/device_plan.c), the thread's context points at one of these:
 * the ops the run placed, in order (their op events on a replay), the
 * variables they touched (where their storage was), and whether anything
 * happened that launching the capture again would not redo (host work). */
typedef struct ts_plan_op {
  const ts_op_def *def;
  ts_loc loc;
  const struct ts_node *node, *traced;
  const struct ts_backend *backend;
  uint64_t correlation;  /* 0: a step the executor did itself (ts__announce) */
  uint32_t n_copied;
} ts_plan_op;

typedef struct ts_plan_var {
  ts_tensor *var;        /* a reference */
  void *data;            /* its storage when the run first touched it */
  bool written;
} ts_plan_var;

typedef struct ts_plan_record {
  GArray *ops;           /* ts_plan_op */
  GArray *vars;          /* ts_plan_var */
  /* An op ran on the host (a fallback, an effect), or the
   * host read the device: its work is not in the plan's launches. */
  bool host_work;
} ts_plan_record;

/* Records op `call`, placed on b (the thread's device or not), with the
 * correlation it was given and the inputs copied to b for it. */
void ts__plan_record_op(ts_plan_record *r, const ts_op_call *call, const ts_run_site *site,
                        const struct ts_backend *b, uint64_t correlation, uint32_t n_copied);
/* For a backend's graph_plan_replay: the correlation a node captured for
 * the op of correlation c stands for now, fresh[i] where captured[i] == c
 * (captured increasing); c if none. */
uint64_t ts__correlation_recharged(uint64_t c, const uint64_t *captured, const uint64_t *fresh,
                                   int n);
/* Fresh correlation ids for n ops of this thread, increasing. */
void ts__correlations_take(uint64_t *out, int n);
/* A replayed plan's ops told to listeners as they were recorded, each
 * with this call's correlation (fresh[j] for the j-th op that has one),
 * as ops of no host time launched at launched_ns (before the replay went
 * out, so that the device's records of them come after): the device ran
 * them. */
void ts__replay_events(const ts_plan_op *ops, int n, const uint64_t *fresh,
                       const struct ts_node *parent, uint64_t parent_seq, uint64_t launched_ns);

/* After this thread waited (for a call's pieces on other threads): the
 * next step it announces reads the clock, not the end of its last op. */
void ts__op_stamp_forget(void);
/* Infers call's outputs (the tracer records them without running). */
bool ts__dispatch_infer(const ts_op_call *call, ts_info *out_info, int *n_out);

/* ---- per-thread state -------------------------------------------------------------
 * Everything the engine keeps per thread lives in one context. */

/* Where the ops of a function call are in the program, in both modes:
 * the nested calls and TS_IF/TS_WHILE/TS_FOR blocks around them.  An op's
 * site is its path hash combined with its source location; its occurrence
 * counts earlier ops with the same site in the same block instance (a loop
 * iteration starts a new instance).  Eager ops and traced nodes with equal
 * (site, occurrence) are the same op. */
#define TS_MAX_PATH 64
typedef struct ts_path_entry {
  uint64_t hash;
  GHashTable *counts; /* site -> occurrences so far (made on first use) */
  ts_loc loc;         /* the call or statement (the debugger's call stack) */
  const char *what;   /* the function's name, or "then", "else", "cond", "body" */
} ts_path_entry;

typedef struct ts_run_state {
  uint64_t run_id;      /* 0 outside a top-level function call */
  uint64_t seq;         /* ops started in the run */
  const ts_concrete *concrete; /* the run's concrete function (graph), or the eager run's twin */
  const GHashTable *twins; /* eager: the twin map of concrete, NULL if none */
  int depth;            /* path entries in use */
  int base;             /* entries below it belong to an outer run or trace */
  int implicit;         /* > 0: ops made by the engine itself (no site) */
  ts_path_entry path[TS_MAX_PATH];
} ts_run_state;

#define TS_TRACE_DEPTH_LIMIT 64 /* traces and traced calls nested (recursion) */

/* Told of every op the thread finishes, with its outputs: cheaper than an
 * OP_END listener (no lock, no clock, no event), for work on every op of
 * one thread's calls (health mode, debug/health.c).  Not told of muted
 * ops.  The pool's threads tell the calling thread's observer of the
 * pieces of its calls they run (exec/parallel.c), so op_end may be called
 * from several threads at once, a row run's step once per part (the
 * part's rows as outputs, the step's seq). */
typedef struct ts_op_observer ts_op_observer;
struct ts_op_observer {
  void (*op_end)(ts_op_observer *self, const ts_op_call *call, const ts_run_site *site,
                 uint64_t seq, ts_tensor *const *out, int n_out);
  /* Optional: on the calling thread, once the pieces of a call it gave
   * the pool are done (what op_end kept aside on their threads may be
   * filed now). */
  void (*pieces_done)(ts_op_observer *self);
};

/* Told on the op's thread when an op fails where it runs (its shapes
 * refused, or its kernel), its error pending: the step debugger stops at
 * it (debug/session.c).  An op that fails because one inside it did (an
 * If, a While) is told too. */
typedef struct ts_op_failure_hook ts_op_failure_hook;
struct ts_op_failure_hook {
  void (*op_failed)(ts_op_failure_hook *self, const ts_op_event *ev);
};

/* The op during which the host read a device value while a plan was
 * recorded (engine-made ops have no node). */
typedef struct ts_plan_break {
  const char *op_name;
  const struct ts_node *node; /* NULL for an engine-made op */
  ts_loc loc;
} ts_plan_break;

typedef struct ts_context {
  ts_scope *top, *root;
  ts_error *error;            /* pending, owned */
  const int *cancel_flag;
  ts_op_watch *op_watch;      /* see ts_watch_ops */
  ts_op_observer *observer;   /* see ts_op_observer; NULL if none */
  ts_op_failure_hook *failure_hook; /* see ts_op_failure_hook; NULL if none */
  ts_planned *planned;        /* the next executed step's planned outputs; NULL if none */
  ts_tensor *planned_view;    /* the running view op's planned header; NULL if none */
  int mute;                   /* > 0: no listener hears of ops (constant folding) */
  int serial;                 /* > 0: something needs every op of the thread run on it, whole,
                                 one at a time (a debug session pausing before ops, the
                                 divergence finder): graphs run no groups or row runs */
  ts_op_handler *handlers;    /* innermost first */
  const struct ts_backend *device; /* eager placement; NULL: the CPU */
  const struct ts_backend *cpu;    /* ts_backend_cpu(), kept at hand */
  GSList *device_stack;
  ts_run_state run;
  const char *trace_chain[TS_TRACE_DEPTH_LIMIT]; /* functions being traced, outermost first */
  int trace_depth;
  int retracing;              /* > 0: the outermost trace is not its function's first */
  int64_t variables_made;     /* ts_variable_new calls that made one (a trace checks for any) */
  int carried_ok;             /* > 0: loops let values carried without being listed through
                               * (the divergence finder shows where the modes part then) */
  uint64_t corr_next, corr_end; /* correlation ids this thread may hand out */
  bool plan_recording;        /* a run's launches go into a device plan (exec/device_plan.c) */
  bool plan_host_read;        /* the host read a buffer of that device meanwhile: the
                               * capture broke (the backend ran the rest step by step) */
  const ts_op_call *plan_op;  /* while recording: the op dispatched last (valid during it) */
  const ts_run_site *plan_site;
  ts_plan_break plan_break;   /* the op that broke it, if plan_host_read */
  ts_plan_record *plan_rec;   /* what the capture runs, for a replay; NULL: not recorded */
  struct ts_graph_plan *plan_now; /* the backend's plan capturing now (of c->device), or NULL */
  int cf_open;                /* Ifs and loops of that capture the device runs (exec/device_cf.c),
                               * open on this thread */
  GPtrArray *kept_pending;    /* constants' copies made while recording, paired with their
                               * constant, kept once the run settles (ts__kept_settle) */
  int tape_pause;             /* > 0: gradient tapes record nothing (ts_stop_gradient) */
  const struct ts_node *grad_of; /* while a tape takes a gradient in a trace: the forward
                                  * node whose gradient is being recorded (ts_node_gradient_of) */
  const ts_error *error_noted;  /* the pending error once it names the traced functions
                                 * a call failed in (trace/function.c), else NULL */
} ts_context;

/* The calling thread's context: its address is kept in a word of static
 * TLS (initial-exec), so that an op's many lookups are a load each rather
 * than a __tls_get_addr call (the context itself is too large for static
 * TLS in a library that may be loaded late); NULL until the first lookup
 * and once the thread's context is released. */
extern _Thread_local ts_context *ts__context_here __attribute__((tls_model("initial-exec")));
ts_context *ts__context_first(void);

static inline ts_context *ts__context(void)
{
  ts_context *c = ts__context_here;
  return G_LIKELY(c) ? c : ts__context_first();
}
/* The device plan this thread records on b (if any) breaks: the host reads
 * one of b's buffers, or the backend broke its capture for a copy it could
 * not capture (a peer copy): noted once per run with the op dispatched
 * last, for exec/device_plan.c's count of broken captures
 * (backend/buffer.c). */
void ts__plan_note_break(const struct ts_backend *b);
/* After a run ended the device plan it recorded (exec/executable.c): the
 * constants' copies made meanwhile are kept if it went well (the plan was
 * launched: they are filled in stream order), else dropped.  Inside an
 * outer run's recording, nothing yet: that run settles them. */
void ts__kept_settle(ts_context *c, bool ok);

/* Path entries (nested calls, control-flow blocks).  A block remembers the
 * depth it began at and truncates back to it, so an inner block left by
 * `break` or an error never unbalances the path. */
int ts__path_depth(void);
void ts__path_push(ts_loc loc, const char *what);
void ts__path_truncate(int depth);
/* Twin maps: (site, occurrence) -> the traced node with them. */
GHashTable *ts__twin_map_new(void);
void ts__twin_add(GHashTable *map, uint64_t site, int occurrence, const struct ts_node *node);
const struct ts_node *ts__twin_lookup(const GHashTable *map, uint64_t site, int occurrence);
/* Paths restart at the current depth (a trace, or a top-level run);
 * returns the base to restore. */
int ts__path_rebase(void);
void ts__path_restore(int base);
/* The site and occurrence of the next op at loc; false for engine-made ops. */
bool ts__site_next(ts_loc loc, uint64_t *site, int *occurrence);
/* One entry of an op path as a trace remembers it (trace/inline.c). */
typedef struct ts_path_step {
  ts_loc loc;
  const char *what;
} ts_path_step;
/* The entries of the current path from its base (a trace's, a run's),
 * outermost first: *n of them, at most TS_MAX_PATH. */
const ts_path_entry *ts__path_entries(int *n);
/* The site an op at loc gets below the current path with steps[0..n)
 * entered after it (a node a trace copies from another function's graph,
 * as if its code ran here); false where ts__site_next would give none. */
bool ts__site_below(const ts_path_step *steps, int n, ts_loc loc, uint64_t *site);
/* ts_name_scope_begin without making the name unique: enters the scope
 * `name` below the current one even when it was entered before, for the
 * importers, whose nodes of one module (ONNX's "/encoder/layer.0/Add",
 * "/encoder/layer.0/Mul") each enter it again.  Ended by ts_name_scope_end. */
void ts__name_scope_reenter(const char *name);
/* Appends " " and a note to the pending error's detail and message (none: nothing). */
void ts__error_append(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Marks ops as the engine's own while > 0 (nests). */
void ts__implicit(int delta);
/* Appends t as tf.print formats it ("[0 1 2 ... 7 8 9]"); print_tf.c. */
void ts__append_tf_print(GString *s, const ts_tensor *t);
/* Appends t's first max_entries elements (-1: all) as TensorFlow's
 * SummarizeValue gives them to tf.debugging.Assert ("1 2 3...",
 * "[1 2][3...]...", strings unquoted); print_tf.c. */
void ts__append_tf_summary(GString *s, const ts_tensor *t, int64_t max_entries);

/* Emits a TS_EVENT_PRINT to listeners (and nothing else). */
void ts__emit_print(const char *text, const struct ts_node *node);

/* Listener delivery (execute.c asks; listener.c owns the list). */
extern int ts__listener_mask; /* atomic OR of every listener's mask */
#define TS__OP_EVENTS ((int)(TS_EVENT_MASK(TS_EVENT_OP_BEGIN) | TS_EVENT_MASK(TS_EVENT_OP_END)))
void ts__listeners_emit(const ts_event *event);
/* events[0..n) in order, each listener taking them all before the next one
 * does (announced steps, ts__announce_flush). */
void ts__listeners_emit_n(const ts_event *events, int n);
/* While this thread runs a piece of a call shared across the pool
 * (exec/parallel.c), the call's lock: the call's events are delivered one
 * at a time under it (NULL: none).  Returns the one set before. */
pthread_mutex_t *ts__listeners_deliver_under(pthread_mutex_t *lock);

/* ---- gradients (ops/grad.c): what the rows' ts_grad_fn share ------------------------ */

/* A scalar of dtype holding v (a constant: a Const node while tracing). */
ts_tensor *ts__grad_scalar(ts_dtype dtype, double v);
/* g summed down to x's shape, undoing NumPy broadcasting: over the
 * leading axes x lacks and the axes where x has 1 and g not; when a dim of
 * x is unknown (tracing) and g's is not 1, by SumTo, which decides when it
 * runs (TensorFlow's BroadcastGradientArgs).  The last n_core dims never
 * broadcast (a product's matrices: 2; elementwise ops: 0). */
ts_tensor *ts__grad_unbroadcast(ts_loc loc, ts_tensor *g, ts_tensor *x, int n_core);
/* cond (bool) as 0 and 1 of dtype. */
ts_tensor *ts__grad_mask(ts_loc loc, ts_tensor *cond, ts_dtype dtype);
/* The gradient that passes through (Identity, ReadVariableOp). */
bool ts__grad_pass(const ts_op_call *c, ts_tensor *const *out, ts_tensor *const *g,
                   ts_tensor **gi);
/* Gradients that run a forward again under a tape of their own need the
 * tracer, a layer above the ops: If and While replay their subgraphs
 * (trace/tape_control.c), LSTMSequence its steps as unfused ops
 * (trace/tape_rnn.c).  It sets these when the first tape is made; the
 * rows' grad functions call them. */
typedef struct ts_tape_grads {
  ts_grad_fn if_grad;
  ts_grad_fn while_grad;
  ts_grad_fn lstm_sequence_grad;
} ts_tape_grads;
extern ts_tape_grads ts__tape_grads;
/* g reshaped to shape, whose unknown dims (at most one) become -1. */
ts_tensor *ts__grad_reshape(ts_loc loc, ts_tensor *g, ts_shape shape);
/* g of a reduction's output with the reduced axes of `in` kept as 1
 * (keepdims), broadcast back over `in`'s shape by multiplying with
 * ones_like(x).  axes as the op's attribute (TS_ALL_AXES allowed). */
ts_tensor *ts__grad_unreduce(ts_loc loc, ts_tensor *g, ts_tensor *x, ts_ints axes, bool keepdims);

/* ---- the thread pool (pool.c) ------------------------------------------------------
 * ts__parallel_for is ts_parallel_for (tracescope-backend.h) without the
 * argument check: a batch of n tasks run on the pool, the caller taking
 * part, returning when all are done.  Nested calls and calls while another
 * thread holds the pool run inline.  Inside a task OpenBLAS runs on one
 * thread. */
void ts__parallel_for(int64_t n, ts_task_fn fn, void *ctx);
/* The threads a parallel-for from this thread would get: ts_get_threads(),
 * or 1 inside a task. */
int ts__pool_width(void);
/* Runs fn over [0, n) in ranges of at least `grain` items (with a grain of
 * 64 or more, multiples of 64 but the last), in parallel when that gives
 * two or more; else one call fn(ctx, 0, n) on this thread.  For work whose
 * result does not depend on where the ranges split (elementwise ops). */
typedef void (*ts_range_fn)(void *ctx, int64_t begin, int64_t end);
void ts__parallel_range(int64_t n, int64_t grain, ts_range_fn fn, void *ctx);

/* Element access helpers for kernels. */
static inline double ts__load_f64(ts_dtype dt, const void *p, int64_t i)
{
  switch (dt) {
  case TS_F32: return ((const float *)p)[i];
  case TS_F64: return ((const double *)p)[i];
  case TS_I32: return ((const int32_t *)p)[i];
  case TS_I64: return (double)((const int64_t *)p)[i];
  case TS_U8: return ((const uint8_t *)p)[i];
  case TS_BOOL: return ((const bool *)p)[i];
  case TS_I8: return ((const int8_t *)p)[i];
  case TS_I16: return ((const int16_t *)p)[i];
  case TS_U16: return ((const uint16_t *)p)[i];
  case TS_U32: return ((const uint32_t *)p)[i];
  case TS_U64: return (double)((const uint64_t *)p)[i];
  case TS_F16: return ts__f16_to_f32(((const ts_f16 *)p)[i]);
  case TS_BF16: return ts__bf16_to_f32(((const ts_bf16 *)p)[i]);
  default: return 0;
  }
}

/* uint64 elements over INT64_MAX wrap to negative values; a float is
 * truncated as Cast to int64 truncates it (float_to_i64, ops/cast_formulas.h):
 * NaN, +-inf and values past int64 give INT64_MIN, never undefined behaviour. */
static inline int64_t ts__load_i64(ts_dtype dt, const void *p, int64_t i)
{
  switch (dt) {
  case TS_F32:
  case TS_F64:
  case TS_F16:
  case TS_BF16: {
    double v = ts__load_f64(dt, p, i);
    return v >= -0x1p63 && v < 0x1p63 ? (int64_t)v : INT64_MIN;
  }
  case TS_I32: return ((const int32_t *)p)[i];
  case TS_I64: return ((const int64_t *)p)[i];
  case TS_U8: return ((const uint8_t *)p)[i];
  case TS_BOOL: return ((const bool *)p)[i];
  case TS_I8: return ((const int8_t *)p)[i];
  case TS_I16: return ((const int16_t *)p)[i];
  case TS_U16: return ((const uint16_t *)p)[i];
  case TS_U32: return ((const uint32_t *)p)[i];
  case TS_U64: return (int64_t)((const uint64_t *)p)[i];
  default: return 0;
  }
}

/* Stores v as element i of a numeric dtype (integers: v must be in range). */
static inline void ts__store_f64(ts_dtype dt, void *p, int64_t i, double v)
{
  switch (dt) {
  case TS_F32: ((float *)p)[i] = (float)v; break;
  case TS_F64: ((double *)p)[i] = v; break;
  case TS_I32: ((int32_t *)p)[i] = (int32_t)v; break;
  case TS_I64: ((int64_t *)p)[i] = (int64_t)v; break;
  case TS_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case TS_BOOL: ((bool *)p)[i] = v != 0; break;
  case TS_I8: ((int8_t *)p)[i] = (int8_t)v; break;
  case TS_I16: ((int16_t *)p)[i] = (int16_t)v; break;
  case TS_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
  case TS_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
  case TS_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
  case TS_F16: ((ts_f16 *)p)[i] = ts__f64_to_f16(v); break;
  case TS_BF16: ((ts_bf16 *)p)[i] = ts__f64_to_bf16(v); break;
  default: break;
  }
}

/* Stores v as element i exactly where the dtype can (narrower integers wrap). */
static inline void ts__store_i64(ts_dtype dt, void *p, int64_t i, int64_t v)
{
  switch (dt) {
  case TS_I32: ((int32_t *)p)[i] = (int32_t)v; break;
  case TS_I64: ((int64_t *)p)[i] = v; break;
  case TS_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case TS_BOOL: ((bool *)p)[i] = v != 0; break;
  case TS_I8: ((int8_t *)p)[i] = (int8_t)v; break;
  case TS_I16: ((int16_t *)p)[i] = (int16_t)v; break;
  case TS_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
  case TS_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
  case TS_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
  default: ts__store_f64(dt, p, i, (double)v); break;
  }
}
