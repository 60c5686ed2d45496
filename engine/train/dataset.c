/* dataset.c — in-memory datasets after tf.data (tracescope-train.h).  A
 * dataset holds its components as tensors with the elements along the
 * first dimension: examples, or once batched [batches, batch, ...] with a
 * smaller last batch apart.  take, shuffle and batch make new tensors at
 * once (eagerly, even while tracing); map runs when an element is taken,
 * so inside a traced loop it is part of the loop's body. */
#include "train-private.h"

#include <stdlib.h>

#define MAX_MAPS 8

struct ts_dataset {
  int n;                                       /* components */
  ts_tensor *full[TS_DATASET_MAX_COMPONENTS];  /* [elements, ...] */
  ts_tensor *tail[TS_DATASET_MAX_COMPONENTS];  /* batched: the smaller last batch, or NULL */
  bool batched;
  int n_maps;
  ts_dataset_map_fn maps[MAX_MAPS];
  void *map_data[MAX_MAPS];
};

static int64_t n_full(const ts_dataset *ds)
{
  return ts_tensor_dim(ds->full[0], 0);
}

/* A dataset like ds (settings and maps) with new tensors (references taken). */
static ts_dataset *dataset_with(const ts_dataset *ds, ts_tensor *const *full,
                                ts_tensor *const *tail)
{
  for (int i = 0; i < ds->n; i++)
    if (!full[i] || (tail && !tail[i]))
      return NULL;
  ts_dataset *out = g_new(ts_dataset, 1);
  *out = *ds;
  for (int i = 0; i < ds->n; i++) {
    out->full[i] = ts_tensor_ref(full[i]);
    out->tail[i] = tail ? ts_tensor_ref(tail[i]) : NULL;
  }
  return out;
}

static bool check_dataset(const ts_dataset *ds, const char *what)
{
  if (ds)
    return true;
  train_error(TS_ERR_INVALID_ARGUMENT, "dataset %s: the dataset is NULL", what);
  return false;
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
  ts_dataset base = { .n = n };
  return dataset_with(&base, components, NULL);
}

void ts_dataset_free(ts_dataset *ds)
{
  if (!ds)
    return;
  for (int i = 0; i < ds->n; i++) {
    ts_tensor_unref(ds->full[i]);
    ts_tensor_unref(ds->tail[i]);
  }
  g_free(ds);
}

int64_t ts_dataset_cardinality(const ts_dataset *ds)
{
  return ds ? n_full(ds) + (ds->tail[0] != NULL) : -1;
}

