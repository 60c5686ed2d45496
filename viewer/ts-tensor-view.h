/* ts-tensor-view.h — TsTensorView, the tensor inspector: a tensor's shape,
 * dtype, device and statistics (min/max/mean/std, NaN/Inf/zero counts,
 * computed off the main loop above a million elements), its values in a
 * paged table, a heat map of any 2-D slice (choose the two axes and the
 * index along the others; hover for values), a histogram, the difference
 * of two tensors as a heat map, and export to .npy.
 *
 * Compact (the "compact" property): the summary and the table only, with
 * a button that opens the full inspector in place.  Property "busy"
 * (read-only): statistics are being computed; "expanded" (read-only): the
 * full inspector shows (not compact, or opened). */
#pragma once

#include <gtk/gtk.h>
#include <tracescope.h>

G_BEGIN_DECLS

#define TS_TYPE_TENSOR_VIEW (ts_tensor_view_get_type())
G_DECLARE_FINAL_TYPE(TsTensorView, ts_tensor_view, TS, TENSOR_VIEW, GtkWidget)

GtkWidget *ts_tensor_view_new(void);

/* Shows t (NULL clears) under title (NULL: none).  The view holds a
 * reference to t (ts_tensor_ref) until it shows another. */
void ts_tensor_view_set_tensor(TsTensorView *self, ts_tensor *t, const char *title);
/* As ts_tensor_view_set_tensor, for t a host copy of a tensor that was on
 * device (a worker's result read back): the summary names device, not the
 * copy's CPU.  device NULL: t's own. */
void ts_tensor_view_set_copy(TsTensorView *self, ts_tensor *t, const char *title, const char *device);
/* Shows a − b as a heat map, with the largest absolute and relative
 * difference.  Both are referenced.  FALSE, with the error also shown in
 * the view, when the shapes differ or either is not numeric. */
gboolean ts_tensor_view_set_diff(TsTensorView *self, ts_tensor *a, ts_tensor *b, GError **error);
/* The tensor shown (a of a difference); borrowed, NULL if none. */
ts_tensor *ts_tensor_view_get_tensor(TsTensorView *self);

/* Writes what is shown (the difference, for one) to path as .npy with the
 * engine's writer. */
gboolean ts_tensor_view_export_npy(TsTensorView *self, const char *path, GError **error);

void ts_tensor_view_set_compact(TsTensorView *self, gboolean compact);
gboolean ts_tensor_view_get_compact(TsTensorView *self);
gboolean ts_tensor_view_get_expanded(TsTensorView *self);
/* Whether the title given with the tensor shows above it (default TRUE);
 * hidden, it still names the file an export suggests (where a choice
 * beside the view already says which tensor it is). */
void ts_tensor_view_set_title_shown(TsTensorView *self, gboolean shown);
gboolean ts_tensor_view_get_busy(TsTensorView *self);

G_END_DECLS
