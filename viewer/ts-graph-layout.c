/* ts-graph-layout.c — bottom-up Graphviz layout of the expanded groups of a
 * ts_view_model, on one worker thread, cached per subtree state, composed
 * into absolute boxes and edge paths. */
#include "ts-graph-layout.h"
#include "ts-graph-route.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <math.h>
#include <string.h>

/* ---- one group's layout (cached) ---------------------------------------------- */

typedef struct gl_edge {
  int start, n_points; /* in points */
} gl_edge;

/* Positions relative to the group's content area; y down. */
typedef struct glayout {
  double width, height;
  int n;                /* laid-out children */
  int *child;           /* item ids */
  double *cx, *cy;      /* node centres */
  int n_edges;          /* = the model's group edges, same order */
  gl_edge *edges;
  ts_view_point *points;
  guint64 last_used;
} glayout;

static void glayout_free(glayout *gl)
{
  g_free(gl->child);
  g_free(gl->cx);
  g_free(gl->cy);
  g_free(gl->edges);
  g_free(gl->points);
  g_free(gl);
}

/* ---- the result ------------------------------------------------------------------- */

struct ts_view_layout {
  ts_view_model *model; /* a reference: boxes borrow its labels */
  ts_view_state *state;
  double width, height;
  GArray *boxes;        /* ts_view_box */
  GArray *paths;        /* ts_view_path */
  GArray *points;       /* ts_view_point, sliced per path */
  int *item_box;        /* per item, -1 if not shown */
  GStringChunk *strings;
  int n_groups, n_computed;
  guint64 duration_ns;
};

void ts_view_layout_free(ts_view_layout *layout)
{
  if (!layout)
    return;
  ts_view_model_unref(layout->model);
  ts_view_state_free(layout->state);
  g_array_free(layout->boxes, TRUE);
  g_array_free(layout->paths, TRUE);
  g_array_free(layout->points, TRUE);
  g_free(layout->item_box);
  g_string_chunk_free(layout->strings);
  g_free(layout);
}

double ts_view_layout_width(const ts_view_layout *layout)
{
  g_return_val_if_fail(layout != NULL, 0);
  return layout->width;
}

double ts_view_layout_height(const ts_view_layout *layout)
{
  g_return_val_if_fail(layout != NULL, 0);
  return layout->height;
}

int ts_view_layout_n_boxes(const ts_view_layout *layout)
{
  g_return_val_if_fail(layout != NULL, 0);
  return (int)layout->boxes->len;
}

const ts_view_box *ts_view_layout_box(const ts_view_layout *layout, int i)
{
  g_return_val_if_fail(layout != NULL && i >= 0 && i < (int)layout->boxes->len, NULL);
  return &g_array_index(layout->boxes, ts_view_box, i);
}

int ts_view_layout_box_for_item(const ts_view_layout *layout, int item)
{
  g_return_val_if_fail(layout != NULL, -1);
  if (item < 0 || item >= ts_view_model_n_items(layout->model))
    return -1;
  return layout->item_box[item];
}

static bool box_contains(const ts_view_box *b, double x, double y)
{
  return x >= b->x && x <= b->x + b->width && y >= b->y && y <= b->y + b->height;
}

int ts_view_layout_box_at(const ts_view_layout *layout, double x, double y)
{
  g_return_val_if_fail(layout != NULL, -1);
  int best = -1;
  /* later boxes lie on top of earlier ones (children after containers) */
  for (int i = (int)layout->boxes->len - 1; i >= 0; i--) {
    const ts_view_box *b = &g_array_index(layout->boxes, ts_view_box, i);
    if (!box_contains(b, x, y))
      continue;
    if (b->shape == TS_VIEW_SHAPE_DOT)
      return i;
    if (best < 0)
      best = i;
  }
  return best;
}

int ts_view_layout_n_paths(const ts_view_layout *layout)
{
  g_return_val_if_fail(layout != NULL, 0);
  return (int)layout->paths->len;
}

const ts_view_path *ts_view_layout_path(const ts_view_layout *layout, int i)
{
  g_return_val_if_fail(layout != NULL && i >= 0 && i < (int)layout->paths->len, NULL);
  return &g_array_index(layout->paths, ts_view_path, i);
}

const ts_view_state *ts_view_layout_state(const ts_view_layout *layout)
{
  g_return_val_if_fail(layout != NULL, NULL);
  return layout->state;
}

int ts_view_layout_n_groups(const ts_view_layout *layout)
{
  g_return_val_if_fail(layout != NULL, 0);
  return layout->n_groups;
}

int ts_view_layout_n_computed(const ts_view_layout *layout)
{
  g_return_val_if_fail(layout != NULL, 0);
  return layout->n_computed;
}

guint64 ts_view_layout_duration_ns(const ts_view_layout *layout)
{
  g_return_val_if_fail(layout != NULL, 0);
  return layout->duration_ns;
}

/* ---- the layouter ------------------------------------------------------------------ */

struct ts_view_layouter {
  gint refcount;
  ts_view_model *model;
  ts_view_layout_options opts;
  gint generation; /* the newest async request */
  gint closed;
  /* touched by the worker thread only */
  GHashTable *cache; /* "group|subtree state" -> glayout */
  guint64 requests;
};

static ts_view_layouter *layouter_ref(ts_view_layouter *l)
{
  g_atomic_int_inc(&l->refcount);
  return l;
}

static void layouter_unref(ts_view_layouter *l)
{
  if (!g_atomic_int_dec_and_test(&l->refcount))
    return;
  g_hash_table_destroy(l->cache);
  ts_view_model_unref(l->model);
  g_free(l);
}

ts_view_layouter *ts_view_layouter_new(ts_view_model *model, const ts_view_layout_options *options)
{
  g_return_val_if_fail(model != NULL, NULL);
  ts_view_layouter *l = g_new0(ts_view_layouter, 1);
  l->refcount = 1;
  l->model = ts_view_model_ref(model);
  l->opts = options ? *options : TS_VIEW_LAYOUT_OPTIONS_DEFAULT;
  l->cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)glayout_free);
  return l;
}

void ts_view_layouter_free(ts_view_layouter *layouter)
{
  if (!layouter)
    return;
  g_atomic_int_set(&layouter->closed, 1);
  layouter_unref(layouter);
}

ts_view_model *ts_view_layouter_model(const ts_view_layouter *layouter)
{
  g_return_val_if_fail(layouter != NULL, NULL);
  return layouter->model;
}

/* ---- how big each item is ------------------------------------------------------------ */

typedef struct look {
  ts_view_shape shape;
  const char *line1;
  const char *line2;  /* NULL, the model's string or buf */
  char buf[48];
  double w, h;        /* the shape */
  double side;        /* room for dots on each side */
  int n_dots, rows;
} look;

