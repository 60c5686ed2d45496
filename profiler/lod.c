/* lod.c — the level-of-detail index a timeline draws from (tsp_lod_*).
 *
 * Per thread: the OP and CALL events sorted by start, each given its
 * nesting depth by time containment (a call holds its ops, an If/While op
 * the ops its branches ran); per depth the spans never overlap, so their
 * starts and ends are both sorted and a window is two binary searches.
 * Over each depth a pyramid of summaries: level k cuts time into buckets of
 * B·2^k ns and keeps every span at least a bucket wide on its own and each
 * bucket's narrower spans as one summary (count, time inside spans, the op
 * with most of the time).  A query at r ns a pixel reads the coarsest level
 * whose buckets are at most r wide, so it touches about two items a pixel
 * whatever the zoom.  Memory events become one step series per device. */
#include "profiler-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MEMORY_BLOCK 64 /* samples a block maximum stands for */
#define MIN_LEVEL_ITEMS 512 /* a level this small is the top of the pyramid */

/* A span or a run of narrow spans (spans[first .. first + count) of a depth). */
typedef struct item {
  uint64_t start, end;
  uint32_t first, count;
  uint64_t busy;  /* ns inside spans */
  int64_t vote;   /* the weight of op in a duration-weighted majority vote */
  uint16_t op;
} item;

typedef struct level {
  double bucket_ns;
  item *items;
  size_t n;
} level;

typedef struct depth {
  const tsp_event **spans; /* by start */
  size_t n;
  level *levels;           /* finest first */
  int n_levels;
} depth;

typedef struct track {
  depth *depths;
  int n_depths;
  const tsp_event **traces; /* TRACE events by start */
  int n_traces;
} track;

typedef struct memory_series {
  uint8_t device;
  ts_memory_kind what;
  uint64_t peak_ns;      /* when it first reached peak */
  tsp_lod_level *steps;  /* by time; max_bytes unused */
  size_t n;
  int64_t *block_max;    /* the most of each MEMORY_BLOCK steps */
  int64_t peak;
} memory_series;

struct tsp_lod {
  const tsp_session *session;
  track *tracks;
  int n_tracks;
  memory_series *memory;
  int n_memory;
  uint64_t start_ns, end_ns;
  size_t bytes;
};

/* ---- summaries ------------------------------------------------------------------------- */

static void item_merge(item *a, const item *b)
{
  a->end = MAX(a->end, b->end);
  a->count += b->count;
  a->busy += b->busy;
  if (a->op == b->op)
    a->vote += b->vote;
  else if (b->vote > a->vote)
    a->op = b->op, a->vote = b->vote - a->vote;
  else
    a->vote -= b->vote;
}

static item item_of_span(const tsp_event *e, uint32_t index)
{
  uint64_t d = e->end_ns - e->start_ns;
  return (item){ e->start_ns, e->end_ns, index, 1, d, (int64_t)d, e->op };
}

/* Folds items narrower than width that start in the same bucket of width
 * (counted from origin) into one; wider ones pass as they are.  Used to
 * build a level from the one below and to fit a query's items to pixels. */
typedef struct folder {
  double width, origin;
  item pending;
  bool has_pending;
} folder;

static bool folds(const folder *f, const item *a, const item *b)
{
  return (double)(a->end - a->start) < f->width && (double)(b->end - b->start) < f->width &&
         (int64_t)(((double)a->start - f->origin) / f->width) ==
           (int64_t)(((double)b->start - f->origin) / f->width);
}

/* Feeds it; returns true with *done set when an item is complete. */
static bool folder_feed(folder *f, const item *it, item *done)
{
  if (f->has_pending && folds(f, &f->pending, it)) {
    item_merge(&f->pending, it);
    return false;
  }
  bool had = f->has_pending;
  if (had)
    *done = f->pending;
  f->pending = *it;
  f->has_pending = true;
  return had;
}

