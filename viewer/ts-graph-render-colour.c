/* ts-graph-render-colour.c — the colour modes (op type, device, compute
 * time, function) with values rolled up to groups. */
#include "ts-graph-render-private.h"

#include <math.h>
#include <string.h>

void _ts_set_source(cairo_t *cr, _ts_rgba c)
{
  cairo_set_source_rgba(cr, c.r, c.g, c.b, c.a);
}

/* ---- the values table --------------------------------------------------------------- */

typedef struct value_entry {
  double value;
  bool has_value;
  int category; /* index into categories, -1: none */
  char *note;   /* for the tooltip, or NULL */
} value_entry;

/* An input a run copied to the device its node ran on. */
typedef struct value_copy {
  const ts_node *node;
  int input;
  int category; /* the device copied to */
} value_copy;

struct ts_render_values {
  gint refcount;
  char *unit;
  GHashTable *entries;        /* const ts_node * -> value_entry */
  GPtrArray *categories;      /* names, first seen first */
  GHashTable *category_index; /* name -> index + 1 */
  GArray *copies;             /* value_copy, one per (node, input) */
};

static void entry_free(gpointer data)
{
  value_entry *e = data;
  g_free(e->note);
  g_free(e);
}

ts_render_values *ts_render_values_new(const char *unit)
{
  ts_render_values *v = g_new0(ts_render_values, 1);
  v->refcount = 1;
  v->unit = g_strdup(unit);
  v->entries = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, entry_free);
  v->categories = g_ptr_array_new_with_free_func(g_free);
  v->category_index = g_hash_table_new(g_str_hash, g_str_equal);
  v->copies = g_array_new(FALSE, FALSE, sizeof(value_copy));
  return v;
}

ts_render_values *ts_render_values_ref(ts_render_values *values)
{
  g_return_val_if_fail(values != NULL, NULL);
  g_atomic_int_inc(&values->refcount);
  return values;
}

void ts_render_values_unref(ts_render_values *values)
{
  if (!values || !g_atomic_int_dec_and_test(&values->refcount))
    return;
  g_hash_table_destroy(values->entries);
  g_hash_table_destroy(values->category_index);
  g_ptr_array_unref(values->categories);
  g_array_unref(values->copies);
  g_free(values->unit);
  g_free(values);
}

static value_entry *entry_for(ts_render_values *v, const ts_node *node)
{
  value_entry *e = g_hash_table_lookup(v->entries, node);
  if (!e) {
    e = g_new0(value_entry, 1);
    e->category = -1;
    g_hash_table_insert(v->entries, (gpointer)node, e);
  }
  return e;
}

void ts_render_values_set(ts_render_values *values, const ts_node *node, double value)
{
  g_return_if_fail(values != NULL && node != NULL);
  value_entry *e = entry_for(values, node);
  e->value = value;
  e->has_value = isfinite(value);
}

static int category_index(ts_render_values *values, const char *category)
{
  int index = GPOINTER_TO_INT(g_hash_table_lookup(values->category_index, category)) - 1;
  if (index < 0) {
    char *name = g_strdup(category);
    g_ptr_array_add(values->categories, name);
    index = (int)values->categories->len - 1;
    g_hash_table_insert(values->category_index, name, GINT_TO_POINTER(index + 1));
  }
  return index;
}

void ts_render_values_set_category(ts_render_values *values, const ts_node *node, const char *category)
{
  g_return_if_fail(values != NULL && node != NULL && category != NULL);
  entry_for(values, node)->category = category_index(values, category);
}

void ts_render_values_add_copy(ts_render_values *values, const ts_node *node, int input,
                               const char *device)
{
  g_return_if_fail(values != NULL && node != NULL && device != NULL);
  g_return_if_fail(input >= 0 && input < ts_node_n_inputs(node));
  int category = category_index(values, device);
  for (guint i = 0; i < values->copies->len; i++) {
    value_copy *k = &g_array_index(values->copies, value_copy, i);
    if (k->node == node && k->input == input) {
      k->category = category;
      return;
    }
  }
  value_copy k = { node, input, category };
  g_array_append_val(values->copies, k);
}

int ts_render_values_n_copies(const ts_render_values *values)
{
  g_return_val_if_fail(values != NULL, 0);
  return (int)values->copies->len;
}

const ts_node *ts_render_values_copy(const ts_render_values *values, int i, int *input,
                                     const char **device)
{
  g_return_val_if_fail(values != NULL, NULL);
  if (i < 0 || i >= (int)values->copies->len)
    return NULL;
  const value_copy *k = &g_array_index(values->copies, value_copy, i);
  if (input)
    *input = k->input;
  if (device)
    *device = g_ptr_array_index(values->categories, k->category);
  return k->node;
}

void ts_render_values_set_note(ts_render_values *values, const ts_node *node, const char *note)
{
  g_return_if_fail(values != NULL && node != NULL);
  value_entry *e = entry_for(values, node);
  g_free(e->note);
  e->note = g_strdup(note);
}

