/* registry.c — the op table: one definition per op, linked from the family files. */
#include "engine-private.h"

#include <pthread.h>

#define OP_ENTRY(ID, id, family) [TS_OP_##ID] = &ts__op_##id,
const ts_op_def *const ts__op_table[TS_OP_COUNT] = { TS_OP_LIST(OP_ENTRY) };
#undef OP_ENTRY

/* The ABI: modules built against another version are refused at load, so
 * what they see of the engine must change only with TS_ABI_VERSION. */
_Static_assert(TS_ABI_VERSION == 16, "the ABI changed: update the pins below");
_Static_assert(TS_OP_COUNT == 147, "ops only grow at the end of TS_OP_LIST: bump TS_ABI_VERSION");
_Static_assert(TS_DTYPE_COUNT == 15 && TS_VALUE_KIND_COUNT == 8 && TS_EVENT_KIND_COUNT == 8,
               "public enums changed: bump TS_ABI_VERSION");
_Static_assert(sizeof(ts_shape) == 72 && sizeof(ts_ints) == 72 && sizeof(ts_loc) == 24 &&
                 sizeof(ts_value) == 88 && sizeof(ts_spec) == 80 && sizeof(ts_cf_block) == 144 &&
                 sizeof(ts_op_event) == 184 && sizeof(ts_event) == 192 &&
                 sizeof(ts_module_info) == 32 && sizeof(ts_export) == 24,
               "public structs changed size: bump TS_ABI_VERSION");
_Static_assert((TS_OPF_STATEFUL | TS_OPF_INPUT | TS_OPF_VALUE | TS_OPF_AUXILIARY |
                TS_OPF_CONTROL_FLOW | TS_OPF_ELEMENTWISE) <= 0xff,
               "op traits live in the low byte of the flags");

unsigned ts_op_traits(ts_op op)
{
  const ts_op_def *def = ts__op_def(op);
  return def ? def->flags & 0xff : 0;
}

ts_op_gradient ts_op_gradient_kind(ts_op op)
{
  const ts_op_def *def = ts__op_def(op);
  if (!def || (def->flags & TS_OPF_NOT_DIFFERENTIABLE))
    return TS_OP_GRADIENT_NOT_DIFFERENTIABLE;
  return def->grad ? TS_OP_GRADIENT_DEFINED : TS_OP_GRADIENT_MISSING;
}

const char *ts_op_subgraph_name(ts_op op, int i)
{
  const ts_op_def *def = ts__op_def(op);
  return def && i >= 0 && i < def->n_subgraphs ? def->subgraphs[i] : NULL;
}

const char *ts_op_name(ts_op op)
{
  const ts_op_def *def = ts__op_def(op);
  return def ? def->name : "invalid";
}

/* Graph name and API name -> op + 1, made once: kernels look up attribute
 * names (a fused node's activation) on every run. */
static GHashTable *by_name;

static void index_names(void)
{
  by_name = g_hash_table_new(g_str_hash, g_str_equal);
  for (int op = TS_OP_COUNT; op-- > 0;) { /* the lowest op wins a name two spell alike */
    g_hash_table_insert(by_name, (gpointer)ts__op_table[op]->api_name, GINT_TO_POINTER(op + 1));
    g_hash_table_insert(by_name, (gpointer)ts__op_table[op]->name, GINT_TO_POINTER(op + 1));
  }
}

int ts_op_from_name(const char *name)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  if (!name)
    return -1;
  pthread_once(&once, index_names);
  return GPOINTER_TO_INT(g_hash_table_lookup(by_name, name)) - 1;
}