static level coarsen(const item *src, size_t n, double width)
{
  level l = { width, g_new(item, MAX(n, 1)), 0 };
  folder f = { .width = width };
  item done;
  for (size_t i = 0; i < n; i++)
    if (folder_feed(&f, &src[i], &done))
      l.items[l.n++] = done;
  if (f.has_pending)
    l.items[l.n++] = f.pending;
  l.items = g_renew(item, l.items, MAX(l.n, 1));
  return l;
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The pyramid over a depth: level 0's buckets about eight median spans wide. */
static void build_levels(depth *d)
{
  if (d->n < MIN_LEVEL_ITEMS)
    return;
  size_t n_sample = MIN(d->n, (size_t)1024);
  uint64_t sample[1024];
  for (size_t i = 0; i < n_sample; i++) {
    const tsp_event *e = d->spans[i * d->n / n_sample];
    sample[i] = e->end_ns - e->start_ns;
  }
  qsort(sample, n_sample, sizeof *sample, cmp_u64);
  double width = 8.0 * (double)MAX(sample[n_sample / 2], 1);
  item *raw = g_new(item, d->n);
  for (size_t i = 0; i < d->n; i++)
    raw[i] = item_of_span(d->spans[i], (uint32_t)i);
  const item *below = raw;
  size_t n_below = d->n;
  uint64_t extent = d->spans[d->n - 1]->end_ns - d->spans[0]->start_ns;
  GArray *levels = g_array_new(FALSE, FALSE, sizeof(level));
  while (n_below >= MIN_LEVEL_ITEMS && width < 2.0 * (double)extent) {
    level l = coarsen(below, n_below, width);
    g_array_append_val(levels, l);
    below = l.items;
    n_below = l.n;
    width *= 2;
  }
  g_free(raw);
  d->n_levels = (int)levels->len;
  d->levels = (level *)g_array_free(levels, FALSE);
}

/* ---- building ---------------------------------------------------------------------------- */

/* Start order, and the longer first at equal starts (it holds the other). */
static inline bool before(const tsp_event *a, const tsp_event *b)
{
  return a->start_ns < b->start_ns || (a->start_ns == b->start_ns && a->end_ns > b->end_ns);
}

static int cmp_span(const void *pa, const void *pb)
{
  const tsp_event *a = *(const tsp_event *const *)pa, *b = *(const tsp_event *const *)pb;
  return before(a, b) ? -1 : before(b, a) ? 1 : 0;
}

/* Events arrive as they end, which is start order for all but the spans
 * holding others (calls, If/While ops): those few are taken out, sorted
 * and merged back, so a recording sorts in about linear time. */
static const tsp_event **sort_spans(GPtrArray *in)
{
  size_t n = in->len;
  const tsp_event **sorted = g_new(const tsp_event *, MAX(n, 1));
  const tsp_event **late = g_new(const tsp_event *, MAX(n, 1));
  size_t n_main = 0, n_late = 0;
  for (size_t i = 0; i < n; i++) {
    const tsp_event *e = in->pdata[i];
    if (n_main && before(e, sorted[n_main - 1]))
      late[n_late++] = e;
    else
      sorted[n_main++] = e;
  }
  qsort(late, n_late, sizeof *late, cmp_span);
  /* merge from the back into sorted */
  size_t i = n_main, j = n_late, k = n;
  while (j > 0) {
    if (i > 0 && before(late[j - 1], sorted[i - 1]))
      sorted[--k] = sorted[--i];
    else
      sorted[--k] = late[--j];
  }
  g_free(late);
  return sorted;
}

static void build_track(tsp_lod *lod, int t)
{
  track *tr = &lod->tracks[t];
  GPtrArray *spans = g_ptr_array_new();
  GPtrArray *traces = g_ptr_array_new();
  tsp_iter it;
  tsp_iter_init(&it, lod->session, t);
  for (const tsp_event *e; (e = tsp_iter_next(&it));) {
    if (e->kind == TSP_EVENT_OP || e->kind == TSP_EVENT_CALL || e->kind == TSP_EVENT_DEVICE ||
        e->kind == TSP_EVENT_PHASE)
      g_ptr_array_add(spans, (gpointer)e);
    else if (e->kind == TSP_EVENT_TRACE)
      g_ptr_array_add(traces, (gpointer)e);
  }
  const tsp_event **sorted = sort_spans(spans);
  size_t n = spans->len;
  g_ptr_array_unref(spans);

  /* depth: how many earlier spans are still open at the start */
  GPtrArray *open = g_ptr_array_new();
  GPtrArray *per_depth = g_ptr_array_new(); /* GPtrArray of spans per depth */
  for (size_t i = 0; i < n; i++) {
    const tsp_event *e = sorted[i];
    while (open->len && ((const tsp_event *)open->pdata[open->len - 1])->end_ns <= e->start_ns)
      g_ptr_array_set_size(open, open->len - 1);
    guint d = open->len;
    if (d == per_depth->len)
      g_ptr_array_add(per_depth, g_ptr_array_new());
    g_ptr_array_add(per_depth->pdata[d], (gpointer)e);
    g_ptr_array_add(open, (gpointer)e);
  }
  g_ptr_array_unref(open);
  g_free(sorted);
  tr->n_depths = (int)per_depth->len;
  tr->depths = g_new0(depth, MAX(per_depth->len, 1));
  for (guint d = 0; d < per_depth->len; d++) {
    GPtrArray *a = per_depth->pdata[d];
    tr->depths[d].n = a->len;
    tr->depths[d].spans = (const tsp_event **)g_ptr_array_free(a, FALSE);
    build_levels(&tr->depths[d]);
    lod->bytes += tr->depths[d].n * sizeof(void *);
    for (int k = 0; k < tr->depths[d].n_levels; k++)
      lod->bytes += tr->depths[d].levels[k].n * sizeof(item);
  }
  g_ptr_array_unref(per_depth);
  g_ptr_array_sort(traces, cmp_span);
  tr->n_traces = (int)traces->len;
  tr->traces = (const tsp_event **)g_ptr_array_free(traces, FALSE);
  lod->bytes += (size_t)tr->n_traces * sizeof(void *);
}

static int cmp_step(const void *pa, const void *pb)
{
  const tsp_lod_level *a = pa, *b = pb;
  return (a->time_ns > b->time_ns) - (a->time_ns < b->time_ns);
}

/* A series per device and kind of memory, devices in order, tensors
 * before arenas. */
static void build_memory(tsp_lod *lod)
{
  enum { N_SERIES = 256 * TS_MEMORY_KIND_COUNT };
  GArray **by_series = g_new0(GArray *, N_SERIES);
  for (int t = 0; t < lod->n_tracks; t++) {
    tsp_iter it;
    tsp_iter_init(&it, lod->session, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));) {
      if (e->kind != TSP_EVENT_MEMORY || e->op >= TS_MEMORY_KIND_COUNT)
        continue;
      GArray **a = &by_series[e->device * TS_MEMORY_KIND_COUNT + e->op];
      if (!*a)
        *a = g_array_new(FALSE, FALSE, sizeof(tsp_lod_level));
      tsp_lod_level step = { e->start_ns, tsp_memory_live(e), 0 };
      g_array_append_val(*a, step);
    }
  }
  lod->memory = g_new0(memory_series, N_SERIES);
  for (int k = 0; k < N_SERIES; k++) {
    GArray *a = by_series[k];
    if (!a)
      continue;
    g_array_sort(a, (GCompareFunc)cmp_step); /* stable: a thread's order kept at equal times */
    memory_series *m = &lod->memory[lod->n_memory++];
    m->device = (uint8_t)(k / TS_MEMORY_KIND_COUNT);
    m->what = (ts_memory_kind)(k % TS_MEMORY_KIND_COUNT);
    m->n = a->len;
    m->steps = (tsp_lod_level *)g_array_free(a, FALSE);
    m->peak_ns = m->steps[0].time_ns;
    size_t n_blocks = (m->n + MEMORY_BLOCK - 1) / MEMORY_BLOCK;
    m->block_max = g_new0(int64_t, MAX(n_blocks, 1));
    for (size_t i = 0; i < m->n; i++) {
      int64_t v = m->steps[i].live_bytes;
      size_t b = i / MEMORY_BLOCK;
      m->block_max[b] = i % MEMORY_BLOCK ? MAX(m->block_max[b], v) : v;
      if (v > m->peak) {
        m->peak = v;
        m->peak_ns = m->steps[i].time_ns;
      }
    }
    lod->bytes += m->n * sizeof(tsp_lod_level) + n_blocks * sizeof(int64_t);
  }
  g_free(by_series);
}

