/* test-app-window.c — GUI tests of the window as a whole: dialogs, style, shortcuts, screenshots, the command line, layout at the default and smallest sizes. */
#include "test-app.h"
#include "ts-title-row.h"

/* The toplevel of type `type` other than the main window, or NULL (borrowed). */
static GtkWindow *find_toplevel(GType type)
{
  GListModel *toplevels = gtk_window_get_toplevels(); /* borrowed */
  for (guint i = 0; i < n_items(toplevels); i++) {
    g_autoptr(GtkWindow) w = g_list_model_get_item(toplevels, i);
    if (G_TYPE_CHECK_INSTANCE_TYPE(w, type) && gtk_widget_get_visible(GTK_WIDGET(w)))
      return w;
  }
  return NULL;
}

static void close_toplevel(GType type)
{
  GtkWindow *w = find_toplevel(type);
  g_assert_nonnull(w);
  gtk_window_destroy(w);
  wait_idle();
}

static gboolean no_transition(gpointer data)
{
  return !transition_running(data);
}

static void assert_shortcuts_list_graph_keys(GtkWindow *shortcuts)
{
  GHashTable *accels = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  collect_accels(GTK_WIDGET(shortcuts), accels);
  static const char *const graph_keys[] = {
    "<Control>f", "F3", "<Shift>F3", "<Control>g", "plus", "minus", "0", "<Control>0", "w", "f",
    "Left", "Right", "Up", "Down", "Return", "Escape", "e", "c", "l", "<Shift>l", "<Control>i",
    "<Alt>bracketleft", "<Alt>bracketright", "<Alt>Up", "<Alt>Down",
  };
  for (size_t i = 0; i < G_N_ELEMENTS(graph_keys); i++)
    if (!g_hash_table_contains(accels, graph_keys[i]))
      g_error("the shortcuts window does not list %s", graph_keys[i]);
  g_hash_table_destroy(accels);
}

/* Every key the Timeline binds (its class's shortcuts, read from the
 * widget) is in the shortcuts window. */
static void assert_shortcuts_list_timeline_keys(GtkWindow *shortcuts)
{
  g_autoptr(GHashTable) accels = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  collect_accels(GTK_WIDGET(shortcuts), accels);
  GtkWidget *timeline = g_object_ref_sink(ts_timeline_new());
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers(timeline);
  int n_keys = 0;
  for (guint i = 0; i < g_list_model_get_n_items(controllers); i++) {
    g_autoptr(GObject) controller = g_list_model_get_item(controllers, i);
    if (!GTK_IS_SHORTCUT_CONTROLLER(controller))
      continue;
    for (guint k = 0; k < g_list_model_get_n_items(G_LIST_MODEL(controller)); k++) {
      g_autoptr(GtkShortcut) shortcut = g_list_model_get_item(G_LIST_MODEL(controller), k);
      g_autofree char *key = gtk_shortcut_trigger_to_string(gtk_shortcut_get_trigger(shortcut));
      if (!g_hash_table_contains(accels, key))
        g_error("the shortcuts window does not list the Timeline's %s", key);
      n_keys++;
    }
  }
  g_assert_cmpint(n_keys, >=, 10); /* zoom, fit, pan, search steps, unselect */
  g_object_unref(timeline);
  /* and the Profiler's keys around it: Ctrl+F opens its Find bar */
  GtkWidget *panel = g_object_ref_sink(g_object_new(TS_TYPE_PROFILER_PANEL, NULL));
  GtkWidget *page = gtk_widget_get_parent(GTK_WIDGET(ts_profiler_panel_get_timeline(TS_PROFILER_PANEL(panel))));
  g_autoptr(GListModel) page_controllers = gtk_widget_observe_controllers(page);
  gboolean find_key = FALSE;
  for (guint i = 0; i < g_list_model_get_n_items(page_controllers); i++) {
    g_autoptr(GObject) controller = g_list_model_get_item(page_controllers, i);
    for (guint k = 0; GTK_IS_SHORTCUT_CONTROLLER(controller) && k < g_list_model_get_n_items(G_LIST_MODEL(controller)); k++) {
      g_autoptr(GtkShortcut) shortcut = g_list_model_get_item(G_LIST_MODEL(controller), k);
      g_autofree char *key = gtk_shortcut_trigger_to_string(gtk_shortcut_get_trigger(shortcut));
      if (!g_hash_table_contains(accels, key))
        g_error("the shortcuts window does not list the Timeline page's %s", key);
      find_key |= g_str_equal(key, "<Control>f");
    }
  }
  g_assert_true(find_key);
  g_object_unref(panel);
}

static gboolean file_exists(gpointer data)
{
  return g_file_test(data, G_FILE_TEST_EXISTS);
}

/* Pixels of a colour (not grey) inside rect of the ARGB32 texture: the op
 * colours of a drawn graph; the "Not Traced Yet" page has none. */
static int coloured_pixels(GdkTexture *texture, const graphene_rect_t *rect)
{
  int width = gdk_texture_get_width(texture), height = gdk_texture_get_height(texture);
  gsize stride = (gsize)width * 4;
  g_autofree guchar *pixels = g_malloc(stride * (gsize)height);
  gdk_texture_download(texture, pixels, stride);
  int n = 0;
  for (int y = MAX((int)rect->origin.y, 0); y < MIN((int)(rect->origin.y + rect->size.height), height); y++)
    for (int x = MAX((int)rect->origin.x, 0); x < MIN((int)(rect->origin.x + rect->size.width), width); x++) {
      const guchar *p = pixels + (gsize)y * stride + (gsize)x * 4;
      int hi = MAX(p[0], MAX(p[1], p[2])), lo = MIN(p[0], MIN(p[1], p[2]));
      n += hi - lo > 60;
    }
  return n;
}

static void remove_tree(const char *path)
{
  GDir *dir = g_dir_open(path, 0, NULL);
  for (const char *name; dir && (name = g_dir_read_name(dir));) {
    g_autofree char *child = g_build_filename(path, name, NULL);
    remove_tree(child);
  }
  if (dir)
    g_dir_close(dir);
  g_remove(path);
}

static gboolean popover_drawn(gpointer data)
{
  return gtk_widget_get_mapped(data) && *(int *)g_object_get_data(data, "frames") >= 2;
}

static void find_cut_labels(GtkWidget *widget, GString *problems)
{
  if (!gtk_widget_get_mapped(widget) || !gtk_widget_get_child_visible(widget))
    return;
  if (GTK_IS_LABEL(widget))
    find_cut_labels_one(widget, problems);
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child))
    find_cut_labels(child, problems);
}

/* Labels wrapped anywhere but between arguments (after ", " outside a
 * shape, or after " · "): each line that does not start a paragraph must
 * follow a breakable space.  Returns how many labels hold `needle`. */
static int find_badly_wrapped_labels(GtkWidget *widget, const char *needle, GString *problems)
{
  if (!gtk_widget_get_mapped(widget))
    return 0;
  int found = 0;
  if (GTK_IS_LABEL(widget)) {
    const char *text = gtk_label_get_text(GTK_LABEL(widget));
    PangoLayout *layout = gtk_label_get_layout(GTK_LABEL(widget));
    const char *layout_text = pango_layout_get_text(layout);
    for (GSList *l = pango_layout_get_lines_readonly(layout); l; l = l->next) {
      int start = ((PangoLayoutLine *)l->data)->start_index;
      if (start == 0 || layout_text[start - 1] == '\n')
        continue;
      gboolean ok = start >= 2 && layout_text[start - 1] == ' ' &&
                    (layout_text[start - 2] == ',' || (start >= 3 && g_str_has_prefix(layout_text + start - 3, "·")));
      if (!ok) {
        g_autofree char *plain = plain_text(text);
        g_string_append_printf(problems, "wrapped inside an argument: '%s' at byte %d\n", plain, start);
      }
    }
    g_autofree char *plain = plain_text(text);
    found += strstr(plain, needle) != NULL;
  }
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child))
    found += find_badly_wrapped_labels(child, needle, problems);
  return found;
}

/* The titles of the table's columns shown, in order, space-separated (owned). */
static char *stats_columns_shown(GtkColumnView *view)
{
  GListModel *columns = gtk_column_view_get_columns(view);
  g_autoptr(GString) shown = g_string_new(NULL);
  for (guint i = 0; i < g_list_model_get_n_items(columns); i++) {
    g_autoptr(GtkColumnViewColumn) col = g_list_model_get_item(columns, i);
    if (gtk_column_view_column_get_visible(col))
      g_string_append_printf(shown, "%s%s", shown->len ? " " : "", gtk_column_view_column_get_title(col));
  }
  return g_string_free(g_steal_pointer(&shown), FALSE);
}

static void resize_and_draw(int width, int height)
{
  gtk_window_set_default_size(GTK_WINDOW(window), width, height);
  wait_drawn(GTK_WIDGET(window));
  wait_idle();
  wait_drawn(GTK_WIDGET(window));
}

/* The window as it is now, at each size and in each theme: every panel fits. */
static void check_layout(const char *state, GString *problems)
{
  GSettings *settings = ts_application_get_settings(app);
  for (guint t = 0; t < G_N_ELEMENTS(LAYOUT_THEMES); t++) {
    g_settings_set_string(settings, "theme", LAYOUT_THEMES[t]);
    for (guint i = 0; i < G_N_ELEMENTS(LAYOUT_SIZES); i++) {
      gtk_window_set_default_size(GTK_WINDOW(window), LAYOUT_SIZES[i][0], LAYOUT_SIZES[i][1]);
      wait_drawn(GTK_WIDGET(window));
      wait_idle();
      wait_drawn(GTK_WIDGET(window));
      GString *found = g_string_new(NULL);
      if (i == 0) /* at the default size all of a function's arguments show; at the smallest they scroll */
        find_hidden_arguments(found);
      find_hidden_result_stats(found); /* the arguments scroll first */
      /* a window bigger than asked for: its panels need more */
      if (gtk_widget_get_width(GTK_WIDGET(window)) > LAYOUT_SIZES[i][0] ||
          gtk_widget_get_height(GTK_WIDGET(window)) > LAYOUT_SIZES[i][1]) {
        int min_w = 0, min_h = 0;
        gtk_widget_measure(GTK_WIDGET(window), GTK_ORIENTATION_HORIZONTAL, -1, &min_w, NULL, NULL, NULL);
        gtk_widget_measure(GTK_WIDGET(window), GTK_ORIENTATION_VERTICAL, -1, &min_h, NULL, NULL, NULL);
        g_string_append_printf(found, "the window is %dx%d (its content needs at least %dx%d)\n",
                               gtk_widget_get_width(GTK_WIDGET(window)), gtk_widget_get_height(GTK_WIDGET(window)),
                               min_w, min_h);
      }
      find_cramped(GTK_WIDGET(window), found);
      if (found->len)
        g_string_append_printf(problems, "-- %s at %dx%d, %s:\n%s", state, LAYOUT_SIZES[i][0], LAYOUT_SIZES[i][1],
                               LAYOUT_THEMES[t], found->str);
      g_string_free(found, TRUE);
      g_autofree char *name = g_strdup_printf("layout-%s-%dx%d-%s.png", state, LAYOUT_SIZES[i][0],
                                              LAYOUT_SIZES[i][1], LAYOUT_THEMES[t]);
      save_test_screenshot(GTK_WIDGET(window), name);
    }
  }
  g_settings_reset(settings, "theme");
}

/* The mean brightness (0-255) of rect in the ARGB32 texture. */
static double mean_brightness(GdkTexture *texture, const graphene_rect_t *rect)
{
  int width = gdk_texture_get_width(texture), height = gdk_texture_get_height(texture);
  gsize stride = (gsize)width * 4;
  g_autofree guchar *pixels = g_malloc(stride * (gsize)height);
  gdk_texture_download(texture, pixels, stride);
  double sum = 0;
  int n = 0;
  for (int y = MAX((int)rect->origin.y, 0); y < MIN((int)(rect->origin.y + rect->size.height), height); y++)
    for (int x = MAX((int)rect->origin.x, 0); x < MIN((int)(rect->origin.x + rect->size.width), width); x++) {
      const guchar *p = pixels + (gsize)y * stride + (gsize)x * 4;
      sum += (p[0] + p[1] + p[2]) / 3.0;
      n++;
    }
  return n ? sum / n : 0;
}