int ts_dataset_n_components(const ts_dataset *ds)
{
  return ds ? ds->n : 0;
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

ts_dataset *ts_dataset_take(const ts_dataset *ds, int64_t count)
{
  if (!check_dataset(ds, "take"))
    return NULL;
  int64_t n = n_full(ds);
  if (count < 0 || count > ts_dataset_cardinality(ds))
    count = ts_dataset_cardinality(ds); /* tf.data: -1 (or more than there is) takes all */
  ts_dataset *out = NULL;
  ts_scope *scope = ts_scope_begin();
  TS_INIT_SCOPE {
    ts_tensor *full[TS_DATASET_MAX_COMPONENTS];
    for (int i = 0; i < ds->n; i++)
      full[i] = rows(ds->full[i], 0, count < n ? count : n);
    out = dataset_with(ds, full, count > n ? ds->tail : NULL);
  }
  ts_scope_end(scope);
  return out;
}

/* tf.data's shuffle order over n elements: a buffer of the first
 * buffer_size, each output drawn from it uniformly and replaced by the
 * next element. */
static int64_t *shuffle_order(int64_t n, int64_t buffer_size, uint64_t seed)
{
  int64_t *order = g_try_new(int64_t, n ? n : 1);
  int64_t *buf = g_try_new(int64_t, buffer_size < n ? buffer_size : n ? n : 1);
  if (!order || !buf) {
    g_free(order);
    g_free(buf);
    train_error(TS_ERR_NO_MEMORY, "dataset shuffle: no memory for %lld indices", (long long)n);
    return NULL;
  }
  guint32 seeds[2] = { (guint32)seed, (guint32)(seed >> 32) };
  GRand *rand = g_rand_new_with_seed_array(seeds, 2);
  int64_t filled = 0, next = 0;
  for (; next < n && filled < buffer_size; next++)
    buf[filled++] = next;
  for (int64_t k = 0; k < n; k++) {
    int64_t pick = filled > 1 ? (int64_t)g_rand_double_range(rand, 0, (double)filled) : 0;
    if (pick >= filled)
      pick = filled - 1;
    order[k] = buf[pick];
    if (next < n)
      buf[pick] = next++;
    else
      buf[pick] = buf[--filled];
  }
  g_rand_free(rand);
  g_free(buf);
  return order;
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
  if (ds->tail[0]) {
    train_error(TS_ERR_UNIMPLEMENTED, "dataset shuffle: the dataset's last batch is smaller "
                "(%lld of %lld): shuffle before batch, or batch with drop_remainder",
                (long long)ts_tensor_dim(ds->tail[0], 0), (long long)ts_tensor_dim(ds->full[0], 1));
    return NULL;
  }
  int64_t n = n_full(ds);
  int64_t *order = shuffle_order(n, buffer_size, seed);
  if (!order)
    return NULL;
  ts_dataset *out = NULL;
  ts_scope *scope = ts_scope_begin();
  TS_INIT_SCOPE {
    ts_tensor *perm = ts_constant(TS_I64, TS_SHAPE(n), order);
    ts_tensor *full[TS_DATASET_MAX_COMPONENTS];
    for (int i = 0; i < ds->n; i++)
      full[i] = ts_gather(ds->full[i], perm, 0);
    out = dataset_with(ds, full, NULL);
  }
  ts_scope_end(scope);
  g_free(order);
  return out;
}

ts_dataset *ts_dataset_batch(const ts_dataset *ds, int64_t batch_size, bool drop_remainder)
{
  if (!check_dataset(ds, "batch"))
    return NULL;
  if (batch_size < 1 || ds->batched) {
    train_error(ds->batched ? TS_ERR_UNIMPLEMENTED : TS_ERR_INVALID_ARGUMENT,
                ds->batched ? "dataset batch: the dataset is batched already"
                            : "dataset batch: batch size must be >= 1, got %lld",
                (long long)batch_size);
    return NULL;
  }
  int64_t n = n_full(ds), nb = n / batch_size, rest = n % batch_size;
  ts_dataset *out = NULL;
  ts_scope *scope = ts_scope_begin();
  TS_INIT_SCOPE {
    ts_tensor *full[TS_DATASET_MAX_COMPONENTS], *tail[TS_DATASET_MAX_COMPONENTS];
    for (int i = 0; i < ds->n; i++) {
      ts_shape s = ds->full[i]->shape;
      if (s.rank == TS_MAX_RANK) {
        train_error(TS_ERR_SHAPE, "dataset batch: component %d has rank %d already", i, s.rank);
        break;
      }
      memmove(s.dim + 2, s.dim + 1, sizeof(int64_t) * (size_t)(s.rank - 1));
      s.rank++;
      s.dim[0] = nb;
      s.dim[1] = batch_size;
      full[i] = ts_reshape(rows(ds->full[i], 0, nb * batch_size), s);
      tail[i] = rows(ds->full[i], nb * batch_size, rest);
    }
    if (!ts_failed()) {
      ts_dataset b = *ds;
      b.batched = true;
      out = dataset_with(&b, full, rest && !drop_remainder ? tail : NULL);
    }
  }
  ts_scope_end(scope);
  return out;
}

ts_dataset *ts_dataset_map(const ts_dataset *ds, ts_dataset_map_fn fn, void *user_data)
{
  if (!check_dataset(ds, "map"))
    return NULL;
  if (!fn || ds->n_maps == MAX_MAPS) {
    train_error(TS_ERR_INVALID_ARGUMENT, "dataset map: %s", fn ? "at most 8 maps" : "fn is NULL");
    return NULL;
  }
  ts_dataset *out = dataset_with(ds, ds->full, ds->tail[0] ? ds->tail : NULL);
  out->maps[out->n_maps] = fn;
  out->map_data[out->n_maps++] = user_data;
  return out;
}

ts_iterable ts_dataset_over(const ts_dataset *ds)
{
  if (!check_dataset(ds, "iteration"))
    return (ts_iterable){ 0 };
  if (ds->tail[0] && ts_tracing()) {
    train_error(TS_ERR_SHAPE, "dataset iteration: traced, a loop's batches must have one shape, "
                "but the last batch has %lld of %lld (batch with drop_remainder)",
                (long long)ts_tensor_dim(ds->tail[0], 0), (long long)ts_tensor_dim(ds->full[0], 1));
    return (ts_iterable){ 0 };
  }
  return TS_RANGE(ts_scalar_i64(0), ts_scalar_i64(ts_dataset_cardinality(ds)), ts_scalar_i64(1));
}

bool ts_dataset_get_at(ts_loc loc, const ts_dataset *ds, ts_tensor *index, ts_tensor **out)
{
  if (!ds || !out) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL, "dataset get: NULL %s", ds ? "out" : "dataset");
    return false;
  }
  /* the smaller last batch is there eagerly, at its index */
  bool last = ds->tail[0] && index && index->backend && ts_tensor_size(index) == 1 &&
              ts_tensor_get_i64(index, 0) == n_full(ds);
  for (int i = 0; i < ds->n; i++)
    out[i] = last ? ts_identity_at(loc, ds->tail[i]) : ts_gather_at(loc, ds->full[i], index, 0);
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