const char *ts_render_values_note(const ts_render_values *values, const ts_node *node)
{
  g_return_val_if_fail(values != NULL, NULL);
  const value_entry *e = g_hash_table_lookup(values->entries, node);
  return e ? e->note : NULL;
}

const char *_ts_render_values_unit(const ts_render_values *values)
{
  return values ? values->unit : NULL;
}

bool ts_render_values_lookup(const ts_render_values *values, const ts_node *node, double *value)
{
  g_return_val_if_fail(values != NULL, false);
  const value_entry *e = g_hash_table_lookup(values->entries, node);
  if (!e || !e->has_value)
    return false;
  if (value)
    *value = e->value;
  return true;
}

const char *ts_render_values_category(const ts_render_values *values, const ts_node *node)
{
  g_return_val_if_fail(values != NULL, NULL);
  const value_entry *e = g_hash_table_lookup(values->entries, node);
  return e && e->category >= 0 ? g_ptr_array_index(values->categories, e->category) : NULL;
}

/* ---- colouring state ----------------------------------------------------------------- */

_ts_colours *_ts_colours_new(void)
{
  _ts_colours *c = g_new0(_ts_colours, 1);
  c->ops = g_array_new(FALSE, FALSE, sizeof(_ts_op_count));
  return c;
}

static void drop_rollups(_ts_colours *c)
{
  g_clear_pointer(&c->op, g_free);
  g_clear_pointer(&c->sum, g_free);
  g_clear_pointer(&c->counts, g_free);
  g_clear_pointer(&c->copies, g_array_unref);
  g_clear_pointer(&c->model, ts_view_model_unref);
  c->n_items = 0;
}

void _ts_colours_free(_ts_colours *c)
{
  if (!c)
    return;
  drop_rollups(c);
  ts_render_values_unref(c->values);
  g_array_free(c->ops, TRUE);
  g_free(c);
}

void _ts_colours_set_mode(_ts_colours *c, ts_render_colouring mode, ts_render_values *values)
{
  if (values)
    ts_render_values_ref(values);
  ts_render_values_unref(c->values);
  c->values = values;
  c->mode = mode;
  drop_rollups(c); /* _ts_colours_update rebuilds them */
}

ts_render_colouring _ts_colours_mode(const _ts_colours *c)
{
  return c->mode;
}

static bool categorical(const _ts_colours *c)
{
  return c->mode == TS_RENDER_COLOUR_DEVICE || c->mode == TS_RENDER_COLOUR_FUNCTION;
}

/* The category of an op node: its index, c->n_cat for none. */
static int category_of(const _ts_colours *c, const ts_node *node)
{
  if (!c->values)
    return c->n_cat; /* where ops ran is known from a profile only (soft placement) */
  const value_entry *e = g_hash_table_lookup(c->values->entries, node);
  if (!e || e->category < 0)
    return c->n_cat;
  return MIN(e->category, TS_MAX_STRIPES - 1);
}

/* The model's items at both ends of each copied input (its producer's
 * and its node's), for the edges that carry them. */
static void build_copies(_ts_colours *c, ts_view_model *model)
{
  c->copies = g_array_new(FALSE, FALSE, sizeof(_ts_copy));
  for (guint i = 0; i < c->values->copies->len; i++) {
    const value_copy *k = &g_array_index(c->values->copies, value_copy, i);
    const ts_graph *g = ts_node_graph(k->node);
    ts_port from = ts_node_input(k->node, k->input);
    _ts_copy e = { ts_view_model_item_for_node(model, g, from.node),
                   ts_view_model_item_for_node(model, g, ts_node_id(k->node)),
                   MIN(k->category, TS_MAX_STRIPES - 1) };
    if (e.src >= 0 && e.dst >= 0)
      g_array_append_val(c->copies, e);
  }
}

static void build_rollups(_ts_colours *c, ts_view_model *model)
{
  c->model = ts_view_model_ref(model);
  c->n_items = ts_view_model_n_items(model);
  c->n_cat = 0;
  if (categorical(c) && c->values) {
    int n = (int)c->values->categories->len;
    for (int i = 0; i < MIN(n, TS_MAX_STRIPES); i++)
      c->cat_name[c->n_cat++] = g_ptr_array_index(c->values->categories, i);
    if (n > TS_MAX_STRIPES)
      c->cat_name[TS_MAX_STRIPES - 1] = "other";
  }
  int stride = c->n_cat + 1;
  c->op = g_new(int, c->n_items);
  c->sum = g_new(double, c->n_items);
  c->counts = g_new0(int, (gsize)c->n_items * (gsize)stride);
  for (int i = 0; i < c->n_items; i++) {
    const ts_node *node = ts_view_item_node(model, i);
    c->op[i] = node ? (int)ts_node_op(node) : -1;
    c->sum[i] = NAN;
  }
  for (int item = 0; item < c->n_items; item++) {
    const ts_node *node = ts_view_item_node(model, item);
    if (!node)
      continue;
    double v = NAN;
    if (c->mode == TS_RENDER_COLOUR_COMPUTE_TIME && c->values)
      ts_render_values_lookup(c->values, node, &v);
    int cat = categorical(c) ? category_of(c, node) : c->n_cat;
    for (int up = item; up >= 0; up = ts_view_item_parent(model, up)) {
      if (!isnan(v))
        c->sum[up] = isnan(c->sum[up]) ? v : c->sum[up] + v;
      c->counts[(gsize)up * (gsize)stride + (gsize)cat]++;
    }
  }
  if (c->mode == TS_RENDER_COLOUR_DEVICE && c->values)
    build_copies(c, model);
}