/* The stack switcher of stack under widget, or NULL. */
static GtkWidget *switcher_of(GtkWidget *widget, GtkStack *stack)
{
  if (GTK_IS_STACK_SWITCHER(widget) && gtk_stack_switcher_get_stack(GTK_STACK_SWITCHER(widget)) == stack)
    return widget;
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child)) {
    GtkWidget *found = switcher_of(child, stack);
    if (found)
      return found;
  }
  return NULL;
}

/* The command line of `tracescope`: --compare needs two indexes and --function. */
static void test_startup_options(void)
{
  char *good[] = { "tracescope", "--module", "seeds", "--function", "shape_retrace",
                   "--compare", "0,1", "--expand-all", "--device", "SIM:0", NULL };
  int argc = G_N_ELEMENTS(good) - 1;
  char **argv = good;
  GError *error = NULL;
  TsStartup *s = ts_startup_parse(&argc, &argv, &error);
  g_assert_no_error(error);
  g_assert_cmpint(s->compare[0], ==, 0);
  g_assert_cmpint(s->compare[1], ==, 1);
  g_assert_true(s->expand_all);
  g_assert_cmpstr(s->device, ==, "SIM:0");
  ts_startup_free(s);

  char *bad[] = { "tracescope", "--module", "seeds", "--compare", "0", NULL };
  argc = G_N_ELEMENTS(bad) - 1;
  argv = bad;
  g_assert_null(ts_startup_parse(&argc, &argv, &error));
  g_assert_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
  g_assert_nonnull(strstr(error->message, "--compare takes two concrete function indexes"));
  g_clear_error(&error);

  /* every panel of the window's bottom, the debugger's too */
  char *debugger[] = { "tracescope", "--panel", "debugger", NULL };
  argc = G_N_ELEMENTS(debugger) - 1;
  argv = debugger;
  s = ts_startup_parse(&argc, &argv, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(s->panel, ==, "debugger");
  ts_startup_free(s);
  char *no_panel[] = { "tracescope", "--panel", "debug", NULL };
  argc = G_N_ELEMENTS(no_panel) - 1;
  argv = no_panel;
  g_assert_null(ts_startup_parse(&argc, &argv, &error));
  g_assert_nonnull(strstr(error->message, "--panel takes trace-log, console, profiler or debugger, got 'debug'"));
  g_clear_error(&error);

  /* Debug mode from the command line: one call, stopping at --break's */
  char *debug[] = { "tracescope", "-m", "seeds", "-f", "power", "--mode", "debug", "--break", "MatMul",
                    "--break", "nan", "--call", "-a", "f32[2,2]:ones", "-a", "2", NULL };
  argc = G_N_ELEMENTS(debug) - 1;
  argv = debug;
  s = ts_startup_parse(&argc, &argv, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(s->mode, ==, "debug");
  g_assert_cmpstrv(s->breakpoints, ((const char *const[]){ "MatMul", "nan", NULL }));
  ts_startup_free(s);
  static const struct {
    const char *argv[12], *error;
  } refused[] = {
    { { "tracescope", "--mode", "step", NULL }, "--mode takes graph, eager or debug, got 'step'" },
    { { "tracescope", "--break", "MatMul", NULL }, "--break needs --mode=debug" },
    { { "tracescope", "-m", "seeds", "-f", "power", "--mode", "debug", "--call", "-a", "1", "--call", NULL },
      "--mode=debug debugs one call, 2 given with --call" },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
    char **args = g_strdupv((char **)refused[i].argv), **given = args;
    argc = (int)g_strv_length(args);
    g_assert_null(ts_startup_parse(&argc, &given, &error));
    g_assert_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
    g_assert_cmpstr(error->message, ==, refused[i].error);
    g_clear_error(&error);
    g_strfreev(args);
  }
  /* a mistyped option: the nearest one */
  char *typo[] = { "tracescope", "--modul", "seeds", NULL };
  argc = G_N_ELEMENTS(typo) - 1;
  argv = typo;
  g_assert_null(ts_startup_parse(&argc, &argv, &error));
  g_assert_error(error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION);
  g_assert_nonnull(strstr(error->message, "--modul (did you mean '--module'?)"));
  g_clear_error(&error);
  char *typo_value[] = { "tracescope", "--module", "seeds", "--screenshoot=a.png", NULL };
  argc = G_N_ELEMENTS(typo_value) - 1;
  argv = typo_value;
  g_assert_null(ts_startup_parse(&argc, &argv, &error));
  g_assert_nonnull(strstr(error->message, "(did you mean '--screenshot'?)"));
  g_clear_error(&error);
}

/* Preferences, About and the shortcuts window (with the graph's and the
 * Timeline's keys) open; the style follows the setting. */
static void test_dialogs_and_style(void)
{
  g_action_group_activate_action(G_ACTION_GROUP(app), "preferences", NULL);
  close_toplevel(ADW_TYPE_PREFERENCES_WINDOW);
  g_action_group_activate_action(G_ACTION_GROUP(app), "about", NULL);
  close_toplevel(ADW_TYPE_ABOUT_WINDOW);
  activate("win.show-help-overlay", NULL);
  GtkWindow *shortcuts = find_toplevel(GTK_TYPE_SHORTCUTS_WINDOW);
  assert_shortcuts_list_graph_keys(shortcuts);
  assert_shortcuts_list_timeline_keys(shortcuts);
  if (g_getenv("TS_SHORTCUTS_SCREENSHOT")) { /* the graph's page (or TS_SHORTCUTS_SECTION's), for the README */
    g_object_set(shortcuts, "section-name", g_getenv("TS_SHORTCUTS_SECTION") ? g_getenv("TS_SHORTCUTS_SECTION") : "graph", NULL);
    test_wait_for(no_transition, shortcuts, "the shortcuts window to switch pages");
    int frames = 0;
    gtk_widget_add_tick_callback(GTK_WIDGET(shortcuts), count_frame, &frames, NULL);
    test_wait_for(two_frames, &frames, "the shortcuts window to draw");
    g_assert_true(ts_screenshot_save(GTK_WIDGET(shortcuts), g_getenv("TS_SHORTCUTS_SCREENSHOT"), NULL));
  }
  close_toplevel(GTK_TYPE_SHORTCUTS_WINDOW);

  GSettings *settings = ts_application_get_settings(app);
  AdwStyleManager *style = adw_style_manager_get_default();
  g_settings_set_string(settings, "theme", "dark");
  g_assert_cmpint(adw_style_manager_get_color_scheme(style), ==, ADW_COLOR_SCHEME_FORCE_DARK);
  g_settings_set_string(settings, "theme", "system");
  g_assert_cmpint(adw_style_manager_get_color_scheme(style), ==, ADW_COLOR_SCHEME_DEFAULT);
}

static void test_screenshot(void)
{
  int frames = 0;
  gtk_widget_add_tick_callback(GTK_WIDGET(window), count_frame, &frames, NULL);
  gtk_widget_queue_draw(GTK_WIDGET(window));
  test_wait_for(two_frames, &frames, "the window to draw");
  g_assert_true(gtk_widget_get_mapped(GTK_WIDGET(window)));
  g_autofree char *path = g_build_filename(tmp_dir, "window.png", NULL);
  g_autoptr(GError) error = NULL;
  gboolean saved = ts_screenshot_save(GTK_WIDGET(window), path, &error);
  g_assert_no_error(error);
  g_assert_true(saved);
  g_autoptr(GdkTexture) texture = gdk_texture_new_from_filename(path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(gdk_texture_get_width(texture), ==, gtk_widget_get_width(GTK_WIDGET(window)));
  g_unlink(path);
}

static void draw_one_line(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_set_line_width(cr, 1);
  cairo_move_to(cr, 60.5, 0);
  cairo_line_to(cr, 60.5, height);
  cairo_stroke(cr);
}

/* A screenshot is the window pixel for pixel: a window with a header bar
 * draws a frame around itself, and squeezing it all into the window's
 * size resampled every pixel (a 1 px line became two grey ones, and small
 * glyphs lost their stems). */
static void test_screenshot_pixel_for_pixel(void)
{
  GtkWindow *frame = GTK_WINDOW(gtk_window_new());
  gtk_window_set_titlebar(frame, gtk_header_bar_new());
  GtkWidget *area = gtk_drawing_area_new();
  gtk_drawing_area_set_content_width(GTK_DRAWING_AREA(area), 200);
  gtk_drawing_area_set_content_height(GTK_DRAWING_AREA(area), 120);
  gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(area), draw_one_line, NULL, NULL);
  gtk_window_set_child(frame, area);
  gtk_window_present(frame);
  wait_drawn(area);
  wait_drawn(area);
  g_autofree char *path = g_build_filename(tmp_dir, "line.png", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(ts_screenshot_save(GTK_WIDGET(frame), path, &error));
  g_assert_no_error(error);
  g_autoptr(GdkTexture) texture = gdk_texture_new_from_filename(path, &error);
  g_assert_no_error(error);
  g_unlink(path);
  graphene_rect_t box;
  g_assert_true(gtk_widget_compute_bounds(area, GTK_WIDGET(frame), &box));
  double x = box.origin.x + 60, y = box.origin.y + 20;
  g_assert_cmpfloat(mean_brightness(texture, &GRAPHENE_RECT_INIT(x, y, 1, 60)), <, 40);
  g_assert_cmpfloat(mean_brightness(texture, &GRAPHENE_RECT_INIT(x - 1, y, 1, 60)), >, 215);
  g_assert_cmpfloat(mean_brightness(texture, &GRAPHENE_RECT_INIT(x + 1, y, 1, 60)), >, 215);
  gtk_window_destroy(frame);
}

/* `tracescope --screenshot` with a single --call: the script waits until
 * the graph is laid out and drawn, so the PNG shows the graph, never the
 * "Not Traced Yet" page.  Runs the script of a second application, in
 * this process, so that the window it shot can be looked at. */
static void test_screenshot_waits_for_graph(void)
{
  g_autofree char *path = g_build_filename(tmp_dir, "script.png", NULL);
  /* options for this run only: the saved settings stay as they were */
  char *args[] = { "tracescope", "--module", (char *)seeds_path(), "--function", SIDE_EFFECT,
                   "--call", "--arg", "2", "--size", "1000x700", "--colour", "compute-time", "--profile",
                   "--screenshot", path, NULL };
  GSettings *settings = ts_application_get_settings(app);
  g_autofree char *colour_before = g_settings_get_string(settings, "colour-mode");
  gboolean profile_before = g_settings_get_boolean(settings, "profile");
  g_assert_cmpstr(colour_before, !=, "compute-time");
  int argc = G_N_ELEMENTS(args) - 1;
  char **argv = args;
  g_autoptr(GError) error = NULL;
  TsStartup *startup = ts_startup_parse(&argc, &argv, &error);
  g_assert_no_error(error);
  TsApplication *shot_app = ts_application_new(startup);
  g_assert_true(g_application_register(G_APPLICATION(shot_app), NULL, NULL));
  g_application_activate(G_APPLICATION(shot_app));
  test_wait_for(file_exists, path, "the screenshot");
  GList *windows = gtk_application_get_windows(GTK_APPLICATION(shot_app));
  g_assert_nonnull(windows);
  TsWindow *shot = TS_WINDOW(windows->data);
  /* what the screenshot waited on */
  TsGraphPane *pane = ts_window_get_graph_pane(shot);
  g_assert_false(ts_window_get_busy(shot));
  g_assert_nonnull(ts_graph_pane_get_concrete(pane));
  g_assert_true(ts_graph_pane_get_drawn(pane));
  g_assert_true(ts_window_get_graph_drawn(shot));
  /* the options took effect in the window, not in the settings the next launch reads */
  g_assert_cmpint(ts_graph_view_get_colouring(TS_GRAPH_VIEW(ts_graph_pane_get_view(pane))), ==,
                  TS_RENDER_COLOUR_COMPUTE_TIME);
  g_autoptr(GVariant) profiling = g_action_group_get_action_state(G_ACTION_GROUP(shot), "profile");
  g_assert_true(g_variant_get_boolean(profiling));
  g_autofree char *colour_after = g_settings_get_string(settings, "colour-mode");
  g_assert_cmpstr(colour_after, ==, colour_before);
  g_assert_cmpint(g_settings_get_boolean(settings, "profile"), ==, profile_before);
  /* and what the PNG shows where the graph pane is */
  g_autoptr(GdkTexture) texture = gdk_texture_new_from_filename(path, &error);
  g_assert_no_error(error);
  graphene_rect_t bounds;
  g_assert_true(gtk_widget_compute_bounds(GTK_WIDGET(pane), GTK_WIDGET(shot), &bounds));
  int coloured = coloured_pixels(texture, &bounds);
  if (coloured < 500)
    g_error("the screenshot's graph pane has %d coloured pixels: not a drawn graph", coloured);

  /* the measure tells them apart: the page of a function not traced has none */
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(shot), "win.select-function", "s", "simple_relu"));
  g_assert_null(ts_graph_pane_get_concrete(pane));
  test_wait_for(graph_drawn, shot, "the cross-fade to the status page");
  int frames = 0;
  gtk_widget_add_tick_callback(GTK_WIDGET(shot), count_frame, &frames, NULL);
  gtk_widget_queue_draw(GTK_WIDGET(shot));
  test_wait_for(two_frames, &frames, "the window to draw");
  g_assert_true(ts_screenshot_save(GTK_WIDGET(shot), path, &error));
  g_assert_no_error(error);
  g_autoptr(GdkTexture) placeholder = gdk_texture_new_from_filename(path, &error);
  g_assert_no_error(error);
  g_assert_true(gtk_widget_compute_bounds(GTK_WIDGET(pane), GTK_WIDGET(shot), &bounds));
  g_assert_cmpint(coloured_pixels(placeholder, &bounds), <, 50);
  g_object_add_weak_pointer(G_OBJECT(shot), (gpointer *)&shot);
  gtk_window_destroy(GTK_WINDOW(shot));
  while (shot)
    g_main_context_iteration(NULL, TRUE);
  g_object_unref(shot_app);
  g_unlink(path);
}

static gboolean window_has_module(gpointer w)
{
  return ts_window_get_module(w) != NULL;
}

/* `tracescope --screenshot X.png trace.json.gz`: another tool's trace (PyTorch's
 * profiler's) with no module.  The script waits for the file, not for a graph
 * there is none of, and the window gives the profiler's timeline all its room:
 * no empty function list, graph page or argument editor. */
static void test_screenshot_trace(void)
{
  g_autofree char *path = g_build_filename(tmp_dir, "trace.png", NULL);
  g_autofree char *trace = g_test_build_filename(G_TEST_DIST, "data", "traces", "torch-mlp.json.gz", NULL);
  char *args[] = { "tracescope", "--size", "1280x800", "--screenshot", path, NULL };
  int argc = G_N_ELEMENTS(args) - 1;
  char **argv = args;
  g_autoptr(GError) error = NULL;
  TsStartup *startup = ts_startup_parse(&argc, &argv, &error);
  g_assert_no_error(error);
  TsApplication *shot_app = ts_application_new(startup);
  g_assert_true(g_application_register(G_APPLICATION(shot_app), NULL, NULL));
  g_autoptr(GFile) file = g_file_new_for_path(trace);
  g_application_open(G_APPLICATION(shot_app), &file, 1, "");
  test_wait_for(file_exists, path, "the screenshot");
  GList *windows = gtk_application_get_windows(GTK_APPLICATION(shot_app));
  g_assert_nonnull(windows);
  TsWindow *shot = TS_WINDOW(windows->data);
  g_assert_null(ts_window_get_module(shot));
  g_assert_null(ts_window_get_error_dialog(shot));
  TsProfilerPanel *panel = ts_window_get_profiler_panel(shot);
  const tsp_session *session = ts_profiler_panel_get_session(panel);
  g_assert_nonnull(session);
  g_assert_cmpuint(tsp_session_n_events(session), ==, 354);
  g_assert_false(gtk_widget_is_visible(GTK_WIDGET(ts_window_get_graph_pane(shot))));
  g_assert_false(gtk_widget_is_visible(GTK_WIDGET(ts_window_get_function_list(shot))));
  /* nor run controls that could run nothing: only Open (a module) and the menu */
  static const char *const RUN_ACTIONS[] = { "win.run", "win.profile", "win.mode" };
  for (size_t i = 0; i < G_N_ELEMENTS(RUN_ACTIONS); i++) {
    GtkWidget *control = find_actionable(GTK_WIDGET(shot), RUN_ACTIONS[i]);
    g_assert_nonnull(control);
    if (gtk_widget_is_visible(control))
      g_error("a window of a trace alone shows the %s control", RUN_ACTIONS[i]);
  }
  g_assert_true(gtk_widget_is_visible(find_actionable(GTK_WIDGET(shot), "win.open")));
  g_assert_true(find_label(GTK_WIDGET(shot), "torch-mlp.json.gz")); /* the window's title */
  GtkWidget *timeline = GTK_WIDGET(ts_profiler_panel_get_timeline(panel));
  g_assert_true(gtk_widget_is_visible(timeline));
  graphene_rect_t bounds;
  g_assert_true(gtk_widget_compute_bounds(timeline, GTK_WIDGET(shot), &bounds));
  if (bounds.size.width < 0.9 * gtk_widget_get_width(GTK_WIDGET(shot)) ||
      bounds.size.height < 0.6 * gtk_widget_get_height(GTK_WIDGET(shot)))
    g_error("the timeline has %.0fx%.0f of a %dx%d window", bounds.size.width, bounds.size.height,
            gtk_widget_get_width(GTK_WIDGET(shot)), gtk_widget_get_height(GTK_WIDGET(shot)));
  g_autoptr(GdkTexture) texture = gdk_texture_new_from_filename(path, &error);
  g_assert_no_error(error);
  int coloured = coloured_pixels(texture, &bounds);
  if (coloured < 2000)
    g_error("the screenshot's timeline has %d coloured pixels: not a drawn trace", coloured);

  ts_profiler_panel_show_page(panel, "stats");
  g_assert_false(ts_profiler_panel_get_busy(panel));
  g_assert_cmpuint(ts_profiler_panel_get_n_rows(panel), ==, 45);
  wait_drawn(GTK_WIDGET(shot));
  save_test_screenshot(GTK_WIDGET(shot), "trace-op-stats.png");

  /* the Call Tree: the heaviest path open, self times as torch's (the test's
   * fixture: the training step's optimizer.step holds SGD's 52 µs of self time) */
  ts_profiler_panel_show_page(panel, "calltree");
  TsCallTree *tree_view = ts_profiler_panel_get_call_tree(panel);
  const tsp_tree *tree = ts_call_tree_get_tree(tree_view);
  g_assert_nonnull(tree);
  guint rows = ts_call_tree_get_n_rows(tree_view);
  g_assert_cmpuint(rows, >, 3); /* the roots, and the largest one's children open */
  const tsp_tree_node *top = &tree->nodes[ts_call_tree_get_node(tree_view, 0)];
  g_assert_cmpint(top->depth, ==, 0);
  g_assert_cmpint(tree->nodes[ts_call_tree_get_node(tree_view, 1)].parent, ==, ts_call_tree_get_node(tree_view, 0));
  double self_sum = 0;
  for (int i = 0; i < tree->n; i++)
    self_sum += tree->nodes[i].self_ns;
  g_assert_cmpfloat(fabs(self_sum - 476000), <, 1); /* tracescope-cli stats: 0.476 ms in ops */
  for (int i = tree->first_root; i >= 0; i = tree->nodes[i].next_sibling)
    if (strcmp(tree->nodes[i].name, "Optimizer.step#SGD.step") == 0)
      g_assert_cmpfloat(tree->nodes[i].self_ns, ==, 52000);
  wait_drawn(GTK_WIDGET(shot));
  save_test_screenshot(GTK_WIDGET(shot), "trace-call-tree.png");

  /* against a baseline where aten::mm took 1 µs a run (torch's took 2 µs, the median) */
  g_autofree char *baseline = g_build_filename(tmp_dir, "baseline.json", NULL);
  GString *json = g_string_new("[");
  for (int i = 0; i < 9; i++)
    g_string_append_printf(json, "%s{\"ph\":\"X\",\"name\":\"aten::mm\",\"tid\":1,\"ts\":%d,\"dur\":1}",
                           i ? "," : "", 10 * i);
  g_string_append(json, ",{\"ph\":\"X\",\"name\":\"gone\",\"tid\":1,\"ts\":100,\"dur\":1}]");
  g_assert_true(g_file_set_contents(baseline, json->str, (gssize)json->len, NULL));
  g_string_free(json, TRUE);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(shot), "win.compare-trace-from", "s", baseline));
  TsDiffTable *diff_view = ts_profiler_panel_get_diff_table(panel);
  test_wait_for(diff_shown, diff_view, "the diff against the baseline");
  const tsp_diff *diff = ts_diff_table_get_diff(diff_view);
  g_assert_cmpint(diff->n, ==, 45 + 1); /* torch's ops and the baseline's own */
  gboolean mm = FALSE, gone = FALSE;
  for (int i = 0; i < diff->n; i++) {
    const tsp_diff_row *r = &diff->rows[i];
    if (strcmp(r->key, "aten::mm") == 0) {
      g_assert_cmpuint(r->count[0], ==, 9);
      g_assert_cmpuint(r->count[1], ==, 9);
      g_assert_cmpfloat(r->ratio, ==, 2); /* slower in the recording shown */
      mm = TRUE;
    } else if (strcmp(r->key, "gone") == 0) {
      g_assert_cmpstr(r->only, ==, "only in A");
      gone = TRUE;
    } else {
      g_assert_cmpstr(r->only, ==, "only in B");
    }
  }
  g_assert_true(mm && gone);
  wait_drawn(GTK_WIDGET(shot));
  save_test_screenshot(GTK_WIDGET(shot), "trace-diff.png");
  g_unlink(baseline);

  /* a module opened there brings the run controls back */
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(shot), "win.open-module", "s", seeds_path()));
  test_wait_for(window_has_module, shot, "the module in the trace's window");
  for (size_t i = 0; i < G_N_ELEMENTS(RUN_ACTIONS); i++)
    g_assert_true(gtk_widget_is_visible(find_actionable(GTK_WIDGET(shot), RUN_ACTIONS[i])));
  g_object_add_weak_pointer(G_OBJECT(shot), (gpointer *)&shot);
  gtk_window_destroy(GTK_WINDOW(shot));
  while (shot)
    g_main_context_iteration(NULL, TRUE);
  g_object_unref(shot_app);
  g_unlink(path);
}