static double text_width(const ts_view_layout_options *o, const char *text)
{
  if (!text || !*text)
    return 0;
  if (o->measure) {
    double w = 0, h = 0;
    o->measure(text, &w, &h, o->measure_data);
    return w;
  }
  return (double)g_utf8_strlen(text, -1) * o->char_width;
}

static void count_line(char *buf, size_t size, int n_ops)
{
  g_snprintf(buf, size, n_ops == 1 ? "%d op" : "%d ops", n_ops);
}


/* A Print node says what it prints: its template, quoted ("\"x = {}\""),
 * cut with "…" to fit buf.  False for any other node. */
static gboolean print_text(const ts_node *node, char *buf, gsize size)
{
  if (!node || ts_node_op(node) != TS_OP_PRINT || ts_node_n_attrs(node) < 1)
    return FALSE;
  char *text = ts_node_attr_to_string(node, 0);
  if (!text)
    return FALSE;
  enum { MAX_CHARS = 24 };
  glong n = g_utf8_strlen(text, -1);
  g_autofree char *cut = g_utf8_substring(text, 0, MIN(n, MAX_CHARS));
  g_snprintf(buf, size, "%s%s", cut, n > MAX_CHARS ? "…" : "");
  free(text);
  return TRUE;
}

/* The look of a visible item; `inner` is its own layout when expanded. */
static void item_look(const ts_view_layouter *l, int item, const glayout *inner, look *lk)
{
  const ts_view_model *m = l->model;
  const ts_view_layout_options *o = &l->opts;
  ts_view_item_kind kind = ts_view_item_kind_of(m, item);
  int n_ops = ts_view_item_n_ops(m, item);
  memset(lk, 0, sizeof *lk);
  lk->line1 = ts_view_item_label(m, item);
  lk->line2 = lk->buf;
  if (inner) {
    lk->shape = TS_VIEW_SHAPE_CONTAINER;
    count_line(lk->buf, sizeof lk->buf, n_ops);
    double header = text_width(o, lk->line1) + text_width(o, lk->line2) + 3 * o->pad;
    lk->w = MAX(inner->width + 2 * o->group_pad, header);
    lk->h = inner->height + 2 * o->group_pad + o->header_height;
    return;
  }
  if (kind == TS_VIEW_ITEM_OP) {
    lk->shape = TS_VIEW_SHAPE_ELLIPSE;
    lk->line1 = ts_view_item_op_name(m, item);
    const char *label = ts_view_item_label(m, item);
    lk->line2 = strcmp(label, lk->line1) != 0 ? label : NULL;
    if (print_text(ts_view_item_node(m, item), lk->buf, sizeof lk->buf))
      lk->line2 = lk->buf;
  } else if (kind == TS_VIEW_ITEM_SERIES) {
    lk->shape = TS_VIEW_SHAPE_SERIES;
    int n = ts_view_item_n_children(m, item);
    char each[24];
    count_line(each, sizeof each, n ? n_ops / n : 0);
    g_snprintf(lk->buf, sizeof lk->buf, "%d \u00d7 %s", n, each);
  } else {
    lk->shape = TS_VIEW_SHAPE_BOX;
    count_line(lk->buf, sizeof lk->buf, n_ops);
  }
  double tw = MAX(text_width(o, lk->line1), text_width(o, lk->line2));
  double th = (lk->line2 ? 2 : 1) * o->line_height;
  if (lk->shape == TS_VIEW_SHAPE_ELLIPSE) {
    lk->w = MAX(tw * 1.25 + 2 * o->pad, 3 * o->line_height);
    lk->h = th + 2 * o->pad;
  } else {
    lk->w = MAX(tw + 3 * o->pad, 3 * o->line_height);
    lk->h = th + 2 * o->pad + (lk->shape == TS_VIEW_SHAPE_SERIES ? 4 : 0);
  }
  lk->n_dots = ts_view_item_n_dots(m, item);
  if (lk->n_dots) {
    lk->rows = MAX(1, (int)(lk->h / o->dot_pitch));
    int cols = (lk->n_dots + lk->rows - 1) / lk->rows;
    lk->side = cols * o->dot_pitch + 2;
  }
}

/* ---- one group through dot ----------------------------------------------------------- */

static char *inches(char *buf, size_t size, double px)
{
  g_ascii_formatd(buf, (int)size, "%.4f", px / 72.0);
  return buf;
}

static double dist2(ts_view_point a, ts_view_point b)
{
  return (a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y);
}

typedef struct node_size {
  double w, h; /* the node dot sees: shape plus dots on both sides */
} node_size;

