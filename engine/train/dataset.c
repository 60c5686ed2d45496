/* dataset.c — in-memory datasets after tf.data (tracescope-train.h).  A
 * dataset holds its examples (components as tensors along the first
 * dimension) and what a pass does with them: take a count, shuffle, batch.
 * Unshuffled, its elements are made at once (eagerly, even while tracing):
 * the examples, or once batched [batches, batch, ...] with a smaller last
 * batch apart.  Shuffled, each pass (ts_dataset_over) makes them anew in
 * the order ShuffleIndices gives for that pass (tf.data's
 * reshuffle_each_iteration), the passes counted in a variable that a
 * traced loop advances in its graph, or, for a dataset made while tracing
 * (made anew on each call, as in a tf.function), on the host.  map runs when an element is taken, so
 * inside a traced loop it is part of the loop's body. */
#include "train-private.h"

#include <stdlib.h>

#define MAX_MAPS 8

struct ts_dataset {
  int n;                                       /* components */
  ts_tensor *ex[TS_DATASET_MAX_COMPONENTS];    /* the examples [count, ...] (unshuffled) */
  int64_t count;                               /* how many a pass takes */
  bool shuffled;
  ts_tensor *epochs;                           /* shuffled: passes so far (i64 variable), or NULL */
  int64_t passes;                              /* ... or on the host, made while tracing */
  int64_t buffer_size;
  uint64_t seed;
  int64_t batch;                               /* batched: the batch size, else 0 */
  bool drop_remainder;
  int n_maps;
  ts_dataset_map_fn maps[MAX_MAPS];
  void *map_data[MAX_MAPS];
  /* the elements of the pass under way: [elements, ...] (batched: [batches,
   * batch, ...]) and the smaller last batch apart, or NULL */
  ts_tensor *pass[TS_DATASET_MAX_COMPONENTS];
  ts_tensor *tail[TS_DATASET_MAX_COMPONENTS];
};

static int64_t n_full(const ts_dataset *ds)
{
  return ds->batch ? ds->count / ds->batch : ds->count;
}

static bool has_tail(const ts_dataset *ds)
{
  return ds->batch && !ds->drop_remainder && ds->count % ds->batch;
}

static bool check_dataset(const ts_dataset *ds, const char *what)
{
  if (ds)
    return true;
  train_error(TS_ERR_INVALID_ARGUMENT, "dataset %s: the dataset is NULL", what);
  return false;
}

/* Elements [begin, begin + count) of t along its first dimension. */
static ts_tensor *rows(ts_tensor *t, int64_t begin, int64_t count)
{
  ts_ints b = { .n = t->shape.rank }, s = { .n = t->shape.rank };
  for (int d = 0; d < t->shape.rank; d++) {
    b.v[d] = 0;
    s.v[d] = -1;
  }
  b.v[0] = begin;
  s.v[0] = count;
  return ts_slice(t, b, s);
}

static void pass_clear(ts_dataset *ds)
{
  for (int i = 0; i < ds->n; i++) {
    g_clear_pointer(&ds->pass[i], ts_tensor_unref);
    g_clear_pointer(&ds->tail[i], ts_tensor_unref);
  }
}

/* A pass's elements from its examples in order: batched or not.  Runs the
 * ops eagerly, or records them while tracing (shuffled, the order is the
 * graph's). */
static bool pass_make(ts_dataset *ds)
{
  pass_clear(ds);
  ts_tensor *order = NULL;
  if (ds->shuffled) { /* tf.data's reshuffle_each_iteration: pass k's order */
    ts_tensor *k = ds->epochs ? ts_read(ds->epochs) : ts_scalar_i64(ds->passes++);
    order = ts_shuffle_indices(ds->count, ds->buffer_size, ds->seed, k);
    if (ds->epochs)
      ts_assign_add(ds->epochs, ts_scalar_i64(1));
  }
  int64_t nb = n_full(ds), b = ds->batch;
  for (int i = 0; i < ds->n && !ts_failed(); i++) {
    ts_tensor *ex = order ? ts_gather(ds->ex[i], order, 0) : ds->ex[i];
    if (!b) {
      ds->pass[i] = ts_tensor_ref(ex);
      continue;
    }
    ts_shape s = ds->ex[i]->shape;
    memmove(s.dim + 2, s.dim + 1, sizeof(int64_t) * (size_t)(s.rank - 1));
    s.rank++;
    s.dim[0] = nb;
    s.dim[1] = b;
    ds->pass[i] = ts_tensor_ref(ts_reshape(rows(ex, 0, nb * b), s));
    if (has_tail(ds))
      ds->tail[i] = ts_tensor_ref(rows(ex, nb * b, ds->count - nb * b));
  }
  for (int i = 0; i < ds->n; i++)
    if (!ds->pass[i] || (has_tail(ds) && !ds->tail[i])) {
      pass_clear(ds);
      return false;
    }
  return true;
}

