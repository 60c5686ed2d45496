/* ts-window-workspace.c — the window's actions over its workspace: win.mode
 * (Graph, Eager, Debug; Ctrl+1..3), win.device (the device menu, offering
 * the devices the worker has) and win.profile (saved for the next launch,
 * unless set for this window only).  What follows the workspace binds to
 * it: the device button, the worker, the panels. */
#include "ts-window-private.h"

#include "ts-device-menu.h"

static void on_mode_changed(GSimpleAction *action, GVariant *value, gpointer user_data)
{
  TsWindow *self = user_data;
  const char *mode = g_variant_get_string(value, NULL);
  gboolean same = g_strcmp0(mode, ts_workspace_get_mode(self->workspace)) == 0;
  if (!ts_workspace_set_mode(self->workspace, mode))
    return;
  g_simple_action_set_state(action, value);
  if (same) /* asked for again: what follows it (the debugger's page) shows it again */
    g_object_notify(G_OBJECT(self->workspace), "mode");
  ts_workspace_selection_changed(self->workspace);
}

/* A device the worker has: the device button's label, the worker and the
 * profiler bind to the workspace's. */
static void on_device_changed(GSimpleAction *action, GVariant *value, gpointer user_data)
{
  TsWindow *self = user_data;
  const char *name = g_variant_get_string(value, NULL);
  const char *note = NULL;
  if (!ts_device_menu_has(ts_engine_worker_get_devices(self->worker, &note), note, name, NULL))
    return;
  g_simple_action_set_state(action, value);
  ts_workspace_set_device(self->workspace, name);
}

gboolean ts_window_set_device(TsWindow *self, const char *device, GError **error)
{
  g_return_val_if_fail(TS_IS_WINDOW(self) && device != NULL, FALSE);
  const char *note = NULL;
  if (!ts_device_menu_has(ts_engine_worker_get_devices(self->worker, &note), note, device, error))
    return FALSE;
  g_action_group_change_action_state(G_ACTION_GROUP(self), "device", g_variant_new_string(device));
  return TRUE;
}

/* A new worker's devices: the menu lists them; a device it lacks is
 * left for the CPU. */
static void on_devices_changed(TsWindow *self)
{
  const char *note = NULL;
  GPtrArray *devices = ts_engine_worker_get_devices(self->worker, &note);
  ts_device_menu_fill(self->device_box, devices, note);
  const char *current = ts_workspace_get_device(self->workspace);
  if (ts_device_menu_has(devices, note, current, NULL))
    return;
  g_autofree char *text = g_strdup_printf("This worker has no %s: runs go to the CPU", current);
  g_action_group_change_action_state(G_ACTION_GROUP(self), "device", g_variant_new_string("CPU"));
  _ts_window_toast(self, text);
}

/* The workspace's profile (the run controller binds the worker to it),
 * saved for the next launch unless set for this window only. */
static void on_profile_changed(GSimpleAction *action, GVariant *value, gpointer user_data)
{
  TsWindow *self = user_data;
  gboolean profile = g_variant_get_boolean(value);
  if (ts_workspace_get_profile(self->workspace) == profile)
    return;
  g_simple_action_set_state(action, value);
  ts_workspace_set_profile(self->workspace, profile);
  if (self->settings && !self->profile_once)
    g_settings_set_boolean(self->settings, "profile", profile);
}

void ts_window_set_profiling_once(TsWindow *self, gboolean profile)
{
  g_return_if_fail(TS_IS_WINDOW(self));
  self->profile_once = TRUE;
  g_action_group_change_action_state(G_ACTION_GROUP(self), "profile", g_variant_new_boolean(profile));
  self->profile_once = FALSE;
}

void _ts_window_add_workspace_actions(TsWindow *self)
{
  static const GActionEntry actions[] = {
    { .name = "mode", .parameter_type = "s", .state = "'graph'", .change_state = on_mode_changed },
    { .name = "device", .parameter_type = "s", .state = "'CPU'", .change_state = on_device_changed },
    { .name = "profile", .state = "false", .change_state = on_profile_changed },
  };
  g_action_map_add_action_entries(G_ACTION_MAP(self), actions, G_N_ELEMENTS(actions), self);
  g_signal_connect_swapped(self->worker, "notify::devices", G_CALLBACK(on_devices_changed), self);
  ts_device_menu_fill(self->device_box, NULL, NULL);
}
