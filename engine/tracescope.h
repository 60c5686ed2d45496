/* tracescope.h — the public API of libtracescope, the Tracescope tensor engine.
 *
 * User code is written against this header and runs eagerly (op by op) or,
 * once the tracing layer lands, traced into graphs.  Everything here is C11.
 *
 * Memory: user code never frees intermediates.  Every tensor an op returns
 * belongs to the innermost scope of the calling thread (see ts_scope_begin);
 * ending the scope releases them.  Tensors made outside any scope belong to
 * the thread's root scope, released at thread exit (or by ts_release_all).
 *
 * Errors: a failing op returns NULL and records an error (op, shapes, dtypes,
 * the caller's file:line) for the calling thread; ops given a NULL input
 * return NULL and keep the first error.  Read it once with ts_error_take.
 *
 * Dtype promotion (binary arithmetic, comparisons, where, matmul, concat):
 * NumPy's for two integers (the wider of one signedness, a signed one
 * wider than the unsigned one, else the next wider signed one: i8 + u8 ->
 * i16, u64 + i64 -> f64) and two floats (the wider; f16 + bf16 -> f32);
 * an integer with a float gives the float, as PyTorch (i32 + f32 -> f32,
 * i32 + f16 -> f16, where NumPy widens to f64 and f32); bool gives way to
 * the other (bool + u8 -> u8).  Comparisons compare in the promoted
 * dtype and return bool.  ts_div is true division: on integers it returns
 * f64 (as tf.math.truediv does); ts_floordiv and ts_mod floor like Python
 * and NumPy (-7 // 2 = -4, -7 % 2 = 1).  Logical ops take bool only.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TS_ABI_VERSION 16
#define TS_MAX_RANK 8
#define TS_API __attribute__((visibility("default")))

/* ---- small value types ---------------------------------------------- */

typedef enum ts_dtype {
  TS_F32,
  TS_F64,
  TS_I32,
  TS_I64,
  TS_U8,
  TS_BOOL,
  TS_I8,
  TS_I16,
  TS_U16,
  TS_U32,
  TS_U64,
  TS_F16,     /* IEEE 754 half */
  TS_BF16,    /* bfloat16: float32's top 16 bits */
  TS_STRING,  /* byte strings (element: char *, owned by the tensor) */
  TS_VARIANT, /* an opaque value per element: a TensorArray's list */
  TS_DTYPE_COUNT
} ts_dtype;

/* The numeric dtypes (f32 ... bf16) come first; ops take only these unless
 * they say otherwise. */
#define TS_NUMERIC_DTYPE_COUNT TS_STRING

/* A shape; a dimension of -1 is unknown (only in traced graphs). */
typedef struct ts_shape {
  int rank;
  int64_t dim[TS_MAX_RANK];
} ts_shape;

/* A short list of integers: axes, a permutation, begins, sizes.  n < 0
 * means "all axes" (reductions) or "reversed" (transpose). */
typedef struct ts_ints {
  int n;
  int64_t v[TS_MAX_RANK];
} ts_ints;

/* A source location, captured by every op macro. */
typedef struct ts_loc {
  const char *file;
  const char *func;
  int line;
} ts_loc;

/* The statement macros below nest (a TS_IF inside a TS_FOR), each declaring
 * its own state variable under one name; -Wshadow must not flag that. */
#define TS__SHADOW_OK_BEGIN \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wshadow\"")
#define TS__SHADOW_OK_END _Pragma("GCC diagnostic pop")

#define TS__NARGS(...) TS__NARGS_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define TS__NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, N, ...) N
#define TS__FIRST(first, ...) first

#define TS_HERE ((ts_loc){ __FILE__, __func__, __LINE__ })
/* How many integers a list of them holds, none counted as 0 (TS__NARGS
 * counts an empty list as one argument): sizeof never evaluates them. */
#define TS__COUNT(...) ((int)(sizeof((int64_t[]){ 0, __VA_ARGS__ }) / sizeof(int64_t)) - 1)
/* TS_SHAPE() is a scalar's shape (rank 0), TS_AXES() no axes, as NumPy's
 * shape () and axis=() */
#define TS_SHAPE(...) ((ts_shape){ .rank = TS__COUNT(__VA_ARGS__), .dim = { __VA_ARGS__ } })
#define TS_SCALAR_SHAPE ((ts_shape){ .rank = 0 })
#define TS_INTS(...) ((ts_ints){ .n = TS__COUNT(__VA_ARGS__), .v = { __VA_ARGS__ } })
#define TS_AXES TS_INTS
#define TS_ALL_AXES ((ts_ints){ .n = -1 })

typedef enum ts_padding { TS_PADDING_VALID, TS_PADDING_SAME } ts_padding;

/* NumPy's name (float32, int32, bool, uint8, string, variant) and our short one (f32). */
TS_API const char *ts_dtype_name(ts_dtype dtype);
TS_API const char *ts_dtype_short_name(ts_dtype dtype);
TS_API size_t ts_dtype_size(ts_dtype dtype);
TS_API bool ts_dtype_is_float(ts_dtype dtype);
TS_API bool ts_dtype_is_integer(ts_dtype dtype);
/* Parses either spelling ("f32", "float32"); false if unknown. */
TS_API bool ts_dtype_from_name(const char *name, ts_dtype *out);
/* The promoted dtype of a and b (see the rules above). */
TS_API ts_dtype ts_dtype_promote(ts_dtype a, ts_dtype b);
/* The value of a float16 / bfloat16 element from its bits (exact). */
TS_API float ts_f16_bits_to_float(uint16_t bits);
TS_API float ts_bf16_bits_to_float(uint16_t bits);

/* A symbolic tensor's rank when it is not known (the output of an If whose
 * branches give ranks that differ, as tf.cond's shape is then <unknown>). */
#define TS_RANK_UNKNOWN (-1)
/* The number of elements: -1 if a dim or the rank is unknown,
 * TS_SHAPE_SIZE_INVALID (-2) if the product overflows int64 or the rank is
 * outside [TS_RANK_UNKNOWN, TS_MAX_RANK]. */
#define TS_SHAPE_SIZE_INVALID (-2)
TS_API int64_t ts_shape_size(ts_shape shape);
TS_API bool ts_shape_equal(ts_shape a, ts_shape b);

/* ---- errors ----------------------------------------------------------- */

typedef enum ts_error_code {
  TS_OK,
  TS_ERR_INVALID_ARGUMENT,
  TS_ERR_DTYPE,
  TS_ERR_SHAPE,
  TS_ERR_OUT_OF_RANGE,
  TS_ERR_NOT_FOUND,
  TS_ERR_IO,
  TS_ERR_FORMAT,
  TS_ERR_NO_MEMORY,
  TS_ERR_UNIMPLEMENTED,
  TS_ERR_INTERNAL,
  TS_ERR_CANCELLED,
  TS_ERROR_CODE_COUNT
} ts_error_code;

typedef struct ts_error {
  ts_error_code code;
  char *op;      /* op name ("MatMul"), or NULL for non-op errors */
  char *detail;  /* what was wrong, without op and location */
  char *file;    /* caller's source location, or NULL */
  char *func;
  int line;
  char *message; /* all of it in one line: "file:line: Op: detail" */
} ts_error;