/* Lays out `group`'s children with the given node sizes.  NULL + error. */
static glayout *run_dot(GVC_t *gvc, const ts_view_layouter *l, int group, const GArray *kids,
                        const node_size *sizes, GError **error)
{
  const ts_view_model *m = l->model;
  int n = (int)kids->len;
  int n_edges = ts_view_group_n_edges(m, group);
  glayout *gl = g_new0(glayout, 1);
  gl->n = n;
  gl->child = g_memdup2(kids->data, sizeof(int) * (gsize)n);
  gl->cx = g_new0(double, n);
  gl->cy = g_new0(double, n);
  gl->n_edges = n_edges;
  gl->edges = g_new0(gl_edge, n_edges);
  if (n == 0)
    return gl;

  char buf[G_ASCII_DTOSTR_BUF_SIZE], name[24];
  Agraph_t *g = agopen("g", Agdirected, NULL);
  agattr(g, AGRAPH, "rankdir", "BT");
  agattr(g, AGRAPH, "nodesep", inches(buf, sizeof buf, l->opts.node_sep));
  agattr(g, AGRAPH, "ranksep", inches(buf, sizeof buf, l->opts.rank_sep));
  if (n > 64) {
    /* a safety net against dot's worst cases; quality holds up */
    agattr(g, AGRAPH, "nslimit", "2");
    agattr(g, AGRAPH, "nslimit1", "2");
    agattr(g, AGRAPH, "mclimit", "0.5");
  }
  agattr(g, AGNODE, "shape", "box");
  agattr(g, AGNODE, "fixedsize", "true");
  agattr(g, AGNODE, "label", "");
  Agsym_t *width = agattr(g, AGNODE, "width", "1");
  Agsym_t *height = agattr(g, AGNODE, "height", "1");
  agattr(g, AGEDGE, "dir", "none");
  Agsym_t *constraint = agattr(g, AGEDGE, "constraint", "true");

  GHashTable *index = g_hash_table_new(g_direct_hash, g_direct_equal);
  Agnode_t **nodes = g_new(Agnode_t *, n);
  for (int k = 0; k < n; k++) {
    g_snprintf(name, sizeof name, "n%d", k);
    nodes[k] = agnode(g, name, 1);
    agxset(nodes[k], width, inches(buf, sizeof buf, sizes[k].w));
    agxset(nodes[k], height, inches(buf, sizeof buf, sizes[k].h));
    g_hash_table_insert(index, GINT_TO_POINTER(g_array_index(kids, int, k) + 1), GINT_TO_POINTER(k + 1));
  }
  /* Sources feeding many children would make dot crawl: their edges do not
   * constrain ranks (the model extracts such ops; groups can still do it). */
  int *out_degree = g_new0(int, n);
  int *tail = g_new(int, n_edges), *head = g_new(int, n_edges);
  for (int i = 0; i < n_edges; i++) {
    const ts_view_group_edge *ge = ts_view_group_edge_at(m, group, i);
    tail[i] = GPOINTER_TO_INT(g_hash_table_lookup(index, GINT_TO_POINTER(ge->a + 1))) - 1;
    head[i] = GPOINTER_TO_INT(g_hash_table_lookup(index, GINT_TO_POINTER(ge->b + 1))) - 1;
    if (tail[i] >= 0 && head[i] >= 0 && !ge->control)
      out_degree[tail[i]]++;
  }
  Agedge_t **edges = g_new0(Agedge_t *, n_edges);
  for (int i = 0; i < n_edges; i++) {
    if (tail[i] < 0 || head[i] < 0)
      continue;
    const ts_view_group_edge *ge = ts_view_group_edge_at(m, group, i);
    edges[i] = agedge(g, nodes[tail[i]], nodes[head[i]], NULL, 1);
    if (ge->control || out_degree[tail[i]] > 8)
      agxset(edges[i], constraint, "false");
  }

  glayout *result = gl;
  if (gvLayout(gvc, g, "dot") != 0) {
    g_set_error(error, TS_VIEW_ERROR, TS_VIEW_ERROR_LAYOUT,
                "Graphviz dot failed to lay out group '%s' (%d nodes, %d edges); its reasons are on stderr",
                ts_view_item_name(m, group), n, n_edges);
    glayout_free(gl);
    result = NULL;
  } else {
    boxf bb = GD_bb(g);
    gl->width = bb.UR.x - bb.LL.x;
    gl->height = bb.UR.y - bb.LL.y;
    for (int k = 0; k < n; k++) {
      gl->cx[k] = ND_coord(nodes[k]).x - bb.LL.x;
      gl->cy[k] = bb.UR.y - ND_coord(nodes[k]).y;
    }
    GArray *pts = g_array_new(FALSE, FALSE, sizeof(ts_view_point));
    for (int i = 0; i < n_edges; i++) {
      gl->edges[i].start = (int)pts->len;
      splines *spl = edges[i] ? ED_spl(edges[i]) : NULL;
      for (int b = 0; spl && b < spl->size; b++) {
        const bezier *bz = &spl->list[b];
        /* consecutive beziers share their joint */
        for (int p = pts->len > (guint)gl->edges[i].start ? 1 : 0; p < bz->size; p++) {
          ts_view_point q = { bz->list[p].x - bb.LL.x, bb.UR.y - bz->list[p].y };
          g_array_append_val(pts, q);
        }
      }
      int np = (int)pts->len - gl->edges[i].start;
      if (np < 4 || (np - 1) % 3 != 0) {
        g_array_set_size(pts, (guint)gl->edges[i].start); /* no usable spline: drawn straight */
        np = 0;
      }
      gl->edges[i].n_points = np;
      if (np) {
        /* dot may hand back reversed edges head first */
        ts_view_point *p = &g_array_index(pts, ts_view_point, gl->edges[i].start);
        ts_view_point t = { gl->cx[tail[i]], gl->cy[tail[i]] };
        ts_view_point h = { gl->cx[head[i]], gl->cy[head[i]] };
        if (dist2(p[0], t) + dist2(p[np - 1], h) > dist2(p[0], h) + dist2(p[np - 1], t))
          for (int a = 0, z = np - 1; a < z; a++, z--) {
            ts_view_point s = p[a];
            p[a] = p[z];
            p[z] = s;
          }
      }
    }
    gl->points = (ts_view_point *)g_array_free(pts, FALSE);
    gvFreeLayout(gvc, g);
  }
  agclose(g);
  g_free(edges);
  g_free(tail);
  g_free(head);
  g_free(out_degree);
  g_free(nodes);
  g_hash_table_destroy(index);
  return result;
}

/* ---- a whole request on the worker ------------------------------------------------------ */

typedef struct job {
  ts_view_layouter *layouter; /* a reference */
  ts_view_state *state;
  gint generation;            /* 0: never superseded (synchronous runs) */
  GTask *task;                /* asynchronous runs */
  GCancellable *cancellable;
  /* synchronous runs: the caller waits on cond */
  GMutex lock;
  GCond cond;
  bool done;
  ts_view_layout *result;
  GError *error;
} job;

static bool job_stale(const job *j, GError **error)
{
  if (j->cancellable && g_cancellable_set_error_if_cancelled(j->cancellable, error))
    return true;
  if (g_atomic_int_get(&j->layouter->closed)) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "the layouter was freed");
    return true;
  }
  if (j->generation && j->generation != g_atomic_int_get(&j->layouter->generation)) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "superseded by a newer layout request");
    return true;
  }
  return false;
}

typedef struct pass {
  ts_view_layouter *l;
  const ts_view_state *state;
  glayout **layouts;  /* per item: its layout when expanded and visible */
  GString **keys;     /* per item: its subtree state, while computing */
  GArray *order;      /* expanded visible items, children first */
} pass;

static bool is_open(const pass *p, int item)
{
  return ts_view_state_is_expanded(p->state, item) && ts_view_item_is_expandable(p->l->model, item);
}

static void collect_open(pass *p, int item)
{
  const ts_view_model *m = p->l->model;
  for (int c = 0; c < ts_view_item_n_children(m, item); c++) {
    int child = ts_view_item_child(m, item, c);
    if (is_open(p, child))
      collect_open(p, child);
  }
  g_array_append_val(p->order, item);
}

/* Lays out one open group from its children's looks; cached by the
 * expanded items under it. */
static glayout *layout_group(GVC_t *gvc, pass *p, int group, ts_view_layout *out, GError **error)
{
  ts_view_layouter *l = p->l;
  const ts_view_model *m = l->model;
  GString *key = g_string_new(NULL);
  g_string_printf(key, "%d|", group);
  GArray *kids = g_array_new(FALSE, FALSE, sizeof(int));
  for (int c = 0; c < ts_view_item_n_children(m, group); c++) {
    int child = ts_view_item_child(m, group, c);
    if (ts_view_item_is_dot_only(m, child))
      continue;
    g_array_append_val(kids, child);
    if (p->keys[child]) {
      g_string_append_printf(key, "(%s)", p->keys[child]->str);
      g_string_free(p->keys[child], TRUE);
      p->keys[child] = NULL;
    }
  }
  p->keys[group] = key;
  out->n_groups++;
  glayout *gl = g_hash_table_lookup(l->cache, key->str);
  if (!gl) {
    node_size *sizes = g_new(node_size, kids->len);
    for (guint k = 0; k < kids->len; k++) {
      int child = g_array_index(kids, int, k);
      look lk;
      item_look(l, child, p->layouts[child], &lk);
      sizes[k] = (node_size){ lk.w + 2 * lk.side, lk.h };
    }
    gl = run_dot(gvc, l, group, kids, sizes, error);
    g_free(sizes);
    if (gl) {
      g_hash_table_insert(l->cache, g_strdup(key->str), gl);
      out->n_computed++;
    }
  }
  g_array_free(kids, TRUE);
  if (gl)
    gl->last_used = l->requests;
  p->layouts[group] = gl;
  return gl;
}

