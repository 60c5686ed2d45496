/* ts-recent-menu.h — the Open menu's Recent Modules section: a win.open-module
 * item for each module in the recent-modules setting (the bundled examples
 * have their own item), kept up to date as the setting changes. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Fills menu from settings now and on each change, for as long as menu lives. */
void ts_recent_menu_follow(GMenu *menu, GSettings *settings);

G_END_DECLS
