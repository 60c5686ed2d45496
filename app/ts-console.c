/* ts-console.c — console lines; stdout and print events arrive on two
 * paths, so a print is matched to its line whichever comes first.  Lines
 * wait as plain data in the list's ring (ts-console-lines.h) and join the
 * list once a frame, in the frame clock's update (a tick callback), all
 * of those waiting at once: a module printing without end costs the app
 * a bounded ring and, each frame, moving what came into it and drawing
 * the rows in view (ts-console-view.h), however much came. */
#include "ts-console.h"

#include <adwaita.h>
#include <string.h>

#include "ts-console-lines.h"
#include "ts-console-view.h"

#define MATCH_WINDOW 64 /* how far back a print looks for its line, and how many prints wait for theirs */

typedef struct {
  guint call_id;
  char *text;
} PendingPrint;

struct _TsConsole {
  GtkWidget parent_instance;
  GtkStack *stack;
  TsConsoleView *view;
  TsConsoleLines *lines;
  GQueue pending; /* PendingPrint: prints whose line has not arrived */
  guint tick_id;  /* the next frame's flush */
};

G_DEFINE_FINAL_TYPE(TsConsole, ts_console, GTK_TYPE_WIDGET)

static void pending_free(gpointer data)
{
  PendingPrint *p = data;
  g_free(p->text);
  g_free(p);
}

/* The lines that came join the list. */
static void flush_incoming(TsConsole *self)
{
  if (self->tick_id)
    gtk_widget_remove_tick_callback(GTK_WIDGET(self), self->tick_id);
  self->tick_id = 0;
  if (ts_console_lines_flush(self->lines))
    gtk_stack_set_visible_child_name(self->stack, "lines");
}

static gboolean on_tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  TsConsole *self = TS_CONSOLE(widget);
  self->tick_id = 0; /* removed by returning */
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
  ts_console_lines_append(self->lines, call_id, call_label, time_us, source, text);
  if (!self->tick_id)
    self->tick_id = gtk_widget_add_tick_callback(GTK_WIDGET(self), on_tick, NULL, NULL);
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
      /* a flood of prints whose lines went before they came: the oldest
       * wait no longer (each line coming looks through those waiting) */
      if (self->pending.length > MATCH_WINDOW)
        pending_free(g_queue_pop_head(&self->pending));
    }
  }
}

void ts_console_clear(TsConsole *self)
{
  g_return_if_fail(TS_IS_CONSOLE(self));
  if (self->tick_id)
    gtk_widget_remove_tick_callback(GTK_WIDGET(self), self->tick_id);
  self->tick_id = 0;
  ts_console_lines_clear(self->lines);
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
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_CONSOLE);
  /* the template's unnamed root is not among the children it clears */
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  if (self->tick_id)
    gtk_widget_remove_tick_callback(GTK_WIDGET(self), self->tick_id);
  self->tick_id = 0;
  g_clear_object(&self->lines);
  g_queue_clear_full(&self->pending, pending_free);
  G_OBJECT_CLASS(ts_console_parent_class)->dispose(object);
}

static void ts_console_class_init(TsConsoleClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  G_OBJECT_CLASS(klass)->dispose = ts_console_dispose;
  g_type_ensure(TS_TYPE_CONSOLE_VIEW);
  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/io/github/tracescope/Tracescope/ts-console.ui");
  gtk_widget_class_bind_template_child(widget_class, TsConsole, stack);
  gtk_widget_class_bind_template_child(widget_class, TsConsole, view);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "tsconsole");
}

static void ts_console_init(TsConsole *self)
{
  gtk_widget_init_template(GTK_WIDGET(self));
  self->lines = ts_console_lines_new(TS_CONSOLE_MAX_LINES);
  ts_console_view_set_lines(self->view, self->lines);
  g_queue_init(&self->pending);
}