/* A dataset like ds (settings and maps) over new examples (references
 * taken); unshuffled, its elements are made now (eagerly, even while
 * tracing: the graph takes them as constants). */
static ts_dataset *dataset_with(const ts_dataset *ds, ts_tensor *const *ex)
{
  for (int i = 0; i < ds->n; i++)
    if (!ex[i])
      return NULL;
  ts_dataset *out = g_new(ts_dataset, 1);
  *out = *ds;
  for (int i = 0; i < ds->n; i++) {
    out->ex[i] = ts_tensor_ref(ex[i]);
    out->pass[i] = out->tail[i] = NULL;
  }
  if (out->epochs)
    ts_tensor_ref(out->epochs);
  if (!out->shuffled) {
    bool ok = false;
    ts_scope *scope = ts_scope_begin();
    TS_INIT_SCOPE { ok = pass_make(out); }
    ts_scope_end(scope);
    if (!ok) {
      ts_dataset_free(out);
      return NULL;
    }
  }
  return out;
}

ts_dataset *ts_dataset_from_tensors(ts_tensor *const *components, int n)
{
  if (n < 1 || n > TS_DATASET_MAX_COMPONENTS || !components) {
    train_error(TS_ERR_INVALID_ARGUMENT, "dataset: 1 to %d components, got %d",
                TS_DATASET_MAX_COMPONENTS, n);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    ts_tensor *t = components[i];
    if (!t || !t->backend || t->shape.rank < 1 ||
        t->shape.dim[0] != components[0]->shape.dim[0]) {
      char *spec = t ? ts_shape_dtype_string(t->dtype, t->shape) : NULL;
      train_error(TS_ERR_INVALID_ARGUMENT,
                  "dataset: component %d is %s: each must be a concrete tensor of rank >= 1 "
                  "with the same first dimension as component 0", i,
                  !t ? "NULL" : !t->backend ? "symbolic" : spec);
      free(spec);
      return NULL;
    }
  }
  ts_dataset base = { .n = n, .count = components[0]->shape.dim[0] };
  return dataset_with(&base, components);
}

void ts_dataset_free(ts_dataset *ds)
{
  if (!ds)
    return;
  pass_clear(ds);
  for (int i = 0; i < ds->n; i++)
    ts_tensor_unref(ds->ex[i]);
  ts_tensor_unref(ds->epochs);
  g_free(ds);
}

int64_t ts_dataset_cardinality(const ts_dataset *ds)
{
  return ds ? n_full(ds) + has_tail(ds) : -1;
}

int ts_dataset_n_components(const ts_dataset *ds)
{
  return ds ? ds->n : 0;
}

ts_dataset *ts_dataset_take(const ts_dataset *ds, int64_t count)
{
  if (!check_dataset(ds, "take"))
    return NULL;
  /* tf.data: -1 (or more than there is) takes all; batched, count batches */
  int64_t examples = ds->count;
  if (count >= 0 && count < ts_dataset_cardinality(ds))
    examples = ds->batch ? count * ds->batch : count;
  ts_dataset t = *ds;
  t.count = examples;
  if (ds->shuffled) /* the first `examples` of each pass's order */
    return dataset_with(&t, ds->ex);
  ts_dataset *out = NULL;
  ts_scope *scope = ts_scope_begin();
  TS_INIT_SCOPE {
    ts_tensor *ex[TS_DATASET_MAX_COMPONENTS];
    for (int i = 0; i < ds->n; i++)
      ex[i] = rows(ds->ex[i], 0, examples);
    out = dataset_with(&t, ex);
  }
  ts_scope_end(scope);
  return out;
}