/* Runs argv (the app and its options; env NULL: this process's) to its
 * end: its stdout and stderr in *out and *err (owned), its wait status. */
static int run_app(const char *const *argv, char **env, char **out, char **err)
{
  int wait_status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, env, G_SPAWN_DEFAULT, NULL, NULL, out, err, &wait_status, &error));
  g_assert_no_error(error);
  return wait_status;
}

/* `tracescope --help` names every kind of file the app opens. */
static void test_help_files(void)
{
  const char *argv[] = { g_getenv("TRACESCOPE_APP"), "--help", NULL };
  g_assert_nonnull(argv[0]);
  g_autofree char *out = NULL, *err = NULL;
  g_assert_true(g_spawn_check_wait_status(run_app(argv, NULL, &out, &err), NULL));
  const char *kinds[] = { "[FILE]", "MODULE.so", "SESSION.json", "TRACE.json[.gz]", "PyTorch" };
  for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
    if (!strstr(out, kinds[i]))
      g_error("tracescope --help does not name %s:\n%s", kinds[i], out);
}

/* Started with no session bus (Xvfb alone, ssh, a container), the app
 * prints no warning: G_DEBUG=fatal-warnings would make any of them abort. */
static void test_headless_start_quiet(void)
{
  const char *exe = g_getenv("TRACESCOPE_APP");
  g_assert_nonnull(exe);
  g_autofree char *path = g_build_filename(tmp_dir, "headless.png", NULL);
  g_autofree char *config = g_build_filename(tmp_dir, "config", NULL);
  char **env = g_get_environ();
  const char *drop[] = { "DBUS_SESSION_BUS_ADDRESS", "GTK_A11Y", "NO_AT_BRIDGE", "GSETTINGS_BACKEND" };
  for (guint i = 0; i < G_N_ELEMENTS(drop); i++)
    env = g_environ_unsetenv(env, drop[i]);
  env = g_environ_setenv(env, "G_DEBUG", "fatal-warnings", TRUE);
  env = g_environ_setenv(env, "XDG_CONFIG_HOME", config, TRUE); /* the keyfile settings */
  env = g_environ_setenv(env, "ASAN_OPTIONS", "detect_leaks=0", TRUE);
  const char *argv[] = { exe, "--module", seeds_path(), "--function", SIDE_EFFECT, "--call",
                         "--arg", "2", "--size", "900x600", "--screenshot", path, NULL };
  g_autofree char *out = NULL, *err = NULL;
  int wait_status = run_app(argv, env, &out, &err);
  g_strfreev(env);
  if (!g_spawn_check_wait_status(wait_status, NULL) || strstr(err, "WARNING") || strstr(err, "CRITICAL"))
    g_error("a headless start printed:\n%s", err);
  g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
  g_unlink(path);
  remove_tree(config);
}