static int add_box(ts_view_layout *out, const ts_view_box *b)
{
  g_array_append_val(out->boxes, *b);
  return (int)out->boxes->len - 1;
}

/* Places group's children with its content area at (ox, oy). */
static void compose_boxes(pass *p, ts_view_layout *out, int group, double ox, double oy, int parent,
                          double *origin)
{
  const ts_view_layouter *l = p->l;
  const ts_view_layout_options *o = &l->opts;
  const glayout *gl = p->layouts[group];
  origin[2 * group] = ox;
  origin[2 * group + 1] = oy;
  for (int k = 0; k < gl->n; k++) {
    int child = gl->child[k];
    look lk;
    item_look(l, child, p->layouts[child], &lk);
    double cx = ox + gl->cx[k], cy = oy + gl->cy[k];
    ts_view_box b = {
      .item = child, .shape = lk.shape, .x = cx - lk.w / 2, .y = cy - lk.h / 2,
      .width = lk.w, .height = lk.h, .parent = parent, .owner = -1, .line1 = lk.line1,
      .line2 = lk.line2 == lk.buf ? g_string_chunk_insert_const(out->strings, lk.buf) : lk.line2,
    };
    int bi = add_box(out, &b);
    out->item_box[child] = bi;
    if (p->layouts[child]) {
      compose_boxes(p, out, child, b.x + o->group_pad, b.y + o->header_height + o->group_pad, bi,
                    origin);
      continue;
    }
    /* dots in columns left of the shape, centred on it vertically */
    const ts_view_model *m = l->model;
    for (int d = 0; d < lk.n_dots; d++) {
      int col = d / lk.rows, row = d % lk.rows;
      int in_col = MIN(lk.rows, lk.n_dots - col * lk.rows);
      double dx = b.x - 2 - o->dot_pitch * (col + 0.5);
      double dy = cy + (row - (in_col - 1) / 2.0) * o->dot_pitch;
      int dot_item = ts_view_item_dot(m, child, d);
      ts_view_box db = {
        .item = dot_item, .shape = TS_VIEW_SHAPE_DOT, .x = dx - o->dot_size / 2,
        .y = dy - o->dot_size / 2, .width = o->dot_size, .height = o->dot_size,
        .parent = parent, .owner = bi, .line1 = ts_view_item_name(m, dot_item),
      };
      int di = add_box(out, &db);
      if (out->item_box[dot_item] < 0)
        out->item_box[dot_item] = di;
    }
  }
}

static ts_view_point lerp(ts_view_point a, ts_view_point b, double t)
{
  return (ts_view_point){ a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t };
}

/* Where the ray from the shape's centre through p leaves the shape. */
static ts_view_point clip_to_shape(const ts_view_box *b, ts_view_point p)
{
  double a = b->width / 2, h = b->height / 2;
  ts_view_point c = { b->x + a, b->y + h };
  double dx = p.x - c.x, dy = p.y - c.y;
  if (fabs(dx) < 1e-6 && fabs(dy) < 1e-6)
    return p;
  double t;
  if (b->shape == TS_VIEW_SHAPE_ELLIPSE)
    t = 1.0 / sqrt((dx / a) * (dx / a) + (dy / h) * (dy / h));
  else
    t = MIN(fabs(dx) > 1e-9 ? a / fabs(dx) : G_MAXDOUBLE, fabs(dy) > 1e-9 ? h / fabs(dy) : G_MAXDOUBLE);
  return (ts_view_point){ c.x + dx * t, c.y + dy * t };
}

/* The middle of a box's top or bottom side, whichever faces `toward`. */
static ts_view_point side_port(const ts_view_box *b, ts_view_point toward)
{
  bool up = toward.y < b->y + b->height / 2;
  return (ts_view_point){ b->x + b->width / 2, up ? b->y : b->y + b->height };
}

static void append_line(GArray *pts, ts_view_point a, ts_view_point b)
{
  if (pts->len == 0)
    g_array_append_val(pts, a);
  ts_view_point q[3] = { lerp(a, b, 1.0 / 3), lerp(a, b, 2.0 / 3), b };
  g_array_append_vals(pts, q, 3);
}

static int cmp_group_edge_key(const ts_view_group_edge *ge, const ts_view_edge *e)
{
  if (ge->a != e->src_child)
    return ge->a < e->src_child ? -1 : 1;
  if (ge->b != e->dst_child)
    return ge->b < e->dst_child ? -1 : 1;
  return (int)ge->control - (int)e->control;
}

