/* test-console-lines.c — the console's list model (ts-console-lines.h):
 * after a flood it holds the last lines after the marker saying how many
 * went, announces them in at most two changes a flush whatever came,
 * makes an item only for a row asked for, and changes agree with what
 * the model says during them. */
#include <string.h>

#include "ts-console-lines.h"

#define KEEP 100

/* What the items-changed signals said, checked against the model at
 * each: the count before, less removed, plus added, is the count now. */
typedef struct {
  guint emissions;
  guint n_items;     /* as the signals say */
  guint most_added;  /* the largest `added` of one signal */
  guint most_removed;
} Changes;

static void on_items_changed(GListModel *model, guint position, guint removed, guint added, gpointer data)
{
  Changes *c = data;
  c->emissions++;
  g_assert_cmpuint(position + removed, <=, c->n_items);
  c->n_items = c->n_items - removed + added;
  g_assert_cmpuint(g_list_model_get_n_items(model), ==, c->n_items);
  c->most_added = MAX(c->most_added, added);
  c->most_removed = MAX(c->most_removed, removed);
  /* every item the change names is there */
  for (guint i = position; i < position + added; i += MAX(1, added / 4)) {
    g_autoptr(GObject) item = g_list_model_get_item(model, i);
    g_assert_nonnull(item);
  }
}

static void append(TsConsoleLines *lines, guint from, guint to)
{
  for (guint i = from; i < to; i++) {
    g_autofree char *text = g_strdup_printf("line %u", i);
    ts_console_lines_append(lines, 1, "f()", 0, TS_CONSOLE_SOURCE_HOST, text);
  }
}

static void assert_text(TsConsoleLines *lines, guint position, const char *text)
{
  g_autoptr(TsConsoleLine) line = g_list_model_get_item(G_LIST_MODEL(lines), position);
  g_assert_nonnull(line);
  g_assert_cmpstr(ts_console_line_get_text(line), ==, text);
}

static void test_flood(void)
{
  g_autoptr(TsConsoleLines) lines = ts_console_lines_new(KEEP);
  Changes c = { 0 };
  g_signal_connect(lines, "items-changed", G_CALLBACK(on_items_changed), &c);

  /* a few lines: announced at the flush, not before */
  append(lines, 0, 10);
  g_assert_cmpuint(g_list_model_get_n_items(G_LIST_MODEL(lines)), ==, 0);
  g_assert_true(ts_console_lines_flush(lines));
  g_assert_cmpuint(c.emissions, ==, 1);
  g_assert_cmpuint(g_list_model_get_n_items(G_LIST_MODEL(lines)), ==, 10);
  g_assert_false(ts_console_lines_flush(lines));

  /* a flood of 25 times what it keeps between two flushes: one flush
   * moves at most KEEP lines, in at most two changes, and makes no item */
  guint n = 10 + 25 * KEEP;
  append(lines, 10, n);
  g_assert_cmpuint(ts_console_lines_get_n_waiting(lines), ==, KEEP);
  c.emissions = c.most_added = 0;
  guint made = ts_console_lines_get_n_made(lines);
  g_assert_true(ts_console_lines_flush(lines));
  g_assert_cmpuint(c.emissions, <=, 2);
  g_assert_cmpuint(c.most_added, <=, KEEP + 1);
  g_assert_cmpuint(g_list_model_get_n_items(G_LIST_MODEL(lines)), ==, KEEP + 1);
  g_assert_cmpuint(ts_console_lines_get_n_dropped(lines), ==, n - KEEP);
  made = ts_console_lines_get_n_made(lines) - made;
  g_assert_cmpuint(made, <=, 8); /* only what the signal handler looked at */

  g_autofree char *marker = g_strdup_printf("… %u lines dropped", n - KEEP);
  assert_text(lines, 0, marker);
  g_autofree char *first = g_strdup_printf("line %u", n - KEEP);
  assert_text(lines, 1, first);
  g_autofree char *last = g_strdup_printf("line %u", n - 1);
  assert_text(lines, KEEP, last);
  g_assert_null(g_list_model_get_item(G_LIST_MODEL(lines), KEEP + 1));

  /* an item held is the same object while held */
  guint before = ts_console_lines_get_n_made(lines);
  g_autoptr(TsConsoleLine) held = g_list_model_get_item(G_LIST_MODEL(lines), 5);
  g_autoptr(TsConsoleLine) again = g_list_model_get_item(G_LIST_MODEL(lines), 5);
  g_assert_true(held == again);
  g_assert_cmpuint(ts_console_lines_get_n_made(lines), ==, before + 1);

  /* a few more: the front's dropped lines and the marker in one change,
   * the new ones at the end in another */
  c.emissions = 0;
  append(lines, n, n + 7);
  g_assert_true(ts_console_lines_flush(lines));
  g_assert_cmpuint(c.emissions, ==, 2);
  g_autofree char *more = g_strdup_printf("… %u lines dropped", n + 7 - KEEP);
  assert_text(lines, 0, more);
  g_autofree char *newest = g_strdup_printf("line %u", n + 6);
  assert_text(lines, KEEP, newest);
  /* the held line was dropped from the front: it stays what it was */
  g_autofree char *held_text = g_strdup_printf("line %u", n - KEEP + 4);
  g_assert_cmpstr(ts_console_line_get_text(held), ==, held_text);

  ts_console_lines_clear(lines);
  g_assert_cmpuint(c.n_items, ==, 0);
  g_assert_cmpuint(g_list_model_get_n_items(G_LIST_MODEL(lines)), ==, 0);
  g_assert_cmpuint(ts_console_lines_get_n_dropped(lines), ==, 0);
}

