/* ts-connect-dialog.h — File › Connect to Remote…: asks for a host
 * ("[user@]host[:port]", reached with ssh) and the module to open there. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Called with what the user gave (host empty: this machine again). */
typedef void (*TsConnectFunc)(const char *host, const char *module, gpointer data);

/* A modal dialog over parent, its entries filled with host and module (or
 * empty); on Connect calls func (data must outlive the dialog: the window). */
GtkWindow *ts_connect_dialog_present(GtkWindow *parent, const char *host, const char *module, TsConnectFunc func,
                                     gpointer data);

G_END_DECLS