/* The group edge carrying e (the model keeps them sorted). */
static int find_group_edge(const ts_view_model *m, const ts_view_edge *e)
{
  int lo = 0, hi = ts_view_group_n_edges(m, e->group) - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    int c = cmp_group_edge_key(ts_view_group_edge_at(m, e->group, mid), e);
    if (c == 0)
      return mid;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* How far routed edges keep off shapes and title bars. */
#define ROUTE_CLEARANCE 6.0

static const ts_view_box *box_at(const ts_view_layout *out, int i)
{
  return &g_array_index(out->boxes, ts_view_box, i);
}

typedef struct route_scratch {
  int *subtree_end;       /* per box: one past the last box inside it */
  GArray *rects;          /* ts_route_rect: the current edge's obstacles, then `used` */
  GHashTable *used;       /* group -> GArray of ts_route_rect: the segments routed in it, as lines */
  ts_route_rect bounds;   /* the current edge's group's content area */
  GArray *corners;        /* ts_view_point */
} route_scratch;

/* compose_boxes adds a container's boxes right after it: each holds a run. */
static int *subtree_ends(const ts_view_layout *out)
{
  int n = (int)out->boxes->len;
  int *end = g_new(int, n);
  for (int i = n - 1; i >= 0; i--)
    end[i] = i + 1;
  for (int i = n - 1; i >= 0; i--) {
    int parent = box_at(out, i)->parent;
    if (parent >= 0)
      end[parent] = MAX(end[parent], end[i]);
  }
  return end;
}

/* Whether box `outer` holds box i (at any depth); -1 holds everything. */
static bool box_holds(const route_scratch *rs, int outer, int i)
{
  return outer < 0 || (i > outer && i < rs->subtree_end[outer]);
}

static ts_route_rect rect_of(const ts_view_box *b, double height)
{
  return (ts_route_rect){ b->x, b->y, b->x + b->width, b->y + height };
}

/* What an edge routed inside `group_box` must go around: every shape in
 * it but the ends, the title bars of the containers holding an end, and
 * other containers whole.  Dots sit beside their consumers: not obstacles. */
static void route_obstacles(const pass *p, const ts_view_layout *out, int group_box, int sb, int db,
                            route_scratch *rs)
{
  double header = p->l->opts.header_height;
  g_array_set_size(rs->rects, 0);
  if (group_box < 0)
    rs->bounds = (ts_route_rect){ 0, 0, out->width, out->height };
  else
    rs->bounds = rect_of(box_at(out, group_box), box_at(out, group_box)->height);
  rs->bounds.y0 += group_box < 0 ? 0 : header;
  int end = group_box < 0 ? (int)out->boxes->len : rs->subtree_end[group_box];
  for (int i = group_box + 1; i < end; i++) {
    const ts_view_box *b = box_at(out, i);
    if (i == sb || i == db || b->shape == TS_VIEW_SHAPE_DOT)
      continue;
    bool holds_end = box_holds(rs, i, sb) || box_holds(rs, i, db);
    ts_route_rect r = rect_of(b, holds_end ? header : b->height);
    g_array_append_val(rs->rects, r);
  }
}

/* Whether q lies in the box grown by the route's clearance. */
static bool near_box(const ts_view_box *b, ts_view_point q)
{
  double c = ROUTE_CLEARANCE;
  return q.x > b->x - c && q.x < b->x + b->width + c && q.y > b->y - c && q.y < b->y + b->height + c;
}

/* The axis direction closest to from -> to, as a unit step. */
static ts_view_point axis_step(ts_view_point from, ts_view_point to)
{
  double dx = to.x - from.x, dy = to.y - from.y;
  if (fabs(dx) > fabs(dy))
    return (ts_view_point){ dx > 0 ? 1 : -1, 0 };
  return (ts_view_point){ 0, dy > 0 ? 1 : -1 };
}

static ts_view_point step_off(ts_view_point p, ts_view_point dir)
{
  return (ts_view_point){ p.x + dir.x * ROUTE_CLEARANCE, p.y + dir.y * ROUTE_CLEARANCE };
}

/* Routed axis-parallel segments are rectangles of no width to the router:
 * it keeps off running along them (edges on top of one another read as
 * one), and its grid gets lines beside them, where the next edge can run
 * parallel.  (A diagonal one, a straight route, would be a real rectangle.) */
static void remember_route(route_scratch *rs, GArray *used)
{
  for (guint i = 1; i < rs->corners->len; i++) {
    ts_view_point a = g_array_index(rs->corners, ts_view_point, i - 1);
    ts_view_point b = g_array_index(rs->corners, ts_view_point, i);
    ts_route_rect r = { MIN(a.x, b.x), MIN(a.y, b.y), MAX(a.x, b.x), MAX(a.y, b.y) };
    if (r.x1 - r.x0 < 1e-6 || r.y1 - r.y0 < 1e-6)
      g_array_append_val(used, r);
  }
}

/* How far a route's corners are rounded off. */
#define ROUTE_CORNER 5.0

static ts_view_point toward_by(ts_view_point from, ts_view_point to, double d)
{
  double len = sqrt(dist2(from, to));
  return len < 1e-9 ? from : lerp(from, to, d / len);
}

/* Appends the polyline as Bezier segments with its corners rounded off
 * (an arc passes within ROUTE_CORNER / 2 px of its corner). */
static void append_rounded(GArray *pts, const ts_view_point *line, int n)
{
  if (n < 2)
    return;
  ts_view_point at = line[0];
  for (int i = 1; i < n - 1; i++) {
    double r = MIN(ROUTE_CORNER, MIN(sqrt(dist2(line[i - 1], line[i])), sqrt(dist2(line[i], line[i + 1]))) / 2);
    ts_view_point in = toward_by(line[i], line[i - 1], r), out = toward_by(line[i], line[i + 1], r);
    append_line(pts, at, in);
    /* a quarter circle's usual control points: 0.55 of the radius from the ends */
    ts_view_point q[3] = { lerp(in, line[i], 0.55), lerp(out, line[i], 0.55), out };
    g_array_append_vals(pts, q, 3);
    at = out;
  }
  append_line(pts, at, line[n - 1]);
}

/* Appends the route from a, leaving along a_dir, to b, arriving against
 * b_dir, as Bezier segments with rounded corners.  The stubs along the
 * directions keep the route from running along the side of the shape it
 * leaves or enters; a zero direction: none. */
static void append_route(GArray *pts, route_scratch *rs, GArray *used, ts_view_point a,
                         ts_view_point a_dir, ts_view_point b, ts_view_point b_dir)
{
  ts_view_point a1 = step_off(a, a_dir), b1 = step_off(b, b_dir);
  guint n_obstacles = rs->rects->len;
  g_array_append_vals(rs->rects, used->data, used->len);
  g_array_set_size(rs->corners, 0);
  ts_route_orthogonal((const ts_route_rect *)rs->rects->data, (int)rs->rects->len, &rs->bounds, a1, b1,
                      ROUTE_CLEARANCE, rs->corners);
  g_array_set_size(rs->rects, n_obstacles);
  remember_route(rs, used);
  /* the whole polyline, stubs included, without repeated points */
  GArray *line = rs->corners;
  g_array_prepend_val(line, a);
  g_array_append_val(line, b);
  guint n = 0;
  for (guint i = 0; i < line->len; i++)
    if (n == 0 || dist2(g_array_index(line, ts_view_point, i), g_array_index(line, ts_view_point, n - 1)) > 1e-6)
      g_array_index(line, ts_view_point, n++) = g_array_index(line, ts_view_point, i);
  g_array_set_size(line, n);
  append_rounded(pts, (const ts_view_point *)line->data, (int)n);
}

/* The port on a box's top or bottom facing toward, and the way out of it. */
static ts_view_point port_dir(const ts_view_box *b, ts_view_point toward, ts_view_point *dir)
{
  ts_view_point port = side_port(b, toward);
  *dir = (ts_view_point){ 0, port.y <= b->y ? -1 : 1 };
  return port;
}

/* Whether q lies in the title bar of a container (grown by the clearance). */
static bool in_title_bar(const pass *p, const ts_view_box *b, ts_view_point q)
{
  return b->shape == TS_VIEW_SHAPE_CONTAINER && q.y < b->y + p->l->opts.header_height + ROUTE_CLEARANCE;
}

/* The first point of the longest of the Bezier segments (end to end), where
 * a routed path's label goes: the middle one can be a short step beside a
 * title bar. */
static int longest_segment(const GArray *pts)
{
  const ts_view_point *q = (const ts_view_point *)pts->data;
  int best = 0;
  for (int i = 3; i + 3 < (int)pts->len; i += 3)
    if (dist2(q[i], q[i + 3]) > dist2(q[best], q[best + 3]))
      best = i;
  return best;
}

/* An edge between items inside the group's children: dot's spline where it
 * runs between those children (it avoids them), routed around every shape
 * and title bar from the source to it and from it to the destination.
 * The spline is kept up to a child's border unless it meets the border in
 * the title bar; then it is cut at its first joint clear of the child.
 * Returns the index in pts of the first point of the label's segment. */
static int route_across(const pass *p, const ts_view_layout *out, const ts_view_edge *e, int sb, int db,
                        const ts_view_point *mp, int nm, GArray *pts, route_scratch *rs)
{
  const ts_view_box *src = box_at(out, sb), *dst = box_at(out, db);
  const ts_view_box *sc = box_at(out, out->item_box[e->src_child]);
  const ts_view_box *dc = box_at(out, out->item_box[e->dst_child]);
  int group_box = e->group == TS_VIEW_ROOT ? -1 : out->item_box[e->group];
  route_obstacles(p, out, group_box, sb, db, rs);
  GArray *used = g_hash_table_lookup(rs->used, GINT_TO_POINTER(e->group));
  if (!used) {
    used = g_array_new(FALSE, FALSE, sizeof(ts_route_rect));
    g_hash_table_insert(rs->used, GINT_TO_POINTER(e->group), used);
  }
  int first = 0, last = nm - 1;
  bool src_inside = sb != out->item_box[e->src_child], dst_inside = db != out->item_box[e->dst_child];
  if (src_inside && in_title_bar(p, sc, mp[0]))
    while (first < nm - 1 && near_box(sc, mp[first]))
      first += 3;
  if (dst_inside && in_title_bar(p, dc, mp[nm - 1]))
    while (last > 0 && near_box(dc, mp[last]))
      last -= 3;
  ts_view_point a_dir, b_dir;
  if (first >= last) {
    ts_view_point a = port_dir(src, side_port(dst, mp[0]), &a_dir);
    ts_view_point b = port_dir(dst, a, &b_dir);
    append_route(pts, rs, used, a, a_dir, b, b_dir);
    return longest_segment(pts);
  }
  if (src_inside) {
    ts_view_point a = port_dir(src, mp[first], &a_dir);
    /* a joint clear of the child, where no stub is needed (one could end in a shape) */
    append_route(pts, rs, used, a, a_dir, mp[first], (ts_view_point){ 0, 0 });
  }
  int label_at = (int)(pts->len ? pts->len - 1 : 0) + 3 * ((last - first) / 3 / 2);
  g_array_append_vals(pts, pts->len ? mp + first + 1 : mp + first,
                      (guint)(pts->len ? last - first : last - first + 1));
  if (dst_inside) {
    ts_view_point b = port_dir(dst, mp[last], &b_dir);
    append_route(pts, rs, used, mp[last], axis_step(mp[last - 1], mp[last]), b, b_dir);
  }
  return label_at;
}

/* The group's spline between the two children (absolute), into mid. */
static void group_spline(const pass *p, const ts_view_layout *out, const double *origin,
                         const ts_view_edge *e, GArray *mid)
{
  const ts_view_model *m = p->l->model;
  const glayout *gl = p->layouts[e->group];
  int gi = find_group_edge(m, e);
  const gl_edge *ge = gi >= 0 ? &gl->edges[gi] : NULL;
  double ox = origin[2 * e->group], oy = origin[2 * e->group + 1];
  g_array_set_size(mid, 0);
  if (ge && ge->n_points) {
    for (int i = 0; i < ge->n_points; i++) {
      const ts_view_point *q = &gl->points[ge->start + i];
      ts_view_point a = { q->x + ox, q->y + oy };
      g_array_append_val(mid, a);
    }
    return;
  }
  const ts_view_box *a = box_at(out, out->item_box[e->src_child]);
  const ts_view_box *b = box_at(out, out->item_box[e->dst_child]);
  ts_view_point pa = { a->x + a->width / 2, a->y + a->height / 2 };
  ts_view_point pb = { b->x + b->width / 2, b->y + b->height / 2 };
  append_line(mid, side_port(a, pb), side_port(b, pa));
}

/* ---- If and While boxes: edges continue inside --------------------------------------- */

/* The op node of an item shown as an expanded If/While box; NULL otherwise. */
static const ts_node *open_control_op(const pass *p, const ts_view_layout *out, int item)
{
  const ts_view_model *m = p->l->model;
  const ts_node *node = ts_view_item_node(p->l->model, item);
  if (!node || ts_node_n_subgraphs(node) == 0 || ts_view_item_kind_of(m, item) != TS_VIEW_ITEM_OP)
    return NULL;
  return box_at(out, out->item_box[item])->shape == TS_VIEW_SHAPE_CONTAINER ? node : NULL;
}

/* Adds the box standing for op `node_id` of g, if it shows inside `container`. */
static void add_inner_box(const pass *p, const ts_view_layout *out, const route_scratch *rs,
                          int container, const ts_graph *g, int node_id, GArray *boxes)
{
  int item = ts_view_model_item_for_node(p->l->model, g, node_id);
  if (item < 0)
    return;
  int b = out->item_box[ts_view_model_representative(p->l->model, p->state, item)];
  if (b < 0 || !box_holds(rs, container, b))
    return;
  for (guint i = 0; i < boxes->len; i++)
    if (g_array_index(boxes, int, i) == b)
      return;
  g_array_append_val(boxes, b);
}

/* Where an edge into an open If/While box goes on: the subgraphs' inputs
 * (Placeholders) that the op's inputs from e->src feed.  If inputs are
 * [cond, captures...] for branch inputs [captures...]; While inputs are
 * the loop variables of both cond and body. */
static void inner_inputs(const pass *p, const ts_view_layout *out, const route_scratch *rs,
                         const ts_view_edge *e, const ts_node *op, GArray *boxes)
{
  const ts_view_model *m = p->l->model;
  const ts_graph *g = ts_node_graph(op);
  int skip = ts_node_op(op) == TS_OP_IF ? 1 : 0;
  for (int i = skip; i < ts_node_n_inputs(op); i++) {
    int item = ts_view_model_item_for_node(m, g, ts_node_input(op, i).node);
    if (item < 0 || ts_view_model_representative(m, p->state, item) != e->src)
      continue;
    for (int s = 0; s < ts_node_n_subgraphs(op); s++) {
      const ts_graph *sub = ts_node_subgraph(op, s);
      if (i - skip < ts_graph_n_inputs(sub))
        add_inner_box(p, out, rs, out->item_box[e->dst], sub, ts_graph_input(sub, i - skip), boxes);
    }
  }
}

/* Where an edge out of an open If/While box comes from: the subgraphs'
 * outputs (both branches of an If, a While's body) for the op's outputs
 * that e->dst reads. */
static void inner_outputs(const pass *p, const ts_view_layout *out, const route_scratch *rs,
                          const ts_view_edge *e, const ts_node *op, GArray *boxes)
{
  const ts_view_model *m = p->l->model;
  const ts_graph *g = ts_node_graph(op);
  int id = ts_node_id(op);
  for (int c = 0; c < ts_graph_n_nodes(g); c++) {
    const ts_node *consumer = ts_graph_node(g, c);
    int item = ts_view_model_item_for_node(m, g, c);
    if (item < 0 || ts_view_model_representative(m, p->state, item) != e->dst)
      continue;
    for (int i = 0; i < ts_node_n_inputs(consumer); i++) {
      ts_port in = ts_node_input(consumer, i);
      if (in.node != id)
        continue;
      /* a While's outputs are its body's (subgraph 1); an If's either branch's */
      for (int s = ts_node_op(op) == TS_OP_WHILE ? 1 : 0; s < ts_node_n_subgraphs(op); s++) {
        const ts_graph *sub = ts_node_subgraph(op, s);
        if (in.index < ts_graph_n_outputs(sub))
          add_inner_box(p, out, rs, out->item_box[e->src], sub, ts_graph_output(sub, in.index).node, boxes);
      }
    }
  }
}

/* The boxes an edge is drawn from (inner outputs, or its source's box). */
static void path_sources(const pass *p, const ts_view_layout *out, const route_scratch *rs,
                         const ts_view_edge *e, GArray *boxes)
{
  g_array_set_size(boxes, 0);
  const ts_node *op = e->control ? NULL : open_control_op(p, out, e->src);
  if (op)
    inner_outputs(p, out, rs, e, op, boxes);
  if (boxes->len == 0)
    g_array_append_val(boxes, out->item_box[e->src]);
}

/* The boxes an edge is drawn to (inner inputs, or its destination's box). */
static void path_destinations(const pass *p, const ts_view_layout *out, const route_scratch *rs,
                              const ts_view_edge *e, GArray *boxes)
{
  g_array_set_size(boxes, 0);
  const ts_node *op = e->control ? NULL : open_control_op(p, out, e->dst);
  if (op)
    inner_inputs(p, out, rs, e, op, boxes);
  if (boxes->len == 0)
    g_array_append_val(boxes, out->item_box[e->dst]);
}

/* ---- the paths ---------------------------------------------------------------------------- */

/* The path of e from box sb to box db along the group's spline `mid`
 * (modified): the spline, ends clipped to the shapes when they are the
 * group's children, routed the rest of the way when they lie inside them
 * (route_across).  Appended to out; its first point's index to starts. */
static void compose_path(const pass *p, ts_view_layout *out, const ts_view_edge *e, int sb, int db,
                         GArray *mid, GArray *pts, GArray *starts, route_scratch *rs)
{
  const ts_view_model *m = p->l->model;
  ts_view_point *mp = (ts_view_point *)mid->data;
  int nm = (int)mid->len;
  bool src_is_child = sb == out->item_box[e->src_child], dst_is_child = db == out->item_box[e->dst_child];
  if (src_is_child)
    mp[0] = clip_to_shape(box_at(out, sb), mp[0]);
  if (dst_is_child)
    mp[nm - 1] = clip_to_shape(box_at(out, db), mp[nm - 1]);
  g_array_set_size(pts, 0);
  int label_at;
  if (!src_is_child || !dst_is_child) {
    label_at = route_across(p, out, e, sb, db, mp, nm, pts, rs);
  } else {
    label_at = 3 * ((nm - 1) / 3 / 2); /* the middle segment of the group's spline */
    g_array_append_vals(pts, mp, (guint)nm);
  }
  const ts_view_point *s = &g_array_index(pts, ts_view_point, label_at);
  /* a cubic Bezier at t = 1/2 */
  ts_view_point label = {
    0.125 * s[0].x + 0.375 * s[1].x + 0.375 * s[2].x + 0.125 * s[3].x,
    0.125 * s[0].y + 0.375 * s[1].y + 0.375 * s[2].y + 0.125 * s[3].y,
  };
  char *text = ts_view_edge_label(e);
  ts_view_path path = {
    .edge = *e, .src_box = sb, .dst_box = db, .width = ts_view_model_edge_width(m, e->bytes),
    .label = g_string_chunk_insert_const(out->strings, text), .label_at = label,
    .n_points = (int)pts->len,
  };
  g_free(text);
  int start = (int)out->points->len;
  g_array_append_val(starts, start);
  g_array_append_vals(out->points, pts->data, pts->len);
  g_array_append_val(out->paths, path);
}

/* Every visible edge: one path, or one per inner end for edges into or
 * out of open If/While boxes. */
static void compose_paths(pass *p, ts_view_layout *out, const double *origin)
{
  const ts_view_model *m = p->l->model;
  GArray *edges = ts_view_model_visible_edges(m, p->state);
  GArray *pts = g_array_new(FALSE, FALSE, sizeof(ts_view_point));
  GArray *starts = g_array_new(FALSE, FALSE, sizeof(int));
  GArray *mid = g_array_new(FALSE, FALSE, sizeof(ts_view_point));   /* the group's spline */
  GArray *spline = g_array_new(FALSE, FALSE, sizeof(ts_view_point)); /* a copy per path */
  GArray *froms = g_array_new(FALSE, FALSE, sizeof(int)), *tos = g_array_new(FALSE, FALSE, sizeof(int));
  route_scratch rs = {
    .subtree_end = subtree_ends(out), .rects = g_array_new(FALSE, FALSE, sizeof(ts_route_rect)),
    .used = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_array_unref),
    .corners = g_array_new(FALSE, FALSE, sizeof(ts_view_point)),
  };
  for (guint k = 0; k < edges->len; k++) {
    const ts_view_edge *e = &g_array_index(edges, ts_view_edge, k);
    if (out->item_box[e->src] < 0 || out->item_box[e->dst] < 0 || !p->layouts[e->group])
      continue;
    group_spline(p, out, origin, e, mid);
    path_sources(p, out, &rs, e, froms);
    path_destinations(p, out, &rs, e, tos);
    for (guint f = 0; f < froms->len; f++)
      for (guint t = 0; t < tos->len; t++) {
        g_array_set_size(spline, 0);
        g_array_append_vals(spline, mid->data, mid->len);
        compose_path(p, out, e, g_array_index(froms, int, f), g_array_index(tos, int, t), spline, pts,
                     starts, &rs);
      }
  }
  /* the points array is complete: hand out pointers into it */
  for (guint k = 0; k < out->paths->len; k++)
    g_array_index(out->paths, ts_view_path, k).points =
      &g_array_index(out->points, ts_view_point, g_array_index(starts, int, k));
  g_array_free(starts, TRUE);
  g_array_free(rs.rects, TRUE);
  g_hash_table_destroy(rs.used);
  g_free(rs.subtree_end);
  g_array_free(rs.corners, TRUE);
  g_array_free(froms, TRUE);
  g_array_free(tos, TRUE);
  g_array_free(spline, TRUE);
  g_array_free(mid, TRUE);
  g_array_free(pts, TRUE);
  g_array_free(edges, TRUE);
}

