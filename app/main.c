/* main.c — `tracescope`: the desktop app. */
#include <stdlib.h>

#include "ts-application.h"

/* Says why no window can open and what to run instead, where GTK would
 * only warn "cannot open display". */
static void explain_no_display(void)
{
  const char *x11 = g_getenv("DISPLAY"), *wayland = g_getenv("WAYLAND_DISPLAY");
  g_autoptr(GString) which = g_string_new(NULL);
  if (x11 && *x11)
    g_string_append_printf(which, "DISPLAY=%s", x11);
  if (wayland && *wayland)
    g_string_append_printf(which, "%sWAYLAND_DISPLAY=%s", which->len ? ", " : "", wayland);
  if (which->len)
    g_printerr("tracescope: cannot open a display (%s).\n", which->str);
  else
    g_printerr("tracescope: cannot open a display: neither DISPLAY nor WAYLAND_DISPLAY is set.\n");
  g_printerr("The app needs a graphical session: start it from a desktop, or over ssh -X. Without one,\n"
             "xvfb-run -a tracescope --screenshot shot.png ... draws the window to a file, and\n"
             "tracescope-cli runs, profiles and renders modules (tracescope-cli --help).\n");
}

int main(int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  TsStartup *startup = ts_startup_parse(&argc, &argv, &error);
  if (!startup) {
    g_printerr("tracescope: %s (see tracescope --help)\n", error->message);
    return 2;
  }
  if (startup->version) {
    g_print("tracescope %s\n", TS_VERSION);
    ts_startup_free(startup);
    return EXIT_SUCCESS;
  }
  ts_application_prepare_session();
  if (!gtk_init_check()) {
    explain_no_display();
    ts_startup_free(startup);
    return EXIT_FAILURE;
  }
  g_autoptr(GSettings) settings = ts_application_settings_new();
  if (!settings) {
    g_printerr("tracescope: the GSettings schema " TS_APPLICATION_ID " is not installed "
               "(meson install, or set GSETTINGS_SCHEMA_DIR)\n");
    ts_startup_free(startup);
    return EXIT_FAILURE;
  }
  /* a module named on the command line without --module opens like
   * --module; a .json file (a session or a trace) goes to GApplication's
   * open, which tells them apart */
  if (argc > 1 && !startup->module && argc == 2 && !g_str_has_suffix(argv[1], ".json") &&
      !g_str_has_suffix(argv[1], ".json.gz")) {
    startup->module = g_strdup(argv[1]);
    argc = 1;
  }
  g_autoptr(TsApplication) app = ts_application_new(startup);
  return g_application_run(G_APPLICATION(app), argc, argv);
}