tsp_lod *tsp_lod_build(const tsp_session *s)
{
  g_return_val_if_fail(s != NULL && !tsp_session_recording(s), NULL);
  tsp_lod *lod = g_new0(tsp_lod, 1);
  lod->session = s;
  lod->n_tracks = tsp_session_n_threads(s);
  lod->tracks = g_new0(track, MAX(lod->n_tracks, 1));
  lod->start_ns = UINT64_MAX;
  for (int t = 0; t < lod->n_tracks; t++) {
    build_track(lod, t);
    tsp_iter it;
    tsp_iter_init(&it, s, t);
    for (const tsp_event *e; (e = tsp_iter_next(&it));) {
      lod->start_ns = MIN(lod->start_ns, e->start_ns);
      lod->end_ns = MAX(lod->end_ns, e->end_ns);
    }
  }
  if (lod->start_ns == UINT64_MAX)
    lod->start_ns = lod->end_ns = 0;
  build_memory(lod);
  return lod;
}

void tsp_lod_free(tsp_lod *lod)
{
  if (!lod)
    return;
  for (int t = 0; t < lod->n_tracks; t++) {
    track *tr = &lod->tracks[t];
    for (int d = 0; d < tr->n_depths; d++) {
      for (int k = 0; k < tr->depths[d].n_levels; k++)
        g_free(tr->depths[d].levels[k].items);
      g_free(tr->depths[d].levels);
      g_free(tr->depths[d].spans);
    }
    g_free(tr->depths);
    g_free(tr->traces);
  }
  for (int i = 0; i < lod->n_memory; i++) {
    g_free(lod->memory[i].steps);
    g_free(lod->memory[i].block_max);
  }
  g_free(lod->memory);
  g_free(lod->tracks);
  g_free(lod);
}