int _ts_colours_copy_to(const _ts_colours *c, const ts_view_edge *edge)
{
  if (c->mode != TS_RENDER_COLOUR_DEVICE || !c->copies || edge->control)
    return -1;
  for (guint i = 0; i < c->copies->len; i++) {
    const _ts_copy *k = &g_array_index(c->copies, _ts_copy, i);
    if (k->category < c->n_cat &&
        ts_view_model_representative(c->model, NULL, k->src) == edge->src &&
        ts_view_model_representative(c->model, NULL, k->dst) == edge->dst)
      return k->category;
  }
  return -1;
}

/* By family, so that the legend's colours run in related runs, then by name. */
static int cmp_op_count(const void *a, const void *b)
{
  const _ts_op_count *x = a, *y = b;
  int fx = _ts_op_family_of(x->op), fy = _ts_op_family_of(y->op);
  if (fx != fy)
    return fx - fy;
  return strcmp(x->name, y->name);
}

void _ts_colours_update(_ts_colours *c, ts_view_model *model, const ts_view_layout *layout)
{
  if (c->model != model) {
    drop_rollups(c);
    if (model)
      build_rollups(c, model);
  }
  c->max = 0;
  c->shown_no_data = false;
  g_array_set_size(c->ops, 0);
  if (!model || !layout)
    return;
  GHashTable *ops = g_hash_table_new(g_str_hash, g_str_equal); /* op -> index + 1 */
  int stride = c->n_cat + 1;
  for (int i = 0; i < ts_view_layout_n_boxes(layout); i++) {
    const ts_view_box *b = ts_view_layout_box(layout, i);
    if (b->shape == TS_VIEW_SHAPE_CONTAINER)
      continue;
    if (!isnan(c->sum[b->item]))
      c->max = MAX(c->max, c->sum[b->item]);
    else
      c->shown_no_data = c->shown_no_data || c->mode == TS_RENDER_COLOUR_COMPUTE_TIME;
    if (c->counts[(gsize)b->item * (gsize)stride + (gsize)c->n_cat] > 0)
      c->shown_no_data = c->shown_no_data || categorical(c);
    const char *op = ts_view_item_op_name(model, b->item);
    if (!op)
      continue;
    int k = GPOINTER_TO_INT(g_hash_table_lookup(ops, op)) - 1;
    if (k < 0) {
      g_array_append_val(c->ops, ((_ts_op_count){ op, c->op[b->item], 0 }));
      k = (int)c->ops->len - 1;
      g_hash_table_insert(ops, (gpointer)op, GINT_TO_POINTER(k + 1));
    }
    g_array_index(c->ops, _ts_op_count, k).count++;
  }
  g_hash_table_destroy(ops);
  g_array_sort(c->ops, cmp_op_count);
}

void _ts_colours_fill(const _ts_colours *c, const _ts_palette *palette, const ts_view_box *box,
                      _ts_fill *out)
{
  out->n = 1;
  out->share[0] = 1;
  int item = box->item;
  const ts_view_model *m = c->model;
  if (c->mode == TS_RENDER_COLOUR_OP_TYPE) {
    out->colour[0] = c->op[item] >= 0 ? _ts_op_colour(palette, c->op[item])
                                      : _ts_group_colour(palette, ts_view_item_template(m, item));
    return;
  }
  if (c->mode == TS_RENDER_COLOUR_COMPUTE_TIME) {
    double v = c->sum[item];
    out->colour[0] = isnan(v) ? palette->no_data : _ts_heat(palette, c->max > 0 ? v / c->max : 0);
    return;
  }
  /* categories: the share of each among the item's ops */
  int stride = c->n_cat + 1;
  const int *counts = &c->counts[(gsize)item * (gsize)stride];
  int total = 0;
  for (int k = 0; k <= c->n_cat; k++)
    total += counts[k];
  out->n = 0;
  for (int k = 0; k <= c->n_cat && total > 0; k++) {
    if (!counts[k])
      continue;
    out->colour[out->n] = k < c->n_cat ? _ts_category_colour(palette, k) : palette->no_data;
    out->share[out->n] = (double)counts[k] / total;
    if (++out->n == TS_MAX_STRIPES)
      break;
  }
  if (out->n == 0) {
    out->n = 1;
    out->colour[0] = palette->no_data;
  }
}
