/* ts-device-menu.h — the window's device menu: one check button per
 * device the worker's engine has (its name and memory, what it is under
 * it), each activating win.device with its name, and a line for each kind
 * of device it lacks, saying why ("No CUDA device: not built ..."). */
#pragma once

#include <gtk/gtk.h>

#include "ts-worker.h"

G_BEGIN_DECLS

/* "SIM:0 · 8.0 GiB" (owned); the name alone when the memory is unknown. */
char *ts_device_menu_title(const TsWorkerDevice *device);
/* Why there is no device of a kind the engine knows, from the worker's
 * note ("CUDA: no device (…)" -> "No CUDA device: no device (…)"); NULL
 * when devices has one of that kind or the note says nothing.  Owned. */
char *ts_device_menu_missing(const GPtrArray *devices, const char *note);
/* Fills box (emptied first) for devices (TsWorkerDevice; NULL: the CPU
 * alone) and note. */
void ts_device_menu_fill(GtkBox *box, const GPtrArray *devices, const char *note);
/* Whether devices (as for ts_device_menu_fill) has one named name (the CPU
 * is always there); FALSE + an error naming the devices there are. */
gboolean ts_device_menu_has(const GPtrArray *devices, const char *note, const char *name, GError **error);

G_END_DECLS
