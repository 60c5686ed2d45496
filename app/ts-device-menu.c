/* ts-device-menu.c — the device menu's rows (ts-device-menu.h). */
#include "ts-device-menu.h"

#include <string.h>

char *ts_device_menu_title(const TsWorkerDevice *device)
{
  if (!device->total_bytes)
    return g_strdup(device->name);
  g_autofree char *total = g_format_size_full(device->total_bytes, G_FORMAT_SIZE_IEC_UNITS);
  return g_strdup_printf("%s · %s", device->name, total);
}

char *ts_device_menu_missing(const GPtrArray *devices, const char *note)
{
  /* the note is "KIND: what was found": CUDA is the one kind it reports */
  static const char KIND[] = "CUDA";
  if (!note || !g_str_has_prefix(note, KIND) || note[strlen(KIND)] != ':')
    return NULL;
  for (guint i = 0; devices && i < devices->len; i++) {
    const TsWorkerDevice *d = g_ptr_array_index((GPtrArray *)devices, i);
    if (g_str_has_prefix(d->name, KIND))
      return NULL;
  }
  const char *why = note + strlen(KIND) + 1;
  while (*why == ' ')
    why++;
  return g_strdup_printf("No %s device: %s", KIND, why);
}

static GtkWidget *caption(const char *text)
{
  GtkWidget *label = gtk_label_new(text);
  gtk_label_set_xalign(GTK_LABEL(label), 0);
  gtk_label_set_wrap(GTK_LABEL(label), TRUE);
  gtk_label_set_max_width_chars(GTK_LABEL(label), 44);
  gtk_widget_add_css_class(label, "dim-label");
  gtk_widget_add_css_class(label, "caption");
  return label;
}

static GtkWidget *device_row(const TsWorkerDevice *d, GtkCheckButton *group)
{
  GtkWidget *check = gtk_check_button_new();
  GtkWidget *text = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
  g_autofree char *title = ts_device_menu_title(d);
  GtkWidget *name = gtk_label_new(title);
  gtk_label_set_xalign(GTK_LABEL(name), 0);
  gtk_box_append(GTK_BOX(text), name);
  g_autofree char *free_text = d->total_bytes ? g_format_size_full(d->free_bytes, G_FORMAT_SIZE_IEC_UNITS) : NULL;
  g_autofree char *about = free_text && *d->description ? g_strdup_printf("%s; %s free", d->description, free_text)
                           : free_text                  ? g_strdup_printf("%s free", free_text)
                                                        : g_strdup(d->description);
  if (*about)
    gtk_box_append(GTK_BOX(text), caption(about));
  gtk_check_button_set_child(GTK_CHECK_BUTTON(check), text);
  gtk_actionable_set_action_name(GTK_ACTIONABLE(check), "win.device");
  gtk_actionable_set_action_target(GTK_ACTIONABLE(check), "s", d->name);
  gtk_widget_set_name(check, d->name); /* for tests and accessibility tools */
  if (group)
    gtk_check_button_set_group(GTK_CHECK_BUTTON(check), group);
  return check;
}

void ts_device_menu_fill(GtkBox *box, const GPtrArray *devices, const char *note)
{
  for (GtkWidget *c; (c = gtk_widget_get_first_child(GTK_WIDGET(box)));)
    gtk_box_remove(box, c);
  TsWorkerDevice cpu = { "CPU", "", 0, 0 };
  GtkCheckButton *group = NULL;
  guint n = devices ? devices->len : 0;
  for (guint i = 0; i < MAX(n, 1); i++) {
    const TsWorkerDevice *d = n ? g_ptr_array_index((GPtrArray *)devices, i) : &cpu;
    GtkWidget *row = device_row(d, group);
    group = group ? group : GTK_CHECK_BUTTON(row);
    gtk_box_append(box, row);
  }
  g_autofree char *missing = ts_device_menu_missing(devices, note);
  if (missing) {
    GtkWidget *line = caption(missing);
    gtk_widget_set_tooltip_text(line, note);
    gtk_widget_set_name(line, "missing-devices");
    gtk_box_append(box, line);
  }
}

gboolean ts_device_menu_has(const GPtrArray *devices, const char *note, const char *name, GError **error)
{
  for (guint i = 0; devices && i < devices->len; i++)
    if (g_str_equal(((TsWorkerDevice *)g_ptr_array_index((GPtrArray *)devices, i))->name, name))
      return TRUE;
  if (g_str_equal(name, "CPU"))
    return TRUE;
  g_autoptr(GString) names = g_string_new("CPU");
  for (guint i = 1; devices && i < devices->len; i++)
    g_string_append_printf(names, ", %s", ((TsWorkerDevice *)g_ptr_array_index((GPtrArray *)devices, i))->name);
  g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no device '%s' (there are %s%s%s%s)", name, names->str,
              note ? "; " : "", note ? note : "", devices ? "" : "; no module is open");
  return FALSE;
}