/* Started with no display at all (ssh without -X, a plain container), the
 * app says so and what to run instead, exits 1, and GTK warns nothing. */
static void test_no_display(void)
{
  const char *exe = g_getenv("TRACESCOPE_APP");
  g_assert_nonnull(exe);
  char **env = g_environ_unsetenv(g_get_environ(), "DISPLAY");
  env = g_environ_unsetenv(env, "WAYLAND_DISPLAY");
  env = g_environ_setenv(env, "ASAN_OPTIONS", "detect_leaks=0", TRUE);
  const char *argv[] = { exe, "--module", seeds_path(), NULL };
  g_autofree char *out = NULL, *err = NULL;
  int wait_status = run_app(argv, env, &out, &err);
  g_strfreev(env);
  g_autoptr(GError) error = NULL;
  g_assert_false(g_spawn_check_wait_status(wait_status, &error));
  g_assert_error(error, G_SPAWN_EXIT_ERROR, 1);
  g_assert_cmpstr(out, ==, "");
  g_assert_true(g_str_has_prefix(err, "tracescope: cannot open a display: neither DISPLAY nor WAYLAND_DISPLAY is set.\n"));
  g_assert_nonnull(strstr(err, "xvfb-run -a tracescope --screenshot"));
  g_assert_nonnull(strstr(err, "tracescope-cli"));
  g_assert_null(strstr(err, "WARNING"));
}

/* Runs `tracescope ARGS... --screenshot FILE` headless and returns its
 * stderr; *failed says whether it exited with a failure. */
static char *screenshot_stderr(const char *const *args, gboolean *failed)
{
  g_autofree char *path = g_build_filename(tmp_dir, "refused.png", NULL);
  g_autoptr(GStrvBuilder) b = g_strv_builder_new();
  g_strv_builder_add(b, g_getenv("TRACESCOPE_APP"));
  g_strv_builder_addv(b, (const char **)args);
  g_strv_builder_add_many(b, "--size", "900x600", "--screenshot", path, NULL);
  g_auto(GStrv) argv = g_strv_builder_end(b);
  char **env = g_environ_setenv(g_get_environ(), "ASAN_OPTIONS", "detect_leaks=0", TRUE);
  g_autofree char *out = NULL;
  char *err = NULL;
  int wait_status = run_app((const char *const *)argv, env, &out, &err);
  g_strfreev(env);
  *failed = !g_spawn_check_wait_status(wait_status, NULL);
  if (*failed)
    g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS)); /* no picture of what was not asked for */
  g_unlink(path);
  return err;
}

/* A scripted screenshot the module cannot play fails and says why, as
 * tracescope-cli does, rather than picturing something else: a function the
 * module lacks, a call with more (or fewer) --arg than the function takes. */
static void test_screenshot_refuses_bad_script(void)
{
  gboolean failed = FALSE;
  g_autofree char *typo = screenshot_stderr((const char *const[]){ "--module", seeds_path(), "--function",
                                                                   "deep_nett", "--call", NULL }, &failed);
  g_assert_true(failed);
  g_assert_nonnull(strstr(typo, "has no function 'deep_nett' (did you mean 'deep_net'?)"));
  g_autofree char *extra = screenshot_stderr((const char *const[]){ "--module", seeds_path(), "--function",
                                                                    "deep_net", "--call", "--arg",
                                                                    "i32[2]:ones", "--arg", "3", NULL }, &failed);
  g_assert_true(failed);
  g_assert_nonnull(strstr(extra, "deep_net(x) takes 1 argument, 2 given with --arg"));
  g_autofree char *few = screenshot_stderr((const char *const[]){ "--module", seeds_path(), "--function",
                                                                  "simple_nn_layer", "--call", "--arg",
                                                                  "f32[2,2]:ones", NULL }, &failed);
  g_assert_true(failed);
  g_assert_nonnull(strstr(few, "simple_nn_layer(x, y) takes 2 arguments, 1 given with --arg"));
  g_autofree char *bad_break = screenshot_stderr((const char *const[]){ "--module", seeds_path(), "--function",
                                                                        "power", "--mode", "debug", "--break",
                                                                        "max >> 2", "--call", "--arg",
                                                                        "f32[2,2]:ones", "--arg", "2", NULL },
                                                 &failed);
  g_assert_true(failed);
  /* the breakpoint named once, then what was wrong with it */
  g_assert_nonnull(strstr(bad_break, "--break: breakpoint 'max >> 2': expected a number after the comparison"));
  g_assert_null(strstr(strstr(bad_break, "max >> 2") + 1, "breakpoint 'max >> 2'"));
}

/* An argument the user typed is refused with the op and the detail, not
 * with the engine source location the error was raised at. */
static void test_input_error_message(void)
{
  ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ .file = "../engine/io/arg_spec.c", .func = "make", .line = 204 },
               "Range", "values from 0 to 299 do not fit in uint8");
  ts_error *e = ts_error_take();
  g_assert_nonnull(strstr(e->message, "arg_spec.c:204"));
  g_autofree char *message = ts_engine_error_input_message(e);
  g_assert_cmpstr(message, ==, "Range: values from 0 to 299 do not fit in uint8");
  ts_error_free(e);
  ts_error_set(TS_ERR_INVALID_ARGUMENT, (ts_loc){ .file = "arg_spec.c", .line = 12 }, NULL, "bad spec");
  e = ts_error_take();
  g_autofree char *plain = ts_engine_error_input_message(e);
  g_assert_cmpstr(plain, ==, "bad spec");
  ts_error_free(e);
}

/* "my_module.so" shows as such in the recent modules, not as "mymodule.so"
 * (a single underscore is a mnemonic mark in menus). */
static void test_recent_menu_underscores(void)
{
  GSettings *settings = ts_application_get_settings(app);
  g_auto(GStrv) old = g_settings_get_strv(settings, "recent-modules");
  const char *recent[] = { "/home/me/my_module.so", "seeds", NULL };
  g_settings_set_strv(settings, "recent-modules", recent);
  while (g_main_context_iteration(NULL, FALSE))
    ;
  GMenuModel *menu = ts_window_get_recent_menu(window);
  g_assert_cmpint(g_menu_model_get_n_items(menu), ==, 1);
  g_autofree char *label = NULL;
  g_assert_true(g_menu_model_get_item_attribute(menu, 0, "label", "s", &label));
  g_assert_cmpstr(label, ==, "my__module.so");
  /* as GTK draws it */
  GtkWidget *popover = gtk_popover_menu_new_from_model(menu);
  gtk_widget_set_parent(popover, GTK_WIDGET(ts_window_get_graph_pane(window)));
  int frames = 0;
  g_object_set_data(G_OBJECT(popover), "frames", &frames);
  gtk_widget_add_tick_callback(popover, count_frame, &frames, NULL);
  gtk_popover_popup(GTK_POPOVER(popover));
  test_wait_for(popover_drawn, popover, "the menu to show");
  g_assert_true(find_label(popover, "my_module.so"));
  const char *shots = g_getenv("TS_TEST_SCREENSHOTS");
  if (shots) {
    g_autofree char *path = g_build_filename(shots, "recent-menu.png", NULL);
    g_assert_true(ts_screenshot_save(popover, path, NULL));
  }
  gtk_popover_popdown(GTK_POPOVER(popover));
  gtk_widget_unparent(popover);
  g_settings_set_strv(settings, "recent-modules", (const char *const *)old);
}

/* The trace log, the console and the preferences show their text whole, or
 * ellipsized with the whole text in a tooltip. */
static void test_no_cut_text(void)
{
  gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  select_function(SIDE_EFFECT);
  run_with((const char *const[]){ "5", NULL });
  run_with((const char *const[]){ "6", NULL });
  select_function("get_MSE");
  run_with((const char *const[]){ "i32[2,3]:ones", "i32[2,3]:zeros", NULL });
  activate("win.show-panel", "s", "trace-log");
  test_wait_for(graph_drawn, window, "the graph");
  wait_drawn(GTK_WIDGET(window));
  g_autoptr(GString) problems = g_string_new(NULL);
  /* every column in sight: the table is no wider than its scrolled window */
  GtkWidget *log = GTK_WIDGET(ts_window_get_trace_log(window));
  GtkWidget *table = find_widget(log, GTK_TYPE_COLUMN_VIEW);
  GtkWidget *scrolled = gtk_widget_get_ancestor(table, GTK_TYPE_SCROLLED_WINDOW);
  int table_width = 0;
  gtk_widget_measure(table, GTK_ORIENTATION_HORIZONTAL, -1, &table_width, NULL, NULL, NULL);
  if (table_width > gtk_widget_get_width(scrolled))
    g_string_append_printf(problems, "the trace log needs %d px, has %d\n", table_width,
                           gtk_widget_get_width(scrolled));
  find_cut_labels(GTK_WIDGET(ts_window_get_trace_log(window)), problems);
  save_test_screenshot(GTK_WIDGET(window), "trace-log.png");
  /* the sidebar: never wrapped inside a shape or a name */
  GtkWidget *sidebar = GTK_WIDGET(ts_window_get_function_list(window));
  find_cut_labels(sidebar, problems);
  g_assert_cmpint(find_badly_wrapped_labels(sidebar, "shape=(2, 3)", problems), >=, 1);
  /* a long name is shown whole where there is room, and where there is
   * not, ellipsized with the whole name in its tooltip */
  select_function(SIDE_EFFECT);
  wait_drawn(GTK_WIDGET(window));
  g_assert_cmpint(find_badly_wrapped_labels(sidebar, SIDE_EFFECT, problems), >=, 1);
  GtkWidget *split = sidebar;
  do
    split = gtk_widget_get_ancestor(gtk_widget_get_parent(split), GTK_TYPE_PANED);
  while (gtk_orientable_get_orientation(GTK_ORIENTABLE(split)) != GTK_ORIENTATION_HORIZONTAL);
  int sidebar_width = gtk_paned_get_position(GTK_PANED(split));
  gtk_paned_set_position(GTK_PANED(split), 0);
  wait_drawn(GTK_WIDGET(window));
  find_cut_labels(sidebar, problems);
  save_test_screenshot(GTK_WIDGET(window), "sidebar-narrowest.png");
  gtk_paned_set_position(GTK_PANED(split), sidebar_width);
  activate("win.show-panel", "s", "console");
  wait_drawn(GTK_WIDGET(window));
  find_cut_labels(GTK_WIDGET(ts_window_get_console(window)), problems);
  save_test_screenshot(GTK_WIDGET(window), "console.png");

  TsPreferencesWindow *prefs = ts_preferences_window_new(GTK_WINDOW(window), ts_application_get_settings(app));
  gtk_window_present(GTK_WINDOW(prefs));
  wait_drawn(GTK_WIDGET(prefs));
  find_cut_labels(GTK_WIDGET(prefs), problems);
  save_test_screenshot(GTK_WIDGET(prefs), "preferences.png");
  gtk_window_destroy(GTK_WINDOW(prefs));
  if (problems->len)
    g_error("text cut:\n%s", problems->str);
}

