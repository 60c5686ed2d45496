/* tuple.c — a function's several results (tf.function's `return a, b`)
 * or none (`return None`): the tuple ts_tuple makes, the None ts_none
 * makes, and reading them back where calls return. */
#include "function-private.h"

#include <stdlib.h>

ts_tensor *ts__tuple_new(ts_tensor *const *tensors, int n)
{
  ts_tensor *t = calloc(1, sizeof *t);
  ts_tensor **items = calloc(n > 0 ? (size_t)n : 1, sizeof *items); /* None's: no items */
  if (!t || !items) {
    free(t);
    free(items);
    ts_error_set(TS_ERR_NO_MEMORY, (ts_loc){ 0 }, NULL, "out of memory");
    return NULL;
  }
  *t = (ts_tensor){ .refcount = 1, .dtype = TS_VARIANT, .items = items, .n_items = n };
  for (int i = 0; i < n; i++)
    items[i] = ts_tensor_ref(tensors[i]);
  ts__scope_adopt(t);
  return t;
}

ts_tensor *ts_tuple_at(ts_loc loc, int n, ts_tensor *const *tensors)
{
  if (ts_failed())
    return NULL; /* a NULL among them is that failure: keep its error */
  if (n < 1 || n > TS_MAX_RETURNS || !tensors) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, "ts_tuple",
                 "a tuple holds 1 to %d tensors, got %d%s", TS_MAX_RETURNS, n,
                 tensors ? "" : " (and no array)");
    return NULL;
  }
  ts_tensor *held[TS_MAX_RETURNS];
  for (int i = 0; i < n; i++) {
    if (!tensors[i]) {
      ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, "ts_tuple", "tensor %d of %d is NULL", i, n);
      return NULL;
    }
    if (tensors[i]->items) {
      ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, "ts_tuple",
                   ts__is_none(tensors[i]) ? "tensor %d of %d is None (ts_none); a tuple holds tensors"
                                          : "tensor %d of %d is itself a tuple; tuples do not nest",
                   i, n);
      return NULL;
    }
    /* a function returns a variable's value, not the variable */
    held[i] = tensors[i]->is_variable ? ts_read_at(loc, tensors[i]) : tensors[i];
    if (!held[i])
      return NULL;
  }
  return ts__tuple_new(held, n);
}

ts_tensor *ts_none(void)
{
  return ts__tuple_new(NULL, 0);
}

int ts__results(const char *name, ts_tensor *result, ts_tensor **out, int max_out, bool *tuple)
{
  if (!result)
    return -1;
  if (tuple)
    *tuple = ts__is_tuple(result);
  int n = result->items ? result->n_items : 1;
  if (n > max_out) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
                 "%s: returns %d tensors, room for %d", name, n, max_out);
    return -1;
  }
  for (int i = 0; i < n; i++)
    out[i] = result->items ? result->items[i] : result;
  return n;
}

ts_tensor *ts__single_result(const char *name, const char *reader, const char *reader_n,
                             ts_tensor *result)
{
  if (!result || !result->items || ts__is_none(result))
    return result;
  if (result->n_items == 1)
    return result->items[0];
  ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ 0 }, NULL,
               "%s: returns a tuple of %d tensors; %s gives one (read them all with %s)",
               name, result->n_items, reader, reader_n);
  return NULL;
}
