/* ts-console.c — console lines; stdout and print events arrive on two
 * paths, so a print is matched to its line whichever comes first.  Lines
 * wait as plain data in a ring of the last TS_CONSOLE_MAX_LINES and join
 * the list in batches, at most one per FLUSH_MS and spaced by what the
 * last one cost: a module printing without end costs the app a bounded
 * ring, no object for a line the ring let go, and a bounded share of the
 * main loop's time. */
#include "ts-console.h"

#include <adwaita.h>
#include <string.h>

#define MATCH_WINDOW 64 /* how far back a print looks for its line */
#define FLUSH_MS 16     /* lines join the list at most this often: once a frame */
/* A batch costs the list view about its size (10000 lines: tens of ms in
 * a release build, hundreds in a sanitized one): the next waits this many
 * times as long as the last took, so that a flood leaves the main loop
 * most of its time. */
#define FLUSH_SPACING 8

/* A line on its way into the list. */
typedef struct {
  guint call_id;
  char *label;
  char *text;
  gint64 time_us;
  TsConsoleSource source;
} Incoming;

typedef struct {
  guint call_id;
  char *text;
} PendingPrint;

struct _TsConsole {
  GtkWidget parent_instance;
  GtkStack *stack;
  GtkScrolledWindow *scrolled;
  GtkColumnView *column_view;
  GListStore *lines;
  GtkNoSelection *selection;
  GQueue pending; /* PendingPrint: prints whose line has not arrived */
  guint scroll_id;
  Incoming *ring;        /* lines not yet in the list, the last TS_CONSOLE_MAX_LINES */
  guint ring_start, ring_len;
  guint flush_id;
  gint64 flush_us;       /* how long the last batch took */
  guint64 n_dropped;     /* lines left out */
  gboolean dropped_shown; /* the first line of the list says how many */
};

G_DEFINE_FINAL_TYPE(TsConsole, ts_console, GTK_TYPE_WIDGET)

static void pending_free(gpointer data)
{
  PendingPrint *p = data;
  g_free(p->text);
  g_free(p);
}

static gboolean scroll_to_end(gpointer user_data)
{
  TsConsole *self = user_data;
  self->scroll_id = 0;
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->lines));
  if (n)
    gtk_widget_activate_action(GTK_WIDGET(self->column_view), "list.scroll-to-item", "u", n - 1);
  return G_SOURCE_REMOVE;
}

/* "… 12 lines dropped", the first line once the console has left lines out. */
static TsConsoleLine *dropped_line(guint64 n)
{
  g_autofree char *text = g_strdup_printf("… %" G_GUINT64_FORMAT " lines dropped", n);
  return ts_console_line_new(0, "", g_get_real_time(), TS_CONSOLE_SOURCE_WORKER, text);
}

static void incoming_clear(Incoming *in)
{
  g_free(in->label);
  g_free(in->text);
}

static void ring_clear(TsConsole *self)
{
  for (guint i = 0; i < self->ring_len; i++)
    incoming_clear(&self->ring[(self->ring_start + i) % TS_CONSOLE_MAX_LINES]);
  self->ring_start = self->ring_len = 0;
}

/* The lines that came since the last batch go into the list at once; the
 * oldest go where there are more than the console keeps. */
static void flush_incoming(TsConsole *self)
{
  g_clear_handle_id(&self->flush_id, g_source_remove);
  guint n_new = self->ring_len;
  if (n_new == 0)
    return;
  gint64 start = g_get_monotonic_time();
  g_autofree TsConsoleLine **lines = g_new(TsConsoleLine *, n_new);
  for (guint i = 0; i < n_new; i++) {
    Incoming *in = &self->ring[(self->ring_start + i) % TS_CONSOLE_MAX_LINES];
    lines[i] = ts_console_line_new(in->call_id, in->label, in->time_us, in->source, in->text);
  }
  ring_clear(self);
  guint has_marker = self->dropped_shown;
  guint n_old = g_list_model_get_n_items(G_LIST_MODEL(self->lines)) - has_marker;
  guint total = n_old + n_new;
  guint remove = total > TS_CONSOLE_MAX_LINES ? total - TS_CONSOLE_MAX_LINES : 0;
  self->n_dropped += remove;
  if (self->n_dropped > 0) {
    g_autoptr(TsConsoleLine) marker = dropped_line(self->n_dropped);
    g_list_store_splice(self->lines, 0, has_marker + remove, (gpointer *)&marker, 1);
    self->dropped_shown = TRUE;
  }
  g_list_store_splice(self->lines, g_list_model_get_n_items(G_LIST_MODEL(self->lines)), 0, (gpointer *)lines, n_new);
  for (guint i = 0; i < n_new; i++)
    g_object_unref(lines[i]);
  gtk_stack_set_visible_child_name(self->stack, "lines");
  if (!self->scroll_id)
    self->scroll_id = g_idle_add(scroll_to_end, self);
  self->flush_us = g_get_monotonic_time() - start;
}

static gboolean on_flush(gpointer data)
{
  TsConsole *self = data;
  self->flush_id = 0;
  flush_incoming(self);
  return G_SOURCE_REMOVE;
}

/* A print of the call with this text that waits for its line: the line is the print's. */
static gboolean take_pending_print(TsConsole *self, guint call_id, const char *text)
{
  for (GList *l = self->pending.head; l; l = l->next) {
    PendingPrint *p = l->data;
    if (p->call_id == call_id && g_strcmp0(p->text, text) == 0) {
      pending_free(p);
      g_queue_delete_link(&self->pending, l);
      return TRUE;
    }
  }
  return FALSE;
}