/* The Result header says which call the result is of: too long for the
 * run panel at the default size, it keeps its start (the function's name)
 * and is ellipsized further on, the whole text in its tooltip. */
static void test_result_header_shows_function(void)
{
  resize_and_draw(1280, 800);
  select_function("sequential_model");
  run_with((const char *const[]){ "f32[4,28,28]:uniform", NULL });
  wait_drawn(GTK_WIDGET(window));
  const char *meta = ts_run_panel_get_meta(ts_window_get_run_panel(window));
  /* "#3 sequential_model(f32[4,28,28]:uniform) · f32[4,10] · graph · 1 call, 25.825 ms" */
  const char *name_at = strstr(meta, "sequential_model(");
  g_assert_nonnull(name_at);
  g_autofree char *start = g_strndup(meta, (gsize)(name_at - meta) + strlen("sequential_model("));
  g_assert_true(g_regex_match_simple("^#[0-9]+ sequential_model\\($", start, 0, 0));
  GtkWidget *header = find_named(GTK_WIDGET(ts_window_get_run_panel(window)), "result-meta");
  g_assert_nonnull(header);
  g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(header)), ==, meta);
  save_test_screenshot(GTK_WIDGET(window), "result-header.png");
  g_assert_true(pango_layout_is_ellipsized(gtk_label_get_layout(GTK_LABEL(header)))); /* too long here */
  g_assert_cmpstr(gtk_widget_get_tooltip_text(header), ==, meta);
  /* the middle goes, the start stays: the function's name fits in the
   * half of the label before the ellipsis (and the time at its end shows) */
  g_assert_cmpint(gtk_label_get_ellipsize(GTK_LABEL(header)), ==, PANGO_ELLIPSIZE_MIDDLE);
  g_autoptr(PangoLayout) name = gtk_widget_create_pango_layout(header, start);
  int name_width = 0;
  pango_layout_get_pixel_size(name, &name_width, NULL);
  g_assert_cmpint(name_width, <, gtk_widget_get_width(header) / 2 - 10);
}

/* A scalar argument's shape is empty: the shape entry's placeholder says
 * that empty means a scalar (not a shape left to fill in), whole, at the
 * default size and at the smallest. */
static void test_shape_placeholder_says_scalar(void)
{
  TsRunPanel *panel = ts_window_get_run_panel(window);
  select_function("power");
  ts_run_panel_set_args(panel, (const char *const[]){ "f32[]=2.5", "3", NULL });
  GtkWidget *row = find_widget(GTK_WIDGET(panel), TS_TYPE_ARG_ROW);
  GtkWidget *shape = find_named(row, "shape");
  g_assert_nonnull(shape);
  g_assert_cmpstr(gtk_editable_get_text(GTK_EDITABLE(shape)), ==, "");
  g_assert_nonnull(strstr(gtk_entry_get_placeholder_text(GTK_ENTRY(shape)), "scalar"));
  /* GtkText shows the placeholder in a label of its own */
  GtkWidget *text = find_widget(shape, GTK_TYPE_TEXT);
  GtkWidget *placeholder = find_widget(text, GTK_TYPE_LABEL);
  g_assert_nonnull(placeholder);
  g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(placeholder)), ==, gtk_entry_get_placeholder_text(GTK_ENTRY(shape)));
  for (guint i = 0; i < G_N_ELEMENTS(LAYOUT_SIZES); i++) {
    resize_and_draw(LAYOUT_SIZES[i][0], LAYOUT_SIZES[i][1]);
    g_assert_true(gtk_widget_get_mapped(placeholder));
    int natural = 0;
    gtk_widget_measure(placeholder, GTK_ORIENTATION_HORIZONTAL, -1, NULL, &natural, NULL, NULL);
    g_test_message("at %dx%d the placeholder has %d px of its %d", LAYOUT_SIZES[i][0], LAYOUT_SIZES[i][1],
                   gtk_widget_get_width(placeholder), natural);
    g_assert_false(pango_layout_is_ellipsized(gtk_label_get_layout(GTK_LABEL(placeholder))));
    g_assert_cmpint(gtk_widget_get_width(placeholder), >=, natural);
    g_autofree char *name = g_strdup_printf("shape-placeholder-%dx%d.png", LAYOUT_SIZES[i][0], LAYOUT_SIZES[i][1]);
    save_test_screenshot(GTK_WIDGET(window), name);
  }
  resize_and_draw(1280, 800);
}

/* How many pixels of widget's height show: what its scrolled ancestors and
 * the window let through. */
static int shown_height(GtkWidget *widget)
{
  GtkWidget *root = GTK_WIDGET(gtk_widget_get_root(widget));
  graphene_rect_t b;
  if (!gtk_widget_get_mapped(widget) || !gtk_widget_compute_bounds(widget, root, &b))
    return 0;
  double top = MAX(b.origin.y, 0), bottom = MIN(b.origin.y + b.size.height, gtk_widget_get_height(root));
  for (GtkWidget *a = gtk_widget_get_parent(widget); a; a = gtk_widget_get_parent(a)) {
    graphene_rect_t ab;
    if (GTK_IS_SCROLLED_WINDOW(a) && gtk_widget_compute_bounds(a, root, &ab)) {
      top = MAX(top, ab.origin.y);
      bottom = MIN(bottom, ab.origin.y + ab.size.height);
    }
  }
  return (int)MAX(bottom - top, 0);
}

/* A run's result (a [4,10] tensor: its values table), compact and then
 * inspected, run at the default size and at 1024x640, with each panel
 * below: the table shows rows, not only the summary above it (the run panel
 * brings the result into view), the profiler's op table shows four rows, and
 * the window is no taller than asked. */
static void test_inspector_fits(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.mode", "s", "graph");
  select_function("sequential_model");
  TsTensorView *view = ts_run_panel_get_tensor_view(ts_window_get_run_panel(window));
  GtkWidget *table = GTK_WIDGET(_ts_tensor_view_get_table(view));
  TsProfilerPanel *profiler = ts_window_get_profiler_panel(window);
  ts_profiler_panel_show_page(profiler, "stats");
  GtkWidget *stats = find_named(GTK_WIDGET(profiler), "stats-view");
  g_assert_nonnull(stats);
  static const char *const PANELS[] = { "profiler", "trace-log", "console", "debugger" };
  g_autoptr(GString) problems = g_string_new(NULL);
  for (guint i = 0; i < G_N_ELEMENTS(LAYOUT_SIZES); i++) {
    resize_and_draw(LAYOUT_SIZES[i][0], LAYOUT_SIZES[i][1]);
    g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(TRUE));
    run_with((const char *const[]){ "f32[4,28,28]:uniform", NULL });
    g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(FALSE));
    g_assert_nonnull(ts_tensor_view_get_tensor(view));
    for (int inspect = 0; inspect < 2; inspect++) {
      gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(view->expand_button), inspect);
      _ts_tensor_view_show_page(view, "table");
      for (guint p = 0; p < G_N_ELEMENTS(PANELS); p++) {
        activate("win.show-panel", "s", PANELS[p]);
        resize_and_draw(LAYOUT_SIZES[i][0], LAYOUT_SIZES[i][1]);
        g_autofree char *name = g_strdup_printf("result-%s-%s-%dx%d.png", inspect ? "inspected" : "compact",
                                                PANELS[p], LAYOUT_SIZES[i][0], LAYOUT_SIZES[i][1]);
        save_test_screenshot(GTK_WIDGET(window), name);
        int height = gtk_widget_get_height(GTK_WIDGET(window));
        /* the header row and three of values at least (rows are about 20 px) */
        int shown = shown_height(table);
        g_test_message("%s: window %d high, %d px of the values table show", name, height, shown);
        if (height > LAYOUT_SIZES[i][1])
          g_string_append_printf(problems, "%s: the window is %d high\n", name, height);
        if (shown < 80)
          g_string_append_printf(problems, "%s: %d px of the values table show\n", name, shown);
        /* the op table: its header and four rows (its summary shares the
         * controls' line, so that 1024x640 shows a fourth) */
        if (g_str_equal(PANELS[p], "profiler") && shown_height(stats) < 105)
          g_string_append_printf(problems, "%s: %d px of the op table show\n", name, shown_height(stats));
      }
    }
    gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(view->expand_button), FALSE);
  }
  activate("win.show-panel", "s", "trace-log");
  resize_and_draw(1280, 800);
  if (problems->len)
    g_error("the result does not fit:\n%s", problems->str);
}

/* The header row and three of values at least show (rows are about 20 px). */
static gboolean table_rows_show(gpointer table)
{
  return shown_height(table) >= 80;
}

/* A result shown at the default size, then the window made 1024x640 with
 * the profiler below: the run panel gets shorter and brings the result
 * back into view (its values table shows rows) rather than leaving it
 * below the fold. */
static void test_result_follows_shorter_panel(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.mode", "s", "graph");
  select_function("sequential_model");
  activate("win.show-panel", "s", "profiler");
  resize_and_draw(1280, 800);
  run_with((const char *const[]){ "f32[4,28,28]:uniform", NULL });
  wait_drawn(GTK_WIDGET(window));
  GtkWidget *table =
    GTK_WIDGET(_ts_tensor_view_get_table(ts_run_panel_get_tensor_view(ts_window_get_run_panel(window))));
  g_assert_cmpint(shown_height(table), >=, 80);
  resize_and_draw(1024, 640);
  test_wait_for(table_rows_show, table, "the result's values in view");
  save_test_screenshot(GTK_WIDGET(window), "result-after-shrinking.png");
  activate("win.show-panel", "s", "trace-log");
  resize_and_draw(1280, 800);
}

/* A Run that fails, at 1280x800: the error is said under the Result
 * heading and the arguments stay in sight (the panel scrolled as far as
 * for a result's page, which an error leaves empty, and the first
 * argument, the one to fix, went out of sight). */
static void test_error_keeps_arguments_in_sight(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.mode", "s", "graph");
  select_function("power");
  resize_and_draw(1280, 800);
  run_with((const char *const[]){ "f32[2,3]:ones", "2", NULL }); /* MatMul refuses [2,3] */
  TsRunPanel *panel = ts_window_get_run_panel(window);
  g_assert_nonnull(ts_run_panel_get_error(panel));
  for (int i = 0; i < 3; i++) { /* the panel scrolls over the frames after the error */
    int frames = 0;
    gtk_widget_add_tick_callback(GTK_WIDGET(window), count_frame, &frames, NULL);
    gtk_widget_queue_draw(GTK_WIDGET(window));
    test_wait_for(two_frames, &frames, "the window to draw");
  }
  save_test_screenshot(GTK_WIDGET(window), "run-error.png");
  for (GtkWidget *row = find_widget(GTK_WIDGET(panel), TS_TYPE_ARG_ROW); row; row = gtk_widget_get_next_sibling(row))
    g_assert_cmpint(shown_height(row), ==, gtk_widget_get_height(row));
  g_assert_true(find_label(GTK_WIDGET(panel), ts_run_panel_get_error(panel)));
}

static gboolean shows_label(gpointer text)
{
  return find_label(GTK_WIDGET(window), text);
}

/* A function asked for by a name the module lacks (win.select-function, as
 * --function does) is met with the nearest name when it is a typo of one. */
static void test_function_typo_says_nearest(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.select-function", "s", "sequentail_model");
  g_autofree char *toast = g_strdup_printf("%s has no function 'sequentail_model' (did you mean 'sequential_model'?)",
                                           ts_loaded_module_get_display_name(ts_window_get_module(window)));
  test_wait_for(shows_label, toast, "the toast naming the nearest function");
  /* what was typed is said as typed, markup characters and all */
  activate("win.select-function", "s", "a<b&c");
  g_autofree char *plain = g_strdup_printf("%s has no function 'a<b&c'",
                                           ts_loaded_module_get_display_name(ts_window_get_module(window)));
  test_wait_for(shows_label, plain, "the toast naming 'a<b&c'");
}

