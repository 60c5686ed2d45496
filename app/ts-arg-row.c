/* ts-arg-row.c — argument widgets to and from argument specs. */
#include "ts-arg-row.h"

#include <gio/gio.h>
#include <string.h>
#include <tracescope.h>

enum { KIND_TENSOR, KIND_HOST };
enum { FILL_UNIFORM, FILL_NORMAL, FILL_ZEROS, FILL_ONES, FILL_RANGE, FILL_VALUES, FILL_NPY, FILL_SPEC };

/* Per fill: its spec suffix, what the parameter entry asks for (NULL:
 * hidden) in a word or two that fit the narrow entry, and said whole in
 * its tooltip. */
static const struct {
  const char *suffix;
  const char *param_hint, *param_help;
} FILLS[] = {
  [FILL_UNIFORM] = { ":uniform", "seed", "Seed of the random values (optional)" },
  [FILL_NORMAL] = { ":normal", "seed", "Seed of the random values (optional)" },
  [FILL_ZEROS] = { ":zeros", NULL, NULL },
  [FILL_ONES] = { ":ones", NULL, NULL },
  [FILL_RANGE] = { ":range", "start", "First value of the range (default 0)" },
  [FILL_VALUES] = { "=", "1, 2, 3", "The values, row-major, separated by commas" },
  [FILL_NPY] = { "npy:", ".npy file", "Path to a .npy file" },
  [FILL_SPEC] = { "", NULL, NULL },
};

/* The dtype dropdown offers what an argument spec takes: every numeric
 * dtype, in ts_dtype's order (its item i is dtype i). */
#define N_SPEC_DTYPES TS_NUMERIC_DTYPE_COUNT

struct _TsArgRow {
  GtkWidget parent_instance;
  GtkLabel *name_label;
  GtkDropDown *kind_dropdown;
  GtkStack *kind_stack;
  GtkDropDown *dtype_dropdown;
  GtkEntry *shape_entry;
  GtkEntry *host_entry;
  GtkButton *remove_button;
  GtkBox *fill_box;
  GtkDropDown *fill_dropdown;
  GtkEntry *param_entry;
  GtkButton *browse_button;
  char *name;
  GtkFileChooserNative *chooser;
};

enum { SIGNAL_REMOVE, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(TsArgRow, ts_arg_row, GTK_TYPE_WIDGET)

static void update_sensitivity(TsArgRow *self)
{
  gboolean tensor = gtk_drop_down_get_selected(self->kind_dropdown) == KIND_TENSOR;
  guint fill = gtk_drop_down_get_selected(self->fill_dropdown);
  gtk_stack_set_visible_child_name(self->kind_stack, tensor ? "tensor" : "host");
  gtk_widget_set_visible(GTK_WIDGET(self->fill_box), tensor);
  const char *hint = fill < G_N_ELEMENTS(FILLS) ? FILLS[fill].param_hint : NULL;
  gtk_widget_set_visible(GTK_WIDGET(self->param_entry), hint != NULL);
  if (hint) {
    gtk_entry_set_placeholder_text(self->param_entry, hint);
    gtk_widget_set_tooltip_text(GTK_WIDGET(self->param_entry), FILLS[fill].param_help);
  }
  gtk_widget_set_visible(GTK_WIDGET(self->browse_button), fill == FILL_NPY);
  /* a .npy file brings its own dtype and shape */
  gtk_widget_set_sensitive(GTK_WIDGET(self->dtype_dropdown), fill != FILL_NPY);
  gtk_widget_set_sensitive(GTK_WIDGET(self->shape_entry), fill != FILL_NPY);
}

static void on_selected_changed(GObject *object, GParamSpec *pspec, gpointer user_data)
{
  update_sensitivity(user_data);
}

static void on_remove_clicked(TsArgRow *self)
{
  g_signal_emit(self, signals[SIGNAL_REMOVE], 0);
}

static void on_chooser_response(GtkNativeDialog *dialog, int response, gpointer user_data)
{
  TsArgRow *self = user_data;
  if (response == GTK_RESPONSE_ACCEPT) {
    g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
    g_autofree char *path = file ? g_file_get_path(file) : NULL;
    if (path)
      gtk_editable_set_text(GTK_EDITABLE(self->param_entry), path);
  }
  g_clear_object(&self->chooser);
}

static void on_browse_clicked(TsArgRow *self)
{
  if (self->chooser)
    return;
  GtkRoot *root = gtk_widget_get_root(GTK_WIDGET(self));
  self->chooser = gtk_file_chooser_native_new("Choose a .npy File", GTK_IS_WINDOW(root) ? GTK_WINDOW(root) : NULL,
                                              GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel");
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new();
  gtk_file_filter_set_name(filter, "NumPy arrays (.npy)");
  gtk_file_filter_add_pattern(filter, "*.npy");
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(self->chooser), filter);
  g_signal_connect(self->chooser, "response", G_CALLBACK(on_chooser_response), self);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(self->chooser));
}

