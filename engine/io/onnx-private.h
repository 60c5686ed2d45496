/* onnx-private.h — what the ONNX reader, tensor decoder, importer and op
 * table share (engine/io/onnx_*.c). */
#pragma once

#include "engine-private.h"
#include "onnx.pb-c.h"
#include "tracescope-onnx.h"

#include <glib.h>

/* Rows map opsets from 6 (PyTorch's old exports use it, and the ops we map
 * differ from 7 only in attributes the rows refuse: broadcast, is_test=0)
 * unless they say otherwise (onnx_op_row.since): a model of an older
 * opset loads when each of its ops' rows says since 1 (an op whose
 * meaning and attributes opset 1 already had: Not, Softplus, ...). */
#define ONNX_MIN_OPSET 1
#define ONNX_ROW_MIN_OPSET 6
#define ONNX_MAX_OPSET 22 /* 22 added bfloat16 to ops: nothing new to build */

/* A parsed model file: the message, the file's path and folder (external
 * data is looked up there). */
typedef struct onnx_file {
  Onnx__ModelProto *model;
  char *path;
  char *dir;
  int64_t opset; /* of the default domain ("" or "ai.onnx") */
} onnx_file;

/* Whether domain is ONNX's default one ("" or "ai.onnx"). */
bool onnx_is_default_domain(const char *domain);
/* The opset f imports of domain; 0 when it imports none. */
int64_t onnx_domain_opset(const onnx_file *f, const char *domain);

/* The bytes of the file at path, its size capped (TS_ONNX_MAX_FILE_BYTES):
 * g_free them.  NULL + error naming path. */
uint8_t *onnx_read_bytes(const char *path, size_t *size);

/* An allocator for protobuf-c's unpack that fails (b->exceeded) past a
 * budget proportional to the file's size; what it gives is malloc's. */
typedef struct onnx_budget {
  size_t left;
  bool exceeded;
} onnx_budget;
ProtobufCAllocator onnx_allocator(onnx_budget *b, size_t file_size);

/* Reads path (size capped), checks the nesting of its messages and unpacks
 * it with a bounded allocator.  false + error naming path. */
bool onnx_file_read(const char *path, onnx_file *out);
void onnx_file_clear(onnx_file *f);

/* The engine dtype of an ONNX TensorProto.DataType; false if we have none. */
bool onnx_dtype(int32_t data_type, ts_dtype *out);
/* The TensorProto.DataType of an engine dtype, as the exporter writes it
 * (raw bytes); 0 for variant and string (read from string_data, never
 * written). */
int32_t onnx_data_type(ts_dtype dtype);
const char *onnx_dtype_name(int32_t data_type);

/* A TensorProto as a tensor (current scope): dims checked, raw or typed
 * data (or an external file inside f's folder) checked against the size.
 * `what` names it in errors ("initializer 'fc.weight'").  NULL + error. */
ts_tensor *onnx_tensor_decode(const onnx_file *f, const Onnx__TensorProto *t, const char *what);

/* ---- the op table (onnx_ops.c) ---------------------------------------------- */

/* One ONNX value while a graph is built: the tensor, and its value on the
 * host when it is known while tracing (initializers, constants and what is
 * computed from them: the shapes Reshape, Slice and friends read). */
typedef struct onnx_value {
  ts_tensor *t;
  ts_tensor *host;
  const Onnx__TypeProto *type; /* its ONNX type where the model says (graph inputs, value_info,
                                * outputs) or the importer knows it; NULL else.  What a
                                * sequence's elements or an optional's value are while
                                * tracing when the graph cannot tell (onnx_elem_hint). */
} onnx_value;

typedef struct onnx_values onnx_values; /* the values of the graphs being built (onnx_import.c) */

typedef struct onnx_node_ctx {
  const onnx_file *file;
  const Onnx__NodeProto *node;
  const char *name;    /* the node's name, or "#i" */
  int64_t opset;       /* of the node's domain */
  int n_in;
  onnx_value *in;      /* in[i].t NULL: an omitted optional input */
  int n_out;
  ts_tensor **out;     /* to fill */
  ts_loc loc;          /* of the ops it becomes: model path, node name, index + 1 */
  ts_onnx_model *model;
  const onnx_values *values; /* what the node's subgraphs may read */
} onnx_node_ctx;

typedef bool (*onnx_op_fn)(onnx_node_ctx *c);

typedef struct onnx_op_row {
  const char *name;
  int min_in, max_in;     /* inputs (max -1: any number) */
  int min_out, max_out;   /* outputs the node may ask for */
  const char *attrs;      /* the attributes it takes, ",a,b," */
  onnx_op_fn build;
  int since;              /* the first opset of its domain whose semantics build handles
                           * (0: ONNX_ROW_MIN_OPSET) */
  bool foldable;          /* computed on the host when every input is known there */
} onnx_op_row;