/* ---- reading ---------------------------------------------------------------------------- */

const tsp_session *tsp_lod_session(const tsp_lod *lod)
{
  return lod->session;
}

size_t tsp_lod_bytes(const tsp_lod *lod)
{
  return lod->bytes;
}

void tsp_lod_range(const tsp_lod *lod, uint64_t *start_ns, uint64_t *end_ns)
{
  *start_ns = lod->start_ns;
  *end_ns = lod->end_ns;
}

static const track *track_at(const tsp_lod *lod, int t)
{
  g_return_val_if_fail(t >= 0 && t < lod->n_tracks, NULL);
  return &lod->tracks[t];
}

int tsp_lod_n_depths(const tsp_lod *lod, int track_index)
{
  const track *tr = track_at(lod, track_index);
  return tr ? tr->n_depths : 0;
}

/* The first span of d ending at t or later, an instant at t included
 * (ends are sorted: spans of a depth never overlap). */
static size_t first_span_ending_from(const depth *d, uint64_t t)
{
  size_t lo = 0, hi = d->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (d->spans[mid]->end_ns >= t)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

int tsp_lod_depth_of(const tsp_lod *lod, int track_index, const tsp_event *e)
{
  const track *tr = track_at(lod, track_index);
  for (int d = 0; tr && d < tr->n_depths; d++) {
    const depth *dp = &tr->depths[d];
    for (size_t i = first_span_ending_from(dp, e->start_ns);
         i < dp->n && dp->spans[i]->start_ns <= e->start_ns; i++)
      if (dp->spans[i] == e)
        return d;
  }
  return -1;
}

static void put_span(GArray *out, const depth *d, const item *it)
{
  uint64_t width = it->end - it->start;
  tsp_lod_span s = {
    it->start, it->end, d->spans[it->first], it->count, it->op,
    it->count == 1 || !width ? 1.0f : (float)MIN(1.0, (double)it->busy / (double)width),
  };
  g_array_append_val(out, s);
}

int tsp_lod_query(const tsp_lod *lod, int track_index, int depth_index, uint64_t from_ns,
                  uint64_t to_ns, double ns_per_px, GArray *out)
{
  const track *tr = track_at(lod, track_index);
  g_return_val_if_fail(out != NULL && ns_per_px > 0, 0);
  if (!tr || depth_index < 0 || depth_index >= tr->n_depths || from_ns >= to_ns)
    return 0;
  const depth *d = &tr->depths[depth_index];
  const level *l = NULL;
  for (int k = 0; k < d->n_levels && d->levels[k].bucket_ns <= ns_per_px; k++)
    l = &d->levels[k];
  guint before_len = out->len;
  folder f = { .width = ns_per_px, .origin = (double)from_ns };
  item done;
  if (!l) {
    for (size_t i = first_span_ending_from(d, from_ns); i < d->n && d->spans[i]->start_ns < to_ns; i++) {
      item it = item_of_span(d->spans[i], (uint32_t)i);
      if (folder_feed(&f, &it, &done))
        put_span(out, d, &done);
    }
  } else {
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (l->items[mid].end > from_ns)
        hi = mid;
      else
        lo = mid + 1;
    }
    for (size_t i = lo; i < l->n && l->items[i].start < to_ns; i++)
      if (folder_feed(&f, &l->items[i], &done))
        put_span(out, d, &done);
  }
  if (f.has_pending)
    put_span(out, d, &f.pending);
  return (int)(out->len - before_len);
}

