/* fuzz-arg-spec.c — argument specs (ts_value_parse, engine/io/arg_spec.c),
 * dtype names (ts_dtype_from_name) and op names (ts_op_from_name).
 *
 * The input, cut at its first NUL, is one spec.  Parsing gives a value or a
 * clean error.  Two things are kept out of the fuzzer's reach: "npy:PATH"
 * reads a file (the path is moved under a directory that does not exist;
 * fuzz-npy covers the loader), and specs whose shape asks for more than
 * 4M elements but few enough that making them is legitimate work. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inspect_value(const ts_value *v, int depth)
{
  switch (v->kind) {
  case TS_VALUE_TENSOR:
    if (!v->tensor)
      fuzz_finding("ts_value_parse gave a NULL tensor");
    fuzz_inspect(v->tensor);
    break;
  case TS_VALUE_STRING:
    if (!v->s)
      fuzz_finding("ts_value_parse gave a NULL string");
    (void)strlen(v->s);
    break;
  case TS_VALUE_LIST:
    if (v->list.n < 0 || (v->list.n > 0 && !v->list.items))
      fuzz_finding("ts_value_parse gave a malformed list");
    for (int i = 0; i < v->list.n; i++)
      inspect_value(&v->list.items[i], depth + 1);
    break;
  case TS_VALUE_INT:
  case TS_VALUE_FLOAT:
  case TS_VALUE_BOOL:
    break;
  default:
    fuzz_finding("ts_value_parse gave value kind %d", (int)v->kind);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_begin_input();
  static const char npy_prefix[] = "npy:", nowhere[] = "npy:/nonexistent-tracescope-fuzz/";
  char *spec = malloc(size + sizeof nowhere);
  if (!spec)
    return 0;
  memcpy(spec, data, size);
  spec[size] = '\0';
  if (strncmp(spec, npy_prefix, 4) == 0) {
    size_t rest = strlen(spec + 4);
    memmove(spec + sizeof nowhere - 1, spec + 4, rest + 1);
    memcpy(spec, nowhere, sizeof nowhere - 1);
  }

  ts_dtype dtype;
  if (ts_dtype_from_name(spec, &dtype)) {
    if ((unsigned)dtype >= TS_DTYPE_COUNT)
      fuzz_finding("ts_dtype_from_name gave dtype %d", (int)dtype);
    (void)strlen(ts_dtype_name(dtype));
  }
  int op = ts_op_from_name(spec);
  if (op < -1 || op >= TS_OP_COUNT)
    fuzz_finding("ts_op_from_name gave %d", op);
  if (op >= 0)
    (void)strlen(ts_op_name((ts_op)op));

  if (!fuzz_spec_too_big(spec)) {
    ts_scope *scope = ts_scope_begin();
    ts_value v;
    if (fuzz_check_ok(ts_value_parse(spec, &v), "ts_value_parse"))
      inspect_value(&v, 0);
    ts_value_clear(&v);
    ts_scope_end(scope);
  }
  ts_release_all();
  ts_error_clear();
  free(spec);
  return 0;
}