/* "(2, 3)" / "[2,3]" / "2 3" / "?" into "2,3"; NULL + error if a dim is bad. *unknown: a ? seen. */
static char *normalize_shape(const char *text, gboolean *unknown, GError **error)
{
  g_autofree char *s = g_strdup(text);
  g_strdelimit(s, "()[] \t", ',');
  g_auto(GStrv) parts = g_strsplit(s, ",", -1);
  g_autoptr(GString) out = g_string_new(NULL);
  int rank = 0;
  *unknown = FALSE;
  for (char **p = parts; *p; p++) {
    if (!**p)
      continue;
    if (++rank > TS_MAX_RANK) {
      g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                  "shape '%s' has more than %d dimensions", text, TS_MAX_RANK);
      return NULL;
    }
    if (out->len)
      g_string_append_c(out, ',');
    if (strcmp(*p, "?") == 0 || strcmp(*p, "None") == 0 || strcmp(*p, "-1") == 0) {
      *unknown = TRUE;
      g_string_append_c(out, '?');
      continue;
    }
    guint64 v;
    if (!g_ascii_string_to_unsigned(*p, 10, 0, G_MAXINT64, &v, NULL)) {
      g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                  "shape '%s': '%s' is not a dimension (a count, or ? for unknown)", text, *p);
      return NULL;
    }
    g_string_append(out, *p);
  }
  return g_string_free(g_steal_pointer(&out), FALSE);
}

char *ts_arg_row_dup_spec(TsArgRow *self, GError **error)
{
  g_return_val_if_fail(TS_IS_ARG_ROW(self), NULL);
  if (gtk_drop_down_get_selected(self->kind_dropdown) == KIND_HOST) {
    g_autofree char *text = g_strstrip(g_strdup(gtk_editable_get_text(GTK_EDITABLE(self->host_entry))));
    if (!*text) {
      g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s: enter a host value",
                  self->name);
      return NULL;
    }
    return g_steal_pointer(&text);
  }
  guint fill = gtk_drop_down_get_selected(self->fill_dropdown);
  g_autofree char *param = g_strstrip(g_strdup(gtk_editable_get_text(GTK_EDITABLE(self->param_entry))));
  if (fill == FILL_NPY) {
    if (!*param) {
      g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s: choose a .npy file",
                  self->name);
      return NULL;
    }
    return g_strconcat("npy:", param, NULL);
  }
  gboolean unknown;
  GError *shape_error = NULL;
  g_autofree char *shape =
    normalize_shape(gtk_editable_get_text(GTK_EDITABLE(self->shape_entry)), &unknown, &shape_error);
  if (!shape) {
    g_propagate_prefixed_error(error, shape_error, "%s: ", self->name);
    return NULL;
  }
  guint dtype = MIN(gtk_drop_down_get_selected(self->dtype_dropdown), N_SPEC_DTYPES - 1);
  g_autofree char *base = g_strdup_printf("%s[%s]", ts_dtype_short_name((ts_dtype)dtype), shape);
  /* unknown dims cannot hold values: such an argument is a spec to trace with */
  if (unknown || fill == FILL_SPEC)
    return g_steal_pointer(&base);
  switch (fill) {
  case FILL_UNIFORM:
  case FILL_NORMAL:
    return *param ? g_strdup_printf("%s%s@%s", base, FILLS[fill].suffix, param)
                  : g_strconcat(base, FILLS[fill].suffix, NULL);
  case FILL_RANGE:
    return *param ? g_strdup_printf("%s:range(%s)", base, param) : g_strconcat(base, ":range", NULL);
  case FILL_VALUES: {
    g_strdelimit(param, "[]() \t", ',');
    g_auto(GStrv) parts = g_strsplit(param, ",", -1);
    g_autoptr(GStrvBuilder) b = g_strv_builder_new();
    for (char **p = parts; *p; p++)
      if (**p)
        g_strv_builder_add(b, *p);
    g_auto(GStrv) values = g_strv_builder_end(b);
    g_autofree char *joined = g_strjoinv(",", values);
    return g_strdup_printf("%s=%s", base, joined);
  }
  default:
    return g_strconcat(base, FILLS[fill].suffix, NULL);
  }
}