/* A new window's first page (Open a Module) has Open and the menu in its
 * header, not run controls that could run nothing yet. */
static void test_first_page_has_no_run_controls(void)
{
  TsWindow *fresh = ts_window_new(GTK_APPLICATION(app));
  gtk_window_present(GTK_WINDOW(fresh));
  wait_drawn(GTK_WIDGET(fresh));
  g_assert_null(ts_window_get_module(fresh));
  static const char *const RUN_ACTIONS[] = { "win.run", "win.profile", "win.mode" };
  for (size_t i = 0; i < G_N_ELEMENTS(RUN_ACTIONS); i++) {
    GtkWidget *control = find_actionable(GTK_WIDGET(fresh), RUN_ACTIONS[i]);
    g_assert_nonnull(control);
    if (gtk_widget_is_visible(control))
      g_error("the first page shows the %s control", RUN_ACTIONS[i]);
  }
  g_assert_true(gtk_widget_is_visible(find_actionable(GTK_WIDGET(fresh), "win.open")));
  save_test_screenshot(GTK_WIDGET(fresh), "first-page.png");
  g_object_add_weak_pointer(G_OBJECT(fresh), (gpointer *)&fresh);
  gtk_window_destroy(GTK_WINDOW(fresh));
  while (fresh)
    g_main_context_iteration(NULL, TRUE);
}

static gboolean has_module(gpointer fresh)
{
  return ts_window_get_module(fresh) != NULL;
}

/* A window opened at 1024x640 (--size, or the size it was closed at) splits
 * the graph and the panels below as a window resized to it does: the
 * panels get over 240 px, not the 190 the 400 px divider of 800 px left. */
static void test_small_window_divider(void)
{
  TsWindow *fresh = ts_window_new(GTK_APPLICATION(app));
  gtk_window_set_default_size(GTK_WINDOW(fresh), 1024, 640);
  gtk_window_present(GTK_WINDOW(fresh));
  ts_window_open_module(fresh, seeds_path());
  test_wait_for(has_module, fresh, "seeds to open in the new window");
  wait_drawn(GTK_WIDGET(fresh));
  GtkWidget *divided = gtk_widget_get_ancestor(GTK_WIDGET(ts_window_get_trace_log(fresh)), GTK_TYPE_PANED);
  g_assert_cmpint(gtk_orientable_get_orientation(GTK_ORIENTABLE(divided)), ==, GTK_ORIENTATION_VERTICAL);
  int below = gtk_widget_get_height(gtk_paned_get_end_child(GTK_PANED(divided)));
  g_test_message("opened at 1024x640: the panels below are %d px of %d", below, gtk_widget_get_height(divided));
  g_assert_cmpint(below, >=, 240);
  save_test_screenshot(GTK_WIDGET(fresh), "opened-at-1024x640.png");
  g_object_add_weak_pointer(G_OBJECT(fresh), (gpointer *)&fresh);
  gtk_window_destroy(GTK_WINDOW(fresh));
  while (fresh)
    g_main_context_iteration(NULL, TRUE);
}

/* `tracescope --version` prints the project's version and exits 0. */
static void test_version(void)
{
  const char *argv[] = { g_getenv("TRACESCOPE_APP"), "--version", NULL };
  g_assert_nonnull(argv[0]);
  g_autofree char *out = NULL, *err = NULL;
  g_assert_true(g_spawn_check_wait_status(run_app(argv, NULL, &out, &err), NULL));
  g_assert_true(g_regex_match_simple("^tracescope [0-9]+\\.[0-9]+\\.[0-9]+\n$", out, 0, 0));
  g_assert_cmpstr(err, ==, "");
}

/* The controls under widget (buttons, drop-downs, spin buttons) narrower
 * than they need, or reaching past pane's sides: a line each. */
static void find_clipped_controls(GtkWidget *widget, GtkWidget *pane, GString *problems)
{
  if (!gtk_widget_get_mapped(widget) || !gtk_widget_get_child_visible(widget))
    return;
  if (GTK_IS_BUTTON(widget) || GTK_IS_DROP_DOWN(widget) || GTK_IS_SPIN_BUTTON(widget)) {
    /* the margin box, what measure() speaks of */
    int width = gtk_widget_get_allocated_width(widget) + gtk_widget_get_margin_start(widget) +
                gtk_widget_get_margin_end(widget);
    int min = 0;
    gtk_widget_measure(widget, GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
    graphene_rect_t b;
    g_assert_true(gtk_widget_compute_bounds(widget, pane, &b));
    const char *what = gtk_widget_get_tooltip_text(widget) ? gtk_widget_get_tooltip_text(widget)
                                                           : G_OBJECT_TYPE_NAME(widget);
    if (width < min)
      g_string_append_printf(problems, "'%s': %d px of at least %d\n", what, width, min);
    if (b.origin.x < 0 || b.origin.x + b.size.width > gtk_widget_get_width(pane) + 0.5)
      g_string_append_printf(problems, "'%s': %.0f to %.0f px, past the %d px pane\n", what, b.origin.x,
                             b.origin.x + b.size.width, gtk_widget_get_width(pane));
    return; /* its parts are its own */
  }
  GtkPolicyType h_policy = GTK_POLICY_NEVER;
  if (GTK_IS_SCROLLED_WINDOW(widget))
    gtk_scrolled_window_get_policy(GTK_SCROLLED_WINDOW(widget), &h_policy, NULL);
  if (h_policy != GTK_POLICY_NEVER)
    return; /* scrolled sideways (a wide table's headers): out of sight by choice */
  for (GtkWidget *child = gtk_widget_get_first_child(widget); child; child = gtk_widget_get_next_sibling(child))
    find_clipped_controls(child, pane, problems);
}

/* The debugger stopped at an op, at the default size, 1024x700 and the
 * smallest, its inspector compact and inspected: the source shows a line's
 * number and 30 characters of it (36 columns of its font), the inspector's
 * controls are whole inside their pane, the panel inside the window. */
static void check_debugger_fits(TsDebugPanel *debug, GString *problems)
{
  static const int SIZES[][2] = { { 1280, 800 }, { 1024, 700 }, { 1024, 640 } };
  GtkWidget *source = find_named(GTK_WIDGET(debug), "debug-source");
  GtkWidget *tensors = find_named(GTK_WIDGET(debug), "debug-tensors");
  g_assert_nonnull(source);
  g_assert_nonnull(tensors);
  TsTensorView *inspector = ts_debug_panel_get_inspector(debug);
  for (guint i = 0; i < G_N_ELEMENTS(SIZES); i++)
    for (int inspect = 0; inspect < 2; inspect++) {
      gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(inspector->expand_button), inspect);
      resize_and_draw(SIZES[i][0], SIZES[i][1]);
      g_autofree char *name = g_strdup_printf("debugger-%s-%dx%d.png", inspect ? "inspected" : "compact", SIZES[i][0],
                                              SIZES[i][1]);
      save_test_screenshot(GTK_WIDGET(window), name);
      GString *found = g_string_new(NULL);
      if (gtk_widget_get_width(GTK_WIDGET(window)) > SIZES[i][0] ||
          gtk_widget_get_height(GTK_WIDGET(window)) > SIZES[i][1])
        g_string_append_printf(found, "the window is %dx%d\n", gtk_widget_get_width(GTK_WIDGET(window)),
                               gtk_widget_get_height(GTK_WIDGET(window)));
      /* the text's width: the scrolled window's inside its frame, less the view's margins */
      GtkWidget *scroll = gtk_widget_get_ancestor(source, GTK_TYPE_SCROLLED_WINDOW);
      int text_width = gtk_widget_get_width(scroll) - gtk_text_view_get_left_margin(GTK_TEXT_VIEW(source)) -
                       gtk_text_view_get_right_margin(GTK_TEXT_VIEW(source));
      PangoFontMetrics *metrics = pango_context_get_metrics(gtk_widget_get_pango_context(source), NULL, NULL);
      double column = pango_font_metrics_get_approximate_char_width(metrics) / (double)PANGO_SCALE;
      pango_font_metrics_unref(metrics);
      g_test_message("%s: the source is %d px, %.1f columns of %.2f px", name, text_width, text_width / column, column);
      if (text_width < 36 * column)
        g_string_append_printf(found, "the source shows %.1f columns\n", text_width / column);
      find_clipped_controls(tensors, tensors, found);
      graphene_rect_t b;
      g_assert_true(gtk_widget_compute_bounds(tensors, GTK_WIDGET(debug), &b));
      if (b.origin.x + b.size.width > gtk_widget_get_width(GTK_WIDGET(debug)))
        g_string_append_printf(found, "the tensors reach %.0f px of the %d px panel\n", b.origin.x + b.size.width,
                               gtk_widget_get_width(GTK_WIDGET(debug)));
      find_cramped(GTK_WIDGET(debug), found);
      if (found->len)
        g_string_append_printf(problems, "-- %s:\n%s", name, found->str);
      g_string_free(found, TRUE);
    }
}

/* Issue 23: at the default size and at the smallest, light and dark, every
 * panel shows whole: the run panel with three arguments, the trace log,
 * the console, the profiler's pages and the debugger stopped with its
 * inspector open. */
static void test_layout_fits(void)
{
  g_autoptr(GString) problems = g_string_new(NULL);
  /* another module first: no input signature applied earlier is kept for
   * seeds, so shape_retrace retraces below */
  g_autofree char *other = g_build_filename(TS_TEST_MODULES_DIR, "misbehave.so", NULL);
  activate("win.open-module", "s", other);
  wait_idle();
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.mode", "s", "graph");
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(TRUE));
  select_function("lstm_fn");
  run_with((const char *const[]){ "f32[10,10]:uniform", "f32[10,10]:zeros", "f32[10,10]:zeros", NULL });
  activate("win.show-panel", "s", "trace-log");
  check_layout("trace-log", problems);
  /* the retrace warning with its Apply Input Signature button */
  select_function("shape_retrace");
  TsTraceLog *log = ts_window_get_trace_log(window);
  for (int n = 3; n < 9 && !ts_trace_log_get_warning(log); n++) {
    g_autofree char *spec = g_strdup_printf("f32[%d]:ones", n);
    run_with((const char *const[]){ spec, NULL });
  }
  g_assert_nonnull(ts_trace_log_get_warning(log));
  check_layout("retrace-warning", problems);
  /* applied, the banner goes (shown on another panel's page at some widths,
   * GTK 4.8 finds its revealer's height one pixel off and says so) */
  activate("win.apply-signature", "s", "shape_retrace");
  wait_idle();
  g_assert_null(ts_trace_log_get_warning(log));
  select_function("lstm_fn");
  activate("win.show-panel", "s", "console");
  check_layout("console", problems);
  TsProfilerPanel *profiler = ts_window_get_profiler_panel(window);
  activate("win.show-panel", "s", "profiler");
  ts_profiler_panel_show_page(profiler, "stats");
  check_layout("profiler-stats", problems);
  /* at the default size every column shows; at the smallest the least
   * important hide and the op's time (Total, Self, Median) stays */
  GtkWidget *stats = find_named(GTK_WIDGET(profiler), "stats-view");
  g_assert_nonnull(stats);
  resize_and_draw(1280, 800);
  g_autofree char *wide = stats_columns_shown(GTK_COLUMN_VIEW(stats));
  g_assert_cmpstr(wide, ==, "Key Count Total Self Median Min p95 Max Mean % Wall Mode Device");
  resize_and_draw(1024, 640);
  g_autofree char *narrow = stats_columns_shown(GTK_COLUMN_VIEW(stats));
  g_assert_true(g_str_has_prefix(narrow, "Key "));
  g_assert_nonnull(strstr(narrow, "Total Self Median"));
  g_assert_null(strstr(narrow, "Mean"));
  ts_profiler_panel_show_page(profiler, "timeline");
  check_layout("profiler-timeline", problems);
  activate("win.profile-compare", NULL);
  wait_idle();
  check_layout("profiler-compare", problems);
  /* its summary shows whole lines: none cut under the table */
  GtkWidget *compare_summary = find_named(GTK_WIDGET(profiler), "compare-summary");
  g_assert_nonnull(compare_summary);
  for (guint i = 0; i < G_N_ELEMENTS(LAYOUT_SIZES); i++) {
    resize_and_draw(LAYOUT_SIZES[i][0], LAYOUT_SIZES[i][1]);
    int shown = shown_height(compare_summary), height = gtk_widget_get_height(compare_summary);
    if (shown < height)
      g_string_append_printf(problems, "-- profiler-compare at %dx%d: %d px of the summary's %d show\n",
                             LAYOUT_SIZES[i][0], LAYOUT_SIZES[i][1], shown, height);
  }
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(FALSE));

  /* the debugger stopped at an op, its inspector showing a heat map */
  TsDebugPanel *debug = ts_window_get_debug_panel(window);
  select_function("power");
  ts_run_panel_set_args(ts_window_get_run_panel(window), (const char *const[]){ "f32[10,10]:ones", "8", NULL });
  activate("win.mode", "s", "debug");
  activate("win.run", NULL);
  test_wait_for(debug_stopped, NULL, "a debug stop");
  wait_drawn(GTK_WIDGET(window));
  /* Inspect, the heat map, steps: the inspector scrolls, the graph keeps its height */
  GtkWidget *graph = GTK_WIDGET(ts_window_get_graph_pane(window));
  int graph_height = gtk_widget_get_height(graph);
  _ts_tensor_view_show_page(ts_debug_panel_get_inspector(debug), "heat-map");
  for (int k = 0; k < 3; k++) {
    g_autofree char *before = g_strdup(ts_debug_panel_get_status(debug));
    activate("win.debug", "s", "into");
    test_wait_for(shows_op_seq, before, "a step");
    test_wait_for(debug_stopped, NULL, "the step's stop");
    wait_drawn(GTK_WIDGET(window));
    g_assert_cmpint(gtk_widget_get_height(graph), ==, graph_height);
  }
  check_layout("debugger", problems);
  check_debugger_fits(debug, problems);
  activate("win.debug", "s", "stop");
  test_wait_for(debug_ended, NULL, "the debug call to end");
  activate("win.mode", "s", "graph");
  gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
  if (problems->len)
    g_error("the window does not fit:\n%s", problems->str);
}

