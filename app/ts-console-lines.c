/* ts-console-lines.c — the console's list over two rings (ts-console-lines.h). */
#include "ts-console-lines.h"

#include <string.h>

/* A line as plain data; `item` is the TsConsoleLine made for it while
 * somebody holds one (a weak pointer: the list view lets rows go). */
typedef struct {
  guint call_id;
  char *label;
  char *text;
  gint64 time_us;
  TsConsoleSource source;
  TsConsoleLine *item;
} Entry;

/* The last `max` entries of a sequence: start is the oldest. */
typedef struct {
  Entry *at;
  guint start, len;
} Ring;

struct _TsConsoleLines {
  GObject parent_instance;
  guint max;
  Ring shown;             /* the lines the list has (announced) */
  Ring waiting;           /* lines appended since the last flush */
  guint64 n_dropped;      /* announced: what the marker says */
  guint64 dropped_waiting; /* waiting lines pushed out before a flush */
  gboolean has_marker;    /* item 0 is the marker */
  char *marker_text;      /* "… 12 lines dropped" */
  gint64 marker_time;
  TsConsoleLine *marker;  /* made when first asked for */
  guint n_made;
};

static void ts_console_lines_model_init(GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(TsConsoleLines, ts_console_lines, G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(G_TYPE_LIST_MODEL, ts_console_lines_model_init))

static Entry *ring_at(TsConsoleLines *self, Ring *r, guint i)
{
  return &r->at[(r->start + i) % self->max];
}

static void entry_clear(Entry *e)
{
  if (e->item)
    g_object_remove_weak_pointer(G_OBJECT(e->item), (gpointer *)&e->item);
  g_free(e->label);
  g_free(e->text);
  *e = (Entry){ 0 };
}

/* The oldest entry goes. */
static void ring_drop_first(TsConsoleLines *self, Ring *r)
{
  entry_clear(&r->at[r->start]);
  r->start = (r->start + 1) % self->max;
  r->len--;
}

static void ring_clear(TsConsoleLines *self, Ring *r)
{
  while (r->len)
    ring_drop_first(self, r);
  r->start = 0;
}

/* ---- GListModel ---------------------------------------------------------------- */

static GType get_item_type(GListModel *model)
{
  return TS_TYPE_CONSOLE_LINE;
}

static guint get_n_items(GListModel *model)
{
  TsConsoleLines *self = TS_CONSOLE_LINES(model);
  return self->has_marker + self->shown.len;
}

static gpointer get_item(GListModel *model, guint position)
{
  TsConsoleLines *self = TS_CONSOLE_LINES(model);
  if (self->has_marker && position == 0) {
    if (!self->marker) {
      self->marker = ts_console_line_new(0, "", self->marker_time, TS_CONSOLE_SOURCE_WORKER, self->marker_text);
      self->n_made++;
    }
    return g_object_ref(self->marker);
  }
  guint i = position - self->has_marker;
  if (i >= self->shown.len)
    return NULL;
  Entry *e = ring_at(self, &self->shown, i);
  if (e->item)
    return g_object_ref(e->item);
  e->item = ts_console_line_new(e->call_id, e->label, e->time_us, e->source, e->text);
  g_object_add_weak_pointer(G_OBJECT(e->item), (gpointer *)&e->item);
  self->n_made++;
  return e->item;
}

static void ts_console_lines_model_init(GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

/* ---- the lines -------------------------------------------------------------------- */

TsConsoleLines *ts_console_lines_new(guint max)
{
  g_return_val_if_fail(max > 0, NULL);
  TsConsoleLines *self = g_object_new(TS_TYPE_CONSOLE_LINES, NULL);
  self->max = max;
  self->shown.at = g_new0(Entry, max);
  self->waiting.at = g_new0(Entry, max);
  return self;
}

void ts_console_lines_append(TsConsoleLines *self, guint call_id, const char *call_label, gint64 time_us,
                             TsConsoleSource source, const char *text)
{
  g_return_if_fail(TS_IS_CONSOLE_LINES(self) && text != NULL);
  if (self->waiting.len == self->max) {
    /* a flood between two flushes: the oldest line waiting goes */
    ring_drop_first(self, &self->waiting);
    self->dropped_waiting++;
  }
  *ring_at(self, &self->waiting, self->waiting.len++) = (Entry){
    call_id, g_strdup(call_label ? call_label : ""), g_strdup(text), time_us, source, NULL,
  };
}

guint ts_console_lines_get_n_waiting(TsConsoleLines *self)
{
  g_return_val_if_fail(TS_IS_CONSOLE_LINES(self), 0);
  return self->waiting.len;
}

gboolean ts_console_lines_flush(TsConsoleLines *self)
{
  g_return_val_if_fail(TS_IS_CONSOLE_LINES(self), FALSE);
  guint n_new = self->waiting.len;
  if (n_new == 0)
    return FALSE;
  /* the front: the oldest lines shown that the new ones push out, and the
   * marker, replaced as its count changes */
  guint n_old = self->shown.len;
  guint remove = n_old + n_new > self->max ? n_old + n_new - self->max : 0;
  for (guint i = 0; i < remove; i++)
    ring_drop_first(self, &self->shown);
  guint64 dropped = self->n_dropped + remove + self->dropped_waiting;
  self->dropped_waiting = 0;
  gboolean had_marker = self->has_marker, marker_changed = dropped != self->n_dropped;
  if (marker_changed) {
    self->n_dropped = dropped;
    self->has_marker = TRUE;
    g_free(self->marker_text);
    self->marker_text = g_strdup_printf("… %" G_GUINT64_FORMAT " lines dropped", dropped);
    self->marker_time = g_get_real_time();
    g_clear_object(&self->marker);
  }
  /* the waiting lines at the end: moved, nothing made */
  for (guint i = 0; i < n_new; i++) {
    *ring_at(self, &self->shown, self->shown.len++) = *ring_at(self, &self->waiting, i);
    *ring_at(self, &self->waiting, i) = (Entry){ 0 };
  }
  self->waiting.start = (self->waiting.start + n_new) % self->max;
  self->waiting.len -= n_new;
  /* Two changes, the model between them being what they say: the front
   * first, then n_new lines after the others.  Never one change that both
   * removes and adds: GTK's list view then asks for every added item (to
   * find the rows it could keep), making an object per line. */
  guint kept = n_old - remove;
  self->shown.len = kept;
  if (remove || marker_changed)
    g_list_model_items_changed(G_LIST_MODEL(self), 0, had_marker + remove, self->has_marker);
  self->shown.len = kept + n_new;
  g_list_model_items_changed(G_LIST_MODEL(self), self->has_marker + kept, 0, n_new);
  return TRUE;
}

gboolean ts_console_lines_peek(TsConsoleLines *self, guint position, TsConsoleRow *row)
{
  g_return_val_if_fail(TS_IS_CONSOLE_LINES(self) && row != NULL, FALSE);
  if (self->has_marker && position == 0) {
    *row = (TsConsoleRow){ "", self->marker_text, self->marker_time, TS_CONSOLE_SOURCE_WORKER };
    return TRUE;
  }
  guint i = position - self->has_marker;
  if (i >= self->shown.len)
    return FALSE;
  const Entry *e = ring_at(self, &self->shown, i);
  *row = (TsConsoleRow){ e->label, e->text, e->time_us, e->source };
  return TRUE;
}

/* The index in ring r of its newest entry (of the last *budget looked at)
 * that is call_id's stdout line with text; -1 when none. */
static gint64 find_host_line(TsConsoleLines *self, Ring *r, guint call_id, const char *text, guint *budget)
{
  for (guint i = r->len; i-- > 0 && *budget > 0; (*budget)--) {
    Entry *e = ring_at(self, r, i);
    if (e->call_id == call_id && e->source == TS_CONSOLE_SOURCE_HOST && strcmp(e->text, text) == 0)
      return i;
  }
  return -1;
}

gboolean ts_console_lines_mark_print(TsConsoleLines *self, guint call_id, const char *text, guint window)
{
  g_return_val_if_fail(TS_IS_CONSOLE_LINES(self) && text != NULL, FALSE);
  guint budget = window;
  gint64 i = find_host_line(self, &self->waiting, call_id, text, &budget);
  if (i >= 0) {
    ring_at(self, &self->waiting, (guint)i)->source = TS_CONSOLE_SOURCE_PRINT;
    return TRUE;
  }
  if ((i = find_host_line(self, &self->shown, call_id, text, &budget)) < 0)
    return FALSE;
  Entry *e = ring_at(self, &self->shown, (guint)i);
  e->source = TS_CONSOLE_SOURCE_PRINT;
  if (e->item)
    ts_console_line_set_source(e->item, TS_CONSOLE_SOURCE_PRINT);
  /* for a view drawing the lines as data */
  g_list_model_items_changed(G_LIST_MODEL(self), self->has_marker + (guint)i, 1, 1);
  return TRUE;
}

guint64 ts_console_lines_get_n_dropped(TsConsoleLines *self)
{
  g_return_val_if_fail(TS_IS_CONSOLE_LINES(self), 0);
  return self->n_dropped + self->dropped_waiting;
}

guint ts_console_lines_get_n_made(TsConsoleLines *self)
{
  g_return_val_if_fail(TS_IS_CONSOLE_LINES(self), 0);
  return self->n_made;
}

void ts_console_lines_clear(TsConsoleLines *self)
{
  g_return_if_fail(TS_IS_CONSOLE_LINES(self));
  guint n = get_n_items(G_LIST_MODEL(self));
  ring_clear(self, &self->waiting);
  ring_clear(self, &self->shown);
  self->n_dropped = self->dropped_waiting = 0;
  self->has_marker = FALSE;
  g_clear_pointer(&self->marker_text, g_free);
  g_clear_object(&self->marker);
  if (n)
    g_list_model_items_changed(G_LIST_MODEL(self), 0, n, 0);
}

static void ts_console_lines_finalize(GObject *object)
{
  TsConsoleLines *self = TS_CONSOLE_LINES(object);
  ring_clear(self, &self->waiting);
  ring_clear(self, &self->shown);
  g_free(self->waiting.at);
  g_free(self->shown.at);
  g_free(self->marker_text);
  g_clear_object(&self->marker);
  G_OBJECT_CLASS(ts_console_lines_parent_class)->finalize(object);
}

static void ts_console_lines_class_init(TsConsoleLinesClass *klass)
{
  G_OBJECT_CLASS(klass)->finalize = ts_console_lines_finalize;
}

static void ts_console_lines_init(TsConsoleLines *self)
{
}
