/* ts-startup.h — the command line of `tracescope` (see --help) and the
 * script it makes of it: open a module, select a function, make calls (or
 * debug one, stopping at its breakpoints), show a panel, then optionally
 * save a screenshot and quit. */
#pragma once

#include <gio/gio.h>

#include "ts-window.h"

G_BEGIN_DECLS

/* What the command line asked for (all optional). */
typedef struct {
  char *module;      /* "seeds" or a path */
  char *remote;      /* "[user@]host[:port]": the module runs there (over ssh), or NULL */
  char *function;
  GPtrArray *calls;  /* GStrv of argument specs, one per call */
  char *mode;        /* "graph", "eager" or "debug" */
  char **breakpoints; /* breakpoint specs set before a debug call, or NULL */
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

/* Whether startup asks the first window for anything (else the app starts
 * as it was left). */
gboolean ts_startup_has_script(const TsStartup *startup);

/* The script of startup (borrowed: it outlives the script) played in
 * window: each step once the window is idle again (notify::busy); app
 * quits once the screenshot asked for is saved.  For a screenshot the
 * window's animations are off (until the script is freed): the picture
 * shows where each transition ends, never half way. */
typedef struct _TsStartupScript TsStartupScript;
TsStartupScript *ts_startup_script_new(GApplication *app, const TsStartup *startup, TsWindow *window);
void ts_startup_script_free(TsStartupScript *script);

G_END_DECLS
