/* ts-recent-menu.c — the Recent Modules section of the Open menu. */
#include "ts-recent-menu.h"

/* Menu labels take "_" as a mnemonic mark ("my_module.so" showed as
 * "mymodule.so"): a file name keeps its underscores doubled. */
static char *menu_label_for(const char *text)
{
  g_auto(GStrv) parts = g_strsplit(text, "_", -1);
  return g_strjoinv("__", parts);
}

static void fill(GSettings *settings, const char *key, GMenu *menu)
{
  g_menu_remove_all(menu);
  g_auto(GStrv) recent = g_settings_get_strv(settings, "recent-modules");
  for (char **s = recent; *s; s++) {
    if (g_strcmp0(*s, "seeds") == 0)
      continue;
    g_autofree char *base = g_path_get_basename(*s);
    g_autofree char *label = menu_label_for(base);
    g_autoptr(GMenuItem) item = g_menu_item_new(label, NULL);
    g_menu_item_set_action_and_target_value(item, "win.open-module", g_variant_new_string(*s));
    g_menu_append_item(menu, item);
  }
}

void ts_recent_menu_follow(GMenu *menu, GSettings *settings)
{
  g_return_if_fail(G_IS_MENU(menu) && G_IS_SETTINGS(settings));
  g_signal_connect_object(settings, "changed::recent-modules", G_CALLBACK(fill), menu, 0);
  fill(settings, "recent-modules", menu);
}