/* Peeking gives each item's fields, the marker's too, and makes no object. */
static void test_peek(void)
{
  g_autoptr(TsConsoleLines) lines = ts_console_lines_new(KEEP);
  guint n = 3 * KEEP + 5;
  append(lines, 0, n);
  g_assert_true(ts_console_lines_flush(lines));
  guint made = ts_console_lines_get_n_made(lines);
  TsConsoleRow row;
  g_assert_true(ts_console_lines_peek(lines, 0, &row));
  g_autofree char *marker = g_strdup_printf("… %u lines dropped", n - KEEP);
  g_assert_cmpstr(row.text, ==, marker);
  g_assert_cmpint(row.source, ==, TS_CONSOLE_SOURCE_WORKER);
  for (guint i = 1; i <= KEEP; i++) {
    g_assert_true(ts_console_lines_peek(lines, i, &row));
    g_autofree char *text = g_strdup_printf("line %u", n - KEEP + i - 1);
    g_assert_cmpstr(row.text, ==, text);
  }
  g_assert_false(ts_console_lines_peek(lines, KEEP + 1, &row));
  g_assert_cmpuint(ts_console_lines_get_n_made(lines), ==, made);
}

/* A print marks its stdout line, waiting or shown; a shown item notifies,
 * and the list says the shown line changed (a view drawing lines as data
 * redraws it); a peek sees the mark, a waiting line's too. */
static void on_notify(GObject *object, GParamSpec *pspec, gpointer data)
{
  (*(guint *)data)++;
}

static void test_mark_print(void)
{
  g_autoptr(TsConsoleLines) lines = ts_console_lines_new(KEEP);
  append(lines, 0, 5);
  ts_console_lines_flush(lines);
  g_autoptr(TsConsoleLine) shown = g_list_model_get_item(G_LIST_MODEL(lines), 3);
  guint notified = 0;
  g_signal_connect(shown, "notify::is-print", G_CALLBACK(on_notify), &notified);
  Changes c = { .n_items = 5 };
  g_signal_connect(lines, "items-changed", G_CALLBACK(on_items_changed), &c);
  g_assert_true(ts_console_lines_mark_print(lines, 1, "line 3", 64));
  g_assert_cmpint(ts_console_line_get_source(shown), ==, TS_CONSOLE_SOURCE_PRINT);
  g_assert_cmpuint(notified, ==, 1);
  g_assert_cmpuint(c.emissions, ==, 1);
  g_assert_cmpuint(c.most_added, ==, 1);
  g_assert_cmpuint(c.most_removed, ==, 1);
  TsConsoleRow row;
  g_assert_true(ts_console_lines_peek(lines, 2, &row));
  g_assert_cmpint(row.source, ==, TS_CONSOLE_SOURCE_HOST);
  g_assert_true(ts_console_lines_peek(lines, 3, &row));
  g_assert_cmpint(row.source, ==, TS_CONSOLE_SOURCE_PRINT);
  g_assert_false(ts_console_lines_mark_print(lines, 1, "line 3", 64)); /* already a print's */
  g_assert_false(ts_console_lines_mark_print(lines, 2, "line 4", 64)); /* another call's */

  append(lines, 5, 10);
  g_assert_true(ts_console_lines_mark_print(lines, 1, "line 8", 64));
  g_assert_false(ts_console_lines_mark_print(lines, 1, "line 0", 3)); /* past the window */
  ts_console_lines_flush(lines);
  g_autoptr(TsConsoleLine) waited = g_list_model_get_item(G_LIST_MODEL(lines), 8);
  g_assert_cmpint(ts_console_line_get_source(waited), ==, TS_CONSOLE_SOURCE_PRINT);
  g_assert_true(ts_console_lines_peek(lines, 8, &row));
  g_assert_cmpint(row.source, ==, TS_CONSOLE_SOURCE_PRINT);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/console-lines/flood", test_flood);
  g_test_add_func("/console-lines/peek", test_peek);
  g_test_add_func("/console-lines/mark-print", test_mark_print);
  return g_test_run();
}