int tsp_lod_spans(const tsp_lod *lod, int track_index, int depth_index, uint64_t from_ns,
                  uint64_t to_ns, bool backward, int max, GPtrArray *out)
{
  const track *tr = track_at(lod, track_index);
  g_return_val_if_fail(out != NULL, 0);
  if (!tr || depth_index < 0 || depth_index >= tr->n_depths || from_ns > to_ns || max <= 0)
    return 0;
  const depth *d = &tr->depths[depth_index];
  /* [first, last): the spans ending at from_ns or later and starting at
   * to_ns or earlier (ends and starts are both sorted: spans of a depth
   * never overlap) */
  size_t first = first_span_ending_from(d, from_ns), lo = first, hi = d->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (d->spans[mid]->start_ns <= to_ns)
      lo = mid + 1;
    else
      hi = mid;
  }
  size_t last = lo;
  int n = 0;
  for (size_t k = 0; k < last - first && n < max; k++, n++)
    g_ptr_array_add(out, (gpointer)d->spans[backward ? last - 1 - k : first + k]);
  return n;
}

const tsp_event *const *tsp_lod_traces(const tsp_lod *lod, int track_index, int *n)
{
  const track *tr = track_at(lod, track_index);
  *n = tr ? tr->n_traces : 0;
  return tr ? tr->traces : NULL;
}

/* ---- memory ------------------------------------------------------------------------------ */

int tsp_lod_n_memory(const tsp_lod *lod)
{
  return lod->n_memory;
}

static const memory_series *series_at(const tsp_lod *lod, int i)
{
  g_return_val_if_fail(i >= 0 && i < lod->n_memory, NULL);
  return &lod->memory[i];
}

uint8_t tsp_lod_memory_device(const tsp_lod *lod, int series)
{
  const memory_series *m = series_at(lod, series);
  return m ? m->device : 0;
}

ts_memory_kind tsp_lod_memory_kind(const tsp_lod *lod, int series)
{
  const memory_series *m = series_at(lod, series);
  return m ? m->what : TS_MEMORY_TENSORS;
}

int64_t tsp_lod_memory_peak(const tsp_lod *lod, int series)
{
  const memory_series *m = series_at(lod, series);
  return m ? m->peak : 0;
}

uint64_t tsp_lod_memory_peak_ns(const tsp_lod *lod, int series)
{
  const memory_series *m = series_at(lod, series);
  return m ? m->peak_ns : 0;
}

/* The first step after t. */
static size_t first_step_after(const memory_series *m, uint64_t t)
{
  size_t lo = 0, hi = m->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->steps[mid].time_ns > t)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* The most of steps [i, j), by whole blocks where it can. */
static int64_t steps_max(const memory_series *m, size_t i, size_t j)
{
  int64_t best = INT64_MIN;
  for (; i < j && i % MEMORY_BLOCK; i++)
    best = MAX(best, m->steps[i].live_bytes);
  while (i + MEMORY_BLOCK <= j) {
    best = MAX(best, m->block_max[i / MEMORY_BLOCK]);
    i += MEMORY_BLOCK;
  }
  for (; i < j; i++)
    best = MAX(best, m->steps[i].live_bytes);
  return best;
}