/* tracescope --mode debug --break MatMul --call ...: the script's call is
 * debugged and stops at the breakpoint, where the screenshot is taken
 * (the window settles stopped, not when the call ends). */
static void test_startup_debugs_a_call(void)
{
  g_autoptr(TsStartup) startup = g_new0(TsStartup, 1);
  startup->calls = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  g_ptr_array_add(startup->calls, g_strdupv((char *[]){ "f32[10,10]:ones", "3", NULL }));
  startup->compare[0] = startup->compare[1] = -1;
  startup->module = g_strdup(seeds_path());
  startup->function = g_strdup("power");
  startup->mode = g_strdup("debug");
  startup->breakpoints = g_strdupv((char *[]){ "MatMul", NULL });
  startup->screenshot = g_build_filename(tmp_dir, "debug-stop.png", NULL);
  TsStartupScript *script = ts_startup_script_new(G_APPLICATION(app), startup, window);
  test_wait_for(file_exists, startup->screenshot, "the screenshot");
  ts_startup_script_free(script);
  g_unlink(startup->screenshot);
  TsDebugPanel *debug = ts_window_get_debug_panel(window);
  g_assert_true(ts_debug_panel_get_stopped(debug));
  const char *status = ts_debug_panel_get_status(debug);
  g_assert_nonnull(strstr(status, "MatMul"));
  g_assert_nonnull(strstr(status, "breakpoint 1"));
  activate("win.debug", "s", "stop");
  test_wait_for(debug_ended, NULL, "the debug call to end");
  ts_debug_panel_remove_breakpoint(debug, "MatMul");

  /* a call whose MatMul fails (3x3 by power's 10x10 identity: refused
   * before the breakpoint would stop) stops where it failed, with the
   * error; then it ends with it */
  g_strfreev(startup->calls->pdata[0]);
  startup->calls->pdata[0] = g_strdupv((char *[]){ "f32[3,3]:ones", "3", NULL });
  script = ts_startup_script_new(G_APPLICATION(app), startup, window);
  test_wait_for(file_exists, startup->screenshot, "the screenshot of the failed op");
  ts_startup_script_free(script);
  g_unlink(startup->screenshot);
  g_assert_true(ts_debug_panel_get_stopped(debug));
  status = ts_debug_panel_get_status(debug);
  g_assert_true(g_str_has_prefix(status, "Failed at #2 MatMul"));
  g_assert_nonnull(strstr(status, "inner dimensions differ"));
  activate("win.run", NULL); /* F5: on to the end */
  test_wait_for(debug_ended, NULL, "the failed call to end");
  g_assert_nonnull(strstr(ts_debug_panel_get_status(debug), "inner dimensions differ"));

  /* an argument given as a spec only (what a Run traces with) has no
   * values to debug: the call ends at once, saying which and why */
  g_strfreev(startup->calls->pdata[0]);
  startup->calls->pdata[0] = g_strdupv((char *[]){ "f32[10,10]", "3", NULL });
  script = ts_startup_script_new(G_APPLICATION(app), startup, window);
  test_wait_for(file_exists, startup->screenshot, "the screenshot of the refused call");
  ts_startup_script_free(script);
  g_unlink(startup->screenshot);
  g_assert_false(ts_debug_panel_get_stopped(debug));
  g_assert_cmpstr(ts_debug_panel_get_status(debug), ==,
                  "Ended: argument 0 (x): 'f32[10,10]' is a spec only, with no values to run op by op: "
                  "give it values (a Fill, or 'f32[10,10]:uniform')");
  /* said in full where a Run's error would be */
  g_assert_cmpstr(ts_run_panel_get_error(ts_window_get_run_panel(window)), ==,
                  "argument 0 (x): 'f32[10,10]' is a spec only, with no values to run op by op: give it "
                  "values (a Fill, or 'f32[10,10]:uniform')");

  /* a function returning None (no MatMul to stop at) finishes saying so */
  g_free(startup->function);
  startup->function = g_strdup("find_next_odd");
  g_strfreev(startup->calls->pdata[0]);
  startup->calls->pdata[0] = g_strdupv((char *[]){ NULL });
  script = ts_startup_script_new(G_APPLICATION(app), startup, window);
  test_wait_for(file_exists, startup->screenshot, "the screenshot of the finished call");
  ts_startup_script_free(script);
  g_unlink(startup->screenshot);
  test_wait_for(debug_ended, NULL, "the None-returning call to end");
  g_assert_cmpstr(ts_debug_panel_get_status(debug), ==, "Finished: None");
  ts_debug_panel_remove_breakpoint(debug, "MatMul");
  activate("win.mode", "s", "graph");
}

/* Issue 23: a screenshot shows the panel asked for with its tab selected,
 * and only that tab: "--screenshot --panel profiler" right after a Run once
 * caught the Trace Log's tab still fading out (the theme's buttons change
 * background over 200 ms, longer than the frames the screenshot waits). */
static void test_screenshot_panel_tab(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.show-panel", "s", "trace-log");
  wait_drawn(GTK_WIDGET(window));
  wait_drawn(GTK_WIDGET(window));
  g_autoptr(TsStartup) startup = g_new0(TsStartup, 1);
  startup->calls = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  startup->compare[0] = startup->compare[1] = -1;
  startup->panel = g_strdup("profiler");
  startup->screenshot = g_build_filename(tmp_dir, "panel-tab.png", NULL);
  TsStartupScript *script = ts_startup_script_new(G_APPLICATION(app), startup, window);
  test_wait_for(file_exists, startup->screenshot, "the screenshot");
  ts_startup_script_free(script);
  g_autoptr(GError) error = NULL;
  g_autoptr(GdkTexture) texture = gdk_texture_new_from_filename(startup->screenshot, &error);
  g_assert_no_error(error);
  g_unlink(startup->screenshot);
  /* the tabs in order: Trace Log, Profiler, Console, Debugger */
  GtkWidget *panels = gtk_widget_get_ancestor(GTK_WIDGET(ts_window_get_trace_log(window)), GTK_TYPE_STACK);
  GtkWidget *switcher = switcher_of(GTK_WIDGET(window), GTK_STACK(panels));
  g_assert_nonnull(switcher);
  double tab[4] = { 0 };
  int i = 0;
  for (GtkWidget *b = gtk_widget_get_first_child(switcher); b && i < 4; b = gtk_widget_get_next_sibling(b), i++) {
    graphene_rect_t box;
    g_assert_true(gtk_widget_compute_bounds(b, GTK_WIDGET(window), &box));
    graphene_rect_t inside; /* the background, not the label */
    graphene_rect_inset_r(&box, 4, 2, &inside);
    inside.size.width = 10;
    tab[i] = mean_brightness(texture, &inside);
  }
  g_assert_cmpint(i, ==, 4);
  /* the Profiler's tab darker (selected); the Trace Log's as the Console's */
  g_assert_cmpfloat(tab[1], <, tab[2] - 10);
  g_assert_cmpfloat(fabs(tab[0] - tab[2]), <, 2);
  activate("win.show-panel", "s", "trace-log");
}

static gboolean view_has_graph(gpointer view)
{
  return ts_graph_view_get_graph(view) != NULL;
}

/* Each file the window reads or writes goes through a chooser titled for
 * it: a save suggests a name (the function's), an open suggests none; each
 * offers its kinds of file; Cancel does nothing. */
static gboolean chooser_shown(gpointer data)
{
  return find_toplevel(GTK_TYPE_FILE_CHOOSER_DIALOG) != NULL;
}

static void test_file_choosers(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  select_function("power");
  static const struct {
    const char *action, *title, *suggested, *filter;
  } CHOOSERS[] = {
    { "win.open", "Open Module", NULL, "Tracescope modules and ONNX models (.so, .onnx)" },
    { "win.open-session", "Open Session", NULL, "Tracescope sessions (.json)" },
    { "win.save-session", "Save Session", "session.json", "Tracescope sessions (.json)" },
    { "win.open-trace", "Open Trace", NULL, "Chrome traces (.json, .json.gz)" },
    { "win.compare-trace", "Compare with Trace", NULL, "Chrome traces (.json, .json.gz)" },
    { "win.export-graph", "Export Graph", "graph.svg", "SVG image" },
  };
  for (guint i = 0; i < G_N_ELEMENTS(CHOOSERS); i++) {
    activate(CHOOSERS[i].action, NULL);
    test_wait_for(chooser_shown, NULL, CHOOSERS[i].title);
    GtkWindow *dialog = find_toplevel(GTK_TYPE_FILE_CHOOSER_DIALOG);
    g_assert_cmpstr(gtk_window_get_title(dialog), ==, CHOOSERS[i].title);
    GtkFileChooser *chooser = GTK_FILE_CHOOSER(dialog);
    g_autofree char *name = CHOOSERS[i].suggested ? gtk_file_chooser_get_current_name(chooser) : NULL;
    g_assert_cmpstr(name, ==, CHOOSERS[i].suggested);
    g_assert_cmpint(gtk_file_chooser_get_action(chooser), ==,
                    CHOOSERS[i].suggested ? GTK_FILE_CHOOSER_ACTION_SAVE : GTK_FILE_CHOOSER_ACTION_OPEN);
    GtkFileFilter *filter = gtk_file_chooser_get_filter(chooser);
    g_assert_nonnull(filter);
    g_assert_cmpstr(gtk_file_filter_get_name(filter), ==, CHOOSERS[i].filter);
    gtk_dialog_response(GTK_DIALOG(dialog), GTK_RESPONSE_CANCEL);
    wait_idle();
    g_assert_null(find_toplevel(GTK_TYPE_FILE_CHOOSER_DIALOG));
  }
  /* a profile to export: none yet says so instead of asking for a file;
   * after a profiled Run the chooser suggests the function's trace */
  ts_profiler_panel_set_session(ts_window_get_profiler_panel(window), NULL, NULL);
  activate("win.export-trace", NULL);
  wait_idle();
  g_assert_null(find_toplevel(GTK_TYPE_FILE_CHOOSER_DIALOG));
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(TRUE));
  run_with((const char *const[]){ "f32[10,10]:ones", "3", NULL });
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(FALSE));
  activate("win.export-trace", NULL);
  test_wait_for(chooser_shown, NULL, "Export Profile as Trace");
  GtkWindow *dialog = find_toplevel(GTK_TYPE_FILE_CHOOSER_DIALOG);
  g_assert_cmpstr(gtk_window_get_title(dialog), ==, "Export Profile as Trace");
  g_autofree char *name = gtk_file_chooser_get_current_name(GTK_FILE_CHOOSER(dialog));
  g_assert_cmpstr(name, ==, "power.trace.json.gz");
  gtk_dialog_response(GTK_DIALOG(dialog), GTK_RESPONSE_CANCEL);
  wait_idle();
}

