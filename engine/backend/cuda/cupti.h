/* cuda/cupti.h — CUPTI for the CUDA backend: loaded with dlopen (a machine
 * without it still runs, with device times off and a message saying why),
 * and its activity records turned into the engine's device activity
 * (ts_activity, tracescope-backend.h), as SIM:0 reports it.
 *
 * Correlation: the backend pushes its op's correlation id as CUPTI's
 * external correlation id (CUSTOM0) around each launch, so an eager
 * kernel's record is tied to its op through the EXTERNAL_CORRELATION
 * record of its launch.  A kernel replayed from a CUDA Graph carries the
 * graph launch's correlation and its graph node id; the node ids were
 * tied to ops when the plan was captured (TS_ACTIVITY_GRAPH_NODE records,
 * from the graph-node-created callback), so the profiler charges replays
 * to ops too.
 *
 * Copies: the backend pushes the op's id (CUSTOM0) around the copies and
 * memsets issued for an op too, and around a copy of one of the op's
 * inputs the input's index + 1 as a second external id
 * (TS_CUPTI_OPERAND_KIND), so a MEMCPY record is charged to its op and
 * says which input it carried (ts_activity.operand), as SIM:0's copies
 * do.  A copy replayed from a CUDA Graph carries its node instead, whose
 * operand the backend recorded at capture (ts__cupti_records_node_operand). */
#pragma once

#include <cupti.h>
#include <glib.h>

#include "../../tracescope-backend.h"

/* The CUPTI entry points the backend uses, from one dlopen. */
typedef struct ts_cupti_api {
  void *lib;
  uint32_t version; /* cuptiGetVersion: 130001 for 13.0 update 1 */
  CUptiResult (*GetVersion)(uint32_t *);
  CUptiResult (*GetResultString)(CUptiResult, const char **);
  CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
  CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
  CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
  CUptiResult (*ActivityFlushAll)(uint32_t);
  CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                           CUpti_BuffersCallbackCompleteFunc);
  CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
  CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
  CUptiResult (*ActivityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t);
  CUptiResult (*ActivityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t *);
  CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
  CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
  CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                CUpti_CallbackId);
  CUptiResult (*GetGraphNodeId)(CUgraphNode, uint64_t *);
  /* optional (NULL where this CUPTI lacks them): API records of single calls */
  CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t);
  CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t);
} ts_cupti_api;

/* Loads CUPTI: $TRACESCOPE_CUPTI, then libcupti.so.<major> on the library
 * path, then the toolkit's folders ($CUDA_HOME, /usr/local/cuda).  Refuses
 * a CUPTI of another major version than the one built against (its
 * records are laid out differently).  Returns the table (loaded once per
 * process), or NULL with *why set (static text or owned by the loader). */
const ts_cupti_api *ts__cupti_load(const char **why);

/* The external correlation kind that carries a copy's operand. */
#define TS_CUPTI_OPERAND_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1

/* CUPTI's records of one profiled stretch, made into ts_activity.  Kernel
 * records may arrive before the external correlation record of their
 * launch (buffers complete per thread, in any order), so records wait in
 * `pending` and are resolved when taken, at the end of the stretch. */
typedef struct ts_cupti_records {
  const char *device;        /* "CUDA:0", for the records */
  GHashTable *external;      /* CUPTI correlation id -> the op's correlation */
  GHashTable *operands;      /* CUPTI correlation id -> a copy's operand (TS_CUPTI_OPERAND_KIND) */
  GHashTable *launches;      /* a CUDA Graph launch's id -> its cupti_launch */
  uint64_t next_launch;
  GArray *pending;           /* ts_activity, correlation still CUPTI's */
  GArray *taken;             /* what the last take returned */
  GStringChunk *names;       /* kernel names, kept as long as the records */
  uint64_t unknown;          /* records of kinds not turned into activity */
} ts_cupti_records;

void ts__cupti_records_init(ts_cupti_records *r, const char *device);
void ts__cupti_records_clear(ts_cupti_records *r);
/* Reads the records of one completed buffer (valid bytes of it) through
 * next (CUPTI's cuptiActivityGetNextRecord).  Returns the number read. */
int ts__cupti_records_add(ts_cupti_records *r,
                          CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **),
                          uint8_t *buffer, size_t valid);
/* A CUDA Graph launch about to go out: its exec's nodes as
 * TS_ACTIVITY_GRAPH_NODE records (the op each stands for in this launch)
 * and, for each, the input its copy carries (index + 1; 0: none).
 * Returns the launch's id (TS_CUPTI_LAUNCH_BIT set: never an op's), to
 * push as CUSTOM0 around cudaGraphLaunch.  The take puts these records
 * just before the launch's first replayed record: the next launch of an
 * updated exec has the same node ids for other ops, and a consumer
 * charging nodes in order charges each replay to its own launch's ops. */
#define TS_CUPTI_LAUNCH_BIT (UINT64_C(1) << 63)
uint64_t ts__cupti_records_launch(ts_cupti_records *r, const ts_activity *nodes,
                                  const uint32_t *operands, int n);
/* The records added since the last take, their correlation the engine's
 * id that the external correlation record of their launch names (an op's,
 * or a plan launch's for kernels replayed from a CUDA Graph, charged
 * through graph_node, the launch's node records put before its first),
 * 0 where none does; a copy's operand that of its call's
 * TS_CUPTI_OPERAND_KIND record, or of its node in its launch.
 * Returns their number; *out is valid until the next take or clear. */
int ts__cupti_records_take(ts_cupti_records *r, const ts_activity **out);
