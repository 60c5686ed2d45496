/* tracescope-onnx.h — ONNX models in libtracescope (engine/io/onnx_*.c).
 *
 * A model file is untrusted input: its size, every tensor's size (checked
 * for overflow and against the bytes it has), the nesting of subgraphs and
 * types, and every count are checked before anything is allocated; a file
 * that is truncated, cyclic or contradicts itself gives NULL and an error
 * (TS_ERR_IO, TS_ERR_FORMAT) naming the file and what was wrong.  External
 * data files must lie in the model's folder.
 *
 * An imported model is a graph of the engine's public ops: each ONNX node
 * becomes the ops that compute it exactly, under the name scopes of its
 * `/`-separated name (PyTorch's "/encoder/layer.0/Add" folds into encoder
 * and layer.0 in the viewer).  Opsets 6 to 17 of the default domain (1
 * to 5 for models whose ops all meant the same since opset 1).  A
 * node whose op, attribute value or dtype has no exact mapping makes
 * ts_onnx_load fail with TS_ERR_UNIMPLEMENTED naming the op, the node and
 * the opset: nothing is dropped. */
#pragma once

#include "tracescope.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_onnx_model ts_onnx_model;

/* Model files larger than this are refused (external data counts apart,
 * each file capped the same). */
#define TS_ONNX_MAX_FILE_BYTES ((int64_t)2 << 30)
/* Subgraphs within subgraphs, and types within types, deeper than this are refused. */
#define TS_ONNX_MAX_DEPTH 32

/* False when libtracescope was built without ONNX (meson -Donnx=disabled):
 * every other call here then fails saying so. */
TS_API bool ts_onnx_available(void);

/* Reads, checks and maps the model at path.  Owned (ts_onnx_model_free);
 * NULL + error. */
TS_API ts_onnx_model *ts_onnx_load(const char *path);
TS_API void ts_onnx_model_free(ts_onnx_model *model);

TS_API const char *ts_onnx_model_name(const ts_onnx_model *model); /* the graph's name */
TS_API int64_t ts_onnx_model_opset(const ts_onnx_model *model);    /* of the default domain */
/* The graph's inputs (initializers excluded): name and spec (dims -1 where
 * the file gives a symbolic or no dimension). */
TS_API int ts_onnx_model_n_inputs(const ts_onnx_model *model);
TS_API const char *ts_onnx_model_input_name(const ts_onnx_model *model, int i);
TS_API ts_spec ts_onnx_model_input_spec(const ts_onnx_model *model, int i);
TS_API int ts_onnx_model_n_outputs(const ts_onnx_model *model);
TS_API const char *ts_onnx_model_output_name(const ts_onnx_model *model, int i);

/* Runs the model eagerly on one tensor per input; outputs[0 ..
 * n_outputs-1] get its outputs (in the current scope).  false + error. */
TS_API bool ts_onnx_model_run(ts_onnx_model *model, ts_tensor *const *inputs, int n_inputs,
                              ts_tensor **outputs);

/* The model as a traced function returning output `output`, named after the
 * model ("model_OUTPUT" when it has several outputs), its parameters the
 * inputs' names (as C identifiers): a graph-mode call traces a concrete function
 * per input signature, as for any ts_function.  Borrowed: the model owns
 * it.  NULL + error for an output out of range. */
TS_API ts_function *ts_onnx_model_function(ts_onnx_model *model, int output);

/* The model as a module (the functions ts_onnx_model_function makes, one
 * per output, without their input signatures; example arguments from the
 * inputs' specs: uniform values, unknown dims 1; none when an input is a
 * sequence or an optional, which no argument spec makes), for tools that run
 * modules (tracescope-cli run model.onnx ...).  Owned (ts_module_free);
 * the model must outlive it.  NULL + error. */
TS_API ts_module *ts_onnx_model_module(ts_onnx_model *model);

/* A serialized TensorProto (the input_0.pb of ONNX's backend tests), as a
 * tensor in the current scope.  NULL + error naming the file. */
TS_API ts_tensor *ts_onnx_tensor_load(const char *path);

/* A serialized value of the model's input or output i (the input_N.pb and
 * output_N.pb of ONNX's backend tests) read as the model declares it: a
 * TensorProto for a tensor, a SequenceProto for a sequence (a TensorList:
 * ts_tensor_list_size), an OptionalProto for an optional
 * (ts_optional_value).  In the current scope; NULL + error naming the file. */
TS_API ts_tensor *ts_onnx_model_value_load(const ts_onnx_model *model, bool output, int i,
                                           const char *path);

/* ts_onnx_load's check alone, for tools that sort models before running
 * them: the ONNX ops (and "dtype NAME" for tensor types) of the file at
 * path that the importer has no mapping for, "Resize,TopK" in the order
 * met, "" when none.  Owned (free()); NULL + error when the file cannot be
 * read. */
TS_API char *ts_onnx_unsupported(const char *path);

/* Writes concrete function cf's graph (ts_concrete_graph: as traced, node
 * names kept) to path as an ONNX model of opset 17 that ts_onnx_load and
 * ONNX Runtime read: its Placeholders the graph's inputs (unknown dims
 * left without a value), constants and captured variables (their values
 * now) initializers, If and While ONNX's If and Loop, every value's dtype
 * and shape in value_info, seeded random ops the values they make.  Only
 * what the outputs need is written, but every stateful node must be.  A
 * node ONNX cannot express (Print, assignments, TensorArrays) gives false and
 * TS_ERR_UNIMPLEMENTED naming the node and its op; an unwritable path
 * TS_ERR_IO. */
TS_API bool ts_concrete_save_onnx(const ts_concrete *cf, const char *path);

#ifdef __cplusplus
}
#endif