static guint dtype_index(const char *name)
{
  ts_dtype dtype;
  return ts_dtype_from_name(name, &dtype) && dtype < N_SPEC_DTYPES ? (guint)dtype : G_MAXUINT;
}

/* Parses "dtype[dims]rest"; FALSE if spec is not a tensor spec. */
static gboolean set_tensor_spec(TsArgRow *self, const char *spec)
{
  const char *open = strchr(spec, '[');
  const char *close = open ? strchr(open, ']') : NULL;
  if (!open || !close)
    return FALSE;
  g_autofree char *dtype_name = g_strndup(spec, (gsize)(open - spec));
  guint dtype = dtype_index(dtype_name);
  if (dtype == G_MAXUINT)
    return FALSE;
  g_autofree char *dims = g_strndup(open + 1, (gsize)(close - open - 1));
  const char *rest = close + 1;
  guint fill;
  g_autofree char *param = NULL;
  if (!*rest) {
    fill = FILL_SPEC;
  } else if (*rest == '=') {
    fill = FILL_VALUES;
    param = g_strdup(rest + 1);
  } else if (g_str_has_prefix(rest, ":range")) {
    fill = FILL_RANGE;
    if (rest[6] == '(')
      param = g_strndup(rest + 7, strcspn(rest + 7, ")"));
  } else if (g_str_has_prefix(rest, ":uniform") || g_str_has_prefix(rest, ":normal")) {
    fill = rest[1] == 'u' ? FILL_UNIFORM : FILL_NORMAL;
    const char *at = strchr(rest, '@');
    param = at ? g_strdup(at + 1) : NULL;
  } else if (strcmp(rest, ":zeros") == 0) {
    fill = FILL_ZEROS;
  } else if (strcmp(rest, ":ones") == 0) {
    fill = FILL_ONES;
  } else {
    return FALSE;
  }
  gtk_drop_down_set_selected(self->kind_dropdown, KIND_TENSOR);
  gtk_drop_down_set_selected(self->dtype_dropdown, dtype);
  gtk_editable_set_text(GTK_EDITABLE(self->shape_entry), dims);
  gtk_drop_down_set_selected(self->fill_dropdown, fill);
  gtk_editable_set_text(GTK_EDITABLE(self->param_entry), param ? param : "");
  return TRUE;
}

void ts_arg_row_set_spec(TsArgRow *self, const char *spec)
{
  g_return_if_fail(TS_IS_ARG_ROW(self) && spec != NULL);
  if (g_str_has_prefix(spec, "npy:")) {
    gtk_drop_down_set_selected(self->kind_dropdown, KIND_TENSOR);
    gtk_drop_down_set_selected(self->fill_dropdown, FILL_NPY);
    gtk_editable_set_text(GTK_EDITABLE(self->param_entry), spec + 4);
  } else if (!set_tensor_spec(self, spec)) {
    gtk_drop_down_set_selected(self->kind_dropdown, KIND_HOST);
    gtk_editable_set_text(GTK_EDITABLE(self->host_entry), spec);
  }
  update_sensitivity(self);
}