/* Drops cached layouts this request did not use once there are many. */
static void trim_cache(ts_view_layouter *l, int used)
{
  if (g_hash_table_size(l->cache) <= (guint)(2 * used + 512))
    return;
  GHashTableIter iter;
  gpointer v;
  g_hash_table_iter_init(&iter, l->cache);
  while (g_hash_table_iter_next(&iter, NULL, &v))
    if (((glayout *)v)->last_used != l->requests)
      g_hash_table_iter_remove(&iter);
}

static ts_view_layout *compute(GVC_t *gvc, job *j, GError **error)
{
  guint64 t0 = g_get_monotonic_time();
  ts_view_layouter *l = j->layouter;
  ts_view_model *m = l->model;
  int n_items = ts_view_model_n_items(m);
  l->requests++;
  ts_view_layout *out = g_new0(ts_view_layout, 1);
  out->model = ts_view_model_ref(m);
  out->state = ts_view_state_copy(j->state);
  out->boxes = g_array_new(FALSE, FALSE, sizeof(ts_view_box));
  out->paths = g_array_new(FALSE, FALSE, sizeof(ts_view_path));
  out->points = g_array_new(FALSE, FALSE, sizeof(ts_view_point));
  out->item_box = g_new(int, n_items);
  memset(out->item_box, 0xff, sizeof(int) * (size_t)n_items);
  out->strings = g_string_chunk_new(1024);

  pass p = { l, j->state, g_new0(glayout *, n_items), g_new0(GString *, n_items),
             g_array_new(FALSE, FALSE, sizeof(int)) };
  collect_open(&p, TS_VIEW_ROOT);
  bool ok = true;
  for (guint k = 0; k < p.order->len && ok; k++)
    ok = !job_stale(j, error) && layout_group(gvc, &p, g_array_index(p.order, int, k), out, error);
  if (ok) {
    const ts_view_layout_options *o = &l->opts;
    const glayout *root = p.layouts[TS_VIEW_ROOT];
    double *origin = g_new0(double, 2 * (gsize)n_items);
    out->width = root->width + 2 * o->group_pad;
    out->height = root->height + 2 * o->group_pad;
    compose_boxes(&p, out, TS_VIEW_ROOT, o->group_pad, o->group_pad, -1, origin);
    compose_paths(&p, out, origin);
    g_free(origin);
    trim_cache(l, out->n_groups);
  }
  for (int i = 0; i < n_items; i++)
    if (p.keys[i])
      g_string_free(p.keys[i], TRUE);
  g_free(p.keys);
  g_free(p.layouts);
  g_array_free(p.order, TRUE);
  if (!ok) {
    ts_view_layout_free(out);
    return NULL;
  }
  out->duration_ns = (g_get_monotonic_time() - t0) * 1000;
  return out;
}