/* Shape's or Size's value on the host where the input's shape is known
 * when the graph is built, else NULL (onnx_ops.c). */
ts_tensor *onnx_shape_host(const onnx_node_ctx *c);

/* What t (a sequence or an optional type) holds: a sequence's element
 * tensor type, an optional's tensor or (a variant) sequence; dims unknown
 * where symbolic, the rank unknown without a shape.  false when t says
 * nothing of it. */
bool onnx_elem_hint(const Onnx__TypeProto *t, ts_list_elem *out);
/* What a value of type t is: a tensor's dtype and shape, a variant
 * scalar for a sequence or an optional.  false when t says nothing. */
bool onnx_value_hint(const Onnx__TypeProto *t, ts_list_elem *out);

/* Whether an input's or output's type is one the importer runs: a tensor
 * of an engine dtype, a sequence of such tensors, an optional of either.
 * false: *what says what is missing ("non-tensor type", "dtype string"). */
bool onnx_type_supported(const Onnx__TypeProto *t, const char **what, int32_t *data_type);

/* The type the model declares for its input or output i (NULL: none). */
const Onnx__TypeProto *onnx_model_value_type(const ts_onnx_model *m, bool output, int i);

/* Runs row's build for the node c, its ops located at c->loc. */
bool onnx_op_build(const onnx_op_row *row, onnx_node_ctx *c);

/* The row for op of domain (NULL or "": the default one), NULL if we have none. */
const onnx_op_row *onnx_op_lookup(const char *domain, const char *op);

/* Builds subgraph g of c's node (an If branch, a Loop body) in the current
 * frame: its inputs bound to inputs[0 .. n_inputs-1], the values of the
 * graphs around it readable by name; outputs[0 .. g->n_output-1] get its
 * outputs.  false + error naming the node. */
bool onnx_build_subgraph(const onnx_node_ctx *c, const Onnx__GraphProto *g, ts_tensor *const *inputs,
                         int n_inputs, ts_tensor **outputs);

/* If, Loop, Scan and SequenceMap (onnx_control.c). */
bool onnx_op_if(onnx_node_ctx *c);
bool onnx_op_loop(onnx_node_ctx *c);
bool onnx_op_scan(onnx_node_ctx *c);
bool onnx_op_sequence_map(onnx_node_ctx *c);

/* Cast's and CastLike's x as `to`: with strings, the string rows (numbers
 * as NumPy's str() writes them, text read as numbers) (onnx_strings.c). */
ts_tensor *onnx_cast(ts_loc loc, ts_tensor *x, ts_dtype to);
bool onnx_op_string_normalizer(onnx_node_ctx *c);

/* The sequence and optional ops (onnx_seq.c). */
bool onnx_op_sequence_empty(onnx_node_ctx *c);
bool onnx_op_sequence_construct(onnx_node_ctx *c);
bool onnx_op_sequence_insert(onnx_node_ctx *c);
bool onnx_op_sequence_erase(onnx_node_ctx *c);
bool onnx_op_sequence_at(onnx_node_ctx *c);
bool onnx_op_sequence_length(onnx_node_ctx *c);
bool onnx_op_split_to_sequence(onnx_node_ctx *c);
bool onnx_op_concat_from_sequence(onnx_node_ctx *c);
bool onnx_op_optional(onnx_node_ctx *c);
bool onnx_op_optional_has_element(onnx_node_ctx *c);
bool onnx_op_optional_get_element(onnx_node_ctx *c);

/* RNN, GRU and LSTM (onnx_rnn.c). */
bool onnx_op_rnn(onnx_node_ctx *c);
bool onnx_op_gru(onnx_node_ctx *c);
bool onnx_op_lstm(onnx_node_ctx *c);

/* The linear quantization ops (onnx_quant.c). */
bool onnx_op_quantize_linear(onnx_node_ctx *c);
bool onnx_op_dequantize_linear(onnx_node_ctx *c);
bool onnx_op_dynamic_quantize_linear(onnx_node_ctx *c);
bool onnx_op_matmul_integer(onnx_node_ctx *c);
bool onnx_op_conv_integer(onnx_node_ctx *c);
bool onnx_op_qlinear_matmul(onnx_node_ctx *c);
bool onnx_op_qlinear_conv(onnx_node_ctx *c);

/* Records an error naming the node: "Op 'name' (opset N): detail". */
void onnx_node_fail(const onnx_node_ctx *c, ts_error_code code, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