const char *ts_arg_row_get_name(TsArgRow *self)
{
  g_return_val_if_fail(TS_IS_ARG_ROW(self), NULL);
  return self->name;
}

static void ts_arg_row_dispose(GObject *object)
{
  TsArgRow *self = TS_ARG_ROW(object);
  if (self->chooser) {
    g_signal_handlers_disconnect_by_data(self->chooser, self);
    gtk_native_dialog_destroy(GTK_NATIVE_DIALOG(self->chooser));
    g_clear_object(&self->chooser);
  }
  gtk_widget_dispose_template(GTK_WIDGET(self), TS_TYPE_ARG_ROW);
  /* the template's unnamed root is not among the children it clears */
  for (GtkWidget *child; (child = gtk_widget_get_first_child(GTK_WIDGET(self)));)
    gtk_widget_unparent(child);
  G_OBJECT_CLASS(ts_arg_row_parent_class)->dispose(object);
}

static void ts_arg_row_finalize(GObject *object)
{
  g_free(TS_ARG_ROW(object)->name);
  G_OBJECT_CLASS(ts_arg_row_parent_class)->finalize(object);
}

static void ts_arg_row_class_init(TsArgRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = ts_arg_row_dispose;
  object_class->finalize = ts_arg_row_finalize;
  signals[SIGNAL_REMOVE] = g_signal_new("remove", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                        NULL, NULL, NULL, G_TYPE_NONE, 0);
  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/io/github/tracescope/Tracescope/ts-arg-row.ui");
  gtk_widget_class_bind_template_child(widget_class, TsArgRow, name_label);
  gtk_widget_class_bind_template_child(widget_class, TsArgRow, kind_dropdown);
  gtk_widget_class_bind_template_child(widget_class, TsArgRow, kind_stack);
  gtk_widget_class_bind_template_child(widget_class, TsArgRow, dtype_dropdown);
  gtk_widget_class_bind_template_child(widget_class, TsArgRow, shape_entry);
  gtk_widget_class_bind_template_child(widget_class, TsArgRow, host_entry);
  gtk_widget_class_bind_template_child(widget_class, TsArgRow, remove_button);
  gtk_widget_class_bind_template_child(widget_class, TsArgRow, fill_box);
  gtk_widget_class_bind_template_child(widget_class, TsArgRow, fill_dropdown);
  gtk_widget_class_bind_template_child(widget_class, TsArgRow, param_entry);
  gtk_widget_class_bind_template_child(widget_class, TsArgRow, browse_button);
  gtk_widget_class_bind_template_callback(widget_class, on_remove_clicked);
  gtk_widget_class_bind_template_callback(widget_class, on_browse_clicked);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "tsargrow");
}

static void ts_arg_row_init(TsArgRow *self)
{
  gtk_widget_init_template(GTK_WIDGET(self));
  g_autoptr(GtkStringList) dtypes = gtk_string_list_new(NULL);
  for (int d = 0; d < N_SPEC_DTYPES; d++)
    gtk_string_list_append(dtypes, ts_dtype_short_name((ts_dtype)d));
  gtk_drop_down_set_model(self->dtype_dropdown, G_LIST_MODEL(dtypes));
  g_signal_connect(self->kind_dropdown, "notify::selected", G_CALLBACK(on_selected_changed), self);
  g_signal_connect(self->fill_dropdown, "notify::selected", G_CALLBACK(on_selected_changed), self);
  update_sensitivity(self);
}

TsArgRow *ts_arg_row_new(const char *name, gboolean removable)
{
  TsArgRow *self = g_object_new(TS_TYPE_ARG_ROW, NULL);
  self->name = g_strdup(name);
  gtk_label_set_label(self->name_label, name);
  gtk_widget_set_visible(GTK_WIDGET(self->remove_button), removable);
  return self;
}