int tsp_lod_memory_query(const tsp_lod *lod, int series, uint64_t from_ns, uint64_t to_ns,
                         double ns_per_px, GArray *out)
{
  const memory_series *m = series_at(lod, series);
  g_return_val_if_fail(out != NULL && ns_per_px > 0, 0);
  if (!m || from_ns >= to_ns || !m->n)
    return 0;
  guint before_len = out->len;
  size_t i = first_step_after(m, from_ns);
  if (i > 0)
    i--; /* the level in effect at from_ns */
  while (i < m->n && m->steps[i].time_ns < to_ns) {
    /* the steps in the pixel where step i is: one step if several */
    double px = floor((double)(MAX(m->steps[i].time_ns, from_ns) - from_ns) / ns_per_px);
    uint64_t px_end = from_ns + (uint64_t)ceil((px + 1) * ns_per_px);
    size_t j = MAX(first_step_after(m, px_end - 1), i + 1);
    tsp_lod_level s = { m->steps[i].time_ns, m->steps[j - 1].live_bytes, steps_max(m, i, j) };
    g_array_append_val(out, s);
    i = j;
  }
  return (int)(out->len - before_len);
}

/* ---- search ------------------------------------------------------------------------------ */

static bool contains(const char *haystack, const char *folded_needle)
{
  if (!haystack || !*haystack)
    return false;
  char *h = g_utf8_casefold(haystack, -1);
  bool found = strstr(h, folded_needle) != NULL;
  g_free(h);
  return found;
}

typedef struct matcher {
  bool *strings, *nodes, ops[TS_OP_COUNT];
  uint32_t n_strings, n_nodes;
} matcher;

static bool matches(const matcher *mt, const tsp_event *e)
{
  switch (e->kind) {
  case TSP_EVENT_OP:
    return (e->op < TS_OP_COUNT && mt->ops[e->op]) || (e->node < mt->n_nodes && mt->nodes[e->node]) ||
           (e->traced < mt->n_nodes && mt->nodes[e->traced]);
  case TSP_EVENT_CALL:
    return e->node < mt->n_strings && mt->strings[e->node];
  case TSP_EVENT_TRACE:
  case TSP_EVENT_PHASE:
    return (e->node < mt->n_strings && mt->strings[e->node]) ||
           (e->loc < mt->n_strings && mt->strings[e->loc]);
  default:
    return false;
  }
}

static int cmp_hit(const void *pa, const void *pb)
{
  const tsp_lod_hit *a = pa, *b = pb;
  if (a->event->start_ns != b->event->start_ns)
    return a->event->start_ns < b->event->start_ns ? -1 : 1;
  if (a->track != b->track)
    return a->track - b->track;
  return a->depth - b->depth;
}

typedef struct search_list {
  const tsp_event *const *events; /* by start */
  size_t n;
  int track, depth;               /* depth -1: the track's traces */
} search_list;

/* The next matching event of a list from `at` on (n when none). */
static size_t next_match(const matcher *mt, const search_list *list, size_t at)
{
  while (at < list->n && !matches(mt, list->events[at]))
    at++;
  return at;
}

/* One thread's part of the search: the events of every list that start in
 * its time span ([begin[l], end[l]) of list l).  Counted first; then
 * written from out in start order, a k-way merge over the lists' matching
 * events (few lists: a scan picks the next). */
typedef struct search_part {
  const matcher *mt;
  GArray *lists;
  size_t *begin, *end;
  size_t count;
  tsp_lod_hit *out;
} search_part;

static void search_part_run(search_part *p)
{
  guint k = p->lists->len;
  if (!p->out) {
    p->count = 0;
    for (guint l = 0; l < k; l++) {
      const search_list *list = &g_array_index(p->lists, search_list, l);
      for (size_t i = p->begin[l]; i < p->end[l]; i++)
        p->count += matches(p->mt, list->events[i]);
    }
    return;
  }
  size_t *at = g_new(size_t, MAX(k, 1));
  for (guint l = 0; l < k; l++) {
    search_list part = g_array_index(p->lists, search_list, l);
    part.n = p->end[l];
    at[l] = next_match(p->mt, &part, p->begin[l]);
  }
  for (size_t o = 0;; o++) {
    tsp_lod_hit best = { 0 };
    guint from = k;
    for (guint l = 0; l < k; l++) {
      const search_list *list = &g_array_index(p->lists, search_list, l);
      if (at[l] == p->end[l])
        continue;
      tsp_lod_hit h = { list->events[at[l]], list->track, list->depth };
      if (from == k || cmp_hit(&h, &best) < 0) {
        best = h;
        from = l;
      }
    }
    if (from == k)
      break;
    p->out[o] = best;
    search_list part = g_array_index(p->lists, search_list, from);
    part.n = p->end[from];
    at[from] = next_match(p->mt, &part, at[from] + 1);
  }
  g_free(at);
}