ts_dataset *ts_dataset_shuffle(const ts_dataset *ds, int64_t buffer_size, uint64_t seed)
{
  if (!check_dataset(ds, "shuffle"))
    return NULL;
  if (buffer_size < 1) {
    train_error(TS_ERR_INVALID_ARGUMENT, "dataset shuffle: buffer size must be >= 1, got %lld",
                (long long)buffer_size);
    return NULL;
  }
  if (ds->batch || ds->shuffled) {
    train_error(TS_ERR_UNIMPLEMENTED, "dataset shuffle: the dataset is %s already: shuffle "
                "examples once, before batch", ds->batch ? "batched" : "shuffled");
    return NULL;
  }
  ts_dataset s = *ds;
  s.shuffled = true;
  s.buffer_size = buffer_size;
  s.seed = seed;
  s.epochs = NULL;
  s.passes = 0;
  /* Made while a function is traced, it is made anew on each call, as a
   * tf.data pipeline made inside a tf.function (its seed generator too):
   * the passes of one call are counted on the host, so pass k's order is
   * a constant of the graph.  Made outside, its passes go on across calls
   * (a variable, which a traced loop advances). */
  if (ts__context()->trace_depth == 0) {
    ts_scope *scope = ts_scope_begin();
    s.epochs = ts_variable_new(ts_scalar_i64(0), "dataset/shuffle/epochs");
    ts_scope_end(scope);
    if (!s.epochs)
      return NULL;
  }
  ts_dataset *out = dataset_with(&s, ds->ex);
  ts_tensor_unref(s.epochs);
  return out;
}

ts_dataset *ts_dataset_batch(const ts_dataset *ds, int64_t batch_size, bool drop_remainder)
{
  if (!check_dataset(ds, "batch"))
    return NULL;
  if (batch_size < 1 || ds->batch) {
    train_error(ds->batch ? TS_ERR_UNIMPLEMENTED : TS_ERR_INVALID_ARGUMENT,
                ds->batch ? "dataset batch: the dataset is batched already"
                          : "dataset batch: batch size must be >= 1, got %lld",
                (long long)batch_size);
    return NULL;
  }
  for (int i = 0; i < ds->n; i++)
    if (ds->ex[i]->shape.rank == TS_MAX_RANK) {
      train_error(TS_ERR_SHAPE, "dataset batch: component %d has rank %d already", i,
                  TS_MAX_RANK);
      return NULL;
    }
  ts_dataset b = *ds;
  b.batch = batch_size;
  b.drop_remainder = drop_remainder;
  return dataset_with(&b, ds->ex);
}

ts_dataset *ts_dataset_map(const ts_dataset *ds, ts_dataset_map_fn fn, void *user_data)
{
  if (!check_dataset(ds, "map"))
    return NULL;
  if (!fn || ds->n_maps == MAX_MAPS) {
    train_error(TS_ERR_INVALID_ARGUMENT, "dataset map: %s", fn ? "at most 8 maps" : "fn is NULL");
    return NULL;
  }
  ts_dataset m = *ds;
  m.maps[m.n_maps] = fn;
  m.map_data[m.n_maps++] = user_data;
  return dataset_with(&m, ds->ex);
}

ts_iterable ts_dataset_over(ts_dataset *ds)
{
  if (!check_dataset(ds, "iteration"))
    return (ts_iterable){ 0 };
  if (has_tail(ds) && ts_tracing()) {
    train_error(TS_ERR_SHAPE, "dataset iteration: traced, a loop's batches must have one shape, "
                "but the last batch has %lld of %lld (batch with drop_remainder)",
                (long long)(ds->count % ds->batch), (long long)ds->batch);
    return (ts_iterable){ 0 };
  }
  if (ds->shuffled && !pass_make(ds)) /* a new pass: shuffled anew */
    return (ts_iterable){ 0 };
  return TS_RANGE(ts_scalar_i64(0), ts_scalar_i64(ts_dataset_cardinality(ds)), ts_scalar_i64(1));
}

bool ts_dataset_get_at(ts_loc loc, ts_dataset *ds, ts_tensor *index, ts_tensor **out)
{
  if (!ds || !out) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL, "dataset get: NULL %s", ds ? "out" : "dataset");
    return false;
  }
  if (!ds->pass[0] && !pass_make(ds)) /* shuffled, taken before any iteration */
    return false;
  /* the smaller last batch is there eagerly, at its index */
  bool last = ds->tail[0] && index && index->backend && ts_tensor_size(index) == 1 &&
              ts_tensor_get_i64(index, 0) == n_full(ds);
  for (int i = 0; i < ds->n; i++)
    out[i] = last ? ts_identity_at(loc, ds->tail[i]) : ts_gather_at(loc, ds->pass[i], index, 0);
  for (int k = 0; k < ds->n_maps && !ts_failed(); k++)
    if (!ds->maps[k](out, ds->n, ds->map_data[k]) && !ts_failed())
      ts_error_set(TS_ERR_INTERNAL, loc, NULL, "dataset get: map %d failed without saying why", k);
  for (int i = 0; i < ds->n; i++)
    if (!out[i] || ts_failed()) {
      for (int j = 0; j < ds->n; j++)
        out[j] = NULL;
      return false;
    }
  return true;
}
