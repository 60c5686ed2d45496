/* ts-console.c — console lines; stdout and print events arrive on two
 * paths, so a print is matched to its line whichever comes first.  Lines
 * wait as plain data in the list's ring (ts-console-lines.h) and are
 * announced to the list view at most once a frame, at most FRAME_LINES at
 * a time: a module printing without end costs the app a bounded ring, an
 * object only for a row the view keeps, and a bounded piece of each frame. */
#include "ts-console.h"

#include <adwaita.h>
#include <string.h>

#include "ts-console-lines.h"

#define MATCH_WINDOW 64 /* how far back a print looks for its line */
#define FLUSH_MS 16     /* lines join the list at most this often: once a frame */
/* and at most this many at a time: GTK's list view (4.8) spends about
 * 8 µs (a release build) on each line that joins or leaves it, and binds
 * the couple of hundred rows it keeps near the end anew after each
 * flush (tens of ms); a flood brings thousands of lines a frame, of which
 * the oldest waiting go */
#define FRAME_LINES 1000
/* While a flood goes on (the last flush was full and lines keep coming),
 * flushes are this far apart: the rows' binding leaves frames their time */
#define FLOOD_MS 250

typedef struct {
  guint call_id;
  char *text;
} PendingPrint;

struct _TsConsole {
  GtkWidget parent_instance;
  GtkStack *stack;
  GtkScrolledWindow *scrolled;
  GtkColumnView *column_view;
  TsConsoleLines *lines;
  GtkNoSelection *selection;
  GQueue pending; /* PendingPrint: prints whose line has not arrived */
  guint scroll_id;
  guint flush_id;
  gboolean flooded; /* the last flush left lines waiting, and more came since */
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

static gboolean on_flush(gpointer data);

static void schedule_flush(TsConsole *self)
{
  if (!self->flush_id)
    self->flush_id = g_timeout_add_full(G_PRIORITY_DEFAULT_IDLE, self->flooded ? FLOOD_MS : FLUSH_MS, on_flush,
                                        self, NULL);
}

/* Up to max_lines of the lines that came join the list, the view scrolled
 * to its end; the rest in the next frames. */
static void flush_incoming(TsConsole *self, guint max_lines)
{
  g_clear_handle_id(&self->flush_id, g_source_remove);
  self->flooded = FALSE;
  if (!ts_console_lines_flush(self->lines, max_lines))
    return;
  if (ts_console_lines_get_n_waiting(self->lines))
    schedule_flush(self); /* the rest once a frame, unless more come meanwhile */
  gtk_stack_set_visible_child_name(self->stack, "lines");
  if (!self->scroll_id)
    self->scroll_id = g_idle_add(scroll_to_end, self);
}

static gboolean on_flush(gpointer data)
{
  TsConsole *self = data;
  self->flush_id = 0;
  flush_incoming(self, FRAME_LINES);
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
  /* lines still waiting after a flush, and more coming: a flood */
  if (!self->flooded && ts_console_lines_get_n_waiting(self->lines) >= FRAME_LINES && self->flush_id) {
    self->flooded = TRUE;
    g_clear_handle_id(&self->flush_id, g_source_remove);
  }
  ts_console_lines_append(self->lines, call_id, call_label, time_us, source, text);
  schedule_flush(self);
}

void ts_console_note_print(TsConsole *self, guint call_id, const char *text)
{
  g_return_if_fail(TS_IS_CONSOLE(self) && text != NULL);
  /* a print may span lines: each is its own console line */
  g_auto(GStrv) parts = g_strsplit(text, "\n", -1);
  for (char **part = parts; *part; part++) {
    if (!ts_console_lines_mark_print(self->lines, call_id, *part, MATCH_WINDOW)) {
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
  self->flooded = FALSE;
  ts_console_lines_clear(self->lines);
  g_queue_clear_full(&self->pending, pending_free);
  gtk_stack_set_visible_child_name(self->stack, "empty");
}

GListModel *ts_console_get_lines(TsConsole *self)
{
  g_return_val_if_fail(TS_IS_CONSOLE(self), NULL);
  flush_incoming(self, G_MAXUINT);
  return G_LIST_MODEL(self->lines);
}

static void ts_console_dispose(GObject *object)
{
  TsConsole *self = TS_CONSOLE(object);
  g_clear_handle_id(&self->scroll_id, g_source_remove);
  g_clear_handle_id(&self->flush_id, g_source_remove);
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
  self->lines = ts_console_lines_new(TS_CONSOLE_MAX_LINES);
  self->selection = gtk_no_selection_new(G_LIST_MODEL(self->lines)); /* takes the lines */
  gtk_column_view_set_model(self->column_view, GTK_SELECTION_MODEL(self->selection));
  g_queue_init(&self->pending);
}