static gpointer search_part_thread(gpointer data)
{
  search_part_run(data);
  return NULL;
}

/* Both parts, the second on a thread of its own when there is enough to
 * share (a million events and up). */
static void search_parts(search_part parts[2], size_t n_events)
{
  GThread *other = n_events >= 1000000 && g_get_num_processors() > 1
                     ? g_thread_new("lod-search", search_part_thread, &parts[1])
                     : NULL;
  search_part_run(&parts[0]);
  if (other)
    g_thread_join(other);
  else
    search_part_run(&parts[1]);
}

/* The first event of a sorted list that starts at or after t. */
static size_t first_from(const search_list *list, uint64_t t)
{
  size_t lo = 0, hi = list->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (list->events[mid]->start_ns < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

GArray *tsp_lod_search(const tsp_lod *lod, const char *text)
{
  g_return_val_if_fail(lod != NULL && text != NULL, NULL);
  GArray *hits = g_array_new(FALSE, FALSE, sizeof(tsp_lod_hit));
  if (!*text)
    return hits;
  const tsp_session *s = lod->session;
  char *needle = g_utf8_casefold(text, -1);
  /* every name is tested once; then an event costs a few table reads */
  matcher mt = { .n_strings = s->strings->len, .n_nodes = tsp_session_n_nodes(s) };
  mt.strings = g_new0(bool, mt.n_strings);
  mt.nodes = g_new0(bool, mt.n_nodes);
  for (uint32_t i = 1; i < mt.n_strings; i++)
    mt.strings[i] = contains(tsp_session_string(s, i), needle);
  for (uint32_t i = 1; i < mt.n_nodes; i++) {
    const tsp_node_info *n = tsp_session_node(s, i);
    mt.nodes[i] = contains(n->name, needle) || contains(n->scope, needle);
  }
  for (int op = 0; op < TS_OP_COUNT; op++)
    mt.ops[op] = contains(ts_op_name((ts_op)op), needle);
  g_free(needle);

  /* The lists to search, each in start order: every (track, depth), then
   * the track's traces.  Two threads take a time span each (split at the
   * middle event of the longest list), count their hits, then write them
   * in start order where the counts put them: written once, no merge after. */
  GArray *lists = g_array_new(FALSE, FALSE, sizeof(search_list));
  size_t n_events = 0, longest = 0;
  for (int t = 0; t < lod->n_tracks; t++) {
    const track *tr = &lod->tracks[t];
    for (int d = 0; d < tr->n_depths; d++)
      g_array_append_val(lists, ((search_list){ tr->depths[d].spans, tr->depths[d].n, t, d }));
    g_array_append_val(lists, ((search_list){ tr->traces, (size_t)tr->n_traces, t, -1 }));
  }
  for (guint l = 0; l < lists->len; l++) {
    const search_list *list = &g_array_index(lists, search_list, l);
    n_events += list->n;
    if (list->n > g_array_index(lists, search_list, longest).n)
      longest = l;
  }
  const search_list *big = lists->len ? &g_array_index(lists, search_list, longest) : NULL;
  uint64_t split = big && big->n ? big->events[big->n / 2]->start_ns : 0;
  size_t *bounds = g_new(size_t, 3 * MAX(lists->len, 1));
  size_t *zero = bounds, *middle = bounds + lists->len, *ends = bounds + 2 * lists->len;
  for (guint l = 0; l < lists->len; l++) {
    const search_list *list = &g_array_index(lists, search_list, l);
    zero[l] = 0;
    middle[l] = first_from(list, split);
    ends[l] = list->n;
  }
  search_part parts[2] = { { &mt, lists, zero, middle, 0, NULL }, { &mt, lists, middle, ends, 0, NULL } };
  search_parts(parts, n_events);
  g_array_set_size(hits, (guint)(parts[0].count + parts[1].count));
  if (hits->len > 0) {
    parts[0].out = (tsp_lod_hit *)(void *)hits->data;
    parts[1].out = parts[0].out + parts[0].count;
    search_parts(parts, n_events);
  }
  g_free(bounds);
  g_array_unref(lists);
  g_free(mt.strings);
  g_free(mt.nodes);
  return hits;
}
