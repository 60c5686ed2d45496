/* ts-tensor-view-export.c — TsTensorView's export: what is shown (the
 * difference, for one) written as .npy by the engine's writer, from the
 * Export button through a file chooser or from code. */
#include "ts-tensor-view-private.h"

#include <glib/gi18n.h>

gboolean ts_tensor_view_export_npy(TsTensorView *self, const char *path, GError **error)
{
  g_return_val_if_fail(TS_IS_TENSOR_VIEW(self) && path != NULL, FALSE);
  ts_tensor *t = self->b ? self->shown : self->host;
  if (!t) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                self->b ? _("cannot export to %s: the difference is still being computed")
                        : _("cannot export to %s: no tensor with values is shown"),
                path);
    return FALSE;
  }
  if (ts_npy_save(path, t))
    return TRUE;
  ts_error *e = ts_error_take();
  g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("cannot export to %s: %s"), path,
              e ? e->message : _("the .npy writer failed"));
  ts_error_free(e);
  return FALSE;
}

/* "conv out #3.npy" from the title: what a file name may hold. */
static char *suggested_name(TsTensorView *self)
{
  const char *title = self->b ? "difference" : self->title && *self->title ? self->title : "tensor";
  g_autofree char *name = g_strdup(title);
  g_strdelimit(name, "/\\:*?\"<>|", '_');
  return g_strconcat(name, ".npy", NULL);
}

static void on_response(GtkNativeDialog *dialog, int response, TsTensorView *self)
{
  if (response == GTK_RESPONSE_ACCEPT) {
    g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
    g_autofree char *path = file ? g_file_get_path(file) : NULL;
    g_autoptr(GError) error = NULL;
    if (path && !ts_tensor_view_export_npy(self, path, &error))
      _ts_tensor_view_set_message(self, error->message);
  }
  gtk_native_dialog_destroy(dialog);
  g_object_unref(dialog);
  g_object_unref(self);
}

void _ts_tensor_view_on_export_clicked(TsTensorView *self)
{
  GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new(
    _("Export Tensor"), GTK_IS_WINDOW(root) ? GTK_WINDOW(root) : NULL, GTK_FILE_CHOOSER_ACTION_SAVE,
    _("_Export"), _("_Cancel"));
  g_autofree char *name = suggested_name(self);
  gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(dialog), name);
  GtkFileFilter *filter = gtk_file_filter_new();
  gtk_file_filter_set_name(filter, _("NumPy arrays (.npy)"));
  gtk_file_filter_add_pattern(filter, "*.npy");
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), filter);
  g_object_unref(filter);
  g_signal_connect(dialog, "response", G_CALLBACK(on_response), g_object_ref(self));
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(dialog));
}