/* The Profile toggle's record dot turns red while runs are recorded, as a
 * recorder's does, and back when it is off. */
static gboolean reddish(GtkWidget *image)
{
  GdkRGBA c;
  gtk_style_context_get_color(gtk_widget_get_style_context(image), &c);
  return c.red > 0.5 && c.red > 2 * c.green && c.red > 2 * c.blue;
}

static void test_profile_toggle_shows_recording(void)
{
  GtkWidget *toggle = find_actionable(GTK_WIDGET(window), "win.profile");
  g_assert_true(GTK_IS_TOGGLE_BUTTON(toggle));
  GtkWidget *dot = find_widget(toggle, GTK_TYPE_IMAGE);
  g_assert_nonnull(dot);
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(TRUE));
  g_assert_true(gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(toggle)));
  g_assert_true(reddish(dot));
  g_action_group_change_action_state(G_ACTION_GROUP(window), "profile", g_variant_new_boolean(FALSE));
  g_assert_false(reddish(dot));
}

/* What the window binds rather than relays, each seen failing with its
 * binding removed: the graph pane's colour mode follows the colour-mode
 * setting; the worker's device and the profiler's follow the workspace's
 * (win.device); the check-eagerly action is the worker's property; the
 * node details show while a node is selected unless win.show-node-details
 * (the node focus's "details-wanted") is off; the graph pane follows the
 * Profiler panel's sessions (its "profiler"); the window's busy is its
 * workspace's, which the loader, the run controller and the profiler's
 * "busy" and "fitting" feed. */
static void count_notify(gpointer data)
{
  (*(guint *)data)++;
}

static void test_window_bindings(void)
{
  GSettings *settings = ts_application_get_settings(app);
  TsGraphPane *pane = ts_window_get_graph_pane(window);
  g_autofree char *before = g_settings_get_string(settings, "colour-mode");
  g_settings_set_string(settings, "colour-mode", "compute-time");
  g_autofree char *colour = NULL;
  g_object_get(pane, "colour-mode", &colour, NULL);
  g_assert_cmpstr(colour, ==, "compute-time");
  g_settings_set_string(settings, "colour-mode", before);

  activate("win.open-module", "s", seeds_path());
  wait_idle();
  TsEngineWorker *worker = ts_window_get_engine(window);
  TsProfilerPanel *profiler = ts_window_get_profiler_panel(window);
  activate("win.device", "s", "SIM:0");
  g_autofree char *profiler_device = NULL;
  g_object_get(profiler, "device", &profiler_device, NULL);
  g_assert_cmpstr(profiler_device, ==, "SIM:0");
  g_assert_cmpstr(ts_engine_worker_get_device(worker), ==, "SIM:0");
  activate("win.device", "s", "CPU");
  g_assert_cmpstr(ts_engine_worker_get_device(worker), ==, "CPU");
  g_clear_pointer(&profiler_device, g_free);
  g_object_get(profiler, "device", &profiler_device, NULL);
  g_assert_null(profiler_device);

  g_assert_false(ts_engine_worker_get_check_eagerly(worker));
  activate("win.check-eagerly", NULL);
  g_assert_true(ts_engine_worker_get_check_eagerly(worker));
  activate("win.check-eagerly", NULL);
  g_assert_false(ts_engine_worker_get_check_eagerly(worker));

  activate("win.mode", "s", "graph");
  select_function("power");
  run_with((const char *const[]){ "f32[10,10]:ones", "3", NULL });
  TsGraphView *view = TS_GRAPH_VIEW(ts_graph_pane_get_view(pane));
  test_wait_for(view_has_graph, view, "power's graph");
  ts_graph_view_reveal(view, ts_graph_node(ts_graph_view_get_graph(view), 0));
  GtkWidget *details = GTK_WIDGET(ts_window_get_node_details(window));
  g_assert_nonnull(ts_node_details_get_node(TS_NODE_DETAILS(details)));
  g_assert_true(gtk_widget_get_visible(details));
  activate("win.show-node-details", NULL);
  g_assert_false(gtk_widget_get_visible(details));
  activate("win.show-node-details", NULL);
  g_assert_true(gtk_widget_get_visible(details));

  TsProfilerPanel *followed = NULL;
  g_object_get(pane, "profiler", &followed, NULL);
  g_assert_true(followed == profiler);
  g_clear_object(&followed);

  guint busy_notes = 0;
  gulong handler = g_signal_connect_swapped(window, "notify::busy", G_CALLBACK(count_notify), &busy_notes);
  g_object_notify(G_OBJECT(profiler), "busy");
  g_assert_cmpuint(busy_notes, ==, 1);
  g_object_notify(G_OBJECT(profiler), "fitting");
  g_assert_cmpuint(busy_notes, ==, 2);
  g_signal_handler_disconnect(window, handler);
  g_assert_false(ts_window_get_busy(window));
  activate("win.reload", NULL); /* the loader's */
  g_assert_true(ts_window_get_busy(window));
  wait_idle();
  select_function("power");
  activate("win.run", NULL); /* the run controller's */
  g_assert_true(ts_window_get_busy(window));
  wait_idle();
}

/* Whether menu (or a section or submenu of it) has an item for action. */
static gboolean menu_has_action(GMenuModel *menu, const char *action)
{
  for (int i = 0; i < g_menu_model_get_n_items(menu); i++) {
    g_autofree char *name = NULL;
    if (g_menu_model_get_item_attribute(menu, i, G_MENU_ATTRIBUTE_ACTION, "s", &name) && g_str_equal(name, action))
      return TRUE;
    g_autoptr(GMenuLinkIter) links = g_menu_model_iterate_item_links(menu, i);
    GMenuModel *link = NULL;
    while (g_menu_link_iter_get_next(links, NULL, &link)) {
      gboolean found = menu_has_action(link, action);
      g_object_unref(link);
      if (found)
        return TRUE;
    }
  }
  return FALSE;
}

/* The graph's title says which function it is at every size: where the
 * title and the zoom buttons do not both fit (1024 px wide) the buttons
 * hide (the graph menu zooms too), never the function's name; at the
 * default size both show and the title is whole. */
static void test_graph_title_wins(void)
{
  activate("win.open-module", "s", seeds_path());
  wait_idle();
  activate("win.mode", "s", "graph");
  select_function("sequential_model");
  run_with((const char *const[]){ "f32[4,28,28]:uniform", NULL });
  GtkWidget *pane = GTK_WIDGET(ts_window_get_graph_pane(window));
  GtkWidget *row = find_widget(pane, TS_TYPE_TITLE_ROW);
  g_assert_nonnull(row);
  GtkWidget *title = gtk_widget_get_first_child(gtk_widget_get_first_child(row));
  g_assert_true(g_str_has_prefix(gtk_label_get_text(GTK_LABEL(title)), "sequential_model("));
  GtkWidget *zoom_in = find_actionable(row, "graph.zoom-in");
  g_assert_nonnull(zoom_in);
  GtkWidget *menu_button = find_widget(row, GTK_TYPE_MENU_BUTTON);
  g_assert_true(menu_has_action(gtk_menu_button_get_menu_model(GTK_MENU_BUTTON(menu_button)), "graph.zoom-in"));
  g_assert_true(menu_has_action(gtk_menu_button_get_menu_model(GTK_MENU_BUTTON(menu_button)), "graph.zoom-fit"));
  g_autoptr(PangoLayout) name = gtk_widget_create_pango_layout(title, "sequential_model");
  int name_width = 0;
  pango_layout_get_pixel_size(name, &name_width, NULL);
  static const int SIZES[][2] = { { 1280, 800 }, { 1024, 700 }, { 1024, 640 } };
  for (guint i = 0; i < G_N_ELEMENTS(SIZES); i++) {
    resize_and_draw(SIZES[i][0], SIZES[i][1]);
    int natural = 0;
    gtk_widget_measure(title, GTK_ORIENTATION_HORIZONTAL, -1, NULL, &natural, NULL, NULL);
    int zoom_natural = 0;
    gtk_widget_measure(gtk_widget_get_parent(zoom_in), GTK_ORIENTATION_HORIZONTAL, -1, NULL, &zoom_natural, NULL, NULL);
    g_test_message("at %dx%d the title has %d px of its %d in a row of %d, the zoom buttons (%d px) %s", SIZES[i][0],
                   SIZES[i][1], gtk_widget_get_width(title), natural, gtk_widget_get_width(row), zoom_natural,
                   gtk_widget_get_mapped(zoom_in) ? "show" : "hide");
    g_autofree char *shot = g_strdup_printf("graph-title-%dx%d.png", SIZES[i][0], SIZES[i][1]);
    save_test_screenshot(GTK_WIDGET(window), shot);
    /* the buttons never take room the title needs */
    if (gtk_widget_get_mapped(zoom_in))
      g_assert_cmpint(gtk_widget_get_width(title), >=, natural);
    g_assert_cmpint(gtk_widget_get_width(title), >=, name_width);
    g_assert_true(gtk_widget_get_mapped(menu_button));
    if (i == 0) { /* the default size has room for all */
      g_assert_true(gtk_widget_get_mapped(zoom_in));
      g_assert_false(ts_title_row_get_collapsed(TS_TITLE_ROW(row)));
    } else {
      g_assert_true(ts_title_row_get_collapsed(TS_TITLE_ROW(row)));
    }
  }
  resize_and_draw(1280, 800);
  g_assert_true(gtk_widget_get_mapped(zoom_in));
}

int main(int argc, char **argv)
{
  return test_app_run(&argc, &argv, TRUE, (const TestAppCase[]){
    { "/app/startup-options", test_startup_options },
    { "/app/dialogs-and-style", test_dialogs_and_style },
    { "/app/screenshot", test_screenshot },
    { "/app/screenshot-pixel-for-pixel", test_screenshot_pixel_for_pixel },
    { "/app/screenshot-waits-for-graph", test_screenshot_waits_for_graph },
    { "/app/screenshot-trace", test_screenshot_trace },
    { "/app/help-files", test_help_files },
    { "/app/headless-start-quiet", test_headless_start_quiet },
    { "/app/no-display", test_no_display },
    { "/app/screenshot-refuses-bad-script", test_screenshot_refuses_bad_script },
    { "/app/input-error-message", test_input_error_message },
    { "/app/recent-menu-underscores", test_recent_menu_underscores },
    { "/app/no-cut-text", test_no_cut_text },
    { "/app/result-header-shows-function", test_result_header_shows_function },
    { "/app/shape-placeholder-says-scalar", test_shape_placeholder_says_scalar },
    { "/app/version", test_version },
    { "/app/layout-fits", test_layout_fits },
    { "/app/inspector-fits", test_inspector_fits },
    { "/app/result-follows-shorter-panel", test_result_follows_shorter_panel },
    { "/app/error-keeps-arguments-in-sight", test_error_keeps_arguments_in_sight },
    { "/app/first-page-has-no-run-controls", test_first_page_has_no_run_controls },
    { "/app/small-window-divider", test_small_window_divider },
    { "/app/function-typo-says-nearest", test_function_typo_says_nearest },
    { "/app/screenshot-panel-tab", test_screenshot_panel_tab },
    { "/app/startup-debugs-a-call", test_startup_debugs_a_call },
    { "/app/window-bindings", test_window_bindings },
    { "/app/profile-toggle-shows-recording", test_profile_toggle_shows_recording },
    { "/app/file-choosers", test_file_choosers },
    { "/app/graph-title-wins", test_graph_title_wins },
    { NULL, NULL },
  });
}
