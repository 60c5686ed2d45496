/* ts-application.h — the GtkApplication io.github.tracescope.Tracescope:
 * app actions (preferences, shortcuts, about, quit), the style from
 * GSettings, and the startup script of the command line: open a module,
 * select a function, make calls, then optionally save a screenshot and quit. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define TS_APPLICATION_ID "io.github.tracescope.Tracescope"

/* What the command line asked for (all optional). */
typedef struct {
  char *module;      /* "seeds" or a path */
  char *remote;      /* "[user@]host[:port]": the module runs there (over ssh), or NULL */
  char *function;
  GPtrArray *calls;  /* GStrv of argument specs, one per call */
  char *mode;        /* "graph" or "eager" */
  char *panel;       /* "trace-log", "console" or "profiler" */
  int compare[2];    /* two concrete functions of `function` side by side; -1: none */
  gboolean expand_all; /* open every group of the graph shown */
  gboolean profile;    /* turn Profile on before the calls */
  char *colour;        /* the graph's colour mode (a colour-mode nick), or NULL */
  char *device;        /* the device the calls run on ("SIM:0"), or NULL */
  char *screenshot;  /* PNG to save, then quit */
  int width, height; /* window size for the screenshot */
  gboolean version;  /* print the version and exit */
} TsStartup;

void ts_startup_free(TsStartup *startup);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TsStartup, ts_startup_free)

/* Parses the options of `tracescope` (see --help); argc and argv keep the
 * rest.  NULL with an error on a bad command line. */
TsStartup *ts_startup_parse(int *argc, char ***argv, GError **error);

#define TS_TYPE_APPLICATION (ts_application_get_type())
G_DECLARE_FINAL_TYPE(TsApplication, ts_application, TS, APPLICATION, AdwApplication)

/* startup may be NULL; the application takes it.  A screenshot run is
 * non-unique, so it never hands itself to a running instance. */
TsApplication *ts_application_new(TsStartup *startup);
/* Looks for a session bus.  Without one (a headless start: Xvfb, ssh, a
 * container) GTK's accessibility bridge and dconf would each warn on every
 * start, so this turns them off where the user did not choose: GTK_A11Y=none
 * and GSETTINGS_BACKEND=keyfile (settings kept in a file instead of dconf).
 * Call before GTK or GSettings start; ts_application_new then makes the
 * application non-unique.  Returns whether there is a session bus. */
gboolean ts_application_prepare_session(void);
GSettings *ts_application_get_settings(TsApplication *self);
/* The app's settings: the installed schema, else the one compiled in the build tree. */
GSettings *ts_application_settings_new(void);

G_END_DECLS
