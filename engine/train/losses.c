/* losses.c — Keras' losses and its streaming accuracy (tracescope-train.h). */
#include "train-private.h"

ts_tensor *ts_loss_sparse_softmax_cross_entropy_at(ts_loc loc, ts_tensor *labels,
                                                   ts_tensor *logits)
{
  ts_tensor *loss = NULL;
  TS_NAME_SCOPE("sparse_categorical_crossentropy") {
    loss = ts_reduce_mean_at(loc, ts_sparse_softmax_cross_entropy_at(loc, labels, logits),
                             TS_ALL_AXES, false);
  }
  return loss;
}

ts_tensor *ts_loss_mean_squared_error_at(ts_loc loc, ts_tensor *y_true, ts_tensor *y_pred)
{
  ts_tensor *loss = NULL;
  TS_NAME_SCOPE("mean_squared_error") {
    ts_tensor *d = ts_sub_at(loc, y_pred, y_true);
    loss = ts_reduce_mean_at(loc, ts_mul_at(loc, d, d), TS_ALL_AXES, false);
  }
  return loss;
}

/* ---- accuracy ------------------------------------------------------------------ */

struct ts_metric {
  char *name;
  ts_tensor *total, *count; /* f32 scalar variables */
};

ts_metric *ts_accuracy_new(const char *name)
{
  ts_metric *m = g_new0(ts_metric, 1);
  m->name = g_strdup(name && *name ? name : "accuracy");
  char *total = g_strdup_printf("%s/total", m->name), *count = g_strdup_printf("%s/count", m->name);
  ts_scope *scope = ts_scope_begin();
  TS_INIT_SCOPE {
    m->total = ts_variable_new(ts_scalar_f32(0), total);
    m->count = ts_variable_new(ts_scalar_f32(0), count);
  }
  ts_scope_end(scope);
  g_free(total);
  g_free(count);
  if (!m->total || !m->count) {
    ts_metric_free(m);
    return NULL;
  }
  return m;
}

void ts_metric_free(ts_metric *m)
{
  if (!m)
    return;
  ts_tensor_unref(m->total);
  ts_tensor_unref(m->count);
  g_free(m->name);
  g_free(m);
}

bool ts_metric_update_at(ts_loc loc, ts_metric *m, ts_tensor *labels, ts_tensor *logits)
{
  if (!m) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL, "metric update: the metric is NULL");
    return false;
  }
  if (labels && !ts_dtype_is_integer(ts_tensor_dtype(labels))) {
    char *spec = ts_shape_dtype_string(ts_tensor_dtype(labels), ts_tensor_shape(labels));
    ts_error_set(TS_ERR_DTYPE, loc, NULL, "%s: labels must be integers, got %s", m->name, spec);
    free(spec);
    return false;
  }
  bool ok = false;
  ts_scope *scope = ts_scope_begin();
  TS_NAME_SCOPE(m->name) {
    ts_tensor *predicted = ts_argmax_at(loc, logits, -1);
    ts_tensor *hits = ts_cast_at(loc, ts_equal_at(loc, predicted, ts_cast_at(loc, labels, TS_I64)),
                                 TS_F32);
    ok = hits && ts_tensor_rank(hits) == ts_tensor_rank(labels);
    if (hits && !ok)
      ts_error_set(TS_ERR_SHAPE, loc, NULL, "%s: labels must have one dimension less than logits",
                   m->name);
    if (ok) {
      ts_assign_add_at(loc, m->total, ts_reduce_sum_at(loc, hits, TS_ALL_AXES, false));
      /* the batch's size: a constant where the shape is known */
      int64_t n = ts_tensor_size(hits);
      ts_assign_add_at(loc, m->count,
                       n >= 0 ? ts_scalar_f32((float)n)
                              : ts_reduce_sum_at(loc, ts_ones_like_at(loc, hits), TS_ALL_AXES, false));
      ok = !ts_failed();
    }
  }
  ts_scope_end(scope);
  return ok;
}

ts_tensor *ts_metric_result_at(ts_loc loc, ts_metric *m)
{
  if (!m) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL, "metric result: the metric is NULL");
    return NULL;
  }
  ts_tensor *r = NULL;
  TS_NAME_SCOPE(m->name) {
    /* count is a whole number: at least 1 once updated, and total 0 before */
    r = ts_div_at(loc, ts_read_at(loc, m->total),
                  ts_maximum_at(loc, ts_read_at(loc, m->count), ts_scalar_f32(1)));
  }
  return r;
}

bool ts_metric_reset_at(ts_loc loc, ts_metric *m)
{
  if (!m) {
    ts_error_set(TS_ERR_INVALID_ARGUMENT, loc, NULL, "metric reset: the metric is NULL");
    return false;
  }
  ts_scope *scope = ts_scope_begin();
  TS_NAME_SCOPE(m->name) {
    ts_assign_at(loc, m->total, ts_scalar_f32(0));
    ts_assign_at(loc, m->count, ts_scalar_f32(0));
  }
  ts_scope_end(scope);
  return !ts_failed();
}
