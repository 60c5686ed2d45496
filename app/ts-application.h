/* ts-application.h — the GtkApplication io.github.tracescope.Tracescope:
 * app actions (preferences, shortcuts, about, quit), the style from
 * GSettings; the first window plays the command line's script (ts-startup.h). */
#pragma once

#include <adwaita.h>

#include "ts-startup.h"

G_BEGIN_DECLS

#define TS_APPLICATION_ID "io.github.tracescope.Tracescope"

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