/* ---- the worker thread ----------------------------------------------------------------------- */

static GAsyncQueue *worker_queue;
static GThread *worker_thread;

static void run_job(GVC_t *gvc, job *j)
{
  GError *error = NULL;
  ts_view_layout *result = NULL;
  if (!job_stale(j, &error))
    result = compute(gvc, j, &error);
  layouter_unref(j->layouter);
  ts_view_state_free(j->state);
  if (j->task) {
    if (result)
      g_task_return_pointer(j->task, result, (GDestroyNotify)ts_view_layout_free);
    else
      g_task_return_error(j->task, error);
    g_object_unref(j->task);
    g_clear_object(&j->cancellable);
    g_free(j);
    return;
  }
  g_mutex_lock(&j->lock);
  j->result = result;
  j->error = error;
  j->done = true;
  g_cond_signal(&j->cond);
  g_mutex_unlock(&j->lock); /* j belongs to the waiting caller from here on */
}

/* Graphviz keeps global state: all of it happens here, one job at a time.
 * The thread and its context live as long as the process. */
static gpointer worker_main(gpointer data)
{
  GAsyncQueue *queue = data;
  GVC_t *gvc = gvContext();
  for (;;)
    run_job(gvc, g_async_queue_pop(queue));
  return NULL;
}

