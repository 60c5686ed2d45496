/* ts-connect-dialog.c — File › Connect to Remote… (ts-connect-dialog.h). */
#include "ts-connect-dialog.h"

#include <adwaita.h>

typedef struct {
  GtkEditable *host, *module;
  TsConnectFunc func;
  gpointer data;
} Connect;

static void on_response(AdwMessageDialog *dialog, const char *response, Connect *c)
{
  if (g_strcmp0(response, "connect") == 0) {
    g_autofree char *host = g_strstrip(g_strdup(gtk_editable_get_text(c->host)));
    g_autofree char *module = g_strstrip(g_strdup(gtk_editable_get_text(c->module)));
    c->func(host, *module ? module : "seeds", c->data);
  }
}

static GtkEditable *add_entry(GtkBox *box, const char *label, const char *text, const char *placeholder)
{
  GtkWidget *title = gtk_label_new_with_mnemonic(label);
  gtk_label_set_xalign(GTK_LABEL(title), 0);
  GtkWidget *entry = gtk_entry_new();
  gtk_entry_set_placeholder_text(GTK_ENTRY(entry), placeholder);
  gtk_editable_set_text(GTK_EDITABLE(entry), text ? text : "");
  gtk_entry_set_activates_default(GTK_ENTRY(entry), TRUE);
  gtk_label_set_mnemonic_widget(GTK_LABEL(title), entry);
  gtk_box_append(box, title);
  gtk_box_append(box, entry);
  return GTK_EDITABLE(entry);
}

GtkWindow *ts_connect_dialog_present(GtkWindow *parent, const char *host, const char *module, TsConnectFunc func,
                                     gpointer data)
{
  GtkWidget *dialog = adw_message_dialog_new(
    parent, "Connect to Remote",
    "Modules run on that machine, in its tracescope-worker, reached with ssh: your keys, agent and "
    "~/.ssh/config, never a password prompt. Leave the host empty to run here again.");
  GtkBox *box = GTK_BOX(gtk_box_new(GTK_ORIENTATION_VERTICAL, 6));
  Connect *c = g_new0(Connect, 1);
  c->host = add_entry(box, "_Host", host, "[user@]host[:port]");
  c->module = add_entry(box, "_Module", module, "a path on that host, or seeds");
  c->func = func;
  c->data = data;
  adw_message_dialog_set_extra_child(ADW_MESSAGE_DIALOG(dialog), GTK_WIDGET(box));
  adw_message_dialog_add_responses(ADW_MESSAGE_DIALOG(dialog), "cancel", "_Cancel", "connect", "C_onnect", NULL);
  adw_message_dialog_set_response_appearance(ADW_MESSAGE_DIALOG(dialog), "connect", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response(ADW_MESSAGE_DIALOG(dialog), "connect");
  adw_message_dialog_set_close_response(ADW_MESSAGE_DIALOG(dialog), "cancel");
  g_signal_connect_data(dialog, "response", G_CALLBACK(on_response), c, (GClosureNotify)(void (*)(void))g_free, 0);
  gtk_window_present(GTK_WINDOW(dialog));
  return GTK_WINDOW(dialog);
}