/* True if the calling thread has an error recorded. */
TS_API bool ts_failed(void);
/* The pending error, borrowed (NULL if none). */
TS_API const ts_error *ts_error_peek(void);
/* The pending error, owned by the caller (free with ts_error_free); clears it. */
TS_API ts_error *ts_error_take(void);
TS_API void ts_error_free(ts_error *error);
TS_API void ts_error_clear(void);
/* Records an error unless one is pending (the first error wins). */
TS_API void ts_error_set(ts_error_code code, ts_loc loc, const char *op, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
TS_API const char *ts_error_code_name(ts_error_code code);

/* Cancellation: while *flag is nonzero, every op the calling thread runs
 * (eagerly or as a graph node, loop bodies included) fails with
 * TS_ERR_CANCELLED, so a long call ends at its next op.  Another thread sets
 * *flag (atomically); NULL stops watching.  The flag must outlive the watch. */
TS_API void ts_watch_cancel_flag(const int *flag);

/* ---- tensors and scopes ------------------------------------------------ */

typedef struct ts_tensor ts_tensor;
typedef struct ts_scope ts_scope;

TS_API ts_dtype ts_tensor_dtype(const ts_tensor *t);
TS_API int ts_tensor_rank(const ts_tensor *t);
TS_API ts_shape ts_tensor_shape(const ts_tensor *t);
TS_API int64_t ts_tensor_dim(const ts_tensor *t, int axis); /* negative axis counts from the end */
TS_API int64_t ts_tensor_size(const ts_tensor *t);          /* number of elements */
/* Row-major element storage; NULL for a symbolic (traced) tensor and for
 * one on a device the host cannot read (copy it with ts_tensor_to_backend
 * to ts_backend_cpu() first).  Borrowed. */
TS_API void *ts_tensor_data(const ts_tensor *t);
/* Element i (flat, row-major) converted to double / int64. */
TS_API double ts_tensor_get_f64(const ts_tensor *t, int64_t i);
TS_API int64_t ts_tensor_get_i64(const ts_tensor *t, int64_t i);

/* Adds a reference the caller owns (outliving every scope); returns t. */
TS_API ts_tensor *ts_tensor_ref(ts_tensor *t);
TS_API void ts_tensor_unref(ts_tensor *t);

/* New tensors in the current scope.  ts_tensor_new zero-fills; ts_constant
 * copies ts_shape_size(shape) elements of dtype from data.  Scalars from
 * host values.  Return NULL (with an error) on a bad dtype or shape, or
 * (ts_constant) NULL data for a non-empty shape. */
TS_API ts_tensor *ts_tensor_new(ts_dtype dtype, ts_shape shape);
TS_API ts_tensor *ts_constant(ts_dtype dtype, ts_shape shape, const void *data);
TS_API ts_tensor *ts_scalar_f32(float v);
TS_API ts_tensor *ts_scalar_f64(double v);
TS_API ts_tensor *ts_scalar_i32(int32_t v);
TS_API ts_tensor *ts_scalar_i64(int64_t v);
TS_API ts_tensor *ts_scalar_bool(bool v);

/* Scopes nest per thread.  ts_scope_end releases every tensor created since
 * the matching ts_scope_begin; ts_scope_end_keep first hands `keep` to the
 * enclosing scope and returns it.  Ends must match begins (LIFO). */
TS_API ts_scope *ts_scope_begin(void);
TS_API void ts_scope_end(ts_scope *scope);
TS_API ts_tensor *ts_scope_end_keep(ts_scope *scope, ts_tensor *keep);
/* Number of tensors the current scope owns (for tests and leak hunting). */
TS_API int ts_scope_n_tensors(void);
/* Releases the calling thread's root scope. */
TS_API void ts_release_all(void);

/* ---- devices ---------------------------------------------------------------
 * Tensors live on a backend (the CPU, a GPU); ops run where the calling
 * thread's device scope says (the CPU by default), on inputs copied there
 * when needed.  An op the device cannot run runs on the CPU instead (soft
 * placement, as TensorFlow does).  Op events name the device that ran it.
 * The backend interface itself is in tracescope-backend.h. */

typedef enum ts_device_kind {
  TS_DEVICE_CPU,
  TS_DEVICE_CUDA,
  TS_DEVICE_KIND_COUNT
} ts_device_kind;

typedef struct ts_backend ts_backend;

TS_API int ts_backend_count(void);
TS_API const ts_backend *ts_backend_get(int i);            /* NULL if out of range */
TS_API const ts_backend *ts_backend_by_name(const char *name); /* "CPU"; NULL if none */
TS_API const ts_backend *ts_backend_cpu(void);
TS_API const char *ts_backend_name(const ts_backend *b);
TS_API ts_device_kind ts_backend_device_kind(const ts_backend *b);

/* The backend t's data lives on (NULL for a symbolic tensor). */
TS_API const ts_backend *ts_tensor_backend(const ts_tensor *t);
/* A copy of t on backend b (t itself if it is there, or None), in the current scope. */
TS_API ts_tensor *ts_tensor_to_backend(ts_tensor *t, const ts_backend *b);

/* With share, new large CPU buffers (64 KiB and up) live in memfds, so
 * that ts_tensor_export_fd can hand a result to another process without
 * copying it (tracescope-worker turns this on).  Process-wide. */
TS_API void ts_cpu_share_buffers(bool share);
/* A new fd (the caller closes it) for the memory holding t's elements,
 * which then start *offset bytes in; -1 if t is not in such memory.  The
 * memory is never reused by the engine afterwards: the other process's
 * mapping stays valid after t is gone.  The memfd is sealed against
 * shrinking and growing (F_SEAL_SHRINK, F_SEAL_GROW). */
TS_API int ts_tensor_export_fd(const ts_tensor *t, size_t *offset);

/* Threads: how many the engine uses at once, the calling thread included:
 * large elementwise ops, FusedElementwise, Cast, Where and reductions are
 * split across them, and OpenBLAS gets as many (capped by
 * OPENBLAS_NUM_THREADS) for matrix products called outside a split.  0 is
 * every core; the default is TRACESCOPE_THREADS, else every core.
 * Process-wide.  Results are bit-identical at every count except for
 * products OpenBLAS threads (MatMul, Conv2D, _FusedMatMul above its size
 * threshold): it splits those by its thread count, and their last bits may
 * differ between counts.  Which kernel runs an f32 product or convolution
 * (ours or OpenBLAS's, the faster when the process first met the shape:
 * ts_kernel_choices) may differ between runs, and with it the last bits
 * of its results.  false + error for
 * n outside 0..TS_MAX_THREADS or when called from inside a split op. */
#define TS_MAX_THREADS 256
TS_API bool ts_set_threads(int n);
TS_API int ts_get_threads(void);

/* Ops of the calling thread run on b until the matching end (nests). */
TS_API void ts_device_scope_begin(const ts_backend *b);
TS_API void ts_device_scope_end(void);
TS_API const ts_backend *ts_current_device(void);
#define TS_DEVICE_SCOPE(b)                                                                 \
  TS__SHADOW_OK_BEGIN                                                                      \
  for (int ts__dev_once = (ts_device_scope_begin(b), 1); ts__dev_once;                     \
       ts__dev_once = 0, ts_device_scope_end())                                            \
  TS__SHADOW_OK_END

/* ---- printing and .npy --------------------------------------------------- */

/* "Tensor([3 5 7], shape=(3,), dtype=int32)", NumPy formatting inside,
 * elided with "..." above 1000 elements.  Owned string (free()). */
TS_API char *ts_tensor_to_string(const ts_tensor *t);
/* Python's str() of a TensorFlow eager tensor, as print() shows it:
 * "tf.Tensor(0.3469261, shape=(), dtype=float32)", the values as NumPy's
 * str() (on a line of their own when they take several:
 * "tf.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)"); a symbolic
 * tensor as ts_tensor_to_string.  Owned string (free()). */
TS_API char *ts_tensor_str(const ts_tensor *t);
/* The NumPy str() of the values alone: "[3 5 7]".  Owned string (free()). */
TS_API char *ts_tensor_format_values(const ts_tensor *t);
/* "f32[2,3]" / "i32[]" / "f32[?,784]".  Owned string (free()). */
TS_API char *ts_shape_dtype_string(ts_dtype dtype, ts_shape shape);
/* A call's results (ts_function_call_n) as text: one tensor as
 * ts_tensor_to_string, a tuple (several, or tuple set: one) as Python
 * prints it, "(Tensor(200, shape=(), dtype=int32), Tensor(0.5, ...))",
 * "(Tensor(1, shape=(), dtype=int32),)"; and their types, "f32[3]",
 * "(i32[], f32[])", "(f32[3],)"; none (a function returning ts_none):
 * "None".  Owned strings (free()); NULL + error for n < 0 or a NULL result. */
TS_API char *ts_results_to_string(ts_tensor *const *results, int n, bool tuple);
TS_API char *ts_results_type_string(ts_tensor *const *results, int n, bool tuple);

/* .npy (format 1.0/2.0/3.0 read, 1.0 written), C order, the six dtypes. */
TS_API ts_tensor *ts_npy_load(const char *path);
TS_API bool ts_npy_save(const char *path, const ts_tensor *t);

/* ---- ops ------------------------------------------------------------------
 * Every op is a macro capturing the caller's location around a ts_*_at
 * function.  X(ID, name, family) lists them, one row per op; the enum only
 * grows at the end.  family is the op's kind as graphs colour it (CREATE,
 * SHAPE, ARITH, MATH, COMPARE, REDUCE, LINALG, IO, STATE, CONTROL); the
 * rest of an op's row (arity, dtypes, inference, kernels) is the engine's
 * (docs/engine.md, "Adding an op"). */

#define TS_OP_LIST(X)                                                    \
  X(FILL, fill, CREATE)                                                  \
  X(ZEROS, zeros, CREATE)                                                \
  X(ONES, ones, CREATE)                                                  \
  X(ZEROS_LIKE, zeros_like, CREATE)                                      \
  X(ONES_LIKE, ones_like, CREATE)                                        \
  X(EYE, eye, CREATE)                                                    \
  X(RANGE, range, CREATE)                                                \
  X(RANDOM_UNIFORM, random_uniform, CREATE)                              \
  X(RANDOM_NORMAL, random_normal, CREATE)                                \
  X(CAST, cast, SHAPE)                                                   \
  X(RESHAPE, reshape, SHAPE)                                             \
  X(FLATTEN, flatten, SHAPE)                                             \
  X(TRANSPOSE, transpose, SHAPE)                                         \
  X(CONCAT, concat, SHAPE)                                               \
  X(SPLIT, split, SHAPE)                                                 \
  X(SLICE, slice, SHAPE)                                                 \
  X(GATHER, gather, SHAPE)                                               \
  X(ADD, add, ARITH)                                                     \
  X(SUB, sub, ARITH)                                                     \
  X(MUL, mul, ARITH)                                                     \
  X(DIV, div, ARITH)                                                     \
  X(FLOORDIV, floordiv, ARITH)                                           \
  X(MOD, mod, ARITH)                                                     \
  X(POW, pow, ARITH)                                                     \
  X(MAXIMUM, maximum, ARITH)                                             \
  X(MINIMUM, minimum, ARITH)                                             \
  X(NEG, neg, ARITH)                                                     \
  X(ABS, abs, ARITH)                                                     \
  X(EXP, exp, MATH)                                                      \
  X(LOG, log, MATH)                                                      \
  X(SQRT, sqrt, MATH)                                                    \
  X(TANH, tanh, MATH)                                                    \
  X(SIGMOID, sigmoid, MATH)                                              \
  X(RELU, relu, MATH)                                                    \
  X(GREATER, greater, COMPARE)                                           \
  X(GREATER_EQUAL, greater_equal, COMPARE)                               \
  X(LESS, less, COMPARE)                                                 \
  X(LESS_EQUAL, less_equal, COMPARE)                                     \
  X(EQUAL, equal, COMPARE)                                               \
  X(NOT_EQUAL, not_equal, COMPARE)                                       \
  X(LOGICAL_AND, logical_and, COMPARE)                                   \
  X(LOGICAL_OR, logical_or, COMPARE)                                     \
  X(LOGICAL_NOT, logical_not, COMPARE)                                   \
  X(WHERE, where, COMPARE)                                               \
  X(REDUCE_SUM, reduce_sum, REDUCE)                                      \
  X(REDUCE_MEAN, reduce_mean, REDUCE)                                    \
  X(REDUCE_MAX, reduce_max, REDUCE)                                      \
  X(REDUCE_MIN, reduce_min, REDUCE)                                      \
  X(REDUCE_PROD, reduce_prod, REDUCE)                                    \
  X(ARGMAX, argmax, REDUCE)                                              \
  X(MATMUL, matmul, LINALG)                                              \
  X(SOFTMAX, softmax, MATH)                                              \
  X(LOG_SOFTMAX, log_softmax, MATH)                                      \
  X(SPARSE_SOFTMAX_CROSS_ENTROPY, sparse_softmax_cross_entropy, REDUCE)  \
  X(CONV2D, conv2d, LINALG)                                              \
  X(MAX_POOL2D, max_pool2d, LINALG)                                      \
  X(PLACEHOLDER, placeholder, IO)                                        \
  X(CONST, const, CREATE)                                                \
  X(VAR_HANDLE, var_handle, STATE)                                       \
  X(IDENTITY, identity, SHAPE)                                           \
  X(SHAPE, shape, SHAPE)                                                 \
  X(PRINT, print, IO)                                                    \
  X(READ_VARIABLE, read_variable, STATE)                                 \
  X(ASSIGN_VARIABLE, assign_variable, STATE)                             \
  X(ASSIGN_ADD_VARIABLE, assign_add_variable, STATE)                     \
  X(ASSIGN_SUB_VARIABLE, assign_sub_variable, STATE)                     \
  X(IF, if, CONTROL)                                                     \
  X(WHILE, while, CONTROL)                                               \
  X(TENSOR_LIST_RESERVE, tensor_list_reserve, STATE)                     \
  X(TENSOR_LIST_SET_ITEM, tensor_list_set_item, STATE)                   \
  X(TENSOR_LIST_GET_ITEM, tensor_list_get_item, STATE)                   \
  X(TENSOR_LIST_STACK, tensor_list_stack, STATE)                         \
  X(FUSED_ELEMENTWISE, fused_elementwise, MATH)                          \
  X(FUSED_MATMUL, fused_matmul, LINALG)                                  \
  X(FUSED_CONV2D, fused_conv2d, LINALG)                                  \
  X(SOFTPLUS, softplus, MATH)                                            \
  X(CONV2D_BACKPROP_INPUT, conv2d_backprop_input, LINALG)                \
  X(CONV2D_BACKPROP_FILTER, conv2d_backprop_filter, LINALG)              \
  X(MAX_POOL2D_GRAD, max_pool2d_grad, LINALG)                            \
  X(SIN, sin, MATH)                                                      \
  X(COS, cos, MATH)                                                      \
  X(TAN, tan, MATH)                                                      \
  X(ASIN, asin, MATH)                                                    \
  X(ACOS, acos, MATH)                                                    \
  X(ATAN, atan, MATH)                                                    \
  X(SINH, sinh, MATH)                                                    \
  X(COSH, cosh, MATH)                                                    \
  X(ASINH, asinh, MATH)                                                  \
  X(ACOSH, acosh, MATH)                                                  \
  X(ATANH, atanh, MATH)                                                  \
  X(ERF, erf, MATH)                                                      \
  X(STATELESS_RANDOM_UNIFORM, stateless_random_uniform, CREATE)          \
  X(SHUFFLE_INDICES, shuffle_indices, CREATE)                            \
  X(SUM_TO, sum_to, REDUCE)                                              \
  X(APPLY_ADAM, apply_adam, STATE)                                       \
  X(TENSOR_LIST_LENGTH, tensor_list_length, STATE)                       \
  X(TENSOR_LIST_INSERT, tensor_list_insert, STATE)                       \
  X(TENSOR_LIST_ERASE, tensor_list_erase, STATE)                         \
  X(TENSOR_LIST_CONCAT, tensor_list_concat, STATE)                       \
  X(OPTIONAL_FROM_VALUE, optional_from_value, STATE)                     \
  X(OPTIONAL_NONE, optional_none, STATE)                                 \
  X(OPTIONAL_HAS_VALUE, optional_has_value, STATE)                       \
  X(OPTIONAL_GET_VALUE, optional_get_value, STATE)                       \
  X(AS_STRING, as_string, SHAPE)                                         \
  X(STRING_TO_NUMBER, string_to_number, SHAPE)                           \
  X(STRING_LOWER, string_lower, SHAPE)                                   \
  X(STRING_UPPER, string_upper, SHAPE)                                   \
  X(CONV_TRANSPOSE, conv_transpose, LINALG)                              \
  X(LSTM_SEQUENCE, lstm_sequence, LINALG)                                \
  X(SIGN, sign, ARITH)                                                   \
  X(ROUND, round, ARITH)                                                 \
  X(ARGMIN, argmin, REDUCE)                                              \
  X(CUMSUM, cumsum, REDUCE)                                              \
  X(FLOOR, floor, ARITH)                                                 \
  X(CEIL, ceil, ARITH)                                                   \
  X(SQUARE, square, ARITH)                                               \
  X(RSQRT, rsqrt, MATH)                                                  \
  X(RECIPROCAL, reciprocal, ARITH)                                       \
  X(LOG1P, log1p, MATH)                                                  \
  X(EXPM1, expm1, MATH)                                                  \
  X(ELU, elu, MATH)                                                      \
  X(SELU, selu, MATH)                                                    \
  X(RELU6, relu6, MATH)                                                  \
  X(SOFTSIGN, softsign, MATH)                                            \
  X(IS_NAN, is_nan, COMPARE)                                             \
  X(IS_INF, is_inf, COMPARE)                                             \
  X(IS_FINITE, is_finite, COMPARE)                                       \
  X(GELU, gelu, MATH)                                                    \
  X(SQUARED_DIFFERENCE, squared_difference, ARITH)                       \
  X(ATAN2, atan2, MATH)                                                  \
  X(TRUNCATEDIV, truncatediv, ARITH)                                     \
  X(TRUNCATEMOD, truncatemod, ARITH)                                     \
  X(DIV_NO_NAN, div_no_nan, ARITH)                                       \
  X(XLOGY, xlogy, MATH) \
  X(ASSERT, assert, IO) \
  X(TOP_K, top_k, REDUCE)                                                \
  X(SORT, sort, MATH)                                                    \
  X(ARGSORT, argsort, MATH)                                              \
  X(CUMPROD, cumprod, REDUCE)                                            \
  X(REDUCE_ANY, reduce_any, COMPARE)                                     \
  X(REDUCE_ALL, reduce_all, COMPARE) \
  X(PACK, pack, SHAPE)                                                   \
  X(UNPACK, unpack, SHAPE)                                               \
  X(TILE, tile, SHAPE)                                                   \
  X(PAD, pad, SHAPE)                                                     \
  X(REVERSE, reverse, SHAPE)                                             \
  X(ONE_HOT, one_hot, CREATE)

typedef enum ts_op {
#define TS__OP_ENUM(ID, id, family) TS_OP_##ID,
  TS_OP_LIST(TS__OP_ENUM)
#undef TS__OP_ENUM
  TS_OP_COUNT
} ts_op;

/* "MatMul", "Relu", ... as graphs and profiles show them. */
TS_API const char *ts_op_name(ts_op op);

/* What kind of op it is, for tools that draw or run graphs. */
enum {
  TS_OP_TRAIT_STATEFUL = 1 << 0,     /* side effects: runs in program order, never pruned */
  TS_OP_TRAIT_INPUT = 1 << 1,        /* a graph input (Placeholder) */
  TS_OP_TRAIT_VALUE = 1 << 2,        /* holds a value (Const, VarHandleOp): ts_node_value */
  TS_OP_TRAIT_AUXILIARY = 1 << 3,    /* constants and variable reads: drawn beside consumers */
  TS_OP_TRAIT_CONTROL_FLOW = 1 << 4, /* runs subgraphs (If, While) */
  TS_OP_TRAIT_ELEMENTWISE = 1 << 5,  /* out[i] from each input's element i (NumPy broadcasting) */
};
TS_API unsigned ts_op_traits(ts_op op); /* 0 for an invalid op */

/* The op the calling thread started last, kept up to date by the engine at
 * the cost of a few stores per op (no event, no clock): for a process that
 * must say where it was when it died (tracescope-worker).  `node` is the
 * node run in graph mode, NULL eagerly; strings are static or the graph's.
 * Another thread may read it at any time and see a mix of two ops. */
typedef struct ts_op_watch {
  ts_op op;
  int line;
  const char *file;
  const char *func;
  const struct ts_node *node;
  uint64_t seq;           /* the op's sequence number in its run */
} ts_op_watch;
/* Starts (w) or stops (NULL) keeping *w up to date on the calling thread. */
TS_API void ts_watch_ops(ts_op_watch *w);
/* The name of an op's subgraph i (If: "then", "else"; While: "cond",
 * "body"); NULL if it has none. */
TS_API const char *ts_op_subgraph_name(ts_op op, int i);
/* Looks up by display name ("MatMul") or API name ("matmul"); -1 if unknown. */
TS_API int ts_op_from_name(const char *name);

/* creation */
TS_API ts_tensor *ts_fill_at(ts_loc loc, ts_shape shape, ts_tensor *value);
TS_API ts_tensor *ts_zeros_at(ts_loc loc, ts_dtype dtype, ts_shape shape);
TS_API ts_tensor *ts_ones_at(ts_loc loc, ts_dtype dtype, ts_shape shape);
TS_API ts_tensor *ts_zeros_like_at(ts_loc loc, ts_tensor *x);
TS_API ts_tensor *ts_ones_like_at(ts_loc loc, ts_tensor *x);
TS_API ts_tensor *ts_eye_at(ts_loc loc, ts_dtype dtype, int64_t rows, int64_t cols);
TS_API ts_tensor *ts_range_at(ts_loc loc, ts_dtype dtype, double start, double limit, double delta);
TS_API ts_tensor *ts_random_uniform_at(ts_loc loc, ts_dtype dtype, ts_shape shape, double minval,
                                       double maxval, uint64_t seed);
TS_API ts_tensor *ts_random_normal_at(ts_loc loc, ts_dtype dtype, ts_shape shape, double mean,
                                      double stddev, uint64_t seed);
#define ts_fill(shape, value) ts_fill_at(TS_HERE, (shape), (value))
#define ts_zeros(dtype, shape) ts_zeros_at(TS_HERE, (dtype), (shape))
#define ts_ones(dtype, shape) ts_ones_at(TS_HERE, (dtype), (shape))
#define ts_zeros_like(x) ts_zeros_like_at(TS_HERE, (x))
#define ts_ones_like(x) ts_ones_like_at(TS_HERE, (x))
#define ts_eye(dtype, rows, cols) ts_eye_at(TS_HERE, (dtype), (rows), (cols))
#define ts_range(dtype, start, limit, delta) ts_range_at(TS_HERE, (dtype), (start), (limit), (delta))
#define ts_random_uniform(dtype, shape, minval, maxval, seed) \
  ts_random_uniform_at(TS_HERE, (dtype), (shape), (minval), (maxval), (seed))
/* RandomUniform whose stream is (seed, counter): counter an integer scalar
 * tensor (a variable's value, so a graph draws anew each run, as Keras'
 * seed generators and TF's stateless random ops do); counter 0 draws
 * ts_random_uniform's numbers for the same seed. */
TS_API ts_tensor *ts_stateless_random_uniform_at(ts_loc loc, ts_dtype dtype, ts_shape shape,
                                                 double minval, double maxval, uint64_t seed,
                                                 ts_tensor *counter);
#define ts_stateless_random_uniform(dtype, shape, minval, maxval, seed, counter) \
  ts_stateless_random_uniform_at(TS_HERE, (dtype), (shape), (minval), (maxval), (seed), (counter))
/* tf.data's shuffle order over n elements (i64 [n]): a buffer of the first
 * buffer_size, each next output drawn from it uniformly (GLib's Mersenne
 * Twister) and replaced by the next element; its stream is (seed, counter)
 * as above: counter is the pass over the data (reshuffle_each_iteration). */
TS_API ts_tensor *ts_shuffle_indices_at(ts_loc loc, int64_t n, int64_t buffer_size, uint64_t seed,
                                        ts_tensor *counter);
#define ts_shuffle_indices(n, buffer_size, seed, counter) \
  ts_shuffle_indices_at(TS_HERE, (n), (buffer_size), (seed), (counter))
/* g summed down to x's shape, undoing NumPy broadcasting (over the
 * leading axes x lacks and the axes where x has 1): TensorFlow's gradient
 * of a broadcast, reduce_sum over BroadcastGradientArgs, decided when it
 * runs, so a dim unknown while tracing is summed if it turns out to be 1.
 * Only x's shape is read; g float. */
TS_API ts_tensor *ts_sum_to_at(ts_loc loc, ts_tensor *g, ts_tensor *x);
#define ts_sum_to(g, x) ts_sum_to_at(TS_HERE, (g), (x))
#define ts_random_normal(dtype, shape, mean, stddev, seed) \
  ts_random_normal_at(TS_HERE, (dtype), (shape), (mean), (stddev), (seed))

/* shape and layout */
TS_API ts_tensor *ts_cast_at(ts_loc loc, ts_tensor *x, ts_dtype dtype);
TS_API ts_tensor *ts_reshape_at(ts_loc loc, ts_tensor *x, ts_shape shape); /* one dim may be -1 */
TS_API ts_tensor *ts_flatten_at(ts_loc loc, ts_tensor *x);                 /* [N, rest] */
TS_API ts_tensor *ts_transpose_at(ts_loc loc, ts_tensor *x, ts_ints perm); /* TS_ALL_AXES: reverse */
TS_API ts_tensor *ts_concat_at(ts_loc loc, ts_tensor *const *xs, int n, int axis);
/* Splits x into n equal parts along axis into out[0..n-1]; returns n, or -1. */
TS_API int ts_split_at(ts_loc loc, ts_tensor *x, int n, int axis, ts_tensor **out);
/* tf.stack: n tensors of one shape along a new axis (in [-(rank + 1), rank]
 * of theirs): [n, ...] for axis 0. */
TS_API ts_tensor *ts_pack_at(ts_loc loc, ts_tensor *const *xs, int n, int axis);
/* tf.unstack: x's num slices along axis (that axis dropped) into
 * out[0..num-1]; num -1 takes x's dim there (known).  Returns num, or -1. */
TS_API int ts_unpack_at(ts_loc loc, ts_tensor *x, int num, int axis, ts_tensor **out);
/* tf.tile: x repeated multiples[d] times along each dim d (one each, >= 0). */
TS_API ts_tensor *ts_tile_at(ts_loc loc, ts_tensor *x, ts_ints multiples);
/* tf.reverse (ReverseV2): x with the elements along each dim of axis in
 * reverse order; an axis may count from the end (-1 the last) and is
 * named once ([] for x as it is, rank 0 included). */
TS_API ts_tensor *ts_reverse_at(ts_loc loc, ts_tensor *x, ts_ints axis);
/* tf.one_hot: indices (uint8, int8, int32 or int64) with a new dim of
 * depth (>= 0) at axis (-1: last, or 0 .. indices' rank) that holds
 * on_value where indices picks the place and off_value elsewhere (an
 * index outside [0, depth), negative ones too, gives a row of off_value).
 * on_value and off_value: scalars of dtype (numeric or bool), or NULL for
 * 1 and 0 cast to dtype. */
TS_API ts_tensor *ts_one_hot_at(ts_loc loc, ts_tensor *indices, int64_t depth, ts_tensor *on_value,
                                ts_tensor *off_value, int axis, ts_dtype dtype);
/* tf.pad: before[d] and after[d] elements (>= 0) added around each dim d
 * (TensorFlow's paddings [[before, after], ...]): CONSTANT ones of
 * constant_value (a scalar of x's dtype; NULL: 0), or REFLECT x's
 * elements mirrored without the edge (padding < dim), SYMMETRIC with it
 * (padding <= dim); constant_value NULL for those. */
typedef enum ts_pad_mode { TS_PAD_CONSTANT, TS_PAD_REFLECT, TS_PAD_SYMMETRIC } ts_pad_mode;
TS_API ts_tensor *ts_pad_at(ts_loc loc, ts_tensor *x, ts_ints before, ts_ints after, ts_pad_mode mode,
                            ts_tensor *constant_value);
TS_API ts_tensor *ts_slice_at(ts_loc loc, ts_tensor *x, ts_ints begin, ts_ints size); /* size -1: to end */
TS_API ts_tensor *ts_gather_at(ts_loc loc, ts_tensor *params, ts_tensor *indices, int axis);
#define ts_cast(x, dtype) ts_cast_at(TS_HERE, (x), (dtype))
#define ts_reshape(x, shape) ts_reshape_at(TS_HERE, (x), (shape))
#define ts_flatten(x) ts_flatten_at(TS_HERE, (x))
#define ts_transpose(x, perm) ts_transpose_at(TS_HERE, (x), (perm))
#define ts_concat(xs, n, axis) ts_concat_at(TS_HERE, (xs), (n), (axis))
#define ts_split(x, n, axis, out) ts_split_at(TS_HERE, (x), (n), (axis), (out))
#define ts_pack(xs, n, axis) ts_pack_at(TS_HERE, (xs), (n), (axis))
#define ts_unpack(x, num, axis, out) ts_unpack_at(TS_HERE, (x), (num), (axis), (out))
#define ts_tile(x, multiples) ts_tile_at(TS_HERE, (x), (multiples))
#define ts_reverse(x, axis) ts_reverse_at(TS_HERE, (x), (axis))
#define ts_one_hot(indices, depth, on_value, off_value, axis, dtype) \
  ts_one_hot_at(TS_HERE, (indices), (depth), (on_value), (off_value), (axis), (dtype))
#define ts_pad(x, before, after, mode, constant_value) \
  ts_pad_at(TS_HERE, (x), (before), (after), (mode), (constant_value))
#define ts_slice(x, begin, size) ts_slice_at(TS_HERE, (x), (begin), (size))
#define ts_gather(params, indices, axis) ts_gather_at(TS_HERE, (params), (indices), (axis))

/* elementwise, NumPy broadcasting */
#define TS__BINARY(X)                                                                     \
  X(add) X(sub) X(mul) X(div) X(floordiv) X(mod) X(pow) X(maximum) X(minimum) X(greater) \
  X(greater_equal) X(less) X(less_equal) X(equal) X(not_equal) X(logical_and) X(logical_or)  \
  X(squared_difference) X(atan2) X(truncatediv) X(truncatemod) X(div_no_nan) X(xlogy)
#define TS__UNARY(X) \
  X(neg) X(abs) X(exp) X(log) X(sqrt) X(tanh) X(sigmoid) X(relu) X(logical_not) X(softplus) \
  X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(asinh) X(acosh) X(atanh) X(erf) \
  X(sign) X(round) X(floor) X(ceil) X(square) X(rsqrt) X(reciprocal) X(log1p) X(expm1) X(elu)   \
  X(selu) X(relu6) X(softsign) X(is_nan) X(is_inf) X(is_finite) X(gelu)
#define TS__DECL_BINARY(name) TS_API ts_tensor *ts_##name##_at(ts_loc loc, ts_tensor *a, ts_tensor *b);
#define TS__DECL_UNARY(name) TS_API ts_tensor *ts_##name##_at(ts_loc loc, ts_tensor *x);
TS__BINARY(TS__DECL_BINARY)
TS__UNARY(TS__DECL_UNARY)
#undef TS__DECL_BINARY
#undef TS__DECL_UNARY
#define ts_add(a, b) ts_add_at(TS_HERE, (a), (b))
#define ts_sub(a, b) ts_sub_at(TS_HERE, (a), (b))
#define ts_mul(a, b) ts_mul_at(TS_HERE, (a), (b))
#define ts_div(a, b) ts_div_at(TS_HERE, (a), (b))
#define ts_floordiv(a, b) ts_floordiv_at(TS_HERE, (a), (b))
#define ts_mod(a, b) ts_mod_at(TS_HERE, (a), (b))
#define ts_pow(a, b) ts_pow_at(TS_HERE, (a), (b))
#define ts_maximum(a, b) ts_maximum_at(TS_HERE, (a), (b))
#define ts_minimum(a, b) ts_minimum_at(TS_HERE, (a), (b))
#define ts_greater(a, b) ts_greater_at(TS_HERE, (a), (b))
#define ts_greater_equal(a, b) ts_greater_equal_at(TS_HERE, (a), (b))
#define ts_less(a, b) ts_less_at(TS_HERE, (a), (b))
#define ts_less_equal(a, b) ts_less_equal_at(TS_HERE, (a), (b))
#define ts_equal(a, b) ts_equal_at(TS_HERE, (a), (b))
#define ts_not_equal(a, b) ts_not_equal_at(TS_HERE, (a), (b))
#define ts_logical_and(a, b) ts_logical_and_at(TS_HERE, (a), (b))
#define ts_logical_or(a, b) ts_logical_or_at(TS_HERE, (a), (b))
#define ts_squared_difference(a, b) ts_squared_difference_at(TS_HERE, (a), (b)) /* (a - b)^2 */
#define ts_atan2(y, x) ts_atan2_at(TS_HERE, (y), (x)) /* the angle of (x, y), as tf.math.atan2(y, x) */
#define ts_truncatediv(a, b) ts_truncatediv_at(TS_HERE, (a), (b)) /* a / b rounded toward 0, as C */
#define ts_truncatemod(a, b) ts_truncatemod_at(TS_HERE, (a), (b)) /* C's remainder: fmod, % */
#define ts_div_no_nan(a, b) ts_div_no_nan_at(TS_HERE, (a), (b)) /* a / b, 0 where b is 0 */
#define ts_xlogy(x, y) ts_xlogy_at(TS_HERE, (x), (y)) /* x log(y), 0 where x is 0 */
#define ts_neg(x) ts_neg_at(TS_HERE, (x))
#define ts_abs(x) ts_abs_at(TS_HERE, (x))
#define ts_exp(x) ts_exp_at(TS_HERE, (x))
#define ts_log(x) ts_log_at(TS_HERE, (x))
#define ts_sqrt(x) ts_sqrt_at(TS_HERE, (x))
#define ts_tanh(x) ts_tanh_at(TS_HERE, (x))
#define ts_sigmoid(x) ts_sigmoid_at(TS_HERE, (x))
#define ts_relu(x) ts_relu_at(TS_HERE, (x))
#define ts_logical_not(x) ts_logical_not_at(TS_HERE, (x))
#define ts_softplus(x) ts_softplus_at(TS_HERE, (x)) /* log(1 + exp(x)), without overflow */
#define ts_sin(x) ts_sin_at(TS_HERE, (x))
#define ts_cos(x) ts_cos_at(TS_HERE, (x))
#define ts_tan(x) ts_tan_at(TS_HERE, (x))
#define ts_asin(x) ts_asin_at(TS_HERE, (x))
#define ts_acos(x) ts_acos_at(TS_HERE, (x))
#define ts_atan(x) ts_atan_at(TS_HERE, (x))
#define ts_sinh(x) ts_sinh_at(TS_HERE, (x))
#define ts_cosh(x) ts_cosh_at(TS_HERE, (x))
#define ts_asinh(x) ts_asinh_at(TS_HERE, (x))
#define ts_acosh(x) ts_acosh_at(TS_HERE, (x))
#define ts_atanh(x) ts_atanh_at(TS_HERE, (x))
#define ts_erf(x) ts_erf_at(TS_HERE, (x)) /* the error function */
#define ts_sign(x) ts_sign_at(TS_HERE, (x)) /* -1, 0 or 1 (nan stays nan, -0.0 gives 0), as np.sign */
#define ts_round(x) ts_round_at(TS_HERE, (x)) /* half to even, as np.round; integers unchanged */
#define ts_floor(x) ts_floor_at(TS_HERE, (x)) /* floats: tf.math.floor (-0.5 gives -0.0) */
#define ts_ceil(x) ts_ceil_at(TS_HERE, (x))    /* floats: tf.math.ceil (-0.5 gives -0.0) */
#define ts_square(x) ts_square_at(TS_HERE, (x)) /* x * x; integers wrap */
#define ts_rsqrt(x) ts_rsqrt_at(TS_HERE, (x)) /* 1 / sqrt(x) */
#define ts_reciprocal(x) ts_reciprocal_at(TS_HERE, (x)) /* floats: 1 / x */
#define ts_log1p(x) ts_log1p_at(TS_HERE, (x)) /* log(1 + x), exact near 0 */
#define ts_expm1(x) ts_expm1_at(TS_HERE, (x)) /* exp(x) - 1, exact near 0 */
#define ts_elu(x) ts_elu_at(TS_HERE, (x))     /* x < 0 ? exp(x) - 1 : x, as tf.nn.elu */
#define ts_selu(x) ts_selu_at(TS_HERE, (x))   /* tf.nn.selu's scaled Elu */
#define ts_relu6(x) ts_relu6_at(TS_HERE, (x)) /* min(max(x, 0), 6); nan stays nan */
#define ts_softsign(x) ts_softsign_at(TS_HERE, (x)) /* x / (|x| + 1), as tf.nn.softsign */
#define ts_is_nan(x) ts_is_nan_at(TS_HERE, (x)) /* floats to bool */
#define ts_is_inf(x) ts_is_inf_at(TS_HERE, (x)) /* floats to bool: +-inf */
#define ts_is_finite(x) ts_is_finite_at(TS_HERE, (x)) /* floats to bool: neither inf nor nan */
#define ts_gelu(x) ts_gelu_at(TS_HERE, (x)) /* x P(X <= x) by erf, tf.nn.gelu(approximate=False) */
TS_API ts_tensor *ts_where_at(ts_loc loc, ts_tensor *cond, ts_tensor *x, ts_tensor *y);
#define ts_where(cond, x, y) ts_where_at(TS_HERE, (cond), (x), (y))

/* reductions (TS_ALL_AXES reduces everything; negative axes count from the end).
 * Over zero elements, as TensorFlow: Sum 0, Prod 1, float Mean nan (an
 * integer Mean is an error), Max and Min their identity, -inf and inf for
 * floats, the dtype's lowest and highest for integers (NumPy refuses);
 * ArgMax and ArgMin over an empty axis are errors (as NumPy's). */
TS_API ts_tensor *ts_reduce_sum_at(ts_loc loc, ts_tensor *x, ts_ints axes, bool keepdims);
TS_API ts_tensor *ts_reduce_mean_at(ts_loc loc, ts_tensor *x, ts_ints axes, bool keepdims);
TS_API ts_tensor *ts_reduce_max_at(ts_loc loc, ts_tensor *x, ts_ints axes, bool keepdims);
TS_API ts_tensor *ts_reduce_min_at(ts_loc loc, ts_tensor *x, ts_ints axes, bool keepdims);
TS_API ts_tensor *ts_reduce_prod_at(ts_loc loc, ts_tensor *x, ts_ints axes, bool keepdims);
/* tf.reduce_any and tf.reduce_all: bool in and out; over nothing false (any), true (all) */
TS_API ts_tensor *ts_reduce_any_at(ts_loc loc, ts_tensor *x, ts_ints axes, bool keepdims);
TS_API ts_tensor *ts_reduce_all_at(ts_loc loc, ts_tensor *x, ts_ints axes, bool keepdims);
TS_API ts_tensor *ts_argmax_at(ts_loc loc, ts_tensor *x, int axis); /* i64 indices */
TS_API ts_tensor *ts_argmin_at(ts_loc loc, ts_tensor *x, int axis); /* i64 indices */
#define ts_reduce_sum(x, axes, keepdims) ts_reduce_sum_at(TS_HERE, (x), (axes), (keepdims))
#define ts_reduce_mean(x, axes, keepdims) ts_reduce_mean_at(TS_HERE, (x), (axes), (keepdims))
#define ts_reduce_max(x, axes, keepdims) ts_reduce_max_at(TS_HERE, (x), (axes), (keepdims))
#define ts_reduce_min(x, axes, keepdims) ts_reduce_min_at(TS_HERE, (x), (axes), (keepdims))
#define ts_reduce_prod(x, axes, keepdims) ts_reduce_prod_at(TS_HERE, (x), (axes), (keepdims))
#define ts_reduce_any(x, axes, keepdims) ts_reduce_any_at(TS_HERE, (x), (axes), (keepdims))
#define ts_reduce_all(x, axes, keepdims) ts_reduce_all_at(TS_HERE, (x), (axes), (keepdims))
#define ts_argmax(x, axis) ts_argmax_at(TS_HERE, (x), (axis))
#define ts_argmin(x, axis) ts_argmin_at(TS_HERE, (x), (axis))
/* tf.math.cumsum: running sums along axis in x's dtype (integers wrap),
 * from the end when reverse, each leaving out its own element when
 * exclusive (starting from 0). */
TS_API ts_tensor *ts_cumsum_at(ts_loc loc, ts_tensor *x, int axis, bool exclusive, bool reverse);
#define ts_cumsum(x, axis, exclusive, reverse) \
  ts_cumsum_at(TS_HERE, (x), (axis), (exclusive), (reverse))
/* tf.math.cumprod: ts_cumsum's running products (exclusive starts from 1). */
TS_API ts_tensor *ts_cumprod_at(ts_loc loc, ts_tensor *x, int axis, bool exclusive, bool reverse);
#define ts_cumprod(x, axis, exclusive, reverse) \
  ts_cumprod_at(TS_HERE, (x), (axis), (exclusive), (reverse))
/* tf.math.top_k (TopKV2): *values the k largest along the last axis, in
 * order, *indices (int32) where they were; equal values the lower index
 * first, a NaN above every number.  k in [0, last dim].  false + error
 * (the outputs NULL). */
TS_API bool ts_top_k_at(ts_loc loc, ts_tensor *x, int k, ts_tensor **values, ts_tensor **indices);
#define ts_top_k(x, k, values, indices) ts_top_k_at(TS_HERE, (x), (k), (values), (indices))
/* tf.sort and tf.argsort (its indices int32) along axis, ascending or
 * descending; stable (equal values keep their order), a NaN above every
 * number (last ascending, first descending). */
TS_API ts_tensor *ts_sort_at(ts_loc loc, ts_tensor *x, int axis, bool descending);
TS_API ts_tensor *ts_argsort_at(ts_loc loc, ts_tensor *x, int axis, bool descending);
#define ts_sort(x, axis, descending) ts_sort_at(TS_HERE, (x), (axis), (descending))
#define ts_argsort(x, axis, descending) ts_argsort_at(TS_HERE, (x), (axis), (descending))

/* linear algebra and neural-network ops */
/* [..., M, K] x [..., K, N] -> [..., M, N]; batch dims broadcast. */
TS_API ts_tensor *ts_matmul_at(ts_loc loc, ts_tensor *a, ts_tensor *b, bool transpose_a,
                               bool transpose_b);
#define ts_matmul(a, b) ts_matmul_at(TS_HERE, (a), (b), false, false)
#define ts_matmul_t(a, b, transpose_a, transpose_b) \
  ts_matmul_at(TS_HERE, (a), (b), (transpose_a), (transpose_b))
TS_API ts_tensor *ts_softmax_at(ts_loc loc, ts_tensor *logits);     /* over the last axis */
TS_API ts_tensor *ts_log_softmax_at(ts_loc loc, ts_tensor *logits); /* over the last axis */
/* labels [N] (i32/i64, each in [0, C)), logits [N, C] -> losses [N]. */
TS_API ts_tensor *ts_sparse_softmax_cross_entropy_at(ts_loc loc, ts_tensor *labels,
                                                     ts_tensor *logits);
/* input NHWC [N,H,W,C], filter HWIO [KH,KW,C,O] -> [N,OH,OW,O]. */
TS_API ts_tensor *ts_conv2d_at(ts_loc loc, ts_tensor *input, ts_tensor *filter, int stride_h,
                               int stride_w, ts_padding padding);
TS_API ts_tensor *ts_max_pool2d_at(ts_loc loc, ts_tensor *input, int ksize_h, int ksize_w,
                                   int stride_h, int stride_w, ts_padding padding);
/* ONNX's ConvTranspose: input NCHW-like [N, C, 1 to 3 spatial dims], filter
 * [C, M/group, taps...], bias NULL or [M] -> [N, M, output_shape...]; each
 * input pixel i and tap k add input x filter into the output at
 * i * strides + k * dilations - pads (pads before each spatial dim, may be
 * negative; strides, dilations, pads and output_shape one value per
 * spatial dim). */
TS_API ts_tensor *ts_conv_transpose_at(ts_loc loc, ts_tensor *input, ts_tensor *filter, ts_tensor *bias,
                                       ts_ints strides, ts_ints dilations, ts_ints pads, ts_ints output_shape,
                                       int group);
/* An LSTM over a sequence, as ONNX's LSTM computes one direction with its
 * default activations: x [S, B, I], w [I, 4H] and r [H, 4H] the input and
 * recurrence weights transposed (W^T, R^T: gate blocks i, o, f, c), b [4H]
 * both biases added (Wb + Rb), h0 and c0 [B, H], peepholes NULL or [3, H]
 * (i, o, f); the steps from the last when reverse.  *y [S, B, H] the
 * hidden state of each step, *h and *c [B, H] the states after the last
 * step run.  f32 or f64.  false + error (the outputs NULL). */
TS_API bool ts_lstm_sequence_at(ts_loc loc, ts_tensor *x, ts_tensor *w, ts_tensor *r, ts_tensor *b, ts_tensor *h0,
                                ts_tensor *c0, ts_tensor *peepholes, bool reverse, ts_tensor **y, ts_tensor **h,
                                ts_tensor **c);
#define ts_lstm_sequence(x, w, r, b, h0, c0, peepholes, reverse, y, h, c) \
  ts_lstm_sequence_at(TS_HERE, (x), (w), (r), (b), (h0), (c0), (peepholes), (reverse), (y), (h), (c))
/* Keras' Dropout.  Not training: Identity (as Keras at inference).
 * Training: each element kept with probability 1 - rate and scaled by
 * 1 / (1 - rate), else 0; the mask comes from RandomUniform with `seed`,
 * so the same seed gives the same mask (eagerly and in a graph).  rate in
 * [0, 1); x float with a fully known shape when training. */
TS_API ts_tensor *ts_dropout_at(ts_loc loc, ts_tensor *x, double rate, bool training,
                                uint64_t seed);
/* ts_dropout with the mask from the stream (seed, counter) (a
 * StatelessRandomUniform): counter an integer scalar, a variable's value
 * that the caller advances to draw a new mask on each call (Keras' Dropout
 * layer does so: ts_dropout_layer_new).  NULL: ts_dropout. */
TS_API ts_tensor *ts_dropout_stream_at(ts_loc loc, ts_tensor *x, double rate, bool training,
                                       uint64_t seed, ts_tensor *counter);
#define ts_softmax(x) ts_softmax_at(TS_HERE, (x))
#define ts_log_softmax(x) ts_log_softmax_at(TS_HERE, (x))
#define ts_sparse_softmax_cross_entropy(labels, logits) \
  ts_sparse_softmax_cross_entropy_at(TS_HERE, (labels), (logits))
#define ts_conv2d(input, filter, stride_h, stride_w, padding) \
  ts_conv2d_at(TS_HERE, (input), (filter), (stride_h), (stride_w), (padding))
#define ts_max_pool2d(input, kh, kw, sh, sw, padding) \
  ts_max_pool2d_at(TS_HERE, (input), (kh), (kw), (sh), (sw), (padding))
#define ts_conv_transpose(input, filter, bias, strides, dilations, pads, output_shape, group)                    \
  ts_conv_transpose_at(TS_HERE, (input), (filter), (bias), (strides), (dilations), (pads), (output_shape), (group))
#define ts_dropout(x, rate, training, seed) \
  ts_dropout_at(TS_HERE, (x), (rate), (training), (seed))

/* ---- listeners ---------------------------------------------------------
 * One interface through which the engine reports what happens; the
 * profiler and the app subscribe, the engine never calls into them.
 * Callbacks run on the thread that ran the op and must not call ops.  A
 * graph call runs groups of its ops and the parts of its row runs on the
 * engine's threads (ts_concrete_schedule), listened to or not: their
 * events come from those threads, with the call's run id and the seqs
 * the call gives them, and one call's events reach a listener one at a
 * time (unless it says TS_LISTENER_CONCURRENT).  A row run's op is an event per part (its rows as outputs, the
 * same node and seq). */

typedef enum ts_event_kind {
  TS_EVENT_OP_BEGIN,
  TS_EVENT_OP_END,
  TS_EVENT_TRACE,           /* a function was traced (or retraced) */
  TS_EVENT_WARNING,         /* frequent retracing, retrace limit reached, ... */
  TS_EVENT_PRINT,           /* ts_print output */
  TS_EVENT_MEMORY,          /* a tensor's storage was allocated or released */
  TS_EVENT_PHASE_BEGIN,     /* the engine began preparing a call: tracing, a pass, ... */
  TS_EVENT_PHASE_END,
  TS_EVENT_KIND_COUNT
} ts_event_kind;

#define TS_EVENT_MASK(kind) (1u << (kind))

typedef struct ts_graph ts_graph;
typedef struct ts_node ts_node;
typedef struct ts_function ts_function;
typedef struct ts_concrete ts_concrete;

/* The identity of an op across modes.  Every op event carries the run it
 * belongs to (one run per top-level call of a ts_function, in either mode;
 * run_id 0 for ops outside any call), its sequence number in the run (1, 2,
 * ... in start order), and where it sits:
 *  - graph mode: `node` is the node being run (of the executable's
 *    optimized graph), `traced` the node of ts_concrete_graph(concrete) it
 *    stands for when it stands for exactly one of its op (ts_node_origin lists all),
 *    `parent` the If/While node whose subgraph runs it, `parent_seq` that
 *    op's sequence number;
 *  - eager mode: `node` is NULL; when the function has a concrete function
 *    for the call's signature, `concrete` is it and `traced` the node the
 *    same op became when it was traced.  The match is by call path (nested
 *    calls and TS_IF/TS_WHILE/TS_FOR blocks, each loop iteration counted
 *    afresh), source location and occurrence: the k-th op written at
 *    file:line in a block instance is the k-th node traced there.
 * Traced nodes with no eager twin are the engine's own: placeholders,
 * lifted constants, variable handles and implicit reads, loop counters, and
 * constants folded by the optimizer (ts_node_has_eager_twin says which). */
typedef struct ts_op_event {
  ts_op op;
  const char *op_name;
  ts_loc loc;
  const char *device;            /* the backend that ran it: "CPU" */
  int n_inputs;
  ts_tensor *const *inputs;
  int n_outputs;                 /* 0 in OP_BEGIN */
  ts_tensor *const *outputs;
  uint64_t start_ns;             /* CLOCK_MONOTONIC */
  uint64_t end_ns;               /* 0 in OP_BEGIN */
  const ts_node *node;           /* graph mode: the node being run; NULL when eager */
  uint64_t run_id;
  uint64_t seq;
  const ts_node *parent;         /* graph mode: the enclosing If/While node; NULL at the top and eagerly */
  uint64_t parent_seq;           /* graph mode: its op's seq; 0 otherwise */
  const ts_concrete *concrete;   /* see above; NULL if none */
  const ts_node *traced;         /* see above; NULL if none */
  uint32_t stream;               /* the device's stream that ran it (0: its only one) */
  uint32_t n_copied;             /* inputs copied to its device first (their copies' activity
                                    records carry its correlation) */
  uint64_t correlation;          /* ties the device activity it caused to it (ts_activity) */
  /* Its time on the device (CLOCK_MONOTONIC), 0 until known: the backend's
   * activity records bring it to a collector later (a profiler's). */
  uint64_t device_start_ns, device_end_ns;
} ts_op_event;

/* Why a function was traced. */
typedef enum ts_trace_reason {
  TS_TRACE_FIRST_CALL,
  TS_TRACE_SHAPE,       /* a tensor argument's shape differs */
  TS_TRACE_DTYPE,       /* a tensor argument's dtype differs */
  TS_TRACE_HOST_VALUE,  /* a host argument's value differs */
  TS_TRACE_STRUCTURE,   /* the number or kinds of arguments differ */
  TS_TRACE_EXPLICIT,    /* ts_function_get_concrete */
  TS_TRACE_REASON_COUNT
} ts_trace_reason;

typedef struct ts_trace_event {
  const ts_function *function;
  const char *function_name;
  const ts_concrete *concrete;   /* the new concrete function; NULL when tracing failed */
  const char *signature;         /* "(x: f32[2], n: 3)" */
  ts_trace_reason reason;
  const char *reason_text;       /* "arg 0 (x): shape (2,) differs from traced (1,)" */
  uint64_t duration_ns;          /* tracing, not running */
  int n_concrete;                /* concrete functions the function holds now */
  const char *error;             /* tracing failed: the error (the call fails with it); else NULL */
} ts_trace_event;

typedef enum ts_warning_kind {
  TS_WARNING_FREQUENT_RETRACING,
  TS_WARNING_RETRACE_LIMIT,      /* calls now run eagerly */
  TS_WARNING_DIVERGENCE,         /* check mode: eager and graph results differ */
  TS_WARNING_DEVICE_FALLBACK,    /* an op the device cannot run ran on the CPU */
  TS_WARNING_DEVICE_STEPWISE,    /* a graph on a device runs op by op: the host kept reading
                                    its values mid-run, breaking the captures */
  TS_WARNING_DEVICE_CONTROL_FLOW, /* an If or While the device ran inside a graph's capture
                                    now runs from the host (exec/device_cf.c) */
  TS_WARNING_KIND_COUNT
} ts_warning_kind;

typedef struct ts_warning_event {
  ts_warning_kind kind;
  const ts_function *function;
  const char *function_name;
  const char *message;           /* the whole warning, with the fix */
  const char *arguments;         /* the arguments that keep changing: "x, n" */
} ts_warning_event;

typedef struct ts_print_event {
  const char *text;              /* what was printed, without the final newline */
  const ts_node *node;           /* NULL when eager */
} ts_print_event;

/* What a memory event counts: a tensor's own storage, or a memory plan's
 * arena (exec/planner.c), which the planned values of a graph's calls
 * share (they add no tensor storage of their own). */
typedef enum ts_memory_kind {
  TS_MEMORY_TENSORS,
  TS_MEMORY_ARENA,
  TS_MEMORY_KIND_COUNT
} ts_memory_kind;

/* Tensor storage (a buffer or the bytes inline with the tensor; views add
 * none) or an arena, reported on the thread that allocates or releases it.
 * live_bytes counts every allocation of that kind on that kind of device
 * since the process started, whether or not anyone listened. */
typedef struct ts_memory_event {
  int64_t delta_bytes;           /* > 0 allocated, < 0 released */
  int64_t live_bytes;            /* of this kind on the device after this change */
  const char *device;            /* the backend: "CPU" */
  ts_loc loc;                    /* allocations: where (of the op); releases and arenas: none */
  ts_memory_kind what;
} ts_memory_event;

/* What the engine does before and around running a graph, each a span
 * (PHASE_BEGIN ... PHASE_END on one thread, nested as they run): a trace
 * holds its graph's optimization (each pass that ran in it) and planning
 * (kernel tuning in it); tuning at a first run sits inside the op. */
typedef enum ts_phase_kind {
  TS_PHASE_TRACE,     /* name: the function traced */
  TS_PHASE_OPTIMIZE,  /* the optimizer's passes over a traced graph; name "optimize" */
  TS_PHASE_PASS,      /* one pass: "fold", "cse", "simplify", "dce", "fuse" */
  TS_PHASE_PLAN,      /* an executable's schedule, groups and memory plan; name "plan" */
  TS_PHASE_TUNE,      /* kernel choice by measuring; name: what was tuned */
  TS_PHASE_KIND_COUNT
} ts_phase_kind;

typedef struct ts_phase_event {
  ts_phase_kind phase;
  const char *name;
  const char *detail;  /* PHASE_END: what it did ("fused 3 nodes into 1 kernels"), or NULL */
  int depth;           /* phases open around it on this thread (0: outermost) */
  uint64_t start_ns;   /* CLOCK_MONOTONIC */
  uint64_t end_ns;     /* 0 in PHASE_BEGIN */
} ts_phase_event;

/* "trace", "optimize", "pass", "plan", "tune"; "?" out of range. */
TS_API const char *ts_phase_kind_name(ts_phase_kind kind);

typedef struct ts_event {
  ts_event_kind kind;
  union {
    ts_op_event op;
    ts_trace_event trace;
    ts_warning_event warning;
    ts_print_event print;
    ts_memory_event memory;
    ts_phase_event phase;
  };
} ts_event;

typedef void (*ts_listener_fn)(const ts_event *event, void *user_data);

/* Or'ed into a listener's mask: it may be called for one call's events
 * from several threads at once (it keeps per-thread state, as the
 * profiler does), so they are delivered without waiting on one another. */
#define TS_LISTENER_CONCURRENT (1u << 31)

/* Subscribes fn to the kinds in mask; returns an id > 0 for removal. */
TS_API int ts_listener_add(uint32_t mask, ts_listener_fn fn, void *user_data);
TS_API void ts_listener_remove(int id);

TS_API uint64_t ts_now_ns(void);

/* ---- functions, calls and modules -------------------------------------- */

typedef enum ts_value_kind {
  TS_VALUE_NONE,
  TS_VALUE_TENSOR,
  TS_VALUE_INT,
  TS_VALUE_FLOAT,
  TS_VALUE_BOOL,
  TS_VALUE_STRING,
  TS_VALUE_LIST,
  TS_VALUE_SPEC,   /* a tensor spec (dtype and shape, dims may be -1): for signatures */
  TS_VALUE_KIND_COUNT
} ts_value_kind;

/* What a tensor argument must look like: dtype and shape, -1 = any size. */
typedef struct ts_spec {
  ts_dtype dtype;
  ts_shape shape;
} ts_spec;

/* An argument: a tensor or a host value (the analogue of a Python value). */
typedef struct ts_value {
  ts_value_kind kind;
  union {
    ts_tensor *tensor;
    int64_t i;
    double f;
    bool b;
    const char *s;
    struct {
      const struct ts_value *items;
      int n;
    } list;
    ts_spec spec;
  };
} ts_value;

#define TS_TENSOR_VALUE(t) ((ts_value){ .kind = TS_VALUE_TENSOR, .tensor = (t) })
#define TS_INT_VALUE(v) ((ts_value){ .kind = TS_VALUE_INT, .i = (v) })
#define TS_FLOAT_VALUE(v) ((ts_value){ .kind = TS_VALUE_FLOAT, .f = (v) })
#define TS_STRING_VALUE(v) ((ts_value){ .kind = TS_VALUE_STRING, .s = (v) })
#define TS_SPEC_VALUE(dt, sh) ((ts_value){ .kind = TS_VALUE_SPEC, .spec = { (dt), (sh) } })

typedef struct ts_call ts_call;
typedef ts_tensor *(*ts_fn)(ts_call *call);

TS_API int ts_call_n_args(const ts_call *call);
TS_API const ts_value *ts_call_arg_value(const ts_call *call, int i); /* NULL if out of range */
/* Argument i as a tensor (host numbers become constants); NULL + error if missing. */
TS_API ts_tensor *ts_arg_at(ts_loc loc, ts_call *call, int i);
/* Argument i as a host value; an error (and 0 / "") if it is not one. */
TS_API int64_t ts_arg_int_at(ts_loc loc, ts_call *call, int i);
TS_API double ts_arg_float_at(ts_loc loc, ts_call *call, int i);
TS_API const char *ts_arg_str_at(ts_loc loc, ts_call *call, int i);
#define ts_arg(call, i) ts_arg_at(TS_HERE, (call), (i))
#define ts_arg_int(call, i) ts_arg_int_at(TS_HERE, (call), (i))
#define ts_arg_float(call, i) ts_arg_float_at(TS_HERE, (call), (i))
#define ts_arg_str(call, i) ts_arg_str_at(TS_HERE, (call), (i))

/* Several results: a ts_fn returns a tuple of tensors (tf.function's
 * `return step, loss, accuracy`) as `return ts_tuple(step, loss, accuracy);`
 * (or ts_tuple_v(n, tensors) for an array).  A tuple is only a function's
 * result: an op given one fails; callers read its tensors with
 * ts_function_call_n / ts_concrete_call_n.  Traced, each tensor is one
 * output of the concrete function's graph, in order.  Its tensors are
 * held by the tuple (variables give their value, as a single result
 * does); tuples do not nest.  NULL + error for a NULL tensor (the error
 * that made it stays), n < 1 or n > TS_MAX_RETURNS, or a tensor that is a
 * tuple.  TS_RETURN takes a tuple, also from a traced block: every return
 * of the function then gives a tuple of as many tensors, each of one dtype
 * on every path (its shape may differ: dims relax to unknown). */
#define TS_MAX_RETURNS 64
TS_API ts_tensor *ts_tuple_at(ts_loc loc, int n, ts_tensor *const *tensors);
#define ts_tuple(...)                                                                      \
  ts_tuple_at(TS_HERE, (int)(sizeof((ts_tensor *[]){ __VA_ARGS__ }) / sizeof(ts_tensor *)), \
              (ts_tensor *[]){ __VA_ARGS__ })
#define ts_tuple_v(n, tensors) ts_tuple_at(TS_HERE, (n), (tensors))

/* No result: a ts_fn that only prints, assigns or returns early (a
 * tf.function whose Python returns None) ends in `return ts_none();` or
 * TS_RETURN(ts_none()).  Traced, its concrete function has no outputs
 * (its stateful ops still run, in order); callers get None back (not
 * NULL: that is a failure), which ts_is_none tells apart, the `_n` calls
 * a count of 0.  Every return of the function is then None; an op given
 * None fails.  In the current scope; NULL only when out of memory. */
TS_API ts_tensor *ts_none(void);
TS_API bool ts_is_none(const ts_tensor *t);

/* One exported function: `spec` is "name, arg0, arg1, ..." (from TS_EXPORT);
 * `examples` its example arguments (argument specs, NULL-terminated) or NULL. */
typedef struct ts_export {
  ts_fn fn;
  const char *spec;
  const char *const *examples;
} ts_export;

typedef struct ts_module_info {
  uint32_t abi_version; /* TS_ABI_VERSION the module was built with */
  const char *title;
  const ts_export *exports;
  int n_exports;
} ts_module_info;

/* The symbol a module exports; the loader looks it up by this name. */
#define TS_MODULE_SYMBOL "tracescope_module"

/* TS_EXPORT(fn) or TS_EXPORT(fn, x, y): the function and its argument names.
 * TS_EXPORT_WITH(TS_EXAMPLE("f32[3,3]:uniform", "2"), fn, x, n) also gives
 * example arguments (argument specs, as tracescope-cli --arg takes them, one
 * per parameter): the app and `tracescope-cli run` use them when none are
 * given, so a first Run works.  The loader checks that they parse. */
#define TS_EXPORT(...) { TS__FIRST(__VA_ARGS__, ~), #__VA_ARGS__, NULL }
#define TS_EXAMPLE(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define TS_EXPORT_WITH(examples, ...) { TS__FIRST(__VA_ARGS__, ~), #__VA_ARGS__, (examples) }
#define TS_MODULE(title, ...)                                                     \
  static const ts_export ts__module_exports[] = { __VA_ARGS__ };                   \
  TS_API extern const ts_module_info tracescope_module;                           \
  const ts_module_info tracescope_module = {                                      \
    TS_ABI_VERSION, (title), ts__module_exports,                                  \
    (int)(sizeof ts__module_exports / sizeof ts__module_exports[0]) }

typedef struct ts_module ts_module;

/* Loads a module from a shared object (or "seeds" for the bundled one);
 * NULL with an error naming the file and what was wrong.  Owned. */
TS_API ts_module *ts_module_open(const char *path);
/* Wraps a module_info linked into the program (no shared object). */
TS_API ts_module *ts_module_new_static(const ts_module_info *info, const char *path);
TS_API void ts_module_free(ts_module *module);
TS_API const char *ts_module_title(const ts_module *module);
TS_API const char *ts_module_path(const ts_module *module);
TS_API int ts_module_n_functions(const ts_module *module);
TS_API ts_function *ts_module_function(const ts_module *module, int i);      /* borrowed */
TS_API ts_function *ts_module_lookup(const ts_module *module, const char *name); /* borrowed, NULL if none */
/* The name of names[0..n) that name is probably a typo of ("did you mean
 * ...?"): the closest by edit distance, case aside, if at most a third of
 * name's letters differ; NULL if none is that close.  Borrowed from names. */
TS_API const char *ts_nearest_name(const char *name, const char *const *names, size_t n);
/* The module's function whose name name is probably a typo of, or NULL. */
TS_API const char *ts_module_nearest_function(const ts_module *module, const char *name);
/* The example arguments of function i (NULL-terminated argument specs), or NULL. */
TS_API const char *const *ts_module_examples(const ts_module *module, int i);

TS_API const char *ts_function_name(const ts_function *fn);
TS_API int ts_function_n_params(const ts_function *fn); /* named arguments, 0 if unnamed */
TS_API const char *ts_function_param_name(const ts_function *fn, int i);
/* Runs fn eagerly on args; the result belongs to the current scope.  NULL + error on failure. */
TS_API ts_tensor *ts_function_call_eager(ts_function *fn, const ts_value *args, int n_args);

/* ---- graphs ---------------------------------------------------------------
 * A traced function's dataflow graph.  Node ids are indexes, stable for the
 * graph's life; creation order is a topological order.  Subgraphs (If
 * branches, While cond and body) hang off their node.  All borrowed. */

typedef struct ts_port {
  int node;  /* node id */
  int index; /* output index */
} ts_port;

TS_API const char *ts_graph_name(const ts_graph *g);
TS_API const ts_graph *ts_graph_parent(const ts_graph *g); /* NULL at the top */
TS_API int ts_graph_n_nodes(const ts_graph *g);
TS_API const ts_node *ts_graph_node(const ts_graph *g, int id);
TS_API int ts_graph_n_inputs(const ts_graph *g);
TS_API int ts_graph_input(const ts_graph *g, int i); /* a Placeholder's node id */
TS_API int ts_graph_n_outputs(const ts_graph *g);
TS_API ts_port ts_graph_output(const ts_graph *g, int i);

TS_API int ts_node_id(const ts_node *n);
TS_API ts_op ts_node_op(const ts_node *n);
TS_API const char *ts_node_name(const ts_node *n);   /* "dense_1/MatMul" */
/* Its name after the names of the If/While subgraphs it is in, which
 * tells it from a node of its name elsewhere: "While/body/If/else/FloorMod"
 * ("While/body": the While node's name and the subgraph's); its name at
 * the top level.  Owned (free()); NULL if out of memory. */
TS_API char *ts_node_path(const ts_node *n);
TS_API const char *ts_node_scope(const ts_node *n);  /* "dense_1", "" */
TS_API ts_loc ts_node_loc(const ts_node *n);         /* file NULL if none */
TS_API const ts_graph *ts_node_graph(const ts_node *n);
TS_API int ts_node_n_inputs(const ts_node *n);
TS_API ts_port ts_node_input(const ts_node *n, int i);
TS_API int ts_node_n_control_inputs(const ts_node *n);
TS_API int ts_node_control_input(const ts_node *n, int i);
TS_API int ts_node_n_outputs(const ts_node *n);
TS_API ts_dtype ts_node_output_dtype(const ts_node *n, int i);
TS_API ts_shape ts_node_output_shape(const ts_node *n, int i); /* -1: unknown dim */
TS_API int ts_node_n_subgraphs(const ts_node *n);
TS_API const ts_graph *ts_node_subgraph(const ts_node *n, int i);
/* Const / VarHandle value; NULL if none (ts_graph_deserialize leaves out
 * values over 1 MiB and TensorArray values). */
TS_API const ts_tensor *ts_node_value(const ts_node *n);
/* Provenance: the traced nodes n stands for (n itself in a traced graph;
 * after optimization, the nodes a folded constant or a fused node replaced). */
TS_API int ts_node_n_origins(const ts_node *n);
TS_API const ts_node *ts_node_origin(const ts_node *n, int i);
/* False for nodes the engine made itself while tracing (see ts_op_event). */
TS_API bool ts_node_has_eager_twin(const ts_node *n);
TS_API bool ts_node_is_stateful(const ts_node *n);
TS_API int ts_node_n_attrs(const ts_node *n);
TS_API const char *ts_node_attr_name(const ts_node *n, int i);
TS_API char *ts_node_attr_to_string(const ts_node *n, int i); /* owned (free()) */

/* The graph as text: one line per node with op, name, inputs, output
 * dtypes and shapes, attributes and source line; subgraphs indented.
 * And as Graphviz DOT.  Owned strings (free()). */
TS_API char *ts_graph_to_text(const ts_graph *g);
TS_API char *ts_graph_to_dot(const ts_graph *g);

/* A graph in its serialized form (docs/graph-format.md): a versioned GVariant
 * in normal form, the same bytes for the worker protocol and saved sessions.
 * Returns malloc'd bytes (free()), *size set; NULL with an error on failure. */
TS_API void *ts_graph_serialize(const ts_graph *g, size_t *size);
/* Reads bytes from ts_graph_serialize.  The graph is the caller's (ts_graph_free).
 * Anything malformed, truncated, of another version, or inconsistent gives NULL
 * and an error (TS_ERR_FORMAT) saying what was wrong and where
 * ("node 12 (dense/MatMul): input 1 names node 40 of 13") — never a crash. */
TS_API ts_graph *ts_graph_deserialize(const void *data, size_t size);
/* Frees a graph returned by ts_graph_deserialize (NULL is fine). */
TS_API void ts_graph_free(ts_graph *g);

/* ---- tracing: polymorphic and concrete functions ------------------------------
 * A ts_function wraps a C function.  Called in graph mode, it computes a
 * signature from its arguments (dtype and shape of tensors, the value of
 * host arguments); a cache hit runs that concrete function's graph, a miss
 * traces: the C function runs once on symbolic tensors, every op records a
 * node, and the graph becomes a new concrete function.  Host code (printf,
 * C state) runs only while tracing; ops run on every call. */

/* Owned; params "x, y" names the arguments (may be NULL). */
TS_API ts_function *ts_function_new(const char *name, ts_fn fn, const char *params);
TS_API void ts_function_free(ts_function *fn);

/* Calls fn: graph mode unless functions run eagerly (globally or for fn).
 * The result belongs to the current scope; NULL + error on failure.  Called
 * while another function is being traced, fn is traced into that graph
 * under its own name scope.  A function that returns a tuple of more than
 * one tensor is an error here, naming ts_function_call_n (a tuple of one
 * gives its tensor): a caller written for one result would otherwise drop
 * the others without a word. */
TS_API ts_tensor *ts_function_call(ts_function *fn, const ts_value *args, int n_args);
/* Calls fn as ts_function_call does and writes its results to out[0..):
 * the tensors of the tuple it returned, or its one tensor; *tuple (when
 * not NULL) says which (a tuple even of one, Python's `(x,)`).  Returns
 * how many (>= 1), or -1 + error, also when they are more than max_out. */
TS_API int ts_function_call_n(ts_function *fn, const ts_value *args, int n_args,
                              ts_tensor **out, int max_out, bool *tuple);
/* The same, eagerly (ts_function_call_eager). */
TS_API int ts_function_call_eager_n(ts_function *fn, const ts_value *args, int n_args,
                                    ts_tensor **out, int max_out, bool *tuple);

/* tf.config.run_functions_eagerly: every function runs its C code eagerly. */
TS_API void ts_run_functions_eagerly(bool eagerly);
TS_API bool ts_functions_run_eagerly(void);
/* Per function: 1 eagerly, 0 graph, -1 follow the global switch (default). */
TS_API void ts_function_set_run_eagerly(ts_function *fn, int mode);
/* Places fn's calls on device b (its ops run there, as in a
 * TS_DEVICE_SCOPE around each call); NULL: wherever the caller is. */
TS_API void ts_function_set_device(ts_function *fn, const ts_backend *b);

/* Calls must fit these specs (one per argument, all tensors); dims of -1
 * accept any size, a rank of TS_RANK_UNKNOWN any shape (TensorFlow's
 * TensorSpec(shape=None)), so such calls never retrace.  false + error if
 * bad. */
TS_API bool ts_function_set_input_signature(ts_function *fn, const ts_spec *specs, int n);
/* A retrace caused only by changed dimensions traces a generalised
 * concrete function with those dimensions unknown. */
TS_API void ts_function_set_reduce_retracing(ts_function *fn, bool reduce);
/* By default (limit < 0) a function traces every new signature, as
 * tf.function does, and warns when it retraces often.  With a limit, after
 * `limit` traces calls with new signatures run eagerly: a
 * TS_WARNING_RETRACE_LIMIT event (shown in the app's trace log) says so
 * once, naming the function and the last reason. */
TS_API void ts_function_set_retrace_limit(ts_function *fn, int limit);
/* Any trace after the first is an error (for tests). */
TS_API void ts_function_set_fail_on_retrace(ts_function *fn, bool fail);
/* Check mode: every top-level graph-mode call of fn runs both eagerly and
 * as a graph (ts_diverge, default tolerances); the first op whose outputs
 * differ is reported as a TS_WARNING_DIVERGENCE event naming the op and
 * the likely cause.  The call returns the graph's result.  Variables are
 * put back between the two runs, so state advances once per call. */
TS_API void ts_function_set_check_eagerly(ts_function *fn, bool check);
TS_API bool ts_function_checks_eagerly(const ts_function *fn);

TS_API int ts_function_trace_count(const ts_function *fn);
TS_API int ts_function_n_concrete(const ts_function *fn);
TS_API ts_concrete *ts_function_concrete(const ts_function *fn, int i); /* borrowed */
/* Traces (without running) for args, which may hold TS_VALUE_SPEC; reuses a
 * matching concrete function.  Borrowed; NULL + error. */
TS_API ts_concrete *ts_function_get_concrete(ts_function *fn, const ts_value *args, int n_args);
/* Every concrete function's inputs and outputs, as the guides print them.  Owned (free()). */
TS_API char *ts_function_pretty_printed_concrete_signatures(const ts_function *fn);

TS_API ts_function *ts_concrete_function(const ts_concrete *cf);
TS_API const ts_graph *ts_concrete_graph(const ts_concrete *cf);
/* "(x: f32[2], n: 3)".  Borrowed. */
TS_API const char *ts_concrete_signature(const ts_concrete *cf);
/* Runs the graph; args must match its signature exactly ("expected int32
 * tensor for arg 0 (a), got float32").  Result in the current scope. */
TS_API ts_tensor *ts_concrete_call(ts_concrete *cf, const ts_value *args, int n_args);
/* Its results, as ts_function_call_n gives them. */
TS_API int ts_concrete_call_n(ts_concrete *cf, const ts_value *args, int n_args,
                              ts_tensor **out, int max_out, bool *tuple);
/* The tensors cf returns (its graph's outputs), and whether as a tuple
 * (ts_tuple, even of one) rather than one tensor. */
TS_API int ts_concrete_n_results(const ts_concrete *cf);
TS_API bool ts_concrete_returns_tuple(const ts_concrete *cf);
/* "my_function(x)\n  Args:\n    x: float32 Tensor, shape=()\n  Returns: ..."; a tuple's
 * returns as TensorFlow prints them: "(<1>, <2>)" then "<1>: int32 Tensor,
 * shape=()" per tensor.  Owned (free()). */
TS_API char *ts_concrete_pretty_signature(const ts_concrete *cf);

/* The graph the concrete function runs: ts_concrete_graph after the
 * optimizer's passes (docs/passes.md); its nodes stand for traced nodes
 * (ts_node_origin).  Borrowed. */
TS_API const ts_graph *ts_concrete_optimized_graph(const ts_concrete *cf);
/* What each pass did to it, one line per pass run ("cse: removed 12
 * nodes\n"); "" when no pass ran.  Borrowed. */
TS_API const char *ts_concrete_pass_summary(const ts_concrete *cf);

/* The memory plan of a concrete function's graph (exec/planner.c): the
 * values it makes and reads within a call share one arena, placed by
 * liveness; graph outputs and views of inputs, variables and constants
 * stay outside it. */
typedef struct ts_memory_plan {
  int n_buffers;           /* values placed in the arena */
  int n_inplace;           /* of them, written over an input that dies at their op */
  int64_t peak_bytes;      /* the arena's size */
  int64_t unshared_bytes;  /* what the same buffers take without reuse */
  int n_plans;             /* plans made so far: unknown dims re-plan when sizes change */
} ts_memory_plan;
/* cf's plan into *plan (top-level graph; subgraphs plan their own).  false
 * while none is made yet: a graph with unknown dims plans at its first
 * call's sizes. */
TS_API bool ts_concrete_memory_plan(const ts_concrete *cf, ts_memory_plan *plan);
/* "plan: 12 buffers (3 in place), peak 1.2 MB, 3.4 MB saved by reuse".  Owned (free()). */
TS_API char *ts_memory_plan_describe(const ts_memory_plan *plan);
/* How a call of cf runs its graph's ops (top level): one after another,
 * but for groups of independent heavy ops that run at once on the
 * engine's threads (inter-op parallelism), and runs of ops that treat the
 * rows of a batch independently, split by rows across the threads (data
 * parallelism); docs/engine.md.  Listeners, the profiler and health mode
 * change none of it; both run one op at a time while an op handler, a
 * debug session or the divergence finder is on the calling thread, or
 * with one thread. */
typedef struct ts_schedule {
  int n_ops;        /* ops a call runs */
  int n_groups;     /* groups of ops run at once */
  int n_grouped;    /* ops in those groups */
  int n_row_runs;   /* runs of ops split by rows */
  int n_row_ops;    /* ops in those runs */
  int64_t n_shared; /* grouped ops and parts of row runs run so far on another
                       thread than their call's */
  int64_t n_captures; /* device plans captured by its calls on a device so far
                         (one per run of steps between If and While nodes;
                         their subgraphs' own not counted) */
  int64_t n_replays;  /* calls on a device that launched the plan captured
                         before as it was, without running the ops, so far */
} ts_schedule;
/* false + error on a bad argument. */
TS_API bool ts_concrete_schedule(const ts_concrete *cf, ts_schedule *schedule);
/* "schedule: 9 ops; at once: a/MatMul, b/MatMul; by rows of 20: 101 ops
 * (flatten/Flatten .. dense_99/MatMul)".  Owned (free()). */
TS_API char *ts_concrete_schedule_describe(const ts_concrete *cf);
/* A debugging switch for tests: overwrite every arena buffer with NaN
 * bytes (0xff) when its value dies, so a read after its last use shows. */
TS_API void ts_memory_plan_set_poison(bool poison);

/* ---- optimizer passes (docs/passes.md) ----
 * Passes: layout (transposes moved past elementwise ops to cancel), fold
 * (constant folding), cse (common subexpressions), simplify (arithmetic),
 * dce (dead code), fuse (elementwise chains; MatMul + bias + activation).  A list is "all", "none" or names joined by commas
 * ("fold,cse,dce"); the passes always run in the order above. */

/* Chooses the passes for concrete functions traced from now on (those
 * made before keep theirs).  Until called, TRACESCOPE_PASSES says, else
 * all.  false + error naming what is not a pass. */
TS_API bool ts_set_passes(const char *list);
/* The passes chosen now, as a list ("layout,fold,cse,simplify,dce,fuse", "none").
 * Owned (free()). */
TS_API char *ts_get_passes(void);
/* Runs passes (a list as above; NULL: the ones chosen now) on a copy of g
 * and returns it (the caller's: ts_graph_free); its nodes' origins are
 * g's nodes, so g must outlive it.  *summary, when summary is not NULL,
 * gets one line per pass (free()).  NULL + error. */
TS_API ts_graph *ts_graph_optimize(const ts_graph *g, const char *passes, char **summary);

/* True while the calling thread traces a function. */
TS_API bool ts_tracing(void);

/* tf.init_scope: ops between begin and end run eagerly even while tracing
 * (to make a model's weights once, on the first trace).  Nest like scopes. */
TS_API void ts_init_scope_begin(void);
TS_API void ts_init_scope_end(void);
#define TS_INIT_SCOPE                                                                      \
  TS__SHADOW_OK_BEGIN                                                                      \
  for (int ts__is_once = (ts_init_scope_begin(), 1); ts__is_once; ts__is_once = 0, ts_init_scope_end()) \
  TS__SHADOW_OK_END

/* Name scopes group nodes ("dense_1/MatMul"); eagerly they do nothing. */
TS_API void ts_name_scope_begin(const char *name);
TS_API void ts_name_scope_end(void);
#define TS_NAME_SCOPE(name)                                                                \
  TS__SHADOW_OK_BEGIN                                                                      \
  for (int ts__ns_once = (ts_name_scope_begin(name), 1); ts__ns_once; ts__ns_once = 0, ts_name_scope_end()) \
  TS__SHADOW_OK_END

/* Calls C function fn as a nested function: eagerly a plain call, while
 * tracing its ops land under the name scope fn (outer_function calling
 * inner_function in the guides).  It gives one tensor, as ts_function_call
 * does (a ts_function's ts_function_call_n reads a tuple). */
TS_API ts_tensor *ts_invoke_at(ts_loc loc, const char *name, ts_fn fn, const ts_value *args,
                               int n_args);
#define TS_INVOKE(fn, ...)                                                                 \
  ts_invoke_at(TS_HERE, #fn, (fn), (const ts_value[]){ TS__INVOKE_ARGS(__VA_ARGS__) },     \
               TS__NARGS(__VA_ARGS__))
#define TS__INVOKE_ARG(t) TS_TENSOR_VALUE(t)
#define TS__INVOKE_ARGS(...) TS__MAP(TS__INVOKE_ARG, __VA_ARGS__)
#define TS__MAP(f, ...) TS__MAP_N(TS__NARGS(__VA_ARGS__), f, __VA_ARGS__)
#define TS__MAP_N(n, f, ...) TS__MAP_N_(n, f, __VA_ARGS__)
#define TS__MAP_N_(n, f, ...) TS__MAP_##n(f, __VA_ARGS__)
#define TS__MAP_1(f, a) f(a)
#define TS__MAP_2(f, a, ...) f(a), TS__MAP_1(f, __VA_ARGS__)
#define TS__MAP_3(f, a, ...) f(a), TS__MAP_2(f, __VA_ARGS__)
#define TS__MAP_4(f, a, ...) f(a), TS__MAP_3(f, __VA_ARGS__)
#define TS__MAP_5(f, a, ...) f(a), TS__MAP_4(f, __VA_ARGS__)
#define TS__MAP_6(f, a, ...) f(a), TS__MAP_5(f, __VA_ARGS__)
#define TS__MAP_7(f, a, ...) f(a), TS__MAP_6(f, __VA_ARGS__)
#define TS__MAP_8(f, a, ...) f(a), TS__MAP_7(f, __VA_ARGS__)

/* ---- state and side effects --------------------------------------------------- */

/* A variable: a tensor whose value changes through assign ops.  It lives
 * outside every scope: the caller owns it (ts_tensor_unref).  Functions
 * capture it by reference. */
TS_API ts_tensor *ts_variable_new(ts_tensor *initial, const char *name);
TS_API ts_tensor *ts_read_at(ts_loc loc, ts_tensor *var);
/* Assignments return the variable's new value. */
TS_API ts_tensor *ts_assign_at(ts_loc loc, ts_tensor *var, ts_tensor *value);
TS_API ts_tensor *ts_assign_add_at(ts_loc loc, ts_tensor *var, ts_tensor *value);
TS_API ts_tensor *ts_assign_sub_at(ts_loc loc, ts_tensor *var, ts_tensor *value);
#define ts_read(var) ts_read_at(TS_HERE, (var))
#define ts_assign(var, value) ts_assign_at(TS_HERE, (var), (value))
#define ts_assign_add(var, value) ts_assign_add_at(TS_HERE, (var), (value))
#define ts_assign_sub(var, value) ts_assign_sub_at(TS_HERE, (var), (value))
/* tf.raw_ops.ResourceApplyAdam: Adam's update of var and its slots m and v
 * (three variables) from grad, in one pass (ops/apply.c gives the formula);
 * the rest are scalars of var's dtype.  false + error. */
TS_API bool ts_apply_adam_at(ts_loc loc, ts_tensor *var, ts_tensor *m, ts_tensor *v,
                             ts_tensor *beta1_power, ts_tensor *beta2_power, ts_tensor *lr,
                             ts_tensor *beta1, ts_tensor *beta2, ts_tensor *epsilon,
                             ts_tensor *grad);
#define ts_apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad)    \
  ts_apply_adam_at(TS_HERE, (var), (m), (v), (beta1_power), (beta2_power), (lr), (beta1),     \
                   (beta2), (epsilon), (grad))

/* tf.print: a graph op that prints on every call, in program order.  Items
 * are strings or tensors (formatted as tf.print does: [1 2 3]), joined by
 * spaces: ts_print(x, "Executing") prints "[1] Executing".  Output goes to
 * stdout and to TS_EVENT_PRINT listeners.  While tracing it records a
 * Print node.  false + error on failure.  At most 8 items. */
TS_API bool ts_print_at(ts_loc loc, const ts_value *items, int n_items);
TS_API ts_value ts__print_string(const char *s);
TS_API ts_value ts__print_tensor(ts_tensor *t);
#define TS__PRINT_ITEM(x)                                                             \
  _Generic((x), char *: ts__print_string, const char *: ts__print_string,             \
           default: ts__print_tensor)(x)
#define ts_print(...)                                                                 \
  ts_print_at(TS_HERE, (const ts_value[]){ TS__MAP(TS__PRINT_ITEM, __VA_ARGS__) },    \
              TS__NARGS(__VA_ARGS__))
/* Python's print() of eager tensors, as the guides print a traced
 * function's results: tensors as str() shows them (ts_tensor_str):
 * ts_print_python("Final step", step) prints "Final step tf.Tensor(200,
 * shape=(), dtype=int32)".  A Print op like ts_print's (so it prints at
 * run time, the same eagerly and in a graph). */
TS_API bool ts_print_python_at(ts_loc loc, const ts_value *items, int n_items);
#define ts_print_python(...)                                                          \
  ts_print_python_at(TS_HERE, (const ts_value[]){ TS__MAP(TS__PRINT_ITEM, __VA_ARGS__) }, \
                     TS__NARGS(__VA_ARGS__))

/* tf.debugging.Assert: when condition (a bool scalar) is false, fails
 * with TS_ERR_INVALID_ARGUMENT "assertion failed: [d0] [d1] ...", each
 * data item a string or a tensor's first `summarize` elements (-1: all;
 * as TensorFlow's AssertOp shows them: "[x is negative] [1 2 3...]").
 * Eagerly the call fails at once.  While tracing it records an Assert
 * node, which runs in program order and is kept though nothing reads it
 * (tf.function's automatic control dependencies keep it too); when it
 * fails, the graph's call fails, naming the node.  ts_assert takes at
 * most 8 items, summarizing 3 elements (TensorFlow's default).  false +
 * error. */
TS_API bool ts_assert_at(ts_loc loc, ts_tensor *condition, const ts_value *data, int n_data,
                         int summarize);
#define ts_assert(condition, ...)                                                       \
  ts_assert_at(TS_HERE, (condition), (const ts_value[]){ TS__MAP(TS__PRINT_ITEM, __VA_ARGS__) }, \
               TS__NARGS(__VA_ARGS__), 3)
/* tf.debugging.assert_equal, assert_less, assert_greater: an Assert that
 * x == y (x < y, x > y) holds element-wise (broadcast), with the data
 * TensorFlow's graph mode gives it: message (NULL: none), "Condition x ==
 * y did not hold element-wise:", "x = ", x, "y = ", y. */
TS_API bool ts_assert_equal_at(ts_loc loc, ts_tensor *x, ts_tensor *y, const char *message);
TS_API bool ts_assert_less_at(ts_loc loc, ts_tensor *x, ts_tensor *y, const char *message);
TS_API bool ts_assert_greater_at(ts_loc loc, ts_tensor *x, ts_tensor *y, const char *message);
#define ts_assert_equal(x, y, message) ts_assert_equal_at(TS_HERE, (x), (y), (message))
#define ts_assert_less(x, y, message) ts_assert_less_at(TS_HERE, (x), (y), (message))
#define ts_assert_greater(x, y, message) ts_assert_greater_at(TS_HERE, (x), (y), (message))

/* Passes x through (a graph node named for what it is). */
TS_API ts_tensor *ts_identity_at(ts_loc loc, ts_tensor *x);
/* The shape of x as an i32 vector (works with unknown dims while tracing). */
TS_API ts_tensor *ts_shape_at(ts_loc loc, ts_tensor *x);
#define ts_identity(x) ts_identity_at(TS_HERE, (x))
#define ts_shape(x) ts_shape_at(TS_HERE, (x))
/* Host strings as a scalar string tensor. */
TS_API ts_tensor *ts_scalar_string(const char *s);

/* ---- gradients: tf.GradientTape ----------------------------------------------
 *
 *   ts_tape *tape = ts_tape_new(false);
 *   ts_tape_watch(tape, x);                  // variables read are watched by themselves
 *   ts_tensor *loss = ts_reduce_sum(ts_mul(x, w), TS_ALL_AXES, false);
 *   ts_tensor *g[2];
 *   ts_tape_gradient(tape, loss, ((ts_tensor *[]){ x, w }), 2, g, TS_UNCONNECTED_NONE);
 *   ts_tape_free(tape);
 *
 * From ts_tape_new until ts_tape_stop (or ts_tape_free) the tape records,
 * on the calling thread, every op that takes a watched tensor or one made
 * by a recorded op: it holds references to their inputs and outputs (the
 * forward values the gradient needs).  A variable an op reads (ts_read,
 * or given to an op directly) is watched when it is read.  Integer and
 * bool results carry no gradient, nor do ops that are not differentiable
 * (comparisons, ArgMax) or ts_stop_gradient.
 *
 * ts_tape_gradient walks the record backwards from target through each
 * op row's gradient (ts_op_gradient_kind), summing where a value is used
 * twice and undoing broadcasting, and writes d(sum of target)/d(source i)
 * to grads[i], of the source's dtype and shape, in the current scope.
 * Eagerly it runs the gradient's ops; while tracing (the tape made inside
 * the traced function) it records them as graph nodes under a
 * "gradients" name scope, each saying which forward node it is the
 * gradient of (ts_node_gradient_of).  A source nothing connects to target
 * gets NULL or zeros as `unconnected` says (tf.UnconnectedGradients).  A
 * tape that is not persistent gives one gradient; a second call is an
 * error.  Tapes nest: a tape records the ops of the gradients other tapes
 * take (gradients of gradients).  Ops on the path with no gradient yet are an error naming them.
 * Graph-mode calls of other functions made while an eager tape records
 * are not seen by it (call them eagerly, or trace the whole step). */
typedef struct ts_tape ts_tape;
typedef enum ts_unconnected { TS_UNCONNECTED_NONE, TS_UNCONNECTED_ZERO } ts_unconnected;

/* A new tape, recording on the calling thread (innermost of the tapes).
 * Owned: ts_tape_free. */
TS_API ts_tape *ts_tape_new(bool persistent);
/* Watches t (a tensor or a variable): ops on it are recorded. */
TS_API bool ts_tape_watch(ts_tape *tape, ts_tensor *t);
/* Whether reading a variable watches it (default true: as TensorFlow's
 * watch_accessed_variables). */
TS_API void ts_tape_set_watch_variables(ts_tape *tape, bool watch);
/* Stops recording (the tape must be the innermost op handler: stop tapes
 * in the reverse order of their making).  The record stays for gradients. */
TS_API bool ts_tape_stop(ts_tape *tape);
TS_API bool ts_tape_gradient_at(ts_loc loc, ts_tape *tape, ts_tensor *target,
                                ts_tensor *const *sources, int n, ts_tensor **grads,
                                ts_unconnected unconnected);
#define ts_tape_gradient(tape, target, sources, n, grads, unconnected) \
  ts_tape_gradient_at(TS_HERE, (tape), (target), (sources), (n), (grads), (unconnected))
/* Stops it if it records (wherever it is among the op handlers), and
 * releases what it holds. */
TS_API void ts_tape_free(ts_tape *tape);
/* x, with no gradient flowing back through it (tf.stop_gradient): an
 * Identity no tape records. */
TS_API ts_tensor *ts_stop_gradient_at(ts_loc loc, ts_tensor *x);
#define ts_stop_gradient(x) ts_stop_gradient_at(TS_HERE, (x))

/* Whether an op row has a gradient. */
typedef enum ts_op_gradient {
  TS_OP_GRADIENT_MISSING,            /* differentiable, but none written yet */
  TS_OP_GRADIENT_DEFINED,
  TS_OP_GRADIENT_NOT_DIFFERENTIABLE, /* compares, ArgMax, integer ops, state, creation */
} ts_op_gradient;
TS_API ts_op_gradient ts_op_gradient_kind(ts_op op);
/* The forward node a gradient node was recorded for ("gradients/MatMul"
 * -> "dense_3/MatMul"); NULL for the rest. */
TS_API const ts_node *ts_node_gradient_of(const ts_node *n);

/* ---- control flow: AutoGraph for C ------------------------------------------
 *
 *   TS_IF (ts_greater(x, zero), &x) {   // tensor condition
 *     x = ts_mul(x, x);
 *   } TS_ELSE {
 *     x = ts_zeros_like(x);
 *   } TS_END_IF;
 *
 *   TS_WHILE (ts_less(i, n), &i, &acc) { acc = ts_add(acc, i); i = ts_add(i, one); }
 *   TS_FOR (x, TS_OVER(items), &total) { total = ts_add(total, x); }
 *   TS_FOR (i, TS_RANGE(start, limit, delta), &acc) { ... }
 *
 * The variables listed (&x ...) are what the blocks change.  Eagerly, or on
 * a concrete condition, the blocks are plain C control flow.  While tracing
 * with a symbolic condition, both branches (or the loop body, once) are
 * traced into subgraphs of an If or While node, and the variables become
 * its outputs.  A branch that leaves a variable NULL, branches giving a
 * variable different dtypes, or a loop changing a variable's dtype or shape
 * are errors at trace time.
 *
 * Jumps: TS_BREAK; and TS_CONTINUE; act on the innermost TS_WHILE/TS_FOR,
 * TS_RETURN(value); on the C function, from any depth of blocks.  Eagerly
 * they are plain control flow; while tracing a loop gets a "broke" (and
 * "returned", "retval") variable folded into its condition, TS_IF blocks
 * output the flags, and the code after a block a jump may have left, to the
 * end of the enclosing branch, body or function, runs under an If on "no
 * jump" (or, where the jump is certain, as dead code whose ops are dropped
 * and whose listed variables are put back; host C code in it still runs).
 * They end the innermost block with C `continue`: not from inside a plain
 * C loop or switch within the block.  Plain C `break`/`continue` out of a
 * TS_IF, and `break`/`return` out of a traced block, are errors naming the
 * macro to use.  See docs/tf-function.md.
 *
 * Memory: eagerly, as in a graph, only the listed variables (and TS_FOR's
 * loop variable) outlive an iteration.  Each eager iteration, its condition
 * included, runs in a scope of its own; everything else made in it is
 * released when the next iteration starts, so a loop runs in the memory of
 * one iteration.  A tensor made in the body and kept in a variable that is
 * not listed must not be used by a later iteration: an op given one fails
 * (eagerly and traced alike, naming the loop). */

typedef struct ts_iterable {
  ts_tensor *tensor;               /* iterate over dim 0 */
  ts_tensor *start, *limit, *delta; /* or a range of scalars */
} ts_iterable;
#define TS_OVER(t) ((ts_iterable){ .tensor = (t) })
#define TS_RANGE(start, limit, delta) ((ts_iterable){ NULL, (start), (limit), (delta) })

/* The state of one TS_IF/TS_WHILE/TS_FOR statement (on the caller's stack). */
typedef struct ts_cf_block {
  ts_loc loc;
  int kind;
  int phase;
  int branch;        /* TS_IF: 0 then, 1 else, -1 none (done) */
  bool completed;    /* the running block reached its end */
  bool iter_scope;   /* eager loops: state is the iteration's scope, not the tracer's */
  bool jumped;       /* a TS_BREAK/TS_CONTINUE/TS_RETURN left the running branch or body */
  bool guard;        /* the engine's own If around code after a jump (no op path entry) */
  ts_tensor **const *vars;
  int n_vars;
  int path_depth;    /* the op path's depth at the statement (op identity) */
  const char *names; /* "&x, &y" as written */
  ts_tensor **loop_var;
  ts_iterable over;
  int64_t index;
  void *state;       /* the tracer's, while tracing */
  struct ts_cf_block *up; /* the statement this one is written in, NULL at a function's top */
  ts_tensor *broke;       /* loops: set by TS_BREAK (NULL: false) */
  ts_tensor *continued;   /* loops: set by TS_CONTINUE, for the running body */
} ts_cf_block;

/* Stands for "no enclosing statement": TS_IF at a function's top level
 * takes its address as its parent; never written. */
TS_API extern ts_cf_block ts__cf;

#define TS__VAR_ARRAY(...) (ts_tensor **const[]){ NULL, __VA_ARGS__ }
#define TS__VAR_COUNT(...) \
  ((int)(sizeof(TS__VAR_ARRAY(__VA_ARGS__)) / sizeof(ts_tensor **)) - 1)

#define TS_IF(cond, ...)                                                                      \
  {                                                                                           \
    TS__SHADOW_OK_BEGIN                                                                       \
    ts_cf_block *ts__up = &ts__cf,                                                            \
                ts__cf = ts__if_begin(TS_HERE, (cond), ts__up, TS__VAR_ARRAY(__VA_ARGS__) + 1, \
                                      TS__VAR_COUNT(__VA_ARGS__), #__VA_ARGS__);              \
    TS__SHADOW_OK_END                                                                         \
    while (ts__if_next(&ts__cf)) {                                                            \
      if (ts__cf.branch == 0)
#define TS_ELSE                                                                               \
      ts__cf_mark(&ts__cf, 0);                                                                \
      if (ts__cf.branch == 1)
#define TS_END_IF                                                                             \
      ts__cf_mark(&ts__cf, 1);                                                                \
    }                                                                                         \
    ts__if_end(&ts__cf);                                                                      \
  }

#define TS_WHILE(cond, ...)                                                                   \
  TS__SHADOW_OK_BEGIN                                                                         \
  for (ts_cf_block *ts__up = &ts__cf,                                                         \
                   ts__cf = ts__while_begin(TS_HERE, ts__up, TS__VAR_ARRAY(__VA_ARGS__) + 1,  \
                                            TS__VAR_COUNT(__VA_ARGS__), #__VA_ARGS__);        \
       ts__while_test(&ts__cf, ts__while_wants_cond(&ts__cf) ? (cond) : NULL);                \
       ts__while_step(&ts__cf))                                                               \
  TS__SHADOW_OK_END

#define TS_FOR(var, iterable, ...)                                                            \
  TS__SHADOW_OK_BEGIN                                                                         \
  for (ts_cf_block *ts__up = &ts__cf,                                                         \
                   ts__cf = ts__for_begin(TS_HERE, ts__up, &(var), (iterable),                \
                                          TS__VAR_ARRAY(__VA_ARGS__) + 1,                     \
                                          TS__VAR_COUNT(__VA_ARGS__), #__VA_ARGS__);          \
       ts__for_next(&ts__cf); ts__for_step(&ts__cf))                                          \
  TS__SHADOW_OK_END

/* What the macros call; not for direct use. */
TS_API ts_cf_block ts__if_begin(ts_loc loc, ts_tensor *cond, ts_cf_block *up,
                                ts_tensor **const *vars, int n_vars, const char *names);
TS_API bool ts__if_next(ts_cf_block *b);
TS_API void ts__cf_mark(ts_cf_block *b, int at);
TS_API void ts__if_end(ts_cf_block *b);
TS_API ts_cf_block ts__while_begin(ts_loc loc, ts_cf_block *up, ts_tensor **const *vars,
                                   int n_vars, const char *names);
TS_API bool ts__while_wants_cond(ts_cf_block *b);
TS_API bool ts__while_test(ts_cf_block *b, ts_tensor *cond);
TS_API void ts__while_step(ts_cf_block *b);
TS_API ts_cf_block ts__for_begin(ts_loc loc, ts_cf_block *up, ts_tensor **var,
                                 ts_iterable over, ts_tensor **const *vars, int n_vars,
                                 const char *names);
TS_API bool ts__for_next(ts_cf_block *b);
TS_API void ts__for_step(ts_cf_block *b);
enum { TS__JUMP_BREAK, TS__JUMP_CONTINUE, TS__JUMP_RETURN };
/* True when TS_RETURN may return value from the C function at once (no
 * trace is running); otherwise the macro ends the innermost block's branch
 * or body with `continue` and the runtime carries the jump out. */
TS_API bool ts__jump(ts_loc loc, ts_cf_block *b, int how, ts_tensor *value);

#define TS_BREAK                                                                              \
  { ts__jump(TS_HERE, &ts__cf, TS__JUMP_BREAK, NULL); continue; }
#define TS_CONTINUE                                                                           \
  { ts__jump(TS_HERE, &ts__cf, TS__JUMP_CONTINUE, NULL); continue; }
#define TS_RETURN(value)                                                                      \
  {                                                                                           \
    ts_tensor *ts__rv = (value);                                                              \
    if (ts__jump(TS_HERE, &ts__cf, TS__JUMP_RETURN, ts__rv))                                  \
      return ts__rv;                                                                          \
    continue;                                                                                 \
  }

/* The functional forms (tf.cond, tf.while_loop): vars[0..n-1] in and out. */
typedef void (*ts_branch_fn)(ts_tensor **vars, int n, void *user_data);
typedef ts_tensor *(*ts_loop_cond_fn)(ts_tensor *const *vars, int n, void *user_data);
TS_API bool ts_cond_at(ts_loc loc, ts_tensor *pred, ts_branch_fn then_fn, ts_branch_fn else_fn,
                       ts_tensor **vars, int n, void *user_data);
TS_API bool ts_while_loop_at(ts_loc loc, ts_loop_cond_fn cond, ts_branch_fn body,
                             ts_tensor **vars, int n, void *user_data);
#define ts_cond(pred, then_fn, else_fn, vars, n, user_data) \
  ts_cond_at(TS_HERE, (pred), (then_fn), (else_fn), (vars), (n), (user_data))
#define ts_while_loop(cond, body, vars, n, user_data) \
  ts_while_loop_at(TS_HERE, (cond), (body), (vars), (n), (user_data))

/* TensorArray: a list of tensors of one dtype that loops fill (functional:
 * write returns the new array).  Writes past the size grow it. */
TS_API ts_tensor *ts_tensor_array_at(ts_loc loc, ts_dtype dtype, ts_tensor *size);
TS_API ts_tensor *ts_tensor_array_write_at(ts_loc loc, ts_tensor *ta, ts_tensor *index,
                                           ts_tensor *value);
TS_API ts_tensor *ts_tensor_array_read_at(ts_loc loc, ts_tensor *ta, ts_tensor *index);
TS_API ts_tensor *ts_tensor_array_stack_at(ts_loc loc, ts_tensor *ta);
#define ts_tensor_array(dtype, size) ts_tensor_array_at(TS_HERE, (dtype), (size))
#define ts_tensor_array_write(ta, index, value) \
  ts_tensor_array_write_at(TS_HERE, (ta), (index), (value))
#define ts_tensor_array_read(ta, index) ts_tensor_array_read_at(TS_HERE, (ta), (index))
#define ts_tensor_array_stack(ta) ts_tensor_array_stack_at(TS_HERE, (ta))

/* TensorLists as sequences (ONNX's Sequence ops): an index counts from the
 * end when negative (-1 the last element).  Length is an int64 scalar;
 * insert puts value before element `index` (the length appends); erase
 * removes one; concat joins the elements along axis (their other dims
 * equal; an empty list gives the element shape the trace knows, axis 0). */
TS_API ts_tensor *ts_tensor_list_length_at(ts_loc loc, ts_tensor *ta);
TS_API ts_tensor *ts_tensor_list_insert_at(ts_loc loc, ts_tensor *ta, ts_tensor *index,
                                           ts_tensor *value);
TS_API ts_tensor *ts_tensor_list_erase_at(ts_loc loc, ts_tensor *ta, ts_tensor *index);
TS_API ts_tensor *ts_tensor_list_concat_at(ts_loc loc, ts_tensor *ta, int axis);
#define ts_tensor_list_length(ta) ts_tensor_list_length_at(TS_HERE, (ta))
#define ts_tensor_list_insert(ta, index, value) \
  ts_tensor_list_insert_at(TS_HERE, (ta), (index), (value))
#define ts_tensor_list_erase(ta, index) ts_tensor_list_erase_at(TS_HERE, (ta), (index))
#define ts_tensor_list_concat(ta, axis) ts_tensor_list_concat_at(TS_HERE, (ta), (axis))

/* A list value's elements (a TensorArray, an ONNX sequence): their count,
 * -1 when t holds no list (a tensor, an optional, a symbolic value). */
TS_API int64_t ts_tensor_list_size(const ts_tensor *t);
/* Element i of a list value, borrowed (the list owns it); NULL where never
 * written or out of range. */
TS_API ts_tensor *ts_tensor_list_item(const ts_tensor *t, int64_t i);

/* Optionals (tf.experimental.Optional, ONNX's optional type): a variant
 * scalar holding a tensor (a list among them) or nothing.  get_value
 * fails on an optional that holds nothing. */
TS_API ts_tensor *ts_optional_from_value_at(ts_loc loc, ts_tensor *value);
TS_API ts_tensor *ts_optional_none_at(ts_loc loc);
TS_API ts_tensor *ts_optional_has_value_at(ts_loc loc, ts_tensor *opt);
TS_API ts_tensor *ts_optional_get_value_at(ts_loc loc, ts_tensor *opt);
#define ts_optional_from_value(value) ts_optional_from_value_at(TS_HERE, (value))
#define ts_optional_none() ts_optional_none_at(TS_HERE)
#define ts_optional_has_value(opt) ts_optional_has_value_at(TS_HERE, (opt))
#define ts_optional_get_value(opt) ts_optional_get_value_at(TS_HERE, (opt))
/* Strings (ops/strings.c): numbers as NumPy's str() writes them (floats the
 * shortest text that reads back the same), text read as numbers of
 * out_type (an element that is none fails), UTF-8 text in lower or upper case. */
TS_API ts_tensor *ts_as_string_at(ts_loc loc, ts_tensor *x);
TS_API ts_tensor *ts_string_to_number_at(ts_loc loc, ts_tensor *x, ts_dtype out_type);
TS_API ts_tensor *ts_string_lower_at(ts_loc loc, ts_tensor *x);
TS_API ts_tensor *ts_string_upper_at(ts_loc loc, ts_tensor *x);
#define ts_as_string(x) ts_as_string_at(TS_HERE, (x))
#define ts_string_to_number(x, out_type) ts_string_to_number_at(TS_HERE, (x), (out_type))
#define ts_string_lower(x) ts_string_lower_at(TS_HERE, (x))
#define ts_string_upper(x) ts_string_upper_at(TS_HERE, (x))

/* An optional value: 1 and *value its content (borrowed), 0 when it holds
 * nothing, -1 when t is no optional value. */
TS_API int ts_optional_value(const ts_tensor *t, ts_tensor **value);

/* ---- the divergence finder (engine/trace/diverge.c) --------------------------
 * Runs a function eagerly and as a graph on the same inputs, matches every
 * eager op to the graph node it became (op identity, see ts_op_event; the
 * k-th eager run of an op inside a loop body with the k-th run of its
 * node), compares their outputs and reports the first op, in the eager
 * program order, whose outputs differ.  Differences the two modes are
 * allowed to have are listed as expected.  docs/divergence.md. */

typedef struct ts_diverge_options {
  double atol, rtol;   /* equal when |eager - graph| <= atol + rtol * |eager| */
  bool nan_differs;    /* NaN against NaN is a difference (default: equal) */
} ts_diverge_options;
#define TS_DIVERGE_OPTIONS_DEFAULT ((ts_diverge_options){ .atol = 1e-6, .rtol = 1e-5 })

typedef enum ts_diverge_kind {
  TS_DIVERGE_NONE,         /* equal (or not compared: see expected) */
  TS_DIVERGE_VALUE,        /* values differ beyond the tolerance */
  TS_DIVERGE_SHAPE,        /* shapes differ */
  TS_DIVERGE_DTYPE,        /* dtypes differ */
  TS_DIVERGE_NOT_RUN,      /* ran eagerly, but its node did not run (this often) in the graph */
  TS_DIVERGE_KIND_COUNT
} ts_diverge_kind;

/* Why an op was not compared, or why its difference is expected. */
typedef enum ts_diverge_expected {
  TS_EXPECTED_NONE,
  TS_EXPECTED_PRINT,       /* Print: its output is the text it prints */
  TS_EXPECTED_FOLDED,      /* the optimizer folded its node into a constant */
  TS_EXPECTED_PRUNED,      /* its node is not in the optimized graph */
  TS_EXPECTED_NO_TWIN,     /* ran eagerly with no node (TS_INIT_SCOPE, engine's own) */
  TS_EXPECTED_STATE_ORDER, /* reads a variable an assign changed: read at another point */
  TS_EXPECTED_FOLLOWS,     /* its inputs carry an expected difference */
  TS_EXPECTED_FUSED,       /* a pass fused it into a node of other ops: its value exists only eagerly */
  TS_EXPECTED_SIMPLIFIED,  /* the simplify pass replaced it by its input (x + 0 -> x) */
  TS_EXPECTED_KIND_COUNT
} ts_diverge_expected;

/* One eager op, as compared with its graph twin. */
typedef struct ts_diverge_op {
  uint64_t seq;              /* its sequence number in the eager run (program order) */
  ts_op op;
  const char *op_name;       /* "Add" */
  char *node;                /* the traced node's name ("while/body/add_1"), or NULL */
  char *graph_node;          /* when passes rewrote its node: the optimized graph's node it was
                              * compared with (or fused into), "FusedElementwise 'Add' standing
                              * for Mul, Add"; NULL for a plain copy */
  ts_loc loc;                /* the op's source location (strings the module's) */
  int occurrence;            /* 0: first run of its node; k: its (k+1)-th, a loop's iteration */
  int loop_depth;            /* While/If bodies it sits in (0: top level) */
  ts_diverge_kind kind;
  ts_diverge_expected expected;
  char *note;                /* expected: why, in words; else NULL */
  int output;                /* the output that differs */
  ts_tensor *eager, *graph;  /* the values (references the report owns); NULL if none */
  double max_abs, max_rel;   /* over all elements */
  int64_t worst;             /* flat index of the element with the largest |eager-graph| */
  ts_shape worst_index;      /* the same as an index ([2] / [0, 3]) */
  double eager_value, graph_value; /* at worst */
} ts_diverge_op;

typedef struct ts_diverge_report {
  char *function;            /* "f" */
  char *signature;           /* "(x: f32[3])" */
  ts_diverge_options options;
  bool diverged;             /* an unexpected difference (first) or the results differ */
  ts_diverge_op *first;      /* the first diverging op; NULL if none */
  char *cause;               /* the likely cause of first, in words; NULL if none known */
  ts_diverge_op result;      /* the final results (op TS_OP_IDENTITY, node NULL); for a
                              * tuple the first of its tensors that differs (else the
                              * first), `output` its index */
  int n_eager, n_graph;      /* ops each run ran */
  int n_matched;             /* eager ops whose node ran in the graph */
  int n_compared;            /* ... whose outputs were compared */
  int n_differ;              /* ... that differ (the first and those after it) */
  int n_expected;            /* expected differences (the list below) */
  ts_diverge_op *expected;
  int n_graph_only;          /* graph ops with no eager twin (placeholders, If/While, ...) */
  int n_results;             /* the tensors the function returned (a tuple's) */
} ts_diverge_report;

/* Runs fn on args both ways (eagerly first) and compares; opt NULL for
 * the defaults.  The variables fn's graph uses are put back before the
 * graph run (both see the same state; afterwards they hold what the graph
 * run left).  *out is the caller's (ts_diverge_report_free).  false +
 * error when a run fails (the report then says nothing). */
TS_API bool ts_diverge(ts_function *fn, const ts_value *args, int n_args,
                       const ts_diverge_options *opt, ts_diverge_report **out);
TS_API void ts_diverge_report_free(ts_diverge_report *report);
/* The report as text:
 *   first divergence: op #12 Add 'add_1' at model.c:34: max |eager-graph| = 3 at [2]
 *   (eager 5, graph 2)
 * with the values, the cause, the counts and the expected differences.
 * Owned (free()). */
TS_API char *ts_diverge_report_format(const ts_diverge_report *report);
TS_API const char *ts_diverge_expected_name(ts_diverge_expected why); /* "folded", ... */

/* ---- argument specs (engine/io/arg_spec.c) ------------------------------
 * Parses one argument as `tracescope-cli run --arg SPEC` gives it:
 *   f32[2,3]=1,2,3,4,5,6   a tensor: dtype (any numeric: f16, bf16, i8, u64, ...),
 *                          shape, one value per element (floats rounded)
 *   f32[]=2.5              a scalar tensor
 *   f32[20,28,28]:uniform  generated: uniform ([0,1) floats, [0,10) integers)
 *                          and normal (seeded; `:uniform@7` picks seed 7),
 *                          zeros, ones, range (0, 1, ... row-major;
 *                          `i32[10]:range(-5)` counts -5, -4, ..., 4)
 *   npy:path.npy           a tensor loaded from a .npy file
 *   100 / -2.5 / true      a host int / float / bool
 *   [1,-1]                 a host list (of host values, nested as needed)
 *   anything else          a host string
 * Tensors belong to the current scope; strings and lists belong to *out
 * (release them with ts_value_clear).  false with an error naming the spec. */
TS_API bool ts_value_parse(const char *spec, ts_value *out);
TS_API void ts_value_clear(ts_value *v);
/* The dtypes a spec can give, short names ("f16", "bf16", "f32", ...: floats,
 * signed and unsigned integers, bool) joined by separator; free with g_free. */
TS_API char *ts_value_spec_dtypes(const char *separator);
/* ---- end of argument specs ------------------------------------------------ */

/* ---- kernels (engine/kernels/) ------------------------------------------
 * The CPU as cpuid reports it, e.g. "AMD EPYC 9654 96-Core Processor
 * (AuthenticAMD family 25 model 17): AVX-512 F/BW/VL/DQ/VNNI/BF16". */
TS_API const char *ts_cpu_description(void);
/* OpenBLAS as the engine loaded it (dlopen, on first use: this call loads
 * it): "OpenBLAS core SkylakeX (OPENBLAS_CORETYPE=SkylakeX from cpuid)". */
TS_API const char *ts_blas_description(void);
/* The kernel the engine chose per op shape so far, one line each, with the
 * times that chose it:
 *   matmul 20x784x64: own avx512 8x32 (own avx512 8x32 0.90 µs, OpenBLAS 2.10 µs)
 * (matmul M x K x N).  Owned string (free()). */
TS_API char *ts_kernel_choices(void);

#ifdef __cplusplus
}
#endif