static void submit(job *j)
{
  static gsize started;
  if (g_once_init_enter(&started)) {
    worker_queue = g_async_queue_new();
    worker_thread = g_thread_new("ts-layout", worker_main, worker_queue);
    g_once_init_leave(&started, 1);
  }
  g_async_queue_push(worker_queue, j);
}

static job *job_new(ts_view_layouter *l, const ts_view_state *state)
{
  job *j = g_new0(job, 1);
  j->layouter = layouter_ref(l);
  j->state = ts_view_state_copy(state ? state : ts_view_model_state(l->model));
  return j;
}

ts_view_layout *ts_view_layouter_run(ts_view_layouter *layouter, const ts_view_state *state,
                                     GError **error)
{
  g_return_val_if_fail(layouter != NULL, NULL);
  g_return_val_if_fail(worker_thread == NULL || g_thread_self() != worker_thread, NULL);
  job *j = job_new(layouter, state);
  g_mutex_init(&j->lock);
  g_cond_init(&j->cond);
  g_mutex_lock(&j->lock);
  submit(j);
  while (!j->done)
    g_cond_wait(&j->cond, &j->lock);
  g_mutex_unlock(&j->lock);
  g_mutex_clear(&j->lock);
  g_cond_clear(&j->cond);
  ts_view_layout *result = j->result;
  if (!result)
    g_propagate_error(error, j->error);
  g_free(j);
  return result;
}

void ts_view_layouter_run_async(ts_view_layouter *layouter, const ts_view_state *state,
                                GCancellable *cancellable, GAsyncReadyCallback callback,
                                gpointer user_data)
{
  g_return_if_fail(layouter != NULL);
  job *j = job_new(layouter, state);
  j->generation = g_atomic_int_add(&layouter->generation, 1) + 1;
  j->task = g_task_new(NULL, cancellable, callback, user_data);
  g_task_set_source_tag(j->task, ts_view_layouter_run_async);
  g_task_set_task_data(j->task, layouter, NULL);
  j->cancellable = cancellable ? g_object_ref(cancellable) : NULL;
  submit(j);
}

ts_view_layout *ts_view_layouter_run_finish(ts_view_layouter *layouter, GAsyncResult *result,
                                            GError **error)
{
  g_return_val_if_fail(g_task_is_valid(result, NULL), NULL);
  g_return_val_if_fail(g_task_get_task_data(G_TASK(result)) == layouter, NULL);
  return g_task_propagate_pointer(G_TASK(result), error);
}