void ts_console_add_output(TsConsole *self, guint call_id, const char *call_label, gint64 time_us,
                           TsConsoleSource source, const char *text)
{
  g_return_if_fail(TS_IS_CONSOLE(self) && text != NULL);
  if (self->pending.length > 0 && take_pending_print(self, call_id, text))
    source = TS_CONSOLE_SOURCE_PRINT;
  if (self->ring_len == TS_CONSOLE_MAX_LINES) {
    /* a flood between two batches: the oldest line waiting goes */
    incoming_clear(&self->ring[self->ring_start]);
    self->ring_start = (self->ring_start + 1) % TS_CONSOLE_MAX_LINES;
    self->ring_len--;
    self->n_dropped++;
  }
  self->ring[(self->ring_start + self->ring_len++) % TS_CONSOLE_MAX_LINES] = (Incoming){
    call_id, g_strdup(call_label ? call_label : ""), g_strdup(text), time_us, source,
  };
  if (!self->flush_id) {
    guint wait_ms = (guint)MAX(FLUSH_MS, FLUSH_SPACING * self->flush_us / 1000);
    self->flush_id = g_timeout_add_full(G_PRIORITY_DEFAULT_IDLE, wait_ms, on_flush, self, NULL);
  }
}

/* Marks the newest line of the call with this text, within the last
 * MATCH_WINDOW lines (waiting ones first: they are the newest), as a
 * print's; FALSE when there is none. */
static gboolean mark_print(TsConsole *self, guint call_id, const char *text)
{
  guint seen = 0;
  for (guint i = self->ring_len; i-- > 0 && seen < MATCH_WINDOW; seen++) {
    Incoming *in = &self->ring[(self->ring_start + i) % TS_CONSOLE_MAX_LINES];
    if (in->call_id == call_id && in->source == TS_CONSOLE_SOURCE_HOST && strcmp(in->text, text) == 0) {
      in->source = TS_CONSOLE_SOURCE_PRINT;
      return TRUE;
    }
  }
  guint n = g_list_model_get_n_items(G_LIST_MODEL(self->lines));
  for (guint i = n; i-- > 0 && seen < MATCH_WINDOW; seen++) {
    g_autoptr(TsConsoleLine) line = g_list_model_get_item(G_LIST_MODEL(self->lines), i);
    if (ts_console_line_get_call_id(line) == call_id && ts_console_line_get_source(line) == TS_CONSOLE_SOURCE_HOST &&
        g_strcmp0(ts_console_line_get_text(line), text) == 0) {
      ts_console_line_set_source(line, TS_CONSOLE_SOURCE_PRINT);
      return TRUE;
    }
  }
  return FALSE;
}

void ts_console_note_print(TsConsole *self, guint call_id, const char *text)
{
  g_return_if_fail(TS_IS_CONSOLE(self) && text != NULL);
  /* a print may span lines: each is its own console line */
  g_auto(GStrv) parts = g_strsplit(text, "\n", -1);
  for (char **part = parts; *part; part++) {
    if (!mark_print(self, call_id, *part)) {
      PendingPrint *p = g_new0(PendingPrint, 1);
      p->call_id = call_id;
      p->text = g_strdup(*part);
      g_queue_push_tail(&self->pending, p);
    }
  }
}

void ts_console_clear(TsConsole *self)
{
  g_return_if_fail(TS_IS_CONSOLE(self));
  g_clear_handle_id(&self->flush_id, g_source_remove);
  ring_clear(self);
  self->n_dropped = 0;
  self->dropped_shown = FALSE;
  g_list_store_remove_all(self->lines);
  g_queue_clear_full(&self->pending, pending_free);
  gtk_stack_set_visible_child_name(self->stack, "empty");
}

GListModel *ts_console_get_lines(TsConsole *self)
{
  g_return_val_if_fail(TS_IS_CONSOLE(self), NULL);
  flush_incoming(self);
  return G_LIST_MODEL(self->lines);
}

static void ts_console_dispose(GObject *object)
{
  TsConsole *self = TS_CONSOLE(object);
  g_clear_handle_id(&self->scroll_id, g_source_remove);
  g_clear_handle_id(&self->flush_id, g_source_remove);
  if (self->ring)
    ring_clear(self);
  g_clear_pointer(&self->ring, g_free);
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_CONSOLE);
  /* the template's unnamed root is not among the children it clears */
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  g_clear_object(&self->selection);
  g_queue_clear_full(&self->pending, pending_free);
  G_OBJECT_CLASS(ts_console_parent_class)->dispose(object);
}

static void ts_console_class_init(TsConsoleClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  G_OBJECT_CLASS(klass)->dispose = ts_console_dispose;
  g_type_ensure(TS_TYPE_CONSOLE_LINE);
  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/io/github/tracescope/Tracescope/ts-console.ui");
  gtk_widget_class_bind_template_child(widget_class, TsConsole, stack);
  gtk_widget_class_bind_template_child(widget_class, TsConsole, scrolled);
  gtk_widget_class_bind_template_child(widget_class, TsConsole, column_view);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "tsconsole");
}

static void ts_console_init(TsConsole *self)
{
  gtk_widget_init_template(GTK_WIDGET(self));
  self->lines = g_list_store_new(TS_TYPE_CONSOLE_LINE);
  self->selection = gtk_no_selection_new(G_LIST_MODEL(self->lines)); /* takes the store */
  gtk_column_view_set_model(self->column_view, GTK_SELECTION_MODEL(self->selection));
  g_queue_init(&self->pending);
  self->ring = g_new0(Incoming, TS_CONSOLE_MAX_LINES);
}
